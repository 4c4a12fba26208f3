// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: vnpu driver core
 *
 * Module parameters, the platform devices (one per simulated NPU, the vgem
 * pattern) and the DRM driver that each of them registers.
 */

#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/platform_device.h>

#include <drm/drm_debugfs.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem_shmem_helper.h>
#include <drm/drm_ioctl.h>

#include "vnpu_drv.h"

static unsigned int num_devices = 1;
module_param(num_devices, uint, 0444);
MODULE_PARM_DESC(num_devices, "Number of simulated NPU devices (1..8, default 1)");

static struct platform_device *vnpu_pdevs[VNPU_MAX_DEVICES];

/*
 * Test-only: writing 1 triggers a kernel WARN so that the VM harness can
 * prove it catches one. Root-only, in debugfs.
 */
static int vnpu_test_warn_set(void *data, u64 val)
{
	if (val != 1)
		return -EINVAL;
	WARN(1, "vnpu: test WARN requested through debugfs\n");
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(vnpu_test_warn_fops, NULL, vnpu_test_warn_set, "%llu\n");

static void vnpu_debugfs_init(struct drm_minor *minor)
{
	debugfs_create_file_unsafe("test_warn", 0200, minor->debugfs_root,
				   NULL, &vnpu_test_warn_fops);
}

DEFINE_DRM_GEM_FOPS(vnpu_fops);

static const struct drm_driver vnpu_drm_driver = {
	.driver_features = DRIVER_GEM | DRIVER_RENDER | DRIVER_SYNCOBJ,
	.fops = &vnpu_fops,
	.debugfs_init = vnpu_debugfs_init,
	DRM_GEM_SHMEM_DRIVER_OPS,
	.name = "vnpu",
	.desc = "Virtual NPU",
	.date = "20261130",
	.major = 1,
	.minor = 0,
};

static int vnpu_probe(struct platform_device *pdev)
{
	struct vnpu_device *vdev;
	int ret;

	vdev = devm_drm_dev_alloc(&pdev->dev, &vnpu_drm_driver,
				  struct vnpu_device, drm);
	if (IS_ERR(vdev))
		return PTR_ERR(vdev);

	vdev->index = pdev->id;
	platform_set_drvdata(pdev, vdev);

	ret = drm_dev_register(&vdev->drm, 0);
	if (ret)
		return ret;
	return 0;
}

static int vnpu_remove(struct platform_device *pdev)
{
	struct vnpu_device *vdev = platform_get_drvdata(pdev);

	drm_dev_unregister(&vdev->drm);
	return 0;
}

static struct platform_driver vnpu_platform_driver = {
	.probe = vnpu_probe,
	.remove = vnpu_remove,
	.driver = {
		.name = "vnpu",
	},
};

static void vnpu_destroy_devices(void)
{
	int i;

	for (i = VNPU_MAX_DEVICES - 1; i >= 0; i--) {
		if (!IS_ERR_OR_NULL(vnpu_pdevs[i]))
			platform_device_unregister(vnpu_pdevs[i]);
		vnpu_pdevs[i] = NULL;
	}
}

static int __init vnpu_init(void)
{
	unsigned int i;
	int ret;

	if (num_devices < 1 || num_devices > VNPU_MAX_DEVICES) {
		pr_err("vnpu: num_devices must be 1..%d\n", VNPU_MAX_DEVICES);
		return -EINVAL;
	}

	ret = platform_driver_register(&vnpu_platform_driver);
	if (ret)
		return ret;

	for (i = 0; i < num_devices; i++) {
		vnpu_pdevs[i] = platform_device_register_simple("vnpu", i, NULL, 0);
		if (IS_ERR(vnpu_pdevs[i])) {
			ret = PTR_ERR(vnpu_pdevs[i]);
			goto err_destroy_devices;
		}
	}
	return 0;

err_destroy_devices:
	vnpu_destroy_devices();
	platform_driver_unregister(&vnpu_platform_driver);
	return ret;
}

static void __exit vnpu_exit(void)
{
	vnpu_destroy_devices();
	platform_driver_unregister(&vnpu_platform_driver);
}

module_init(vnpu_init);
module_exit(vnpu_exit);

MODULE_DESCRIPTION("Virtual NPU: DRM render driver with a simulated accelerator");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(DMA_BUF);

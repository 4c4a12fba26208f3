// SPDX-License-Identifier: GPL-2.0
/**
 * DOC: vnpu driver core
 *
 * Module parameters, the platform devices (one per simulated NPU, the vgem
 * pattern), the DRM driver each of them registers, its ioctl table,
 * GET_PARAM, per-file state and fdinfo.
 */

#include <linux/dma-fence.h>
#include <linux/dma-mapping.h>
#include <linux/module.h>
#include <linux/platform_device.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_ioctl.h>
#include <drm/drm_prime.h>
#include <drm/vnpu_cmd.h>
#include <drm/vnpu_drm.h>

#include "vnpu_drv.h"
#include "vnpu_gem.h"
#include "vnpu_job.h"

static unsigned int num_devices = 1;
module_param(num_devices, uint, 0444);
MODULE_PARM_DESC(num_devices, "Number of simulated NPU devices (1..8, default 1)");

static unsigned int tiles;
module_param(tiles, uint, 0444);
MODULE_PARM_DESC(tiles, "Compute tiles per device (1..64, default 0: one per online CPU)");

static unsigned int mem_limit_mb = 1024;
module_param(mem_limit_mb, uint, 0444);
MODULE_PARM_DESC(mem_limit_mb, "BO memory limit per device in MiB (default 1024)");

static unsigned int timeout_ms = 5000;
module_param(timeout_ms, uint, 0444);
MODULE_PARM_DESC(timeout_ms, "A job running this long without progress resets the device (default 5000)");

#define VNPU_MAX_TILES 64

static struct platform_device *vnpu_pdevs[VNPU_MAX_DEVICES];
static atomic64_t vnpu_client_ids = ATOMIC64_INIT(0);

/* protects vnpu_devices: registered devices, by index */
static DEFINE_MUTEX(vnpu_devices_lock);
static struct vnpu_device *vnpu_devices[VNPU_MAX_DEVICES];

void vnpu_device_table_lock(void)
{
	mutex_lock(&vnpu_devices_lock);
}

void vnpu_device_table_unlock(void)
{
	mutex_unlock(&vnpu_devices_lock);
}

/* The registered device @index, or NULL; valid while the table is locked. */
struct vnpu_device *vnpu_device_lookup(u32 index)
{
	lockdep_assert_held(&vnpu_devices_lock);
	return index < VNPU_MAX_DEVICES ? vnpu_devices[index] : NULL;
}

static void vnpu_device_publish(int index, struct vnpu_device *vdev)
{
	mutex_lock(&vnpu_devices_lock);
	vnpu_devices[index] = vdev;
	mutex_unlock(&vnpu_devices_lock);
}

static u64 vnpu_capabilities(void)
{
	return DRM_VNPU_CAP_PRIME | DRM_VNPU_CAP_SYNCOBJ |
	       DRM_VNPU_CAP_PROFILING | DRM_VNPU_CAP_CANCEL |
	       DRM_VNPU_CAP_PRIORITY | DRM_VNPU_CAP_SUBMIT_RESULT |
	       DRM_VNPU_CAP_USERPTR | DRM_VNPU_CAP_USERPTR_EXPORT;
}

static int vnpu_ioctl_get_param(struct drm_device *drm, void *data,
				struct drm_file *file)
{
	struct vnpu_device *vdev = to_vnpu_device(drm);
	struct drm_vnpu_get_param *args = data;

	if (args->pad)
		return -EINVAL;

	switch (args->param) {
	case DRM_VNPU_PARAM_DEVICE_INDEX:
		args->value = vdev->index;
		break;
	case DRM_VNPU_PARAM_NUM_TILES:
		args->value = vdev->tiles;
		break;
	case DRM_VNPU_PARAM_MEM_LIMIT:
		args->value = vdev->mem_limit;
		break;
	case DRM_VNPU_PARAM_MEM_USED:
		args->value = atomic64_read(&vdev->mem_used);
		break;
	case DRM_VNPU_PARAM_MAX_BO_SIZE:
		args->value = vnpu_max_bo_size(vdev);
		break;
	case DRM_VNPU_PARAM_UAPI_VERSION:
		args->value = DRM_VNPU_UAPI_VERSION;
		break;
	case DRM_VNPU_PARAM_CAPABILITIES:
		args->value = vnpu_capabilities();
		break;
	case DRM_VNPU_PARAM_CLOCK_HZ:
		args->value = NSEC_PER_SEC;
		break;
	case DRM_VNPU_PARAM_RESET_COUNT:
		args->value = atomic64_read(&vdev->stats.resets);
		break;
	case DRM_VNPU_PARAM_MAX_SLOTS:
		args->value = DRM_VNPU_MAX_SLOTS;
		break;
	case DRM_VNPU_PARAM_MAX_CMD_SIZE:
		args->value = DRM_VNPU_MAX_CMD_SIZE;
		break;
	case DRM_VNPU_PARAM_ENGINE_FEATURES:
		args->value = vdev->fw.features;
		break;
	case DRM_VNPU_PARAM_CMD_SET_VERSION:
		/* The validator is built from the same vnpu_cmd.h. */
		args->value = VNPU_CMD_SET_VERSION;
		break;
	default:
		return -EINVAL;
	}
	return 0;
}

static void vnpu_file_release(struct kref *ref)
{
	struct vnpu_file *vfile = container_of(ref, struct vnpu_file, ref);

	dma_fence_put(vfile->last_done);
	if (vfile->spare_job)
		atomic_dec(&vfile->vdev->stats.jobs);
	kfree(vfile->spare_job);
	mutex_destroy(&vfile->submit_lock);
	atomic_dec(&vfile->vdev->stats.files);
	kfree(vfile);
}

void vnpu_file_put(struct vnpu_file *vfile)
{
	kref_put(&vfile->ref, vnpu_file_release);
}

static const enum drm_sched_priority vnpu_sched_priorities[VNPU_NUM_PRIORITIES] = {
	[DRM_VNPU_PRIORITY_LOW] = DRM_SCHED_PRIORITY_MIN,
	[DRM_VNPU_PRIORITY_NORMAL] = DRM_SCHED_PRIORITY_NORMAL,
	[DRM_VNPU_PRIORITY_HIGH] = DRM_SCHED_PRIORITY_HIGH,
};

static int vnpu_open(struct drm_device *drm, struct drm_file *file)
{
	struct vnpu_device *vdev = to_vnpu_device(drm);
	struct drm_gpu_scheduler *sched = &vdev->sched;
	struct vnpu_file *vfile;
	int i, ret;

	vfile = kzalloc(sizeof(*vfile), GFP_KERNEL);
	if (!vfile)
		return -ENOMEM;
	atomic_inc(&vdev->stats.files);
	kref_init(&vfile->ref);
	vfile->vdev = vdev;
	vfile->client_id = atomic64_inc_return(&vnpu_client_ids);
	vfile->pid = task_tgid_nr(current);
	get_task_comm(vfile->comm, current);
	spin_lock_init(&vfile->history_lock);
	mutex_init(&vfile->submit_lock);
	vfile->next_id = 1;
	vfile->fence_context = dma_fence_context_alloc(1);

	for (i = 0; i < VNPU_NUM_PRIORITIES; i++) {
		ret = drm_sched_entity_init(&vfile->entities[i],
					    vnpu_sched_priorities[i], &sched, 1,
					    NULL);
		if (ret)
			goto err_destroy_entities;
	}

	mutex_lock(&vdev->file_lock);
	list_add_tail(&vfile->link, &vdev->file_list);
	mutex_unlock(&vdev->file_lock);
	atomic_inc(&vdev->stats.clients);
	file->driver_priv = vfile;
	return 0;

err_destroy_entities:
	while (--i >= 0)
		drm_sched_entity_destroy(&vfile->entities[i]);
	vnpu_file_put(vfile);
	return ret;
}

static void vnpu_postclose(struct drm_device *drm, struct drm_file *file)
{
	struct vnpu_device *vdev = to_vnpu_device(drm);
	struct vnpu_file *vfile = file->driver_priv;
	int i;

	/* Queued jobs of a closed file would only waste the device's time. */
	vnpu_jobs_cancel_file(vfile);
	for (i = 0; i < VNPU_NUM_PRIORITIES; i++)
		drm_sched_entity_destroy(&vfile->entities[i]);
	vnpu_jobs_release_file(vfile);

	mutex_lock(&vdev->file_lock);
	list_del(&vfile->link);
	mutex_unlock(&vdev->file_lock);
	atomic_dec(&vdev->stats.clients);
	vnpu_file_put(vfile);
}

static void vnpu_show_fdinfo(struct seq_file *m, struct file *f)
{
	struct drm_file *file = f->private_data;
	struct vnpu_file *vfile = file->driver_priv;
	struct drm_gem_object *obj;
	u64 mem = 0;
	int id;

	spin_lock(&file->table_lock);
	idr_for_each_entry(&file->object_idr, obj, id)
		mem += obj->size;
	spin_unlock(&file->table_lock);

	seq_puts(m, "drm-driver:\tvnpu\n");
	seq_printf(m, "drm-client-id:\t%llu\n", vfile->client_id);
	seq_printf(m, "drm-engine-npu:\t%llu ns\n",
		   (u64)atomic64_read(&vfile->busy_ns));
	seq_printf(m, "drm-memory-system:\t%llu KiB\n", mem >> 10);
	seq_printf(m, "vnpu-jobs-run-at-submit:\t%llu\n",
		   (u64)atomic64_read(&vfile->jobs_run_at_submit));
}

/* Unknown driver ioctls are -ENOTTY (the DRM core says -EINVAL). */
static bool vnpu_ioctl_unknown(unsigned int cmd);

static long vnpu_unlocked_ioctl(struct file *f, unsigned int cmd,
				unsigned long arg)
{
	if (vnpu_ioctl_unknown(cmd))
		return -ENOTTY;
	return drm_ioctl(f, cmd, arg);
}

static long vnpu_compat_ioctl(struct file *f, unsigned int cmd,
			      unsigned long arg)
{
	if (vnpu_ioctl_unknown(cmd))
		return -ENOTTY;
	return drm_compat_ioctl(f, cmd, arg);
}

static const struct file_operations vnpu_fops = {
	.owner = THIS_MODULE,
	.open = drm_open,
	.release = drm_release,
	.unlocked_ioctl = vnpu_unlocked_ioctl,
	.compat_ioctl = vnpu_compat_ioctl,
	.poll = drm_poll,
	.read = drm_read,
	.llseek = noop_llseek,
	.mmap = drm_gem_mmap,
	.show_fdinfo = vnpu_show_fdinfo,
};

static const struct drm_ioctl_desc vnpu_ioctls[] = {
	DRM_IOCTL_DEF_DRV(VNPU_GET_PARAM, vnpu_ioctl_get_param, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(VNPU_BO_CREATE, vnpu_ioctl_bo_create, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(VNPU_BO_INFO, vnpu_ioctl_bo_info, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(VNPU_BO_UPLOAD, vnpu_ioctl_bo_upload, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(VNPU_BO_DOWNLOAD, vnpu_ioctl_bo_download, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(VNPU_SUBMIT, vnpu_ioctl_submit, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(VNPU_WAIT, vnpu_ioctl_wait, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(VNPU_CANCEL, vnpu_ioctl_cancel, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(VNPU_BO_USERPTR, vnpu_ioctl_bo_userptr, DRM_RENDER_ALLOW),
};

static bool vnpu_ioctl_unknown(unsigned int cmd)
{
	unsigned int nr = DRM_IOCTL_NR(cmd);

	return DRM_IOCTL_TYPE(cmd) == DRM_IOCTL_BASE &&
	       nr >= DRM_COMMAND_BASE && nr < DRM_COMMAND_END &&
	       nr - DRM_COMMAND_BASE >= ARRAY_SIZE(vnpu_ioctls);
}

static const struct drm_driver vnpu_drm_driver = {
	.driver_features = DRIVER_GEM | DRIVER_RENDER | DRIVER_SYNCOBJ,
	.open = vnpu_open,
	.postclose = vnpu_postclose,
	.ioctls = vnpu_ioctls,
	.num_ioctls = ARRAY_SIZE(vnpu_ioctls),
	.fops = &vnpu_fops,
	.debugfs_init = vnpu_debugfs_init,
	.gem_create_object = vnpu_gem_create_object,
	.prime_handle_to_fd = drm_gem_prime_handle_to_fd,
	.prime_fd_to_handle = drm_gem_prime_fd_to_handle,
	.gem_prime_import_sg_table = vnpu_gem_prime_import_sg_table,
	.gem_prime_mmap = drm_gem_prime_mmap,
	.name = "vnpu",
	.desc = "Virtual NPU",
	.date = "20261130",
	.major = 1,
	.minor = 0,
};

static void vnpu_device_init_state(struct vnpu_device *vdev, int index)
{
	vdev->index = index;
	vdev->tiles = tiles ? tiles : min_t(u32, num_online_cpus(), VNPU_MAX_TILES);
	vdev->mem_limit = (u64)mem_limit_mb << 20;
	mutex_init(&vdev->bo_lock);
	INIT_LIST_HEAD(&vdev->bo_list);
	spin_lock_init(&vdev->job_lock);
	INIT_LIST_HEAD(&vdev->job_list);
	init_waitqueue_head(&vdev->jobs_idle);
	mutex_init(&vdev->file_lock);
	INIT_LIST_HEAD(&vdev->file_list);
}

static int vnpu_probe(struct platform_device *pdev)
{
	struct vnpu_device *vdev;
	int ret;

	/* Importers map dma-bufs for this device. */
	ret = dma_coerce_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret)
		return ret;

	vdev = devm_drm_dev_alloc(&pdev->dev, &vnpu_drm_driver,
				  struct vnpu_device, drm);
	if (IS_ERR(vdev))
		return PTR_ERR(vdev);
	vnpu_device_init_state(vdev, pdev->id);
	platform_set_drvdata(pdev, vdev);

	ret = vnpu_sched_init(vdev, timeout_ms);
	if (ret)
		return ret;

	ret = drm_dev_register(&vdev->drm, 0);
	if (ret)
		goto err_sched_fini;
	vnpu_device_publish(vdev->index, vdev);
	return 0;

err_sched_fini:
	vnpu_sched_fini(vdev);
	return ret;
}

static int vnpu_remove(struct platform_device *pdev)
{
	struct vnpu_device *vdev = platform_get_drvdata(pdev);

	vnpu_device_publish(vdev->index, NULL);
	drm_dev_unregister(&vdev->drm);
	vnpu_sched_fini(vdev);
	return 0;
}

static struct platform_driver vnpu_platform_driver = {
	.probe = vnpu_probe,
	.remove = vnpu_remove,
	.driver = {
		.name = "vnpu",
		/* Devices only go away with the module, never under open files. */
		.suppress_bind_attrs = true,
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
	if (tiles > VNPU_MAX_TILES || !mem_limit_mb || !timeout_ms) {
		pr_err("vnpu: tiles must be 0..%d, mem_limit_mb and timeout_ms above 0\n",
		       VNPU_MAX_TILES);
		return -EINVAL;
	}

	ret = vnpu_nl_init();
	if (ret)
		return ret;

	ret = platform_driver_register(&vnpu_platform_driver);
	if (ret)
		goto err_nl_fini;

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
err_nl_fini:
	vnpu_nl_fini();
	return ret;
}

static void __exit vnpu_exit(void)
{
	vnpu_destroy_devices();
	platform_driver_unregister(&vnpu_platform_driver);
	vnpu_nl_fini();
}

module_init(vnpu_init);
module_exit(vnpu_exit);

MODULE_DESCRIPTION("Virtual NPU: DRM render driver with a simulated accelerator");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(DMA_BUF);

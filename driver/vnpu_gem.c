// SPDX-License-Identifier: GPL-2.0
/**
 * DOC: buffer objects
 *
 * BOs are GEM shmem objects, created by BO_CREATE or imported from a
 * dma-buf (PRIME). Created BOs are charged to the device's memory limit
 * when they are created, before any page exists, so the limit fails
 * cleanly at BO_CREATE instead of later on the device. UPLOAD and DOWNLOAD
 * copy between user memory and a BO through a kernel mapping that the BO
 * keeps from first use until it is freed (the device's tiles use the same
 * mapping), after waiting for the device jobs that use the BO. Userptr
 * BOs (vnpu_userptr.c) are vnpu_bos without a shmem file.
 */

#include <linux/dma-buf.h>
#include <linux/dma-resv.h>
#include <linux/iosys-map.h>
#include <linux/sched/signal.h>
#include <linux/sizes.h>
#include <linux/uaccess.h>

#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_prime.h>
#include <drm/vnpu_drm.h>
#include <linux/vnpu_netlink.h>

#include "vnpu_drv.h"
#include "vnpu_gem.h"

/* Bytes copied between two checks for signals. */
#define VNPU_XFER_CHUNK SZ_1M

void vnpu_bo_register(struct vnpu_device *vdev, struct vnpu_bo *bo)
{
	mutex_lock(&vdev->bo_lock);
	list_add_tail(&bo->link, &vdev->bo_list);
	mutex_unlock(&vdev->bo_lock);
	atomic_inc(&vdev->stats.bos);
}

/* Undoes vnpu_bo_register() (if it was made) and the BO's charge. */
void vnpu_bo_unregister(struct vnpu_device *vdev, struct vnpu_bo *bo)
{
	if (!list_empty(&bo->link)) {
		mutex_lock(&vdev->bo_lock);
		list_del(&bo->link);
		mutex_unlock(&vdev->bo_lock);
		atomic_dec(&vdev->stats.bos);
	}
	atomic64_sub(bo->charged, &vdev->mem_used);
}

/*
 * The kernel mapping of a BO's pages; an imported BO's is its exporter's,
 * asked of the dma-buf directly: drm_gem_shmem_vmap() would hold the
 * importer's shmem vmap_lock across the exporter's vmap, and when the
 * exporter is a shmem object too (vnpu, vgem) that takes a lock of the
 * same class, which lockdep reports as recursive locking. The caller's
 * bo->vmap_lock serializes the one mapping a BO makes.
 */
static int vnpu_bo_vmap(struct vnpu_bo *bo, struct iosys_map *map)
{
	struct dma_buf_attachment *attach = bo->base.base.import_attach;

	if (attach)
		return dma_buf_vmap(attach->dmabuf, map);
	return drm_gem_shmem_vmap(&bo->base, map);
}

static void vnpu_bo_vunmap(struct vnpu_bo *bo)
{
	struct dma_buf_attachment *attach = bo->base.base.import_attach;
	struct iosys_map map = IOSYS_MAP_INIT_VADDR(bo->vaddr);

	if (attach)
		dma_buf_vunmap(attach->dmabuf, &map);
	else
		drm_gem_shmem_vunmap(&bo->base, &map);
}

static void vnpu_gem_free(struct drm_gem_object *obj)
{
	struct vnpu_device *vdev = to_vnpu_device(obj->dev);
	struct vnpu_bo *bo = to_vnpu_bo(obj);

	if (bo->vaddr)
		vnpu_bo_vunmap(bo);
	vnpu_bo_unregister(vdev, bo);
	mutex_destroy(&bo->vmap_lock);
	drm_gem_shmem_free(&bo->base);
}

static const struct drm_gem_object_funcs vnpu_gem_funcs = {
	.free = vnpu_gem_free,
	.print_info = drm_gem_shmem_object_print_info,
	.pin = drm_gem_shmem_object_pin,
	.unpin = drm_gem_shmem_object_unpin,
	.get_sg_table = drm_gem_shmem_object_get_sg_table,
	.vmap = drm_gem_shmem_object_vmap,
	.vunmap = drm_gem_shmem_object_vunmap,
	.mmap = drm_gem_shmem_object_mmap,
	.vm_ops = &drm_gem_shmem_vm_ops,
};

/* drm_driver.gem_create_object: every shmem object of the device is ours. */
struct drm_gem_object *vnpu_gem_create_object(struct drm_device *drm,
					      size_t size)
{
	struct vnpu_bo *bo;

	bo = kzalloc(sizeof(*bo), GFP_KERNEL);
	if (!bo)
		return ERR_PTR(-ENOMEM);
	INIT_LIST_HEAD(&bo->link);
	mutex_init(&bo->vmap_lock);
	bo->base.base.funcs = &vnpu_gem_funcs;
	return &bo->base.base;
}

struct drm_gem_object *
vnpu_gem_prime_import_sg_table(struct drm_device *drm,
			       struct dma_buf_attachment *attach,
			       struct sg_table *sgt)
{
	struct drm_gem_object *obj;

	obj = drm_gem_shmem_prime_import_sg_table(drm, attach, sgt);
	if (!IS_ERR(obj))
		vnpu_bo_register(to_vnpu_device(drm), to_vnpu_bo(obj));
	return obj;
}

/**
 * vnpu_bo_vaddr() - the BO's kernel mapping, made on first use
 * @bo: the BO
 *
 * Return: the address of the BO's first byte or an ERR_PTR().
 */
void *vnpu_bo_vaddr(struct vnpu_bo *bo)
{
	struct iosys_map map;
	void *vaddr;
	int ret = 0;

	/* Once set, @bo->vaddr stays until the BO is freed: no lock needed. */
	vaddr = smp_load_acquire(&bo->vaddr);
	if (vaddr)
		return vaddr;

	mutex_lock(&bo->vmap_lock);
	if (!bo->vaddr) {
		ret = vnpu_bo_vmap(bo, &map);
		if (!ret) /* pairs with the readers' smp_load_acquire() */
			smp_store_release(&bo->vaddr, map.vaddr);
	}
	vaddr = bo->vaddr;
	mutex_unlock(&bo->vmap_lock);
	return ret ? ERR_PTR(ret) : vaddr;
}

u64 vnpu_max_bo_size(struct vnpu_device *vdev)
{
	return vdev->mem_limit & PAGE_MASK;
}

/**
 * vnpu_bo_charge() - charge a new BO's bytes to the device's memory limit
 * @vdev: the device
 * @file: the file that asks for them
 * @size: bytes
 * @what: the ioctl, for the netlink event when the limit is reached
 *
 * Return: 0 or -ENOMEM (over the limit, or an injected failure).
 */
int vnpu_bo_charge(struct vnpu_device *vdev, struct drm_file *file, u64 size,
		   const char *what)
{
	char reason[64];

	if (vnpu_fail_alloc(vdev))
		return -ENOMEM;
	if (atomic64_add_return(size, &vdev->mem_used) > vdev->mem_limit) {
		atomic64_sub(size, &vdev->mem_used);
		snprintf(reason, sizeof(reason),
			 "%s over the device memory limit", what);
		vnpu_nl_event(vdev, VNPU_NL_CMD_MEMORY_LIMIT,
			      file->driver_priv, 0, reason);
		return -ENOMEM;
	}
	return 0;
}

int vnpu_ioctl_bo_create(struct drm_device *drm, void *data,
			 struct drm_file *file)
{
	struct vnpu_device *vdev = to_vnpu_device(drm);
	struct drm_vnpu_bo_create *args = data;
	struct drm_gem_shmem_object *shmem;
	struct vnpu_bo *bo;
	u64 size;
	int ret;

	if (args->flags & ~DRM_VNPU_BO_FLAGS)
		return -EINVAL;
	if (!args->size || args->size > vnpu_max_bo_size(vdev))
		return -EINVAL;
	size = PAGE_ALIGN(args->size);

	ret = vnpu_bo_charge(vdev, file, size, "BO_CREATE");
	if (ret)
		return ret;

	shmem = drm_gem_shmem_create(drm, size);
	if (IS_ERR(shmem)) {
		atomic64_sub(size, &vdev->mem_used);
		return PTR_ERR(shmem);
	}
	bo = to_vnpu_bo(&shmem->base);
	bo->charged = size;
	vnpu_bo_register(vdev, bo);

	ret = drm_gem_handle_create(file, &shmem->base, &args->handle);
	drm_gem_object_put(&shmem->base);
	return ret;
}

int vnpu_ioctl_bo_info(struct drm_device *drm, void *data,
		       struct drm_file *file)
{
	struct drm_vnpu_bo_info *args = data;
	struct drm_gem_object *obj;
	int ret;

	if (args->flags)
		return -EINVAL;

	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;

	ret = drm_gem_create_mmap_offset(obj);
	if (!ret) {
		args->mmap_offset = drm_vma_node_offset_addr(&obj->vma_node);
		args->size = obj->size;
	}
	drm_gem_object_put(obj);
	return ret;
}

/*
 * copy_from_user() and copy_to_user() use "rep movsb" on CPUs with ERMS,
 * which QEMU's TCG (the usual host of this simulated device) runs one byte
 * at a time: moving 8-byte words through a user access section is about
 * four times faster there. The few bytes past the last word go through
 * the usual helpers.
 */
static int vnpu_copy_in(void *dst, const void __user *src, size_t n)
{
	const u64 __user *s = src;
	size_t words = n / sizeof(u64);
	u64 *d = dst;

	if (!user_access_begin(src, n))
		return -EFAULT;
	for (; words >= 4; words -= 4, d += 4, s += 4) {
		unsafe_get_user(d[0], &s[0], efault);
		unsafe_get_user(d[1], &s[1], efault);
		unsafe_get_user(d[2], &s[2], efault);
		unsafe_get_user(d[3], &s[3], efault);
	}
	for (; words; words--, d++, s++)
		unsafe_get_user(*d, s, efault);
	user_access_end();
	return copy_from_user(d, s, n % sizeof(u64)) ? -EFAULT : 0;

efault:
	user_access_end();
	return -EFAULT;
}

static int vnpu_copy_out(void __user *dst, const void *src, size_t n)
{
	size_t words = n / sizeof(u64);
	u64 __user *d = dst;
	const u64 *s = src;

	if (!user_access_begin(dst, n))
		return -EFAULT;
	for (; words >= 4; words -= 4, d += 4, s += 4) {
		unsafe_put_user(s[0], &d[0], efault);
		unsafe_put_user(s[1], &d[1], efault);
		unsafe_put_user(s[2], &d[2], efault);
		unsafe_put_user(s[3], &d[3], efault);
	}
	for (; words; words--, d++, s++)
		unsafe_put_user(*s, d, efault);
	user_access_end();
	return copy_to_user(d, s, n % sizeof(u64)) ? -EFAULT : 0;

efault:
	user_access_end();
	return -EFAULT;
}

static int vnpu_copy_chunks(void *vaddr, void __user *uptr, u64 size,
			    bool upload)
{
	u8 __user *user = uptr;
	u64 done, n;
	int ret;

	for (done = 0; done < size; done += n) {
		n = min_t(u64, size - done, VNPU_XFER_CHUNK);
		if (upload)
			ret = vnpu_copy_in(vaddr + done, user + done, n);
		else
			ret = vnpu_copy_out(user + done, vaddr + done, n);
		if (ret)
			return ret;
		if (fatal_signal_pending(current))
			return -EINTR;
		cond_resched();
	}
	return 0;
}

static int vnpu_bo_xfer(struct drm_device *drm, struct drm_vnpu_bo_xfer *args,
			struct drm_file *file, bool upload)
{
	struct vnpu_device *vdev = to_vnpu_device(drm);
	struct drm_gem_object *obj;
	enum dma_resv_usage usage;
	void *vaddr;
	long lret;
	int ret;

	if (args->flags || !args->size)
		return -EINVAL;

	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;

	ret = -EINVAL;
	if (args->offset > obj->size || args->size > obj->size - args->offset)
		goto out_put;
	if (upload && to_vnpu_bo(obj)->read_only)
		goto out_put;

	/* The CPU writes after every device user, reads after every writer. */
	usage = upload ? DMA_RESV_USAGE_READ : DMA_RESV_USAGE_WRITE;
	lret = dma_resv_wait_timeout(obj->resv, usage, true,
				     MAX_SCHEDULE_TIMEOUT);
	if (lret < 0) {
		ret = lret;
		goto out_put;
	}

	vaddr = vnpu_bo_vaddr(to_vnpu_bo(obj));
	if (IS_ERR(vaddr)) {
		ret = PTR_ERR(vaddr);
		goto out_put;
	}

	ret = vnpu_copy_chunks(vaddr + args->offset,
			       u64_to_user_ptr(args->data_ptr), args->size,
			       upload);
	if (!ret)
		atomic64_add(args->size, upload ? &vdev->stats.bytes_uploaded :
						  &vdev->stats.bytes_downloaded);
out_put:
	drm_gem_object_put(obj);
	return ret;
}

int vnpu_ioctl_bo_upload(struct drm_device *drm, void *data,
			 struct drm_file *file)
{
	return vnpu_bo_xfer(drm, data, file, true);
}

int vnpu_ioctl_bo_download(struct drm_device *drm, void *data,
			   struct drm_file *file)
{
	return vnpu_bo_xfer(drm, data, file, false);
}

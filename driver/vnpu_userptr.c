// SPDX-License-Identifier: GPL-2.0
/**
 * DOC: userptr buffer objects
 *
 * BO_USERPTR makes a BO of the caller's own memory: its pages are pinned
 * (FOLL_LONGTERM, FOLL_WRITE unless the BO is read-only) for the BO's
 * whole life and mapped into the kernel once, so the device's tiles,
 * UPLOAD and DOWNLOAD reach them as they reach a shmem BO's pages, and a
 * caller's buffer becomes a job's slot without a copy. The pinned bytes
 * are charged to the device's memory limit like a created BO.
 *
 * The pins hold the pages, not the mapping: after munmap() the BO keeps
 * the pages (the process no longer sees them); after fork() the pinned
 * pages of a private mapping stay with the parent and the child's
 * mapping gets copies (the kernel copies pinned anonymous pages at fork).
 * A userptr BO has no shmem file: it cannot be mmapped through the
 * render node. A writable one exports as a dma-buf (PRIME) whose
 * importers map the pinned pages (an sg table of them, or the BO's kernel
 * mapping); the dma-buf holds the BO, so the pages stay pinned and
 * charged while any importer keeps it, after the handle is closed or the
 * memory unmapped. The dma-buf cannot be mmapped (the process maps the
 * memory itself). A read-only BO does not export: importers could write.
 */

#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include <linux/iosys-map.h>

#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_prime.h>
#include <drm/vnpu_drm.h>

#include "vnpu_drv.h"
#include "vnpu_gem.h"

static void vnpu_userptr_free(struct drm_gem_object *obj)
{
	struct vnpu_bo *bo = to_vnpu_bo(obj);

	vunmap(bo->vaddr);
	/* The device may have written the pages of a writable BO. */
	unpin_user_pages_dirty_lock(bo->pages, obj->size >> PAGE_SHIFT,
				    !bo->read_only);
	kvfree(bo->pages);
	vnpu_bo_unregister(to_vnpu_device(obj->dev), bo);
	drm_gem_object_release(obj);
	mutex_destroy(&bo->vmap_lock);
	kfree(bo);
}

static struct dma_buf *vnpu_userptr_export(struct drm_gem_object *obj,
					   int flags)
{
	if (to_vnpu_bo(obj)->read_only)
		return ERR_PTR(-EINVAL);
	return drm_gem_prime_export(obj, flags);
}

/* An importer's sg table: the pages stay pinned while the BO lives. */
static struct sg_table *vnpu_userptr_get_sg_table(struct drm_gem_object *obj)
{
	return drm_prime_pages_to_sg(obj->dev, to_vnpu_bo(obj)->pages,
				     obj->size >> PAGE_SHIFT);
}

/* An importer's kernel mapping is the BO's own, made when it was pinned. */
static int vnpu_userptr_vmap(struct drm_gem_object *obj, struct iosys_map *map)
{
	iosys_map_set_vaddr(map, to_vnpu_bo(obj)->vaddr);
	return 0;
}

static void vnpu_userptr_vunmap(struct drm_gem_object *obj,
				struct iosys_map *map)
{
}

static const struct drm_gem_object_funcs vnpu_userptr_funcs = {
	.free = vnpu_userptr_free,
	.export = vnpu_userptr_export,
	.get_sg_table = vnpu_userptr_get_sg_table,
	.vmap = vnpu_userptr_vmap,
	.vunmap = vnpu_userptr_vunmap,
};

/* Pin every page of [@start, @start + @npages pages) into @bo->pages. */
static int vnpu_userptr_pin(struct vnpu_bo *bo, unsigned long start,
			    unsigned long npages)
{
	unsigned int gup = FOLL_LONGTERM | (bo->read_only ? 0 : FOLL_WRITE);
	unsigned long pinned = 0;
	int ret;

	while (pinned < npages) {
		ret = pin_user_pages_fast(start + (pinned << PAGE_SHIFT),
					  min_t(unsigned long, npages - pinned,
						INT_MAX),
					  gup, bo->pages + pinned);
		if (ret <= 0) {
			/* 0 pages: nothing mapped there, as for -EFAULT */
			unpin_user_pages(bo->pages, pinned);
			return ret ? ret : -EFAULT;
		}
		pinned += ret;
	}

	bo->vaddr = vmap(bo->pages, npages, VM_MAP, PAGE_KERNEL);
	if (!bo->vaddr) {
		unpin_user_pages(bo->pages, pinned);
		return -ENOMEM;
	}
	return 0;
}

static int vnpu_userptr_check(struct vnpu_device *vdev,
			      const struct drm_vnpu_bo_userptr *args)
{
	if (args->flags & ~DRM_VNPU_BO_USERPTR_FLAGS)
		return -EINVAL;
	if (!PAGE_ALIGNED(args->user_ptr) || !PAGE_ALIGNED(args->size))
		return -EINVAL;
	if (!args->size || args->size > vnpu_max_bo_size(vdev))
		return -EINVAL;
	if (args->user_ptr + args->size < args->user_ptr ||
	    !access_ok(u64_to_user_ptr(args->user_ptr), args->size))
		return -EFAULT;
	return 0;
}

static struct vnpu_bo *vnpu_userptr_alloc(struct drm_device *drm,
					  const struct drm_vnpu_bo_userptr *args)
{
	unsigned long npages = args->size >> PAGE_SHIFT;
	struct vnpu_bo *bo;
	int ret;

	bo = kzalloc(sizeof(*bo), GFP_KERNEL);
	if (!bo)
		return ERR_PTR(-ENOMEM);
	bo->pages = kvmalloc_array(npages, sizeof(*bo->pages), GFP_KERNEL);
	if (!bo->pages) {
		ret = -ENOMEM;
		goto err_free_bo;
	}
	bo->read_only = args->flags & DRM_VNPU_BO_USERPTR_READ_ONLY;
	ret = vnpu_userptr_pin(bo, args->user_ptr, npages);
	if (ret)
		goto err_free_pages;

	INIT_LIST_HEAD(&bo->link);
	mutex_init(&bo->vmap_lock);
	bo->base.base.funcs = &vnpu_userptr_funcs;
	drm_gem_private_object_init(drm, &bo->base.base, args->size);
	return bo;

err_free_pages:
	kvfree(bo->pages);
err_free_bo:
	kfree(bo);
	return ERR_PTR(ret);
}

int vnpu_ioctl_bo_userptr(struct drm_device *drm, void *data,
			  struct drm_file *file)
{
	struct vnpu_device *vdev = to_vnpu_device(drm);
	struct drm_vnpu_bo_userptr *args = data;
	struct vnpu_bo *bo;
	int ret;

	ret = vnpu_userptr_check(vdev, args);
	if (ret)
		return ret;
	ret = vnpu_bo_charge(vdev, file, args->size, "BO_USERPTR");
	if (ret)
		return ret;

	bo = vnpu_userptr_alloc(drm, args);
	if (IS_ERR(bo)) {
		atomic64_sub(args->size, &vdev->mem_used);
		return PTR_ERR(bo);
	}
	bo->charged = args->size;
	vnpu_bo_register(vdev, bo);

	ret = drm_gem_handle_create(file, &bo->base.base, &args->handle);
	drm_gem_object_put(&bo->base.base);
	return ret;
}

/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __VNPU_GEM_H__
#define __VNPU_GEM_H__

#include <linux/list.h>
#include <linux/mutex.h>

#include <drm/drm_gem_shmem_helper.h>

struct dma_buf_attachment;
struct drm_file;
struct vnpu_device;
struct sg_table;

/**
 * struct vnpu_bo - a buffer object: GEM shmem, created here or imported,
 * or a userptr BO (vnpu_userptr.c) that uses only @base.base
 * @base: the shmem object, embedded first (the helpers kfree() it)
 * @link: entry in &vnpu_device.bo_list once registered, else empty
 * @vmap_lock: serializes making @vaddr (read without it once set)
 * @vaddr: kernel mapping kept from first use until the BO is freed
 * @charged: bytes charged to &vnpu_device.mem_used (0 for imports)
 * @pages: the pinned pages of a userptr BO, else NULL
 * @read_only: a userptr BO that neither jobs nor uploads may write
 */
struct vnpu_bo {
	struct drm_gem_shmem_object base;
	struct list_head link;
	/* serializes making vaddr */
	struct mutex vmap_lock;
	void *vaddr;
	u64 charged;
	struct page **pages;
	bool read_only;
};

static inline struct vnpu_bo *to_vnpu_bo(struct drm_gem_object *obj)
{
	return container_of(to_drm_gem_shmem_obj(obj), struct vnpu_bo, base);
}

void *vnpu_bo_vaddr(struct vnpu_bo *bo);
struct drm_gem_object *
vnpu_gem_prime_import_sg_table(struct drm_device *drm,
			       struct dma_buf_attachment *attach,
			       struct sg_table *sgt);
u64 vnpu_max_bo_size(struct vnpu_device *vdev);
int vnpu_bo_charge(struct vnpu_device *vdev, struct drm_file *file, u64 size,
		   const char *what);
void vnpu_bo_register(struct vnpu_device *vdev, struct vnpu_bo *bo);
void vnpu_bo_unregister(struct vnpu_device *vdev, struct vnpu_bo *bo);

#endif /* __VNPU_GEM_H__ */

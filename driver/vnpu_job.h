/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __VNPU_JOB_H__
#define __VNPU_JOB_H__

#include <linux/kref.h>
#include <linux/list.h>

#include <drm/gpu_scheduler.h>

#include "vnpu_fw.h"

struct drm_gem_object;
struct vnpu_device;
struct vnpu_file;

/**
 * struct vnpu_job - one submitted job; refcounted: the scheduler holds a
 * reference until free_job, the file's job table another while the job's
 * id is kept there
 * @base: the scheduler job
 * @ref: reference count
 * @vdev: the device
 * @vfile: the file that submitted it (a reference)
 * @id: job id in @vfile
 * @priority: &enum drm_vnpu_priority
 * @link: entry in &vnpu_device.job_list until free_job
 * @fw: what the firmware runs; its result fields are read by WAIT
 * @hw_fence: the hardware fence, allocated at submit, initialized when the
 *	scheduler first runs the job (then @pushed is set)
 * @pushed: the job went to the firmware
 * @done: the scheduler's finished fence (a reference), once armed
 * @seen_progress: @fw.progress at the last timeout of the job
 * @bos: the BO of each slot, one reference each
 * @num_slots: entries in @bos and @fw.slot_base
 * @lock_objs: the distinct reservation objects the job uses
 * @lock_write: for each of @lock_objs, whether the job writes it (in the
 *	same allocation as @lock_objs)
 * @num_lock_objs: entries in @lock_objs
 * @profile_bo: the profiling BO (a reference) or NULL
 * @stream: the kernel copy of the command stream, @stream_inline or
 *	allocated
 * @stream_inline: holds a small command stream without an allocation
 */
/* Command streams up to this many bytes are copied into the job itself. */
#define VNPU_JOB_INLINE_STREAM 64

struct vnpu_job {
	struct drm_sched_job base;
	struct kref ref;
	struct vnpu_device *vdev;
	struct vnpu_file *vfile;
	u64 id;
	u32 priority;
	struct list_head link;
	struct vnpu_fw_job fw;
	struct dma_fence *hw_fence;
	bool pushed;
	struct dma_fence *done;
	u64 seen_progress;
	struct drm_gem_object **bos;
	u32 num_slots;
	struct drm_gem_object **lock_objs;
	bool *lock_write;
	u32 num_lock_objs;
	struct drm_gem_object *profile_bo;
	void *stream;
	u64 stream_inline[VNPU_JOB_INLINE_STREAM / sizeof(u64)];
};

static inline struct vnpu_job *to_vnpu_job(struct drm_sched_job *sched_job)
{
	return container_of(sched_job, struct vnpu_job, base);
}

void vnpu_job_put(struct vnpu_job *job);
void vnpu_job_retire(struct vnpu_job *job);

#endif /* __VNPU_JOB_H__ */

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

/* Command streams up to this many bytes are copied into the job itself. */
#define VNPU_JOB_INLINE_STREAM 16

/**
 * struct vnpu_sched_job - the scheduler's part of a job, allocated only
 * for a job that goes to the scheduler
 * @base: the scheduler job
 * @job: the job it belongs to
 * @seen_progress: @job->fw.progress when a timeout last saw it change
 * @seen_ns: when that was (CLOCK_MONOTONIC ns), 0 before
 */
struct vnpu_sched_job {
	struct drm_sched_job base;
	struct vnpu_job *job;
	u64 seen_progress;
	u64 seen_ns;
};

/**
 * struct vnpu_job - one submitted job; refcounted: the scheduler holds a
 * reference until free_job (SUBMIT itself for a job run at submit), the
 * file's history another while the job's id is kept there
 * @ref: reference count
 * @priority: &enum drm_vnpu_priority
 * @vdev: the device
 * @vfile: the file that submitted it (a reference)
 * @id: job id in @vfile
 * @done: what userspace and other jobs wait for (a reference): the
 *	scheduler's finished fence; for a job run at submit @hw_fence, or
 *	NULL when nothing needed a fence (it ended before its id was known)
 * @hw_fence: the hardware fence, allocated at submit when the job goes to
 *	the scheduler or has an out-syncobj, initialized when the job goes
 *	to the device (then @pushed is set)
 * @fw: what the firmware runs; its result fields are read by WAIT
 * @bos: the BO of each slot, one reference each
 * @num_slots: entries in @bos and @fw.slot_base
 * @num_lock_objs: entries in @lock_objs
 * @lock_objs: the distinct reservation objects the job uses
 * @lock_write: for each of @lock_objs, whether the job writes it (in the
 *	same allocation as @lock_objs)
 * @in_fences: the fences of the in-syncobjs (a reference each) until they
 *	become scheduler dependencies
 * @num_in_fences: entries in @in_fences
 * @pushed: the job went to the firmware
 * @is_short: vnpu_fw_job_is_short(), known once the stream is validated
 * @profile_bo: the profiling BO (a reference) or NULL
 * @stream: the kernel copy of the command stream, @stream_inline or
 *	allocated
 * @link: entry in &vnpu_device.job_list until free_job (a job that goes
 *	to the scheduler)
 * @sched: the scheduler's part, for a job that goes to the scheduler
 * @stream_inline: holds a small command stream without an allocation
 *
 * Kept small (256 bytes): a job run at submit is set up field by field for
 * every SUBMIT and kept for WAIT until %DRM_VNPU_JOB_HISTORY later jobs.
 */
struct vnpu_job {
	struct kref ref;
	u32 priority;
	struct vnpu_device *vdev;
	struct vnpu_file *vfile;
	u64 id;
	struct dma_fence *done;
	struct dma_fence *hw_fence;
	struct vnpu_fw_job fw;
	struct drm_gem_object **bos;
	u32 num_slots;
	u32 num_lock_objs;
	struct drm_gem_object **lock_objs;
	bool *lock_write;
	struct dma_fence **in_fences;
	u32 num_in_fences;
	bool pushed;
	bool is_short;
	struct drm_gem_object *profile_bo;
	void *stream;

	struct list_head link;
	struct vnpu_sched_job *sched;
	u64 stream_inline[VNPU_JOB_INLINE_STREAM / sizeof(u64)];
};

static inline struct vnpu_sched_job *to_vnpu_sched_job(struct drm_sched_job *sched_job)
{
	return container_of(sched_job, struct vnpu_sched_job, base);
}

static inline struct vnpu_job *to_vnpu_job(struct drm_sched_job *sched_job)
{
	return to_vnpu_sched_job(sched_job)->job;
}

void vnpu_job_put(struct vnpu_job *job);
void vnpu_job_retire(struct vnpu_job *job);
void vnpu_job_init_hw_fence(struct vnpu_job *job, u64 context, u64 seqno);

#endif /* __VNPU_JOB_H__ */

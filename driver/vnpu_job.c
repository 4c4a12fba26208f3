// SPDX-License-Identifier: GPL-2.0
/**
 * DOC: jobs: submit, wait, cancel
 *
 * SUBMIT checks its arguments, looks up the slot BOs, copies the command
 * stream out of its BO and validates all of it (vnpu_stream_validate())
 * before anything is queued: a job the device may run can only reach
 * memory inside its slots' BOs. The job then gets its dependencies
 * (in-syncobjs, the implicit fences of its BOs, and the previous job of the
 * file when that went to another priority's entity, so a file's jobs end
 * in order) and is pushed to the file's scheduler entity of its priority,
 * unless it is short and can start at once: then it runs in SUBMIT itself
 * (see "jobs run at submit" below).
 *
 * Each file keeps its last %DRM_VNPU_JOB_HISTORY jobs by id for WAIT and
 * CANCEL, in a ring indexed by id (ids are consecutive); a job's buffers
 * are released as soon as the scheduler frees it, only its small record
 * stays.
 */

#include <linux/dma-resv.h>
#include <linux/idr.h>
#include <linux/ktime.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/ww_mutex.h>

#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_print.h>
#include <drm/drm_syncobj.h>
#include <drm/drm_utils.h>
#include <drm/vnpu_drm.h>

#include "vnpu_drv.h"
#include "vnpu_exec.h"
#include "vnpu_gem.h"
#include "vnpu_job.h"

static void vnpu_job_free(struct kref *ref)
{
	struct vnpu_job *job = container_of(ref, struct vnpu_job, ref);
	struct vnpu_file *vfile = job->vfile;

	if (job->pushed)
		dma_fence_put(job->hw_fence);
	else
		kfree(job->hw_fence);
	dma_fence_put(job->done);
	kfree(job->sched);
	/* The file's release frees a spare job left there. */
	if (cmpxchg(&vfile->spare_job, NULL, job)) {
		kfree(job);
		atomic_dec(&vfile->vdev->stats.jobs);
	}
	vnpu_file_put(vfile);
}

void vnpu_job_put(struct vnpu_job *job)
{
	kref_put(&job->ref, vnpu_job_free);
}

/* Drop everything but the record WAIT reads. */
static void vnpu_job_release_buffers(struct vnpu_job *job)
{
	u32 i;

	/* BOs, slots and a profile BO come with lock_objs. */
	if (!job->lock_objs && !job->in_fences &&
	    (!job->stream || job->stream == job->stream_inline)) {
		job->stream = NULL;
		return;
	}
	for (i = 0; i < job->num_in_fences; i++)
		dma_fence_put(job->in_fences[i]);
	kvfree(job->in_fences);
	job->in_fences = NULL;
	job->num_in_fences = 0;

	if (job->bos) {
		for (i = 0; i < job->num_slots; i++)
			drm_gem_object_put(job->bos[i]);
	}
	kvfree(job->bos);
	job->bos = NULL;
	kvfree(job->fw.slot_base);
	job->fw.slot_base = NULL;
	kvfree(job->lock_objs);
	job->lock_objs = NULL;
	job->lock_write = NULL;
	drm_gem_object_put(job->profile_bo);
	job->profile_bo = NULL;
	if (job->stream != job->stream_inline)
		kvfree(job->stream);
	job->stream = NULL;
}

/**
 * vnpu_job_retire() - the scheduler is done with a job (free_job)
 * @job: the job; the scheduler's reference is dropped
 */
void vnpu_job_retire(struct vnpu_job *job)
{
	struct vnpu_device *vdev = job->vdev;

	vnpu_job_release_buffers(job);
	kfree(job->sched);
	job->sched = NULL;
	if (!job->pushed)
		atomic64_inc(&vdev->stats.jobs_cancelled);

	spin_lock(&vdev->job_lock);
	list_del(&job->link);
	if (!--vdev->jobs_in_flight)
		wake_up_all(&vdev->jobs_idle);
	spin_unlock(&vdev->job_lock);

	vnpu_job_put(job);
}

static int vnpu_submit_check_args(const struct drm_vnpu_submit *args)
{
	if (args->flags & ~DRM_VNPU_SUBMIT_FLAGS || args->pad || args->pad2)
		return -EINVAL;
	if (!(args->flags & DRM_VNPU_SUBMIT_PROFILE) && args->profile_handle)
		return -EINVAL;
	if (args->priority >= VNPU_NUM_PRIORITIES)
		return -EINVAL;
	if (args->cmd_offset % 8 || args->cmd_size % 8 || !args->cmd_size ||
	    args->cmd_size > DRM_VNPU_MAX_CMD_SIZE)
		return -EINVAL;
	if (args->slot_count > DRM_VNPU_MAX_SLOTS ||
	    args->in_syncobj_count > DRM_VNPU_MAX_IN_SYNCOBJS)
		return -EINVAL;
	return 0;
}

static struct vnpu_job *vnpu_job_alloc(struct vnpu_device *vdev,
				       struct vnpu_file *vfile, u32 priority)
{
	struct vnpu_job *job;

	job = xchg(&vfile->spare_job, NULL);
	if (!job) {
		job = kmalloc(sizeof(*job), GFP_KERNEL);
		if (!job)
			return NULL;
		atomic_inc(&vdev->stats.jobs);
	}
	/* @stream_inline is written before it is read. */
	memset(job, 0, offsetof(struct vnpu_job, stream_inline));
	kref_init(&job->ref);
	kref_get(&vfile->ref);
	job->priority = priority;
	job->vdev = vdev;
	job->vfile = vfile;
	INIT_LIST_HEAD(&job->fw.link);
	atomic_set(&job->fw.state, VNPU_FW_JOB_QUEUED);
	job->fw.status = DRM_VNPU_JOB_CANCELLED;
	INIT_LIST_HEAD(&job->link);
	return job;
}

/* The hardware fence, allocated here: run_job must not allocate. */
static int vnpu_job_alloc_hw_fence(struct vnpu_job *job)
{
	if (!job->hw_fence)
		job->hw_fence = kzalloc(sizeof(*job->hw_fence), GFP_KERNEL);
	return job->hw_fence ? 0 : -ENOMEM;
}

/* Remember @obj's reservation object once, with the strongest access. */
static void vnpu_job_add_lock_obj(struct vnpu_job *job,
				  struct drm_gem_object *obj, bool write)
{
	u32 i;

	for (i = 0; i < job->num_lock_objs; i++) {
		if (job->lock_objs[i]->resv == obj->resv) {
			job->lock_write[i] |= write;
			return;
		}
	}
	job->lock_objs[job->num_lock_objs] = obj;
	job->lock_write[job->num_lock_objs++] = write;
}

static int vnpu_job_map_slot(struct vnpu_job *job, struct drm_file *file,
			     u32 i, const struct drm_vnpu_slot *slot,
			     struct vnpu_slot_info *info)
{
	struct drm_gem_object *obj;
	void *vaddr;

	obj = drm_gem_object_lookup(file, slot->handle);
	if (!obj)
		return -ENOENT;
	job->bos[i] = obj;
	if (slot->flags & DRM_VNPU_SLOT_WRITE && to_vnpu_bo(obj)->read_only)
		return -EINVAL;

	vaddr = vnpu_bo_vaddr(to_vnpu_bo(obj));
	if (IS_ERR(vaddr))
		return PTR_ERR(vaddr);
	job->fw.slot_base[i] = vaddr;

	info->size = obj->size;
	info->id = (uintptr_t)obj;
	info->flags = slot->flags & DRM_VNPU_SLOT_WRITE ? VNPU_SLOT_INFO_WRITE : 0;
	vnpu_job_add_lock_obj(job, obj, slot->flags & DRM_VNPU_SLOT_WRITE);
	return 0;
}

/*
 * Copy the slot table, check its flags, then look up and map every BO.
 * Fills @info for the validator.
 */
static int vnpu_job_get_slots(struct vnpu_job *job, struct drm_file *file,
			      const struct drm_vnpu_submit *args,
			      struct vnpu_slot_info **info)
{
	u32 n = args->slot_count, i;
	struct drm_vnpu_slot *slots;
	int ret;

	*info = NULL;
	if (!n && !(args->flags & DRM_VNPU_SUBMIT_PROFILE))
		return 0;
	/*
	 * One more lock object for the profiling BO; the write flags follow
	 * the object pointers in the same allocation.
	 */
	job->lock_objs = kvcalloc(n + 1, sizeof(*job->lock_objs) +
				  sizeof(*job->lock_write), GFP_KERNEL);
	if (!job->lock_objs)
		return -ENOMEM;
	job->lock_write = (bool *)(job->lock_objs + n + 1);
	if (!n)
		return 0;

	slots = kvmalloc_array(n, sizeof(*slots), GFP_KERNEL);
	job->bos = kvcalloc(n, sizeof(*job->bos), GFP_KERNEL);
	job->fw.slot_base = kvcalloc(n, sizeof(*job->fw.slot_base), GFP_KERNEL);
	*info = kvcalloc(n, sizeof(**info), GFP_KERNEL);
	ret = -ENOMEM;
	if (!slots || !job->bos || !job->fw.slot_base || !*info)
		goto out_free;
	job->num_slots = n;

	ret = -EFAULT;
	if (copy_from_user(slots, u64_to_user_ptr(args->slots_ptr),
			   n * sizeof(*slots)))
		goto out_free;

	ret = -EINVAL;
	for (i = 0; i < n; i++)
		if (!slots[i].flags || slots[i].flags & ~DRM_VNPU_SLOT_FLAGS)
			goto out_free;

	for (i = 0; i < n; i++) {
		ret = vnpu_job_map_slot(job, file, i, &slots[i], &(*info)[i]);
		if (ret)
			goto out_free;
	}
	ret = 0;
out_free:
	kvfree(slots);
	return ret;
}

/*
 * Copy a small command stream out of its BO, when that is mapped, under
 * the file's handle table lock: the handle's reference keeps the BO, no
 * reference of our own is needed. Returns -EAGAIN when the BO is not
 * mapped yet.
 */
static int vnpu_job_copy_stream_inline(struct vnpu_job *job,
				       struct drm_file *file,
				       const struct drm_vnpu_submit *args)
{
	u32 n = args->cmd_size / sizeof(u64), i;
	struct drm_gem_object *obj;
	const u64 *src;
	int ret = 0;

	spin_lock(&file->table_lock);
	obj = idr_find(&file->object_idr, args->cmd_handle);
	if (!obj) {
		ret = -ENOENT;
	} else if (args->cmd_offset > obj->size ||
		   args->cmd_size > obj->size - args->cmd_offset) {
		ret = -EINVAL;
	} else {
		/* Pairs with vnpu_bo_vaddr()'s smp_store_release(). */
		src = smp_load_acquire(&to_vnpu_bo(obj)->vaddr);
		if (!src)
			ret = -EAGAIN;
	}
	if (!ret) {
		/* Both are 8-byte aligned: copy words, not bytes. */
		src += args->cmd_offset / sizeof(u64);
		for (i = 0; i < n; i++)
			job->stream_inline[i] = src[i];
	}
	spin_unlock(&file->table_lock);
	if (ret)
		return ret;
	job->stream = job->stream_inline;
	job->fw.stream = job->stream;
	job->fw.stream_size = args->cmd_size;
	return 0;
}

/* Copy the command stream out of its BO: the job runs the copy. */
static int vnpu_job_copy_stream(struct vnpu_job *job, struct drm_file *file,
				const struct drm_vnpu_submit *args)
{
	struct drm_gem_object *obj;
	void *vaddr;
	int ret;

	if (args->cmd_size <= sizeof(job->stream_inline)) {
		ret = vnpu_job_copy_stream_inline(job, file, args);
		if (ret != -EAGAIN)
			return ret;
	}

	obj = drm_gem_object_lookup(file, args->cmd_handle);
	if (!obj)
		return -ENOENT;

	ret = -EINVAL;
	if (args->cmd_offset > obj->size ||
	    args->cmd_size > obj->size - args->cmd_offset)
		goto out_put;

	vaddr = vnpu_bo_vaddr(to_vnpu_bo(obj));
	if (IS_ERR(vaddr)) {
		ret = PTR_ERR(vaddr);
		goto out_put;
	}

	ret = -ENOMEM;
	if (args->cmd_size <= sizeof(job->stream_inline))
		job->stream = job->stream_inline;
	else
		job->stream = kvmalloc(args->cmd_size, GFP_KERNEL);
	if (!job->stream)
		goto out_put;
	memcpy(job->stream, vaddr + args->cmd_offset, args->cmd_size);
	job->fw.stream = job->stream;
	job->fw.stream_size = args->cmd_size;
	ret = 0;
out_put:
	drm_gem_object_put(obj);
	return ret;
}

static int vnpu_job_get_profile(struct vnpu_job *job, struct drm_file *file,
				const struct drm_vnpu_submit *args)
{
	struct drm_gem_object *obj;
	void *vaddr;

	if (!(args->flags & DRM_VNPU_SUBMIT_PROFILE))
		return 0;

	obj = drm_gem_object_lookup(file, args->profile_handle);
	if (!obj)
		return -ENOENT;
	job->profile_bo = obj;
	if (obj->size / (2 * sizeof(u64)) < job->fw.num_cmds ||
	    to_vnpu_bo(obj)->read_only)
		return -EINVAL;

	vaddr = vnpu_bo_vaddr(to_vnpu_bo(obj));
	if (IS_ERR(vaddr))
		return PTR_ERR(vaddr);
	job->fw.profile = vaddr;
	vnpu_job_add_lock_obj(job, obj, true);
	return 0;
}

/* Look up BOs, copy and validate the stream: everything but fences. */
static int vnpu_job_prepare(struct vnpu_job *job, struct drm_file *file,
			    const struct drm_vnpu_submit *args)
{
	struct vnpu_slot_info *info;
	int ret;

	ret = vnpu_job_get_slots(job, file, args, &info);
	if (ret)
		goto out_free_info;

	ret = vnpu_job_copy_stream(job, file, args);
	if (ret)
		goto out_free_info;

	ret = vnpu_stream_validate(job->stream, args->cmd_size, info,
				   job->num_slots, &job->fw.num_cmds);
	if (ret) {
		drm_dbg(&job->vdev->drm, "submit: command %u of the stream is invalid\n",
			job->fw.num_cmds);
		ret = -EINVAL;
		goto out_free_info;
	}
	job->is_short = vnpu_fw_job_is_short(&job->fw);

	ret = vnpu_job_get_profile(job, file, args);
out_free_info:
	kvfree(info);
	return ret;
}

/* Take the fences of the in-syncobjs (each must have one). */
static int vnpu_job_get_in_fences(struct vnpu_job *job, struct drm_file *file,
				  const struct drm_vnpu_submit *args)
{
	u32 n = args->in_syncobj_count, i;
	u32 *handles;
	int ret = 0;

	if (!n)
		return 0;

	handles = kvmalloc_array(n, sizeof(*handles), GFP_KERNEL);
	job->in_fences = kvcalloc(n, sizeof(*job->in_fences), GFP_KERNEL);
	if (!handles || !job->in_fences) {
		ret = -ENOMEM;
		goto out_free;
	}
	if (copy_from_user(handles, u64_to_user_ptr(args->in_syncobjs_ptr),
			   n * sizeof(*handles))) {
		ret = -EFAULT;
		goto out_free;
	}

	for (i = 0; i < n; i++) {
		ret = drm_syncobj_find_fence(file, handles[i], 0, 0,
					     &job->in_fences[i]);
		if (ret)
			goto out_free;
		job->num_in_fences++;
	}
out_free:
	kvfree(handles);
	return ret;
}

/*
 * Everything the job waits for becomes a scheduler dependency: the
 * in-syncobjs' fences, the implicit fences of its BOs (locked), and the
 * file's last job when that went to another entity, so that a file's jobs
 * end in order.
 */
static int vnpu_job_add_deps_locked(struct vnpu_job *job,
				    struct vnpu_file *vfile)
{
	struct drm_sched_job *base = &job->sched->base;
	struct dma_fence *fence;
	u32 i;
	int ret;

	lockdep_assert_held(&vfile->submit_lock);

	/* Each call takes a fence's reference, even when it fails. */
	while (job->num_in_fences) {
		fence = job->in_fences[--job->num_in_fences];
		ret = drm_sched_job_add_dependency(base, fence);
		if (ret)
			return ret;
	}

	for (i = 0; i < job->num_lock_objs; i++) {
		ret = dma_resv_reserve_fences(job->lock_objs[i]->resv, 1);
		if (ret)
			return ret;
		ret = drm_sched_job_add_implicit_dependencies(base,
							      job->lock_objs[i],
							      job->lock_write[i]);
		if (ret)
			return ret;
	}

	if (!vfile->last_done || vfile->last_priority == job->priority)
		return 0;
	return drm_sched_job_add_dependency(base, dma_fence_get(vfile->last_done));
}

/*
 * Give the job the file's next id. WAIT and CANCEL find it once
 * vnpu_job_publish_locked() put it in the file's history, when it is
 * queued or has ended.
 */
static int vnpu_job_add_id_locked(struct vnpu_job *job, struct vnpu_file *vfile)
{
	struct vnpu_job **history;

	lockdep_assert_held(&vfile->submit_lock);

	if (!vfile->history) {
		history = kvcalloc(DRM_VNPU_JOB_HISTORY, sizeof(*history),
				   GFP_KERNEL);
		if (!history)
			return -ENOMEM;
		spin_lock(&vfile->history_lock);
		vfile->history = history;
		spin_unlock(&vfile->history_lock);
	}
	job->id = vfile->next_id++;
	return 0;
}

/* Undo vnpu_job_add_id_locked() of a job that cannot be queued. */
static void vnpu_job_remove_id_locked(struct vnpu_job *job,
				      struct vnpu_file *vfile)
{
	lockdep_assert_held(&vfile->submit_lock);

	vfile->next_id--;
}

/**
 * DOC: jobs run at submit
 *
 * A job that could start at once and is short runs in the SUBMIT ioctl,
 * on the submitting thread, and has ended when SUBMIT returns: it saves
 * the scheduler thread's wakeup, the firmware thread's and the waiter's,
 * which cost much more than a short job (tens of microseconds each under
 * QEMU's TCG). Such a job never enters the scheduler. It runs at submit
 * only when all of these hold, checked under the file's submit_lock with
 * the reservation locks of its BOs held:
 *
 * 1. The file's last job has ended (its done fence signalled, or it ran
 *    at submit itself). The jobs of a file end in submission order across
 *    priorities, so every earlier job of the file, on any of its
 *    entities, has ended: nothing of the file is queued or running. Later
 *    jobs of the file are submitted after submit_lock is released; by
 *    then this one has ended, and they find no unfinished last job.
 * 2. Every dependency has signalled: the in-syncobjs' fences and the
 *    implicit fences of its BOs. The BOs stay locked until the job has
 *    ended, so no job submitted in the meantime can use them without
 *    finding them idle.
 * 3. vnpu_fw_job_is_short(): a bounded amount of work (a job of NOPs
 *    only, or a few thousand element operations), no SPIN, nothing that
 *    would allocate while the device is held.
 * 4. vnpu_fw_claim() finds the device idle: every job handed to it before
 *    has signalled its fence and no hang or fault is to be injected. The
 *    job is then the device's running job: the firmware thread starts
 *    nothing before it ends, a reset or shutdown abandons it like any
 *    running job, and it ends through the same code (status, timestamps,
 *    profile, counters).
 *
 * Otherwise the job goes to the scheduler as usual. A job that has ended
 * before anyone could wait for it needs no fence: it gets one (its
 * hardware fence, signalled, in a fence context of the file's own) only
 * for an out-syncobj, and adds none to its BOs (it would be signalled).
 * Its id is published in the file's history once it has ended, so WAIT
 * and CANCEL find it ended, like a job SUBMIT has not returned yet is not
 * found. A job run at submit may overtake a job of another file that
 * waits in the scheduler and has no fence relation to it; nothing orders
 * those anyway.
 *
 * This is the driver's one fast path: every other job goes through
 * drm_sched's run_job to the firmware thread. What it buys, measured in
 * the VM (tests/vm/run-in-vm: TCG, 2 vCPUs, on a host at load average
 * 9-11) on NPU.0, 4 interleaved rounds, medians: a NOP job's SUBMIT and
 * WAIT (bench-ioctl) take 3.9 us with it, 110 us (37-277) when run_job
 * instead ran short jobs on the scheduler's thread, 1.2 ms (1.1-3.3)
 * through the firmware thread; a sync inference of a 16-float Add+Relu
 * model (vnpu-bench) 0.4-1.6 ms with either or both (too noisy there to
 * rank them), 4.0 ms with neither. Both together measured as SUBMIT's
 * alone, so run_job's was dropped.
 */
static bool vnpu_job_can_run_now_locked(struct vnpu_job *job,
					struct vnpu_file *vfile)
{
	u32 i;

	lockdep_assert_held(&vfile->submit_lock);

	if (vfile->last_done && !dma_fence_is_signaled(vfile->last_done))
		return false;
	for (i = 0; i < job->num_in_fences; i++)
		if (!dma_fence_is_signaled(job->in_fences[i]))
			return false;
	for (i = 0; i < job->num_lock_objs; i++)
		if (!dma_resv_test_signaled(job->lock_objs[i]->resv,
					    dma_resv_usage_rw(job->lock_write[i])))
			return false;
	return job->is_short && vnpu_fw_claim(&job->vdev->fw, &job->fw);
}

/* Count the job in. */
static void vnpu_job_count(struct vnpu_job *job)
{
	atomic64_inc(&job->vdev->stats.jobs_submitted);
	atomic64_inc(&job->vfile->jobs_submitted);
}

/* Run a job that vnpu_job_can_run_now_locked() took the device for. */
static void vnpu_job_run_now_locked(struct vnpu_job *job,
				    struct vnpu_file *vfile)
{
	lockdep_assert_held(&vfile->submit_lock);

	if (job->hw_fence) {
		vnpu_job_init_hw_fence(job, vfile->fence_context,
				       ++vfile->fence_seqno);
		job->done = dma_fence_get(job->hw_fence);
	}
	vnpu_job_count(job);
	atomic64_inc(&vfile->jobs_run_at_submit);
	vnpu_fw_run_claimed(&job->vdev->fw, &job->fw);

	/* Nothing of the file is unfinished now. */
	dma_fence_put(vfile->last_done);
	vfile->last_done = NULL;
}

/*
 * Make the job a scheduler job: its dependencies, its hardware fence, and
 * its done fence, which goes to its BOs' reservation objects (locked) and
 * becomes the file's last one.
 */
static int vnpu_job_arm_locked(struct vnpu_job *job, struct vnpu_file *vfile)
{
	struct drm_sched_job *base;
	u32 i;
	int ret;

	lockdep_assert_held(&vfile->submit_lock);

	ret = vnpu_job_alloc_hw_fence(job);
	if (ret)
		return ret;
	job->sched = kzalloc(sizeof(*job->sched), GFP_KERNEL);
	if (!job->sched)
		return -ENOMEM;
	job->sched->job = job;
	base = &job->sched->base;
	ret = drm_sched_job_init(base, &vfile->entities[job->priority], vfile);
	if (ret)
		return ret;
	ret = vnpu_job_add_deps_locked(job, vfile);
	if (ret) {
		drm_sched_job_cleanup(base);
		return ret;
	}

	drm_sched_job_arm(base);
	job->done = dma_fence_get(&base->s_fence->finished);
	for (i = 0; i < job->num_lock_objs; i++)
		dma_resv_add_fence(job->lock_objs[i]->resv, job->done,
				   job->lock_write[i] ? DMA_RESV_USAGE_WRITE :
							DMA_RESV_USAGE_READ);
	dma_fence_put(vfile->last_done);
	vfile->last_done = dma_fence_get(job->done);
	vfile->last_priority = job->priority;
	return 0;
}

/*
 * Make the job findable by its id (the history's reference); the oldest
 * job of the history, in the same entry, is forgotten.
 */
static void vnpu_job_publish_locked(struct vnpu_job *job,
				    struct vnpu_file *vfile)
{
	struct vnpu_job **entry, *old;

	lockdep_assert_held(&vfile->submit_lock);

	entry = &vfile->history[job->id % DRM_VNPU_JOB_HISTORY];
	kref_get(&job->ref);
	spin_lock(&vfile->history_lock);
	old = *entry;
	*entry = job;
	spin_unlock(&vfile->history_lock);
	if (old)
		vnpu_job_put(old);
}

/* List a scheduler job until it is retired, and hand it to its entity. */
static void vnpu_job_queue(struct vnpu_job *job)
{
	struct vnpu_device *vdev = job->vdev;

	spin_lock(&vdev->job_lock);
	list_add_tail(&job->link, &vdev->job_list);
	vdev->jobs_in_flight++;
	spin_unlock(&vdev->job_lock);
	vnpu_job_count(job);
	drm_sched_entity_push_job(&job->sched->base);
}

/*
 * Submit a prepared job: run it now or arm it with its dependencies for
 * the scheduler. Returns with @*ran set when the job ran (the caller
 * retires it); otherwise it belongs to the scheduler, which may run and
 * free its buffers at any time.
 */
static int vnpu_job_push(struct vnpu_job *job, struct vnpu_file *vfile,
			 struct drm_syncobj *out_syncobj, u64 *id, bool *ran)
{
	struct ww_acquire_ctx ctx;
	int ret;

	/* A job without BOs (a stream of NOPs) needs no acquire context. */
	if (job->num_lock_objs) {
		ret = drm_gem_lock_reservations(job->lock_objs,
						job->num_lock_objs, &ctx);
		if (ret)
			return ret;
	}

	mutex_lock(&vfile->submit_lock);
	ret = vnpu_job_add_id_locked(job, vfile);
	if (ret)
		goto out_unlock;

	*ran = vnpu_job_can_run_now_locked(job, vfile);
	if (*ran) {
		vnpu_job_run_now_locked(job, vfile);
	} else {
		ret = vnpu_job_arm_locked(job, vfile);
		if (ret) {
			vnpu_job_remove_id_locked(job, vfile);
			goto out_unlock;
		}
	}
	*id = job->id;
	/* Unlock before the push: the job's buffers go with it. */
	if (job->num_lock_objs)
		drm_gem_unlock_reservations(job->lock_objs, job->num_lock_objs,
					    &ctx);
	if (out_syncobj)
		drm_syncobj_replace_fence(out_syncobj, job->done);
	vnpu_job_publish_locked(job, vfile);
	if (!*ran)
		vnpu_job_queue(job);
	mutex_unlock(&vfile->submit_lock);
	return 0;

out_unlock:
	if (job->num_lock_objs)
		drm_gem_unlock_reservations(job->lock_objs, job->num_lock_objs,
					    &ctx);
	mutex_unlock(&vfile->submit_lock);
	return ret;
}

/*
 * The result SUBMIT returns: that of a job that ended in it (what WAIT
 * would return), or none for a queued job (@job is then not touched).
 */
static void vnpu_submit_result(const struct vnpu_job *job, bool ended,
			       struct drm_vnpu_submit *args)
{
	args->out_flags = ended ? DRM_VNPU_SUBMIT_OUT_ENDED : 0;
	args->status = ended ? job->fw.status : 0;
	args->fault_cmd = ended ? job->fw.cur_cmd : 0;
	args->start_ns = ended ? job->fw.start_ns : 0;
	args->end_ns = ended ? job->fw.end_ns : 0;
}

int vnpu_ioctl_submit(struct drm_device *drm, void *data,
		      struct drm_file *file)
{
	struct vnpu_device *vdev = to_vnpu_device(drm);
	struct vnpu_file *vfile = file->driver_priv;
	struct drm_vnpu_submit *args = data;
	struct drm_syncobj *out_syncobj = NULL;
	struct vnpu_job *job;
	bool ran;
	int ret;

	ret = vnpu_submit_check_args(args);
	if (ret)
		return ret;
	if (vnpu_fail_alloc(vdev))
		return -ENOMEM;

	job = vnpu_job_alloc(vdev, vfile, args->priority);
	if (!job)
		return -ENOMEM;

	ret = vnpu_job_prepare(job, file, args);
	if (ret)
		goto err_put_job;
	ret = vnpu_job_get_in_fences(job, file, args);
	if (ret)
		goto err_put_job;

	if (args->out_syncobj) {
		out_syncobj = drm_syncobj_find(file, args->out_syncobj);
		if (!out_syncobj) {
			ret = -ENOENT;
			goto err_put_job;
		}
		/* Even a job run at submit needs a fence for it. */
		ret = vnpu_job_alloc_hw_fence(job);
		if (ret)
			goto err_put_syncobj;
	}

	/* Once pushed, the job belongs to the scheduler: do not touch it. */
	ret = vnpu_job_push(job, vfile, out_syncobj, &args->job_id, &ran);
	if (ret)
		goto err_put_syncobj;
	vnpu_submit_result(job, ran, args);
	if (ran) {
		/* It has ended: what free_job does for a scheduler job. */
		vnpu_job_release_buffers(job);
		vnpu_job_put(job);
	}

	if (out_syncobj)
		drm_syncobj_put(out_syncobj);
	return 0;

err_put_syncobj:
	if (out_syncobj)
		drm_syncobj_put(out_syncobj);
err_put_job:
	vnpu_job_release_buffers(job);
	vnpu_job_put(job);
	return ret;
}

/* The job with @id of the file, with a reference, or NULL. */
static struct vnpu_job *vnpu_job_lookup(struct vnpu_file *vfile, u64 id)
{
	struct vnpu_job *job = NULL;

	spin_lock(&vfile->history_lock);
	if (vfile->history)
		job = vfile->history[id % DRM_VNPU_JOB_HISTORY];
	if (job && job->id == id)
		kref_get(&job->ref);
	else
		job = NULL;
	spin_unlock(&vfile->history_lock);
	return job;
}

/*
 * How long WAIT polls the fence of a short job before it sleeps. A short
 * job ends within tens of microseconds on the firmware thread, usually
 * on another CPU; sleeping meanwhile lets this CPU go idle, and waking an
 * idle CPU costs more than the job itself (under QEMU's TCG, tens of
 * microseconds). A longer job is not polled: it would only take the CPU
 * from the tiles that run it.
 */
#define VNPU_WAIT_SPIN_NS (100 * NSEC_PER_USEC)

/*
 * Poll @fence until it signals, for at most VNPU_WAIT_SPIN_NS. A fence
 * that already signalled (a job run at submit) costs no clock read.
 */
static bool vnpu_fence_spin(struct dma_fence *fence, s64 deadline_ns)
{
	s64 end;

	if (dma_fence_is_signaled(fence))
		return true;
	end = min_t(s64, ktime_get_ns() + VNPU_WAIT_SPIN_NS, deadline_ns);
	do {
		if (dma_fence_is_signaled(fence))
			return true;
		cpu_relax();
	} while (!need_resched() && ktime_get_ns() < end);
	return false;
}

/*
 * Wait for @fence until the absolute CLOCK_MONOTONIC @deadline_ns, polling
 * it first with @spin (a short job's): jiffies are coarse, so never give
 * up before the deadline has really passed.
 */
static long vnpu_fence_wait_abs(struct dma_fence *fence, s64 deadline_ns,
				bool spin)
{
	long ret;

	if (spin ? vnpu_fence_spin(fence, deadline_ns) :
		   dma_fence_is_signaled(fence))
		return 1;
	do {
		ret = dma_fence_wait_timeout(fence, true,
					     drm_timeout_abs_to_jiffies(deadline_ns));
	} while (!ret && ktime_get_ns() < deadline_ns);
	return ret;
}

static void vnpu_job_wait_result(const struct vnpu_job *job,
				 struct drm_vnpu_wait *args)
{
	args->status = job->fw.status;
	args->start_ns = job->fw.start_ns;
	args->end_ns = job->fw.end_ns;
	args->fault_cmd = job->fw.cur_cmd;
}

/*
 * WAIT of a job that has ended (or is unknown) needs no reference: its
 * record cannot go while history_lock holds it in the history. Sets @ret
 * and returns true when done, false when the job must be waited for.
 */
static bool vnpu_job_wait_ended(struct vnpu_file *vfile,
				struct drm_vnpu_wait *args, int *ret)
{
	struct vnpu_job *job = NULL;
	bool ended = true;

	spin_lock(&vfile->history_lock);
	if (vfile->history)
		job = vfile->history[args->job_id % DRM_VNPU_JOB_HISTORY];
	if (!job || job->id != args->job_id) {
		*ret = -ENOENT;
	} else if (!job->done ||
		   test_bit(DMA_FENCE_FLAG_SIGNALED_BIT, &job->done->flags)) {
		/* The result was written before the fence signalled. */
		smp_rmb();
		vnpu_job_wait_result(job, args);
		*ret = 0;
	} else {
		ended = false;
	}
	spin_unlock(&vfile->history_lock);
	return ended;
}

int vnpu_ioctl_wait(struct drm_device *drm, void *data,
		    struct drm_file *file)
{
	struct vnpu_file *vfile = file->driver_priv;
	struct drm_vnpu_wait *args = data;
	struct vnpu_job *job;
	long lret;
	int ret = 0;

	if (args->flags || args->pad)
		return -EINVAL;

	if (vnpu_job_wait_ended(vfile, args, &ret))
		return ret;

	job = vnpu_job_lookup(vfile, args->job_id);
	if (!job)
		return -ENOENT;

	/* A job without a done fence ran at submit: it has ended. */
	lret = job->done ? vnpu_fence_wait_abs(job->done, args->timeout_ns,
					       job->is_short) : 1;
	if (lret < 0)
		ret = lret;
	else if (!lret)
		ret = -ETIMEDOUT;
	else
		vnpu_job_wait_result(job, args);
	vnpu_job_put(job);
	return ret;
}

int vnpu_ioctl_cancel(struct drm_device *drm, void *data,
		      struct drm_file *file)
{
	struct vnpu_file *vfile = file->driver_priv;
	struct drm_vnpu_cancel *args = data;
	struct vnpu_job *job;
	int ret;

	if (args->flags || args->pad)
		return -EINVAL;

	job = vnpu_job_lookup(vfile, args->job_id);
	if (!job)
		return -ENOENT;
	ret = vnpu_fw_cancel(&job->fw) ? 0 : -EBUSY;
	vnpu_job_put(job);
	return ret;
}

/**
 * vnpu_jobs_cancel_file() - a closing file's jobs that did not start will
 * not start
 * @vfile: the file
 */
void vnpu_jobs_cancel_file(struct vnpu_file *vfile)
{
	u32 i;

	spin_lock(&vfile->history_lock);
	for (i = 0; vfile->history && i < DRM_VNPU_JOB_HISTORY; i++)
		if (vfile->history[i])
			vnpu_fw_cancel(&vfile->history[i]->fw);
	spin_unlock(&vfile->history_lock);
}

/**
 * vnpu_jobs_release_file() - drop the job history of a closed file
 * @vfile: the file
 */
void vnpu_jobs_release_file(struct vnpu_file *vfile)
{
	u32 i;

	for (i = 0; vfile->history && i < DRM_VNPU_JOB_HISTORY; i++)
		if (vfile->history[i])
			vnpu_job_put(vfile->history[i]);
	kvfree(vfile->history);
	vfile->history = NULL;
}

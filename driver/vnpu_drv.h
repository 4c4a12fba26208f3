/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __VNPU_DRV_H__
#define __VNPU_DRV_H__

#include <linux/atomic.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include <drm/drm_device.h>
#include <drm/drm_file.h>
#include <drm/gpu_scheduler.h>

#include "vnpu_fw.h"

#define VNPU_MAX_DEVICES 8

struct vnpu_job;

/* One scheduler entity per priority of enum drm_vnpu_priority. */
#define VNPU_NUM_PRIORITIES 3

/* Busy-time samples over the last second, for the utilization figure. */
#define VNPU_UTIL_SAMPLES 10

/**
 * struct vnpu_counters - device-lifetime figures (telemetry, debugfs)
 * @jobs_submitted: jobs queued by SUBMIT
 * @jobs_completed: jobs that ended %DRM_VNPU_JOB_OK
 * @jobs_failed: jobs that ended %DRM_VNPU_JOB_FAULT
 * @jobs_timedout: jobs that ended %DRM_VNPU_JOB_TIMEOUT
 * @jobs_cancelled: jobs that ended %DRM_VNPU_JOB_CANCELLED
 * @busy_ns: nanoseconds the device spent running jobs
 * @resets: device resets
 * @bytes_uploaded: bytes copied by BO_UPLOAD
 * @bytes_downloaded: bytes copied by BO_DOWNLOAD
 * @bos: live BOs (created and imported)
 * @clients: open files
 * @files: file records, of open files and of closed ones jobs still hold
 * @jobs: job records allocated, spare ones included (leak checks)
 */
struct vnpu_counters {
	atomic64_t jobs_submitted;
	atomic64_t jobs_completed;
	atomic64_t jobs_failed;
	atomic64_t jobs_timedout;
	atomic64_t jobs_cancelled;
	atomic64_t busy_ns;
	atomic64_t resets;
	atomic64_t bytes_uploaded;
	atomic64_t bytes_downloaded;
	atomic_t bos;
	atomic_t clients;
	atomic_t files;
	atomic_t jobs;
};

/**
 * struct vnpu_device - one simulated NPU
 * @drm: the DRM device, embedded; reach the vnpu_device with to_vnpu_device()
 * @index: device index, 0..num_devices-1
 * @tiles: compute tiles (tile threads) of the simulated hardware
 * @mem_limit: bytes of BO memory the device may hold
 * @mem_used: bytes of BO memory charged now
 * @fail_alloc: debugfs knob: fail this many allocations with -ENOMEM
 * @stats: counters
 * @bo_lock: protects @bo_list
 * @bo_list: every live &struct vnpu_bo of the device (debugfs)
 * @job_lock: protects @job_list
 * @job_list: jobs submitted and not yet freed by the scheduler
 * @jobs_in_flight: entries of @job_list; @jobs_idle waits for 0
 * @jobs_idle: woken when @jobs_in_flight drops to 0
 * @file_lock: protects @file_list
 * @file_list: open &struct vnpu_file of the device
 * @sched: the scheduler of the device's single queue
 * @sched_name: name of @sched
 * @fence_context: dma-fence context of the hardware fences
 * @fence_seqno: last hardware fence seqno
 * @fence_lock: lock of every hardware fence
 * @fw: the simulated hardware and its firmware
 * @util_work: samples the busy time every 100 ms
 * @util_lock: protects @util_t, @util_busy and @util_pos
 * @util_t: sample times (CLOCK_MONOTONIC ns)
 * @util_busy: device busy time at each sample
 * @util_pos: the oldest sample, overwritten next
 */
struct vnpu_device {
	struct drm_device drm;
	int index;
	u32 tiles;
	u64 mem_limit;
	atomic64_t mem_used;
	atomic_t fail_alloc;
	struct vnpu_counters stats;

	/* protects bo_list */
	struct mutex bo_lock;
	struct list_head bo_list;

	/* protects job_list and jobs_in_flight */
	spinlock_t job_lock;
	struct list_head job_list;
	unsigned int jobs_in_flight;
	wait_queue_head_t jobs_idle;

	/* protects file_list */
	struct mutex file_lock;
	struct list_head file_list;

	struct drm_gpu_scheduler sched;
	char sched_name[16];
	u64 fence_context;
	atomic64_t fence_seqno;
	/* lock of every hardware fence */
	spinlock_t fence_lock;

	struct vnpu_fw fw;

	struct delayed_work util_work;
	/* protects util_t, util_busy and util_pos */
	spinlock_t util_lock;
	u64 util_t[VNPU_UTIL_SAMPLES];
	u64 util_busy[VNPU_UTIL_SAMPLES];
	u32 util_pos;
};

static inline struct vnpu_device *to_vnpu_device(struct drm_device *drm)
{
	return container_of(drm, struct vnpu_device, drm);
}

/**
 * struct vnpu_file - per open file state; refcounted because its jobs can
 * outlive the file
 * @ref: reference count (the file and each of its jobs)
 * @vdev: the device
 * @client_id: unique id of the client (fdinfo drm-client-id)
 * @pid: thread group id of the process that opened the file
 * @comm: its command name
 * @link: entry in &vnpu_device.file_list
 * @entities: one scheduler entity per priority
 * @history_lock: protects the entries of @history (SUBMIT changes them
 *	with @submit_lock held too)
 * @history: the file's last %DRM_VNPU_JOB_HISTORY jobs, each holding a
 *	reference, at job id % %DRM_VNPU_JOB_HISTORY; allocated by the first
 *	SUBMIT. Ids are consecutive: a new job's entry holds the job it makes
 *	forgotten.
 * @submit_lock: serializes SUBMIT: protects @next_id, @last_done,
 *	@last_priority and @fence_seqno and the order of jobs pushed to the
 *	entities or run at submit
 * @next_id: id of the next job
 * @last_done: done fence of the last job submitted
 * @last_priority: priority of that job
 * @fence_context: dma-fence context of the hardware fences of the jobs
 *	run at submit (their done fences)
 * @fence_seqno: last seqno in @fence_context
 * @busy_ns: device time of this file's jobs
 * @jobs_submitted: jobs this file submitted
 * @jobs_run_at_submit: of those, the jobs that ran in SUBMIT itself
 * @spare_job: a freed job kept for the file's next SUBMIT, or NULL: reusing
 *	it costs less than a slab round trip, which zeroes fresh memory
 */
struct vnpu_file {
	struct kref ref;
	struct vnpu_device *vdev;
	u64 client_id;
	pid_t pid;
	char comm[TASK_COMM_LEN];
	struct list_head link;
	struct drm_sched_entity entities[VNPU_NUM_PRIORITIES];
	/* protects the entries of history */
	spinlock_t history_lock;
	struct vnpu_job **history;
	/* serializes SUBMIT: next_id, last_done, last_priority, fence_seqno */
	struct mutex submit_lock;
	u64 next_id;
	struct dma_fence *last_done;
	u32 last_priority;
	u64 fence_context;
	u64 fence_seqno;
	atomic64_t busy_ns;
	atomic64_t jobs_submitted;
	atomic64_t jobs_run_at_submit;
	struct vnpu_job *spare_job;
};

void vnpu_file_put(struct vnpu_file *vfile);

/* Fault injection: true when the next allocation must fail. */
static inline bool vnpu_fail_alloc(struct vnpu_device *vdev)
{
	return atomic_dec_if_positive(&vdev->fail_alloc) >= 0;
}

/* vnpu_drv.c: the device table, for netlink */
void vnpu_device_table_lock(void);
void vnpu_device_table_unlock(void);
struct vnpu_device *vnpu_device_lookup(u32 index);

/* vnpu_gem.c */
struct drm_gem_object *vnpu_gem_create_object(struct drm_device *drm,
					      size_t size);
int vnpu_ioctl_bo_create(struct drm_device *drm, void *data,
			 struct drm_file *file);
int vnpu_ioctl_bo_info(struct drm_device *drm, void *data,
		       struct drm_file *file);
int vnpu_ioctl_bo_upload(struct drm_device *drm, void *data,
			 struct drm_file *file);
int vnpu_ioctl_bo_download(struct drm_device *drm, void *data,
			   struct drm_file *file);

/* vnpu_userptr.c */
int vnpu_ioctl_bo_userptr(struct drm_device *drm, void *data,
			  struct drm_file *file);

/* vnpu_job.c */
int vnpu_ioctl_submit(struct drm_device *drm, void *data,
		      struct drm_file *file);
int vnpu_ioctl_wait(struct drm_device *drm, void *data,
		    struct drm_file *file);
int vnpu_ioctl_cancel(struct drm_device *drm, void *data,
		      struct drm_file *file);
void vnpu_jobs_cancel_file(struct vnpu_file *vfile);
void vnpu_jobs_release_file(struct vnpu_file *vfile);

/* vnpu_sched.c */
int vnpu_sched_init(struct vnpu_device *vdev, unsigned int timeout_ms);
void vnpu_sched_fini(struct vnpu_device *vdev);
u64 vnpu_device_busy_ns(struct vnpu_device *vdev);
u32 vnpu_device_utilization(struct vnpu_device *vdev);

/* vnpu_netlink.c */
int vnpu_nl_init(void);
void vnpu_nl_fini(void);
void vnpu_nl_event(struct vnpu_device *vdev, u8 cmd, struct vnpu_file *vfile,
		   u64 job_id, const char *reason);

/* vnpu_debugfs.c */
void vnpu_debugfs_init(struct drm_minor *minor);

#endif /* __VNPU_DRV_H__ */

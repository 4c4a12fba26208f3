// SPDX-License-Identifier: GPL-2.0
/**
 * DOC: scheduler backend, timeouts and resets
 *
 * Each device has one drm_gpu_scheduler in front of its firmware queue.
 * run_job hands a job to the firmware queue and returns its hardware
 * fence, which the firmware thread signals when the job ends. A job that
 * ran in SUBMIT, the driver's one fast path (see vnpu_job.c), never gets
 * here. When the oldest job
 * has run a whole timeout of its own (from its start, not from when the
 * scheduler's timer began) without progress (no part or command
 * completed), it is hung and the device is reset: the firmware abandons
 * that job and no other, it ends %DRM_VNPU_JOB_TIMEOUT, a devcoredump
 * describes what ran, and the other jobs, already queued in the firmware
 * or not, go on.
 */

#include <linux/devcoredump.h>
#include <linux/dma-fence.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/vmalloc.h>
#include <linux/vnpu_netlink.h>

#include <drm/drm_print.h>
#include <drm/vnpu_drm.h>

#include "vnpu_drv.h"
#include "vnpu_exec.h"
#include "vnpu_job.h"

/* Jobs the firmware queue holds at most. */
#define VNPU_HW_QUEUE_DEPTH 64
#define VNPU_COREDUMP_SIZE SZ_16K
#define VNPU_UTIL_PERIOD_MS 100

static const char *vnpu_fence_get_driver_name(struct dma_fence *fence)
{
	return "vnpu";
}

static const char *vnpu_fence_get_timeline_name(struct dma_fence *fence)
{
	return "vnpu-hw";
}

static const struct dma_fence_ops vnpu_hw_fence_ops = {
	.get_driver_name = vnpu_fence_get_driver_name,
	.get_timeline_name = vnpu_fence_get_timeline_name,
};

/**
 * vnpu_job_init_hw_fence() - the job goes to the device: initialize its
 * hardware fence
 * @job: the job
 * @context: the fence context, the device's for the jobs the scheduler
 *	hands over, the file's for those run at submit
 * @seqno: the job's place in @context: the fences of a context signal in
 *	the order of their seqnos
 */
void vnpu_job_init_hw_fence(struct vnpu_job *job, u64 context, u64 seqno)
{
	dma_fence_init(job->hw_fence, &vnpu_hw_fence_ops, &job->vdev->fence_lock,
		       context, seqno);
	job->fw.fence = job->hw_fence;
	job->pushed = true;
}

static struct dma_fence *vnpu_sched_run_job(struct drm_sched_job *sched_job)
{
	struct vnpu_job *job = to_vnpu_job(sched_job);
	struct vnpu_device *vdev = job->vdev;

	/* After a reset, drm_sched_resubmit_jobs() runs a queued job again. */
	if (!job->pushed) {
		vnpu_job_init_hw_fence(job, vdev->fence_context,
				       atomic64_inc_return(&vdev->fence_seqno));
		vnpu_fw_push(&vdev->fw, &job->fw);
	}
	return dma_fence_get(job->hw_fence);
}

static int vnpu_coredump_print(struct vnpu_device *vdev, struct vnpu_job *bad,
			       char *buf, size_t size)
{
	struct vnpu_counters *s = &vdev->stats;
	const struct vnpu_cmd_header *cmd = NULL;
	u32 i = 0, cur = READ_ONCE(bad->fw.cur_cmd);
	int n;

	n = scnprintf(buf, size,
		      "vnpu devcoredump\ndevice: %d\ntiles: %u\nreason: job timeout\n"
		      "reset: %lld\nclient: %llu\npid: %d\ncomm: %s\njob: %llu\n"
		      "priority: %u\ncommands: %u\nrunning command: %u\n",
		      vdev->index, vdev->tiles,
		      (long long)atomic64_read(&s->resets),
		      bad->vfile->client_id, bad->vfile->pid, bad->vfile->comm,
		      bad->id, bad->priority, bad->fw.num_cmds, cur);
	if (!bad->stream)
		return n;
	while ((cmd = vnpu_stream_next(bad->stream, bad->fw.stream_size, cmd)) &&
	       n < size - 64) {
		n += scnprintf(buf + n, size - n, "cmd %u: opcode %u size %u%s\n",
			       i, cmd->opcode, cmd->size,
			       i == cur ? " <- running" : "");
		i++;
	}
	return n;
}

static void vnpu_coredump(struct vnpu_device *vdev, struct vnpu_job *bad)
{
	char *buf;
	int n;

	buf = vzalloc(VNPU_COREDUMP_SIZE);
	if (!buf)
		return;
	n = vnpu_coredump_print(vdev, bad, buf, VNPU_COREDUMP_SIZE);
	dev_coredumpv(vdev->drm.dev, buf, n, GFP_KERNEL);
}

/* Reset the device to abandon @bad, found hung, if it still runs. */
static void vnpu_reset(struct vnpu_device *vdev, struct vnpu_job *bad)
{
	if (!vnpu_fw_reset(&vdev->fw, &bad->fw))
		return;
	atomic64_inc(&vdev->stats.resets);
	dev_info_ratelimited(vdev->drm.dev,
			     "job %llu of client %llu timed out: device reset\n",
			     bad->id, bad->vfile->client_id);
	vnpu_coredump(vdev, bad);
	vnpu_nl_event(vdev, VNPU_NL_CMD_JOB_TIMEOUT, bad->vfile, bad->id,
		      "job made no progress within the timeout");
	vnpu_nl_event(vdev, VNPU_NL_CMD_DEVICE_RESET, bad->vfile, bad->id,
		      "job timeout");
}

/*
 * How long until @sjob, the oldest job on the hardware, counts as hung,
 * in ns; 0 when it is hung now. A job is hung when it started and
 * completed no part or command for a whole timeout of its own running
 * time: counted from its start, or from the last check that saw it
 * progress. The scheduler's timer says nothing of that: it runs from
 * when the job became the oldest, which may be long before the device
 * began it (a firmware thread that did not get a CPU), so a job that has
 * not started is never hung, and neither is the job after a hung one.
 */
static u64 vnpu_sched_job_hang_in(struct vnpu_sched_job *sjob, u64 timeout_ns)
{
	struct vnpu_job *job = sjob->job;
	u64 start = vnpu_fw_job_started(&job->fw);
	u64 progress = atomic64_read(&job->fw.progress);
	u64 now = ktime_get_ns(), since;

	if (dma_fence_is_signaled(job->hw_fence) || !start)
		return timeout_ns;
	if (progress != sjob->seen_progress) {
		sjob->seen_progress = progress;
		sjob->seen_ns = now;
		return timeout_ns;
	}
	since = max(start, sjob->seen_ns);
	if (now - since >= timeout_ns)
		return 0;
	return timeout_ns - (now - since);
}

static enum drm_gpu_sched_stat
vnpu_sched_timedout_job(struct drm_sched_job *sched_job)
{
	struct vnpu_sched_job *sjob = to_vnpu_sched_job(sched_job);
	struct vnpu_job *job = sjob->job;
	struct vnpu_device *vdev = job->vdev;
	struct drm_gpu_scheduler *sched = &vdev->sched;
	u64 hang_in;

	/* Puts the job back at the head of the pending list. */
	drm_sched_stop(sched, sched_job);

	hang_in = vnpu_sched_job_hang_in(sjob, jiffies_to_nsecs(sched->timeout));
	if (!hang_in)
		vnpu_reset(vdev, job);

	/*
	 * Only @job was abandoned, if hung: the other jobs, queued in the
	 * firmware or not, go on. Each gets its hardware fence back.
	 */
	drm_sched_resubmit_jobs(sched);
	drm_sched_start(sched, true);
	/* Look again when a running job would have stalled a whole timeout. */
	if (hang_in)
		drm_sched_resume_timeout(sched, max(nsecs_to_jiffies(hang_in), 1UL));
	return DRM_GPU_SCHED_STAT_NOMINAL;
}

static void vnpu_sched_free_job(struct drm_sched_job *sched_job)
{
	struct vnpu_job *job = to_vnpu_job(sched_job);

	drm_sched_job_cleanup(sched_job);
	vnpu_job_retire(job);
}

static const struct drm_sched_backend_ops vnpu_sched_ops = {
	.run_job = vnpu_sched_run_job,
	.timedout_job = vnpu_sched_timedout_job,
	.free_job = vnpu_sched_free_job,
};

/* Called by the firmware thread when a job ends, before its fence signals. */
static void vnpu_sched_job_done(struct vnpu_fw *fw, struct vnpu_fw_job *fw_job)
{
	struct vnpu_device *vdev = container_of(fw, struct vnpu_device, fw);
	struct vnpu_job *job = container_of(fw_job, struct vnpu_job, fw);
	struct vnpu_counters *s = &vdev->stats;
	u64 busy = fw_job->end_ns - fw_job->start_ns;

	atomic64_add(busy, &s->busy_ns);
	atomic64_add(busy, &job->vfile->busy_ns);
	switch (fw_job->status) {
	case DRM_VNPU_JOB_OK:
		atomic64_inc(&s->jobs_completed);
		break;
	case DRM_VNPU_JOB_FAULT:
		atomic64_inc(&s->jobs_failed);
		vnpu_nl_event(vdev, VNPU_NL_CMD_JOB_FAULT, job->vfile, job->id,
			      "device fault");
		break;
	case DRM_VNPU_JOB_TIMEOUT:
		atomic64_inc(&s->jobs_timedout);
		break;
	default:
		atomic64_inc(&s->jobs_cancelled);
		break;
	}
}

/**
 * vnpu_device_busy_ns() - device time spent on jobs, the running one
 * included
 * @vdev: the device
 *
 * Return: nanoseconds of CLOCK_MONOTONIC the device has run jobs since it
 * was created.
 */
u64 vnpu_device_busy_ns(struct vnpu_device *vdev)
{
	u64 busy = atomic64_read(&vdev->stats.busy_ns);
	u64 start = vnpu_fw_running_since(&vdev->fw), now = ktime_get_ns();

	if (start && now > start)
		busy += now - start;
	return busy;
}

/**
 * vnpu_device_utilization() - busy share of the last second, in
 * thousandths
 * @vdev: the device
 *
 * Return: 0 (idle) to 1000 (busy all the time).
 */
u32 vnpu_device_utilization(struct vnpu_device *vdev)
{
	u64 busy = vnpu_device_busy_ns(vdev), now = ktime_get_ns(), t0, b0;

	spin_lock(&vdev->util_lock);
	t0 = vdev->util_t[vdev->util_pos];
	b0 = vdev->util_busy[vdev->util_pos];
	spin_unlock(&vdev->util_lock);

	if (now <= t0 || busy <= b0)
		return 0;
	return min_t(u64, div64_u64((busy - b0) * 1000, now - t0), 1000);
}

static void vnpu_util_sample(struct work_struct *work)
{
	struct vnpu_device *vdev = container_of(to_delayed_work(work),
						struct vnpu_device, util_work);
	u64 busy = vnpu_device_busy_ns(vdev);

	spin_lock(&vdev->util_lock);
	vdev->util_t[vdev->util_pos] = ktime_get_ns();
	vdev->util_busy[vdev->util_pos] = busy;
	vdev->util_pos = (vdev->util_pos + 1) % VNPU_UTIL_SAMPLES;
	spin_unlock(&vdev->util_lock);
	schedule_delayed_work(&vdev->util_work,
			      msecs_to_jiffies(VNPU_UTIL_PERIOD_MS));
}

static void vnpu_util_init(struct vnpu_device *vdev)
{
	u64 now = ktime_get_ns();
	int i;

	spin_lock_init(&vdev->util_lock);
	for (i = 0; i < VNPU_UTIL_SAMPLES; i++)
		vdev->util_t[i] = now;
	INIT_DELAYED_WORK(&vdev->util_work, vnpu_util_sample);
	schedule_delayed_work(&vdev->util_work,
			      msecs_to_jiffies(VNPU_UTIL_PERIOD_MS));
}

/**
 * vnpu_sched_init() - start the simulated hardware and its scheduler
 * @vdev: the device
 * @timeout_ms: how long a job may run without progress
 *
 * Return: 0 or a negative errno.
 */
int vnpu_sched_init(struct vnpu_device *vdev, unsigned int timeout_ms)
{
	struct drm_sched_init_args args = {
		.ops = &vnpu_sched_ops,
		.credit_limit = VNPU_HW_QUEUE_DEPTH,
		.hang_limit = 0,
		.timeout = msecs_to_jiffies(timeout_ms),
		.name = vdev->sched_name,
		.dev = vdev->drm.dev,
	};
	int ret;

	snprintf(vdev->sched_name, sizeof(vdev->sched_name), "vnpu%d",
		 vdev->index);
	spin_lock_init(&vdev->fence_lock);
	vdev->fence_context = dma_fence_context_alloc(1);

	ret = vnpu_fw_init(&vdev->fw, vdev->sched_name, vdev->tiles,
			   vnpu_sched_job_done);
	if (ret)
		return ret;

	ret = drm_sched_init(&vdev->sched, &args);
	if (ret) {
		vnpu_fw_fini(&vdev->fw);
		return ret;
	}
	vnpu_util_init(vdev);
	return 0;
}

/**
 * vnpu_sched_fini() - end every job as CANCELLED, then stop the scheduler
 * and the hardware
 * @vdev: the device; no file is open any more
 */
void vnpu_sched_fini(struct vnpu_device *vdev)
{
	cancel_delayed_work_sync(&vdev->util_work);
	vnpu_fw_shutdown(&vdev->fw);
	wait_event_idle(vdev->jobs_idle, !READ_ONCE(vdev->jobs_in_flight));
	drm_sched_fini(&vdev->sched);
	vnpu_fw_fini(&vdev->fw);
}

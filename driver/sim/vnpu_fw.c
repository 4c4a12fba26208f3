// SPDX-License-Identifier: GPL-2.0
/**
 * DOC: simulated hardware and firmware
 *
 * The device is a queue of jobs run strictly in order by one firmware
 * thread. The firmware walks a job's validated command stream; each
 * command is split into parts (vnpu_exec_parts()) that the device's tiles,
 * one kernel thread each, take from a shared counter. A part runs between
 * kernel_fpu_begin() and kernel_fpu_end() and is sized so that one FPU
 * section stays short; where the engine pauses inside a part (between the
 * depth slices of GEMM and CONV, every 2^14 element reads of a long row),
 * a section that has run fpu_section_us ends and a new one starts. The
 * sections are counted and timed, the longest one kept with the command
 * that ran it (vnpu_fw_fpu_read()). When a job ends the firmware signals
 * its hardware fence, which is what an interrupt handler would do on real
 * hardware.
 *
 * A short job (vnpu_fw_job_is_short()) may instead run on the thread that
 * submits it to an idle device (vnpu_fw_claim(), vnpu_fw_run_claimed()):
 * the SUBMIT ioctl, the driver's one fast path (vnpu_job.c). It is then
 * the device's running job like any other, and the firmware thread
 * starts nothing before it ends.
 *
 * A reset abandons the running job (it ends TIMEOUT) at the next command
 * or part boundary; SPIN commands and injected hangs wait for that reset.
 */

#include <linux/bitfield.h>
#include <linux/dma-fence.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include <asm/cpufeature.h>
#include <asm/fpu/api.h>
#include <asm/processor.h>

#include <drm/vnpu_drm.h>

#include "vnpu_exec.h"
#include "vnpu_fw.h"

/**
 * struct vnpu_fw_work - one command being run by the tiles
 * @cmd: the command
 * @slot_base: kernel address of each slot's BO
 * @num_parts: parts of @cmd
 * @job: the job it belongs to (for aborts)
 * @next_part: the next part a tile takes
 * @error: first error a part returned
 * @busy_tiles: tiles still working on @cmd
 * @done: completed by the last tile
 */
struct vnpu_fw_work {
	const struct vnpu_cmd_header *cmd;
	void *const *slot_base;
	u32 num_parts;
	struct vnpu_fw_job *job;
	atomic_t next_part;
	atomic_t error;
	atomic_t busy_tiles;
	struct completion done;
};

static bool vnpu_fw_abandoned(struct vnpu_fw *fw, struct vnpu_fw_job *job)
{
	return READ_ONCE(fw->abort) == job || READ_ONCE(fw->dead);
}

/*
 * The longest FPU section is kept with the command that ran it in one
 * word, ns below, command above, so that a new maximum replaces both at
 * once: the opcode and, for a LAYER, its layer op (8 bits each). 2^48 ns
 * is three days; a longer section saturates.
 */
#define VNPU_FW_FPU_NS_BITS 48
#define VNPU_FW_FPU_NS_MASK GENMASK_ULL(VNPU_FW_FPU_NS_BITS - 1, 0)
#define VNPU_FW_FPU_OPCODE GENMASK_ULL(63, 56)
#define VNPU_FW_FPU_LAYER_OP GENMASK_ULL(55, 48)

static u64 vnpu_fw_fpu_pack(const struct vnpu_cmd_header *cmd, u64 ns)
{
	u32 layer_op = 0;

	if (cmd->opcode == VNPU_CMD_LAYER)
		layer_op = container_of(cmd, struct vnpu_cmd_layer, hdr)->op;
	return FIELD_PREP(VNPU_FW_FPU_OPCODE, min_t(u32, cmd->opcode, 0xff)) |
	       FIELD_PREP(VNPU_FW_FPU_LAYER_OP, min_t(u32, layer_op, 0xff)) |
	       min_t(u64, ns, VNPU_FW_FPU_NS_MASK);
}

/* Count an FPU section of @ns that ran a part of @cmd. */
static void vnpu_fw_fpu_account(struct vnpu_fw *fw,
				const struct vnpu_cmd_header *cmd, u64 ns)
{
	struct vnpu_fw_fpu_stats *st = &fw->fpu;
	s64 max = atomic64_read(&st->max);

	atomic64_inc(&st->sections);
	atomic64_add(ns, &st->total_ns);
	/*
	 * The successful cmpxchg is fully ordered: a reader that sees the new
	 * maximum sees the total that holds it (vnpu_fw_fpu_read()).
	 */
	do {
		if (ns <= ((u64)max & VNPU_FW_FPU_NS_MASK))
			return;
	} while (!atomic64_try_cmpxchg(&st->max, &max,
				       vnpu_fw_fpu_pack(cmd, ns)));
}

/*
 * A part may end its FPU section where the engine pauses (struct
 * vnpu_eng_ctx's pause) once the section has run this long: a part over a
 * huge depth or row is then several short sections, not one long one. 0
 * ends it at every pause.
 */
static unsigned int fpu_section_us = 500;
module_param(fpu_section_us, uint, 0644);
MODULE_PARM_DESC(fpu_section_us, "A part's FPU section ends at the engine's next pause point after this many microseconds (default 500; 0: at every pause point)");

/**
 * struct vnpu_tile_section - the FPU section a tile is in
 * @fw: the firmware
 * @cmd: the command whose part runs in it
 * @start: when it began (ns)
 */
struct vnpu_tile_section {
	struct vnpu_fw *fw;
	const struct vnpu_cmd_header *cmd;
	u64 start;
};

/*
 * The engine's pause point (struct vnpu_eng_ctx): the section, if long
 * enough, ends and is counted, the scheduler may run something else, and
 * a new section starts. Preemption is off in a section, so that the
 * section's figure is the time it stays off.
 */
static void vnpu_tile_pause(void *arg)
{
	struct vnpu_tile_section *sec = arg;
	u64 now = ktime_get_ns();

	if (now - sec->start < (u64)READ_ONCE(fpu_section_us) * NSEC_PER_USEC)
		return;
	kernel_fpu_end();
	preempt_enable();
	vnpu_fw_fpu_account(sec->fw, sec->cmd, now - sec->start);
	cond_resched();
	preempt_disable();
	sec->start = ktime_get_ns();
	kernel_fpu_begin();
}

static void vnpu_tile_run(struct vnpu_tile *tile, struct vnpu_fw_work *work)
{
	struct vnpu_fw *fw = tile->fw;
	struct vnpu_tile_section sec = { .fw = fw, .cmd = work->cmd };
	struct vnpu_eng_ctx ctx = {
		.features = fw->features,
		.scratch = tile->scratch,
		.scratch_size = tile->scratch_size,
		.pause = vnpu_tile_pause,
		.pause_arg = &sec,
	};
	u64 end;
	u32 part;
	int ret;

	/* A new name for this run, so that its parts may share the scratch. */
	if (!++tile->epoch)
		tile->epoch = 1;
	ctx.epoch = tile->epoch;

	for (;;) {
		part = atomic_inc_return(&work->next_part) - 1;
		if (part >= work->num_parts)
			break;
		if (atomic_read(&work->error) || vnpu_fw_abandoned(fw, work->job))
			break;

		/*
		 * The clock is read with preemption off, so the section's
		 * figure is the time preemption stays off for it: a
		 * preemption just before or after it does not count.
		 */
		preempt_disable();
		sec.start = ktime_get_ns();
		kernel_fpu_begin();
		ret = vnpu_exec_part(work->cmd, work->slot_base, part,
				     work->num_parts, &ctx);
		kernel_fpu_end();
		end = ktime_get_ns();
		preempt_enable();
		vnpu_fw_fpu_account(fw, work->cmd, end - sec.start);

		if (ret)
			atomic_cmpxchg(&work->error, 0, -EIO);
		atomic64_inc(&work->job->progress);
		cond_resched();
	}
}

static unsigned long vnpu_tile_work_seq(struct vnpu_fw *fw)
{
	/* Pairs with the release in vnpu_fw_exec_cmd(): fw->work is set. */
	return smp_load_acquire(&fw->work_seq);
}

static int vnpu_tile_thread(void *data)
{
	struct vnpu_tile *tile = data;
	struct vnpu_fw *fw = tile->fw;
	unsigned long seen = 0;

	while (!kthread_should_stop()) {
		struct vnpu_fw_work *work;

		wait_event_interruptible(fw->tile_wq, kthread_should_stop() ||
					 vnpu_tile_work_seq(fw) != seen);
		if (kthread_should_stop())
			break;
		seen = vnpu_tile_work_seq(fw);
		work = READ_ONCE(fw->work);
		vnpu_tile_run(tile, work);
		if (atomic_dec_and_test(&work->busy_tiles))
			complete(&work->done);
	}
	return 0;
}

/* Every tile gets scratch for the largest part it may run. */
static int vnpu_fw_grow_scratch(struct vnpu_fw *fw, u64 size)
{
	u32 i;

	if (size > SIZE_MAX)
		return -ENOMEM;
	for (i = 0; i < fw->num_tiles; i++) {
		struct vnpu_tile *tile = &fw->tiles[i];

		if (tile->scratch_size >= size)
			continue;
		kvfree(tile->scratch);
		tile->scratch_size = 0;
		tile->scratch = kvmalloc(size, GFP_KERNEL);
		if (!tile->scratch)
			return -ENOMEM;
		tile->scratch_size = size;
	}
	return 0;
}

/*
 * Run one command. @here: on the calling thread in one part (a short job
 * run by the thread that submitted it), not split across the tiles.
 */
static int vnpu_fw_exec_cmd(struct vnpu_fw *fw, struct vnpu_fw_job *job,
			    const struct vnpu_cmd_header *cmd, bool here)
{
	struct vnpu_fw_work work = {
		.cmd = cmd,
		.slot_base = job->slot_base,
		.job = job,
	};
	int ret;

	if (cmd->opcode == VNPU_CMD_NOP)
		return 0;

	work.num_parts = here ? 1 :
		vnpu_exec_parts(cmd,
				fw->num_tiles * VNPU_EXEC_FW_PARTS_PER_TILE,
				VNPU_EXEC_FW_CHUNK_COST, fw->features);
	ret = vnpu_fw_grow_scratch(fw, vnpu_exec_scratch(cmd, work.num_parts,
							 fw->features));
	if (ret)
		return ret;

	atomic_set(&work.next_part, 0);
	atomic_set(&work.error, 0);

	/*
	 * One part: run it here, on tile 0's scratch (the tiles are idle:
	 * they only work for the running job, and this is it).
	 */
	if (work.num_parts == 1) {
		vnpu_tile_run(&fw->tiles[0], &work);
		return atomic_read(&work.error);
	}

	atomic_set(&work.busy_tiles, fw->num_tiles);
	init_completion(&work.done);

	WRITE_ONCE(fw->work, &work);
	/* Publish fw->work before the tiles see the new sequence number. */
	smp_store_release(&fw->work_seq, fw->work_seq + 1);
	wake_up_all(&fw->tile_wq);
	/* TASK_IDLE: a long command is not a hung task. */
	wait_for_completion_state(&work.done, TASK_IDLE);

	return atomic_read(&work.error);
}

/* A command that never ends: it waits for a reset to abandon it. */
static void vnpu_fw_spin(struct vnpu_fw *fw, struct vnpu_fw_job *job)
{
	wait_event_interruptible(fw->event_wq, vnpu_fw_abandoned(fw, job) ||
				 kthread_should_stop());
}

static void vnpu_fw_profile(struct vnpu_fw_job *job, u32 index, u64 start,
			    u64 end)
{
	if (!job->profile)
		return;
	WRITE_ONCE(job->profile[2 * index], start);
	WRITE_ONCE(job->profile[2 * index + 1], end);
}

/*
 * Run the commands of a started job; its end timestamp is set. A command
 * starts when the one before it ended (the job's start for the first).
 * A NOP takes no time: it reads no clock. @here: see vnpu_fw_exec_cmd();
 * such a job takes no injected hang or fault either (the firmware
 * thread's jobs do).
 */
static u32 vnpu_fw_run_cmds(struct vnpu_fw *fw, struct vnpu_fw_job *job,
			    bool here)
{
	bool hang = !here && atomic_dec_if_positive(&fw->inject_hang) >= 0;
	bool fault = !here && atomic_dec_if_positive(&fw->inject_fault) >= 0;
	const struct vnpu_cmd_header *cmd = NULL;
	u64 start, now = job->start_ns;
	u32 index = 0;
	int ret;

	job->end_ns = now;
	while ((cmd = vnpu_stream_next(job->stream, job->stream_size, cmd))) {
		start = now;
		WRITE_ONCE(job->cur_cmd, index);
		if (hang || cmd->opcode == VNPU_CMD_SPIN) {
			vnpu_fw_spin(fw, job);
			ret = 0;
		} else if (fault) {
			ret = -EIO;
		} else {
			ret = vnpu_fw_exec_cmd(fw, job, cmd, here);
		}
		if (hang || fault || cmd->opcode != VNPU_CMD_NOP)
			now = ktime_get_ns();
		job->end_ns = now;
		if (vnpu_fw_abandoned(fw, job))
			return READ_ONCE(fw->dead) ? DRM_VNPU_JOB_CANCELLED :
						     DRM_VNPU_JOB_TIMEOUT;
		if (ret)
			return DRM_VNPU_JOB_FAULT;
		vnpu_fw_profile(job, index, start, now);
		atomic64_inc(&job->progress);
		index++;
	}
	return DRM_VNPU_JOB_OK;
}

static int vnpu_fw_status_errno(u32 status)
{
	switch (status) {
	case DRM_VNPU_JOB_CANCELLED:
		return -ECANCELED;
	case DRM_VNPU_JOB_TIMEOUT:
		return -ETIMEDOUT;
	default:
		return -EIO;
	}
}

/*
 * Signal the fence of a job that ended, stamped with the job's end (which
 * saves a clock read). A job run by the thread that submitted it may have
 * none: nothing could wait for it yet.
 */
static void vnpu_fw_signal(struct vnpu_fw_job *job, u32 status)
{
	if (!job->fence)
		return;
	if (status != DRM_VNPU_JOB_OK)
		dma_fence_set_error(job->fence, vnpu_fw_status_errno(status));
	if (job->end_ns)
		dma_fence_signal_timestamp(job->fence, ns_to_ktime(job->end_ns));
	else
		dma_fence_signal(job->fence);
}

/* The running job ended: free the device, tell the driver, signal. */
static void vnpu_fw_end(struct vnpu_fw *fw, struct vnpu_fw_job *job,
			u32 status)
{
	bool queued;

	spin_lock(&fw->lock);
	fw->running = NULL;
	if (fw->abort == job)
		fw->abort = NULL;
	queued = !list_empty(&fw->queue);
	spin_unlock(&fw->lock);
	if (wq_has_sleeper(&fw->event_wq))
		wake_up_all(&fw->event_wq);

	job->status = status;
	fw->job_done(fw, job);
	vnpu_fw_signal(job, status);

	spin_lock(&fw->lock);
	fw->pending--;
	spin_unlock(&fw->lock);

	/* Jobs pushed while another thread ran this one wait for the firmware. */
	if (queued && current != fw->thread)
		wake_up(&fw->queue_wq);
}

/*
 * The firmware thread is slow to start a job (inject_stall_ms), as a
 * starved thread of a loaded VM is: the job is the device's, not started.
 */
static void vnpu_fw_stall(struct vnpu_fw *fw)
{
	u32 ms = READ_ONCE(fw->inject_stall_ms);

	if (ms)
		wait_event_idle_timeout(fw->event_wq, READ_ONCE(fw->dead),
					msecs_to_jiffies(ms));
}

/* Run the running job, on whatever thread took the device for it. */
static void vnpu_fw_run_job(struct vnpu_fw *fw, struct vnpu_fw_job *job,
			    bool here)
{
	u32 status = DRM_VNPU_JOB_CANCELLED;

	if (!here)
		vnpu_fw_stall(fw);
	if (atomic_cmpxchg(&job->state, VNPU_FW_JOB_QUEUED,
			   VNPU_FW_JOB_RUNNING) == VNPU_FW_JOB_QUEUED &&
	    !READ_ONCE(fw->dead)) {
		WRITE_ONCE(job->start_ns, ktime_get_ns());
		status = vnpu_fw_run_cmds(fw, job, here);
	}
	vnpu_fw_end(fw, job, status);
}

/* The next queued job, now the running one; none while a job runs. */
static struct vnpu_fw_job *vnpu_fw_take(struct vnpu_fw *fw)
{
	struct vnpu_fw_job *job = NULL;

	spin_lock(&fw->lock);
	if (!fw->running) {
		job = list_first_entry_or_null(&fw->queue, struct vnpu_fw_job,
					       link);
		if (job) {
			list_del_init(&job->link);
			fw->running = job;
		}
	}
	spin_unlock(&fw->lock);
	return job;
}

/* Queued jobs the firmware thread may start: none while another runs. */
static bool vnpu_fw_has_work(struct vnpu_fw *fw)
{
	return !list_empty_careful(&fw->queue) && !READ_ONCE(fw->running);
}

static int vnpu_fw_thread(void *data)
{
	struct vnpu_fw *fw = data;
	struct vnpu_fw_job *job;

	while (!kthread_should_stop()) {
		wait_event_interruptible(fw->queue_wq, kthread_should_stop() ||
					 vnpu_fw_has_work(fw));
		while ((job = vnpu_fw_take(fw)))
			vnpu_fw_run_job(fw, job, false);
	}
	return 0;
}

/**
 * vnpu_fw_push() - hand a job to the device; it runs after every job
 * pushed before it
 * @fw: the device
 * @job: the job, with @job->fence initialized
 */
void vnpu_fw_push(struct vnpu_fw *fw, struct vnpu_fw_job *job)
{
	spin_lock(&fw->lock);
	list_add_tail(&job->link, &fw->queue);
	fw->pending++;
	spin_unlock(&fw->lock);
	wake_up(&fw->queue_wq);
}

/**
 * vnpu_fw_job_is_short() - whether a job is short enough to run on the
 * thread that hands it to the device (vnpu_exec_stream_is_short())
 * @job: a job with a validated stream
 *
 * Return: true when its stream is (vnpu_exec_stream_is_short()).
 */
bool vnpu_fw_job_is_short(const struct vnpu_fw_job *job)
{
	return vnpu_exec_stream_is_short(job->stream, job->stream_size);
}

/**
 * vnpu_fw_claim() - take the idle device for a job run by the caller
 * @fw: the device
 * @job: the job; the caller checked vnpu_fw_job_is_short()
 *
 * Idle: every job handed to the device before has signalled its fence,
 * so the device still runs its jobs one at a time and in order, and no
 * hang or fault is to be injected (those are for the firmware thread's
 * jobs). On success @job is the device's running job: the firmware
 * thread starts no job until vnpu_fw_run_claimed() has ended it, and a
 * reset or a shutdown abandons it like any running job.
 *
 * Return: true when the device is @job's; the caller must then call
 * vnpu_fw_run_claimed() without sleeping for long in between.
 */
bool vnpu_fw_claim(struct vnpu_fw *fw, struct vnpu_fw_job *job)
{
	bool idle;

	if (atomic_read(&fw->inject_hang) || atomic_read(&fw->inject_fault))
		return false;

	spin_lock(&fw->lock);
	idle = !fw->pending && !fw->running && !fw->dead;
	if (idle) {
		fw->pending++;
		fw->running = job;
	}
	spin_unlock(&fw->lock);
	return idle;
}

/**
 * vnpu_fw_run_claimed() - run a job taken with vnpu_fw_claim() on the
 * calling thread
 * @fw: the device
 * @job: the job, with @job->fence initialized
 *
 * Each command runs in one part on this thread. The job ends like any
 * other: status, timestamps, profile, counters, then its fence signals.
 */
void vnpu_fw_run_claimed(struct vnpu_fw *fw, struct vnpu_fw_job *job)
{
	vnpu_fw_run_job(fw, job, true);
}

/**
 * vnpu_fw_cancel() - stop a job from starting
 * @job: the job
 *
 * Return: true when the job will end CANCELLED, false when it already
 * started (or was cancelled before).
 */
bool vnpu_fw_cancel(struct vnpu_fw_job *job)
{
	return atomic_cmpxchg(&job->state, VNPU_FW_JOB_QUEUED,
			      VNPU_FW_JOB_CANCELLED) == VNPU_FW_JOB_QUEUED;
}

/**
 * vnpu_fw_reset() - reset the device to abandon a hung job, which ends
 * TIMEOUT; the jobs queued behind it stay queued
 * @fw: the device
 * @job: the job found hung
 *
 * Nothing happens unless @job is the running job and has started: a
 * reset never ends a job that is not the one found hung, nor one the
 * device has not begun.
 *
 * Return: true when @job was abandoned.
 */
bool vnpu_fw_reset(struct vnpu_fw *fw, struct vnpu_fw_job *job)
{
	bool hung;

	spin_lock(&fw->lock);
	hung = fw->running == job && vnpu_fw_job_started(job);
	if (hung)
		fw->abort = job;
	spin_unlock(&fw->lock);
	if (!hung)
		return false;

	wake_up_all(&fw->event_wq);
	wait_event_idle(fw->event_wq, READ_ONCE(fw->running) != job);
	return true;
}

/**
 * vnpu_fw_job_started() - when the device started a job
 * @job: the job
 *
 * Return: its start timestamp (CLOCK_MONOTONIC ns), or 0 while it has not
 * started (queued, or taken by a firmware thread that has not begun it).
 */
u64 vnpu_fw_job_started(const struct vnpu_fw_job *job)
{
	return READ_ONCE(job->start_ns);
}

/**
 * vnpu_fw_running_since() - start timestamp of the running job
 * @fw: the device
 *
 * Return: the running job's start (CLOCK_MONOTONIC ns), or 0 when no job
 * runs.
 */
u64 vnpu_fw_running_since(struct vnpu_fw *fw)
{
	u64 start = 0;

	spin_lock(&fw->lock);
	if (fw->running)
		start = READ_ONCE(fw->running->start_ns);
	spin_unlock(&fw->lock);
	return start;
}

/**
 * vnpu_fw_fpu_read() - the FPU sections the device's tiles ran so far
 * @fw: the device
 * @fig: returned figures; @fig->max_ns never exceeds @fig->total_ns
 */
void vnpu_fw_fpu_read(struct vnpu_fw *fw, struct vnpu_fw_fpu_figures *fig)
{
	u64 max = atomic64_read(&fw->fpu.max);

	/* Pairs with the cmpxchg in vnpu_fw_fpu_account(). */
	smp_rmb();
	fig->total_ns = atomic64_read(&fw->fpu.total_ns);
	fig->sections = atomic64_read(&fw->fpu.sections);
	fig->max_ns = max & VNPU_FW_FPU_NS_MASK;
	fig->max_opcode = FIELD_GET(VNPU_FW_FPU_OPCODE, max);
	fig->max_layer_op = FIELD_GET(VNPU_FW_FPU_LAYER_OP, max);
}

/**
 * vnpu_fw_shutdown() - end every job, running or to come, as CANCELLED
 * @fw: the device
 */
void vnpu_fw_shutdown(struct vnpu_fw *fw)
{
	spin_lock(&fw->lock);
	fw->dead = true;
	spin_unlock(&fw->lock);
	wake_up_all(&fw->event_wq);
}

/*
 * Off: the engine's baseline kernels (SSE2, software fma, small GEMM/CONV
 * units) even on a CPU with AVX2+FMA, as on one without; the same bits,
 * slower. For tests of that path, which the VM's CPU would never take.
 */
static bool engine_simd = true;
module_param(engine_simd, bool, 0444);
MODULE_PARM_DESC(engine_simd, "Use the engine's AVX2+FMA and AVX-512 kernels when the CPU has them (default true; false: the baseline kernels)");

/*
 * Where the CPU has AVX512-BF16, whether layers with packed bf16 weights
 * run the engine's AVX512-BF16 kernels: -1 where they pay
 * (vnpu_eng_bf16_pays(): AMD Zen 4 and later), 1 always, 0 never. Else
 * they widen the weights to f32 (the AVX-512F path's bits).
 */
static int engine_bf16 = -1;
module_param(engine_bf16, int, 0444);
MODULE_PARM_DESC(engine_bf16, "Use the engine's AVX512-BF16 kernels for bf16 weights when the CPU has them: -1 where they are faster than widening (default), 1 always, 0 never");

/* vnpu_eng_bf16_pays() of the boot CPU. */
static bool vnpu_fw_bf16_pays(void)
{
	u32 vendor = VNPU_ENG_VENDOR_OTHER;

	if (boot_cpu_data.x86_vendor == X86_VENDOR_INTEL)
		vendor = VNPU_ENG_VENDOR_INTEL;
	else if (boot_cpu_data.x86_vendor == X86_VENDOR_AMD)
		vendor = VNPU_ENG_VENDOR_AMD;
	return vnpu_eng_bf16_pays(vendor, boot_cpu_data.x86,
				  boot_cpu_data.x86_model);
}

/*
 * Off: layers with packed f16 weights widen them to f32 (the AVX-512F
 * path's bits) even where the CPU has AVX512-FP16.
 */
static bool engine_fp16 = true;
module_param(engine_fp16, bool, 0444);
MODULE_PARM_DESC(engine_fp16, "Use the engine's AVX512-FP16 kernels for f16 weights when the CPU has them (default true)");

static u32 vnpu_fw_features(void)
{
	u32 f = VNPU_ENG_F_AVX2_FMA | VNPU_ENG_F_AVX512;

	if (!engine_simd)
		return 0;
	if (!boot_cpu_has(X86_FEATURE_AVX2) || !boot_cpu_has(X86_FEATURE_FMA) ||
	    !boot_cpu_has(X86_FEATURE_F16C) ||
	    !cpu_has_xfeatures(XFEATURE_MASK_SSE | XFEATURE_MASK_YMM, NULL))
		return 0;
	/*
	 * The AVX-512 GEMM kernels give the AVX2 bits, only faster; the
	 * depthwise rows take VL's 32 ymm registers.
	 */
	if (!boot_cpu_has(X86_FEATURE_AVX512F) ||
	    !boot_cpu_has(X86_FEATURE_AVX512VL) ||
	    !cpu_has_xfeatures(XFEATURE_MASK_SSE | XFEATURE_MASK_YMM |
			       XFEATURE_MASK_AVX512, NULL))
		return VNPU_ENG_F_AVX2_FMA;
	/*
	 * vdpbf16ps and vpdpbusd are plain ZMM state, which kernel_fpu_begin()
	 * saves; AMX tiles are not (XTILEDATA is a dynamic feature the kernel
	 * grants per task on request), so the engine has no AMX kernels.
	 */
	if (!boot_cpu_has(X86_FEATURE_AVX512BW))
		return f;
	if (boot_cpu_has(X86_FEATURE_AVX512_BF16) &&
	    (engine_bf16 > 0 || (engine_bf16 < 0 && vnpu_fw_bf16_pays())))
		f |= VNPU_ENG_F_AVX512_BF16;
	/* vfmadd231ph and vcvtph2psx: plain ZMM state too. */
	if (engine_fp16 && boot_cpu_has(X86_FEATURE_AVX512_FP16))
		f |= VNPU_ENG_F_AVX512_FP16;
	/* The int8 tiles' vpdpbusd: integer sums, the same bits again. */
	if (boot_cpu_has(X86_FEATURE_AVX512_VNNI))
		f |= VNPU_ENG_F_VNNI;
	/* LOOKUP's vpermi2b: a table lookup, the same bits too. */
	if (boot_cpu_has(X86_FEATURE_AVX512VBMI))
		f |= VNPU_ENG_F_VBMI;
	/* The f32 GEMM's AVX2 tiles where zmm runs as two halves: its bits. */
	if (vnpu_eng_half_zmm(boot_cpu_data.x86_vendor == X86_VENDOR_AMD ?
			      VNPU_ENG_VENDOR_AMD : VNPU_ENG_VENDOR_OTHER,
			      boot_cpu_data.x86, boot_cpu_data.x86_model))
		f |= VNPU_ENG_F_HALF_ZMM;
	return f;
}

static void vnpu_fw_stop_tiles(struct vnpu_fw *fw)
{
	u32 i;

	for (i = 0; i < fw->num_tiles; i++) {
		if (fw->tiles[i].thread)
			kthread_stop(fw->tiles[i].thread);
		kvfree(fw->tiles[i].scratch);
	}
	kfree(fw->tiles);
	fw->tiles = NULL;
}

/**
 * vnpu_fw_init() - power on the simulated hardware
 * @fw: the device's firmware state
 * @name: thread name prefix
 * @num_tiles: tiles (threads) to start, at least 1
 * @job_done: called for every job that ends
 *
 * Return: 0 or a negative errno.
 */
int vnpu_fw_init(struct vnpu_fw *fw, const char *name, u32 num_tiles,
		 void (*job_done)(struct vnpu_fw *fw, struct vnpu_fw_job *job))
{
	u32 i;
	int ret;

	spin_lock_init(&fw->lock);
	INIT_LIST_HEAD(&fw->queue);
	init_waitqueue_head(&fw->queue_wq);
	init_waitqueue_head(&fw->event_wq);
	init_waitqueue_head(&fw->tile_wq);
	strscpy(fw->name, name, sizeof(fw->name));
	fw->features = vnpu_fw_features();
	fw->job_done = job_done;

	fw->tiles = kcalloc(num_tiles, sizeof(*fw->tiles), GFP_KERNEL);
	if (!fw->tiles)
		return -ENOMEM;
	fw->num_tiles = num_tiles;
	for (i = 0; i < num_tiles; i++) {
		struct vnpu_tile *tile = &fw->tiles[i];
		struct task_struct *t;

		tile->fw = fw;
		tile->index = i;
		t = kthread_run(vnpu_tile_thread, tile, "%s-tile%u", name, i);
		if (IS_ERR(t)) {
			ret = PTR_ERR(t);
			goto err_stop_tiles;
		}
		tile->thread = t;
	}

	fw->thread = kthread_run(vnpu_fw_thread, fw, "%s-fw", name);
	if (IS_ERR(fw->thread)) {
		ret = PTR_ERR(fw->thread);
		fw->thread = NULL;
		goto err_stop_tiles;
	}
	return 0;

err_stop_tiles:
	vnpu_fw_stop_tiles(fw);
	return ret;
}

/**
 * vnpu_fw_fini() - power off; the queue must be empty
 * @fw: the device
 */
void vnpu_fw_fini(struct vnpu_fw *fw)
{
	vnpu_fw_shutdown(fw);
	kthread_stop(fw->thread);
	vnpu_fw_stop_tiles(fw);
}

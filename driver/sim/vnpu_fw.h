/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __VNPU_FW_H__
#define __VNPU_FW_H__

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>

struct dma_fence;
struct task_struct;
struct vnpu_fw;
struct vnpu_fw_work;

/* enum drm_vnpu_job_status values are used for vnpu_fw_job.status. */

/**
 * enum vnpu_fw_job_state - where a job is in its life on the device
 * @VNPU_FW_JOB_QUEUED: not started; CANCEL may still stop it
 * @VNPU_FW_JOB_CANCELLED: cancelled before it started
 * @VNPU_FW_JOB_RUNNING: the firmware took it
 */
enum vnpu_fw_job_state {
	VNPU_FW_JOB_QUEUED = 0,
	VNPU_FW_JOB_CANCELLED = 1,
	VNPU_FW_JOB_RUNNING = 2,
};

/**
 * struct vnpu_fw_job - what the firmware needs of a job
 * @link: entry in &vnpu_fw.queue
 * @stream: the validated command stream (kernel copy)
 * @stream_size: bytes at @stream
 * @num_cmds: commands in @stream
 * @slot_base: kernel address of each slot's BO
 * @profile: 2 * @num_cmds u64 for per-command timestamps, or NULL
 * @state: &enum vnpu_fw_job_state
 * @status: returned &enum drm_vnpu_job_status, valid once @fence signals
 * @cur_cmd: index of the running command, then of the faulting one
 * @start_ns: device timestamp of the start (CLOCK_MONOTONIC ns), or 0
 * @end_ns: device timestamp of the end, or 0
 * @progress: parts and commands completed (the timeout handler tells a
 *	slow job from a hung one by it)
 * @fence: the hardware fence, signalled when the job ends; NULL for a job
 *	run on the thread that submitted it when nothing can wait for it
 */
struct vnpu_fw_job {
	struct list_head link;
	const void *stream;
	u64 stream_size;
	u32 num_cmds;
	void **slot_base;
	u64 *profile;
	atomic_t state;
	u32 status;
	u32 cur_cmd;
	u64 start_ns;
	u64 end_ns;
	atomic64_t progress;
	struct dma_fence *fence;
};

/**
 * struct vnpu_tile - one compute tile: a kernel thread running parts
 * @fw: the firmware it belongs to
 * @thread: the tile thread
 * @index: tile number
 * @scratch: private scratch memory of the parts this tile runs
 * @scratch_size: bytes at @scratch
 * @epoch: the last command run's name on @scratch (struct vnpu_eng_ctx)
 */
struct vnpu_tile {
	struct vnpu_fw *fw;
	struct task_struct *thread;
	u32 index;
	void *scratch;
	u64 scratch_size;
	u64 epoch;
};

/**
 * struct vnpu_fw_fpu_stats - the FPU sections of the device's tiles: each
 *	part runs in one, with preemption off (lock-free: every tile adds)
 * @sections: sections run
 * @total_ns: their time
 * @max: the longest one and the command that ran it, packed in one word
 *	so that a new maximum replaces both at once (vnpu_fw_fpu_read())
 */
struct vnpu_fw_fpu_stats {
	atomic64_t sections;
	atomic64_t total_ns;
	atomic64_t max;
};

/**
 * struct vnpu_fw_fpu_figures - a reading of &struct vnpu_fw_fpu_stats
 * @sections: FPU sections run
 * @total_ns: their time, ns
 * @max_ns: the longest one, ns; at most @total_ns
 * @max_opcode: &enum vnpu_opcode of the command that ran the longest one
 *	(0, a NOP, while none ran)
 * @max_layer_op: &enum vnpu_layer_op of that command when it is a LAYER,
 *	else 0
 */
struct vnpu_fw_fpu_figures {
	u64 sections;
	u64 total_ns;
	u64 max_ns;
	u32 max_opcode;
	u32 max_layer_op;
};

/**
 * struct vnpu_fw - the simulated hardware: a job queue run in order by a
 * firmware thread that splits each command across the tiles
 * @lock: protects @queue, @running, @abort, @dead and @pending
 * @queue: jobs pushed by the scheduler, not yet taken
 * @running: the job the device runs (on the firmware thread, or on the
 *	thread that claimed the device for it), or NULL
 * @abort: the job a reset asked to abandon, or NULL
 * @dead: the device is shutting down: every job ends CANCELLED
 * @pending: jobs handed to the device whose fence is not signalled yet
 * @queue_wq: the firmware thread waits here for jobs
 * @event_wq: woken when a job ends or must be abandoned
 * @thread: the firmware thread
 * @num_tiles: entries in @tiles
 * @tiles: the tiles
 * @tile_wq: the tiles wait here for work
 * @work: the command being split across the tiles
 * @work_seq: bumped for each new @work (release/acquire)
 * @features: VNPU_ENG_F_* the engine may use
 * @fpu: the FPU sections the tiles ran
 * @inject_hang: debugfs knob: this many next jobs hang
 * @inject_fault: debugfs knob: this many next jobs fault
 * @inject_stall_ms: debugfs knob: the firmware thread waits this long
 *	before it starts each job it takes (0: not at all)
 * @job_done: called when a job ends, before its fence signals
 * @name: name prefix of the threads
 */
struct vnpu_fw {
	/* protects queue, running, abort, dead and pending */
	spinlock_t lock;
	struct list_head queue;
	struct vnpu_fw_job *running;
	struct vnpu_fw_job *abort;
	bool dead;
	u32 pending;
	wait_queue_head_t queue_wq;
	wait_queue_head_t event_wq;
	struct task_struct *thread;

	u32 num_tiles;
	struct vnpu_tile *tiles;
	wait_queue_head_t tile_wq;
	struct vnpu_fw_work *work;
	unsigned long work_seq;

	u32 features;
	struct vnpu_fw_fpu_stats fpu;
	atomic_t inject_hang;
	atomic_t inject_fault;
	u32 inject_stall_ms;
	void (*job_done)(struct vnpu_fw *fw, struct vnpu_fw_job *job);
	char name[16];
};

int vnpu_fw_init(struct vnpu_fw *fw, const char *name, u32 num_tiles,
		 void (*job_done)(struct vnpu_fw *fw, struct vnpu_fw_job *job));
void vnpu_fw_shutdown(struct vnpu_fw *fw);
void vnpu_fw_fini(struct vnpu_fw *fw);
void vnpu_fw_push(struct vnpu_fw *fw, struct vnpu_fw_job *job);
bool vnpu_fw_job_is_short(const struct vnpu_fw_job *job);
bool vnpu_fw_claim(struct vnpu_fw *fw, struct vnpu_fw_job *job);
void vnpu_fw_run_claimed(struct vnpu_fw *fw, struct vnpu_fw_job *job);
bool vnpu_fw_reset(struct vnpu_fw *fw, struct vnpu_fw_job *job);
u64 vnpu_fw_job_started(const struct vnpu_fw_job *job);
bool vnpu_fw_cancel(struct vnpu_fw_job *job);
u64 vnpu_fw_running_since(struct vnpu_fw *fw);
void vnpu_fw_fpu_read(struct vnpu_fw *fw, struct vnpu_fw_fpu_figures *fig);

#endif /* __VNPU_FW_H__ */

// SPDX-License-Identifier: MIT
/*
 * The CPU device: runs command streams on host threads with the very code
 * the simulated NPU runs (driver/sim/vnpu_exec.c and the device engine).
 *
 * The device is the NPU's reference, so it is built like the NPU: one
 * "firmware" thread takes the submitted jobs from a queue in submission
 * order, and jobs end (retire) in that order, like the NPU's ring. It
 * walks a job's commands one after another; each command is split into
 * parts (vnpu_exec_parts) that the firmware thread and the other tiles
 * take, as the NPU's tiles do, each from a run of neighbouring parts of
 * its own before it helps with another's (cpu_split.h). The device has
 * INFERENCE_NUM_THREADS tiles: the thread running the job (the firmware
 * thread, or the submitter below) and a helper thread per other tile; by
 * default one tile per CPU the process may use (cpu_threads.c). The
 * device takes any mapped buffer, so HETERO runs its segments on the
 * NPU's own buffers.
 *
 * Jobs side by side, as OpenVINO's CPU streams run requests: while a job
 * runs and the next one waits in the queue, a helper tile that is free
 * starts it, and both then run their commands unsplit, each on its own
 * thread (the firmware thread takes the next one when its job ends). A
 * small model's commands are too small to split well, and tiles that
 * meet at every command wait for each other: requests kept in flight
 * (the THROUGHPUT hint) ran at 0.5-0.7x the FPS when each job had every
 * tile to itself. A job that ends before an older one retires after it.
 *
 * One shortcut: a job submitted to an idle device (nothing queued or
 * unretired) runs on the submitting thread when its caller waits for it
 * at once (VNPU_SUBMIT_CALLER_WAITS: a sync inference), when it is short
 * (vnpu_exec_stream_is_short(), the driver's rule), or when the caller is
 * the device's completion thread inside a job's function, no other job
 * waits for its function and the program's last run took under
 * CPU_INLINE_MAX_NS (a callback starting its request again: that thread
 * then finishes the job too, with no handoff), as the NPU's driver runs a
 * short job in SUBMIT: handing a job to the firmware thread and being
 * woken at its end costs tens of microseconds each way where an idle CPU
 * sleeps deeply (a sync inference of openWakeWord's "hey jarvis" took
 * 0.13 ms for 0.03 ms of layers). It is then the device's oldest job,
 * split over the tiles like any other: jobs started beside it retire
 * after it, so the order holds. An application thread's async job that
 * is not short goes to the firmware thread, so start_async() does not
 * hold its caller.
 *
 * Requests kept in flight (the THROUGHPUT hint: each callback starts its
 * request again) submit with VNPU_SUBMIT_MORE_IN_FLIGHT. On a device of
 * two or more tiles, while the machine has CPU time to spare (as for the
 * helpers' poll through a job, CPU_JOB_SPIN_NS), such a job, when brief
 * (exe_brief()), is never run at submit but queued, and runs unsplit
 * (@alone), so that two brief jobs run side by side, one per CPU, without
 * a thread woken for either. The device thread (the firmware thread or a
 * helper tile) that ends such a job finishes it too: it calls the
 * functions of the ended jobs at the head of the completion context
 * (completion_serve(): download, postprocess, the callback, which starts
 * its request again and queues the next job), then takes the next queued
 * job, or polls for one (for up to CPU_JOB_SPIN_NS while it stays on its
 * CPU); the completion context's threads sleep meanwhile (cpu_served()).
 * So each CPU runs a job, finishes it and starts the next, with no thread
 * handoff: with the completion thread finishing them (it ran queued jobs
 * while it waited, and the other CPU's jobs waited for their functions
 * meanwhile) two jobs ran side by side a third to half of the time, and
 * async ran at 0.83x the sync FPS on make bench's conv model. While the
 * firmware thread is in jobs' functions (@fw_away), which may wait for a
 * queued job, a helper tile takes queued jobs as it would. Where no device
 * thread serves, the completion context's wait runs the queued brief jobs
 * itself while the job it waits for runs (cpu_wait_end()): it would
 * otherwise sleep, and a thread that sleeps starts 60-100 us after its
 * wakeup on an idle host, several times such a job. A longer job goes as any other (a
 * helper tile woken for it starts it beside the running one). On a busy
 * machine, or a device of one tile, the other CPU is not there to take the
 * second job: the rules below apply as to any
 * job. Run at submit, each callback's job would run split over the
 * tiles on the completion thread and end before the next callback ran:
 * the device would never have two jobs, and async would run at the sync
 * FPS. Jobs still start in queue order and retire in submission order.
 *
 * A job's end reaches the runtime through notify (plugin.h) on the
 * device's completion context (completion.h), which calls the notified
 * jobs' functions in submission order, as the NPU's does; the device tells
 * it of every job's end (completion_job_ended()), so that a thread is
 * woken to wait only when a job ended while its waiter was in a function,
 * or no device thread serves it.
 * A program may hold a second arena plan (exe_load_alt: every intermediate
 * in bytes of its own), run while the tiles sit apart, as the round trip
 * between two tiles tells (run_alt(), rt_probe(); runtime.rst).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "completion.h"
#include "cpu_fine.h"
#include "cpu_split.h"
#include "cpu_threads.h"
#include "plugin.h"
#include "vnpu_exec.h"

#define CPU_VISIBLE __attribute__((visibility("default")))
/* Cost of one part when splitting a command: keeps tiles evenly busy. */
#define CPU_CHUNK_COST (1u << 18)
/*
 * How long a helper tile polls for the job's next command, and the thread
 * running a job for the other tiles' last parts, before it sleeps: a
 * job's commands follow each other within microseconds, and waking a
 * sleeping thread costs tens of microseconds where idle CPUs sleep deeply
 * (a VM's vCPU halts). Bounded, as a poll costs its time on a machine with
 * more threads than CPUs; it does not yield: there sched_yield() handed
 * the CPU away for whole time slices. The firmware thread does not poll
 * for the next job, nor do waits for a job: the threads that submit the
 * next jobs need those CPUs (polling there cost 5-10% of async throughput
 * on 2 CPUs).
 */
#define CPU_SPIN_NS 50000
/*
 * While the running job has commands split over the tiles, and the
 * machine has CPU time to spare, a helper polls through the job (at most
 * CPU_JOB_SPIN_NS at a time) rather than for CPU_SPIN_NS: single-part
 * commands run for longer than that between the split ones (16 of
 * mobilenetv3_large_qdq's 33 split commands per inference found the
 * helper asleep), and a helper whose vCPU had halted started its part
 * 60 us after the command on average. Spare: over the last
 * CPU_LOAD_PERIOD_NS or more, other processes kept the CPUs the process
 * may use (its affinity mask) busy for at most CPU_OTHERS_MCPU
 * thousandths of a CPU beyond those the device's tiles leave free
 * (cpu_load_others_mcpu()), or there is nothing to read. Not the CPU
 * pressure: its "some avg10" rises with the waits this process's own
 * busy tiles cause any task that wakes, and on an idle 2-CPU host our
 * two tiles pushed it to 8-10% against a 10% gate, so the gate flipped
 * within a run and the helpers slept between split commands in some
 * runs and not in others. On a busy machine a
 * poll only takes the CPU time other threads wait for (the helper's poll
 * also ends when it was off its CPU for CPU_OFF_CPU_NS): there the
 * helpers sleep as before.
 */
#define CPU_JOB_SPIN_NS 1000000
#define CPU_OFF_CPU_NS 50000
#define CPU_LOAD_PERIOD_NS 200000000
#define CPU_OTHERS_MCPU 250
/*
 * A job a completion thread submits runs on that thread only when its
 * program's last run took less than this: a callback holds the runtime's
 * callback runner while it submits, so a long job run there would hold
 * the other requests' callbacks back (mobilenetv3 async lost 20%).
 */
#define CPU_INLINE_MAX_NS 500000
#define CPU_MAX_REQUESTS 32
/*
 * A command of one part (vnpu_exec_parts()) splits in finer parts
 * (vnpu_exec_parts_fine()) while the helpers poll when its runs so split
 * take less time than its runs in one part, measured and kept under
 * watch as cpu_fine.h says. The engine's cost figures do not tell which commands
 * gain: on the AVX-512 path BERT's LayerNorm (cost 884736) took 140 us,
 * its mask chain (786432) 300 us and head transposes (a COPY of 98304)
 * 30-100 us on one CPU, against 12-40 us for MobileNetV3's int8
 * (De)Quantize and depthwise layers of 0.5-1.8 million, which split in
 * two took longer (a part's data comes from the other CPU's cache); on
 * this AVX2 host oww_embedding's MaxPools (cost 50-110 thousand) took
 * 30-60 us in one part and half that in two. Nor does a fixed bar on the
 * one-part time: those pools ran under and over 40 us as the host's
 * speed swung. Nor does one choice for good: which way wins changes with
 * where the hypervisor puts the vCPUs, every few minutes.
 */
/*
 * A program of at most this cost (vnpu_exec_cost() of its commands:
 * mobilenetv3_large's, 0.3-0.6 billion, 4-7 ms on one CPU, but not
 * YOLOv8n's or CRNN's, 3-5 billion) runs each job that would split over the
 * tiles so or whole, every command on the job's thread, as their times
 * choose (cpu_fine.h, in blocks): where the hypervisor put the two vCPUs
 * on cores of two CCDs, oww_embedding's bf16 jobs took 0.74 ms split and
 * 0.66 ms whole, each layer's tiles reading what the other CCD wrote;
 * on cores sharing an L3, 0.43 ms split. Larger programs gain more from
 * the split than the hand-offs cost.
 */
#define CPU_WHOLE_MAX_COST (1ull << 30)

/*
 * The round trip between the job's thread and the first helper tile
 * (cpu_threads.h's cpu_plan): CPU_RT_ROUNDS rounds of CPU_RT_TRIPS trips,
 * the median round's time a trip. Taken by the thread running a job of a
 * program with two arena plans over the tiles, between two commands while
 * the helpers poll, at most every CPU_LOAD_PERIOD_NS (some 20-50 us);
 * a helper that does not take it within CPU_RT_WAIT_NS, or a side that
 * stops answering for CPU_RT_LIMIT_NS, leaves the last answer as it was.
 */
#define CPU_RT_ROUNDS 7
#define CPU_RT_TRIPS 8
#define CPU_RT_WAIT_NS 20000
#define CPU_RT_LIMIT_NS 1000000
#define CPU_RT_ABORT UINT32_MAX

/* A queued job that starts this long after it was queued counts as late. */
#define CPU_LATE_NS 50000

static const struct vnpu_host *host;

/* Which thread starts a job (struct cpu_stats); a device thread sets its own. */
enum cpu_role {
	CPU_BY_SUBMIT,			/* the submitter, at submit */
	CPU_BY_FIRMWARE,
	CPU_BY_HELPER,
	CPU_BY_WAIT,			/* the completion context, in its wait */
	CPU_NUM_ROLES,
};

static _Thread_local enum cpu_role cpu_role __attribute__((tls_model("initial-exec")));

struct vnpu_exe {
	struct vnpu_dev *dev;
	void *stream;
	uint64_t size;
	uint32_t num_cmds;
	uint32_t num_slots;
	struct vnpu_slot_desc *slot_descs;
	const struct vnpu_cmd_header **cmds;
	uint32_t *parts;		/* each command's over every tile (vnpu_exec_parts()) */
	/*
	 * Commands of one part that may split finely while the helpers poll
	 * (vnpu_exec_parts_fine(), cmd_parts()): their parts (1: none), and
	 * the choice from their times; written by the thread running a job
	 * over the tiles, which one job at a time does.
	 */
	uint32_t *fine_parts;
	struct cpu_fine *fine;
	uint32_t num_split;		/* commands of more than one part */
	atomic_uint num_fine;		/* commands that now split finely, or try to */
	/*
	 * A small program's jobs that would run over the tiles run so or
	 * whole, as their times choose (CPU_WHOLE_MAX_COST, run_job()): set
	 * by the thread running such a job, which one job at a time does.
	 */
	bool whole_timed;
	struct cpu_fine whole;
	bool is_short;			/* vnpu_exec_stream_is_short() */
	_Atomic uint64_t last_ns;	/* the last run's time; 0: none yet */
	/*
	 * The program's other arena plan (exe_load_alt: the own-bytes one),
	 * run instead while the tiles sit apart (cpu_submit()); @two_plans
	 * set in both.
	 */
	struct vnpu_exe *alt;
	bool two_plans;
};

/* The line the round trip passes (CPU_RT_ROUNDS), alone in its line. */
struct cpu_rt {
	_Atomic uint32_t req;		/* 1: asked of a helper; 2: taken */
	_Atomic uint32_t turn;		/* odd: the helper's to answer */
} __attribute__((aligned(64)));

struct vnpu_dev_job {
	struct vnpu_exe *exe;
	void **slot_base;
	bool profile;
	atomic_bool done;		/* retired; set under dev->lock, also polled */
	bool ended;			/* its thread ended it (under dev->lock) */
	pthread_cond_t done_cond;	/* @done went true (CLOCK_MONOTONIC) */
	atomic_bool cancel;
	bool alone;			/* runs unsplit: more jobs follow (VNPU_SUBMIT_MORE_IN_FLIGHT) */
	bool whole;			/* runs unsplit: its program's times chose so (run_job()) */
	vnpu_status status;		/* valid once @done */
	char message[160];		/* the failure, for the waiter's thread */
	int64_t fault_cmd;		/* the command that faulted, or -1 */
	uint64_t *cmd_ns;
	uint64_t total_ns;
	int64_t queued_ns;		/* when it was queued; 0: it ran at submit */
	struct vnpu_dev_job *next;	/* queue or run list link, under dev->lock */
	struct completion_item done_item;	/* on dev->completion */
};

/* The command every tile works on, set by the thread running the job. */
struct cpu_work {
	const struct vnpu_cmd_header *cmd;
	void *const *slot_base;
	uint32_t parts;
	uint64_t scratch;
	struct cpu_split split;		/* which tile takes which part */
	atomic_uint done_parts;
	atomic_int err;
};

/*
 * How the device's jobs overlapped, logged at DEBUG when the device goes
 * (VNPU_LOG_LEVEL=DEBUG): jobs started beside another, by whom, and how
 * long queued jobs waited for a thread. Under the device lock.
 */
struct cpu_stats {
	uint64_t started;
	uint64_t beside;		/* started while another job ran */
	uint64_t by[CPU_NUM_ROLES];
	uint64_t queued;		/* started from the queue */
	uint64_t queue_ns, max_queue_ns;	/* from queued to started */
	uint64_t late;			/* started CPU_LATE_NS or more after queued */
	int64_t busy_ns, both_ns;	/* one or more, two or more jobs running */
	int64_t last_ns;		/* when the running count last changed */
	uint32_t running;		/* that count */
};

struct tile_scratch {
	void *mem;
	uint64_t size;
	uint64_t epoch;		/* the last command run's (vnpu_eng_ctx) */
};

/* A helper tile: a device thread that runs parts of the current command. */
struct tile {
	struct vnpu_dev *dev;
	pthread_t thread;
	pthread_cond_t wake;		/* a command, or stopping */
	bool sleeping;			/* waits on @wake (under dev->lock) */
	atomic_bool polling;		/* polls for a command or a job */
};

struct vnpu_dev {
	struct vnpu_plugin plugin;	/* the CPU plugin has one device */
	struct vnpu_dev *self;
	struct vnpu_device_info info;
	uint32_t features;
	atomic_uint_fast64_t next_buf_id;

	pthread_mutex_t lock;		/* protects everything below */
	pthread_condattr_t done_attr;	/* for the jobs' done_cond */
	pthread_cond_t idle_cond;	/* the job's thread: tiles left the command */
	pthread_cond_t fw_wake;		/* a job queued, or stopping */
	struct vnpu_dev_job *head, *tail;	/* submitted, not started */
	atomic_uint queued;		/* jobs from @head on; also polled */
	/* Started and not retired, oldest first: they retire from the head. */
	struct vnpu_dev_job *run_head, *run_tail;
	atomic_uint running;		/* started, not ended; read without the lock */
	bool fw_idle;			/* the firmware thread waits on @fw_wake */
	atomic_bool fw_away;		/* it calls jobs' functions (serve_locked()) */
	bool started, stopping;
	pthread_t fw_thread;
	uint32_t num_threads;		/* tiles: the job's thread and the helpers */
	struct tile *tiles;		/* the num_threads - 1 helpers */
	/*
	 * The hand-off of a command to the helpers, without the lock: even,
	 * @work holds a command (or an old one); odd, the job's thread
	 * rewrites it. Helpers enter a command by counting themselves in
	 * @active, then seeing @gen unchanged.
	 */
	_Atomic uint64_t gen;
	atomic_uint active;		/* helpers inside the current command */
	atomic_uint sleepers;		/* helpers asleep on their @wake, or about to be */
	atomic_bool job_waits;		/* the job's thread sleeps on @idle_cond */
	atomic_bool split_job;		/* the running job has split commands; time to spare */
	/* The last reading of the CPUs' load (cpu_time_to_spare()). */
	_Atomic int64_t load_ns;	/* when it was taken; the taker's claim */
	struct cpu_load load;		/* written by the thread that claimed @load_ns */
	cpu_set_t *cpus;		/* the CPUs the process may use; NULL: none to read */
	size_t cpus_size;
	uint32_t num_cpus;
	atomic_bool spare;		/* what the last two said: CPU time to spare */
	bool always_spare, never_spare;	/* VNPU_DEBUG_CPU_SPARE (cpu_load_init()) */
	/*
	 * Which arena plan jobs of two-plan programs run (cpu_submit()):
	 * @plan_own, from the round trips (@plan, by the thread that claimed
	 * @rt_at), or forced by VNPU_DEBUG_CPU_PLAN (@plan_force).
	 */
	struct cpu_rt rt;
	_Atomic int64_t rt_at;		/* when the last was taken; the taker's claim */
	struct cpu_plan plan;
	atomic_bool plan_own;
	enum { CPU_PLAN_AUTO, CPU_PLAN_GREEDY, CPU_PLAN_OWN } plan_force;
	uint64_t rt_taken, rt_own;	/* logged at DEBUG: round trips, own answers */
	int64_t rt_last_ns;
	/* Logged at DEBUG: answers, those with time to spare, others' most. */
	uint64_t load_answers, load_spare;
	int64_t others_max_mcpu;
	atomic_uint_fast64_t fine_runs;	/* commands run in their fine parts (cmd_parts()) */
	struct tile_scratch scratch;	/* the submitter's, for a job run at submit */
	struct tile_scratch fw_scratch;	/* the firmware thread's */
	struct tile_scratch wait_scratch;	/* the completion wait's (one at a time) */
	struct cpu_work work;
	struct cpu_stats stats;
	/* Calls the notified jobs' functions, in submission order. */
	struct completion completion;
};

/*
 * Buffers come from vnpu_eng_host_alloc(): large ones are mapped in huge
 * pages, zero until written, so a large arena costs only what a job
 * touches (a blob can ask for any arena size up to the limit) and the
 * engine's panels miss the TLB less.
 */
struct cpu_buf {
	struct vnpu_buf buf;
	uint64_t alloc;		/* bytes asked of vnpu_eng_host_alloc(); 0: the caller's */
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*
 * Whether @exe's jobs end within microseconds: short by the driver's rule,
 * or its last run took under CPU_INLINE_MAX_NS. Threads that wait for such
 * a job, or for the next one after it, poll before they sleep.
 */
static bool exe_brief(struct vnpu_exe *exe)
{
	uint64_t last_ns = atomic_load(&exe->last_ns);

	return exe->is_short || (last_ns && last_ns < CPU_INLINE_MAX_NS);
}

static struct vnpu_dev *plugin_dev(struct vnpu_plugin *p)
{
	return (struct vnpu_dev *)p;
}

/* ---- buffers ---- */

static vnpu_status cpu_buf_create(struct vnpu_dev *dev, uint64_t size,
				  struct vnpu_buf **out)
{
	struct cpu_buf *b;
	uint64_t alloc = (size + 63) & ~(uint64_t)63;

	if (size > (UINT64_C(1) << 40))
		return host->error(VNPU_OUT_OF_MEMORY, "CPU: buffer of %llu bytes is too large",
				   (unsigned long long)size);
	b = calloc(1, sizeof(*b));
	if (!b)
		return host->error(VNPU_OUT_OF_MEMORY, "CPU: out of memory");
	b->alloc = alloc ? alloc : 64;
	b->buf.map = vnpu_eng_host_alloc(b->alloc);
	if (!b->buf.map) {
		free(b);
		return host->error(VNPU_OUT_OF_MEMORY, "CPU: no memory for a %llu-byte buffer",
				   (unsigned long long)size);
	}
	b->buf.dev = dev;
	b->buf.size = size;
	b->buf.id = atomic_fetch_add(&dev->next_buf_id, 1);
	*out = &b->buf;
	return VNPU_OK;
}

static void cpu_buf_free(struct vnpu_buf *buf)
{
	struct cpu_buf *b = (struct cpu_buf *)buf;

	if (!buf)
		return;
	if (b->alloc)
		vnpu_eng_host_free(buf->map, b->alloc);
	free(b);
}

/* The CPU runs on any memory: the caller's pointer is the buffer. */
static vnpu_status cpu_buf_wrap(struct vnpu_dev *dev, void *ptr, uint64_t size,
				struct vnpu_buf **out)
{
	struct cpu_buf *b = calloc(1, sizeof(*b));

	if (!b)
		return host->error(VNPU_OUT_OF_MEMORY, "CPU: out of memory");
	b->buf.dev = dev;
	b->buf.map = ptr;
	b->buf.size = size;
	b->buf.id = atomic_fetch_add(&dev->next_buf_id, 1);
	*out = &b->buf;
	return VNPU_OK;
}

static vnpu_status buf_range(struct vnpu_buf *buf, uint64_t offset, uint64_t size)
{
	if (offset > buf->size || size > buf->size - offset)
		return host->error(VNPU_INVALID_ARGUMENT,
				   "CPU: %llu bytes at %llu are outside a %llu-byte buffer",
				   (unsigned long long)size, (unsigned long long)offset,
				   (unsigned long long)buf->size);
	return VNPU_OK;
}

static vnpu_status cpu_buf_write(struct vnpu_buf *buf, uint64_t offset,
				 const void *src, uint64_t size)
{
	vnpu_status st = buf_range(buf, offset, size);

	if (st == VNPU_OK && size)
		memcpy((char *)buf->map + offset, src, size);
	return st;
}

static vnpu_status cpu_buf_read(struct vnpu_buf *buf, uint64_t offset,
				void *dst, uint64_t size)
{
	vnpu_status st = buf_range(buf, offset, size);

	if (st == VNPU_OK && size)
		memcpy(dst, (char *)buf->map + offset, size);
	return st;
}

static vnpu_status start_threads_locked(struct vnpu_dev *dev);

/* ---- programs ---- */

static void cpu_exe_free(struct vnpu_exe *exe)
{
	if (!exe)
		return;
	cpu_exe_free(exe->alt);
	free(exe->cmds);
	free(exe->parts);
	free(exe->fine_parts);
	free(exe->fine);
	free(exe->slot_descs);
	free(exe->stream);
	free(exe);
}

static vnpu_status cpu_exe_load(struct vnpu_dev *dev, const void *cmd,
				uint64_t cmd_size, const struct vnpu_slot_desc *descs,
				uint32_t num_slots, uint32_t *num_cmds,
				struct vnpu_exe **out)
{
	struct vnpu_slot_info *slots;
	const struct vnpu_cmd_header *h = NULL;
	struct vnpu_exe *exe;
	uint64_t cost = 0;
	vnpu_status st;
	uint32_t i;
	int ret;

	exe = calloc(1, sizeof(*exe));
	slots = calloc(num_slots ? num_slots : 1, sizeof(*slots));
	if (!exe || !slots)
		goto err_nomem;
	exe->dev = dev;
	exe->size = cmd_size;
	exe->num_slots = num_slots;
	exe->stream = malloc(cmd_size ? cmd_size : 8);
	exe->slot_descs = calloc(num_slots ? num_slots : 1, sizeof(*descs));
	if (!exe->stream || !exe->slot_descs)
		goto err_nomem;
	memcpy(exe->stream, cmd, cmd_size);
	for (i = 0; i < num_slots; i++) {
		exe->slot_descs[i] = descs[i];
		slots[i].size = descs[i].size;
		slots[i].id = i + 1;
		slots[i].flags = descs[i].writable ? VNPU_SLOT_INFO_WRITE : 0;
	}
	ret = vnpu_stream_validate(exe->stream, cmd_size, slots, num_slots,
				   &exe->num_cmds);
	free(slots);
	slots = NULL;
	if (ret) {
		cpu_exe_free(exe);
		return host->error(VNPU_INVALID_ARGUMENT,
				   "CPU: the command stream is invalid (error %d)", ret);
	}
	exe->cmds = calloc(exe->num_cmds ? exe->num_cmds : 1, sizeof(*exe->cmds));
	exe->parts = calloc(exe->num_cmds ? exe->num_cmds : 1, sizeof(*exe->parts));
	exe->fine_parts = calloc(exe->num_cmds ? exe->num_cmds : 1, sizeof(*exe->fine_parts));
	exe->fine = calloc(exe->num_cmds ? exe->num_cmds : 1, sizeof(*exe->fine));
	if (!exe->cmds || !exe->parts || !exe->fine_parts || !exe->fine)
		goto err_nomem;
	for (i = 0; i < exe->num_cmds; i++) {
		h = vnpu_stream_next(exe->stream, cmd_size, h);
		exe->cmds[i] = h;
	}
	exe->is_short = vnpu_exec_stream_is_short(exe->stream, cmd_size);
	/* Start the device now rather than in the first inference. */
	pthread_mutex_lock(&dev->lock);
	st = start_threads_locked(dev);
	pthread_mutex_unlock(&dev->lock);
	if (st != VNPU_OK) {
		cpu_exe_free(exe);
		return st;
	}
	/*
	 * The thread count is fixed from now on. The tiles take runs of
	 * neighbouring parts (cpu_split.h): VNPU_ENG_F_RUNS.
	 */
	for (i = 0; i < exe->num_cmds; i++) {
		bool spin = exe->cmds[i]->opcode == VNPU_CMD_SPIN;
		uint32_t f = dev->features | VNPU_ENG_F_RUNS;

		exe->parts[i] = spin ? 1 : vnpu_exec_parts(exe->cmds[i], dev->num_threads,
							   CPU_CHUNK_COST, f);
		exe->fine_parts[i] = spin || exe->parts[i] > 1 ? 1 :
				     vnpu_exec_parts_fine(exe->cmds[i], dev->num_threads,
							  CPU_CHUNK_COST, f);
		exe->num_split += exe->parts[i] > 1;
		cost += spin ? 0 : vnpu_exec_cost(exe->cmds[i], f);
	}
	exe->whole_timed = cost <= CPU_WHOLE_MAX_COST;
	exe->whole.blocks = true;
	*num_cmds = exe->num_cmds;
	*out = exe;
	return VNPU_OK;

err_nomem:
	free(slots);
	cpu_exe_free(exe);
	return host->error(VNPU_OUT_OF_MEMORY, "CPU: out of memory loading a program");
}

/* The same commands, but for their arena offsets: the other arena plan. */
static vnpu_status cpu_exe_load_alt(struct vnpu_exe *exe, const void *cmd, uint64_t cmd_size,
				    const struct vnpu_slot_desc *descs, uint32_t num_slots)
{
	struct vnpu_exe *alt;
	uint32_t i, n;
	vnpu_status st;

	if (exe->alt)
		return host->error(VNPU_INVALID_ARGUMENT, "CPU: the program has a second plan");
	st = cpu_exe_load(exe->dev, cmd, cmd_size, descs, num_slots, &n, &alt);
	if (st != VNPU_OK)
		return st;
	for (i = 0; i < n && n == exe->num_cmds; i++) {
		if (alt->cmds[i]->opcode != exe->cmds[i]->opcode ||
		    alt->cmds[i]->size != exe->cmds[i]->size)
			break;
	}
	if (n != exe->num_cmds || i < n || num_slots != exe->num_slots) {
		cpu_exe_free(alt);
		return host->error(VNPU_INVALID_ARGUMENT,
				   "CPU: the second arena plan's commands are not the program's");
	}
	alt->two_plans = true;
	exe->two_plans = true;
	exe->alt = alt;
	host->log(VNPU_LOG_DEBUG, "CPU: a second arena plan, of %llu bytes against %llu",
		  (unsigned long long)descs[1].size,
		  (unsigned long long)exe->slot_descs[1].size);
	return VNPU_OK;
}

/* ---- the tiles ---- */

static int ensure_scratch(struct tile_scratch *s, uint64_t size)
{
	void *mem;

	if (s->size >= size)
		return 0;
	size = vnpu_eng_host_scratch_size(size);
	mem = vnpu_eng_host_alloc(size);
	if (!mem)
		return -ENOMEM;
	vnpu_eng_host_free(s->mem, s->size);
	s->mem = mem;
	s->size = size;
	return 0;
}

/*
 * A name for the next command run on @s, so that the engine may keep what
 * one part copied into the scratch for the run's next parts there.
 */
static uint64_t next_epoch(struct tile_scratch *s)
{
	if (!++s->epoch)
		s->epoch = 1;
	return s->epoch;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/*
 * Polls @done(@arg) for up to CPU_SPIN_NS; true when it came true. The
 * callers then sleep on their condition variable as before, so a wait
 * that polled in vain only costs its CPU_SPIN_NS.
 */
static bool spin_until(bool (*done)(const void *arg), const void *arg)
{
	int64_t end = now_ns() + CPU_SPIN_NS;
	uint32_t i;

	for (i = 0;; i++) {
		if (done(arg))
			return true;
		cpu_relax();
		if (i % 64 == 63 && now_ns() >= end)
			return false;
	}
}

/*
 * Polls @done(@arg) for up to @ns, but false as soon as the thread was
 * off its CPU for CPU_OFF_CPU_NS (a gap in the clock it reads every few
 * microseconds): then other threads want the CPUs.
 */
static bool spin_on_cpu(bool (*done)(const void *arg), const void *arg, int64_t ns)
{
	int64_t t = now_ns(), end = t + ns, last = t;
	uint32_t i;

	for (i = 0;; i++) {
		if (done(arg))
			return true;
		cpu_relax();
		if (i % 64 == 63) {
			t = now_ns();
			if (t >= end || t - last > CPU_OFF_CPU_NS)
				return false;
			last = t;
		}
	}
}

/*
 * Whether the machine has CPU time to spare (see CPU_JOB_SPIN_NS): the
 * answer of the last two readings at least CPU_LOAD_PERIOD_NS apart. The
 * thread that moves @dev->load_ns on takes the next reading; the others
 * keep the last answer.
 */
static bool cpu_time_to_spare(struct vnpu_dev *dev)
{
	int64_t now = now_ns(), last = atomic_load(&dev->load_ns);
	int64_t free_mcpu, others;
	struct cpu_load cur;

	if (dev->always_spare || dev->never_spare)
		return dev->always_spare;
	if (!dev->cpus || now - last < CPU_LOAD_PERIOD_NS ||
	    !atomic_compare_exchange_strong(&dev->load_ns, &last, now))
		return atomic_load(&dev->spare);
	if (cpu_load_read("/proc/stat", dev->cpus, dev->cpus_size, &cur)) {
		atomic_store(&dev->spare, true);
		return true;
	}
	/* The CPUs the device's tiles leave to others, in thousandths. */
	free_mcpu = dev->num_cpus > dev->num_threads ?
		    1000 * (int64_t)(dev->num_cpus - dev->num_threads) : 0;
	others = cpu_load_others_mcpu(&dev->load, &cur);
	atomic_store(&dev->spare, others <= free_mcpu + CPU_OTHERS_MCPU);
	dev->load_answers++;
	dev->load_spare += atomic_load(&dev->spare);
	if (others > dev->others_max_mcpu)
		dev->others_max_mcpu = others;
	dev->load = cur;
	return atomic_load(&dev->spare);
}

/*
 * The CPUs to read the load of and a first reading, when the threads
 * start; without them the machine counts as having time to spare, and so
 * it does with VNPU_DEBUG_CPU_SPARE set, never with it "0": the tests of
 * the async pipeline then take the paths of a quiet host on a busy one,
 * or those of a busy host on a quiet one. VNPU_DEBUG_CPU_PLAN "greedy" or
 * "own" runs every two-plan program's jobs on that arena plan (no round
 * trips taken), for the tests that compare the two.
 */
static void cpu_load_init(struct vnpu_dev *dev)
{
	const char *force = getenv("VNPU_DEBUG_CPU_SPARE");
	const char *plan = getenv("VNPU_DEBUG_CPU_PLAN");
	int ncpus;

	dev->never_spare = force && !strcmp(force, "0");
	dev->always_spare = force && !dev->never_spare;
	dev->plan_force = !plan ? CPU_PLAN_AUTO : !strcmp(plan, "own") ? CPU_PLAN_OWN :
			  !strcmp(plan, "greedy") ? CPU_PLAN_GREEDY : CPU_PLAN_AUTO;
	for (ncpus = 1024; ncpus <= (1 << 16); ncpus *= 2) {
		dev->cpus = CPU_ALLOC(ncpus);
		if (!dev->cpus)
			break;
		dev->cpus_size = CPU_ALLOC_SIZE(ncpus);
		if (!sched_getaffinity(0, dev->cpus_size, dev->cpus))
			break;
		CPU_FREE(dev->cpus);
		dev->cpus = NULL;
	}
	if (dev->cpus)
		dev->num_cpus = (uint32_t)CPU_COUNT_S(dev->cpus_size, dev->cpus);
	/* Until a second reading says otherwise. */
	atomic_store(&dev->spare, true);
	if (dev->cpus && !cpu_load_read("/proc/stat", dev->cpus, dev->cpus_size, &dev->load)) {
		atomic_store(&dev->load_ns, dev->load.wall_ns);
		return;
	}
	if (dev->cpus)
		CPU_FREE(dev->cpus);
	dev->cpus = NULL;
}

struct gen_wait {
	struct vnpu_dev *dev;
	uint64_t seen;
	bool first;		/* the first helper, which answers round trips */
};

/*
 * A job for a free helper tile: one waits while another runs (with none
 * running, the firmware thread takes it, to run it over every tile, unless
 * it is away in jobs' functions), and fewer jobs run than there are tiles.
 */
static bool job_for_tile(const struct vnpu_dev *dev)
{
	uint32_t running = atomic_load(&dev->running);

	return atomic_load(&dev->queued) && (running || atomic_load(&dev->fw_away)) &&
	       running < dev->num_threads;
}

/* A command the tile has not entered yet, open for helpers (@gen even). */
static bool new_cmd(const struct vnpu_dev *dev, uint64_t seen)
{
	uint64_t gen = atomic_load(&dev->gen);

	return gen != seen && !(gen & 1);
}

static bool tile_has_work(const void *arg)
{
	const struct gen_wait *g = arg;

	return new_cmd(g->dev, g->seen) || job_for_tile(g->dev) ||
	       (g->first && atomic_load(&g->dev->rt.req) == 1);
}

static bool work_or_no_split_job(const void *arg)
{
	const struct gen_wait *g = arg;

	return tile_has_work(g) || !atomic_load(&g->dev->split_job);
}

static bool work_or_split_job(const void *arg)
{
	const struct gen_wait *g = arg;

	return tile_has_work(g) || atomic_load(&g->dev->split_job);
}

/*
 * A helper polls for its next command or job: through a running job that
 * has split commands (at most CPU_JOB_SPIN_NS at a time, while it stays
 * on its CPU), then CPU_SPIN_NS past it, or until the next such job
 * starts, then through that one: a sync caller's next inference reaches
 * its first split command 50-300 us after the last one ended (the
 * caller's own work, then the job's first, single-part commands), so a
 * CPU_SPIN_NS poll ran out just before it (oww_embedding: a wakeup per
 * inference).
 */
static void tile_poll(struct vnpu_dev *dev, struct gen_wait *g)
{
	for (;;) {
		if (atomic_load(&dev->split_job) &&
		    (!spin_on_cpu(work_or_no_split_job, g, CPU_JOB_SPIN_NS) ||
		     tile_has_work(g)))
			return;
		if (!spin_until(work_or_split_job, g) || tile_has_work(g))
			return;
	}
}

/* Wake the job's thread if it sleeps on @idle_cond (after a change it waits for). */
static void wake_job_thread(struct vnpu_dev *dev)
{
	if (!atomic_load(&dev->job_waits))
		return;
	pthread_mutex_lock(&dev->lock);
	pthread_cond_broadcast(&dev->idle_cond);
	pthread_mutex_unlock(&dev->lock);
}

/*
 * The job's thread waits for the helpers: polls @done(@arg) for
 * CPU_SPIN_NS, then sleeps on @idle_cond until it is true; a helper that
 * makes it true wakes it (wake_job_thread()).
 */
static void job_wait(struct vnpu_dev *dev, bool (*done)(const void *arg), const void *arg)
{
	if (spin_until(done, arg) ||
	    (atomic_load(&dev->split_job) && spin_on_cpu(done, arg, CPU_JOB_SPIN_NS)))
		return;
	pthread_mutex_lock(&dev->lock);
	atomic_store(&dev->job_waits, true);
	while (!done(arg))
		pthread_cond_wait(&dev->idle_cond, &dev->lock);
	atomic_store(&dev->job_waits, false);
	pthread_mutex_unlock(&dev->lock);
}

static bool no_helper_active(const void *arg)
{
	const struct vnpu_dev *dev = arg;

	return !atomic_load(&dev->active);
}

static bool parts_done(const void *arg)
{
	const struct cpu_work *w = arg;

	return atomic_load(&w->done_parts) >= w->parts;
}

/*
 * Take and run parts of the current command until none is left, as tile
 * @tile: 0 the job's thread, then the helpers.
 */
static void run_parts(struct vnpu_dev *dev, struct tile_scratch *s, uint32_t tile)
{
	struct cpu_work *w = &dev->work;
	struct vnpu_eng_ctx ctx = { .features = dev->features,
				    .epoch = next_epoch(s) };
	uint32_t part;
	int ret;

	while (cpu_split_next(&w->split, tile, &part)) {
		ret = ensure_scratch(s, w->scratch);
		if (!ret) {
			ctx.scratch = s->mem;
			ctx.scratch_size = s->size;
			ret = vnpu_exec_part(w->cmd, w->slot_base, part, w->parts, &ctx);
		}
		if (ret)
			atomic_store(&w->err, ret);
		if (atomic_fetch_add(&w->done_parts, 1) + 1 == w->parts && tile)
			wake_job_thread(dev);
	}
}

/*
 * Waits until @rt's turn is @want, as the other side's answer; false when
 * the round trip was aborted or @end passed.
 */
static bool rt_wait(struct cpu_rt *rt, uint32_t want, int64_t end)
{
	uint32_t i, turn;

	for (i = 0;; i++) {
		turn = atomic_load_explicit(&rt->turn, memory_order_acquire);
		if (turn == want)
			return true;
		if (turn == CPU_RT_ABORT)
			return false;
		cpu_relax();
		if (i % 64 == 63 && now_ns() >= end)
			return false;
	}
}

/* A helper's side of the round trip it took (CPU_RT_ROUNDS). */
static void rt_echo(struct vnpu_dev *dev)
{
	int64_t end = now_ns() + CPU_RT_LIMIT_NS;
	uint32_t i;

	for (i = 0; i < CPU_RT_ROUNDS * CPU_RT_TRIPS; i++) {
		if (!rt_wait(&dev->rt, 2 * i + 1, end))
			break;
		atomic_store_explicit(&dev->rt.turn, 2 * i + 2, memory_order_release);
	}
}

/* Takes the round trip asked of the helpers, if one is; true if so. */
static bool rt_take(struct vnpu_dev *dev)
{
	uint32_t asked = 1;

	if (atomic_load(&dev->rt.req) != 1 ||
	    !atomic_compare_exchange_strong(&dev->rt.req, &asked, 2))
		return false;
	rt_echo(dev);
	return true;
}

static int64_t median_ns(int64_t *v, uint32_t n)
{
	uint32_t i, j;

	for (i = 1; i < n; i++)
		for (j = i; j > 0 && v[j - 1] > v[j]; j--) {
			int64_t t = v[j];

			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return v[n / 2];
}

/*
 * The thread running a two-plan program's job over the tiles, between its
 * commands: a round trip with the first helper, at most every
 * CPU_LOAD_PERIOD_NS, into the plan the next jobs run (cpu_submit()).
 * A helper that is not polling is not asked (nor woken): false, to try
 * again before the next command; true when done or not due.
 */
static bool rt_probe(struct vnpu_dev *dev)
{
	int64_t now = now_ns(), last = atomic_load(&dev->rt_at), end, t0;
	int64_t round_ns[CPU_RT_ROUNDS], rt_ns = -1;
	uint32_t asked = 1, r, k, turn = 0;

	if (now - last < CPU_LOAD_PERIOD_NS)
		return true;
	if (!atomic_load(&dev->tiles[0].polling))
		return false;
	if (!atomic_compare_exchange_strong(&dev->rt_at, &last, now))
		return true;
	atomic_store(&dev->rt.turn, 0);
	atomic_store(&dev->rt.req, 1);
	end = now + CPU_RT_WAIT_NS;
	while (atomic_load(&dev->rt.req) == 1 && now_ns() < end)
		cpu_relax();
	/* Not taken: withdrawn, unless the helper takes it just now. */
	if (atomic_compare_exchange_strong(&dev->rt.req, &asked, 0))
		return true;
	end = now_ns() + CPU_RT_LIMIT_NS;
	for (r = 0; r < CPU_RT_ROUNDS; r++) {
		t0 = now_ns();
		for (k = 0; k < CPU_RT_TRIPS; k++, turn += 2) {
			atomic_store_explicit(&dev->rt.turn, turn + 1, memory_order_release);
			if (!rt_wait(&dev->rt, turn + 2, end))
				break;
		}
		if (k < CPU_RT_TRIPS)
			break;
		round_ns[r] = (now_ns() - t0) / CPU_RT_TRIPS;
	}
	if (r < CPU_RT_ROUNDS)
		atomic_store(&dev->rt.turn, CPU_RT_ABORT);
	else
		rt_ns = median_ns(round_ns, CPU_RT_ROUNDS);
	atomic_store(&dev->rt.req, 0);
	atomic_store(&dev->plan_own, cpu_plan_update(&dev->plan, rt_ns));
	dev->rt_last_ns = rt_ns;
	dev->rt_taken += rt_ns >= 0;
	dev->rt_own += atomic_load(&dev->plan_own);
	return true;
}

static struct vnpu_dev_job *take_job_locked(struct vnpu_dev *dev);
static void run_running_job_locked(struct vnpu_dev *dev, struct vnpu_dev_job *job,
				   struct tile_scratch *s);

/*
 * A helper tile: runs parts of each command it is woken for, or a queued
 * job of its own beside the running one (see the top of this file).
 */
static void *tile_main(void *arg)
{
	struct tile *t = arg;
	struct vnpu_dev *dev = t->dev;
	struct tile_scratch s = { 0 };
	struct gen_wait g = { dev, 0, t == dev->tiles };
	struct vnpu_dev_job *job;
	bool helped = false, ran_alone = false;
	uint64_t gen;

	cpu_role = CPU_BY_HELPER;
	for (;;) {
		/*
		 * The next command of the job this tile helped comes soon,
		 * mostly; after a job run alone, the next such job, as for the
		 * firmware thread.
		 */
		if ((helped || ran_alone) && !tile_has_work(&g)) {
			atomic_store(&t->polling, true);
			if (!ran_alone || !cpu_time_to_spare(dev) ||
			    !spin_on_cpu(tile_has_work, &g, CPU_JOB_SPIN_NS))
				tile_poll(dev, &g);
			atomic_store(&t->polling, false);
		}
		/* Asked while it polled: the first helper answers a round trip. */
		if (g.first && rt_take(dev)) {
			helped = true;
			continue;
		}
		ran_alone = false;
		gen = atomic_load(&dev->gen);
		if (gen != g.seen && !(gen & 1)) {
			/* In, unless the job's thread closed it meanwhile. */
			g.seen = gen;
			atomic_fetch_add(&dev->active, 1);
			if (atomic_load(&dev->gen) == gen)
				run_parts(dev, &s, (uint32_t)(t - dev->tiles) + 1);
			atomic_fetch_sub(&dev->active, 1);
			wake_job_thread(dev);
			helped = true;
			continue;
		}
		pthread_mutex_lock(&dev->lock);
		if (dev->stopping) {
			pthread_mutex_unlock(&dev->lock);
			break;
		}
		if (job_for_tile(dev)) {
			/* Then the command it may join is the other job's current one. */
			job = take_job_locked(dev);
			ran_alone = job->alone;
			helped = false;
			run_running_job_locked(dev, job, &s);
			pthread_mutex_unlock(&dev->lock);
			continue;
		}
		/* Counted before the last look: a job's thread then wakes it. */
		atomic_fetch_add(&dev->sleepers, 1);
		if (!tile_has_work(&g)) {
			t->sleeping = true;
			pthread_cond_wait(&t->wake, &dev->lock);
			t->sleeping = false;
		}
		atomic_fetch_sub(&dev->sleepers, 1);
		pthread_mutex_unlock(&dev->lock);
		/* Woken for a command, or for one to come: it polls for that. */
		helped = true;
	}
	vnpu_eng_host_free(s.mem, s.size);
	return NULL;
}

/* SPIN never ends on its own: it runs until the job is cancelled. */
static int run_spin(struct vnpu_dev_job *job)
{
	struct timespec ts = { 0, 1000000 };

	while (!atomic_load(&job->cancel))
		nanosleep(&ts, NULL);
	return 0;
}

/*
 * Wake @want sleeping tiles, but for those polling already, the first
 * ones first: the same tiles help with every command of a job (the others
 * sleep on), and a tile woken for nothing would cost a wakeup each time.
 * A tile counted here is no longer polling or sleeping for the next call.
 */
static void wake_tiles_locked(struct vnpu_dev *dev, uint32_t want)
{
	uint32_t i;

	for (i = 0; i + 1 < dev->num_threads && want; i++) {
		if (atomic_load(&dev->tiles[i].polling))
			want--;
	}
	for (i = 0; i + 1 < dev->num_threads && want; i++) {
		if (dev->tiles[i].sleeping) {
			dev->tiles[i].sleeping = false;
			pthread_cond_signal(&dev->tiles[i].wake);
			want--;
		}
	}
}

/* The helpers a new command of @parts parts needs: the job's thread is one tile. */
static void wake_helpers_locked(struct vnpu_dev *dev, uint32_t parts)
{
	wake_tiles_locked(dev, (parts < dev->num_threads ? parts : dev->num_threads) - 1);
}

static void wake_helpers(struct vnpu_dev *dev, uint32_t parts)
{
	pthread_mutex_lock(&dev->lock);
	wake_helpers_locked(dev, parts);
	pthread_mutex_unlock(&dev->lock);
}

static void wake_all_tiles_locked(struct vnpu_dev *dev)
{
	uint32_t i;

	for (i = 0; dev->tiles && i + 1 < dev->num_threads; i++)
		pthread_cond_signal(&dev->tiles[i].wake);
	pthread_cond_signal(&dev->fw_wake);
}

/*
 * Run one command on this thread (one tile, or one part) as one part:
 * the engine takes a range of units in one call as it would unit by unit,
 * and no tile waits for another's, so parts would only repeat each part's
 * set-up (the layer's shape, plan and scratch: resnet50_qdq's int8
 * convolutions ran a part per unit, 590 of them).
 */
static int run_cmd_alone(struct vnpu_dev *dev, struct vnpu_dev_job *job,
			 const struct vnpu_cmd_header *cmd, struct tile_scratch *s)
{
	struct vnpu_eng_ctx ctx = { .features = dev->features,
				    .epoch = next_epoch(s) };
	int ret;

	ret = ensure_scratch(s, vnpu_exec_scratch(cmd, 1, dev->features));
	ctx.scratch = s->mem;
	ctx.scratch_size = s->size;
	if (!ret)
		ret = vnpu_exec_part(cmd, job->slot_base, 0, 1, &ctx);
	return ret;
}

/*
 * The parts of command @i of @exe when its job runs over the tiles: while
 * the helpers poll, its fine parts (vnpu_exec_parts_fine()) or one part,
 * as its times choose (cpu_fine.h); else its parts.
 */
static uint32_t cmd_parts(struct vnpu_dev *dev, const struct vnpu_exe *exe, uint32_t i)
{
	if (exe->fine_parts[i] <= 1 || !atomic_load(&dev->split_job))
		return exe->parts[i];
	return cpu_fine_next(&exe->fine[i]) == CPU_FINE_SPLIT ? exe->fine_parts[i] :
	       exe->parts[i];
}

/*
 * Command @i of @exe took @ns @way (one part, or its fine parts over the
 * tiles); @exe->num_fine counts the commands that would split now.
 */
static void fine_took(struct vnpu_exe *exe, uint32_t i, enum cpu_fine_way way, uint64_t ns)
{
	struct cpu_fine *f = &exe->fine[i];
	bool splits = cpu_fine_splits(f);

	cpu_fine_took(f, way, ns);
	if (cpu_fine_splits(f) != splits) {
		if (splits)
			atomic_fetch_sub(&exe->num_fine, 1);
		else
			atomic_fetch_add(&exe->num_fine, 1);
	}
}

/* Run one command over every tile; called by the thread running the job. */
static int run_cmd(struct vnpu_dev *dev, struct vnpu_dev_job *job, uint32_t i,
		   struct tile_scratch *s)
{
	const struct vnpu_cmd_header *cmd = job->exe->cmds[i];
	struct vnpu_exe *exe = job->exe;
	struct cpu_work *w = &dev->work;
	uint32_t parts = cmd_parts(dev, exe, i);
	int64_t t0;
	int ret;

	if (cmd->opcode == VNPU_CMD_SPIN)
		return run_spin(job);
	/* Jobs side by side run unsplit: the tiles are theirs. */
	if (dev->num_threads == 1 || job->alone || job->whole ||
	    atomic_load(&dev->running) > 1)
		return run_cmd_alone(dev, job, cmd, s);
	/* One part: this thread alone, without the tiles' shared work. */
	if (parts <= 1) {
		/* The next one is split: helpers asleep wake while this one runs. */
		if (i + 1 < exe->num_cmds && atomic_load(&dev->sleepers) &&
		    atomic_load(&dev->split_job) && cmd_parts(dev, exe, i + 1) > 1)
			wake_helpers(dev, cmd_parts(dev, exe, i + 1));
		if (exe->fine_parts[i] <= 1)
			return run_cmd_alone(dev, job, cmd, s);
		t0 = now_ns();
		ret = run_cmd_alone(dev, job, cmd, s);
		fine_took(exe, i, CPU_FINE_ONE, (uint64_t)(now_ns() - t0));
		return ret;
	}

	t0 = now_ns();
	if (parts != exe->parts[i])
		atomic_fetch_add_explicit(&dev->fine_runs, 1, memory_order_relaxed);
	/* Closed: helpers that come now stay out; those inside leave. */
	atomic_fetch_add(&dev->gen, 1);
	job_wait(dev, no_helper_active, dev);
	w->cmd = cmd;
	w->slot_base = job->slot_base;
	w->parts = parts;
	w->scratch = vnpu_exec_scratch(cmd, parts, dev->features);
	cpu_split_init(&w->split, parts, dev->num_threads);
	atomic_store(&w->done_parts, 0);
	atomic_store(&w->err, 0);
	/* Open; then wake sleeping helpers, if there are. */
	atomic_fetch_add(&dev->gen, 1);
	if (atomic_load(&dev->sleepers))
		wake_helpers(dev, parts);

	run_parts(dev, s, 0);

	/* The other tiles end their last parts about when this one does. */
	job_wait(dev, parts_done, w);
	if (parts != exe->parts[i])
		fine_took(exe, i, CPU_FINE_SPLIT, (uint64_t)(now_ns() - t0));
	return atomic_load(&w->err);
}

static void run_job(struct vnpu_dev *dev, struct vnpu_dev_job *job, struct tile_scratch *s)
{
	struct vnpu_exe *exe = job->exe;
	int64_t start = now_ns(), t0, t1;
	bool split, timed, probe;
	uint32_t i;
	int ret;

	job->status = VNPU_OK;
	job->fault_cmd = -1;
	/*
	 * Helpers poll through a job with split commands (CPU_JOB_SPIN_NS),
	 * while the machine has time to spare. Or the job runs whole, as a
	 * small program's times chose, both ways.
	 */
	split = dev->num_threads > 1 && (exe->num_split || atomic_load(&exe->num_fine)) &&
		!job->alone && atomic_load(&dev->running) == 1;
	timed = split && exe->whole_timed;
	split = split && cpu_time_to_spare(dev);
	job->whole = timed && cpu_fine_next(&exe->whole) == CPU_FINE_ONE;
	if (job->whole)
		split = false;
	if (split) {
		atomic_store(&dev->split_job, true);
		if (cmd_parts(dev, exe, 0) <= 1 && atomic_load(&dev->sleepers))
			wake_helpers(dev, dev->num_threads);
	}
	probe = split && exe->two_plans && dev->plan_force == CPU_PLAN_AUTO;
	for (i = 0; i < exe->num_cmds; i++) {
		if (atomic_load(&job->cancel)) {
			job->status = VNPU_CANCELLED;
			snprintf(job->message, sizeof(job->message),
				 "CPU: the job was cancelled");
			break;
		}
		if (probe && rt_probe(dev))
			probe = false;
		/* Each command's time when profiling: a clock read costs. */
		t0 = job->cmd_ns ? now_ns() : 0;
		ret = run_cmd(dev, job, i, s);
		t1 = job->cmd_ns ? now_ns() : 0;
		if (job->cmd_ns)
			job->cmd_ns[i] = (uint64_t)(t1 - t0);
		if (ret == -ENOMEM) {
			job->status = VNPU_OUT_OF_MEMORY;
			snprintf(job->message, sizeof(job->message),
				 "CPU: no scratch memory for command %u", i);
			break;
		}
		/*
		 * The stream passed the checker when it was compiled: what
		 * fails with -EINVAL now is the data (Gather's indices,
		 * RoiAlign's boxes, TfIdf's counts).
		 */
		if (ret) {
			job->status = VNPU_DEVICE_FAULT;
			job->fault_cmd = i;
			snprintf(job->message, sizeof(job->message),
				 "CPU: command %u faulted%s (error %d)", i,
				 ret == -EINVAL ? ": a value of its input out of range "
				 "(an index, a box or a count)" : "", ret);
			break;
		}
	}
	if (job->status == VNPU_OK && atomic_load(&job->cancel)) {
		job->status = VNPU_CANCELLED;
		snprintf(job->message, sizeof(job->message), "CPU: the job was cancelled");
	}
	if (split)
		atomic_store(&dev->split_job, false);
	job->total_ns = (uint64_t)(now_ns() - start);
	atomic_store(&exe->last_ns, job->total_ns ? job->total_ns : 1);
	if (timed && job->status == VNPU_OK)
		cpu_fine_took(&exe->whole, job->whole ? CPU_FINE_ONE : CPU_FINE_SPLIT,
			      job->total_ns);
}

/* Account the time since the running count last changed, then change it by @delta. */
static void stats_running_locked(struct cpu_stats *st, int64_t now, int delta)
{
	if (st->running)
		st->busy_ns += now - st->last_ns;
	if (st->running > 1)
		st->both_ns += now - st->last_ns;
	st->last_ns = now;
	st->running += delta;
}

static void stats_start_locked(struct vnpu_dev *dev, struct vnpu_dev_job *job)
{
	struct cpu_stats *st = &dev->stats;
	int64_t now = now_ns();
	uint64_t waited;

	st->started++;
	st->beside += st->running > 0;
	st->by[cpu_role]++;
	if (job->queued_ns) {
		waited = (uint64_t)(now - job->queued_ns);
		st->queued++;
		st->queue_ns += waited;
		st->late += waited >= CPU_LATE_NS;
		if (waited > st->max_queue_ns)
			st->max_queue_ns = waited;
	}
	stats_running_locked(st, now, 1);
}

/* Start @job (the queue's head, or one run at submit): it runs from now. */
static void start_job_locked(struct vnpu_dev *dev, struct vnpu_dev_job *job)
{
	stats_start_locked(dev, job);
	if (dev->run_tail)
		dev->run_tail->next = job;
	else
		dev->run_head = job;
	dev->run_tail = job;
	atomic_fetch_add(&dev->running, 1);
}

static struct vnpu_dev_job *take_job_locked(struct vnpu_dev *dev)
{
	struct vnpu_dev_job *job = dev->head;

	dev->head = job->next;
	if (!dev->head)
		dev->tail = NULL;
	job->next = NULL;
	atomic_fetch_sub(&dev->queued, 1);
	start_job_locked(dev, job);
	return job;
}

/*
 * @job's thread is done with it. Jobs retire in the order they started,
 * which is submission order: a job done before an older one waits for it.
 * Retired is what the waiters and the completion context see.
 */
static void end_job_locked(struct vnpu_dev *dev, struct vnpu_dev_job *job, bool serve)
{
	struct vnpu_dev_job *j;

	job->ended = true;
	atomic_fetch_sub(&dev->running, 1);
	stats_running_locked(&dev->stats, now_ns(), -1);
	while (dev->run_head && dev->run_head->ended) {
		j = dev->run_head;
		dev->run_head = j->next;
		if (!dev->run_head)
			dev->run_tail = NULL;
		j->next = NULL;
		atomic_store(&j->done, true);
		pthread_cond_broadcast(&j->done_cond);
		if (!serve)
			completion_job_ended(&dev->completion);
	}
}

/*
 * A device thread that ended a job it serves (cpu_served()) calls the
 * functions of the ended jobs itself, then takes its next job: no thread
 * is woken per job. Meanwhile the firmware thread counts as away: a helper
 * tile then runs the queue, as a function (a callback) may wait for a
 * queued job. Called and returns with @dev->lock held.
 */
static void serve_locked(struct vnpu_dev *dev)
{
	bool fw = cpu_role == CPU_BY_FIRMWARE;

	if (fw) {
		atomic_store(&dev->fw_away, true);
		if (dev->head)
			wake_tiles_locked(dev, 1);
	}
	pthread_mutex_unlock(&dev->lock);
	completion_serve(&dev->completion);
	pthread_mutex_lock(&dev->lock);
	if (fw)
		atomic_store(&dev->fw_away, false);
}

/*
 * Run a started job on this thread (the firmware thread, a helper tile
 * or the submitter) with its scratch @s, then end it; a device thread,
 * unless a job's function runs there already, then serves the ends of a
 * job run alone (serve_locked(), cpu_served()). Called and returns with
 * @dev->lock held.
 */
static void run_running_job_locked(struct vnpu_dev *dev, struct vnpu_dev_job *job,
				   struct tile_scratch *s)
{
	bool serve = job->alone && (cpu_role == CPU_BY_FIRMWARE || cpu_role == CPU_BY_HELPER) &&
		     !completion_in_job_fn();

	pthread_mutex_unlock(&dev->lock);
	run_job(dev, job, s);
	pthread_mutex_lock(&dev->lock);
	end_job_locked(dev, job, serve);
	if (serve)
		serve_locked(dev);
}

static bool job_queued(const void *arg)
{
	const struct vnpu_dev *dev = arg;

	return atomic_load(&dev->queued);
}

/*
 * The firmware: starts the queued jobs in submission order, each when it
 * is done with the last (a helper tile may have started the next one
 * meanwhile). After a short job it polls for the next one before it
 * sleeps: short jobs come back to back from requests kept in flight
 * (each callback starts its request again), and a wakeup per job would
 * cost more than the job.
 */
static void *fw_main(void *arg)
{
	struct vnpu_dev *dev = arg;
	struct vnpu_dev_job *job;
	bool was_short = false, more = false, seen;
	int64_t poll_end = 0;

	cpu_role = CPU_BY_FIRMWARE;
	pthread_mutex_lock(&dev->lock);
	for (;;) {
		if (was_short && !dev->stopping && !dev->head) {
			pthread_mutex_unlock(&dev->lock);
			seen = more && cpu_time_to_spare(dev) &&
			       spin_on_cpu(job_queued, dev, poll_end - now_ns());
			if (!seen)
				spin_until(job_queued, dev);
			pthread_mutex_lock(&dev->lock);
			/* The completion wait took the job it saw: poll on for the next. */
			if (seen && !dev->head && !dev->stopping)
				continue;
		}
		while (!dev->stopping && !dev->head) {
			dev->fw_idle = true;
			pthread_cond_wait(&dev->fw_wake, &dev->lock);
			dev->fw_idle = false;
		}
		if (dev->stopping)
			break;
		job = take_job_locked(dev);
		was_short = exe_brief(job->exe);
		more = job->alone;
		run_running_job_locked(dev, job, &dev->fw_scratch);
		poll_end = now_ns() + CPU_JOB_SPIN_NS;
	}
	pthread_mutex_unlock(&dev->lock);
	return NULL;
}

static void free_tiles(struct vnpu_dev *dev)
{
	uint32_t i;

	for (i = 0; dev->tiles && i + 1 < dev->num_threads; i++)
		pthread_cond_destroy(&dev->tiles[i].wake);
	free(dev->tiles);
	dev->tiles = NULL;
}

/*
 * Start the firmware thread and the helpers when a program is first
 * loaded; called with dev->lock held.
 */
static vnpu_status start_threads_locked(struct vnpu_dev *dev)
{
	uint32_t helpers = dev->num_threads - 1, i;
	bool fw;

	if (dev->started)
		return VNPU_OK;
	if (!dev->cpus)
		cpu_load_init(dev);
	dev->tiles = calloc(helpers ? helpers : 1, sizeof(*dev->tiles));
	if (!dev->tiles)
		return host->error(VNPU_OUT_OF_MEMORY, "CPU: out of memory");
	for (i = 0; i < helpers; i++) {
		dev->tiles[i].dev = dev;
		pthread_cond_init(&dev->tiles[i].wake, NULL);
	}
	fw = !pthread_create(&dev->fw_thread, NULL, fw_main, dev);
	for (i = 0; fw && i < helpers; i++) {
		if (pthread_create(&dev->tiles[i].thread, NULL, tile_main, &dev->tiles[i]))
			break;
	}
	if (!fw || i < helpers) {
		dev->stopping = true;
		wake_all_tiles_locked(dev);
		pthread_mutex_unlock(&dev->lock);
		while (i--)
			pthread_join(dev->tiles[i].thread, NULL);
		if (fw)
			pthread_join(dev->fw_thread, NULL);
		pthread_mutex_lock(&dev->lock);
		dev->stopping = false;
		free_tiles(dev);
		return host->error(VNPU_DEVICE_ERROR, "CPU: cannot start the device threads");
	}
	dev->started = true;
	return VNPU_OK;
}

/* ---- jobs ---- */

static void cpu_job_release(struct vnpu_dev_job *job)
{
	pthread_cond_destroy(&job->done_cond);
	free(job->cmd_ns);
	free(job->slot_base);
	free(job);
}

/* Run @job on this thread, the submitter's: the only job that can run at submit. */
static bool run_now_locked(struct vnpu_dev *dev, struct vnpu_dev_job *job)
{
	start_job_locked(dev, job);
	run_running_job_locked(dev, job, &dev->scratch);
	return true;
}

/*
 * The shortcut (see the top of this file): run the job on the submitting
 * thread when the device is idle and its caller waits for it at once, the
 * job is short, or the caller is the device's completion thread inside a
 * job's function and the program's last run was brief. Called and
 * returns with @dev->lock held; true when the job ran (it has ended, with
 * the status, timings and cancel handling of any other).
 */
static bool run_at_submit_locked(struct vnpu_dev *dev, struct vnpu_dev_job *job,
				 uint32_t flags)
{
	if (dev->head || dev->run_head)
		return false;
	if (flags & VNPU_SUBMIT_CALLER_WAITS)
		return run_now_locked(dev, job);
	/* More jobs follow: they run side by side (see the top of this file). */
	if (job->alone)
		return false;
	/*
	 * Not a callback's next inference while other requests' jobs wait for
	 * their functions: the completion thread has their work to do, and
	 * the tiles run the job beside it (3 requests of a 0.07 ms model ran
	 * all on that one thread, at 0.6x the FPS).
	 */
	if (completion_in_job_fn())
		return !completion_pending(&dev->completion) && exe_brief(job->exe) &&
		       run_now_locked(dev, job);
	return job->exe->is_short && run_now_locked(dev, job);
}

/* The other arena plan while the tiles sit apart, if the slots hold it. */
static bool run_alt(struct vnpu_dev *dev, const struct vnpu_exe *exe,
		    struct vnpu_buf *const *slots)
{
	uint32_t i;

	if (!exe->alt || dev->plan_force == CPU_PLAN_GREEDY ||
	    (dev->plan_force == CPU_PLAN_AUTO && !atomic_load(&dev->plan_own)))
		return false;
	for (i = 0; i < exe->num_slots; i++)
		if (slots[i]->size < exe->alt->slot_descs[i].size)
			return false;
	return true;
}

static vnpu_status cpu_submit(struct vnpu_exe *exe, struct vnpu_buf *const *slots,
			      uint32_t num_slots, bool profile, uint32_t flags,
			      struct vnpu_job_fences *fences, struct vnpu_dev_job **out)
{
	struct vnpu_dev *dev = exe->dev;
	struct vnpu_dev_job *job;
	vnpu_status st;
	uint32_t i;

	if (fences)
		return host->error(VNPU_UNSUPPORTED, "CPU: the device has no fences");
	if (num_slots != exe->num_slots)
		return host->error(VNPU_INVALID_ARGUMENT, "CPU: %u slots given, the program has %u",
				   num_slots, exe->num_slots);
	for (i = 0; i < num_slots; i++) {
		if (!slots[i] || slots[i]->size < exe->slot_descs[i].size)
			return host->error(VNPU_INVALID_ARGUMENT,
					   "CPU: slot %u is missing or smaller than the program needs",
					   i);
	}
	job = calloc(1, sizeof(*job));
	if (!job)
		return host->error(VNPU_OUT_OF_MEMORY, "CPU: out of memory");
	pthread_cond_init(&job->done_cond, &dev->done_attr);
	job->slot_base = calloc(num_slots ? num_slots : 1, sizeof(void *));
	if (profile)
		job->cmd_ns = calloc(exe->num_cmds ? exe->num_cmds : 1, sizeof(uint64_t));
	if (!job->slot_base || (profile && !job->cmd_ns)) {
		cpu_job_release(job);
		return host->error(VNPU_OUT_OF_MEMORY, "CPU: out of memory");
	}
	for (i = 0; i < num_slots; i++)
		job->slot_base[i] = slots[i]->map;
	if (run_alt(dev, exe, slots))
		exe = exe->alt;
	job->exe = exe;
	job->profile = profile;
	job->alone = (flags & VNPU_SUBMIT_MORE_IN_FLIGHT) && dev->num_threads > 1 &&
		     exe_brief(exe) && cpu_time_to_spare(dev);
	atomic_init(&job->cancel, false);
	atomic_init(&job->done, false);

	pthread_mutex_lock(&dev->lock);
	st = start_threads_locked(dev);
	if (st != VNPU_OK) {
		pthread_mutex_unlock(&dev->lock);
		cpu_job_release(job);
		return st;
	}
	if (!run_at_submit_locked(dev, job, flags)) {
		if (dev->tail)
			dev->tail->next = job;
		else
			dev->head = job;
		dev->tail = job;
		job->queued_ns = now_ns();
		atomic_fetch_add(&dev->queued, 1);
		/*
		 * The firmware thread if it is free, else a free helper tile;
		 * none for a brief job beside others submitted from a job's
		 * function: the device thread serving it takes the job next,
		 * or the completion context's wait (cpu_wait_end()) if no
		 * other thread did; a helper tile if the firmware thread is
		 * away in jobs' functions.
		 */
		if (dev->fw_idle)
			pthread_cond_signal(&dev->fw_wake);
		else if (atomic_load(&dev->fw_away) ||
			 (atomic_load(&dev->running) && !(job->alone && completion_in_job_fn())))
			wake_tiles_locked(dev, 1);
	}
	pthread_mutex_unlock(&dev->lock);
	*out = job;
	return VNPU_OK;
}

static vnpu_status cpu_wait(struct vnpu_dev_job *job, int64_t deadline_ns,
			    uint64_t *cmd_ns, uint64_t *total_ns)
{
	struct vnpu_dev *dev = job->exe->dev;
	struct timespec ts;
	bool done;
	int ret = 0;

	ts.tv_sec = deadline_ns / 1000000000;
	ts.tv_nsec = deadline_ns % 1000000000;
	pthread_mutex_lock(&dev->lock);
	while (!job->done && ret != ETIMEDOUT) {
		if (deadline_ns == INT64_MAX)
			pthread_cond_wait(&job->done_cond, &dev->lock);
		else
			ret = pthread_cond_timedwait(&job->done_cond, &dev->lock, &ts);
	}
	done = job->done;	/* set under the lock */
	pthread_mutex_unlock(&dev->lock);
	if (!done)
		return host->error(VNPU_NOT_READY, "CPU: the job is still running");
	if (job->status != VNPU_OK)
		return host->error(job->status, "%s", job->message);
	if (job->profile && cmd_ns)
		memcpy(cmd_ns, job->cmd_ns, job->exe->num_cmds * sizeof(uint64_t));
	if (total_ns)
		*total_ns = job->total_ns;
	return VNPU_OK;
}

static bool cpu_fault_cmd(struct vnpu_dev_job *job, uint32_t *out)
{
	if (job->fault_cmd < 0)
		return false;
	*out = (uint32_t)job->fault_cmd;
	return true;
}

/*
 * The completion context calls @fn once @job ended: one of its threads,
 * or the device thread that ended a job run alone (serve_locked()). @fn
 * may wait for a queued job: while the firmware thread is in it, a helper
 * tile runs the queue.
 */
static vnpu_status cpu_notify(struct vnpu_dev_job *job, void (*fn)(void *arg), void *arg)
{
	struct vnpu_dev *dev = job->exe->dev;
	bool done;

	pthread_mutex_lock(&dev->lock);
	done = job->done;
	pthread_mutex_unlock(&dev->lock);
	if (completion_add(&dev->completion, &job->done_item, done, fn, arg) != VNPU_OK)
		return host->error(VNPU_GENERAL_ERROR, "CPU: cannot start a completion thread");
	return VNPU_OK;
}

static bool job_done(const void *arg)
{
	const struct vnpu_dev_job *job = arg;

	return atomic_load(&job->done);
}

/*
 * A queued job the completion wait may run: the queue's head, brief (a
 * long one would hold the other jobs' ends back), while fewer jobs run
 * than there are tiles.
 */
static bool job_for_wait_locked(struct vnpu_dev *dev)
{
	return dev->head && !dev->stopping && exe_brief(dev->head->exe) &&
	       atomic_load(&dev->running) < dev->num_threads;
}

/*
 * The completion context's wait: until the job's thread marked it done.
 * Until then the waiting thread is one of the device's tiles: it runs the
 * queued jobs no other thread has started (job_for_wait_locked()), in
 * queue order, so the job of a request that a callback started again
 * runs beside the job waited for rather than after it, and no thread is
 * woken for it. A short job's end is polled first, as the NPU driver's
 * WAIT polls a short job's fence: it ends within microseconds, and
 * waking the sleeping waiter would cost more than the job.
 */
static void cpu_wait_end(struct completion_item *item)
{
	struct vnpu_dev_job *job = (struct vnpu_dev_job *)((char *)item -
		offsetof(struct vnpu_dev_job, done_item));
	struct vnpu_dev *dev = job->exe->dev;

	if (!atomic_load(&job->done) && atomic_load(&dev->queued)) {
		cpu_role = CPU_BY_WAIT;
		pthread_mutex_lock(&dev->lock);
		while (!job->done && job_for_wait_locked(dev))
			run_running_job_locked(dev, take_job_locked(dev), &dev->wait_scratch);
		pthread_mutex_unlock(&dev->lock);
		cpu_role = CPU_BY_SUBMIT;
	}
	if (exe_brief(job->exe) && spin_until(job_done, job))
		return;
	pthread_mutex_lock(&dev->lock);
	while (!job->done)
		pthread_cond_wait(&job->done_cond, &dev->lock);
	pthread_mutex_unlock(&dev->lock);
}

static bool cpu_ended(struct completion_item *item)
{
	const struct vnpu_dev_job *job = (const struct vnpu_dev_job *)((const char *)item -
		offsetof(struct vnpu_dev_job, done_item));

	return atomic_load(&job->done);
}

/*
 * A job run alone is served by the device thread that ends it
 * (serve_locked()), or ends on the completion wait that ran it, which
 * waits for an older job and comes to it next.
 */
static bool cpu_served(struct completion_item *item)
{
	const struct vnpu_dev_job *job = (const struct vnpu_dev_job *)((const char *)item -
		offsetof(struct vnpu_dev_job, done_item));

	return job->alone;
}

static void cpu_cancel(struct vnpu_dev_job *job)
{
	atomic_store(&job->cancel, true);
}

static void cpu_job_free(struct vnpu_dev_job *job)
{
	struct vnpu_dev *dev;

	if (!job)
		return;
	dev = job->exe->dev;
	pthread_mutex_lock(&dev->lock);
	if (!job->done)
		atomic_store(&job->cancel, true);
	while (!job->done)
		pthread_cond_wait(&job->done_cond, &dev->lock);
	pthread_mutex_unlock(&dev->lock);
	cpu_job_release(job);
}

/* ---- the device ---- */

static void cpu_get_info(struct vnpu_dev *dev, struct vnpu_device_info *out)
{
	pthread_mutex_lock(&dev->lock);		/* cpu_set_threads() rewrites it */
	*out = dev->info;
	pthread_mutex_unlock(&dev->lock);
}

static vnpu_status cpu_set_threads(struct vnpu_dev *dev, uint32_t n);

static void log_stats(struct vnpu_dev *dev)
{
	const struct cpu_stats *st = &dev->stats;

	if (!st->started)
		return;
	host->log(VNPU_LOG_DEBUG,
		  "CPU: %llu jobs, %llu started beside another (two or more ran %.1f%% of %.3f ms busy); "
		  "started at submit %llu, by the firmware %llu, a helper %llu, the completion wait %llu; "
		  "%llu queued: %.1f us to start on average, %.1f us at most, %llu after %d us or more",
		  (unsigned long long)st->started, (unsigned long long)st->beside,
		  st->busy_ns ? 100.0 * (double)st->both_ns / (double)st->busy_ns : 0.0,
		  (double)st->busy_ns / 1e6, (unsigned long long)st->by[CPU_BY_SUBMIT],
		  (unsigned long long)st->by[CPU_BY_FIRMWARE], (unsigned long long)st->by[CPU_BY_HELPER],
		  (unsigned long long)st->by[CPU_BY_WAIT], (unsigned long long)st->queued,
		  st->queued ? (double)st->queue_ns / (double)st->queued / 1e3 : 0.0,
		  (double)st->max_queue_ns / 1e3, (unsigned long long)st->late, CPU_LATE_NS / 1000);
	host->log(VNPU_LOG_DEBUG,
		  "CPU: time to spare in %llu of %llu load readings; other processes used up to %.2f CPUs; "
		  "%llu commands ran in fine parts",
		  (unsigned long long)dev->load_spare, (unsigned long long)dev->load_answers,
		  (double)dev->others_max_mcpu / 1e3,
		  (unsigned long long)atomic_load(&dev->fine_runs));
	if (dev->rt_taken)
		host->log(VNPU_LOG_DEBUG,
			  "CPU: %llu round trips between tiles, %llu of them then on the own-bytes "
			  "arena plan; the last %lld ns",
			  (unsigned long long)dev->rt_taken, (unsigned long long)dev->rt_own,
			  (long long)dev->rt_last_ns);
}

static void cpu_destroy(struct vnpu_plugin *p)
{
	struct vnpu_dev *dev = plugin_dev(p);
	uint32_t i;

	pthread_mutex_lock(&dev->lock);
	dev->stopping = true;
	wake_all_tiles_locked(dev);
	pthread_mutex_unlock(&dev->lock);
	if (dev->started) {
		pthread_join(dev->fw_thread, NULL);
		for (i = 0; i + 1 < dev->num_threads; i++)
			pthread_join(dev->tiles[i].thread, NULL);
	}
	free_tiles(dev);
	if (dev->cpus)
		CPU_FREE(dev->cpus);
	completion_fini(&dev->completion);
	log_stats(dev);
	vnpu_eng_host_free(dev->scratch.mem, dev->scratch.size);
	vnpu_eng_host_free(dev->fw_scratch.mem, dev->fw_scratch.size);
	vnpu_eng_host_free(dev->wait_scratch.mem, dev->wait_scratch.size);
	pthread_cond_destroy(&dev->fw_wake);
	pthread_cond_destroy(&dev->idle_cond);
	pthread_condattr_destroy(&dev->done_attr);
	pthread_mutex_destroy(&dev->lock);
	free(dev);
}

static const struct vnpu_plugin_ops cpu_ops = {
	.destroy = cpu_destroy,
	.get_info = cpu_get_info,
	.buf_create = cpu_buf_create,
	.buf_free = cpu_buf_free,
	.buf_write = cpu_buf_write,
	.buf_read = cpu_buf_read,
	.buf_wrap = cpu_buf_wrap,
	.exe_load = cpu_exe_load,
	.exe_free = cpu_exe_free,
	.exe_load_alt = cpu_exe_load_alt,
	.submit = cpu_submit,
	.wait = cpu_wait,
	.fault_cmd = cpu_fault_cmd,
	.cancel = cpu_cancel,
	.job_free = cpu_job_free,
	.notify = cpu_notify,
	.set_threads = cpu_set_threads,
};

/* The CPU's model name from /proc/cpuinfo, or a plain one. */
static void cpu_model_name(char *buf, size_t size)
{
	char line[256];
	char *p;
	FILE *f = fopen("/proc/cpuinfo", "r");

	snprintf(buf, size, "host CPU");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "model name", 10))
			continue;
		p = strchr(line, ':');
		if (!p)
			break;
		p += 1 + strspn(p + 1, " \t");
		p[strcspn(p, "\n")] = '\0';
		snprintf(buf, size, "%.*s", (int)(size - 1), p);
		break;
	}
	fclose(f);
}

/* The name, which says the thread count, and the tiles: after a change. */
static void cpu_describe_threads(struct vnpu_dev *dev)
{
	struct vnpu_device_info *info = &dev->info;
	char model[64];

	cpu_model_name(model, sizeof(model));
	snprintf(info->full_name, sizeof(info->full_name), "vnpu CPU device (%s, %u threads%s)",
		 model, dev->num_threads,
		 !(dev->features & VNPU_ENG_F_AVX2_FMA) ? "" :
		 dev->features & VNPU_ENG_F_AVX512 ? ", AVX-512" : ", AVX2+FMA");
	info->tiles = dev->num_threads;
}

/*
 * INFERENCE_NUM_THREADS: @n threads (0: the default). The threads start
 * with the device's first job, so the count is set before it: once they
 * run, only the same count is taken.
 */
static vnpu_status cpu_set_threads(struct vnpu_dev *dev, uint32_t n)
{
	vnpu_status st = VNPU_OK;

	if (!n)
		n = cpu_default_threads();
	if (n > CPU_MAX_THREADS)
		return host->error(VNPU_INVALID_ARGUMENT, "CPU: %u threads, at most %d", n,
				   CPU_MAX_THREADS);
	pthread_mutex_lock(&dev->lock);
	if (n == dev->num_threads)
		goto out;
	if (dev->started) {
		st = host->error(VNPU_BUSY,
				 "CPU: its %u threads run already: set INFERENCE_NUM_THREADS before the device's first inference",
				 dev->num_threads);
		goto out;
	}
	dev->num_threads = n;
	cpu_describe_threads(dev);
out:
	pthread_mutex_unlock(&dev->lock);
	return st;
}

static void cpu_fill_info(struct vnpu_dev *dev)
{
	struct vnpu_device_info *info = &dev->info;

	dev->num_threads = cpu_default_threads();
	dev->features |= vnpu_eng_host_features();

	snprintf(info->name, sizeof(info->name), "CPU");
	cpu_describe_threads(dev);
	snprintf(info->architecture, sizeof(info->architecture), "vnpu-cpu");
	snprintf(info->device_version, sizeof(info->device_version), "1.0");
	snprintf(info->driver_version, sizeof(info->driver_version), "none (in process)");
	snprintf(info->capabilities, sizeof(info->capabilities),
		 "FP32 FP16 BF16 INT8 INT32 INT64 EXPORT_IMPORT%s%s%s",
		 dev->features & VNPU_ENG_F_AVX2_FMA ? " AVX2_FMA" : "",
		 dev->features & VNPU_ENG_F_AVX512_BF16 ? " AVX512_BF16" : "",
		 dev->features & VNPU_ENG_F_AVX512_FP16 ? " AVX512_FP16" : "");
	snprintf(info->device_id, sizeof(info->device_id), "0");
	info->uapi_version = 0;
	info->max_requests = CPU_MAX_REQUESTS;
	info->optimal_requests = 2;
}

CPU_VISIBLE vnpu_status vnpu_plugin_create(const struct vnpu_host *h,
					   struct vnpu_plugin **out);

CPU_VISIBLE vnpu_status vnpu_plugin_create(const struct vnpu_host *h,
					   struct vnpu_plugin **out)
{
	struct vnpu_dev *dev;

	if (!h || h->abi_version != VNPU_PLUGIN_ABI_VERSION)
		return VNPU_WRONG_VERSION;
	host = h;
	/* Aligned for the tiles' runs of parts (struct cpu_split). */
	dev = aligned_alloc(_Alignof(struct vnpu_dev), sizeof(*dev));
	if (!dev)
		return host->error(VNPU_OUT_OF_MEMORY, "CPU: out of memory");
	memset(dev, 0, sizeof(*dev));
	pthread_mutex_init(&dev->lock, NULL);
	pthread_condattr_init(&dev->done_attr);
	pthread_condattr_setclock(&dev->done_attr, CLOCK_MONOTONIC);
	pthread_cond_init(&dev->idle_cond, NULL);
	pthread_cond_init(&dev->fw_wake, NULL);
	atomic_init(&dev->next_buf_id, 1);
	atomic_init(&dev->queued, 0);
	atomic_init(&dev->running, 0);
	completion_init(&dev->completion, cpu_wait_end, cpu_ended, cpu_served);
	cpu_fill_info(dev);

	dev->self = dev;
	dev->plugin.ops = &cpu_ops;
	dev->plugin.type = "CPU";
	dev->plugin.num_devices = 1;
	dev->plugin.devices = &dev->self;
	*out = &dev->plugin;
	return VNPU_OK;
}

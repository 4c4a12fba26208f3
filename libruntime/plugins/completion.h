/* SPDX-License-Identifier: MIT */
/*
 * A device's completion context: the threads that call its jobs' notify
 * functions (plugin.h, notify), in the order the jobs were handed to it.
 * Built into each plugin: the NPU's and the CPU device's notified jobs
 * all end here.
 *
 * One thread, the waiter, waits for the job at the head until it ends,
 * takes it off the queue and calls its function. While it is in the
 * function, another thread (started on demand) becomes the waiter for the
 * jobs behind, so that a function that waits for another job of the
 * device, or frees one, never waits for its own thread: at once on a
 * device that cannot tell when a job ends (completion_init()'s @ended is
 * NULL), else only once a job queued behind has ended while the function
 * runs (completion_job_ended()). A function that only submits the next
 * jobs returns first, and its thread waits for them itself: no thread is
 * woken per job.
 *
 * A completion thread inside a job's function that submits a job which
 * ended at once (it ran at submit) calls that job's function itself: it
 * is the device's completion context already, and a handoff per inference
 * would cost more than the job.
 *
 * A device may serve its jobs' ends itself: the device thread that ends a
 * job that completion_init()'s @served says it serves calls
 * completion_serve(), which calls the functions of the ended jobs at the
 * head, then takes its next job. No thread of the context waits for such
 * a job (they sleep), so a job's end costs no handoff at all. Such a
 * thread is then, for a while, the context's thread inside a function.
 */
#ifndef VNPU_PLUGIN_COMPLETION_H
#define VNPU_PLUGIN_COMPLETION_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <vnpu/vnpu_common.h>

/* Threads of one context at most: each one past the first is in a function. */
#define COMPLETION_MAX_THREADS 16

/* What a job embeds to be queued on a context. */
struct completion_item {
	struct completion_item *next;
	void (*fn)(void *arg);
	void *arg;
};

struct completion {
	/* Return once @item's job has ended (the device's own wait). */
	void (*wait_end)(struct completion_item *item);
	/* Whether @item's job has ended, without waiting; NULL: cannot tell. */
	bool (*ended)(struct completion_item *item);
	/*
	 * Whether the device thread that ends @item's job calls
	 * completion_serve() (so none of these threads need wait for it);
	 * NULL: never. Needs @ended.
	 */
	bool (*served)(struct completion_item *item);
	/* Jobs are queued with no waiter: completion_job_ended() finds one. */
	atomic_bool want_waiter;
	pthread_mutex_t lock;		/* protects everything below */
	pthread_cond_t wake;		/* a job queued without a waiter, or stopping */
	struct completion_item *head, *tail;
	bool waiter;			/* a thread waits for @head */
	bool stopping;
	uint32_t idle;			/* threads sleeping on @wake */
	uint32_t num_threads;
	pthread_t threads[COMPLETION_MAX_THREADS];
};

void completion_init(struct completion *c, void (*wait_end)(struct completion_item *item),
		     bool (*ended)(struct completion_item *item),
		     bool (*served)(struct completion_item *item));
/*
 * Have @fn(@arg) called once @item's job, which was submitted, ended
 * (@ended: it has already): queued, or at once on a device thread inside
 * a job's function. VNPU_GENERAL_ERROR when no thread could be started
 * for it (then it is not queued).
 */
vnpu_status completion_add(struct completion *c, struct completion_item *item, bool ended,
			   void (*fn)(void *arg), void *arg);
/*
 * Whether this thread is a completion thread inside a job's function (a
 * callback's next inference is being submitted from it).
 */
bool completion_in_job_fn(void);
/*
 * The device says a job of @c ended (after making @ended() true for it):
 * a thread becomes the waiter if queued jobs have none. Cheap when they
 * have one; the caller may hold the device's lock.
 */
void completion_job_ended(struct completion *c);
/*
 * A device thread that ended a job @served says it serves, outside the
 * device's locks: call the functions of the ended jobs at the head while
 * no thread of @c waits for the head (completion_job_ended() is not
 * needed for the jobs it ended).
 */
void completion_serve(struct completion *c);
/* Whether a job waits on @c for its end or its function to be called. */
bool completion_pending(struct completion *c);
/* Stop and join the threads; no job is queued any more. */
void completion_fini(struct completion *c);

#endif /* VNPU_PLUGIN_COMPLETION_H */

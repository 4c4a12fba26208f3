// SPDX-License-Identifier: MIT
/*
 * Asynchronous infer requests: start_async, wait, wait_for, callbacks and
 * cancel, over the stage functions of infer_request.c, and the threads
 * the stages run on:
 *
 *   task executor       preprocess, upload, submit (a few threads)
 *   completion context  the device's (plugin.h, notify): when a job ends,
 *                       download, postprocess, then the run's callback
 *   callback executor   the callbacks of runs that ended elsewhere, and of
 *                       runs that ended while another callback ran
 *
 * So the host stages of one request overlap the device work of another.
 * A run whose host stages take less time than handing them to a thread
 * does them on the caller's thread (both times are measured as it goes).
 *
 * Every run ends one way: its submit hands the job to the device with
 * notify, and the device calls job_ended() on its completion context once
 * the job ended (plugins/completion.c: a thread that waits for the
 * device's jobs in submission order, on the NPU and the CPU alike, or on
 * the CPU the device thread that ended a job run beside others), never
 * on the submitting thread. A submit made while other runs are in flight
 * says so (VNPU_SUBMIT_MORE_IN_FLIGHT), so that the CPU device queues the
 * job to run beside the others rather than at once on this thread.
 * job_ended() finishes the segment there,
 * callback included when no other callback runs, and the callback's next
 * submit queues the next job: no thread handoff per inference. Such a thread hands a request
 * freed by its own callback to the callback executor, as freeing the last
 * one may unload the device. A callback there may wait for, or free,
 * another request in flight: the device keeps finishing its other jobs on
 * other threads meanwhile. A cancel reaches the job from the cancelling
 * thread under the request's job lock, which the thread finishing the job
 * takes to free it.
 *
 * Callbacks run one at a time, on whichever library thread holds the
 * callback runner lock; they queue on the callback executor. The device
 * thread that ended a run takes the lock when it is free and runs the
 * queue itself, which spares a thread handoff per inference (the callback
 * usually starts the request again, on that same thread); a holder looks
 * at the queue again after letting the lock go, so no callback is left
 * behind.
 *
 * The executors exist while some request has used start_async: the first
 * such request starts them, the last one freed stops them.
 *
 * A run's spans (its stages, its jobs, its callback) go to the request's
 * timeline (timeline.c); the number of requests THROUGHPUT keeps in
 * flight is measured by compiled_model.c.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "async.h"
#include "dynamic.h"
#include "host_model.h"
#include "runtime.h"
#include "timeline.h"

#define TASK_THREADS_MAX 4
/* Start guess of a handoff to the task executor, until measured. */
#define HANDOFF_GUESS_NS 30000

enum run_state {
	RUN_IDLE,	/* no run, or the last one and its callback are done */
	RUN_ACTIVE,	/* the stages are in flight */
	RUN_CALLBACK,	/* done; its callback is queued or running */
};

struct vnpu_request_async {
	struct vnpu_infer_request *req;
	struct vnpu_request_async *next;	/* executor queue link */
	int64_t queued_ns;			/* when it entered the task queue */
	atomic_int_fast64_t host_ns;		/* its last preprocess + upload */
	atomic_bool registered;		/* holds a reference on the executors */
	atomic_bool cancel;			/* cancel asked for this run */
	pthread_mutex_t job_lock;		/* protects @job_live */
	bool job_live;				/* submitted, not freed yet */

	pthread_mutex_t lock;			/* protects everything below */
	pthread_cond_t idle;			/* @state went to RUN_IDLE */
	enum run_state state;
	uint64_t run_gen;			/* bumped by every start */
	vnpu_status status;			/* of the last completed run */
	char message[512];			/* its vnpu_last_error() */
	vnpu_infer_callback callback;
	void *user_data;
	bool in_callback;			/* the callback runs now */
	bool releasing;				/* vnpu_infer_request_free() runs */
	bool free_pending;			/* freed from its own callback */

	/* The last run's spans (written by the one thread running a stage). */
	struct vnpu_run_spans timeline;
};

struct executor {
	const char *role;
	void (*handle)(struct executor *ex, struct vnpu_request_async *a);
	pthread_mutex_t lock;			/* protects the queue and @stopping */
	pthread_cond_t cond;
	struct vnpu_request_async *head, *tail;
	/* callback: requests their callbacks freed on a device thread */
	struct vnpu_request_async *free_head;
	bool stopping;
	bool orphan;				/* stopped from its own thread */
	uint32_t num_threads;
	pthread_t threads[TASK_THREADS_MAX];
};

/* The executors and their users: requests that called start_async. */
static struct {
	pthread_mutex_t lock;		/* protects everything here */
	uint32_t users;
	struct executor *task, *callback;
} pool = { .lock = PTHREAD_MUTEX_INITIALIZER };

static atomic_int_fast64_t handoff_ns = HANDOFF_GUESS_NS;
static _Thread_local struct executor *current_executor;
/* Held by the thread that runs callbacks; @cb_running: this thread holds it. */
static pthread_mutex_t cb_runner = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local bool cb_running;
/*
 * Device threads inside job_ended() (see pool_unregister()), and this
 * thread's calls among them: nested when a callback's next run ended at
 * submit and was finished right there.
 */
static atomic_uint device_hooks;
static _Thread_local uint32_t in_device_hook;
/*
 * Requests of the process whose run or callback is in flight (not
 * RUN_IDLE). A submit made while others are tells the device that more
 * jobs follow (VNPU_SUBMIT_MORE_IN_FLIGHT), so that it runs them side by
 * side rather than each one at once on the submitting thread.
 */
static atomic_uint runs_in_flight;

int64_t vnpu_async_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A device thread in job_ended() finishes the job: its stages say "wait". */
static const char *thread_role(void)
{
	return current_executor ? current_executor->role : in_device_hook ? "wait" : "caller";
}

/* @a's run and callback are over (under @a's lock): it may be freed from now on. */
static void set_idle_locked(struct vnpu_request_async *a)
{
	if (a->state != RUN_IDLE)
		atomic_fetch_sub(&runs_in_flight, 1);
	a->state = RUN_IDLE;
	pthread_cond_broadcast(&a->idle);
}

/* This thread runs callbacks now (so it is inside one, or between two). */
static bool on_callback_thread(void)
{
	return cb_running;
}

/* ---- executors ---- */

static void queue_push_locked(struct executor *ex, struct vnpu_request_async *a, bool wake)
{
	a->next = NULL;
	if (ex->tail)
		ex->tail->next = a;
	else
		ex->head = a;
	ex->tail = a;
	if (wake)
		pthread_cond_signal(&ex->cond);
}

static struct vnpu_request_async *queue_pop_locked(struct executor *ex)
{
	struct vnpu_request_async *a = ex->head;

	ex->head = a->next;
	if (!ex->head)
		ex->tail = NULL;
	a->next = NULL;
	return a;
}

/* Take @a out of @ex's queue; false when it is not queued there. */
static bool queue_unlink(struct executor *ex, struct vnpu_request_async *a)
{
	struct vnpu_request_async **p, *prev = NULL;
	bool found = false;

	pthread_mutex_lock(&ex->lock);
	for (p = &ex->head; *p; prev = *p, p = &(*p)->next) {
		if (*p == a) {
			*p = a->next;
			if (ex->tail == a)
				ex->tail = prev;
			found = true;
			break;
		}
	}
	pthread_mutex_unlock(&ex->lock);
	return found;
}

static void executor_destroy(struct executor *ex)
{
	pthread_cond_destroy(&ex->cond);
	pthread_mutex_destroy(&ex->lock);
	free(ex);
}

static void executor_push(struct executor *ex, struct vnpu_request_async *a)
{
	pthread_mutex_lock(&ex->lock);
	queue_push_locked(ex, a, true);
	pthread_mutex_unlock(&ex->lock);
}

/*
 * With @ex's lock held, sleep until @ex has queued work (true) or is
 * stopping with none left (false).
 */
static bool executor_has_work_locked(struct executor *ex)
{
	while (!ex->head && !ex->free_head && !ex->stopping)
		pthread_cond_wait(&ex->cond, &ex->lock);
	return ex->head || ex->free_head;
}

static void *executor_main(void *arg)
{
	struct executor *ex = arg;
	struct vnpu_request_async *a;

	current_executor = ex;
	pthread_mutex_lock(&ex->lock);
	while (executor_has_work_locked(ex)) {
		a = queue_pop_locked(ex);
		pthread_mutex_unlock(&ex->lock);
		ex->handle(ex, a);
		pthread_mutex_lock(&ex->lock);
	}
	pthread_mutex_unlock(&ex->lock);
	if (ex->orphan)
		executor_destroy(ex);
	return NULL;
}

static void executor_stop(struct executor *ex)
{
	bool self = false;
	uint32_t i;

	if (!ex)
		return;
	pthread_mutex_lock(&ex->lock);
	ex->stopping = true;
	pthread_cond_broadcast(&ex->cond);
	pthread_mutex_unlock(&ex->lock);
	for (i = 0; i < ex->num_threads; i++) {
		/* A callback may free the last request: that thread ends on its own. */
		if (pthread_equal(ex->threads[i], pthread_self())) {
			pthread_detach(ex->threads[i]);
			self = true;
		} else {
			pthread_join(ex->threads[i], NULL);
		}
	}
	if (self)
		ex->orphan = true;
	else
		executor_destroy(ex);
}

/* An executor of @threads threads running @main. */
static struct executor *executor_new(const char *role, uint32_t threads, void *(*main)(void *),
				     void (*handle)(struct executor *, struct vnpu_request_async *))
{
	struct executor *ex = calloc(1, sizeof(*ex));

	if (!ex)
		return NULL;
	ex->role = role;
	ex->handle = handle;
	pthread_mutex_init(&ex->lock, NULL);
	pthread_cond_init(&ex->cond, NULL);
	for (ex->num_threads = 0; ex->num_threads < threads; ex->num_threads++) {
		if (pthread_create(&ex->threads[ex->num_threads], NULL, main, ex))
			break;
	}
	if (!ex->num_threads) {
		executor_stop(ex);
		return NULL;
	}
	return ex;
}

static void run_host_stages(struct executor *ex, struct vnpu_request_async *a);
static void job_ended(void *arg);
static void *callback_main(void *arg);

static uint32_t task_threads(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > TASK_THREADS_MAX ? TASK_THREADS_MAX : (uint32_t)n;
}

/*
 * Take a reference on the executors for @a, starting them if needed. Set
 * once under pool.lock, as a callback may start @a while its owner does;
 * every later start sees it set without the lock.
 */
static vnpu_status pool_register(struct vnpu_request_async *a)
{
	vnpu_status st = VNPU_OK;

	if (atomic_load(&a->registered))
		return VNPU_OK;
	pthread_mutex_lock(&pool.lock);
	if (atomic_load(&a->registered)) {
		pthread_mutex_unlock(&pool.lock);
		return VNPU_OK;
	}
	if (!pool.task)
		pool.task = executor_new("task", task_threads(), executor_main, run_host_stages);
	if (!pool.callback)
		pool.callback = executor_new("callback", 1, callback_main, NULL);
	if (pool.task && pool.callback) {
		pool.users++;
		atomic_store(&a->registered, true);
	} else {
		st = vnpu_error(VNPU_GENERAL_ERROR, "cannot start the executor threads");
	}
	pthread_mutex_unlock(&pool.lock);
	return st;
}

static void pool_unregister(struct vnpu_request_async *a)
{
	struct executor *task = NULL, *callback = NULL;

	pthread_mutex_lock(&pool.lock);
	if (atomic_load(&a->registered) && --pool.users == 0) {
		task = pool.task;
		callback = pool.callback;
		pool.task = pool.callback = NULL;
	}
	atomic_store(&a->registered, false);
	pthread_mutex_unlock(&pool.lock);
	executor_stop(task);
	/*
	 * A device thread that ran a callback still looks at the callback
	 * queue after the callback made its request idle, when that request
	 * may be freed already, and with it the last one: the callback
	 * executor stops once no device thread is in job_ended() (but this
	 * one: the run whose callback it runs holds a reference).
	 */
	while (callback && atomic_load(&device_hooks) > in_device_hook)
		sched_yield();
	executor_stop(callback);
}

/* ---- the end of a run ---- */

static void run_callbacks(struct executor *ex, bool block);

/*
 * Record how the run ended and queue its callback, or end it. Once @a is
 * idle another thread may free it: nothing touches it after the unlock.
 * On a device thread the callback runs here when no other callback runs;
 * elsewhere the callback executor is woken for it.
 */
static void run_complete(struct vnpu_request_async *a, vnpu_status st)
{
	struct executor *cb_ex = pool.callback;
	bool here = in_device_hook, queued = false;

	vnpu_request_run_end(a->req, st);
	pthread_mutex_lock(&a->lock);
	a->status = st;
	a->message[0] = '\0';
	if (st != VNPU_OK)
		snprintf(a->message, sizeof(a->message), "%s", vnpu_last_error());
	if (a->callback) {
		/* Queued under @a's lock so that a release finds it queued. */
		a->state = RUN_CALLBACK;
		pthread_mutex_lock(&cb_ex->lock);
		queue_push_locked(cb_ex, a, !here);
		pthread_mutex_unlock(&cb_ex->lock);
		queued = true;
	} else {
		set_idle_locked(a);
	}
	pthread_mutex_unlock(&a->lock);
	if (queued && here)
		run_callbacks(cb_ex, false);
}

static vnpu_status cancelled(void)
{
	return vnpu_error(VNPU_CANCELLED, "the request was cancelled");
}

#define STAGE(a, stage, call) \
	({ int64_t t0_ = vnpu_async_now_ns(); vnpu_status st_ = (call); \
	   vnpu_request_stage_done((a)->req, stage, t0_, vnpu_async_now_ns()); st_; })

static void finish_job(struct vnpu_request_async *a);

/*
 * Submit the next segment and hand its job to the device, which calls
 * job_ended() once it ended. A device that cannot (no thread for it)
 * leaves the job to this thread's wait.
 */
static void submit_and_notify(struct vnpu_request_async *a)
{
	vnpu_status st;
	int64_t t0;

	if (atomic_load(&a->cancel)) {
		run_complete(a, cancelled());
		return;
	}
	t0 = vnpu_async_now_ns();
	st = vnpu_request_submit(a->req, atomic_load(&runs_in_flight) > 1 ?
					 VNPU_SUBMIT_MORE_IN_FLIGHT : 0);
	vnpu_request_stage_done(a->req, VNPU_STAGE_SUBMIT, t0, vnpu_async_now_ns());
	if (st != VNPU_OK) {
		run_complete(a, st);
		return;
	}
	/* A cancel that came during the submit did not see the job. */
	pthread_mutex_lock(&a->job_lock);
	a->job_live = true;
	if (atomic_load(&a->cancel))
		vnpu_request_cancel_job(a->req);
	pthread_mutex_unlock(&a->job_lock);
	/* Once the device has it, the run may end and @a be freed. */
	if (vnpu_request_notify(a->req, job_ended, a) != VNPU_OK)
		finish_job(a);
}

/* Preprocess, upload, submit: on the caller's thread or the task executor. */
static void host_stages(struct vnpu_request_async *a)
{
	int64_t t0 = vnpu_async_now_ns();
	vnpu_status st = VNPU_OK;

	if (atomic_load(&a->cancel))
		st = cancelled();
	if (st == VNPU_OK)
		st = STAGE(a, VNPU_STAGE_PREPROCESS, vnpu_request_preprocess(a->req));
	if (st == VNPU_OK)
		st = STAGE(a, VNPU_STAGE_UPLOAD, vnpu_request_upload(a->req));
	/* Once submitted, the run may end and the request be freed. */
	atomic_store(&a->host_ns, vnpu_async_now_ns() - t0);
	if (st != VNPU_OK) {
		run_complete(a, st);
		return;
	}
	submit_and_notify(a);
}

static void run_host_stages(struct executor *ex, struct vnpu_request_async *a)
{
	int64_t waited = vnpu_async_now_ns() - a->queued_ns;
	int64_t avg = atomic_load(&handoff_ns);

	(void)ex;
	atomic_store(&handoff_ns, avg + (waited - avg) / 8);
	host_stages(a);
}

/* After a segment's job ended with @st: the next segment, or the end. */
static void segment_done(struct vnpu_request_async *a, vnpu_status st)
{
	if (st == VNPU_OK && atomic_load(&a->cancel))
		st = cancelled();
	if (st == VNPU_OK && vnpu_request_has_segment(a->req)) {
		submit_and_notify(a);
		return;
	}
	if (st == VNPU_OK)
		st = STAGE(a, VNPU_STAGE_DOWNLOAD, vnpu_request_download(a->req));
	if (st == VNPU_OK)
		st = STAGE(a, VNPU_STAGE_POSTPROCESS, vnpu_request_postprocess(a->req));
	run_complete(a, st);
}

/* Tell the device to stop @a's job, if it has one now. */
static void send_cancel(struct vnpu_request_async *a)
{
	pthread_mutex_lock(&a->job_lock);
	if (a->job_live)
		vnpu_request_cancel_job(a->req);
	pthread_mutex_unlock(&a->job_lock);
}

/* Wait for @a's job, which has ended (or, without a notice, until it ends); finish the segment. */
static void finish_job(struct vnpu_request_async *a)
{
	vnpu_status st;

	do {
		st = vnpu_request_job_wait(a->req, INT64_MAX);
	} while (st == VNPU_NOT_READY);
	pthread_mutex_lock(&a->job_lock);
	a->job_live = false;
	st = vnpu_request_job_end(a->req, st);
	pthread_mutex_unlock(&a->job_lock);
	vnpu_request_stage_done(a->req, VNPU_STAGE_WAIT, a->timeline.submit_end_ns,
				vnpu_async_now_ns());
	segment_done(a, st);
}

/*
 * The device's notice that @arg's job ended, on its completion context:
 * finish the segment here. Counted in device_hooks from before the run
 * can end (the pool lives while it is active) until the callback
 * executor's queue is no longer touched.
 */
static void job_ended(void *arg)
{
	atomic_fetch_add(&device_hooks, 1);
	in_device_hook++;
	finish_job(arg);
	in_device_hook--;
	atomic_fetch_sub(&device_hooks, 1);
}

/* Run @a's callback; returns its request when the callback freed it. */
static struct vnpu_infer_request *run_callback(struct vnpu_request_async *a)
{
	vnpu_infer_callback cb;
	void *user_data;
	vnpu_status st;
	uint64_t gen;
	int64_t t0;
	bool free_now;

	pthread_mutex_lock(&a->lock);
	cb = a->callback;
	user_data = a->user_data;
	st = a->status;
	gen = a->run_gen;
	a->in_callback = true;
	if (st != VNPU_OK)
		vnpu_error(st, "%s", a->message);
	pthread_mutex_unlock(&a->lock);

	t0 = vnpu_async_now_ns();
	if (cb)
		cb(a->req, st, user_data);

	pthread_mutex_lock(&a->lock);
	a->in_callback = false;
	/*
	 * A release may wait for this return (the run it restarted ended).
	 * Only a release: a wait for a run the callback restarted would wake
	 * for nothing, at every run.
	 */
	if (a->releasing)
		pthread_cond_broadcast(&a->idle);
	if (a->run_gen == gen) {
		vnpu_run_spans_callback(&a->timeline, thread_role(), t0, vnpu_async_now_ns());
		set_idle_locked(a);
	}
	free_now = a->free_pending;
	pthread_mutex_unlock(&a->lock);
	return free_now ? a->req : NULL;
}

/*
 * Run the callbacks queued on @ex (the callback executor) while holding
 * the runner lock; @block: wait for the lock, else leave them to the
 * thread that has it. Each holder looks at the queue again after letting
 * the lock go, so a callback queued meanwhile is not left behind. A
 * request freed by its own callback is freed last, without the lock, and
 * @ex is not touched after: that may have stopped the executors.
 */
static void run_callbacks(struct executor *ex, bool block)
{
	struct vnpu_infer_request *freed;
	struct vnpu_request_async *a;
	bool more;

	if (cb_running)		/* in a callback: the holder runs them after it */
		return;
	for (;;) {
		if (block)
			pthread_mutex_lock(&cb_runner);
		else if (pthread_mutex_trylock(&cb_runner))
			return;
		cb_running = true;
		freed = NULL;
		do {
			pthread_mutex_lock(&ex->lock);
			a = ex->head ? queue_pop_locked(ex) : NULL;
			pthread_mutex_unlock(&ex->lock);
		} while (a && !(freed = run_callback(a)));
		cb_running = false;
		pthread_mutex_unlock(&cb_runner);

		pthread_mutex_lock(&ex->lock);
		more = ex->head != NULL;
		if (freed && in_device_hook) {
			/* The callback executor frees it (see job_ended()). */
			a->next = ex->free_head;
			ex->free_head = a;
		}
		if ((more || in_device_hook) && freed)
			pthread_cond_signal(&ex->cond);	/* the callback executor's turn */
		pthread_mutex_unlock(&ex->lock);
		if (freed) {
			if (!in_device_hook)
				vnpu_infer_request_free(freed);
			return;
		}
		if (!more)
			return;
	}
}

/*
 * The callback executor: runs the queue whenever callbacks are queued, and
 * frees the requests that callbacks on device threads freed.
 */
static void *callback_main(void *arg)
{
	struct executor *ex = arg;
	struct vnpu_request_async *a;

	current_executor = ex;
	pthread_mutex_lock(&ex->lock);
	while (executor_has_work_locked(ex)) {
		a = ex->free_head;
		if (a)
			ex->free_head = a->next;
		pthread_mutex_unlock(&ex->lock);
		if (a)
			vnpu_infer_request_free(a->req);
		else
			run_callbacks(ex, true);
		pthread_mutex_lock(&ex->lock);
	}
	pthread_mutex_unlock(&ex->lock);
	if (ex->orphan)
		executor_destroy(ex);
	return NULL;
}

/* ---- per-request state ---- */

/* The request's async state, or NULL before its first use. */
static struct vnpu_request_async *state_peek(struct vnpu_infer_request *req)
{
	return __atomic_load_n(vnpu_request_async_state(req), __ATOMIC_ACQUIRE);
}

/*
 * The request's async state, made on first use. start_async, wait,
 * wait_for and cancel may come from several threads at once: the first
 * state published wins, and a thread that lost frees its own.
 */
static struct vnpu_request_async *state_get(struct vnpu_infer_request *req)
{
	struct vnpu_request_async **slot = vnpu_request_async_state(req);
	struct vnpu_request_async *a = __atomic_load_n(slot, __ATOMIC_ACQUIRE), *none = NULL;
	const struct vnpu_program *p;
	pthread_condattr_t attr;

	if (a)
		return a;
	a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	p = vnpu_request_compiled_model(req)->program;
	if (!vnpu_run_spans_init(&a->timeline, p->num_segments)) {
		free(a);
		return NULL;
	}
	a->req = req;
	atomic_init(&a->cancel, false);
	atomic_init(&a->registered, false);
	pthread_mutex_init(&a->lock, NULL);
	pthread_mutex_init(&a->job_lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&a->idle, &attr);
	pthread_condattr_destroy(&attr);
	if (!__atomic_compare_exchange_n(slot, &none, a, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		pthread_cond_destroy(&a->idle);
		pthread_mutex_destroy(&a->job_lock);
		pthread_mutex_destroy(&a->lock);
		vnpu_run_spans_fini(&a->timeline);
		free(a);
		a = none;	/* the winner's */
	}
	return a;
}

static vnpu_status state_need(struct vnpu_infer_request *req, const char *fn,
			      struct vnpu_request_async **out)
{
	if (!req)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "%s: req is NULL", fn);
	*out = state_get(req);
	if (!*out)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory");
	return VNPU_OK;
}

/*
 * With @a's lock held, wait until @a is idle or @deadline_ns passes
 * (INT64_MAX: forever); false when it passed first.
 */
static bool wait_idle_locked(struct vnpu_request_async *a, int64_t deadline_ns)
{
	struct timespec ts = { deadline_ns / 1000000000, deadline_ns % 1000000000 };

	while (a->state != RUN_IDLE) {
		if (deadline_ns == INT64_MAX)
			pthread_cond_wait(&a->idle, &a->lock);
		else if (pthread_cond_timedwait(&a->idle, &a->lock, &ts) == ETIMEDOUT)
			return a->state == RUN_IDLE;
	}
	return true;
}

bool vnpu_async_busy(struct vnpu_infer_request *req)
{
	struct vnpu_request_async *a = state_peek(req);
	bool busy;

	if (!a)
		return false;
	pthread_mutex_lock(&a->lock);
	/* Its own callback may read outputs and set inputs for the next run. */
	busy = a->state == RUN_ACTIVE ||
	       (a->state == RUN_CALLBACK && !(a->in_callback && on_callback_thread()));
	pthread_mutex_unlock(&a->lock);
	return busy;
}

/* On the callback thread, outside @a's callback: is @a's callback queued? */
static bool callback_queued_behind_us(struct vnpu_request_async *a)
{
	return on_callback_thread() && a->state == RUN_CALLBACK && !a->in_callback;
}

bool vnpu_async_release(struct vnpu_infer_request *req)
{
	struct vnpu_request_async *a = state_peek(req);
	struct executor *cb_ex;

	if (!a)
		return true;
	pthread_mutex_lock(&a->lock);
	if (a->in_callback && on_callback_thread()) {
		/* From its own callback: finish once the callback returns. */
		a->free_pending = true;
		a->callback = NULL;
		pthread_mutex_unlock(&a->lock);
		return false;
	}
	a->releasing = true;
	a->callback = NULL;	/* a cancelled run ends without a callback */
	if (a->state == RUN_ACTIVE) {
		atomic_store(&a->cancel, true);
		send_cancel(a);
	}
	if (callback_queued_behind_us(a)) {
		/* registered, so the executors stay while we look */
		pthread_mutex_lock(&pool.lock);
		cb_ex = pool.callback;
		pthread_mutex_unlock(&pool.lock);
		if (queue_unlink(cb_ex, a))
			set_idle_locked(a);
	}
	wait_idle_locked(a, INT64_MAX);
	/*
	 * Its callback may still run on another thread: it restarted the
	 * request, and that run has ended (no run starts now). The callback
	 * touches @a when it returns. This thread runs no callback (they run
	 * one at a time, and @a's own frees it above), so it holds none up.
	 */
	while (a->in_callback)
		pthread_cond_wait(&a->idle, &a->lock);
	pthread_mutex_unlock(&a->lock);

	pool_unregister(a);
	pthread_cond_destroy(&a->idle);
	pthread_mutex_destroy(&a->job_lock);
	pthread_mutex_destroy(&a->lock);
	vnpu_run_spans_fini(&a->timeline);
	free(a);
	*vnpu_request_async_state(req) = NULL;
	return true;
}

void vnpu_async_timeline_reset(struct vnpu_infer_request *req)
{
	struct vnpu_request_async *a = state_get(req);

	if (a)
		vnpu_run_spans_reset(&a->timeline);
}

void vnpu_async_timeline_add(struct vnpu_infer_request *req,
			     enum vnpu_request_stage stage, int64_t t0, int64_t t1)
{
	struct vnpu_request_async *a = state_peek(req);

	if (a)
		vnpu_run_spans_stage(&a->timeline, req, stage, thread_role(), t0, t1);
}

/* ---- the public calls ---- */

/*
 * A run of a model of strings (host_model.h): done before start_async
 * returns, its callback called by this thread once the request is free.
 */
static vnpu_status host_start_async(struct vnpu_infer_request *req)
{
	if (!vnpu_request_enter(req))
		return vnpu_request_busy_error();
	vnpu_host_start_async(vnpu_request_host(req));
	vnpu_request_leave(req);
	vnpu_host_callback(vnpu_request_host(req), req);
	return VNPU_OK;
}

VNPU_API vnpu_status vnpu_infer_request_start_async(vnpu_infer_request *req)
{
	struct vnpu_request_async *a = NULL;
	vnpu_status st;
	bool own_callback, inline_host;

	if (req && vnpu_request_dyn(req))
		return vnpu_dyn_start_async(vnpu_request_dyn(req));
	if (req && vnpu_request_host(req))
		return host_start_async(req);
	st = state_need(req, "vnpu_infer_request_start_async", &a);
	if (st != VNPU_OK)
		return st;
	st = pool_register(a);
	if (st != VNPU_OK)
		return st;
	if (!vnpu_request_enter(req))
		return vnpu_request_busy_error();
	pthread_mutex_lock(&a->lock);
	own_callback = a->in_callback && on_callback_thread();
	if (a->releasing || a->free_pending) {
		pthread_mutex_unlock(&a->lock);
		vnpu_request_leave(req);
		return vnpu_error(VNPU_INVALID_ARGUMENT, "the request is being freed");
	}
	if (a->state == RUN_ACTIVE || (a->state == RUN_CALLBACK && !own_callback)) {
		pthread_mutex_unlock(&a->lock);
		vnpu_request_leave(req);
		return vnpu_request_busy_error();
	}
	if (a->state == RUN_IDLE)
		atomic_fetch_add(&runs_in_flight, 1);
	a->state = RUN_ACTIVE;
	a->run_gen++;
	atomic_store(&a->cancel, false);
	pthread_mutex_unlock(&a->lock);

	vnpu_request_run_begin(req);
	/*
	 * The run now keeps the request busy; once submitted it may end, and
	 * its callback start it again, before this thread returns.
	 */
	vnpu_request_leave(req);
	inline_host = atomic_load(&a->host_ns) <= atomic_load(&handoff_ns);
	if (inline_host) {
		host_stages(a);
	} else {
		a->queued_ns = vnpu_async_now_ns();
		executor_push(pool.task, a);
	}
	return VNPU_OK;
}

/* Wait until @a is idle or @deadline_ns passes (INT64_MAX: forever). */
static vnpu_status wait_idle(struct vnpu_request_async *a, int64_t deadline_ns)
{
	vnpu_status st;

	pthread_mutex_lock(&a->lock);
	if (a->state != RUN_IDLE && a->callback && on_callback_thread()) {
		pthread_mutex_unlock(&a->lock);
		return vnpu_error(VNPU_INVALID_ARGUMENT,
				  "waiting in a callback for a request with a callback would "
				  "deadlock: its callback runs after this one");
	}
	if (!wait_idle_locked(a, deadline_ns)) {
		pthread_mutex_unlock(&a->lock);
		return vnpu_error(VNPU_NOT_READY, "the request is still running");
	}
	st = a->status;
	if (st != VNPU_OK)
		vnpu_error(st, "%s", a->message);
	pthread_mutex_unlock(&a->lock);
	return st;
}

VNPU_API vnpu_status vnpu_infer_request_wait(vnpu_infer_request *req)
{
	struct vnpu_request_async *a = NULL;
	vnpu_status st;

	if (req && vnpu_request_dyn(req))
		return vnpu_dyn_wait_for(vnpu_request_dyn(req), 0, true);
	if (req && vnpu_request_host(req))
		return vnpu_host_wait(vnpu_request_host(req));
	st = state_need(req, "vnpu_infer_request_wait", &a);
	return st != VNPU_OK ? st : wait_idle(a, INT64_MAX);
}

VNPU_API vnpu_status vnpu_infer_request_wait_for(vnpu_infer_request *req,
						 int64_t timeout_ms)
{
	struct vnpu_request_async *a = NULL;
	int64_t now = vnpu_async_now_ns();
	vnpu_status st;

	if (req && vnpu_request_dyn(req))
		return vnpu_dyn_wait_for(vnpu_request_dyn(req), timeout_ms, false);
	if (req && vnpu_request_host(req) && timeout_ms >= 0)
		return vnpu_host_wait(vnpu_request_host(req));
	st = state_need(req, "vnpu_infer_request_wait_for", &a);
	if (st != VNPU_OK)
		return st;
	if (timeout_ms < 0)
		return vnpu_error(VNPU_INVALID_ARGUMENT,
				  "vnpu_infer_request_wait_for: negative timeout %lld ms",
				  (long long)timeout_ms);
	if (timeout_ms >= (INT64_MAX - now) / 1000000)
		return wait_idle(a, INT64_MAX);
	return wait_idle(a, now + timeout_ms * 1000000);
}

VNPU_API vnpu_status vnpu_infer_request_set_callback(vnpu_infer_request *req,
						     vnpu_infer_callback callback,
						     void *user_data)
{
	struct vnpu_request_async *a = NULL;
	bool own_callback;
	vnpu_status st;

	if (req && vnpu_request_dyn(req))
		return vnpu_dyn_set_callback(vnpu_request_dyn(req), callback, user_data);
	if (req && vnpu_request_host(req))
		return vnpu_host_set_callback(vnpu_request_host(req), callback, user_data);
	st = state_need(req, "vnpu_infer_request_set_callback", &a);
	if (st != VNPU_OK)
		return st;
	pthread_mutex_lock(&a->lock);
	own_callback = a->in_callback && on_callback_thread();
	if (a->state == RUN_ACTIVE || (a->state == RUN_CALLBACK && !own_callback)) {
		pthread_mutex_unlock(&a->lock);
		return vnpu_error(VNPU_BUSY, "the request is running");
	}
	a->callback = callback;
	a->user_data = user_data;
	pthread_mutex_unlock(&a->lock);
	return VNPU_OK;
}

VNPU_API vnpu_status vnpu_infer_request_cancel(vnpu_infer_request *req)
{
	struct vnpu_request_async *a = NULL;
	vnpu_status st;

	if (req && vnpu_request_dyn(req))
		return vnpu_dyn_cancel(vnpu_request_dyn(req));
	if (req && vnpu_request_host(req))
		return VNPU_OK;	/* its runs end before start_async returns */
	st = state_need(req, "vnpu_infer_request_cancel", &a);
	if (st != VNPU_OK)
		return st;
	pthread_mutex_lock(&a->lock);
	if (a->state == RUN_ACTIVE) {
		atomic_store(&a->cancel, true);
		send_cancel(a);
	}
	pthread_mutex_unlock(&a->lock);
	return VNPU_OK;
}

/* ---- the timeline (timeline.c) ---- */

VNPU_API vnpu_status vnpu_infer_request_get_timeline(vnpu_infer_request *req,
						     vnpu_timeline **out)
{
	struct vnpu_request_async *a = NULL;
	vnpu_status st;

	if (req && out && vnpu_request_dyn(req))
		return vnpu_dyn_timeline(vnpu_request_dyn(req), out);
	if (req && out && vnpu_request_host(req))
		return vnpu_error(VNPU_UNSUPPORTED, "a model of string tensors runs on the host: "
				  "it has no timeline of stages");
	st = state_need(req, "vnpu_infer_request_get_timeline", &a);
	if (st != VNPU_OK)
		return st;
	if (!out)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "vnpu_infer_request_get_timeline: out is NULL");
	st = vnpu_request_enter_idle(req);
	if (st != VNPU_OK)
		return st;
	st = vnpu_run_spans_timeline(&a->timeline, req, out);
	vnpu_request_leave(req);
	return st;
}

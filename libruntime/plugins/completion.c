// SPDX-License-Identifier: MIT
/*
 * A device's completion context (completion.h): a leader/follower pool.
 * The leader waits for the head job; the others sleep until a job is
 * queued with no leader, or are inside a job's function.
 */
#include "completion.h"

/*
 * This thread runs a job's function now (completion_call()). Initial-exec:
 * in a dlopen()ed plugin, other TLS is allocated at a thread's first use,
 * and ld.so aborts the process when that allocation fails.
 */
static _Thread_local struct completion *in_job_fn __attribute__((tls_model("initial-exec")));

static void *completion_main(void *arg);

/* Call a job's function @fn(@arg) on this thread, a thread of @c. */
static void completion_call(struct completion *c, void (*fn)(void *arg), void *arg)
{
	struct completion *outer = in_job_fn;

	in_job_fn = c;
	fn(arg);
	in_job_fn = outer;
}

bool completion_in_job_fn(void)
{
	return in_job_fn;
}

bool completion_pending(struct completion *c)
{
	bool pending;

	pthread_mutex_lock(&c->lock);
	pending = c->head;
	pthread_mutex_unlock(&c->lock);
	return pending;
}

/*
 * Have a thread become the waiter: wake a sleeping one, else start one.
 * False when there is no thread at all and none could be started.
 */
static bool wake_waiter_locked(struct completion *c)
{
	atomic_store(&c->want_waiter, false);
	if (c->idle) {
		pthread_cond_signal(&c->wake);
		return true;
	}
	if (c->num_threads < COMPLETION_MAX_THREADS &&
	    !pthread_create(&c->threads[c->num_threads], NULL, completion_main, c))
		c->num_threads++;
	return c->num_threads > 0;
}

/*
 * Jobs are queued and no thread waits for them, as this one is about to
 * call a function: wake a waiter now if the device cannot tell when a job
 * ends, or the head has ended already; else leave it to the device's next
 * completion_job_ended(). Published before the head is looked at, as the
 * device marks a job ended before it looks: one of the two sees the other.
 */
static void find_waiter_locked(struct completion *c)
{
	if (!c->ended) {
		wake_waiter_locked(c);
		return;
	}
	atomic_store(&c->want_waiter, true);
	if (c->ended(c->head))
		wake_waiter_locked(c);
}

void completion_job_ended(struct completion *c)
{
	if (!atomic_load(&c->want_waiter))
		return;
	pthread_mutex_lock(&c->lock);
	if (c->head && !c->waiter && atomic_load(&c->want_waiter))
		wake_waiter_locked(c);
	pthread_mutex_unlock(&c->lock);
}

/*
 * Whether the head's job will be served by the device thread that ends it
 * (completion_serve()): it has not ended and its thread serves it, so no
 * thread of @c need wait for it. Then a job that ends on another thread
 * finds a waiter (completion_job_ended()), as after a function.
 */
static bool head_served_locked(struct completion *c)
{
	if (!c->served || !c->served(c->head))
		return false;
	atomic_store(&c->want_waiter, true);
	return !c->ended(c->head);
}

static void *completion_main(void *arg)
{
	struct completion *c = arg;
	struct completion_item *item;

	pthread_mutex_lock(&c->lock);
	for (;;) {
		if (c->head && !c->waiter && !head_served_locked(c)) {
			c->waiter = true;
			atomic_store(&c->want_waiter, false);
			item = c->head;
			pthread_mutex_unlock(&c->lock);
			c->wait_end(item);
			pthread_mutex_lock(&c->lock);
			c->head = item->next;
			if (!c->head)
				c->tail = NULL;
			c->waiter = false;
			if (c->head)
				find_waiter_locked(c);
			pthread_mutex_unlock(&c->lock);
			/* The function may free the job, and @item with it. */
			completion_call(c, item->fn, item->arg);
			pthread_mutex_lock(&c->lock);
			continue;
		}
		if (c->stopping)
			break;
		c->idle++;
		pthread_cond_wait(&c->wake, &c->lock);
		c->idle--;
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

void completion_serve(struct completion *c)
{
	struct completion_item *item;

	pthread_mutex_lock(&c->lock);
	for (;;) {
		if (c->head && !c->waiter && !c->stopping && c->ended(c->head)) {
			item = c->head;
			c->head = item->next;
			if (!c->head)
				c->tail = NULL;
			pthread_mutex_unlock(&c->lock);
			completion_call(c, item->fn, item->arg);
			pthread_mutex_lock(&c->lock);
			continue;
		}
		if (!c->head || c->waiter || c->stopping)
			break;
		/* Published before the last look, as in find_waiter_locked(). */
		atomic_store(&c->want_waiter, true);
		if (!c->ended(c->head))
			break;
	}
	pthread_mutex_unlock(&c->lock);
}

void completion_init(struct completion *c, void (*wait_end)(struct completion_item *item),
		     bool (*ended)(struct completion_item *item),
		     bool (*served)(struct completion_item *item))
{
	*c = (struct completion){ .wait_end = wait_end, .ended = ended, .served = served };
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->wake, NULL);
}

vnpu_status completion_add(struct completion *c, struct completion_item *item, bool ended,
			   void (*fn)(void *arg), void *arg)
{
	vnpu_status st = VNPU_OK;

	if (ended && in_job_fn) {
		completion_call(in_job_fn, fn, arg);
		return VNPU_OK;
	}
	item->next = NULL;
	item->fn = fn;
	item->arg = arg;
	pthread_mutex_lock(&c->lock);
	if (!c->waiter && in_job_fn != c && !wake_waiter_locked(c)) {
		st = VNPU_GENERAL_ERROR;
	} else {
		if (c->tail)
			c->tail->next = item;
		else
			c->head = item;
		c->tail = item;
		/* This thread, inside a function of @c, comes back to wait for it. */
		if (!c->waiter && in_job_fn == c)
			find_waiter_locked(c);
	}
	pthread_mutex_unlock(&c->lock);
	return st;
}

void completion_fini(struct completion *c)
{
	uint32_t i;

	pthread_mutex_lock(&c->lock);
	c->stopping = true;
	pthread_cond_broadcast(&c->wake);
	pthread_mutex_unlock(&c->lock);
	for (i = 0; i < c->num_threads; i++)
		pthread_join(c->threads[i], NULL);
	pthread_cond_destroy(&c->wake);
	pthread_mutex_destroy(&c->lock);
}

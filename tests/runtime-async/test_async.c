// SPDX-License-Identifier: MIT
/*
 * Asynchronous infer requests on every device present: callbacks, wait and
 * wait_for, BUSY, requests from several threads, restarts from callbacks,
 * cancel, chained requests and freeing in every order while runs are in
 * flight. The programs are built by hand (y = x, copied N times, and on
 * the CPU one that spins until cancelled) so the tests do not depend on
 * the compiler; everything after compiling goes through the public API.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "runtime_test.h"
#include "async.h"
#include "runtime.h"
#include <drm/vnpu_cmd.h>
#include <vnpu/vnpu_remote.h>
#ifdef VNPU_TEST_VGEM
#include "vgem.h"
#endif

/* The slow program: 1 Mi floats copied SLOW_COPIES times (tens of ms). */
#define SLOW_ELEMS (1u << 20)
#define SLOW_COPIES 16
#define FAST_ELEMS 64

static char *dup_str(const char *s)
{
	return strcpy(malloc(strlen(s) + 1), s);
}

static struct vnpu_cmd_tensor view(uint32_t slot, uint64_t elems)
{
	struct vnpu_cmd_tensor t = { .slot = slot, .dtype = VNPU_DTYPE_F32, .rank = 1 };

	t.dims[0] = elems;
	t.strides[0] = 1;
	return t;
}

/* y = x over @elems floats, @copies times; with @spin a SPIN first. */
static struct vnpu_program *copy_program(uint32_t elems, uint32_t copies, bool spin)
{
	struct vnpu_program *p = calloc(1, sizeof(*p));
	uint32_t ncmd = copies + (spin ? 1 : 0), i;
	size_t size = copies * sizeof(struct vnpu_cmd_copy) +
		      (spin ? sizeof(struct vnpu_cmd_header) : 0);
	char *stream = calloc(1, size), *pos = stream, name[32];
	const vnpu_shape shape = { 1, { elems } };
	struct vnpu_cmd_header *h;
	struct vnpu_cmd_copy *c;

	p->weights = vnpu_program_weights_alloc(16);
	p->weights_size = 16;
	p->arena_size = 64;
	p->num_inputs = 1;
	p->num_outputs = 1;
	p->inputs = calloc(1, sizeof(*p->inputs));
	p->outputs = calloc(1, sizeof(*p->outputs));
	p->inputs[0] = (struct vnpu_prog_port){ dup_str("x"), VNPU_TYPE_F32, shape, 2, elems * 4ull };
	p->outputs[0] = (struct vnpu_prog_port){ dup_str("y"), VNPU_TYPE_F32, shape, 3, elems * 4ull };
	p->layers = calloc(ncmd, sizeof(*p->layers));
	if (spin) {
		h = (struct vnpu_cmd_header *)pos;
		h->opcode = VNPU_CMD_SPIN;
		h->size = sizeof(*h);
		pos += sizeof(*h);
		p->layers[p->num_layers++] = (struct vnpu_prog_layer){ dup_str("spin"),
			dup_str("Spin"), 0, 0, 1 };
	}
	for (i = 0; i < copies; i++) {
		c = (struct vnpu_cmd_copy *)pos;
		c->hdr.opcode = VNPU_CMD_COPY;
		c->hdr.size = sizeof(*c);
		c->dst = view(3, elems);
		c->src = view(2, elems);
		pos += sizeof(*c);
		snprintf(name, sizeof(name), "copy%u", i);
		p->layers[p->num_layers] = (struct vnpu_prog_layer){ dup_str(name),
			dup_str("Copy"), 0, p->num_layers, 1 };
		p->num_layers++;
	}
	p->num_segments = 1;
	p->segments = calloc(1, sizeof(*p->segments));
	p->segments[0] = (struct vnpu_prog_segment){ VNPU_TARGET_PRIMARY, stream, size, ncmd,
						     0, p->num_layers };
	return p;
}

static vnpu_status compile_on(vnpu_core *core, const char *device, struct vnpu_program *p,
			      enum vnpu_perf_mode mode, vnpu_compiled_model **out)
{
	struct vnpu_core_device *d = vnpu_core_find_device(core, device);
	struct vnpu_config cfg = { .profiling = true, .precision = VNPU_TYPE_F32,
				   .perf_mode = mode };

	if (!d) {
		vnpu_program_free(p);
		return VNPU_NOT_FOUND;
	}
	return vnpu_compiled_model_new(core, d, NULL, device, &cfg, p, out);
}

static vnpu_status compile_copy(vnpu_core *core, const char *device, uint32_t elems,
				uint32_t copies, vnpu_compiled_model **out)
{
	return compile_on(core, device, copy_program(elems, copies, false),
			  VNPU_PERF_THROUGHPUT, out);
}

static float *tensor_floats(vnpu_infer_request *req, const char *name)
{
	vnpu_tensor *t;
	void *data = NULL;

	if (vnpu_infer_request_get_tensor(req, name, &t) != VNPU_OK)
		return NULL;
	vnpu_tensor_get_data(t, &data);
	vnpu_tensor_free(t);	/* the request keeps it */
	return data;
}

/*
 * Fill and check the copy programs' ports: 0, or 1 on a mismatch or a port
 * not found (they run on callbacks' threads too, where nothing may ASSERT).
 */
static int fill_input(vnpu_infer_request *req, float base, uint32_t elems)
{
	float *x = tensor_floats(req, "x");
	uint32_t i;

	if (!x)
		return 1;
	for (i = 0; i < elems; i++)
		x[i] = base + (float)(i % 1000);
	return 0;
}

static int check_output(vnpu_infer_request *req, float base, uint32_t elems)
{
	float *y = tensor_floats(req, "y");
	uint32_t i;

	if (!y)
		return 1;
	for (i = 0; i < elems; i += 1 + elems / 64) {
		if (y[i] != base + (float)(i % 1000)) {
			fprintf(stderr, "y[%u] = %g, want %g\n", i, y[i], base + (float)(i % 1000));
			return 1;
		}
	}
	return 0;
}

/*
 * A run held back on the NPU: the request's input "x" is an NPU tensor
 * whose in-fence is a vgem fence that has not signalled (a producer still
 * writing), so the job waits on the device until hold_release() and is
 * not done at any check before it, however the host schedules the test's
 * threads. The NPU cannot cancel a running job, and a slow one may end
 * before the first check on a loaded host.
 */
struct hold {
	vnpu_tensor *x;
	float *data;
	int vgem;
	uint32_t fence;
};

/* 0 with @h holding @req's next run over @elems floats of @base, 1 if not. */
static int hold_input(vnpu_core *core, const char *device, vnpu_infer_request *req,
		      float base, uint32_t elems, struct hold *h)
{
#ifdef VNPU_TEST_VGEM
	const vnpu_shape shape = { 1, { elems } };
	int sync_file;
	uint32_t i;

	*h = (struct hold){ .vgem = -1 };
	if (posix_memalign((void **)&h->data, 4096, elems * sizeof(float)))
		return 1;
	for (i = 0; i < elems; i++)
		h->data[i] = base + (float)(i % 1000);
	h->vgem = vgem_open();
	if (h->vgem < 0 ||
	    vnpu_core_create_remote_tensor(core, device, VNPU_TYPE_F32, &shape, h->data,
					   &h->x) != VNPU_OK)
		return 1;
	if (vgem_fence_start(h->vgem, &h->fence, &sync_file))
		return 1;
	i = vnpu_tensor_set_in_fence(h->x, VNPU_FENCE_SYNC_FILE, sync_file) != VNPU_OK ||
	    vnpu_infer_request_set_tensor(req, "x", h->x) != VNPU_OK;
	close(sync_file);
	return i;
#else
	return 1;
#endif
}

/* Let the held run go: 0, or 1 if the fence could not be signalled. */
static int hold_release(struct hold *h)
{
#ifdef VNPU_TEST_VGEM
	return vgem_fence_signal(h->vgem, h->fence) != 0;
#else
	return 1;
#endif
}

static void hold_free(struct hold *h)
{
	vnpu_tensor_free(h->x);
	free(h->data);
	if (h->vgem >= 0)
		close(h->vgem);
}

/* ---- wait before any start; bad arguments ---- */

TEST_F(dev, wait_before_start)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	vnpu_timeline *tl;

	ASSERT_EQ(VNPU_OK, compile_copy(core, device, FAST_ELEMS, 1, &cm));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_wait(req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_wait_for(req, 0));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_cancel(req));
	ASSERT_FAILS(VNPU_NOT_READY, vnpu_infer_request_get_timeline(req, &tl));
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
}

TEST_F(dev, bad_arguments)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;

	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_infer_request_start_async(NULL));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_infer_request_wait(NULL));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_infer_request_wait_for(NULL, 1));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_infer_request_cancel(NULL));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_infer_request_set_callback(NULL, NULL, NULL));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_infer_request_get_timeline(NULL, NULL));
	ASSERT_EQ(VNPU_OK, compile_copy(core, device, FAST_ELEMS, 1, &cm));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_infer_request_wait_for(req, -1));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_infer_request_get_timeline(req, NULL));
	vnpu_timeline_free(NULL);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
}

/* ---- callbacks ---- */

struct cb_state {
	atomic_int calls;
	atomic_int finished;	/* set at the very end of the callback */
	vnpu_status status;
	int restarts;		/* start the request again this many times */
	float base;		/* restart with input base + 1 */
	vnpu_infer_request *next;	/* chained: start this one */
	int failed;
};

static void count_cb(vnpu_infer_request *req, vnpu_status st, void *data)
{
	struct cb_state *s = data;
	struct timespec ts = { 0, 2000000 };

	s->status = st;
	atomic_fetch_add(&s->calls, 1);
	if (s->restarts > 0) {
		s->restarts--;
		s->base += 1;
		if (fill_input(req, s->base, FAST_ELEMS) ||
		    vnpu_infer_request_start_async(req) != VNPU_OK)
			s->failed = 1;
		return;
	}
	if (s->next && vnpu_infer_request_start_async(s->next) != VNPU_OK)
		s->failed = 1;
	/* A slow callback: wait() must still return only after it. */
	nanosleep(&ts, NULL);
	atomic_store(&s->finished, 1);
}

TEST_F(dev, callback_once_before_wait)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	struct cb_state s = { 0 };
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	int run;

	ASSERT_EQ(VNPU_OK, compile_copy(core, device, FAST_ELEMS, 2, &cm));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_callback(req, count_cb, &s));
	for (run = 0; run < 20; run++) {
		atomic_store(&s.finished, 0);
		ASSERT_EQ(0, fill_input(req, (float)run, FAST_ELEMS));
		ASSERT_EQ(VNPU_OK, vnpu_infer_request_start_async(req));
		ASSERT_EQ(VNPU_OK, vnpu_infer_request_wait(req));
		ASSERT_EQ(1, atomic_load(&s.finished));
		ASSERT_EQ(run + 1, atomic_load(&s.calls));
		ASSERT_EQ(VNPU_OK, s.status);
		ASSERT_EQ(0, check_output(req, (float)run, FAST_ELEMS));
		/* waiting again changes nothing and calls nothing */
		ASSERT_EQ(VNPU_OK, vnpu_infer_request_wait_for(req, 0));
		ASSERT_EQ(run + 1, atomic_load(&s.calls));
	}
	/* no callback: runs still complete */
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_callback(req, NULL, NULL));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_start_async(req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_wait(req));
	ASSERT_EQ(20, atomic_load(&s.calls));
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
}

TEST_F(dev, restart_in_callback)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	struct cb_state s = { .restarts = 5, .base = 100 };
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;

	ASSERT_EQ(VNPU_OK, compile_copy(core, device, FAST_ELEMS, 1, &cm));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_callback(req, count_cb, &s));
	ASSERT_EQ(0, fill_input(req, 100, FAST_ELEMS));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_start_async(req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_wait(req));
	ASSERT_TRUE(!s.failed);
	ASSERT_EQ(6, atomic_load(&s.calls));
	ASSERT_EQ(1, atomic_load(&s.finished));
	ASSERT_EQ(0, check_output(req, 105, FAST_ELEMS));
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
}

/*
 * A callback that waits for requests of its own device and frees one that
 * runs: those requests' jobs are queued behind the run whose callback this
 * is (the callback may run on the thread that waits for that device's
 * jobs), so the wait must see them end rather than deadlock.
 */
struct waiter_state {
	vnpu_infer_request *later;	/* started after the callback's request */
	vnpu_infer_request *doomed;	/* started, then freed, in the callback */
	atomic_int later_started;	/* its start_async returned */
	atomic_int calls;
	int failed;
};

static void wait_in_callback_cb(vnpu_infer_request *req, vnpu_status st, void *data)
{
	struct waiter_state *w = data;
	struct timespec ts = { 0, 100000 };

	(void)req;
	atomic_fetch_add(&w->calls, 1);
	/* The run may end before the test thread has started the later one. */
	while (!atomic_load(&w->later_started))
		nanosleep(&ts, NULL);
	if (st != VNPU_OK || vnpu_infer_request_wait(w->later) != VNPU_OK ||
	    check_output(w->later, 7, FAST_ELEMS))
		w->failed = 1;
	if (fill_input(w->doomed, 9, FAST_ELEMS) ||
	    vnpu_infer_request_start_async(w->doomed) != VNPU_OK)
		w->failed = 1;
	vnpu_infer_request_free(w->doomed);
	w->doomed = NULL;
}

TEST_F(dev, wait_in_callback)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	struct waiter_state w = { 0 };
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	vnpu_status st;
	int run;

	ASSERT_EQ(VNPU_OK, compile_copy(core, device, FAST_ELEMS, 2, &cm));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &w.later));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_callback(req, wait_in_callback_cb, &w));
	for (run = 0; run < 10; run++) {
		ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &w.doomed));
		ASSERT_EQ(0, fill_input(req, (float)run, FAST_ELEMS));
		ASSERT_EQ(0, fill_input(w.later, 7, FAST_ELEMS));
		atomic_store(&w.later_started, 0);
		ASSERT_EQ(VNPU_OK, vnpu_infer_request_start_async(req));
		st = vnpu_infer_request_start_async(w.later);
		atomic_store(&w.later_started, 1);
		ASSERT_EQ(VNPU_OK, st);
		ASSERT_EQ(VNPU_OK, vnpu_infer_request_wait(req));
		ASSERT_EQ(run + 1, atomic_load(&w.calls));
		ASSERT_TRUE(!w.failed && !w.doomed);
		ASSERT_EQ(0, check_output(req, (float)run, FAST_ELEMS));
		ASSERT_EQ(VNPU_OK, vnpu_infer_request_wait(w.later));
	}
	vnpu_infer_request_free(req);
	vnpu_infer_request_free(w.later);
	vnpu_compiled_model_free(cm);
}

/*
 * Freed by its owner while its callback, which restarted it, still runs:
 * the restarted run ends (cancelled) before the callback returns, here
 * because the callback waits for a request submitted behind that run to
 * the same device. The free must also wait for the callback to return;
 * it used to free the request as soon as the run was idle, and the
 * returning callback then locked freed memory.
 */
struct restart_free_state {
	vnpu_infer_request *other;	/* queued behind the restarted run */
	atomic_int restarted;		/* the callback restarted its request */
	atomic_int freeing;		/* the test thread is about to free it */
	atomic_int returned;		/* the callback that restarted returned */
	atomic_int calls;
	int failed;
};

static void restart_then_wait_cb(vnpu_infer_request *req, vnpu_status st, void *data)
{
	struct restart_free_state *s = data;
	struct timespec tick = { 0, 100000 }, settle = { 0, 50000000 };

	if (atomic_fetch_add(&s->calls, 1))
		return;		/* the restarted run's, if it ends before the free */
	if (st != VNPU_OK || vnpu_infer_request_start_async(req) != VNPU_OK)
		s->failed = 1;
	atomic_store(&s->restarted, 1);
	while (!atomic_load(&s->freeing))
		nanosleep(&tick, NULL);
	/* Let the free cancel the run and wait for it. */
	nanosleep(&settle, NULL);
	if (vnpu_infer_request_wait(s->other) != VNPU_OK)
		s->failed = 1;
	/* The free has seen the run end by now: it must still be waiting. */
	nanosleep(&settle, NULL);
	atomic_store(&s->returned, 1);
}

TEST_F(dev, free_while_callback_runs)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	struct restart_free_state s = { 0 };
	struct timespec tick = { 0, 100000 };
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;

	ASSERT_EQ(VNPU_OK, compile_copy(core, device, FAST_ELEMS, 1, &cm));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &s.other));
	ASSERT_EQ(0, fill_input(req, 1, FAST_ELEMS));
	ASSERT_EQ(0, fill_input(s.other, 2, FAST_ELEMS));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_callback(req, restart_then_wait_cb, &s));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_start_async(req));
	while (!atomic_load(&s.restarted))
		nanosleep(&tick, NULL);
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_start_async(s.other));
	atomic_store(&s.freeing, 1);
	vnpu_infer_request_free(req);
	ASSERT_EQ(1, atomic_load(&s.returned));
	ASSERT_TRUE(!s.failed);
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_wait(s.other));
	ASSERT_EQ(0, check_output(s.other, 2, FAST_ELEMS));
	vnpu_infer_request_free(s.other);
	vnpu_compiled_model_free(cm);
}

/* ---- not ready, busy ---- */

/*
 * wait_for() of a run not ended is NOT_READY, of one that ends in time OK.
 * On the CPU the first run never ends until cancelled, so a loaded machine
 * cannot finish it before the check; on the NPU the run is held back
 * (hold_input()) until the checks are done.
 */
TEST_F(dev, wait_for_not_ready)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	struct hold h = { .vgem = -1 };
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	bool cpu = !strcmp(device, "CPU");

	if (cpu) {
		ASSERT_EQ(VNPU_OK,
			  compile_on(core, device, copy_program(FAST_ELEMS, 1, true),
				     VNPU_PERF_LATENCY, &cm));
		ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
		ASSERT_EQ(VNPU_OK, vnpu_infer_request_start_async(req));
		ASSERT_FAILS(VNPU_NOT_READY, vnpu_infer_request_wait_for(req, 0));
		ASSERT_FAILS(VNPU_NOT_READY, vnpu_infer_request_wait_for(req, 20));
		ASSERT_EQ(VNPU_OK, vnpu_infer_request_cancel(req));
		ASSERT_FAILS(VNPU_CANCELLED, vnpu_infer_request_wait_for(req, 60000));
		vnpu_infer_request_free(req);
		vnpu_compiled_model_free(cm);
	}
	ASSERT_EQ(VNPU_OK, compile_copy(core, device, SLOW_ELEMS, SLOW_COPIES, &cm));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	if (cpu) {
		ASSERT_EQ(0, fill_input(req, 7, SLOW_ELEMS));
		ASSERT_EQ(VNPU_OK, vnpu_infer_request_start_async(req));
	} else {
		ASSERT_EQ(0, hold_input(core, device, req, 7, SLOW_ELEMS, &h));
		ASSERT_EQ(VNPU_OK, vnpu_infer_request_start_async(req));
		ASSERT_FAILS(VNPU_NOT_READY, vnpu_infer_request_wait_for(req, 0));
		ASSERT_FAILS(VNPU_NOT_READY, vnpu_infer_request_wait_for(req, 20));
		ASSERT_EQ(0, hold_release(&h));
	}
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_wait_for(req, 60000));
	ASSERT_EQ(0, check_output(req, 7, SLOW_ELEMS));
	vnpu_infer_request_free(req);
	hold_free(&h);
	vnpu_compiled_model_free(cm);
}

/*
 * On the CPU the request's job ends in a SPIN that runs until cancelled,
 * so it is still running at every check however the test's thread is
 * scheduled; the NPU cannot cancel a running job, so there the run is
 * held back (hold_input()) until the checks are done.
 */
TEST_F(dev, busy_while_running)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	const vnpu_shape shape = { 1, { SLOW_ELEMS } };
	bool spin = !strcmp(device, "CPU");
	vnpu_profiling_info *info;
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	vnpu_tensor *t, *mine;
	vnpu_timeline *tl;
	struct hold h = { .vgem = -1 };

	if (spin) {
		ASSERT_EQ(VNPU_OK, compile_on(core, device, copy_program(SLOW_ELEMS, 1, true),
					      VNPU_PERF_LATENCY, &cm));
	} else {
		ASSERT_EQ(VNPU_OK, compile_copy(core, device, SLOW_ELEMS, SLOW_COPIES, &cm));
	}
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	if (!spin)
		ASSERT_EQ(0, hold_input(core, device, req, 3, SLOW_ELEMS, &h));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_create(VNPU_TYPE_F32, &shape, &mine));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_start_async(req));
	ASSERT_FAILS(VNPU_BUSY, vnpu_infer_request_start_async(req));
	ASSERT_FAILS(VNPU_BUSY, vnpu_infer_request_infer(req));
	ASSERT_FAILS(VNPU_BUSY, vnpu_infer_request_get_tensor(req, "x", &t));
	ASSERT_FAILS(VNPU_BUSY, vnpu_infer_request_get_output_tensor(req, 0, &t));
	ASSERT_FAILS(VNPU_BUSY, vnpu_infer_request_set_tensor(req, "x", mine));
	ASSERT_FAILS(VNPU_BUSY, vnpu_infer_request_set_callback(req, NULL, NULL));
	ASSERT_FAILS(VNPU_BUSY, vnpu_infer_request_get_profiling_info(req, &info));
	ASSERT_FAILS(VNPU_BUSY, vnpu_infer_request_get_timeline(req, &tl));
	if (spin) {
		ASSERT_EQ(VNPU_OK, vnpu_infer_request_cancel(req));
		ASSERT_FAILS(VNPU_CANCELLED, vnpu_infer_request_wait(req));
	} else {
		ASSERT_EQ(0, hold_release(&h));
		ASSERT_EQ(VNPU_OK, vnpu_infer_request_wait(req));
		ASSERT_EQ(0, check_output(req, 3, SLOW_ELEMS));
	}
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_tensor(req, "x", &t));
	vnpu_tensor_free(t);
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_tensor(req, "x", mine));
	vnpu_tensor_free(mine);
	vnpu_infer_request_free(req);
	hold_free(&h);
	vnpu_compiled_model_free(cm);
}

/* ---- three requests from three threads ---- */

struct thread_arg {
	vnpu_infer_request *req;
	float base;
	int failed;
};

static void *thread_run(void *p)
{
	struct thread_arg *a = p;
	int i;

	for (i = 0; i < 10 && !a->failed; i++) {
		a->failed = fill_input(a->req, a->base + (float)i, FAST_ELEMS) ||
			    vnpu_infer_request_start_async(a->req) != VNPU_OK ||
			    vnpu_infer_request_wait(a->req) != VNPU_OK ||
			    check_output(a->req, a->base + (float)i, FAST_ELEMS);
	}
	return NULL;
}

TEST_F(dev, three_threads)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	struct thread_arg args[3];
	pthread_t threads[3];
	vnpu_compiled_model *cm;
	int i;

	ASSERT_EQ(VNPU_OK, compile_copy(core, device, FAST_ELEMS, 4, &cm));
	for (i = 0; i < 3; i++) {
		args[i] = (struct thread_arg){ NULL, (float)(1000 * i), 0 };
		ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &args[i].req));
	}
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, pthread_create(&threads[i], NULL, thread_run, &args[i]));
	}
	for (i = 0; i < 3; i++)
		pthread_join(threads[i], NULL);
	for (i = 0; i < 3; i++) {
		ASSERT_TRUE(!args[i].failed);
		vnpu_infer_request_free(args[i].req);
	}
	vnpu_compiled_model_free(cm);
}

/* ---- one request misused from two threads at once ---- */

/* Calls each thread gets through (OK), and the most it tries. */
#define RACE_OKS 1000
#define RACE_MAX_CALLS 1000000

struct race_arg {
	vnpu_infer_request *req;
	vnpu_tensor *input;	/* a host tensor of the input's shape */
	unsigned int seed;
	int ok, busy;
	vnpu_status bad;	/* the first status neither OK nor BUSY */
	const char *bad_call;
};

/* Each call touching the request, at random: OK or VNPU_BUSY, nothing else. */
static void *race_main(void *p)
{
	struct race_arg *a = p;
	vnpu_profiling_info *info;
	vnpu_timeline *tl;
	vnpu_tensor *t;
	const char *call;
	vnpu_status st;
	int i;

	for (i = 0; i < RACE_MAX_CALLS && a->ok < RACE_OKS && !a->bad; i++) {
		switch (rand_r(&a->seed) % 7) {
		case 0:
			call = "infer";
			st = vnpu_infer_request_infer(a->req);
			break;
		case 1:
			call = "start_async";
			st = vnpu_infer_request_start_async(a->req);
			if (st == VNPU_OK)
				st = vnpu_infer_request_wait(a->req);
			break;
		case 2:
			call = "set_tensor";
			st = vnpu_infer_request_set_tensor(a->req, "x", a->input);
			break;
		case 3:
			call = "get_tensor";
			st = vnpu_infer_request_get_tensor(a->req, "y", &t);
			if (st == VNPU_OK)
				vnpu_tensor_free(t);
			break;
		case 4:
			call = "set_input_tensor";
			st = vnpu_infer_request_get_input_tensor(a->req, 0, &t);
			if (st == VNPU_OK) {
				st = vnpu_infer_request_set_input_tensor(a->req, 0, t);
				vnpu_tensor_free(t);
			}
			break;
		case 5:
			call = "get_profiling_info";
			st = vnpu_infer_request_get_profiling_info(a->req, &info);
			if (st == VNPU_OK)
				vnpu_profiling_info_free(info);
			if (st == VNPU_NOT_READY)	/* no run completed yet */
				st = VNPU_OK;
			break;
		default:
			call = "get_timeline";
			st = vnpu_infer_request_get_timeline(a->req, &tl);
			if (st == VNPU_OK)
				vnpu_timeline_free(tl);
			if (st == VNPU_NOT_READY)
				st = VNPU_OK;
			break;
		}
		if (st == VNPU_OK) {
			a->ok++;
		} else if (st == VNPU_BUSY) {
			a->busy++;
			sched_yield();	/* let the other thread out of its call */
		} else {
			a->bad = st;
			a->bad_call = call;
		}
	}
	return NULL;
}

/*
 * One request is for one thread at a time; two threads calling it at once
 * must each get OK or VNPU_BUSY, never memory corruption (run under ASan
 * and TSan too), and the request must work normally afterwards.
 */
TEST_F(dev, two_threads_one_request)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	const vnpu_shape shape = { 1, { FAST_ELEMS } };
	struct race_arg args[2];
	pthread_t threads[2];
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	vnpu_tensor *mine;
	int i, busy = 0;

	ASSERT_EQ(VNPU_OK, compile_copy(core, device, FAST_ELEMS, 2, &cm));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	for (i = 0; i < 2; i++) {
		args[i] = (struct race_arg){ .req = req, .seed = 1 + (unsigned int)i };
		/* f64 on an f32 port: set_tensor gives the request a staging copy */
		ASSERT_EQ(VNPU_OK,
			  vnpu_tensor_create(i ? VNPU_TYPE_F64 : VNPU_TYPE_F32, &shape,
					     &args[i].input));
	}
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, pthread_create(&threads[i], NULL, race_main, &args[i]));
	}
	for (i = 0; i < 2; i++)
		pthread_join(threads[i], NULL);
	for (i = 0; i < 2; i++) {
		if (args[i].bad)
			TH_LOG("thread %d: %s returned %s", i, args[i].bad_call,
				vnpu_status_str(args[i].bad));
		ASSERT_TRUE(!args[i].bad && args[i].ok == RACE_OKS);
		busy += args[i].busy;
		vnpu_tensor_free(args[i].input);
	}
	TH_LOG("%s: %d OK, %d BUSY", device, args[0].ok + args[1].ok, busy);
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_wait(req));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_create(VNPU_TYPE_F32, &shape, &mine));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_tensor(req, "x", mine));
	vnpu_tensor_free(mine);
	ASSERT_EQ(0, fill_input(req, 3, FAST_ELEMS));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_infer(req));
	ASSERT_EQ(0, check_output(req, 3, FAST_ELEMS));
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
}

/* ---- cancel ---- */

TEST_F(dev, cancel_before_start)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;

	ASSERT_EQ(VNPU_OK, compile_copy(core, device, FAST_ELEMS, 1, &cm));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_cancel(req));
	ASSERT_EQ(0, fill_input(req, 3, FAST_ELEMS));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_start_async(req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_wait(req));
	ASSERT_EQ(0, check_output(req, 3, FAST_ELEMS));
	/* cancelling a finished run changes nothing */
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_cancel(req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_wait(req));
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
}

/* Cancel @req's run at once: it ends CANCELLED (callback too), then reuse. */
static int cancel_run_then_reuse(struct __test_metadata *_metadata, vnpu_infer_request *req,
				 uint32_t elems, int wait_ms)
{
	struct cb_state s = { 0 };

	ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_callback(req, count_cb, &s));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_start_async(req));
	if (wait_ms)
		ASSERT_FAILS(VNPU_NOT_READY, vnpu_infer_request_wait_for(req, wait_ms));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_cancel(req));
	ASSERT_FAILS(VNPU_CANCELLED, vnpu_infer_request_wait(req));
	ASSERT_TRUE(atomic_load(&s.calls) == 1 && s.status == VNPU_CANCELLED);
	/* the status stays until the next start */
	ASSERT_FAILS(VNPU_CANCELLED, vnpu_infer_request_wait_for(req, 0));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_callback(req, NULL, NULL));
	(void)elems;
	return 0;
}

TEST_F(dev, cancel_during_run)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;

	ASSERT_EQ(VNPU_OK, compile_copy(core, device, SLOW_ELEMS, SLOW_COPIES, &cm));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	ASSERT_EQ(0, cancel_run_then_reuse(_metadata, req, SLOW_ELEMS, 0));
	ASSERT_EQ(0, fill_input(req, 9, SLOW_ELEMS));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_start_async(req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_wait(req));
	ASSERT_EQ(0, check_output(req, 9, SLOW_ELEMS));
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
	if (strcmp(device, "CPU"))
		return;

	/* On the CPU a job can be stopped while it runs: one that never ends. */
	ASSERT_EQ(VNPU_OK,
		  compile_on(core, device, copy_program(FAST_ELEMS, 1, true), VNPU_PERF_LATENCY,
			     &cm));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	ASSERT_EQ(0, cancel_run_then_reuse(_metadata, req, FAST_ELEMS, 20));
	ASSERT_EQ(0, cancel_run_then_reuse(_metadata, req, FAST_ELEMS, 5));
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
}

/* ---- chained requests: a's output tensor is b's input ---- */

TEST_F(dev, chained)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	struct cb_state s = { 0 };
	vnpu_compiled_model *cm;
	vnpu_infer_request *a, *b;
	vnpu_tensor *ay;
	int run;

	ASSERT_EQ(VNPU_OK, compile_copy(core, device, FAST_ELEMS, 1, &cm));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &a));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &b));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_tensor(a, "y", &ay));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_tensor(b, "x", ay));
	vnpu_tensor_free(ay);
	s.next = b;
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_callback(a, count_cb, &s));
	for (run = 0; run < 5; run++) {
		ASSERT_EQ(0, fill_input(a, (float)(50 + run), FAST_ELEMS));
		ASSERT_EQ(VNPU_OK, vnpu_infer_request_start_async(a));
		ASSERT_EQ(VNPU_OK, vnpu_infer_request_wait(a));	/* its callback started b */
		ASSERT_EQ(VNPU_OK, vnpu_infer_request_wait(b));
		ASSERT_TRUE(!s.failed);
		ASSERT_EQ(0, check_output(b, (float)(50 + run), FAST_ELEMS));
	}
	vnpu_infer_request_free(a);
	vnpu_infer_request_free(b);
	vnpu_compiled_model_free(cm);
}

/* ---- freeing while requests run ---- */

static void free_self_cb(vnpu_infer_request *req, vnpu_status st, void *data)
{
	(void)st;
	atomic_fetch_add((atomic_int *)data, 1);
	vnpu_infer_request_free(req);
}

/* Free core, compiled model and two running requests in order @order. */
static int free_in_order(struct __test_metadata *_metadata, const char *device, const int order[4])
{
	vnpu_infer_request *req[2];
	vnpu_compiled_model *cm;
	vnpu_core *core;
	int i;

	ASSERT_EQ(VNPU_OK, vnpu_core_create(&core));
	ASSERT_EQ(VNPU_OK, compile_copy(core, device, SLOW_ELEMS / 4, SLOW_COPIES, &cm));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req[i]));
		ASSERT_EQ(VNPU_OK, vnpu_infer_request_start_async(req[i]));
	}
	for (i = 0; i < 4; i++) {
		switch (order[i]) {
		case 0: vnpu_core_free(core); break;
		case 1: vnpu_compiled_model_free(cm); break;
		default: vnpu_infer_request_free(req[order[i] - 2]); break;
		}
	}
	return 0;
}

TEST_F(dev, free_every_order)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	int order[4], a, b, c, d, calls_before;
	atomic_int calls = 0;
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;

	for (a = 0; a < 4; a++)
		for (b = 0; b < 4; b++)
			for (c = 0; c < 4; c++)
				for (d = 0; d < 4; d++) {
					if (a == b || a == c || a == d || b == c || b == d || c == d)
						continue;
					order[0] = a, order[1] = b, order[2] = c, order[3] = d;
					ASSERT_EQ(0, free_in_order(_metadata, device, order));
				}

	/* From its own callback, and after its compiled model is gone. */
	ASSERT_EQ(VNPU_OK, compile_copy(core, device, FAST_ELEMS, 1, &cm));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	vnpu_compiled_model_free(cm);
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_callback(req, free_self_cb, &calls));
	calls_before = atomic_load(&calls);
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_start_async(req));
	while (atomic_load(&calls) == calls_before)
		usleep(1000);
}

/* ---- HETERO: the second segment on the CPU, async ---- */

/* y = x in two copies: device -> arena, then arena -> y on the CPU. */
static struct vnpu_program *two_segment_program(uint32_t elems)
{
	struct vnpu_program *p = copy_program(elems, 1, false);
	struct vnpu_cmd_copy *c0 = p->segments[0].cmd, *c1 = calloc(1, sizeof(*c1));

	p->arena_size = elems * 4ull;
	c0->dst = view(1, elems);
	*c1 = *c0;
	c1->dst = view(3, elems);
	c1->src = view(1, elems);
	p->segments = realloc(p->segments, 2 * sizeof(*p->segments));
	p->segments[1] = (struct vnpu_prog_segment){ VNPU_TARGET_FALLBACK, c1, sizeof(*c1), 1,
						     1, 1 };
	p->num_segments = 2;
	p->layers = realloc(p->layers, 2 * sizeof(*p->layers));
	p->layers[1] = (struct vnpu_prog_layer){ dup_str("back"), dup_str("Copy"), 1, 0, 1 };
	p->num_layers = 2;
	return p;
}

TEST_F(dev, hetero_async)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	struct vnpu_core_device *d = vnpu_core_find_device(core, device);
	struct vnpu_config cfg = { .profiling = true, .precision = VNPU_TYPE_F32 };
	uint32_t i, waits = 0, jobs = 0;
	struct cb_state s = { 0 };
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	vnpu_timeline *tl;
	int run;

	ASSERT_NE(NULL, d);
	ASSERT_EQ(VNPU_OK,
		  vnpu_compiled_model_new(core, d, core->cpu, "HETERO", &cfg,
					  two_segment_program(FAST_ELEMS), &cm));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_callback(req, count_cb, &s));
	for (run = 0; run < 5; run++) {
		ASSERT_EQ(0, fill_input(req, (float)(20 * run), FAST_ELEMS));
		ASSERT_EQ(VNPU_OK, vnpu_infer_request_start_async(req));
		ASSERT_EQ(VNPU_OK, vnpu_infer_request_wait(req));
		ASSERT_EQ(0, check_output(req, (float)(20 * run), FAST_ELEMS));
	}
	ASSERT_EQ(5, atomic_load(&s.calls));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_timeline(req, &tl));
	for (i = 0; i < tl->count; i++) {
		waits += !strcmp(tl->spans[i].name, "wait");
		jobs += !strcmp(tl->spans[i].kind, "job");
	}
	ASSERT_TRUE(waits == 2 && jobs == 2);
	vnpu_timeline_free(tl);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
}

/* ---- timeline and the THROUGHPUT hint ---- */

TEST_F(dev, timeline)
{
	vnpu_core *core = self->core;
	const char *device = self->device;

	static const char *const stages[] = {
		"preprocess", "upload", "submit", "wait", "download", "postprocess",
	};
	uint32_t i, j, layers = 0, found;
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	vnpu_timeline *tl;
	int api;

	ASSERT_EQ(VNPU_OK, compile_copy(core, device, FAST_ELEMS, 3, &cm));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	for (api = 0; api < 2; api++) {
		if (api) {
			ASSERT_EQ(VNPU_OK, vnpu_infer_request_start_async(req));
			ASSERT_EQ(VNPU_OK, vnpu_infer_request_wait(req));
		} else {
			ASSERT_EQ(VNPU_OK, vnpu_infer_request_infer(req));
		}
		ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_timeline(req, &tl));
		for (i = 0; i < 6; i++) {
			for (found = 0, j = 0; j < tl->count; j++)
				found += !strcmp(tl->spans[j].name, stages[i]) &&
					 !strcmp(tl->spans[j].kind, "stage");
			ASSERT_EQ(1, found);
		}
		for (layers = 0, j = 0; j < tl->count; j++) {
			ASSERT_GE(tl->spans[j].end_ns, tl->spans[j].start_ns);
			if (!strcmp(tl->spans[j].kind, "layer")) {
				layers++;
				ASSERT_STREQ(device, tl->spans[j].where);
			}
		}
		ASSERT_EQ(3, layers);
		vnpu_timeline_free(tl);
	}
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
}

/* ---- job order: the CPU device, like the NPU, ends jobs as submitted ---- */

struct infer_thread {
	vnpu_infer_request *req;
	vnpu_status status;
	atomic_int done;
};

static void *infer_main(void *arg)
{
	struct infer_thread *t = arg;

	t->status = vnpu_infer_request_infer(t->req);
	atomic_store(&t->done, 1);
	return NULL;
}

/*
 * A sync inference submitted while a job that never ends holds the CPU
 * device queues behind it, as on the NPU (jobs end in submission order):
 * it has not ended while the long job runs, and ends, with its output,
 * once that one is cancelled. (The NPU has no cancel of a running job:
 * there a SPIN ends at the timeout's reset.)
 */
TEST_F(dev, job_behind_long_job)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	struct timespec ts = { 0, 1000000 };
	struct infer_thread t = { 0 };
	vnpu_compiled_model *slow, *fast;
	vnpu_infer_request *spin;
	pthread_t thread;
	int ms, done_before_cancel;

	if (strcmp(device, "CPU") || sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs the CPU device on 2 or more CPUs");
	ASSERT_EQ(VNPU_OK,
		  compile_on(core, device, copy_program(FAST_ELEMS, 1, true), VNPU_PERF_LATENCY,
			     &slow));
	ASSERT_EQ(VNPU_OK, compile_copy(core, device, FAST_ELEMS, 3, &fast));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(slow, &spin));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(fast, &t.req));
	ASSERT_EQ(0, fill_input(t.req, 7, FAST_ELEMS));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_start_async(spin));
	ASSERT_EQ(0, pthread_create(&thread, NULL, infer_main, &t));
	for (ms = 0; ms < 50 && !atomic_load(&t.done); ms++)
		nanosleep(&ts, NULL);
	done_before_cancel = atomic_load(&t.done);
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_cancel(spin));
	ASSERT_FAILS(VNPU_CANCELLED, vnpu_infer_request_wait(spin));
	ASSERT_EQ(0, pthread_join(thread, NULL));
	ASSERT_FALSE(done_before_cancel);
	ASSERT_EQ(VNPU_OK, t.status);
	ASSERT_EQ(0, check_output(t.req, 7, FAST_ELEMS));
	/* The device is still usable, by both. */
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_infer(t.req));
	vnpu_infer_request_free(t.req);
	vnpu_infer_request_free(spin);
	vnpu_compiled_model_free(fast);
	vnpu_compiled_model_free(slow);
}

/* Jobs too long to run at submit (vnpu_exec_stream_is_short()); the tests
 * fill and check their first FAST_ELEMS floats. */
#define SIDE_ELEMS 8192

/*
 * A callback frees its own request, the last reference to its core: on the
 * CPU that callback runs on the device thread that ran the job, which must
 * not unload its own device (the callback executor frees the request).
 */
TEST_F(dev, callback_frees_last_of_core)
{
	const char *device = self->device;
	struct timespec ts = { 0, 1000000 };
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	atomic_int calls = 0;
	vnpu_core *core;
	int run, ms;

	for (run = 0; run < 20; run++) {
		ASSERT_EQ(VNPU_OK, vnpu_core_create(&core));
		/* Not a short job, so it does not run at submit. */
		ASSERT_EQ(VNPU_OK, compile_copy(core, device, SIDE_ELEMS, 2, &cm));
		ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
		ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_callback(req, free_self_cb, &calls));
		ASSERT_EQ(0, fill_input(req, 1, FAST_ELEMS));
		ASSERT_EQ(VNPU_OK, vnpu_infer_request_start_async(req));
		vnpu_compiled_model_free(cm);
		vnpu_core_free(core);
		for (ms = 0; ms < 10000 && atomic_load(&calls) <= run; ms++)
			nanosleep(&ts, NULL);
		ASSERT_EQ(run + 1, atomic_load(&calls));
	}
}

/* The first call starts the request again, the second frees it. */
static void restart_then_free_cb(vnpu_infer_request *req, vnpu_status st, void *data)
{
	(void)st;
	if (atomic_fetch_add((atomic_int *)data, 1) % 2 == 0)
		vnpu_infer_request_start_async(req);
	else
		vnpu_infer_request_free(req);
}

/* The threads of this process (/proc/self/status), 0 when unknown. */
static int thread_count(void)
{
	char line[128];
	FILE *f = fopen("/proc/self/status", "r");
	int n = 0;

	while (f && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Threads:", 8))
			n = atoi(line + 8);
	}
	if (f)
		fclose(f);
	return n;
}

/*
 * A short job's callback starts its request again: the next job runs at
 * submit, on the device thread inside the callback, which then finishes
 * that run too (nested). The second callback frees the request, the last
 * one of its core: the device thread hands it to the callback executor
 * also after the nested finish, and nothing waits for itself, so every
 * core goes with its devices' threads.
 */
TEST_F(dev, restart_at_submit_then_free)
{
	const char *device = self->device;
	struct timespec ts = { 0, 1000000 };
	int run, ms, threads = thread_count();
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	atomic_int calls = 0;
	vnpu_core *core;

	for (run = 0; run < 20; run++) {
		ASSERT_EQ(VNPU_OK, vnpu_core_create(&core));
		ASSERT_EQ(VNPU_OK, compile_copy(core, device, FAST_ELEMS, 1, &cm));
		ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
		ASSERT_EQ(VNPU_OK,
			  vnpu_infer_request_set_callback(req, restart_then_free_cb, &calls));
		ASSERT_EQ(0, fill_input(req, 1, FAST_ELEMS));
		ASSERT_EQ(VNPU_OK, vnpu_infer_request_start_async(req));
		vnpu_compiled_model_free(cm);
		vnpu_core_free(core);
		for (ms = 0; ms < 10000 && atomic_load(&calls) < 2 * (run + 1); ms++)
			nanosleep(&ts, NULL);
		ASSERT_EQ(2 * (run + 1), atomic_load(&calls));
	}
	for (ms = 0; ms < 10000 && thread_count() > threads; ms++)
		nanosleep(&ts, NULL);
	ASSERT_LE(thread_count(), threads);
}

#define SIDE_REQUESTS 4
#define SIDE_RUNS 50

/*
 * Requests kept in flight together (each callback starts its request
 * again with new input), as a THROUGHPUT benchmark does: their jobs queue
 * on the device together and end in order. Every request ends with its
 * own last input copied, and no job span of the timeline ends after the
 * wait that saw it end.
 */
TEST_F(dev, side_by_side_outputs)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	struct cb_state s[SIDE_REQUESTS] = { 0 };
	vnpu_infer_request *req[SIDE_REQUESTS];
	int64_t wait_end = 0;
	vnpu_compiled_model *cm;
	vnpu_timeline *tl;
	uint32_t i, k;

	ASSERT_EQ(VNPU_OK, compile_copy(core, device, SIDE_ELEMS, 4, &cm));
	for (i = 0; i < SIDE_REQUESTS; i++) {
		ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req[i]));
		s[i].restarts = SIDE_RUNS - 1;
		s[i].base = (float)(1000 * i);
		ASSERT_EQ(0, fill_input(req[i], s[i].base, FAST_ELEMS));
		ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_callback(req[i], count_cb, &s[i]));
	}
	for (i = 0; i < SIDE_REQUESTS; i++) {
		ASSERT_EQ(VNPU_OK, vnpu_infer_request_start_async(req[i]));
	}
	for (i = 0; i < SIDE_REQUESTS; i++) {
		ASSERT_EQ(VNPU_OK, vnpu_infer_request_wait(req[i]));
		ASSERT_TRUE(!s[i].failed);
		ASSERT_EQ(SIDE_RUNS, atomic_load(&s[i].calls));
		ASSERT_EQ((float)(1000 * i + SIDE_RUNS - 1), s[i].base);
		ASSERT_EQ(0, check_output(req[i], s[i].base, FAST_ELEMS));
		ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_timeline(req[i], &tl));
		for (k = 0; k < tl->count; k++) {
			if (!strcmp(tl->spans[k].name, "wait"))
				wait_end = tl->spans[k].end_ns;
			if (!strcmp(tl->spans[k].kind, "job"))
				ASSERT_TRUE(tl->spans[k].end_ns <= wait_end
					    && tl->spans[k].start_ns <= tl->spans[k].end_ns);
		}
		vnpu_timeline_free(tl);
	}
	for (i = 0; i < SIDE_REQUESTS; i++)
		vnpu_infer_request_free(req[i]);
	vnpu_compiled_model_free(cm);
}

/* ---- jobs queued while others are in flight (VNPU_SUBMIT_MORE_IN_FLIGHT) ---- */

#define QUEUED_FAST 3
#define QUEUED_MAX (CPU_TEST_MAX_TILES + QUEUED_FAST)
#define CPU_TEST_MAX_TILES 64

struct end_log {
	atomic_int n;
	atomic_int calls[QUEUED_MAX];	/* per job */
};

struct notified {
	struct end_log *log;
	vnpu_infer_request *req;
	int id;
	vnpu_status status;
};

/* A job's notify function: wait for and free the job, then count the call. */
static void log_end(void *arg)
{
	struct notified *x = arg;
	vnpu_status st;

	st = vnpu_request_job_wait(x->req, INT64_MAX);
	x->status = vnpu_request_job_end(x->req, st);
	atomic_fetch_add(&x->log->calls[x->id], 1);
	atomic_fetch_add(&x->log->n, 1);
}

/* Submit @x's request's one segment as a run among others in flight, notified. */
static vnpu_status submit_more(struct notified *x)
{
	vnpu_status st = vnpu_request_preprocess(x->req);

	if (st == VNPU_OK)
		st = vnpu_request_upload(x->req);
	if (st == VNPU_OK)
		st = vnpu_request_submit(x->req, VNPU_SUBMIT_MORE_IN_FLIGHT);
	if (st == VNPU_OK)
		st = vnpu_request_notify(x->req, log_end, x);
	return st;
}

/*
 * Jobs submitted while others are in flight are queued, not run at
 * submit, and the CPU device runs them side by side (the completion
 * context's wait among the threads). First with a never-ending job on
 * every tile: short jobs queued behind them do not start, and one
 * cancelled there ends CANCELLED once reached. Then with one on every
 * tile but one: the short jobs may run and end on the free tile, but do
 * not retire before the long ones. Either way no job's function is
 * called while the first job spins, and once the long ones are cancelled
 * every function is called once, the short jobs' outputs intact.
 * (Functions may run on several completion threads at once, so the order
 * they are entered in is not checked.)
 */
TEST_F(dev, queued_jobs_end_in_order)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	struct timespec ts = { 0, 1000000 };
	struct notified x[QUEUED_MAX];
	vnpu_compiled_model *slow, *fast;
	uint32_t tiles, spins, n, i;
	struct end_log log;
	int ms, phase;

	if (strcmp(device, "CPU"))
		SKIP(return, "the CPU device's queue");
	tiles = vnpu_core_find_device(core, device)->info.tiles;
	ASSERT_TRUE(tiles >= 1 && tiles <= CPU_TEST_MAX_TILES);
	ASSERT_EQ(VNPU_OK,
		  compile_on(core, device, copy_program(FAST_ELEMS, 1, true), VNPU_PERF_LATENCY,
			     &slow));
	ASSERT_EQ(VNPU_OK, compile_copy(core, device, FAST_ELEMS, 2, &fast));
	for (phase = 0; phase < 2; phase++) {
		spins = phase && tiles > 1 ? tiles - 1 : tiles;
		n = spins + QUEUED_FAST;
		memset(&log, 0, sizeof(log));
		for (i = 0; i < n; i++) {
			x[i] = (struct notified){ &log, NULL, (int)i, VNPU_GENERAL_ERROR };
			ASSERT_EQ(VNPU_OK,
				  vnpu_compiled_model_create_infer_request(i < spins ? slow : fast,
									   &x[i].req));
			ASSERT_EQ(0, fill_input(x[i].req, (float)(10 * i + phase), FAST_ELEMS));
		}
		for (i = 0; i < n; i++)
			ASSERT_EQ(VNPU_OK, submit_more(&x[i]));
		/* The second short job, queued behind the spinning ones: cancelled. */
		if (!phase)
			vnpu_request_cancel_job(x[spins + 1].req);
		for (ms = 0; ms < 20; ms++)
			nanosleep(&ts, NULL);
		ASSERT_EQ(0, atomic_load(&log.n));
		for (i = 0; i < spins; i++)
			vnpu_request_cancel_job(x[i].req);
		for (ms = 0; ms < 10000 && atomic_load(&log.n) < (int)n; ms++)
			nanosleep(&ts, NULL);
		ASSERT_EQ((int)n, atomic_load(&log.n));
		for (i = 0; i < n; i++) {
			ASSERT_EQ(1, atomic_load(&log.calls[i]));
			if (i < spins || (!phase && i == spins + 1)) {
				ASSERT_EQ(VNPU_CANCELLED, x[i].status);
				continue;
			}
			ASSERT_EQ(VNPU_OK, x[i].status);
			ASSERT_EQ(VNPU_OK, vnpu_request_download(x[i].req));
			ASSERT_EQ(0, check_output(x[i].req, (float)(10 * i + phase), FAST_ELEMS));
		}
		/* The device goes on: a sync inference. */
		ASSERT_EQ(VNPU_OK, vnpu_infer_request_infer(x[spins].req));
		for (i = 0; i < n; i++)
			vnpu_infer_request_free(x[i].req);
	}
	vnpu_compiled_model_free(fast);
	vnpu_compiled_model_free(slow);
}

struct cancel_later {
	vnpu_infer_request **req;
	uint32_t count;
};

static void *cancel_after_20ms(void *arg)
{
	struct cancel_later *c = arg;
	struct timespec ts = { 0, 20000000 };
	uint32_t i;

	nanosleep(&ts, NULL);
	for (i = 0; i < c->count; i++)
		vnpu_infer_request_cancel(c->req[i]);
	return NULL;
}

/*
 * Requests kept in flight with callbacks, their jobs queued behind a
 * never-ending job on every tile, are freed while queued (another thread
 * cancels the long jobs meanwhile; a callback that ran first may find its
 * request being freed when it starts it again), then the core: nothing
 * hangs, and every device and completion thread goes with the core.
 */
TEST_F(dev, free_while_queued)
{
	const char *device = self->device;
	struct timespec ts = { 0, 1000000 };
	int run, ms, threads = thread_count();
	vnpu_infer_request *spin[CPU_TEST_MAX_TILES], *req[QUEUED_FAST];
	struct cb_state s[QUEUED_FAST];
	vnpu_compiled_model *slow, *fast;
	struct cancel_later c;
	pthread_t thread;
	vnpu_core *core;
	uint32_t tiles, i;

	if (strcmp(device, "CPU"))
		SKIP(return, "the CPU device's queue");
	for (run = 0; run < 5; run++) {
		ASSERT_EQ(VNPU_OK, vnpu_core_create(&core));
		tiles = vnpu_core_find_device(core, device)->info.tiles;
		ASSERT_TRUE(tiles >= 1 && tiles <= CPU_TEST_MAX_TILES);
		ASSERT_EQ(VNPU_OK, compile_on(core, device, copy_program(FAST_ELEMS, 1, true),
					      VNPU_PERF_LATENCY, &slow));
		ASSERT_EQ(VNPU_OK, compile_copy(core, device, FAST_ELEMS, 1, &fast));
		for (i = 0; i < tiles; i++) {
			ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(slow, &spin[i]));
			ASSERT_EQ(VNPU_OK, vnpu_infer_request_start_async(spin[i]));
		}
		for (i = 0; i < QUEUED_FAST; i++) {
			s[i] = (struct cb_state){ .restarts = 1000 };
			ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(fast, &req[i]));
			ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_callback(req[i], count_cb, &s[i]));
			ASSERT_EQ(VNPU_OK, vnpu_infer_request_start_async(req[i]));
		}
		c = (struct cancel_later){ spin, tiles };
		ASSERT_EQ(0, pthread_create(&thread, NULL, cancel_after_20ms, &c));
		for (i = 0; i < QUEUED_FAST; i++)
			vnpu_infer_request_free(req[i]);
		ASSERT_EQ(0, pthread_join(thread, NULL));
		for (i = 0; i < tiles; i++) {
			ASSERT_FAILS(VNPU_CANCELLED, vnpu_infer_request_wait(spin[i]));
			vnpu_infer_request_free(spin[i]);
		}
		vnpu_compiled_model_free(fast);
		vnpu_compiled_model_free(slow);
		vnpu_core_free(core);
	}
	for (ms = 0; ms < 10000 && thread_count() > threads; ms++)
		nanosleep(&ts, NULL);
	ASSERT_LE(thread_count(), threads);
}

TEST_F(dev, hint_requests)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	vnpu_property_value *v;
	vnpu_compiled_model *cm;

	ASSERT_EQ(VNPU_OK,
		  compile_on(core, device, copy_program(FAST_ELEMS, 1, false), VNPU_PERF_LATENCY,
			     &cm));
	ASSERT_EQ(VNPU_OK,
		  vnpu_compiled_model_get_property(cm, VNPU_PROP_OPTIMAL_NUMBER_OF_INFER_REQUESTS,
						   &v));
	ASSERT_EQ(1, v->integer);
	vnpu_property_value_free(v);
	vnpu_compiled_model_free(cm);

	ASSERT_EQ(VNPU_OK, compile_copy(core, device, SLOW_ELEMS / 8, 2, &cm));
	ASSERT_EQ(VNPU_OK,
		  vnpu_compiled_model_get_property(cm, VNPU_PROP_OPTIMAL_NUMBER_OF_INFER_REQUESTS,
						   &v));
	TH_LOG("%s: OPTIMAL_NUMBER_OF_INFER_REQUESTS (THROUGHPUT) = %lld", device,
	       (long long)v->integer);
	ASSERT_TRUE(v->integer >= 2 && v->integer <= 64);
	vnpu_property_value_free(v);
	vnpu_compiled_model_free(cm);
}

RUNTIME_TEST_MAIN

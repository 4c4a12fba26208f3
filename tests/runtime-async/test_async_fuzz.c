// SPDX-License-Identifier: MIT
/*
 * Infer requests used at random from several threads, as the API allows:
 * each request has an owner thread that sets its inputs (right ones, and
 * tensors of the wrong shape or type), runs it sync or async, sets and
 * clears a callback (which restarts the request now and then), reads its
 * outputs and profiling, and frees and recreates it, also while it runs;
 * every thread waits for, polls and cancels any request at any time.
 *
 * Each call must return a status the API documents for it in that state,
 * with a message when it fails; and a run that ended OK must have computed
 * exactly what one run of the same inputs computed alone before the
 * threads started (the engine is deterministic), so results cannot leak
 * between requests or runs.
 *
 *   test-runtime-async-fuzz [-d DEVICE] [-n OPS] [-s SEED] [-v]
 *
 * OPS per thread (default 3000). The test skips when DEVICE is not there.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vnpu/vnpu.h>

#include "runtime_test.h"

#define MODEL "/usr/share/libonnx-testdata/data/node/test_gemm_default_matrix_bias/model.onnx"
#define THREADS 4
#define REQUESTS 8		/* request i is owned by thread i % THREADS */
#define PATTERNS 4		/* input sets with a known result */
#define MAX_PORTS 4
#define MAX_BYTES 4096

struct slot {
	pthread_rwlock_t lock;	/* write: the owner frees or recreates */
	vnpu_infer_request *req;
	int pattern;		/* inputs set, or -1 (owner only) */
	atomic_int restarts;	/* the callback may restart this many times */
	atomic_ulong callbacks;
};

static struct {
	vnpu_core *core;
	vnpu_compiled_model *cm;
	const char *device;
	uint64_t ops, seed;
	bool verbose;
	uint32_t num_inputs, num_outputs;
	vnpu_tensor *inputs[PATTERNS][MAX_PORTS];
	unsigned char golden[PATTERNS][MAX_PORTS][MAX_BYTES];
	uint64_t out_bytes[MAX_PORTS];
	struct slot slots[REQUESTS];
	atomic_bool failed;
	atomic_ulong ran_ok, checked, cancelled, busy;
} g;

struct worker {
	int index;
	uint64_t rng;
};

static uint64_t rnd(struct worker *w)
{
	w->rng ^= w->rng >> 12;
	w->rng ^= w->rng << 25;
	w->rng ^= w->rng >> 27;
	return w->rng * 2685821657736338717ull;
}

static uint64_t below(struct worker *w, uint64_t n)
{
	return rnd(w) % n;
}

static void fail(struct worker *w, const char *what, vnpu_status st)
{
	if (!atomic_exchange(&g.failed, true))
		fprintf(stderr, "test-runtime-async-fuzz: seed %llu, thread %d: %s: status %d (%s)\n",
			(unsigned long long)g.seed, w ? w->index : -1, what, st, vnpu_last_error());
}

/* @st must be one of the statuses listed after it (end with 1); an error
 * must come with a message. */
static void expect(struct worker *w, const char *what, vnpu_status st, ...)
{
	va_list ap;
	int ok = 0, s;

	va_start(ap, st);
	while ((s = va_arg(ap, int)) != 1)
		ok |= s == st;
	va_end(ap);
	if (!ok || (st != VNPU_OK && !vnpu_last_error()[0]))
		fail(w, what, st);
	if (st == VNPU_BUSY)
		g.busy++;
	if (st == VNPU_CANCELLED)
		g.cancelled++;
}

/* The outputs of @req equal the golden ones of @pattern (when readable). */
static void check_outputs(struct worker *w, vnpu_infer_request *req, int pattern)
{
	for (uint32_t o = 0; o < g.num_outputs; o++) {
		vnpu_tensor *t;
		void *data;
		vnpu_status st = vnpu_infer_request_get_output_tensor(req, o, &t);

		/* a callback may have started it again meanwhile */
		expect(w, "get_output_tensor", st, VNPU_OK, VNPU_BUSY, 1);
		if (st != VNPU_OK)
			return;
		if (vnpu_tensor_get_data(t, &data) ||
		    memcmp(data, g.golden[pattern][o], g.out_bytes[o])) {
			fail(w, "an output differs from the same inputs' result alone", VNPU_OK);
			vnpu_tensor_free(t);
			return;
		}
		vnpu_tensor_free(t);
	}
	g.checked++;
}

static void restart_cb(vnpu_infer_request *req, vnpu_status status, void *user_data)
{
	struct slot *s = user_data;

	(void)status;
	atomic_fetch_add(&s->callbacks, 1);
	if (atomic_fetch_sub(&s->restarts, 1) > 0) {
		vnpu_status st = vnpu_infer_request_start_async(req);

		/* INVALID_ARGUMENT: its owner is freeing it */
		expect(NULL, "start_async from a callback", st, VNPU_OK, VNPU_BUSY,
		       VNPU_INVALID_ARGUMENT, 1);
	}
}

static vnpu_status set_inputs(struct slot *s, int pattern)
{
	for (uint32_t i = 0; i < g.num_inputs; i++) {
		vnpu_status st = vnpu_infer_request_set_input_tensor(s->req, i,
								     g.inputs[pattern][i]);

		if (st != VNPU_OK) {
			s->pattern = -1;	/* some are set, some not */
			return st;
		}
	}
	s->pattern = pattern;
	return VNPU_OK;
}

/* A tensor the input does not take: another shape or element type. */
static void set_wrong_input(struct worker *w, struct slot *s)
{
	vnpu_shape shape = { 2, { 3, 1 + (int64_t)below(w, 5) } };
	vnpu_tensor *t;
	vnpu_status st;

	if (vnpu_tensor_create(below(w, 2) ? VNPU_TYPE_F32 : VNPU_TYPE_I32, &shape, &t)) {
		fail(w, "tensor_create", VNPU_GENERAL_ERROR);
		return;
	}
	st = vnpu_infer_request_set_input_tensor(s->req, (uint32_t)below(w, g.num_inputs + 1), t);
	expect(w, "set_input_tensor (wrong)", st, VNPU_INVALID_ARGUMENT, VNPU_NOT_FOUND,
	       VNPU_BUSY, VNPU_OK, 1);
	if (st == VNPU_OK)	/* it happened to fit: the inputs are unknown now */
		s->pattern = -1;
	vnpu_tensor_free(t);
}

static void owner_op(struct worker *w, struct slot *s)
{
	vnpu_profiling_info *prof;
	vnpu_status st;

	switch (below(w, 10)) {
	case 0:
	case 1:
		st = set_inputs(s, (int)below(w, PATTERNS));
		expect(w, "set_input_tensor", st, VNPU_OK, VNPU_BUSY, 1);
		break;
	case 2:
		set_wrong_input(w, s);
		break;
	case 3:
	case 4:
		st = vnpu_infer_request_infer(s->req);
		/* another thread may cancel it; a wrong input is an error */
		expect(w, "infer", st, VNPU_OK, VNPU_BUSY, VNPU_CANCELLED,
		       VNPU_INVALID_ARGUMENT, 1);
		if (st == VNPU_OK) {
			g.ran_ok++;
			if (s->pattern >= 0)
				check_outputs(w, s->req, s->pattern);
		}
		break;
	case 5:
	case 6:
		st = vnpu_infer_request_start_async(s->req);
		expect(w, "start_async", st, VNPU_OK, VNPU_BUSY, VNPU_INVALID_ARGUMENT, 1);
		break;
	case 7:
		atomic_store(&s->restarts, (int)below(w, 3));
		st = vnpu_infer_request_set_callback(s->req, below(w, 3) ? restart_cb : NULL, s);
		expect(w, "set_callback", st, VNPU_OK, VNPU_BUSY, 1);
		break;
	case 8:
		st = vnpu_infer_request_get_profiling_info(s->req, &prof);
		expect(w, "get_profiling_info", st, VNPU_OK, VNPU_BUSY, VNPU_UNSUPPORTED, 1);
		if (st == VNPU_OK)
			vnpu_profiling_info_free(prof);
		break;
	default:
		/* free, maybe while it runs, and make a new one */
		pthread_rwlock_wrlock(&s->lock);
		vnpu_infer_request_free(s->req);
		s->req = NULL;
		s->pattern = -1;
		st = vnpu_compiled_model_create_infer_request(g.cm, &s->req);
		expect(w, "create_infer_request", st, VNPU_OK, 1);
		pthread_rwlock_unlock(&s->lock);
		break;
	}
}

/* What any thread may do to any request. */
static void any_op(struct worker *w, struct slot *s)
{
	vnpu_status st;

	pthread_rwlock_rdlock(&s->lock);
	if (!s->req) {
		pthread_rwlock_unlock(&s->lock);
		return;
	}
	switch (below(w, 5)) {
	case 0:
	case 1:
		st = vnpu_infer_request_wait(s->req);
		expect(w, "wait", st, VNPU_OK, VNPU_CANCELLED, VNPU_INVALID_ARGUMENT, 1);
		break;
	case 2:
	case 3:
		st = vnpu_infer_request_wait_for(s->req, (int64_t)below(w, 4));
		expect(w, "wait_for", st, VNPU_OK, VNPU_CANCELLED, VNPU_NOT_READY,
		       VNPU_INVALID_ARGUMENT, 1);
		break;
	default:
		st = vnpu_infer_request_cancel(s->req);
		expect(w, "cancel", st, VNPU_OK, 1);
		break;
	}
	pthread_rwlock_unlock(&s->lock);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	for (uint64_t n = 0; n < g.ops && !g.failed; n++) {
		int i = (int)below(w, REQUESTS);

		if (i % THREADS == w->index && below(w, 4))
			owner_op(w, &g.slots[i]);
		else
			any_op(w, &g.slots[i]);
	}
	return NULL;
}

/* Input patterns and what one request alone makes of each. */
static int make_golden(void)
{
	vnpu_infer_request *req;
	vnpu_port port;

	if (vnpu_compiled_model_get_num_inputs(g.cm, &g.num_inputs) ||
	    vnpu_compiled_model_get_num_outputs(g.cm, &g.num_outputs) ||
	    g.num_inputs > MAX_PORTS || g.num_outputs > MAX_PORTS ||
	    vnpu_compiled_model_create_infer_request(g.cm, &req))
		return -1;
	for (int p = 0; p < PATTERNS; p++) {
		for (uint32_t i = 0; i < g.num_inputs; i++) {
			float *data;
			uint64_t n;

			if (vnpu_compiled_model_get_input(g.cm, i, &port) ||
			    vnpu_tensor_create(port.type, &port.shape, &g.inputs[p][i]) ||
			    vnpu_tensor_get_size(g.inputs[p][i], &n) ||
			    vnpu_tensor_get_data(g.inputs[p][i], (void **)&data) ||
			    port.type != VNPU_TYPE_F32)
				return -1;
			for (uint64_t k = 0; k < n; k++)
				data[k] = (float)((k * 7 + i * 3 + (uint64_t)p * 11) % 17) - 8.0f;
			if (vnpu_infer_request_set_input_tensor(req, i, g.inputs[p][i]))
				return -1;
		}
		if (vnpu_infer_request_infer(req))
			return -1;
		for (uint32_t o = 0; o < g.num_outputs; o++) {
			vnpu_tensor *t;
			void *data;

			if (vnpu_infer_request_get_output_tensor(req, o, &t))
				return -1;
			if (vnpu_tensor_get_byte_size(t, &g.out_bytes[o]) ||
			    g.out_bytes[o] > MAX_BYTES || vnpu_tensor_get_data(t, &data)) {
				vnpu_tensor_free(t);
				return -1;
			}
			memcpy(g.golden[p][o], data, g.out_bytes[o]);
			vnpu_tensor_free(t);
		}
	}
	vnpu_infer_request_free(req);
	return 0;
}

TEST(threads)
{
	struct worker w[THREADS];
	pthread_t tid[THREADS];
	unsigned long callbacks = 0;
	vnpu_model *m;

	if (access(MODEL, R_OK))
		SKIP(return, "%s is missing (libonnx-testdata)", MODEL);
	ASSERT_EQ(VNPU_OK, vnpu_core_create(&g.core));
	if (!has_device(g.core, g.device)) {
		vnpu_core_free(g.core);
		SKIP(return, "no %s device", g.device);
	}
	ASSERT_EQ(VNPU_OK, vnpu_core_read_model(g.core, MODEL, &m));
	ASSERT_EQ(VNPU_OK, vnpu_core_compile_model(g.core, m, g.device, NULL, &g.cm));
	ASSERT_EQ(0, make_golden()) TH_LOG("setup: %s", vnpu_last_error());
	vnpu_model_free(m);
	for (int i = 0; i < REQUESTS; i++) {
		pthread_rwlock_init(&g.slots[i].lock, NULL);
		g.slots[i].pattern = -1;
		ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(g.cm, &g.slots[i].req));
	}
	for (int i = 0; i < THREADS; i++) {
		w[i] = (struct worker){ .index = i, .rng = (g.seed + (uint64_t)i) * 0x9e3779b97f4a7c15ull + 1 };
		ASSERT_EQ(0, pthread_create(&tid[i], NULL, worker_main, &w[i]));
	}
	for (int i = 0; i < THREADS; i++)
		pthread_join(tid[i], NULL);

	/* Free them in flight: half started just before. */
	for (int i = 0; i < REQUESTS; i++) {
		if (i % 2 && !g.failed)
			expect(NULL, "start_async", vnpu_infer_request_start_async(g.slots[i].req),
			       VNPU_OK, VNPU_BUSY, VNPU_INVALID_ARGUMENT, 1);
		callbacks += atomic_load(&g.slots[i].callbacks);
		vnpu_infer_request_free(g.slots[i].req);
		pthread_rwlock_destroy(&g.slots[i].lock);
	}
	TH_LOG("%s, seed %llu: %d threads x %llu calls on %d requests: %lu runs OK (%lu outputs "
	       "checked), %lu cancelled, %lu busy, %lu callbacks",
	       g.device, (unsigned long long)g.seed, THREADS, (unsigned long long)g.ops, REQUESTS,
	       (unsigned long)g.ran_ok, (unsigned long)g.checked, (unsigned long)g.cancelled,
	       (unsigned long)g.busy, callbacks);
	for (int p = 0; p < PATTERNS; p++)
		for (uint32_t i = 0; i < g.num_inputs; i++)
			vnpu_tensor_free(g.inputs[p][i]);
	vnpu_compiled_model_free(g.cm);
	vnpu_core_free(g.core);
	ASSERT_FALSE(atomic_load(&g.failed));
}

KSFT_MAIN_ORDER

int main(int argc, char **argv)
{
	int opt;

	g.device = "CPU";
	g.ops = 3000;
	g.seed = 20261130;
	while ((opt = getopt(argc, argv, "d:n:s:v")) != -1) {
		switch (opt) {
		case 'd':
			g.device = optarg;
			break;
		case 'n':
			g.ops = strtoull(optarg, NULL, 0);
			break;
		case 's':
			g.seed = strtoull(optarg, NULL, 0);
			break;
		case 'v':
			g.verbose = true;
			break;
		default:
			fprintf(stderr,
				"usage: test-runtime-async-fuzz [-d DEVICE] [-n OPS] [-s SEED] [-v]\n");
			return 2;
		}
	}
	return ksft_main_run(argc, argv, optind);
}

// SPDX-License-Identifier: MIT
/*
 * Models compiled with dynamic input dimensions: dynamic ports, a program
 * per input shape compiled on first use and kept in the compiled model's
 * LRU cache (DYNAMIC_SHAPE_CACHE_SIZE, DYNAMIC_SHAPE_COMPILES), the
 * "compile" stage in the profile, and what set_tensor and infer refuse.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime_test.h"
#include "onnx_writer.h"

#define C 4			/* the static last dimension */

static const float bias[C] = { 0.5f, -1.0f, 2.0f, 0.0f };

/* y = Relu(x) + b over x f32[1,?,4]: y is f32[1,?,4] too. */
static vnpu_status compile_relu_add(vnpu_core *core, const char *device,
				    const char *const *props, vnpu_compiled_model **out)
{
	const int64_t dims[3] = { 1, -1, C }, bdims[1] = { C };
	struct pb graph = { 0 };

	onnx_node(&graph, "Relu", (const char *[]){ "x" }, 1, "r");
	onnx_node(&graph, "Add", (const char *[]){ "r", "b" }, 2, "y");
	pb_str(&graph, GRAPH_NAME, "dynamic");
	onnx_init(&graph, "b", ONNX_FLOAT, 1, bdims, bias, sizeof(bias));
	onnx_value(&graph, GRAPH_INPUT, "x", 3, dims);
	onnx_value(&graph, GRAPH_OUTPUT, "y", 3, dims);
	return onnx_compile(core, &graph, 13, device, props, out);
}

static int64_t int_property(vnpu_compiled_model *cm, const char *key)
{
	vnpu_property_value *v;
	int64_t n;

	if (vnpu_compiled_model_get_property(cm, key, &v))
		return -1;
	n = v->integer;
	vnpu_property_value_free(v);
	return n;
}

static float x_at(int64_t i, float seed)
{
	return (float)(i % 9) - 4.0f + seed;
}

/* One run of @req on x of @width steps; checks y against the formula. */
static int run_width(struct __test_metadata *_metadata, vnpu_infer_request *req, int64_t width,
		     float seed, bool async)
{
	const vnpu_shape shape = { 3, { 1, width, C } };
	vnpu_tensor *x, *y;
	vnpu_shape got;
	float *px, *py;

	ASSERT_EQ(VNPU_OK, vnpu_tensor_create(VNPU_TYPE_F32, &shape, &x));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(x, (void **)&px));
	for (int64_t i = 0; i < width * C; i++)
		px[i] = x_at(i, seed);
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_tensor(req, "x", x));
	vnpu_tensor_free(x);
	if (async) {
		ASSERT_EQ(VNPU_OK, vnpu_infer_request_start_async(req));
		ASSERT_EQ(VNPU_OK, vnpu_infer_request_wait(req));
	} else {
		ASSERT_EQ(VNPU_OK, vnpu_infer_request_infer(req));
	}
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_tensor(req, "y", &y));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_shape(y, &got));
	ASSERT_TRUE(got.rank == 3 && got.dims[0] == 1 && got.dims[1] == width && got.dims[2] == C);
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(y, (void **)&py));
	for (int64_t i = 0; i < width * C; i++) {
		float r = x_at(i, seed) > 0 ? x_at(i, seed) : 0;

		ASSERT_EQ(r + bias[i % C], py[i]);
	}
	vnpu_tensor_free(y);
	return 0;
}

/* The compiled model keeps the dynamic ports; no program exists yet. */
TEST_F(dev, dynamic_ports)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	vnpu_compiled_model *cm;
	vnpu_port in, out;
	size_t size;
	void *blob;

	ASSERT_EQ(VNPU_OK, compile_relu_add(core, device, NULL, &cm));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_get_input(cm, 0, &in));
	ASSERT_TRUE(!strcmp(in.name, "x") && in.type == VNPU_TYPE_F32 && in.shape.rank == 3);
	ASSERT_TRUE(in.shape.dims[0] == 1 && in.shape.dims[1] == VNPU_DIM_DYNAMIC
		    && in.shape.dims[2] == C);
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_get_output(cm, 0, &out));
	ASSERT_TRUE(!strcmp(out.name, "y") && out.shape.dims[1] == VNPU_DIM_DYNAMIC);
	ASSERT_EQ(0, int_property(cm, VNPU_PROP_DYNAMIC_SHAPE_COMPILES));
	ASSERT_EQ(8, int_property(cm, VNPU_PROP_DYNAMIC_SHAPE_CACHE_SIZE));
	ASSERT_EQ(0, int_property(cm, VNPU_PROP_WEIGHTS_SIZE));
	ASSERT_FAILS(VNPU_NOT_READY, vnpu_compiled_model_export(cm, &blob, &size));
	ASSERT_NE(NULL, strstr(vnpu_last_error(), "run none yet"));
	vnpu_compiled_model_free(cm);
}

/* The "compile" stage of the last run's profile ran (1), did not (0), or -1. */
static int compile_stage(vnpu_infer_request *req)
{
	vnpu_profiling_info *info;
	int ran = -1;

	if (vnpu_infer_request_get_profiling_info(req, &info))
		return -1;
	for (uint32_t i = 0; i < info->count; i++)
		if (!strcmp(info->entries[i].name, "compile") &&
		    !strcmp(info->entries[i].node_type, "Stage"))
			ran = info->entries[i].status == VNPU_PROFILING_EXECUTED &&
			      info->entries[i].real_time_ns > 0;
	vnpu_profiling_info_free(info);
	return ran;
}

/* Two widths in one compiled model, each compiled once, sync and async. */
TEST_F(dev, dynamic_two_widths)
{
	vnpu_core *core = self->core;
	const char *device = self->device;

	static const char *const props[] = { VNPU_PROP_ENABLE_PROFILING, "YES", NULL };
	vnpu_infer_request *req, *other;
	vnpu_compiled_model *cm;

	ASSERT_EQ(VNPU_OK, compile_relu_add(core, device, props, &cm));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	ASSERT_FAILS(VNPU_NOT_READY,
		     vnpu_infer_request_get_profiling_info(req, &(vnpu_profiling_info *){ 0 }));
	ASSERT_EQ(0, run_width(_metadata, req, 3, 0.0f, false));
	ASSERT_EQ(1, compile_stage(req));
	ASSERT_GT(int_property(cm, VNPU_PROP_WEIGHTS_SIZE), 0);
	ASSERT_EQ(0, run_width(_metadata, req, 7, 1.5f, false));
	ASSERT_EQ(1, compile_stage(req));
	ASSERT_EQ(2, int_property(cm, VNPU_PROP_DYNAMIC_SHAPE_COMPILES));
	ASSERT_EQ(0, run_width(_metadata, req, 3, -2.0f, true));
	ASSERT_EQ(0, compile_stage(req));
	ASSERT_EQ(0, run_width(_metadata, req, 7, 0.25f, true));
	ASSERT_EQ(2, int_property(cm, VNPU_PROP_DYNAMIC_SHAPE_COMPILES));
	/* A second request finds both programs compiled. */
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &other));
	ASSERT_EQ(0, run_width(_metadata, other, 7, 3.0f, false));
	ASSERT_EQ(0, compile_stage(other));
	ASSERT_EQ(2, int_property(cm, VNPU_PROP_DYNAMIC_SHAPE_COMPILES));
	vnpu_infer_request_free(other);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
}

/* Shapes the port does not allow, and runs without a shape. */
TEST_F(dev, dynamic_bad_shapes)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	const vnpu_shape wrong_dim = { 3, { 1, 5, C + 1 } }, wrong_rank = { 2, { 5, C } };
	const vnpu_shape batch2 = { 3, { 2, 5, C } }, fits = { 3, { 1, 2, C } };
	vnpu_tensor *t, *x, *s;
	vnpu_infer_request *req;
	vnpu_compiled_model *cm;

	ASSERT_EQ(VNPU_OK, compile_relu_add(core, device, NULL, &cm));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	ASSERT_FAILS(VNPU_NOT_READY, vnpu_infer_request_get_tensor(req, "x", &t));
	ASSERT_NE(NULL, strstr(vnpu_last_error(), "[1,?,4]"));
	ASSERT_FAILS(VNPU_NOT_READY, vnpu_infer_request_get_tensor(req, "y", &t));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_infer_request_infer(req));
	ASSERT_NE(NULL, strstr(vnpu_last_error(), "set a tensor of its shape first"));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_infer_request_start_async(req));

	ASSERT_EQ(VNPU_OK, vnpu_tensor_create(VNPU_TYPE_F32, &wrong_dim, &t));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_infer_request_set_tensor(req, "x", t));
	ASSERT_NE(NULL, strstr(vnpu_last_error(), "[1,5,5]"));
	vnpu_tensor_free(t);
	ASSERT_EQ(VNPU_OK, vnpu_tensor_create(VNPU_TYPE_F32, &batch2, &t));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_infer_request_set_tensor(req, "x", t));
	vnpu_tensor_free(t);
	ASSERT_EQ(VNPU_OK, vnpu_tensor_create(VNPU_TYPE_F32, &wrong_rank, &t));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_infer_request_set_input_tensor(req, 0, t));
	vnpu_tensor_free(t);

	/* An output tensor of the wrong size fails the run, not the set. */
	ASSERT_EQ(VNPU_OK, vnpu_tensor_create(VNPU_TYPE_F32, &fits, &x));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_tensor(req, "x", x));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_create(VNPU_TYPE_F32, &(vnpu_shape){ 3, { 1, 3, C } }, &s));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_tensor(req, "y", s));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_infer_request_infer(req));
	vnpu_tensor_free(s);
	ASSERT_EQ(VNPU_OK, vnpu_tensor_create(VNPU_TYPE_F32, &fits, &s));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_tensor(req, "y", s));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_infer(req));
	vnpu_tensor_free(s);
	vnpu_tensor_free(x);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
}

/* DYNAMIC_SHAPE_CACHE_SIZE: refused out of 1..1024, and the LRU it bounds. */
TEST_F(dev, dynamic_cache_size)
{
	vnpu_core *core = self->core;
	const char *device = self->device;

	static const char *const bad[] = { "0", "-1", "1025", "99999999999999999999", "x" };
	const char *props[3] = { VNPU_PROP_DYNAMIC_SHAPE_CACHE_SIZE, NULL, NULL };
	vnpu_infer_request *req;
	vnpu_compiled_model *cm;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		props[1] = bad[i];
		ASSERT_FAILS(VNPU_INVALID_ARGUMENT, compile_relu_add(core, device, props, &cm));
		ASSERT_NE(NULL, strstr(vnpu_last_error(), VNPU_PROP_DYNAMIC_SHAPE_CACHE_SIZE));
		ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
			     vnpu_core_set_property_str(core, device,
							VNPU_PROP_DYNAMIC_SHAPE_CACHE_SIZE, bad[i]));
	}
	props[1] = "2";
	ASSERT_EQ(VNPU_OK, compile_relu_add(core, device, props, &cm));
	ASSERT_EQ(2, int_property(cm, VNPU_PROP_DYNAMIC_SHAPE_CACHE_SIZE));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	ASSERT_EQ(0, run_width(_metadata, req, 2, 0.0f, false));
	ASSERT_EQ(0, run_width(_metadata, req, 3, 0.0f, false));
	ASSERT_EQ(0, run_width(_metadata, req, 2, 1.0f, false));
	ASSERT_EQ(2, int_property(cm, VNPU_PROP_DYNAMIC_SHAPE_COMPILES));
	/* Width 4 drops width 3, the least recently used, not 2. */
	ASSERT_EQ(0, run_width(_metadata, req, 4, 0.0f, false));
	ASSERT_EQ(0, run_width(_metadata, req, 2, 2.0f, false));
	ASSERT_EQ(3, int_property(cm, VNPU_PROP_DYNAMIC_SHAPE_COMPILES));
	ASSERT_EQ(0, run_width(_metadata, req, 3, 0.0f, false));
	ASSERT_EQ(4, int_property(cm, VNPU_PROP_DYNAMIC_SHAPE_COMPILES));
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);

	/* The device's value is the compile's default. */
	ASSERT_EQ(VNPU_OK,
		  vnpu_core_set_property_str(core, device, VNPU_PROP_DYNAMIC_SHAPE_CACHE_SIZE,
					     "1024"));
	ASSERT_EQ(VNPU_OK, compile_relu_add(core, device, NULL, &cm));
	ASSERT_EQ(1024, int_property(cm, VNPU_PROP_DYNAMIC_SHAPE_CACHE_SIZE));
	vnpu_compiled_model_free(cm);
	ASSERT_EQ(VNPU_OK,
		  vnpu_core_set_property_str(core, device, VNPU_PROP_DYNAMIC_SHAPE_CACHE_SIZE,
					     "8"));
}

struct callback_seen {
	vnpu_infer_request *req;
	vnpu_status status;
	int calls;
};

static void on_done(vnpu_infer_request *req, vnpu_status status, void *user_data)
{
	struct callback_seen *seen = user_data;

	seen->req = req;
	seen->status = status;
	seen->calls++;
}

/*
 * The asynchronous calls on a request of dynamic inputs: the callback gets
 * that request (not the one of the program inside), wait_for, cancel and
 * the timeline answer before a run and after.
 */
TEST_F(dev, dynamic_async_calls)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	struct callback_seen seen = { 0 };
	vnpu_infer_request *req;
	vnpu_compiled_model *cm;
	vnpu_timeline *tl;

	ASSERT_EQ(VNPU_OK, compile_relu_add(core, device, NULL, &cm));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_wait(req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_wait_for(req, 0));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_infer_request_wait_for(req, -1));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_cancel(req));
	ASSERT_FAILS(VNPU_NOT_READY, vnpu_infer_request_get_timeline(req, &tl));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_callback(req, on_done, &seen));
	ASSERT_EQ(0, run_width(_metadata, req, 5, 0.5f, true));
	ASSERT_TRUE(seen.calls == 1 && seen.req == req && seen.status == VNPU_OK);
	ASSERT_EQ(0, run_width(_metadata, req, 6, 0.5f, true));
	ASSERT_TRUE(seen.calls == 2 && seen.req == req);
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_wait_for(req, 1000));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_timeline(req, &tl));
	ASSERT_GT(tl->count, 0);
	vnpu_timeline_free(tl);
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_callback(req, NULL, NULL));
	ASSERT_EQ(0, run_width(_metadata, req, 5, 0.5f, true));
	ASSERT_EQ(2, seen.calls);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
}

struct worker {
	vnpu_compiled_model *cm;
	int64_t width;
	int failed;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	vnpu_infer_request *req;
	RUNTIME_THREAD_METADATA(w->failed = 1);

	if (vnpu_compiled_model_create_infer_request(w->cm, &req)) {
		w->failed = 1;
		return NULL;
	}
	for (int i = 0; i < 12 && !w->failed; i++)
		w->failed = run_width(_metadata, req, w->width + i % 3, (float)i, i % 2);
	vnpu_infer_request_free(req);
	return NULL;
}

/*
 * Four threads, each with its own request, run five widths through a
 * cache of two programs: misses compile while other threads hit and
 * evict, and every result is the right one.
 */
TEST_F(dev, dynamic_concurrent)
{
	vnpu_core *core = self->core;
	const char *device = self->device;

	static const char *const props[] = { VNPU_PROP_DYNAMIC_SHAPE_CACHE_SIZE, "2", NULL };
	struct worker w[4];
	pthread_t th[4];
	vnpu_compiled_model *cm;

	ASSERT_EQ(VNPU_OK, compile_relu_add(core, device, props, &cm));
	for (int i = 0; i < 4; i++) {
		w[i] = (struct worker){ cm, 1 + i, 0 };
		ASSERT_EQ(0, pthread_create(&th[i], NULL, work, &w[i]));
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		ASSERT_TRUE(!w[i].failed);
	}
	ASSERT_GE(int_property(cm, VNPU_PROP_DYNAMIC_SHAPE_COMPILES), 6);
	vnpu_compiled_model_free(cm);
}

static bool bool_property(vnpu_compiled_model *cm, const char *key)
{
	vnpu_property_value *v;
	bool b;

	if (vnpu_compiled_model_get_property(cm, key, &v))
		return false;
	b = v->integer != 0;
	vnpu_property_value_free(v);
	return b;
}

/*
 * CACHE_DIR keeps the program of each shape: a second compiled model of
 * the same model loads it on its first run of that shape
 * (LOADED_FROM_CACHE of the last program) instead of compiling it; a new
 * shape compiles and is stored; a corrupted entry is a miss.
 */
TEST_F(dev, dynamic_cache_dir)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	char dir[] = "/tmp/vnpu-dyncache-XXXXXX", cmd[256];
	const char *props[] = { VNPU_PROP_CACHE_DIR, dir, NULL };
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;

	ASSERT_NE(NULL, mkdtemp(dir));
	for (int round = 0; round < 3; round++) {
		if (round == 2) {
			snprintf(cmd, sizeof(cmd), "for f in %s/*.vnpublob; do printf X | dd "
				 "of=$f bs=1 seek=300 conv=notrunc 2>/dev/null; done", dir);
			ASSERT_EQ(0, system(cmd));
			ASSERT_EQ(VNPU_OK,
				  vnpu_core_set_property_str(core, NULL, VNPU_PROP_LOG_LEVEL,
							     "NONE"));
		}
		ASSERT_EQ(VNPU_OK, compile_relu_add(core, device, props, &cm));
		ASSERT_EQ(0, bool_property(cm, VNPU_PROP_LOADED_FROM_CACHE));
		ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
		ASSERT_EQ(0, run_width(_metadata, req, 3, (float)round, false));
		ASSERT_EQ((round == 1), bool_property(cm, VNPU_PROP_LOADED_FROM_CACHE));
		ASSERT_EQ(0, run_width(_metadata, req, 5 + round, (float)round, false));
		ASSERT_EQ(0, bool_property(cm, VNPU_PROP_LOADED_FROM_CACHE));
		ASSERT_EQ(2, int_property(cm, VNPU_PROP_DYNAMIC_SHAPE_COMPILES));
		vnpu_infer_request_free(req);
		vnpu_compiled_model_free(cm);
	}
	ASSERT_EQ(VNPU_OK, vnpu_core_set_property_str(core, NULL, VNPU_PROP_LOG_LEVEL, "WARNING"));
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ASSERT_EQ(0, system(cmd));
}

/* @cm exported, then imported on @device. */
static vnpu_status export_import(vnpu_core *core, vnpu_compiled_model *cm, const char *device,
				 vnpu_compiled_model **out)
{
	vnpu_status st;
	size_t size;
	void *blob;

	st = vnpu_compiled_model_export(cm, &blob, &size);
	if (st != VNPU_OK)
		return st;
	st = vnpu_core_import_model(core, blob, size, device, out);
	vnpu_free(blob);
	return st;
}

/*
 * Export carries the ports and the programs of the shapes run so far: the
 * import runs those shapes (no compile) and refuses others; it exports
 * again. A damaged or truncated blob is refused.
 */
TEST_F(dev, dynamic_export)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	vnpu_compiled_model *cm, *back, *again;
	vnpu_infer_request *req;
	vnpu_tensor *x;
	vnpu_port in;
	size_t size;
	char *blob;

	ASSERT_EQ(VNPU_OK, compile_relu_add(core, device, NULL, &cm));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	ASSERT_EQ(0, run_width(_metadata, req, 3, 0.0f, false));
	ASSERT_EQ(0, run_width(_metadata, req, 5, 1.0f, false));
	vnpu_infer_request_free(req);
	ASSERT_EQ(VNPU_OK, export_import(core, cm, device, &back));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_get_input(back, 0, &in));
	ASSERT_TRUE(!strcmp(in.name, "x") && in.shape.rank == 3
		    && in.shape.dims[1] == VNPU_DIM_DYNAMIC && in.shape.dims[2] == C);
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(back, &req));
	ASSERT_EQ(0, run_width(_metadata, req, 5, 2.0f, true));
	ASSERT_EQ(0, run_width(_metadata, req, 3, 3.0f, false));
	ASSERT_EQ(0, int_property(back, VNPU_PROP_DYNAMIC_SHAPE_COMPILES));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_create(VNPU_TYPE_F32, &(vnpu_shape){ 3, { 1, 4, C } }, &x));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_tensor(req, "x", x));
	vnpu_tensor_free(x);
	ASSERT_FAILS(VNPU_UNSUPPORTED, vnpu_infer_request_infer(req));
	ASSERT_NE(NULL, strstr(vnpu_last_error(), "compiles no other"));
	vnpu_infer_request_free(req);
	ASSERT_EQ(VNPU_OK, export_import(core, back, device, &again));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(again, &req));
	ASSERT_EQ(0, run_width(_metadata, req, 3, 4.0f, false));
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(again);
	vnpu_compiled_model_free(back);

	/* Bad input: a flipped byte, a truncated blob, a bare header. */
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_export(cm, (void **)&blob, &size));
	ASSERT_GT(size, 200);
	blob[size / 2] ^= 1;
	ASSERT_FAILS(VNPU_PARSE_ERROR, vnpu_core_import_model(core, blob, size, device, &back));
	blob[size / 2] ^= 1;
	ASSERT_FAILS(VNPU_PARSE_ERROR, vnpu_core_import_model(core, blob, size - 1, device, &back));
	ASSERT_FAILS(VNPU_PARSE_ERROR, vnpu_core_import_model(core, blob, 12, device, &back));
	ASSERT_FAILS(VNPU_PARSE_ERROR, vnpu_core_import_model(core, blob, 56, device, &back));
	ASSERT_EQ(VNPU_OK, vnpu_core_import_model(core, blob, size, device, &back));
	vnpu_compiled_model_free(back);
	vnpu_free(blob);
	vnpu_compiled_model_free(cm);
}


RUNTIME_TEST_MAIN

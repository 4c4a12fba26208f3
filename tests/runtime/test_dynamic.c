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

#include "harness.h"
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
static int run_width(vnpu_infer_request *req, int64_t width, float seed, bool async)
{
	const vnpu_shape shape = { 3, { 1, width, C } };
	vnpu_tensor *x, *y;
	vnpu_shape got;
	float *px, *py;

	CHECK_OK(vnpu_tensor_create(VNPU_TYPE_F32, &shape, &x));
	CHECK_OK(vnpu_tensor_get_data(x, (void **)&px));
	for (int64_t i = 0; i < width * C; i++)
		px[i] = x_at(i, seed);
	CHECK_OK(vnpu_infer_request_set_tensor(req, "x", x));
	vnpu_tensor_free(x);
	if (async) {
		CHECK_OK(vnpu_infer_request_start_async(req));
		CHECK_OK(vnpu_infer_request_wait(req));
	} else {
		CHECK_OK(vnpu_infer_request_infer(req));
	}
	CHECK_OK(vnpu_infer_request_get_tensor(req, "y", &y));
	CHECK_OK(vnpu_tensor_get_shape(y, &got));
	CHECK(got.rank == 3 && got.dims[0] == 1 && got.dims[1] == width && got.dims[2] == C);
	CHECK_OK(vnpu_tensor_get_data(y, (void **)&py));
	for (int64_t i = 0; i < width * C; i++) {
		float r = x_at(i, seed) > 0 ? x_at(i, seed) : 0;

		CHECK(py[i] == r + bias[i % C]);
	}
	vnpu_tensor_free(y);
	return 0;
}

/* The compiled model keeps the dynamic ports; no program exists yet. */
static int dynamic_ports(vnpu_core *core, const char *device)
{
	vnpu_compiled_model *cm;
	vnpu_port in, out;
	size_t size;
	void *blob;

	CHECK_OK(compile_relu_add(core, device, NULL, &cm));
	CHECK_OK(vnpu_compiled_model_get_input(cm, 0, &in));
	CHECK(!strcmp(in.name, "x") && in.type == VNPU_TYPE_F32 && in.shape.rank == 3);
	CHECK(in.shape.dims[0] == 1 && in.shape.dims[1] == VNPU_DIM_DYNAMIC &&
	      in.shape.dims[2] == C);
	CHECK_OK(vnpu_compiled_model_get_output(cm, 0, &out));
	CHECK(!strcmp(out.name, "y") && out.shape.dims[1] == VNPU_DIM_DYNAMIC);
	CHECK(int_property(cm, VNPU_PROP_DYNAMIC_SHAPE_COMPILES) == 0);
	CHECK(int_property(cm, VNPU_PROP_DYNAMIC_SHAPE_CACHE_SIZE) == 8);
	CHECK(int_property(cm, VNPU_PROP_WEIGHTS_SIZE) == 0);
	CHECK_ERR(vnpu_compiled_model_export(cm, &blob, &size), VNPU_NOT_READY);
	CHECK(strstr(vnpu_last_error(), "run none yet"));
	vnpu_compiled_model_free(cm);
	return 0;
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
static int dynamic_two_widths(vnpu_core *core, const char *device)
{
	static const char *const props[] = { VNPU_PROP_ENABLE_PROFILING, "YES", NULL };
	vnpu_infer_request *req, *other;
	vnpu_compiled_model *cm;

	CHECK_OK(compile_relu_add(core, device, props, &cm));
	CHECK_OK(vnpu_compiled_model_create_infer_request(cm, &req));
	CHECK_ERR(vnpu_infer_request_get_profiling_info(req, &(vnpu_profiling_info *){ 0 }),
		  VNPU_NOT_READY);
	CHECK(!run_width(req, 3, 0.0f, false));
	CHECK(compile_stage(req) == 1);
	CHECK(int_property(cm, VNPU_PROP_WEIGHTS_SIZE) > 0);
	CHECK(!run_width(req, 7, 1.5f, false));
	CHECK(compile_stage(req) == 1);
	CHECK(int_property(cm, VNPU_PROP_DYNAMIC_SHAPE_COMPILES) == 2);
	CHECK(!run_width(req, 3, -2.0f, true));
	CHECK(compile_stage(req) == 0);
	CHECK(!run_width(req, 7, 0.25f, true));
	CHECK(int_property(cm, VNPU_PROP_DYNAMIC_SHAPE_COMPILES) == 2);
	/* A second request finds both programs compiled. */
	CHECK_OK(vnpu_compiled_model_create_infer_request(cm, &other));
	CHECK(!run_width(other, 7, 3.0f, false));
	CHECK(compile_stage(other) == 0);
	CHECK(int_property(cm, VNPU_PROP_DYNAMIC_SHAPE_COMPILES) == 2);
	vnpu_infer_request_free(other);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
	return 0;
}

/* Shapes the port does not allow, and runs without a shape. */
static int dynamic_bad_shapes(vnpu_core *core, const char *device)
{
	const vnpu_shape wrong_dim = { 3, { 1, 5, C + 1 } }, wrong_rank = { 2, { 5, C } };
	const vnpu_shape batch2 = { 3, { 2, 5, C } }, fits = { 3, { 1, 2, C } };
	vnpu_tensor *t, *x, *s;
	vnpu_infer_request *req;
	vnpu_compiled_model *cm;

	CHECK_OK(compile_relu_add(core, device, NULL, &cm));
	CHECK_OK(vnpu_compiled_model_create_infer_request(cm, &req));
	CHECK_ERR(vnpu_infer_request_get_tensor(req, "x", &t), VNPU_NOT_READY);
	CHECK(strstr(vnpu_last_error(), "[1,?,4]"));
	CHECK_ERR(vnpu_infer_request_get_tensor(req, "y", &t), VNPU_NOT_READY);
	CHECK_ERR(vnpu_infer_request_infer(req), VNPU_INVALID_ARGUMENT);
	CHECK(strstr(vnpu_last_error(), "set a tensor of its shape first"));
	CHECK_ERR(vnpu_infer_request_start_async(req), VNPU_INVALID_ARGUMENT);

	CHECK_OK(vnpu_tensor_create(VNPU_TYPE_F32, &wrong_dim, &t));
	CHECK_ERR(vnpu_infer_request_set_tensor(req, "x", t), VNPU_INVALID_ARGUMENT);
	CHECK(strstr(vnpu_last_error(), "[1,5,5]"));
	vnpu_tensor_free(t);
	CHECK_OK(vnpu_tensor_create(VNPU_TYPE_F32, &batch2, &t));
	CHECK_ERR(vnpu_infer_request_set_tensor(req, "x", t), VNPU_INVALID_ARGUMENT);
	vnpu_tensor_free(t);
	CHECK_OK(vnpu_tensor_create(VNPU_TYPE_F32, &wrong_rank, &t));
	CHECK_ERR(vnpu_infer_request_set_input_tensor(req, 0, t), VNPU_INVALID_ARGUMENT);
	vnpu_tensor_free(t);

	/* An output tensor of the wrong size fails the run, not the set. */
	CHECK_OK(vnpu_tensor_create(VNPU_TYPE_F32, &fits, &x));
	CHECK_OK(vnpu_infer_request_set_tensor(req, "x", x));
	CHECK_OK(vnpu_tensor_create(VNPU_TYPE_F32, &(vnpu_shape){ 3, { 1, 3, C } }, &s));
	CHECK_OK(vnpu_infer_request_set_tensor(req, "y", s));
	CHECK_ERR(vnpu_infer_request_infer(req), VNPU_INVALID_ARGUMENT);
	vnpu_tensor_free(s);
	CHECK_OK(vnpu_tensor_create(VNPU_TYPE_F32, &fits, &s));
	CHECK_OK(vnpu_infer_request_set_tensor(req, "y", s));
	CHECK_OK(vnpu_infer_request_infer(req));
	vnpu_tensor_free(s);
	vnpu_tensor_free(x);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
	return 0;
}

/* DYNAMIC_SHAPE_CACHE_SIZE: refused out of 1..1024, and the LRU it bounds. */
static int dynamic_cache_size(vnpu_core *core, const char *device)
{
	static const char *const bad[] = { "0", "-1", "1025", "99999999999999999999", "x" };
	const char *props[3] = { VNPU_PROP_DYNAMIC_SHAPE_CACHE_SIZE, NULL, NULL };
	vnpu_infer_request *req;
	vnpu_compiled_model *cm;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		props[1] = bad[i];
		CHECK_ERR(compile_relu_add(core, device, props, &cm), VNPU_INVALID_ARGUMENT);
		CHECK(strstr(vnpu_last_error(), VNPU_PROP_DYNAMIC_SHAPE_CACHE_SIZE));
		CHECK_ERR(vnpu_core_set_property_str(core, device,
						     VNPU_PROP_DYNAMIC_SHAPE_CACHE_SIZE, bad[i]),
			  VNPU_INVALID_ARGUMENT);
	}
	props[1] = "2";
	CHECK_OK(compile_relu_add(core, device, props, &cm));
	CHECK(int_property(cm, VNPU_PROP_DYNAMIC_SHAPE_CACHE_SIZE) == 2);
	CHECK_OK(vnpu_compiled_model_create_infer_request(cm, &req));
	CHECK(!run_width(req, 2, 0.0f, false));
	CHECK(!run_width(req, 3, 0.0f, false));
	CHECK(!run_width(req, 2, 1.0f, false));
	CHECK(int_property(cm, VNPU_PROP_DYNAMIC_SHAPE_COMPILES) == 2);
	/* Width 4 drops width 3, the least recently used, not 2. */
	CHECK(!run_width(req, 4, 0.0f, false));
	CHECK(!run_width(req, 2, 2.0f, false));
	CHECK(int_property(cm, VNPU_PROP_DYNAMIC_SHAPE_COMPILES) == 3);
	CHECK(!run_width(req, 3, 0.0f, false));
	CHECK(int_property(cm, VNPU_PROP_DYNAMIC_SHAPE_COMPILES) == 4);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);

	/* The device's value is the compile's default. */
	CHECK_OK(vnpu_core_set_property_str(core, device, VNPU_PROP_DYNAMIC_SHAPE_CACHE_SIZE,
					    "1024"));
	CHECK_OK(compile_relu_add(core, device, NULL, &cm));
	CHECK(int_property(cm, VNPU_PROP_DYNAMIC_SHAPE_CACHE_SIZE) == 1024);
	vnpu_compiled_model_free(cm);
	CHECK_OK(vnpu_core_set_property_str(core, device, VNPU_PROP_DYNAMIC_SHAPE_CACHE_SIZE,
					    "8"));
	return 0;
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
static int dynamic_async_calls(vnpu_core *core, const char *device)
{
	struct callback_seen seen = { 0 };
	vnpu_infer_request *req;
	vnpu_compiled_model *cm;
	vnpu_timeline *tl;

	CHECK_OK(compile_relu_add(core, device, NULL, &cm));
	CHECK_OK(vnpu_compiled_model_create_infer_request(cm, &req));
	CHECK_OK(vnpu_infer_request_wait(req));
	CHECK_OK(vnpu_infer_request_wait_for(req, 0));
	CHECK_ERR(vnpu_infer_request_wait_for(req, -1), VNPU_INVALID_ARGUMENT);
	CHECK_OK(vnpu_infer_request_cancel(req));
	CHECK_ERR(vnpu_infer_request_get_timeline(req, &tl), VNPU_NOT_READY);
	CHECK_OK(vnpu_infer_request_set_callback(req, on_done, &seen));
	CHECK(!run_width(req, 5, 0.5f, true));
	CHECK(seen.calls == 1 && seen.req == req && seen.status == VNPU_OK);
	CHECK(!run_width(req, 6, 0.5f, true));
	CHECK(seen.calls == 2 && seen.req == req);
	CHECK_OK(vnpu_infer_request_wait_for(req, 1000));
	CHECK_OK(vnpu_infer_request_get_timeline(req, &tl));
	CHECK(tl->count > 0);
	vnpu_timeline_free(tl);
	CHECK_OK(vnpu_infer_request_set_callback(req, NULL, NULL));
	CHECK(!run_width(req, 5, 0.5f, true));
	CHECK(seen.calls == 2);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
	return 0;
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

	if (vnpu_compiled_model_create_infer_request(w->cm, &req)) {
		w->failed = 1;
		return NULL;
	}
	for (int i = 0; i < 12 && !w->failed; i++)
		w->failed = run_width(req, w->width + i % 3, (float)i, i % 2);
	vnpu_infer_request_free(req);
	return NULL;
}

/*
 * Four threads, each with its own request, run five widths through a
 * cache of two programs: misses compile while other threads hit and
 * evict, and every result is the right one.
 */
static int dynamic_concurrent(vnpu_core *core, const char *device)
{
	static const char *const props[] = { VNPU_PROP_DYNAMIC_SHAPE_CACHE_SIZE, "2", NULL };
	struct worker w[4];
	pthread_t th[4];
	vnpu_compiled_model *cm;

	CHECK_OK(compile_relu_add(core, device, props, &cm));
	for (int i = 0; i < 4; i++) {
		w[i] = (struct worker){ cm, 1 + i, 0 };
		CHECK(!pthread_create(&th[i], NULL, work, &w[i]));
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		CHECK(!w[i].failed);
	}
	CHECK(int_property(cm, VNPU_PROP_DYNAMIC_SHAPE_COMPILES) >= 6);
	vnpu_compiled_model_free(cm);
	return 0;
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
static int dynamic_cache_dir(vnpu_core *core, const char *device)
{
	char dir[] = "/tmp/vnpu-dyncache-XXXXXX", cmd[256];
	const char *props[] = { VNPU_PROP_CACHE_DIR, dir, NULL };
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;

	CHECK(mkdtemp(dir));
	for (int round = 0; round < 3; round++) {
		if (round == 2) {
			snprintf(cmd, sizeof(cmd), "for f in %s/*.vnpublob; do printf X | dd "
				 "of=$f bs=1 seek=300 conv=notrunc 2>/dev/null; done", dir);
			CHECK(system(cmd) == 0);
			CHECK_OK(vnpu_core_set_property_str(core, NULL, VNPU_PROP_LOG_LEVEL,
							    "NONE"));
		}
		CHECK_OK(compile_relu_add(core, device, props, &cm));
		CHECK(!bool_property(cm, VNPU_PROP_LOADED_FROM_CACHE));
		CHECK_OK(vnpu_compiled_model_create_infer_request(cm, &req));
		CHECK(!run_width(req, 3, (float)round, false));
		CHECK(bool_property(cm, VNPU_PROP_LOADED_FROM_CACHE) == (round == 1));
		CHECK(!run_width(req, 5 + round, (float)round, false));
		CHECK(!bool_property(cm, VNPU_PROP_LOADED_FROM_CACHE));
		CHECK(int_property(cm, VNPU_PROP_DYNAMIC_SHAPE_COMPILES) == 2);
		vnpu_infer_request_free(req);
		vnpu_compiled_model_free(cm);
	}
	CHECK_OK(vnpu_core_set_property_str(core, NULL, VNPU_PROP_LOG_LEVEL, "WARNING"));
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
	return 0;
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
static int dynamic_export(vnpu_core *core, const char *device)
{
	vnpu_compiled_model *cm, *back, *again;
	vnpu_infer_request *req;
	vnpu_tensor *x;
	vnpu_port in;
	size_t size;
	char *blob;

	CHECK_OK(compile_relu_add(core, device, NULL, &cm));
	CHECK_OK(vnpu_compiled_model_create_infer_request(cm, &req));
	CHECK(!run_width(req, 3, 0.0f, false));
	CHECK(!run_width(req, 5, 1.0f, false));
	vnpu_infer_request_free(req);
	CHECK_OK(export_import(core, cm, device, &back));
	CHECK_OK(vnpu_compiled_model_get_input(back, 0, &in));
	CHECK(!strcmp(in.name, "x") && in.shape.rank == 3 &&
	      in.shape.dims[1] == VNPU_DIM_DYNAMIC && in.shape.dims[2] == C);
	CHECK_OK(vnpu_compiled_model_create_infer_request(back, &req));
	CHECK(!run_width(req, 5, 2.0f, true));
	CHECK(!run_width(req, 3, 3.0f, false));
	CHECK(int_property(back, VNPU_PROP_DYNAMIC_SHAPE_COMPILES) == 0);
	CHECK_OK(vnpu_tensor_create(VNPU_TYPE_F32, &(vnpu_shape){ 3, { 1, 4, C } }, &x));
	CHECK_OK(vnpu_infer_request_set_tensor(req, "x", x));
	vnpu_tensor_free(x);
	CHECK_ERR(vnpu_infer_request_infer(req), VNPU_UNSUPPORTED);
	CHECK(strstr(vnpu_last_error(), "compiles no other"));
	vnpu_infer_request_free(req);
	CHECK_OK(export_import(core, back, device, &again));
	CHECK_OK(vnpu_compiled_model_create_infer_request(again, &req));
	CHECK(!run_width(req, 3, 4.0f, false));
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(again);
	vnpu_compiled_model_free(back);

	/* Bad input: a flipped byte, a truncated blob, a bare header. */
	CHECK_OK(vnpu_compiled_model_export(cm, (void **)&blob, &size));
	CHECK(size > 200);
	blob[size / 2] ^= 1;
	CHECK_ERR(vnpu_core_import_model(core, blob, size, device, &back), VNPU_PARSE_ERROR);
	blob[size / 2] ^= 1;
	CHECK_ERR(vnpu_core_import_model(core, blob, size - 1, device, &back), VNPU_PARSE_ERROR);
	CHECK_ERR(vnpu_core_import_model(core, blob, 12, device, &back), VNPU_PARSE_ERROR);
	CHECK_ERR(vnpu_core_import_model(core, blob, 56, device, &back), VNPU_PARSE_ERROR);
	CHECK_OK(vnpu_core_import_model(core, blob, size, device, &back));
	vnpu_compiled_model_free(back);
	vnpu_free(blob);
	vnpu_compiled_model_free(cm);
	return 0;
}

static const struct test tests[] = {
	TEST(dynamic_ports),
	TEST(dynamic_two_widths),
	TEST(dynamic_bad_shapes),
	TEST(dynamic_cache_size),
	TEST(dynamic_async_calls),
	TEST(dynamic_concurrent),
	TEST(dynamic_cache_dir),
	TEST(dynamic_export),
};

int main(int argc, char **argv)
{
	return run_tests(argc, argv, tests, sizeof(tests) / sizeof(tests[0]));
}

// SPDX-License-Identifier: MIT
/*
 * The public API with real models (ONNX node test cases from
 * libonnx-testdata): read, query, compile (devices, HETERO, AUTO, compile
 * properties), export/import, the model cache, io tensors, profiling,
 * threads, life times and malformed models. Runs on every device present.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "onnx_writer.h"

#define NODE_DIR "/usr/share/libonnx-testdata/data/node/"
#define ADD NODE_DIR "test_add/model.onnx"		/* x, y f32[3,4,5] -> sum */
#define CONV NODE_DIR "test_basic_conv_with_padding/model.onnx"
#define F64 NODE_DIR "test_cast_DOUBLE_to_FLOAT/model.onnx"	/* f64 in */
/* input f32[3,4], like bf16[3,4] (declared) -> output bf16[3,4] */
#define CASTLIKE NODE_DIR "test_castlike_FLOAT_to_BFLOAT16/model.onnx"

static vnpu_status compile_file(vnpu_core *core, const char *path, const char *device,
				const char *const *props, vnpu_compiled_model **out)
{
	vnpu_model *m;
	vnpu_status st = vnpu_core_read_model(core, path, &m);

	if (st != VNPU_OK)
		return st;
	st = vnpu_core_compile_model(core, m, device, props, out);
	vnpu_model_free(m);
	return st;
}

/* The model serialized in @model (freed) read and compiled for @device. */
static int compile_pb(vnpu_core *core, const char *device, struct pb *model,
		      vnpu_compiled_model **cm)
{
	vnpu_model *m;
	vnpu_status st;

	CHECK(!model->failed);
	st = vnpu_core_read_model_from_memory(core, model->data, model->len, &m);
	pb_free(model);
	CHECK_OK(st);
	st = vnpu_core_compile_model(core, m, device, NULL, cm);
	vnpu_model_free(m);
	CHECK_OK(st);
	return 0;
}

/* x = i * 0.5 + base, y = 1 - i: sum must be i * -0.5 + base + 1. */
static int run_add(vnpu_infer_request *req, float base)
{
	vnpu_tensor *x, *y, *sum;
	float *px, *py, *ps;
	int i, ret = 0;

	CHECK_OK(vnpu_infer_request_get_tensor(req, "x", &x));
	CHECK_OK(vnpu_infer_request_get_tensor(req, "y", &y));
	CHECK_OK(vnpu_tensor_get_data(x, (void **)&px));
	CHECK_OK(vnpu_tensor_get_data(y, (void **)&py));
	for (i = 0; i < 60; i++) {
		px[i] = (float)i * 0.5f + base;
		py[i] = 1.0f - (float)i;
	}
	CHECK_OK(vnpu_infer_request_infer(req));
	CHECK_OK(vnpu_infer_request_get_tensor(req, "sum", &sum));
	CHECK_OK(vnpu_tensor_get_data(sum, (void **)&ps));
	for (i = 0; i < 60 && !ret; i++) {
		if (ps[i] != (float)i * -0.5f + base + 1.0f) {
			fprintf(stderr, "sum[%d] = %g\n", i, ps[i]);
			ret = 1;
		}
		/* infer does not modify inputs */
		if (px[i] != (float)i * 0.5f + base)
			ret = 1;
	}
	vnpu_tensor_free(x);
	vnpu_tensor_free(y);
	vnpu_tensor_free(sum);
	return ret;
}

static int compile_and_run(vnpu_core *core, const char *device)
{
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	vnpu_property_value *v;
	uint32_t n;
	vnpu_port port;

	CHECK_OK(compile_file(core, ADD, device, NULL, &cm));
	CHECK_OK(vnpu_compiled_model_get_num_inputs(cm, &n));
	CHECK(n == 2);
	CHECK_OK(vnpu_compiled_model_get_output(cm, 0, &port));
	CHECK(!strcmp(port.name, "sum") && port.shape.rank == 3 && port.shape.dims[2] == 5);
	CHECK_OK(vnpu_compiled_model_get_property(cm, VNPU_PROP_EXECUTION_DEVICES, &v));
	CHECK(v->count == 1);
	vnpu_property_value_free(v);
	CHECK_OK(vnpu_compiled_model_get_property(cm, VNPU_PROP_OPTIMAL_NUMBER_OF_INFER_REQUESTS,
						  &v));
	CHECK(v->integer >= 1);
	vnpu_property_value_free(v);
	CHECK_OK(vnpu_compiled_model_create_infer_request(cm, &req));
	CHECK(!run_add(req, 3));
	CHECK(!run_add(req, -7));
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
	return 0;
}

static int compile_errors(vnpu_core *core, const char *device)
{
	const char *bad_key[] = { "NO_SUCH_KEY", "1", NULL };
	const char *bad_value[] = { VNPU_PROP_ENABLE_PROFILING, "sometimes", NULL };
	const char *no_value[] = { VNPU_PROP_ENABLE_PROFILING, NULL };
	const char *read_only[] = { VNPU_PROP_FULL_DEVICE_NAME, "x", NULL };
	const char *good[] = { VNPU_PROP_PERFORMANCE_HINT, "THROUGHPUT",
			       VNPU_PROP_PERFORMANCE_HINT_NUM_REQUESTS, "3", NULL };
	vnpu_compiled_model *cm = NULL;
	vnpu_property_value *v;
	vnpu_model *m;

	CHECK_OK(vnpu_core_read_model(core, ADD, &m));
	CHECK_ERR(vnpu_core_compile_model(core, m, "GPU", NULL, &cm), VNPU_NOT_FOUND);
	CHECK_ERR(vnpu_core_compile_model(core, m, "HETERO:", NULL, &cm), VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_core_compile_model(core, m, "HETERO:GPU,CPU", NULL, &cm), VNPU_NOT_FOUND);
	CHECK_ERR(vnpu_core_compile_model(core, m, "HETERO:CPU,CPU,CPU", NULL, &cm),
		  VNPU_UNSUPPORTED);
	CHECK_ERR(vnpu_core_compile_model(core, m, device, bad_key, &cm), VNPU_NOT_FOUND);
	CHECK_ERR(vnpu_core_compile_model(core, m, device, bad_value, &cm),
		  VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_core_compile_model(core, m, device, no_value, &cm),
		  VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_core_compile_model(core, m, device, read_only, &cm), VNPU_NOT_FOUND);
	CHECK_ERR(vnpu_core_compile_model(NULL, m, device, NULL, &cm), VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_core_compile_model(core, m, NULL, NULL, &cm), VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_core_compile_model(core, m, device, NULL, NULL), VNPU_INVALID_ARGUMENT);
	CHECK(cm == NULL);
	CHECK_OK(vnpu_core_compile_model(core, m, device, good, &cm));
	/* the compiled model keeps no reference to the model */
	vnpu_model_free(m);
	CHECK_OK(vnpu_compiled_model_get_property(cm, VNPU_PROP_PERFORMANCE_HINT, &v));
	CHECK(!strcmp(v->text, "THROUGHPUT"));
	vnpu_property_value_free(v);
	CHECK_OK(vnpu_compiled_model_get_property(cm, VNPU_PROP_OPTIMAL_NUMBER_OF_INFER_REQUESTS,
						  &v));
	CHECK(v->integer == 3);
	vnpu_property_value_free(v);
	vnpu_compiled_model_free(cm);
	return 0;
}

static int query(vnpu_core *core, const char *device)
{
	vnpu_query_report *r;
	vnpu_model *m;
	size_t n;

	CHECK_OK(vnpu_core_read_model(core, CONV, &m));
	CHECK_OK(vnpu_model_get_ops_size(m, &n));
	CHECK_OK(vnpu_core_query_model(core, m, device, &r));
	CHECK(r->count == n && n >= 1);
	CHECK(!strcmp(r->entries[0].op_type, "Conv"));
	CHECK(r->entries[0].device && !strncmp(r->entries[0].device, device, 3));
	vnpu_query_report_free(r);
	CHECK_ERR(vnpu_core_query_model(core, m, "GPU", &r), VNPU_NOT_FOUND);
	CHECK_ERR(vnpu_core_query_model(core, m, device, NULL), VNPU_INVALID_ARGUMENT);
	vnpu_model_free(m);
	return 0;
}

/* f64 nodes: the NPU does not take them, HETERO and AUTO run them on the CPU. */
static int hetero_fallback(vnpu_core *core, const char *device)
{
	const char *strict[] = { VNPU_PROP_HETERO_STRICT, "YES", NULL };
	char hetero[64];
	vnpu_compiled_model *cm;
	vnpu_property_value *v;
	vnpu_infer_request *req;
	vnpu_tensor *in, *out;
	vnpu_query_report *r;
	double *pin;
	float *pout;
	vnpu_model *m;
	int npu = !strncmp(device, "NPU", 3);

	snprintf(hetero, sizeof(hetero), "HETERO:%s,CPU", device);
	CHECK_OK(vnpu_core_read_model(core, F64, &m));
	CHECK_OK(vnpu_core_query_model(core, m, hetero, &r));
	CHECK(r->count == 1 && r->entries[0].device);
	CHECK(!strcmp(r->entries[0].device, npu ? "CPU" : device));
	vnpu_query_report_free(r);
	if (npu) {
		CHECK_ERR(vnpu_core_compile_model(core, m, device, NULL, &cm), VNPU_UNSUPPORTED);
		CHECK(vnpu_core_compile_model(core, m, hetero, strict, &cm) != VNPU_OK);
	}
	CHECK_OK(vnpu_core_compile_model(core, m, hetero, NULL, &cm));
	vnpu_model_free(m);
	CHECK_OK(vnpu_compiled_model_get_property(cm, VNPU_PROP_EXECUTION_DEVICES, &v));
	CHECK(!strcmp(v->items[v->count - 1], npu ? "CPU" : device));
	vnpu_property_value_free(v);
	CHECK_OK(vnpu_compiled_model_create_infer_request(cm, &req));
	CHECK_OK(vnpu_infer_request_get_input_tensor(req, 0, &in));
	CHECK_OK(vnpu_tensor_get_data(in, (void **)&pin));
	pin[0] = 1.5;
	pin[1] = -2.25;
	CHECK_OK(vnpu_infer_request_infer(req));
	CHECK_OK(vnpu_infer_request_get_output_tensor(req, 0, &out));
	CHECK_OK(vnpu_tensor_get_data(out, (void **)&pout));
	CHECK(pout[0] == 1.5f && pout[1] == -2.25f);
	vnpu_tensor_free(in);
	vnpu_tensor_free(out);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);

	CHECK_OK(compile_file(core, ADD, "AUTO", NULL, &cm));
	vnpu_compiled_model_free(cm);
	CHECK_OK(compile_file(core, ADD, hetero, NULL, &cm));
	vnpu_compiled_model_free(cm);
	return 0;
}

static int export_import(vnpu_core *core, const char *device)
{
	const char *props[] = { VNPU_PROP_ENABLE_PROFILING, "YES", NULL };
	vnpu_compiled_model *cm, *cm2;
	vnpu_infer_request *req;
	vnpu_property_value *v;
	unsigned char *blob;
	size_t size;

	CHECK_OK(compile_file(core, CONV, device, props, &cm));
	CHECK_OK(vnpu_compiled_model_export(cm, (void **)&blob, &size));
	vnpu_compiled_model_free(cm);
	CHECK_OK(vnpu_core_import_model(core, blob, size, NULL, &cm2));
	CHECK_OK(vnpu_compiled_model_get_property(cm2, VNPU_PROP_ENABLE_PROFILING, &v));
	CHECK(v->integer == 1);
	vnpu_property_value_free(v);
	CHECK_OK(vnpu_compiled_model_create_infer_request(cm2, &req));
	CHECK_OK(vnpu_infer_request_infer(req));
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm2);
	CHECK_ERR(vnpu_core_import_model(core, blob, size / 2, NULL, &cm2), VNPU_PARSE_ERROR);
	blob[size / 2] ^= 1;
	CHECK_ERR(vnpu_core_import_model(core, blob, size, NULL, &cm2), VNPU_PARSE_ERROR);
	vnpu_free(blob);
	return 0;
}

static int cache_dir(vnpu_core *unused, const char *device)
{
	char dir[] = "/tmp/vnpu-cache-XXXXXX", path[256];
	const char *props[] = { VNPU_PROP_CACHE_DIR, dir, NULL };
	const char *other[] = { VNPU_PROP_CACHE_DIR, dir, VNPU_PROP_ENABLE_PROFILING, "YES",
				NULL };
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	vnpu_property_value *v;
	vnpu_core *core;
	int round;

	(void)unused;
	CHECK(mkdtemp(dir));
	CHECK_OK(vnpu_core_create(&core));
	for (round = 0; round < 3; round++) {
		/* miss, hit, then a miss for other properties */
		CHECK_OK(compile_file(core, ADD, device, round < 2 ? props : other, &cm));
		CHECK_OK(vnpu_compiled_model_get_property(cm, VNPU_PROP_LOADED_FROM_CACHE, &v));
		CHECK(v->integer == (round == 1));
		vnpu_property_value_free(v);
		CHECK_OK(vnpu_compiled_model_create_infer_request(cm, &req));
		CHECK(!run_add(req, (float)round));
		vnpu_infer_request_free(req);
		vnpu_compiled_model_free(cm);
	}
	/* the global CACHE_DIR works the same; a corrupted entry is a miss */
	CHECK_OK(vnpu_core_set_property_str(core, NULL, VNPU_PROP_CACHE_DIR, dir));
	CHECK_OK(compile_file(core, ADD, device, NULL, &cm));
	CHECK_OK(vnpu_compiled_model_get_property(cm, VNPU_PROP_LOADED_FROM_CACHE, &v));
	CHECK(v->integer == 1);
	vnpu_property_value_free(v);
	vnpu_compiled_model_free(cm);
	snprintf(path, sizeof(path), "rm -f %s/*.vnpublob.tmp.* ; for f in %s/*.vnpublob; do "
		 "printf X | dd of=$f bs=1 seek=300 conv=notrunc 2>/dev/null; done", dir, dir);
	CHECK(system(path) == 0);
	CHECK_OK(vnpu_core_set_property_str(core, NULL, VNPU_PROP_LOG_LEVEL, "NONE"));
	CHECK_OK(compile_file(core, ADD, device, NULL, &cm));
	CHECK_OK(vnpu_core_set_property_str(core, NULL, VNPU_PROP_LOG_LEVEL, "WARNING"));
	CHECK_OK(vnpu_compiled_model_get_property(cm, VNPU_PROP_LOADED_FROM_CACHE, &v));
	CHECK(v->integer == 0);
	vnpu_property_value_free(v);
	vnpu_compiled_model_free(cm);
	vnpu_core_free(core);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	CHECK(system(path) == 0);
	return 0;
}

/* Host tensors of other types: converted in, converted out. */
static int io_tensors(vnpu_core *core, const char *device)
{
	const vnpu_shape s = { 3, { 3, 4, 5 } }, wrong = { 3, { 3, 4, 6 } };
	int32_t x[60], y[60];
	int64_t sum[60];
	vnpu_tensor *tx, *ty, *ts, *got, *bad;
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	int i;

	for (i = 0; i < 60; i++) {
		x[i] = i;
		y[i] = -2 * i;
	}
	CHECK_OK(compile_file(core, ADD, device, NULL, &cm));
	CHECK_OK(vnpu_compiled_model_create_infer_request(cm, &req));
	CHECK_OK(vnpu_tensor_create_from_ptr(VNPU_TYPE_I32, &s, x, &tx));
	CHECK_OK(vnpu_tensor_create_from_ptr(VNPU_TYPE_I32, &s, y, &ty));
	CHECK_OK(vnpu_tensor_create_from_ptr(VNPU_TYPE_I64, &s, sum, &ts));
	CHECK_OK(vnpu_tensor_create(VNPU_TYPE_F32, &wrong, &bad));
	CHECK_OK(vnpu_infer_request_set_tensor(req, "x", tx));
	CHECK_OK(vnpu_infer_request_set_input_tensor(req, 1, ty));
	CHECK_OK(vnpu_infer_request_set_output_tensor(req, 0, ts));
	CHECK_ERR(vnpu_infer_request_set_tensor(req, "x", bad), VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_infer_request_set_tensor(req, "z", tx), VNPU_NOT_FOUND);
	CHECK_OK(vnpu_infer_request_get_tensor(req, "x", &got));
	CHECK(got == tx);
	vnpu_tensor_free(got);
	CHECK_OK(vnpu_infer_request_get_tensor(req, "sum", &got));
	CHECK(got == ts);
	vnpu_tensor_free(got);
	CHECK_OK(vnpu_infer_request_infer(req));
	for (i = 0; i < 60; i++)
		CHECK(sum[i] == -i && x[i] == i && y[i] == -2 * i);
	vnpu_tensor_free(tx);
	vnpu_tensor_free(ty);
	vnpu_tensor_free(ts);
	vnpu_tensor_free(bad);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
	return 0;
}

/* Run the compiled Add on x, y of @shape (@n elements): sum = x + y. */
static int run_add_shaped(vnpu_compiled_model *cm, const vnpu_shape *shape, int n)
{
	const vnpu_shape wrong = { 3, { 3, 4, 5 } };
	float x[60], y[60], *sum;
	vnpu_tensor *tx, *ty, *ts;
	vnpu_infer_request *req;
	int i;

	for (i = 0; i < n; i++) {
		x[i] = (float)i;
		y[i] = 0.5f * (float)i;
	}
	CHECK_OK(vnpu_compiled_model_create_infer_request(cm, &req));
	CHECK_OK(vnpu_tensor_create_from_ptr(VNPU_TYPE_F32, &wrong, x, &tx));
	CHECK_ERR(vnpu_infer_request_set_tensor(req, "x", tx), VNPU_INVALID_ARGUMENT);
	vnpu_tensor_free(tx);
	CHECK_OK(vnpu_tensor_create_from_ptr(VNPU_TYPE_F32, shape, x, &tx));
	CHECK_OK(vnpu_tensor_create_from_ptr(VNPU_TYPE_F32, shape, y, &ty));
	CHECK_OK(vnpu_infer_request_set_tensor(req, "x", tx));
	CHECK_OK(vnpu_infer_request_set_tensor(req, "y", ty));
	CHECK_OK(vnpu_infer_request_infer(req));
	CHECK_OK(vnpu_infer_request_get_tensor(req, "sum", &ts));
	CHECK_OK(vnpu_tensor_get_data(ts, (void **)&sum));
	for (i = 0; i < n; i++)
		CHECK(sum[i] == 1.5f * (float)i);
	vnpu_tensor_free(tx);
	vnpu_tensor_free(ty);
	vnpu_tensor_free(ts);
	vnpu_infer_request_free(req);
	return 0;
}

/*
 * An input's declared shape gives way to vnpu_model_reshape() as
 * OpenVINO's does: Add's fixed [3,4,5] inputs become [4,5], the shape
 * its data has, and a request then takes only tensors of that shape. A
 * shape a node refuses (x [2,5] against y [3,4,5]) is refused and the
 * model is left as it was.
 */
static int reshape_fixed_dims(vnpu_core *core, const char *device)
{
	const vnpu_shape refused = { 2, { 2, 5 } }, shape = { 2, { 4, 5 } };
	vnpu_compiled_model *cm;
	vnpu_shape got;
	vnpu_model *m;

	CHECK_OK(vnpu_core_read_model(core, ADD, &m));
	CHECK_ERR(vnpu_model_reshape(m, "x", &refused), VNPU_INVALID_ARGUMENT);
	CHECK(strstr(vnpu_last_error(), "reshape 'x'"));
	CHECK_OK(vnpu_model_output_shape(m, 0, &got));
	CHECK(got.rank == 3 && got.dims[0] == 3);
	CHECK_OK(vnpu_model_reshape(m, "x", &shape));
	CHECK_OK(vnpu_model_reshape(m, "y", &shape));
	CHECK_OK(vnpu_model_output_shape(m, 0, &got));
	CHECK(got.rank == 2 && got.dims[0] == 4 && got.dims[1] == 5);
	CHECK_OK(vnpu_core_compile_model(core, m, device, NULL, &cm));
	vnpu_model_free(m);
	CHECK(!run_add_shaped(cm, &shape, 20));
	vnpu_compiled_model_free(cm);
	return 0;
}

/*
 * Hostile reshapes through the public API, each refused with a status and
 * a message and the model left usable: NULLs, unknown names, an output, a
 * rank above VNPU_MAX_RANK, an element count past 2^40 (or 64 bits), a
 * shape Add cannot broadcast. A compiled model keeps the shape it was
 * compiled with when the model is reshaped afterwards; a frozen input is
 * no longer one.
 */
static int reshape_hostile(vnpu_core *core, const char *device)
{
	const vnpu_shape four_five = { 2, { 4, 5 } }, two_ten = { 2, { 2, 10 } };
	const vnpu_shape scalar = { .rank = 0 }, deep = { .rank = VNPU_MAX_RANK + 1 };
	const vnpu_shape huge = { 2, { 1ll << 62, 4 } }, wide = { 3, { 1ll << 40, 1ll << 40, 1 } };
	const vnpu_shape unbroadcast = { 2, { 2, 5 } };
	vnpu_compiled_model *cm, *cm2;
	float zeros[20] = { 0 };
	vnpu_shape got;
	vnpu_model *m;

	CHECK_OK(vnpu_core_read_model(core, ADD, &m));
	CHECK_ERR(vnpu_model_reshape(NULL, "x", &four_five), VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_model_reshape(m, NULL, &four_five), VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_model_reshape(m, "x", NULL), VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_model_reshape(m, "nope", &four_five), VNPU_NOT_FOUND);
	CHECK(strstr(vnpu_last_error(), "'nope'"));
	CHECK_ERR(vnpu_model_reshape(m, "sum", &four_five), VNPU_NOT_FOUND);
	CHECK_ERR(vnpu_model_reshape(m, "x", &deep), VNPU_INVALID_ARGUMENT);
	CHECK(strstr(vnpu_last_error(), "rank"));
	CHECK_ERR(vnpu_model_reshape(m, "x", &huge), VNPU_INVALID_ARGUMENT);
	CHECK(strstr(vnpu_last_error(), "reshape 'x'"));
	CHECK_ERR(vnpu_model_reshape(m, "x", &wide), VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_model_reshape(m, "x", &unbroadcast), VNPU_INVALID_ARGUMENT);
	CHECK(strstr(vnpu_last_error(), "Add"));
	CHECK_OK(vnpu_model_input_shape(m, 0, &got));
	CHECK(got.rank == 3 && got.dims[0] == 3 && got.dims[1] == 4 && got.dims[2] == 5);
	/* A scalar x broadcasts against y. */
	CHECK_OK(vnpu_model_reshape(m, "x", &scalar));
	CHECK_OK(vnpu_model_output_shape(m, 0, &got));
	CHECK(got.rank == 3 && got.dims[2] == 5);
	CHECK_OK(vnpu_model_reshape(m, "x", &four_five));
	CHECK_OK(vnpu_model_reshape(m, "y", &four_five));
	CHECK_OK(vnpu_core_compile_model(core, m, device, NULL, &cm));
	/*
	 * Reshaped after a compile: cm keeps [4,5], a new compile takes [2,10]
	 * (one input at a time: x becomes a scalar on the way).
	 */
	CHECK_ERR(vnpu_model_reshape(m, "x", &two_ten), VNPU_INVALID_ARGUMENT);
	CHECK_OK(vnpu_model_reshape(m, "x", &scalar));
	CHECK_OK(vnpu_model_reshape(m, "y", &two_ten));
	CHECK_OK(vnpu_model_reshape(m, "x", &two_ten));
	CHECK_OK(vnpu_core_compile_model(core, m, device, NULL, &cm2));
	CHECK(!run_add_shaped(cm, &four_five, 20));
	CHECK(!run_add_shaped(cm2, &two_ten, 20));
	vnpu_compiled_model_free(cm);
	vnpu_compiled_model_free(cm2);
	/* Frozen, 'y' is no input any more. */
	CHECK_OK(vnpu_model_freeze_input(m, "y", VNPU_TYPE_F32, &two_ten, zeros, sizeof(zeros)));
	CHECK_ERR(vnpu_model_reshape(m, "y", &two_ten), VNPU_NOT_FOUND);
	CHECK_ERR(vnpu_model_reshape(m, "x", &four_five), VNPU_INVALID_ARGUMENT);
	CHECK_OK(vnpu_model_reshape(m, "x", &two_ten));
	CHECK_OK(vnpu_core_compile_model(core, m, device, NULL, &cm));
	vnpu_compiled_model_free(cm);
	vnpu_model_free(m);
	return 0;
}

/*
 * Compile @m, run it once (inputs as the request makes them, zero), and
 * check that output @name has shape @want; its data, when @data is given,
 * is copied there (at most @max floats).
 */
static int run_output(vnpu_core *core, const char *device, const vnpu_model *m,
		      const char *name, const vnpu_shape *want, float *data, size_t max)
{
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	vnpu_tensor *t;
	vnpu_shape got;
	size_t bytes, elems = 1;
	void *p;

	CHECK_OK(vnpu_core_compile_model(core, m, device, NULL, &cm));
	CHECK_OK(vnpu_compiled_model_create_infer_request(cm, &req));
	CHECK_OK(vnpu_infer_request_infer(req));
	CHECK_OK(vnpu_infer_request_get_tensor(req, name, &t));
	CHECK_OK(vnpu_tensor_get_shape(t, &got));
	CHECK(got.rank == want->rank);
	for (uint32_t d = 0; d < got.rank; d++) {
		CHECK(got.dims[d] == want->dims[d]);
		elems *= (size_t)got.dims[d];
	}
	CHECK_OK(vnpu_tensor_get_byte_size(t, &bytes));
	CHECK(bytes == elems * sizeof(float));
	if (data) {
		CHECK(elems <= max);
		CHECK_OK(vnpu_tensor_get_data(t, &p));
		memcpy(data, p, bytes);
	}
	vnpu_tensor_free(t);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
	return 0;
}

/*
 * GRU and LSTM over an empty batch (X reshaped to batch 0) compile and
 * run: Y, Y_h and Y_c are empty, of the shapes ONNX gives them (layout 0
 * [seq, dirs, 0, H] and [dirs, 0, H]; layout 1 batch first). Zero steps of
 * a batch of 3 leave Y_h at its initial value, zeros; one step on X zero
 * is tanh(biases) = 0.
 */
static int rnn_empty_batch(vnpu_core *core, const char *device)
{
	const vnpu_shape gru_x = { 3, { 1, 0, 2 } }, gru_yh = { 3, { 1, 0, 5 } };
	const vnpu_shape lstm_x = { 3, { 0, 7, 2 } }, lstm_y = { 4, { 0, 7, 1, 7 } };
	const vnpu_shape lstm_yh = { 3, { 0, 1, 7 } };
	const vnpu_shape no_steps = { 3, { 0, 3, 2 } }, yh3 = { 3, { 1, 3, 5 } };
	const vnpu_shape one_step = { 3, { 1, 3, 2 } };
	float yh[15];
	vnpu_model *m;

	CHECK_OK(vnpu_core_read_model(core, NODE_DIR "test_gru_defaults/model.onnx", &m));
	CHECK_OK(vnpu_model_reshape(m, "X", &gru_x));
	CHECK(!run_output(core, device, m, "Y_h", &gru_yh, NULL, 0));
	CHECK_OK(vnpu_model_reshape(m, "X", &no_steps));
	memset(yh, 0xff, sizeof(yh));
	CHECK(!run_output(core, device, m, "Y_h", &yh3, yh, 15));
	for (int i = 0; i < 15; i++)
		CHECK(yh[i] == 0.0f);
	CHECK_OK(vnpu_model_reshape(m, "X", &one_step));
	memset(yh, 0xff, sizeof(yh));
	CHECK(!run_output(core, device, m, "Y_h", &yh3, yh, 15));
	for (int i = 0; i < 15; i++)
		CHECK(yh[i] == 0.0f);
	vnpu_model_free(m);

	CHECK_OK(vnpu_core_read_model(core, NODE_DIR "test_lstm_batchwise/model.onnx", &m));
	CHECK_OK(vnpu_model_reshape(m, "X", &lstm_x));
	CHECK(!run_output(core, device, m, "Y", &lstm_y, NULL, 0));
	CHECK(!run_output(core, device, m, "Y_h", &lstm_yh, NULL, 0));
	vnpu_model_free(m);
	return 0;
}

/*
 * Layers the engine does not take, lowered without them: the determinant
 * of 0 x 0 matrices is 1, ReduceSumSquare of a scalar its square, and
 * ConvTranspose of an input without elements (no B) zeros.
 */
static int empty_and_scalar_layers(vnpu_core *core, const char *device)
{
	const vnpu_shape none = { 2, { 0, 0 } }, batch_none = { 3, { 3, 0, 0 } };
	const vnpu_shape scalar = { 0 }, three = { 1, { 3 } };
	const vnpu_shape no_x = { 4, { 1, 1, 3, 0 } }, y = { 4, { 1, 2, 10, 8 } };
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	vnpu_tensor *t;
	float out[160], *p;
	vnpu_model *m;

	CHECK_OK(vnpu_core_read_model(core, NODE_DIR "test_det_nd/model.onnx", &m));
	CHECK_OK(vnpu_model_reshape(m, "x", &none));
	CHECK(!run_output(core, device, m, "y", &scalar, out, 1));
	CHECK(out[0] == 1.0f);
	CHECK_OK(vnpu_model_reshape(m, "x", &batch_none));
	CHECK(!run_output(core, device, m, "y", &three, out, 3));
	CHECK(out[0] == 1.0f && out[1] == 1.0f && out[2] == 1.0f);
	vnpu_model_free(m);

	CHECK_OK(vnpu_core_read_model(core, NODE_DIR
				      "test_reduce_sum_square_default_axes_keepdims_example/model.onnx",
				      &m));
	CHECK_OK(vnpu_model_reshape(m, "data", &scalar));
	CHECK_OK(vnpu_core_compile_model(core, m, device, NULL, &cm));
	vnpu_model_free(m);
	CHECK_OK(vnpu_compiled_model_create_infer_request(cm, &req));
	CHECK_OK(vnpu_infer_request_get_tensor(req, "data", &t));
	CHECK_OK(vnpu_tensor_get_data(t, (void **)&p));
	*p = -3.0f;
	vnpu_tensor_free(t);
	CHECK_OK(vnpu_infer_request_infer(req));
	CHECK_OK(vnpu_infer_request_get_tensor(req, "reduced", &t));
	CHECK_OK(vnpu_tensor_get_data(t, (void **)&p));
	CHECK(*p == 9.0f);
	vnpu_tensor_free(t);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);

	CHECK_OK(vnpu_core_read_model(core, NODE_DIR "test_convtranspose_kernel_shape/model.onnx",
				      &m));
	CHECK_OK(vnpu_model_reshape(m, "X", &no_x));
	memset(out, 0xff, sizeof(out));
	CHECK(!run_output(core, device, m, "Y", &y, out, 160));
	for (int i = 0; i < 160; i++)
		CHECK(out[i] == 0.0f);
	vnpu_model_free(m);
	return 0;
}

/*
 * vnpu_model_reshape()'s two refusals of a shape a node does not take:
 * VNPU_UNSUPPORTED past a device limit (an RNN of 65537 steps; 65536 are
 * taken), VNPU_INVALID_ARGUMENT for a shape the op does not define (X of
 * rank 2); either leaves the model as it was. 2^31 in a layer's dimension
 * is the compile's refusal, VNPU_UNSUPPORTED too.
 */
static int reshape_statuses(vnpu_core *core, const char *device)
{
	const vnpu_shape steps_max = { 3, { 3, 65536, 2 } }, steps_over = { 3, { 3, 65537, 2 } };
	const vnpu_shape flat = { 2, { 3, 2 } }, wide = { 1, { (1ll << 31) + 1 } };
	vnpu_compiled_model *cm;
	vnpu_shape in, out;
	vnpu_model *m;

	CHECK_OK(vnpu_core_read_model(core, NODE_DIR "test_simple_rnn_batchwise/model.onnx", &m));
	CHECK_ERR(vnpu_model_reshape(m, "X", &steps_over), VNPU_UNSUPPORTED);
	CHECK(strstr(vnpu_last_error(), "RNN node: a sequence of 65537 steps"));
	CHECK_OK(vnpu_model_input_shape(m, 0, &in));
	CHECK(in.rank == 3 && in.dims[0] == 3 && in.dims[1] == 1 && in.dims[2] == 2);
	CHECK_OK(vnpu_model_output_shape(m, 0, &out));
	CHECK(out.rank == 4 && out.dims[1] == 1);
	CHECK_ERR(vnpu_model_reshape(m, "X", &flat), VNPU_INVALID_ARGUMENT);
	CHECK(strstr(vnpu_last_error(), "RNN node: X and W must have rank 3"));
	CHECK_OK(vnpu_model_reshape(m, "X", &steps_max));
	CHECK_OK(vnpu_model_output_shape(m, 0, &out));
	CHECK(out.rank == 4 && out.dims[1] == 65536);
	vnpu_model_free(m);

	CHECK_OK(vnpu_core_read_model(core, NODE_DIR "test_neg_example/model.onnx", &m));
	CHECK_OK(vnpu_model_reshape(m, "x", &wide));
	CHECK_ERR(vnpu_core_compile_model(core, m, device, NULL, &cm), VNPU_UNSUPPORTED);
	CHECK(strstr(vnpu_last_error(), "Neg node: dimension 0 of 'x' is 2147483649"));
	vnpu_model_free(m);
	return 0;
}

/*
 * x f32[2,3] reshaped to Slice(big + big, 0, 2), big an i64[5000]
 * initializer of 2, 2, 0...: the shape [4,4] is known only once the sum
 * of 5000 elements is folded, which reading (up to 4096) does not do and
 * compiling does. Serialized into @model.
 */
static void late_reshape_model(struct pb *model)
{
	struct pb graph = { 0 }, opset = { 0 };
	static int64_t big[5000] = { 2, 2 };
	const int64_t x_dims[2] = { 2, 3 }, count = 5000, one = 1, zero = 0, two = 2;

	onnx_node(&graph, "Add", (const char *[]){ "big", "big" }, 2, "sum");
	onnx_node(&graph, "Slice", (const char *[]){ "sum", "starts", "ends" }, 3, "shape");
	onnx_node(&graph, "Reshape", (const char *[]){ "x", "shape" }, 2, "y");
	pb_str(&graph, GRAPH_NAME, "late_reshape");
	onnx_init(&graph, "big", ONNX_INT64, 1, &count, big, sizeof(big));
	onnx_init(&graph, "starts", ONNX_INT64, 1, &one, &zero, sizeof(zero));
	onnx_init(&graph, "ends", ONNX_INT64, 1, &one, &two, sizeof(two));
	onnx_value(&graph, GRAPH_INPUT, "x", 2, x_dims);
	onnx_value(&graph, GRAPH_OUTPUT, "y", -1, NULL);
	/* onnx_model(), but the opset names its domain (empty: the default). */
	pb_int(model, MODEL_IR_VERSION, 8);
	pb_str(&opset, OPSET_DOMAIN, "");
	pb_int(&opset, OPSET_VERSION, 13);
	pb_msg(model, MODEL_OPSET, &opset);
	pb_msg(model, MODEL_GRAPH, &graph);
	pb_free(&opset);
	pb_free(&graph);
}

/*
 * A model read fine is no parse error at compile: the Reshape refused
 * only by the compile's folding is VNPU_INVALID_ARGUMENT, for the
 * compile and the query alike, with the node and the shapes said.
 */
static int compile_late_reshape(vnpu_core *core, const char *device)
{
	vnpu_compiled_model *cm = NULL;
	vnpu_query_report *report = NULL;
	struct pb model = { 0 };
	vnpu_status st;
	vnpu_model *m;

	late_reshape_model(&model);
	CHECK(!model.failed);
	st = vnpu_core_read_model_from_memory(core, model.data, model.len, &m);
	pb_free(&model);
	CHECK_OK(st);
	CHECK_ERR(vnpu_core_compile_model(core, m, device, NULL, &cm), VNPU_INVALID_ARGUMENT);
	CHECK(strstr(vnpu_last_error(), "Reshape node: 6 elements reshaped to 16"));
	CHECK(!cm);
	CHECK_ERR(vnpu_core_query_model(core, m, device, &report), VNPU_INVALID_ARGUMENT);
	CHECK(strstr(vnpu_last_error(), "Reshape node: 6 elements reshaped to 16"));
	vnpu_query_report_free(report);
	vnpu_model_free(m);
	return 0;
}

/*
 * An index out of range faults on the device at run time: the message
 * names the layer the faulting command came from, not only its number.
 */
static int fault_names_layer(vnpu_core *core, const char *device)
{
	static const float table[4] = { 1, 2, 3, 4 };
	static const char *const in[2] = { "table", "idx" };
	const int64_t four = 4, two = 2;
	const int64_t good[2] = { 3, -4 }, bad[2] = { 1, 7 };
	struct pb model = { 0 }, g = { 0 };
	vnpu_compiled_model *cm = NULL;
	vnpu_infer_request *req;
	vnpu_tensor *idx, *y;
	float *out;
	void *data;

	onnx_init(&g, "table", ONNX_FLOAT, 1, &four, table, sizeof(table));
	onnx_node(&g, "Gather", in, 2, "picked");
	onnx_value_typed(&g, GRAPH_INPUT, "idx", ONNX_INT64, 1, &two);
	onnx_value(&g, GRAPH_OUTPUT, "picked", 1, &two);
	onnx_model(&model, &g, 13);
	pb_free(&g);
	CHECK(!compile_pb(core, device, &model, &cm));
	CHECK_OK(vnpu_compiled_model_create_infer_request(cm, &req));
	CHECK_OK(vnpu_infer_request_get_tensor(req, "idx", &idx));
	vnpu_tensor_get_data(idx, &data);
	memcpy(data, good, sizeof(good));
	CHECK_OK(vnpu_infer_request_infer(req));
	CHECK_OK(vnpu_infer_request_get_tensor(req, "picked", &y));
	vnpu_tensor_get_data(y, (void **)&out);
	CHECK(out[0] == 4 && out[1] == 1);
	vnpu_tensor_free(y);
	memcpy(data, bad, sizeof(bad));
	CHECK_ERR(vnpu_infer_request_infer(req), VNPU_DEVICE_FAULT);
	if (!strstr(vnpu_last_error(), "layer \"picked\" (Gather)"))
		fprintf(stderr, "message: %s\n", vnpu_last_error());
	CHECK(strstr(vnpu_last_error(), "layer \"picked\" (Gather)"));
	/* The request runs again once the index is back in range. */
	memcpy(data, good, sizeof(good));
	CHECK_OK(vnpu_infer_request_infer(req));
	vnpu_tensor_free(idx);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
	return 0;
}

/*
 * A branch graph for if_lazy_model(): Squeeze(x, axes) -> out, f32[4].
 * (A Squeeze reading the outer graph's x and axes.)
 */
static void squeeze_branch(struct pb *node, const char *attr, const char *axes,
			   const char *out)
{
	const char *in[2] = { "x", axes };
	const int64_t four = 4;
	struct pb g = { 0 }, a = { 0 };

	onnx_node(&g, "Squeeze", in, 2, out);
	pb_str(&g, GRAPH_NAME, attr);
	onnx_value(&g, GRAPH_OUTPUT, out, 1, &four);
	pb_str(&a, ATTR_NAME, attr);
	pb_int(&a, ATTR_TYPE, ATTR_GRAPH);
	pb_msg(&a, ATTR_G, &g);
	pb_msg(node, NODE_ATTR, &a);
	pb_free(&g);
	pb_free(&a);
}

/*
 * x f32[1,4] -> If "rate_switch"(c): then Squeeze(x, [0]) -> y f32[4],
 * else Squeeze(x, [1]), which cannot take x (a branch valid only for
 * another input, as a model switching on its sample rate has). @cond:
 * 0 or 1 for a constant condition, -1 for a bool input "c".
 */
static vnpu_status if_lazy_model(vnpu_core *core, int cond, vnpu_model **m)
{
	const int64_t xdims[2] = { 1, 4 }, four = 4, one = 1, zero = 0;
	const uint8_t c = cond > 0;
	struct pb model = { 0 }, g = { 0 }, node = { 0 };
	vnpu_status st;

	onnx_value(&g, GRAPH_INPUT, "x", 2, xdims);
	if (cond < 0)
		onnx_value_typed(&g, GRAPH_INPUT, "c", ONNX_BOOL, 0, NULL);
	else
		onnx_init(&g, "c", ONNX_BOOL, 0, NULL, &c, 1);
	onnx_init(&g, "ax0", ONNX_INT64, 1, &one, &zero, 8);
	onnx_init(&g, "ax1", ONNX_INT64, 1, &one, &one, 8);
	pb_str(&node, NODE_INPUT, "c");
	pb_str(&node, NODE_OUTPUT, "y");
	pb_str(&node, NODE_NAME, "rate_switch");
	pb_str(&node, NODE_OP, "If");
	squeeze_branch(&node, "then_branch", "ax0", "yt");
	squeeze_branch(&node, "else_branch", "ax1", "ye");
	pb_msg(&g, GRAPH_NODE, &node);
	onnx_value(&g, GRAPH_OUTPUT, "y", 1, &four);
	onnx_model(&model, &g, 13);
	pb_free(&g);
	pb_free(&node);
	st = model.failed ? VNPU_OUT_OF_MEMORY :
	     vnpu_core_read_model_from_memory(core, model.data, model.len, m);
	pb_free(&model);
	return st;
}

/* Run @req with x = 1..4 (and c = @c when it has it): y must be x
 * (else GENERAL_ERROR, without a message: the caller's CHECK fails). */
static vnpu_status run_if_lazy(vnpu_infer_request *req, bool has_c, bool c)
{
	static const float xs[4] = { 1, 2, 3, 4 };
	vnpu_tensor *x, *ct, *y;
	void *data;
	vnpu_status st;

	st = vnpu_infer_request_get_tensor(req, "x", &x);
	if (st)
		return st;
	vnpu_tensor_get_data(x, &data);
	memcpy(data, xs, sizeof(xs));
	vnpu_tensor_free(x);
	if (has_c) {
		st = vnpu_infer_request_get_tensor(req, "c", &ct);
		if (st)
			return st;
		vnpu_tensor_get_data(ct, &data);
		*(uint8_t *)data = c;
		vnpu_tensor_free(ct);
	}
	st = vnpu_infer_request_infer(req);
	if (st)
		return st;
	st = vnpu_infer_request_get_tensor(req, "y", &y);
	if (st)
		return st;
	vnpu_tensor_get_data(y, &data);
	if (memcmp(data, xs, sizeof(xs)))
		st = VNPU_GENERAL_ERROR;
	vnpu_tensor_free(y);
	return st;
}

/*
 * If branches are inferred lazily: a branch that cannot take the inputs'
 * shapes is an error only if it is taken. A constant condition compiles
 * its branch alone (the other taken: the read names the node); a run-time
 * one compiles the valid branch and a guard, which faults naming the If
 * when the invalid branch is taken.
 */
static int if_lazy_branches(vnpu_core *core, const char *device)
{
	vnpu_compiled_model *cm = NULL;
	vnpu_infer_request *req;
	vnpu_model *m;

	CHECK_OK(if_lazy_model(core, 1, &m));
	CHECK_OK(vnpu_core_compile_model(core, m, device, NULL, &cm));
	vnpu_model_free(m);
	CHECK_OK(vnpu_compiled_model_create_infer_request(cm, &req));
	CHECK_OK(run_if_lazy(req, false, false));
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);

	CHECK_ERR(if_lazy_model(core, 0, &m), VNPU_PARSE_ERROR);
	CHECK(strstr(vnpu_last_error(), "rate_switch"));
	CHECK(strstr(vnpu_last_error(), "Squeeze"));

	CHECK_OK(if_lazy_model(core, -1, &m));
	CHECK_OK(vnpu_core_compile_model(core, m, device, NULL, &cm));
	vnpu_model_free(m);
	CHECK_OK(vnpu_compiled_model_create_infer_request(cm, &req));
	CHECK_OK(run_if_lazy(req, true, true));
	CHECK_ERR(run_if_lazy(req, true, false), VNPU_DEVICE_FAULT);
	if (!strstr(vnpu_last_error(), "rate_switch"))
		fprintf(stderr, "message: %s\n", vnpu_last_error());
	CHECK(strstr(vnpu_last_error(), "rate_switch"));
	/* It runs again with the valid branch taken. */
	CHECK_OK(run_if_lazy(req, true, true));
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
	return 0;
}

/*
 * CastLike takes only the element type of 'like': ONNX's castlike bf16
 * cases feed a [1] to a 'like' declared [3,4], which a reshape of 'like'
 * lets through. Into bf16 truncates (the upper half of the f32 bits).
 */
static int castlike_reshaped_like(vnpu_core *core, const char *device)
{
	static const uint32_t bits[12] = { 0x3ef535b8, 0x3f51b0e5, 0xbeffe000, 0x7fc00000,
					   0xff800000, 0x00000000, 0x3f80ffff, 0x40490fdb,
					   0xc2c80000, 0x3c23d70a, 0x7f800000, 0x80000000 };
	const vnpu_shape one = { 1, { 1 } }, full = { 2, { 3, 4 } };
	uint16_t like[12] = { 0 }, *y;
	vnpu_tensor *tx, *tl, *tfull, *ty;
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	vnpu_model *m;
	float x[12];
	int i;

	memcpy(x, bits, sizeof(x));
	CHECK_OK(vnpu_core_read_model(core, CASTLIKE, &m));
	CHECK_OK(vnpu_model_reshape(m, "like", &one));
	CHECK_OK(vnpu_core_compile_model(core, m, device, NULL, &cm));
	vnpu_model_free(m);
	CHECK_OK(vnpu_compiled_model_create_infer_request(cm, &req));
	CHECK_OK(vnpu_tensor_create_from_ptr(VNPU_TYPE_F32, &full, x, &tx));
	CHECK_OK(vnpu_tensor_create_from_ptr(VNPU_TYPE_BF16, &one, like, &tl));
	CHECK_OK(vnpu_tensor_create_from_ptr(VNPU_TYPE_BF16, &full, like, &tfull));
	CHECK_ERR(vnpu_infer_request_set_tensor(req, "like", tfull), VNPU_INVALID_ARGUMENT);
	CHECK_OK(vnpu_infer_request_set_tensor(req, "like", tl));
	CHECK_OK(vnpu_infer_request_set_tensor(req, "input", tx));
	CHECK_OK(vnpu_infer_request_infer(req));
	CHECK_OK(vnpu_infer_request_get_tensor(req, "output", &ty));
	CHECK_OK(vnpu_tensor_get_data(ty, (void **)&y));
	for (i = 0; i < 12; i++)
		CHECK(y[i] == bits[i] >> 16);
	vnpu_tensor_free(tx);
	vnpu_tensor_free(tl);
	vnpu_tensor_free(tfull);
	vnpu_tensor_free(ty);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
	return 0;
}

/* trip_count i64, cond bool, y f32[1] -> res_y, res_scan (a Loop) */
#define LOOP NODE_DIR "test_loop11/model.onnx"
/* sequence seq(i64), tensor i64[3] -> output_sequence seq(i64) */
#define SEQ_INSERT NODE_DIR "test_sequence_insert_at_back/model.onnx"
/* x0 seq(f32), x1 f32[?] -> y0 seq(f32), y0[i] = x0[i] + x1 (a SequenceMap) */
#define SEQ_ADD NODE_DIR "test_sequence_map_add_1_sequence_1_tensor/model.onnx"

/* Shapes no input may take, and the limit each refusal names. */
static const struct {
	vnpu_shape shape;
	const char *says;
} bad_shapes[] = {
	{ { .rank = VNPU_MAX_RANK + 1 }, "rank 9 above" },
	{ { 3, { 3, -5, 5 } }, "dimension 1 is -5" },
	{ { 3, { 3, 1ll << 41, 0 } }, "dimension 1 is 2199023255552: more than 2^40 elements" },
	{ { 3, { 1ll << 21, 1ll << 20, 1 } }, "more than 2^40 elements" },
	{ { 3, { 0, 1ll << 40, 1ll << 40 } }, "more than 2^40 elements" },
};

/* The last error starts with @prefix and holds @says. */
static int said(const char *prefix, const char *says)
{
	CHECK(!strncmp(vnpu_last_error(), prefix, strlen(prefix)));
	CHECK(strstr(vnpu_last_error(), says));
	return 0;
}

/* Input @index of @m is called @name, of @rank dimensions @dims. */
static int input_is(const vnpu_model *m, size_t index, const char *name, uint32_t rank,
		    const int64_t *dims)
{
	const char *got_name;
	vnpu_shape got;

	CHECK_OK(vnpu_model_input_name(m, index, &got_name));
	CHECK(!strcmp(got_name, name));
	CHECK_OK(vnpu_model_input_shape(m, index, &got));
	CHECK(got.rank == rank);
	for (uint32_t d = 0; d < rank; d++)
		CHECK(got.dims[d] == dims[d]);
	return 0;
}

/*
 * A shape past the limits is refused alike by every call that gives an
 * input a shape: vnpu_model_reshape(), _freeze_input(), an element of
 * _reshape_sequence() or _freeze_sequence(), each VNPU_INVALID_ARGUMENT
 * naming the limit, the model left as it was. A frozen tensor and a
 * sequence's elements are static: a dynamic dimension is refused too.
 */
static int shape_limits_alike(vnpu_core *core, const char *device)
{
	const vnpu_shape fits = { 3, { 3, 4, 5 } }, dynamic = { 3, { 3, VNPU_DIM_DYNAMIC, 5 } };
	const vnpu_shape empty_wide = { 3, { 0, 1ll << 41, 3 } }, two = { 1, { 2 } };
	vnpu_shape elems[2] = { { 1, { 2 } } };
	vnpu_compiled_model *cm;
	vnpu_tensor *t;
	vnpu_model *add, *seq;
	size_t n;

	(void)device;
	CHECK_OK(vnpu_core_read_model(core, ADD, &add));
	CHECK_OK(vnpu_core_read_model(core, SEQ_INSERT, &seq));
	for (size_t i = 0; i < sizeof(bad_shapes) / sizeof(bad_shapes[0]); i++) {
		const vnpu_shape *bad = &bad_shapes[i].shape;

		CHECK_ERR(vnpu_model_reshape(add, "x", bad), VNPU_INVALID_ARGUMENT);
		CHECK(!said("reshape 'x': ", bad_shapes[i].says));
		CHECK_ERR(vnpu_model_freeze_input(add, "x", VNPU_TYPE_F32, bad, NULL, 0),
			  VNPU_INVALID_ARGUMENT);
		CHECK(!said("freeze 'x': ", bad_shapes[i].says));
		elems[1] = *bad;
		CHECK_ERR(vnpu_model_reshape_sequence(seq, "sequence", 2, elems),
			  VNPU_INVALID_ARGUMENT);
		CHECK(!said("reshape 'sequence': element 1: ", bad_shapes[i].says));
	}
	CHECK_ERR(vnpu_model_freeze_input(add, "x", VNPU_TYPE_F32, &dynamic, NULL, 0),
		  VNPU_INVALID_ARGUMENT);
	CHECK(!said("freeze 'x': ", "dimension 1 is dynamic"));
	elems[1] = dynamic;
	CHECK_ERR(vnpu_model_reshape_sequence(seq, "sequence", 2, elems), VNPU_INVALID_ARGUMENT);
	CHECK(!said("reshape 'sequence': element 1: ", "dimension 1 is dynamic"));
	/* A tensor of no elements may have such a dimension; a frozen sequence may not. */
	CHECK_OK(vnpu_tensor_create(VNPU_TYPE_I64, &empty_wide, &t));
	CHECK_ERR(vnpu_model_freeze_sequence(seq, "sequence", &t, 1), VNPU_INVALID_ARGUMENT);
	CHECK(!said("freeze 'sequence': element 0: ", "more than 2^40 elements"));
	vnpu_tensor_free(t);

	/* Nothing changed: both inputs are there, x as declared, the
	 * sequence's length still open. */
	CHECK_OK(vnpu_model_get_inputs_size(add, &n));
	CHECK(n == 2);
	CHECK(!input_is(add, 0, "x", 3, fits.dims));
	CHECK_OK(vnpu_model_get_inputs_size(seq, &n));
	CHECK(n == 2);
	CHECK_OK(vnpu_model_reshape_sequence(seq, "sequence", 1, &two));
	CHECK_OK(vnpu_core_compile_model(core, seq, device, NULL, &cm));
	vnpu_compiled_model_free(cm);
	vnpu_model_free(seq);
	vnpu_model_free(add);
	return 0;
}

/*
 * vnpu_model_freeze_input()'s refusals, each leaving the model as it was:
 * the bad arguments (VNPU_INVALID_ARGUMENT, VNPU_NOT_FOUND), data a node's
 * op does not define (a Reshape of 24 elements to 25, a Tile repeat of -1:
 * VNPU_INVALID_ARGUMENT, never a parse error), and data that takes a node
 * past a device limit, VNPU_UNSUPPORTED at the freeze as at a reshape (a
 * Loop of 65537 iterations; 65536 are taken).
 */
static int freeze_statuses(vnpu_core *core, const char *device)
{
	const vnpu_shape fits = { 3, { 3, 4, 5 } }, other = { 3, { 3, 4, 6 } };
	const vnpu_shape flat = { 2, { 12, 5 } }, two = { 1, { 2 } }, four = { 1, { 4 } };
	const vnpu_shape scalar = { 0 };
	static const int64_t into_25[2] = { 5, 5 }, into_24[2] = { 4, 6 };
	static const int64_t repeat_neg[4] = { 1, 1, 1, -1 };
	const int64_t y_dims[1] = { 1 };
	static float data[60];
	int64_t trip = 65537;
	uint8_t yes = 1, no = 0;
	vnpu_shape got;
	vnpu_model *m;
	size_t n;

	(void)device;
	CHECK_OK(vnpu_core_read_model(core, ADD, &m));
	CHECK_ERR(vnpu_model_freeze_input(NULL, "x", VNPU_TYPE_F32, &fits, data, 240),
		  VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_model_freeze_input(m, NULL, VNPU_TYPE_F32, &fits, data, 240),
		  VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_model_freeze_input(m, "x", VNPU_TYPE_F32, NULL, data, 240),
		  VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_model_freeze_input(m, "x", VNPU_TYPE_F32, &fits, NULL, 240),
		  VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_model_freeze_input(m, "sum", VNPU_TYPE_F32, &fits, data, 240),
		  VNPU_NOT_FOUND);
	CHECK_ERR(vnpu_model_freeze_input(m, "x", VNPU_TYPE_F16, &fits, data, 120),
		  VNPU_INVALID_ARGUMENT);
	CHECK(!said("freeze 'x': ", "type f16, the input is f32"));
	CHECK_ERR(vnpu_model_freeze_input(m, "x", VNPU_TYPE_F32, &other, data, 288),
		  VNPU_INVALID_ARGUMENT);
	CHECK(!said("freeze 'x': ", "dimension 2 is 6, the input is f32[3,4,5]"));
	CHECK_ERR(vnpu_model_freeze_input(m, "x", VNPU_TYPE_F32, &flat, data, 240),
		  VNPU_INVALID_ARGUMENT);
	CHECK(!said("freeze 'x': ", "rank 2, the input is f32[3,4,5]"));
	CHECK_ERR(vnpu_model_freeze_input(m, "x", VNPU_TYPE_F32, &fits, data, 239),
		  VNPU_INVALID_ARGUMENT);
	CHECK(!said("freeze 'x': ", "239 bytes of data for 60 elements of f32"));
	CHECK_OK(vnpu_model_get_inputs_size(m, &n));
	CHECK(n == 2);
	CHECK_OK(vnpu_model_freeze_input(m, "x", VNPU_TYPE_F32, &fits, data, 240));
	CHECK(!input_is(m, 0, "y", 3, fits.dims));
	vnpu_model_free(m);

	CHECK_OK(vnpu_core_read_model(core, NODE_DIR "test_reshape_reduced_dims/model.onnx", &m));
	CHECK_ERR(vnpu_model_freeze_input(m, "shape", VNPU_TYPE_I64, &two, into_25, 16),
		  VNPU_INVALID_ARGUMENT);
	CHECK(!said("freeze 'shape': ", "Reshape node: 24 elements reshaped to 25"));
	CHECK_OK(vnpu_model_output_shape(m, 0, &got));
	CHECK(got.rank == 2 && got.dims[0] == VNPU_DIM_DYNAMIC);
	CHECK_OK(vnpu_model_freeze_input(m, "shape", VNPU_TYPE_I64, &two, into_24, 16));
	CHECK_OK(vnpu_model_output_shape(m, 0, &got));
	CHECK(got.rank == 2 && got.dims[0] == 4 && got.dims[1] == 6);
	vnpu_model_free(m);

	CHECK_OK(vnpu_core_read_model(core, NODE_DIR "test_tile/model.onnx", &m));
	CHECK_ERR(vnpu_model_freeze_input(m, "y", VNPU_TYPE_I64, &four, repeat_neg, 32),
		  VNPU_INVALID_ARGUMENT);
	CHECK(!said("freeze 'y': ", "Tile node: repeat -1"));
	vnpu_model_free(m);

	CHECK_OK(vnpu_core_read_model(core, LOOP, &m));
	CHECK_OK(vnpu_model_freeze_input(m, "trip_count", VNPU_TYPE_I64, &scalar, &trip, 8));
	CHECK_ERR(vnpu_model_freeze_input(m, "cond", VNPU_TYPE_BOOL, &scalar, &yes, 1),
		  VNPU_UNSUPPORTED);
	CHECK(!said("freeze 'cond': ", "Loop node: 65537 iterations, above the limit of 65536"));
	CHECK_OK(vnpu_model_get_inputs_size(m, &n));
	CHECK(n == 2);
	CHECK(!input_is(m, 0, "cond", 0, NULL));
	CHECK(!input_is(m, 1, "y", 1, y_dims));
	/* Left usable: a false condition runs no iteration. */
	CHECK_OK(vnpu_model_freeze_input(m, "cond", VNPU_TYPE_BOOL, &scalar, &no, 1));
	vnpu_model_free(m);

	CHECK_OK(vnpu_core_read_model(core, LOOP, &m));
	trip = 65536;
	CHECK_OK(vnpu_model_freeze_input(m, "trip_count", VNPU_TYPE_I64, &scalar, &trip, 8));
	CHECK_OK(vnpu_model_freeze_input(m, "cond", VNPU_TYPE_BOOL, &scalar, &yes, 1));
	vnpu_model_free(m);
	return 0;
}

/* Input @name of @cm (an element of a sequence) has the shape [@dim]. */
static int port_is(const vnpu_compiled_model *cm, const char *name, int64_t dim)
{
	uint32_t n;
	vnpu_port p;

	CHECK_OK(vnpu_compiled_model_get_num_inputs(cm, &n));
	for (uint32_t i = 0; i < n; i++) {
		CHECK_OK(vnpu_compiled_model_get_input(cm, i, &p));
		if (!strcmp(p.name, name)) {
			CHECK(p.shape.rank == 1 && p.shape.dims[0] == dim);
			return 0;
		}
	}
	CHECK(!"no such port");
	return 1;
}

/*
 * vnpu_model_reshape_sequence()'s statuses are vnpu_model_reshape()'s:
 * bad arguments VNPU_INVALID_ARGUMENT or VNPU_NOT_FOUND, and a refusal
 * leaves the model as it was (a length not fixed by a refused call, the
 * element shapes of the last call taken). The sequence ops are resolved by
 * the compiler, which checks the elements against them: shapes a node does
 * not define are the compile's VNPU_INVALID_ARGUMENT, a layer past the
 * device's limits its VNPU_UNSUPPORTED.
 */
static int reshape_sequence_statuses(vnpu_core *core, const char *device)
{
	vnpu_shape shapes[3] = { { 1, { 1 } }, { 1, { 3 } }, { 1, { 2 } } };
	const vnpu_shape one = { 1, { 1 } }, past = { 1, { (1ll << 31) + 1 } };
	vnpu_compiled_model *cm;
	vnpu_shape *many;
	vnpu_model *m;
	float x1 = 1;

	CHECK_OK(vnpu_core_read_model(core, SEQ_INSERT, &m));
	CHECK_ERR(vnpu_model_reshape_sequence(NULL, "sequence", 1, shapes), VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_model_reshape_sequence(m, NULL, 1, shapes), VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_model_reshape_sequence(m, "sequence", 1, NULL), VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_model_reshape_sequence(m, "nonesuch", 1, shapes), VNPU_NOT_FOUND);
	CHECK_ERR(vnpu_model_reshape_sequence(m, "tensor", 1, shapes), VNPU_INVALID_ARGUMENT);
	CHECK(!said("reshape 'tensor': ", "not a sequence input"));
	many = calloc(65537, sizeof(*many));
	CHECK(many);
	CHECK_ST(vnpu_model_reshape_sequence(m, "sequence", 65537, many), VNPU_INVALID_ARGUMENT);
	free(many);
	CHECK(!said("reshape 'sequence': ", "65537 elements, at most 65536"));
	/* Refused calls fixed no length: three elements now, then two refused. */
	CHECK_OK(vnpu_model_reshape_sequence(m, "sequence", 3, shapes));
	CHECK_ERR(vnpu_model_reshape_sequence(m, "sequence", 2, shapes), VNPU_INVALID_ARGUMENT);
	CHECK(!said("reshape 'sequence': ", "its length is fixed at 3, not 2"));
	shapes[1] = bad_shapes[0].shape;
	CHECK_ERR(vnpu_model_reshape_sequence(m, "sequence", 3, shapes), VNPU_INVALID_ARGUMENT);
	CHECK_OK(vnpu_core_compile_model(core, m, device, NULL, &cm));
	CHECK(!port_is(cm, "sequence[0]", 1) && !port_is(cm, "sequence[1]", 3) &&
	      !port_is(cm, "sequence[2]", 2));
	vnpu_compiled_model_free(cm);
	vnpu_model_free(m);

	/* A frozen x1 of one element: each x0[i] broadcasts against it. */
	CHECK_OK(vnpu_core_read_model(core, SEQ_ADD, &m));
	CHECK_OK(vnpu_model_freeze_input(m, "x1", VNPU_TYPE_F32, &one, &x1, sizeof(x1)));
	shapes[0] = (vnpu_shape){ 2, { 2, 3 } };
	shapes[1] = (vnpu_shape){ 1, { 2 } };
	CHECK_OK(vnpu_model_reshape_sequence(m, "x0", 2, shapes));
	CHECK_OK(vnpu_core_compile_model(core, m, device, NULL, &cm));
	vnpu_compiled_model_free(cm);
	shapes[1] = past;
	CHECK_OK(vnpu_model_reshape_sequence(m, "x0", 2, shapes));
	CHECK_ERR(vnpu_core_compile_model(core, m, device, NULL, &cm), VNPU_UNSUPPORTED);
	CHECK(strstr(vnpu_last_error(),
		     "Add node: dimension 0 of 'x0[1]' is 2147483649: the device's layers take at most 2^31"));
	vnpu_model_free(m);

	/* x1 left a [2] input: x0[i] must broadcast against [2]. */
	CHECK_OK(vnpu_core_read_model(core, SEQ_ADD, &m));
	CHECK_OK(vnpu_model_reshape(m, "x1", &shapes[2]));
	shapes[0] = (vnpu_shape){ 1, { 3 } };
	CHECK_OK(vnpu_model_reshape_sequence(m, "x0", 1, shapes));
	CHECK_ERR(vnpu_core_compile_model(core, m, device, NULL, &cm), VNPU_INVALID_ARGUMENT);
	CHECK(strstr(vnpu_last_error(), "Add node: shapes do not broadcast"));
	vnpu_model_free(m);
	return 0;
}

/*
 * An input declared with a dynamic dimension (x1 f32[?]) is frozen to any
 * static shape of its rank, here [2], and the model computes with it:
 * y0[i] = x0[i] + x1 on a sequence set at run time.
 */
static int freeze_dynamic_input(vnpu_core *core, const char *device)
{
	static const float x1[2] = { 10, 20 }, x0[2][2] = { { 1, 2 }, { 3, 4 } };
	const vnpu_shape two = { 1, { 2 } }, shapes[2] = { { 1, { 2 } }, { 1, { 2 } } };
	const vnpu_shape rank2 = { 2, { 1, 2 } };
	vnpu_tensor *seq[2], *y;
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	vnpu_model *m;
	float *out;
	size_t n;

	CHECK_OK(vnpu_core_read_model(core, SEQ_ADD, &m));
	CHECK_ERR(vnpu_model_freeze_input(m, "x1", VNPU_TYPE_F32, &rank2, x1, sizeof(x1)),
		  VNPU_INVALID_ARGUMENT);
	CHECK(!said("freeze 'x1': ", "rank 2, the input is f32[?]"));
	CHECK_OK(vnpu_model_freeze_input(m, "x1", VNPU_TYPE_F32, &two, x1, sizeof(x1)));
	CHECK_OK(vnpu_model_get_inputs_size(m, &n));
	CHECK(n == 1);
	CHECK_OK(vnpu_model_reshape_sequence(m, "x0", 2, shapes));
	CHECK_OK(vnpu_core_compile_model(core, m, device, NULL, &cm));
	vnpu_model_free(m);
	CHECK_OK(vnpu_compiled_model_create_infer_request(cm, &req));
	for (int i = 0; i < 2; i++)
		CHECK_OK(vnpu_tensor_create_from_ptr(VNPU_TYPE_F32, &two, (void *)x0[i], &seq[i]));
	CHECK_OK(vnpu_infer_request_set_sequence(req, "x0", seq, 2));
	CHECK_OK(vnpu_infer_request_infer(req));
	for (size_t i = 0; i < 2; i++) {
		CHECK_OK(vnpu_infer_request_get_sequence_tensor(req, "y0", i, &y));
		CHECK_OK(vnpu_tensor_get_data(y, (void **)&out));
		CHECK(out[0] == x0[i][0] + 10 && out[1] == x0[i][1] + 20);
		vnpu_tensor_free(y);
	}
	vnpu_tensor_free(seq[0]);
	vnpu_tensor_free(seq[1]);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
	return 0;
}

/*
 * vnpu_model_input_decides_shapes() for each input of node test models
 * ('1' where the input decides shapes), and of x f32[2,3], s i64[2] ->
 * Reshape(x, Add(s, Shape(x))): s decides through the Add, x only feeds
 * the data and a Shape. Then its refusals.
 */
static int shape_deciding_inputs(vnpu_core *core, const char *device)
{
	static const struct {
		const char *model;
		const char *decides;
	} cases[] = {
		{ "test_reshape_reordered_all_dims", "01" }, { "test_slice", "01111" },
		{ "test_resize_upsample_sizes_nearest", "01" }, { "test_top_k", "01" },
		{ "test_range_float_type_positive_delta", "111" }, { "test_add", "00" },
		{ "test_if", "1" }, { "test_loop11", "110" }, { "test_shape", "0" },
	};
	const int64_t x_dims[2] = { 2, 3 }, s_dims[1] = { 2 };
	struct pb g = { 0 }, model = { 0 };
	char path[256];
	vnpu_model *m;
	vnpu_status st;
	size_t n;
	int d;

	(void)device;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		snprintf(path, sizeof(path), NODE_DIR "%s/model.onnx", cases[c].model);
		CHECK_OK(vnpu_core_read_model(core, path, &m));
		CHECK_OK(vnpu_model_get_inputs_size(m, &n));
		CHECK(n == strlen(cases[c].decides));
		for (size_t i = 0; i < n; i++) {
			CHECK_OK(vnpu_model_input_decides_shapes(m, i, &d));
			if (d != (cases[c].decides[i] == '1')) {
				fprintf(stderr, "%s: input %zu decides %d\n", cases[c].model, i, d);
				return 1;
			}
		}
		vnpu_model_free(m);
	}
	onnx_node(&g, "Shape", (const char *[]){ "x" }, 1, "xs");
	onnx_node(&g, "Add", (const char *[]){ "s", "xs" }, 2, "shape");
	onnx_node(&g, "Reshape", (const char *[]){ "x", "shape" }, 2, "y");
	onnx_value(&g, GRAPH_INPUT, "x", 2, x_dims);
	onnx_value_typed(&g, GRAPH_INPUT, "s", ONNX_INT64, 1, s_dims);
	onnx_value(&g, GRAPH_OUTPUT, "y", -1, NULL);
	onnx_model(&model, &g, 17);
	CHECK(!model.failed);
	st = vnpu_core_read_model_from_memory(core, model.data, model.len, &m);
	pb_free(&model);
	CHECK_OK(st);
	CHECK_OK(vnpu_model_input_decides_shapes(m, 0, &d));
	CHECK(d == 0);
	CHECK_OK(vnpu_model_input_decides_shapes(m, 1, &d));
	CHECK(d == 1);
	CHECK_ERR(vnpu_model_input_decides_shapes(m, 2, &d), VNPU_NOT_FOUND);
	CHECK(strstr(vnpu_last_error(), "model has no input 2 (it has 2)"));
	CHECK_ERR(vnpu_model_input_decides_shapes(m, 0, NULL), VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_model_input_decides_shapes(NULL, 0, &d), VNPU_INVALID_ARGUMENT);
	vnpu_model_free(m);
	return 0;
}

/*
 * An opset 6 model: y = @op(a, b) with a f32[2,3,4] an input and b an
 * initializer of @b_rank dims @b_dims (values 10, 20, ...), the node's
 * broadcast attribute set (but for PRelu) and axis @axis unless -1.
 */
static void legacy_model(struct pb *model, const char *op, int b_rank, const int64_t *b_dims,
			 int64_t axis)
{
	static const int64_t a_dims[3] = { 2, 3, 4 };
	struct pb g = { 0 }, node = { 0 }, attr = { 0 };
	float b[24];
	int64_t n = 1;

	for (int d = 0; d < b_rank; d++)
		n *= b_dims[d];
	for (int64_t i = 0; i < n && i < 24; i++)
		b[i] = 10.0f * (float)(i + 1);
	onnx_value(&g, GRAPH_INPUT, "a", 3, a_dims);
	onnx_init(&g, "b", ONNX_FLOAT, b_rank, b_dims, b, (size_t)n * sizeof(float));
	pb_str(&node, NODE_INPUT, "a");
	pb_str(&node, NODE_INPUT, "b");
	pb_str(&node, NODE_OUTPUT, "y");
	pb_str(&node, NODE_OP, op);
	for (int k = 0; k < 2; k++) {
		if (k ? axis == -1 : !strcmp(op, "PRelu"))
			continue;
		pb_str(&attr, ATTR_NAME, k ? "axis" : "broadcast");
		pb_int(&attr, ATTR_TYPE, ATTR_INT);
		pb_int(&attr, ATTR_I, k ? axis : 1);
		pb_msg(&node, NODE_ATTR, &attr);
	}
	pb_msg(&g, GRAPH_NODE, &node);
	onnx_value(&g, GRAPH_OUTPUT, "y", -1, NULL);
	onnx_model(model, &g, 6);
	pb_free(&node);
	pb_free(&attr);
	pb_free(&g);
}

/* y of legacy_model() on a = -1 everywhere, compared with @want(i, j, k). */
static int legacy_runs(vnpu_core *core, const char *device, const char *op, int b_rank,
		       const int64_t *b_dims, int64_t axis, float (*want)(int, int, int))
{
	vnpu_compiled_model *cm = NULL;
	vnpu_infer_request *req = NULL;
	struct pb model = { 0 };
	vnpu_tensor *t;
	float *p;

	legacy_model(&model, op, b_rank, b_dims, axis);
	CHECK(!compile_pb(core, device, &model, &cm));
	CHECK_OK(vnpu_compiled_model_create_infer_request(cm, &req));
	CHECK_OK(vnpu_infer_request_get_tensor(req, "a", &t));
	CHECK_OK(vnpu_tensor_get_data(t, (void **)&p));
	for (int i = 0; i < 24; i++)
		p[i] = -1.0f;
	vnpu_tensor_free(t);
	CHECK_OK(vnpu_infer_request_infer(req));
	CHECK_OK(vnpu_infer_request_get_tensor(req, "y", &t));
	CHECK_OK(vnpu_tensor_get_data(t, (void **)&p));
	for (int i = 0; i < 24; i++) {
		if (p[i] != want(i / 12, i / 4 % 3, i % 4)) {
			fprintf(stderr, "%s: y[%d] = %g, want %g\n", op, i, p[i],
				want(i / 12, i / 4 % 3, i % 4));
			return 1;
		}
	}
	vnpu_tensor_free(t);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
	return 0;
}

static float add_per_channel(int i, int j, int k)
{
	(void)i, (void)k;
	return -1.0f + 10.0f * (float)(j + 1);
}

static float add_per_row(int i, int j, int k)
{
	(void)i;
	return -1.0f + 10.0f * (float)(j * 4 + k + 1);
}

static float add_per_batch(int i, int j, int k)
{
	(void)j, (void)k;
	return -1.0f + 10.0f * (float)(i + 1);
}

static float prelu_per_channel(int i, int j, int k)
{
	(void)i, (void)k;
	return -10.0f * (float)(j + 1);
}

/*
 * Opset < 7 broadcasting (the pytorch suites of libonnx-testdata run it
 * too, onnx-pytorch-cpu): B along A's dimensions from axis (default A's
 * last ones), PRelu-6's slope per channel; a B that does not fit A there
 * (f32[4] from axis 1, f32[3] from axis 3, f32[4,3] at the end) is
 * refused when the model is read.
 */
static int legacy_broadcast(vnpu_core *core, const char *device)
{
	static const int64_t c3[1] = { 3 }, r34[2] = { 3, 4 }, b2[1] = { 2 }, c4[1] = { 4 };
	static const int64_t r43[2] = { 4, 3 };
	struct pb model = { 0 };
	vnpu_model *m = NULL;

	CHECK(!legacy_runs(core, device, "Add", 1, c3, 1, add_per_channel));
	CHECK(!legacy_runs(core, device, "Add", 2, r34, -1, add_per_row));
	CHECK(!legacy_runs(core, device, "Add", 1, b2, 0, add_per_batch));
	CHECK(!legacy_runs(core, device, "PRelu", 1, c3, -1, prelu_per_channel));
	for (int k = 0; k < 3; k++) {
		legacy_model(&model, "Mul", k < 2 ? 1 : 2, k == 0 ? c4 : k == 1 ? c3 : r43,
			     k == 0 ? 1 : k == 1 ? 3 : -1);
		CHECK(!model.failed);
		CHECK_ERR(vnpu_core_read_model_from_memory(core, model.data, model.len, &m),
			  VNPU_PARSE_ERROR);
		pb_free(&model);
		model = (struct pb){ 0 };
		CHECK(!m);
		CHECK(strstr(vnpu_last_error(), "does not broadcast over f32[2,3,4] as opset 6"));
	}
	return 0;
}

/* An INTS attribute @name of @n values on @node (AttributeProto fields). */
static void ints_attr(struct pb *node, const char *name, const int64_t *vals, int n)
{
	struct pb attr = { 0 };

	pb_str(&attr, ATTR_NAME, name);
	pb_int(&attr, ATTR_TYPE, 7 /* INTS */);
	for (int i = 0; i < n; i++)
		pb_int(&attr, 8 /* ints */, vals[i]);
	pb_msg(node, NODE_ATTR, &attr);
	pb_free(&attr);
}

/* The 3-D convolution of conv3d_model() computed here, one output at a time. */
static float conv3d_ref(const float *x, const float *w, const float *b, const int64_t *stride,
			const int64_t *pad, const int64_t *dil, int64_t m, const int64_t *o)
{
	/* X [1,2,3,4,4], W [4,1,2,3,3], group 2 */
	int64_t c = m / 2;
	float sum = b[m];

	for (int64_t kd = 0; kd < 2; kd++)
		for (int64_t kh = 0; kh < 3; kh++)
			for (int64_t kw = 0; kw < 3; kw++) {
				int64_t id = o[0] * stride[0] - pad[0] + kd * dil[0];
				int64_t ih = o[1] * stride[1] - pad[1] + kh * dil[1];
				int64_t iw = o[2] * stride[2] - pad[2] + kw * dil[2];

				if (id < 0 || id >= 3 || ih < 0 || ih >= 4 || iw < 0 || iw >= 4)
					continue;
				sum += x[((c * 3 + id) * 4 + ih) * 4 + iw] *
				       w[((m * 2 + kd) * 3 + kh) * 3 + kw];
			}
	return sum;
}

/*
 * y = Conv(x f32[1,2,3,4,4], w f32[4,1,2,3,3] constant, b f32[4]), group
 * 2, with @stride, @pad (begin then end) and @dil per dimension.
 */
static void conv3d_model(struct pb *model, const float *w, const float *b,
			 const int64_t *stride, const int64_t *pad, const int64_t *dil)
{
	static const int64_t x_dims[5] = { 1, 2, 3, 4, 4 }, w_dims[5] = { 4, 1, 2, 3, 3 };
	static const int64_t b_dims[1] = { 4 };
	struct pb g = { 0 }, node = { 0 }, attr = { 0 };

	onnx_value(&g, GRAPH_INPUT, "x", 5, x_dims);
	onnx_init(&g, "w", ONNX_FLOAT, 5, w_dims, w, 72 * sizeof(float));
	onnx_init(&g, "b", ONNX_FLOAT, 1, b_dims, b, 4 * sizeof(float));
	pb_str(&node, NODE_INPUT, "x");
	pb_str(&node, NODE_INPUT, "w");
	pb_str(&node, NODE_INPUT, "b");
	pb_str(&node, NODE_OUTPUT, "y");
	pb_str(&node, NODE_OP, "Conv");
	ints_attr(&node, "strides", stride, 3);
	ints_attr(&node, "pads", pad, 6);
	ints_attr(&node, "dilations", dil, 3);
	pb_str(&attr, ATTR_NAME, "group");
	pb_int(&attr, ATTR_TYPE, ATTR_INT);
	pb_int(&attr, ATTR_I, 2);
	pb_msg(&node, NODE_ATTR, &attr);
	pb_msg(&g, GRAPH_NODE, &node);
	onnx_value(&g, GRAPH_OUTPUT, "y", -1, NULL);
	onnx_model(model, &g, 17);
	pb_free(&attr);
	pb_free(&node);
	pb_free(&g);
}

/*
 * 3-D convolution (built from 2-D ones by the compile): strided, padded,
 * dilated and grouped, against the test's own sums; pads so wide that an
 * output depth reads only padding are refused (not built).
 */
/*
 * GlobalAveragePool, GlobalMaxPool and GlobalLpPool (p 2) of x
 * f32[1,2,2,3,4]: one value per channel over its 24, computed here.
 */
static int global_pool_3d(vnpu_core *core, const char *device)
{
	static const char *const ops[3] = { "GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool" };
	const int64_t x_dims[5] = { 1, 2, 2, 3, 4 }, y_dims[5] = { 1, 2, 1, 1, 1 };
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	vnpu_tensor *x, *y;
	float *px, *py;

	for (int k = 0; k < 3; k++) {
		struct pb g = { 0 }, model = { 0 };

		onnx_node(&g, ops[k], (const char *[]){ "x" }, 1, "y");
		pb_str(&g, GRAPH_NAME, "global_pool_3d");
		onnx_value(&g, GRAPH_INPUT, "x", 5, x_dims);
		onnx_value(&g, GRAPH_OUTPUT, "y", 5, y_dims);
		onnx_model(&model, &g, 13);
		pb_free(&g);
		CHECK(!compile_pb(core, device, &model, &cm));
		CHECK_OK(vnpu_compiled_model_create_infer_request(cm, &req));
		CHECK_OK(vnpu_infer_request_get_tensor(req, "x", &x));
		CHECK_OK(vnpu_tensor_get_data(x, (void **)&px));
		for (int i = 0; i < 48; i++)
			px[i] = (float)((i * 7) % 11) - 5.0f;
		CHECK_OK(vnpu_infer_request_infer(req));
		CHECK_OK(vnpu_infer_request_get_tensor(req, "y", &y));
		CHECK_OK(vnpu_tensor_get_data(y, (void **)&py));
		for (int c = 0; c < 2; c++) {
			float sum = 0, max = -1e30f, sq = 0, want, got = py[c];

			for (int i = c * 24; i < c * 24 + 24; i++) {
				sum += px[i];
				max = px[i] > max ? px[i] : max;
				sq += px[i] * px[i];
			}
			/* LpPool's root compared squared: no libm here */
			want = k == 0 ? sum / 24 : k == 1 ? max : sq;
			got = k == 2 ? got * got : got;
			if (got - want > 1e-5f * (want > 1 ? want : 1) ||
			    want - got > 1e-5f * (want > 1 ? want : 1)) {
				fprintf(stderr, "%s: y[%d] = %g, want %g\n", ops[k], c, got, want);
				return 1;
			}
		}
		vnpu_tensor_free(x);
		vnpu_tensor_free(y);
		vnpu_infer_request_free(req);
		vnpu_compiled_model_free(cm);
	}
	return 0;
}

static int conv_3d(vnpu_core *core, const char *device)
{
	static const int64_t stride[3] = { 2, 1, 2 }, pad[6] = { 1, 1, 0, 1, 0, 1 };
	static const int64_t dil[3] = { 1, 2, 1 }, one[3] = { 1, 1, 1 };
	static const int64_t wide[6] = { 3, 0, 0, 0, 0, 0 };
	float x[96], w[72], b[4] = { 0.5f, -1, 2, 0 }, *p;
	vnpu_compiled_model *cm = NULL;
	vnpu_infer_request *req;
	struct pb model = { 0 };
	int64_t o[3], od = 2, oh = 1, ow = 2;
	vnpu_tensor *t;
	vnpu_status st;
	vnpu_model *m;
	vnpu_shape sh;

	for (int i = 0; i < 96; i++)
		x[i] = (float)(i % 7) - 3;
	for (int i = 0; i < 72; i++)
		w[i] = (float)(i % 5) * 0.25f - 0.5f;
	conv3d_model(&model, w, b, stride, pad, dil);
	CHECK(!compile_pb(core, device, &model, &cm));
	CHECK_OK(vnpu_compiled_model_create_infer_request(cm, &req));
	CHECK_OK(vnpu_infer_request_get_tensor(req, "x", &t));
	CHECK_OK(vnpu_tensor_get_data(t, (void **)&p));
	memcpy(p, x, sizeof(x));
	vnpu_tensor_free(t);
	CHECK_OK(vnpu_infer_request_infer(req));
	CHECK_OK(vnpu_infer_request_get_tensor(req, "y", &t));
	CHECK_OK(vnpu_tensor_get_shape(t, &sh));
	CHECK(sh.rank == 5 && sh.dims[1] == 4 && sh.dims[2] == od && sh.dims[3] == oh &&
	      sh.dims[4] == ow);
	CHECK_OK(vnpu_tensor_get_data(t, (void **)&p));
	for (int64_t m = 0; m < 4; m++)
		for (o[0] = 0; o[0] < od; o[0]++)
			for (o[1] = 0; o[1] < oh; o[1]++)
				for (o[2] = 0; o[2] < ow; o[2]++) {
					float want = conv3d_ref(x, w, b, stride, pad, dil, m, o);
					float got = p[((m * od + o[0]) * oh + o[1]) * ow + o[2]];

					if (got - want > 1e-4f || want - got > 1e-4f) {
						fprintf(stderr, "y[%lld,%lld,%lld,%lld] = %g, want %g\n",
							(long long)m, (long long)o[0], (long long)o[1],
							(long long)o[2], got, want);
						return 1;
					}
				}
	vnpu_tensor_free(t);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);

	model = (struct pb){ 0 };
	conv3d_model(&model, w, b, one, wide, one);
	CHECK(!model.failed);
	st = vnpu_core_read_model_from_memory(core, model.data, model.len, &m);
	pb_free(&model);
	CHECK_OK(st);
	cm = NULL;
	CHECK_ERR(vnpu_core_compile_model(core, m, device, NULL, &cm), VNPU_UNSUPPORTED);
	vnpu_model_free(m);
	CHECK(!cm);
	CHECK(strstr(vnpu_last_error(), "Conv node: output depth 0 reads only padding"));
	return 0;
}

/* The 3-D pools of pool3d_case(): x [1,2,3,4,5], window (2,3,2), strides (2,1,2). */
#define P3_C 2
#define P3_D 3
#define P3_H 4
#define P3_W 5
static const int64_t p3_kernel[3] = { 2, 3, 2 }, p3_stride[3] = { 2, 1, 2 };
static const int64_t p3_in[3] = { P3_D, P3_H, P3_W };

/*
 * Output @o (od, oh, ow) of channel @c of a 3-D pool of @x with leading
 * pads @pb: the max (and its index into x), the mean of the elements
 * inside, and their sum of squares (LpPool's p 2, compared squared).
 */
static void pool3d_ref(const float *x, int c, const int64_t *o, const int64_t *pb,
		       float *max, int64_t *arg, float *mean, float *sq)
{
	float sum = 0;
	int count = 0;

	*max = -1e30f;
	*sq = 0;
	for (int64_t kd = 0; kd < p3_kernel[0]; kd++)
		for (int64_t kh = 0; kh < p3_kernel[1]; kh++)
			for (int64_t kw = 0; kw < p3_kernel[2]; kw++) {
				int64_t at[3] = { kd, kh, kw }, idx = c;
				int inside = 1;

				for (int d = 0; d < 3; d++) {
					at[d] += o[d] * p3_stride[d] - pb[d];
					inside &= at[d] >= 0 && at[d] < p3_in[d];
					idx = idx * p3_in[d] + at[d];
				}
				if (!inside)
					continue;
				if (x[idx] > *max) {
					*max = x[idx];
					*arg = idx;
				}
				sum += x[idx];
				*sq += x[idx] * x[idx];
				count++;
			}
	*mean = sum / (float)count;
}

/* @op of x f32[1,2,3,4,5] with auto_pad @autopad; @indices: MaxPool's second output. */
static void pool3d_model(struct pb *model, const char *op, const char *autopad, bool indices)
{
	static const int64_t x_dims[5] = { 1, P3_C, P3_D, P3_H, P3_W };
	struct pb g = { 0 }, node = { 0 }, attr = { 0 };

	onnx_value(&g, GRAPH_INPUT, "x", 5, x_dims);
	pb_str(&node, NODE_INPUT, "x");
	pb_str(&node, NODE_OUTPUT, "y");
	if (indices)
		pb_str(&node, NODE_OUTPUT, "i");
	pb_str(&node, NODE_OP, op);
	ints_attr(&node, "kernel_shape", p3_kernel, 3);
	ints_attr(&node, "strides", p3_stride, 3);
	pb_str(&attr, ATTR_NAME, "auto_pad");
	pb_str(&attr, 4 /* s */, autopad);
	pb_int(&attr, ATTR_TYPE, 3 /* STRING */);
	pb_msg(&node, NODE_ATTR, &attr);
	pb_msg(&g, GRAPH_NODE, &node);
	onnx_value(&g, GRAPH_OUTPUT, "y", -1, NULL);
	if (indices)
		onnx_value_typed(&g, GRAPH_OUTPUT, "i", ONNX_INT64, -1, NULL);
	onnx_model(model, &g, 17);
	pb_free(&attr);
	pb_free(&node);
	pb_free(&g);
}

/* Output @got of @what at flat @i against @want (relative 1e-5). */
static int near(const char *what, int64_t i, float got, float want)
{
	float tol = 1e-5f * (want > 1 ? want : want < -1 ? -want : 1);

	if (got - want <= tol && want - got <= tol)
		return 0;
	fprintf(stderr, "%s: y[%lld] = %.9g, want %.9g\n", what, (long long)i, got, want);
	return 1;
}

/* One 3-D pool (@k: 0 max with indices, 1 average, 2 Lp) with @autopad, against pool3d_ref(). */
static int pool3d_case(vnpu_core *core, const char *device, int k, const char *autopad)
{
	static const char *const ops[3] = { "MaxPool", "AveragePool", "LpPool" };
	int64_t out[3], pb[3], o[3], n = 0;
	bool lower = !strcmp(autopad, "SAME_LOWER");
	vnpu_compiled_model *cm = NULL;
	vnpu_infer_request *req;
	struct pb model = { 0 };
	vnpu_tensor *t;
	float *x, *y;
	int64_t *ind = NULL;
	vnpu_shape sh;

	for (int d = 0; d < 3; d++) {
		int64_t total;

		out[d] = (p3_in[d] + p3_stride[d] - 1) / p3_stride[d];
		total = (out[d] - 1) * p3_stride[d] + p3_kernel[d] - p3_in[d];
		total = total < 0 ? 0 : total;
		pb[d] = lower ? total - total / 2 : total / 2;
	}
	pool3d_model(&model, ops[k], autopad, k == 0);
	CHECK(!compile_pb(core, device, &model, &cm));
	CHECK_OK(vnpu_compiled_model_create_infer_request(cm, &req));
	CHECK_OK(vnpu_infer_request_get_tensor(req, "x", &t));
	CHECK_OK(vnpu_tensor_get_data(t, (void **)&x));
	for (int i = 0; i < P3_C * P3_D * P3_H * P3_W; i++)
		x[i] = (float)((i * 37) % 101) * 0.25f - 12.0f;	/* no two equal */
	CHECK_OK(vnpu_infer_request_infer(req));
	CHECK_OK(vnpu_infer_request_get_tensor(req, "y", &t));
	CHECK_OK(vnpu_tensor_get_shape(t, &sh));
	CHECK(sh.rank == 5 && sh.dims[2] == out[0] && sh.dims[3] == out[1] && sh.dims[4] == out[2]);
	CHECK_OK(vnpu_tensor_get_data(t, (void **)&y));
	vnpu_tensor_free(t);
	if (k == 0) {
		CHECK_OK(vnpu_infer_request_get_tensor(req, "i", &t));
		CHECK_OK(vnpu_tensor_get_data(t, (void **)&ind));
		vnpu_tensor_free(t);
	}
	for (int c = 0; c < P3_C; c++)
		for (o[0] = 0; o[0] < out[0]; o[0]++)
			for (o[1] = 0; o[1] < out[1]; o[1]++)
				for (o[2] = 0; o[2] < out[2]; o[2]++, n++) {
					float max, mean, sq, want;
					int64_t arg = -1;

					pool3d_ref(x, c, o, pb, &max, &arg, &mean, &sq);
					want = k == 0 ? max : k == 1 ? mean : sq;
					CHECK(!near(ops[k], n, k == 2 ? y[n] * y[n] : y[n], want));
					if (ind && ind[n] != arg) {
						fprintf(stderr, "%s %s: i[%lld] = %lld, want %lld\n",
							ops[k], autopad, (long long)n,
							(long long)ind[n], (long long)arg);
						return 1;
					}
				}
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
	return 0;
}

/*
 * 3-D MaxPool (with Indices), AveragePool and LpPool (built from two 2-D
 * pools by the compile) with SAME_UPPER and SAME_LOWER padding against
 * the test's own windows; column-major indices are refused.
 */
static int pool_3d(vnpu_core *core, const char *device)
{
	vnpu_compiled_model *cm = NULL;
	struct pb model = { 0 }, g = { 0 }, node = { 0 }, attr = { 0 };
	static const int64_t x_dims[5] = { 1, P3_C, P3_D, P3_H, P3_W };
	vnpu_model *m;
	vnpu_status st;

	for (int k = 0; k < 3; k++) {
		CHECK(!pool3d_case(core, device, k, "SAME_UPPER"));
		CHECK(!pool3d_case(core, device, k, "SAME_LOWER"));
	}
	onnx_value(&g, GRAPH_INPUT, "x", 5, x_dims);
	pb_str(&node, NODE_INPUT, "x");
	pb_str(&node, NODE_OUTPUT, "y");
	pb_str(&node, NODE_OUTPUT, "i");
	pb_str(&node, NODE_OP, "MaxPool");
	ints_attr(&node, "kernel_shape", p3_kernel, 3);
	pb_str(&attr, ATTR_NAME, "storage_order");
	pb_int(&attr, ATTR_TYPE, ATTR_INT);
	pb_int(&attr, ATTR_I, 1);
	pb_msg(&node, NODE_ATTR, &attr);
	pb_msg(&g, GRAPH_NODE, &node);
	onnx_value(&g, GRAPH_OUTPUT, "y", -1, NULL);
	onnx_value_typed(&g, GRAPH_OUTPUT, "i", ONNX_INT64, -1, NULL);
	onnx_model(&model, &g, 17);
	pb_free(&attr);
	pb_free(&node);
	pb_free(&g);
	CHECK(!model.failed);
	st = vnpu_core_read_model_from_memory(core, model.data, model.len, &m);
	pb_free(&model);
	CHECK_OK(st);
	CHECK_ERR(vnpu_core_compile_model(core, m, device, NULL, &cm), VNPU_UNSUPPORTED);
	vnpu_model_free(m);
	CHECK(!cm);
	CHECK(strstr(vnpu_last_error(), "column-major"));
	return 0;
}

static int profiling(vnpu_core *core, const char *device)
{
	const char *on[] = { VNPU_PROP_ENABLE_PROFILING, "YES", NULL };
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	vnpu_profiling_info *info;
	uint32_t i, layers = 0;

	CHECK_OK(compile_file(core, CONV, device, on, &cm));
	CHECK_OK(vnpu_compiled_model_create_infer_request(cm, &req));
	CHECK_ERR(vnpu_infer_request_get_profiling_info(req, &info), VNPU_NOT_READY);
	CHECK_OK(vnpu_infer_request_infer(req));
	CHECK_OK(vnpu_infer_request_get_profiling_info(req, &info));
	CHECK(info->count > 6);
	for (i = 6; i < info->count; i++) {
		CHECK(info->entries[i].name && info->entries[i].node_type);
		CHECK(!strncmp(info->entries[i].exec_type, device, 3));
		if (info->entries[i].status == VNPU_PROFILING_EXECUTED) {
			CHECK(info->entries[i].real_time_ns > 0);
			layers++;
		}
	}
	CHECK(layers >= 1);
	vnpu_profiling_info_free(info);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);

	CHECK_OK(compile_file(core, CONV, device, NULL, &cm));
	CHECK_OK(vnpu_compiled_model_create_infer_request(cm, &req));
	CHECK_OK(vnpu_infer_request_infer(req));
	CHECK_ERR(vnpu_infer_request_get_profiling_info(req, &info), VNPU_UNSUPPORTED);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
	return 0;
}

static const char *const telemetry_keys[] = {
	VNPU_PROP_DEVICE_UTILIZATION, VNPU_PROP_DEVICE_BUSY_TIME_NS,
	VNPU_PROP_DEVICE_JOBS_SUBMITTED, VNPU_PROP_DEVICE_JOBS_COMPLETED,
	VNPU_PROP_DEVICE_JOBS_FAILED, VNPU_PROP_DEVICE_JOBS_TIMED_OUT,
	VNPU_PROP_DEVICE_JOBS_CANCELLED, VNPU_PROP_DEVICE_RESETS,
	VNPU_PROP_DEVICE_MEMORY_USED, VNPU_PROP_DEVICE_MEMORY_LIMIT,
	VNPU_PROP_DEVICE_BUFFERS, VNPU_PROP_DEVICE_BYTES_UPLOADED,
	VNPU_PROP_DEVICE_BYTES_DOWNLOADED, VNPU_PROP_DEVICE_CLIENTS,
};

#define NUM_TELEMETRY_KEYS (sizeof(telemetry_keys) / sizeof(telemetry_keys[0]))

/* Where @key is in the SUPPORTED_PROPERTIES @list, or -1. */
static int list_index(const vnpu_property_value *list, const char *key)
{
	uint32_t i;

	for (i = 0; i < list->count; i++) {
		if (!strcmp(list->items[i], key))
			return (int)i;
	}
	return -1;
}

/* The INT property @key of @device into @out (never negative). */
static int get_int(vnpu_core *core, const char *device, const char *key, int64_t *out)
{
	vnpu_property_value *v;

	CHECK_OK(vnpu_core_get_property(core, device, key, &v));
	CHECK(v->type == VNPU_PROPERTY_INT && v->integer >= 0);
	*out = v->integer;
	vnpu_property_value_free(v);
	return 0;
}

/* Every telemetry key on @device: listed RO, readable, not settable. */
static int telemetry_keys_ro(vnpu_core *core, const char *device)
{
	vnpu_property_value *list, as_int = { .type = VNPU_PROPERTY_INT };
	int64_t value;
	size_t k;
	int i;

	CHECK_OK(vnpu_core_get_property(core, device, VNPU_PROP_SUPPORTED_PROPERTIES, &list));
	for (k = 0; k < NUM_TELEMETRY_KEYS; k++) {
		i = list_index(list, telemetry_keys[k]);
		CHECK(i >= 0 && !list->writable[i]);
		CHECK(!get_int(core, device, telemetry_keys[k], &value));
		as_int.integer = value + 1;
		CHECK_ERR(vnpu_core_set_property(core, device, telemetry_keys[k], &as_int),
			  VNPU_INVALID_ARGUMENT);
		CHECK_ERR(vnpu_core_set_property_str(core, device, telemetry_keys[k], "0"),
			  VNPU_INVALID_ARGUMENT);
		CHECK(strstr(vnpu_last_error(), "read only"));
	}
	vnpu_property_value_free(list);
	return 0;
}

/*
 * Outside the initial network namespace the driver's netlink family (not
 * netns aware) is absent: the figures fail with a clear DEVICE_ERROR. Needs
 * CAP_SYS_ADMIN to make the namespace; says so and passes without.
 */
static int telemetry_family_absent(vnpu_core *core, const char *device)
{
	vnpu_property_value *v;
	int fd, ret = 0;

	fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	if (unshare(CLONE_NEWNET)) {
		printf("  no network namespace (%s): absent family not tried\n",
		       strerror(errno));
		close(fd);
		return 0;
	}
	if (vnpu_core_get_property(core, device, VNPU_PROP_DEVICE_MEMORY_USED, &v) !=
	    VNPU_DEVICE_ERROR || !strstr(vnpu_last_error(), "netlink family")) {
		fprintf(stderr, "no family: %s\n", vnpu_last_error());
		ret = 1;
	}
	if (setns(fd, CLONE_NEWNET)) {
		perror("setns");
		ret = 1;
	}
	close(fd);
	return ret;
}

/*
 * The device figures: on the NPU read live from the driver (jobs move with
 * inferences, a loaded model holds device memory); the CPU has none. Other
 * processes may share the device, so the figures are checked as lower
 * bounds.
 */
static int telemetry(vnpu_core *core, const char *device)
{
	enum { RUNS = 5 };
	int64_t done0, done1, sub0, sub1, busy0, busy1, used, limit, bos, clients, util;
	vnpu_property_value *list, *v;
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	size_t k;
	int i;

	if (strncmp(device, "NPU", 3)) {
		CHECK_OK(vnpu_core_get_property(core, device, VNPU_PROP_SUPPORTED_PROPERTIES,
						&list));
		for (k = 0; k < NUM_TELEMETRY_KEYS; k++) {
			CHECK(list_index(list, telemetry_keys[k]) < 0);
			CHECK_ERR(vnpu_core_get_property(core, device, telemetry_keys[k], &v),
				  VNPU_NOT_FOUND);
			CHECK_ERR(vnpu_core_set_property_str(core, device, telemetry_keys[k], "0"),
				  VNPU_NOT_FOUND);
		}
		vnpu_property_value_free(list);
		return 0;
	}
	CHECK(!telemetry_keys_ro(core, device));
	/* Not global properties. */
	CHECK_ERR(vnpu_core_get_property(core, NULL, VNPU_PROP_DEVICE_JOBS_COMPLETED, &v),
		  VNPU_NOT_FOUND);

	CHECK(!get_int(core, device, VNPU_PROP_DEVICE_JOBS_COMPLETED, &done0));
	CHECK(!get_int(core, device, VNPU_PROP_DEVICE_JOBS_SUBMITTED, &sub0));
	CHECK(!get_int(core, device, VNPU_PROP_DEVICE_BUSY_TIME_NS, &busy0));
	CHECK(!get_int(core, device, VNPU_PROP_DEVICE_CLIENTS, &clients));
	CHECK(clients >= 1);			/* this process */

	CHECK_OK(compile_file(core, ADD, device, NULL, &cm));
	CHECK(!get_int(core, device, VNPU_PROP_DEVICE_MEMORY_USED, &used));
	CHECK(!get_int(core, device, VNPU_PROP_DEVICE_MEMORY_LIMIT, &limit));
	CHECK(!get_int(core, device, VNPU_PROP_DEVICE_BUFFERS, &bos));
	CHECK(used > 0 && limit >= used && bos >= 1);

	CHECK_OK(vnpu_compiled_model_create_infer_request(cm, &req));
	for (i = 0; i < RUNS; i++)
		CHECK(!run_add(req, (float)i));
	CHECK(!get_int(core, device, VNPU_PROP_DEVICE_JOBS_COMPLETED, &done1));
	CHECK(!get_int(core, device, VNPU_PROP_DEVICE_JOBS_SUBMITTED, &sub1));
	CHECK(!get_int(core, device, VNPU_PROP_DEVICE_BUSY_TIME_NS, &busy1));
	CHECK(!get_int(core, device, VNPU_PROP_DEVICE_UTILIZATION, &util));
	printf("  %s: %lld jobs completed by %d inferences, busy +%lld ns, "
	       "%lld bytes used of %lld, %lld%% busy\n", device, (long long)(done1 - done0),
	       RUNS, (long long)(busy1 - busy0), (long long)used, (long long)limit,
	       (long long)util);
	CHECK(done1 - done0 >= RUNS && sub1 - sub0 >= RUNS);
	CHECK(busy1 > busy0);
	CHECK(util <= 100);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
	return telemetry_family_absent(core, device);
}

struct thread_arg {
	vnpu_compiled_model *cm;
	float base;
	int failed;
};

static void *thread_main(void *p)
{
	struct thread_arg *a = p;
	vnpu_infer_request *req;
	int i;

	if (vnpu_compiled_model_create_infer_request(a->cm, &req) != VNPU_OK) {
		a->failed = 1;
		return NULL;
	}
	for (i = 0; i < 20 && !a->failed; i++)
		a->failed = run_add(req, a->base + (float)i);
	vnpu_infer_request_free(req);
	return NULL;
}

static int three_threads(vnpu_core *core, const char *device)
{
	struct thread_arg args[3];
	pthread_t threads[3];
	vnpu_compiled_model *cm;
	int i;

	CHECK_OK(compile_file(core, ADD, device, NULL, &cm));
	for (i = 0; i < 3; i++) {
		args[i] = (struct thread_arg){ cm, (float)(100 * i), 0 };
		CHECK(!pthread_create(&threads[i], NULL, thread_main, &args[i]));
	}
	for (i = 0; i < 3; i++) {
		pthread_join(threads[i], NULL);
		CHECK(!args[i].failed);
	}
	vnpu_compiled_model_free(cm);
	return 0;
}

static int lifetime_orders(vnpu_core *unused, const char *device)
{
	static const int orders[6][3] = {
		{ 0, 1, 2 }, { 0, 2, 1 }, { 1, 0, 2 }, { 1, 2, 0 }, { 2, 0, 1 }, { 2, 1, 0 },
	};
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	vnpu_core *core;
	int o, k;

	(void)unused;
	for (o = 0; o < 6; o++) {
		CHECK_OK(vnpu_core_create(&core));
		CHECK_OK(compile_file(core, ADD, device, NULL, &cm));
		CHECK_OK(vnpu_compiled_model_create_infer_request(cm, &req));
		for (k = 0; k < 3; k++) {
			switch (orders[o][k]) {
			case 0: vnpu_core_free(core); break;
			case 1: vnpu_compiled_model_free(cm); break;
			case 2:
				CHECK(!run_add(req, 1));
				vnpu_infer_request_free(req);
				break;
			}
		}
	}
	return 0;
}

static int read_file(const char *path, unsigned char **data, size_t *size)
{
	FILE *f = fopen(path, "rb");
	long n;

	CHECK(f);
	CHECK(!fseek(f, 0, SEEK_END));
	n = ftell(f);
	rewind(f);
	*data = malloc((size_t)n);
	CHECK(*data && fread(*data, 1, (size_t)n, f) == (size_t)n);
	fclose(f);
	*size = (size_t)n;
	return 0;
}

/* Truncated and bit-flipped models and an unknown op: errors, never a crash. */
static int malformed_models(vnpu_core *core, const char *device)
{
	vnpu_compiled_model *cm;
	unsigned char *data;
	vnpu_model *m;
	size_t size, i;
	char *op;

	CHECK(!read_file(CONV, &data, &size));
	for (i = 0; i < size; i++) {
		if (vnpu_core_read_model_from_memory(core, data, i, &m) == VNPU_OK) {
			/* a prefix can be a valid protobuf: it must still compile or fail */
			if (vnpu_core_compile_model(core, m, device, NULL, &cm) == VNPU_OK)
				vnpu_compiled_model_free(cm);
			vnpu_model_free(m);
		} else {
			CHECK(vnpu_last_error()[0]);
		}
	}
	for (i = 0; i < size; i++) {
		data[i] ^= 0x5a;
		if (vnpu_core_read_model_from_memory(core, data, size, &m) == VNPU_OK) {
			if (vnpu_core_compile_model(core, m, device, NULL, &cm) == VNPU_OK)
				vnpu_compiled_model_free(cm);
			vnpu_model_free(m);
		}
		data[i] ^= 0x5a;
	}
	op = memmem(data, size, "Conv", 4);
	CHECK(op);
	memcpy(op, "Cnnv", 4);
	if (vnpu_core_read_model_from_memory(core, data, size, &m) == VNPU_OK) {
		CHECK(vnpu_core_compile_model(core, m, device, NULL, &cm) != VNPU_OK);
		CHECK(strstr(vnpu_last_error(), "Cnnv"));
		vnpu_model_free(m);
	}
	free(data);
	return 0;
}

/*
 * A node without its first output (none at all, or an empty name) is
 * refused by the reader: the compiler lowered such a dead node with
 * output value -1 (found by fuzz-onnx: a heap read before the table of
 * values under ASan).
 */
static int node_without_output(vnpu_core *core, const char *device)
{
	static const char *const names[] = { NULL, "" };
	const int64_t dims[2] = { 2, 3 };
	struct pb model = { 0 }, g = { 0 }, n = { 0 };
	vnpu_compiled_model *cm = NULL;
	vnpu_status st;
	vnpu_model *m;

	for (int k = 0; k < 2; k++) {
		pb_str(&n, NODE_INPUT, "x");
		if (names[k])
			pb_str(&n, NODE_OUTPUT, names[k]);
		pb_str(&n, NODE_OP, "Tanh");
		pb_msg(&g, GRAPH_NODE, &n);
		onnx_value(&g, GRAPH_INPUT, "x", 2, dims);
		onnx_value(&g, GRAPH_OUTPUT, "x", 2, dims);
		onnx_model(&model, &g, 13);
		CHECK(!model.failed);
		st = vnpu_core_read_model_from_memory(core, model.data, model.len, &m);
		pb_free(&model);
		model = (struct pb){ 0 };
		if (st == VNPU_OK) {	/* never: but then it must not compile either */
			CHECK(vnpu_core_compile_model(core, m, device, NULL, &cm) != VNPU_OK);
			vnpu_model_free(m);
		}
		CHECK_ERR(st, VNPU_PARSE_ERROR);
		CHECK(strstr(vnpu_last_error(), "no first output"));
	}
	pb_free(&g);
	pb_free(&n);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct test tests[] = {
		TEST(node_without_output),
		TEST(compile_and_run),
		TEST(compile_errors),
		TEST(query),
		TEST(hetero_fallback),
		TEST(export_import),
		TEST(cache_dir),
		TEST(io_tensors),
		TEST(reshape_fixed_dims),
		TEST(reshape_hostile),
		TEST(castlike_reshaped_like),
		TEST(fault_names_layer),
		TEST(if_lazy_branches),
		TEST(rnn_empty_batch),
		TEST(empty_and_scalar_layers),
		TEST(reshape_statuses),
		TEST(compile_late_reshape),
		TEST(shape_limits_alike),
		TEST(freeze_statuses),
		TEST(reshape_sequence_statuses),
		TEST(freeze_dynamic_input),
		TEST(shape_deciding_inputs),
		TEST(legacy_broadcast),
		TEST(conv_3d),
		TEST(global_pool_3d),
		TEST(pool_3d),
		TEST(profiling),
		TEST(telemetry),
		TEST(three_threads),
		TEST(lifetime_orders),
		TEST(malformed_models),
	};

	if (access(ADD, R_OK) || access(CONV, R_OK) || access(F64, R_OK) ||
	    access(CASTLIKE, R_OK)) {
		printf("skip: libonnx-testdata is not installed\n");
		return 77;
	}
	return run_tests(argc, argv, tests, sizeof(tests) / sizeof(tests[0]));
}

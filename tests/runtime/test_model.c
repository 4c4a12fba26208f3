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
#include <inttypes.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime_test.h"
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
static int compile_pb(struct __test_metadata *_metadata, vnpu_core *core, const char *device,
		      struct pb *model,
		      vnpu_compiled_model **cm)
{
	vnpu_model *m;
	vnpu_status st;

	ASSERT_TRUE(!model->failed);
	st = vnpu_core_read_model_from_memory(core, model->data, model->len, &m);
	pb_free(model);
	ASSERT_EQ(VNPU_OK, st);
	st = vnpu_core_compile_model(core, m, device, NULL, cm);
	vnpu_model_free(m);
	ASSERT_EQ(VNPU_OK, st);
	return 0;
}

/* x = i * 0.5 + base, y = 1 - i: sum must be i * -0.5 + base + 1. */
static int run_add(struct __test_metadata *_metadata, vnpu_infer_request *req, float base)
{
	vnpu_tensor *x, *y, *sum;
	float *px, *py, *ps;
	int i, ret = 0;

	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_tensor(req, "x", &x));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_tensor(req, "y", &y));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(x, (void **)&px));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(y, (void **)&py));
	for (i = 0; i < 60; i++) {
		px[i] = (float)i * 0.5f + base;
		py[i] = 1.0f - (float)i;
	}
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_infer(req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_tensor(req, "sum", &sum));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(sum, (void **)&ps));
	for (i = 0; i < 60 && !ret; i++) {
		if (ps[i] != (float)i * -0.5f + base + 1.0f) {
			TH_LOG("sum[%d] = %g", i, ps[i]);
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

TEST_F(dev, compile_and_run)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	vnpu_property_value *v;
	uint32_t n;
	vnpu_port port;

	ASSERT_EQ(VNPU_OK, compile_file(core, ADD, device, NULL, &cm));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_get_num_inputs(cm, &n));
	ASSERT_EQ(2, n);
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_get_output(cm, 0, &port));
	ASSERT_TRUE(!strcmp(port.name, "sum") && port.shape.rank == 3 && port.shape.dims[2] == 5);
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_get_property(cm, VNPU_PROP_EXECUTION_DEVICES, &v));
	ASSERT_EQ(1, v->count);
	vnpu_property_value_free(v);
	ASSERT_EQ(VNPU_OK,
		  vnpu_compiled_model_get_property(cm, VNPU_PROP_OPTIMAL_NUMBER_OF_INFER_REQUESTS,
						   &v));
	ASSERT_GE(v->integer, 1);
	vnpu_property_value_free(v);
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	ASSERT_EQ(0, run_add(_metadata, req, 3));
	ASSERT_EQ(0, run_add(_metadata, req, -7));
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
}

TEST_F(dev, compile_errors)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	const char *bad_key[] = { "NO_SUCH_KEY", "1", NULL };
	const char *bad_value[] = { VNPU_PROP_ENABLE_PROFILING, "sometimes", NULL };
	const char *no_value[] = { VNPU_PROP_ENABLE_PROFILING, NULL };
	const char *read_only[] = { VNPU_PROP_FULL_DEVICE_NAME, "x", NULL };
	const char *good[] = { VNPU_PROP_PERFORMANCE_HINT, "THROUGHPUT",
			       VNPU_PROP_PERFORMANCE_HINT_NUM_REQUESTS, "3", NULL };
	vnpu_compiled_model *cm = NULL;
	vnpu_property_value *v;
	vnpu_model *m;

	ASSERT_EQ(VNPU_OK, vnpu_core_read_model(core, ADD, &m));
	ASSERT_FAILS(VNPU_NOT_FOUND, vnpu_core_compile_model(core, m, "GPU", NULL, &cm));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_core_compile_model(core, m, "HETERO:", NULL, &cm));
	ASSERT_FAILS(VNPU_NOT_FOUND, vnpu_core_compile_model(core, m, "HETERO:GPU,CPU", NULL, &cm));
	ASSERT_FAILS(VNPU_UNSUPPORTED,
		     vnpu_core_compile_model(core, m, "HETERO:CPU,CPU,CPU", NULL, &cm));
	ASSERT_FAILS(VNPU_NOT_FOUND, vnpu_core_compile_model(core, m, device, bad_key, &cm));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_core_compile_model(core, m, device, bad_value, &cm));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_core_compile_model(core, m, device, no_value,
								    &cm));
	ASSERT_FAILS(VNPU_NOT_FOUND, vnpu_core_compile_model(core, m, device, read_only, &cm));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_core_compile_model(NULL, m, device, NULL, &cm));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_core_compile_model(core, m, NULL, NULL, &cm));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_core_compile_model(core, m, device, NULL, NULL));
	ASSERT_EQ(NULL, cm);
	ASSERT_EQ(VNPU_OK, vnpu_core_compile_model(core, m, device, good, &cm));
	/* the compiled model keeps no reference to the model */
	vnpu_model_free(m);
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_get_property(cm, VNPU_PROP_PERFORMANCE_HINT, &v));
	ASSERT_STREQ("THROUGHPUT", v->text);
	vnpu_property_value_free(v);
	ASSERT_EQ(VNPU_OK,
		  vnpu_compiled_model_get_property(cm, VNPU_PROP_OPTIMAL_NUMBER_OF_INFER_REQUESTS,
						   &v));
	ASSERT_EQ(3, v->integer);
	vnpu_property_value_free(v);
	vnpu_compiled_model_free(cm);
}

TEST_F(dev, query)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	vnpu_query_report *r;
	vnpu_model *m;
	size_t n;

	ASSERT_EQ(VNPU_OK, vnpu_core_read_model(core, CONV, &m));
	ASSERT_EQ(VNPU_OK, vnpu_model_get_ops_size(m, &n));
	ASSERT_EQ(VNPU_OK, vnpu_core_query_model(core, m, device, &r));
	ASSERT_TRUE(r->count == n && n >= 1);
	ASSERT_STREQ("Conv", r->entries[0].op_type);
	ASSERT_TRUE(r->entries[0].device && !strncmp(r->entries[0].device, device, 3));
	vnpu_query_report_free(r);
	ASSERT_FAILS(VNPU_NOT_FOUND, vnpu_core_query_model(core, m, "GPU", &r));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_core_query_model(core, m, device, NULL));
	vnpu_model_free(m);
}

/* f64 nodes: the NPU does not take them, HETERO and AUTO run them on the CPU. */
TEST_F(dev, hetero_fallback)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
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
	ASSERT_EQ(VNPU_OK, vnpu_core_read_model(core, F64, &m));
	ASSERT_EQ(VNPU_OK, vnpu_core_query_model(core, m, hetero, &r));
	ASSERT_TRUE(r->count == 1 && r->entries[0].device);
	ASSERT_STREQ(npu ? "CPU" : device, r->entries[0].device);
	vnpu_query_report_free(r);
	if (npu) {
		ASSERT_FAILS(VNPU_UNSUPPORTED, vnpu_core_compile_model(core, m, device, NULL, &cm));
		ASSERT_NE(VNPU_OK, vnpu_core_compile_model(core, m, hetero, strict, &cm));
	}
	ASSERT_EQ(VNPU_OK, vnpu_core_compile_model(core, m, hetero, NULL, &cm));
	vnpu_model_free(m);
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_get_property(cm, VNPU_PROP_EXECUTION_DEVICES, &v));
	ASSERT_STREQ(npu ? "CPU" : device, v->items[v->count - 1]);
	vnpu_property_value_free(v);
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_input_tensor(req, 0, &in));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(in, (void **)&pin));
	pin[0] = 1.5;
	pin[1] = -2.25;
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_infer(req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_output_tensor(req, 0, &out));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(out, (void **)&pout));
	ASSERT_TRUE(pout[0] == 1.5f && pout[1] == -2.25f);
	vnpu_tensor_free(in);
	vnpu_tensor_free(out);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);

	ASSERT_EQ(VNPU_OK, compile_file(core, ADD, "AUTO", NULL, &cm));
	vnpu_compiled_model_free(cm);
	ASSERT_EQ(VNPU_OK, compile_file(core, ADD, hetero, NULL, &cm));
	vnpu_compiled_model_free(cm);
}

TEST_F(dev, export_import)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	const char *props[] = { VNPU_PROP_ENABLE_PROFILING, "YES", NULL };
	vnpu_compiled_model *cm, *cm2;
	vnpu_infer_request *req;
	vnpu_property_value *v;
	unsigned char *blob;
	size_t size;

	ASSERT_EQ(VNPU_OK, compile_file(core, CONV, device, props, &cm));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_export(cm, (void **)&blob, &size));
	vnpu_compiled_model_free(cm);
	ASSERT_EQ(VNPU_OK, vnpu_core_import_model(core, blob, size, NULL, &cm2));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_get_property(cm2, VNPU_PROP_ENABLE_PROFILING, &v));
	ASSERT_EQ(1, v->integer);
	vnpu_property_value_free(v);
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm2, &req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_infer(req));
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm2);
	ASSERT_FAILS(VNPU_PARSE_ERROR, vnpu_core_import_model(core, blob, size / 2, NULL, &cm2));
	blob[size / 2] ^= 1;
	ASSERT_FAILS(VNPU_PARSE_ERROR, vnpu_core_import_model(core, blob, size, NULL, &cm2));
	vnpu_free(blob);
}

TEST_F(dev, cache_dir)
{
	const char *device = self->device;
	char dir[] = "/tmp/vnpu-cache-XXXXXX", path[256];
	const char *props[] = { VNPU_PROP_CACHE_DIR, dir, NULL };
	const char *other[] = { VNPU_PROP_CACHE_DIR, dir, VNPU_PROP_ENABLE_PROFILING, "YES",
				NULL };
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	vnpu_property_value *v;
	vnpu_core *core;
	int round;

	ASSERT_NE(NULL, mkdtemp(dir));
	ASSERT_EQ(VNPU_OK, vnpu_core_create(&core));
	for (round = 0; round < 3; round++) {
		/* miss, hit, then a miss for other properties */
		ASSERT_EQ(VNPU_OK, compile_file(core, ADD, device, round < 2 ? props : other, &cm));
		ASSERT_EQ(VNPU_OK,
			  vnpu_compiled_model_get_property(cm, VNPU_PROP_LOADED_FROM_CACHE, &v));
		ASSERT_EQ((round == 1), v->integer);
		vnpu_property_value_free(v);
		ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
		ASSERT_EQ(0, run_add(_metadata, req, (float)round));
		vnpu_infer_request_free(req);
		vnpu_compiled_model_free(cm);
	}
	/* the global CACHE_DIR works the same; a corrupted entry is a miss */
	ASSERT_EQ(VNPU_OK, vnpu_core_set_property_str(core, NULL, VNPU_PROP_CACHE_DIR, dir));
	ASSERT_EQ(VNPU_OK, compile_file(core, ADD, device, NULL, &cm));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_get_property(cm, VNPU_PROP_LOADED_FROM_CACHE, &v));
	ASSERT_EQ(1, v->integer);
	vnpu_property_value_free(v);
	vnpu_compiled_model_free(cm);
	snprintf(path, sizeof(path), "rm -f %s/*.vnpublob.tmp.* ; for f in %s/*.vnpublob; do "
		 "printf X | dd of=$f bs=1 seek=300 conv=notrunc 2>/dev/null; done", dir, dir);
	ASSERT_EQ(0, system(path));
	ASSERT_EQ(VNPU_OK, vnpu_core_set_property_str(core, NULL, VNPU_PROP_LOG_LEVEL, "NONE"));
	ASSERT_EQ(VNPU_OK, compile_file(core, ADD, device, NULL, &cm));
	ASSERT_EQ(VNPU_OK, vnpu_core_set_property_str(core, NULL, VNPU_PROP_LOG_LEVEL, "WARNING"));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_get_property(cm, VNPU_PROP_LOADED_FROM_CACHE, &v));
	ASSERT_EQ(0, v->integer);
	vnpu_property_value_free(v);
	vnpu_compiled_model_free(cm);
	vnpu_core_free(core);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	ASSERT_EQ(0, system(path));
}

/* Host tensors of other types: converted in, converted out. */
TEST_F(dev, io_tensors)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
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
	ASSERT_EQ(VNPU_OK, compile_file(core, ADD, device, NULL, &cm));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_create_from_ptr(VNPU_TYPE_I32, &s, x, &tx));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_create_from_ptr(VNPU_TYPE_I32, &s, y, &ty));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_create_from_ptr(VNPU_TYPE_I64, &s, sum, &ts));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_create(VNPU_TYPE_F32, &wrong, &bad));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_tensor(req, "x", tx));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_input_tensor(req, 1, ty));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_output_tensor(req, 0, ts));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_infer_request_set_tensor(req, "x", bad));
	ASSERT_FAILS(VNPU_NOT_FOUND, vnpu_infer_request_set_tensor(req, "z", tx));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_tensor(req, "x", &got));
	ASSERT_EQ(tx, got);
	vnpu_tensor_free(got);
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_tensor(req, "sum", &got));
	ASSERT_EQ(ts, got);
	vnpu_tensor_free(got);
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_infer(req));
	for (i = 0; i < 60; i++) {
		ASSERT_TRUE(sum[i] == -i && x[i] == i && y[i] == -2 * i);
	}
	vnpu_tensor_free(tx);
	vnpu_tensor_free(ty);
	vnpu_tensor_free(ts);
	vnpu_tensor_free(bad);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
}

/* Run the compiled Add on x, y of @shape (@n elements): sum = x + y. */
static int run_add_shaped(struct __test_metadata *_metadata, vnpu_compiled_model *cm,
			  const vnpu_shape *shape, int n)
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
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_create_from_ptr(VNPU_TYPE_F32, &wrong, x, &tx));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_infer_request_set_tensor(req, "x", tx));
	vnpu_tensor_free(tx);
	ASSERT_EQ(VNPU_OK, vnpu_tensor_create_from_ptr(VNPU_TYPE_F32, shape, x, &tx));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_create_from_ptr(VNPU_TYPE_F32, shape, y, &ty));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_tensor(req, "x", tx));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_tensor(req, "y", ty));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_infer(req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_tensor(req, "sum", &ts));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(ts, (void **)&sum));
	for (i = 0; i < n; i++) {
		ASSERT_EQ(1.5f * (float)i, sum[i]);
	}
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
TEST_F(dev, reshape_fixed_dims)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	const vnpu_shape refused = { 2, { 2, 5 } }, shape = { 2, { 4, 5 } };
	vnpu_compiled_model *cm;
	vnpu_shape got;
	vnpu_model *m;

	ASSERT_EQ(VNPU_OK, vnpu_core_read_model(core, ADD, &m));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_model_reshape(m, "x", &refused));
	ASSERT_NE(NULL, strstr(vnpu_last_error(), "reshape 'x'"));
	ASSERT_EQ(VNPU_OK, vnpu_model_output_shape(m, 0, &got));
	ASSERT_TRUE(got.rank == 3 && got.dims[0] == 3);
	ASSERT_EQ(VNPU_OK, vnpu_model_reshape(m, "x", &shape));
	ASSERT_EQ(VNPU_OK, vnpu_model_reshape(m, "y", &shape));
	ASSERT_EQ(VNPU_OK, vnpu_model_output_shape(m, 0, &got));
	ASSERT_TRUE(got.rank == 2 && got.dims[0] == 4 && got.dims[1] == 5);
	ASSERT_EQ(VNPU_OK, vnpu_core_compile_model(core, m, device, NULL, &cm));
	vnpu_model_free(m);
	ASSERT_EQ(0, run_add_shaped(_metadata, cm, &shape, 20));
	vnpu_compiled_model_free(cm);
}

/*
 * Hostile reshapes through the public API, each refused with a status and
 * a message and the model left usable: NULLs, unknown names, an output, a
 * rank above VNPU_MAX_RANK, an element count past 2^40 (or 64 bits), a
 * shape Add cannot broadcast. A compiled model keeps the shape it was
 * compiled with when the model is reshaped afterwards; a frozen input is
 * no longer one.
 */
TEST_F(dev, reshape_hostile)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	const vnpu_shape four_five = { 2, { 4, 5 } }, two_ten = { 2, { 2, 10 } };
	const vnpu_shape scalar = { .rank = 0 }, deep = { .rank = VNPU_MAX_RANK + 1 };
	const vnpu_shape huge = { 2, { 1ll << 62, 4 } }, wide = { 3, { 1ll << 40, 1ll << 40, 1 } };
	const vnpu_shape unbroadcast = { 2, { 2, 5 } };
	vnpu_compiled_model *cm, *cm2;
	float zeros[20] = { 0 };
	vnpu_shape got;
	vnpu_model *m;

	ASSERT_EQ(VNPU_OK, vnpu_core_read_model(core, ADD, &m));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_model_reshape(NULL, "x", &four_five));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_model_reshape(m, NULL, &four_five));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_model_reshape(m, "x", NULL));
	ASSERT_FAILS(VNPU_NOT_FOUND, vnpu_model_reshape(m, "nope", &four_five));
	ASSERT_NE(NULL, strstr(vnpu_last_error(), "'nope'"));
	ASSERT_FAILS(VNPU_NOT_FOUND, vnpu_model_reshape(m, "sum", &four_five));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_model_reshape(m, "x", &deep));
	ASSERT_NE(NULL, strstr(vnpu_last_error(), "rank"));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_model_reshape(m, "x", &huge));
	ASSERT_NE(NULL, strstr(vnpu_last_error(), "reshape 'x'"));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_model_reshape(m, "x", &wide));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_model_reshape(m, "x", &unbroadcast));
	ASSERT_NE(NULL, strstr(vnpu_last_error(), "Add"));
	ASSERT_EQ(VNPU_OK, vnpu_model_input_shape(m, 0, &got));
	ASSERT_TRUE(got.rank == 3 && got.dims[0] == 3 && got.dims[1] == 4 && got.dims[2] == 5);
	/* A scalar x broadcasts against y. */
	ASSERT_EQ(VNPU_OK, vnpu_model_reshape(m, "x", &scalar));
	ASSERT_EQ(VNPU_OK, vnpu_model_output_shape(m, 0, &got));
	ASSERT_TRUE(got.rank == 3 && got.dims[2] == 5);
	ASSERT_EQ(VNPU_OK, vnpu_model_reshape(m, "x", &four_five));
	ASSERT_EQ(VNPU_OK, vnpu_model_reshape(m, "y", &four_five));
	ASSERT_EQ(VNPU_OK, vnpu_core_compile_model(core, m, device, NULL, &cm));
	/*
	 * Reshaped after a compile: cm keeps [4,5], a new compile takes [2,10]
	 * (one input at a time: x becomes a scalar on the way).
	 */
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_model_reshape(m, "x", &two_ten));
	ASSERT_EQ(VNPU_OK, vnpu_model_reshape(m, "x", &scalar));
	ASSERT_EQ(VNPU_OK, vnpu_model_reshape(m, "y", &two_ten));
	ASSERT_EQ(VNPU_OK, vnpu_model_reshape(m, "x", &two_ten));
	ASSERT_EQ(VNPU_OK, vnpu_core_compile_model(core, m, device, NULL, &cm2));
	ASSERT_EQ(0, run_add_shaped(_metadata, cm, &four_five, 20));
	ASSERT_EQ(0, run_add_shaped(_metadata, cm2, &two_ten, 20));
	vnpu_compiled_model_free(cm);
	vnpu_compiled_model_free(cm2);
	/* Frozen, 'y' is no input any more. */
	ASSERT_EQ(VNPU_OK,
		  vnpu_model_freeze_input(m, "y", VNPU_TYPE_F32, &two_ten, zeros, sizeof(zeros)));
	ASSERT_FAILS(VNPU_NOT_FOUND, vnpu_model_reshape(m, "y", &two_ten));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_model_reshape(m, "x", &four_five));
	ASSERT_EQ(VNPU_OK, vnpu_model_reshape(m, "x", &two_ten));
	ASSERT_EQ(VNPU_OK, vnpu_core_compile_model(core, m, device, NULL, &cm));
	vnpu_compiled_model_free(cm);
	vnpu_model_free(m);
}

/*
 * Compile @m, run it once (inputs as the request makes them, zero), and
 * check that output @name has shape @want; its data, when @data is given,
 * is copied there (at most @max floats).
 */
static int run_output(struct __test_metadata *_metadata, vnpu_core *core, const char *device,
		      const vnpu_model *m,
		      const char *name, const vnpu_shape *want, float *data, size_t max)
{
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	vnpu_tensor *t;
	vnpu_shape got;
	size_t bytes, elems = 1;
	void *p;

	ASSERT_EQ(VNPU_OK, vnpu_core_compile_model(core, m, device, NULL, &cm));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_infer(req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_tensor(req, name, &t));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_shape(t, &got));
	ASSERT_EQ(want->rank, got.rank);
	for (uint32_t d = 0; d < got.rank; d++) {
		ASSERT_EQ(want->dims[d], got.dims[d]);
		elems *= (size_t)got.dims[d];
	}
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_byte_size(t, &bytes));
	ASSERT_EQ(elems * sizeof(float), bytes);
	if (data) {
		ASSERT_LE(elems, max);
		ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(t, &p));
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
TEST_F(dev, rnn_empty_batch)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	const vnpu_shape gru_x = { 3, { 1, 0, 2 } }, gru_yh = { 3, { 1, 0, 5 } };
	const vnpu_shape lstm_x = { 3, { 0, 7, 2 } }, lstm_y = { 4, { 0, 7, 1, 7 } };
	const vnpu_shape lstm_yh = { 3, { 0, 1, 7 } };
	const vnpu_shape no_steps = { 3, { 0, 3, 2 } }, yh3 = { 3, { 1, 3, 5 } };
	const vnpu_shape one_step = { 3, { 1, 3, 2 } };
	float yh[15];
	vnpu_model *m;

	ASSERT_EQ(VNPU_OK, vnpu_core_read_model(core, NODE_DIR "test_gru_defaults/model.onnx", &m));
	ASSERT_EQ(VNPU_OK, vnpu_model_reshape(m, "X", &gru_x));
	ASSERT_EQ(0, run_output(_metadata, core, device, m, "Y_h", &gru_yh, NULL, 0));
	ASSERT_EQ(VNPU_OK, vnpu_model_reshape(m, "X", &no_steps));
	memset(yh, 0xff, sizeof(yh));
	ASSERT_EQ(0, run_output(_metadata, core, device, m, "Y_h", &yh3, yh, 15));
	for (int i = 0; i < 15; i++) {
		ASSERT_EQ(0.0f, yh[i]);
	}
	ASSERT_EQ(VNPU_OK, vnpu_model_reshape(m, "X", &one_step));
	memset(yh, 0xff, sizeof(yh));
	ASSERT_EQ(0, run_output(_metadata, core, device, m, "Y_h", &yh3, yh, 15));
	for (int i = 0; i < 15; i++) {
		ASSERT_EQ(0.0f, yh[i]);
	}
	vnpu_model_free(m);

	ASSERT_EQ(VNPU_OK,
		  vnpu_core_read_model(core, NODE_DIR "test_lstm_batchwise/model.onnx", &m));
	ASSERT_EQ(VNPU_OK, vnpu_model_reshape(m, "X", &lstm_x));
	ASSERT_EQ(0, run_output(_metadata, core, device, m, "Y", &lstm_y, NULL, 0));
	ASSERT_EQ(0, run_output(_metadata, core, device, m, "Y_h", &lstm_yh, NULL, 0));
	vnpu_model_free(m);
}

/*
 * Layers the engine does not take, lowered without them: the determinant
 * of 0 x 0 matrices is 1, ReduceSumSquare of a scalar its square, and
 * ConvTranspose of an input without elements (no B) zeros.
 */
TEST_F(dev, empty_and_scalar_layers)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	const vnpu_shape none = { 2, { 0, 0 } }, batch_none = { 3, { 3, 0, 0 } };
	const vnpu_shape scalar = { 0 }, three = { 1, { 3 } };
	const vnpu_shape no_x = { 4, { 1, 1, 3, 0 } }, y = { 4, { 1, 2, 10, 8 } };
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	vnpu_tensor *t;
	float out[160], *p;
	vnpu_model *m;

	ASSERT_EQ(VNPU_OK, vnpu_core_read_model(core, NODE_DIR "test_det_nd/model.onnx", &m));
	ASSERT_EQ(VNPU_OK, vnpu_model_reshape(m, "x", &none));
	ASSERT_EQ(0, run_output(_metadata, core, device, m, "y", &scalar, out, 1));
	ASSERT_EQ(1.0f, out[0]);
	ASSERT_EQ(VNPU_OK, vnpu_model_reshape(m, "x", &batch_none));
	ASSERT_EQ(0, run_output(_metadata, core, device, m, "y", &three, out, 3));
	ASSERT_TRUE(out[0] == 1.0f && out[1] == 1.0f && out[2] == 1.0f);
	vnpu_model_free(m);

	ASSERT_EQ(VNPU_OK,
		  vnpu_core_read_model(core,
				       NODE_DIR "test_reduce_sum_square_default_axes_keepdims_example/model.onnx", &m));
	ASSERT_EQ(VNPU_OK, vnpu_model_reshape(m, "data", &scalar));
	ASSERT_EQ(VNPU_OK, vnpu_core_compile_model(core, m, device, NULL, &cm));
	vnpu_model_free(m);
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_tensor(req, "data", &t));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(t, (void **)&p));
	*p = -3.0f;
	vnpu_tensor_free(t);
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_infer(req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_tensor(req, "reduced", &t));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(t, (void **)&p));
	ASSERT_EQ(9.0f, *p);
	vnpu_tensor_free(t);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);

	ASSERT_EQ(VNPU_OK,
		  vnpu_core_read_model(core, NODE_DIR "test_convtranspose_kernel_shape/model.onnx",
				       &m));
	ASSERT_EQ(VNPU_OK, vnpu_model_reshape(m, "X", &no_x));
	memset(out, 0xff, sizeof(out));
	ASSERT_EQ(0, run_output(_metadata, core, device, m, "Y", &y, out, 160));
	for (int i = 0; i < 160; i++) {
		ASSERT_EQ(0.0f, out[i]);
	}
	vnpu_model_free(m);
}

/*
 * vnpu_model_reshape()'s two refusals of a shape a node does not take:
 * VNPU_UNSUPPORTED past a device limit (an RNN of 65537 steps; 65536 are
 * taken), VNPU_INVALID_ARGUMENT for a shape the op does not define (X of
 * rank 2); either leaves the model as it was. 2^31 in a layer's dimension
 * is the compile's refusal, VNPU_UNSUPPORTED too.
 */
TEST_F(dev, reshape_statuses)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	const vnpu_shape steps_max = { 3, { 3, 65536, 2 } }, steps_over = { 3, { 3, 65537, 2 } };
	const vnpu_shape flat = { 2, { 3, 2 } }, wide = { 1, { (1ll << 31) + 1 } };
	vnpu_compiled_model *cm;
	vnpu_shape in, out;
	vnpu_model *m;

	ASSERT_EQ(VNPU_OK,
		  vnpu_core_read_model(core, NODE_DIR "test_simple_rnn_batchwise/model.onnx", &m));
	ASSERT_FAILS(VNPU_UNSUPPORTED, vnpu_model_reshape(m, "X", &steps_over));
	ASSERT_NE(NULL, strstr(vnpu_last_error(), "RNN node: a sequence of 65537 steps"));
	ASSERT_EQ(VNPU_OK, vnpu_model_input_shape(m, 0, &in));
	ASSERT_TRUE(in.rank == 3 && in.dims[0] == 3 && in.dims[1] == 1 && in.dims[2] == 2);
	ASSERT_EQ(VNPU_OK, vnpu_model_output_shape(m, 0, &out));
	ASSERT_TRUE(out.rank == 4 && out.dims[1] == 1);
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_model_reshape(m, "X", &flat));
	ASSERT_NE(NULL, strstr(vnpu_last_error(), "RNN node: X and W must have rank 3"));
	ASSERT_EQ(VNPU_OK, vnpu_model_reshape(m, "X", &steps_max));
	ASSERT_EQ(VNPU_OK, vnpu_model_output_shape(m, 0, &out));
	ASSERT_TRUE(out.rank == 4 && out.dims[1] == 65536);
	vnpu_model_free(m);

	ASSERT_EQ(VNPU_OK, vnpu_core_read_model(core, NODE_DIR "test_neg_example/model.onnx", &m));
	ASSERT_EQ(VNPU_OK, vnpu_model_reshape(m, "x", &wide));
	ASSERT_FAILS(VNPU_UNSUPPORTED, vnpu_core_compile_model(core, m, device, NULL, &cm));
	ASSERT_NE(NULL, strstr(vnpu_last_error(), "Neg node: dimension 0 of 'x' is 2147483649"));
	vnpu_model_free(m);
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
TEST_F(dev, compile_late_reshape)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	vnpu_compiled_model *cm = NULL;
	vnpu_query_report *report = NULL;
	struct pb model = { 0 };
	vnpu_status st;
	vnpu_model *m;

	late_reshape_model(&model);
	ASSERT_TRUE(!model.failed);
	st = vnpu_core_read_model_from_memory(core, model.data, model.len, &m);
	pb_free(&model);
	ASSERT_EQ(VNPU_OK, st);
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_core_compile_model(core, m, device, NULL, &cm));
	ASSERT_NE(NULL, strstr(vnpu_last_error(), "Reshape node: 6 elements reshaped to 16"));
	ASSERT_TRUE(!cm);
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_core_query_model(core, m, device, &report));
	ASSERT_NE(NULL, strstr(vnpu_last_error(), "Reshape node: 6 elements reshaped to 16"));
	vnpu_query_report_free(report);
	vnpu_model_free(m);
}

/*
 * An index out of range faults on the device at run time: the message
 * names the layer the faulting command came from, not only its number,
 * and on the CPU what was wrong.
 */
TEST_F(dev, fault_names_layer)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
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
	ASSERT_EQ(0, compile_pb(_metadata, core, device, &model, &cm));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_tensor(req, "idx", &idx));
	vnpu_tensor_get_data(idx, &data);
	memcpy(data, good, sizeof(good));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_infer(req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_tensor(req, "picked", &y));
	vnpu_tensor_get_data(y, (void **)&out);
	ASSERT_TRUE(out[0] == 4 && out[1] == 1);
	vnpu_tensor_free(y);
	memcpy(data, bad, sizeof(bad));
	ASSERT_FAILS(VNPU_DEVICE_FAULT, vnpu_infer_request_infer(req));
	if (!strstr(vnpu_last_error(), "layer \"picked\" (Gather)"))
		TH_LOG("message: %s", vnpu_last_error());
	ASSERT_NE(NULL, strstr(vnpu_last_error(), "layer \"picked\" (Gather)"));
	/* The CPU says why (the NPU's wait reports only the command). */
	if (!strcmp(device, "CPU"))
		ASSERT_NE(NULL, strstr(vnpu_last_error(), "a value of its input out of range"))
			TH_LOG("message: %s", vnpu_last_error());
	/* The request runs again once the index is back in range. */
	memcpy(data, good, sizeof(good));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_infer(req));
	vnpu_tensor_free(idx);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
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
TEST_F(dev, if_lazy_branches)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	vnpu_compiled_model *cm = NULL;
	vnpu_infer_request *req;
	vnpu_model *m;

	ASSERT_EQ(VNPU_OK, if_lazy_model(core, 1, &m));
	ASSERT_EQ(VNPU_OK, vnpu_core_compile_model(core, m, device, NULL, &cm));
	vnpu_model_free(m);
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	ASSERT_EQ(VNPU_OK, run_if_lazy(req, false, false));
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);

	ASSERT_FAILS(VNPU_PARSE_ERROR, if_lazy_model(core, 0, &m));
	ASSERT_NE(NULL, strstr(vnpu_last_error(), "rate_switch"));
	ASSERT_NE(NULL, strstr(vnpu_last_error(), "Squeeze"));

	ASSERT_EQ(VNPU_OK, if_lazy_model(core, -1, &m));
	ASSERT_EQ(VNPU_OK, vnpu_core_compile_model(core, m, device, NULL, &cm));
	vnpu_model_free(m);
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	ASSERT_EQ(VNPU_OK, run_if_lazy(req, true, true));
	ASSERT_FAILS(VNPU_DEVICE_FAULT, run_if_lazy(req, true, false));
	if (!strstr(vnpu_last_error(), "rate_switch"))
		TH_LOG("message: %s", vnpu_last_error());
	ASSERT_NE(NULL, strstr(vnpu_last_error(), "rate_switch"));
	/* It runs again with the valid branch taken. */
	ASSERT_EQ(VNPU_OK, run_if_lazy(req, true, true));
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
}

/*
 * CastLike takes only the element type of 'like': ONNX's castlike bf16
 * cases feed a [1] to a 'like' declared [3,4], which a reshape of 'like'
 * lets through. Into bf16 truncates (the upper half of the f32 bits).
 */
TEST_F(dev, castlike_reshaped_like)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
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
	ASSERT_EQ(VNPU_OK, vnpu_core_read_model(core, CASTLIKE, &m));
	ASSERT_EQ(VNPU_OK, vnpu_model_reshape(m, "like", &one));
	ASSERT_EQ(VNPU_OK, vnpu_core_compile_model(core, m, device, NULL, &cm));
	vnpu_model_free(m);
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_create_from_ptr(VNPU_TYPE_F32, &full, x, &tx));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_create_from_ptr(VNPU_TYPE_BF16, &one, like, &tl));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_create_from_ptr(VNPU_TYPE_BF16, &full, like, &tfull));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_infer_request_set_tensor(req, "like", tfull));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_tensor(req, "like", tl));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_tensor(req, "input", tx));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_infer(req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_tensor(req, "output", &ty));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(ty, (void **)&y));
	for (i = 0; i < 12; i++) {
		ASSERT_TRUE(y[i] == bits[i] >> 16);
	}
	vnpu_tensor_free(tx);
	vnpu_tensor_free(tl);
	vnpu_tensor_free(tfull);
	vnpu_tensor_free(ty);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
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
static int said(struct __test_metadata *_metadata, const char *prefix, const char *says)
{
	ASSERT_EQ(0, strncmp(vnpu_last_error(), prefix, strlen(prefix)));
	ASSERT_NE(NULL, strstr(vnpu_last_error(), says));
	return 0;
}

/* Input @index of @m is called @name, of @rank dimensions @dims. */
static int input_is(struct __test_metadata *_metadata, const vnpu_model *m, size_t index,
		    const char *name, uint32_t rank,
		    const int64_t *dims)
{
	const char *got_name;
	vnpu_shape got;

	ASSERT_EQ(VNPU_OK, vnpu_model_input_name(m, index, &got_name));
	ASSERT_STREQ(name, got_name);
	ASSERT_EQ(VNPU_OK, vnpu_model_input_shape(m, index, &got));
	ASSERT_EQ(rank, got.rank);
	for (uint32_t d = 0; d < rank; d++) {
		ASSERT_EQ(dims[d], got.dims[d]);
	}
	return 0;
}

/*
 * A shape past the limits is refused alike by every call that gives an
 * input a shape: vnpu_model_reshape(), _freeze_input(), an element of
 * _reshape_sequence() or _freeze_sequence(), each VNPU_INVALID_ARGUMENT
 * naming the limit, the model left as it was. A frozen tensor and a
 * sequence's elements are static: a dynamic dimension is refused too.
 */
TEST_F(dev, shape_limits_alike)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	const vnpu_shape fits = { 3, { 3, 4, 5 } }, dynamic = { 3, { 3, VNPU_DIM_DYNAMIC, 5 } };
	const vnpu_shape empty_wide = { 3, { 0, 1ll << 41, 3 } }, two = { 1, { 2 } };
	vnpu_shape elems[2] = { { 1, { 2 } } };
	vnpu_compiled_model *cm;
	vnpu_tensor *t;
	vnpu_model *add, *seq;
	size_t n;

	ASSERT_EQ(VNPU_OK, vnpu_core_read_model(core, ADD, &add));
	ASSERT_EQ(VNPU_OK, vnpu_core_read_model(core, SEQ_INSERT, &seq));
	for (size_t i = 0; i < sizeof(bad_shapes) / sizeof(bad_shapes[0]); i++) {
		const vnpu_shape *bad = &bad_shapes[i].shape;

		ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_model_reshape(add, "x", bad));
		ASSERT_EQ(0, said(_metadata, "reshape 'x': ", bad_shapes[i].says));
		ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
			     vnpu_model_freeze_input(add, "x", VNPU_TYPE_F32, bad, NULL, 0));
		ASSERT_EQ(0, said(_metadata, "freeze 'x': ", bad_shapes[i].says));
		elems[1] = *bad;
		ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
			     vnpu_model_reshape_sequence(seq, "sequence", 2, elems));
		ASSERT_EQ(0, said(_metadata, "reshape 'sequence': element 1: ", bad_shapes[i].says));
	}
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_model_freeze_input(add, "x", VNPU_TYPE_F32, &dynamic, NULL, 0));
	ASSERT_EQ(0, said(_metadata, "freeze 'x': ", "dimension 1 is dynamic"));
	elems[1] = dynamic;
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_model_reshape_sequence(seq, "sequence", 2, elems));
	ASSERT_EQ(0, said(_metadata, "reshape 'sequence': element 1: ", "dimension 1 is dynamic"));
	/* A tensor of no elements may have such a dimension; a frozen sequence may not. */
	ASSERT_EQ(VNPU_OK, vnpu_tensor_create(VNPU_TYPE_I64, &empty_wide, &t));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_model_freeze_sequence(seq, "sequence", &t, 1));
	ASSERT_EQ(0, said(_metadata, "freeze 'sequence': element 0: ", "more than 2^40 elements"));
	vnpu_tensor_free(t);

	/* Nothing changed: both inputs are there, x as declared, the
	 * sequence's length still open. */
	ASSERT_EQ(VNPU_OK, vnpu_model_get_inputs_size(add, &n));
	ASSERT_EQ(2, n);
	ASSERT_EQ(0, input_is(_metadata, add, 0, "x", 3, fits.dims));
	ASSERT_EQ(VNPU_OK, vnpu_model_get_inputs_size(seq, &n));
	ASSERT_EQ(2, n);
	ASSERT_EQ(VNPU_OK, vnpu_model_reshape_sequence(seq, "sequence", 1, &two));
	ASSERT_EQ(VNPU_OK, vnpu_core_compile_model(core, seq, device, NULL, &cm));
	vnpu_compiled_model_free(cm);
	vnpu_model_free(seq);
	vnpu_model_free(add);
}

/*
 * vnpu_model_freeze_input()'s refusals, each leaving the model as it was:
 * the bad arguments (VNPU_INVALID_ARGUMENT, VNPU_NOT_FOUND), data a node's
 * op does not define (a Reshape of 24 elements to 25, a Tile repeat of -1:
 * VNPU_INVALID_ARGUMENT, never a parse error), and data that takes a node
 * past a device limit, VNPU_UNSUPPORTED at the freeze as at a reshape (a
 * Loop of 65537 iterations; 65536 are taken).
 */
TEST_F(dev, freeze_statuses)
{
	vnpu_core *core = self->core;
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

	ASSERT_EQ(VNPU_OK, vnpu_core_read_model(core, ADD, &m));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_model_freeze_input(NULL, "x", VNPU_TYPE_F32, &fits, data, 240));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_model_freeze_input(m, NULL, VNPU_TYPE_F32, &fits, data, 240));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_model_freeze_input(m, "x", VNPU_TYPE_F32, NULL, data, 240));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_model_freeze_input(m, "x", VNPU_TYPE_F32, &fits, NULL, 240));
	ASSERT_FAILS(VNPU_NOT_FOUND,
		     vnpu_model_freeze_input(m, "sum", VNPU_TYPE_F32, &fits, data, 240));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_model_freeze_input(m, "x", VNPU_TYPE_F16, &fits, data, 120));
	ASSERT_EQ(0, said(_metadata, "freeze 'x': ", "type f16, the input is f32"));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_model_freeze_input(m, "x", VNPU_TYPE_F32, &other, data, 288));
	ASSERT_EQ(0, said(_metadata, "freeze 'x': ", "dimension 2 is 6, the input is f32[3,4,5]"));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_model_freeze_input(m, "x", VNPU_TYPE_F32, &flat, data, 240));
	ASSERT_EQ(0, said(_metadata, "freeze 'x': ", "rank 2, the input is f32[3,4,5]"));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_model_freeze_input(m, "x", VNPU_TYPE_F32, &fits, data, 239));
	ASSERT_EQ(0, said(_metadata, "freeze 'x': ", "239 bytes of data for 60 elements of f32"));
	ASSERT_EQ(VNPU_OK, vnpu_model_get_inputs_size(m, &n));
	ASSERT_EQ(2, n);
	ASSERT_EQ(VNPU_OK, vnpu_model_freeze_input(m, "x", VNPU_TYPE_F32, &fits, data, 240));
	ASSERT_EQ(0, input_is(_metadata, m, 0, "y", 3, fits.dims));
	vnpu_model_free(m);

	ASSERT_EQ(VNPU_OK,
		  vnpu_core_read_model(core, NODE_DIR "test_reshape_reduced_dims/model.onnx", &m));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_model_freeze_input(m, "shape", VNPU_TYPE_I64, &two, into_25, 16));
	ASSERT_EQ(0,
		  said(_metadata, "freeze 'shape': ", "Reshape node: 24 elements reshaped to 25"));
	ASSERT_EQ(VNPU_OK, vnpu_model_output_shape(m, 0, &got));
	ASSERT_TRUE(got.rank == 2 && got.dims[0] == VNPU_DIM_DYNAMIC);
	ASSERT_EQ(VNPU_OK, vnpu_model_freeze_input(m, "shape", VNPU_TYPE_I64, &two, into_24, 16));
	ASSERT_EQ(VNPU_OK, vnpu_model_output_shape(m, 0, &got));
	ASSERT_TRUE(got.rank == 2 && got.dims[0] == 4 && got.dims[1] == 6);
	vnpu_model_free(m);

	ASSERT_EQ(VNPU_OK, vnpu_core_read_model(core, NODE_DIR "test_tile/model.onnx", &m));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_model_freeze_input(m, "y", VNPU_TYPE_I64, &four, repeat_neg, 32));
	ASSERT_EQ(0, said(_metadata, "freeze 'y': ", "Tile node: repeat -1"));
	vnpu_model_free(m);

	ASSERT_EQ(VNPU_OK, vnpu_core_read_model(core, LOOP, &m));
	ASSERT_EQ(VNPU_OK,
		  vnpu_model_freeze_input(m, "trip_count", VNPU_TYPE_I64, &scalar, &trip, 8));
	ASSERT_FAILS(VNPU_UNSUPPORTED,
		     vnpu_model_freeze_input(m, "cond", VNPU_TYPE_BOOL, &scalar, &yes, 1));
	ASSERT_EQ(0,
		  said(_metadata, "freeze 'cond': ", "Loop node: 65537 iterations, above the limit of 65536"));
	ASSERT_EQ(VNPU_OK, vnpu_model_get_inputs_size(m, &n));
	ASSERT_EQ(2, n);
	ASSERT_EQ(0, input_is(_metadata, m, 0, "cond", 0, NULL));
	ASSERT_EQ(0, input_is(_metadata, m, 1, "y", 1, y_dims));
	/* Left usable: a false condition runs no iteration. */
	ASSERT_EQ(VNPU_OK, vnpu_model_freeze_input(m, "cond", VNPU_TYPE_BOOL, &scalar, &no, 1));
	vnpu_model_free(m);

	ASSERT_EQ(VNPU_OK, vnpu_core_read_model(core, LOOP, &m));
	trip = 65536;
	ASSERT_EQ(VNPU_OK,
		  vnpu_model_freeze_input(m, "trip_count", VNPU_TYPE_I64, &scalar, &trip, 8));
	ASSERT_EQ(VNPU_OK, vnpu_model_freeze_input(m, "cond", VNPU_TYPE_BOOL, &scalar, &yes, 1));
	vnpu_model_free(m);
}

/* Input @name of @cm (an element of a sequence) has the shape [@dim]. */
static int port_is(struct __test_metadata *_metadata, const vnpu_compiled_model *cm,
		   const char *name, int64_t dim)
{
	uint32_t n;
	vnpu_port p;

	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_get_num_inputs(cm, &n));
	for (uint32_t i = 0; i < n; i++) {
		ASSERT_EQ(VNPU_OK, vnpu_compiled_model_get_input(cm, i, &p));
		if (!strcmp(p.name, name)) {
			ASSERT_TRUE(p.shape.rank == 1 && p.shape.dims[0] == dim);
			return 0;
		}
	}
	ASSERT_TRUE(!"no such port");
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
TEST_F(dev, reshape_sequence_statuses)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	vnpu_shape shapes[3] = { { 1, { 1 } }, { 1, { 3 } }, { 1, { 2 } } };
	const vnpu_shape one = { 1, { 1 } }, past = { 1, { (1ll << 31) + 1 } };
	vnpu_compiled_model *cm;
	vnpu_shape *many;
	vnpu_model *m;
	float x1 = 1;

	ASSERT_EQ(VNPU_OK, vnpu_core_read_model(core, SEQ_INSERT, &m));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_model_reshape_sequence(NULL, "sequence", 1, shapes));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_model_reshape_sequence(m, NULL, 1, shapes));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_model_reshape_sequence(m, "sequence", 1, NULL));
	ASSERT_FAILS(VNPU_NOT_FOUND, vnpu_model_reshape_sequence(m, "nonesuch", 1, shapes));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_model_reshape_sequence(m, "tensor", 1, shapes));
	ASSERT_EQ(0, said(_metadata, "reshape 'tensor': ", "not a sequence input"));
	many = calloc(65537, sizeof(*many));
	ASSERT_NE(NULL, many);
	ASSERT_EQ(VNPU_INVALID_ARGUMENT, vnpu_model_reshape_sequence(m, "sequence", 65537, many));
	free(many);
	ASSERT_EQ(0, said(_metadata, "reshape 'sequence': ", "65537 elements, at most 65536"));
	/* Refused calls fixed no length: three elements now, then two refused. */
	ASSERT_EQ(VNPU_OK, vnpu_model_reshape_sequence(m, "sequence", 3, shapes));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_model_reshape_sequence(m, "sequence", 2, shapes));
	ASSERT_EQ(0, said(_metadata, "reshape 'sequence': ", "its length is fixed at 3, not 2"));
	shapes[1] = bad_shapes[0].shape;
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_model_reshape_sequence(m, "sequence", 3, shapes));
	ASSERT_EQ(VNPU_OK, vnpu_core_compile_model(core, m, device, NULL, &cm));
	ASSERT_TRUE(!port_is(_metadata, cm, "sequence[0]", 1) && !port_is(_metadata, cm,
									  "sequence[1]", 3) && !port_is(_metadata, cm, "sequence[2]", 2));
	vnpu_compiled_model_free(cm);
	vnpu_model_free(m);

	/* A frozen x1 of one element: each x0[i] broadcasts against it. */
	ASSERT_EQ(VNPU_OK, vnpu_core_read_model(core, SEQ_ADD, &m));
	ASSERT_EQ(VNPU_OK, vnpu_model_freeze_input(m, "x1", VNPU_TYPE_F32, &one, &x1, sizeof(x1)));
	shapes[0] = (vnpu_shape){ 2, { 2, 3 } };
	shapes[1] = (vnpu_shape){ 1, { 2 } };
	ASSERT_EQ(VNPU_OK, vnpu_model_reshape_sequence(m, "x0", 2, shapes));
	ASSERT_EQ(VNPU_OK, vnpu_core_compile_model(core, m, device, NULL, &cm));
	vnpu_compiled_model_free(cm);
	shapes[1] = past;
	ASSERT_EQ(VNPU_OK, vnpu_model_reshape_sequence(m, "x0", 2, shapes));
	ASSERT_FAILS(VNPU_UNSUPPORTED, vnpu_core_compile_model(core, m, device, NULL, &cm));
	ASSERT_NE(NULL, strstr(vnpu_last_error(),
			       "Add node: dimension 0 of 'x0[1]' is 2147483649: the device's layers take at most 2^31"));
	vnpu_model_free(m);

	/* x1 left a [2] input: x0[i] must broadcast against [2]. */
	ASSERT_EQ(VNPU_OK, vnpu_core_read_model(core, SEQ_ADD, &m));
	ASSERT_EQ(VNPU_OK, vnpu_model_reshape(m, "x1", &shapes[2]));
	shapes[0] = (vnpu_shape){ 1, { 3 } };
	ASSERT_EQ(VNPU_OK, vnpu_model_reshape_sequence(m, "x0", 1, shapes));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_core_compile_model(core, m, device, NULL, &cm));
	ASSERT_NE(NULL, strstr(vnpu_last_error(), "Add node: shapes do not broadcast"));
	vnpu_model_free(m);
}

/*
 * An input declared with a dynamic dimension (x1 f32[?]) is frozen to any
 * static shape of its rank, here [2], and the model computes with it:
 * y0[i] = x0[i] + x1 on a sequence set at run time.
 */
TEST_F(dev, freeze_dynamic_input)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	static const float x1[2] = { 10, 20 }, x0[2][2] = { { 1, 2 }, { 3, 4 } };
	const vnpu_shape two = { 1, { 2 } }, shapes[2] = { { 1, { 2 } }, { 1, { 2 } } };
	const vnpu_shape rank2 = { 2, { 1, 2 } };
	vnpu_tensor *seq[2], *y;
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	vnpu_model *m;
	float *out;
	size_t n;

	ASSERT_EQ(VNPU_OK, vnpu_core_read_model(core, SEQ_ADD, &m));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_model_freeze_input(m, "x1", VNPU_TYPE_F32, &rank2, x1, sizeof(x1)));
	ASSERT_EQ(0, said(_metadata, "freeze 'x1': ", "rank 2, the input is f32[?]"));
	ASSERT_EQ(VNPU_OK, vnpu_model_freeze_input(m, "x1", VNPU_TYPE_F32, &two, x1, sizeof(x1)));
	ASSERT_EQ(VNPU_OK, vnpu_model_get_inputs_size(m, &n));
	ASSERT_EQ(1, n);
	ASSERT_EQ(VNPU_OK, vnpu_model_reshape_sequence(m, "x0", 2, shapes));
	ASSERT_EQ(VNPU_OK, vnpu_core_compile_model(core, m, device, NULL, &cm));
	vnpu_model_free(m);
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	for (int i = 0; i < 2; i++) {
		ASSERT_EQ(VNPU_OK,
			  vnpu_tensor_create_from_ptr(VNPU_TYPE_F32, &two, (void *)x0[i], &seq[i]));
	}
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_sequence(req, "x0", seq, 2));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_infer(req));
	for (size_t i = 0; i < 2; i++) {
		ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_sequence_tensor(req, "y0", i, &y));
		ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(y, (void **)&out));
		ASSERT_TRUE(out[0] == x0[i][0] + 10 && out[1] == x0[i][1] + 20);
		vnpu_tensor_free(y);
	}
	vnpu_tensor_free(seq[0]);
	vnpu_tensor_free(seq[1]);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
}

/*
 * vnpu_model_input_decides_shapes() for each input of node test models
 * ('1' where the input decides shapes), and of x f32[2,3], s i64[2] ->
 * Reshape(x, Add(s, Shape(x))): s decides through the Add, x only feeds
 * the data and a Shape. Then its refusals.
 */
TEST_F(dev, shape_deciding_inputs)
{
	vnpu_core *core = self->core;

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

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		snprintf(path, sizeof(path), NODE_DIR "%s/model.onnx", cases[c].model);
		ASSERT_EQ(VNPU_OK, vnpu_core_read_model(core, path, &m));
		ASSERT_EQ(VNPU_OK, vnpu_model_get_inputs_size(m, &n));
		ASSERT_EQ(strlen(cases[c].decides), n);
		for (size_t i = 0; i < n; i++) {
			ASSERT_EQ(VNPU_OK, vnpu_model_input_decides_shapes(m, i, &d));
			ASSERT_FALSE(d != (cases[c].decides[i] == '1'))
				TH_LOG("%s: input %zu decides %d", cases[c].model, i, d);
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
	ASSERT_TRUE(!model.failed);
	st = vnpu_core_read_model_from_memory(core, model.data, model.len, &m);
	pb_free(&model);
	ASSERT_EQ(VNPU_OK, st);
	ASSERT_EQ(VNPU_OK, vnpu_model_input_decides_shapes(m, 0, &d));
	ASSERT_EQ(0, d);
	ASSERT_EQ(VNPU_OK, vnpu_model_input_decides_shapes(m, 1, &d));
	ASSERT_EQ(1, d);
	ASSERT_FAILS(VNPU_NOT_FOUND, vnpu_model_input_decides_shapes(m, 2, &d));
	ASSERT_NE(NULL, strstr(vnpu_last_error(), "model has no input 2 (it has 2)"));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_model_input_decides_shapes(m, 0, NULL));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_model_input_decides_shapes(NULL, 0, &d));
	vnpu_model_free(m);
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
static int legacy_runs(struct __test_metadata *_metadata, vnpu_core *core, const char *device,
		       const char *op, int b_rank,
		       const int64_t *b_dims, int64_t axis, float (*want)(int, int, int))
{
	vnpu_compiled_model *cm = NULL;
	vnpu_infer_request *req = NULL;
	struct pb model = { 0 };
	vnpu_tensor *t;
	float *p;

	legacy_model(&model, op, b_rank, b_dims, axis);
	ASSERT_EQ(0, compile_pb(_metadata, core, device, &model, &cm));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_tensor(req, "a", &t));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(t, (void **)&p));
	for (int i = 0; i < 24; i++)
		p[i] = -1.0f;
	vnpu_tensor_free(t);
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_infer(req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_tensor(req, "y", &t));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(t, (void **)&p));
	for (int i = 0; i < 24; i++) {
		if (p[i] != want(i / 12, i / 4 % 3, i % 4)) {
			TH_LOG("%s: y[%d] = %g, want %g", op, i, p[i],
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
TEST_F(dev, legacy_broadcast)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	static const int64_t c3[1] = { 3 }, r34[2] = { 3, 4 }, b2[1] = { 2 }, c4[1] = { 4 };
	static const int64_t r43[2] = { 4, 3 };
	struct pb model = { 0 };
	vnpu_model *m = NULL;

	ASSERT_EQ(0, legacy_runs(_metadata, core, device, "Add", 1, c3, 1, add_per_channel));
	ASSERT_EQ(0, legacy_runs(_metadata, core, device, "Add", 2, r34, -1, add_per_row));
	ASSERT_EQ(0, legacy_runs(_metadata, core, device, "Add", 1, b2, 0, add_per_batch));
	ASSERT_EQ(0, legacy_runs(_metadata, core, device, "PRelu", 1, c3, -1, prelu_per_channel));
	for (int k = 0; k < 3; k++) {
		legacy_model(&model, "Mul", k < 2 ? 1 : 2, k == 0 ? c4 : k == 1 ? c3 : r43,
			     k == 0 ? 1 : k == 1 ? 3 : -1);
		ASSERT_TRUE(!model.failed);
		ASSERT_FAILS(VNPU_PARSE_ERROR,
			     vnpu_core_read_model_from_memory(core, model.data, model.len, &m));
		pb_free(&model);
		model = (struct pb){ 0 };
		ASSERT_TRUE(!m);
		ASSERT_NE(NULL, strstr(vnpu_last_error(),
				       "does not broadcast over f32[2,3,4] as opset 6"));
	}
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
TEST_F(dev, global_pool_3d)
{
	vnpu_core *core = self->core;
	const char *device = self->device;

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
		ASSERT_EQ(0, compile_pb(_metadata, core, device, &model, &cm));
		ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
		ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_tensor(req, "x", &x));
		ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(x, (void **)&px));
		for (int i = 0; i < 48; i++)
			px[i] = (float)((i * 7) % 11) - 5.0f;
		ASSERT_EQ(VNPU_OK, vnpu_infer_request_infer(req));
		ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_tensor(req, "y", &y));
		ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(y, (void **)&py));
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
			ASSERT_FALSE(got - want > 1e-5f * (want > 1 ? want : 1)
				     || want - got > 1e-5f * (want > 1 ? want : 1))
				TH_LOG("%s: y[%d] = %g, want %g", ops[k], c, got, want);
		}
		vnpu_tensor_free(x);
		vnpu_tensor_free(y);
		vnpu_infer_request_free(req);
		vnpu_compiled_model_free(cm);
	}
}

TEST_F(dev, conv_3d)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
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
	ASSERT_EQ(0, compile_pb(_metadata, core, device, &model, &cm));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_tensor(req, "x", &t));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(t, (void **)&p));
	memcpy(p, x, sizeof(x));
	vnpu_tensor_free(t);
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_infer(req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_tensor(req, "y", &t));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_shape(t, &sh));
	ASSERT_TRUE(sh.rank == 5 && sh.dims[1] == 4 && sh.dims[2] == od && sh.dims[3] == oh
		    && sh.dims[4] == ow);
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(t, (void **)&p));
	for (int64_t m = 0; m < 4; m++)
		for (o[0] = 0; o[0] < od; o[0]++)
			for (o[1] = 0; o[1] < oh; o[1]++)
				for (o[2] = 0; o[2] < ow; o[2]++) {
					float want = conv3d_ref(x, w, b, stride, pad, dil, m, o);
					float got = p[((m * od + o[0]) * oh + o[1]) * ow + o[2]];

					ASSERT_FALSE(got - want > 1e-4f || want - got > 1e-4f)
						TH_LOG("y[%lld,%lld,%lld,%lld] = %g, want %g",
						       (long long)m, (long long)o[0], (long long)o[1],
						       (long long)o[2], got, want);
				}
	vnpu_tensor_free(t);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);

	model = (struct pb){ 0 };
	conv3d_model(&model, w, b, one, wide, one);
	ASSERT_TRUE(!model.failed);
	st = vnpu_core_read_model_from_memory(core, model.data, model.len, &m);
	pb_free(&model);
	ASSERT_EQ(VNPU_OK, st);
	cm = NULL;
	ASSERT_FAILS(VNPU_UNSUPPORTED, vnpu_core_compile_model(core, m, device, NULL, &cm));
	vnpu_model_free(m);
	ASSERT_TRUE(!cm);
	ASSERT_NE(NULL, strstr(vnpu_last_error(), "Conv node: output depth 0 reads only padding"));
}

/* Subsampled 1x1 convolution: x [1, SUB_C, SUB_H, SUB_W] by w [SUB_M, SUB_C, 1, 1]. */
#define SUB_C 40
#define SUB_M 24
#define SUB_H 13
#define SUB_W 15

/*
 * y = Relu(Conv(x f32[1, SUB_C, @h, @w], w constant, b)) with @stride, no
 * padding.
 */
static void conv_sub_model(struct pb *model, const float *w, const float *b, int64_t h,
			   int64_t wd, const int64_t *stride)
{
	const int64_t x_dims[4] = { 1, SUB_C, h, wd }, w_dims[4] = { SUB_M, SUB_C, 1, 1 };
	static const int64_t b_dims[1] = { SUB_M };
	struct pb g = { 0 }, node = { 0 };

	onnx_value(&g, GRAPH_INPUT, "x", 4, x_dims);
	onnx_init(&g, "w", ONNX_FLOAT, 4, w_dims, w, SUB_M * SUB_C * sizeof(float));
	onnx_init(&g, "b", ONNX_FLOAT, 1, b_dims, b, SUB_M * sizeof(float));
	pb_str(&node, NODE_INPUT, "x");
	pb_str(&node, NODE_INPUT, "w");
	pb_str(&node, NODE_INPUT, "b");
	pb_str(&node, NODE_OUTPUT, "c");
	pb_str(&node, NODE_OP, "Conv");
	ints_attr(&node, "strides", stride, 2);
	pb_msg(&g, GRAPH_NODE, &node);
	onnx_node(&g, "Relu", (const char *[]){ "c" }, 1, "y");
	onnx_value(&g, GRAPH_OUTPUT, "y", -1, NULL);
	onnx_model(model, &g, 17);
	pb_free(&node);
	pb_free(&g);
}

/* Runs @model on @x (@n floats) into @y (@ny floats). */
static int run_conv_sub(struct __test_metadata *_metadata, vnpu_core *core, const char *device,
			struct pb *model, const float *x, size_t n, float *y, size_t ny)
{
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	vnpu_tensor *t;
	vnpu_shape sh;
	float *p;

	ASSERT_EQ(0, compile_pb(_metadata, core, device, model, &cm));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_tensor(req, "x", &t));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(t, (void **)&p));
	memcpy(p, x, n * sizeof(float));
	vnpu_tensor_free(t);
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_infer(req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_tensor(req, "y", &t));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_shape(t, &sh));
	ASSERT_EQ(ny, (size_t)(sh.dims[0] * sh.dims[1] * sh.dims[2] * sh.dims[3]));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(t, (void **)&p));
	memcpy(y, p, ny * sizeof(float));
	vnpu_tensor_free(t);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
	return 0;
}

/*
 * A 1x1 convolution of strides (2, 3) without padding onto a small map
 * (7x5, as ResNet-50's layer4.0 downsampling onto 7x7), which the compile
 * runs as a strided COPY of the input it reads and a convolution of
 * stride 1 over that on hosts where that one takes the lanes layout: the
 * bits of the same convolution of stride 1 over the subsampled input
 * built here, and near the test's own sums.
 */
TEST_F(dev, conv_1x1_subsampled)
{
	static const int64_t stride[2] = { 2, 3 }, one[2] = { 1, 1 };
	const int64_t oh = (SUB_H - 1) / 2 + 1, ow = (SUB_W - 1) / 3 + 1;
	static float x[SUB_C * SUB_H * SUB_W], xs[SUB_C * 7 * 5], w[SUB_M * SUB_C];
	static float y[SUB_M * 7 * 5], ys[SUB_M * 7 * 5];
	float b[SUB_M];
	struct pb model = { 0 };

	ASSERT_TRUE(oh == 7 && ow == 5);
	for (int i = 0; i < SUB_C * SUB_H * SUB_W; i++)
		x[i] = (float)((i * 37) % 101) / 16.0f - 3.0f;
	for (int i = 0; i < SUB_M * SUB_C; i++)
		w[i] = (float)((i * 13) % 29) / 64.0f - 0.2f;
	for (int i = 0; i < SUB_M; i++)
		b[i] = (float)(i % 5) * 0.125f - 0.25f;
	for (int c = 0; c < SUB_C; c++)
		for (int r = 0; r < oh; r++)
			for (int q = 0; q < ow; q++)
				xs[(c * oh + r) * ow + q] = x[(c * SUB_H + r * 2) * SUB_W + q * 3];
	conv_sub_model(&model, w, b, SUB_H, SUB_W, stride);
	ASSERT_EQ(0, run_conv_sub(_metadata, self->core, self->device, &model, x,
				  SUB_C * SUB_H * SUB_W, y, SUB_M * oh * ow));
	model = (struct pb){ 0 };
	conv_sub_model(&model, w, b, oh, ow, one);
	ASSERT_EQ(0, run_conv_sub(_metadata, self->core, self->device, &model, xs,
				  SUB_C * oh * ow, ys, SUB_M * oh * ow));
	ASSERT_EQ(0, memcmp(y, ys, sizeof(y)));
	for (int m = 0; m < SUB_M; m++)
		for (int p = 0; p < oh * ow; p++) {
			double want = b[m], mag = 1;

			for (int c = 0; c < SUB_C; c++) {
				want += (double)w[m * SUB_C + c] * xs[c * oh * ow + p];
				mag += (double)(w[m * SUB_C + c] < 0 ? -w[m * SUB_C + c] :
						w[m * SUB_C + c]) * (xs[c * oh * ow + p] < 0 ?
						-xs[c * oh * ow + p] : xs[c * oh * ow + p]);
			}
			want = want < 0 ? 0 : want;
			ASSERT_FALSE(y[m * oh * ow + p] - want > 1e-6 * mag ||
				     want - y[m * oh * ow + p] > 1e-6 * mag)
				TH_LOG("y[%d,%d] = %g, want %g", m, p, y[m * oh * ow + p], want);
		}
}

/* The 3-D pools of pool3d_case(_metadata): x [1,2,3,4,5], window (2,3,2), strides (2,1,2). */
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
static int pool3d_case(struct __test_metadata *_metadata, vnpu_core *core, const char *device,
		       int k, const char *autopad)
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
	ASSERT_EQ(0, compile_pb(_metadata, core, device, &model, &cm));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_tensor(req, "x", &t));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(t, (void **)&x));
	for (int i = 0; i < P3_C * P3_D * P3_H * P3_W; i++)
		x[i] = (float)((i * 37) % 101) * 0.25f - 12.0f;	/* no two equal */
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_infer(req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_tensor(req, "y", &t));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_shape(t, &sh));
	ASSERT_TRUE(sh.rank == 5 && sh.dims[2] == out[0] && sh.dims[3] == out[1]
		    && sh.dims[4] == out[2]);
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(t, (void **)&y));
	vnpu_tensor_free(t);
	if (k == 0) {
		ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_tensor(req, "i", &t));
		ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(t, (void **)&ind));
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
					ASSERT_EQ(0,
						  near(ops[k], n, k == 2 ? y[n] * y[n] : y[n], want));
					if (ind && ind[n] != arg) {
						TH_LOG("%s %s: i[%lld] = %lld, want %lld",
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
TEST_F(dev, pool_3d)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	vnpu_compiled_model *cm = NULL;
	struct pb model = { 0 }, g = { 0 }, node = { 0 }, attr = { 0 };
	static const int64_t x_dims[5] = { 1, P3_C, P3_D, P3_H, P3_W };
	vnpu_model *m;
	vnpu_status st;

	for (int k = 0; k < 3; k++) {
		ASSERT_EQ(0, pool3d_case(_metadata, core, device, k, "SAME_UPPER"));
		ASSERT_EQ(0, pool3d_case(_metadata, core, device, k, "SAME_LOWER"));
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
	ASSERT_TRUE(!model.failed);
	st = vnpu_core_read_model_from_memory(core, model.data, model.len, &m);
	pb_free(&model);
	ASSERT_EQ(VNPU_OK, st);
	ASSERT_FAILS(VNPU_UNSUPPORTED, vnpu_core_compile_model(core, m, device, NULL, &cm));
	vnpu_model_free(m);
	ASSERT_TRUE(!cm);
	ASSERT_NE(NULL, strstr(vnpu_last_error(), "column-major"));
}

TEST_F(dev, profiling)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	const char *on[] = { VNPU_PROP_ENABLE_PROFILING, "YES", NULL };
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	vnpu_profiling_info *info;
	uint32_t i, layers = 0;

	ASSERT_EQ(VNPU_OK, compile_file(core, CONV, device, on, &cm));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	ASSERT_FAILS(VNPU_NOT_READY, vnpu_infer_request_get_profiling_info(req, &info));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_infer(req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_profiling_info(req, &info));
	ASSERT_GT(info->count, 6);
	for (i = 6; i < info->count; i++) {
		ASSERT_TRUE(info->entries[i].name && info->entries[i].node_type);
		ASSERT_EQ(0, strncmp(info->entries[i].exec_type, device, 3));
		if (info->entries[i].status == VNPU_PROFILING_EXECUTED) {
			ASSERT_GT(info->entries[i].real_time_ns, 0);
			layers++;
		}
	}
	ASSERT_GE(layers, 1);
	vnpu_profiling_info_free(info);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);

	ASSERT_EQ(VNPU_OK, compile_file(core, CONV, device, NULL, &cm));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_infer(req));
	ASSERT_FAILS(VNPU_UNSUPPORTED, vnpu_infer_request_get_profiling_info(req, &info));
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
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
static int get_int(struct __test_metadata *_metadata, vnpu_core *core, const char *device,
		   const char *key, int64_t *out)
{
	vnpu_property_value *v;

	ASSERT_EQ(VNPU_OK, vnpu_core_get_property(core, device, key, &v));
	ASSERT_TRUE(v->type == VNPU_PROPERTY_INT && v->integer >= 0);
	*out = v->integer;
	vnpu_property_value_free(v);
	return 0;
}

/* Every telemetry key on @device: listed RO, readable, not settable. */
static int telemetry_keys_ro(struct __test_metadata *_metadata, vnpu_core *core, const char *device)
{
	vnpu_property_value *list, as_int = { .type = VNPU_PROPERTY_INT };
	int64_t value;
	size_t k;
	int i;

	ASSERT_EQ(VNPU_OK,
		  vnpu_core_get_property(core, device, VNPU_PROP_SUPPORTED_PROPERTIES, &list));
	for (k = 0; k < NUM_TELEMETRY_KEYS; k++) {
		i = list_index(list, telemetry_keys[k]);
		ASSERT_TRUE(i >= 0 && !list->writable[i]);
		ASSERT_EQ(0, get_int(_metadata, core, device, telemetry_keys[k], &value));
		as_int.integer = value + 1;
		ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
			     vnpu_core_set_property(core, device, telemetry_keys[k], &as_int));
		ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
			     vnpu_core_set_property_str(core, device, telemetry_keys[k], "0"));
		ASSERT_NE(NULL, strstr(vnpu_last_error(), "read only"));
	}
	vnpu_property_value_free(list);
	return 0;
}

/*
 * Outside the initial network namespace the driver's netlink family (not
 * netns aware) is absent: the figures fail with a clear DEVICE_ERROR. Needs
 * CAP_SYS_ADMIN to make the namespace; says so and passes without.
 */
static int telemetry_family_absent(struct __test_metadata *_metadata, vnpu_core *core,
				   const char *device)
{
	vnpu_property_value *v;
	int fd, ret = 0;

	fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	ASSERT_GE(fd, 0);
	if (unshare(CLONE_NEWNET)) {
		TH_LOG("no network namespace (%s): absent family not tried",
		       strerror(errno));
		close(fd);
		return 0;
	}
	if (vnpu_core_get_property(core, device, VNPU_PROP_DEVICE_MEMORY_USED, &v) !=
	    VNPU_DEVICE_ERROR || !strstr(vnpu_last_error(), "netlink family")) {
		TH_LOG("no family: %s", vnpu_last_error());
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
TEST_F(dev, telemetry)
{
	vnpu_core *core = self->core;
	const char *device = self->device;

	enum { RUNS = 5 };
	int64_t done0, done1, sub0, sub1, busy0, busy1, used, limit, bos, clients, util;
	vnpu_property_value *list, *v;
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	size_t k;
	int i;

	if (strncmp(device, "NPU", 3)) {
		ASSERT_EQ(VNPU_OK,
			  vnpu_core_get_property(core, device, VNPU_PROP_SUPPORTED_PROPERTIES,
						 &list));
		for (k = 0; k < NUM_TELEMETRY_KEYS; k++) {
			ASSERT_LT(list_index(list, telemetry_keys[k]), 0);
			ASSERT_FAILS(VNPU_NOT_FOUND,
				     vnpu_core_get_property(core, device, telemetry_keys[k], &v));
			ASSERT_FAILS(VNPU_NOT_FOUND,
				     vnpu_core_set_property_str(core, device, telemetry_keys[k],
								"0"));
		}
		vnpu_property_value_free(list);
		return;
	}
	ASSERT_EQ(0, telemetry_keys_ro(_metadata, core, device));
	/* Not global properties. */
	ASSERT_FAILS(VNPU_NOT_FOUND,
		     vnpu_core_get_property(core, NULL, VNPU_PROP_DEVICE_JOBS_COMPLETED, &v));

	ASSERT_EQ(0, get_int(_metadata, core, device, VNPU_PROP_DEVICE_JOBS_COMPLETED, &done0));
	ASSERT_EQ(0, get_int(_metadata, core, device, VNPU_PROP_DEVICE_JOBS_SUBMITTED, &sub0));
	ASSERT_EQ(0, get_int(_metadata, core, device, VNPU_PROP_DEVICE_BUSY_TIME_NS, &busy0));
	ASSERT_EQ(0, get_int(_metadata, core, device, VNPU_PROP_DEVICE_CLIENTS, &clients));
	ASSERT_GE(clients, 1);			/* this process */

	ASSERT_EQ(VNPU_OK, compile_file(core, ADD, device, NULL, &cm));
	ASSERT_EQ(0, get_int(_metadata, core, device, VNPU_PROP_DEVICE_MEMORY_USED, &used));
	ASSERT_EQ(0, get_int(_metadata, core, device, VNPU_PROP_DEVICE_MEMORY_LIMIT, &limit));
	ASSERT_EQ(0, get_int(_metadata, core, device, VNPU_PROP_DEVICE_BUFFERS, &bos));
	ASSERT_TRUE(used > 0 && limit >= used && bos >= 1);

	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	for (i = 0; i < RUNS; i++) {
		ASSERT_EQ(0, run_add(_metadata, req, (float)i));
	}
	ASSERT_EQ(0, get_int(_metadata, core, device, VNPU_PROP_DEVICE_JOBS_COMPLETED, &done1));
	ASSERT_EQ(0, get_int(_metadata, core, device, VNPU_PROP_DEVICE_JOBS_SUBMITTED, &sub1));
	ASSERT_EQ(0, get_int(_metadata, core, device, VNPU_PROP_DEVICE_BUSY_TIME_NS, &busy1));
	ASSERT_EQ(0, get_int(_metadata, core, device, VNPU_PROP_DEVICE_UTILIZATION, &util));
	TH_LOG("%s: %lld jobs completed by %d inferences, busy +%lld ns, "
	       "%lld bytes used of %lld, %lld%% busy", device, (long long)(done1 - done0),
	       RUNS, (long long)(busy1 - busy0), (long long)used, (long long)limit,
	       (long long)util);
	ASSERT_TRUE(done1 - done0 >= RUNS && sub1 - sub0 >= RUNS);
	ASSERT_GT(busy1, busy0);
	ASSERT_LE(util, 100);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
	ASSERT_EQ(0, telemetry_family_absent(_metadata, core, device));
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
	RUNTIME_THREAD_METADATA(a->failed = 1);

	if (vnpu_compiled_model_create_infer_request(a->cm, &req) != VNPU_OK) {
		a->failed = 1;
		return NULL;
	}
	for (i = 0; i < 20 && !a->failed; i++)
		a->failed = run_add(_metadata, req, a->base + (float)i);
	vnpu_infer_request_free(req);
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

	ASSERT_EQ(VNPU_OK, compile_file(core, ADD, device, NULL, &cm));
	for (i = 0; i < 3; i++) {
		args[i] = (struct thread_arg){ cm, (float)(100 * i), 0 };
		ASSERT_EQ(0, pthread_create(&threads[i], NULL, thread_main, &args[i]));
	}
	for (i = 0; i < 3; i++) {
		pthread_join(threads[i], NULL);
		ASSERT_TRUE(!args[i].failed);
	}
	vnpu_compiled_model_free(cm);
}

TEST_F(dev, lifetime_orders)
{
	const char *device = self->device;
	static const int orders[6][3] = {
		{ 0, 1, 2 }, { 0, 2, 1 }, { 1, 0, 2 }, { 1, 2, 0 }, { 2, 0, 1 }, { 2, 1, 0 },
	};
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	vnpu_core *core;
	int o, k;

	for (o = 0; o < 6; o++) {
		ASSERT_EQ(VNPU_OK, vnpu_core_create(&core));
		ASSERT_EQ(VNPU_OK, compile_file(core, ADD, device, NULL, &cm));
		ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
		for (k = 0; k < 3; k++) {
			switch (orders[o][k]) {
			case 0: vnpu_core_free(core); break;
			case 1: vnpu_compiled_model_free(cm); break;
			case 2:
				ASSERT_EQ(0, run_add(_metadata, req, 1));
				vnpu_infer_request_free(req);
				break;
			}
		}
	}
}

static int read_file(struct __test_metadata *_metadata, const char *path, unsigned char **data,
		     size_t *size)
{
	FILE *f = fopen(path, "rb");
	long n;

	ASSERT_NE(NULL, f);
	ASSERT_EQ(0, fseek(f, 0, SEEK_END));
	n = ftell(f);
	rewind(f);
	*data = malloc((size_t)n);
	ASSERT_TRUE(*data && fread(*data, 1, (size_t)n, f) == (size_t)n);
	fclose(f);
	*size = (size_t)n;
	return 0;
}

/* Truncated and bit-flipped models and an unknown op: errors, never a crash. */
TEST_F(dev, malformed_models)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	vnpu_compiled_model *cm;
	unsigned char *data;
	vnpu_model *m;
	size_t size, i;
	char *op;

	ASSERT_EQ(0, read_file(_metadata, CONV, &data, &size));
	for (i = 0; i < size; i++) {
		if (vnpu_core_read_model_from_memory(core, data, i, &m) == VNPU_OK) {
			/* a prefix can be a valid protobuf: it must still compile or fail */
			if (vnpu_core_compile_model(core, m, device, NULL, &cm) == VNPU_OK)
				vnpu_compiled_model_free(cm);
			vnpu_model_free(m);
		} else {
			ASSERT_TRUE(vnpu_last_error()[0]);
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
	ASSERT_NE(NULL, op);
	memcpy(op, "Cnnv", 4);
	if (vnpu_core_read_model_from_memory(core, data, size, &m) == VNPU_OK) {
		ASSERT_NE(VNPU_OK, vnpu_core_compile_model(core, m, device, NULL, &cm));
		ASSERT_NE(NULL, strstr(vnpu_last_error(), "Cnnv"));
		vnpu_model_free(m);
	}
	free(data);
}

/*
 * A node without its first output (none at all, or an empty name) is
 * refused by the reader: the compiler lowered such a dead node with
 * output value -1 (found by fuzz-onnx: a heap read before the table of
 * values under ASan).
 */
TEST_F(dev, node_without_output)
{
	vnpu_core *core = self->core;
	const char *device = self->device;

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
		ASSERT_TRUE(!model.failed);
		st = vnpu_core_read_model_from_memory(core, model.data, model.len, &m);
		pb_free(&model);
		model = (struct pb){ 0 };
		if (st == VNPU_OK) {	/* never: but then it must not compile either */
			ASSERT_NE(VNPU_OK, vnpu_core_compile_model(core, m, device, NULL, &cm));
			vnpu_model_free(m);
		}
		ASSERT_FAILS(VNPU_PARSE_ERROR, st);
		ASSERT_NE(NULL, strstr(vnpu_last_error(), "no first output"));
	}
	pb_free(&g);
	pb_free(&n);
}

/*
 * y = x W + b, W f32[@k,@k] and b f32[@k] (256: W's packed panels, 256
 * KiB, are made in the weights arena the compiler reserves, b is copied),
 * or @layers such layers in a chain, each with other weights.
 */
#define ARENA_K 256
static vnpu_status compile_dense(vnpu_core *core, const char *device, int k, int layers,
				 vnpu_compiled_model **out)
{
	const int64_t xd[2] = { 4, k }, wd[2] = { k, k }, bd[1] = { k };
	struct pb g = { 0 };
	float *w = malloc((size_t)k * k * sizeof(float)), *b = malloc(k * sizeof(float));
	char in[16], wn[16], bn[16], xw[16], y[16];

	if (!w || !b) {
		free(w);
		free(b);
		return VNPU_OUT_OF_MEMORY;
	}
	for (int l = 0; l < layers; l++) {
		for (int i = 0; i < k * k; i++)
			w[i] = (float)((i + l) % 13 - 6) / 64.0f;
		for (int i = 0; i < k; i++)
			b[i] = (float)((i + l) % 5) - 2.0f;
		snprintf(in, sizeof(in), l ? "y%d" : "x", l - 1);
		snprintf(wn, sizeof(wn), "w%d", l);
		snprintf(bn, sizeof(bn), "b%d", l);
		snprintf(xw, sizeof(xw), "xw%d", l);
		snprintf(y, sizeof(y), l == layers - 1 ? "y" : "y%d", l);
		onnx_node(&g, "MatMul", (const char *[]){ in, wn }, 2, xw);
		onnx_node(&g, "Add", (const char *[]){ xw, bn }, 2, y);
		onnx_init(&g, wn, ONNX_FLOAT, 2, wd, w, (size_t)k * k * sizeof(float));
		onnx_init(&g, bn, ONNX_FLOAT, 1, bd, b, k * sizeof(float));
	}
	pb_str(&g, GRAPH_NAME, "dense");
	onnx_value(&g, GRAPH_INPUT, "x", 2, xd);
	onnx_value(&g, GRAPH_OUTPUT, "y", 2, xd);
	free(w);
	free(b);
	return onnx_compile(core, &g, 13, device, NULL, out);
}

/* One inference of @cm on a fixed x f32[4,@k]; y's 4 x @k floats to @y. */
static int run_dense(struct __test_metadata *_metadata, vnpu_compiled_model *cm, int k, float *y)
{
	vnpu_infer_request *req;
	vnpu_tensor *t;
	float *p;

	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_tensor(req, "x", &t));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(t, (void **)&p));
	for (int i = 0; i < 4 * k; i++)
		p[i] = (float)(i % 7) - 3.0f;
	vnpu_tensor_free(t);
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_infer(req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_tensor(req, "y", &t));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(t, (void **)&p));
	memcpy(y, p, 4 * k * sizeof(float));
	vnpu_tensor_free(t);
	vnpu_infer_request_free(req);
	return 0;
}

/* The process's address space in bytes (VmSize), or 0. */
static uint64_t address_space(void)
{
	char line[128];
	uint64_t kb = 0;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmSize: %" SCNu64 " kB", &kb) == 1)
			break;
	fclose(f);
	return kb * 1024;
}

/*
 * Without the weights arena: a compile whose reservation of address space
 * (four times the model's constants and 256 MiB) is refused makes its
 * packed weights with calloc() and copies them as before, with the same
 * results. The refusal is an address-space limit 64 MiB above what the
 * process uses, for the compile alone.
 */
TEST_F(dev, weights_arena_refused)
{
	float *y1 = calloc(4 * ARENA_K, sizeof(float)), *y2 = calloc(4 * ARENA_K, sizeof(float));
	vnpu_compiled_model *cm;
	struct rlimit old, lim;
	uint64_t used;
	vnpu_status st;

	ASSERT_TRUE(y1 && y2);
	ASSERT_EQ(VNPU_OK, compile_dense(self->core, self->device, ARENA_K, 1, &cm));
	ASSERT_EQ(0, run_dense(_metadata, cm, ARENA_K, y1));
	vnpu_compiled_model_free(cm);

	used = address_space();
	ASSERT_NE(0, used);
	ASSERT_EQ(0, getrlimit(RLIMIT_AS, &old));
	lim = old;
	lim.rlim_cur = used + (64ull << 20);
	if (old.rlim_cur != RLIM_INFINITY && old.rlim_cur < lim.rlim_cur)
		lim.rlim_cur = old.rlim_cur;
	ASSERT_EQ(0, setrlimit(RLIMIT_AS, &lim));
	st = compile_dense(self->core, self->device, ARENA_K, 1, &cm);
	ASSERT_EQ(0, setrlimit(RLIMIT_AS, &old));
	ASSERT_EQ(VNPU_OK, st);
	ASSERT_EQ(0, run_dense(_metadata, cm, ARENA_K, y2));
	vnpu_compiled_model_free(cm);
	EXPECT_EQ(0, memcmp(y1, y2, 4 * ARENA_K * sizeof(float)));
	free(y1);
	free(y2);
}

/*
 * An arena too small for the blocks: with VNPU_DEBUG_CS_ARENA=N a compile
 * reserves at most N bytes. Three layers' packed W of 1 MiB each: in an
 * arena of 2 MiB the first two fill it, the third comes from calloc() and
 * is copied where placement puts it, with the rest; in one of 3 MiB all
 * three fit and the other constants do not (copied out); in 4 MiB all is
 * in place. The results are the bits of a compile with the whole arena.
 */
#define ARENA_CHAIN_K 512
TEST_F(dev, weights_arena_small)
{
	static const char *const caps[] = { "2097152", "3145728", "4194304" };
	const size_t ybytes = 4 * ARENA_CHAIN_K * sizeof(float);
	float *y1 = calloc(1, ybytes), *y2 = calloc(1, ybytes);
	vnpu_compiled_model *cm;
	vnpu_status st;

	ASSERT_TRUE(y1 && y2);
	ASSERT_EQ(VNPU_OK, compile_dense(self->core, self->device, ARENA_CHAIN_K, 3, &cm));
	ASSERT_EQ(0, run_dense(_metadata, cm, ARENA_CHAIN_K, y1));
	vnpu_compiled_model_free(cm);
	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		ASSERT_EQ(0, setenv("VNPU_DEBUG_CS_ARENA", caps[i], 1));
		st = compile_dense(self->core, self->device, ARENA_CHAIN_K, 3, &cm);
		ASSERT_EQ(0, unsetenv("VNPU_DEBUG_CS_ARENA"));
		ASSERT_EQ(VNPU_OK, st);
		memset(y2, 0xff, ybytes);
		ASSERT_EQ(0, run_dense(_metadata, cm, ARENA_CHAIN_K, y2));
		vnpu_compiled_model_free(cm);
		EXPECT_EQ(0, memcmp(y1, y2, ybytes))
			TH_LOG("arena of %s bytes: other results", caps[i]);
	}
	free(y1);
	free(y2);
}

KSFT_MAIN_ORDER

int main(int argc, char **argv)
{
	if (access(ADD, R_OK) || access(CONV, R_OK) || access(F64, R_OK) ||
	    access(CASTLIKE, R_OK))
		return ksft_main_skip_all("libonnx-testdata is not installed");
	return runtime_test_main(argc, argv);
}

// SPDX-License-Identifier: MIT
/*
 * Control flow and non-tensor values through the public API, on ONNX node
 * test models (Debian's libonnx-testdata): Loop and Scan unrolled at
 * compile time with values known only at run time, their limits and
 * errors; sequence and optional ports (kinds, freezing, a sequence input
 * set at run time, reading a sequence output, the errors of each call),
 * and a sequence output through export and import.
 */
#include <string.h>
#include <unistd.h>

#include "harness.h"

#define NODE_DIR "/usr/share/libonnx-testdata/data/node/"
/* trip_count i64, cond bool, y f32[1] -> res_y f32[1], res_scan f32[5,1] */
#define LOOP NODE_DIR "test_loop11/model.onnx"
/* initial f32[2], x f32[3,2] -> y f32[2], z f32[3,2] */
#define SCAN NODE_DIR "test_scan9_sum/model.onnx"
/* sequence seq(i64), tensor i64[3] -> output_sequence seq(i64) */
#define INSERT NODE_DIR "test_sequence_insert_at_back/model.onnx"
/* optional_input optional(f32[4]) -> output f32[4] */
#define GET_ELEMENT NODE_DIR "test_optional_get_element/model.onnx"
/* cond bool -> sequence optional(seq(f32[5])): none when cond */
#define IF_OPT NODE_DIR "test_if_opt/model.onnx"

static int freeze_scalar(vnpu_model *m, const char *name, vnpu_element_type type, int64_t v)
{
	vnpu_shape scalar = { 0 };
	uint8_t b = v != 0;

	if (type == VNPU_TYPE_BOOL)
		return vnpu_model_freeze_input(m, name, type, &scalar, &b, 1);
	return vnpu_model_freeze_input(m, name, type, &scalar, &v, sizeof(v));
}

static int set_f32(vnpu_infer_request *req, const char *name, const float *v, size_t n)
{
	vnpu_tensor *t;
	void *data;

	CHECK_OK(vnpu_infer_request_get_tensor(req, name, &t));
	CHECK_OK(vnpu_tensor_get_data(t, &data));
	memcpy(data, v, n * sizeof(float));
	vnpu_tensor_free(t);
	return 0;
}

/* Output @name holds the @n floats @want. */
static int check_f32(vnpu_infer_request *req, const char *name, const float *want, size_t n)
{
	vnpu_tensor *t;
	uint64_t size;
	float *data;

	CHECK_OK(vnpu_infer_request_get_tensor(req, name, &t));
	CHECK_OK(vnpu_tensor_get_size(t, &size));
	CHECK_OK(vnpu_tensor_get_data(t, (void **)&data));
	CHECK(size == n);
	for (size_t i = 0; i < n; i++) {
		if (data[i] != want[i]) {
			fprintf(stderr, "%s[%zu] = %g, expected %g\n", name, i, data[i], want[i]);
			vnpu_tensor_free(t);
			return 1;
		}
	}
	vnpu_tensor_free(t);
	return 0;
}

/* Loop with a constant trip count and y set at run time: unrolled into
 * device work, so two runs give two answers. */
static int loop_unrolled(vnpu_core *core, const char *device)
{
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	vnpu_model *m;

	CHECK_OK(vnpu_core_read_model(core, LOOP, &m));
	CHECK_OK(freeze_scalar(m, "trip_count", VNPU_TYPE_I64, 5));
	CHECK_OK(freeze_scalar(m, "cond", VNPU_TYPE_BOOL, 1));
	CHECK_OK(vnpu_core_compile_model(core, m, device, NULL, &cm));
	vnpu_model_free(m);
	CHECK_OK(vnpu_compiled_model_create_infer_request(cm, &req));
	for (int run = 0; run < 2; run++) {
		float y = run ? -2.5f : 10.0f;
		float res_y = y + 15, scan[5] = { y + 1, y + 3, y + 6, y + 10, y + 15 };

		CHECK(!set_f32(req, "y", &y, 1));
		CHECK_OK(vnpu_infer_request_infer(req));
		CHECK(!check_f32(req, "res_y", &res_y, 1));
		CHECK(!check_f32(req, "res_scan", scan, 5));
	}
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
	return 0;
}

/* Loop: the trip count and the condition must be known at compile time,
 * and the unrolled size is capped. */
static int loop_errors(vnpu_core *core, const char *device)
{
	vnpu_compiled_model *cm;
	vnpu_shape one = { .rank = 1, .dims = { 1 } };
	vnpu_model *m;

	CHECK_OK(vnpu_core_read_model(core, LOOP, &m));
	CHECK_OK(vnpu_model_reshape(m, "y", &one));
	CHECK_OK(freeze_scalar(m, "cond", VNPU_TYPE_BOOL, 1));
	CHECK_ERR(vnpu_core_compile_model(core, m, device, NULL, &cm), VNPU_UNSUPPORTED);
	CHECK(strstr(vnpu_last_error(), "trip count is not known at compile time"));
	vnpu_model_free(m);

	CHECK_OK(vnpu_core_read_model(core, LOOP, &m));
	CHECK_OK(freeze_scalar(m, "trip_count", VNPU_TYPE_I64, 5));
	CHECK_ERR(vnpu_core_compile_model(core, m, device, NULL, &cm), VNPU_UNSUPPORTED);
	CHECK(strstr(vnpu_last_error(), "condition depends on runtime values"));
	vnpu_model_free(m);

	/* Past the limit once both are known: refused by the freeze, as a reshape. */
	CHECK_OK(vnpu_core_read_model(core, LOOP, &m));
	CHECK_OK(freeze_scalar(m, "trip_count", VNPU_TYPE_I64, 1ll << 40));
	CHECK_ERR(freeze_scalar(m, "cond", VNPU_TYPE_BOOL, 1), VNPU_UNSUPPORTED);
	CHECK(strstr(vnpu_last_error(), "above the limit"));
	vnpu_model_free(m);

	/* A false condition: no iteration, the outputs are the inputs. */
	CHECK_OK(vnpu_core_read_model(core, LOOP, &m));
	CHECK_OK(freeze_scalar(m, "trip_count", VNPU_TYPE_I64, 1ll << 40));
	CHECK_OK(freeze_scalar(m, "cond", VNPU_TYPE_BOOL, 0));
	CHECK_ERR(vnpu_core_compile_model(core, m, device, NULL, &cm), VNPU_UNSUPPORTED);
	CHECK(strstr(vnpu_last_error(), "scan outputs of no iterations"));
	vnpu_model_free(m);
	return 0;
}

/* Scan over a runtime input: the body once per row, z the running sums. */
static int scan_unrolled(vnpu_core *core, const char *device)
{
	static const float initial[2] = { 1, 2 }, x[6] = { 1, 2, 3, 4, 5, 6 };
	static const float y[2] = { 10, 14 }, z[6] = { 2, 4, 5, 8, 10, 14 };
	vnpu_query_report *r;
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	vnpu_model *m;

	CHECK_OK(vnpu_core_read_model(core, SCAN, &m));
	/* A query names the device for the Scan: its unrolled ops are its. */
	CHECK_OK(vnpu_core_query_model(core, m, device, &r));
	CHECK(r->count == 1 && !strcmp(r->entries[0].op_type, "Scan"));
	CHECK(r->entries[0].device && !strncmp(r->entries[0].device, device, 3));
	vnpu_query_report_free(r);
	CHECK_OK(vnpu_core_compile_model(core, m, device, NULL, &cm));
	vnpu_model_free(m);
	CHECK_OK(vnpu_compiled_model_create_infer_request(cm, &req));
	CHECK(!set_f32(req, "initial", initial, 2));
	CHECK(!set_f32(req, "x", x, 6));
	CHECK_OK(vnpu_infer_request_infer(req));
	CHECK(!check_f32(req, "y", y, 2));
	CHECK(!check_f32(req, "z", z, 6));
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
	return 0;
}

/* A sequence of @n i64 tensors of 1..@n elements, element k holding k + j. */
static int make_sequence(vnpu_tensor **seq, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		vnpu_shape shape = { .rank = 1, .dims = { (int64_t)k + 1 } };
		int64_t *data;

		CHECK_OK(vnpu_tensor_create(VNPU_TYPE_I64, &shape, &seq[k]));
		CHECK_OK(vnpu_tensor_get_data(seq[k], (void **)&data));
		for (size_t j = 0; j <= k; j++)
			data[j] = (int64_t)(k + j);
	}
	return 0;
}

/* The sequence output @name: @n of make_sequence's elements, then [7 8 9]. */
static int check_inserted(vnpu_infer_request *req, const char *name, size_t n)
{
	vnpu_port_kind kind;
	size_t size;

	CHECK_OK(vnpu_infer_request_get_kind(req, name, &kind));
	CHECK(kind == VNPU_PORT_SEQUENCE);
	CHECK_OK(vnpu_infer_request_get_sequence_size(req, name, &size));
	CHECK(size == n + 1);
	for (size_t k = 0; k <= n; k++) {
		vnpu_tensor *t;
		vnpu_shape shape;
		int64_t *data;

		CHECK_OK(vnpu_infer_request_get_sequence_tensor(req, name, k, &t));
		CHECK_OK(vnpu_tensor_get_shape(t, &shape));
		CHECK_OK(vnpu_tensor_get_data(t, (void **)&data));
		CHECK(shape.rank == 1 && shape.dims[0] == (k < n ? (int64_t)k + 1 : 3));
		for (int64_t j = 0; j < shape.dims[0]; j++)
			CHECK(data[j] == (k < n ? (int64_t)k + j : 7 + j));
		vnpu_tensor_free(t);
	}
	return 0;
}

/* A frozen sequence input, a tensor set at run time, a sequence output;
 * the same through export and import. */
static int sequence_ports(vnpu_core *core, const char *device)
{
	vnpu_tensor *seq[3], *tensor;
	vnpu_compiled_model *cm, *cm2;
	vnpu_shape shape;
	vnpu_infer_request *req;
	vnpu_port_kind kind;
	vnpu_element_type type;
	vnpu_model *m;
	int64_t *data;
	size_t size;
	void *blob;

	CHECK_OK(vnpu_core_read_model(core, INSERT, &m));
	CHECK_OK(vnpu_model_input_kind(m, 0, &kind));
	CHECK(kind == VNPU_PORT_SEQUENCE);
	CHECK_OK(vnpu_model_input_type(m, 0, &type));
	CHECK(type == VNPU_TYPE_I64);
	CHECK_OK(vnpu_model_input_kind(m, 1, &kind));
	CHECK(kind == VNPU_PORT_TENSOR);
	CHECK_ERR(vnpu_model_input_shape(m, 0, &shape), VNPU_INVALID_ARGUMENT);
	CHECK_OK(vnpu_model_output_kind(m, 0, &kind));
	CHECK(kind == VNPU_PORT_SEQUENCE);
	CHECK(!make_sequence(seq, 3));
	CHECK_OK(vnpu_model_freeze_sequence(m, "sequence", seq, 3));
	for (int k = 0; k < 3; k++)
		vnpu_tensor_free(seq[k]);
	CHECK_OK(vnpu_core_compile_model(core, m, device, NULL, &cm));
	vnpu_model_free(m);

	CHECK_OK(vnpu_compiled_model_create_infer_request(cm, &req));
	CHECK_OK(vnpu_infer_request_get_tensor(req, "tensor", &tensor));
	CHECK_OK(vnpu_tensor_get_data(tensor, (void **)&data));
	data[0] = 7;
	data[1] = 8;
	data[2] = 9;
	vnpu_tensor_free(tensor);
	CHECK_OK(vnpu_infer_request_infer(req));
	CHECK(!check_inserted(req, "output_sequence", 3));
	vnpu_infer_request_free(req);

	CHECK_OK(vnpu_compiled_model_export(cm, &blob, &size));
	vnpu_compiled_model_free(cm);
	CHECK_OK(vnpu_core_import_model(core, blob, size, NULL, &cm2));
	vnpu_free(blob);
	CHECK_OK(vnpu_compiled_model_create_infer_request(cm2, &req));
	CHECK_OK(vnpu_infer_request_get_tensor(req, "tensor", &tensor));
	CHECK_OK(vnpu_tensor_get_data(tensor, (void **)&data));
	data[0] = 7;
	data[1] = 8;
	data[2] = 9;
	vnpu_tensor_free(tensor);
	CHECK_OK(vnpu_infer_request_infer(req));
	CHECK(!check_inserted(req, "output_sequence", 3));
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm2);
	return 0;
}

/* Every sequence call with bad arguments: a clear status, nothing done. */
static int sequence_bad_input(vnpu_core *core, const char *device)
{
	vnpu_shape three = { .rank = 1, .dims = { 3 } }, scalar = { 0 };
	vnpu_tensor *seq[2] = { NULL, NULL }, *f32, *t;
	vnpu_query_report *r;
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	vnpu_port_kind kind;
	vnpu_model *m;
	int64_t v = 0;
	size_t size;

	CHECK_OK(vnpu_core_read_model(core, INSERT, &m));
	/* A query answers before the sequence has a length. */
	CHECK_OK(vnpu_core_query_model(core, m, device, &r));
	CHECK(r->count == 1 && !strcmp(r->entries[0].op_type, "SequenceInsert"));
	vnpu_query_report_free(r);
	CHECK_ERR(vnpu_model_input_kind(m, 2, &kind), VNPU_NOT_FOUND);
	CHECK_ERR(vnpu_model_input_kind(NULL, 0, &kind), VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_model_output_kind(m, 0, NULL), VNPU_INVALID_ARGUMENT);
	/* Not frozen: its length is not known. */
	CHECK_ERR(vnpu_core_compile_model(core, m, device, NULL, &cm), VNPU_INVALID_ARGUMENT);
	CHECK(strstr(vnpu_last_error(), "vnpu_model_freeze_sequence"));
	CHECK_ERR(vnpu_model_freeze_sequence(NULL, "sequence", seq, 0), VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_model_freeze_sequence(m, NULL, seq, 0), VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_model_freeze_sequence(m, "sequence", NULL, 1), VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_model_freeze_sequence(m, "sequence", seq, 1), VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_model_freeze_sequence(m, "nonesuch", seq, 0), VNPU_NOT_FOUND);
	CHECK_ERR(vnpu_model_freeze_sequence(m, "tensor", seq, 0), VNPU_INVALID_ARGUMENT);
	CHECK_OK(vnpu_tensor_create(VNPU_TYPE_F32, &three, &f32));
	CHECK_ERR(vnpu_model_freeze_sequence(m, "sequence", &f32, 1), VNPU_INVALID_ARGUMENT);
	vnpu_tensor_free(f32);
	CHECK_ERR(vnpu_model_freeze_none(m, "sequence"), VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_model_freeze_none(m, NULL), VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_model_freeze_input(m, "sequence", VNPU_TYPE_I64, &scalar, &v, sizeof(v)),
		  VNPU_INVALID_ARGUMENT);
	/* The failures left the input as it was: an empty sequence works. */
	CHECK_OK(vnpu_model_freeze_sequence(m, "sequence", seq, 0));
	CHECK_ERR(vnpu_model_freeze_sequence(m, "sequence", seq, 0), VNPU_NOT_FOUND);
	CHECK_OK(vnpu_core_compile_model(core, m, device, NULL, &cm));
	vnpu_model_free(m);

	CHECK_OK(vnpu_compiled_model_create_infer_request(cm, &req));
	CHECK_OK(vnpu_infer_request_infer(req));
	CHECK_OK(vnpu_infer_request_get_sequence_size(req, "output_sequence", &size));
	CHECK(size == 1);
	CHECK_OK(vnpu_infer_request_get_kind(req, "tensor", &kind));
	CHECK(kind == VNPU_PORT_TENSOR);
	CHECK_ERR(vnpu_infer_request_get_kind(req, "nonesuch", &kind), VNPU_NOT_FOUND);
	CHECK_ERR(vnpu_infer_request_get_kind(req, NULL, &kind), VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_infer_request_get_kind(NULL, "tensor", &kind), VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_infer_request_get_sequence_size(req, "tensor", &size),
		  VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_infer_request_get_sequence_size(req, "nonesuch", &size), VNPU_NOT_FOUND);
	CHECK_ERR(vnpu_infer_request_get_sequence_size(req, "output_sequence", NULL),
		  VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_infer_request_get_sequence_tensor(req, "output_sequence", 1, &t),
		  VNPU_NOT_FOUND);
	CHECK_ERR(vnpu_infer_request_get_sequence_tensor(req, "output_sequence", SIZE_MAX, &t),
		  VNPU_NOT_FOUND);
	CHECK_ERR(vnpu_infer_request_get_sequence_tensor(req, "tensor", 0, &t),
		  VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_infer_request_get_sequence_tensor(req, "output_sequence", 0, NULL),
		  VNPU_INVALID_ARGUMENT);
	CHECK_OK(vnpu_infer_request_get_sequence_tensor(req, "output_sequence", 0, &t));
	vnpu_tensor_free(t);
	/* The element is also a tensor of its own name. */
	CHECK_OK(vnpu_infer_request_get_tensor(req, "output_sequence[0]", &t));
	vnpu_tensor_free(t);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
	return 0;
}

/* A sequence input of a fixed length whose values come at run time. */
static int sequence_input(vnpu_core *core, const char *device)
{
	vnpu_shape shapes[3] = { { .rank = 1, .dims = { 1 } }, { .rank = 1, .dims = { 2 } },
				 { .rank = 1, .dims = { 3 } } };
	vnpu_tensor *seq[3], *bad[2], *tensor;
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	vnpu_port_kind kind;
	vnpu_model *m;
	int64_t *data;
	size_t size;

	CHECK_OK(vnpu_core_read_model(core, INSERT, &m));
	CHECK_ERR(vnpu_model_reshape_sequence(m, "sequence", 2, NULL), VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_model_reshape_sequence(m, "tensor", 1, shapes), VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_model_reshape_sequence(m, "nonesuch", 1, shapes), VNPU_NOT_FOUND);
	shapes[1].dims[0] = -5;
	CHECK_ERR(vnpu_model_reshape_sequence(m, "sequence", 2, shapes), VNPU_INVALID_ARGUMENT);
	shapes[1].dims[0] = 2;
	CHECK_OK(vnpu_model_reshape_sequence(m, "sequence", 3, shapes));
	CHECK_ERR(vnpu_model_reshape_sequence(m, "sequence", 2, shapes), VNPU_INVALID_ARGUMENT);
	CHECK_OK(vnpu_model_reshape_sequence(m, "sequence", 3, shapes));	/* same length */
	CHECK_OK(vnpu_core_compile_model(core, m, device, NULL, &cm));
	vnpu_model_free(m);

	CHECK_OK(vnpu_compiled_model_create_infer_request(cm, &req));
	CHECK_OK(vnpu_infer_request_get_kind(req, "sequence", &kind));
	CHECK(kind == VNPU_PORT_SEQUENCE);
	CHECK_OK(vnpu_infer_request_get_sequence_size(req, "sequence", &size));
	CHECK(size == 3);
	CHECK(!make_sequence(seq, 3));
	CHECK_OK(vnpu_infer_request_get_tensor(req, "tensor", &tensor));
	CHECK_OK(vnpu_tensor_get_data(tensor, (void **)&data));
	data[0] = 7;
	data[1] = 8;
	data[2] = 9;
	vnpu_tensor_free(tensor);

	/* Bad sequences change nothing. */
	CHECK_ERR(vnpu_infer_request_set_sequence(req, "sequence", seq, 2), VNPU_INVALID_ARGUMENT);
	bad[0] = seq[1];
	bad[1] = seq[0];
	CHECK_ERR(vnpu_infer_request_set_sequence(req, "sequence", bad, 2), VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_infer_request_set_sequence(req, "sequence", NULL, 3), VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_infer_request_set_sequence(req, "output_sequence", seq, 4),
		  VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_infer_request_set_sequence(req, "tensor", seq, 1), VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_infer_request_set_sequence(req, "nonesuch", seq, 1), VNPU_NOT_FOUND);
	CHECK_ERR(vnpu_infer_request_set_sequence(NULL, "sequence", seq, 3), VNPU_INVALID_ARGUMENT);
	tensor = seq[2];
	seq[2] = NULL;
	CHECK_ERR(vnpu_infer_request_set_sequence(req, "sequence", seq, 3), VNPU_INVALID_ARGUMENT);
	seq[2] = tensor;
	CHECK_OK(vnpu_infer_request_set_sequence(req, "sequence", seq, 3));
	CHECK_OK(vnpu_infer_request_infer(req));
	CHECK(!check_inserted(req, "output_sequence", 3));
	/* The request holds its own references: the caller's may go. */
	for (int k = 0; k < 3; k++)
		vnpu_tensor_free(seq[k]);
	CHECK_OK(vnpu_infer_request_get_sequence_tensor(req, "sequence", 2, &tensor));
	CHECK_OK(vnpu_tensor_get_data(tensor, (void **)&data));
	CHECK(data[0] == 2 && data[2] == 4);
	vnpu_tensor_free(tensor);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
	return 0;
}

/* Optionals: a present optional tensor compiles as a tensor input; an
 * optional compiled without a value is NONE. */
static int optional_ports(vnpu_core *core, const char *device)
{
	static const float x[4] = { 1, -2, 3.5f, 4 };
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	vnpu_port_kind kind;
	vnpu_model *m;
	size_t size;

	CHECK_OK(vnpu_core_read_model(core, GET_ELEMENT, &m));
	CHECK_OK(vnpu_model_input_kind(m, 0, &kind));
	CHECK(kind == VNPU_PORT_OPTIONAL);
	CHECK_OK(vnpu_core_compile_model(core, m, device, NULL, &cm));
	vnpu_model_free(m);
	CHECK_OK(vnpu_compiled_model_create_infer_request(cm, &req));
	CHECK_OK(vnpu_infer_request_get_kind(req, "optional_input", &kind));
	CHECK(kind == VNPU_PORT_TENSOR);
	CHECK(!set_f32(req, "optional_input", x, 4));
	CHECK_OK(vnpu_infer_request_infer(req));
	CHECK(!check_f32(req, "output", x, 4));
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);

	/* OptionalGetElement of an optional frozen empty. */
	CHECK_OK(vnpu_core_read_model(core, GET_ELEMENT, &m));
	CHECK_OK(vnpu_model_freeze_none(m, "optional_input"));
	CHECK_ERR(vnpu_core_compile_model(core, m, device, NULL, &cm), VNPU_INVALID_ARGUMENT);
	CHECK(strstr(vnpu_last_error(), "no value"));
	vnpu_model_free(m);

	CHECK_OK(vnpu_core_read_model(core, IF_OPT, &m));
	CHECK_OK(vnpu_model_output_kind(m, 0, &kind));
	CHECK(kind == VNPU_PORT_OPTIONAL_SEQUENCE);
	CHECK_ERR(vnpu_model_freeze_none(m, "cond"), VNPU_INVALID_ARGUMENT);
	CHECK_OK(freeze_scalar(m, "cond", VNPU_TYPE_BOOL, 1));
	CHECK_OK(vnpu_core_compile_model(core, m, device, NULL, &cm));
	vnpu_model_free(m);
	CHECK_OK(vnpu_compiled_model_create_infer_request(cm, &req));
	CHECK_OK(vnpu_infer_request_infer(req));
	CHECK_OK(vnpu_infer_request_get_kind(req, "sequence", &kind));
	CHECK(kind == VNPU_PORT_NONE);
	CHECK_ERR(vnpu_infer_request_get_sequence_size(req, "sequence", &size),
		  VNPU_INVALID_ARGUMENT);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct test tests[] = {
		TEST(loop_unrolled),
		TEST(loop_errors),
		TEST(scan_unrolled),
		TEST(sequence_ports),
		TEST(sequence_bad_input),
		TEST(sequence_input),
		TEST(optional_ports),
	};

	if (access(LOOP, R_OK) || access(SCAN, R_OK) || access(INSERT, R_OK) ||
	    access(GET_ELEMENT, R_OK) || access(IF_OPT, R_OK)) {
		printf("skip: libonnx-testdata is not installed\n");
		return 77;
	}
	return run_tests(argc, argv, tests, sizeof(tests) / sizeof(tests[0]));
}

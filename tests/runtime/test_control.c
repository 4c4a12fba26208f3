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

#include "runtime_test.h"

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

static int set_f32(struct __test_metadata *_metadata, vnpu_infer_request *req, const char *name,
		   const float *v, size_t n)
{
	vnpu_tensor *t;
	void *data;

	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_tensor(req, name, &t));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(t, &data));
	memcpy(data, v, n * sizeof(float));
	vnpu_tensor_free(t);
	return 0;
}

/* Output @name holds the @n floats @want. */
static int check_f32(struct __test_metadata *_metadata, vnpu_infer_request *req, const char *name,
		     const float *want, size_t n)
{
	vnpu_tensor *t;
	uint64_t size;
	float *data;

	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_tensor(req, name, &t));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_size(t, &size));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(t, (void **)&data));
	ASSERT_EQ(n, size);
	for (size_t i = 0; i < n; i++) {
		if (data[i] != want[i]) {
			TH_LOG("%s[%zu] = %g, expected %g", name, i, data[i], want[i]);
			vnpu_tensor_free(t);
			return 1;
		}
	}
	vnpu_tensor_free(t);
	return 0;
}

/* Loop with a constant trip count and y set at run time: unrolled into
 * device work, so two runs give two answers. */
TEST_F(dev, loop_unrolled)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	vnpu_model *m;

	ASSERT_EQ(VNPU_OK, vnpu_core_read_model(core, LOOP, &m));
	ASSERT_EQ(VNPU_OK, freeze_scalar(m, "trip_count", VNPU_TYPE_I64, 5));
	ASSERT_EQ(VNPU_OK, freeze_scalar(m, "cond", VNPU_TYPE_BOOL, 1));
	ASSERT_EQ(VNPU_OK, vnpu_core_compile_model(core, m, device, NULL, &cm));
	vnpu_model_free(m);
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	for (int run = 0; run < 2; run++) {
		float y = run ? -2.5f : 10.0f;
		float res_y = y + 15, scan[5] = { y + 1, y + 3, y + 6, y + 10, y + 15 };

		ASSERT_EQ(0, set_f32(_metadata, req, "y", &y, 1));
		ASSERT_EQ(VNPU_OK, vnpu_infer_request_infer(req));
		ASSERT_EQ(0, check_f32(_metadata, req, "res_y", &res_y, 1));
		ASSERT_EQ(0, check_f32(_metadata, req, "res_scan", scan, 5));
	}
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
}

/* Loop: the trip count and the condition must be known at compile time,
 * and the unrolled size is capped. */
TEST_F(dev, loop_errors)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	vnpu_compiled_model *cm;
	vnpu_shape one = { .rank = 1, .dims = { 1 } };
	vnpu_model *m;

	ASSERT_EQ(VNPU_OK, vnpu_core_read_model(core, LOOP, &m));
	ASSERT_EQ(VNPU_OK, vnpu_model_reshape(m, "y", &one));
	ASSERT_EQ(VNPU_OK, freeze_scalar(m, "cond", VNPU_TYPE_BOOL, 1));
	ASSERT_FAILS(VNPU_UNSUPPORTED, vnpu_core_compile_model(core, m, device, NULL, &cm));
	ASSERT_NE(NULL, strstr(vnpu_last_error(), "trip count is not known at compile time"));
	vnpu_model_free(m);

	ASSERT_EQ(VNPU_OK, vnpu_core_read_model(core, LOOP, &m));
	ASSERT_EQ(VNPU_OK, freeze_scalar(m, "trip_count", VNPU_TYPE_I64, 5));
	ASSERT_FAILS(VNPU_UNSUPPORTED, vnpu_core_compile_model(core, m, device, NULL, &cm));
	ASSERT_NE(NULL, strstr(vnpu_last_error(), "condition depends on runtime values"));
	vnpu_model_free(m);

	/* Past the limit once both are known: refused by the freeze, as a reshape. */
	ASSERT_EQ(VNPU_OK, vnpu_core_read_model(core, LOOP, &m));
	ASSERT_EQ(VNPU_OK, freeze_scalar(m, "trip_count", VNPU_TYPE_I64, 1ll << 40));
	ASSERT_FAILS(VNPU_UNSUPPORTED, freeze_scalar(m, "cond", VNPU_TYPE_BOOL, 1));
	ASSERT_NE(NULL, strstr(vnpu_last_error(), "above the limit"));
	vnpu_model_free(m);

	/* A false condition: no iteration, the outputs are the inputs. */
	ASSERT_EQ(VNPU_OK, vnpu_core_read_model(core, LOOP, &m));
	ASSERT_EQ(VNPU_OK, freeze_scalar(m, "trip_count", VNPU_TYPE_I64, 1ll << 40));
	ASSERT_EQ(VNPU_OK, freeze_scalar(m, "cond", VNPU_TYPE_BOOL, 0));
	ASSERT_FAILS(VNPU_UNSUPPORTED, vnpu_core_compile_model(core, m, device, NULL, &cm));
	ASSERT_NE(NULL, strstr(vnpu_last_error(), "scan outputs of no iterations"));
	vnpu_model_free(m);
}

/* Scan over a runtime input: the body once per row, z the running sums. */
TEST_F(dev, scan_unrolled)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	static const float initial[2] = { 1, 2 }, x[6] = { 1, 2, 3, 4, 5, 6 };
	static const float y[2] = { 10, 14 }, z[6] = { 2, 4, 5, 8, 10, 14 };
	vnpu_query_report *r;
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	vnpu_model *m;

	ASSERT_EQ(VNPU_OK, vnpu_core_read_model(core, SCAN, &m));
	/* A query names the device for the Scan: its unrolled ops are its. */
	ASSERT_EQ(VNPU_OK, vnpu_core_query_model(core, m, device, &r));
	ASSERT_TRUE(r->count == 1 && !strcmp(r->entries[0].op_type, "Scan"));
	ASSERT_TRUE(r->entries[0].device && !strncmp(r->entries[0].device, device, 3));
	vnpu_query_report_free(r);
	ASSERT_EQ(VNPU_OK, vnpu_core_compile_model(core, m, device, NULL, &cm));
	vnpu_model_free(m);
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	ASSERT_EQ(0, set_f32(_metadata, req, "initial", initial, 2));
	ASSERT_EQ(0, set_f32(_metadata, req, "x", x, 6));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_infer(req));
	ASSERT_EQ(0, check_f32(_metadata, req, "y", y, 2));
	ASSERT_EQ(0, check_f32(_metadata, req, "z", z, 6));
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
}

/* A sequence of @n i64 tensors of 1..@n elements, element k holding k + j. */
static int make_sequence(struct __test_metadata *_metadata, vnpu_tensor **seq, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		vnpu_shape shape = { .rank = 1, .dims = { (int64_t)k + 1 } };
		int64_t *data;

		ASSERT_EQ(VNPU_OK, vnpu_tensor_create(VNPU_TYPE_I64, &shape, &seq[k]));
		ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(seq[k], (void **)&data));
		for (size_t j = 0; j <= k; j++)
			data[j] = (int64_t)(k + j);
	}
	return 0;
}

/* The sequence output @name: @n of make_sequence's elements, then [7 8 9]. */
static int check_inserted(struct __test_metadata *_metadata, vnpu_infer_request *req,
			  const char *name, size_t n)
{
	vnpu_port_kind kind;
	size_t size;

	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_kind(req, name, &kind));
	ASSERT_EQ(VNPU_PORT_SEQUENCE, kind);
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_sequence_size(req, name, &size));
	ASSERT_EQ(n + 1, size);
	for (size_t k = 0; k <= n; k++) {
		vnpu_tensor *t;
		vnpu_shape shape;
		int64_t *data;

		ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_sequence_tensor(req, name, k, &t));
		ASSERT_EQ(VNPU_OK, vnpu_tensor_get_shape(t, &shape));
		ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(t, (void **)&data));
		ASSERT_TRUE(shape.rank == 1 && shape.dims[0] == (k < n ? (int64_t)k + 1 : 3));
		for (int64_t j = 0; j < shape.dims[0]; j++) {
			ASSERT_EQ((k < n ? (int64_t)k + j : 7 + j), data[j]);
		}
		vnpu_tensor_free(t);
	}
	return 0;
}

/* A frozen sequence input, a tensor set at run time, a sequence output;
 * the same through export and import. */
TEST_F(dev, sequence_ports)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
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

	ASSERT_EQ(VNPU_OK, vnpu_core_read_model(core, INSERT, &m));
	ASSERT_EQ(VNPU_OK, vnpu_model_input_kind(m, 0, &kind));
	ASSERT_EQ(VNPU_PORT_SEQUENCE, kind);
	ASSERT_EQ(VNPU_OK, vnpu_model_input_type(m, 0, &type));
	ASSERT_EQ(VNPU_TYPE_I64, type);
	ASSERT_EQ(VNPU_OK, vnpu_model_input_kind(m, 1, &kind));
	ASSERT_EQ(VNPU_PORT_TENSOR, kind);
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_model_input_shape(m, 0, &shape));
	ASSERT_EQ(VNPU_OK, vnpu_model_output_kind(m, 0, &kind));
	ASSERT_EQ(VNPU_PORT_SEQUENCE, kind);
	ASSERT_EQ(0, make_sequence(_metadata, seq, 3));
	ASSERT_EQ(VNPU_OK, vnpu_model_freeze_sequence(m, "sequence", seq, 3));
	for (int k = 0; k < 3; k++)
		vnpu_tensor_free(seq[k]);
	ASSERT_EQ(VNPU_OK, vnpu_core_compile_model(core, m, device, NULL, &cm));
	vnpu_model_free(m);

	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_tensor(req, "tensor", &tensor));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(tensor, (void **)&data));
	data[0] = 7;
	data[1] = 8;
	data[2] = 9;
	vnpu_tensor_free(tensor);
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_infer(req));
	ASSERT_EQ(0, check_inserted(_metadata, req, "output_sequence", 3));
	vnpu_infer_request_free(req);

	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_export(cm, &blob, &size));
	vnpu_compiled_model_free(cm);
	ASSERT_EQ(VNPU_OK, vnpu_core_import_model(core, blob, size, NULL, &cm2));
	vnpu_free(blob);
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm2, &req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_tensor(req, "tensor", &tensor));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(tensor, (void **)&data));
	data[0] = 7;
	data[1] = 8;
	data[2] = 9;
	vnpu_tensor_free(tensor);
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_infer(req));
	ASSERT_EQ(0, check_inserted(_metadata, req, "output_sequence", 3));
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm2);
}

/* Every sequence call with bad arguments: a clear status, nothing done. */
TEST_F(dev, sequence_bad_input)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	vnpu_shape three = { .rank = 1, .dims = { 3 } }, scalar = { 0 };
	vnpu_tensor *seq[2] = { NULL, NULL }, *f32, *t;
	vnpu_query_report *r;
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	vnpu_port_kind kind;
	vnpu_model *m;
	int64_t v = 0;
	size_t size;

	ASSERT_EQ(VNPU_OK, vnpu_core_read_model(core, INSERT, &m));
	/* A query answers before the sequence has a length. */
	ASSERT_EQ(VNPU_OK, vnpu_core_query_model(core, m, device, &r));
	ASSERT_TRUE(r->count == 1 && !strcmp(r->entries[0].op_type, "SequenceInsert"));
	vnpu_query_report_free(r);
	ASSERT_FAILS(VNPU_NOT_FOUND, vnpu_model_input_kind(m, 2, &kind));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_model_input_kind(NULL, 0, &kind));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_model_output_kind(m, 0, NULL));
	/* Not frozen: its length is not known. */
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_core_compile_model(core, m, device, NULL, &cm));
	ASSERT_NE(NULL, strstr(vnpu_last_error(), "vnpu_model_freeze_sequence"));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_model_freeze_sequence(NULL, "sequence", seq, 0));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_model_freeze_sequence(m, NULL, seq, 0));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_model_freeze_sequence(m, "sequence", NULL, 1));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_model_freeze_sequence(m, "sequence", seq, 1));
	ASSERT_FAILS(VNPU_NOT_FOUND, vnpu_model_freeze_sequence(m, "nonesuch", seq, 0));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_model_freeze_sequence(m, "tensor", seq, 0));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_create(VNPU_TYPE_F32, &three, &f32));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_model_freeze_sequence(m, "sequence", &f32, 1));
	vnpu_tensor_free(f32);
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_model_freeze_none(m, "sequence"));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_model_freeze_none(m, NULL));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_model_freeze_input(m, "sequence", VNPU_TYPE_I64, &scalar, &v, sizeof(v)));
	/* The failures left the input as it was: an empty sequence works. */
	ASSERT_EQ(VNPU_OK, vnpu_model_freeze_sequence(m, "sequence", seq, 0));
	ASSERT_FAILS(VNPU_NOT_FOUND, vnpu_model_freeze_sequence(m, "sequence", seq, 0));
	ASSERT_EQ(VNPU_OK, vnpu_core_compile_model(core, m, device, NULL, &cm));
	vnpu_model_free(m);

	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_infer(req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_sequence_size(req, "output_sequence", &size));
	ASSERT_EQ(1, size);
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_kind(req, "tensor", &kind));
	ASSERT_EQ(VNPU_PORT_TENSOR, kind);
	ASSERT_FAILS(VNPU_NOT_FOUND, vnpu_infer_request_get_kind(req, "nonesuch", &kind));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_infer_request_get_kind(req, NULL, &kind));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_infer_request_get_kind(NULL, "tensor", &kind));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_infer_request_get_sequence_size(req, "tensor", &size));
	ASSERT_FAILS(VNPU_NOT_FOUND, vnpu_infer_request_get_sequence_size(req, "nonesuch", &size));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_infer_request_get_sequence_size(req, "output_sequence", NULL));
	ASSERT_FAILS(VNPU_NOT_FOUND,
		     vnpu_infer_request_get_sequence_tensor(req, "output_sequence", 1, &t));
	ASSERT_FAILS(VNPU_NOT_FOUND,
		     vnpu_infer_request_get_sequence_tensor(req, "output_sequence", SIZE_MAX, &t));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_infer_request_get_sequence_tensor(req, "tensor", 0, &t));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_infer_request_get_sequence_tensor(req, "output_sequence", 0, NULL));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_sequence_tensor(req, "output_sequence", 0, &t));
	vnpu_tensor_free(t);
	/* The element is also a tensor of its own name. */
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_tensor(req, "output_sequence[0]", &t));
	vnpu_tensor_free(t);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
}

/* A sequence input of a fixed length whose values come at run time. */
TEST_F(dev, sequence_input)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	vnpu_shape shapes[3] = { { .rank = 1, .dims = { 1 } }, { .rank = 1, .dims = { 2 } },
				 { .rank = 1, .dims = { 3 } } };
	vnpu_tensor *seq[3], *bad[2], *tensor;
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	vnpu_port_kind kind;
	vnpu_model *m;
	int64_t *data;
	size_t size;

	ASSERT_EQ(VNPU_OK, vnpu_core_read_model(core, INSERT, &m));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_model_reshape_sequence(m, "sequence", 2, NULL));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_model_reshape_sequence(m, "tensor", 1, shapes));
	ASSERT_FAILS(VNPU_NOT_FOUND, vnpu_model_reshape_sequence(m, "nonesuch", 1, shapes));
	shapes[1].dims[0] = -5;
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_model_reshape_sequence(m, "sequence", 2, shapes));
	shapes[1].dims[0] = 2;
	ASSERT_EQ(VNPU_OK, vnpu_model_reshape_sequence(m, "sequence", 3, shapes));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_model_reshape_sequence(m, "sequence", 2, shapes));
	ASSERT_EQ(VNPU_OK, vnpu_model_reshape_sequence(m, "sequence", 3,
						       shapes));	/* same length */
	ASSERT_EQ(VNPU_OK, vnpu_core_compile_model(core, m, device, NULL, &cm));
	vnpu_model_free(m);

	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_kind(req, "sequence", &kind));
	ASSERT_EQ(VNPU_PORT_SEQUENCE, kind);
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_sequence_size(req, "sequence", &size));
	ASSERT_EQ(3, size);
	ASSERT_EQ(0, make_sequence(_metadata, seq, 3));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_tensor(req, "tensor", &tensor));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(tensor, (void **)&data));
	data[0] = 7;
	data[1] = 8;
	data[2] = 9;
	vnpu_tensor_free(tensor);

	/* Bad sequences change nothing. */
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_infer_request_set_sequence(req, "sequence", seq, 2));
	bad[0] = seq[1];
	bad[1] = seq[0];
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_infer_request_set_sequence(req, "sequence", bad, 2));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_infer_request_set_sequence(req, "sequence", NULL, 3));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_infer_request_set_sequence(req, "output_sequence", seq, 4));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_infer_request_set_sequence(req, "tensor", seq, 1));
	ASSERT_FAILS(VNPU_NOT_FOUND, vnpu_infer_request_set_sequence(req, "nonesuch", seq, 1));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_infer_request_set_sequence(NULL, "sequence", seq, 3));
	tensor = seq[2];
	seq[2] = NULL;
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_infer_request_set_sequence(req, "sequence", seq, 3));
	seq[2] = tensor;
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_sequence(req, "sequence", seq, 3));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_infer(req));
	ASSERT_EQ(0, check_inserted(_metadata, req, "output_sequence", 3));
	/* The request holds its own references: the caller's may go. */
	for (int k = 0; k < 3; k++)
		vnpu_tensor_free(seq[k]);
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_sequence_tensor(req, "sequence", 2, &tensor));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(tensor, (void **)&data));
	ASSERT_TRUE(data[0] == 2 && data[2] == 4);
	vnpu_tensor_free(tensor);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
}

/* Optionals: a present optional tensor compiles as a tensor input; an
 * optional compiled without a value is NONE. */
TEST_F(dev, optional_ports)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	static const float x[4] = { 1, -2, 3.5f, 4 };
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	vnpu_port_kind kind;
	vnpu_model *m;
	size_t size;

	ASSERT_EQ(VNPU_OK, vnpu_core_read_model(core, GET_ELEMENT, &m));
	ASSERT_EQ(VNPU_OK, vnpu_model_input_kind(m, 0, &kind));
	ASSERT_EQ(VNPU_PORT_OPTIONAL, kind);
	ASSERT_EQ(VNPU_OK, vnpu_core_compile_model(core, m, device, NULL, &cm));
	vnpu_model_free(m);
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_kind(req, "optional_input", &kind));
	ASSERT_EQ(VNPU_PORT_TENSOR, kind);
	ASSERT_EQ(0, set_f32(_metadata, req, "optional_input", x, 4));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_infer(req));
	ASSERT_EQ(0, check_f32(_metadata, req, "output", x, 4));
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);

	/* OptionalGetElement of an optional frozen empty. */
	ASSERT_EQ(VNPU_OK, vnpu_core_read_model(core, GET_ELEMENT, &m));
	ASSERT_EQ(VNPU_OK, vnpu_model_freeze_none(m, "optional_input"));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_core_compile_model(core, m, device, NULL, &cm));
	ASSERT_NE(NULL, strstr(vnpu_last_error(), "no value"));
	vnpu_model_free(m);

	ASSERT_EQ(VNPU_OK, vnpu_core_read_model(core, IF_OPT, &m));
	ASSERT_EQ(VNPU_OK, vnpu_model_output_kind(m, 0, &kind));
	ASSERT_EQ(VNPU_PORT_OPTIONAL_SEQUENCE, kind);
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_model_freeze_none(m, "cond"));
	ASSERT_EQ(VNPU_OK, freeze_scalar(m, "cond", VNPU_TYPE_BOOL, 1));
	ASSERT_EQ(VNPU_OK, vnpu_core_compile_model(core, m, device, NULL, &cm));
	vnpu_model_free(m);
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_infer(req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_kind(req, "sequence", &kind));
	ASSERT_EQ(VNPU_PORT_NONE, kind);
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_infer_request_get_sequence_size(req, "sequence", &size));
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
}

KSFT_MAIN_ORDER

int main(int argc, char **argv)
{
	if (access(LOOP, R_OK) || access(SCAN, R_OK) || access(INSERT, R_OK) ||
	    access(GET_ELEMENT, R_OK) || access(IF_OPT, R_OK))
		return ksft_main_skip_all("libonnx-testdata is not installed");
	return runtime_test_main(argc, argv);
}

// SPDX-License-Identifier: MIT
/*
 * String tensors: the tensor calls (bounds, NUL bytes, the calls that
 * refuse the type) and models of strings run on the host: Cast to and
 * from text, StringNormalizer, async runs, and what compile, export,
 * set_tensor and infer refuse.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime_test.h"
#include "onnx_writer.h"

enum { ATTR_S = 4, ATTR_STRINGS = 9, ATTR_STRING = 3, ATTR_STRINGS_TYPE = 8,
       ONNX_STRING = 8 };

/* A node @op from @in to @out; @attrs (freed) holds its attributes. */
static void node(struct pb *g, const char *op, const char *in, const char *out,
		 struct pb *attrs, int num_attrs)
{
	struct pb n = { 0 };

	pb_str(&n, NODE_INPUT, in);
	pb_str(&n, NODE_OUTPUT, out);
	pb_str(&n, NODE_OP, op);
	for (int i = 0; i < num_attrs; i++)
		pb_msg(&n, NODE_ATTR, &attrs[i]);
	pb_msg(g, GRAPH_NODE, &n);
}

static void int_attr(struct pb *a, const char *name, int64_t v)
{
	pb_str(a, ATTR_NAME, name);
	pb_int(a, ATTR_I, v);
	pb_int(a, ATTR_TYPE, ATTR_INT);
}

static void cast(struct pb *g, const char *in, const char *out, int to)
{
	struct pb a = { 0 };

	int_attr(&a, "to", to);
	node(g, "Cast", in, out, &a, 1);
	pb_free(&a);
}

/* x f32[4] -> Cast(string) -> s -> Cast(f32) -> y; outputs s and y. */
static vnpu_status compile_round_trip(vnpu_core *core, const char *device,
				      vnpu_compiled_model **out)
{
	const int64_t dims[1] = { 4 };
	struct pb g = { 0 };

	cast(&g, "x", "s", ONNX_STRING);
	cast(&g, "s", "y", ONNX_FLOAT);
	pb_str(&g, GRAPH_NAME, "strings");
	onnx_value(&g, GRAPH_INPUT, "x", 1, dims);
	onnx_value_typed(&g, GRAPH_OUTPUT, "s", ONNX_STRING, 1, dims);
	onnx_value(&g, GRAPH_OUTPUT, "y", 1, dims);
	return onnx_compile(core, &g, 13, device, NULL, out);
}

/* s string[@n] -> Cast(@to) -> y. */
static vnpu_status compile_parse(vnpu_core *core, const char *device, int64_t n, int to,
				 vnpu_compiled_model **out)
{
	const int64_t dims[1] = { n };
	struct pb g = { 0 };

	cast(&g, "s", "y", to);
	pb_str(&g, GRAPH_NAME, "parse");
	onnx_value_typed(&g, GRAPH_INPUT, "s", ONNX_STRING, 1, dims);
	onnx_value_typed(&g, GRAPH_OUTPUT, "y", to, 1, dims);
	return onnx_compile(core, &g, 13, device, NULL, out);
}

/* x string[1,?] -> StringNormalizer(UPPER, stop word "monday") -> y. */
static vnpu_status compile_normalizer(vnpu_core *core, const char *device, bool sensitive,
				      vnpu_compiled_model **out)
{
	const int64_t dims[2] = { 1, -1 };
	struct pb g = { 0 }, a[3] = { 0 };

	pb_str(&a[0], ATTR_NAME, "case_change_action");
	pb_str(&a[0], ATTR_S, "UPPER");
	pb_int(&a[0], ATTR_TYPE, ATTR_STRING);
	pb_str(&a[1], ATTR_NAME, "stopwords");
	pb_str(&a[1], ATTR_STRINGS, "monday");
	pb_int(&a[1], ATTR_TYPE, ATTR_STRINGS_TYPE);
	int_attr(&a[2], "is_case_sensitive", sensitive);
	node(&g, "StringNormalizer", "x", "y", a, 3);
	pb_str(&g, GRAPH_NAME, "normalizer");
	onnx_value_typed(&g, GRAPH_INPUT, "x", ONNX_STRING, 2, dims);
	onnx_value_typed(&g, GRAPH_OUTPUT, "y", ONNX_STRING, 2, dims);
	return onnx_compile(core, &g, 10, device, NULL, out);
}

/* A string tensor of @n strings @s. */
static vnpu_tensor *strings(const vnpu_shape *shape, const char *const *s)
{
	vnpu_tensor *t = NULL;
	uint64_t n = 1;

	for (uint32_t d = 0; d < shape->rank; d++)
		n *= (uint64_t)shape->dims[d];
	if (vnpu_tensor_create(VNPU_TYPE_STRING, shape, &t))
		return NULL;
	for (uint64_t i = 0; i < n; i++) {
		if (vnpu_tensor_set_string(t, i, s[i], strlen(s[i]))) {
			vnpu_tensor_free(t);
			return NULL;
		}
	}
	return t;
}

/* Element @i of string output @name of @req is @want. */
static int output_is(struct __test_metadata *_metadata, vnpu_infer_request *req, const char *name,
		     uint64_t i, const char *want)
{
	const char *got = NULL;
	vnpu_tensor *t;

	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_tensor(req, name, &t));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_string(t, i, &got));
	if (strcmp(got, want)) {
		TH_LOG("%s[%llu] is \"%s\", want \"%s\"", name, (unsigned long long)i,
			got, want);
		vnpu_tensor_free(t);
		return 1;
	}
	vnpu_tensor_free(t);
	return 0;
}

TEST_F(dev, string_tensor_calls)
{
	const vnpu_shape shape = { 2, { 2, 3 } };
	vnpu_tensor *t, *f;
	const char *s = NULL;
	uint64_t bytes = 1;
	char *big, buf[8];
	void *data;

	ASSERT_EQ(VNPU_OK, vnpu_tensor_create(VNPU_TYPE_STRING, &shape, &t));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_string(t, 5, &s));
	ASSERT_STREQ("", s);
	ASSERT_EQ(VNPU_OK, vnpu_tensor_set_string(t, 1, "hello", 5));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_set_string(t, 2, "hello world", 4));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_string(t, 1, &s));
	ASSERT_STREQ("hello", s);
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_string(t, 2, &s));
	ASSERT_STREQ("hell", s);
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_byte_size(t, &bytes));
	ASSERT_EQ(9, bytes);
	ASSERT_EQ(VNPU_OK, vnpu_tensor_set_string(t, 1, NULL, 0));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_byte_size(t, &bytes));
	ASSERT_EQ(4, bytes);
	/* Bad input: out of range, NUL inside, too long, NULL, the wrong type. */
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_tensor_set_string(t, 6, "x", 1));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_tensor_get_string(t, 6, &s));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_tensor_set_string(t, 0, "a\0b", 3));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_tensor_set_string(t, 0, NULL, 3));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_tensor_get_string(t, 0, NULL));
	big = malloc(VNPU_STRING_MAX_BYTES + 1);
	ASSERT_NE(NULL, big);
	memset(big, 'a', VNPU_STRING_MAX_BYTES + 1);
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_tensor_set_string(t, 0, big, VNPU_STRING_MAX_BYTES + 1));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_set_string(t, 0, big, VNPU_STRING_MAX_BYTES));
	free(big);
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_tensor_get_data(t, &data));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_tensor_create_from_ptr(VNPU_TYPE_STRING, &shape, buf, &f));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_create(VNPU_TYPE_F32, &shape, &f));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_tensor_set_string(f, 0, "1", 1));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_tensor_get_string(f, 0, &s));
	vnpu_tensor_free(f);
	vnpu_tensor_free(t);
	/* More strings than a tensor may hold. */
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_tensor_create(VNPU_TYPE_STRING, &(vnpu_shape){ 2, { 1 << 20, 1 << 20 } },
					&t));
}

TEST_F(dev, string_cast_round_trip)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	static const float x[4] = { 0.5f, 1e-5f, -3.0f, 123456789.0f };
	static const char *const text[4] = { "0.5", "1e-05", "-3.0", "123456790.0" };
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	vnpu_tensor *in, *y;
	float *p;

	ASSERT_EQ(VNPU_OK, compile_round_trip(core, device, &cm));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_create(VNPU_TYPE_F32, &(vnpu_shape){ 1, { 4 } }, &in));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(in, (void **)&p));
	memcpy(p, x, sizeof(x));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_tensor(req, "x", in));
	vnpu_tensor_free(in);
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_infer(req));
	for (int i = 0; i < 4; i++) {
		ASSERT_EQ(0, output_is(_metadata, req, "s", (uint64_t)i, text[i]));
	}
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_tensor(req, "y", &y));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(y, (void **)&p));
	ASSERT_EQ(0, memcmp(p, x, sizeof(x)));
	vnpu_tensor_free(y);
	/* Outputs are the run's: the caller cannot set them. */
	ASSERT_EQ(VNPU_OK, vnpu_tensor_create(VNPU_TYPE_F32, &(vnpu_shape){ 1, { 4 } }, &y));
	ASSERT_FAILS(VNPU_UNSUPPORTED, vnpu_infer_request_set_tensor(req, "y", y));
	/* Nor give an input of another type or shape. */
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_infer_request_set_tensor(req, "x", (in = strings( &(vnpu_shape){ 1,
									   { 4 } }, text))));
	vnpu_tensor_free(in);
	vnpu_tensor_free(y);
	ASSERT_EQ(VNPU_OK, vnpu_tensor_create(VNPU_TYPE_F32, &(vnpu_shape){ 1, { 5 } }, &y));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_infer_request_set_tensor(req, "x", y));
	vnpu_tensor_free(y);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
}

/* @text read as @to (an ONNX type) gives @want, or the error when @bad. */
static int parse_one(struct __test_metadata *_metadata, vnpu_core *core, const char *device, int to,
		     const char *text,
		     bool bad, double want)
{
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	vnpu_tensor *s, *y;
	vnpu_status st;
	void *p;

	ASSERT_EQ(VNPU_OK, compile_parse(core, device, 1, to, &cm));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	s = strings(&(vnpu_shape){ 1, { 1 } }, &text);
	ASSERT_NE(NULL, s);
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_tensor(req, "s", s));
	vnpu_tensor_free(s);
	st = vnpu_infer_request_infer(req);
	if (bad) {
		ASSERT_FAILS(VNPU_INVALID_ARGUMENT, st);
	} else {
		ASSERT_EQ(VNPU_OK, st);
		ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_tensor(req, "y", &y));
		ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(y, &p));
		if (to == ONNX_FLOAT) {
			ASSERT_EQ((float)want, *(float *)p);
		} else {
			ASSERT_EQ((int64_t)want, *(int64_t *)p);
		}
		vnpu_tensor_free(y);
	}
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
	return 0;
}

TEST_F(dev, string_cast_parse)
{
	vnpu_core *core = self->core;
	const char *device = self->device;

	ASSERT_EQ(0, parse_one(_metadata, core, device, ONNX_FLOAT, " 2.5 ", false, 2.5));
	ASSERT_EQ(0, parse_one(_metadata, core, device, ONNX_FLOAT, "-INF", false, -INFINITY));
	ASSERT_EQ(0, parse_one(_metadata, core, device, ONNX_INT64, "-12", false, -12));
	ASSERT_EQ(0, parse_one(_metadata, core, device, ONNX_FLOAT, "abc", true, 0));
	ASSERT_EQ(0, parse_one(_metadata, core, device, ONNX_FLOAT, "", true, 0));
	ASSERT_EQ(0, parse_one(_metadata, core, device, ONNX_FLOAT, "0x10", true, 0));
	ASSERT_EQ(0, parse_one(_metadata, core, device, ONNX_FLOAT, "1.5 apples", true, 0));
	ASSERT_EQ(0, parse_one(_metadata, core, device, ONNX_INT64, "1.5", true, 0));
	ASSERT_EQ(0,
		  parse_one(_metadata, core, device, ONNX_INT64, "99999999999999999999", true, 0));
	ASSERT_EQ(0, parse_one(_metadata, core, device, ONNX_INT64, "--1", true, 0));
}

TEST_F(dev, string_normalizer)
{
	vnpu_core *core = self->core;
	const char *device = self->device;

	static const char *const words[4] = { "Monday", "tue", "monday", "x1" };
	static const char *const stop[2] = { "monday", "Monday" };
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	vnpu_tensor *x, *y;
	vnpu_shape shape;

	ASSERT_EQ(VNPU_OK, compile_normalizer(core, device, false, &cm));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	x = strings(&(vnpu_shape){ 2, { 1, 4 } }, words);
	ASSERT_NE(NULL, x);
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_tensor(req, "x", x));
	vnpu_tensor_free(x);
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_infer(req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_tensor(req, "y", &y));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_shape(y, &shape));
	ASSERT_TRUE(shape.rank == 2 && shape.dims[0] == 1 && shape.dims[1] == 2);
	vnpu_tensor_free(y);
	ASSERT_EQ(0, output_is(_metadata, req, "y", 0, "TUE"));
	ASSERT_EQ(0, output_is(_metadata, req, "y", 1, "X1"));
	/* Every word a stop word: one empty string. */
	x = strings(&(vnpu_shape){ 2, { 1, 2 } }, stop);
	ASSERT_NE(NULL, x);
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_tensor(req, "x", x));
	vnpu_tensor_free(x);
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_infer(req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_tensor(req, "y", &y));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_shape(y, &shape));
	ASSERT_TRUE(shape.rank == 2 && shape.dims[1] == 1);
	vnpu_tensor_free(y);
	ASSERT_EQ(0, output_is(_metadata, req, "y", 0, ""));
	/* [2, C] is not a shape StringNormalizer takes. */
	x = strings(&(vnpu_shape){ 2, { 2, 2 } }, words);
	ASSERT_NE(NULL, x);
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_infer_request_set_tensor(req, "x", x));
	vnpu_tensor_free(x);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);

	/* Case-sensitive: only "monday" goes. */
	ASSERT_EQ(VNPU_OK, compile_normalizer(core, device, true, &cm));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	x = strings(&(vnpu_shape){ 2, { 1, 4 } }, words);
	ASSERT_NE(NULL, x);
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_tensor(req, "x", x));
	vnpu_tensor_free(x);
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_infer(req));
	ASSERT_EQ(0, output_is(_metadata, req, "y", 0, "MONDAY"));
	ASSERT_EQ(0, output_is(_metadata, req, "y", 2, "X1"));
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
}

static void on_done(vnpu_infer_request *req, vnpu_status st, void *user_data)
{
	(void)req;
	*(vnpu_status *)user_data = st;
}

TEST_F(dev, string_async)
{
	vnpu_core *core = self->core;
	const char *device = self->device;

	static const char *const bad = "nope";
	vnpu_status got = VNPU_GENERAL_ERROR;
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	vnpu_tensor *s;

	ASSERT_EQ(VNPU_OK, compile_parse(core, device, 1, ONNX_FLOAT, &cm));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_callback(req, on_done, &got));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_start_async(req));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_infer_request_wait(req));	/* "" */
	ASSERT_EQ(VNPU_INVALID_ARGUMENT, got);
	s = strings(&(vnpu_shape){ 1, { 1 } }, (const char *const[]){ "7" });
	ASSERT_NE(NULL, s);
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_tensor(req, "s", s));
	vnpu_tensor_free(s);
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_start_async(req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_wait_for(req, 1000));
	ASSERT_EQ(VNPU_OK, got);
	s = strings(&(vnpu_shape){ 1, { 1 } }, &bad);
	ASSERT_NE(NULL, s);
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_tensor(req, "s", s));
	vnpu_tensor_free(s);
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_start_async(req));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_infer_request_wait(req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_cancel(req));
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
}

TEST_F(dev, string_model_refusals)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	const int64_t dims[1] = { 2 };
	vnpu_compiled_model *cm = NULL;
	struct pb g = { 0 }, model = { 0 };
	vnpu_model *m = NULL;
	size_t size = 0;
	void *blob = NULL;

	/* Strings then an op for the device: not run on the host. */
	cast(&g, "s", "f", ONNX_FLOAT);
	onnx_node(&g, "Relu", (const char *[]){ "f" }, 1, "y");
	pb_str(&g, GRAPH_NAME, "mixed");
	onnx_value_typed(&g, GRAPH_INPUT, "s", ONNX_STRING, 1, dims);
	onnx_value(&g, GRAPH_OUTPUT, "y", 1, dims);
	ASSERT_FAILS(VNPU_UNSUPPORTED, onnx_compile(core, &g, 13, device, NULL, &cm));
	/* A string constant: not read. */
	memset(&g, 0, sizeof(g));
	onnx_node(&g, "Identity", (const char *[]){ "c" }, 1, "y");
	pb_str(&g, GRAPH_NAME, "constant");
	onnx_init(&g, "c", ONNX_STRING, 1, dims, "ab", 2);
	onnx_value_typed(&g, GRAPH_OUTPUT, "y", ONNX_STRING, 1, dims);
	ASSERT_FAILS(VNPU_UNSUPPORTED, onnx_compile(core, &g, 13, device, NULL, &cm));
	/* A string input is not frozen into a constant. */
	memset(&g, 0, sizeof(g));
	cast(&g, "s", "y", ONNX_FLOAT);
	pb_str(&g, GRAPH_NAME, "freeze");
	onnx_value_typed(&g, GRAPH_INPUT, "s", ONNX_STRING, 1, dims);
	onnx_value(&g, GRAPH_OUTPUT, "y", 1, dims);
	onnx_model(&model, &g, 13);
	pb_free(&g);
	ASSERT_TRUE(!model.failed);
	ASSERT_EQ(VNPU_OK, vnpu_core_read_model_from_memory(core, model.data, model.len, &m));
	pb_free(&model);
	ASSERT_FAILS(VNPU_UNSUPPORTED,
		     vnpu_model_freeze_input(m, "s", VNPU_TYPE_STRING, &(vnpu_shape){ 1, { 2 } },
					     NULL, 0));
	vnpu_model_free(m);
	/* No program to export. */
	ASSERT_EQ(VNPU_OK, compile_parse(core, device, 2, ONNX_FLOAT, &cm));
	ASSERT_FAILS(VNPU_UNSUPPORTED, vnpu_compiled_model_export(cm, &blob, &size));
	vnpu_compiled_model_free(cm);
}


RUNTIME_TEST_MAIN

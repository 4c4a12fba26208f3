// SPDX-License-Identifier: MIT
/* The ONNX reader, the IR and shape inference. */
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "fe_test.h"
#include "ksft_main.h"
#include "ir.h"

#define F32 ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT
#define I64 ONNX__TENSOR_PROTO__DATA_TYPE__INT64
#define TESTDATA "/usr/share/libonnx-testdata/data/node"

static void *read_all(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	void *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*size = (size_t)n;
	return buf;
}

static void check_shape(struct __test_metadata *_metadata, const vnpu_shape *s, uint32_t rank,
			const int64_t *dims)
{
	EXPECT_EQ(rank, s->rank);
	for (uint32_t d = 0; d < rank && d < s->rank; d++) {
		EXPECT_EQ(dims[d], s->dims[d]);
	}
}

TEST(wakeword_models)
{
	static const char *const files[] = {
		"alexa_v0.1.onnx", "embedding_model.onnx", "hey_jarvis_v0.1.onnx",
		"hey_mycroft_v0.1.onnx", "hey_rhasspy_v0.1.onnx", "melspectrogram.onnx",
		"timer_v0.1.onnx", "weather_v0.1.onnx",
	};
	const char *path;
	vnpu_model *m;
	vnpu_shape s;
	size_t n;

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		path = fe_wakeword_model(files[i]);
		if (!path) {
			TH_LOG("skip %s: not installed (scripts/install-deps)", files[i]);
			continue;
		}
		EXPECT_EQ(VNPU_OK, vnpu_model_read_file(path, &m));
		vnpu_model_free(m);
	}
	path = fe_wakeword_model("alexa_v0.1.onnx");
	if (path && !vnpu_model_read_file(path, &m)) {
		vnpu_element_type t;
		const char *name;
		int64_t opset;

		EXPECT_EQ(VNPU_OK, vnpu_model_get_inputs_size(m, &n));
		EXPECT_EQ(1, n);
		EXPECT_EQ(VNPU_OK, vnpu_model_input_name(m, 0, &name));
		EXPECT_STREQ("onnx::Flatten_0", name);
		EXPECT_EQ(VNPU_OK, vnpu_model_input_type(m, 0, &t));
		EXPECT_EQ(VNPU_TYPE_F32, t);
		EXPECT_EQ(VNPU_OK, vnpu_model_input_shape(m, 0, &s));
		check_shape(_metadata, &s, 3, (const int64_t[]){ 1, 16, 96 });
		EXPECT_EQ(VNPU_OK, vnpu_model_output_shape(m, 0, &s));
		check_shape(_metadata, &s, 2, (const int64_t[]){ 1, 1 });
		EXPECT_EQ(VNPU_OK, vnpu_model_get_ops_size(m, &n));
		EXPECT_EQ(7, n);
		EXPECT_EQ(VNPU_OK, vnpu_model_get_opset(m, &opset));
		EXPECT_EQ(13, opset);
		vnpu_model_free(m);
	}
	path = fe_wakeword_model("embedding_model.onnx");
	if (path && !vnpu_model_read_file(path, &m)) {
		/* [?, 76, 32, 1] -> [?, 1, 1, 96]; the batch set by reshape. */
		EXPECT_EQ(VNPU_OK, vnpu_model_output_shape(m, 0, &s));
		check_shape(_metadata, &s, 4, (const int64_t[]){ -1, 1, 1, 96 });
		s = (vnpu_shape){ .rank = 4, .dims = { 3, 76, 32, 1 } };
		EXPECT_EQ(VNPU_OK, vnpu_model_reshape(m, "input_1", &s));
		EXPECT_EQ(VNPU_OK, vnpu_model_output_shape(m, 0, &s));
		check_shape(_metadata, &s, 4, (const int64_t[]){ 3, 1, 1, 96 });
		vnpu_model_free(m);
	}
	path = fe_wakeword_model("melspectrogram.onnx");
	if (path && !vnpu_model_read_file(path, &m)) {
		s = (vnpu_shape){ .rank = 2, .dims = { 1, 1280 } };
		EXPECT_EQ(VNPU_OK, vnpu_model_reshape(m, "input", &s));
		EXPECT_EQ(VNPU_OK, vnpu_model_output_shape(m, 0, &s));
		check_shape(_metadata, &s, 4, (const int64_t[]){ 1, 1, 5, 32 });
		vnpu_model_free(m);
	}
}

/* Declared output shapes of a node test, from its own ModelProto. */
static int declared_output(const Onnx__ModelProto *mp, size_t o, vnpu_shape *s, int *type)
{
	const Onnx__ValueInfoProto *vi = mp->graph->output[o];
	const Onnx__TypeProto__Tensor *tt;

	if (!vi->type || vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
		return -1;
	tt = vi->type->tensor_type;
	if (!tt->shape || tt->shape->n_dim > VNPU_MAX_RANK)
		return -1;
	s->rank = (uint32_t)tt->shape->n_dim;
	for (size_t d = 0; d < tt->shape->n_dim; d++) {
		if (tt->shape->dim[d]->value_case !=
		    ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
			return -1;
		s->dims[d] = tt->shape->dim[d]->dim_value;
	}
	*type = tt->elem_type;
	return 0;
}

/* Every node test whose outputs we infer fully: the same shapes and types
 * as the ONNX test declares. */
TEST(node_test_shapes)
{
	DIR *dir = opendir(TESTDATA);
	struct dirent *e;
	int compared = 0, read_ok = 0;

	if (!dir)
		SKIP(return, "%s not installed", TESTDATA);
	while ((e = readdir(dir))) {
		char path[1024];
		Onnx__ModelProto *mp;
		vnpu_model *m;
		size_t size, n;
		void *buf;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/model.onnx", TESTDATA, e->d_name);
		buf = read_all(path, &size);
		if (!buf)
			continue;
		mp = onnx__model_proto__unpack(NULL, size, buf);
		if (mp && mp->graph && !vnpu_model_read_memory(buf, size, &m)) {
			read_ok++;
			vnpu_model_get_outputs_size(m, &n);
			for (size_t o = 0; o < n && o < mp->graph->n_output; o++) {
				vnpu_shape want = { 0 }, got = { 0 };
				vnpu_element_type t;
				int want_type;
				bool known = true;

				if (declared_output(mp, o, &want, &want_type) ||
				    vnpu_model_output_shape(m, o, &got))
					continue;
				for (uint32_t d = 0; d < got.rank; d++)
					known &= got.dims[d] >= 0;
				vnpu_model_output_type(m, o, &t);
				if (!known || t == VNPU_TYPE_UNDEFINED)
					continue;
				compared++;
				EXPECT_FALSE(memcmp(&want, &got, sizeof(want))
					     || (int)t != want_type)
					TH_LOG("%s output %zu: inferred %s rank %u, declared type %d rank %u", e->d_name, o, vnpu_element_type_str(t), got.rank, want_type, want.rank);
			}
			vnpu_model_free(m);
		}
		if (mp)
			onnx__model_proto__free_unpacked(mp, NULL);
		free(buf);
	}
	closedir(dir);
	TH_LOG("%d models read, %d outputs compared", read_ok, compared);
	EXPECT_GT(read_ok, 700);
	EXPECT_GT(compared, 500);
}

static void expect_parse_error(struct __test_metadata *_metadata, const void *buf, size_t size)
{
	vnpu_model *m = NULL;
	vnpu_status st = vnpu_model_read_memory(buf, size, &m);

	if (st == VNPU_OK) {
		/* A cut at a field boundary can still be a model: compiling
		 * it works or fails cleanly. */
		struct vnpu_program *p = NULL;

		st = vnpu_compile(m, NULL, &p);
		EXPECT_TRUE(st == VNPU_OK || vnpu_last_error()[0] != '\0');
		vnpu_program_free(p);
		vnpu_model_free(m);
		return;
	}
	EXPECT_TRUE(st == VNPU_PARSE_ERROR || st == VNPU_UNSUPPORTED);
	EXPECT_NE('\0', vnpu_last_error()[0]);
	EXPECT_EQ(NULL, m);
}

TEST(malformed_protobuf)
{
	static const unsigned char garbage[] = { 0xff, 0xff, 0xff, 0xff, 0x0f, 0x08, 0x99 };
	const char *path = fe_wakeword_model("timer_v0.1.onnx");
	vnpu_model *m = NULL;
	size_t size;
	void *buf;

	EXPECT_EQ(VNPU_PARSE_ERROR, vnpu_model_read_memory(garbage, sizeof(garbage), &m));
	EXPECT_NE(NULL, strstr(vnpu_last_error(), "protobuf"));
	EXPECT_EQ(VNPU_PARSE_ERROR, vnpu_model_read_memory("", 0, &m));
	EXPECT_EQ(NULL, m);
	EXPECT_EQ(VNPU_INVALID_ARGUMENT, vnpu_model_read_memory(NULL, 4, &m));
	EXPECT_EQ(VNPU_NOT_FOUND, vnpu_model_read_file("/nonexistent/model.onnx", &m));
	if (!path) {
		TH_LOG("skip truncation: models not installed");
		return;
	}
	buf = read_all(path, &size);
	EXPECT_NE(NULL, buf);
	if (!buf)
		return;
	/* Cut everywhere near the start, then every 997 bytes. */
	for (size_t cut = 0; cut < size; cut += cut < 512 ? 1 : 997)
		expect_parse_error(_metadata, buf, cut);
	/* Flip bytes in the structure. */
	for (size_t pos = 0; pos < 512 && pos < size; pos++) {
		unsigned char *b = buf, old = b[pos];

		b[pos] ^= 0x5a;
		expect_parse_error(_metadata, buf, size);
		b[pos] = old;
	}
	free(buf);
}

/* Random byte mutations of a spread of ONNX node tests: read (and, when
 * that still works, compile) without a crash; fixed seed, so repeatable. */
TEST(mutations)
{
	static const char *const cases[] = {
		"test_conv_with_strides_padding", "test_gemm_all_attributes", "test_lstm_defaults",
		"test_resize_upsample_sizes_nearest", "test_slice_neg_steps", "test_einsum_batch_matmul",
		"test_if", "test_nllloss_NCd1d2_with_weight", "test_reshape_negative_dim",
		"test_maxpool_2d_pads", "test_layer_normalization_4d_axis1", "test_onehot_with_axis",
	};
	uint32_t seed = 2026, tried = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char path[512];
		unsigned char *buf;
		size_t size;

		snprintf(path, sizeof(path), "%s/%s/model.onnx", TESTDATA, cases[i]);
		buf = read_all(path, &size);
		if (!buf)
			continue;
		for (int round = 0; round < 60; round++, tried++) {
			unsigned char *m = malloc(size + 1);
			int flips = 1 + round % 4;

			memcpy(m, buf, size);
			for (int f = 0; f < flips; f++) {
				seed = seed * 1103515245u + 12345u;
				m[(seed >> 8) % size] = (unsigned char)(seed >> 20);
			}
			expect_parse_error(_metadata, m, size);
			free(m);
		}
		free(buf);
	}
	TH_LOG("%u mutated models read and compiled or refused", tried);
}

static vnpu_status read_status(struct mb *b)
{
	vnpu_model *m = NULL;
	size_t size;
	void *buf = mb_pack(b, &size);
	vnpu_status st = vnpu_model_read_memory(buf, size, &m);

	vnpu_model_free(m);
	free(buf);
	return st;
}

TEST(malformed_graphs)
{
	const int64_t d4[] = { 1, 4 };
	struct mb *b;

	/* A cycle. */
	b = mb_new(13);
	mb_input(b, "x", F32, 2, d4);
	mb_node(b, "Add", (const char *[]){ "x", "c", NULL }, (const char *[]){ "a", NULL });
	mb_node(b, "Relu", (const char *[]){ "a", NULL }, (const char *[]){ "c", NULL });
	mb_output(b, "c");
	EXPECT_EQ(VNPU_PARSE_ERROR, read_status(b));
	EXPECT_NE(NULL, strstr(vnpu_last_error(), "cycle"));

	/* A name nothing defines (a missing initializer). */
	b = mb_new(13);
	mb_input(b, "x", F32, 2, d4);
	mb_node(b, "Add", (const char *[]){ "x", "w", NULL }, (const char *[]){ "y", NULL });
	mb_output(b, "y");
	EXPECT_EQ(VNPU_PARSE_ERROR, read_status(b));
	EXPECT_NE(NULL, strstr(vnpu_last_error(), "'w'"));

	/* Two producers of one name. */
	b = mb_new(13);
	mb_input(b, "x", F32, 2, d4);
	mb_node(b, "Relu", (const char *[]){ "x", NULL }, (const char *[]){ "y", NULL });
	mb_node(b, "Neg", (const char *[]){ "x", NULL }, (const char *[]){ "y", NULL });
	mb_output(b, "y");
	EXPECT_EQ(VNPU_PARSE_ERROR, read_status(b));

	/* Wrong types: f32 + i64. */
	b = mb_new(13);
	mb_input(b, "x", F32, 2, d4);
	mb_init_i64(b, "k", 1, (const int64_t[]){ 1 }, (const int64_t[]){ 3 });
	mb_node(b, "Add", (const char *[]){ "x", "k", NULL }, (const char *[]){ "y", NULL });
	mb_output(b, "y");
	EXPECT_EQ(VNPU_PARSE_ERROR, read_status(b));
	EXPECT_NE(NULL, strstr(vnpu_last_error(), "types differ"));

	/* Shapes that do not broadcast. */
	b = mb_new(13);
	mb_input(b, "x", F32, 2, d4);
	mb_init_f32(b, "w", 1, (const int64_t[]){ 3 }, NULL);
	mb_node(b, "Mul", (const char *[]){ "x", "w", NULL }, (const char *[]){ "y", NULL });
	mb_output(b, "y");
	EXPECT_EQ(VNPU_PARSE_ERROR, read_status(b));

	/* Huge dims. */
	b = mb_new(13);
	mb_input(b, "x", F32, 2, (const int64_t[]){ 1, 1ll << 45 });
	mb_node(b, "Relu", (const char *[]){ "x", NULL }, (const char *[]){ "y", NULL });
	mb_output(b, "y");
	EXPECT_EQ(VNPU_PARSE_ERROR, read_status(b));

	/* Repeats and shapes that would overflow. */
	b = mb_new(13);
	mb_input(b, "x", F32, 2, d4);
	mb_init_i64(b, "rep", 1, (const int64_t[]){ 2 },
		    (const int64_t[]){ 1ll << 40, 1ll << 40 });
	mb_node(b, "Tile", (const char *[]){ "x", "rep", NULL }, (const char *[]){ "y", NULL });
	mb_output(b, "y");
	EXPECT_EQ(VNPU_PARSE_ERROR, read_status(b));
	b = mb_new(13);
	mb_input(b, "x", F32, 2, d4);
	mb_init_i64(b, "sh", 1, (const int64_t[]){ 3 },
		    (const int64_t[]){ 1ll << 30, 1ll << 30, 4 });
	mb_node(b, "Expand", (const char *[]){ "x", "sh", NULL }, (const char *[]){ "y", NULL });
	mb_output(b, "y");
	EXPECT_EQ(VNPU_PARSE_ERROR, read_status(b));
	EXPECT_NE(NULL, strstr(vnpu_last_error(), "too large"));

	/* An opset outside 1..17. */
	b = mb_new(18);
	mb_input(b, "x", F32, 2, d4);
	mb_node(b, "Relu", (const char *[]){ "x", NULL }, (const char *[]){ "y", NULL });
	mb_output(b, "y");
	EXPECT_EQ(VNPU_UNSUPPORTED, read_status(b));

	/* No outputs. */
	b = mb_new(13);
	mb_input(b, "x", F32, 2, d4);
	EXPECT_EQ(VNPU_PARSE_ERROR, read_status(b));

	/* Indices, MaxPool's second output, on the pools without one. */
	for (int k = 0; k < 3; k++) {
		static const char *const ops[] = { "GlobalMaxPool", "AveragePool", "LpPool" };
		Onnx__NodeProto *n;

		b = mb_new(13);
		mb_input(b, "x", F32, 4, (const int64_t[]){ 1, 1, 1, 3 });
		n = mb_node(b, ops[k], (const char *[]){ "x", NULL },
			    (const char *[]){ "y", "i", NULL });
		if (k)
			mb_attr_ints(n, "kernel_shape", 2, (const int64_t[]){ 1, 1 });
		mb_output(b, "y");
		EXPECT_EQ(VNPU_PARSE_ERROR, read_status(b));
		EXPECT_NE(NULL, strstr(vnpu_last_error(), "has no output 1"));
	}

	/* Reshape to a shape that does not hold the elements. */
	b = mb_new(13);
	mb_input(b, "x", F32, 2, d4);
	mb_init_i64(b, "s", 1, (const int64_t[]){ 2 }, (const int64_t[]){ 3, 3 });
	mb_node(b, "Reshape", (const char *[]){ "x", "s", NULL }, (const char *[]){ "y", NULL });
	mb_output(b, "y");
	EXPECT_EQ(VNPU_PARSE_ERROR, read_status(b));
}

TEST(unknown_op)
{
	struct mb *b = mb_new(13);
	struct vnpu_query_result *q = NULL;
	struct vnpu_program *p = NULL;
	vnpu_model *m;
	vnpu_shape s;

	mb_input(b, "x", F32, 2, (const int64_t[]){ 1, 4 });
	mb_node(b, "Relu", (const char *[]){ "x", NULL }, (const char *[]){ "a", NULL });
	mb_node(b, "FancyNewOp", (const char *[]){ "a", NULL }, (const char *[]){ "y", NULL });
	mb_output(b, "y");
	m = mb_read(b);
	EXPECT_NE(NULL, m);
	if (!m)
		return;
	/* Read fine; the output's shape is unknown; compile says why. */
	EXPECT_EQ(VNPU_UNSUPPORTED, vnpu_model_output_shape(m, 0, &s));
	EXPECT_EQ(VNPU_UNSUPPORTED, vnpu_compile(m, NULL, &p));
	EXPECT_NE(NULL, strstr(vnpu_last_error(), "FancyNewOp"));
	EXPECT_NE(NULL, strstr(vnpu_last_error(), "unknown op"));
	EXPECT_EQ(NULL, p);
	EXPECT_EQ(VNPU_OK, vnpu_query_model(m, NULL, &q));
	if (q) {
		EXPECT_EQ(2, q->num_nodes);
		EXPECT_EQ(VNPU_QUERY_PRIMARY, q->nodes[0].place);
		EXPECT_EQ(VNPU_QUERY_NONE, q->nodes[1].place);
		EXPECT_NE(NULL, strstr(q->nodes[1].reason, "unknown op"));
	}
	vnpu_query_result_free(q);
	vnpu_model_free(m);
}

/* A model whose input has ONNX element type @type: reading it fails saying @want. */
static void check_read_refused(struct __test_metadata *_metadata, int type, const char *want)
{
	struct mb *b = mb_new(13);

	mb_input(b, "in", type, 1, (const int64_t[]){ 2 });
	mb_node(b, "Identity", (const char *[]){ "in", NULL }, (const char *[]){ "y", NULL });
	mb_output(b, "y");
	EXPECT_EQ(NULL, mb_read(b));
	EXPECT_STREQ(want, vnpu_last_error());
}

/* x -> @op (Cast: to @to; named or not) -> y: compiling fails saying @want. */
static void check_compile_refused(struct __test_metadata *_metadata, const char *op, int to,
				  bool named, const char *want)
{
	struct mb *b = mb_new(13);
	struct vnpu_program *p = NULL;
	Onnx__NodeProto *n;
	vnpu_model *m;

	mb_input(b, "x", F32, 1, (const int64_t[]){ 2 });
	n = mb_node(b, op, (const char *[]){ "x", NULL }, (const char *[]){ "y", NULL });
	if (to)
		mb_attr_int(n, "to", to);
	if (!named) {
		free(n->name);
		n->name = strdup("");
	}
	mb_output(b, "y");
	m = mb_read(b);
	EXPECT_NE(NULL, m);
	if (m)
		EXPECT_EQ(VNPU_UNSUPPORTED, vnpu_compile(m, NULL, &p));
	EXPECT_STREQ(want, vnpu_last_error());
	EXPECT_EQ(NULL, p);
	vnpu_model_free(m);
}

/*
 * What is not supported says so in one line naming it: element types by
 * name (complex64), a node by its name or, unnamed, its op. The device
 * takes no string (the core runs models of strings on the host).
 */
TEST(unsupported_messages)
{
	check_read_refused(_metadata, ONNX__TENSOR_PROTO__DATA_TYPE__COMPLEX64,
			   "input: 'in': complex64 tensors are not supported");
	check_read_refused(_metadata, 99, "input: 'in': element type 99 is not supported");
	check_compile_refused(_metadata, "Cast", ONNX__TENSOR_PROTO__DATA_TYPE__STRING, false,
			      "Cast node: a cast to or from string runs on the host, in a model "
			      "of strings only");
	check_compile_refused(_metadata, "Bernoulli", 0, true,
			      "node 'Bernoulli_0' (Bernoulli): unknown op");
	check_compile_refused(_metadata, "Bernoulli", 0, false, "Bernoulli node: unknown op");
}

TEST(api_errors)
{
	struct mb *b = mb_new(13);
	vnpu_model *m;
	const char *name;
	size_t idx;
	vnpu_shape s;

	mb_input(b, "x", F32, 2, (const int64_t[]){ -1, 4 });
	mb_node(b, "Relu", (const char *[]){ "x", NULL }, (const char *[]){ "y", NULL });
	mb_output(b, "y");
	m = mb_read(b);
	EXPECT_NE(NULL, m);
	if (!m)
		return;
	EXPECT_EQ(VNPU_OK, vnpu_model_input_index(m, "x", &idx));
	EXPECT_EQ(0, idx);
	EXPECT_EQ(VNPU_OK, vnpu_model_output_index(m, "y", &idx));
	EXPECT_EQ(VNPU_NOT_FOUND, vnpu_model_input_index(m, "nope", &idx));
	EXPECT_NE(NULL, strstr(vnpu_last_error(), "nope"));
	EXPECT_EQ(VNPU_NOT_FOUND, vnpu_model_input_name(m, 1, &name));
	EXPECT_EQ(VNPU_INVALID_ARGUMENT, vnpu_model_output_name(NULL, 0, &name));
	EXPECT_EQ(VNPU_INVALID_ARGUMENT, vnpu_model_input_shape(m, 0, NULL));
	/* Reshape: a rank above the maximum, a bad dim; then right. */
	s = (vnpu_shape){ .rank = VNPU_MAX_RANK + 1 };
	EXPECT_EQ(VNPU_INVALID_ARGUMENT, vnpu_model_reshape(m, "x", &s));
	EXPECT_EQ(VNPU_INVALID_ARGUMENT, vnpu_model_reshape(m, "x", NULL));
	s = (vnpu_shape){ .rank = 2, .dims = { -7, 4 } };
	EXPECT_EQ(VNPU_INVALID_ARGUMENT, vnpu_model_reshape(m, "x", &s));
	s = (vnpu_shape){ .rank = 2, .dims = { 2, 4 } };
	EXPECT_EQ(VNPU_NOT_FOUND, vnpu_model_reshape(m, "y", &s));
	EXPECT_EQ(VNPU_OK, vnpu_model_output_shape(m, 0, &s));
	check_shape(_metadata, &s, 2, (const int64_t[]){ -1, 4 });
	s = (vnpu_shape){ .rank = 2, .dims = { 2, 4 } };
	EXPECT_EQ(VNPU_OK, vnpu_model_reshape(m, "x", &s));
	EXPECT_EQ(VNPU_OK, vnpu_model_output_shape(m, 0, &s));
	check_shape(_metadata, &s, 2, (const int64_t[]){ 2, 4 });
	vnpu_model_free(m);
	vnpu_model_free(NULL);
}

/*
 * As OpenVINO's reshape, an input's declared shape may give way to any
 * other the graph takes: a fixed dimension changed, another rank. A shape
 * a node refuses is an error naming the input and the node, the model as
 * it was.
 */
/* Reshape input @name of @m to @s: output 0 is then [@dims] of @rank. */
static void check_reshaped(struct __test_metadata *_metadata, vnpu_model *m, const char *name,
			   vnpu_shape s, uint32_t rank,
			   const int64_t *dims)
{
	EXPECT_EQ(VNPU_OK, vnpu_model_reshape(m, name, &s));
	EXPECT_EQ(VNPU_OK, vnpu_model_output_shape(m, 0, &s));
	check_shape(_metadata, &s, rank, dims);
}

TEST(reshape_static)
{
	struct mb *b = mb_new(13);
	vnpu_model *m;
	vnpu_shape s;

	mb_input(b, "x", F32, 2, (const int64_t[]){ 3, 4 });
	mb_init_f32(b, "w", 2, (const int64_t[]){ 4, 2 }, NULL);
	mb_node(b, "MatMul", (const char *[]){ "x", "w", NULL }, (const char *[]){ "y", NULL });
	mb_output(b, "y");
	m = mb_read(b);
	EXPECT_NE(NULL, m);
	if (!m)
		return;
	check_reshaped(_metadata, m, "x", (vnpu_shape){ 2, { 5, 4 } }, 2, (const int64_t[]){ 5,
		       2 });
	check_reshaped(_metadata, m, "x", (vnpu_shape){ 3, { 2, 3, 4 } }, 3, (const int64_t[]){ 2,
		       3, 2 });
	/* K = 5 against w's 4, and a scalar: MatMul refuses both. */
	s = (vnpu_shape){ .rank = 2, .dims = { 3, 5 } };
	EXPECT_EQ(VNPU_INVALID_ARGUMENT, vnpu_model_reshape(m, "x", &s));
	EXPECT_NE(NULL, strstr(vnpu_last_error(), "reshape 'x'"));
	EXPECT_NE(NULL, strstr(vnpu_last_error(), "MatMul"));
	s = (vnpu_shape){ .rank = 0 };
	EXPECT_NE(VNPU_OK, vnpu_model_reshape(m, "x", &s));
	EXPECT_EQ(VNPU_OK, vnpu_model_input_shape(m, 0, &s));
	check_shape(_metadata, &s, 3, (const int64_t[]){ 2, 3, 4 });
	EXPECT_EQ(VNPU_OK, vnpu_model_output_shape(m, 0, &s));
	check_shape(_metadata, &s, 3, (const int64_t[]){ 2, 3, 2 });
	vnpu_model_free(m);
}

/* @m's input @name is [@rank: @dims] and its output 0 [@orank: @odims]. */
static void check_io(struct __test_metadata *_metadata, vnpu_model *m, uint32_t rank,
		     const int64_t *dims, uint32_t orank,
		     const int64_t *odims)
{
	vnpu_shape s;

	EXPECT_EQ(VNPU_OK, vnpu_model_input_shape(m, 0, &s));
	check_shape(_metadata, &s, rank, dims);
	EXPECT_EQ(VNPU_OK, vnpu_model_output_shape(m, 0, &s));
	check_shape(_metadata, &s, orank, odims);
}

/* vnpu_model_reshape(@m, @name, @s) fails with @want, a message holding @text. */
static void check_reshape_refused(struct __test_metadata *_metadata, vnpu_model *m,
				  const char *name, const vnpu_shape *s,
				  vnpu_status want, const char *text)
{
	EXPECT_EQ(want, vnpu_model_reshape(m, name, s));
	EXPECT_NE(NULL, strstr(vnpu_last_error(), text));
}

/* x [-1, 4] -> Relu -> MatMul by w [4, 2] -> y; compiles once x is static. */
static vnpu_model *relu_matmul_model(void)
{
	struct mb *b = mb_new(13);

	mb_input(b, "x", F32, 2, (const int64_t[]){ -1, 4 });
	mb_init_f32(b, "w", 2, (const int64_t[]){ 4, 2 },
		    (const float[]){ 1, 2, 3, 4, 5, 6, 7, 8 });
	mb_node(b, "Relu", (const char *[]){ "x", NULL }, (const char *[]){ "r", NULL });
	mb_node(b, "MatMul", (const char *[]){ "r", "w", NULL }, (const char *[]){ "y", NULL });
	mb_output(b, "y");
	return mb_read(b);
}

/* Runs @p (x [@rows, 4] -> y [@rows, 2]) on x = i - 5 and checks y. */
static void check_relu_matmul_run(struct __test_metadata *_metadata, const struct vnpu_program *p,
				  int rows)
{
	float x[40], y[20];
	void *in[1] = { x }, *out[1] = { y };

	EXPECT_LE(rows, 10);
	EXPECT_EQ(1, p->num_inputs);
	EXPECT_EQ(2, p->inputs[0].shape.rank);
	EXPECT_EQ(rows, p->inputs[0].shape.dims[0]);
	for (int i = 0; i < rows * 4; i++)
		x[i] = (float)(i - 5);
	EXPECT_EQ(0, fe_run_program(p, in, out));
	for (int i = 0; i < rows; i++)
		for (int j = 0; j < 2; j++) {
			float want = 0;

			for (int k = 0; k < 4; k++)
				want += (x[i * 4 + k] > 0 ? x[i * 4 + k] : 0) *
					(float)(k * 2 + j + 1);
			EXPECT_EQ(want, y[i * 2 + j]);
		}
}

/*
 * Hostile arguments to vnpu_model_reshape(): each refused with a status
 * and a message naming what is wrong, the model as it was and fully usable
 * afterwards (compiles and runs right); dimensions whose element count
 * overflows are refused even when no node multiplies them out.
 */
TEST(reshape_hostile)
{
	static const int64_t dyn4[] = { VNPU_DIM_DYNAMIC, 4 }, dyn2[] = { VNPU_DIM_DYNAMIC, 2 };
	const vnpu_shape ok = { 2, { 3, 4 } };
	struct vnpu_program *p1 = NULL, *p2 = NULL;
	vnpu_model *m = relu_matmul_model();
	vnpu_shape s;

	EXPECT_NE(NULL, m);
	if (!m)
		return;
	check_reshape_refused(_metadata, NULL, "x", &ok, VNPU_INVALID_ARGUMENT, "NULL");
	check_reshape_refused(_metadata, m, NULL, &ok, VNPU_INVALID_ARGUMENT, "NULL");
	check_reshape_refused(_metadata, m, "x", NULL, VNPU_INVALID_ARGUMENT, "NULL");
	check_reshape_refused(_metadata, m, "nope", &ok, VNPU_NOT_FOUND, "'nope'");
	check_reshape_refused(_metadata, m, "y", &ok, VNPU_NOT_FOUND, "'y'");	/* an output */
	check_reshape_refused(_metadata, m, "w", &ok, VNPU_NOT_FOUND, "'w'");	/* an initializer */
	s = (vnpu_shape){ .rank = VNPU_MAX_RANK + 1 };
	check_reshape_refused(_metadata, m, "x", &s, VNPU_INVALID_ARGUMENT, "rank");
	s.rank = UINT32_MAX;
	check_reshape_refused(_metadata, m, "x", &s, VNPU_INVALID_ARGUMENT, "rank");
	/* A scalar: MatMul refuses it, naming itself. */
	s = (vnpu_shape){ .rank = 0 };
	check_reshape_refused(_metadata, m, "x", &s, VNPU_INVALID_ARGUMENT, "MatMul");
	/* K = 5 against w's 4: the later node refuses, not Relu. */
	s = (vnpu_shape){ 2, { 3, 5 } };
	check_reshape_refused(_metadata, m, "x", &s, VNPU_INVALID_ARGUMENT, "MatMul");
	check_io(_metadata, m, 2, dyn4, 2, dyn2);
	/* Negative, huge, and an element count past 64 bits. */
	s = (vnpu_shape){ 2, { INT64_MIN, 4 } };
	check_reshape_refused(_metadata, m, "x", &s, VNPU_INVALID_ARGUMENT, "dimension 0");
	s = (vnpu_shape){ 2, { 1ll << 62, 4 } };
	check_reshape_refused(_metadata, m, "x", &s, VNPU_INVALID_ARGUMENT, "reshape 'x'");
	s = (vnpu_shape){ 2, { INT64_MAX, 4 } };
	check_reshape_refused(_metadata, m, "x", &s, VNPU_INVALID_ARGUMENT, "reshape 'x'");
	s = (vnpu_shape){ 2, { 1ll << 40, 4 } };
	check_reshape_refused(_metadata, m, "x", &s, VNPU_INVALID_ARGUMENT, "reshape 'x'");
	s = (vnpu_shape){ 3, { 1ll << 32, 1ll << 32, 4 } };
	check_reshape_refused(_metadata, m, "x", &s, VNPU_INVALID_ARGUMENT, "reshape 'x'");
	/*
	 * No elements, but dimensions whose strides pass 64 bits (the
	 * compiler multiplied them out, signed overflow).
	 */
	s = (vnpu_shape){ 4, { 0, 1ll << 40, 1ll << 40, 4 } };
	check_reshape_refused(_metadata, m, "x", &s, VNPU_INVALID_ARGUMENT, "reshape 'x'");
	check_io(_metadata, m, 2, dyn4, 2, dyn2);
	/* Zero rows are a shape like any other. */
	check_reshaped(_metadata, m, "x", (vnpu_shape){ 2, { 0, 4 } }, 2, (const int64_t[]){ 0,
		       2 });
	/* Then right: it compiles and runs. */
	check_reshaped(_metadata, m, "x", (vnpu_shape){ 2, { 3, 4 } }, 2, (const int64_t[]){ 3,
		       2 });
	EXPECT_EQ(VNPU_OK, vnpu_compile(m, NULL, &p1));
	/* Reshaped after a compile: the program keeps its shape. */
	check_reshaped(_metadata, m, "x", (vnpu_shape){ 2, { 5, 4 } }, 2, (const int64_t[]){ 5,
		       2 });
	s = (vnpu_shape){ 2, { 1ll << 62, 4 } };
	check_reshape_refused(_metadata, m, "x", &s, VNPU_INVALID_ARGUMENT, "reshape 'x'");
	EXPECT_EQ(VNPU_OK, vnpu_compile(m, NULL, &p2));
	if (p1)
		check_relu_matmul_run(_metadata, p1, 3);
	if (p2)
		check_relu_matmul_run(_metadata, p2, 5);
	vnpu_program_free(p1);
	vnpu_program_free(p2);
	vnpu_model_free(m);
}

/*
 * Sequence input @name: fixed at two elements, a refused reshape of them
 * (the first refused: the second is never looked at) leaves both as they
 * were; vnpu_model_reshape() refuses the sequence itself.
 */
static void check_seq_reshape_refused(struct __test_metadata *_metadata, vnpu_model *m,
				      const char *name)
{
	vnpu_shape two[2] = { { 2, { 1, 2 } }, { 1, { 3 } } };
	struct vnpu_program *p = NULL;

	check_reshape_refused(_metadata, m, name, &two[0], VNPU_INVALID_ARGUMENT, "sequence");
	EXPECT_EQ(VNPU_OK, vnpu_model_reshape_sequence(m, name, 2, two));
	check_reshape_refused(_metadata, m, name, &two[0], VNPU_INVALID_ARGUMENT, "sequence");
	two[0].rank = VNPU_MAX_RANK + 1;
	two[1].dims[0] = 9;
	EXPECT_EQ(VNPU_INVALID_ARGUMENT, vnpu_model_reshape_sequence(m, name, 2, two));
	two[0] = (vnpu_shape){ 2, { 1ll << 40, 1ll << 40 } };
	EXPECT_EQ(VNPU_INVALID_ARGUMENT, vnpu_model_reshape_sequence(m, name, 2, two));
	EXPECT_NE(NULL, strstr(vnpu_last_error(), "element 0"));
	EXPECT_EQ(VNPU_OK, vnpu_compile(m, NULL, &p));
	if (p) {
		EXPECT_EQ(2, p->num_inputs);
		check_shape(_metadata, &p->inputs[0].shape, 2, (const int64_t[]){ 1, 2 });
		check_shape(_metadata, &p->inputs[1].shape, 1, (const int64_t[]){ 3 });
	}
	vnpu_program_free(p);
}

/*
 * An input that no node multiplies out (it feeds only Shape) still may not
 * take a shape of more elements than a tensor can hold; a frozen input is
 * no input any more; a sequence input is reshaped element by element, with
 * vnpu_model_reshape_sequence().
 */
TEST(reshape_hostile_inputs)
{
	static const int64_t axes[] = { 0 };
	const vnpu_shape one = { 1, { 1 } };
	struct vnpu_program *p = NULL;
	struct mb *b = mb_new(13);
	vnpu_shape s;
	vnpu_model *m;
	char path[512];

	mb_input(b, "x", F32, 2, (const int64_t[]){ -1, 4 });
	mb_input(b, "axes", I64, 1, (const int64_t[]){ 1 });
	mb_node(b, "Shape", (const char *[]){ "x", NULL }, (const char *[]){ "sh", NULL });
	mb_node(b, "Unsqueeze", (const char *[]){ "sh", "axes", NULL }, (const char *[]){ "y", NULL });
	mb_output(b, "y");
	m = mb_read(b);
	EXPECT_NE(NULL, m);
	if (!m)
		return;
	s = (vnpu_shape){ 2, { 1ll << 62, 4 } };
	check_reshape_refused(_metadata, m, "x", &s, VNPU_INVALID_ARGUMENT, "reshape 'x'");
	s = (vnpu_shape){ 2, { 1ll << 40, 1ll << 40 } };
	check_reshape_refused(_metadata, m, "x", &s, VNPU_INVALID_ARGUMENT, "reshape 'x'");
	EXPECT_EQ(VNPU_OK, vnpu_model_freeze_input(m, "axes", VNPU_TYPE_I64, &one, axes, 8));
	check_reshape_refused(_metadata, m, "axes", &one, VNPU_NOT_FOUND, "'axes'");
	check_reshaped(_metadata, m, "x", (vnpu_shape){ 2, { 6, 4 } }, 2, (const int64_t[]){ 1,
		       2 });
	EXPECT_EQ(VNPU_OK, vnpu_compile(m, NULL, &p));
	vnpu_program_free(p);
	p = NULL;
	vnpu_model_free(m);

	/* Frozen so: 2^32 x 2^32 x 1 elements are not the 0 of 64-bit arithmetic. */
	b = mb_new(13);
	mb_input(b, "f", F32, 3, (const int64_t[]){ -1, -1, -1 });
	mb_node(b, "Shape", (const char *[]){ "f", NULL }, (const char *[]){ "y", NULL });
	mb_output(b, "y");
	m = mb_read(b);
	EXPECT_NE(NULL, m);
	if (m) {
		s = (vnpu_shape){ 3, { 1ll << 32, 1ll << 32, 1 } };
		EXPECT_EQ(VNPU_INVALID_ARGUMENT,
			  vnpu_model_freeze_input(m, "f", VNPU_TYPE_F32, &s, NULL, 0));
		s = (vnpu_shape){ 3, { 0, 1ll << 32, 1ll << 32 } };
		EXPECT_EQ(VNPU_INVALID_ARGUMENT,
			  vnpu_model_freeze_input(m, "f", VNPU_TYPE_F32, &s, NULL, 0));
		EXPECT_NE(NULL, strstr(vnpu_last_error(), "freeze 'f'"));
		s = (vnpu_shape){ 3, { 0, 3, 2 } };
		EXPECT_EQ(VNPU_OK, vnpu_model_freeze_input(m, "f", VNPU_TYPE_F32, &s, NULL, 0));
		EXPECT_EQ(VNPU_OK, vnpu_model_output_shape(m, 0, &s));
		check_shape(_metadata, &s, 1, (const int64_t[]){ 3 });
		vnpu_model_free(m);
	}

	/* A constant of no elements and huge dimensions: never read. */
	b = mb_new(13);
	mb_input(b, "x", F32, 1, (const int64_t[]){ 1 });
	mb_init_f32(b, "e", 3, (const int64_t[]){ 0, 1ll << 40, 1ll << 40 }, NULL);
	mb_node(b, "Add", (const char *[]){ "x", "e", NULL }, (const char *[]){ "y", NULL });
	mb_output(b, "y");
	EXPECT_EQ(NULL, mb_read(b));
	EXPECT_NE(NULL, strstr(vnpu_last_error(), "'e'"));

	/* Declared so in the file: read (each dimension is in range), never compiled. */
	b = mb_new(13);
	mb_input(b, "x", F32, 2, (const int64_t[]){ 1ll << 40, 1ll << 40 });
	mb_input(b, "z", F32, 3, (const int64_t[]){ 1ll << 40, 0, 1ll << 40 });
	mb_node(b, "Shape", (const char *[]){ "x", NULL }, (const char *[]){ "y", NULL });
	mb_node(b, "Shape", (const char *[]){ "z", NULL }, (const char *[]){ "w", NULL });
	mb_output(b, "y");
	mb_output(b, "w");
	m = mb_read(b);
	EXPECT_NE(NULL, m);
	if (m) {
		EXPECT_EQ(VNPU_INVALID_ARGUMENT, vnpu_compile(m, NULL, &p));
		EXPECT_NE(NULL, strstr(vnpu_last_error(), "input 'x': more than 2^40 elements"));
		EXPECT_EQ(NULL, p);
		s = (vnpu_shape){ 1, { 1 } };
		EXPECT_EQ(VNPU_OK, vnpu_model_reshape(m, "x", &s));
		EXPECT_EQ(VNPU_INVALID_ARGUMENT, vnpu_compile(m, NULL, &p));
		EXPECT_NE(NULL, strstr(vnpu_last_error(), "input 'z': more than 2^40 elements"));
		EXPECT_EQ(NULL, p);
		vnpu_program_free(p);
		vnpu_model_free(m);
	}

	snprintf(path, sizeof(path), "%s/test_identity_sequence/model.onnx", TESTDATA);
	if (!vnpu_model_read_file(path, &m)) {
		const char *name;

		EXPECT_EQ(VNPU_OK, vnpu_model_input_name(m, 0, &name));
		s = (vnpu_shape){ 2, { 1, 2 } };
		check_reshape_refused(_metadata, m, name, &s, VNPU_INVALID_ARGUMENT, "sequence");
		check_seq_reshape_refused(_metadata, m, name);
		vnpu_model_free(m);
	}
}

/*
 * A refused reshape's message is the node that refused it, even when a
 * later node of another branch is one inference does not know (and leaves
 * unknown): putting the old shape back must not speak over it.
 */
TEST(reshape_refused_message)
{
	struct mb *b = mb_new(13);
	const vnpu_shape bad = { 2, { 3, 5 } };
	vnpu_model *m;

	mb_input(b, "x", F32, 2, (const int64_t[]){ -1, -1 });
	mb_init_f32(b, "w", 2, (const int64_t[]){ 4, 2 }, NULL);
	mb_node(b, "MatMul", (const char *[]){ "x", "w", NULL }, (const char *[]){ "y", NULL });
	mb_node(b, "NoSuchOp", (const char *[]){ "x", NULL }, (const char *[]){ "z", NULL });
	mb_output(b, "y");
	mb_output(b, "z");
	m = mb_read(b);
	EXPECT_NE(NULL, m);
	if (!m)
		return;
	check_reshape_refused(_metadata, m, "x", &bad, VNPU_INVALID_ARGUMENT, "MatMul");
	EXPECT_EQ(NULL, strstr(vnpu_last_error(), "NoSuchOp"));
	EXPECT_EQ(VNPU_INVALID_ARGUMENT,
		  vnpu_model_freeze_input(m, "x", VNPU_TYPE_F32, &bad, (const float[15]){ 0 }, 60));
	EXPECT_EQ(NULL, strstr(vnpu_last_error(), "NoSuchOp"));
	check_reshaped(_metadata, m, "x", (vnpu_shape){ 2, { 3, 4 } }, 2, (const int64_t[]){ 3,
		       2 });
	vnpu_model_free(m);
}

/* Reads node test @name, reshapes input @input to @s: @want, a message. */
static vnpu_model *read_reshaped(struct __test_metadata *_metadata, const char *name,
				 const char *input, vnpu_shape s,
				 vnpu_status want)
{
	char path[512];
	vnpu_model *m;

	snprintf(path, sizeof(path), "%s/%s/model.onnx", TESTDATA, name);
	if (vnpu_model_read_file(path, &m))
		return NULL;
	EXPECT_EQ(want, vnpu_model_reshape(m, input, &s));
	EXPECT_TRUE(want == VNPU_OK || vnpu_last_error()[0]);
	return m;
}

/* Compiling @m fails with @want and a message holding @text; frees @m. */
static void check_compile_fails(struct __test_metadata *_metadata, vnpu_model *m, vnpu_status want,
				const char *text)
{
	struct vnpu_program *p = NULL;

	if (!m)
		return;
	EXPECT_EQ(want, vnpu_compile(m, NULL, &p));
	EXPECT_NE(NULL, strstr(vnpu_last_error(), text));
	vnpu_program_free(p);
	vnpu_model_free(m);
}

/*
 * MatMul of two vectors reshaped from matrices: a scalar dot product (its
 * lowering wrote index -1 of Y's dimensions, giving Y no room for M).
 */
static void check_dot_product(struct __test_metadata *_metadata)
{
	struct vnpu_program *p = NULL;
	struct mb *b = mb_new(13);
	float x[3] = { 1, 2, 3 }, w[3] = { 4, -5, 6 }, y = 0;
	void *in[2] = { x, w }, *out[1] = { &y };
	vnpu_model *m;
	vnpu_shape s;

	mb_input(b, "x", F32, 2, (const int64_t[]){ 2, 3 });
	mb_input(b, "w", F32, 2, (const int64_t[]){ 3, 4 });
	mb_node(b, "MatMul", (const char *[]){ "x", "w", NULL }, (const char *[]){ "y", NULL });
	mb_output(b, "y");
	m = mb_read(b);
	EXPECT_NE(NULL, m);
	if (!m)
		return;
	s = (vnpu_shape){ 1, { 3 } };
	EXPECT_EQ(VNPU_OK, vnpu_model_reshape(m, "w", &s));
	EXPECT_EQ(VNPU_OK, vnpu_model_reshape(m, "x", &s));
	EXPECT_EQ(VNPU_OK, vnpu_model_output_shape(m, 0, &s));
	EXPECT_EQ(0, s.rank);
	EXPECT_EQ(VNPU_OK, vnpu_compile(m, NULL, &p));
	if (p) {
		EXPECT_EQ(0, fe_run_program(p, in, out));
		EXPECT_EQ(12.0f, y);
	}
	vnpu_program_free(p);
	vnpu_model_free(m);
}

/*
 * Shapes no declared input had before reshape took any rank, each of which
 * reached past an array or multiplied without bound: GatherND's indices
 * as a scalar (read index -1 of its dimensions), QuantizeLinear's zero
 * point of no elements against a scalar x (a view of rank -1, read past
 * 8 dimensions), a Scan of 2^20 steps (inferred one by one: 26 GB), a DFT
 * of 2^20 samples (its matrix 16 TB), an opset-8 Scan of dynamic batches
 * (counted as (size_t)-1), Trilu's band mask of 1 x 2^40. Each is refused
 * with a message.
 */
TEST(reshape_any_rank_nodes)
{
	vnpu_model *m;

	m = read_reshaped(_metadata, "test_gathernd_example_int32", "indices",
			  (vnpu_shape){ .rank = 0 },
			  VNPU_INVALID_ARGUMENT);
	EXPECT_NE(NULL, strstr(vnpu_last_error(), "GatherND"));
	vnpu_model_free(m);

	/* A per-axis zero point needs its axis: refused by the reshape. */
	m = read_reshaped(_metadata, "test_quantizelinear", "x", (vnpu_shape){ .rank = 0 },
			  VNPU_OK);
	if (m) {
		const vnpu_shape empty = { 1, { 0 } };

		EXPECT_EQ(VNPU_INVALID_ARGUMENT, vnpu_model_reshape(m, "y_zero_point", &empty));
		EXPECT_NE(NULL,
			  strstr(vnpu_last_error(), "QuantizeLinear node: axis 1 out of range"));
		vnpu_model_free(m);
	}

	/* Past the device's 65536 unrolled steps: the reshape refuses it. */
	m = read_reshaped(_metadata, "test_scan9_sum", "x", (vnpu_shape){ 2, { 1 << 20, 2 } },
			  VNPU_UNSUPPORTED);
	EXPECT_NE(NULL, strstr(vnpu_last_error(), "Scan node: more than 65536 scan steps"));
	vnpu_model_free(m);

	/* Opset 8's batches, all dynamic: counted as (size_t)-1 (out of memory). */
	m = read_reshaped(_metadata, "test_scan_sum", "initial", (vnpu_shape){ 2,
			  { VNPU_DIM_DYNAMIC, 2 } },
			  VNPU_OK);
	if (m) {
		const vnpu_shape x = { 3, { VNPU_DIM_DYNAMIC, 3, 2 } };

		EXPECT_EQ(VNPU_OK, vnpu_model_reshape(m, "x", &x));
		check_compile_fails(_metadata, m, VNPU_INVALID_ARGUMENT, "dynamic dimensions");
	}

	check_dot_product(_metadata);

	m = read_reshaped(_metadata, "test_dft", "x", (vnpu_shape){ 4, { 1, 1 << 20, 1, 1 } },
			  VNPU_OK);
	check_compile_fails(_metadata, m, VNPU_UNSUPPORTED,
			    "matrix would hold more than 2^28 floats");

	/* Trilu's constant band mask: 1 TB asked. */
	m = read_reshaped(_metadata, "test_triu", "x", (vnpu_shape){ 2, { 1, 1ll << 40 } },
			  VNPU_OK);
	check_compile_fails(_metadata, m, VNPU_UNSUPPORTED, "more than 2^28 bytes");
}

/*
 * CastLike reads only the element type of its second input: a 'like' of
 * any shape fits (ONNX's own castlike bf16 tests feed a [1] to an input
 * declared [3, 4]), the output keeps the first input's shape.
 */
TEST(castlike_any_like_shape)
{
	struct mb *b = mb_new(15);
	vnpu_element_type t;
	vnpu_model *m;

	mb_input(b, "x", F32, 2, (const int64_t[]){ 3, 4 });
	mb_input(b, "like", ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16, 2, (const int64_t[]){ 3, 4 });
	mb_node(b, "CastLike", (const char *[]){ "x", "like", NULL }, (const char *[]){ "y", NULL });
	mb_output(b, "y");
	m = mb_read(b);
	EXPECT_NE(NULL, m);
	if (!m)
		return;
	check_reshaped(_metadata, m, "like", (vnpu_shape){ 1, { 1 } }, 2, (const int64_t[]){ 3,
		       4 });
	EXPECT_EQ(VNPU_OK, vnpu_model_output_type(m, 0, &t));
	EXPECT_EQ(VNPU_TYPE_BF16, t);
	check_reshaped(_metadata, m, "like", (vnpu_shape){ 1, { 0 } }, 2, (const int64_t[]){ 3,
		       4 });
	vnpu_model_free(m);
}

/* Shape inference through a folded Shape -> Gather -> Concat -> Reshape
 * chain, opset 13 Unsqueeze with constant axes, Conv geometry. */
TEST(shape_inference)
{
	struct mb *b = mb_new(13);
	Onnx__NodeProto *n;
	vnpu_model *m;
	vnpu_shape s;

	mb_input(b, "x", F32, 4, (const int64_t[]){ 2, 3, 17, 10 });
	mb_init_f32(b, "w", 4, (const int64_t[]){ 8, 3, 3, 3 }, NULL);
	n = mb_node(b, "Conv", (const char *[]){ "x", "w", NULL }, (const char *[]){ "c", NULL });
	mb_attr_ints(n, "strides", 2, (const int64_t[]){ 2, 1 });
	mb_attr_ints(n, "pads", 4, (const int64_t[]){ 1, 0, 1, 0 });
	mb_node(b, "Shape", (const char *[]){ "c", NULL }, (const char *[]){ "sh", NULL });
	mb_init_i64(b, "i0", 1, (const int64_t[]){ 1 }, (const int64_t[]){ 0 });
	n = mb_node(b, "Gather", (const char *[]){ "sh", "i0", NULL }, (const char *[]){ "n", NULL });
	mb_attr_int(n, "axis", 0);
	mb_init_i64(b, "m1", 1, (const int64_t[]){ 1 }, (const int64_t[]){ -1 });
	n = mb_node(b, "Concat", (const char *[]){ "n", "m1", NULL }, (const char *[]){ "ns", NULL });
	mb_attr_int(n, "axis", 0);
	mb_node(b, "Reshape", (const char *[]){ "c", "ns", NULL }, (const char *[]){ "flat", NULL });
	mb_init_i64(b, "ax", 1, (const int64_t[]){ 1 }, (const int64_t[]){ 1 });
	mb_node(b, "Unsqueeze", (const char *[]){ "flat", "ax", NULL }, (const char *[]){ "y", NULL });
	mb_output(b, "c");
	mb_output(b, "y");
	m = mb_read(b);
	EXPECT_NE(NULL, m);
	if (!m)
		return;
	/* OH = (17 + 2 - 3) / 2 + 1 = 9, OW = 10 - 3 + 1 = 8. */
	EXPECT_EQ(VNPU_OK, vnpu_model_output_shape(m, 0, &s));
	check_shape(_metadata, &s, 4, (const int64_t[]){ 2, 8, 9, 8 });
	EXPECT_EQ(VNPU_OK, vnpu_model_output_shape(m, 1, &s));
	check_shape(_metadata, &s, 3, (const int64_t[]){ 2, 1, 8 * 9 * 8 });
	vnpu_model_free(m);
}

/* A shape-deciding input frozen to a constant: shapes fold. */
TEST(freeze_input)
{
	static const int64_t axes[] = { 0, 3 };
	struct mb *b = mb_new(13);
	struct vnpu_program *p = NULL;
	vnpu_shape s, as = { .rank = 1, .dims = { 2 } };
	vnpu_model *m;
	size_t n;

	mb_input(b, "x", F32, 2, (const int64_t[]){ 3, 4 });
	mb_input(b, "axes", I64, 1, (const int64_t[]){ 2 });
	mb_node(b, "Unsqueeze", (const char *[]){ "x", "axes", NULL }, (const char *[]){ "y", NULL });
	mb_output(b, "y");
	m = mb_read(b);
	EXPECT_NE(NULL, m);
	if (!m)
		return;
	EXPECT_EQ(VNPU_OK, vnpu_model_output_shape(m, 0, &s));
	EXPECT_EQ(4, s.rank);
	EXPECT_EQ(VNPU_DIM_DYNAMIC, s.dims[0]);
	EXPECT_EQ(VNPU_UNSUPPORTED, vnpu_compile(m, NULL, &p));
	EXPECT_EQ(VNPU_INVALID_ARGUMENT,
		  vnpu_model_freeze_input(m, "axes", VNPU_TYPE_I32, &as, axes, 8));
	EXPECT_EQ(VNPU_INVALID_ARGUMENT,
		  vnpu_model_freeze_input(m, "axes", VNPU_TYPE_I64, &as, axes, 12));
	EXPECT_EQ(VNPU_NOT_FOUND, vnpu_model_freeze_input(m, "nope", VNPU_TYPE_I64, &as, axes, 16));
	EXPECT_EQ(VNPU_OK, vnpu_model_get_inputs_size(m, &n));
	EXPECT_EQ(2, n);
	EXPECT_EQ(VNPU_OK, vnpu_model_freeze_input(m, "axes", VNPU_TYPE_I64, &as, axes, 16));
	EXPECT_EQ(VNPU_OK, vnpu_model_get_inputs_size(m, &n));
	EXPECT_EQ(1, n);
	EXPECT_EQ(VNPU_OK, vnpu_model_output_shape(m, 0, &s));
	check_shape(_metadata, &s, 4, (const int64_t[]){ 1, 3, 4, 1 });
	EXPECT_EQ(VNPU_OK, vnpu_compile(m, NULL, &p));
	vnpu_program_free(p);
	vnpu_model_free(m);
}

/*
 * Ops whose output extents depend on values (NonZero, Unique, Compress)
 * fold once their inputs are known; before that the extent is unknown and
 * a static compile refuses. Bad inputs are errors.
 */
TEST(data_dependent_folds)
{
	static const float xv[] = { 1, 0, 2, 1, 0, 3 };
	vnpu_shape s, xs = { .rank = 2, .dims = { 3, 2 } };
	struct vnpu_program *p = NULL;
	struct mb *b = mb_new(13);
	Onnx__NodeProto *n;
	vnpu_model *m;

	mb_input(b, "x", F32, 2, (const int64_t[]){ 3, 2 });
	mb_node(b, "NonZero", (const char *[]){ "x", NULL }, (const char *[]){ "nz", NULL });
	mb_node(b, "Unique", (const char *[]){ "x", NULL },
		(const char *[]){ "u", "ui", "uinv", "ucnt", NULL });
	mb_output(b, "nz");
	mb_output(b, "u");
	mb_output(b, "uinv");
	mb_output(b, "ucnt");
	m = mb_read(b);
	EXPECT_NE(NULL, m);
	if (!m)
		return;
	EXPECT_EQ(VNPU_OK, vnpu_model_output_shape(m, 0, &s));
	EXPECT_EQ(2, s.rank);
	EXPECT_EQ(2, s.dims[0]);
	EXPECT_EQ(VNPU_DIM_DYNAMIC, s.dims[1]);
	EXPECT_EQ(VNPU_UNSUPPORTED, vnpu_compile(m, NULL, &p));
	EXPECT_NE(NULL, strstr(vnpu_last_error(), "not known at compile time"));
	EXPECT_EQ(VNPU_OK, vnpu_model_freeze_input(m, "x", VNPU_TYPE_F32, &xs, xv, sizeof(xv)));
	EXPECT_EQ(VNPU_OK, vnpu_model_output_shape(m, 0, &s));
	check_shape(_metadata, &s, 2, (const int64_t[]){ 2, 4 });
	EXPECT_EQ(VNPU_OK, vnpu_model_output_shape(m, 1, &s));
	check_shape(_metadata, &s, 1, (const int64_t[]){ 4 });
	EXPECT_EQ(VNPU_OK, vnpu_model_output_shape(m, 2, &s));
	check_shape(_metadata, &s, 1, (const int64_t[]){ 6 });
	EXPECT_EQ(VNPU_OK, vnpu_model_output_shape(m, 3, &s));
	check_shape(_metadata, &s, 1, (const int64_t[]){ 4 });
	EXPECT_EQ(VNPU_OK, vnpu_compile(m, NULL, &p));
	vnpu_program_free(p);
	vnpu_model_free(m);

	/* Compress wants a 1-D bool condition; Unique's axis must exist. */
	b = mb_new(13);
	mb_input(b, "x", F32, 2, (const int64_t[]){ 3, 2 });
	mb_input(b, "c", F32, 1, (const int64_t[]){ 3 });
	mb_node(b, "Compress", (const char *[]){ "x", "c", NULL }, (const char *[]){ "y", NULL });
	mb_output(b, "y");
	m = mb_read(b);
	EXPECT_EQ(NULL, m);
	EXPECT_NE(NULL, strstr(vnpu_last_error(), "condition"));
	vnpu_model_free(m);
	b = mb_new(13);
	mb_input(b, "x", F32, 2, (const int64_t[]){ 3, 2 });
	n = mb_node(b, "Unique", (const char *[]){ "x", NULL }, (const char *[]){ "y", NULL });
	mb_attr_int(n, "axis", 2);
	mb_output(b, "y");
	m = mb_read(b);
	EXPECT_EQ(NULL, m);
	EXPECT_NE(NULL, strstr(vnpu_last_error(), "axis"));
	vnpu_model_free(m);
}

static vnpu_status write_external_model(const char *dir, const char *location, long offset)
{
	struct mb *b = mb_new(13);
	char path[512];
	size_t size;
	void *buf;
	FILE *f;

	mb_input(b, "x", F32, 2, (const int64_t[]){ 1, 4 });
	mb_init_external(b, "w", 2, (const int64_t[]){ 1, 4 }, location, offset, 4);
	mb_node(b, "Add", (const char *[]){ "x", "w", NULL }, (const char *[]){ "y", NULL });
	mb_output(b, "y");
	buf = mb_pack(b, &size);
	snprintf(path, sizeof(path), "%s/model.onnx", dir);
	f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, size, f) != size) {
		free(buf);
		return VNPU_GENERAL_ERROR;
	}
	fclose(f);
	free(buf);
	return VNPU_OK;
}

/* The model in @dir reads @location: VNPU_OK with w[1..4], or @want and @says. */
static void external_is(struct __test_metadata *_metadata, const char *dir, const char *location,
			long offset, vnpu_status want,
			const char *says)
{
	static const float w[4] = { 1.5f, -2, 3.25f, 8 };
	struct vnpu_program *p = NULL;
	char path[512];
	vnpu_model *m = NULL;

	EXPECT_EQ(VNPU_OK, write_external_model(dir, location, offset));
	snprintf(path, sizeof(path), "%s/model.onnx", dir);
	EXPECT_EQ(want, vnpu_model_read_file(path, &m));
	if (want != VNPU_OK) {
		EXPECT_TRUE(!m);
		if (!strstr(vnpu_last_error(), says))
			TH_LOG("  %s: '%s' does not say '%s'", location,
				vnpu_last_error(), says);
		EXPECT_NE(NULL, strstr(vnpu_last_error(), says));
		return;
	}
	if (m) {
		float x[4] = { 0 }, y[4];
		void *in[1] = { x }, *out[1] = { y };

		EXPECT_EQ(VNPU_OK, vnpu_compile(m, NULL, &p));
		if (p) {
			EXPECT_EQ(0, fe_run_program(p, in, out));
			EXPECT_EQ(0, memcmp(y, w, sizeof(y)));
		}
		vnpu_program_free(p);
		vnpu_model_free(m);
	}
}

/* Write @path: 99, then the four weights, then 99. */
static void write_weights(struct __test_metadata *_metadata, const char *path)
{
	static const float w[6] = { 99, 1.5f, -2, 3.25f, 8, 99 };
	FILE *f = fopen(path, "wb");

	EXPECT_TRUE(f && fwrite(w, 4, 6, f) == 6);
	if (f)
		fclose(f);
}

/* Weights in an external data file next to the model. */
TEST(external_data)
{
	char dir[] = "/tmp/vnpu-fe-XXXXXX", path[512];
	vnpu_model *m = NULL;
	size_t size;
	void *buf;

	EXPECT_NE(NULL, mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/weights.bin", dir);
	write_weights(_metadata, path);
	snprintf(path, sizeof(path), "%s/model.onnx", dir);
	/* Offset 4: the four floats after the first. */
	external_is(_metadata, dir, "weights.bin", 4, VNPU_OK, NULL);
	/* From memory there is no folder to read it from. */
	buf = NULL;
	{
		FILE *mf = fopen(path, "rb");

		if (mf) {
			buf = malloc(4096);
			size = fread(buf, 1, 4096, mf);
			fclose(mf);
			EXPECT_EQ(VNPU_NOT_FOUND, vnpu_model_read_memory(buf, size, &m));
		}
		free(buf);
	}
	/* Past the end of the file, a missing file, a path leaving the folder. */
	external_is(_metadata, dir, "weights.bin", 12, VNPU_PARSE_ERROR, "has no 16 at offset 12");
	external_is(_metadata, dir, "nothere.bin", 0, VNPU_NOT_FOUND, "nothere.bin");
	external_is(_metadata, dir, "../weights.bin", 0, VNPU_PARSE_ERROR,
		    "leaves the model's folder");
	external_is(_metadata, dir, "/etc/passwd", 0, VNPU_PARSE_ERROR,
		    "leaves the model's folder");
	unlink(path);
	snprintf(path, sizeof(path), "%s/weights.bin", dir);
	unlink(path);
	rmdir(dir);
}

/*
 * External data stays inside the model's folder: no symbolic link is
 * followed (to a file or a folder), a FIFO or a folder is no data file and
 * never blocks the read, a ".." component leaves, and numbers are numbers.
 * Twice: with openat2() and with the walk one component at a time that
 * kernels without it get.
 */
TEST(external_escapes)
{
	char dir[] = "/tmp/vnpu-fe-XXXXXX", out[] = "/tmp/vnpu-fe-out-XXXXXX", path[1024];
	static const char *const made[] = {
		"model.onnx", "link", "sublink", "fifo", "real/w.bin", "a..b.bin",
	};

	EXPECT_TRUE(mkdtemp(dir) && mkdtemp(out));
	snprintf(path, sizeof(path), "%s/secret.bin", out);
	write_weights(_metadata, path);
	snprintf(path, sizeof(path), "%s/real", dir);
	EXPECT_EQ(0, mkdir(path, 0700));
	snprintf(path, sizeof(path), "%s/real/w.bin", dir);
	write_weights(_metadata, path);
	snprintf(path, sizeof(path), "%s/a..b.bin", dir);
	write_weights(_metadata, path);
	snprintf(path, sizeof(path), "%s/link", dir);
	{
		char target[1024];

		snprintf(target, sizeof(target), "%s/secret.bin", out);
		EXPECT_EQ(0, symlink(target, path));
		snprintf(path, sizeof(path), "%s/sublink", dir);
		EXPECT_EQ(0, symlink(out, path));
	}
	snprintf(path, sizeof(path), "%s/fifo", dir);
	EXPECT_EQ(0, mkfifo(path, 0600));
	/* A read that blocks fails the test instead of hanging it. */
	alarm(60);
	for (int pass = 0; pass < 2; pass++) {
		if (pass)
			setenv("VNPU_DEBUG_NO_OPENAT2", "1", 1);
		external_is(_metadata, dir, "real/w.bin", 4, VNPU_OK, NULL);
		external_is(_metadata, dir, "./real//w.bin", 4, VNPU_OK, NULL);
		external_is(_metadata, dir, "a..b.bin", 4, VNPU_OK, NULL);
		external_is(_metadata, dir, "link", 4, VNPU_PARSE_ERROR, "symbolic link");
		external_is(_metadata, dir, "sublink/secret.bin", 4, VNPU_PARSE_ERROR,
			    "symbolic link");
		external_is(_metadata, dir, "real/../real/w.bin", 4, VNPU_PARSE_ERROR,
			    "leaves the model's folder");
		external_is(_metadata, dir, "fifo", 0, VNPU_PARSE_ERROR, "not a regular file");
		external_is(_metadata, dir, "real", 0, VNPU_PARSE_ERROR, "not a regular file");
		external_is(_metadata, dir, "real/w.bin/x", 0, VNPU_NOT_FOUND, "real/w.bin/x");
		external_is(_metadata, dir, "real/w.bin", -4, VNPU_PARSE_ERROR, "is not a number");
		external_is(_metadata, dir, "real/w.bin", 12, VNPU_PARSE_ERROR,
			    "has no 16 at offset 12");
	}
	unsetenv("VNPU_DEBUG_NO_OPENAT2");
	alarm(0);
	for (size_t i = 0; i < sizeof(made) / sizeof(made[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, made[i]);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/real", dir);
	rmdir(path);
	rmdir(dir);
	snprintf(path, sizeof(path), "%s/secret.bin", out);
	unlink(path);
	rmdir(out);
}

/* The attribute schema's lookup is a binary search over its names. */
TEST(attr_schema_sorted)
{
	EXPECT_TRUE(vnpu_attr_schema_sorted());
}

KSFT_MAIN

// SPDX-License-Identifier: MIT
/* The ONNX reader, the IR and shape inference. */
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "fe_test.h"
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

static void check_shape(const vnpu_shape *s, uint32_t rank, const int64_t *dims)
{
	CHECK_EQ(s->rank, rank);
	for (uint32_t d = 0; d < rank && d < s->rank; d++)
		CHECK_EQ(s->dims[d], dims[d]);
}

static void test_wakeword_models(void)
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
			printf("  skip %s: not installed (scripts/install-deps)\n", files[i]);
			continue;
		}
		CHECK_EQ(vnpu_model_read_file(path, &m), VNPU_OK);
		vnpu_model_free(m);
	}
	path = fe_wakeword_model("alexa_v0.1.onnx");
	if (path && !vnpu_model_read_file(path, &m)) {
		vnpu_element_type t;
		const char *name;
		int64_t opset;

		CHECK_EQ(vnpu_model_get_inputs_size(m, &n), VNPU_OK);
		CHECK_EQ(n, 1);
		CHECK_EQ(vnpu_model_input_name(m, 0, &name), VNPU_OK);
		CHECK(!strcmp(name, "onnx::Flatten_0"));
		CHECK_EQ(vnpu_model_input_type(m, 0, &t), VNPU_OK);
		CHECK_EQ(t, VNPU_TYPE_F32);
		CHECK_EQ(vnpu_model_input_shape(m, 0, &s), VNPU_OK);
		check_shape(&s, 3, (const int64_t[]){ 1, 16, 96 });
		CHECK_EQ(vnpu_model_output_shape(m, 0, &s), VNPU_OK);
		check_shape(&s, 2, (const int64_t[]){ 1, 1 });
		CHECK_EQ(vnpu_model_get_ops_size(m, &n), VNPU_OK);
		CHECK_EQ(n, 7);
		CHECK_EQ(vnpu_model_get_opset(m, &opset), VNPU_OK);
		CHECK_EQ(opset, 13);
		vnpu_model_free(m);
	}
	path = fe_wakeword_model("embedding_model.onnx");
	if (path && !vnpu_model_read_file(path, &m)) {
		/* [?, 76, 32, 1] -> [?, 1, 1, 96]; the batch set by reshape. */
		CHECK_EQ(vnpu_model_output_shape(m, 0, &s), VNPU_OK);
		check_shape(&s, 4, (const int64_t[]){ -1, 1, 1, 96 });
		s = (vnpu_shape){ .rank = 4, .dims = { 3, 76, 32, 1 } };
		CHECK_EQ(vnpu_model_reshape(m, "input_1", &s), VNPU_OK);
		CHECK_EQ(vnpu_model_output_shape(m, 0, &s), VNPU_OK);
		check_shape(&s, 4, (const int64_t[]){ 3, 1, 1, 96 });
		vnpu_model_free(m);
	}
	path = fe_wakeword_model("melspectrogram.onnx");
	if (path && !vnpu_model_read_file(path, &m)) {
		s = (vnpu_shape){ .rank = 2, .dims = { 1, 1280 } };
		CHECK_EQ(vnpu_model_reshape(m, "input", &s), VNPU_OK);
		CHECK_EQ(vnpu_model_output_shape(m, 0, &s), VNPU_OK);
		check_shape(&s, 4, (const int64_t[]){ 1, 1, 5, 32 });
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
static void test_node_test_shapes(void)
{
	DIR *dir = opendir(TESTDATA);
	struct dirent *e;
	int compared = 0, read_ok = 0;

	if (!dir) {
		printf("  skip: %s not installed\n", TESTDATA);
		return;
	}
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
				if (memcmp(&want, &got, sizeof(want)) || (int)t != want_type) {
					fprintf(stderr, "  %s output %zu: inferred %s rank %u, declared type %d rank %u\n",
						e->d_name, o, vnpu_element_type_str(t), got.rank,
						want_type, want.rank);
					fe_failures++;
				}
			}
			vnpu_model_free(m);
		}
		if (mp)
			onnx__model_proto__free_unpacked(mp, NULL);
		free(buf);
	}
	closedir(dir);
	printf("  %d models read, %d outputs compared\n", read_ok, compared);
	CHECK(read_ok > 700);
	CHECK(compared > 500);
}

static void expect_parse_error(const void *buf, size_t size)
{
	vnpu_model *m = NULL;
	vnpu_status st = vnpu_model_read_memory(buf, size, &m);

	if (st == VNPU_OK) {
		/* A cut at a field boundary can still be a model: compiling
		 * it works or fails cleanly. */
		struct vnpu_program *p = NULL;

		st = vnpu_compile(m, NULL, &p);
		CHECK(st == VNPU_OK || vnpu_last_error()[0] != '\0');
		vnpu_program_free(p);
		vnpu_model_free(m);
		return;
	}
	CHECK(st == VNPU_PARSE_ERROR || st == VNPU_UNSUPPORTED);
	CHECK(vnpu_last_error()[0] != '\0');
	CHECK(m == NULL);
}

static void test_malformed_protobuf(void)
{
	static const unsigned char garbage[] = { 0xff, 0xff, 0xff, 0xff, 0x0f, 0x08, 0x99 };
	const char *path = fe_wakeword_model("timer_v0.1.onnx");
	vnpu_model *m = NULL;
	size_t size;
	void *buf;

	CHECK_EQ(vnpu_model_read_memory(garbage, sizeof(garbage), &m), VNPU_PARSE_ERROR);
	CHECK(strstr(vnpu_last_error(), "protobuf") != NULL);
	CHECK_EQ(vnpu_model_read_memory("", 0, &m), VNPU_PARSE_ERROR);
	CHECK(m == NULL);
	CHECK_EQ(vnpu_model_read_memory(NULL, 4, &m), VNPU_INVALID_ARGUMENT);
	CHECK_EQ(vnpu_model_read_file("/nonexistent/model.onnx", &m), VNPU_NOT_FOUND);
	if (!path) {
		printf("  skip truncation: models not installed\n");
		return;
	}
	buf = read_all(path, &size);
	CHECK(buf != NULL);
	if (!buf)
		return;
	/* Cut everywhere near the start, then every 997 bytes. */
	for (size_t cut = 0; cut < size; cut += cut < 512 ? 1 : 997)
		expect_parse_error(buf, cut);
	/* Flip bytes in the structure. */
	for (size_t pos = 0; pos < 512 && pos < size; pos++) {
		unsigned char *b = buf, old = b[pos];

		b[pos] ^= 0x5a;
		expect_parse_error(buf, size);
		b[pos] = old;
	}
	free(buf);
}

/* Random byte mutations of a spread of ONNX node tests: read (and, when
 * that still works, compile) without a crash; fixed seed, so repeatable. */
static void test_mutations(void)
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
			expect_parse_error(m, size);
			free(m);
		}
		free(buf);
	}
	printf("  %u mutated models read and compiled or refused\n", tried);
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

static void test_malformed_graphs(void)
{
	const int64_t d4[] = { 1, 4 };
	struct mb *b;

	/* A cycle. */
	b = mb_new(13);
	mb_input(b, "x", F32, 2, d4);
	mb_node(b, "Add", (const char *[]){ "x", "c", NULL }, (const char *[]){ "a", NULL });
	mb_node(b, "Relu", (const char *[]){ "a", NULL }, (const char *[]){ "c", NULL });
	mb_output(b, "c");
	CHECK_EQ(read_status(b), VNPU_PARSE_ERROR);
	CHECK(strstr(vnpu_last_error(), "cycle") != NULL);

	/* A name nothing defines (a missing initializer). */
	b = mb_new(13);
	mb_input(b, "x", F32, 2, d4);
	mb_node(b, "Add", (const char *[]){ "x", "w", NULL }, (const char *[]){ "y", NULL });
	mb_output(b, "y");
	CHECK_EQ(read_status(b), VNPU_PARSE_ERROR);
	CHECK(strstr(vnpu_last_error(), "'w'") != NULL);

	/* Two producers of one name. */
	b = mb_new(13);
	mb_input(b, "x", F32, 2, d4);
	mb_node(b, "Relu", (const char *[]){ "x", NULL }, (const char *[]){ "y", NULL });
	mb_node(b, "Neg", (const char *[]){ "x", NULL }, (const char *[]){ "y", NULL });
	mb_output(b, "y");
	CHECK_EQ(read_status(b), VNPU_PARSE_ERROR);

	/* Wrong types: f32 + i64. */
	b = mb_new(13);
	mb_input(b, "x", F32, 2, d4);
	mb_init_i64(b, "k", 1, (const int64_t[]){ 1 }, (const int64_t[]){ 3 });
	mb_node(b, "Add", (const char *[]){ "x", "k", NULL }, (const char *[]){ "y", NULL });
	mb_output(b, "y");
	CHECK_EQ(read_status(b), VNPU_PARSE_ERROR);
	CHECK(strstr(vnpu_last_error(), "types differ") != NULL);

	/* Shapes that do not broadcast. */
	b = mb_new(13);
	mb_input(b, "x", F32, 2, d4);
	mb_init_f32(b, "w", 1, (const int64_t[]){ 3 }, NULL);
	mb_node(b, "Mul", (const char *[]){ "x", "w", NULL }, (const char *[]){ "y", NULL });
	mb_output(b, "y");
	CHECK_EQ(read_status(b), VNPU_PARSE_ERROR);

	/* Huge dims. */
	b = mb_new(13);
	mb_input(b, "x", F32, 2, (const int64_t[]){ 1, 1ll << 45 });
	mb_node(b, "Relu", (const char *[]){ "x", NULL }, (const char *[]){ "y", NULL });
	mb_output(b, "y");
	CHECK_EQ(read_status(b), VNPU_PARSE_ERROR);

	/* Repeats and shapes that would overflow. */
	b = mb_new(13);
	mb_input(b, "x", F32, 2, d4);
	mb_init_i64(b, "rep", 1, (const int64_t[]){ 2 },
		    (const int64_t[]){ 1ll << 40, 1ll << 40 });
	mb_node(b, "Tile", (const char *[]){ "x", "rep", NULL }, (const char *[]){ "y", NULL });
	mb_output(b, "y");
	CHECK_EQ(read_status(b), VNPU_PARSE_ERROR);
	b = mb_new(13);
	mb_input(b, "x", F32, 2, d4);
	mb_init_i64(b, "sh", 1, (const int64_t[]){ 3 },
		    (const int64_t[]){ 1ll << 30, 1ll << 30, 4 });
	mb_node(b, "Expand", (const char *[]){ "x", "sh", NULL }, (const char *[]){ "y", NULL });
	mb_output(b, "y");
	CHECK_EQ(read_status(b), VNPU_PARSE_ERROR);
	CHECK(strstr(vnpu_last_error(), "too large") != NULL);

	/* An opset outside 1..17. */
	b = mb_new(18);
	mb_input(b, "x", F32, 2, d4);
	mb_node(b, "Relu", (const char *[]){ "x", NULL }, (const char *[]){ "y", NULL });
	mb_output(b, "y");
	CHECK_EQ(read_status(b), VNPU_UNSUPPORTED);

	/* No outputs. */
	b = mb_new(13);
	mb_input(b, "x", F32, 2, d4);
	CHECK_EQ(read_status(b), VNPU_PARSE_ERROR);

	/* Reshape to a shape that does not hold the elements. */
	b = mb_new(13);
	mb_input(b, "x", F32, 2, d4);
	mb_init_i64(b, "s", 1, (const int64_t[]){ 2 }, (const int64_t[]){ 3, 3 });
	mb_node(b, "Reshape", (const char *[]){ "x", "s", NULL }, (const char *[]){ "y", NULL });
	mb_output(b, "y");
	CHECK_EQ(read_status(b), VNPU_PARSE_ERROR);
}

static void test_unknown_op(void)
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
	CHECK(m != NULL);
	if (!m)
		return;
	/* Read fine; the output's shape is unknown; compile says why. */
	CHECK_EQ(vnpu_model_output_shape(m, 0, &s), VNPU_UNSUPPORTED);
	CHECK_EQ(vnpu_compile(m, NULL, &p), VNPU_UNSUPPORTED);
	CHECK(strstr(vnpu_last_error(), "FancyNewOp") != NULL);
	CHECK(strstr(vnpu_last_error(), "unknown op") != NULL);
	CHECK(p == NULL);
	CHECK_EQ(vnpu_query_model(m, NULL, &q), VNPU_OK);
	if (q) {
		CHECK_EQ(q->num_nodes, 2);
		CHECK_EQ(q->nodes[0].place, VNPU_QUERY_PRIMARY);
		CHECK_EQ(q->nodes[1].place, VNPU_QUERY_NONE);
		CHECK(strstr(q->nodes[1].reason, "unknown op") != NULL);
	}
	vnpu_query_result_free(q);
	vnpu_model_free(m);
}

/* A model whose input has ONNX element type @type: reading it fails saying @want. */
static void check_read_refused(int type, const char *want)
{
	struct mb *b = mb_new(13);

	mb_input(b, "in", type, 1, (const int64_t[]){ 2 });
	mb_node(b, "Identity", (const char *[]){ "in", NULL }, (const char *[]){ "y", NULL });
	mb_output(b, "y");
	CHECK(mb_read(b) == NULL);
	CHECK(!strcmp(vnpu_last_error(), want));
}

/* x -> @op (Cast: to @to; named or not) -> y: compiling fails saying @want. */
static void check_compile_refused(const char *op, int to, bool named, const char *want)
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
	CHECK(m != NULL);
	if (m)
		CHECK_EQ(vnpu_compile(m, NULL, &p), VNPU_UNSUPPORTED);
	CHECK(!strcmp(vnpu_last_error(), want));
	CHECK(p == NULL);
	vnpu_model_free(m);
}

/*
 * What is not supported says so in one line naming it: element types by
 * name (complex64), a node by its name or, unnamed, its op. The device
 * takes no string (the core runs models of strings on the host).
 */
static void test_unsupported_messages(void)
{
	check_read_refused(ONNX__TENSOR_PROTO__DATA_TYPE__COMPLEX64,
			   "input: 'in': complex64 tensors are not supported");
	check_read_refused(99, "input: 'in': element type 99 is not supported");
	check_compile_refused("Cast", ONNX__TENSOR_PROTO__DATA_TYPE__STRING, false,
			      "Cast node: a cast to or from string runs on the host, in a model "
			      "of strings only");
	check_compile_refused("Bernoulli", 0, true, "node 'Bernoulli_0' (Bernoulli): unknown op");
	check_compile_refused("Bernoulli", 0, false, "Bernoulli node: unknown op");
}

static void test_api_errors(void)
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
	CHECK(m != NULL);
	if (!m)
		return;
	CHECK_EQ(vnpu_model_input_index(m, "x", &idx), VNPU_OK);
	CHECK_EQ(idx, 0);
	CHECK_EQ(vnpu_model_output_index(m, "y", &idx), VNPU_OK);
	CHECK_EQ(vnpu_model_input_index(m, "nope", &idx), VNPU_NOT_FOUND);
	CHECK(strstr(vnpu_last_error(), "nope") != NULL);
	CHECK_EQ(vnpu_model_input_name(m, 1, &name), VNPU_NOT_FOUND);
	CHECK_EQ(vnpu_model_output_name(NULL, 0, &name), VNPU_INVALID_ARGUMENT);
	CHECK_EQ(vnpu_model_input_shape(m, 0, NULL), VNPU_INVALID_ARGUMENT);
	/* Reshape: a rank above the maximum, a bad dim; then right. */
	s = (vnpu_shape){ .rank = VNPU_MAX_RANK + 1 };
	CHECK_EQ(vnpu_model_reshape(m, "x", &s), VNPU_INVALID_ARGUMENT);
	CHECK_EQ(vnpu_model_reshape(m, "x", NULL), VNPU_INVALID_ARGUMENT);
	s = (vnpu_shape){ .rank = 2, .dims = { -7, 4 } };
	CHECK_EQ(vnpu_model_reshape(m, "x", &s), VNPU_INVALID_ARGUMENT);
	s = (vnpu_shape){ .rank = 2, .dims = { 2, 4 } };
	CHECK_EQ(vnpu_model_reshape(m, "y", &s), VNPU_NOT_FOUND);
	CHECK_EQ(vnpu_model_output_shape(m, 0, &s), VNPU_OK);
	check_shape(&s, 2, (const int64_t[]){ -1, 4 });
	s = (vnpu_shape){ .rank = 2, .dims = { 2, 4 } };
	CHECK_EQ(vnpu_model_reshape(m, "x", &s), VNPU_OK);
	CHECK_EQ(vnpu_model_output_shape(m, 0, &s), VNPU_OK);
	check_shape(&s, 2, (const int64_t[]){ 2, 4 });
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
static void check_reshaped(vnpu_model *m, const char *name, vnpu_shape s, uint32_t rank,
			   const int64_t *dims)
{
	CHECK_EQ(vnpu_model_reshape(m, name, &s), VNPU_OK);
	CHECK_EQ(vnpu_model_output_shape(m, 0, &s), VNPU_OK);
	check_shape(&s, rank, dims);
}

static void test_reshape_static(void)
{
	struct mb *b = mb_new(13);
	vnpu_model *m;
	vnpu_shape s;

	mb_input(b, "x", F32, 2, (const int64_t[]){ 3, 4 });
	mb_init_f32(b, "w", 2, (const int64_t[]){ 4, 2 }, NULL);
	mb_node(b, "MatMul", (const char *[]){ "x", "w", NULL }, (const char *[]){ "y", NULL });
	mb_output(b, "y");
	m = mb_read(b);
	CHECK(m != NULL);
	if (!m)
		return;
	check_reshaped(m, "x", (vnpu_shape){ 2, { 5, 4 } }, 2, (const int64_t[]){ 5, 2 });
	check_reshaped(m, "x", (vnpu_shape){ 3, { 2, 3, 4 } }, 3, (const int64_t[]){ 2, 3, 2 });
	/* K = 5 against w's 4, and a scalar: MatMul refuses both. */
	s = (vnpu_shape){ .rank = 2, .dims = { 3, 5 } };
	CHECK_EQ(vnpu_model_reshape(m, "x", &s), VNPU_INVALID_ARGUMENT);
	CHECK(strstr(vnpu_last_error(), "reshape 'x'") != NULL);
	CHECK(strstr(vnpu_last_error(), "MatMul") != NULL);
	s = (vnpu_shape){ .rank = 0 };
	CHECK(vnpu_model_reshape(m, "x", &s) != VNPU_OK);
	CHECK_EQ(vnpu_model_input_shape(m, 0, &s), VNPU_OK);
	check_shape(&s, 3, (const int64_t[]){ 2, 3, 4 });
	CHECK_EQ(vnpu_model_output_shape(m, 0, &s), VNPU_OK);
	check_shape(&s, 3, (const int64_t[]){ 2, 3, 2 });
	vnpu_model_free(m);
}

/* @m's input @name is [@rank: @dims] and its output 0 [@orank: @odims]. */
static void check_io(vnpu_model *m, uint32_t rank, const int64_t *dims, uint32_t orank,
		     const int64_t *odims)
{
	vnpu_shape s;

	CHECK_EQ(vnpu_model_input_shape(m, 0, &s), VNPU_OK);
	check_shape(&s, rank, dims);
	CHECK_EQ(vnpu_model_output_shape(m, 0, &s), VNPU_OK);
	check_shape(&s, orank, odims);
}

/* vnpu_model_reshape(@m, @name, @s) fails with @want, a message holding @text. */
static void check_reshape_refused(vnpu_model *m, const char *name, const vnpu_shape *s,
				  vnpu_status want, const char *text)
{
	CHECK_EQ(vnpu_model_reshape(m, name, s), want);
	CHECK(strstr(vnpu_last_error(), text) != NULL);
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
static void check_relu_matmul_run(const struct vnpu_program *p, int rows)
{
	float x[40], y[20];
	void *in[1] = { x }, *out[1] = { y };

	CHECK(rows <= 10);
	CHECK_EQ(p->num_inputs, 1);
	CHECK_EQ(p->inputs[0].shape.rank, 2);
	CHECK_EQ(p->inputs[0].shape.dims[0], rows);
	for (int i = 0; i < rows * 4; i++)
		x[i] = (float)(i - 5);
	CHECK_EQ(fe_run_program(p, in, out), 0);
	for (int i = 0; i < rows; i++)
		for (int j = 0; j < 2; j++) {
			float want = 0;

			for (int k = 0; k < 4; k++)
				want += (x[i * 4 + k] > 0 ? x[i * 4 + k] : 0) *
					(float)(k * 2 + j + 1);
			CHECK_EQ(y[i * 2 + j], want);
		}
}

/*
 * Hostile arguments to vnpu_model_reshape(): each refused with a status
 * and a message naming what is wrong, the model as it was and fully usable
 * afterwards (compiles and runs right); dimensions whose element count
 * overflows are refused even when no node multiplies them out.
 */
static void test_reshape_hostile(void)
{
	static const int64_t dyn4[] = { VNPU_DIM_DYNAMIC, 4 }, dyn2[] = { VNPU_DIM_DYNAMIC, 2 };
	const vnpu_shape ok = { 2, { 3, 4 } };
	struct vnpu_program *p1 = NULL, *p2 = NULL;
	vnpu_model *m = relu_matmul_model();
	vnpu_shape s;

	CHECK(m != NULL);
	if (!m)
		return;
	check_reshape_refused(NULL, "x", &ok, VNPU_INVALID_ARGUMENT, "NULL");
	check_reshape_refused(m, NULL, &ok, VNPU_INVALID_ARGUMENT, "NULL");
	check_reshape_refused(m, "x", NULL, VNPU_INVALID_ARGUMENT, "NULL");
	check_reshape_refused(m, "nope", &ok, VNPU_NOT_FOUND, "'nope'");
	check_reshape_refused(m, "y", &ok, VNPU_NOT_FOUND, "'y'");	/* an output */
	check_reshape_refused(m, "w", &ok, VNPU_NOT_FOUND, "'w'");	/* an initializer */
	s = (vnpu_shape){ .rank = VNPU_MAX_RANK + 1 };
	check_reshape_refused(m, "x", &s, VNPU_INVALID_ARGUMENT, "rank");
	s.rank = UINT32_MAX;
	check_reshape_refused(m, "x", &s, VNPU_INVALID_ARGUMENT, "rank");
	/* A scalar: MatMul refuses it, naming itself. */
	s = (vnpu_shape){ .rank = 0 };
	check_reshape_refused(m, "x", &s, VNPU_INVALID_ARGUMENT, "MatMul");
	/* K = 5 against w's 4: the later node refuses, not Relu. */
	s = (vnpu_shape){ 2, { 3, 5 } };
	check_reshape_refused(m, "x", &s, VNPU_INVALID_ARGUMENT, "MatMul");
	check_io(m, 2, dyn4, 2, dyn2);
	/* Negative, huge, and an element count past 64 bits. */
	s = (vnpu_shape){ 2, { INT64_MIN, 4 } };
	check_reshape_refused(m, "x", &s, VNPU_INVALID_ARGUMENT, "dimension 0");
	s = (vnpu_shape){ 2, { 1ll << 62, 4 } };
	check_reshape_refused(m, "x", &s, VNPU_INVALID_ARGUMENT, "reshape 'x'");
	s = (vnpu_shape){ 2, { INT64_MAX, 4 } };
	check_reshape_refused(m, "x", &s, VNPU_INVALID_ARGUMENT, "reshape 'x'");
	s = (vnpu_shape){ 2, { 1ll << 40, 4 } };
	check_reshape_refused(m, "x", &s, VNPU_INVALID_ARGUMENT, "reshape 'x'");
	s = (vnpu_shape){ 3, { 1ll << 32, 1ll << 32, 4 } };
	check_reshape_refused(m, "x", &s, VNPU_INVALID_ARGUMENT, "reshape 'x'");
	/*
	 * No elements, but dimensions whose strides pass 64 bits (the
	 * compiler multiplied them out, signed overflow).
	 */
	s = (vnpu_shape){ 4, { 0, 1ll << 40, 1ll << 40, 4 } };
	check_reshape_refused(m, "x", &s, VNPU_INVALID_ARGUMENT, "reshape 'x'");
	check_io(m, 2, dyn4, 2, dyn2);
	/* Zero rows are a shape like any other. */
	check_reshaped(m, "x", (vnpu_shape){ 2, { 0, 4 } }, 2, (const int64_t[]){ 0, 2 });
	/* Then right: it compiles and runs. */
	check_reshaped(m, "x", (vnpu_shape){ 2, { 3, 4 } }, 2, (const int64_t[]){ 3, 2 });
	CHECK_EQ(vnpu_compile(m, NULL, &p1), VNPU_OK);
	/* Reshaped after a compile: the program keeps its shape. */
	check_reshaped(m, "x", (vnpu_shape){ 2, { 5, 4 } }, 2, (const int64_t[]){ 5, 2 });
	s = (vnpu_shape){ 2, { 1ll << 62, 4 } };
	check_reshape_refused(m, "x", &s, VNPU_INVALID_ARGUMENT, "reshape 'x'");
	CHECK_EQ(vnpu_compile(m, NULL, &p2), VNPU_OK);
	if (p1)
		check_relu_matmul_run(p1, 3);
	if (p2)
		check_relu_matmul_run(p2, 5);
	vnpu_program_free(p1);
	vnpu_program_free(p2);
	vnpu_model_free(m);
}

/*
 * Sequence input @name: fixed at two elements, a refused reshape of them
 * (the first refused: the second is never looked at) leaves both as they
 * were; vnpu_model_reshape() refuses the sequence itself.
 */
static void check_seq_reshape_refused(vnpu_model *m, const char *name)
{
	vnpu_shape two[2] = { { 2, { 1, 2 } }, { 1, { 3 } } };
	struct vnpu_program *p = NULL;

	check_reshape_refused(m, name, &two[0], VNPU_INVALID_ARGUMENT, "sequence");
	CHECK_EQ(vnpu_model_reshape_sequence(m, name, 2, two), VNPU_OK);
	check_reshape_refused(m, name, &two[0], VNPU_INVALID_ARGUMENT, "sequence");
	two[0].rank = VNPU_MAX_RANK + 1;
	two[1].dims[0] = 9;
	CHECK_EQ(vnpu_model_reshape_sequence(m, name, 2, two), VNPU_INVALID_ARGUMENT);
	two[0] = (vnpu_shape){ 2, { 1ll << 40, 1ll << 40 } };
	CHECK_EQ(vnpu_model_reshape_sequence(m, name, 2, two), VNPU_INVALID_ARGUMENT);
	CHECK(strstr(vnpu_last_error(), "element 0") != NULL);
	CHECK_EQ(vnpu_compile(m, NULL, &p), VNPU_OK);
	if (p) {
		CHECK_EQ(p->num_inputs, 2);
		check_shape(&p->inputs[0].shape, 2, (const int64_t[]){ 1, 2 });
		check_shape(&p->inputs[1].shape, 1, (const int64_t[]){ 3 });
	}
	vnpu_program_free(p);
}

/*
 * An input that no node multiplies out (it feeds only Shape) still may not
 * take a shape of more elements than a tensor can hold; a frozen input is
 * no input any more; a sequence input is reshaped element by element, with
 * vnpu_model_reshape_sequence().
 */
static void test_reshape_hostile_inputs(void)
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
	CHECK(m != NULL);
	if (!m)
		return;
	s = (vnpu_shape){ 2, { 1ll << 62, 4 } };
	check_reshape_refused(m, "x", &s, VNPU_INVALID_ARGUMENT, "reshape 'x'");
	s = (vnpu_shape){ 2, { 1ll << 40, 1ll << 40 } };
	check_reshape_refused(m, "x", &s, VNPU_INVALID_ARGUMENT, "reshape 'x'");
	CHECK_EQ(vnpu_model_freeze_input(m, "axes", VNPU_TYPE_I64, &one, axes, 8), VNPU_OK);
	check_reshape_refused(m, "axes", &one, VNPU_NOT_FOUND, "'axes'");
	check_reshaped(m, "x", (vnpu_shape){ 2, { 6, 4 } }, 2, (const int64_t[]){ 1, 2 });
	CHECK_EQ(vnpu_compile(m, NULL, &p), VNPU_OK);
	vnpu_program_free(p);
	p = NULL;
	vnpu_model_free(m);

	/* Frozen so: 2^32 x 2^32 x 1 elements are not the 0 of 64-bit arithmetic. */
	b = mb_new(13);
	mb_input(b, "f", F32, 3, (const int64_t[]){ -1, -1, -1 });
	mb_node(b, "Shape", (const char *[]){ "f", NULL }, (const char *[]){ "y", NULL });
	mb_output(b, "y");
	m = mb_read(b);
	CHECK(m != NULL);
	if (m) {
		s = (vnpu_shape){ 3, { 1ll << 32, 1ll << 32, 1 } };
		CHECK_EQ(vnpu_model_freeze_input(m, "f", VNPU_TYPE_F32, &s, NULL, 0),
			 VNPU_INVALID_ARGUMENT);
		s = (vnpu_shape){ 3, { 0, 1ll << 32, 1ll << 32 } };
		CHECK_EQ(vnpu_model_freeze_input(m, "f", VNPU_TYPE_F32, &s, NULL, 0),
			 VNPU_INVALID_ARGUMENT);
		CHECK(strstr(vnpu_last_error(), "freeze 'f'") != NULL);
		s = (vnpu_shape){ 3, { 0, 3, 2 } };
		CHECK_EQ(vnpu_model_freeze_input(m, "f", VNPU_TYPE_F32, &s, NULL, 0), VNPU_OK);
		CHECK_EQ(vnpu_model_output_shape(m, 0, &s), VNPU_OK);
		check_shape(&s, 1, (const int64_t[]){ 3 });
		vnpu_model_free(m);
	}

	/* A constant of no elements and huge dimensions: never read. */
	b = mb_new(13);
	mb_input(b, "x", F32, 1, (const int64_t[]){ 1 });
	mb_init_f32(b, "e", 3, (const int64_t[]){ 0, 1ll << 40, 1ll << 40 }, NULL);
	mb_node(b, "Add", (const char *[]){ "x", "e", NULL }, (const char *[]){ "y", NULL });
	mb_output(b, "y");
	CHECK(mb_read(b) == NULL);
	CHECK(strstr(vnpu_last_error(), "'e'") != NULL);

	/* Declared so in the file: read (each dimension is in range), never compiled. */
	b = mb_new(13);
	mb_input(b, "x", F32, 2, (const int64_t[]){ 1ll << 40, 1ll << 40 });
	mb_input(b, "z", F32, 3, (const int64_t[]){ 1ll << 40, 0, 1ll << 40 });
	mb_node(b, "Shape", (const char *[]){ "x", NULL }, (const char *[]){ "y", NULL });
	mb_node(b, "Shape", (const char *[]){ "z", NULL }, (const char *[]){ "w", NULL });
	mb_output(b, "y");
	mb_output(b, "w");
	m = mb_read(b);
	CHECK(m != NULL);
	if (m) {
		CHECK_EQ(vnpu_compile(m, NULL, &p), VNPU_INVALID_ARGUMENT);
		CHECK(strstr(vnpu_last_error(), "input 'x': more than 2^40 elements") != NULL);
		CHECK(p == NULL);
		s = (vnpu_shape){ 1, { 1 } };
		CHECK_EQ(vnpu_model_reshape(m, "x", &s), VNPU_OK);
		CHECK_EQ(vnpu_compile(m, NULL, &p), VNPU_INVALID_ARGUMENT);
		CHECK(strstr(vnpu_last_error(), "input 'z': more than 2^40 elements") != NULL);
		CHECK(p == NULL);
		vnpu_program_free(p);
		vnpu_model_free(m);
	}

	snprintf(path, sizeof(path), "%s/test_identity_sequence/model.onnx", TESTDATA);
	if (!vnpu_model_read_file(path, &m)) {
		const char *name;

		CHECK_EQ(vnpu_model_input_name(m, 0, &name), VNPU_OK);
		s = (vnpu_shape){ 2, { 1, 2 } };
		check_reshape_refused(m, name, &s, VNPU_INVALID_ARGUMENT, "sequence");
		check_seq_reshape_refused(m, name);
		vnpu_model_free(m);
	}
}

/*
 * A refused reshape's message is the node that refused it, even when a
 * later node of another branch is one inference does not know (and leaves
 * unknown): putting the old shape back must not speak over it.
 */
static void test_reshape_refused_message(void)
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
	CHECK(m != NULL);
	if (!m)
		return;
	check_reshape_refused(m, "x", &bad, VNPU_INVALID_ARGUMENT, "MatMul");
	CHECK(strstr(vnpu_last_error(), "NoSuchOp") == NULL);
	CHECK_EQ(vnpu_model_freeze_input(m, "x", VNPU_TYPE_F32, &bad,
					 (const float[15]){ 0 }, 60), VNPU_INVALID_ARGUMENT);
	CHECK(strstr(vnpu_last_error(), "NoSuchOp") == NULL);
	check_reshaped(m, "x", (vnpu_shape){ 2, { 3, 4 } }, 2, (const int64_t[]){ 3, 2 });
	vnpu_model_free(m);
}

/* Reads node test @name, reshapes input @input to @s: @want, a message. */
static vnpu_model *read_reshaped(const char *name, const char *input, vnpu_shape s,
				 vnpu_status want)
{
	char path[512];
	vnpu_model *m;

	snprintf(path, sizeof(path), "%s/%s/model.onnx", TESTDATA, name);
	if (vnpu_model_read_file(path, &m))
		return NULL;
	CHECK_EQ(vnpu_model_reshape(m, input, &s), want);
	CHECK(want == VNPU_OK || vnpu_last_error()[0]);
	return m;
}

/* Compiling @m fails with @want and a message holding @text; frees @m. */
static void check_compile_fails(vnpu_model *m, vnpu_status want, const char *text)
{
	struct vnpu_program *p = NULL;

	if (!m)
		return;
	CHECK_EQ(vnpu_compile(m, NULL, &p), want);
	CHECK(strstr(vnpu_last_error(), text) != NULL);
	vnpu_program_free(p);
	vnpu_model_free(m);
}

/*
 * MatMul of two vectors reshaped from matrices: a scalar dot product (its
 * lowering wrote index -1 of Y's dimensions, giving Y no room for M).
 */
static void check_dot_product(void)
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
	CHECK(m != NULL);
	if (!m)
		return;
	s = (vnpu_shape){ 1, { 3 } };
	CHECK_EQ(vnpu_model_reshape(m, "w", &s), VNPU_OK);
	CHECK_EQ(vnpu_model_reshape(m, "x", &s), VNPU_OK);
	CHECK_EQ(vnpu_model_output_shape(m, 0, &s), VNPU_OK);
	CHECK_EQ(s.rank, 0);
	CHECK_EQ(vnpu_compile(m, NULL, &p), VNPU_OK);
	if (p) {
		CHECK_EQ(fe_run_program(p, in, out), 0);
		CHECK_EQ(y, 12.0f);
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
static void test_reshape_any_rank_nodes(void)
{
	vnpu_model *m;

	m = read_reshaped("test_gathernd_example_int32", "indices", (vnpu_shape){ .rank = 0 },
			  VNPU_INVALID_ARGUMENT);
	CHECK(strstr(vnpu_last_error(), "GatherND") != NULL);
	vnpu_model_free(m);

	/* A per-axis zero point needs its axis: refused by the reshape. */
	m = read_reshaped("test_quantizelinear", "x", (vnpu_shape){ .rank = 0 }, VNPU_OK);
	if (m) {
		const vnpu_shape empty = { 1, { 0 } };

		CHECK_EQ(vnpu_model_reshape(m, "y_zero_point", &empty), VNPU_INVALID_ARGUMENT);
		CHECK(strstr(vnpu_last_error(), "QuantizeLinear node: axis 1 out of range") != NULL);
		vnpu_model_free(m);
	}

	/* Past the device's 65536 unrolled steps: the reshape refuses it. */
	m = read_reshaped("test_scan9_sum", "x", (vnpu_shape){ 2, { 1 << 20, 2 } },
			  VNPU_UNSUPPORTED);
	CHECK(strstr(vnpu_last_error(), "Scan node: more than 65536 scan steps") != NULL);
	vnpu_model_free(m);

	/* Opset 8's batches, all dynamic: counted as (size_t)-1 (out of memory). */
	m = read_reshaped("test_scan_sum", "initial", (vnpu_shape){ 2, { VNPU_DIM_DYNAMIC, 2 } },
			  VNPU_OK);
	if (m) {
		const vnpu_shape x = { 3, { VNPU_DIM_DYNAMIC, 3, 2 } };

		CHECK_EQ(vnpu_model_reshape(m, "x", &x), VNPU_OK);
		check_compile_fails(m, VNPU_INVALID_ARGUMENT, "dynamic dimensions");
	}

	check_dot_product();

	m = read_reshaped("test_dft", "x", (vnpu_shape){ 4, { 1, 1 << 20, 1, 1 } }, VNPU_OK);
	check_compile_fails(m, VNPU_UNSUPPORTED, "matrix would hold more than 2^28 floats");

	/* Trilu's constant band mask: 1 TB asked. */
	m = read_reshaped("test_triu", "x", (vnpu_shape){ 2, { 1, 1ll << 40 } }, VNPU_OK);
	check_compile_fails(m, VNPU_UNSUPPORTED, "more than 2^28 bytes");
}

/*
 * CastLike reads only the element type of its second input: a 'like' of
 * any shape fits (ONNX's own castlike bf16 tests feed a [1] to an input
 * declared [3, 4]), the output keeps the first input's shape.
 */
static void test_castlike_any_like_shape(void)
{
	struct mb *b = mb_new(15);
	vnpu_element_type t;
	vnpu_model *m;

	mb_input(b, "x", F32, 2, (const int64_t[]){ 3, 4 });
	mb_input(b, "like", ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16, 2, (const int64_t[]){ 3, 4 });
	mb_node(b, "CastLike", (const char *[]){ "x", "like", NULL }, (const char *[]){ "y", NULL });
	mb_output(b, "y");
	m = mb_read(b);
	CHECK(m != NULL);
	if (!m)
		return;
	check_reshaped(m, "like", (vnpu_shape){ 1, { 1 } }, 2, (const int64_t[]){ 3, 4 });
	CHECK_EQ(vnpu_model_output_type(m, 0, &t), VNPU_OK);
	CHECK_EQ(t, VNPU_TYPE_BF16);
	check_reshaped(m, "like", (vnpu_shape){ 1, { 0 } }, 2, (const int64_t[]){ 3, 4 });
	vnpu_model_free(m);
}

/* Shape inference through a folded Shape -> Gather -> Concat -> Reshape
 * chain, opset 13 Unsqueeze with constant axes, Conv geometry. */
static void test_shape_inference(void)
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
	CHECK(m != NULL);
	if (!m)
		return;
	/* OH = (17 + 2 - 3) / 2 + 1 = 9, OW = 10 - 3 + 1 = 8. */
	CHECK_EQ(vnpu_model_output_shape(m, 0, &s), VNPU_OK);
	check_shape(&s, 4, (const int64_t[]){ 2, 8, 9, 8 });
	CHECK_EQ(vnpu_model_output_shape(m, 1, &s), VNPU_OK);
	check_shape(&s, 3, (const int64_t[]){ 2, 1, 8 * 9 * 8 });
	vnpu_model_free(m);
}

/* A shape-deciding input frozen to a constant: shapes fold. */
static void test_freeze_input(void)
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
	CHECK(m != NULL);
	if (!m)
		return;
	CHECK_EQ(vnpu_model_output_shape(m, 0, &s), VNPU_OK);
	CHECK_EQ(s.rank, 4);
	CHECK_EQ(s.dims[0], VNPU_DIM_DYNAMIC);
	CHECK_EQ(vnpu_compile(m, NULL, &p), VNPU_UNSUPPORTED);
	CHECK_EQ(vnpu_model_freeze_input(m, "axes", VNPU_TYPE_I32, &as, axes, 8), VNPU_INVALID_ARGUMENT);
	CHECK_EQ(vnpu_model_freeze_input(m, "axes", VNPU_TYPE_I64, &as, axes, 12), VNPU_INVALID_ARGUMENT);
	CHECK_EQ(vnpu_model_freeze_input(m, "nope", VNPU_TYPE_I64, &as, axes, 16), VNPU_NOT_FOUND);
	CHECK_EQ(vnpu_model_get_inputs_size(m, &n), VNPU_OK);
	CHECK_EQ(n, 2);
	CHECK_EQ(vnpu_model_freeze_input(m, "axes", VNPU_TYPE_I64, &as, axes, 16), VNPU_OK);
	CHECK_EQ(vnpu_model_get_inputs_size(m, &n), VNPU_OK);
	CHECK_EQ(n, 1);
	CHECK_EQ(vnpu_model_output_shape(m, 0, &s), VNPU_OK);
	check_shape(&s, 4, (const int64_t[]){ 1, 3, 4, 1 });
	CHECK_EQ(vnpu_compile(m, NULL, &p), VNPU_OK);
	vnpu_program_free(p);
	vnpu_model_free(m);
}

/*
 * Ops whose output extents depend on values (NonZero, Unique, Compress)
 * fold once their inputs are known; before that the extent is unknown and
 * a static compile refuses. Bad inputs are errors.
 */
static void test_data_dependent_folds(void)
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
	CHECK(m != NULL);
	if (!m)
		return;
	CHECK_EQ(vnpu_model_output_shape(m, 0, &s), VNPU_OK);
	CHECK_EQ(s.rank, 2);
	CHECK_EQ(s.dims[0], 2);
	CHECK_EQ(s.dims[1], VNPU_DIM_DYNAMIC);
	CHECK_EQ(vnpu_compile(m, NULL, &p), VNPU_UNSUPPORTED);
	CHECK(strstr(vnpu_last_error(), "not known at compile time") != NULL);
	CHECK_EQ(vnpu_model_freeze_input(m, "x", VNPU_TYPE_F32, &xs, xv, sizeof(xv)), VNPU_OK);
	CHECK_EQ(vnpu_model_output_shape(m, 0, &s), VNPU_OK);
	check_shape(&s, 2, (const int64_t[]){ 2, 4 });
	CHECK_EQ(vnpu_model_output_shape(m, 1, &s), VNPU_OK);
	check_shape(&s, 1, (const int64_t[]){ 4 });
	CHECK_EQ(vnpu_model_output_shape(m, 2, &s), VNPU_OK);
	check_shape(&s, 1, (const int64_t[]){ 6 });
	CHECK_EQ(vnpu_model_output_shape(m, 3, &s), VNPU_OK);
	check_shape(&s, 1, (const int64_t[]){ 4 });
	CHECK_EQ(vnpu_compile(m, NULL, &p), VNPU_OK);
	vnpu_program_free(p);
	vnpu_model_free(m);

	/* Compress wants a 1-D bool condition; Unique's axis must exist. */
	b = mb_new(13);
	mb_input(b, "x", F32, 2, (const int64_t[]){ 3, 2 });
	mb_input(b, "c", F32, 1, (const int64_t[]){ 3 });
	mb_node(b, "Compress", (const char *[]){ "x", "c", NULL }, (const char *[]){ "y", NULL });
	mb_output(b, "y");
	m = mb_read(b);
	CHECK(m == NULL);
	CHECK(strstr(vnpu_last_error(), "condition") != NULL);
	vnpu_model_free(m);
	b = mb_new(13);
	mb_input(b, "x", F32, 2, (const int64_t[]){ 3, 2 });
	n = mb_node(b, "Unique", (const char *[]){ "x", NULL }, (const char *[]){ "y", NULL });
	mb_attr_int(n, "axis", 2);
	mb_output(b, "y");
	m = mb_read(b);
	CHECK(m == NULL);
	CHECK(strstr(vnpu_last_error(), "axis") != NULL);
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
static void external_is(const char *dir, const char *location, long offset, vnpu_status want,
			const char *says)
{
	static const float w[4] = { 1.5f, -2, 3.25f, 8 };
	struct vnpu_program *p = NULL;
	char path[512];
	vnpu_model *m = NULL;

	CHECK_EQ(write_external_model(dir, location, offset), VNPU_OK);
	snprintf(path, sizeof(path), "%s/model.onnx", dir);
	CHECK_EQ(vnpu_model_read_file(path, &m), want);
	if (want != VNPU_OK) {
		CHECK(!m);
		if (!strstr(vnpu_last_error(), says))
			fprintf(stderr, "  %s: '%s' does not say '%s'\n", location,
				vnpu_last_error(), says);
		CHECK(strstr(vnpu_last_error(), says) != NULL);
		return;
	}
	if (m) {
		float x[4] = { 0 }, y[4];
		void *in[1] = { x }, *out[1] = { y };

		CHECK_EQ(vnpu_compile(m, NULL, &p), VNPU_OK);
		if (p) {
			CHECK_EQ(fe_run_program(p, in, out), 0);
			CHECK(!memcmp(y, w, sizeof(y)));
		}
		vnpu_program_free(p);
		vnpu_model_free(m);
	}
}

/* Write @path: 99, then the four weights, then 99. */
static void write_weights(const char *path)
{
	static const float w[6] = { 99, 1.5f, -2, 3.25f, 8, 99 };
	FILE *f = fopen(path, "wb");

	CHECK(f && fwrite(w, 4, 6, f) == 6);
	if (f)
		fclose(f);
}

/* Weights in an external data file next to the model. */
static void test_external_data(void)
{
	char dir[] = "/tmp/vnpu-fe-XXXXXX", path[512];
	vnpu_model *m = NULL;
	size_t size;
	void *buf;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/weights.bin", dir);
	write_weights(path);
	snprintf(path, sizeof(path), "%s/model.onnx", dir);
	/* Offset 4: the four floats after the first. */
	external_is(dir, "weights.bin", 4, VNPU_OK, NULL);
	/* From memory there is no folder to read it from. */
	buf = NULL;
	{
		FILE *mf = fopen(path, "rb");

		if (mf) {
			buf = malloc(4096);
			size = fread(buf, 1, 4096, mf);
			fclose(mf);
			CHECK_EQ(vnpu_model_read_memory(buf, size, &m), VNPU_NOT_FOUND);
		}
		free(buf);
	}
	/* Past the end of the file, a missing file, a path leaving the folder. */
	external_is(dir, "weights.bin", 12, VNPU_PARSE_ERROR, "has no 16 at offset 12");
	external_is(dir, "nothere.bin", 0, VNPU_NOT_FOUND, "nothere.bin");
	external_is(dir, "../weights.bin", 0, VNPU_PARSE_ERROR, "leaves the model's folder");
	external_is(dir, "/etc/passwd", 0, VNPU_PARSE_ERROR, "leaves the model's folder");
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
static void test_external_escapes(void)
{
	char dir[] = "/tmp/vnpu-fe-XXXXXX", out[] = "/tmp/vnpu-fe-out-XXXXXX", path[1024];
	static const char *const made[] = {
		"model.onnx", "link", "sublink", "fifo", "real/w.bin", "a..b.bin",
	};

	CHECK(mkdtemp(dir) && mkdtemp(out));
	snprintf(path, sizeof(path), "%s/secret.bin", out);
	write_weights(path);
	snprintf(path, sizeof(path), "%s/real", dir);
	CHECK(!mkdir(path, 0700));
	snprintf(path, sizeof(path), "%s/real/w.bin", dir);
	write_weights(path);
	snprintf(path, sizeof(path), "%s/a..b.bin", dir);
	write_weights(path);
	snprintf(path, sizeof(path), "%s/link", dir);
	{
		char target[1024];

		snprintf(target, sizeof(target), "%s/secret.bin", out);
		CHECK(!symlink(target, path));
		snprintf(path, sizeof(path), "%s/sublink", dir);
		CHECK(!symlink(out, path));
	}
	snprintf(path, sizeof(path), "%s/fifo", dir);
	CHECK(!mkfifo(path, 0600));
	/* A read that blocks fails the test instead of hanging it. */
	alarm(60);
	for (int pass = 0; pass < 2; pass++) {
		if (pass)
			setenv("VNPU_DEBUG_NO_OPENAT2", "1", 1);
		external_is(dir, "real/w.bin", 4, VNPU_OK, NULL);
		external_is(dir, "./real//w.bin", 4, VNPU_OK, NULL);
		external_is(dir, "a..b.bin", 4, VNPU_OK, NULL);
		external_is(dir, "link", 4, VNPU_PARSE_ERROR, "symbolic link");
		external_is(dir, "sublink/secret.bin", 4, VNPU_PARSE_ERROR, "symbolic link");
		external_is(dir, "real/../real/w.bin", 4, VNPU_PARSE_ERROR, "leaves the model's folder");
		external_is(dir, "fifo", 0, VNPU_PARSE_ERROR, "not a regular file");
		external_is(dir, "real", 0, VNPU_PARSE_ERROR, "not a regular file");
		external_is(dir, "real/w.bin/x", 0, VNPU_NOT_FOUND, "real/w.bin/x");
		external_is(dir, "real/w.bin", -4, VNPU_PARSE_ERROR, "is not a number");
		external_is(dir, "real/w.bin", 12, VNPU_PARSE_ERROR, "has no 16 at offset 12");
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
static void test_attr_schema_sorted(void)
{
	CHECK(vnpu_attr_schema_sorted());
}

int main(int argc, char **argv)
{
	static const struct fe_test tests[] = {
		{ "wakeword_models", test_wakeword_models },
		{ "node_test_shapes", test_node_test_shapes },
		{ "malformed_protobuf", test_malformed_protobuf },
		{ "mutations", test_mutations },
		{ "malformed_graphs", test_malformed_graphs },
		{ "unknown_op", test_unknown_op },
		{ "unsupported_messages", test_unsupported_messages },
		{ "api_errors", test_api_errors },
		{ "reshape_static", test_reshape_static },
		{ "reshape_hostile", test_reshape_hostile },
		{ "reshape_hostile_inputs", test_reshape_hostile_inputs },
		{ "reshape_refused_message", test_reshape_refused_message },
		{ "reshape_any_rank_nodes", test_reshape_any_rank_nodes },
		{ "castlike_any_like_shape", test_castlike_any_like_shape },
		{ "shape_inference", test_shape_inference },
		{ "freeze_input", test_freeze_input },
		{ "data_dependent_folds", test_data_dependent_folds },
		{ "external_data", test_external_data },
		{ "external_escapes", test_external_escapes },
		{ "attr_schema_sorted", test_attr_schema_sorted },
	};

	return fe_run(tests, sizeof(tests) / sizeof(tests[0]), argc, argv);
}

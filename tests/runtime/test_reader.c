// SPDX-License-Identifier: MIT
/*
 * The ONNX reader against crafted models: each attack gets a status and a
 * message (or the right result), never a crash, a hang or a leak. The
 * models are written here, byte by byte where the attack is in the wire
 * format itself. Documentation/vnpu/runtime.rst lists the limits tested.
 *
 *   test-runtime-reader [NAME...]
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime_test.h"
#include "onnx_writer.h"

/* onnx.proto field numbers the writer's enum does not name. */
enum {
	TYPE_SEQUENCE = 4, TYPE_MAP = 5, TYPE_OPTIONAL = 9,
	SEQUENCE_ELEM = 1, MAP_VALUE = 2, OPTIONAL_ELEM = 1,
	ATTR_F = 2, ATTR_S = 4, ATTR_INTS = 8,
	ATTR_FLOAT = 1, ATTR_STRING = 3, ATTR_INTS_TYPE = 7,
};

/*
 * A message written from its innermost part outwards, at the end of one
 * buffer: wrapping the bytes so far in a field costs only the tag and
 * the length, so a model nested 100000 deep takes linear time.
 */
struct rpb {
	uint8_t *buf;
	size_t cap, start;	/* the message is buf[start, cap) */
};

static int rpb_init(struct rpb *r, size_t cap)
{
	r->buf = malloc(cap);
	r->cap = cap;
	r->start = cap;
	return r->buf ? 0 : -1;
}

static void rpb_prepend(struct rpb *r, const void *p, size_t n)
{
	if (n > r->start)
		abort();	/* the test sized the buffer */
	r->start -= n;
	memcpy(r->buf + r->start, p, n);
}

static void rpb_prepend_pb(struct rpb *r, struct pb *b)
{
	if (b->failed)
		abort();
	rpb_prepend(r, b->data, b->len);
	b->len = 0;
}

static void rpb_varint(struct rpb *r, uint64_t v)
{
	struct pb b = { 0 };

	pb_varint(&b, v);
	rpb_prepend_pb(r, &b);
	pb_free(&b);
}

/* Everything so far becomes field @field of a new outer message. */
static void rpb_wrap(struct rpb *r, uint32_t field)
{
	rpb_varint(r, r->cap - r->start);
	rpb_varint(r, field << 3 | 2);
}

static size_t rpb_len(const struct rpb *r)
{
	return r->cap - r->start;
}

static const uint8_t *rpb_data(const struct rpb *r)
{
	return r->buf + r->start;
}

/* Reading @data fails with @want and a message holding @says. */
static int read_fails(struct __test_metadata *_metadata, const void *data, size_t size,
		      vnpu_status want, const char *says)
{
	vnpu_model *m = NULL;

	ASSERT_FAILS(want, vnpu_model_read_memory(data, size, &m));
	ASSERT_TRUE(!m);
	if (says && !strstr(vnpu_last_error(), says)) {
		TH_LOG("message '%s' does not say '%s'", vnpu_last_error(), says);
		return 1;
	}
	return 0;
}

/* Reading the model of graph @g (emptied) at @opset gives @want. */
static int read_graph_is(struct __test_metadata *_metadata, struct pb *g, int64_t opset,
			 vnpu_status want, const char *says)
{
	struct pb model = { 0 };
	vnpu_model *m;
	int rc;

	onnx_model(&model, g, opset);
	ASSERT_TRUE(!model.failed);
	if (want == VNPU_OK) {
		ASSERT_EQ(VNPU_OK, vnpu_model_read_memory(model.data, model.len, &m));
		vnpu_model_free(m);
		rc = 0;
	} else {
		rc = read_fails(_metadata, model.data, model.len, want, says);
	}
	pb_free(&model);
	return rc;
}

/* The top of a model around what @r holds as graph field @field. */
static void rpb_model(struct rpb *r, uint32_t field)
{
	struct pb top = { 0 }, id = { 0 };

	rpb_wrap(r, field);
	rpb_wrap(r, MODEL_GRAPH);
	pb_int(&top, MODEL_IR_VERSION, 8);
	pb_int(&id, OPSET_VERSION, 17);
	pb_msg(&top, MODEL_OPSET, &id);
	rpb_prepend_pb(r, &top);
	pb_free(&top);
	pb_free(&id);
}

/* @r as a model's graph: reading it fails with @want and @says; frees @r. */
static int rpb_graph_fails(struct __test_metadata *_metadata, struct rpb *r, vnpu_status want,
			   const char *says)
{
	int rc;

	rpb_wrap(r, MODEL_GRAPH);
	rc = read_fails(_metadata, rpb_data(r), rpb_len(r), want, says);
	free(r->buf);
	return rc;
}

/*
 * A graph input whose type nests @depth TypeProtos through field @field of
 * each (sequence, map or optional, all read as TypeProto inside).
 */
static int nested_type(struct __test_metadata *_metadata, size_t depth, uint32_t type_field,
		       uint32_t elem_field,
		       vnpu_status want, const char *says)
{
	struct pb tt = { 0 }, name = { 0 };
	struct rpb r;
	int rc;

	ASSERT_EQ(0, rpb_init(&r, depth * 12 + 256));
	pb_int(&tt, TENSOR_ELEM, ONNX_FLOAT);
	rpb_prepend_pb(&r, &tt);
	rpb_wrap(&r, TYPE_TENSOR);
	for (size_t d = 0; d < depth; d++) {
		rpb_wrap(&r, elem_field);
		rpb_wrap(&r, type_field);
	}
	rpb_wrap(&r, VALUE_TYPE);
	pb_str(&name, VALUE_NAME, "x");
	rpb_prepend_pb(&r, &name);
	rpb_model(&r, GRAPH_INPUT);
	rc = read_fails(_metadata, rpb_data(&r), rpb_len(&r), want, says);
	free(r.buf);
	pb_free(&tt);
	pb_free(&name);
	return rc;
}

/*
 * Types nested thousands deep overflowed the stack of protobuf-c's unpack;
 * the wire walk refuses them before it runs, at any depth and by any of
 * the nesting types, while a sequence of tensors nests well inside.
 */
TEST(deep_types)
{
	static const size_t depths[] = { 40, 1000, 100000 };

	for (size_t i = 0; i < sizeof(depths) / sizeof(depths[0]); i++) {
		ASSERT_EQ(0,
			  nested_type(_metadata, depths[i], TYPE_SEQUENCE, SEQUENCE_ELEM, VNPU_UNSUPPORTED, "nested deeper than 64"));
		ASSERT_EQ(0,
			  nested_type(_metadata, depths[i], TYPE_MAP, MAP_VALUE, VNPU_UNSUPPORTED, "nested deeper than 64"));
		ASSERT_EQ(0,
			  nested_type(_metadata, depths[i], TYPE_OPTIONAL, OPTIONAL_ELEM, VNPU_UNSUPPORTED, "nested deeper than 64"));
	}
	/* Within the depth, the reader's own refusal of nested sequences. */
	ASSERT_EQ(0,
		  nested_type(_metadata, 2, TYPE_SEQUENCE, SEQUENCE_ELEM, VNPU_UNSUPPORTED, "is not a tensor, a sequence of tensors"));
}

/*
 * An If whose then_branch holds an If, @depth times: three messages
 * (graph, node, attribute) per level.
 */
static void nested_ifs(struct rpb *r, size_t depth)
{
	struct pb out = { 0 }, node = { 0 }, attr = { 0 };
	char y[32];

	onnx_value(&out, GRAPH_OUTPUT, "y", 1, (const int64_t[]){ 1 });
	onnx_init(&out, "one", ONNX_FLOAT, 1, (const int64_t[]){ 1 }, &(float){ 1 }, 4);
	rpb_prepend_pb(r, &out);
	for (size_t d = 0; d < depth; d++) {
		rpb_wrap(r, ATTR_G);
		pb_str(&attr, ATTR_NAME, d & 1 ? "else_branch" : "then_branch");
		pb_int(&attr, ATTR_TYPE, ATTR_GRAPH);
		rpb_prepend_pb(r, &attr);
		rpb_wrap(r, NODE_ATTR);
		snprintf(y, sizeof(y), "y%zu", d);
		pb_str(&node, NODE_INPUT, "c");
		pb_str(&node, NODE_OUTPUT, y);
		pb_str(&node, NODE_OP, "If");
		rpb_prepend_pb(r, &node);
		rpb_wrap(r, GRAPH_NODE);
		pb_str(&out, GRAPH_NAME, "g");
		rpb_prepend_pb(r, &out);
	}
	pb_free(&out);
	pb_free(&node);
	pb_free(&attr);
}

TEST(deep_subgraphs)
{
	static const size_t depths[] = { 30, 5000, 50000 };

	for (size_t i = 0; i < sizeof(depths) / sizeof(depths[0]); i++) {
		struct rpb r;

		ASSERT_EQ(0, rpb_init(&r, depths[i] * 80 + 512));
		nested_ifs(&r, depths[i]);
		ASSERT_EQ(0,
			  rpb_graph_fails(_metadata, &r, VNPU_UNSUPPORTED, "nested deeper than 64"));
	}
}

/* Malformed wire bytes: a parse error at the byte, never a read past. */
TEST(bad_wire)
{
	static const struct {
		const char *what;
		uint8_t bytes[8];
		size_t len;
	} cases[] = {
		{ "a group", { 0x3b, 0x3c }, 2 },			/* field 7, start group */
		{ "a length past the end", { 0x3a, 0x05, 0x00 }, 3 },	/* graph of 5 bytes */
		{ "a varint without its end", { 0x08, 0xff, 0xff }, 3 },
		{ "a field 0", { 0x00, 0x00 }, 2 },
		{ "a nested length past its parent", { 0x3a, 0x02, 0x0a, 0x05, 0x00 }, 5 },
		{ "a truncated fixed64", { 0x39, 0x00, 0x00 }, 3 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ASSERT_FALSE(read_fails(_metadata, cases[i].bytes, cases[i].len, VNPU_PARSE_ERROR,
					"not an ONNX model"))
			TH_LOG("case: %s", cases[i].what);
	}
}

/*
 * Millions of empty nodes (two bytes each) would be millions of messages
 * allocated by the unpack: counted and refused before.
 */
TEST(many_messages)
{
	size_t n = (1u << 22) + 1;
	struct rpb r;

	ASSERT_EQ(0, rpb_init(&r, n * 2 + 64));
	for (size_t i = 0; i < n; i++)
		rpb_prepend(&r, (const uint8_t[]){ GRAPH_NODE << 3 | 2, 0 }, 2);
	ASSERT_EQ(0,
		  rpb_graph_fails(_metadata, &r, VNPU_UNSUPPORTED, "more than 4194304 protobuf messages"));
}

/*
 * An If nested a few levels reads; 17 levels pass the wire walk and meet
 * the reader's limit of 16 subgraphs.
 */
TEST(subgraph_depths)
{
	struct pb g = { 0 };
	struct rpb r;

	ASSERT_EQ(0, rpb_init(&r, 17 * 80 + 512));
	nested_ifs(&r, 17);
	ASSERT_EQ(0,
		  rpb_graph_fails(_metadata, &r, VNPU_UNSUPPORTED, "subgraphs nested deeper than 16"));
	/* The smallest model: one Identity. */
	onnx_value(&g, GRAPH_INPUT, "x", 1, (const int64_t[]){ 2 });
	onnx_node(&g, "Identity", (const char *const[]){ "x" }, 1, "y");
	onnx_value(&g, GRAPH_OUTPUT, "y", 1, (const int64_t[]){ 2 });
	ASSERT_EQ(0, read_graph_is(_metadata, &g, 17, VNPU_OK, NULL));
	pb_free(&g);
}

/*
 * A Loop node carrying @v into @out through a body that holds @inner more
 * loops nested in one another (trip count M, the innermost's N; condition
 * T: outer values),
 * then Identity; names carry the level, as all share one value table.
 */
static void nested_loop(struct pb *g, const char *v, const char *out, int inner)
{
	char i[16], c[16], bv[16], w[16], vo[16], co[16];
	struct pb node = { 0 }, attr = { 0 }, body = { 0 };

	snprintf(i, sizeof(i), "i%d", inner);
	snprintf(c, sizeof(c), "c%d", inner);
	snprintf(bv, sizeof(bv), "v%d", inner);
	snprintf(w, sizeof(w), "w%d", inner);
	snprintf(vo, sizeof(vo), "vo%d", inner);
	snprintf(co, sizeof(co), "co%d", inner);
	onnx_value(&body, GRAPH_INPUT, i, -1, NULL);
	onnx_value(&body, GRAPH_INPUT, c, -1, NULL);
	onnx_value(&body, GRAPH_INPUT, bv, -1, NULL);
	if (inner > 0)
		nested_loop(&body, bv, w, inner - 1);
	onnx_node(&body, "Identity", (const char *const[]){ inner > 0 ? w : bv }, 1, vo);
	onnx_node(&body, "Identity", (const char *const[]){ c }, 1, co);
	onnx_value(&body, GRAPH_OUTPUT, co, -1, NULL);
	onnx_value(&body, GRAPH_OUTPUT, vo, -1, NULL);
	pb_str(&node, NODE_INPUT, inner > 0 ? "M" : "N");
	pb_str(&node, NODE_INPUT, "T");
	pb_str(&node, NODE_INPUT, v);
	pb_str(&node, NODE_OUTPUT, out);
	pb_str(&node, NODE_OP, "Loop");
	pb_str(&attr, ATTR_NAME, "body");
	pb_int(&attr, ATTR_TYPE, ATTR_GRAPH);
	pb_msg(&attr, ATTR_G, &body);
	pb_msg(&node, NODE_ATTR, &attr);
	pb_msg(g, GRAPH_NODE, &node);
	pb_free(&node);
	pb_free(&attr);
	pb_free(&body);
}

/*
 * The model read from @model gives y f32[3], and compiling it on the CPU
 * @compile_want, with a message holding @says.
 */
static int read_then_compile(struct __test_metadata *_metadata, const struct pb *model,
			     vnpu_status compile_want, const char *says)
{
	vnpu_compiled_model *cm = NULL;
	vnpu_core *core;
	vnpu_model *m;
	vnpu_shape s;

	ASSERT_TRUE(!model->failed);
	ASSERT_EQ(VNPU_OK, vnpu_model_read_memory(model->data, model->len, &m));
	ASSERT_EQ(VNPU_OK, vnpu_model_output_shape(m, 0, &s));
	ASSERT_TRUE(s.rank == 1 && s.dims[0] == 3);
	ASSERT_EQ(VNPU_OK, vnpu_core_create(&core));
	ASSERT_FAILS(compile_want, vnpu_core_compile_model(core, m, "CPU", NULL, &cm));
	vnpu_compiled_model_free(cm);
	vnpu_core_free(core);
	vnpu_model_free(m);
	if (says && !strstr(vnpu_last_error(), says)) {
		TH_LOG("message '%s' does not say '%s'", vnpu_last_error(), says);
		return 1;
	}
	return 0;
}

/* The inputs of nested_loops(_metadata) and loop_chain(_metadata): trip counts @trips (M)
 * and @inner_trips (N). */
static void loop_inputs(struct pb *g, int64_t trips, int64_t inner_trips)
{
	uint8_t yes = 1;

	onnx_init(g, "M", ONNX_INT64, 0, NULL, &trips, sizeof(trips));
	onnx_init(g, "N", ONNX_INT64, 0, NULL, &inner_trips, sizeof(inner_trips));
	onnx_init(g, "T", 9 /* BOOL */, 0, NULL, &yes, 1);
	onnx_value(g, GRAPH_INPUT, "x", 1, (const int64_t[]){ 3 });
}

/*
 * @levels loops nested in one another, each of @trips iterations but the
 * innermost of @inner_trips: read with @want (and @says); when read,
 * compiled with @compile_want.
 */
static int nested_loops(struct __test_metadata *_metadata, int levels, int64_t trips,
			int64_t inner_trips, vnpu_status want,
			const char *says, vnpu_status compile_want)
{
	struct pb g = { 0 }, model = { 0 };
	int rc;

	loop_inputs(&g, trips, inner_trips);
	nested_loop(&g, "x", "y", levels - 1);
	onnx_value(&g, GRAPH_OUTPUT, "y", -1, NULL);
	onnx_model(&model, &g, 17);
	ASSERT_TRUE(!model.failed);
	if (want != VNPU_OK)
		rc = read_fails(_metadata, model.data, model.len, want, says);
	else
		rc = read_then_compile(_metadata, &model, compile_want, says);
	pb_free(&g);
	pb_free(&model);
	return rc;
}

/* One Loop of @trips iterations whose body is a chain of @len Identity
 * nodes, read then compiled with @compile_want. */
static int loop_chain(struct __test_metadata *_metadata, int64_t trips, int len,
		      vnpu_status compile_want, const char *says)
{
	struct pb g = { 0 }, model = { 0 }, node = { 0 }, attr = { 0 }, body = { 0 };
	char prev[16] = "v", next[16];
	int rc;

	loop_inputs(&g, trips, trips);
	onnx_value(&body, GRAPH_INPUT, "i", -1, NULL);
	onnx_value(&body, GRAPH_INPUT, "c", -1, NULL);
	onnx_value(&body, GRAPH_INPUT, "v", -1, NULL);
	for (int k = 0; k < len; k++) {
		snprintf(next, sizeof(next), "v%d", k);
		onnx_node(&body, "Identity", (const char *const[]){ prev }, 1, next);
		strcpy(prev, next);
	}
	onnx_node(&body, "Identity", (const char *const[]){ "c" }, 1, "co");
	onnx_value(&body, GRAPH_OUTPUT, "co", -1, NULL);
	onnx_value(&body, GRAPH_OUTPUT, prev, -1, NULL);
	pb_str(&node, NODE_INPUT, "M");
	pb_str(&node, NODE_INPUT, "T");
	pb_str(&node, NODE_INPUT, "x");
	pb_str(&node, NODE_OUTPUT, "y");
	pb_str(&node, NODE_OP, "Loop");
	pb_str(&attr, ATTR_NAME, "body");
	pb_int(&attr, ATTR_TYPE, ATTR_GRAPH);
	pb_msg(&attr, ATTR_G, &body);
	pb_msg(&node, NODE_ATTR, &attr);
	pb_msg(&g, GRAPH_NODE, &node);
	onnx_value(&g, GRAPH_OUTPUT, "y", -1, NULL);
	onnx_model(&model, &g, 17);
	rc = read_then_compile(_metadata, &model, compile_want, says);
	pb_free(&node);
	pb_free(&attr);
	pb_free(&body);
	pb_free(&g);
	pb_free(&model);
	return rc;
}

/*
 * Loops inside loops cost the product of their trip counts; one budget of
 * node visits bounds all of an inference: two loops of 65536 iterations
 * (2^32 visits) ran for ever, six of 16 (2^24) 42 s, both read fine.
 */
TEST(loop_work)
{
	ASSERT_EQ(0,
		  nested_loops(_metadata, 2, 65536, 65536, VNPU_UNSUPPORTED, "visits more than 2097152 nodes", 0));
	ASSERT_EQ(0,
		  nested_loops(_metadata, 6, 16, 16, VNPU_UNSUPPORTED, "visits more than 2097152 nodes", 0));
	ASSERT_EQ(0, nested_loops(_metadata, 4, 16, 16, VNPU_OK, NULL, VNPU_OK));
	ASSERT_EQ(0, nested_loops(_metadata, 1, 65536, 65536, VNPU_OK, NULL, VNPU_OK));
}

/*
 * A compile shares the budget between its inference and its walk, which
 * visits each unrolled body node again: models that read within it are
 * refused when unrolling them passes it. A loop of 1024 iterations of
 * 1100 nodes is refused before its first iteration; 16 loops of 40000
 * iterations of 2 nodes (inside one loop) part way through the walk.
 */
TEST(unroll_work)
{
	ASSERT_EQ(0,
		  loop_chain(_metadata, 1024, 1100, VNPU_UNSUPPORTED, "Loop node: visits more than 2097152 nodes, inferred or unrolled"));
	ASSERT_EQ(0, loop_chain(_metadata, 64, 100, VNPU_OK, NULL));
	ASSERT_EQ(0,
		  nested_loops(_metadata, 2, 16, 40000, VNPU_OK, "visits more than 2097152 nodes, inferred or unrolled", VNPU_UNSUPPORTED));
	ASSERT_EQ(0, nested_loops(_metadata, 2, 16, 64, VNPU_OK, NULL, VNPU_OK));
}

static const char *const unary_ops[] = { "Neg", "Abs", "Relu", "Identity" };

/* Node @k of the model is op @op. */
static int op_is(struct __test_metadata *_metadata, const vnpu_model *m, size_t k, const char *op)
{
	const char *type, *name;

	ASSERT_EQ(VNPU_OK, vnpu_model_op(m, k, &type, &name));
	if (strcmp(type, op)) {
		TH_LOG("node %zu is %s, expected %s", k, type, op);
		return 1;
	}
	return 0;
}

/*
 * A chain of 200000 unary nodes listed last to first: sorted in linear
 * time (the sort was quadratic: 100000 nodes took 12 s of CPU), into the
 * chain's order, so inference reaches the output.
 */
TEST(reversed_chain)
{
	const size_t n = 200000;
	struct pb g = { 0 }, model = { 0 };
	char in[16], out[16];
	vnpu_model *m;
	vnpu_shape s;

	onnx_value(&g, GRAPH_INPUT, "t0", 1, (const int64_t[]){ 4 });
	for (size_t k = n; k-- > 0;) {
		snprintf(in, sizeof(in), "t%zu", k);
		snprintf(out, sizeof(out), "t%zu", k + 1);
		onnx_node(&g, unary_ops[k % 4], (const char *const[]){ in }, 1, out);
	}
	onnx_value(&g, GRAPH_OUTPUT, out, -1, NULL);
	onnx_model(&model, &g, 17);
	ASSERT_TRUE(!model.failed);
	ASSERT_EQ(VNPU_OK, vnpu_model_read_memory(model.data, model.len, &m));
	ASSERT_EQ(VNPU_OK, vnpu_model_output_shape(m, 0, &s));
	ASSERT_TRUE(s.rank == 1 && s.dims[0] == 4);
	for (size_t k = 0; k < n; k++) {
		ASSERT_EQ(0, op_is(_metadata, m, k, unary_ops[k % 4]));
	}
	vnpu_model_free(m);
	pb_free(&g);
	pb_free(&model);
}

/* A graph of the nodes @ops reading @ins writing @outs, @n of them. */
static int sorted_as(struct __test_metadata *_metadata, size_t n, const char *const *ops,
		     const char *const *ins,
		     const char *const *outs, const char *const *want)
{
	struct pb g = { 0 }, model = { 0 };
	vnpu_model *m;

	onnx_value(&g, GRAPH_INPUT, "x", 1, (const int64_t[]){ 2 });
	for (size_t k = 0; k < n; k++)
		onnx_node(&g, ops[k], &ins[k], 1, outs[k]);
	onnx_value(&g, GRAPH_OUTPUT, outs[n - 1], -1, NULL);
	onnx_model(&model, &g, 17);
	ASSERT_TRUE(!model.failed);
	if (!want) {
		ASSERT_EQ(0,
			  read_fails(_metadata, model.data, model.len, VNPU_PARSE_ERROR, "the graph has a cycle"));
	} else {
		ASSERT_EQ(VNPU_OK, vnpu_model_read_memory(model.data, model.len, &m));
		for (size_t k = 0; k < n; k++) {
			ASSERT_EQ(0, op_is(_metadata, m, k, want[k]));
		}
		vnpu_model_free(m);
	}
	pb_free(&g);
	pb_free(&model);
	return 0;
}

/*
 * The order is stable: a graph in order keeps it, and out of order the
 * ready node listed first goes next. Cycles, a node reading its own
 * output among them, are refused.
 */
TEST(sort_order)
{
	static const char *const ops[] = { "Neg", "Abs", "Relu", "Identity" };

	/* Two chains a and b, interleaved, in order. */
	ASSERT_EQ(0,
		  sorted_as(_metadata, 4, ops, (const char *const[]){ "x", "x", "a1", "b1" }, (const char *const[]){ "a1", "b1", "a2", "b2" }, ops));
	/* Listed a2, b1, a1, b2: b1 and a1 ready, b1 first, then a1, a2, b2. */
	ASSERT_EQ(0,
		  sorted_as(_metadata, 4, ops, (const char *const[]){ "a1", "x", "x", "b1" }, (const char *const[]){ "a2", "b1", "a1", "b2" }, (const char *const[]){ "Abs", "Relu", "Neg", "Identity" }));
	ASSERT_EQ(0,
		  sorted_as(_metadata, 2, ops, (const char *const[]){ "b", "a" }, (const char *const[]){ "a", "b" }, NULL));
	ASSERT_EQ(0,
		  sorted_as(_metadata, 1, ops, (const char *const[]){ "a" }, (const char *const[]){ "a" }, NULL));
}

/* An attribute value of one of the types the tests give. */
struct attr_value {
	int type;		/* ONNX AttributeType */
	float f;
	int64_t i;
	const char *s;
};

/*
 * Node @op reading x (and @more_in) into y with attribute @name of
 * @value, read at @opset: @want and @says.
 */
static int attr_is(struct __test_metadata *_metadata, const char *op, const char *more_in,
		   const char *name,
		   struct attr_value value, int64_t opset, vnpu_status want, const char *says)
{
	struct pb g = { 0 }, node = { 0 }, attr = { 0 };
	int rc;

	onnx_value(&g, GRAPH_INPUT, "x", 2, (const int64_t[]){ 2, 3 });
	if (more_in)
		onnx_value(&g, GRAPH_INPUT, more_in, 2, (const int64_t[]){ 2, 3 });
	pb_str(&attr, ATTR_NAME, name);
	pb_int(&attr, ATTR_TYPE, value.type);
	if (value.type == ATTR_FLOAT) {
		pb_varint(&attr, ATTR_F << 3 | 5);
		pb_put(&attr, &value.f, 4);
	} else if (value.type == ATTR_INT) {
		pb_int(&attr, ATTR_I, value.i);
	} else if (value.type == ATTR_STRING) {
		pb_str(&attr, ATTR_S, value.s);
	} else {
		pb_int(&attr, ATTR_INTS, value.i);
	}
	pb_str(&node, NODE_INPUT, "x");
	if (more_in)
		pb_str(&node, NODE_INPUT, more_in);
	pb_str(&node, NODE_OUTPUT, "y");
	pb_str(&node, NODE_OP, op);
	pb_str(&node, 3 /* name */, "n1");
	pb_msg(&node, NODE_ATTR, &attr);
	pb_msg(&g, GRAPH_NODE, &node);
	onnx_value(&g, GRAPH_OUTPUT, "y", -1, NULL);
	pb_free(&node);
	pb_free(&attr);
	rc = read_graph_is(_metadata, &g, opset, want, says);
	pb_free(&g);
	return rc;
}

/*
 * An attribute of another type than its op defines was read as absent:
 * Concat's axis given as the FLOAT 1.0 concatenated along axis 0. Now
 * it is refused, naming the node, the attribute and both types; a FLOAT
 * given as an INT is still read, and attributes the library does not
 * read are not checked.
 */
TEST(attr_types)
{
	static const struct attr_value float_one = { .type = ATTR_FLOAT, .f = 1 };

	ASSERT_EQ(0,
		  attr_is(_metadata, "Concat", "x2", "axis", float_one, 17, VNPU_PARSE_ERROR, "node 'n1' (Concat): attribute 'axis' is a FLOAT, expected an INT"));
	ASSERT_EQ(0,
		  attr_is(_metadata, "Softmax", NULL, "axis", (struct attr_value){ .type = ATTR_INTS_TYPE }, 17, VNPU_PARSE_ERROR, "attribute 'axis' is INTS, expected an INT"));
	ASSERT_EQ(0,
		  attr_is(_metadata, "Transpose", NULL, "perm", (struct attr_value){ .type = ATTR_INT, .i = 1 }, 17, VNPU_PARSE_ERROR, "attribute 'perm' is an INT, expected INTS"));
	ASSERT_EQ(0,
		  attr_is(_metadata, "LeakyRelu", NULL, "alpha", (struct attr_value){ .type = ATTR_STRING, .s = "0.1" }, 17, VNPU_PARSE_ERROR, "attribute 'alpha' is a STRING, expected a FLOAT"));
	ASSERT_EQ(0,
		  attr_is(_metadata, "DepthToSpace", NULL, "mode", (struct attr_value){ .type = ATTR_INT, .i = 0 }, 17, VNPU_PARSE_ERROR, "attribute 'mode' is an INT, expected a STRING"));
	ASSERT_EQ(0,
		  attr_is(_metadata, "ConstantOfShape", NULL, "value", float_one, 17, VNPU_PARSE_ERROR, "attribute 'value' is a FLOAT, expected a TENSOR"));
	ASSERT_EQ(0,
		  attr_is(_metadata, "LeakyRelu", NULL, "alpha", (struct attr_value){ .type = ATTR_INT, .i = 2 }, 17, VNPU_OK, NULL));
	ASSERT_EQ(0, attr_is(_metadata, "Relu", NULL, "unread", float_one, 17, VNPU_OK, NULL));
	ASSERT_EQ(0,
		  attr_is(_metadata, "Concat", "x2", "axis", (struct attr_value){ .type = ATTR_INT, .i = 1 }, 17, VNPU_OK, NULL));
}

/* Reading file @path fails with @want and a message holding @says. */
static int read_file_fails(struct __test_metadata *_metadata, const char *path, vnpu_status want,
			   const char *says)
{
	vnpu_model *m = NULL;

	ASSERT_FAILS(want, vnpu_model_read_file(path, &m));
	ASSERT_TRUE(!m);
	if (!strstr(vnpu_last_error(), says)) {
		TH_LOG("message '%s' does not say '%s'", vnpu_last_error(), says);
		return 1;
	}
	return 0;
}

/*
 * A folder given as the model said "9223372036854775807 bytes is too
 * large" (ftell() of a folder); a FIFO blocked the open. Both are no
 * regular file, said so at once; a file above the model limit (a sparse
 * one) is refused before it is read.
 */
TEST(not_model_files)
{
	char dir[] = "/tmp/vnpu-reader-XXXXXX", path[512];
	int fd;

	ASSERT_NE(NULL, mkdtemp(dir));
	ASSERT_EQ(0,
		  read_file_fails(_metadata, dir, VNPU_INVALID_ARGUMENT, "a directory, not a regular file"));
	snprintf(path, sizeof(path), "%s/fifo", dir);
	ASSERT_EQ(0, mkfifo(path, 0600));
	alarm(60);	/* a blocking open fails the test */
	ASSERT_EQ(0,
		  read_file_fails(_metadata, path, VNPU_INVALID_ARGUMENT, "a FIFO, not a regular file"));
	alarm(0);
	unlink(path);
	ASSERT_EQ(0,
		  read_file_fails(_metadata, "/dev/null", VNPU_INVALID_ARGUMENT, "not a regular file"));
	snprintf(path, sizeof(path), "%s/huge.onnx", dir);
	fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, ftruncate(fd, (1ll << 31) + 1));
	close(fd);
	ASSERT_EQ(0,
		  read_file_fails(_metadata, path, VNPU_UNSUPPORTED, "2147483649 bytes, above the limit of 2147483648"));
	unlink(path);
	rmdir(dir);
}

/* Two outputs of one name; a negative opset version. */
TEST(model_mistakes)
{
	struct pb g = { 0 };

	onnx_value(&g, GRAPH_INPUT, "x", 1, (const int64_t[]){ 2 });
	onnx_node(&g, "Neg", (const char *const[]){ "x" }, 1, "y");
	onnx_value(&g, GRAPH_OUTPUT, "y", -1, NULL);
	onnx_value(&g, GRAPH_OUTPUT, "y", -1, NULL);
	ASSERT_EQ(0,
		  read_graph_is(_metadata, &g, 17, VNPU_PARSE_ERROR, "graph output 'y' is listed twice"));
	onnx_value(&g, GRAPH_INPUT, "x", 1, (const int64_t[]){ 2 });
	onnx_node(&g, "Neg", (const char *const[]){ "x" }, 1, "y");
	onnx_value(&g, GRAPH_OUTPUT, "y", -1, NULL);
	ASSERT_EQ(0,
		  read_graph_is(_metadata, &g, -3, VNPU_PARSE_ERROR, "opset version -3 of domain '' is negative"));
	pb_free(&g);
}

/*
 * A tensor above 2^34 bytes, and dimensions whose product passes it or
 * that are negative: refused before anything is allocated for the data.
 */
TEST(tensor_limits)
{
	struct pb g = { 0 };

	onnx_init(&g, "w", ONNX_FLOAT, 1, (const int64_t[]){ 1ll << 33 }, NULL, 0);
	onnx_value(&g, GRAPH_OUTPUT, "w", -1, NULL);
	ASSERT_EQ(0,
		  read_graph_is(_metadata, &g, 17, VNPU_UNSUPPORTED, "tensor 'w': 34359738368 bytes is too large"));
	onnx_init(&g, "w", ONNX_FLOAT, 2, (const int64_t[]){ 1ll << 20, 1ll << 20 }, NULL, 0);
	onnx_value(&g, GRAPH_OUTPUT, "w", -1, NULL);
	ASSERT_EQ(0,
		  read_graph_is(_metadata, &g, 17, VNPU_PARSE_ERROR, "tensor 'w': bad or huge dimension 1048576"));
	onnx_init(&g, "w", ONNX_FLOAT, 2, (const int64_t[]){ 2, -1 }, NULL, 0);
	onnx_value(&g, GRAPH_OUTPUT, "w", -1, NULL);
	ASSERT_EQ(0,
		  read_graph_is(_metadata, &g, 17, VNPU_PARSE_ERROR, "tensor 'w': bad or huge dimension -1"));
	pb_free(&g);
}

/* y = x + w of 1024 floats, as read and compiled for the CPU, with x 0. */
static int add_gives(struct __test_metadata *_metadata, vnpu_model *model, const float *w)
{
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	vnpu_tensor *in, *out;
	vnpu_core *core;
	float *x, *y;
	int ok;

	ASSERT_EQ(VNPU_OK, vnpu_core_create(&core));
	ASSERT_EQ(VNPU_OK, vnpu_core_compile_model(core, model, "CPU", NULL, &cm));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_input_tensor(req, 0, &in));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(in, (void **)&x));
	memset(x, 0, 1024 * sizeof(*x));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_infer(req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_output_tensor(req, 0, &out));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(out, (void **)&y));
	ok = !memcmp(y, w, 1024 * sizeof(*y));
	vnpu_tensor_free(in);
	vnpu_tensor_free(out);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
	vnpu_core_free(core);
	return ok ? 0 : 1;
}

/*
 * @model's bytes read from memory and from a file both give y = x + @w,
 * or both fail with @want and a message holding @says.
 */
static int both_read(struct __test_metadata *_metadata, const struct pb *model, const float *w,
		     vnpu_status want, const char *says)
{
	char dir[] = "/tmp/vnpu-reader-XXXXXX", path[512];
	vnpu_model *m = NULL;
	int fd, rc = 0;

	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/add.onnx", dir);
	fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
	ASSERT_GE(fd, 0);
	ASSERT_EQ((ssize_t)model->len, write(fd, model->data, model->len));
	close(fd);
	for (int file = 0; file < 2 && !rc; file++) {
		vnpu_status st = file ? vnpu_model_read_file(path, &m) :
				 vnpu_model_read_memory(model->data, model->len, &m);

		if (want == VNPU_OK) {
			ASSERT_EQ(VNPU_OK, st);
			rc = add_gives(_metadata, m, w);
			vnpu_model_free(m);
		} else if (st != want || !strstr(vnpu_last_error(), says)) {
			TH_LOG("%s: status %d, message '%s', not '%s'", file ? "file" : "memory",
			       st, vnpu_last_error(), says);
			rc = 1;
		}
	}
	unlink(path);
	rmdir(dir);
	return rc;
}

/* An initializer of @w's 4096 bytes as raw data, and what @extra adds to it. */
static void add_model(struct pb *model, const float *w, const struct pb *extra)
{
	struct pb g = { 0 }, t = { 0 };

	onnx_value(&g, GRAPH_INPUT, "x", 1, (const int64_t[]){ 1024 });
	pb_int(&t, INIT_DIMS, 1024);
	pb_int(&t, INIT_TYPE, ONNX_FLOAT);
	pb_str(&t, INIT_NAME, "w");
	pb_bytes(&t, INIT_RAW, w, 1024 * sizeof(*w));
	if (extra)
		pb_put(&t, extra->data, extra->len);
	pb_msg(&g, GRAPH_INIT, &t);
	onnx_node(&g, "Add", (const char *const[]){ "x", "w" }, 2, "y");
	onnx_value(&g, GRAPH_OUTPUT, "y", -1, NULL);
	onnx_model(model, &g, 17);
	pb_free(&g);
	pb_free(&t);
}

/*
 * Large raw data is read straight into its tensor, from a file or from
 * memory, and gives the same bits; a field of the number that stands for
 * such data in the reader is the file's own and ignored; raw data given
 * twice, the second large, is refused.
 */
TEST(large_raw_data)
{
	struct pb model = { 0 }, extra = { 0 };
	float w[1024];

	for (int i = 0; i < 1024; i++)
		w[i] = (float)i * 0.25f - 100.0f;
	add_model(&model, w, NULL);
	ASSERT_EQ(0, both_read(_metadata, &model, w, VNPU_OK, NULL));
	pb_free(&model);
	model = (struct pb){ 0 };
	/* Field 4095 as a varint, then as bytes. */
	pb_int(&extra, 4095, 0);
	pb_bytes(&extra, 4095, w, 16);
	add_model(&model, w, &extra);
	ASSERT_EQ(0, both_read(_metadata, &model, w, VNPU_OK, NULL));
	pb_free(&model);
	pb_free(&extra);
	model = extra = (struct pb){ 0 };
	pb_bytes(&extra, INIT_RAW, w, sizeof(w));
	add_model(&model, w, &extra);
	ASSERT_EQ(0, both_read(_metadata, &model, w, VNPU_PARSE_ERROR, "tensor 'w': raw data given twice"));
	pb_free(&model);
	pb_free(&extra);
}

KSFT_MAIN

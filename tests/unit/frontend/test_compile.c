// SPDX-License-Identifier: MIT
/*
 * The compiler: each pass on small graphs built in code (run on the host
 * with and without the pass, compared with naive references), lowering
 * of data movement to copies, the arena planner, query and placement.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <drm/vnpu_layers.h>

#include "compiler/lower.h"
#include "engine/vnpu_engine.h"
#include "fe_test.h"
#include "ksft_main.h"

#define F32 ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT

static const struct vnpu_compile_options no_fusion = { .no_fusion = true, .no_packing = true };

static size_t numel(const vnpu_shape *s)
{
	size_t n = 1;

	for (uint32_t d = 0; d < s->rank; d++)
		n *= (size_t)s->dims[d];
	return n;
}

/*
 * Compile @m with @o and run it on @inputs (NULL: pattern inputs); outputs
 * malloc'd floats (the caller frees them). NULL, counted as a failure,
 * when it does not compile.
 */
static struct vnpu_program *compile_run_on(struct __test_metadata *_metadata, const vnpu_model *m,
					   const struct vnpu_compile_options *o,
					   void *const *inputs, float **outs)
{
	struct vnpu_program *p = NULL;
	void *in[8] = { 0 };

	EXPECT_EQ(VNPU_OK, vnpu_compile(m, o, &p))
		TH_LOG("compile: %s", vnpu_last_error());
	if (!p)
		return NULL;
	for (uint32_t i = 0; !inputs && i < p->num_inputs; i++) {
		in[i] = calloc(1, p->inputs[i].size + 4);
		fe_pattern(in[i], p->inputs[i].size / 4, i + 1);
	}
	for (uint32_t i = 0; i < p->num_outputs; i++)
		outs[i] = calloc(1, p->outputs[i].size + 4);
	EXPECT_EQ(0, fe_run_program(p, inputs ? inputs : in, (void *const *)outs));
	for (uint32_t i = 0; i < p->num_inputs; i++)
		free(in[i]);
	return p;
}

/* Compile @m with @o, run with pattern inputs; outputs malloc'd floats. */
static struct vnpu_program *compile_run(struct __test_metadata *_metadata, const vnpu_model *m,
					const struct vnpu_compile_options *o,
					float **outs)
{
	return compile_run_on(_metadata, m, o, NULL, outs);
}

static float max_diff(const float *a, const float *b, size_t n)
{
	float worst = 0;

	for (size_t i = 0; i < n; i++) {
		float d = fabsf(a[i] - b[i]) / (1.0f + fabsf(b[i]));

		if (!(d <= worst))
			worst = isnan(d) ? INFINITY : d;
	}
	return worst;
}

/* The same model with and without fusion/packing gives the same outputs. */
static void check_fusion_equivalent(struct __test_metadata *_metadata, const vnpu_model *m,
				    uint32_t want_fused_layers)
{
	float *a[8] = { 0 }, *b[8] = { 0 };
	struct vnpu_program *p = compile_run(_metadata, m, NULL, a);
	struct vnpu_program *q = compile_run(_metadata, m, &no_fusion, b);

	if (p && q) {
		if (want_fused_layers)
			EXPECT_EQ(want_fused_layers, p->num_layers);
		EXPECT_GE(q->num_layers, p->num_layers);
		for (uint32_t o = 0; o < p->num_outputs; o++) {
			float d = max_diff(a[o], b[o], numel(&p->outputs[o].shape));

			EXPECT_FALSE(!(d < 1e-4f))
				TH_LOG("output %u differs by %g", o, d);
		}
	}
	for (int i = 0; i < 8; i++) {
		free(a[i]);
		free(b[i]);
	}
	vnpu_program_free(p);
	vnpu_program_free(q);
}

TEST(conv_bn_bias_relu_fusion)
{
	struct mb *b = mb_new(13);
	Onnx__NodeProto *n;
	struct vnpu_program *p = NULL;
	vnpu_model *m;
	float var[8];

	mb_input(b, "x", F32, 4, (const int64_t[]){ 1, 3, 9, 7 });
	mb_init_f32(b, "w", 4, (const int64_t[]){ 8, 3, 3, 3 }, NULL);
	mb_init_f32(b, "scale", 1, (const int64_t[]){ 8 }, NULL);
	mb_init_f32(b, "bias", 1, (const int64_t[]){ 8 }, NULL);
	mb_init_f32(b, "mean", 1, (const int64_t[]){ 8 }, NULL);
	for (int i = 0; i < 8; i++)
		var[i] = 0.5f + 0.1f * (float)i;
	mb_init_f32(b, "var", 1, (const int64_t[]){ 8 }, var);
	mb_init_f32(b, "b2", 3, (const int64_t[]){ 8, 1, 1 }, NULL);
	n = mb_node(b, "Conv", (const char *[]){ "x", "w", NULL }, (const char *[]){ "c", NULL });
	mb_attr_ints(n, "pads", 4, (const int64_t[]){ 1, 1, 1, 1 });
	mb_node(b, "BatchNormalization", (const char *[]){ "c", "scale", "bias", "mean", "var", NULL },
		(const char *[]){ "bn", NULL });
	mb_node(b, "Identity", (const char *[]){ "bn", NULL }, (const char *[]){ "id", NULL });
	mb_node(b, "Add", (const char *[]){ "id", "b2", NULL }, (const char *[]){ "ad", NULL });
	mb_node(b, "Relu", (const char *[]){ "ad", NULL }, (const char *[]){ "y", NULL });
	mb_output(b, "y");
	m = mb_read(b);
	EXPECT_NE(NULL, m);
	if (!m)
		return;
	EXPECT_EQ(VNPU_OK, vnpu_compile(m, NULL, &p));
	if (p) {
		EXPECT_EQ(1, p->num_layers);
		EXPECT_STREQ("Conv+BatchNorm+Add+Relu", p->layers[0].type);
		EXPECT_EQ(0, p->arena_size);
	}
	vnpu_program_free(p);
	check_fusion_equivalent(_metadata, m, 1);
	vnpu_model_free(m);
}

/* Gemm(transB) + residual Add + Sigmoid, and MatMul + bias, against a
 * naive reference. */
TEST(gemm_matmul)
{
	struct mb *b = mb_new(13);
	Onnx__NodeProto *n;
	float w[5 * 6], w2[5 * 4], c2[4], x[3 * 6], r[3 * 5], *out[8] = { 0 };
	struct vnpu_program *p;
	vnpu_model *m;

	fe_pattern(w, 30, 7);
	fe_pattern(w2, 20, 8);
	fe_pattern(c2, 4, 9);
	mb_input(b, "x", F32, 2, (const int64_t[]){ 3, 6 });
	mb_input(b, "r", F32, 2, (const int64_t[]){ 3, 5 });
	mb_init_f32(b, "w", 2, (const int64_t[]){ 5, 6 }, w);
	mb_init_f32(b, "w2", 2, (const int64_t[]){ 5, 4 }, w2);
	mb_init_f32(b, "c2", 1, (const int64_t[]){ 4 }, c2);
	n = mb_node(b, "Gemm", (const char *[]){ "x", "w", NULL }, (const char *[]){ "g", NULL });
	mb_attr_int(n, "transB", 1);
	mb_attr_float(n, "alpha", 0.5f);
	mb_node(b, "Add", (const char *[]){ "r", "g", NULL }, (const char *[]){ "a", NULL });
	mb_node(b, "Sigmoid", (const char *[]){ "a", NULL }, (const char *[]){ "s", NULL });
	mb_node(b, "MatMul", (const char *[]){ "s", "w2", NULL }, (const char *[]){ "mm", NULL });
	mb_node(b, "Add", (const char *[]){ "mm", "c2", NULL }, (const char *[]){ "y", NULL });
	mb_output(b, "y");
	m = mb_read(b);
	EXPECT_NE(NULL, m);
	if (!m)
		return;
	p = compile_run(_metadata, m, NULL, out);
	if (p) {
		float s[3 * 5], ref[3 * 4];

		EXPECT_EQ(2, p->num_layers);
		EXPECT_STREQ("Gemm+Residual+Sigmoid", p->layers[0].type);
		EXPECT_STREQ("MatMul+Add", p->layers[1].type);
		fe_pattern(x, 18, 1);
		fe_pattern(r, 15, 2);
		for (int i = 0; i < 3; i++)
			for (int j = 0; j < 5; j++) {
				float acc = 0;

				for (int k = 0; k < 6; k++)
					acc += x[i * 6 + k] * w[j * 6 + k];
				s[i * 5 + j] = 1.0f / (1.0f + expf(-(0.5f * acc + r[i * 5 + j])));
			}
		for (int i = 0; i < 3; i++)
			for (int j = 0; j < 4; j++) {
				float acc = c2[j];

				for (int k = 0; k < 5; k++)
					acc += s[i * 5 + k] * w2[k * 4 + j];
				ref[i * 4 + j] = acc;
			}
		EXPECT_LT(max_diff(out[0], ref, 12), 1e-5f);
	}
	free(out[0]);
	vnpu_program_free(p);
	check_fusion_equivalent(_metadata, m, 2);
	vnpu_model_free(m);
}

/*
 * One Conv, MatMul or Gemm, an activation, then @bop ("Max" or "Min") of
 * its output and the constant @cval (first when @c_first; of @c_rank
 * dims, all 1, with @c_rank 1 and 8 elements when @c_vec), the output
 * also read by a Neg when @shared: compiled with fusion, the program has
 * @want layers, the first of type @type (NULL: not checked), and the
 * outputs are the unfused program's, bit for bit (fusion moves no sum).
 */
static void bound_case(struct __test_metadata *_metadata, const char *first, const char *act,
		       const char *bop, float cval,
		       bool c_first, int c_rank, bool c_vec, bool shared, uint32_t want,
		       const char *type)
{
	struct mb *b = mb_new(13);
	float cv[8], *a[8] = { 0 }, *q[8] = { 0 };
	struct vnpu_program *p, *u;
	vnpu_model *m;
	Onnx__NodeProto *n;
	const char *prev = "c";

	for (int i = 0; i < 8; i++)
		cv[i] = cval;
	if (!strcmp(first, "Conv")) {
		mb_input(b, "x", F32, 4, (const int64_t[]){ 1, 3, 9, 7 });
		mb_init_f32(b, "w", 4, (const int64_t[]){ 8, 3, 3, 3 }, NULL);
		n = mb_node(b, "Conv", (const char *[]){ "x", "w", NULL }, (const char *[]){ "c", NULL });
		mb_attr_ints(n, "pads", 4, (const int64_t[]){ 1, 1, 1, 1 });
	} else {
		mb_input(b, "x", F32, 2, (const int64_t[]){ 5, 8 });
		mb_init_f32(b, "w", 2, (const int64_t[]){ 8, 8 }, NULL);
		mb_node(b, first, (const char *[]){ "x", "w", NULL }, (const char *[]){ "c", NULL });
	}
	if (act) {
		n = mb_node(b, act, (const char *[]){ "c", NULL }, (const char *[]){ "a", NULL });
		if (!strcmp(act, "LeakyRelu"))
			mb_attr_float(n, "alpha", 0.2f);
		prev = "a";
	}
	if (c_vec)
		mb_init_f32(b, "k", 1, (const int64_t[]){ 8 }, cv);
	else
		mb_init_f32(b, "k", c_rank, (const int64_t[]){ 1, 1, 1, 1 }, cv);
	mb_node(b, bop, c_first ? (const char *[]){ "k", prev, NULL } :
		(const char *[]){ prev, "k", NULL }, (const char *[]){ "y", NULL });
	mb_output(b, "y");
	if (shared) {
		mb_node(b, "Neg", (const char *[]){ prev, NULL }, (const char *[]){ "z", NULL });
		mb_output(b, "z");
	}
	m = mb_read(b);
	EXPECT_NE(NULL, m);
	if (!m)
		return;
	p = compile_run(_metadata, m, NULL, a);
	u = compile_run(_metadata, m, &no_fusion, q);
	if (p && u) {
		EXPECT_EQ(want, p->num_layers);
		EXPECT_FALSE(type && strcmp(p->layers[0].type, type))
			TH_LOG("%s %s %s: layer 0 is %s, not %s", first, act ? act : "-", bop,
			       p->layers[0].type, type);
		for (uint32_t o = 0; o < p->num_outputs; o++) {
			EXPECT_EQ(0, memcmp(a[o], q[o], p->outputs[o].size));
		}
	}
	for (int i = 0; i < 8; i++) {
		free(a[i]);
		free(q[i]);
	}
	vnpu_program_free(p);
	vnpu_program_free(u);
	vnpu_model_free(m);
}

/*
 * A Max or Min of a fused output and a constant scalar joins the layer as
 * its activation's bound: after LeakyRelu (TF's exports clamp it so),
 * Relu or nothing; not after a function with a parameter beta, nor when
 * the constant is a vector, nor a zero given first (a tie's zero sign
 * would differ), nor when the output has another reader.
 */
TEST(bound_fusion)
{
	bound_case(_metadata, "Conv", "LeakyRelu", "Max", -0.4f, false, 4, false, false, 1,
		   "Conv+LeakyRelu+Max");
	bound_case(_metadata, "Conv", "Relu", "Min", 0.25f, true, 0, false, false, 1,
		   "Conv+Relu+Min");
	bound_case(_metadata, "Conv", NULL, "Max", 0.0f, false, 1, false, false, 1, "Conv+Max");
	bound_case(_metadata, "MatMul", "Relu", "Min", 6.0f, true, 2, false, false, 1,
		   "MatMul+Relu+Min");
	bound_case(_metadata, "Gemm", "LeakyRelu", "Min", 0.5f, false, 0, false, false, 1,
		   "Gemm+LeakyRelu+Min");
	/* Not fused. */
	bound_case(_metadata, "Conv", NULL, "Max", 0.0f, true, 0, false, false, 2, "Conv");
	bound_case(_metadata, "MatMul", NULL, "Max", 0.1f, false, 1, true, false, 2, "MatMul");
	bound_case(_metadata, "Conv", "Sigmoid", "Max", 0.5f, false, 0, false, false, 2,
		   "Conv+Sigmoid");
	bound_case(_metadata, "Conv", "LeakyRelu", "Max", -0.4f, false, 0, false, true, 3,
		   "Conv+LeakyRelu");
}

/* Fusion must not move work past the producer of what it reads, nor
 * change a tensor a view still reads. */
TEST(fusion_hazards)
{
	struct mb *b = mb_new(13);
	struct vnpu_program *p = NULL;
	vnpu_model *m;

	mb_input(b, "x", F32, 2, (const int64_t[]){ 2, 4 });
	mb_input(b, "x2", F32, 2, (const int64_t[]){ 3, 4 });
	mb_init_f32(b, "w", 2, (const int64_t[]){ 4, 6 }, NULL);
	mb_init_i64(b, "s26", 1, (const int64_t[]){ 2 }, (const int64_t[]){ 2, 6 });
	mb_init_i64(b, "s34", 1, (const int64_t[]){ 2 }, (const int64_t[]){ 3, 4 });
	mb_node(b, "MatMul", (const char *[]){ "x", "w", NULL }, (const char *[]){ "g", NULL });
	mb_node(b, "Neg", (const char *[]){ "x2", NULL }, (const char *[]){ "n", NULL });
	mb_node(b, "Reshape", (const char *[]){ "n", "s26", NULL }, (const char *[]){ "v", NULL });
	/* A residual produced after the MatMul: not fusable. */
	mb_node(b, "Add", (const char *[]){ "g", "v", NULL }, (const char *[]){ "a", NULL });
	/* A view of a's pre-activation value, read after the Relu. */
	mb_node(b, "Reshape", (const char *[]){ "a", "s34", NULL }, (const char *[]){ "av", NULL });
	mb_node(b, "Relu", (const char *[]){ "a", NULL }, (const char *[]){ "y1", NULL });
	mb_node(b, "Neg", (const char *[]){ "av", NULL }, (const char *[]){ "y2", NULL });
	mb_output(b, "y1");
	mb_output(b, "y2");
	m = mb_read(b);
	EXPECT_NE(NULL, m);
	if (!m)
		return;
	EXPECT_EQ(VNPU_OK, vnpu_compile(m, NULL, &p));
	if (p)
		for (uint32_t l = 0; l < p->num_layers; l++) {
			EXPECT_TRUE(strcmp(p->layers[l].type, "MatMul+Residual")
				    && strcmp(p->layers[l].type, "Add+Relu"));
		}
	vnpu_program_free(p);
	check_fusion_equivalent(_metadata, m, 0);
	vnpu_model_free(m);
}

/* Bytes the COPY commands of @p write. */
static uint64_t copy_bytes(const struct vnpu_program *p)
{
	uint64_t bytes = 0;

	for (uint32_t g = 0; g < p->num_segments; g++) {
		const uint8_t *c = p->segments[g].cmd, *end = c + p->segments[g].cmd_size;
		struct vnpu_cmd_header h;

		for (; c + sizeof(h) <= end; c += h.size) {
			struct vnpu_cmd_copy copy;
			uint64_t elems = 1;

			memcpy(&h, c, sizeof(h));
			if (h.size < sizeof(h))
				break;
			if (h.opcode != VNPU_CMD_COPY || h.size < sizeof(copy))
				continue;
			memcpy(&copy, c, sizeof(copy));
			for (uint32_t d = 0; d < copy.dst.rank && d < VNPU_MAX_DIMS; d++)
				elems *= copy.dst.dims[d];
			bytes += elems * vnpu_element_type_size(copy.dst.dtype);
		}
	}
	return bytes;
}

/*
 * @m (freed here) compiled with fusion, which computes a Concat's inputs
 * in place in its output, copies @want bytes; without fusion every
 * Concat copies all its inputs (@unfused bytes). Both programs validate,
 * and their outputs are the same bits.
 */
static void in_place_case(struct __test_metadata *_metadata, const char *what, vnpu_model *m,
			  uint64_t want, uint64_t unfused)
{
	float *a[8] = { 0 }, *q[8] = { 0 };
	struct vnpu_program *p, *u;

	if (!m) {
		EXPECT_NE(NULL, m);
		return;
	}
	p = compile_run(_metadata, m, NULL, a);
	u = compile_run(_metadata, m, &no_fusion, q);
	if (p && u) {
		EXPECT_FALSE(copy_bytes(p) != want || copy_bytes(u) != unfused)
			TH_LOG("%s: copies %llu bytes (want %llu), unfused %llu (want %llu)", what,
			       (unsigned long long)copy_bytes(p), (unsigned long long)want, (unsigned long long)copy_bytes(u), (unsigned long long)unfused);
		for (uint32_t o = 0; o < p->num_outputs; o++) {
			EXPECT_EQ(0, memcmp(a[o], q[o], p->outputs[o].size));
		}
	}
	for (int i = 0; i < 8; i++) {
		free(a[i]);
		free(q[i]);
	}
	vnpu_program_free(p);
	vnpu_program_free(u);
	vnpu_model_free(m);
}

#define NODE1(b, op, x, y) mb_node(b, op, (const char *[]){ x, NULL }, (const char *[]){ y, NULL })

/* a = Relu(x) f32[2, 4], b = Neg(x2) f32[3, 4], and the builder. */
static struct mb *concat_base(void)
{
	struct mb *b = mb_new(13);

	mb_input(b, "x", F32, 2, (const int64_t[]){ 2, 4 });
	mb_input(b, "x2", F32, 2, (const int64_t[]){ 3, 4 });
	NODE1(b, "Relu", "x", "a");
	NODE1(b, "Neg", "x2", "b");
	return b;
}

/* c = Concat(@in) along @axis, y = Tanh(c) the output. */
static void concat_out(struct mb *b, const char *const *in, int64_t axis)
{
	mb_attr_int(mb_node(b, "Concat", in, (const char *[]){ "c", NULL }), "axis", axis);
	NODE1(b, "Tanh", "c", "y");
	mb_output(b, "y");
}

/*
 * A Concat's inputs computed in place: its producers write the slots of
 * its output (a model output or not), other readers read them there,
 * after the Concat too; not an input or a constant, an input twice, a
 * model output, an input of an earlier Concat, nor slots strided apart
 * (dimensions before the axis above 1).
 */
TEST(concat_in_place)
{
	struct mb *b = concat_base();

	concat_out(b, (const char *[]){ "a", "b", NULL }, 0);
	NODE1(b, "Abs", "a", "z");	/* reads a in place, after the Concat */
	mb_output(b, "z");
	in_place_case(_metadata, "two computed inputs", mb_read(b), 0, 80);

	b = concat_base();
	mb_attr_int(mb_node(b, "Concat", (const char *[]){ "a", "b", NULL },
			    (const char *[]){ "y", NULL }), "axis", -2);
	mb_output(b, "y");
	in_place_case(_metadata, "into a model output", mb_read(b), 0, 80);

	b = concat_base();
	mb_init_f32(b, "k", 2, (const int64_t[]){ 1, 4 }, NULL);
	concat_out(b, (const char *[]){ "x", "k", "a", "b", NULL }, 0);
	in_place_case(_metadata, "an input and a constant", mb_read(b), 48, 128);

	b = concat_base();
	concat_out(b, (const char *[]){ "a", "b", "a", NULL }, 0);
	in_place_case(_metadata, "an input twice", mb_read(b), 32, 112);

	b = concat_base();
	concat_out(b, (const char *[]){ "a", "b", NULL }, 0);
	mb_output(b, "a");
	in_place_case(_metadata, "a model output", mb_read(b), 32, 80);

	b = concat_base();
	NODE1(b, "Exp", "x", "e");
	concat_out(b, (const char *[]){ "a", "e", NULL }, 1);
	in_place_case(_metadata, "slots strided apart", mb_read(b), 64, 64);

	/* Nested, of views: a and b reshaped to rows, then a row of c, b and
	 * Exp(x) reshaped: every input in place, though b is in two Concats
	 * (once). */
	b = concat_base();
	mb_init_i64(b, "r8", 1, (const int64_t[]){ 2 }, (const int64_t[]){ 1, 8 });
	mb_init_i64(b, "r12", 1, (const int64_t[]){ 2 }, (const int64_t[]){ 1, 12 });
	NODE1(b, "Exp", "x", "e");
	mb_node(b, "Reshape", (const char *[]){ "a", "r8", NULL }, (const char *[]){ "ar", NULL });
	mb_node(b, "Reshape", (const char *[]){ "b", "r12", NULL }, (const char *[]){ "br", NULL });
	mb_node(b, "Reshape", (const char *[]){ "e", "r8", NULL }, (const char *[]){ "er", NULL });
	mb_attr_int(mb_node(b, "Concat", (const char *[]){ "ar", "br", NULL },
			    (const char *[]){ "c1", NULL }), "axis", 1);
	concat_out(b, (const char *[]){ "c1", "er", "br", NULL }, 1);
	in_place_case(_metadata, "nested, of views", mb_read(b), 48, 80 + 160);
}

/*
 * a = Relu(x) f32[2, 4] split in rows s0, s1, n = Neg(s1), and c =
 * Concat(@in) along 0, y = Tanh(c) the output (a C2f block's Split, its
 * bottleneck and Concat).
 */
static vnpu_model *split_concat(const char *const *in, bool split_input)
{
	struct mb *b = mb_new(13);

	mb_input(b, "x", F32, 2, (const int64_t[]){ 2, 4 });
	mb_init_i64(b, "sizes", 1, (const int64_t[]){ 2 }, (const int64_t[]){ 1, 1 });
	NODE1(b, "Relu", "x", "a");
	mb_node(b, "Split", (const char *[]){ split_input ? "x" : "a", "sizes", NULL },
		(const char *[]){ "s0", "s1", NULL });
	NODE1(b, "Neg", "s1", "n");
	mb_attr_int(mb_node(b, "Concat", in, (const char *[]){ "c", NULL }), "axis", 0);
	NODE1(b, "Tanh", "c", "y");
	mb_output(b, "y");
	return mb_read(b);
}

/*
 * The parts of a value a Concat takes in their order at their places:
 * the whole value computed in place (s0 and s1 then cost nothing), read
 * by Neg there too. Not when the parts are swapped, split by another
 * input, taken twice, or parts of an input.
 */
TEST(concat_parts_in_place)
{
	in_place_case(_metadata, "parts in order",
		      split_concat((const char *[]){ "s0", "s1", "n", NULL }, false), 0, 48);
	in_place_case(_metadata, "after another input",
		      split_concat((const char *[]){ "n", "s0", "s1", NULL }, false), 0, 48);
	in_place_case(_metadata, "parts swapped",
		      split_concat((const char *[]){ "s1", "s0", "n", NULL }, false), 32, 48);
	in_place_case(_metadata, "another input between",
		      split_concat((const char *[]){ "s0", "n", "s1", NULL }, false), 32, 48);
	in_place_case(_metadata, "a part twice",
		      split_concat((const char *[]){ "s0", "s1", "s0", NULL }, false), 16, 48);
	in_place_case(_metadata, "parts of an input",
		      split_concat((const char *[]){ "s0", "s1", "n", NULL }, true), 32, 48);
}

/*
 * A Scan's stacked outputs: each step's output computed in its row, a
 * reversed one too; only the last state, a model output as well, is
 * copied. Rows of a stack along axis 1 are strided apart: copied.
 */
TEST(scan_in_place)
{
	for (int axis = 0; axis < 2; axis++) {
		struct mb *b = mb_new(13), *body = mb_new(13);
		Onnx__NodeProto *n;

		mb_input(b, "s0", F32, 1, (const int64_t[]){ 4 });
		mb_input(b, "x", F32, 2, (const int64_t[]){ 5, 4 });
		mb_input(body, "s", F32, 1, (const int64_t[]){ 4 });
		mb_input(body, "xt", F32, 1, (const int64_t[]){ 4 });
		mb_node(body, "Add", (const char *[]){ "s", "xt", NULL },
			(const char *[]){ "s1", NULL });
		mb_node(body, "Mul", (const char *[]){ "s1", "xt", NULL },
			(const char *[]){ "t", NULL });
		NODE1(body, "Relu", "xt", "r");
		NODE1(body, "Identity", "s1", "v");
		mb_output(body, "s1");
		mb_output(body, "t");
		mb_output(body, "r");
		mb_output(body, "v");
		n = mb_node(b, "Scan", (const char *[]){ "s0", "x", NULL },
			    (const char *[]){ "sn", "ts", "rs", "vs", NULL });
		mb_attr_graph(b, n, "body", body);
		mb_attr_int(n, "num_scan_inputs", 1);
		mb_attr_ints(n, "scan_output_directions", 3, (const int64_t[]){ 0, 1, 0 });
		mb_attr_ints(n, "scan_output_axes", 3, (const int64_t[]){ axis, axis, axis });
		mb_output(b, "sn");
		mb_output(b, "ts");
		mb_output(b, "rs");
		mb_output(b, "vs");
		in_place_case(_metadata, axis ? "scan stacked along axis 1" : "scan", mb_read(b),
			      axis ? 3 * 80 : 16, 3 * 80);
	}
}

/*
 * A Gather of one constant index whose output is one run of its data
 * (every dimension before the axis is 1) is a view at the run's offset:
 * of a value then computed in place in a Concat's output, of an input,
 * with a negative index in a one-element tensor. Along an axis after a
 * dimension above 1 it stays a layer.
 */
TEST(gather_view)
{
	struct mb *b = mb_new(13);
	float *out[8] = { 0 }, x[12];
	struct vnpu_program *p;
	vnpu_model *m;

	mb_input(b, "x", F32, 2, (const int64_t[]){ 3, 4 });
	mb_init_i64(b, "two", 0, NULL, (const int64_t[]){ 2 });
	mb_init_i64(b, "last", 1, (const int64_t[]){ 1 }, (const int64_t[]){ -1 });
	mb_init_i64(b, "one", 0, NULL, (const int64_t[]){ 1 });
	NODE1(b, "Relu", "x", "a");
	NODE1(b, "Neg", "x", "n");
	mb_node(b, "Gather", (const char *[]){ "a", "two", NULL }, (const char *[]){ "g0", NULL });
	mb_node(b, "Concat", (const char *[]){ "a", "n", NULL }, (const char *[]){ "c", NULL });
	mb_node(b, "Gather", (const char *[]){ "x", "last", NULL }, (const char *[]){ "g1", NULL });
	mb_attr_int(mb_node(b, "Gather", (const char *[]){ "x", "one", NULL },
			    (const char *[]){ "g2", NULL }), "axis", 1);
	NODE1(b, "Neg", "g0", "y0");
	NODE1(b, "Neg", "g1", "y1");
	NODE1(b, "Neg", "g2", "y2");
	mb_output(b, "c");
	mb_output(b, "y0");
	mb_output(b, "y1");
	mb_output(b, "y2");
	m = mb_read(b);
	EXPECT_NE(NULL, m);
	if (!m)
		return;
	p = compile_run(_metadata, m, NULL, out);
	if (p) {
		int bad = 0;

		EXPECT_EQ(6, p->num_layers);	/* Relu, Neg, the Gather along axis 1, 3 Negs */
		EXPECT_EQ(0, copy_bytes(p));
		fe_pattern(x, 12, 1);
		for (int i = 0; i < 12; i++)
			bad += out[0][i] != (x[i] > 0 ? x[i] : 0) || out[0][12 + i] != -x[i];
		for (int i = 0; i < 4; i++)
			bad += out[1][i] != -(x[8 + i] > 0 ? x[8 + i] : 0) || out[2][i] != -x[8 + i];
		for (int r = 0; r < 3; r++)
			bad += out[3][r] != -x[r * 4 + 1];
		EXPECT_EQ(0, bad);
	}
	for (int i = 0; i < 8; i++)
		free(out[i]);
	vnpu_program_free(p);
	vnpu_model_free(m);
}

/*
 * A Split's outputs are views of their runs of its input (every dimension
 * before the axis is 1), except a model output, which it copies; along
 * an axis after a dimension above 1 it copies them all.
 */
TEST(split_views)
{
	struct mb *b = mb_new(13);
	float *out[8] = { 0 }, x[12], x2[12];
	void *in[2] = { x, x2 };
	struct vnpu_program *p;
	vnpu_model *m;

	mb_input(b, "x", F32, 3, (const int64_t[]){ 1, 3, 4 });
	mb_input(b, "x2", F32, 2, (const int64_t[]){ 2, 6 });
	mb_init_i64(b, "sizes", 1, (const int64_t[]){ 2 }, (const int64_t[]){ 1, 2 });
	NODE1(b, "Relu", "x", "a");
	mb_attr_int(mb_node(b, "Split", (const char *[]){ "a", "sizes", NULL },
			    (const char *[]){ "s0", "s1", NULL }), "axis", 1);
	mb_attr_int(mb_node(b, "Split", (const char *[]){ "x2", NULL },
			    (const char *[]){ "t0", "t1", NULL }), "axis", -1);
	NODE1(b, "Neg", "s1", "y1");
	NODE1(b, "Neg", "t0", "z0");
	NODE1(b, "Neg", "t1", "z1");
	mb_output(b, "s0");
	mb_output(b, "y1");
	mb_output(b, "z0");
	mb_output(b, "z1");
	m = mb_read(b);
	EXPECT_NE(NULL, m);
	if (!m)
		return;
	fe_pattern(x, 12, 1);
	fe_pattern(x2, 12, 2);
	p = compile_run_on(_metadata, m, NULL, in, out);
	if (p) {
		int bad = 0;

		/* s0 [1, 1, 4] (copied: an output), y1 [1, 2, 4], z0 and z1 [2, 3] */
		EXPECT_EQ(16 + 48, copy_bytes(p));
		for (int i = 0; i < 4; i++)
			bad += out[0][i] != (x[i] > 0 ? x[i] : 0);
		for (int i = 0; i < 8; i++)
			bad += out[1][i] != -(x[4 + i] > 0 ? x[4 + i] : 0);
		for (int r = 0; r < 2; r++)
			for (int c = 0; c < 3; c++)
				bad += out[2][r * 3 + c] != -x2[r * 6 + c] ||
				       out[3][r * 3 + c] != -x2[r * 6 + 3 + c];
		EXPECT_EQ(0, bad);
	}
	for (int i = 0; i < 8; i++)
		free(out[i]);
	vnpu_program_free(p);
	vnpu_model_free(m);
}

/* Slice(@x, @starts, @ends, @axes[, @steps]) -> @y, constants of @n. */
static void slice_node(struct mb *b, const char *x, int n, const int64_t *starts,
		       const int64_t *ends, const int64_t *axes, const int64_t *steps,
		       const char *y)
{
	char names[4][16];
	const char *in[6] = { x, names[0], names[1], names[2], steps ? names[3] : NULL, NULL };
	const int64_t *vals[4] = { starts, ends, axes, steps };

	for (int k = 0; k < 4; k++) {
		snprintf(names[k], sizeof(names[k]), "%s_%d", y, k);
		if (vals[k])
			mb_init_i64(b, names[k], 1, (const int64_t[]){ n }, vals[k]);
	}
	mb_node(b, "Slice", in, (const char *[]){ y, NULL });
}

/*
 * A Slice of steps 1 whose output is one run of its data is a view at the
 * run's offset (rows of a computed value, part of one row of an input);
 * a Slice with a step of 2, or across a dimension above 1 before the one
 * it cuts, still copies.
 */
TEST(slice_view)
{
	struct mb *b = mb_new(13);
	float *out[8] = { 0 }, x[12], x2[12];
	void *in[2] = { x, x2 };
	struct vnpu_program *p;
	vnpu_model *m;

	mb_input(b, "x", F32, 3, (const int64_t[]){ 1, 3, 4 });
	mb_input(b, "x2", F32, 2, (const int64_t[]){ 2, 6 });
	NODE1(b, "Relu", "x", "a");
	slice_node(b, "a", 1, (const int64_t[]){ 1 }, (const int64_t[]){ 3 },
		   (const int64_t[]){ 1 }, NULL, "s1");
	slice_node(b, "x", 2, (const int64_t[]){ -2, 1 }, (const int64_t[]){ -1, 3 },
		   (const int64_t[]){ 1, 2 }, NULL, "s2");
	slice_node(b, "x2", 1, (const int64_t[]){ 1 }, (const int64_t[]){ 3 },
		   (const int64_t[]){ -1 }, NULL, "s3");
	slice_node(b, "x", 1, (const int64_t[]){ 0 }, (const int64_t[]){ 4 },
		   (const int64_t[]){ 2 }, (const int64_t[]){ 2 }, "s4");
	for (int k = 1; k <= 4; k++) {
		char sk[4], yk[4];

		snprintf(sk, sizeof(sk), "s%d", k);
		snprintf(yk, sizeof(yk), "y%d", k);
		NODE1(b, "Neg", sk, yk);
		mb_output(b, yk);
	}
	m = mb_read(b);
	EXPECT_NE(NULL, m);
	if (!m)
		return;
	fe_pattern(x, 12, 1);
	fe_pattern(x2, 12, 2);
	p = compile_run_on(_metadata, m, NULL, in, out);
	if (p) {
		int bad = 0;

		EXPECT_EQ(16 + 24, copy_bytes(p));	/* s3 [2, 2], s4 [1, 3, 2] */
		for (int i = 0; i < 8; i++)
			bad += out[0][i] != -(x[4 + i] > 0 ? x[4 + i] : 0);
		for (int i = 0; i < 2; i++)
			bad += out[1][i] != -x[4 + 1 + i];
		for (int r = 0; r < 2; r++)
			for (int c = 0; c < 2; c++)
				bad += out[2][r * 2 + c] != -x2[r * 6 + 1 + c];
		for (int i = 0; i < 6; i++)
			bad += out[3][i] != -x[i * 2];
		EXPECT_EQ(0, bad);
	}
	for (int i = 0; i < 8; i++)
		free(out[i]);
	vnpu_program_free(p);
	vnpu_model_free(m);
}

/* Shape -> Gather -> Concat -> Reshape folds away: only the reshape's copy
 * into the output remains. */
TEST(constant_folding)
{
	struct mb *b = mb_new(13);
	struct vnpu_program *p;
	float *out[8] = { 0 }, x[24];
	vnpu_model *m;

	mb_input(b, "x", F32, 3, (const int64_t[]){ 2, 3, 4 });
	mb_node(b, "Shape", (const char *[]){ "x", NULL }, (const char *[]){ "sh", NULL });
	mb_init_i64(b, "i", 1, (const int64_t[]){ 1 }, (const int64_t[]){ 0 });
	mb_node(b, "Gather", (const char *[]){ "sh", "i", NULL }, (const char *[]){ "n", NULL });
	mb_init_i64(b, "m1", 1, (const int64_t[]){ 1 }, (const int64_t[]){ -1 });
	mb_node(b, "Concat", (const char *[]){ "n", "m1", NULL }, (const char *[]){ "ns", NULL });
	mb_node(b, "Reshape", (const char *[]){ "x", "ns", NULL }, (const char *[]){ "y", NULL });
	mb_output(b, "y");
	m = mb_read(b);
	EXPECT_NE(NULL, m);
	if (!m)
		return;
	p = compile_run(_metadata, m, NULL, out);
	if (p) {
		EXPECT_EQ(1, p->num_layers);
		EXPECT_STREQ("Reshape", p->layers[0].type);
		EXPECT_EQ(2, p->outputs[0].shape.rank);
		EXPECT_EQ(12, p->outputs[0].shape.dims[1]);
		fe_pattern(x, 24, 1);
		EXPECT_EQ(0, memcmp(out[0], x, sizeof(x)));
	}
	free(out[0]);
	vnpu_program_free(p);
	vnpu_model_free(m);
}

/* Data movement lowered to strided copies, against index arithmetic. */
TEST(copies)
{
	struct mb *b = mb_new(13);
	Onnx__NodeProto *n;
	float *out[8] = { 0 }, x[2 * 8 * 2 * 3];
	struct vnpu_program *p;
	vnpu_model *m;

	mb_input(b, "x", F32, 4, (const int64_t[]){ 2, 8, 2, 3 });
	n = mb_node(b, "Transpose", (const char *[]){ "x", NULL }, (const char *[]){ "t", NULL });
	mb_attr_ints(n, "perm", 4, (const int64_t[]){ 3, 1, 0, 2 });
	mb_init_i64(b, "st", 1, (const int64_t[]){ 2 }, (const int64_t[]){ 1, -7 });
	mb_init_i64(b, "en", 1, (const int64_t[]){ 2 }, (const int64_t[]){ 100, 8 });
	mb_init_i64(b, "ax", 1, (const int64_t[]){ 2 }, (const int64_t[]){ 1, 0 });
	mb_init_i64(b, "sp", 1, (const int64_t[]){ 2 }, (const int64_t[]){ 3, 1 });
	mb_node(b, "Slice", (const char *[]){ "x", "st", "en", "ax", "sp", NULL },
		(const char *[]){ "s", NULL });
	n = mb_node(b, "Concat", (const char *[]){ "x", "x", NULL }, (const char *[]){ "c", NULL });
	mb_attr_int(n, "axis", 2);
	n = mb_node(b, "DepthToSpace", (const char *[]){ "x", NULL }, (const char *[]){ "d", NULL });
	mb_attr_int(n, "blocksize", 2);
	mb_init_i64(b, "rep", 1, (const int64_t[]){ 4 }, (const int64_t[]){ 1, 1, 2, 3 });
	mb_node(b, "Tile", (const char *[]){ "x", "rep", NULL }, (const char *[]){ "ti", NULL });
	mb_output(b, "t");
	mb_output(b, "s");
	mb_output(b, "c");
	mb_output(b, "d");
	mb_output(b, "ti");
	m = mb_read(b);
	EXPECT_NE(NULL, m);
	if (!m)
		return;
	p = compile_run(_metadata, m, NULL, out);
	fe_pattern(x, 96, 1);
#define X(a, b_, c, d) x[(((a) * 8 + (b_)) * 2 + (c)) * 3 + (d)]
	if (p) {
		int bad = 0;

		/* t[d][b][a][c] = x[a][b][c][d], dims 3x8x2x2 */
		for (int a = 0; a < 2; a++)
			for (int bb = 0; bb < 8; bb++)
				for (int c = 0; c < 2; c++)
					for (int d = 0; d < 3; d++)
						bad += out[0][((d * 8 + bb) * 2 + a) * 2 + c] != X(a, bb, c, d);
		/* s = x[-7 (clamped to 0):8, 1:100:3] -> 2x3x2x3 (b = 1, 4, 7) */
		for (int a = 0; a < 2; a++)
			for (int k = 0; k < 3; k++)
				for (int c = 0; c < 2; c++)
					for (int d = 0; d < 3; d++)
						bad += out[1][((a * 3 + k) * 2 + c) * 3 + d] !=
						       X(a, 1 + 3 * k, c, d);
		/* c = concat on axis 2: 2x8x4x3 */
		for (int a = 0; a < 2; a++)
			for (int bb = 0; bb < 8; bb++)
				for (int c = 0; c < 4; c++)
					for (int d = 0; d < 3; d++)
						bad += out[2][((a * 8 + bb) * 4 + c) * 3 + d] != X(a, bb, c % 2, d);
		/* d = DepthToSpace DCR b=2: 2x2x4x6, y[n][c][h*2+i][w*2+j] = x[n][(i*2+j)*2+c][h][w] */
		for (int a = 0; a < 2; a++)
			for (int c = 0; c < 2; c++)
				for (int h = 0; h < 4; h++)
					for (int w = 0; w < 6; w++)
						bad += out[3][((a * 2 + c) * 4 + h) * 6 + w] !=
						       X(a, ((h % 2) * 2 + w % 2) * 2 + c, h / 2, w / 2);
		/* ti = tile 1,1,2,3: 2x8x4x9 */
		for (int a = 0; a < 2; a++)
			for (int bb = 0; bb < 8; bb++)
				for (int c = 0; c < 4; c++)
					for (int d = 0; d < 9; d++)
						bad += out[4][((a * 8 + bb) * 4 + c) * 9 + d] != X(a, bb, c % 2, d % 3);
		EXPECT_EQ(0, bad);
		for (uint32_t l = 0; l < p->num_layers; l++) {
			EXPECT_GE(p->segments[0].num_cmds, p->num_layers);
		}
	}
#undef X
	for (int i = 0; i < 8; i++)
		free(out[i]);
	vnpu_program_free(p);
	vnpu_model_free(m);
}

TEST(wakeword_compile)
{
	static const char *const files[] = {
		"alexa_v0.1.onnx", "hey_jarvis_v0.1.onnx", "hey_mycroft_v0.1.onnx",
		"timer_v0.1.onnx", "embedding_model.onnx", "melspectrogram.onnx",
	};

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		const char *path = fe_wakeword_model(files[i]);
		vnpu_model *m;
		size_t ni;

		if (!path) {
			TH_LOG("skip %s: not installed", files[i]);
			continue;
		}
		if (vnpu_model_read_file(path, &m)) {
			EXPECT_TRUE(!"read");
			continue;
		}
		vnpu_model_get_inputs_size(m, &ni);
		for (size_t k = 0; k < ni; k++) {
			const char *name;
			vnpu_shape s;

			vnpu_model_input_name(m, k, &name);
			vnpu_model_input_shape(m, k, &s);
			for (uint32_t d = 0; d < s.rank; d++)
				if (s.dims[d] < 0)
					s.dims[d] = d ? 1280 : 1;
			EXPECT_EQ(VNPU_OK, vnpu_model_reshape(m, name, &s));
		}
		{
			struct vnpu_program *p = NULL;
			struct timespec t0, t1;

			clock_gettime(CLOCK_MONOTONIC, &t0);
			EXPECT_EQ(VNPU_OK, vnpu_compile(m, NULL, &p));
			clock_gettime(CLOCK_MONOTONIC, &t1);
			if (p) {
				TH_LOG("%s: compiled in %.1f ms: %u layers, weights %llu B, arena %llu B of %llu B intermediates",
				       files[i], (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
				       (double)(t1.tv_nsec - t0.tv_nsec) / 1e6, p->num_layers,
				       (unsigned long long)p->weights_size,
				       (unsigned long long)p->arena_size,
				       (unsigned long long)p->intermediates_size);
				EXPECT_LE(p->arena_size, p->intermediates_size);
			}
			vnpu_program_free(p);
		}
		check_fusion_equivalent(_metadata, m, 0);
		vnpu_model_free(m);
	}
}

TEST(dynamic_input_needs_reshape)
{
	struct mb *b = mb_new(13);
	struct vnpu_query_result *q = NULL;
	struct vnpu_program *p = NULL;
	vnpu_model *m;

	mb_input(b, "x", F32, 2, (const int64_t[]){ -1, 4 });
	mb_node(b, "Relu", (const char *[]){ "x", NULL }, (const char *[]){ "y", NULL });
	mb_output(b, "y");
	m = mb_read(b);
	EXPECT_NE(NULL, m);
	if (!m)
		return;
	EXPECT_EQ(VNPU_INVALID_ARGUMENT, vnpu_compile(m, NULL, &p));
	EXPECT_NE(NULL, strstr(vnpu_last_error(), "reshape"));
	EXPECT_EQ(NULL, p);
	/* A query answers anyway. */
	EXPECT_EQ(VNPU_OK, vnpu_query_model(m, NULL, &q));
	if (q)
		EXPECT_EQ(VNPU_QUERY_PRIMARY, q->nodes[0].place);
	vnpu_query_result_free(q);
	EXPECT_EQ(VNPU_INVALID_ARGUMENT, vnpu_compile(NULL, NULL, &p));
	vnpu_model_free(m);
}

/* Placement: ops the primary does not take go to the fallback, or fail. */
TEST(query_and_fallback)
{
	struct mb *b = mb_new(13);
	struct vnpu_compile_options o = { .primary_layer_ops = ~(1ull << VNPU_LAYER_GEMM) };
	struct vnpu_query_result *q = NULL;
	struct vnpu_program *p = NULL;
	vnpu_model *m;

	mb_input(b, "x", F32, 2, (const int64_t[]){ 2, 4 });
	mb_init_f32(b, "w", 2, (const int64_t[]){ 4, 4 }, NULL);
	mb_node(b, "Relu", (const char *[]){ "x", NULL }, (const char *[]){ "a", NULL });
	mb_node(b, "MatMul", (const char *[]){ "a", "w", NULL }, (const char *[]){ "mm", NULL });
	mb_node(b, "Neg", (const char *[]){ "mm", NULL }, (const char *[]){ "n", NULL });
	mb_node(b, "Exp", (const char *[]){ "n", NULL }, (const char *[]){ "y", NULL });
	mb_output(b, "y");
	m = mb_read(b);
	EXPECT_NE(NULL, m);
	if (!m)
		return;
	EXPECT_EQ(VNPU_UNSUPPORTED, vnpu_compile(m, &o, &p));
	EXPECT_NE(NULL, strstr(vnpu_last_error(), "MatMul"));
	o.allow_fallback = true;
	EXPECT_EQ(VNPU_OK, vnpu_compile(m, &o, &p));
	if (p) {
		EXPECT_EQ(3, p->num_segments);
		EXPECT_EQ(VNPU_TARGET_PRIMARY, p->segments[0].target);
		EXPECT_EQ(VNPU_TARGET_FALLBACK, p->segments[1].target);
		EXPECT_EQ(VNPU_TARGET_PRIMARY, p->segments[2].target);
		EXPECT_EQ(1, p->segments[2].num_layers);	/* Neg and Exp: one CHAIN */
	}
	vnpu_program_free(p);
	p = NULL;
	o.strict = true;
	EXPECT_EQ(VNPU_UNSUPPORTED, vnpu_compile(m, &o, &p));
	EXPECT_NE(NULL, strstr(vnpu_last_error(), "strict"));
	o.strict = false;
	EXPECT_EQ(VNPU_OK, vnpu_query_model(m, &o, &q));
	if (q) {
		EXPECT_EQ(4, q->num_nodes);
		EXPECT_EQ(VNPU_QUERY_PRIMARY, q->nodes[0].place);
		EXPECT_EQ(VNPU_QUERY_FALLBACK, q->nodes[1].place);
		EXPECT_NE('\0', q->nodes[1].reason[0]);
		EXPECT_EQ(VNPU_QUERY_PRIMARY, q->nodes[2].place);
	}
	vnpu_query_result_free(q);
	o.inference_precision = VNPU_TYPE_I8;
	EXPECT_EQ(VNPU_INVALID_ARGUMENT, vnpu_compile(m, &o, &p));
	o.inference_precision = VNPU_TYPE_F16;
	EXPECT_EQ(VNPU_OK, vnpu_compile(m, &o, &p));
	vnpu_program_free(p);
	vnpu_model_free(m);
}

/* One node @op of f32 or f64 x [3, 4] (a second input y for Max, Min, Mod). */
static vnpu_model *placement_model(const char *op, int type)
{
	static const char *const with_y[] = { "Max", "Min", "Mod" };
	struct mb *b = mb_new(13);
	const char *in[3] = { "x", NULL, NULL };
	Onnx__NodeProto *n;

	mb_input(b, "x", type, 2, (const int64_t[]){ 3, 4 });
	for (size_t i = 0; i < sizeof(with_y) / sizeof(with_y[0]); i++) {
		if (!strcmp(op, with_y[i])) {
			mb_input(b, "y", type, 2, (const int64_t[]){ 3, 4 });
			in[1] = "y";
		}
	}
	if (!strcmp(op, "CumSum")) {
		mb_init_i64(b, "axis", 0, NULL, (const int64_t[]){ 1 });
		in[1] = "axis";
	}
	n = mb_node(b, op, in, (const char *[]){ "out", NULL });
	if (!strcmp(op, "ReduceLogSumExp"))
		mb_attr_ints(n, "axes", 1, (const int64_t[]){ 1 });
	else if (!strcmp(op, "Einsum"))
		mb_attr_string(n, "equation", "ij->i");
	else if (!strcmp(op, "EyeLike"))
		mb_attr_int(n, "dtype", type);
	else if (!strcmp(op, "Mod"))
		mb_attr_int(n, "fmod", 1);
	mb_output(b, "out");
	return mb_read(b);
}

/*
 * The ops that left the NPU in ONNX's node suite (ReduceLogSumExp, CumSum,
 * Einsum, EyeLike, Max, Min, Mod) did so for their f64 tensors alone: in
 * f32 the device takes every segment, with the NPU's dtype mask (no f64).
 * (EyeLike folds to a constant; in f64 the copy to the output falls back.)
 */
TEST(f64_alone_falls_back)
{
	static const char *const ops[] = { "ReduceLogSumExp", "CumSum", "Einsum", "EyeLike",
					   "Max", "Min", "Mod" };
	struct vnpu_compile_options o = {
		.primary_dtypes = ~(UINT64_C(1) << VNPU_TYPE_F64), .allow_fallback = true,
	};

	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
		for (int f64 = 0; f64 < 2; f64++) {
			int type = f64 ? ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE : F32;
			vnpu_model *m = placement_model(ops[k], type);
			struct vnpu_program *p = NULL;
			uint32_t fallback = 0;

			EXPECT_NE(NULL, m);
			if (m)
				EXPECT_EQ(VNPU_OK, vnpu_compile(m, &o, &p));
			for (uint32_t i = 0; p && i < p->num_segments; i++)
				fallback += p->segments[i].target == VNPU_TARGET_FALLBACK;
			EXPECT_FALSE(p && (fallback != 0) != f64)
				TH_LOG("%s %s: %u of %u segments on the fallback", ops[k],
				       f64 ? "f64" : "f32", fallback, p->num_segments);
			vnpu_program_free(p);
			vnpu_model_free(m);
		}
	}
}

/* Einsum: a batched matmul with a transposed operand (the GEMM path), a
 * diagonal and a full sum, against loops. */
TEST(einsum)
{
	float a[2 * 3 * 4], b[2 * 5 * 4], sq[16], *out[8] = { 0 };
	struct mb *mbd = mb_new(13);
	struct vnpu_program *p;
	Onnx__NodeProto *n;
	vnpu_model *m;

	mb_input(mbd, "a", F32, 3, (const int64_t[]){ 2, 3, 4 });
	mb_input(mbd, "b", F32, 3, (const int64_t[]){ 2, 5, 4 });
	mb_input(mbd, "sq", F32, 2, (const int64_t[]){ 4, 4 });
	n = mb_node(mbd, "Einsum", (const char *[]){ "a", "b", NULL }, (const char *[]){ "y", NULL });
	mb_attr_string(n, "equation", "bij, bkj -> bik");
	n = mb_node(mbd, "Einsum", (const char *[]){ "sq", NULL }, (const char *[]){ "d", NULL });
	mb_attr_string(n, "equation", "ii->i");
	n = mb_node(mbd, "Einsum", (const char *[]){ "a", NULL }, (const char *[]){ "t", NULL });
	mb_attr_string(n, "equation", "...j->");
	mb_output(mbd, "y");
	mb_output(mbd, "d");
	mb_output(mbd, "t");
	m = mb_read(mbd);
	EXPECT_NE(NULL, m);
	if (!m)
		return;
	p = compile_run(_metadata, m, NULL, out);
	fe_pattern(a, 24, 1);
	fe_pattern(b, 40, 2);
	fe_pattern(sq, 16, 3);
	if (p) {
		float y[2 * 3 * 5], d[4], t = 0;

		for (int bb = 0; bb < 2; bb++)
			for (int i = 0; i < 3; i++)
				for (int k = 0; k < 5; k++) {
					float acc = 0;

					for (int j = 0; j < 4; j++)
						acc += a[(bb * 3 + i) * 4 + j] * b[(bb * 5 + k) * 4 + j];
					y[(bb * 3 + i) * 5 + k] = acc;
				}
		for (int i = 0; i < 4; i++)
			d[i] = sq[i * 5];
		for (int i = 0; i < 24; i++)
			t += a[i];
		EXPECT_LT(max_diff(out[0], y, 30), 1e-5f);
		EXPECT_LT(max_diff(out[1], d, 4), 1e-6f);
		EXPECT_LT(max_diff(out[2], &t, 1), 1e-5f);
	}
	for (int i = 0; i < 8; i++)
		free(out[i]);
	vnpu_program_free(p);
	vnpu_model_free(m);
}

/* Tile repeating all four axes: one strided view of eight dims. */
TEST(tile_all_axes)
{
	struct mb *b = mb_new(13);
	float *out[8] = { 0 }, x[2 * 3 * 2 * 2];
	struct vnpu_program *p;
	vnpu_model *m;

	mb_input(b, "x", F32, 4, (const int64_t[]){ 2, 3, 2, 2 });
	mb_init_i64(b, "rep", 1, (const int64_t[]){ 4 }, (const int64_t[]){ 3, 2, 2, 3 });
	mb_node(b, "Tile", (const char *[]){ "x", "rep", NULL }, (const char *[]){ "y", NULL });
	mb_output(b, "y");
	m = mb_read(b);
	EXPECT_NE(NULL, m);
	if (!m)
		return;
	p = compile_run(_metadata, m, NULL, out);
	fe_pattern(x, 24, 1);
	if (p) {
		int bad = 0;

		/* y [6, 6, 4, 6]: y[a][b][c][d] = x[a % 2][b % 3][c % 2][d % 2] */
		for (int a = 0; a < 6; a++)
			for (int bb = 0; bb < 6; bb++)
				for (int c = 0; c < 4; c++)
					for (int d = 0; d < 6; d++)
						bad += out[0][((a * 6 + bb) * 4 + c) * 6 + d] !=
						       x[(((a % 2) * 3 + bb % 3) * 2 + c % 2) * 2 + d % 2];
		EXPECT_EQ(0, bad);
	}
	free(out[0]);
	vnpu_program_free(p);
	vnpu_model_free(m);
}

/*
 * Cast into bf16 truncates (the upper half of the f32 bits), on the device
 * (from f32 and through f32 from f64) and when folded on the host.
 */
TEST(cast_bf16_truncates)
{
	static const uint32_t bits[6] = { 0x3f51b0e5, 0x3f80ffff, 0xbeffe000, 0x7fc00000,
					  0xff800000, 0x00000000 };
	float x[6], *out[8] = { 0 };
	void *in[1] = { x };
	struct mb *b = mb_new(13);
	Onnx__NodeProto *n;
	struct vnpu_program *p = NULL;
	vnpu_model *m;

	memcpy(x, bits, sizeof(x));
	mb_input(b, "x", F32, 1, (const int64_t[]){ 6 });
	mb_init_f32(b, "c", 1, (const int64_t[]){ 6 }, x);
	n = mb_node(b, "Cast", (const char *[]){ "x", NULL }, (const char *[]){ "y", NULL });
	mb_attr_int(n, "to", ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16);
	n = mb_node(b, "Cast", (const char *[]){ "c", NULL }, (const char *[]){ "z", NULL });
	mb_attr_int(n, "to", ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16);
	n = mb_node(b, "Cast", (const char *[]){ "x", NULL }, (const char *[]){ "d", NULL });
	mb_attr_int(n, "to", ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE);
	n = mb_node(b, "Cast", (const char *[]){ "d", NULL }, (const char *[]){ "w", NULL });
	mb_attr_int(n, "to", ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16);
	mb_output(b, "y");
	mb_output(b, "z");
	mb_output(b, "w");
	m = mb_read(b);
	EXPECT_NE(NULL, m);
	if (m && !vnpu_compile(m, NULL, &p)) {
		for (uint32_t i = 0; i < p->num_outputs; i++)
			out[i] = calloc(1, p->outputs[i].size + 4);
		EXPECT_EQ(3, p->num_outputs);
		EXPECT_EQ(0, fe_run_program(p, in, (void *const *)out));
		for (uint32_t o = 0; o < 3; o++)
			for (int i = 0; i < 6; i++) {
				EXPECT_EQ(bits[i] >> 16, ((uint16_t *)out[o])[i]);
			}
		for (uint32_t i = 0; i < p->num_outputs; i++)
			free(out[i]);
	} else {
		EXPECT_NE(NULL, p);
	}
	vnpu_program_free(p);
	vnpu_model_free(m);
}

/*
 * The seeded generator is MT19937 with numpy's 53-bit doubles: the 10000th
 * word from the default seed 5489 (the value C++'s std::mt19937 is checked
 * against), and the first draws of np.random.seed(0); np.random.rand().
 */
TEST(mt19937)
{
	struct cl_mt19937 g;
	uint32_t w = 0;

	cl_mt_seed(&g, 5489);
	for (int i = 0; i < 10000; i++)
		w = cl_mt_u32(&g);
	EXPECT_EQ(4123659995u, w);
	cl_mt_seed(&g, 0);
	EXPECT_EQ(0.5488135039273248, cl_mt_double(&g));
	EXPECT_EQ(0.7151893663724195, cl_mt_double(&g));
	EXPECT_EQ(0.6027633760716439, cl_mt_double(&g));
}

/* Dropout(x, ratio, training_mode) with seed @seed (-1: none), ratio @r. */
static vnpu_model *dropout_model(struct __test_metadata *_metadata, int64_t seed, float r)
{
	struct mb *b = mb_new(13);
	Onnx__NodeProto *n;
	vnpu_shape one = { 0 };
	uint8_t yes = 1;
	vnpu_model *m;

	mb_input(b, "x", F32, 1, (const int64_t[]){ 5 });
	mb_input(b, "t", ONNX__TENSOR_PROTO__DATA_TYPE__BOOL, 0, NULL);
	mb_init_f32(b, "r", 0, NULL, &r);
	n = mb_node(b, "Dropout", (const char *[]){ "x", "r", "t", NULL },
		    (const char *[]){ "y", "mask", NULL });
	if (seed >= 0)
		mb_attr_int(n, "seed", seed);
	mb_output(b, "y");
	mb_output(b, "mask");
	m = mb_read(b);
	EXPECT_NE(NULL, m);
	if (m)
		EXPECT_EQ(VNPU_OK, vnpu_model_freeze_input(m, "t", VNPU_TYPE_BOOL, &one, &yes, 1));
	return m;
}

/*
 * Training-mode Dropout with seed 0 and ratio 0.5 keeps the elements whose
 * draw (0.549, 0.715, 0.603, 0.545, 0.424) is >= 0.5, scaled by 2; without
 * a seed it is unsupported, and a ratio of 1 is refused.
 */
TEST(dropout_seeded)
{
	static const float x[5] = { 1.5f, -2, 3, -4, -5 };
	static const float want[5] = { 3, -4, 6, -8, -0.0f };
	void *in[1] = { (void *)x }, *out[2] = { 0 };
	struct vnpu_program *p = NULL;
	vnpu_model *m = dropout_model(_metadata, 0, 0.5f);

	if (m && !vnpu_compile(m, NULL, &p)) {
		out[0] = calloc(1, p->outputs[0].size + 4);
		out[1] = calloc(1, p->outputs[1].size + 4);
		EXPECT_EQ(0, fe_run_program(p, in, out));
		for (int i = 0; i < 5; i++) {
			EXPECT_EQ(0, memcmp(&((float *)out[0])[i], &want[i], 4));
			EXPECT_EQ(i < 4, ((uint8_t *)out[1])[i]);
		}
		free(out[0]);
		free(out[1]);
	} else {
		EXPECT_NE(NULL, p);
	}
	vnpu_program_free(p);
	vnpu_model_free(m);

	p = NULL;
	m = dropout_model(_metadata, -1, 0.5f);
	EXPECT_EQ(VNPU_UNSUPPORTED, vnpu_compile(m, NULL, &p));
	EXPECT_NE(NULL, strstr(vnpu_last_error(), "no seed"));
	vnpu_model_free(m);
	m = dropout_model(_metadata, 7, 1.0f);
	EXPECT_EQ(VNPU_INVALID_ARGUMENT, vnpu_compile(m, NULL, &p));
	EXPECT_EQ(NULL, p);
	vnpu_model_free(m);
}

/*
 * Adagrad and Adam without an epsilon attribute use the operators' default,
 * 1e-6: a zero gradient over zero accumulators leaves X as it is (0 / eps)
 * where an epsilon of 0 would give NaN.
 */
TEST(optimizer_default_epsilon)
{
	static const char *const ops[2] = { "Adagrad", "Adam" };
	static const float zero[1] = { 0 }, one[1] = { 1 };

	for (int k = 0; k < 2; k++) {
		bool adam = k == 1;
		struct mb *b = mb_new(13);
		struct vnpu_program *p = NULL;
		float r = 0.1f, *out[8] = { 0 };
		void *in[2] = { (void *)one, (void *)zero };
		Onnx__NodeProto *n;
		vnpu_model *m;

		mb_input(b, "X", F32, 1, (const int64_t[]){ 1 });
		mb_input(b, "G", F32, 1, (const int64_t[]){ 1 });
		mb_init_f32(b, "R", 0, NULL, &r);
		mb_init_i64(b, "T", 0, NULL, (const int64_t[]){ 0 });
		mb_init_f32(b, "H", 1, (const int64_t[]){ 1 }, zero);
		n = mb_node(b, ops[k], adam ? (const char *[]){ "R", "T", "X", "G", "H", "H", NULL } :
					      (const char *[]){ "R", "T", "X", "G", "H", NULL },
			    adam ? (const char *[]){ "Y", "V2", "H2", NULL } :
				   (const char *[]){ "Y", "H2", NULL });
		mb_node_domain(b, n, "ai.onnx.preview.training");
		mb_output(b, "Y");
		m = mb_read(b);
		EXPECT_NE(NULL, m);
		if (m && !vnpu_compile(m, NULL, &p)) {
			out[0] = calloc(1, p->outputs[0].size + 4);
			EXPECT_EQ(0, fe_run_program(p, in, (void *const *)out));
			EXPECT_EQ(1.0f, out[0][0]);
			free(out[0]);
		} else {
			EXPECT_NE(NULL, p);
		}
		vnpu_program_free(p);
		vnpu_model_free(m);
	}
}

/* The ONNX Adam update of one element, in double: X', V', H'. */
static void adam_ref(double r, int64_t t, const double *attr, double x, double g, double v,
		     double h, double out[3])
{
	double norm = attr[0], alpha = attr[1], beta = attr[2], eps = attr[3], post = attr[4];
	double greg = norm * x + g, step = r;

	out[1] = alpha * v + (1 - alpha) * greg;
	out[2] = beta * h + (1 - beta) * greg * greg;
	if (t > 0)
		step = r * sqrt(1 - pow(beta, (double)t)) / (1 - pow(alpha, (double)t));
	out[0] = (1 - post) * (x - step * out[1] / (sqrt(out[2]) + eps));
}

/*
 * Adam over two tensors at once (ONNX's test_adam_multiple: X1 [1], X2
 * [2]), each updated alone: norm_coefficient, epsilon added to sqrt(H'),
 * bias correction once T > 0, norm_coefficient_post. With its epsilon of
 * 0.01, X1' is the 0.759136 of ONNX's reference data (Debian's copy of
 * that model lacks the attribute, so 1e-6 applies there: onnx/onnx#7749).
 */
TEST(adam_multiple_tensors)
{
	static const float x[3] = { 1, 1, 2 }, g[3] = { -1, -1, -3 }, v[3] = { 2, 4, 1 },
			   h[3] = { 0.5f, 1, 10 };
	/* norm_coefficient, alpha, beta, epsilon, norm_coefficient_post; T */
	static const double cases[3][6] = {
		{ 0.001, 0.95, 0.85, 0.01, 0, 0 },
		{ 0.001, 0.95, 0.85, 0.01, 0.1, 3 },
		{ 0.001, 0.95, 0.85, -1, 0, 0 },	/* no epsilon: 1e-6 */
	};

	for (int k = 0; k < 3; k++) {
		const double *c = cases[k];
		struct mb *b = mb_new(13);
		struct vnpu_program *p = NULL;
		float r = 0.1f, *out[8] = { 0 };
		void *in[8] = { (void *)x, (void *)&x[1], (void *)g, (void *)&g[1], (void *)v,
				(void *)&v[1], (void *)h, (void *)&h[1] };
		static const char *const names[8] = { "X1", "X2", "G1", "G2", "V1", "V2", "H1", "H2" };
		Onnx__NodeProto *n;
		vnpu_model *m;

		for (int i = 0; i < 8; i++)
			mb_input(b, names[i], F32, 1, (const int64_t[]){ i % 2 + 1 });
		mb_init_f32(b, "R", 0, NULL, &r);
		mb_init_i64(b, "T", 0, NULL, (const int64_t[]){ (int64_t)c[5] });
		n = mb_node(b, "Adam", (const char *[]){ "R", "T", "X1", "X2", "G1", "G2", "V1", "V2",
							"H1", "H2", NULL },
			    (const char *[]){ "X1n", "X2n", "V1n", "V2n", "H1n", "H2n", NULL });
		mb_node_domain(b, n, "ai.onnx.preview.training");
		mb_attr_float(n, "norm_coefficient", (float)c[0]);
		mb_attr_float(n, "alpha", (float)c[1]);
		mb_attr_float(n, "beta", (float)c[2]);
		if (c[3] >= 0)
			mb_attr_float(n, "epsilon", (float)c[3]);
		if (c[4] != 0)
			mb_attr_float(n, "norm_coefficient_post", (float)c[4]);
		for (int o = 0; o < 6; o++)
			mb_output(b, (const char *[]){ "X1n", "X2n", "V1n", "V2n", "H1n", "H2n" }[o]);
		m = mb_read(b);
		EXPECT_NE(NULL, m);
		p = m ? compile_run_on(_metadata, m, NULL, in, out) : NULL;
		if (p) {
			double attr[5] = { (float)c[0], (float)c[1], (float)c[2],
					   c[3] >= 0 ? (float)c[3] : 1e-6f, (float)c[4] };

			EXPECT_EQ(6, p->num_outputs);
			for (int e = 0; e < 3; e++) {
				int t = e ? 1 : 0, i = e ? e - 1 : 0;	/* tensor, index */
				double want[3];

				adam_ref(0.1f, (int64_t)c[5], attr, x[e], g[e], v[e], h[e], want);
				for (int o = 0; o < 3; o++) {
					float got = out[2 * o + t][i];

					EXPECT_LE(fabs(got - want[o]), 1e-6 * (1 + fabs(want[o])));
				}
			}
			if (k == 0)
				EXPECT_LT(fabsf(out[0][0] - 0.75913626f), 1e-6f);
			if (k == 2)
				EXPECT_LT(fabsf(out[0][0] - 0.755959332f), 1e-6f);
			for (uint32_t i = 0; i < p->num_outputs; i++)
				free(out[i]);
		}
		vnpu_program_free(p);
		vnpu_model_free(m);
	}
}

/* Reference of one tf_crop_and_resize sample position. */
static double crop_ref_pos(double start, double end, int in, int out, int j)
{
	return out > 1 ? start * (in - 1) + j * (end - start) * (in - 1) / (out - 1) :
			 0.5 * (start + end) * (in - 1);
}

/*
 * Resize with tf_crop_and_resize, linear and nearest: X [1, 1, 4, 5] to
 * [1, 1, 3, 4] through a roi that reaches past the last row (those outputs
 * are extrapolation_value), against a direct evaluation of each output.
 */
TEST(resize_crop)
{
	static const float roi[8] = { 0, 0, 0.4f, 0.1f, 1, 1, 1.2f, 0.95f };
	static const char *const modes[2] = { "linear", "nearest" };

	for (int k = 0; k < 2; k++) {
		struct mb *b = mb_new(13);
		struct vnpu_program *p = NULL;
		float x[20], *out[8] = { 0 };
		void *in[1] = { x };
		Onnx__NodeProto *n;
		vnpu_model *m;

		for (int i = 0; i < 20; i++)
			x[i] = (float)(i * i % 7) + 0.25f * (float)i;
		mb_input(b, "x", F32, 4, (const int64_t[]){ 1, 1, 4, 5 });
		mb_init_f32(b, "roi", 1, (const int64_t[]){ 8 }, roi);
		mb_init_i64(b, "sizes", 1, (const int64_t[]){ 4 }, (const int64_t[]){ 1, 1, 3, 4 });
		n = mb_node(b, "Resize", (const char *[]){ "x", "roi", "", "sizes", NULL },
			    (const char *[]){ "y", NULL });
		mb_attr_string(n, "mode", modes[k]);
		mb_attr_string(n, "coordinate_transformation_mode", "tf_crop_and_resize");
		mb_attr_float(n, "extrapolation_value", 10.5f);
		mb_output(b, "y");
		m = mb_read(b);
		EXPECT_NE(NULL, m);
		if (m && !vnpu_compile(m, NULL, &p)) {
			out[0] = calloc(1, p->outputs[0].size + 4);
			EXPECT_EQ(0, fe_run_program(p, in, (void *const *)out));
			for (int i = 0; i < 3; i++)
				for (int j = 0; j < 4; j++) {
					double ph = crop_ref_pos(roi[2], roi[6], 4, 3, i);
					double pw = crop_ref_pos(roi[3], roi[7], 5, 4, j), want;
					int h0 = (int)floor(ph), w0 = (int)floor(pw);
					int h1 = h0 < 3 ? h0 + 1 : 3, w1 = w0 < 4 ? w0 + 1 : 4;
					double fh = ph - h0, fw = pw - w0;

					if (ph < 0 || ph > 3 || pw < 0 || pw > 4)
						want = 10.5;
					else if (k == 0)
						want = (1 - fh) * ((1 - fw) * x[h0 * 5 + w0] + fw * x[h0 * 5 + w1]) +
						       fh * ((1 - fw) * x[h1 * 5 + w0] + fw * x[h1 * 5 + w1]);
					else
						want = x[(fh > 0.5 ? h1 : h0) * 5 + (fw > 0.5 ? w1 : w0)];
					EXPECT_LT(fabs(out[0][i * 4 + j] - want),
						  1e-5 * (1 + fabs(want)));
				}
			EXPECT_EQ(10.5f, out[0][8]);
			free(out[0]);
		} else {
			EXPECT_NE(NULL, p);
		}
		vnpu_program_free(p);
		vnpu_model_free(m);
	}
}

/*
 * A 3-D @op (Conv or ConvTranspose) of X @xd, W @wd and a bias of @m,
 * two groups, with constant weights and with weights given at run time:
 * its @n outputs within @tol of @want.
 */
static void run_conv_3d(struct __test_metadata *_metadata, const char *op, const int64_t xd[5],
			const int64_t wd[5], int64_t m,
			const int64_t st[3], const int64_t dl[3], const int64_t pads[6],
			float *x, float *w, const float *b, const float *want, size_t n, float tol)
{
	for (int wconst = 0; wconst < 2; wconst++) {
		struct mb *bld = mb_new(13);
		struct vnpu_program *p = NULL;
		float *out[8] = { 0 };
		void *in[2] = { x, w };
		Onnx__NodeProto *nd;
		vnpu_model *model;

		mb_input(bld, "x", F32, 5, xd);
		if (wconst)
			mb_init_f32(bld, "w", 5, wd, w);
		else
			mb_input(bld, "w", F32, 5, wd);
		mb_init_f32(bld, "b", 1, &m, b);
		nd = mb_node(bld, op, (const char *[]){ "x", "w", "b", NULL },
			     (const char *[]){ "y", NULL });
		mb_attr_int(nd, "group", 2);
		mb_attr_ints(nd, "strides", 3, st);
		mb_attr_ints(nd, "dilations", 3, dl);
		mb_attr_ints(nd, "pads", 6, pads);
		mb_output(bld, "y");
		model = mb_read(bld);
		EXPECT_NE(NULL, model);
		if (model && !vnpu_compile(model, NULL, &p)) {
			EXPECT_EQ(n * 4, p->outputs[0].size);
			out[0] = calloc(1, p->outputs[0].size + 4);
			EXPECT_EQ(0, fe_run_program(p, in, (void *const *)out));
			EXPECT_TRUE(p->outputs[0].size != n * 4 || max_diff(out[0], want, n) < tol);
			free(out[0]);
		} else {
			EXPECT_NE(NULL, p);
		}
		vnpu_program_free(p);
		vnpu_model_free(model);
	}
}

/*
 * 3-D ConvTranspose (strides, dilations, pads, two groups, bias, a batch
 * of 2), with constant weights and with weights given at run time, against
 * the definition: every input element spreads x * w over the outputs its
 * kernel reaches.
 */
TEST(conv_transpose_3d)
{
	enum { N = 2, C = 2, D = 2, H = 3, W = 2, MG = 2, KD = 2, KH = 2, KW = 3, M = 4 };
	enum { OD = 3, OH = 4, OW = 4 };
	static const int64_t st[3] = { 2, 1, 2 }, dl[3] = { 1, 2, 1 }, pb[3] = { 1, 0, 0 };
	float x[N * C * D * H * W], w[C * MG * KD * KH * KW], b[M], want[N * M * OD * OH * OW];

	fe_pattern(x, sizeof(x) / 4, 3);
	fe_pattern(w, sizeof(w) / 4, 4);
	fe_pattern(b, M, 5);
	for (int i = 0; i < N * M * OD * OH * OW; i++)
		want[i] = b[i / (OD * OH * OW) % M];
	for (int n = 0; n < N; n++)
	for (int c = 0; c < C; c++)
	for (int i0 = 0; i0 < D; i0++)
	for (int i1 = 0; i1 < H; i1++)
	for (int i2 = 0; i2 < W; i2++)
	for (int mm = 0; mm < MG; mm++)
	for (int k0 = 0; k0 < KD; k0++)
	for (int k1 = 0; k1 < KH; k1++)
	for (int k2 = 0; k2 < KW; k2++) {
		int64_t o0 = i0 * st[0] + k0 * dl[0] - pb[0], o1 = i1 * st[1] + k1 * dl[1] - pb[1];
		int64_t o2 = i2 * st[2] + k2 * dl[2] - pb[2];
		int m = c / (C / 2) * MG + mm;

		if (o0 < 0 || o0 >= OD || o1 < 0 || o1 >= OH || o2 < 0 || o2 >= OW)
			continue;
		want[(((n * M + m) * OD + o0) * OH + o1) * OW + o2] +=
			x[(((n * C + c) * D + i0) * H + i1) * W + i2] *
			w[(((c * MG + mm) * KD + k0) * KH + k1) * KW + k2];
	}
	run_conv_3d(_metadata, "ConvTranspose", (const int64_t[]){ N, C, D, H, W },
		    (const int64_t[]){ C, MG, KD, KH, KW }, M, st, dl,
		    (const int64_t[]){ 1, 0, 0, 0, 1, 1 }, x, w, b, want,
		    sizeof(want) / 4, 1e-5f);
}

/*
 * 3-D Conv (strides, dilations, pads in depth so that both interior and
 * border depths are built, two groups, bias, a batch of 2), with constant
 * weights and with weights given at run time, against the definition.
 * Under frontend-compile-cs-move, an add moving the value table under a
 * pointer kept into it (as interior_depth() once did) fails here.
 */
TEST(conv_3d)
{
	enum { N = 2, C = 4, D = 5, H = 4, W = 3, M = 4, CG = 2, KD = 3, KH = 2, KW = 2 };
	enum { OD = 4, OH = 3, OW = 3 };
	static const int64_t st[3] = { 1, 1, 1 }, dl[3] = { 2, 1, 1 }, pb[3] = { 2, 0, 1 };
	float x[N * C * D * H * W], w[M * CG * KD * KH * KW], b[M], want[N * M * OD * OH * OW];

	fe_pattern(x, sizeof(x) / 4, 6);
	fe_pattern(w, sizeof(w) / 4, 7);
	fe_pattern(b, M, 8);
	for (int n = 0; n < N; n++)
	for (int m = 0; m < M; m++)
	for (int o0 = 0; o0 < OD; o0++)
	for (int o1 = 0; o1 < OH; o1++)
	for (int o2 = 0; o2 < OW; o2++) {
		double sum = b[m];

		for (int c = 0; c < CG; c++)
		for (int k0 = 0; k0 < KD; k0++)
		for (int k1 = 0; k1 < KH; k1++)
		for (int k2 = 0; k2 < KW; k2++) {
			int64_t i0 = o0 * st[0] + k0 * dl[0] - pb[0], i1 = o1 * st[1] + k1 * dl[1] - pb[1];
			int64_t i2 = o2 * st[2] + k2 * dl[2] - pb[2];
			int ci = m / (M / 2) * CG + c;

			if (i0 < 0 || i0 >= D || i1 < 0 || i1 >= H || i2 < 0 || i2 >= W)
				continue;
			sum += x[(((n * C + ci) * D + i0) * H + i1) * W + i2] *
			       w[(((m * CG + c) * KD + k0) * KH + k1) * KW + k2];
		}
		want[(((n * M + m) * OD + o0) * OH + o1) * OW + o2] = (float)sum;
	}
	run_conv_3d(_metadata, "Conv", (const int64_t[]){ N, C, D, H, W },
		    (const int64_t[]){ M, CG, KD, KH, KW }, M, st, dl,
		    (const int64_t[]){ 2, 0, 1, 1, 0, 0 }, x, w, b, want,
		    sizeof(want) / 4, 1e-4f);
}

/* Commands of @opcode in @p. */
static uint32_t count_cmds(const struct vnpu_program *p, uint32_t opcode)
{
	uint32_t n = 0;

	for (uint32_t g = 0; g < p->num_segments; g++) {
		const uint8_t *c = p->segments[g].cmd, *end = c + p->segments[g].cmd_size;
		struct vnpu_cmd_header h;

		for (; c + sizeof(h) <= end; c += h.size) {
			memcpy(&h, c, sizeof(h));
			if (h.size < sizeof(h))
				break;
			n += h.opcode == opcode;
		}
	}
	return n;
}

struct deconv2d_case {
	int n, c, m, group, h, w, kh, kw, sh, sw, pt, pl, pb, pr, oph, opw;
	int bias;		/* 0 none, 1 constant, 2 an input */
	uint32_t convs;		/* CONV layers of the phased lowering, 0: zero-inserted */
};

/*
 * One 2-D ConvTranspose with constant weights against the definition: the
 * strided ones without dilation run as convolutions of their output
 * phases (one when the phases share a geometry), with no zero-filled
 * input (no FILL command).
 */
static void conv_transpose_2d_case(struct __test_metadata *_metadata,
				   const struct deconv2d_case *dc)
{
	int oh = (dc->h - 1) * dc->sh + dc->kh - dc->pt - dc->pb + dc->oph;
	int ow = (dc->w - 1) * dc->sw + dc->kw - dc->pl - dc->pr + dc->opw;
	int mg = dc->m / dc->group, cg = dc->c / dc->group;
	size_t nx = (size_t)dc->n * dc->c * dc->h * dc->w, nw = (size_t)dc->c * mg * dc->kh * dc->kw;
	size_t ny = (size_t)dc->n * dc->m * oh * ow;
	float *x = malloc(nx * 4), *w = malloc(nw * 4), *b = malloc((size_t)dc->m * 4);
	float *want = malloc(ny * 4), *out[8] = { 0 };
	struct vnpu_program *p = NULL;
	void *in[2] = { x, b };
	struct mb *bld = mb_new(13);
	Onnx__NodeProto *nd;
	vnpu_model *m;

	fe_pattern(x, nx, 3);
	fe_pattern(w, nw, 4);
	fe_pattern(b, (size_t)dc->m, 5);
	for (size_t i = 0; i < ny; i++)
		want[i] = dc->bias ? b[i / ((size_t)oh * ow) % dc->m] : 0;
	for (int n = 0; n < dc->n; n++)
	for (int c = 0; c < dc->c; c++)
	for (int i = 0; i < dc->h; i++)
	for (int j = 0; j < dc->w; j++)
	for (int mm = 0; mm < mg; mm++)
	for (int a = 0; a < dc->kh; a++)
	for (int e = 0; e < dc->kw; e++) {
		int o0 = i * dc->sh + a - dc->pt, o1 = j * dc->sw + e - dc->pl;
		int mo = c / cg * mg + mm;

		if (o0 < 0 || o0 >= oh || o1 < 0 || o1 >= ow)
			continue;
		want[(((size_t)n * dc->m + mo) * oh + o0) * ow + o1] +=
			x[(((size_t)n * dc->c + c) * dc->h + i) * dc->w + j] *
			w[(((size_t)c * mg + mm) * dc->kh + a) * dc->kw + e];
	}
	mb_input(bld, "x", F32, 4, (const int64_t[]){ dc->n, dc->c, dc->h, dc->w });
	mb_init_f32(bld, "w", 4, (const int64_t[]){ dc->c, mg, dc->kh, dc->kw }, w);
	if (dc->bias == 1)
		mb_init_f32(bld, "b", 1, (const int64_t[]){ dc->m }, b);
	else if (dc->bias == 2)
		mb_input(bld, "b", F32, 1, (const int64_t[]){ dc->m });
	nd = mb_node(bld, "ConvTranspose", (const char *[]){ "x", "w", dc->bias ? "b" : NULL, NULL },
		     (const char *[]){ "y", NULL });
	mb_attr_int(nd, "group", dc->group);
	mb_attr_ints(nd, "strides", 2, (const int64_t[]){ dc->sh, dc->sw });
	mb_attr_ints(nd, "pads", 4, (const int64_t[]){ dc->pt, dc->pl, dc->pb, dc->pr });
	mb_attr_ints(nd, "output_padding", 2, (const int64_t[]){ dc->oph, dc->opw });
	mb_output(bld, "y");
	m = mb_read(bld);
	EXPECT_NE(NULL, m);
	if (m && !vnpu_compile(m, NULL, &p)) {
		EXPECT_EQ(ny * 4, p->outputs[0].size);
		EXPECT_EQ(dc->convs ? 0u : 1u, count_cmds(p, VNPU_CMD_FILL));
		out[0] = calloc(1, p->outputs[0].size + 4);
		EXPECT_EQ(0, fe_run_program(p, in, (void *const *)out));
		EXPECT_TRUE(p->outputs[0].size != ny * 4 || max_diff(out[0], want, ny) < 1e-5f);
		free(out[0]);
	} else {
		EXPECT_NE(NULL, p);
	}
	vnpu_program_free(p);
	vnpu_model_free(m);
	free(x);
	free(w);
	free(b);
	free(want);
}

TEST(conv_transpose_2d)
{
	static const struct deconv2d_case cases[] = {
		/* DBNet's heads: 2x2 stride 2 is a 1x1 convolution of 4 * M channels. */
		{ 1, 3, 5, 1, 4, 5, 2, 2, 2, 2, 0, 0, 0, 0, 0, 0, 1, 1 },
		{ 2, 4, 1, 1, 3, 7, 2, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 1 },
		/* 4x4 stride 2 pad 1: four phases of 2x2 taps, padded apart. */
		{ 1, 3, 4, 1, 5, 4, 4, 4, 2, 2, 1, 1, 1, 1, 0, 0, 1, 4 },
		/* Phases of their own: 3x3 stride 2 (taps 2 and 1), output padding. */
		{ 1, 2, 3, 1, 4, 3, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 4 },
		{ 2, 4, 6, 2, 3, 5, 3, 5, 2, 3, 0, 2, 1, 0, 0, 1, 2, 6 },
		/* A bias given at run time: each phase its own convolution. */
		{ 1, 3, 2, 1, 3, 3, 2, 2, 2, 2, 0, 0, 0, 0, 0, 0, 2, 4 },
		/* Stride 3 kernel 5, groups; rows phases alone. */
		{ 1, 4, 4, 2, 3, 4, 5, 1, 3, 1, 2, 0, 1, 0, 0, 0, 1, 3 },
		/* Kernel 1 stride 2: a phase without taps, zero-inserted. */
		{ 1, 2, 3, 1, 3, 3, 1, 1, 2, 2, 0, 0, 0, 0, 0, 0, 1, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		conv_transpose_2d_case(_metadata, &cases[i]);
}

/* Tile of a rank-5 tensor on every axis: one view would need 10 dims, so
 * the repeats go in steps through temporaries. */
TEST(tile_in_steps)
{
	static const int64_t xd[5] = { 2, 1, 2, 1, 2 }, rep[5] = { 2, 3, 2, 3, 2 };
	struct mb *b = mb_new(13);
	float *out[8] = { 0 }, x[8];
	struct vnpu_program *p;
	vnpu_model *m;

	mb_input(b, "x", F32, 5, xd);
	mb_init_i64(b, "rep", 1, (const int64_t[]){ 5 }, rep);
	mb_node(b, "Tile", (const char *[]){ "x", "rep", NULL }, (const char *[]){ "y", NULL });
	mb_output(b, "y");
	m = mb_read(b);
	EXPECT_NE(NULL, m);
	if (!m)
		return;
	p = compile_run(_metadata, m, NULL, out);
	fe_pattern(x, 8, 1);
	if (p) {
		int bad = 0, e = 0;

		/* y [4, 3, 4, 3, 4]: y[a][b][c][d][f] = x[a % 2][0][c % 2][0][f % 2] */
		for (int a = 0; a < 4; a++)
			for (int bb = 0; bb < 3; bb++)
				for (int c = 0; c < 4; c++)
					for (int d = 0; d < 3; d++)
						for (int f = 0; f < 4; f++)
							bad += out[0][e++] != x[(a % 2) * 4 + (c % 2) * 2 + f % 2];
		EXPECT_EQ(0, bad);
	}
	free(out[0]);
	vnpu_program_free(p);
	vnpu_model_free(m);
}

/* Rank 8 through the compiler: a reversing Transpose, then an Add that
 * broadcasts a constant over five of the eight axes. */
TEST(rank8_transpose_add)
{
	static const int64_t xd[8] = { 1, 2, 1, 2, 1, 2, 1, 3 }, cd[8] = { 3, 1, 2, 1, 1, 1, 1, 1 };
	struct mb *b = mb_new(13);
	float *out[8] = { 0 }, x[24], c[6];
	struct vnpu_program *p;
	Onnx__NodeProto *n;
	vnpu_model *m;

	fe_pattern(c, 6, 9);
	mb_input(b, "x", F32, 8, xd);
	mb_init_f32(b, "c", 8, cd, c);
	n = mb_node(b, "Transpose", (const char *[]){ "x", NULL }, (const char *[]){ "t", NULL });
	mb_attr_ints(n, "perm", 8, (const int64_t[]){ 7, 6, 5, 4, 3, 2, 1, 0 });
	mb_node(b, "Add", (const char *[]){ "t", "c", NULL }, (const char *[]){ "y", NULL });
	mb_output(b, "y");
	m = mb_read(b);
	EXPECT_NE(NULL, m);
	if (!m)
		return;
	p = compile_run(_metadata, m, NULL, out);
	fe_pattern(x, 24, 1);
	if (p) {
		int bad = 0;

		/* y [3, 1, 2, 1, 2, 1, 2, 1]; only axes 0, 2, 4, 6 exceed 1:
		 * y[i][0][j][0][k][0][l][0] = x[0][l][0][k][0][j][0][i] + c[i][0][j] */
		for (int i = 0; i < 3; i++)
			for (int j = 0; j < 2; j++)
				for (int k = 0; k < 2; k++)
					for (int l = 0; l < 2; l++)
						bad += out[0][((i * 2 + j) * 2 + k) * 2 + l] !=
						       x[((l * 2 + k) * 2 + j) * 3 + i] + c[i * 2 + j];
		EXPECT_EQ(0, bad);
	}
	free(out[0]);
	vnpu_program_free(p);
	vnpu_model_free(m);
}

/* MaxUnpool: X scattered by flat indices into zeros, with and without a
 * larger output_shape. */
TEST(max_unpool)
{
	struct mb *b = mb_new(11);
	float *out[8] = { 0 }, x[4];
	struct vnpu_program *p;
	Onnx__NodeProto *n;
	vnpu_model *m;

	mb_input(b, "x", F32, 4, (const int64_t[]){ 1, 1, 2, 2 });
	mb_init_i64(b, "i", 4, (const int64_t[]){ 1, 1, 2, 2 }, (const int64_t[]){ 0, 3, 9, 14 });
	mb_init_i64(b, "sh", 1, (const int64_t[]){ 4 }, (const int64_t[]){ 1, 1, 5, 6 });
	n = mb_node(b, "MaxUnpool", (const char *[]){ "x", "i", NULL }, (const char *[]){ "y", NULL });
	mb_attr_ints(n, "kernel_shape", 2, (const int64_t[]){ 2, 2 });
	mb_attr_ints(n, "strides", 2, (const int64_t[]){ 2, 2 });
	n = mb_node(b, "MaxUnpool", (const char *[]){ "x", "i", "sh", NULL },
		    (const char *[]){ "y2", NULL });
	mb_attr_ints(n, "kernel_shape", 2, (const int64_t[]){ 2, 2 });
	mb_attr_ints(n, "strides", 2, (const int64_t[]){ 2, 2 });
	mb_output(b, "y");
	mb_output(b, "y2");
	m = mb_read(b);
	EXPECT_NE(NULL, m);
	if (!m)
		return;
	p = compile_run(_metadata, m, NULL, out);
	fe_pattern(x, 4, 1);
	if (p) {
		static const int at[4] = { 0, 3, 9, 14 };
		int bad = 0;

		for (int e = 0; e < 16; e++) {
			float want = 0;

			for (int k = 0; k < 4; k++)
				if (at[k] == e)
					want = x[k];
			bad += out[0][e] != want;
			/* y2 [5, 6]: the 4x4 result in its corner */
			bad += out[1][(e / 4) * 6 + e % 4] != want;
		}
		for (int r = 0; r < 5; r++)
			for (int c = 0; c < 6; c++)
				bad += (r >= 4 || c >= 4) && out[1][r * 6 + c] != 0;
		EXPECT_EQ(0, bad);
	}
	free(out[0]);
	free(out[1]);
	vnpu_program_free(p);
	vnpu_model_free(m);
}

/* 3-D Max- and AveragePool (padding excluded from the count) against a
 * direct computation. */
TEST(pool_3d)
{
	enum { C = 2, D = 4, H = 5, W = 3, OD = 3, OH = 3, OW = 2 };
	struct mb *b = mb_new(13);
	float *out[8] = { 0 }, x[C * D * H * W];
	struct vnpu_program *p;
	Onnx__NodeProto *n;
	vnpu_model *m;

	mb_input(b, "x", F32, 5, (const int64_t[]){ 1, C, D, H, W });
	for (int k = 0; k < 2; k++) {
		n = mb_node(b, k ? "AveragePool" : "MaxPool", (const char *[]){ "x", NULL },
			    (const char *[]){ k ? "a" : "mx", NULL });
		mb_attr_ints(n, "kernel_shape", 3, (const int64_t[]){ 2, 3, 2 });
		mb_attr_ints(n, "strides", 3, (const int64_t[]){ 1, 2, 2 });
		mb_attr_ints(n, "pads", 6, (const int64_t[]){ 0, 1, 1, 0, 1, 0 });
	}
	mb_output(b, "mx");
	mb_output(b, "a");
	m = mb_read(b);
	EXPECT_NE(NULL, m);
	if (!m)
		return;
	p = compile_run(_metadata, m, NULL, out);
	fe_pattern(x, C * D * H * W, 1);
	if (p) {
		float worst = 0;

		for (int c = 0; c < C; c++)
			for (int od = 0; od < OD; od++)
				for (int oh = 0; oh < OH; oh++)
					for (int ow = 0; ow < OW; ow++) {
						float mx = -INFINITY, sum = 0;
						int cnt = 0, o = ((c * OD + od) * OH + oh) * OW + ow;

						for (int i = 0; i < 2; i++)
							for (int j = 0; j < 3; j++)
								for (int k = 0; k < 2; k++) {
									int dd = od + i, hh = oh * 2 - 1 + j;
									int ww = ow * 2 - 1 + k;
									float v;

									if (dd >= D || hh < 0 || hh >= H ||
									    ww < 0 || ww >= W)
										continue;
									v = x[((c * D + dd) * H + hh) * W + ww];
									mx = v > mx ? v : mx;
									sum += v;
									cnt++;
								}
						worst = fmaxf(worst, fabsf(out[0][o] - mx));
						worst = fmaxf(worst, fabsf(out[1][o] - sum / (float)cnt));
					}
		EXPECT_LT(worst, 1e-5f);
	}
	free(out[0]);
	free(out[1]);
	vnpu_program_free(p);
	vnpu_model_free(m);
}

/* TopK on integers, largest and smallest. */
TEST(topk)
{
	struct mb *b = mb_new(13);
	struct vnpu_program *p;
	Onnx__NodeProto *n;
	float *out[8] = { 0 };
	vnpu_model *m;

	mb_input(b, "x", ONNX__TENSOR_PROTO__DATA_TYPE__INT32, 2, (const int64_t[]){ 3, 5 });
	mb_init_i64(b, "k", 1, (const int64_t[]){ 1 }, (const int64_t[]){ 3 });
	mb_node(b, "TopK", (const char *[]){ "x", "k", NULL }, (const char *[]){ "v", "i", NULL });
	n = mb_node(b, "TopK", (const char *[]){ "x", "k", NULL }, (const char *[]){ "v2", "i2", NULL });
	mb_attr_int(n, "largest", 0);
	mb_output(b, "v");
	mb_output(b, "i");
	mb_output(b, "v2");
	mb_output(b, "i2");
	m = mb_read(b);
	EXPECT_NE(NULL, m);
	if (!m)
		return;
	p = compile_run(_metadata, m, NULL, out);
	if (p) {
		int32_t x[15];
		float pattern[15];
		int bad = 0;

		/* compile_run's input pattern, as integers */
		fe_pattern(pattern, 15, 1);
		memcpy(x, pattern, sizeof(x));
		for (int r = 0; r < 3; r++) {
			const int32_t *xr = &x[r * 5];
			bool used[5] = { 0 }, used2[5] = { 0 };

			for (int j = 0; j < 3; j++) {
				int best = -1, worst = -1;

				for (int c = 0; c < 5; c++) {
					if (!used[c] && (best < 0 || xr[c] > xr[best]))
						best = c;
					if (!used2[c] && (worst < 0 || xr[c] < xr[worst]))
						worst = c;
				}
				used[best] = used2[worst] = true;
				bad += ((int32_t *)out[0])[r * 3 + j] != xr[best];
				bad += ((int64_t *)out[1])[r * 3 + j] != best;
				bad += ((int32_t *)out[2])[r * 3 + j] != xr[worst];
				bad += ((int64_t *)out[3])[r * 3 + j] != worst;
			}
		}
		EXPECT_EQ(0, bad);
	}
	for (int i = 0; i < 8; i++)
		free(out[i]);
	vnpu_program_free(p);
	vnpu_model_free(m);
}

/* If with a condition known only at run time: both branches and a select. */
TEST(if_select)
{
	struct mb *b = mb_new(13), *then_b = mb_new(13), *else_b = mb_new(13);
	struct vnpu_program *p = NULL;
	Onnx__NodeProto *n;
	vnpu_model *m;

	mb_input(b, "x", F32, 2, (const int64_t[]){ 2, 3 });
	mb_input(b, "c", ONNX__TENSOR_PROTO__DATA_TYPE__BOOL, 0, NULL);
	mb_node(then_b, "Relu", (const char *[]){ "x", NULL }, (const char *[]){ "t", NULL });
	mb_output(then_b, "t");
	mb_node(else_b, "Neg", (const char *[]){ "x", NULL }, (const char *[]){ "e", NULL });
	mb_output(else_b, "e");
	n = mb_node(b, "If", (const char *[]){ "c", NULL }, (const char *[]){ "y", NULL });
	mb_attr_graph(b, n, "then_branch", then_b);
	mb_attr_graph(b, n, "else_branch", else_b);
	mb_output(b, "y");
	m = mb_read(b);
	EXPECT_NE(NULL, m);
	if (!m)
		return;
	EXPECT_EQ(VNPU_OK, vnpu_compile(m, NULL, &p));
	if (p) {
		float x[6], y[6];
		uint8_t c;
		void *in[2] = { x, &c }, *out[1] = { y };
		int bad = 0;

		fe_pattern(x, 6, 1);
		for (c = 0; c < 2; c++) {
			EXPECT_EQ(0, fe_run_program(p, in, out));
			for (int i = 0; i < 6; i++)
				bad += y[i] != (c ? (x[i] > 0 ? x[i] : 0) : -x[i]);
		}
		EXPECT_EQ(0, bad);
		EXPECT_EQ(3, p->num_layers);	/* Relu, Neg, the select */
	}
	vnpu_program_free(p);
	vnpu_model_free(m);
}

static float sigm(float x)
{
	return 1.0f / (1.0f + expf(-x));
}

/* Rows of A of the first GEMM layer of @p when A is 2-D, else 0. */
/*
 * The first LAYER command of op @op in @p's first segment, its header in
 * @l (NULL: none).
 */
static const uint8_t *first_layer(const struct vnpu_program *p, uint32_t op,
				  struct vnpu_cmd_layer *l)
{
	const uint8_t *c = p->segments[0].cmd, *end = c + p->segments[0].cmd_size;
	struct vnpu_cmd_header h;

	for (; c + sizeof(h) <= end; c += h.size) {
		memcpy(&h, c, sizeof(h));
		if (h.size < sizeof(h))
			break;
		if (h.opcode != VNPU_CMD_LAYER || h.size < sizeof(*l))
			continue;
		memcpy(l, c, sizeof(*l));
		if (l->op == op)
			return c;
	}
	return NULL;
}

/* The flags of the first CONV layer of @p (~0u: none). */
static uint32_t first_conv_flags(const struct vnpu_program *p)
{
	struct vnpu_cmd_layer l;
	struct vnpu_layer_conv a;
	const uint8_t *c = first_layer(p, VNPU_LAYER_CONV, &l);
	size_t at;

	if (!c)
		return ~0u;
	at = sizeof(l) + (size_t)l.num_tensors * sizeof(struct vnpu_cmd_tensor);
	if (l.hdr.size < at + sizeof(a))
		return ~0u;
	memcpy(&a, c + at, sizeof(a));
	return a.flags;
}

/*
 * A @k x @k Conv of @c channels onto @m, pads of @k / 2, on @hw x @hw,
 * compiled and run in f32 and under the bf16 hint: each one's Winograd
 * flags to *@f32 and *@bf16, the bf16 result within bf16's error of
 * f32's; returns whether it has f32's bits.
 */
static bool conv_bf16(struct __test_metadata *_metadata, int64_t c, int64_t m, int64_t k,
		      int64_t hw, uint32_t *f32, uint32_t *bf16)
{
	const uint32_t kinds = VNPU_LAYER_F_WINO | VNPU_LAYER_F_WINO2 | VNPU_LAYER_F_WINO42;
	const struct vnpu_compile_options bf = { .inference_precision = VNPU_TYPE_BF16 };
	const int64_t wd[4] = { m, c, k, k }, xd[4] = { 1, c, hw, hw };
	const int64_t pads[4] = { k / 2, k / 2, k / 2, k / 2 };
	float *w = malloc((size_t)(m * c * k * k) * 4), *o32[8] = { 0 }, *o16[8] = { 0 };
	struct vnpu_program *p32, *p16;
	struct mb *bld = mb_new(13);
	Onnx__NodeProto *nd;
	vnpu_model *model;
	float big = 0.0f;
	bool same;
	size_t n;

	for (int64_t i = 0; i < m * c * k * k; i++)
		w[i] = (float)((i * 7919) % 201 - 100) / 2400.0f;
	mb_input(bld, "x", F32, 4, xd);
	mb_init_f32(bld, "w", 4, wd, w);
	nd = mb_node(bld, "Conv", (const char *[]){ "x", "w", NULL },
		     (const char *[]){ "y", NULL });
	mb_attr_ints(nd, "pads", 4, pads);
	mb_output(bld, "y");
	model = mb_read(bld);
	if (!model)
		return false;
	p32 = compile_run(_metadata, model, NULL, o32);
	p16 = compile_run(_metadata, model, &bf, o16);
	EXPECT_NE(NULL, p32);
	EXPECT_NE(NULL, p16);
	if (!p32 || !p16)
		return false;
	*f32 = first_conv_flags(p32) & kinds;
	*bf16 = first_conv_flags(p16) & kinds;
	n = p32->outputs[0].size / 4;
	for (size_t i = 0; i < n; i++)
		big = fmaxf(big, fabsf(o32[0][i]));
	EXPECT_TRUE(max_diff(o16[0], o32[0], n) <= 0x1p-6f * big)
		TH_LOG("%lld -> %lld on %lldx%lld: %g of %g", (long long)c, (long long)m,
		       (long long)hw, (long long)hw, max_diff(o16[0], o32[0], n), big);
	same = !memcmp(o16[0], o32[0], n * 4);
	free(o32[0]);
	free(o16[0]);
	free(w);
	vnpu_program_free(p32);
	vnpu_program_free(p16);
	vnpu_model_free(model);
	return same;
}

/*
 * Under the bf16 hint where the engine takes the AVX512-BF16 kernels a
 * 3x3 stride-1 Conv on a map of too few 4x4 tiles for Winograd F(4x4,
 * 3x3) but 16 of 2x2 (ResNet-50's 7x7) runs as F(2x2, 3x3); 6x6 (9
 * tiles) stays direct; each within bf16's error of the f32 layer. f32
 * takes the same F(2x2, 3x3) on f32 U on FMA hosts (vnpu_eng_wino2_pays(),
 * with AVX-512 before the lanes), else stays direct. Where the hint widens
 * (vnpu_eng_bf16_pays()) it takes f32's flag.
 */
TEST(bf16_wino2_small_maps)
{
	static const struct { int64_t hw; uint32_t want; } cases[] = {
		{ 7, VNPU_LAYER_F_WINO2 }, { 8, VNPU_LAYER_F_WINO2 }, { 6, 0 },
	};
	const bool native = vnpu_eng_host_features() & VNPU_ENG_F_AVX512_BF16;
	const bool fma = vnpu_eng_host_features() & VNPU_ENG_F_AVX2_FMA;

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		uint32_t f32, bf16;

		conv_bf16(_metadata, 64, 64, 3, cases[k].hw, &f32, &bf16);
		EXPECT_EQ(fma ? cases[k].want : 0u, f32)
			TH_LOG("f32 %lldx%lld", (long long)cases[k].hw, (long long)cases[k].hw);
		EXPECT_EQ(native ? cases[k].want : f32, bf16)
			TH_LOG("%lldx%lld", (long long)cases[k].hw, (long long)cases[k].hw);
	}
}

/*
 * Under the bf16 hint where the engine takes the AVX512-BF16 kernels a
 * stride-1 3x3 Conv of 16 to 31 channels on either side runs as
 * Winograd F(4x2, 3x3), within bf16's error of the f32 layer, which stays
 * direct (f32's Winograd takes 32 each side); 8 channels in stay direct.
 * Where the hint widens it takes f32's flag.
 */
TEST(bf16_wino_few_channels)
{
	static const struct { int64_t c, m; uint32_t want; } cases[] = {
		{ 16, 16, VNPU_LAYER_F_WINO42 }, { 16, 32, VNPU_LAYER_F_WINO42 },
		{ 24, 24, VNPU_LAYER_F_WINO42 }, { 64, 16, VNPU_LAYER_F_WINO42 },
		{ 8, 16, 0 },
	};
	const bool native = vnpu_eng_host_features() & VNPU_ENG_F_AVX512_BF16;

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		uint32_t f32, bf16;

		conv_bf16(_metadata, cases[k].c, cases[k].m, 3, 20, &f32, &bf16);
		EXPECT_EQ(0u, f32)
			TH_LOG("f32 %lld -> %lld", (long long)cases[k].c, (long long)cases[k].m);
		EXPECT_EQ(native ? cases[k].want : 0u, bf16)
			TH_LOG("bf16 %lld -> %lld", (long long)cases[k].c, (long long)cases[k].m);
	}
}

/*
 * Under the bf16 hint a Conv of a depth per output under the host's
 * vnpu_eng_bf16_min_depth() (4 on Zen 4, 32 on other cores; 32 where the
 * hint widens) keeps its f32 weights and gives the f32 layer's bits; from
 * that depth on it takes bf16 weights, within bf16's error of f32. So
 * does one of VNPU_PACK_MR output channels or fewer where the AVX512-BF16
 * kernels run (the engine would widen its weights). 1x1 Convs onto 64
 * channels over 2, 3, 4, 8, 16, 24 and 32 channels; over 64 onto 4, 6, 7
 * and 12.
 */
TEST(bf16_shallow_convs)
{
	static const struct { int64_t c, m; } cases[] = {
		{ 2, 64 }, { 3, 64 }, { 4, 64 },
		{ 8, 64 }, { 16, 64 }, { 24, 64 }, { 32, 64 },
		{ 64, 4 }, { 64, VNPU_PACK_MR }, { 64, VNPU_PACK_MR + 1 }, { 64, 12 },
	};
	const bool native = vnpu_eng_host_features() & VNPU_ENG_F_AVX512_BF16;
	const int64_t least = native ? (int64_t)vnpu_eng_host_bf16_min_depth() : 32;

	EXPECT_TRUE(least == 4 || least == 32);
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		const int64_t c = cases[k].c, m = cases[k].m;
		const bool f32 = c < least || (native && m <= VNPU_PACK_MR);
		uint32_t f32_flags, bf16_flags;

		EXPECT_EQ(f32, conv_bf16(_metadata, c, m, 1, 12, &f32_flags, &bf16_flags))
			TH_LOG("depth %lld (least %lld) onto %lld: %s the f32 layer's bits",
			       (long long)c, (long long)least, (long long)m, f32 ? "not" : "still");
	}
}

/*
 * Where a precision hint widens its weights (f16; bf16 without the
 * AVX512-BF16 kernels, here VNPU_ENGINE_ISA=vnni), the layers with a
 * faster f32 layout take it on the rounded weights: a 3x3 Conv on 16x16
 * runs as Winograd F(4x4, 3x3) as in f32, a depthwise 3x3 on its dense
 * taps, a 1x1 onto 7x7 on the lanes where f32 does. Each gives exactly
 * the f32 model's bits on the weights rounded to the hint's type (bf16's
 * depthwise taps stay unrounded).
 */
static float round_to(float v, vnpu_element_type t)
{
	uint32_t u;
	_Float16 h;

	if (t == VNPU_TYPE_F16) {
		h = (_Float16)v;
		return (float)h;
	}
	memcpy(&u, &v, 4);
	u = (u + 0x7fff + ((u >> 16) & 1)) & 0xffff0000u;
	memcpy(&v, &u, 4);
	return v;
}

TEST(hint_widened_layouts)
{
	/*
	 * @dw: depthwise, which bf16 keeps in f32 unrounded (conv_hinted());
	 * f16 keeps each of these f32 layouts the host has on the f32 weights.
	 */
	static const struct { int64_t c, m, group, k, hw; uint32_t flag; bool dw; } cases[] = {
		{ 64, 64, 1, 3, 16, VNPU_LAYER_F_WINO, false },
		{ 32, 32, 32, 3, 20, 0, true },
		{ 256, 64, 1, 1, 7, VNPU_LAYER_F_LANES, false },
	};
	static const vnpu_element_type hints[] = { VNPU_TYPE_F16, VNPU_TYPE_BF16 };
	char *isa = getenv("VNPU_ENGINE_ISA") ? strdup(getenv("VNPU_ENGINE_ISA")) : NULL;

	/* Caps below bf16 widen as they are; else cap to vnni. */
	if (!isa || !strcmp(isa, "bf16"))
		setenv("VNPU_ENGINE_ISA", "vnni", 1);
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++)
		for (size_t h = 0; h < 2; h++) {
			const int64_t c = cases[k].c, m = cases[k].m, kk = cases[k].k;
			const int64_t wd[4] = { m, c / cases[k].group, kk, kk };
			const int64_t xd[4] = { 1, c, cases[k].hw, cases[k].hw };
			const int64_t pads[4] = { kk / 2, kk / 2, kk / 2, kk / 2 };
			int64_t nw = wd[0] * wd[1] * kk * kk;
			const struct vnpu_compile_options o = { .inference_precision = hints[h] };
			float *w = malloc((size_t)nw * 4), *wr = malloc((size_t)nw * 4);
			struct vnpu_program *ph, *pr;
			float *oh[8] = { 0 }, *orr[8] = { 0 };
			/* The lanes are an AVX-512 layout; without it f16 packs f16. */
			bool f32_layout = cases[k].flag != VNPU_LAYER_F_LANES ||
					  (vnpu_eng_host_features() & VNPU_ENG_F_AVX512);
			vnpu_model *mh, *mr;

			for (int64_t i = 0; i < nw; i++) {
				w[i] = (float)((i * 7919) % 2001 - 1000) / 24000.0f;
				wr[i] = (hints[h] == VNPU_TYPE_F16 && f32_layout) || cases[k].dw ?
					w[i] : round_to(w[i], hints[h]);
			}
			for (int r = 0; r < 2; r++) {
				struct mb *bld = mb_new(13);
				Onnx__NodeProto *nd;

				mb_input(bld, "x", F32, 4, xd);
				mb_init_f32(bld, "w", 4, wd, r ? wr : w);
				nd = mb_node(bld, "Conv", (const char *[]){ "x", "w", NULL },
					     (const char *[]){ "y", NULL });
				mb_attr_ints(nd, "pads", 4, pads);
				mb_attr_int(nd, "group", cases[k].group);
				mb_output(bld, "y");
				if (r)
					mr = mb_read(bld);
				else
					mh = mb_read(bld);
			}
			ASSERT_NE(NULL, mh);
			ASSERT_NE(NULL, mr);
			ph = compile_run(_metadata, mh, &o, oh);
			pr = compile_run(_metadata, mr, NULL, orr);
			ASSERT_NE(NULL, ph);
			ASSERT_NE(NULL, pr);
			/* The f32 layouts of an AVX-512 host. */
			if (vnpu_eng_host_features() & VNPU_ENG_F_AVX512)
				EXPECT_EQ(cases[k].flag, first_conv_flags(pr) & cases[k].flag)
					TH_LOG("case %zu: f32 flags %#x", k, first_conv_flags(pr));
			EXPECT_EQ(first_conv_flags(pr), first_conv_flags(ph))
				TH_LOG("case %zu hint %d: flags %#x, f32 %#x", k, hints[h],
				       first_conv_flags(ph), first_conv_flags(pr));
			EXPECT_EQ(0, memcmp(oh[0], orr[0], pr->outputs[0].size))
				TH_LOG("case %zu hint %d: not the f32 layer's bits",
				       k, hints[h]);
			free(oh[0]);
			free(orr[0]);
			vnpu_program_free(ph);
			vnpu_program_free(pr);
			vnpu_model_free(mh);
			vnpu_model_free(mr);
			free(w);
			free(wr);
		}
	if (isa)
		setenv("VNPU_ENGINE_ISA", isa, 1);
	else
		unsetenv("VNPU_ENGINE_ISA");
	free(isa);
}

static uint64_t first_gemm_rows(const struct vnpu_program *p)
{
	struct vnpu_cmd_layer l;
	struct vnpu_cmd_tensor a;
	const uint8_t *c = first_layer(p, VNPU_LAYER_GEMM, &l);

	if (!c || l.hdr.size < sizeof(l) + sizeof(a))
		return 0;
	memcpy(&a, c + sizeof(l), sizeof(a));
	return a.rank == 2 ? a.dims[0] : 0;
}

/*
 * LSTM against the textbook equations, forward (one LSTM layer) or
 * "reverse" (unrolled: the steps from the last to the first), under the
 * precision hint @hint (UNDEFINED: none; the bf16 and f16 hints' R is
 * packed in their type, fused or not, so the two agree bit for bit).
 */
static void lstm_case(struct __test_metadata *_metadata, bool reverse, vnpu_element_type hint)
{
	enum { S = 4, B = 2, I = 3, H = 5 };
	static float w[4 * H * I], r[4 * H * H], bias[8 * H], x[S * B * I], h0[B * H], c0[B * H];
	const struct vnpu_compile_options unfused = { .no_fusion = true,
						      .inference_precision = hint };
	const struct vnpu_compile_options fused = { .inference_precision = hint };
	float tol = hint == VNPU_TYPE_BF16 ? 2e-2f : hint == VNPU_TYPE_F16 ? 2e-3f : 1e-5f;
	float *out[8] = { 0 }, *plain_out[8] = { 0 }, h[B * H], c[B * H], y[S * B * H];
	struct mb *b = mb_new(14);
	struct vnpu_program *p, *plain;
	Onnx__NodeProto *n;
	vnpu_model *m;

	fe_pattern(w, sizeof(w) / 4, 11);
	fe_pattern(r, sizeof(r) / 4, 12);
	fe_pattern(bias, sizeof(bias) / 4, 13);
	mb_input(b, "x", F32, 3, (const int64_t[]){ S, B, I });
	mb_input(b, "h0", F32, 3, (const int64_t[]){ 1, B, H });
	mb_input(b, "c0", F32, 3, (const int64_t[]){ 1, B, H });
	mb_init_f32(b, "w", 3, (const int64_t[]){ 1, 4 * H, I }, w);
	mb_init_f32(b, "r", 3, (const int64_t[]){ 1, 4 * H, H }, r);
	mb_init_f32(b, "b", 2, (const int64_t[]){ 1, 8 * H }, bias);
	n = mb_node(b, "LSTM", (const char *[]){ "x", "w", "r", "b", "", "h0", "c0", NULL },
		    (const char *[]){ "y", "yh", "yc", NULL });
	mb_attr_int(n, "hidden_size", H);
	if (reverse)
		mb_attr_string(n, "direction", "reverse");
	mb_output(b, "y");
	mb_output(b, "yh");
	mb_output(b, "yc");
	m = mb_read(b);
	EXPECT_NE(NULL, m);
	if (!m)
		return;
	p = compile_run(_metadata, m, &fused, out);
	/* compile_run's inputs: pattern seeds 1, 2, 3 in input order. */
	fe_pattern(x, S * B * I, 1);
	fe_pattern(h0, B * H, 2);
	fe_pattern(c0, B * H, 3);
	memcpy(h, h0, sizeof(h));
	memcpy(c, c0, sizeof(c));
	for (int step = 0; step < S; step++) {
		int t = reverse ? S - 1 - step : step;
		float nh[B * H];

		for (int bb = 0; bb < B; bb++)
			for (int j = 0; j < H; j++) {
				float g[4];

				for (int k = 0; k < 4; k++) {	/* i, o, f, c */
					int row = k * H + j;
					float acc = bias[row] + bias[4 * H + row];

					for (int q = 0; q < I; q++)
						acc += x[(t * B + bb) * I + q] * w[row * I + q];
					for (int q = 0; q < H; q++)
						acc += h[bb * H + q] * r[row * H + q];
					g[k] = acc;
				}
				c[bb * H + j] = sigm(g[2]) * c[bb * H + j] + sigm(g[0]) * tanhf(g[3]);
				nh[bb * H + j] = sigm(g[1]) * tanhf(c[bb * H + j]);
			}
		memcpy(h, nh, sizeof(h));
		memcpy(&y[t * B * H], h, sizeof(h));
	}
	if (p) {
		EXPECT_LT(max_diff(out[0], y, S * B * H), tol);
		EXPECT_LT(max_diff(out[1], h, B * H), tol);
		EXPECT_LT(max_diff(out[2], c, B * H), tol);
	}
	/*
	 * The input projection and one LSTM layer give the bits of the
	 * unrolled steps' unfused layers (whose temporaries share memory).
	 */
	plain = compile_run(_metadata, m, &unfused, plain_out);
	EXPECT_TRUE(p && plain && p->num_segments == 1 && plain->num_segments == 1
		    && (reverse
			|| p->segments[0].num_cmds == 2) && plain->arena_size < plain->intermediates_size);
	for (int i = 0; p && plain && i < 3; i++) {
		EXPECT_EQ(0, memcmp(out[i], plain_out[i], p->outputs[i].size));
	}
	/* The input projection: one GEMM over every step's rows. */
	EXPECT_TRUE(p && plain && first_gemm_rows(p) == S * B && first_gemm_rows(plain) == S * B);
	for (int i = 0; i < 8; i++) {
		free(out[i]);
		free(plain_out[i]);
	}
	vnpu_program_free(plain);
	vnpu_program_free(p);
	vnpu_model_free(m);
}

TEST(lstm)
{
	lstm_case(_metadata, false, VNPU_TYPE_UNDEFINED);
	lstm_case(_metadata, true, VNPU_TYPE_UNDEFINED);
	lstm_case(_metadata, false, VNPU_TYPE_BF16);
	lstm_case(_metadata, false, VNPU_TYPE_F16);
}

/*
 * A 1-D convolution of one channel by a long strided kernel (an STFT's
 * frames by its basis): one GEMM over the frames read in place, against
 * the sums, and the CONV layer of the program without packing.
 */
TEST(conv_frames)
{
	enum { L = 1000, M = 20, K = 96, S = 10, F = (L - K) / S + 1 };
	static float w[M * K], bias[M], x[L], want[M * F];
	struct mb *b = mb_new(13);
	float *out[8] = { 0 };
	struct vnpu_program *p;
	Onnx__NodeProto *n;
	vnpu_model *m;

	fe_pattern(w, M * K, 21);
	fe_pattern(bias, M, 22);
	mb_input(b, "x", F32, 3, (const int64_t[]){ 1, 1, L });
	mb_init_f32(b, "w", 3, (const int64_t[]){ M, 1, K }, w);
	mb_init_f32(b, "b", 1, (const int64_t[]){ M }, bias);
	n = mb_node(b, "Conv", (const char *[]){ "x", "w", "b", NULL }, (const char *[]){ "y", NULL });
	mb_attr_ints(n, "kernel_shape", 1, (const int64_t[]){ K });
	mb_attr_ints(n, "strides", 1, (const int64_t[]){ S });
	mb_output(b, "y");
	m = mb_read(b);
	EXPECT_NE(NULL, m);
	if (!m)
		return;
	p = compile_run(_metadata, m, NULL, out);
	fe_pattern(x, L, 1);
	for (int c = 0; c < M; c++)
		for (int f = 0; f < F; f++) {
			double acc = bias[c];

			for (int k = 0; k < K; k++)
				acc += (double)x[f * S + k] * w[c * K + k];
			want[c * F + f] = (float)acc;
		}
	EXPECT_TRUE(p && max_diff(out[0], want, M * F) < 1e-5f && first_gemm_rows(p) == F);
	check_fusion_equivalent(_metadata, m, 0);
	free(out[0]);
	vnpu_program_free(p);
	vnpu_model_free(m);
}

/*
 * A squeeze-excite block's 1x1 convolutions over a map of one pixel, of
 * @batch images: x [B, C, 1, 1] -> Conv+Add(x)+Relu -> Conv+HardSigmoid,
 * built with the padding @pad and @group groups on the first Conv.
 */
static vnpu_model *se_model(int64_t batch, int64_t pad, int64_t group)
{
	enum { C = 40, M = 24 };
	static float w1[C * C], b1[C], w2[M * C], b2[M];
	struct mb *b = mb_new(13);
	Onnx__NodeProto *n;

	fe_pattern(w1, C * C, 31);
	fe_pattern(b1, C, 32);
	fe_pattern(w2, M * C, 33);
	fe_pattern(b2, M, 34);
	mb_input(b, "x", F32, 4, (const int64_t[]){ batch, C, 1, 1 });
	mb_init_f32(b, "w1", 4, (const int64_t[]){ C, C / group, 1, 1 }, w1);
	mb_init_f32(b, "b1", 1, (const int64_t[]){ C }, b1);
	mb_init_f32(b, "w2", 4, (const int64_t[]){ M, C, 1, 1 }, w2);
	mb_init_f32(b, "b2", 1, (const int64_t[]){ M }, b2);
	n = mb_node(b, "Conv", (const char *[]){ "x", "w1", "b1", NULL },
		    (const char *[]){ "c1", NULL });
	mb_attr_int(n, "group", group);
	if (pad) {
		mb_attr_ints(n, "pads", 4, (const int64_t[]){ pad, pad, pad, pad });
		mb_node(b, "Relu", (const char *[]){ "c1", NULL }, (const char *[]){ "r", NULL });
	} else {
		mb_node(b, "Add", (const char *[]){ "c1", "x", NULL }, (const char *[]){ "a", NULL });
		mb_node(b, "Relu", (const char *[]){ "a", NULL }, (const char *[]){ "r", NULL });
	}
	mb_node(b, "Conv", (const char *[]){ "r", "w2", "b2", NULL }, (const char *[]){ "c2", NULL });
	mb_node(b, "HardSigmoid", (const char *[]){ "c2", NULL }, (const char *[]){ "y", NULL });
	mb_output(b, "y");
	return mb_read(b);
}

/*
 * se_model() compiled: both convolutions of one-pixel maps become GEMMs
 * of a row an image (X [B, C] by W^T packed) giving the bits of the CONV
 * layers of the program without fusion and packing; a padded or grouped
 * first one stays a CONV layer.
 */
static void se_case(struct __test_metadata *_metadata, int64_t batch, int64_t pad,
		    int64_t group, uint64_t want_rows)
{
	vnpu_model *m = se_model(batch, pad, group);
	float *a[8] = { 0 }, *b[8] = { 0 };
	struct vnpu_program *p, *q;

	EXPECT_NE(NULL, m);
	if (!m)
		return;
	p = compile_run(_metadata, m, NULL, a);
	q = compile_run(_metadata, m, &no_fusion, b);
	EXPECT_TRUE(p && q);
	if (p && q) {
		EXPECT_EQ(want_rows, first_gemm_rows(p))
			TH_LOG("batch %ld pad %ld group %ld: first GEMM of %lu rows", (long)batch,
			       (long)pad, (long)group, (unsigned long)first_gemm_rows(p));
		EXPECT_EQ(0, first_gemm_rows(q));
		EXPECT_EQ(0, memcmp(a[0], b[0], p->outputs[0].size))
			TH_LOG("batch %ld pad %ld group %ld: not the CONV layers' bits",
			       (long)batch, (long)pad, (long)group);
	}
	for (int i = 0; i < 8; i++) {
		free(a[i]);
		free(b[i]);
	}
	vnpu_program_free(p);
	vnpu_program_free(q);
	vnpu_model_free(m);
}

TEST(conv_one_pixel)
{
	se_case(_metadata, 1, 0, 1, 1);
	se_case(_metadata, 3, 0, 1, 3);
	se_case(_metadata, 7, 0, 1, 7);
	/* Padded, the first Conv gives a 3x3 map: neither is lowered. */
	se_case(_metadata, 1, 1, 1, 0);
	/* Grouped, the first stays a CONV layer, the second is the GEMM. */
	se_case(_metadata, 1, 0, 2, 1);
}

/*
 * A convolution whose kernel (@kh x @kw) may cover its whole input map
 * (@h x @w), with @pad on every side and then strides of 3, of @batch
 * images: x [B, C, H, W] -> Conv+LeakyRelu (openWakeWord embedding's last
 * layer: 3x1 over 3x1).
 */
static vnpu_model *window_model(int64_t batch, int64_t kh, int64_t kw, int64_t h, int64_t w,
				int64_t pad)
{
	enum { C = 40, M = 24 };
	static float wt[M * C * 9], bias[M];
	struct mb *b = mb_new(13);
	Onnx__NodeProto *n;

	fe_pattern(wt, M * C * kh * kw, 35);
	fe_pattern(bias, M, 36);
	mb_input(b, "x", F32, 4, (const int64_t[]){ batch, C, h, w });
	mb_init_f32(b, "w", 4, (const int64_t[]){ M, C, kh, kw }, wt);
	mb_init_f32(b, "b", 1, (const int64_t[]){ M }, bias);
	n = mb_node(b, "Conv", (const char *[]){ "x", "w", "b", NULL },
		    (const char *[]){ "c", NULL });
	if (pad) {
		mb_attr_ints(n, "pads", 4, (const int64_t[]){ pad, pad, pad, pad });
		mb_attr_ints(n, "strides", 2, (const int64_t[]){ 3, 3 });
	}
	n = mb_node(b, "LeakyRelu", (const char *[]){ "c", NULL }, (const char *[]){ "y", NULL });
	mb_attr_float(n, "alpha", 0.2f);
	mb_output(b, "y");
	return mb_read(b);
}

/*
 * window_model() compiled: a kernel covering the whole unpadded input is
 * a GEMM of a row an image (X [B, C * H * W] by W^T packed) giving the
 * bits of the program without fusion and packing, and under the bf16
 * hint too; a map of two outputs or a padded one stays a CONV layer.
 */
static void window_case(struct __test_metadata *_metadata, int64_t batch, int64_t kh, int64_t kw,
			int64_t h, int64_t w, int64_t pad, uint64_t want_rows)
{
	const struct vnpu_compile_options bf = { .inference_precision = VNPU_TYPE_BF16 };
	vnpu_model *m = window_model(batch, kh, kw, h, w, pad);
	float *a[8] = { 0 }, *b[8] = { 0 }, *c[8] = { 0 };
	struct vnpu_program *p, *q, *r;

	EXPECT_NE(NULL, m);
	if (!m)
		return;
	p = compile_run(_metadata, m, NULL, a);
	q = compile_run(_metadata, m, &no_fusion, b);
	r = compile_run(_metadata, m, &bf, c);
	EXPECT_TRUE(p && q && r);
	if (p && q && r) {
		EXPECT_EQ(want_rows, first_gemm_rows(p))
			TH_LOG("%ldx%ld over %ldx%ld pad %ld, %ld images: first GEMM of %lu rows",
			       (long)kh, (long)kw, (long)h, (long)w, (long)pad, (long)batch,
			       (unsigned long)first_gemm_rows(p));
		EXPECT_EQ(want_rows, first_gemm_rows(r))
			TH_LOG("%ldx%ld over %ldx%ld under bf16: first GEMM of %lu rows", (long)kh,
			       (long)kw, (long)h, (long)w, (unsigned long)first_gemm_rows(r));
		EXPECT_EQ(0, memcmp(a[0], b[0], p->outputs[0].size))
			TH_LOG("%ldx%ld over %ldx%ld: not the CONV layer's bits", (long)kh,
			       (long)kw, (long)h, (long)w);
	}
	for (int i = 0; i < 8; i++) {
		free(a[i]);
		free(b[i]);
		free(c[i]);
	}
	vnpu_program_free(p);
	vnpu_program_free(q);
	vnpu_program_free(r);
	vnpu_model_free(m);
}

TEST(conv_whole_window)
{
	window_case(_metadata, 1, 3, 1, 3, 1, 0, 1);
	window_case(_metadata, 3, 1, 3, 1, 3, 0, 3);
	window_case(_metadata, 2, 3, 3, 3, 3, 0, 2);
	/*
	 * Two output positions, or one padded window (3x1 over 3x1, pads
	 * of 1, strides of 3: one position): a CONV layer.
	 */
	window_case(_metadata, 1, 3, 1, 4, 1, 0, 0);
	window_case(_metadata, 1, 3, 1, 3, 1, 1, 0);
}

static int overlaps(const struct vnpu_plan_buf *a, const struct vnpu_plan_buf *b)
{
	bool time = a->first <= b->last && b->first <= a->last;
	bool space = a->offset < b->offset + b->size && b->offset < a->offset + a->size;

	return time && space && a->size && b->size;
}

TEST(planner)
{
	struct vnpu_plan_buf bufs[200];
	uint32_t seed = 12345;

	EXPECT_EQ(0, vnpu_plan_arena(bufs, 0, 64));
	for (int round = 0; round < 50; round++) {
		uint32_t n = 1 + round * 3 % 200;
		uint64_t sum = 0, arena;

		for (uint32_t i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			bufs[i].size = (seed >> 8) % 5000;
			bufs[i].first = (seed >> 4) % 60;
			bufs[i].last = bufs[i].first + (seed >> 20) % 10;
			sum += (bufs[i].size + 63) / 64 * 64;
		}
		arena = vnpu_plan_arena(bufs, n, 64);
		EXPECT_LE(arena, sum);
		for (uint32_t i = 0; i < n; i++) {
			EXPECT_EQ(0, bufs[i].offset % 64);
			EXPECT_LE(bufs[i].offset + bufs[i].size, arena);
			for (uint32_t j = i + 1; j < n; j++) {
				EXPECT_FALSE(overlaps(&bufs[i], &bufs[j]))
					TH_LOG("round %d: buffers %u and %u overlap", round, i, j);
			}
		}
	}
	/* A chain: each buffer lives two steps; two slots suffice. */
	for (uint32_t i = 0; i < 10; i++)
		bufs[i] = (struct vnpu_plan_buf){ .size = 1000, .first = i, .last = i + 1 };
	EXPECT_EQ(2 * 1024, vnpu_plan_arena(bufs, 10, 64));
}

#define NODE_DIR "/usr/share/libonnx-testdata/data/node"

/* One test data tensor: its type, shape and bytes (malloc'd). */
struct pb_tensor {
	vnpu_element_type type;
	vnpu_shape shape;
	void *data;
	size_t size;
};

/* input_@i.pb of node case @name into @t; false when it cannot be read. */
static bool read_pb_input(const char *name, uint32_t i, struct pb_tensor *t)
{
	char path[512];
	Onnx__TensorProto *tp;
	uint8_t *buf;
	long len;
	FILE *f;

	snprintf(path, sizeof(path), NODE_DIR "/%s/test_data_set_0/input_%u.pb", name, i);
	f = fopen(path, "rb");
	if (!f)
		return false;
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	buf = malloc(len > 0 ? (size_t)len : 1);
	if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len) {
		free(buf);
		fclose(f);
		return false;
	}
	fclose(f);
	tp = onnx__tensor_proto__unpack(NULL, (size_t)len, buf);
	free(buf);
	if (!tp || tp->n_dims > VNPU_MAX_RANK) {
		if (tp)
			onnx__tensor_proto__free_unpacked(tp, NULL);
		return false;
	}
	/* The element type codes are ONNX's. */
	t->type = (vnpu_element_type)tp->data_type;
	t->shape.rank = (uint32_t)tp->n_dims;
	for (size_t d = 0; d < tp->n_dims; d++)
		t->shape.dims[d] = tp->dims[d];
	if (tp->has_raw_data) {
		t->size = tp->raw_data.len;
		t->data = malloc(t->size ? t->size : 1);
		memcpy(t->data, tp->raw_data.data, t->size);
	} else if (tp->n_float_data) {
		t->size = tp->n_float_data * sizeof(float);
		t->data = malloc(t->size);
		memcpy(t->data, tp->float_data, t->size);
	} else if (tp->n_int64_data) {
		t->size = tp->n_int64_data * sizeof(int64_t);
		t->data = malloc(t->size);
		memcpy(t->data, tp->int64_data, t->size);
	} else if (tp->n_int32_data && t->type == VNPU_TYPE_I32) {
		t->size = tp->n_int32_data * sizeof(int32_t);
		t->data = malloc(t->size);
		memcpy(t->data, tp->int32_data, t->size);
	} else {
		t->size = 0;
		t->data = malloc(1);
	}
	onnx__tensor_proto__free_unpacked(tp, NULL);
	return t->data != NULL;
}

/*
 * Node case @name read with the inputs in @mask frozen to its test data
 * and the others reshaped to it, compiled and run on that data. 1 with
 * the outputs (malloc'd) in @p and @out, 0 when it does not compile (the
 * message in @why), -1 on a failure (counted).
 */
static int run_frozen(struct __test_metadata *_metadata, const char *name,
		      const struct pb_tensor *data, size_t n, unsigned mask,
		      struct vnpu_program **p, void **out, char *why, size_t len)
{
	char path[512];
	void *in[8] = { 0 };
	vnpu_model *m;
	vnpu_status st;
	size_t k = 0;
	int ret;

	snprintf(path, sizeof(path), NODE_DIR "/%s/model.onnx", name);
	*p = NULL;
	st = vnpu_model_read_file(path, &m);
	EXPECT_EQ(VNPU_OK, st);
	if (st)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const char *input;

		/* Frozen inputs leave the list: the next one is at @k. */
		EXPECT_EQ(VNPU_OK, vnpu_model_input_name(m, k, &input));
		if (mask >> i & 1) {
			EXPECT_EQ(VNPU_OK,
				  vnpu_model_freeze_input(m, input, data[i].type, &data[i].shape,
							  data[i].data, data[i].size));
			continue;
		}
		EXPECT_EQ(VNPU_OK, vnpu_model_reshape(m, input, &data[i].shape));
		in[k++] = data[i].data;
	}
	if (vnpu_compile(m, NULL, p)) {
		snprintf(why, len, "%s", vnpu_last_error());
		vnpu_model_free(m);
		return 0;
	}
	EXPECT_EQ(k, (*p)->num_inputs);
	for (uint32_t o = 0; o < (*p)->num_outputs && o < 8; o++)
		out[o] = calloc(1, (*p)->outputs[o].size + 4);
	ret = (*p)->num_inputs != k || (*p)->num_outputs > 8 || fe_run_program(*p, in, out) ?
	      -1 : 1;
	EXPECT_EQ(1, ret)
		TH_LOG("%s with inputs %#x frozen: did not run", name, mask);
	vnpu_model_free(m);
	return ret;
}

/* Byte for byte, or (@tol) as floats within @tol of the largest of @b. */
static bool same_output(const void *a, const void *b, size_t size, float tol)
{
	const float *x = a, *y = b;
	float big = 0, diff = 0;

	if (!tol)
		return !memcmp(a, b, size);
	for (size_t i = 0; i < size / sizeof(float); i++) {
		big = fmaxf(big, fabsf(y[i]));
		diff = fmaxf(diff, fabsf(x[i] - y[i]));
	}
	return diff <= tol * big;
}

/*
 * Node models with their inputs frozen, each set of them: Dropout's
 * mask, OneHot, STFT and Squeeze kept a node writing a value folded into
 * the weights (a stream the device refused). Every set frozen compiles
 * but those leaving a shape unknown, all of them does, and each gives,
 * byte for byte, what the least frozen one gives from the same values.
 */
TEST(frozen_node_models)
{
	/* A window frozen is folded into STFT's DFT matrix (in double):
	 * other roundings, within @tol of the largest output. */
	static const struct {
		const char *name;
		float tol;
	} cases[] = {
		{ "test_dropout_default_mask", 0 }, { "test_dropout_default_mask_ratio", 0 },
		{ "test_onehot_without_axis", 0 }, { "test_onehot_with_axis", 0 },
		{ "test_stft", 0 }, { "test_stft_with_window", 1e-6f },
		{ "test_squeeze", 0 }, { "test_squeeze_negative_axes", 0 },
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		const char *name = cases[c].name;
		struct pb_tensor data[8] = { 0 };
		struct vnpu_program *ref = NULL;
		void *ref_out[8] = { 0 };
		size_t n = 0;

		while (n < 8 && read_pb_input(name, (uint32_t)n, &data[n]))
			n++;
		if (!n) {
			TH_LOG("  %s: no test data (libonnx-testdata): skipped", name);
			continue;
		}
		for (unsigned mask = 0; mask < 1u << n; mask++) {
			struct vnpu_program *p;
			void *out[8] = { 0 };
			char why[256] = "";
			int r = run_frozen(_metadata, name, data, n, mask, &p, out, why,
					   sizeof(why));

			EXPECT_FALSE(r == 0 && (mask == (1u << n) - 1
						|| !strstr(why, "not known at compile")))
				TH_LOG("%s with inputs %#x frozen: %s", name, mask, why);
			for (uint32_t o = 0; r > 0 && ref && o < p->num_outputs; o++) {
				EXPECT_FALSE(o >= ref->num_outputs
					     || p->outputs[o].size != ref->outputs[o].size || !same_output(out[o], ref_out[o], p->outputs[o].size, cases[c].tol))
					TH_LOG("%s with inputs %#x frozen: output %u differs", name,
					       mask, o);
			}
			if (r > 0 && !ref) {
				ref = p;
				memcpy(ref_out, out, sizeof(out));
				continue;
			}
			for (uint32_t o = 0; o < 8; o++)
				free(out[o]);
			vnpu_program_free(p);
		}
		EXPECT_NE(NULL, ref);
		for (uint32_t o = 0; o < 8; o++)
			free(ref_out[o]);
		vnpu_program_free(ref);
		for (size_t i = 0; i < n; i++)
			free(data[i].data);
	}
}

/*
 * STFT of one frame (step past the signal): a step of INT64_MAX gave the
 * frames a stride past the device's range, a stream it refused; it gives
 * what a step of 1000 gives.
 */
TEST(stft_one_frame)
{
	static const int64_t steps[2] = { 1000, INT64_MAX };
	struct pb_tensor data[3] = { 0 };
	struct vnpu_program *p[2] = { 0 };
	void *out[2][8] = { { 0 } };
	char why[256] = "";
	size_t n = 0;

	while (n < 3 && read_pb_input("test_stft_with_window", (uint32_t)n, &data[n]))
		n++;
	if (n < 3 || data[1].size != sizeof(int64_t)) {
		TH_LOG("  test_stft_with_window: no test data (libonnx-testdata): skipped");
	} else {
		for (int i = 0; i < 2; i++) {
			memcpy(data[1].data, &steps[i], sizeof(steps[i]));
			EXPECT_EQ(1,
				  run_frozen(_metadata, "test_stft_with_window", data, n, 0x3,
					     &p[i], out[i], why, sizeof(why)));
		}
		EXPECT_TRUE(p[0] && p[1] && p[0]->outputs[0].size == p[1]->outputs[0].size
			    && !memcmp(out[0][0], out[1][0], p[0]->outputs[0].size));
	}
	for (int i = 0; i < 2; i++) {
		vnpu_program_free(p[i]);
		for (int o = 0; o < 8; o++)
			free(out[i][o]);
	}
	for (size_t i = 0; i < n; i++)
		free(data[i].data);
}

KSFT_MAIN

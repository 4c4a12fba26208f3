// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * CHAIN against its steps run as UNARY and BINARY layers one after the
 * other, bit for bit, on every kernel path, whole and split; and the
 * checks that reject malformed chains.
 */
#include "engine_test.h"
#include "ksft_main.h"

#define IN(i)	VNPU_CHAIN_IN(i)
#define ST(j)	VNPU_CHAIN_STEP(j)
#define IMM	VNPU_CHAIN_IMM

static struct vnpu_chain_step U(__u32 func, __u32 a, float al, float be)
{
	return (struct vnpu_chain_step){ VNPU_CHAIN_UNARY, func, a, 0,
					 et_f32_bits(al), et_f32_bits(be) };
}

/* A binary step; @imm is the immediate of whichever operand is IMM. */
static struct vnpu_chain_step B(__u32 func, __u32 a, __u32 b, float imm)
{
	struct vnpu_chain_step s = { VNPU_CHAIN_BINARY, func, a, b, 0, 0 };

	if (a == IMM)
		s.alpha = et_f32_bits(imm);
	if (b == IMM)
		s.beta = et_f32_bits(imm);
	return s;
}

struct chain_case {
	const char *name;
	__u32 inputs;
	struct vnpu_cmd_tensor t[VNPU_CHAIN_MAX_INPUTS + 1];
	struct vnpu_layer_chain a;
};

static int run_or_fail(struct __test_metadata *_metadata, const char *name, __u32 op,
		       const struct vnpu_cmd_tensor *t,
		       void *const *data, __u32 n, const void *attrs,
		       __u32 size, __u32 features)
{
	int rc = et_run(op, t, data, n, attrs, size, features, 1);

	EXPECT_FALSE(rc)
		TH_LOG("%s: reference layer %u failed: %d", name, op, rc);
	return rc;
}

/*
 * Y of @c's steps as layers: each operand first made a dense tensor of
 * Y's dims (BINARY MAX of it with itself, which keeps its bits), each
 * step a layer into another, the last copied to Y's layout.
 */
static int chain_ref(struct __test_metadata *_metadata, const struct chain_case *c, void *const *in,
		     float *out, __u32 features)
{
	const struct vnpu_cmd_tensor *y = &c->t[c->inputs];
	struct vnpu_cmd_tensor d = et_dense(VNPU_DTYPE_F32, y->rank, y->dims);
	struct vnpu_cmd_tensor one = et_dense(VNPU_DTYPE_F32, 0, NULL), t[3];
	size_t n = et_numel(y), e, crd[VNPU_MAX_DIMS];
	float *vals[VNPU_CHAIN_MAX_INPUTS + VNPU_CHAIN_MAX_STEPS] = {}, imm;
	int rc = 0;
	__u32 i, k;

	for (i = 0; !rc && i < c->inputs; i++) {
		void *data[3] = { in[i], in[i], NULL };
		struct vnpu_layer_binary mx = { .func = VNPU_BIN_MAX };

		vals[i] = malloc(n * 4 + 4);
		data[2] = vals[i];
		t[0] = t[1] = c->t[i];
		t[2] = d;
		rc = run_or_fail(_metadata, c->name, VNPU_LAYER_BINARY, t, data, 3, &mx,
				 sizeof(mx), features);
	}
	for (k = 0; !rc && k < c->a.num_steps; k++) {
		const struct vnpu_chain_step *s = &c->a.steps[k];
		float *r = malloc(n * 4 + 4);
		void *data[3];

#define VAL(ref) ((ref) >= ST(0) ? vals[c->inputs + (ref) - ST(0)] : vals[ref])
		vals[c->inputs + k] = r;
		if (s->kind == VNPU_CHAIN_UNARY) {
			struct vnpu_layer_act act = { s->func, 0, s->alpha, s->beta };

			data[0] = VAL(s->a);
			data[1] = r;
			t[0] = t[1] = d;
			rc = run_or_fail(_metadata, c->name, VNPU_LAYER_UNARY, t, data, 2, &act,
					 sizeof(act), features);
			continue;
		}
		{
			struct vnpu_layer_binary bin = { .func = s->func };

			memcpy(&imm, s->a == IMM ? &s->alpha : &s->beta, 4);
			data[0] = s->a == IMM ? &imm : VAL(s->a);
			data[1] = s->b == IMM ? &imm : VAL(s->b);
			data[2] = r;
			t[0] = s->a == IMM ? one : d;
			t[1] = s->b == IMM ? one : d;
			t[2] = d;
			rc = run_or_fail(_metadata, c->name, VNPU_LAYER_BINARY, t, data, 3, &bin,
					 sizeof(bin), features);
		}
#undef VAL
	}
	for (e = 0; !rc && e < n; e++) {
		et_coords(y, e, crd);
		out[et_offset(y, crd)] = vals[c->inputs + c->a.num_steps - 1][e];
	}
	for (i = 0; i < c->inputs + c->a.num_steps; i++)
		free(vals[i]);
	return rc;
}

/*
 * Random data with NaNs (with payloads and signs: which one a sum of two
 * gives is the first's), infinities and both zeros among it.
 */
static void fill_special(float *p, size_t n)
{
	const float special[] = { 0.0f, -0.0f, INFINITY, -INFINITY, NAN, -3.0f,
				  3.0f, 6.0f, __builtin_nanf("0x4567a"),
				  -__builtin_nanf("0x123") };
	size_t i;

	for (i = 0; i < n; i++) {
		float f = et_randf();

		p[i] = f * 8;
		if (f > 0.9f)
			p[i] = special[(size_t)((f - 0.9f) * 99.9f) % 10];
	}
}

/* @c on every path, whole and in parts, against chain_ref(_metadata). */
static void chain_exact(struct __test_metadata *_metadata, const struct chain_case *c)
{
	static const __u32 parts[] = { 1, 7, 64 };
	const struct vnpu_cmd_tensor *y = &c->t[c->inputs];
	__u32 feats[3] = { 0, VNPU_ENG_F_AVX2_FMA,
			   VNPU_ENG_F_AVX2_FMA | VNPU_ENG_F_AVX512 };
	size_t yb = et_bytes(y);
	void *data[VNPU_CHAIN_MAX_INPUTS + 1];
	float *ref = malloc(yb + 4);
	__u32 i, f, p;
	int rc;

	for (i = 0; i < c->inputs; i++) {
		size_t b = et_bytes(&c->t[i]);

		data[i] = malloc(b + 4);
		fill_special(data[i], b / 4);
	}
	data[c->inputs] = malloc(yb + 4);
	for (f = 0; f < 3; f++) {
		if ((feats[f] & et_host_features) != feats[f])
			continue;
		memset(ref, 0x7f, yb);
		if (chain_ref(_metadata, c, data, ref, feats[f]))
			break;
		for (p = 0; p < 3; p++) {
			memset(data[c->inputs], 0x7f, yb);
			rc = et_run(VNPU_LAYER_CHAIN, c->t, data, c->inputs + 1,
				    &c->a, sizeof(c->a), feats[f], parts[p]);
			EXPECT_TRUE(!rc)
				TH_LOG("%s: chain run failed: %d", c->name, rc);
			EXPECT_TRUE(rc || !memcmp(data[c->inputs], ref, yb))
				TH_LOG("%s: features %u, %u parts: not the steps' bits", c->name,
				       feats[f], parts[p]);
		}
	}
	for (i = 0; i <= c->inputs; i++)
		free(data[i]);
	free(ref);
}

static struct vnpu_cmd_tensor T4(__u64 d0, __u64 d1, __u64 d2, __u64 d3)
{
	__u64 dims[4] = { d0, d1, d2, d3 };

	return et_dense(VNPU_DTYPE_F32, 4, dims);
}

static struct vnpu_cmd_tensor T2(__u64 d0, __u64 d1)
{
	__u64 dims[2] = { d0, d1 };

	return et_dense(VNPU_DTYPE_F32, 2, dims);
}

static void chain_cases(struct __test_metadata *_metadata)
{
	struct chain_case c;
	int i;

	/* HardSwish as exporters write it: x * Clip(x + 3, 0, 6) / 6. */
	memset(&c, 0, sizeof(c));
	c.name = "hardswish written out";
	c.inputs = 1;
	c.t[0] = c.t[1] = T4(2, 3, 5, 37);
	c.a.num_steps = 4;
	c.a.steps[0] = B(VNPU_BIN_ADD, IN(0), IMM, 3.0f);
	c.a.steps[1] = U(VNPU_ACT_CLIP, ST(0), 0.0f, 6.0f);
	c.a.steps[2] = B(VNPU_BIN_MUL, IN(0), ST(1), 0);
	c.a.steps[3] = B(VNPU_BIN_DIV, ST(2), IMM, 6.0f);
	chain_exact(_metadata, &c);

	/* Squeeze-excite: HardSigmoid of a per-channel scale, times x. */
	memset(&c, 0, sizeof(c));
	c.name = "squeeze-excite scale";
	c.inputs = 2;
	c.t[0] = T4(1, 24, 1, 1);
	c.t[1] = c.t[2] = T4(1, 24, 9, 11);
	c.a.num_steps = 2;
	c.a.steps[0] = U(VNPU_ACT_HARD_SIGMOID, IN(0), 1.0f / 6, 0.5f);
	c.a.steps[1] = B(VNPU_BIN_MUL, ST(0), IN(1), 0);
	chain_exact(_metadata, &c);

	/* A residual add and ReLU, the residual of lower rank. */
	memset(&c, 0, sizeof(c));
	c.name = "residual relu";
	c.inputs = 2;
	c.t[0] = T4(3, 4, 17, 19);
	c.t[1] = T2(17, 19);
	c.t[2] = c.t[0];
	c.a.num_steps = 2;
	c.a.steps[0] = B(VNPU_BIN_ADD, IN(0), IN(1), 0);
	c.a.steps[1] = U(VNPU_ACT_RELU, ST(0), 0, 0);
	chain_exact(_metadata, &c);

	/*
	 * An LSTM cell's C = sigmoid(f) * C + sigmoid(i) * tanh(g), the
	 * gates strided views of one [3, 4H] tensor.
	 */
	memset(&c, 0, sizeof(c));
	c.name = "lstm cell, strided gates";
	c.inputs = 4;
	for (i = 0; i < 4; i++)
		c.t[i] = T2(3, 45);
	c.t[0].strides[0] = c.t[2].strides[0] = c.t[3].strides[0] = 4 * 45;
	c.t[4] = T2(3, 45);
	c.a.num_steps = 6;
	c.a.steps[0] = U(VNPU_ACT_SIGMOID, IN(0), 0, 0);
	c.a.steps[1] = B(VNPU_BIN_MUL, ST(0), IN(1), 0);
	c.a.steps[2] = U(VNPU_ACT_SIGMOID, IN(2), 0, 0);
	c.a.steps[3] = U(VNPU_ACT_TANH, IN(3), 0, 0);
	c.a.steps[4] = B(VNPU_BIN_MUL, ST(2), ST(3), 0);
	c.a.steps[5] = B(VNPU_BIN_ADD, ST(1), ST(4), 0);
	chain_exact(_metadata, &c);

	/* Every binary function, immediates on either side, NaNs. */
	memset(&c, 0, sizeof(c));
	c.name = "all binary functions";
	c.inputs = 2;
	c.t[0] = c.t[1] = c.t[2] = T2(61, 67);
	c.a.num_steps = 8;
	c.a.steps[0] = B(VNPU_BIN_SUB, IMM, IN(0), 3.0f);
	c.a.steps[1] = B(VNPU_BIN_MAX, ST(0), IN(1), 0);
	c.a.steps[2] = B(VNPU_BIN_MIN, ST(1), IN(0), 0);
	c.a.steps[3] = B(VNPU_BIN_DIV, IN(1), ST(2), 0);
	c.a.steps[4] = B(VNPU_BIN_MAX, IMM, ST(3), -0.0f);
	c.a.steps[5] = B(VNPU_BIN_MIN, ST(4), IMM, 0.0f);
	c.a.steps[6] = B(VNPU_BIN_MUL, ST(5), ST(0), 0);
	c.a.steps[7] = B(VNPU_BIN_SUB, ST(6), IN(1), 0);
	chain_exact(_metadata, &c);

	/* Scalar inputs (steps on one value), Y transposed. */
	memset(&c, 0, sizeof(c));
	c.name = "scalars, transposed y";
	c.inputs = 2;
	c.t[0] = et_dense(VNPU_DTYPE_F32, 0, NULL);
	c.t[1] = T2(33, 41);
	c.t[2] = T2(33, 41);
	c.t[2].strides[0] = 1;
	c.t[2].strides[1] = 33;
	c.a.num_steps = 4;
	c.a.steps[0] = U(VNPU_ACT_EXP, IN(0), 0, 0);
	c.a.steps[1] = B(VNPU_BIN_ADD, ST(0), IMM, 1.0f);
	c.a.steps[2] = B(VNPU_BIN_MUL, IN(1), ST(1), 0);
	c.a.steps[3] = U(VNPU_ACT_SILU, ST(2), 0, 0);
	chain_exact(_metadata, &c);

	/* Long enough for many units, every unary path on the way. */
	memset(&c, 0, sizeof(c));
	c.name = "long, transcendental";
	c.inputs = 1;
	c.t[0] = c.t[1] = T2(64, 1111);
	c.a.num_steps = 5;
	c.a.steps[0] = U(VNPU_ACT_TANH, IN(0), 0, 0);
	c.a.steps[1] = U(VNPU_ACT_GELU, ST(0), 0, 0);
	c.a.steps[2] = U(VNPU_ACT_HARD_SWISH, IN(0), 0, 0);
	c.a.steps[3] = B(VNPU_BIN_ADD, ST(1), ST(2), 0);
	c.a.steps[4] = U(VNPU_ACT_LEAKY_RELU, ST(3), 0.1f, 0);
	chain_exact(_metadata, &c);
}

struct chain_fixture {
	struct vnpu_cmd_tensor t[6];
	__u32 n;
	struct vnpu_layer_chain a;
};

/* Applies @stmt to a copy of @base and expects the check to fail. */
#define CHAIN_BAD(base, what, stmt) do {				\
	struct chain_fixture f_ = (base), *f = &f_;			\
									\
	stmt;								\
	EXPECT_EQ(VNPU_ENG_EINVAL,					\
		  vnpu_eng_layer_check(VNPU_LAYER_CHAIN, f->t, f->n,	\
				       &f->a, sizeof(f->a)))		\
		TH_LOG("chain: %s accepted", what);			\
} while (0)

static void chain_bad(struct __test_metadata *_metadata)
{
	struct chain_fixture b = { .n = 3 };
	struct vnpu_cmd_tensor big[2] = { T2(1u << 20, 1u << 20),
					  T2(1u << 20, 1u << 20) };
	struct vnpu_layer_chain one = { .num_steps = 1 };

	b.t[0] = b.t[1] = b.t[2] = T2(4, 8);
	b.a.num_steps = 2;
	b.a.steps[0] = B(VNPU_BIN_ADD, IN(0), IN(1), 0);
	b.a.steps[1] = U(VNPU_ACT_RELU, ST(0), 0, 0);
	EXPECT_TRUE(!vnpu_eng_layer_check(VNPU_LAYER_CHAIN, b.t, b.n, &b.a, sizeof(b.a)))
		TH_LOG("chain: the valid layer is rejected");
	EXPECT_EQ(VNPU_ENG_EINVAL,
		  vnpu_eng_layer_check(VNPU_LAYER_CHAIN, b.t, b.n, &b.a, sizeof(b.a) - 8))
		TH_LOG("chain: a short attribute block accepted");
	CHAIN_BAD(b, "no steps", f->a.num_steps = 0);
	CHAIN_BAD(b, "9 steps", f->a.num_steps = VNPU_CHAIN_MAX_STEPS + 1);
	CHAIN_BAD(b, "huge step count", f->a.num_steps = 0xffffffffu);
	CHAIN_BAD(b, "pad", f->a.pad = 1);
	CHAIN_BAD(b, "a step past num_steps", f->a.steps[2] = f->a.steps[0]);
	CHAIN_BAD(b, "an immediate past num_steps", f->a.steps[7].beta = 1);
	CHAIN_BAD(b, "kind 0", f->a.steps[0].kind = 0);
	CHAIN_BAD(b, "kind 3", f->a.steps[0].kind = 3);
	CHAIN_BAD(b, "binary POW", f->a.steps[0].func = VNPU_BIN_POW);
	CHAIN_BAD(b, "binary EQUAL", f->a.steps[0].func = VNPU_BIN_EQUAL);
	CHAIN_BAD(b, "binary past the last", f->a.steps[0].func = VNPU_BIN_COUNT);
	CHAIN_BAD(b, "unary NOT", f->a.steps[1].func = VNPU_ACT_NOT);
	CHAIN_BAD(b, "unary past the last", f->a.steps[1].func = VNPU_ACT_COUNT);
	CHAIN_BAD(b, "unary alpha NaN", f->a.steps[1].alpha = 0x7fc00000u);
	CHAIN_BAD(b, "unary CELU alpha 0", f->a.steps[1].func = VNPU_ACT_CELU);
	CHAIN_BAD(b, "unary operand b", f->a.steps[1].b = IN(1));
	CHAIN_BAD(b, "unary immediate operand", f->a.steps[1].a = IMM);
	CHAIN_BAD(b, "a step reading itself", f->a.steps[1].a = ST(1));
	CHAIN_BAD(b, "a step reading a later one", f->a.steps[0].a = ST(1));
	CHAIN_BAD(b, "input past the inputs", f->a.steps[0].b = IN(2));
	CHAIN_BAD(b, "operand 15", f->a.steps[0].b = 15);
	CHAIN_BAD(b, "operand past the immediate", f->a.steps[0].b = IMM + 1);
	CHAIN_BAD(b, "operand huge", f->a.steps[0].a = 0xffffffffu);
	CHAIN_BAD(b, "two immediates",
		  f->a.steps[0].a = IMM; f->a.steps[0].b = IMM);
	CHAIN_BAD(b, "immediate inf",
		  f->a.steps[0].b = IMM; f->a.steps[0].beta = 0x7f800000u);
	CHAIN_BAD(b, "alpha without an immediate", f->a.steps[0].alpha = 1);
	CHAIN_BAD(b, "beta without an immediate", f->a.steps[0].beta = 1);
	CHAIN_BAD(b, "no inputs", f->n = 1; f->t[0] = f->t[2]);
	CHAIN_BAD(b, "5 inputs", f->n = 6;
		  f->t[3] = f->t[4] = f->t[5] = f->t[0]);
	CHAIN_BAD(b, "f16 input", f->t[0].dtype = VNPU_DTYPE_F16);
	CHAIN_BAD(b, "f64 output", f->t[2].dtype = VNPU_DTYPE_F64);
	CHAIN_BAD(b, "input not broadcasting", f->t[1].dims[1] = 3);
	CHAIN_BAD(b, "input of higher rank", f->t[1] = T4(2, 1, 4, 8));
	CHAIN_BAD(b, "aliased output", f->t[2].strides[0] = 0);

	one.steps[0] = U(VNPU_ACT_NEG, IN(0), 0, 0);
	EXPECT_TRUE(!vnpu_eng_layer_check(VNPU_LAYER_CHAIN, big, 2, &one, sizeof(one)))
		TH_LOG("chain: 2^40 elements rejected");
	EXPECT_GT(vnpu_eng_layer_max_parts(VNPU_LAYER_CHAIN, big, 2, &one, VNPU_ENG_F_AVX2_FMA), 1)
		TH_LOG("chain: a huge chain does not split");
}

TEST(chain)
{
	chain_cases(_metadata);
	chain_bad(_metadata);
}

KSFT_MAIN

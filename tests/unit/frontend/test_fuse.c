// SPDX-License-Identifier: MIT
/*
 * The compiler's pattern fusions (fuse_*.c): each form an exporter writes
 * is fused (fewer layers, the fused type), gives what the unfused program
 * gives within the bound the fusion documents, and is left alone when an
 * intermediate has another reader or a constant differs.
 *
 * Graphs are written as lines "out=Op(in,in)", where "#3" is a scalar f32
 * constant 3, "%g" a constant [8], "&s" one [4, 1, 1] (per channel) and
 * "@alpha=0.2" after the closing parenthesis a float attribute ("@axes=-1"
 * one axis); the model's input is x [1, 4, 8, 8], its outputs the names
 * listed.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fe_test.h"
#include "ksft_main.h"

#define F32 ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT

static const struct vnpu_compile_options unfused = { .no_fusion = true };

/* One line of a graph into @b; constants named by their text. */
static void add_line(struct mb *b, const char *line)
{
	char buf[256], names[3][64], *op, *args, *attr, *out, *save = NULL;
	const char *in[4] = { 0 };
	Onnx__NodeProto *n;
	int ni = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	out = buf;
	op = strchr(buf, '=');
	*op++ = '\0';
	args = strchr(op, '(');
	*args++ = '\0';
	attr = strchr(args, ')');
	*attr++ = '\0';
	for (char *a = strtok_r(args, ",", &save); a && ni < 3; a = strtok_r(NULL, ",", &save)) {
		static unsigned uniq;

		in[ni] = a;
		if (a[0] == '#' || a[0] == '%' || a[0] == '&') {
			float v = strtof(a + 1, NULL);

			/* Each use its own constant (a name defined once). */
			snprintf(names[ni], sizeof(names[ni]), "%s/%u", a, uniq++);
			if (a[0] == '&')
				mb_init_f32(b, names[ni], 3, (const int64_t[]){ 4, 1, 1 }, NULL);
			else
				mb_init_f32(b, names[ni], a[0] == '%', (const int64_t[]){ 8 },
					    a[0] == '#' ? &v : NULL);
			in[ni] = names[ni];
		}
		ni++;
	}
	n = mb_node(b, op, in, (const char *[]){ out, NULL });
	if (attr[0] == '@') {
		char *eq = strchr(attr, '=');

		*eq = '\0';
		if (!strcmp(attr + 1, "axes"))
			mb_attr_ints(n, "axes", 1, (const int64_t[]){ strtoll(eq + 1, NULL, 10) });
		else
			mb_attr_float(n, attr + 1, strtof(eq + 1, NULL));
	}
}

/* What computes x before @lines: the model's input itself, or an op. */
enum prefix {
	PRE_NONE,	/* x is the input [1, 4, 8, 8] */
	PRE_CONV,	/* Conv 4->4 1x1 of in [1, 4, 8, 8] */
	PRE_DECONV_BN,	/* ConvTranspose 4->4 2x2 stride 2 of in [1, 4, 4, 4], a BN */
	PRE_DECONV_G2,	/* the same in 2 groups, with a bias, no BN */
	PRE_MATMUL,	/* MatMul of in [1, 4, 8, 8] by a constant [8, 8] */
	PRE_GEMM,	/* Gemm of in [32, 8] by a constant [8, 8]^T plus C [8]: [32, 8] */
};

/* ConvTranspose 4->4, kernel 2 stride 2, in @group groups, to @out. */
static void deconv_node(struct mb *b, int64_t group, bool bias, const char *out)
{
	Onnx__NodeProto *n;

	mb_init_f32(b, "w", 4, (const int64_t[]){ 4, 4 / group, 2, 2 }, NULL);
	mb_init_f32(b, "b", 1, (const int64_t[]){ 4 }, NULL);
	n = mb_node(b, "ConvTranspose", (const char *[]){ "in", "w", bias ? "b" : NULL, NULL },
		    (const char *[]){ out, NULL });
	mb_attr_ints(n, "kernel_shape", 2, (const int64_t[]){ 2, 2 });
	mb_attr_ints(n, "strides", 2, (const int64_t[]){ 2, 2 });
	mb_attr_int(n, "group", group);
}

/* The op of @pre (not PRE_NONE) from the model's input "in" to "x". */
static void prefix_node(struct mb *b, enum prefix pre)
{
	static const float scale[4] = { 1.5f, -0.75f, 0.25f, 2.0f };
	static const float shift[4] = { 0.125f, -0.5f, 1.0f, 0.0f };
	static const float mean[4] = { 0.1f, -0.2f, 0.0f, 0.3f };
	static const float var[4] = { 0.5f, 2.0f, 1.0f, 0.01f };
	Onnx__NodeProto *n;

	switch (pre) {
	case PRE_CONV:
		mb_init_f32(b, "w", 4, (const int64_t[]){ 4, 4, 1, 1 }, NULL);
		mb_node(b, "Conv", (const char *[]){ "in", "w", NULL }, (const char *[]){ "x", NULL });
		break;
	case PRE_DECONV_BN:
		deconv_node(b, 1, false, "t");
		mb_init_f32(b, "sc", 1, (const int64_t[]){ 4 }, scale);
		mb_init_f32(b, "sh", 1, (const int64_t[]){ 4 }, shift);
		mb_init_f32(b, "mu", 1, (const int64_t[]){ 4 }, mean);
		mb_init_f32(b, "va", 1, (const int64_t[]){ 4 }, var);
		mb_node(b, "BatchNormalization", (const char *[]){ "t", "sc", "sh", "mu", "va", NULL },
			(const char *[]){ "x", NULL });
		break;
	case PRE_DECONV_G2:
		deconv_node(b, 2, true, "x");
		break;
	case PRE_MATMUL:
		mb_init_f32(b, "w", 2, (const int64_t[]){ 8, 8 }, NULL);
		mb_node(b, "MatMul", (const char *[]){ "in", "w", NULL }, (const char *[]){ "x", NULL });
		break;
	default:
		mb_init_f32(b, "w", 2, (const int64_t[]){ 8, 8 }, NULL);
		mb_init_f32(b, "c", 1, (const int64_t[]){ 8 }, NULL);
		n = mb_node(b, "Gemm", (const char *[]){ "in", "w", "c", NULL },
			    (const char *[]){ "x", NULL });
		mb_attr_int(n, "transB", 1);
		mb_attr_float(n, "alpha", 0.5f);
		mb_attr_float(n, "beta", 2.0f);
		break;
	}
}

/* The model of @lines over x, computed as @pre says. */
static vnpu_model *graph_model(const char *const *lines, const char *const *outs,
			       enum prefix pre)
{
	static const int64_t dims[4] = { 1, 4, 8, 8 }, half[4] = { 1, 4, 4, 4 };
	static const int64_t rows[2] = { 32, 8 };
	struct mb *b = mb_new(13);

	if (pre == PRE_GEMM)
		mb_input(b, "in", F32, 2, rows);
	else
		mb_input(b, pre ? "in" : "x", F32, 4,
			 pre == PRE_DECONV_BN || pre == PRE_DECONV_G2 ? half : dims);
	if (pre)
		prefix_node(b, pre);
	for (; *lines; lines++)
		add_line(b, *lines);
	for (; *outs; outs++)
		mb_output(b, *outs);
	return mb_read(b);
}

#define N_IN (1 * 4 * 8 * 8)

/* Inputs across [-10, 10]: both sides of every kink and the tails; with
 * @noise a pattern in [-1, 1) instead. */
static void spread(float *x, bool noise)
{
	if (noise) {
		fe_pattern(x, N_IN, 7);
		return;
	}
	for (int i = 0; i < N_IN; i++)
		x[i] = -10.0f + 20.0f * (float)i / (N_IN - 1);
	x[0] = -3.0f;
	x[1] = 3.0f;
	x[2] = 0.0f;
	x[3] = -0.0f;
}

/*
 * Whether a fused output is within @ulps ulp of max(|x|, |plain|, 1) of
 * the unfused one (bit-identical for 0). A fused activation rounds less
 * often than its written-out form, which rounds each f32 step (1 + Erf(x)
 * near -1 above all), and GELU's float kernel is within 6 ulps of libm
 * (engine-test's vmath): 4 ulp of that scale. A fused LayerNormalization
 * takes its moments in double: 16 ulp on inputs of one scale.
 */
static bool within(float fused, float plain, float x, int ulps)
{
	float scale = fmaxf(fmaxf(fabsf(x), fabsf(plain)), 1.0f);

	if (!ulps)
		return !memcmp(&fused, &plain, sizeof(fused));
	if (isnan(fused) || isnan(plain))
		return isnan(fused) && isnan(plain);
	return fabsf(fused - plain) <= (float)ulps * scale * 0x1p-23f;
}

/* @n fused outputs @a against the unfused @b, within() @ulps; @x the
 * input of each (NULL: 0). */
static void compare(struct __test_metadata *_metadata, const char *what, const float *a,
		    const float *b, size_t n, const float *x,
		    int ulps)
{
	uint32_t bad = 0;

	for (size_t i = 0; i < n; i++) {
		if (within(a[i], b[i], x ? x[i] : 0, ulps))
			continue;
		if (++bad <= 4)
			TH_LOG("  %s: element %zu (x %.9g): fused %.9g, unfused %.9g",
				what, i, x ? x[i] : 0, a[i], b[i]);
	}
	EXPECT_FALSE(bad)
		TH_LOG("%s: %u elements out of bound", what, bad);
}

/*
 * @lines compiled with and without fusion: @want_layers layers of which
 * the first is @want_type (NULL: any) with fusion (0 layers: as many as
 * without), outputs within the bound (exact when @exact). Returns the
 * fused program's layer count. The inputs are spread() (noise with a
 * bound above 4 ulp).
 */
static uint32_t check_graph(struct __test_metadata *_metadata, const char *const *lines,
			    const char *const *outs, enum prefix pre,
			    uint32_t want_layers, const char *want_type, int ulps)
{
	vnpu_model *m = graph_model(lines, outs, pre);
	float x[N_IN], *a[4] = { 0 }, *b[4] = { 0 };
	struct vnpu_program *p, *q;
	uint32_t layers = 0;

	EXPECT_NE(NULL, m);
	if (!m)
		return 0;
	spread(x, ulps > 4);
	p = fe_compile_run(m, NULL, x, a);
	EXPECT_NE(NULL, p);
	q = fe_compile_run(m, &unfused, x, b);
	EXPECT_NE(NULL, q);
	if (p && q) {
		layers = p->num_layers;
		EXPECT_EQ(want_layers ? want_layers : q->num_layers, p->num_layers);
		if (p->num_layers != (want_layers ? want_layers : q->num_layers))
			for (uint32_t l = 0; l < p->num_layers; l++)
				TH_LOG("    layer %u: %s", l, p->layers[l].type);
		EXPECT_FALSE(want_type && p->num_layers && strcmp(p->layers[0].type, want_type))
			TH_LOG("%s: fused as %s, expected %s", lines[0], p->layers[0].type,
			       want_type);
		for (uint32_t o = 0; o < p->num_outputs; o++)
			compare(_metadata, lines[0], a[o], b[o], p->outputs[o].size / 4,
				pre ? NULL : x,
				ulps);
	}
	for (int i = 0; i < 4; i++) {
		free(a[i]);
		free(b[i]);
	}
	vnpu_program_free(p);
	vnpu_program_free(q);
	vnpu_model_free(m);
	return layers;
}

static const char *const y_only[] = { "y", NULL };

#define G(...) ((const char *const[]){ __VA_ARGS__, NULL })

TEST(hard_swish_forms)
{
	check_graph(_metadata, G("a=Add(x,#3)", "c=Clip(a,#0,#6)", "m=Mul(x,c)", "y=Div(m,#6)"),
		    y_only, PRE_NONE, 1, "HardSwish", 4);
	check_graph(_metadata, G("a=Add(#3,x)", "c=Clip(a,#0,#6)", "m=Mul(c,x)",
				 "y=Mul(m,#0.16666667)"),
		    y_only, PRE_NONE, 1, "HardSwish", 4);
	check_graph(_metadata, G("h=HardSigmoid(x)@alpha=0.16666667", "y=Mul(x,h)"),
		    y_only, PRE_NONE, 1, "HardSwish", 4);
	check_graph(_metadata, G("a=Add(x,#3)", "r=Relu(a)", "c=Min(r,#6)", "d=Div(c,#6)",
				 "y=Mul(x,d)"),
		    y_only, PRE_NONE, 1, "HardSwish", 4);
	/* HardSigmoid written out, then times x. */
	check_graph(_metadata, G("d=Div(x,#6)", "a=Add(d,#0.5)", "c=Clip(a,#0,#1)", "y=Mul(x,c)"),
		    y_only, PRE_NONE, 1, "HardSwish", 4);
	/* After a Conv: one layer. */
	check_graph(_metadata, G("a=Add(x,#3)", "c=Clip(a,#0,#6)", "m=Mul(x,c)", "y=Div(m,#6)"),
		    y_only, PRE_CONV, 1, "Conv+HardSwish", 4);
}

TEST(hard_sigmoid_forms)
{
	check_graph(_metadata, G("m=Mul(x,#0.2)", "a=Add(m,#0.5)", "y=Clip(a,#0,#1)"),
		    y_only, PRE_NONE, 1, "HardSigmoid", 4);
	check_graph(_metadata, G("a=Add(x,#3)", "c=Clip(a,#0,#6)", "y=Div(c,#6)"),
		    y_only, PRE_NONE, 1, "HardSigmoid", 4);
	check_graph(_metadata, G("m=Mul(x,#0.2)", "a=Add(m,#0.5)", "y=Clip(a,#0,#1)"),
		    y_only, PRE_CONV, 1, "Conv+HardSigmoid", 4);
}

TEST(gelu_forms)
{
	check_graph(_metadata, G("d=Div(x,#1.4142135)", "e=Erf(d)", "a=Add(e,#1)", "m=Mul(x,a)",
		      "y=Mul(m,#0.5)"), y_only, PRE_NONE, 1, "Gelu", 4);
	check_graph(_metadata, G("h=Mul(#0.5,x)", "d=Mul(x,#0.70710677)", "e=Erf(d)", "a=Add(#1,e)",
		      "y=Mul(h,a)"), y_only, PRE_NONE, 1, "Gelu", 4);
	check_graph(_metadata, G("d=Div(x,#1.4142135)", "e=Erf(d)", "a=Add(e,#1)", "h=Mul(a,#0.5)",
		      "y=Mul(x,h)"), y_only, PRE_CONV, 1, "Conv+Gelu", 4);
	/* The tanh approximation, x^3 as a Pow and as products. */
	check_graph(_metadata, G("p=Pow(x,#3)", "k=Mul(p,#0.044715)", "s=Add(x,k)",
				 "t=Mul(s,#0.7978846)",
		      "h=Tanh(t)", "a=Add(h,#1)", "m=Mul(x,a)", "y=Mul(m,#0.5)"),
		    y_only, PRE_NONE, 1, "GeluTanh", 4);
	check_graph(_metadata, G("q=Mul(x,x)", "p=Mul(q,x)", "k=Mul(#0.044715,p)", "s=Add(k,x)",
		      "t=Mul(#0.7978846,s)", "h=Tanh(t)", "a=Add(#1,h)", "z=Mul(#0.5,x)",
		      "y=Mul(z,a)"), y_only, PRE_NONE, 1, "GeluTanh", 4);
}

TEST(silu_mish_forms)
{
	check_graph(_metadata, G("s=Sigmoid(x)", "y=Mul(x,s)"), y_only, PRE_NONE, 1, "SiLU", 4);
	check_graph(_metadata, G("s=Sigmoid(x)", "y=Mul(s,x)"), y_only, PRE_CONV, 1, "Conv+SiLU",
		    4);
	check_graph(_metadata, G("p=Softplus(x)", "t=Tanh(p)", "y=Mul(x,t)"), y_only, PRE_NONE, 1,
		    "Mish",
		    4);
	check_graph(_metadata, G("e=Exp(x)", "a=Add(e,#1)", "l=Log(a)", "t=Tanh(l)", "y=Mul(t,x)"),
		    y_only, PRE_NONE, 1, "Mish", 4);
}

/* An intermediate read elsewhere, a model output, or a constant not the
 * function's: no activation is recognised; the element-wise ops still
 * join in CHAIN layers (fuse_chain.c), and the outputs are the unfused
 * ones exactly. */
TEST(activation_not_fused)
{
	check_graph(_metadata, G("a=Add(x,#3)", "c=Clip(a,#0,#6)", "m=Mul(x,c)", "y=Div(m,#6)"),
		    G("y", "c"), PRE_NONE, 2, "Add+Clip", 0);
	check_graph(_metadata, G("a=Add(x,#3)", "c=Clip(a,#0,#6)", "m=Mul(x,c)", "y=Div(m,#6)",
		      "z=Neg(a)"), G("y", "z"), PRE_NONE, 3, "Add", 0);
	check_graph(_metadata, G("a=Add(x,#2.5)", "c=Clip(a,#0,#6)", "m=Mul(x,c)", "y=Div(m,#6)"),
		    y_only, PRE_NONE, 1, "Add+Clip+Mul+Div", 0);
	check_graph(_metadata, G("a=Add(x,#3)", "c=Clip(a,#0,#6)", "m=Mul(x,c)", "y=Div(m,#6.01)"),
		    y_only, PRE_NONE, 1, "Add+Clip+Mul+Div", 0);
	check_graph(_metadata, G("d=Mul(x,#0.7)", "e=Erf(d)", "a=Add(e,#1)", "m=Mul(x,a)",
		      "y=Mul(m,#0.5)"), y_only, PRE_NONE, 1, "Mul+Erf+Add+Mul+Mul", 0);
	check_graph(_metadata, G("s=Sigmoid(x)", "y=Mul(x,s)"), G("y", "s"), PRE_NONE, 0, NULL, 0);
	/* x times the sigmoid of -x: not SiLU. */
	check_graph(_metadata, G("n=Neg(x)", "s=Sigmoid(n)", "y=Mul(x,s)"), y_only, PRE_NONE, 1,
		    "Neg+Sigmoid+Mul", 0);
}

#define LN_CORE "m=ReduceMean(x)@axes=-1", "d=Sub(x,m)"
#define LN_VAR(sq) sq, "v=ReduceMean(q)@axes=-1", "e=Add(v,#1e-5)", "s=Sqrt(e)"

TEST(layer_norm_forms)
{
	check_graph(_metadata, G(LN_CORE, LN_VAR("q=Pow(d,#2)"), "n=Div(d,s)", "g=Mul(n,%gamma)",
		      "y=Add(g,%beta)"), y_only, PRE_NONE, 1, "LayerNormalization", 16);
	check_graph(_metadata, G(LN_CORE, LN_VAR("q=Mul(d,d)"), "r=Reciprocal(s)", "n=Mul(d,r)",
		      "g=Mul(%gamma,n)", "y=Add(%beta,g)"), y_only, PRE_NONE, 1,
		    "LayerNormalization", 16);
	/* Without gamma and beta; epsilon first. */
	check_graph(_metadata, G(LN_CORE, "q=Pow(d,#2)", "v=ReduceMean(q)@axes=-1",
				 "e=Add(#1e-3,v)",
		      "s=Sqrt(e)", "y=Div(d,s)"), y_only, PRE_NONE, 1, "LayerNormalization", 16);
}

TEST(layer_norm_not_fused)
{
	/* The centred x read elsewhere; the variance over another axis; a
	 * cube. The element-wise tail joins in one CHAIN layer. */
	check_graph(_metadata, G(LN_CORE, LN_VAR("q=Pow(d,#2)"), "n=Div(d,s)", "y=Add(n,d)"),
		    y_only, PRE_NONE, 5, "ReduceMean", 0);
	check_graph(_metadata, G(LN_CORE, "q=Pow(d,#2)", "v=ReduceMean(q)@axes=-2",
				 "e=Add(v,#1e-5)",
		      "s=Sqrt(e)", "y=Div(d,s)"), y_only, PRE_NONE, 5, "ReduceMean", 0);
	check_graph(_metadata, G(LN_CORE, LN_VAR("q=Pow(d,#3)"), "y=Div(d,s)"), y_only, PRE_NONE, 5,
		    "ReduceMean", 0);
	check_graph(_metadata, G(LN_CORE, LN_VAR("q=Pow(d,#2)"), "y=Div(d,s)"), G("y", "v"),
		    PRE_NONE, 5,
		    "ReduceMean", 0);
}

/* A Mul by a constant per channel or scalar after a Conv folds into its
 * weights: each product rounds once instead of twice, 8 ulp. */
TEST(conv_scale_folds)
{
	check_graph(_metadata, G("m=Mul(x,&s)", "a=Add(m,&b)", "y=Relu(a)"), y_only, PRE_CONV, 1,
		    "Conv+Mul+Add+Relu", 8);
	check_graph(_metadata, G("m=Mul(#0.5,x)", "y=Add(m,&b)"), y_only, PRE_CONV, 1,
		    "Conv+Mul+Add", 8);
	/* Not per channel, or read elsewhere: the Mul stays. */
	check_graph(_metadata, G("y=Mul(x,%s)"), y_only, PRE_CONV, 2, "Conv", 0);
	check_graph(_metadata, G("y=Mul(x,&s)", "z=Neg(x)"), G("y", "z"), PRE_CONV, 3, "Conv", 0);
}

/*
 * A ConvTranspose takes a BatchNormalization and a Mul by a constant per
 * channel into its weights (grouped ones too) and an activation after
 * them (one layer: a CONV, then the COPY of its phases); not a bias
 * Add. Same 8 ulp as a Conv's folds.
 */
TEST(deconv_folds)
{
	check_graph(_metadata, G("y=Relu(x)"), y_only, PRE_DECONV_BN, 1,
		    "ConvTranspose+BatchNorm+Relu", 8);
	check_graph(_metadata, G("m=Mul(x,&s)", "y=Relu(m)"), y_only, PRE_DECONV_G2, 1,
		    "ConvTranspose+Mul+Relu", 8);
	check_graph(_metadata, G("y=Add(x,&b)"), y_only, PRE_DECONV_G2, 2, "ConvTranspose", 0);
	/* The BN's output read elsewhere: nothing fuses after it. */
	check_graph(_metadata, G("y=Relu(x)", "z=Neg(x)"), G("y", "z"), PRE_DECONV_BN, 3,
		    "ConvTranspose+BatchNorm", 8);
}

/*
 * A Mul by a constant per column (or one value) after a MatMul or Gemm
 * with a constant B folds into B (and C): 8 ulp, as a Conv's.
 */
TEST(gemm_scale_folds)
{
	check_graph(_metadata, G("m=Mul(x,%s)", "y=Relu(m)"), y_only, PRE_MATMUL, 1,
		    "MatMul+Mul+Relu", 8);
	check_graph(_metadata, G("m=Mul(#0.5,x)", "y=Add(m,%b)"), y_only, PRE_MATMUL, 1,
		    "MatMul+Mul+Add", 8);
	check_graph(_metadata, G("y=Mul(%s,x)"), y_only, PRE_GEMM, 1, "Gemm+Mul", 8);
	/* Per channel (not per column), or read elsewhere: the Mul stays. */
	check_graph(_metadata, G("y=Mul(x,&s)"), y_only, PRE_MATMUL, 2, "MatMul", 0);
	check_graph(_metadata, G("y=Mul(x,%s)", "z=Neg(x)"), G("y", "z"), PRE_GEMM, 3, "Gemm", 0);
}

/*
 * Element-wise ops feeding each other run as one CHAIN layer, bit for bit
 * the unfused program: per-channel and [8] constants as inputs, scalar
 * constants as immediates (on either side), a value read twice, and
 * chains cut at VNPU_CHAIN_MAX_STEPS steps and VNPU_CHAIN_MAX_INPUTS
 * inputs.
 */
TEST(chain_forms)
{
	check_graph(_metadata, G("m=Mul(x,&s)", "a=Add(m,&b)", "y=Relu(a)"), y_only, PRE_NONE, 1,
		    "Mul+Add+Relu", 0);
	check_graph(_metadata, G("h=HardSigmoid(x)@alpha=0.3", "y=Mul(&s,h)"), y_only, PRE_NONE, 1,
		    "HardSigmoid+Mul", 0);
	check_graph(_metadata, G("a=Sub(#1,x)", "b=Div(#2,a)", "c=Max(b,%g)", "y=Min(c,x)"), y_only,
		    PRE_NONE, 1, "Sub+Div+Max+Min", 0);
	check_graph(_metadata, G("t=Tanh(x)", "m=Mul(t,t)", "y=Sub(m,x)"), y_only, PRE_NONE, 1,
		    "Tanh+Mul+Sub", 0);
	check_graph(_metadata, G("a=Exp(x)", "b=Neg(a)", "c=Abs(b)", "d=Sqrt(c)", "e=Add(d,#1)",
		      "f=Log(e)", "g=Mul(f,#3)", "h=Tanh(g)", "y=Sigmoid(h)"), y_only, PRE_NONE, 2,
		    "Exp", 0);
	check_graph(_metadata, G("a=Add(x,&s)", "b=Add(a,%g)", "c=Mul(b,&t)", "d=Sub(c,%h)",
		      "y=Div(d,&u)"), y_only, PRE_NONE, 2, "Add+Add", 0);
	/* A model output inside: two chains around it. */
	check_graph(_metadata, G("a=Add(x,#3)", "b=Relu(a)", "c=Mul(b,x)", "y=Neg(c)"), G("y", "b"),
		    PRE_NONE, 2, "Add+Relu", 0);
	/* A Pow by 2 is the step x * x (a power spectrum); by 3 no step. */
	check_graph(_metadata, G("a=Pow(x,#2)", "b=Neg(x)", "c=Pow(b,#2)", "y=Add(a,c)"), y_only,
		    PRE_NONE, 1, "Pow+Neg+Pow+Add", 0);
	check_graph(_metadata, G("a=Pow(x,#3)", "y=Add(a,#1)"), y_only, PRE_NONE, 2, "Pow", 0);
}

/* ---- sibling Convs of one input as one (passes.c) ---- */

struct sib_case {
	int64_t m1, m2;		/* output channels */
	int64_t k;		/* kernel k x k, pads k / 2 */
	int64_t stride2;	/* the second Conv's stride (the first's 1) */
	bool bias;		/* both with a bias input */
	bool relu2;		/* a Relu after the second only */
	bool concat;		/* y = Concat(a, b), else y = Softmax(a), z = Softmax(b) */
	bool also_out;		/* the first Conv's output a model output too */
	bool merged;
};

static void sib_conv(struct mb *b, const struct sib_case *c, int i)
{
	const char *w = i ? "w2" : "w1", *bn = i ? "b2" : "b1";
	int64_t m = i ? c->m2 : c->m1, s = i ? c->stride2 : 1, p = c->k / 2;
	float *wd = malloc((size_t)(m * 4 * c->k * c->k) * sizeof(float));
	float bd[16];
	Onnx__NodeProto *n;

	fe_pattern(wd, (size_t)(m * 4 * c->k * c->k), 3 + i);
	fe_pattern(bd, (size_t)m, 9 + i);
	mb_init_f32(b, w, 4, (const int64_t[]){ m, 4, c->k, c->k }, wd);
	if (c->bias)
		mb_init_f32(b, bn, 1, (const int64_t[]){ m }, bd);
	n = mb_node(b, "Conv", (const char *[]){ "x", w, c->bias ? bn : NULL, NULL },
		    (const char *[]){ i ? (c->relu2 ? "c" : "b") : "a", NULL });
	mb_attr_ints(n, "kernel_shape", 2, (const int64_t[]){ c->k, c->k });
	mb_attr_ints(n, "strides", 2, (const int64_t[]){ s, s });
	mb_attr_ints(n, "pads", 4, (const int64_t[]){ p, p, p, p });
	if (i && c->relu2)
		mb_node(b, "Relu", (const char *[]){ "c", NULL }, (const char *[]){ "b", NULL });
	free(wd);
}

/*
 * Two Convs of x [1, 4, 8, 8]: one layer where they merge, the unfused
 * outputs bit for bit either way (each output sums the same products
 * in the same order).
 */
static void check_siblings(struct __test_metadata *_metadata, const struct sib_case *c)
{
	struct mb *b = mb_new(13);
	float x[N_IN], *a[4] = { 0 }, *r[4] = { 0 };
	struct vnpu_program *p, *q;
	vnpu_model *m;

	mb_input(b, "x", F32, 4, (const int64_t[]){ 1, 4, 8, 8 });
	sib_conv(b, c, 0);
	sib_conv(b, c, 1);
	if (c->concat) {
		Onnx__NodeProto *n = mb_node(b, "Concat", (const char *[]){ "a", "b", NULL },
					     (const char *[]){ "y", NULL });

		mb_attr_int(n, "axis", 1);
		mb_output(b, "y");
	} else {
		mb_node(b, "Softmax", (const char *[]){ "a", NULL }, (const char *[]){ "y", NULL });
		mb_node(b, "Softmax", (const char *[]){ "b", NULL }, (const char *[]){ "z", NULL });
		mb_output(b, "y");
		mb_output(b, "z");
	}
	if (c->also_out)
		mb_output(b, "a");
	m = mb_read(b);
	ASSERT_NE(NULL, m);
	fe_pattern(x, N_IN, 5);
	p = fe_compile_run(m, NULL, x, a);
	q = fe_compile_run(m, &unfused, x, r);
	EXPECT_NE(NULL, p);
	EXPECT_NE(NULL, q);
	if (p && q) {
		bool merged = p->num_layers == (c->concat ? 1u : 3u);

		EXPECT_EQ(c->merged, merged)
			TH_LOG("%ld+%ld channels, %ldx%ld: %u layers", (long)c->m1, (long)c->m2,
			       (long)c->k, (long)c->k, p->num_layers);
		for (uint32_t o = 0; o < p->num_outputs; o++)
			compare(_metadata, "siblings", a[o], r[o], p->outputs[o].size / 4, NULL,
				0);
	}
	for (int i = 0; i < 4; i++) {
		free(a[i]);
		free(r[i]);
	}
	vnpu_program_free(p);
	vnpu_program_free(q);
	vnpu_model_free(m);
}

TEST(sibling_convs)
{
	static const struct sib_case cases[] = {
		/* 1x1 and 3x3, with and without biases, into a Concat or not */
		{ 3, 5, 1, 1, false, false, true, false, true },
		{ 3, 5, 1, 1, true, false, false, false, true },
		{ 8, 16, 3, 1, true, false, true, false, true },
		{ 7, 2, 3, 1, false, false, false, false, true },
		/* another stride, another activation, a model output */
		{ 3, 5, 1, 2, false, false, false, false, false },
		{ 3, 5, 1, 1, false, true, false, false, false },
		{ 3, 5, 1, 1, false, false, false, true, false },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_siblings(_metadata, &cases[i]);
}

/* ---- a nearest Resize into the Add reading it (fuse_upsample.c) ---- */

struct up_case {
	int64_t h, w;		/* the Add's H and W (x is [1, 3, h, w]) */
	int64_t kh, kw;		/* MaxPool x by [kh, kw], upsample back */
	const char *coord, *nearest;	/* NULL: the attribute absent */
	float scale_w;		/* the scales input's W (0: sizes instead) */
	bool resize_first;	/* Add(Resize, x), else Add(x, Resize) */
	bool also_out;		/* the upsampled tensor a model output too */
	int64_t opset;
	bool fused;
};

/*
 * x [1, 3, h, w] pooled by [kh, kw] to p, upsampled back to u and added to
 * x: one layer fewer with the fusion where it applies ("Resize+Add"),
 * the unfused outputs bit for bit either way, NaN and infinities among x.
 */
static void check_up_add(struct __test_metadata *_metadata, const struct up_case *c)
{
	int64_t dims[4] = { 1, 3, c->h, c->w }, n = 3 * c->h * c->w;
	float scales[4] = { 1, 1, (float)c->kh, c->scale_w };
	int64_t sizes[4] = { 1, 3, c->h, c->w };
	struct mb *b = mb_new(c->opset);
	float *x = malloc((size_t)n * sizeof(*x)), *a[4] = { 0 }, *r[4] = { 0 };
	struct vnpu_program *p, *q;
	Onnx__NodeProto *nd;
	vnpu_model *m;

	mb_input(b, "x", F32, 4, dims);
	nd = mb_node(b, "MaxPool", (const char *[]){ "x", NULL }, (const char *[]){ "p", NULL });
	mb_attr_ints(nd, "kernel_shape", 2, (const int64_t[]){ c->kh, c->kw });
	mb_attr_ints(nd, "strides", 2, (const int64_t[]){ c->kh, c->kw });
	if (c->opset < 11) {
		mb_init_f32(b, "sc", 1, (const int64_t[]){ 4 }, scales);
		nd = mb_node(b, "Resize", (const char *[]){ "p", "sc", NULL },
			     (const char *[]){ "u", NULL });
	} else if (c->scale_w) {
		mb_init_f32(b, "sc", 1, (const int64_t[]){ 4 }, scales);
		nd = mb_node(b, "Resize", (const char *[]){ "p", "", "sc", NULL },
			     (const char *[]){ "u", NULL });
	} else {
		mb_init_i64(b, "sz", 1, (const int64_t[]){ 4 }, sizes);
		nd = mb_node(b, "Resize", (const char *[]){ "p", "", "", "sz", NULL },
			     (const char *[]){ "u", NULL });
	}
	if (c->coord)
		mb_attr_string(nd, "coordinate_transformation_mode", c->coord);
	if (c->nearest)
		mb_attr_string(nd, "nearest_mode", c->nearest);
	mb_node(b, "Add", c->resize_first ? (const char *[]){ "u", "x", NULL } :
					    (const char *[]){ "x", "u", NULL },
		(const char *[]){ "y", NULL });
	mb_output(b, "y");
	if (c->also_out)
		mb_output(b, "u");
	m = mb_read(b);
	ASSERT_NE(NULL, m);
	fe_pattern(x, (size_t)n, 5);
	x[1] = NAN;
	x[c->w + 2] = INFINITY;
	x[n - 1] = -INFINITY;
	p = fe_compile_run(m, NULL, x, a);
	q = fe_compile_run(m, &unfused, x, r);
	EXPECT_NE(NULL, p);
	EXPECT_NE(NULL, q);
	if (p && q) {
		bool fused = p->num_layers + 1 == q->num_layers;

		EXPECT_EQ(c->fused, fused)
			TH_LOG("%ldx%ld by %ldx%ld: %u layers fused, %u not", (long)c->h,
			       (long)c->w, (long)c->kh, (long)c->kw, p->num_layers,
			       q->num_layers);
		EXPECT_FALSE(fused && strcmp(p->layers[1].type, "Resize+Add"))
			TH_LOG("fused as %s", p->layers[1].type);
		for (uint32_t o = 0; o < p->num_outputs; o++)
			compare(_metadata, "Resize+Add", a[o], r[o], p->outputs[o].size / 4, NULL,
				0);
	}
	for (int i = 0; i < 4; i++) {
		free(a[i]);
		free(r[i]);
	}
	free(x);
	vnpu_program_free(p);
	vnpu_program_free(q);
	vnpu_model_free(m);
}

TEST(upsample_add)
{
	static const struct up_case cases[] = {
		/* dbnet's and YOLO's form, both operand orders */
		{ 16, 16, 2, 2, "asymmetric", "floor", 2, false, false, 13, true },
		{ 16, 16, 2, 2, "asymmetric", "floor", 2, true, false, 13, true },
		/* rows of an odd count of pairs, a tail shorter than 8 */
		{ 6, 22, 2, 2, "asymmetric", "floor", 2, false, false, 13, true },
		{ 2, 2, 2, 2, "asymmetric", "floor", 2, true, false, 13, true },
		/* by 3 along H, by sizes; along H only */
		{ 12, 10, 3, 2, "asymmetric", "floor", 0, false, false, 13, true },
		{ 8, 6, 2, 1, "asymmetric", "floor", 1, true, false, 13, true },
		/* opset 10's Resize: asymmetric and floor */
		{ 8, 8, 2, 2, NULL, NULL, 2, false, false, 10, true },
		/* W by 4: not fused (no fast path) */
		{ 8, 16, 2, 4, "asymmetric", "floor", 4, false, false, 13, false },
		/* another rounding or coordinate mode, a scale not the factor */
		{ 8, 8, 2, 2, "asymmetric", NULL, 2, false, false, 13, false },
		{ 8, 8, 2, 2, NULL, "floor", 2, false, false, 13, false },
		{ 8, 8, 2, 2, "asymmetric", "floor", 2.01f, false, false, 13, false },
		/* the upsampled tensor read elsewhere */
		{ 8, 8, 2, 2, "asymmetric", "floor", 2, false, true, 13, false },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_up_add(_metadata, &cases[i]);
}

KSFT_MAIN

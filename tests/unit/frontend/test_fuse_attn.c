// SPDX-License-Identifier: MIT
/*
 * The attention fusion (fuse_attn.c): self-attention as exporters write it
 * (Hugging Face's BERT: Q, K, V projections, Reshape and Transpose into
 * heads, MatMul, Div, Add of the mask, Softmax, MatMul, Transpose and
 * Reshape back) and its variants become one ATTENTION layer whose outputs
 * are the unfused program's bit for bit; forms it cannot prove equal stay
 * as they are.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fe_test.h"
#include "ksft_main.h"

#define F32 ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT

enum { S = 16, H = 2, D = 8, HD = H * D };

static const struct vnpu_compile_options unfused = { .no_fusion = true };

/* How one model of the family differs from BERT's form. */
struct attn_form {
	const char *scale_op;	/* "Div", "Mul", or NULL: none */
	float scale;
	int mask;		/* 0 none, 1 constant [1, 1, 1, S], 2 computed [1, 1, S, S] */
	int mask_first;		/* Add(mask, s) */
	int k_given;		/* K computed as [1, H, D, S] directly, no Transpose */
	int softmax_axis;	/* -1, or another axis: not fused */
	int scale_input;	/* the scale a computed value: not fused */
	const char *extra_out;	/* a value also a model output, or NULL */
	int shared_k;		/* KT of one head for all: not fused */
};

static void init_pattern(struct mb *b, const char *name, int rank, const int64_t *dims,
			 unsigned seed, float amp)
{
	size_t n = 1;
	float *v;

	for (int i = 0; i < rank; i++)
		n *= (size_t)dims[i];
	v = malloc(n * sizeof(float));
	fe_pattern(v, n, seed);
	for (size_t i = 0; i < n; i++)
		v[i] *= amp;
	mb_init_f32(b, name, rank, dims, v);
	free(v);
}

/* x [1, S, HD] projected by a constant [HD, @cols] into @out. */
static void project(struct mb *b, const char *w, int64_t cols, unsigned seed, const char *out)
{
	init_pattern(b, w, 2, (const int64_t[]){ HD, cols }, seed, 0.5f);
	mb_node(b, "MatMul", (const char *[]){ "x", w, NULL }, (const char *[]){ out, NULL });
}

/* @in [1, S, HD] as heads [1, S, H, D], transposed by @perm into @out. */
static void heads(struct mb *b, const char *in, const char *shape, const int64_t *perm,
		  const char *r, const char *out)
{
	Onnx__NodeProto *n;

	mb_node(b, "Reshape", (const char *[]){ in, shape, NULL }, (const char *[]){ r, NULL });
	n = mb_node(b, "Transpose", (const char *[]){ r, NULL }, (const char *[]){ out, NULL });
	mb_attr_ints(n, "perm", 4, perm);
}

static vnpu_model *attn_model(const struct attn_form *f)
{
	static const int64_t qperm[4] = { 0, 2, 1, 3 }, kperm[4] = { 0, 2, 3, 1 };
	struct mb *b = mb_new(13);
	const char *s = "s";
	Onnx__NodeProto *n;

	mb_input(b, "x", F32, 3, (const int64_t[]){ 1, S, HD });
	mb_init_i64(b, "hshape", 1, (const int64_t[]){ 4 }, (const int64_t[]){ 1, S, H, D });
	mb_init_i64(b, "oshape", 1, (const int64_t[]){ 3 }, (const int64_t[]){ 1, S, HD });
	project(b, "wq", HD, 1, "q0");
	project(b, "wv", HD, 3, "v0");
	heads(b, "q0", "hshape", qperm, "qr", "qh");
	heads(b, "v0", "hshape", qperm, "vr", "vh");
	if (f->k_given) {
		/* K computed transposed: x^T's rows by a constant, [1, H, D, S]. */
		init_pattern(b, "wk", 2, (const int64_t[]){ H * D, HD }, 2, 0.5f);
		n = mb_node(b, "Transpose", (const char *[]){ "x", NULL },
			    (const char *[]){ "xt", NULL });
		mb_attr_ints(n, "perm", 3, (const int64_t[]){ 0, 2, 1 });
		mb_node(b, "MatMul", (const char *[]){ "wk", "xt", NULL },
			(const char *[]){ "k0", NULL });
		mb_init_i64(b, "kshape", 1, (const int64_t[]){ 4 },
			    (const int64_t[]){ 1, H, D, S });
		mb_node(b, "Reshape", (const char *[]){ "k0", "kshape", NULL },
			(const char *[]){ "kt", NULL });
	} else if (f->shared_k) {
		init_pattern(b, "wk", 2, (const int64_t[]){ HD, D }, 2, 0.5f);
		mb_node(b, "MatMul", (const char *[]){ "x", "wk", NULL },
			(const char *[]){ "k0", NULL });
		mb_init_i64(b, "kshape", 1, (const int64_t[]){ 4 },
			    (const int64_t[]){ 1, 1, S, D });
		mb_node(b, "Reshape", (const char *[]){ "k0", "kshape", NULL },
			(const char *[]){ "kr", NULL });
		n = mb_node(b, "Transpose", (const char *[]){ "kr", NULL },
			    (const char *[]){ "kt", NULL });
		mb_attr_ints(n, "perm", 4, (const int64_t[]){ 0, 1, 3, 2 });
	} else {
		project(b, "wk", HD, 2, "k0");
		heads(b, "k0", "hshape", kperm, "kr", "kt");
	}
	mb_node(b, "MatMul", (const char *[]){ "qh", "kt", NULL }, (const char *[]){ "s", NULL });
	if (f->scale_op) {
		const char *c = "c";

		if (f->scale_input) {
			/* The largest element of x: a scalar known at run time. */
			n = mb_node(b, "ReduceMax", (const char *[]){ "x", NULL },
				    (const char *[]){ "c", NULL });
			mb_attr_int(n, "keepdims", 0);
		} else {
			mb_init_f32(b, "c", 0, NULL, &f->scale);
		}
		mb_node(b, f->scale_op, (const char *[]){ s, c, NULL },
			(const char *[]){ "sc", NULL });
		s = "sc";
	}
	if (f->mask) {
		if (f->mask == 1) {
			float m[S];

			for (int i = 0; i < S; i++)
				m[i] = i % 5 == 3 ? -10000.0f : 0.0f;
			mb_init_f32(b, "mask", 4, (const int64_t[]){ 1, 1, 1, S }, m);
		} else {
			project(b, "wm", S, 4, "m0");
			mb_init_i64(b, "mshape", 1, (const int64_t[]){ 4 },
				    (const int64_t[]){ 1, 1, S, S });
			mb_node(b, "Reshape", (const char *[]){ "m0", "mshape", NULL },
				(const char *[]){ "mask", NULL });
		}
		mb_node(b, "Add", f->mask_first ? (const char *[]){ "mask", s, NULL } :
			(const char *[]){ s, "mask", NULL }, (const char *[]){ "a", NULL });
		s = "a";
	}
	n = mb_node(b, "Softmax", (const char *[]){ s, NULL }, (const char *[]){ "p", NULL });
	mb_attr_int(n, "axis", f->softmax_axis);
	mb_node(b, "MatMul", (const char *[]){ "p", "vh", NULL }, (const char *[]){ "o", NULL });
	n = mb_node(b, "Transpose", (const char *[]){ "o", NULL }, (const char *[]){ "t", NULL });
	mb_attr_ints(n, "perm", 4, qperm);
	mb_node(b, "Reshape", (const char *[]){ "t", "oshape", NULL }, (const char *[]){ "y", NULL });
	mb_output(b, "y");
	if (f->extra_out)
		mb_output(b, f->extra_out);
	return mb_read(b);
}

static uint32_t count_type(const struct vnpu_program *p, const char *type)
{
	uint32_t n = 0;

	for (uint32_t l = 0; l < p->num_layers; l++)
		n += !strcmp(p->layers[l].type, type);
	return n;
}

/*
 * @f compiled with and without fusion: one Attention layer when @fused
 * (and @transposes Transposes left), none otherwise; the outputs the
 * same bits either way.
 */
static void check_form(struct __test_metadata *_metadata, const char *what,
		       const struct attn_form *f, bool fused, uint32_t transposes)
{
	vnpu_model *m = attn_model(f);
	float x[S * HD], *a[2] = { 0 }, *b[2] = { 0 };
	struct vnpu_program *p, *q;

	EXPECT_NE(NULL, m);
	if (!m)
		return;
	fe_pattern(x, S * HD, 11);
	p = fe_compile_run(m, NULL, x, a);
	q = fe_compile_run(m, &unfused, x, b);
	EXPECT_NE(NULL, p);
	EXPECT_NE(NULL, q);
	if (p && q) {
		EXPECT_EQ(fused ? 1 : 0, count_type(p, "Attention"))
			TH_LOG("%s: %u Attention layers", what, count_type(p, "Attention"));
		if (fused)
			EXPECT_EQ(transposes, count_type(p, "Transpose"))
				TH_LOG("%s: %u Transposes left", what, count_type(p, "Transpose"));
		for (uint32_t o = 0; o < p->num_outputs; o++) {
			size_t n = p->outputs[o].size / 4, bad = 0;

			for (size_t i = 0; i < n; i++)
				if (memcmp(&a[o][i], &b[o][i], 4) && bad++ < 3)
					TH_LOG("%s: output %u [%zu]: fused %.9g, unfused %.9g",
					       what, o, i, a[o][i], b[o][i]);
			EXPECT_EQ(0, bad);
		}
		for (uint32_t l = 0; fused && !count_type(p, "Attention") && l < p->num_layers; l++)
			TH_LOG("    layer %u: %s", l, p->layers[l].type);
	}
	for (int i = 0; i < 2; i++) {
		free(a[i]);
		free(b[i]);
	}
	vnpu_program_free(p);
	vnpu_program_free(q);
	vnpu_model_free(m);
}

TEST(attention_forms)
{
	/* BERT's: Div by 8, the mask added after. */
	check_form(_metadata, "bert", &(struct attn_form){ "Div", 8.0f, 1, 0, 0, -1 }, true, 0);
	check_form(_metadata, "mul, mask first",
		   &(struct attn_form){ "Mul", 0.35355339f, 1, 1, 0, -1 }, true, 0);
	check_form(_metadata, "computed mask",
		   &(struct attn_form){ "Div", 3.0f, 2, 0, 0, 3 }, true, 0);
	check_form(_metadata, "no mask, no scale", &(struct attn_form){ NULL, 0, 0, 0, 0, -1 },
		   true, 0);
	check_form(_metadata, "K given transposed",
		   &(struct attn_form){ "Div", 8.0f, 1, 0, 1, -1 }, true, 1);
	/* Q's heads read by the model too: their Transpose stays. */
	check_form(_metadata, "Q heads an output",
		   &(struct attn_form){ "Div", 8.0f, 1, 0, 0, -1, 0, "qh" }, true, 1);
}

TEST(attention_not_fused)
{
	check_form(_metadata, "softmax on axis 2",
		   &(struct attn_form){ "Div", 8.0f, 1, 0, 0, 2 }, false, 0);
	check_form(_metadata, "computed scale",
		   &(struct attn_form){ "Div", 8.0f, 1, 0, 0, -1, 1 }, false, 0);
	check_form(_metadata, "scores an output",
		   &(struct attn_form){ "Div", 8.0f, 1, 0, 0, -1, 0, "s" }, false, 0);
	check_form(_metadata, "probabilities an output",
		   &(struct attn_form){ "Div", 8.0f, 1, 0, 0, -1, 0, "p" }, false, 0);
	check_form(_metadata, "K shared by the heads",
		   &(struct attn_form){ "Div", 8.0f, 1, 0, 0, -1, 0, NULL, 1 }, false, 0);
	check_form(_metadata, "zero scale",
		   &(struct attn_form){ "Mul", 0.0f, 1, 0, 0, -1 }, false, 0);
}

KSFT_MAIN

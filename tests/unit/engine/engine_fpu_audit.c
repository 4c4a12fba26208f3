// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * engine-fpu-audit: the longest FPU section every layer op gives at
 * adversarial shapes within the validator's limits.
 *
 * In vnpu.ko a part of a layer is one kernel_fpu_begin/end section with
 * preemption off. For each shape and each kernel path the CPU has, the
 * layer is split into vnpu_eng_layer_max_parts() parts (its units, as far
 * as the cap on parts allows) and into the parts the firmware uses
 * (vnpu_exec_parts() for 2 tiles), every part is timed alone on this
 * thread, and the longest of each split is printed in ms. Where a unit
 * cannot be split (one row of a reduction, one GEMM output's depth), the
 * last column scales the measured figure to the validator's limit.
 *
 * A benchmark that prints figures: nothing is asserted about times.
 * --check only checks that every shape passes vnpu_eng_layer_check()
 * (registered as a unit test, so the audit's shapes stay valid).
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vnpu_engine.h"
#include "vnpu_exec.h"

#define MAX_T 10
#define FW_TILES 2

/**
 * struct shape - one layer of the audit
 * @name: op and shape, for the table
 * @op: &enum vnpu_layer_op
 * @n: tensors
 * @t: tensors, the output last
 * @attrs: the op's attribute struct
 * @attr_size: its size
 * @to_limit: when one unit is one unsplittable piece of work (a row, a
 *	window, a GEMM depth), how many times larger the validator lets that
 *	piece be; 0 when units split with the shape
 */
struct shape {
	const char *name;
	__u32 op, n;
	struct vnpu_cmd_tensor t[MAX_T];
	__u64 attrs[16];
	__u32 attr_size;
	double to_limit;
};

static struct shape shapes[64];
static int num_shapes;

static struct vnpu_cmd_tensor dense(__u32 dtype, __u32 rank, const __u64 *dims)
{
	struct vnpu_cmd_tensor t;
	__s64 st = 1;
	int d;

	memset(&t, 0, sizeof(t));
	t.dtype = dtype;
	t.rank = rank;
	for (d = (int)rank - 1; d >= 0; d--) {
		t.dims[d] = dims[d];
		t.strides[d] = st;
		st *= (__s64)t.dims[d];
	}
	return t;
}

/* A dense tensor of the dims given, and a scalar. */
#define T(dtype, ...) dense((dtype),					\
	sizeof((__u64[]){ __VA_ARGS__ }) / sizeof(__u64),		\
	(__u64[]){ __VA_ARGS__ })

static struct vnpu_cmd_tensor scalar(__u32 dtype)
{
	return dense(dtype, 0, NULL);
}

/* Adds a shape of @op; tensors follow, then fill in attrs. */
static struct shape *add(const char *name, __u32 op, double to_limit,
			 const void *attrs, __u32 attr_size, __u32 n, ...)
{
	struct shape *s = &shapes[num_shapes++];
	va_list ap;
	__u32 i;

	s->name = name;
	s->op = op;
	s->n = n;
	s->to_limit = to_limit;
	s->attr_size = attr_size;
	if (attr_size)
		memcpy(s->attrs, attrs, attr_size);
	va_start(ap, n);
	for (i = 0; i < n; i++)
		s->t[i] = va_arg(ap, struct vnpu_cmd_tensor);
	va_end(ap);
	return s;
}

#define F32 VNPU_DTYPE_F32
#define F16 VNPU_DTYPE_F16
#define BF16 VNPU_DTYPE_BF16
#define I64 VNPU_DTYPE_I64
#define I32 VNPU_DTYPE_I32
#define U8 VNPU_DTYPE_U8
#define I8 VNPU_DTYPE_I8
#define K(x) ((__u64)(x) << 10)
#define M(x) ((__u64)(x) << 20)

static __u32 fbits(float f)
{
	__u32 u;

	memcpy(&u, &f, 4);
	return u;
}

static void gemm_conv_shapes(void)
{
	struct vnpu_layer_gemm g = { .alpha = fbits(1) };
	struct vnpu_layer_conv c = {
		.group = 1, .kernel = { 1, 1 }, .stride = { 1, 1 },
		.dilation = { 1, 1 },
	};

	add("gemm 6x16, K 2^17", VNPU_LAYER_GEMM, 4, &g, sizeof(g), 3,
	    T(F32, 6, K(128)), T(F32, K(128), 16),
	    T(F32, 6, 16));
	add("gemm 1x1 x64 batch, K 2^16", VNPU_LAYER_GEMM, 8, &g, sizeof(g), 3,
	    T(F32, 64, 1, K(64)), T(F32, 64, K(64), 1),
	    T(F32, 64, 1, 1));
	add("gemm 96x512, K 2^14", VNPU_LAYER_GEMM, 32, &g, sizeof(g), 3,
	    T(F32, 96, K(16)), T(F32, K(16), 512),
	    T(F32, 96, 512));
	/* Stride 5: im2col, no window of the whole depth. */
	c.stride[0] = c.stride[1] = 5;
	add("conv 1x1 s5, C 2^17, 4x4 out", VNPU_LAYER_CONV, 4, &c, sizeof(c),
	    3, T(F32, 1, K(128), 16, 16), T(F32, 6, K(128), 1, 1),
	    T(F32, 1, 6, 4, 4));
	c.stride[0] = c.stride[1] = 1;
	c.kernel[1] = 4096;
	add("conv 1-D kw 4096, C 16, W 1024", VNPU_LAYER_CONV, 8, &c,
	    sizeof(c), 3, T(F32, 1, 16, 5119),
	    T(F32, 6, 16, 4096), T(F32, 1, 6, 1024));
	c.group = 1;
	c.kernel[0] = 3;
	c.kernel[1] = 3;
	c.pad_begin[0] = c.pad_begin[1] = c.pad_end[0] = c.pad_end[1] = 1;
	/* Winograd's deepest GEMMs (the weights' values do not matter). */
	c.flags = VNPU_LAYER_F_WINO;
	add("conv 3x3 winograd, C 1024, 96 x 64x64", VNPU_LAYER_CONV, 0, &c,
	    sizeof(c), 3, T(F32, 1, VNPU_WINO_MAX_C, 64, 64),
	    T(F32, vnpu_eng_packed_size(VNPU_PACK_WINO_W, 1, 96,
					VNPU_WINO_MAX_C * 9)),
	    T(F32, 1, 96, 64, 64));
	c.flags = 0;
	c.group = 4;
	add("depthwise 3x3, 4 x 2048x2048", VNPU_LAYER_CONV, 0, &c, sizeof(c),
	    3, T(F32, 1, 4, 2048, 2048), T(F32, 4, 1, 3, 3),
	    T(F32, 1, 4, 2048, 2048));
	c.group = 1;
	c.kernel[0] = 1;
	c.kernel[1] = 9;
	c.pad_begin[0] = c.pad_end[0] = 0;
	c.pad_begin[1] = c.pad_end[1] = 4;
	add("depthwise 1-D k9, W 2^22", VNPU_LAYER_CONV, 0, &c, sizeof(c), 3,
	    T(F32, 1, 1, M(4)), T(F32, 1, 1, 9),
	    T(F32, 1, 1, M(4)));
	c.kernel[1] = K(64);
	c.pad_begin[1] = 0;
	c.pad_end[1] = 0;
	add("depthwise 1-D k2^16, W 2^10 out", VNPU_LAYER_CONV, 8, &c,
	    sizeof(c), 3, T(F32, 1, 1, K(65) - 1), T(F32, 1, 1,
	    K(64)), T(F32, 1, 1, K(1)));
}

static void pool_shapes(void)
{
	struct vnpu_layer_pool p = {
		.mode = VNPU_POOL_AVG, .kernel = { 2048, 2048 },
		.stride = { 1, 1 }, .dilation = { 1, 1 },
	};
	struct vnpu_layer_pool_index pi = {
		.kernel = { 512, 512 }, .stride = { 64, 64 },
		.dilation = { 1, 1 },
	};

	add("global avgpool 2048x2048", VNPU_LAYER_POOL, 4, &p, sizeof(p), 2,
	    T(F32, 1, 1, 2048, 2048), T(F32, 1, 1, 1, 1));
	p.mode = VNPU_POOL_LP;
	p.p = 3;
	p.kernel[0] = p.kernel[1] = 1024;
	add("global lppool p3 1024x1024", VNPU_LAYER_POOL, 16, &p, sizeof(p),
	    2, T(F32, 1, 1, 1024, 1024), T(F32, 1, 1, 1, 1));
	p.mode = VNPU_POOL_MAX;
	p.p = 0;
	p.kernel[0] = p.kernel[1] = 64;
	p.stride[0] = p.stride[1] = 1;
	add("maxpool 64x64 s1, 64 outputs", VNPU_LAYER_POOL, 0, &p, sizeof(p),
	    2, T(F16, 1, 1, 71, 71), T(F16, 1, 1, 8, 8));
	add("maxpool-index 512x512 s64", VNPU_LAYER_MAXPOOL_INDEX, 0, &pi,
	    sizeof(pi), 3, T(F32, 1, 1, 1024, 1024),
	    T(F32, 1, 1, 9, 9), T(I64, 1, 1, 9, 9));
}

static void elem_shapes(void)
{
	static const struct { __u32 func; const char *name; } un[] = {
		{ VNPU_ACT_ERF, "unary erf f32 2^22" },
		{ VNPU_ACT_ACOSH, "unary acosh f32 2^22" },
		{ VNPU_ACT_MISH, "unary mish f32 2^22" },
		{ VNPU_ACT_TAN, "unary tan f32 2^22" },
	};
	struct vnpu_layer_binary b = { .func = VNPU_BIN_POW };
	struct vnpu_layer_act a = { 0 };
	size_t i;

	for (i = 0; i < sizeof(un) / sizeof(un[0]); i++) {
		a.func = un[i].func;
		add(un[i].name, VNPU_LAYER_UNARY, 0, &a, sizeof(a), 2,
		    T(F32, M(4)), T(F32, M(4)));
	}
	a.func = VNPU_ACT_GELU;
	add("unary gelu bf16 2^22", VNPU_LAYER_UNARY, 0, &a, sizeof(a), 2,
	    T(BF16, M(4)), T(BF16, M(4)));
	add("binary pow f32 2^22", VNPU_LAYER_BINARY, 0, &b, sizeof(b), 3,
	    T(F32, M(4)), T(F32, M(4)), T(F32, M(4)));
	b.func = VNPU_BIN_FMOD;
	add("binary fmod f16 2^22", VNPU_LAYER_BINARY, 0, &b, sizeof(b), 3,
	    T(F16, M(4)), T(F16, M(4)), T(F16, M(4)));
	add("where f32 2^22", VNPU_LAYER_WHERE, 0, NULL, 0, 4,
	    T(VNPU_DTYPE_BOOL, M(4)), T(F32, M(4)),
	    T(F32, M(4)), T(F32, M(4)));
	add("cast f32->bf16 2^22", VNPU_LAYER_CAST, 0, NULL, 0, 2,
	    T(F32, M(4)), T(BF16, M(4)));
}

static void row_shapes(void)
{
	struct vnpu_layer_softmax sm = { .mode = VNPU_SOFTMAX };
	struct vnpu_layer_norm nl = {
		.mode = VNPU_NORM_LAYER, .epsilon = fbits(1e-5f),
	};
	struct vnpu_layer_reduce r = { .func = VNPU_REDUCE_SUM, .axes = 2 };
	struct vnpu_layer_argreduce ar = { .axis = 0 };

	add("softmax 1 row of 2^20", VNPU_LAYER_SOFTMAX, 256, &sm, sizeof(sm),
	    2, T(F32, M(1)), T(F32, M(1)));
	sm.mode = VNPU_LOG_SOFTMAX;
	add("logsoftmax bf16 1 row of 2^20", VNPU_LAYER_SOFTMAX, 256, &sm,
	    sizeof(sm), 2, T(BF16, M(1)), T(BF16, M(1)));
	sm.mode = VNPU_SOFTMAX;
	add("softmax 256 rows of 2^12", VNPU_LAYER_SOFTMAX, 0, &sm,
	    sizeof(sm), 2, T(F32, 256, 4096), T(F32, 256, 4096));
	add("layernorm 1 row of 2^20", VNPU_LAYER_NORM, 256, &nl, sizeof(nl),
	    3, T(F32, 1, M(1)), T(F32, M(1)),
	    T(F32, 1, M(1)));
	nl.mode = VNPU_NORM_INSTANCE;
	add("instancenorm 1x1x1024x1024", VNPU_LAYER_NORM, 256, &nl,
	    sizeof(nl), 4, T(F32, 1, 1, 1024, 1024), T(F32, 1),
	    T(F32, 1), T(F32, 1, 1, 1024, 1024));
	memset(&nl, 0, sizeof(nl));
	nl.mode = VNPU_NORM_LP;
	nl.p = 2;
	add("lpnorm p2 1 lane of 2^20", VNPU_LAYER_NORM, 256, &nl, sizeof(nl),
	    2, T(F32, M(1)), T(F32, M(1)));
	memset(&nl, 0, sizeof(nl));
	nl.mode = VNPU_NORM_LRN;
	nl.size = 4096;
	nl.alpha = fbits(1e-4f);
	nl.beta = fbits(0.75f);
	nl.bias = fbits(1);
	add("lrn size 4096, C 4096, 1 lane", VNPU_LAYER_NORM, 0, &nl,
	    sizeof(nl), 2, T(F32, 1, 4096), T(F32, 1, 4096));
	nl.size = 5;
	add("lrn size 5, 64x256x256", VNPU_LAYER_NORM, 0, &nl, sizeof(nl), 2,
	    T(F32, 1, 64, 256, 256), T(F32, 1, 64, 256, 256));
	add("reducesum 1 row of 2^22", VNPU_LAYER_REDUCE, 64, &r, sizeof(r), 2,
	    T(F32, 1, M(4)), T(F32, 1, 1));
	r.func = VNPU_REDUCE_LOG_SUM_EXP;
	add("reducelogsumexp 1 row of 2^20", VNPU_LAYER_REDUCE, 256, &r,
	    sizeof(r), 2, T(F32, 1, M(1)), T(F32, 1, 1));
	r.func = VNPU_REDUCE_L2;
	r.axes = 1;
	add("reducel2 axis 0 of [2^20, 4]", VNPU_LAYER_REDUCE, 256, &r,
	    sizeof(r), 2, T(F16, M(1), 4), T(F16, 1, 4));
	add("argmax 1 row of 2^22", VNPU_LAYER_ARGREDUCE, 64, &ar, sizeof(ar),
	    2, T(F32, M(4)), T(I64, 1));
}

static void data_shapes(void)
{
	struct vnpu_layer_resize rz = {
		.mode = VNPU_RESIZE_CUBIC, .coord = VNPU_COORD_HALF_PIXEL,
		.cubic_a = fbits(-0.75f),
	};
	struct vnpu_layer_pad pd = {
		.mode = VNPU_PAD_REFLECT, .begin = { 2, 2 },
	};
	struct vnpu_layer_gather ga = { .axis = 0 };
	struct vnpu_layer_gather_nd gn = { 0 };
	struct vnpu_layer_grid_sample gs = { .mode = VNPU_RESIZE_CUBIC };

	add("resize cubic rank 4, 2^16 out", VNPU_LAYER_RESIZE, 0, &rz,
	    sizeof(rz), 2, T(F32, 8, 8, 8, 8),
	    T(F32, 16, 16, 16, 16));
	add("resize cubic rank 8, 2^12 out", VNPU_LAYER_RESIZE, 0, &rz,
	    sizeof(rz), 2, T(F32, 1, 1, 2, 2, 2, 2, 2, 2),
	    T(F32, 1, 1, 4, 4, 4, 4, 4, 4));
	rz.mode = VNPU_RESIZE_LINEAR;
	rz.cubic_a = 0;
	add("resize linear 2x, 2048x2048 out", VNPU_LAYER_RESIZE, 0, &rz,
	    sizeof(rz), 2, T(F16, 1, 1, 1024, 1024),
	    T(F16, 1, 1, 2048, 2048));
	add("pad reflect 2048x2048", VNPU_LAYER_PAD, 0, &pd, sizeof(pd), 2,
	    T(F32, 2044, 2044), T(F32, 2048, 2048));
	add("gather axis 0, 2^12 rows of 2^10", VNPU_LAYER_GATHER, 0, &ga,
	    sizeof(ga), 3, T(F32, 4096, 1024), T(I64, 4096),
	    T(F32, 4096, 1024));
	add("gatherelements 2048x2048", VNPU_LAYER_GATHER_ELEMENTS, 0, &ga,
	    sizeof(ga), 3, T(F32, 2048, 2048),
	    T(I32, 2048, 2048), T(F32, 2048, 2048));
	add("gathernd k1, 2^22 slices of 1", VNPU_LAYER_GATHER_ND, 0, &gn,
	    sizeof(gn), 3, T(F32, M(4)), T(I64, M(4), 1),
	    T(F32, M(4)));
	add("gridsample cubic 16x512x512", VNPU_LAYER_GRID_SAMPLE, 0, &gs,
	    sizeof(gs), 3, T(F32, 1, 16, 512, 512),
	    T(F32, 1, 512, 512, 2), T(F32, 1, 16, 512, 512));
}

static void quant_shapes(void)
{
	struct vnpu_layer_quant q = { 0 };
	struct vnpu_layer_qgemm qg = { 0 };
	struct vnpu_layer_conv c = {
		.group = 1, .kernel = { 3, 3 }, .stride = { 1, 1 },
		.dilation = { 1, 1 }, .pad_begin = { 1, 1 }, .pad_end = { 1, 1 },
	};
	struct vnpu_cmd_tensor s = scalar(F32), z8 = scalar(U8);

	add("quantize f32->u8 2^22", VNPU_LAYER_QUANTIZE, 0, &q, sizeof(q), 4,
	    T(F32, M(4)), s, z8, T(U8, M(4)));
	add("dequantize i32->f32 2^22", VNPU_LAYER_DEQUANTIZE, 0, &q,
	    sizeof(q), 4, T(I32, M(4)), s, scalar(I32),
	    T(F32, M(4)));
	add("matmulinteger 1x2^12, K 2^12", VNPU_LAYER_MATMUL_INTEGER, 0, &qg,
	    sizeof(qg), 5, T(U8, 1, K(4)), T(U8, K(4), 4096),
	    z8, z8, T(I32, 1, 4096));
	add("qlinearmatmul 1x2^12, K 2^12", VNPU_LAYER_QLINEAR_MATMUL, 0, &qg,
	    sizeof(qg), 9, T(U8, 1, K(4)), s, z8,
	    T(U8, K(4), 4096), s, z8, s, z8, T(U8, 1, 4096));
	add("qlinearconv 3x3, C 256, 1x4096 out", VNPU_LAYER_QLINEAR_CONV, 0,
	    &c, sizeof(c), 9, T(U8, 1, 256, 1, 4096), s, z8,
	    T(U8, 16, 256, 3, 3), s, z8, s, z8,
	    T(U8, 1, 16, 1, 4096));
}

static void misc_shapes(void)
{
	struct vnpu_layer_scatter sc = { .reduction = VNPU_SCATTER_ADD };
	struct vnpu_layer_tfidf tf = {
		.min_gram = 1, .max_gram = 2, .max_skip = 256,
		.mode = VNPU_TFIDF_TFIDF,
	};
	struct vnpu_layer_roi_align ra = {
		.sampling_ratio = 128, .spatial_scale = fbits(1),
	};

	add("scatterelements add 2^22", VNPU_LAYER_SCATTER_ELEMENTS, 0, &sc,
	    sizeof(sc), 4, T(F32, M(4)), T(I64, M(4)),
	    T(F32, M(4)), T(F32, M(4)));
	sc.reduction = VNPU_SCATTER_NONE;
	add("scatternd data 2^22, 2^10 updates", VNPU_LAYER_SCATTER_ND, 0, &sc,
	    sizeof(sc), 4, T(F32, M(4)), T(I64, 1024, 1),
	    T(F32, 1024), T(F32, M(4)));
	add("tfidf 1 row of 2^12, skip 256", VNPU_LAYER_TFIDF, 0, &tf,
	    sizeof(tf), 6, T(I64, 1, K(4)), T(I64, 64),
	    T(I64, 2), T(I64, 48), T(F32, 48),
	    T(F32, 1, 48));
	add("det 8x8, 2^16 matrices", VNPU_LAYER_DET, 0, NULL, 0, 2,
	    T(F32, K(64), 8, 8), T(F32, K(64)));
	add("roialign ratio 128, 16x7x7", VNPU_LAYER_ROI_ALIGN, 0, &ra,
	    sizeof(ra), 4, T(F32, 1, 16, 64, 64), T(F32, 1, 4),
	    T(I64, 1), T(F32, 1, 16, 7, 7));
}

/* ---- data ------------------------------------------------------------ */

static size_t bytes_of(const struct vnpu_cmd_tensor *t)
{
	size_t n = 1;
	__u32 d;

	for (d = 0; d < t->rank; d++)
		n *= t->dims[d];
	return n * vnpu_eng_dtype_size(t->dtype);
}

static void fill(const struct vnpu_cmd_tensor *t, void *p)
{
	size_t n = bytes_of(t) / vnpu_eng_dtype_size(t->dtype), i;
	unsigned int x = 12345;

	for (i = 0; i < n; i++) {
		float f;

		x = x * 1103515245u + 12345u;
		f = 1.0f + (float)(x >> 8) / (float)(1u << 24);
		switch (t->dtype) {
		case F32:
			((float *)p)[i] = f;
			break;
		case F16:	/* 1.0 to 2.0 */
			((__u16 *)p)[i] = (__u16)(0x3c00 + (x >> 22));
			break;
		case BF16:
			((__u16 *)p)[i] = (__u16)(fbits(f) >> 16);
			break;
		default:	/* indices 0; integers and bools small */
			break;
		}
	}
}

/* Inputs some ops need: boxes, token pools. */
static void fill_special(const struct shape *s, void **data)
{
	__s64 *v;
	size_t i;

	if (s->op == VNPU_LAYER_ROI_ALIGN) {
		float *box = data[1];

		box[0] = 0;
		box[1] = 0;
		box[2] = 63;
		box[3] = 63;
	}
	if (s->op == VNPU_LAYER_TFIDF) {
		/* 32 unigrams 0..31, 16 bigrams; indexes 0..47. */
		v = data[1];
		for (i = 0; i < 64; i++)
			v[i] = (__s64)(i < 32 ? i : i % 32);
		v = data[2];
		v[0] = 0;
		v[1] = 32;
		v = data[3];
		for (i = 0; i < 48; i++)
			v[i] = (__s64)i;
		v = data[0];
		for (i = 0; i < K(4); i++)
			v[i] = (__s64)(i % 40);
	}
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static __u32 fw_parts(const struct shape *s, __u32 features)
{
	size_t size = sizeof(struct vnpu_cmd_layer) +
		      s->n * sizeof(struct vnpu_cmd_tensor) + s->attr_size;
	struct vnpu_cmd_layer *c = calloc(1, (size + 7) / 8 * 8);
	__u32 parts;

	if (!c)
		return 0;
	c->hdr.opcode = VNPU_CMD_LAYER;
	c->hdr.size = (__u32)((size + 7) / 8 * 8);
	c->op = s->op;
	c->num_tensors = s->n;
	c->num_outputs = 1;
	c->attr_size = s->attr_size;
	memcpy(c->tensors, s->t, s->n * sizeof(struct vnpu_cmd_tensor));
	memcpy(&c->tensors[s->n], s->attrs, s->attr_size);
	parts = vnpu_exec_parts(&c->hdr, FW_TILES * VNPU_EXEC_FW_PARTS_PER_TILE,
				VNPU_EXEC_FW_CHUNK_COST, features);
	free(c);
	return parts;
}

/* This thread's CPU time: a host preemption is not part of a stretch. */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/*
 * The engine's pause points (struct vnpu_eng_ctx pause), where vnpu.ko may
 * end the FPU section: the longest stretch of a run without one, from the
 * part's start, between pauses, to its end, in CPU time (vnpu.ko runs an
 * FPU section with preemption off).
 */
struct stretch {
	double last, longest;
};

static void on_pause(void *arg)
{
	struct stretch *st = arg;
	double t = cpu_now();

	if (t - st->last > st->longest)
		st->longest = t - st->last;
	st->last = t;
}

/*
 * Ms of part @p of @parts, or -1 when it fails; its longest stretch
 * without a pause point, in ms, to *@gap.
 */
static double time_one(const struct shape *s, void **data, __u32 p,
		       __u32 parts, struct vnpu_eng_ctx *ctx, double *gap)
{
	struct stretch st = { 0, 0 };
	double t = now();

	ctx->pause = on_pause;
	ctx->pause_arg = &st;
	st.last = cpu_now();
	if (vnpu_eng_layer_run(s->op, s->t, data, s->n, s->attrs, p, parts,
			       ctx))
		return -1;
	on_pause(&st);
	*gap = st.longest * 1e3;
	return (now() - t) * 1e3;
}

/*
 * The longest part of @parts in ms, or -1; all parts' ms to *@total, the
 * longest stretch without a pause point to *@gap.
 */
static double longest_part(const struct shape *s, void **data,
			   __u32 features, __u32 parts, double *total,
			   double *gap)
{
	__u64 need = vnpu_eng_layer_scratch(s->op, s->t, s->n, s->attrs, parts,
					    features);
	struct vnpu_eng_ctx ctx = { .features = features };
	double longest = -1, t, t2 = 0, g, g2;
	__u32 p;
	int r;

	*gap = 0;
	ctx.scratch_size = vnpu_eng_host_scratch_size(need);
	ctx.scratch = need ? vnpu_eng_host_alloc(ctx.scratch_size) : NULL;
	if (need && !ctx.scratch)
		return -1;
	for (p = 0; p < parts; p++) {
		t = time_one(s, data, p, parts, &ctx, &g);
		/* A new longest: the best of 3, other load only adds. */
		for (r = 0; r < 2 && (t > longest || g > *gap); r++) {
			t2 = time_one(s, data, p, parts, &ctx, &g2);
			t = t2 < t ? t2 : t;
			g = g2 < g ? g2 : g;
		}
		if (g > *gap)
			*gap = g;
		if (t < 0 || t2 < 0) {
			longest = -1;
			break;
		}
		if (t > longest)
			longest = t;
		*total += t;
	}
	vnpu_eng_host_free(ctx.scratch, ctx.scratch_size);
	return longest;
}

static const char *path_name(__u32 f)
{
	return f & VNPU_ENG_F_AVX512 ? "avx512" :
	       f & VNPU_ENG_F_AVX2_FMA ? "avx2" : "base";
}

static int audit(const struct shape *s, const __u32 *paths, int num_paths)
{
	void *data[MAX_T];
	__u32 i;
	int p, rc = 0;

	for (i = 0; i < s->n; i++) {
		data[i] = vnpu_eng_host_alloc(bytes_of(&s->t[i]));
		if (!data[i]) {
			fprintf(stderr, "engine-fpu-audit: out of memory\n");
			return 1;
		}
		fill(&s->t[i], data[i]);
	}
	fill_special(s, data);
	for (p = 0; p < num_paths; p++) {
		__u32 f = paths[p];
		__u32 units = vnpu_eng_layer_max_parts(s->op, s->t, s->n,
						       s->attrs, f);
		__u32 fw = fw_parts(s, f);
		double all_ms = 0, unit_ms, fw_ms, gap_ms;

		unit_ms = longest_part(s, data, f, units, &all_ms, &gap_ms);
		all_ms = 0;
		fw_ms = longest_part(s, data, f, fw, &all_ms, &gap_ms);
		char lim[32] = "";

		if (unit_ms < 0 || fw_ms < 0) {
			fprintf(stderr, "engine-fpu-audit: %s: run failed\n",
				s->name);
			rc = 1;
			break;
		}
		if (s->to_limit > 1)
			snprintf(lim, sizeof(lim), "%.0f", unit_ms * s->to_limit);
		printf("%-36s %-6s %7u %9.2f %7u %9.2f %9.2f %10s %8.2f\n",
		       p ? "" : s->name, path_name(f), units, unit_ms, fw, fw_ms,
		       gap_ms, lim, all_ms * 1e6 / (double)vnpu_eng_layer_cost(s->op,
		       s->t, s->n, s->attrs));
		fflush(stdout);
	}
	for (i = 0; i < s->n; i++)
		vnpu_eng_host_free(data[i], bytes_of(&s->t[i]));
	return rc;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: engine-fpu-audit [--only SUBSTRING] [--baseline-only] [--check]\n"
		"The longest part (an FPU section in vnpu.ko) of every layer op at\n"
		"adversarial shapes, on each kernel path the CPU has: split into\n"
		"the layer's units (max_parts) and as the firmware splits it for\n"
		"%d tiles (fw). 'pause ms': of the fw split, the longest stretch\n"
		"(thread CPU time) without a pause point (part start, engine\n"
		"pauses, part end): the longest FPU section vnpu.ko cannot end.\n"
		"'at limit': the unit scaled to the largest unsplittable work\n"
		"the validator allows.\n"
		"--only: shapes whose name contains SUBSTRING\n"
		"--baseline-only: the baseline path only\n"
		"--check: only check that every shape is a valid layer\n",
		FW_TILES);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "only", required_argument, NULL, 'o' },
		{ "baseline-only", no_argument, NULL, 'b' },
		{ "check", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	__u32 host = vnpu_eng_host_features(), paths[3];
	const char *only = NULL;
	int num_paths = 0, check = 0, base_only = 0, c, i, rc = 0;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			only = optarg;
			break;
		case 'b':
			base_only = 1;
			break;
		case 'c':
			check = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}
	gemm_conv_shapes();
	pool_shapes();
	elem_shapes();
	row_shapes();
	data_shapes();
	quant_shapes();
	misc_shapes();
	for (i = 0; i < num_shapes; i++) {
		const struct shape *s = &shapes[i];

		if (vnpu_eng_layer_check(s->op, s->t, s->n, s->attrs,
					 s->attr_size)) {
			fprintf(stderr, "engine-fpu-audit: %s: not a valid layer\n",
				s->name);
			rc = 1;
		}
	}
	if (check || rc)
		return rc;
	if (!base_only && host & VNPU_ENG_F_AVX512)
		paths[num_paths++] = VNPU_ENG_F_AVX2_FMA | VNPU_ENG_F_AVX512;
	if (!base_only && host & VNPU_ENG_F_AVX2_FMA)
		paths[num_paths++] = VNPU_ENG_F_AVX2_FMA;
	paths[num_paths++] = 0;
	printf("%-36s %-6s %7s %9s %7s %9s %9s %10s %8s\n", "layer", "path",
	       "units", "unit ms", "fw", "fw ms", "pause ms", "at limit",
	       "ns/cost");
	for (i = 0; i < num_shapes && !rc; i++)
		if (!only || strstr(shapes[i].name, only))
			rc = audit(&shapes[i], paths, num_paths);
	return rc;
}

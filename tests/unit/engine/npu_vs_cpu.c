// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The NPU (vnpu.ko's simulated device) and the host engine give identical
 * bits: one job of many layer commands runs on the device, the same layers
 * run through the engine linked into this program with the device's engine
 * features, and every output must match byte for byte. On
 * kselftest_harness.h (tests/ksft_main.h); without the device it skips.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <drm.h>
#include <drm/vnpu_drm.h>

#include "ksft_main.h"
#include "vnpu_engine.h"

#define ARENA_SIZE (20u << 20)
#define MAX_LAYERS 96

struct layer {
	const char *name;
	__u32 op, n, attr_size;
	struct vnpu_cmd_tensor t[16];
	unsigned char attrs[256];
};

static unsigned char *arena;	/* the host image of the data BO */
static __u64 arena_used;	/* tensors from 0 up to here */
static __u64 arena_end = ARENA_SIZE;	/* and from here to the end */
static struct layer layers[MAX_LAYERS];
static unsigned int num_layers;
static unsigned long long rng = 0x243f6a8885a308d3ull;

static float frand(void)
{
	rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	return (float)((rng >> 40) & 0xffffff) / 4194304.0f - 2.0f;
}

static __u64 elem_size(__u32 dtype)
{
	switch (dtype) {
	case VNPU_DTYPE_I64:
		return 8;
	case VNPU_DTYPE_F16:
		return 2;
	case VNPU_DTYPE_U8:
	case VNPU_DTYPE_I8:
		return 1;
	default:
		return 4;
	}
}

/* A dense tensor in the arena, filled with random values or zeroes. */
static struct vnpu_cmd_tensor tensor(__u32 dtype, __u32 rank, const __u64 *dims,
				     int fill)
{
	struct vnpu_cmd_tensor t;
	__u64 n = 1, i, size = elem_size(dtype);
	int d;

	memset(&t, 0, sizeof(t));
	t.dtype = dtype;
	t.rank = rank;
	for (d = (int)rank - 1; d >= 0; d--) {
		t.dims[d] = dims[d];
		t.strides[d] = (__s64)n;
		n *= dims[d];
	}
	arena_used = (arena_used + 63) & ~63ull;
	t.offset = arena_used;
	arena_used += n * size;
	if (arena_used > arena_end) {
		fprintf(stderr, "npu-vs-cpu: arena too small\n");
		exit(1);
	}
	if (fill && dtype == VNPU_DTYPE_F32)
		for (i = 0; i < n; i++)
			((float *)(arena + t.offset))[i] = frand();
	else if (fill && dtype == VNPU_DTYPE_F16)
		for (i = 0; i < n; i++) {
			_Float16 h = (_Float16)frand();

			memcpy(arena + t.offset + 2 * i, &h, 2);
		}
	else if (fill && dtype == VNPU_DTYPE_BF16)
		for (i = 0; i < n; i++) {
			float f = frand();
			__u32 u;

			memcpy(&u, &f, 4);
			((__u16 *)(arena + t.offset))[i] = (__u16)(u >> 16);
		}
	else if (fill && dtype == VNPU_DTYPE_I32)
		for (i = 0; i < n; i++)
			((__s32 *)(arena + t.offset))[i] = (__s32)(frand() * 1000);
	else if (fill)
		for (i = 0; i < n * size; i++)
			arena[t.offset + i] = (unsigned char)(frand() * 1000);
	return t;
}

static struct layer *add(const char *name, __u32 op, const void *attrs,
			 __u32 attr_size)
{
	struct layer *l;

	if (num_layers == MAX_LAYERS) {
		fprintf(stderr, "npu-vs-cpu: too many layers\n");
		exit(1);
	}
	l = &layers[num_layers++];
	l->name = name;
	l->op = op;
	l->attr_size = attr_size;
	memcpy(l->attrs, attrs, attr_size);
	return l;
}

/*
 * GEMM with A, bias and Y of @dt (f32, f16 or bf16), B of @dt or packed:
 * f32 panels, or with @packed 2 random bf16 ones (depth pairs).
 */
static void gemm(const char *name, __u64 m, __u64 n, __u64 k, int packed,
		 __u32 act, __u32 dt)
{
	struct vnpu_layer_gemm a = { .alpha = 0x3f800000, .beta = 0x3f000000 };
	__u64 da[2] = { m, k }, db[2] = { k, n }, dy[2] = { m, n };
	struct layer *l;

	a.flags = VNPU_LAYER_F_BIAS | (packed ? VNPU_LAYER_F_PACKED : 0);
	a.act.func = act;
	l = add(name, VNPU_LAYER_GEMM, &a, sizeof(a));
	l->t[0] = tensor(dt, 2, da, 1);
	if (packed == 2) {
		__u64 ps = vnpu_eng_packed_size(VNPU_PACK_GEMM_B, 1, k, n);

		l->t[1] = tensor(VNPU_DTYPE_BF16, 1, &ps, 1);
	} else if (packed) {
		__u64 ps = vnpu_eng_packed_size(VNPU_PACK_GEMM_B, 1, k, n);
		float *b = malloc(k * n * 4);
		__u64 i;

		for (i = 0; i < k * n; i++)
			b[i] = frand();
		l->t[1] = tensor(VNPU_DTYPE_F32, 1, &ps, 0);
		vnpu_eng_pack(VNPU_PACK_GEMM_B, b, 1, k, n,
			      arena + l->t[1].offset);
		free(b);
	} else {
		l->t[1] = tensor(dt, 2, db, 1);
	}
	l->t[2] = tensor(dt, 1, &n, 1);
	l->t[3] = tensor(dt, 2, dy, 0);
	l->n = 4;
}

/* A convolution whose tensors are all of @dt (f32, f16 or bf16). */
static void conv(const char *name, __u64 c, __u64 m, __u64 h, __u64 w,
		 __u32 k, __u32 s, __u32 pad, __u32 group, int residual,
		 __u32 dt)
{
	struct vnpu_layer_conv a = { .group = group };
	__u64 oh = (h + 2 * pad - k) / s + 1, ow = (w + 2 * pad - k) / s + 1;
	__u64 dx[4] = { 1, c, h, w }, dw[4] = { m, c / group, k, k };
	__u64 dy[4] = { 1, m, oh, ow };
	struct layer *l;

	a.flags = VNPU_LAYER_F_BIAS | (residual ? VNPU_LAYER_F_RESIDUAL : 0);
	a.kernel[0] = a.kernel[1] = k;
	a.stride[0] = a.stride[1] = s;
	a.dilation[0] = a.dilation[1] = 1;
	a.pad_begin[0] = a.pad_begin[1] = a.pad_end[0] = a.pad_end[1] = pad;
	a.act.func = VNPU_ACT_RELU;
	l = add(name, VNPU_LAYER_CONV, &a, sizeof(a));
	l->t[0] = tensor(dt, 4, dx, 1);
	l->t[1] = tensor(dt, 4, dw, 1);
	l->t[2] = tensor(dt, 1, &m, 1);
	l->n = 3;
	if (residual)
		l->t[l->n++] = tensor(dt, 4, dy, 1);
	l->t[l->n++] = tensor(dt, 4, dy, 0);
}

/*
 * A 3x3 convolution as Winograd (%VNPU_LAYER_F_WINO): conv()'s, its
 * random weights transformed by the runtime's function.
 */
static void wino_conv(const char *name, __u64 c, __u64 m, __u64 h, __u64 w,
		      __u32 pad, __u32 group, int residual)
{
	__u64 mg = m / group, kt = c / group * 9, i;
	__u64 ps = vnpu_eng_packed_size(VNPU_PACK_WINO_W, group, mg, kt);
	struct vnpu_layer_conv *a;
	struct layer *l;
	float *src;

	conv(name, c, m, h, w, 3, 1, pad, group, residual, VNPU_DTYPE_F32);
	l = &layers[num_layers - 1];
	a = (struct vnpu_layer_conv *)l->attrs;
	a->flags |= VNPU_LAYER_F_WINO;
	src = malloc(m * kt * 4);
	for (i = 0; i < m * kt; i++)
		src[i] = frand();
	l->t[1] = tensor(VNPU_DTYPE_F32, 1, &ps, 0);
	if (vnpu_eng_wino_pack(src, group, mg, kt,
			       (float *)(arena + l->t[1].offset))) {
		fprintf(stderr, "npu-vs-cpu: %s: vnpu_eng_wino_pack failed\n", name);
		exit(1);
	}
	free(src);
}

/*
 * A convolution with its output channels on the lanes
 * (%VNPU_LAYER_F_LANES): conv()'s with stride @s and padding @pad, its
 * random weights packed VNPU_PACK_CONV_LANES.
 */
static void lanes_conv(const char *name, __u64 c, __u64 m, __u64 h, __u64 w,
		       __u32 k, __u32 s, __u32 pad, __u32 group, int residual)
{
	__u64 mg = m / group, kt = c / group * k * k, i;
	__u64 ps = vnpu_eng_packed_size(VNPU_PACK_CONV_LANES, group, mg, kt);
	struct vnpu_layer_conv *a;
	struct layer *l;
	float *src;

	conv(name, c, m, h, w, k, s, pad, group, residual, VNPU_DTYPE_F32);
	l = &layers[num_layers - 1];
	a = (struct vnpu_layer_conv *)l->attrs;
	a->flags |= VNPU_LAYER_F_PACKED | VNPU_LAYER_F_LANES;
	src = malloc(m * kt * 4);
	for (i = 0; i < m * kt; i++)
		src[i] = frand();
	l->t[1] = tensor(VNPU_DTYPE_F32, 1, &ps, 0);
	if (vnpu_eng_pack(VNPU_PACK_CONV_LANES, src, group, mg, kt,
			  arena + l->t[1].offset)) {
		fprintf(stderr, "npu-vs-cpu: %s: pack failed\n", name);
		exit(1);
	}
	free(src);
}

/*
 * A 1x3 convolution of @c channels to 4 over an @h x @w map padded by @pl
 * and @pr columns, whose X starts the data BO (@at_end 0: before any
 * other tensor) or ends it, so that X has unmapped pages before or after
 * it in vnpu.ko: the device reads nothing outside X's rows.
 */
static void conv_edge(const char *name, __u64 c, __u64 h, __u64 w, __u32 pl,
		      __u32 pr, int at_end)
{
	struct vnpu_layer_conv a = { .group = 1, .flags = VNPU_LAYER_F_BIAS };
	__u64 dx[4] = { 1, c, h, w }, dw[4] = { 4, c, 1, 3 }, m = 4;
	__u64 dy[4] = { 1, 4, h, w + pl + pr - 2 }, i, n = c * h * w;
	struct layer *l;

	a.kernel[0] = 1;
	a.kernel[1] = 3;
	a.stride[0] = a.stride[1] = 1;
	a.dilation[0] = a.dilation[1] = 1;
	a.pad_begin[1] = pl;
	a.pad_end[1] = pr;
	l = add(name, VNPU_LAYER_CONV, &a, sizeof(a));
	l->t[0] = tensor(VNPU_DTYPE_F32, 4, dx, !at_end);
	if (at_end) {
		/* Moved to the arena's end: its room stays unused. */
		if (arena_end - arena_used < n * 4) {
			fprintf(stderr, "npu-vs-cpu: arena too small\n");
			exit(1);
		}
		arena_end -= n * 4;
		l->t[0].offset = arena_end;
		for (i = 0; i < n; i++)
			((float *)(arena + arena_end))[i] = frand();
	}
	l->t[1] = tensor(VNPU_DTYPE_F32, 4, dw, 1);
	l->t[2] = tensor(VNPU_DTYPE_F32, 1, &m, 1);
	l->t[3] = tensor(VNPU_DTYPE_F32, 4, dy, 0);
	l->n = 4;
}

/*
 * A depthwise convolution of @c channels, @k x @k with stride @s and half
 * the kernel as padding (MobileNetV3's), activation @act.
 */
static void dwconv(const char *name, __u64 c, __u64 h, __u64 w, __u32 k,
		   __u32 s, __u32 act)
{
	struct vnpu_layer_conv a;

	conv(name, c, c, h, w, k, s, k / 2, c, 0, VNPU_DTYPE_F32);
	memcpy(&a, layers[num_layers - 1].attrs, sizeof(a));
	a.act.func = act;
	memcpy(layers[num_layers - 1].attrs, &a, sizeof(a));
}

/*
 * A packed int8 convolution (QLINEAR_CONV over VNPU_PACK_QCONV_W, or with
 * @split over VNPU_PACK_QCONV_SPLIT and every 7th weight at 127 or -128)
 * with a bias and per-channel weight scales and zero points: X and Y of
 * @xt and @yt (u8 or i8), ReLU with @relu.
 */
static void qconv(const char *name, __u64 c, __u64 m, __u64 h, __u64 w,
		  __u32 k, __u32 s, __u32 pad, __u32 group, __u32 xt, __u32 yt,
		  int relu, int split)
{
	__u32 layout = split ? VNPU_PACK_QCONV_SPLIT : VNPU_PACK_QCONV_W;
	struct vnpu_layer_conv a = { .flags = VNPU_LAYER_F_BIAS |
					      VNPU_LAYER_F_PACKED |
					      (split ? VNPU_LAYER_F_SPLIT8 : 0),
				     .group = group };
	__u64 oh = (h + 2 * pad - k) / s + 1, ow = (w + 2 * pad - k) / s + 1;
	__u64 dx[4] = { 1, c, h, w }, dy[4] = { 1, m, oh, ow };
	__u64 kc = c / group * k * k, i;
	__u64 ps = vnpu_eng_packed_size(layout, group, m / group, kc);
	signed char *wt = malloc(m * kc);
	struct layer *l;

	a.kernel[0] = a.kernel[1] = k;
	a.stride[0] = a.stride[1] = s;
	a.dilation[0] = a.dilation[1] = 1;
	a.pad_begin[0] = a.pad_begin[1] = a.pad_end[0] = a.pad_end[1] = pad;
	a.act.func = relu ? VNPU_ACT_RELU : VNPU_ACT_IDENTITY;
	l = add(name, VNPU_LAYER_QLINEAR_CONV, &a, sizeof(a));
	l->t[0] = tensor(xt, 4, dx, 1);
	l->t[1] = tensor(VNPU_DTYPE_F32, 0, NULL, 0);
	*(float *)(arena + l->t[1].offset) = 0.02f;
	l->t[2] = tensor(xt, 0, NULL, 1);
	l->t[3] = tensor(VNPU_DTYPE_I8, 1, &ps, 0);
	for (i = 0; i < m * kc; i++)
		wt[i] = (signed char)(split && i % 7 == 0 ? (i % 2 ? 127 : -128) :
				      frand() * 60);
	if (vnpu_eng_pack(layout, wt, group, m / group, kc,
			  arena + l->t[3].offset)) {
		fprintf(stderr, "npu-vs-cpu: %s: pack failed\n", name);
		exit(1);
	}
	free(wt);
	l->t[4] = tensor(VNPU_DTYPE_F32, 1, &m, 0);
	for (i = 0; i < m; i++)
		((float *)(arena + l->t[4].offset))[i] = 0.002f * (i % 5 + 1);
	l->t[5] = tensor(VNPU_DTYPE_I8, 1, &m, 0);
	for (i = 0; i < m; i++)
		arena[l->t[5].offset + i] = (unsigned char)(i % 3 - 1);
	l->t[6] = tensor(VNPU_DTYPE_F32, 0, NULL, 0);
	*(float *)(arena + l->t[6].offset) = 0.25f;
	l->t[7] = tensor(yt, 0, NULL, 1);
	l->t[8] = tensor(VNPU_DTYPE_I32, 1, &m, 1);
	l->t[9] = tensor(yt, 4, dy, 0);
	l->n = 10;
}

/*
 * qconv() with its residual QLinearAdd fused (VNPU_LAYER_F_RESIDUAL; R
 * the Add's first operand with @first): R of Y's shape and dtype, its
 * scale and zero point, the sum's, then Y.
 */
static void qconv_res(const char *name, __u64 c, __u64 m, __u64 h, __u64 w,
		      __u32 k, __u32 s, __u32 pad, __u32 xt, __u32 yt, int relu,
		      int split, int first)
{
	struct layer *l;
	struct vnpu_layer_conv a;
	struct vnpu_cmd_tensor y;

	qconv(name, c, m, h, w, k, s, pad, 1, xt, yt, relu, split);
	l = &layers[num_layers - 1];
	y = l->t[9];
	l->t[9] = tensor(yt, y.rank, y.dims, 1);
	l->t[10] = tensor(VNPU_DTYPE_F32, 0, NULL, 0);
	*(float *)(arena + l->t[10].offset) = 0.03f;
	l->t[11] = tensor(yt, 0, NULL, 1);
	l->t[12] = tensor(VNPU_DTYPE_F32, 0, NULL, 0);
	*(float *)(arena + l->t[12].offset) = 0.4f;
	l->t[13] = tensor(yt, 0, NULL, 1);
	l->t[14] = y;
	l->n = 15;
	memcpy(&a, l->attrs, sizeof(a));
	a.flags |= VNPU_LAYER_F_RESIDUAL | (first ? VNPU_LAYER_F_RES_FIRST : 0);
	memcpy(l->attrs, &a, sizeof(a));
}

/* QLINEAR_ADD of two [2, 5, 9, 11] tensors of @dt (u8 or i8). */
static void qadd(const char *name, __u32 dt)
{
	__u64 dims[4] = { 2, 5, 9, 11 };
	struct layer *l = add(name, VNPU_LAYER_QLINEAR_ADD, NULL, 0);
	int i;

	for (i = 0; i < 3; i++) {
		__u32 at = i < 2 ? 3 * i : 6;	/* A, B, then y's scale */

		if (i < 2)
			l->t[at++] = tensor(dt, 4, dims, 1);
		l->t[at] = tensor(VNPU_DTYPE_F32, 0, NULL, 0);
		*(float *)(arena + l->t[at].offset) = 0.013f * (i + 1);
		l->t[at + 1] = tensor(dt, 0, NULL, 1);
	}
	l->t[8] = tensor(dt, 4, dims, 0);
	l->n = 9;
}

/*
 * ATTENTION of 3 heads of [37, 16] over 50 keys, Q, K and V in BERT's
 * layout ([1, rows, heads, 16]: a head split by strides), a mask over the
 * keys, Y merged back likewise.
 */
static void attention(const char *name)
{
	static const struct vnpu_layer_attention a = {
		.flags = VNPU_ATTN_F_MASK | VNPU_ATTN_F_DIV, .scale = 0x40800000,
	};
	__u64 q[4] = { 1, 37, 3, 16 }, k[4] = { 1, 50, 3, 16 }, m[4] = { 1, 1, 1, 50 };
	struct layer *l = add(name, VNPU_LAYER_ATTENTION, &a, sizeof(a));
	__s64 s;
	int i;

	l->t[0] = tensor(VNPU_DTYPE_F32, 4, q, 1);
	l->t[1] = tensor(VNPU_DTYPE_F32, 4, k, 1);
	l->t[2] = tensor(VNPU_DTYPE_F32, 4, k, 1);
	l->t[3] = tensor(VNPU_DTYPE_F32, 4, m, 1);
	l->t[4] = tensor(VNPU_DTYPE_F32, 4, q, 0);
	/* [1, rows, heads, 16] viewed as [1, heads, rows, 16]. */
	for (i = 0; i < 5; i++) {
		if (i == 3)
			continue;
		s = l->t[i].strides[1];
		l->t[i].strides[1] = l->t[i].strides[2];
		l->t[i].strides[2] = s;
		l->t[i].dims[2] = l->t[i].dims[1];
		l->t[i].dims[1] = 3;
	}
	/* KT: K's last two dims swapped. */
	s = l->t[1].strides[2];
	l->t[1].strides[2] = l->t[1].strides[3];
	l->t[1].strides[3] = s;
	l->t[1].dims[2] = 16;
	l->t[1].dims[3] = 50;
	l->n = 5;
}

/* LOOKUP of [3, 7, 45] codes of @dt through a table of @tt. */
static void lookup(const char *name, __u32 dt, __u32 tt)
{
	static struct vnpu_layer_lookup a;
	__u64 dims[3] = { 3, 7, 45 }, e = VNPU_LOOKUP_ENTRIES;
	struct layer *l = add(name, VNPU_LAYER_LOOKUP, &a, sizeof(a));
	int i;

	l->t[0] = tensor(dt, 3, dims, 1);
	l->t[1] = tensor(tt, 1, &e, 0);
	for (i = 0; i < VNPU_LOOKUP_ENTRIES; i++)
		arena[l->t[1].offset + i] = (unsigned char)(i * 89 + 5);
	l->t[2] = tensor(tt, 3, dims, 0);
	l->n = 3;
}

static void unary(const char *name, __u32 func, int positive)
{
	struct vnpu_layer_act a = { .func = func, .alpha = 0x3f000000 };
	__u64 dims[2] = { 33, 65 }, i;
	struct layer *l = add(name, VNPU_LAYER_UNARY, &a, sizeof(a));

	l->t[0] = tensor(VNPU_DTYPE_F32, 2, dims, 1);
	if (positive)
		for (i = 0; i < 33 * 65; i++) {
			float *x = (float *)(arena + l->t[0].offset);

			x[i] = x[i] < 0 ? -x[i] + 0.01f : x[i] + 0.01f;
		}
	l->t[1] = tensor(VNPU_DTYPE_F32, 2, dims, 0);
	l->n = 2;
}

/*
 * A square @k window at stride @s with @pb/@pe padding on both axes, from a
 * random @dt tensor of @in dims to one of @out dims.
 */
static void pool(const char *name, __u32 mode, __u32 flags, __u32 dt, __u32 k,
		 __u32 s, __u32 pb, __u32 pe, const __u64 *in, const __u64 *out)
{
	struct vnpu_layer_pool p = { .mode = mode, .flags = flags };
	struct layer *l;

	p.kernel[0] = p.kernel[1] = k;
	p.stride[0] = p.stride[1] = s;
	p.dilation[0] = p.dilation[1] = 1;
	p.pad_begin[0] = p.pad_begin[1] = pb;
	p.pad_end[0] = p.pad_end[1] = pe;
	l = add(name, VNPU_LAYER_POOL, &p, sizeof(p));
	l->t[0] = tensor(dt, 4, in, 1);
	l->t[1] = tensor(dt, 4, out, 0);
	l->n = 2;
}

/* Softmax or LogSoftmax (@mode) along @axis of a random f32 tensor. */
static void softmax(const char *name, __u32 mode, __u32 axis, const __u64 *dims)
{
	struct vnpu_layer_softmax s = { .mode = mode, .axis = axis };
	struct layer *l = add(name, VNPU_LAYER_SOFTMAX, &s, sizeof(s));

	l->t[0] = tensor(VNPU_DTYPE_F32, 4, dims, 1);
	l->t[1] = tensor(VNPU_DTYPE_F32, 4, dims, 0);
	l->n = 2;
}

static void build_layers(void)
{
	static const __u32 funcs[] = {
		VNPU_ACT_SIGMOID, VNPU_ACT_TANH, VNPU_ACT_GELU, VNPU_ACT_ERF,
		VNPU_ACT_EXP, VNPU_ACT_SIN, VNPU_ACT_COS, VNPU_ACT_ATAN,
		VNPU_ACT_SOFTPLUS, VNPU_ACT_MISH, VNPU_ACT_ELU, VNPU_ACT_ROUND,
	};
	__u64 d4[4] = { 2, 6, 9, 11 }, d4p[4] = { 2, 6, 4, 5 };
	__u64 dr[4] = { 2, 1, 9, 1 }, d2[2] = { 9, 1 }, d16[4] = { 2, 6, 18, 22 };
	size_t i;
	struct layer *l;

	/*
	 * Padded rows of 8 to 64 columns (the AVX2 window's vectors) at the
	 * data BO's ends: the first layer's X at offset 0, pads of 7 (a
	 * ConvTranspose's) before and after the inputs, openWakeWord's 1x3.
	 */
	conv_edge("conv 1x3 pad 7,7 at the BO's start", 3, 5, 10, 7, 7, 0);
	conv_edge("conv 1x3 pad 0,7 at the BO's end", 3, 5, 10, 0, 7, 1);
	conv_edge("conv 1x3 pad 1,1 at the BO's end", 8, 6, 16, 1, 1, 1);
	gemm("gemm packed", 77, 53, 300, 1, VNPU_ACT_RELU, VNPU_DTYPE_F32);
	attention("attention");
	gemm("gemm", 100, 130, 40, 0, VNPU_ACT_SIGMOID, VNPU_DTYPE_F32);
	conv("conv 3x3", 8, 12, 13, 11, 3, 1, 1, 1, 1, VNPU_DTYPE_F32);
	conv("conv 5x5 s2", 6, 10, 17, 17, 5, 2, 2, 1, 0, VNPU_DTYPE_F32);
	conv("conv dw", 16, 16, 20, 20, 3, 1, 1, 16, 1, VNPU_DTYPE_F32);
	conv("conv dw 5x5 s2", 24, 24, 30, 33, 5, 2, 2, 24, 0, VNPU_DTYPE_F32);
	conv("conv 1x1", 32, 24, 9, 9, 1, 1, 0, 1, 0, VNPU_DTYPE_F32);
	conv("conv grouped", 12, 6, 10, 10, 3, 1, 1, 3, 0, VNPU_DTYPE_F32);
	/* One stride phase of four read (ResNet's downsample), odd map. */
	conv("conv 1x1 s2", 64, 96, 29, 27, 1, 2, 0, 1, 1, VNPU_DTYPE_F32);
	/* 11 units, an odd count that stays (the Winograd one splits). */
	conv("conv 1x1 14x14 odd", 256, 1024, 14, 14, 1, 1, 0, 1, 1,
	     VNPU_DTYPE_F32);
	/* Winograd F(4x4, 3x3): odd maps, a residual, groups and no pad. */
	wino_conv("conv 3x3 winograd", 40, 36, 45, 47, 1, 1, 1);
	wino_conv("conv 3x3 winograd grouped", 64, 64, 50, 50, 0, 2, 0);
	wino_conv("conv 3x3 winograd balanced", 64, 256, 6, 80, 1, 1, 0);
	lanes_conv("conv 1x1 lanes 7x7", 256, 100, 7, 7, 1, 1, 0, 1, 1);
	lanes_conv("conv 3x3 lanes grouped", 48, 40, 9, 11, 3, 1, 0, 2, 0);
	lanes_conv("conv 3x3 lanes padded 7x7", 160, 96, 7, 7, 3, 1, 1, 1, 1);
	lanes_conv("conv 3x3 lanes stride 2", 96, 64, 14, 13, 3, 2, 1, 1, 0);
	/* MobileNetV3-Large's depthwise shapes, with fewer channels. */
	dwconv("dw 3x3 112", 16, 112, 112, 3, 1, VNPU_ACT_RELU);
	dwconv("dw 3x3 s2 112", 16, 112, 112, 3, 2, VNPU_ACT_RELU);
	dwconv("dw 3x3 56", 24, 56, 56, 3, 1, VNPU_ACT_RELU);
	dwconv("dw 5x5 s2 56", 24, 56, 56, 5, 2, VNPU_ACT_RELU);
	dwconv("dw 5x5 28", 40, 28, 28, 5, 1, VNPU_ACT_RELU);
	dwconv("dw 3x3 s2 28 hardswish", 48, 28, 28, 3, 2, VNPU_ACT_HARD_SWISH);
	dwconv("dw 3x3 14 hardswish", 200, 14, 14, 3, 1, VNPU_ACT_HARD_SWISH);
	dwconv("dw 5x5 s2 14 hardswish", 96, 14, 14, 5, 2, VNPU_ACT_HARD_SWISH);
	dwconv("dw 5x5 7 hardswish", 960, 7, 7, 5, 1, VNPU_ACT_HARD_SWISH);
	/* f16 and bf16 storage, f32 sums. */
	gemm("gemm f16 packed", 77, 53, 300, 1, VNPU_ACT_RELU, VNPU_DTYPE_F16);
	gemm("gemm bf16", 61, 45, 97, 0, 0, VNPU_DTYPE_BF16);
	gemm("gemm bf16 packed", 61, 45, 97, 2, 0, VNPU_DTYPE_F32);
	conv("conv 3x3 f16", 8, 12, 13, 11, 3, 1, 1, 1, 1, VNPU_DTYPE_F16);
	conv("conv 5x5 s2 bf16", 6, 10, 17, 17, 5, 2, 2, 1, 0, VNPU_DTYPE_BF16);
	conv("conv dw f16", 16, 16, 20, 150, 3, 1, 1, 16, 1, VNPU_DTYPE_F16);
	conv("conv 1x1 f16", 32, 24, 9, 9, 1, 1, 0, 1, 0, VNPU_DTYPE_F16);
	pool("avgpool", VNPU_POOL_AVG, VNPU_POOL_F_COUNT_PAD, VNPU_DTYPE_F32,
	     3, 2, 1, 0, d4, d4p);
	/* MAX of u8 and i8, ResNet's stem's window. */
	pool("maxpool u8", VNPU_POOL_MAX, 0, VNPU_DTYPE_U8, 3, 2, 1, 0, d4, d4p);
	pool("maxpool i8", VNPU_POOL_MAX, 0, VNPU_DTYPE_I8, 3, 2, 1, 0, d4, d4p);
	/* f32 MAX at stride 1 across the row edges: YOLO's SPPF. */
	pool("maxpool 5x5 s1", VNPU_POOL_MAX, 0, VNPU_DTYPE_F32, 5, 1, 2, 2, d4, d4);
	{
		/* Rows of 3 outputs (openWakeWord's), gathered across rows. */
		__u64 dq[4] = { 1, 9, 28, 7 }, dq1[4] = { 1, 9, 14, 3 };

		pool("maxpool 2x2 s2 rows of 3", VNPU_POOL_MAX, 0,
		     VNPU_DTYPE_F32, 2, 2, 0, 0, dq, dq1);
		pool("avgpool 2x2 s2 rows of 3", VNPU_POOL_AVG, 0,
		     VNPU_DTYPE_F32, 2, 2, 0, 0, dq, dq1);
	}
	{
		/* One output per plane: eight channels at a time. */
		struct vnpu_layer_pool p = { .mode = VNPU_POOL_AVG };
		__u64 dg[4] = { 2, 20, 9, 31 }, dg1[4] = { 2, 20, 1, 1 };

		p.kernel[0] = 9;
		p.kernel[1] = 31;
		p.stride[0] = p.stride[1] = 1;
		p.dilation[0] = p.dilation[1] = 1;
		l = add("global avgpool", VNPU_LAYER_POOL, &p, sizeof(p));
		l->t[0] = tensor(VNPU_DTYPE_F32, 4, dg, 1);
		l->t[1] = tensor(VNPU_DTYPE_F32, 4, dg1, 0);
		l->n = 2;
	}
	for (i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++)
		unary("unary", funcs[i], 0);
	unary("log", VNPU_ACT_LOG, 1);
	{
		struct vnpu_layer_binary b = { .func = VNPU_BIN_POW };

		l = add("pow", VNPU_LAYER_BINARY, &b, sizeof(b));
		l->t[0] = tensor(VNPU_DTYPE_F32, 4, d4, 1);
		for (i = 0; i < 2 * 6 * 9 * 11; i++)
			((float *)(arena + l->t[0].offset))[i] += 2.5f;
		l->t[1] = tensor(VNPU_DTYPE_F32, 4, dr, 1);
		l->t[2] = tensor(VNPU_DTYPE_F32, 4, d4, 0);
		l->n = 3;
		b.func = VNPU_BIN_DIV;
		l = add("div", VNPU_LAYER_BINARY, &b, sizeof(b));
		l->t[0] = tensor(VNPU_DTYPE_F32, 4, d4, 1);
		l->t[1] = tensor(VNPU_DTYPE_F32, 2, d2, 1);
		l->t[2] = tensor(VNPU_DTYPE_F32, 4, d4, 0);
		l->n = 3;
	}
	{
		/* An LSTM cell's C: sigmoid(f) * C + sigmoid(i) * tanh(g). */
		struct vnpu_layer_chain c = { .num_steps = 6 };
		const struct vnpu_chain_step u = { .kind = VNPU_CHAIN_UNARY };
		const struct vnpu_chain_step b = { .kind = VNPU_CHAIN_BINARY };

		c.steps[0] = u;
		c.steps[0].func = VNPU_ACT_SIGMOID;
		c.steps[1] = b;
		c.steps[1].func = VNPU_BIN_MUL;
		c.steps[1].a = VNPU_CHAIN_STEP(0);
		c.steps[1].b = VNPU_CHAIN_IN(1);
		c.steps[2] = c.steps[0];
		c.steps[2].a = VNPU_CHAIN_IN(2);
		c.steps[3] = u;
		c.steps[3].func = VNPU_ACT_TANH;
		c.steps[3].a = VNPU_CHAIN_IN(3);
		c.steps[4] = b;
		c.steps[4].func = VNPU_BIN_MUL;
		c.steps[4].a = VNPU_CHAIN_STEP(2);
		c.steps[4].b = VNPU_CHAIN_STEP(3);
		c.steps[5] = b;
		c.steps[5].func = VNPU_BIN_ADD;
		c.steps[5].a = VNPU_CHAIN_STEP(1);
		c.steps[5].b = VNPU_CHAIN_STEP(4);
		l = add("chain", VNPU_LAYER_CHAIN, &c, sizeof(c));
		for (i = 0; i < 4; i++)
			l->t[i] = tensor(VNPU_DTYPE_F32, 4, i == 1 ? dr : d4, 1);
		l->t[4] = tensor(VNPU_DTYPE_F32, 4, d4, 0);
		l->n = 5;
	}
	softmax("softmax", VNPU_SOFTMAX, 3, d4);
	softmax("logsoftmax", VNPU_LOG_SOFTMAX, 1, d4);
	/* Along a strided axis: eight dense lanes, then three. */
	softmax("softmax axis 2", VNPU_SOFTMAX, 2, d4);
	{
		struct vnpu_layer_norm nm = { .mode = VNPU_NORM_LAYER, .axis = 2,
					      .epsilon = 0x3727c5ac };
		__u64 dn[2] = { 9, 11 };

		l = add("layernorm", VNPU_LAYER_NORM, &nm, sizeof(nm));
		l->t[0] = tensor(VNPU_DTYPE_F32, 4, d4, 1);
		l->t[1] = tensor(VNPU_DTYPE_F32, 2, dn, 1);
		l->t[2] = tensor(VNPU_DTYPE_F32, 4, d4, 0);
		l->n = 3;
	}
	{
		struct vnpu_layer_reduce r = { VNPU_REDUCE_LOG_SUM_EXP, 0xa };

		l = add("reduce lse", VNPU_LAYER_REDUCE, &r, sizeof(r));
		l->t[0] = tensor(VNPU_DTYPE_F32, 4, d4, 1);
		l->t[1] = tensor(VNPU_DTYPE_F32, 4, (__u64[]){ 2, 1, 9, 1 }, 0);
		l->n = 2;
		r.func = VNPU_REDUCE_L2;
		l = add("reduce l2", VNPU_LAYER_REDUCE, &r, sizeof(r));
		l->t[0] = tensor(VNPU_DTYPE_F32, 4, d4, 1);
		l->t[1] = tensor(VNPU_DTYPE_F32, 4, (__u64[]){ 2, 1, 9, 1 }, 0);
		l->n = 2;
	}
	{
		struct vnpu_layer_resize rs = { .mode = VNPU_RESIZE_LINEAR };

		l = add("resize", VNPU_LAYER_RESIZE, &rs, sizeof(rs));
		l->t[0] = tensor(VNPU_DTYPE_F32, 4, d4, 1);
		l->t[1] = tensor(VNPU_DTYPE_F32, 4, d16, 0);
		l->n = 2;
		l = add("resize down", VNPU_LAYER_RESIZE, &rs, sizeof(rs));
		l->t[0] = tensor(VNPU_DTYPE_F32, 4, d4, 1);
		l->t[1] = tensor(VNPU_DTYPE_F32, 4, d4p, 0);
		l->n = 2;
	}
	{
		struct vnpu_layer_qgemm qg = {};
		struct vnpu_layer_conv qc = { .flags = VNPU_LAYER_F_BIAS,
					      .group = 2 };
		__u64 dm = 6;

		l = add("matmulinteger", VNPU_LAYER_MATMUL_INTEGER, &qg, sizeof(qg));
		l->t[0] = tensor(VNPU_DTYPE_U8, 2, (__u64[]){ 9, 40 }, 1);
		l->t[1] = tensor(VNPU_DTYPE_I8, 2, (__u64[]){ 40, 7 }, 1);
		l->t[2] = tensor(VNPU_DTYPE_U8, 0, NULL, 1);
		l->t[3] = tensor(VNPU_DTYPE_I8, 1, (__u64[]){ 7 }, 1);
		l->t[4] = tensor(VNPU_DTYPE_I32, 2, (__u64[]){ 9, 7 }, 0);
		l->n = 5;
		qc.kernel[0] = qc.kernel[1] = 3;
		qc.stride[0] = qc.stride[1] = 1;
		qc.dilation[0] = qc.dilation[1] = 1;
		qc.pad_begin[0] = qc.pad_begin[1] = 1;
		qc.pad_end[0] = qc.pad_end[1] = 1;
		l = add("qlinearconv", VNPU_LAYER_QLINEAR_CONV, &qc, sizeof(qc));
		l->t[0] = tensor(VNPU_DTYPE_U8, 4, (__u64[]){ 1, 4, 8, 8 }, 1);
		l->t[1] = tensor(VNPU_DTYPE_F32, 0, NULL, 0);
		*(float *)(arena + l->t[1].offset) = 0.02f;
		l->t[2] = tensor(VNPU_DTYPE_U8, 0, NULL, 1);
		l->t[3] = tensor(VNPU_DTYPE_I8, 4, (__u64[]){ 6, 2, 3, 3 }, 1);
		l->t[4] = tensor(VNPU_DTYPE_F32, 1, &dm, 0);
		for (i = 0; i < 6; i++)
			((float *)(arena + l->t[4].offset))[i] = 0.01f * (i + 1);
		l->t[5] = tensor(VNPU_DTYPE_I8, 1, &dm, 1);
		l->t[6] = tensor(VNPU_DTYPE_F32, 0, NULL, 0);
		*(float *)(arena + l->t[6].offset) = 0.3f;
		l->t[7] = tensor(VNPU_DTYPE_U8, 0, NULL, 1);
		l->t[8] = tensor(VNPU_DTYPE_I32, 1, &dm, 1);
		l->t[9] = tensor(VNPU_DTYPE_U8, 4, (__u64[]){ 1, 6, 8, 8 }, 0);
		l->n = 10;
	}
	/* int8 over packed weights: the VNNI and AVX2 tiles, depthwise. */
	qconv("qconv packed 3x3 relu", 16, 24, 11, 13, 3, 1, 1, 1,
	      VNPU_DTYPE_U8, VNPU_DTYPE_U8, 1, 0);
	qconv("qconv packed 1x1 s8", 64, 40, 9, 9, 1, 1, 0, 1,
	      VNPU_DTYPE_I8, VNPU_DTYPE_I8, 0, 0);
	qconv("qconv packed 3x3 s2 grouped", 12, 30, 17, 15, 3, 2, 1, 3,
	      VNPU_DTYPE_U8, VNPU_DTYPE_I8, 1, 0);
	qconv("qconv packed dw", 32, 32, 14, 14, 3, 1, 1, 32,
	      VNPU_DTYPE_U8, VNPU_DTYPE_U8, 1, 0);
	qconv("qconv packed 3x3 deep", 160, 36, 7, 7, 3, 1, 1, 1,
	      VNPU_DTYPE_U8, VNPU_DTYPE_U8, 0, 0);
	/* depthwise 5x5 stride 2; three channel blocks per column block */
	qconv("qconv packed dw 5x5 s2", 24, 24, 23, 21, 5, 2, 2, 24,
	      VNPU_DTYPE_I8, VNPU_DTYPE_U8, 0, 0);
	qconv("qconv packed 1x1 wide", 48, 260, 12, 12, 1, 1, 0, 1,
	      VNPU_DTYPE_U8, VNPU_DTYPE_U8, 1, 0);
	/* one output position (vnpu_eng_qgemv.c): squeeze-excite, odd depth */
	qconv("qconv packed 1x1 map", 960, 240, 1, 1, 1, 1, 0, 1,
	      VNPU_DTYPE_U8, VNPU_DTYPE_U8, 1, 0);
	qconv("qconv packed 1x1 map s8", 257, 29, 1, 1, 1, 1, 0, 1,
	      VNPU_DTYPE_I8, VNPU_DTYPE_I8, 0, 0);
	/* The pairs of large weights listed apart at compile time. */
	qconv("qconv split 3x3 relu", 16, 24, 11, 13, 3, 1, 1, 1,
	      VNPU_DTYPE_U8, VNPU_DTYPE_U8, 1, 1);
	qconv("qconv split 3x3 s2 grouped", 12, 30, 17, 15, 3, 2, 1, 3,
	      VNPU_DTYPE_I8, VNPU_DTYPE_U8, 0, 1);
	/* Fused with a residual QLinearAdd: the tiles' epilogues add R. */
	qconv_res("qconv residual 1x1", 48, 40, 9, 9, 1, 1, 0,
		  VNPU_DTYPE_U8, VNPU_DTYPE_U8, 1, 0, 0);
	qconv_res("qconv residual 3x3 s8 first", 16, 20, 11, 13, 3, 1, 1,
		  VNPU_DTYPE_I8, VNPU_DTYPE_I8, 0, 0, 1);
	qconv_res("qconv residual split", 16, 24, 7, 7, 3, 1, 1,
		  VNPU_DTYPE_U8, VNPU_DTYPE_U8, 0, 1, 0);
	qadd("qlinear add u8", VNPU_DTYPE_U8);
	qadd("qlinear add s8", VNPU_DTYPE_I8);
	lookup("lookup u8", VNPU_DTYPE_U8, VNPU_DTYPE_U8);
	lookup("lookup s8 to u8", VNPU_DTYPE_I8, VNPU_DTYPE_U8);
	l = add("cast f16", VNPU_LAYER_CAST, NULL, 0);
	l->t[0] = tensor(VNPU_DTYPE_F32, 4, d4, 1);
	l->t[1] = tensor(VNPU_DTYPE_F16, 4, d4, 0);
	l->n = 2;
}

/* ---- the device ------------------------------------------------------ */

static int open_vnpu(void)
{
	char path[64], name[32];
	int i, fd;

	for (i = 128; i < 192; i++) {
		struct drm_version v;

		snprintf(path, sizeof(path), "/dev/dri/renderD%d", i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		memset(&v, 0, sizeof(v));
		memset(name, 0, sizeof(name));
		v.name = name;
		v.name_len = sizeof(name) - 1;
		if (!ioctl(fd, DRM_IOCTL_VERSION, &v) && !strcmp(name, "vnpu"))
			return fd;
		close(fd);
	}
	return -1;
}

/* A failed ioctl @what stops the test. */
#define MUST(call, what) ASSERT_EQ(0, (call)) TH_LOG("%s: %s", what, strerror(errno))

static __u32 bo_with(struct __test_metadata *_metadata, int fd, const void *data,
		     __u64 size)
{
	struct drm_vnpu_bo_create c = { .size = size };
	struct drm_vnpu_bo_xfer x = { .size = size, .data_ptr = (uintptr_t)data };

	MUST(ioctl(fd, DRM_IOCTL_VNPU_BO_CREATE, &c), "BO_CREATE");
	x.handle = c.handle;
	MUST(ioctl(fd, DRM_IOCTL_VNPU_BO_UPLOAD, &x), "BO_UPLOAD");
	return c.handle;
}

/* The command stream of all layers, tensors in slot 0. */
static void *build_stream(__u64 *size)
{
	unsigned char *s = calloc(1, 1 << 20), *p = s;
	unsigned int i;

	for (i = 0; i < num_layers; i++) {
		struct layer *l = &layers[i];
		struct vnpu_cmd_layer c = { .op = l->op, .num_tensors = l->n,
					    .num_outputs = 1,
					    .attr_size = l->attr_size };
		__u32 bytes = sizeof(c) + l->n * sizeof(struct vnpu_cmd_tensor) +
			      ((l->attr_size + 7) & ~7u);

		c.hdr.opcode = VNPU_CMD_LAYER;
		c.hdr.size = bytes;
		memcpy(p, &c, sizeof(c));
		memcpy(p + sizeof(c), l->t, l->n * sizeof(struct vnpu_cmd_tensor));
		memcpy(p + sizeof(c) + l->n * sizeof(struct vnpu_cmd_tensor),
		       l->attrs, l->attr_size);
		p += bytes;
	}
	*size = (__u64)(p - s);
	return s;
}

/* All layers as one job on the device, the arena's image after it into @out. */
static void run_device(struct __test_metadata *_metadata, int fd, unsigned char *out)
{
	struct drm_vnpu_submit sub = { .priority = DRM_VNPU_PRIORITY_NORMAL };
	struct drm_vnpu_wait w = {};
	struct drm_vnpu_slot slot;
	struct drm_vnpu_bo_xfer x = { .size = ARENA_SIZE };
	struct timespec ts;
	__u64 size;
	void *stream = build_stream(&size);

	slot.handle = bo_with(_metadata, fd, arena, ARENA_SIZE);
	slot.flags = DRM_VNPU_SLOT_READ | DRM_VNPU_SLOT_WRITE;
	sub.cmd_handle = bo_with(_metadata, fd, stream, size);
	sub.cmd_size = size;
	sub.slots_ptr = (uintptr_t)&slot;
	sub.slot_count = 1;
	MUST(ioctl(fd, DRM_IOCTL_VNPU_SUBMIT, &sub), "SUBMIT");
	clock_gettime(CLOCK_MONOTONIC, &ts);
	w.job_id = sub.job_id;
	w.timeout_ns = (ts.tv_sec + 600) * 1000000000ll;
	MUST(ioctl(fd, DRM_IOCTL_VNPU_WAIT, &w), "WAIT");
	ASSERT_EQ(DRM_VNPU_JOB_OK, w.status) TH_LOG("the job faulted at command %u", w.fault_cmd);
	x.handle = slot.handle;
	x.data_ptr = (uintptr_t)out;
	MUST(ioctl(fd, DRM_IOCTL_VNPU_BO_DOWNLOAD, &x), "BO_DOWNLOAD");
	free(stream);
}

/* The same layers on the host, in 3 parts each (any split gives the same). */
static void run_host(struct __test_metadata *_metadata, unsigned char *img, __u32 features)
{
	unsigned int i, p, k;

	for (i = 0; i < num_layers; i++) {
		struct layer *l = &layers[i];
		void *data[10];
		__u32 parts = vnpu_eng_layer_max_parts(l->op, l->t, l->n, l->attrs,
						  features);
		__u64 scratch;
		struct vnpu_eng_ctx ctx = { .features = features };

		parts = parts < 3 ? parts : 3;
		scratch = vnpu_eng_layer_scratch(l->op, l->t, l->n, l->attrs, parts,
						 features);
		ctx.scratch = scratch ? malloc(scratch) : NULL;
		ctx.scratch_size = scratch;
		for (k = 0; k < l->n; k++)
			data[k] = img + l->t[k].offset;
		for (p = 0; p < parts; p++)
			ASSERT_EQ(0, vnpu_eng_layer_run(l->op, l->t, data, l->n, l->attrs,
							p, parts, &ctx)) TH_LOG("%s", l->name);
		free(ctx.scratch);
	}
}

static __u64 out_bytes(const struct vnpu_cmd_tensor *t)
{
	__u64 n = elem_size(t->dtype);
	__u32 d;

	for (d = 0; d < t->rank; d++)
		n *= t->dims[d];
	return n;
}

/* --features N: the device must run with exactly these features (-1: any). */
static long want_features = -1;

TEST(layers_match)
{
	struct drm_vnpu_get_param gp = { .param = DRM_VNPU_PARAM_ENGINE_FEATURES };
	unsigned char *dev_img, *host_img;
	unsigned int i;
	__u32 features;
	int fd;

	fd = open_vnpu();
	if (fd < 0)
		SKIP(return, "no vnpu device");
	MUST(ioctl(fd, DRM_IOCTL_VNPU_GET_PARAM, &gp), "GET_PARAM");
	features = (__u32)gp.value;
	if (want_features >= 0)
		ASSERT_EQ(want_features, features)
			TH_LOG("the device runs with other engine features");
	if ((features & vnpu_eng_host_features()) != features)
		SKIP(return, "the device uses features %#x this CPU lacks", features);
	arena = calloc(1, ARENA_SIZE);
	dev_img = calloc(1, ARENA_SIZE);
	ASSERT_TRUE(arena && dev_img);
	build_layers();
	for (i = 0; i < num_layers; i++)
		ASSERT_EQ(0, vnpu_eng_layer_check(layers[i].op, layers[i].t, layers[i].n,
						  layers[i].attrs, layers[i].attr_size))
			TH_LOG("%s: invalid layer", layers[i].name);
	run_device(_metadata, fd, dev_img);
	host_img = arena;
	run_host(_metadata, host_img, features);
	for (i = 0; i < num_layers; i++) {
		const struct vnpu_cmd_tensor *y = &layers[i].t[layers[i].n - 1];

		EXPECT_EQ(0, memcmp(dev_img + y->offset, host_img + y->offset, out_bytes(y)))
			TH_LOG("layer %u (%s): NPU and CPU differ", i, layers[i].name);
	}
	TH_LOG("%u layers, engine features %#x", num_layers, features);
	free(dev_img);
	close(fd);
}

KSFT_MAIN_ORDER

int main(int argc, char **argv)
{
	char *end;

	if (argc == 3 && !strcmp(argv[1], "--features")) {
		errno = 0;
		want_features = strtol(argv[2], &end, 0);
		if (errno || end == argv[2] || *end || want_features < 0)
			want_features = -2;
	}
	if (argc != 1 && (argc != 3 || want_features < 0)) {
		fprintf(stderr, "usage: engine-npu-vs-cpu [--features N]\n");
		return 2;
	}
	return ksft_main_run(argc, argv, argc);
}

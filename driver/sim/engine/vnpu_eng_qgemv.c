// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * QLINEAR_CONV of one output position from one input position per
 * channel (a squeeze-excite block's 1x1 convolutions on a 1x1 map) over
 * %VNPU_PACK_QCONV_W weights: a matrix-vector product, where the int8
 * tile (vnpu_eng_quant.c) would sum ENG_QNR positions to keep one, and
 * its requantization eight output channels at a time, where the tile's
 * takes a vector per channel. Same units as the tile's (struct
 * eng_qplan), same arithmetic, so the same bits: exact 32-bit sums,
 * sum (x - xz) * (w - wz) as sum x * w - xz * sum w - wz * sum x +
 * K * xz * wz (x read as u8, an i8 input flipped by 0x80 and its zero
 * point moved by 128), then f32 times (x_scale * w_scale / y_scale),
 * clamped, rounded half to even, NaN to 0. Built per ISA
 * (vnpu_eng_isa.h).
 */
#include "vnpu_eng_kern.h"

/* A one-position QLINEAR_CONV's operands of one image and group. */
struct qgemv {
	const __s8 *w;		/* the group's rows, k4 apart */
	const __s32 *wsum;	/* their sums */
	__s16 *x;		/* the input column, staged (qgemv_stage()) */
	__s32 xsum;		/* its sum */
	__u32 xz;		/* X's zero point as u8 */
	__u64 k, k4;
	__u64 m0;		/* the group's first output channel */
	__u8 *y;		/* the image's output of channel 0 */
	float xs, ys;		/* X's and Y's scales */
	float lo, hi;		/* Y's bounds less its zero point */
	__s32 yz;
};

static __s64 qgemv_off(const struct vnpu_cmd_tensor *p, __u64 i)
{
	return p->rank == 1 && p->dims[0] > 1 ? (__s64)i * p->strides[0] : 0;
}

static float qgemv_scale(const struct eng_layer *l, __u32 t, __u64 i)
{
	return ((const float *)l->data[t])[qgemv_off(&l->t[t], i)];
}

static __s32 qgemv_zero(const struct eng_layer *l, __u32 t, __u64 i)
{
	const void *p = l->data[t];
	__s64 off = qgemv_off(&l->t[t], i);

	if (l->t[t].dtype == VNPU_DTYPE_U8)
		return ((const __u8 *)p)[off];
	return ((const __s8 *)p)[off];
}

/*
 * Rows [@r, @r + @n) (@n at most 8) of @g: their sums plus the bias and
 * zero point terms at @a, as 32-bit wrapping integers, and their weight
 * scales at @ws (the requantization multiplier is xs * ws / ys).
 */
static void qgemv_terms(const struct eng_layer *l, const struct qgemv *g,
			__u64 r, __u64 n, __u32 *a, float *ws)
{
	const struct vnpu_layer_conv *at = l->attrs;
	__u64 i;

	for (i = 0; i < n; i++) {
		__u64 m = g->m0 + r + i;
		__u32 wz = (__u32)qgemv_zero(l, 5, m);
		__u32 bias = at->flags & VNPU_LAYER_F_BIAS ?
			     (__u32)((const __s32 *)l->data[8])[(__s64)m * l->t[8].strides[0]] : 0;

		a[i] += bias - g->xz * (__u32)g->wsum[r + i] + (__u32)g->k * g->xz * wz -
			wz * (__u32)g->xsum;
		ws[i] = qgemv_scale(l, 4, m);
	}
}

#ifndef ENG_FMA
/* The column of @k depths at @x, @xs bytes apart, xor @flip, at @d. */
static __s32 qgemv_stage(const __u8 *x, __s64 xs, __u64 k, __u8 flip, __s16 *d)
{
	__u32 sum = 0;
	__u64 i;

	for (i = 0; i < k; i++) {
		__u8 v = x[(__s64)i * xs] ^ flip;

		d[i] = v;
		sum += v;
	}
	return (__s32)sum;
}

/* The plain products and rounding: the reference of the vector ones. */
static void qgemv_rows(const struct eng_layer *l, const struct qgemv *g,
		       __u64 r, __u64 n, __s64 ys)
{
	const float magic = 12582912.0f;
	__u32 a[8];
	float ws[8];
	__u64 i, k;

	for (i = 0; i < n; i++) {
		const __s8 *w = g->w + (r + i) * g->k4;

		a[i] = 0;
		for (k = 0; k < g->k; k++)
			a[i] += (__u32)((__s32)w[k] * g->x[k]);
	}
	qgemv_terms(l, g, r, n, a, ws);
	for (i = 0; i < n; i++) {
		float f = (float)(__s32)a[i] * (g->xs * ws[i] / g->ys);
		__s32 v = 0;

		if (f == f) {
			f = f < g->lo ? g->lo : f;
			f = f > g->hi ? g->hi : f;
			v = (__s32)((f + magic) - magic) + g->yz;
		}
		g->y[(__s64)(g->m0 + r + i) * ys] = (__u8)v;
	}
}
#else
typedef short v16hi_g __attribute__((vector_size(32)));
typedef short v16hi_gu __attribute__((vector_size(32), aligned(2), may_alias));
typedef unsigned char v16qu_g __attribute__((vector_size(16)));
typedef unsigned char v16qu_gu __attribute__((vector_size(16), aligned(1), may_alias));
typedef int v8si_g __attribute__((vector_size(32)));
typedef float v8sf_g __attribute__((vector_size(32)));
typedef float v8sf_gu __attribute__((vector_size(32), aligned(4), may_alias));
typedef int v8si_gu __attribute__((vector_size(32), aligned(4), may_alias));

/* The sum of the eight lanes of @a. */
static __attribute__((__always_inline__)) inline
__s32 qgemv_hsum(v8si_g a)
{
	a += __builtin_shufflevector(a, a, 4, 5, 6, 7, 0, 1, 2, 3);
	a += __builtin_shufflevector(a, a, 2, 3, 0, 1, 6, 7, 4, 5);
	a += __builtin_shufflevector(a, a, 1, 0, 3, 2, 5, 4, 7, 6);
	return a[0];
}

/*
 * The column of @k depths at @x, @xs bytes apart, xor @flip, at @d as
 * 16-bit integers; dense, 16 at a time, summed by vpmaddwd with ones.
 */
static __s32 qgemv_stage(const __u8 *x, __s64 xs, __u64 k, __u8 flip, __s16 *d)
{
	const v16hi_g one = (v16hi_g){} + 1;
	v8si_g acc = {};
	__u32 sum;
	__u64 i = 0;

	if (xs == 1) {
		for (; i + 16 <= k; i += 16) {
			v16hi_g v = __builtin_convertvector(*(const v16qu_gu *)(x + i) ^ flip,
							    v16hi_g);

			*(v16hi_gu *)(d + i) = v;
			acc += (v8si_g)__builtin_ia32_pmaddwd256(v, one);
		}
	}
	sum = (__u32)qgemv_hsum(acc);
	for (; i < k; i++) {
		__u8 v = x[(__s64)i * xs] ^ flip;

		d[i] = v;
		sum += v;
	}
	return (__s32)sum;
}

/*
 * 16 weights at @w as 16-bit integers: one vpmovsxbw from memory (GCC 12
 * makes two of halves and an insert of a conversion).
 */
static __attribute__((__always_inline__)) inline
v16hi_g qgemv_widen(const __s8 *w)
{
	v16hi_g v;

	__asm__("vpmovsxbw %1, %0" : "=x"(v) : "m"(*(const __s8 (*)[16])w));
	return v;
}

/*
 * Row @w's sum: its lanes @a of the depths before @k16, then the depths
 * from @k16 to @k one at a time.
 */
static __attribute__((__always_inline__)) inline
__u32 qgemv_finish(v8si_g a, const __s8 *w, const __s16 *x, __u64 k16, __u64 k)
{
	__u32 s = (__u32)qgemv_hsum(a);
	__u64 i;

	for (i = k16; i < k; i++)
		s += (__u32)((__s32)w[i] * x[i]);
	return s;
}

/*
 * Four rows of @k weights at @w (@k4 apart) by the column @x, their sums
 * at @a: per 16 depths, one load of the column and per row vpmovsxbw and
 * vpmaddwd, whose pair sums (at most 2 * 128 * 255) are exact. Each
 * row's sums in a variable of its own: GCC kept an array of them in
 * memory, stored every step.
 */
static void qgemv_sums4(const __s8 *w, __u64 k4, __u64 k, const __s16 *x,
			__u32 *a)
{
	__u64 k16 = k & ~15ull, i;
	v8si_g a0 = {}, a1 = {}, a2 = {}, a3 = {};

	for (i = 0; i < k16; i += 16) {
		v16hi_g xv = *(const v16hi_gu *)(x + i);

		a0 += (v8si_g)__builtin_ia32_pmaddwd256(qgemv_widen(w + i), xv);
		a1 += (v8si_g)__builtin_ia32_pmaddwd256(qgemv_widen(w + k4 + i), xv);
		a2 += (v8si_g)__builtin_ia32_pmaddwd256(qgemv_widen(w + 2 * k4 + i), xv);
		a3 += (v8si_g)__builtin_ia32_pmaddwd256(qgemv_widen(w + 3 * k4 + i), xv);
	}
	a[0] = qgemv_finish(a0, w, x, k16, k);
	a[1] = qgemv_finish(a1, w + k4, x, k16, k);
	a[2] = qgemv_finish(a2, w + 2 * k4, x, k16, k);
	a[3] = qgemv_finish(a3, w + 3 * k4, x, k16, k);
}

/* qgemv_sums4() of one row. */
static void qgemv_sum1(const __s8 *w, __u64 k, const __s16 *x, __u32 *a)
{
	__u64 k16 = k & ~15ull, i;
	v8si_g s = {};

	for (i = 0; i < k16; i += 16)
		s += (v8si_g)__builtin_ia32_pmaddwd256(qgemv_widen(w + i),
						       *(const v16hi_gu *)(x + i));
	*a = qgemv_finish(s, w, x, k16, k);
}

/*
 * Rows [@r, @r + @n) (@n at most 8) of @g into Y (channels @ys bytes
 * apart): the sums, then q_round8()'s steps on the eight at once.
 */
static void qgemv_rows(const struct eng_layer *l, const struct qgemv *g,
		       __u64 r, __u64 n, __s64 ys)
{
	__u32 a[8] = {};
	float ws[8] = {};
	const __s8 *w = g->w + r * g->k4;
	v8sf_g f;
	v8si_g v, nan;
	__u64 i = 0;

	for (; i + 4 <= n; i += 4)
		qgemv_sums4(w + i * g->k4, g->k4, g->k, g->x, a + i);
	for (; i < n; i++)
		qgemv_sum1(w + i * g->k4, g->k, g->x, a + i);
	qgemv_terms(l, g, r, n, a, ws);
	f = __builtin_convertvector(*(const v8si_gu *)a, v8sf_g) *
	    (((v8sf_g){} + g->xs) * *(const v8sf_gu *)ws / ((v8sf_g){} + g->ys));
	nan = f != f;
	f = __builtin_ia32_minps256(__builtin_ia32_maxps256(f, (v8sf_g){} + g->lo),
				    (v8sf_g){} + g->hi);
	v = (__builtin_ia32_cvtps2dq256(f) + g->yz) & ~nan;
	for (i = 0; i < n; i++)
		g->y[(__s64)(g->m0 + r + i) * ys] = (__u8)v[i];
}
#endif

int eng_qgemv_fits(const struct eng_layer *l)
{
	const struct vnpu_layer_conv *a = l->attrs;
	const struct vnpu_cmd_tensor *x = &l->t[0];
	struct eng_conv_shape s;

	eng_conv_shape(l, &s);
	return !(a->flags & ~(VNPU_LAYER_F_BIAS | VNPU_LAYER_F_PACKED)) &&
	       s.kh == 1 && s.kw == 1 && s.h * s.w == 1 && s.oh * s.ow == 1 &&
	       !a->pad_begin[0] && !a->pad_begin[1] && !a->pad_end[0] &&
	       !a->pad_end[1] && x->rank >= 3;
}

/*
 * Units [@ub, @ue) of the tile's plan (image, group, channel block; one
 * column block), each image and group's column staged once.
 */
int eng_qgemv_conv(const struct eng_layer *l, __u64 ub, __u64 ue,
		   const struct vnpu_eng_ctx *ctx)
{
	const struct vnpu_layer_conv *a = l->attrs;
	const struct vnpu_cmd_tensor *x = &l->t[0], *y = &l->t[l->n - 1];
	__u8 flip = x->dtype == VNPU_DTYPE_I8 ? 0x80 : 0;
	__s32 lo = y->dtype == VNPU_DTYPE_U8 ? 0 : -128;
	__s32 hi = y->dtype == VNPU_DTYPE_U8 ? 255 : 127;
	struct eng_conv_shape s;
	struct eng_qplan p;
	struct qgemv g = {};
	__u64 u, blk = ~0ull, r, r1;

	eng_conv_shape(l, &s);
	eng_qplan(&s, a, &p);
	g.k = p.k;
	g.k4 = p.k4;
	g.xz = (__u32)qgemv_zero(l, 2, 0) + (flip ? 128 : 0);
	g.yz = qgemv_zero(l, 7, 0);
	g.xs = qgemv_scale(l, 1, 0);
	g.ys = qgemv_scale(l, 6, 0);
	if (a->act.func == VNPU_ACT_RELU && g.yz > lo)
		lo = g.yz;
	g.lo = (float)(lo - g.yz);
	g.hi = (float)(hi - g.yz);
	g.x = (__s16 *)(((unsigned long)ctx->scratch + ENG_ALIGN - 1) &
			~(unsigned long)(ENG_ALIGN - 1));
	for (u = ub; u < ue; u++) {
		__u64 gi = u / p.nmb % s.group, img = u / p.nmb / s.group;

		if (u / p.nmb != blk) {
			blk = u / p.nmb;
			g.w = (const __s8 *)l->data[3] + gi * p.mp * p.k4;
			g.wsum = (const __s32 *)((const __s8 *)l->data[3] +
						 s.group * p.mp * p.k4) + gi * p.mp;
			g.m0 = gi * s.mg;
			g.y = (__u8 *)l->data[l->n - 1] + (__s64)img * y->strides[0];
			g.xsum = qgemv_stage((const __u8 *)l->data[0] +
					     (__s64)img * x->strides[0] +
					     (__s64)(gi * s.cg) * x->strides[1],
					     x->strides[1], p.k, flip, g.x);
		}
		r1 = eng_min(eng_qblock_m(&p, u % p.nmb + 1), s.mg);
		for (r = eng_qblock_m(&p, u % p.nmb); r < r1; r += 8) {
			qgemv_rows(l, &g, r, eng_min(8, r1 - r), y->strides[1]);
			eng_pause(ctx);
		}
	}
	return 0;
}

/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Basics of the float kernels: vector types, element conversions, the
 * strided element iterator and the element-wise functions. Included only
 * by the two kernel builds (vnpu_eng_avx2.c, vnpu_eng_base.c), which define
 * ENG_FMA before including it.
 */
#ifndef _VNPU_ENG_KERN_H_
#define _VNPU_ENG_KERN_H_

#include "vnpu_eng_priv.h"
#include "vnpu_eng_math.h"

typedef float v8sf __attribute__((vector_size(32)));
/* An unaligned view of 8 floats that may alias any float. */
typedef float v8sf_u __attribute__((vector_size(32), aligned(4), may_alias));

#ifdef ENG_FMA
#define VFMA(a, b, c)	__builtin_ia32_vfmaddps256((a), (b), (c))
#else
#define VFMA(a, b, c)	((a) * (b) + (c))
#endif

#define ENG_BLOCK 32	/* elements converted at a time */

static inline v8sf vload(const float *p)
{
	return *(const v8sf_u *)p;
}

static inline v8sf vbcast(float x)
{
	return (v8sf){ x, x, x, x, x, x, x, x };
}

static inline void vstore(float *p, v8sf v)
{
	*(v8sf_u *)p = v;
}

typedef int v8si __attribute__((vector_size(32)));
typedef float v4sf __attribute__((vector_size(16)));
typedef int v4si __attribute__((vector_size(16)));
/* An unaligned view of 4 doubles that may alias any double. */
typedef double v4df_u __attribute__((vector_size(32), aligned(8), may_alias));
/* An unaligned view of 4 floats that may alias any float. */
typedef float v4sf_u __attribute__((vector_size(16), aligned(4), may_alias));

/*
 * Four floats as doubles (exact): GCC 12 widens a generic vector in two
 * halves through a shuffle, in the softmax's hot loop through the stack;
 * clang widens it in one instruction and has no such builtin.
 */
static inline v4df v_widen(v4sf x)
{
#if defined(__AVX__) && !defined(__clang__)
	return __builtin_ia32_cvtps2pd256(x);
#else
	return __builtin_convertvector(x, v4df);
#endif
}

#ifdef ENG_FMA
#define VM_FMA VFMA
#else
/*
 * a * b + c rounded once, for the baseline build: a * b is exact in
 * double, s = a * b + c rounds, TwoSum gives its exact error e, and an
 * inexact s is made odd towards e (round to odd: 53 >= 2 * 24 + 2 bits),
 * which then rounds to float as the fused operation does. The vmath
 * functions thus give the FMA build's bits on every CPU.
 */
static inline v4sf vm_fma4(v4sf a, v4sf b, v4sf c)
{
	v4df p = __builtin_convertvector(a, v4df) * __builtin_convertvector(b, v4df);
	v4df cd = __builtin_convertvector(c, v4df), s = p + cd, bb = s - p;
	v4df e = (p - (s - bb)) + (cd - bb);
	/* (u & 1) - 1: all ones where u is even, with SSE2's 64-bit ops. */
	v4di u = (v4di)s, fix = (e != 0) & (s - s == 0) & ((u & 1) - 1);
	v4di same = ~((e > 0) ^ (s > 0));

	u += fix & ((same & 2) - 1);
	return __builtin_convertvector((v4df)u, v4sf);
}

static inline v8sf vm_fma8(v8sf a, v8sf b, v8sf c)
{
	v4sf lo = vm_fma4(__builtin_shufflevector(a, a, 0, 1, 2, 3),
			  __builtin_shufflevector(b, b, 0, 1, 2, 3),
			  __builtin_shufflevector(c, c, 0, 1, 2, 3));
	v4sf hi = vm_fma4(__builtin_shufflevector(a, a, 4, 5, 6, 7),
			  __builtin_shufflevector(b, b, 4, 5, 6, 7),
			  __builtin_shufflevector(c, c, 4, 5, 6, 7));

	return __builtin_shufflevector(lo, hi, 0, 1, 2, 3, 4, 5, 6, 7);
}

#define VM_FMA vm_fma8
#endif

/* The float transcendental functions on 8 lanes: vm8_erf()... */
#define VM_F v8sf
#define VM_I v8si
#define VM(name) vm8_##name
#include "vnpu_eng_vmath.h"
#undef VM_FMA
#undef VM

/*
 * Their exp once more without fused multiply-adds, vmu8_exp(): the same
 * bits on every path at the baseline's full speed, for Softmax.
 */
#define VM_FMA(a, b, c) ((a) * (b) + (c))
#define VM(name) vmu8_##name
#include "vnpu_eng_vmath.h"
#undef VM_F
#undef VM_I
#undef VM_FMA
#undef VM

/*
 * x < 0 ? m : x in each lane, by masks: a loop of ternaries whose m is a
 * product does not vectorize (the compiler must not take the product
 * where the scalar code would not, for its exception flags).
 */
static inline v8sf vneg_sel(v8sf x, v8sf m)
{
	v8si lt = x < 0;

	return (v8sf)(((v8si)m & lt) | ((v8si)x & ~lt));
}

/* x < lo ? lo : x > hi ? hi : x in each lane (CLIP), NaNs kept. */
static inline v8sf vclip(v8sf x, float lo, float hi)
{
	v8si below = x < lo, above = x > hi;
	v8si l = (v8si)vbcast(lo), h = (v8si)vbcast(hi);

	return (v8sf)((l & below) | (h & above & ~below) |
		      ((v8si)x & ~below & ~above));
}

/*
 * HardSwish in float: x * h with h = (x + 3) * fl(1/6) clamped to [0, 1],
 * 0 below and x above (as the double form has it, +0 for x < -3). x + 3
 * is exact near -3, where h is small, so each rounding stays relative:
 * within 3.5 * 2^-24 of |x (x + 3) / 6|, 2 ulp.
 */
static inline v8sf vhswish(v8sf x)
{
	v8sf h = (x + 3.0f) * (1.0f / 6.0f);
	v8si lo = h < 0, hi = h > 1;

	return (v8sf)(((v8si)x & hi) | ((v8si)(x * h) & ~lo & ~hi));
}

static inline float hswish(float x)
{
	float h = (x + 3.0f) * (1.0f / 6.0f);

	return h < 0 ? 0.0f : h > 1 ? x : x * h;
}

/* HardSwish on @n contiguous floats at @x into @y, which may be @x. */
static void hswish_f32(const float *x, float *y, __u64 n)
{
	__u64 i;

	for (i = 0; i + 8 <= n; i += 8)
		vstore(y + i, vhswish(vload(x + i)));
	for (; i < n; i++)
		y[i] = hswish(x[i]);
}

static inline float f32_of(__u32 bits)
{
	union {
		__u32 u;
		float f;
	} v = { .u = bits };

	return v.f;
}

static inline __u32 bits_of(float f)
{
	union {
		__u32 u;
		float f;
	} v = { .f = f };

	return v.u;
}

static inline void *eng_align(void *p)
{
	return (void *)(((unsigned long)p + ENG_ALIGN - 1) &
			~(unsigned long)(ENG_ALIGN - 1));
}

/* ---- f16 and bf16 --------------------------------------------------- */

static inline float f16_to_f32(__u16 h)
{
	__u32 sign = (__u32)(h >> 15) << 31, exp = (h >> 10) & 0x1f;
	__u32 man = h & 0x3ff;

	if (exp == 0x1f)
		return f32_of(sign | 0x7f800000 | (man << 13));
	if (exp == 0) {
		float f = (float)man * (1.0f / 16777216.0f);

		return sign ? -f : f;
	}
	return f32_of(sign | ((exp + 112) << 23) | (man << 13));
}

/* Round to nearest even, overflow to infinity. */
static inline __u16 f32_to_f16(float f)
{
	__u32 x = bits_of(f), sign = (x >> 16) & 0x8000;
	__u32 a = x & 0x7fffffff, man, shift, r;
	__s32 exp;

	if (a >= 0x7f800000)
		return sign | 0x7c00 | (a > 0x7f800000 ? 0x200 : 0);
	if (a >= 0x477ff000)	/* rounds to >= 65520 */
		return sign | 0x7c00;
	exp = (__s32)(a >> 23) - 127;
	if (exp < -25)
		return sign;
	man = (a & 0x7fffff) | 0x800000;
	if (exp < -14) {
		shift = (__u32)(-14 - exp) + 13;
		r = man >> shift;
		if ((man >> (shift - 1)) & 1 &&
		    ((man & ((1u << (shift - 1)) - 1)) || (r & 1)))
			r++;
		return sign | r;
	}
	r = ((__u32)(exp + 15) << 10) | ((man >> 13) & 0x3ff);
	if ((man >> 12) & 1 && ((man & 0xfff) || (r & 1)))
		r++;
	return sign | r;
}

static inline float bf16_to_f32(__u16 h)
{
	return f32_of((__u32)h << 16);
}

static inline __u16 f32_to_bf16(float f)
{
	__u32 x = bits_of(f);

	if ((x & 0x7fffffff) > 0x7f800000)
		return (x >> 16) | 0x40;
	return (x + 0x7fff + ((x >> 16) & 1)) >> 16;
}

typedef unsigned short v8hu __attribute__((vector_size(16)));
typedef unsigned short v8hu_u __attribute__((vector_size(16), aligned(2),
					      may_alias));

/*
 * @n f16 or bf16 (@dt) elements at @src as f32 at @dst, f16_to_f32() and
 * bf16_to_f32() eight at a time (f16 through F16C in the FMA build, else
 * as follows): bf16 is the upper half of an f32; an
 * f16's exponent and mantissa go to an f32's low exponent bits and are
 * scaled by 2^112, exactly (subnormals become normal), and infinities and
 * NaNs take the f32 exponent instead.
 */
static inline void eng_widen16(float *dst, const __u16 *src, __u64 n,
			       __u32 dt)
{
	__u64 i = 0;

#ifdef ENG_FMA
	/*
	 * The FMA build's CPUs have F16C (VNPU_ENG_F_AVX2_FMA asks for it):
	 * vcvtph2ps is exact and gives the same bits, NaNs aside (it quiets
	 * a signalling one).
	 */
	if (dt == VNPU_DTYPE_F16) {
		for (; i + 8 <= n; i += 8) {
			v8sf y;

			__asm__("vcvtph2ps %1, %0" : "=x"(y)
				: "m"(*(const v8hu_u *)(src + i)));
			vstore(dst + i, y);
		}
	}
#endif
	for (; i + 8 <= n; i += 8) {
		v8si x = __builtin_convertvector(*(const v8hu_u *)(src + i), v8si);
		v8si y, em, top;

		if (dt == VNPU_DTYPE_BF16) {
			y = x << 16;
		} else {
			em = (x & 0x7fff) << 13;
			top = (x & 0x7c00) == 0x7c00;
			y = ((v8si)((v8sf)em * vbcast(0x1p112f)) & ~top) |
			    ((em | 0x7f800000) & top) | ((x & 0x8000) << 16);
		}
		vstore(dst + i, (v8sf)y);
	}
	for (; i < n; i++)
		dst[i] = dt == VNPU_DTYPE_BF16 ? bf16_to_f32(src[i]) :
			 f16_to_f32(src[i]);
}

/* One f32, f16 or bf16 element (the float storage types) as f32. */
static inline float ldf(const void *base, __s64 off, __u32 dt)
{
	if (dt == VNPU_DTYPE_F32)
		return ((const float *)base)[off];
	if (dt == VNPU_DTYPE_F16)
		return f16_to_f32(((const __u16 *)base)[off]);
	return bf16_to_f32(((const __u16 *)base)[off]);
}

static inline void stf(void *base, __s64 off, __u32 dt, float v)
{
	if (dt == VNPU_DTYPE_F32)
		((float *)base)[off] = v;
	else if (dt == VNPU_DTYPE_F16)
		((__u16 *)base)[off] = f32_to_f16(v);
	else
		((__u16 *)base)[off] = f32_to_bf16(v);
}

/* ---- element loads and stores in blocks ----------------------------- */

static inline int dt_float(__u32 dt)
{
	return dt == VNPU_DTYPE_F32 || dt == VNPU_DTYPE_F64 ||
	       dt == VNPU_DTYPE_F16 || dt == VNPU_DTYPE_BF16;
}

static inline int dt_unsigned(__u32 dt)
{
	return dt == VNPU_DTYPE_U8 || dt == VNPU_DTYPE_U16 ||
	       dt == VNPU_DTYPE_U32 || dt == VNPU_DTYPE_U64 ||
	       dt == VNPU_DTYPE_BOOL;
}

#define LOAD_LOOP(T, expr) do {					\
	for (i = 0; i < n; i++) {					\
		T v = *(const T *)(p + i * st);				\
		dst[i] = (expr);					\
	}								\
} while (0)

/* @n elements at @p, @st bytes apart, as doubles. */
static void load_d(double *dst, const char *p, __s64 st, __u32 n, __u32 dt)
{
	__u32 i;

	switch (dt) {
	case VNPU_DTYPE_F32:
		LOAD_LOOP(float, v);
		break;
	case VNPU_DTYPE_F64:
		LOAD_LOOP(double, v);
		break;
	case VNPU_DTYPE_F16:
		LOAD_LOOP(__u16, f16_to_f32(v));
		break;
	case VNPU_DTYPE_BF16:
		LOAD_LOOP(__u16, bf16_to_f32(v));
		break;
	case VNPU_DTYPE_U8:
	case VNPU_DTYPE_BOOL:
		LOAD_LOOP(__u8, v);
		break;
	case VNPU_DTYPE_I8:
		LOAD_LOOP(__s8, v);
		break;
	case VNPU_DTYPE_U16:
		LOAD_LOOP(__u16, v);
		break;
	case VNPU_DTYPE_I16:
		LOAD_LOOP(__s16, v);
		break;
	case VNPU_DTYPE_I32:
		LOAD_LOOP(__s32, v);
		break;
	case VNPU_DTYPE_U32:
		LOAD_LOOP(__u32, v);
		break;
	case VNPU_DTYPE_I64:
		LOAD_LOOP(__s64, (double)v);
		break;
	default:
		LOAD_LOOP(__u64, (double)v);
		break;
	}
}

/* As 64-bit integers (floats truncated, saturating; NaN gives 0). */
static inline __s64 d_to_i64(double v)
{
	if (!(v == v))
		return 0;
	if (v >= 9223372036854775807.0)
		return 0x7fffffffffffffffll;
	if (v <= -9223372036854775808.0)
		return -0x7fffffffffffffffll - 1;
	return (__s64)v;
}

static inline __u64 d_to_u64(double v)
{
	if (!(v == v) || v <= 0)
		return v < 0 ? (__u64)d_to_i64(v) : 0;
	if (v >= 18446744073709551615.0)
		return ~0ull;
	return (__u64)v;
}

static void load_i(__s64 *dst, const char *p, __s64 st, __u32 n, __u32 dt)
{
	__u32 i;

	switch (dt) {
	case VNPU_DTYPE_U8:
	case VNPU_DTYPE_BOOL:
		LOAD_LOOP(__u8, v);
		break;
	case VNPU_DTYPE_I8:
		LOAD_LOOP(__s8, v);
		break;
	case VNPU_DTYPE_U16:
		LOAD_LOOP(__u16, v);
		break;
	case VNPU_DTYPE_I16:
		LOAD_LOOP(__s16, v);
		break;
	case VNPU_DTYPE_I32:
		LOAD_LOOP(__s32, v);
		break;
	case VNPU_DTYPE_U32:
		LOAD_LOOP(__u32, v);
		break;
	case VNPU_DTYPE_I64:
	case VNPU_DTYPE_U64:
		LOAD_LOOP(__s64, v);
		break;
	case VNPU_DTYPE_F32:
		LOAD_LOOP(float, d_to_i64(v));
		break;
	case VNPU_DTYPE_F64:
		LOAD_LOOP(double, d_to_i64(v));
		break;
	case VNPU_DTYPE_F16:
		LOAD_LOOP(__u16, d_to_i64(f16_to_f32(v)));
		break;
	default:
		LOAD_LOOP(__u16, d_to_i64(bf16_to_f32(v)));
		break;
	}
}

#define STORE_LOOP(T, expr) do {					\
	for (i = 0; i < n; i++) {					\
		__typeof__(*src) v = src[i];				\
		*(T *)(p + i * st) = (expr);				\
	}								\
} while (0)

static void store_d(char *p, __s64 st, const double *src, __u32 n, __u32 dt)
{
	__u32 i;

	switch (dt) {
	case VNPU_DTYPE_F32:
		STORE_LOOP(float, (float)v);
		break;
	case VNPU_DTYPE_F64:
		STORE_LOOP(double, v);
		break;
	case VNPU_DTYPE_F16:
		STORE_LOOP(__u16, f32_to_f16((float)v));
		break;
	case VNPU_DTYPE_BF16:
		STORE_LOOP(__u16, f32_to_bf16((float)v));
		break;
	case VNPU_DTYPE_BOOL:
		STORE_LOOP(__u8, v != 0);
		break;
	case VNPU_DTYPE_U8:
		STORE_LOOP(__u8, (__u8)d_to_i64(v));
		break;
	case VNPU_DTYPE_I8:
		STORE_LOOP(__s8, (__s8)d_to_i64(v));
		break;
	case VNPU_DTYPE_U16:
		STORE_LOOP(__u16, (__u16)d_to_i64(v));
		break;
	case VNPU_DTYPE_I16:
		STORE_LOOP(__s16, (__s16)d_to_i64(v));
		break;
	case VNPU_DTYPE_I32:
		STORE_LOOP(__s32, (__s32)d_to_i64(v));
		break;
	case VNPU_DTYPE_U32:
		STORE_LOOP(__u32, (__u32)d_to_i64(v));
		break;
	case VNPU_DTYPE_I64:
		STORE_LOOP(__s64, d_to_i64(v));
		break;
	default:
		STORE_LOOP(__u64, d_to_u64(v));
		break;
	}
}

static void store_i(char *p, __s64 st, const __s64 *src, __u32 n, __u32 dt)
{
	__u32 i;

	switch (dt) {
	case VNPU_DTYPE_BOOL:
		STORE_LOOP(__u8, v != 0);
		break;
	case VNPU_DTYPE_U8:
	case VNPU_DTYPE_I8:
		STORE_LOOP(__u8, (__u8)v);
		break;
	case VNPU_DTYPE_U16:
	case VNPU_DTYPE_I16:
		STORE_LOOP(__u16, (__u16)v);
		break;
	case VNPU_DTYPE_I32:
	case VNPU_DTYPE_U32:
		STORE_LOOP(__u32, (__u32)v);
		break;
	case VNPU_DTYPE_I64:
	case VNPU_DTYPE_U64:
		STORE_LOOP(__u64, (__u64)v);
		break;
	case VNPU_DTYPE_F32:
		STORE_LOOP(float, (float)v);
		break;
	case VNPU_DTYPE_F64:
		STORE_LOOP(double, (double)v);
		break;
	case VNPU_DTYPE_F16:
		STORE_LOOP(__u16, f32_to_f16((float)v));
		break;
	default:
		STORE_LOOP(__u16, f32_to_bf16((float)v));
		break;
	}
}

/* ---- pauses inside long rows ---------------------------------------- */

/*
 * A unit that is one row nothing may split (a softmax or a norm over 2^22
 * elements, a reduction's axis, ScatterElements' updates) is one part, and
 * so one FPU section in vnpu.ko, however long: its loops count the element
 * reads they make and pause (eng_pause()) every ENG_PAUSE_READS, between
 * iterations, so that vnpu.ko may end the section there. About 0.15 ms on
 * the slowest path (a softmax's m_exp in double on the baseline build).
 * Only a call between iterations: no sum changes order.
 */
#define ENG_PAUSE_READS	(1u << 14)

struct eng_pacer {
	const struct vnpu_eng_ctx *ctx;
	__u64 left;
};

static inline void eng_pacer_init(struct eng_pacer *p,
				  const struct vnpu_eng_ctx *ctx)
{
	p->ctx = ctx;
	p->left = ENG_PAUSE_READS;
}

/*
 * The end of a stretch of reads [@i, @n) that needs no pause inside: loops
 * run their iterations in such stretches, with eng_pace() between them,
 * so that their bodies hold no call.
 */
static inline __u64 eng_pace_end(const struct eng_pacer *p, __u64 i, __u64 n)
{
	return n - i > p->left ? i + p->left : n;
}

/* The same for @n iterations of @w reads each, from iteration @i. */
static inline __u64 eng_pace_end_w(const struct eng_pacer *p, __u64 i,
				   __u64 n, __u64 w)
{
	__u64 left = eng_div_up(p->left, w);

	return n - i > left ? i + left : n;
}

/* Counts @reads more reads; pauses when ENG_PAUSE_READS have been made. */
static inline void eng_pace(struct eng_pacer *p, __u64 reads)
{
	if (reads < p->left) {
		p->left -= reads;
		return;
	}
	p->left = ENG_PAUSE_READS;
	eng_pause(p->ctx);
}

/* ---- strided iteration over an output ------------------------------- */

#define ITER_MAX_OPS (VNPU_CHAIN_MAX_INPUTS + 1)

/**
 * struct eng_iter - walks the elements of an output in row-major order
 * with the matching element of each operand
 * @rank: dims (at least 1)
 * @dims: the output's extents
 * @nops: operands (the output among them)
 * @base: each operand's first element
 * @st: each operand's strides in bytes, in the output's dims
 */
struct eng_iter {
	__u32 rank;
	__u32 nops;
	__u64 dims[VNPU_MAX_DIMS];
	char *base[ITER_MAX_OPS];
	__s64 st[ITER_MAX_OPS][VNPU_MAX_DIMS];
};

typedef void (*iter_row_fn)(const void *arg, char *const *p, const __s64 *st,
			    __u64 n);

static void iter_init(struct eng_iter *it, const struct vnpu_tensor *out)
{
	__u32 d;

	it->rank = out->rank ? out->rank : 1;
	it->nops = 0;
	for (d = 0; d < VNPU_MAX_DIMS; d++)
		it->dims[d] = d < out->rank ? out->dims[d] : 1;
}

/* Adds operand @t (broadcast against the output @out) at @data. */
static void iter_add(struct eng_iter *it, const struct vnpu_tensor *t,
		     const struct vnpu_tensor *out, void *data)
{
	__s64 st[VNPU_MAX_DIMS];
	__u32 size = vnpu_eng_dtype_size(t->dtype), d, o = it->nops++;

	vnpu_eng_bcast_strides(t, out, st);
	it->base[o] = data;
	for (d = 0; d < VNPU_MAX_DIMS; d++)
		it->st[o][d] = d < out->rank ? st[d] * size : 0;
}

/*
 * @it with its dims of one left out and each dim merged into the one
 * before where every operand steps through both as through one (a dense
 * operand, a broadcast one): the same elements in the same order, in
 * longer runs (a per-channel [N, C, 1, 1] operand against [N, C, H, W]
 * runs H * W elements a call, not W).
 */
static void iter_merge(const struct eng_iter *it, struct eng_iter *m)
{
	__u32 d, o, r = 0, same;

	m->nops = it->nops;
	for (o = 0; o < it->nops; o++) {
		m->base[o] = it->base[o];
		m->st[o][0] = it->st[o][0];
	}
	m->dims[0] = it->dims[0];
	for (d = 1; d < it->rank; d++) {
		if (it->dims[d] == 1)
			continue;
		same = m->dims[r] != 1;
		for (o = 0; same && o < it->nops; o++)
			same = m->st[o][r] == it->st[o][d] * (__s64)it->dims[d];
		if (same)
			m->dims[r] *= it->dims[d];
		else if (m->dims[r] != 1)
			r++;
		if (!same)
			m->dims[r] = it->dims[d];
		for (o = 0; o < it->nops; o++)
			m->st[o][r] = it->st[o][d];
	}
	m->rank = r + 1;
}

/* Calls @fn for each run of the inner dim within elements [@lo, @hi). */
static void iter_run(const struct eng_iter *full, __u64 lo, __u64 hi,
		     iter_row_fn fn, const void *arg)
{
	__u64 coord[VNPU_MAX_DIMS], rem = lo, n;
	__s64 inner[ITER_MAX_OPS];
	char *p[ITER_MAX_OPS];
	struct eng_iter merged, *it = &merged;
	__u32 last, o;
	int d;

	if (lo >= hi)
		return;	/* also keeps a zero extent out of the divisions */
	iter_merge(full, it);
	last = it->rank - 1;
	for (d = last; d >= 0; d--) {
		coord[d] = rem % it->dims[d];
		rem /= it->dims[d];
	}
	for (o = 0; o < it->nops; o++)
		inner[o] = it->st[o][last];
	while (lo < hi) {
		for (o = 0; o < it->nops; o++) {
			p[o] = it->base[o];
			for (d = 0; d <= (int)last; d++)
				p[o] += (__s64)coord[d] * it->st[o][d];
		}
		n = eng_min(it->dims[last] - coord[last], hi - lo);
		fn(arg, p, inner, n);
		lo += n;
		coord[last] += n;
		for (d = last; d > 0 && coord[d] == it->dims[d]; d--) {
			coord[d] = 0;
			coord[d - 1]++;
		}
	}
}

/* Element range of units [@ub, @ue) of an element-wise op on @out. */
static void elem_range(const struct vnpu_tensor *out, __u64 ub, __u64 ue,
		       __u64 *lo, __u64 *hi)
{
	__u64 numel = vnpu_eng_numel(out);

	*lo = eng_min(ub * ENG_ELEM_UNIT, numel);
	*hi = eng_min(ue * ENG_ELEM_UNIT, numel);
}

/*
 * Output range of units [@ub, @ue) of an op whose outputs read @depth
 * elements each, matching flat_units() in vnpu_eng_units.c.
 */
static void flat_range(const struct vnpu_tensor *out, __u64 depth, __u64 ub,
		       __u64 ue, __u64 *lo, __u64 *hi)
{
	__u64 numel = vnpu_eng_numel(out), bc = eng_block_cols(numel, depth);

	*lo = eng_min(ub * bc, numel);
	*hi = eng_min(ue * bc, numel);
}

/* Rows of @row_len per unit, matching row_units() in vnpu_eng_units.c. */
static void row_range(__u64 rows, __u64 row_len, __u64 ub, __u64 ue,
		      __u64 *lo, __u64 *hi)
{
	__u64 per = ENG_ELEM_UNIT / (row_len ? row_len : 1);

	per = per ? per : 1;
	*lo = eng_min(ub * per, rows);
	*hi = eng_min(ue * per, rows);
}

/* ---- element-wise functions ----------------------------------------- */

#define MAP(expr) do {							\
	for (i = 0; i < n; i++) {					\
		double v = x[i];					\
		x[i] = (expr);						\
	}								\
} while (0)

static inline double softplus_d(double v)
{
	return v > 30 ? v : m_log1p(m_exp(v));
}

static inline double gelu_tanh_d(double v)
{
	return 0.5 * v * (1.0 + m_tanh(0.7978845608028654 *
				       (v + 0.044715 * v * v * v)));
}

enum map_exp_fn { MAP_EXP, MAP_SIGMOID, MAP_SILU };

/*
 * exp, the logistic function or x times it of @n doubles, four lanes at
 * a time (a lane gives the bits of the scalar m_exp(), wherever it sits).
 */
static void map_exp(double *x, __u32 n, enum map_exp_fn fn)
{
	__u32 i, j;

	for (i = 0; i < n; i += 4) {
		v4df v = {};

		for (j = 0; j < 4 && i + j < n; j++)
			v[j] = x[i + j];
		if (fn == MAP_EXP)
			v = v_exp(v);
		else
			v = (fn == MAP_SILU ? v : v_splat(1.0)) / (1.0 + v_exp(-v));
		for (j = 0; j < 4 && i + j < n; j++)
			x[i + j] = v[j];
	}
}

/* Applies @a to @n doubles in place. */
static void act_d(const struct vnpu_layer_act *a, double *x, __u32 n)
{
	double al = f32_of(a->alpha), be = f32_of(a->beta);
	__u32 i;

	switch (a->func) {
	case VNPU_ACT_IDENTITY:
		break;
	case VNPU_ACT_RELU:
		MAP(v < 0 ? 0.0 : v);
		break;
	case VNPU_ACT_LEAKY_RELU:
		MAP(v < 0 ? al * v : v);
		break;
	case VNPU_ACT_ELU:
		MAP(v < 0 ? al * m_expm1(v) : v);
		break;
	case VNPU_ACT_SELU:
		MAP(be * (v <= 0 ? al * m_expm1(v) : v));
		break;
	case VNPU_ACT_CELU:
		MAP(v > 0 ? v : al * m_expm1(v / al));
		break;
	case VNPU_ACT_CLIP:
		MAP(v < al ? al : v > be ? be : v);
		break;
	case VNPU_ACT_SIGMOID:
		map_exp(x, n, MAP_SIGMOID);
		break;
	case VNPU_ACT_SILU:
		map_exp(x, n, MAP_SILU);
		break;
	case VNPU_ACT_HARD_SIGMOID:
		MAP(al * v + be < 0 ? 0.0 : al * v + be > 1 ? 1.0 : al * v + be);
		break;
	case VNPU_ACT_HARD_SWISH:
		MAP(v / 6 + 0.5 < 0 ? 0.0 : v / 6 + 0.5 > 1 ? v : v * (v / 6 + 0.5));
		break;
	case VNPU_ACT_TANH:
		MAP(m_tanh(v));
		break;
	case VNPU_ACT_GELU:
		MAP(0.5 * v * (1.0 + m_erf(v * 0.7071067811865476)));
		break;
	case VNPU_ACT_GELU_TANH:
		MAP(gelu_tanh_d(v));
		break;
	case VNPU_ACT_ERF:
		MAP(m_erf(v));
		break;
	case VNPU_ACT_EXP:
		map_exp(x, n, MAP_EXP);
		break;
	case VNPU_ACT_LOG:
		MAP(m_log(v));
		break;
	case VNPU_ACT_SQRT:
		MAP(v < 0 ? m_nan() : m_sqrt(v));
		break;
	case VNPU_ACT_RECIPROCAL:
		MAP(1.0 / v);
		break;
	case VNPU_ACT_ABS:
		MAP(m_fabs(v));
		break;
	case VNPU_ACT_NEG:
		MAP(-v);
		break;
	case VNPU_ACT_FLOOR:
		MAP(m_floor(v));
		break;
	case VNPU_ACT_CEIL:
		MAP(m_ceil(v));
		break;
	case VNPU_ACT_ROUND:
		MAP(m_rint(v));
		break;
	case VNPU_ACT_SIGN:
		MAP(v > 0 ? 1.0 : v < 0 ? -1.0 : v);
		break;
	case VNPU_ACT_SIN:
		MAP(m_sin(v));
		break;
	case VNPU_ACT_COS:
		MAP(m_cos(v));
		break;
	case VNPU_ACT_TAN:
		MAP(m_tan(v));
		break;
	case VNPU_ACT_ASIN:
		MAP(m_asin(v));
		break;
	case VNPU_ACT_ACOS:
		MAP(m_acos(v));
		break;
	case VNPU_ACT_ATAN:
		MAP(m_atan(v));
		break;
	case VNPU_ACT_SINH:
		MAP(m_sinh(v));
		break;
	case VNPU_ACT_COSH:
		MAP(m_cosh(v));
		break;
	case VNPU_ACT_ASINH:
		MAP(m_asinh(v));
		break;
	case VNPU_ACT_ACOSH:
		MAP(m_acosh(v));
		break;
	case VNPU_ACT_ATANH:
		MAP(m_atanh(v));
		break;
	case VNPU_ACT_SOFTPLUS:
		MAP(softplus_d(v));
		break;
	case VNPU_ACT_SOFTSIGN:
		MAP(v / (1.0 + m_fabs(v)));
		break;
	case VNPU_ACT_MISH:
		MAP(v * m_tanh(softplus_d(v)));
		break;
	case VNPU_ACT_THRESHOLDED_RELU:
		MAP(v > al ? v : 0.0);
		break;
	case VNPU_ACT_SHRINK:
		MAP(v < -be ? v + al : v > be ? v - al : 0.0);
		break;
	default:
		break;
	}
}

/* Integer dtypes: the subset act_ok() lets through. */
static void act_i(const struct vnpu_layer_act *a, __s64 *x, __u32 n, int uns)
{
	__s64 lo = d_to_i64(f32_of(a->alpha)), hi = d_to_i64(f32_of(a->beta));
	__u32 i;

	for (i = 0; i < n; i++) {
		__s64 v = x[i];

		switch (a->func) {
		case VNPU_ACT_RELU:
			v = !uns && v < 0 ? 0 : v;
			break;
		case VNPU_ACT_ABS:
			v = !uns && v < 0 ? (__s64)(0 - (__u64)v) : v;
			break;
		case VNPU_ACT_NEG:
			v = (__s64)(0 - (__u64)v);
			break;
		case VNPU_ACT_SIGN:
			v = uns ? v != 0 : (v > 0) - (v < 0);
			break;
		case VNPU_ACT_CLIP:
			v = v < lo ? lo : v > hi ? hi : v;
			break;
		case VNPU_ACT_NOT:
			v = !v;
			break;
		default:
			break;
		}
		x[i] = v;
	}
}

/* HardSigmoid of four floats as act_d() computes it: al * x + be clamped. */
static inline v4df hard_sigmoid4(v4df v, double al, double be)
{
	v4df h = al * v + be;

	return v_sel(h < 0, v_splat(0), v_sel(h > 1, v_splat(1), h));
}

/* The functions act_f32() computes in float (vnpu_eng_vmath.h). */
static inline int act_vmath(__u32 func)
{
	return func == VNPU_ACT_ERF || func == VNPU_ACT_GELU ||
	       func == VNPU_ACT_GELU_TANH || func == VNPU_ACT_TANH ||
	       func == VNPU_ACT_SIGMOID || func == VNPU_ACT_SILU ||
	       func == VNPU_ACT_LOG;
}

/* The functions act_f32() computes in float, not through act_d(). */
static inline int act_in_float(__u32 func)
{
	return act_vmath(func) || func == VNPU_ACT_HARD_SWISH;
}

/*
 * One of the act_vmath() functions on @n contiguous floats: by 16 lanes
 * where @avx512 (vnpu_eng_act_avx512(), the same bits), else by 8.
 */
static void act_vmath_f32(__u32 func, const float *x, float *y, __u64 n,
			  int avx512)
{
	if (avx512)
		vnpu_eng_act_avx512(func, x, y, n);
	else
		vm8_act_map(func, x, y, n);
}

/* Whether the caller's features let the AVX-512 activations run. */
static inline int eng_act_avx512(const struct vnpu_eng_ctx *ctx)
{
#ifdef ENG_FMA
	return !!(ctx->features & VNPU_ENG_F_AVX512);
#else
	return 0;
#endif
}

/*
 * Applies @a to @n contiguous floats at @x into @y, which may be @x (fused
 * activations, unary layers); @avx512 from eng_act_avx512(). The
 * functions whose float result is the double path's bit for bit run in
 * float loops the compiler vectorizes: comparisons and sign changes round
 * nothing, and a product of two floats rounds once either way. The
 * act_vmath() ones and HardSwish (vhswish()) compute in float, in every
 * f32 layer (unary_row() gathers strided ones); the others go through
 * act_d().
 */
static void act_f32(const struct vnpu_layer_act *a, const float *x, float *y,
		    __u64 n, int avx512)
{
	float al = f32_of(a->alpha), be = f32_of(a->beta);
	double buf[ENG_BLOCK];
	__u64 i, j;

	if (act_vmath(a->func)) {
		act_vmath_f32(a->func, x, y, n, avx512);
		return;
	}
	switch (a->func) {
	case VNPU_ACT_IDENTITY:
		for (i = 0; x != y && i < n; i++)
			y[i] = x[i];
		return;
	case VNPU_ACT_RELU:
		for (i = 0; i < n; i++)
			y[i] = x[i] < 0 ? 0.0f : x[i];
		return;
	case VNPU_ACT_LEAKY_RELU:
		for (i = 0; i + 8 <= n; i += 8) {
			v8sf v = vload(x + i);

			vstore(y + i, vneg_sel(v, v * al));
		}
		for (; i < n; i++)
			y[i] = x[i] < 0 ? al * x[i] : x[i];
		return;
	case VNPU_ACT_THRESHOLDED_RELU:
		for (i = 0; i < n; i++)
			y[i] = x[i] > al ? x[i] : 0.0f;
		return;
	case VNPU_ACT_CLIP:
		for (i = 0; i < n; i++)
			y[i] = x[i] < al ? al : x[i] > be ? be : x[i];
		return;
	case VNPU_ACT_NEG:
		for (i = 0; i < n; i++)
			y[i] = -x[i];
		return;
	case VNPU_ACT_ABS:
		for (i = 0; i < n; i++)
			y[i] = __builtin_fabsf(x[i]);
		return;
	case VNPU_ACT_HARD_SWISH:
		hswish_f32(x, y, n);
		return;
	case VNPU_ACT_HARD_SIGMOID:
		for (i = 0; i + 4 <= n; i += 4) {
			v4df v = __builtin_convertvector(*(const v4sf_u *)(x + i),
							 v4df);

			v = hard_sigmoid4(v, al, be);
			*(v4sf_u *)(y + i) = __builtin_convertvector(v, v4sf);
		}
		x += i;
		y += i;
		n -= i;
		break;
	default:
		break;
	}
	for (i = 0; i < n; i += ENG_BLOCK) {
		__u32 m = (__u32)eng_min(ENG_BLOCK, n - i);

		for (j = 0; j < m; j++)
			buf[j] = x[i + j];
		act_d(a, buf, m);
		for (j = 0; j < m; j++)
			y[i + j] = (float)buf[j];
	}
}

/*
 * The bound of a fused activation (VNPU_ACT_F_MAX or _MIN) on @n floats
 * at @y, after the function: BINARY's Max(y, beta) or Min(y, beta), which
 * keep a NaN y and give beta on a tie.
 */
static void act_bound(const struct vnpu_layer_act *a, float *y, __u64 n)
{
	float b = f32_of(a->beta);
	__u64 i;

	if (a->flags & VNPU_ACT_F_MAX)
		for (i = 0; i < n; i++)
			y[i] = F32_MAX(y[i], b, 1);
	else if (a->flags & VNPU_ACT_F_MIN)
		for (i = 0; i < n; i++)
			y[i] = F32_MAX(y[i], b, 0);
}

#endif /* _VNPU_ENG_KERN_H_ */

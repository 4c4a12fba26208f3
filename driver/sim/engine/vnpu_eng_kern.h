/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Basics of the float kernels: vector types, element conversions, the
 * strided element iterator and the element-wise functions, and the
 * functions one kernel file calls in another. Included first by every
 * float kernel file, each built twice (vnpu_eng_isa.h: ENG_FMA, and each
 * external function's name per build).
 */
#ifndef _VNPU_ENG_KERN_H_
#define _VNPU_ENG_KERN_H_

#include "vnpu_eng_isa.h"
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
 * ---- Builtins that GCC and clang spell differently --------------------
 *
 * GCC 12 has a builtin for each x86 instruction and no generic form of
 * some; clang has the generic forms (__builtin_convertvector,
 * __builtin_elementwise_max) and other names for the rest. The kernels
 * call these wrappers, so the two spellings live here only.
 */

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

/*
 * Make @v opaque to GCC at this point: it keeps the value as computed in
 * a vector register instead of folding it into what follows (a widening
 * load into a shuffle, a chain of adds into a tree of products that
 * spills). clang does neither and needs no hint.
 */
#ifdef __clang__
#define ENG_OPAQUE(v)		((void)(v))
#define ENG_OPAQUE2(a, b)	((void)(a), (void)(b))
#else
#define ENG_OPAQUE(v)		__asm__("" : "+x"(v))
#define ENG_OPAQUE2(a, b)	__asm__("" : "+x"(a), "+x"(b))
#endif

#ifdef ENG_FMA
typedef unsigned char v16qu __attribute__((vector_size(16)));
typedef unsigned char v32qu __attribute__((vector_size(32)));
typedef short v16hi __attribute__((vector_size(32)));

/*
 * The 16 bytes of @b zero-extended to 16-bit lanes: one vpmovzxbw, where
 * GCC's generic conversion widens each half and joins them.
 */
static __attribute__((__always_inline__)) inline v16hi eng_zx16(v16qu b)
{
#ifdef __clang__
	return __builtin_convertvector(b, v16hi);
#else
	typedef char v16qc __attribute__((vector_size(16)));

	return (v16hi)__builtin_ia32_pmovzxbw256((v16qc)b);
#endif
}

/* The 16 bytes of @b as signed, sign-extended to 16-bit lanes (vpmovsxbw). */
static __attribute__((__always_inline__)) inline v16hi eng_sx16(v16qu b)
{
	typedef signed char v16qs __attribute__((vector_size(16)));

#ifdef __clang__
	return __builtin_convertvector((v16qs)b, v16hi);
#else
	typedef char v16qc __attribute__((vector_size(16)));

	return (v16hi)__builtin_ia32_pmovsxbw256((v16qc)(v16qs)b);
#endif
}

/* The larger of each unsigned byte of @a and @b (vpmaxub). */
static inline v32qu eng_maxu8(v32qu a, v32qu b)
{
#ifdef __clang__
	return __builtin_elementwise_max(a, b);
#else
	typedef char v32qc __attribute__((vector_size(32)));

	return (v32qu)__builtin_ia32_pmaxub256((v32qc)a, (v32qc)b);
#endif
}

/* The eight floats at @p + @idx (vgatherdps, every lane). */
static inline v8sf eng_gather8f(const float *p, v8si idx)
{
	const v8sf on = (v8sf)(v8si){ -1, -1, -1, -1, -1, -1, -1, -1 };

#ifdef __clang__
	return __builtin_ia32_gatherd_ps256((v8sf){}, p, idx, on, 4);
#else
	return __builtin_ia32_gathersiv8sf((v8sf){}, p, idx, on, 4);
#endif
}

/* The eight 32-bit words at byte offsets @off from @p (vpgatherdd). */
static inline v8si eng_gather8w(const void *p, v8si off)
{
	const v8si on = { -1, -1, -1, -1, -1, -1, -1, -1 };

#ifdef __clang__
	return __builtin_ia32_gatherd_d256((v8si){}, (const int *)p, off, on, 1);
#else
	return __builtin_ia32_gathersiv8si((v8si){}, (const int *)p, off, on, 1);
#endif
}
#endif

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
#ifdef __AVX__
#define VM_ALL(m)	(__builtin_ia32_movmskps256((v8sf)(m)) == 0xff)
#endif
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
#undef VM_ALL
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

/* The 8x8 block @r[i][j] transposed in registers: r[j][i] after. */
static inline void vtranspose8(v8sf *r)
{
	v8sf t0 = __builtin_shufflevector(r[0], r[1], 0, 8, 1, 9, 4, 12, 5, 13);
	v8sf t1 = __builtin_shufflevector(r[0], r[1], 2, 10, 3, 11, 6, 14, 7, 15);
	v8sf t2 = __builtin_shufflevector(r[2], r[3], 0, 8, 1, 9, 4, 12, 5, 13);
	v8sf t3 = __builtin_shufflevector(r[2], r[3], 2, 10, 3, 11, 6, 14, 7, 15);
	v8sf t4 = __builtin_shufflevector(r[4], r[5], 0, 8, 1, 9, 4, 12, 5, 13);
	v8sf t5 = __builtin_shufflevector(r[4], r[5], 2, 10, 3, 11, 6, 14, 7, 15);
	v8sf t6 = __builtin_shufflevector(r[6], r[7], 0, 8, 1, 9, 4, 12, 5, 13);
	v8sf t7 = __builtin_shufflevector(r[6], r[7], 2, 10, 3, 11, 6, 14, 7, 15);
	v8sf u0 = __builtin_shufflevector(t0, t2, 0, 1, 8, 9, 4, 5, 12, 13);
	v8sf u1 = __builtin_shufflevector(t0, t2, 2, 3, 10, 11, 6, 7, 14, 15);
	v8sf u2 = __builtin_shufflevector(t1, t3, 0, 1, 8, 9, 4, 5, 12, 13);
	v8sf u3 = __builtin_shufflevector(t1, t3, 2, 3, 10, 11, 6, 7, 14, 15);
	v8sf u4 = __builtin_shufflevector(t4, t6, 0, 1, 8, 9, 4, 5, 12, 13);
	v8sf u5 = __builtin_shufflevector(t4, t6, 2, 3, 10, 11, 6, 7, 14, 15);
	v8sf u6 = __builtin_shufflevector(t5, t7, 0, 1, 8, 9, 4, 5, 12, 13);
	v8sf u7 = __builtin_shufflevector(t5, t7, 2, 3, 10, 11, 6, 7, 14, 15);

	r[0] = __builtin_shufflevector(u0, u4, 0, 1, 2, 3, 8, 9, 10, 11);
	r[1] = __builtin_shufflevector(u1, u5, 0, 1, 2, 3, 8, 9, 10, 11);
	r[2] = __builtin_shufflevector(u2, u6, 0, 1, 2, 3, 8, 9, 10, 11);
	r[3] = __builtin_shufflevector(u3, u7, 0, 1, 2, 3, 8, 9, 10, 11);
	r[4] = __builtin_shufflevector(u0, u4, 4, 5, 6, 7, 12, 13, 14, 15);
	r[5] = __builtin_shufflevector(u1, u5, 4, 5, 6, 7, 12, 13, 14, 15);
	r[6] = __builtin_shufflevector(u2, u6, 4, 5, 6, 7, 12, 13, 14, 15);
	r[7] = __builtin_shufflevector(u3, u7, 4, 5, 6, 7, 12, 13, 14, 15);
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
 * F32_MAX(y, b, @max) in each lane, act_bound()'s bound: a NaN y stays, a
 * tie gives b.
 */
static inline v8sf vbound(v8sf y, v8sf b, int max)
{
	v8si keep = (max ? y > b : y < b) | (y != y);

	return (v8sf)(((v8si)y & keep) | ((v8si)b & ~keep));
}

/* @v, or vbound(@v, @b, @max) when @bound: a fused activation's optional bound. */
static inline v8sf vbound_if(v8sf v, v8sf b, int bound, int max)
{
	return bound ? vbound(v, b, max) : v;
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

/* vnpu_eng_act.c: HardSwish on @n contiguous floats at @x into @y. */
void hswish_f32(const float *x, float *y, __u64 n);

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

/* vnpu_eng_iter.c: @n elements at @p, @st bytes apart, as doubles. */
void load_d(double *dst, const char *p, __s64 st, __u32 n, __u32 dt);

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

void load_i(__s64 *dst, const char *p, __s64 st, __u32 n, __u32 dt);

void store_d(char *p, __s64 st, const double *src, __u32 n, __u32 dt);
void store_i(char *p, __s64 st, const __s64 *src, __u32 n, __u32 dt);

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

/*
 * The same for @n iterations of @w reads each, from iteration @i; without
 * a division where they all fit (both factors at most ENG_PAUSE_READS, so
 * the product cannot overflow): callers take short rows in a loop.
 */
static inline __u64 eng_pace_end_w(const struct eng_pacer *p, __u64 i,
				   __u64 n, __u64 w)
{
	__u64 left;

	if (n - i <= p->left && w <= p->left && (n - i) * w <= p->left)
		return n;
	left = eng_div_up(p->left, w);
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

/* ---- coordinates ----------------------------------------------------- */

static inline void coords_of(const struct vnpu_cmd_tensor *t, __u64 e, __u64 *coord)
{
	int d;

	for (d = (int)t->rank - 1; d >= 0; d--) {
		coord[d] = e % t->dims[d];
		e /= t->dims[d];
	}
}

static inline void coords_next(const struct vnpu_cmd_tensor *t, __u64 *coord)
{
	int d;

	for (d = (int)t->rank - 1; d >= 0; d--) {
		if (++coord[d] < t->dims[d])
			return;
		coord[d] = 0;
	}
}

/*
 * Element by element: @coord was mostly just stored by coords_next(), one
 * word at a time, and a vector load of it (gcc vectorises the loop) waits
 * until those stores have left the store buffer, and with them the
 * stores before, such as the last output row's. Where that row's lines
 * were last written on the other CPU, each such wait is a round trip
 * between the CPUs: dbnet's nearest Resize of 256x10x10 took 0.9 ms on
 * the job thread of a 2-tile device where it took 0.12 on one CPU.
 */
static inline __s64 offset_of(const struct vnpu_cmd_tensor *t, const __u64 *coord)
{
	__s64 off = 0;
	__u32 d;

	for (d = 0; d < t->rank; d++) {
		off += (__s64)coord[d] * t->strides[d];
		__asm__("" : "+r"(off));	/* keeps the loop scalar */
	}
	return off;
}

static inline void copy_elem(char *dst, const char *src, __u32 size)
{
	switch (size) {
	case 1:
		*(__u8 *)dst = *(const __u8 *)src;
		break;
	case 2:
		*(__u16 *)dst = *(const __u16 *)src;
		break;
	case 4:
		*(__u32 *)dst = *(const __u32 *)src;
		break;
	default:
		*(__u64 *)dst = *(const __u64 *)src;
		break;
	}
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

/* vnpu_eng_iter.c */
void iter_init(struct eng_iter *it, const struct vnpu_cmd_tensor *out);
void iter_add(struct eng_iter *it, const struct vnpu_cmd_tensor *t,
	      const struct vnpu_cmd_tensor *out, void *data);
void iter_run(const struct eng_iter *full, __u64 lo, __u64 hi,
	      iter_row_fn fn, const void *arg);
void iter_run_pairs(const struct eng_iter *full, __u32 size, __u64 lo,
		    __u64 hi, iter_row_fn fn, const void *arg);
void elem_range(const struct vnpu_cmd_tensor *out, __u64 ub, __u64 ue,
		__u64 *lo, __u64 *hi);
void flat_range(const struct vnpu_cmd_tensor *out, __u64 depth, __u64 ub,
		__u64 ue, __u64 *lo, __u64 *hi);
void row_range(__u64 rows, __u64 row_len, __u64 ub, __u64 ue,
	       __u64 *lo, __u64 *hi);

/* ---- element-wise functions ----------------------------------------- */

/* vnpu_eng_act.c */
void act_d(const struct vnpu_layer_act *a, double *x, __u32 n);
void act_i(const struct vnpu_layer_act *a, __s64 *x, __u32 n, int uns);

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

/* vnpu_eng_act.c */
void act_vmath_f32(__u32 func, const float *x, float *y, __u64 n,
		   int avx512);

/* Whether the caller's features let the AVX-512 activations run. */
static inline int eng_act_avx512(const struct vnpu_eng_ctx *ctx)
{
#ifdef ENG_FMA
	return !!(ctx->features & VNPU_ENG_F_AVX512);
#else
	return 0;
#endif
}

/* vnpu_eng_act.c */
void act_f32(const struct vnpu_layer_act *a, const float *x, float *y,
	     __u64 n, int avx512);
void act_bound(const struct vnpu_layer_act *a, float *y, __u64 n);
void act_rows_f32(const struct vnpu_layer_act *a, float *y, __s64 rs,
		  __u64 rows, __u64 n, int avx512);

/*
 * ---- functions of one kernel file that others call ------------------
 *
 * Each build's own through vnpu_eng_isa.h; those that take the GEMM's
 * blocks are in vnpu_eng_gemm_kern.h. The ops' entry points (eng_run_fn)
 * are vnpu_eng_kern.c's op table.
 */

/* vnpu_eng_gemm.c */
int run_gemm(const struct eng_layer *l, __u64 ub, __u64 ue,
	     const struct vnpu_eng_ctx *ctx);
int run_conv(const struct eng_layer *l, __u64 ub, __u64 ue,
	     const struct vnpu_eng_ctx *ctx);
int run_pool(const struct eng_layer *l, __u64 ub, __u64 ue,
	     const struct vnpu_eng_ctx *ctx);
void copy_f32(float *dst, const float *src, __u64 n);
void zero_f32(float *dst, __u64 n);
void load_f32(float *dst, const void *src, __s64 st, __u64 n, __u32 dt);
__s64 batch_offset(const struct vnpu_cmd_tensor *t, const struct vnpu_cmd_tensor *y,
		   __u64 b);
void transpose8(const float *src, __s64 rs, float *d, __s64 ds);
void valid_span(__s64 off, __u64 s, __u64 n, __u64 out, __u64 *lo,
		__u64 *hi);
void act_store(float *y, const float *t, __u32 len, const float *add,
	       const float *res, const struct vnpu_layer_act *act,
	       int avx512);

/* vnpu_eng_wino.c */
int run_conv_wino(const struct eng_layer *l, __u64 ub, __u64 ue,
		  const struct vnpu_eng_ctx *ctx);
int wino_pack_u(const float *src, __u64 groups, __u64 rows, __u64 cg,
		float *dst);

/* vnpu_eng_wino2.c */
int run_conv_wino2(const struct eng_layer *l, __u64 ub, __u64 ue,
		   const struct vnpu_eng_ctx *ctx);

/* vnpu_eng_dw.c */
int run_conv_dw(const struct eng_layer *l, __u64 ub, __u64 ue,
		const struct vnpu_eng_ctx *ctx);
int run_conv_dw_lanes(const struct eng_layer *l, __u64 ub, __u64 ue,
		      const struct vnpu_eng_ctx *ctx);
int run_conv_dw_window(const struct eng_layer *l, __u64 ub, __u64 ue,
		       const struct vnpu_eng_ctx *ctx);

/* vnpu_eng_elem.c */
int run_binary(const struct eng_layer *l, __u64 ub, __u64 ue,
	       const struct vnpu_eng_ctx *ctx);
int run_where(const struct eng_layer *l, __u64 ub, __u64 ue,
	      const struct vnpu_eng_ctx *ctx);
int run_unary(const struct eng_layer *l, __u64 ub, __u64 ue,
	      const struct vnpu_eng_ctx *ctx);
int run_softmax(const struct eng_layer *l, __u64 ub, __u64 ue,
		const struct vnpu_eng_ctx *ctx);
int run_norm(const struct eng_layer *l, __u64 ub, __u64 ue,
	     const struct vnpu_eng_ctx *ctx);
int run_reduce(const struct eng_layer *l, __u64 ub, __u64 ue,
	       const struct vnpu_eng_ctx *ctx);
int run_argreduce(const struct eng_layer *l, __u64 ub, __u64 ue,
		  const struct vnpu_eng_ctx *ctx);
int run_cast(const struct eng_layer *l, __u64 ub, __u64 ue,
	     const struct vnpu_eng_ctx *ctx);
int run_lookup(const struct eng_layer *l, __u64 ub, __u64 ue,
	       const struct vnpu_eng_ctx *ctx);
void copy_run(char *dst, __s64 ds, const char *src, __s64 ss, __u64 n,
	      __u32 size);
/* A contiguous f32 lane's softmax (@x may be @y): SOFTMAX's bits. */
void softmax_row_f32(const float *x, float *y, __u64 len,
		     struct eng_pacer *pc);
/*
 * The same in place for @rows lanes of @len floats at @y, one after the
 * other, whose maxima, found as softmax_row_f32() finds them, are at @mx:
 * its passes but the first.
 */
void softmax_rows_max_f32(float *y, __u64 len, __u64 rows, const float *mx,
			  struct eng_pacer *pc);

/* vnpu_eng_data.c */
int run_resize(const struct eng_layer *l, __u64 ub, __u64 ue,
	       const struct vnpu_eng_ctx *ctx);
int run_pad(const struct eng_layer *l, __u64 ub, __u64 ue,
	    const struct vnpu_eng_ctx *ctx);
int run_gather(const struct eng_layer *l, __u64 ub, __u64 ue,
	       const struct vnpu_eng_ctx *ctx);
int run_gather_elements(const struct eng_layer *l, __u64 ub, __u64 ue,
			const struct vnpu_eng_ctx *ctx);
double cubic_w(double t, double a);
int load_index(const struct vnpu_cmd_tensor *t, const void *base, __s64 off,
	       __u64 n, __s64 *out);

/* vnpu_eng_quant.c */
int run_quant(const struct eng_layer *l, __u64 ub, __u64 ue,
	      const struct vnpu_eng_ctx *ctx);
int run_qmatmul(const struct eng_layer *l, __u64 ub, __u64 ue,
		const struct vnpu_eng_ctx *ctx);
int run_qlinear_conv(const struct eng_layer *l, __u64 ub, __u64 ue,
		     const struct vnpu_eng_ctx *ctx);
int run_qlinear_add(const struct eng_layer *l, __u64 ub, __u64 ue,
		    const struct vnpu_eng_ctx *ctx);

/* vnpu_eng_scatter.c */
int run_scatter_elements(const struct eng_layer *l, __u64 ub, __u64 ue,
			 const struct vnpu_eng_ctx *ctx);
int run_scatter_nd(const struct eng_layer *l, __u64 ub, __u64 ue,
		   const struct vnpu_eng_ctx *ctx);
int run_gather_nd(const struct eng_layer *l, __u64 ub, __u64 ue,
		  const struct vnpu_eng_ctx *ctx);

/* vnpu_eng_grid.c, _tfidf.c, _det.c, _roi.c, _poolidx.c, _chain.c, _lstm.c */
int run_grid_sample(const struct eng_layer *l, __u64 ub, __u64 ue,
		    const struct vnpu_eng_ctx *ctx);
int run_tfidf(const struct eng_layer *l, __u64 ub, __u64 ue,
	      const struct vnpu_eng_ctx *ctx);
int run_det(const struct eng_layer *l, __u64 ub, __u64 ue,
	    const struct vnpu_eng_ctx *ctx);
int run_roi_align(const struct eng_layer *l, __u64 ub, __u64 ue,
		  const struct vnpu_eng_ctx *ctx);
int run_maxpool_index(const struct eng_layer *l, __u64 ub, __u64 ue,
		      const struct vnpu_eng_ctx *ctx);
int run_chain(const struct eng_layer *l, __u64 ub, __u64 ue,
	      const struct vnpu_eng_ctx *ctx);
void bin_f32_runs(__u32 func, const float *pa, int ra, const float *pb,
		  int rb, float *r, __u32 n, int avx512);
int run_lstm(const struct eng_layer *l, __u64 ub, __u64 ue,
	     const struct vnpu_eng_ctx *ctx);

/* vnpu_eng_attn.c */
int run_attention(const struct eng_layer *l, __u64 ub, __u64 ue,
		  const struct vnpu_eng_ctx *ctx);

/* vnpu_eng_move.c */
void eng_transpose32(const struct vnpu_eng_transpose *t);

/*
 * vnpu_eng_qgemv.c: whether a packed QLINEAR_CONV has one output position
 * from one input position (a 1x1 on a 1x1 map), and its run
 */
int eng_qgemv_fits(const struct eng_layer *l);
int eng_qgemv_conv(const struct eng_layer *l, __u64 ub, __u64 ue,
		   const struct vnpu_eng_ctx *ctx);

/*
 * vnpu_eng_quant.c: a QLINEAR_CONV's struct eng_qout for other kernels of
 * its sums (then qtile_out(), vnpu_eng_qout.h): its layer-wide fields
 * (Y's bounds, zero point and channel stride; the fused add's parameters
 * in @qa), and those of output channels [@m, @m + @rows) for plain sums
 * (the bias added, W's zero points as 0).
 */
void eng_qout_layer(const struct eng_layer *l, struct eng_qadd_arg *qa,
		    struct eng_qout *o);
void eng_qout_rows(const struct eng_layer *l, __u64 m, __u32 rows,
		   struct eng_qout *o);

/* vnpu_eng_qwino.c: %VNPU_LAYER_F_QWINO's QLINEAR_CONV */
int eng_qwino_run(const struct eng_layer *l, __u64 ub, __u64 ue,
		  const struct vnpu_eng_ctx *ctx);
/* vnpu_eng_qwino.c: a packed QLINEAR_CONV as F(4x4, 3x3) (eng_qw4_fits()) */
int eng_qw4_run(const struct eng_layer *l, __u64 ub, __u64 ue,
		const struct vnpu_eng_ctx *ctx);

#endif /* _VNPU_ENG_KERN_H_ */

/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * vnpu_eng_vmath.h's functions on 16 lanes (vm16_*()), inline, for the
 * objects built with -mavx512f -mfma that run them (the AVX-512
 * activations, the bf16 Winograd output transform's SiLU): the same
 * operations as the AVX2 build's 8 lanes, so the same bits.
 */
#ifndef VNPU_ENG_VMATH16_H
#define VNPU_ENG_VMATH16_H

#include "vnpu_eng_priv.h"

typedef float v16sf __attribute__((vector_size(64)));
typedef int v16si __attribute__((vector_size(64)));
typedef float v8sf __attribute__((vector_size(32)));
typedef int v8si __attribute__((vector_size(32)));

/*
 * Whether all 16 lanes of mask @m are set: its halves ANDed, one movmskps
 * (the header's lane-by-lane loop would test 16 lanes with 16 branches, in
 * every logistic() call).
 */
static inline int vm16_all_set(v16si m)
{
	v8si h = __builtin_shufflevector(m, m, 0, 1, 2, 3, 4, 5, 6, 7) &
		 __builtin_shufflevector(m, m, 8, 9, 10, 11, 12, 13, 14, 15);

	return __builtin_ia32_movmskps256((v8sf)h) == 0xff;
}

/* Whether every lane of @x is below @c: one compare into a mask. */
static inline int vm16_lt_all(v16sf x, float c)
{
	return __builtin_ia32_cmpps512_mask(x, (v16sf){} + c, 0x11 /* LT_OQ */,
					    0xffff, 4) == 0xffff;
}

/*
 * vpermps: lane i of the 16 floats at @tab by k[i] % 16 (GCC has only the
 * masked builtin, clang only the plain one).
 */
static inline v16sf vm16_perm16(const float *tab, v16si k)
{
#ifdef __clang__
	return __builtin_ia32_permvarsf512(*(const v16sf *)tab, k);
#else
	return __builtin_ia32_permvarsf512_mask(*(const v16sf *)tab, k,
						(v16sf){}, 0xffff);
#endif
}

/*
 * vmaxps: lane i of @a where @a > @b, else @b's (so @b's when either is
 * NaN). GCC has only the masked builtin, clang only the plain one.
 */
static inline v16sf vm16_maxps(v16sf a, v16sf b)
{
#ifdef __clang__
	return __builtin_ia32_maxps512(a, b, 4);
#else
	return __builtin_ia32_maxps512_mask(a, b, b, 0xffff, 4);
#endif
}

#define VM_F v16sf
#define VM_I v16si
#define VM_ALL(m) vm16_all_set(m)
#define VM_ALL_LT(x, c) vm16_lt_all(x, c)
#define VM_TAB16(tab, k) vm16_perm16(tab, k)
#define VM_FMA(a, b, c) __builtin_ia32_vfmaddps512_mask((a), (b), (c), 0xffff, 4)
#define VM(name) vm16_##name
#include "vnpu_eng_vmath.h"
#undef VM

/*
 * The logistic function at bf16's grade (@m / (1 + exp(-z)), @m 1 or z
 * for SiLU), for the epilogues of layers whose products run on the
 * AVX512-BF16 kernels: their sums are already within bf16's rounding
 * (2^-9 relative), so f32's 2.4 ulps are bought dearly there (its
 * division and two table lookups: SiLU took 12% of YOLOv8n's bf16 time).
 * exp(-z) = 2^t, t = -z log2(e), as 2^n p(f), n = t rounded, f = t - n in
 * [-1/2, 1/2] (exact), p a cubic fitted to 2^f (relative error 2^-13.7),
 * n put in by vscalefps; then m times vrcp14ps(1 + e) (2^-14). Within
 * 2^-12.9 relative of the exact function for |z| < VM_LOGISTIC_NORMAL,
 * where every quantity stays normal: n in [-123, 123].
 */
#define VM_LB_P3	0x1.c3f76p-5f	/* p(f)'s coefficients, f^3 first */
#define VM_LB_P2	0x1.f0de1cp-3f
#define VM_LB_P1	0x1.62f31ap-1f
#define VM_LB_P0	0x1.fff692p-1f

static inline v16sf vm16_logistic_bf16_normal(v16sf z, v16sf m)
{
	v16sf t = z * -VM_LOG2E, n, f, p;

	/* Round to nearest, no precision exception. */
	n = __builtin_ia32_rndscaleps_mask(t, 0x08, t, 0xffff, 4);
	f = t - n;
	p = VM_FMA(f, vm16_splat(VM_LB_P3), vm16_splat(VM_LB_P2));
	p = VM_FMA(p, f, vm16_splat(VM_LB_P1));
	p = VM_FMA(p, f, vm16_splat(VM_LB_P0));
	p = __builtin_ia32_scalefps512_mask(p, n, p, 0xffff, 4);
	return m * __builtin_ia32_rcp14ps512_mask(p + 1.0f, p, 0xffff);
}

/*
 * vm16_logistic_bf16_normal() where every lane allows it, else those
 * lanes so and the others (|z| from VM_LOGISTIC_NORMAL up, infinities,
 * NaNs) as vm16_logistic(): f32's bits there. A lane's result depends on
 * that lane alone.
 */
static inline v16sf vm16_logistic_bf16(v16sf z, v16sf m)
{
	v16si sign, normal;
	v16sf a = vm16_abs(z, &sign);

	if (vm16_all_lt(a, VM_LOGISTIC_NORMAL))
		return vm16_logistic_bf16_normal(z, m);
	normal = a < VM_LOGISTIC_NORMAL;
	return vm16_sel(normal,
			vm16_logistic_bf16_normal(vm16_sel(normal, z,
							   vm16_splat(0.0f)),
						  m),
			vm16_logistic(z, m));
}

static inline v16sf vm16_silu_bf16(v16sf x)
{
	return vm16_logistic_bf16(x, x);
}

static inline v16sf vm16_sigmoid_bf16(v16sf x)
{
	return vm16_logistic_bf16(x, vm16_splat(1.0f));
}

#undef VM_FMA

#endif /* VNPU_ENG_VMATH16_H */

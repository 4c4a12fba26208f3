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

#define VM_F v16sf
#define VM_I v16si
#define VM_ALL(m) vm16_all_set(m)
#define VM_ALL_LT(x, c) vm16_lt_all(x, c)
#define VM_TAB16(tab, k) vm16_perm16(tab, k)
#define VM_FMA(a, b, c) __builtin_ia32_vfmaddps512_mask((a), (b), (c), 0xffff, 4)
#define VM(name) vm16_##name
#include "vnpu_eng_vmath.h"
#undef VM_FMA
#undef VM

#endif /* VNPU_ENG_VMATH16_H */

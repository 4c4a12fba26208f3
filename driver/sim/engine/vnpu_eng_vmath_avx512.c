// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The float activations of vnpu_eng_vmath.h on 16 lanes (built with
 * -mavx512f -mfma, run only when the caller sets VNPU_ENG_F_AVX512): the
 * same operations as the AVX2 build's 8 lanes, so the same bits.
 */
#include "vnpu_eng_priv.h"

typedef float v16sf __attribute__((vector_size(64)));
typedef int v16si __attribute__((vector_size(64)));

#define VM_F v16sf
#define VM_I v16si
#define VM_FMA(a, b, c) __builtin_ia32_vfmaddps512_mask((a), (b), (c), 0xffff, 4)
#define VM(name) vm16_##name
#include "vnpu_eng_vmath.h"

void vnpu_eng_act_avx512(__u32 func, const float *x, float *y, __u64 n)
{
	vm16_act_map(func, x, y, n);
}

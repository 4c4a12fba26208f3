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

/* vm16_act_map()'s per-vector function on the runs: @FN, not a switch. */
#define ACT_ROWS(FN) do {						\
	for (r = 0; r < rows; r++, y += rs) {				\
		for (i = 0; i + 16 <= n; i += 16)			\
			*(vu *)(y + i) = FN(*(const vu *)(y + i));	\
		if (i == n)						\
			continue;					\
		m = (__u16)((1u << (n - i)) - 1);			\
		v = __builtin_ia32_loadups512_mask(y + i, (v16sf){}, m); \
		__builtin_ia32_storeups512_mask(y + i, FN(v), m);	\
	}								\
} while (0)

static inline v16sf act_any(__u32 func, v16sf v)
{
	return vm16_act(func, v);
}

#define ACT_ANY(v) act_any(func, v)

void vnpu_eng_act_rows_avx512(__u32 func, float *y, __s64 rs, __u64 rows,
			      __u64 n)
{
	typedef v16sf vu __attribute__((aligned(4), may_alias));
	v16sf v;
	__u64 r, i;
	__u16 m;

	switch (func) {
	case VNPU_ACT_SILU:
		ACT_ROWS(vm16_silu);
		break;
	case VNPU_ACT_SIGMOID:
		ACT_ROWS(vm16_sigmoid);
		break;
	default:
		ACT_ROWS(ACT_ANY);
		break;
	}
}

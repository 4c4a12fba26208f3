// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The binary steps of CHAIN in 16 lanes (built with -mavx512f, run only
 * when the caller sets VNPU_ENG_F_AVX512): each lane is the one float
 * operation of vnpu_eng_chain.c's 8-lane loops, so both give the same
 * bits.
 */
#include "vnpu_eng_priv.h"

typedef float v16sf __attribute__((vector_size(64)));
typedef int v16si __attribute__((vector_size(64)));
typedef float v16sf_u __attribute__((vector_size(64), aligned(4), may_alias));

static inline v16sf ld16(const float *p)
{
	return *(const v16sf_u *)p;
}

/* Lanes of x, or of the NaN-first max (@max) or min of x and y. */
static inline v16sf vmax16(v16sf x, v16sf y, int max)
{
	v16si take = (x != x) | (max ? x > y : x < y);

	return (v16sf)(((v16si)x & take) | ((v16si)y & ~take));
}

/* Lanes of F32_NAN_FIRST(x, r). */
static inline v16sf vnan_first16(v16sf x, v16sf r)
{
	v16si nan = x != x;

	return (v16sf)(((v16si)(x + x) & nan) | ((v16si)r & ~nan));
}

/* A repeated operand is read before the loop: @r may be its buffer. */
#define LOOP16(VF, SF) do {						\
	for (i = 0; i + 16 <= n; i += 16) {				\
		v16sf x = ra ? ld16(pa + i) : xa;		\
		v16sf y = rb ? ld16(pb + i) : xb;		\
									\
		*(v16sf_u *)(r + i) = VF;				\
	}								\
	for (; i < n; i++) {						\
		float a = ra ? pa[i] : a0, b = rb ? pb[i] : b0;		\
									\
		r[i] = SF;						\
	}								\
} while (0)

void vnpu_eng_chain_binary_avx512(__u32 func, const float *pa, int ra,
				  const float *pb, int rb, float *r, __u32 n)
{
	const float a0 = pa[0], b0 = pb[0];
	v16sf xa, xb;
	__u32 i;

	/* Not 0 + a0: that takes -0 to +0 and quiets a signalling NaN. */
	for (i = 0; i < 16; i++) {
		xa[i] = a0;
		xb[i] = b0;
	}
	switch (func) {
	case VNPU_BIN_ADD:
		LOOP16(vnan_first16(x, x + y), F32_NAN_FIRST(a, a + b));
		break;
	case VNPU_BIN_SUB:
		LOOP16(x - y, a - b);
		break;
	case VNPU_BIN_MUL:
		LOOP16(vnan_first16(x, x * y), F32_NAN_FIRST(a, a * b));
		break;
	case VNPU_BIN_DIV:
		LOOP16(x / y, a / b);
		break;
	case VNPU_BIN_MAX:
		LOOP16(vmax16(x, y, 1), F32_MAX(a, b, 1));
		break;
	default:
		LOOP16(vmax16(x, y, 0), F32_MAX(a, b, 0));
		break;
	}
}

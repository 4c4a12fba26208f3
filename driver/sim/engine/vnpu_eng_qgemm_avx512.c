// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The AVX512-VNNI tile of the packed int8 convolution (built with
 * -mavx512f -mavx512bw -mavx512vnni, run only when the caller sets
 * VNPU_ENG_F_VNNI): ENG_QMR rows of weights by two 16-lane panels of
 * positions, 24 accumulators; per depth step of 4, two loads of the
 * packed input, one broadcast of 4 weight bytes per row and 24 vpdpbusd
 * (u8 x i8 products, four to a 32-bit lane, wrapping sums: exact, as the
 * plain tile).
 */
#include "vnpu_eng_priv.h"

typedef int v16si __attribute__((vector_size(64)));
typedef int v16si_u __attribute__((vector_size(64), aligned(4), may_alias));
typedef __s32 s32_u __attribute__((aligned(1), may_alias));

/* @acc += the u8 x i8 products of @u and @s, four to a lane (clang and gcc). */
static inline v16si dpbusd(v16si acc, v16si u, v16si s)
{
	__asm__("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(u), "v"(s));
	return acc;
}

void vnpu_eng_qtile_vnni(const struct eng_qtile *t)
{
	v16si acc[ENG_QMR][2] = {};
	__u64 j;
	int r;

	for (j = 0; j < t->k4 / 4; j++) {
		const v16si *b = (const v16si *)(t->b + j * ENG_QNR * 4);
		v16si b0 = b[0], b1 = b[1];

		for (r = 0; r < ENG_QMR; r++) {
			__s32 d = *(const s32_u *)(t->w + r * t->k4 + 4 * j);
			v16si w = { d, d, d, d, d, d, d, d, d, d, d, d, d, d, d, d };

			acc[r][0] = dpbusd(acc[r][0], b0, w);
			acc[r][1] = dpbusd(acc[r][1], b1, w);
		}
	}
	for (r = 0; r < ENG_QMR; r++) {
		*(v16si_u *)(t->acc + r * ENG_QNR) = acc[r][0];
		*(v16si_u *)(t->acc + r * ENG_QNR + 16) = acc[r][1];
	}
}

// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The AVX512-VNNI tile of the packed int8 convolution (built with
 * -mavx512f -mavx512bw -mavx512vnni, run only when the caller sets
 * VNPU_ENG_F_VNNI): ENG_QMR rows of weights by two 16-lane panels of
 * positions, 24 accumulators; per depth step of 4, two loads of the
 * packed input, one broadcast of 4 weight bytes per row and 24 vpdpbusd
 * (u8 x i8 products, four to a 32-bit lane, wrapping sums: exact, as the
 * plain tile); then, given struct eng_qout, the requantized outputs
 * straight from the accumulators.
 */
#include "vnpu_eng_priv.h"

typedef int v16si __attribute__((vector_size(64)));
typedef unsigned int v16su __attribute__((vector_size(64)));
typedef float v16sf __attribute__((vector_size(64)));
typedef unsigned char v16qu __attribute__((vector_size(16)));
typedef int v16si_u __attribute__((vector_size(64), aligned(4), may_alias));
typedef unsigned int v16su_u __attribute__((vector_size(64), aligned(4), may_alias));
typedef unsigned char v16qu_u __attribute__((vector_size(16), aligned(1), may_alias));
typedef __s32 s32_u __attribute__((aligned(1), may_alias));

/* @acc += the u8 x i8 products of @u and @s, four to a lane (clang and gcc). */
static inline v16si dpbusd(v16si acc, v16si u, v16si s)
{
	__asm__("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(u), "v"(s));
	return acc;
}

/* The larger and the smaller of @a and @b: @b where either is NaN. */
static inline v16sf q_max(v16sf a, v16sf b)
{
	__asm__("vmaxps %1, %0, %0" : "+v"(a) : "v"(b));
	return a;
}

static inline v16sf q_min(v16sf a, v16sf b)
{
	__asm__("vminps %1, %0, %0" : "+v"(a) : "v"(b));
	return a;
}

/* @f rounded half to even to integers (|f| < 2^31). */
static inline v16si q_rne(v16sf f)
{
	v16si r;

	__asm__("vcvtps2dq %{rn-sae%}, %1, %0" : "=v"(r) : "v"(f));
	return r;
}

/*
 * Sums @acc of row @r at the tile's positions @p.. as @n (at most 16)
 * outputs at @y: struct eng_qout's arithmetic, the bits of q_round8().
 * Clamped with vmaxps/vminps (bounds are integers, so clamping before
 * rounding is the same as after) and rounded by vcvtps2dq {rn-sae};
 * NaN (the multiplier NaN or infinite only) gives 0 as q_round8() does.
 */
static void qout16(const struct eng_qout *o, __u32 r, __u32 p, v16si acc,
		   __u8 *y, __u32 n)
{
	v16su a = (v16su)acc + (__u32)o->fix[r];
	v16sf f;
	v16si v;
	v16qu b;
	__u32 i;

	if (o->xsum)
		a -= (__u32)o->wz[r] * *(const v16su_u *)(o->xsum + p);
	f = __builtin_convertvector((v16si)a, v16sf) * o->mult[r];
	v = q_rne(q_min(q_max(f, (v16sf){} + o->lo), (v16sf){} + o->hi)) + o->yz;
	if (o->mult[r] - o->mult[r] != 0.0f)
		v &= ~(f != f);
	b = __builtin_convertvector(v, v16qu);
	if (n >= 16) {
		*(v16qu_u *)y = b;
		return;
	}
	for (i = 0; i < n; i++)
		y[i] = b[i];
}

void vnpu_eng_qtile_vnni(const struct eng_qtile *t)
{
	const struct eng_qout *o = t->out;
	v16si acc[ENG_QMR][2];
	__u64 j;
	__u32 r;

	/* Not "= {}": GCC clears the array in memory (rep stos) first. */
	for (r = 0; r < ENG_QMR; r++) {
		acc[r][0] = (v16si){};
		acc[r][1] = (v16si){};
	}

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
	if (!o) {
		for (r = 0; r < ENG_QMR; r++) {
			*(v16si_u *)(t->acc + r * ENG_QNR) = acc[r][0];
			*(v16si_u *)(t->acc + r * ENG_QNR + 16) = acc[r][1];
		}
		return;
	}
	for (r = 0; r < ENG_QMR; r++) {
		__u8 *y = o->y + (__s64)r * o->ys;

		if (r >= o->rows)
			break;
		qout16(o, r, 0, acc[r][0], y, o->n);
		if (o->n > 16)
			qout16(o, r, 16, acc[r][1], y + 16, o->n - 16);
	}
}

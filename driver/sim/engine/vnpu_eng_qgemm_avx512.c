// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The AVX512-VNNI tile of the packed int8 convolution (built with
 * -mavx512f -mavx512bw -mavx512vnni, run only when the caller sets
 * VNPU_ENG_F_VNNI): ENG_QMR rows of weights by two 16-lane panels of
 * positions, 24 accumulators; per depth step of 4, two loads of the
 * packed input, one broadcast of 4 weight bytes per row and 24 vpdpbusd
 * (u8 x i8 products, four to a 32-bit lane, wrapping sums: exact, as the
 * plain tile); then, given struct eng_qout, the requantized outputs
 * straight from the accumulators. Also the depthwise row (struct
 * eng_qdw): four taps of a row per vpdpbusd, gathered by vpshufb.
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
 * Sums @a as @n (at most 16) outputs at @y: times @mult, clamped to
 * [@lo, @hi], rounded half to even, plus @yz; the bits of q_round8().
 * Clamped with vmaxps/vminps (bounds are integers, so clamping before
 * rounding is the same as after) and rounded by vcvtps2dq {rn-sae};
 * NaN (@mult NaN or infinite only) gives 0 as q_round8() does.
 */
static void q_store16(v16su a, float mult, float lo, float hi, __s32 yz,
		      __u8 *y, __u32 n)
{
	v16sf f = __builtin_convertvector((v16si)a, v16sf) * mult;
	v16si v;
	v16qu b;
	__u32 i;

	v = q_rne(q_min(q_max(f, (v16sf){} + lo), (v16sf){} + hi)) + yz;
	if (mult - mult != 0.0f)
		v &= ~(f != f);
	b = __builtin_convertvector(v, v16qu);
	if (n >= 16) {
		*(v16qu_u *)y = b;
		return;
	}
	for (i = 0; i < n; i++)
		y[i] = b[i];
}

/*
 * Sums @acc of row @r at the tile's positions @p.. as @n (at most 16)
 * outputs at @y: struct eng_qout's arithmetic.
 */
static void qout16(const struct eng_qout *o, __u32 r, __u32 p, v16si acc,
		   __u8 *y, __u32 n)
{
	v16su a = (v16su)acc + (__u32)o->fix[r];

	if (o->xsum)
		a -= (__u32)o->wz[r] * *(const v16su_u *)(o->xsum + p);
	q_store16(a, o->mult[r], o->lo, o->hi, o->yz, y, n);
}

/*
 * The tile over its first @nr (4, 8 or ENG_QMR) rows and @np (1 or 2)
 * panels of 16 positions: one panel where the outputs stop within the
 * first 16 (the last tile of a 14x14 or 28x28 map), fewer rows where
 * the outputs stop within them (64 channels are 5 tiles of 12 and one
 * of 4), so that no vpdpbusd sums outputs that are not stored.
 */
static __attribute__((__always_inline__)) inline
void qtile_part(const struct eng_qtile *t, const __u32 nr, const __u32 np)
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
		v16si b0 = b[0], b1 = np > 1 ? b[1] : b0;

		/* A line of the next rows' weights a step: 16 k4 bytes >= 12 k4. */
		if (t->pf && 64 * j < ENG_QMR * t->k4)
			__builtin_prefetch(t->pf + 64 * j, 0, 3);

		for (r = 0; r < nr; r++) {
			__s32 d = *(const s32_u *)(t->w + r * t->k4 + 4 * j);
			v16si w = { d, d, d, d, d, d, d, d, d, d, d, d, d, d, d, d };

			acc[r][0] = dpbusd(acc[r][0], b0, w);
			if (np > 1)
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
	for (r = 0; r < nr; r++) {
		__u8 *y = o->y + (__s64)r * o->ys;

		if (r >= o->rows)
			break;
		qout16(o, r, 0, acc[r][0], y, o->n);
		if (np > 1 && o->n > 16)
			qout16(o, r, 16, acc[r][1], y + 16, o->n - 16);
	}
}

void vnpu_eng_qtile_vnni(const struct eng_qtile *t)
{
	const struct eng_qout *o = t->out;
	int one = o && o->n <= 16;

	if (o && o->rows <= 4) {
		if (one)
			qtile_part(t, 4, 1);
		else
			qtile_part(t, 4, 2);
	} else if (o && o->rows <= 8) {
		if (one)
			qtile_part(t, 8, 1);
		else
			qtile_part(t, 8, 2);
	} else if (one) {
		qtile_part(t, ENG_QMR, 1);
	} else {
		qtile_part(t, ENG_QMR, 2);
	}
}

typedef unsigned char v64qu __attribute__((vector_size(64)));

/*
 * Four taps of 16 positions as 16 groups of 4 bytes, position i's group
 * the bytes at @src + @sw * i: 128-bit loads at @src + 4 * @sw * j into
 * lane j, then vpshufb by @pat (bytes 0-3, 1-4, 2-5, 3-6 of the lane for
 * stride 1; 0-3, 2-5, 4-7, 6-9 for stride 2).
 */
static inline v16si qdw_taps(const __u8 *src, __u32 sw, v64qu pat)
{
	v16si v;

	if (sw == 1)
		__asm__("vbroadcasti32x4 (%1), %0\n\t"
			"vinserti32x4 $1, 4(%1), %0, %0\n\t"
			"vinserti32x4 $2, 8(%1), %0, %0\n\t"
			"vinserti32x4 $3, 12(%1), %0, %0\n\t"
			"vpshufb %2, %0, %0"
			: "=&v"(v)
			: "r"(src), "v"(pat), "m"(*(const __u8 (*)[28])src));
	else
		__asm__("vbroadcasti32x4 (%1), %0\n\t"
			"vinserti32x4 $1, 8(%1), %0, %0\n\t"
			"vinserti32x4 $2, 16(%1), %0, %0\n\t"
			"vinserti32x4 $3, 24(%1), %0, %0\n\t"
			"vpshufb %2, %0, %0"
			: "=&v"(v)
			: "r"(src), "v"(pat), "m"(*(const __u8 (*)[40])src));
	return v;
}

void vnpu_eng_qdw_row_vnni(const struct eng_qdw *d)
{
	static const v64qu pat1 = {
		0, 1, 2, 3, 1, 2, 3, 4, 2, 3, 4, 5, 3, 4, 5, 6,
		0, 1, 2, 3, 1, 2, 3, 4, 2, 3, 4, 5, 3, 4, 5, 6,
		0, 1, 2, 3, 1, 2, 3, 4, 2, 3, 4, 5, 3, 4, 5, 6,
		0, 1, 2, 3, 1, 2, 3, 4, 2, 3, 4, 5, 3, 4, 5, 6 };
	static const v64qu pat2 = {
		0, 1, 2, 3, 2, 3, 4, 5, 4, 5, 6, 7, 6, 7, 8, 9,
		0, 1, 2, 3, 2, 3, 4, 5, 4, 5, 6, 7, 6, 7, 8, 9,
		0, 1, 2, 3, 2, 3, 4, 5, 4, 5, 6, 7, 6, 7, 8, 9,
		0, 1, 2, 3, 2, 3, 4, 5, 4, 5, 6, 7, 6, 7, 8, 9 };
	v64qu pat = d->sw == 1 ? pat1 : pat2;
	v16si flip = (v16si){} + (__s32)(0x01010101u * d->flip);
	__u32 o, r, g, ng = (d->kw + 3) / 4;

	for (o = 0; o < d->ow; o += 16) {
		v16si acc = (v16si){} + d->fix;

		for (r = 0; r < d->kh; r++) {
			const __u8 *src = d->row + r * d->rs + o * d->sw;

			for (g = 0; g < ng; g++) {
				__s32 wv = d->w4[r * ng + g];
				v16si w = (v16si){} + wv;

				acc = dpbusd(acc, qdw_taps(src + 4 * g, d->sw, pat) ^ flip,
					     w);
			}
		}
		q_store16((v16su)acc, d->mult, d->lo, d->hi, d->yz, d->y + o,
			  d->ow - o);
	}
}

/* @n lanes of 8-bit values at @p widened to 32 bits (sign-extended if @s8). */
static inline v16si qadd_load16(const __u8 *p, __u32 s8)
{
	v16si v;

	if (s8)
		__asm__("vpmovsxbd %1, %0" : "=v"(v) : "m"(*(const __u8 (*)[16])p));
	else
		__asm__("vpmovzxbd %1, %0" : "=v"(v) : "m"(*(const __u8 (*)[16])p));
	return v;
}

/* @acc + @a * @b, rounded once. */
static inline v16sf q_fma(v16sf a, v16sf b, v16sf acc)
{
	__asm__("vfmadd231ps %2, %1, %0" : "+v"(acc) : "v"(a), "v"(b));
	return acc;
}

void vnpu_eng_qadd_avx512(const struct eng_qadd *q)
{
	const v16sf ra = (v16sf){} + q->ra, rb = (v16sf){} + q->rb;
	const v16sf f = (v16sf){} + q->f;
	const v16si lo = (v16si){} + q->lo, hi = (v16si){} + q->hi;
	__u64 i;

	for (i = 0; i + 16 <= q->n; i += 16) {
		v16sf a = __builtin_convertvector(qadd_load16(q->a + i, q->s8), v16sf);
		v16sf b = __builtin_convertvector(qadd_load16(q->b + i, q->s8), v16sf);
		v16si v = q_rne(q_fma(a, ra, q_fma(b, rb, f)));

		/* NaN and values out of range converted to INT_MIN: the low bound. */
		__asm__("vpmaxsd %2, %1, %1\n\t"
			"vpminsd %3, %1, %1\n\t"
			"vpmovdb %1, %0"
			: "=m"(*(__u8 (*)[16])(q->y + i)), "+v"(v)
			: "v"(lo), "v"(hi));
	}
}

// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * AVX512-FP16 micro-kernels of the blocked GEMM (built with -mavx512f
 * -mfma; the FP16 instructions are inline assembly, so they run only when
 * the caller sets VNPU_ENG_F_AVX512_FP16).
 *
 * A holds one operand as f16, B the other as f16 rows of 32 columns (two
 * panels side by side, the second zero past the last column), built here
 * a column pair at a time: copied from packed f16 weights, or rounded
 * from f32 activations (vcvtps2phx, to nearest even). Each sum of a tile
 * runs over ENG_F16_RUN depths at a time in f16: h = 0, then per depth
 * in order h = fma(a, b, h) rounded once to f16 (vfmadd231ph, A's element
 * broadcast from memory), and the run's h is widened (vcvtph2psx, exact)
 * and added to the f32 sum, s = s + h. The runs start at the slice's
 * first depth; slices depend on the depth only, so the order depends on
 * the shapes only and any split of a layer gives the same bits, on the
 * NPU and on the CPU device alike. The FP16 instructions take and give
 * f16 subnormals whatever MXCSR says; the f32 additions follow MXCSR (its
 * default: no flushing).
 *
 * A tile is two panels of A (12 rows) by 32 columns: 12 f16 sums in
 * registers, one row of B, each of A's elements a broadcast operand; the
 * f32 sums stay in the block's accumulator in memory, read and written
 * once a run.
 */
#include "vnpu_eng_gemm.h"
#include "vnpu_eng_vmath16.h"

typedef short v32hi __attribute__((vector_size(64)));
typedef short v16hi __attribute__((vector_size(32)));
typedef short v16hi_u __attribute__((vector_size(32), aligned(2), may_alias));
typedef float v16sf_u __attribute__((vector_size(64), aligned(4), may_alias));

static inline v16sf ld16(const float *p)
{
	return *(const v16sf_u *)p;
}

static inline void st16(float *p, v16sf v)
{
	*(v16sf_u *)p = v;
}

/* @acc + @b * a (a broadcast), lane by lane, rounded once to f16. */
static inline v32hi fma_bc(v32hi acc, v32hi b, const __u16 *a)
{
	__asm__("vfmadd231ph %2%{1to32%}, %1, %0" : "+v"(acc)
		: "v"(b), "m"(*a));
	return acc;
}

/* 16 f16 as f32 (exact). */
static inline v16sf widen(v16hi h)
{
	v16sf f;

	__asm__("vcvtph2psx %1, %0" : "=v"(f) : "v"(h));
	return f;
}

/* 16 f32 rounded to f16, to nearest even. */
static inline v16hi narrow(v16sf f)
{
	v16hi h;

	__asm__("vcvtps2phx %1, %0" : "=v"(h) : "v"(f));
	return h;
}

/* The low (@hi 0) or the high 16 of the 32 f16 in @h. */
static inline v16hi half16(v32hi h, const int hi)
{
	if (hi)
		return __builtin_shufflevector(h, h, 16, 17, 18, 19, 20, 21, 22,
					       23, 24, 25, 26, 27, 28, 29, 30, 31);
	return __builtin_shufflevector(h, h, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
				       11, 12, 13, 14, 15);
}

/* A run's f16 sums @h of a row added to its f32 sums at @c (@two: 32 columns). */
static inline void flush(float *c, v32hi h, int two)
{
	st16(c, ld16(c) + widen(half16(h, 0)));
	if (two)
		st16(c + 16, ld16(c + 16) + widen(half16(h, 1)));
}

/*
 * The tile of @ROWS (6 or 12) rows at @a0 (rows 0-5) and @a1 (6-11), A's
 * element (k, r) at + k * @KS + r * @RS, by the 32 columns of B at @b
 * (row k at + 32k), to the sums at @c (rows @s->acc_rs apart; 16 columns
 * unless @two).
 */
static __attribute__((__always_inline__)) inline
void tile(const struct eng_f16_slice *s, const __u16 *a0, const __u16 *a1,
	  const __u16 *b, float *c, int two, const int ROWS, const int KS,
	  const int RS)
{
	__u64 kc = s->kc, rs = s->acc_rs, k0, k, ke;
	int r;

	if (!s->load)
		for (r = 0; r < ROWS; r++) {
			st16(c + r * rs, (v16sf){});
			if (two)
				st16(c + r * rs + 16, (v16sf){});
		}
	for (k0 = 0; k0 < kc; k0 = ke) {
		v32hi h[12];

		ke = eng_min(k0 + ENG_F16_RUN, kc);
#pragma GCC unroll 12
		for (r = 0; r < ROWS; r++)
			h[r] = (v32hi){};
		for (k = k0; k < ke; k++) {
			v32hi bv = *(const v32hi *)(b + 32 * k);

#pragma GCC unroll 6
			for (r = 0; r < 6; r++)
				h[r] = fma_bc(h[r], bv, a0 + k * KS + r * RS);
			if (ROWS == 12)
#pragma GCC unroll 6
				for (r = 0; r < 6; r++)
					h[6 + r] = fma_bc(h[6 + r], bv,
							  a1 + k * KS + r * RS);
		}
#pragma GCC unroll 12
		for (r = 0; r < ROWS; r++)
			flush(c + r * rs, h[r], two);
	}
}

#define TILE_FN(name, ROWS, KS, RS)					\
static __attribute__((__noinline__))					\
void name(const struct eng_f16_slice *s, const __u16 *a0,		\
	  const __u16 *a1, const __u16 *b, float *c, int two)		\
{									\
	tile(s, a0, a1, b, c, two, ROWS, KS, RS);			\
}

TILE_FN(tile12, 12, ENG_MR, 1)
TILE_FN(tile6, 6, ENG_MR, 1)
TILE_FN(tile12_rows, 12, 1, ENG_F16_ARS)
TILE_FN(tile6_rows, 6, 1, ENG_F16_ARS)

typedef void (*tile_fn)(const struct eng_f16_slice *, const __u16 *,
			const __u16 *, const __u16 *, float *, int);

/* [A in rows][two row panels] */
static const tile_fn tiles[2][2] = {
	{ tile6, tile12 }, { tile6_rows, tile12_rows },
};

/* Rows past which pack_b() fetches a window's rows ahead. */
#define PACK_AHEAD 16

/*
 * Depth [0, @s->kc) of columns [@c0, @c0 + 16 @np) (@np 1 or 2) of B as
 * f16 rows of 32 at @d, the columns past them zero.
 */
static void pack_b(const struct eng_f16_slice *s, __u64 c0, int np, __u16 *d)
{
	__u64 kc = s->kc, k, q;
	const v16hi z = {};

	if (s->b) {
		const __u16 *p0 = s->b + c0 / ENG_NR * s->b_ps;

		for (k = 0; k < kc; k++) {
			*(v16hi *)(d + 32 * k) = *(const v16hi_u *)(p0 + 16 * k);
			*(v16hi *)(d + 32 * k + 16) =
				np > 1 ? (v16hi)*(const v16hi_u *)(p0 + s->b_ps + 16 * k) : z;
		}
		return;
	}
	if (s->off) {
		const __s32 *off = s->off;
		const float *b = s->fb + c0;

		for (k = 0; k < kc; k++) {
			if (k + PACK_AHEAD < kc)
				for (q = 0; q < (__u64)np; q++)
					__builtin_prefetch(b + off[k + PACK_AHEAD] +
							   16 * q);
			*(v16hi *)(d + 32 * k) = narrow(ld16(b + off[k]));
			*(v16hi *)(d + 32 * k + 16) =
				np > 1 ? narrow(ld16(b + off[k] + 16)) : z;
		}
		return;
	}
	for (q = 0; q < 2; q++) {
		const float *b = s->fb + (c0 / ENG_NR + q) * s->fb_ps;

		for (k = 0; k < kc; k++)
			*(v16hi *)(d + 32 * k + 16 * q) =
				q < (__u64)np ? narrow(ld16(b + 16 * k)) : z;
	}
}

void vnpu_eng_f16_pack_a(const float *src, __s64 rs, __u64 rows, __u64 kc,
			 __u16 *dst)
{
	__u64 pn = eng_div_up(rows, ENG_MR) * ENG_MR, r, k, i;
	float part[16];

	for (r = 0; r < pn; r++) {
		const float *row = src + (__s64)r * rs;
		__u16 *d = dst + r * ENG_F16_ARS;

		if (r >= rows) {
			for (k = 0; k < kc; k++)
				d[k] = 0;
			continue;
		}
		for (k = 0; k + 16 <= kc; k += 16)
			*(v16hi_u *)(d + k) = narrow(ld16(row + k));
		if (k < kc) {
			v16hi h;

			for (i = 0; i < 16; i++)
				part[i] = k + i < kc ? row[k + i] : 0.0f;
			h = narrow(ld16(part));
			for (i = 0; k + i < kc; i++)
				d[k + i] = (__u16)h[i];
		}
	}
}

void vnpu_eng_slice_f16(const struct eng_f16_slice *s)
{
	__u64 ma = eng_div_up(s->mc, ENG_MR), nb = eng_div_up(s->nc, ENG_NR);
	__u64 i, j;

	for (j = 0; j < nb; j += 2) {
		int two = j + 1 < nb;

		pack_b(s, j * ENG_NR, two ? 2 : 1, s->work);
		for (i = 0; i < ma; i += 2) {
			const __u16 *a0 = s->a + i * s->a_ps;

			tiles[!!s->a_rows][i + 1 < ma](s, a0, a0 + s->a_ps,
						       s->work,
						       s->acc + i * ENG_MR *
						       s->acc_rs + j * ENG_NR,
						       two);
		}
	}
}

/* @acc + @b * a (a broadcast), 16 lanes, rounded once to f16. */
static inline v16hi fma_bc16(v16hi acc, v16hi b, const __u16 *a)
{
	__asm__("vfmadd231ph %2%{1to16%}, %1, %0" : "+v"(acc)
		: "v"(b), "m"(*a));
	return acc;
}

/*
 * Panels [0, @NP) of a mat-vec slice from @b into @acc: per run of
 * ENG_F16_RUN depths one f16 chain per panel, as a tile's row makes it
 * (16 lanes; the same operations lane by lane), then added to the f32
 * sums in registers. NP independent chains hide the latency.
 */
static __attribute__((__always_inline__)) inline
void gemv_panels(const struct eng_f16_gemv *g, const __u16 *b, float *acc,
		 const int NP)
{
	__u64 kc = g->kc, k0, k, ke;
	v16sf s[8];
	int q;

	for (q = 0; q < NP; q++)
		s[q] = g->load ? ld16(acc + q * ENG_NR) : (v16sf){};
	for (k0 = 0; k0 < kc; k0 = ke) {
		v16hi h[8];

		ke = eng_min(k0 + ENG_F16_RUN, kc);
		for (q = 0; q < NP; q++)
			h[q] = (v16hi){};
		for (k = k0; k < ke; k++)
			for (q = 0; q < NP; q++)
				h[q] = fma_bc16(h[q], *(const v16hi_u *)(b + q * g->b_ps +
									 k * ENG_NR),
						g->a + k);
		for (q = 0; q < NP; q++)
			s[q] = s[q] + widen(h[q]);
	}
	for (q = 0; q < NP; q++)
		st16(acc + q * ENG_NR, s[q]);
}

static __attribute__((__noinline__))
void gemv8(const struct eng_f16_gemv *g, const __u16 *b, float *acc)
{
	gemv_panels(g, b, acc, 8);
}

static __attribute__((__noinline__))
void gemv1(const struct eng_f16_gemv *g, const __u16 *b, float *acc)
{
	gemv_panels(g, b, acc, 1);
}

void vnpu_eng_gemv_f16(const struct eng_f16_gemv *g)
{
	const __u16 *b = g->b;
	float *acc = g->acc;
	__u64 i;

	for (i = 0; i + 8 <= g->np; i += 8, b += 8 * g->b_ps, acc += 8 * ENG_NR)
		gemv8(g, b, acc);
	for (; i < g->np; i++, b += g->b_ps, acc += ENG_NR)
		gemv1(g, b, acc);
}

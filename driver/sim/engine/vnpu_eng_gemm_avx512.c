// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * AVX-512F micro-kernels of the blocked GEMM (built with -mavx512f -mfma,
 * run only when the caller sets VNPU_ENG_F_AVX512).
 *
 * A tile is two panels of A (12 rows) by two panels of B (32 columns): 24
 * accumulators of 16 lanes, two loads of B and twelve broadcasts of A per
 * depth step. The last odd panel of either side takes the 6- or 16-wide
 * variant. Each output is fma(a[k], b[k], sum) for k in depth order, from
 * zero or from the accumulator, exactly as in the AVX2 6x16 kernel: the
 * two give the same bits.
 */
#include "vnpu_eng_gemm.h"

typedef float v16sf __attribute__((vector_size(64)));
typedef float v16sf_u __attribute__((vector_size(64), aligned(4), may_alias));

static inline v16sf ld16(const float *p)
{
	return *(const v16sf_u *)p;
}

static inline void st16(float *p, v16sf v)
{
	*(v16sf_u *)p = v;
}

static inline v16sf bc16(float x)
{
	return (v16sf){ x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x };
}

#define FMA16(a, b, c) __builtin_ia32_vfmaddps512_mask((a), (b), (c), 0xffff, 4)

/*
 * Rows [0, @rows) x panels [0, @np) of the tile at @c: @rows and @np are
 * constants in each caller, so the accumulators stay in registers.
 */
/*
 * Element (row r, depth k) of the A panel at @a: panels hold k-major
 * groups of ENG_MR, or with @arow rows ENG_KC apart (see struct eng_slice).
 */
#define A_AT(a, r, k, arow) ((arow) ? (a)[(r) * ENG_KC + (k)] : \
			     (a)[(k) * ENG_MR + (r)])

static __attribute__((__always_inline__)) inline
void tile(__u64 kc, const float *a0, const float *a1, const float *b0,
	  const float *b1, const __s32 *off, float *c, __u64 rs, int load,
	  const int rows, const int np, const int ind, const int arow)
{
	v16sf acc[12][2];
	__u64 k;
	int r, p;

	for (r = 0; r < rows; r++)
		for (p = 0; p < np; p++)
			acc[r][p] = load ? ld16(c + r * rs + p * ENG_NR) :
					   (v16sf){};
	/* Unrolled: fewer loop uops competing with the FMAs for ports. */
#pragma GCC unroll 4
	for (k = 0; k < kc; k++) {
		const float *bk0 = ind ? b0 + off[k] : b0 + k * ENG_NR;
		const float *bk1 = ind ? b1 + off[k] : b1 + k * ENG_NR;
		v16sf bv[2];

		bv[0] = ld16(bk0);
		if (np == 2)
			bv[1] = ld16(bk1);
		for (r = 0; r < rows; r++) {
			v16sf av = bc16(r < ENG_MR ? A_AT(a0, r, k, arow) :
					A_AT(a1, r - ENG_MR, k, arow));

			for (p = 0; p < np; p++)
				acc[r][p] = FMA16(av, bv[p], acc[r][p]);
		}
	}
	for (r = 0; r < rows; r++)
		for (p = 0; p < np; p++)
			st16(c + r * rs + p * ENG_NR, acc[r][p]);
}

#define TILE_FN(name, rows, np, ind, arow)				\
static __attribute__((__noinline__))					\
void name(__u64 kc, const float *a0, const float *a1, const float *b0,	\
	  const float *b1, const __s32 *off, float *c, __u64 rs, int load) \
{									\
	tile(kc, a0, a1, b0, b1, off, c, rs, load, rows, np, ind, arow); \
}

TILE_FN(tile_12x32, 12, 2, 0, 0)
TILE_FN(tile_12x16, 12, 1, 0, 0)
TILE_FN(tile_6x32, 6, 2, 0, 0)
TILE_FN(tile_6x16, 6, 1, 0, 0)
TILE_FN(tile_12x32_ind, 12, 2, 1, 0)
TILE_FN(tile_12x16_ind, 12, 1, 1, 0)
TILE_FN(tile_6x32_ind, 6, 2, 1, 0)
TILE_FN(tile_6x16_ind, 6, 1, 1, 0)
TILE_FN(tile_12x32_rows, 12, 2, 0, 1)
TILE_FN(tile_12x16_rows, 12, 1, 0, 1)
TILE_FN(tile_6x32_rows, 6, 2, 0, 1)
TILE_FN(tile_6x16_rows, 6, 1, 0, 1)
TILE_FN(tile_12x32_ind_rows, 12, 2, 1, 1)
TILE_FN(tile_12x16_ind_rows, 12, 1, 1, 1)
TILE_FN(tile_6x32_ind_rows, 6, 2, 1, 1)
TILE_FN(tile_6x16_ind_rows, 6, 1, 1, 1)

typedef void (*tile_fn)(__u64 kc, const float *a0, const float *a1,
			const float *b0, const float *b1, const __s32 *off,
			float *c, __u64 rs, int load);

/* [A in rows][ind][two row panels][two column panels] */
static const tile_fn tiles[2][2][2][2] = {
	{
		{ { tile_6x16, tile_6x32 }, { tile_12x16, tile_12x32 } },
		{ { tile_6x16_ind, tile_6x32_ind },
		  { tile_12x16_ind, tile_12x32_ind } },
	}, {
		{ { tile_6x16_rows, tile_6x32_rows },
		  { tile_12x16_rows, tile_12x32_rows } },
		{ { tile_6x16_ind_rows, tile_6x32_ind_rows },
		  { tile_12x16_ind_rows, tile_12x32_ind_rows } },
	},
};

void vnpu_eng_slice_avx512(const struct eng_slice *s)
{
	__u64 ma = eng_div_up(s->mc, ENG_MR), nb = eng_div_up(s->nc, ENG_NR);
	__u64 i, j;
	int ind = !!s->off;

	for (j = 0; j < nb; j += 2) {
		const float *b0 = s->b + j * s->b_ps;
		int two_n = j + 1 < nb;

		for (i = 0; i < ma; i += 2) {
			const float *a0 = s->a + i * s->a_ps;
			int two_m = i + 1 < ma;

			tiles[!!s->a_rows][ind][two_m][two_n](s->kc, a0, a0 + s->a_ps, b0,
						 b0 + s->b_ps, s->off,
						 s->acc + i * ENG_MR * s->acc_rs +
						 j * ENG_NR, s->acc_rs, s->load);
		}
	}
}

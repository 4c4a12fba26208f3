// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The depthwise row kernel in 16 lanes (built with -mavx512f -mfma, run
 * only when the caller sets VNPU_ENG_F_AVX512): vnpu_eng_dw_row.h, the
 * bits of the 8-lane builds; and the lanes path's stride-1 rows two pixels
 * a vector.
 */
#include "vnpu_eng_priv.h"

typedef float v16sf __attribute__((vector_size(64)));
typedef float v16sf_u __attribute__((vector_size(64), aligned(4), may_alias));

static inline v16sf bc16(float x)
{
	return (v16sf){ x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x };
}

#define DW_F v16sf
#define DW_LANES 16
#define DW_LD(p) (*(const v16sf_u *)(p))
#define DW_ST(p, v) (*(v16sf_u *)(p) = (v))
#define DW_BC(x) bc16(x)
#define DW_FMA(a, b, c) __builtin_ia32_vfmaddps512_mask((a), (b), (c), 0xffff, 4)
#define DW(name) dw16_##name
#include "vnpu_eng_dw_row.h"

void vnpu_eng_dw_row_avx512(const struct eng_dw_row *t)
{
	dw16_row(t);
}

typedef float v8sf_u __attribute__((vector_size(32), aligned(4), may_alias));

/*
 * Pixels [@i, @i + 2 * @np) of a lanes row, two a vector (a pixel is
 * ENG_DWL_LANES floats, so at stride 1 two neighbours are one load), and
 * with @odd the pixel after them, the upper half of the vector of it and
 * the one before (which exists: rows have two pixels at least): each lane
 * fma(w, x, sum) over the taps in (kh, kw) order from zero, the lanes
 * path's 8-lane sums.
 */
static __attribute__((__always_inline__)) inline void
dwl_pairs(const struct eng_dwl_row *t, __u64 i, int np, int odd)
{
	const __s64 pair = 2 * ENG_DWL_LANES;
	const float *x0 = t->x + i * ENG_DWL_LANES, *w = t->w;
	float *acc = t->acc + i * ENG_DWL_LANES;
	v16sf v[9];
	__u64 r, k;
	int j;

	for (j = 0; j < np + odd; j++)
		v[j] = bc16(0.0f);
	for (r = 0; r < t->kh; r++, x0 += t->dr) {
		const float *x = x0;

		for (k = 0; k < t->kw; k++, x += t->dk, w += ENG_DWL_LANES) {
			v8sf_u w8 = *(const v8sf_u *)w;
			v16sf wk = __builtin_shufflevector(w8, w8, 0, 1, 2, 3,
							   4, 5, 6, 7, 0, 1,
							   2, 3, 4, 5, 6, 7);

			for (j = 0; j < np; j++)
				v[j] = DW_FMA(wk, DW_LD(x + j * pair), v[j]);
			if (odd)
				v[np] = DW_FMA(wk, DW_LD(x + (__s64)np * pair -
							 ENG_DWL_LANES),
					       v[np]);
		}
	}
	for (j = 0; j < np; j++)
		DW_ST(acc + j * pair, v[j]);
	if (odd)
		*(v8sf_u *)(acc + np * pair) =
			__builtin_shufflevector(v[np], v[np], 8, 9, 10, 11,
						12, 13, 14, 15);
}

/* Sixteen pixels at a time, then the rest at once. */
void vnpu_eng_dwl_row_avx512(const struct eng_dwl_row *t)
{
	__u64 i = 0, left;

	for (; i + 16 <= t->n; i += 16)
		dwl_pairs(t, i, 8, 0);
	left = t->n - i;
	switch (left) {
	case 15:
		dwl_pairs(t, i, 7, 1);
		break;
	case 14:
		dwl_pairs(t, i, 7, 0);
		break;
	case 13:
		dwl_pairs(t, i, 6, 1);
		break;
	case 12:
		dwl_pairs(t, i, 6, 0);
		break;
	case 11:
		dwl_pairs(t, i, 5, 1);
		break;
	case 10:
		dwl_pairs(t, i, 5, 0);
		break;
	case 9:
		dwl_pairs(t, i, 4, 1);
		break;
	case 8:
		dwl_pairs(t, i, 4, 0);
		break;
	case 7:
		dwl_pairs(t, i, 3, 1);
		break;
	case 6:
		dwl_pairs(t, i, 3, 0);
		break;
	case 5:
		dwl_pairs(t, i, 2, 1);
		break;
	case 4:
		dwl_pairs(t, i, 2, 0);
		break;
	case 3:
		dwl_pairs(t, i, 1, 1);
		break;
	case 2:
		dwl_pairs(t, i, 1, 0);
		break;
	case 1:
		dwl_pairs(t, i, 0, 1);
		break;
	}
}

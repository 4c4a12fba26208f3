// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The depthwise row kernel in 16 lanes (built with -mavx512f -mfma, run
 * only when the caller sets VNPU_ENG_F_AVX512): vnpu_eng_dw_row.h, the
 * bits of the 8-lane builds.
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

/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * One depth slice of a GEMM block, as the micro-kernel drivers see it: the
 * 6x16 kernels of the two float builds (vnpu_eng_gemm.c) and the AVX-512
 * ones (vnpu_eng_gemm_avx512.c). Every driver sums each output's products
 * in depth order with one rounding per multiply-add, so all FMA drivers
 * give the same bits.
 */
#ifndef _VNPU_ENG_GEMM_H_
#define _VNPU_ENG_GEMM_H_

#include "vnpu_eng_priv.h"

/**
 * struct eng_slice - one depth slice of an output block
 * @kc: depth of the slice
 * @mc: rows of the block: ceil(@mc / ENG_MR) panels of A at @a, @a_ps
 *	floats apart, each @kc x ENG_MR (row k of the panel at + k * ENG_MR),
 *	or with @a_rows, ENG_MR rows of @kc at + r * ENG_KC (AVX-512 only)
 * @nc: columns of the block: ceil(@nc / ENG_NR) panels of B at @b, @b_ps
 *	floats apart, each @kc x ENG_NR; with @off, row k of panel j is at
 *	@b + off[k] + j * ENG_NR instead
 * @a_ps: see @mc
 * @b_ps: see @nc
 * @acc_rs: floats between rows of @acc
 * @a: see @mc
 * @b: see @nc
 * @off: NULL, or the offsets of the slice's rows of B
 * @acc: the block's accumulators: whole panels of rows and columns, so
 *	ceil(@mc / ENG_MR) * ENG_MR rows and ceil(@nc / ENG_NR) * ENG_NR columns
 * @load: 0 for the first slice (sums start from zero), else add to @acc
 * @a_rows: see @mc
 * @out: NULL, or (last slice only) where output (r, c) of the block goes
 *	when the epilogue is at most a per-row add: @out + r * @out_rs + c,
 *	or with @out_wp column c is padded column
 *	q = @out_q0 + c, which is output (q / @out_wp) * @out_ow + q % @out_wp
 *	of row r, none when q % @out_wp >= @out_ow
 * @out_rs: see @out
 * @out_add: NULL, or with @out the float added to each row of the sums
 * @out_mc: returned: the sums of rows [0, @out_mc) x columns [0, @out_nc)
 *	went to @out (plus @out_add), the others to @acc; 0 without @out
 * @out_nc: see @out_mc
 * @b_next: NULL, or the next slice's B, in panels @b_ps floats apart
 *	(the AVX-512 driver prefetches it during the last column pair)
 * @out_wp: see @out: 0, or the padded row width, at least @out_ow + 1
 * @out_ow: see @out: with @out_wp, at least ENG_NR (2 * ENG_NR for the
 *	AVX-512 driver)
 * @out_q0: see @out
 */
struct eng_slice {
	__u64 kc, mc, nc, a_ps, b_ps, acc_rs;
	const float *a, *b;
	const __s32 *off;
	float *acc;
	int load, a_rows;
	float *out;
	__s64 out_rs;
	const float *out_add;
	__u64 out_mc, out_nc;
	const float *b_next;
	__u64 out_wp, out_ow, out_q0;
};

/*
 * Where a micro-kernel of the last slice stores its tile instead of the
 * accumulator: @y, rows @rsb bytes apart, row r plus @add[r] when @add is
 * set. With @jb (AVX-512 only), the tile's columns straddle two output
 * rows of padded columns: column c goes to @y + c when bit c of
 * @mask[0..1] (16 columns each) is set, to @y + c + @jb / 4 when bit c of
 * @mask[2..3] is, else nowhere. The AVX-512 assembly reads the members at
 * offsets 0, 8, 16, 24 and 32.
 */
struct eng_tile_out {
	float *y;
	__u64 rsb;
	const float *add;
	__s64 jb;
	__u16 mask[4];
};

/**
 * struct eng_dw_taps - taps of one depthwise channel over its window
 * @w: the channel's f32 weights, one per tap
 * @b: row k of B (the window) at @b + off[k], a column per output
 * @off: see @b
 * @acc: the sums of @nc columns (whole panels of ENG_NR; B past @nc is
 *	the window's slack), from zero unless @load
 * @k0: first tap
 * @k1: past the last tap
 * @nc: see @acc
 * @load: see @acc
 */
struct eng_dw_taps {
	const float *w, *b;
	const __s32 *off;
	float *acc;
	__u64 k0, k1, nc;
	int load;
};

/*
 * The AVX-512F depthwise taps: fma(w[k], b[k], sum) per column in tap
 * order, the bits of the 8-lane kernels.
 */
void vnpu_eng_dw_taps_avx512(const struct eng_dw_taps *t);

/**
 * struct eng_gemv - a depth slice of a one-row GEMM block over packed B
 * @a: the row's @kc f32 elements of the slice
 * @b: panel p of the slice's B at @b + p * @b_ps, its row k at + k * ENG_NR
 * @acc: the sums of @np panels, ENG_NR each, from zero unless @load
 * @kc: depth of the slice
 * @np: panels
 * @b_ps: see @b
 * @load: see @acc
 */
struct eng_gemv {
	const float *a, *b;
	float *acc;
	__u64 kc, np, b_ps;
	int load;
};

/*
 * The AVX-512F mat-vec slice: fma(a[k], b[k][j], sum) per column in depth
 * order, the bits of the micro-kernels.
 */
void vnpu_eng_gemv_avx512(const struct eng_gemv *g);

/* The AVX-512F driver (12x32 tiles); same bits as the AVX2 6x16 one. */
void vnpu_eng_slice_avx512(struct eng_slice *s);
/* The AVX2 6x16 driver, for benchmarks of the micro-kernels alone. */
void vnpu_eng_slice_avx2(struct eng_slice *s);

#endif /* _VNPU_ENG_GEMM_H_ */

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
 *	or with @a_rows, ENG_MR rows of @kc at + r * @a_rows
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
 * @a_rows: 0, or the floats between A's rows (see @mc): ENG_KC (rows
 *	packed by pack_a_rows(), AVX-512 only), or with B in panels any
 *	stride (A read in place; the AVX2 driver takes only this one)
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
 * @out_res: NULL, or with @out (on AVX2 without @out_wp) the f32
 *	residual added to the sums after @out_add and @out_cadd: output
 *	(r, c) at @out + r * @out_rs + c adds @out_res + r * @out_res_rs + c
 *	(c as in @out)
 * @out_res_rs: see @out_res
 * @out_act: with @out, the activation after the adds: 0 or struct
 *	eng_tile_out's @act, with @out_alpha and @out_beta (the AVX2 driver:
 *	0 or ENG_TILE_RELU)
 * @out_cadd: NULL, or with @out (no @out_wp) the float added to each
 *	column of the sums after @out_add: column c (as in @out) adds
 *	@out_cadd[c]
 * @out_alpha: see @out_act
 * @out_beta: see @out_act
 * @out_fn: NULL, or with @out the activation the driver applies to each
 *	tile's outputs right after the tile stored them (after @out_act),
 *	while they are in L1: @out_fn(@out_arg, y, rs, rows, n) in place on
 *	@rows runs of @n outputs at @y, @rs floats apart, as the epilogue
 *	would on them
 * @out_arg: see @out_fn
 * @a_next: NULL, or panels of A (@a_ps floats apart) that the next slice
 *	or block reads first: the AVX-512 tiles of the last row pair fetch
 *	them as the others fetch the next row pair's A (weights read in
 *	place come from memory)
 * @b_ahead: B's panels are weights from memory: the AVX2 driver fetches
 *	each next panel during the tiles of the one before
 * @a_ahead: A's panels are weights from memory (@a_next is set): the AVX2
 *	tiles of the first panel of B fetch the next tile's A, the last one
 *	@a_next where B is one panel
 */
struct eng_slice {
	__u64 kc, mc, nc, a_ps, b_ps, acc_rs;
	const float *a, *b;
	const __s32 *off;
	float *acc;
	int load;
	__s64 a_rows;
	float *out;
	__s64 out_rs;
	const float *out_add;
	__u64 out_mc, out_nc;
	const float *b_next;
	__u64 out_wp, out_ow, out_q0;
	const float *out_res;
	__s64 out_res_rs;
	__u64 out_act;
	const float *out_cadd;
	__u32 out_alpha, out_beta;
	void (*out_fn)(const void *arg, float *y, __s64 rs, __u64 rows,
		       __u64 n);
	const void *out_arg;
	const float *a_next;
	int b_ahead;
	int a_ahead;
};

/*
 * Where a micro-kernel of the last slice stores its tile instead of the
 * accumulator: @y, rows @rsb bytes apart, row r plus @add[r] when @add is
 * set. With @jb (AVX-512 only), the tile's columns straddle two output
 * rows of padded columns: column c goes to @y + c when bit c of
 * @mask[0..1] (16 columns each) is set, to @y + c + @jb / 4 when bit c of
 * @mask[2..3] is, else nowhere. With @res, the element of the residual
 * at @res, rows @res_rsb bytes apart, in the same place as the output's,
 * is added after @add[r] and @cadd[c]; @act is 0 or the activation that
 * comes last: ENG_TILE_RELU (x < 0 ? 0 : x), ENG_TILE_HSWISH (hswish()'s
 * operations; on AVX2 with @hs, eng_tile_hswish) or ENG_TILE_LEAKY
 * (x < 0 ? x * @alpha : x), or none of them (0 in the low byte), each
 * then with ENG_TILE_MAX or ENG_TILE_MIN: act_bound()'s Max(y, @beta) or
 * Min(y, @beta), @beta no NaN (an f32 bit pattern, as @alpha). With
 * @cadd (never with @jb), column c adds @cadd[c] after @add (a GEMM's
 * bias by columns). The AVX512-BF16 12x32 tile also takes @act
 * ENG_TILE_SILU16 or ENG_TILE_SIGMOID16 (no bound): SiLU or the logistic
 * function at bf16's grade (vm16_logistic_bf16()) where |x| is below
 * VM_LOGISTIC_NORMAL, x itself elsewhere, and then sets @far, for
 * vnpu_eng_logistic_far_avx512() to finish those lanes. The AVX-512
 * assembly reads the members at offsets 0, 8, 16, 24, 32, 40, 48, 56, 64,
 * 72 and 76 (and writes @far at 88); the AVX2 one at 0, 8, 16, 40, 48,
 * 56, 64, 72, 76 and 80.
 */
struct eng_tile_out {
	float *y;
	__u64 rsb;
	const float *add;
	__s64 jb;
	__u16 mask[4];
	const float *res;
	__s64 res_rsb;
	__u64 act;
	const float *cadd;
	__u32 alpha, beta;
	const float *hs;
	__u32 far;
};

#define ENG_TILE_RELU 1
#define ENG_TILE_HSWISH 2
#define ENG_TILE_LEAKY 3
#define ENG_TILE_SILU16 4
#define ENG_TILE_SIGMOID16 5
#define ENG_TILE_MAX 0x100
#define ENG_TILE_MIN 0x200
#define ENG_TILE_BOUND 0x300

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

/**
 * struct eng_lanes_tile - one tile of a CONV with its output channels on
 *	the lanes (VNPU_LAYER_F_LANES): @rows positions by @nv vectors of
 *	ENG_NR output channels of a panel, the whole depth
 * @x: the tile's first position's input: tap k of position r at
 *	@x + @off[k] + r * @xstep (the AVX-512 tiles: @xstep 1)
 * @off: the taps' offsets, @kc of them
 * @w: the panel: depth k's ENG_LANES_NR weights at @w + k * ENG_LANES_NR
 * @acc: the sums: channel c of position r at @acc + c * @acc_rs + r
 * @kc: depth
 * @acc_rs: see @acc
 * @xstep: see @x
 * @x2: with @two, floats from @x to the first position's input of the
 *	tile's second row of positions (the next output row's)
 * @acc2: with @two, floats from @acc to that row's sums
 * @pf: NULL, or weights the AVX-512 tiles fetch into L2 as they go, a
 *	line (16 floats) a depth step: half of the next panel's
 * @part: the AVX-512 tiles of a slice of the depth (@kc of it): their
 *	sums between slices as the registers hold them, by position
 *	(ENG_LANES_NR floats each, the second row's from @acc2 positions
 *	on), from and to where @pin and @pout say
 * @rows: positions, 1 to ENG_LANES_ROWS (with @two: a row of each)
 * @nv: vectors of the panel, 1 or 2
 * @two: whether the tile takes a second row of @rows positions (the
 *	AVX-512 tiles only, @rows ENG_LANES_ROWS): the panel's weights
 *	loaded once for both
 * @pin: the sums start from @part (the depth before @off's), not zero
 * @pout: the sums go to @part (more depth follows), not to @acc
 *
 * Each sum is fma(x, w, sum) in depth order from zero: the bits of the
 * GEMM micro-kernels on the same weights packed as VNPU_PACK_CONV_W.
 */
struct eng_lanes_tile {
	const float *x;
	const __s32 *off;
	const float *w, *pf;
	float *acc, *part;
	__u64 kc, acc_rs;
	__s64 xstep, x2, acc2;
	int rows, nv, two, pin, pout;
};

/* The AVX-512F tiles of struct eng_lanes_tile: same bits as the C ones. */
void vnpu_eng_lanes_avx512(const struct eng_lanes_tile *t);

/* The AVX-512F driver (12x32 tiles); same bits as the AVX2 6x16 one. */
void vnpu_eng_slice_avx512(struct eng_slice *s);
/* The AVX2 6x16 driver, for benchmarks of the micro-kernels alone. */
void vnpu_eng_slice_avx2(struct eng_slice *s);

/*
 * The AVX-512 drivers' (f32 and bf16) output of a last slice's tile at
 * block row @r0 and column @c0, @w columns wide, into @o from @s's @out
 * members; the prefetch of its lines; @s->out_fn on what it stored.
 */
void vnpu_eng_tile_out(const struct eng_slice *s, __u64 r0, __u64 c0, __u64 w,
		       struct eng_tile_out *o);
void vnpu_eng_out_ahead(const struct eng_tile_out *o, int rows, __u64 cols);
void vnpu_eng_tile_out_fn(const struct eng_slice *s,
			  const struct eng_tile_out *o, int rows, __u64 cols);

/* The most kernel columns of struct eng_bf16_edges. */
#define ENG_BF16_EDGE_KW 8

/**
 * struct eng_bf16_edges - a convolution of stride 1 whose B the
 * AVX512-BF16 driver reads from its input in place (no window), its
 * columns its outputs, rows as long as the input's: where a tap falls
 * past its row's ends (the padding by columns), and for columns past the
 * last, B is zero
 * @w: the rows' length
 * @n: the columns
 * @kw: the kernel's columns, at most ENG_BF16_EDGE_KW: depth k is tap
 *	k % @kw of its kernel row
 * @dil: the input's columns between taps
 * @pad: the padding before each row
 */
struct eng_bf16_edges {
	__u64 w, n;
	__u32 kw, dil, pad;
};

/**
 * struct eng_bf16_slice - one depth slice of a block in bf16 depth pairs
 * @kc: depth of the slice; odd only for the last slice of an odd depth
 * @mc: rows of the block
 * @nc: columns of the block
 * @a: ceil(@mc / ENG_MR) panels of A, @a_ps words apart, pair p of row r
 *	at + p * ENG_MR + r (a word: depth 2p low, 2p + 1 high); with an
 *	odd @kc and no @a_tail, each panel's last depth follows as a plain
 *	row of ENG_MR bf16 (vnpu_eng_pair_bf16())
 * @a_ps: see @a
 * @a_rows: A's rows are %ENG_BF16_ARS words apart instead, pair p of row
 *	r at @a + r * %ENG_BF16_ARS + p (panels still @a_ps apart); then
 *	@a_tail is set
 * @a_tail: NULL, or (odd @kc) the rows' last depth as words (x, 0)
 * @b: NULL, or ceil(@nc / ENG_NR) panels of B, @b_ps words apart, pair p
 *	of column j at + p * ENG_NR + j, an odd @kc's last depth a plain row
 *	of ENG_NR bf16
 * @b_ps: see @b
 * @fb: with @b NULL, f32 B, rounded here: row k at @fb + off[k] + column,
 *	or without @off panel q's row k at @fb + q * @fb_ps + k * ENG_NR
 * @off: see @fb
 * @fb_ps: see @fb
 * @bc: NULL, or B's cache: panel q at @bc + q * @bc_ps, pair p of column
 *	j at + p * ENG_NR + j, an odd @kc's last depth as pairs (x, 0) after
 *	them; with @fb it is filled from there first, else B is read from it
 * @bc_ps: see @bc
 * @edges: NULL, or with @off the zeros of @fb's rows: a convolution's
 *	input read in place (struct eng_bf16_edges)
 * @e_q0: with @edges, the column (of @edges->n) that @fb's column 0 is
 * @e_k0: with @edges, the depth (of the layer's) that @off[0] is
 * @acc: the block's sums, rows @acc_rs floats apart (struct eng_slice)
 * @acc_rs: see @acc
 * @load: 0 for the first slice, else add to @acc
 * @work: %ENG_BF16_WORK words of scratch
 * @out: NULL, or (last slice only) the block's struct eng_slice whose
 *	@out members say where the sums go through the epilogue in the
 *	tiles, as the f32 AVX-512 driver's; its @out_mc and @out_nc are
 *	returned (whole 12x32 tiles only)
 */
struct eng_bf16_slice {
	__u64 kc, mc, nc;
	const __u32 *a;
	__u64 a_ps;
	int a_rows;
	const __u32 *a_tail;
	const __u32 *b;
	__u64 b_ps;
	const float *fb;
	const __s32 *off;
	__u64 fb_ps;
	__u32 *bc;
	__u64 bc_ps;
	const struct eng_bf16_edges *edges;
	__u64 e_q0, e_k0;
	float *acc;
	__u64 acc_rs;
	int load;
	__u32 *work;
	struct eng_slice *out;
};

/* Words between the rows of struct eng_bf16_slice's A with @a_rows. */
#define ENG_BF16_ARS (ENG_KC / 2)

/* Words of struct eng_bf16_slice's @work: tails, then a column pair of B. */
#define ENG_BF16_WORK (ENG_GEMM_MC + 2 * ENG_NR + ENG_KC / 2 * 2 * ENG_NR)

/* The AVX512-BF16 driver (12x32 tiles of vdpbf16ps). */
void vnpu_eng_slice_bf16(const struct eng_bf16_slice *s);

/*
 * Rows [0, @rows) of dense f32 A (row r at @src + r * @rs, depth @kc) as
 * bf16 pair rows at @dst (struct eng_bf16_slice's @a with @a_rows), the
 * last depth of an odd @kc to @tail (one word a row); rows past @rows up
 * to a whole panel are zero.
 */
void vnpu_eng_bf16_pack_a(const float *src, __s64 rs, __u64 rows, __u64 kc,
			  __u32 *dst, __u32 *tail);

/*
 * One row of @kc f32 at @row as bf16 pairs at @d (ceil(@kc / 32) * 16
 * words; an odd @kc's last depth is the low half of word @kc / 2, its high
 * half and the words past it zero).
 */
void vnpu_eng_bf16_pack_row(const float *row, __u64 kc, __u32 *d);

/**
 * struct eng_bf16_gemv - a depth slice of a one-row block over packed bf16
 * B: the row's f32 @a rounded to bf16 pairs, by @np panels of B, each
 * output the same chain of vdpbf16ps as a tile's (the same bits)
 * @a: the row's @kc f32 elements of the slice
 * @b: panel q of B at @b + q * @b_ps words, as struct eng_bf16_slice's
 * @acc: the sums of @np panels, ENG_NR each, from zero unless @load
 * @work: %ENG_KC / 2 + 16 words of scratch (the rounded row)
 * @kc: depth of the slice; odd only for the last slice of an odd depth
 * @np: panels
 * @b_ps: see @b
 * @load: see @acc
 */
struct eng_bf16_gemv {
	const float *a;
	const __u32 *b;
	float *acc;
	__u32 *work;
	__u64 kc, np, b_ps;
	int load;
};

/* The AVX512-BF16 mat-vec slice. */
void vnpu_eng_gemv_bf16(const struct eng_bf16_gemv *g);

/**
 * struct eng_lowp_gemv - a mat-vec slice over packed f16 or bf16 B that
 *	widens in registers (struct eng_gemv's fields otherwise)
 * @a: the row's slice, f32
 * @b: the first panel's slice: f16 rows of ENG_NR, or bf16 depth pairs
 *	(vnpu_eng_pair_bf16()) and an odd @kc's plain last row
 * @acc: the sums, ENG_NR a panel
 * @kc: depth of the slice
 * @np: panels
 * @b_ps: elements from one panel to the next
 * @dt: VNPU_DTYPE_F16 or VNPU_DTYPE_BF16
 * @load: add to @acc rather than start from zero
 */
struct eng_lowp_gemv {
	const float *a;
	const __u16 *b;
	float *acc;
	__u64 kc, np, b_ps;
	__u32 dt;
	int load;
};

/*
 * The AVX-512F mat-vec slice over struct eng_lowp_gemv: the weights
 * widened in registers, then vnpu_eng_gemv_avx512()'s chains (its bits).
 */
void vnpu_eng_gemv_lowp(const struct eng_lowp_gemv *g);

/* Panels a group of struct eng_bf16_wide interleaves. */
#define ENG_BF16_WIDE	16

/**
 * struct eng_bf16_wide - a one-row product over bf16 panels in groups
 * of %ENG_BF16_WIDE interleaved by depth pair, plus a residual: each
 * output the chain of vdpbf16ps of struct eng_bf16_gemv (the same bits),
 * the group's panels summed at once from one run of memory
 * @a: the row as bf16 pairs (vnpu_eng_bf16_pack_row())
 * @b: the groups one after the other: group g holds nq = min(np - 16g, 16)
 *	panels; pair p of its panel q at + (p * nq + q) * ENG_NR words, an odd
 *	@kc's plain last row of panel q at + (@kc / 2 * nq * ENG_NR + q *
 *	ENG_NR / 2) words (np = ceil(@n / ENG_NR))
 * @res: the residual, @n f32
 * @y: the @n outputs, sum + res
 * @kc: depth
 * @n: columns
 */
struct eng_bf16_wide {
	const __u32 *a, *b;
	const float *res;
	float *y;
	__u64 kc, n;
};

/* The AVX512-BF16 mat-vec over interleaved panels. */
void vnpu_eng_gemv_bf16_wide(const struct eng_bf16_wide *w);

/*
 * Depths of a run of f16 sums on the AVX512-FP16 path: each run's sums,
 * rounded to f16 at every step, are widened and added to the f32 sums.
 */
#ifndef ENG_F16_RUN
#define ENG_F16_RUN	16
#endif

/* Halves between the rows of struct eng_f16_slice's A with @a_rows. */
#define ENG_F16_ARS	ENG_KC

/**
 * struct eng_f16_slice - one depth slice of a block in f16
 * @kc: depth of the slice
 * @mc: rows of the block
 * @nc: columns of the block
 * @a: ceil(@mc / ENG_MR) panels of f16 A, @a_ps halves apart, depth k of
 *	row r at + k * ENG_MR + r (packed f16 weights)
 * @a_ps: see @a
 * @a_rows: A's rows are %ENG_F16_ARS halves apart instead, depth k of row
 *	r at @a + r * %ENG_F16_ARS + k (vnpu_eng_f16_pack_a(); panels still
 *	@a_ps apart)
 * @b: NULL, or ceil(@nc / ENG_NR) panels of packed f16 B, @b_ps halves
 *	apart, depth k of column j at + k * ENG_NR + j
 * @b_ps: see @b
 * @fb: with @b NULL, f32 B, rounded here: row k at @fb + off[k] + column,
 *	or without @off panel q's row k at @fb + q * @fb_ps + k * ENG_NR
 * @off: see @fb
 * @fb_ps: see @fb
 * @acc: the block's sums, rows @acc_rs floats apart (struct eng_slice)
 * @acc_rs: see @acc
 * @load: 0 for the first slice, else add to @acc
 * @work: %ENG_F16_WORK halves of scratch, 64-byte aligned
 */
struct eng_f16_slice {
	__u64 kc, mc, nc;
	const __u16 *a;
	__u64 a_ps;
	int a_rows;
	const __u16 *b;
	__u64 b_ps;
	const float *fb;
	const __s32 *off;
	__u64 fb_ps;
	float *acc;
	__u64 acc_rs;
	int load;
	__u16 *work;
};

/* Halves of struct eng_f16_slice's @work: a column pair of B. */
#define ENG_F16_WORK	(ENG_KC * 2 * ENG_NR)

/* The AVX512-FP16 driver (12x32 tiles of vfmadd231ph). */
void vnpu_eng_slice_f16(const struct eng_f16_slice *s);

/*
 * Rows [0, @rows) of dense f32 A (row r at @src + r * @rs, depth @kc) as
 * f16 rows at @dst (struct eng_f16_slice's @a with @a_rows); rows past
 * @rows up to a whole panel are zero.
 */
void vnpu_eng_f16_pack_a(const float *src, __s64 rs, __u64 rows, __u64 kc,
			 __u16 *dst);

/**
 * struct eng_f16_gemv - a depth slice of a one-row block over packed f16
 * B: each output the chains of a tile's row (the same bits)
 * @a: the row's @kc elements of the slice as f16
 * @b: panel q of B at @b + q * @b_ps halves, as struct eng_f16_slice's
 * @acc: the sums of @np panels, ENG_NR each, from zero unless @load
 * @kc: depth of the slice
 * @np: panels
 * @b_ps: see @b
 * @load: see @acc
 */
struct eng_f16_gemv {
	const __u16 *a, *b;
	float *acc;
	__u64 kc, np, b_ps;
	int load;
};

/* The AVX512-FP16 mat-vec slice. */
void vnpu_eng_gemv_f16(const struct eng_f16_gemv *g);

#endif /* _VNPU_ENG_GEMM_H_ */

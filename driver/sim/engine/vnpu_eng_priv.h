/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Engine internals shared by the integer part (vnpu_engine.c: dispatch,
 * vnpu_eng_check.c, vnpu_eng_units.c, vnpu_eng_pack.c) and the two builds
 * of the float kernels (vnpu_eng_kern.h; each file as NAME_avx2.o and
 * NAME_base.o, vnpu_eng_isa.h). Everything here is integer-only so that
 * either side may use it.
 */
#ifndef _VNPU_ENG_PRIV_H_
#define _VNPU_ENG_PRIV_H_

#include "vnpu_engine.h"

/* GEMM blocking, shared by the scratch sizing and the kernels. */
#define ENG_MR		VNPU_PACK_MR	/* micro-tile rows */
#define ENG_NR		VNPU_PACK_NR	/* micro-tile columns */
/* Columns past a block's whole panels the AVX-512 path's tail takes. */
#define ENG_TAIL_COLS	4
#define ENG_MC		96		/* rows of one unit of CONV */
#define ENG_NC		256		/* columns of one unit of CONV */
#define ENG_GEMM_MC	132		/* rows of one unit of GEMM */
#define ENG_GEMM_NC	512		/* columns of one unit of GEMM */
#define ENG_GEMM_SPLIT_MACS (1ull << 19) /* a GEMM unit's least, if split */
#define ENG_KC		384		/* most depth of one packed slice */
#define ENG_ALIGN	64

/*
 * Multiply-adds of one unit of GEMM or CONV at most: units are what a part
 * is made of, and a part is one FPU section in vnpu.ko. Unit sizes follow
 * from the shapes and the kernel path only, never from the split. On the
 * FMA paths 2^26 (0.7 ms AVX-512, 1.1 ms AVX2+FMA natively); the baseline
 * path's software fma is 60 to 400 times slower (0.25 to 1.7 GFLOP/s by
 * CPU and layer), so its units are ENG_UNIT_SHIFT_BASE = 8 binary orders
 * smaller: 2^18, 0.3 to 2 ms.
 */
#define ENG_UNIT_MACS		(1ull << 26)
#define ENG_UNIT_SHIFT_BASE	8

/*
 * Element-wise ops split into units of this many output elements (rows of
 * row-wise ops into units of about as many elements): a unit of the
 * costliest function (erf) stays near a millisecond.
 */
#define ENG_ELEM_UNIT	4096
/*
 * The most parts a layer splits into on the FMA paths; the baseline's 256
 * times smaller units get 256 times as many, so that its parts stay units.
 * Enough that a part of the largest element-wise layer (2^30 outputs of
 * erf) stays a short FPU section.
 */
#define ENG_MAX_UNITS	(1u << 16)

/* Whether @features run the baseline kernels, with their small units. */
static inline int eng_base_path(__u32 features)
{
	return !(features & VNPU_ENG_F_AVX2_FMA);
}

/* Whether @features run the AVX512-BF16 kernels (packed bf16 weights). */
static inline int eng_bf16_path(__u32 features)
{
	const __u32 all = VNPU_ENG_F_AVX2_FMA | VNPU_ENG_F_AVX512 |
			  VNPU_ENG_F_AVX512_BF16;

	return (features & all) == all;
}

/* Whether @features run the AVX512-FP16 kernels (packed f16 weights). */
static inline int eng_f16_path(__u32 features)
{
	const __u32 all = VNPU_ENG_F_AVX2_FMA | VNPU_ENG_F_AVX512 |
			  VNPU_ENG_F_AVX512_FP16;

	return (features & all) == all;
}

/*
 * Where element (@k, @x) of a packed bf16 panel of width @w and depth
 * @kt is, in elements from the panel's start (vnpu_eng_pair_bf16()).
 */
static inline __u64 eng_pair_at(__u64 k, __u64 x, __u64 w, __u64 kt)
{
	return k < (kt & ~1ull) ? (k / 2) * 2 * w + 2 * x + k % 2 : k * w + x;
}

static inline __u64 eng_unit_macs(__u32 features)
{
	return eng_base_path(features) ?
	       ENG_UNIT_MACS >> ENG_UNIT_SHIFT_BASE : ENG_UNIT_MACS;
}

/**
 * struct eng_layer - one checked layer as the kernels see it
 * @op: &enum vnpu_layer_op
 * @t: tensors
 * @data: address of each tensor's first element
 * @n: entries in @t and @data
 * @attrs: the op's attributes
 */
struct eng_layer {
	__u32 op;
	const struct vnpu_cmd_tensor *t;
	void *const *data;
	__u32 n;
	const void *attrs;
};

typedef int (*eng_run_fn)(const struct eng_layer *l, __u64 unit_begin,
			  __u64 unit_end, const struct vnpu_eng_ctx *ctx);

/* The float kernels of one build, indexed by op. */
struct eng_kernels {
	eng_run_fn run[VNPU_LAYER_OP_LAST + 1];
	void (*transpose32)(const struct vnpu_eng_transpose *t);
	/* vnpu_eng_wino_pack() with C/group (host builds only call it) */
	int (*wino_pack)(const float *src, __u64 groups, __u64 rows, __u64 cg,
			 float *dst);
};

extern const struct eng_kernels vnpu_eng_kernels_avx2;
extern const struct eng_kernels vnpu_eng_kernels_base;

/* Outputs of one block of CHAIN: each step's buffer holds this many. */
#define ENG_CHAIN_BLOCK	1024

/*
 * CHAIN's step buffers for checked attributes @a: step k's result goes to
 * buffer @slot[k], which steps share when their results are not needed
 * at once (a step may write over an operand it is the last to read).
 * Returns the number of buffers.
 */
static inline __u32 eng_chain_slots(const struct vnpu_layer_chain *a,
				    __u8 *slot)
{
	__u32 last[VNPU_CHAIN_MAX_STEPS], k, j, s, n = 0, busy;

	for (k = 0; k < a->num_steps; k++) {
		const __u32 ref[2] = { a->steps[k].a, a->steps[k].b };

		last[k] = k;
		for (j = 0; j < 2; j++)
			if (ref[j] >= VNPU_CHAIN_STEP(0) && ref[j] < VNPU_CHAIN_IMM)
				last[ref[j] - VNPU_CHAIN_STEP(0)] = k;
	}
	for (k = 0; k < a->num_steps; k++) {
		busy = 0;
		for (j = 0; j < k; j++)
			if (last[j] > k)
				busy |= 1u << slot[j];
		for (s = 0; (busy >> s) & 1; s++)
			;
		slot[k] = (__u8)s;
		n = s + 1 > n ? s + 1 : n;
	}
	return n;
}

/*
 * CHAIN's binary step @func (VNPU_BIN_ADD, _SUB, _MUL, _DIV, _MAX, _MIN)
 * of @n floats at @pa and @pb (@ra, @rb: a run, else one repeated) into
 * @r, in 16 lanes (vnpu_eng_chain_avx512.c; VNPU_ENG_F_AVX512 only).
 */
void vnpu_eng_chain_binary_avx512(__u32 func, const float *pa, int ra,
				  const float *pb, int rb, float *r, __u32 n);

/*
 * vnpu_eng_vmath.h's function @func (&enum vnpu_act_func) on @n floats at
 * @x into @y on 16 lanes, in vnpu_eng_vmath_avx512.c (VNPU_ENG_F_AVX512);
 * with @bf16, SiLU and the logistic function at bf16's grade instead
 * (vm16_logistic_bf16(): the epilogue of a layer on the AVX512-BF16
 * kernels).
 */
void vnpu_eng_act_avx512(__u32 func, const float *x, float *y, __u64 n,
			 int bf16);
/*
 * The epilogue's activation mode (struct gemm_epi's @avx512, 1 from
 * eng_act_avx512()) of a layer whose products run on the AVX512-BF16
 * kernels: the AVX-512 activations, SiLU and the logistic function at
 * bf16's grade.
 */
#define ENG_ACT_BF16 2
/*
 * The same in place on @rows runs of @n floats at @y, @rs floats apart
 * (a tile's outputs): each run's tail under a mask, the same bits.
 */
void vnpu_eng_act_rows_avx512(__u32 func, float *y, __s64 rs, __u64 rows,
			      __u64 n, int bf16);
/*
 * The lanes of @rows runs of @n floats at @y (@rs floats apart) that a
 * bf16 tile left after SiLU (@silu) or the logistic function in its
 * registers: those past vm16_logistic_bf16()'s fast range, as it takes
 * them (struct eng_tile_out's @far).
 */
void vnpu_eng_logistic_far_avx512(int silu, float *y, __s64 rs, __u64 rows,
				  __u64 n);
/*
 * act_store()'s one pass on 16 lanes, for @act Relu, LeakyRelu, HardSwish
 * or Identity, with its bound (VNPU_ACT_F_MAX or _MIN) if any: @len sums
 * at @t, plus *@add when set, plus the run at @res when set, through @act
 * to @y; the tail under a mask. The operations of the 8-lane pass, so the
 * same bits.
 */
void vnpu_eng_plain_store_avx512(float *y, const float *t, __u64 len,
				 const float *add, const float *res,
				 const struct vnpu_layer_act *act);

/*
 * One contiguous f32 Softmax or LogSoftmax lane for the 16-lane helpers of
 * vnpu_eng_vmath_avx512.c (VNPU_ENG_F_AVX512), which do the operations of
 * vnpu_eng_elem.c's softmax_lane_f32() on spans [i, e) of it, so the same
 * bits: vnpu_eng_sm_max_avx512() raises *@mx to the span's largest
 * element (NaNs skipped), vnpu_eng_sm_exp_avx512() adds exp(x - mx) into
 * @sum (element i into sum[i % 8], in element order) and stores it in @y
 * where @store (Softmax), vnpu_eng_sm_out_avx512() writes the outputs
 * from @inv (Softmax) or @ls (LogSoftmax).
 */
struct eng_sm {
	const float *x;
	float *y;
	double sum[8];
	double inv, ls;
	float mx;
	__u32 store;
};

void vnpu_eng_sm_max_avx512(const float *x, __u64 i, __u64 e, float *mx);
void vnpu_eng_sm_exp_avx512(struct eng_sm *sm, __u64 i, __u64 e);
void vnpu_eng_sm_out_avx512(const struct eng_sm *sm, __u64 i, __u64 e);
/*
 * Softmax of two contiguous lanes of @n floats in place, at @y and @y +
 * @ys, whose maxima are @mx[0] and @mx[1]: each lane's operations of the
 * two functions above, so the same bits, the lanes' chains interleaved.
 */
void vnpu_eng_sm_pair_avx512(float *y, __s64 ys, __u64 n, const float *mx);

/*
 * The same on 16 neighbouring lanes of a strided axis at once (lane l at
 * @x + l, its element i at @x + i * @xs; @y likewise), for the operations
 * of vnpu_eng_elem.c's softmax_oct_f32(): vnpu_eng_sm16_max_avx512()
 * raises each lane's @mx over rows [i, e), vnpu_eng_sm16_exp_avx512() adds
 * row i's exps into @sum[i % 8] (from zero at row 0),
 * vnpu_eng_sm16_total_avx512() sets @inv to 1 / each lane's sum and @ls to
 * the sum, vnpu_eng_sm16_out_avx512() writes rows [i, e) of the outputs
 * from @inv (Softmax) or @ls (LogSoftmax, once the caller made it the
 * sum's log).
 */
struct eng_sm16 {
	const float *x;
	float *y;
	__s64 xs, ys;
	double sum[8][16];
	double inv[16], ls[16];
	float mx[16];
	__u32 store;
};

void vnpu_eng_sm16_max_avx512(struct eng_sm16 *s, __u64 i, __u64 e);
void vnpu_eng_sm16_exp_avx512(struct eng_sm16 *s, __u64 i, __u64 e);
void vnpu_eng_sm16_total_avx512(struct eng_sm16 *s);
void vnpu_eng_sm16_out_avx512(const struct eng_sm16 *s, __u64 i, __u64 e);

/* Integer helpers, in vnpu_engine.c. */
__u64 vnpu_eng_numel(const struct vnpu_cmd_tensor *t);
void vnpu_eng_bcast_strides(const struct vnpu_cmd_tensor *in,
			    const struct vnpu_cmd_tensor *out, __s64 *strides);
/* In vnpu_eng_units.c. */
__u64 vnpu_eng_units(const struct eng_layer *l, __u32 features);

/* A layer tensor's largest dim and element count (vnpu_eng_check.c). */
#define ENG_MAX_DIM	(1ull << 31)
#define ENG_MAX_NUMEL	(1ull << 40)

static inline __u64 sat_mul(__u64 a, __u64 b)
{
	if (a && b > ~0ull / a)
		return ~0ull;
	return a * b;
}

/*
 * A point where the caller may end the FPU section (struct vnpu_eng_ctx):
 * nothing lives in vector registers across the call, which the ABI makes
 * caller-saved.
 */
static inline void eng_pause(const struct vnpu_eng_ctx *ctx)
{
	if (ctx->pause)
		ctx->pause(ctx->pause_arg);
}

static inline __u64 eng_div_up(__u64 a, __u64 b)
{
	return (a + b - 1) / b;
}

static inline __u64 eng_min(__u64 a, __u64 b)
{
	return a < b ? a : b;
}

static inline __u64 eng_max(__u64 a, __u64 b)
{
	return a > b ? a : b;
}

/*
 * Units of @rows rows of @cols independent outputs that read @depth
 * elements each: whole rows, as many to a unit as fit ENG_ELEM_UNIT
 * element reads, while a row fits; otherwise each row in blocks of about
 * that many reads (one output at least). Every output is computed whole by
 * one unit, so the blocks change no sum.
 */
static inline __u64 eng_block_cols(__u64 cols, __u64 depth)
{
	__u64 c = ENG_ELEM_UNIT / (depth ? depth : 1);

	return c >= cols ? cols : c ? c : 1;
}

/* Whole rows per unit, when a unit holds whole rows. */
static inline __u64 eng_block_rows(__u64 cols, __u64 depth)
{
	__u64 reads = cols * depth;
	__u64 per = reads ? ENG_ELEM_UNIT / reads : ENG_ELEM_UNIT;

	return per ? per : 1;
}

static inline __u64 eng_block_units(__u64 rows, __u64 cols, __u64 depth)
{
	__u64 bc = eng_block_cols(cols, depth);

	if (bc < cols)
		return rows * eng_div_up(cols, bc);
	return eng_div_up(rows, eng_block_rows(cols, depth));
}

/**
 * struct eng_block - the outputs of one unit of eng_block_units()
 * @r0: first row
 * @r1: past the last row
 * @c0: first column of each of its rows
 * @c1: past the last column
 */
struct eng_block {
	__u64 r0, r1, c0, c1;
};

static inline void eng_block_of(__u64 rows, __u64 cols, __u64 depth, __u64 u,
				struct eng_block *b)
{
	__u64 bc = eng_block_cols(cols, depth), nb, per;

	if (bc < cols) {
		nb = eng_div_up(cols, bc);
		b->r0 = u / nb;
		b->r1 = b->r0 + 1;
		b->c0 = u % nb * bc;
		b->c1 = eng_min(b->c0 + bc, cols);
		return;
	}
	per = eng_block_rows(cols, depth);
	b->r0 = eng_min(u * per, rows);
	b->r1 = eng_min(b->r0 + per, rows);
	b->c0 = 0;
	b->c1 = cols;
}

/*
 * SCATTER_ELEMENTS and SCATTER_ND: a unit owns a range of Y's elements (in
 * row-major order), copies them from data and applies, in the updates'
 * order, the updates that land in it. Every unit reads all @updates
 * indices, so a range holds as many elements at least: the units of a
 * layer with as many updates as Y has elements are the layer.
 */
static inline __u64 eng_scatter_chunk(__u64 updates)
{
	return updates > 16 * ENG_ELEM_UNIT ? updates : 16 * ENG_ELEM_UNIT;
}

static inline __u64 eng_scatter_units(__u64 numel_y, __u64 updates)
{
	__u64 u = eng_div_up(numel_y, eng_scatter_chunk(updates));

	return u ? u : 1;
}

/* ---- element reads per output, for ops whose outputs read many ------ */

/*
 * RESIZE: whether axis @d of @in elements to @out keeps every coordinate
 * (one tap of weight 1 at the output's own index): a kept size without a
 * scale, or with a scale of exactly 1 where the coordinate is the
 * output's index (every mode but cubic, whose taps next to it have weight
 * 0, and but tf_half_pixel_for_nn, which adds 0.5).
 */
static inline int eng_resize_axis_kept(const struct vnpu_layer_resize *a,
				       __u32 d, __u64 in, __u64 out)
{
	return in == out &&
	       (!a->scale[d] ||
		(a->scale[d] == 0x3f800000u && a->mode != VNPU_RESIZE_CUBIC &&
		 a->coord != VNPU_COORD_TF_HALF_PIXEL_FOR_NN));
}

/* RESIZE: taps per output over axes [0, @axes) at most. */
static inline __u64 eng_resize_taps_of(const struct vnpu_cmd_tensor *x,
				       const struct vnpu_cmd_tensor *y,
				       const struct vnpu_layer_resize *a,
				       __u32 axes)
{
	__u64 taps = 1, per = a->mode == VNPU_RESIZE_CUBIC ? 4 :
			      a->mode == VNPU_RESIZE_LINEAR ? 2 : 1;
	__u32 d;

	for (d = 0; d < axes; d++)
		if (!eng_resize_axis_kept(a, d, x->dims[d], y->dims[d]))
			taps *= per;
	return taps;
}

/* RESIZE: taps per output, over the axes it resizes, and its rank. */
static inline __u64 eng_resize_taps(const struct vnpu_cmd_tensor *x,
				    const struct vnpu_cmd_tensor *y,
				    const struct vnpu_layer_resize *a)
{
	return eng_resize_taps_of(x, y, a, x->rank) + x->rank;
}

/*
 * RESIZE: the combinations of the outer axes' taps (all but the innermost
 * axis) of an output row; the kernel takes up to ENG_RESIZE_ROW_TAPS of
 * them from a table per row (every case but cubic over three axes and
 * more), and computes each output's taps otherwise.
 */
#define ENG_RESIZE_ROW_TAPS	16

static inline __u64 eng_resize_row_taps(const struct vnpu_cmd_tensor *x,
					const struct vnpu_cmd_tensor *y,
					const struct vnpu_layer_resize *a)
{
	return eng_resize_taps_of(x, y, a, x->rank ? x->rank - 1 : 0);
}

/*
 * RESIZE: a part's scratch holds its state (struct resize_state: the
 * rows' keys, the last row's outer taps), then the taps of up to
 * ENG_RESIZE_COLS output columns (the innermost axis) at a time, rounded
 * up to eight columns (a vector) and eight more of padding: per column its
 * tap count (32 bits) and four taps of a weight (32 bits) and an input
 * offset (64 bits); then ENG_RESIZE_ROW_TAPS input rows resized along that
 * axis (a float per column); then the taps of up to ENG_RESIZE_COLS output
 * indices of the last outer axis, and a byte each saying it is filled.
 */
#define ENG_RESIZE_COLS	1024
/* RESIZE: the input taps of one output coordinate along one axis. */
struct resize_axis {
	__u64 idx[4];
	double w[4];
	__u32 n;
};

/* RESIZE: what a part keeps from row to row, first in its scratch. */
struct resize_state {
	__s64 base[ENG_RESIZE_ROW_TAPS];	/* each row's input offset */
	__u64 used[ENG_RESIZE_ROW_TAPS];	/* 0: empty, else a clock */
	/* The outer axes' taps of the last output row, while they hold. */
	struct resize_axis ax[VNPU_MAX_DIMS];
	__u64 coord[VNPU_MAX_DIMS];
	__u32 known;	/* a bit per axis: ax[d] is coord[d]'s */
};

static inline __u64 eng_resize_cols(const struct vnpu_cmd_tensor *y)
{
	__u64 w = y->rank ? y->dims[y->rank - 1] : 1;

	return (eng_min(w, ENG_RESIZE_COLS) + 7) / 8 * 8 + 8;
}

static inline __u64 eng_resize_scratch(const struct vnpu_cmd_tensor *y)
{
	return sizeof(struct resize_state) + eng_resize_cols(y) *
	       (4 + 4 * 4 + 4 * 8 + ENG_RESIZE_ROW_TAPS * 4) +
	       ENG_RESIZE_COLS * (sizeof(struct resize_axis) + 1) + ENG_ALIGN;
}

/* GRID_SAMPLE: taps per output. */
static inline __u64 eng_grid_taps(const struct vnpu_layer_grid_sample *a)
{
	return a->mode == VNPU_RESIZE_CUBIC ? 16 :
	       a->mode == VNPU_RESIZE_LINEAR ? 4 : 1;
}

/*
 * ROI_ALIGN: reads per output, four per sample. An adaptive grid depends
 * on the ROI; it is estimated for ROIs within the input (the kernel
 * refuses more than 2^20 samples).
 */
static inline __u64 eng_roi_reads(const struct vnpu_cmd_tensor *x,
				  const struct vnpu_cmd_tensor *y,
				  const struct vnpu_layer_roi_align *a)
{
	__u64 g = a->sampling_ratio, n;

	if (g)
		n = g > 1024 ? 1ull << 20 : g * g;
	else
		n = eng_min(eng_div_up(x->dims[2], y->dims[2] ? y->dims[2] : 1) *
			    eng_div_up(x->dims[3], y->dims[3] ? y->dims[3] : 1),
			    1ull << 20);
	return 4 * n;
}

/* Outputs the global pools (one output per plane) compute at a time. */
#define ENG_POOL_LANES	8

/*
 * POOL: outputs per unit, windows of @taps reads each, about
 * ENG_ELEM_UNIT reads; at least ENG_POOL_LANES when @y has one output per
 * plane, whose windows run that many channels at a time.
 */
static inline __u64 eng_pool_per_unit(const struct vnpu_cmd_tensor *y,
				      __u64 taps)
{
	__u64 per = ENG_ELEM_UNIT / (taps ? taps : 1), plane = 1;
	__u32 d;

	for (d = 2; d < y->rank; d++)
		plane *= y->dims[d];
	if (plane == 1 && per < ENG_POOL_LANES)
		per = ENG_POOL_LANES;
	return per ? per : 1;
}

/*
 * An f32 MAX pool at stride 1 without dilation whose windows cross a
 * row's left or right edge (YOLO's SPPF: 5x5 on 20x20, a fifth of each
 * row's windows) runs each output row over a copy of its window's rows
 * inside the input, -inf on either side (vnpu_eng_gemm.c's
 * pool_pad_rows()), or (AVX2) over the maxima of each window row kept
 * between output rows (pool_sep_row()), in the part's scratch: the
 * copy's floats (kernel rows of every padded column the row's windows
 * read, at least the maxima's), or 0 where the pool does not take it.
 * At stride 2 (ResNet's stem: 3x3 on 112x112) only the maxima pay, with
 * AVX-512 (each input row's taken once in 16 lanes, not once per window
 * row over it); otherwise the edge windows go their own way, as at
 * larger strides, where few windows cross an edge and the copy costs
 * more than they do.
 */
#define ENG_POOL_PAD_MAX	8192

static inline __u64 eng_pool_pad_floats(const struct vnpu_layer_pool *a,
					const struct vnpu_cmd_tensor *x,
					const struct vnpu_cmd_tensor *y)
{
	__u64 ow_n = y->dims[y->rank - 1], w = x->dims[x->rank - 1], wq;

	if (a->mode != VNPU_POOL_MAX || x->dtype != VNPU_DTYPE_F32 ||
	    y->dtype != VNPU_DTYPE_F32 || a->dilation[0] != 1 ||
	    a->dilation[1] != 1 || !ow_n || a->stride[1] > 2)
		return 0;
	wq = (ow_n - 1) * a->stride[1] + a->kernel[1];
	if (!a->pad_begin[1] && wq <= w)
		return 0;
	return wq * a->kernel[0] <= ENG_POOL_PAD_MAX ? wq * a->kernel[0] : 0;
}

/*
 * The window maxima of @nr rows of an f32 MAX pool at stride 2, @xsh
 * floats apart from @row on, windows of @k1 (at most 34) taps from column
 * 2 o - @pb on, -inf outside the rows' @w floats, to @hr[r][0, @ow_n) in
 * 16 lanes (vnpu_eng_pool_avx512.c; VNPU_ENG_F_AVX512 only): the bits of
 * the taps in order, but for the rows (bit r) it returns, where a NaN
 * was read.
 */
__u32 vnpu_eng_pool_hrows_s2_avx512(const float *row, __s64 xsh, __u32 nr,
				    __u64 w, __u64 ow_n, __s64 pb, __u32 k1,
				    float *const *hr);
/*
 * Outputs [@o, @end) of an f32 MAX pool's output row to @y: the maxima
 * of the @n rows of window maxima @rp column by column, none a NaN, in
 * 16 lanes (vnpu_eng_pool_avx512.c; VNPU_ENG_F_AVX512 only).
 */
void vnpu_eng_pool_vmax_avx512(const float *const *rp, __u32 n, __u64 o,
			       __u64 end, float *y);

/*
 * An f32 MAX pool at stride 1 along the rows without dilation, at most
 * ENG_POOL_S1_ROWS window rows (YOLO's SPPF: three 5x5 on 20x20) runs a
 * plane at a time over each input row's window maxima (vnpu_eng_gemm.c's
 * pool_s1()): a padded copy of the plane's rows and their maxima, output
 * rows rounded up to 8 floats, in the part's scratch: their floats, or 0
 * where the pool cannot take that path.
 */
#define ENG_POOL_S1_ROWS	16

static inline __u64 eng_pool_s1_floats(const struct vnpu_layer_pool *a,
				       const struct vnpu_cmd_tensor *x,
				       const struct vnpu_cmd_tensor *y)
{
	__u64 owq, n;

	if (a->mode != VNPU_POOL_MAX || x->dtype != VNPU_DTYPE_F32 ||
	    y->dtype != VNPU_DTYPE_F32 || x->rank != 4 || y->rank != 4 ||
	    a->dilation[0] != 1 || a->dilation[1] != 1 ||
	    a->stride[1] != 1 || !a->kernel[0] || !a->kernel[1] ||
	    a->kernel[0] > ENG_POOL_S1_ROWS || a->kernel[1] > ENG_POOL_PAD_MAX ||
	    x->dims[2] > ENG_POOL_PAD_MAX)
		return 0;
	owq = (y->dims[3] + 7) & ~7ull;
	if (!owq || owq > ENG_POOL_PAD_MAX)
		return 0;
	n = x->dims[2] * (2 * owq + a->kernel[1] - 1);
	return n <= 2 * ENG_POOL_PAD_MAX ? n : 0;
}

/* MAXPOOL_INDEX: the window of one output. */
static inline __u64 eng_poolidx_window(const struct vnpu_layer_pool_index *a)
{
	return (__u64)a->kernel[0] * a->kernel[1];
}

/**
 * struct eng_unit - the output block of one unit of GEMM or CONV
 * @rows: rows (of a group's M/group for CONV), a multiple of ENG_MR, at
 *	most ENG_GEMM_MC (GEMM) or ENG_MC (CONV)
 * @cols: columns (padded ones for a windowed CONV), a multiple of ENG_NR,
 *	at most ENG_GEMM_NC (GEMM) or ENG_NC (CONV)
 */
struct eng_unit {
	__u64 rows, cols;
};

/* @macs / @per rounded down to a multiple of @step, within [@lo, @hi]. */
static inline __u64 eng_unit_side(__u64 macs, __u64 per, __u64 step,
				  __u64 lo, __u64 hi)
{
	__u64 v = macs / (per ? per : 1) / step * step;

	return v < lo ? lo : v > hi ? hi : v;
}

/*
 * @n split into the fewest even pieces of at most @max, each rounded up
 * to a multiple of @step (at least @step).
 */
static inline __u64 eng_even_side(__u64 n, __u64 max, __u64 step)
{
	__u64 pieces = eng_div_up(n ? n : 1, max);

	return eng_div_up(eng_div_up(n ? n : 1, pieces), step) * step;
}

/*
 * Where block @i of @n starts when they split @total as evenly as whole
 * steps of @step allow (block @n: at @total): each block a count of steps
 * or one more, the last cut at @total. With @n the count of blocks of at
 * most @max (a multiple of @step) that @total needs, none is longer than
 * @max, and two tiles taking the first and the second half of the blocks
 * get halves within a step, where blocks of @max and a short last one
 * left the whole shortfall to the second (ResNet-50's 3x3 512 x 512 of
 * stride 2: ten blocks of 54 rows, the last of 26, 270 rows on one tile
 * and 242 on the other).
 */
static inline __u64 eng_even_at(__u64 i, __u64 n, __u64 total, __u64 step)
{
	__u64 at = eng_div_up(total, step) * i / (n ? n : 1) * step;

	return at < total ? at : total;
}

/*
 * The step of even blocks of a unit's @rows (eng_even_at()): micro-tile
 * rows, but units of two (the least a small CONV halves its rows to, 12
 * rows: whole AVX-512 tiles, and the AVX2 tail columns' two-panel calls
 * that MobileNetV3's 7x7 1x1s take) keep them whole. Steps of 12 for
 * larger units cost too much evenness: 128 rows in two blocks of 60 and
 * 68, not 66 and 62.
 */
static inline __u64 eng_unit_step(__u64 rows)
{
	return rows > 2 * ENG_MR ? ENG_MR : rows;
}

/*
 * A GEMM unit of an @m x @n output of depth @k: all the rows when they are
 * at most ENG_GEMM_MC (a sequence of 128 is one block, so B streams once),
 * else even blocks of at most ENG_MC; columns in even blocks of as many as
 * the budget allows for those rows (two threads get equal halves of 768
 * columns, not 512 and 256), and one block more where the layer would
 * otherwise have an odd count of units above one (BERT's 3072-deep
 * projections: six units of 128 columns rather than five of 160, of
 * which two threads ran three and two); on the baseline path the rows
 * then shrink to the budget too.
 */
static inline void eng_gemm_unit(__u64 m, __u64 n, __u64 k, __u32 features,
				 struct eng_unit *u)
{
	__u64 macs = eng_unit_macs(features);
	__u64 rows = eng_even_side(m, m <= ENG_GEMM_MC ? ENG_GEMM_MC : ENG_MC,
				   ENG_MR);
	__u64 cols = eng_unit_side(macs, rows * k, ENG_NR, ENG_NR,
				   ENG_GEMM_NC);
	__u64 units = eng_div_up(m ? m : 1, rows) * eng_div_up(n ? n : 1, cols);

	if (units > 1 && units % 2 && n > cols)
		cols = eng_div_up(n, eng_div_up(n, cols) + 1);
	/*
	 * One unit of the work of two: halves of the columns, so that two
	 * tiles share it (oww_melspectrogram's STFT, 97 x 257 x 512, ran
	 * on one CPU of two).
	 */
	if (units == 1 && n > ENG_NR &&
	    m * k >= eng_div_up(2 * ENG_GEMM_SPLIT_MACS, n))
		cols = eng_div_up(n, 2);
	u->cols = eng_even_side(n, cols, ENG_NR);
	u->rows = rows;
	if (eng_base_path(features))
		u->rows = eng_unit_side(macs, u->cols * k, ENG_MR, ENG_MR,
					rows);
}

/* The most floats of a unit's rows of S in an ATTENTION layer. */
#define ENG_ATTN_S_FLOATS (1u << 16)

/*
 * Query rows of an ATTENTION unit over @n keys: even blocks of at most
 * ENG_GEMM_MC, so that K is packed once a head where they fit (BERT's 128
 * rows: 12 units of its 12 heads), fewer where the rows of S would take
 * more than ENG_ATTN_S_FLOATS.
 */
static inline __u64 eng_attn_rows(__u64 m, __u64 n)
{
	__u64 most = ENG_ATTN_S_FLOATS / (n ? n : 1);

	most = most < 1 ? 1 : most > ENG_GEMM_MC ? ENG_GEMM_MC : most;
	return eng_even_side(m, most, 1);
}

/* The GEMM block an ATTENTION unit of @rows query rows lays its scratch out for. */
static inline void eng_attn_block(__u64 rows, struct eng_unit *blk)
{
	blk->rows = eng_div_up(rows, 2 * ENG_MR) * 2 * ENG_MR;
	blk->cols = ENG_GEMM_NC;
}

/*
 * Floats between rows of a block's f32 accumulator of @nc columns: whole
 * panels and one more, so that rows do not share cache sets.
 */
static inline __u64 eng_acc_rs(__u64 nc)
{
	return eng_div_up(nc, ENG_NR) * ENG_NR + ENG_NR;
}

/*
 * The block a part's scratch is laid out for: on the FMA paths the widest
 * one (ENG_GEMM_MC rows for a GEMM unit of more than ENG_MC, else ENG_MC,
 * by ENG_GEMM_NC; GEMM's columns exceed CONV's), their layout as measured;
 * on the baseline path the unit itself.
 */
static inline void eng_scratch_block(__u32 features, const struct eng_unit *u,
				     struct eng_unit *blk)
{
	blk->rows = u->rows > ENG_MC ? ENG_GEMM_MC : ENG_MC;
	blk->cols = ENG_GEMM_NC;
	if (eng_base_path(features))
		*blk = *u;
}

/*
 * Whether a GEMM's B or a CONV's W (@w) is packed f32 panels, which the
 * micro-kernels read in place; packed f16 and bf16 panels are widened a
 * depth slice at a time into the part's scratch.
 */
static inline int eng_packed_f32(__u32 flags, const struct vnpu_cmd_tensor *w)
{
	return (flags & VNPU_LAYER_F_PACKED) && w->dtype == VNPU_DTYPE_F32;
}

/* The tensor index of a GEMM/CONV's optional inputs and output. */
static inline __u32 eng_opt_index(__u32 flags, __u32 which)
{
	__u32 i = 2;

	if (which == VNPU_LAYER_F_BIAS)
		return i;
	if (flags & VNPU_LAYER_F_BIAS)
		i++;
	if (which == VNPU_LAYER_F_RESIDUAL)
		return i;
	if (flags & VNPU_LAYER_F_RESIDUAL)
		i++;
	return i;	/* the output */
}

/* GEMM's shape: batch is the product of Y's dims before the last two. */
static inline void eng_gemm_shape(const struct eng_layer *l, __u64 *batch,
				  __u64 *m, __u64 *n, __u64 *k)
{
	const struct vnpu_cmd_tensor *a = &l->t[0];
	const struct vnpu_cmd_tensor *y = &l->t[l->n - 1];
	__u64 b = 1;
	__u32 d;

	for (d = 0; d + 2 < y->rank; d++)
		b *= y->dims[d];
	*batch = b;
	*m = y->dims[y->rank - 2];
	*n = y->dims[y->rank - 1];
	*k = a->dims[a->rank - 1];
}

/*
 * The GEMM one step of an LSTM (VNPU_LAYER_LSTM) runs for one direction
 * and batch row: tensors A H_prev [1, H], B the direction's packed panels
 * (of @dt: f32, or f16 or bf16 panels as the hints pack them), the
 * residual XW's row [1, 4H] and Y the gates [1, 4H], alpha and beta 1.
 * The caller gives the data pointers.
 */
struct eng_lstm_gemm {
	struct vnpu_cmd_tensor t[4];
	struct vnpu_layer_gemm a;
};

static inline void eng_lstm_gemm_init(__u64 h, __u32 dt,
				      struct eng_lstm_gemm *s)
{
	__u32 i;

	*s = (struct eng_lstm_gemm){ .a = {
		.flags = VNPU_LAYER_F_PACKED | VNPU_LAYER_F_RESIDUAL,
		.alpha = 0x3f800000, .beta = 0x3f800000 } };
	for (i = 0; i < 4; i++) {
		s->t[i].dtype = VNPU_DTYPE_F32;
		s->t[i].rank = 2;
		s->t[i].dims[0] = 1;
		s->t[i].dims[1] = i ? 4 * h : h;
		s->t[i].strides[0] = (__s64)s->t[i].dims[1];
		s->t[i].strides[1] = 1;
	}
	s->t[1].dtype = dt;
	s->t[1].rank = 1;
	s->t[1].dims[0] = vnpu_eng_packed_size(VNPU_PACK_GEMM_B, 1, h, 4 * h);
	s->t[1].strides[0] = 1;
}

/* Bytes of an LSTM part's scratch before its GEMM's: the gates and h(C). */
static inline __u64 eng_lstm_head(__u64 h)
{
	return (5 * h * 4 + ENG_ALIGN - 1) / ENG_ALIGN * ENG_ALIGN;
}

/*
 * Bytes of an LSTM part's scratch for the AVX512-BF16 path with bf16 R
 * (vnpu_eng_lstm.c), past its head: a direction's panels regrouped for
 * the mat-vec over interleaved panels, then H_prev as bf16 pairs. Zero
 * on other paths and for other R.
 */
static inline __u64 eng_lstm_wide(__u64 h, __u32 dt, __u32 features)
{
	__u64 per = vnpu_eng_packed_size(VNPU_PACK_GEMM_B, 1, h, 4 * h);

	if (!eng_bf16_path(features) || dt != VNPU_DTYPE_BF16)
		return 0;
	return (per * 2 + ENG_ALIGN - 1) / ENG_ALIGN * ENG_ALIGN +
	       (h + 31) / 32 * 64;
}

/* CONV's shape with 1-D as 2-D of height 1. */
struct eng_conv_shape {
	__u64 n, c, h, w;	/* input */
	__u64 m, oh, ow;	/* output */
	__u64 kh, kw, group, cg, mg;
	__u64 wh, ww;	/* a Winograd tile's output rows and columns */
};

static inline void eng_conv_shape(const struct eng_layer *l,
				  struct eng_conv_shape *s)
{
	const struct vnpu_layer_conv *a = l->attrs;
	const struct vnpu_cmd_tensor *x = &l->t[0];
	const struct vnpu_cmd_tensor *y = &l->t[l->n - 1];
	int two = x->rank == 4;

	s->n = x->dims[0];
	s->c = x->dims[1];
	s->h = two ? x->dims[2] : 1;
	s->w = x->dims[x->rank - 1];
	s->m = y->dims[1];
	s->oh = two ? y->dims[2] : 1;
	s->ow = y->dims[y->rank - 1];
	s->kh = a->kernel[0];
	s->kw = a->kernel[1];
	s->group = a->group;
	s->cg = s->c / a->group;
	s->mg = s->m / a->group;
	/* F(4x4, 3x3), F(2x2, 3x3), F(4x2, 3x3). */
	s->wh = a->flags & VNPU_LAYER_F_WINO2 ? 2 : 4;
	s->ww = a->flags & (VNPU_LAYER_F_WINO2 | VNPU_LAYER_F_WINO42) ? 2 : 4;
}

static inline int eng_conv_depthwise(const struct eng_conv_shape *s)
{
	return s->cg == 1 && s->mg == 1;
}

/* ---- QLINEAR_CONV over %VNPU_PACK_QCONV_W weights (vnpu_eng_quant.c) ---- */

#define ENG_QMR		VNPU_PACK_QMR	/* output channels per int8 tile */
#define ENG_QNR		32		/* output positions per int8 tile */
#define ENG_QMB		(8 * ENG_QMR)	/* output channels per unit, at most */
#define ENG_QMIN_UNITS	8		/* units of a layer, at least, where it can */
/* Units of a layer of ENG_QBIG_MACS sums or more, at least, where it can. */
#define ENG_QBIG_UNITS	16
#define ENG_QBIG_MACS	(1ull << 25)
/* Bytes of a unit's packed input, about: a share of L2. */
#define ENG_QB_BYTES	(192u << 10)

static inline __u64 eng_q4(__u64 k)
{
	return (k + 3) & ~3ull;
}

/*
 * %VNPU_PACK_QCONV_SPLIT: the most pairs a tile of ENG_QMR rows of depth
 * @k4 lists apart (one in 16).
 */
static inline __u64 eng_qsplit_cap(__u64 k4)
{
	return ENG_QMR * k4 / 32;
}

/*
 * Depth steps (of 4) the AVX2 8-bit tile sums between visits of its sums
 * in memory, and a %VNPU_PACK_QCONV_SPLIT tile's step schedule
 * (%VNPU_QSPLIT_F_PAIRS): per group of ENG_QS_ROWS rows and chunk of
 * ENG_QK4_CHUNK steps, a byte np then ENG_QK4_CHUNK step bytes, the
 * chunk's 2 np paired steps first.
 */
#define ENG_QK4_CHUNK	64
#define ENG_QS_ROWS	4

static inline __u64 eng_qsched_bytes(__u64 k4)
{
	return ENG_QMR / ENG_QS_ROWS * eng_div_up(k4 / 4, ENG_QK4_CHUNK) *
	       (1 + ENG_QK4_CHUNK);
}

/*
 * The bytes of a %VNPU_PACK_QCONV_SPLIT tile's table: its count and
 * flags, its step schedule's (at 8), the ends of its rows' runs of
 * pairs (ENG_QMR u32 at eng_qsplit_ends()), then room for
 * eng_qsplit_cap() pairs (from eng_qsplit_pairs()): the schedule and
 * the pairs a tile reads, one run of bytes.
 */
static inline __u64 eng_qsplit_ends(__u64 k4)
{
	return 8 + eng_qsched_bytes(k4);
}

static inline __u64 eng_qsplit_pairs(__u64 k4)
{
	return eng_qsplit_ends(k4) + 4 * ENG_QMR;
}

static inline __u64 eng_qsplit_table(__u64 k4)
{
	return eng_qsplit_pairs(k4) + 8 * eng_qsplit_cap(k4);
}

/*
 * A pair's offset in a packed block of ENG_QNR positions (its step's,
 * k / 4 * ENG_QNR * 4, plus 1 for the step's second pair of depths) and
 * the bits of that offset a pair's use keeps; the depths a
 * %VNPU_PACK_QCONV_SPLIT table takes: below ENG_QSPLIT_K4_MAX.
 */
#define ENG_QPAIR_OFF(k)	((__u32)((k) / 4 * ENG_QNR * 4 + (k) / 2 % 2))
#define ENG_QPAIR_STEP		(~(__u32)(ENG_QNR * 4 - 1))
#define ENG_QSPLIT_K4_MAX	(1ull << 24)

/**
 * struct eng_qplan - how a packed QLINEAR_CONV splits into units
 * @k: depth of one output (C/group * KH * KW)
 * @k4: @k rounded up to a multiple of 4
 * @mp: output channels per group rounded up to ENG_QMR
 * @rows: output rows per column block (depthwise)
 * @pos: output positions per column block but the last, a multiple of
 *	ENG_QNR (others: a block starts at any position, so that only the
 *	layer's last tile is short)
 * @last: output positions of the last column block (up to @pos + 4)
 * @nb: column blocks per image
 * @ncp: positions of the largest column block, rounded up to ENG_QNR
 * @mb: output channels per unit (a multiple of ENG_QMR), but with @even
 * @nmb: channel blocks per group
 * @even: channel blocks of whole tiles spread evenly (eng_qblock_m()),
 *	not of @mb channels each
 * @units: (image, group, column block, channel block), the channel block
 *	varying fastest so that a part's units share their packed input;
 *	with ENG_QMIN_UNITS column blocks or more, one channel block of
 *	them all, so that no two parts pack one column block; with 4 to 7,
 *	two of even size; with fewer, enough for ENG_QMIN_UNITS units; a
 *	layer of ENG_QBIG_MACS sums or more and fewer than ENG_QBIG_UNITS
 *	column blocks, @even blocks, enough for ENG_QBIG_UNITS units
 * @hp: rows of a column block's staged input channel (padding included)
 * @wp: bytes of a staged row: the padded row and ENG_QSLACK
 * @rs: bytes of an im2col row: @ncp and ENG_QSLACK
 * @np: tap planes of an input channel (struct eng_qconv), 0: none
 * @pb: bytes of a tap plane
 * @dw8: bytes of the AVX2 depthwise of eight channels at once (a small
 *	map of stride 1 or 2, dilation 1, whole in one column block), 0
 *	where it does not apply
 * @ph: bytes of a column block's stride phases (stride 2 on the VNNI
 *	path, groups of 8 input channels or more: per input channel, the
 *	block's rows of each of the four (row, column) parities of X,
 *	rows of OW bytes), 0: none
 */
struct eng_qplan {
	__u64 k, k4, mp, rows, pos, last, nb, ncp, mb, nmb, units, hp, wp, rs;
	__u64 np, pb, dw8, ph, even;
};

/* Staged bytes (rows times padded row and slack) of an eight-channel depthwise, at most. */
#define ENG_QDW8_MAX	1536

/*
 * Bytes after each staged and im2col row that vector loads and stores
 * may run into (32-byte loads of a stride-2 row, 16-byte stores, the
 * VNNI depthwise row's 44 bytes); the staged channel has as many again
 * after its last row.
 */
#define ENG_QSLACK	48

static inline void eng_qplan(const struct eng_conv_shape *s,
			     const struct vnpu_layer_conv *a,
			     struct eng_qplan *p)
{
	__u64 per, tiles, span;

	p->k = s->cg * s->kh * s->kw;
	p->k4 = eng_q4(p->k);
	p->mp = eng_div_up(s->mg, ENG_QMR) * ENG_QMR;
	per = ENG_QB_BYTES / (p->k4 ? p->k4 : 1);
	p->rows = eng_max(1, eng_min(s->ow ? per / s->ow : 1, s->oh));
	p->mb = eng_min(p->mp, ENG_QMB);
	p->even = 0;
	if (eng_conv_depthwise(s)) {
		p->nb = eng_div_up(s->oh, p->rows);
		/* As many blocks, of even rows: no short last block of tiles. */
		p->rows = p->nb ? eng_div_up(s->oh, p->nb) : p->rows;
		p->ncp = eng_div_up(p->rows * s->ow, ENG_QNR) * ENG_QNR;
		p->pos = p->ncp;
		p->last = p->ncp;
		span = p->rows;
	} else {
		/* Whole tiles of positions, as many to a block as fit. */
		tiles = eng_div_up(s->oh * s->ow, ENG_QNR);
		p->nb = eng_div_up(tiles, eng_max(1, per / ENG_QNR));
		p->pos = p->nb ? eng_div_up(tiles, p->nb) * ENG_QNR : ENG_QNR;
		p->last = p->nb ? s->oh * s->ow - (p->nb - 1) * p->pos : 0;
		/*
		 * A last block of 4 positions or fewer (a 14x14 map's last 4
		 * after blocks of 64) joins the block before it, whose last
		 * tile then runs them four to a vpdpbusd: as a block of its
		 * own it would be a unit of next to no work, and two tiles'
		 * runs of units would split the map unevenly (blocks of 64,
		 * 64 | 64, 4).
		 */
		if (p->nb > 1 && p->last <= 4) {
			p->nb--;
			p->last += p->pos;
		}
		/*
		 * Two blocks, the last under three quarters of the first (a
		 * 14x14 map's 128 and 68 positions, a 7x7 map's 32 and 17):
		 * one block of them all, its units blocks of channels. With
		 * a block of positions each, two tiles' runs of units would
		 * be uneven (the short block's tile would then take units of
		 * the other block and pack it again) and each would read all
		 * the weights (2.4 MB for resnet50_qdq's 3x3s over 7x7):
		 * cut by channels, each reads half of them.
		 */
		if (p->nb == 2 && 4 * p->last < 3 * p->pos) {
			p->nb = 1;
			p->pos = tiles * ENG_QNR;
			p->last = s->oh * s->ow;
		}
		/*
		 * Two or three blocks of a large layer whose weights are
		 * more bytes than its input and output: one block, its units
		 * blocks of channels. Each of two tiles then reads half the
		 * weights, the same half every run (in its own L3 where the
		 * CPUs are apart), not all of them, and the input, small
		 * here, all: resnet50_qdq's 3x3s of 256 channels over 14x14
		 * (590 KB of weights, 49 KB in and out; blocks of 64, 64
		 * and 68 positions) took 293-294 us on 2 CPUs apart, one
		 * block 287-288.
		 */
		if (p->nb > 1 && p->nb < 4 &&
		    p->k4 * p->mp > s->cg * s->h * s->w + s->mg * s->oh * s->ow &&
		    p->mp * s->oh * s->ow * p->k4 >= ENG_QBIG_MACS) {
			p->nb = 1;
			p->pos = tiles * ENG_QNR;
			p->last = s->oh * s->ow;
		}
		p->ncp = eng_div_up(p->last > p->pos ? p->last : p->pos, ENG_QNR) * ENG_QNR;
		if (p->nb >= ENG_QMIN_UNITS)
			p->mb = p->mp;
		/*
		 * 4 to 7 blocks: two channel blocks of even size, so that
		 * two parts split the work evenly (5 blocks were units of
		 * 3 and 2 blocks, 60% of the work on one part); a part that
		 * starts inside a block packs it again.
		 */
		else if (p->nb >= 4)
			p->mb = eng_div_up(eng_div_up(p->mp, 2), ENG_QMR) * ENG_QMR;
		/*
		 * Fewer than ENG_QMIN_UNITS blocks of positions and channels:
		 * narrower channel blocks, so that the layer splits over the
		 * tiles (a 1x1 conv of 24 to 72 channels on a 56x56 map was
		 * one unit, for one tile); whole tiles each, as many as give
		 * that many blocks at least, so that the blocks are even
		 * (120 channels: 10 of 12, not 5 of 24; 240: 10 of 24, not
		 * 7 of 36, 4 of them on one of two tiles).
		 */
		else if (p->nb && p->nb * eng_div_up(p->mp, p->mb) < ENG_QMIN_UNITS) {
			__u64 want = eng_div_up(ENG_QMIN_UNITS, p->nb);

			p->mb = eng_max(1, p->mp / ENG_QMR / want) * ENG_QMR;
		}
		/*
		 * A large layer of fewer than ENG_QMIN_UNITS column blocks and
		 * ENG_QBIG_UNITS units: that many units, their channel blocks
		 * of whole tiles spread evenly. Two tiles' runs of units end
		 * up to about a unit apart (the one done first takes the
		 * other's last units), and a unit of resnet50_qdq's 3x3s on
		 * 14x14 maps was a ninth of the layer (3 column blocks by
		 * channel blocks of 8, 8 and 6 tiles, 5 units on one of two
		 * tiles: 60 us of 760 idle at the end). Small layers keep
		 * their units, each a part's set-up (mobilenetv3_large_qdq's
		 * are below 16 million sums).
		 */
		if (p->nb < ENG_QMIN_UNITS &&
		    p->nb * eng_div_up(p->mp, p->mb) < ENG_QBIG_UNITS &&
		    p->mp * s->oh * s->ow * p->k4 >= ENG_QBIG_MACS)
			p->even = eng_min(eng_div_up(ENG_QBIG_UNITS, p->nb),
					  p->mp / ENG_QMR);
		/* Output rows a run of @ncp positions may touch. */
		span = s->ow ? eng_min(s->oh, (p->ncp + s->ow - 2) / s->ow + 1) : 1;
	}
	p->nmb = p->even ? p->even : p->mb ? eng_div_up(p->mp, p->mb) : 0;
	p->units = s->ow && s->mg ? s->n * s->group * p->nb * p->nmb : 0;
	p->hp = (span - 1) * a->stride[0] + (s->kh - 1) * a->dilation[0] + 1;
	p->wp = eng_max(s->w + a->pad_begin[1] + a->pad_end[1],
			(s->ow - 1) * a->stride[1] +
			(s->kw - 1) * a->dilation[1] + 1) + ENG_QSLACK;
	p->rs = p->ncp + ENG_QSLACK;
	/*
	 * Tap planes: strides of 1 and 2, not depthwise, not a 1x1 of
	 * stride 1 (read in place). Per column of taps and input row
	 * modulo the stride, rows of @ow positions: enough rows for the
	 * block's taps and the 32-byte reads of its last tile.
	 */
	p->np = 0;
	p->pb = 0;
	p->ph = 0;
	/*
	 * Stride phases: groups of 8 input channels or more (a stem's 3
	 * channels of 7x7 taps pack faster from the tap planes).
	 */
	if (a->stride[0] == 2 && a->stride[1] == 2 && a->dilation[0] == 1 &&
	    a->dilation[1] == 1 && !eng_conv_depthwise(s) && s->cg >= 8 &&
	    s->kh <= 7 && s->kw <= 7)
		p->ph = s->cg * 4 * (span + s->kh) * s->ow + 64;
	/*
	 * Eight channels' inputs as 8 bytes a position, as 16-bit pairs of
	 * neighbours (32 bytes a position), their outputs (8 bytes a
	 * position), their weights (8 32-bit pairs a tap pair).
	 */
	p->dw8 = 0;
	if (eng_conv_depthwise(s) && p->nb == 1 && s->group >= 8 &&
	    a->dilation[0] == 1 && a->dilation[1] == 1 && a->stride[0] <= 2 &&
	    a->stride[1] <= 2 && s->kh <= 7 && s->kw <= 7 &&
	    p->hp * p->wp <= ENG_QDW8_MAX)
		p->dw8 = 40 * p->hp * p->wp + 8 * s->oh * s->ow + 4 * 8 * 7 * 4 +
			 4 * ENG_ALIGN;
	if (a->stride[0] <= 2 && a->stride[1] <= 2 && !eng_conv_depthwise(s) &&
	    (s->kh > 1 || s->kw > 1 || a->stride[0] > 1 || a->stride[1] > 1)) {
		p->np = s->kw * a->stride[0];
		p->pb = eng_max(((p->hp - 1) / a->stride[0] + 1) * s->ow + 16,
				((s->kh - 1) * a->dilation[0] / a->stride[0] + 1) *
				s->ow + p->ncp + 32);
		p->pb = (p->pb + 63) / 64 * 64;
	}
}

/*
 * The first output channel of channel block @mbi (to p->nmb: past the
 * last) of a packed QLINEAR_CONV's group.
 */
static inline __u64 eng_qblock_m(const struct eng_qplan *p, __u64 mbi)
{
	if (p->even)
		return mbi * (p->mp / ENG_QMR) / p->nmb * ENG_QMR;
	return mbi * p->mb;
}

/* Positions of column block @nbi of a packed QLINEAR_CONV (not depthwise). */
static inline __u64 eng_qblock_cnt(const struct eng_qplan *p, __u64 nbi)
{
	return nbi + 1 < p->nb ? p->pos : p->last;
}

/**
 * struct eng_qadd_arg - QLINEAR_ADD's arithmetic (vnpu_eng_quant.c)
 * @ra: a_scale / y_scale
 * @rb: b_scale / y_scale
 * @f: y_zero_point - fma(ra, a_zero_point, rb * b_zero_point)
 * @lo: the output type's low bound
 * @hi: the output type's high bound
 * @dtype: the elements' (%VNPU_DTYPE_U8 or %VNPU_DTYPE_I8)
 * @first: a packed QLINEAR_CONV's fused add only: R is A (else B)
 *
 * y = saturate(cvt(fma(a, ra, fma(b, rb, f)))), cvt rounding half to
 * even and making NaN and values outside 32 bits the low bound.
 */
struct eng_qadd_arg {
	float ra, rb, f, lo, hi;
	__u32 dtype, first;
};

/* Input channels whose tap planes a packed QLINEAR_CONV keeps at once. */
#define ENG_QPLANES	4

/*
 * A part's scratch: what it holds for the next parts (an aligned header
 * of 64 bytes at most), the packed input, four im2col rows, their sums,
 * one tile's sums, the staged input channel, the tap planes of
 * ENG_QPLANES input channels, and for the AVX2 tile the packed input and
 * a tile's weight rows widened to 16 bits, for the AVX2 depthwise rows
 * the staged channel widened (and 16 more), @dw8 and @ph.
 */
static inline __u64 eng_qconv_scratch(const struct eng_qplan *p)
{
	return p->units ? 64 + p->k4 * p->ncp + 4 * p->rs + 4 * p->ncp +
			  4 * ENG_QMR * ENG_QNR + (p->hp + 1) * p->wp +
			  ENG_QPLANES * p->np * p->pb + 2 * p->k4 * p->ncp +
			  2 * ENG_QMR * p->k4 + 2 * ((p->hp + 1) * p->wp + 16) +
			  p->dw8 + p->ph + 11 * ENG_ALIGN : 0;
}

/*
 * ---- QLINEAR_CONV as integer Winograd F(2x2, 3x3) (%VNPU_LAYER_F_QWINO,
 * vnpu_eng_qwino.c) ----
 *
 * V = B^T d B of each 4x4 input tile d (X less its zero point, |V| <=
 * 1020) times U = G' w G'^T (%VNPU_PACK_QWINO_W, |U| <= 1152) point by
 * point, summed over the input channels in pairs (vpmaddwd) with 32-bit
 * wrapping adds; A^T M A is then four times the direct sum S, exactly
 * while |4 S| < 2^31 (VNPU_QWINO_MAX_C), so S = (A^T M A) >> 2.
 *
 * A unit is (image, group, block of tile rows, block of output channels):
 * a block's V (every input channel of its tiles) is computed once per
 * part for its consecutive units, about ENG_QWINO_V bytes of it.
 */
#define ENG_QWINO_PAIR	64		/* bytes of a channel pair's 16 points */
#define ENG_QWINO_V	(512 * 1024)	/* bytes of V a block, at most */
#define ENG_QWINO_TILES	128		/* tiles a block, at most (16 at least) */
#define ENG_QWINO_KB	8		/* output channels summed at once */
#define ENG_QWINO_SLACK	16		/* tiles past a staged row's end read */
#define ENG_QWINO_MIN_C	32		/* channels a group, in and out, to pay */
#define ENG_QWINO_MIN_TILES 32		/* tiles of a map, to pay */

/* %VNPU_PACK_QWINO_W's rows of a group: M/group rounded up to even. */
static inline __u64 eng_qwino_mp(__u64 rows)
{
	return rows + (rows & 1);
}

/*
 * The byte offset of row @m's channel pair @p in a group's (or a block's
 * V, rows its tiles) [@mp rows, @cp pairs] in chunks of VNPU_QWINO_CHUNK
 * pairs.
 */
static inline __u64 eng_qwino_off(__u64 mp, __u64 cp, __u64 m, __u64 p)
{
	__u64 h = p / VNPU_QWINO_CHUNK, n = cp - h * VNPU_QWINO_CHUNK;

	if (n > VNPU_QWINO_CHUNK)
		n = VNPU_QWINO_CHUNK;
	return (h * VNPU_QWINO_CHUNK * mp + m * n + p % VNPU_QWINO_CHUNK) *
	       ENG_QWINO_PAIR;
}

/**
 * struct eng_qwplan - a %VNPU_LAYER_F_QWINO layer's units and scratch
 * @th: tile rows of the output map (2 output rows each)
 * @tw: tiles of a tile row
 * @cp: input channel pairs of a group
 * @mp: output channels of a group, rounded up to even
 * @tbr: tile rows of a block
 * @ntb: blocks of a map
 * @mb: output channels of a unit, a multiple of ENG_QWINO_KB
 * @nmb: units of a block
 * @nt: tiles of a block, at most
 * @sw: int16 elements of a staged row (@tw + 1 + ENG_QWINO_SLACK)
 * @units: the layer's units
 */
struct eng_qwplan {
	__u64 th, tw, cp, mp, tbr, ntb, mb, nmb, nt, sw, units;
};

static inline void eng_qwino_plan(const struct eng_conv_shape *s,
				  struct eng_qwplan *p)
{
	__u64 tile = 0, rt, want;

	p->th = eng_div_up(s->oh, 2);
	p->tw = eng_div_up(s->ow, 2);
	p->cp = eng_div_up(s->cg, 2);
	p->mp = eng_qwino_mp(s->mg);
	/* Blocks of about as many tile rows each, V within ENG_QWINO_V. */
	if (p->tw && p->cp)
		tile = eng_max(eng_min(ENG_QWINO_V / (p->cp * ENG_QWINO_PAIR),
				       ENG_QWINO_TILES), 16) / p->tw;
	p->ntb = eng_div_up(p->th, eng_max(tile, 1));
	p->tbr = eng_div_up(p->th, eng_max(p->ntb, 1));
	p->nt = p->tbr * p->tw;
	p->sw = p->tw + 1 + ENG_QWINO_SLACK;
	/* Channel blocks where a batch's blocks give too few units. */
	rt = eng_div_up(s->mg, ENG_QWINO_KB);
	want = s->n * s->group * p->ntb;
	want = want >= ENG_QMIN_UNITS ? 1 : eng_div_up(ENG_QMIN_UNITS, eng_max(want, 1));
	p->mb = eng_div_up(rt, eng_max(eng_min(want, rt), 1)) * ENG_QWINO_KB;
	p->nmb = eng_div_up(s->mg, p->mb);
	p->units = s->n * s->group * p->ntb * p->nmb;
	if (!s->oh || !s->ow || !s->mg)
		p->units = 0;
}

/*
 * A part's scratch (vnpu_eng_qwino.c): a header, V, both channels' staged
 * rows (even and odd columns apart), two channels'
 * transforms, the partial sums between chunks, the sums of ENG_QWINO_KB
 * channels over the block's positions, a tile table and the tile's sums.
 */
static inline __u64 eng_qwino_scratch(const struct eng_qwplan *p)
{
	__u64 npos = eng_div_up(2 * p->tbr * (2 * p->tw), ENG_QNR) * ENG_QNR + ENG_QNR;

	return p->units ? 64 + p->nt * p->cp * ENG_QWINO_PAIR +
			  2 * 2 * (2 * p->tbr + 2) * p->sw * 2 +
			  2 * 16 * 32 +
			  (p->cp > VNPU_QWINO_CHUNK ?
			   ENG_QWINO_KB * (p->nt + 2) * ENG_QWINO_PAIR : 0) +
			  ENG_QWINO_KB * npos * 4 + 4 * p->nt + 12 * 32 + 9 * ENG_ALIGN : 0;
}

/*
 * ---- A packed QLINEAR_CONV as integer Winograd F(4x4, 3x3) on AVX512-VNNI
 * hosts (vnpu_eng_qwino.c, vnpu_eng_qw4_avx512.c) ----
 *
 * U is read in place after W's rows where the compiler packed it
 * (%VNPU_LAYER_F_QW4, %VNPU_PACK_QW4_W, vnpu_eng_qw4_pays()), else made
 * from W's packed rows by each part (maps of ENG_QW4_MIN_W columns or
 * more: an engine choice on %VNPU_LAYER_F_PACKED layers). G scaled per row by (4, 6,
 * 6, 24, 24, 1) is integral: G' rows (1, 0, 0), (-1, -1, -1), (-1, 1, -1),
 * (1, 2, 4), (1, -2, 4), (0, 0, 1), so U = G' (w - wz) G'^T is within
 * +-12495 and V = B^T d B (d = X less its zero point) within +-25500:
 * int16, summed a channel pair at a time by vpdpwssd (wrapping). The row
 * scales come back in A'^T = A^T diag(24 / scale): A'^T M A' is 576 S
 * modulo 2^32; times 9's inverse modulo 2^32 then >> 6 gives S exactly
 * while |S| < 2^25, so the input channels go in chunks of ENG_QW4_PAIRS
 * pairs (255 * 128 * 9 per channel and position) or half that where a
 * weight zero point is not 0 (255 * 255 * 9), each chunk's S added
 * (wrapping, as the direct sums wrap). The direct path's S, so its bits.
 *
 * A unit is an image's block of tile rows: its tiles (tw a row) go
 * row after row into the 16 lanes of its V and sums, so that a lane
 * idles only past the block's last tile; the tiles past its whole
 * vectors, if ENG_QW4_TAIL or fewer, are summed with output channels in
 * the lanes instead. A block has ENG_QW4_TB_MIN to ENG_QW4_TB_MAX tile
 * rows, the image's last block the rest: the count whose blocks' sums
 * cost the least, then whose first block's do (14 rows of 14 tiles: 7
 * and 7, each 6 vectors and a tail of 2; 8 and 6 cost as much, but 7
 * vectors against 5 and a tail of 4).
 */
#define ENG_QW4_PAIRS	56	/* channel pairs a chunk, W's zero points 0 */
#define ENG_QW4_TB_MIN	4	/* tile rows a unit, from */
#define ENG_QW4_TB_MAX	8	/* ... to */
/* Tiles past a block's whole vectors, at most, summed with channels in the lanes. */
#define ENG_QW4_TAIL	8
#define ENG_QW4_MIN_W	48	/* map columns, at least, U made per run (56x56 here) */

/**
 * struct eng_qw4plan - an F(4x4) QLINEAR_CONV's units and scratch
 * @th: tile rows of the output map (4 output rows each)
 * @tw: tiles of a tile row (4 output columns each)
 * @cp: input channel pairs
 * @mg: output channel groups of 16
 * @nb: blocks of tile rows of an image (block b: tile rows from b * tb)
 * @tb: tile rows of a block, at most
 * @nv: vectors of 16 tiles of a block, at most
 * @units: the layer's units: (image, block, channel group), the group
 *	varying fastest, so that a part's units share their V
 */
struct eng_qw4plan {
	__u64 th, tw, cp, mg, nb, tb, nv, units;
};

/*
 * The sums' cost of a block of @tiles, in 64ths of a vector: its whole
 * vectors, and a tail of ENG_QW4_TAIL tiles or fewer as its share of a
 * vector and a quarter more (else one more vector).
 */
static inline __u64 eng_qw4_cost(__u64 tiles)
{
	__u64 r = tiles % 16;

	return tiles / 16 * 64 + (r > ENG_QW4_TAIL ? 64 : 5 * r);
}

static inline void eng_qw4_plan(const struct eng_conv_shape *s,
				struct eng_qw4plan *p)
{
	__u64 k, cost, first, best = 0, best1 = 0;

	p->th = eng_div_up(s->oh, 4);
	p->tw = eng_div_up(s->ow, 4);
	p->cp = eng_div_up(s->cg, 2);
	p->mg = s->mg / 16;
	/*
	 * The rows of a block: the least cost of an image's blocks, then
	 * of its first (largest) block, so that two parts of even blocks
	 * take as long.
	 */
	p->tb = 0;
	for (k = ENG_QW4_TB_MIN; k <= ENG_QW4_TB_MAX; k++) {
		first = eng_qw4_cost(eng_min(k, p->th) * p->tw);
		cost = p->th / k * eng_qw4_cost(k * p->tw) +
		       eng_qw4_cost(p->th % k * p->tw);
		if (!p->tb || cost < best || (cost == best && first < best1)) {
			p->tb = k;
			best = cost;
			best1 = first;
		}
	}
	p->tb = eng_min(p->tb, p->th);
	p->nb = eng_div_up(p->th, eng_max(p->tb, 1));
	p->nv = eng_div_up(p->tb * p->tw, 16);
	p->units = s->n * p->nb * p->mg;
}

/*
 * Bytes of U (per 16-channel group, point and channel pair, 16 pairs of
 * int16), of V (per point and channel pair, a block's vectors of 16
 * tiles) and of the unit's S ([position / ENG_QNR][16][ENG_QNR]).
 */
static inline __u64 eng_qw4_ubytes(const struct eng_qw4plan *p)
{
	return 36 * p->mg * p->cp * 64;
}

static inline __u64 eng_qw4_vbytes(const struct eng_qw4plan *p)
{
	return 36 * p->cp * p->nv * 64;
}

static inline __u64 eng_qw4_sbytes(const struct eng_qw4plan *p)
{
	return (4 * p->tb * 56 / ENG_QNR + 1) * ENG_QNR * 16 * 4;
}

/*
 * A part's scratch: a header, U (unless W holds it, @held), V, the staged
 * rows of a channel pair (2 x (4 tb + 2) of 64 bytes), M of a tile row
 * (36 x 16 x 16 int32), its S (16 x 16 x 16), the transforms' rows (36 x
 * 64 bytes), the unit's S and W's zero points.
 */
static inline __u64 eng_qw4_scratch(const struct eng_qw4plan *p, int held)
{
	return p->units ? 64 + (held ? 0 : eng_qw4_ubytes(p)) + eng_qw4_vbytes(p) +
			  2 * (4 * p->tb + 2) * 64 + 36 * 1024 + 16 * 1024 +
			  36 * 64 + eng_qw4_sbytes(p) + 64 * p->mg +
			  9 * ENG_ALIGN : 0;
}

/*
 * Whether a QLINEAR_CONV of @a over X @x into @y has F(4x4)'s shape (the
 * check's for %VNPU_LAYER_F_QW4): rank 4, X's rows dense, one group, 3x3,
 * strides and dilations 1, pads 1, 16k output channels, maps of
 * VNPU_QW4_MAX_W columns at most.
 */
static inline int eng_qw4_shape(const struct vnpu_layer_conv *a,
				const struct vnpu_cmd_tensor *x,
				const struct vnpu_cmd_tensor *y)
{
	return x->rank == 4 && y->rank == 4 && a->group == 1 &&
	       x->strides[3] == 1 && a->kernel[0] == 3 && a->kernel[1] == 3 &&
	       a->stride[0] == 1 && a->stride[1] == 1 && a->dilation[0] == 1 &&
	       a->dilation[1] == 1 && a->pad_begin[0] == 1 &&
	       a->pad_begin[1] == 1 && a->pad_end[0] == 1 && a->pad_end[1] == 1 &&
	       y->dims[1] % 16 == 0 && y->dims[1] &&
	       y->dims[3] <= VNPU_QW4_MAX_W &&
	       y->dims[2] == x->dims[2] && y->dims[3] == x->dims[3];
}

/*
 * Whether packed QLINEAR_CONV @l runs as F(4x4) with @features: AVX-512
 * with VNNI and VBMI, eng_qw4_shape(), i8 W not split, no fused add; U
 * in W (%VNPU_LAYER_F_QW4), or made by each part on maps of
 * ENG_QW4_MIN_W columns or more.
 */
static inline int eng_qw4_fits(const struct eng_layer *l, __u32 features)
{
	const __u32 need = VNPU_ENG_F_AVX2_FMA | VNPU_ENG_F_AVX512 |
			   VNPU_ENG_F_VNNI | VNPU_ENG_F_VBMI;
	const struct vnpu_layer_conv *a = l->attrs;
	const struct vnpu_cmd_tensor *x = &l->t[0], *y = &l->t[l->n - 1];

	return (features & need) == need && eng_qw4_shape(a, x, y) &&
	       (a->flags & VNPU_LAYER_F_PACKED) &&
	       !(a->flags & (VNPU_LAYER_F_SPLIT8 | VNPU_LAYER_F_RESIDUAL)) &&
	       l->t[3].dtype == VNPU_DTYPE_I8 && l->t[5].dtype == VNPU_DTYPE_I8 &&
	       ((a->flags & VNPU_LAYER_F_QW4) || y->dims[3] >= ENG_QW4_MIN_W);
}

/*
 * %VNPU_PACK_QW4_W's byte of U: W's %VNPU_PACK_QCONV_W bytes of @mp rows
 * of depth @k4, rounded up to 64.
 */
static inline __u64 eng_qw4_uoff(__u64 mp, __u64 k4)
{
	return eng_div_up(mp * (k4 + 4), 64) * 64;
}

/*
 * The AVX512-VNNI parts (vnpu_eng_qw4_avx512.c), struct eng_qw4 their
 * arguments: U of W's rows @w (@k4 bytes apart) less zero points @wz;
 * V of tile rows [@ty0, @ty1) of image @img; a unit's S of 16 channels
 * from group @g16.
 */
struct eng_qw4 {
	const __s8 *w;		/* W's packed rows */
	const __s32 *wz;	/* per output channel, its W zero point */
	__u64 k4, cg, mg, cp, h, w_in, oh, ow, th;
	__s64 xs1, xs2;		/* X's channel and row strides */
	const __u8 *x;		/* image @img's X */
	__u8 flip, xz;		/* 0x80 for i8 X; X's zero point as read */
	__u64 pairs;		/* channel pairs a chunk */
	__u64 tb, tw, nv;	/* struct eng_qw4plan's */
	const __u32 *u;		/* [mg][36][cp][16] int16 pairs */
	__u32 *v;		/* [36][cp][nv][16] int16 pairs */
	void *tt;		/* 36 vectors: the transforms' rows */
	__u8 *st;		/* staged rows */
	__s32 *mb;		/* [36][16][16] */
	__s32 *sacc;		/* [16][16][16] */
	__s32 *s;		/* [pos / ENG_QNR][16][ENG_QNR] */
};

void vnpu_eng_qw4_u(const struct eng_qw4 *q, __u32 *u);
void vnpu_eng_qw4_v(const struct eng_qw4 *q, __u64 ty0, __u64 ty1);
void vnpu_eng_qw4_sums(const struct eng_qw4 *q, __u64 ty0, __u64 ty1, __u64 g16);

/* Whether @a over X @x can run as %VNPU_LAYER_F_QWINO (the check's). */
static inline int eng_qwino_fits(const struct vnpu_layer_conv *a,
				 const struct vnpu_cmd_tensor *x,
				 const struct vnpu_cmd_tensor *y)
{
	return x->rank == 4 && a->group && x->dims[1] % a->group == 0 &&
	       x->dims[1] / a->group <= VNPU_QWINO_MAX_C &&
	       !(a->group == x->dims[1] && a->group == y->dims[1]) &&
	       x->strides[3] == 1 &&
	       a->kernel[0] == 3 && a->kernel[1] == 3 && a->stride[0] == 1 &&
	       a->stride[1] == 1 && a->dilation[0] == 1 &&
	       a->dilation[1] == 1 && a->pad_begin[0] <= 2 &&
	       a->pad_begin[1] <= 2 && a->pad_end[0] <= 2 && a->pad_end[1] <= 2;
}

/**
 * struct eng_qout - how a tile's sums become 8-bit outputs
 * @fix: per row, added to its sums (bias and zero point terms)
 * @wz: per row, its weight zero point (times @xsum, subtracted)
 * @mult: per row, the requantization multiplier
 * @xsum: per position of the tile, the sum of its inputs; NULL when
 *	every weight zero point is 0
 * @y: where row 0, position 0 goes; rows are @ys bytes apart
 * @ys: bytes between rows of @y
 * @rows: rows to store (at most ENG_QMR)
 * @n: positions to store (at most ENG_QNR)
 * @lo: the output's low bound less its zero point
 * @hi: the output's high bound less its zero point
 * @yz: the output's zero point
 * @r: %VNPU_LAYER_F_RESIDUAL: R's element of row 0, position 0 (rows @rs
 *	bytes apart), else NULL
 * @rs: bytes between rows of @r
 * @res: the fused QLinearAdd's parameters (with @r)
 *
 * Each output is the sum plus @fix less @wz times @xsum (wrapping), as
 * f32 times @mult, clamped to [@lo, @hi], rounded half to even, plus
 * @yz; NaN gives 0. With @r, that value and R's are then added as
 * QLINEAR_ADD adds them (struct eng_qadd_arg).
 */
struct eng_qout {
	__s32 fix[ENG_QMR], wz[ENG_QMR];
	float mult[ENG_QMR];
	const __s32 *xsum;
	__u8 *y;
	__s64 ys;
	__u32 rows, n;
	float lo, hi;
	__s32 yz;
	const __u8 *r;
	__s64 rs;
	const struct eng_qadd_arg *res;
};

/**
 * struct eng_qtile - ENG_QMR x ENG_QNR int8 sums of a packed QLINEAR_CONV
 * @w: ENG_QMR rows of @k4 i8 weights, @k4 bytes apart
 * @b: @k4 / 4 steps of ENG_QNR positions x 4 u8 inputs (depth 4j..4j+3)
 * @acc: returned: row r, position q of the exact sums at r * ENG_QNR + q
 *	(scratch when @out is set)
 * @out: when set, the requantized outputs are stored through it
 * @k4: depth, a multiple of 4
 * @pf: the next tile rows' weights (ENG_QMR rows from @pf, @k4 apart) to
 *	fetch into the cache while this tile runs, or NULL
 * @x1: positions 16 on of @b (those vnpu_eng_qtile_vnni_narrow() takes
 *	one at a time) as rows of @k4 bytes each, or NULL: then it gathers
 *	them from @b, 4 bytes a step
 */
struct eng_qtile {
	const __s8 *w;
	const __u8 *b;
	__s32 *acc;
	const struct eng_qout *out;
	__u64 k4;
	const __s8 *pf;
	const __u8 *x1;
};

/*
 * The AVX512-VNNI tile (vpdpbusd), VNPU_ENG_F_VNNI only; it stores the
 * outputs itself when t->out is set.
 */
void vnpu_eng_qtile_vnni(const struct eng_qtile *t);

/*
 * The VNNI tile's sums of @n positions, 16 < @n <= ENG_QNR, over its
 * first @rows rows: one panel and the rest a position at a time (few
 * past 16: a 7x7 map's last 17); or of @n <= 4 positions, the four
 * positions' inputs of 4 depth steps to a vpdpbusd (a 14x14 map's last
 * 4). With t->out set, it stores the outputs too (as
 * vnpu_eng_qtile_vnni() does); else the sums stay at t->acc.
 */
void vnpu_eng_qtile_vnni_narrow(const struct eng_qtile *t, __u32 rows, __u32 n);

/*
 * Whether the VNNI tile @t can take vnpu_eng_qtile_vnni_run(): a whole
 * tile (ENG_QMR rows, ENG_QNR positions, a depth of 4 * ENG_QMR or more),
 * no weight zero points, and with the fused add every multiplier finite,
 * without it every multiplier at most 0.5 in magnitude.
 */
int vnpu_eng_qtile_vnni_runs(const struct eng_qtile *t);

/**
 * struct eng_qpipe - a rows visit's constants of vnpu_eng_qtile_vnni_run()
 * @lo: the convolution's low bound less its zero point (struct eng_qout)
 * @hi: its high bound less the zero point
 * @yz: its zero point
 * @ra: the fused add's ra (struct eng_qadd_arg)
 * @rb: its rb
 * @f: its f
 * @yz16: the zero point as 16 bits (without the add)
 * @lo8: the low bound plus the zero point as 8 bits (without the add)
 * @mult: the rows' multipliers
 * @fix: the rows' fix
 *
 * The asm of vnpu_eng_qgemm_avx512.c reads them at fixed offsets (asserted
 * there).
 */
struct eng_qpipe {
	float lo, hi, yz, ra, rb, f;
	__s32 yz16, lo8;
	float mult[ENG_QMR];
	__s32 fix[ENG_QMR];
};

/* @c for the rows of @o (vnpu_eng_qtile_vnni_runs() true). */
void vnpu_eng_qtile_vnni_run_init(struct eng_qpipe *c, const struct eng_qout *o);

/*
 * @tiles VNNI tiles from @t (vnpu_eng_qtile_vnni_runs() true), each
 * ENG_QNR positions on from the one before (its inputs, Y and R), their
 * outputs stored as vnpu_eng_qtile_vnni() stores them; t->out and @c
 * hold the rows' parameters.
 */
void vnpu_eng_qtile_vnni_run(const struct eng_qtile *t, const struct eng_qpipe *c,
			     __u64 tiles);

/**
 * struct eng_qadd - a dense run of QLINEAR_ADD (vnpu_eng_qadd_avx512())
 * @a: first operand
 * @b: second operand
 * @y: output
 * @n: elements; the function does n / 16 * 16 of them
 * @ra: a_scale / y_scale
 * @rb: b_scale / y_scale
 * @f: y_zero_point - fma(ra, a_zero_point, rb * b_zero_point)
 * @lo: the output type's low bound
 * @hi: the output type's high bound
 * @s8: the elements are i8 (else u8)
 */
struct eng_qadd {
	const __u8 *a, *b;
	__u8 *y;
	__u64 n;
	float ra, rb, f;
	__s32 lo, hi;
	__u32 s8;
};

/*
 * QLINEAR_ADD's arithmetic 16 elements at a time: the bits of the AVX2
 * rows (vnpu_eng_quant.c); VNPU_ENG_F_VNNI only (its AVX512BW object).
 */
void vnpu_eng_qadd_avx512(const struct eng_qadd *q);

/**
 * struct eng_qlin - a dense per-tensor run of QUANTIZE or DEQUANTIZE
 *	(vnpu_eng_qlin_avx512())
 * @x: input (f32 to quantize, else 8-bit)
 * @y: output (8-bit from quantizing, else f32)
 * @n: elements; the function does n / 16 * 16 of them
 * @s: the scale
 * @lo: the output's low bound less @z (quantizing)
 * @hi: the output's high bound less @z (quantizing)
 * @z: the zero point
 * @quant: quantize (else dequantize)
 * @s8: the 8-bit side is i8 (else u8)
 */
struct eng_qlin {
	const void *x;
	void *y;
	__u64 n;
	float s, lo, hi;
	__s32 z;
	__u32 quant, s8;
};

/*
 * QUANTIZE's and DEQUANTIZE's arithmetic 16 elements at a time: the
 * bits of the AVX2 rows (vnpu_eng_quant.c); VNPU_ENG_F_VNNI only (its
 * AVX512BW object).
 */
void vnpu_eng_qlin_avx512(const struct eng_qlin *q);

#define ENG_QDW_W4	32	/* tap groups of a VNNI depthwise channel, at most */

/**
 * struct eng_qdw - the output rows of an int8 depthwise channel (VNNI)
 * @row: the staged row (with padding, flipped by @flip) of its first
 *	output row's first tap row
 * @rs: bytes between its tap rows
 * @rstep: bytes between the staged rows of consecutive output rows
 * @y: its outputs, @ow to a row, rows one after the other
 * @w4: per tap row, its taps four to a group (the last group padded with
 *	0), @kh times (@kw + 3) / 4 groups
 * @kh: tap rows
 * @kw: taps per row (dilation 1)
 * @sw: stride along the row: 1 or 2
 * @ow: outputs per row
 * @rows: output rows
 * @fix: the bias less the input zero point times the sum of the weights
 * @yz: the output's zero point
 * @mult: the requantization multiplier
 * @lo: the output's low bound less @yz
 * @hi: the output's high bound less @yz
 * @flip: xor of each input byte (0x80: i8 as u8 + 128)
 */
struct eng_qdw {
	const __u8 *row;
	__u64 rs, rstep;
	__u8 *y;
	__s32 w4[ENG_QDW_W4];
	__u32 kh, kw, sw, ow, rows;
	__s32 fix, yz;
	float mult, lo, hi;
	__u8 flip;
};

/*
 * A depthwise channel with vpdpbusd: four taps of 16 positions at a
 * time, the 16 positions of one row, or of two rows of at most 8 or four
 * of at most 4 outputs (a 7x7 map: 4 vectors, not 7); weight zero point
 * 0 only; VNPU_ENG_F_VNNI only. Reads up to 40 bytes past a row's last
 * tap (ENG_QSLACK), no staged row past the channel's last.
 */
void vnpu_eng_qdw_vnni(const struct eng_qdw *d);

/* Taps of a convolution vnpu_eng_qpack_vnni() packs, at most. */
#define ENG_QPACK_TAPS	49

/**
 * struct eng_qpack - a column block of a packed QLINEAR_CONV of stride 1
 *	whose output rows are as wide as its input's, packed from X itself,
 *	or of stride 2 packed from X's stride phases (rows as wide as the
 *	output's)
 * @x: the block's first position in channel 0 of the group's input
 *	(channels @cs bytes apart, each a dense plane: a position p of the
 *	block and tap t read @x + p + @toff[t])
 * @cs: bytes between input channels
 * @toff: per tap (row-major), its input's offset from the position's
 * @rowm: per tap row and group of 64 positions, the positions whose tap
 *	row is inside the input (and before the block's end)
 * @colm: per tap column and group of 64 positions, the positions whose tap
 *	column is inside the input
 * @b: the packed block: per tile of ENG_QNR positions, @k4 / 4 steps of
 *	ENG_QNR positions x 4 bytes, each byte xor @flip; taps outside the
 *	input read @pad (before the flip), depths past @k read 0
 * @k: depth (channels x taps)
 * @k4: @k rounded up to 4
 * @kh: taps per column
 * @kw: taps per row
 * @ncp: positions of the block, a multiple of ENG_QNR
 * @pad: the input's zero point as a byte of X
 * @flip: xor of each input byte (0x80: i8 as u8 + 128)
 */
struct eng_qpack {
	const __u8 *x;
	__s64 cs;
	__s64 toff[ENG_QPACK_TAPS];
	const __u64 *rowm, *colm;
	__u8 *b;
	__u64 k, k4, ncp;
	__u32 kh, kw;
	__u8 pad, flip;
};

/*
 * The block of @p by masked 64-byte loads of X (lanes of taps outside
 * the input are not read), interleaved four depths at a time:
 * VNPU_ENG_F_VNNI only (its AVX512BW object).
 */
void vnpu_eng_qpack_vnni(const struct eng_qpack *p);

/*
 * Convolutions with strides up to ENG_WIN_STRIDE read B from a zero-padded
 * copy of the input split into stride phases (see vnpu_eng_gemm.c); larger
 * strides pack B by im2col.
 */
#define ENG_WIN_STRIDE	4

static inline int eng_conv_windowed(const struct vnpu_layer_conv *a)
{
	return a->stride[0] <= ENG_WIN_STRIDE && a->stride[1] <= ENG_WIN_STRIDE;
}

/* Width of the padded input, and of one column phase of it. */
static inline __u64 eng_conv_wp(const struct eng_conv_shape *s,
				const struct vnpu_layer_conv *a)
{
	return s->w + a->pad_begin[1] + a->pad_end[1];
}

/*
 * With stride 1 a row's trailing padding is the next row's leading one:
 * rows of W + max(pads) (at least OW) suffice, since the right-most taps
 * of the last outputs then read zeros at the start of the next row, so a
 * 3x3 convolution with pads of 1 computes 1 spare column per row, not 2.
 */
static inline __u64 eng_conv_wq(const struct eng_conv_shape *s,
				const struct vnpu_layer_conv *a)
{
	__u64 pad = a->pad_begin[1] > a->pad_end[1] ? a->pad_begin[1] :
		    a->pad_end[1];

	if (a->stride[1] == 1)
		return s->w + pad > s->ow ? s->w + pad : s->ow;
	return eng_div_up(eng_conv_wp(s, a), a->stride[1]);
}

/* GEMM columns of a convolution: padded columns when windowed. */
static inline __u64 eng_conv_cols(const struct eng_conv_shape *s,
				  const struct vnpu_layer_conv *a)
{
	return s->oh * (eng_conv_windowed(a) ? eng_conv_wq(s, a) : s->ow);
}

/*
 * Rows of one phase plane a unit of @cols padded columns (at most ENG_NC)
 * needs at most.
 */
static inline __u64 eng_conv_win_rows(__u64 cols, __u64 wq, __u64 kh,
				      __u32 dil, __u32 stride)
{
	return (cols - 1) / (wq ? wq : 1) + 2 + (kh - 1) * dil / stride;
}

/* Floats of a convolution's input window: 1 GiB of scratch per tile. */
#define ENG_MAX_WINDOW	(1ull << 28)

/*
 * Whether a windowed CONV's window over dense f32 rows slides over a
 * part's units of @cols padded columns (vnpu_eng_gemm.c), each unit
 * copying only the rows the previous ones have not: with stride 1, and
 * with strides where a unit's window holds at least twice the rows it
 * moves on (the 7x7 stem of stride 2: a unit of 256 columns of 115 would
 * otherwise copy 7 rows of each plane for 2.2 rows of outputs). Other
 * strided windows are a unit's own, which the units of its other output
 * channels share: ResNet-50's 3x3 of stride 2 onto 28x28 (11 rows a unit
 * for 8.8) does not slide, as its window of twice the rows would no
 * longer stay in L2.
 */
static inline int eng_conv_slides(const struct eng_conv_shape *s,
				  const struct vnpu_layer_conv *a, __u64 cols)
{
	__u64 wq = eng_conv_wq(s, a);

	if (a->stride[0] == 1 && a->stride[1] == 1)
		return 1;
	return eng_conv_win_rows(cols, wq, s->kh, a->dilation[0],
				 a->stride[0]) >=
	       2 * eng_div_up(cols, wq ? wq : 1);
}

/*
 * Rows of each channel's planes in the window scratch for units of @cols
 * padded columns: a sliding window (eng_conv_slides()) has room for twice
 * a unit's rows when that stays within ENG_MAX_WINDOW (the validator
 * checks one unit's rows).
 */
static inline __u64 eng_conv_win_cap(const struct eng_conv_shape *s,
				     const struct vnpu_layer_conv *a,
				     __u64 cols)
{
	__u64 wq = eng_conv_wq(s, a);
	__u64 rows = eng_conv_win_rows(cols, wq, s->kh, a->dilation[0],
				       a->stride[0]);

	if (!eng_conv_slides(s, a, cols) ||
	    s->cg * 2 * rows * (a->stride[0] * a->stride[1] * wq + ENG_NC) >=
	    ENG_MAX_WINDOW)
		return rows;
	return 2 * rows;
}

/*
 * Whether the tiles take a CONV on a host of @features by blocks of
 * columns, each all the output channels of its columns one after another
 * (run_conv_gemm()), in even blocks: on every FMA path. Then each of two
 * tiles reads the input of its own columns, which the same tile mostly
 * wrote in the layer before, not all of it: where the host put the two
 * vCPUs on different CCXs or CCDs (a cache line from one to the other
 * took 300-450 ns against 50-100), blocks of output channels, each of all
 * the columns, read half their input from the other CPU's cache
 * (oww_embedding on AVX2 Zen 3: 1.10 ms on 2 CPUs against 0.78). Inputs
 * over 256 KiB kept their blocks of channels there, whose weights a tile
 * reads once for all its columns; on AVX-512 Zen 4 they too ran faster by
 * columns, B/A of 2-CPU medians apart / near: resnet50 0.958 / 0.998,
 * mobilenetv3_large 0.929 / 0.984, yolov8n 0.974 / 0.996.
 */
static inline int eng_conv_by_cols(__u32 features)
{
	return !eng_base_path(features);
}

/* Units a small CONV is split into at least, where its shape allows. */
#define ENG_CONV_MIN_UNITS	8
/* Below this many units a CONV of an odd count splits its units again. */
#define ENG_CONV_ODD_UNITS	12
/*
 * Columns from which such a CONV taken by columns splits its columns
 * again rather than its rows: its tiles then keep halves of the map.
 */
#define ENG_CONV_POS_COLS	(4 * ENG_NR)

/*
 * A CONV unit: as many output channels of a group as the budget allows for
 * ENG_NC columns, at most one block (shallow layers still split into
 * enough units); on the baseline path the columns then shrink to the
 * budget too (the FMA paths keep ENG_NC). A layer of fewer than
 * ENG_CONV_MIN_UNITS units (a 1x1 convolution on a 7x7 map) halves its
 * rows, then its columns, down to whole 12x32 tiles of the AVX-512
 * kernels, so that every tile gets work. An odd count of units below
 * ENG_CONV_ODD_UNITS then halves the rows (of 48 or more) or else the
 * columns once: two tiles take the units in halves, and one of 11 ran a
 * unit after the other. Taken by columns (eng_conv_by_cols()), a map of
 * ENG_CONV_POS_COLS columns or more halves its columns first: its two
 * tiles then keep the halves of the map that the layers before and after
 * it keep, where halving the rows cut it by output channels, each tile
 * reading all of its input, half of it from the other CPU's cache
 * (ResNet-50's 1x1s onto 14x14 of 1024 outputs: 11 blocks of 96 rows by
 * 2 of columns, not 22 of 48 rows). The order of each sum does not
 * depend on the split.
 */
static inline void eng_conv_unit(const struct eng_conv_shape *s,
				 const struct vnpu_layer_conv *a,
				 __u32 features, struct eng_unit *u)
{
	__u64 macs = eng_unit_macs(features), k = s->cg * s->kh * s->kw;
	__u64 all = eng_div_up(s->mg ? s->mg : 1, ENG_MR) * ENG_MR;
	__u64 outer = s->n * s->group, qn = eng_conv_cols(s, a), units;
	int halve_cols;

	u->rows = eng_unit_side(macs, ENG_NC * k, ENG_MR, ENG_MR,
				eng_min(ENG_MC, all));
	u->cols = ENG_NC;
	if (eng_base_path(features))
		u->cols = eng_unit_side(macs, u->rows * k, ENG_NR, ENG_NR,
					ENG_NC);
	while (outer * eng_div_up(s->mg, u->rows) * eng_div_up(qn, u->cols) <
	       ENG_CONV_MIN_UNITS) {
		if (u->rows > 2 * ENG_MR)
			u->rows = eng_div_up(u->rows / 2, 2 * ENG_MR) * 2 * ENG_MR;
		else if (u->cols > 2 * ENG_NR && u->cols / 2 < qn)
			u->cols = eng_div_up(u->cols / 2, 2 * ENG_NR) * 2 * ENG_NR;
		else
			break;
	}
	units = outer * eng_div_up(s->mg, u->rows) * eng_div_up(qn, u->cols);
	if (units > 1 && units % 2 && units < ENG_CONV_ODD_UNITS) {
		halve_cols = u->cols > 2 * ENG_NR && u->cols / 2 < qn;
		if (u->rows >= 8 * ENG_MR &&
		    !(halve_cols && eng_conv_by_cols(features) &&
		      qn >= ENG_CONV_POS_COLS))
			u->rows = eng_div_up(u->rows / 2, 2 * ENG_MR) * 2 * ENG_MR;
		else if (halve_cols)
			u->cols = eng_div_up(u->cols / 2, 2 * ENG_NR) * 2 * ENG_NR;
	}
	if (eng_conv_by_cols(features))
		u->cols = eng_even_side(qn, u->cols, 2 * ENG_NR);
}

/*
 * Output channels of a panel of a CONV with them on the lanes
 * (VNPU_PACK_CONV_LANES) and of its tiles.
 */
#define ENG_LANES_NR	VNPU_PACK_LANES_NR
/* Output channels of one unit of such a CONV at most. */
#define ENG_LANES_MB	(4 * ENG_LANES_NR)
/* Depth of a slice of the AVX-512 lanes tiles at most. */
#define ENG_LANES_KC	1152
/* Positions of one such tile at most (a row of a 7x7 map). */
#define ENG_LANES_ROWS	7

/* Whether CONV @a's packed weights hold output channels on the lanes. */
static inline int eng_conv_lanes(const struct vnpu_layer_conv *a)
{
	return !!(a->flags & VNPU_LAYER_F_LANES);
}

/*
 * A unit of a CONV with its output channels on the lanes
 * (VNPU_LAYER_F_LANES): ENG_LANES_MB output channels (@u->rows; two
 * tiles share a layer of 256 or more evenly) of as many positions
 * (@u->cols) as the budget allows, whole tiles of ENG_LANES_ROWS, at
 * least one tile. The order of each sum does not depend on the split.
 */
static inline void eng_lanes_unit(const struct eng_conv_shape *s,
				  __u32 features, struct eng_unit *u)
{
	__u64 k = s->cg * s->kh * s->kw, np = s->oh * s->ow;
	__u64 cols = eng_unit_macs(features) / (ENG_LANES_MB * (k ? k : 1));

	cols = cols / ENG_LANES_ROWS * ENG_LANES_ROWS;
	u->rows = ENG_LANES_MB;
	u->cols = eng_min(eng_max(cols, ENG_LANES_ROWS), np ? np : 1);
}

/* Positions of the largest map a lanes CONV pays on (7x7). */
#define ENG_LANES_MAX_POS	49
/* Positions of the narrowest row of such a map (shorter tiles lose). */
#define ENG_LANES_MIN_OW	5

/* Output positions of the largest map a lanes 3x3 of stride 2 pays on. */
#define ENG_LANES_MAX_POS_S2	196

/*
 * Whether CONV @a of shape @s runs faster with its output channels on the
 * lanes than as the GEMM of VNPU_PACK_CONV_W or as Winograd, on a host of
 * @features, with the AVX-512 tiles (the AVX2 ones take 1.6-1.8 times as
 * long as the GEMM's): a 1x1 without padding or a 3x3 with pads of at
 * most 1, of stride 1, over a map of at most 49 positions; a 3x3 of
 * stride 2, pads of at most 1, over at most 196 (onto 7x7: 512->512
 * 1.16 ms against the GEMM's 1.50, 128->128 26% faster).
 */
static inline int eng_lanes_pays(const struct vnpu_layer_conv *a,
				 const struct eng_conv_shape *s,
				 __u32 features)
{
	__u32 k = a->kernel[0], pad = k == 3, st = a->stride[0];
	__u64 np = s->oh * s->ow;

	return (features & VNPU_ENG_F_AVX2_FMA) &&
	       (features & VNPU_ENG_F_AVX512) &&
	       (k == 1 || k == 3) && a->kernel[1] == k &&
	       a->stride[1] == st &&
	       a->pad_begin[0] <= pad && a->pad_begin[1] <= pad &&
	       a->pad_end[0] <= pad && a->pad_end[1] <= pad &&
	       s->ow >= ENG_LANES_MIN_OW &&
	       ((st == 1 && np <= ENG_LANES_MAX_POS) ||
		(st == 2 && k == 3 && np <= ENG_LANES_MAX_POS_S2));
}

/*
 * Whether lanes CONV @a reads a copy of its input laid out for it: with
 * padding (zeros around) or a stride (each row's columns by phase).
 */
static inline int eng_lanes_copied(const struct vnpu_layer_conv *a)
{
	return a->pad_begin[0] || a->pad_begin[1] || a->pad_end[0] ||
	       a->pad_end[1] || a->stride[0] != 1 || a->stride[1] != 1;
}

/*
 * Floats of a phase of a row of a lanes CONV's copy of its input: the
 * padded row's columns j with j % stride[1] == the phase, in order; a
 * row is stride[1] phases.
 */
static inline __u64 eng_lanes_phase(__u64 w, const struct vnpu_layer_conv *a)
{
	return eng_div_up(w + a->pad_begin[1] + a->pad_end[1], a->stride[1]);
}

/* Floats of a lanes CONV's copy of one group's input planes. */
static inline __u64 eng_lanes_window(const struct eng_conv_shape *s,
				     const struct vnpu_layer_conv *a)
{
	return s->cg * (s->h + a->pad_begin[0] + a->pad_end[0]) *
	       eng_lanes_phase(s->w, a) * a->stride[1];
}

/*
 * Floats of a lanes CONV's scratch: the taps' offsets, the sums, then
 * with padding or strides what the copy holds (struct lanes_held) and a
 * copy of a group's input planes.
 */
static inline __u64 eng_lanes_scratch(const struct eng_conv_shape *s,
				      const struct vnpu_layer_conv *a,
				      const struct eng_unit *u)
{
	__u64 n = s->cg * s->kh * s->kw + ENG_ALIGN / 4 + u->rows * u->cols +
		  ENG_ALIGN / 4 + u->cols * ENG_LANES_NR;

	if (eng_lanes_copied(a))
		n += 2 * ENG_ALIGN / 4 + eng_lanes_window(s, a);
	return n;
}

/*
 * Floats past the window's last plane that units of @cols columns may read
 * (the last panel's columns past the unit's, and the taps' reach): zeroed.
 */
static inline __u64 eng_conv_slack(const struct eng_conv_shape *s,
				   const struct vnpu_layer_conv *a, __u64 cols)
{
	return cols + eng_conv_wq(s, a) + s->kw * a->dilation[1] + ENG_NR;
}

/*
 * Floats at the start of a windowed convolution's B scratch that say what
 * its window holds, for the command's next parts (struct vnpu_eng_ctx's
 * @epoch).
 */
#define ENG_CONV_HELD	(2 * ENG_ALIGN / 4)

/*
 * Floats of the B scratch for units of @cols columns: what the window
 * holds, the offset table and the window, or an im2col slice. A unit's
 * own window of strides starts its planes on lines (vnpu_eng_gemm.c):
 * a line more for each, and one for the first's lead.
 */
static inline __u64 eng_conv_bbuf(const struct eng_conv_shape *s,
				  const struct vnpu_layer_conv *a, __u64 cols)
{
	__u64 wq = eng_conv_wq(s, a), rows, np = a->stride[0] * a->stride[1];

	if (!eng_conv_windowed(a))
		return ENG_KC * cols;
	rows = eng_conv_win_cap(s, a, cols);
	return ENG_CONV_HELD + s->cg * s->kh * s->kw + ENG_ALIGN / 4 +
	       s->cg * np * (rows * wq + (np > 1 ? ENG_NR : 0)) + ENG_NR +
	       eng_conv_slack(s, a, cols);
}

/*
 * Whether a CONV of packed bf16 weights @w runs the AVX512-BF16 kernels
 * with @features: only over more than one panel (ENG_MR) of output
 * channels a group. A single panel's tiles sum each column's rounded pairs
 * for at most ENG_MR rows, so rounding the columns costs about what the
 * pair products save, and the widening path (f32 activations) is faster
 * (with 8 to 12 channels both take about the same time). The shapes
 * decide, so every split and both devices take the same path.
 */
static inline int eng_conv_bf16_native(const struct eng_conv_shape *s,
				       const struct vnpu_layer_conv *a,
				       const struct vnpu_cmd_tensor *w,
				       __u32 features)
{
	return eng_bf16_path(features) && (a->flags & VNPU_LAYER_F_PACKED) &&
	       w->dtype == VNPU_DTYPE_BF16 && s->mg > ENG_MR;
}

/* The most words a bf16 convolution's B cache takes (3 MiB). */
#define ENG_CONV_BF16_CACHE_MAX	(3ull << 18)

/*
 * Words of a part's B cache for a convolution of bf16 pairs (@w) over a
 * window, units of @cols columns: the unit's input rounded to bf16 pairs
 * for its whole depth, which the units of its other output channels read
 * instead of rounding it again (vnpu_eng_slice_bf16()); 0 for none: not
 * the AVX512-BF16 path, or over ENG_CONV_BF16_CACHE_MAX.
 */
static inline __u64 eng_conv_bf16_cache(const struct eng_conv_shape *s,
					const struct vnpu_layer_conv *a,
					const struct vnpu_cmd_tensor *w,
					__u32 features, __u64 cols)
{
	__u64 words = eng_div_up(cols, ENG_NR) * ENG_NR *
		      eng_div_up(s->cg * s->kh * s->kw, 2);

	if (!eng_conv_bf16_native(s, a, w, features) ||
	    !eng_conv_windowed(a) || words > ENG_CONV_BF16_CACHE_MAX)
		return 0;
	return words;
}

/*
 * A depthwise convolution with strides up to ENG_WIN_STRIDE runs over
 * windows (vnpu_eng_dw.c): a unit is a block of output rows of one
 * channel, and copies the input rows they read into the part's scratch,
 * zero-padded and split into stride phases, each phase a plane of rows
 * eng_dw_wq() floats long; the block's outputs are then padded columns
 * q = oh * Wq + ow of it, ENG_DW_LANES to a vector at most (whole
 * vectors: up to ENG_DW_LANES - 1 sums past the last). Larger strides,
 * and windows over ENG_DW_MAX_WIN floats, take the direct row kernel.
 */
#define ENG_DW_LANES	16
#define ENG_DW_MAX_WIN	(1ull << 22)

/* Reach of the taps past an output, in phase rows and in columns. */
static inline __u64 eng_dw_reach_r(const struct eng_conv_shape *s,
				   const struct vnpu_layer_conv *a)
{
	return (s->kh - 1) * a->dilation[0] / a->stride[0];
}

static inline __u64 eng_dw_reach_c(const struct eng_conv_shape *s,
				   const struct vnpu_layer_conv *a)
{
	return (s->kw - 1) * a->dilation[1] / a->stride[1];
}

/*
 * Columns of a window row: a padded input row's phase, at least; with
 * stride 1, rows of W + max(pads) (eng_conv_wq()), whose last outputs'
 * taps read the next row's leading zeros.
 */
static inline __u64 eng_dw_wq(const struct eng_conv_shape *s,
			      const struct vnpu_layer_conv *a)
{
	if (a->stride[1] == 1)
		return eng_conv_wq(s, a);
	return eng_max(eng_div_up(eng_conv_wp(s, a), a->stride[1]),
		       s->ow + eng_dw_reach_c(s, a));
}

/*
 * Floats of a window for @rows output rows: phase planes of the rows the
 * taps read and one more (eng_dw_wq()), and what vectors read past them.
 */
static inline __u64 eng_dw_win_of(const struct eng_conv_shape *s,
				  const struct vnpu_layer_conv *a, __u64 rows)
{
	return (__u64)a->stride[0] * a->stride[1] *
	       (rows + eng_dw_reach_r(s, a) + 1) * eng_dw_wq(s, a) +
	       eng_dw_wq(s, a) + ENG_DW_LANES;
}

static inline int eng_dw_windows(const struct eng_conv_shape *s,
				 const struct vnpu_layer_conv *a)
{
	return eng_conv_depthwise(s) && eng_conv_windowed(a) &&
	       eng_dw_win_of(s, a, 1) <= ENG_DW_MAX_WIN;
}

/*
 * A depthwise convolution on a small map (MobileNetV3's 14x14 and 7x7
 * ones, hundreds of channels) runs ENG_DWL_LANES channels at a time, a
 * channel in each lane (vnpu_eng_dw.c): a unit gathers their padded
 * inputs into a window of pixels of ENG_DWL_LANES floats, so every tap of
 * every output is one vector FMA, and the per-channel windows and
 * epilogues of eng_dw_windows() (most of a 7x7 channel's time) are paid
 * once per ENG_DWL_LANES channels. f32 in and out, dense output rows, no
 * residual; windows of at most ENG_DWL_MAX_WIN floats (512 KiB: a 3x3
 * layer on 112x112 in one unit; its aligned taps make up for the window
 * and the sums living in L2).
 */
#define ENG_DWL_LANES	8
#define ENG_DWL_MAX_WIN	131072

/* Rows and columns of the padded window the taps of every output read. */
static inline __u64 eng_dwl_hp(const struct eng_conv_shape *s,
			       const struct vnpu_layer_conv *a)
{
	return (s->oh - 1) * a->stride[0] + (s->kh - 1) * a->dilation[0] + 1;
}

static inline __u64 eng_dwl_wp(const struct eng_conv_shape *s,
			       const struct vnpu_layer_conv *a)
{
	return (s->ow - 1) * a->stride[1] + (s->kw - 1) * a->dilation[1] + 1;
}

static inline int eng_dw_lanes(const struct eng_layer *l,
			       const struct eng_conv_shape *s)
{
	const struct vnpu_layer_conv *a = l->attrs;
	const struct vnpu_cmd_tensor *x = &l->t[0], *y = &l->t[l->n - 1];

	return eng_conv_depthwise(s) && x->rank == 4 && s->oh && s->ow &&
	       x->dtype == VNPU_DTYPE_F32 && y->dtype == VNPU_DTYPE_F32 &&
	       !(a->flags & VNPU_LAYER_F_RESIDUAL) && y->strides[3] == 1 &&
	       y->strides[2] == (__s64)s->ow && s->kh * s->kw <= 64 &&
	       s->oh * s->ow <= ENG_DWL_MAX_WIN / ENG_DWL_LANES &&
	       eng_dwl_hp(s, a) * eng_dwl_wp(s, a) <=
	       ENG_DWL_MAX_WIN / ENG_DWL_LANES;
}

/* Floats of a lanes unit's scratch: the weights, the window, the sums. */
static inline __u64 eng_dwl_scratch(const struct eng_conv_shape *s,
				    const struct vnpu_layer_conv *a)
{
	return 4 * (ENG_ALIGN / 4) + ENG_DWL_LANES *
	       (s->kh * s->kw + eng_dwl_hp(s, a) * eng_dwl_wp(s, a) +
		s->oh * s->ow);
}

/*
 * Multiply-adds of padded columns of a windowed depthwise unit at most,
 * unless one output reads more: 2^15 on the FMA paths, 2^12 (as many as
 * ENG_ELEM_UNIT reads) on the baseline.
 */
static inline __u64 eng_dw_unit_macs(__u32 features)
{
	return eng_base_path(features) ? 1ull << 12 : 1ull << 15;
}

/*
 * Output rows of a unit: as many as its budget takes, one at least, a
 * window of ENG_DW_MAX_WIN floats at most.
 */
static inline __u64 eng_dw_unit_rows(const struct eng_conv_shape *s,
				     const struct vnpu_layer_conv *a,
				     __u32 features)
{
	__u64 rows = eng_dw_unit_macs(features) /
		     (eng_dw_wq(s, a) * s->kh * s->kw);

	rows = rows < 1 ? 1 : rows > s->oh ? s->oh : rows;
	while (rows > 1 && eng_dw_win_of(s, a, rows) > ENG_DW_MAX_WIN)
		rows /= 2;
	return rows;
}

/*
 * Outputs of a unit's row: the row, or when one row is over the budget,
 * blocks of it in whole vectors.
 */
static inline __u64 eng_dw_unit_cols(const struct eng_conv_shape *s,
				     const struct vnpu_layer_conv *a,
				     __u32 features)
{
	__u64 cols = eng_dw_unit_macs(features) / (s->kh * s->kw) /
		     ENG_DW_LANES * ENG_DW_LANES;

	if (eng_dw_unit_rows(s, a, features) > 1)
		return s->ow;
	cols = cols < ENG_DW_LANES ? ENG_DW_LANES : cols;
	return cols < s->ow ? cols : s->ow;
}

static inline __u64 eng_dw_win(const struct eng_conv_shape *s,
			       const struct vnpu_layer_conv *a,
			       __u32 features)
{
	return eng_dw_win_of(s, a, eng_dw_unit_rows(s, a, features));
}

static inline __u64 eng_dw_units(const struct eng_conv_shape *s,
				 const struct vnpu_layer_conv *a,
				 __u32 features)
{
	return s->n * s->m * eng_div_up(s->oh, eng_dw_unit_rows(s, a, features)) *
	       eng_div_up(s->ow, eng_dw_unit_cols(s, a, features));
}

/*
 * Output rows of a lanes unit (eng_dw_lanes()): every row on the FMA
 * paths, a unit being a block of ENG_DWL_LANES channels; on the baseline
 * (about 1 GFLOP/s) as many as take a lane eng_dw_unit_macs(), one at
 * least, as a windowed unit takes its channel: a whole block of a 3x3
 * layer on 112x112 was a 2.2 ms part there.
 */
static inline __u64 eng_dwl_unit_rows(const struct eng_conv_shape *s,
				      __u32 features)
{
	__u64 rows = eng_dw_unit_macs(features) /
		     (s->ow * s->kh * s->kw);

	if (!eng_base_path(features))
		return s->oh;
	return rows < 1 ? 1 : rows > s->oh ? s->oh : rows;
}

/* Units of a lanes layer: blocks of channels by blocks of output rows. */
static inline __u64 eng_dwl_units(const struct eng_conv_shape *s,
				  __u32 features)
{
	return s->n * eng_div_up(s->m, ENG_DWL_LANES) *
	       eng_div_up(s->oh, eng_dwl_unit_rows(s, features));
}

/*
 * Floats of a windowed depthwise part's scratch, each piece aligned: the
 * taps' row pointers (64 bits each) and column offsets, the channel's
 * weights, the window, the unit's sums.
 */
static inline __u64 eng_dw_scratch(const struct eng_conv_shape *s,
				   const struct vnpu_layer_conv *a,
				   __u32 features)
{
	return 6 * (ENG_ALIGN / 4) + 2 * s->kh + s->kw + s->kh * s->kw +
	       eng_dw_win(s, a, features) +
	       eng_dw_unit_rows(s, a, features) * eng_dw_wq(s, a) +
	       ENG_DW_LANES;
}

/**
 * struct eng_dw_row - a depthwise unit's run of sums
 * @in: where tap row kh reads the window, for padded column 0
 * @tap: the offset of tap column kw from there
 * @w: the channel's weights, kh * kw of them
 * @acc: the sums: @n, then up to ENG_DW_LANES - 1 more
 * @kh: tap rows
 * @kw: tap columns
 * @q0: the run's first padded column
 * @n: outputs
 */
struct eng_dw_row {
	const float *const *in;
	const __u32 *tap;
	const float *w;
	float *acc;
	__u64 kh, kw, q0, n;
};

/*
 * The row kernel in 16 lanes (vnpu_eng_dw_avx512.c; VNPU_ENG_F_AVX512
 * only): the 8-lane kernel's bits.
 */
void vnpu_eng_dw_row_avx512(const struct eng_dw_row *t);

/**
 * struct eng_dwl_row - a lanes unit's output row at stride 1
 * @x: the window at the row's first pixel's first tap
 * @w: the taps' weights, ENG_DWL_LANES each, in (kh, kw) order
 * @acc: the row's sums, ENG_DWL_LANES a pixel
 * @n: pixels of the row (two at least)
 * @kh: tap rows
 * @kw: tap columns
 * @dk: floats from a tap to the next in its row
 * @dr: floats from a tap row to the next
 */
struct eng_dwl_row {
	const float *x, *w;
	float *acc;
	__u64 n, kh, kw, dk, dr;
};

void vnpu_eng_dwl_row_avx512(const struct eng_dwl_row *t);

/*
 * LOOKUP of @n dense bytes @x through the 256-entry table @t into @y
 * (vnpu_eng_lookup_vbmi.c; VNPU_ENG_F_AVX512 and VNPU_ENG_F_VBMI only).
 */
void vnpu_eng_lookup_vbmi(const __u8 *t, const __u8 *x, __u8 *y, __u64 n);

/*
 * Winograd F(4x4, 3x3) (vnpu_eng_wino.c): a stride-1 3x3 convolution as
 * 36 GEMMs of depth C over 6x6 transforms of 4x4 output tiles, for a CONV
 * of %VNPU_LAYER_F_WINO, whose weights the compiler transformed once
 * (%VNPU_PACK_WINO_W, vnpu_eng_wino_pack()). The compiler sets it where
 * eng_wino_pays(): f32 X and W, 2-D (eng_wino_fits(), which the validator
 * checks), channels per group in [ENG_WINO_MIN_C, VNPU_WINO_MAX_C], at
 * least ENG_WINO_MIN_M outputs per group and ENG_WINO_MIN_TILES tiles
 * over the batch's images (measured; engine.rst, "Winograd").
 */
#define ENG_WINO_TILE		4	/* outputs of a tile side */
#define ENG_WINO_XI		36	/* points of a 6x6 transform */
#define ENG_WINO_MIN_C		32
#define ENG_WINO_MIN_M		32
#define ENG_WINO_MIN_TILES	16
#define ENG_WINO_TILES		64	/* most tiles of a unit (FMA paths) */
#define ENG_WINO_BUF		(16 * ENG_NR)	/* floats a point per chunk */
#define ENG_WINO_VPAD		16	/* floats past each point's f32 V */

/*
 * Winograd F(2x2, 3x3) (vnpu_eng_wino2.c): the bf16 hint's stride-1 3x3
 * convolutions, %VNPU_LAYER_F_WINO2 over bf16 %VNPU_PACK_WINO2_W (or
 * f32, vnpu_eng_wino2_pays()): 16
 * GEMMs over 4x4 transforms of 2x2 output tiles, in units as F(4x4,
 * 3x3)'s (the shape's wh and ww say which). F(4x4, 3x3) amplifies bf16's
 * rounding of U and V about ten times (engine.rst, "Winograd in bf16").
 * F(4x2, 3x3) (%VNPU_LAYER_F_WINO42 over %VNPU_PACK_WINO42_W, the same
 * file): 24 GEMMs over 6x4 transforms of tiles of 4 output rows by 2
 * columns, F(4, 3) down the columns on the points 0, +-1, 1/2, -2 and
 * infinity, about twice F(2x2, 3x3)'s rounding.
 */
#define ENG_WINO2_TILE		2
#define ENG_WINO2_XI		16
#define ENG_WINO42_XI		24

/*
 * F(4, 3)'s B^T (points 0, 1, -1, 1/2, -2, infinity; rows (2, -3, -4, 3,
 * 2, 0), (0, -2, 1, 5, 2, 0), (0, 2, -5, 1, 2, 0), (0, -2, -1, 2, 1, 0),
 * (0, 1, -2, -1, 2, 0), (0, 2, -3, -4, 3, 2)) on six values of float type
 * @T (a vector type too) to @o[0] to @o[5], which are not the inputs: the
 * one sequence of operations every path and the tests' model take.
 */
#define ENG_WINO42_BT(T, d0, d1, d2, d3, d4, d5, o) do {			\
	T a_ = (d3) - (d1), b_ = (d4) - (d2);					\
										\
	(o)[0] = ((d0) - (d2)) * 2.0f + (b_ * 2.0f + a_ * 3.0f);		\
	(o)[1] = (a_ + b_) * 2.0f + ((d2) + (d3)) * 3.0f;			\
	(o)[2] = (b_ - a_) * 2.0f + ((d3) - (d2)) * 3.0f;			\
	(o)[3] = a_ * 2.0f + b_;						\
	(o)[4] = b_ * 2.0f - a_;						\
	(o)[5] = ((d5) - (d3)) * 2.0f + (b_ * 3.0f - a_ * 2.0f);		\
} while (0)

/*
 * F(4, 3)'s A^T, six values to four (rows (1, 1, 1, 8, 1, 0),
 * (0, 1, -1, 4, -2, 0), (0, 1, 1, 2, 4, 0), (0, 1, -1, 1, -8, 1)), alike.
 */
#define ENG_WINO42_AT(T, m0, m1, m2, m3, m4, m5, o) do {			\
	T a_ = (m1) + (m2), b_ = (m1) - (m2);					\
										\
	(o)[0] = ((m0) + a_) + ((m3) * 8.0f + (m4));				\
	(o)[1] = b_ + ((m3) * 4.0f - (m4) * 2.0f);				\
	(o)[2] = a_ + ((m3) * 2.0f + (m4) * 4.0f);				\
	(o)[3] = (b_ + ((m3) - (m4) * 8.0f)) + (m5);				\
} while (0)

/**
 * struct eng_wino_in - a panel of ENG_NR tiles of a Winograd input
 * transform, for vnpu_eng_wino_in_avx512()
 * @off: lane l's tile's first input (row y0, column x0, either outside X
 *	in the padding) as y0 * @rs + x0 * @ks floats from @x
 * @x: the first channel's image
 * @v: the first channel's point 0 in the transformed input; channel c's
 *	point xi at @v + c * ENG_NR + xi * @ps
 * @d: room for the rows' transforms, ENG_WINO_XI * ENG_NR floats, aligned
 * @cs: floats between channels
 * @ps: floats between points at @v
 * @cn: channels
 * @rs: floats between rows
 * @ks: floats between columns
 * @rmask: the lanes whose tile's row r lies inside X (none past the run)
 * @kmask: the lanes whose tile's column k lies inside X
 */
struct eng_wino_in {
	__s32 off[ENG_NR];
	const float *x;
	float *v, *d;
	__s64 cs;
	__u64 ps, cn;
	__s32 rs, ks;
	__u16 rmask[6], kmask[6];
};

/*
 * The input transform of a panel in sixteen lanes (vnpu_eng_gemm_avx512.c;
 * VNPU_ENG_F_AVX512 only): the 8-lane transform's bits.
 */
void vnpu_eng_wino_in_avx512(const struct eng_wino_in *w);

/*
 * F(2x2, 3x3)'s input transform of a panel to bf16 pairs
 * (vnpu_eng_gemm_bf16_avx512.c; VNPU_ENG_F_AVX512_BF16 only): @ps words
 * between points, rows and columns 0-3 of the masks.
 */
void vnpu_eng_wino2_in_bf16(const struct eng_wino_in *w);

/*
 * F(4x2, 3x3)'s alike: rows 0-5 and columns 0-3 of the masks, @d room for
 * two channels' transforms (48 * ENG_NR floats).
 */
void vnpu_eng_wino42_in_bf16(const struct eng_wino_in *w);

#define ENG_WINO2_SEGS	4	/* most tile rows a panel's rows load */

/**
 * struct eng_wino2_seg - the lanes of a panel in one row of tiles
 * @off: floats from a channel's image to the first column lane 0 would
 *	read (2 * lane columns left of the segment's first tile's) in the
 *	segment's first input row
 * @m0: the columns [0, 32) from @off inside X
 * @m2: the columns [2, 34) from @off inside X
 * @lanes: the segment's lanes
 * @rows: the input rows 0-3 (F(4x2, 3x3): 0-5) from @off's inside X
 */
struct eng_wino2_seg {
	__s64 off;
	__u32 m0, m2;
	__u16 lanes;
	__u8 rows;
};

/**
 * struct eng_wino2_in - a panel of ENG_NR tiles of F(2x2, 3x3)'s input
 * transform over rows of unit column stride, for vnpu_eng_wino2_rows_bf16()
 * @x: the first channel's image
 * @v: the first channel pair's point 0, as vnpu_eng_wino2_in_bf16()'s
 * @d: room for a channel's transforms, 16 * ENG_NR floats, aligned
 *	(F(4x2, 3x3): two channels', 48 * ENG_NR floats)
 * @cs: floats between channels
 * @rs: floats between rows
 * @ps: words between points at @v
 * @cn: channels
 * @c0: the first channel to transform
 * @c1: the channel past the last
 * @nseg: segments
 * @seg: the panel's runs of lanes in one row of tiles each
 */
struct eng_wino2_in {
	const float *x;
	__u32 *v;
	float *d;
	__s64 cs, rs;
	__u64 ps, cn, c0, c1;
	__u32 nseg;
	struct eng_wino2_seg seg[ENG_WINO2_SEGS];
};

/*
 * vnpu_eng_wino2_in_bf16() with each row of a segment two pairs of
 * masked loads split into even and odd columns rather than gathers: the
 * same values, the same bits.
 */
void vnpu_eng_wino2_rows_bf16(const struct eng_wino2_in *w);

/* F(4x2, 3x3)'s alike: 6x4 tiles of 24 points. */
void vnpu_eng_wino42_rows_bf16(const struct eng_wino2_in *w);

/**
 * struct eng_wino2_out - the output transform of a unit of a bf16
 * Winograd kind, for vnpu_eng_wino2_out16()
 * @m: the products: point xi's row r at @m + xi * @ps + r * @cols
 * @stage: the outputs: row r's output row i of tile t at
 *	@stage + (r * @wh + i) * 2 * @cols + 2 * t
 * @ps: floats between points at @m
 * @cols: floats between rows at @m (the unit's tiles, whole panels)
 * @mc: rows
 * @nt: tiles (M and the stage have room for whole panels of them)
 * @wh: output rows of a tile: 2 (F(2x2, 3x3)) or 4 (F(4x2, 3x3))
 * @silu: with @add, the epilogue in the stage too: add[r] to row r where
 *	@add is set, then SiLU (vnpu_eng_vmath.h), as act_store() does;
 *	ENG_ACT_BF16 for SiLU at bf16's grade (vm16_logistic_bf16())
 * @add: see @silu
 */
struct eng_wino2_out {
	const float *m;
	float *stage;
	__u64 ps, cols, mc, nt;
	__u32 wh;
	int silu;
	const float *add;
};

/*
 * Y = A^T M A of the bf16 kinds in sixteen lanes (vnpu_eng_gemm_bf16_avx512.c;
 * VNPU_ENG_F_AVX512 only): the 8-lane transform's bits, then the
 * epilogue's add and SiLU while they are in registers when @o->silu.
 */
void vnpu_eng_wino2_out16(const struct eng_wino2_out *o);

/* Tiles of one image (and group) of a Winograd convolution. */
static inline __u64 eng_wino_tiles(const struct eng_conv_shape *s)
{
	return eng_div_up(s->oh, s->wh) * eng_div_up(s->ow, s->ww);
}

/* Points of a Winograd convolution's transforms: 36, F(2x2)'s 16, F(4x2)'s 24. */
static inline __u64 eng_wino_xi(const struct eng_conv_shape *s)
{
	return (s->wh + 2) * (s->ww + 2);
}

/*
 * Whether a CONV of @a over X @x with weights of type @wdt can run as
 * Winograd at all (%VNPU_LAYER_F_WINO's conditions).
 */
static inline int eng_wino_fits(const struct vnpu_layer_conv *a,
				const struct vnpu_cmd_tensor *x, __u32 wdt)
{
	__u32 f = a->flags & (VNPU_LAYER_F_PACKED | VNPU_LAYER_F_WINO |
			      VNPU_LAYER_F_WINO2 | VNPU_LAYER_F_WINO42);

	/*
	 * F(4x4, 3x3) over f32 W, F(2x2, 3x3) over bf16 or f32 W, F(4x2,
	 * 3x3) over bf16 W (no flag: any).
	 */
	if (f == VNPU_LAYER_F_WINO2 ?
	    wdt != VNPU_DTYPE_BF16 && wdt != VNPU_DTYPE_F32 :
	    f == VNPU_LAYER_F_WINO42 ? wdt != VNPU_DTYPE_BF16 :
	    f == VNPU_LAYER_F_WINO ? wdt != VNPU_DTYPE_F32 : f != 0)
		return 0;
	return x->rank == 4 && x->dtype == VNPU_DTYPE_F32 &&
	       a->group && x->dims[1] % a->group == 0 &&
	       x->dims[1] / a->group <= VNPU_WINO_MAX_C &&
	       a->kernel[0] == 3 && a->kernel[1] == 3 && a->stride[0] == 1 &&
	       a->stride[1] == 1 && a->dilation[0] == 1 &&
	       a->dilation[1] == 1 && a->pad_begin[0] <= 2 &&
	       a->pad_begin[1] <= 2 && a->pad_end[0] <= 2 && a->pad_end[1] <= 2;
}

/* Whether Winograd is faster than the direct convolution of shape @s. */
static inline int eng_wino_pays(const struct eng_conv_shape *s)
{
	return s->cg >= ENG_WINO_MIN_C && s->mg >= ENG_WINO_MIN_M &&
	       s->n * eng_wino_tiles(s) >= ENG_WINO_MIN_TILES;
}

static inline int eng_conv_wino(const struct eng_layer *l)
{
	const struct vnpu_layer_conv *a = l->attrs;

	return !!(a->flags & (VNPU_LAYER_F_WINO | VNPU_LAYER_F_WINO2 |
			      VNPU_LAYER_F_WINO42));
}

/* Either bf16 kind: F(2x2, 3x3) or F(4x2, 3x3) (vnpu_eng_wino2.c). */
static inline int eng_conv_wino2(const struct eng_layer *l)
{
	const struct vnpu_layer_conv *a = l->attrs;

	return !!(a->flags & (VNPU_LAYER_F_WINO2 | VNPU_LAYER_F_WINO42));
}

/* The most units eng_wino_balance() looks at. */
#define ENG_BALANCE_UNITS	64

/*
 * When two tiles take @mg rows of @tiles tiles, in blocks of @rows, in
 * turn (each the next block as it finishes), the time the later one
 * finishes, in padded outputs (whole ENG_MR x ENG_NR micro-tiles).
 */
static inline __u64 eng_wino_span(__u64 mg, __u64 tiles, __u64 rows)
{
	__u64 t[2] = { 0, 0 }, m0;

	for (m0 = 0; m0 < mg; m0 += rows)
		t[t[1] < t[0]] += eng_div_up(eng_min(rows, mg - m0), ENG_MR) *
				  ENG_MR * eng_div_up(tiles, ENG_NR) * ENG_NR;
	return eng_max(t[0], t[1]);
}

/*
 * A Winograd convolution of one run of tiles runs a part per unit (see
 * eng_wino_parts()), each a block of rows: where their count is odd above
 * one, the rows of whole 12-row tiles, down to half of them, that give
 * two tiles the shortest span, where it is shorter by more than 1/64
 * (CRNN's 512 x 512 over 20 tiles: 15 blocks of 36 rows, not 11 of 48,
 * before eng_wino_rows() on the FMA paths). A tile holds the run's
 * transformed input over its units, so smaller blocks do not transform
 * it again.
 */
static inline void eng_wino_balance(__u64 mg, __u64 tiles, struct eng_unit *u)
{
	__u64 r, rows = u->rows, span, best, sp;

	if (eng_div_up(mg, rows) % 2 == 0 || mg <= rows ||
	    eng_div_up(mg, rows) > ENG_BALANCE_UNITS)
		return;
	span = eng_wino_span(mg, tiles, rows);
	best = span;
	for (r = (rows - 1) / (2 * ENG_MR) * 2 * ENG_MR;
	     r >= 2 * ENG_MR && 2 * r >= rows; r -= 2 * ENG_MR) {
		sp = eng_wino_span(mg, tiles, r);
		if (sp < best) {
			best = sp;
			u->rows = r;
		}
	}
	if (best >= span - span / 64)
		u->rows = rows;
}

/*
 * Whether F(4x4)'s GEMMs (f32 U) over @tiles tiles take the last one to
 * ENG_TAIL_COLS of them as the AVX-512 path's tail columns (wino_gemms()):
 * then the last panel weighs about a twelfth of a whole one, and halves
 * of whole panels would not (ResNet-50's 128 x 128 over 28x28: runs of 32
 * and 17 tiles, 2 : 1.1 panels on two tiles).
 */
static inline int eng_wino_tail(const struct eng_conv_shape *s,
				__u32 features, __u64 tiles)
{
	return (features & VNPU_ENG_F_AVX512) && s->wh == 4 && s->ww == 4 &&
	       tiles % ENG_NR && tiles % ENG_NR <= ENG_TAIL_COLS;
}

/*
 * Whether the runs of @cols tiles over @outer maps of @tiles tiles each
 * split evenly over two tiles taking them in turn (within 9:7), by the
 * whole panels their GEMMs run (a map's last run is short, but its
 * panel costs what a full one does), or with @tail (eng_wino_tail()) its
 * last one to ENG_TAIL_COLS tiles a quarter of a panel each.
 */
static inline int eng_wino_even(__u64 outer, __u64 tiles, __u64 cols,
				int tail)
{
	__u64 ntb = eng_div_up(tiles, cols), runs = outer * ntb, k, len;
	__u64 w[2] = { 0, 0 };

	if (runs < 2 || runs > 64)
		return runs > 64;
	for (k = 0; k < runs; k++) {
		len = k % ntb + 1 < ntb ? cols : tiles - (ntb - 1) * cols;
		w[k % 2] += tail ? len / ENG_NR * ENG_NR +
				   len % ENG_NR * (ENG_NR / ENG_TAIL_COLS) :
			    eng_div_up(len, ENG_NR) * ENG_NR;
	}
	return 16 * eng_max(w[0], w[1]) <= 9 * (w[0] + w[1]);
}

/* The most weights (points x rows x depth) eng_wino_odd() reads again. */
#define ENG_WINO_ODD_W		(1ull << 18)

/*
 * Whether one map's runs of @cols tiles are an odd count, three or more,
 * and its weights fit a core's L2 (ENG_WINO_ODD_W elements): then a
 * part per unit, the short last run in the middle (eng_wino_run()), so
 * that two tiles each take half the units, about half the work, and only
 * the middle run's input is transformed twice. YOLOv8n's 64 x 64 over
 * 40x40 (7 panels): runs of 4 and 3 panels, 4:3 on two tiles; now 3, 1
 * and 3. Each run reads the weights again, which costs little from L2
 * but about a tenth of ResNet-50's and DBNet's 128 x 128 (2.4 MB) from
 * L3 on one CPU (measured).
 */
static inline int eng_wino_odd(const struct eng_conv_shape *s, __u64 cols)
{
	__u64 runs = eng_div_up(eng_wino_tiles(s), cols);

	return s->n * s->group == 1 && runs >= 3 && runs % 2 == 1 &&
	       eng_wino_xi(s) * s->mg * s->cg <= ENG_WINO_ODD_W;
}

/*
 * The run of tiles at place @q of a map's @runs: the last, short one in
 * the middle of an odd count of three or more (eng_wino_odd()), the
 * others in order; an even count in order.
 */
static inline __u64 eng_wino_run(__u64 q, __u64 runs)
{
	__u64 h = runs / 2;

	if (runs < 3 || runs % 2 == 0 || q < h)
		return q;
	return q == h ? runs - 1 : q - 1;
}

/*
 * The rows of a Winograd layer of one run of tiles on the FMA paths: its
 * @mg rows in the fewest even count of blocks of at most @most rows
 * (the budget's), at least two. ResNet-50's 256 x 256 over 14x14 (16
 * tiles, one panel): 4 blocks of 66 rows, not 22 of 12.
 */
static inline __u64 eng_wino_rows(__u64 mg, __u64 most)
{
	__u64 pairs = eng_div_up(mg ? mg : 1, 2 * most);

	return eng_div_up(eng_div_up(mg ? mg : 1, 2 * pairs), ENG_MR) * ENG_MR;
}

/*
 * A Winograd unit: @cols tiles (whole panels of ENG_NR, ENG_WINO_TILES on
 * the FMA paths, one panel on the baseline's) of one image and group by
 * as many output channels as the budget allows at that depth (one block
 * at most); a layer of fewer than ENG_CONV_MIN_UNITS units halves its
 * rows (the blocks of rows of a run of tiles share its input's
 * transform), to whole 12-row tiles, then its tiles, unless it runs a
 * part per run of tiles on the FMA paths.
 */
static inline void eng_wino_unit(const struct eng_conv_shape *s,
				 __u32 features, struct eng_unit *u)
{
	__u64 macs = eng_unit_macs(features), tiles = eng_wino_tiles(s);
	__u64 all = eng_div_up(s->mg ? s->mg : 1, ENG_MR) * ENG_MR;
	__u64 outer = s->n * s->group, c, most;
	int tail = eng_wino_tail(s, features, tiles);

	u->cols = eng_base_path(features) ? ENG_NR : ENG_WINO_TILES;
	u->cols = eng_min(u->cols, eng_div_up(tiles, ENG_NR) * ENG_NR);
	/*
	 * An even count of panels, all in one run: two runs of half of
	 * them, so that two tiles each transform their own tiles' input, not
	 * both all of it (the GEMMs run whole panels, so the runs weigh the
	 * same); each run then reads all the weights. So only where the
	 * transform a second tile repeats (as long as the GEMMs of 64 output
	 * channels over the run, 36 * 64 * C * cols multiply-adds) outweighs
	 * the weights a second run reads (36 * M * C floats; on AVX2 at 35
	 * GMAC/s and 9 GB/s a core, a float from memory as 16 multiply-adds):
	 * M <= 4 * cols. ResNet-50's 128 x 128 over 28x28 (4 panels of 49
	 * tiles): 1.7 -> 2.0x on two tiles; CRNN's 512 x 512 over 20 tiles
	 * keeps its rows.
	 */
	if (outer == 1 && u->cols == eng_div_up(tiles, ENG_NR) * ENG_NR &&
	    u->cols % (2 * ENG_NR) == 0 && s->mg <= 4 * u->cols && !tail)
		u->cols /= 2;
	/*
	 * Runs that two tiles would not share evenly take the widest
	 * narrower run, down to two panels, that they do: then each run is
	 * a part, whose input one tile transforms (ResNet-50's 64 x 64 over
	 * 56x56: 13 panels in runs of 4, 4, 4 and 1 panels, then a part per
	 * block of rows and each tile transforming every run; now runs of 3).
	 * Or an odd count of runs (eng_wino_odd()): a part per unit, the
	 * short last run in the middle.
	 */
	if (!eng_wino_even(outer, tiles, u->cols, tail) &&
	    !eng_wino_odd(s, u->cols))
		for (c = u->cols - ENG_NR; c >= 2 * ENG_NR; c -= ENG_NR)
			if (eng_wino_even(outer, tiles, c, tail) ||
			    eng_wino_odd(s, c)) {
				u->cols = c;
				break;
			}
	u->rows = eng_unit_side(macs, eng_wino_xi(s) * s->cg * u->cols, ENG_MR,
				ENG_MR, eng_min(ENG_MC, all));
	most = u->rows;
	/*
	 * Two runs or more that run a part each (eng_wino_parts(), with or
	 * without %VNPU_ENG_F_RUNS): smaller blocks of rows make no more
	 * parts, and each block's 36 GEMMs read the run's V from L2 again.
	 * So the fewest even blocks within the budget: ResNet-50's 128 x 128
	 * over 28x28 (two runs of 2 panels) 2 blocks of 66 rows, not 6 of
	 * 24.
	 */
	if (!eng_base_path(features) && outer * eng_div_up(tiles, u->cols) >= 2 &&
	    eng_wino_even(outer, tiles, u->cols, tail) &&
	    !eng_wino_odd(s, u->cols)) {
		u->rows = eng_even_side(s->mg, most, ENG_MR);
		return;
	}
	while (outer * eng_div_up(s->mg, u->rows) * eng_div_up(tiles, u->cols) <
	       ENG_CONV_MIN_UNITS) {
		if (u->rows > 2 * ENG_MR)
			u->rows = eng_div_up(u->rows / 2, 2 * ENG_MR) * 2 * ENG_MR;
		else if (u->cols > ENG_NR)
			u->cols = eng_div_up(u->cols / 2, ENG_NR) * ENG_NR;
		else
			break;
	}
	/*
	 * One run of tiles whose rows alone were cut: each GEMM of a unit
	 * reads its panel of V (C x cols) from L2 once for all its rows, so
	 * a few large blocks, an even count of them (eng_wino_rows()), not
	 * ENG_CONV_MIN_UNITS small ones.
	 */
	if (outer * eng_div_up(tiles, u->cols) == 1 && !eng_base_path(features) &&
	    eng_wino_rows(s->mg, most) > u->rows) {
		u->rows = eng_wino_rows(s->mg, most);
		return;
	}
	if (outer * eng_div_up(tiles, u->cols) == 1)
		eng_wino_balance(s->mg, tiles, u);
	/* A part per unit (eng_wino_odd()): blocks of rows of even sizes. */
	if (eng_wino_odd(s, u->cols) &&
	    !eng_wino_even(outer, tiles, u->cols, tail))
		u->rows = eng_even_side(s->mg, u->rows, ENG_MR);
}

static inline __u64 eng_wino_units(const struct eng_conv_shape *s,
				   __u32 features)
{
	struct eng_unit u;

	eng_wino_unit(s, features, &u);
	return s->n * s->group * eng_div_up(s->mg, u.rows) *
	       eng_div_up(eng_wino_tiles(s), u.cols);
}

/*
 * The most parts of a Winograd convolution. The blocks of rows of a run
 * of tiles share its input's transform, which costs about what the GEMMs
 * of 64 output channels do: with a part per unit, taken by the tiles in
 * turn, each of two tiles transformed every run (yolov8n and dbnet on 2
 * CPUs: 1.1x and 2.0x the transforms of 1). So a part per run, all its
 * blocks of rows, where the runs split evenly over two tiles taking them
 * in turn (eng_wino_even()), else a part per unit. Where the tiles take
 * runs of neighbouring parts (%VNPU_ENG_F_RUNS), an odd count of runs
 * (eng_wino_odd()) runs a part per unit too: a tile's blocks of rows of
 * one run follow each other, so only the short middle run and a run one
 * tile takes from the other at the end are transformed twice, and the
 * ends balance by a block of rows, not a run. ResNet-50's 64 x 64 over
 * 56x56 (runs of 3, 3, 1, 3 and 3 panels, two blocks of 32 rows each): 10
 * parts, not 5; the tile left idle by the other's last run waited 100 us
 * of 570, now 10-17 us.
 */
static inline __u64 eng_wino_parts(const struct eng_conv_shape *s,
				   __u32 features)
{
	__u64 tiles = eng_wino_tiles(s);
	struct eng_unit u;

	eng_wino_unit(s, features, &u);
	if (!eng_wino_even(s->n * s->group, tiles, u.cols,
			   eng_wino_tail(s, features, tiles)) ||
	    ((features & VNPU_ENG_F_RUNS) && eng_wino_odd(s, u.cols)))
		return eng_wino_units(s, features);
	return s->n * s->group * eng_div_up(tiles, u.cols);
}

/*
 * Floats of a Winograd part's scratch (vnpu_eng_wino.c): what it holds,
 * the transformed input of a unit, the 36 (16) products, the outputs'
 * rows, the GEMM's accumulator and the transforms' buffers, each aligned;
 * the bf16 kinds also a slice of U widened to f32.
 */
static inline __u64 eng_wino_scratch(const struct eng_conv_shape *s,
				     const struct eng_unit *u)
{
	__u64 al = ENG_ALIGN / 4, xi = eng_wino_xi(s);

	return 9 * al +
	       xi * (s->cg * u->cols + ENG_WINO_VPAD) + xi * u->rows * u->cols +
	       u->rows * s->wh * s->ww * u->cols +
	       ENG_MC * eng_acc_rs(u->cols) + ENG_WINO_XI * ENG_NR +
	       ENG_WINO_XI * ENG_WINO_BUF + (s->ww == 2 ? ENG_MC * ENG_KC : 0);
}

/*
 * BINARY's max (@max) or min of two floats, as nan_max() does it in
 * double: the first NaN, else the larger or smaller, @b on a tie.
 */
#define F32_MAX(a, b, max)						\
	((a) != (a) ? (a) : (b) != (b) ? (b) :				\
	 ((max) ? (a) > (b) : (a) < (b)) ? (a) : (b))

/*
 * The float @r of a + b or a * b with the NaN bin_d() gives when both are
 * NaN, the first's (quieted: a + a), whichever of its sources the compiler
 * gives the instruction first.
 */
#define F32_NAN_FIRST(a, r) ((a) != (a) ? (a) + (a) : (r))

#endif /* _VNPU_ENG_PRIV_H_ */

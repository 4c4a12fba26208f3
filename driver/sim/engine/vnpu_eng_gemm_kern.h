/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The blocked GEMM of vnpu_eng_gemm.c as the other convolution paths of
 * the float kernels use it (vnpu_eng_wino.c, vnpu_eng_dw.c): its operands,
 * output, epilogue and flush, the functions that take them, and the lane
 * FMA its micro-kernels round with. Built per ISA like them.
 */
#ifndef _VNPU_ENG_GEMM_KERN_H_
#define _VNPU_ENG_GEMM_KERN_H_

#include "vnpu_eng_kern.h"
#include "vnpu_eng_gemm.h"

/* ---- element access ---------------------------------------------------- */

/* The address of element @off of a tensor of @dt at @base. */
static inline const void *elem_at(const void *base, __s64 off, __u32 dt)
{
	return (const char *)base + off * (__s64)vnpu_eng_dtype_size(dt);
}

static inline void *elem_at_w(void *base, __s64 off, __u32 dt)
{
	return (char *)base + off * (__s64)vnpu_eng_dtype_size(dt);
}

#ifdef ENG_FMA
#define LANE_FMA(a, b, c) VFMA(a, b, c)
#else
/*
 * fma(a, b, c) in software, for the baseline build: it rounds once: a * b
 * is exact in double, s = a * b + c rounds, TwoSum gives its exact error
 * e, and an inexact s is made odd towards e (round to odd, 53 >= 2 * 24 +
 * 2 bits), which then rounds to float exactly as the fused operation does.
 */
static inline float fma_exact(float a, float b, float c)
{
	double p = (double)a * b, cd = c, s = p + cd, bb = s - p;
	double e = (p - (s - bb)) + (cd - bb);
	union {
		double d;
		__u64 u;
	} v = { .d = s };

	if (e != 0 && s - s == 0 && !(v.u & 1))
		v.u += (e > 0) == (s > 0) ? 1 : (__u64)-1;
	return (float)v.d;
}

/* The baseline's fused multiply-add per lane, as its ukernel() does. */
static inline v8sf lane_fma(v8sf a, v8sf b, v8sf c)
{
	int l;

	for (l = 0; l < 8; l++)
		c[l] = fma_exact(a[l], b[l], c[l]);
	return c;
}

#define LANE_FMA(a, b, c) lane_fma(a, b, c)
#endif

/**
 * struct gemm_a - the left operand: packed f32 panels over the whole depth,
 * a strided matrix of @dt packed per slice, or a packer of its own
 * @packed: f32 panels packed over the whole depth, or NULL
 * @pairs: NULL, or the same weights' packed bf16 panels (the AVX512-BF16
 *	kernels read them in place)
 * @h16: NULL, or the same weights' packed f16 panels (the AVX512-FP16
 *	kernels read them in place)
 * @p: the strided matrix, or what @pack reads
 * @rs: @p's row stride, in elements
 * @cs: @p's column stride, in elements
 * @dt: &enum vnpu_dtype of @p
 * @k: the depth
 * @pack: a packer of its own, or NULL
 * @arg: argument of @pack
 * @next: NULL, or with @packed the packed panels the caller's next block
 *	reads first, which the AVX-512 tiles fetch during the block's last
 *	slice (struct eng_slice's @a_next)
 */
struct gemm_a {
	const float *packed;
	const __u16 *pairs;
	const __u16 *h16;
	const void *p;
	__s64 rs, cs;
	__u32 dt;
	__u64 k;
	void (*pack)(const void *arg, __u64 m0, __u64 mc, __u64 k0, __u64 kc,
		     float *dst);
	const void *arg;
	const float *next;
};

/**
 * struct gemm_b - the right operand, one of: packed f32 panels over the
 * whole depth; a strided matrix of @dt; a packer (im2col, or packed f16
 * or bf16 panels of depth @k at @p); or (with @off) f32 rows read at
 * @win + off[k] + column
 * @packed: f32 panels packed over the whole depth, or NULL
 * @pairs: as gemm_a's
 * @h16: as gemm_a's
 * @p: the strided matrix, or what @pack reads
 * @rs: @p's row stride, in elements
 * @cs: @p's column stride, in elements
 * @dt: &enum vnpu_dtype of @p
 * @n: the columns
 * @k: the depth
 * @pack: a packer, or NULL
 * @arg: argument of @pack
 * @win: the window the rows of @off start in
 * @off: for each depth index, its row's offset in @win, or NULL
 * @bc: with @off on the AVX512-BF16 path, NULL or the block's rows as
 *	bf16 pairs over the whole depth (struct eng_bf16_slice's @bc, from
 *	depth 0, panels @bc_ps words apart)
 * @bc_ps: see @bc
 * @bc_fill: fill @bc from @off's rows (else it holds them already)
 * @edges: with @bc, NULL or the zeros of @off's rows (struct
 *	eng_bf16_edges: @win is the input itself)
 * @kc: 0, or with @off on the AVX2 path the most depth of a slice where
 *	the depth takes more than one of ENG_KC (ENG_CONV_KC_SKEW)
 */
struct gemm_b {
	const float *packed;
	const __u16 *pairs;
	const __u16 *h16;
	const void *p;
	__s64 rs, cs;
	__u32 dt;
	__u64 n, k;
	void (*pack)(const void *arg, __u64 k0, __u64 kc, __u64 n0, __u64 nc,
		     float *dst);
	const void *arg;
	const float *win;
	const __s32 *off;
	__u32 *bc;
	__u64 bc_ps;
	int bc_fill;
	const struct eng_bf16_edges *edges;
	__u64 kc;
};

/**
 * struct gemm_out - where output (i, j) goes: element i * rs + col(j) of
 * @y (of @dt), with col(j) = j, or for padded columns (@wp != 0) j's
 * (j / wp, j % wp) as (j / wp) * ow + j % wp, dropped when j % wp >= ow
 * @y: the output
 * @dt: &enum vnpu_dtype of @y
 * @rs: @y's row stride, in elements
 * @wp: the padded row length of the columns, or 0
 * @ow: the output row length within @wp
 */
struct gemm_out {
	void *y;
	__u32 dt;
	__s64 rs;
	__u64 wp, ow;
};

/* alpha, beta * C (of @c_dt), the residual R (of @r_dt), the activation. */
struct gemm_epi {
	float alpha, beta;
	const void *c;
	__s64 c_rs, c_cs;
	__u32 c_dt, r_dt;
	const void *r;
	__s64 r_rs, r_cs;
	const struct vnpu_layer_act *act;
	int avx512;	/* eng_act_avx512() */
};

/**
 * struct gemm_flush - a block's sums on their way to the output
 * @acc: the sums, rows @acc_rs floats apart
 * @acc_rs: see @acc
 * @m0: the block's first row
 * @n0: the block's first column
 * @plain: the epilogue is at most a per-row add, a dense f32 residual
 *	and an activation, to f32 outputs (act_store())
 * @add: with @plain, NULL or the float added to each row
 * @act: with @plain, the activation
 */
struct gemm_flush {
	float *acc;
	__u64 acc_rs, m0, n0;
	int plain;
	const float *add;
	const struct vnpu_layer_act *act;
};

/**
 * struct gemm_bufs - a part's scratch: packed A slice, B (packed slice or
 * window), the block accumulator, and whether the AVX-512 kernels run
 * (and the AVX512-BF16 or AVX512-FP16 ones, for packed bf16 or f16
 * weights)
 * @a: the packed A slice
 * @b: the packed B slice or window
 * @acc: the block accumulator
 * @avx512: the AVX-512 kernels run
 * @bf16: the AVX512-BF16 kernels run for packed bf16 weights
 * @f16: the AVX512-FP16 kernels run for packed f16 weights
 * @ctx: the part's context
 */
struct gemm_bufs {
	float *a, *b, *acc;
	int avx512, bf16, f16;
	const struct vnpu_eng_ctx *ctx;
};

/* vnpu_eng_gemm.c, each build's own through vnpu_eng_isa.h. */
void gemm_block(const struct gemm_a *a, const struct gemm_b *b,
		__u64 m0, __u64 mc, __u64 n0, __u64 nc, __u64 kt,
		const struct gemm_out *o, const struct gemm_epi *e,
		const struct gemm_bufs *bufs);
/* Depth [k0, k0 + kc), columns [n0, n0 + nc) of strided B (@arg: its gemm_b) in panels. */
void gemm_pack_b(const void *arg, __u64 k0, __u64 kc, __u64 n0, __u64 nc,
		 float *dst);
int epi_plain(const struct gemm_out *o, const struct gemm_epi *e,
	      __u64 m0, __u64 mc, float *add, int *has_add);
void flush_seg(const struct gemm_out *o, const struct gemm_epi *e,
	       const struct gemm_flush *f, __u64 r, __u64 c, __u64 col,
	       __u32 len);
void block_flush(const struct gemm_out *o, const struct gemm_epi *e,
		 const struct gemm_flush *f, __u64 r0, __u64 r1,
		 __u64 c0, __u64 c1);
void conv_epi(const struct eng_layer *l, __u64 img, __u64 g,
	      struct gemm_epi *e, struct gemm_out *o);

/* ---- Winograd parts (vnpu_eng_wino.c) ----------------------------------- */

/**
 * struct wino_held - what a Winograd part's scratch holds, kept at its
 * start for the command's next parts on the same scratch
 * @epoch: the command run that set it (0: none)
 * @attrs: the layer's attributes, as the same run's one layer
 * @run: the run of tiles (unit / blocks of rows) whose V the scratch
 *	holds, or ~0 for none
 */
struct wino_held {
	__u64 epoch;
	const void *attrs;
	__u64 run;
};

/**
 * struct wino_part - a Winograd part of any kind, F(4x4, 3x3)
 * (vnpu_eng_wino.c), F(2x2, 3x3) or F(4x2, 3x3) (vnpu_eng_wino2.c): the
 * layer, its units and the scratch, as wino_part_start() splits it
 * @s: the shape (@s.wh, @s.ww: the tiles' output rows and columns)
 * @l: the layer
 * @u: the unit: @u.rows output channels by @u.cols tiles
 * @tw: tiles along a row of outputs
 * @tiles: tiles of an image
 * @ws: elements between two points' weights: the group's rows rounded
 *	up to whole panels times C/group
 * @vs: floats between two points' f32 V: C/group times the unit's
 *	tiles and ENG_WINO_VPAD, so that a channel's points' lines do not
 *	all fall in one L1 set
 * @held: see struct wino_held
 * @v: the unit's transformed input, point by point (each kind's layout)
 * @m: the products: point xi's row r at @m + (xi * @u.rows + r) * @u.cols
 * @stage: the unit's outputs: channel r's row i of tile t at
 *	@stage + (r * wh + i) * ww * @u.cols + ww * t
 * @d: a panel's input tiles or a row's partial transforms
 * @tail: each kind's own buffer (eng_wino_scratch())
 * @bufs: the GEMM's accumulator and paths (@bufs.a is the kind's)
 * @x: the unit's image and group of the input
 * @xs: the input's channel, row and column strides
 * @img: the unit's image
 * @g: its group
 * @t0: its first tile
 * @t1: its tiles' end
 * @m0: its first output channel of the group
 * @mc: its output channels
 * @fresh: whether the scratch lacks V of tiles [@t0, @t1)
 * @staged: whether the output step put the unit's per-row add and
 *	activation into the stage too (the flush then only stores)
 * @ua: the bf16 kinds' U of the point whose GEMM runs, for its packer
 */
struct wino_part {
	struct eng_conv_shape s;
	const struct eng_layer *l;
	struct eng_unit u;
	__u64 tw, tiles, ws, vs;
	struct wino_held *held;
	float *v, *m, *stage, *d, *tail;
	struct gemm_bufs bufs;
	const float *x;
	__s64 xs[3];
	__u64 img, g, t0, t1, m0, mc;
	int fresh, staged;
	const __u16 *ua;
};

/**
 * struct wino_kind - the steps of a Winograd kind's unit (@wp's unit
 * fields set), which wino_part_run() takes in turn
 * @input: V of tiles [@t0, @t1) of the image at @x (channel, row and
 *	column strides in @xs), where the scratch lacks it
 * @point: point @xi's left operand in @a, of rows [@m0, @m0 + @mc) by
 *	tiles [0, @nt); or that point's whole GEMM run, then 1
 * @output: the outputs' transform of rows [0, @mc) by tiles [0, @nt) of
 *	M into the stage
 */
struct wino_kind {
	void (*input)(struct wino_part *wp, const float *x, const __s64 *xs,
		      __u64 t0, __u64 t1, const struct vnpu_eng_ctx *ctx);
	int (*point)(struct wino_part *wp, struct gemm_a *a, __u64 xi,
		     __u64 m0, __u64 mc, __u64 nt,
		     const struct vnpu_eng_ctx *ctx);
	void (*output)(struct wino_part *wp, __u64 mc, __u64 nt);
};

void wino_part_start(struct wino_part *wp, const struct eng_layer *l,
		     const struct vnpu_eng_ctx *ctx);
void wino_part_run(struct wino_part *wp, __u64 ub, __u64 ue,
		   const struct wino_kind *k, const struct vnpu_eng_ctx *ctx);

/* Tile @t's first input row and column (either may be in the padding). */
static inline void wino_origin(const struct wino_part *wp, __u64 t,
			       __s64 *y0, __s64 *x0)
{
	const struct vnpu_layer_conv *a = wp->l->attrs;

	*y0 = (__s64)(t / wp->tw * wp->s.wh) - a->pad_begin[0];
	*x0 = (__s64)(t % wp->tw * wp->s.ww) - a->pad_begin[1];
}

/**
 * struct wino_seg - lanes of a half panel whose tiles lie in one tile row
 * (the AVX2 input transforms' copies of a panel's rows)
 * @lo: first lane (of eight)
 * @hi: lanes [@lo, @hi)
 * @at: where lane 0 would read row 0 of its tile in the copy
 */
struct wino_seg {
	int lo, hi;
	__u64 at;
};

/*
 * The runs of tiles [@ta, @ta + @tn) (one panel) that lie in one tile
 * row, each half panel's in @sg[h][0 .. @ns[h]), for the AVX2 input
 * transforms' copy of the panel's rows: rows of @rw floats, padded column
 * j at @lead + j, row 0 the first tile row's first input row.
 */
static inline void wino_segs(const struct wino_part *wp, __u64 ta, __u64 tn,
			     __u64 rw, __u64 lead, struct wino_seg sg[2][8],
			     int ns[2])
{
	__u64 ty0 = ta / wp->tw, wh = wp->s.wh, ww = wp->s.ww;
	struct wino_seg *q;
	int l, h;

	ns[0] = 0;
	ns[1] = 0;
	for (l = 0; l < (int)tn; l++) {
		__u64 t = ta + (__u64)l, ty = t / wp->tw, tx = t % wp->tw;

		h = l / 8;
		if (!ns[h] || tx == 0) {
			q = &sg[h][ns[h]++];
			q->lo = l % 8;
			q->at = (ty - ty0) * wh * rw + lead + ww * tx -
				ww * (__u64)(l % 8);
		} else {
			q = &sg[h][ns[h] - 1];
		}
		q->hi = l % 8 + 1;
	}
}

#ifdef ENG_FMA
int wino_part_in16(const struct wino_part *wp, __u64 p,
		   struct eng_wino_in *w);
#endif

#endif /* _VNPU_ENG_GEMM_KERN_H_ */

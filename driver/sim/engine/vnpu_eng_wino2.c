// SPDX-License-Identifier: GPL-2.0 OR MIT
/**
 * DOC: Winograd F(2x2, 3x3) in bf16
 *
 * The bf16 hint's stride-1 3x3 convolutions (CONV layers of
 * %VNPU_LAYER_F_WINO2, which the compiler sets by shape): each 2x2 tile
 * of outputs of a channel is A^T M A, M the 4x4 sum over input channels
 * of U = G g G^T (bf16, transformed and rounded once at compile time,
 * %VNPU_PACK_WINO2_W) times V = B^T d B, point by point. B^T and A^T hold
 * only 0 and +-1, G halves: F(4x4, 3x3)'s larger points would amplify
 * bf16's rounding of U and V about ten times (engine.rst). The units,
 * parts and scratch are F(4x4, 3x3)'s (vnpu_eng_wino.c) over 16 points.
 *
 * On the AVX512-BF16 path V is rounded to bf16 pairs as it is
 * transformed (vnpu_eng_wino2_in_bf16()), once per value, and the 16
 * GEMMs run the 12x32 vdpbf16ps tiles over U and V in place; elsewhere V
 * stays f32, U widens a slice at a time, and the f32 micro-kernels run
 * (the f32 layer on the rounded U, as every widening path). The
 * transforms are fixed sequences of float adds and subtractions (and
 * halvings in G), rows first, so every path of one kind gives the same
 * bits whatever the split. Built per ISA, on vnpu_eng_gemm.c's blocks.
 */
#include "vnpu_eng_gemm_kern.h"

/* What a part's scratch holds for the next parts (as vnpu_eng_wino.c's). */
struct wino2_held {
	__u64 epoch;
	const void *attrs;
	__u64 run;
};

/**
 * struct wino2_job - a Winograd F(2x2, 3x3) part's layer, units, scratch
 * @s: the shape
 * @l: the layer
 * @u: the unit: @u.rows output channels by @u.cols tiles
 * @tw: tiles along a row of outputs
 * @tiles: tiles of an image
 * @ws: bf16 elements between two points' weights: the group's rows
 *	rounded up to whole panels times C/group
 * @native: V in bf16 pairs and the AVX512-BF16 tiles
 * @held: see struct wino2_held
 * @w: U of the unit's group: point xi's panels at @w + xi * @ws
 * @v: the unit's V: point xi's panels at @v + xi * cg * @u.cols floats
 *	(f32, panel p at + p * cg * ENG_NR), or words (pairs: + xi * cg *
 *	@u.cols / 2, panel p at + p * cg * ENG_NR / 2)
 * @m: the 16 products: point xi's row r at @m + (xi * @u.rows + r) * @u.cols
 * @stage: the outputs: channel r's row i of tile t at
 *	@stage + r * 4 * @u.cols + i * 2 * @u.cols + 2 * t
 * @d: a panel's 4x4 input tiles
 * @a: a slice of U widened to f32, or the bf16 tiles' work
 * @bufs: the GEMM's accumulator and paths
 */
struct wino2_job {
	struct eng_conv_shape s;
	const struct eng_layer *l;
	struct eng_unit u;
	__u64 tw, tiles, ws;
	int native;
	struct wino2_held *held;
	const __u16 *w;
	float *v, *m, *stage, *d, *a;
	struct gemm_bufs bufs;
};

/*
 * B^T along one axis on eight lanes, in place over four vectors @ds
 * floats apart: rows (1, 0, -1, 0), (0, 1, 1, 0), (0, -1, 1, 0),
 * (0, 1, 0, -1).
 */
static void wino2_bt(float *p, __u32 ds)
{
	v8sf d0 = vload(p), d1 = vload(p + ds), d2 = vload(p + 2 * ds);
	v8sf d3 = vload(p + 3 * ds);

	vstore(p, d0 - d2);
	vstore(p + ds, d1 + d2);
	vstore(p + 2 * ds, d2 - d1);
	vstore(p + 3 * ds, d1 - d3);
}

/*
 * A^T along one axis on eight lanes: four vectors at @p, @ps floats
 * apart, to two at @o, @os apart; rows (1, 1, 1, 0), (0, 1, -1, -1).
 */
static void wino2_at(const float *p, __u64 ps, float *o, __u32 os)
{
	v8sf m0 = vload(p), m1 = vload(p + ps), m2 = vload(p + 2 * ps);
	v8sf m3 = vload(p + 3 * ps);

	vstore(o, (m0 + m1) + m2);
	vstore(o + os, (m1 - m2) - m3);
}

/* Tile @t's first input row and column (either may be in the padding). */
static void wino2_origin(const struct wino2_job *wj, __u64 t, __s64 *y0,
			 __s64 *x0)
{
	const struct vnpu_layer_conv *a = wj->l->attrs;

	*y0 = (__s64)(t / wj->tw * ENG_WINO2_TILE) - a->pad_begin[0];
	*x0 = (__s64)(t % wj->tw * ENG_WINO2_TILE) - a->pad_begin[1];
}

/*
 * V = B^T d B of panel @p of tiles [@t0, @t1) of channel @c into f32
 * panels, eight lanes at a time (tiles past @t1 zero).
 */
static void wino2_in_f32(struct wino2_job *wj, const float *x,
			 const __s64 *xs, __u64 t0, __u64 t1, __u64 p, __u64 c)
{
	__u64 cg = wj->s.cg, ps = cg * wj->u.cols, h, i;
	float *d = wj->d, *v = wj->v + p * cg * ENG_NR + c * ENG_NR;
	__s64 y0, x0, r, k;
	__u32 lane;

	for (lane = 0; lane < ENG_NR; lane++) {
		__u64 t = t0 + p * ENG_NR + lane;

		for (i = 0; i < ENG_WINO2_XI; i++)
			d[i * ENG_NR + lane] = 0.0f;
		if (t >= t1)
			continue;
		wino2_origin(wj, t, &y0, &x0);
		for (r = 0; r < 4; r++)
			for (k = 0; k < 4; k++)
				if (y0 + r >= 0 && y0 + r < (__s64)wj->s.h &&
				    x0 + k >= 0 && x0 + k < (__s64)wj->s.w)
					d[(r * 4 + k) * ENG_NR + lane] =
						x[(y0 + r) * xs[1] + (x0 + k) * xs[2]];
	}
	/* Along the rows, then down the columns. */
	for (h = 0; h < ENG_NR; h += 8) {
		for (i = 0; i < 4; i++)
			wino2_bt(d + i * 4 * ENG_NR + h, ENG_NR);
		for (i = 0; i < 4; i++)
			wino2_bt(d + i * ENG_NR + h, 4 * ENG_NR);
		for (i = 0; i < ENG_WINO2_XI; i++)
			vstore(v + i * ps + h, vload(d + i * ENG_NR + h));
	}
}

#ifdef ENG_FMA
/*
 * Panel @p of tiles [@t0, @t1) as vnpu_eng_wino2_in_bf16() takes it, or
 * 0 where an input's offset does not fit its 32-bit indices.
 */
static int wino2_in16(const struct wino2_job *wj, const float *x,
		      const __s64 *xs, __u64 t0, __u64 t1, __u64 p,
		      struct eng_wino_in *w)
{
	const __s64 lim = 0x7fffffff / 2;
	__u32 lane, i;

	if (xs[1] > lim / (__s64)(wj->s.h + 8) ||
	    xs[1] < -lim / (__s64)(wj->s.h + 8) ||
	    xs[2] > lim / (__s64)(wj->s.w + 8) ||
	    xs[2] < -lim / (__s64)(wj->s.w + 8))
		return 0;
	w->x = x;
	w->cs = xs[0];
	w->rs = (__s32)xs[1];
	w->ks = (__s32)xs[2];
	w->ps = wj->s.cg * wj->u.cols / 2;
	w->v = (float *)((__u32 *)wj->v + p * wj->s.cg * ENG_NR / 2);
	w->d = wj->d;
	for (i = 0; i < 6; i++) {
		w->rmask[i] = 0;
		w->kmask[i] = 0;
	}
	for (lane = 0; lane < ENG_NR; lane++) {
		__u64 t = t0 + p * ENG_NR + lane;
		__s64 y0, x0;

		w->off[lane] = 0;
		if (t >= t1)
			continue;
		wino2_origin(wj, t, &y0, &x0);
		w->off[lane] = (__s32)(y0 * xs[1] + x0 * xs[2]);
		for (i = 0; i < 4; i++) {
			if (y0 + i >= 0 && y0 + i < (__s64)wj->s.h)
				w->rmask[i] |= 1u << lane;
			if (x0 + i >= 0 && x0 + i < (__s64)wj->s.w)
				w->kmask[i] |= 1u << lane;
		}
	}
	return 1;
}
#endif

#ifdef ENG_FMA
/* Columns [@c0, @c0 + 32) inside [0, @w), as bits. */
static __u32 wino2_cols(__s64 c0, __u64 w)
{
	__u32 m = 0;
	int e;

	for (e = 0; e < 32; e++)
		if (c0 + e >= 0 && c0 + e < (__s64)w)
			m |= 1u << e;
	return m;
}

/*
 * Panel @p of tiles [@t0, @t1) as vnpu_eng_wino2_rows_bf16() takes it:
 * unit column stride and at most ENG_WINO2_SEGS rows of tiles, else 0.
 */
static int wino2_rows(const struct wino2_job *wj, const float *x,
		      const __s64 *xs, __u64 t0, __u64 t1, __u64 p,
		      struct eng_wino2_in *w)
{
	__u64 lane = 0, n = eng_min(ENG_NR, t1 - t0 - p * ENG_NR), len, t;
	__s64 y0, x0, b;
	__u32 r;

	if (xs[2] != 1)
		return 0;
	w->x = x;
	w->cs = xs[0];
	w->rs = xs[1];
	w->ps = wj->s.cg * wj->u.cols / 2;
	w->v = (__u32 *)wj->v + p * wj->s.cg * ENG_NR / 2;
	w->d = wj->d;
	for (w->nseg = 0; lane < n; w->nseg++, lane += len) {
		struct eng_wino2_seg *sg = &w->seg[w->nseg];

		if (w->nseg == ENG_WINO2_SEGS)
			return 0;
		t = t0 + p * ENG_NR + lane;
		len = eng_min(n - lane, wj->tw - t % wj->tw);
		wino2_origin(wj, t, &y0, &x0);
		b = x0 - 2 * (__s64)lane;
		sg->off = y0 * xs[1] + b;
		sg->m0 = wino2_cols(b, wj->s.w);
		sg->m2 = wino2_cols(b + 2, wj->s.w);
		sg->lanes = (__u16)(((1u << len) - 1) << lane);
		sg->rows = 0;
		for (r = 0; r < 4; r++)
			if (y0 + r >= 0 && y0 + r < (__s64)wj->s.h)
				sg->rows |= 1u << r;
	}
	return 1;
}
#endif

/*
 * V of tiles [@t0, @t1) of the image at @x (channel, row and column
 * strides in @xs), all channels of the group, panel by panel.
 */
static __attribute__((__noinline__))
void wino2_input(struct wino2_job *wj, const float *x, const __s64 *xs,
		 __u64 t0, __u64 t1, const struct vnpu_eng_ctx *ctx)
{
	__u64 p, c;

	for (p = 0; t0 + p * ENG_NR < t1; p++) {
#ifdef ENG_FMA
		struct eng_wino_in w;
		struct eng_wino2_in wr;

		if (wj->native && wino2_rows(wj, x, xs, t0, t1, p, &wr)) {
			wr.cn = wj->s.cg;
			vnpu_eng_wino2_rows_bf16(&wr);
			eng_pause(ctx);
			continue;
		}
		if (wj->native) {
			wino2_in16(wj, x, xs, t0, t1, p, &w);
			w.cn = wj->s.cg;
			vnpu_eng_wino2_in_bf16(&w);
			eng_pause(ctx);
			continue;
		}
#endif
		for (c = 0; c < wj->s.cg; c++)
			wino2_in_f32(wj, x + (__s64)c * xs[0], xs, t0, t1, p, c);
		eng_pause(ctx);
	}
}

/* gemm_a's packer: U's bf16 pairs (@arg: point xi's) widened to f32. */
static void wino2_widen(const void *arg, __u64 m0, __u64 mc, __u64 k0,
			__u64 kc, float *dst)
{
	const struct wino2_job *wj = *(const struct wino2_job *const *)arg;
	const __u16 *u = ((const __u16 *const *)arg)[1];
	__u64 cg = wj->s.cg, even = cg & ~1ull, p, k, r;

	for (p = 0; p * ENG_MR < mc; p++) {
		const __u16 *src = u + (m0 / ENG_MR + p) * cg * ENG_MR;
		float *o = dst + p * kc * ENG_MR;

		for (k = k0; k < k0 + kc; k++, o += ENG_MR)
			for (r = 0; r < ENG_MR; r++)
				o[r] = bf16_to_f32(k < even ?
						   src[k / 2 * 2 * ENG_MR +
						       2 * r + k % 2] :
						   src[k * ENG_MR + r]);
	}
}

#ifdef ENG_FMA
/* The GEMM of point @xi with the AVX512-BF16 tiles, U and V in place. */
static void wino2_gemm_bf16(struct wino2_job *wj, __u64 xi, __u64 m0,
			    __u64 mc, __u64 nt, const struct vnpu_eng_ctx *ctx)
{
	__u64 cg = wj->s.cg, k0, kc;
	const __u16 *u = wj->w + xi * wj->ws + m0 * cg;
	const __u32 *v = (const __u32 *)wj->v + xi * cg * wj->u.cols / 2;
	struct eng_bf16_slice t = { .mc = mc,
				    .nc = eng_div_up(nt, ENG_NR) * ENG_NR,
				    .a_ps = cg * ENG_MR / 2,
				    .b_ps = cg * ENG_NR / 2,
				    .acc = wj->m + xi * wj->u.rows * wj->u.cols,
				    .acc_rs = wj->u.cols,
				    .work = (__u32 *)wj->a };

	for (k0 = 0; k0 < cg; k0 += kc) {
		kc = eng_min(ENG_KC, cg - k0);
		t.kc = kc;
		t.load = k0 != 0;
		t.a = (const __u32 *)(u + k0 * ENG_MR);
		t.b = v + k0 / 2 * ENG_NR;
		vnpu_eng_slice_bf16(&t);
		if (k0 + kc < cg)
			eng_pause(ctx);
	}
}
#endif

/*
 * The 16 products M = U V of rows [@m0, @m0 + @mc) of the group by tiles
 * [0, @nt), whole panels of tiles (V is zero past @nt).
 */
static __attribute__((__noinline__))
void wino2_gemms(struct wino2_job *wj, __u64 m0, __u64 mc, __u64 nt,
		 const struct vnpu_eng_ctx *ctx)
{
	static const struct vnpu_layer_act none = { .func = VNPU_ACT_IDENTITY };
	struct gemm_epi e = { .alpha = 1.0f, .beta = 1.0f, .act = &none };
	struct gemm_out o = { .dt = VNPU_DTYPE_F32, .rs = (__s64)wj->u.cols };
	const void *arg[2] = { wj, 0 };
	struct gemm_a a = { .k = wj->s.cg, .pack = wino2_widen, .arg = arg };
	struct gemm_b b = { .k = wj->s.cg, .n = nt };
	__u64 xi;

	e.avx512 = eng_act_avx512(ctx);
	for (xi = 0; xi < ENG_WINO2_XI; xi++) {
#ifdef ENG_FMA
		if (wj->native) {
			wino2_gemm_bf16(wj, xi, m0, mc, nt, ctx);
			eng_pause(ctx);
			continue;
		}
#endif
		arg[1] = wj->w + xi * wj->ws + m0 * wj->s.cg;
		b.packed = wj->v + xi * wj->s.cg * wj->u.cols;
		o.y = wj->m + xi * wj->u.rows * wj->u.cols;
		gemm_block(&a, &b, 0, mc, 0, eng_div_up(nt, ENG_NR) * ENG_NR,
			   wj->s.cg, &o, &e, &wj->bufs);
		eng_pause(ctx);
	}
}

/*
 * Y = A^T M A of rows [0, @mc) by tiles [0, @nt) into the stage, eight
 * tiles at a time, each row's two outputs of the eight interleaved (the
 * stage and M have room for whole panels of tiles).
 */
static __attribute__((__noinline__))
void wino2_output(struct wino2_job *wj, __u64 mc, __u64 nt)
{
	__u64 cols = wj->u.cols, ps = wj->u.rows * cols, r, t, b, i;
	float *d = wj->d;

	for (r = 0; r < mc; r++)
		for (t = 0; t < nt; t += 8) {
			const float *p = wj->m + r * cols + t;
			float *st = wj->stage + r * 4 * cols + 2 * t;

			/* Down the columns of M, then along the rows. */
			for (b = 0; b < 4; b++)
				wino2_at(p + b * ps, 4 * ps, d + b * 8, 4 * 8);
			for (i = 0; i < 2; i++)
				wino2_at(d + i * 4 * 8, 8, d + 8 * 8 + i * 2 * 8,
					 8);
			for (i = 0; i < 2; i++) {
				v8sf o0 = vload(d + (8 + i * 2) * 8);
				v8sf o1 = vload(d + (9 + i * 2) * 8);

				vstore(st + i * 2 * cols,
				       __builtin_shufflevector(o0, o1, 0, 8, 1, 9,
							       2, 10, 3, 11));
				vstore(st + i * 2 * cols + 8,
				       __builtin_shufflevector(o0, o1, 4, 12, 5, 13,
							       6, 14, 7, 15));
			}
		}
}

/*
 * The stage's rows [0, @mc) (output channels @m0 on) of tiles [@t0, @t1)
 * through the layer's epilogue to image @img, group @g.
 */
static __attribute__((__noinline__))
void wino2_flush(struct wino2_job *wj, __u64 img, __u64 g, __u64 m0,
		 __u64 mc, __u64 t0, __u64 t1, const struct vnpu_eng_ctx *ctx)
{
	struct gemm_flush f = { .acc = wj->stage, .acc_rs = 4 * wj->u.cols,
				.m0 = m0 };
	struct gemm_out o = {};
	struct gemm_epi e;
	float add[ENG_MC];
	__u64 r, tr, i, a, b, oy, ox;
	int has_add = 0;

	conv_epi(wj->l, img, g, &e, &o);
	e.avx512 = eng_act_avx512(ctx);
	f.plain = epi_plain(&o, &e, m0, mc, add, &has_add);
	f.add = has_add ? add : 0;
	f.act = e.act;
	for (r = 0; r < mc; r++)
		for (tr = t0 / wj->tw; tr * wj->tw < t1; tr++) {
			a = eng_max(t0, tr * wj->tw);
			b = eng_min(t1, (tr + 1) * wj->tw);
			ox = (a - tr * wj->tw) * ENG_WINO2_TILE;
			for (i = 0; i < ENG_WINO2_TILE; i++) {
				oy = tr * ENG_WINO2_TILE + i;
				if (oy >= wj->s.oh)
					break;
				flush_seg(&o, &e, &f, r,
					  i * 2 * wj->u.cols + 2 * (a - t0),
					  oy * wj->s.ow + ox,
					  (__u32)eng_min(2 * (b - a),
							 wj->s.ow - ox));
			}
		}
}

/* Splits scratch as eng_wino_scratch() sized it. */
static void wino2_scratch(struct wino2_job *wj, const struct vnpu_eng_ctx *ctx)
{
	__u64 cg = wj->s.cg, rows = wj->u.rows, cols = wj->u.cols;
	float *p = eng_align(ctx->scratch);

	wj->held = (struct wino2_held *)p;
	p = eng_align(p + ENG_ALIGN / 4);
	wj->v = p;
	p = eng_align(p + ENG_WINO2_XI * cg * cols);
	wj->m = p;
	p = eng_align(p + ENG_WINO2_XI * rows * cols);
	wj->stage = p;
	p = eng_align(p + rows * 4 * cols);
	wj->bufs.acc = p;
	p = eng_align(p + ENG_MC * eng_acc_rs(cols));
	wj->d = p;
	p = eng_align(p + ENG_WINO_XI * ENG_NR);
	wj->a = p;
	wj->bufs.a = p;
	wj->bufs.b = 0;
	wj->bufs.bf16 = 0;
	wj->bufs.ctx = ctx;
#ifdef ENG_FMA
	wj->bufs.avx512 = !!(ctx->features & VNPU_ENG_F_AVX512);
#else
	wj->bufs.avx512 = 0;
#endif
}

/*
 * Whether V goes to bf16 pairs for the AVX512-BF16 tiles: their path,
 * and inputs whose offsets fit the gathers' 32-bit indices (the strides
 * decide, so a whole layer takes one path).
 */
static int wino2_native(const struct wino2_job *wj, const __s64 *xs,
			const struct vnpu_eng_ctx *ctx)
{
#ifdef ENG_FMA
	const __s64 lim = 0x7fffffff / 2;

	return eng_bf16_path(ctx->features) &&
	       xs[1] <= lim / (__s64)(wj->s.h + 8) &&
	       xs[1] >= -lim / (__s64)(wj->s.h + 8) &&
	       xs[2] <= lim / (__s64)(wj->s.w + 8) &&
	       xs[2] >= -lim / (__s64)(wj->s.w + 8);
#else
	return 0;
#endif
}

int run_conv_wino2(const struct eng_layer *l, __u64 ub, __u64 ue,
		   const struct vnpu_eng_ctx *ctx)
{
	const struct vnpu_cmd_tensor *x = &l->t[0];
	struct wino2_job wj = { .l = l };
	__u64 u, ntb, mb, ti, img, mi, g, t0, t1, m0, mc;
	__s64 xs[3] = { x->strides[1], x->strides[2], x->strides[3] };

	eng_conv_shape(l, &wj.s);
	eng_wino_unit(&wj.s, ctx->features, &wj.u);
	wj.tw = eng_div_up(wj.s.ow, ENG_WINO2_TILE);
	wj.tiles = eng_wino_tiles(&wj.s);
	wj.ws = eng_div_up(wj.s.mg, ENG_MR) * ENG_MR * wj.s.cg;
	wino2_scratch(&wj, ctx);
	wj.native = wino2_native(&wj, xs, ctx);
	if (!ctx->epoch || wj.held->epoch != ctx->epoch ||
	    wj.held->attrs != l->attrs) {
		wj.held->epoch = ctx->epoch;
		wj.held->attrs = l->attrs;
		wj.held->run = ~0ull;
	}
	ntb = eng_div_up(wj.tiles, wj.u.cols);
	mb = eng_div_up(wj.s.mg, wj.u.rows);
	for (u = ub; u < ue; u++) {
		mi = u % mb;
		ti = (u / mb) % ntb;
		img = (u / (mb * ntb)) % wj.s.n;
		g = u / (mb * ntb * wj.s.n);
		t0 = ti * wj.u.cols;
		t1 = eng_min(t0 + wj.u.cols, wj.tiles);
		m0 = mi * wj.u.rows;
		mc = eng_min(wj.u.rows, wj.s.mg - m0);
		wj.w = (const __u16 *)l->data[1] + g * ENG_WINO2_XI * wj.ws;
		if (u / mb != wj.held->run)
			wino2_input(&wj, (const float *)l->data[0] +
				    (__s64)img * x->strides[0] +
				    (__s64)(g * wj.s.cg) * x->strides[1], xs,
				    t0, t1, ctx);
		wj.held->run = u / mb;
		wino2_gemms(&wj, m0, mc, t1 - t0, ctx);
		wino2_output(&wj, mc, t1 - t0);
		wino2_flush(&wj, img, g, m0, mc, t0, t1, ctx);
	}
	return 0;
}

// SPDX-License-Identifier: GPL-2.0 OR MIT
/**
 * DOC: Winograd F(2x2, 3x3) in bf16
 *
 * The bf16 hint's stride-1 3x3 convolutions (CONV layers of
 * %VNPU_LAYER_F_WINO2, which the compiler sets by shape; on FMA hosts
 * also f32 ones of too few 4x4 tiles, over f32 U read in place as
 * F(4x4, 3x3)'s): each 2x2 tile
 * of outputs of a channel is A^T M A, M the 4x4 sum over input channels
 * of U = G g G^T (bf16, transformed and rounded once at compile time,
 * %VNPU_PACK_WINO2_W) times V = B^T d B, point by point. B^T and A^T hold
 * only 0 and +-1, G halves: F(4x4, 3x3)'s larger points would amplify
 * bf16's rounding of U and V about ten times (engine.rst). The units,
 * parts and scratch are F(4x4, 3x3)'s (vnpu_eng_wino.c) over 16 points.
 *
 * Winograd F(4x2, 3x3) (%VNPU_LAYER_F_WINO42 over %VNPU_PACK_WINO42_W,
 * on larger maps) is the same with tiles of 4 output rows by 2 columns:
 * 6x4 input tiles, 24 points for 8 outputs (3 multiply-adds an output
 * rather than 4), F(4, 3) down the columns on the points 0, +-1, 1/2, -2
 * and infinity (ENG_WINO42_BT(), ENG_WINO42_AT(): entries up to 5 and 8,
 * about twice F(2x2, 3x3)'s rounding error) and F(2, 3) along the rows.
 * The shape's wh and ww tell the kinds apart.
 *
 * On the AVX512-BF16 path V is rounded to bf16 pairs as it is
 * transformed (vnpu_eng_wino2_in_bf16()), once per value, and the 16 (24)
 * GEMMs run the 12x32 vdpbf16ps tiles over U and V in place; elsewhere V
 * stays f32, U widens a slice at a time, and the f32 micro-kernels run
 * (the f32 layer on the rounded U, as every widening path). The
 * transforms are fixed sequences of float adds, subtractions and
 * multiplies (no fused multiply-add), rows first, so every path of one
 * kind gives the same bits whatever the split. Built per ISA, on
 * vnpu_eng_gemm.c's blocks.
 */
#include "vnpu_eng_gemm_kern.h"

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

/*
 * F(4, 3)'s B^T down the columns on eight lanes, in place over six
 * vectors @ds floats apart (ENG_WINO42_BT()).
 */
static void wino42_bt(float *p, __u32 ds)
{
	v8sf o[6];
	int i;

	ENG_WINO42_BT(v8sf, vload(p), vload(p + ds), vload(p + 2 * ds),
		      vload(p + 3 * ds), vload(p + 4 * ds), vload(p + 5 * ds),
		      o);
	for (i = 0; i < 6; i++)
		vstore(p + i * ds, o[i]);
}

/*
 * F(4, 3)'s A^T on eight lanes: six vectors at @p, @ps floats apart, to
 * four at @o, @os apart (ENG_WINO42_AT()).
 */
static void wino42_at(const float *p, __u64 ps, float *o, __u32 os)
{
	v8sf y[4];
	int i;

	ENG_WINO42_AT(v8sf, vload(p), vload(p + ps), vload(p + 2 * ps),
		      vload(p + 3 * ps), vload(p + 4 * ps), vload(p + 5 * ps),
		      y);
	for (i = 0; i < 4; i++)
		vstore(o + i * os, y[i]);
}

/*
 * V = B^T d B of panel @p of tiles [@t0, @t1) of channel @c into f32
 * panels, eight lanes at a time (tiles past @t1 zero): input tiles of
 * wh + 2 rows (4, or F(4x2, 3x3)'s 6) by 4 columns.
 */
static void wino2_in_f32(struct wino_part *wp, const float *x,
			 const __s64 *xs, __u64 t0, __u64 t1, __u64 p, __u64 c)
{
	__u64 cg = wp->s.cg, ps = wp->vs, h, i;
	__u64 rh = wp->s.wh + 2, xn = eng_wino_xi(&wp->s);
	float *d = wp->d, *v = wp->v + p * cg * ENG_NR + c * ENG_NR;
	__s64 y0, x0, r, k;
	__u32 lane;

	for (lane = 0; lane < ENG_NR; lane++) {
		__u64 t = t0 + p * ENG_NR + lane;

		for (i = 0; i < xn; i++)
			d[i * ENG_NR + lane] = 0.0f;
		if (t >= t1)
			continue;
		wino_origin(wp, t, &y0, &x0);
		for (r = 0; r < (__s64)rh; r++)
			for (k = 0; k < 4; k++)
				if (y0 + r >= 0 && y0 + r < (__s64)wp->s.h &&
				    x0 + k >= 0 && x0 + k < (__s64)wp->s.w)
					d[(r * 4 + k) * ENG_NR + lane] =
						x[(y0 + r) * xs[1] + (x0 + k) * xs[2]];
	}
	/* Along the rows, then down the columns. */
	for (h = 0; h < ENG_NR; h += 8) {
		for (i = 0; i < rh; i++)
			wino2_bt(d + i * 4 * ENG_NR + h, ENG_NR);
		for (i = 0; i < 4; i++) {
			if (rh == 6)
				wino42_bt(d + i * ENG_NR + h, 4 * ENG_NR);
			else
				wino2_bt(d + i * ENG_NR + h, 4 * ENG_NR);
		}
		for (i = 0; i < xn; i++)
			vstore(v + i * ps + h, vload(d + i * ENG_NR + h));
	}
}

#ifdef ENG_FMA
/*
 * Words between the points of V in bf16 pairs: a unit's pairs of every
 * channel, then ENG_WINO_VPAD words (a line), as f32 V's wp->vs. A point's
 * pairs of 32 channels are 4 KiB, so without the line every point of a
 * channel pair's stores lay in one L1 set (24 of them under F(4x2, 3x3)
 * for 8 ways), and the input transform wrote them back to L2 as it went.
 */
static __u64 wino2_vps(const struct wino_part *wp)
{
	return wp->s.cg * wp->u.cols / 2 + ENG_WINO_VPAD;
}

/* Floats of a row of wino2_in_rows()'s copy before padded column 0. */
#define WINO2_ROW_LEAD	16

/*
 * Whether the copy of panel @p's input rows (of tiles [@t0, @t1)) fits
 * wp->tail and the rows are dense (wino2_in_rows()): its rows, their
 * floats.
 */
static int wino2_rows_fit(const struct wino_part *wp, __u64 t0, __u64 t1,
			  __u64 p, __u64 *nr, __u64 *rw)
{
	__u64 ta = t0 + p * ENG_NR, tb = eng_min(ta + ENG_NR, t1) - 1;

	*nr = wp->s.wh * (tb / wp->tw - ta / wp->tw) + wp->s.wh + 2;
	*rw = eng_div_up(WINO2_ROW_LEAD + 2 * wp->tw + 18, 8) * 8;
	return wp->xs[2] == 1 && *nr * *rw <= ENG_WINO_XI * ENG_WINO_BUF;
}

/* @n floats from @x to @o, eight at a time, then one at a time. */
static inline void wino2_copy(float *o, const float *x, __u64 n)
{
	__u64 i;

	for (i = 0; i + 8 <= n; i += 8)
		vstore(o + i, vload(x + i));
	for (; i < n; i++)
		o[i] = x[i];
}

/*
 * Columns k = 0..3 of eight neighbouring tiles whose rows start two
 * floats apart at @q: lane l of @v[k] is @q[2 l + k] (the even and the
 * odd floats of @q[0..15], then of @q[2..17]).
 */
static __attribute__((__always_inline__)) inline
void wino2_deint(const float *q, v8sf *v)
{
	v8sf a0 = vload(q), a1 = vload(q + 8), b0 = vload(q + 2);
	v8sf b1 = vload(q + 10);

	v[0] = __builtin_shufflevector(a0, a1, 0, 2, 4, 6, 8, 10, 12, 14);
	v[1] = __builtin_shufflevector(a0, a1, 1, 3, 5, 7, 9, 11, 13, 15);
	v[2] = __builtin_shufflevector(b0, b1, 0, 2, 4, 6, 8, 10, 12, 14);
	v[3] = __builtin_shufflevector(b0, b1, 1, 3, 5, 7, 9, 11, 13, 15);
}

/*
 * V of panel @p of tiles [@t0, @t1) on AVX2, channel after channel, as
 * wino2_in_f32() computes it: the input rows the panel's tiles read are
 * copied zero-padded to wp->tail (@nr rows of @rw floats, padded column
 * j at WINO2_ROW_LEAD + j), where the tiles of a tile row start two
 * floats apart, so a row of eight tiles' inputs is four loads and two
 * deinterleaves (wino2_deint()), lanes of other tile rows and past the
 * panel's tiles taken from their own run or zero; each row is then
 * transformed in registers, then down the columns straight to V, half a
 * panel at a time (as wino_in_rows()). The same values and operations:
 * the same bits.
 */
static void wino2_in_rows(struct wino_part *wp, const float *x,
			  const __s64 *xs, __u64 t0, __u64 t1, __u64 p,
			  __u64 nr, __u64 rw)
{
	const struct vnpu_layer_conv *a = wp->l->attrs;
	const v8si iota = { 0, 1, 2, 3, 4, 5, 6, 7 };
	__u64 cg = wp->s.cg, ps = wp->vs, wh = wp->s.wh;
	__u64 ta = t0 + p * ENG_NR, tn = eng_min(ENG_NR, t1 - ta);
	__u64 ty0 = ta / wp->tw, lo = a->pad_begin[1], n = wp->s.w, c, j;
	__s64 y0 = (__s64)(ty0 * wh) - a->pad_begin[0];
	int rh = (int)wh + 2, ns[2], h, r, k, e;
	struct wino_seg sg[2][8];
	v8sf d[24];
	float *buf = wp->tail;

	wino_segs(wp, ta, tn, rw, WINO2_ROW_LEAD, sg, ns);
	/* The copy's padding: zeros, which no channel's copy overwrites. */
	zero_f32(buf, nr * rw);
	for (c = 0; c < cg; c++) {
		const float *xc = x + (__s64)c * xs[0];
		float *v = wp->v + p * cg * ENG_NR + c * ENG_NR;

		for (j = 0; j < nr; j++)
			if (y0 + (__s64)j >= 0 && y0 + (__s64)j < (__s64)wp->s.h)
				wino2_copy(buf + j * rw + WINO2_ROW_LEAD + lo,
					   xc + (y0 + (__s64)j) * xs[1], n);
		for (h = 0; h < 2; h++) {
			/* Along the rows (wino2_bt()). */
			for (r = 0; r < rh; r++) {
				v8sf t[4] = {}, u[4];

				for (e = 0; e < ns[h]; e++) {
					v8si m = (iota >= sg[h][e].lo) &
						 (iota < sg[h][e].hi);

					wino2_deint(buf + sg[h][e].at +
						    (__u64)r * rw, u);
					for (k = 0; k < 4; k++)
						t[k] = (v8sf)(((v8si)u[k] & m) |
							      ((v8si)t[k] & ~m));
				}
				d[r * 4] = t[0] - t[2];
				d[r * 4 + 1] = t[1] + t[2];
				d[r * 4 + 2] = t[2] - t[1];
				d[r * 4 + 3] = t[1] - t[3];
			}
			/* Down the columns (wino2_bt(), wino42_bt()). */
			for (k = 0; k < 4; k++) {
				v8sf o[6];

				if (rh == 6) {
					ENG_WINO42_BT(v8sf, d[k], d[4 + k],
						      d[8 + k], d[12 + k],
						      d[16 + k], d[20 + k], o);
				} else {
					o[0] = d[k] - d[8 + k];
					o[1] = d[4 + k] + d[8 + k];
					o[2] = d[8 + k] - d[4 + k];
					o[3] = d[4 + k] - d[12 + k];
				}
				for (r = 0; r < rh; r++)
					vstore(v + (r * 4 + k) * ps + h * 8,
					       o[r]);
			}
		}
	}
}

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
static int wino2_rows(const struct wino_part *wp, const float *x,
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
	w->ps = wino2_vps(wp);
	w->v = (__u32 *)wp->v + p * wp->s.cg * ENG_NR / 2;
	/* F(4x2, 3x3)'s two channels of 24 points: the kind's own buffer. */
	w->d = wp->s.wh == 4 ? wp->tail : wp->d;
	for (w->nseg = 0; lane < n; w->nseg++, lane += len) {
		struct eng_wino2_seg *sg = &w->seg[w->nseg];

		if (w->nseg == ENG_WINO2_SEGS)
			return 0;
		t = t0 + p * ENG_NR + lane;
		len = eng_min(n - lane, wp->tw - t % wp->tw);
		wino_origin(wp, t, &y0, &x0);
		b = x0 - 2 * (__s64)lane;
		sg->off = y0 * xs[1] + b;
		sg->m0 = wino2_cols(b, wp->s.w);
		sg->m2 = wino2_cols(b + 2, wp->s.w);
		sg->lanes = (__u16)(((1u << len) - 1) << lane);
		sg->rows = 0;
		for (r = 0; r < wp->s.wh + 2; r++)
			if (y0 + r >= 0 && y0 + r < (__s64)wp->s.h)
				sg->rows |= 1u << r;
	}
	return 1;
}
#endif

#ifdef ENG_FMA
/* The row path of @wp's kind over @w. */
static void wino2_rows_bf16(const struct wino_part *wp,
			    const struct eng_wino2_in *w)
{
	if (wp->s.wh == 4)
		vnpu_eng_wino42_rows_bf16(w);
	else
		vnpu_eng_wino2_rows_bf16(w);
}

/*
 * Channels the row path transforms for each panel of a run before the
 * next ones: the rows they read stay in L1 for the panels that share
 * them (a channel's 4x4 tiles overlap their neighbours' by two columns,
 * and a run's panels cover a few rows of tiles), rather than each panel
 * reading them again from a larger cache over all the channels.
 */
#define WINO2_CBLK 8

/*
 * V of tiles [@t0, @t1) as vnpu_eng_wino2_rows_bf16() takes it, a block of
 * WINO2_CBLK channels of every panel at a time; 0 where a panel is not
 * for it (then the panels go one by one).
 */
static int wino2_input_rows(struct wino_part *wp, const float *x,
			    const __s64 *xs, __u64 t0, __u64 t1,
			    const struct vnpu_eng_ctx *ctx)
{
	struct eng_wino2_in wr[ENG_WINO_TILES / ENG_NR];
	__u64 np = eng_div_up(t1 - t0, ENG_NR), cg = wp->s.cg, p, c;

	if (np > ENG_WINO_TILES / ENG_NR)
		return 0;
	for (p = 0; p < np; p++) {
		if (!wino2_rows(wp, x, xs, t0, t1, p, &wr[p]))
			return 0;
		wr[p].cn = cg;
	}
	for (c = 0; c < cg; c += WINO2_CBLK) {
		for (p = 0; p < np; p++) {
			wr[p].c0 = c;
			wr[p].c1 = eng_min(c + WINO2_CBLK, cg);
			wino2_rows_bf16(wp, &wr[p]);
		}
		eng_pause(ctx);
	}
	return 1;
}
#endif

/*
 * V of tiles [@t0, @t1) of the image at @x (channel, row and column
 * strides in @xs), all channels of the group, panel by panel.
 */
static __attribute__((__noinline__))
void wino2_input(struct wino_part *wp, const float *x, const __s64 *xs,
		 __u64 t0, __u64 t1, const struct vnpu_eng_ctx *ctx)
{
	__u64 p, c;

#ifdef ENG_FMA
	if (wp->bufs.bf16 && wino2_input_rows(wp, x, xs, t0, t1, ctx))
		return;
#endif
	for (p = 0; t0 + p * ENG_NR < t1; p++) {
#ifdef ENG_FMA
		struct eng_wino_in w;
		struct eng_wino2_in wr;
		__u64 nr, rw;

		if (wp->bufs.bf16 && wino2_rows(wp, x, xs, t0, t1, p, &wr)) {
			wr.cn = wp->s.cg;
			wr.c0 = 0;
			wr.c1 = wr.cn;
			wino2_rows_bf16(wp, &wr);
			eng_pause(ctx);
			continue;
		}
		if (wp->bufs.bf16) {
			wino_part_in16(wp, p, &w);
			w.ps = wino2_vps(wp);
			w.v = (float *)((__u32 *)wp->v +
					p * wp->s.cg * ENG_NR / 2);
			w.cn = wp->s.cg;
			if (wp->s.wh == 4) {
				w.d = wp->tail;
				vnpu_eng_wino42_in_bf16(&w);
			} else {
				vnpu_eng_wino2_in_bf16(&w);
			}
			eng_pause(ctx);
			continue;
		}
#endif
#ifdef ENG_FMA
		if (wino2_rows_fit(wp, t0, t1, p, &nr, &rw)) {
			wino2_in_rows(wp, x, xs, t0, t1, p, nr, rw);
			eng_pause(ctx);
			continue;
		}
#endif
		for (c = 0; c < wp->s.cg; c++)
			wino2_in_f32(wp, x + (__s64)c * xs[0], xs, t0, t1, p, c);
		eng_pause(ctx);
	}
}

/* U of the unit's group: point xi's panels at + xi * wp->ws. */
static const __u16 *wino2_u(const struct wino_part *wp)
{
	return (const __u16 *)wp->l->data[1] +
	       wp->g * eng_wino_xi(&wp->s) * wp->ws;
}

/* gemm_a's packer: U's bf16 pairs (@arg's wp->ua) widened to f32. */
static void wino2_widen(const void *arg, __u64 m0, __u64 mc, __u64 k0,
			__u64 kc, float *dst)
{
	const struct wino_part *wp = arg;
	const __u16 *u = wp->ua;
	__u64 cg = wp->s.cg, even = cg & ~1ull, p, k, r;

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
static void wino2_gemm_bf16(struct wino_part *wp, __u64 xi, __u64 m0,
			    __u64 mc, __u64 nt, const struct vnpu_eng_ctx *ctx)
{
	__u64 cg = wp->s.cg, k0, kc;
	const __u16 *u = wino2_u(wp) + xi * wp->ws + m0 * cg;
	const __u32 *v = (const __u32 *)wp->v + xi * wino2_vps(wp);
	struct eng_bf16_slice t = { .mc = mc,
				    .nc = eng_div_up(nt, ENG_NR) * ENG_NR,
				    .a_ps = cg * ENG_MR / 2,
				    .b_ps = cg * ENG_NR / 2,
				    .acc = wp->m + xi * wp->u.rows * wp->u.cols,
				    .acc_rs = wp->u.cols,
				    .work = (__u32 *)wp->tail };

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
 * Point @xi's U, from row @m0 on: with the AVX512-BF16 tiles, its GEMM
 * of rows [@m0, @m0 + @mc) by whole panels of tiles [0, @nt) (V is zero
 * past @nt) in place; f32 U in place; else widened to f32 as the GEMM
 * packs it.
 */
static int wino2_point(struct wino_part *wp, struct gemm_a *a, __u64 xi,
		       __u64 m0, __u64 mc, __u64 nt,
		       const struct vnpu_eng_ctx *ctx)
{
#ifdef ENG_FMA
	if (wp->bufs.bf16) {
		wino2_gemm_bf16(wp, xi, m0, mc, nt, ctx);
		return 1;
	}
#endif
	if (wp->l->t[1].dtype == VNPU_DTYPE_F32) {
		a->packed = (const float *)wp->l->data[1] +
			    (wp->g * eng_wino_xi(&wp->s) + xi) * wp->ws +
			    m0 * wp->s.cg;
		a->next = xi + 1 < eng_wino_xi(&wp->s) ? a->packed + wp->ws : 0;
		return 0;
	}
	wp->ua = wino2_u(wp) + xi * wp->ws + m0 * wp->s.cg;
	a->pack = wino2_widen;
	a->arg = wp;
	return 0;
}

#ifdef ENG_FMA
/*
 * Whether the output transform takes the epilogue of the unit's @mc rows
 * too (wp->staged: 1, or 2 with the per-row add, its floats to @add):
 * SiLU, whose flush would otherwise add, store and then read the short
 * runs of outputs once more, with at most a per-row add before it, to
 * f32 outputs (epi_plain() without a residual, no bound).
 */
static int wino2_staged(struct wino_part *wp, __u64 mc, float *add)
{
	struct gemm_out o = {};
	struct gemm_epi e;
	int has_add = 0;

	wp->staged = 0;
	conv_epi(wp->l, wp->img, wp->g, &e, &o);
	if (e.act->func != VNPU_ACT_SILU || e.act->flags || e.r ||
	    !epi_plain(&o, &e, wp->m0, mc, add, &has_add))
		return 0;
	wp->staged = has_add ? 2 : 1;
	return 1;
}
#endif

/*
 * Y = A^T M A of rows [0, @mc) by tiles [0, @nt) into the stage, eight
 * tiles at a time, each row's two outputs of the eight interleaved (the
 * stage and M have room for whole panels of tiles): wh rows of outputs
 * (2, or F(4x2, 3x3)'s 4) from wh + 2 rows of points by 4 columns.
 */
static __attribute__((__noinline__))
void wino2_output(struct wino_part *wp, __u64 mc, __u64 nt)
{
	__u64 cols = wp->u.cols, ps = wp->u.rows * cols, wh = wp->s.wh;
	__u64 r, t, b, i;
	float *d = wp->d, *e = wp->d + 4 * wh * 8;

#ifdef ENG_FMA
	if (wp->bufs.avx512) {
		struct eng_wino2_out o = { .m = wp->m, .stage = wp->stage,
					   .ps = ps, .cols = cols, .mc = mc,
					   .nt = nt, .wh = (__u32)wh };
		float add[ENG_MC];

		o.silu = wino2_staged(wp, mc, add);
		/* Products in bf16: SiLU at bf16's grade (wino_flush()'s). */
		if (o.silu && wp->bufs.bf16)
			o.silu = ENG_ACT_BF16;
		o.add = wp->staged == 2 ? add : 0;
		vnpu_eng_wino2_out16(&o);
		return;
	}
#endif
	for (r = 0; r < mc; r++)
		for (t = 0; t < nt; t += 8) {
			const float *p = wp->m + r * cols + t;
			float *st = wp->stage + r * 2 * wh * cols + 2 * t;

			/* Down the columns of M, then along the rows. */
			for (b = 0; b < 4; b++) {
				if (wh == 4)
					wino42_at(p + b * ps, 4 * ps, d + b * 8,
						  4 * 8);
				else
					wino2_at(p + b * ps, 4 * ps, d + b * 8,
						 4 * 8);
			}
			for (i = 0; i < wh; i++)
				wino2_at(d + i * 4 * 8, 8, e + i * 2 * 8, 8);
			for (i = 0; i < wh; i++) {
				v8sf o0 = vload(e + i * 2 * 8);
				v8sf o1 = vload(e + (i * 2 + 1) * 8);

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
 * Whether V goes to bf16 pairs for the AVX512-BF16 tiles: their path, bf16
 * U, and inputs whose offsets fit the gathers' 32-bit indices (the strides
 * decide, so a whole layer takes one path).
 */
static int wino2_native(const struct wino_part *wp, const __s64 *xs,
			const struct vnpu_eng_ctx *ctx)
{
#ifdef ENG_FMA
	const __s64 lim = 0x7fffffff / 2;

	return eng_bf16_path(ctx->features) &&
	       wp->l->t[1].dtype == VNPU_DTYPE_BF16 &&
	       xs[1] <= lim / (__s64)(wp->s.h + 8) &&
	       xs[1] >= -lim / (__s64)(wp->s.h + 8) &&
	       xs[2] <= lim / (__s64)(wp->s.w + 8) &&
	       xs[2] >= -lim / (__s64)(wp->s.w + 8);
#else
	return 0;
#endif
}

int run_conv_wino2(const struct eng_layer *l, __u64 ub, __u64 ue,
		   const struct vnpu_eng_ctx *ctx)
{
	static const struct wino_kind f2 = {
		.input = wino2_input, .point = wino2_point,
		.output = wino2_output,
	};
	struct wino_part wp;

	wino_part_start(&wp, l, ctx);
	/* bufs.bf16: V in bf16 pairs and the AVX512-BF16 tiles. */
	wp.bufs.bf16 = wino2_native(&wp, wp.xs, ctx);
	wp.bufs.a = wp.tail;
	wino_part_run(&wp, ub, ue, &f2, ctx);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0 OR MIT
/**
 * DOC: Winograd convolution
 *
 * Stride-1 3x3 convolutions as Winograd F(4x4, 3x3) (CONV layers of
 * %VNPU_LAYER_F_WINO, which the compiler sets by shape): each 4x4 tile of
 * outputs of a channel is A^T M A, where the 6x6 M is, point by point,
 * the sum over input channels of the transformed weights U = G g G^T
 * times the transformed input tile V = B^T d B. U comes with the layer
 * (%VNPU_PACK_WINO_W): the runtime transformed it once at compile time
 * with wino_pack_u() below, so the device and the CPU read the same bits.
 * A unit of tiles is 36 GEMMs (one per point) of the output channels by
 * the tiles, of depth C, run by the GEMM's blocks and micro-kernels,
 * between an input and an output transform; the output rows then take
 * the GEMM's epilogue. The
 * transforms are fixed sequences of float adds, subtractions and
 * multiplies (no fused multiply-add) on eight lanes, and each GEMM sums
 * in depth order, so every path gives the same bits whatever the split.
 * Built per ISA, on vnpu_eng_gemm.c's blocks (vnpu_eng_gemm_kern.h).
 */
#include "vnpu_eng_gemm_kern.h"

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
 * struct wino_job - a Winograd part's layer, units and scratch
 * @s: the shape
 * @l: the layer
 * @u: the unit: @u.rows output channels by @u.cols tiles
 * @tw: tiles along a row of outputs
 * @tiles: tiles of an image
 * @held: see struct wino_held
 * @ws: floats between two points' weights (%VNPU_PACK_WINO_W): the
 *	group's rows rounded up to whole panels times C/group
 * @w: the transformed weights of the unit's group: point xi's panels at
 *	@w + xi * @ws, panel p (ENG_MR rows) at + p * cg * ENG_MR
 * @v: the unit's transformed input: point xi's panels at
 *	@v + xi * cg * @u.cols, panel p (ENG_NR tiles) at + p * cg * ENG_NR
 * @m: the 36 products: point xi's row r at @m + (xi * @u.rows + r) * @u.cols
 * @stage: the unit's output rows: channel r's row i of tile t (of the
 *	unit) at @stage + r * 16 * @u.cols + i * 4 * @u.cols + 4 * t
 * @d: a panel's 6x6 input tiles or a row's partial transforms
 * @buf: transforms on their way to @v: point xi's at
 *	+ xi * ENG_WINO_BUF
 * @bufs: the GEMM's accumulator and paths
 */
struct wino_job {
	struct eng_conv_shape s;
	const struct eng_layer *l;
	struct eng_unit u;
	__u64 tw, tiles, ws;
	struct wino_held *held;
	const float *w;
	float *v, *m, *stage, *d, *buf;
	struct gemm_bufs bufs;
};

/*
 * The weights' transform along one axis on eight lanes: three vectors at
 * @g, @gs floats apart, to six at @o, @os apart; G's rows (1/4, 0, 0),
 * -(1, 1, 1)/6, -(1, -1, 1)/6, (1, 2, 4)/24, (1, -2, 4)/24, (0, 0, 1).
 */
static void wino_g(const float *g, __u32 gs, float *o, __u32 os)
{
	v8sf g0 = vload(g), g1 = vload(g + gs), g2 = vload(g + 2 * gs);
	v8sf s = g0 + g2, p = g0 + g2 * 4.0f, q = g1 * 2.0f;

	vstore(o, g0 * 0.25f);
	vstore(o + os, (s + g1) * (-1.0f / 6));
	vstore(o + 2 * os, (s - g1) * (-1.0f / 6));
	vstore(o + 3 * os, (p + q) * (1.0f / 24));
	vstore(o + 4 * os, (p - q) * (1.0f / 24));
	vstore(o + 5 * os, g2);
}

/*
 * The input's transform along one axis on eight lanes, in place over six
 * vectors @ds floats apart: B^T's rows (4, 0, -5, 0, 1, 0),
 * (0, -4, -4, 1, 1, 0), (0, 4, -4, -1, 1, 0), (0, -2, -1, 2, 1, 0),
 * (0, 2, -1, -2, 1, 0), (0, 4, 0, -5, 0, 1).
 */
static void wino_bt(float *p, __u32 ds)
{
	v8sf d0 = vload(p), d1 = vload(p + ds), d2 = vload(p + 2 * ds);
	v8sf d3 = vload(p + 3 * ds), d4 = vload(p + 4 * ds);
	v8sf d5 = vload(p + 5 * ds);
	v8sf a = d4 - d2 * 4.0f, b = d3 - d1 * 4.0f;
	v8sf c = d4 - d2, e = (d3 - d1) * 2.0f;

	vstore(p, (d0 * 4.0f - d2 * 5.0f) + d4);
	vstore(p + ds, a + b);
	vstore(p + 2 * ds, a - b);
	vstore(p + 3 * ds, c + e);
	vstore(p + 4 * ds, c - e);
	vstore(p + 5 * ds, (d1 * 4.0f - d3 * 5.0f) + d5);
}

/*
 * The outputs' transform along one axis on eight lanes: six vectors at
 * @p, @ps floats apart, to four at @o, @os apart; A^T's rows
 * (1, 1, 1, 1, 1, 0), (0, 1, -1, 2, -2, 0), (0, 1, 1, 4, 4, 0),
 * (0, 1, -1, 8, -8, 1).
 */
static void wino_at(const float *p, __u64 ps, float *o, __u32 os)
{
	v8sf m0 = vload(p), m1 = vload(p + ps), m2 = vload(p + 2 * ps);
	v8sf m3 = vload(p + 3 * ps), m4 = vload(p + 4 * ps);
	v8sf m5 = vload(p + 5 * ps);
	v8sf a = m1 + m2, b = m1 - m2, c = m3 + m4, d = m3 - m4;

	vstore(o, (m0 + a) + c);
	vstore(o + os, b + d * 2.0f);
	vstore(o + 2 * os, a + c * 4.0f);
	vstore(o + 3 * os, (b + d * 8.0f) + m5);
}

/* Copies @n floats of each point from @buf (ENG_WINO_BUF apart) to @o. */
static void wino_spread(const float *buf, __u64 n, float *o, __u64 os)
{
	__u64 xi;

	for (xi = 0; xi < ENG_WINO_XI; xi++)
		copy_f32(o + xi * os, buf + xi * ENG_WINO_BUF, n);
}

/*
 * U = G g G^T of the 3x3 kernels at @src (@groups groups of @rows output
 * channels by @cg input channels, dense, row-major) in %VNPU_PACK_WINO_W
 * at @dst, eight (channel, row) pairs a step in the order of the points'
 * panels: the compiler's transform (vnpu_eng_wino_pack(); the host calls
 * it, vnpu.ko never does).
 */
int wino_pack_u(const float *src, __u64 groups, __u64 rows, __u64 cg,
		float *dst)
{
	__u64 n = eng_div_up(rows, ENG_MR) * ENG_MR * cg, g, k0, k, m, c, i, j;
	float g9[9 * 8], t[18 * 8], u[6 * 8];
	const float *p;
	__u32 lane;

	for (g = 0; g < groups; g++)
		for (k0 = 0; k0 < n; k0 += 8) {
			for (lane = 0; lane < 8; lane++) {
				k = k0 + lane;
				m = k / (cg * ENG_MR) * ENG_MR + k % ENG_MR;
				c = k / ENG_MR % cg;
				p = src + ((g * rows + m) * cg + c) * 9;
				for (i = 0; i < 9; i++)
					g9[i * 8 + lane] = k < n && m < rows ?
							   p[i] : 0.0f;
			}
			/* Down the columns, then along the rows. */
			for (i = 0; i < 3; i++)
				wino_g(g9 + i * 8, 3 * 8, t + i * 8, 3 * 8);
			for (i = 0; i < 6; i++) {
				wino_g(t + i * 3 * 8, 8, u, 8);
				for (j = 0; j < 6; j++)
					for (lane = 0; lane < 8 && k0 + lane < n;
					     lane++)
						dst[(g * ENG_WINO_XI + i * 6 + j) *
						    n + k0 + lane] = u[j * 8 + lane];
			}
		}
	return 0;
}

/*
 * The 6x6 input tile of tile @t of channel @c of the image at @x into
 * lane @lane of wj->d (point (r, k) at d[(r * 6 + k) * ENG_NR]), zero
 * outside the input.
 */
static void wino_gather(const struct wino_job *wj, const float *x,
			const __s64 *xs, __u64 t, __u32 lane)
{
	const struct vnpu_layer_conv *a = wj->l->attrs;
	__s64 y0 = (__s64)(t / wj->tw * ENG_WINO_TILE) - a->pad_begin[0];
	__s64 x0 = (__s64)(t % wj->tw * ENG_WINO_TILE) - a->pad_begin[1];
	float *d = wj->d + lane;
	__s64 r, k, r0, r1, k0, k1;

	if (y0 >= 0 && x0 >= 0 && y0 + 6 <= (__s64)wj->s.h &&
	    x0 + 6 <= (__s64)wj->s.w && xs[2] == 1) {
		const float *row = x + y0 * xs[1] + x0;

		for (r = 0; r < 6; r++, row += xs[1])
			for (k = 0; k < 6; k++)
				d[(r * 6 + k) * ENG_NR] = row[k];
		return;
	}
	/* Zeros, then the rows and columns inside X (a short map's all). */
	for (r = 0; r < 36; r++)
		d[r * ENG_NR] = 0.0f;
	r0 = y0 < 0 ? -y0 : 0;
	r1 = eng_min(6, (__s64)wj->s.h - y0);
	k0 = x0 < 0 ? -x0 : 0;
	k1 = eng_min(6, (__s64)wj->s.w - x0);
	for (r = r0; r < r1; r++)
		for (k = k0; k < k1; k++)
			d[(r * 6 + k) * ENG_NR] = x[(y0 + r) * xs[1] +
						    (x0 + k) * xs[2]];
}

#ifdef ENG_FMA
/*
 * Panel @p of tiles [@t0, @t1) as vnpu_eng_wino_in_avx512() takes it, or
 * 0 where an input's offset does not fit its 32-bit indices.
 */
static int wino_in16(const struct wino_job *wj, const float *x,
		     const __s64 *xs, __u64 t0, __u64 t1, __u64 p,
		     struct eng_wino_in *w)
{
	const struct vnpu_layer_conv *a = wj->l->attrs;
	const __s64 lim = 0x7fffffff / 2;
	__u32 lane, i;

	/* |off + r * rs + k * ks| < 2^31 for every tile and point. */
	if (xs[1] > lim / (__s64)(wj->s.h + 8) ||
	    xs[1] < -lim / (__s64)(wj->s.h + 8) ||
	    xs[2] > lim / (__s64)(wj->s.w + 8) ||
	    xs[2] < -lim / (__s64)(wj->s.w + 8))
		return 0;
	w->x = x;
	w->cs = xs[0];
	w->rs = (__s32)xs[1];
	w->ks = (__s32)xs[2];
	w->ps = wj->s.cg * wj->u.cols;
	w->v = wj->v + p * wj->s.cg * ENG_NR;
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
		y0 = (__s64)(t / wj->tw * ENG_WINO_TILE) - a->pad_begin[0];
		x0 = (__s64)(t % wj->tw * ENG_WINO_TILE) - a->pad_begin[1];
		w->off[lane] = (__s32)(y0 * xs[1] + x0 * xs[2]);
		for (i = 0; i < 6; i++) {
			if (y0 + i >= 0 && y0 + i < (__s64)wj->s.h)
				w->rmask[i] |= 1u << lane;
			if (x0 + i >= 0 && x0 + i < (__s64)wj->s.w)
				w->kmask[i] |= 1u << lane;
		}
	}
	return 1;
}
#endif

/*
 * V = B^T d B of tiles [@t0, @t1) of the image at @x (channel stride,
 * row stride, column stride in @xs), all channels of the group, in the
 * GEMMs' panels (tiles past @t1 zero): on the AVX-512 path a panel at a
 * time in sixteen lanes, each point a gather.
 */
static __attribute__((__noinline__))
void wino_input(struct wino_job *wj, const float *x, const __s64 *xs,
		__u64 t0, __u64 t1, const struct vnpu_eng_ctx *ctx)
{
	__u64 cg = wj->s.cg, ps = cg * wj->u.cols, p, c0, cn, c, i, h;
	__u32 lane;

	for (p = 0; t0 + p * ENG_NR < t1; p++) {
#ifdef ENG_FMA
		struct eng_wino_in w;

		if (wj->bufs.avx512 && wino_in16(wj, x, xs, t0, t1, p, &w)) {
			w.cn = cg;
			vnpu_eng_wino_in_avx512(&w);
			eng_pause(ctx);
			continue;
		}
#endif
		for (c0 = 0; c0 < cg; c0 += cn) {
			cn = eng_min(ENG_WINO_BUF / ENG_NR, cg - c0);
			for (c = 0; c < cn; c++) {
				float *o = wj->buf + c * ENG_NR;

				for (lane = 0; lane < ENG_NR; lane++) {
					__u64 t = t0 + p * ENG_NR + lane;

					if (t < t1) {
						wino_gather(wj, x + (__s64)(c0 + c) *
							    xs[0], xs, t, lane);
						continue;
					}
					for (i = 0; i < 36; i++)
						wj->d[i * ENG_NR + lane] = 0.0f;
				}
				/* Along the rows, then down the columns. */
				for (h = 0; h < ENG_NR; h += 8) {
					for (i = 0; i < 6; i++)
						wino_bt(wj->d + i * 6 * ENG_NR + h,
							ENG_NR);
					for (i = 0; i < 6; i++)
						wino_bt(wj->d + i * ENG_NR + h,
							6 * ENG_NR);
					for (i = 0; i < 36; i++)
						vstore(o + i * ENG_WINO_BUF + h,
						       vload(wj->d + i * ENG_NR + h));
				}
			}
			wino_spread(wj->buf, cn * ENG_NR,
				    wj->v + p * cg * ENG_NR + c0 * ENG_NR, ps);
		}
		eng_pause(ctx);
	}
}

/*
 * The 36 products M = U V of rows [@m0, @m0 + @mc) of the group by tiles
 * [0, @nt), M's row r for row @m0 + r. V's tiles past @nt are zeros up to
 * the panel's end: the GEMMs run whole panels, so that no panel's last
 * few columns take the tiles' narrow tail (tail_cols(); M has the room).
 */
static __attribute__((__noinline__))
void wino_gemms(struct wino_job *wj, __u64 m0, __u64 mc, __u64 nt,
		const struct vnpu_eng_ctx *ctx)
{
	static const struct vnpu_layer_act none = { .func = VNPU_ACT_IDENTITY };
	struct gemm_epi e = { .alpha = 1.0f, .beta = 1.0f, .act = &none };
	struct gemm_out o = { .dt = VNPU_DTYPE_F32, .rs = (__s64)wj->u.cols };
	struct gemm_a a = { .k = wj->s.cg };
	struct gemm_b b = { .k = wj->s.cg, .n = nt };
	__u64 xi;

	e.avx512 = eng_act_avx512(ctx);
	for (xi = 0; xi < ENG_WINO_XI; xi++) {
		a.packed = wj->w + xi * wj->ws + m0 * wj->s.cg;
		a.next = xi + 1 < ENG_WINO_XI ? a.packed + wj->ws : 0;
		b.packed = wj->v + xi * wj->s.cg * wj->u.cols;
		o.y = wj->m + xi * wj->u.rows * wj->u.cols;
		gemm_block(&a, &b, 0, mc, 0, eng_div_up(nt, ENG_NR) * ENG_NR,
			   wj->s.cg, &o, &e, &wj->bufs);
		eng_pause(ctx);
	}
}

/*
 * Y = A^T M A of rows [0, @mc) by tiles [0, @nt) into the stage, eight
 * tiles at a time.
 */
static __attribute__((__noinline__))
void wino_output(struct wino_job *wj, __u64 mc, __u64 nt)
{
	__u64 cols = wj->u.cols, ps = wj->u.rows * cols, r, t, b, i, l, j;

	for (r = 0; r < mc; r++)
		for (t = 0; t < nt; t += 8) {
			const float *p = wj->m + r * cols + t;
			float *st = wj->stage + r * 16 * cols + 4 * t;

			/* Down the columns of M, then along the rows. */
			for (b = 0; b < 6; b++)
				wino_at(p + b * ps, 6 * ps, wj->d + b * 8,
					6 * 8);
			for (i = 0; i < 4; i++)
				wino_at(wj->d + i * 6 * 8, 8,
					wj->d + 24 * 8 + i * 4 * 8, 8);
			for (i = 0; i < 4; i++)
				for (l = 0; l < 8 && t + l < nt; l++)
					for (j = 0; j < 4; j++)
						st[i * 4 * cols + 4 * l + j] =
							wj->d[(24 + i * 4 + j) * 8 + l];
		}
}

/*
 * The stage's rows [0, @mc) (output channels @m0 on) of tiles [@t0, @t1)
 * through the layer's epilogue to image @img, group @g: each tile row's
 * run of outputs, cut at the output's right and bottom edges.
 */
static __attribute__((__noinline__))
void wino_flush(struct wino_job *wj, __u64 img, __u64 g, __u64 m0,
		__u64 mc, __u64 t0, __u64 t1,
		const struct vnpu_eng_ctx *ctx)
{
	struct gemm_flush f = { .acc = wj->stage, .acc_rs = 16 * wj->u.cols,
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
			ox = (a - tr * wj->tw) * ENG_WINO_TILE;
			for (i = 0; i < ENG_WINO_TILE; i++) {
				oy = tr * ENG_WINO_TILE + i;
				if (oy >= wj->s.oh)
					break;
				flush_seg(&o, &e, &f, r,
					  i * 4 * wj->u.cols + 4 * (a - t0),
					  oy * wj->s.ow + ox,
					  (__u32)eng_min(4 * (b - a),
							 wj->s.ow - ox));
			}
		}
}

/* Splits scratch as eng_wino_scratch() sized it. */
static void wino_scratch(struct wino_job *wj, const struct vnpu_eng_ctx *ctx)
{
	__u64 cg = wj->s.cg, rows = wj->u.rows, cols = wj->u.cols;
	float *p = eng_align(ctx->scratch);

	wj->held = (struct wino_held *)p;
	p = eng_align(p + ENG_ALIGN / 4);
	wj->v = p;
	p = eng_align(p + ENG_WINO_XI * cg * cols);
	wj->m = p;
	p = eng_align(p + ENG_WINO_XI * rows * cols);
	wj->stage = p;
	p = eng_align(p + rows * 16 * cols);
	wj->bufs.acc = p;
	p = eng_align(p + ENG_MC * eng_acc_rs(cols));
	wj->d = p;
	p = eng_align(p + ENG_WINO_XI * ENG_NR);
	wj->buf = p;
	wj->bufs.a = 0;
	wj->bufs.b = 0;
	wj->bufs.bf16 = 0;
	wj->bufs.ctx = ctx;
#ifdef ENG_FMA
	wj->bufs.avx512 = !!(ctx->features & VNPU_ENG_F_AVX512);
#else
	wj->bufs.avx512 = 0;
#endif
}

int run_conv_wino(const struct eng_layer *l, __u64 ub, __u64 ue,
		  const struct vnpu_eng_ctx *ctx)
{
	const struct vnpu_cmd_tensor *x = &l->t[0];
	struct wino_job wj = { .l = l };
	__u64 u, ntb, mb, ti, img, mi, g, t0, t1, m0, mc;
	__s64 xs[3] = { x->strides[1], x->strides[2], x->strides[3] };

	eng_conv_shape(l, &wj.s);
	eng_wino_unit(&wj.s, ctx->features, &wj.u);
	wj.tw = eng_div_up(wj.s.ow, ENG_WINO_TILE);
	wj.tiles = eng_wino_tiles(&wj.s);
	wj.ws = eng_div_up(wj.s.mg, ENG_MR) * ENG_MR * wj.s.cg;
	wino_scratch(&wj, ctx);
	if (!ctx->epoch || wj.held->epoch != ctx->epoch ||
	    wj.held->attrs != l->attrs) {
		wj.held->epoch = ctx->epoch;
		wj.held->attrs = l->attrs;
		wj.held->run = ~0ull;
	}
	ntb = eng_div_up(wj.tiles, wj.u.cols);
	mb = eng_div_up(wj.s.mg, wj.u.rows);
	/*
	 * The blocks of rows of one run of tiles follow each other: the
	 * parts on one scratch transform that run's input once.
	 */
	for (u = ub; u < ue; u++) {
		mi = u % mb;
		ti = (u / mb) % ntb;
		img = (u / (mb * ntb)) % wj.s.n;
		g = u / (mb * ntb * wj.s.n);
		t0 = ti * wj.u.cols;
		t1 = eng_min(t0 + wj.u.cols, wj.tiles);
		m0 = mi * wj.u.rows;
		mc = eng_min(wj.u.rows, wj.s.mg - m0);
		wj.w = (const float *)l->data[1] + g * ENG_WINO_XI * wj.ws;
		if (u / mb != wj.held->run)
			wino_input(&wj, (const float *)l->data[0] +
				   (__s64)img * x->strides[0] +
				   (__s64)(g * wj.s.cg) * x->strides[1], xs, t0,
				   t1, ctx);
		wj.held->run = u / mb;
		wino_gemms(&wj, m0, mc, t1 - t0, ctx);
		wino_output(&wj, mc, t1 - t0);
		wino_flush(&wj, img, g, m0, mc, t0, t1, ctx);
	}
	return 0;
}

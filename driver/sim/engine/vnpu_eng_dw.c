// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Depthwise convolution: one input and one output channel per group.
 * Built per ISA, with vnpu_eng_gemm.c's epilogue (vnpu_eng_gemm_kern.h).
 *
 * Strides up to ENG_WIN_STRIDE run over windows (eng_dw_windows()): a unit
 * copies the input rows its block of output rows reads, zero-padded and
 * split into stride phases, so that the taps of a run of outputs are runs
 * of one phase plane whatever the stride, and a vector of outputs may
 * span output rows (small maps fill their lanes). Each output is fma(w, x, sum)
 * over the taps in (kh, kw) order from zero, the padding's zeros
 * included: the sum the GEMM gives a convolution of one output channel,
 * and the same bits in every build and lane width. A channel's sums then
 * take the GEMM's epilogue (bias, residual, activation, output type).
 * Larger strides run the direct row kernel.
 */
#include "vnpu_eng_gemm_kern.h"

/* The row kernel in eight lanes (LANE_FMA: software fma in the baseline). */
#define DW_F v8sf
#define DW_LANES 8
#define DW_LD(p) vload(p)
#define DW_ST(p, v) vstore((p), (v))
#define DW_BC(x) vbcast(x)
#define DW_FMA(a, b, c) LANE_FMA(a, b, c)
#define DW(name) dw8_##name
#include "vnpu_eng_dw_row.h"

static float dw_weight(const struct eng_layer *l, __u64 c, __u64 kh, __u64 kw)
{
	const struct vnpu_layer_conv *at = l->attrs;
	const struct vnpu_cmd_tensor *w = &l->t[1];
	__u64 khw = (__u64)at->kernel[0] * at->kernel[1];

	if (at->flags & VNPU_LAYER_F_PACKED)
		return ldf(l->data[1], (__s64)(c * ENG_MR * khw +
					       (w->dtype == VNPU_DTYPE_BF16 ?
						eng_pair_at(kh * at->kernel[1] + kw,
							    0, ENG_MR, khw) :
						(kh * at->kernel[1] + kw) * ENG_MR)),
			   w->dtype);
	if (w->rank == 3)
		return ldf(l->data[1], (__s64)c * w->strides[0] +
			   (__s64)kw * w->strides[2], w->dtype);
	return ldf(l->data[1], (__s64)c * w->strides[0] +
		   (__s64)kh * w->strides[2] + (__s64)kw * w->strides[3],
		   w->dtype);
}

/*
 * The @kt weights of channel @c of a depthwise layer, as f32 at @w, in
 * (kh, kw) order; packed f32 ones (a panel's first row) and dense f32
 * ones (the compiler's, kept unpacked) read directly.
 */
static void dw_weights(const struct eng_layer *l, __u64 c, __u64 kt, float *w)
{
	const struct vnpu_layer_conv *at = l->attrs;
	const struct vnpu_cmd_tensor *t = &l->t[1];
	const float *p = (const float *)l->data[1] + c * ENG_MR * kt;
	__u64 kh, kw, k = 0;

	if ((at->flags & VNPU_LAYER_F_PACKED) && t->dtype == VNPU_DTYPE_F32) {
		for (k = 0; k < kt; k++)
			w[k] = p[k * ENG_MR];
		return;
	}
	if (!(at->flags & VNPU_LAYER_F_PACKED) &&
	    t->dtype == VNPU_DTYPE_F32 && t->rank == 4 &&
	    t->strides[3] == 1 && t->strides[2] == (__s64)at->kernel[1]) {
		p = (const float *)l->data[1] + (__s64)c * t->strides[0];
		for (k = 0; k < kt; k++)
			w[k] = p[k];
		return;
	}
	for (kh = 0; kh < at->kernel[0]; kh++)
		for (kw = 0; kw < at->kernel[1]; kw++)
			w[k++] = dw_weight(l, c, kh, kw);
}

/* Outputs of a depthwise row computed at a time when not stored as f32. */
#define DW_CHUNK 128

/*
 * Depthwise output row @oh of channel @c of image @img, columns [o0, o1)
 * summed in @yr (f32; yr[0] is column o0) before the residual and the
 * activation: bias, then each tap in (kh, kw) order.
 */
static void dw_row(const struct eng_layer *l, const struct eng_conv_shape *s,
		   __u64 img, __u64 c, __u64 oh, __u64 o0, __u64 o1, float *yr)
{
	const struct vnpu_layer_conv *at = l->attrs;
	const struct vnpu_cmd_tensor *x = &l->t[0];
	__s64 xsh = x->rank == 4 ? x->strides[2] : 0;
	__s64 xsw = x->strides[x->rank - 1];
	__s64 xc = (__s64)img * x->strides[0] + (__s64)c * x->strides[1];
	__u64 ow, kh, kw, lo, hi;
	float b0 = 0;

	if (at->flags & VNPU_LAYER_F_BIAS)
		b0 = ldf(l->data[2], (__s64)c * l->t[2].strides[0],
			 l->t[2].dtype);
	for (ow = o0; ow < o1; ow++)
		yr[ow - o0] = b0;
	for (kh = 0; kh < s->kh; kh++) {
		__s64 ih = (__s64)(oh * at->stride[0] + kh * at->dilation[0]) -
			   at->pad_begin[0];

		if (ih < 0 || ih >= (__s64)s->h)
			continue;
		for (kw = 0; kw < s->kw; kw++) {
			__s64 off = (__s64)(kw * at->dilation[1]) -
				    at->pad_begin[1];
			float wv = dw_weight(l, c, kh, kw);

			valid_span(off, at->stride[1], s->w, s->ow, &lo, &hi);
			lo = lo < o0 ? o0 : lo;
			hi = hi > o1 ? o1 : hi;
			if (x->dtype == VNPU_DTYPE_F32 && at->stride[1] == 1 &&
			    xsw == 1) {
				const float *xo = (const float *)l->data[0] + xc +
						  ih * xsh + off;

				for (ow = lo; ow < hi; ow++)
					yr[ow - o0] += wv * xo[ow];
			} else {
				for (ow = lo; ow < hi; ow++)
					yr[ow - o0] += wv *
						ldf(l->data[0], xc + ih * xsh +
						    ((__s64)ow * at->stride[1] +
						     off) * xsw, x->dtype);
			}
		}
	}
}

/* Depthwise output row @r (image, channel, row), columns [@c0, @c1). */
static void dw_block(const struct eng_layer *l, const struct eng_conv_shape *s,
		     __u64 r, __u64 c0, __u64 c1, __u32 ri, float *buf)
{
	const struct vnpu_layer_conv *at = l->attrs;
	const struct vnpu_cmd_tensor *y = &l->t[l->n - 1];
	__u64 img = r / (s->m * s->oh), c = (r / s->oh) % s->m, oh = r % s->oh;
	__s64 yo = (__s64)img * y->strides[0] + (__s64)c * y->strides[1] +
		   (__s64)(oh * s->ow);
	__s64 ro = 0;
	__u64 ow, o0, o1;

	if (at->flags & VNPU_LAYER_F_RESIDUAL)
		ro = (__s64)img * l->t[ri].strides[0] +
		     (__s64)c * l->t[ri].strides[1] + (__s64)(oh * s->ow);
	/* f32 rows are summed in place, others in chunks. */
	for (o0 = c0; o0 < c1; o0 = o1) {
		float *yr = buf;

		o1 = y->dtype == VNPU_DTYPE_F32 ? c1 : eng_min(c1, o0 + DW_CHUNK);
		if (y->dtype == VNPU_DTYPE_F32)
			yr = (float *)l->data[l->n - 1] + yo + o0;
		dw_row(l, s, img, c, oh, o0, o1, yr);
		if (at->flags & VNPU_LAYER_F_RESIDUAL)
			for (ow = o0; ow < o1; ow++)
				yr[ow - o0] += ldf(l->data[ri], ro + (__s64)ow,
						   l->t[ri].dtype);
		act_f32(&at->act, yr, yr, o1 - o0, 0);
		act_bound(&at->act, yr, o1 - o0);
		if (y->dtype != VNPU_DTYPE_F32)
			for (ow = o0; ow < o1; ow++)
				stf(l->data[l->n - 1], yo + (__s64)ow, y->dtype,
				    yr[ow - o0]);
	}
}

/* Depthwise: units of eng_block_units(), whole output rows or blocks of one. */
int run_conv_dw(const struct eng_layer *l, __u64 ub, __u64 ue,
		const struct vnpu_eng_ctx *ctx)
{
	const struct vnpu_layer_conv *at = l->attrs;
	__u32 ri = eng_opt_index(at->flags, VNPU_LAYER_F_RESIDUAL);
	float buf[DW_CHUNK];
	struct eng_conv_shape s;
	struct eng_block b;
	__u64 u, r;

	eng_conv_shape(l, &s);
	for (u = ub; u < ue; u++) {
		eng_block_of(s.n * s.m * s.oh, s.ow, s.kh * s.kw, u, &b);
		for (r = b.r0; r < b.r1; r++)
			dw_block(l, &s, r, b.c0, b.c1, ri, buf);
	}
	return 0;
}

/**
 * struct dw_win - a part's window and what the row kernel reads
 * @t: the row kernel's arguments
 * @in: see struct eng_dw_row
 * @tap: see struct eng_dw_row
 * @w: the current channel's weights
 * @win: the window: phase plane (row phase pr, column phase pc) at
 *	(pr * stride_w + pc) * @plane, its rows @wq floats apart
 * @acc: the unit's sums
 * @wq: see @win
 * @plane: floats of a phase plane
 * @rows: output rows of a unit
 * @reach: phase rows the taps reach past an output row
 * @lo: per column phase, the first column that holds input
 * @hi: per column phase, past the last
 */
struct dw_win {
	struct eng_dw_row t;
	const float **in;
	__u32 *tap;
	float *w, *win, *acc;
	__u64 wq, plane, rows, reach;
	__u64 lo[ENG_WIN_STRIDE], hi[ENG_WIN_STRIDE];
};

static void dw_win_init(const struct eng_conv_shape *s,
			const struct vnpu_layer_conv *at,
			const struct vnpu_eng_ctx *ctx, struct dw_win *g)
{
	__u64 k, q, sw = at->stride[1];

	g->wq = eng_dw_wq(s, at);
	g->rows = eng_dw_unit_rows(s, at, ctx->features);
	g->reach = eng_dw_reach_r(s, at);
	g->plane = (g->rows + g->reach + 1) * g->wq;
	g->in = eng_align(ctx->scratch);
	g->tap = eng_align(g->in + s->kh);
	g->w = eng_align(g->tap + s->kw);
	g->win = eng_align(g->w + s->kh * s->kw);
	g->acc = eng_align(g->win + eng_dw_win_of(s, at, g->rows));
	for (k = 0; k < s->kw; k++) {
		q = k * at->dilation[1];
		g->tap[k] = (__u32)(q % sw * g->plane + q / sw);
	}
	for (k = 0; k < sw; k++)
		valid_span((__s64)k - at->pad_begin[1], sw, s->w, g->wq,
			   &g->lo[k], &g->hi[k]);
	for (k = 0; k < s->kh; k++) {
		q = k * at->dilation[0];
		g->in[k] = g->win + (q % at->stride[0] * sw) * g->plane +
			   q / at->stride[0] * g->wq;
	}
	g->t = (struct eng_dw_row){ .in = g->in, .tap = g->tap, .w = g->w,
				    .acc = g->acc, .kh = s->kh, .kw = s->kw };
	/* What the last vectors read past the planes: finite. */
	zero_f32(g->win + at->stride[0] * sw * g->plane, g->wq + ENG_DW_LANES);
}

/*
 * Padded input row @p (input row p - pad_begin, zeros outside the input)
 * of channel @c of image @img into @d, its row of the first column phase's
 * plane: padded column j at column phase j % stride, column j / stride.
 */
static void dw_fill_row(const struct eng_layer *l,
			const struct eng_conv_shape *s, const struct dw_win *g,
			__u64 img, __u64 c, __s64 p, float *d)
{
	const struct vnpu_layer_conv *at = l->attrs;
	const struct vnpu_cmd_tensor *x = &l->t[0];
	__s64 ih = p - at->pad_begin[0], xsw = x->strides[x->rank - 1], base;
	__u64 pc, sw = at->stride[1];

	base = (__s64)img * x->strides[0] + (__s64)c * x->strides[1] +
	       (x->rank == 4 ? ih * x->strides[2] : 0);
	for (pc = 0; pc < sw; pc++, d += g->plane) {
		__u64 lo = g->lo[pc], hi = g->hi[pc];

		if (ih < 0 || ih >= (__s64)s->h) {
			zero_f32(d, g->wq);
			continue;
		}
		zero_f32(d, lo);
		load_f32(d + lo, elem_at(l->data[0], base +
					 ((__s64)(lo * sw + pc) -
					  at->pad_begin[1]) * xsw, x->dtype),
			 (__s64)sw * xsw, hi - lo, x->dtype);
		zero_f32(d + hi, g->wq - hi);
	}
}

/* The window of output rows [@o0, @o0 + @rows) of channel @c of @img. */
static void dw_fill(const struct eng_layer *l, const struct eng_conv_shape *s,
		    const struct dw_win *g, __u64 img, __u64 c, __u64 o0,
		    __u64 rows)
{
	const struct vnpu_layer_conv *at = l->attrs;
	__u64 i, pr, sh = at->stride[0];
	__s64 p = (__s64)(o0 * sh);

	for (i = 0; i < rows + g->reach; i++)
		for (pr = 0; pr < sh; pr++, p++)
			dw_fill_row(l, s, g, img, c, p, g->win +
				    pr * at->stride[1] * g->plane + i * g->wq);
	/* The next row's leading zeros, which the last row's taps read. */
	if (at->stride[1] == 1)
		for (pr = 0; pr < sh; pr++)
			zero_f32(g->win + pr * g->plane + i * g->wq,
				 at->pad_begin[1]);
}

/*
 * Depthwise over windows: a unit is output rows [o0, o0 + rows) of one
 * channel (or, for long rows, outputs [c0, c0 + cols) of one); its window
 * holds padded input rows from o0 * stride, and its sums are padded
 * columns, which the GEMM's epilogue takes as they are.
 */
int run_conv_dw_window(const struct eng_layer *l, __u64 ub, __u64 ue,
		       const struct vnpu_eng_ctx *ctx)
{
	const struct vnpu_layer_conv *at = l->attrs;
	struct eng_conv_shape s;
	struct gemm_epi e;
	struct gemm_out o = {};
	struct gemm_flush f = {};
	struct dw_win g;
	__u64 u, nb, nc, cols, kt, img, c, o0, c0, rows;
	__u64 wc = (__u64)-1, held = (__u64)-1;
	float add[1];
	int has_add = 0, avx512 = eng_act_avx512(ctx);

	eng_conv_shape(l, &s);
	kt = s.kh * s.kw;
	dw_win_init(&s, at, ctx, &g);
	cols = eng_dw_unit_cols(&s, at, ctx->features);
	nb = eng_div_up(s.oh, g.rows);
	nc = eng_div_up(s.ow, cols);
	f.acc = g.acc;
	for (u = ub; u < ue; u++) {
		img = u / (s.m * nb * nc);
		c = u / (nb * nc) % s.m;
		o0 = u / nc % nb * g.rows;
		c0 = u % nc * cols;
		rows = eng_min(g.rows, s.oh - o0);
		if (c != wc) {
			dw_weights(l, c, kt, g.w);
			wc = c;
		}
		/* A long row's blocks after the first have their window. */
		if (held != u / nc)
			dw_fill(l, &s, &g, img, c, o0, rows);
		held = u / nc;
		g.t.q0 = c0;
		g.t.n = (rows - 1) * g.wq + eng_min(s.ow, c0 + cols) - c0;
		if (avx512)
			vnpu_eng_dw_row_avx512(&g.t);
		else
			dw8_row(&g.t);
		conv_epi(l, img, c, &e, &o);
		e.avx512 = avx512;
		o.wp = g.wq;
		o.ow = s.ow;
		f.acc_rs = g.t.n;
		f.n0 = o0 * g.wq + c0;
		f.plain = epi_plain(&o, &e, 0, 1, add, &has_add);
		f.add = has_add ? add : 0;
		f.act = e.act;
		block_flush(&o, &e, &f, 0, 1, 0, g.t.n);
	}
	return 0;
}

/**
 * struct dwl_unit - a lanes unit's scratch (eng_dw_lanes())
 * @w: tap t's weights of the unit's channels at @w + t * ENG_DWL_LANES
 * @win: padded pixel (ph, pw) at @win + (ph * @wp + pw) * ENG_DWL_LANES
 * @acc: output pixel p's sums at @acc + p * ENG_DWL_LANES
 * @hp: rows of the window
 * @wp: columns of the window
 * @oh0: the first output row whose window rows the window holds
 * @p0: the padded row in the window's first row, @oh0 * stride
 * @hmax: rows of the layer's largest window (eng_dwl_hp())
 * @cols_zero: whether the window's padding columns are zero in its
 *	@hmax rows (dwl_zero_pad())
 */
struct dwl_unit {
	float *w, *win, *acc;
	__u64 hp, wp, oh0, p0, hmax;
	int cols_zero;
};

/*
 * Eight dense channel planes of @w columns from @xc (@xs1 apart), their
 * first @rows rows and @cols columns, to the window at padded pixel
 * (@pt, @pl): the planes as one run of pixels, eight at a time through
 * transpose8(), each pixel then to its place.
 */
static void dwl_fill_planes(const struct dwl_unit *u, const float *xc,
			    __s64 xs1, __u64 w, __u64 rows, __u64 cols,
			    __u64 pt, __u64 pl)
{
	float tb[8 * ENG_DWL_LANES] __attribute__((aligned(32)));
	__u64 hw = rows * w, p, t, ih = 0, iw = 0, j, np;
	float *d;

	for (p = 0; p < hw; p += 8) {
		np = eng_min(8, hw - p);
		if (np == 8)
			transpose8(xc + p, xs1, tb, ENG_DWL_LANES);
		for (t = 0; np < 8 && t < np; t++)
			for (j = 0; j < ENG_DWL_LANES; j++)
				tb[t * ENG_DWL_LANES + j] =
					xc[(__s64)j * xs1 + (__s64)(p + t)];
		for (t = 0; t < np; t++) {
			d = u->win + ((ih + pt) * u->wp + pl + iw) *
				     ENG_DWL_LANES;
			if (iw < cols)
				vstore(d, vload(tb + t * ENG_DWL_LANES));
			if (++iw == w) {
				iw = 0;
				ih++;
			}
		}
	}
}

/*
 * Whether rows of @w (4 to 7) columns, @rows of them, take eight pixels
 * a row at @pl (dwl_fill_short()): padding columns on each side for the
 * 8 - @w pixels past the row, and the rows for them to be read from.
 */
static int dwl_short_rows(const struct dwl_unit *u, __u64 w, __u64 rows,
			  __u64 pl)
{
	__u64 e = 8 - w;

	return w >= 4 && w < 8 && rows >= 2 && pl >= e &&
	       u->wp >= pl + w + e && (rows - 1) * w >= e;
}

/*
 * dwl_fill_planes() for dense planes of rows of @w (dwl_short_rows()),
 * the input's whole width: each row's eight channels by one transpose8()
 * of eight pixels into place, the row's and the next one's first (the
 * last row: the row before's last, then its own), those landing in a
 * padding column zeroed again after.
 */
static void dwl_fill_short(const struct dwl_unit *u, const float *xc,
			   __s64 xs1, __u64 w, __u64 rows, __u64 pt, __u64 pl)
{
	const v8sf z = {};
	__u64 ih, e = 8 - w, j;

	for (ih = 0; ih < rows; ih++) {
		float *d = u->win + ((ih + pt) * u->wp + pl) * ENG_DWL_LANES;

		if (ih + 1 < rows) {
			transpose8(xc + ih * w, xs1, d, ENG_DWL_LANES);
			d += w * ENG_DWL_LANES;
		} else {
			d -= e * ENG_DWL_LANES;
			transpose8(xc + ih * w - e, xs1, d, ENG_DWL_LANES);
		}
		for (j = 0; j < e; j++)
			vstore(d + j * ENG_DWL_LANES, z);
	}
}

/*
 * Zero the window's padding, which dwl_fill() does not write: its rows
 * outside [@pt, @pt + @rows), and its columns outside [@pl, @pl + @cols),
 * the same for every unit of the layer and written by none, in all its
 * rows once (a 7x7 map's unit took a tenth of its time zeroing them).
 */
static void dwl_zero_pad(struct dwl_unit *u, __u64 pt, __u64 pl, __u64 rows,
			 __u64 cols)
{
	const __u64 rw = u->wp * ENG_DWL_LANES;
	__u64 ih;

	zero_f32(u->win, pt * rw);
	zero_f32(u->win + (pt + rows) * rw, (u->hp - pt - rows) * rw);
	if ((pl + cols == u->wp && !pl) || u->cols_zero)
		return;
	for (ih = 0; ih < u->hmax; ih++) {
		zero_f32(u->win + ih * rw, pl * ENG_DWL_LANES);
		zero_f32(u->win + ih * rw + (pl + cols) * ENG_DWL_LANES,
			 (u->wp - pl - cols) * ENG_DWL_LANES);
	}
	u->cols_zero = 1;
}

/*
 * Channels [@c0, @c0 + @nc) of image @img into the window, the rest zero:
 * a whole block's rows eight columns at a time through transpose8(), into
 * their places (a row's last eight columns again, over the run before,
 * when its width is not a multiple of eight), rows of fewer than eight
 * through dwl_fill_planes(); only the padding is zeroed when every lane is
 * written.
 */
static void dwl_fill(const struct eng_layer *l, const struct eng_conv_shape *s,
		     struct dwl_unit *u, __u64 img, __u64 c0, __u64 nc)
{
	const struct vnpu_layer_conv *at = l->attrs;
	const struct vnpu_cmd_tensor *x = &l->t[0];
	const __s64 xs1 = x->strides[1], xs2 = x->strides[2];
	const __s64 xs3 = x->strides[3];
	const __u64 pl = at->pad_begin[1];
	/* Input rows [ih0, ih0 + rows) at window rows from pt on. */
	const __u64 ih0 = u->p0 > at->pad_begin[0] ?
			  u->p0 - at->pad_begin[0] : 0;
	const __u64 pt = ih0 + at->pad_begin[0] - u->p0;
	const __u64 rows = ih0 < s->h ?
			   eng_min(s->h - ih0, u->hp > pt ? u->hp - pt : 0) : 0;
	const __u64 cols = eng_min(s->w, u->wp > pl ? u->wp - pl : 0);
	const float *xc = (const float *)l->data[0] +
			  (__s64)img * x->strides[0] + (__s64)c0 * xs1 +
			  (__s64)ih0 * xs2;
	__u64 j, ih, iw, iv;

	if (nc == ENG_DWL_LANES && xs3 == 1)
		dwl_zero_pad(u, pt, pl, rows, cols);
	else
		zero_f32(u->win, u->hp * u->wp * ENG_DWL_LANES);
	if (nc == ENG_DWL_LANES && xs3 == 1 && xs2 == (__s64)s->w &&
	    cols % 8 && cols < 8) {
		if (cols == s->w && dwl_short_rows(u, cols, rows, pl))
			dwl_fill_short(u, xc, xs1, cols, rows, pt, pl);
		else
			dwl_fill_planes(u, xc, xs1, s->w, rows, cols, pt, pl);
		return;
	}
	iv = nc == ENG_DWL_LANES && xs3 == 1 ? cols / 8 * 8 : 0;
	for (ih = 0; ih < rows; ih++) {
		const float *xr = xc + (__s64)ih * xs2;
		float *d = u->win + ((ih + pt) * u->wp + pl) * ENG_DWL_LANES;

		for (iw = 0; iw < iv; iw += 8)
			transpose8(xr + iw, xs1, d + iw * ENG_DWL_LANES,
				   ENG_DWL_LANES);
		/* A row's last run of eight again, over the one before. */
		if (iv && iv < cols) {
			transpose8(xr + cols - 8, xs1,
				   d + (cols - 8) * ENG_DWL_LANES,
				   ENG_DWL_LANES);
			continue;
		}
		for (j = 0; j < nc; j++)
			for (iw = iv; iw < cols; iw++)
				d[iw * ENG_DWL_LANES + j] =
					xr[(__s64)j * xs1 + (__s64)iw * xs3];
	}
}

/* Pixels of a lanes unit's row summed at once: eight independent sums. */
#define DWL_RUN	8

/**
 * struct dwl_out - a lanes unit's epilogue in registers (dwl_fused())
 * @y: output pixel 0 of the unit's first channel
 * @ys: floats from a channel's output plane to the next one's
 * @end: the pixel past the unit's last row: a run's store of eight may
 *	reach it (the next row's pixels, which that row's run writes after)
 * @bias: lane j: the bias of the unit's channel j, when @add
 * @al: the activation's alpha
 * @be: its beta
 * @func: the activation
 * @add: whether there is a bias
 * @nc: channels of the unit
 */
struct dwl_out {
	float *y;
	__s64 ys;
	__u64 end;
	v8sf bias;
	float al, be;
	__u32 func;
	int add;
	__u64 nc;
};

/*
 * Whether a lanes unit's sums take their epilogue in registers and go to
 * the output planes from there (dwl_put()): the activations act_store()
 * applies in its pass, with no bound. On AVX-512 too, in eight lanes: the
 * 16-lane row kernel (two pixels a vector) and the three passes after it
 * took MobileNetV3_large's 15 depthwise layers 1.07x as long (Zen 4, one
 * CPU, whose 512-bit FMAs issue as two 256-bit halves).
 */
static int dwl_fused(const struct vnpu_layer_act *a)
{
	if (a->flags)
		return 0;
	return a->func == VNPU_ACT_IDENTITY || a->func == VNPU_ACT_RELU ||
	       a->func == VNPU_ACT_LEAKY_RELU || a->func == VNPU_ACT_CLIP ||
	       a->func == VNPU_ACT_HARD_SWISH;
}

/*
 * act_store()'s operations on one pixel's sums: the bias, the activation
 * @func (@o's; a constant where the row is built for one).
 */
static __attribute__((__always_inline__)) inline v8sf
dwl_epi(const struct dwl_out *o, v8sf v, __u32 func)
{
	if (o->add)
		v = v + o->bias;
	switch (func) {
	case VNPU_ACT_RELU:
		return vneg_sel(v, vbcast(0.0f));
	case VNPU_ACT_LEAKY_RELU:
		return vneg_sel(v, v * o->al);
	case VNPU_ACT_CLIP:
		return vclip(v, o->al, o->be);
	case VNPU_ACT_HARD_SWISH:
		return vhswish(v);
	default:
		return v;
	}
}

/*
 * The sums @v of @np pixels from output pixel @p (pixel i's channels in
 * the lanes of v[i]) through the epilogue to the unit's output planes:
 * transposed in registers, eight pixels of a channel a store, for a whole
 * block; a shorter run (a row's last) stores eight too, the pixels past it
 * being the next row's, which its own run writes after; the plane's last
 * run and partial blocks go through a buffer. Inlined into each run
 * length's kernel with FMA (the sums stay in registers); the baseline's
 * emulated vectors would spill, and their frames add up past the kernel
 * build's stack budget, so there it is a call.
 */
#ifdef ENG_FMA
#define DWL_PUT_INLINE __attribute__((__always_inline__)) inline
#else
#define DWL_PUT_INLINE __attribute__((__noinline__))
#endif
static DWL_PUT_INLINE void
dwl_put(const struct dwl_out *o, v8sf *v, int np, __u64 p, __u32 func)
{
	float tb[DWL_RUN * ENG_DWL_LANES] __attribute__((aligned(32)));
	float *y = o->y + (__s64)p;
	__u64 j;
	int i;

	for (i = 0; i < np; i++)
		v[i] = dwl_epi(o, v[i], func);
	if (o->nc == ENG_DWL_LANES && (np == DWL_RUN || p + DWL_RUN <= o->end)) {
		vtranspose8(v);
		for (j = 0; j < ENG_DWL_LANES; j++)
			vstore(y + (__s64)j * o->ys, v[j]);
		return;
	}
	for (i = 0; i < np; i++)
		vstore(tb + i * ENG_DWL_LANES, v[i]);
	for (j = 0; j < o->nc; j++)
		for (i = 0; i < np; i++)
			y[(__s64)j * o->ys + i] = tb[i * ENG_DWL_LANES + j];
}

/* Kernel columns at most of a row whose pixels stay in registers. */
#define DWL_KW_MAX	5

/*
 * The length of an array of vectors only the FMA builds' paths use (a
 * second row's sums, a kernel row's weights: dwl_pixels()), 1 in the
 * baseline: its frames, where its emulated vectors live, would pass the
 * kernel build's stack budget with them.
 */
#ifdef ENG_FMA
#define DWL_FMA_LEN(n)	(n)
#else
#define DWL_FMA_LEN(n)	1
#endif

/*
 * A kernel row's taps of @np pixels' sums @v from @x, with a column
 * stride and dilation of 1 and @kw (a constant up to DWL_KW_MAX) kernel
 * columns whose weights are @wk: each of the @np + @kw - 1 pixels loaded
 * once, to the sums of the @kw outputs that take it, so each sum still
 * takes its taps in (kh, kw) order (a 3x3's row of eight: 13 loads, not
 * 27).
 */
static __attribute__((__always_inline__)) inline void
dwl_krow_s1(v8sf *v, const float *x, const v8sf *wk, int np, int kw)
{
	v8sf xj;
	int j, k;

	for (j = 0; j < np + kw - 1; j++) {
		xj = vload(x + j * ENG_DWL_LANES);
		for (k = kw - 1; k >= 0; k--)
			if (j - k >= 0 && j - k < np)
				v[j - k] = LANE_FMA(wk[k], xj, v[j - k]);
	}
}

/* A tap of weights @wk to @np pixels' sums @v, from @x, @sw floats apart. */
static __attribute__((__always_inline__)) inline void
dwl_tap(v8sf *v, const float *x, v8sf wk, int np, __u64 sw)
{
	int i;

	for (i = 0; i < np; i++)
		v[i] = LANE_FMA(wk, vload(x + i * sw), v[i]);
}

/*
 * Output pixels (@oh, @ow) and the @np - 1 after it in its row (@np a
 * constant up to DWL_RUN: as many sums in flight), and with @nr 2 those
 * below them in the next row (@nr a constant: the second row's sums are
 * @vb), of a lanes unit: each fma(w, x, sum) over the taps in (kh, kw)
 * order from zero, the padding's zeros included, as eng_dw_windows()'s
 * row kernel sums them; to the unit's sums, or through @o's epilogue to
 * the output when set. @sx, when not 0, is the layer's column stride as a
 * constant, its column dilation being 1 (dwl_rows_sx()): the pixels'
 * loads then take constant offsets; @kwc, when not 0, is the kernel's
 * width as a constant, at @sx 1 (dwl_krow_s1()).
 */
static __attribute__((__always_inline__)) inline void
dwl_pixels(const struct vnpu_layer_conv *at, const struct eng_conv_shape *s,
	   const struct dwl_unit *u, const struct dwl_out *o, __u64 oh,
	   __u64 ow, int np, __u32 func, __u32 sx, int kwc, int nr)
{
	v8sf va[DWL_RUN], vb[DWL_FMA_LEN(DWL_RUN)];
	v8sf wk[DWL_FMA_LEN(DWL_KW_MAX)];
	const __u64 rs = at->stride[0] * u->wp * ENG_DWL_LANES;
	const __u64 sw = (sx ? sx : at->stride[1]) * ENG_DWL_LANES;
	const __u64 dk = (sx ? 1 : at->dilation[1]) * ENG_DWL_LANES;
	const __u64 dr = at->dilation[0] * u->wp * ENG_DWL_LANES;
	const float *w = u->w, *x = u->win + ((oh - u->oh0) * at->stride[0] *
					      u->wp + ow * at->stride[1]) *
					     ENG_DWL_LANES;
	float *acc = u->acc + (oh * s->ow + ow) * ENG_DWL_LANES;
	__u64 kh, kw;
	int i;

	/* All of them: dwl_put() transposes eight. */
	for (i = 0; i < DWL_RUN; i++) {
		va[i] = vbcast(0.0f);
		if (nr == 2)
			vb[i] = va[i];
	}
	for (kh = 0; kh < s->kh; kh++, x += dr) {
		if (!kwc) {
			for (kw = 0; kw < s->kw; kw++, w += ENG_DWL_LANES) {
				v8sf w0 = vload(w);

				dwl_tap(va, x + kw * dk, w0, np, sw);
				if (nr == 2)
					dwl_tap(vb, x + rs + kw * dk, w0, np,
						sw);
			}
			continue;
		}
		for (i = 0; i < kwc; i++, w += ENG_DWL_LANES)
			wk[i] = vload(w);
		dwl_krow_s1(va, x, wk, np, kwc);
		if (nr == 2)
			dwl_krow_s1(vb, x + rs, wk, np, kwc);
	}
	if (o) {
		dwl_put(o, va, np, oh * s->ow + ow, func);
		if (nr == 2)
			dwl_put(o, vb, np, (oh + 1) * s->ow + ow, func);
		return;
	}
	for (i = 0; i < np; i++) {
		vstore(acc + i * ENG_DWL_LANES, va[i]);
		if (nr == 2)
			vstore(acc + (s->ow + i) * ENG_DWL_LANES, vb[i]);
	}
}

/*
 * The last @left (below DWL_RUN) pixels from (@oh, @ow) of @nr output
 * rows as one run (dwl_pixels()).
 */
static __attribute__((__always_inline__)) inline void
dwl_tail(const struct vnpu_layer_conv *at, const struct eng_conv_shape *s,
	 const struct dwl_unit *u, const struct dwl_out *o, __u64 oh,
	 __u64 ow, __u64 left, __u32 func, __u32 sx, int kwc, int nr)
{
	switch (left) {
	case 7:
		dwl_pixels(at, s, u, o, oh, ow, 7, func, sx, kwc, nr);
		break;
	case 6:
		dwl_pixels(at, s, u, o, oh, ow, 6, func, sx, kwc, nr);
		break;
	case 5:
		dwl_pixels(at, s, u, o, oh, ow, 5, func, sx, kwc, nr);
		break;
	case 4:
		dwl_pixels(at, s, u, o, oh, ow, 4, func, sx, kwc, nr);
		break;
	case 3:
		dwl_pixels(at, s, u, o, oh, ow, 3, func, sx, kwc, nr);
		break;
	case 2:
		dwl_pixels(at, s, u, o, oh, ow, 2, func, sx, kwc, nr);
		break;
	case 1:
		dwl_pixels(at, s, u, o, oh, ow, 1, func, sx, kwc, nr);
		break;
	}
}

/*
 * Output row @oh of a lanes unit and the @nr - 1 after it (@nr 1 or 2, a
 * constant: the rows' runs summed at once): a short run first (a 7-pixel
 * row is one run: the sums' latency, not the FMAs, bounds short runs),
 * whose stores of eight reach into the next row's first run, written
 * after; then DWL_RUN pixels at a time. To the unit's sums, or through
 * @o when set.
 */
static __attribute__((__always_inline__)) inline void
dwl_row_k(const struct vnpu_layer_conv *at, const struct eng_conv_shape *s,
	  const struct dwl_unit *u, const struct dwl_out *o, __u64 oh,
	  int avx512, __u32 func, __u32 sx, int kwc, int nr)
{
	__u64 ow, runs = s->ow / DWL_RUN * DWL_RUN;

	/* At stride 1 with AVX-512: two pixels a vector. */
	if (avx512 && at->stride[1] == 1 && s->ow >= 2) {
		struct eng_dwl_row t = {
			.x = u->win + (oh - u->oh0) * at->stride[0] * u->wp *
			     ENG_DWL_LANES,
			.w = u->w,
			.acc = u->acc + oh * s->ow * ENG_DWL_LANES,
			.n = s->ow, .kh = s->kh, .kw = s->kw,
			.dk = at->dilation[1] * ENG_DWL_LANES,
			.dr = at->dilation[0] * u->wp * ENG_DWL_LANES,
		};

		vnpu_eng_dwl_row_avx512(&t);
		return;
	}

	dwl_tail(at, s, u, o, oh, runs, s->ow - runs, func, sx, kwc, nr);
	for (ow = 0; ow < runs; ow += DWL_RUN)
		dwl_pixels(at, s, u, o, oh, ow, DWL_RUN, func, sx, kwc, nr);
}

/* Output rows [@oh0, @oh1) of a lanes unit, @nr at a time (dwl_row_k()). */
static __attribute__((__always_inline__)) inline void
dwl_rows_k(const struct vnpu_layer_conv *at, const struct eng_conv_shape *s,
	   const struct dwl_unit *u, const struct dwl_out *o, __u64 oh0,
	   __u64 oh1, int avx512, __u32 func, __u32 sx, int kwc, int nr)
{
	__u64 oh;

	for (oh = oh0; oh + nr <= oh1; oh += nr)
		dwl_row_k(at, s, u, o, oh, avx512, func, sx, kwc, nr);
	if (nr == 2 && oh < oh1)
		dwl_row_k(at, s, u, o, oh, avx512, func, sx, kwc, 1);
}

#ifdef ENG_FMA
/*
 * dwl_rows_k() for @func, with a column dilation of 1 and a column
 * stride of 1 or 2 (every MobileNetV3 depthwise) as a constant: the 7x7
 * layers' runs had spilled their pixels' offsets, three reloads a tap;
 * at stride 1 with 3 or 5 kernel columns, those too (dwl_krow_s1()).
 * Stride 1 takes @nr rows at a time, the others one (two rows of stride
 * 2 took 672 channels 5x5 on 14x14 1.1 times as long on Zen 4).
 */
static __attribute__((__always_inline__)) inline void
dwl_rows_sx(const struct vnpu_layer_conv *at, const struct eng_conv_shape *s,
	    const struct dwl_unit *u, const struct dwl_out *o, __u64 oh0,
	    __u64 oh1, __u32 func, int nr)
{
	int s1 = at->dilation[1] == 1 && at->stride[1] == 1;

	if (s1 && s->kw == 3)
		dwl_rows_k(at, s, u, o, oh0, oh1, 0, func, 1, 3, nr);
	else if (s1 && s->kw == 5)
		dwl_rows_k(at, s, u, o, oh0, oh1, 0, func, 1, 5, nr);
	else if (s1)
		dwl_rows_k(at, s, u, o, oh0, oh1, 0, func, 1, 0, nr);
	else if (at->dilation[1] == 1 && at->stride[1] == 2)
		dwl_rows_k(at, s, u, o, oh0, oh1, 0, func, 2, 0, 1);
	else
		dwl_rows_k(at, s, u, o, oh0, oh1, 0, func, 0, 0, 1);
}

/*
 * dwl_rows_sx() built for MobileNetV3's fused activations, ReLU and
 * HardSwish (no switch in the pixels' epilogue), and for any other.
 */
static __attribute__((__noinline__)) void
dwl_rows_relu(const struct vnpu_layer_conv *at, const struct eng_conv_shape *s,
	      const struct dwl_unit *u, const struct dwl_out *o, __u64 oh0,
	      __u64 oh1)
{
	dwl_rows_sx(at, s, u, o, oh0, oh1, VNPU_ACT_RELU, 1);
}

static __attribute__((__noinline__)) void
dwl_rows_hswish(const struct vnpu_layer_conv *at,
		const struct eng_conv_shape *s, const struct dwl_unit *u,
		const struct dwl_out *o, __u64 oh0, __u64 oh1)
{
	dwl_rows_sx(at, s, u, o, oh0, oh1, VNPU_ACT_HARD_SWISH, 1);
}

/*
 * The same with AVX512VL's 32 vector registers (run with
 * VNPU_ENG_F_AVX512), two rows at a time: twice the sums in flight, each
 * kernel row's weights loaded once for both.
 */
#define DWL_VL __attribute__((__target__("avx512f,avx512vl")))

static DWL_VL __attribute__((__noinline__)) void
dwl_rows_relu_vl(const struct vnpu_layer_conv *at,
		 const struct eng_conv_shape *s, const struct dwl_unit *u,
		 const struct dwl_out *o, __u64 oh0, __u64 oh1)
{
	dwl_rows_sx(at, s, u, o, oh0, oh1, VNPU_ACT_RELU, 2);
}

static DWL_VL __attribute__((__noinline__)) void
dwl_rows_hswish_vl(const struct vnpu_layer_conv *at,
		   const struct eng_conv_shape *s, const struct dwl_unit *u,
		   const struct dwl_out *o, __u64 oh0, __u64 oh1)
{
	dwl_rows_sx(at, s, u, o, oh0, oh1, VNPU_ACT_HARD_SWISH, 2);
}
#endif

/*
 * Output rows [@oh0, @oh1) of a lanes unit: with @zmm the 16-lane row
 * kernel, else in eight lanes, with @vl (VNPU_ENG_F_AVX512) their fused
 * ReLU and HardSwish two rows at a time.
 */
static void dwl_rows(const struct vnpu_layer_conv *at,
		     const struct eng_conv_shape *s, const struct dwl_unit *u,
		     const struct dwl_out *o, __u64 oh0, __u64 oh1, int zmm,
		     int vl)
{
#ifdef ENG_FMA
	if (o && !zmm && o->func == VNPU_ACT_RELU) {
		if (vl)
			dwl_rows_relu_vl(at, s, u, o, oh0, oh1);
		else
			dwl_rows_relu(at, s, u, o, oh0, oh1);
		return;
	}
	if (o && !zmm && o->func == VNPU_ACT_HARD_SWISH) {
		if (vl)
			dwl_rows_hswish_vl(at, s, u, o, oh0, oh1);
		else
			dwl_rows_hswish(at, s, u, o, oh0, oh1);
		return;
	}
#endif
	dwl_rows_k(at, s, u, o, oh0, oh1, zmm,
		   o ? o->func : VNPU_ACT_IDENTITY, 0, 0, 1);
}

/*
 * The epilogue of channels [@c0, @c0 + @nc) of image @img in registers
 * (dwl_fused()): each channel's bias as epi_plain() gives act_store(),
 * all @nc from one call (a channel's epilogue is the next row of its
 * block's: conv_epi()).
 */
static void dwl_out_init(const struct eng_layer *l, __u64 img, __u64 c0,
			 __u64 nc, struct dwl_out *d)
{
	const struct vnpu_layer_conv *at = l->attrs;
	const struct vnpu_cmd_tensor *y = &l->t[l->n - 1];
	struct gemm_epi e;
	struct gemm_out o;
	float add[ENG_DWL_LANES];
	int has_add = 0;
	__u64 j;

	d->y = (float *)l->data[l->n - 1] + (__s64)img * y->strides[0] +
	       (__s64)c0 * y->strides[1];
	d->ys = y->strides[1];
	d->bias = vbcast(0.0f);
	d->al = f32_of(at->act.alpha);
	d->be = f32_of(at->act.beta);
	d->func = at->act.func;
	d->nc = nc;
	conv_epi(l, img, c0, &e, &o);
	epi_plain(&o, &e, 0, nc, add, &has_add);
	d->add = has_add;
	for (j = 0; j < nc; j++)
		d->bias[j] = has_add ? add[j] : 0.0f;
}

/*
 * The @kt taps of a lanes unit's @nc channels from @c0 to @w (tap t's at
 * @w + t * ENG_DWL_LANES), when they are dense f32 rows (the compiler's,
 * dw_weights()) of eight taps or more and the unit has ENG_DWL_LANES
 * channels: eight taps at a time through transpose8(), the last eight
 * again over the run before. Returns 0, having written nothing, otherwise.
 */
static int dwl_weights_dense(const struct eng_layer *l, __u64 c0, __u64 nc,
			     __u64 kt, float *w)
{
	const struct vnpu_layer_conv *at = l->attrs;
	const struct vnpu_cmd_tensor *t = &l->t[1];
	const float *p;
	__u64 k;

	if ((at->flags & VNPU_LAYER_F_PACKED) || t->dtype != VNPU_DTYPE_F32 ||
	    t->rank != 4 || t->strides[3] != 1 ||
	    t->strides[2] != (__s64)at->kernel[1] ||
	    nc != ENG_DWL_LANES || kt < 8)
		return 0;
	p = (const float *)l->data[1] + (__s64)c0 * t->strides[0];
	for (k = 0; k + 8 <= kt; k += 8)
		transpose8(p + k, t->strides[0], w + k * ENG_DWL_LANES,
			   ENG_DWL_LANES);
	if (k < kt)
		transpose8(p + kt - 8, t->strides[0],
			   w + (kt - 8) * ENG_DWL_LANES, ENG_DWL_LANES);
	return 1;
}

/* Bytes of window a lanes unit fills at a time: about half of L2. */
#define DWL_STRIP_BYTES	(192 << 10)

/*
 * Output rows a lanes unit takes at a time: all of them where the window
 * fits DWL_STRIP_BYTES, else strips of rows whose window rows do, filled
 * and summed in turn so that the window stays in cache between the two
 * (the rows two strips share are filled twice). The 16-lane row kernel
 * (@avx512: AVX-512, outputs not dwl_fused()) takes them all.
 */
static __u64 dwl_strip(const struct eng_conv_shape *s,
		       const struct vnpu_layer_conv *at, __u64 wp, __u64 kext,
		       int avx512)
{
	__u64 rows = DWL_STRIP_BYTES / (wp * ENG_DWL_LANES * 4);

	if (avx512 || rows <= kext)
		return s->oh;
	return eng_max(1, (rows - kext) / at->stride[0] + 1);
}

/*
 * Depthwise with a channel per lane: a unit is ENG_DWL_LANES channels of
 * one image. Each channel's sums then go to its output plane and through
 * act_store() there, the epilogue eng_dw_windows()' flush gives them, so
 * both give the same bits; where dwl_fused(), act_store()'s operations
 * run on the sums in registers, which go to the planes from there.
 */
int run_conv_dw_lanes(const struct eng_layer *l, __u64 ub, __u64 ue,
		      const struct vnpu_eng_ctx *ctx)
{
	const struct vnpu_layer_conv *at = l->attrs;
	const struct vnpu_cmd_tensor *y = &l->t[l->n - 1];
	__u64 u, j, k, nb, nr, rows, img, c0, nc, kt, p0, p1, oh0, oh1, r0, r1;
	__u64 strip, kext;
	int has_add = 0, avx512 = eng_act_avx512(ctx);
	int fused = dwl_fused(&at->act), zmm = avx512 && !fused;
	struct eng_conv_shape s;
	struct dwl_out out;
	struct dwl_unit d;
	struct gemm_epi e;
	struct gemm_out o;
	float wt[64], add[1];

	eng_conv_shape(l, &s);
	kt = s.kh * s.kw;
	nb = eng_div_up(s.m, ENG_DWL_LANES);
	rows = eng_dwl_unit_rows(&s, ctx->features);
	nr = eng_div_up(s.oh, rows);
	d.hp = eng_dwl_hp(&s, at);
	d.hmax = d.hp;
	d.cols_zero = 0;
	d.wp = eng_dwl_wp(&s, at);
	d.w = eng_align(ctx->scratch);
	d.win = eng_align(d.w + kt * ENG_DWL_LANES);
	d.acc = eng_align(d.win + d.hp * d.wp * ENG_DWL_LANES);
	kext = (s.kh - 1) * at->dilation[0] + 1;
	strip = dwl_strip(&s, at, d.wp, kext, zmm);
	for (u = ub; u < ue; u++) {
		img = u / nr / nb;
		c0 = u / nr % nb * ENG_DWL_LANES;
		nc = eng_min(ENG_DWL_LANES, s.m - c0);
		r0 = u % nr * rows;
		r1 = eng_min(s.oh, r0 + rows);
		if (!dwl_weights_dense(l, c0, nc, kt, d.w)) {
			zero_f32(d.w, kt * ENG_DWL_LANES);
			for (j = 0; j < nc; j++) {
				dw_weights(l, c0 + j, kt, wt);
				for (k = 0; k < kt; k++)
					d.w[k * ENG_DWL_LANES + j] = wt[k];
			}
		}
		if (fused) {
			dwl_out_init(l, img, c0, nc, &out);
			out.end = r1 * s.ow;
		}
		for (oh0 = r0; oh0 < r1; oh0 = oh1) {
			oh1 = eng_min(r1, oh0 + strip);
			d.oh0 = oh0;
			d.p0 = oh0 * at->stride[0];
			d.hp = (oh1 - oh0 - 1) * at->stride[0] + kext;
			dwl_fill(l, &s, &d, img, c0, nc);
			dwl_rows(at, &s, &d, fused ? &out : 0, oh0, oh1, zmm,
				 avx512);
		}
		if (fused)
			continue;
		/* Whole blocks' sums to their planes 8 pixels at a time. */
		p0 = r0 * s.ow;
		p1 = r1 * s.ow;
		k = p0;
		for (; nc == ENG_DWL_LANES && k + 8 <= p1; k += 8)
			transpose8(d.acc + k * ENG_DWL_LANES, ENG_DWL_LANES,
				   (float *)l->data[l->n - 1] +
				   (__s64)img * y->strides[0] +
				   (__s64)c0 * y->strides[1] + (__s64)k,
				   y->strides[1]);
		for (j = 0; j < nc; j++) {
			float *yc = (float *)l->data[l->n - 1] +
				    (__s64)img * y->strides[0] +
				    (__s64)(c0 + j) * y->strides[1];
			__u64 t;

			for (t = k; t < p1; t++)
				yc[t] = d.acc[t * ENG_DWL_LANES + j];
			conv_epi(l, img, c0 + j, &e, &o);
			epi_plain(&o, &e, 0, 1, add, &has_add);
			act_store(yc + p0, yc + p0, (__u32)(p1 - p0),
				  has_add ? add : 0, 0, e.act, avx512);
		}
	}
	return 0;
}

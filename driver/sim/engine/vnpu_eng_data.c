// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Data movement with index arithmetic: Resize, Pad, Gather and
 * GatherElements, built per ISA (vnpu_eng_isa.h). Each output element is
 * computed from its coordinates.
 */
#include "vnpu_eng_kern.h"

/* ---- RESIZE ---------------------------------------------------------- */

static double resize_coord(const struct vnpu_layer_resize *at, __u32 d,
			   __u64 o, __u64 in, __u64 out)
{
	double s = at->scale[d] ? (double)f32_of(at->scale[d]) :
		   (double)out / (double)in, y = (double)o;

	switch (at->coord) {
	case VNPU_COORD_ASYMMETRIC:
		return y / s;
	case VNPU_COORD_ALIGN_CORNERS:
		return out == 1 ? 0 : y * (double)(in - 1) / (double)(out - 1);
	case VNPU_COORD_PYTORCH_HALF_PIXEL:
		return out > 1 ? (y + 0.5) / s - 0.5 : 0;
	case VNPU_COORD_TF_HALF_PIXEL_FOR_NN:
		return (y + 0.5) / s;
	case VNPU_COORD_HALF_PIXEL_SYMMETRIC: {
		double adj = (double)out / (s * (double)in);
		double off = (double)in / 2 * (1 - adj);

		return off + (y + 0.5) / s - 0.5;
	}
	default:
		return (y + 0.5) / s - 0.5;
	}
}

static __u64 clamp_index(double x, __u64 in)
{
	if (!(x > 0))
		return 0;
	if (x >= (double)(in - 1))
		return in - 1;
	return (__u64)x;
}

/* Keys' cubic convolution kernel with parameter @a at distance @t. */
double cubic_w(double t, double a)
{
	t = m_fabs(t);
	if (t <= 1)
		return ((a + 2) * t - (a + 3)) * t * t + 1;
	if (t < 2)
		return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
	return 0;
}

static void resize_cubic(const struct vnpu_layer_resize *at, double x,
			 __u64 in, struct resize_axis *r)
{
	double f = m_floor(x), t = x - f, a = f32_of(at->cubic_a), sum = 0;
	__u32 i;

	r->n = 4;
	for (i = 0; i < 4; i++) {
		double pos = f - 1 + i;

		r->w[i] = cubic_w(t + 1 - i, a);
		if (at->flags & VNPU_RESIZE_F_EXCLUDE_OUTSIDE &&
		    (pos < 0 || pos > (double)(in - 1)))
			r->w[i] = 0;
		r->idx[i] = clamp_index(pos, in);
		sum += r->w[i];
	}
	if (at->flags & VNPU_RESIZE_F_EXCLUDE_OUTSIDE && sum != 0)
		for (i = 0; i < 4; i++)
			r->w[i] /= sum;
}

static void resize_axis(const struct vnpu_layer_resize *at, __u32 d, __u64 o,
			__u64 in, __u64 out, struct resize_axis *r)
{
	double x, f, w;

	r->n = 1;
	r->w[0] = 1;
	/* What the coordinate gives, without its arithmetic. */
	if (eng_resize_axis_kept(at, d, in, out)) {
		r->idx[0] = o;
		return;
	}
	x = resize_coord(at, d, o, in, out);
	if (at->mode == VNPU_RESIZE_CUBIC) {
		resize_cubic(at, x, in, r);
		return;
	}
	if (at->mode == VNPU_RESIZE_NEAREST) {
		f = m_floor(x);
		switch (at->nearest) {
		case VNPU_NEAREST_ROUND_PREFER_CEIL:
			x = x - f >= 0.5 ? f + 1 : f;
			break;
		case VNPU_NEAREST_FLOOR:
			x = f;
			break;
		case VNPU_NEAREST_CEIL:
			x = m_ceil(x);
			break;
		default:
			x = x - f > 0.5 ? f + 1 : f;
			break;
		}
		r->idx[0] = clamp_index(x, in);
		return;
	}
	if (x < 0)
		x = 0;
	if (x > (double)(in - 1))
		x = (double)(in - 1);
	f = m_floor(x);
	r->idx[0] = clamp_index(f, in);
	w = x - f;
	if (r->idx[0] + 1 < in && w != 0) {
		r->n = 2;
		r->w[0] = 1 - w;
		r->idx[1] = r->idx[0] + 1;
		r->w[1] = w;
	}
}

/* The input offset of the taps @pos of axes [0, @axes). */
static __s64 resize_tap_offset(const struct vnpu_cmd_tensor *x,
			       const struct resize_axis *ax, const __u32 *pos,
			       __u32 axes)
{
	__s64 off = 0;
	__u32 d;

	for (d = 0; d < axes; d++)
		off += (__s64)ax[d].idx[pos[d]] * x->strides[d];
	return off;
}

/* The product of the weights of taps @pos of axes [0, @axes), from 1. */
static float resize_tap_weight(const struct resize_axis *ax, const __u32 *pos,
			       __u32 axes)
{
	double w = 1;
	__u32 d;

	for (d = 0; d < axes; d++)
		w *= ax[d].w[pos[d]];
	return (float)w;
}

/*
 * Outputs [@lo, @hi) in flat order, each from its coordinates: the
 * definition, which the tables below compute too. In float, from inputs
 * widened exactly: for each combination k of the outer axes' taps (every
 * axis but the innermost; axis 0 the fastest), h_k sums the inner axis's
 * taps in order (w_0 x_0, then + w_j x_j); then y = W_0 h_0, then + W_k
 * h_k in order, W_k the product of the combination's weights. Weights are
 * computed in double and rounded to float once (W_k: the product).
 * Nearest: y is its input element.
 */
static void resize_elems(const struct eng_layer *l, __u64 lo, __u64 hi)
{
	const struct vnpu_layer_resize *at = l->attrs;
	const struct vnpu_cmd_tensor *x = &l->t[0], *y = &l->t[1];
	struct resize_axis ax[VNPU_MAX_DIMS];
	__u64 coord[VNPU_MAX_DIMS], e;
	__u32 d, j, r = x->rank, in = r ? r - 1 : 0, pos[VNPU_MAX_DIMS] = {};
	__s64 xs = r ? x->strides[in] : 0;

	if (lo < hi)
		coords_of(y, lo, coord);
	for (e = lo; e < hi; e++, coords_next(y, coord)) {
		__s64 yo = offset_of(y, coord), base;
		float acc = 0, h;
		int first = 1;

		for (d = 0; d < r; d++)
			resize_axis(at, d, coord[d], x->dims[d], y->dims[d],
				    &ax[d]);
		if (!r || at->mode == VNPU_RESIZE_NEAREST) {
			stf(l->data[1], yo, y->dtype,
			    ldf(l->data[0], resize_tap_offset(x, ax, pos, r),
				x->dtype));
			continue;
		}
		for (;;) {
			base = resize_tap_offset(x, ax, pos, in);
			h = (float)ax[in].w[0] *
			    ldf(l->data[0], base + (__s64)ax[in].idx[0] * xs,
				x->dtype);
			for (j = 1; j < ax[in].n; j++)
				h = h + (float)ax[in].w[j] *
				    ldf(l->data[0],
					base + (__s64)ax[in].idx[j] * xs,
					x->dtype);
			h = resize_tap_weight(ax, pos, in) * h;
			acc = first ? h : acc + h;
			first = 0;
			for (d = 0; d < in && ++pos[d] == ax[d].n; d++)
				pos[d] = 0;
			if (d == in)
				break;
		}
		stf(l->data[1], yo, y->dtype, acc);
	}
}

/*
 * A part's tables, in its scratch (eng_resize_scratch()): the taps of a
 * run of up to tb->span output columns (the innermost axis), tap j of
 * column c with weight w[j * cols + c] and input offset off[j * cols + c],
 * n[c] of them live (0 in the columns past the run); and up to
 * ENG_RESIZE_ROW_TAPS input rows resized along the innermost axis (the
 * h_k of resize_elems() over the run's columns), kept while the run's
 * next output rows read them again (upsampling's neighbouring rows share
 * input rows), the least recently used one replaced.
 */
struct resize_tab {
	struct resize_state *st;
	/*
	 * The taps of the last outer axis by output index, filled as rows
	 * need them (hknown[i]), where it has up to ENG_RESIZE_COLS outputs;
	 * NULL otherwise: the rows of a plane take each one in turn.
	 */
	struct resize_axis *hax;
	__u8 *hknown;
	float *w;
	__s64 *off;
	__s32 *n;
	float *rows;
	__u32 slots;	/* rows in use: twice a row's combinations */
	__u64 clock;
	__u64 cols;	/* a row's floats: span rounded up to 8, and 8 */
	__u64 span;	/* the most columns a run has */
	__u64 width;	/* the current run's columns */
	__u32 taps;	/* the most a column of the run has */
	/*
	 * 0, or 1 + p when column c reads input column (c + p) / 2 of the
	 * first's, one tap each, along a dense axis: nearest 2x upsampling.
	 */
	__u32 pairs;
	/* The innermost axis keeps its size and x is dense f32 along it. */
	int keep;
	/*
	 * Every axis but the last two keeps its size, whose taps hax holds:
	 * a row's combinations are the taps of the last outer axis alone.
	 */
	int plane;
	__s64 lo;	/* the lowest live tap's offset */
};

static void resize_tab_init(struct resize_tab *tb, const struct eng_layer *l,
			    void *scratch)
{
	const struct vnpu_cmd_tensor *y = &l->t[1];
	__u64 i;

	tb->cols = eng_resize_cols(&l->t[1]);
	tb->span = tb->cols - 8;
	tb->st = eng_align(scratch);
	tb->st->known = 0;
	tb->slots = (__u32)eng_min(ENG_RESIZE_ROW_TAPS,
				   2 * eng_resize_row_taps(&l->t[0], &l->t[1],
							   l->attrs));
	tb->w = (float *)(tb->st + 1);
	tb->off = (__s64 *)(tb->w + 4 * tb->cols);
	tb->n = (__s32 *)(tb->off + 4 * tb->cols);
	tb->rows = (float *)(tb->n + tb->cols);
	tb->hax = (struct resize_axis *)(tb->rows + ENG_RESIZE_ROW_TAPS *
					 tb->cols);
	tb->hknown = (__u8 *)(tb->hax + ENG_RESIZE_COLS);
	tb->plane = 0;
	if (y->rank < 2 || y->dims[y->rank - 2] > ENG_RESIZE_COLS) {
		tb->hax = (struct resize_axis *)0;
		return;
	}
	for (i = 0; i < y->dims[y->rank - 2]; i++)
		tb->hknown[i] = 0;
	tb->plane = 1;
	for (i = 0; i + 2 < y->rank; i++)
		tb->plane &= eng_resize_axis_kept(l->attrs, (__u32)i,
						  l->t[0].dims[i], y->dims[i]);
}

/* Sets tb->pairs for the table's first @n columns, @xs apart in the input. */
static void resize_tab_pairs(struct resize_tab *tb, __s64 xs, __u64 n)
{
	__u64 c, p;

	tb->pairs = 0;
	if (xs != 1 || n < 2 || tb->taps != 1)
		return;
	p = tb->off[1] != tb->off[0];
	for (c = 0; c < n; c++)
		if (tb->off[c] - tb->off[0] != (__s64)((c + p) / 2))
			return;
	tb->pairs = (__u32)p + 1;
}

/* Columns [@c0, @c1) of the output, at most tb->span of them. */
static void resize_tab_fill(struct resize_tab *tb, const struct eng_layer *l,
			    __u64 c0, __u64 c1)
{
	const struct vnpu_layer_resize *at = l->attrs;
	const struct vnpu_cmd_tensor *x = &l->t[0], *y = &l->t[1];
	__u32 d = x->rank - 1, j, s;
	struct resize_axis ax;
	int have = 0;
	__u64 c;

	tb->taps = 1;
	tb->lo = 0;
	tb->width = c1 - c0;
	for (c = 0; c < tb->cols; c++) {
		ax.n = 0;
		if (c0 + c < c1)
			resize_axis(at, d, c0 + c, x->dims[d], y->dims[d], &ax);
		tb->n[c] = (__s32)ax.n;
		if (ax.n > tb->taps)
			tb->taps = ax.n;
		for (j = 0; j < 4; j++) {
			tb->w[j * tb->cols + c] = j < ax.n ? (float)ax.w[j] : 0;
			tb->off[j * tb->cols + c] = j < ax.n ?
				(__s64)ax.idx[j] * x->strides[d] : 0;
			if (j < ax.n && (!have ||
					 tb->off[j * tb->cols + c] < tb->lo))
				tb->lo = tb->off[j * tb->cols + c];
			have |= j < ax.n;
		}
	}
	/* Dead taps read a live one's input (and their weight is masked). */
	for (c = 0; c < tb->cols; c++)
		for (j = (__u32)tb->n[c]; j < 4; j++)
			tb->off[j * tb->cols + c] = tb->lo;
	resize_tab_pairs(tb, x->strides[d], c1 - c0);
	tb->keep = eng_resize_axis_kept(at, d, x->dims[d], y->dims[d]) &&
		   x->strides[d] == 1 && x->dtype == VNPU_DTYPE_F32;
	tb->clock = 0;
	for (s = 0; s < ENG_RESIZE_ROW_TAPS; s++)
		tb->st->used[s] = 0;
}

/*
 * The combinations of the outer axes' taps of one output row, in the
 * order the sum takes them (axis 0 fastest), each with its input offset
 * and its weight W_k; 0 when there are more than ENG_RESIZE_ROW_TAPS.
 */
struct resize_row {
	__s64 base[ENG_RESIZE_ROW_TAPS];
	float w[ENG_RESIZE_ROW_TAPS];
	__u32 k;
};

/* The taps of output index @o of axis @d into st->ax[d], from tables. */
static void resize_outer_axis(const struct eng_layer *l,
			      const struct resize_tab *tb, __u32 d, __u64 o)
{
	const struct vnpu_cmd_tensor *x = &l->t[0], *y = &l->t[1];
	struct resize_state *st = tb->st;

	if ((st->known >> d & 1) && st->coord[d] == o)
		return;
	st->coord[d] = o;
	st->known |= 1u << d;
	if (!tb->hax || d + 2 != x->rank) {
		resize_axis(l->attrs, d, o, x->dims[d], y->dims[d], &st->ax[d]);
		return;
	}
	if (!tb->hknown[o]) {
		resize_axis(l->attrs, d, o, x->dims[d], y->dims[d], &tb->hax[o]);
		tb->hknown[o] = 1;
	}
	st->ax[d] = tb->hax[o];
}

static int resize_row_taps(const struct eng_layer *l,
			   const struct resize_tab *tb, const __u64 *coord,
			   struct resize_row *rw)
{
	const struct vnpu_cmd_tensor *x = &l->t[0];
	const struct resize_axis *ax = tb->st->ax;
	__u32 d, r = x->rank - 1, pos[VNPU_MAX_DIMS] = {};

	if (tb->plane) {
		/*
		 * The kept axes' one tap each (coordinate, weight 1), the last
		 * outer axis's in order: the offsets and products below.
		 */
		__s64 base = 0;

		for (d = 0; d + 1 < r; d++)
			base += (__s64)coord[d] * x->strides[d];
		resize_outer_axis(l, tb, r - 1, coord[r - 1]);
		for (rw->k = 0; rw->k < ax[r - 1].n; rw->k++) {
			rw->base[rw->k] = base + (__s64)ax[r - 1].idx[rw->k] *
					  x->strides[r - 1];
			rw->w[rw->k] = (float)ax[r - 1].w[rw->k];
		}
		return 1;
	}
	rw->k = 1;
	for (d = 0; d < r; d++) {
		resize_outer_axis(l, tb, d, coord[d]);
		rw->k *= ax[d].n;
	}
	if (rw->k > ENG_RESIZE_ROW_TAPS)
		return 0;
	for (rw->k = 0;; rw->k++) {
		rw->base[rw->k] = resize_tap_offset(x, ax, pos, r);
		rw->w[rw->k] = resize_tap_weight(ax, pos, r);
		for (d = 0; d < r && ++pos[d] == ax[d].n; d++)
			pos[d] = 0;
		if (d == r)
			break;
	}
	rw->k++;
	return 1;
}

/* Eight elements of @x at @base plus @off[0..7], as floats. */
static inline v8sf resize_load8(const void *x, __u32 dt, __s64 base,
				const __s64 *off)
{
	const float *f = (const float *)x + base;

	if (dt == VNPU_DTYPE_F32)
		return (v8sf){ f[off[0]], f[off[1]], f[off[2]], f[off[3]],
			       f[off[4]], f[off[5]], f[off[6]], f[off[7]] };
	return (v8sf){ ldf(x, base + off[0], dt), ldf(x, base + off[1], dt),
		       ldf(x, base + off[2], dt), ldf(x, base + off[3], dt),
		       ldf(x, base + off[4], dt), ldf(x, base + off[5], dt),
		       ldf(x, base + off[6], dt), ldf(x, base + off[7], dt) };
}

/*
 * h of the input row at @base over the run's columns, eight a vector:
 * the inner taps in order, a column with fewer taps than its neighbours
 * leaving its lane alone (never adding a 0 * x that an infinity would
 * turn into a NaN).
 */
static void resize_hrow(const struct resize_tab *tb, const void *x, __u32 dt,
			__s64 base, float *h)
{
	typedef int v8si_u __attribute__((vector_size(32), aligned(4)));
	__u64 c, o;
	__u32 j;

	/* Linear's two taps: the loop below with its inner loop unrolled. */
	for (c = 0; tb->taps == 2 && dt == VNPU_DTYPE_F32 && c < tb->width;
	     c += 8) {
		v8sf acc = vload(tb->w + c) *
			   resize_load8(x, dt, base, tb->off + c);
		v8si live = *(const v8si_u *)(tb->n + c) > 1;

		o = tb->cols + c;
		vstore(h + c, vm8_sel(live, acc + vload(tb->w + o) *
				      resize_load8(x, dt, base, tb->off + o),
				      acc));
	}
	for (; c < tb->width; c += 8) {
		v8sf acc = vload(tb->w + c) * resize_load8(x, dt, base, tb->off + c);

		for (j = 1; j < tb->taps; j++) {
			v8si live = *(const v8si_u *)(tb->n + c) > (int)j;

			o = j * tb->cols + c;
			acc = vm8_sel(live, acc + vload(tb->w + o) *
				      resize_load8(x, dt, base, tb->off + o), acc);
		}
		vstore(h + c, acc);
	}
}

/*
 * The input row at @base resized along the innermost axis over the run's
 * columns: kept from an earlier output row, computed into the least
 * recently used of the rows, or x's own row where that axis keeps its
 * size (w = 1: 1 * x is x but for a signalling NaN, which any W_k * h
 * quiets the same either way).
 */
static const float *resize_hrow_get(struct resize_tab *tb,
				    const struct eng_layer *l, __s64 base)
{
	struct resize_state *st = tb->st;
	__u32 s, old = 0;

	if (tb->keep)
		return (const float *)l->data[0] + base + tb->off[0];
	for (s = 0; s < tb->slots; s++) {
		if (st->used[s] && st->base[s] == base) {
			st->used[s] = ++tb->clock;
			return tb->rows + s * tb->cols;
		}
		if (st->used[s] < st->used[old])
			old = s;
	}
	/*
	 * A row's combinations are no more than the slots: the rows it took
	 * so far are the most recently used, so @old is none of them.
	 */
	st->used[old] = ++tb->clock;
	st->base[old] = base;
	resize_hrow(tb, l->data[0], l->t[0].dtype, base,
		    tb->rows + old * tb->cols);
	return tb->rows + old * tb->cols;
}

/*
 * Columns [@c, @e) of the run of one output row from its rows @h: y =
 * W_0 h_0, then + W_k h_k in order; @y at column @c, @ys elements apart.
 */
static void resize_blend(const struct resize_row *rw, const float *const *h,
			 void *y, __u32 dt, __s64 ys, __u64 c, __u64 e)
{
	float *yf = y, a;
	__s64 i = 0;
	__u32 k;
	v8sf v;

	/* Linear's two rows: the loop below with its inner loop unrolled. */
	for (; rw->k == 2 && dt == VNPU_DTYPE_F32 && ys == 1 && c + 8 <= e;
	     c += 8, i += 8) {
		v = vbcast(rw->w[0]) * vload(h[0] + c);
		vstore(yf + i, v + vbcast(rw->w[1]) * vload(h[1] + c));
	}
	for (; dt == VNPU_DTYPE_F32 && ys == 1 && c + 8 <= e; c += 8, i += 8) {
		v = vbcast(rw->w[0]) * vload(h[0] + c);
		for (k = 1; k < rw->k; k++)
			v = v + vbcast(rw->w[k]) * vload(h[k] + c);
		vstore(yf + i, v);
	}
	for (; c < e; c++, i++) {
		a = rw->w[0] * h[0][c];
		for (k = 1; k < rw->k; k++)
			a = a + rw->w[k] * h[k][c];
		stf(y, i * ys, dt, a);
	}
}

/* Nearest: each output its one input element, copied. */
static void resize_copy(const struct resize_tab *tb, __s64 base,
			const void *x, __u32 dt, char *y, __s64 ys, __u64 c,
			__u64 e)
{
	const float *xf = (const float *)x + base;
	float *yf = (float *)y;

	if (dt == VNPU_DTYPE_F32 && ys == 1) {
		/* Pairs: four inputs to eight outputs, from a pair's start. */
		for (; tb->pairs && c < e && (c + tb->pairs - 1) % 2; c++)
			*yf++ = xf[tb->off[c]];
		for (; tb->pairs && c + 8 <= e; c += 8, yf += 8) {
			v4sf v = *(const v4sf_u *)(xf + tb->off[c]);

			vstore(yf, __builtin_shufflevector(v, v, 0, 0, 1, 1, 2,
							   2, 3, 3));
		}
		for (; c < e; c++)
			*yf++ = xf[tb->off[c]];
		return;
	}
	for (; c < e; c++, y += ys * vnpu_eng_dtype_size(dt))
		stf(y, 0, dt, ldf(x, base + tb->off[c], dt));
}

/*
 * The last f32 row resize_copy() wrote: a row of the same columns that
 * reads the same input row (nearest upsampling's repeated rows) copies it.
 */
struct resize_last {
	const float *y;
	__s64 base;
	__u64 c0, c1;
};

/* Columns [@c0, @c1) of output row @row, the table's from @t0. */
/*
 * Columns [@c0, @c1) of output row @row, whose outer coordinates are
 * @coord (coord[rank - 1] is set to @c0 here), the table's from @t0.
 */
static void resize_row(const struct eng_layer *l, struct resize_tab *tb,
		       __u64 *coord, __u64 row, __u64 t0, __u64 c0, __u64 c1,
		       struct resize_last *last)
{
	const struct vnpu_layer_resize *at = l->attrs;
	const struct vnpu_cmd_tensor *x = &l->t[0], *y = &l->t[1];
	__u32 r = y->rank - 1, size = vnpu_eng_dtype_size(y->dtype), k;
	const float *h[ENG_RESIZE_ROW_TAPS];
	__u64 w = y->dims[r];
	struct resize_row rw;
	char *yp;

	coord[r] = c0;
	if (!resize_row_taps(l, tb, coord, &rw)) {
		resize_elems(l, row * w + c0, row * w + c1);
		return;
	}
	yp = (char *)l->data[1] + offset_of(y, coord) * size;
	if (at->mode != VNPU_RESIZE_NEAREST) {
		for (k = 0; k < rw.k; k++)
			h[k] = resize_hrow_get(tb, l, rw.base[k]);
		resize_blend(&rw, h, yp, y->dtype, y->strides[r], c0 - t0,
			     c1 - t0);
	} else if (y->dtype == VNPU_DTYPE_F32 && y->strides[r] == 1) {
		if (last->y && last->base == rw.base[0] && last->c0 == c0 &&
		    last->c1 == c1)
			copy_f32((float *)yp, last->y, c1 - c0);
		else
			resize_copy(tb, rw.base[0], l->data[0], x->dtype, yp,
				    1, c0 - t0, c1 - t0);
		last->y = (const float *)yp;
		last->base = rw.base[0];
		last->c0 = c0;
		last->c1 = c1;
	} else {
		resize_copy(tb, rw.base[0], l->data[0], x->dtype, yp,
			    y->strides[r], c0 - t0, c1 - t0);
	}
}

/*
 * Outputs row by row, the innermost axis's taps from a table of up to
 * tb.span columns built once per part and run of columns.
 */
int run_resize(const struct eng_layer *l, __u64 ub, __u64 ue,
	       const struct vnpu_eng_ctx *ctx)
{
	const struct vnpu_cmd_tensor *x = &l->t[0], *y = &l->t[1];
	__u64 lo, hi, w, r0, r1, row, cmin, cmax, t0, t1;
	struct resize_tab tb;

	flat_range(y, eng_resize_taps(x, y, l->attrs), ub, ue, &lo, &hi);
	if (lo >= hi)
		return 0;
	if (!y->rank) {
		resize_elems(l, lo, hi);
		return 0;
	}
	resize_tab_init(&tb, l, ctx->scratch);
	w = y->dims[y->rank - 1];
	r0 = lo / w;
	r1 = (hi - 1) / w;
	cmin = r0 == r1 ? lo % w : 0;
	cmax = r0 == r1 ? (hi - 1) % w + 1 : w;
	for (t0 = cmin; t0 < cmax; t0 = t1) {
		struct resize_last last = {};
		__u64 coord[VNPU_MAX_DIMS];

		t1 = eng_min(t0 + tb.span, cmax);
		resize_tab_fill(&tb, l, t0, t1);
		coords_of(y, r0 * w, coord);
		for (row = r0; row <= r1; row++) {
			__u64 c0 = eng_max(t0, row == r0 ? lo % w : 0);
			__u64 c1 = eng_min(t1, row == r1 ? (hi - 1) % w + 1 : w);

			if (c0 < c1)
				resize_row(l, &tb, coord, row, t0, c0, c1, &last);
			coord[y->rank - 1] = w - 1;
			coords_next(y, coord);
		}
	}
	return 0;
}

/* ---- PAD ------------------------------------------------------------- */

/* The source index of padded index @i, or -1 for the constant. */
static __s64 pad_source(__u32 mode, __s64 i, __s64 n)
{
	__s64 period;

	if (i >= 0 && i < n)
		return i;
	switch (mode) {
	case VNPU_PAD_EDGE:
		return i < 0 ? 0 : n - 1;
	case VNPU_PAD_WRAP:
		i %= n;
		return i < 0 ? i + n : i;
	case VNPU_PAD_REFLECT:
		if (n == 1)
			return 0;
		period = 2 * (n - 1);
		i %= period;
		if (i < 0)
			i += period;
		return i < n ? i : period - i;
	default:
		return -1;
	}
}

int run_pad(const struct eng_layer *l, __u64 ub, __u64 ue,
	    const struct vnpu_eng_ctx *ctx)
{
	const struct vnpu_layer_pad *at = l->attrs;
	const struct vnpu_cmd_tensor *x = &l->t[0], *y = &l->t[1];
	__u32 size = vnpu_eng_dtype_size(x->dtype), d;
	__u64 coord[VNPU_MAX_DIMS], lo, hi, e;
	__u64 value = at->value;

	elem_range(y, ub, ue, &lo, &hi);
	if (lo < hi)
		coords_of(y, lo, coord);
	for (e = lo; e < hi; e++, coords_next(y, coord)) {
		char *dst = (char *)l->data[1] + offset_of(y, coord) * size;
		const char *src = (const char *)&value;
		__s64 off = 0;

		for (d = 0; d < x->rank; d++) {
			__s64 s = pad_source(at->mode, (__s64)coord[d] -
					     at->begin[d], (__s64)x->dims[d]);

			if (s < 0)
				break;
			off += s * x->strides[d];
		}
		if (d == x->rank)
			src = (const char *)l->data[0] + off * size;
		copy_elem(dst, src, size);
	}
	return 0;
}

/* ---- GATHER and GATHER_ELEMENTS ------------------------------------- */

int load_index(const struct vnpu_cmd_tensor *t, const void *base,
	       __s64 off, __u64 n, __s64 *out)
{
	__s64 v = t->dtype == VNPU_DTYPE_I32 ? ((const __s32 *)base)[off] :
		  ((const __s64 *)base)[off];

	if (v < 0)
		v += (__s64)n;
	if (v < 0 || v >= (__s64)n)
		return VNPU_ENG_EINVAL;
	*out = v;
	return 0;
}

int run_gather(const struct eng_layer *l, __u64 ub, __u64 ue,
	       const struct vnpu_eng_ctx *ctx)
{
	const struct vnpu_layer_gather *at = l->attrs;
	const struct vnpu_cmd_tensor *x = &l->t[0], *idx = &l->t[1], *y = &l->t[2];
	__u32 size = vnpu_eng_dtype_size(x->dtype), d, ir = idx->rank;
	__u32 in = y->rank ? y->rank - 1 : 0;
	__u64 coord[VNPU_MAX_DIMS] = {}, lo, hi, e, run = 1;

	elem_range(y, ub, ue, &lo, &hi);
	if (lo < hi)
		coords_of(y, lo, coord);
	/*
	 * Below the gathered axis, runs along Y's last dim come from one
	 * index: one source offset a run (an embedding row a memcpy()).
	 */
	for (e = lo; e < hi; e += run, coord[in] += run - 1,
	     coords_next(y, coord)) {
		__s64 ioff = 0, xoff = 0, v;

		if (at->axis + ir < y->rank)
			run = eng_min(y->dims[in] - coord[in], hi - e);
		for (d = 0; d < ir; d++)
			ioff += (__s64)coord[at->axis + d] * idx->strides[d];
		if (load_index(idx, l->data[1], ioff, x->dims[at->axis], &v))
			return VNPU_ENG_EINVAL;
		for (d = 0; d < x->rank; d++) {
			__s64 c = d < at->axis ? (__s64)coord[d] :
				  d == at->axis ? v : (__s64)coord[d + ir - 1];

			xoff += c * x->strides[d];
		}
		copy_run((char *)l->data[2] + offset_of(y, coord) * size,
			 y->rank ? y->strides[in] : 0,
			 (const char *)l->data[0] + xoff * size,
			 x->rank ? x->strides[x->rank - 1] : 0, run, size);
	}
	return 0;
}

int run_gather_elements(const struct eng_layer *l, __u64 ub, __u64 ue,
			const struct vnpu_eng_ctx *ctx)
{
	const struct vnpu_layer_gather *at = l->attrs;
	const struct vnpu_cmd_tensor *x = &l->t[0], *idx = &l->t[1], *y = &l->t[2];
	__u32 size = vnpu_eng_dtype_size(x->dtype), d;
	__u64 coord[VNPU_MAX_DIMS], lo, hi, e;

	elem_range(y, ub, ue, &lo, &hi);
	if (lo < hi)
		coords_of(y, lo, coord);
	for (e = lo; e < hi; e++, coords_next(y, coord)) {
		__s64 xoff = 0, v;

		if (load_index(idx, l->data[1], offset_of(idx, coord),
			       x->dims[at->axis], &v))
			return VNPU_ENG_EINVAL;
		for (d = 0; d < x->rank; d++)
			xoff += (d == at->axis ? v : (__s64)coord[d]) *
				x->strides[d];
		copy_elem((char *)l->data[2] + offset_of(y, coord) * size,
			  (const char *)l->data[0] + xoff * size, size);
	}
	return 0;
}

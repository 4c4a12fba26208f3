// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Data movement with index arithmetic: Resize, Pad, Gather and
 * GatherElements. Included by the kernel builds, never compiled on its
 * own. Each output element is computed from its coordinates.
 */

/* ---- RESIZE ---------------------------------------------------------- */

/* The input taps of one output coordinate along one axis. */
struct resize_axis {
	__u64 idx[4];
	double w[4];
	__u32 n;
};

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
static double cubic_w(double t, double a)
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
	if (in == out && !at->scale[d]) {
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

/* Outputs [@lo, @hi) in flat order, each from its coordinates. */
static void resize_elems(const struct eng_layer *l, __u64 lo, __u64 hi)
{
	const struct vnpu_layer_resize *at = l->attrs;
	const struct vnpu_tensor *x = &l->t[0], *y = &l->t[1];
	struct resize_axis ax[VNPU_MAX_DIMS];
	__u64 coord[VNPU_MAX_DIMS], e;
	__u32 d, r = x->rank, pos[VNPU_MAX_DIMS];

	if (lo < hi)
		coords_of(y, lo, coord);
	for (e = lo; e < hi; e++, coords_next(y, coord)) {
		double acc = 0;

		for (d = 0; d < r; d++)
			resize_axis(at, d, coord[d], x->dims[d], y->dims[d],
				    &ax[d]);
		/* Sum over every combination of the axes' taps. */
		for (d = 0; d < r; d++)
			pos[d] = 0;
		for (;;) {
			double w = 1;
			__s64 off = 0;

			for (d = 0; d < r; d++) {
				w *= ax[d].w[pos[d]];
				off += (__s64)ax[d].idx[pos[d]] * x->strides[d];
			}
			acc += w * ldf(l->data[0], off, x->dtype);
			for (d = 0; d < r && ++pos[d] == ax[d].n; d++)
				pos[d] = 0;
			if (d == r)
				break;
		}
		stf(l->data[1], offset_of(y, coord), y->dtype, (float)acc);
	}
}

/*
 * The taps of a run of output columns (the innermost axis) in a part's
 * scratch, four columns to a vector: tap j of column c has weight
 * w[j * cols + c] and input offset off[j * cols + c]; n[c] taps are live
 * (0 in the columns past the run).
 */
struct resize_tab {
	double *w;
	__s64 *off;
	__s32 *n;
	/* resize_run_f32()'s outer sums: tb->cols + ENG_RESIZE_BLEND_PAD */
	double *blend;
	__u64 cols;
	__u64 span;	/* columns a table holds (the rest pads a vector) */
	__u32 taps;	/* the most of a column */
	__s64 lo, hi;	/* the live taps' offsets: [lo, hi) */
	/*
	 * 0, or 1 + p when column c reads input column (c + p) / 2 of the
	 * first's, one tap each, along a dense axis: nearest 2x upsampling.
	 */
	__u32 pairs;
};

static void resize_tab_init(struct resize_tab *tb, const struct eng_layer *l,
			    void *scratch)
{
	tb->cols = eng_resize_cols(&l->t[1]);
	tb->span = tb->cols - 4;
	tb->w = eng_align(scratch);
	tb->off = (__s64 *)(tb->w + 4 * tb->cols);
	tb->n = (__s32 *)(tb->off + 4 * tb->cols);
	tb->blend = (double *)(tb->n + tb->cols);
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

/* Columns [@c0, @c1) of the output, at most tb->cols of them. */
static void resize_tab_fill(struct resize_tab *tb, const struct eng_layer *l,
			    __u64 c0, __u64 c1)
{
	const struct vnpu_tensor *x = &l->t[0], *y = &l->t[1];
	__u32 d = x->rank - 1, j;
	struct resize_axis ax;
	__u64 c;

	tb->taps = 1;
	tb->lo = 0;
	tb->hi = 0;
	for (c = 0; c < tb->cols; c++) {
		ax.n = 0;
		if (c0 + c < c1)
			resize_axis(l->attrs, d, c0 + c, x->dims[d], y->dims[d],
				    &ax);
		tb->n[c] = (__s32)ax.n;
		if (ax.n > tb->taps)
			tb->taps = ax.n;
		for (j = 0; j < 4; j++) {
			tb->w[j * tb->cols + c] = j < ax.n ? ax.w[j] : 0;
			tb->off[j * tb->cols + c] = j < ax.n ?
				(__s64)ax.idx[j] * x->strides[d] : 0;
			if (j >= ax.n)
				continue;
			if (tb->lo == tb->hi || tb->off[j * tb->cols + c] < tb->lo)
				tb->lo = tb->off[j * tb->cols + c];
			if (tb->off[j * tb->cols + c] >= tb->hi)
				tb->hi = tb->off[j * tb->cols + c] + 1;
		}
	}
	/* Dead taps read a live one's input (and their weight is masked). */
	for (c = 0; c < tb->cols; c++)
		for (j = (__u32)tb->n[c]; j < 4; j++)
			tb->off[j * tb->cols + c] = tb->lo;
	resize_tab_pairs(tb, x->strides[d], c1 - c0);
}

/*
 * The combinations of the outer axes' taps of one output row, in the
 * order the sum takes them (axis 0 fastest), each with its input offset
 * and the product of its weights; 0 when there are more than
 * ENG_RESIZE_ROW_TAPS.
 */
struct resize_row {
	__s64 base[ENG_RESIZE_ROW_TAPS];
	double w[ENG_RESIZE_ROW_TAPS];
	__u32 k;
};

static int resize_row_taps(const struct eng_layer *l, const __u64 *coord,
			   struct resize_row *rw)
{
	const struct vnpu_tensor *x = &l->t[0], *y = &l->t[1];
	struct resize_axis ax[VNPU_MAX_DIMS];
	__u32 d, r = x->rank - 1, pos[VNPU_MAX_DIMS] = {};

	rw->k = 1;
	for (d = 0; d < r; d++) {
		resize_axis(l->attrs, d, coord[d], x->dims[d], y->dims[d],
			    &ax[d]);
		rw->k *= ax[d].n;
	}
	if (rw->k > ENG_RESIZE_ROW_TAPS)
		return 0;
	for (rw->k = 0;; rw->k++) {
		double w = 1;
		__s64 off = 0;

		for (d = 0; d < r; d++) {
			w *= ax[d].w[pos[d]];
			off += (__s64)ax[d].idx[pos[d]] * x->strides[d];
		}
		rw->base[rw->k] = off;
		rw->w[rw->k] = w;
		for (d = 0; d < r && ++pos[d] == ax[d].n; d++)
			pos[d] = 0;
		if (d == r)
			break;
	}
	rw->k++;
	return 1;
}

/* Four elements of @x at @base plus @off[0..3], as doubles. */
static inline v4df resize_load4(const void *x, __u32 dt, __s64 base,
				const __s64 *off)
{
	const float *f = (const float *)x + base;

	if (dt == VNPU_DTYPE_F32)
		return (v4df){ f[off[0]], f[off[1]], f[off[2]], f[off[3]] };
	return (v4df){ ldf(x, base + off[0], dt), ldf(x, base + off[1], dt),
		       ldf(x, base + off[2], dt), ldf(x, base + off[3], dt) };
}

/* The lanes of columns [@c, @c + 4) of the table that have a tap @j. */
static inline v4di resize_live(const struct resize_tab *tb, __u64 c, __u32 j)
{
	return (v4di){ -(__s64)(tb->n[c] > (__s32)j),
		       -(__s64)(tb->n[c + 1] > (__s32)j),
		       -(__s64)(tb->n[c + 2] > (__s32)j),
		       -(__s64)(tb->n[c + 3] > (__s32)j) };
}

/*
 * Columns [@c, @e) of the table (a multiple of four from @c) of one row:
 * each output is the double sum of resize_elems(), the inner axis's taps
 * slowest, the outer combinations faster, each weight the product of the
 * outer ones times the inner one; four outputs a vector.
 */
static void resize_run(const struct resize_tab *tb, const struct resize_row *rw,
		       const void *x, __u32 dt, char *y, __s64 ys, __u64 c,
		       __u64 e)
{
	__u32 j, k, i;

	for (; c < e; c += 4) {
		v4df acc = v_splat(0);

		for (j = 0; j < tb->taps; j++) {
			const __s64 *off = tb->off + j * tb->cols + c;
			v4df wi = *(const v4df_u *)(tb->w + j * tb->cols + c);
			v4di live = resize_live(tb, c, j);

			for (k = 0; k < rw->k; k++) {
				v4df v = resize_load4(x, dt, rw->base[k], off);

				acc = v_sel(live, acc + rw->w[k] * wi * v, acc);
			}
		}
		if (dt == VNPU_DTYPE_F32 && ys == 4 && c + 4 <= e) {
			*(v4sf_u *)y = __builtin_convertvector(acc, v4sf);
			y += 16;
			continue;
		}
		for (i = 0; i < 4 && c + i < e; i++, y += ys)
			stf(y, 0, dt, (float)acc[i]);
	}
}

/*
 * Whether axis @d keeps or grows its size at a scale of at least 1: each
 * output column steps the input coordinate by at most one, so a run of
 * output columns reads at most as many input columns plus its taps.
 */
static int resize_widens(const struct eng_layer *l, __u32 d)
{
	const struct vnpu_layer_resize *at = l->attrs;

	return l->t[0].dims[d] <= l->t[1].dims[d] &&
	       (!at->scale[d] || f32_of(at->scale[d]) >= 1.0f);
}

/*
 * resize_run() of f32 rows, dense along the row on both sides, on an axis
 * that widens (resize_widens(): a table then reads at most about as many
 * input columns as it has, and whether a row takes this path follows from
 * the shapes, never from how the layer is split): the outer combinations blended first,
 * once per input column the table reads (contiguous, four a vector), then
 * the inner taps from that blend: two reads an output of a bilinear row
 * where resize_run() makes four. Sums in double as there, in the other
 * order (outer first). 0 when the table reads wider than the blend's
 * room (never on such an axis).
 */
static int resize_run_f32(const struct resize_tab *tb,
			  const struct resize_row *rw, const float *x,
			  float *y, __u64 c, __u64 e)
{
	const double *b = tb->blend - tb->lo;
	__s64 i, n = tb->hi - tb->lo;
	__u32 j, k;

	/* The last vector of the blend may pass hi by three. */
	if (n + 3 > (__s64)tb->cols + ENG_RESIZE_BLEND_PAD)
		return 0;
	for (i = tb->lo; i < tb->hi; i += 4) {
		v4df acc = v_splat(0);

		for (k = 0; k < rw->k; k++) {
			const float *xr = x + rw->base[k] + i;
			v4sf v;

			if (i + 4 <= tb->hi)
				v = *(const v4sf_u *)xr;
			else
				v = (v4sf){ xr[0], i + 1 < tb->hi ? xr[1] : 0,
					    i + 2 < tb->hi ? xr[2] : 0, 0 };

			acc += rw->w[k] * __builtin_convertvector(v, v4df);
		}
		*(v4df_u *)(tb->blend + (i - tb->lo)) = acc;
	}
	for (; c < e; c += 4, y += 4) {
		v4df acc = v_splat(0);

		for (j = 0; j < tb->taps; j++) {
			const __s64 *off = tb->off + j * tb->cols + c;
			v4df wi = *(const v4df_u *)(tb->w + j * tb->cols + c);
			v4di live = resize_live(tb, c, j);
			v4df v = { b[off[0]], b[off[1]], b[off[2]], b[off[3]] };

			acc = v_sel(live, acc + wi * v, acc);
		}
		if (c + 4 <= e) {
			*(v4sf_u *)y = __builtin_convertvector(acc, v4sf);
			continue;
		}
		for (j = 0; c + j < e; j++)
			y[j] = (float)acc[j];
	}
	return 1;
}

/*
 * One tap per output (nearest, or sizes kept): 0 + 1 * x in double is
 * x + 0.0f in float (-0 becomes +0, a signalling NaN quiet).
 */
static void resize_copy(const struct resize_tab *tb, __s64 base,
			const void *x, __u32 dt, char *y, __s64 ys, __u64 c,
			__u64 e)
{
	const float *xf = (const float *)x + base;
	float *yf = (float *)y;

	if (dt == VNPU_DTYPE_F32 && ys == 4) {
		/* Pairs: four inputs to eight outputs, from a pair's start. */
		for (; tb->pairs && c < e && (c + tb->pairs - 1) % 2; c++)
			*yf++ = xf[tb->off[c]] + 0.0f;
		for (; tb->pairs && c + 8 <= e; c += 8, yf += 8) {
			v4sf v = *(const v4sf_u *)(xf + tb->off[c]);

			vstore(yf, __builtin_shufflevector(v, v, 0, 0, 1, 1, 2,
							   2, 3, 3) +
			       vbcast(0.0f));
		}
		for (; c < e; c++)
			*yf++ = xf[tb->off[c]] + 0.0f;
		return;
	}
	for (; c < e; c++, y += ys)
		stf(y, 0, dt, ldf(x, base + tb->off[c], dt) + 0.0f);
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
static void resize_row(const struct eng_layer *l, const struct resize_tab *tb,
		       __u64 row, __u64 t0, __u64 c0, __u64 c1,
		       struct resize_last *last)
{
	const struct vnpu_tensor *x = &l->t[0], *y = &l->t[1];
	__u32 r = y->rank - 1, size = vnpu_eng_dtype_size(y->dtype);
	__u64 coord[VNPU_MAX_DIMS], rem = row, w = y->dims[r];
	struct resize_row rw;
	char *yp;
	int d;

	for (d = (int)r - 1; d >= 0; d--) {
		coord[d] = rem % y->dims[d];
		rem /= y->dims[d];
	}
	coord[r] = c0;
	if (!resize_row_taps(l, coord, &rw)) {
		resize_elems(l, row * w + c0, row * w + c1);
		return;
	}
	yp = (char *)l->data[1] + offset_of(y, coord) * size;
	if (rw.k == 1 && tb->taps == 1 && y->dtype == VNPU_DTYPE_F32 &&
	    y->strides[r] == 1) {
		if (last->y && last->base == rw.base[0] && last->c0 == c0 &&
		    last->c1 == c1)
			copy_f32((float *)yp, last->y, c1 - c0);
		else
			resize_copy(tb, rw.base[0], l->data[0], x->dtype, yp,
				    size, c0 - t0, c1 - t0);
		last->y = (const float *)yp;
		last->base = rw.base[0];
		last->c0 = c0;
		last->c1 = c1;
	} else if (rw.k == 1 && tb->taps == 1)
		resize_copy(tb, rw.base[0], l->data[0], x->dtype, yp,
			    y->strides[r] * size, c0 - t0, c1 - t0);
	else if (x->dtype != VNPU_DTYPE_F32 || y->strides[r] != 1 ||
		 x->strides[r] != 1 || !resize_widens(l, r) ||
		 !resize_run_f32(tb, &rw, l->data[0], (float *)yp, c0 - t0,
				 c1 - t0))
		resize_run(tb, &rw, l->data[0], x->dtype, yp,
			   y->strides[r] * size, c0 - t0, c1 - t0);
}

/*
 * Outputs row by row, the innermost axis's taps from a table of up to
 * tb.span columns built once per part and run of columns.
 */
static int run_resize(const struct eng_layer *l, __u64 ub, __u64 ue,
		      const struct vnpu_eng_ctx *ctx)
{
	const struct vnpu_tensor *x = &l->t[0], *y = &l->t[1];
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

		t1 = eng_min(t0 + tb.span, cmax);
		resize_tab_fill(&tb, l, t0, t1);
		for (row = r0; row <= r1; row++) {
			__u64 c0 = eng_max(t0, row == r0 ? lo % w : 0);
			__u64 c1 = eng_min(t1, row == r1 ? (hi - 1) % w + 1 : w);

			if (c0 < c1)
				resize_row(l, &tb, row, t0, c0, c1, &last);
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

static int run_pad(const struct eng_layer *l, __u64 ub, __u64 ue,
		   const struct vnpu_eng_ctx *ctx)
{
	const struct vnpu_layer_pad *at = l->attrs;
	const struct vnpu_tensor *x = &l->t[0], *y = &l->t[1];
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

static int load_index(const struct vnpu_tensor *t, const void *base,
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

static int run_gather(const struct eng_layer *l, __u64 ub, __u64 ue,
		      const struct vnpu_eng_ctx *ctx)
{
	const struct vnpu_layer_gather *at = l->attrs;
	const struct vnpu_tensor *x = &l->t[0], *idx = &l->t[1], *y = &l->t[2];
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

static int run_gather_elements(const struct eng_layer *l, __u64 ub, __u64 ue,
			       const struct vnpu_eng_ctx *ctx)
{
	const struct vnpu_layer_gather *at = l->attrs;
	const struct vnpu_tensor *x = &l->t[0], *idx = &l->t[1], *y = &l->t[2];
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

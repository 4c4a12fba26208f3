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

static int run_resize(const struct eng_layer *l, __u64 ub, __u64 ue,
		      const struct vnpu_eng_ctx *ctx)
{
	const struct vnpu_layer_resize *at = l->attrs;
	const struct vnpu_tensor *x = &l->t[0], *y = &l->t[1];
	struct resize_axis ax[VNPU_MAX_DIMS];
	__u64 coord[VNPU_MAX_DIMS], lo, hi, e;
	__u32 d, r = x->rank, pos[VNPU_MAX_DIMS];

	flat_range(y, eng_resize_taps(x, y, at), ub, ue, &lo, &hi);
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
	__u64 coord[VNPU_MAX_DIMS], lo, hi, e;

	elem_range(y, ub, ue, &lo, &hi);
	if (lo < hi)
		coords_of(y, lo, coord);
	for (e = lo; e < hi; e++, coords_next(y, coord)) {
		__s64 ioff = 0, xoff = 0, v;

		for (d = 0; d < ir; d++)
			ioff += (__s64)coord[at->axis + d] * idx->strides[d];
		if (load_index(idx, l->data[1], ioff, x->dims[at->axis], &v))
			return VNPU_ENG_EINVAL;
		for (d = 0; d < x->rank; d++) {
			__s64 c = d < at->axis ? (__s64)coord[d] :
				  d == at->axis ? v : (__s64)coord[d + ir - 1];

			xoff += c * x->strides[d];
		}
		copy_elem((char *)l->data[2] + offset_of(y, coord) * size,
			  (const char *)l->data[0] + xoff * size, size);
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

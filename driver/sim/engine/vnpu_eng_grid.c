// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * GRID_SAMPLE kernel, built per ISA (vnpu_eng_isa.h); its cubic weights
 * are RESIZE's cubic_w() (vnpu_eng_data.c).
 */
#include "vnpu_eng_kern.h"

/* Grid coordinate @g (-1..1) to an element coordinate along @len. */
static double grid_unnormalize(double g, __u64 len, __u32 align)
{
	if (align)
		return (g + 1) / 2 * (double)(len - 1);
	return ((g + 1) * (double)len - 1) / 2;
}

/* @x mirrored into [lo, hi] (both borders reflect, repeatedly). */
static double grid_reflect(double x, double lo, double hi)
{
	double span = hi - lo, extra, flips;

	if (span <= 0)
		return 0;
	x = m_fabs(x - lo);
	flips = m_floor(x / span);
	extra = m_fmod(x, span);
	return m_fmod(flips, 2) == 0 ? lo + extra : hi - extra;
}

/*
 * Padding applied to a coordinate: border and reflection keep it inside.
 * With zeros it is only held a few elements outside (NaN too), where every
 * tap reads 0, so that it converts to an integer safely.
 */
static double grid_pad_coord(const struct vnpu_layer_grid_sample *at,
			     double x, __u64 len)
{
	double hi = (double)(len - 1);

	if (at->padding == VNPU_GRID_PAD_ZEROS)
		return !(x >= -4) ? -4 : x > hi + 4 ? hi + 4 : x;
	if (at->padding == VNPU_GRID_PAD_REFLECTION)
		x = at->align_corners ? grid_reflect(x, 0, hi) :
			grid_reflect(x, -0.5, (double)len - 0.5);
	return !(x >= 0) ? 0 : x > hi ? hi : x;
}

/* Element (@yi, @xi) of one X plane at @base, or 0 outside. */
static double grid_tap(const struct vnpu_cmd_tensor *x, const void *data,
		       __s64 base, __s64 yi, __s64 xi)
{
	if (yi < 0 || xi < 0 || yi >= (__s64)x->dims[2] ||
	    xi >= (__s64)x->dims[3])
		return 0;
	return ldf(data, base + yi * x->strides[2] + xi * x->strides[3],
		   x->dtype);
}

/* Bicubic: each of the 4 x 4 taps is padded on its own. */
static double grid_cubic(const struct vnpu_layer_grid_sample *at,
			 const struct vnpu_cmd_tensor *x, const void *data,
			 __s64 base, double fx, double fy)
{
	double x0 = m_floor(fx), y0 = m_floor(fy), acc = 0;
	__u64 h = x->dims[2], w = x->dims[3];
	int i, j;

	for (i = 0; i < 4; i++) {
		double wy = cubic_w(fy - (y0 - 1 + i), -0.75);
		double ty = grid_pad_coord(at, y0 - 1 + i, h);

		for (j = 0; j < 4; j++) {
			double wx = cubic_w(fx - (x0 - 1 + j), -0.75);
			double tx = grid_pad_coord(at, x0 - 1 + j, w);

			acc += wy * wx * grid_tap(x, data, base, (__s64)ty,
						  (__s64)tx);
		}
	}
	return acc;
}

int run_grid_sample(const struct eng_layer *l, __u64 ub, __u64 ue,
		    const struct vnpu_eng_ctx *ctx)
{
	const struct vnpu_layer_grid_sample *at = l->attrs;
	const struct vnpu_cmd_tensor *x = &l->t[0], *g = &l->t[1], *y = &l->t[2];
	__u64 coord[VNPU_MAX_DIMS], lo, hi, e, h = x->dims[2], w = x->dims[3];

	flat_range(y, eng_grid_taps(at), ub, ue, &lo, &hi);
	if (lo < hi)
		coords_of(y, lo, coord);
	for (e = lo; e < hi; e++, coords_next(y, coord)) {
		__s64 goff = (__s64)coord[0] * g->strides[0] +
			     (__s64)coord[2] * g->strides[1] +
			     (__s64)coord[3] * g->strides[2];
		__s64 base = (__s64)coord[0] * x->strides[0] +
			     (__s64)coord[1] * x->strides[1];
		double fx = grid_unnormalize(ldf(l->data[1], goff, g->dtype), w,
					     at->align_corners);
		double fy = grid_unnormalize(ldf(l->data[1], goff + g->strides[3],
						 g->dtype), h, at->align_corners);
		double v, x0, y0, ax, ay;

		if (at->mode == VNPU_RESIZE_CUBIC) {
			v = grid_cubic(at, x, l->data[0], base, fx, fy);
		} else {
			fx = grid_pad_coord(at, fx, w);
			fy = grid_pad_coord(at, fy, h);
			if (at->mode == VNPU_RESIZE_NEAREST) {
				v = grid_tap(x, l->data[0], base,
					     (__s64)m_rint(fy), (__s64)m_rint(fx));
			} else {
				__s64 xi, yi;

				x0 = m_floor(fx);
				y0 = m_floor(fy);
				ax = fx - x0;
				ay = fy - y0;
				xi = (__s64)x0;
				yi = (__s64)y0;
				v = (1 - ay) * ((1 - ax) *
				     grid_tap(x, l->data[0], base, yi, xi) +
				     ax * grid_tap(x, l->data[0], base, yi, xi + 1)) +
				    ay * ((1 - ax) *
				     grid_tap(x, l->data[0], base, yi + 1, xi) +
				     ax * grid_tap(x, l->data[0], base, yi + 1, xi + 1));
			}
		}
		stf(l->data[2], offset_of(y, coord), y->dtype, (float)v);
	}
	return 0;
}

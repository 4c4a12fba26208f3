// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ROI_ALIGN kernel: each output element is a bin of its ROI, sampled on a
 * regular grid with bilinear interpolation. Built per ISA (vnpu_eng_isa.h).
 */
#include "vnpu_eng_kern.h"

/*
 * Bilinear sample at (@y, @x) of the plane at @base: its four weighted
 * neighbours in @v; 0 when the point is more than one element outside.
 */
static int roi_sample(const struct vnpu_cmd_tensor *x, const void *data, __s64 base,
		      double y, double xx, double *v)
{
	__s64 h = (__s64)x->dims[2], w = (__s64)x->dims[3], y0, x0, y1, x1;
	double ly, lx;

	if (y < -1.0 || y > (double)h || xx < -1.0 || xx > (double)w)
		return 0;
	y = y < 0 ? 0 : y;
	xx = xx < 0 ? 0 : xx;
	y0 = (__s64)y;
	x0 = (__s64)xx;
	if (y0 >= h - 1) {
		y0 = h - 1;
		y1 = y0;
		y = (double)y0;
	} else {
		y1 = y0 + 1;
	}
	if (x0 >= w - 1) {
		x0 = w - 1;
		x1 = x0;
		xx = (double)x0;
	} else {
		x1 = x0 + 1;
	}
	ly = y - (double)y0;
	lx = xx - (double)x0;
	y0 = base + y0 * x->strides[2];
	y1 = base + y1 * x->strides[2];
	x0 *= x->strides[3];
	x1 *= x->strides[3];
	v[0] = (1 - ly) * (1 - lx) * ldf(data, y0 + x0, x->dtype);
	v[1] = (1 - ly) * lx * ldf(data, y0 + x1, x->dtype);
	v[2] = ly * (1 - lx) * ldf(data, y1 + x0, x->dtype);
	v[3] = ly * lx * ldf(data, y1 + x1, x->dtype);
	return 1;
}

int run_roi_align(const struct eng_layer *l, __u64 ub, __u64 ue,
		  const struct vnpu_eng_ctx *ctx)
{
	const struct vnpu_layer_roi_align *at = l->attrs;
	const struct vnpu_cmd_tensor *x = &l->t[0], *rois = &l->t[1], *bi = &l->t[2];
	const struct vnpu_cmd_tensor *y = &l->t[3];
	double scale = f32_of(at->spatial_scale), off = at->half_pixel ? 0.5 : 0;
	__u64 coord[VNPU_MAX_DIMS], lo, hi, e, oh = y->dims[2], ow = y->dims[3];

	flat_range(y, eng_roi_reads(x, y, at), ub, ue, &lo, &hi);
	if (lo < hi)
		coords_of(y, lo, coord);
	for (e = lo; e < hi; e++, coords_next(y, coord)) {
		__s64 r = (__s64)coord[0] * rois->strides[0], base, b;
		double x1 = ldf(l->data[1], r, rois->dtype) * scale - off;
		double y1 = ldf(l->data[1], r + rois->strides[1], rois->dtype) * scale - off;
		double x2 = ldf(l->data[1], r + 2 * rois->strides[1], rois->dtype) * scale - off;
		double y2 = ldf(l->data[1], r + 3 * rois->strides[1], rois->dtype) * scale - off;
		double rw = x2 - x1, rh = y2 - y1, bw, bh, acc = 0, best = 0, v[4];
		__u64 gh, gw, iy, ix, n = 0;

		if (load_index(bi, l->data[2], (__s64)coord[0] * bi->strides[0],
			       x->dims[0], &b))
			return VNPU_ENG_EINVAL;
		base = b * x->strides[0] + (__s64)coord[1] * x->strides[1];
		if (!at->half_pixel) {
			rw = rw > 1 ? rw : 1;
			rh = rh > 1 ? rh : 1;
		}
		bh = rh / (double)oh;
		bw = rw / (double)ow;
		/* A grid past 2^20 samples (or a NaN ROI) faults the job. */
		if (!(bh <= 1048576.0 && bw <= 1048576.0 && bh >= -1048576.0 &&
		      bw >= -1048576.0))
			return VNPU_ENG_EINVAL;
		gh = at->sampling_ratio ? at->sampling_ratio :
		     (__u64)(bh > 0 ? m_ceil(bh) : 0);
		gw = at->sampling_ratio ? at->sampling_ratio :
		     (__u64)(bw > 0 ? m_ceil(bw) : 0);
		if (gh * gw > 1048576)
			return VNPU_ENG_EINVAL;
		for (iy = 0; iy < gh; iy++)
			for (ix = 0; ix < gw; ix++) {
				double sy = y1 + (double)coord[2] * bh +
					    ((double)iy + 0.5) * bh / (double)gh;
				double sx = x1 + (double)coord[3] * bw +
					    ((double)ix + 0.5) * bw / (double)gw;
				double m;

				if (!roi_sample(x, l->data[0], base, sy, sx, v)) {
					v[0] = 0;
					v[1] = 0;
					v[2] = 0;
					v[3] = 0;
				}
				m = v[0] > v[1] ? v[0] : v[1];
				m = m > v[2] ? m : v[2];
				m = m > v[3] ? m : v[3];
				acc += v[0] + v[1] + v[2] + v[3];
				best = n ? (best > m ? best : m) : m;
				n++;
			}
		stf(l->data[3], offset_of(y, coord), y->dtype,
		    (float)(at->mode ? best : n ? acc / (double)n : 0));
	}
	return 0;
}

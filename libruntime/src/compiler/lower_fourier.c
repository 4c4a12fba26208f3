// SPDX-License-Identifier: MIT
/*
 * DFT and STFT as one GEMM with a constant real matrix: the input's
 * (sample, re/im) pairs times M [(n, c), (k, re/im)] holding the cosines
 * and sines (with the window folded in, for STFT with a constant window).
 * STFT's frames are an overlapping strided view of the signal.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lower.h"

/* The largest M: 1 GiB of weights (a transform of 8192 complex samples). */
#define DFT_MAX_SHIFT 28
#define DFT_MAX_FLOATS (1ll << DFT_MAX_SHIFT)

/* M for @rows samples of @cin channels, @k outputs of a length-@len
 * transform; @window (or NULL) scales each sample. */
static vnpu_status dft_matrix(struct cstate *s, int64_t rows, int64_t cin, int64_t k, int64_t len,
			      bool inverse, const float *window, int32_t *out)
{
	int64_t dims[2] = { rows * cin, k * 2 };
	double sign = inverse ? 1 : -1, scale = inverse ? 1.0 / (double)len : 1;
	float *m;

	/* Each dimension is at most 2^41: their product may not fit. */
	if (dims[1] && dims[0] > DFT_MAX_FLOATS / dims[1])
		return UNSUP(s, "a transform of %lld samples to %lld: its matrix would hold more than 2^%d floats",
			     (long long)rows, (long long)k, DFT_MAX_SHIFT);
	m = calloc((size_t)(dims[0] * dims[1] + 1), sizeof(float));
	if (!m)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	for (int64_t n = 0; n < rows; n++)
		for (int64_t j = 0; j < k; j++) {
			/* (n * j) mod len keeps the angle exact for long transforms. */
			double th = 2 * M_PI * (double)((n * j) % len) / (double)len;
			double c = cos(th) * scale, sn = sign * sin(th) * scale;
			double w = window ? window[n] : 1;
			float *row = &m[(n * cin) * dims[1] + j * 2];

			/* e^{sign i th} (re + i im) */
			row[0] = (float)(w * c);
			row[1] = (float)(w * sn);
			if (cin == 2) {
				row[dims[1]] = (float)(w * -sn);
				row[dims[1] + 1] = (float)(w * c);
			}
		}
	return cs_add_const(s, VNPU_TYPE_F32, 2, dims, m, out);
}

static vnpu_status gemm(struct cstate *s, struct ctensor a, int32_t b, struct ctensor y)
{
	struct vnpu_layer_gemm attr = { .alpha = f32_bits(1.0f), .beta = f32_bits(1.0f) };
	struct ctensor t[3] = { a, ct_dense(s, b), y };
	int32_t packed;

	if (!s->opt.no_packing && !cl_pack_gemm_b(s, b, false, false, &packed)) {
		t[1] = ct_dense(s, packed);
		attr.flags |= VNPU_LAYER_F_PACKED;
	}
	return cl_layer(s, VNPU_LAYER_GEMM, t, 3, &attr, sizeof(attr));
}

static vnpu_status lower_dft(struct cstate *s, struct cop *op)
{
	const struct vnpu_tinfo xinfo = *cs_info(s, op->in[0]), yinfo = *cs_info(s, op->out[0]);
	const struct vnpu_tinfo *xi = &xinfo, *yi = &yinfo;
	int32_t r = xi->rank, mtx, xv = op->in[0], yv = op->out[0];
	int64_t axis = vnpu_attr_int(op->node, "axis", 1), cin = xi->dims[r - 1], len, rows, outer;
	int64_t perm[VNPU_MAX_RANK], tdims[VNPU_MAX_RANK], ydims[VNPU_MAX_RANK];
	bool inverse = vnpu_attr_int(op->node, "inverse", 0), moved;
	struct ctensor a, y;
	vnpu_status st;

	axis = axis < 0 ? axis + r : axis;
	if (op->num_in > 1 && op->in[1] >= 0 && !cs_is_const(s, op->in[1]))
		return UNSUP(s, "dft_length computed at run time");
	len = op->num_in > 1 && op->in[1] >= 0 ?
	      vnpu_elem_get_i(cs_info(s, op->in[1])->data, cs_info(s, op->in[1])->type, 0) :
	      xi->dims[axis];
	if (len <= 0)
		return UNSUP(s, "dft_length %lld", (long long)len);
	rows = len < xi->dims[axis] ? len : xi->dims[axis];
	st = dft_matrix(s, rows, cin, yi->dims[axis], len, inverse, NULL, &mtx);
	if (st)
		return st;
	/* Move the transformed axis next to the channels when it is not. */
	moved = axis != r - 2;
	for (int32_t d = 0, k = 0; d < r; d++)
		if (d != axis && d != r - 1)
			perm[k++] = d;
	perm[r - 2] = axis;
	perm[r - 1] = r - 1;
	for (int32_t d = 0; d < r; d++) {
		tdims[d] = xi->dims[perm[d]];
		ydims[d] = yi->dims[perm[d]];
	}
	if (moved) {
		struct ctensor src = ct_dense(s, op->in[0]), x = src;

		st = cs_add_temp(s, VNPU_TYPE_F32, r, tdims, &xv);
		if (!st)
			st = cs_add_temp(s, VNPU_TYPE_F32, r, ydims, &yv);
		for (int32_t d = 0; d < r; d++) {
			x.dims[d] = src.dims[perm[d]];
			x.strides[d] = src.strides[perm[d]];
		}
		if (!st)
			st = cl_copy(s, ct_dense(s, xv), x);
		if (st)
			return st;
	}
	outer = vnpu_tinfo_elems(cs_info(s, xv)) / (tdims[r - 2] * cin);
	a = ct_shaped(s, xv, 2, (const int64_t[]){ outer, rows * cin });
	a.strides[0] = tdims[r - 2] * cin;	/* truncation: the first rows only */
	y = ct_shaped(s, yv, 2, (const int64_t[]){ outer, ydims[r - 2] * 2 });
	st = gemm(s, a, mtx, y);
	if (!st && moved) {
		struct ctensor dst = ct_dense(s, op->out[0]), src = dst;

		for (int32_t d = 0; d < r; d++) {
			src.dims[d] = dst.dims[perm[d]];
			src.strides[d] = dst.strides[perm[d]];
		}
		st = cl_copy(s, src, ct_dense(s, yv));
	}
	return st;
}

static vnpu_status lower_stft(struct cstate *s, struct cop *op)
{
	const struct vnpu_tinfo xinfo = *cs_info(s, op->in[0]), yinfo = *cs_info(s, op->out[0]);
	const struct vnpu_tinfo *xi = &xinfo, *yi = &yinfo;
	int32_t w = op->num_in > 2 ? op->in[2] : -1, mtx, frames_v;
	int64_t cin = xi->dims[2], frames = yi->dims[1], k = yi->dims[2], step, flen;
	const float *window = NULL;
	struct ctensor a;
	vnpu_status st;

	if (!cs_is_const(s, op->in[1]))
		return UNSUP(s, "frame_step computed at run time");
	step = vnpu_elem_get_i(cs_info(s, op->in[1])->data, cs_info(s, op->in[1])->type, 0);
	flen = w >= 0 ? cs_info(s, w)->dims[0] :
	       vnpu_elem_get_i(cs_info(s, op->in[3])->data, cs_info(s, op->in[3])->type, 0);
	if (w >= 0 && cs_is_const(s, w))
		window = cs_info(s, w)->data;
	st = dft_matrix(s, flen, cin, k, flen, false, window, &mtx);
	if (st)
		return st;
	/* Frames overlap: [B, frames, flen * cin] with stride step * cin. */
	a = ct_shaped(s, op->in[0], 3, (const int64_t[]){ xi->dims[0], frames, flen * cin });
	a.strides[0] = xi->dims[1] * cin;
	a.strides[1] = step * cin;
	if (w >= 0 && !window) {
		struct ctensor f4 = a, wv = ct_shaped(s, w, 2, (const int64_t[]){ flen, 1 });

		/* The window at run time: windowed frames first. */
		st = cs_add_temp(s, VNPU_TYPE_F32, 4, (const int64_t[]){ xi->dims[0], frames, flen, cin },
				 &frames_v);
		f4.rank = 4;
		f4.dims[2] = flen;
		f4.dims[3] = cin;
		f4.strides[2] = cin;
		f4.strides[3] = 1;
		if (!st)
			st = cl_binary_t(s, VNPU_BIN_MUL, f4, wv, ct_dense(s, frames_v));
		if (st)
			return st;
		a = ct_shaped(s, frames_v, 3, (const int64_t[]){ xi->dims[0], frames, flen * cin });
	}
	return gemm(s, a, mtx, ct_shaped(s, op->out[0], 3, (const int64_t[]){ xi->dims[0], frames,
										k * 2 }));
}

vnpu_status cl_lower_fourier(struct cstate *s, struct cop *op)
{
	const struct vnpu_tinfo xinfo = *cs_info(s, op->in[0]), *xi = &xinfo;

	if (xi->type != VNPU_TYPE_F32)
		return UNSUP(s, "input of type %s (only f32)", vnpu_element_type_str(xi->type));
	return strcmp(op->node->op, "STFT") ? lower_dft(s, op) : lower_stft(s, op);
}

// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * SCATTER_ELEMENTS, SCATTER_ND and GATHER_ND kernels (with
 * vnpu_eng_data.c's load_index()), built per ISA (vnpu_eng_isa.h).
 */
#include "vnpu_eng_kern.h"

/* ---- SCATTER_ELEMENTS and SCATTER_ND -------------------------------- */

/* Combine update @src into the element at @dst per @reduction. */
static void scatter_apply(char *dst, const char *src, __u32 dt, __u32 size,
			  __u32 reduction)
{
	double a, b;

	if (reduction == VNPU_SCATTER_NONE) {
		copy_elem(dst, src, size);
		return;
	}
	if (dt == VNPU_DTYPE_I64 || dt == VNPU_DTYPE_I32) {
		__s64 x = dt == VNPU_DTYPE_I64 ? *(const __s64 *)dst :
			  *(const __s32 *)dst;
		__s64 y = dt == VNPU_DTYPE_I64 ? *(const __s64 *)src :
			  *(const __s32 *)src;

		switch (reduction) {
		case VNPU_SCATTER_ADD:
			x = (__s64)((__u64)x + (__u64)y);
			break;
		case VNPU_SCATTER_MUL:
			x = (__s64)((__u64)x * (__u64)y);
			break;
		case VNPU_SCATTER_MAX:
			x = x > y ? x : y;
			break;
		default:
			x = x < y ? x : y;
			break;
		}
		if (dt == VNPU_DTYPE_I64)
			*(__s64 *)dst = x;
		else
			*(__s32 *)dst = (__s32)x;
		return;
	}
	load_d(&a, dst, 0, 1, dt);
	load_d(&b, src, 0, 1, dt);
	switch (reduction) {
	case VNPU_SCATTER_ADD:
		a += b;
		break;
	case VNPU_SCATTER_MUL:
		a *= b;
		break;
	case VNPU_SCATTER_MAX:
		a = a > b || a != a ? a : b;
		break;
	default:
		a = a < b || a != a ? a : b;
		break;
	}
	store_d(dst, 0, &a, 1, dt);
}

/**
 * struct scatter_range - the elements of Y one run owns
 * @lo: first, in Y's row-major order
 * @hi: past the last
 * @mul: per dim, the row-major step of Y
 */
struct scatter_range {
	__u64 lo, hi;
	__u64 mul[VNPU_MAX_DIMS];
};

/*
 * Units [@ub, @ue) own Y's elements [lo, hi): copied from data here (Y may
 * be data itself).
 */
static void scatter_begin(const struct eng_layer *l, __u64 ub, __u64 ue,
			  struct scatter_range *r, struct eng_pacer *pc)
{
	const struct vnpu_cmd_tensor *x = &l->t[0], *y = &l->t[3];
	__u32 size = vnpu_eng_dtype_size(x->dtype);
	__u64 coord[VNPU_MAX_DIMS], e, e0, e1, n = vnpu_eng_numel(y), m = 1;
	__u64 chunk = eng_scatter_chunk(vnpu_eng_numel(&l->t[2]));
	int d;

	for (d = (int)y->rank - 1; d >= 0; d--) {
		r->mul[d] = m;
		m *= y->dims[d];
	}
	r->lo = eng_min(ub * chunk, n);
	r->hi = eng_min(ue * chunk, n);
	if (r->lo < r->hi)
		coords_of(y, r->lo, coord);
	for (e0 = r->lo; e0 < r->hi; e0 = e1) {
		e1 = eng_pace_end(pc, e0, r->hi);
		for (e = e0; e < e1; e++, coords_next(y, coord))
			copy_elem((char *)l->data[3] + offset_of(y, coord) * size,
				  (const char *)l->data[0] + offset_of(x, coord) * size,
				  size);
		eng_pace(pc, e1 - e0);
	}
}

/*
 * The updates go in their order; each run applies those that land in its
 * range, so every element of Y sees its updates in the same order
 * however the layer is split.
 */
int run_scatter_elements(const struct eng_layer *l, __u64 ub, __u64 ue,
			 const struct vnpu_eng_ctx *ctx)
{
	const struct vnpu_layer_scatter *at = l->attrs;
	const struct vnpu_cmd_tensor *idx = &l->t[1], *u = &l->t[2], *y = &l->t[3];
	__u32 size = vnpu_eng_dtype_size(y->dtype), d;
	__u64 coord[VNPU_MAX_DIMS], e, e0, e1, n = vnpu_eng_numel(u);
	struct scatter_range r;
	struct eng_pacer pc;

	eng_pacer_init(&pc, ctx);
	scatter_begin(l, ub, ue, &r, &pc);
	if (n)
		coords_of(u, 0, coord);
	/* An index, an update, Y's element twice: four reads an update. */
	for (e0 = 0; e0 < n; e0 = e1) {
		e1 = eng_pace_end_w(&pc, e0, n, 4);
		for (e = e0; e < e1; e++, coords_next(u, coord)) {
			__s64 yoff = 0, v;
			__u64 flat = 0;

			if (load_index(idx, l->data[1], offset_of(idx, coord),
				       y->dims[at->axis], &v))
				return VNPU_ENG_EINVAL;
			for (d = 0; d < y->rank; d++) {
				__u64 c = d == at->axis ? (__u64)v : coord[d];

				yoff += (__s64)c * y->strides[d];
				flat += c * r.mul[d];
			}
			if (flat < r.lo || flat >= r.hi)
				continue;
			scatter_apply((char *)l->data[3] + yoff * size,
				      (const char *)l->data[2] +
				      offset_of(u, coord) * size,
				      y->dtype, size, at->reduction);
		}
		eng_pace(&pc, 4 * (e1 - e0));
	}
	return 0;
}

int run_scatter_nd(const struct eng_layer *l, __u64 ub, __u64 ue,
		   const struct vnpu_eng_ctx *ctx)
{
	const struct vnpu_layer_scatter *at = l->attrs;
	const struct vnpu_cmd_tensor *idx = &l->t[1], *u = &l->t[2], *y = &l->t[3];
	__u32 size = vnpu_eng_dtype_size(y->dtype), d;
	__u32 q1 = idx->rank - 1, k = (__u32)idx->dims[q1];
	__u64 coord[VNPU_MAX_DIMS], e, n = vnpu_eng_numel(u);
	struct scatter_range r;
	struct eng_pacer pc;

	eng_pacer_init(&pc, ctx);
	scatter_begin(l, ub, ue, &r, &pc);
	if (n)
		coords_of(u, 0, coord);
	for (e = 0; e < n; e++, coords_next(u, coord)) {
		__s64 ioff = 0, yoff = 0, v;
		__u64 flat = 0;

		/* @k indices, an update, Y's element twice. */
		eng_pace(&pc, k + 3);
		for (d = 0; d < q1; d++)
			ioff += (__s64)coord[d] * idx->strides[d];
		for (d = 0; d < k; d++) {
			if (load_index(idx, l->data[1],
				       ioff + (__s64)d * idx->strides[q1],
				       y->dims[d], &v))
				return VNPU_ENG_EINVAL;
			yoff += v * y->strides[d];
			flat += (__u64)v * r.mul[d];
		}
		for (d = k; d < y->rank; d++) {
			yoff += (__s64)coord[q1 + d - k] * y->strides[d];
			flat += coord[q1 + d - k] * r.mul[d];
		}
		if (flat < r.lo || flat >= r.hi)
			continue;
		scatter_apply((char *)l->data[3] + yoff * size,
			      (const char *)l->data[2] + offset_of(u, coord) * size,
			      y->dtype, size, at->reduction);
	}
	return 0;
}

/* ---- GATHER_ND ------------------------------------------------------ */

int run_gather_nd(const struct eng_layer *l, __u64 ub, __u64 ue,
		  const struct vnpu_eng_ctx *ctx)
{
	const struct vnpu_layer_gather_nd *at = l->attrs;
	const struct vnpu_cmd_tensor *x = &l->t[0], *idx = &l->t[1], *y = &l->t[2];
	__u32 size = vnpu_eng_dtype_size(x->dtype), d;
	__u32 q1 = idx->rank - 1, k = (__u32)idx->dims[q1], b = at->batch_dims;
	__u64 coord[VNPU_MAX_DIMS], lo, hi, e;

	elem_range(y, ub, ue, &lo, &hi);
	if (lo < hi)
		coords_of(y, lo, coord);
	for (e = lo; e < hi; e++, coords_next(y, coord)) {
		__s64 ioff = 0, xoff = 0, v;

		for (d = 0; d < q1; d++)
			ioff += (__s64)coord[d] * idx->strides[d];
		for (d = 0; d < b; d++)
			xoff += (__s64)coord[d] * x->strides[d];
		for (d = 0; d < k; d++) {
			if (load_index(idx, l->data[1],
				       ioff + (__s64)d * idx->strides[q1],
				       x->dims[b + d], &v))
				return VNPU_ENG_EINVAL;
			xoff += v * x->strides[b + d];
		}
		for (d = b + k; d < x->rank; d++)
			xoff += (__s64)coord[q1 + d - b - k] * x->strides[d];
		copy_elem((char *)l->data[2] + offset_of(y, coord) * size,
			  (const char *)l->data[0] + xoff * size, size);
	}
	return 0;
}

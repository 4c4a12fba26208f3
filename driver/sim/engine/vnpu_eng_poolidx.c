// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * MAXPOOL_INDEX kernel: max pooling that also gives where each maximum
 * came from. Built per ISA (vnpu_eng_isa.h).
 */
#include "vnpu_eng_kern.h"

int run_maxpool_index(const struct eng_layer *l, __u64 ub, __u64 ue,
		      const struct vnpu_eng_ctx *ctx)
{
	const struct vnpu_layer_pool_index *at = l->attrs;
	const struct vnpu_cmd_tensor *x = &l->t[0], *y = &l->t[1], *ix = &l->t[2];
	__s64 h = (__s64)x->dims[2], w = (__s64)x->dims[3];
	__u64 coord[VNPU_MAX_DIMS], lo, hi, e;
	struct eng_pacer pc;
	__u32 i, j;

	eng_pacer_init(&pc, ctx);
	flat_range(y, eng_poolidx_window(at), ub, ue, &lo, &hi);
	if (lo < hi)
		coords_of(y, lo, coord);
	for (e = lo; e < hi; e++, coords_next(y, coord)) {
		__s64 base = (__s64)coord[0] * x->strides[0] +
			     (__s64)coord[1] * x->strides[1];
		__s64 plane = ((__s64)coord[0] * (__s64)x->dims[1] +
			       (__s64)coord[1]) * h * w, best_at = -1;
		float best = -__builtin_inff();

		for (i = 0; i < at->kernel[0]; i++) {
			__s64 r = (__s64)coord[2] * at->stride[0] -
				  at->pad_begin[0] + (__s64)i * at->dilation[0];

			if (r < 0 || r >= h)
				continue;
			for (j = 0; j < at->kernel[1]; j++) {
				__s64 c = (__s64)coord[3] * at->stride[1] -
					  at->pad_begin[1] +
					  (__s64)j * at->dilation[1];
				float v;

				eng_pace(&pc, 1);
				if (c < 0 || c >= w)
					continue;
				v = ldf(l->data[0], base + r * x->strides[2] +
					c * x->strides[3], x->dtype);
				if (best_at < 0 || v > best) {
					best = v;
					best_at = plane + (at->storage_order ?
							   c * h + r : r * w + c);
				}
			}
		}
		stf(l->data[1], offset_of(y, coord), y->dtype, best);
		((__s64 *)l->data[2])[offset_of(ix, coord)] = best_at;
	}
	return 0;
}

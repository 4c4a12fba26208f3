// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * DET kernel: the determinant of each M x M matrix by Gaussian elimination
 * with partial pivoting, in double, built per ISA (vnpu_eng_isa.h); a
 * unit is one matrix.
 */
#include "vnpu_eng_kern.h"

int run_det(const struct eng_layer *l, __u64 ub, __u64 ue,
	    const struct vnpu_eng_ctx *ctx)
{
	const struct vnpu_cmd_tensor *x = &l->t[0], *y = &l->t[1];
	__u32 m = (__u32)x->dims[x->rank - 1], r = x->rank, i, j, k;
	__u64 coord[VNPU_MAX_DIMS], u;
	double a[VNPU_DET_MAX_M * VNPU_DET_MAX_M];

	if (ub < ue)
		coords_of(y, ub, coord);
	for (u = ub; u < ue; u++, coords_next(y, coord)) {
		__s64 base = 0;
		double det = 1;

		for (i = 0; i + 2 < r; i++)
			base += (__s64)coord[i] * x->strides[i];
		for (i = 0; i < m; i++)
			for (j = 0; j < m; j++)
				a[i * m + j] = ldf(l->data[0], base +
						   (__s64)i * x->strides[r - 2] +
						   (__s64)j * x->strides[r - 1],
						   x->dtype);
		for (k = 0; k < m && det != 0; k++) {
			__u32 p = k;

			for (i = k + 1; i < m; i++)
				if (m_fabs(a[i * m + k]) > m_fabs(a[p * m + k]))
					p = i;
			if (a[p * m + k] == 0) {
				det = 0;
				break;
			}
			if (p != k) {
				for (j = 0; j < m; j++) {
					double t = a[k * m + j];

					a[k * m + j] = a[p * m + j];
					a[p * m + j] = t;
				}
				det = -det;
			}
			det *= a[k * m + k];
			for (i = k + 1; i < m; i++) {
				double f = a[i * m + k] / a[k * m + k];

				for (j = k; j < m; j++)
					a[i * m + j] -= f * a[k * m + j];
			}
		}
		stf(l->data[1], offset_of(y, coord), y->dtype, (float)det);
	}
	return 0;
}

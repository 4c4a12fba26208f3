// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * DET against cofactor expansion (M 1 to 5, singular matrices, both kernel
 * builds, whole and split) and the checks that refuse bad layers.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine_test.h"
#include "ksft_main.h"

/* Laplace expansion along the first row of the @m x @m matrix @a. */
static double cofactor_det(const double *a, int m)
{
	double sub[25], det = 0;

	if (m == 1)
		return a[0];
	for (int c = 0; c < m; c++) {
		int k = 0;

		for (int i = 1; i < m; i++)
			for (int j = 0; j < m; j++)
				if (j != c)
					sub[k++] = a[i * m + j];
		det += (c % 2 ? -1 : 1) * a[c] * cofactor_det(sub, m - 1);
	}
	return det;
}

static void test_values(struct __test_metadata *_metadata)
{
	for (int m = 1; m <= 5; m++)
		for (int cfg = 0; cfg < 4; cfg++) {
			enum { NB = 6 };
			__u64 xd[3] = { NB, (__u64)m, (__u64)m }, yd[1] = { NB };
			struct vnpu_cmd_tensor t[2] = { et_dense(VNPU_DTYPE_F32, 3, xd),
							et_dense(VNPU_DTYPE_F32, 1, yd) };
			float x[NB * 25], y[NB];
			void *data[2] = { x, y };
			struct vnpu_eng_ctx ctx = { .features = cfg & 1 ? vnpu_eng_host_features() : 0 };
			__u32 parts = cfg & 2 ? 4 : 1, p;
			int rc = vnpu_eng_layer_check(VNPU_LAYER_DET, t, 2, NULL, 0);

			for (int i = 0; i < NB * m * m; i++)
				x[i] = (float)((i * 13 + m) % 11) * 0.5f - 2.5f;
			/* Matrix 3 singular: two equal rows. */
			if (m > 1)
				memcpy(&x[3 * m * m + m], &x[3 * m * m], (size_t)m * sizeof(float));
			EXPECT_TRUE(!rc)
				TH_LOG("m %d passes the check", m);
			if (parts > vnpu_eng_layer_max_parts(VNPU_LAYER_DET, t, 2, NULL, ctx.features))
				parts = vnpu_eng_layer_max_parts(VNPU_LAYER_DET, t, 2, NULL, ctx.features);
			for (p = 0; p < parts && !rc; p++)
				rc = vnpu_eng_layer_run(VNPU_LAYER_DET, t, data, 2, NULL, p, parts, &ctx);
			EXPECT_TRUE(!rc)
				TH_LOG("m %d runs", m);
			for (int b = 0; b < NB; b++) {
				double a[25], want;

				for (int i = 0; i < m * m; i++)
					a[i] = x[b * m * m + i];
				want = cofactor_det(a, m);
				EXPECT_LE(fabs(y[b] - want), 1e-4 * (1 + fabs(want)))
					TH_LOG("m %d matrix %d config %d: %g, want %g", m, b, cfg,
					       y[b], want);
			}
		}
}

static void test_bad_layers(struct __test_metadata *_metadata)
{
	static const __u64 xd[3] = { 2, 3, 3 }, yd[1] = { 2 }, big[2] = { 9, 9 };
	struct vnpu_cmd_tensor t[2] = { et_dense(VNPU_DTYPE_F32, 3, xd),
					et_dense(VNPU_DTYPE_F32, 1, yd) };
	int attr = 0;

	EXPECT_TRUE(!vnpu_eng_layer_check(VNPU_LAYER_DET, t, 2, NULL, 0))
		TH_LOG("good layer");
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_DET, t, 2, &attr, 4))
		TH_LOG("attributes given");
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_DET, t, 1, NULL, 0))
		TH_LOG("one tensor");
	t[0].dims[2] = 2;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_DET, t, 2, NULL, 0))
		TH_LOG("not square");
	t[0].dims[2] = 3;
	t[1].dims[0] = 3;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_DET, t, 2, NULL, 0))
		TH_LOG("Y of other batch");
	t[1].dims[0] = 2;
	t[0].dtype = t[1].dtype = VNPU_DTYPE_I32;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_DET, t, 2, NULL, 0))
		TH_LOG("integer matrices");
	t[0] = et_dense(VNPU_DTYPE_F32, 2, big);
	t[1] = et_dense(VNPU_DTYPE_F32, 0, big);
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_DET, t, 2, NULL, 0))
		TH_LOG("9 x 9 above the limit");
}

TEST(det)
{
	test_values(_metadata);
	test_bad_layers(_metadata);
}

KSFT_MAIN

// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * MAXPOOL_INDEX against a naive reference (strides, dilations, padding,
 * both storage orders; both kernel builds, whole and split) and the checks
 * that refuse bad layers.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine_test.h"
#include "ksft_main.h"

enum { N = 2, C = 3, H = 7, W = 8 };

static void test_values(struct __test_metadata *_metadata)
{
	static const struct vnpu_layer_pool_index cases[] = {
		{ { 2, 2 }, { 2, 2 }, { 1, 1 }, { 0, 0 }, 0, 0 },
		{ { 3, 2 }, { 1, 2 }, { 1, 1 }, { 1, 1 }, 1, 0 },
		{ { 2, 3 }, { 2, 1 }, { 2, 2 }, { 1, 0 }, 0, 0 },
	};
	float x[N * C * H * W], y[N * C * H * W];
	__s64 ix[N * C * H * W];

	for (int i = 0; i < N * C * H * W; i++)
		x[i] = (float)((i * 29) % 31) - 15;	/* repeats: ties */
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++)
		for (int cfg = 0; cfg < 4; cfg++) {
			const struct vnpu_layer_pool_index *a = &cases[k];
			__u64 oh = (H + 2 * a->pad_begin[0] - a->dilation[0] * (a->kernel[0] - 1) - 1) /
				   a->stride[0] + 1;
			__u64 ow = (W + 2 * a->pad_begin[1] - a->dilation[1] * (a->kernel[1] - 1) - 1) /
				   a->stride[1] + 1;
			__u64 xd[4] = { N, C, H, W }, yd[4] = { N, C, oh, ow };
			struct vnpu_cmd_tensor t[3] = { et_dense(VNPU_DTYPE_F32, 4, xd),
							et_dense(VNPU_DTYPE_F32, 4, yd),
							et_dense(VNPU_DTYPE_I64, 4, yd) };
			void *data[3] = { x, y, ix };
			struct vnpu_eng_ctx ctx = { .features = cfg & 1 ? vnpu_eng_host_features() : 0 };
			__u32 parts = cfg & 2 ? 3 : 1, p;
			int rc = vnpu_eng_layer_check(VNPU_LAYER_MAXPOOL_INDEX, t, 3, a, sizeof(*a)), bad = 0;

			EXPECT_TRUE(!rc)
				TH_LOG("case %zu passes the check", k);
			if (parts > vnpu_eng_layer_max_parts(VNPU_LAYER_MAXPOOL_INDEX, t, 3, a, ctx.features))
				parts = vnpu_eng_layer_max_parts(VNPU_LAYER_MAXPOOL_INDEX, t, 3, a, ctx.features);
			for (p = 0; p < parts && !rc; p++)
				rc = vnpu_eng_layer_run(VNPU_LAYER_MAXPOOL_INDEX, t, data, 3, a, p, parts,
							&ctx);
			EXPECT_TRUE(!rc)
				TH_LOG("case %zu runs", k);
			for (__u64 o = 0; o < N * C * oh * ow; o++) {
				__u64 nc = o / (oh * ow), r0 = o / ow % oh, c0 = o % ow;
				float best = -INFINITY;
				__s64 at = -1;

				for (__u32 i = 0; i < a->kernel[0]; i++)
					for (__u32 j = 0; j < a->kernel[1]; j++) {
						long r = (long)(r0 * a->stride[0] + i * a->dilation[0]) -
							 a->pad_begin[0];
						long c = (long)(c0 * a->stride[1] + j * a->dilation[1]) -
							 a->pad_begin[1];
						float v;

						if (r < 0 || r >= H || c < 0 || c >= W)
							continue;
						v = x[nc * H * W + r * W + c];
						if (at < 0 || v > best) {
							best = v;
							at = (__s64)(nc * H * W) +
							     (a->storage_order ? c * H + r : r * W + c);
						}
					}
				bad += y[o] != best || ix[o] != at;
			}
			EXPECT_TRUE(!bad)
				TH_LOG("case %zu config %d: %d wrong", k, cfg, bad);
		}
}

static void test_bad_layers(struct __test_metadata *_metadata)
{
	static const __u64 xd[4] = { N, C, H, W }, yd[4] = { N, C, 3, 4 };
	struct vnpu_cmd_tensor t[3] = { et_dense(VNPU_DTYPE_F32, 4, xd),
					et_dense(VNPU_DTYPE_F32, 4, yd),
					et_dense(VNPU_DTYPE_I64, 4, yd) };
	struct vnpu_layer_pool_index a = { { 2, 2 }, { 2, 2 }, { 1, 1 }, { 0, 0 }, 0, 0 };
	const __u32 sz = sizeof(a);

	EXPECT_TRUE(!vnpu_eng_layer_check(VNPU_LAYER_MAXPOOL_INDEX, t, 3, &a, sz))
		TH_LOG("good layer");
	a.storage_order = 2;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_MAXPOOL_INDEX, t, 3, &a, sz))
		TH_LOG("storage order 2");
	a.storage_order = 0;
	a.stride[1] = 0;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_MAXPOOL_INDEX, t, 3, &a, sz))
		TH_LOG("stride 0");
	a.stride[1] = 2;
	a.pad_begin[0] = 2;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_MAXPOOL_INDEX, t, 3, &a, sz))
		TH_LOG("padding past the window");
	a.pad_begin[0] = 0;
	t[2].dtype = VNPU_DTYPE_I32;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_MAXPOOL_INDEX, t, 3, &a, sz))
		TH_LOG("i32 indices");
	t[2].dtype = VNPU_DTYPE_I64;
	t[2].dims[3] = 5;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_MAXPOOL_INDEX, t, 3, &a, sz))
		TH_LOG("I not shaped like Y");
	t[2].dims[3] = 4;
	t[1].dims[1] = C + 1;
	t[2].dims[1] = C + 1;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_MAXPOOL_INDEX, t, 3, &a, sz))
		TH_LOG("Y of other channels");
}

TEST(poolidx)
{
	test_values(_metadata);
	test_bad_layers(_metadata);
}

KSFT_MAIN

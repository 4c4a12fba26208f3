// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * SCATTER_ELEMENTS, SCATTER_ND and GATHER_ND against naive references, on
 * both kernel builds and split into parts, and the checks that refuse bad
 * layers.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_test.h"
#include "ksft_main.h"

/* Check, then run in @parts parts (as many as the engine allows). */
static int run(__u32 op, const struct vnpu_cmd_tensor *t, void *const *data, __u32 n,
	       const void *attrs, __u32 attr_size, __u32 features, __u32 parts)
{
	struct vnpu_eng_ctx ctx = { .features = features };
	__u32 max, p;
	int rc = vnpu_eng_layer_check(op, t, n, attrs, attr_size);

	if (rc)
		return rc;
	max = vnpu_eng_layer_max_parts(op, t, n, attrs, features);
	if (parts > max)
		parts = max;
	if (vnpu_eng_layer_scratch(op, t, n, attrs, parts, features))
		return -1;	/* these layers need none */
	for (p = parts; p-- > 0;) {
		rc = vnpu_eng_layer_run(op, t, data, n, attrs, p, parts, &ctx);
		if (rc)
			return rc;
	}
	return 0;
}

static const __u32 configs[][2] = { { 0, 1 }, { 0, 7 }, { 1, 1 }, { 1, 64 } };

static __u32 features_of(int host)
{
	return host ? vnpu_eng_host_features() : 0;
}

static float reduce_f(float a, float b, __u32 red)
{
	switch (red) {
	case VNPU_SCATTER_ADD:
		return a + b;
	case VNPU_SCATTER_MUL:
		return a * b;
	case VNPU_SCATTER_MAX:
		return a > b ? a : b;
	case VNPU_SCATTER_MIN:
		return a < b ? a : b;
	default:
		return b;
	}
}

/* data [3, 5] f32, indices [3, 4] (i64, some negative, some repeated) along
 * axis 1, each reduction. */
static void test_scatter_elements(struct __test_metadata *_metadata)
{
	static const __u64 xd[2] = { 3, 5 }, id[2] = { 3, 4 };
	float x[15], u[12], y[15], ref[15];
	__s64 idx[12];
	struct vnpu_cmd_tensor t[4] = { et_dense(VNPU_DTYPE_F32, 2, xd),
					et_dense(VNPU_DTYPE_I64, 2, id),
					et_dense(VNPU_DTYPE_F32, 2, id),
					et_dense(VNPU_DTYPE_F32, 2, xd) };
	void *data[4] = { x, idx, u, y };
	__u32 red, c;
	int i, j;

	for (i = 0; i < 15; i++)
		x[i] = (float)(i % 7) - 2.5f;
	for (i = 0; i < 12; i++) {
		idx[i] = (i * 3) % 5 - (i % 2 ? 5 : 0);	/* -5..4, repeats */
		u[i] = 0.5f * (float)i - 1;
	}
	for (red = VNPU_SCATTER_NONE; red <= VNPU_SCATTER_MIN; red++) {
		struct vnpu_layer_scatter at = { .axis = 1, .reduction = red };

		memcpy(ref, x, sizeof(x));
		for (i = 0; i < 3; i++)
			for (j = 0; j < 4; j++) {
				__s64 k = idx[i * 4 + j];

				k = k < 0 ? k + 5 : k;
				ref[i * 5 + k] = reduce_f(ref[i * 5 + k], u[i * 4 + j], red);
			}
		for (c = 0; c < 4; c++) {
			memset(y, 0xff, sizeof(y));
			EXPECT_TRUE(!run(VNPU_LAYER_SCATTER_ELEMENTS, t, data, 4, &at, sizeof(at),
					 features_of(configs[c][0]), configs[c][1]))
				TH_LOG("scatter_elements reduction %u runs", red);
			EXPECT_TRUE(!memcmp(y, ref, sizeof(y)))
				TH_LOG("scatter_elements reduction %u config %u", red, c);
		}
	}
	/* An index out of range faults the run. */
	idx[5] = 5;
	{
		struct vnpu_layer_scatter at = { .axis = 1 };

		EXPECT_EQ(VNPU_ENG_EINVAL,
			  run(VNPU_LAYER_SCATTER_ELEMENTS, t, data, 4, &at, sizeof(at), 0, 1))
			TH_LOG("index 5 of 5 refused");
	}
}

/* data [4, 3] i64, indices [2, 2, 1] (i32): rows replaced or added. */
static void test_scatter_nd(struct __test_metadata *_metadata)
{
	static const __u64 xd[2] = { 4, 3 }, id[3] = { 2, 2, 1 }, ud[3] = { 2, 2, 3 };
	__s64 x[12], u[12], y[12], ref[12];
	__s32 idx[4] = { 3, -4, 1, 3 };
	struct vnpu_cmd_tensor t[4] = { et_dense(VNPU_DTYPE_I64, 2, xd),
					et_dense(VNPU_DTYPE_I32, 3, id),
					et_dense(VNPU_DTYPE_I64, 3, ud),
					et_dense(VNPU_DTYPE_I64, 2, xd) };
	void *data[4] = { x, idx, u, y };
	__u32 red, c;
	int i, j;

	for (i = 0; i < 12; i++) {
		x[i] = i * 10;
		u[i] = -i - 1;
	}
	for (red = VNPU_SCATTER_NONE; red <= VNPU_SCATTER_MUL; red++) {
		struct vnpu_layer_scatter at = { .reduction = red };

		memcpy(ref, x, sizeof(x));
		for (i = 0; i < 4; i++) {
			int row = idx[i] < 0 ? idx[i] + 4 : idx[i];

			for (j = 0; j < 3; j++) {
				__s64 *d = &ref[row * 3 + j], v = u[i * 3 + j];

				*d = red == VNPU_SCATTER_ADD ? *d + v :
				     red == VNPU_SCATTER_MUL ? *d * v : v;
			}
		}
		for (c = 0; c < 4; c++) {
			memset(y, 0, sizeof(y));
			EXPECT_TRUE(!run(VNPU_LAYER_SCATTER_ND, t, data, 4, &at, sizeof(at),
					 features_of(configs[c][0]), configs[c][1]))
				TH_LOG("scatter_nd reduction %u runs", red);
			EXPECT_TRUE(!memcmp(y, ref, sizeof(y)))
				TH_LOG("scatter_nd reduction %u config %u", red, c);
		}
	}
}

/* data [2, 3, 4] f32, batch_dims 1, indices [2, 5, 1] (i64): y [2, 5, 4];
 * then batch_dims 0 with k = 2: y [2, 5, 4] again. */
static void test_gather_nd(struct __test_metadata *_metadata)
{
	static const __u64 xd[3] = { 2, 3, 4 }, id[3] = { 2, 5, 1 }, yd[3] = { 2, 5, 4 };
	static const __u64 id2[3] = { 2, 5, 2 };
	float x[24], y[40], ref[40];
	__s64 idx[20];
	struct vnpu_cmd_tensor t[3] = { et_dense(VNPU_DTYPE_F32, 3, xd),
					et_dense(VNPU_DTYPE_I64, 3, id),
					et_dense(VNPU_DTYPE_F32, 3, yd) };
	struct vnpu_layer_gather_nd at = { .batch_dims = 1 };
	void *data[3] = { x, idx, y };
	__u32 c;
	int b, i, j;

	for (i = 0; i < 24; i++)
		x[i] = (float)i * 0.25f;
	for (i = 0; i < 20; i++)
		idx[i] = i % 3 - (i % 4 == 1 ? 3 : 0);
	for (b = 0; b < 2; b++)
		for (i = 0; i < 5; i++) {
			__s64 k = idx[b * 5 + i] < 0 ? idx[b * 5 + i] + 3 : idx[b * 5 + i];

			for (j = 0; j < 4; j++)
				ref[(b * 5 + i) * 4 + j] = x[(b * 3 + k) * 4 + j];
		}
	for (c = 0; c < 4; c++) {
		memset(y, 0, sizeof(y));
		EXPECT_TRUE(!run(VNPU_LAYER_GATHER_ND, t, data, 3, &at, sizeof(at),
				 features_of(configs[c][0]), configs[c][1]))
			TH_LOG("gather_nd runs");
		EXPECT_TRUE(!memcmp(y, ref, sizeof(y)))
			TH_LOG("gather_nd batch_dims 1 config %u", c);
	}

	/* k = 2 without batch dims: pairs (i, j) pick x[i, j, :]. */
	at.batch_dims = 0;
	t[1] = et_dense(VNPU_DTYPE_I64, 3, id2);
	for (i = 0; i < 10; i++) {
		__s64 a = i % 2, bb = (i * 2) % 3;

		idx[i * 2] = a;
		idx[i * 2 + 1] = bb;
		for (j = 0; j < 4; j++)
			ref[i * 4 + j] = x[(a * 3 + bb) * 4 + j];
	}
	for (c = 0; c < 4; c++) {
		memset(y, 0, sizeof(y));
		EXPECT_TRUE(!run(VNPU_LAYER_GATHER_ND, t, data, 3, &at, sizeof(at),
				 features_of(configs[c][0]), configs[c][1]))
			TH_LOG("gather_nd k=2 runs");
		EXPECT_TRUE(!memcmp(y, ref, sizeof(y)))
			TH_LOG("gather_nd k=2 config %u", c);
	}
	idx[3] = 3;
	EXPECT_EQ(VNPU_ENG_EINVAL, run(VNPU_LAYER_GATHER_ND, t, data, 3, &at, sizeof(at), 0, 1))
		TH_LOG("gather_nd index out of range refused");
}

/* Layers the checks must refuse. */
static void test_bad_layers(struct __test_metadata *_metadata)
{
	static const __u64 xd[2] = { 3, 5 }, id[2] = { 3, 4 }, id3[2] = { 3, 6 };
	static const __u64 nd_i[2] = { 2, 3 }, nd_u[1] = { 2 };
	struct vnpu_cmd_tensor t[4] = { et_dense(VNPU_DTYPE_F32, 2, xd),
					et_dense(VNPU_DTYPE_I64, 2, id),
					et_dense(VNPU_DTYPE_F32, 2, id),
					et_dense(VNPU_DTYPE_F32, 2, xd) };
	struct vnpu_layer_scatter at = { .axis = 1 };
	struct vnpu_layer_gather_nd g = { 0 };

	EXPECT_TRUE(!vnpu_eng_layer_check(VNPU_LAYER_SCATTER_ELEMENTS, t, 4, &at, sizeof(at)))
		TH_LOG("a good scatter passes");
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_SCATTER_ELEMENTS, t, 4, &at, 4))
		TH_LOG("short attributes");
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_SCATTER_ELEMENTS, t, 3, &at, sizeof(at)))
		TH_LOG("three tensors");
	at.reduction = VNPU_SCATTER_MIN + 1;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_SCATTER_ELEMENTS, t, 4, &at, sizeof(at)))
		TH_LOG("unknown reduction");
	at.reduction = 0;
	at.axis = 2;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_SCATTER_ELEMENTS, t, 4, &at, sizeof(at)))
		TH_LOG("axis beyond the rank");
	at.axis = 0;
	t[1] = et_dense(VNPU_DTYPE_I64, 2, id3);
	t[2] = et_dense(VNPU_DTYPE_F32, 2, id3);
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_SCATTER_ELEMENTS, t, 4, &at, sizeof(at)))
		TH_LOG("updates wider than data off the axis");
	t[1] = et_dense(VNPU_DTYPE_F32, 2, id);
	t[2] = et_dense(VNPU_DTYPE_F32, 2, id);
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_SCATTER_ELEMENTS, t, 4, &at, sizeof(at)))
		TH_LOG("float indices");
	t[1] = et_dense(VNPU_DTYPE_I64, 2, id);
	t[2] = et_dense(VNPU_DTYPE_F16, 2, id);
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_SCATTER_ELEMENTS, t, 4, &at, sizeof(at)))
		TH_LOG("updates of another dtype");
	t[0] = et_dense(VNPU_DTYPE_U8, 2, xd);
	t[2] = et_dense(VNPU_DTYPE_U8, 2, id);
	t[3] = et_dense(VNPU_DTYPE_U8, 2, xd);
	at.reduction = VNPU_SCATTER_ADD;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_SCATTER_ELEMENTS, t, 4, &at, sizeof(at)))
		TH_LOG("u8 reduction");
	at.reduction = VNPU_SCATTER_NONE;
	EXPECT_TRUE(!vnpu_eng_layer_check(VNPU_LAYER_SCATTER_ELEMENTS, t, 4, &at, sizeof(at)))
		TH_LOG("u8 without reduction passes");

	/* ScatterND: k above the rank; updates of the wrong shape; axis set. */
	t[0] = et_dense(VNPU_DTYPE_F32, 2, xd);
	t[1] = et_dense(VNPU_DTYPE_I64, 2, nd_i);
	t[2] = et_dense(VNPU_DTYPE_F32, 1, nd_u);
	t[3] = et_dense(VNPU_DTYPE_F32, 2, xd);
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_SCATTER_ND, t, 4, &at, sizeof(at)))
		TH_LOG("scatter_nd k 3 above rank 2");
	t[1].dims[1] = 2;
	EXPECT_TRUE(!vnpu_eng_layer_check(VNPU_LAYER_SCATTER_ND, t, 4, &at, sizeof(at)))
		TH_LOG("scatter_nd k 2 passes");
	at.axis = 1;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_SCATTER_ND, t, 4, &at, sizeof(at)))
		TH_LOG("scatter_nd with an axis");
	at.axis = 0;
	t[2].dims[0] = 3;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_SCATTER_ND, t, 4, &at, sizeof(at)))
		TH_LOG("scatter_nd updates of the wrong shape");

	/* GatherND: k above rank - batch_dims; pad set; Y of the wrong shape. */
	t[1] = et_dense(VNPU_DTYPE_I64, 2, nd_i);
	t[2] = et_dense(VNPU_DTYPE_F32, 1, nd_u);
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_GATHER_ND, t, 3, &g, sizeof(g)))
		TH_LOG("gather_nd k 3 above rank 2");
	t[1].dims[1] = 2;
	EXPECT_TRUE(!vnpu_eng_layer_check(VNPU_LAYER_GATHER_ND, t, 3, &g, sizeof(g)))
		TH_LOG("gather_nd k 2 passes");
	g.pad = 1;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_GATHER_ND, t, 3, &g, sizeof(g)))
		TH_LOG("gather_nd pad");
	g.pad = 0;
	g.batch_dims = 2;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_GATHER_ND, t, 3, &g, sizeof(g)))
		TH_LOG("gather_nd batch_dims 2 of indices rank 2");
	g.batch_dims = 0;
	t[2].dims[0] = 3;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_GATHER_ND, t, 3, &g, sizeof(g)))
		TH_LOG("gather_nd Y of the wrong shape");
}

TEST(scatter)
{
	test_scatter_elements(_metadata);
	test_scatter_nd(_metadata);
	test_gather_nd(_metadata);
	test_bad_layers(_metadata);
}

KSFT_MAIN

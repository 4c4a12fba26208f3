// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ROI_ALIGN against a naive reference (avg and max, both coordinate modes,
 * fixed and adaptive sampling; both kernel builds, whole and split), bad
 * batch indices and the checks that refuse bad layers.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine_test.h"
#include "ksft_main.h"

enum { N = 2, C = 2, H = 6, W = 7, R = 4, OH = 3, OW = 2 };

static float pix(const float *x, int b, int c, int y, int xx)
{
	return x[((b * C + c) * H + y) * W + xx];
}

/* The four weighted neighbours of (y, x), or all 0 well outside. */
static void sample(const float *x, int b, int c, double y, double xx, double *v)
{
	int y0, x0, y1, x1;
	double ly, lx;

	v[0] = v[1] = v[2] = v[3] = 0;
	if (y < -1 || y > H || xx < -1 || xx > W)
		return;
	y = fmax(y, 0);
	xx = fmax(xx, 0);
	y0 = (int)y;
	x0 = (int)xx;
	y1 = y0 + 1;
	x1 = x0 + 1;
	if (y0 >= H - 1) {
		y0 = y1 = H - 1;
		y = y0;
	}
	if (x0 >= W - 1) {
		x0 = x1 = W - 1;
		xx = x0;
	}
	ly = y - y0;
	lx = xx - x0;
	v[0] = (1 - ly) * (1 - lx) * pix(x, b, c, y0, x0);
	v[1] = (1 - ly) * lx * pix(x, b, c, y0, x1);
	v[2] = ly * (1 - lx) * pix(x, b, c, y1, x0);
	v[3] = ly * lx * pix(x, b, c, y1, x1);
}

static double reference(const float *x, const float *roi, int b, int c, int ph, int pw,
			const struct vnpu_layer_roi_align *a, float scale)
{
	double off = a->half_pixel ? 0.5 : 0;
	double x1 = roi[0] * scale - off, y1 = roi[1] * scale - off;
	double rw = roi[2] * scale - off - x1, rh = roi[3] * scale - off - y1;
	double bh, bw, sum = 0, best = -INFINITY;
	int gh, gw;

	if (!a->half_pixel) {
		rw = fmax(rw, 1);
		rh = fmax(rh, 1);
	}
	bh = rh / OH;
	bw = rw / OW;
	gh = a->sampling_ratio ? (int)a->sampling_ratio : (int)ceil(bh);
	gw = a->sampling_ratio ? (int)a->sampling_ratio : (int)ceil(bw);
	for (int iy = 0; iy < gh; iy++)
		for (int ix = 0; ix < gw; ix++) {
			double v[4];

			sample(x, b, c, y1 + ph * bh + (iy + 0.5) * bh / gh,
			       x1 + pw * bw + (ix + 0.5) * bw / gw, v);
			sum += v[0] + v[1] + v[2] + v[3];
			best = fmax(best, fmax(fmax(v[0], v[1]), fmax(v[2], v[3])));
		}
	if (a->mode)
		return gh && gw ? best : 0;
	return gh && gw ? sum / (gh * gw) : 0;
}

static void test_values(struct __test_metadata *_metadata)
{
	static const __u64 xd[4] = { N, C, H, W }, rd[2] = { R, 4 }, bd[1] = { R };
	static const __u64 yd[4] = { R, C, OH, OW };
	static const float rois[R * 4] = { 0, 0, 6, 5, 1.5f, 0.5f, 4, 9, -2, 1, 3, 2.5f,
					   2, 2, 2.2f, 2.1f };
	float x[N * C * H * W], y[R * C * OH * OW];
	__s64 bi[R] = { 0, 1, 1, -2 };
	struct vnpu_cmd_tensor t[4] = { et_dense(VNPU_DTYPE_F32, 4, xd),
					et_dense(VNPU_DTYPE_F32, 2, rd),
					et_dense(VNPU_DTYPE_I64, 1, bd),
					et_dense(VNPU_DTYPE_F32, 4, yd) };
	void *data[4] = { x, (void *)rois, bi, y };

	for (int i = 0; i < N * C * H * W; i++)
		x[i] = (float)((i * 17) % 13) * 0.5f - 3;
	for (__u32 mode = 0; mode <= 1; mode++)
		for (__u32 hp = 0; hp <= 1; hp++)
			for (__u32 ratio = 0; ratio <= 2; ratio += 2)
				for (__u32 cfg = 0; cfg < 4; cfg++) {
					struct vnpu_layer_roi_align a = {
						.mode = mode, .half_pixel = hp, .sampling_ratio = ratio,
					};
					struct vnpu_eng_ctx ctx = {
						.features = cfg & 1 ? vnpu_eng_host_features() : 0,
					};
					float scale = hp ? 0.75f : 1.0f;
					__u32 parts = cfg & 2 ? 3 : 1, p;
					double worst = 0;
					int rc;

					memcpy(&a.spatial_scale, &scale, 4);
					rc = vnpu_eng_layer_check(VNPU_LAYER_ROI_ALIGN, t, 4, &a, sizeof(a));
					EXPECT_TRUE(!rc)
						TH_LOG("good layer");
					if (parts > vnpu_eng_layer_max_parts(VNPU_LAYER_ROI_ALIGN, t, 4, &a, ctx.features))
						parts = vnpu_eng_layer_max_parts(VNPU_LAYER_ROI_ALIGN, t, 4, &a, ctx.features);
					for (p = 0; p < parts && !rc; p++)
						rc = vnpu_eng_layer_run(VNPU_LAYER_ROI_ALIGN, t, data, 4, &a,
									p, parts, &ctx);
					EXPECT_TRUE(!rc)
						TH_LOG("runs");
					for (int r = 0; r < R; r++)
						for (int c = 0; c < C; c++)
							for (int o = 0; o < OH * OW; o++) {
								double want = reference(x, &rois[r * 4],
									(int)(bi[r] < 0 ? bi[r] + N : bi[r]),
									c, o / OW, o % OW, &a, scale);
								double got = y[(r * C + c) * OH * OW + o];

								worst = fmax(worst, fabs(got - want));
							}
					EXPECT_LT(worst, 1e-5)
						TH_LOG("mode %u half_pixel %u ratio %u config %u: %g",
						       mode, hp, ratio, cfg, worst);
				}
	{
		struct vnpu_layer_roi_align a = { .spatial_scale = 0x3f800000 };
		struct vnpu_eng_ctx ctx = { 0 };

		bi[2] = N;
		EXPECT_EQ(VNPU_ENG_EINVAL,
			  vnpu_eng_layer_run(VNPU_LAYER_ROI_ALIGN, t, data, 4, &a, 0, 1, &ctx))
			TH_LOG("batch index out of range");
	}
}

static void test_bad_layers(struct __test_metadata *_metadata)
{
	static const __u64 xd[4] = { N, C, H, W }, rd[2] = { R, 4 }, bd[1] = { R };
	static const __u64 yd[4] = { R, C, OH, OW };
	struct vnpu_cmd_tensor t[4] = { et_dense(VNPU_DTYPE_F32, 4, xd),
					et_dense(VNPU_DTYPE_F32, 2, rd),
					et_dense(VNPU_DTYPE_I64, 1, bd),
					et_dense(VNPU_DTYPE_F32, 4, yd) };
	struct vnpu_layer_roi_align a = { .spatial_scale = 0x3f800000 };
	const __u32 sz = sizeof(a);

	EXPECT_TRUE(!vnpu_eng_layer_check(VNPU_LAYER_ROI_ALIGN, t, 4, &a, sz))
		TH_LOG("good layer");
	a.mode = 2;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_ROI_ALIGN, t, 4, &a, sz))
		TH_LOG("bad mode");
	a.mode = 0;
	a.spatial_scale = 0x7fc00000;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_ROI_ALIGN, t, 4, &a, sz))
		TH_LOG("NaN scale");
	a.spatial_scale = 0x3f800000;
	t[1].dims[1] = 5;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_ROI_ALIGN, t, 4, &a, sz))
		TH_LOG("rois of 5");
	t[1].dims[1] = 4;
	t[2].dims[0] = R + 1;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_ROI_ALIGN, t, 4, &a, sz))
		TH_LOG("indices of R + 1");
	t[2].dims[0] = R;
	t[3].dims[1] = C + 1;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_ROI_ALIGN, t, 4, &a, sz))
		TH_LOG("Y of other channels");
	t[3].dims[1] = C;
	t[2].dtype = VNPU_DTYPE_F32;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_ROI_ALIGN, t, 4, &a, sz))
		TH_LOG("float indices");
}

TEST(roi)
{
	test_values(_metadata);
	test_bad_layers(_metadata);
}

KSFT_MAIN

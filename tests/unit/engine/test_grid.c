// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * GRID_SAMPLE against a naive reference (every mode, padding and
 * align_corners; both kernel builds, whole and split), and the checks that
 * refuse bad layers.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_test.h"
#include "ksft_main.h"

static int run(const struct vnpu_cmd_tensor *t, void *const *data, const void *attrs,
	       __u32 features, __u32 parts)
{
	struct vnpu_eng_ctx ctx = { .features = features };
	__u32 max, p;
	int rc = vnpu_eng_layer_check(VNPU_LAYER_GRID_SAMPLE, t, 3, attrs,
				      sizeof(struct vnpu_layer_grid_sample));

	if (rc)
		return rc;
	max = vnpu_eng_layer_max_parts(VNPU_LAYER_GRID_SAMPLE, t, 3, attrs, features);
	parts = parts > max ? max : parts;
	for (p = 0; p < parts; p++) {
		rc = vnpu_eng_layer_run(VNPU_LAYER_GRID_SAMPLE, t, data, 3, attrs, p, parts, &ctx);
		if (rc)
			return rc;
	}
	return 0;
}

/* ---- the reference, written from the ONNX operator text ---- */

enum { H = 5, W = 7, HO = 6, WO = 9, N = 2, C = 3 };

static double unnorm(double g, int len, int align)
{
	return align ? (g + 1) / 2 * (len - 1) : ((g + 1) * len - 1) / 2;
}

/* Mirror @x at @lo and @hi until it lies between them. */
static double reflect(double x, double lo, double hi)
{
	if (hi <= lo)
		return 0;
	for (;;) {
		if (x < lo)
			x = 2 * lo - x;
		else if (x > hi)
			x = 2 * hi - x;
		else
			return x;
	}
}

static double pad_coord(double x, int len, int padding, int align)
{
	if (padding == VNPU_GRID_PAD_REFLECTION)
		x = align ? reflect(x, 0, len - 1) : reflect(x, -0.5, len - 0.5);
	if (padding != VNPU_GRID_PAD_ZEROS)
		x = x < 0 ? 0 : x > len - 1 ? len - 1 : x;
	return x;
}

static double at(const float *plane, double y, double x)
{
	long yi = lround(y), xi = lround(x);	/* whole numbers here */

	if (yi < 0 || xi < 0 || yi >= H || xi >= W)
		return 0;
	return plane[yi * W + xi];
}

static double keys(double t)
{
	const double a = -0.75;

	t = fabs(t);
	if (t <= 1)
		return ((a + 2) * t - (a + 3)) * t * t + 1;
	if (t < 2)
		return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
	return 0;
}

static double sample(const float *plane, double gx, double gy,
		     const struct vnpu_layer_grid_sample *a)
{
	double x = unnorm(gx, W, a->align_corners), y = unnorm(gy, H, a->align_corners);
	double v = 0;
	int i, j;

	if (a->mode == VNPU_RESIZE_CUBIC) {
		double x0 = floor(x) - 1, y0 = floor(y) - 1;

		for (i = 0; i < 4; i++)
			for (j = 0; j < 4; j++) {
				double ty = pad_coord(y0 + i, H, a->padding, a->align_corners);
				double tx = pad_coord(x0 + j, W, a->padding, a->align_corners);

				v += keys(y - (y0 + i)) * keys(x - (x0 + j)) *
				     at(plane, floor(ty), floor(tx));
			}
		return v;
	}
	x = pad_coord(x, W, a->padding, a->align_corners);
	y = pad_coord(y, H, a->padding, a->align_corners);
	if (a->mode == VNPU_RESIZE_NEAREST)
		return at(plane, nearbyint(y), nearbyint(x));
	for (i = 0; i < 2; i++)
		for (j = 0; j < 2; j++) {
			double yi = floor(y) + i, xi = floor(x) + j;

			v += (1 - fabs(y - yi)) * (1 - fabs(x - xi)) * at(plane, yi, xi);
		}
	return v;
}

static void test_modes(struct __test_metadata *_metadata)
{
	static const __u64 xd[4] = { N, C, H, W }, gd[4] = { N, HO, WO, 2 };
	static const __u64 yd[4] = { N, C, HO, WO };
	static float x[N * C * H * W], g[N * HO * WO * 2], y[N * C * HO * WO];
	struct vnpu_cmd_tensor t[3] = { et_dense(VNPU_DTYPE_F32, 4, xd),
					et_dense(VNPU_DTYPE_F32, 4, gd),
					et_dense(VNPU_DTYPE_F32, 4, yd) };
	void *data[3] = { x, g, y };
	__u32 mode, padding, align, cfg;
	int i;

	for (i = 0; i < N * C * H * W; i++)
		x[i] = (float)((i * 37) % 23) * 0.125f - 1;
	/* Coordinates from -1.6 to 1.6: inside, on the edges and outside. */
	for (i = 0; i < N * HO * WO * 2; i++)
		g[i] = (float)((i * 29) % 33 - 16) * 0.1f;
	for (mode = 0; mode <= VNPU_RESIZE_CUBIC; mode++)
		for (padding = 0; padding <= VNPU_GRID_PAD_REFLECTION; padding++)
			for (align = 0; align <= 1; align++)
				for (cfg = 0; cfg < 4; cfg++) {
					struct vnpu_layer_grid_sample a = {
						.mode = mode, .padding = padding,
						.align_corners = align,
					};
					double worst = 0;
					int n, c, o;

					memset(y, 0xff, sizeof(y));
					EXPECT_TRUE(!run(t, data, &a,
							 cfg & 1 ? vnpu_eng_host_features() : 0, cfg & 2 ? 5 : 1))
						TH_LOG("grid_sample runs");
					for (n = 0; n < N; n++)
						for (c = 0; c < C; c++)
							for (o = 0; o < HO * WO; o++) {
								const float *gp = &g[(n * HO * WO + o) * 2];
								double want = sample(&x[(n * C + c) * H * W],
										     gp[0], gp[1], &a);
								double got = y[(n * C + c) * HO * WO + o];

								if (!(fabs(got - want) <= worst))
									worst = fabs(got - want);
							}
					EXPECT_LT(worst, 1e-5)
						TH_LOG("mode %u padding %u align %u config %u: off by %g",
						       mode, padding, align, cfg, worst);
				}
}

static void test_bad_layers(struct __test_metadata *_metadata)
{
	static const __u64 xd[4] = { N, C, H, W }, gd[4] = { N, HO, WO, 2 };
	static const __u64 yd[4] = { N, C, HO, WO };
	struct vnpu_cmd_tensor t[3] = { et_dense(VNPU_DTYPE_F32, 4, xd),
					et_dense(VNPU_DTYPE_F32, 4, gd),
					et_dense(VNPU_DTYPE_F32, 4, yd) };
	struct vnpu_layer_grid_sample a = { 0 };
	const __u32 sz = sizeof(a);

	EXPECT_TRUE(!vnpu_eng_layer_check(VNPU_LAYER_GRID_SAMPLE, t, 3, &a, sz))
		TH_LOG("good layer");
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_GRID_SAMPLE, t, 3, &a, 8))
		TH_LOG("short attrs");
	a.mode = VNPU_RESIZE_CUBIC + 1;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_GRID_SAMPLE, t, 3, &a, sz))
		TH_LOG("bad mode");
	a.mode = 0;
	a.padding = 3;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_GRID_SAMPLE, t, 3, &a, sz))
		TH_LOG("bad padding");
	a.padding = 0;
	a.align_corners = 2;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_GRID_SAMPLE, t, 3, &a, sz))
		TH_LOG("bad align");
	a.align_corners = 0;
	a.pad = 1;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_GRID_SAMPLE, t, 3, &a, sz))
		TH_LOG("pad set");
	a.pad = 0;
	t[1].dims[3] = 3;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_GRID_SAMPLE, t, 3, &a, sz))
		TH_LOG("grid of 3");
	t[1].dims[3] = 2;
	t[2].dims[2] = HO + 1;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_GRID_SAMPLE, t, 3, &a, sz))
		TH_LOG("Y of the wrong shape");
	t[2].dims[2] = HO;
	t[1].dtype = VNPU_DTYPE_F16;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_GRID_SAMPLE, t, 3, &a, sz))
		TH_LOG("mixed dtypes");
	t[0].dtype = t[1].dtype = t[2].dtype = VNPU_DTYPE_I32;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_GRID_SAMPLE, t, 3, &a, sz))
		TH_LOG("integer X");
	t[0].dtype = t[1].dtype = t[2].dtype = VNPU_DTYPE_F32;
	t[0].dims[2] = 0;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_GRID_SAMPLE, t, 3, &a, sz))
		TH_LOG("empty input plane");
}

TEST(grid)
{
	test_modes(_metadata);
	test_bad_layers(_metadata);
}

KSFT_MAIN

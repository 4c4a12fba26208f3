// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Winograd F(4x4, 3x3) convolutions (vnpu_eng_wino.c) against the direct
 * convolution in double: every path and split gives the same bits
 * (et_layer_f32()), and each output is within WINO_BOUND of the sum of
 * the absolute values of its terms.
 */
#include "engine_test.h"
#include "ksft_main.h"
#include "vnpu_eng_priv.h"

/*
 * |y - ref| <= WINO_BOUND * (sum |x w| + |bias| + |residual|), plus the
 * final rounding: the worst ratio measured over these cases and random
 * data in [-1, 1) is about 2^-19 (engine.rst, "Winograd").
 */
#define WINO_BOUND	(1.0 / (1 << 17))

struct wino_case {
	__u64 n, c, h, w, m;
	__u32 group, pt, pl, pb, pr, flags, act;
};

static double wino_act(__u32 func, double v)
{
	if (func == VNPU_ACT_RELU)
		return v < 0 ? 0 : v;
	if (func == VNPU_ACT_SIGMOID)
		return 1 / (1 + exp(-v));
	return v;
}

/* The direct convolution in double and each output's sum of |terms|. */
static void wino_ref(const struct wino_case *wc, __u64 oh, __u64 ow,
		     const float *x, const float *w, const float *bias,
		     const float *res, double *ref, double *mag)
{
	__u64 cg = wc->c / wc->group, mg = wc->m / wc->group;
	__u64 img, m, i, j, c, a, b;

	for (img = 0; img < wc->n; img++)
		for (m = 0; m < wc->m; m++)
			for (i = 0; i < oh; i++)
				for (j = 0; j < ow; j++) {
					__u64 yo = ((img * wc->m + m) * oh + i) * ow + j;
					double s = bias ? bias[m] : 0;
					double t = bias ? fabs(bias[m]) : 0;

					for (c = 0; c < cg; c++)
						for (a = 0; a < 3; a++)
							for (b = 0; b < 3; b++) {
								long ih = (long)(i + a) - wc->pt;
								long iw = (long)(j + b) - wc->pl;
								double p;

								if (ih < 0 || iw < 0 ||
								    ih >= (long)wc->h ||
								    iw >= (long)wc->w)
									continue;
								p = (double)x[((img * wc->c + m / mg * cg + c) * wc->h + ih) * wc->w + iw] *
								    w[((m * cg + c) * 3 + a) * 3 + b];
								s += p;
								t += fabs(p);
							}
					if (res) {
						s += res[yo];
						t += fabs(res[yo]);
					}
					ref[yo] = wino_act(wc->act, s);
					mag[yo] = t;
				}
}

static double worst_ratio;

static void wino_case_run(struct __test_metadata *_metadata, const struct wino_case *wc)
{
	struct vnpu_layer_conv at = {};
	struct vnpu_cmd_tensor t[5];
	__u64 oh = wc->h + wc->pt + wc->pb - 2, ow = wc->w + wc->pl + wc->pr - 2;
	__u64 cg = wc->c / wc->group, mg = wc->m / wc->group, kt = cg * 9;
	__u64 dx[4] = { wc->n, wc->c, wc->h, wc->w }, dw[4] = { wc->m, cg, 3, 3 };
	__u64 dy[4] = { wc->n, wc->m, oh, ow }, psize;
	float *x, *w, *bias = NULL, *res = NULL, *y, *reff, *packed, *other;
	double *ref, *mag;
	void *data[5];
	size_t i, count = wc->n * wc->m * oh * ow;
	__u32 n = 0;
	int rc;
	char name[128];

	t[n] = et_dense(VNPU_DTYPE_F32, 4, dx);
	x = malloc(et_bytes(&t[n]));
	et_fill_f32(x, et_bytes(&t[n]) / 4);
	data[n++] = x;
	t[n] = et_dense(VNPU_DTYPE_F32, 4, dw);
	w = malloc(et_bytes(&t[n]));
	et_fill_f32(w, et_bytes(&t[n]) / 4);
	data[n++] = w;
	/* The runtime's transform; the FMA build's gives the same bits. */
	psize = vnpu_eng_packed_size(VNPU_PACK_WINO_W, wc->group, mg, kt);
	packed = malloc(psize * 4);
	other = malloc(psize * 4);
	EXPECT_TRUE(psize && !vnpu_eng_wino_pack(w, wc->group, mg, kt, packed))
		TH_LOG("wino pack");
	if (et_host_features & VNPU_ENG_F_AVX2_FMA) {
		memset(other, 0xff, psize * 4);
		vnpu_eng_kernels_avx2.wino_pack(w, wc->group, mg, cg, other);
		EXPECT_EQ(0, memcmp(packed, other, psize * 4))
			TH_LOG("wino pack: the builds differ");
	}
	t[1] = et_dense(VNPU_DTYPE_F32, 1, &psize);
	data[1] = packed;
	if (wc->flags & VNPU_LAYER_F_BIAS) {
		t[n] = et_dense(VNPU_DTYPE_F32, 1, &wc->m);
		bias = malloc(wc->m * 4);
		et_fill_f32(bias, wc->m);
		data[n++] = bias;
	}
	t[n] = et_dense(VNPU_DTYPE_F32, 4, dy);
	if (wc->flags & VNPU_LAYER_F_RESIDUAL) {
		res = malloc(et_bytes(&t[n]));
		et_fill_f32(res, count);
		data[n++] = res;
		t[n] = t[n - 1];
	}
	y = malloc(et_bytes(&t[n]));
	data[n++] = y;
	reff = malloc(count * 4);
	ref = malloc(count * sizeof(*ref));
	mag = malloc(count * sizeof(*mag));
	wino_ref(wc, oh, ow, x, w, bias, res, ref, mag);
	for (i = 0; i < count; i++)
		reff[i] = (float)ref[i];

	at.flags = wc->flags | VNPU_LAYER_F_WINO;
	at.group = wc->group;
	at.kernel[0] = 3;
	at.kernel[1] = 3;
	at.stride[0] = 1;
	at.stride[1] = 1;
	at.dilation[0] = 1;
	at.dilation[1] = 1;
	at.pad_begin[0] = wc->pt;
	at.pad_begin[1] = wc->pl;
	at.pad_end[0] = wc->pb;
	at.pad_end[1] = wc->pr;
	at.act.func = wc->act;
	snprintf(name, sizeof(name),
		 "wino n%llu c%llu %llux%llu m%llu g%u p%u,%u,%u,%u f%u a%u",
		 (unsigned long long)wc->n, (unsigned long long)wc->c,
		 (unsigned long long)wc->h, (unsigned long long)wc->w,
		 (unsigned long long)wc->m, wc->group, wc->pt, wc->pl, wc->pb,
		 wc->pr, wc->flags, wc->act);
	/* Every path and split alike; then each output against its bound. */
	rc = et_layer_f32(name, VNPU_LAYER_CONV, t, data, n, &at, sizeof(at),
			  reff, 1e-2 * sqrt((double)kt), 1e-2);
	EXPECT_EQ(0, rc);
	if (!rc) {
		int bad = 0;

		for (i = 0; i < count; i++) {
			double err = fabs((double)y[i] - ref[i]);
			double lim = WINO_BOUND * mag[i] + fabs(ref[i]) / (1 << 21);

			if (mag[i] > 0 && err / mag[i] > worst_ratio)
				worst_ratio = err / mag[i];
			EXPECT_FALSE(!(err <= lim) && bad++ < 3)
				TH_LOG("%s [%zu]: got %.9g want %.9g (sum |terms| %g)",
				       name, i, y[i], ref[i], mag[i]);
		}
	}
	free(x);
	free(w);
	free(packed);
	free(other);
	free(bias);
	free(res);
	free(y);
	free(reff);
	free(ref);
	free(mag);
}

TEST(wino)
{
	const __u32 B = VNPU_LAYER_F_BIAS, R = VNPU_LAYER_F_RESIDUAL;
	static const struct wino_case cases[] = {
		/* A map of whole tiles. */
		{ 1, 32, 48, 48, 32, 1, 1, 1, 1, 1, 0, 0 },
		/* Odd sizes, two images, bias and Relu. */
		{ 2, 35, 37, 45, 33, 1, 1, 1, 1, 1, B, VNPU_ACT_RELU },
		/* No padding: 48x49 outputs, tiles cut at both edges. */
		{ 1, 32, 50, 51, 40, 1, 0, 0, 0, 0, B, 0 },
		/* Groups, a residual, and a Sigmoid (not a plain epilogue). */
		{ 1, 72, 47, 47, 72, 2, 1, 1, 1, 1, B | R, VNPU_ACT_SIGMOID },
		/* More channels than a row block; uneven pads up to 2. */
		{ 1, 33, 33, 70, 100, 1, 1, 2, 2, 1, B | R, VNPU_ACT_RELU },
		/* ResNet's 56x56: many units, parts cut mid-map. */
		{ 1, 64, 56, 56, 64, 1, 1, 1, 1, 1, B | R, VNPU_ACT_RELU },
		/* Deep: depth slices of the GEMMs, 3 images. */
		{ 3, 400, 26, 27, 40, 1, 1, 1, 1, 1, B, 0 },
		/*
		 * One run of 40 tiles in 22 blocks of 12 rows, not 11 of 24
		 * (eng_wino_balance()), a part each.
		 */
		{ 1, 64, 6, 80, 256, 1, 1, 1, 1, 1, B, VNPU_ACT_RELU },
		/* Small: one tile row, few channels, rows past a panel. */
		{ 1, 3, 4, 9, 7, 1, 1, 1, 1, 1, B, 0 },
		/*
		 * The AVX-512 input transform by rows (win_segs()): CRNN's
		 * 3-row map, a panel one run of a tile row; runs of 4 tiles
		 * (4 a panel, 14x14); runs of 5 with pads of 2 and 0 (the
		 * last tile's columns past X); runs of 3 (gathers).
		 */
		{ 1, 32, 3, 80, 48, 1, 1, 1, 1, 1, B, 0 },
		{ 1, 32, 14, 14, 32, 1, 1, 1, 1, 1, B | R, VNPU_ACT_RELU },
		{ 1, 33, 9, 18, 32, 1, 2, 2, 0, 0, B, 0 },
		{ 1, 32, 7, 10, 32, 1, 0, 1, 2, 1, B, 0 },
		/*
		 * ResNet-50's 28x28: runs of 32 and 17 tiles, the 49th
		 * through the GEMM's tail columns on the AVX-512 path.
		 */
		{ 1, 32, 28, 28, 32, 1, 1, 1, 1, 1, B | R, VNPU_ACT_RELU },
	};
	size_t i;

	worst_ratio = 0;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		wino_case_run(_metadata, &cases[i]);
	printf("wino: worst |y - ref| / sum |terms| = %.3g (2^%.1f)\n",
	       worst_ratio, worst_ratio > 0 ? log2(worst_ratio) : -INFINITY);
}

KSFT_MAIN

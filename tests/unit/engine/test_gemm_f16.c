// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * GEMM and CONV over packed f16 weights on the AVX512-FP16 kernels
 * (VNPU_ENG_F_AVX512_FP16), bit for bit against a scalar model of them:
 * activations rounded to f16 (nearest even), then per depth slice of the
 * block (the slices gemm_block() takes, from the depth alone) runs of
 * ENG_F16_RUN depths, each h = 0, h = fma(a, b, h) rounded once to f16
 * per depth, then s = s + (float)h in f32 (s from 0). gcc's _Float16
 * computes the model on any CPU; fma rounded once to f16 is computed in
 * double and rounded to odd there first (53 bits: the second rounding is
 * then exact). Whole and split runs must agree; the widening path (the
 * same layer without the bit: f32 activations, f32 sums) and the f16
 * path must be within f16's bound of the exact sums. Without AVX512-FP16
 * on the host, only the model against the widening path runs.
 */
#include "engine_test.h"
#include "ksft_main.h"
#include "vnpu_eng_priv.h"
#include "vnpu_eng_gemm.h"

#define F16 VNPU_DTYPE_F16
#define F32 VNPU_DTYPE_F32
#define FMA_PATH (VNPU_ENG_F_AVX2_FMA | VNPU_ENG_F_AVX512)
#define FP_PATH (FMA_PATH | VNPU_ENG_F_AVX512_FP16)

static __u16 to_f16(float f)
{
	_Float16 h = (_Float16)f;
	__u16 x;

	memcpy(&x, &h, 2);
	return x;
}

static float of_f16(__u16 x)
{
	_Float16 h;

	memcpy(&h, &x, 2);
	return (float)h;
}

static float round_f16(float f)
{
	return of_f16(to_f16(f));
}

/*
 * fma(@a, @b, @c) of f16 values rounded once to f16 (as a float): the
 * product has at most 22 bits, and unless it overflows f16 anyway its
 * sum with @c (whose last bit is at least 2^-24) spans at most 40, so
 * the double sum is exact and one rounding to f16 follows.
 */
static float fma16(float a, float b, float c)
{
	return (float)(_Float16)((double)a * (double)b + (double)c);
}

/* The slices' depth gemm_block() takes (AVX-512 paths). */
static __u64 kstep_of(__u64 kt)
{
	__u64 n = (kt + ENG_KC - 1) / ENG_KC;

	return (kt + n - 1) / n;
}

/* The model of one output: rows @a and @b of @kt f16 values. */
static float dot_model(const float *a, const float *b, __u64 kt)
{
	__u64 step = kstep_of(kt), s0, r0, k;
	float s = 0.0f;

	for (s0 = 0; s0 < kt; s0 += step) {
		__u64 se = s0 + step < kt ? s0 + step : kt;

		for (r0 = s0; r0 < se; r0 += ENG_F16_RUN) {
			__u64 re = r0 + ENG_F16_RUN < se ? r0 + ENG_F16_RUN : se;
			float h = 0.0f;

			for (k = r0; k < re; k++)
				h = fma16(a[k], b[k], h);
			s = s + h;
		}
	}
	return s;
}

/* Values of random magnitude far from subnormal sums. */
static float val(void)
{
	return et_randf() * (float)(1 << (rand() % 6)) / 8.0f + 1e-3f;
}

/* The epilogue of a sum @x as the engine's: bias, residual, Relu. */
static float epi_model(float x, const float *c, const float *r, __u32 act)
{
	if (c)
		x = x + *c;
	if (r)
		x = x + *r;
	if (act == VNPU_ACT_RELU)
		return x < 0 ? 0.0f : x;
	return x;
}

static __u32 epi_tensors(struct vnpu_cmd_tensor *t, void **data, __u32 flags,
			 const __u64 *nb, float *bias, __u32 rank, const __u64 *dy,
			 float *res, float *y)
{
	__u32 n = 2;

	if (flags & VNPU_LAYER_F_BIAS) {
		t[n] = et_dense(F32, 1, nb);
		data[n++] = bias;
	}
	if (flags & VNPU_LAYER_F_RESIDUAL) {
		t[n] = et_dense(F32, rank, dy);
		data[n++] = res;
	}
	t[n] = et_dense(F32, rank, dy);
	data[n++] = y;
	return n;
}

/* The worst |y - exact| / sum |a b| of the widening and the f16 paths. */
static double worst_wide, worst_f16;

/*
 * The f16 path's bound on |y - exact| / sum |a b| (the bias and residual
 * added exactly enough to leave it): activations rounded to f16 (2^-11),
 * a run's ENG_F16_RUN roundings of its partial sums in f16 (each at most
 * 2^-11 of the run's sum |a b|), f32's additions.
 */
#define F16_BOUND ((ENG_F16_RUN + 2) * 0x1p-11)

/*
 * @y (@ny outputs of run @what) within F16_BOUND of sum |a b| (@mag) of
 * the exact sums @ref, the worst ratio kept in *@worst.
 */
static void within_bound(struct __test_metadata *_metadata, const char *name,
			 const char *what, const float *y, const double *ref,
			 const double *mag, __u64 ny, double *worst)
{
	__u64 i;

	for (i = 0; i < ny; i++) {
		double d = fabs(y[i] - ref[i]) / (mag[i] + 1e-30);

		*worst = d > *worst ? d : *worst;
		if (d > F16_BOUND) {
			EXPECT_TRUE(false)
				TH_LOG("%s: %s [%llu] %a, exact %a", name, what,
				       (unsigned long long)i, y[i], ref[i]);
			break;
		}
	}
}

/*
 * Runs a layer (output tensor @n - 1, f32 of @ny) on the FP16 path whole
 * and in 7 and 64 parts against @model bit for bit, and both paths
 * against the exact sums @ref within F16_BOUND of @mag (sum |a b|).
 */
static void check_paths(struct __test_metadata *_metadata, const char *name, __u32 op,
			const struct vnpu_cmd_tensor *t, void **data, __u32 n,
			const void *at, __u32 size, const float *model,
			const double *ref, const double *mag, __u64 ny)
{
	static const __u32 parts[3] = { 1, 7, 64 };
	float *y = data[n - 1];
	__u64 i;
	int p;

	if ((et_host_features & FMA_PATH) == FMA_PATH) {
		memset(y, 0x7f, ny * 4);
		EXPECT_TRUE(!et_run(op, t, data, n, at, size, FMA_PATH, 7))
			TH_LOG("%s: widening run", name);
		within_bound(_metadata, name, "widened", y, ref, mag, ny, &worst_wide);
	}
	/* The model itself within the bound. */
	within_bound(_metadata, name, "model", model, ref, mag, ny, &worst_f16);
	for (p = 0; p < 3 && (et_host_features & VNPU_ENG_F_AVX512_FP16); p++) {
		memset(y, 0x7f, ny * 4);
		EXPECT_TRUE(!et_run(op, t, data, n, at, size, FP_PATH, parts[p]))
			TH_LOG("%s: f16 run", name);
		for (i = 0; i < ny; i++)
			if (memcmp(&y[i], &model[i], 4)) {
				EXPECT_TRUE(false)
					TH_LOG("%s (%u parts) [%llu]: %a, model %a", name,
					       parts[p], (unsigned long long)i, y[i],
					       model[i]);
				break;
			}
	}
}

/* C[m, n] = act(A[m, k] B[k, n] + bias[n] + R[m, n]), B packed f16. */
static void gemm_epi_case(struct __test_metadata *_metadata, __u64 m, __u64 n,
			  __u64 k, __u32 flags, __u32 act)
{
	__u64 da[2] = { m, k }, dy[2] = { m, n }, size, i, j, kk;
	float *a = malloc(m * k * 4), *b = malloc(k * n * 4), *pk;
	float *y = malloc(m * n * 4), *model = malloc(m * n * 4);
	double *mag = malloc(m * n * 8), *ref = malloc(m * n * 8);
	float *ar = malloc(k * 4), *bc = malloc(k * 4);
	float *bias = malloc(n * 4), *res = malloc(m * n * 4);
	struct vnpu_layer_gemm at = { .flags = VNPU_LAYER_F_PACKED | flags,
				      .alpha = et_f32_bits(1), .beta = et_f32_bits(1),
				      .act = { .func = act } };
	__u16 *ph;
	char name[64];

	size = vnpu_eng_packed_size(VNPU_PACK_GEMM_B, 1, k, n);
	pk = malloc(size * 4);
	ph = malloc(size * 2);
	for (i = 0; i < m * k; i++)
		a[i] = val() - 0.4f;
	for (i = 0; i < k * n; i++)
		b[i] = round_f16(val() - 0.5f);
	for (i = 0; i < n; i++)
		bias[i] = -et_randf();
	for (i = 0; i < m * n; i++)
		res[i] = et_randf() * 4.0f - 2.0f;
	vnpu_eng_pack(VNPU_PACK_GEMM_B, b, 1, k, n, pk);
	for (i = 0; i < size; i++)
		ph[i] = to_f16(pk[i]);
	for (i = 0; i < m; i++)
		for (j = 0; j < n; j++) {
			double e = 0, g = 0;

			for (kk = 0; kk < k; kk++) {
				ar[kk] = round_f16(a[i * k + kk]);
				bc[kk] = b[kk * n + j];
				e += (double)a[i * k + kk] * bc[kk];
				g += fabs((double)a[i * k + kk] * bc[kk]);
			}
			model[i * n + j] =
				epi_model(dot_model(ar, bc, k),
					  flags & VNPU_LAYER_F_BIAS ? &bias[j] : 0,
					  flags & VNPU_LAYER_F_RESIDUAL ?
					  &res[i * n + j] : 0, act);
			e += flags & VNPU_LAYER_F_BIAS ? bias[j] : 0;
			e += flags & VNPU_LAYER_F_RESIDUAL ? res[i * n + j] : 0;
			ref[i * n + j] = act == VNPU_ACT_RELU && e < 0 ? 0 : e;
			mag[i * n + j] = g + 1e-6;
		}
	{
		struct vnpu_cmd_tensor t[5] = { et_dense(F32, 2, da),
						et_dense(F16, 1, &size) };
		void *data[5] = { a, ph };
		__u32 nt = epi_tensors(t, data, flags, &n, bias, 2, dy, res, y);

		snprintf(name, sizeof(name), "gemm f16 %llux%llux%llu e%x/%u",
			 (unsigned long long)m, (unsigned long long)n,
			 (unsigned long long)k, flags, act);
		check_paths(_metadata, name, VNPU_LAYER_GEMM, t, data, nt, &at, sizeof(at),
			    model, ref, mag, m * n);
	}
	free(a);
	free(b);
	free(pk);
	free(ph);
	free(y);
	free(model);
	free(mag);
	free(ref);
	free(ar);
	free(bc);
	free(bias);
	free(res);
}

static void gemm_case(struct __test_metadata *_metadata, __u64 m, __u64 n, __u64 k)
{
	gemm_epi_case(_metadata, m, n, k, 0, VNPU_ACT_IDENTITY);
}

/* One image, @c channels of @h x @w, @m outputs of @kh x @kw, stride @s. */
static void conv_epi_case(struct __test_metadata *_metadata, __u64 c, __u64 h, __u64 w,
			  __u64 m, __u64 kh, __u64 kw, __u32 s, __u32 pad,
			  __u32 flags, __u32 act)
{
	__u64 oh = (h + 2 * pad - kh) / s + 1, ow = (w + 2 * pad - kw) / s + 1;
	__u64 kt = c * kh * kw, dx[4] = { 1, c, h, w }, dy[4] = { 1, m, oh, ow };
	__u64 size = vnpu_eng_packed_size(VNPU_PACK_CONV_W, 1, m, kt), i, q, k;
	float *x = malloc(c * h * w * 4), *wt = malloc(m * kt * 4);
	float *pk = malloc(size * 4), *y = malloc(m * oh * ow * 4);
	float *model = malloc(m * oh * ow * 4);
	double *mag = malloc(m * oh * ow * 8), *ref = malloc(m * oh * ow * 8);
	float *col = malloc(kt * 4), *ar = malloc(kt * 4), *bias = malloc(m * 4);
	float *res = malloc(m * oh * ow * 4);
	__u16 *ph = malloc(size * 2);
	struct vnpu_layer_conv at = { .flags = VNPU_LAYER_F_PACKED | flags,
				      .group = 1, .act = { .func = act },
				      .kernel = { (__u32)kh, (__u32)kw },
				      .stride = { s, s }, .dilation = { 1, 1 },
				      .pad_begin = { pad, pad },
				      .pad_end = { pad, pad } };
	char name[64];

	for (i = 0; i < c * h * w; i++)
		x[i] = val();
	for (i = 0; i < m * kt; i++)
		wt[i] = round_f16(val() - 0.5f);
	for (i = 0; i < m; i++)
		bias[i] = -et_randf();
	for (i = 0; i < m * oh * ow; i++)
		res[i] = et_randf() * 4.0f - 2.0f;
	vnpu_eng_pack(VNPU_PACK_CONV_W, wt, 1, m, kt, pk);
	for (i = 0; i < size; i++)
		ph[i] = to_f16(pk[i]);
	for (q = 0; q < oh * ow; q++) {
		for (k = 0; k < kt; k++) {
			long ih = (long)(q / ow * s + k % (kh * kw) / kw) - pad;
			long iw = (long)(q % ow * s + k % kw) - pad;

			col[k] = ih < 0 || iw < 0 || ih >= (long)h || iw >= (long)w ?
				 0.0f : x[(k / (kh * kw) * h + ih) * w + iw];
			ar[k] = round_f16(col[k]);
		}
		for (i = 0; i < m; i++) {
			__u64 o = i * oh * ow + q;
			double e = 0, g = 0;

			for (k = 0; k < kt; k++) {
				e += (double)col[k] * wt[i * kt + k];
				g += fabs((double)col[k] * wt[i * kt + k]);
			}
			model[o] = epi_model(dot_model(wt + i * kt, ar, kt),
					     flags & VNPU_LAYER_F_BIAS ? &bias[i] : 0,
					     flags & VNPU_LAYER_F_RESIDUAL ? &res[o] : 0,
					     act);
			e += flags & VNPU_LAYER_F_BIAS ? bias[i] : 0;
			e += flags & VNPU_LAYER_F_RESIDUAL ? res[o] : 0;
			ref[o] = act == VNPU_ACT_RELU && e < 0 ? 0 : e;
			mag[o] = g + 1e-6;
		}
	}
	{
		struct vnpu_cmd_tensor t[5] = { et_dense(F32, 4, dx),
						et_dense(F16, 1, &size) };
		void *data[5] = { x, ph };
		__u32 n = epi_tensors(t, data, flags, &m, bias, 4, dy, res, y);

		snprintf(name, sizeof(name), "conv f16 c%llu %llux%llu s%u e%x/%u",
			 (unsigned long long)c, (unsigned long long)kh,
			 (unsigned long long)kw, s, flags, act);
		check_paths(_metadata, name, VNPU_LAYER_CONV, t, data, n, &at, sizeof(at),
			    model, ref, mag, m * oh * ow);
	}
	free(x);
	free(wt);
	free(pk);
	free(ph);
	free(y);
	free(model);
	free(mag);
	free(ref);
	free(col);
	free(ar);
	free(bias);
	free(res);
}

static void conv_case(struct __test_metadata *_metadata, __u64 c, __u64 h, __u64 w, __u64 m,
		      __u64 kh, __u64 kw, __u32 s, __u32 pad)
{
	conv_epi_case(_metadata, c, h, w, m, kh, kw, s, pad, 0, VNPU_ACT_IDENTITY);
}

/* The model's fma16() itself: ties to even, one rounding, range. */
static void model_fma(struct __test_metadata *_metadata)
{
	/* (1 + 2^-6)(1 + 2^-5) = 1 + 48.5 2^-10: a tie, to even. */
	EXPECT_EQ(1.0f + 48 * 0x1p-10f, fma16(1.0f + 0x1p-6f, 1.0f + 0x1p-5f, 0.0f));
	/* Past the tie by f16's least subnormal: up, one rounding. */
	EXPECT_EQ(1.0f + 49 * 0x1p-10f,
		  fma16(1.0f + 0x1p-6f, 1.0f + 0x1p-5f, 0x1p-24f));
	/* Past 65504 (from 65520): inf. */
	EXPECT_TRUE(isinf(fma16(256.0f, 256.0f, 0.0f)));
	EXPECT_TRUE(isinf(round_f16(65520.0f)));
	EXPECT_EQ(65504.0f, round_f16(65519.0f));
	/* Subnormal products and sums stay. */
	EXPECT_EQ(0x1p-24f, fma16(0x1p-12f, 0x1p-12f, 0.0f));
}

TEST(gemmf16)
{
	model_fma(_metadata);
	/* Edges of both sides, depths of part of a run, runs, slices. */
	gemm_case(_metadata, 1, 16, 8);
	gemm_case(_metadata, 1, 300, 777);
	gemm_case(_metadata, 1, 40, 33);
	gemm_case(_metadata, 1, 129, 1);
	gemm_case(_metadata, 5, 17, 7);
	gemm_case(_metadata, 13, 33, 64);
	gemm_case(_metadata, 37, 100, 385);
	gemm_case(_metadata, 100, 64, 800);
	gemm_case(_metadata, 128, 96, 391);
	gemm_case(_metadata, 140, 48, 1000);
	gemm_epi_case(_metadata, 40, 100, 77, VNPU_LAYER_F_BIAS, VNPU_ACT_RELU);
	gemm_epi_case(_metadata, 26, 64, 384, VNPU_LAYER_F_BIAS | VNPU_LAYER_F_RESIDUAL,
		      VNPU_ACT_RELU);
	gemm_epi_case(_metadata, 1, 70, 33, VNPU_LAYER_F_BIAS | VNPU_LAYER_F_RESIDUAL,
		      VNPU_ACT_IDENTITY);
	/* 1x1 direct, 3x3 sliding window, strides 2 and 5, im2col. */
	conv_case(_metadata, 64, 7, 9, 70, 1, 1, 1, 0);
	conv_case(_metadata, 9, 12, 13, 20, 3, 3, 1, 1);
	conv_case(_metadata, 16, 15, 15, 24, 3, 3, 2, 1);
	conv_case(_metadata, 5, 23, 23, 13, 7, 7, 5, 3);
	conv_case(_metadata, 130, 6, 6, 8, 3, 3, 1, 1);
	conv_case(_metadata, 33, 19, 29, 200, 1, 1, 1, 0);
	conv_case(_metadata, 7, 24, 26, 150, 3, 3, 1, 1);
	conv_case(_metadata, 12, 21, 21, 130, 3, 3, 2, 1);
	conv_case(_metadata, 33, 7, 7, 70, 1, 1, 1, 0);
	conv_case(_metadata, 400, 5, 10, 400, 1, 1, 1, 0);
	conv_case(_metadata, 40, 8, 9, 4, 1, 1, 1, 0);
	conv_case(_metadata, 16, 10, 10, 1, 1, 1, 1, 0);
	conv_case(_metadata, 21, 9, 11, 7, 3, 3, 1, 1);
	conv_epi_case(_metadata, 64, 7, 7, 400, 1, 1, 1, 0,
		      VNPU_LAYER_F_BIAS | VNPU_LAYER_F_RESIDUAL, VNPU_ACT_RELU);
	conv_epi_case(_metadata, 7, 24, 40, 30, 3, 3, 1, 1, VNPU_LAYER_F_RESIDUAL,
		      VNPU_ACT_RELU);
	printf("gemm-f16: worst |y - exact| / sum |a b|: widening 2^%.1f, f16 2^%.1f (bound 2^%.1f)\n",
	       worst_wide > 0 ? log2(worst_wide) : -INFINITY,
	       worst_f16 > 0 ? log2(worst_f16) : -INFINITY, log2(F16_BOUND));
	printf("gemm-f16: %s\n", et_host_features & VNPU_ENG_F_AVX512_FP16 ?
	       "avx512-fp16 and widening paths" : "widening path and model only");
	fflush(stdout);
}

KSFT_MAIN

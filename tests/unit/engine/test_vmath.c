// SPDX-License-Identifier: MIT
/*
 * The float transcendental activations (vnpu_eng_vmath.h) against libm in
 * double over a sweep of all floats: every 4099th bit pattern, a dense
 * grid over [-16, 16], and the corners (zeros, subnormals, the largest
 * floats, infinities, NaNs). Each function has a bound in ulps of the
 * float result, every kernel path gives the same bits, and an element's
 * bits do not depend on its neighbours. SiLU and the logistic function at
 * bf16's grade (the epilogue of layers on the AVX512-BF16 kernels) over
 * the same sweep: within 2^-9 of the result, f32's bits where |x| >= 85
 * (infinities and NaNs too), and an element's bits its own.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_test.h"
#include "ksft_main.h"
#include "vnpu_eng_priv.h"

#define SWEEP_STEP 4099u
#define GRID 32768	/* points of [-16, 16] */

static const __u32 corners[] = {
	0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007fffff, 0x807fffff,
	0x00800000, 0x80800000, 0x7f7fffff, 0xff7fffff, 0x7f800000, 0xff800000,
	0x7fc00000, 0xffc00000, 0x7f800001, 0x7fc4567a, 0x3f800000, 0xbf800000,
	0x42a9ffff, 0xc2a9ffff, 0x42aa0000, 0xc2aa0000,	/* 85 and just below */
};

static double gelu_tanh_z(double x)
{
	return 2 * sqrt(2 / M_PI) * (x + 0.044715 * x * x * x);
}

static double ref_fn(__u32 f, double x)
{
	switch (f) {
	case VNPU_ACT_ERF: return erf(x);
	case VNPU_ACT_GELU: return 0.5 * x * erfc(-x / sqrt(2));
	case VNPU_ACT_TANH: return tanh(x);
	case VNPU_ACT_SIGMOID: return 1 / (1 + exp(-x));
	case VNPU_ACT_SILU: return x / (1 + exp(-x));
	case VNPU_ACT_LOG: return log(x);
	default: return x / (1 + exp(-gelu_tanh_z(x)));
	}
}

/* The bound of function @f at @x, in ulps. */
static double bound(__u32 f, double x)
{
	switch (f) {
	case VNPU_ACT_LOG: return 1;
	case VNPU_ACT_ERF: case VNPU_ACT_TANH: return 2;
	case VNPU_ACT_SIGMOID: return 3;
	case VNPU_ACT_SILU: return 4;
	case VNPU_ACT_GELU: return 6;
	default: return 3 * (1 + fabs(gelu_tanh_z(x)));
	}
}

static double ulp_of(float r)
{
	int e;

	if (fabsf(r) < 0x1p-126f)
		return 0x1p-149;
	frexpf(r, &e);
	return ldexp(1, e - 24);
}

static size_t sweep(float *x)
{
	size_t n = 0, i;

	for (i = 0; i < sizeof(corners) / sizeof(corners[0]); i++)
		memcpy(&x[n++], &corners[i], 4);
	for (i = 0; i <= GRID; i++)
		x[n++] = -16.0f + 32.0f * (float)i / GRID;
	for (__u64 b = 0; b < (1ull << 32); b += SWEEP_STEP) {
		__u32 u = (__u32)b;

		memcpy(&x[n++], &u, 4);
	}
	return n;
}

/* @y = f(@x) within bound(), the worst printed. */
static void check_path(struct __test_metadata *_metadata, __u32 f, const char *path, const float *x,
		       const float *y, size_t n)
{
	double worst = 0;
	float wx = 0;
	int bad = 0;

	for (size_t i = 0; i < n; i++) {
		double r = ref_fn(f, x[i]), e;
		float rf = (float)r;

		if (isnan(r) || isinf(rf) || isinf(y[i])) {
			EXPECT_FALSE(memcmp(&rf, &y[i], 4) && !(isnan(r) && isnan(y[i]))
				     && bad++ < 3)
				TH_LOG("vmath func %u %s: f(%a) = %a, libm %a", f, path,
					       x[i], y[i], r);
			continue;
		}
		e = fabs(y[i] - r) / ulp_of(rf);
		EXPECT_FALSE(e > bound(f, x[i]) && bad++ < 3)
			TH_LOG("vmath func %u %s: f(%a) = %a, libm %a: %.2f ulp", f, path,
				       x[i], y[i], r, e);
		e /= bound(f, x[i]);
		if (e > worst) {
			worst = e;
			wx = x[i];
		}
	}
	printf("  vmath func %u %s: worst %.2f of its bound (at %a)\n", f, path, worst,
	       wx);
}

/* Where @a and @b differ other than as two NaNs: 1 + that index, else 0. */
static size_t differ(const float *a, const float *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (memcmp(&a[i], &b[i], 4) && !(isnan(a[i]) && isnan(b[i])))
			return i + 1;
	return 0;
}

/* Function @f on the @n floats at @x into @y with @features; 0 or why not. */
static int run_fn(__u32 f, float *x, float *y, __u64 n, __u32 features)
{
	struct vnpu_layer_act at = { .func = f };
	struct vnpu_cmd_tensor t[2];
	void *data[2] = { x, y };

	t[0] = et_dense(VNPU_DTYPE_F32, 1, &n);
	t[1] = t[0];
	return et_run(VNPU_LAYER_UNARY, t, data, 2, &at, sizeof(at), features, 4);
}

/* The relative error allowed at bf16's grade, beside a subnormal's half ulp. */
#define BF16_GRADE 0x1p-9

/*
 * vnpu_eng_act_avx512() with bf16 for @f on the @n floats at @x (@y and
 * @y2 scratch): within BF16_GRADE of libm, f32's bits (@f32, the f32
 * path's output) outside the fast range, the same bits one float on.
 */
static void check_bf16_grade(struct __test_metadata *_metadata, __u32 f,
			     const float *x, const float *f32, float *y, float *y2,
			     size_t n)
{
	double worst = 0;
	float wx = 0;
	int bad = 0;

	vnpu_eng_act_avx512(f, x, y, n, 1);
	for (size_t i = 0; i < n; i++) {
		double r = ref_fn(f, x[i]), e;

		if (!(fabsf(x[i]) < 85.0f)) {
			EXPECT_FALSE(memcmp(&y[i], &f32[i], 4) &&
				     !(isnan(y[i]) && isnan(f32[i])) && bad++ < 3)
				TH_LOG("bf16 grade func %u: f(%a) = %a, f32's %a", f,
				       x[i], y[i], f32[i]);
			continue;
		}
		/* A bf16 tile's far lanes show by magnitude (engine.rst). */
		EXPECT_FALSE(!(fabsf(y[i]) < 85.0f) && bad++ < 3)
			TH_LOG("bf16 grade func %u: f(%a) = %a, past 85", f, x[i],
			       y[i]);
		e = fabs(y[i] - r);
		EXPECT_FALSE(!(e <= BF16_GRADE * fabs(r) + 0x1p-149) && bad++ < 3)
			TH_LOG("bf16 grade func %u: f(%a) = %a, libm %a: %.3g relative",
			       f, x[i], y[i], r, e / fabs(r));
		e = r ? e / fabs(r) : 0;
		if (fabs(r) >= 0x1p-126 && e > worst) {
			worst = e;
			wx = x[i];
		}
	}
	TH_LOG("vmath func %u bf16 grade: worst relative error 2^%.2f (at %a)",
	       f, log2(worst), wx);
	vnpu_eng_act_avx512(f, x + 1, y2, n - 1, 1);
	EXPECT_EQ(0, differ(y + 1, y2, n - 1))
		TH_LOG("bf16 grade func %u: bits depend on the neighbours", f);
}

TEST(vmath)
{
	static const __u32 funcs[] = { VNPU_ACT_ERF, VNPU_ACT_GELU, VNPU_ACT_GELU_TANH,
				       VNPU_ACT_TANH, VNPU_ACT_SIGMOID, VNPU_ACT_SILU,
				       VNPU_ACT_LOG };
	static const __u32 paths[] = { VNPU_ENG_F_AVX2_FMA,
				       VNPU_ENG_F_AVX2_FMA | VNPU_ENG_F_AVX512 };
	size_t cap = sizeof(corners) / 4 + GRID + 1 + (1ull << 32) / SWEEP_STEP + 1;
	float *x = malloc(cap * 4), *y = malloc(cap * 4), *y2 = malloc(cap * 4);
	__u64 n;

	if (!x || !y || !y2) {
		EXPECT_TRUE(false)
			TH_LOG("vmath: out of memory");
		goto out;
	}
	n = sweep(x);
	for (size_t k = 0; k < sizeof(funcs) / sizeof(funcs[0]); k++) {
		int rc = run_fn(funcs[k], x, y, n, 0);

		EXPECT_TRUE(!rc)
			TH_LOG("vmath func %u baseline: run failed (%d)", funcs[k], rc);
		if (!rc)
			check_path(_metadata, funcs[k], "baseline", x, y, n);
		/*
		 * A lane's bits depend on its input alone, not on the
		 * lanes it shares a vector with (the fast paths taken when
		 * a whole vector allows it): the sweep one float on. Which
		 * NaN a NaN input gives may differ (operand order).
		 */
		if (!rc) {
			rc = run_fn(funcs[k], x + 1, y2, n - 1, 0);
			EXPECT_EQ(0, rc);
			EXPECT_EQ(0, differ(y + 1, y2, n - 1))
				TH_LOG("vmath func %u: bits depend on the neighbours", funcs[k]);
		}
		/*
		 * The FMA paths give the baseline's bits, the sweep one float
		 * on too: other neighbours in each vector, and in each group
		 * of four vectors that SiLU and the logistic function take
		 * their fast path on together.
		 */
		for (size_t p = 0; !rc && p < 2; p++) {
			if ((et_host_features & paths[p]) != paths[p])
				continue;
			rc = run_fn(funcs[k], x, y2, n, paths[p]);
			EXPECT_TRUE(!rc && !memcmp(y, y2, n * 4))
				TH_LOG("vmath func %u: features %u differ from the baseline (%d)",
				       funcs[k], paths[p], rc);
			rc = rc ? rc : run_fn(funcs[k], x + 1, y2, n - 1, paths[p]);
			EXPECT_TRUE(!rc && !differ(y + 1, y2, n - 1))
				TH_LOG("vmath func %u: features %u, one float on: not the baseline's bits (%d)",
				       funcs[k], paths[p], rc);
		}
		if (!rc && (et_host_features & VNPU_ENG_F_AVX512) &&
		    (funcs[k] == VNPU_ACT_SILU || funcs[k] == VNPU_ACT_SIGMOID)) {
			float *yb = malloc(n * 4);

			if (yb)
				check_bf16_grade(_metadata, funcs[k], x, y, yb, y2, n);
			free(yb);
		}
	}
out:
	free(x);
	free(y);
	free(y2);
}

KSFT_MAIN

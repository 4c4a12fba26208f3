// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * SOFTMAX, NORM, REDUCE, ARGREDUCE, RESIZE, PAD, GATHER and
 * GATHER_ELEMENTS against plain loops.
 */
#include "engine_test.h"
#include "ksft_main.h"

static void test_softmax(struct __test_metadata *_metadata)
{
	static const struct { __u32 rank; __u64 dims[4]; } shapes[] = {
		{ 1, { 1 } }, { 1, { 1000 } }, { 2, { 3, 17 } },
		{ 3, { 2, 5, 7 } }, { 4, { 2, 3, 4, 5 } },
		/* YOLOv8's box head: lanes of 16 eight at a time, then four. */
		{ 4, { 1, 16, 4, 13 } },
		/* ... and sixteen at a time on AVX-512, then eight, four. */
		{ 4, { 1, 16, 2, 45 } },
	};
	size_t s, e, c[6], j;
	__u32 mode, axis;

	for (s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++)
		for (mode = 0; mode < 3; mode++)
			for (axis = 0; axis < shapes[s].rank; axis++) {
				struct vnpu_layer_softmax at = { mode, axis };
				struct vnpu_cmd_tensor t[2];
				size_t n, len = shapes[s].dims[axis];
				float *x, *y, *ref;
				void *data[2];

				t[0] = et_dense(VNPU_DTYPE_F32, shapes[s].rank,
						shapes[s].dims);
				t[1] = t[0];
				n = et_numel(&t[0]);
				x = malloc(n * 4);
				y = malloc(n * 4);
				ref = malloc(n * 4);
				et_fill_f32(x, n);
				for (e = 0; e < n; e++)
					x[e] *= 10;
				for (e = 0; e < n; e++) {
					double mx = -INFINITY, sum = 0;
					size_t arg = 0, self;

					et_coords(&t[0], e, c);
					self = c[axis];
					for (j = 0; j < len; j++) {
						c[axis] = j;
						if (x[et_offset(&t[0], c)] > mx) {
							mx = x[et_offset(&t[0], c)];
							arg = j;
						}
					}
					for (j = 0; j < len; j++) {
						c[axis] = j;
						sum += exp(x[et_offset(&t[0], c)] - mx);
					}
					if (mode == VNPU_SOFTMAX)
						ref[e] = (float)(exp(x[e] - mx) / sum);
					else if (mode == VNPU_LOG_SOFTMAX)
						ref[e] = (float)(x[e] - mx - log(sum));
					else
						ref[e] = self == arg;
				}
				data[0] = x;
				data[1] = y;
				EXPECT_EQ(0,
					  et_layer_f32("softmax", VNPU_LAYER_SOFTMAX, t, data, 2,
						       &at, sizeof(at), ref, 1e-7, 1e-6));
				free(x);
				free(y);
				free(ref);
			}
}

/*
 * Softmax and LogSoftmax of the same lanes along the contiguous last axis
 * ([L, N], eight elements a step, sixteen with AVX-512) and along the
 * first ([N, L], sixteen lanes side by side with AVX-512, eight without,
 * then the last ones four at a time and one), on the baseline, the FMA
 * and the AVX-512 path: the same bits all six ways, zeros, infinities and
 * NaNs in some lanes included.
 */
static void test_softmax_layouts(struct __test_metadata *_metadata)
{
	enum { L = 21, N = 301, K = 6 };
	static const float special[] = { 0.0f, -0.0f, INFINITY, -INFINITY, NAN, 88.0f,
					 -100.0f, 1e-40f };
	__u64 dr[2] = { L, N }, dc[2] = { N, L };
	float *x = malloc(L * N * 4), *xt = malloc(L * N * 4), *y[K];
	struct vnpu_cmd_tensor tr[2], tc[2];
	__u32 mode, k, feats[3] = { 0, VNPU_ENG_F_AVX2_FMA,
				    VNPU_ENG_F_AVX2_FMA | VNPU_ENG_F_AVX512 };
	size_t l, i;

	et_fill_f32(x, L * N);
	for (l = 0; l < L; l++)
		for (i = 0; i < N; i++) {
			x[l * N + i] *= 20;
			if (l >= 3 && i % 50 == l)
				x[l * N + i] = special[(l + i) % 8];
			xt[i * L + l] = x[l * N + i];
		}
	tr[0] = et_dense(VNPU_DTYPE_F32, 2, dr);
	tr[1] = tr[0];
	tc[0] = et_dense(VNPU_DTYPE_F32, 2, dc);
	tc[1] = tc[0];
	for (k = 0; k < K; k++)
		y[k] = malloc(L * N * 4);
	for (mode = VNPU_SOFTMAX; mode <= VNPU_LOG_SOFTMAX; mode++) {
		struct vnpu_layer_softmax row = { mode, 1 }, col = { mode, 0 };
		int bad = 0;

		for (k = 0; k < K; k++) {
			void *dr_[2] = { x, y[k] }, *dc_[2] = { xt, y[k] };
			__u32 f = feats[k / 2];

			if ((et_host_features & f) != f)
				continue;
			EXPECT_TRUE(!(k % 2 ? et_run(VNPU_LAYER_SOFTMAX, tc, dc_, 2, &col,
						     sizeof(col), f, 3) : et_run(VNPU_LAYER_SOFTMAX, tr, dr_, 2, &row, sizeof(row), f, 3)))
				TH_LOG("softmax layouts: run %u failed", k);
		}
		for (k = 1; k < K; k++) {
			if ((et_host_features & feats[k / 2]) != feats[k / 2])
				break;
			for (l = 0; l < L && !bad; l++)
				for (i = 0; i < N && !bad; i++) {
					float a = y[0][l * N + i];
					float b = k % 2 ? y[k][i * L + l] : y[k][l * N + i];

					if (memcmp(&a, &b, 4)) {
						EXPECT_TRUE(false)
							TH_LOG("softmax mode %u layout/path %u: lane %zu " "element %zu: %a, not %a",
							       mode, k, l, i, b, a);
						bad = 1;
					}
				}
		}
	}
	for (k = 0; k < K; k++)
		free(y[k]);
	free(x);
	free(xt);
}

/*
 * Softmax of lanes whose largest element is finite but which hold a NaN
 * (the lane's outputs all NaN), -inf or -1e30 (exps past exp's clamp at
 * -110: 0), in vectors whole and in the tail, on every path against the
 * baseline's bits (et_layer_f32()): the AVX-512 exps clamp with a vmaxps
 * whose operand order keeps the NaN.
 */
static void test_softmax_special_lanes(struct __test_metadata *_metadata)
{
	enum { L = 6, N = 45 };
	static const struct { size_t at; float v; } special[L] = {
		{ 7, NAN }, { 3, -INFINITY }, { 20, -1e30f }, { 44, NAN },
		{ 40, -INFINITY }, { 0, NAN },
	};
	__u64 dims[2] = { L, N };
	struct vnpu_layer_softmax at = { VNPU_SOFTMAX, 1 };
	struct vnpu_cmd_tensor t[2];
	float x[L * N], y[L * N], ref[L * N];
	void *data[2] = { x, y };
	size_t l, i;

	et_fill_f32(x, L * N);
	for (l = 0; l < L; l++) {
		double mx = -INFINITY, sum = 0;
		float *r = x + l * N;

		r[special[l].at] = special[l].v;
		for (i = 0; i < N; i++)
			if (r[i] > mx)
				mx = r[i];
		for (i = 0; i < N; i++)
			sum += exp(r[i] - mx);
		for (i = 0; i < N; i++)
			ref[l * N + i] = (float)(exp(r[i] - mx) / sum);
	}
	t[0] = et_dense(VNPU_DTYPE_F32, 2, dims);
	t[1] = t[0];
	EXPECT_EQ(0, et_layer_f32("softmax special lanes", VNPU_LAYER_SOFTMAX, t, data, 2,
				  &at, sizeof(at), ref, 1e-7, 1e-6));
}

/* The spacing of floats at the float nearest @r (2^-149 for subnormals). */
static double sm_ulp(double r)
{
	int e;

	frexp(fabs((double)(float)r), &e);
	return ldexp(1.0, e - 24 < -149 ? -149 : e - 24);
}

/*
 * The f32 Softmax and LogSoftmax against the computation in double: lanes
 * of crnn's Softmax (6625 classes, values in [-20, 20]) and lanes spread
 * over [-110, 110], whose smallest results are subnormal or 0, on every
 * path. Softmax is within 2^-22 of the result, relative, plus 2^-149
 * (the exp's error, up to 1.5 ulps of its own value, then one rounding of
 * the scaling, and once more for a subnormal result); random lanes reach
 * about 1.26 * 2^-23. Measured in ulps of the result instead, the same
 * error reads up to twice as many where the result lies at the top of its
 * binade and the exp's value at the bottom of its own. LogSoftmax is
 * within 1 ulp plus 2^-24 absolute (log(sum) of a sum with a relative
 * error of a few 2^-53, and rounding x - max - log(sum) once).
 */
static void test_softmax_ulps(struct __test_metadata *_metadata)
{
	enum { L = 8, N = 6625 };
	__u64 dims[2] = { L, N };
	float *x = malloc(L * N * 4), *y = malloc(L * N * 4);
	__u32 mode, k, feats[3] = { 0, VNPU_ENG_F_AVX2_FMA,
				    VNPU_ENG_F_AVX2_FMA | VNPU_ENG_F_AVX512 };
	struct vnpu_cmd_tensor t[2];
	size_t l, i;

	et_fill_f32(x, L * N);
	for (l = 0; l < L; l++)
		for (i = 0; i < N; i++)
			x[l * N + i] *= l < 4 ? 20.0f : 110.0f;
	t[0] = et_dense(VNPU_DTYPE_F32, 2, dims);
	t[1] = t[0];
	for (mode = VNPU_SOFTMAX; mode <= VNPU_LOG_SOFTMAX; mode++)
		for (k = 0; k < 3; k++) {
			struct vnpu_layer_softmax at = { mode, 1 };
			void *data[2] = { x, y };
			double worst = 0;

			if ((et_host_features & feats[k]) != feats[k])
				continue;
			ASSERT_EQ(0, et_run(VNPU_LAYER_SOFTMAX, t, data, 2, &at, sizeof(at),
					    feats[k], 3));
			for (l = 0; l < L; l++) {
				const float *xl = x + l * N;
				double mx = xl[0], sum = 0, r, err;

				for (i = 1; i < N; i++)
					mx = xl[i] > mx ? xl[i] : mx;
				for (i = 0; i < N; i++)
					sum += exp((double)xl[i] - mx);
				for (i = 0; i < N; i++) {
					r = mode == VNPU_SOFTMAX ? exp((double)xl[i] - mx) / sum :
						(double)xl[i] - mx - log(sum);
					err = fabs(y[l * N + i] - r);
					if (mode == VNPU_SOFTMAX)
						err /= 0x1p-22 * r + 0x1p-149;
					else
						err = (err > 0x1p-24 ? err - 0x1p-24 : 0) / sm_ulp(r);
					worst = err > worst ? err : worst;
				}
			}
			EXPECT_TRUE(worst <= 1.0)
				TH_LOG("softmax mode %u features %#x: %.2f of the bound", mode,
				       feats[k], worst);
		}
	free(x);
	free(y);
}

/* A per-channel parameter, positive when @positive. */
static float *channel_param(size_t c, int positive)
{
	float *p = malloc(c * 4);
	size_t i;

	et_fill_f32(p, c);
	if (positive)
		for (i = 0; i < c; i++)
			p[i] = fabsf(p[i]) + 0.1f;
	return p;
}

static void test_batch_instance(struct __test_metadata *_metadata)
{
	__u64 dims[4] = { 2, 5, 6, 7 }, cdim = 5;
	struct vnpu_layer_norm at = {};
	struct vnpu_cmd_tensor t[6];
	float *x, *y, *ref, *p[4];
	void *data[6];
	size_t n, e, c[6], i, k, per = 42;
	int mode;

	t[0] = et_dense(VNPU_DTYPE_F32, 4, dims);
	n = et_numel(&t[0]);
	x = malloc(n * 4);
	y = malloc(n * 4);
	ref = malloc(n * 4);
	et_fill_f32(x, n);
	for (i = 0; i < 4; i++)
		p[i] = channel_param(5, i == 3);
	for (mode = VNPU_NORM_BATCH; mode <= VNPU_NORM_INSTANCE; mode++) {
		__u32 np = mode == VNPU_NORM_BATCH ? 4 : 2;

		for (i = 0; i < np; i++) {
			t[1 + i] = et_dense(VNPU_DTYPE_F32, 1, &cdim);
			data[1 + i] = p[i];
		}
		t[1 + np] = t[0];
		data[0] = x;
		data[1 + np] = y;
		for (e = 0; e < n; e++) {
			double mean, var, eps = 1e-5;

			et_coords(&t[0], e, c);
			if (mode == VNPU_NORM_BATCH) {
				mean = p[2][c[1]];
				var = p[3][c[1]];
			} else {
				size_t base = (c[0] * 5 + c[1]) * per;

				mean = var = 0;
				for (k = 0; k < per; k++)
					mean += x[base + k];
				mean /= per;
				for (k = 0; k < per; k++)
					var += (x[base + k] - mean) * (x[base + k] - mean);
				var /= per;
			}
			ref[e] = (float)((x[e] - mean) / sqrt(var + eps) *
					 p[0][c[1]] + p[1][c[1]]);
		}
		memset(&at, 0, sizeof(at));
		at.mode = mode;
		at.epsilon = et_f32_bits(1e-5f);
		EXPECT_EQ(0,
			  et_layer_f32(mode == VNPU_NORM_BATCH ? "batchnorm" : "instancenorm",
				       VNPU_LAYER_NORM, t, data, np + 2, &at, sizeof(at), ref, 1e-6, 1e-5));
	}
	for (i = 0; i < 4; i++)
		free(p[i]);
	free(x);
	free(y);
	free(ref);
}

static void test_layer_norm(struct __test_metadata *_metadata)
{
	__u64 dims[3] = { 3, 4, 10 };
	size_t e, k, c[6];
	__u32 axis, bias;

	for (axis = 0; axis < 3; axis++)
		for (bias = 0; bias < 2; bias++) {
			struct vnpu_layer_norm at = {};
			struct vnpu_cmd_tensor t[4];
			void *data[4];
			size_t n, len = 1, rows = 1;
			float *x, *y, *ref, *sc, *bi;
			__u32 d, nt = 0;

			for (d = 0; d < 3; d++)
				if (d < axis)
					rows *= dims[d];
				else
					len *= dims[d];
			t[nt] = et_dense(VNPU_DTYPE_F32, 3, dims);
			n = et_numel(&t[0]);
			x = malloc(n * 4);
			y = malloc(n * 4);
			ref = malloc(n * 4);
			sc = malloc(len * 4);
			bi = malloc(len * 4);
			et_fill_f32(x, n);
			et_fill_f32(sc, len);
			et_fill_f32(bi, len);
			data[nt++] = x;
			t[nt] = et_dense(VNPU_DTYPE_F32, 3 - axis, dims + axis);
			data[nt++] = sc;
			if (bias) {
				t[nt] = t[nt - 1];
				data[nt++] = bi;
			}
			t[nt] = t[0];
			data[nt++] = y;
			for (e = 0; e < n; e++) {
				size_t r = e / len, base = r * len;
				double mean = 0, var = 0;

				et_coords(&t[0], e, c);
				for (k = 0; k < len; k++)
					mean += x[base + k];
				mean /= len;
				for (k = 0; k < len; k++)
					var += (x[base + k] - mean) * (x[base + k] - mean);
				var /= len;
				ref[e] = (float)((x[e] - mean) / sqrt(var + 1e-5) *
						 sc[e % len] + (bias ? bi[e % len] : 0));
			}
			(void)rows;
			at.mode = VNPU_NORM_LAYER;
			at.axis = axis;
			at.flags = bias ? VNPU_LAYER_F_BIAS : 0;
			at.epsilon = et_f32_bits(1e-5f);
			EXPECT_EQ(0,
				  et_layer_f32("layernorm", VNPU_LAYER_NORM, t, data, nt, &at,
					       sizeof(at), ref, 1e-6, 1e-5));
			free(x);
			free(y);
			free(ref);
			free(sc);
			free(bi);
		}
}

/*
 * LAYER over dense rows of a multiple of 8 floats, two at a time
 * (norm_rows_f32()), gives the bits of the one-row-at-a-time path, taken
 * here by the same X read through a view with a gap after each row: odd
 * and even counts of rows (a pair and one alone), rows split between
 * parts at odd rows, one row all -0 (a zero mean and variance), one
 * with a NaN, one of 3e38s, with and without the bias, on every path.
 */
static void test_layer_norm_rows(struct __test_metadata *_metadata)
{
	static const __u64 shapes[][2] = { { 7, 768 }, { 12, 8 }, { 5, 40 } };
	__u32 paths[3] = { 0, VNPU_ENG_F_AVX2_FMA,
			   VNPU_ENG_F_AVX2_FMA | VNPU_ENG_F_AVX512 };
	size_t s, p, i, k;
	int bias;

	for (s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++)
		for (bias = 0; bias < 2; bias++) {
			__u64 rows = shapes[s][0], len = shapes[s][1];
			__u64 dx[3] = { 1, rows, len }, dg[3] = { 1, rows, len + 3 };
			struct vnpu_layer_norm at = {
				.mode = VNPU_NORM_LAYER, .axis = 2,
				.flags = bias ? VNPU_LAYER_F_BIAS : 0,
				.epsilon = et_f32_bits(1e-5f),
			};
			float *x = malloc(rows * len * 4);
			float *xg = malloc(rows * (len + 3) * 4);
			float *y1 = malloc(rows * len * 4), *y2 = malloc(rows * len * 4);
			float *sc = malloc(len * 4), *bi = malloc(len * 4);
			struct vnpu_cmd_tensor t[4];
			void *d[4];
			__u32 nt = 0;

			et_fill_f32(x, rows * len);
			et_fill_f32(sc, len);
			et_fill_f32(bi, len);
			for (k = 0; k < len; k++) {
				x[len + k] = -0.0f;
				x[3 * len + k] = 3e38f;
			}
			x[2 * len + 5] = NAN;
			for (i = 0; i < rows; i++)
				memcpy(xg + i * (len + 3), x + i * len, len * 4);
			t[nt] = et_dense(VNPU_DTYPE_F32, 3, dx);
			d[nt++] = x;
			t[nt] = et_dense(VNPU_DTYPE_F32, 1, &len);
			d[nt++] = sc;
			if (bias) {
				t[nt] = t[nt - 1];
				d[nt++] = bi;
			}
			t[nt] = et_dense(VNPU_DTYPE_F32, 3, dx);
			d[nt++] = y1;
			for (p = 0; p < 3; p++) {
				int rc;

				if ((paths[p] & et_host_features) != paths[p])
					continue;
				t[0] = et_dense(VNPU_DTYPE_F32, 3, dx);
				d[0] = x;
				d[nt - 1] = y1;
				rc = et_run(VNPU_LAYER_NORM, t, d, nt, &at, sizeof(at),
					    paths[p], 3);
				/* The gapped view: rows len + 3 floats apart. */
				t[0] = et_dense(VNPU_DTYPE_F32, 3, dg);
				t[0].dims[2] = len;
				d[0] = xg;
				d[nt - 1] = y2;
				rc = rc ? rc : et_run(VNPU_LAYER_NORM, t, d, nt, &at,
						      sizeof(at), paths[p], 2);
				EXPECT_TRUE(!rc)
					TH_LOG("layernorm rows %llu x %llu bias %d path %zu: run failed (%d)",
					       (unsigned long long)rows,
					       (unsigned long long)len, bias, p, rc);
				EXPECT_TRUE(rc || !memcmp(y1, y2, rows * len * 4))
					TH_LOG("layernorm rows %llu x %llu bias %d path %zu: not a row at a time's bits",
					       (unsigned long long)rows,
					       (unsigned long long)len, bias, p);
			}
			free(x);
			free(xg);
			free(y1);
			free(y2);
			free(sc);
			free(bi);
		}
}

static void test_lp_lrn(struct __test_metadata *_metadata)
{
	__u64 dims[4] = { 2, 7, 3, 4 };
	struct vnpu_cmd_tensor t[2];
	size_t n, e, c[6], j;
	float *x, *y, *ref;
	void *data[2];
	__u32 p, axis, size;

	t[0] = et_dense(VNPU_DTYPE_F32, 4, dims);
	t[1] = t[0];
	n = et_numel(&t[0]);
	x = malloc(n * 4);
	y = malloc(n * 4);
	ref = malloc(n * 4);
	et_fill_f32(x, n);
	data[0] = x;
	data[1] = y;
	for (p = 1; p <= 2; p++)
		for (axis = 0; axis < 4; axis++) {
			struct vnpu_layer_norm at = { .mode = VNPU_NORM_LP,
						      .axis = axis, .p = p };

			for (e = 0; e < n; e++) {
				double norm = 0;

				et_coords(&t[0], e, c);
				for (j = 0; j < dims[axis]; j++) {
					size_t cc[6];

					memcpy(cc, c, sizeof(cc));
					cc[axis] = j;
					norm += p == 1 ? fabs(x[et_offset(&t[0], cc)]) :
						x[et_offset(&t[0], cc)] * x[et_offset(&t[0], cc)];
				}
				ref[e] = (float)(x[e] / (p == 1 ? norm : sqrt(norm)));
			}
			EXPECT_EQ(0,
				  et_layer_f32("lpnorm", VNPU_LAYER_NORM, t, data, 2, &at,
					       sizeof(at), ref, 1e-7, 1e-6));
		}
	for (size = 1; size <= 6; size += 1) {
		struct vnpu_layer_norm at = { .mode = VNPU_NORM_LRN, .size = size };
		double al = 1e-2, be = 0.75, bias = 2;

		at.alpha = et_f32_bits((float)al);
		at.beta = et_f32_bits((float)be);
		at.bias = et_f32_bits((float)bias);
		for (e = 0; e < n; e++) {
			double sq = 0;
			long ch, lo, hi;

			et_coords(&t[0], e, c);
			lo = (long)c[1] - (long)(size - 1) / 2;
			hi = (long)c[1] + size / 2;
			for (ch = lo < 0 ? 0 : lo; ch <= hi && ch < 7; ch++) {
				size_t cc[6];

				memcpy(cc, c, sizeof(cc));
				cc[1] = (size_t)ch;
				sq += (double)x[et_offset(&t[0], cc)] * x[et_offset(&t[0], cc)];
			}
			ref[e] = (float)(x[e] / pow(bias + al / size * sq, be));
		}
		EXPECT_EQ(0,
			  et_layer_f32("lrn", VNPU_LAYER_NORM, t, data, 2, &at, sizeof(at), ref,
				       1e-7, 1e-6));
	}
	free(x);
	free(y);
	free(ref);
}

static double ref_reduce(__u32 f, const float *v, size_t n)
{
	double acc = 0, mx = -INFINITY;
	size_t i;

	switch (f) {
	case VNPU_REDUCE_MAX: acc = -INFINITY; break;
	case VNPU_REDUCE_MIN: acc = INFINITY; break;
	case VNPU_REDUCE_PROD: acc = 1; break;
	default: break;
	}
	for (i = 0; i < n; i++) {
		double x = v[i];

		switch (f) {
		case VNPU_REDUCE_MAX: acc = x > acc ? x : acc; break;
		case VNPU_REDUCE_MIN: acc = x < acc ? x : acc; break;
		case VNPU_REDUCE_PROD: acc *= x; break;
		case VNPU_REDUCE_L1: acc += fabs(x); break;
		case VNPU_REDUCE_L2: case VNPU_REDUCE_SUM_SQUARE: acc += x * x; break;
		case VNPU_REDUCE_LOG_SUM_EXP: mx = x > mx ? x : mx; break;
		default: acc += x; break;
		}
	}
	switch (f) {
	case VNPU_REDUCE_MEAN: return acc / n;
	case VNPU_REDUCE_L2: return sqrt(acc);
	case VNPU_REDUCE_LOG_SUM: return log(acc);
	case VNPU_REDUCE_LOG_SUM_EXP:
		for (i = 0; i < n; i++)
			acc += exp(v[i] - mx);
		return mx + log(acc);
	default: return acc;
	}
}

static void test_reduce(struct __test_metadata *_metadata)
{
	__u64 dims[4] = { 3, 4, 1, 5 };
	struct vnpu_cmd_tensor t[2];
	float *x, vals[64];
	size_t n, e, c[6], k;
	__u32 f, axes;

	t[0] = et_dense(VNPU_DTYPE_F32, 4, dims);
	n = et_numel(&t[0]);
	x = malloc(n * 4);
	et_fill_f32(x, n);
	for (e = 0; e < n; e++)
		x[e] = x[e] * 2 + (x[e] > 0 ? 0.1f : -0.1f);
	for (f = 0; f < VNPU_REDUCE_COUNT; f++)
		for (axes = 0; axes < 16; axes++) {
			struct vnpu_layer_reduce at = { f, axes };
			__u64 dy[4];
			float y[64], ref[64];
			void *data[2] = { x, y };
			__u32 d;
			char name[64];

			if (f == VNPU_REDUCE_LOG_SUM)
				for (e = 0; e < n; e++)
					x[e] = fabsf(x[e]);
			for (d = 0; d < 4; d++)
				dy[d] = (axes >> d) & 1 ? 1 : dims[d];
			t[1] = et_dense(VNPU_DTYPE_F32, 4, dy);
			for (e = 0; e < et_numel(&t[1]); e++) {
				size_t cnt = 0;

				et_coords(&t[1], e, c);
				for (k = 0; k < n; k++) {
					size_t kc[6];

					et_coords(&t[0], k, kc);
					for (d = 0; d < 4; d++)
						if (!((axes >> d) & 1) && kc[d] != c[d])
							break;
					if (d == 4)
						vals[cnt++] = x[k];
				}
				ref[e] = (float)ref_reduce(f, vals, cnt);
			}
			snprintf(name, sizeof(name), "reduce f%u axes %x", f, axes);
			EXPECT_EQ(0,
				  et_layer_f32(name, VNPU_LAYER_REDUCE, t, data, 2, &at, sizeof(at),
					       ref, 1e-6, 1e-6));
		}
	/* Integer sum and max over axis 1. */
	{
		__u64 di[2] = { 4, 9 }, dyi[2] = { 4, 1 };
		int32_t xi[36], yi[4], ri[4];
		void *data[2] = { xi, yi };
		struct vnpu_layer_reduce at = { VNPU_REDUCE_MAX, 2 };
		int i, j;

		t[0] = et_dense(VNPU_DTYPE_I32, 2, di);
		t[1] = et_dense(VNPU_DTYPE_I32, 2, dyi);
		for (i = 0; i < 36; i++)
			xi[i] = (int32_t)(et_randf() * 1000);
		for (i = 0; i < 4; i++) {
			ri[i] = INT32_MIN;
			for (j = 0; j < 9; j++)
				ri[i] = xi[i * 9 + j] > ri[i] ? xi[i * 9 + j] : ri[i];
		}
		EXPECT_EQ(0,
			  et_layer_exact("reduce max i32", VNPU_LAYER_REDUCE, t, data, 2, &at,
					 sizeof(at), ri));
		at.func = VNPU_REDUCE_SUM;
		for (i = 0; i < 4; i++) {
			ri[i] = 0;
			for (j = 0; j < 9; j++)
				ri[i] += xi[i * 9 + j];
		}
		EXPECT_EQ(0,
			  et_layer_exact("reduce sum i32", VNPU_LAYER_REDUCE, t, data, 2, &at,
					 sizeof(at), ri));
	}
	free(x);
}

/* ReduceMax (@max) or ReduceMin taken in order: the first NaN, else the last extreme. */
static float ref_extreme(const float *v, size_t n, int max)
{
	double acc = max ? -INFINITY : INFINITY;

	for (size_t i = 0; i < n; i++) {
		double x = v[i];

		if (acc != acc)
			break;
		acc = x != x ? x : (max ? acc > x : acc < x) ? acc : x;
	}
	return (float)acc;
}

/*
 * MAX and MIN over dense f32 rows (eight lanes and a tail): zeros of both
 * signs as the extreme (the last one's sign), NaNs with payloads (the
 * first), infinities, the extreme in the tail; rows shorter than a vector
 * and long ones (pauses inside). The bits of the in-order double path.
 */
static void test_reduce_extreme(struct __test_metadata *_metadata)
{
	static const __u64 lens[] = { 5, 8, 37, 5000 };
	const __u32 nan_bits[2] = { 0x7fa00001, 0xffc00002 };
	float nan1, nan2;

	memcpy(&nan1, &nan_bits[0], 4);
	memcpy(&nan2, &nan_bits[1], 4);

	for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
		__u64 len = lens[li], rows = 8, dx[2] = { rows, len }, dy[2] = { rows, 1 };
		float *x = malloc(rows * len * 4), y[8], ref[8];
		struct vnpu_cmd_tensor t[2] = { et_dense(VNPU_DTYPE_F32, 2, dx),
						et_dense(VNPU_DTYPE_F32, 2, dy) };
		void *data[2] = { x, y };
		char name[64];

		et_fill_f32(x, rows * len);
		for (__u64 i = 0; i < len; i++) {
			float *r = x + len;

			/* rows 1 and 2: zeros and negatives, last zero -0 and +0 */
			r[i] = i % 3 ? -1.0f - (float)i : (i / 3) % 2 ? -0.0f : 0.0f;
			r[len + i] = r[i];
			x[4 * len + i] = -INFINITY;
			x[6 * len + i] = 0.5f;
		}
		x[2 * len - 1] = -0.0f;
		x[3 * len - 1] = 0.0f;
		x[3 * len + len / 2] = nan1;	/* row 3: two NaNs, the first kept */
		x[4 * len - 1] = nan2;
		x[5 * len + len - 1] = 100.0f;	/* row 5: the extreme last */
		x[6 * len - 1] = -100.0f;
		x[8 * len - 1] = nan2;	/* row 7: a NaN last */
		for (int max = 0; max < 2; max++) {
			struct vnpu_layer_reduce at = { max ? VNPU_REDUCE_MAX : VNPU_REDUCE_MIN,
							2 };

			for (__u64 r = 0; r < rows; r++)
				ref[r] = ref_extreme(x + r * len, len, max);
			snprintf(name, sizeof(name), "reduce %s of rows of %llu",
				 max ? "max" : "min", (unsigned long long)len);
			EXPECT_EQ(0, et_layer_exact(name, VNPU_LAYER_REDUCE, t, data, 2, &at,
						    sizeof(at), ref));
		}
		free(x);
	}
}

/*
 * Dense f32 rows summed in lanes: lengths with head and tail elements
 * around the vectors, and rows of more than 2^14 elements (a pause point
 * inside, wherever the part's earlier rows put it), for LayerNorm and the
 * sum reductions; split runs must give the whole run's bits.
 */
static void test_norm_reduce_lanes(struct __test_metadata *_metadata)
{
	static const __u64 lens[] = { 1, 7, 8, 13, 61, 40003 };
	static const __u32 funcs[] = {
		VNPU_REDUCE_SUM, VNPU_REDUCE_MEAN, VNPU_REDUCE_L1,
		VNPU_REDUCE_L2, VNPU_REDUCE_SUM_SQUARE,
	};
	__u32 li, fi;

	for (li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
		__u64 dims[2] = { 3, lens[li] }, dy[2] = { 3, 1 }, len = lens[li];
		struct vnpu_layer_norm at = {
			.mode = VNPU_NORM_LAYER, .axis = 1,
			.flags = VNPU_LAYER_F_BIAS,
			.epsilon = et_f32_bits(1e-5f),
		};
		struct vnpu_cmd_tensor t[4];
		size_t n = 3 * len, e, k;
		float *x = malloc(n * 4), *y = malloc(n * 4), *ref = malloc(n * 4);
		float *sc = malloc(len * 4), *bi = malloc(len * 4), ry[3], yy[3];
		void *data[4] = { x, sc, bi, y }, *rdata[2] = { x, yy };

		et_fill_f32(x, n);
		et_fill_f32(sc, len);
		et_fill_f32(bi, len);
		for (e = 0; e < n; e++)
			x[e] += 0.25f;
		for (e = 0; e < n; e++) {
			const float *row = x + e / len * len;
			double mean = 0, var = 0;

			for (k = 0; k < len; k++)
				mean += row[k];
			mean /= len;
			for (k = 0; k < len; k++)
				var += (row[k] - mean) * (row[k] - mean);
			var /= len;
			ref[e] = (float)((x[e] - mean) / sqrt(var + 1e-5) *
					 sc[e % len] + bi[e % len]);
		}
		t[0] = et_dense(VNPU_DTYPE_F32, 2, dims);
		t[1] = et_dense(VNPU_DTYPE_F32, 1, &dims[1]);
		t[2] = t[1];
		t[3] = t[0];
		EXPECT_EQ(0,
			  et_layer_f32("layernorm lanes", VNPU_LAYER_NORM, t, data, 4, &at,
				       sizeof(at), ref, 1e-5, 1e-4));
		t[1] = et_dense(VNPU_DTYPE_F32, 2, dy);
		for (fi = 0; fi < sizeof(funcs) / sizeof(funcs[0]); fi++) {
			struct vnpu_layer_reduce ra = { funcs[fi], 2 };

			for (e = 0; e < 3; e++)
				ry[e] = (float)ref_reduce(funcs[fi], x + e * len, len);
			EXPECT_EQ(0,
				  et_layer_f32("reduce lanes", VNPU_LAYER_REDUCE, t, rdata, 2, &ra,
					       sizeof(ra), ry, 1e-6, 1e-6));
		}
		free(x);
		free(y);
		free(ref);
		free(sc);
		free(bi);
	}
}

static void test_argreduce(struct __test_metadata *_metadata)
{
	__u64 dims[3] = { 3, 6, 4 };
	struct vnpu_cmd_tensor t[2];
	float x[72];
	size_t e, c[6], j;
	__u32 axis, mn, last;

	t[0] = et_dense(VNPU_DTYPE_F32, 3, dims);
	for (e = 0; e < 72; e++)
		x[e] = (float)((int)(et_randf() * 3));	/* many ties */
	for (axis = 0; axis < 3; axis++)
		for (mn = 0; mn < 2; mn++)
			for (last = 0; last < 2; last++) {
				struct vnpu_layer_argreduce at = { mn, axis, last, 0 };
				__u64 dy[3] = { 3, 6, 4 };
				int64_t y[72], ref[72];
				void *data[2] = { x, y };

				dy[axis] = 1;
				t[1] = et_dense(VNPU_DTYPE_I64, 3, dy);
				for (e = 0; e < et_numel(&t[1]); e++) {
					size_t best = 0;

					et_coords(&t[1], e, c);
					for (j = 0; j < dims[axis]; j++) {
						float v, b;

						c[axis] = j;
						v = x[et_offset(&t[0], c)];
						c[axis] = best;
						b = x[et_offset(&t[0], c)];
						if ((mn ? v < b : v > b) || (last && v == b))
							best = j;
					}
					ref[e] = (int64_t)best;
				}
				EXPECT_EQ(0,
					  et_layer_exact("argreduce", VNPU_LAYER_ARGREDUCE, t, data,
							 2, &at, sizeof(at), ref));
			}
}

static double ref_coord(__u32 mode, double o, double in, double out,
			double s)
{
	switch (mode) {
	case VNPU_COORD_ASYMMETRIC: return o / s;
	case VNPU_COORD_ALIGN_CORNERS: return out == 1 ? 0 : o * (in - 1) / (out - 1);
	case VNPU_COORD_PYTORCH_HALF_PIXEL: return out > 1 ? (o + 0.5) / s - 0.5 : 0;
	case VNPU_COORD_TF_HALF_PIXEL_FOR_NN: return (o + 0.5) / s;
	case VNPU_COORD_HALF_PIXEL_SYMMETRIC: {
		double adj = out / (s * in), off = in / 2 * (1 - adj);

		return off + (o + 0.5) / s - 0.5;
	}
	default: return (o + 0.5) / s - 0.5;
	}
}

/*
 * The two taps of output index @o along an axis of @ni -> @no as the
 * definition takes them: @w on @i1, 1 - @w on @i0 (nearest: one tap,
 * rounded per @nearest, and @w 0).
 */
static void ref_taps(__u32 mode, __u32 coord, __u32 nearest, size_t o,
		     double ni, double no, size_t *i0, size_t *i1, double *w)
{
	double xc = ref_coord(coord, (double)o, ni, no, no / ni), f = floor(xc);

	if (mode == VNPU_RESIZE_NEAREST) {
		switch (nearest) {
		case VNPU_NEAREST_ROUND_PREFER_CEIL: xc = xc - f >= 0.5 ? f + 1 : f; break;
		case VNPU_NEAREST_FLOOR: xc = f; break;
		case VNPU_NEAREST_CEIL: xc = ceil(xc); break;
		default: xc = xc - f > 0.5 ? f + 1 : f; break;
		}
		xc = xc < 0 ? 0 : xc > ni - 1 ? ni - 1 : xc;
		*i0 = *i1 = (size_t)xc;
		*w = 0;
		return;
	}
	xc = xc < 0 ? 0 : xc > ni - 1 ? ni - 1 : xc;
	*i0 = (size_t)floor(xc);
	*i1 = *i0 + 1 < ni ? *i0 + 1 : *i0;
	*w = xc - floor(xc);
}

/*
 * Resize of the last two dims of dense f32 @x (shape @t[0]) into @ref
 * (shape @t[1]) by the definition, nearest or bilinear, the leading dims
 * kept: each output the sum of its four taps.
 */
static void ref_resize2d(const struct vnpu_cmd_tensor *t, const float *x,
			 __u32 mode, __u32 coord, __u32 nearest, float *ref)
{
	__u32 r = t[0].rank;
	size_t e, c[VNPU_MAX_DIMS], i0[2], i1[2], plane, k;
	double w[2], acc;
	int d, a, b;

	for (e = 0; e < et_numel(&t[1]); e++) {
		et_coords(&t[1], e, c);
		for (d = 0; d < 2; d++)
			ref_taps(mode, coord, nearest, c[r - 2 + d],
				 (double)t[0].dims[r - 2 + d],
				 (double)t[1].dims[r - 2 + d], &i0[d], &i1[d],
				 &w[d]);
		for (plane = 0, k = 0; k + 2 < r; k++)
			plane = plane * t[0].dims[k] + c[k];
		acc = 0;
		for (a = 0; a < 2; a++)
			for (b = 0; b < 2; b++)
				acc += (a ? w[0] : 1 - w[0]) * (b ? w[1] : 1 - w[1]) *
				       x[(plane * t[0].dims[r - 2] + (a ? i1[0] : i0[0])) *
					 t[0].dims[r - 1] + (b ? i1[1] : i0[1])];
		ref[e] = (float)acc;
	}
}

/*
 * The engine's definition in float (vnpu_eng_data.c, resize_elems()) of
 * ref_resize2d()'s resize: per output row tap a (its weight W_a), h_a =
 * w_0 x_0 + w_1 x_1 over the row's column taps, then y = W_0 h_0 + W_1
 * h_1; a tap at weight 0 is no tap; nearest copies.
 */
static void ref_resize2d_f32(const struct vnpu_cmd_tensor *t, const float *x,
			     __u32 mode, __u32 coord, __u32 nearest, float *ref)
{
	__u32 r = t[0].rank;
	size_t e, c[VNPU_MAX_DIMS], i0[2], i1[2], plane, k, row, col;
	double w[2];
	int d, a, b;

	for (e = 0; e < et_numel(&t[1]); e++) {
		float acc = 0, h, wa, wb;

		et_coords(&t[1], e, c);
		for (d = 0; d < 2; d++)
			ref_taps(mode, coord, nearest, c[r - 2 + d],
				 (double)t[0].dims[r - 2 + d],
				 (double)t[1].dims[r - 2 + d], &i0[d], &i1[d],
				 &w[d]);
		for (plane = 0, k = 0; k + 2 < r; k++)
			plane = plane * t[0].dims[k] + c[k];
		if (mode == VNPU_RESIZE_NEAREST) {
			ref[e] = x[(plane * t[0].dims[r - 2] + i0[0]) * t[0].dims[r - 1] + i0[1]];
			continue;
		}
		for (a = 0; a < 1 + (w[0] != 0); a++) {
			row = (plane * t[0].dims[r - 2] + (a ? i1[0] : i0[0])) * t[0].dims[r - 1];
			h = 0;
			for (b = 0; b < 1 + (w[1] != 0); b++) {
				col = b ? i1[1] : i0[1];
				wb = w[1] == 0 ? 1.0f : (float)(b ? w[1] : 1 - w[1]);
				h = b ? h + wb * x[row + col] : wb * x[row + col];
			}
			wa = w[0] == 0 ? 1.0f : (float)(a ? w[0] : 1 - w[0]);
			acc = a ? acc + wa * h : wa * h;
		}
		ref[e] = acc;
	}
}

static void test_resize(struct __test_metadata *_metadata)
{
	static const __u64 in[4] = { 1, 2, 5, 7 };
	static const __u64 outs[3][4] = {
		{ 1, 2, 10, 14 }, { 1, 2, 3, 4 }, { 1, 2, 1, 13 },
	};
	struct vnpu_cmd_tensor t[2];
	float x[70];
	__u32 coord, mode, nearest, o;

	t[0] = et_dense(VNPU_DTYPE_F32, 4, in);
	et_fill_f32(x, 70);
	for (o = 0; o < 3; o++)
		for (mode = 0; mode < 2; mode++)
			for (coord = 0; coord <= VNPU_COORD_HALF_PIXEL_SYMMETRIC; coord++)
				for (nearest = 0; nearest < (mode ? 1u : 4u); nearest++) {
					struct vnpu_layer_resize at = {
						.mode = mode, .coord = coord,
						.nearest = nearest,
					};
					float y[600], ref[600];
					void *data[2] = { x, y };

					t[1] = et_dense(VNPU_DTYPE_F32, 4, outs[o]);
					ref_resize2d(t, x, mode, coord, nearest, ref);
					EXPECT_EQ(0,
						  et_layer_f32("resize", VNPU_LAYER_RESIZE, t, data,
							       2, &at, sizeof(at), ref, 1e-6, 1e-5));
					ref_resize2d_f32(t, x, mode, coord, nearest, ref);
					EXPECT_EQ(0,
						  et_layer_exact("resize", VNPU_LAYER_RESIZE, t, data,
								 2, &at, sizeof(at), ref));
				}
}

/*
 * Rows wider than a part's table of columns (ENG_RESIZE_COLS) and rows
 * of one column: bilinear [2, 3, 700] -> [2, 4, 2500] and nearest
 * [3, 5, 1] -> [3, 11, 1].
 */
static void test_resize_wide(struct __test_metadata *_metadata)
{
	static const __u64 in[2][3] = { { 2, 3, 700 }, { 3, 5, 1 } };
	static const __u64 out[2][3] = { { 2, 4, 2500 }, { 3, 11, 1 } };
	struct vnpu_cmd_tensor t[2];
	__u32 k;

	for (k = 0; k < 2; k++) {
		struct vnpu_layer_resize at = { .mode = !k };
		size_t nx, ny;
		float *x, *y, *ref;
		void *data[2];

		t[0] = et_dense(VNPU_DTYPE_F32, 3, in[k]);
		t[1] = et_dense(VNPU_DTYPE_F32, 3, out[k]);
		nx = et_numel(&t[0]);
		ny = et_numel(&t[1]);
		x = malloc(nx * 4);
		y = malloc(ny * 4);
		ref = malloc(ny * 4);
		et_fill_f32(x, nx);
		ref_resize2d(t, x, at.mode, VNPU_COORD_HALF_PIXEL,
			     VNPU_NEAREST_ROUND_PREFER_FLOOR, ref);
		data[0] = x;
		data[1] = y;
		EXPECT_EQ(0,
			  et_layer_f32("resize wide", VNPU_LAYER_RESIZE, t, data, 2, &at,
				       sizeof(at), ref, 1e-6, 1e-5));
		free(x);
		free(y);
		free(ref);
	}
}

static double ref_cubic_w(double t, double a)
{
	t = fabs(t);
	if (t <= 1)
		return (a + 2) * t * t * t - (a + 3) * t * t + 1;
	if (t < 2)
		return a * t * t * t - 5 * a * t * t + 8 * a * t - 4 * a;
	return 0;
}

/* Bicubic upsampling and downsampling, with and without exclude_outside. */
static void test_resize_cubic(struct __test_metadata *_metadata)
{
	static const __u64 in[4] = { 1, 1, 4, 5 };
	static const __u64 outs[2][4] = { { 1, 1, 8, 9 }, { 1, 1, 3, 3 } };
	struct vnpu_cmd_tensor t[2];
	float x[20], y[72], ref[72];
	void *data[2] = { x, y };
	__u32 o, excl, coord;
	size_t e, i, j;

	et_fill_f32(x, 20);
	t[0] = et_dense(VNPU_DTYPE_F32, 4, in);
	for (o = 0; o < 2; o++)
		for (excl = 0; excl < 2; excl++)
			for (coord = 0; coord <= VNPU_COORD_ASYMMETRIC; coord++) {
				struct vnpu_layer_resize at = {
					.mode = VNPU_RESIZE_CUBIC, .coord = coord,
					.flags = excl ? VNPU_RESIZE_F_EXCLUDE_OUTSIDE : 0,
					.cubic_a = et_f32_bits(-0.75f),
				};
				size_t no = outs[o][2] * outs[o][3];

				t[1] = et_dense(VNPU_DTYPE_F32, 4, outs[o]);
				for (e = 0; e < no; e++) {
					size_t oc[2] = { e / outs[o][3], e % outs[o][3] };
					double w[2][4], acc = 0;
					long idx[2][4];
					int d, k;

					for (d = 0; d < 2; d++) {
						double ni = in[2 + d], nn = outs[o][2 + d];
						double s = nn / ni, xc = coord ?
							oc[d] / s : (oc[d] + 0.5) / s - 0.5;
						double f = floor(xc), sum = 0;

						for (k = 0; k < 4; k++) {
							double pos = f - 1 + k;

							w[d][k] = ref_cubic_w(xc - f + 1 - k, -0.75);
							if (excl && (pos < 0 || pos > ni - 1))
								w[d][k] = 0;
							idx[d][k] = pos < 0 ? 0 : pos > ni - 1 ?
								    (long)ni - 1 : (long)pos;
							sum += w[d][k];
						}
						if (excl)
							for (k = 0; k < 4; k++)
								w[d][k] /= sum;
					}
					for (i = 0; i < 4; i++)
						for (j = 0; j < 4; j++)
							acc += w[0][i] * w[1][j] *
							       x[idx[0][i] * 5 + idx[1][j]];
					ref[e] = (float)acc;
				}
				EXPECT_EQ(0,
					  et_layer_f32("resize cubic", VNPU_LAYER_RESIZE, t, data,
						       2, &at, sizeof(at), ref, 1e-6, 1e-5));
			}
}

static long ref_pad_src(__u32 mode, long i, long n)
{
	if (i >= 0 && i < n)
		return i;
	if (mode == VNPU_PAD_EDGE)
		return i < 0 ? 0 : n - 1;
	if (mode == VNPU_PAD_WRAP)
		return ((i % n) + n) % n;
	if (mode == VNPU_PAD_REFLECT) {
		while (i < 0 || i >= n)
			i = i < 0 ? -i : 2 * (n - 1) - i;
		return i;
	}
	return -1;
}

static void test_pad(struct __test_metadata *_metadata)
{
	static const __s64 begins[3][3] = { { 1, 2, 0 }, { 0, -1, 3 }, { 2, 5, 7 } };
	static const __s64 ends[3][3] = { { 0, 3, 1 }, { 1, 2, -2 }, { 3, 6, 2 } };
	__u64 dims[3] = { 2, 3, 4 };
	struct vnpu_cmd_tensor t[2];
	int16_t x[24];
	size_t e, c[6], i;
	__u32 mode;

	t[0] = et_dense(VNPU_DTYPE_I16, 3, dims);
	for (e = 0; e < 24; e++)
		x[e] = (int16_t)(e * 7 - 50);
	for (mode = 0; mode <= VNPU_PAD_WRAP; mode++)
		for (i = 0; i < 3; i++) {
			struct vnpu_layer_pad at = { .mode = mode };
			__u64 dy[3];
			int16_t y[2000], ref[2000];
			void *data[2] = { x, y };
			int d;

			for (d = 0; d < 3; d++) {
				dy[d] = dims[d] + begins[i][d] + ends[i][d];
				at.begin[d] = begins[i][d];
			}
			if (!mode)
				at.value = 0xbeef;
			t[1] = et_dense(VNPU_DTYPE_I16, 3, dy);
			for (e = 0; e < et_numel(&t[1]); e++) {
				size_t off = 0;

				et_coords(&t[1], e, c);
				for (d = 0; d < 3; d++) {
					long s = ref_pad_src(mode, (long)c[d] - begins[i][d],
							     (long)dims[d]);

					if (s < 0)
						break;
					off += (size_t)s * (size_t)t[0].strides[d];
				}
				ref[e] = d == 3 ? x[off] : (int16_t)0xbeef;
			}
			EXPECT_EQ(0,
				  et_layer_exact("pad", VNPU_LAYER_PAD, t, data, 2, &at, sizeof(at),
						 ref));
		}
}

static void test_gather(struct __test_metadata *_metadata)
{
	__u64 dims[3] = { 4, 5, 3 }, di[2] = { 2, 3 };
	struct vnpu_cmd_tensor t[3];
	double x[60];
	int64_t idx[6] = { 0, -1, 2, 1, -2, 0 };
	int32_t idx32[6] = { 0, -1, 2, 1, -2, 0 };
	size_t e, c[6];
	__u32 axis, w;

	for (e = 0; e < 60; e++)
		x[e] = e * 1.5;
	for (w = 0; w < 2; w++)
		for (axis = 0; axis < 3; axis++) {
			struct vnpu_layer_gather at = { axis, 0 };
			__u64 dy[4];
			double y[200], ref[200];
			void *data[3] = { x, w ? (void *)idx32 : (void *)idx, y };
			__u32 d, r = 0;

			t[0] = et_dense(VNPU_DTYPE_F64, 3, dims);
			t[1] = et_dense(w ? VNPU_DTYPE_I32 : VNPU_DTYPE_I64, 2, di);
			for (d = 0; d < axis; d++)
				dy[r++] = dims[d];
			dy[r++] = 2;
			dy[r++] = 3;
			for (d = axis + 1; d < 3; d++)
				dy[r++] = dims[d];
			t[2] = et_dense(VNPU_DTYPE_F64, 4, dy);
			for (e = 0; e < et_numel(&t[2]); e++) {
				size_t xc[3];
				long v;

				et_coords(&t[2], e, c);
				v = idx[c[axis] * 3 + c[axis + 1]];
				if (v < 0)
					v += (long)dims[axis];
				for (d = 0; d < 3; d++)
					xc[d] = d < axis ? c[d] : d == axis ? (size_t)v : c[d + 1];
				ref[e] = x[et_offset(&t[0], xc)];
			}
			EXPECT_EQ(0,
				  et_layer_exact("gather", VNPU_LAYER_GATHER, t, data, 3, &at,
						 sizeof(at), ref));
		}
	/* GatherElements, and an index out of range faults. */
	{
		__u64 dx[2] = { 3, 4 }, dind[2] = { 2, 4 };
		struct vnpu_layer_gather at = { 1, 0 };
		int64_t ind[8] = { 0, 3, -1, 2, 1, 1, 0, -4 };
		double y[8], ref[8];
		void *data[3] = { x, ind, y };
		struct vnpu_eng_ctx ctx = {};

		t[0] = et_dense(VNPU_DTYPE_F64, 2, dx);
		t[1] = et_dense(VNPU_DTYPE_I64, 2, dind);
		t[2] = et_dense(VNPU_DTYPE_F64, 2, dind);
		for (e = 0; e < 8; e++) {
			long v = ind[e] < 0 ? ind[e] + 4 : ind[e];

			ref[e] = x[(e / 4) * 4 + (size_t)v];
		}
		EXPECT_EQ(0,
			  et_layer_exact("gather_elements", VNPU_LAYER_GATHER_ELEMENTS, t, data, 3,
					 &at, sizeof(at), ref));
		ind[5] = 4;
		EXPECT_EQ(VNPU_ENG_EINVAL,
			  vnpu_eng_layer_run(VNPU_LAYER_GATHER_ELEMENTS, t, data, 3, &at, 0, 1,
					     &ctx))
			TH_LOG("gather_elements: index out of range must fault");
		ind[5] = -5;
		EXPECT_EQ(VNPU_ENG_EINVAL,
			  vnpu_eng_layer_run(VNPU_LAYER_GATHER_ELEMENTS, t, data, 3, &at, 0, 1,
					     &ctx))
			TH_LOG("gather_elements: index below range must fault");
	}
}

/*
 * An embedding lookup: rows of a [50, 300] table by [3, 17] indices, split
 * inside rows; from a dense table (a copy a row) and from one read every
 * other element (strided runs).
 */
static void test_gather_rows(struct __test_metadata *_metadata)
{
	__u64 dx[2] = { 50, 300 }, di[2] = { 3, 17 }, dy[3] = { 3, 17, 300 };
	struct vnpu_layer_gather at = { 0, 0 };
	struct vnpu_cmd_tensor t[3];
	float *x = malloc(50 * 600 * 4), *y = malloc(3 * 17 * 300 * 4);
	float *ref = malloc(3 * 17 * 300 * 4);
	int64_t idx[51];
	void *data[3] = { x, idx, y };
	size_t e, k;
	int sparse;

	et_fill_f32(x, 50 * 600);
	for (k = 0; k < 51; k++)
		idx[k] = (int64_t)((k * 37) % 100) - 50;
	for (sparse = 0; sparse < 2; sparse++) {
		t[0] = et_dense(VNPU_DTYPE_F32, 2, dx);
		if (sparse) {
			t[0].strides[0] = 600;
			t[0].strides[1] = 2;
		}
		t[1] = et_dense(VNPU_DTYPE_I64, 2, di);
		t[2] = et_dense(VNPU_DTYPE_F32, 3, dy);
		for (e = 0; e < 3 * 17 * 300; e++) {
			int64_t v = idx[e / 300];

			v += v < 0 ? 50 : 0;
			ref[e] = x[v * t[0].strides[0] + (e % 300) * t[0].strides[1]];
		}
		EXPECT_EQ(0,
			  et_layer_exact("gather rows", VNPU_LAYER_GATHER, t, data, 3, &at,
					 sizeof(at), ref));
	}
	free(x);
	free(y);
	free(ref);
}

/* A transposed (non-dense) input and an output with gaps. */
static void test_strided_views(struct __test_metadata *_metadata)
{
	__u64 dims[2] = { 6, 9 };
	struct vnpu_cmd_tensor t[2];
	struct vnpu_layer_act at = { .func = VNPU_ACT_NEG };
	float x[54], y[200], ref[200];
	void *data[2] = { x, y };
	size_t i, j;

	et_fill_f32(x, 54);
	t[0] = et_dense(VNPU_DTYPE_F32, 2, dims);
	/* View x [9][6] as [6][9] transposed. */
	t[0].strides[0] = 1;
	t[0].strides[1] = 6;
	t[1] = et_dense(VNPU_DTYPE_F32, 2, dims);
	t[1].strides[0] = 20;	/* rows 20 apart */
	for (i = 0; i < 200; i++)
		ref[i] = 0;
	for (i = 0; i < 6; i++)
		for (j = 0; j < 9; j++)
			ref[i * 20 + j] = -x[j * 6 + i];
	/* The gaps keep whatever was there: fill both with 0 first. */
	memset(y, 0, sizeof(y));
	EXPECT_TRUE(!et_run(VNPU_LAYER_UNARY, t, data, 2, &at, sizeof(at), 0, 5))
		TH_LOG("strided unary runs");
	for (i = 0; i < 6; i++)
		for (j = 0; j < 9; j++) {
			EXPECT_EQ(ref[i * 20 + j], y[i * 20 + j])
				TH_LOG("strided unary [%zu][%zu]", i, j);
		}
}

/* A dtype conversion through the engine's CAST (tested on its own). */
static void cast(struct __test_metadata *_metadata, const struct vnpu_cmd_tensor *from, void *src,
		 __u32 dtype,
		 void *dst)
{
	struct vnpu_cmd_tensor t[2] = { *from, *from };
	void *data[2] = { src, dst };

	t[1].dtype = dtype;
	EXPECT_TRUE(!et_run(VNPU_LAYER_CAST, t, data, 2, NULL, 0, 0, 1))
		TH_LOG("cast");
}

/*
 * f16 and bf16 storage: an op on half inputs gives the half rounding of the
 * same op in f32 on the same (widened) inputs.
 */
static void half_case(struct __test_metadata *_metadata, const char *name, __u32 op,
		      const void *attrs,
		      __u32 attr_size, struct vnpu_cmd_tensor *t, __u32 n)
{
	void *f32[6], *half[6], *out;
	struct vnpu_cmd_tensor th[6];
	__u32 i, dt;
	size_t bytes;

	for (dt = VNPU_DTYPE_F16; dt <= VNPU_DTYPE_BF16; dt += VNPU_DTYPE_BF16 -
	     VNPU_DTYPE_F16) {
		for (i = 0; i < n; i++) {
			bytes = et_bytes(&t[i]);
			f32[i] = calloc(1, bytes + 4);
			half[i] = calloc(1, bytes / 2 + 2);
			th[i] = t[i];
			th[i].dtype = dt;
			if (i + 1 < n) {
				et_fill_f32(f32[i], bytes / 4);
				cast(_metadata, &t[i], f32[i], dt, half[i]);
				cast(_metadata, &th[i], half[i], VNPU_DTYPE_F32, f32[i]);
			}
		}
		EXPECT_TRUE(!et_run(op, t, f32, n, attrs, attr_size, 0, 3))
			TH_LOG("%s f32", name);
		out = calloc(1, et_bytes(&t[n - 1]) / 2 + 2);
		cast(_metadata, &t[n - 1], f32[n - 1], dt, out);
		EXPECT_EQ(0, et_layer_exact(name, op, th, half, n, attrs, attr_size, out));
		for (i = 0; i < n; i++) {
			free(f32[i]);
			free(half[i]);
		}
		free(out);
	}
}

static void test_half_ops(struct __test_metadata *_metadata)
{
	__u64 d4[4] = { 2, 5, 7, 9 }, d5[1] = { 5 }, dn[2] = { 7, 9 };
	__u64 dp[4] = { 2, 5, 4, 4 }, dr[4] = { 2, 5, 11, 20 };
	struct vnpu_layer_softmax sm = { VNPU_SOFTMAX, 3 };
	struct vnpu_layer_norm ln = { .mode = VNPU_NORM_LAYER, .axis = 2,
				      .flags = VNPU_LAYER_F_BIAS,
				      .epsilon = 0x3727c5ac };
	struct vnpu_layer_norm in = { .mode = VNPU_NORM_INSTANCE,
				      .epsilon = 0x3727c5ac };
	struct vnpu_layer_pool pl = { .mode = VNPU_POOL_AVG };
	struct vnpu_layer_resize rs = { .mode = VNPU_RESIZE_LINEAR };
	struct vnpu_cmd_tensor t[4];

	t[0] = et_dense(VNPU_DTYPE_F32, 4, d4);
	t[1] = t[0];
	half_case(_metadata, "softmax half", VNPU_LAYER_SOFTMAX, &sm, sizeof(sm), t, 2);
	sm.mode = VNPU_LOG_SOFTMAX;
	sm.axis = 1;
	half_case(_metadata, "logsoftmax half", VNPU_LAYER_SOFTMAX, &sm, sizeof(sm), t, 2);
	t[1] = et_dense(VNPU_DTYPE_F32, 2, dn);
	t[2] = t[1];
	t[3] = t[0];
	half_case(_metadata, "layernorm half", VNPU_LAYER_NORM, &ln, sizeof(ln), t, 4);
	t[1] = et_dense(VNPU_DTYPE_F32, 1, d5);
	t[2] = t[1];
	half_case(_metadata, "instancenorm half", VNPU_LAYER_NORM, &in, sizeof(in), t, 4);
	pl.kernel[0] = pl.kernel[1] = 2;
	pl.stride[0] = pl.stride[1] = 2;
	pl.dilation[0] = pl.dilation[1] = 1;
	pl.pad_end[0] = 1;
	t[1] = et_dense(VNPU_DTYPE_F32, 4, dp);
	half_case(_metadata, "avgpool half", VNPU_LAYER_POOL, &pl, sizeof(pl), t, 2);
	t[1] = et_dense(VNPU_DTYPE_F32, 4, dr);
	half_case(_metadata, "resize half", VNPU_LAYER_RESIZE, &rs, sizeof(rs), t, 2);
}

/* Layers with a zero extent somewhere run and touch nothing they should not. */
static void test_empty(struct __test_metadata *_metadata)
{
	__u64 d20[2] = { 2, 0 }, d120[3] = { 1, 2, 0 }, d30[2] = { 3, 0 };
	__u64 d31[2] = { 3, 1 }, d2[1] = { 2 };
	struct vnpu_layer_norm ln = { .mode = VNPU_NORM_LAYER, .axis = 1 };
	struct vnpu_layer_norm in = { .mode = VNPU_NORM_INSTANCE };
	struct vnpu_layer_reduce sum = { VNPU_REDUCE_SUM, 2 };
	struct vnpu_layer_reduce mx = { VNPU_REDUCE_MAX, 2 };
	struct vnpu_layer_softmax sm = { VNPU_SOFTMAX, 1 };
	float buf[16], y[4] = { 5, 5, 5, 5 }, p[2] = { 1, 1 };
	void *data[4] = { buf, p, p, buf };
	struct vnpu_cmd_tensor t[4];

	t[0] = et_dense(VNPU_DTYPE_F32, 2, d20);
	t[1] = et_dense(VNPU_DTYPE_F32, 1, (__u64[]){ 0 });
	t[2] = t[0];
	EXPECT_TRUE(!et_run(VNPU_LAYER_NORM, t, data, 3, &ln, sizeof(ln), 0, 4))
		TH_LOG("layernorm over an empty axis");
	t[0] = et_dense(VNPU_DTYPE_F32, 3, d120);
	t[1] = et_dense(VNPU_DTYPE_F32, 1, d2);
	t[2] = t[1];
	t[3] = t[0];
	EXPECT_TRUE(!et_run(VNPU_LAYER_NORM, t, data, 4, &in, sizeof(in), 0, 4))
		TH_LOG("instancenorm of empty planes");
	t[0] = et_dense(VNPU_DTYPE_F32, 2, d30);
	t[1] = et_dense(VNPU_DTYPE_F32, 2, d31);
	data[1] = y;
	EXPECT_TRUE(!et_run(VNPU_LAYER_REDUCE, t, data, 2, &sum, sizeof(sum), 0, 4) && y[0] == 0
		    && y[2] == 0)
		TH_LOG("empty sum is 0");
	EXPECT_TRUE(!et_run(VNPU_LAYER_REDUCE, t, data, 2, &mx, sizeof(mx), 0, 4) && isinf(y[1])
		    && y[1] < 0)
		TH_LOG("empty max is -inf");
	t[1] = t[0];
	EXPECT_TRUE(!et_run(VNPU_LAYER_SOFTMAX, t, data, 2, &sm, sizeof(sm), 0, 4))
		TH_LOG("softmax of empty lanes");
	/* A convolution over no input channels gives its bias. */
	{
		struct vnpu_layer_conv c = { .flags = VNPU_LAYER_F_BIAS, .group = 1 };
		float bias[2] = { 1.5f, -2 }, out[2 * 3 * 3];
		void *cd[4] = { buf, buf, bias, out };
		__u32 f, i;

		c.kernel[0] = c.kernel[1] = 3;
		c.stride[0] = c.stride[1] = 1;
		c.dilation[0] = c.dilation[1] = 1;
		c.pad_begin[0] = c.pad_begin[1] = c.pad_end[0] = c.pad_end[1] = 1;
		t[0] = et_dense(VNPU_DTYPE_F32, 4, (__u64[]){ 1, 0, 3, 3 });
		t[1] = et_dense(VNPU_DTYPE_F32, 4, (__u64[]){ 2, 0, 3, 3 });
		t[2] = et_dense(VNPU_DTYPE_F32, 1, d2);
		t[3] = et_dense(VNPU_DTYPE_F32, 4, (__u64[]){ 1, 2, 3, 3 });
		for (f = 0; f < 2; f++) {
			memset(out, 0x7f, sizeof(out));
			EXPECT_TRUE(!et_run(VNPU_LAYER_CONV, t, cd, 4, &c, sizeof(c),
					    f ? et_host_features : 0, 2))
				TH_LOG("conv without input channels");
			for (i = 0; i < 18; i++) {
				EXPECT_EQ(bias[i / 9], out[i])
					TH_LOG("conv C=0 [%u]", i);
			}
		}
	}
}

TEST(other)
{
	test_half_ops(_metadata);
	test_empty(_metadata);
	test_softmax(_metadata);
	test_softmax_layouts(_metadata);
	test_softmax_ulps(_metadata);
	test_batch_instance(_metadata);
	test_layer_norm(_metadata);
	test_layer_norm_rows(_metadata);
	test_lp_lrn(_metadata);
	test_reduce(_metadata);
	test_reduce_extreme(_metadata);
	test_norm_reduce_lanes(_metadata);
	test_argreduce(_metadata);
	test_resize(_metadata);
	test_resize_cubic(_metadata);
	test_resize_wide(_metadata);
	test_pad(_metadata);
	test_gather(_metadata);
	test_gather_rows(_metadata);
	test_strided_views(_metadata);
	/* Last: its inputs leave the others' as they were. */
	test_softmax_special_lanes(_metadata);
}

KSFT_MAIN

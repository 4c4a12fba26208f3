// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ATTENTION against the layers it replaces (GEMM, BINARY, SOFTMAX, GEMM run
 * one by one on the same views: bit for bit) and against a plain double
 * reference, on every kernel path, whole and split, with strided Q, KT, V
 * and Y (BERT's head split), masks of every broadcast and none, a scale by
 * division or product; and the checks that refuse bad layers.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_test.h"
#include "ksft_main.h"

enum mask_kind { MASK_NONE, MASK_KEYS, MASK_FULL, MASK_ROWS, MASK_COLS_STRIDED };

struct attn_case {
	__u64 b, h, m, n, d, e;
	enum mask_kind mask;
	int div;
	float scale;
	int nans;	/* NaNs in Q and the mask: bits against the unfused layers alone */
};

static float nan_bits(__u32 u)
{
	float f;

	memcpy(&f, &u, 4);
	return f;
}

/* A view [B, H, rows, cols] of a buffer laid out [B, rows, H, cols]. */
static struct vnpu_cmd_tensor head_view(__u64 b, __u64 h, __u64 rows, __u64 cols)
{
	__u64 dims[4] = { b, rows, h, cols };
	struct vnpu_cmd_tensor t = et_dense(VNPU_DTYPE_F32, 4, dims);
	__s64 s1 = t.strides[1];

	t.dims[1] = h;
	t.dims[2] = rows;
	t.strides[1] = t.strides[2];
	t.strides[2] = s1;
	return t;
}

/* KT [B, H, D, N] of K laid out [B, N, H, D]. */
static struct vnpu_cmd_tensor kt_view(__u64 b, __u64 h, __u64 n, __u64 d)
{
	struct vnpu_cmd_tensor t = head_view(b, h, n, d);
	__s64 s = t.strides[2];

	t.dims[2] = d;
	t.dims[3] = n;
	t.strides[2] = t.strides[3];
	t.strides[3] = s;
	return t;
}

static struct vnpu_cmd_tensor mask_tensor(const struct attn_case *c)
{
	__u64 keys[4] = { c->b, 1, 1, c->n }, full[4] = { c->b, c->h, c->m, c->n };
	__u64 rows[2] = { c->m, 1 }, nm[2] = { c->n, c->m };
	struct vnpu_cmd_tensor t;

	switch (c->mask) {
	case MASK_KEYS:
		return et_dense(VNPU_DTYPE_F32, 4, keys);
	case MASK_FULL:
		return et_dense(VNPU_DTYPE_F32, 4, full);
	case MASK_ROWS:
		return et_dense(VNPU_DTYPE_F32, 2, rows);
	default:
		/* [M, N] read from a buffer laid out [N, M]. */
		t = et_dense(VNPU_DTYPE_F32, 2, nm);
		t.dims[0] = c->m;
		t.dims[1] = c->n;
		t.strides[0] = 1;
		t.strides[1] = (__s64)c->m;
		return t;
	}
}

static size_t span(const struct vnpu_cmd_tensor *t)
{
	size_t s = 1;

	for (__u32 d = 0; d < t->rank; d++)
		s += (t->dims[d] - 1) * (size_t)t->strides[d];
	return s;
}

static double at4(const float *p, const struct vnpu_cmd_tensor *t, __u64 i0, __u64 i1,
		  __u64 i2, __u64 i3)
{
	__u64 c[4] = { i0, i1, i2, i3 };
	__s64 off = 0;
	int lead = 4 - (int)t->rank;

	for (int d = lead; d < 4; d++)
		if (t->dims[d - lead] != 1)
			off += (__s64)c[d] * t->strides[d - lead];
	return p[off];
}

/* softmax(Q KT op scale + mask) V in double. */
static void reference(const struct attn_case *c, const struct vnpu_cmd_tensor *t,
		      float *const *p, double *want)
{
	double *s = malloc(c->n * sizeof(double));

	for (__u64 b = 0; b < c->b; b++)
		for (__u64 h = 0; h < c->h; h++)
			for (__u64 i = 0; i < c->m; i++) {
				double mx = -INFINITY, sum = 0;

				for (__u64 j = 0; j < c->n; j++) {
					double v = 0;

					for (__u64 k = 0; k < c->d; k++)
						v += at4(p[0], &t[0], b, h, i, k) *
						     at4(p[1], &t[1], b, h, k, j);
					v = c->div ? v / c->scale : v * c->scale;
					if (c->mask != MASK_NONE)
						v += at4(p[3], &t[3], b, h, i, j);
					s[j] = v;
					mx = v > mx ? v : mx;
				}
				for (__u64 j = 0; j < c->n; j++) {
					s[j] = exp(s[j] - mx);
					sum += s[j];
				}
				for (__u64 e = 0; e < c->e; e++) {
					double v = 0;

					for (__u64 j = 0; j < c->n; j++)
						v += s[j] / sum * at4(p[2], &t[2], b, h, j, e);
					want[((b * c->h + h) * c->m + i) * c->e + e] = v;
				}
			}
	free(s);
}

/* The unfused layers on the same views, with @features, into @y. */
static int unfused(const struct attn_case *c, const struct vnpu_cmd_tensor *t, float *const *p,
		   const struct vnpu_cmd_tensor *ty, float *y, __u32 features)
{
	__u64 sd[4] = { c->b, c->h, c->m, c->n };
	struct vnpu_cmd_tensor ts = et_dense(VNPU_DTYPE_F32, 4, sd);
	struct vnpu_cmd_tensor tc = et_dense(VNPU_DTYPE_F32, 0, sd);
	struct vnpu_layer_gemm g = { .alpha = et_f32_bits(1.0f), .beta = et_f32_bits(1.0f) };
	struct vnpu_layer_binary bs = { .func = c->div ? VNPU_BIN_DIV : VNPU_BIN_MUL };
	struct vnpu_layer_binary ba = { .func = VNPU_BIN_ADD };
	struct vnpu_layer_softmax sm = { .mode = VNPU_SOFTMAX, .axis = 3 };
	size_t ns = c->b * c->h * c->m * c->n;
	float *s0 = malloc(ns * 4), *s1 = malloc(ns * 4), scale = c->scale;
	struct vnpu_cmd_tensor t3[3];
	void *d3[3];
	int rc;

	t3[0] = t[0], t3[1] = t[1], t3[2] = ts;
	d3[0] = p[0], d3[1] = p[1], d3[2] = s0;
	rc = et_run(VNPU_LAYER_GEMM, t3, d3, 3, &g, sizeof(g), features, 1);
	t3[0] = ts, t3[1] = tc, t3[2] = ts;
	d3[0] = s0, d3[1] = &scale, d3[2] = s1;
	if (!rc)
		rc = et_run(VNPU_LAYER_BINARY, t3, d3, 3, &bs, sizeof(bs), features, 1);
	if (!rc && c->mask != MASK_NONE) {
		t3[0] = ts, t3[1] = t[3], t3[2] = ts;
		d3[0] = s1, d3[1] = p[3], d3[2] = s0;
		rc = et_run(VNPU_LAYER_BINARY, t3, d3, 3, &ba, sizeof(ba), features, 1);
		memcpy(s1, s0, ns * 4);
	}
	t3[0] = ts, t3[1] = ts;
	d3[0] = s1, d3[1] = s0;
	if (!rc)
		rc = et_run(VNPU_LAYER_SOFTMAX, t3, d3, 2, &sm, sizeof(sm), features, 1);
	t3[0] = ts, t3[1] = t[2], t3[2] = *ty;
	d3[0] = s0, d3[1] = p[2], d3[2] = y;
	if (!rc)
		rc = et_run(VNPU_LAYER_GEMM, t3, d3, 3, &g, sizeof(g), features, 1);
	free(s0);
	free(s1);
	return rc;
}

static void test_case(struct __test_metadata *_metadata, const struct attn_case *c)
{
	struct vnpu_cmd_tensor t[5];
	struct vnpu_layer_attention a = {
		.flags = (c->mask != MASK_NONE ? VNPU_ATTN_F_MASK : 0) |
			 (c->div ? VNPU_ATTN_F_DIV : 0),
		.scale = et_f32_bits(c->scale),
	};
	__u32 paths[3] = { 0, VNPU_ENG_F_AVX2_FMA, et_host_features }, n = 0, ny;
	float *p[5];
	double *want;
	size_t count = c->b * c->h * c->m * c->e, sy;

	t[n++] = head_view(c->b, c->h, c->m, c->d);
	t[n++] = kt_view(c->b, c->h, c->n, c->d);
	t[n++] = head_view(c->b, c->h, c->n, c->e);
	if (c->mask != MASK_NONE)
		t[n++] = mask_tensor(c);
	t[n++] = head_view(c->b, c->h, c->m, c->e);
	ny = n - 1;
	for (__u32 i = 0; i < n; i++) {
		p[i] = malloc(span(&t[i]) * 4);
		et_fill_f32(p[i], span(&t[i]));
	}
	/* Masks as models make them: 0 or very negative. */
	for (size_t i = 0; c->mask != MASK_NONE && i < span(&t[3]); i++)
		p[3][i] = p[3][i] > 0.3f ? -10000.0f : p[3][i] > 0 ? 0 : p[3][i];
	/*
	 * NaNs of three payloads: in the first column of head 0's S (K's first
	 * key), in all of a row of it (a query), in a later column of a row of
	 * head 1 (the mask), which the row's maximum skips.
	 */
	if (c->nans) {
		p[1][0] = nan_bits(0x7fc00001u);
		p[0][(size_t)3 * t[0].strides[2] + 1] = nan_bits(0xffc00002u);
		p[3][c->m * c->n + 5] = nan_bits(0x7fc00003u);
	}
	want = malloc(count * sizeof(double));
	reference(c, t, p, want);
	sy = span(&t[ny]);
	for (int k = 0; k < 3; k++) {
		__u32 f = paths[k] & (k ? et_host_features : 0);
		float *ref = malloc(sy * 4), *got = malloc(sy * 4);
		static const __u32 parts[3] = { 1, 3, 64 };
		int rc;

		if (k && !(et_host_features & VNPU_ENG_F_AVX2_FMA))
			f = 0;
		memset(ref, 0, sy * 4);
		rc = unfused(c, t, p, &t[ny], ref, f);
		EXPECT_EQ(0, rc)
			TH_LOG("unfused runs");
		for (int s = 0; s < 3; s++) {
			size_t bad = 0;

			memset(got, 0, sy * 4);
			p[ny] = got;
			rc = et_run(VNPU_LAYER_ATTENTION, t, (void *const *)p, n, &a, sizeof(a), f,
				    parts[s]);
			EXPECT_EQ(0, rc)
				TH_LOG("runs on path %#x in %u parts", f, parts[s]);
			for (size_t i = 0; !rc && i < sy; i++)
				if (memcmp(&got[i], &ref[i], 4) && bad++ < 3)
					TH_LOG("m %llu n %llu path %#x parts %u [%zu]: %.9g, unfused %.9g",
					       c->m, c->n, f, parts[s], i, got[i], ref[i]);
			EXPECT_EQ(0, bad);
		}
		/* Against the double reference through Y's view. */
		for (size_t i = 0; !c->nans && i < count; i++) {
			size_t e = i % c->e, r = i / c->e, m = r % c->m, h = r / c->m % c->h;
			size_t b = r / c->m / c->h;
			double g = at4(got, &t[ny], b, h, m, e);

			EXPECT_LE(fabs(g - want[i]), 1e-5 + 1e-4 * fabs(want[i]))
				TH_LOG("[%zu]: %.9g want %.9g", i, g, want[i]);
			if (fabs(g - want[i]) > 1e-5 + 1e-4 * fabs(want[i]))
				break;
		}
		free(ref);
		free(got);
	}
	for (__u32 i = 0; i < ny; i++)
		free(p[i]);
	free(want);
}

static void test_values(struct __test_metadata *_metadata)
{
	static const struct attn_case cases[] = {
		{ 1, 12, 128, 128, 64, 64, MASK_KEYS, 1, 8.0f },	/* BERT-base */
		{ 2, 3, 37, 50, 16, 24, MASK_FULL, 0, 0.3f },
		{ 1, 2, 5, 600, 8, 3, MASK_ROWS, 1, 3.0f },	/* columns past a block */
		{ 2, 1, 19, 33, 7, 40, MASK_COLS_STRIDED, 0, 0.125f },
		{ 1, 4, 1, 9, 5, 1, MASK_NONE, 0, 1.0f },	/* one row, one column */
		{ 1, 2, 200, 70, 20, 20, MASK_NONE, 1, 7.0f },
		{ 1, 2, 9, 45, 8, 8, MASK_FULL, 0, 0.5f, 1 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		test_case(_metadata, &cases[i]);
}

static void test_bad_layers(struct __test_metadata *_metadata)
{
	struct vnpu_cmd_tensor t[5], g[5];
	struct vnpu_layer_attention a = { .flags = VNPU_ATTN_F_MASK, .scale = et_f32_bits(8.0f) };
	__u64 keys[4] = { 2, 1, 1, 9 };
	struct vnpu_layer_attention b;

	g[0] = head_view(2, 3, 5, 4);
	g[1] = kt_view(2, 3, 9, 4);
	g[2] = head_view(2, 3, 9, 6);
	g[3] = et_dense(VNPU_DTYPE_F32, 4, keys);
	g[4] = head_view(2, 3, 5, 6);
#define BAD(why, ...) do { memcpy(t, g, sizeof(t)); b = a; __VA_ARGS__; \
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_ATTENTION, t, 5, &b, sizeof(b))) \
		TH_LOG("%s", why); } while (0)
	EXPECT_TRUE(!vnpu_eng_layer_check(VNPU_LAYER_ATTENTION, g, 5, &a, sizeof(a)))
		TH_LOG("good layer");
	b = a;
	b.flags = 0;
	memcpy(t, g, sizeof(t));
	t[3] = g[4];
	EXPECT_TRUE(!vnpu_eng_layer_check(VNPU_LAYER_ATTENTION, t, 4, &b, sizeof(b)))
		TH_LOG("good layer without a mask");
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_ATTENTION, t, 5, &b, sizeof(b)))
		TH_LOG("a mask tensor without its flag");
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_ATTENTION, g, 4, &a, sizeof(a)))
		TH_LOG("the flag without a mask tensor");
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_ATTENTION, g, 5, &a, 4))
		TH_LOG("short attributes");
	BAD("unknown flag", b.flags |= 4);
	BAD("zero scale", b.scale = 0);
	BAD("negative zero scale", b.scale = 0x80000000u);
	BAD("infinite scale", b.scale = 0x7f800000u);
	BAD("NaN scale", b.scale = 0x7fc00000u);
	BAD("f16 Q", t[0].dtype = VNPU_DTYPE_F16);
	BAD("i32 mask", t[3].dtype = VNPU_DTYPE_I32);
	BAD("rank 3 Q", t[0].rank = 3);
	BAD("rank 5 Y", t[4].rank = 5; t[4].dims[4] = 1; t[4].strides[4] = 1);
	BAD("Q of other heads", t[0].dims[1] = 4);
	BAD("K of other heads", t[1].dims[1] = 1);
	BAD("V of other batches", t[2].dims[0] = 1);
	BAD("Q of other rows than Y", t[0].dims[2] = 6);
	BAD("KT of other depth than Q", t[1].dims[2] = 5);
	BAD("V of other keys than KT", t[2].dims[2] = 8);
	BAD("Y of other columns than V", t[4].dims[3] = 5);
	BAD("Y's columns strided", t[4].strides[3] = 2);
	BAD("Y aliasing itself", t[4].strides[2] = 0);
	BAD("mask of other keys", t[3].dims[3] = 8);
	BAD("mask of other batches", t[3].dims[0] = 3);
	BAD("mask of rank 5", t[3].rank = 5; t[3].dims[4] = 9; t[3].dims[3] = 1);
	BAD("depth above the limit", t[0].dims[3] = t[1].dims[2] = (1ull << 19) + 1);
#undef BAD
}

TEST(attn)
{
	test_values(_metadata);
	test_bad_layers(_metadata);
}

KSFT_MAIN

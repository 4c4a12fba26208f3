// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * TFIDF against a naive reference (every mode, skips, both kernel builds,
 * whole and split by rows), the faults of bad tables at run time and the
 * checks that refuse bad layers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_test.h"
#include "ksft_main.h"

static int run(const struct vnpu_cmd_tensor *t, void *const *data, const struct vnpu_layer_tfidf *a,
	       __u32 features, __u32 parts)
{
	struct vnpu_eng_ctx ctx = { .features = features };
	__u32 max, p;
	int rc = vnpu_eng_layer_check(VNPU_LAYER_TFIDF, t, 6, a, sizeof(*a));

	if (rc)
		return rc;
	max = vnpu_eng_layer_max_parts(VNPU_LAYER_TFIDF, t, 6, a, features);
	parts = parts > max ? max : parts;
	for (p = 0; p < parts; p++) {
		rc = vnpu_eng_layer_run(VNPU_LAYER_TFIDF, t, data, 6, a, p, parts, &ctx);
		if (rc)
			return rc;
	}
	return 0;
}

enum { B = 3, L = 9, W = 6, K = 6 };

/* Unigrams 2, 5, 7; bigrams (5, 7), (7, 7), (2, 9). */
static const __s64 pool[] = { 2, 5, 7, 5, 7, 7, 7, 2, 9 };
static const __s64 counts[] = { 0, 3 };
static const __s64 gram_len[K] = { 1, 1, 1, 2, 2, 2 };
static const __s64 gram[K][2] = { { 2 }, { 5 }, { 7 }, { 5, 7 }, { 7, 7 }, { 2, 9 } };
static const __s64 indexes[K] = { 5, 0, 1, 2, 3, 4 };
static const float weights[K] = { 0.5f, 2, 3, 0.25f, 1.5f, 4 };

static void reference(const __s32 *x, const struct vnpu_layer_tfidf *a, float *y)
{
	for (int r = 0; r < B; r++) {
		float cnt[W] = { 0 };

		for (int g = 0; g < K; g++) {
			__u32 n = (__u32)gram_len[g];
			int hits = 0;

			if (n < a->min_gram || n > a->max_gram)
				continue;
			for (__u32 skip = 0; skip <= (n > 1 ? a->max_skip : 0); skip++)
				for (int i = 0; i < L; i++) {
					int ok = 1;

					for (__u32 k = 0; k < n && ok; k++) {
						int pos = i + (int)(k * (skip + 1));

						ok = pos < L && x[r * L + pos] == gram[g][k];
					}
					hits += ok;
				}
			cnt[indexes[g]] = (float)hits;
		}
		for (int g = 0; g < K; g++) {
			float *v = &cnt[indexes[g]];

			if (a->mode == VNPU_TFIDF_IDF)
				*v = *v > 0 ? weights[g] : 0;
			else if (a->mode == VNPU_TFIDF_TFIDF)
				*v *= weights[g];
		}
		memcpy(&y[r * W], cnt, sizeof(cnt));
	}
}

static void test_modes(struct __test_metadata *_metadata)
{
	static const __u64 xd[2] = { B, L }, pd[1] = { 9 }, cd[1] = { 2 }, kd[1] = { K };
	static const __u64 yd[2] = { B, W };
	__s32 x[B * L];
	__s64 pl[9], ct[2], ix[K];
	float wt[K], y[B * W], ref[B * W];
	struct vnpu_cmd_tensor t[6] = { et_dense(VNPU_DTYPE_I32, 2, xd),
					et_dense(VNPU_DTYPE_I64, 1, pd),
					et_dense(VNPU_DTYPE_I64, 1, cd),
					et_dense(VNPU_DTYPE_I64, 1, kd),
					et_dense(VNPU_DTYPE_F32, 1, kd),
					et_dense(VNPU_DTYPE_F32, 2, yd) };
	void *data[6] = { x, pl, ct, ix, wt, y };

	memcpy(pl, pool, sizeof(pl));
	memcpy(ct, counts, sizeof(ct));
	memcpy(ix, indexes, sizeof(ix));
	memcpy(wt, weights, sizeof(wt));
	for (int i = 0; i < B * L; i++)
		x[i] = (__s32)((i * 7 + i / 5) % 5) * 2 + 1 - (i % 3 == 0);	/* tokens 0..9 */
	for (__u32 mode = 0; mode <= VNPU_TFIDF_TFIDF; mode++)
		for (__u32 lo = 1; lo <= 2; lo++)
			for (__u32 skip = 0; skip <= 3; skip += 3)
				for (__u32 cfg = 0; cfg < 4; cfg++) {
					struct vnpu_layer_tfidf a = { .min_gram = lo, .max_gram = 2,
								      .max_skip = skip, .mode = mode };

					reference(x, &a, ref);
					memset(y, 0xff, sizeof(y));
					EXPECT_TRUE(!run(t, data, &a,
							 cfg & 1 ? vnpu_eng_host_features() : 0, cfg & 2 ? 3 : 1))
						TH_LOG("tfidf runs");
					EXPECT_TRUE(!memcmp(y, ref, sizeof(y)))
						TH_LOG("mode %u min_gram %u skip %u config %u",
						       mode, lo, skip, cfg);
				}

	/* Tables that do not hold together fault the run. */
	{
		struct vnpu_layer_tfidf a = { .min_gram = 1, .max_gram = 2 };

		ix[2] = W;
		EXPECT_EQ(VNPU_ENG_EINVAL, run(t, data, &a, 0, 1))
			TH_LOG("index outside Y");
		ix[2] = indexes[2];
		ct[1] = 4;	/* bigrams of 5 entries */
		EXPECT_EQ(VNPU_ENG_EINVAL, run(t, data, &a, 0, 1))
			TH_LOG("counts not of whole n-grams");
		ct[1] = 3;
		t[3].dims[0] = t[4].dims[0] = K - 1;
		EXPECT_EQ(VNPU_ENG_EINVAL, run(t, data, &a, 0, 1))
			TH_LOG("an index missing");
		t[3].dims[0] = t[4].dims[0] = K;
		EXPECT_TRUE(!run(t, data, &a, 0, 1))
			TH_LOG("good again");
	}
}

static void test_bad_layers(struct __test_metadata *_metadata)
{
	static const __u64 xd[2] = { B, L }, pd[1] = { 9 }, cd[1] = { 2 }, kd[1] = { K };
	static const __u64 yd[2] = { B, W };
	struct vnpu_cmd_tensor t[6] = { et_dense(VNPU_DTYPE_I64, 2, xd),
					et_dense(VNPU_DTYPE_I64, 1, pd),
					et_dense(VNPU_DTYPE_I64, 1, cd),
					et_dense(VNPU_DTYPE_I64, 1, kd),
					et_dense(VNPU_DTYPE_F32, 1, kd),
					et_dense(VNPU_DTYPE_F32, 2, yd) };
	struct vnpu_layer_tfidf a = { .min_gram = 1, .max_gram = 2, .max_skip = 1 };
	const __u32 sz = sizeof(a);

	EXPECT_TRUE(!vnpu_eng_layer_check(VNPU_LAYER_TFIDF, t, 6, &a, sz))
		TH_LOG("good layer");
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_TFIDF, t, 5, &a, sz))
		TH_LOG("five tensors");
	a.min_gram = 0;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_TFIDF, t, 6, &a, sz))
		TH_LOG("min_gram 0");
	a.min_gram = 1;
	a.max_gram = 3;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_TFIDF, t, 6, &a, sz))
		TH_LOG("max_gram above counts");
	a.max_gram = 2;
	a.mode = 3;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_TFIDF, t, 6, &a, sz))
		TH_LOG("bad mode");
	a.mode = 0;
	t[4].dims[0] = K - 1;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_TFIDF, t, 6, &a, sz))
		TH_LOG("weights of another length");
	t[4].dims[0] = K;
	t[0].dtype = VNPU_DTYPE_F32;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_TFIDF, t, 6, &a, sz))
		TH_LOG("float tokens");
	t[0].dtype = VNPU_DTYPE_I64;
	t[5].dims[0] = B + 1;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_TFIDF, t, 6, &a, sz))
		TH_LOG("Y of other rows");
	t[5].dims[0] = B;
	t[1].dtype = VNPU_DTYPE_I32;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_TFIDF, t, 6, &a, sz))
		TH_LOG("i32 pool");
}

TEST(tfidf)
{
	test_modes(_metadata);
	test_bad_layers(_metadata);
}

KSFT_MAIN

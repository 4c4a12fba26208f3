// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The engine's pause points (struct vnpu_eng_ctx pause): ops whose unit is
 * one long row pause every ENG_PAUSE_READS element reads inside it, GEMM
 * and CONV between their depth slices; a pause changes no bit.
 */
#include "engine_test.h"
#include "ksft_main.h"

/* ENG_PAUSE_READS of vnpu_eng_kern.h. */
#define PAUSE_READS	(1u << 14)
/* The depth of one GEMM slice, ENG_KC of vnpu_eng_priv.h. */
#define SLICE_K		384

static void count_pause(void *arg)
{
	(*(unsigned long *)arg)++;
}

/*
 * Runs a layer as one part with @features, counting its pauses when
 * @count is given (pause NULL otherwise). Return: the run's result.
 */
static int run_one(__u32 op, const struct vnpu_cmd_tensor *t, void **data,
		   __u32 n, const void *attrs, __u32 size, __u32 features,
		   unsigned long *count)
{
	struct vnpu_eng_ctx ctx = { .features = features };
	__u64 scratch;
	int rc;

	rc = vnpu_eng_layer_check(op, t, n, attrs, size);
	if (rc)
		return rc;
	scratch = vnpu_eng_layer_scratch(op, t, n, attrs, 1, features);
	ctx.scratch = scratch ? malloc(scratch) : NULL;
	ctx.scratch_size = scratch;
	if (scratch && !ctx.scratch)
		return -12;
	if (count) {
		*count = 0;
		ctx.pause = count_pause;
		ctx.pause_arg = count;
	}
	rc = vnpu_eng_layer_run(op, t, (void *const *)data, n, attrs, 0, 1,
				&ctx);
	free(ctx.scratch);
	return rc;
}

/*
 * Runs @op on both paths with and without pauses: the outputs (tensor
 * n - 1, and tensor @extra when not 0) must have the same bits, the pauses
 * must be at least @min_pauses (at most @max_pauses when not ~0). The
 * output of the host path's paused run is left in data[n - 1].
 */
static void check_op(struct __test_metadata *_metadata, const char *name, __u32 op,
		     const struct vnpu_cmd_tensor *t,
		     void **data, __u32 n, const void *attrs, __u32 size,
		     unsigned long min_pauses, unsigned long max_pauses,
		     __u32 extra)
{
	__u32 paths[2] = { 0, et_host_features }, o = n - 1, k;
	size_t bytes = et_bytes(&t[o]);
	size_t xbytes = extra ? et_bytes(&t[extra]) : 0;
	void *first = malloc(bytes), *xfirst = malloc(xbytes + 1);
	void *in0 = NULL;
	unsigned long count;
	int i;

	if (!first || !xfirst) {
		EXPECT_TRUE(false)
			TH_LOG("%s: out of memory", name);
		goto out;
	}
	/* In place (ScatterElements' Y may be X): restore X between runs. */
	for (k = 0; k + 1 < n; k++)
		if (data[k] == data[o]) {
			in0 = malloc(bytes);
			if (!in0) {
				EXPECT_TRUE(false)
					TH_LOG("%s: out of memory", name);
				goto out;
			}
			memcpy(in0, data[o], bytes);
		}
	for (i = 0; i < 2; i++) {
		if (in0)
			memcpy(data[o], in0, bytes);
		if (run_one(op, t, data, n, attrs, size, paths[i], NULL)) {
			EXPECT_TRUE(false)
				TH_LOG("%s: run failed", name);
			continue;
		}
		memcpy(first, data[o], bytes);
		if (extra)
			memcpy(xfirst, data[extra], xbytes);
		memset(data[o], 0x5a, bytes);
		if (in0)
			memcpy(data[o], in0, bytes);
		if (run_one(op, t, data, n, attrs, size, paths[i], &count)) {
			EXPECT_TRUE(false)
				TH_LOG("%s: paused run failed", name);
			continue;
		}
		EXPECT_TRUE(!memcmp(first, data[o], bytes))
			TH_LOG("%s (features %#x): pauses changed the output", name, paths[i]);
		EXPECT_TRUE(!extra || !memcmp(xfirst, data[extra], xbytes))
			TH_LOG("%s (features %#x): pauses changed output %u", name, paths[i],
			       extra);
		EXPECT_GE(count, min_pauses)
			TH_LOG("%s (features %#x): %lu pauses, expected >= %lu", name, paths[i],
			       count, min_pauses);
		EXPECT_TRUE(max_pauses == ~0ul || count <= max_pauses)
			TH_LOG("%s (features %#x): %lu pauses, expected <= %lu", name, paths[i],
			       count, max_pauses);
	}
out:
	free(first);
	free(xfirst);
	free(in0);
}

static unsigned long at_least(__u64 reads)
{
	return reads / PAUSE_READS ? reads / PAUSE_READS - 1 : 0;
}

static void expect_close(struct __test_metadata *_metadata, const char *name, const float *y,
			 const double *ref,
			 size_t n, double tol)
{
	size_t i, bad = 0;

	for (i = 0; i < n; i++)
		if (!(fabs(y[i] - ref[i]) <= tol * (1 + fabs(ref[i]))))
			bad++;
	EXPECT_TRUE(!bad)
		TH_LOG("%s: %zu of %zu outputs off the reference", name, bad, n);
}

#define ROW	(1u << 18)

static void test_softmax_rows(struct __test_metadata *_metadata, float *x, float *y, double *ref)
{
	__u64 d[1] = { ROW };
	struct vnpu_cmd_tensor t[2] = { et_dense(VNPU_DTYPE_F32, 1, d),
					et_dense(VNPU_DTYPE_F32, 1, d) };
	void *data[2] = { x, y };
	struct vnpu_layer_softmax sm = { .mode = VNPU_SOFTMAX };
	double mx = x[0], sum = 0;
	size_t i, arg = 0;

	for (i = 0; i < ROW; i++)
		if (x[i] > mx) {
			mx = x[i];
			arg = i;
		}
	for (i = 0; i < ROW; i++)
		sum += exp(x[i] - mx);
	/* Three passes over the row. */
	check_op(_metadata, "softmax 2^18", VNPU_LAYER_SOFTMAX, t, data, 2, &sm,
		 sizeof(sm), at_least(3ull * ROW), ~0ul, 0);
	for (i = 0; i < ROW; i++)
		ref[i] = exp(x[i] - mx) / sum;
	expect_close(_metadata, "softmax 2^18", y, ref, ROW, 1e-5);
	sm.mode = VNPU_LOG_SOFTMAX;
	check_op(_metadata, "logsoftmax 2^18", VNPU_LAYER_SOFTMAX, t, data, 2, &sm,
		 sizeof(sm), at_least(3ull * ROW), ~0ul, 0);
	for (i = 0; i < ROW; i++)
		ref[i] = x[i] - mx - log(sum);
	expect_close(_metadata, "logsoftmax 2^18", y, ref, ROW, 1e-5);
	sm.mode = VNPU_HARDMAX;
	check_op(_metadata, "hardmax 2^18", VNPU_LAYER_SOFTMAX, t, data, 2, &sm,
		 sizeof(sm), at_least(2ull * ROW), ~0ul, 0);
	for (i = 0; i < ROW; i++)
		ref[i] = i == arg;
	expect_close(_metadata, "hardmax 2^18", y, ref, ROW, 0);
}

static void test_norms(struct __test_metadata *_metadata, float *x, float *y, double *ref)
{
	__u64 d2[2] = { 1, ROW }, d1[1] = { ROW }, d4[4] = { 1, 1, 512, 512 };
	__u64 one[1] = { 1 };
	struct vnpu_cmd_tensor t[4];
	void *data[4];
	float g[ROW / 64], s1 = 1.5f, b1 = 0.25f;
	struct vnpu_layer_norm at = { .mode = VNPU_NORM_LAYER, .axis = 1,
				      .epsilon = et_f32_bits(1e-5f) };
	double mean = 0, var = 0, norm = 0;
	size_t i;

	for (i = 0; i < ROW; i++)
		mean += x[i];
	mean /= ROW;
	for (i = 0; i < ROW; i++)
		var += (x[i] - mean) * (x[i] - mean);
	var /= ROW;
	for (i = 0; i < ROW; i++)
		norm += (double)x[i] * x[i];
	norm = sqrt(norm);

	/* LayerNorm with a scale only, broadcast from [2^12]: three passes. */
	t[0] = et_dense(VNPU_DTYPE_F32, 2, d2);
	d1[0] = ROW;
	t[1] = et_dense(VNPU_DTYPE_F32, 1, d1);
	t[2] = et_dense(VNPU_DTYPE_F32, 2, d2);
	et_fill_f32(g, ROW / 64);
	{
		float *gs = malloc(ROW * sizeof(float));

		if (!gs) {
			EXPECT_TRUE(false)
				TH_LOG("out of memory");
			return;
		}
		for (i = 0; i < ROW; i++)
			gs[i] = g[i % (ROW / 64)];
		data[0] = x;
		data[1] = gs;
		data[2] = y;
		check_op(_metadata, "layernorm 2^18", VNPU_LAYER_NORM, t, data, 3, &at,
			 sizeof(at), at_least(3ull * ROW), ~0ul, 0);
		for (i = 0; i < ROW; i++)
			ref[i] = (x[i] - mean) / sqrt(var + 1e-5) * gs[i];
		expect_close(_metadata, "layernorm 2^18", y, ref, ROW, 1e-4);
		free(gs);
	}

	/* InstanceNorm of one 512x512 plane. */
	at.mode = VNPU_NORM_INSTANCE;
	at.axis = 0;
	t[0] = et_dense(VNPU_DTYPE_F32, 4, d4);
	t[1] = et_dense(VNPU_DTYPE_F32, 1, one);
	t[2] = et_dense(VNPU_DTYPE_F32, 1, one);
	t[3] = et_dense(VNPU_DTYPE_F32, 4, d4);
	data[0] = x;
	data[1] = &s1;
	data[2] = &b1;
	data[3] = y;
	check_op(_metadata, "instancenorm 512x512", VNPU_LAYER_NORM, t, data, 4, &at,
		 sizeof(at), at_least(3ull * ROW), ~0ul, 0);
	for (i = 0; i < ROW; i++)
		ref[i] = (x[i] - mean) / sqrt(var + 1e-5) * s1 + b1;
	expect_close(_metadata, "instancenorm 512x512", y, ref, ROW, 1e-4);

	/* LpNormalization p 2 over one lane: two passes. */
	memset(&at, 0, sizeof(at));
	at.mode = VNPU_NORM_LP;
	at.p = 2;
	t[0] = et_dense(VNPU_DTYPE_F32, 1, d1);
	t[1] = et_dense(VNPU_DTYPE_F32, 1, d1);
	data[0] = x;
	data[1] = y;
	check_op(_metadata, "lpnorm p2 2^18", VNPU_LAYER_NORM, t, data, 2, &at,
		 sizeof(at), at_least(2ull * ROW), ~0ul, 0);
	for (i = 0; i < ROW; i++)
		ref[i] = x[i] / norm;
	expect_close(_metadata, "lpnorm p2 2^18", y, ref, ROW, 1e-5);
}

static void test_reductions(struct __test_metadata *_metadata, float *x)
{
	__u64 dx[2] = { 1, ROW }, dy[2] = { 1, 1 }, d1[1] = { ROW };
	__u64 done[1] = { 1 };
	struct vnpu_cmd_tensor t[2] = { et_dense(VNPU_DTYPE_F32, 2, dx),
					et_dense(VNPU_DTYPE_F32, 2, dy) };
	struct vnpu_layer_reduce r = { .func = VNPU_REDUCE_SUM, .axes = 2 };
	struct vnpu_layer_argreduce ar = { .axis = 0 };
	float y = 0;
	__s64 arg = -1;
	void *data[2] = { x, &y };
	double sum = 0, lse = 0, mx = x[0], ref;
	size_t i, best = 0;

	for (i = 0; i < ROW; i++) {
		sum += x[i];
		if (x[i] > mx) {
			mx = x[i];
			best = i;
		}
	}
	for (i = 0; i < ROW; i++)
		lse += exp(x[i] - mx);
	check_op(_metadata, "reducesum 2^18", VNPU_LAYER_REDUCE, t, data, 2, &r,
		 sizeof(r), at_least(ROW), ~0ul, 0);
	EXPECT_LE(fabs(y - sum), 1e-4 * (1 + fabs(sum)))
		TH_LOG("reducesum 2^18: %g, expected %g", y, sum);
	r.func = VNPU_REDUCE_LOG_SUM_EXP;
	check_op(_metadata, "reducelogsumexp 2^18", VNPU_LAYER_REDUCE, t, data, 2, &r,
		 sizeof(r), at_least(2ull * ROW), ~0ul, 0);
	ref = mx + log(lse);
	EXPECT_LE(fabs(y - ref), 1e-5 * (1 + fabs(ref)))
		TH_LOG("reducelogsumexp 2^18: %g, expected %g", y, ref);

	/* Over the outer axis of [2^17, 2]: runs of one element. */
	{
		__u64 dx2[2] = { ROW / 2, 2 }, dy2[2] = { 1, 2 };
		float y2[2];
		double s2[2] = { 0, 0 };

		t[0] = et_dense(VNPU_DTYPE_F32, 2, dx2);
		t[1] = et_dense(VNPU_DTYPE_F32, 2, dy2);
		r.func = VNPU_REDUCE_SUM;
		r.axes = 1;
		data[1] = y2;
		check_op(_metadata, "reducesum axis 0 of [2^17, 2]", VNPU_LAYER_REDUCE, t,
			 data, 2, &r, sizeof(r), at_least(ROW), ~0ul, 0);
		for (i = 0; i < ROW; i++)
			s2[i % 2] += x[i];
		for (i = 0; i < 2; i++) {
			EXPECT_LE(fabs(y2[i] - s2[i]), 1e-4 * (1 + fabs(s2[i])))
				TH_LOG("reducesum axis 0: %g, expected %g", y2[i], s2[i]);
		}
	}

	t[0] = et_dense(VNPU_DTYPE_F32, 1, d1);
	t[1] = et_dense(VNPU_DTYPE_I64, 1, done);
	data[1] = &arg;
	check_op(_metadata, "argmax 2^18", VNPU_LAYER_ARGREDUCE, t, data, 2, &ar,
		 sizeof(ar), at_least(ROW), ~0ul, 0);
	EXPECT_EQ((__s64)best, arg)
		TH_LOG("argmax 2^18: %lld, expected %zu", (long long)arg, best);
}

/* ScatterElements add: as many updates as elements, all to one. */
static void test_scatter(struct __test_metadata *_metadata, float *x, float *y)
{
	__u64 d[1] = { ROW };
	struct vnpu_cmd_tensor t[4];
	struct vnpu_layer_scatter at = { .reduction = VNPU_SCATTER_ADD };
	__s64 *idx = malloc(ROW * sizeof(*idx));
	float *u = malloc(ROW * sizeof(*u)), acc;
	void *data[4] = { x, idx, u, y };
	size_t i;

	if (!idx || !u) {
		EXPECT_TRUE(false)
			TH_LOG("out of memory");
		goto out;
	}
	for (i = 0; i < 4; i++)
		t[i] = et_dense(i == 1 ? VNPU_DTYPE_I64 : VNPU_DTYPE_F32, 1, d);
	for (i = 0; i < ROW; i++) {
		idx[i] = (__s64)(i * 7 % 5);
		u[i] = (float)(i % 13) * 0.125f;
	}
	/* Copies Y, then reads every update (an index, the update, Y twice). */
	check_op(_metadata, "scatterelements add 2^18", VNPU_LAYER_SCATTER_ELEMENTS, t,
		 data, 4, &at, sizeof(at), at_least(5ull * ROW), ~0ul, 0);
	for (i = 0; i < 5; i++) {
		size_t j;

		acc = x[i];
		for (j = 0; j < ROW; j++)
			if ((size_t)idx[j] == i)
				acc += u[j];
		EXPECT_EQ(et_f32_bits(y[i]), et_f32_bits(acc))
			TH_LOG("scatterelements: y[%zu] %g, expected %g", i, y[i], acc);
	}
	EXPECT_TRUE(!memcmp(y + 5, x + 5, (ROW - 5) * sizeof(float)))
		TH_LOG("scatterelements: elements without updates changed");

	/* ScatterND add: the same updates at indices [2^18, 1]. */
	{
		__u64 di[2] = { ROW, 1 };

		t[1] = et_dense(VNPU_DTYPE_I64, 2, di);
		check_op(_metadata, "scatternd add 2^18", VNPU_LAYER_SCATTER_ND, t, data,
			 4, &at, sizeof(at), at_least(5ull * ROW), ~0ul, 0);
		EXPECT_EQ(et_f32_bits(y[4]), et_f32_bits(acc))
			TH_LOG("scatternd: y[4] %g, expected %g", y[4], acc);
	}
out:
	free(idx);
	free(u);
}

/* MaxPool with indices over one 512x512 window. */
static void test_poolidx(struct __test_metadata *_metadata, float *x)
{
	__u64 dx[4] = { 1, 1, 512, 512 }, dy[4] = { 1, 1, 1, 1 };
	struct vnpu_cmd_tensor t[3] = { et_dense(VNPU_DTYPE_F32, 4, dx),
					et_dense(VNPU_DTYPE_F32, 4, dy),
					et_dense(VNPU_DTYPE_I64, 4, dy) };
	struct vnpu_layer_pool_index at = {
		.kernel = { 512, 512 }, .stride = { 1, 1 },
		.dilation = { 1, 1 },
	};
	float y = 0;
	__s64 arg = -1;
	void *data[3] = { x, &y, &arg };
	size_t i, best = 0;

	for (i = 1; i < ROW; i++)
		if (x[i] > x[best])
			best = i;
	check_op(_metadata, "maxpool index 512x512", VNPU_LAYER_MAXPOOL_INDEX, t, data, 3,
		 &at, sizeof(at), at_least(ROW), ~0ul, 1);
	EXPECT_TRUE(arg == (__s64)best && y == x[best])
		TH_LOG("maxpool index: %lld, expected %zu", (long long)arg, best);
}

/*
 * Global pooling over 512 x 512 (2-D) and 2^18 (1-D): one output, one
 * unit, pausing inside its window; max and average exactly the plain
 * loops' (the same order of float sums), Lp-2 near a double reference.
 */
static void test_pool(struct __test_metadata *_metadata, float *x)
{
	static const __u32 modes[3] = { VNPU_POOL_MAX, VNPU_POOL_AVG,
					VNPU_POOL_LP };
	__u64 d2[4] = { 1, 1, 512, 512 }, o2[4] = { 1, 1, 1, 1 };
	__u64 d1[3] = { 1, 1, ROW }, o1[3] = { 1, 1, 1 };
	int m, one_d;

	for (one_d = 0; one_d < 2; one_d++)
		for (m = 0; m < 3; m++) {
			struct vnpu_cmd_tensor t[2] = {
				one_d ? et_dense(VNPU_DTYPE_F32, 3, d1) :
					et_dense(VNPU_DTYPE_F32, 4, d2),
				one_d ? et_dense(VNPU_DTYPE_F32, 3, o1) :
					et_dense(VNPU_DTYPE_F32, 4, o2),
			};
			struct vnpu_layer_pool at = {
				.mode = modes[m], .p = m == 2 ? 2 : 0,
				.kernel = { one_d ? 1 : 512, one_d ? ROW : 512 },
				.stride = { 1, 1 }, .dilation = { 1, 1 },
			};
			float y = 0, mx = x[0], sum = 0;
			double lp = 0, want;
			void *data[2] = { x, &y };
			char name[64];
			size_t i;

			snprintf(name, sizeof(name), "global %s pool %s",
				 m == 0 ? "max" : m == 1 ? "avg" : "lp2",
				 one_d ? "1-D" : "2-D");
			for (i = 0; i < ROW; i++) {
				mx = x[i] > mx ? x[i] : mx;
				sum += x[i];
				lp += (double)x[i] * x[i];
			}
			check_op(_metadata, name, VNPU_LAYER_POOL, t, data, 2, &at,
				 sizeof(at), at_least(ROW), ~0ul, 0);
			want = m == 0 ? mx : m == 1 ? sum / (float)ROW :
			       sqrt(lp);
			if (m < 2) {
				EXPECT_EQ((float)want, y)
					TH_LOG("%s: %.9g, expected %.9g", name, y, want);
			} else
				expect_close(_metadata, name, &y, &want, 1, 1e-6);
		}
}

/* TfIdf counts of 1-grams over a row of 2^14 tokens of 8 values. */
static void test_tfidf(struct __test_metadata *_metadata)
{
	enum { LEN = 1 << 14, POOL = 8 };
	__u64 dx[2] = { 1, LEN }, dp[1] = { POOL }, dc[1] = { 1 };
	__u64 dy[2] = { 1, POOL };
	struct vnpu_cmd_tensor t[6] = {
		et_dense(VNPU_DTYPE_I64, 2, dx), et_dense(VNPU_DTYPE_I64, 1, dp),
		et_dense(VNPU_DTYPE_I64, 1, dc), et_dense(VNPU_DTYPE_I64, 1, dp),
		et_dense(VNPU_DTYPE_F32, 1, dp), et_dense(VNPU_DTYPE_F32, 2, dy),
	};
	struct vnpu_layer_tfidf at = { .min_gram = 1, .max_gram = 1,
				       .mode = VNPU_TFIDF_TF };
	__s64 *tok = malloc(LEN * sizeof(*tok)), pool[POOL], counts[1] = { 0 };
	__s64 ix[POOL];
	float w[POOL], y[POOL];
	void *data[6] = { tok, pool, counts, ix, w, y };
	size_t i, n[POOL] = { 0 };

	if (!tok) {
		EXPECT_TRUE(false)
			TH_LOG("out of memory");
		return;
	}
	for (i = 0; i < POOL; i++) {
		pool[i] = (__s64)i + 100;
		ix[i] = (__s64)(POOL - 1 - i);
		w[i] = 1;
	}
	for (i = 0; i < LEN; i++) {
		tok[i] = (__s64)(i * 5 % (POOL + 1)) + 100;
		if (tok[i] - 100 < POOL)
			n[tok[i] - 100]++;
	}
	/* Each position scans the pool's tokens. */
	check_op(_metadata, "tfidf 1 row of 2^14", VNPU_LAYER_TFIDF, t, data, 6, &at,
		 sizeof(at), at_least((__u64)LEN * POOL), ~0ul, 0);
	for (i = 0; i < POOL; i++) {
		EXPECT_EQ((float)n[i], y[POOL - 1 - i])
			TH_LOG("tfidf: column %zu %g, expected %zu", POOL - 1 - i, y[POOL - 1 - i],
			       n[i]);
	}
	free(tok);
}

/* GEMM M x 16 x K on one unit: one pause between slices of SLICE_K. */
static void test_gemm(struct __test_metadata *_metadata, __u64 k, unsigned long pauses)
{
	__u64 da[2] = { 6, k }, db[2] = { k, 16 }, dy[2] = { 6, 16 };
	struct vnpu_cmd_tensor t[3] = { et_dense(VNPU_DTYPE_F32, 2, da),
					et_dense(VNPU_DTYPE_F32, 2, db),
					et_dense(VNPU_DTYPE_F32, 2, dy) };
	struct vnpu_layer_gemm at = { .alpha = et_f32_bits(1) };
	float *a = malloc(6 * k * 4), *b = malloc(k * 16 * 4), y[6 * 16];
	double ref[6 * 16];
	void *data[3] = { a, b, y };
	char name[48];
	size_t i, j, p;

	if (!a || !b) {
		EXPECT_TRUE(false)
			TH_LOG("out of memory");
		goto out;
	}
	et_fill_f32(a, 6 * k);
	et_fill_f32(b, k * 16);
	snprintf(name, sizeof(name), "gemm 6x16, K %llu",
		 (unsigned long long)k);
	check_op(_metadata, name, VNPU_LAYER_GEMM, t, data, 3, &at, sizeof(at), pauses,
		 pauses, 0);
	for (i = 0; i < 6; i++)
		for (j = 0; j < 16; j++) {
			ref[i * 16 + j] = 0;
			for (p = 0; p < k; p++)
				ref[i * 16 + j] += (double)a[i * k + p] *
						   b[p * 16 + j];
		}
	expect_close(_metadata, name, y, ref, 6 * 16, 1e-4);
out:
	free(a);
	free(b);
}

/* A 1x1 CONV over C channels: GEMM of depth C. */
static void test_conv(struct __test_metadata *_metadata, __u64 c, unsigned long pauses)
{
	__u64 dx[4] = { 1, c, 4, 4 }, dw[4] = { 6, c, 1, 1 };
	__u64 dy[4] = { 1, 6, 4, 4 };
	struct vnpu_cmd_tensor t[3] = { et_dense(VNPU_DTYPE_F32, 4, dx),
					et_dense(VNPU_DTYPE_F32, 4, dw),
					et_dense(VNPU_DTYPE_F32, 4, dy) };
	struct vnpu_layer_conv at = {
		.group = 1, .kernel = { 1, 1 }, .stride = { 1, 1 },
		.dilation = { 1, 1 },
	};
	float *x = malloc(c * 16 * 4), *w = malloc(6 * c * 4), y[6 * 16];
	double ref[6 * 16];
	void *data[3] = { x, w, y };
	char name[48];
	size_t m, s, p;

	if (!x || !w) {
		EXPECT_TRUE(false)
			TH_LOG("out of memory");
		goto out;
	}
	et_fill_f32(x, c * 16);
	et_fill_f32(w, 6 * c);
	snprintf(name, sizeof(name), "conv 1x1, C %llu", (unsigned long long)c);
	check_op(_metadata, name, VNPU_LAYER_CONV, t, data, 3, &at, sizeof(at), pauses,
		 pauses, 0);
	for (m = 0; m < 6; m++)
		for (s = 0; s < 16; s++) {
			ref[m * 16 + s] = 0;
			for (p = 0; p < c; p++)
				ref[m * 16 + s] += (double)w[m * c + p] *
						   x[p * 16 + s];
		}
	expect_close(_metadata, name, y, ref, 6 * 16, 1e-4);
out:
	free(x);
	free(w);
}

TEST(pause_resume)
{
	float *x = malloc(ROW * sizeof(float)), *y = malloc(ROW * sizeof(float));
	double *ref = malloc(ROW * sizeof(double));

	if (!x || !y || !ref) {
		EXPECT_TRUE(false)
			TH_LOG("out of memory");
		goto out;
	}
	et_fill_f32(x, ROW);
	test_softmax_rows(_metadata, x, y, ref);
	test_norms(_metadata, x, y, ref);
	test_reductions(_metadata, x);
	test_scatter(_metadata, x, y);
	test_poolidx(_metadata, x);
	test_pool(_metadata, x);
	test_tfidf(_metadata);
	test_gemm(_metadata, 3 * SLICE_K, 2);
	test_gemm(_metadata, SLICE_K, 0);
	test_gemm(_metadata, 100, 0);
	test_conv(_metadata, 3 * SLICE_K, 2);
	test_conv(_metadata, SLICE_K, 0);
out:
	free(x);
	free(y);
	free(ref);
}

KSFT_MAIN

// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Units of the ops whose outputs each read many elements (LRN's window,
 * quantized MatMul and Conv depth, Resize, GridSample and RoiAlign taps,
 * MaxPool-with-indices windows): a unit (an FPU section in vnpu.ko) holds
 * about ENG_ELEM_UNIT reads, one output at least, whatever the shape; and
 * of Scatter, whose units own ranges of 16 times as many elements of Y.
 * For each, at shapes that split rows into blocks of outputs: the unit count
 * the API reports against that bound, every split (1 part, 7, all units)
 * bit for bit on every path and across paths, and a naive reference where
 * one is short (LRN, MatMulInteger, MaxPool indices).
 */
#include "engine_test.h"
#include "ksft_main.h"

/* Reads of one unit at most (ENG_ELEM_UNIT), or of one output when more. */
#define UNIT_READS 4096ull

/**
 * struct flayer - one layer under test
 * @name: for messages
 * @op: &enum vnpu_layer_op
 * @n: tensors
 * @t: tensors, the output last
 * @data: their data
 * @attrs: the op's attributes
 * @attr_size: their size
 * @reads: elements one output reads
 * @unit_reads: reads a unit holds at most when an output reads fewer
 *	(0: UNIT_READS)
 */
struct flayer {
	const char *name;
	__u32 op, n;
	struct vnpu_cmd_tensor t[10];
	void *data[10];
	__u64 attrs[16];
	__u32 attr_size;
	__u64 reads, unit_reads;
};

static void add_tensor(struct flayer *l, __u32 dtype, __u32 rank,
		       const __u64 *dims)
{
	struct vnpu_cmd_tensor *t = &l->t[l->n];
	size_t i;

	*t = et_dense(dtype, rank, dims);
	l->data[l->n] = calloc(1, et_bytes(t) ? et_bytes(t) : 1);
	if (dtype == VNPU_DTYPE_F32)
		et_fill_f32(l->data[l->n], et_numel(t));
	else if (dtype == VNPU_DTYPE_U8 || dtype == VNPU_DTYPE_I8)
		for (i = 0; i < et_numel(t); i++)
			((uint8_t *)l->data[l->n])[i] = (uint8_t)(et_randf() * 250);
	l->n++;
}

static void set_attrs(struct flayer *l, const void *a, __u32 size)
{
	memcpy(l->attrs, a, size);
	l->attr_size = size;
}

static int run(const struct flayer *l, __u32 features, __u32 parts, void *out)
{
	size_t bytes = et_bytes(&l->t[l->n - 1]);
	int rc;

	memset(l->data[l->n - 1], 0x7f, bytes);
	rc = et_run(l->op, l->t, l->data, l->n, l->attrs, l->attr_size,
		    features, parts);
	memcpy(out, l->data[l->n - 1], bytes);
	return rc;
}

/*
 * Unit count against the bound, then every split on every path the CPU
 * has against the baseline whole; the baseline whole is left in the output.
 */
static void check_layer(struct __test_metadata *_metadata, struct flayer *l)
{
	static const __u32 paths[] = {
		0, VNPU_ENG_F_AVX2_FMA, VNPU_ENG_F_AVX2_FMA | VNPU_ENG_F_AVX512,
	};
	const struct vnpu_cmd_tensor *y = &l->t[l->n - 1];
	size_t bytes = et_bytes(y), p;
	unsigned char *whole = malloc(bytes), *got = malloc(bytes);
	__u64 budget = l->unit_reads ? l->unit_reads : UNIT_READS;
	__u64 per = l->reads > budget ? l->reads : budget;
	__u64 need = (et_numel(y) * l->reads + per - 1) / per;

	if (vnpu_eng_layer_check(l->op, l->t, l->n, l->attrs, l->attr_size)) {
		EXPECT_TRUE(false)
			TH_LOG("%s: not a valid layer", l->name);
		goto out;
	}
	if (run(l, 0, 1, whole)) {
		EXPECT_TRUE(false)
			TH_LOG("%s: baseline run failed", l->name);
		goto out;
	}
	for (p = 0; p < sizeof(paths) / sizeof(paths[0]); p++) {
		__u32 f = paths[p], units, splits[3], i;

		if ((f & et_host_features) != f)
			continue;
		units = vnpu_eng_layer_max_parts(l->op, l->t, l->n, l->attrs, f);
		EXPECT_GE(units, need)
			TH_LOG("%s: features %#x: %u units for %llu outputs of %llu reads", l->name,
			       f, units, (unsigned long long)et_numel(y),
			       (unsigned long long)l->reads);
		splits[0] = 1;
		splits[1] = 7;
		splits[2] = units;
		for (i = 0; i < 3; i++) {
			EXPECT_FALSE(run(l, f, splits[i], got) || memcmp(whole, got, bytes))
				TH_LOG("%s: features %#x, %u parts: differs from the baseline whole",
				       l->name, f, splits[i]);
		}
	}
	memcpy(l->data[l->n - 1], whole, bytes);
out:
	free(whole);
	free(got);
}

static void free_layer(struct flayer *l)
{
	__u32 i;

	for (i = 0; i < l->n; i++)
		free(l->data[i]);
}

static void test_lrn(struct __test_metadata *_metadata)
{
	struct vnpu_layer_norm a = {
		.mode = VNPU_NORM_LRN, .size = 512, .alpha = et_f32_bits(1e-3f),
		.beta = et_f32_bits(0.75f), .bias = et_f32_bits(1),
	};
	__u64 dims[3] = { 1, 600, 3 };
	struct flayer l = { .name = "lrn size 512 over 600 channels",
			    .op = VNPU_LAYER_NORM, .reads = 512 };
	const float *x, *y;
	size_t c, w, j;
	int bad = 0;

	add_tensor(&l, VNPU_DTYPE_F32, 3, dims);
	add_tensor(&l, VNPU_DTYPE_F32, 3, dims);
	set_attrs(&l, &a, sizeof(a));
	check_layer(_metadata, &l);
	x = l.data[0];
	y = l.data[1];
	for (c = 0; c < 600; c++)
		for (w = 0; w < 3; w++) {
			double sq = 0, want;
			long lo = (long)c - 255, hi = (long)c + 256;

			for (j = lo < 0 ? 0 : (size_t)lo; (long)j <= hi && j < 600; j++)
				sq += (double)x[j * 3 + w] * x[j * 3 + w];
			want = x[c * 3 + w] / pow(1 + 1e-3f / 512 * sq, 0.75f);
			EXPECT_FALSE(fabs(y[c * 3 + w] - want) > 1e-6 + 1e-5 * fabs(want)
				     && bad++ < 3)
				TH_LOG("lrn [%zu, %zu]: got %.9g want %.9g", c, w,
				       y[c * 3 + w], want);
		}
	free_layer(&l);
}

static void test_matmul_integer(struct __test_metadata *_metadata)
{
	struct vnpu_layer_qgemm a = { 0 };
	__u64 ad[3] = { 2, 3, 5000 }, bd[2] = { 5000, 7 }, yd[3] = { 2, 3, 7 };
	struct flayer l = { .name = "matmulinteger depth 5000",
			    .op = VNPU_LAYER_MATMUL_INTEGER, .reads = 5000 };
	const uint8_t *pa, *pb;
	const int32_t *y;
	size_t r, j, k;

	add_tensor(&l, VNPU_DTYPE_U8, 3, ad);
	add_tensor(&l, VNPU_DTYPE_U8, 2, bd);
	add_tensor(&l, VNPU_DTYPE_U8, 0, NULL);
	add_tensor(&l, VNPU_DTYPE_U8, 0, NULL);
	*(uint8_t *)l.data[2] = 3;
	*(uint8_t *)l.data[3] = 200;
	add_tensor(&l, VNPU_DTYPE_I32, 3, yd);
	set_attrs(&l, &a, sizeof(a));
	check_layer(_metadata, &l);
	pa = l.data[0];
	pb = l.data[1];
	y = l.data[4];
	for (r = 0; r < 6; r++)
		for (j = 0; j < 7; j++) {
			int32_t acc = 0;

			for (k = 0; k < 5000; k++)
				acc += (pa[r * 5000 + k] - 3) * (pb[k * 7 + j] - 200);
			EXPECT_EQ(acc, y[r * 7 + j])
				TH_LOG("matmulinteger [%zu, %zu]: got %d want %d", r, j,
				       y[r * 7 + j], acc);
		}
	free_layer(&l);
}

static void test_qlinear(struct __test_metadata *_metadata)
{
	struct vnpu_layer_qgemm g = { 0 };
	struct vnpu_layer_conv c = {
		.group = 1, .kernel = { 3, 3 }, .stride = { 1, 1 },
		.dilation = { 1, 1 }, .pad_begin = { 1, 1 }, .pad_end = { 1, 1 },
	};
	__u64 ad[2] = { 3, 1000 }, bd[2] = { 1000, 37 }, yd[2] = { 3, 37 };
	__u64 xd[4] = { 1, 64, 5, 40 }, wd[4] = { 4, 64, 3, 3 };
	__u64 od[4] = { 1, 4, 5, 40 };
	struct flayer m = { .name = "qlinearmatmul depth 1000",
			    .op = VNPU_LAYER_QLINEAR_MATMUL, .reads = 1000 };
	struct flayer v = { .name = "qlinearconv depth 576",
			    .op = VNPU_LAYER_QLINEAR_CONV, .reads = 576 };
	int i;

	add_tensor(&m, VNPU_DTYPE_I8, 2, ad);
	add_tensor(&v, VNPU_DTYPE_U8, 4, xd);
	for (i = 0; i < 2; i++) {
		struct flayer *l = i ? &v : &m;
		__u32 dt = i ? VNPU_DTYPE_U8 : VNPU_DTYPE_I8;

		add_tensor(l, VNPU_DTYPE_F32, 0, NULL);
		add_tensor(l, dt, 0, NULL);
		add_tensor(l, VNPU_DTYPE_I8, i ? 4 : 2, i ? wd : bd);
		add_tensor(l, VNPU_DTYPE_F32, 0, NULL);
		add_tensor(l, VNPU_DTYPE_I8, 0, NULL);
		add_tensor(l, VNPU_DTYPE_F32, 0, NULL);
		add_tensor(l, VNPU_DTYPE_U8, 0, NULL);
		*(float *)l->data[1] = 0.02f;
		*(float *)l->data[4] = 0.01f;
		*(float *)l->data[6] = 0.5f;
		add_tensor(l, VNPU_DTYPE_U8, i ? 4 : 2, i ? od : yd);
	}
	set_attrs(&m, &g, sizeof(g));
	set_attrs(&v, &c, sizeof(c));
	check_layer(_metadata, &m);
	check_layer(_metadata, &v);
	free_layer(&m);
	free_layer(&v);
}

static void test_resize_grid_roi(struct __test_metadata *_metadata)
{
	struct vnpu_layer_resize rz = {
		.mode = VNPU_RESIZE_CUBIC, .cubic_a = et_f32_bits(-0.75f),
	};
	struct vnpu_layer_grid_sample gs = { .mode = VNPU_RESIZE_CUBIC };
	struct vnpu_layer_roi_align ra = {
		.sampling_ratio = 40, .spatial_scale = et_f32_bits(1),
	};
	__u64 xd[6] = { 1, 1, 2, 2, 2, 2 }, yd[6] = { 1, 1, 3, 3, 3, 3 };
	__u64 gx[4] = { 1, 3, 8, 8 }, gg[4] = { 1, 20, 20, 2 };
	__u64 gy[4] = { 1, 3, 20, 20 }, rx[4] = { 1, 2, 16, 16 };
	__u64 rr[2] = { 2, 4 }, rb[1] = { 2 }, ry[4] = { 2, 2, 3, 3 };
	struct flayer r = { .name = "resize cubic over 4 axes",
			    .op = VNPU_LAYER_RESIZE, .reads = 256 };
	struct flayer g = { .name = "gridsample cubic",
			    .op = VNPU_LAYER_GRID_SAMPLE, .reads = 16 };
	struct flayer a = { .name = "roialign ratio 40",
			    .op = VNPU_LAYER_ROI_ALIGN, .reads = 4 * 1600 };
	float *box;

	add_tensor(&r, VNPU_DTYPE_F32, 6, xd);
	add_tensor(&r, VNPU_DTYPE_F32, 6, yd);
	set_attrs(&r, &rz, sizeof(rz));
	check_layer(_metadata, &r);
	free_layer(&r);

	add_tensor(&g, VNPU_DTYPE_F32, 4, gx);
	add_tensor(&g, VNPU_DTYPE_F32, 4, gg);
	add_tensor(&g, VNPU_DTYPE_F32, 4, gy);
	set_attrs(&g, &gs, sizeof(gs));
	check_layer(_metadata, &g);
	free_layer(&g);

	add_tensor(&a, VNPU_DTYPE_F32, 4, rx);
	add_tensor(&a, VNPU_DTYPE_F32, 2, rr);
	add_tensor(&a, VNPU_DTYPE_I64, 1, rb);
	add_tensor(&a, VNPU_DTYPE_F32, 4, ry);
	box = a.data[1];
	box[0] = 1;
	box[1] = 2;
	box[2] = 13;
	box[3] = 11;
	box[4] = 0;
	box[5] = 0;
	box[6] = 15;
	box[7] = 15;
	set_attrs(&a, &ra, sizeof(ra));
	check_layer(_metadata, &a);
	free_layer(&a);
}

static void test_maxpool_index(struct __test_metadata *_metadata)
{
	struct vnpu_layer_pool_index a = {
		.kernel = { 70, 70 }, .stride = { 5, 5 }, .dilation = { 1, 1 },
	};
	__u64 xd[4] = { 1, 2, 80, 80 }, yd[4] = { 1, 2, 3, 3 };
	struct flayer l = { .name = "maxpool-index 70x70",
			    .op = VNPU_LAYER_MAXPOOL_INDEX, .reads = 4900 };
	const float *x, *y;
	const int64_t *ix;
	size_t c, oh, ow, i, j;

	add_tensor(&l, VNPU_DTYPE_F32, 4, xd);
	add_tensor(&l, VNPU_DTYPE_F32, 4, yd);
	add_tensor(&l, VNPU_DTYPE_I64, 4, yd);
	set_attrs(&l, &a, sizeof(a));
	/* The whole check compares Y; I must match too. */
	check_layer(_metadata, &l);
	x = l.data[0];
	y = l.data[1];
	ix = l.data[2];
	for (c = 0; c < 2; c++)
		for (oh = 0; oh < 3; oh++)
			for (ow = 0; ow < 3; ow++) {
				size_t o = (c * 3 + oh) * 3 + ow, best = 0;
				float bv = -INFINITY;

				for (i = 0; i < 70; i++)
					for (j = 0; j < 70; j++) {
						size_t at = c * 6400 +
							    (oh * 5 + i) * 80 +
							    ow * 5 + j;

						if (x[at] > bv) {
							bv = x[at];
							best = at;
						}
					}
				EXPECT_TRUE(y[o] == bv && ix[o] == (int64_t)best)
					TH_LOG("maxpool-index [%zu]: got %g at %lld, want %g at %zu",
					       o, y[o], (long long)ix[o], bv, best);
			}
	free_layer(&l);
}

/* A window past 2^24 elements, as POOL has it: refused. */
static void test_maxpool_index_window_limit(struct __test_metadata *_metadata)
{
	struct vnpu_layer_pool_index a = {
		.kernel = { 4097, 4096 }, .stride = { 1, 1 }, .dilation = { 1, 1 },
	};
	__u64 xd[4] = { 1, 1, 4097, 4096 }, yd[4] = { 1, 1, 1, 1 };
	struct vnpu_cmd_tensor t[3];

	t[0] = et_dense(VNPU_DTYPE_F32, 4, xd);
	t[1] = et_dense(VNPU_DTYPE_F32, 4, yd);
	t[2] = et_dense(VNPU_DTYPE_I64, 4, yd);
	EXPECT_EQ(VNPU_ENG_EINVAL,
		  vnpu_eng_layer_check(VNPU_LAYER_MAXPOOL_INDEX, t, 3, &a, sizeof(a)))
		TH_LOG("maxpool-index: a window of 4097 x 4096 is taken");
	a.kernel[0] = 4096;
	xd[2] = 4096;
	t[0] = et_dense(VNPU_DTYPE_F32, 4, xd);
	EXPECT_TRUE(!vnpu_eng_layer_check(VNPU_LAYER_MAXPOOL_INDEX, t, 3, &a, sizeof(a)))
		TH_LOG("maxpool-index: a window of 2^24 is refused");
}

/*
 * ScatterND into 300000 elements (5 ranges of Y): 6 updates, duplicates
 * among them, added in order; once more in place (Y is data), and with
 * an index out of range, which faults whatever the split.
 */
static void test_scatter_nd(struct __test_metadata *_metadata)
{
	static const int64_t at[6] = { 7, 299999, 70000, 7, -1, 140000 };
	struct vnpu_layer_scatter a = { .reduction = VNPU_SCATTER_ADD };
	__u64 xd[1] = { 300000 }, id[2] = { 6, 1 }, ud[1] = { 6 };
	struct flayer l = { .name = "scatternd add into 300000",
			    .op = VNPU_LAYER_SCATTER_ND, .reads = 1,
			    .unit_reads = 16 * UNIT_READS };
	float *ref, *x, *u;
	size_t i;
	void *y;

	add_tensor(&l, VNPU_DTYPE_F32, 1, xd);
	add_tensor(&l, VNPU_DTYPE_I64, 2, id);
	add_tensor(&l, VNPU_DTYPE_F32, 1, ud);
	add_tensor(&l, VNPU_DTYPE_F32, 1, xd);
	memcpy(l.data[1], at, sizeof(at));
	set_attrs(&l, &a, sizeof(a));
	x = l.data[0];
	u = l.data[2];
	ref = malloc(300000 * 4);
	memcpy(ref, x, 300000 * 4);
	for (i = 0; i < 6; i++)
		ref[(at[i] + 300000) % 300000] =
			(float)((double)ref[(at[i] + 300000) % 300000] + u[i]);
	EXPECT_EQ(5, vnpu_eng_layer_max_parts(l.op, l.t, l.n, l.attrs, 0))
		TH_LOG("scatternd: %u units for 300000 elements",
		       vnpu_eng_layer_max_parts(l.op, l.t, l.n, l.attrs, 0));
	check_layer(_metadata, &l);
	EXPECT_TRUE(!memcmp(l.data[3], ref, 300000 * 4))
		TH_LOG("scatternd: differs from the updates added in order");

	/* In place: Y is data. */
	y = l.data[3];
	l.data[3] = l.data[0];
	EXPECT_TRUE(!et_run(l.op, l.t, l.data, l.n, l.attrs, l.attr_size, et_host_features, 5)
		    && !memcmp(l.data[0], ref, 300000 * 4))
		TH_LOG("scatternd in place in 5 parts");
	l.data[3] = y;

	((int64_t *)l.data[1])[3] = 300000;
	for (i = 1; i <= 5; i += 4) {
		EXPECT_EQ(VNPU_ENG_EINVAL,
			  et_run(l.op, l.t, l.data, l.n, l.attrs, l.attr_size, 0, (__u32)i))
			TH_LOG("scatternd: an index out of range in %zu parts", i);
	}
	free(ref);
	free_layer(&l);
}

/* ScatterElements along axis 1 of [3, 50000]: the last of equal ones stays. */
static void test_scatter_elements(struct __test_metadata *_metadata)
{
	struct vnpu_layer_scatter a = { .axis = 1 };
	__u64 xd[2] = { 3, 50000 }, id[2] = { 3, 2 };
	struct flayer l = { .name = "scatterelements into 3 x 50000",
			    .op = VNPU_LAYER_SCATTER_ELEMENTS, .reads = 1,
			    .unit_reads = 16 * UNIT_READS };
	int32_t *idx;
	float *x, *u, *y;
	size_t r, c;

	add_tensor(&l, VNPU_DTYPE_F32, 2, xd);
	add_tensor(&l, VNPU_DTYPE_I32, 2, id);
	add_tensor(&l, VNPU_DTYPE_F32, 2, id);
	add_tensor(&l, VNPU_DTYPE_F32, 2, xd);
	idx = l.data[1];
	for (r = 0; r < 3; r++) {
		idx[2 * r] = (int32_t)(r * 20000 + 9);
		idx[2 * r + 1] = (int32_t)(r * 20000 + 9);
	}
	set_attrs(&l, &a, sizeof(a));
	check_layer(_metadata, &l);
	x = l.data[0];
	u = l.data[2];
	y = l.data[3];
	for (r = 0; r < 3; r++)
		for (c = 0; c < 50000; c++) {
			float want = c == r * 20000 + 9 ? u[2 * r + 1] :
				     x[r * 50000 + c];

			EXPECT_EQ(want, y[r * 50000 + c])
				TH_LOG("scatterelements [%zu, %zu]: got %g want %g", r, c,
				       y[r * 50000 + c], want);
		}
	free_layer(&l);
}

/*
 * The cap on parts: a layer of 2^30 outputs of erf splits into 2^16 parts
 * of 2^14 outputs on the FMA paths (4096 parts of 2^18 made sections of
 * some 20 ms), 2^18 on the baseline (all its units).
 */
static void test_parts_cap(struct __test_metadata *_metadata)
{
	struct vnpu_layer_act a = { .func = VNPU_ACT_ERF };
	__u64 dims[1] = { 1ull << 30 };
	struct vnpu_cmd_tensor t[2];
	__u32 fma, base;

	t[0] = et_dense(VNPU_DTYPE_F32, 1, dims);
	t[1] = t[0];
	fma = vnpu_eng_layer_max_parts(VNPU_LAYER_UNARY, t, 2, &a,
				       VNPU_ENG_F_AVX2_FMA);
	base = vnpu_eng_layer_max_parts(VNPU_LAYER_UNARY, t, 2, &a, 0);
	EXPECT_TRUE(fma == 1u << 16 && base == 1u << 18)
		TH_LOG("erf over 2^30: %u parts (FMA), %u (baseline)", fma, base);
}

/*
 * Depthwise 1-D k9 over rows of 5000 (f32 and f16 out, bias, residual,
 * ReLU): units are blocks of a row's outputs (eng_dw_unit_macs(): 2^15
 * multiply-adds on the FMA paths, 8 times UNIT_READS), against plain
 * loops.
 */
static void test_depthwise(struct __test_metadata *_metadata)
{
	struct vnpu_layer_conv a = {
		.flags = VNPU_LAYER_F_BIAS | VNPU_LAYER_F_RESIDUAL, .group = 2,
		.kernel = { 1, 9 }, .stride = { 1, 1 }, .dilation = { 1, 1 },
		.pad_begin = { 0, 4 }, .pad_end = { 0, 4 },
		.act = { .func = VNPU_ACT_RELU },
	};
	__u64 xd[3] = { 1, 2, 5000 }, wd[3] = { 2, 1, 9 }, bd[1] = { 2 };
	__u32 dt;

	for (dt = 0; dt < 2; dt++) {
		struct flayer l = { .name = dt ? "depthwise k9 rows of 5000, f16" :
					    "depthwise k9 rows of 5000",
				    .op = VNPU_LAYER_CONV, .reads = 9,
				    .unit_reads = 8 * UNIT_READS };
		const float *x, *w, *b, *res;
		size_t c, o, k;
		int bad = 0;

		add_tensor(&l, VNPU_DTYPE_F32, 3, xd);
		add_tensor(&l, VNPU_DTYPE_F32, 3, wd);
		add_tensor(&l, VNPU_DTYPE_F32, 1, bd);
		add_tensor(&l, VNPU_DTYPE_F32, 3, xd);
		add_tensor(&l, dt ? VNPU_DTYPE_F16 : VNPU_DTYPE_F32, 3, xd);
		set_attrs(&l, &a, sizeof(a));
		check_layer(_metadata, &l);
		x = l.data[0];
		w = l.data[1];
		b = l.data[2];
		res = l.data[3];
		for (c = 0; c < 2 && !dt; c++)
			for (o = 0; o < 5000; o++) {
				double want = b[c];
				float got = ((float *)l.data[4])[c * 5000 + o];

				for (k = 0; k < 9; k++)
					if (o + k >= 4 && o + k - 4 < 5000)
						want += (double)w[c * 9 + k] *
							x[c * 5000 + o + k - 4];
				want += res[c * 5000 + o];
				want = want > 0 ? want : 0;
				EXPECT_FALSE(fabs(got - want) > 1e-5 + 1e-5 * fabs(want)
					     && bad++ < 3)
					TH_LOG("depthwise [%zu, %zu]: got %.9g want %.9g",
					       c, o, got, want);
			}
		free_layer(&l);
	}
}

TEST(fpuunits)
{
	test_lrn(_metadata);
	test_matmul_integer(_metadata);
	test_qlinear(_metadata);
	test_resize_grid_roi(_metadata);
	test_maxpool_index(_metadata);
	test_maxpool_index_window_limit(_metadata);
	test_scatter_nd(_metadata);
	test_scatter_elements(_metadata);
	test_parts_cap(_metadata);
	test_depthwise(_metadata);
}

KSFT_MAIN

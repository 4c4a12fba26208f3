// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * GEMM and CONV units per kernel path. The baseline path's units hold at
 * most 2^18 multiply-adds, 256 times fewer than the FMA paths', so that its
 * parts (FPU sections in vnpu.ko) stay short; that changes only which
 * output block a unit covers, never the order of a sum. For odd shapes
 * that split into several units on either path: the unit counts and
 * scratch the API reports per path, every split of the baseline's small
 * units (parts > units too) in exactly the scratch it asked for, bit for
 * bit against the AVX2 (and AVX-512) path's large units, and the naive
 * reference.
 */
#include "engine_test.h"
#include "ksft_main.h"
#include "vnpu_eng_priv.h"

#define BASE 0u
#define AVX2 VNPU_ENG_F_AVX2_FMA
#define BASE_UNIT_MACS (1ull << 18)
/* Bytes past the scratch asked for that must stay untouched. */
#define CANARY 4096

/**
 * struct ulayer - one GEMM or CONV layer under test
 * @name: for messages
 * @op: %VNPU_LAYER_GEMM or %VNPU_LAYER_CONV
 * @t: tensors, the output last
 * @data: their data
 * @n: tensors
 * @g: GEMM's attributes
 * @c: CONV's attributes
 * @ref: the naive reference of the output, in double then rounded
 * @depth: multiply-adds per output
 */
struct ulayer {
	char name[96];
	__u32 op, n;
	struct vnpu_cmd_tensor t[5];
	void *data[5];
	struct vnpu_layer_gemm g;
	struct vnpu_layer_conv c;
	float *ref;
	__u64 depth;
};

static const void *attrs_of(const struct ulayer *l)
{
	return l->op == VNPU_LAYER_GEMM ? (const void *)&l->g :
	       (const void *)&l->c;
}

static __u32 attr_size_of(const struct ulayer *l)
{
	return l->op == VNPU_LAYER_GEMM ? sizeof(l->g) : sizeof(l->c);
}

static __u32 max_parts(const struct ulayer *l, __u32 features)
{
	return vnpu_eng_layer_max_parts(l->op, l->t, l->n, attrs_of(l),
					features);
}

static __u64 scratch_of(const struct ulayer *l, __u32 features, __u32 parts)
{
	return vnpu_eng_layer_scratch(l->op, l->t, l->n, attrs_of(l), parts,
				      features);
}

static size_t out_bytes(const struct ulayer *l)
{
	return et_bytes(&l->t[l->n - 1]);
}

/*
 * Runs @parts parts (in reverse) with @features in exactly the scratch
 * asked for, followed by a canary that must survive; the output to @out.
 */
static int run_split(struct __test_metadata *_metadata, const struct ulayer *l, __u32 features,
		     __u32 parts,
		     void *out)
{
	__u64 need = scratch_of(l, features, parts), i;
	struct vnpu_eng_ctx ctx = { .features = features };
	unsigned char *mem = malloc(need + CANARY);
	int rc = 0;
	__u32 p;

	if (!mem)
		return -12;
	/* Dirty scratch: a kernel must not rely on zeroes. */
	memset(mem, 0xa5, need + CANARY);
	ctx.scratch = mem;
	ctx.scratch_size = need;
	memset(l->data[l->n - 1], 0x7f, out_bytes(l));
	for (p = parts; p-- > 0 && !rc;)
		rc = vnpu_eng_layer_run(l->op, l->t, l->data, l->n, attrs_of(l),
					p, parts, &ctx);
	for (i = need; i < need + CANARY; i++)
		if (mem[i] != 0xa5) {
			EXPECT_TRUE(false)
				TH_LOG("%s: features %#x, %u parts: scratch overrun at byte %llu of %llu",
				       l->name, features, parts, (unsigned long long)i,
				       (unsigned long long)need);
			rc = -1;
			break;
		}
	free(mem);
	memcpy(out, l->data[l->n - 1], out_bytes(l));
	return rc;
}

/*
 * Whether the FMA paths take a CONV by even blocks of columns
 * (eng_conv_by_cols()), which can be narrower than the baseline's blocks.
 */
static int fma_by_cols(const struct ulayer *l)
{
	return l->op == VNPU_LAYER_CONV && eng_conv_by_cols(AVX2) &&
	       eng_conv_by_cols(AVX2 | VNPU_ENG_F_AVX512);
}

/* The counts and scratch each path reports, and the refusals. */
static void check_api(struct __test_metadata *_metadata, const struct ulayer *l)
{
	__u32 mb = max_parts(l, BASE), ma = max_parts(l, AVX2);
	__u64 sb = scratch_of(l, BASE, mb), sa = scratch_of(l, AVX2, ma);
	__u64 sx = scratch_of(l, AVX2 | VNPU_ENG_F_AVX512, ma);
	__u64 macs = et_numel(&l->t[l->n - 1]) * l->depth;
	__u64 least = (__u64)ENG_LANES_MB * ENG_LANES_ROWS * l->depth;
	int lanes = l->op == VNPU_LAYER_CONV && (l->c.flags & VNPU_LAYER_F_LANES);
	struct vnpu_eng_ctx ctx = { .features = BASE };
	int rc;

	EXPECT_EQ(ma, max_parts(l, AVX2 | VNPU_ENG_F_AVX512))
		TH_LOG("%s: AVX-512 units differ from AVX2's", l->name);
	/*
	 * The baseline's budget is smaller, so its units are more, except
	 * where a small CONV splits into at least 8 units on every path
	 * (ENG_CONV_MIN_UNITS), which halving leaves below 16 (and an odd
	 * count below ENG_CONV_ODD_UNITS splits again), and where a
	 * GEMM's units of few rows fit the baseline's budget as they are.
	 */
	EXPECT_TRUE(mb > ma || (l->op == VNPU_LAYER_CONV && ma < 2 * ENG_CONV_ODD_UNITS) || (l->op == VNPU_LAYER_GEMM
									 && mb == ma && (__u64)mb * BASE_UNIT_MACS >= macs))
		TH_LOG("%s: units: baseline %u, AVX2 %u", l->name, mb, ma);
	/*
	 * No baseline unit holds more than 2^18 multiply-adds, but where one
	 * lanes CONV unit is more: ENG_LANES_MB channels by one tile of
	 * positions over the whole depth, the least unit it has.
	 */
	EXPECT_GE((__u64)mb * (lanes && least > BASE_UNIT_MACS ? least : BASE_UNIT_MACS), macs)
		TH_LOG("%s: %u baseline units for %llu multiply-adds", l->name, mb,
		       (unsigned long long)macs);
	/*
	 * The baseline's smaller units ask for no more scratch than the FMA
	 * paths' units, but where those take a CONV by even blocks of
	 * columns: those may be narrower.
	 */
	EXPECT_TRUE(sb > 0 && sa > 0 && ((sb <= sa && sb <= sx) || fma_by_cols(l)))
		TH_LOG("%s: scratch: baseline %llu, AVX2 %llu, AVX-512 %llu", l->name,
		       (unsigned long long)sb, (unsigned long long)sa, (unsigned long long)sx);

	/* A byte short of either path's own figure: ENOSPC. */
	ctx.scratch = malloc(sa > sb ? sa : sb);
	ctx.scratch_size = sb - 1;
	rc = vnpu_eng_layer_run(l->op, l->t, l->data, l->n, attrs_of(l), 0, mb,
				&ctx);
	EXPECT_EQ(VNPU_ENG_ENOSPC, rc)
		TH_LOG("%s: short baseline scratch: %d", l->name, rc);
	ctx.features = AVX2;
	ctx.scratch_size = sa - 1;
	rc = vnpu_eng_layer_run(l->op, l->t, l->data, l->n, attrs_of(l), 0, ma,
				&ctx);
	EXPECT_EQ(VNPU_ENG_ENOSPC, rc)
		TH_LOG("%s: short AVX2 scratch: %d", l->name, rc);
	free(ctx.scratch);
}

/*
 * Feature values that are no path of their own: bits the engine does not
 * know are ignored, and AVX-512 without AVX2_FMA is the baseline path. The
 * units, the scratch and the run agree on that, so a caller that sizes
 * with such a value and runs with it stays within its scratch.
 */
#define UNKNOWN_BITS (~(AVX2 | VNPU_ENG_F_AVX512 | VNPU_ENG_F_AVX512_BF16 | \
			VNPU_ENG_F_AVX512_FP16))

static void check_odd_features(struct __test_metadata *_metadata, const struct ulayer *l)
{
	static const __u32 base_like[] = {
		VNPU_ENG_F_AVX512, UNKNOWN_BITS, UNKNOWN_BITS | VNPU_ENG_F_AVX512,
	};
	__u32 mb = max_parts(l, BASE), ma = max_parts(l, AVX2);
	__u64 sb = scratch_of(l, BASE, mb), sa = scratch_of(l, AVX2, ma);
	size_t i;

	for (i = 0; i < sizeof(base_like) / sizeof(base_like[0]); i++) {
		__u32 f = base_like[i];

		EXPECT_TRUE(max_parts(l, f) == mb && scratch_of(l, f, mb) == sb)
			TH_LOG("%s: features %#x: %u units, scratch %llu; the baseline's %u, %llu",
			       l->name, f, max_parts(l, f),
			       (unsigned long long)scratch_of(l, f,
							      mb), mb, (unsigned long long)sb);
	}
	EXPECT_TRUE(max_parts(l, AVX2 | UNKNOWN_BITS) == ma && scratch_of(l, AVX2 | UNKNOWN_BITS,
									  ma) == sa)
		TH_LOG("%s: unknown bits change the AVX2 path's units or scratch", l->name);
}

static void check_ref(struct __test_metadata *_metadata, const struct ulayer *l, const float *got)
{
	size_t i, count = out_bytes(l) / 4;
	double atol = 2e-5 * sqrt((double)l->depth + 1);
	int bad = 0;

	for (i = 0; i < count; i++) {
		EXPECT_FALSE(fabs((double)got[i] - l->ref[i]) > atol + 1e-4 * fabs(l->ref[i])
			     && bad++ < 3)
			TH_LOG("%s [%zu]: got %.9g want %.9g", l->name, i, got[i],
				       l->ref[i]);
	}
}

static void check_layer(struct __test_metadata *_metadata, struct ulayer *l)
{
	__u32 mb = max_parts(l, BASE), ma = max_parts(l, AVX2);
	const __u32 splits[] = { 2, 3, mb - 1, mb, mb + 5, 2 * mb + 1 };
	const __u32 fma_splits[] = { 1, 2, ma, ma + 3 };
	size_t bytes = out_bytes(l), i;
	unsigned char *whole = malloc(bytes), *got = malloc(bytes);

	check_api(_metadata, l);
	check_odd_features(_metadata, l);
	if (run_split(_metadata, l, BASE, 1, whole)) {
		EXPECT_TRUE(false)
			TH_LOG("%s: baseline run failed", l->name);
		goto out;
	}
	check_ref(_metadata, l, (const float *)whole);
	for (i = 0; i < sizeof(splits) / sizeof(splits[0]); i++) {
		EXPECT_FALSE(run_split(_metadata, l, BASE, splits[i], got)
			     || memcmp(whole, got, bytes))
			TH_LOG("%s: baseline in %u parts differs from 1", l->name,
				       splits[i]);
	}
	/* Runs on any CPU: no FMA, so no AVX-512 kernel either. */
	EXPECT_FALSE(run_split(_metadata, l, VNPU_ENG_F_AVX512 | UNKNOWN_BITS, mb, got)
		     || memcmp(whole, got, bytes))
		TH_LOG("%s: AVX-512 without AVX2_FMA differs from the baseline", l->name);
	if (!(et_host_features & AVX2))
		goto out;
	EXPECT_FALSE(run_split(_metadata, l, AVX2 | UNKNOWN_BITS, ma, got)
		     || memcmp(whole, got, bytes))
		TH_LOG("%s: AVX2 with unknown bits differs from the baseline", l->name);
	/* The FMA paths' large units: the baseline's bits. */
	for (i = 0; i < sizeof(fma_splits) / sizeof(fma_splits[0]); i++) {
		EXPECT_FALSE(run_split(_metadata, l, AVX2, fma_splits[i], got)
			     || memcmp(whole, got, bytes))
			TH_LOG("%s: AVX2 in %u parts differs from the baseline", l->name,
				       fma_splits[i]);
	}
	if (et_host_features & VNPU_ENG_F_AVX512) {
		EXPECT_FALSE(run_split(_metadata, l, AVX2 | VNPU_ENG_F_AVX512, ma, got) ||
			     memcmp(whole, got, bytes))
			TH_LOG("%s: AVX-512 differs from the baseline", l->name);
	}
out:
	free(whole);
	free(got);
}

static void *new_tensor(struct ulayer *l, __u32 rank, const __u64 *dims)
{
	float *p;

	l->t[l->n] = et_dense(VNPU_DTYPE_F32, rank, dims);
	p = malloc(et_bytes(&l->t[l->n]));
	et_fill_f32(p, et_bytes(&l->t[l->n]) / 4);
	l->data[l->n++] = p;
	return p;
}

/* Checks and tests @l, then frees it; @dense: its weights before packing. */
static void test_layer(struct __test_metadata *_metadata, struct ulayer *l, void *dense)
{
	__u32 i;

	EXPECT_TRUE(!vnpu_eng_layer_check(l->op, l->t, l->n, attrs_of(l), attr_size_of(l)))
		TH_LOG("%s: check", l->name);
	check_layer(_metadata, l);
	if (l->data[1] != dense) {
		free(l->data[1]);
		l->data[1] = dense;
	}
	for (i = 0; i < l->n; i++)
		free(l->data[i]);
	free(l->ref);
}

/* Y[b] = A[b] B[b] (+ bias[n]) (+ R), relu'd when @relu; B packed when asked. */
static void gemm_units(struct __test_metadata *_metadata, __u64 batch, __u64 m, __u64 n, __u64 k,
		       __u32 flags,
		       int relu)
{
	struct ulayer l = { .op = VNPU_LAYER_GEMM, .depth = k };
	__u64 da[3] = { batch, m, k }, db[3] = { batch, k, n };
	__u64 dy[3] = { batch, m, n };
	__u32 r = batch > 1 ? 3 : 2, o = batch > 1 ? 0 : 1;
	float *a, *b, *bias = NULL, *res = NULL, *packed = NULL;
	__u64 bi, i, j, kk, size;

	a = new_tensor(&l, r, da + o);
	b = new_tensor(&l, r, db + o);
	if (flags & VNPU_LAYER_F_PACKED) {
		size = vnpu_eng_packed_size(VNPU_PACK_GEMM_B, 1, k, n);
		packed = malloc(size * 4);
		EXPECT_TRUE(!vnpu_eng_pack(VNPU_PACK_GEMM_B, b, 1, k, n, packed))
			TH_LOG("pack B");
		l.t[1] = et_dense(VNPU_DTYPE_F32, 1, &size);
		l.data[1] = packed;
	}
	if (flags & VNPU_LAYER_F_BIAS)
		bias = new_tensor(&l, 1, &n);
	if (flags & VNPU_LAYER_F_RESIDUAL)
		res = new_tensor(&l, r, dy + o);
	new_tensor(&l, r, dy + o);
	l.ref = malloc(batch * m * n * 4);
	for (bi = 0; bi < batch; bi++)
		for (i = 0; i < m; i++)
			for (j = 0; j < n; j++) {
				__u64 e = (bi * m + i) * n + j;
				double acc = bias ? bias[j] : 0;

				for (kk = 0; kk < k; kk++)
					acc += (double)a[(bi * m + i) * k + kk] *
					       b[(bi * k + kk) * n + j];
				acc += res ? res[e] : 0;
				l.ref[e] = (float)(relu && acc < 0 ? 0 : acc);
			}
	l.g.flags = flags;
	l.g.alpha = et_f32_bits(1.0f);
	l.g.beta = et_f32_bits(1.0f);
	l.g.act.func = relu ? VNPU_ACT_RELU : VNPU_ACT_IDENTITY;
	snprintf(l.name, sizeof(l.name), "gemm %llux%llux%llux%llu flags %u",
		 (unsigned long long)batch, (unsigned long long)m,
		 (unsigned long long)n, (unsigned long long)k, flags);
	test_layer(_metadata, &l, b);
}

struct conv_shape {
	__u64 c, h, w, m;
	__u32 group, k, stride, pad, flags;
};

/* One image, a square kernel, even pads; weights packed when asked. */
static void conv_units(struct __test_metadata *_metadata, const struct conv_shape *cs)
{
	struct ulayer l = { .op = VNPU_LAYER_CONV };
	__u64 cg = cs->c / cs->group, mg = cs->m / cs->group;
	__u64 oh = (cs->h + 2 * cs->pad - cs->k) / cs->stride + 1;
	__u64 ow = (cs->w + 2 * cs->pad - cs->k) / cs->stride + 1;
	__u64 dx[4] = { 1, cs->c, cs->h, cs->w }, dw[4] = { cs->m, cg, cs->k, cs->k };
	__u64 dy[4] = { 1, cs->m, oh, ow }, kt = cg * cs->k * cs->k, size;
	float *x, *w, *bias = NULL, *res = NULL, *packed = NULL;
	__u64 m, i, j, c, a, b;

	x = new_tensor(&l, 4, dx);
	w = new_tensor(&l, 4, dw);
	if (cs->flags & VNPU_LAYER_F_PACKED) {
		__u32 layout = cs->flags & VNPU_LAYER_F_LANES ? VNPU_PACK_CONV_LANES :
			       VNPU_PACK_CONV_W;

		size = vnpu_eng_packed_size(layout, cs->group, mg, kt);
		packed = malloc(size * 4);
		EXPECT_TRUE(!vnpu_eng_pack(layout, w, cs->group, mg, kt, packed))
			TH_LOG("pack W");
		l.t[1] = et_dense(VNPU_DTYPE_F32, 1, &size);
		l.data[1] = packed;
	}
	if (cs->flags & VNPU_LAYER_F_BIAS)
		bias = new_tensor(&l, 1, &cs->m);
	if (cs->flags & VNPU_LAYER_F_RESIDUAL)
		res = new_tensor(&l, 4, dy);
	new_tensor(&l, 4, dy);
	l.depth = kt;
	l.ref = malloc(cs->m * oh * ow * 4);
	for (m = 0; m < cs->m; m++)
		for (i = 0; i < oh; i++)
			for (j = 0; j < ow; j++) {
				__u64 e = (m * oh + i) * ow + j, g = m / mg;
				double acc = bias ? bias[m] : 0;

				for (c = 0; c < cg; c++)
					for (a = 0; a < cs->k; a++)
						for (b = 0; b < cs->k; b++) {
							long ih = (long)(i * cs->stride + a) - (long)cs->pad;
							long iw = (long)(j * cs->stride + b) - (long)cs->pad;

							if (ih < 0 || ih >= (long)cs->h ||
							    iw < 0 || iw >= (long)cs->w)
								continue;
							acc += (double)x[((g * cg + c) * cs->h + ih) * cs->w + iw] *
							       w[((m * cg + c) * cs->k + a) * cs->k + b];
						}
				l.ref[e] = (float)(acc + (res ? res[e] : 0));
			}
	l.c.flags = cs->flags;
	l.c.group = cs->group;
	l.c.kernel[0] = l.c.kernel[1] = cs->k;
	l.c.stride[0] = l.c.stride[1] = cs->stride;
	l.c.dilation[0] = l.c.dilation[1] = 1;
	l.c.pad_begin[0] = l.c.pad_begin[1] = cs->pad;
	l.c.pad_end[0] = l.c.pad_end[1] = cs->pad;
	snprintf(l.name, sizeof(l.name),
		 "conv c%llu %llux%llu m%llu g%u k%u s%u p%u flags %u",
		 (unsigned long long)cs->c, (unsigned long long)cs->h,
		 (unsigned long long)cs->w, (unsigned long long)cs->m,
		 cs->group, cs->k, cs->stride, cs->pad, cs->flags);
	test_layer(_metadata, &l, w);
}

/*
 * On every FMA path a CONV's first half of parts writes every output
 * channel of a first run of its columns and nothing else
 * (eng_conv_by_cols()): two tiles take the two spatial halves of the map,
 * each reading the input it mostly wrote, whatever the input's size
 * (here 576 KiB); so does a layer whose odd count of units splits again
 * (ResNet-50's 1x1 256 -> 1024 and 1024 -> 256 over 14x14: 11 blocks of
 * rows, each in two of columns; ENG_CONV_POS_COLS).
 */
static void conv_col_halves(struct __test_metadata *_metadata, __u64 c,
			    __u64 hw, __u64 m)
{
	static const __u32 paths[] = { AVX2, AVX2 | VNPU_ENG_F_AVX512 };
	__u64 dx[4] = { 1, c, hw, hw }, dw[4] = { m, c, 1, 1 };
	__u64 dy[4] = { 1, m, hw, hw }, cols = hw * hw, o, q, first;
	struct vnpu_layer_conv a = { .kernel = { 1, 1 }, .stride = { 1, 1 },
				     .dilation = { 1, 1 }, .group = 1 };
	struct vnpu_eng_ctx ctx = { 0 };
	struct vnpu_cmd_tensor t[3];
	void *data[3];
	__u32 *y, p, parts;

	t[0] = et_dense(VNPU_DTYPE_F32, 4, dx);
	t[1] = et_dense(VNPU_DTYPE_F32, 4, dw);
	t[2] = et_dense(VNPU_DTYPE_F32, 4, dy);
	for (p = 0; p < 3; p++) {
		data[p] = malloc(et_bytes(&t[p]));
		et_fill_f32(data[p], et_bytes(&t[p]) / 4);
	}
	y = data[2];
	for (p = 0; p < sizeof(paths) / sizeof(paths[0]); p++) {
		if ((et_host_features & paths[p]) != paths[p])
			continue;
		parts = vnpu_eng_layer_max_parts(VNPU_LAYER_CONV, t, 3, &a, paths[p]);
		ctx.features = paths[p];
		ctx.scratch_size = vnpu_eng_layer_scratch(VNPU_LAYER_CONV, t, 3, &a,
							  parts, paths[p]);
		ctx.scratch = malloc(ctx.scratch_size);
		memset(y, 0xff, et_bytes(&t[2]));
		for (q = 0; q < parts / 2; q++)
			EXPECT_EQ(0, vnpu_eng_layer_run(VNPU_LAYER_CONV, t, data, 3, &a,
							(__u32)q, parts, &ctx));
		free(ctx.scratch);
		/*
		 * Each channel's columns written: a first run, about half
		 * (a middle block of columns may split by channels).
		 */
		for (o = 0; o < m; o++) {
			for (first = 0; first < cols && y[o * cols + first] != ~0u; first++)
				;
			for (q = first; q < cols && y[o * cols + q] == ~0u; q++)
				;
			EXPECT_TRUE(q == cols && 4 * first >= cols && 4 * first <= 3 * cols)
				TH_LOG("%llu -> %llu over %llux%llu, features %#x, %u parts: half wrote channel %llu's columns to %llu, then %llu of %llu",
				       (unsigned long long)c, (unsigned long long)m,
				       (unsigned long long)hw, (unsigned long long)hw,
				       paths[p], parts, (unsigned long long)o,
				       (unsigned long long)first, (unsigned long long)q,
				       (unsigned long long)cols);
			if (q != cols || 4 * first < cols || 4 * first > 3 * cols)
				break;
		}
	}
	for (p = 0; p < 3; p++)
		free(data[p]);
}

static void check_conv_col_halves(struct __test_metadata *_metadata)
{
	conv_col_halves(_metadata, 64, 48, 512);
	conv_col_halves(_metadata, 256, 14, 1024);
	conv_col_halves(_metadata, 1024, 14, 256);
}

/*
 * The FMA paths' units: GEMM 1024^3 in 22 (11 blocks of 96 rows by 2 of
 * 512 columns), conv 3x3 (Winograd, 196 tiles) in 5: runs of 64 tiles
 * (4, 4, 4 and 1 panels: 8 and 5 over two tiles, uneven) narrow to 48 (3,
 * 3, 3, 3 and 1: 7 and 6), a part each with its 2 blocks of 36 rows. A
 * Winograd part is a run of tiles with all its blocks of rows where the
 * runs' whole panels split evenly: the baseline's 3 blocks of 24 rows by
 * 13 runs of 16 tiles (7 and 6 panels) in 13 parts, 64 x 80 x 80's 2
 * blocks by 7 runs (13 and 12) in 7; one run (64 x 14 x 14, 16 tiles) a
 * part per unit, two blocks of 36 rows (eng_wino_rows()).
 */
static void check_fma_units(struct __test_metadata *_metadata)
{
	__u64 d[2] = { 1024, 1024 }, dx[4] = { 1, 64, 56, 56 };
	__u64 dw = vnpu_eng_packed_size(VNPU_PACK_WINO_W, 1, 64, 64 * 9);
	static const __u64 few[][3] = {
		/* h, w, parts */
		{ 14, 14, 2 }, { 80, 80, 7 },
	};
	struct vnpu_layer_gemm g = { .alpha = 0x3f800000 };
	struct vnpu_layer_conv c = {
		.flags = VNPU_LAYER_F_WINO, .group = 1, .kernel = { 3, 3 },
		.stride = { 1, 1 }, .dilation = { 1, 1 }, .pad_begin = { 1, 1 },
		.pad_end = { 1, 1 },
	};
	struct vnpu_cmd_tensor t[3];
	__u32 i;

	t[0] = t[1] = t[2] = et_dense(VNPU_DTYPE_F32, 2, d);
	EXPECT_EQ(22, vnpu_eng_layer_max_parts(VNPU_LAYER_GEMM, t, 3, &g, AVX2))
		TH_LOG("GEMM 1024^3: AVX2 units");
	EXPECT_EQ(86 * 64, vnpu_eng_layer_max_parts(VNPU_LAYER_GEMM, t, 3, &g, BASE))
		TH_LOG("GEMM 1024^3: baseline units of 12 x 16");
	t[0] = et_dense(VNPU_DTYPE_F32, 4, dx);
	t[1] = et_dense(VNPU_DTYPE_F32, 1, &dw);
	t[2] = et_dense(VNPU_DTYPE_F32, 4, dx);
	EXPECT_EQ(5, vnpu_eng_layer_max_parts(VNPU_LAYER_CONV, t, 3, &c, AVX2))
		TH_LOG("conv 3x3 64x56x56: AVX2 runs of 48 tiles");
	EXPECT_EQ(13, vnpu_eng_layer_max_parts(VNPU_LAYER_CONV, t, 3, &c, BASE))
		TH_LOG("conv 3x3 64x56x56: baseline runs of 16 tiles");
	/* Tiles taking runs of parts: a part per unit (an odd count of runs). */
	EXPECT_EQ(10, vnpu_eng_layer_max_parts(VNPU_LAYER_CONV, t, 3, &c,
					       AVX2 | VNPU_ENG_F_RUNS))
		TH_LOG("conv 3x3 64x56x56: AVX2 runs of parts, blocks of 32 rows");
	EXPECT_EQ(143, vnpu_eng_layer_max_parts(VNPU_LAYER_CONV, t, 3, &c,
						BASE | VNPU_ENG_F_RUNS))
		TH_LOG("conv 3x3 64x56x56: baseline runs of parts");
	for (i = 0; i < sizeof(few) / sizeof(few[0]); i++) {
		dx[2] = few[i][0];
		dx[3] = few[i][1];
		t[0] = et_dense(VNPU_DTYPE_F32, 4, dx);
		t[2] = t[0];
		EXPECT_EQ(few[i][2], vnpu_eng_layer_max_parts(VNPU_LAYER_CONV, t, 3, &c, AVX2))
			TH_LOG("conv 3x3 64x%llux%llu: parts",
			       (unsigned long long)few[i][0],
			       (unsigned long long)few[i][1]);
	}
}

/*
 * A Winograd layer of one run of tiles takes an even count of large
 * blocks of rows (eng_wino_rows()): CRNN's 512 -> 512 over 3x80 (one run
 * of 20 tiles) in 6 blocks of 90 rows (once 15 of 36), ResNet-50's
 * 256 -> 256 over 14x14 in 4 of 66 (once 22 of 12), 64 -> 256 in 4 and
 * 256 -> 64 in 2 of 36 rows; ResNet-50's 128 -> 128 over 28x28 (one run of 4 panels) in two runs of 2 panels
 * (32 and 17 tiles), a part each with its 6 blocks of 24 rows, each tile
 * transforming its own run's input; a
 * direct convolution of an odd count below ENG_CONV_ODD_UNITS halves its
 * columns where it takes its map by columns and has ENG_CONV_POS_COLS of
 * them (1x1 256 -> 1024 over 14x14: 11 blocks of 96 rows, each in two of
 * columns, not 22 of 48 rows) or where it has fewer than 48 rows (1x1
 * 1024 -> 256 over 14x14: 11 blocks of 24 rows, each in two of columns),
 * else its rows; a larger odd
 * count (1x1 256 -> 64 over 56x56: 13 blocks of columns) and an even
 * count (64 -> 128 over 28x28) stay as they are.
 */
static void check_balance(struct __test_metadata *_metadata)
{
	static const __u64 convs[][6] = {
		/* c, h, w, m, k, units */
		{ 512, 3, 80, 512, 3, 6 }, { 256, 14, 14, 256, 3, 4 },
		{ 64, 14, 14, 256, 3, 4 }, { 256, 14, 14, 64, 3, 2 },
		{ 128, 28, 28, 128, 3, 2 },
		{ 256, 14, 14, 1024, 1, 22 }, { 1024, 14, 14, 256, 1, 22 },
		{ 256, 56, 56, 64, 1, 13 }, { 64, 28, 28, 128, 1, 8 },
	};
	struct vnpu_layer_conv c = {
		.group = 1, .stride = { 1, 1 }, .dilation = { 1, 1 },
	};
	struct vnpu_cmd_tensor t[3];
	__u64 dx[4] = { 1 }, dy[4] = { 1 }, dw;
	__u32 i;

	for (i = 0; i < sizeof(convs) / sizeof(convs[0]); i++) {
		__u64 k = convs[i][4], p = k / 2;

		dx[1] = convs[i][0];
		dx[2] = dy[2] = convs[i][1];
		dx[3] = dy[3] = convs[i][2];
		dy[1] = convs[i][3];
		c.kernel[0] = c.kernel[1] = k;
		c.pad_begin[0] = c.pad_begin[1] = p;
		c.pad_end[0] = c.pad_end[1] = p;
		c.flags = k == 3 ? VNPU_LAYER_F_WINO : VNPU_LAYER_F_PACKED;
		dw = vnpu_eng_packed_size(k == 3 ? VNPU_PACK_WINO_W : VNPU_PACK_CONV_W,
					  1, dy[1], dx[1] * k * k);
		t[0] = et_dense(VNPU_DTYPE_F32, 4, dx);
		t[1] = et_dense(VNPU_DTYPE_F32, 1, &dw);
		t[2] = et_dense(VNPU_DTYPE_F32, 4, dy);
		EXPECT_EQ(convs[i][5], vnpu_eng_layer_max_parts(VNPU_LAYER_CONV, t, 3, &c, AVX2))
			TH_LOG("conv %llux%llux%llu -> %llu, %llux%llu: units",
			       (unsigned long long)dx[1], (unsigned long long)dx[2],
			       (unsigned long long)dx[3], (unsigned long long)dy[1],
			       (unsigned long long)k, (unsigned long long)k);
	}
}

/*
 * A Winograd layer of one map in an odd count of runs of tiles whose
 * weights fit L2 (eng_wino_odd()), runs that do not split evenly as
 * parts (eng_wino_even()), runs a part per unit, its short last
 * run in the middle (eng_wino_run()), so that two tiles taking half the
 * parts each (the CPU device's first runs of parts; any even count of
 * parts cuts the units there) get half the work, by whole panels of
 * tiles times whole micro-tile rows, within 8:7: YOLOv8n's 64 x 64 and
 * 80 x 80 over 40x40 (100 tiles: runs of 48, 4 and 48) on every path,
 * F(2x2, 3x3)'s over 20x20 (100 tiles), odd maps of 5 to 11 panels.
 * Without the middle run, 64 x 64's halves weighed 45 and 32. Places
 * map one-to-one onto runs for every count.
 */
static void check_wino_halves(struct __test_metadata *_metadata)
{
	static const __u64 shapes[][5] = {
		/* c, h, w, m, wt */
		{ 64, 40, 40, 64, 4 }, { 80, 40, 40, 80, 4 },
		{ 64, 20, 20, 64, 2 }, { 32, 36, 36, 48, 4 },
		{ 40, 44, 40, 40, 4 }, { 32, 56, 40, 32, 2 },
	};
	static const __u32 paths[] = {
		BASE, AVX2, AVX2 | VNPU_ENG_F_AVX512,
		AVX2 | VNPU_ENG_F_AVX512 | VNPU_ENG_F_AVX512_BF16,
	};
	__u64 i, p, q, r, runs, seen, units, mb, ntb, tiles, w[2], run, t0, len;
	struct eng_conv_shape s;
	struct eng_unit u;

	for (runs = 1; runs < 10; runs++) {
		seen = 0;
		for (q = 0; q < runs; q++)
			seen |= 1ull << eng_wino_run(q, runs);
		EXPECT_EQ((1ull << runs) - 1, seen)
			TH_LOG("eng_wino_run: %llu runs", (unsigned long long)runs);
	}
	for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
		for (p = 0; p < sizeof(paths) / sizeof(paths[0]); p++) {
			memset(&s, 0, sizeof(s));
			s.n = s.group = 1;
			s.c = s.cg = shapes[i][0];
			s.h = s.oh = shapes[i][1];
			s.w = s.ow = shapes[i][2];
			s.m = s.mg = shapes[i][3];
			s.kh = s.kw = 3;
			s.wh = s.ww = shapes[i][4];
			eng_wino_unit(&s, paths[p], &u);
			tiles = eng_wino_tiles(&s);
			ntb = eng_div_up(tiles, u.cols);
			mb = eng_div_up(s.mg, u.rows);
			units = ntb * mb;
			if (!eng_wino_odd(&s, u.cols) ||
			    eng_wino_even(1, tiles, u.cols,
					  eng_wino_tail(&s, paths[p], tiles)))
				continue;
			EXPECT_EQ(units, eng_wino_parts(&s, paths[p]))
				TH_LOG("shape %llu: a part per unit", (unsigned long long)i);
			w[0] = w[1] = 0;
			for (q = 0; q < units; q++) {
				run = eng_wino_run(q / mb, ntb);
				r = eng_min(u.rows, s.mg - q % mb * u.rows);
				t0 = run * u.cols;
				len = eng_min(u.cols, tiles - t0);
				w[q >= units / 2] += eng_div_up(len, ENG_NR) *
						     eng_div_up(r, ENG_MR);
			}
			EXPECT_TRUE(7 * eng_max(w[0], w[1]) <= 8 * eng_min(w[0], w[1]))
				TH_LOG("shape %llu path %llu: halves %llu and %llu",
				       (unsigned long long)i, (unsigned long long)p,
				       (unsigned long long)w[0], (unsigned long long)w[1]);
		}
	/* YOLOv8n's 64 x 64 over 40x40 on the FMA paths: 3 runs of 3 blocks. */
	memset(&s, 0, sizeof(s));
	s.n = s.group = 1;
	s.c = s.cg = s.m = s.mg = 64;
	s.h = s.oh = s.w = s.ow = 40;
	s.kh = s.kw = 3;
	s.wh = s.ww = 4;
	EXPECT_EQ(9, eng_wino_parts(&s, AVX2)) TH_LOG("64 x 64 over 40x40: parts");
	/*
	 * ResNet-50's 128 x 128 over 28x28 (49 tiles) on AVX2: a part per
	 * run of 32 tiles, each run 2 blocks of 66 rows; with AVX-512, whose
	 * GEMMs take the 49th tile as a tail column (eng_wino_tail()), runs
	 * of 32 and 17 would weigh 2 and 1.25 panels: one run of 49 tiles in
	 * 2 blocks of 66 rows, a part each (the baseline's stay small).
	 */
	s.c = s.cg = s.m = s.mg = 128;
	s.h = s.oh = s.w = s.ow = 28;
	for (p = 1; p < sizeof(paths) / sizeof(paths[0]); p++) {
		__u64 cols = paths[p] & VNPU_ENG_F_AVX512 ? 64 : 32;

		eng_wino_unit(&s, paths[p] | VNPU_ENG_F_RUNS, &u);
		EXPECT_EQ(cols, u.cols) TH_LOG("128 x 128 over 28x28: tiles");
		EXPECT_EQ(66, u.rows) TH_LOG("128 x 128 over 28x28: rows");
		EXPECT_EQ(2, eng_wino_parts(&s, paths[p] | VNPU_ENG_F_RUNS))
			TH_LOG("128 x 128 over 28x28: parts");
	}
	eng_wino_unit(&s, BASE, &u);
	EXPECT_TRUE(u.rows < 66) TH_LOG("128 x 128 over 28x28: baseline rows");
}

/*
 * A packed int8 convolution of few blocks of positions splits its
 * channels in whole, even blocks of tiles where it can, and counts the
 * tiles it computes: mobilenetv3's squeeze-excite 960 -> 240 over a 1x1
 * map in 10 blocks of 24 channels (not 7 of 36), at 32 positions' cost;
 * 40 -> 120 over 28x28 in 10 blocks of 12 (not 5 of 24). A layer of
 * 2^25 sums or more, 16 units at least: resnet50's 128 -> 512 over 28x28
 * (one column block) in 16 (not 9), 512 -> 512 (3 column blocks) in 18
 * (not 12).
 */
static void check_qconv_blocks(struct __test_metadata *_metadata)
{
	static const __u64 convs[][4] = {
		/* c, hw, m, units */
		{ 960, 1, 240, 10 }, { 40, 28, 120, 10 },
		{ 128, 28, 512, 16 }, { 512, 28, 512, 18 },
	};
	struct vnpu_layer_conv a = {
		.flags = VNPU_LAYER_F_PACKED, .group = 1, .kernel = { 1, 1 },
		.stride = { 1, 1 }, .dilation = { 1, 1 },
	};
	__u64 dx[4] = { 1 }, dy[4] = { 1 };
	struct vnpu_cmd_tensor t[10];
	__u32 i;

	memset(t, 0, sizeof(t));
	for (i = 0; i < sizeof(convs) / sizeof(convs[0]); i++) {
		dx[1] = convs[i][0];
		dy[1] = convs[i][2];
		dx[2] = dx[3] = dy[2] = dy[3] = convs[i][1];
		t[0] = et_dense(VNPU_DTYPE_U8, 4, dx);
		t[9] = et_dense(VNPU_DTYPE_U8, 4, dy);
		EXPECT_EQ(convs[i][3], vnpu_eng_layer_max_parts(VNPU_LAYER_QLINEAR_CONV,
								t, 10, &a, AVX2))
			TH_LOG("qconv %llu -> %llu over %llux%llu: units",
			       (unsigned long long)dx[1], (unsigned long long)dy[1],
			       (unsigned long long)dx[2], (unsigned long long)dx[3]);
	}
	dx[1] = 960;
	dy[1] = 240;
	dx[2] = dx[3] = dy[2] = dy[3] = 1;
	t[0] = et_dense(VNPU_DTYPE_U8, 4, dx);
	t[9] = et_dense(VNPU_DTYPE_U8, 4, dy);
	EXPECT_EQ(2ull * 240 * 32 * 960,
		  vnpu_eng_layer_cost(VNPU_LAYER_QLINEAR_CONV, t, 10, &a))
		TH_LOG("qconv 960 -> 240 over 1x1: the cost of 32 positions");
}

/*
 * A packed int8 convolution of two blocks of positions, the last under
 * three quarters of the first, runs as one block cut by channels only:
 * resnet50_qdq's 1024 -> 256 over 14x14 (blocks of 128 and 68 positions)
 * and 512 -> 512 3x3 over 7x7 (32 and 17), each in 16 units; two even
 * halves stay two blocks (64 -> 256 over 56x56: 1568 and 1568). So does
 * a large one of two or three blocks whose weights are more bytes than
 * its input and output, so that each of two CPUs reads half the weights:
 * resnet50_qdq's 3x3 256 -> 256 over 14x14 (blocks of 64, 64 and 68
 * positions) in 16 units. Not a small layer (a 5x5 40 -> 13 over 16x16:
 * two blocks) nor one of fewer bytes of weights (512 -> 128 over 28x28:
 * three blocks).
 */
static void check_qconv_one_block(struct __test_metadata *_metadata)
{
	static const __u64 convs[][6] = {
		/* c, hw, m, k, column blocks, units */
		{ 1024, 14, 256, 1, 1, 16 }, { 512, 7, 512, 3, 1, 16 },
		{ 64, 56, 256, 1, 2, 16 }, { 256, 14, 256, 3, 1, 16 },
		{ 40, 16, 13, 5, 2, 4 }, { 512, 28, 128, 1, 3, 18 },
	};
	struct vnpu_layer_conv a = {
		.flags = VNPU_LAYER_F_PACKED, .group = 1, .stride = { 1, 1 },
		.dilation = { 1, 1 },
	};
	struct eng_conv_shape s;
	struct eng_qplan p;
	__u32 i;

	for (i = 0; i < sizeof(convs) / sizeof(convs[0]); i++) {
		memset(&s, 0, sizeof(s));
		s.n = s.group = 1;
		s.c = s.cg = convs[i][0];
		s.m = s.mg = convs[i][2];
		s.h = s.oh = s.w = s.ow = convs[i][1];
		s.kh = s.kw = convs[i][3];
		a.kernel[0] = a.kernel[1] = (__u32)convs[i][3];
		a.pad_begin[0] = a.pad_begin[1] = (__u32)convs[i][3] / 2;
		a.pad_end[0] = a.pad_end[1] = (__u32)convs[i][3] / 2;
		eng_qplan(&s, &a, &p);
		EXPECT_EQ(convs[i][4], p.nb)
			TH_LOG("qconv %llu -> %llu over %llux%llu: column blocks",
			       (unsigned long long)convs[i][0],
			       (unsigned long long)convs[i][2],
			       (unsigned long long)convs[i][1],
			       (unsigned long long)convs[i][1]);
		EXPECT_EQ(convs[i][5], p.units)
			TH_LOG("qconv %llu -> %llu: units",
			       (unsigned long long)convs[i][0],
			       (unsigned long long)convs[i][2]);
		EXPECT_EQ(convs[i][1] * convs[i][1], p.pos * (p.nb - 1) + p.last)
			TH_LOG("qconv %llu -> %llu: positions of the blocks",
			       (unsigned long long)convs[i][0],
			       (unsigned long long)convs[i][2]);
	}
}

/*
 * F(4x4)'s blocks of tile rows (eng_qw4_plan()): the least cost of an
 * image's sums, then of its first block, a tail of 8 tiles or fewer past
 * the whole vectors as its share: ResNet-50's 56x56 as two blocks of 7
 * tile rows (98 tiles: 6 vectors and a tail of 2, not 8 rows' 7 vectors
 * and 6 rows' 5 and a tail of 4), 50x53 as 7 and 6 rows, 20x50 (5 rows of
 * 13 tiles: 4 vectors and a tail of 1) as one block, 28x28 as one block
 * of 7 rows (3 vectors and a tail of 1).
 */
static void check_qw4_blocks(struct __test_metadata *_metadata)
{
	static const __u64 maps[][5] = {
		/* oh, ow, block rows, blocks, vectors of V */
		{ 56, 56, 7, 2, 7 }, { 50, 53, 7, 2, 7 }, { 20, 50, 5, 1, 5 },
		{ 28, 28, 7, 1, 4 }, { 9, 48, 3, 1, 3 },
	};
	struct eng_qw4plan p;
	__u32 i;

	EXPECT_EQ((__u64)(6 * 64 + 10), eng_qw4_cost(98));
	EXPECT_EQ((__u64)(6 * 64), eng_qw4_cost(90));
	for (i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		struct eng_conv_shape s = {
			.n = 1, .c = 64, .m = 64, .h = maps[i][0], .w = maps[i][1],
			.oh = maps[i][0], .ow = maps[i][1], .kh = 3, .kw = 3,
			.group = 1, .cg = 64, .mg = 64,
		};

		eng_qw4_plan(&s, &p);
		EXPECT_EQ(maps[i][2], p.tb)
			TH_LOG("F(4x4) over %llux%llu: block rows",
			       (unsigned long long)maps[i][0], (unsigned long long)maps[i][1]);
		EXPECT_EQ(maps[i][3], p.nb)
			TH_LOG("F(4x4) over %llux%llu: blocks",
			       (unsigned long long)maps[i][0], (unsigned long long)maps[i][1]);
		EXPECT_EQ(maps[i][4], p.nv)
			TH_LOG("F(4x4) over %llux%llu: vectors",
			       (unsigned long long)maps[i][0], (unsigned long long)maps[i][1]);
		EXPECT_EQ(4 * p.nb, p.units);
	}
}

/*
 * A GEMM of one block with the work of two units (an STFT's 97 x 257 x
 * 512, a 2048 x 512 matrix by a vector) runs in two; a small one in one.
 */
static void check_gemm_halves(struct __test_metadata *_metadata)
{
	static const __u64 shapes[][4] = {
		/* m, n, k, units */
		{ 97, 257, 512, 2 }, { 1, 512, 2048, 2 }, { 16, 64, 64, 1 },
		{ 1, 16, 1u << 20, 1 },
	};
	struct vnpu_layer_gemm g = { .alpha = 0x3f800000 };
	struct vnpu_cmd_tensor t[3];
	__u64 d[2];
	__u32 i;

	for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		d[0] = shapes[i][0];
		d[1] = shapes[i][2];
		t[0] = et_dense(VNPU_DTYPE_F32, 2, d);
		d[0] = shapes[i][2];
		d[1] = shapes[i][1];
		t[1] = et_dense(VNPU_DTYPE_F32, 2, d);
		d[0] = shapes[i][0];
		t[2] = et_dense(VNPU_DTYPE_F32, 2, d);
		EXPECT_EQ(shapes[i][3], vnpu_eng_layer_max_parts(VNPU_LAYER_GEMM, t, 3, &g, AVX2))
			TH_LOG("GEMM %llux%llux%llu: %llu units", (unsigned long long)shapes[i][0],
			       (unsigned long long)shapes[i][1], (unsigned long long)shapes[i][2],
			       (unsigned long long)shapes[i][3]);
	}
}

/*
 * Where the lanes layout pays (eng_lanes_pays()): 1x1s and 3x3s of stride
 * 1 on maps of up to 49 positions, 3x3s of stride 2 onto up to 196
 * (ResNet-50's layer3.0 and layer4.0), with AVX-512 only, rows of 5 or
 * more; not a 1x1 of stride 2, larger maps or shorter rows.
 */
static void check_lanes_pays(struct __test_metadata *_metadata)
{
	static const __u64 cases[][7] = {
		/* k, stride, pad, oh, ow, AVX-512 pays, AVX2 pays */
		{ 1, 1, 0, 7, 7, 1, 0 }, { 3, 1, 1, 7, 7, 1, 0 },
		{ 3, 1, 1, 8, 8, 0, 0 }, { 3, 2, 1, 7, 7, 1, 0 },
		{ 3, 2, 1, 6, 6, 1, 0 }, { 3, 2, 1, 14, 14, 1, 0 },
		{ 3, 2, 1, 15, 15, 0, 0 }, { 1, 2, 0, 7, 7, 0, 0 },
		{ 3, 2, 1, 12, 4, 0, 0 }, { 3, 1, 2, 7, 7, 0, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		__u32 k = (__u32)cases[i][0], st = (__u32)cases[i][1];
		__u32 pad = (__u32)cases[i][2];
		struct vnpu_layer_conv a = {
			.group = 1, .kernel = { k, k }, .stride = { st, st },
			.dilation = { 1, 1 }, .pad_begin = { pad, pad },
			.pad_end = { pad, pad },
		};
		struct eng_conv_shape s = {
			.n = 1, .c = 512, .m = 512, .oh = cases[i][3],
			.ow = cases[i][4], .kh = k, .kw = k, .group = 1,
			.cg = 512, .mg = 512,
		};

		s.h = (s.oh - 1) * st + k - 2 * pad;
		s.w = (s.ow - 1) * st + k - 2 * pad;
		EXPECT_EQ((int)cases[i][5],
			  eng_lanes_pays(&a, &s, AVX2 | VNPU_ENG_F_AVX512))
			TH_LOG("lanes pays: %llux%llu stride %llu onto %llux%llu, AVX-512",
			       (unsigned long long)k, (unsigned long long)k,
			       (unsigned long long)st, (unsigned long long)s.oh,
			       (unsigned long long)s.ow);
		EXPECT_EQ((int)cases[i][6], eng_lanes_pays(&a, &s, AVX2))
			TH_LOG("lanes pays: case %zu, AVX2", i);
	}
}

/*
 * Output channels on the lanes (VNPU_LAYER_F_LANES, VNPU_PACK_CONV_LANES)
 * give the bits of the same weights packed as VNPU_PACK_CONV_W, on every
 * path: a 7x7 map's 1x1 (ResNet-50's layer4, fewer channels), a 3x3
 * without padding (rows of 7 + 2 positions), two groups, and 3x3s over
 * padded planes: layer4's (fewer channels), uneven pads, two groups; of
 * stride 2 (the copy's rows by phase): layer4.0's 3x3 (fewer channels),
 * a 1x1 over odd rows, uneven pads and two groups, rows the copy splits
 * in vectors; depths of several of the AVX-512 tiles' slices
 * (ENG_LANES_KC: 1800, 2304 and 4806 deep, sums kept between slices by
 * position, a tile's second row among them); in 1, 2, 3 and 1000 parts.
 */
static void check_lanes_bits(struct __test_metadata *_metadata)
{
	static const __u64 convs[][11] = {
		/* c, h, w, m, k, group, pads top, left, bottom, right, stride */
		{ 512, 7, 7, 100, 1, 1 }, { 30, 11, 11, 50, 3, 1 },
		{ 40, 6, 6, 24, 1, 2 }, { 200, 7, 7, 70, 3, 1, 1, 1, 1, 1 },
		{ 30, 6, 8, 40, 3, 1, 1, 0, 2, 1 },
		{ 48, 7, 5, 36, 3, 2, 0, 2, 1, 1 },
		{ 96, 14, 14, 70, 3, 1, 1, 1, 1, 1, 2 },
		{ 64, 13, 15, 40, 1, 1, 0, 0, 0, 0, 2 },
		{ 30, 9, 12, 40, 3, 2, 1, 0, 2, 1, 2 },
		/*
		 * AVX-512's tiles of two rows: rows of 14 positions (two
		 * tiles each), an odd count of rows; units that end
		 * inside a row (105 of 196 positions) take one row a tile
		 */
		{ 48, 28, 28, 40, 3, 1, 1, 1, 1, 1, 2 },
		{ 64, 14, 14, 36, 1, 1, 0, 0, 0, 0 },
		{ 534, 28, 28, 40, 3, 1, 1, 1, 1, 1, 2 },
		/*
		 * The copy's rows split into both phases eight inputs at a
		 * time: an odd row of 37, no right pad, two groups
		 */
		{ 40, 21, 37, 40, 3, 2, 0, 1, 1, 0, 2 },
		/* Two whole slices of depth over a 7x7 map's tiles of two rows */
		{ 256, 7, 7, 40, 3, 1, 1, 1, 1, 1 },
	};
	const __u32 feats[] = { BASE, AVX2, AVX2 | VNPU_ENG_F_AVX512 };
	__u32 i, j, f;

	for (i = 0; i < sizeof(convs) / sizeof(convs[0]); i++) {
		__u64 c = convs[i][0], h = convs[i][1], w = convs[i][2];
		__u64 m = convs[i][3], k = convs[i][4], g = convs[i][5];
		__u64 cg = c / g, kt = cg * k * k;
		__u64 st = convs[i][10] ? convs[i][10] : 1;
		__u64 oh = (h + convs[i][6] + convs[i][8] - k) / st + 1;
		__u64 ow = (w + convs[i][7] + convs[i][9] - k) / st + 1;
		__u64 dx[4] = { 1, c, h, w }, dy[4] = { 1, m, oh, ow };
		__u64 sw = vnpu_eng_packed_size(VNPU_PACK_CONV_W, g, m / g, kt);
		__u64 sl = vnpu_eng_packed_size(VNPU_PACK_CONV_LANES, g, m / g, kt);
		struct vnpu_layer_conv a = {
			.flags = VNPU_LAYER_F_PACKED | VNPU_LAYER_F_BIAS,
			.group = (__u32)g, .kernel = { k, k }, .stride = { st, st },
			.dilation = { 1, 1 }, .act = { .func = VNPU_ACT_RELU },
			.pad_begin = { convs[i][6], convs[i][7] },
			.pad_end = { convs[i][8], convs[i][9] },
		};
		struct vnpu_layer_conv al = a;
		struct vnpu_cmd_tensor t[4];
		float *dense = malloc(m * kt * 4), *pw = malloc(sw * 4);
		float *pl = malloc(sl * 4), *y0 = malloc(m * oh * ow * 4);
		float *y1 = malloc(m * oh * ow * 4);
		void *d[4];

		al.flags |= VNPU_LAYER_F_LANES;
		et_fill_f32(dense, m * kt);
		EXPECT_TRUE(!vnpu_eng_pack(VNPU_PACK_CONV_W, dense, g, m / g, kt, pw) &&
			    !vnpu_eng_pack(VNPU_PACK_CONV_LANES, dense, g, m / g, kt, pl))
			TH_LOG("pack");
		t[0] = et_dense(VNPU_DTYPE_F32, 4, dx);
		t[2] = et_dense(VNPU_DTYPE_F32, 1, &m);
		t[3] = et_dense(VNPU_DTYPE_F32, 4, dy);
		d[0] = malloc(c * h * w * 4);
		d[2] = malloc(m * 4);
		et_fill_f32(d[0], c * h * w);
		et_fill_f32(d[2], m);
		for (f = 0; f < sizeof(feats) / sizeof(feats[0]); f++) {
			if ((feats[f] & ~et_host_features) != 0)
				continue;
			t[1] = et_dense(VNPU_DTYPE_F32, 1, &sw);
			d[1] = pw;
			d[3] = y0;
			EXPECT_EQ(0, et_run(VNPU_LAYER_CONV, t, d, 4, &a, sizeof(a), feats[f], 1));
			t[1] = et_dense(VNPU_DTYPE_F32, 1, &sl);
			d[1] = pl;
			for (j = 1; j <= 4; j++) {
				d[3] = y1;
				memset(y1, 0x7f, m * oh * ow * 4);
				EXPECT_EQ(0, et_run(VNPU_LAYER_CONV, t, d, 4, &al, sizeof(al),
						    feats[f], j == 4 ? 1000 : j));
				EXPECT_EQ(0, memcmp(y0, y1, m * oh * ow * 4))
					TH_LOG("lanes conv %llu -> %llu over %llux%llu k%llu s%llu g%llu, features %#x, %u parts: bits differ",
					       (unsigned long long)c, (unsigned long long)m,
					       (unsigned long long)h, (unsigned long long)w,
					       (unsigned long long)k, (unsigned long long)st,
					       (unsigned long long)g,
					       feats[f], j);
			}
		}
		free(dense); free(pw); free(pl); free(y0); free(y1);
		free(d[0]); free(d[2]);
	}
}

/*
 * eng_even_at(): blocks of whole steps, none past the most that gave
 * their count, the last cut at the total, and two halves of an even count
 * within a step of each other.
 */
TEST(even_blocks)
{
	static const __u64 steps[] = { 1, 6, 16, 32 };
	__u64 si, step, total, max, n, i, a, b, len;

	for (si = 0; si < sizeof(steps) / sizeof(steps[0]); si++)
		for (step = steps[si], total = 1; total <= 700; total++)
			for (max = step; max <= 8 * step; max += step) {
				n = eng_div_up(total, max);
				ASSERT_EQ(0, eng_even_at(0, n, total, step));
				ASSERT_EQ(total, eng_even_at(n, n, total, step));
				for (i = 0; i < n; i++) {
					a = eng_even_at(i, n, total, step);
					b = eng_even_at(i + 1, n, total, step);
					len = b - a;
					ASSERT_TRUE(len > 0 && len <= max &&
						    (len % step == 0 || b == total))
						TH_LOG("%llu of %llu blocks over %llu, step %llu, max %llu: [%llu, %llu)",
						       (unsigned long long)i,
						       (unsigned long long)n,
						       (unsigned long long)total,
						       (unsigned long long)step,
						       (unsigned long long)max,
						       (unsigned long long)a,
						       (unsigned long long)b);
				}
				if (n % 2)
					continue;
				a = eng_even_at(n / 2, n, total, step);
				b = total - a;
				ASSERT_TRUE(a <= b + step && b <= a + step);
			}
}

/*
 * The part cost (vnpu_eng_layer_part_cost()): a GEMM or CONV on the
 * AVX512-BF16 kernels counts half vnpu_eng_layer_cost(), 1x1 and
 * Winograd; the same layer on features without them, with f32 weights,
 * or a CONV of one panel of output channels (widened) counts it whole.
 */
static void check_bf16_part_cost(struct __test_metadata *_metadata)
{
	const __u32 bf = AVX2 | VNPU_ENG_F_AVX512 | VNPU_ENG_F_AVX512_BF16;
	const __u32 fma = AVX2 | VNPU_ENG_F_AVX512;
	struct vnpu_layer_gemm g = { .flags = VNPU_LAYER_F_PACKED, .alpha = 0x3f800000 };
	struct vnpu_layer_conv c = {
		.flags = VNPU_LAYER_F_PACKED, .group = 1, .kernel = { 1, 1 },
		.stride = { 1, 1 }, .dilation = { 1, 1 },
	};
	__u64 da[2] = { 64, 256 }, dy[2] = { 64, 96 }, size = 96 * 256, cost;
	__u64 dx[4] = { 1, 64, 20, 20 }, dc[4] = { 1, 64, 20, 20 };
	struct vnpu_cmd_tensor t[3] = { et_dense(VNPU_DTYPE_F32, 2, da),
					et_dense(VNPU_DTYPE_BF16, 1, &size),
					et_dense(VNPU_DTYPE_F32, 2, dy) };
	__u32 i;

	cost = vnpu_eng_layer_cost(VNPU_LAYER_GEMM, t, 3, &g);
	EXPECT_EQ(cost / 2, vnpu_eng_layer_part_cost(VNPU_LAYER_GEMM, t, 3, &g, bf));
	EXPECT_EQ(cost, vnpu_eng_layer_part_cost(VNPU_LAYER_GEMM, t, 3, &g, fma));
	t[1].dtype = VNPU_DTYPE_F32;
	EXPECT_EQ(cost, vnpu_eng_layer_part_cost(VNPU_LAYER_GEMM, t, 3, &g, bf));
	/* 1x1 onto 64 channels, 3x3 Winograd F(4x2), 1x1 onto 6 (one panel). */
	for (i = 0; i < 3; i++) {
		c.kernel[0] = c.kernel[1] = i == 1 ? 3 : 1;
		c.pad_begin[0] = c.pad_begin[1] = c.pad_end[0] = c.pad_end[1] = i == 1;
		c.flags = VNPU_LAYER_F_PACKED | (i == 1 ? VNPU_LAYER_F_WINO42 : 0);
		dc[1] = i == 2 ? 6 : 64;
		t[0] = et_dense(VNPU_DTYPE_F32, 4, dx);
		t[1] = et_dense(VNPU_DTYPE_BF16, 1, &size);
		t[2] = et_dense(VNPU_DTYPE_F32, 4, dc);
		cost = vnpu_eng_layer_cost(VNPU_LAYER_CONV, t, 3, &c);
		EXPECT_EQ(i == 2 ? cost : cost / 2,
			  vnpu_eng_layer_part_cost(VNPU_LAYER_CONV, t, 3, &c, bf))
			TH_LOG("conv %u: bf16 part cost", i);
		EXPECT_EQ(cost, vnpu_eng_layer_part_cost(VNPU_LAYER_CONV, t, 3, &c, fma));
		t[1].dtype = VNPU_DTYPE_F32;
		EXPECT_EQ(cost, vnpu_eng_layer_part_cost(VNPU_LAYER_CONV, t, 3, &c, bf));
	}
}

TEST(units)
{
	const __u32 B = VNPU_LAYER_F_BIAS, R = VNPU_LAYER_F_RESIDUAL;
	const __u32 P = VNPU_LAYER_F_PACKED;
	static const struct conv_shape convs[] = {
		/* 3x3: baseline units of 6 rows x 256 columns */
		{ 64, 30, 31, 20, 1, 3, 1, 1, VNPU_LAYER_F_BIAS },
		/* deep: the columns shrink too, to 64 */
		{ 300, 9, 11, 13, 1, 3, 1, 1,
		  VNPU_LAYER_F_PACKED | VNPU_LAYER_F_RESIDUAL },
		/* stride 2 in stride phases, two groups */
		{ 80, 41, 45, 22, 2, 3, 2, 1, VNPU_LAYER_F_BIAS },
		/* stride 5: im2col slices of 224 columns */
		{ 30, 100, 101, 10, 1, 5, 5, 0, 0 },
		/* 1x1 over the input itself */
		{ 256, 14, 14, 40, 1, 1, 1, 0, VNPU_LAYER_F_BIAS },
		/* 11 blocks of rows, an odd count that stays */
		{ 256, 14, 14, 1024, 1, 1, 1, 0,
		  VNPU_LAYER_F_PACKED | VNPU_LAYER_F_BIAS },
		/*
		 * AVX-512's tail columns: a 7x7 map's 49th (two depth slices,
		 * a last panel of 4 rows), 3x3 over 14x14 (210 padded
		 * columns: 2; rows enough for whole units), a 2x2 map's 4
		 * alone; weights packed, as the compiler packs them
		 */
		{ 700, 7, 7, 100, 1, 1, 1, 0,
		  VNPU_LAYER_F_PACKED | VNPU_LAYER_F_RESIDUAL },
		{ 50, 14, 14, 400, 1, 3, 1, 1,
		  VNPU_LAYER_F_PACKED | VNPU_LAYER_F_BIAS },
		{ 40, 2, 2, 30, 1, 1, 1, 0,
		  VNPU_LAYER_F_PACKED | VNPU_LAYER_F_BIAS },
		/*
		 * and the tail's calls of 8, 4, 2 and 1 panel pairs: 96-row
		 * units and a last one of 28 or 32 rows (1 and 2 tail
		 * columns), 48-row ones of a 5x7 map (3)
		 */
		{ 100, 7, 7, 700, 1, 1, 1, 0,
		  VNPU_LAYER_F_PACKED | VNPU_LAYER_F_RESIDUAL },
		{ 30, 14, 14, 800, 1, 3, 1, 1,
		  VNPU_LAYER_F_PACKED | VNPU_LAYER_F_BIAS },
		{ 64, 5, 7, 400, 1, 1, 1, 0,
		  VNPU_LAYER_F_PACKED | VNPU_LAYER_F_BIAS },
		/*
		 * a 1x1 of stride 2 onto 7x7, whose 49 columns come from a
		 * window: the 49th in the 12-row tiles of the first column
		 * pair (units of 12 and 6 rows, two depth slices), and in
		 * units of 24 rows
		 */
		{ 700, 14, 14, 90, 1, 1, 2, 0,
		  VNPU_LAYER_F_PACKED | VNPU_LAYER_F_RESIDUAL },
		{ 300, 13, 14, 200, 1, 1, 2, 0,
		  VNPU_LAYER_F_PACKED | VNPU_LAYER_F_BIAS },
		/*
		 * output channels on the lanes: panels of 32 (the last of 4
		 * channels), units of 128 and 22 channels over a 5x7 map, a
		 * 3x3 without padding (rows of 7 + 2 positions), two groups,
		 * and blocks of positions
		 */
		{ 700, 7, 7, 100, 1, 1, 1, 0,
		  VNPU_LAYER_F_PACKED | VNPU_LAYER_F_RESIDUAL | VNPU_LAYER_F_LANES },
		{ 64, 5, 7, 150, 1, 1, 1, 0,
		  VNPU_LAYER_F_PACKED | VNPU_LAYER_F_BIAS | VNPU_LAYER_F_LANES },
		{ 30, 9, 11, 50, 1, 3, 1, 0,
		  VNPU_LAYER_F_PACKED | VNPU_LAYER_F_BIAS | VNPU_LAYER_F_LANES },
		{ 40, 6, 6, 24, 2, 1, 1, 0,
		  VNPU_LAYER_F_PACKED | VNPU_LAYER_F_BIAS | VNPU_LAYER_F_LANES },
		{ 2048, 7, 7, 64, 1, 1, 1, 0,
		  VNPU_LAYER_F_PACKED | VNPU_LAYER_F_BIAS | VNPU_LAYER_F_LANES },
		/* padded: layer4's 3x3 with fewer channels, two groups */
		{ 96, 7, 7, 160, 1, 3, 1, 1,
		  VNPU_LAYER_F_PACKED | VNPU_LAYER_F_RESIDUAL | VNPU_LAYER_F_LANES },
		{ 40, 5, 8, 24, 2, 3, 1, 1,
		  VNPU_LAYER_F_PACKED | VNPU_LAYER_F_BIAS | VNPU_LAYER_F_LANES },
		/* stride 2: layer4.0's 3x3 (fewer channels), a 1x1 */
		{ 96, 14, 14, 160, 1, 3, 2, 1,
		  VNPU_LAYER_F_PACKED | VNPU_LAYER_F_RESIDUAL | VNPU_LAYER_F_LANES },
		{ 70, 13, 11, 150, 1, 1, 2, 0,
		  VNPU_LAYER_F_PACKED | VNPU_LAYER_F_BIAS | VNPU_LAYER_F_LANES },
		/*
		 * depthwise on small maps, a channel per lane: two blocks
		 * of 8 and 4 channels more, 5x5 over 7x7 (rows of 4 + 3
		 * pixels), 3x3 stride 2 over 13x14 (pixels past the last
		 * whole eight); over a window, a map too large for lanes
		 */
		{ 20, 7, 7, 20, 20, 5, 1, 2,
		  VNPU_LAYER_F_PACKED | VNPU_LAYER_F_BIAS },
		{ 20, 13, 14, 20, 20, 3, 2, 1, VNPU_LAYER_F_BIAS },
		{ 9, 40, 40, 9, 9, 3, 1, 1, VNPU_LAYER_F_BIAS },
	};
	size_t i;

	check_fma_units(_metadata);
	check_bf16_part_cost(_metadata);
	check_gemm_halves(_metadata);
	check_balance(_metadata);
	check_wino_halves(_metadata);
	check_conv_col_halves(_metadata);
	check_qconv_blocks(_metadata);
	check_qconv_one_block(_metadata);
	check_qw4_blocks(_metadata);
	check_lanes_bits(_metadata);
	check_lanes_pays(_metadata);
	gemm_units(_metadata, 1, 97, 83, 700, 0, 0);
	gemm_units(_metadata, 1, 200, 300, 100, B, 1);
	gemm_units(_metadata, 1, 61, 45, 3001, P | R, 0);
	gemm_units(_metadata, 1, 1, 1000, 64, P, 0);
	gemm_units(_metadata, 2, 37, 50, 2000, B | R, 1);
	/* one block's work in halves (check_gemm_halves(_metadata)) */
	gemm_units(_metadata, 1, 97, 257, 512, P | B, 0);
	gemm_units(_metadata, 1, 1, 512, 2048, P, 1);
	for (i = 0; i < sizeof(convs) / sizeof(convs[0]); i++)
		conv_units(_metadata, &convs[i]);
}

KSFT_MAIN

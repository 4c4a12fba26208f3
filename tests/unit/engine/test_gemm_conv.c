// SPDX-License-Identifier: GPL-2.0 OR MIT
/* GEMM, CONV and POOL against plain loops. */
#include <sys/mman.h>
#include <unistd.h>

#include "engine_test.h"
#include "ksft_main.h"

/* Element offset in @t of Y's coordinates @yc (rank @yr), broadcasting. */
static long long bc_off(const struct vnpu_cmd_tensor *t, const __u64 *yc, __u32 yr)
{
	long long off = 0;
	__u32 d;

	for (d = 0; d < t->rank; d++) {
		__u32 yd = yr - t->rank + d;

		if (t->dims[d] != 1)
			off += (long long)yc[yd] * t->strides[d];
	}
	return off;
}

static double ref_act(const struct vnpu_layer_act *a, double v)
{
	float al, be;

	memcpy(&al, &a->alpha, 4);
	memcpy(&be, &a->beta, 4);
	switch (a->func) {
	case VNPU_ACT_RELU:
		return v < 0 ? 0 : v;
	case VNPU_ACT_SIGMOID:
		return 1 / (1 + exp(-v));
	case VNPU_ACT_SILU:
		return v / (1 + exp(-v));
	case VNPU_ACT_CLIP:
		return v < al ? al : v > be ? be : v;
	case VNPU_ACT_LEAKY_RELU:
		return v < 0 ? al * v : v;
	case VNPU_ACT_HARD_SWISH:
		return v <= -3 ? 0 : v >= 3 ? v : v * (v + 3) / 6;
	default:
		return v;
	}
}

struct gemm_case {
	__u32 rank;			/* of A, B and Y */
	__u64 ba[4], bb[4];		/* batch dims of A and B */
	__u64 m, n, k;
	int ta, tb;			/* transposed views */
	__u32 flags;
	float alpha, beta;
	int bias_kind;			/* 0 [N], 1 [M, 1], 2 [1], 3 full */
	__u32 act;
};

/* A transposed view of a dense tensor with the last two dims swapped. */
static struct vnpu_cmd_tensor swap_last(struct vnpu_cmd_tensor t)
{
	__u32 r = t.rank;
	__u64 d = t.dims[r - 1];
	__s64 s = t.strides[r - 1];

	t.dims[r - 1] = t.dims[r - 2];
	t.strides[r - 1] = t.strides[r - 2];
	t.dims[r - 2] = d;
	t.strides[r - 2] = s;
	return t;
}

static void gemm_case_run(struct __test_metadata *_metadata, const struct gemm_case *c)
{
	__u64 da[6], db[6], dy[6], dc[6], yc[6];
	struct vnpu_cmd_tensor t[5];
	struct vnpu_layer_gemm at = {};
	void *data[5];
	float *a, *b, *bias = NULL, *res = NULL, *y, *ref, *packed = NULL;
	__u32 r = c->rank, d, n = 0, cr = 1;
	size_t ny, e;
	char name[128];

	for (d = 0; d + 2 < r; d++) {
		da[d] = c->ba[d];
		db[d] = c->bb[d];
		dy[d] = c->ba[d] > c->bb[d] ? c->ba[d] : c->bb[d];
	}
	da[r - 2] = c->ta ? c->k : c->m;
	da[r - 1] = c->ta ? c->m : c->k;
	db[r - 2] = c->tb ? c->n : c->k;
	db[r - 1] = c->tb ? c->k : c->n;
	dy[r - 2] = c->m;
	dy[r - 1] = c->n;
	t[n] = et_dense(VNPU_DTYPE_F32, r, da);
	a = malloc(et_bytes(&t[n]) + 4);
	et_fill_f32(a, et_bytes(&t[n]) / 4);
	if (c->ta)
		t[n] = swap_last(t[n]);
	data[n++] = a;
	t[n] = et_dense(VNPU_DTYPE_F32, r, db);
	b = malloc(et_bytes(&t[n]) + 4);
	et_fill_f32(b, et_bytes(&t[n]) / 4);
	if (c->tb)
		t[n] = swap_last(t[n]);
	data[n++] = b;
	if (c->flags & VNPU_LAYER_F_PACKED) {
		__u64 size = vnpu_eng_packed_size(VNPU_PACK_GEMM_B, 1, c->k, c->n);

		packed = malloc(size * 4 + 4);
		EXPECT_TRUE(!vnpu_eng_pack(VNPU_PACK_GEMM_B, b, 1, c->k, c->n, packed))
			TH_LOG("pack");
		t[1] = et_dense(VNPU_DTYPE_F32, 1, &size);
		data[1] = packed;
	}
	if (c->flags & VNPU_LAYER_F_BIAS) {
		switch (c->bias_kind) {
		case 0: dc[0] = c->n; cr = 1; break;
		case 1: dc[0] = c->m; dc[1] = 1; cr = 2; break;
		case 2: dc[0] = 1; cr = 1; break;
		default: memcpy(dc, dy, sizeof(dy)); cr = r; break;
		}
		t[n] = et_dense(VNPU_DTYPE_F32, cr, dc);
		bias = malloc(et_bytes(&t[n]));
		et_fill_f32(bias, et_bytes(&t[n]) / 4);
		data[n++] = bias;
	}
	if (c->flags & VNPU_LAYER_F_RESIDUAL) {
		t[n] = et_dense(VNPU_DTYPE_F32, r, dy);
		res = malloc(et_bytes(&t[n]));
		et_fill_f32(res, et_bytes(&t[n]) / 4);
		data[n++] = res;
	}
	t[n] = et_dense(VNPU_DTYPE_F32, r, dy);
	ny = et_bytes(&t[n]) / 4;
	y = malloc(ny * 4 + 4);
	ref = malloc(ny * 4 + 4);
	data[n++] = y;

	/* The reference, from the unpacked views. */
	for (e = 0; e < ny; e++) {
		struct vnpu_cmd_tensor ta = t[0], tb = t[1];
		size_t rem = e;
		double acc = 0;
		__u64 kk;
		int dd;

		if (c->flags & VNPU_LAYER_F_PACKED) {
			tb = et_dense(VNPU_DTYPE_F32, r, db);
		}
		for (dd = (int)r - 1; dd >= 0; dd--) {
			yc[dd] = rem % dy[dd];
			rem /= dy[dd];
		}
		for (kk = 0; kk < c->k; kk++) {
			long long ao = 0, bo = 0;

			for (d = 0; d + 2 < r; d++) {
				if (ta.dims[d] != 1)
					ao += (long long)yc[d] * ta.strides[d];
				if (tb.dims[d] != 1)
					bo += (long long)yc[d] * tb.strides[d];
			}
			ao += (long long)yc[r - 2] * ta.strides[r - 2] +
			      (long long)kk * ta.strides[r - 1];
			bo += (long long)kk * tb.strides[r - 2] +
			      (long long)yc[r - 1] * tb.strides[r - 1];
			acc += (double)a[ao] * b[bo];
		}
		acc *= c->alpha;
		if (bias)
			acc += (double)c->beta * bias[bc_off(&t[2], yc, r)];
		if (res)
			acc += res[e];
		ref[e] = (float)ref_act(&(struct vnpu_layer_act){ .func = c->act },
					acc);
	}
	at.flags = c->flags;
	at.alpha = et_f32_bits(c->alpha);
	at.beta = et_f32_bits(c->beta);
	at.act.func = c->act;
	snprintf(name, sizeof(name),
		 "gemm r%u m%llu n%llu k%llu ta%d tb%d flags%u bias%d act%u", r,
		 (unsigned long long)c->m, (unsigned long long)c->n,
		 (unsigned long long)c->k, c->ta, c->tb, c->flags, c->bias_kind,
		 c->act);
	EXPECT_EQ(0,
		  et_layer_f32(name, VNPU_LAYER_GEMM, t, data, n, &at, sizeof(at), ref,
			       2e-5 * sqrt((double)c->k + 1), 1e-4));
	free(a);
	free(b);
	free(bias);
	free(res);
	free(y);
	free(ref);
	free(packed);
}

static void test_gemm(struct __test_metadata *_metadata)
{
	static const struct gemm_case cases[] = {
		{ 2, {}, {}, 1, 1, 1, 0, 0, 0, 1, 1, 0, 0 },
		{ 2, {}, {}, 7, 5, 3, 0, 0, 0, 1, 1, 0, 0 },
		{ 2, {}, {}, 33, 17, 9, 1, 0, 0, 1, 1, 0, 0 },
		{ 2, {}, {}, 100, 300, 270, 0, 1, 0, 1, 1, 0, 0 },
		{ 2, {}, {}, 97, 257, 513, 1, 1, VNPU_LAYER_F_BIAS, 0.5f, 2.0f, 0, VNPU_ACT_RELU },
		{ 2, {}, {}, 13, 40, 20, 0, 0, VNPU_LAYER_F_BIAS, 1, 1, 1, VNPU_ACT_SIGMOID },
		{ 2, {}, {}, 13, 40, 20, 0, 0, VNPU_LAYER_F_BIAS, 1, -1, 2, 0 },
		{ 2, {}, {}, 13, 40, 0, 0, 0, VNPU_LAYER_F_BIAS | VNPU_LAYER_F_RESIDUAL, 1, 1, 3, 0 },
		{ 2, {}, {}, 50, 70, 300, 0, 0, VNPU_LAYER_F_PACKED | VNPU_LAYER_F_BIAS, 1, 1, 0, VNPU_ACT_RELU },
		{ 2, {}, {}, 1, 1000, 64, 0, 0, VNPU_LAYER_F_PACKED, 1, 1, 0, 0 },
		{ 2, {}, {}, 200, 15, 33, 0, 0, VNPU_LAYER_F_PACKED | VNPU_LAYER_F_RESIDUAL, 1, 1, 0, 0 },
		{ 3, { 3 }, { 3 }, 5, 6, 7, 0, 0, 0, 1, 1, 0, 0 },
		{ 3, { 1 }, { 4 }, 9, 10, 11, 0, 1, VNPU_LAYER_F_BIAS, 1, 1, 3, 0 },
		{ 4, { 2, 1 }, { 1, 3 }, 8, 19, 5, 1, 0, VNPU_LAYER_F_RESIDUAL, 1, 1, 0, 0 },
		{ 5, { 2, 1, 2 }, { 1, 2, 1 }, 3, 4, 5, 0, 0, 0, 1, 1, 0, 0 },
		{ 6, { 1, 2, 1, 2 }, { 2, 1, 2, 1 }, 2, 3, 4, 1, 1, 0, 1, 1, 0, 0 },
		/*
		 * Several blocks of columns (of at most 512) of the same rows:
		 * 3 slices of depth, 2 of a transposed A over two blocks of
		 * rows (past ENG_GEMM_MC, 132: 72 and 68), then 4.
		 */
		{ 2, {}, {}, 20, 1100, 800, 0, 0, 0, 1, 1, 0, 0 },
		{ 2, {}, {}, 140, 600, 400, 1, 0, VNPU_LAYER_F_PACKED | VNPU_LAYER_F_BIAS, 1, 1, 1, VNPU_ACT_RELU },
		{ 2, {}, {}, 12, 600, 1200, 0, 0, VNPU_LAYER_F_PACKED, 1, 1, 0, 0 },
		/*
		 * A sequence of 128 in one block of 132 rows (more than
		 * ENG_MC), over two even blocks of columns.
		 */
		{ 2, {}, {}, 128, 800, 100, 0, 0, VNPU_LAYER_F_PACKED | VNPU_LAYER_F_BIAS, 1, 1, 1, 0 },
		/*
		 * A bias by columns, added in the AVX-512 tiles (alpha and
		 * beta 1): with a residual and HardSwish over two blocks of
		 * columns, A in place; Relu with a batch of two.
		 */
		{ 2, {}, {}, 30, 1100, 50, 0, 0,
		  VNPU_LAYER_F_PACKED | VNPU_LAYER_F_BIAS | VNPU_LAYER_F_RESIDUAL, 1, 1, 0,
		  VNPU_ACT_HARD_SWISH },
		{ 3, { 2 }, { 1 }, 37, 96, 64, 0, 0, VNPU_LAYER_F_BIAS | VNPU_LAYER_F_RESIDUAL,
		  1, 1, 0, VNPU_ACT_RELU },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		gemm_case_run(_metadata, &cases[i]);
}

struct conv_case {
	int one_d;
	__u64 n, c, h, w, m;
	__u32 group, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
	__u32 flags, act;
	int guard;	/* X against an unmapped page: 1 before it, 2 after it */
};

/*
 * @bytes in pages of their own between two unmapped ones, starting a page
 * (@at_end 0) or ending one: a read past either end faults. The mapping
 * to unmap is *@map, *@map_size bytes.
 */
static void *guarded_alloc(size_t bytes, int at_end, void **map, size_t *map_size)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), in = (bytes + pg - 1) / pg * pg;
	unsigned char *p;

	*map_size = in + 2 * pg;
	p = mmap(NULL, *map_size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	*map = p;
	if (mprotect(p, pg, PROT_NONE) || mprotect(p + pg + in, pg, PROT_NONE))
		return NULL;
	return p + pg + (at_end ? in - bytes : 0);
}

static void conv_case_run(struct __test_metadata *_metadata, const struct conv_case *cc)
{
	struct vnpu_layer_conv at = {};
	struct vnpu_cmd_tensor t[5];
	__u64 oh, ow, dx[4], dw_[4], dy[4], kt, cg = cc->c / cc->group;
	__u64 mg = cc->m / cc->group, packed_size;
	float *x, *w, *bias = NULL, *res = NULL, *y, *ref, *packed = NULL;
	void *data[5], *map = NULL;
	__u32 n = 0, r = cc->one_d ? 3 : 4;
	size_t img, m, i, j, map_size = 0;
	char name[160];

	oh = (cc->h + cc->pt + cc->pb - cc->dh * (cc->kh - 1) - 1) / cc->sh + 1;
	ow = (cc->w + cc->pl + cc->pr - cc->dw * (cc->kw - 1) - 1) / cc->sw + 1;
	dx[0] = cc->n; dx[1] = cc->c;
	dw_[0] = cc->m; dw_[1] = cg;
	dy[0] = cc->n; dy[1] = cc->m;
	if (cc->one_d) {
		dx[2] = cc->w; dw_[2] = cc->kw; dy[2] = ow;
	} else {
		dx[2] = cc->h; dx[3] = cc->w;
		dw_[2] = cc->kh; dw_[3] = cc->kw;
		dy[2] = oh; dy[3] = ow;
	}
	t[n] = et_dense(VNPU_DTYPE_F32, r, dx);
	if (cc->guard) {
		x = guarded_alloc(et_bytes(&t[n]), cc->guard == 2, &map, &map_size);
		ASSERT_NE(NULL, x);
	} else {
		x = malloc(et_bytes(&t[n]));
	}
	et_fill_f32(x, et_bytes(&t[n]) / 4);
	data[n++] = x;
	t[n] = et_dense(VNPU_DTYPE_F32, r, dw_);
	w = malloc(et_bytes(&t[n]));
	et_fill_f32(w, et_bytes(&t[n]) / 4);
	data[n++] = w;
	kt = cg * cc->kh * cc->kw;
	if (cc->flags & VNPU_LAYER_F_PACKED) {
		packed_size = vnpu_eng_packed_size(VNPU_PACK_CONV_W, cc->group,
						   mg, kt);
		packed = malloc(packed_size * 4);
		EXPECT_TRUE(!vnpu_eng_pack(VNPU_PACK_CONV_W, w, cc->group, mg, kt, packed))
			TH_LOG("pack conv");
		t[1] = et_dense(VNPU_DTYPE_F32, 1, &packed_size);
		data[1] = packed;
	}
	if (cc->flags & VNPU_LAYER_F_BIAS) {
		t[n] = et_dense(VNPU_DTYPE_F32, 1, &cc->m);
		bias = malloc(cc->m * 4);
		et_fill_f32(bias, cc->m);
		data[n++] = bias;
	}
	t[n] = et_dense(VNPU_DTYPE_F32, r, dy);
	if (cc->flags & VNPU_LAYER_F_RESIDUAL) {
		res = malloc(et_bytes(&t[n]));
		et_fill_f32(res, et_bytes(&t[n]) / 4);
		data[n++] = res;
		t[n] = t[n - 1];
	}
	y = malloc(et_bytes(&t[n]));
	ref = malloc(et_bytes(&t[n]));
	data[n++] = y;

	for (img = 0; img < cc->n; img++)
		for (m = 0; m < cc->m; m++)
			for (i = 0; i < oh; i++)
				for (j = 0; j < ow; j++) {
					size_t g = m / mg, c, a, b;
					double acc = bias ? bias[m] : 0;
					size_t yo = ((img * cc->m + m) * oh + i) * ow + j;

					for (c = 0; c < cg; c++)
						for (a = 0; a < cc->kh; a++)
							for (b = 0; b < cc->kw; b++) {
								long ih = (long)(i * cc->sh + a * cc->dh) - cc->pt;
								long iw = (long)(j * cc->sw + b * cc->dw) - cc->pl;

								if (ih < 0 || ih >= (long)cc->h ||
								    iw < 0 || iw >= (long)cc->w)
									continue;
								acc += (double)x[((img * cc->c + g * cg + c) * cc->h + ih) * cc->w + iw] *
								       w[((m * cg + c) * cc->kh + a) * cc->kw + b];
							}
					if (res)
						acc += res[yo];
					ref[yo] = (float)ref_act(&(struct vnpu_layer_act){ .func = cc->act }, acc);
				}
	at.flags = cc->flags;
	at.group = cc->group;
	at.kernel[0] = cc->kh;
	at.kernel[1] = cc->kw;
	at.stride[0] = cc->sh;
	at.stride[1] = cc->sw;
	at.dilation[0] = cc->dh;
	at.dilation[1] = cc->dw;
	at.pad_begin[0] = cc->pt;
	at.pad_begin[1] = cc->pl;
	at.pad_end[0] = cc->pb;
	at.pad_end[1] = cc->pr;
	at.act.func = cc->act;
	snprintf(name, sizeof(name),
		 "conv%s n%llu c%llu %llux%llu m%llu g%u k%ux%u s%u,%u d%u,%u p%u,%u,%u,%u f%u g%d",
		 cc->one_d ? "1d" : "2d", (unsigned long long)cc->n,
		 (unsigned long long)cc->c, (unsigned long long)cc->h,
		 (unsigned long long)cc->w, (unsigned long long)cc->m, cc->group,
		 cc->kh, cc->kw, cc->sh, cc->sw, cc->dh, cc->dw, cc->pt, cc->pl,
		 cc->pb, cc->pr, cc->flags, cc->guard);
	EXPECT_EQ(0,
		  et_layer_f32(name, VNPU_LAYER_CONV, t, data, n, &at, sizeof(at), ref,
			       2e-5 * sqrt((double)kt + 1), 1e-4));
	if (map)
		munmap(map, map_size);
	else
		free(x);
	free(w);
	free(bias);
	free(res);
	free(y);
	free(ref);
	free(packed);
}

static void test_conv(struct __test_metadata *_metadata)
{
	const __u32 B = VNPU_LAYER_F_BIAS, R = VNPU_LAYER_F_RESIDUAL;
	const __u32 P = VNPU_LAYER_F_PACKED;
	static struct conv_case cases[] = {
		{ 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0 },
		{ 0, 1, 3, 7, 9, 5, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0 },
		{ 0, 2, 8, 13, 11, 12, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0 },
		{ 0, 1, 16, 20, 23, 40, 1, 3, 3, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0 },
		{ 0, 1, 6, 9, 10, 9, 3, 3, 2, 1, 1, 2, 1, 2, 0, 1, 3, 0, 0 },
		{ 0, 1, 10, 6, 7, 10, 10, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0 },
		{ 0, 2, 9, 15, 17, 9, 9, 5, 3, 2, 1, 1, 2, 2, 4, 3, 0, 0, 0 },
		{ 0, 1, 33, 8, 8, 100, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0 },
		{ 0, 1, 300, 5, 6, 7, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0 },
		/*
		 * A 1x1 of stride 2 whose last unit's window starts its
		 * planes further past a line (its lead) than the last
		 * plane's end falls short of one: the lead is zeroed once,
		 * before the first plane, not over the end of the one before.
		 */
		{ 0, 1, 4, 45, 45, 8, 1, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 0, 0 },
		{ 0, 1, 17, 12, 12, 19, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, VNPU_ACT_RELU },
		{ 0, 1, 4, 30, 30, 5, 1, 7, 7, 2, 2, 1, 1, 3, 3, 3, 3, 0, 0 },
		{ 0, 1, 3, 6, 6, 2, 1, 3, 3, 1, 1, 1, 1, 9, 9, 9, 9, 0, 0 },
		{ 0, 1, 3, 20, 21, 4, 1, 3, 3, 5, 5, 1, 1, 1, 1, 1, 1, 0, 0 },
		{ 0, 1, 5, 23, 19, 7, 1, 4, 3, 4, 3, 2, 1, 3, 2, 1, 0, 0, 0 },
		{ 1, 2, 5, 1, 31, 6, 1, 1, 5, 1, 1, 1, 1, 0, 2, 0, 2, 0, 0 },
		{ 1, 1, 6, 1, 40, 6, 3, 1, 3, 1, 3, 1, 2, 0, 1, 0, 1, 0, 0 },
		/*
		 * Strided outputs whose rows hold whole 16-column panels with
		 * every tap inside the input (im2col's strided reads): an
		 * STFT-like 1-D window, a padded 1-D one, a 2-D stride 2.
		 */
		{ 1, 1, 1, 1, 3000, 20, 1, 1, 64, 1, 40, 1, 1, 0, 0, 0, 0, 0, 0 },
		{ 1, 1, 2, 1, 500, 9, 1, 1, 9, 1, 7, 1, 1, 0, 4, 0, 4, 0, 0 },
		{ 0, 1, 3, 9, 70, 8, 1, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 0, 0 },
		/*
		 * Output rows of 32 columns and more: AVX-512 tiles of the
		 * plain epilogues store padded columns under masks, across
		 * two output rows, in units of 256 padded columns.
		 */
		{ 0, 1, 8, 9, 56, 28, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0 },
		{ 0, 2, 5, 7, 33, 30, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0 },
		{ 0, 1, 4, 6, 40, 13, 1, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 0, 0 },
		{ 0, 1, 3, 8, 45, 12, 1, 3, 3, 1, 1, 1, 1, 0, 2, 1, 0, 0, 0 },
		{ 0, 1, 3, 10, 36, 6, 1, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 0, 0 },
		{ 0, 1, 12, 5, 70, 16, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0 },
		/*
		 * Stride 1 over images of many units: the window slides over
		 * a part's units, moving its rows back to the planes' start
		 * when full; the right pad wider than the left one reads the
		 * row past the window; groups and images start it again.
		 */
		{ 0, 1, 5, 40, 40, 7, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 2, 0, 0 },
		{ 0, 1, 3, 5, 40, 4, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 2, 0, 0 },
		{ 0, 2, 4, 30, 33, 6, 2, 3, 3, 1, 1, 2, 2, 2, 2, 2, 3, 0, 0 },
		{ 0, 1, 3, 64, 20, 4, 1, 5, 3, 1, 1, 1, 1, 0, 1, 4, 1, 0, 0 },
		{ 1, 1, 3, 1, 2000, 5, 1, 1, 5, 1, 1, 1, 1, 0, 2, 0, 2, 0, 0 },
		/*
		 * Stride 1 without padding reads B in the input itself for
		 * kernels one column wide, the last panel's columns past its
		 * channel from a copy: openWakeWord's 3x1 (and its last, on a
		 * 3x1 map); wider ones keep the window (their last row's
		 * padded columns read past the input): 1xk with padded
		 * columns over images, dilated in groups, many units, 1-D.
		 */
		{ 0, 1, 24, 20, 32, 24, 1, 3, 1, 1, 1, 1, 1, 0, 0, 0, 0, B, 0 },
		{ 0, 1, 96, 3, 1, 96, 1, 3, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0 },
		{ 0, 2, 5, 9, 13, 7, 1, 1, 3, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0 },
		{ 0, 1, 6, 12, 11, 8, 2, 3, 3, 1, 1, 2, 2, 0, 0, 0, 0, 0, 0 },
		{ 0, 1, 4, 50, 50, 5, 1, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0 },
		{ 1, 1, 3, 1, 100, 4, 1, 1, 5, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0 },
		/*
		 * Depthwise over the window, a channel's padded columns per
		 * unit: stride 2 in many units, a dilated sliding window, 5x5
		 * on a 7x7 plane in one unit, a 1-D kernel of 400 taps (two
		 * slices), and stride 5 (the direct row kernel).
		 */
		{ 0, 1, 6, 150, 130, 6, 6, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 0, 0 },
		{ 0, 2, 5, 140, 130, 5, 5, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 0, 0 },
		{ 0, 1, 7, 7, 7, 7, 7, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 0, 0 },
		{ 1, 1, 3, 1, 900, 3, 3, 1, 400, 1, 1, 1, 1, 0, 10, 0, 10, 0, 0 },
		{ 0, 1, 4, 20, 22, 4, 4, 3, 3, 5, 5, 1, 1, 1, 1, 1, 1, 0, 0 },
		/*
		 * A channel per lane (small maps): planes of pixels not a
		 * multiple of eight, rows and columns the taps never read
		 * (stride 2, no pad), runs of 1 to 8 pixels a row; a
		 * 56x56 5x5 stride 2 map (a window of 59x59 pixels), a
		 * 112x112 one; rows of whole runs of eight (transposed into
		 * place, only the padding zeroed) with a last block of four
		 * channels, and columns the taps never read (2x2 stride 2 on
		 * 17 columns).
		 */
		{ 0, 1, 16, 15, 15, 16, 16, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0, 0, 0 },
		{ 0, 2, 24, 14, 13, 24, 24, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 0, 0 },
		{ 0, 1, 8, 9, 11, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0 },
		{ 0, 1, 16, 56, 56, 16, 16, 5, 5, 2, 2, 1, 1, 2, 2, 2, 2, 0, 0 },
		{ 0, 1, 8, 112, 112, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0 },
		{ 0, 2, 12, 16, 16, 12, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0 },
		{ 0, 1, 16, 9, 17, 16, 16, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0, 0, 0 },
		{ 0, 1, 8, 24, 24, 8, 8, 5, 5, 2, 2, 1, 1, 2, 1, 1, 2, 0, 0 },
		/*
		 * Windows past DWL_STRIP_BYTES, filled and summed in strips
		 * of output rows (the 112x112 one above too): 5x5 stride 2,
		 * dilation 2, stride 2 by rows only without a top pad.
		 */
		{ 0, 1, 8, 111, 100, 8, 8, 5, 5, 2, 2, 1, 1, 2, 2, 2, 2, 0, VNPU_ACT_HARD_SWISH },
		{ 0, 1, 8, 100, 100, 8, 8, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 0, 0 },
		{ 0, 2, 12, 120, 64, 12, 12, 3, 3, 2, 1, 1, 1, 0, 1, 1, 1, 0, VNPU_ACT_RELU },
		/*
		 * Stride 2 splits f32 rows into both column phases in one
		 * pass (vectors where 16 inputs lie inside the row): 5x5 on
		 * 14x14 (MobileNetV3), no leading pad, an odd row, a dense
		 * grouped layer.
		 */
		{ 0, 1, 4, 14, 14, 4, 4, 5, 5, 2, 2, 1, 1, 2, 2, 2, 2, 0, 0 },
		{ 0, 2, 3, 9, 41, 3, 3, 3, 3, 2, 2, 1, 1, 0, 0, 1, 1, 0, 0 },
		{ 0, 1, 6, 11, 37, 12, 2, 3, 3, 2, 2, 1, 1, 1, 3, 1, 0, 0, 0 },
		/*
		 * 1x1 convolutions read the input itself; the columns of a
		 * unit's last panel past the image from a copy: 7x7 and 14x14
		 * maps in row and column units, a 1x1 map (squeeze-excite), a
		 * 1-D row, groups, and a 1x1 depthwise layer; a 23x31 map,
		 * whose channels lie 2.8 KiB apart, so that the AVX-512
		 * tiles fetch the next column pair's B ahead by its offsets
		 * (on the AVX2 path these maps' columns come from an aligned
		 * copy: 14x14 of depth 400 takes two slices of it).
		 */
		{ 0, 1, 40, 7, 7, 200, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0 },
		{ 0, 1, 400, 14, 14, 20, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0 },
		{ 0, 1, 12, 23, 31, 30, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0 },
		{ 0, 2, 64, 14, 14, 30, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0 },
		{ 0, 1, 100, 1, 1, 50, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0 },
		{ 1, 1, 9, 1, 37, 13, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0 },
		{ 0, 2, 12, 3, 5, 18, 3, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0 },
		{ 0, 1, 9, 7, 7, 9, 9, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0 },
		/*
		 * Strided windows that read some stride phases only (the
		 * others are zeros): a 1x1 of stride 2 (ResNet's downsample)
		 * and of 3 by 2 over odd maps, a 3x3 of stride 2 dilated by 2.
		 */
		{ 0, 1, 24, 15, 17, 20, 1, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 0, 0 },
		{ 0, 2, 7, 16, 13, 9, 1, 1, 1, 3, 2, 1, 1, 0, 0, 0, 0, 0, 0 },
		{ 0, 1, 5, 19, 21, 6, 1, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2, 0, 0 },
		/*
		 * Strided windows whose units hold at least twice the rows
		 * they move on slide over a part's units like stride 1's,
		 * each stride phase's plane moving back to its start when
		 * full: a 7x7 stride 2 stem over two images, two blocks of
		 * output channels sharing each unit's rows, stride 2 by rows
		 * only (a right pad wider than the left: the row past the
		 * window) and by columns only, a dilated one of one plane in
		 * groups, stride 3, a 1x1 of stride 2 (one plane).
		 */
		{ 0, 2, 3, 60, 200, 8, 1, 7, 7, 2, 2, 1, 1, 3, 3, 3, 3, 0, 0 },
		{ 0, 1, 6, 20, 300, 100, 1, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 0, 0 },
		{ 0, 1, 4, 70, 300, 5, 1, 3, 3, 2, 1, 1, 1, 1, 1, 1, 2, 0, 0 },
		{ 0, 1, 4, 30, 600, 5, 1, 3, 3, 1, 2, 1, 1, 1, 1, 1, 1, 0, 0 },
		{ 0, 2, 6, 50, 400, 6, 2, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2, 0, 0 },
		{ 0, 1, 3, 60, 500, 4, 1, 5, 5, 3, 3, 1, 1, 2, 2, 2, 2, 0, 0 },
		{ 0, 1, 5, 12, 600, 6, 1, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 0, 0 },
		/*
		 * Padded rows of 8 to 64 columns (the AVX2 window's vectors),
		 * X between unmapped pages, its first row starting one, its
		 * last ending one: no read leaves a row's inputs. Pads of 7
		 * (a ConvTranspose's) before or after the inputs, both, the
		 * widest such row, openWakeWord's 1x3, and runs of 5 inputs
		 * in rows of 8 and 9 columns.
		 */
		{ 0, 1, 2, 5, 10, 3, 1, 1, 3, 1, 1, 1, 1, 0, 7, 0, 7, 0, 0, 1 },
		{ 0, 1, 2, 5, 10, 3, 1, 1, 3, 1, 1, 1, 1, 0, 0, 0, 7, 0, 0, 2 },
		{ 0, 1, 2, 4, 12, 3, 1, 3, 3, 1, 1, 1, 1, 1, 2, 1, 5, 0, 0, 1 },
		{ 0, 1, 2, 4, 12, 3, 1, 3, 3, 1, 1, 1, 1, 1, 2, 1, 5, 0, 0, 2 },
		{ 0, 1, 3, 9, 61, 4, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 3, 0, 0, 2 },
		{ 0, 1, 4, 6, 16, 5, 1, 1, 3, 1, 1, 1, 1, 0, 1, 0, 1, 0, 0, 1 },
		{ 0, 1, 3, 4, 5, 4, 1, 3, 3, 1, 1, 1, 1, 1, 3, 1, 3, 0, 0, 1 },
		{ 0, 1, 3, 4, 5, 4, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 4, 0, 0, 2 },
		/*
		 * 1x1s whose blocks end in 1-4 columns past whole panels
		 * (7x7, 3x6, 5x7, 6x6 maps), which the AVX2 tiles take with
		 * A's rows in the lanes, 1 to 8 panels a call (a batch of 8
		 * keeps a unit's rows whole: 3-9 panels), and a 7x7 of two
		 * depth slices over 2 panels a unit.
		 */
		{ 0, 8, 16, 7, 7, 18, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0 },
		{ 0, 8, 16, 7, 7, 30, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0 },
		{ 0, 8, 16, 7, 7, 36, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0 },
		{ 0, 8, 16, 7, 7, 40, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0 },
		{ 0, 8, 20, 7, 7, 50, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0 },
		{ 0, 8, 12, 3, 6, 40, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0 },
		{ 0, 8, 12, 5, 7, 40, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0 },
		{ 0, 8, 12, 6, 6, 40, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0 },
		{ 0, 1, 300, 7, 7, 40, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0 },
	};
	static const __u32 flag_sets[] = { 0, B, B | R, B | R | P, P };
	size_t i, f;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		for (f = 0; f < 5; f++) {
			struct conv_case c = cases[i];

			c.flags = flag_sets[f];
			if (f == 2 && !c.act)
				c.act = VNPU_ACT_RELU;
			conv_case_run(_metadata, &c);
		}
}

struct pool_case {
	__u32 mode, flags, p;
	int one_d;
	__u64 n, c, h, w;
	__u32 kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
};

static long out_extent(__u64 in, __u32 k, __u32 s, __u32 d, __u32 pb,
		       __u32 pe, int ceil_mode)
{
	long span = (long)in + pb + pe - (long)d * (k - 1) - 1;
	long o = (ceil_mode ? (span + s - 1) / s : span / s) + 1;

	if (ceil_mode && (o - 1) * (long)s >= (long)in + pb)
		o--;
	return o;
}

/*
 * Values max windows meet in @x (@n floats, rows of @w): NaNs of two
 * payloads and signs, infinities and zeros of both signs now and then,
 * a stretch of -inf (windows of nothing else), and one of zeros of both
 * signs among negative values (windows whose maximum is a tie of +0 and
 * -0, the first of them kept).
 */
static void pool_max_specials(float *x, size_t n, __u64 w)
{
	union { __u32 u; float f; } nan_a = { 0x7fc00123 }, nan_b = { 0xffc00456 };
	size_t i;

	for (i = w; i < n && i < 3 * w; i++)
		x[i] = -INFINITY;
	for (i = 3 * w; i < n && i < 6 * w; i++)
		x[i] = i % 3 == 0 ? -0.0f : i % 3 == 1 ? 0.0f : -1.0f;
	for (i = 0; i < n; i += 13)
		x[i] = i % 5 == 0 ? (i % 2 ? nan_a.f : nan_b.f) :
		       i % 5 == 1 ? -INFINITY : i % 5 == 2 ? -0.0f :
		       i % 5 == 3 ? 0.0f : INFINITY;
}

static void pool_case_run(struct __test_metadata *_metadata, const struct pool_case *pc)
{
	int ceil_mode = !!(pc->flags & VNPU_POOL_F_CEIL);
	long oh = out_extent(pc->h, pc->kh, pc->sh, pc->dh, pc->pt, pc->pb,
			     ceil_mode);
	long ow = out_extent(pc->w, pc->kw, pc->sw, pc->dw, pc->pl, pc->pr,
			     ceil_mode);
	struct vnpu_layer_pool at = {};
	struct vnpu_cmd_tensor t[2];
	__u64 dx[4] = { pc->n, pc->c }, dy[4] = { pc->n, pc->c };
	__u32 r = pc->one_d ? 3 : 4;
	float *x, *y, *ref;
	void *data[2];
	size_t img, c, i, j;
	char name[128];

	if (pc->one_d) {
		dx[2] = pc->w;
		dy[2] = ow;
	} else {
		dx[2] = pc->h; dx[3] = pc->w;
		dy[2] = oh; dy[3] = ow;
	}
	t[0] = et_dense(VNPU_DTYPE_F32, r, dx);
	t[1] = et_dense(VNPU_DTYPE_F32, r, dy);
	x = malloc(et_bytes(&t[0]));
	y = malloc(et_bytes(&t[1]));
	ref = malloc(et_bytes(&t[1]));
	et_fill_f32(x, et_bytes(&t[0]) / 4);
	if (pc->mode == VNPU_POOL_MAX)
		pool_max_specials(x, et_bytes(&t[0]) / 4, pc->w);
	data[0] = x;
	data[1] = y;
	for (img = 0; img < pc->n; img++)
		for (c = 0; c < pc->c; c++)
			for (i = 0; i < (size_t)oh; i++)
				for (j = 0; j < (size_t)ow; j++) {
					double acc = pc->mode == VNPU_POOL_MAX ? -INFINITY : 0;
					float facc = pc->mode == VNPU_POOL_MAX ? -INFINITY : 0;
					size_t a, b, cnt = 0, padded = 0;

					for (a = 0; a < pc->kh; a++)
						for (b = 0; b < pc->kw; b++) {
							long ih = (long)(i * pc->sh + a * pc->dh) - pc->pt;
							long iw = (long)(j * pc->sw + b * pc->dw) - pc->pl;
							double v;

							if (ih < (long)(pc->h + pc->pb) && iw < (long)(pc->w + pc->pr))
								padded++;
							if (ih < 0 || iw < 0 || ih >= (long)pc->h || iw >= (long)pc->w)
								continue;
							v = x[((img * pc->c + c) * pc->h + ih) * pc->w + iw];
							cnt++;
							/*
							 * Max and average in float, in
							 * window order: the last NaN
							 * wins, the first of equal
							 * values (+0, -0) stays; sums
							 * round as they go.
							 */
							if (pc->mode == VNPU_POOL_MAX &&
							    (v > facc || v != v))
								facc = (float)v;
							else if (pc->mode == VNPU_POOL_AVG)
								facc += (float)v;
							else
								acc += pow(fabs(v), pc->p);
						}
					if (pc->mode == VNPU_POOL_AVG)
						facc /= (float)((pc->flags & VNPU_POOL_F_COUNT_PAD) ?
								padded : cnt);
					if (pc->mode != VNPU_POOL_LP)
						acc = facc;
					else
						acc = pow(acc, 1.0 / pc->p);
					ref[((img * pc->c + c) * oh + i) * ow + j] = (float)acc;
				}
	at.mode = pc->mode;
	at.flags = pc->flags;
	at.p = pc->p;
	at.kernel[0] = pc->kh; at.kernel[1] = pc->kw;
	at.stride[0] = pc->sh; at.stride[1] = pc->sw;
	at.dilation[0] = pc->dh; at.dilation[1] = pc->dw;
	at.pad_begin[0] = pc->pt; at.pad_begin[1] = pc->pl;
	at.pad_end[0] = pc->pb; at.pad_end[1] = pc->pr;
	snprintf(name, sizeof(name), "pool mode%u flags%u %llux%llu k%ux%u s%u p%u,%u",
		 pc->mode, pc->flags, (unsigned long long)pc->h,
		 (unsigned long long)pc->w, pc->kh, pc->kw, pc->sh, pc->pt, pc->pb);
	if (pc->mode == VNPU_POOL_LP) {
		EXPECT_EQ(0,
			  et_layer_f32(name, VNPU_LAYER_POOL, t, data, 2, &at, sizeof(at), ref,
				       1e-6, 1e-5));
	} else
		EXPECT_EQ(0,
			  et_layer_exact(name, VNPU_LAYER_POOL, t, data, 2, &at, sizeof(at), ref));
	free(x);
	free(y);
	free(ref);
}

/*
 * The MAX case @pc on u8 or i8 (@dt): bytes from a generator, each window's
 * largest byte inside the input, or the type's lowest for one wholly in the
 * padding, exactly.
 */
static void pool8_case_run(struct __test_metadata *_metadata, const struct pool_case *pc,
			   __u32 dt)
{
	int ceil_mode = !!(pc->flags & VNPU_POOL_F_CEIL), sgn = dt == VNPU_DTYPE_I8;
	long oh = pc->one_d ? 1 : out_extent(pc->h, pc->kh, pc->sh, pc->dh, pc->pt,
					     pc->pb, ceil_mode);
	long ow = out_extent(pc->w, pc->kw, pc->sw, pc->dw, pc->pl, pc->pr, ceil_mode);
	__u64 dx[4] = { pc->n, pc->c, pc->h, pc->w }, dy[4] = { pc->n, pc->c, oh, ow };
	struct vnpu_layer_pool at = {};
	struct vnpu_cmd_tensor t[2];
	unsigned char *x, *y, *ref;
	size_t img, c, i, j, nx;
	void *data[2];
	char name[128];

	if (pc->one_d) {
		dx[2] = pc->w;
		dy[2] = ow;
	}
	t[0] = et_dense(dt, pc->one_d ? 3 : 4, dx);
	t[1] = et_dense(dt, pc->one_d ? 3 : 4, dy);
	nx = et_bytes(&t[0]);
	x = malloc(nx);
	y = malloc(et_bytes(&t[1]));
	ref = malloc(et_bytes(&t[1]));
	for (i = 0; i < nx; i++)
		x[i] = (unsigned char)((i * 2654435761u) >> 13);
	for (img = 0; img < pc->n; img++)
		for (c = 0; c < pc->c; c++)
			for (i = 0; i < (size_t)oh; i++)
				for (j = 0; j < (size_t)ow; j++) {
					int acc = sgn ? -128 : 0;
					size_t a, b;

					for (a = 0; a < (pc->one_d ? 1 : pc->kh); a++)
						for (b = 0; b < pc->kw; b++) {
							long ih = pc->one_d ? 0 :
								  (long)(i * pc->sh + a * pc->dh) - pc->pt;
							long iw = (long)(j * pc->sw + b * pc->dw) - pc->pl;
							size_t h = pc->one_d ? 1 : pc->h;
							unsigned char v;
							int vi;

							if (ih < 0 || iw < 0 || ih >= (long)h ||
							    iw >= (long)pc->w)
								continue;
							v = x[((img * pc->c + c) * h + ih) * pc->w + iw];
							vi = sgn ? (signed char)v : v;
							acc = vi > acc ? vi : acc;
						}
					ref[((img * pc->c + c) * oh + i) * ow + j] = (unsigned char)acc;
				}
	at.mode = VNPU_POOL_MAX;
	at.flags = pc->flags;
	at.kernel[0] = pc->one_d ? 1 : pc->kh; at.kernel[1] = pc->kw;
	at.stride[0] = pc->one_d ? 1 : pc->sh; at.stride[1] = pc->sw;
	at.dilation[0] = pc->one_d ? 1 : pc->dh; at.dilation[1] = pc->dw;
	at.pad_begin[0] = pc->one_d ? 0 : pc->pt; at.pad_begin[1] = pc->pl;
	at.pad_end[0] = pc->one_d ? 0 : pc->pb; at.pad_end[1] = pc->pr;
	data[0] = x;
	data[1] = y;
	snprintf(name, sizeof(name), "pool %s max flags%u %llux%llu k%ux%u s%u d%u p%u,%u",
		 sgn ? "i8" : "u8", pc->flags, (unsigned long long)pc->h,
		 (unsigned long long)pc->w, pc->kh, pc->kw, pc->sw, pc->dw, pc->pt, pc->pb);
	EXPECT_EQ(0, et_layer_exact(name, VNPU_LAYER_POOL, t, data, 2, &at, sizeof(at), ref));
	free(x);
	free(y);
	free(ref);
}

static void test_pool(struct __test_metadata *_metadata)
{
	static const struct pool_case cases[] = {
		{ VNPU_POOL_MAX, 0, 0, 0, 1, 3, 8, 8, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0 },
		{ VNPU_POOL_MAX, VNPU_POOL_F_CEIL, 0, 0, 2, 5, 9, 11, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1 },
		{ VNPU_POOL_MAX, 0, 0, 0, 1, 2, 10, 10, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2 },
		{ VNPU_POOL_AVG, 0, 0, 0, 1, 3, 7, 9, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1 },
		{ VNPU_POOL_AVG, VNPU_POOL_F_COUNT_PAD, 0, 0, 1, 3, 7, 9, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1 },
		{ VNPU_POOL_AVG, VNPU_POOL_F_CEIL | VNPU_POOL_F_COUNT_PAD, 0, 0, 1, 2, 6, 7, 3, 3, 2, 2, 1, 1, 1, 0, 1, 0 },
		{ VNPU_POOL_AVG, 0, 0, 0, 2, 4, 7, 7, 7, 7, 1, 1, 1, 1, 0, 0, 0, 0 },
		{ VNPU_POOL_LP, 0, 2, 0, 1, 3, 6, 6, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0 },
		{ VNPU_POOL_LP, 0, 3, 0, 1, 3, 6, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1 },
		{ VNPU_POOL_MAX, 0, 0, 1, 2, 3, 1, 17, 1, 4, 1, 3, 1, 1, 0, 1, 0, 2 },
		/* Rows of outputs wider than 8, inside the input and not. */
		{ VNPU_POOL_MAX, 0, 0, 0, 1, 3, 72, 32, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0 },
		{ VNPU_POOL_MAX, 0, 0, 0, 1, 2, 9, 29, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1 },
		{ VNPU_POOL_AVG, VNPU_POOL_F_COUNT_PAD, 0, 0, 1, 2, 11, 37, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1 },
		{ VNPU_POOL_AVG, 0, 0, 0, 2, 2, 8, 40, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0 },
		{ VNPU_POOL_AVG, VNPU_POOL_F_CEIL, 0, 0, 1, 2, 10, 45, 4, 3, 3, 3, 1, 1, 0, 2, 0, 2 },
		{ VNPU_POOL_MAX, 0, 0, 1, 1, 3, 1, 45, 1, 3, 1, 1, 1, 1, 0, 1, 0, 1 },
		{ VNPU_POOL_MAX, 0, 0, 0, 1, 2, 12, 40, 2, 3, 1, 2, 1, 2, 0, 1, 0, 1 },
		/*
		 * Windows across the edges take the rows and taps inside:
		 * YOLO's SPPF, ResNet's stem, padding wider than the input,
		 * ceil-mode windows past the padding, 1-wide rows.
		 */
		{ VNPU_POOL_MAX, 0, 0, 0, 1, 3, 20, 20, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2 },
		{ VNPU_POOL_MAX, 0, 0, 0, 1, 2, 28, 28, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1 },
		{ VNPU_POOL_AVG, 0, 0, 0, 1, 2, 3, 4, 5, 5, 1, 1, 1, 1, 4, 4, 4, 4 },
		{ VNPU_POOL_AVG, VNPU_POOL_F_COUNT_PAD, 0, 0, 1, 2, 3, 4, 5, 5, 1, 1, 1, 1, 4, 3, 2, 4 },
		{ VNPU_POOL_AVG, VNPU_POOL_F_CEIL | VNPU_POOL_F_COUNT_PAD, 0, 0, 1, 2, 9, 13, 3, 3, 2, 2, 1, 1, 1, 1, 1, 0 },
		{ VNPU_POOL_MAX, 0, 0, 0, 1, 2, 11, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1 },
		/*
		 * MAX rows across the edges run over a padded copy of the
		 * window's rows: padding wider than the input (windows
		 * wholly in it), and a row too long for the copy.
		 */
		{ VNPU_POOL_MAX, 0, 0, 0, 1, 2, 3, 4, 5, 5, 1, 1, 1, 1, 4, 4, 4, 4 },
		{ VNPU_POOL_MAX, 0, 0, 1, 1, 2, 1, 9000, 1, 3, 1, 1, 1, 1, 0, 1, 0, 1 },
		/*
		 * Stride 1 over rows of at least 8: the edges' windows eight
		 * at a time, averages divided lane by lane, pads as wide as
		 * half the window and unequal.
		 */
		{ VNPU_POOL_AVG, 0, 0, 0, 1, 2, 9, 13, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2 },
		{ VNPU_POOL_AVG, VNPU_POOL_F_COUNT_PAD, 0, 0, 1, 2, 10, 12, 3, 4, 1, 1, 1, 1, 1, 2, 1, 3 },
		{ VNPU_POOL_MAX, 0, 0, 0, 1, 3, 8, 9, 7, 7, 1, 1, 1, 1, 3, 3, 3, 3 },
		/*
		 * f32 MAX at stride 1 along rows, a plane at a time over
		 * each row's window maxima: images of several planes, rows
		 * of 3 and of 8n + 1, unequal pads, stride 2 down the rows
		 * in ceil mode, 16 window rows (the most) and 17, 1-row
		 * windows, and planes too tall for the scratch.
		 */
		{ VNPU_POOL_MAX, 0, 0, 0, 2, 3, 7, 3, 3, 2, 1, 1, 1, 1, 1, 0, 2, 1 },
		{ VNPU_POOL_MAX, VNPU_POOL_F_CEIL, 0, 0, 1, 2, 12, 17, 3, 4, 2, 1, 1, 1, 1, 3, 1, 0 },
		{ VNPU_POOL_MAX, 0, 0, 0, 1, 2, 20, 9, 16, 3, 1, 1, 1, 1, 8, 1, 7, 1 },
		{ VNPU_POOL_MAX, 0, 0, 0, 1, 2, 20, 9, 17, 3, 1, 1, 1, 1, 8, 1, 8, 1 },
		{ VNPU_POOL_MAX, 0, 0, 0, 1, 3, 6, 10, 1, 5, 1, 1, 1, 1, 0, 2, 0, 2 },
		{ VNPU_POOL_MAX, 0, 0, 0, 1, 2, 300, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1 },
		/*
		 * f32 MAX at stride 2 along padded rows over each row's
		 * window maxima kept between output rows: ResNet's stem,
		 * odd sizes, rows of exactly 8 outputs, windows 1 to 5
		 * wide, unequal pads, ceil mode past the row's end, stride
		 * 1 down the rows, 16 window rows (the most).
		 */
		{ VNPU_POOL_MAX, 0, 0, 0, 1, 64, 112, 112, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1 },
		{ VNPU_POOL_MAX, 0, 0, 0, 2, 3, 13, 17, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1 },
		{ VNPU_POOL_MAX, 0, 0, 0, 1, 2, 16, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1 },
		{ VNPU_POOL_MAX, 0, 0, 0, 1, 2, 9, 30, 2, 4, 2, 2, 1, 1, 0, 1, 1, 2 },
		{ VNPU_POOL_MAX, 0, 0, 0, 1, 2, 11, 41, 5, 5, 2, 2, 1, 1, 2, 2, 2, 2 },
		{ VNPU_POOL_MAX, VNPU_POOL_F_CEIL, 0, 0, 1, 3, 10, 20, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1 },
		{ VNPU_POOL_MAX, 0, 0, 0, 1, 2, 5, 23, 1, 3, 2, 2, 1, 1, 0, 1, 0, 1 },
		{ VNPU_POOL_MAX, 0, 0, 0, 1, 2, 8, 20, 3, 3, 1, 2, 1, 1, 1, 1, 1, 1 },
		{ VNPU_POOL_MAX, 0, 0, 0, 1, 2, 20, 19, 16, 3, 2, 2, 1, 1, 8, 1, 7, 1 },
		/*
		 * Rows of more than 32 outputs inside: four runs of eight
		 * at once, then the rest, at strides 1, 2 (ResNet's stem
		 * on wide rows) and 3.
		 */
		{ VNPU_POOL_MAX, 0, 0, 0, 1, 3, 7, 81, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1 },
		{ VNPU_POOL_AVG, VNPU_POOL_F_COUNT_PAD, 0, 0, 1, 2, 6, 90, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1 },
		{ VNPU_POOL_MAX, 0, 0, 0, 1, 2, 5, 50, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1 },
		{ VNPU_POOL_AVG, 0, 0, 0, 1, 2, 4, 110, 3, 3, 3, 3, 1, 1, 0, 0, 0, 0 },
		{ VNPU_POOL_MAX, 0, 0, 0, 1, 2, 4, 200, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0 },
		/*
		 * No padding, every window inside: a row's run at a time;
		 * 1xk rows of exactly OW * stride as one run over planes and
		 * images (openWakeWord's 1x2 pools), rows of 4 and of 1,
		 * rows not a whole number of windows, windows overlapping.
		 */
		{ VNPU_POOL_MAX, 0, 0, 0, 2, 5, 10, 4, 1, 2, 1, 2, 1, 1, 0, 0, 0, 0 },
		{ VNPU_POOL_AVG, 0, 0, 0, 1, 3, 32, 16, 1, 2, 1, 2, 1, 1, 0, 0, 0, 0 },
		{ VNPU_POOL_MAX, 0, 0, 0, 1, 7, 28, 8, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0 },
		{ VNPU_POOL_MAX, 0, 0, 0, 2, 9, 6, 2, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0 },
		{ VNPU_POOL_MAX, 0, 0, 0, 1, 3, 4, 5, 1, 2, 1, 2, 1, 1, 0, 0, 0, 0 },
		{ VNPU_POOL_AVG, 0, 0, 0, 1, 2, 9, 12, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0 },
		{ VNPU_POOL_MAX, VNPU_POOL_F_CEIL, 0, 0, 1, 3, 7, 9, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0 },
		/*
		 * Rows of fewer than 8 outputs, eight outputs at a time
		 * across a plane's rows (AVX2): openWakeWord's 2x2 over 28x7
		 * (3 a row, the 7th column unread), a 3x3 of stride 1 and of
		 * stride 3 by 1, columns of one output, planes of fewer than
		 * 8 outputs.
		 */
		{ VNPU_POOL_MAX, 0, 0, 0, 1, 9, 28, 7, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0 },
		{ VNPU_POOL_AVG, 0, 0, 0, 2, 5, 28, 7, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0 },
		{ VNPU_POOL_MAX, 0, 0, 0, 2, 4, 11, 7, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0 },
		{ VNPU_POOL_AVG, 0, 0, 0, 1, 3, 13, 9, 3, 3, 1, 3, 1, 1, 0, 0, 0, 0 },
		{ VNPU_POOL_MAX, 0, 0, 0, 1, 6, 30, 3, 2, 3, 1, 1, 1, 1, 0, 0, 0, 0 },
		{ VNPU_POOL_MAX, 0, 0, 0, 2, 5, 4, 5, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0 },
		/*
		 * One output per plane: eight channels at a time (runs past
		 * the last image's channels, across images, dense planes as
		 * one row, rows of the window apart, 1-D), the others alone.
		 */
		{ VNPU_POOL_MAX, 0, 0, 0, 2, 19, 30, 30, 30, 30, 1, 1, 1, 1, 0, 0, 0, 0 },
		{ VNPU_POOL_AVG, 0, 0, 0, 1, 17, 5, 40, 5, 33, 8, 8, 1, 1, 0, 0, 0, 0 },
		{ VNPU_POOL_AVG, VNPU_POOL_F_COUNT_PAD, 0, 0, 3, 9, 7, 7, 7, 7, 1, 1, 1, 1, 0, 0, 0, 0 },
		{ VNPU_POOL_AVG, 0, 0, 1, 1, 16, 1, 300, 1, 300, 1, 1, 1, 1, 0, 0, 0, 0 },
		{ VNPU_POOL_MAX, 0, 0, 0, 1, 12, 9, 10, 9, 10, 1, 1, 1, 1, 0, 0, 0, 0 },
		/*
		 * Four runs of eight channels at once, then runs alone:
		 * squeeze-excite's averages (the last image's last five
		 * channels alone), rows of the window apart, 1-D.
		 */
		{ VNPU_POOL_AVG, 0, 0, 0, 2, 45, 7, 7, 7, 7, 1, 1, 1, 1, 0, 0, 0, 0 },
		{ VNPU_POOL_MAX, 0, 0, 0, 1, 72, 14, 14, 14, 14, 1, 1, 1, 1, 0, 0, 0, 0 },
		{ VNPU_POOL_AVG, 0, 0, 0, 1, 40, 5, 40, 5, 33, 8, 8, 1, 1, 0, 0, 0, 0 },
		{ VNPU_POOL_MAX, 0, 0, 1, 3, 33, 1, 75, 1, 75, 1, 1, 1, 1, 0, 0, 0, 0 },
	};

	/*
	 * 8-bit MAX: a window wider than the row buffer, ResNet's stem,
	 * 3x3 windows of stride 1 and 2 on rows of several runs of the
	 * row buffer (16 stride-2 windows at a time: runs of 127, and of
	 * 14 after them; 3 channels).
	 */
	static const struct pool_case max8[] = {
		{ VNPU_POOL_MAX, 0, 0, 1, 1, 3, 1, 700, 1, 300, 1, 7, 1, 1, 0, 5, 0, 9 },
		{ VNPU_POOL_MAX, 0, 0, 0, 1, 64, 112, 112, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1 },
		{ VNPU_POOL_MAX, 0, 0, 0, 1, 3, 7, 600, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1 },
		{ VNPU_POOL_MAX, 0, 0, 0, 1, 3, 5, 281, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1 },
		/*
		 * 3x3 windows at stride 2 in registers: no padding, 5-row
		 * windows at stride 1 over 17 outputs (the last 16 again),
		 * and ceil mode's last window past the row (the row buffer).
		 */
		{ VNPU_POOL_MAX, 0, 0, 0, 2, 3, 9, 40, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0 },
		{ VNPU_POOL_MAX, 0, 0, 0, 1, 2, 7, 33, 5, 3, 1, 2, 1, 1, 2, 1, 2, 1 },
		{ VNPU_POOL_MAX, VNPU_POOL_F_CEIL, 0, 0, 1, 2, 10, 45, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1 },
	};
	size_t i, k;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		pool_case_run(_metadata, &cases[i]);
		for (k = 0; cases[i].mode == VNPU_POOL_MAX && k < 2; k++)
			pool8_case_run(_metadata, &cases[i],
				       k ? VNPU_DTYPE_I8 : VNPU_DTYPE_U8);
	}
	for (i = 0; i < sizeof(max8) / sizeof(max8[0]); i++)
		for (k = 0; k < 2; k++)
			pool8_case_run(_metadata, &max8[i], k ? VNPU_DTYPE_I8 : VNPU_DTYPE_U8);
}

/*
 * The same GEMM and CONV on views with gaps (rows and channels of larger
 * buffers) give the bits of the dense layers.
 */
static void test_gapped_views(struct __test_metadata *_metadata)
{
	__u64 da[2] = { 37, 300 }, db[2] = { 300, 45 }, dy[2] = { 37, 45 };
	__u64 dx[4] = { 2, 64, 10, 12 }, dw[4] = { 20, 64, 1, 1 };
	__u64 dcy[4] = { 2, 20, 10, 12 };
	struct vnpu_layer_gemm g = { .alpha = 0x3f800000 };
	struct vnpu_layer_conv c = { .group = 1 };
	struct vnpu_cmd_tensor t[3], v[3];
	float *a = malloc(37 * 310 * 4), *b = malloc(300 * 45 * 4);
	float *y1 = calloc(37 * 45, 4), *y2 = calloc(37 * 60, 4);
	float *x = malloc(2 * 80 * 10 * 12 * 4), *w = malloc(20 * 64 * 4);
	float *cy1 = calloc(2 * 20 * 120, 4), *cy2 = calloc(2 * 30 * 120, 4);
	void *d1[3], *d2[3];
	size_t i, j;

	et_fill_f32(a, 37 * 310);
	et_fill_f32(b, 300 * 45);
	t[0] = et_dense(VNPU_DTYPE_F32, 2, da);
	t[1] = et_dense(VNPU_DTYPE_F32, 2, db);
	t[2] = et_dense(VNPU_DTYPE_F32, 2, dy);
	v[0] = t[0];
	v[0].strides[0] = 310;
	v[1] = t[1];
	v[2] = t[2];
	v[2].strides[0] = 60;
	/* Dense copy of the gapped A. */
	{
		float *ad = malloc(37 * 300 * 4);

		for (i = 0; i < 37; i++)
			memcpy(ad + i * 300, a + i * 310, 300 * 4);
		d1[0] = ad;
		d1[1] = b;
		d1[2] = y1;
		d2[0] = a;
		d2[1] = b;
		d2[2] = y2;
		EXPECT_TRUE(!et_run(VNPU_LAYER_GEMM, t, d1, 3, &g, sizeof(g), et_host_features, 3))
			TH_LOG("dense gemm");
		EXPECT_TRUE(!et_run(VNPU_LAYER_GEMM, v, d2, 3, &g, sizeof(g), et_host_features, 5))
			TH_LOG("gapped gemm");
		for (i = 0; i < 37; i++)
			for (j = 0; j < 45; j++) {
				EXPECT_TRUE(!memcmp(&y1[i * 45 + j], &y2[i * 60 + j], 4))
					TH_LOG("gapped gemm [%zu][%zu]", i, j);
			}
		free(ad);
	}

	/* Conv 1x1 on 64 of 80 channels, into 20 of 30. */
	et_fill_f32(x, 2 * 80 * 120);
	et_fill_f32(w, 20 * 64);
	c.kernel[0] = c.kernel[1] = 1;
	c.stride[0] = c.stride[1] = 1;
	c.dilation[0] = c.dilation[1] = 1;
	t[0] = et_dense(VNPU_DTYPE_F32, 4, dx);
	t[1] = et_dense(VNPU_DTYPE_F32, 4, dw);
	t[2] = et_dense(VNPU_DTYPE_F32, 4, dcy);
	v[0] = t[0];
	v[0].strides[0] = 80 * 120;
	v[1] = t[1];
	v[2] = t[2];
	v[2].strides[0] = 30 * 120;
	{
		float *xd = malloc(2 * 64 * 120 * 4);

		for (i = 0; i < 2; i++)
			memcpy(xd + i * 64 * 120, x + i * 80 * 120, 64 * 120 * 4);
		d1[0] = xd;
		d1[1] = w;
		d1[2] = cy1;
		d2[0] = x;
		d2[1] = w;
		d2[2] = cy2;
		EXPECT_TRUE(!et_run(VNPU_LAYER_CONV, t, d1, 3, &c, sizeof(c), et_host_features, 2))
			TH_LOG("dense conv");
		EXPECT_TRUE(!et_run(VNPU_LAYER_CONV, v, d2, 3, &c, sizeof(c), et_host_features, 4))
			TH_LOG("gapped conv");
		for (i = 0; i < 2; i++) {
			EXPECT_TRUE(!memcmp(cy1 + i * 20 * 120, cy2 + i * 30 * 120, 20 * 120 * 4))
				TH_LOG("gapped conv image %zu", i);
		}
		free(xd);
	}
	free(a);
	free(b);
	free(y1);
	free(y2);
	free(x);
	free(w);
	free(cy1);
	free(cy2);
}

static __u32 rnd(__u32 n)
{
	return (__u32)((et_randf() + 1) / 2 * n) % n;
}

/* Random shapes and geometries, each against the plain loops. */
static void test_random(struct __test_metadata *_metadata)
{
	static const __u32 flag_sets[] = {
		0, VNPU_LAYER_F_BIAS, VNPU_LAYER_F_BIAS | VNPU_LAYER_F_RESIDUAL,
		VNPU_LAYER_F_PACKED, VNPU_LAYER_F_PACKED | VNPU_LAYER_F_BIAS,
	};
	int i;

	for (i = 0; i < 40; i++) {
		struct conv_case c = {};
		__u32 g = 1 + rnd(3);

		c.one_d = rnd(4) == 0;
		c.n = 1 + rnd(2);
		c.c = g * (1 + rnd(9));
		c.m = g * (1 + rnd(13));
		c.group = rnd(5) == 0 ? (__u32)(c.c = c.m = 1 + rnd(20)) : g;
		c.kh = c.one_d ? 1 : 1 + rnd(4);
		c.kw = 1 + rnd(4);
		c.sh = c.one_d ? 1 : 1 + rnd(2);
		c.sw = 1 + rnd(3);
		c.dh = c.one_d ? 1 : 1 + rnd(2);
		c.dw = 1 + rnd(2);
		c.pt = c.one_d ? 0 : rnd(c.kh + 1);
		c.pb = c.one_d ? 0 : rnd(c.kh + 1);
		c.pl = rnd(c.kw + 2);
		c.pr = rnd(c.kw + 2);
		c.h = c.one_d ? 1 : c.dh * (c.kh - 1) + 1 + rnd(15);
		c.w = c.dw * (c.kw - 1) + 1 + rnd(40);
		c.flags = flag_sets[rnd(5)];
		c.act = rnd(2) ? VNPU_ACT_RELU : 0;
		conv_case_run(_metadata, &c);
	}
	for (i = 0; i < 30; i++) {
		struct gemm_case c = { .rank = 2 + rnd(3), .alpha = 1, .beta = 1 };
		__u32 d;

		for (d = 0; d + 2 < c.rank; d++) {
			c.ba[d] = 1 + rnd(3);
			c.bb[d] = rnd(2) ? c.ba[d] : 1;
		}
		c.m = 1 + rnd(150);
		c.n = 1 + rnd(150);
		c.k = 1 + rnd(500);
		c.ta = rnd(2);
		c.tb = rnd(2);
		c.flags = rnd(2) ? VNPU_LAYER_F_BIAS : 0;
		/* Packing takes B row-major: the compiler transposes first. */
		if (c.rank == 2 && rnd(2)) {
			c.flags |= VNPU_LAYER_F_PACKED;
			c.tb = 0;
		}
		c.bias_kind = rnd(4);
		c.alpha = rnd(2) ? 1.0f : 0.75f;
		c.act = rnd(2) ? VNPU_ACT_RELU : 0;
		gemm_case_run(_metadata, &c);
	}
}

/*
 * The tensors of a CONV of @x (dims @dx) by @w (@dw) into @y (@dy), with
 * @bias (@nb values) and the residual @res (Y's shape) when set, which
 * also set their flags in @at: into @t and @d; returns their count.
 */
static __u32 conv_args(struct vnpu_layer_conv *at, const __u64 *dx, float *x,
		       const __u64 *dw, float *w, const __u64 *nb, float *bias,
		       const __u64 *dy, float *res, float *y,
		       struct vnpu_cmd_tensor *t, void **d)
{
	__u32 n = 0;

	t[n] = et_dense(VNPU_DTYPE_F32, 4, dx);
	d[n++] = x;
	t[n] = et_dense(VNPU_DTYPE_F32, 4, dw);
	d[n++] = w;
	if (bias) {
		at->flags |= VNPU_LAYER_F_BIAS;
		t[n] = et_dense(VNPU_DTYPE_F32, 1, nb);
		d[n++] = bias;
	}
	t[n] = et_dense(VNPU_DTYPE_F32, 4, dy);
	if (res) {
		at->flags |= VNPU_LAYER_F_RESIDUAL;
		d[n++] = res;
		t[n] = t[n - 1];
	}
	d[n] = y;
	return n + 1;
}

/*
 * A bias and a RELU, LEAKY_RELU, CLIP or HARD_SWISH after a convolution
 * go to the output in one pass (act_store()), other activations through the
 * general epilogue, in both cases over a row's whole run of padded
 * columns at once; a residual joins act_store()'s pass (or the general
 * epilogue), run per output row's run. A residual of -0.0f adds nothing
 * to any float, so both must give the same bits, with and without bias,
 * dense and depthwise, on every path the host has, the sums' NaNs and
 * zeros included. AVX-512's tiles store Relu, LeakyRelu, the bounds and
 * the residual themselves (37 columns: tiles that straddle two output
 * rows), and so do the AVX2
 * ones over a 1x1 kernel's unpadded columns: the same bits as
 * act_store().
 */
static void test_plain_epilogues(struct __test_metadata *_metadata)
{
	static const struct vnpu_layer_act acts[] = {
		{ .func = VNPU_ACT_IDENTITY },
		{ .func = VNPU_ACT_RELU },
		{ .func = VNPU_ACT_LEAKY_RELU, .alpha = 0x3dcccccd },	/* 0.1 */
		{ .func = VNPU_ACT_CLIP, .alpha = 0xbf000000,		/* -0.5 */
		  .beta = 0x3f333333 },					/* 0.7 */
		{ .func = VNPU_ACT_HARD_SWISH },
		{ .func = VNPU_ACT_SIGMOID },
		{ .func = VNPU_ACT_SILU },
		/* Relu then Max(y, 0.25): in the AVX-512 tiles, both. */
		{ .func = VNPU_ACT_RELU, .flags = VNPU_ACT_F_MAX,
		  .beta = 0x3e800000 },
		/* LeakyRelu then Max(y, -0.4), Min(y, -0): likewise. */
		{ .func = VNPU_ACT_LEAKY_RELU, .flags = VNPU_ACT_F_MAX,
		  .alpha = 0x3e4ccccd, .beta = 0xbecccccd },
		{ .func = VNPU_ACT_IDENTITY, .flags = VNPU_ACT_F_MIN,
		  .beta = 0x80000000 },
		/* Relu's +0 against Max(y, -0): a tie, which gives -0. */
		{ .func = VNPU_ACT_RELU, .flags = VNPU_ACT_F_MAX,
		  .beta = 0x80000000 },
	};
	__u64 dx[4] = { 1, 20, 9, 37 }, dw[4] = { 20, 20, 3, 3 };
	__u64 dy[4] = { 1, 20, 9, 37 }, nb = 20;
	__u32 paths[3] = { 0, VNPU_ENG_F_AVX2_FMA,
			   VNPU_ENG_F_AVX2_FMA | VNPU_ENG_F_AVX512 };
	size_t ny = 20 * 9 * 37, i, a, p;
	float *x = malloc(ny * 4), *w = malloc(20 * 180 * 4);
	float *bias = malloc(nb * 4), *res = malloc(ny * 4);
	float *y1 = malloc(ny * 4), *y2 = malloc(ny * 4);
	float *y_avx2 = malloc(ny * 4), *y_base = malloc(ny * 4);
	struct vnpu_cmd_tensor t[5];
	void *d[5];
	int form, depthwise, rc;

	et_fill_f32(x, ny);
	et_fill_f32(w, 20 * 180);
	et_fill_f32(bias, nb);
	/* Inputs of zero: sums of -0 and +0 meet the bias and the act. */
	for (i = 0; i < ny; i++)
		if (i % (9 * 37) % 3 == 0 && i < 5 * 9 * 37)
			x[i] = 0.0f;
	x[40] = NAN;
	bias[3] = -0.0f;
	for (i = 0; i < ny; i++)
		res[i] = -0.0f;
	for (a = 0; a < sizeof(acts) / sizeof(acts[0]); a++)
		/*
		 * form: bit 0 the bias, bit 1 depthwise, bit 2 a 1x1 kernel
		 * (B read in the input: the AVX2 tiles add the residual
		 * themselves too)
		 */
		for (form = 0; form < 8; form++)
			for (p = 0; p < 3; p++) {
				__u32 k = form & 4 ? 1 : 3;
				struct vnpu_layer_conv at = {
					.group = 1, .kernel = { k, k },
					.stride = { 1, 1 }, .dilation = { 1, 1 },
					.pad_begin = { k / 2, k / 2 },
					.pad_end = { k / 2, k / 2 },
					.act = acts[a],
				};
				float *b = form & 1 ? bias : NULL;
				__u32 n;

				depthwise = (form >> 1) & 1;
				at.group = depthwise ? 20 : 1;
				dw[1] = depthwise ? 1 : 20;
				dw[2] = dw[3] = k;
				if ((paths[p] & et_host_features) != paths[p])
					continue;
				n = conv_args(&at, dx, x, dw, w, &nb, b, dy, NULL,
					      y1, t, d);
				rc = et_run(VNPU_LAYER_CONV, t, d, n, &at,
					    sizeof(at), paths[p], 3);
				/* Then with the residual of -0.0f. */
				n = conv_args(&at, dx, x, dw, w, &nb, b, dy, res,
					      y2, t, d);
				rc = rc ? rc : et_run(VNPU_LAYER_CONV, t, d, n,
						      &at, sizeof(at), paths[p], 3);
				EXPECT_TRUE(!rc)
					TH_LOG("plain epilogue act %u bias %d dw %d k %u path %zu: run failed (%d)",
					       acts[a].func, form & 1, depthwise, k, p, rc);
				EXPECT_TRUE(rc || !memcmp(y1, y2, ny * 4))
					TH_LOG("plain epilogue act %u bias %d dw %d k %u path %zu: not the general epilogue's bits",
					       acts[a].func, form & 1, depthwise, k, p);
				if (p == 0)
					memcpy(y_base, y1, ny * 4);
				EXPECT_TRUE(rc || p != 1 || !memcmp(y1, y_base, ny * 4))
					TH_LOG("plain epilogue act %u bias %d dw %d k %u: AVX2 differs from the baseline",
					       acts[a].func, form & 1, depthwise, k);
				if (p == 1)
					memcpy(y_avx2, y1, ny * 4);
				EXPECT_TRUE(rc || p != 2 || !memcmp(y1, y_avx2, ny * 4))
					TH_LOG("plain epilogue act %u bias %d dw %d k %u: AVX-512 differs from AVX2",
					       acts[a].func, form & 1, depthwise, k);
			}
	free(x);
	free(w);
	free(bias);
	free(res);
	free(y1);
	free(y2);
	free(y_avx2);
	free(y_base);
}

/*
 * A depthwise CONV of a channel per lane (eng_dw_lanes()) takes its bias
 * and a Relu or HardSwish in registers and stores each run of pixels
 * transposed, a row's last run eight pixels wide into the next row: the
 * bits of the same layer with a residual of -0.0f (the windows' general
 * epilogue), at MobileNetV3's shapes (3x3 and 5x5, strides 1 and 2, maps
 * of 7 to 15 pixels: runs of 8 and shorter, a whole run ending a plane;
 * 30x30, whose baseline units are blocks of rows, a short run ending each;
 * stride 3, whose runs' offsets are not constants; at stride 1, whose
 * runs keep their pixels in registers and go two rows at a time with
 * AVX-512, short runs of 1 to 5 pixels after a whole one, rows of 4
 * whose stores reach two rows on, an odd row count's last row alone)
 * with 20 channels (a partial block of 4), on every path the host has, a
 * unit a part where the layer has that many (run last to first).
 */
static void test_dw_lanes_epilogues(struct __test_metadata *_metadata)
{
	static const struct {
		__u32 k, stride;
		__u64 h;
	} shapes[] = { { 3, 1, 14 }, { 3, 2, 15 }, { 5, 1, 7 }, { 5, 2, 14 }, { 3, 1, 8 },
		      { 3, 1, 30 }, { 5, 1, 30 }, { 3, 3, 16 }, { 3, 1, 9 },
		      { 5, 1, 10 }, { 3, 1, 11 }, { 5, 1, 12 }, { 3, 1, 13 },
		      { 5, 1, 4 }, { 3, 1, 5 } };
	static const __u32 funcs[] = { VNPU_ACT_RELU, VNPU_ACT_HARD_SWISH, VNPU_ACT_IDENTITY };
	__u32 paths[3] = { 0, VNPU_ENG_F_AVX2_FMA,
			   VNPU_ENG_F_AVX2_FMA | VNPU_ENG_F_AVX512 };
	enum { C = 20, HW = 30 * 30 };
	float *x = malloc(C * HW * 4), w[C * 25], bias[C];
	float *res = malloc(C * HW * 4), *y1 = malloc(C * HW * 4);
	float *y2 = malloc(C * HW * 4);
	__u64 nb = C;
	size_t i, sh, f, p;

	et_fill_f32(x, C * HW);
	et_fill_f32(w, C * 25);
	et_fill_f32(bias, C);
	for (i = 0; i < C * HW; i++)
		res[i] = -0.0f;
	x[17] = NAN;
	for (sh = 0; sh < sizeof(shapes) / sizeof(shapes[0]); sh++)
		for (f = 0; f < sizeof(funcs) / sizeof(funcs[0]); f++)
			for (p = 0; p < 3; p++) {
				__u32 k = shapes[sh].k, st = shapes[sh].stride;
				__u64 h = shapes[sh].h, o = (h + 2 * (k / 2) - k) / st + 1;
				__u64 dx[4] = { 1, C, h, h }, dw[4] = { C, 1, k, k };
				__u64 dy[4] = { 1, C, o, o };
				struct vnpu_layer_conv at = {
					.group = C, .kernel = { k, k }, .stride = { st, st },
					.dilation = { 1, 1 }, .pad_begin = { k / 2, k / 2 },
					.pad_end = { k / 2, k / 2 }, .act = { .func = funcs[f] },
				};
				struct vnpu_cmd_tensor t[5];
				void *d[5];
				__u32 n;
				int rc;

				if ((paths[p] & et_host_features) != paths[p])
					continue;
				n = conv_args(&at, dx, x, dw, w, &nb, bias, dy, NULL, y1, t, d);
				rc = et_run(VNPU_LAYER_CONV, t, d, n, &at, sizeof(at), paths[p], 64);
				n = conv_args(&at, dx, x, dw, w, &nb, bias, dy, res, y2, t, d);
				rc = rc ? rc : et_run(VNPU_LAYER_CONV, t, d, n, &at, sizeof(at),
						      paths[p], 64);
				EXPECT_TRUE(!rc)
					TH_LOG("dw lanes %ux%u/%u on %llu act %u path %zu: run failed (%d)",
					       k, k, st, (unsigned long long)h, funcs[f], p, rc);
				EXPECT_TRUE(rc || !memcmp(y1, y2, C * o * o * 4))
					TH_LOG("dw lanes %ux%u/%u on %llu act %u path %zu: not the general epilogue's bits",
					       k, k, st, (unsigned long long)h, funcs[f], p);
			}
	free(x);
	free(res);
	free(y1);
	free(y2);
}

/*
 * A fused activation's bound (VNPU_ACT_F_MAX or _MIN) gives the bits of
 * the same CONV without it followed by a BINARY MAX or MIN with the bound
 * as a scalar, through each epilogue (one pass; with a residual of -0.0f
 * the general one; depthwise), on every path, NaNs and zeros included.
 */
static void test_act_bounds(struct __test_metadata *_metadata)
{
	static const struct vnpu_layer_act acts[] = {
		{ VNPU_ACT_LEAKY_RELU, VNPU_ACT_F_MAX, 0x3e4ccccd, 0xbecccccd },
		{ VNPU_ACT_RELU, VNPU_ACT_F_MIN, 0, 0x3e800000 },
		{ VNPU_ACT_IDENTITY, VNPU_ACT_F_MAX, 0, 0 },
		{ VNPU_ACT_IDENTITY, VNPU_ACT_F_MIN, 0, 0x80000000 },
	};
	__u64 dx[4] = { 1, 6, 9, 37 }, dw[4] = { 6, 6, 3, 3 }, dwd[4] = { 6, 1, 3, 3 };
	__u64 dy[4] = { 1, 6, 9, 37 }, nb = 6, one = 1;
	__u32 paths[3] = { 0, VNPU_ENG_F_AVX2_FMA,
			   VNPU_ENG_F_AVX2_FMA | VNPU_ENG_F_AVX512 };
	size_t ny = 6 * 9 * 37, i, a, p;
	float *x = malloc(ny * 4), *w = malloc(6 * 54 * 4), *bias = malloc(nb * 4);
	float *res = malloc(ny * 4), *y1 = malloc(ny * 4), *y2 = malloc(ny * 4);
	struct vnpu_cmd_tensor t[5], tb[3];
	void *d[5], *db[3];
	int form, rc;

	et_fill_f32(x, ny);
	et_fill_f32(w, 6 * 54);
	et_fill_f32(bias, nb);
	for (i = 0; i < ny; i += 4)
		x[i] = 0.0f;
	/* Rows 0 and 1 of each channel zero: sums of zeros meet the bounds. */
	for (i = 0; i < ny; i++)
		if (i % (9 * 37) < 2 * 37)
			x[i] = 0.0f;
	x[300] = NAN;
	for (i = 0; i < ny; i++)
		res[i] = -0.0f;
	for (a = 0; a < sizeof(acts) / sizeof(acts[0]); a++)
		for (form = 0; form < 4; form++)
			for (p = 0; p < 3; p++) {
				/* form: 0 plain, 1 bias, 2 bias + residual, 3 depthwise */
				struct vnpu_layer_conv at = {
					.group = form == 3 ? 6 : 1, .kernel = { 3, 3 },
					.stride = { 1, 1 }, .dilation = { 1, 1 },
					.pad_begin = { 1, 1 }, .pad_end = { 1, 1 },
					.act = acts[a],
				};
				struct vnpu_layer_binary bin = {
					.func = acts[a].flags == VNPU_ACT_F_MAX ?
						VNPU_BIN_MAX : VNPU_BIN_MIN,
				};
				float bound;
				__u32 n;

				if ((paths[p] & et_host_features) != paths[p])
					continue;
				memcpy(&bound, &acts[a].beta, 4);
				n = conv_args(&at, dx, x, form == 3 ? dwd : dw, w, &nb,
					      form ? bias : NULL, dy,
					      form == 2 ? res : NULL, y1, t, d);
				rc = et_run(VNPU_LAYER_CONV, t, d, n, &at, sizeof(at),
					    paths[p], 3);
				/* Without the bound, then BINARY with it. */
				at.act.flags = 0;
				at.act.beta = 0;
				d[n - 1] = y2;
				rc = rc ? rc : et_run(VNPU_LAYER_CONV, t, d, n, &at,
						      sizeof(at), paths[p], 3);
				tb[0] = t[n - 1];
				tb[1] = et_dense(VNPU_DTYPE_F32, 1, &one);
				tb[2] = t[n - 1];
				db[0] = y2;
				db[1] = &bound;
				db[2] = y2;
				rc = rc ? rc : et_run(VNPU_LAYER_BINARY, tb, db, 3, &bin,
						      sizeof(bin), paths[p], 1);
				EXPECT_TRUE(!rc)
					TH_LOG("act bound %zu form %d path %zu: run failed (%d)", a,
					       form, p, rc);
				EXPECT_TRUE(rc || !memcmp(y1, y2, ny * 4))
					TH_LOG("act bound %zu form %d path %zu: not CONV then BINARY's bits",
					       a, form, p);
			}
	free(x);
	free(w);
	free(bias);
	free(res);
	free(y1);
	free(y2);
}

/*
 * A GEMM of one row over packed B runs as a mat-vec: each output must have
 * the bits of the same row inside a block of two rows (the micro-kernels),
 * through every epilogue (bias per column, a residual, an activation, a
 * scale), with A dense or transposed (read through a copy), on every path
 * the host has (baseline, AVX2, AVX-512: the same bits), whole and in 5
 * parts. Depths past ENG_KC take several slices; columns past a panel's
 * multiple, the last panel's padding.
 */
static void test_gemv_rows(struct __test_metadata *_metadata)
{
	static const struct {
		__u64 n, k;
		int ta;
		__u32 flags, act;
		float alpha;
	} cases[] = {
		{ 1, 1, 0, 0, 0, 1 },
		{ 37, 5, 0, VNPU_LAYER_F_BIAS, VNPU_ACT_RELU, 1 },
		{ 1024, 256, 0, VNPU_LAYER_F_RESIDUAL, 0, 1 },
		{ 200, 777, 1, VNPU_LAYER_F_BIAS | VNPU_LAYER_F_RESIDUAL,
		  VNPU_ACT_SIGMOID, 1 },
		{ 129, 385, 0, VNPU_LAYER_F_BIAS, VNPU_ACT_HARD_SWISH, 0.75f },
	};
	__u32 paths[3] = { 0, VNPU_ENG_F_AVX2_FMA,
			   VNPU_ENG_F_AVX2_FMA | VNPU_ENG_F_AVX512 };
	size_t i, p;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		__u64 n = cases[i].n, k = cases[i].k, m, da[2], dy[2];
		__u64 size = vnpu_eng_packed_size(VNPU_PACK_GEMM_B, 1, k, n);
		float *a = malloc(2 * k * 4), *b = malloc(k * n * 4);
		float *packed = malloc(size * 4), *bias = malloc(n * 4);
		float *res = malloc(2 * n * 4), *y1 = malloc(n * 4);
		float *y2 = malloc(2 * n * 4), *first = malloc(n * 4);
		struct vnpu_layer_gemm at = {
			.flags = VNPU_LAYER_F_PACKED | cases[i].flags,
			.alpha = et_f32_bits(cases[i].alpha),
			.beta = et_f32_bits(1.0f),
			.act = { .func = cases[i].act },
		};
		struct vnpu_cmd_tensor t[5];
		void *d[5];
		int rc = 0;

		et_fill_f32(a, 2 * k);
		et_fill_f32(b, k * n);
		et_fill_f32(bias, n);
		et_fill_f32(res, 2 * n);
		EXPECT_TRUE(!vnpu_eng_pack(VNPU_PACK_GEMM_B, b, 1, k, n, packed))
			TH_LOG("gemv: pack");
		for (p = 0; p < 3; p++) {
			if ((paths[p] & et_host_features) != paths[p])
				continue;
			/* Two rows (tiles), then the first alone (mat-vec). */
			for (m = 2; m >= 1 && !rc; m--) {
				__u32 nt = 0;

				da[0] = cases[i].ta ? k : m;
				da[1] = cases[i].ta ? m : k;
				t[nt] = et_dense(VNPU_DTYPE_F32, 2, da);
				if (cases[i].ta) {
					/* A^T stored [k, 2]: row 0 strided. */
					t[nt] = swap_last(t[nt]);
					t[nt].strides[1] = 2;
				}
				d[nt++] = a;
				t[nt] = et_dense(VNPU_DTYPE_F32, 1, &size);
				d[nt++] = packed;
				dy[0] = m;
				dy[1] = n;
				if (cases[i].flags & VNPU_LAYER_F_BIAS) {
					t[nt] = et_dense(VNPU_DTYPE_F32, 1, &n);
					d[nt++] = bias;
				}
				if (cases[i].flags & VNPU_LAYER_F_RESIDUAL) {
					t[nt] = et_dense(VNPU_DTYPE_F32, 2, dy);
					d[nt++] = res;
				}
				t[nt] = et_dense(VNPU_DTYPE_F32, 2, dy);
				d[nt++] = m == 2 ? y2 : y1;
				rc = et_run(VNPU_LAYER_GEMM, t, d, nt, &at,
					    sizeof(at), paths[p], m == 2 ? 1 : 5);
			}
			EXPECT_TRUE(!rc)
				TH_LOG("gemv case %zu path %zu: run failed (%d)", i, p, rc);
			EXPECT_TRUE(rc || !memcmp(y1, y2, n * 4))
				TH_LOG("gemv case %zu path %zu: not the tiles' bits", i, p);
			if (p) {
				EXPECT_TRUE(rc || !memcmp(y1, first, n * 4))
					TH_LOG("gemv case %zu path %zu: not the baseline's bits", i,
					       p);
			} else
				memcpy(first, y1, n * 4);
		}
		free(a);
		free(b);
		free(packed);
		free(bias);
		free(res);
		free(y1);
		free(y2);
		free(first);
	}
}

/*
 * One run of a CONV's parts in the order @order on the scratch of @ctx
 * (kept from earlier runs), with @ctx's epoch.
 */
static int kept_run(const struct vnpu_layer_conv *at, struct vnpu_cmd_tensor *t,
		    void **d, __u32 n, __u32 parts, const __u32 *order,
		    const struct vnpu_eng_ctx *ctx)
{
	__u32 p;
	int rc = 0;

	for (p = 0; !rc && p < parts; p++)
		rc = vnpu_eng_layer_run(VNPU_LAYER_CONV, t, d, n, at,
					order[p], parts, ctx);
	return rc;
}

/*
 * The parts of a command run (struct vnpu_eng_ctx's epoch) share the
 * input window a part copied into the scratch: a strided convolution's
 * own windows, a sliding one, a 1x1's tail copy and a lanes CONV's copy
 * of its padded planes by phase (struct lanes_held). The next run, with a
 * new epoch and a new input at the same address, must read the new input
 * and give the bits of a run on fresh scratch, whatever order a tile
 * takes the parts in.
 */
static void test_kept_window(struct __test_metadata *_metadata)
{
	static const struct {
		__u64 c, hw, m;
		__u32 k, s, p, lanes;
	} cases[] = {
		{ 24, 30, 40, 3, 2, 1 },	/* windows of their own */
		{ 16, 14, 200, 1, 2, 0 },	/* 1x1 strided: one window */
		{ 16, 23, 40, 3, 1, 1 },	/* a sliding window */
		{ 32, 7, 100, 1, 1, 0 },	/* a direct 1x1 and its tail */
		/* layer4.0's 3x3 on the lanes: four units of channels */
		{ 48, 14, 200, 3, 2, 1, 1 },
	};
	static const __u32 order[] = { 0, 2, 1, 3, 5, 4, 7, 6 };
	__u32 features[] = { 0, vnpu_eng_host_features() & VNPU_ENG_F_AVX2_FMA,
			     vnpu_eng_host_features() }, i, f, run;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		for (f = 0; f < 3; f++) {
			struct vnpu_layer_conv at = {};
			__u64 oh = (cases[i].hw + 2 * cases[i].p - cases[i].k) /
				   cases[i].s + 1;
			__u64 dx[4] = { 1, cases[i].c, cases[i].hw, cases[i].hw };
			__u64 dw[4] = { cases[i].m, cases[i].c, cases[i].k,
					cases[i].k };
			__u64 dy[4] = { 1, cases[i].m, oh, oh };
			struct vnpu_cmd_tensor t[3];
			struct vnpu_eng_ctx ctx = { .features = features[f] };
			size_t nx = cases[i].c * cases[i].hw * cases[i].hw;
			size_t ny = cases[i].m * oh * oh;
			float *x = malloc(nx * 4), *y = malloc(ny * 4);
			float *w = malloc(cases[i].m * cases[i].c * cases[i].k *
					  cases[i].k * 4);
			float *fresh = malloc(ny * 4);
			__u64 kt = cases[i].c * cases[i].k * cases[i].k;
			__u64 sl = vnpu_eng_packed_size(VNPU_PACK_CONV_LANES, 1,
							cases[i].m, kt);
			float *pl = malloc(sl * 4);
			__u32 n, parts;
			void *d[3];
			__u64 need;

			at.group = 1;
			at.kernel[0] = cases[i].k;
			at.kernel[1] = cases[i].k;
			at.stride[0] = cases[i].s;
			at.stride[1] = cases[i].s;
			at.dilation[0] = 1;
			at.dilation[1] = 1;
			at.pad_begin[0] = cases[i].p;
			at.pad_begin[1] = cases[i].p;
			at.pad_end[0] = cases[i].p;
			at.pad_end[1] = cases[i].p;
			et_fill_f32(w, cases[i].m * kt);
			n = conv_args(&at, dx, x, dw, w, NULL, NULL, dy, NULL, y,
				      t, d);
			if (cases[i].lanes) {
				at.flags |= VNPU_LAYER_F_PACKED | VNPU_LAYER_F_LANES;
				EXPECT_TRUE(pl && !vnpu_eng_pack(VNPU_PACK_CONV_LANES, w,
								 1, cases[i].m, kt, pl))
					TH_LOG("pack");
				t[1] = et_dense(VNPU_DTYPE_F32, 1, &sl);
				d[1] = pl;
			}
			parts = vnpu_eng_layer_max_parts(VNPU_LAYER_CONV, t, n,
							 &at, ctx.features);
			parts = parts < 8 ? parts : 8;
			need = vnpu_eng_layer_scratch(VNPU_LAYER_CONV, t, n, &at,
						      parts, ctx.features);
			ctx.scratch = malloc(need);
			ctx.scratch_size = need;
			EXPECT_TRUE(ctx.scratch && x && y && w && fresh)
				TH_LOG("alloc");
			for (run = 1; run <= 2; run++) {
				__u32 in_order[8], p;

				/* The second run starts where the first ended. */
				for (p = 0; p < parts; p++)
					in_order[run == 1 ? p : parts - 1 - p] =
						order[p] < parts ? order[p] : p;
				et_fill_f32(x, nx);
				EXPECT_TRUE(!et_run(VNPU_LAYER_CONV, t, d, n, &at, sizeof(at),
						    ctx.features, 1))
					TH_LOG("kept window: fresh run");
				memcpy(fresh, y, ny * 4);
				ctx.epoch = run;
				EXPECT_TRUE(!kept_run(&at, t, d, n, parts, in_order, &ctx))
					TH_LOG("kept window: run");
				EXPECT_TRUE(!memcmp(fresh, y, ny * 4))
					TH_LOG("kept window: case %u features %#x run %u", i,
					       ctx.features, run);
			}
			free(ctx.scratch);
			free(x);
			free(y);
			free(w);
			free(pl);
			free(fresh);
		}
}

/*
 * The activation the AVX2 (and baseline) tiles leave to tile_act() on
 * the rows they stored (act_rows_f32(): Relu and HardSwish in one loop
 * over a tile's six rows, the others a call per row) gives the bits of
 * the same CONV without it followed by a UNARY layer of it (act_f32() on
 * the whole output). The CONV is 1x1 by the identity, so each output is
 * its input exactly: the kinks of each function (HardSwish's -3 and 3
 * and their neighbours), zeros, subnormals, large values and a NaN
 * column meet the activation in full 6x16 tiles and in the rows and
 * columns past them (13 channels, 40 and 16 columns), on every path.
 */
static void test_tile_act_rows(struct __test_metadata *_metadata)
{
	static const struct vnpu_layer_act acts[] = {
		{ .func = VNPU_ACT_RELU },
		{ .func = VNPU_ACT_HARD_SWISH },
		{ .func = VNPU_ACT_LEAKY_RELU, .alpha = 0x3dcccccd },	/* 0.1 */
		{ .func = VNPU_ACT_CLIP, .alpha = 0xbf000000,		/* -0.5 */
		  .beta = 0x3f333333 },					/* 0.7 */
		{ .func = VNPU_ACT_HARD_SIGMOID, .alpha = 0x3e4ccccd,	/* 0.2 */
		  .beta = 0x3f000000 },					/* 0.5 */
		{ .func = VNPU_ACT_SIGMOID },
	};
	static const float corners[] = {
		-3.0f, 3.0f, -3.0000002f, -2.9999998f, 2.9999998f, 3.0000002f,
		0.0f, 1e-45f, -1e-45f, 1e30f, -1e30f, 0.5f, -0.5f, 6.0f, -6.0f,
		1e-38f, -2.5f, 2.5f,
	};
	static const __u64 cols[] = { 40, 16 };
	__u32 paths[3] = { 0, VNPU_ENG_F_AVX2_FMA,
			   VNPU_ENG_F_AVX2_FMA | VNPU_ENG_F_AVX512 };
	enum { C = 13 };
	float w[C * C], *x = malloc(C * 40 * 4), *y1 = malloc(C * 40 * 4);
	float *y2 = malloc(C * 40 * 4);
	size_t i, a, p, c, nc = sizeof(corners) / sizeof(corners[0]);

	for (i = 0; i < C * C; i++)
		w[i] = i % (C + 1) ? 0.0f : 1.0f;
	for (c = 0; c < 2; c++) {
		__u64 dx[4] = { 1, C, 1, cols[c] }, dw[4] = { C, C, 1, 1 };
		size_t ny = C * cols[c];

		et_fill_f32(x, ny);
		for (i = 0; i < ny; i++) {
			if (i % 3 == 0)
				x[i] = corners[i / 3 % nc];
			x[i] = i % cols[c] == 5 ? NAN : x[i] * (i % 5 == 1 ? 7.0f : 1.0f);
		}
		for (a = 0; a < sizeof(acts) / sizeof(acts[0]); a++)
			for (p = 0; p < 3; p++) {
				struct vnpu_layer_conv at = {
					.group = 1, .kernel = { 1, 1 },
					.stride = { 1, 1 }, .dilation = { 1, 1 },
					.act = acts[a],
				};
				struct vnpu_cmd_tensor t[3], tu[2];
				void *d[3], *du[2] = { y2, y2 };
				__u32 n;
				int rc;

				if ((paths[p] & et_host_features) != paths[p])
					continue;
				n = conv_args(&at, dx, x, dw, w, NULL, NULL, dx, NULL, y1,
					      t, d);
				rc = et_run(VNPU_LAYER_CONV, t, d, n, &at, sizeof(at),
					    paths[p], 3);
				at.act = (struct vnpu_layer_act){ .func = VNPU_ACT_IDENTITY };
				d[n - 1] = y2;
				rc = rc ? rc : et_run(VNPU_LAYER_CONV, t, d, n, &at,
						      sizeof(at), paths[p], 3);
				tu[0] = t[n - 1];
				tu[1] = t[n - 1];
				rc = rc ? rc : et_run(VNPU_LAYER_UNARY, tu, du, 2, &acts[a],
						      sizeof(acts[a]), paths[p], 1);
				EXPECT_TRUE(!rc)
					TH_LOG("tile act %u cols %llu path %zu: run failed (%d)",
					       acts[a].func, (unsigned long long)cols[c], p, rc);
				EXPECT_TRUE(rc || !memcmp(y1, y2, ny * 4))
					TH_LOG("tile act %u cols %llu path %zu: not CONV then UNARY's bits",
					       acts[a].func, (unsigned long long)cols[c], p);
			}
	}
	free(x);
	free(y1);
	free(y2);
}

TEST(gemm)
{
	test_random(_metadata);
	test_gapped_views(_metadata);
	test_gemm(_metadata);
	test_conv(_metadata);
	test_pool(_metadata);
	test_plain_epilogues(_metadata);
	test_act_bounds(_metadata);
	test_dw_lanes_epilogues(_metadata);
	test_tile_act_rows(_metadata);
	test_gemv_rows(_metadata);
	test_kept_window(_metadata);
}

/*
 * The micro-kernel tiles at their edges: every depth 1..9, depths above 64
 * with 1..3 steps left after the 4-step trips, and depths around ENG_KC
 * (384; above it the depth splits in even slices, 385 in two of 193), and
 * 1024, A's rows 4 KiB apart, which the AVX-512 tiles take packed.
 * Rows (13 to 30) and columns (45 to 77) are past one full 12x32 tile and
 * not multiples of it, so each layer runs the full tiles and the 6-row,
 * 4-row (AVX-512) and 16-column edge ones. GEMM runs A in rows with B in
 * panels (read in place in the tiles of whole panels, pairs of them on
 * AVX-512, the rows past them packed: 13 rows are two AVX2 panels in place
 * and one row packed; 24 rows all in place; transposed A packed); CONV, with
 * packed or dense weights (A in panels or rows) and stride 1 or 5 (B by
 * offsets into the input or its window, or packed by im2col), runs each
 * of the four 12x32 variants. et_layer_f32() runs every path the host has
 * (baseline, AVX2, AVX-512), compares their bits and the reference.
 */
static const __u64 tile_depths[] = {
	1, 2, 3, 4, 5, 6, 7, 8, 9, 65, 66, 67, 130, 199,
	383, 384, 385, 387, 769, 770, 1024,
};

/* A kernel kh x kw and channels c with c * kh * kw == @k. */
static void tile_kernel(__u64 k, __u64 *c, __u32 *kh, __u32 *kw)
{
	*kh = 1;
	*kw = 1;
	if (k % 9 == 0) {
		*kh = 3;
		*kw = 3;
	} else if (k % 3 == 0) {
		*kw = 3;
	} else if (k % 4 == 0) {
		*kh = 2;
		*kw = 2;
	} else if (k % 2 == 0) {
		*kw = 2;
	} else if (k % 5 == 0) {
		*kw = 5;
	}
	*c = k / (*kh * *kw);
}

static void test_tile_gemm(struct __test_metadata *_metadata, __u64 k, int i)
{
	const __u32 P = VNPU_LAYER_F_PACKED, B = VNPU_LAYER_F_BIAS;
	const __u32 R = VNPU_LAYER_F_RESIDUAL;
	struct gemm_case c = { .rank = 2, .k = k, .alpha = 1, .beta = 1 };

	/* Packed B, bias per column, residual. */
	c.m = 30;
	c.n = 77;
	c.flags = P | B | R;
	c.bias_kind = 0;
	c.act = i % 2 ? (i % 4 == 1 ? VNPU_ACT_RELU : VNPU_ACT_SILU) : 0;
	gemm_case_run(_metadata, &c);
	/* B packed per slice, bias per row, A transposed (strided rows). */
	c.m = 13;
	c.n = 45;
	c.flags = B;
	c.bias_kind = 1;
	c.ta = i % 2;
	c.alpha = 0.75f;
	gemm_case_run(_metadata, &c);
	/* 8 and 3 columns past whole tiles: the AVX2 6x8 tiles. */
	c.n = i % 2 ? 40 : 35;
	gemm_case_run(_metadata, &c);
	/* 1 to 4 columns past whole tiles: the AVX2 column tiles. */
	c.n = 16 * (1 + i % 2) + 1 + i % 4;
	gemm_case_run(_metadata, &c);
	c.m = 30;
	c.n = 49;
	gemm_case_run(_metadata, &c);
	c.m = 13;
	c.n = 45;
	/*
	 * Two panels and 4 rows, stored by the micro-kernels with the bias
	 * per row: AVX-512 runs its 4-row edge tiles.
	 */
	c.m = 28;
	c.ta = 0;
	c.alpha = 1;
	c.act = i % 3 ? 0 : VNPU_ACT_SILU;
	c.flags = P | B;
	gemm_case_run(_metadata, &c);
	c.m = 24;
	gemm_case_run(_metadata, &c);
	/*
	 * Two blocks of rows (past ENG_GEMM_MC, 132): 72 and 67, the second
	 * one 11 panels and 1 row.
	 */
	if (i % 4 == 0) {
		c.m = 139;
		c.n = 33;
		c.ta = 0;
		c.flags = P | R;
		gemm_case_run(_metadata, &c);
	}
}

/*
 * The activations the AVX-512 tiles store themselves, and none; SiLU and
 * LeakyRelu, which every path's tiles apply to their stored outputs
 * (tile_act()).
 */
static const __u32 tile_acts[5] = {
	VNPU_ACT_IDENTITY, VNPU_ACT_RELU, VNPU_ACT_HARD_SWISH, VNPU_ACT_SILU,
	VNPU_ACT_LEAKY_RELU,
};

static void test_tile_conv(struct __test_metadata *_metadata, __u64 k, int i)
{
	const __u32 P = VNPU_LAYER_F_PACKED, B = VNPU_LAYER_F_BIAS;
	const __u32 R = VNPU_LAYER_F_RESIDUAL;
	struct conv_case c = { .n = 1, .group = 1, .sh = 1, .sw = 1,
			       .dh = 1, .dw = 1 };
	static const struct {
		__u32 flags, stride, pad;
	} forms[] = {
		{ 0, 1, 1 },	/* A panels, B by offsets into the window */
		{ 0, 5, 0 },	/* A panels, B im2col panels */
		{ 1, 1, 1 },	/* A rows (dense weights), B by offsets */
		{ 1, 5, 0 },	/* A rows, B panels */
	};
	size_t f;

	tile_kernel(k, &c.c, &c.kh, &c.kw);
	/* 13, 30 and 28 rows: 1, 6 and 4 past whole tiles of 12. */
	c.m = i % 2 ? 13 : i % 4 ? 30 : 28;
	for (f = 0; f < sizeof(forms) / sizeof(forms[0]); f++) {
		c.flags = forms[f].flags ? B | R : P | B | R;
		if (f % 2)
			c.flags &= ~R;
		c.sh = c.sw = forms[f].stride;
		c.pt = c.pl = c.pb = c.pr = forms[f].pad;
		if (forms[f].stride == 1) {
			/* Columns: (5 + 2 - kh + 1) x 11 padded ones. */
			c.h = 5;
			c.w = 9;
		} else {
			/* 6 x 8 = 48 columns. */
			c.h = 26;
			c.w = 36;
		}
		c.act = tile_acts[(i + f) % 5];
		conv_case_run(_metadata, &c);
		/*
		 * Rows of 37 outputs: the AVX-512 tiles store the residual
		 * and Relu themselves, across two output rows under masks.
		 */
		if (forms[f].stride == 1 && c.flags & R) {
			c.w = 37;
			conv_case_run(_metadata, &c);
		}
	}
	/* 1x1 without padding: B by offsets into the input itself. */
	c.kh = c.kw = 1;
	c.c = k;
	c.sh = c.sw = 1;
	c.pt = c.pl = c.pb = c.pr = 0;
	c.h = 5;
	c.w = 9;
	c.flags = P | B;
	conv_case_run(_metadata, &c);
	/* 5 x 8 and 5 x 7: 8 and 3 columns past whole tiles (AVX2 6x8). */
	c.w = i % 2 ? 8 : 7;
	conv_case_run(_metadata, &c);
	/* 7 x 7, 2 x 9, 4 x 5: 1, 2 and 4 columns past whole tiles. */
	c.h = i % 3 == 0 ? 7 : i % 3 == 1 ? 2 : 4;
	c.w = i % 3 == 0 ? 7 : i % 3 == 1 ? 9 : 5;
	conv_case_run(_metadata, &c);
	c.h = 5;
	c.w = 9;
	c.flags = B | R;
	conv_case_run(_metadata, &c);
	/*
	 * 5 x 37: AVX-512 tiles store the residual and the activation over
	 * 37-wide rows.
	 */
	c.w = 37;
	c.act = tile_acts[i % 5 ? i % 5 : 1];
	conv_case_run(_metadata, &c);
}

TEST(tiles)
{
	size_t i;

	for (i = 0; i < sizeof(tile_depths) / sizeof(tile_depths[0]); i++) {
		test_tile_gemm(_metadata, tile_depths[i], (int)i);
		test_tile_conv(_metadata, tile_depths[i], (int)i);
	}
}

KSFT_MAIN

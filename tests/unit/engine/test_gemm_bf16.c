// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * GEMM and CONV over packed bf16 weights in depth pairs: the pair layout
 * (vnpu_eng_pair_bf16(), bad input included), and the AVX512-BF16 kernels'
 * numbers (VNPU_ENG_F_AVX512_BF16), bit for bit against a scalar model of
 * vdpbf16ps: activations rounded to bf16, then per depth pair
 * s = fma(a[2p+1], b[2p+1], s), s = fma(a[2p], b[2p], s), an odd depth's
 * last step the pair (x, 0). Whole and split runs must agree, and the
 * widening path (the same layer without the bit: f32 activations) must be
 * within bf16's rounding of it. Without AVX512-BF16 on the host, only the
 * layout and the widening path run.
 */
#include "engine_test.h"
#include "ksft_main.h"
#include "vnpu_eng_priv.h"

#define BF16 VNPU_DTYPE_BF16
#define F32 VNPU_DTYPE_F32
#define FMA_PATH (VNPU_ENG_F_AVX2_FMA | VNPU_ENG_F_AVX512)
#define BF_PATH (FMA_PATH | VNPU_ENG_F_AVX512_BF16)

static __u16 to_bf16(float f)
{
	__u32 x = et_f32_bits(f);

	if ((x & 0x7f800000) == 0)	/* subnormals flush to zero */
		return (__u16)((x >> 16) & 0x8000);
	return (__u16)((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

static float of_bf16(__u16 h)
{
	__u32 x = (__u32)h << 16;
	float f;

	memcpy(&f, &x, 4);
	return f;
}

/* The model of one output: rows @a and @b of @kt bf16 values. */
static float dot_model(const float *a, const float *b, __u64 kt)
{
	float s = 0.0f;
	__u64 k;

	for (k = 0; k + 1 < kt; k += 2) {
		s = fmaf(a[k + 1], b[k + 1], s);
		s = fmaf(a[k], b[k], s);
	}
	if (kt % 2) {
		s = fmaf(0.0f, 0.0f, s);
		s = fmaf(a[kt - 1], b[kt - 1], s);
	}
	return s;
}

/* Values of random magnitude far from subnormal sums. */
static float val(void)
{
	return et_randf() * (float)(1 << (rand() % 6)) / 8.0f + 1e-3f;
}

/* The cases' @act past enum vnpu_act_func: LeakyRelu(0.2) then Max(y, -0.4). */
#define ACT_LEAKY_MAX 0x100
/*
 * Or'ed into @act (SiLU or Sigmoid): some sums past the logistic
 * function's fast range (far_epi()).
 */
#define ACT_FAR 0x200

/* Layer activation @act of a case. */
static struct vnpu_layer_act case_act(__u32 act)
{
	struct vnpu_layer_act a = { .func = act & ~ACT_FAR };

	if (act == VNPU_ACT_LEAKY_RELU || act == ACT_LEAKY_MAX) {
		a.func = VNPU_ACT_LEAKY_RELU;
		a.alpha = et_f32_bits(0.2f);
	}
	if (act == ACT_LEAKY_MAX) {
		a.flags = VNPU_ACT_F_MAX;
		a.beta = et_f32_bits(-0.4f);
	}
	return a;
}

/*
 * The epilogue of a sum @x as the engine's: plus the bias @c and the
 * residual @r (when there are), then Relu, HardSwish (hswish()'s
 * operations) or LeakyRelu(0.2), with Max(y, -0.4) after it, for @act.
 */
static float epi_model(float x, const float *c, const float *r, __u32 act)
{
	float h;

	if (c)
		x = x + *c;
	if (r)
		x = x + *r;
	if (act == VNPU_ACT_RELU)
		return x < 0 ? 0.0f : x;
	if (act == VNPU_ACT_LEAKY_RELU || act == ACT_LEAKY_MAX)
		x = x < 0 ? x * 0.2f : x;
	if (act == ACT_LEAKY_MAX)
		return x != x || x > -0.4f ? x : -0.4f;
	if (act != VNPU_ACT_HARD_SWISH)
		return x;
	h = (x + 3.0f) * (1.0f / 6.0f);
	return h < 0 ? 0.0f : h > 1 ? x : x * h;
}

/*
 * SiLU or Sigmoid on the @n pre-activation outputs of @model in place
 * when @act says: as the epilogue of a layer on the AVX512-BF16 kernels
 * gives it, at bf16's grade (vnpu_eng_act_avx512() with bf16, the
 * engine's own bits, which engine-vmath bounds), or in float where the
 * host has no AVX-512 (only the widening path runs there, held within
 * tolerance).
 */
static void silu_model(float *model, __u64 n, __u32 act)
{
	__u32 func = act & ~ACT_FAR;
	__u64 i;

	if (func != VNPU_ACT_SILU && func != VNPU_ACT_SIGMOID)
		return;
	if (et_host_features & VNPU_ENG_F_AVX512) {
		vnpu_eng_act_avx512(func, model, model, n, 1);
		return;
	}
	for (i = 0; i < n; i++)
		model[i] = (func == VNPU_ACT_SILU ? model[i] : 1.0f) /
			   (1.0f + expf(-model[i]));
}

/*
 * With ACT_FAR in @act, sums past the logistic function's fast range
 * (VM_LOGISTIC_NORMAL) among the others: the @nb biases at @bias of
 * channels 1, 2 and 3 +-infinity and a NaN, every fifth one +-90 or so;
 * every seventh of the @nr elements of the residual @res +-100.
 */
static void far_epi(__u32 act, float *bias, __u64 nb, float *res, __u64 nr)
{
	__u64 i;

	if (!(act & ACT_FAR))
		return;
	for (i = 0; i < nb; i += 5)
		bias[i] = (i % 2 ? -90.0f : 90.0f) + (float)i / 8;
	bias[1 % nb] = INFINITY;
	bias[2 % nb] = -INFINITY;
	bias[3 % nb] = NAN;
	for (i = 3; i < nr; i += 7)
		res[i] = i % 2 ? -100.0f : 100.0f;
}

/*
 * After the input and the weights at @t and @data: the @nb floats of
 * @bias and the residual @res (of Y's shape) as @flags asks, then Y (@y,
 * @rank dims @dy). Returns the tensors.
 */
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

/* Each element (k, x) of every panel where eng_pair_at() says. */
static void pair_layout(struct __test_metadata *_metadata)
{
	static const __u64 shapes[][4] = {
		{ VNPU_PACK_GEMM_B, 1, 7, 37 }, { VNPU_PACK_GEMM_B, 1, 8, 16 },
		{ VNPU_PACK_CONV_W, 3, 13, 9 }, { VNPU_PACK_CONV_W, 1, 6, 10 },
		{ VNPU_PACK_WINO2_W, 2, 7, 27 }, { VNPU_PACK_WINO2_W, 1, 6, 36 },
	};
	size_t i;

	for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		__u32 layout = (__u32)shapes[i][0];
		__u64 g = shapes[i][1], r = shapes[i][2], c = shapes[i][3];
		__u64 size = vnpu_eng_packed_size(layout, g, r, c), e;
		__u64 w = layout == VNPU_PACK_GEMM_B ? VNPU_PACK_NR : VNPU_PACK_MR;
		__u64 kt = layout == VNPU_PACK_GEMM_B ? r :
			   layout == VNPU_PACK_WINO2_W ? c / 9 : c;
		__u16 *p = malloc(size * 2), *q = malloc(size * 2);

		for (e = 0; e < size; e++)
			p[e] = q[e] = (__u16)(e * 2654435761u >> 7);
		EXPECT_TRUE(!vnpu_eng_pair_bf16(layout, g, r, c, q))
			TH_LOG("pair %zu", i);
		for (e = 0; e < size; e++) {
			__u64 base = e / (w * kt) * w * kt, k = e % (w * kt) / w;
			__u64 x = e % w, at;

			at = k < (kt & ~1ull) ? (k / 2) * 2 * w + 2 * x + k % 2 :
						k * w + x;
			if (q[base + at] != p[e]) {
				EXPECT_TRUE(false)
					TH_LOG("pair %zu: element %llu misplaced", i,
					       (unsigned long long)e);
				break;
			}
		}
		free(p);
		free(q);
	}
	EXPECT_EQ(VNPU_ENG_EINVAL, vnpu_eng_pair_bf16(99, 1, 4, 4, NULL))
		TH_LOG("pair: bad layout");
	EXPECT_EQ(VNPU_ENG_EINVAL, vnpu_eng_pair_bf16(VNPU_PACK_QCONV_W, 1, 4, 4, NULL))
		TH_LOG("pair: QCONV_W's i8 rows");
	EXPECT_EQ(VNPU_ENG_EINVAL, vnpu_eng_pair_bf16(VNPU_PACK_GEMM_B, 2, 4, 4, NULL))
		TH_LOG("pair: GEMM_B of two groups");
	EXPECT_EQ(VNPU_ENG_EINVAL, vnpu_eng_pair_bf16(VNPU_PACK_GEMM_B, 1, 1ull << 40, 4, NULL))
		TH_LOG("pair: huge");
	EXPECT_TRUE(!vnpu_eng_pair_bf16(VNPU_PACK_CONV_W, 1, 0, 4, NULL))
		TH_LOG("pair: empty");
}

/*
 * Runs a layer (output tensor @n - 1, f32 of @ny) on the BF16 path whole
 * and in 7 and 64 parts against @model bit for bit, and on the widening
 * path against it within bf16's rounding of sum |a * b| (@mag). With
 * @widens (a CONV of one panel of output channels), the BF16 path widens
 * too: its runs must give the widening run's bits instead.
 */
static void check_paths(struct __test_metadata *_metadata, const char *name, __u32 op,
			const struct vnpu_cmd_tensor *t,
			void **data, __u32 n, const void *at, __u32 size,
			const float *model, const float *mag, __u64 ny, int widens)
{
	static const __u32 parts[3] = { 1, 7, 64 };
	float *y = data[n - 1], *wide = NULL;
	const float *want = model;
	__u64 i;
	int p;

	if ((et_host_features & FMA_PATH) == FMA_PATH) {
		memset(y, 0x7f, ny * 4);
		EXPECT_TRUE(!et_run(op, t, data, n, at, size, FMA_PATH, 7))
			TH_LOG("%s: widening run", name);
		for (i = 0; i < ny; i++)
			if (fabsf(y[i] - model[i]) > 0x1p-7f * mag[i] + 1e-6f) {
				EXPECT_TRUE(false)
					TH_LOG("%s: widened [%llu] %a, model %a", name,
					       (unsigned long long)i, y[i], model[i]);
				break;
			}
		wide = malloc(ny * 4);
		memcpy(wide, y, ny * 4);
		if (widens)
			want = wide;
	}
	for (p = 0; p < 3 && (et_host_features & VNPU_ENG_F_AVX512_BF16); p++) {
		memset(y, 0x7f, ny * 4);
		EXPECT_TRUE(!et_run(op, t, data, n, at, size, BF_PATH, parts[p]))
			TH_LOG("%s: bf16 run", name);
		for (i = 0; i < ny; i++)
			if (memcmp(&y[i], &want[i], 4)) {
				EXPECT_TRUE(false)
					TH_LOG("%s (%u parts) [%llu]: %a, %s %a", name, parts[p],
					       (unsigned long long)i, y[i],
					       widens ? "widened" : "model", want[i]);
				break;
			}
	}
	free(wide);
}

/*
 * C[m, n] = act(A[m, k] B[k, n] + bias[n] + R[m, n]), B packed bf16
 * pairs, the bias and R by @flags.
 */
static void gemm_epi_case(struct __test_metadata *_metadata, __u64 m, __u64 n,
			  __u64 k, __u32 flags, __u32 act)
{
	__u64 da[2] = { m, k }, dy[2] = { m, n }, size, i, j, kk;
	float *a = malloc(m * k * 4), *b = malloc(k * n * 4), *pk;
	float *y = malloc(m * n * 4), *model = malloc(m * n * 4);
	float *mag = malloc(m * n * 4), *ar = malloc(k * 4), *bc = malloc(k * 4);
	float *bias = malloc(n * 4), *res = malloc(m * n * 4);
	struct vnpu_layer_gemm at = { .flags = VNPU_LAYER_F_PACKED | flags,
				      .alpha = et_f32_bits(1), .beta = et_f32_bits(1),
				      .act = case_act(act) };
	__u16 *ph;
	char name[64];

	size = vnpu_eng_packed_size(VNPU_PACK_GEMM_B, 1, k, n);
	pk = malloc(size * 4);
	ph = malloc(size * 2);
	for (i = 0; i < m * k; i++)
		a[i] = val();
	for (i = 0; i < k * n; i++)
		b[i] = of_bf16(to_bf16(val()));
	for (i = 0; i < n; i++)
		bias[i] = -et_randf() * (float)k / 16.0f;
	for (i = 0; i < m * n; i++)
		res[i] = et_randf() * 4.0f - 2.0f;
	far_epi(act, bias, n, res, m * n);
	vnpu_eng_pack(VNPU_PACK_GEMM_B, b, 1, k, n, pk);
	for (i = 0; i < size; i++)
		ph[i] = to_bf16(pk[i]);
	vnpu_eng_pair_bf16(VNPU_PACK_GEMM_B, 1, k, n, ph);
	for (i = 0; i < m; i++)
		for (j = 0; j < n; j++) {
			mag[i * n + j] = 0;
			for (kk = 0; kk < k; kk++) {
				ar[kk] = of_bf16(to_bf16(a[i * k + kk]));
				bc[kk] = b[kk * n + j];
				mag[i * n + j] += fabsf(a[i * k + kk] * bc[kk]);
			}
			model[i * n + j] =
				epi_model(dot_model(ar, bc, k),
					  flags & VNPU_LAYER_F_BIAS ? &bias[j] : 0,
					  flags & VNPU_LAYER_F_RESIDUAL ?
					  &res[i * n + j] : 0, act);
		}
	silu_model(model, m * n, act);
	{
		struct vnpu_cmd_tensor t[5] = { et_dense(F32, 2, da),
						et_dense(BF16, 1, &size) };
		void *data[5] = { a, ph };
		__u32 nt = epi_tensors(t, data, flags, &n, bias, 2, dy, res, y);

		snprintf(name, sizeof(name), "gemm bf16 %llux%llux%llu e%x/%u",
			 (unsigned long long)m, (unsigned long long)n,
			 (unsigned long long)k, flags, act);
		check_paths(_metadata, name, VNPU_LAYER_GEMM, t, data, nt, &at, sizeof(at),
			    model, mag, m * n, 0);
	}
	free(a);
	free(b);
	free(pk);
	free(ph);
	free(y);
	free(model);
	free(mag);
	free(ar);
	free(bc);
	free(bias);
	free(res);
}

static void gemm_case(struct __test_metadata *_metadata, __u64 m, __u64 n, __u64 k)
{
	gemm_epi_case(_metadata, m, n, k, 0, VNPU_ACT_IDENTITY);
}

/*
 * One image, @c channels of @h x @w, @m outputs of @kh x @kw, stride @s,
 * padding @pr rows and @pw columns on each side.
 */
static void conv_pads_case(struct __test_metadata *_metadata, __u64 c, __u64 h,
			   __u64 w, __u64 m, __u64 kh, __u64 kw, __u32 s, __u32 pr,
			   __u32 pw, __u32 flags, __u32 act)
{
	__u64 oh = (h + 2 * pr - kh) / s + 1, ow = (w + 2 * pw - kw) / s + 1;
	__u64 kt = c * kh * kw, dx[4] = { 1, c, h, w }, dy[4] = { 1, m, oh, ow };
	__u64 size = vnpu_eng_packed_size(VNPU_PACK_CONV_W, 1, m, kt), i, q, k;
	float *x = malloc(c * h * w * 4), *wt = malloc(m * kt * 4);
	float *pk = malloc(size * 4), *y = malloc(m * oh * ow * 4);
	float *model = malloc(m * oh * ow * 4), *mag = malloc(m * oh * ow * 4);
	float *col = malloc(kt * 4), *bias = malloc(m * 4);
	float *res = malloc(m * oh * ow * 4);
	__u16 *ph = malloc(size * 2);
	struct vnpu_layer_conv at = { .flags = VNPU_LAYER_F_PACKED | flags,
				      .group = 1, .act = case_act(act),
				      .kernel = { (__u32)kh, (__u32)kw },
				      .stride = { s, s }, .dilation = { 1, 1 },
				      .pad_begin = { pr, pw },
				      .pad_end = { pr, pw } };
	char name[64];

	for (i = 0; i < c * h * w; i++)
		x[i] = val();
	for (i = 0; i < m * kt; i++)
		wt[i] = of_bf16(to_bf16(val()));
	/* About as large as the sums: some outputs below zero, some not. */
	for (i = 0; i < m; i++)
		bias[i] = -et_randf() * (float)kt / 16.0f;
	for (i = 0; i < m * oh * ow; i++)
		res[i] = et_randf() * 4.0f - 2.0f;
	far_epi(act, bias, m, res, m * oh * ow);
	vnpu_eng_pack(VNPU_PACK_CONV_W, wt, 1, m, kt, pk);
	for (i = 0; i < size; i++)
		ph[i] = to_bf16(pk[i]);
	vnpu_eng_pair_bf16(VNPU_PACK_CONV_W, 1, m, kt, ph);
	for (q = 0; q < oh * ow; q++) {
		for (k = 0; k < kt; k++) {
			long ih = (long)(q / ow * s + k % (kh * kw) / kw) - pr;
			long iw = (long)(q % ow * s + k % kw) - pw;

			col[k] = ih < 0 || iw < 0 || ih >= (long)h || iw >= (long)w ?
				 0.0f : x[(k / (kh * kw) * h + ih) * w + iw];
		}
		for (i = 0; i < m; i++) {
			float ar[4096];

			mag[i * oh * ow + q] = 0;
			for (k = 0; k < kt; k++) {
				ar[k] = of_bf16(to_bf16(col[k]));
				mag[i * oh * ow + q] += fabsf(col[k] * wt[i * kt + k]);
			}
			model[i * oh * ow + q] =
				epi_model(dot_model(wt + i * kt, ar, kt),
					  flags & VNPU_LAYER_F_BIAS ? &bias[i] : 0,
					  flags & VNPU_LAYER_F_RESIDUAL ?
					  &res[i * oh * ow + q] : 0, act);
		}
	}
	silu_model(model, m * oh * ow, act);
	{
		struct vnpu_cmd_tensor t[5] = { et_dense(F32, 4, dx),
						et_dense(BF16, 1, &size) };
		void *data[5] = { x, ph };
		__u32 n = epi_tensors(t, data, flags, &m, bias, 4, dy, res, y);

		snprintf(name, sizeof(name), "conv bf16 c%llu %llux%llu s%u p%u,%u w%llu e%x/%u",
			 (unsigned long long)c, (unsigned long long)kh,
			 (unsigned long long)kw, s, pr, pw,
			 (unsigned long long)w, flags, act);
		check_paths(_metadata, name, VNPU_LAYER_CONV, t, data, n, &at, sizeof(at),
			    model, mag, m * oh * ow, m <= VNPU_PACK_MR);
	}
	free(x);
	free(wt);
	free(pk);
	free(ph);
	free(y);
	free(model);
	free(mag);
	free(col);
	free(bias);
	free(res);
}

static void conv_epi_case(struct __test_metadata *_metadata, __u64 c, __u64 h, __u64 w,
			  __u64 m, __u64 kh, __u64 kw, __u32 s, __u32 pad,
			  __u32 flags, __u32 act)
{
	conv_pads_case(_metadata, c, h, w, m, kh, kw, s, pad, pad, flags, act);
}

static void conv_case(struct __test_metadata *_metadata, __u64 c, __u64 h, __u64 w, __u64 m,
		      __u64 kh, __u64 kw, __u32 s, __u32 pad)
{
	conv_epi_case(_metadata, c, h, w, m, kh, kw, s, pad, 0, VNPU_ACT_IDENTITY);
}

/* B^T of F(2x2, 3x3) on four values @s apart, in place (wino2_bt()). */
static void w2_bt(float *p, int s)
{
	float d0 = p[0], d1 = p[s], d2 = p[2 * s], d3 = p[3 * s];

	p[0] = d0 - d2;
	p[s] = d1 + d2;
	p[2 * s] = d2 - d1;
	p[3 * s] = d1 - d3;
}

/* A^T of F(2x2, 3x3): four values @s apart to two @os apart. */
static void w2_at(const float *p, int s, float *o, int os)
{
	o[0] = (p[0] + p[s]) + p[2 * s];
	o[os] = (p[s] - p[2 * s]) - p[3 * s];
}

/* B^T of F(4, 3) on six values @s apart, in place (ENG_WINO42_BT()). */
static void w42_bt(float *p, int s)
{
	float o[6];
	int i;

	ENG_WINO42_BT(float, p[0], p[s], p[2 * s], p[3 * s], p[4 * s], p[5 * s], o);
	for (i = 0; i < 6; i++)
		p[i * s] = o[i];
}

/* A^T of F(4, 3): six values @s apart to four @os apart (ENG_WINO42_AT()). */
static void w42_at(const float *p, int s, float *o, int os)
{
	float y[4];
	int i;

	ENG_WINO42_AT(float, p[0], p[s], p[2 * s], p[3 * s], p[4 * s], p[5 * s], y);
	for (i = 0; i < 4; i++)
		o[i * os] = y[i];
}

/*
 * |A| x |B| for the bound below: rows of |B^T| (F(2, 3)'s 4x4, F(4, 3)'s
 * 6x6 as ENG_WINO42_BT() expands) and of |A^T| (2x4, 4x6).
 */
static const float w2_abt[4][6] = {
	{ 1, 0, 1, 0 }, { 0, 1, 1, 0 }, { 0, 1, 1, 0 }, { 0, 1, 0, 1 },
};
static const float w42_abt[6][6] = {
	{ 2, 3, 4, 3, 2, 0 }, { 0, 2, 1, 5, 2, 0 }, { 0, 2, 5, 1, 2, 0 },
	{ 0, 2, 1, 2, 1, 0 }, { 0, 1, 2, 1, 2, 0 }, { 0, 2, 3, 4, 3, 2 },
};
static const double w2_aat[4][6] = { { 1, 1, 1, 0 }, { 0, 1, 1, 1 } };
static const double w42_aat[4][6] = {
	{ 1, 1, 1, 8, 1, 0 }, { 0, 1, 1, 4, 2, 0 },
	{ 0, 1, 1, 2, 4, 0 }, { 0, 1, 1, 1, 8, 1 },
};

/*
 * The error bound of a Winograd output, from the model's own U and V
 * (exact in bf16's unit roundoff u = 2^-8, to first order in f32's):
 * with V = B^T d B and U = G g G^T exact and the layer's V' = V (1 + e),
 * U' = U (1 + f), |e|, |f| <= u (each rounded to bf16 once), the output
 * at (p, q) of its tile is (A^T (sum over channels of U' . V') A)[p][q]:
 *
 *	|y - ref| <= (2u + u^2) (|A^T| S |A|)[p][q] + f32's roundings,
 *	S[i][j] = sum over channels of |U'[i][j]| |V'[i][j]| / (1 - u)^2.
 *
 * The f32 sums over the channels and A^T add at most (cg + 8) 2^-24 of
 * the same S; U's and V's f32 transforms (G's entries at most 1, B^T's
 * at most 5, a handful of roundings each) at most 2^-18 of (|A^T| T |A|),
 * T[i][j] = sum over channels of (sum |g|) (|B^T| |d| |B|)[i][j].
 *
 * Not the taps an output reads: V mixes its whole tile, whose other
 * inputs cancel only in exact arithmetic, so an output whose own taps
 * are small (a corner with pads of 2 reads one input of its tile's
 * four) keeps the rounding of its neighbours' inputs. The old bound,
 * 2^-7 of sum |x w| over the output's taps between the widened run and
 * the model, failed there on other random data (c7 34x30 m9 p2 with
 * rand() shifted). The cases reach 2^-1.7 of this bound over 40 shifts
 * of rand(): few channels, few roundings to cancel.
 */
static double wino_worst[2];

/*
 * A bf16 Winograd layer of one image, F(2x2, 3x3) (@wh 2,
 * VNPU_LAYER_F_WINO2) or F(4x2, 3x3) (@wh 4, VNPU_LAYER_F_WINO42), @c
 * channels of @h x @w, @m outputs, pads @pad (@groups groups): on the
 * AVX512-BF16 path bit for bit against a model of V rounded to bf16 once
 * and the pair sums of vdpbf16ps (check_paths(): whole and in 7 and 64
 * parts), the widening paths (baseline, AVX2, AVX-512) alike, and both
 * within the kind's bound of the direct convolution on the f32 weights in
 * double; F(2x2, 3x3) over f32 U of the rounded values (the f32 layers of
 * vnpu_eng_wino2_pays()) on every path gives the widening paths' bits.
 */
static void wino2_case(struct __test_metadata *_metadata, __u64 wh, __u64 c, __u64 h,
		       __u64 w, __u64 m, __u32 pad, __u32 groups)
{
	__u64 oh = h + 2 * pad - 2, ow = w + 2 * pad - 2, cg = c / groups, mg = m / groups;
	__u64 tw = (ow + 1) / 2, th = (oh + wh - 1) / wh, dx[4] = { 1, c, h, w };
	__u64 dy[4] = { 1, m, oh, ow }, ny = m * oh * ow, rh = wh + 2, xn = rh * 4;
	__u32 layout = wh == 4 ? VNPU_PACK_WINO42_W : VNPU_PACK_WINO2_W;
	__u64 size = vnpu_eng_packed_size(layout, groups, mg, cg * 9);
	__u64 pr = (mg + VNPU_PACK_MR - 1) / VNPU_PACK_MR * VNPU_PACK_MR;
	float *x = malloc(c * h * w * 4), *wt = malloc(m * cg * 9 * 4);
	float *pk = malloc(size * 4), *uf = malloc(size * 4);
	float *y = malloc(ny * 4), *model = malloc(ny * 4), *mag = malloc(ny * 4);
	float *v = malloc(xn * cg * 4), *ur = malloc(cg * 4), *other = malloc(ny * 4);
	float *vw = malloc(xn * cg * 4);
	double *ref = malloc(ny * sizeof(double));
	double *bnd = malloc(ny * sizeof(double)), *worst = &wino_worst[wh == 4];
	double f1 = (0x1p-7 + 0x1p-16) / ((1 - 0x1p-8) * (1 - 0x1p-8)) + (cg + 8) * 0x1p-24;
	const float (*abt)[6] = wh == 4 ? w42_abt : w2_abt;
	const double (*aat)[6] = wh == 4 ? w42_aat : w2_aat;
	__u16 *ph = malloc(size * 2);
	struct vnpu_layer_conv at = { .flags = wh == 4 ? VNPU_LAYER_F_WINO42 :
					       VNPU_LAYER_F_WINO2, .group = groups,
				      .kernel = { 3, 3 }, .stride = { 1, 1 },
				      .dilation = { 1, 1 }, .pad_begin = { pad, pad },
				      .pad_end = { pad, pad } };
	static const __u32 paths[3] = { 0, VNPU_ENG_F_AVX2_FMA, FMA_PATH };
	__u64 i, g, mm, k, t, xi, a, b, a2, b2;
	char name[64];

	for (i = 0; i < c * h * w; i++)
		x[i] = val();
	for (i = 0; i < m * cg * 9; i++)
		wt[i] = val() - 0.5f;
	EXPECT_TRUE(size && !(wh == 4 ? vnpu_eng_wino42_pack(wt, groups, mg, cg * 9, pk) :
			      vnpu_eng_wino2_pack(wt, groups, mg, cg * 9, pk)))
		TH_LOG("wino2 pack");
	for (i = 0; i < size; i++) {
		ph[i] = to_bf16(pk[i]);
		uf[i] = of_bf16(ph[i]);
	}
	EXPECT_TRUE(!vnpu_eng_pair_bf16(layout, groups, mg, cg * 9, ph))
		TH_LOG("wino2 pair");
	/* The model: per tile V in f32, rounded; pair sums; A^T in f32. */
	for (g = 0; g < groups; g++)
		for (t = 0; t < th * tw; t++) {
			float d[24], mt[24], o[16], o2[8];
			double se[24], te[24];

			for (k = 0; k < cg; k++) {
				for (a = 0; a < rh; a++)
					for (b = 0; b < 4; b++) {
						long iy = (long)(t / tw * wh + a) - pad;
						long ix = (long)(t % tw * 2 + b) - pad;

						d[a * 4 + b] = iy < 0 || ix < 0 || iy >= (long)h ||
							       ix >= (long)w ? 0.0f :
							       x[((g * cg + k) * h + iy) * w + ix];
					}
				/* |B^T| |d| |B|, for the bound's f32 part. */
				for (xi = 0; xi < xn; xi++) {
					vw[xi * cg + k] = 0;
					for (a = 0; a < rh; a++)
						for (b = 0; b < 4; b++)
							vw[xi * cg + k] += abt[xi / 4][a] *
									   w2_abt[xi % 4][b] *
									   fabsf(d[a * 4 + b]);
				}
				for (a = 0; a < rh; a++)
					w2_bt(d + 4 * a, 1);
				for (b = 0; b < 4; b++) {
					if (wh == 4)
						w42_bt(d + b, 4);
					else
						w2_bt(d + b, 4);
				}
				for (xi = 0; xi < xn; xi++)
					v[xi * cg + k] = of_bf16(to_bf16(d[xi]));
			}
			for (mm = 0; mm < mg; mm++) {
				for (xi = 0; xi < xn; xi++) {
					for (k = 0; k < cg; k++)
						ur[k] = uf[((g * xn + xi) * (pr / VNPU_PACK_MR) +
							    mm / VNPU_PACK_MR) * cg * VNPU_PACK_MR +
							   k * VNPU_PACK_MR + mm % VNPU_PACK_MR];
					mt[xi] = dot_model(ur, v + xi * cg, cg);
					se[xi] = 0;
					te[xi] = 0;
					for (k = 0; k < cg; k++) {
						const float *wk = wt + ((g * mg + mm) * cg + k) * 9;
						double gs = 0;

						for (a = 0; a < 9; a++)
							gs += fabs(wk[a]);
						se[xi] += fabs(ur[k]) * fabs(v[xi * cg + k]);
						te[xi] += gs * vw[xi * cg + k];
					}
				}
				/* The bound of the tile's outputs: |A^T| (...) |A|. */
				for (a = 0; a < wh; a++)
					for (b = 0; b < 2; b++) {
						__u64 oy = t / tw * wh + a, ox = t % tw * 2 + b;
						double e = 0;

						for (a2 = 0; a2 < rh; a2++)
							for (b2 = 0; b2 < 4; b2++)
								e += aat[a][a2] * w2_aat[b][b2] *
								     (f1 * se[a2 * 4 + b2] +
								      0x1p-18 * te[a2 * 4 + b2]);
						if (oy < oh && ox < ow)
							bnd[((g * mg + mm) * oh + oy) * ow + ox] = e;
					}
				for (b = 0; b < 4; b++) {
					if (wh == 4)
						w42_at(mt + b, 4, o + b, 4);
					else
						w2_at(mt + b, 4, o + b, 4);
				}
				for (a = 0; a < wh; a++)
					w2_at(o + 4 * a, 1, o2 + 2 * a, 1);
				for (a = 0; a < wh; a++)
					for (b = 0; b < 2; b++) {
						__u64 oy = t / tw * wh + a, ox = t % tw * 2 + b;

						if (oy < oh && ox < ow)
							model[((g * mg + mm) * oh + oy) * ow + ox] =
								o2[2 * a + b];
					}
			}
		}
	/* The direct convolution in double. */
	for (i = 0; i < ny; i++) {
		__u64 o = i / (oh * ow), oy = i % (oh * ow) / ow, ox = i % ow;
		double s = 0;

		for (k = 0; k < cg; k++) {
			const float *wk = wt + (o * cg + k) * 9;

			for (a = 0; a < 3; a++)
				for (b = 0; b < 3; b++) {
					long iy = (long)(oy + a) - pad, ix = (long)(ox + b) - pad;

					if (iy < 0 || ix < 0 || iy >= (long)h || ix >= (long)w)
						continue;
					s += (double)x[((o / mg * cg + k) * h + iy) * w + ix] *
					     wk[a * 3 + b];
				}
		}
		ref[i] = s;
		/* Both within their bound of ref: 2^-7 of mag, 2 bnd apart. */
		mag[i] = (float)(bnd[i] * 0x1p8);
	}
	{
		struct vnpu_cmd_tensor tt[3] = { et_dense(F32, 4, dx),
						 et_dense(BF16, 1, &size),
						 et_dense(F32, 4, dy) };
		void *data[3] = { x, ph, y };
		int p, bad = 0;

		snprintf(name, sizeof(name), "wino%s c%llu %llux%llu m%llu p%u g%u",
			 wh == 4 ? "42" : "2", (unsigned long long)c, (unsigned long long)h,
			 (unsigned long long)w, (unsigned long long)m, pad, groups);
		/* The widened run against the model: each within bnd of ref. */
		check_paths(_metadata, name, VNPU_LAYER_CONV, tt, data, 3, &at, sizeof(at),
			    model, mag, ny, 0);
		/* The widening paths: one set of bits; near the double result. */
		for (p = 0; p < 3; p++) {
			if ((et_host_features & paths[p]) != paths[p])
				continue;
			memset(y, 0x7f, ny * 4);
			EXPECT_TRUE(!et_run(VNPU_LAYER_CONV, tt, data, 3, &at, sizeof(at),
					    paths[p], p ? 64 : 5))
				TH_LOG("%s: path %u", name, paths[p]);
			if (p && memcmp(y, other, ny * 4))
				EXPECT_TRUE(false)
					TH_LOG("%s: path %x gives other bits than the baseline",
					       name, paths[p]);
			memcpy(other, y, ny * 4);
		}
		/* f32 U of the same values (vnpu_eng_wino2_pays()): those bits. */
		for (p = 0; p < 3 && wh == 2; p++) {
			struct vnpu_cmd_tensor tf[3] = { tt[0], et_dense(F32, 1, &size),
							 tt[2] };
			void *df[3] = { x, uf, y };

			if ((et_host_features & paths[p]) != paths[p])
				continue;
			memset(y, 0x7f, ny * 4);
			EXPECT_TRUE(!et_run(VNPU_LAYER_CONV, tf, df, 3, &at, sizeof(at),
					    paths[p], p ? 64 : 5))
				TH_LOG("%s: f32 U, path %u", name, paths[p]);
			if (memcmp(y, other, ny * 4))
				EXPECT_TRUE(false)
					TH_LOG("%s: f32 U on path %x gives other bits than bf16 U",
					       name, paths[p]);
		}
		for (p = 0; p < 2; p++) {
			const float *got = p ? model : other;

			for (i = 0; i < ny; i++) {
				double e = fabs(got[i] - ref[i]);

				if (bnd[i] > 0 && e / bnd[i] > *worst)
					*worst = e / bnd[i];
				EXPECT_FALSE(!(e <= bnd[i] + 1e-6) && bad++ < 3)
					TH_LOG("%s [%llu]: %s %g, double %g (bound %g)", name,
					       (unsigned long long)i, p ? "model" : "widened",
					       got[i], ref[i], bnd[i]);
			}
		}
	}
	free(x);
	free(wt);
	free(pk);
	free(uf);
	free(y);
	free(model);
	free(mag);
	free(v);
	free(ur);
	free(other);
	free(ref);
	free(bnd);
	free(vw);
	free(ph);
}

/*
 * A bf16 Winograd layer (F(2x2, 3x3) for @wh 2, else F(4x2, 3x3)) with
 * SiLU and the epilogue's @flags (bias, residual): on every path, whole
 * and in 7 and 64 parts, the bits of the same layer without SiLU and then
 * SiLU as a layer of its own, at bf16's grade on the AVX512-BF16 path
 * (the output transform takes the add and SiLU on the AVX-512 paths
 * without a residual, the flush the others).
 */
static void wino2_silu_case(struct __test_metadata *_metadata, __u64 wh, __u64 c, __u64 h,
			    __u64 w, __u64 m, __u32 flags)
{
	__u64 oh = h, ow = w, dx[4] = { 1, c, h, w }, dy[4] = { 1, m, oh, ow };
	__u64 ny = m * oh * ow, i;
	__u32 layout = wh == 4 ? VNPU_PACK_WINO42_W : VNPU_PACK_WINO2_W;
	__u64 size = vnpu_eng_packed_size(layout, 1, m, c * 9);
	float *x = malloc(c * h * w * 4), *wt = malloc(m * c * 9 * 4), *pk = malloc(size * 4);
	float *y = malloc(ny * 4), *want = malloc(ny * 4), *bias = malloc(m * 4);
	float *res = malloc(ny * 4);
	__u16 *ph = malloc(size * 2);
	struct vnpu_layer_conv at = { .flags = (wh == 4 ? VNPU_LAYER_F_WINO42 :
						VNPU_LAYER_F_WINO2) | flags,
				      .group = 1, .kernel = { 3, 3 }, .stride = { 1, 1 },
				      .dilation = { 1, 1 }, .pad_begin = { 1, 1 },
				      .pad_end = { 1, 1 } };
	struct vnpu_layer_act silu = { .func = VNPU_ACT_SILU };
	static const __u32 paths[4] = { 0, VNPU_ENG_F_AVX2_FMA, FMA_PATH, BF_PATH };
	static const __u32 parts[3] = { 1, 7, 64 };
	struct vnpu_cmd_tensor t[5] = { et_dense(F32, 4, dx), et_dense(BF16, 1, &size) }, ta[2];
	void *data[5] = { x, ph }, *da[2] = { y, want };
	__u32 n = epi_tensors(t, data, flags, &m, bias, 4, dy, res, y);
	int p, q;

	for (i = 0; i < c * h * w; i++)
		x[i] = val();
	for (i = 0; i < m * c * 9; i++)
		wt[i] = val() - 0.5f;
	/* Outputs of both signs, some past SiLU's fast range (|x| >= 85). */
	for (i = 0; i < m; i++)
		bias[i] = i % 5 == 4 ? 90.0f : -et_randf() * (float)c / 4.0f;
	for (i = 0; i < ny; i++)
		res[i] = et_randf() * 4.0f - 2.0f;
	EXPECT_TRUE(size && !(wh == 4 ? vnpu_eng_wino42_pack(wt, 1, m, c * 9, pk) :
			      vnpu_eng_wino2_pack(wt, 1, m, c * 9, pk)));
	for (i = 0; i < size; i++)
		ph[i] = to_bf16(pk[i]);
	EXPECT_TRUE(!vnpu_eng_pair_bf16(layout, 1, m, c * 9, ph));
	ta[0] = et_dense(F32, 4, dy);
	ta[1] = ta[0];
	for (p = 0; p < 4; p++) {
		if ((et_host_features & paths[p]) != paths[p])
			continue;
		at.act.func = VNPU_ACT_IDENTITY;
		EXPECT_TRUE(!et_run(VNPU_LAYER_CONV, t, data, n, &at, sizeof(at), paths[p], 1));
		if (paths[p] == BF_PATH)
			vnpu_eng_act_avx512(VNPU_ACT_SILU, y, want, ny, 1);
		else
			EXPECT_TRUE(!et_run(VNPU_LAYER_UNARY, ta, da, 2, &silu,
					    sizeof(silu), paths[p], 1));
		at.act.func = VNPU_ACT_SILU;
		for (q = 0; q < 3; q++) {
			memset(y, 0x7f, ny * 4);
			EXPECT_TRUE(!et_run(VNPU_LAYER_CONV, t, data, n, &at, sizeof(at),
					    paths[p], parts[q]));
			EXPECT_EQ(0, memcmp(y, want, ny * 4))
				TH_LOG("wino%s+SiLU c%llu %llux%llu m%llu e%x: features %x, "
				       "%u parts: not the bits of SiLU after the layer",
				       wh == 4 ? "42" : "2", (unsigned long long)c,
				       (unsigned long long)h, (unsigned long long)w,
				       (unsigned long long)m, flags, paths[p], parts[q]);
		}
	}
	free(x);
	free(wt);
	free(pk);
	free(y);
	free(want);
	free(bias);
	free(res);
	free(ph);
}

TEST(gemmbf16)
{
	int i;

	pair_layout(_metadata);
	/* Edges of both sides, odd depths, depths of several slices. */
	gemm_case(_metadata, 1, 16, 8);
	/* One row (the mat-vec): odd depths, panels past 8, several slices. */
	gemm_case(_metadata, 1, 300, 777);
	gemm_case(_metadata, 1, 40, 33);
	gemm_case(_metadata, 1, 129, 1);
	gemm_case(_metadata, 5, 17, 7);
	gemm_case(_metadata, 13, 33, 64);
	gemm_case(_metadata, 37, 100, 385);
	gemm_case(_metadata, 100, 64, 800);
	/* A block of more than ENG_MC rows (ENG_GEMM_MC), odd depth. */
	gemm_case(_metadata, 128, 96, 391);
	/*
	 * A bias by columns (in the tiles on AVX-512), with a residual and
	 * Relu or HardSwish; edge tiles and the mat-vec in the flush.
	 */
	gemm_epi_case(_metadata, 40, 100, 77, VNPU_LAYER_F_BIAS, VNPU_ACT_RELU);
	gemm_epi_case(_metadata, 26, 64, 384, VNPU_LAYER_F_BIAS | VNPU_LAYER_F_RESIDUAL,
		      VNPU_ACT_HARD_SWISH);
	gemm_epi_case(_metadata, 1, 70, 33, VNPU_LAYER_F_BIAS | VNPU_LAYER_F_RESIDUAL,
		      VNPU_ACT_IDENTITY);
	/* 1x1 direct, 3x3 sliding window, strides 2 and 5, im2col. */
	conv_case(_metadata, 64, 7, 9, 70, 1, 1, 1, 0);
	conv_case(_metadata, 9, 12, 13, 20, 3, 3, 1, 1);
	conv_case(_metadata, 16, 15, 15, 24, 3, 3, 2, 1);
	conv_case(_metadata, 5, 23, 23, 13, 7, 7, 5, 3);
	conv_case(_metadata, 130, 6, 6, 8, 3, 3, 1, 1);
	/*
	 * Several blocks of output channels by several of columns, the later
	 * blocks of a column block reading the pairs the first one rounded
	 * (the B cache, also across parts on one scratch): 1x1 direct with a
	 * tail, sliding and strided windows, odd depths.
	 */
	conv_case(_metadata, 33, 19, 29, 200, 1, 1, 1, 0);
	conv_case(_metadata, 7, 24, 26, 150, 3, 3, 1, 1);
	conv_case(_metadata, 12, 21, 21, 130, 3, 3, 2, 1);
	/*
	 * A direct 1x1's one or two columns past its whole panels (a 7x7
	 * map's 49th) in the narrow kernel: eight panels at a time and one,
	 * an odd depth, two depth slices, the epilogue in the flush.
	 */
	conv_case(_metadata, 33, 7, 7, 70, 1, 1, 1, 0);
	conv_case(_metadata, 33, 7, 7, 400, 1, 1, 1, 0);
	conv_case(_metadata, 400, 5, 10, 400, 1, 1, 1, 0);
	conv_epi_case(_metadata, 64, 7, 7, 400, 1, 1, 1, 0,
		      VNPU_LAYER_F_BIAS | VNPU_LAYER_F_RESIDUAL, VNPU_ACT_RELU);
	/*
	 * One panel of output channels or less widens on the BF16 path too
	 * (eng_conv_bf16_native()): a 1x1 with a tail, a 3x3 window, one
	 * channel; seven channels (two panels) do not.
	 */
	conv_case(_metadata, 40, 8, 9, 4, 1, 1, 1, 0);
	conv_case(_metadata, 21, 9, 11, 6, 3, 3, 1, 1);
	conv_case(_metadata, 16, 10, 10, 1, 1, 1, 1, 0);
	conv_case(_metadata, 21, 9, 11, 7, 3, 3, 1, 1);
	/*
	 * The epilogue in the tiles (whole 12x32 tiles) and in the flush (the
	 * others): bias, residual, Relu and HardSwish; 1x1 and a window whose
	 * tiles straddle output rows (padded columns, masked stores).
	 */
	conv_epi_case(_metadata, 33, 19, 29, 200, 1, 1, 1, 0, VNPU_LAYER_F_BIAS,
		      VNPU_ACT_RELU);
	conv_epi_case(_metadata, 24, 14, 14, 40, 1, 1, 1, 0,
		      VNPU_LAYER_F_BIAS | VNPU_LAYER_F_RESIDUAL, VNPU_ACT_HARD_SWISH);
	conv_epi_case(_metadata, 7, 24, 40, 30, 3, 3, 1, 1, VNPU_LAYER_F_RESIDUAL,
		      VNPU_ACT_RELU);
	conv_epi_case(_metadata, 12, 21, 37, 26, 3, 3, 2, 1,
		      VNPU_LAYER_F_BIAS | VNPU_LAYER_F_RESIDUAL, VNPU_ACT_IDENTITY);
	/*
	 * Winograd F(2x2, 3x3): whole tiles, odd maps cut at the edges, no
	 * padding, pads of 2, odd depths (a plain last row in U and V),
	 * depth slices, groups, several blocks of rows and runs of tiles.
	 */
	for (i = 0; i < 2; i++) {
		__u64 wh = i ? 4 : 2;

		wino_worst[i] = 0;
		wino2_case(_metadata, wh, 32, 16, 16, 32, 1, 1);
		wino2_case(_metadata, wh, 33, 13, 19, 40, 1, 1);
		wino2_case(_metadata, wh, 35, 11, 12, 13, 0, 1);
		wino2_case(_metadata, wh, 400, 10, 9, 20, 1, 1);
		wino2_case(_metadata, wh, 64, 9, 9, 200, 1, 2);
		wino2_case(_metadata, wh, 7, 34, 30, 9, 2, 1);
		/* Panels over more rows of tiles than the row path takes. */
		wino2_case(_metadata, wh, 16, 20, 5, 12, 1, 1);
		/*
		 * With SiLU, and a bias or none: in the output transform on
		 * the AVX-512 paths; with a residual: in the flush.
		 */
		wino2_silu_case(_metadata, wh, 24, 21, 37, 30, VNPU_LAYER_F_BIAS);
		wino2_silu_case(_metadata, wh, 17, 12, 9, 13, 0);
		wino2_silu_case(_metadata, wh, 16, 14, 14, 20,
				VNPU_LAYER_F_BIAS | VNPU_LAYER_F_RESIDUAL);
		printf("wino%s: worst |y - ref| / bound = %.3g (2^%.1f)\n",
		       i ? "42" : "2", wino_worst[i],
		       wino_worst[i] > 0 ? log2(wino_worst[i]) : -INFINITY);
		fflush(stdout);
	}
	/*
	 * LeakyRelu with and without its bound in the tiles (openWakeWord's
	 * LeakyRelu then Max(y, -0.4)), in the flush for the edges (after
	 * the Winograd cases: their random data stays that of their bound).
	 */
	conv_epi_case(_metadata, 24, 12, 40, 48, 3, 3, 1, 1, VNPU_LAYER_F_BIAS,
		      ACT_LEAKY_MAX);
	conv_epi_case(_metadata, 33, 19, 29, 200, 1, 1, 1, 0,
		      VNPU_LAYER_F_BIAS | VNPU_LAYER_F_RESIDUAL, ACT_LEAKY_MAX);
	gemm_epi_case(_metadata, 40, 100, 77, 0, VNPU_ACT_LEAKY_RELU);
	/*
	 * SiLU at bf16's grade on the AVX512-BF16 path: in the tiles and the
	 * flush, with a bias and a residual, the mat-vec; a one-panel layer
	 * (widened: f32's SiLU).
	 */
	conv_epi_case(_metadata, 33, 19, 29, 200, 1, 1, 1, 0, VNPU_LAYER_F_BIAS,
		      VNPU_ACT_SILU);
	conv_epi_case(_metadata, 12, 21, 37, 26, 3, 3, 2, 1,
		      VNPU_LAYER_F_BIAS | VNPU_LAYER_F_RESIDUAL, VNPU_ACT_SILU);
	conv_epi_case(_metadata, 40, 8, 9, 4, 1, 1, 1, 0, VNPU_LAYER_F_BIAS,
		      VNPU_ACT_SILU);
	gemm_epi_case(_metadata, 40, 100, 77, VNPU_LAYER_F_BIAS, VNPU_ACT_SILU);
	gemm_epi_case(_metadata, 1, 70, 33, VNPU_LAYER_F_BIAS, VNPU_ACT_SILU);
	/*
	 * SiLU and Sigmoid in the 32-column tiles' registers (of 12 and 8
	 * rows: 200 channels; 4: 40; 6: 30; 12: 48), whole and under masks (a
	 * window's tiles straddling output rows), with sums past their fast
	 * range (+-90, +-100, infinities, a NaN) that the tiles leave to
	 * vnpu_eng_logistic_far_avx512().
	 */
	conv_epi_case(_metadata, 33, 19, 29, 200, 1, 1, 1, 0, VNPU_LAYER_F_BIAS,
		      VNPU_ACT_SIGMOID);
	conv_epi_case(_metadata, 33, 19, 29, 40, 1, 1, 1, 0,
		      VNPU_LAYER_F_BIAS | VNPU_LAYER_F_RESIDUAL,
		      VNPU_ACT_SILU | ACT_FAR);
	conv_epi_case(_metadata, 24, 12, 40, 30, 3, 3, 1, 1,
		      VNPU_LAYER_F_BIAS | VNPU_LAYER_F_RESIDUAL,
		      VNPU_ACT_SILU | ACT_FAR);
	conv_epi_case(_metadata, 24, 12, 40, 48, 3, 3, 1, 1,
		      VNPU_LAYER_F_BIAS | VNPU_LAYER_F_RESIDUAL,
		      VNPU_ACT_SIGMOID | ACT_FAR);
	gemm_epi_case(_metadata, 40, 100, 77,
		      VNPU_LAYER_F_BIAS | VNPU_LAYER_F_RESIDUAL,
		      VNPU_ACT_SILU | ACT_FAR);
	/*
	 * Padding by columns only (openWakeWord's 1x3 convolutions): the
	 * B cache filled from the input in place, its taps past a row's ends
	 * and its columns past the last zero, the outputs not padded: rows
	 * of 32, 16, 8, 4, 2 and 1 and odd ones (panels starting anywhere in
	 * a row, a last panel short), odd depths, a 3x3 with rows of 32 (its
	 * first layer), a 1x5 padded 2, LeakyRelu and Max in the tiles and
	 * the flush, a residual.
	 */
	conv_pads_case(_metadata, 24, 36, 16, 48, 1, 3, 1, 0, 1, VNPU_LAYER_F_BIAS,
		       ACT_LEAKY_MAX);
	conv_pads_case(_metadata, 48, 32, 8, 72, 1, 3, 1, 0, 1, VNPU_LAYER_F_BIAS,
		       ACT_LEAKY_MAX);
	conv_pads_case(_metadata, 72, 14, 4, 96, 1, 3, 1, 0, 1, VNPU_LAYER_F_BIAS,
		       ACT_LEAKY_MAX);
	conv_pads_case(_metadata, 96, 10, 2, 96, 1, 3, 1, 0, 1, VNPU_LAYER_F_BIAS,
		       ACT_LEAKY_MAX);
	conv_pads_case(_metadata, 1, 76, 32, 24, 3, 3, 1, 0, 1, VNPU_LAYER_F_BIAS,
		       ACT_LEAKY_MAX);
	conv_pads_case(_metadata, 13, 9, 11, 30, 1, 3, 1, 0, 1, 0, VNPU_ACT_IDENTITY);
	conv_pads_case(_metadata, 7, 5, 1, 26, 1, 3, 1, 0, 1, 0, VNPU_ACT_IDENTITY);
	conv_pads_case(_metadata, 5, 6, 13, 40, 2, 5, 1, 0, 2,
		       VNPU_LAYER_F_BIAS | VNPU_LAYER_F_RESIDUAL, VNPU_ACT_RELU);
	printf("gemm-bf16: %s\n", et_host_features & VNPU_ENG_F_AVX512_BF16 ?
	       "avx512-bf16 and widening paths" : "widening path only");
}

KSFT_MAIN

// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * GEMM and CONV with f16 and bf16 storage: operands widened to f32 while
 * they are packed, sums in f32, outputs rounded to nearest even. A layer
 * must give exactly the f32 layer's result on the widened operands, then
 * rounded, on every build, whole and split into 7 and 64 parts; the
 * baseline, AVX2 and AVX-512 kernels must give the same bits; and the
 * result must be near a naive double reference. engine-gemm16 also holds
 * the baseline's software FMA to the hardware's on hard cases.
 */
#include "engine_test.h"
#include "ksft_main.h"

#define F32 VNPU_DTYPE_F32
#define F16 VNPU_DTYPE_F16
#define BF16 VNPU_DTYPE_BF16

static __u16 enc_f16(float f)
{
	_Float16 h = (_Float16)f;	/* rounds to nearest even */
	__u16 u;

	memcpy(&u, &h, 2);
	return u;
}

static float dec_f16(__u16 u)
{
	_Float16 h;

	memcpy(&h, &u, 2);
	return (float)h;
}

static float dec_bf16(__u16 u)
{
	__u32 x = (__u32)u << 16;
	float f;

	memcpy(&f, &x, 4);
	return f;
}

/* The nearer of the two bf16 around @f, the even one on a tie. */
static __u16 enc_bf16(float f)
{
	__u32 x;
	__u16 lo, hi;
	double dl, dh;

	memcpy(&x, &f, 4);
	if (isnan(f))
		return (__u16)(x >> 16) | 0x40;
	lo = (__u16)(x >> 16);
	if (!(x & 0xffff))
		return lo;
	hi = lo + 1;
	dl = fabs((double)f - dec_bf16(lo));
	dh = fabs((double)dec_bf16(hi) - f);
	if (isinf(dec_bf16(hi)))
		dh = fabs((double)f) * 0x1p-8 <= dl ? dl : dl * 2;
	return dl < dh ? lo : dh < dl ? hi : (lo & 1 ? hi : lo);
}

static __u16 enc(float f, __u32 dt)
{
	return dt == F16 ? enc_f16(f) : enc_bf16(f);
}

static float dec(__u16 u, __u32 dt)
{
	return dt == F16 ? dec_f16(u) : dec_bf16(u);
}

/**
 * struct h_layer - one layer in f32 (@t, @d) and in its storage types
 * (@th, @dh); inputs of a 16-bit type hold values exact in it
 */
struct h_layer {
	__u32 op, n;
	struct vnpu_cmd_tensor t[5], th[5];
	void *d[5], *dh[5];
	const void *attrs;
	__u32 attr_size;
	const char *name;
};

/*
 * Gives tensor @i the storage type @dt: its f32 values are rounded to @dt
 * (and so exact in it) and encoded into the 16-bit copy.
 */
static void h_store(struct h_layer *l, __u32 i, __u32 dt)
{
	size_t e, count = et_bytes(&l->t[i]) / 4;
	float *v = l->d[i];
	__u16 *h;

	l->th[i] = l->t[i];
	l->th[i].dtype = dt;
	if (dt == F32) {
		l->dh[i] = l->d[i];
		return;
	}
	h = malloc(count * 2 + 2);
	for (e = 0; e < count; e++) {
		h[e] = enc(v[e], dt);
		v[e] = dec(h[e], dt);
	}
	l->dh[i] = h;
}

static void h_free(struct h_layer *l)
{
	__u32 i;

	for (i = 0; i < l->n; i++) {
		if (l->dh[i] != l->d[i])
			free(l->dh[i]);
		free(l->d[i]);
	}
}

/*
 * Packs tensor 1 (the weights, their values exact in @dt) in @layout:
 * f32 panels for the f32 run, and for the storage-type run the same
 * panels in @dt (f16 and bf16 panels are the f32 ones, each encoded;
 * bf16 ones then in depth pairs).
 */
static void h_pack(struct __test_metadata *_metadata, struct h_layer *l, __u32 layout, __u64 groups,
		   __u64 rows,
		   __u64 cols, __u32 dt)
{
	__u64 e, size = vnpu_eng_packed_size(layout, groups, rows, cols);
	float *pk = malloc(size * 4 + 4);
	__u16 *ph;

	EXPECT_TRUE(!vnpu_eng_pack(layout, l->d[1], groups, rows, cols, pk))
		TH_LOG("pack layout %u", layout);
	if (l->dh[1] != l->d[1])
		free(l->dh[1]);
	free(l->d[1]);
	l->t[1] = et_dense(F32, 1, &size);
	l->th[1] = l->t[1];
	l->d[1] = pk;
	l->dh[1] = pk;
	if (dt == F32)
		return;
	ph = malloc(size * 2 + 2);
	for (e = 0; e < size; e++)
		ph[e] = enc(pk[e], dt);
	if (dt == BF16)
		EXPECT_TRUE(!vnpu_eng_pair_bf16(layout, groups, rows, cols, ph))
			TH_LOG("pair layout %u", layout);
	l->th[1].dtype = dt;
	l->dh[1] = ph;
}

static int close_to(double got, double want, double atol, double rtol)
{
	return fabs(got - want) <= atol + rtol * fabs(want);
}

/*
 * Runs @l on every build: f32 whole, then in storage types whole and in 7
 * and 64 parts, which must equal the f32 result rounded; the decoded
 * output must be near @ref (the naive f64 result, or NULL).
 */
static void h_check(struct __test_metadata *_metadata, struct h_layer *l, const double *ref,
		    double atol,
		    double rtol)
{
	/* AVX512 without AVX2_FMA runs the baseline build, which ignores it. */
	static const __u32 feats[4] = { 0, VNPU_ENG_F_AVX512, VNPU_ENG_F_AVX2_FMA,
					VNPU_ENG_F_AVX2_FMA | VNPU_ENG_F_AVX512 };
	static const __u32 parts[3] = { 1, 7, 64 };
	__u32 yi = l->n - 1, ydt = l->th[yi].dtype;
	size_t count = et_bytes(&l->t[yi]) / 4, hb = et_bytes(&l->th[yi]), e;
	unsigned char *want = malloc(hb + 4), *fma_bits = malloc(hb + 4);
	float *y32 = l->d[yi];
	int f, p, bad = 0, have_fma = 0;

	for (f = 0; f < 4; f++) {
		if ((feats[f] & et_host_features) != feats[f])
			continue;
		memset(y32, 0x7f, count * 4);
		if (et_run(l->op, l->t, l->d, l->n, l->attrs, l->attr_size,
			   feats[f], 1)) {
			EXPECT_TRUE(false)
				TH_LOG("%s: f32 run failed", l->name);
			break;
		}
		if (ydt == F32)
			memcpy(want, y32, hb);
		else
			for (e = 0; e < count; e++)
				((__u16 *)want)[e] = enc(y32[e], ydt);
		for (p = 0; p < 3; p++) {
			memset(l->dh[yi], 0x55, hb);
			if (et_run(l->op, l->th, l->dh, l->n, l->attrs,
				   l->attr_size, feats[f], parts[p])) {
				EXPECT_TRUE(false)
					TH_LOG("%s: run (features %u, %u parts) failed", l->name,
					       feats[f], parts[p]);
				bad = 1;
				continue;
			}
			if (memcmp(l->dh[yi], want, hb)) {
				EXPECT_TRUE(false)
					TH_LOG("%s: features %u, %u parts: not the rounded f32 result",
					       l->name, feats[f], parts[p]);
				bad = 1;
			}
		}
		/* Baseline, AVX2 and AVX-512: the same bits. */
		if (have_fma && memcmp(fma_bits, l->dh[yi], hb)) {
			EXPECT_TRUE(false)
				TH_LOG("%s: features %u: bits differ from features %u's", l->name,
				       feats[f], feats[0]);
			bad = 1;
		}
		memcpy(fma_bits, l->dh[yi], hb);
		have_fma = 1;
	}
	for (e = 0; ref && !bad && e < count; e++) {
		double got = ydt == F32 ? ((float *)l->dh[yi])[e] :
			     dec(((__u16 *)l->dh[yi])[e], ydt);

		EXPECT_FALSE(!close_to(got, ref[e], atol, rtol) && bad++ < 3)
			TH_LOG("%s [%zu]: got %.6g want %.6g", l->name, e, got, ref[e]);
	}
	free(want);
	free(fma_bits);
}

static void *rand_f32(const struct vnpu_cmd_tensor *t)
{
	size_t n = et_bytes(t) / 4;
	float *p = malloc(n * 4 + 4);

	et_fill_f32(p, n);
	return p;
}

static double act_ref(__u32 func, double v)
{
	switch (func) {
	case VNPU_ACT_RELU:
		return v < 0 ? 0 : v;
	case VNPU_ACT_SIGMOID:
		return 1 / (1 + exp(-v));
	default:
		return v;
	}
}

/* Output rounding of @dt relative to the value, with f32 sums' error. */
static double rtol_of(__u32 dt)
{
	return dt == F16 ? 0x1p-10 : dt == BF16 ? 0x1p-7 : 1e-5;
}

/* ---- GEMM ------------------------------------------------------------ */

struct g16_case {
	__u64 batch_a, batch_b, m, n, k;
	int tb;				/* B a transposed view */
	__u32 flags;
	int bias_kind;			/* 0 [N], 1 [M, 1], 2 [1] */
	__u32 act;
	__u32 dt[5];			/* A, B, bias, residual, Y */
};

static void g16_run(struct __test_metadata *_metadata, const struct g16_case *c)
{
	struct vnpu_layer_gemm at = {};
	struct h_layer l = { .op = VNPU_LAYER_GEMM };
	__u64 batch = c->batch_a > c->batch_b ? c->batch_a : c->batch_b;
	__u64 da[3] = { c->batch_a, c->m, c->k }, db[3] = { c->batch_b, c->k, c->n };
	__u64 dy[3] = { batch, c->m, c->n }, dc[2];
	__u32 cr = 1, i, packed = c->flags & VNPU_LAYER_F_PACKED, ci = 0, ri = 0;
	size_t b, mi, ni, kk, ny = batch * c->m * c->n;
	double *ref = malloc(ny * sizeof(double));
	char name[160];

	if (c->tb) {
		db[1] = c->n;
		db[2] = c->k;
	}
	l.t[l.n] = et_dense(F32, 3, da);
	l.d[l.n] = rand_f32(&l.t[l.n]);
	l.n++;
	l.t[l.n] = et_dense(F32, 3, db);
	l.d[l.n] = rand_f32(&l.t[l.n]);
	if (c->tb) {
		__s64 s = l.t[l.n].strides[1];

		l.t[l.n].dims[1] = c->k;
		l.t[l.n].dims[2] = c->n;
		l.t[l.n].strides[1] = 1;
		l.t[l.n].strides[2] = s;
	}
	l.n++;
	if (c->flags & VNPU_LAYER_F_BIAS) {
		dc[0] = c->bias_kind == 0 ? c->n : c->bias_kind == 1 ? c->m : 1;
		dc[1] = 1;
		cr = c->bias_kind == 1 ? 2 : 1;
		ci = l.n;
		l.t[l.n] = et_dense(F32, cr, dc);
		l.d[l.n] = rand_f32(&l.t[l.n]);
		l.n++;
	}
	if (c->flags & VNPU_LAYER_F_RESIDUAL) {
		ri = l.n;
		l.t[l.n] = et_dense(F32, 3, dy);
		l.d[l.n] = rand_f32(&l.t[l.n]);
		l.n++;
	}
	l.t[l.n] = et_dense(F32, 3, dy);
	l.d[l.n] = malloc(ny * 4 + 4);
	l.n++;
	for (i = 0; i < l.n; i++)
		h_store(&l, i, c->dt[i == l.n - 1 ? 4 : i == ci && ci ? 2 :
				     i == ri && ri ? 3 : i]);

	/* The reference, from the (rounded) f32 values. */
	for (b = 0; b < batch; b++)
		for (mi = 0; mi < c->m; mi++)
			for (ni = 0; ni < c->n; ni++) {
				const float *a = l.d[0], *bm = l.d[1];
				size_t ab = c->batch_a > 1 ? b : 0;
				size_t bb = c->batch_b > 1 ? b : 0;
				size_t e = (b * c->m + mi) * c->n + ni;
				double acc = 0;

				for (kk = 0; kk < c->k; kk++)
					acc += (double)a[(ab * c->m + mi) * c->k + kk] *
					       bm[bb * c->k * c->n +
						  kk * l.t[1].strides[1] +
						  ni * l.t[1].strides[2]];
				acc *= 0.5;
				if (ci) {
					const float *bias = l.d[ci];

					acc += 2.0 * bias[c->bias_kind == 0 ? ni :
							   c->bias_kind == 1 ? mi : 0];
				}
				if (ri)
					acc += ((const float *)l.d[ri])[e];
				ref[e] = act_ref(c->act, acc);
			}
	if (packed)
		h_pack(_metadata, &l, VNPU_PACK_GEMM_B, 1, c->k, c->n, c->dt[1]);
	at.flags = c->flags;
	at.alpha = et_f32_bits(0.5f);
	at.beta = et_f32_bits(2.0f);
	at.act.func = c->act;
	l.attrs = &at;
	l.attr_size = sizeof(at);
	snprintf(name, sizeof(name),
		 "gemm16 b%llu,%llu m%llu n%llu k%llu tb%d flags%u bias%d act%u dt %u %u %u %u %u",
		 (unsigned long long)c->batch_a, (unsigned long long)c->batch_b,
		 (unsigned long long)c->m, (unsigned long long)c->n,
		 (unsigned long long)c->k, c->tb, c->flags, c->bias_kind, c->act,
		 c->dt[0], c->dt[1], c->dt[2], c->dt[3], c->dt[4]);
	l.name = name;
	h_check(_metadata, &l, ref, 1e-5 * sqrt((double)c->k + 1), rtol_of(c->dt[4]));
	h_free(&l);
	free(ref);
}

/* ---- CONV ------------------------------------------------------------ */

struct c16_case {
	int one_d;
	__u64 n, c, h, w, m;
	__u32 group, kh, kw, s, d, pad;
	__u32 flags, act;
	__u32 dt[5];			/* X, W, bias, residual, Y */
};

static void c16_run(struct __test_metadata *_metadata, const struct c16_case *cc)
{
	struct vnpu_layer_conv at = {};
	struct h_layer l = { .op = VNPU_LAYER_CONV };
	__u64 cg = cc->c / cc->group, mg = cc->m / cc->group, kt;
	__u64 oh = cc->one_d ? 1 : (cc->h + 2 * cc->pad - cc->d * (cc->kh - 1) - 1) / cc->s + 1;
	__u64 ow = (cc->w + 2 * cc->pad - cc->d * (cc->kw - 1) - 1) / cc->s + 1;
	__u64 h = cc->one_d ? 1 : cc->h, kh = cc->one_d ? 1 : cc->kh;
	__u64 dx[4], dw[4], dy[4];
	__u32 r = cc->one_d ? 3 : 4, i, ci = 0, ri = 0;
	size_t img, m, y, x, ny = cc->n * cc->m * oh * ow;
	double *ref = malloc(ny * sizeof(double));
	char name[200];

	dx[0] = cc->n; dx[1] = cc->c; dx[2] = h; dx[3] = cc->w;
	dw[0] = cc->m; dw[1] = cg; dw[2] = kh; dw[3] = cc->kw;
	dy[0] = cc->n; dy[1] = cc->m; dy[2] = oh; dy[3] = ow;
	if (cc->one_d) {
		dx[2] = cc->w;
		dw[2] = cc->kw;
		dy[2] = ow;
	}
	l.t[l.n] = et_dense(F32, r, dx);
	l.d[l.n] = rand_f32(&l.t[l.n]);
	l.n++;
	l.t[l.n] = et_dense(F32, r, dw);
	l.d[l.n] = rand_f32(&l.t[l.n]);
	l.n++;
	if (cc->flags & VNPU_LAYER_F_BIAS) {
		ci = l.n;
		l.t[l.n] = et_dense(F32, 1, &cc->m);
		l.d[l.n] = rand_f32(&l.t[l.n]);
		l.n++;
	}
	if (cc->flags & VNPU_LAYER_F_RESIDUAL) {
		ri = l.n;
		l.t[l.n] = et_dense(F32, r, dy);
		l.d[l.n] = rand_f32(&l.t[l.n]);
		l.n++;
	}
	l.t[l.n] = et_dense(F32, r, dy);
	l.d[l.n] = malloc(ny * 4 + 4);
	l.n++;
	for (i = 0; i < l.n; i++)
		h_store(&l, i, cc->dt[i == l.n - 1 ? 4 : i == ci && ci ? 2 :
				      i == ri && ri ? 3 : i]);
	kt = cg * kh * cc->kw;

	for (img = 0; img < cc->n; img++)
		for (m = 0; m < cc->m; m++)
			for (y = 0; y < oh; y++)
				for (x = 0; x < ow; x++) {
					const float *xs = l.d[0], *ws = l.d[1];
					size_t g = m / mg, c, a, b;
					size_t e = ((img * cc->m + m) * oh + y) * ow + x;
					double acc = ci ? ((const float *)l.d[ci])[m] : 0;

					for (c = 0; c < cg; c++)
						for (a = 0; a < kh; a++)
							for (b = 0; b < cc->kw; b++) {
								long ih = (long)(y * cc->s + a * cc->d) -
									  (cc->one_d ? 0 : (long)cc->pad);
								long iw = (long)(x * cc->s + b * cc->d) -
									  (long)cc->pad;

								if (ih < 0 || ih >= (long)h ||
								    iw < 0 || iw >= (long)cc->w)
									continue;
								acc += (double)xs[((img * cc->c + g * cg + c) * h + ih) *
										  cc->w + iw] *
								       ws[((m * cg + c) * kh + a) * cc->kw + b];
							}
					if (ri)
						acc += ((const float *)l.d[ri])[e];
					ref[e] = act_ref(cc->act, acc);
				}
	if (cc->flags & VNPU_LAYER_F_PACKED)
		h_pack(_metadata, &l, VNPU_PACK_CONV_W, cc->group, mg, kt, cc->dt[1]);
	at.flags = cc->flags;
	at.group = cc->group;
	at.kernel[0] = (__u32)kh;
	at.kernel[1] = cc->kw;
	at.stride[0] = cc->one_d ? 1 : cc->s;
	at.stride[1] = cc->s;
	at.dilation[0] = cc->one_d ? 1 : cc->d;
	at.dilation[1] = cc->d;
	at.pad_begin[0] = at.pad_end[0] = cc->one_d ? 0 : cc->pad;
	at.pad_begin[1] = at.pad_end[1] = cc->pad;
	at.act.func = cc->act;
	l.attrs = &at;
	l.attr_size = sizeof(at);
	snprintf(name, sizeof(name),
		 "conv16%s n%llu c%llu %llux%llu m%llu g%u k%ux%u s%u d%u p%u f%u dt %u %u %u %u %u",
		 cc->one_d ? "1d" : "2d", (unsigned long long)cc->n,
		 (unsigned long long)cc->c, (unsigned long long)h,
		 (unsigned long long)cc->w, (unsigned long long)cc->m, cc->group,
		 (__u32)kh, cc->kw, cc->s, cc->d, cc->pad, cc->flags, cc->dt[0],
		 cc->dt[1], cc->dt[2], cc->dt[3], cc->dt[4]);
	l.name = name;
	h_check(_metadata, &l, ref, 1e-5 * sqrt((double)kt + 1), rtol_of(cc->dt[4]));
	h_free(&l);
	free(ref);
}

/* ---- the software FMA against the hardware ---------------------------- */

static __u32 rng32(void)
{
	static __u64 st = 0x853c49e6748fea9bull;

	st = st * 6364136223846793005ull + 1442695040888963407ull;
	return (__u32)(st >> 32);
}

/* A finite float of random mantissa and sign, exponent in [lo, hi]. */
static float rand_bits(int lo, int hi)
{
	__u32 e = (__u32)(lo + (int)(rng32() % (__u32)(hi - lo + 1)) + 127);
	__u32 x = (rng32() & 0x807fffffu) | (e << 23);
	float f;

	memcpy(&f, &x, 4);
	return f;
}

/*
 * y = a0 * b0 + a1 * b1 as two chained FMAs (k = 2): random mantissas give
 * rounding ties and carries; half the rows cancel (a1 = -a0, b1 = b0, so y
 * is the exact rounding error of a0 * b0), some underflow to subnormals,
 * some come near overflow. The baseline must give the FMA units' bits.
 */
static void fma_edges(struct __test_metadata *_metadata)
{
	__u64 m = 64, n = 48, k = 2, da[2] = { m, k }, db[2] = { k, n };
	__u64 dy[2] = { m, n };
	struct vnpu_cmd_tensor t[3] = { et_dense(F32, 2, da), et_dense(F32, 2, db),
					et_dense(F32, 2, dy) };
	float *a = malloc(m * k * 4), *b = malloc(k * n * 4);
	float *y = malloc(m * n * 4), *want = malloc(m * n * 4);
	void *data[3] = { a, b, y };
	struct vnpu_layer_gemm at = { .alpha = et_f32_bits(1), .beta = et_f32_bits(1) };
	__u64 i, j;
	int f, p;

	for (j = 0; j < n; j++) {
		b[j] = rand_bits(j % 3 ? -20 : -70, j % 5 ? 20 : 62);
		b[n + j] = j % 2 ? b[j] : rand_bits(-20, 20);
	}
	for (i = 0; i < m; i++) {
		a[i * 2] = rand_bits(i % 3 ? -20 : -75, i % 4 ? 20 : 63);
		a[i * 2 + 1] = i % 2 ? -a[i * 2] : rand_bits(-20, 20);
	}
	/*
	 * Double rounding traps, rows and columns 3 mod 4: c = a0 * 1 has an
	 * odd last bit, and a1 * b1 = -ulp(c) / 2 * (1 - 2^-46), so the exact
	 * c + a1 * b1 lies just above the midpoint below c: rounded to double
	 * first it would be the midpoint, and then round to even, away from c.
	 */
	for (j = 3; j < n; j += 4) {
		b[j] = 1.0f;
		b[n + j] = 1.0f - 0x1p-23f;
	}
	for (i = 3; i < m; i += 4) {
		__u32 c, e;

		a[i * 2] = rand_bits(-20, 20);
		memcpy(&c, &a[i * 2], 4);
		c |= 1;
		memcpy(&a[i * 2], &c, 4);
		e = (c >> 23) & 0xff;
		/* ulp(c) / 2 * (1 + 2^-23), of the opposite sign */
		c = ((c & 0x80000000u) ^ 0x80000000u) | (e - 24) << 23 | 1;
		memcpy(&a[i * 2 + 1], &c, 4);
	}
	if (!(et_host_features & VNPU_ENG_F_AVX2_FMA) ||
	    et_run(VNPU_LAYER_GEMM, t, data, 3, &at, sizeof(at),
		   VNPU_ENG_F_AVX2_FMA, 1))
		goto out;
	memcpy(want, y, m * n * 4);
	for (f = 0; f < 2; f++)
		for (p = 1; p <= 7; p += 6) {
			if (f && !(et_host_features & VNPU_ENG_F_AVX512))
				continue;
			memset(y, 0x55, m * n * 4);
			EXPECT_TRUE(!et_run(VNPU_LAYER_GEMM, t, data, 3, &at, sizeof(at),
					    f ? VNPU_ENG_F_AVX2_FMA | VNPU_ENG_F_AVX512 : 0, (__u32)p))
				TH_LOG("fma edges: run");
			for (i = 0; i < m * n; i++)
				if (memcmp(&y[i], &want[i], 4)) {
					EXPECT_TRUE(false)
						TH_LOG("fma edges (%s, %d parts) [%llu]: %a, FMA unit %a",
						       f ? "avx512" : "baseline", p,
						       (unsigned long long)i, y[i], want[i]);
					break;
				}
		}
out:
	free(a);
	free(b);
	free(y);
	free(want);
}

/*
 * Every f16 and bf16 bit pattern but NaNs (whose payloads the software
 * FMA may treat otherwise) as packed B of a 1 x N GEMM by A = 1: the
 * widening (eight at a time, then a tail) must give each value exactly,
 * subnormals and infinities included: y = fma(1, b, +0).
 */
static void widen_all(struct __test_metadata *_metadata)
{
	static const __u32 feats[3] = { 0, VNPU_ENG_F_AVX2_FMA,
					VNPU_ENG_F_AVX2_FMA | VNPU_ENG_F_AVX512 };
	__u64 n = 0, da[2] = { 1, 1 }, dy[2], size, j;
	__u16 *bits = malloc(65536 * 2), *pk;
	float one = 1.0f, *y, *want;
	struct vnpu_layer_gemm at = { .flags = VNPU_LAYER_F_PACKED,
				      .alpha = et_f32_bits(1), .beta = et_f32_bits(1) };
	__u32 dt, f, h;

	for (dt = F16; dt; dt = dt == F16 ? BF16 : 0) {
		n = 0;
		for (h = 0; h < 65536; h++) {
			float v = dec((__u16)h, dt);

			if (!isnan(v))
				bits[n++] = (__u16)h;
		}
		dy[0] = 1;
		dy[1] = n;
		size = vnpu_eng_packed_size(VNPU_PACK_GEMM_B, 1, 1, n);
		pk = calloc(size, 2);
		y = malloc(n * 4);
		want = malloc(n * 4);
		/* k = 1: panel p holds column p * NR + j at p * NR + j. */
		memcpy(pk, bits, n * 2);
		for (j = 0; j < n; j++)
			want[j] = fmaf(1.0f, dec(bits[j], dt), 0.0f);
		{
			struct vnpu_cmd_tensor t[3] = { et_dense(F32, 2, da),
							et_dense(dt, 1, &size),
							et_dense(F32, 2, dy) };
			void *data[3] = { &one, pk, y };

			for (f = 0; f < 3; f++) {
				if ((feats[f] & et_host_features) != feats[f])
					continue;
				memset(y, 0x55, n * 4);
				EXPECT_TRUE(!et_run(VNPU_LAYER_GEMM, t, data, 3, &at, sizeof(at),
						    feats[f], 7))
					TH_LOG("widen %u: run", dt);
				for (j = 0; j < n; j++)
					if (memcmp(&y[j], &want[j], 4)) {
						EXPECT_TRUE(false)
							TH_LOG("widen dt %u features %u: 0x%04x gives %a, want %a",
							       dt, feats[f], bits[j], y[j], want[j]);
						break;
					}
			}
		}
		free(pk);
		free(y);
		free(want);
	}
	free(bits);
}

#define ALL16 { F16, F16, F16, F16, F16 }
#define ALLBF { BF16, BF16, BF16, BF16, BF16 }
#define BIAS VNPU_LAYER_F_BIAS
#define RES VNPU_LAYER_F_RESIDUAL
#define PACKED VNPU_LAYER_F_PACKED

TEST(gemm16)
{
	static const struct g16_case gc[] = {
		{ 1, 1, 1, 1, 1, 0, 0, 0, 0, ALL16 },
		{ 1, 1, 7, 13, 5, 0, BIAS, 0, VNPU_ACT_RELU, ALL16 },
		{ 1, 1, 37, 45, 29, 1, BIAS | RES, 1, 0, ALL16 },
		{ 1, 1, 100, 257, 300, 0, BIAS | RES, 2, VNPU_ACT_SIGMOID, ALL16 },
		{ 1, 1, 97, 33, 800, 0, PACKED | BIAS, 0, 0, ALL16 },
		{ 3, 1, 13, 17, 19, 0, RES, 0, 0, ALL16 },
		{ 1, 4, 9, 31, 11, 1, BIAS, 0, VNPU_ACT_RELU, ALLBF },
		{ 1, 1, 61, 70, 45, 0, BIAS | RES, 1, 0, { F16, F32, F32, F16, F16 } },
		{ 1, 1, 30, 20, 10, 0, BIAS, 0, 0, { F32, F16, BF16, F32, F32 } },
		{ 1, 1, 25, 100, 129, 0, PACKED | RES, 0, 0, { BF16, F32, F32, F32, F16 } },
		/* f16 and bf16 packed B beside f32 tensors: the precision hints */
		{ 1, 1, 50, 70, 300, 0, PACKED | BIAS, 0, VNPU_ACT_RELU,
		  { F32, F16, F32, F32, F32 } },
		{ 2, 1, 97, 129, 600, 0, PACKED | BIAS | RES, 0, 0,
		  { F32, BF16, F32, F32, F32 } },
		{ 1, 1, 1, 33, 700, 0, PACKED, 0, 0, { F32, F16, F32, F32, F32 } },
		{ 1, 1, 13, 47, 31, 0, PACKED | BIAS, 0, 0, ALLBF },
		/*
		 * Mat-vecs over widened B (gemv_lowp_block()): more than
		 * eight panels and a tail, odd depths over several slices
		 * (bf16's plain last row), a batch of rows one at a time.
		 */
		{ 1, 1, 1, 150, 701, 0, PACKED | BIAS | RES, 0, VNPU_ACT_RELU,
		  { F32, BF16, F32, F32, F32 } },
		{ 1, 1, 1, 300, 257, 0, PACKED | BIAS, 0, 0, { F32, F16, F32, F32, F32 } },
		{ 3, 1, 1, 20, 33, 0, PACKED, 0, 0, { F16, BF16, F32, F32, F16 } },
	};
	static const struct c16_case cc[] = {
		{ 0, 1, 3, 17, 19, 8, 1, 3, 3, 1, 1, 1, BIAS, VNPU_ACT_RELU, ALL16 },
		{ 0, 2, 16, 15, 15, 24, 2, 3, 3, 2, 1, 1, BIAS | RES, 0, ALL16 },
		{ 0, 1, 32, 14, 14, 48, 1, 1, 1, 1, 1, 0, PACKED | BIAS | RES, 0, ALL16 },
		{ 0, 1, 8, 30, 30, 16, 1, 5, 5, 1, 2, 2, 0, 0, ALL16 },
		{ 0, 1, 8, 40, 40, 12, 4, 3, 3, 5, 1, 1, PACKED | BIAS, 0, ALL16 },
		{ 0, 2, 6, 33, 31, 6, 6, 3, 3, 1, 1, 1, BIAS | RES, VNPU_ACT_RELU, ALL16 },
		{ 0, 1, 5, 9, 70, 5, 5, 3, 3, 2, 1, 1, BIAS, 0, ALLBF },
		{ 0, 1, 4, 3, 300, 4, 4, 3, 3, 1, 1, 1, BIAS | RES, VNPU_ACT_RELU,
		  ALL16 },
		{ 1, 1, 5, 1, 77, 7, 1, 1, 3, 1, 1, 1, BIAS, 0, ALL16 },
		{ 0, 1, 12, 11, 13, 30, 3, 3, 3, 1, 1, 1, PACKED | BIAS | RES, 0,
		  { F16, F32, F32, BF16, F16 } },
		{ 0, 1, 64, 20, 20, 64, 1, 3, 3, 1, 1, 1, BIAS, 0, ALLBF },
		/* f16 and bf16 packed W beside f32 tensors: the precision hints */
		{ 0, 1, 16, 23, 21, 40, 1, 3, 3, 1, 1, 1, PACKED | BIAS, VNPU_ACT_RELU,
		  { F32, F16, F32, F32, F32 } },
		{ 0, 2, 24, 14, 14, 36, 3, 3, 3, 2, 1, 1, PACKED | BIAS | RES, 0,
		  { F32, BF16, F32, F32, F32 } },
		{ 0, 1, 64, 7, 7, 100, 1, 1, 1, 1, 1, 0, PACKED | BIAS, 0,
		  { F32, BF16, F32, F32, F32 } },
		{ 0, 1, 24, 17, 19, 24, 24, 3, 3, 1, 1, 1, PACKED | BIAS, 0,
		  { F32, F16, F32, F32, F32 } },
		{ 0, 1, 16, 40, 40, 16, 16, 5, 5, 2, 1, 2, PACKED | BIAS, 0,
		  { F32, BF16, F32, F32, F32 } },
		{ 1, 1, 8, 1, 500, 8, 8, 1, 9, 1, 1, 4, PACKED, 0,
		  { F32, F16, F32, F32, F32 } },
		{ 0, 1, 10, 12, 12, 14, 2, 3, 3, 1, 1, 1, PACKED | BIAS, 0, ALLBF },
	};
	size_t i;

	fma_edges(_metadata);
	widen_all(_metadata);
	for (i = 0; i < sizeof(gc) / sizeof(gc[0]); i++)
		g16_run(_metadata, &gc[i]);
	for (i = 0; i < sizeof(cc) / sizeof(cc[0]); i++)
		c16_run(_metadata, &cc[i]);
	printf("gemm16: %zu f16/bf16 layers\n",
	       sizeof(gc) / sizeof(gc[0]) + sizeof(cc) / sizeof(cc[0]));
}

KSFT_MAIN

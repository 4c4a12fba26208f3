// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * QuantizeLinear, DequantizeLinear, MatMulInteger, QLinearMatMul,
 * QLinearConv and QLinearAdd against plain loops; and their malformed
 * fields.
 */
#include "engine_test.h"
#include "ksft_main.h"

static int32_t q_at(__u32 dt, const void *p, size_t i)
{
	return dt == VNPU_DTYPE_U8 ? ((const uint8_t *)p)[i] :
	       ((const int8_t *)p)[i];
}

static void q_put(__u32 dt, void *p, size_t i, double v)
{
	double lo = dt == VNPU_DTYPE_U8 ? 0 : -128, hi = dt == VNPU_DTYPE_U8 ? 255 : 127;

	v = v < lo ? lo : v > hi ? hi : v;
	if (dt == VNPU_DTYPE_U8)
		((uint8_t *)p)[i] = (uint8_t)v;
	else
		((int8_t *)p)[i] = (int8_t)v;
}

static void q_fill(__u32 dt, void *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		q_put(dt, p, i, dt == VNPU_DTYPE_U8 ? (et_randf() + 1) * 127 :
		      et_randf() * 127);
}

static struct vnpu_cmd_tensor scalar(__u32 dt)
{
	return et_dense(dt, 0, NULL);
}

static void test_quantize(struct __test_metadata *_metadata)
{
	__u64 dims[3] = { 2, 3, 5 }, c3 = 3;
	__u32 dts[2] = { VNPU_DTYPE_U8, VNPU_DTYPE_I8 }, d, per;
	float x[30], sc[3] = { 0.05f, 0.1f, 0.013f }, back[30], bref[30];
	uint8_t y[30], ref[30], zp[3] = { 3, 0, 250 };
	size_t i;

	et_fill_f32(x, 30);
	for (i = 0; i < 30; i++)
		x[i] *= 12;
	x[0] = 0.025f;	/* exactly a half step: rounds to even */
	for (d = 0; d < 2; d++)
		for (per = 0; per < 2; per++) {
			struct vnpu_layer_quant at = { per ? 1 : 0, 0 };
			struct vnpu_cmd_tensor t[4];
			void *data[4] = { x, sc, zp, y };
			int8_t zps[3] = { 3, 0, -7 };

			if (dts[d] == VNPU_DTYPE_I8)
				data[2] = zps;
			t[0] = et_dense(VNPU_DTYPE_F32, 3, dims);
			t[1] = per ? et_dense(VNPU_DTYPE_F32, 1, &c3) : scalar(VNPU_DTYPE_F32);
			t[2] = per ? et_dense(dts[d], 1, &c3) : scalar(dts[d]);
			t[3] = et_dense(dts[d], 3, dims);
			for (i = 0; i < 30; i++) {
				size_t c = per ? (i / 5) % 3 : 0;

				q_put(dts[d], ref, i, nearbyintf(x[i] / sc[c]) +
				      q_at(dts[d], data[2], c));
			}
			EXPECT_EQ(0,
				  et_layer_exact("quantize", VNPU_LAYER_QUANTIZE, t, data, 4, &at,
						 sizeof(at), ref));
			/* And back. */
			memcpy(y, ref, sizeof(y));
			t[0] = t[3];
			t[3] = et_dense(VNPU_DTYPE_F32, 3, dims);
			data[0] = y;
			data[3] = back;
			for (i = 0; i < 30; i++) {
				size_t c = per ? (i / 5) % 3 : 0;

				bref[i] = (float)(q_at(dts[d], y, i) -
						  q_at(dts[d], data[2], c)) * sc[c];
			}
			EXPECT_EQ(0,
				  et_layer_exact("dequantize", VNPU_LAYER_DEQUANTIZE, t, data, 4,
						 &at, sizeof(at), bref));
		}
}

/*
 * Per-tensor QUANTIZE and DEQUANTIZE of 1022 elements: the runs of 16
 * (VNPU_ENG_F_VNNI) and 8 and their tails in every part, through NaN,
 * infinities, half steps and values past the range.
 */
static void test_quantize_long(struct __test_metadata *_metadata)
{
	enum { N = 1022 };
	__u64 dims[3] = { 2, 7, 73 };
	__u32 dts[2] = { VNPU_DTYPE_U8, VNPU_DTYPE_I8 }, d;
	static float x[N], back[N], bref[N];
	static uint8_t y[N], ref[N];
	float sc = 0.04f;
	size_t i;

	et_fill_f32(x, N);
	for (i = 0; i < N; i++)
		x[i] *= 8;
	for (i = 0; i < N; i += 37)
		x[i] = (float)((long)i % 11 - 5) * 0.02f;	/* half steps */
	x[3] = __builtin_nanf("");
	x[20] = __builtin_inff();
	x[21] = -__builtin_inff();
	x[40] = 1e30f;
	x[41] = -1e30f;
	for (d = 0; d < 2; d++) {
		struct vnpu_layer_quant at = { 0, 0 };
		uint8_t zu = 131;
		int8_t zs = -9;
		void *zp = dts[d] == VNPU_DTYPE_U8 ? (void *)&zu : (void *)&zs;
		void *data[4] = { x, &sc, zp, y };
		struct vnpu_cmd_tensor t[4];

		t[0] = et_dense(VNPU_DTYPE_F32, 3, dims);
		t[1] = scalar(VNPU_DTYPE_F32);
		t[2] = scalar(dts[d]);
		t[3] = et_dense(dts[d], 3, dims);
		for (i = 0; i < N; i++) {
			if (isnan(x[i]))
				q_put(dts[d], ref, i, 0);
			else
				q_put(dts[d], ref, i, (double)nearbyintf(x[i] / sc) +
				      q_at(dts[d], zp, 0));
		}
		EXPECT_EQ(0, et_layer_exact("quantize long", VNPU_LAYER_QUANTIZE, t, data, 4,
					    &at, sizeof(at), ref));
		t[0] = t[3];
		t[3] = et_dense(VNPU_DTYPE_F32, 3, dims);
		data[0] = ref;
		data[3] = back;
		for (i = 0; i < N; i++)
			bref[i] = (float)(q_at(dts[d], ref, i) - q_at(dts[d], zp, 0)) * sc;
		EXPECT_EQ(0, et_layer_exact("dequantize long", VNPU_LAYER_DEQUANTIZE, t, data,
					    4, &at, sizeof(at), bref));
	}
}

static void test_qmatmul(struct __test_metadata *_metadata)
{
	enum { M = 13, K = 37, N = 21 };
	__u64 da[2] = { M, K }, db[2] = { K, N }, dy[2] = { M, N };
	__u64 m = M, n = N;
	__u32 dta, dtb;

	for (dta = VNPU_DTYPE_U8; dta <= VNPU_DTYPE_I8; dta++)
		for (dtb = VNPU_DTYPE_U8; dtb <= VNPU_DTYPE_I8; dtb++) {
			uint8_t a[M * K], b[K * N], az[M], bz[N], yq[M * N], yref[M * N];
			int32_t y[M * N], ref[M * N];
			float as = 0.02f, bs[N], ys = 0.7f;
			uint8_t yz = 7;
			struct vnpu_layer_qgemm at = {};
			struct vnpu_cmd_tensor t[9];
			void *data[9];
			size_t i, j, k;

			q_fill(dta, a, M * K);
			q_fill(dtb, b, K * N);
			q_fill(dta, az, M);
			q_fill(dtb, bz, N);
			for (j = 0; j < N; j++)
				bs[j] = 0.001f * (float)(j + 1);
			/* MatMulInteger, per-row and per-column zero points. */
			t[0] = et_dense(dta, 2, da);
			t[1] = et_dense(dtb, 2, db);
			t[2] = et_dense(dta, 1, &m);
			t[3] = et_dense(dtb, 1, &n);
			t[4] = et_dense(VNPU_DTYPE_I32, 2, dy);
			data[0] = a; data[1] = b; data[2] = az; data[3] = bz; data[4] = y;
			for (i = 0; i < M; i++)
				for (j = 0; j < N; j++) {
					int32_t acc = 0;

					for (k = 0; k < K; k++)
						acc += (q_at(dta, a, i * K + k) - q_at(dta, az, i)) *
						       (q_at(dtb, b, k * N + j) - q_at(dtb, bz, j));
					ref[i * N + j] = acc;
				}
			EXPECT_EQ(0,
				  et_layer_exact("matmulinteger", VNPU_LAYER_MATMUL_INTEGER, t,
						 data, 5, &at, sizeof(at), ref));
			/* QLinearMatMul: scalar A zero point, per-column B. */
			t[0] = et_dense(dta, 2, da);
			t[1] = scalar(VNPU_DTYPE_F32);
			t[2] = scalar(dta);
			t[3] = et_dense(dtb, 2, db);
			t[4] = et_dense(VNPU_DTYPE_F32, 1, &n);
			t[5] = et_dense(dtb, 1, &n);
			t[6] = scalar(VNPU_DTYPE_F32);
			t[7] = scalar(VNPU_DTYPE_U8);
			t[8] = et_dense(VNPU_DTYPE_U8, 2, dy);
			data[0] = a; data[1] = &as; data[2] = az; data[3] = b;
			data[4] = bs; data[5] = bz; data[6] = &ys; data[7] = &yz;
			data[8] = yq;
			for (i = 0; i < M; i++)
				for (j = 0; j < N; j++) {
					int32_t acc = 0;
					float mult = as * bs[j] / ys;

					for (k = 0; k < K; k++)
						acc += (q_at(dta, a, i * K + k) - q_at(dta, az, 0)) *
						       (q_at(dtb, b, k * N + j) - q_at(dtb, bz, j));
					q_put(VNPU_DTYPE_U8, yref, i * N + j,
					      nearbyint((float)acc * mult) + yz);
				}
			EXPECT_EQ(0,
				  et_layer_exact("qlinearmatmul", VNPU_LAYER_QLINEAR_MATMUL, t,
						 data, 9, &at, sizeof(at), yref));
		}
}

static void test_qconv(struct __test_metadata *_metadata)
{
	enum { C = 4, H = 7, W = 6, M = 6, G = 2, KH = 3, KW = 3 };
	__u64 dx[4] = { 1, C, H, W }, dw[4] = { M, C / G, KH, KW };
	__u64 dy[4] = { 1, M, 4, 3 }, m = M;
	uint8_t x[C * H * W], y[M * 12], ref[M * 12], xz = 5, yz = 100;
	int8_t w[M * C / G * KH * KW], wz[M];
	int32_t bias[M];
	float xs = 0.03f, ws[M], ys = 0.2f;
	struct vnpu_layer_conv at = { .flags = VNPU_LAYER_F_BIAS, .group = G };
	struct vnpu_cmd_tensor t[10];
	void *data[10];
	size_t i, oh, ow, c, kh, kw, mm;

	q_fill(VNPU_DTYPE_U8, x, sizeof(x));
	q_fill(VNPU_DTYPE_I8, w, sizeof(w));
	q_fill(VNPU_DTYPE_I8, wz, M);
	for (i = 0; i < M; i++) {
		ws[i] = 0.01f * (float)(i + 1);
		bias[i] = (int32_t)(et_randf() * 500);
	}
	at.kernel[0] = KH; at.kernel[1] = KW;
	at.stride[0] = 2; at.stride[1] = 2;
	at.dilation[0] = at.dilation[1] = 1;
	at.pad_begin[0] = at.pad_begin[1] = 1;
	at.pad_end[0] = at.pad_end[1] = 1;
	t[0] = et_dense(VNPU_DTYPE_U8, 4, dx);
	t[1] = scalar(VNPU_DTYPE_F32);
	t[2] = scalar(VNPU_DTYPE_U8);
	t[3] = et_dense(VNPU_DTYPE_I8, 4, dw);
	t[4] = et_dense(VNPU_DTYPE_F32, 1, &m);
	t[5] = et_dense(VNPU_DTYPE_I8, 1, &m);
	t[6] = scalar(VNPU_DTYPE_F32);
	t[7] = scalar(VNPU_DTYPE_U8);
	t[8] = et_dense(VNPU_DTYPE_I32, 1, &m);
	t[9] = et_dense(VNPU_DTYPE_U8, 4, dy);
	data[0] = x; data[1] = &xs; data[2] = &xz; data[3] = w; data[4] = ws;
	data[5] = wz; data[6] = &ys; data[7] = &yz; data[8] = bias; data[9] = y;
	for (mm = 0; mm < M; mm++)
		for (oh = 0; oh < 4; oh++)
			for (ow = 0; ow < 3; ow++) {
				int32_t acc = bias[mm];
				size_t g = mm / (M / G);

				for (c = 0; c < C / G; c++)
					for (kh = 0; kh < KH; kh++)
						for (kw = 0; kw < KW; kw++) {
							long ih = (long)(oh * 2 + kh) - 1;
							long iw = (long)(ow * 2 + kw) - 1;

							if (ih < 0 || iw < 0 || ih >= H || iw >= W)
								continue;
							acc += (x[((g * (C / G) + c) * H + ih) * W + iw] - xz) *
							       (w[((mm * (C / G) + c) * KH + kh) * KW + kw] - wz[mm]);
						}
				q_put(VNPU_DTYPE_U8, ref, (mm * 4 + oh) * 3 + ow,
				      nearbyint((float)acc * (xs * ws[mm] / ys)) + yz);
			}
	EXPECT_EQ(0,
		  et_layer_exact("qlinearconv", VNPU_LAYER_QLINEAR_CONV, t, data, 10, &at,
				 sizeof(at), ref));
	/* ReLU: the low bound raised to the zero point. */
	for (i = 0; i < sizeof(ref); i++)
		ref[i] = ref[i] < yz ? yz : ref[i];
	at.act.func = VNPU_ACT_RELU;
	EXPECT_EQ(0,
		  et_layer_exact("qlinearconv relu", VNPU_LAYER_QLINEAR_CONV, t, data, 10, &at,
				 sizeof(at), ref));
	/* Malformed: activation, unknown flag, bias of the wrong type. */
	at.act.func = VNPU_ACT_TANH;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_QLINEAR_CONV, t, 10, &at, sizeof(at)))
		TH_LOG("qlinearconv: tanh accepted");
	at.act.func = 0;
	at.flags |= VNPU_LAYER_F_RESIDUAL;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_QLINEAR_CONV, t, 10, &at, sizeof(at)))
		TH_LOG("qlinearconv: residual accepted");
	at.flags = VNPU_LAYER_F_BIAS;
	t[8].dtype = VNPU_DTYPE_F32;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_QLINEAR_CONV, t, 10, &at, sizeof(at)))
		TH_LOG("qlinearconv: f32 bias accepted");
	t[8].dtype = VNPU_DTYPE_I32;
	t[4] = et_dense(VNPU_DTYPE_F32, 1, &dy[2]);
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_QLINEAR_CONV, t, 10, &at, sizeof(at)))
		TH_LOG("qlinearconv: w_scale of 4 accepted");
	t[4] = et_dense(VNPU_DTYPE_F32, 1, &m);
	t[2] = scalar(VNPU_DTYPE_I8);
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_QLINEAR_CONV, t, 10, &at, sizeof(at)))
		TH_LOG("qlinearconv: x zero point type accepted");
}

/* One packed QLINEAR_CONV case: its shape and quantization. */
struct qcase {
	__u64 n, c, h, w, m, group, k, stride, pad, dil;
	__u32 xt, yt;
	int wz, bias, relu;
	int nan;	/* channel 1's weight scale infinite, channel 2's NaN */
	int sat;	/* inputs at their top, weights -128 and 127 in pairs */
	int few;	/* weights within 60 of 0 but every few-th at -128 or 127;
			 * -1: pairs at vpmaddubsw's bounds among small ones */
	float ys;	/* y's scale; 0: 0.5 (multipliers of 0.00016 to 0.00112) */
	int ext;	/* every x - x_zero_point 255 and every weight -128 */
};

/* %VNPU_PACK_QCONV_SPLIT's NX, pairs a tile of depth @k4 lists at most. */
static __u64 q_split_cap(__u64 k4)
{
	return VNPU_PACK_QMR * k4 / 32;
}

/* Pairs of weights at and just past the bounds of 16-bit pair sums. */
static const int8_t q_edge[][2] = {
	{ 127, 1 }, { 1, 127 }, { -128, 0 }, { -64, -64 }, { 64, 64 }, { 127, -128 },
	{ 127, 2 }, { -128, -1 }, { -1, -128 }, { 65, 64 }, { -65, -64 },
};

/*
 * The packed case's weights @w as %VNPU_PACK_QCONV_SPLIT: the same bits
 * as @ref on every path; a depthwise layer, or SPLIT8 without PACKED,
 * refused; tables of any content (counts past the room, rows' ends past
 * the count or falling, offsets at and past the last step, with their
 * ignored bits set, weights past theirs) run without a fault.
 */
static void qconv_split_case(struct __test_metadata *_metadata, const struct qcase *qc,
			     struct vnpu_cmd_tensor *t, void **data, __u32 n,
			     struct vnpu_layer_conv *at, const int8_t *w, __u64 mg, __u64 k,
			     const void *ref, const char *name)
{
	__u64 size = vnpu_eng_packed_size(VNPU_PACK_QCONV_SPLIT, qc->group, mg, k);
	__u64 k4 = (k + 3) & ~3ull, mp = (mg + VNPU_PACK_QMR - 1) / VNPU_PACK_QMR * VNPU_PACK_QMR;
	__u64 tiles = qc->group * mp / VNPU_PACK_QMR, cap = q_split_cap(k4);
	__u64 sched = 3 * 65 * ((k4 / 4 + 63) / 64), tab = 8 + sched + 48 + 8 * cap, i, j;
	uint8_t *split = malloc(size ? size : 1), *tables;
	__u32 feat[3] = { 0, VNPU_ENG_F_AVX2_FMA,
			  VNPU_ENG_F_AVX2_FMA | VNPU_ENG_F_AVX512 | VNPU_ENG_F_VNNI };
	char sname[128];

	EXPECT_EQ(qc->group * mp * (k4 + 4) + tiles * tab, size)
		TH_LOG("%s: split size", name);
	EXPECT_TRUE(size && !vnpu_eng_pack(VNPU_PACK_QCONV_SPLIT, w, qc->group, mg, k, split))
		TH_LOG("%s: split pack failed", name);
	t[3] = et_dense(VNPU_DTYPE_I8, 1, &size);
	data[3] = split;
	at->flags |= VNPU_LAYER_F_SPLIT8;
	if (qc->c == qc->group && qc->m == qc->group) {
		EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_QLINEAR_CONV, t, n, at, sizeof(*at)))
			TH_LOG("%s: split depthwise accepted", name);
		goto out;
	}
	snprintf(sname, sizeof(sname), "%s split", name);
	EXPECT_EQ(0, et_layer_exact(sname, VNPU_LAYER_QLINEAR_CONV, t, data, n, at,
				    sizeof(*at), ref));
	at->flags &= ~VNPU_LAYER_F_PACKED;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_QLINEAR_CONV, t, n, at, sizeof(*at)))
		TH_LOG("%s: split without packed accepted", name);
	at->flags |= VNPU_LAYER_F_PACKED;
	size--;
	t[3] = et_dense(VNPU_DTYPE_I8, 1, &size);
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_QLINEAR_CONV, t, n, at, sizeof(*at)))
		TH_LOG("%s: short split W accepted", name);
	size++;
	t[3] = et_dense(VNPU_DTYPE_I8, 1, &size);
	/*
	 * Hostile tables: counts at and past the room, entries of any bits
	 * (at the room, every other tile's offsets at the last step and just
	 * past it, all their bits set, its rows' ends falling); and none,
	 * with step schedules (%VNPU_QSPLIT_F_PAIRS) of any pairs in range,
	 * or of steps and counts past them.
	 */
	tables = split + qc->group * mp * (k4 + 4);
	for (i = 0; i < tiles; i++) {
		__u32 cnt = i % 4 == 0 ? ~0u : i % 4 == 1 ? (__u32)cap :
			    i % 4 == 2 ? (__u32)(cap + 1) : 0, fl = VNPU_QSPLIT_F_PAIRS;
		__u64 steps = k4 / 4, c, at = 8;

		memcpy(tables + i * tab, &cnt, 4);
		for (j = 4; j < tab; j++)
			tables[i * tab + j] = (uint8_t)(et_randf() * 256);
		if (cnt == cap && i / 4 % 2) {
			for (j = 0; j < 12; j++) {
				__u32 e = (__u32)(j % 3 ? cap - j : cap + j);

				memcpy(tables + i * tab + 8 + sched + 4 * j, &e, 4);
			}
			for (j = 0; j < cap; j++) {
				__u32 off = (__u32)(32 * k4 - (j % 3 ? 128 : 0)) |
					    (j % 2 ? 0x7f : 0);

				memcpy(tables + i * tab + 8 + sched + 48 + 8 * j, &off, 4);
			}
		}
		if (cnt)
			continue;
		memcpy(tables + i * tab + 4, &fl, 4);
		for (c = 0; (i / 4) % 2 == 0 && c + 65 <= sched; c += 65) {
			__u64 nst = steps - (c / 65 % ((steps + 63) / 64)) * 64;

			nst = nst < 64 ? nst : 64;
			tables[i * tab + at + c] =
				(uint8_t)((et_randf() + 1) / 2 * (float)(nst / 2 + 1));
			for (j = 1; j < 65; j++)
				tables[i * tab + at + c + j] =
					(uint8_t)((et_randf() + 1) / 2 * (float)nst);
		}
	}
	for (i = 0; i < 3; i++) {
		if ((et_host_features & feat[i]) != feat[i])
			continue;
		EXPECT_EQ(0, et_run(VNPU_LAYER_QLINEAR_CONV, t, data, n, at, sizeof(*at),
				    feat[i], 3))
			TH_LOG("%s: hostile tables failed (features %x)", name, feat[i]);
	}
out:
	at->flags &= ~VNPU_LAYER_F_SPLIT8;
	free(split);
}

/*
 * The packed case fused with a QLinearAdd (%VNPU_LAYER_F_RESIDUAL), R as
 * the Add's second operand and (%VNPU_LAYER_F_RES_FIRST) its first: bit
 * for bit the QLINEAR_ADD of @ref (the convolution's output) and R on
 * every path and split; malformed residual operands refused.
 */
static void qconv_residual_case(struct __test_metadata *_metadata, const struct qcase *qc,
				const struct vnpu_cmd_tensor *t0, void *const *data0, __u32 n0,
				const struct vnpu_layer_conv *at0, const void *ref,
				const char *name)
{
	const struct vnpu_cmd_tensor *y = &t0[n0 - 1];
	size_t ny = et_numel(y), i;
	uint8_t *r = malloc(ny), *ref2 = malloc(ny), *out = malloc(ny);
	float rs = 0.03f, zs = 0.04f;
	uint8_t rz = qc->yt == VNPU_DTYPE_U8 ? 131 : 0xf0, zz = qc->yt == VNPU_DTYPE_U8 ? 7 : 3;
	struct vnpu_cmd_tensor t[15], ta[9];
	void *data[15], *da[9];
	struct vnpu_layer_conv at = *at0;
	__u32 n = n0 + 5, first;
	char rname[160];

	q_fill(qc->yt, r, ny);
	memcpy(t, t0, sizeof(t[0]) * (n0 - 1));
	memcpy(data, data0, sizeof(data[0]) * (n0 - 1));
	t[n0 - 1] = *y;
	t[n0] = scalar(VNPU_DTYPE_F32);
	t[n0 + 1] = scalar(qc->yt);
	t[n0 + 2] = scalar(VNPU_DTYPE_F32);
	t[n0 + 3] = scalar(qc->yt);
	t[n - 1] = *y;
	data[n0 - 1] = r; data[n0] = &rs; data[n0 + 1] = &rz; data[n0 + 2] = &zs;
	data[n0 + 3] = &zz; data[n - 1] = out;
	for (first = 0; first < 2; first++) {
		/* The unfused QLINEAR_ADD on the baseline. */
		ta[0] = *y; ta[1] = scalar(VNPU_DTYPE_F32); ta[2] = scalar(qc->yt);
		ta[3] = *y; ta[4] = ta[1]; ta[5] = ta[2]; ta[6] = ta[1]; ta[7] = ta[2];
		ta[8] = *y;
		da[first ? 3 : 0] = (void *)ref; da[first ? 4 : 1] = data0[6];
		da[first ? 5 : 2] = data0[7];
		da[first ? 0 : 3] = r; da[first ? 1 : 4] = &rs; da[first ? 2 : 5] = &rz;
		da[6] = &zs; da[7] = &zz; da[8] = ref2;
		EXPECT_EQ(0, et_run(VNPU_LAYER_QLINEAR_ADD, ta, da, 9, NULL, 0, 0, 1))
			TH_LOG("%s: the unfused add failed", name);
		at.flags = at0->flags | VNPU_LAYER_F_RESIDUAL |
			   (first ? VNPU_LAYER_F_RES_FIRST : 0);
		snprintf(rname, sizeof(rname), "%s residual%s", name, first ? " first" : "");
		EXPECT_EQ(0, et_layer_exact(rname, VNPU_LAYER_QLINEAR_CONV, t, data, n, &at,
					    sizeof(at), ref2));
	}
	/* Malformed: the flags, the count, R and its parameters. */
	at.flags = at0->flags | VNPU_LAYER_F_RES_FIRST;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_QLINEAR_CONV, t, n, &at, sizeof(at)))
		TH_LOG("%s: res first without residual accepted", name);
	at.flags = (at0->flags | VNPU_LAYER_F_RESIDUAL) & ~VNPU_LAYER_F_SPLIT8;
	EXPECT_FALSE(vnpu_eng_layer_check(VNPU_LAYER_QLINEAR_CONV, t, n, &at, sizeof(at)))
		TH_LOG("%s: residual refused", name);
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_QLINEAR_CONV, t, n - 1, &at, sizeof(at)))
		TH_LOG("%s: residual short of a tensor accepted", name);
	if (at.flags & VNPU_LAYER_F_PACKED) {
		at.flags &= ~VNPU_LAYER_F_PACKED;
		EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_QLINEAR_CONV, t, n, &at,
						 sizeof(at)))
			TH_LOG("%s: residual unpacked accepted", name);
		at.flags |= VNPU_LAYER_F_PACKED;
	}
	t[n0 - 1].dtype = qc->yt == VNPU_DTYPE_U8 ? VNPU_DTYPE_I8 : VNPU_DTYPE_U8;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_QLINEAR_CONV, t, n, &at, sizeof(at)))
		TH_LOG("%s: R of another dtype accepted", name);
	t[n0 - 1] = *y;
	t[n0 - 1].dims[1]--;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_QLINEAR_CONV, t, n, &at, sizeof(at)))
		TH_LOG("%s: R of other dims accepted", name);
	t[n0 - 1] = *y;
	t[n0 - 1].strides[3] = 2;
	EXPECT_TRUE(y->dims[3] == 1 ||
		    vnpu_eng_layer_check(VNPU_LAYER_QLINEAR_CONV, t, n, &at, sizeof(at)))
		TH_LOG("%s: R of sparse rows accepted", name);
	t[n0 - 1] = *y;
	for (i = 0; i < 4; i++) {
		struct vnpu_cmd_tensor keep = t[n0 + i];
		__u64 two = 2;

		t[n0 + i].dtype = i % 2 ? VNPU_DTYPE_F32 :
				  qc->yt == VNPU_DTYPE_U8 ? VNPU_DTYPE_I8 : VNPU_DTYPE_U8;
		EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_QLINEAR_CONV, t, n, &at, sizeof(at)))
			TH_LOG("%s: residual parameter %zu of another dtype accepted", name, i);
		t[n0 + i] = et_dense(keep.dtype, 1, &two);
		EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_QLINEAR_CONV, t, n, &at, sizeof(at)))
			TH_LOG("%s: residual parameter %zu of 2 accepted", name, i);
		t[n0 + i] = keep;
	}
	free(r); free(ref2); free(out);
}

/*
 * The packed case over %VNPU_PACK_QWINO_W (%VNPU_LAYER_F_QWINO) where it
 * takes the shape and the weight zero points are 0: the same bits as
 * @ref on every path and split, the fused add's too; a short W, u8 W,
 * PACKED or SPLIT8 with it, a depthwise layer refused.
 */
static void qconv_wino_case(struct __test_metadata *_metadata, const struct qcase *qc,
			    const struct vnpu_cmd_tensor *t0, void *const *data0, __u32 n,
			    const struct vnpu_layer_conv *at0, const int8_t *w, const void *ref,
			    const char *name0)
{
	__u64 cg = qc->c / qc->group, mg = qc->m / qc->group, size;
	struct vnpu_cmd_tensor t[10];
	struct vnpu_layer_conv at = *at0;
	void *data[10], *u;
	char name[160];

	if (qc->k != 3 || qc->stride != 1 || qc->dil != 1 || qc->pad > 2 || qc->wz ||
	    cg > VNPU_QWINO_MAX_C)
		return;
	memcpy(t, t0, sizeof(t[0]) * n);
	memcpy(data, data0, sizeof(data[0]) * n);
	size = vnpu_eng_packed_size(VNPU_PACK_QWINO_W, qc->group, mg, cg * 9);
	u = malloc(size + 1);
	EXPECT_TRUE(size && !vnpu_eng_pack(VNPU_PACK_QWINO_W, w, qc->group, mg, cg * 9, u))
		TH_LOG("%s: qwino pack failed", name0);
	t[3] = et_dense(VNPU_DTYPE_I8, 1, &size);
	data[3] = u;
	at.flags = (at0->flags & ~(VNPU_LAYER_F_PACKED | VNPU_LAYER_F_SPLIT8)) |
		   VNPU_LAYER_F_QWINO;
	if (qc->c == qc->group && qc->m == qc->group) {
		EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_QLINEAR_CONV, t, n, &at, sizeof(at)))
			TH_LOG("%s: qwino depthwise accepted", name0);
		free(u);
		return;
	}
	snprintf(name, sizeof(name), "%s qwino", name0);
	EXPECT_EQ(0, et_layer_exact(name, VNPU_LAYER_QLINEAR_CONV, t, data, n, &at,
				    sizeof(at), ref));
	qconv_residual_case(_metadata, qc, t, data, n, &at, ref, name);
	/* Malformed: W's size and type, the other packed flags with it. */
	at.flags |= VNPU_LAYER_F_PACKED;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_QLINEAR_CONV, t, n, &at, sizeof(at)))
		TH_LOG("%s: qwino packed accepted", name0);
	at.flags |= VNPU_LAYER_F_SPLIT8;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_QLINEAR_CONV, t, n, &at, sizeof(at)))
		TH_LOG("%s: qwino split accepted", name0);
	at.flags &= ~(VNPU_LAYER_F_PACKED | VNPU_LAYER_F_SPLIT8);
	size--;
	t[3] = et_dense(VNPU_DTYPE_I8, 1, &size);
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_QLINEAR_CONV, t, n, &at, sizeof(at)))
		TH_LOG("%s: qwino short W accepted", name0);
	size++;
	t[3] = et_dense(VNPU_DTYPE_U8, 1, &size);
	t[5].dtype = VNPU_DTYPE_U8;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_QLINEAR_CONV, t, n, &at, sizeof(at)))
		TH_LOG("%s: qwino u8 W accepted", name0);
	free(u);
}

/*
 * The packed case over %VNPU_PACK_QW4_W (%VNPU_LAYER_F_QW4) where its
 * shape takes it: the same bits as @ref on every path and split (the
 * VNNI+VBMI runs sum over U in place, the others over W's rows), and U
 * read there only: zeroed, the VNNI+VBMI run's outputs change and the
 * AVX2 run's do not. Malformed: a short W, W without U, the flag without
 * PACKED, with SPLIT8 or the fused add, on a dilated kernel of the same
 * sizes and on a map wider than VNPU_QW4_MAX_W.
 */
static void qconv_qw4_case(struct __test_metadata *_metadata, const struct qcase *qc,
			   const struct vnpu_cmd_tensor *t0, void *const *data0, __u32 n,
			   const struct vnpu_layer_conv *at0, const int8_t *w,
			   const int8_t *wz, const void *ref, const char *name0)
{
	const __u32 vbmi = VNPU_ENG_F_AVX2_FMA | VNPU_ENG_F_AVX512 | VNPU_ENG_F_VNNI |
			   VNPU_ENG_F_VBMI;
	__u64 cg = qc->c, size, uoff, qsize, ny = et_bytes(&t0[n - 1]), wd;
	struct vnpu_cmd_tensor t[10];
	struct vnpu_layer_conv at = *at0;
	void *data[10], *u, *y;
	char name[160];

	if (qc->k != 3 || qc->stride != 1 || qc->dil != 1 || qc->pad != 1 ||
	    qc->group != 1 || qc->m % 16 || qc->w > VNPU_QW4_MAX_W)
		return;
	memcpy(t, t0, sizeof(t[0]) * n);
	memcpy(data, data0, sizeof(data[0]) * n);
	size = vnpu_eng_packed_size(VNPU_PACK_QW4_W, 1, qc->m, cg * 9);
	qsize = vnpu_eng_packed_size(VNPU_PACK_QCONV_W, 1, qc->m, cg * 9);
	uoff = (qsize + 63) / 64 * 64;
	EXPECT_EQ(uoff + 36 * qc->m / 16 * ((cg + 1) / 2) * 64, size);
	u = malloc(size + 1);
	y = malloc(ny);
	EXPECT_TRUE(size && !vnpu_eng_qw4_pack(w, wz, qc->m, qc->m, cg * 9, u))
		TH_LOG("%s: qw4 pack failed", name0);
	EXPECT_TRUE(vnpu_eng_pack(VNPU_PACK_QW4_W, w, 1, qc->m, cg * 9, u))
		TH_LOG("%s: qw4 packed without zero points", name0);
	EXPECT_TRUE(vnpu_eng_qw4_pack(w, wz, 2, qc->m, cg * 9, u))
		TH_LOG("%s: qw4 packed with 2 zero points", name0);
	t[3] = et_dense(VNPU_DTYPE_I8, 1, &size);
	data[3] = u;
	at.flags |= VNPU_LAYER_F_QW4;
	snprintf(name, sizeof(name), "%s qw4", name0);
	EXPECT_EQ(0, et_layer_exact(name, VNPU_LAYER_QLINEAR_CONV, t, data, n, &at,
				    sizeof(at), ref));
	/* U zeroed: read by the VNNI+VBMI runs, not by the others. */
	memset((char *)u + uoff, 0, size - uoff);
	data[n - 1] = y;
	if ((et_host_features & vbmi) == vbmi) {
		EXPECT_TRUE(!et_run(VNPU_LAYER_QLINEAR_CONV, t, data, n, &at, sizeof(at),
				    vbmi, 2) && memcmp(y, ref, ny))
			TH_LOG("%s: VNNI+VBMI run did not read U", name0);
	}
	if (et_host_features & VNPU_ENG_F_AVX2_FMA) {
		EXPECT_TRUE(!et_run(VNPU_LAYER_QLINEAR_CONV, t, data, n, &at, sizeof(at),
				    VNPU_ENG_F_AVX2_FMA, 7) && !memcmp(y, ref, ny))
			TH_LOG("%s: AVX2 run read U", name0);
	}
	/* Malformed. */
	size--;
	t[3] = et_dense(VNPU_DTYPE_I8, 1, &size);
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_QLINEAR_CONV, t, n, &at, sizeof(at)))
		TH_LOG("%s: qw4 short W accepted", name0);
	t[3] = et_dense(VNPU_DTYPE_I8, 1, &qsize);
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_QLINEAR_CONV, t, n, &at, sizeof(at)))
		TH_LOG("%s: qw4 W without U accepted", name0);
	size++;
	t[3] = et_dense(VNPU_DTYPE_I8, 1, &size);
	EXPECT_FALSE(vnpu_eng_layer_check(VNPU_LAYER_QLINEAR_CONV, t, n, &at, sizeof(at)))
		TH_LOG("%s: qw4 refused", name0);
	at.flags &= ~VNPU_LAYER_F_PACKED;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_QLINEAR_CONV, t, n, &at, sizeof(at)))
		TH_LOG("%s: qw4 unpacked accepted", name0);
	at.flags |= VNPU_LAYER_F_PACKED | VNPU_LAYER_F_SPLIT8;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_QLINEAR_CONV, t, n, &at, sizeof(at)))
		TH_LOG("%s: qw4 split accepted", name0);
	at.flags &= ~VNPU_LAYER_F_SPLIT8;
	at.dilation[0] = at.dilation[1] = 2;
	at.pad_begin[0] = at.pad_begin[1] = at.pad_end[0] = at.pad_end[1] = 2;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_QLINEAR_CONV, t, n, &at, sizeof(at)))
		TH_LOG("%s: qw4 dilated accepted", name0);
	at.dilation[0] = at.dilation[1] = 1;
	at.pad_begin[0] = at.pad_begin[1] = at.pad_end[0] = at.pad_end[1] = 1;
	for (wd = VNPU_QW4_MAX_W + 1; wd >= VNPU_QW4_MAX_W; wd--) {
		__u64 dx[4] = { qc->n, qc->c, qc->h, wd }, dy[4] = { qc->n, qc->m, qc->h, wd };

		t[0] = et_dense(qc->xt, 4, dx);
		t[n - 1] = et_dense(qc->yt, 4, dy);
		EXPECT_EQ(wd > VNPU_QW4_MAX_W,
			  !!vnpu_eng_layer_check(VNPU_LAYER_QLINEAR_CONV, t, n, &at,
						 sizeof(at)))
			TH_LOG("%s: qw4 on %llu columns", name0, (unsigned long long)wd);
	}
	free(u);
	free(y);
}

/*
 * A packed QLINEAR_CONV against the unpacked one on the baseline (the
 * plain loop), ReLU as the saturation's low bound raised to y's zero
 * point; every path and split through et_layer_exact().
 */
static void qconv_packed_case(struct __test_metadata *_metadata, const struct qcase *qc)
{
	__u64 cg = qc->c / qc->group, mg = qc->m / qc->group;
	__u64 span = qc->dil * (qc->k - 1) + 1;
	__u64 oh = (qc->h + 2 * qc->pad - span) / qc->stride + 1;
	__u64 ow = (qc->w + 2 * qc->pad - span) / qc->stride + 1;
	__u64 dx[4] = { qc->n, qc->c, qc->h, qc->w }, dw[4] = { qc->m, cg, qc->k, qc->k };
	__u64 dy[4] = { qc->n, qc->m, oh, ow }, m = qc->m, psize;
	size_t nx = qc->n * qc->c * qc->h * qc->w, nw = qc->m * cg * qc->k * qc->k;
	size_t ny = qc->n * qc->m * oh * ow, i;
	void *x = malloc(nx), *y = malloc(ny), *ref = malloc(ny), *packed;
	int8_t *w = malloc(nw), *wz = calloc(qc->m, 1);
	int32_t *bias = malloc(4 * qc->m);
	float xs = 0.02f, *ws = malloc(4 * qc->m), ys = qc->ys ? qc->ys : 0.5f;
	uint8_t xz = qc->xt == VNPU_DTYPE_U8 ? 117 : 0xf6, yz = qc->yt == VNPU_DTYPE_U8 ? 9 : 0xfb;
	struct vnpu_layer_conv at = { .flags = qc->bias ? VNPU_LAYER_F_BIAS : 0,
				      .group = (__u32)qc->group };
	struct vnpu_cmd_tensor t[10];
	void *data[10];
	__u32 n = qc->bias ? 10 : 9;
	char name[96];

	q_fill(qc->xt, x, nx);
	q_fill(VNPU_DTYPE_I8, w, nw);
	/*
	 * Products whose pair sums are 255 * -128 * 2 as the tiles see them
	 * (an i8 input flipped to u8): what 16-bit pair sums saturate on.
	 */
	for (i = 0; qc->sat && i < nx; i++)
		q_put(qc->xt, x, i, 255);
	for (i = 0; qc->sat && i < nw; i++)
		w[i] = i / 2 % 2 ? -128 : 127;
	if (qc->ext) {
		xz = qc->xt == VNPU_DTYPE_U8 ? 0 : 0x80;
		for (i = 0; i < nx; i++)
			q_put(qc->xt, x, i, qc->xt == VNPU_DTYPE_U8 ? 255 : 127);
		memset(w, 0x80, nw);
	}
	/*
	 * Weights as trained ones are, most of them small: the pairs of
	 * large ones, which vpmaddubsw could saturate on, are few.
	 */
	for (i = 0; qc->few > 0 && i < nw; i++)
		w[i] = (int8_t)(i % (size_t)qc->few ? et_randf() * 60 :
				et_randf() < 0 ? -128 : 127);
	for (i = 0; qc->few < 0 && i < nw; i++)
		w[i] = i / 2 % 96 < 11 ? q_edge[i / 2 % 96][i % 2] :
		       (int8_t)(et_randf() * 60);
	for (i = 0; i < qc->m; i++) {
		ws[i] = 0.004f * (float)(i % 7 + 1);
		bias[i] = (int32_t)(et_randf() * 3000);
		if (qc->wz)
			wz[i] = (int8_t)(et_randf() * 20);
	}
	if (qc->nan) {
		ws[1] = __builtin_inff();
		ws[2] = __builtin_nanf("");
	}
	at.kernel[0] = at.kernel[1] = (__u32)qc->k;
	at.stride[0] = at.stride[1] = (__u32)qc->stride;
	at.dilation[0] = at.dilation[1] = (__u32)qc->dil;
	at.pad_begin[0] = at.pad_begin[1] = (__u32)qc->pad;
	at.pad_end[0] = at.pad_end[1] = (__u32)qc->pad;
	t[0] = et_dense(qc->xt, 4, dx);
	t[1] = scalar(VNPU_DTYPE_F32);
	t[2] = scalar(qc->xt);
	t[3] = et_dense(VNPU_DTYPE_I8, 4, dw);
	t[4] = et_dense(VNPU_DTYPE_F32, 1, &m);
	t[5] = et_dense(VNPU_DTYPE_I8, 1, &m);
	t[6] = scalar(VNPU_DTYPE_F32);
	t[7] = scalar(qc->yt);
	t[8] = et_dense(VNPU_DTYPE_I32, 1, &m);
	t[n - 1] = et_dense(qc->yt, 4, dy);
	data[0] = x; data[1] = &xs; data[2] = &xz; data[3] = w; data[4] = ws;
	data[5] = wz; data[6] = &ys; data[7] = &yz; data[8] = bias; data[n - 1] = ref;
	EXPECT_TRUE(!et_run(VNPU_LAYER_QLINEAR_CONV, t, data, n, &at, sizeof(at), 0, 1))
		TH_LOG("qconv packed: the reference failed");
	for (i = 0; qc->relu && i < ny; i++)
		if (q_at(qc->yt, ref, i) < q_at(qc->yt, &yz, 0))
			((uint8_t *)ref)[i] = yz;
	psize = vnpu_eng_packed_size(VNPU_PACK_QCONV_W, qc->group, mg, cg * qc->k * qc->k);
	packed = malloc(psize);
	EXPECT_TRUE(psize && !vnpu_eng_pack(VNPU_PACK_QCONV_W, w, qc->group, mg, cg * qc->k * qc->k,
					    packed))
		TH_LOG("qconv packed: pack failed");
	t[3] = et_dense(VNPU_DTYPE_I8, 1, &psize);
	data[3] = packed;
	data[n - 1] = y;
	at.flags |= VNPU_LAYER_F_PACKED;
	at.act.func = qc->relu ? VNPU_ACT_RELU : VNPU_ACT_IDENTITY;
	snprintf(name, sizeof(name),
		 "qconv packed %llux%llux%llux%llu m%llu g%llu k%llu s%llu%s%s%s%s%s%s ys %g",
		 qc->n, qc->c, qc->h, qc->w, qc->m, qc->group, qc->k, qc->stride,
		 qc->xt == VNPU_DTYPE_I8 ? " s8x" : "", qc->wz ? " wz" : "",
		 qc->relu ? " relu" : "", qc->nan ? " nan" : "", qc->sat ? " sat" : "",
		 qc->few ? " few" : "", (double)ys);
	EXPECT_EQ(0,
		  et_layer_exact(name, VNPU_LAYER_QLINEAR_CONV, t, data, n, &at, sizeof(at), ref));
	if (qc->c != qc->group || qc->m != qc->group)
		qconv_residual_case(_metadata, qc, t, data, n, &at, ref, name);
	qconv_wino_case(_metadata, qc, t, data, n, &at, w, ref, name);
	qconv_qw4_case(_metadata, qc, t, data, n, &at, w, wz, ref, name);
	qconv_split_case(_metadata, qc, t, data, n, &at, w, mg, cg * qc->k * qc->k, ref, name);
	t[3] = et_dense(VNPU_DTYPE_I8, 1, &psize);
	data[3] = packed;
	/* Malformed: a packed W of the wrong size or type, another act. */
	psize--;
	t[3] = et_dense(VNPU_DTYPE_I8, 1, &psize);
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_QLINEAR_CONV, t, n, &at, sizeof(at)))
		TH_LOG("qconv packed: short W accepted");
	psize++;
	t[3] = et_dense(VNPU_DTYPE_U8, 1, &psize);
	t[5] = et_dense(VNPU_DTYPE_U8, 1, &m);
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_QLINEAR_CONV, t, n, &at, sizeof(at)))
		TH_LOG("qconv packed: u8 W accepted");
	t[3] = et_dense(VNPU_DTYPE_I8, 1, &psize);
	t[5] = et_dense(VNPU_DTYPE_I8, 1, &m);
	at.act.func = VNPU_ACT_SIGMOID;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_QLINEAR_CONV, t, n, &at, sizeof(at)))
		TH_LOG("qconv packed: sigmoid accepted");
	at.act.func = VNPU_ACT_RELU;
	at.act.alpha = 1;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_QLINEAR_CONV, t, n, &at, sizeof(at)))
		TH_LOG("qconv packed: relu alpha accepted");
	free(x); free(y); free(ref); free(packed); free(w); free(wz); free(bias); free(ws);
}

/*
 * %VNPU_PACK_QCONV_SPLIT's bytes: one row of depth 6 (K4 8, room for 3
 * pairs): (100, 100) and (-90, -39) listed and zeroed, (127, -128) kept,
 * the sum of all six; the step schedule of the rows left, before the
 * pairs (three groups of 4 rows, the two steps paired, the zero rows'
 * too); the 12 rows' ends (all 2: one row has pairs); the pairs at
 * offsets 0 and 128 (step 1); a tile of 12 rows of 120s (108 pairs, room
 * for 7): whole.
 */
static void test_qconv_split_layout(struct __test_metadata *_metadata)
{
	static const int8_t w[6] = { 100, 100, 127, -128, -90, -39 };
	static const uint8_t want[12 * 8 + 12 * 4 + 8 + 3 * 65 + 48 + 8 * 3] = {
		0, 0, 127, 0x80, 0, 0, 0, 0, [12 * 8] = 70, 0, 0, 0,
		[12 * 12] = 2, 0, 0, 0, 1, 0, 0, 0,
		1, 0, 1, [12 * 12 + 73] = 1, 0, 1, [12 * 12 + 138] = 1, 0, 1,
		[12 * 12 + 203] = 2, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0,
		2, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0,
		2, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0,
		0, 0, 0, 0, 100, 0, 100, 0,
		0x80, 0, 0, 0, 0xa6, 0xff, 0xd9, 0xff,
	};
	int8_t big[12 * 18];
	uint8_t got[sizeof(want)], *bp;
	__u64 size = vnpu_eng_packed_size(VNPU_PACK_QCONV_SPLIT, 1, 1, 6), i;
	__u32 n;

	EXPECT_EQ(sizeof(want), size);
	EXPECT_EQ(0, vnpu_eng_pack(VNPU_PACK_QCONV_SPLIT, w, 1, 1, 6, got));
	EXPECT_EQ(0, memcmp(got, want, sizeof(want)))
		TH_LOG("split layout bytes differ");
	for (i = 0; i < sizeof(big); i++)
		big[i] = 120;
	size = vnpu_eng_packed_size(VNPU_PACK_QCONV_SPLIT, 1, 12, 18);
	bp = malloc(size);
	EXPECT_EQ(0, vnpu_eng_pack(VNPU_PACK_QCONV_SPLIT, big, 1, 12, 18, bp));
	memcpy(&n, bp + 12 * 20 + 12 * 4, 4);
	EXPECT_TRUE(n > q_split_cap(20))
		TH_LOG("split layout: a tile past its room not whole (%u)", n);
	EXPECT_EQ(120, bp[0]);
	free(bp);
}

/*
 * %VNPU_PACK_QCONV_SPLIT at depth 64 (room for 24 pairs, and a schedule
 * of 16 steps per 4 rows), two tiles. The first: a row of 44 127s (22
 * pairs) and one pair in row 5 (depths 6, 7: step 1's second pair) and in
 * row 11 (depths 62, 63: the last), 24 pairs, the room exactly, listed
 * and zeroed in runs of a row (ends 22, 23 from row 5, 24 at row 11); a
 * row of (127, -128) kept (no two of its steps pair), the rest zero
 * (their steps paired first and last inwards). The second: a row of 127s
 * and one of -128s (64 pairs): whole, no schedule.
 */
static void test_qconv_split_k64(struct __test_metadata *_metadata)
{
	int8_t w[24 * 64] = { 0 };
	__u64 size = vnpu_eng_packed_size(VNPU_PACK_QCONV_SPLIT, 1, 24, 64), i, g;
	__u64 tab0 = 24 * 64 + 24 * 4, tab = 8 + 3 * 65 + 48 + 8 * 24;
	uint8_t *bp = malloc(size);
	const uint8_t *t0, *t1, *s;
	__u32 n, fl;

	EXPECT_EQ(24, q_split_cap(64));
	EXPECT_EQ(tab0 + 2 * tab, size);
	for (i = 0; i < 64; i++) {
		w[i] = i < 44 ? 127 : 0;
		w[2 * 64 + i] = i % 2 ? -128 : 127;
		w[12 * 64 + i] = 127;
		w[13 * 64 + i] = -128;
	}
	w[5 * 64 + 6] = 100;
	w[5 * 64 + 7] = 100;
	w[11 * 64 + 62] = -100;
	w[11 * 64 + 63] = -100;
	EXPECT_EQ(0, vnpu_eng_pack(VNPU_PACK_QCONV_SPLIT, w, 1, 24, 64, bp));
	t0 = bp + tab0;
	t1 = t0 + tab;
	memcpy(&n, t0, 4);
	memcpy(&fl, t0 + 4, 4);
	EXPECT_EQ(24, n);
	EXPECT_EQ(VNPU_QSPLIT_F_PAIRS, fl);
	for (i = 0; i < 64; i++) {
		EXPECT_EQ(0, bp[i]);
		EXPECT_EQ((uint8_t)w[2 * 64 + i], bp[2 * 64 + i]);
		EXPECT_EQ(0, bp[5 * 64 + i]);
		EXPECT_EQ(0, bp[11 * 64 + i]);
	}
	for (i = 0; i < 12; i++) {
		__u32 end;

		memcpy(&end, t0 + 8 + 3 * 65 + 4 * i, 4);
		EXPECT_EQ(i < 5 ? 22 : i < 11 ? 23 : 24, end);
	}
	for (i = 0; i < 24; i++) {
		__u32 off, w2;

		memcpy(&off, t0 + 8 + 3 * 65 + 48 + 8 * i, 4);
		memcpy(&w2, t0 + 12 + 3 * 65 + 48 + 8 * i, 4);
		if (i == 22) {
			EXPECT_EQ(128 + 1, off);
			EXPECT_EQ(100u | 100u << 16, w2);
		} else if (i == 23) {
			EXPECT_EQ(15 * 128 + 1, off);
			EXPECT_EQ(0xff9cff9cu, w2);
		} else {
			EXPECT_EQ(i / 2 * 128 + i % 2, off);
			EXPECT_EQ(127u | 127u << 16, w2);
		}
	}
	/* Group 0: no pair, its steps in order; groups 1 and 2: (0, 15), (1, 14)... */
	s = t0 + 8;
	EXPECT_EQ(0, s[0]);
	for (i = 0; i < 16; i++)
		EXPECT_EQ(i, s[1 + i]);
	for (g = 1; g < 3; g++) {
		EXPECT_EQ(8, s[65 * g]);
		for (i = 0; i < 8; i++) {
			EXPECT_EQ(i, s[65 * g + 1 + 2 * i]);
			EXPECT_EQ(15 - i, s[65 * g + 2 + 2 * i]);
		}
	}
	memcpy(&n, t1, 4);
	memcpy(&fl, t1 + 4, 4);
	EXPECT_TRUE(n > 24);
	EXPECT_EQ(0, fl);
	EXPECT_EQ(127, bp[12 * 64]);
	EXPECT_EQ(0x80, bp[13 * 64 + 63]);
	free(bp);
}

static void test_qconv_packed(struct __test_metadata *_metadata)
{
	static const struct qcase cases[] = {
		/* n  c   h   w   m  g  k  s  p  d  x  y  wz b  relu nan */
		{ 1, 16, 9, 11, 24, 1, 1, 1, 0, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 0, 1, 1, 0 },
		{ 2, 6, 10, 7, 13, 1, 3, 1, 1, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 1, 1, 0, 0 },
		{ 1, 8, 12, 12, 30, 2, 3, 2, 1, 1, VNPU_DTYPE_I8, VNPU_DTYPE_I8, 0, 0, 1, 0 },
		{ 1, 12, 8, 9, 12, 12, 3, 1, 1, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 0, 1, 0, 0 },
		{ 1, 5, 15, 14, 7, 1, 5, 2, 2, 2, VNPU_DTYPE_I8, VNPU_DTYPE_U8, 1, 1, 1, 0 },
		{ 1, 3, 40, 40, 20, 1, 7, 2, 3, 1, VNPU_DTYPE_U8, VNPU_DTYPE_I8, 0, 1, 0, 0 },
		{ 1, 300, 7, 7, 100, 1, 3, 1, 1, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 0, 1, 1, 0 },
		{ 1, 64, 40, 40, 12, 1, 3, 1, 1, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 1, 0, 0, 0 },
		/*
		 * A last tile of 18 and a single one of 20 positions (the VNNI
		 * tile's panel and single positions), 7 and 3 rows
		 */
		{ 1, 40, 5, 10, 7, 1, 1, 1, 0, 1, VNPU_DTYPE_I8, VNPU_DTYPE_U8, 1, 1, 0, 0 },
		{ 1, 33, 4, 5, 3, 1, 3, 1, 1, 1, VNPU_DTYPE_U8, VNPU_DTYPE_I8, 0, 1, 1, 0 },
		/*
		 * Tiles of 4 positions or fewer (the VNNI tile's four to a
		 * vpdpbusd): a 2x2 map over 13 rows (K 27: 3 steps past the
		 * last 4), a last tile of 3 over 7 rows (K 10: 3 steps, none
		 * whole), of 1 over 4 rows (K 576), of 2 over 30 rows (i8
		 * input, weight zero points, K 24)
		 */
		{ 1, 3, 2, 2, 13, 1, 3, 1, 1, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 0, 1, 1, 0 },
		{ 1, 10, 5, 7, 7, 1, 1, 1, 0, 1, VNPU_DTYPE_U8, VNPU_DTYPE_I8, 1, 1, 0, 0 },
		{ 1, 64, 3, 11, 4, 1, 3, 1, 1, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 0, 0, 1, 0 },
		{ 1, 24, 2, 17, 30, 1, 1, 1, 0, 1, VNPU_DTYPE_I8, VNPU_DTYPE_U8, 1, 1, 0, 0 },
		/* 1x1 stride 2 (a downsample), odd rows: 32-byte loads at row ends */
		{ 1, 24, 30, 37, 40, 1, 1, 2, 0, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 0, 1, 0, 0 },
		/* depthwise stride 2, i8 input, weight zero points */
		{ 1, 16, 20, 45, 16, 16, 3, 2, 1, 1, VNPU_DTYPE_I8, VNPU_DTYPE_U8, 1, 1, 1, 0 },
		/* depthwise 5x5 stride 1 and 2, rows not a multiple of 8 */
		{ 1, 10, 13, 21, 10, 10, 5, 1, 2, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 0, 1, 1, 0 },
		{ 1, 8, 17, 30, 8, 8, 5, 2, 2, 1, VNPU_DTYPE_U8, VNPU_DTYPE_I8, 1, 1, 0, 0 },
		/* depthwise of weight zero point 0 (the VNNI rows): stride 2, i8 */
		{ 1, 8, 17, 30, 8, 8, 5, 2, 2, 1, VNPU_DTYPE_I8, VNPU_DTYPE_U8, 0, 1, 0, 0 },
		{ 1, 6, 9, 37, 6, 6, 3, 2, 1, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 0, 1, 1, 0 },
		/*
		 * VNNI depthwise rows of at most 8 and 4 outputs, two and
		 * four to a vector: 7x7 5x5 (odd rows), 14x14 to 7x7 stride
		 * 2, rows of 8, 5, 4, 3 and 1, fewer rows than a vector
		 */
		{ 1, 9, 7, 7, 9, 9, 5, 1, 2, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 0, 1, 1, 0 },
		{ 1, 7, 14, 14, 7, 7, 5, 2, 2, 1, VNPU_DTYPE_I8, VNPU_DTYPE_U8, 0, 1, 0, 0 },
		{ 1, 5, 8, 8, 5, 5, 3, 1, 1, 1, VNPU_DTYPE_U8, VNPU_DTYPE_I8, 0, 1, 0, 0 },
		{ 1, 6, 11, 5, 6, 6, 3, 1, 1, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 0, 1, 1, 0 },
		{ 1, 4, 9, 8, 4, 4, 5, 2, 2, 1, VNPU_DTYPE_I8, VNPU_DTYPE_I8, 0, 0, 0, 0 },
		{ 1, 5, 4, 4, 5, 5, 3, 1, 1, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 0, 1, 0, 0 },
		{ 1, 3, 7, 3, 3, 3, 3, 1, 1, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 0, 1, 1, 0 },
		{ 1, 4, 3, 3, 4, 4, 3, 1, 1, 1, VNPU_DTYPE_I8, VNPU_DTYPE_U8, 0, 1, 0, 0 },
		{ 1, 3, 6, 1, 3, 3, 3, 1, 1, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 0, 1, 0, 0 },
		/* 7 taps a row: two groups of four */
		{ 1, 4, 12, 40, 4, 4, 7, 1, 3, 1, VNPU_DTYPE_U8, VNPU_DTYPE_I8, 0, 1, 0, 0 },
		/*
		 * The AVX2 depthwise rows of 16-bit pairs of taps: even
		 * windows (a last pair of two taps), a row of 33 outputs (a
		 * last run of 1), and dilation 2 at stride 1, which they leave
		 * to the rows of single taps
		 */
		{ 1, 5, 12, 19, 5, 5, 4, 2, 1, 1, VNPU_DTYPE_I8, VNPU_DTYPE_U8, 1, 1, 1, 0 },
		{ 1, 3, 9, 33, 3, 3, 2, 1, 0, 1, VNPU_DTYPE_U8, VNPU_DTYPE_I8, 0, 0, 0, 0 },
		{ 1, 6, 11, 26, 6, 6, 3, 1, 2, 2, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 0, 1, 0, 0 },
		/*
		 * The same rows with infinite and NaN multipliers (the rows
		 * that keep the NaN mask), rows of 21 and 18 outputs (short
		 * runs stored 16 bytes into the next row, 8 and bytes last)
		 */
		{ 1, 6, 20, 21, 6, 6, 3, 1, 1, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 0, 1, 0, 1 },
		{ 1, 5, 20, 35, 5, 5, 5, 2, 2, 1, VNPU_DTYPE_I8, VNPU_DTYPE_I8, 1, 1, 0, 1 },
		/* depthwise stride 3, dilation 2: the gathered taps */
		{ 1, 6, 11, 26, 6, 6, 3, 3, 1, 2, VNPU_DTYPE_I8, VNPU_DTYPE_U8, 0, 0, 0, 0 },
		/* stride 3: the plain gather; rows wider than a vector */
		{ 1, 6, 17, 19, 14, 1, 3, 3, 1, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 0, 1, 0, 0 },
		{ 1, 8, 5, 70, 12, 1, 3, 1, 1, 1, VNPU_DTYPE_U8, VNPU_DTYPE_I8, 0, 0, 1, 0 },
		/* 7x7 maps of a deep 3x3 stride 1 and a 1x1 stride 2 from 14x14 */
		{ 1, 96, 7, 7, 30, 1, 3, 1, 1, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 0, 1, 1, 0 },
		{ 1, 40, 14, 14, 26, 1, 1, 2, 0, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 0, 1, 0, 0 },
		/*
		 * Column blocks starting inside an output row: 3x3 stride 1
		 * (three blocks, the last of 68: its tail of 4 joins it),
		 * stride 2, 5x5 of dilation 2 with weight zero points, a 1x1
		 * read in place.
		 */
		{ 1, 256, 14, 14, 30, 1, 3, 1, 1, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 0, 1, 1, 0 },
		{ 1, 200, 29, 29, 26, 1, 3, 2, 1, 1, VNPU_DTYPE_U8, VNPU_DTYPE_I8, 0, 1, 0, 0 },
		{ 1, 100, 13, 13, 14, 1, 5, 1, 4, 2, VNPU_DTYPE_I8, VNPU_DTYPE_U8, 1, 1, 1, 0 },
		{ 1, 1024, 14, 14, 24, 1, 1, 1, 0, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 0, 0, 0, 0 },
		/*
		 * A last column block of 4 positions joined to the one before
		 * (blocks of 64, 64 and 68 of a 14x14 map): from X's stride
		 * phases, and a 1x1 read in place with weight zero points.
		 */
		{ 1, 232, 28, 28, 13, 1, 3, 2, 1, 1, VNPU_DTYPE_U8, VNPU_DTYPE_I8, 0, 1, 1, 0 },
		{ 1, 2080, 14, 14, 14, 1, 1, 1, 0, 1, VNPU_DTYPE_I8, VNPU_DTYPE_U8, 1, 1, 0, 0 },
		/*
		 * 2^25 sums or more in 3 column blocks: 18 units, channel
		 * blocks of 2 and 3 tiles spread evenly (204 rows, 200 used)
		 */
		{ 1, 256, 14, 14, 200, 1, 3, 1, 1, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 0, 1, 1, 0 },
		/* staged rows of 3, 5 and 16 bytes (qconv_copy_row()'s moves) */
		{ 1, 6, 5, 3, 10, 1, 3, 1, 1, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 0, 1, 0, 0 },
		{ 1, 4, 6, 5, 4, 4, 3, 1, 1, 1, VNPU_DTYPE_I8, VNPU_DTYPE_U8, 0, 1, 1, 0 },
		{ 1, 9, 7, 16, 12, 1, 3, 2, 1, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 1, 1, 0, 0 },
		/*
		 * 3x3s that AVX512-VNNI with VBMI runs as F(4x4, 3x3) (maps
		 * of 48 to 56 columns, 16k output channels): ResNet-50's
		 * 56x56 64 to 64 (two blocks of 98 tiles: 6 vectors and a
		 * tail of 2 each); 3 channels (a pair's second empty; tails
		 * of 2 and 4), rows and columns not a multiple of 4, i8
		 * input, weight zero points (chunks of 28 pairs); 130
		 * channels in chunks of 28 pairs (a tail of 4); 240 in
		 * chunks of 56, 56 and 8 pairs, two images; tails of 1
		 * (65 tiles), 4 and 3 (39 tiles, the last
		 * one's columns past the map's) and 2 (98 tiles: two images,
		 * weight zero points, chunks of 28 pairs); extreme products
		 * at a chunk's 2^25 bound (226 channels: chunks of 112,
		 * weight zero points 0; of 56, not 0; and with a tail of 4
		 * and 3), y's scale such that the sums stay inside i8's
		 * range. ResNet-50's 28x28 128 to 128 runs direct, but over
		 * U packed once (qconv_qw4_case(), as every case of this
		 * shape); so do, only so, 7x7 (4 tiles: a tail), 14x14 (one
		 * vector, weight zero points) and 3x5 (two images of 2 tiles,
		 * 9 channels).
		 */
		{ 1, 64, 56, 56, 64, 1, 3, 1, 1, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 0, 1, 1, 0 },
		{ 1, 3, 50, 53, 16, 1, 3, 1, 1, 1, VNPU_DTYPE_I8, VNPU_DTYPE_U8, 1, 1, 0, 0 },
		{ 1, 130, 9, 48, 32, 1, 3, 1, 1, 1, VNPU_DTYPE_I8, VNPU_DTYPE_I8, 1, 0, 1, 0 },
		{ 2, 240, 6, 49, 16, 1, 3, 1, 1, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 0, 1, 0, 0 },
		{ 1, 20, 20, 50, 16, 1, 3, 1, 1, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 0, 1, 0, 0 },
		{ 1, 24, 12, 49, 32, 1, 3, 1, 1, 1, VNPU_DTYPE_U8, VNPU_DTYPE_I8, 0, 0, 1, 0 },
		{ 2, 130, 27, 55, 16, 1, 3, 1, 1, 1, VNPU_DTYPE_I8, VNPU_DTYPE_U8, 1, 1, 1, 0 },
		{ 1, 128, 28, 28, 128, 1, 3, 1, 1, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 0, 1, 1, 0 },
		{ 1, 32, 7, 7, 16, 1, 3, 1, 1, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 0, 1, 1, 0 },
		{ 1, 20, 14, 14, 32, 1, 3, 1, 1, 1, VNPU_DTYPE_I8, VNPU_DTYPE_U8, 1, 1, 0, 0 },
		{ 2, 9, 3, 5, 16, 1, 3, 1, 1, 1, VNPU_DTYPE_U8, VNPU_DTYPE_I8, 0, 0, 1, 0 },
		{ 1, 226, 5, 50, 16, 1, 3, 1, 1, 1, VNPU_DTYPE_U8, VNPU_DTYPE_I8, 0, 1, 0, 0, 0, 0,
		  200.0f, 1 },
		{ 1, 226, 5, 50, 16, 1, 3, 1, 1, 1, VNPU_DTYPE_U8, VNPU_DTYPE_I8, 1, 1, 0, 0, 0, 0,
		  200.0f, 1 },
		{ 1, 226, 9, 49, 16, 1, 3, 1, 1, 1, VNPU_DTYPE_U8, VNPU_DTYPE_I8, 0, 1, 0, 0, 0, 0,
		  200.0f, 1 },
		/*
		 * Stride 2 from X's stride phases (VNNI, 8 input channels a
		 * group or more): odd and even rows and maps, 3x3 of pad 1
		 * and 0 (a phase wider than the output: the tap planes), 1x1,
		 * 5x5 and 7x7 of pads 2 and 3 (phase rows and columns before
		 * the input), i8 inputs, weight zero points, groups of 8,
		 * column blocks inside a row, two images; 7 channels: the
		 * tap planes.
		 */
		{ 1, 16, 13, 19, 20, 1, 3, 2, 1, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 0, 1, 1, 0 },
		{ 1, 16, 13, 19, 20, 1, 3, 2, 0, 1, VNPU_DTYPE_I8, VNPU_DTYPE_U8, 1, 1, 0, 0 },
		{ 2, 24, 14, 15, 17, 1, 3, 2, 1, 1, VNPU_DTYPE_I8, VNPU_DTYPE_I8, 1, 0, 1, 0 },
		{ 1, 32, 11, 9, 12, 1, 1, 2, 0, 1, VNPU_DTYPE_I8, VNPU_DTYPE_U8, 1, 1, 0, 0 },
		{ 1, 12, 17, 23, 14, 1, 5, 2, 2, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 1, 1, 1, 0 },
		{ 1, 8, 21, 18, 9, 1, 7, 2, 3, 1, VNPU_DTYPE_I8, VNPU_DTYPE_U8, 0, 1, 0, 0 },
		{ 1, 16, 12, 13, 16, 2, 3, 2, 1, 1, VNPU_DTYPE_U8, VNPU_DTYPE_I8, 1, 1, 0, 0 },
		{ 1, 160, 27, 29, 24, 1, 3, 2, 1, 1, VNPU_DTYPE_I8, VNPU_DTYPE_U8, 1, 1, 1, 0 },
		{ 1, 7, 13, 19, 20, 1, 3, 2, 1, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 1, 1, 0, 0 },
		/*
		 * 1x1s packed eight steps of depth at a time (qpack_1x1()):
		 * depth 45 (a last run of 4 steps, its last of one depth)
		 * over three groups of 64 positions, the last short; read in
		 * place and from X's stride phases, i8 input.
		 */
		{ 1, 45, 10, 13, 20, 1, 1, 1, 0, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 1, 1, 1, 0 },
		{ 1, 45, 21, 25, 14, 1, 1, 2, 0, 1, VNPU_DTYPE_I8, VNPU_DTYPE_U8, 0, 1, 0, 0 },
		/*
		 * Multipliers of 0.07 to 0.5 (whole VNNI tiles narrowed by
		 * saturating packs: rounded sums far past the bounds, extreme
		 * products, i8 output, ReLU, weight zero points) and of
		 * 80000 to 560000 (sums times them past 32 bits: the clamp
		 * before rounding)
		 */
		{ 1, 64, 8, 9, 24, 1, 1, 1, 0, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 0, 1, 0, 0, 1, 0,
		  0.00112f },
		{ 1, 16, 9, 11, 24, 1, 1, 1, 0, 1, VNPU_DTYPE_I8, VNPU_DTYPE_I8, 1, 1, 1, 0, 0, 0,
		  0.00112f },
		{ 1, 40, 8, 8, 36, 1, 3, 1, 1, 1, VNPU_DTYPE_U8, VNPU_DTYPE_I8, 0, 1, 0, 0, 0, 0,
		  0.00112f },
		{ 1, 16, 9, 11, 24, 1, 1, 1, 0, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 0, 1, 1, 0, 0, 0,
		  1e-9f },
		/*
		 * Whole VNNI tiles with the fused add (rows 12-23 as floats
		 * into the add, saturated by packs) beside a tile of an
		 * infinite and a NaN multiplier (rows 0-11: not a whole
		 * tile's path), u8 and i8
		 */
		{ 1, 16, 8, 9, 24, 1, 1, 1, 0, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 0, 1, 0, 1 },
		{ 1, 24, 8, 8, 36, 1, 3, 1, 1, 1, VNPU_DTYPE_I8, VNPU_DTYPE_I8, 0, 1, 1, 1 },
		/* infinite and NaN multipliers: the bounds, and 0 for NaN */
		{ 1, 20, 6, 9, 14, 1, 3, 1, 1, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 0, 1, 0, 1 },
		{ 1, 8, 6, 9, 8, 8, 3, 1, 1, 1, VNPU_DTYPE_U8, VNPU_DTYPE_I8, 0, 0, 0, 1 },
		/*
		 * The AVX2 tile (16-bit pairs, six rows by 16 positions, depth
		 * in chunks of 128 pairs): extreme products; depths of 261 and
		 * 257 (odd, past a chunk); 17 and 19 rows; groups of 5 in, 7
		 * out.
		 */
		{ 1, 3, 9, 9, 13, 1, 3, 1, 1, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 0, 1, 0, 0, 1 },
		{ 1, 7, 6, 11, 8, 1, 3, 2, 1, 1, VNPU_DTYPE_I8, VNPU_DTYPE_U8, 1, 0, 1, 0, 1 },
		{ 1, 29, 9, 9, 19, 1, 3, 1, 1, 1, VNPU_DTYPE_I8, VNPU_DTYPE_I8, 1, 1, 0, 0 },
		{ 1, 257, 5, 9, 17, 1, 1, 1, 0, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 0, 1, 1, 0 },
		{ 1, 10, 8, 8, 14, 2, 3, 1, 1, 1, VNPU_DTYPE_U8, VNPU_DTYPE_I8, 1, 1, 0, 0 },
		/*
		 * The AVX2 depthwise of eight channels at once (small maps):
		 * 7x7 5x5 and 3x3, 14x14 3x3, 14x14 to 7x7 stride 2, 7x7
		 * windows, 2x2 outputs; channels past the last eight (one at a time); i8
		 * inputs and outputs, weight zero points, extreme products,
		 * infinite and NaN multipliers; two images.
		 */
		{ 1, 16, 7, 7, 16, 16, 5, 1, 2, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 0, 1, 1, 0 },
		{ 1, 19, 7, 7, 19, 19, 3, 1, 1, 1, VNPU_DTYPE_I8, VNPU_DTYPE_I8, 1, 1, 0, 0 },
		{ 2, 24, 14, 14, 24, 24, 3, 1, 1, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 0, 1, 1, 0 },
		{ 1, 16, 14, 14, 16, 16, 5, 2, 2, 1, VNPU_DTYPE_I8, VNPU_DTYPE_U8, 1, 0, 0, 0 },
		{ 1, 8, 9, 11, 8, 8, 3, 2, 0, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 0, 1, 0, 0, 1 },
		{ 1, 9, 7, 7, 9, 9, 5, 1, 2, 1, VNPU_DTYPE_I8, VNPU_DTYPE_U8, 0, 1, 0, 0, 1 },
		{ 1, 8, 6, 6, 8, 8, 3, 1, 1, 1, VNPU_DTYPE_U8, VNPU_DTYPE_I8, 0, 1, 0, 1 },
		{ 1, 11, 5, 8, 11, 11, 7, 1, 3, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 1, 1, 1, 0 },
		{ 1, 8, 4, 4, 8, 8, 3, 2, 1, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 0, 1, 0, 0 },
		/*
		 * The AVX2 tile of u8 x i8 pairs (vpmaddubsw) with the pairs
		 * it leaves out (a large weight every 5th, 7th, 3rd: some
		 * rows past one pair in 16, to the 16-bit tile): 3x3 from
		 * planes, 1x1 in place (depth 257: a last step of one), i8
		 * inputs and weight zero points (the sums of x), 13 and 19
		 * rows, inputs at their top, depth past a chunk of 64 steps,
		 * groups.
		 */
		{ 1, 64, 12, 12, 24, 1, 3, 1, 1, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 0, 1, 1, 0, 0, 7 },
		{ 1, 257, 5, 9, 17, 1, 1, 1, 0, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 0, 1, 0, 0, 0, 5 },
		{ 1, 29, 9, 9, 19, 1, 3, 1, 1, 1, VNPU_DTYPE_I8, VNPU_DTYPE_I8, 1, 1, 0, 0, 0, 7 },
		{ 1, 40, 14, 14, 13, 1, 3, 2, 1, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 1, 0, 1, 0, 1, 7 },
		{ 1, 20, 10, 10, 14, 2, 3, 1, 1, 1, VNPU_DTYPE_I8, VNPU_DTYPE_U8, 0, 1, 0, 0, 0, 3 },
		{ 2, 96, 7, 7, 30, 1, 3, 1, 1, 1, VNPU_DTYPE_U8, VNPU_DTYPE_I8, 0, 1, 1, 0, 0, 11 },
		{ 1, 64, 9, 9, 26, 1, 3, 1, 1, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 0, 1, 0, 0, 1, -1 },
		{ 1, 200, 6, 6, 12, 1, 1, 1, 0, 1, VNPU_DTYPE_I8, VNPU_DTYPE_U8, 1, 0, 0, 0, 1, -1 },
		/*
		 * One output position (eng_qgemv_sums()): squeeze-excite
		 * shapes; depths of 257 and 7 (a tail past the last 16, no
		 * 16 at all), 13 rows (four at a time and one); i8 inputs
		 * and weight zero points (the sum of x); inputs at their top
		 * and extreme weights; infinite and NaN multipliers; groups;
		 * two images.
		 */
		{ 1, 960, 1, 1, 240, 1, 1, 1, 0, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 0, 1, 1, 0 },
		{ 1, 240, 1, 1, 960, 1, 1, 1, 0, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 0, 1, 0, 0 },
		{ 1, 257, 1, 1, 13, 1, 1, 1, 0, 1, VNPU_DTYPE_I8, VNPU_DTYPE_I8, 1, 1, 0, 0 },
		{ 1, 7, 1, 1, 5, 1, 1, 1, 0, 1, VNPU_DTYPE_U8, VNPU_DTYPE_I8, 1, 0, 1, 0 },
		{ 1, 45, 1, 1, 26, 1, 1, 1, 0, 1, VNPU_DTYPE_I8, VNPU_DTYPE_U8, 0, 1, 0, 0, 1 },
		{ 1, 40, 1, 1, 14, 1, 1, 1, 0, 1, VNPU_DTYPE_U8, VNPU_DTYPE_I8, 1, 1, 0, 1 },
		{ 1, 20, 1, 1, 14, 2, 1, 1, 0, 1, VNPU_DTYPE_I8, VNPU_DTYPE_U8, 1, 1, 1, 0 },
		{ 2, 72, 1, 1, 24, 1, 1, 1, 0, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 0, 1, 1, 0, 0, -1 },
		/*
		 * Integer Winograd (qconv_wino_case()): odd maps and channel
		 * counts, pads 0 and 2, i8 inputs, groups, two images, more
		 * than one chunk of channel pairs (65 and 300), a map of
		 * more tile rows than a block, 1x1 and 2x1 maps, NaN
		 * multipliers; the most input channels with every input at
		 * 255 from its zero point and every weight -128 (4 S down to
		 * 2^31 less 4.2 million: the wrapping sums); rows of 1 to 70
		 * bytes (each way qw_stage() copies a row: 23 and 30 in two
		 * 16-byte pieces).
		 */
		{ 1, 65, 9, 13, 26, 1, 3, 1, 1, 1, VNPU_DTYPE_I8, VNPU_DTYPE_U8, 0, 1, 1, 0 },
		{ 1, 24, 5, 23, 10, 1, 3, 1, 1, 1, VNPU_DTYPE_I8, VNPU_DTYPE_U8, 0, 1, 0, 0 },
		{ 1, 6, 4, 30, 8, 1, 3, 1, 2, 1, VNPU_DTYPE_U8, VNPU_DTYPE_I8, 0, 1, 1, 0 },
		{ 2, 20, 6, 7, 18, 2, 3, 1, 2, 1, VNPU_DTYPE_U8, VNPU_DTYPE_I8, 0, 1, 0, 0 },
		{ 1, 17, 8, 5, 11, 1, 3, 1, 0, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 0, 0, 1, 0 },
		{ 1, 130, 11, 10, 14, 1, 3, 1, 1, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 0, 1, 0, 1 },
		{ 1, 64, 70, 9, 12, 1, 3, 1, 1, 1, VNPU_DTYPE_I8, VNPU_DTYPE_I8, 0, 1, 1, 0 },
		{ 1, 9, 1, 1, 5, 1, 3, 1, 1, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 0, 1, 0, 0 },
		{ 1, 9, 2, 1, 5, 1, 3, 1, 1, 1, VNPU_DTYPE_I8, VNPU_DTYPE_U8, 0, 1, 1, 0 },
		{ 1, 1824, 4, 5, 3, 1, 3, 1, 1, 1, VNPU_DTYPE_U8, VNPU_DTYPE_U8, 0, 1, 0, 0, 0, 0,
		  1e-4f, 1 },
		{ 1, 1824, 3, 3, 2, 1, 3, 1, 1, 1, VNPU_DTYPE_I8, VNPU_DTYPE_I8, 0, 0, 1, 0, 0, 0,
		  1e-4f, 1 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		qconv_packed_case(_metadata, &cases[i]);
}

static void test_quant_bad(struct __test_metadata *_metadata)
{
	__u64 dims[2] = { 3, 4 }, four = 4, five = 5;
	struct vnpu_layer_quant at = { 1, 0 };
	struct vnpu_layer_qgemm qg = {};
	struct vnpu_cmd_tensor t[5];

	t[0] = et_dense(VNPU_DTYPE_F32, 2, dims);
	t[1] = et_dense(VNPU_DTYPE_F32, 1, &four);
	t[2] = et_dense(VNPU_DTYPE_U8, 1, &four);
	t[3] = et_dense(VNPU_DTYPE_U8, 2, dims);
	EXPECT_TRUE(!vnpu_eng_layer_check(VNPU_LAYER_QUANTIZE, t, 4, &at, sizeof(at)))
		TH_LOG("quantize: valid layer rejected");
	at.pad = 1;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_QUANTIZE, t, 4, &at, sizeof(at)))
		TH_LOG("quantize: pad accepted");
	at.pad = 0;
	at.axis = 0;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_QUANTIZE, t, 4, &at, sizeof(at)))
		TH_LOG("quantize: per-axis extent of another axis accepted");
	at.axis = 2;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_QUANTIZE, t, 4, &at, sizeof(at)))
		TH_LOG("quantize: axis = rank accepted");
	at.axis = 1;
	t[2].dtype = VNPU_DTYPE_I8;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_QUANTIZE, t, 4, &at, sizeof(at)))
		TH_LOG("quantize: zero point of another type accepted");
	t[2] = scalar(VNPU_DTYPE_U8);
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_QUANTIZE, t, 4, &at, sizeof(at)))
		TH_LOG("quantize: per-axis scale with a per-tensor zero point accepted");
	t[2] = et_dense(VNPU_DTYPE_U8, 1, &four);
	t[3].dtype = VNPU_DTYPE_I32;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_QUANTIZE, t, 4, &at, sizeof(at)))
		TH_LOG("quantize: i32 output accepted");
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_DEQUANTIZE, t, 4, &at, sizeof(at)))
		TH_LOG("dequantize: f32 input accepted");

	t[0] = et_dense(VNPU_DTYPE_U8, 2, dims);
	t[1] = et_dense(VNPU_DTYPE_I8, 2, (__u64[]){ 4, 5 });
	t[2] = scalar(VNPU_DTYPE_U8);
	t[3] = scalar(VNPU_DTYPE_I8);
	t[4] = et_dense(VNPU_DTYPE_I32, 2, (__u64[]){ 3, 5 });
	EXPECT_TRUE(!vnpu_eng_layer_check(VNPU_LAYER_MATMUL_INTEGER, t, 5, &qg, sizeof(qg)))
		TH_LOG("matmulinteger: valid rejected");
	qg.flags = 1;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_MATMUL_INTEGER, t, 5, &qg, sizeof(qg)))
		TH_LOG("matmulinteger: flags accepted");
	qg.flags = 0;
	t[4].dtype = VNPU_DTYPE_I64;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_MATMUL_INTEGER, t, 5, &qg, sizeof(qg)))
		TH_LOG("matmulinteger: i64 output accepted");
	t[4].dtype = VNPU_DTYPE_I32;
	t[3] = et_dense(VNPU_DTYPE_I8, 1, &four);
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_MATMUL_INTEGER, t, 5, &qg, sizeof(qg)))
		TH_LOG("matmulinteger: b zero point of 4 accepted");
	t[3] = et_dense(VNPU_DTYPE_I8, 1, &five);
	EXPECT_TRUE(!vnpu_eng_layer_check(VNPU_LAYER_MATMUL_INTEGER, t, 5, &qg, sizeof(qg)))
		TH_LOG("matmulinteger: per-column rejected");
	t[1].dims[0] = 3;
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_MATMUL_INTEGER, t, 5, &qg, sizeof(qg)))
		TH_LOG("matmulinteger: K mismatch accepted");
}

/* ONNX Runtime's AVX2 QLinearAdd of one element, with libm's fmaf. */
static double qadd_ref(__u32 dt, int32_t a, int32_t b, const float *sc,
		       const int32_t *zp)
{
	float ra = sc[0] / sc[2], rb = sc[1] / sc[2];
	float f = (float)zp[2] - fmaf(ra, (float)zp[0], rb * (float)zp[1]);
	float t = fmaf((float)a, ra, fmaf((float)b, rb, f));
	double lo = dt == VNPU_DTYPE_U8 ? 0 : -128;

	if (isnan(t) || t >= 2147483648.0f || t < -2147483648.0f)
		return lo;
	return nearbyintf(t);
}

/*
 * @dt operands [3, 5, 37] (A read through a transposed view when
 * @strided), scales @sc (a, b, y) and zero points @zp.
 */
static void qadd_case(struct __test_metadata *_metadata, const char *name, __u32 dt,
		      const float *sc,
		      const int32_t *zp, int strided)
{
	__u64 dims[3] = { 3, 5, 37 };
	size_t n = 3 * 5 * 37, i, c[3];
	uint8_t a[555], b[555], y[555], ref[555], zps[3];
	struct vnpu_cmd_tensor t[9];
	void *data[9] = { a, (void *)&sc[0], &zps[0], b, (void *)&sc[1],
			  &zps[1], (void *)&sc[2], &zps[2], y };

	q_fill(dt, a, n);
	q_fill(dt, b, n);
	for (i = 0; i < 3; i++)
		q_put(dt, zps, i, zp[i]);
	t[0] = et_dense(dt, 3, dims);
	if (strided) {	/* A stored [37, 5, 3] */
		t[0].strides[0] = 1;
		t[0].strides[1] = 3;
		t[0].strides[2] = 15;
	}
	t[1] = t[4] = t[6] = scalar(VNPU_DTYPE_F32);
	t[2] = t[5] = t[7] = scalar(dt);
	t[3] = t[8] = et_dense(dt, 3, dims);
	for (i = 0; i < n; i++) {
		et_coords(&t[8], i, c);
		q_put(dt, ref, i, qadd_ref(dt, q_at(dt, a, et_offset(&t[0], c)),
					   q_at(dt, b, i), sc, zp));
	}
	EXPECT_EQ(0, et_layer_exact(name, VNPU_LAYER_QLINEAR_ADD, t, data, 9, NULL, 0, ref));
}

static void test_qadd(struct __test_metadata *_metadata)
{
	static const float usual[3] = { 0.0371f, 0.0213f, 0.0457f };
	/* ra = 0.5 and rb = 1.5: sums land on half steps, rounded to even. */
	static const float halves[3] = { 0.25f, 0.75f, 0.5f };
	/* Sums beyond the 32-bit range, and NaN: the low bound. */
	static const float huge[3] = { 1e30f, 1e-3f, 1e-9f };
	const float nan[3] = { __builtin_nanf(""), 0.1f, 0.1f };
	/* ra = rb = 5e5: inside the AVX2 fast path's bound, every sum clamped. */
	static const float steep[3] = { 0.5f, 0.5f, 1e-6f };
	static const int32_t uz[3] = { 131, 0, 7 }, sz[3] = { -5, 17, 0 };

	qadd_case(_metadata, "qadd u8", VNPU_DTYPE_U8, usual, uz, 0);
	qadd_case(_metadata, "qadd i8", VNPU_DTYPE_I8, usual, sz, 0);
	qadd_case(_metadata, "qadd u8 strided", VNPU_DTYPE_U8, usual, uz, 1);
	qadd_case(_metadata, "qadd halves", VNPU_DTYPE_U8, halves, uz, 0);
	qadd_case(_metadata, "qadd huge", VNPU_DTYPE_I8, huge, sz, 1);
	qadd_case(_metadata, "qadd nan", VNPU_DTYPE_I8, nan, sz, 0);
	/* Dense: the 16-lane rows of AVX-512 on out-of-range sums and NaN. */
	qadd_case(_metadata, "qadd huge dense", VNPU_DTYPE_U8, huge, uz, 0);
	qadd_case(_metadata, "qadd nan u8", VNPU_DTYPE_U8, nan, uz, 0);
	qadd_case(_metadata, "qadd halves i8", VNPU_DTYPE_I8, halves, sz, 0);
	qadd_case(_metadata, "qadd steep", VNPU_DTYPE_U8, steep, uz, 0);
	qadd_case(_metadata, "qadd steep i8", VNPU_DTYPE_I8, steep, sz, 0);
}

static void test_qadd_bad(struct __test_metadata *_metadata)
{
	__u64 dims[2] = { 3, 4 }, four = 4;
	struct vnpu_cmd_tensor t[9];

	t[1] = t[4] = t[6] = scalar(VNPU_DTYPE_F32);
	t[2] = t[5] = t[7] = scalar(VNPU_DTYPE_U8);
	t[0] = t[3] = t[8] = et_dense(VNPU_DTYPE_U8, 2, dims);
	EXPECT_TRUE(!vnpu_eng_layer_check(VNPU_LAYER_QLINEAR_ADD, t, 9, NULL, 0))
		TH_LOG("qadd: valid layer rejected");
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_QLINEAR_ADD, t, 8, NULL, 0))
		TH_LOG("qadd: 8 tensors accepted");
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_QLINEAR_ADD, t, 9, &four, sizeof(four)))
		TH_LOG("qadd: attributes accepted");
#define QADD_BAD(field, value, what)					\
	do {								\
		struct vnpu_cmd_tensor keep = t[field];			\
									\
		value;							\
		EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_QLINEAR_ADD, t, 9,	\
						 NULL, 0))			\
			TH_LOG("qadd: " what);				\
		t[field] = keep;					\
	} while (0)
	QADD_BAD(0, t[0].dtype = VNPU_DTYPE_I8, "A of another type accepted");
	QADD_BAD(3, t[3].dtype = VNPU_DTYPE_F32, "f32 B accepted");
	QADD_BAD(8, t[8].dtype = VNPU_DTYPE_I32, "i32 Y accepted");
	QADD_BAD(3, t[3].dims[1] = 1, "broadcast B accepted");
	QADD_BAD(0, t[0] = et_dense(VNPU_DTYPE_U8, 1, &four), "A of rank 1 accepted");
	QADD_BAD(1, t[1] = et_dense(VNPU_DTYPE_F32, 1, &four), "per-axis a_scale accepted");
	QADD_BAD(5, t[5] = scalar(VNPU_DTYPE_I8), "i8 zero point of u8 B accepted");
	QADD_BAD(6, t[6] = scalar(VNPU_DTYPE_U8), "u8 y_scale accepted");
	QADD_BAD(7, t[7] = et_dense(VNPU_DTYPE_U8, 1, &four), "per-axis y zero point accepted");
	QADD_BAD(8, t[8].strides[0] = 0, "Y writing one element twice accepted");
#undef QADD_BAD
}

TEST(quant)
{
	test_quantize(_metadata);
	test_quantize_long(_metadata);
	test_qmatmul(_metadata);
	test_qconv(_metadata);
	test_qconv_split_layout(_metadata);
	test_qconv_split_k64(_metadata);
	test_qconv_packed(_metadata);
	test_quant_bad(_metadata);
	test_qadd(_metadata);
	test_qadd_bad(_metadata);
}

KSFT_MAIN

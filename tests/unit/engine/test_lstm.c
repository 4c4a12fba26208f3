// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * LSTM against its unrolled form run as layers, as the compiler emits it
 * without the LSTM layer: per step and direction a GEMM of H_prev by the
 * packed panels with XW's rows as the residual, then two CHAIN layers.
 * Y, Y_h and Y_c must match bit for bit on every path the host has, whole
 * and split by direction, with R f32 and as the precision hints pack it
 * (f16; bf16 in depth pairs, also on the AVX512-BF16 path, where the
 * LSTM regroups the panels for its mat-vec); then the check's refusals.
 */
#include "engine_test.h"
#include "ksft_main.h"

struct lstm_case {
	const char *name;
	__u64 seq, dirs, batch, h;
	__u32 f, g, hf;	/* the three functions */
	__u32 rdt;	/* R's dtype; 0: f32 */
};

/* The tensors of one case: XW, R, H0, C0, Y, Y_h, Y_c. */
struct lstm_bufs {
	struct vnpu_cmd_tensor t[7];
	void *data[7];
	__u64 per;	/* elements of one direction's panels */
};

/* @f to f16 or bf16 (@dt), rounded to nearest even. */
static __u16 to_half(float f, __u32 dt)
{
	_Float16 h = (_Float16)f;
	__u32 x;
	__u16 u;

	if (dt == VNPU_DTYPE_F16) {
		memcpy(&u, &h, 2);
		return u;
	}
	memcpy(&x, &f, 4);
	return (__u16)((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

/* R's f32 panels in @dt, in place (into the buffer's front half). */
static void lstm_half(const struct lstm_case *c, struct lstm_bufs *b, __u32 dt)
{
	float *p = b->data[1];
	__u16 *q = b->data[1];
	__u64 i, n = b->per * c->dirs;

	for (i = 0; i < n; i++)
		q[i] = to_half(p[i], dt);
	for (i = 0; dt == VNPU_DTYPE_BF16 && i < c->dirs; i++)
		vnpu_eng_pair_bf16(VNPU_PACK_GEMM_B, 1, c->h, 4 * c->h, q + i * b->per);
	b->t[1].dtype = dt;
}

static struct vnpu_layer_act lstm_act(__u32 func)
{
	return (struct vnpu_layer_act){ .func = func };
}

static struct vnpu_chain_step step_act(__u32 func, __u32 x)
{
	return (struct vnpu_chain_step){ .kind = VNPU_CHAIN_UNARY, .func = func, .a = x };
}

static struct vnpu_chain_step step_bin(__u32 func, __u32 x, __u32 y)
{
	return (struct vnpu_chain_step){ .kind = VNPU_CHAIN_BINARY, .func = func, .a = x,
					 .b = y };
}

/* A [rows, cols] view at @p with row stride @ld. */
static struct vnpu_cmd_tensor view(__u64 rows, __u64 cols, __u64 ld)
{
	__u64 dims[2] = { rows, cols };
	struct vnpu_cmd_tensor t = et_dense(VNPU_DTYPE_F32, 2, dims);

	t.strides[0] = (__s64)ld;
	return t;
}

static int lstm_alloc(const struct lstm_case *c, struct lstm_bufs *b)
{
	__u64 g = 4 * c->h;
	__u64 xw[4] = { c->seq, c->dirs, c->batch, g };
	__u64 y[4] = { c->seq, c->dirs, c->batch, c->h };
	__u64 st[3] = { c->dirs, c->batch, c->h };
	__u64 size, i;
	float *dense;

	b->per = vnpu_eng_packed_size(VNPU_PACK_GEMM_B, 1, c->h, g);
	size = b->per * c->dirs;
	b->t[0] = et_dense(VNPU_DTYPE_F32, 4, xw);
	b->t[1] = et_dense(VNPU_DTYPE_F32, 1, &size);
	b->t[2] = et_dense(VNPU_DTYPE_F32, 3, st);
	b->t[3] = b->t[2];
	b->t[4] = et_dense(VNPU_DTYPE_F32, 4, y);
	b->t[5] = b->t[2];
	b->t[6] = b->t[2];
	for (i = 0; i < 7; i++) {
		b->data[i] = calloc(et_numel(&b->t[i]) + 1, 4);
		if (!b->data[i])
			return -1;
	}
	dense = malloc(c->h * g * 4);
	if (!dense)
		return -1;
	et_fill_f32(b->data[0], et_numel(&b->t[0]));
	et_fill_f32(b->data[2], et_numel(&b->t[2]));
	et_fill_f32(b->data[3], et_numel(&b->t[3]));
	for (i = 0; i < c->dirs; i++) {
		__u64 k;

		/* Weights of a trained cell's scale: sums of a few units. */
		et_fill_f32(dense, c->h * g);
		for (k = 0; k < c->h * g; k++)
			dense[k] /= 4;
		vnpu_eng_pack(VNPU_PACK_GEMM_B, dense, 1, c->h, g,
			      (float *)b->data[1] + i * b->per);
	}
	free(dense);
	if (c->rdt)
		lstm_half(c, b, c->rdt);
	return 0;
}

static void lstm_free(struct lstm_bufs *b)
{
	for (int i = 0; i < 7; i++)
		free(b->data[i]);
}

/* One step of direction @d at time @t as GEMM and two CHAINs, in place. */
static int unrolled_step(const struct lstm_case *c, struct lstm_bufs *b, __u64 d, __u64 t,
			 float *hs, float *cs, float *gates, float *cn, __u32 features)
{
	__u64 h = c->h, g = 4 * h, nb = c->batch;
	struct vnpu_layer_gemm ga = { .flags = VNPU_LAYER_F_PACKED | VNPU_LAYER_F_RESIDUAL,
				      .alpha = et_f32_bits(1.0f), .beta = et_f32_bits(1.0f) };
	struct vnpu_layer_chain cell = { .num_steps = 6 }, out = { .num_steps = 3 };
	struct vnpu_cmd_tensor gt[4], ct[5];
	float *y = (float *)b->data[4] + (t * c->dirs + d) * nb * h;
	void *gd[4], *cd[5];
	int rc;

	gt[0] = view(nb, h, h);
	gt[1] = et_dense(b->t[1].dtype, 1, &b->per);
	gt[2] = view(nb, g, g);
	gt[3] = view(nb, g, g);
	gd[0] = hs;
	gd[1] = (char *)b->data[1] + d * et_bytes(&gt[1]);
	gd[2] = (float *)b->data[0] + (t * c->dirs + d) * nb * g;
	gd[3] = gates;
	rc = et_run(VNPU_LAYER_GEMM, gt, gd, 4, &ga, sizeof(ga), features, 1);
	for (int i = 0; i < 5; i++)
		ct[i] = view(nb, h, i == 1 || i == 4 ? h : g);
	cd[0] = gates + 2 * h;
	cd[1] = cs;
	cd[2] = gates;
	cd[3] = gates + 3 * h;
	cd[4] = cn;
	cell.steps[0] = step_act(c->f, VNPU_CHAIN_IN(0));
	cell.steps[1] = step_bin(VNPU_BIN_MUL, VNPU_CHAIN_STEP(0), VNPU_CHAIN_IN(1));
	cell.steps[2] = step_act(c->f, VNPU_CHAIN_IN(2));
	cell.steps[3] = step_act(c->g, VNPU_CHAIN_IN(3));
	cell.steps[4] = step_bin(VNPU_BIN_MUL, VNPU_CHAIN_STEP(2), VNPU_CHAIN_STEP(3));
	cell.steps[5] = step_bin(VNPU_BIN_ADD, VNPU_CHAIN_STEP(1), VNPU_CHAIN_STEP(4));
	if (!rc)
		rc = et_run(VNPU_LAYER_CHAIN, ct, cd, 5, &cell, sizeof(cell), features, 1);
	ct[1] = view(nb, h, h);
	ct[2] = view(nb, h, h);
	cd[0] = gates + h;
	cd[1] = cn;
	cd[2] = y;
	out.steps[0] = step_act(c->f, VNPU_CHAIN_IN(0));
	out.steps[1] = step_act(c->hf, VNPU_CHAIN_IN(1));
	out.steps[2] = step_bin(VNPU_BIN_MUL, VNPU_CHAIN_STEP(0), VNPU_CHAIN_STEP(1));
	if (!rc)
		rc = et_run(VNPU_LAYER_CHAIN, ct, cd, 3, &out, sizeof(out), features, 1);
	memcpy(hs, y, nb * h * 4);
	memcpy(cs, cn, nb * h * 4);
	return rc;
}

/* Y, Y_h and Y_c of @c the unrolled way into @b's outputs. */
static int unrolled(const struct lstm_case *c, struct lstm_bufs *b, __u32 features)
{
	__u64 h = c->h, nb = c->batch, d, s;
	float *gates = malloc(nb * 4 * h * 4), *cn = malloc(nb * h * 4);
	int rc = gates && cn ? 0 : -1;

	for (d = 0; !rc && d < c->dirs; d++) {
		float *hs = (float *)b->data[5] + d * nb * h, *cs = (float *)b->data[6] + d * nb * h;

		memcpy(hs, (float *)b->data[2] + d * nb * h, nb * h * 4);
		memcpy(cs, (float *)b->data[3] + d * nb * h, nb * h * 4);
		for (s = 0; !rc && s < c->seq; s++)
			rc = unrolled_step(c, b, d, d ? c->seq - 1 - s : s, hs, cs, gates, cn,
					   features);
	}
	free(gates);
	free(cn);
	return rc;
}

static const char *path_name(__u32 f)
{
	return f & VNPU_ENG_F_AVX512_BF16 ? "avx512-bf16" : f & VNPU_ENG_F_AVX512 ?
	       "avx512" : f ? "avx2" : "baseline";
}

static void lstm_case_run(struct __test_metadata *_metadata, const struct lstm_case *c)
{
	const __u32 paths[4] = { 0, VNPU_ENG_F_AVX2_FMA,
				 VNPU_ENG_F_AVX2_FMA | VNPU_ENG_F_AVX512,
				 VNPU_ENG_F_AVX2_FMA | VNPU_ENG_F_AVX512 |
				 VNPU_ENG_F_AVX512_BF16 };
	struct vnpu_layer_lstm a = { .f = lstm_act(c->f), .g = lstm_act(c->g),
				     .h = lstm_act(c->hf) };
	struct lstm_bufs b = { 0 };
	void *want[3] = { 0 };

	if (lstm_alloc(c, &b)) {
		EXPECT_TRUE(false)
			TH_LOG("%s: out of memory", c->name);
		goto out;
	}
	for (int p = 0; p < 4; p++) {
		if ((paths[p] & et_host_features) != paths[p])
			continue;
		EXPECT_TRUE(!unrolled(c, &b, paths[p]))
			TH_LOG("%s: unrolled run failed", c->name);
		for (int i = 0; i < 3; i++) {
			size_t bytes = et_bytes(&b.t[4 + i]);

			free(want[i]);
			want[i] = malloc(bytes);
			if (!want[i]) {
				EXPECT_TRUE(false)
					TH_LOG("%s: out of memory", c->name);
				goto out;
			}
			memcpy(want[i], b.data[4 + i], bytes);
		}
		for (__u32 parts = 1; parts <= 2; parts++) {
			for (int i = 0; i < 3; i++)
				memset(b.data[4 + i], 0x7f, et_bytes(&b.t[4 + i]));
			EXPECT_TRUE(!et_run(VNPU_LAYER_LSTM, b.t, b.data, 7, &a, sizeof(a),
					    paths[p], parts))
				TH_LOG("%s: %s run failed", c->name, path_name(paths[p]));
			for (int i = 0; i < 3; i++) {
				EXPECT_TRUE(!memcmp(want[i], b.data[4 + i], et_bytes(&b.t[4 + i])))
					TH_LOG("%s: %s, %u part(s): output %d differs from the unrolled " "layers'",
					       c->name, path_name(paths[p]), parts, i);
			}
		}
	}
out:
	for (int i = 0; i < 3; i++)
		free(want[i]);
	lstm_free(&b);
}

/* Each field of a valid layer broken in turn. */
static void lstm_check(struct __test_metadata *_metadata)
{
	const struct lstm_case c = { "check", 3, 2, 1, 20, VNPU_ACT_SIGMOID, VNPU_ACT_TANH,
				     VNPU_ACT_TANH };
	struct vnpu_layer_lstm a = { .f = lstm_act(c.f), .g = lstm_act(c.g), .h = lstm_act(c.hf) };
	struct vnpu_layer_lstm bad;
	struct lstm_bufs b = { 0 };
	struct vnpu_cmd_tensor t[7];

	if (lstm_alloc(&c, &b)) {
		EXPECT_TRUE(false)
			TH_LOG("lstm check: out of memory");
		lstm_free(&b);
		return;
	}
	EXPECT_EQ(3, vnpu_eng_layer_outputs(VNPU_LAYER_LSTM))
		TH_LOG("LSTM writes 3 tensors");
	EXPECT_EQ(1, vnpu_eng_layer_outputs(VNPU_LAYER_GEMM))
		TH_LOG("GEMM writes 1 tensor");
	EXPECT_TRUE(!vnpu_eng_layer_check(VNPU_LAYER_LSTM, b.t, 7, &a, sizeof(a)))
		TH_LOG("a valid LSTM layer is refused");
	EXPECT_EQ(2, vnpu_eng_layer_max_parts(VNPU_LAYER_LSTM, b.t, 7, &a, 0))
		TH_LOG("an LSTM splits by direction");
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_LSTM, b.t, 6, &a, sizeof(a)))
		TH_LOG("an LSTM without Y_c is taken");
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_LSTM, b.t, 7, &a, sizeof(a) - 8))
		TH_LOG("a short attribute struct is taken");
#define LSTM_BAD_ATTR(field, value, what) do {					\
	bad = a;								\
	bad.field = value;							\
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_LSTM, b.t, 7, &bad, sizeof(bad)))	\
		TH_LOG("an LSTM with " what " is taken");			\
} while (0)
	LSTM_BAD_ATTR(flags, 1, "flags");
	LSTM_BAD_ATTR(pad, 1, "a non-zero pad");
	LSTM_BAD_ATTR(f.flags, VNPU_ACT_F_MAX, "a bound on f");
	LSTM_BAD_ATTR(h.func, VNPU_ACT_COUNT, "an unknown h");
	LSTM_BAD_ATTR(g.alpha, 0x7fc00000, "a NaN parameter of g");
#undef LSTM_BAD_ATTR
#define LSTM_BAD_TENSOR(i, change, what) do {					\
	memcpy(t, b.t, sizeof(t));						\
	change;									\
	EXPECT_TRUE(vnpu_eng_layer_check(VNPU_LAYER_LSTM, t, 7, &a, sizeof(a)))	\
		TH_LOG("an LSTM with " what " is taken");			\
} while (0)
	LSTM_BAD_TENSOR(0, t[0].dims[3] = 78, "gates not a multiple of 4");
	LSTM_BAD_TENSOR(0, t[0].dims[3] = 0, "no hidden units");
	LSTM_BAD_TENSOR(0, t[0].dtype = VNPU_DTYPE_F16, "an f16 XW");
	LSTM_BAD_TENSOR(1, t[1].dims[0] -= 1, "short panels");
	LSTM_BAD_TENSOR(1, t[1].dtype = VNPU_DTYPE_I8, "i8 panels");
	LSTM_BAD_TENSOR(1, t[1].dims[0] = b.per, "one direction's panels for two");
	LSTM_BAD_TENSOR(2, t[2].dims[1] = 2, "an H0 of another batch");
	LSTM_BAD_TENSOR(3, t[3].strides[2] = 2, "a strided C0");
	LSTM_BAD_TENSOR(4, t[4].dims[0] = 2, "a Y of another length");
	LSTM_BAD_TENSOR(5, t[5].rank = 2, "a Y_h of rank 2");
	LSTM_BAD_TENSOR(6, t[6].strides[0] = 0, "a Y_c of repeated directions");
#undef LSTM_BAD_TENSOR
	lstm_free(&b);
}

TEST(lstm)
{
	static const struct lstm_case cases[] = {
		/* a hidden size off the panels' 16, both directions, a batch */
		{ "bidirectional, batch 2, H 20", 5, 2, 2, 20, VNPU_ACT_SIGMOID, VNPU_ACT_TANH,
		  VNPU_ACT_TANH },
		{ "forward, H 64", 4, 1, 1, 64, VNPU_ACT_SIGMOID, VNPU_ACT_TANH, VNPU_ACT_TANH },
		/* other functions: a float one (exp's), a double one */
		{ "other functions", 3, 2, 1, 24, VNPU_ACT_HARD_SIGMOID, VNPU_ACT_RELU,
		  VNPU_ACT_SOFTSIGN },
		{ "no steps", 0, 2, 1, 16, VNPU_ACT_SIGMOID, VNPU_ACT_TANH, VNPU_ACT_TANH },
		/* R as the hints pack it: odd depth (H 21), two slices (H 400) */
		{ "bf16 R, H 21", 4, 2, 2, 21, VNPU_ACT_SIGMOID, VNPU_ACT_TANH,
		  VNPU_ACT_TANH, VNPU_DTYPE_BF16 },
		{ "bf16 R, H 400", 3, 2, 1, 400, VNPU_ACT_SIGMOID, VNPU_ACT_TANH,
		  VNPU_ACT_TANH, VNPU_DTYPE_BF16 },
		/* groups of 16 interleaved panels: one whole, one and one */
		{ "bf16 R, H 64, batch 2", 3, 2, 2, 64, VNPU_ACT_SIGMOID, VNPU_ACT_TANH,
		  VNPU_ACT_TANH, VNPU_DTYPE_BF16 },
		{ "bf16 R, H 67", 3, 1, 1, 67, VNPU_ACT_SIGMOID, VNPU_ACT_TANH,
		  VNPU_ACT_TANH, VNPU_DTYPE_BF16 },
		{ "f16 R, H 20", 3, 2, 1, 20, VNPU_ACT_SIGMOID, VNPU_ACT_TANH,
		  VNPU_ACT_TANH, VNPU_DTYPE_F16 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		lstm_case_run(_metadata, &cases[i]);
	lstm_check(_metadata);
}

KSFT_MAIN

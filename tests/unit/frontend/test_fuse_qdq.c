// SPDX-License-Identifier: MIT
/*
 * fuse_qdq.c: the QDQ group around a Conv (DequantizeLinear of an 8-bit
 * input, of 8-bit constant weights per tensor or per output channel and of
 * an i32 bias, an optional Relu, one QuantizeLinear) becomes one
 * QLinearConv layer whose output is within one step of y's scale of the
 * unfused f32 program's (the int8 sums are exact, the f32 ones round, so
 * a value near a rounding tie may land on the other side); each group
 * that differs from it is left alone, and malformed quantization
 * parameters are refused with an error, fused or not.
 *
 * The model: x f32 [1, 4, 8, 8] -> QuantizeLinear -> DequantizeLinear ->
 * Conv 4->4 3x3 pad 1 (weights and bias through DequantizeLinear) ->
 * [Relu] -> QuantizeLinear -> DequantizeLinear -> y.
 *
 * The same for the QDQ group around an Add (two DequantizeLinear of one
 * 8-bit type, an optional Relu the saturation does, one QuantizeLinear):
 * one QLinearAdd layer, within one step of the unfused program (ONNX
 * Runtime's f32 arithmetic rounds otherwise near ties).
 *
 * A MaxPool between a DequantizeLinear and a QuantizeLinear of the same
 * parameters runs on the 8-bit tensor, exactly as the unfused program.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <drm/vnpu_cmd.h>
#include <drm/vnpu_layers.h>

#include "fe_test.h"
#include "ksft_main.h"

#define F32 ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT
#define U8 ONNX__TENSOR_PROTO__DATA_TYPE__UINT8
#define I8 ONNX__TENSOR_PROTO__DATA_TYPE__INT8
#define I32 ONNX__TENSOR_PROTO__DATA_TYPE__INT32

#define N_X (1 * 4 * 8 * 8)
#define N_W (4 * 4 * 3 * 3)

static const float y_scale = 0.0625f;

/* How the group differs from the one that fuses. */
struct qdq {
	bool relu;
	bool i8_act;		/* s8 activations (u8 otherwise) */
	int w_scales;		/* 1 (per tensor) or the count per channel */
	int64_t w_axis;		/* W's DequantizeLinear axis */
	bool f32_bias;		/* the bias a plain f32 constant */
	bool conv_out;		/* the Conv's output is a model output too */
	bool no_quantize;	/* the Conv's output is the model's output */
	bool zp_mismatch;	/* x's DequantizeLinear zero point of the other type */
};

static void scalar(struct mb *b, const char *name, int type, int v)
{
	if (type == F32) {
		float f = (float)v / 1000.0f;

		mb_init_raw(b, name, F32, 0, NULL, &f, 4);
	} else {
		int8_t c = (int8_t)v;

		mb_init_raw(b, name, type, 0, NULL, &c, 1);
	}
}

static vnpu_model *qdq_model(const struct qdq *q)
{
	static const int64_t four[1] = { 4 }, wdims[4] = { 4, 4, 3, 3 }, xdims[4] = { 1, 4, 8, 8 };
	int at = q->i8_act ? I8 : U8, other = q->i8_act ? U8 : I8;
	float ws[4] = { 0.01f, 0.02f, 0.005f, 0.0125f }, bs[4];
	int8_t w[N_W], wz[4] = { 0 };
	int32_t bias[4] = { 100, -250, 7, 0 };
	const char *conv_out = q->relu ? "c" : "r";
	struct mb *b = mb_new(13);
	Onnx__NodeProto *n;

	for (int i = 0; i < N_W; i++)
		w[i] = (int8_t)((i * 37) % 255 - 127);
	for (int i = 0; i < 4; i++)
		bs[i] = 0.05f * ws[q->w_scales == 1 ? 0 : i];
	mb_input(b, "x", F32, 4, xdims);
	scalar(b, "xs", F32, 50);
	scalar(b, "xz", at, q->i8_act ? -3 : 128);
	scalar(b, "xz_other", other, 0);
	scalar(b, "ys", F32, (int)(y_scale * 1000));
	scalar(b, "yz", at, q->i8_act ? 0 : 10);
	mb_init_raw(b, "wq", I8, 4, wdims, w, sizeof(w));
	if (q->w_scales == 1) {
		mb_init_raw(b, "ws", F32, 0, NULL, ws, 4);
		mb_init_raw(b, "wz", I8, 0, NULL, wz, 1);
	} else {
		int64_t d[1] = { q->w_scales };

		mb_init_raw(b, "ws", F32, 1, d, ws, 4 * (size_t)q->w_scales);
		mb_init_raw(b, "wz", I8, 1, d, wz, (size_t)q->w_scales);
	}
	mb_init_raw(b, "bq", I32, 1, four, bias, sizeof(bias));
	mb_init_raw(b, "bs", F32, 1, four, bs, sizeof(bs));
	mb_init_f32(b, "bf", 1, four, NULL);

	mb_node(b, "QuantizeLinear", (const char *[]){ "x", "xs", "xz", NULL },
		(const char *[]){ "xq", NULL });
	mb_node(b, "DequantizeLinear",
		(const char *[]){ "xq", "xs", q->zp_mismatch ? "xz_other" : "xz", NULL },
		(const char *[]){ "xd", NULL });
	n = mb_node(b, "DequantizeLinear", (const char *[]){ "wq", "ws", "wz", NULL },
		    (const char *[]){ "wd", NULL });
	mb_attr_int(n, "axis", q->w_axis);
	n = mb_node(b, "DequantizeLinear", (const char *[]){ "bq", "bs", NULL },
		    (const char *[]){ "bd", NULL });
	mb_attr_int(n, "axis", 0);
	n = mb_node(b, "Conv", (const char *[]){ "xd", "wd", q->f32_bias ? "bf" : "bd", NULL },
		    (const char *[]){ conv_out, NULL });
	mb_attr_ints(n, "kernel_shape", 2, (const int64_t[]){ 3, 3 });
	mb_attr_ints(n, "pads", 4, (const int64_t[]){ 1, 1, 1, 1 });
	if (q->relu)
		mb_node(b, "Relu", (const char *[]){ "c", NULL }, (const char *[]){ "r", NULL });
	if (q->no_quantize) {
		mb_output(b, "r");
		return mb_read(b);
	}
	mb_node(b, "QuantizeLinear", (const char *[]){ "r", "ys", "yz", NULL },
		(const char *[]){ "yq", NULL });
	mb_node(b, "DequantizeLinear", (const char *[]){ "yq", "ys", "yz", NULL },
		(const char *[]){ "y", NULL });
	mb_output(b, "y");
	if (q->conv_out)
		mb_output(b, conv_out);
	return mb_read(b);
}

/* Layers of @p whose type names @what. */
static uint32_t layers_named(const struct vnpu_program *p, const char *what)
{
	uint32_t n = 0;

	for (uint32_t l = 0; l < p->num_layers; l++)
		n += strstr(p->layers[l].type, what) != NULL;
	return n;
}

/* Every output of @p (@a) within @step of the unfused program's (@b). */
static void check_within_step(struct __test_metadata *_metadata, const struct vnpu_program *p,
			      const float *a,
			      const float *b, float step)
{
	uint32_t off = 0;

	for (uint32_t i = 0; i < p->outputs[0].size / 4; i++)
		off += !(fabsf(a[i] - b[i]) <= step);
	if (off)
		TH_LOG("  %u outputs more than a step from the unfused ones", off);
	EXPECT_EQ(0, off);
}

/* Free what a fused-against-unfused check made. */
static void free_runs(vnpu_model *m, struct vnpu_program *p, struct vnpu_program *u,
		      float **a, float **b)
{
	for (int i = 0; i < 2; i++) {
		free(a[i]);
		free(b[i]);
	}
	vnpu_program_free(p);
	vnpu_program_free(u);
	vnpu_model_free(m);
}

/*
 * The model of @q fused into @want_type (NULL: no QLinearConv at all),
 * its output y within one step of y's scale of the unfused program's.
 */
static void check_qdq(struct __test_metadata *_metadata, const struct qdq *q, const char *want_type)
{
	static const struct vnpu_compile_options unfused = { .no_fusion = true };
	vnpu_model *m = qdq_model(q);
	float x[N_X], *a[2] = { 0 }, *b[2] = { 0 };
	struct vnpu_program *p, *u;

	EXPECT_NE(NULL, m);
	if (!m)
		return;
	for (int i = 0; i < N_X; i++)
		x[i] = 3.0f * sinf(0.37f * (float)i) + 0.4f * (float)(i % 5);
	p = fe_compile_run(m, NULL, x, a);
	EXPECT_NE(NULL, p);
	u = fe_compile_run(m, &unfused, x, b);
	EXPECT_NE(NULL, u);
	if (p && u) {
		EXPECT_EQ(0, layers_named(u, "QLinearConv"));
		if (want_type) {
			EXPECT_EQ(1, layers_named(p, want_type));
			EXPECT_EQ(1, layers_named(p, "QLinearConv"));
		} else {
			EXPECT_EQ(0, layers_named(p, "QLinearConv"));
		}
		check_within_step(_metadata, p, a[0], b[0], y_scale);
	}
	free_runs(m, p, u, a, b);
}

TEST(qdq_conv_fused)
{
	check_qdq(_metadata, &(struct qdq){ .w_scales = 1 }, "QLinearConv");
	check_qdq(_metadata, &(struct qdq){ .w_scales = 4 }, "QLinearConv");
	check_qdq(_metadata, &(struct qdq){ .w_scales = 4, .relu = true }, "QLinearConv+Relu");
	check_qdq(_metadata, &(struct qdq){ .w_scales = 1, .relu = true, .i8_act = true },
		  "QLinearConv+Relu");
	check_qdq(_metadata, &(struct qdq){ .w_scales = 4, .i8_act = true }, "QLinearConv");
}

TEST(qdq_conv_not_fused)
{
	/* Per-channel scales on the input-channel axis: not ORT's pattern. */
	check_qdq(_metadata, &(struct qdq){ .w_scales = 4, .w_axis = 1 }, NULL);
	/* A float bias, not DequantizeLinear of i32. */
	check_qdq(_metadata, &(struct qdq){ .w_scales = 4, .f32_bias = true }, NULL);
	/* The Conv's (or the Relu's) output read as a model output too. */
	check_qdq(_metadata, &(struct qdq){ .w_scales = 4, .conv_out = true }, NULL);
	check_qdq(_metadata, &(struct qdq){ .w_scales = 4, .relu = true, .conv_out = true }, NULL);
}

/* No QuantizeLinear after the Conv: it stays f32. */
TEST(qdq_conv_unquantized_output)
{
	vnpu_model *m = qdq_model(&(struct qdq){ .w_scales = 4, .no_quantize = true });
	struct vnpu_program *p = NULL;

	EXPECT_NE(NULL, m);
	if (m && !vnpu_compile(m, NULL, &p))
		EXPECT_EQ(0, layers_named(p, "QLinearConv"));
	EXPECT_NE(NULL, p);
	vnpu_program_free(p);
	vnpu_model_free(m);
}

/* Refused when read or compiled, with an error; never fused or run. */
static void refused(struct __test_metadata *_metadata, const struct qdq *q, const char *what)
{
	vnpu_model *m = qdq_model(q);
	struct vnpu_program *p = NULL;
	vnpu_status st;

	if (!m) {
		EXPECT_NE('\0', vnpu_last_error()[0]);
		return;
	}
	st = vnpu_compile(m, NULL, &p);
	EXPECT_NE(VNPU_OK, st)
		TH_LOG("%s compiled", what);
	if (st)
		EXPECT_NE('\0', vnpu_last_error()[0]);
	vnpu_program_free(p);
	vnpu_model_free(m);
}

TEST(qdq_conv_bad_params)
{
	/* Three weight scales for four output channels. */
	refused(_metadata, &(struct qdq){ .w_scales = 3 }, "3 scales for 4 channels");
	/* x's zero point of another type than x. */
	refused(_metadata, &(struct qdq){ .w_scales = 4, .zp_mismatch = true },
		"a u8 x with an i8 zero point");
}

/* How a QDQ Add group differs from the one that fuses. */
struct qadd {
	bool relu;
	bool i8_act;
	int yz;			/* y's zero point */
	bool broadcast;		/* B a [1, 4, 1, 1] constant */
	bool mixed;		/* B i8 where A is u8 */
	bool add_out;		/* the Add's output is a model output too */
};

static vnpu_model *qadd_model(const struct qadd *q)
{
	static const int64_t xdims[4] = { 1, 4, 8, 8 }, cdims[4] = { 1, 4, 1, 1 };
	int at = q->i8_act ? I8 : U8, bt = q->mixed ? I8 : at;
	uint8_t c[4] = { 3, 200, 17, 99 };
	const char *sum = q->relu ? "s" : "r";
	struct mb *b = mb_new(13);

	mb_input(b, "x", F32, 4, xdims);
	scalar(b, "as", F32, 50);
	scalar(b, "az", at, q->i8_act ? -3 : 128);
	scalar(b, "bs", F32, 31);
	scalar(b, "bz", bt, 9);
	scalar(b, "ys", F32, (int)(y_scale * 1000));
	scalar(b, "yz", at, q->yz);
	mb_init_raw(b, "c", bt, 4, cdims, c, sizeof(c));
	mb_node(b, "QuantizeLinear", (const char *[]){ "x", "as", "az", NULL },
		(const char *[]){ "aq", NULL });
	mb_node(b, "DequantizeLinear", (const char *[]){ "aq", "as", "az", NULL },
		(const char *[]){ "a", NULL });
	if (!q->broadcast)
		mb_node(b, "QuantizeLinear", (const char *[]){ "x", "bs", "bz", NULL },
			(const char *[]){ "bq", NULL });
	mb_node(b, "DequantizeLinear",
		(const char *[]){ q->broadcast ? "c" : "bq", "bs", "bz", NULL },
		(const char *[]){ "b", NULL });
	mb_node(b, "Add", (const char *[]){ "a", "b", NULL }, (const char *[]){ sum, NULL });
	if (q->relu)
		mb_node(b, "Relu", (const char *[]){ "s", NULL }, (const char *[]){ "r", NULL });
	mb_node(b, "QuantizeLinear", (const char *[]){ "r", "ys", "yz", NULL },
		(const char *[]){ "yq", NULL });
	mb_node(b, "DequantizeLinear", (const char *[]){ "yq", "ys", "yz", NULL },
		(const char *[]){ "y", NULL });
	mb_output(b, "y");
	if (q->add_out)
		mb_output(b, sum);
	return mb_read(b);
}

/* The Add group of @q fused into one QLinearAdd (@fused) or left f32. */
static void check_qadd(struct __test_metadata *_metadata, const struct qadd *q, bool fused)
{
	static const struct vnpu_compile_options unfused = { .no_fusion = true };
	vnpu_model *m = qadd_model(q);
	float x[N_X], *a[2] = { 0 }, *b[2] = { 0 };
	struct vnpu_program *p, *u;

	EXPECT_NE(NULL, m);
	if (!m)
		return;
	for (int i = 0; i < N_X; i++)
		x[i] = 3.0f * sinf(0.37f * (float)i) + 0.4f * (float)(i % 5);
	p = fe_compile_run(m, NULL, x, a);
	EXPECT_NE(NULL, p);
	u = fe_compile_run(m, &unfused, x, b);
	EXPECT_NE(NULL, u);
	if (p && u) {
		EXPECT_EQ(0, layers_named(u, "QLinearAdd"));
		EXPECT_EQ(fused ? 1 : 0, layers_named(p, "QLinearAdd"));
		EXPECT_EQ(q->relu && !fused ? 1 : 0, layers_named(p, "Relu"));
		check_within_step(_metadata, p, a[0], b[0], y_scale);
	}
	free_runs(m, p, u, a, b);
}

TEST(qdq_add)
{
	check_qadd(_metadata, &(struct qadd){ .yz = 10 }, true);
	check_qadd(_metadata, &(struct qadd){ .i8_act = true, .yz = -20 }, true);
	/* A Relu the saturation does: y's zero point the type's lowest. */
	check_qadd(_metadata, &(struct qadd){ .relu = true, .yz = 0 }, true);
	check_qadd(_metadata, &(struct qadd){ .relu = true, .i8_act = true, .yz = -128 }, true);
	/* A Relu it does not do, a broadcast, mixed types, a shared sum. */
	check_qadd(_metadata, &(struct qadd){ .relu = true, .yz = 10 }, false);
	check_qadd(_metadata, &(struct qadd){ .broadcast = true, .yz = 10 }, false);
	check_qadd(_metadata, &(struct qadd){ .mixed = true, .yz = 10 }, false);
	check_qadd(_metadata, &(struct qadd){ .add_out = true, .yz = 10 }, false);
}

/*
 * x -> QuantizeLinear -> DequantizeLinear -> y, per tensor, of type @type
 * with zero point @zp (none: INT32_MIN): two layers (QUANTIZE and
 * DEQUANTIZE), and y exactly as ONNX defines it, computed here in double:
 * (saturate(rint(x / scale) + zp) - zp) * scale, ties to even.
 */
static void check_qdq_linear(struct __test_metadata *_metadata, int type, int zp)
{
	static const int64_t xdims[4] = { 1, 4, 8, 8 };
	const float scale = 0.125f;
	int lo = type == I8 ? -128 : 0, hi = type == I8 ? 127 : 255, z = zp == INT32_MIN ? 0 : zp;
	float x[N_X], *a[2] = { 0 };
	struct mb *b = mb_new(4);
	struct vnpu_program *p;
	uint32_t bad = 0;
	vnpu_model *m;

	mb_input(b, "x", F32, 4, xdims);
	mb_init_raw(b, "s", F32, 0, NULL, &scale, 4);
	if (zp != INT32_MIN)
		scalar(b, "z", type, zp);
	mb_node(b, "QuantizeLinear", (const char *[]){ "x", "s", zp != INT32_MIN ? "z" : NULL, NULL },
		(const char *[]){ "q", NULL });
	mb_node(b, "DequantizeLinear", (const char *[]){ "q", "s", zp != INT32_MIN ? "z" : NULL, NULL },
		(const char *[]){ "y", NULL });
	mb_output(b, "y");
	m = mb_read(b);
	EXPECT_NE(NULL, m);
	if (!m)
		return;
	/* Ties (k + 0.5 steps), both signs, values past both bounds. */
	for (int i = 0; i < N_X; i++)
		x[i] = (float)(i - 2 * N_X / 3) * scale * 0.5f + (i % 3 ? 0.0f : 9.0f * sinf((float)i));
	x[0] = 1e9f;
	x[1] = -1e9f;
	p = fe_compile_run(m, NULL, x, a);
	EXPECT_NE(NULL, p);
	if (p) {
		EXPECT_EQ(2, p->num_layers);
		for (int i = 0; i < N_X; i++) {
			double q = rint((double)(x[i] / scale)) + z;

			q = q < lo ? lo : q > hi ? hi : q;
			bad += a[0][i] != (float)((q - z) * scale);
		}
		if (bad)
			TH_LOG("  %u outputs differ from ONNX's definition", bad);
		EXPECT_EQ(0, bad);
	}
	free(a[0]);
	free(a[1]);
	vnpu_program_free(p);
	vnpu_model_free(m);
}

TEST(qdq_linear)
{
	check_qdq_linear(_metadata, U8, 10);
	check_qdq_linear(_metadata, U8, INT32_MIN);
	check_qdq_linear(_metadata, I8, -20);
	check_qdq_linear(_metadata, I8, 0);
}

/*
 * x -> QuantizeLinear -> DequantizeLinear -> MaxPool 3x3 stride 2 pad 1 ->
 * QuantizeLinear (y's scale @ys / 1000, zero point @yz) -> DequantizeLinear
 * -> y, of type @type. With y's parameters those of x's DequantizeLinear
 * (@fused) the pool runs on the 8-bit tensor (three layers, y the unfused
 * program's exactly: max commutes with the dequantization, and quantizing
 * back with the same parameters is exact); otherwise it stays f32.
 */
static void check_qmaxpool(struct __test_metadata *_metadata, int type, int ys, int yz,
			   bool fused)
{
	static const struct vnpu_compile_options unfused = { .no_fusion = true };
	static const int64_t xdims[4] = { 1, 4, 8, 8 };
	float x[N_X], *a[2] = { 0 }, *b[2] = { 0 };
	struct mb *mb = mb_new(13);
	struct vnpu_program *p, *u;
	Onnx__NodeProto *n;
	vnpu_model *m;

	mb_input(mb, "x", F32, 4, xdims);
	scalar(mb, "xs", F32, 50);
	scalar(mb, "xz", type, type == I8 ? -3 : 128);
	scalar(mb, "ys", F32, ys);
	scalar(mb, "yz", type, yz);
	mb_node(mb, "QuantizeLinear", (const char *[]){ "x", "xs", "xz", NULL },
		(const char *[]){ "xq", NULL });
	mb_node(mb, "DequantizeLinear", (const char *[]){ "xq", "xs", "xz", NULL },
		(const char *[]){ "xd", NULL });
	n = mb_node(mb, "MaxPool", (const char *[]){ "xd", NULL }, (const char *[]){ "r", NULL });
	mb_attr_ints(n, "kernel_shape", 2, (const int64_t[]){ 3, 3 });
	mb_attr_ints(n, "strides", 2, (const int64_t[]){ 2, 2 });
	mb_attr_ints(n, "pads", 4, (const int64_t[]){ 1, 1, 1, 1 });
	mb_node(mb, "QuantizeLinear", (const char *[]){ "r", "ys", "yz", NULL },
		(const char *[]){ "yq", NULL });
	mb_node(mb, "DequantizeLinear", (const char *[]){ "yq", "ys", "yz", NULL },
		(const char *[]){ "y", NULL });
	mb_output(mb, "y");
	m = mb_read(mb);
	EXPECT_NE(NULL, m);
	if (!m)
		return;
	/* Both signs, past both bounds: windows of the lowest values too. */
	for (int i = 0; i < N_X; i++)
		x[i] = 9.0f * sinf(0.37f * (float)i) - 2.0f * (float)(i % 7);
	p = fe_compile_run(m, NULL, x, a);
	EXPECT_NE(NULL, p);
	u = fe_compile_run(m, &unfused, x, b);
	EXPECT_NE(NULL, u);
	if (p && u) {
		EXPECT_EQ(5, u->num_layers);
		EXPECT_EQ(fused ? 3 : 5, p->num_layers);
		if (fused)
			EXPECT_EQ(0, memcmp(a[0], b[0], p->outputs[0].size));
		check_within_step(_metadata, p, a[0], b[0], (float)ys / 1000.0f);
	}
	free_runs(m, p, u, a, b);
}

TEST(qdq_maxpool)
{
	check_qmaxpool(_metadata, U8, 50, 128, true);
	check_qmaxpool(_metadata, I8, 50, -3, true);
	/* Another scale or zero point: the pair stays. */
	check_qmaxpool(_metadata, U8, 51, 128, false);
	check_qmaxpool(_metadata, I8, 50, -4, false);
}

/* The f32 ops between a DequantizeLinear and a QuantizeLinear. */
enum qtab_mid {
	MID_HSWISH,		/* HardSwish */
	MID_HSIG_MUL,		/* x * HardSigmoid(x) (alpha 1/6): HardSwish */
	MID_RELU_SIGMOID,	/* Sigmoid(Relu(x)): two UNARY layers */
	MID_SCALE_TANH,		/* Tanh(x * 0.5 + 1): one CHAIN */
	MID_CHANNEL_MUL,	/* x * c, c [1, 4, 1, 1]: no table */
};

struct qtab {
	enum qtab_mid mid;
	bool i8_act;
	bool mid_out;		/* the last f32 op's output is a model output too */
	bool per_axis;		/* the QuantizeLinear's scale per channel */
};

static const char *qtab_mid(struct mb *b, const struct qtab *q, const char *x)
{
	Onnx__NodeProto *n;

	switch (q->mid) {
	case MID_HSWISH:
		mb_node(b, "HardSwish", (const char *[]){ x, NULL }, (const char *[]){ "f", NULL });
		break;
	case MID_HSIG_MUL:
		n = mb_node(b, "HardSigmoid", (const char *[]){ x, NULL },
			    (const char *[]){ "h", NULL });
		mb_attr_float(n, "alpha", 1.0f / 6.0f);
		mb_node(b, "Mul", (const char *[]){ x, "h", NULL }, (const char *[]){ "f", NULL });
		break;
	case MID_RELU_SIGMOID:
		mb_node(b, "Relu", (const char *[]){ x, NULL }, (const char *[]){ "r", NULL });
		mb_node(b, "Sigmoid", (const char *[]){ "r", NULL }, (const char *[]){ "f", NULL });
		break;
	case MID_SCALE_TANH:
		scalar(b, "half", F32, 500);
		scalar(b, "one", F32, 1000);
		mb_node(b, "Mul", (const char *[]){ x, "half", NULL }, (const char *[]){ "m", NULL });
		mb_node(b, "Add", (const char *[]){ "m", "one", NULL }, (const char *[]){ "a", NULL });
		mb_node(b, "Tanh", (const char *[]){ "a", NULL }, (const char *[]){ "f", NULL });
		break;
	case MID_CHANNEL_MUL:
		mb_init_f32(b, "c", 4, (const int64_t[]){ 1, 4, 1, 1 }, NULL);
		mb_node(b, "Mul", (const char *[]){ x, "c", NULL }, (const char *[]){ "f", NULL });
		break;
	}
	return "f";
}

/*
 * x -> QuantizeLinear -> DequantizeLinear -> the f32 ops of @q ->
 * QuantizeLinear -> DequantizeLinear -> y, x [1, 4, 8, 8] of 256 values
 * that quantize to every code once.
 */
static vnpu_model *qtab_model(const struct qtab *q)
{
	static const int64_t xdims[4] = { 1, 4, 8, 8 }, four[1] = { 4 };
	static const float ys4[4] = { 0.02f, 0.03f, 0.01f, 0.05f };
	static const uint8_t yz4[4] = { 0 };
	int at = q->i8_act ? I8 : U8;
	struct mb *b = mb_new(14);
	Onnx__NodeProto *n;
	const char *f;

	mb_input(b, "x", F32, 4, xdims);
	scalar(b, "xs", F32, 37);
	scalar(b, "xz", at, q->i8_act ? -9 : 119);
	scalar(b, "ys", F32, 29);
	scalar(b, "yz", at, q->i8_act ? 3 : 40);
	mb_init_raw(b, "ys4", F32, 1, four, ys4, sizeof(ys4));
	mb_init_raw(b, "yz4", at, 1, four, yz4, sizeof(yz4));
	mb_node(b, "QuantizeLinear", (const char *[]){ "x", "xs", "xz", NULL },
		(const char *[]){ "xq", NULL });
	mb_node(b, "DequantizeLinear", (const char *[]){ "xq", "xs", "xz", NULL },
		(const char *[]){ "xd", NULL });
	f = qtab_mid(b, q, "xd");
	n = mb_node(b, "QuantizeLinear",
		    (const char *[]){ f, q->per_axis ? "ys4" : "ys", q->per_axis ? "yz4" : "yz", NULL },
		    (const char *[]){ "yq", NULL });
	mb_attr_int(n, "axis", 1);
	n = mb_node(b, "DequantizeLinear",
		    (const char *[]){ "yq", q->per_axis ? "ys4" : "ys", q->per_axis ? "yz4" : "yz", NULL },
		    (const char *[]){ "y", NULL });
	mb_attr_int(n, "axis", 1);
	mb_output(b, "y");
	if (q->mid_out)
		mb_output(b, f);
	return mb_read(b);
}

/*
 * The group of @q as one LOOKUP layer (@fused) or not: either way y is
 * bit for bit the program's without LOOKUP (a device that lacks it),
 * which runs the group's layers one after the other.
 */
static void check_qtab(struct __test_metadata *_metadata, const struct qtab *q, bool fused)
{
	static const struct vnpu_compile_options no_lookup = {
		.primary_layer_ops = ~(1ull << VNPU_LAYER_LOOKUP),
	};
	vnpu_model *m = qtab_model(q);
	float x[N_X], *a[2] = { 0 }, *b[2] = { 0 };
	int zp = q->i8_act ? -9 : 119, lo = q->i8_act ? -128 : 0;
	struct vnpu_program *p, *u;

	EXPECT_NE(NULL, m);
	if (!m)
		return;
	/* Every code once, scattered: code lo + (i * 37) % 256 at i. */
	for (int i = 0; i < N_X; i++)
		x[i] = (float)(lo + (i * 37) % 256 - zp) * 0.037f;
	p = fe_compile_run(m, NULL, x, a);
	EXPECT_NE(NULL, p);
	u = fe_compile_run(m, &no_lookup, x, b);
	EXPECT_NE(NULL, u);
	if (p && u) {
		EXPECT_EQ(0, layers_named(u, "Lookup"));
		EXPECT_EQ(fused ? 1 : 0, layers_named(p, "Lookup"));
		EXPECT_EQ(fused ? 3 : u->num_layers, p->num_layers);
		EXPECT_EQ(0, memcmp(a[0], b[0], p->outputs[0].size))
			TH_LOG("mid %d i8 %d: y differs from the unfused program's", q->mid,
			       q->i8_act);
	}
	free_runs(m, p, u, a, b);
}

TEST(qdq_table)
{
	for (int i8 = 0; i8 < 2; i8++) {
		check_qtab(_metadata, &(struct qtab){ .mid = MID_HSWISH, .i8_act = i8 }, true);
		check_qtab(_metadata, &(struct qtab){ .mid = MID_HSIG_MUL, .i8_act = i8 }, true);
		check_qtab(_metadata, &(struct qtab){ .mid = MID_RELU_SIGMOID, .i8_act = i8 },
			   true);
		check_qtab(_metadata, &(struct qtab){ .mid = MID_SCALE_TANH, .i8_act = i8 }, true);
	}
}

TEST(qdq_table_not_fused)
{
	/* A product by a tensor, a value read outside, per-channel parameters. */
	check_qtab(_metadata, &(struct qtab){ .mid = MID_CHANNEL_MUL }, false);
	check_qtab(_metadata, &(struct qtab){ .mid = MID_HSWISH, .mid_out = true }, false);
	check_qtab(_metadata, &(struct qtab){ .mid = MID_RELU_SIGMOID, .mid_out = true }, false);
	check_qtab(_metadata, &(struct qtab){ .mid = MID_HSWISH, .per_axis = true }, false);
}

/* How the residual of a QDQ Conv + Add group is read. */
enum qres_case {
	QRES_ALONE,		/* only by the Add */
	QRES_READ_LATER,	/* by a DequantizeLinear after the Add too */
	QRES_IS_X,		/* it is the Conv's own input */
};

/*
 * x -> QuantizeLinear (xq) -> DequantizeLinear -> Conv 4->4 1x1 -> QDQ,
 * plus the residual (x quantized at its own scale, rq; or xq) -> QDQ Add ->
 * QDQ -> y: fuse_qdq.c makes one QLinearConv+QLinearAdd of the group.
 * QRES_READ_LATER also outputs rq dequantized again after the Add (r2).
 */
static vnpu_model *qres_model(enum qres_case rc)
{
	static const int64_t four[1] = { 4 }, wdims[4] = { 4, 4, 1, 1 };
	static const int64_t xdims[4] = { 1, 4, 8, 8 };
	int8_t w[16], wz = 0;
	int32_t bias[4] = { 100, -250, 7, 0 };
	float ws = 0.01f, bs[4] = { 0.0005f, 0.0005f, 0.0005f, 0.0005f };
	struct mb *b = mb_new(13);

	for (int i = 0; i < 16; i++)
		w[i] = (int8_t)((i * 37) % 255 - 127);
	mb_input(b, "x", F32, 4, xdims);
	scalar(b, "xs", F32, 50);
	scalar(b, "xz", U8, 128);
	scalar(b, "rs", F32, 31);
	scalar(b, "rz", U8, 9);
	scalar(b, "ys", F32, (int)(y_scale * 1000));
	scalar(b, "yz", U8, 10);
	scalar(b, "zs", F32, 125);
	scalar(b, "zz", U8, 3);
	mb_init_raw(b, "wq", I8, 4, wdims, w, sizeof(w));
	mb_init_raw(b, "ws", F32, 0, NULL, &ws, 4);
	mb_init_raw(b, "wz", I8, 0, NULL, &wz, 1);
	mb_init_raw(b, "bq", I32, 1, four, bias, sizeof(bias));
	mb_init_raw(b, "bs", F32, 1, four, bs, sizeof(bs));

	mb_node(b, "QuantizeLinear", (const char *[]){ "x", "xs", "xz", NULL },
		(const char *[]){ "xq", NULL });
	mb_node(b, "DequantizeLinear", (const char *[]){ "xq", "xs", "xz", NULL },
		(const char *[]){ "xd", NULL });
	mb_node(b, "QuantizeLinear", (const char *[]){ "x", "rs", "rz", NULL },
		(const char *[]){ "rq", NULL });
	mb_node(b, "DequantizeLinear", (const char *[]){ "rq", "rs", "rz", NULL },
		(const char *[]){ "rd", NULL });
	mb_node(b, "DequantizeLinear", (const char *[]){ "wq", "ws", "wz", NULL },
		(const char *[]){ "wd", NULL });
	mb_attr_int(mb_node(b, "DequantizeLinear", (const char *[]){ "bq", "bs", NULL },
			    (const char *[]){ "bd", NULL }), "axis", 0);
	mb_attr_ints(mb_node(b, "Conv", (const char *[]){ "xd", "wd", "bd", NULL },
			     (const char *[]){ "c", NULL }), "kernel_shape", 2,
		     (const int64_t[]){ 1, 1 });
	mb_node(b, "QuantizeLinear", (const char *[]){ "c", "ys", "yz", NULL },
		(const char *[]){ "cq", NULL });
	mb_node(b, "DequantizeLinear", (const char *[]){ "cq", "ys", "yz", NULL },
		(const char *[]){ "cd", NULL });
	mb_node(b, "Add", (const char *[]){ "cd", rc == QRES_IS_X ? "xd" : "rd", NULL },
		(const char *[]){ "s", NULL });
	mb_node(b, "QuantizeLinear", (const char *[]){ "s", "zs", "zz", NULL },
		(const char *[]){ "sq", NULL });
	mb_node(b, "DequantizeLinear", (const char *[]){ "sq", "zs", "zz", NULL },
		(const char *[]){ "y", NULL });
	mb_output(b, "y");
	if (rc == QRES_READ_LATER) {
		mb_node(b, "DequantizeLinear", (const char *[]){ "rq", "rs", "rz", NULL },
			(const char *[]){ "r2", NULL });
		mb_output(b, "r2");
	}
	return mb_read(b);
}

/*
 * Whether @p's one QLINEAR_CONV (with its residual R fused) writes Y
 * over R; -1 when @p has no such layer.
 */
static int qres_in_place(const struct vnpu_program *p)
{
	int found = -1;

	for (uint32_t g = 0; g < p->num_segments; g++) {
		const uint8_t *c = p->segments[g].cmd, *end = c + p->segments[g].cmd_size;
		struct vnpu_cmd_header h;

		for (; c + sizeof(h) <= end; c += h.size) {
			struct vnpu_cmd_layer l;
			struct vnpu_cmd_tensor r, y;

			memcpy(&h, c, sizeof(h));
			if (h.size < sizeof(h))
				break;
			if (h.opcode != VNPU_CMD_LAYER || h.size < sizeof(l))
				continue;
			memcpy(&l, c, sizeof(l));
			if (l.op != VNPU_LAYER_QLINEAR_CONV || l.num_tensors != 15 ||
			    sizeof(l) + 15 * sizeof(y) > h.size)
				continue;
			memcpy(&r, c + sizeof(l) + 9 * sizeof(r), sizeof(r));
			memcpy(&y, c + sizeof(l) + 14 * sizeof(y), sizeof(y));
			found = r.slot == y.slot && r.offset == y.offset;
		}
	}
	return found;
}

/*
 * The fused residual convolution writes its output over the residual
 * (passes.c) only when nothing reads the residual after it: not when it
 * is read later, nor when it is the convolution's input. Each program
 * validates and runs; y is the same bits in place or not, within a step
 * of the unfused program's, and the residual read later is intact.
 */
TEST(qdq_residual_in_place)
{
	static const struct vnpu_compile_options unfused = { .no_fusion = true };
	static const enum qres_case cases[3] = { QRES_ALONE, QRES_READ_LATER, QRES_IS_X };
	float x[N_X], *a[3][2] = { { 0 } }, *b[2] = { 0 };
	struct vnpu_program *p[3] = { 0 }, *u = NULL;
	vnpu_model *m[3];

	for (int i = 0; i < N_X; i++)
		x[i] = 3.0f * sinf(0.37f * (float)i) + 0.4f * (float)(i % 5);
	for (int k = 0; k < 3; k++) {
		m[k] = qres_model(cases[k]);
		ASSERT_NE(NULL, m[k]);
		p[k] = fe_compile_run(m[k], NULL, x, a[k]);
		ASSERT_NE(NULL, p[k]);
		EXPECT_EQ(1, layers_named(p[k], "QLinearConv+QLinearAdd"));
		EXPECT_EQ(cases[k] == QRES_ALONE ? 1 : 0, qres_in_place(p[k]));
	}
	EXPECT_EQ(0, memcmp(a[0][0], a[1][0], p[0]->outputs[0].size));
	u = fe_compile_run(m[1], &unfused, x, b);
	ASSERT_NE(NULL, u);
	check_within_step(_metadata, p[1], a[1][0], b[0], 0.125f);	/* zs */
	EXPECT_EQ(0, memcmp(a[1][1], b[1], p[1]->outputs[1].size));
	for (int k = 0; k < 3; k++) {
		free(a[k][0]);
		free(a[k][1]);
		vnpu_program_free(p[k]);
		vnpu_model_free(m[k]);
	}
	free(b[0]);
	free(b[1]);
	vnpu_program_free(u);
}

KSFT_MAIN

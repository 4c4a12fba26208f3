// SPDX-License-Identifier: MIT
/*
 * QuantizeLinear and DequantizeLinear of 8-bit data per tensor as one
 * QUANTIZE or DEQUANTIZE layer; per axis, of other types, and
 * DynamicQuantizeLinear as f32 element-wise layers and casts:
 *   quantize    y = cast(clip(round(x / scale) + zero_point, lo, hi))
 *   dequantize  y = (cast(x) - cast(zero_point)) * scale
 *   dynamic     scale = (max(0, max x) - min(0, min x)) / 255,
 *               zero_point = clip(round(-min(0, min x) / scale), 0, 255)
 * A 1-D scale or zero point applies along @axis (per channel).
 *
 * QLinearConv (and the QDQ Conv groups fuse_qdq.c rewrites to it) is one
 * int8 QLINEAR_CONV layer over weights packed here, a QDQ Add group one
 * QLINEAR_ADD. The other integer
 * products (ConvInteger, MatMulInteger, QLinearMatMul) dequantize their
 * operands to f32, run the f32 Conv/Gemm layer and cast (exact while the
 * sums stay below 2^24) or quantize the result.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/vnpu_engine.h"
#include "lower.h"

/* Whether @v is a per-axis vector: 1-D, and not of one element. */
static bool per_axis(const struct cstate *s, int32_t v)
{
	const struct vnpu_tinfo *t = cs_info(s, v);

	return t->rank != 0 && vnpu_tinfo_elems(t) != 1;
}

/* @v (a scalar or a 1-D per-axis vector) viewed to broadcast against a
 * tensor of rank @rank along @axis (in range when @v is per axis). */
static struct ctensor along_axis(const struct cstate *s, int32_t v, int32_t rank, int64_t axis)
{
	const struct vnpu_tinfo *t = cs_info(s, v);
	int64_t dims[VNPU_MAX_RANK];

	if (!per_axis(s, v))
		return ct_shaped(s, v, 0, NULL);
	for (int32_t d = 0; d < rank - axis; d++)
		dims[d] = d ? 1 : t->dims[0];
	return ct_shaped(s, v, rank - (int32_t)axis, dims);
}

static vnpu_status temp_like(struct cstate *s, vnpu_element_type type, int32_t like,
			     struct ctensor *out)
{
	const struct vnpu_tinfo *t = cs_info(s, like);
	int32_t v;
	vnpu_status st = cs_add_temp(s, type, t->rank, t->dims, &v);

	if (!st)
		*out = ct_dense(s, v);
	return st;
}

static vnpu_status cast(struct cstate *s, struct ctensor x, struct ctensor y)
{
	struct ctensor t[2] = { x, y };

	return cl_layer(s, VNPU_LAYER_CAST, t, 2, NULL, 0);
}

/* A f32 copy of @v (a view) in a new temporary of @v's value shape. */
static vnpu_status to_f32(struct cstate *s, struct ctensor v, struct ctensor *out)
{
	int32_t t;
	vnpu_status st;

	if (v.type == VNPU_TYPE_F32) {
		*out = v;
		return VNPU_OK;
	}
	st = cs_add_temp(s, VNPU_TYPE_F32, (int32_t)v.rank, v.dims, &t);
	if (!st)
		*out = ct_dense(s, t);
	return st ? st : cast(s, v, *out);
}

static void range_of(vnpu_element_type type, float *lo, float *hi)
{
	switch (type) {
	case VNPU_TYPE_I8: *lo = -128; *hi = 127; break;
	case VNPU_TYPE_U16: *lo = 0; *hi = 65535; break;
	case VNPU_TYPE_I16: *lo = -32768; *hi = 32767; break;
	default: *lo = 0; *hi = 255; break;	/* u8 */
	}
}

/* y = cast(clip(round(x / scale) + zp, range of y)); all f32 views. */
static vnpu_status quantize(struct cstate *s, struct ctensor x, struct ctensor scale,
			    const struct ctensor *zp, int32_t like, struct ctensor y)
{
	struct vnpu_layer_act round = { .func = VNPU_ACT_ROUND }, clip = { .func = VNPU_ACT_CLIP };
	struct ctensor q, r, c;
	float lo, hi;
	vnpu_status st;

	range_of(y.type, &lo, &hi);
	clip.alpha = f32_bits(lo);
	clip.beta = f32_bits(hi);
	st = temp_like(s, VNPU_TYPE_F32, like, &q);
	if (!st)
		st = cl_binary_t(s, VNPU_BIN_DIV, x, scale, q);
	if (!st)
		st = temp_like(s, VNPU_TYPE_F32, like, &r);
	if (!st)
		st = cl_unary_t(s, &round, q, r);
	if (!st && zp) {
		st = temp_like(s, VNPU_TYPE_F32, like, &q);
		if (!st)
			st = cl_binary_t(s, VNPU_BIN_ADD, r, *zp, q);
		r = q;
	}
	if (!st)
		st = temp_like(s, VNPU_TYPE_F32, like, &c);
	if (!st)
		st = cl_unary_t(s, &clip, r, c);
	return st ? st : cast(s, c, y);
}

static vnpu_status lower_linear(struct cstate *s, struct cop *op, bool dequantize)
{
	const struct vnpu_tinfo xinfo = *cs_info(s, op->in[0]), *xi = &xinfo;
	int64_t axis = vnpu_attr_int(op->node, "axis", 1);
	int32_t zpv = op->num_in > 2 ? op->in[2] : -1;
	struct ctensor x = ct_dense(s, op->in[0]), scale, zp, d;
	vnpu_status st = VNPU_OK;

	axis = axis < 0 ? axis + xi->rank : axis;
	if (cs_info(s, op->in[1])->type != VNPU_TYPE_F32)
		return UNSUP(s, "scale of type %s", vnpu_element_type_str(cs_info(s, op->in[1])->type));
	/* The axis matters only for a per-axis scale or zero point (also one of none). */
	if ((per_axis(s, op->in[1]) || (zpv >= 0 && per_axis(s, zpv))) &&
	    (axis < 0 || axis >= xi->rank))
		return UNSUP(s, "axis out of range");
	scale = along_axis(s, op->in[1], xi->rank, axis);
	if (zpv >= 0)
		st = to_f32(s, along_axis(s, zpv, xi->rank, axis), &zp);
	if (st)
		return st;
	if (!dequantize) {
		st = to_f32(s, x, &x);
		return st ? st : quantize(s, x, scale, zpv >= 0 ? &zp : NULL, op->in[0],
					  ct_dense(s, op->out[0]));
	}
	st = to_f32(s, x, &x);
	if (!st && zpv >= 0) {
		st = temp_like(s, VNPU_TYPE_F32, op->in[0], &d);
		if (!st) {
			st = cl_binary_t(s, VNPU_BIN_SUB, x, zp, d);
			x = d;
		}
	}
	return st ? st : cl_binary_t(s, VNPU_BIN_MUL, x, scale, ct_dense(s, op->out[0]));
}

static vnpu_status lower_dynamic(struct cstate *s, struct cop *op)
{
	const struct vnpu_tinfo xinfo = *cs_info(s, op->in[0]), *xi = &xinfo;
	struct vnpu_layer_reduce rmax = { .func = VNPU_REDUCE_MAX, .axes = (1u << xi->rank) - 1 };
	struct vnpu_layer_reduce rmin = { .func = VNPU_REDUCE_MIN, .axes = rmax.axes };
	struct vnpu_layer_act neg = { .func = VNPU_ACT_NEG }, round = { .func = VNPU_ACT_ROUND };
	struct vnpu_layer_act clip = { .func = VNPU_ACT_CLIP, .alpha = f32_bits(0),
				       .beta = f32_bits(255) };
	int64_t ones[VNPU_MAX_RANK] = { [0 ... VNPU_MAX_RANK - 1] = 1 };
	struct ctensor x = ct_dense(s, op->in[0]), t[2], mx, mn, zero, c255, scale, zpf, a, b;
	int32_t v[8];
	vnpu_status st = VNPU_OK;

	if (xi->type != VNPU_TYPE_F32)
		return UNSUP(s, "input of type %s", vnpu_element_type_str(xi->type));
	for (int i = 0; i < 6 && !st; i++)
		st = cs_add_temp(s, VNPU_TYPE_F32, xi->rank, ones, &v[i]);
	if (!st)
		st = cl_const_scalar(s, VNPU_TYPE_F32, 0, &v[6]);
	if (!st)
		st = cl_const_scalar(s, VNPU_TYPE_F32, 255, &v[7]);
	if (st)
		return st;
	mx = ct_dense(s, v[0]);
	mn = ct_dense(s, v[1]);
	a = ct_dense(s, v[2]);
	b = ct_dense(s, v[3]);
	zpf = ct_dense(s, v[4]);
	scale = op->out[1] >= 0 ? ct_shaped(s, op->out[1], xi->rank, ones) : ct_dense(s, v[5]);
	zero = ct_dense(s, v[6]);
	c255 = ct_dense(s, v[7]);
	t[0] = x;
	t[1] = a;
	st = cl_layer(s, VNPU_LAYER_REDUCE, t, 2, &rmax, sizeof(rmax));
	if (!st)
		st = cl_binary_t(s, VNPU_BIN_MAX, a, zero, mx);
	t[1] = b;
	if (!st)
		st = cl_layer(s, VNPU_LAYER_REDUCE, t, 2, &rmin, sizeof(rmin));
	if (!st)
		st = cl_binary_t(s, VNPU_BIN_MIN, b, zero, mn);
	if (!st)
		st = cl_binary_t(s, VNPU_BIN_SUB, mx, mn, a);
	if (!st)
		st = cl_binary_t(s, VNPU_BIN_DIV, a, c255, scale);
	/* zero point = clip(round(-min / scale)) */
	if (!st)
		st = cl_unary_t(s, &neg, mn, a);
	if (!st)
		st = cl_binary_t(s, VNPU_BIN_DIV, a, scale, b);
	if (!st)
		st = cl_unary_t(s, &round, b, a);
	if (!st)
		st = cl_unary_t(s, &clip, a, zpf);
	if (!st && op->num_out > 2 && op->out[2] >= 0)
		st = cast(s, zpf, ct_shaped(s, op->out[2], xi->rank, ones));
	return st ? st : quantize(s, x, scale, &zpf, op->in[0], ct_dense(s, op->out[0]));
}

/* (f32(v) - f32(zp)) * scale into a new temporary; zp and scale optional
 * (-1), per tensor or per @axis. */
static vnpu_status dequant(struct cstate *s, int32_t v, int32_t zp, int32_t scale, int64_t axis,
			   int32_t *out)
{
	const struct vnpu_tinfo vinfo = *cs_info(s, v), *vi = &vinfo;
	struct ctensor x = ct_dense(s, v), t;
	vnpu_status st = to_f32(s, x, &x);

	if (!st && zp >= 0) {
		struct ctensor z;

		st = to_f32(s, along_axis(s, zp, vi->rank, axis), &z);
		if (!st)
			st = temp_like(s, VNPU_TYPE_F32, v, &t);
		if (!st) {
			st = cl_binary_t(s, VNPU_BIN_SUB, x, z, t);
			x = t;
		}
	}
	if (!st && scale >= 0) {
		st = temp_like(s, VNPU_TYPE_F32, v, &t);
		if (!st) {
			st = cl_binary_t(s, VNPU_BIN_MUL, x, along_axis(s, scale, vi->rank, axis), t);
			x = t;
		}
	}
	if (!st && x.val == v) {	/* already f32 and nothing to do: copy */
		st = temp_like(s, VNPU_TYPE_F32, v, &t);
		if (!st) {
			st = cl_copy(s, t, x);
			x = t;
		}
	}
	*out = x.val;
	return st;
}

static int32_t opt_in(const struct cop *op, uint32_t i)
{
	return i < op->num_in ? op->in[i] : -1;
}

/* ConvInteger, MatMulInteger, QLinearConv, QLinearMatMul. */
static vnpu_status lower_product(struct cstate *s, struct cop *op)
{
	bool qlinear = !strncmp(op->node->op, "QLinear", 7), conv = strstr(op->node->op, "Conv");
	uint32_t wi = qlinear ? 3 : 1;
	int32_t x, w, y, bias = qlinear && conv ? opt_in(op, 8) : -1;
	const struct vnpu_tinfo xinfo = *cs_info(s, op->in[0]), yinfo = *cs_info(s, op->out[0]);
	const struct vnpu_tinfo *xi = &xinfo, *yi = &yinfo;
	int32_t wrank = cs_info(s, op->in[wi])->rank;
	struct ctensor t[4];
	uint32_t n = 0;
	vnpu_status st;

	if (xi->rank < 2 || wrank < 2)
		return UNSUP(s, "operands of rank below 2");
	/* a's zero point is per row (MatMulInteger), w's per output channel. */
	st = dequant(s, op->in[0], opt_in(op, 2), qlinear ? op->in[1] : -1,
		     conv ? 0 : xi->rank - 2, &x);
	if (!st)
		st = dequant(s, op->in[wi], opt_in(op, qlinear ? 5 : 3), qlinear ? op->in[4] : -1,
			     conv ? 0 : wrank - 1, &w);
	if (!st)
		st = cs_add_temp(s, VNPU_TYPE_F32, yi->rank, yi->dims, &y);
	if (st)
		return st;
	t[n++] = ct_dense(s, x);
	t[n++] = ct_dense(s, w);
	if (conv) {
		struct vnpu_layer_conv attr;

		if (bias >= 0) {	/* int32 B at scale x_scale * w_scale */
			int32_t bx, bw;

			st = dequant(s, bias, -1, op->in[1], 0, &bx);
			if (!st)
				st = dequant(s, bx, -1, op->in[4], 0, &bw);
			if (st)
				return st;
			t[n++] = ct_dense(s, bw);
		}
		st = cl_conv_attrs(s, op, x, w, y, &attr);
		if (bias >= 0)
			attr.flags |= VNPU_LAYER_F_BIAS;
		t[n++] = ct_dense(s, y);
		if (!st)
			st = cl_layer(s, VNPU_LAYER_CONV, t, n, &attr, sizeof(attr));
	} else {
		struct vnpu_layer_gemm attr = { .alpha = f32_bits(1.0f), .beta = f32_bits(1.0f) };

		t[n++] = ct_dense(s, y);
		st = cl_layer(s, VNPU_LAYER_GEMM, t, n, &attr, sizeof(attr));
	}
	if (st)
		return st;
	if (!qlinear)
		return cast(s, ct_dense(s, y), ct_dense(s, op->out[0]));
	{
		struct ctensor zp;

		st = to_f32(s, along_axis(s, op->in[7], yi->rank, 1), &zp);
		return st ? st : quantize(s, ct_dense(s, y), along_axis(s, op->in[6], yi->rank, 1),
					  &zp, y, ct_dense(s, op->out[0]));
	}
}

static bool q8_type(vnpu_element_type t)
{
	return t == VNPU_TYPE_U8 || t == VNPU_TYPE_I8;
}

/* A scale or zero point of QLINEAR_CONV: rank 0 or 1, one element or @n. */
static bool qparam_ok(const struct cstate *s, int32_t v, vnpu_element_type type, int64_t n)
{
	const struct vnpu_tinfo *t = cs_info(s, v);
	int64_t e = vnpu_tinfo_elems(t);

	return t->type == type && t->rank <= 1 && (e == 1 || e == n);
}

/* Operand @i of a QLINEAR_CONV: absent zero points are a 0 of @type. */
static vnpu_status qoperand(struct cstate *s, const struct cop *op, uint32_t i,
			    vnpu_element_type type, int32_t *out)
{
	*out = opt_in(op, i);
	return *out >= 0 ? VNPU_OK : cl_const_scalar(s, type, 0, out);
}

/*
 * Constant weights as %VNPU_PACK_QCONV_W, or %VNPU_PACK_QCONV_SPLIT or
 * %VNPU_PACK_QW4_W (its U of constant zero points) when @layout says so
 * (i8; u8 ones and their zero point moved down by 128, which keeps every
 * w - w_zero_point), in @packed and @zp.
 */
static vnpu_status pack_qconv(struct cstate *s, int32_t w, int32_t *zp, int64_t group,
			      uint32_t layout, int32_t *packed)
{
	const struct vnpu_tinfo winfo = *cs_info(s, w), *wi = &winfo;
	const struct vnpu_tinfo zinfo = *cs_info(s, *zp), *zi = &zinfo;
	uint64_t rows = (uint64_t)(wi->dims[0] / group);
	uint64_t cols = (uint64_t)(vnpu_tinfo_elems(wi) / wi->dims[0]);
	uint64_t size = vnpu_eng_packed_size(layout, (uint64_t)group, rows, cols);
	int64_t n = vnpu_tinfo_elems(wi), nz = vnpu_tinfo_elems(zi);
	const uint8_t *w8 = wi->data;
	bool u8 = wi->type == VNPU_TYPE_U8;
	int8_t *src = NULL, *buf, *zq = NULL;
	vnpu_status st;

	if (!size)
		return UNSUP(s, "weights too large to pack");
	if (layout == VNPU_PACK_QW4_W) {
		if (!zi->data || (nz != 1 && (uint64_t)nz != rows))
			return UNSUP(s, "F(4x4) weights with a computed zero point");
		zq = malloc((size_t)nz + 1);
		if (!zq)
			return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory packing weights");
		for (int64_t i = 0; i < nz; i++)
			zq[i] = (int8_t)(((const uint8_t *)zi->data)[i] - (u8 ? 128 : 0));
	}
	/* Packed where the program keeps its weights: no copy at placement. */
	buf = cs_weights_alloc(s, size);
	/* i8 weights pack as they are; u8 ones moved down by 128 first. */
	if (u8)
		src = malloc((size_t)n + 1);
	if (!buf || (u8 && !src)) {
		free(src);
		free(zq);
		cs_weights_free(s, buf);
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory packing weights");
	}
	for (int64_t i = 0; u8 && i < n; i++)
		src[i] = (int8_t)(w8[i] - 128);
	if (zq)
		vnpu_eng_qw4_pack(u8 ? src : wi->data, zq, (uint64_t)nz, rows, cols, buf);
	else
		vnpu_eng_pack(layout, u8 ? (const void *)src : wi->data, (uint64_t)group, rows,
			      cols, buf);
	free(src);
	free(zq);
	st = cs_add_const(s, VNPU_TYPE_I8, 1, (const int64_t[]){ (int64_t)size }, buf, packed);
	if (st || wi->type == VNPU_TYPE_I8)
		return st;
	if (!zi->data)
		return UNSUP(s, "u8 weights with a computed zero point");
	src = malloc((size_t)nz + 1);
	if (!src)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory packing weights");
	for (int64_t i = 0; i < nz; i++)
		src[i] = (int8_t)(((const uint8_t *)zi->data)[i] - 128);
	return cs_add_const(s, VNPU_TYPE_I8, zi->rank, zi->dims, src, zp);
}

/*
 * X @x and Y @y of a QLinearConv as the engine's pay rules take them (u8,
 * dense rows), in @tx and @ty; false unless both are of rank 4.
 */
static bool qconv_maps(const struct cstate *s, int32_t x, int32_t y,
		       struct vnpu_cmd_tensor *tx, struct vnpu_cmd_tensor *ty)
{
	const struct vnpu_tinfo *xi = cs_info(s, x), *yi = cs_info(s, y);

	if (xi->rank != 4 || yi->rank != 4)
		return false;
	*tx = (struct vnpu_cmd_tensor){ .dtype = VNPU_DTYPE_U8, .rank = 4 };
	*ty = *tx;
	for (uint32_t d = 0; d < 4; d++) {
		tx->dims[d] = (uint64_t)xi->dims[d];
		ty->dims[d] = (uint64_t)yi->dims[d];
	}
	tx->strides[3] = 1;
	return true;
}

/*
 * Whether QLinearConv @attr of @x by constant weights @w (zero points
 * @wz) into @y runs as integer Winograd F(2x2, 3x3) (%VNPU_LAYER_F_QWINO
 * over %VNPU_PACK_QWINO_W): i8 weights whose zero points are all 0 (the
 * engine counts them so), where the engine says it pays on this host
 * (vnpu_eng_qwino_pays()).
 */
static bool qconv_wino(const struct cstate *s, const struct vnpu_layer_conv *attr,
		       int32_t x, int32_t w, int32_t wz, int32_t y)
{
	const struct vnpu_tinfo *zi = cs_info(s, wz);
	struct vnpu_cmd_tensor tx, ty;

	if (cs_info(s, w)->type != VNPU_TYPE_I8 || zi->type != VNPU_TYPE_I8 || !zi->data ||
	    !qconv_maps(s, x, y, &tx, &ty))
		return false;
	for (int64_t i = 0; i < vnpu_tinfo_elems(zi); i++)
		if (((const int8_t *)zi->data)[i])
			return false;
	return vnpu_eng_qwino_pays(attr, &tx, &ty);
}

/*
 * Whether QLinearConv @attr of @x by constant weights (of constant zero
 * points @wz) into @y runs as integer Winograd F(4x4, 3x3) over U packed
 * once (%VNPU_LAYER_F_QW4 over %VNPU_PACK_QW4_W): where the engine says it
 * pays on this host (vnpu_eng_qw4_pays(): elsewhere U would only grow the
 * program).
 */
static bool qconv_qw4(const struct cstate *s, const struct vnpu_layer_conv *attr,
		      int32_t x, int32_t wz, int32_t y)
{
	struct vnpu_cmd_tensor tx, ty;

	return cs_info(s, wz)->data && qconv_maps(s, x, y, &tx, &ty) &&
	       vnpu_eng_qw4_pays(attr, &tx, &ty);
}

/*
 * QLinearConv, and a QDQ Conv group fuse_qdq.c rewrote (op->qlinear: the
 * same operands, a fused Relu): one QLINEAR_CONV, over packed weights
 * when they are constant.
 */
static vnpu_status lower_qconv(struct cstate *s, struct cop *op)
{
	const struct vnpu_tinfo *xi = cs_info(s, op->in[0]), *wi = cs_info(s, op->in[3]);
	vnpu_element_type yt = cs_info(s, op->out[0])->type;
	int32_t v[14], bias = opt_in(op, 8);
	int64_t m = wi->dims[0];
	struct vnpu_layer_conv attr;
	struct ctensor t[15];
	bool res = op->num_in == 14;
	uint32_t n = 0;
	vnpu_status st;

	if (!q8_type(xi->type) || !q8_type(wi->type) || !q8_type(yt) || wi->rank < 3)
		return UNSUP(s, "QLinearConv of %s x %s -> %s", vnpu_element_type_str(xi->type),
			     vnpu_element_type_str(wi->type), vnpu_element_type_str(yt));
	st = cl_conv_attrs(s, op, op->in[0], op->in[3], op->out[0], &attr);
	for (uint32_t i = 0; !st && i < 8; i++)
		st = qoperand(s, op, i, i == 2 ? xi->type : i == 5 ? wi->type : yt, &v[i]);
	if (st)
		return st;
	if (!qparam_ok(s, v[1], VNPU_TYPE_F32, 1) || !qparam_ok(s, v[2], xi->type, 1) ||
	    !qparam_ok(s, v[4], VNPU_TYPE_F32, m) || !qparam_ok(s, v[5], wi->type, m) ||
	    !qparam_ok(s, v[6], VNPU_TYPE_F32, 1) || !qparam_ok(s, v[7], yt, 1) ||
	    (bias >= 0 && (cs_info(s, bias)->type != VNPU_TYPE_I32 ||
			   vnpu_tinfo_elems(cs_info(s, bias)) != m)))
		return UNSUP(s, "QLinearConv's scales, zero points or bias");
	if (cs_is_const(s, v[3]) && !s->opt.no_packing) {
		/*
		 * Without VNNI the engine sums pairs of u8 x i8 products in
		 * 16 bits: the pairs that could saturate are listed apart
		 * here once, not at every inference (the depthwise paths and
		 * the GEMV of one output position read the rows whole). A
		 * VNNI host keeps W whole.
		 */
		const struct vnpu_tinfo *yi = cs_info(s, op->out[0]);
		bool split = !(vnpu_eng_host_features() & VNPU_ENG_F_VNNI) &&
			     !(attr.group == xi->dims[1] && attr.group == m) &&
			     vnpu_tinfo_elems(yi) != yi->dims[0] * m;
		bool wino = qconv_wino(s, &attr, op->in[0], v[3], v[5], op->out[0]);
		bool qw4 = !wino && !split && !res &&
			   qconv_qw4(s, &attr, op->in[0], v[5], op->out[0]);
		uint32_t layout = wino ? VNPU_PACK_QWINO_W :
				  split ? VNPU_PACK_QCONV_SPLIT :
				  qw4 ? VNPU_PACK_QW4_W : VNPU_PACK_QCONV_W;

		st = pack_qconv(s, v[3], &v[5], attr.group, layout, &v[3]);
		if (st)
			return st;
		attr.flags |= wino ? VNPU_LAYER_F_QWINO :
			      VNPU_LAYER_F_PACKED | (split ? VNPU_LAYER_F_SPLIT8 : 0) |
			      (qw4 ? VNPU_LAYER_F_QW4 : 0);
	} else if (attr.act.func) {
		return UNSUP(s, "a fused Relu over weights computed at run time");
	}
	for (uint32_t i = 0; i < 8; i++)
		t[n++] = ct_dense(s, v[i]);
	if (bias >= 0) {
		attr.flags |= VNPU_LAYER_F_BIAS;
		t[n++] = ct_shaped(s, bias, 1, &m);
	}
	/* A fused QLinearAdd (fuse_qdq.c): the residual and its parameters. */
	if (res) {
		if (!(attr.flags & (VNPU_LAYER_F_PACKED | VNPU_LAYER_F_QWINO)))
			return UNSUP(s, "a fused QLinearAdd over weights computed at run time");
		for (uint32_t i = 9; !st && i < 14; i++) {
			vnpu_element_type want = i == 10 || i == 12 ? VNPU_TYPE_F32 : yt;

			st = qoperand(s, op, i, want, &v[i]);
			if (!st && (cs_info(s, v[i])->type != want ||
				    (i > 9 && !qparam_ok(s, v[i], want, 1))))
				st = UNSUP(s, "the fused QLinearAdd's operand %u", i - 9);
			if (!st)
				t[n++] = ct_dense(s, v[i]);
		}
		if (st)
			return st;
		attr.flags |= VNPU_LAYER_F_RESIDUAL | (op->qres_first ? VNPU_LAYER_F_RES_FIRST : 0);
	}
	t[n++] = ct_dense(s, op->out[0]);
	return cl_layer(s, VNPU_LAYER_QLINEAR_CONV, t, n, &attr, sizeof(attr));
}

/*
 * A QDQ Add group fuse_qdq.c rewrote (op->qlinear, QLinearAdd's operands):
 * one QLINEAR_ADD.
 */
static vnpu_status lower_qadd(struct cstate *s, struct cop *op)
{
	vnpu_element_type q = cs_info(s, op->out[0])->type;
	struct ctensor t[9];
	int32_t v;
	vnpu_status st = VNPU_OK;

	for (uint32_t i = 0; !st && i < 8; i++) {
		bool data = i == 0 || i == 3, scale = i == 1 || i == 4 || i == 6;
		vnpu_element_type want = scale ? VNPU_TYPE_F32 : q;

		st = qoperand(s, op, i, want, &v);
		if (!st && (cs_info(s, v)->type != want || (!data && !qparam_ok(s, v, want, 1))))
			st = UNSUP(s, "QLinearAdd's operand %u", i);
		if (!st)
			t[i] = ct_dense(s, v);
	}
	t[8] = ct_dense(s, op->out[0]);
	return st ? st : cl_layer(s, VNPU_LAYER_QLINEAR_ADD, t, 9, NULL, 0);
}

/*
 * A per-tensor QuantizeLinear or DequantizeLinear of 8-bit data: one
 * QUANTIZE or DEQUANTIZE layer (the engine's vector loop) instead of
 * lower_linear()'s f32 layers, with their arithmetic: x / scale in f32
 * rounded half to even, plus the zero point, saturated; (x - zero
 * point) * scale in f32. Sets *@done when it took @op.
 */
static vnpu_status lower_linear_q8(struct cstate *s, struct cop *op, bool dequantize,
				   bool *done)
{
	int32_t q = dequantize ? op->in[0] : op->out[0];
	int32_t f = dequantize ? op->out[0] : op->in[0], zp = opt_in(op, 2);
	vnpu_element_type qt = cs_info(s, q)->type;
	struct vnpu_layer_quant attr = { 0 };
	struct ctensor t[4];
	vnpu_status st;

	*done = false;
	if (!q8_type(qt) || cs_info(s, f)->type != VNPU_TYPE_F32 ||
	    !qparam_ok(s, op->in[1], VNPU_TYPE_F32, 1) ||
	    (zp >= 0 && !qparam_ok(s, zp, qt, 1)))
		return VNPU_OK;
	st = qoperand(s, op, 2, qt, &zp);
	if (st)
		return st;
	t[0] = ct_dense(s, op->in[0]);
	t[1] = ct_dense(s, op->in[1]);
	t[2] = ct_dense(s, zp);
	t[3] = ct_dense(s, op->out[0]);
	*done = true;
	return cl_layer(s, dequantize ? VNPU_LAYER_DEQUANTIZE : VNPU_LAYER_QUANTIZE, t, 4,
			&attr, sizeof(attr));
}

/*
 * A QDQ table group fuse_qdq.c rewrote (op->qlinear on its QuantizeLinear:
 * the 8-bit input and the table): one LOOKUP.
 */
static vnpu_status lower_lookup(struct cstate *s, struct cop *op)
{
	struct vnpu_layer_lookup attr = { 0 };
	struct ctensor t[3] = { ct_dense(s, op->in[0]), ct_dense(s, op->in[1]),
				ct_dense(s, op->out[0]) };

	return cl_layer(s, VNPU_LAYER_LOOKUP, t, 3, &attr, sizeof(attr));
}

vnpu_status cl_lower_quantize(struct cstate *s, struct cop *op)
{
	bool dequantize = !strcmp(op->node->op, "DequantizeLinear"), done;
	vnpu_status st;

	if (op->qlinear && !strcmp(op->node->op, "QuantizeLinear"))
		return lower_lookup(s, op);
	if (op->qlinear && !strcmp(op->node->op, "Add"))
		return lower_qadd(s, op);
	if (op->qlinear || !strcmp(op->node->op, "QLinearConv"))
		return lower_qconv(s, op);
	if (!strcmp(op->node->op, "DynamicQuantizeLinear"))
		return lower_dynamic(s, op);
	if (strstr(op->node->op, "Conv") || strstr(op->node->op, "MatMul"))
		return lower_product(s, op);
	st = lower_linear_q8(s, op, dequantize, &done);
	if (st || done)
		return st;
	return lower_linear(s, op, dequantize);
}

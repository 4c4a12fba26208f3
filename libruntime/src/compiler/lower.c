// SPDX-License-Identifier: MIT
/*
 * Lowering: each op of the working graph to device commands. NN ops map to
 * VNPU_CMD_LAYER (vnpu_layers.h); data movement (transpose, slice, concat,
 * split, tile, expand, depth/space rearrangements, copies into outputs) to
 * strided VNPU_CMD_COPYs; constants to VNPU_CMD_FILL. This file has the
 * command helpers, the element-wise ops, the dispatch and the checks of
 * what an op lowered to; lower_nn.c and lower_data.c the rest.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/vnpu_engine.h"
#include "lower.h"




vnpu_status cl_layer(struct cstate *s, uint32_t lop, const struct ctensor *t, uint32_t n,
			 const void *attrs, uint32_t attr_size)
{
	struct ccmd *c;

	/* A layer's one output is its last tensor: when it has no elements,
	 * there is nothing to compute (and nothing the engine must take). */
	for (uint32_t d = 0; n && d < t[n - 1].rank; d++)
		if (!t[n - 1].dims[d])
			return VNPU_OK;
	c = cs_add_cmd(s, VNPU_CMD_LAYER, n);
	if (!c)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	c->layer = lop;
	memcpy(cs_cmd_tensors(s, c), t, n * sizeof(*t));
	c->attr_size = attr_size;
	if (attr_size)
		memcpy(c->attrs, attrs, attr_size);
	return VNPU_OK;
}

/* Whether @a and @b are the same elements in the same storage (a
 * Concat's input computed in place, passes.c). */
static bool same_place(const struct cstate *s, const struct ctensor *a, const struct ctensor *b)
{
	uint64_t a_at, b_at;
	int64_t esize = (int64_t)vnpu_element_type_size(a->type);

	if (a->type != b->type || a->rank != b->rank ||
	    cs_storage(s, a->val, &a_at) != cs_storage(s, b->val, &b_at) ||
	    (int64_t)a_at + a->off * esize != (int64_t)b_at + b->off * esize)
		return false;
	for (uint32_t d = 0; d < a->rank; d++)
		if (a->dims[d] != b->dims[d] || (a->dims[d] > 1 && a->strides[d] != b->strides[d]))
			return false;
	return true;
}

vnpu_status cl_copy(struct cstate *s, struct ctensor dst, struct ctensor src)
{
	struct ccmd *c;

	for (uint32_t d = 0; d < dst.rank; d++)
		if (!dst.dims[d])
			return VNPU_OK;	/* nothing to copy */
	if (same_place(s, &dst, &src))
		return VNPU_OK;
	c = cs_add_cmd(s, VNPU_CMD_COPY, 2);
	if (!c)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	cs_cmd_tensors(s, c)[0] = dst;
	cs_cmd_tensors(s, c)[1] = src;
	return VNPU_OK;
}

vnpu_status cl_fill(struct cstate *s, struct ctensor dst, uint64_t value)
{
	struct ccmd *c = cs_add_cmd(s, VNPU_CMD_FILL, 1);

	if (!c)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	cs_cmd_tensors(s, c)[0] = dst;
	c->fill_value = value;
	return VNPU_OK;
}



/* Read a constant int list (attribute or input); -1 when not constant. */
int32_t cl_const_ints(const struct cstate *s, const struct cop *op, const char *attr,
			  uint32_t idx, int64_t *vals, int32_t max, bool *present)
{
	const struct vnpu_attr *a = vnpu_node_attr(N(op), attr);
	int64_t n;

	if (a && a->type == VNPU_ATTR_INTS) {
		*present = true;
		if (a->n > (size_t)max)
			return -1;
		memcpy(vals, a->ints, a->n * sizeof(int64_t));
		return (int32_t)a->n;
	}
	*present = IN(op, idx) >= 0;
	if (!*present)
		return 0;
	if (!cs_is_const(s, IN(op, idx)))
		return -1;
	n = vnpu_tinfo_elems(INFO(s, IN(op, idx)));
	if (n > max)
		return -1;
	for (int64_t i = 0; i < n; i++)
		vals[i] = vnpu_elem_get_i(INFO(s, IN(op, idx))->data, INFO(s, IN(op, idx))->type, i);
	return (int32_t)n;
}

/* A new constant scalar of @type holding @v (an integer type: @i). */
static vnpu_status const_scalar(struct cstate *s, vnpu_element_type type, double v, int64_t i,
				int32_t *out)
{
	void *data = calloc(1, 8);

	if (!data)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	if (vnpu_type_is_float(type))
		vnpu_elem_set_f(data, type, 0, v);
	else
		vnpu_elem_set_i(data, type, 0, i);
	return cs_add_const(s, type, 0, NULL, data, out);
}

vnpu_status cl_const_scalar(struct cstate *s, vnpu_element_type type, double v, int32_t *out)
{
	/* saturated: a double past the int64 range has no integer to convert to */
	int64_t i = v >= 0x1p63 ? INT64_MAX : v < -0x1p63 ? INT64_MIN : v == v ? (int64_t)v : 0;

	return const_scalar(s, type, v, i, out);
}

vnpu_status cl_const_int(struct cstate *s, vnpu_element_type type, int64_t v, int32_t *out)
{
	return const_scalar(s, type, (double)v, v, out);
}

/* @v as a constant of @type (a converted copy when the type differs). */
static vnpu_status const_as(struct cstate *s, int32_t v, vnpu_element_type type, int32_t *out)
{
	const struct vnpu_tinfo tinfo = *INFO(s, v), *t = &tinfo;
	int64_t n = vnpu_tinfo_elems(t);
	void *data;

	if (t->type == type) {
		*out = v;
		return VNPU_OK;
	}
	data = calloc(1, (size_t)(n ? n : 1) * vnpu_element_type_size(type));
	if (!data)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	for (int64_t i = 0; i < n; i++) {
		if (vnpu_type_is_float(type) || vnpu_type_is_float(t->type))
			vnpu_elem_set_f(data, type, i, vnpu_elem_get_f(t->data, t->type, i));
		else
			vnpu_elem_set_i(data, type, i, vnpu_elem_get_i(t->data, t->type, i));
	}
	return cs_add_const(s, type, t->rank, t->dims, data, out);
}

/* ---- element-wise ---- */

struct act_map {
	const char *op;
	uint32_t func;
	const char *alpha_name;
	float alpha;
	const char *beta_name;
	float beta;
};

static const struct act_map act_maps[] = {
	{ "Relu", VNPU_ACT_RELU, NULL, 0, NULL, 0 },
	{ "LeakyRelu", VNPU_ACT_LEAKY_RELU, "alpha", 0.01f, NULL, 0 },
	{ "Elu", VNPU_ACT_ELU, "alpha", 1.0f, NULL, 0 },
	{ "Selu", VNPU_ACT_SELU, "alpha", 1.67326319217681884765625f, "gamma",
	  1.05070102214813232421875f },
	{ "Celu", VNPU_ACT_CELU, "alpha", 1.0f, NULL, 0 },
	{ "Sigmoid", VNPU_ACT_SIGMOID, NULL, 0, NULL, 0 },
	{ "HardSigmoid", VNPU_ACT_HARD_SIGMOID, "alpha", 0.2f, "beta", 0.5f },
	{ "HardSwish", VNPU_ACT_HARD_SWISH, NULL, 0, NULL, 0 },
	{ "Tanh", VNPU_ACT_TANH, NULL, 0, NULL, 0 },
	{ "Erf", VNPU_ACT_ERF, NULL, 0, NULL, 0 },
	{ "Exp", VNPU_ACT_EXP, NULL, 0, NULL, 0 },
	{ "Log", VNPU_ACT_LOG, NULL, 0, NULL, 0 },
	{ "Sqrt", VNPU_ACT_SQRT, NULL, 0, NULL, 0 },
	{ "Reciprocal", VNPU_ACT_RECIPROCAL, NULL, 0, NULL, 0 },
	{ "Abs", VNPU_ACT_ABS, NULL, 0, NULL, 0 },
	{ "Neg", VNPU_ACT_NEG, NULL, 0, NULL, 0 },
	{ "Floor", VNPU_ACT_FLOOR, NULL, 0, NULL, 0 },
	{ "Ceil", VNPU_ACT_CEIL, NULL, 0, NULL, 0 },
	{ "Round", VNPU_ACT_ROUND, NULL, 0, NULL, 0 },
	{ "Sign", VNPU_ACT_SIGN, NULL, 0, NULL, 0 },
	{ "Sin", VNPU_ACT_SIN, NULL, 0, NULL, 0 },
	{ "Cos", VNPU_ACT_COS, NULL, 0, NULL, 0 },
	{ "Tan", VNPU_ACT_TAN, NULL, 0, NULL, 0 },
	{ "Asin", VNPU_ACT_ASIN, NULL, 0, NULL, 0 },
	{ "Acos", VNPU_ACT_ACOS, NULL, 0, NULL, 0 },
	{ "Atan", VNPU_ACT_ATAN, NULL, 0, NULL, 0 },
	{ "Sinh", VNPU_ACT_SINH, NULL, 0, NULL, 0 },
	{ "Cosh", VNPU_ACT_COSH, NULL, 0, NULL, 0 },
	{ "Asinh", VNPU_ACT_ASINH, NULL, 0, NULL, 0 },
	{ "Acosh", VNPU_ACT_ACOSH, NULL, 0, NULL, 0 },
	{ "Atanh", VNPU_ACT_ATANH, NULL, 0, NULL, 0 },
	{ "Softplus", VNPU_ACT_SOFTPLUS, NULL, 0, NULL, 0 },
	{ "Softsign", VNPU_ACT_SOFTSIGN, NULL, 0, NULL, 0 },
	{ "Mish", VNPU_ACT_MISH, NULL, 0, NULL, 0 },
	{ "ThresholdedRelu", VNPU_ACT_THRESHOLDED_RELU, "alpha", 1.0f, NULL, 0 },
	{ "Not", VNPU_ACT_NOT, NULL, 0, NULL, 0 },
	{ "Shrink", VNPU_ACT_SHRINK, "bias", 0.0f, "lambd", 0.5f },
};

vnpu_status cl_unary_t(struct cstate *s, const struct vnpu_layer_act *a, struct ctensor x,
		       struct ctensor y)
{
	struct ctensor t[2] = { x, y };

	return cl_layer(s, VNPU_LAYER_UNARY, t, 2, a, sizeof(*a));
}

vnpu_status cl_binary_t(struct cstate *s, uint32_t func, struct ctensor a, struct ctensor b,
			struct ctensor y)
{
	struct vnpu_layer_binary attr = { .func = func };
	struct ctensor t[3] = { a, b, y };

	return cl_layer(s, VNPU_LAYER_BINARY, t, 3, &attr, sizeof(attr));
}

vnpu_status cl_unary(struct cstate *s, int32_t x, int32_t y, const struct vnpu_layer_act *a)
{
	struct ctensor t[2] = { ct_dense(s, x), ct_dense(s, y) };

	return cl_layer(s, VNPU_LAYER_UNARY, t, 2, a, sizeof(*a));
}

static struct vnpu_layer_act act_from_map(const struct cop *op, const struct act_map *m)
{
	struct vnpu_layer_act a = { .func = m->func };

	if (m->alpha_name)
		a.alpha = f32_bits(vnpu_attr_float(N(op), m->alpha_name, m->alpha));
	if (m->beta_name)
		a.beta = f32_bits(vnpu_attr_float(N(op), m->beta_name, m->beta));
	return a;
}

static vnpu_status lower_act(struct cstate *s, struct cop *op, const struct act_map *m)
{
	struct vnpu_layer_act a = act_from_map(op, m);

	return cl_unary(s, IN(op, 0), op->out[0], &a);
}

vnpu_status cl_binary(struct cstate *s, uint32_t func, int32_t a, int32_t b, int32_t y)
{
	struct vnpu_layer_binary attr = { .func = func };
	struct ctensor t[3] = { ct_dense(s, a), ct_dense(s, b), ct_dense(s, y) };

	return cl_layer(s, VNPU_LAYER_BINARY, t, 3, &attr, sizeof(attr));
}

/* Clip's bounds when known at compile time (attributes or constants). */
static bool clip_const_bounds(const struct cstate *s, const struct cop *op, float *lof,
			      float *hif)
{
	int32_t lo = IN(op, 1), hi = IN(op, 2);

	*lof = -3.4028234e38f;
	*hif = 3.4028234e38f;
	if (s->m->opset < 11) {
		*lof = vnpu_attr_float(N(op), "min", *lof);
		*hif = vnpu_attr_float(N(op), "max", *hif);
		return true;
	}
	if ((lo >= 0 && !cs_is_const(s, lo)) || (hi >= 0 && !cs_is_const(s, hi)))
		return false;
	if (lo >= 0)
		*lof = (float)vnpu_elem_get_f(INFO(s, lo)->data, INFO(s, lo)->type, 0);
	if (hi >= 0)
		*hif = (float)vnpu_elem_get_f(INFO(s, hi)->data, INFO(s, hi)->type, 0);
	return true;
}

static vnpu_status lower_clip(struct cstate *s, struct cop *op)
{
	int32_t x = IN(op, 0), lo = IN(op, 1), hi = IN(op, 2), t;
	vnpu_element_type type = INFO(s, x)->type;
	struct vnpu_layer_act a = { .func = VNPU_ACT_CLIP };
	float lof, hif;
	vnpu_status st;

	if (!clip_const_bounds(s, op, &lof, &hif)) {
		/* Bounds computed at run time: max then min, each bound (one
		 * value, of any rank: a [1] against a scalar X) spread over X. */
		const struct vnpu_tinfo *xi = INFO(s, x);
		struct ctensor y = ct_dense(s, op->out[0]), lov = y, hiv = y;

		if (lo >= 0)
			lov = ct_broadcast(ct_shaped(s, lo, 0, NULL), xi->rank, xi->dims);
		if (hi >= 0)
			hiv = ct_broadcast(ct_shaped(s, hi, 0, NULL), xi->rank, xi->dims);

		if (lo < 0 || hi < 0)
			return cl_binary_t(s, lo >= 0 ? VNPU_BIN_MAX : VNPU_BIN_MIN, ct_dense(s, x),
					   lo >= 0 ? lov : hiv, y);
		st = cs_add_temp(s, type, xi->rank, xi->dims, &t);
		if (!st)
			st = cl_binary_t(s, VNPU_BIN_MAX, ct_dense(s, x), lov, ct_dense(s, t));
		return st ? st : cl_binary_t(s, VNPU_BIN_MIN, ct_dense(s, t), hiv, y);
	}
	if (isnan(lof) || isnan(hif))
		return UNSUP(s, "NaN bounds");
	lof = fmaxf(lof, -3.4028234e38f);
	hif = fminf(hif, 3.4028234e38f);
	if (!vnpu_type_is_float(type)) {
		/* Integer bounds, saturated to what f32 carries exactly enough. */
		lof = fmaxf(lof, -16777216.0f);
		hif = fminf(hif, 16777216.0f);
	}
	a.alpha = f32_bits(lof);
	a.beta = f32_bits(hif);
	return cl_unary(s, x, op->out[0], &a);
}

bool cl_node_act(const struct cstate *s, const struct cop *op, struct vnpu_layer_act *a)
{
	float lof, hif;

	if (op->kind == COP_ACT) {
		*a = op->act;
		return !a->flags;
	}
	if (op->kind != COP_NODE || N(op)->domain[0] || op->num_in < 1 || IN(op, 0) < 0 ||
	    INFO(s, IN(op, 0))->type != VNPU_TYPE_F32)
		return false;
	if (!strcmp(N(op)->op, "Clip")) {
		if (!clip_const_bounds(s, op, &lof, &hif) || isnan(lof) || isnan(hif))
			return false;
		*a = (struct vnpu_layer_act){ .func = VNPU_ACT_CLIP,
					      .alpha = f32_bits(fmaxf(lof, -3.4028234e38f)),
					      .beta = f32_bits(fminf(hif, 3.4028234e38f)) };
		return true;
	}
	for (size_t i = 0; i < sizeof(act_maps) / sizeof(act_maps[0]); i++)
		if (!strcmp(N(op)->op, act_maps[i].op) && op->num_in == 1) {
			*a = act_from_map(op, &act_maps[i]);
			return a->func != VNPU_ACT_NOT;
		}
	return false;
}

struct bin_map {
	const char *op;
	uint32_t func;
};

static const struct bin_map bin_maps[] = {
	{ "Add", VNPU_BIN_ADD }, { "Sub", VNPU_BIN_SUB }, { "Mul", VNPU_BIN_MUL },
	{ "Div", VNPU_BIN_DIV }, { "Pow", VNPU_BIN_POW }, { "Max", VNPU_BIN_MAX },
	{ "Min", VNPU_BIN_MIN }, { "Sum", VNPU_BIN_ADD }, { "Mean", VNPU_BIN_ADD },
	{ "Mod", VNPU_BIN_MOD }, { "Equal", VNPU_BIN_EQUAL }, { "Less", VNPU_BIN_LESS },
	{ "LessOrEqual", VNPU_BIN_LESS_EQUAL }, { "Greater", VNPU_BIN_GREATER },
	{ "GreaterOrEqual", VNPU_BIN_GREATER_EQUAL }, { "And", VNPU_BIN_AND },
	{ "Or", VNPU_BIN_OR }, { "Xor", VNPU_BIN_XOR }, { "PRelu", VNPU_BIN_PRELU },
	{ "BitwiseAnd", VNPU_BIN_BITAND }, { "BitwiseOr", VNPU_BIN_BITOR },
	{ "BitwiseXor", VNPU_BIN_BITXOR },
};

/* Broadcast shape of two values, into @dims. */
static int32_t bshape(const struct cstate *s, int32_t a, int32_t b, int64_t *dims)
{
	const struct vnpu_tinfo *x = INFO(s, a), *y = INFO(s, b);
	int32_t r = x->rank > y->rank ? x->rank : y->rank;

	for (int32_t d = 0; d < r; d++) {
		int32_t dx = d - (r - x->rank), dy = d - (r - y->rank);
		int64_t p = dx >= 0 ? x->dims[dx] : 1, q = dy >= 0 ? y->dims[dy] : 1;

		dims[d] = p == 1 ? q : p;
	}
	return r;
}

/* @v converted to @type in a new temporary. */
vnpu_status cl_cast(struct cstate *s, int32_t v, vnpu_element_type type, int32_t *out)
{
	const struct vnpu_tinfo tinfo = *INFO(s, v), *t = &tinfo;
	struct ctensor ct[2];
	vnpu_status st = cs_add_temp(s, type, t->rank, t->dims, out);

	if (st)
		return st;
	ct[0] = ct_dense(s, v);
	ct[1] = ct_dense(s, *out);
	return cl_layer(s, VNPU_LAYER_CAST, ct, 2, NULL, 0);
}

/*
 * An Add with a nearest Resize fused (fuse_upsample.c): each axis d the
 * Resize upsamples by k_d > 1 becomes [dims_d / k_d, k_d] in the output
 * and the other operand, and [dims_d, k_d] with stride 0 along k_d in the
 * Resize's input, which is read where the Resize would have copied it.
 */
static vnpu_status lower_up_add(struct cstate *s, const struct cop *op, uint32_t func)
{
	struct ctensor t[3] = { ct_dense(s, op->in[0]), ct_dense(s, op->in[1]),
				ct_dense(s, op->out[0]) }, v[3];

	for (uint32_t i = 0; i < 3; i++) {
		v[i] = t[i];
		v[i].rank = 0;
		for (uint32_t d = 0; d < t[2].rank; d++) {
			int64_t k = op->up[d], st = t[i].strides[d];
			bool up = (int32_t)i == op->up_input;

			if (k == 1) {
				v[i].dims[v[i].rank] = t[i].dims[d];
				v[i].strides[v[i].rank++] = st;
				continue;
			}
			v[i].dims[v[i].rank] = up ? t[i].dims[d] : t[i].dims[d] / k;
			v[i].strides[v[i].rank++] = up ? st : st * k;
			v[i].dims[v[i].rank] = k;
			v[i].strides[v[i].rank++] = up ? 0 : st;
		}
	}
	return cl_binary_t(s, func, v[0], v[1], v[2]);
}

static vnpu_status lower_binary(struct cstate *s, struct cop *op, uint32_t func)
{
	const char *name = N(op)->op;
	int32_t acc = IN(op, 0), b, t;
	vnpu_element_type type = INFO(s, acc)->type;
	vnpu_status st = VNPU_OK;
	bool mean = !strcmp(name, "Mean");

	if (op->up_input >= 0)
		return lower_up_add(s, op, func);
	if (!strcmp(name, "Mod") && vnpu_attr_int(N(op), "fmod", 0))
		func = VNPU_BIN_FMOD;
	if (op->num_in == 1)
		return cl_copy(s, ct_dense(s, op->out[0]), ct_dense(s, acc));
	for (uint32_t i = 1; i < op->num_in && !st; i++) {
		int64_t dims[VNPU_MAX_RANK];
		int32_t r;
		bool last = i + 1 == op->num_in && !mean;

		b = IN(op, i);
		if (INFO(s, b)->type != type) {
			st = cs_is_const(s, b) ? const_as(s, b, type, &b) : cl_cast(s, b, type, &b);
			if (st)
				return st;
		}
		r = bshape(s, acc, b, dims);
		if (last) {
			t = op->out[0];
		} else {
			st = cs_add_temp(s, type, r, dims, &t);
			if (st)
				return st;
		}
		st = cl_binary(s, func, acc, b, t);
		acc = t;
	}
	if (!st && mean) {
		st = cl_const_scalar(s, type, (double)op->num_in, &b);
		if (!st)
			st = cl_binary(s, VNPU_BIN_DIV, acc, b, op->out[0]);
	}
	return st;
}

vnpu_status cl_where(struct cstate *s, int32_t c, int32_t x, int32_t y, int32_t z)
{
	struct ctensor t[4] = { ct_dense(s, c), ct_dense(s, x), ct_dense(s, y), ct_dense(s, z) };

	return cl_layer(s, VNPU_LAYER_WHERE, t, 4, NULL, 0);
}

/*
 * Cast and CastLike into bf16 keep the upper half of the f32 bits
 * (truncation, see Documentation/vnpu/conformance.rst): on the
 * little-endian device the upper half of f32 element i is bf16 element
 * 2 * i + 1 of the same bytes, so it is one strided COPY. Other sources
 * are cast to f32 first, as ONNX's reference does.
 */
static vnpu_status cast_to_bf16(struct cstate *s, struct ctensor x, struct ctensor y)
{
	vnpu_status st;

	if (x.type != VNPU_TYPE_F32) {
		struct ctensor t[2] = { x };
		int32_t f32;

		st = cs_add_temp(s, VNPU_TYPE_F32, (int32_t)y.rank, y.dims, &f32);
		if (st)
			return st;
		t[1] = ct_dense(s, f32);
		st = cl_layer(s, VNPU_LAYER_CAST, t, 2, NULL, 0);
		if (st)
			return st;
		x = t[1];
	}
	x.type = VNPU_TYPE_BF16;
	x.off = x.off * 2 + 1;
	for (uint32_t d = 0; d < x.rank; d++)
		x.strides[d] *= 2;
	return cl_copy(s, y, x);
}

static vnpu_status lower_cast(struct cstate *s, struct cop *op)
{
	struct ctensor t[2] = { ct_dense(s, IN(op, 0)), ct_dense(s, op->out[0]) };

	if (t[0].type == VNPU_TYPE_STRING || t[1].type == VNPU_TYPE_STRING)
		return UNSUP(s, "a cast to or from string runs on the host, in a model of strings only");
	if (t[0].type == t[1].type)
		return cl_copy(s, t[1], t[0]);
	if (t[1].type == VNPU_TYPE_BF16)
		return cast_to_bf16(s, t[0], t[1]);
	return cl_layer(s, VNPU_LAYER_CAST, t, 2, NULL, 0);
}

/* ---- Gemm, MatMul, Conv ---- */


/* ---- normalizations, softmax, reductions ---- */

/* ---- resize, pad, gather ---- */

/* ---- data movement as copies ---- */

/* A node whose output is a differently shaped view of its input, kept
 * because its output is a model output: a dense copy. */
static vnpu_status lower_view_copy(struct cstate *s, struct cop *op, int32_t src)
{
	const struct vnpu_tinfo *yi = INFO(s, op->out[0]);

	return cl_copy(s, ct_dense(s, op->out[0]), ct_shaped(s, src, yi->rank, yi->dims));
}

static vnpu_status lower_constant_of_shape(struct cstate *s, struct cop *op)
{
	const struct vnpu_attr *a = vnpu_node_attr(N(op), "value");
	uint64_t v = 0;

	if (a)
		memcpy(&v, a->t.data, vnpu_element_type_size(a->t.type));
	return cl_fill(s, ct_dense(s, op->out[0]), v);
}

static vnpu_status lower_output(struct cstate *s, struct cop *op)
{
	const struct vnpu_tinfo iinfo = *INFO(s, op->in[0]), *i = &iinfo;
	int32_t t;
	vnpu_status st = cs_add_temp(s, i->type, i->rank, i->dims, &t);

	if (st)
		return st;
	s->vals[t].out_index = op->out[0];
	return cl_copy(s, ct_dense(s, t), ct_dense(s, op->in[0]));
}

/* The largest band mask: 256 MiB (a matrix of 16384 x 16384). */
#define TRILU_MAX_MASK (1ll << 28)

/* Trilu: Where(constant band mask, X, 0). */
static vnpu_status lower_trilu(struct cstate *s, struct cop *op)
{
	const struct vnpu_tinfo xinfo = *INFO(s, IN(op, 0)), *xi = &xinfo;
	bool upper = vnpu_attr_int(N(op), "upper", 1);
	int64_t k = 0, dims[2];
	int32_t mask, zero;
	uint8_t *m;
	vnpu_status st;

	if (xi->rank < 2)
		return UNSUP(s, "input rank %d, at least 2", xi->rank);
	if (IN(op, 1) >= 0) {
		if (!cs_is_const(s, IN(op, 1)))
			return UNSUP(s, "k computed at run time");
		k = vnpu_elem_get_i(INFO(s, IN(op, 1))->data, INFO(s, IN(op, 1))->type, 0);
	}
	dims[0] = xi->dims[xi->rank - 2];
	dims[1] = xi->dims[xi->rank - 1];
	/* Each is at most 2^40: the mask's bytes may not fit, or fill memory. */
	if (dims[1] && dims[0] > TRILU_MAX_MASK / dims[1])
		return UNSUP(s, "a band mask of %lld x %lld would hold more than 2^28 bytes",
			     (long long)dims[0], (long long)dims[1]);
	m = calloc(1, (size_t)(dims[0] * dims[1] + 1));
	if (!m)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	/* Rows of nothing are none: 2^40 of them took hours. */
	for (int64_t i = 0; dims[1] && i < dims[0]; i++)
		for (int64_t j = 0; j < dims[1]; j++)
			m[i * dims[1] + j] = upper ? j - i >= k : j - i <= k;
	st = cs_add_const(s, VNPU_TYPE_BOOL, 2, dims, m, &mask);
	if (!st)
		st = cl_const_scalar(s, xi->type, 0, &zero);
	return st ? st : cl_where(s, mask, IN(op, 0), zero, op->out[0]);
}

/* IsNaN: not (x == x). IsInf: x == +inf or x == -inf. */
static vnpu_status lower_isnan_isinf(struct cstate *s, struct cop *op)
{
	const struct vnpu_tinfo xinfo = *INFO(s, IN(op, 0)), *xi = &xinfo;
	struct vnpu_layer_act not = { .func = VNPU_ACT_NOT };
	bool pos = vnpu_attr_int(N(op), "detect_positive", 1);
	bool neg = vnpu_attr_int(N(op), "detect_negative", 1);
	int32_t t1, t2, inf;
	vnpu_status st;

	if (!vnpu_type_is_float(xi->type))
		return UNSUP(s, "input is %s", vnpu_element_type_str(xi->type));
	if (!strcmp(N(op)->op, "IsNaN")) {
		st = cs_add_temp(s, VNPU_TYPE_BOOL, xi->rank, xi->dims, &t1);
		if (!st)
			st = cl_binary(s, VNPU_BIN_EQUAL, IN(op, 0), IN(op, 0), t1);
		return st ? st : cl_unary(s, t1, op->out[0], &not);
	}
	if (!pos && !neg)
		return cl_fill(s, ct_dense(s, op->out[0]), 0);
	if (!pos || !neg) {
		st = cl_const_scalar(s, xi->type, pos ? INFINITY : -INFINITY, &inf);
		return st ? st : cl_binary(s, VNPU_BIN_EQUAL, IN(op, 0), inf, op->out[0]);
	}
	st = cs_add_temp(s, VNPU_TYPE_BOOL, xi->rank, xi->dims, &t1);
	if (!st)
		st = cs_add_temp(s, VNPU_TYPE_BOOL, xi->rank, xi->dims, &t2);
	if (!st)
		st = cl_const_scalar(s, xi->type, INFINITY, &inf);
	if (!st)
		st = cl_binary(s, VNPU_BIN_EQUAL, IN(op, 0), inf, t1);
	if (!st)
		st = cl_const_scalar(s, xi->type, -INFINITY, &inf);
	if (!st)
		st = cl_binary(s, VNPU_BIN_EQUAL, IN(op, 0), inf, t2);
	return st ? st : cl_binary(s, VNPU_BIN_OR, t1, t2, op->out[0]);
}

/* BitShift: x * 2^y (left) or x / 2^y (right), in the unsigned type:
 * shifts past the width give 0 either way (2^y wraps to 0). */
static vnpu_status lower_bitshift(struct cstate *s, struct cop *op)
{
	const struct vnpu_tinfo yinfo = *INFO(s, IN(op, 1)), *yi = &yinfo;
	const char *dir = vnpu_attr_str(N(op), "direction", "");
	int32_t two, pow2;
	vnpu_status st;

	if (strcmp(dir, "LEFT") && strcmp(dir, "RIGHT"))
		return UNSUP(s, "direction '%s'", dir);
	st = cl_const_scalar(s, yi->type, 2, &two);
	if (!st)
		st = cs_add_temp(s, yi->type, yi->rank, yi->dims, &pow2);
	if (!st)
		st = cl_binary(s, VNPU_BIN_POW, two, IN(op, 1), pow2);
	return st ? st : cl_binary(s, strcmp(dir, "LEFT") ? VNPU_BIN_DIV : VNPU_BIN_MUL, IN(op, 0),
				   pow2, op->out[0]);
}

static vnpu_status lower_view_node(struct cstate *s, struct cop *op)
{
	return lower_view_copy(s, op, IN(op, 0));
}

static const struct lower_map lower_maps[] = {
	{ "Clip", lower_clip }, { "Cast", lower_cast }, { "CastLike", lower_cast },
	{ "Identity", lower_view_node }, { "Dropout", cl_lower_dropout },
	{ "Reshape", lower_view_node }, { "Flatten", lower_view_node },
	{ "Squeeze", lower_view_node }, { "Unsqueeze", lower_view_node },
	{ "ConstantOfShape", lower_constant_of_shape }, { "Trilu", lower_trilu },
	{ "IsNaN", lower_isnan_isinf }, { "IsInf", lower_isnan_isinf },
	{ "BitShift", lower_bitshift }, { "Einsum", cl_lower_einsum },
	{ "DFT", cl_lower_fourier }, { "STFT", cl_lower_fourier },
	{ "QuantizeLinear", cl_lower_quantize }, { "DequantizeLinear", cl_lower_quantize },
	{ "DynamicQuantizeLinear", cl_lower_quantize }, { "ConvInteger", cl_lower_quantize },
	{ "QLinearConv", cl_lower_quantize }, { "MatMulInteger", cl_lower_quantize },
	{ "QLinearMatMul", cl_lower_quantize }, { "LSTM", cl_lower_rnn },
	{ "GRU", cl_lower_rnn }, { "RNN", cl_lower_rnn },
};

static const struct lower_map *find(const struct lower_map *maps, size_t n, const char *op)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(maps[i].op, op))
			return &maps[i];
	return NULL;
}

bool cl_has_lowering(const char *op)
{
	static const char *const others[] = { "Where" };

	for (size_t i = 0; i < sizeof(act_maps) / sizeof(act_maps[0]); i++)
		if (!strcmp(op, act_maps[i].op))
			return true;
	for (size_t i = 0; i < sizeof(bin_maps) / sizeof(bin_maps[0]); i++)
		if (!strcmp(op, bin_maps[i].op))
			return true;
	if (!strcmp(op, others[0]))
		return true;
	return find(lower_maps, sizeof(lower_maps) / sizeof(lower_maps[0]), op) ||
	       find(cl_nn_maps, cl_nn_num_maps, op) || find(cl_data_maps, cl_data_num_maps, op);
}

static vnpu_status lower_node(struct cstate *s, struct cop *op)
{
	const char *name = N(op)->op;
	const struct lower_map *map;

	if (N(op)->domain[0]) {
		map = strcmp(N(op)->domain, "ai.onnx.preview.training") ? NULL :
		      find(cl_train_maps, cl_train_num_maps, name);
		return map ? map->fn(s, op) : UNSUP(s, "no device lowering for this op");
	}
	if (op->qlinear)
		return cl_lower_quantize(s, op);
	for (size_t i = 0; i < sizeof(act_maps) / sizeof(act_maps[0]); i++)
		if (!strcmp(name, act_maps[i].op))
			return lower_act(s, op, &act_maps[i]);
	for (size_t i = 0; i < sizeof(bin_maps) / sizeof(bin_maps[0]); i++)
		if (!strcmp(name, bin_maps[i].op))
			return lower_binary(s, op, bin_maps[i].func);
	if (!strcmp(name, "Where"))
		return cl_where(s, IN(op, 0), IN(op, 1), IN(op, 2), op->out[0]);
	map = find(lower_maps, sizeof(lower_maps) / sizeof(lower_maps[0]), name);
	if (!map)
		map = find(cl_nn_maps, cl_nn_num_maps, name);
	if (!map)
		map = find(cl_data_maps, cl_data_num_maps, name);
	if (map)
		return map->fn(s, op);
	return UNSUP(s, "no device lowering for this op");
}

/* Why inference left @op's outputs unknown: run it again for the message. */
static vnpu_status infer_failure(struct cstate *s, const struct cop *op)
{
	struct vnpu_tinfo *in[COP_MAX_IO + 1], *out[COP_MAX_IO], scratch[COP_MAX_IO];
	vnpu_status st;

	/* If, Loop and Scan infer their bodies over the model's whole value
	 * table, which the compiler's values are not: the checks below say
	 * which of their values are unknown. */
	if (op->kind != COP_NODE || !strcmp(N(op)->op, "If") || !strcmp(N(op)->op, "Loop") ||
	    !strcmp(N(op)->op, "Scan"))
		return VNPU_OK;
	for (uint32_t i = 0; i < op->num_in; i++)
		in[i] = op->in[i] >= 0 ? &s->vals[op->in[i]].info : NULL;
	in[op->num_in] = NULL;
	for (uint32_t i = 0; i < op->num_out; i++) {
		scratch[i] = (struct vnpu_tinfo){ .rank = -1 };
		out[i] = op->out[i] >= 0 ? &scratch[i] : NULL;
	}
	st = vnpu_node_infer(s->m, N(op), in, out, 0);
	for (uint32_t i = 0; i < op->num_out; i++)
		vnpu_tinfo_clear(&scratch[i]);
	if (st) {
		char msg[400], label[256];
		const char *e = vnpu_last_error();
		size_t len = strlen(vnpu_node_label(N(op), label, sizeof(label)));

		/* cs_fail() names the node again. */
		if (!strncmp(e, label, len) && !strncmp(e + len, ": ", 2))
			e += len + 2;
		snprintf(msg, sizeof(msg), "%s", e);
		return cs_fail(s, st, "%s", msg);
	}
	return VNPU_OK;
}

/* Every value the op touches must be known and static. */
static vnpu_status check_static(struct cstate *s, const struct cop *op)
{
	int32_t first = -1;	/* the first output used: RNN, GRU, LSTM may omit Y */
	char buf[96];
	vnpu_status st;

	for (uint32_t i = 0; first < 0 && i < op->num_out; i++)
		first = op->out[i];
	st = first >= 0 && s->vals[first].info.type == VNPU_TYPE_UNDEFINED ?
	     infer_failure(s, op) : VNPU_OK;
	if (st)
		return st;

	for (uint32_t i = 0; i < op->num_in; i++) {
		const struct vnpu_tinfo *t;

		if (op->in[i] < 0)
			continue;
		t = INFO(s, op->in[i]);
		if (!vnpu_tinfo_static(t))
			return UNSUP(s, "input %u is %s: its shape or type is not known at compile time",
				     i, vnpu_tinfo_str(t, buf, sizeof(buf)));
	}
	for (uint32_t i = 0; i < op->num_out; i++) {
		const struct vnpu_tinfo *t;

		if (op->kind == COP_OUTPUT || op->out[i] < 0)
			continue;
		t = INFO(s, op->out[i]);
		if (!vnpu_tinfo_static(t))
			return UNSUP(s, "output %u is %s: its shape or type is not known at compile time",
				     i, vnpu_tinfo_str(t, buf, sizeof(buf)));
		if (t->rank > VNPU_MAX_DIMS)
			return UNSUP(s, "rank above %d", VNPU_MAX_DIMS);
	}
	return VNPU_OK;
}

/*
 * The limits of every layer tensor the engine takes (vnpu_eng_check.c's
 * tensor_ok()): no dimension above 2^31, and the product of the non-zero
 * dimensions at most 2^40. A model's tensors may hold 2^40 elements in one
 * dimension; copies and views take it, layers do not.
 */
#define ENG_MAX_DIM (1ll << 31)
#define ENG_MAX_NUMEL (1ll << 40)
/* What one output may read (vnpu_layers.h: work that cannot be split). */
#define ENG_MAX_ROW (1ll << 28)
#define ENG_MAX_WINDOW (1ll << 24)

/* @t named for a message: the value's name, or its shape for a temporary. */
static const char *tensor_name(const struct cstate *s, const struct ctensor *t, char *buf,
			       size_t size)
{
	const char *name = t->val >= 0 ? s->vals[t->val].name : NULL;
	size_t len;

	if (name && name[0]) {
		snprintf(buf, size, "'%s'", name);
		return buf;
	}
	len = (size_t)snprintf(buf, size, "a temporary [");
	for (uint32_t d = 0; d < t->rank && len < size; d++)
		len += (size_t)snprintf(buf + len, size - len, "%s%lld", d ? "," : "",
					(long long)t->dims[d]);
	if (len < size)
		snprintf(buf + len, size - len, "]");
	return buf;
}

/*
 * Whether a tensor of @cmd is past the engine's limits: UNSUPPORTED said
 * with the tensor and the limit, else VNPU_OK (the op's own checks
 * refused the layer).
 */
static vnpu_status layer_limits(struct cstate *s, const struct ccmd *cmd)
{
	const struct ctensor *t = cs_cmd_tensors(s, cmd);
	char name[96];

	for (uint32_t i = 0; i < cmd->num_tensors; i++) {
		int64_t numel = 1;

		for (uint32_t d = 0; d < t[i].rank; d++) {
			if (t[i].dims[d] > ENG_MAX_DIM)
				return UNSUP(s, "dimension %u of %s is %lld: the device's layers take at most 2^31",
					     d, tensor_name(s, &t[i], name, sizeof(name)),
					     (long long)t[i].dims[d]);
			if (t[i].dims[d] && numel > ENG_MAX_NUMEL / t[i].dims[d])
				return UNSUP(s, "%s has more than 2^40 elements in its non-empty dimensions: the device's layers take at most 2^40",
					     tensor_name(s, &t[i], name, sizeof(name)));
			if (t[i].dims[d])
				numel *= t[i].dims[d];
		}
	}
	return VNPU_OK;
}

static int64_t ct_elems(const struct ctensor *t)
{
	int64_t n = 1;

	for (uint32_t d = 0; d < t->rank; d++)
		n *= t->dims[d];
	return n;
}

/*
 * The bounds vnpu_layers.h puts on work that cannot be split, for the
 * layers that have them: VNPU_OK when @cmd is within them.
 */
static vnpu_status layer_work(struct cstate *s, const struct ccmd *cmd)
{
	const struct ctensor *t = cs_cmd_tensors(s, cmd);
	int64_t row = 0, window;

	switch (cmd->layer) {
	case VNPU_LAYER_REDUCE:
		row = ct_elems(&t[0]) / (ct_elems(&t[1]) ? ct_elems(&t[1]) : 1);
		break;
	case VNPU_LAYER_ARGREDUCE: {
		const struct vnpu_layer_argreduce *a = (const void *)cmd->attrs;

		row = a->axis < t[0].rank ? t[0].dims[a->axis] : 0;
		break;
	}
	case VNPU_LAYER_POOL: {
		const struct vnpu_layer_pool *a = (const void *)cmd->attrs;

		window = (int64_t)a->kernel[0] * a->kernel[1];
		if (window > ENG_MAX_WINDOW)
			return UNSUP(s, "a pooling window of %lld elements: the device pools at most 2^24",
				     (long long)window);
		break;
	}
	default:
		break;
	}
	if (row > ENG_MAX_ROW)
		return UNSUP(s, "each output reads %lld elements: the device reads at most 2^28 for one",
			     (long long)row);
	return VNPU_OK;
}

/* Why the engine refused the layer of @cmd, as precisely as known. */
static vnpu_status layer_refused(struct cstate *s, const struct ccmd *cmd)
{
	vnpu_status st = layer_limits(s, cmd);

	const struct ctensor *t = cs_cmd_tensors(s, cmd);
	char shapes[320];
	size_t len = 0;

	if (!st)
		st = layer_work(s, cmd);
	if (st)
		return st;
	/* What no check above explains: the layer as the engine saw it. */
	shapes[0] = '\0';
	for (uint32_t i = 0; i < cmd->num_tensors && len < sizeof(shapes); i++) {
		len += (size_t)snprintf(shapes + len, sizeof(shapes) - len, "%s%s[",
					i + 1 == cmd->num_tensors ? " -> " : i ? " " : "",
					vnpu_element_type_str(t[i].type));
		for (uint32_t d = 0; d < t[i].rank && len < sizeof(shapes); d++)
			len += (size_t)snprintf(shapes + len, sizeof(shapes) - len, "%s%lld",
						d ? "," : "", (long long)t[i].dims[d]);
		if (len < sizeof(shapes))
			len += (size_t)snprintf(shapes + len, sizeof(shapes) - len, "]");
	}
	return UNSUP(s, "the device engine does not take its layer (op %u) over %s with these attributes",
		     cmd->layer, shapes);
}

/* The engine's own check of every layer this op lowered to. */
static vnpu_status check_layers(struct cstate *s, uint32_t first)
{
	for (uint32_t c = first; c < s->num_cmds; c++) {
		const struct ccmd *cmd = &s->cmds[c];
		struct vnpu_cmd_tensor t[VNPU_LAYER_MAX_TENSORS];

		if (cmd->opcode != VNPU_CMD_LAYER)
			continue;
		memset(t, 0, sizeof(t));
		for (uint32_t i = 0; i < cmd->num_tensors; i++) {
			const struct ctensor *ct = &cs_cmd_tensors(s, cmd)[i];

			t[i].dtype = (uint32_t)ct->type;
			t[i].rank = ct->rank;
			for (uint32_t d = 0; d < ct->rank; d++) {
				t[i].dims[d] = (uint64_t)ct->dims[d];
				t[i].strides[d] = ct->strides[d];
			}
		}
		if (vnpu_eng_layer_check(cmd->layer, t, cmd->num_tensors, cmd->attrs,
					 cmd->attr_size))
			return layer_refused(s, cmd);
	}
	return VNPU_OK;
}

/* CHAIN: each input broadcast against Y. */
static vnpu_status lower_chain(struct cstate *s, const struct cop *op)
{
	const struct vnpu_tinfo *y = INFO(s, op->out[0]);
	struct ctensor t[VNPU_CHAIN_MAX_INPUTS + 1];

	for (uint32_t i = 0; i < op->num_in; i++)
		t[i] = ct_broadcast(ct_dense(s, op->in[i]), y->rank, y->dims);
	t[op->num_in] = ct_dense(s, op->out[0]);
	return cl_layer(s, VNPU_LAYER_CHAIN, t, op->num_in + 1, &op->chain, sizeof(op->chain));
}

vnpu_status cs_lower_op(struct cstate *s, struct cop *op)
{
	uint32_t first = s->num_cmds, first_tensor = s->num_tensors;
	vnpu_status st;

	op->first_cmd = first;
	st = check_static(s, op);
	if (st)
		return st;
	switch (op->kind) {
	case COP_SELECT:
		if (cs_is_const(s, op->in[0]))	/* a model output: copy the branch taken */
			st = lower_view_copy(s, op, *(const uint8_t *)INFO(s, op->in[0])->data ?
					     op->in[1] : op->in[2]);
		else
			st = cl_where(s, op->in[0], op->in[1], op->in[2], op->out[0]);
		break;
	case COP_OUTPUT:
		st = lower_output(s, op);
		break;
	case COP_ACT:
		st = cl_unary(s, op->in[0], op->out[0], &op->act);
		break;
	case COP_CHAIN:
		st = lower_chain(s, op);
		break;
	case COP_ATTN:
		st = cl_lower_attention(s, op);
		break;
	default:
		st = lower_node(s, op);
		break;
	}
	if (!st)
		st = check_layers(s, first);
	if (st) {
		s->num_cmds = first;	/* drop a partial lowering */
		s->num_tensors = first_tensor;
		return st;
	}
	op->num_cmds = s->num_cmds - first;
	return VNPU_OK;
}

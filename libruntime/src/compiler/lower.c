// SPDX-License-Identifier: MIT
/*
 * Lowering: each op of the working graph to device commands. NN ops map to
 * VNPU_CMD_LAYER (vnpu_layers.h); data movement (transpose, slice, concat,
 * split, tile, expand, depth/space rearrangements, copies into outputs) to
 * strided VNPU_CMD_COPYs; constants to VNPU_CMD_FILL. Gemm and Conv
 * weights that are constants are pre-packed with the engine's packer.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgraph.h"
#include "engine/vnpu_engine.h"
#include "error.h"

#define UNSUP(s, ...) cs_fail((s), VNPU_UNSUPPORTED, __VA_ARGS__)

static const struct vnpu_node *N(const struct cop *op)
{
	return op->node;
}

static int32_t IN(const struct cop *op, uint32_t i)
{
	return i < op->num_in ? op->in[i] : -1;
}

vnpu_status cl_layer(struct cstate *s, uint32_t lop, const struct ctensor *t, uint32_t n,
			 const void *attrs, uint32_t attr_size)
{
	struct ccmd *c = cs_add_cmd(s, VNPU_CMD_LAYER);

	if (!c)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	c->layer = lop;
	c->num_tensors = n;
	memcpy(c->t, t, n * sizeof(*t));
	c->attr_size = attr_size;
	if (attr_size)
		memcpy(c->attrs, attrs, attr_size);
	return VNPU_OK;
}

vnpu_status cl_copy(struct cstate *s, struct ctensor dst, struct ctensor src)
{
	struct ccmd *c;

	if (vnpu_tinfo_elems(&(struct vnpu_tinfo){ .rank = (int32_t)dst.rank,
		.dims = { dst.dims[0], dst.dims[1], dst.dims[2], dst.dims[3], dst.dims[4],
			  dst.dims[5] } }) == 0)
		return VNPU_OK;
	c = cs_add_cmd(s, VNPU_CMD_COPY);
	if (!c)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	c->num_tensors = 2;
	c->t[0] = dst;
	c->t[1] = src;
	return VNPU_OK;
}

vnpu_status cl_fill(struct cstate *s, struct ctensor dst, uint64_t value)
{
	struct ccmd *c = cs_add_cmd(s, VNPU_CMD_FILL);

	if (!c)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	c->num_tensors = 1;
	c->t[0] = dst;
	c->fill_value = value;
	return VNPU_OK;
}

static const struct vnpu_tinfo *INFO(const struct cstate *s, int32_t v)
{
	return cs_info(s, v);
}

static int32_t rank_of(const struct cstate *s, int32_t v)
{
	return INFO(s, v)->rank;
}

/* Read a constant int list (attribute or input); -1 when not constant. */
static int32_t const_ints(const struct cstate *s, const struct cop *op, const char *attr,
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

/* A new constant scalar of @type holding @v. */
vnpu_status cl_const_scalar(struct cstate *s, vnpu_element_type type, double v, int32_t *out)
{
	void *data = calloc(1, 8);

	if (!data)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	if (vnpu_type_is_float(type))
		vnpu_elem_set_f(data, type, 0, v);
	else
		vnpu_elem_set_i(data, type, 0, (int64_t)v);
	return cs_add_const(s, type, 0, NULL, data, out);
}

/* @v as a constant of @type (a converted copy when the type differs). */
static vnpu_status const_as(struct cstate *s, int32_t v, vnpu_element_type type, int32_t *out)
{
	const struct vnpu_tinfo *t = INFO(s, v);
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
	t = INFO(s, v);
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

static vnpu_status lower_act(struct cstate *s, struct cop *op, const struct act_map *m)
{
	struct vnpu_layer_act a = { .func = m->func };

	if (m->alpha_name)
		a.alpha = f32_bits(vnpu_attr_float(N(op), m->alpha_name, m->alpha));
	if (m->beta_name)
		a.beta = f32_bits(vnpu_attr_float(N(op), m->beta_name, m->beta));
	return cl_unary(s, IN(op, 0), op->out[0], &a);
}

vnpu_status cl_binary(struct cstate *s, uint32_t func, int32_t a, int32_t b, int32_t y)
{
	struct vnpu_layer_binary attr = { .func = func };
	struct ctensor t[3] = { ct_dense(s, a), ct_dense(s, b), ct_dense(s, y) };

	return cl_layer(s, VNPU_LAYER_BINARY, t, 3, &attr, sizeof(attr));
}

static vnpu_status lower_clip(struct cstate *s, struct cop *op)
{
	int32_t x = IN(op, 0), lo = IN(op, 1), hi = IN(op, 2), t;
	vnpu_element_type type = INFO(s, x)->type;
	struct vnpu_layer_act a = { .func = VNPU_ACT_CLIP };
	float lof = -3.4028234e38f, hif = 3.4028234e38f;
	vnpu_status st;

	if (s->m->opset < 11) {
		lof = vnpu_attr_float(N(op), "min", lof);
		hif = vnpu_attr_float(N(op), "max", hif);
	} else if ((lo < 0 || cs_is_const(s, lo)) && (hi < 0 || cs_is_const(s, hi))) {
		if (lo >= 0)
			lof = (float)vnpu_elem_get_f(INFO(s, lo)->data, INFO(s, lo)->type, 0);
		if (hi >= 0)
			hif = (float)vnpu_elem_get_f(INFO(s, hi)->data, INFO(s, hi)->type, 0);
	} else {
		/* Bounds computed at run time: max then min. */
		if (lo < 0 || hi < 0)
			return cl_binary(s, lo >= 0 ? VNPU_BIN_MAX : VNPU_BIN_MIN, x, lo >= 0 ? lo : hi,
				      op->out[0]);
		st = cs_add_temp(s, type, INFO(s, x)->rank, INFO(s, x)->dims, &t);
		if (!st)
			st = cl_binary(s, VNPU_BIN_MAX, x, lo, t);
		return st ? st : cl_binary(s, VNPU_BIN_MIN, t, hi, op->out[0]);
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
	const struct vnpu_tinfo *t = INFO(s, v);
	struct ctensor ct[2];
	vnpu_status st = cs_add_temp(s, type, t->rank, t->dims, out);

	if (st)
		return st;
	ct[0] = ct_dense(s, v);
	ct[1] = ct_dense(s, *out);
	return cl_layer(s, VNPU_LAYER_CAST, ct, 2, NULL, 0);
}

static vnpu_status lower_binary(struct cstate *s, struct cop *op, uint32_t func)
{
	const char *name = N(op)->op;
	int32_t acc = IN(op, 0), b, t;
	vnpu_element_type type = INFO(s, acc)->type;
	vnpu_status st = VNPU_OK;
	bool mean = !strcmp(name, "Mean");

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

static vnpu_status lower_cast(struct cstate *s, struct cop *op)
{
	struct ctensor t[2] = { ct_dense(s, IN(op, 0)), ct_dense(s, op->out[0]) };

	if (t[0].type == t[1].type)
		return cl_copy(s, t[1], t[0]);
	return cl_layer(s, VNPU_LAYER_CAST, t, 2, NULL, 0);
}

/* ---- Gemm, MatMul, Conv ---- */

/* Swap the last two dims of a view (a transpose for free). */
static struct ctensor ct_transposed(struct ctensor t)
{
	uint32_t r = t.rank;
	int64_t d = t.dims[r - 1], st = t.strides[r - 1];

	t.dims[r - 1] = t.dims[r - 2];
	t.strides[r - 1] = t.strides[r - 2];
	t.dims[r - 2] = d;
	t.strides[r - 2] = st;
	return t;
}

/* Pack constant B [K, N] (@trans: stored [N, K]) for GEMM; -1 on failure. */
vnpu_status cl_pack_gemm_b(struct cstate *s, int32_t bv, bool trans, int32_t *out)
{
	const struct vnpu_tinfo *b = INFO(s, bv);
	int64_t k = trans ? b->dims[1] : b->dims[0], n = trans ? b->dims[0] : b->dims[1];
	uint64_t size = vnpu_eng_packed_size(VNPU_PACK_GEMM_B, 1, (uint64_t)k, (uint64_t)n);
	const float *src = b->data;
	float *dense = NULL, *packed;
	int64_t psize;

	if (!size)
		return VNPU_UNSUPPORTED;
	packed = calloc(size, sizeof(float));
	if (trans)
		dense = malloc((size_t)(k * n + 1) * sizeof(float));
	if (!packed || (trans && !dense)) {
		free(packed);
		free(dense);
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory packing weights");
	}
	if (trans) {
		for (int64_t i = 0; i < k; i++)
			for (int64_t j = 0; j < n; j++)
				dense[i * n + j] = src[j * k + i];
		src = dense;
	}
	if (vnpu_eng_pack(VNPU_PACK_GEMM_B, src, 1, (uint64_t)k, (uint64_t)n, packed)) {
		free(packed);
		free(dense);
		return VNPU_UNSUPPORTED;
	}
	free(dense);
	psize = (int64_t)size;
	return cs_add_const(s, VNPU_TYPE_F32, 1, &psize, packed, out);
}

static vnpu_status gemm_layer(struct cstate *s, struct cop *op, struct ctensor a, struct ctensor b,
			      int32_t packed_b, int32_t c, float alpha, float beta, struct ctensor y)
{
	struct vnpu_layer_gemm attr = { .alpha = f32_bits(alpha), .beta = f32_bits(beta),
					.act = op->act };
	struct ctensor t[5];
	uint32_t n = 0;

	t[n++] = a;
	if (packed_b >= 0) {
		t[n++] = ct_dense(s, packed_b);
		attr.flags |= VNPU_LAYER_F_PACKED;
	} else {
		t[n++] = b;
	}
	if (c >= 0) {
		t[n++] = ct_dense(s, c);
		attr.flags |= VNPU_LAYER_F_BIAS;
	}
	if (op->residual >= 0) {
		t[n++] = ct_dense(s, op->residual);
		attr.flags |= VNPU_LAYER_F_RESIDUAL;
	}
	t[n++] = y;
	return cl_layer(s, VNPU_LAYER_GEMM, t, n, &attr, sizeof(attr));
}

static vnpu_status lower_gemm(struct cstate *s, struct cop *op)
{
	bool ta = vnpu_attr_int(N(op), "transA", 0), tb = vnpu_attr_int(N(op), "transB", 0);
	struct ctensor a = ct_dense(s, IN(op, 0)), b = ct_dense(s, IN(op, 1));
	int32_t c = IN(op, 2) >= 0 ? IN(op, 2) : op->bias, packed = -1;
	float beta = IN(op, 2) >= 0 ? vnpu_attr_float(N(op), "beta", 1.0f) : 1.0f;

	if (ta)
		a = ct_transposed(a);
	if (tb)
		b = ct_transposed(b);
	if (cs_is_const(s, IN(op, 1)) && INFO(s, IN(op, 1))->type == VNPU_TYPE_F32 &&
	    !s->opt.no_packing) {
		vnpu_status st = cl_pack_gemm_b(s, IN(op, 1), tb, &packed);

		if (st && st != VNPU_UNSUPPORTED)
			return st;
	}
	return gemm_layer(s, op, a, b, packed, c, vnpu_attr_float(N(op), "alpha", 1.0f), beta,
			  ct_dense(s, op->out[0]));
}

static vnpu_status lower_matmul(struct cstate *s, struct cop *op)
{
	const struct vnpu_tinfo *ai = INFO(s, IN(op, 0)), *bi = INFO(s, IN(op, 1));
	const struct vnpu_tinfo *yi = INFO(s, op->out[0]);
	int64_t adims[VNPU_MAX_RANK], bdims[VNPU_MAX_RANK], ydims[VNPU_MAX_RANK];
	int32_t ar = ai->rank, br = bi->rank, yr = yi->rank, packed = -1;
	struct ctensor a, b, y;

	memcpy(adims, ai->dims, sizeof(adims));
	memcpy(bdims, bi->dims, sizeof(bdims));
	memcpy(ydims, yi->dims, sizeof(ydims));
	if (ar == 1) {
		adims[1] = adims[0];
		adims[0] = 1;
		ar = 2;
		/* Y lost M: put it back as a 1 before N (or last when B is 1-D too). */
		ydims[yr] = ydims[yr - 1];
		ydims[yr - 1] = 1;
		if (bi->rank == 1)
			ydims[yr] = 1;
		yr++;
	}
	if (br == 1) {
		bdims[1] = 1;
		br = 2;
		if (ai->rank != 1)
			ydims[yr++] = 1;
	}
	if (ar > VNPU_MAX_RANK || yr > VNPU_MAX_RANK)
		return UNSUP(s, "rank above %d", VNPU_MAX_RANK);
	a = ct_shaped(s, IN(op, 0), ar, adims);
	b = ct_shaped(s, IN(op, 1), br, bdims);
	y = ct_shaped(s, op->out[0], yr, ydims);
	if (br == 2 && cs_is_const(s, IN(op, 1)) && bi->type == VNPU_TYPE_F32 && !s->opt.no_packing &&
	    bi->rank == 2) {
		vnpu_status st = cl_pack_gemm_b(s, IN(op, 1), false, &packed);

		if (st && st != VNPU_UNSUPPORTED)
			return st;
	}
	return gemm_layer(s, op, a, b, packed, op->bias, 1.0f, 1.0f, y);
}

/* Spatial attributes of Conv/Pool for 1-D and 2-D, SAME pads made explicit. */
static vnpu_status window_attrs(struct cstate *s, const struct cop *op, int32_t x, int32_t y,
				const int64_t *kernel, uint32_t *k, uint32_t *stride,
				uint32_t *dil, uint32_t *pb, uint32_t *pe)
{
	const struct vnpu_node *n = N(op);
	const struct vnpu_attr *sa = vnpu_node_attr(n, "strides"), *da = vnpu_node_attr(n, "dilations");
	const struct vnpu_attr *pa = vnpu_node_attr(n, "pads");
	const char *autopad = vnpu_attr_str(n, "auto_pad", "NOTSET");
	int32_t nsp = rank_of(s, x) - 2;

	if (nsp < 1 || nsp > 2)
		return UNSUP(s, "%d-D windows (only 1-D and 2-D)", nsp);
	for (int32_t d = 0; d < 2; d++) {
		k[d] = stride[d] = dil[d] = 1;
		pb[d] = pe[d] = 0;
	}
	for (int32_t d = 0; d < nsp; d++) {
		int32_t o = d + 2 - nsp;	/* 1-D uses [1] */
		int64_t in = INFO(s, x)->dims[2 + d], out = INFO(s, y)->dims[2 + d];
		int64_t st = sa && sa->n == (size_t)nsp ? sa->ints[d] : 1;
		int64_t dl = da && da->n == (size_t)nsp ? da->ints[d] : 1;

		k[o] = (uint32_t)kernel[d];
		stride[o] = (uint32_t)st;
		dil[o] = (uint32_t)dl;
		if (!strcmp(autopad, "SAME_UPPER") || !strcmp(autopad, "SAME_LOWER")) {
			int64_t total = (out - 1) * st + (kernel[d] - 1) * dl + 1 - in;

			total = total < 0 ? 0 : total;
			pb[o] = (uint32_t)(!strcmp(autopad, "SAME_UPPER") ? total / 2 : total - total / 2);
			pe[o] = (uint32_t)(total - pb[o]);
		} else if (pa && pa->n == (size_t)nsp * 2 && strcmp(autopad, "VALID")) {
			pb[o] = (uint32_t)pa->ints[d];
			pe[o] = (uint32_t)pa->ints[d + nsp];
		}
	}
	return VNPU_OK;
}

vnpu_status cl_conv_attrs(struct cstate *s, const struct cop *op, int32_t x, int32_t w, int32_t y,
			  struct vnpu_layer_conv *attr)
{
	const struct vnpu_tinfo *wi = INFO(s, w);
	int32_t nsp = wi->rank - 2;
	int64_t kernel[2];

	memset(attr, 0, sizeof(*attr));
	attr->act = op->act;
	attr->group = (uint32_t)vnpu_attr_int(N(op), "group", 1);
	if (nsp < 1 || nsp > 2)
		return UNSUP(s, "%d-D convolution (only 1-D and 2-D)", nsp);
	for (int32_t d = 0; d < nsp; d++)
		kernel[d] = wi->dims[2 + d];
	return window_attrs(s, op, x, y, kernel, attr->kernel, attr->stride, attr->dilation,
			    attr->pad_begin, attr->pad_end);
}

static vnpu_status lower_conv(struct cstate *s, struct cop *op)
{
	const struct vnpu_tinfo *wi = INFO(s, IN(op, 1));
	struct vnpu_layer_conv attr;
	int64_t group = vnpu_attr_int(N(op), "group", 1);
	int32_t bias = IN(op, 2) >= 0 ? IN(op, 2) : op->bias, packed = -1;
	struct ctensor t[5];
	uint32_t n = 0;
	vnpu_status st = cl_conv_attrs(s, op, IN(op, 0), IN(op, 1), op->out[0], &attr);

	if (st)
		return st;
	t[n++] = ct_dense(s, IN(op, 0));
	if (cs_is_const(s, IN(op, 1)) && wi->type == VNPU_TYPE_F32 && !s->opt.no_packing) {
		uint64_t rows = (uint64_t)(wi->dims[0] / group);
		uint64_t cols = (uint64_t)(vnpu_tinfo_elems(wi) / wi->dims[0]);
		uint64_t size = vnpu_eng_packed_size(VNPU_PACK_CONV_W, (uint64_t)group, rows, cols);
		float *buf = size ? calloc(size, sizeof(float)) : NULL;
		int64_t psize = (int64_t)size;

		if (size && !buf)
			return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory packing weights");
		if (buf && !vnpu_eng_pack(VNPU_PACK_CONV_W, wi->data, (uint64_t)group, rows, cols, buf)) {
			st = cs_add_const(s, VNPU_TYPE_F32, 1, &psize, buf, &packed);
			if (st)
				return st;
		} else {
			free(buf);
		}
	}
	if (packed >= 0) {
		t[n++] = ct_dense(s, packed);
		attr.flags |= VNPU_LAYER_F_PACKED;
	} else {
		t[n++] = ct_dense(s, IN(op, 1));
	}
	if (bias >= 0) {
		int64_t m = wi->dims[0];

		t[n++] = ct_shaped(s, bias, 1, &m);
		attr.flags |= VNPU_LAYER_F_BIAS;
	}
	if (op->residual >= 0) {
		t[n++] = ct_dense(s, op->residual);
		attr.flags |= VNPU_LAYER_F_RESIDUAL;
	}
	t[n++] = ct_dense(s, op->out[0]);
	return cl_layer(s, VNPU_LAYER_CONV, t, n, &attr, sizeof(attr));
}


/* ConvTranspose's weights W [C, M/g, K...] as a convolution's: per group
 * the channel dims swapped and the kernel flipped, W' [M, C/g, K...]. A
 * constant is transformed here; otherwise a copy and reversing gathers. */
static vnpu_status deconv_weights(struct cstate *s, int32_t w, int64_t group, int32_t *out)
{
	const struct vnpu_tinfo *wi = INFO(s, w);
	int32_t r = wi->rank, nsp = r - 2;
	int64_t cg = wi->dims[0] / group, mg = wi->dims[1], kk = 1, dims[VNPU_MAX_RANK];
	struct ctensor src, dst;
	vnpu_status st;

	for (int32_t d = 0; d < nsp; d++)
		kk *= wi->dims[2 + d];
	memcpy(dims, wi->dims, sizeof(dims));
	dims[0] = mg * group;
	dims[1] = cg;
	if (cs_is_const(s, w) && wi->type == VNPU_TYPE_F32) {
		const float *src_w = wi->data;
		float *nw = malloc((size_t)(dims[0] * cg * kk + 1) * sizeof(float));

		if (!nw)
			return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
		for (int64_t g = 0; g < group; g++)
			for (int64_t m = 0; m < mg; m++)
				for (int64_t c = 0; c < cg; c++)
					for (int64_t k = 0; k < kk; k++)
						nw[((g * mg + m) * cg + c) * kk + k] =
							src_w[((g * cg + c) * mg + m) * kk + kk - 1 - k];
		return cs_add_const(s, VNPU_TYPE_F32, r, dims, nw, out);
	}
	/* dst [g, Mg, Cg, K] from src W [g, Cg, Mg, K] with the middle swapped. */
	st = cs_add_temp(s, wi->type, r, dims, out);
	if (st)
		return st;
	dst = ct_dense(s, *out);
	src = ct_dense(s, w);
	{
		struct ctensor d5 = dst, s5 = src;

		d5.rank = s5.rank = 3 + 1;
		d5.dims[0] = s5.dims[0] = group;
		d5.dims[1] = s5.dims[1] = mg;
		d5.dims[2] = s5.dims[2] = cg;
		d5.dims[3] = s5.dims[3] = kk;
		d5.strides[3] = 1;
		d5.strides[2] = kk;
		d5.strides[1] = cg * kk;
		d5.strides[0] = mg * cg * kk;
		s5.strides[3] = 1;
		s5.strides[2] = mg * kk;
		s5.strides[1] = kk;
		s5.strides[0] = cg * mg * kk;
		for (int32_t d = 4; d < VNPU_MAX_DIMS; d++)
			d5.dims[d] = s5.dims[d] = d5.strides[d] = s5.strides[d] = 0;
		st = cl_copy(s, d5, s5);
		if (st)
			return st;
	}
	for (int32_t d = 0; d < nsp; d++) {
		int64_t len = wi->dims[2 + d];

		if (len > 1) {
			st = cl_gather_steps(s, *out, 2 + d, len - 1, -1, len, out);
			if (st)
				return st;
		}
	}
	return VNPU_OK;
}

static vnpu_status lower_conv_transpose(struct cstate *s, struct cop *op)
{
	const struct vnpu_tinfo *xi = INFO(s, IN(op, 0)), *wi = INFO(s, IN(op, 1));
	const struct vnpu_tinfo *yi = INFO(s, op->out[0]);
	const struct vnpu_node *n = N(op);
	const struct vnpu_attr *sa = vnpu_node_attr(n, "strides"), *da = vnpu_node_attr(n, "dilations");
	const struct vnpu_attr *pa = vnpu_node_attr(n, "pads"), *opa = vnpu_node_attr(n, "output_padding");
	const char *autopad = vnpu_attr_str(n, "auto_pad", "NOTSET");
	int64_t group = vnpu_attr_int(n, "group", 1), zdims[VNPU_MAX_RANK];
	int32_t nsp = xi->rank - 2, x = IN(op, 0), w, bias = IN(op, 2);
	struct vnpu_layer_conv attr = { .group = (uint32_t)group, .act = op->act };
	bool zeros = false;
	struct ctensor t[4];
	uint32_t nt = 0;
	vnpu_status st;

	if (nsp < 1 || nsp > 2)
		return UNSUP(s, "%d-D transposed convolution (only 1-D and 2-D)", nsp);
	memcpy(zdims, xi->dims, sizeof(zdims));
	for (int32_t d = 0; d < 2; d++)
		attr.kernel[d] = attr.stride[d] = attr.dilation[d] = 1;
	for (int32_t d = 0; d < nsp; d++) {
		int32_t o = d + 2 - nsp;
		int64_t st_ = sa && sa->n == (size_t)nsp ? sa->ints[d] : 1;
		int64_t dl = da && da->n == (size_t)nsp ? da->ints[d] : 1;
		int64_t k = wi->dims[2 + d], in = xi->dims[2 + d], out = yi->dims[2 + d];
		int64_t opad = opa && opa->n == (size_t)nsp ? opa->ints[d] : 0;
		int64_t total = st_ * (in - 1) + opad + (k - 1) * dl + 1 - out, pb, pe;

		if (pa && pa->n == (size_t)nsp * 2 && !strcmp(autopad, "NOTSET")) {
			pb = pa->ints[d];
		} else {
			/* Floor halves: a negative total (output_shape larger
			 * than the natural size) pads at the end. */
			int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);

			pb = !strcmp(autopad, "SAME_UPPER") ? half : total - half;
		}
		/* The zero-inserted input, padded by dl * (k - 1) minus the
		 * pads; the end pad is what the output extent leaves. */
		zdims[2 + d] = (in - 1) * st_ + 1;
		zeros |= st_ > 1;
		pb = dl * (k - 1) - pb;
		pe = out + dl * (k - 1) - zdims[2 + d] - pb;
		if (pb < 0 || pe < 0)
			return UNSUP(s, "pads larger than the kernel");
		attr.kernel[o] = (uint32_t)k;
		attr.dilation[o] = (uint32_t)dl;
		attr.pad_begin[o] = (uint32_t)pb;
		attr.pad_end[o] = (uint32_t)pe;
	}
	st = deconv_weights(s, IN(op, 1), group, &w);
	if (st)
		return st;
	if (zeros) {
		struct ctensor dst;
		int32_t z;

		st = cs_add_temp(s, xi->type, xi->rank, zdims, &z);
		if (!st)
			st = cl_fill(s, ct_dense(s, z), 0);
		if (st)
			return st;
		dst = ct_dense(s, z);
		for (int32_t d = 0; d < nsp; d++) {
			dst.dims[2 + d] = xi->dims[2 + d];
			dst.strides[2 + d] *= sa->ints[d];
		}
		st = cl_copy(s, dst, ct_dense(s, x));
		if (st)
			return st;
		x = z;
	}
	t[nt++] = ct_dense(s, x);
	t[nt++] = ct_dense(s, w);
	if (bias >= 0) {
		t[nt++] = ct_dense(s, bias);
		attr.flags |= VNPU_LAYER_F_BIAS;
	}
	t[nt++] = ct_dense(s, op->out[0]);
	return cl_layer(s, VNPU_LAYER_CONV, t, nt, &attr, sizeof(attr));
}

static vnpu_status lower_pool(struct cstate *s, struct cop *op)
{
	const char *name = N(op)->op;
	const struct vnpu_tinfo *xi = INFO(s, IN(op, 0));
	struct vnpu_layer_pool attr = { 0 };
	int64_t kernel[2] = { 1, 1 };
	int32_t nsp = xi->rank - 2;
	struct ctensor t[2];
	vnpu_status st;

	if (nsp < 1 || nsp > 2)
		return UNSUP(s, "%d-D pooling (only 1-D and 2-D)", nsp);
	if (op->num_out > 1 && op->out[1] >= 0)
		return UNSUP(s, "the Indices output is not supported");
	if (strstr(name, "Max"))
		attr.mode = VNPU_POOL_MAX;
	else if (strstr(name, "Average"))
		attr.mode = VNPU_POOL_AVG;
	else
		attr.mode = VNPU_POOL_LP;
	if (attr.mode == VNPU_POOL_LP)
		attr.p = (uint32_t)vnpu_attr_int(N(op), "p", 2);
	if (!strncmp(name, "Global", 6)) {
		for (int32_t d = 0; d < nsp; d++)
			attr.kernel[d + 2 - nsp] = (uint32_t)xi->dims[2 + d];
		attr.kernel[0] = nsp == 1 ? 1 : attr.kernel[0];
		attr.stride[0] = attr.stride[1] = attr.dilation[0] = attr.dilation[1] = 1;
	} else {
		const struct vnpu_attr *ks = vnpu_node_attr(N(op), "kernel_shape");

		for (int32_t d = 0; d < nsp; d++)
			kernel[d] = ks->ints[d];
		st = window_attrs(s, op, IN(op, 0), op->out[0], kernel, attr.kernel, attr.stride,
				  attr.dilation, attr.pad_begin, attr.pad_end);
		if (st)
			return st;
		if (vnpu_attr_int(N(op), "ceil_mode", 0))
			attr.flags |= VNPU_POOL_F_CEIL;
		if (vnpu_attr_int(N(op), "count_include_pad", 0))
			attr.flags |= VNPU_POOL_F_COUNT_PAD;
	}
	t[0] = ct_dense(s, IN(op, 0));
	t[1] = ct_dense(s, op->out[0]);
	return cl_layer(s, VNPU_LAYER_POOL, t, 2, &attr, sizeof(attr));
}

/* ---- normalizations, softmax, reductions ---- */

static vnpu_status lower_softmax(struct cstate *s, struct cop *op)
{
	const struct vnpu_tinfo *xi = INFO(s, IN(op, 0));
	struct vnpu_layer_softmax attr = { 0 };
	int64_t axis = vnpu_attr_int(N(op), "axis", s->m->opset >= 13 ? -1 : 1);
	struct ctensor t[2];

	axis = axis < 0 ? axis + xi->rank : axis;
	if (!strcmp(N(op)->op, "LogSoftmax"))
		attr.mode = VNPU_LOG_SOFTMAX;
	else if (!strcmp(N(op)->op, "Hardmax"))
		attr.mode = VNPU_HARDMAX;
	if (s->m->opset < 13) {
		int64_t dims[2] = { 1, 1 };

		for (int32_t d = 0; d < xi->rank; d++)
			dims[d < axis ? 0 : 1] *= xi->dims[d];
		t[0] = ct_shaped(s, IN(op, 0), 2, dims);
		t[1] = ct_shaped(s, op->out[0], 2, dims);
		attr.axis = 1;
	} else {
		t[0] = ct_dense(s, IN(op, 0));
		t[1] = ct_dense(s, op->out[0]);
		attr.axis = (uint32_t)axis;
	}
	return cl_layer(s, VNPU_LAYER_SOFTMAX, t, 2, &attr, sizeof(attr));
}

static vnpu_status reduce(struct cstate *s, uint32_t func, int32_t x, int32_t y, uint32_t mask);

/* LayerNormalization's Mean and InvStdDev outputs, when used:
 * mean = E[x], inv = 1 / sqrt(E[(x - mean)^2] + epsilon). */
static vnpu_status layer_norm_stats(struct cstate *s, struct cop *op, uint32_t axis, float eps)
{
	const struct vnpu_tinfo *xi = INFO(s, IN(op, 0));
	int32_t mean = op->num_out > 1 ? op->out[1] : -1, inv = op->num_out > 2 ? op->out[2] : -1;
	int32_t d, d2, var, ve, sd, e;
	uint32_t mask = ((1u << xi->rank) - 1) & ~((1u << axis) - 1);
	int64_t rdims[VNPU_MAX_RANK];
	struct vnpu_layer_act act = { .func = VNPU_ACT_SQRT };
	vnpu_status st = VNPU_OK;

	if (mean < 0 && inv < 0)
		return VNPU_OK;
	if (xi->type != VNPU_TYPE_F32 || (mean >= 0 && INFO(s, mean)->type != VNPU_TYPE_F32) ||
	    (inv >= 0 && INFO(s, inv)->type != VNPU_TYPE_F32))
		return UNSUP(s, "statistics outputs other than f32");
	for (int32_t k = 0; k < xi->rank; k++)
		rdims[k] = mask >> k & 1 ? 1 : xi->dims[k];
	if (mean < 0)
		st = cs_add_temp(s, VNPU_TYPE_F32, xi->rank, rdims, &mean);
	if (!st)
		st = reduce(s, VNPU_REDUCE_MEAN, IN(op, 0), mean, mask);
	if (inv < 0 || st)
		return st;
	st = cs_add_temp(s, VNPU_TYPE_F32, xi->rank, xi->dims, &d);
	if (!st)
		st = cs_add_temp(s, VNPU_TYPE_F32, xi->rank, xi->dims, &d2);
	if (!st)
		st = cs_add_temp(s, VNPU_TYPE_F32, xi->rank, rdims, &var);
	if (!st)
		st = cs_add_temp(s, VNPU_TYPE_F32, xi->rank, rdims, &ve);
	if (!st)
		st = cs_add_temp(s, VNPU_TYPE_F32, xi->rank, rdims, &sd);
	if (!st)
		st = cl_const_scalar(s, VNPU_TYPE_F32, eps, &e);
	if (!st)
		st = cl_binary(s, VNPU_BIN_SUB, IN(op, 0), mean, d);
	if (!st)
		st = cl_binary(s, VNPU_BIN_MUL, d, d, d2);
	if (!st)
		st = reduce(s, VNPU_REDUCE_MEAN, d2, var, mask);
	if (!st)
		st = cl_binary(s, VNPU_BIN_ADD, var, e, ve);
	if (!st)
		st = cl_unary(s, ve, sd, &act);
	act.func = VNPU_ACT_RECIPROCAL;
	return st ? st : cl_unary(s, sd, inv, &act);
}

/* BatchNormalization with training_mode: normalized with the batch's own
 * mean and (population) variance; the running statistics blend in with
 * momentum. */
static vnpu_status batch_norm_training(struct cstate *s, struct cop *op)
{
	const struct vnpu_tinfo *xi = INFO(s, IN(op, 0));
	float eps = vnpu_attr_float(N(op), "epsilon", 1e-5f), mom = vnpu_attr_float(N(op), "momentum", 0.9f);
	uint32_t mask = ((1u << xi->rank) - 1) & ~2u;
	int64_t cdims[VNPU_MAX_RANK], ch = xi->dims[1];
	int32_t mean, d, d2, var, e, ve, sd, norm, t, mc, omc;
	struct vnpu_layer_act sqrt_act = { .func = VNPU_ACT_SQRT };
	vnpu_status st;

	if (xi->type != VNPU_TYPE_F32 || xi->rank < 2)
		return UNSUP(s, "training mode on other than f32 [N, C, ...]");
	for (int32_t k = 0; k < xi->rank; k++)
		cdims[k] = k == 1 ? ch : 1;
	st = cs_add_temp(s, VNPU_TYPE_F32, xi->rank, cdims, &mean);
	if (!st)
		st = cs_add_temp(s, VNPU_TYPE_F32, xi->rank, xi->dims, &d);
	if (!st)
		st = cs_add_temp(s, VNPU_TYPE_F32, xi->rank, xi->dims, &d2);
	if (!st)
		st = cs_add_temp(s, VNPU_TYPE_F32, xi->rank, cdims, &var);
	if (!st)
		st = cs_add_temp(s, VNPU_TYPE_F32, xi->rank, cdims, &ve);
	if (!st)
		st = cs_add_temp(s, VNPU_TYPE_F32, xi->rank, cdims, &sd);
	if (!st)
		st = cs_add_temp(s, VNPU_TYPE_F32, xi->rank, xi->dims, &norm);
	if (!st)
		st = cs_add_temp(s, VNPU_TYPE_F32, xi->rank, xi->dims, &t);
	if (!st)
		st = cl_const_scalar(s, VNPU_TYPE_F32, eps, &e);
	if (!st)
		st = reduce(s, VNPU_REDUCE_MEAN, IN(op, 0), mean, mask);
	if (!st)
		st = cl_binary(s, VNPU_BIN_SUB, IN(op, 0), mean, d);
	if (!st)
		st = cl_binary(s, VNPU_BIN_MUL, d, d, d2);
	if (!st)
		st = reduce(s, VNPU_REDUCE_MEAN, d2, var, mask);
	if (!st)
		st = cl_binary(s, VNPU_BIN_ADD, var, e, ve);
	if (!st)
		st = cl_unary(s, ve, sd, &sqrt_act);
	if (st)
		return st;
	/* y = d / sd * scale + bias, scale and bias [C] along axis 1 */
	{
		struct ctensor sc = ct_shaped(s, IN(op, 1), xi->rank - 1, cdims + 1);
		struct ctensor bi = ct_shaped(s, IN(op, 2), xi->rank - 1, cdims + 1);

		st = cl_binary(s, VNPU_BIN_DIV, d, sd, norm);
		if (!st)
			st = cl_binary_t(s, VNPU_BIN_MUL, ct_dense(s, norm), sc, ct_dense(s, t));
		if (!st)
			st = cl_binary_t(s, VNPU_BIN_ADD, ct_dense(s, t), bi, ct_dense(s, op->out[0]));
	}
	/* running = input * momentum + current * (1 - momentum) */
	if (!st)
		st = cl_const_scalar(s, VNPU_TYPE_F32, mom, &mc);
	if (!st)
		st = cl_const_scalar(s, VNPU_TYPE_F32, 1.0 - mom, &omc);
	for (uint32_t o = 1; !st && o < 3 && o < op->num_out; o++) {
		int32_t cur = o == 1 ? mean : var, a, b;
		struct ctensor cv;

		if (op->out[o] < 0)
			continue;
		st = cs_add_temp(s, VNPU_TYPE_F32, 1, &ch, &a);
		if (!st)
			st = cs_add_temp(s, VNPU_TYPE_F32, 1, &ch, &b);
		if (!st)
			st = cl_binary(s, VNPU_BIN_MUL, IN(op, 2 + o), mc, a);
		cv = ct_shaped(s, cur, 1, &ch);
		if (!st)
			st = cl_binary_t(s, VNPU_BIN_MUL, cv, ct_dense(s, omc), ct_dense(s, b));
		if (!st)
			st = cl_binary(s, VNPU_BIN_ADD, a, b, op->out[o]);
	}
	return st;
}

static vnpu_status lower_norm(struct cstate *s, struct cop *op)
{
	const char *name = N(op)->op;
	struct vnpu_layer_norm attr = { 0 };
	struct ctensor t[6];
	uint32_t n = 0, num_in;
	int32_t rank = rank_of(s, IN(op, 0));

	attr.epsilon = f32_bits(vnpu_attr_float(N(op), "epsilon", 1e-5f));
	for (uint32_t o = 1; o < op->num_out; o++)
		if (op->out[o] >= 0 && strcmp(name, "LayerNormalization") &&
		    !vnpu_attr_int(N(op), "training_mode", 0))
			return UNSUP(s, "only the first output is supported");
	if (!strcmp(name, "BatchNormalization")) {
		if (vnpu_attr_int(N(op), "training_mode", 0))
			return batch_norm_training(s, op);
		attr.mode = VNPU_NORM_BATCH;
		num_in = 5;
	} else if (!strcmp(name, "InstanceNormalization")) {
		attr.mode = VNPU_NORM_INSTANCE;
		num_in = 3;
	} else if (!strcmp(name, "LayerNormalization")) {
		int64_t axis = vnpu_attr_int(N(op), "axis", -1);
		vnpu_status st;

		attr.mode = VNPU_NORM_LAYER;
		attr.axis = (uint32_t)(axis < 0 ? axis + rank : axis);
		st = layer_norm_stats(s, op, attr.axis, vnpu_attr_float(N(op), "epsilon", 1e-5f));
		if (st)
			return st;
		num_in = IN(op, 2) >= 0 ? 3 : 2;
		if (num_in == 3)
			attr.flags |= VNPU_LAYER_F_BIAS;
	} else if (!strcmp(name, "LpNormalization")) {
		int64_t axis = vnpu_attr_int(N(op), "axis", -1);

		attr.mode = VNPU_NORM_LP;
		attr.axis = (uint32_t)(axis < 0 ? axis + rank : axis);
		attr.p = (uint32_t)vnpu_attr_int(N(op), "p", 2);
		attr.epsilon = 0;
		num_in = 1;
	} else {
		attr.mode = VNPU_NORM_LRN;
		attr.size = (uint32_t)vnpu_attr_int(N(op), "size", 0);
		attr.alpha = f32_bits(vnpu_attr_float(N(op), "alpha", 1e-4f));
		attr.beta = f32_bits(vnpu_attr_float(N(op), "beta", 0.75f));
		attr.bias = f32_bits(vnpu_attr_float(N(op), "bias", 1.0f));
		attr.epsilon = 0;
		num_in = 1;
	}
	for (uint32_t i = 0; i < num_in; i++) {
		if (IN(op, i) < 0)
			return UNSUP(s, "input %u is missing", i);
		t[n++] = ct_dense(s, IN(op, i));
	}
	t[n++] = ct_dense(s, op->out[0]);
	return cl_layer(s, VNPU_LAYER_NORM, t, n, &attr, sizeof(attr));
}

static const struct bin_map reduce_maps[] = {
	{ "ReduceSum", VNPU_REDUCE_SUM }, { "ReduceMean", VNPU_REDUCE_MEAN },
	{ "ReduceMax", VNPU_REDUCE_MAX }, { "ReduceMin", VNPU_REDUCE_MIN },
	{ "ReduceProd", VNPU_REDUCE_PROD }, { "ReduceL1", VNPU_REDUCE_L1 },
	{ "ReduceL2", VNPU_REDUCE_L2 }, { "ReduceLogSum", VNPU_REDUCE_LOG_SUM },
	{ "ReduceLogSumExp", VNPU_REDUCE_LOG_SUM_EXP },
	{ "ReduceSumSquare", VNPU_REDUCE_SUM_SQUARE },
};

/* The output viewed with the input's rank and 1 on reduced axes. */
static struct ctensor reduced_view(const struct cstate *s, int32_t x, int32_t y, uint32_t mask)
{
	const struct vnpu_tinfo *xi = INFO(s, x);
	int64_t dims[VNPU_MAX_RANK];

	for (int32_t d = 0; d < xi->rank; d++)
		dims[d] = mask >> d & 1 ? 1 : xi->dims[d];
	return ct_shaped(s, y, xi->rank, dims);
}

static vnpu_status lower_reduce(struct cstate *s, struct cop *op, uint32_t func)
{
	const struct vnpu_tinfo *xi = INFO(s, IN(op, 0));
	struct vnpu_layer_reduce attr = { .func = func };
	int64_t axes[VNPU_MAX_RANK];
	bool present;
	int32_t n = const_ints(s, op, "axes", 1, axes, VNPU_MAX_RANK, &present);

	if (n < 0)
		return UNSUP(s, "axes computed at run time");
	if (!n && vnpu_attr_int(N(op), "noop_with_empty_axes", 0))
		return cl_copy(s, ct_dense(s, op->out[0]), ct_dense(s, IN(op, 0)));
	for (int32_t i = 0; i < n; i++)
		attr.axes |= 1u << (axes[i] < 0 ? axes[i] + xi->rank : axes[i]);
	if (!n)
		attr.axes = (1u << xi->rank) - 1;
	return reduce(s, func, IN(op, 0), op->out[0], attr.axes);
}

static vnpu_status reduce(struct cstate *s, uint32_t func, int32_t x, int32_t y, uint32_t mask)
{
	struct vnpu_layer_reduce attr = { .func = func, .axes = mask };
	struct ctensor t[2] = { ct_dense(s, x), reduced_view(s, x, y, mask) };

	return cl_layer(s, VNPU_LAYER_REDUCE, t, 2, &attr, sizeof(attr));
}

static vnpu_status lower_argreduce(struct cstate *s, struct cop *op)
{
	const struct vnpu_tinfo *xi = INFO(s, IN(op, 0));
	struct vnpu_layer_argreduce attr = { .min = !strcmp(N(op)->op, "ArgMin") };
	int64_t axis = vnpu_attr_int(N(op), "axis", 0);
	struct ctensor t[2];

	axis = axis < 0 ? axis + xi->rank : axis;
	attr.axis = (uint32_t)axis;
	if (vnpu_attr_int(N(op), "select_last_index", 0))
		attr.flags |= VNPU_ARG_F_LAST;
	t[0] = ct_dense(s, IN(op, 0));
	t[1] = reduced_view(s, IN(op, 0), op->out[0], 1u << axis);
	return cl_layer(s, VNPU_LAYER_ARGREDUCE, t, 2, &attr, sizeof(attr));
}

/* ---- resize, pad, gather ---- */

static int str_index(const char *s, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(s, names[i]))
			return i;
	return -1;
}

static vnpu_status lower_resize(struct cstate *s, struct cop *op)
{
	static const char *const coords[] = {
		"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel",
		"tf_half_pixel_for_nearest", "half_pixel_symmetric",
	};
	static const char *const nearest[] = {
		"round_prefer_floor", "round_prefer_ceil", "floor", "ceil",
	};
	const struct vnpu_node *n = N(op);
	const struct vnpu_tinfo *xi = INFO(s, IN(op, 0));
	struct vnpu_layer_resize attr = { 0 };
	const char *mode = vnpu_attr_str(n, "mode", "nearest");
	bool upsample = !strcmp(n->op, "Upsample");
	int32_t scales = upsample || s->m->opset < 11 ? IN(op, 1) : IN(op, 2);
	const char *coord = upsample || s->m->opset < 11 ? "asymmetric" :
			    vnpu_attr_str(n, "coordinate_transformation_mode", "half_pixel");
	int c, k;
	struct ctensor t[2];

	if (!strcmp(mode, "nearest")) {
		attr.mode = VNPU_RESIZE_NEAREST;
		k = upsample || s->m->opset < 11 ? 2 :
		    str_index(vnpu_attr_str(n, "nearest_mode", "round_prefer_floor"), nearest, 4);
		if (k < 0)
			return UNSUP(s, "nearest_mode '%s'", vnpu_attr_str(n, "nearest_mode", ""));
		attr.nearest = (uint32_t)k;
	} else if (!strcmp(mode, "linear") || !strcmp(mode, "bilinear")) {
		attr.mode = VNPU_RESIZE_LINEAR;
	} else {
		return UNSUP(s, "mode '%s'", mode);
	}
	c = str_index(coord, coords, 6);
	if (c < 0)
		return UNSUP(s, "coordinate_transformation_mode '%s'", coord);
	attr.coord = (uint32_t)c;
	if (vnpu_attr_int(n, "exclude_outside", 0))
		return UNSUP(s, "exclude_outside");
	if (scales >= 0 && cs_is_const(s, scales) && vnpu_tinfo_elems(INFO(s, scales)) == xi->rank)
		for (int32_t d = 0; d < xi->rank; d++)
			attr.scale[d] = f32_bits((float)vnpu_elem_get_f(INFO(s, scales)->data,
									 INFO(s, scales)->type, d));
	if (upsample && vnpu_node_attr(n, "scales")) {
		const struct vnpu_attr *a = vnpu_node_attr(n, "scales");

		for (int32_t d = 0; d < xi->rank && (size_t)d < a->n; d++)
			attr.scale[d] = f32_bits(a->floats[d]);
	}
	t[0] = ct_dense(s, IN(op, 0));
	t[1] = ct_dense(s, op->out[0]);
	return cl_layer(s, VNPU_LAYER_RESIZE, t, 2, &attr, sizeof(attr));
}

static vnpu_status lower_pad(struct cstate *s, struct cop *op)
{
	static const char *const modes[] = { "constant", "reflect", "edge", "wrap" };
	const struct vnpu_tinfo *xi = INFO(s, IN(op, 0));
	struct vnpu_layer_pad attr = { 0 };
	int64_t pads[VNPU_MAX_RANK * 2];
	bool present;
	int32_t n = const_ints(s, op, "pads", 1, pads, VNPU_MAX_RANK * 2, &present);
	int m = str_index(vnpu_attr_str(N(op), "mode", "constant"), modes, 4);
	struct ctensor t[2];

	if (n < 0 || IN(op, 3) >= 0)
		return UNSUP(s, "pads computed at run time or axes given");
	if (m < 0)
		return UNSUP(s, "mode '%s'", vnpu_attr_str(N(op), "mode", ""));
	attr.mode = (uint32_t)m;
	for (int32_t d = 0; d < xi->rank; d++)
		attr.begin[d] = pads[d];
	if (m == VNPU_PAD_CONSTANT) {
		uint64_t v = 0;

		if (s->m->opset < 11) {
			vnpu_elem_set_f(&v, xi->type, 0, vnpu_attr_float(N(op), "value", 0.0f));
		} else if (IN(op, 2) >= 0) {
			const struct vnpu_tinfo *ci = INFO(s, IN(op, 2));

			if (!ci->data)
				return UNSUP(s, "pad value computed at run time");
			memcpy(&v, ci->data, vnpu_element_type_size(ci->type));
		}
		attr.value = v;
	}
	t[0] = ct_dense(s, IN(op, 0));
	t[1] = ct_dense(s, op->out[0]);
	return cl_layer(s, VNPU_LAYER_PAD, t, 2, &attr, sizeof(attr));
}

static vnpu_status lower_gather(struct cstate *s, struct cop *op)
{
	struct vnpu_layer_gather attr = { 0 };
	int64_t axis = vnpu_attr_int(N(op), "axis", 0);
	struct ctensor t[3] = { ct_dense(s, IN(op, 0)), ct_dense(s, IN(op, 1)),
				ct_dense(s, op->out[0]) };

	axis = axis < 0 ? axis + rank_of(s, IN(op, 0)) : axis;
	attr.axis = (uint32_t)axis;
	return cl_layer(s, strcmp(N(op)->op, "Gather") ? VNPU_LAYER_GATHER_ELEMENTS : VNPU_LAYER_GATHER,
		     t, 3, &attr, sizeof(attr));
}

/* ---- data movement as copies ---- */

static vnpu_status lower_transpose(struct cstate *s, struct cop *op)
{
	const struct vnpu_tinfo *xi = INFO(s, IN(op, 0));
	const struct vnpu_attr *pa = vnpu_node_attr(N(op), "perm");
	struct ctensor x = ct_dense(s, IN(op, 0)), src = x;

	for (int32_t d = 0; d < xi->rank; d++) {
		int64_t p = pa ? pa->ints[d] : xi->rank - 1 - d;

		src.dims[d] = x.dims[p];
		src.strides[d] = x.strides[p];
	}
	return cl_copy(s, ct_dense(s, op->out[0]), src);
}

/* Gather @len indices start, start + step, ... of @x along @axis into a new
 * temporary (how a negative slice step is done: copies only go forward). */
vnpu_status cl_gather_steps(struct cstate *s, int32_t x, int64_t axis, int64_t start,
				int64_t step, int64_t len, int32_t *out)
{
	struct vnpu_layer_gather attr = { .axis = (uint32_t)axis };
	const struct vnpu_tinfo *xi = INFO(s, x);
	int64_t dims[VNPU_MAX_RANK], *idx = malloc((size_t)(len + 1) * sizeof(int64_t));
	struct ctensor t[3];
	int32_t iv;
	vnpu_status st;

	if (!idx)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	for (int64_t i = 0; i < len; i++)
		idx[i] = start + i * step;
	st = cs_add_const(s, VNPU_TYPE_I64, 1, &len, idx, &iv);
	if (st)
		return st;
	xi = INFO(s, x);
	memcpy(dims, xi->dims, sizeof(dims));
	dims[axis] = len;
	st = cs_add_temp(s, xi->type, xi->rank, dims, out);
	if (st)
		return st;
	t[0] = ct_dense(s, x);
	t[1] = ct_dense(s, iv);
	t[2] = ct_dense(s, *out);
	return cl_layer(s, VNPU_LAYER_GATHER, t, 3, &attr, sizeof(attr));
}

static vnpu_status lower_slice(struct cstate *s, struct cop *op)
{
	const struct vnpu_tinfo *xi = INFO(s, IN(op, 0));
	int64_t starts[VNPU_MAX_RANK], ends[VNPU_MAX_RANK], axes[VNPU_MAX_RANK], steps[VNPU_MAX_RANK];
	bool p1, p2, p3, p4;
	int32_t n = const_ints(s, op, "starts", 1, starts, VNPU_MAX_RANK, &p1);
	int32_t ne = const_ints(s, op, "ends", 2, ends, VNPU_MAX_RANK, &p2);
	int32_t na = const_ints(s, op, "axes", 3, axes, VNPU_MAX_RANK, &p3);
	int32_t ns = const_ints(s, op, "steps", 4, steps, VNPU_MAX_RANK, &p4);
	int32_t cur = IN(op, 0);
	struct ctensor src, dst = ct_dense(s, op->out[0]);
	int64_t first[VNPU_MAX_RANK] = { 0 }, stride[VNPU_MAX_RANK];

	if (n < 0 || ne < 0 || na < 0 || ns < 0)
		return UNSUP(s, "starts, ends, axes or steps computed at run time");
	for (int32_t d = 0; d < VNPU_MAX_RANK; d++)
		stride[d] = 1;
	for (int32_t i = 0; i < n; i++) {
		int64_t a = p3 ? axes[i] : i, step = p4 ? steps[i] : 1, len, st;

		a = a < 0 ? a + xi->rank : a;
		len = xi->dims[a];
		st = starts[i] < 0 ? starts[i] + len : starts[i];
		if (step > 0)
			st = st < 0 ? 0 : st > len ? len : st;
		else
			st = st < 0 ? 0 : st > len - 1 ? len - 1 : st;
		if (step < 0 && dst.dims[a]) {
			vnpu_status rc = cl_gather_steps(s, cur, a, st, step, dst.dims[a], &cur);

			if (rc)
				return rc;
			continue;
		}
		first[a] = dst.dims[a] ? st : 0;
		stride[a] = step;
	}
	src = ct_dense(s, cur);
	for (int32_t d = 0; d < xi->rank; d++) {
		src.off += first[d] * src.strides[d];
		src.strides[d] *= stride[d];
		src.dims[d] = dst.dims[d];
	}
	return cl_copy(s, dst, src);
}

static vnpu_status lower_concat(struct cstate *s, struct cop *op)
{
	const struct vnpu_tinfo *yi = INFO(s, op->out[0]);
	int64_t axis = vnpu_attr_int(N(op), "axis", 0), at = 0;
	struct ctensor y = ct_dense(s, op->out[0]);

	axis = axis < 0 ? axis + yi->rank : axis;
	for (uint32_t i = 0; i < op->num_in; i++) {
		struct ctensor x = ct_dense(s, IN(op, i)), dst = y;
		vnpu_status st;

		dst.dims[axis] = x.dims[axis];
		dst.off += at * y.strides[axis];
		at += x.dims[axis];
		st = cl_copy(s, dst, x);
		if (st)
			return st;
	}
	return VNPU_OK;
}

static vnpu_status lower_split(struct cstate *s, struct cop *op)
{
	const struct vnpu_tinfo *xi = INFO(s, IN(op, 0));
	int64_t axis = vnpu_attr_int(N(op), "axis", 0), at = 0;
	struct ctensor x = ct_dense(s, IN(op, 0));

	axis = axis < 0 ? axis + xi->rank : axis;
	for (uint32_t o = 0; o < op->num_out; o++) {
		struct ctensor src = x, y;
		vnpu_status st;

		if (op->out[o] < 0)
			return UNSUP(s, "omitted outputs");
		y = ct_dense(s, op->out[o]);
		src.dims[axis] = y.dims[axis];
		src.off += at * x.strides[axis];
		at += y.dims[axis];
		st = cl_copy(s, y, src);
		if (st)
			return st;
	}
	return VNPU_OK;
}

static vnpu_status lower_expand(struct cstate *s, struct cop *op)
{
	struct ctensor y = ct_dense(s, op->out[0]);

	return cl_copy(s, y, ct_broadcast(ct_dense(s, IN(op, 0)), (int32_t)y.rank, y.dims));
}

/* Tile: Y viewed as [r0, d0, r1, d1, ...] (only repeated axes split) gets X
 * broadcast along the r axes. */
static vnpu_status lower_tile(struct cstate *s, struct cop *op)
{
	struct ctensor x = ct_dense(s, IN(op, 0)), y = ct_dense(s, op->out[0]), dst = y, src = x;
	uint32_t r = 0;

	for (uint32_t d = 0; d < x.rank; d++) {
		int64_t rep = x.dims[d] ? y.dims[d] / x.dims[d] : 1;

		if (rep != 1) {
			if (r >= VNPU_MAX_DIMS)
				return UNSUP(s, "too many tiled axes");
			dst.dims[r] = rep;
			dst.strides[r] = y.strides[d] * x.dims[d];
			src.dims[r] = rep;
			src.strides[r++] = 0;
		}
		if (r >= VNPU_MAX_DIMS)
			return UNSUP(s, "too many tiled axes");
		dst.dims[r] = x.dims[d];
		dst.strides[r] = y.strides[d];
		src.dims[r] = x.dims[d];
		src.strides[r++] = x.strides[d];
	}
	dst.rank = src.rank = r;
	return cl_copy(s, dst, src);
}

/* DepthToSpace / SpaceToDepth as one 6-D strided copy. */
static vnpu_status lower_space_depth(struct cstate *s, struct cop *op)
{
	const struct vnpu_tinfo *xi = INFO(s, IN(op, 0));
	int64_t b = vnpu_attr_int(N(op), "blocksize", 1), n = xi->dims[0], c = xi->dims[1];
	int64_t h = xi->dims[2], w = xi->dims[3];
	struct ctensor x = ct_dense(s, IN(op, 0)), y = ct_dense(s, op->out[0]), src = x, dst;
	bool crd = !strcmp(vnpu_attr_str(N(op), "mode", "DCR"), "CRD");

	if (!strcmp(N(op)->op, "DepthToSpace")) {
		int64_t co = c / (b * b), dims[6] = { n, co, h, b, w, b };
		/* Element (n, co, h, i, w, j) of Y comes from X channel
		 * DCR: (i * b + j) * co + co_idx; CRD: co_idx * b * b + i * b + j. */
		int64_t cs = x.strides[1];

		dst = ct_shaped(s, op->out[0], 6, dims);
		src.rank = 6;
		for (int d = 0; d < 6; d++)
			src.dims[d] = dims[d];
		src.strides[0] = x.strides[0];
		src.strides[1] = crd ? cs * b * b : cs;
		src.strides[2] = x.strides[2];
		src.strides[3] = crd ? cs * b : cs * b * co;
		src.strides[4] = x.strides[3];
		src.strides[5] = crd ? cs : cs * co;
	} else {
		int64_t ho = h / b, wo = w / b, dims[6] = { n, b, b, c, ho, wo };
		/* Y channel (i * b + j) * c + ci at (ho, wo) is X (ci, ho * b + i, wo * b + j). */
		dst = ct_shaped(s, op->out[0], 6, dims);
		src.rank = 6;
		for (int d = 0; d < 6; d++)
			src.dims[d] = dims[d];
		src.strides[0] = x.strides[0];
		src.strides[1] = x.strides[2];
		src.strides[2] = x.strides[3];
		src.strides[3] = x.strides[1];
		src.strides[4] = x.strides[2] * b;
		src.strides[5] = x.strides[3] * b;
	}
	(void)y;
	return cl_copy(s, dst, src);
}

/* A node whose output is a differently shaped view of its input, kept
 * because its output is a model output: a dense copy. */
static vnpu_status lower_view_copy(struct cstate *s, struct cop *op, int32_t src)
{
	const struct vnpu_tinfo *yi = INFO(s, op->out[0]);
	vnpu_status st = cl_copy(s, ct_dense(s, op->out[0]), ct_shaped(s, src, yi->rank, yi->dims));

	if (!st && op->kind == COP_NODE && !strcmp(N(op)->op, "Dropout") && op->num_out > 1 &&
	    op->out[1] >= 0)
		st = cl_fill(s, ct_dense(s, op->out[1]), 1);
	return st;
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
	const struct vnpu_tinfo *i = INFO(s, op->in[0]);
	int32_t t;
	vnpu_status st = cs_add_temp(s, i->type, i->rank, i->dims, &t);

	if (st)
		return st;
	s->vals[t].out_index = op->out[0];
	return cl_copy(s, ct_dense(s, t), ct_dense(s, op->in[0]));
}

/* Trilu: Where(constant band mask, X, 0). */
static vnpu_status lower_trilu(struct cstate *s, struct cop *op)
{
	const struct vnpu_tinfo *xi = INFO(s, IN(op, 0));
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
	m = calloc(1, (size_t)(dims[0] * dims[1] + 1));
	if (!m)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	for (int64_t i = 0; i < dims[0]; i++)
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
	const struct vnpu_tinfo *xi = INFO(s, IN(op, 0));
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

/*
 * NegativeLogLikelihoodLoss (and SoftmaxCrossEntropyLoss: LogSoftmax on
 * axis 1 first): loss = -x[n, t, ...] * w[t], 0 where t is ignore_index;
 * then none, sum, or mean (divided by the sum of the weights used).
 */
static vnpu_status lower_loss(struct cstate *s, struct cop *op)
{
	const struct vnpu_tinfo *xi = INFO(s, IN(op, 0)), *ti = INFO(s, IN(op, 1));
	const struct vnpu_attr *ign = vnpu_node_attr(N(op), "ignore_index");
	const char *red = vnpu_attr_str(N(op), "reduction", "mean");
	vnpu_element_type ft = xi->type;
	int32_t x = IN(op, 0), t = IN(op, 1), w = IN(op, 2), mask = -1, g, loss, wt = -1, k;
	int64_t tdims[VNPU_MAX_RANK], udims[VNPU_MAX_RANK], one = 1;
	struct vnpu_layer_gather gattr = { .axis = 1 };
	struct vnpu_layer_act neg = { .func = VNPU_ACT_NEG };
	uint32_t all = (1u << ti->rank) - 1;
	struct ctensor ct[3];
	vnpu_status st = VNPU_OK;

	if (!vnpu_type_is_float(ft))
		return UNSUP(s, "input is %s", vnpu_element_type_str(ft));
	memcpy(tdims, ti->dims, sizeof(tdims));
	if (!strcmp(N(op)->op, "SoftmaxCrossEntropyLoss")) {
		struct vnpu_layer_softmax sm = { .mode = VNPU_LOG_SOFTMAX, .axis = 1 };
		int32_t lp = op->num_out > 1 ? op->out[1] : -1;

		if (lp < 0)
			st = cs_add_temp(s, ft, xi->rank, xi->dims, &lp);
		if (st)
			return st;
		ct[0] = ct_dense(s, x);
		ct[1] = ct_dense(s, lp);
		st = cl_layer(s, VNPU_LAYER_SOFTMAX, ct, 2, &sm, sizeof(sm));
		if (st)
			return st;
		x = lp;
	}
	if (ign) {
		int32_t ic, zero;

		st = cl_const_scalar(s, ti->type, (double)ign->i, &ic);
		if (!st)
			st = cl_const_scalar(s, ti->type, 0, &zero);
		if (!st)
			st = cs_add_temp(s, VNPU_TYPE_BOOL, ti->rank, tdims, &mask);
		if (!st)
			st = cl_binary(s, VNPU_BIN_EQUAL, t, ic, mask);
		if (!st)
			st = cs_add_temp(s, ti->type, ti->rank, tdims, &k);
		if (!st)
			st = cl_where(s, mask, zero, t, k);
		if (st)
			return st;
		t = k;	/* ignored targets read class 0, then count 0 */
	}
	/* g[n, 0, ...] = x[n, t[n, ...], ...] */
	udims[0] = tdims[0];
	udims[1] = 1;
	for (int32_t d = 1; d < ti->rank; d++)
		udims[d + 1] = tdims[d];
	st = cs_add_temp(s, ft, ti->rank, tdims, &g);
	if (st)
		return st;
	ct[0] = ct_dense(s, x);
	ct[1] = ct_shaped(s, t, ti->rank + 1, udims);
	ct[2] = ct_shaped(s, g, ti->rank + 1, udims);
	st = cl_layer(s, VNPU_LAYER_GATHER_ELEMENTS, ct, 3, &gattr, sizeof(gattr));
	if (!st)
		st = cs_add_temp(s, ft, ti->rank, tdims, &loss);
	if (!st)
		st = cl_unary(s, g, loss, &neg);
	if (!st && w >= 0) {
		struct vnpu_layer_gather wattr = { .axis = 0 };

		st = cs_add_temp(s, ft, ti->rank, tdims, &wt);
		ct[0] = ct_dense(s, w);
		ct[1] = ct_dense(s, t);
		ct[2] = ct_dense(s, wt);
		if (!st)
			st = cl_layer(s, VNPU_LAYER_GATHER, ct, 3, &wattr, sizeof(wattr));
		if (!st)
			st = cs_add_temp(s, ft, ti->rank, tdims, &k);
		if (!st)
			st = cl_binary(s, VNPU_BIN_MUL, loss, wt, k);
		loss = k;
	}
	if (!st && mask >= 0) {
		int32_t zero, onec;

		st = cl_const_scalar(s, ft, 0, &zero);
		if (!st)
			st = cs_add_temp(s, ft, ti->rank, tdims, &k);
		if (!st)
			st = cl_where(s, mask, zero, loss, k);
		loss = k;
		/* The weights the mean divides by: 0 where ignored. */
		if (!st && wt < 0)
			st = cl_const_scalar(s, ft, 1, &onec);
		else
			onec = wt;
		if (!st)
			st = cs_add_temp(s, ft, ti->rank, tdims, &wt);
		if (!st)
			st = cl_where(s, mask, zero, onec, wt);
	}
	if (st)
		return st;
	if (!strcmp(red, "none"))
		return cl_copy(s, ct_dense(s, op->out[0]), ct_dense(s, loss));
	{
		int64_t ones[VNPU_MAX_RANK] = { 1, 1, 1, 1, 1, 1 };
		struct vnpu_layer_reduce rattr = { .func = VNPU_REDUCE_SUM, .axes = all };
		int32_t sum = op->out[0], den;

		if (!strcmp(red, "mean"))
			st = cs_add_temp(s, ft, 0, NULL, &sum);
		ct[0] = ct_dense(s, loss);
		ct[1] = ct_shaped(s, sum, ti->rank, ones);
		if (!st)
			st = cl_layer(s, VNPU_LAYER_REDUCE, ct, 2, &rattr, sizeof(rattr));
		if (st || strcmp(red, "mean"))
			return st;
		if (wt >= 0) {
			st = cs_add_temp(s, ft, 0, NULL, &den);
			ct[0] = ct_dense(s, wt);
			ct[1] = ct_shaped(s, den, ti->rank, ones);
			if (!st)
				st = cl_layer(s, VNPU_LAYER_REDUCE, ct, 2, &rattr, sizeof(rattr));
		} else {
			for (int32_t d = 0; d < ti->rank; d++)
				one *= tdims[d];
			st = cl_const_scalar(s, ft, (double)one, &den);
		}
		return st ? st : cl_binary(s, VNPU_BIN_DIV, sum, den, op->out[0]);
	}
}

/* The [.., 1, ..] slice @k of @v along @axis (rank kept). */
static struct ctensor slice_at(const struct cstate *s, int32_t v, int64_t axis, int64_t k)
{
	struct ctensor t = ct_dense(s, v);

	t.off += k * t.strides[axis];
	t.dims[axis] = 1;
	return t;
}

/* BitShift: x * 2^y (left) or x / 2^y (right), in the unsigned type:
 * shifts past the width give 0 either way (2^y wraps to 0). */
static vnpu_status lower_bitshift(struct cstate *s, struct cop *op)
{
	const struct vnpu_tinfo *yi = INFO(s, IN(op, 1));
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

/* ReverseSequence: a GatherElements along the time axis with constant
 * indices (the first sequence_lens[b] steps reversed, the rest kept). */
static vnpu_status lower_reverse_sequence(struct cstate *s, struct cop *op)
{
	const struct vnpu_tinfo *xi = INFO(s, IN(op, 0)), *li = INFO(s, IN(op, 1));
	int64_t taxis = vnpu_attr_int(N(op), "time_axis", 0), baxis = vnpu_attr_int(N(op), "batch_axis", 1);
	int64_t n = vnpu_tinfo_elems(xi), idx[VNPU_MAX_RANK] = { 0 }, *data;
	struct vnpu_layer_gather attr = { .axis = (uint32_t)taxis };
	struct ctensor t[3];
	int32_t iv;
	vnpu_status st;

	if (!cs_is_const(s, IN(op, 1)))
		return UNSUP(s, "sequence_lens computed at run time");
	if (xi->rank < 2 || (taxis != 0 && taxis != 1) || baxis != 1 - taxis)
		return UNSUP(s, "time_axis %lld, batch_axis %lld", (long long)taxis, (long long)baxis);
	data = malloc((size_t)(n + 1) * sizeof(int64_t));
	if (!data)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	for (int64_t i = 0; i < n; i++) {
		int64_t len = vnpu_elem_get_i(li->data, li->type, idx[baxis]), tt = idx[taxis];

		len = len < 0 ? 0 : len > xi->dims[taxis] ? xi->dims[taxis] : len;
		data[i] = tt < len ? len - 1 - tt : tt;
		for (int32_t d = xi->rank - 1; d >= 0 && ++idx[d] == xi->dims[d]; d--)
			idx[d] = 0;
	}
	st = cs_add_const(s, VNPU_TYPE_I64, xi->rank, xi->dims, data, &iv);
	if (st)
		return st;
	t[0] = ct_dense(s, IN(op, 0));
	t[1] = ct_dense(s, iv);
	t[2] = ct_dense(s, op->out[0]);
	return cl_layer(s, VNPU_LAYER_GATHER_ELEMENTS, t, 3, &attr, sizeof(attr));
}

/* CumSum as a running sum over slices: an ADD and a copy per step. */
static vnpu_status lower_cumsum(struct cstate *s, struct cop *op)
{
	const struct vnpu_tinfo *xi = INFO(s, IN(op, 0));
	bool excl = vnpu_attr_int(N(op), "exclusive", 0), rev = vnpu_attr_int(N(op), "reverse", 0);
	struct vnpu_layer_binary add = { .func = VNPU_BIN_ADD };
	int64_t axis, len, dims[VNPU_MAX_RANK];
	struct ctensor acc = { 0 };
	vnpu_status st = VNPU_OK;

	if (IN(op, 1) < 0 || !cs_is_const(s, IN(op, 1)))
		return UNSUP(s, "axis computed at run time");
	axis = vnpu_elem_get_i(INFO(s, IN(op, 1))->data, INFO(s, IN(op, 1))->type, 0);
	axis = axis < 0 ? axis + xi->rank : axis;
	if (axis < 0 || axis >= xi->rank)
		return UNSUP(s, "axis out of range");
	len = xi->dims[axis];
	if (len > 1024)
		return UNSUP(s, "more than 1024 steps along the axis");
	memcpy(dims, xi->dims, sizeof(dims));
	dims[axis] = 1;
	for (int64_t j = 0; j < len && !st; j++) {
		int64_t k = rev ? len - 1 - j : j;
		struct ctensor x = slice_at(s, IN(op, 0), axis, k), y = slice_at(s, op->out[0], axis, k);

		if (excl)
			st = j ? cl_copy(s, y, acc) : cl_fill(s, y, 0);
		if (!st && j) {
			struct ctensor t[3] = { acc, x };
			int32_t sum;

			st = cs_add_temp(s, xi->type, xi->rank, dims, &sum);
			t[2] = ct_dense(s, sum);
			if (!st)
				st = cl_layer(s, VNPU_LAYER_BINARY, t, 3, &add, sizeof(add));
			acc = t[2];
		} else if (!st) {
			acc = x;
		}
		if (!st && !excl)
			st = cl_copy(s, y, acc);
	}
	return st;
}

/* OneHot: (indices, negative ones wrapped) == range along the axis picks
 * values[1], else values[0]. */
static vnpu_status lower_one_hot(struct cstate *s, struct cop *op)
{
	const struct vnpu_tinfo *ii = INFO(s, IN(op, 0)), *yi = INFO(s, op->out[0]);
	int64_t axis = vnpu_attr_int(N(op), "axis", -1), depth, rdims[VNPU_MAX_RANK], udims[VNPU_MAX_RANK];
	int32_t idx = IN(op, 0), zero, dv, neg, wrapped, fixed, range, eq;
	vnpu_element_type t = ii->type;
	struct ctensor w[4];
	void *rd;
	vnpu_status st;

	axis = axis < 0 ? axis + yi->rank : axis;
	depth = yi->dims[axis];
	rd = calloc((size_t)depth, 8);
	if (!rd)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	for (int64_t k = 0; k < depth; k++)
		vnpu_elem_set_i(rd, t, k, k);
	for (int32_t d = 0; d < yi->rank; d++) {
		rdims[d] = d == axis ? depth : 1;
		udims[d] = d == axis ? 1 : yi->dims[d];
	}
	st = cs_add_const(s, t, yi->rank - (int32_t)axis, rdims + axis, rd, &range);
	if (!st)
		st = cl_const_scalar(s, t, 0, &zero);
	if (!st)
		st = cl_const_scalar(s, t, (double)depth, &dv);
	if (!st)
		st = cs_add_temp(s, VNPU_TYPE_BOOL, ii->rank, ii->dims, &neg);
	if (!st)
		st = cs_add_temp(s, t, ii->rank, ii->dims, &wrapped);
	if (!st)
		st = cs_add_temp(s, t, ii->rank, ii->dims, &fixed);
	if (!st)
		st = cl_binary(s, VNPU_BIN_LESS, idx, zero, neg);
	if (!st)
		st = cl_binary(s, VNPU_BIN_ADD, idx, dv, wrapped);
	if (!st)
		st = cl_where(s, neg, wrapped, idx, fixed);
	if (!st)
		st = cs_add_temp(s, VNPU_TYPE_BOOL, yi->rank, yi->dims, &eq);
	if (st)
		return st;
	w[0] = ct_shaped(s, fixed, yi->rank, udims);
	w[1] = ct_dense(s, range);
	w[2] = ct_dense(s, eq);
	{
		struct vnpu_layer_binary attr = { .func = VNPU_BIN_EQUAL };

		st = cl_layer(s, VNPU_LAYER_BINARY, w, 3, &attr, sizeof(attr));
	}
	if (st)
		return st;
	w[0] = ct_dense(s, eq);
	w[1] = ct_shaped(s, IN(op, 2), 0, NULL);
	w[1].off = 1;
	w[2] = ct_shaped(s, IN(op, 2), 0, NULL);
	w[3] = ct_dense(s, op->out[0]);
	return cl_layer(s, VNPU_LAYER_WHERE, w, 4, NULL, 0);
}

struct lower_map {
	const char *op;
	vnpu_status (*fn)(struct cstate *s, struct cop *op);
};

static vnpu_status lower_view_node(struct cstate *s, struct cop *op)
{
	if (!strcmp(N(op)->op, "Dropout") && IN(op, 2) >= 0 &&
	    (!cs_is_const(s, IN(op, 2)) || *(const uint8_t *)INFO(s, IN(op, 2))->data) &&
	    !(IN(op, 1) >= 0 && cs_is_const(s, IN(op, 1)) &&
	      vnpu_elem_get_f(INFO(s, IN(op, 1))->data, INFO(s, IN(op, 1))->type, 0) == 0))
		return UNSUP(s, "training mode with a ratio above 0 (random dropout)");
	return lower_view_copy(s, op, IN(op, 0));
}

static const struct lower_map lower_maps[] = {
	{ "Clip", lower_clip }, { "Where", NULL }, { "Cast", lower_cast },
	{ "CastLike", lower_cast }, { "Gemm", lower_gemm }, { "MatMul", lower_matmul },
	{ "Conv", lower_conv }, { "ConvTranspose", lower_conv_transpose }, { "MaxPool", lower_pool }, { "AveragePool", lower_pool },
	{ "LpPool", lower_pool }, { "GlobalAveragePool", lower_pool },
	{ "GlobalMaxPool", lower_pool }, { "GlobalLpPool", lower_pool },
	{ "Softmax", lower_softmax }, { "LogSoftmax", lower_softmax },
	{ "Hardmax", lower_softmax }, { "BatchNormalization", lower_norm },
	{ "InstanceNormalization", lower_norm }, { "LayerNormalization", lower_norm },
	{ "LpNormalization", lower_norm }, { "LRN", lower_norm },
	{ "ArgMax", lower_argreduce }, { "ArgMin", lower_argreduce },
	{ "Resize", lower_resize }, { "Upsample", lower_resize }, { "Pad", lower_pad },
	{ "Gather", lower_gather }, { "GatherElements", lower_gather },
	{ "Transpose", lower_transpose }, { "Slice", lower_slice }, { "Concat", lower_concat },
	{ "Split", lower_split }, { "Expand", lower_expand }, { "Tile", lower_tile },
	{ "DepthToSpace", lower_space_depth }, { "SpaceToDepth", lower_space_depth },
	{ "Identity", lower_view_node }, { "Dropout", lower_view_node },
	{ "Reshape", lower_view_node }, { "Flatten", lower_view_node },
	{ "Squeeze", lower_view_node }, { "Unsqueeze", lower_view_node },
	{ "ConstantOfShape", lower_constant_of_shape }, { "Trilu", lower_trilu },
	{ "IsNaN", lower_isnan_isinf }, { "IsInf", lower_isnan_isinf },
	{ "CumSum", lower_cumsum }, { "OneHot", lower_one_hot }, { "BitShift", lower_bitshift },
	{ "Einsum", cl_lower_einsum }, { "ReverseSequence", lower_reverse_sequence }, { "DFT", cl_lower_fourier }, { "STFT", cl_lower_fourier },
	{ "QuantizeLinear", cl_lower_quantize }, { "DequantizeLinear", cl_lower_quantize },
	{ "DynamicQuantizeLinear", cl_lower_quantize },
	{ "ConvInteger", cl_lower_quantize }, { "QLinearConv", cl_lower_quantize },
	{ "MatMulInteger", cl_lower_quantize }, { "QLinearMatMul", cl_lower_quantize },
	{ "LSTM", cl_lower_rnn }, { "GRU", cl_lower_rnn }, { "RNN", cl_lower_rnn },
	{ "NegativeLogLikelihoodLoss", lower_loss }, { "SoftmaxCrossEntropyLoss", lower_loss },
};

static vnpu_status lower_node(struct cstate *s, struct cop *op)
{
	const char *name = N(op)->op;

	for (size_t i = 0; i < sizeof(act_maps) / sizeof(act_maps[0]); i++)
		if (!strcmp(name, act_maps[i].op))
			return lower_act(s, op, &act_maps[i]);
	for (size_t i = 0; i < sizeof(bin_maps) / sizeof(bin_maps[0]); i++)
		if (!strcmp(name, bin_maps[i].op))
			return lower_binary(s, op, bin_maps[i].func);
	for (size_t i = 0; i < sizeof(reduce_maps) / sizeof(reduce_maps[0]); i++)
		if (!strcmp(name, reduce_maps[i].op))
			return lower_reduce(s, op, reduce_maps[i].func);
	if (!strcmp(name, "Where"))
		return cl_where(s, IN(op, 0), IN(op, 1), IN(op, 2), op->out[0]);
	for (size_t i = 0; i < sizeof(lower_maps) / sizeof(lower_maps[0]); i++)
		if (!strcmp(name, lower_maps[i].op))
			return lower_maps[i].fn(s, op);
	return UNSUP(s, "no device lowering for this op");
}

/* Why inference left @op's outputs unknown: run it again for the message. */
static vnpu_status infer_failure(struct cstate *s, const struct cop *op)
{
	struct vnpu_tinfo *in[COP_MAX_IO + 1], *out[COP_MAX_IO], scratch[COP_MAX_IO];
	vnpu_status st;

	if (op->kind != COP_NODE || !strcmp(N(op)->op, "If"))
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
		char msg[400];
		const char *e = vnpu_last_error(), *colon = strstr(e, "): ");

		snprintf(msg, sizeof(msg), "%s", colon ? colon + 3 : e);
		return cs_fail(s, st, "%s", msg);
	}
	return VNPU_OK;
}

/* Every value the op touches must be known and static. */
static vnpu_status check_static(struct cstate *s, const struct cop *op)
{
	char buf[96];
	vnpu_status st = op->num_out && op->out[0] >= 0 &&
			 s->vals[op->out[0]].info.type == VNPU_TYPE_UNDEFINED ?
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

/* The engine's own check of every layer this op lowered to. */
static vnpu_status check_layers(struct cstate *s, uint32_t first)
{
	for (uint32_t c = first; c < s->num_cmds; c++) {
		const struct ccmd *cmd = &s->cmds[c];
		struct vnpu_tensor t[VNPU_LAYER_MAX_TENSORS];

		if (cmd->opcode != VNPU_CMD_LAYER)
			continue;
		memset(t, 0, sizeof(t));
		for (uint32_t i = 0; i < cmd->num_tensors; i++) {
			const struct ctensor *ct = &cmd->t[i];

			t[i].dtype = (uint32_t)ct->type;
			t[i].rank = ct->rank;
			for (uint32_t d = 0; d < ct->rank; d++) {
				t[i].dims[d] = (uint64_t)ct->dims[d];
				t[i].strides[d] = ct->strides[d];
			}
		}
		if (vnpu_eng_layer_check(cmd->layer, t, cmd->num_tensors, cmd->attrs, cmd->attr_size))
			return UNSUP(s, "the device engine does not take this layer (op %u) with these types, shapes or attributes",
				     cmd->layer);
	}
	return VNPU_OK;
}

vnpu_status cs_lower_op(struct cstate *s, struct cop *op)
{
	uint32_t first = s->num_cmds;
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
	default:
		st = lower_node(s, op);
		break;
	}
	if (!st)
		st = check_layers(s, first);
	if (st) {
		s->num_cmds = first;	/* drop a partial lowering */
		return st;
	}
	op->num_cmds = s->num_cmds - first;
	return VNPU_OK;
}

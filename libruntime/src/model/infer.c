// SPDX-License-Identifier: MIT
/*
 * Type and shape inference, op by op, with host evaluation of nodes whose
 * inputs are all known (constant folding): Shape -> Gather -> Concat ->
 * Reshape chains become constants, so the shapes after them are known.
 *
 * Every op checks what it reads (input count, types, ranks, attribute
 * values) and fails with a message naming the node: a malformed model is
 * an error here, not a crash later. This file has the shared helpers,
 * element-wise and shape ops and the walk; infer_nn.c the NN ops.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "infer_priv.h"

vnpu_status inf_error(const struct ictx *c, vnpu_status st, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	st = vnpu_node_verror(st, c->n, fmt, ap);
	va_end(ap);
	return st;
}

vnpu_status inf_limit(const struct ictx *c, const char *fmt, ...)
{
	vnpu_status st;
	va_list ap;

	if (c->over_limit)
		*c->over_limit = true;
	va_start(ap, fmt);
	st = vnpu_node_verror(VNPU_UNSUPPORTED, c->n, fmt, ap);
	va_end(ap);
	return st;
}



/* Checks that @i exists and its type is known; @what names it. */
vnpu_status inf_need(const struct ictx *c, uint32_t i)
{
	const struct vnpu_tinfo *t = IN(c, i);

	if (!t)
		return FAIL(c, "input %u is missing", i);
	if (t->type == VNPU_TYPE_UNDEFINED)
		return inf_error(c, VNPU_UNSUPPORTED, "input %u has an unknown type", i);
	return VNPU_OK;
}

vnpu_status inf_need_inputs(const struct ictx *c, uint32_t min, uint32_t max)
{
	uint32_t n = c->n->num_inputs;

	if (n < min || n > max)
		return FAIL(c, "%u inputs, expected %u to %u", n, min, max);
	for (uint32_t i = 0; i < min; i++) {
		vnpu_status st = inf_need(c, i);

		if (st)
			return st;
	}
	return VNPU_OK;
}




vnpu_status inf_check_axis(const struct ictx *c, int64_t axis, int32_t rank, int64_t *out)
{
	int64_t a = norm_axis(axis, rank);

	*out = 0;
	if (a < 0 || a >= (rank ? rank : 1))
		return FAIL(c, "axis %lld out of range for rank %d", (long long)axis, rank);
	*out = a;
	return VNPU_OK;
}


vnpu_status inf_check_dims(const struct ictx *c, uint32_t i, const char *what, int32_t rank,
			   const int64_t *dims)
{
	const struct vnpu_tinfo *t = IN(c, i);
	char got[96], want[96];
	struct vnpu_tinfo w;
	bool ok;

	if (!t || t->rank < 0)
		return VNPU_OK;
	ok = t->rank == rank;
	for (int32_t d = 0; ok && d < rank; d++)
		ok = dims[d] < 0 || t->dims[d] < 0 || t->dims[d] == dims[d];
	if (ok)
		return VNPU_OK;
	memset(&w, 0, sizeof(w));
	set_out(&w, t->type, rank, dims);
	return FAIL(c, "%s is %s, expected %s", what, vnpu_tinfo_str(t, got, sizeof(got)),
		    vnpu_tinfo_str(&w, want, sizeof(want)));
}

vnpu_status inf_check_indexed(const struct ictx *c, const struct vnpu_tinfo *idx, int64_t len)
{
	if (len == 0 && vnpu_tinfo_elems(idx) > 0)
		return FAIL(c, "indices into an empty axis (no index is in range)");
	return VNPU_OK;
}

/* Read a known 1-D (or scalar) integer tensor into @vals; -1 when unknown. */
int32_t inf_read_ints(const struct vnpu_tinfo *t, int64_t *vals, int32_t max)
{
	int64_t n;

	if (!has_data(t) || t->rank > 1 || vnpu_type_is_float(t->type))
		return -1;
	n = vnpu_tinfo_elems(t);
	if (n > max)
		return -1;
	for (int64_t i = 0; i < n; i++)
		vals[i] = vnpu_elem_get_i(t->data, t->type, i);
	return (int32_t)n;
}

/* Read an int list from attribute @name (opset < @since) or input @idx. */
int32_t inf_attr_ints(const struct ictx *c, const char *name, uint32_t idx,
				  int64_t *vals, int32_t max, bool *present)
{
	const struct vnpu_attr *a = vnpu_node_attr(c->n, name);

	if (a && a->type == VNPU_ATTR_INTS) {
		*present = true;
		if (a->n > (size_t)max)
			return -1;
		memcpy(vals, a->ints, a->n * sizeof(int64_t));
		return (int32_t)a->n;
	}
	*present = IN(c, idx) != NULL;
	if (!*present)
		return 0;
	return inf_read_ints(IN(c, idx), vals, max);
}

/* ---- evaluation helpers ---- */

/* Allocate @o's data for its static shape; false when too large to fold. */
bool inf_alloc_out(const struct ictx *c, struct vnpu_tinfo *o)
{
	int64_t n = vnpu_tinfo_elems(o);
	size_t es = vnpu_element_type_size(o->type);

	if (n < 0 || !es || n > c->fold_limit)
		return false;
	o->data = calloc(1, n ? (size_t)n * es : 1);
	o->owns_data = o->data != NULL;
	return o->data != NULL;
}

/* Element offset in @t (broadcast against @rank/@dims of the output) of the
 * element at output coordinates @idx. */
static int64_t bcast_offset(const struct vnpu_tinfo *t, int32_t rank, const int64_t *idx)
{
	int64_t off = 0, stride = 1;

	for (int32_t d = t->rank - 1; d >= 0; d--) {
		int32_t od = d + rank - t->rank;

		if (t->dims[d] != 1)
			off += idx[od] * stride;
		stride *= t->dims[d];
	}
	return off;
}

static void next_index(int64_t *idx, int32_t rank, const int64_t *dims)
{
	for (int32_t d = rank - 1; d >= 0; d--) {
		if (++idx[d] < dims[d])
			return;
		idx[d] = 0;
	}
}

/* Copy a strided view: element i of @o comes from @src at offset
 * @base + sum idx[d] * strides[d] (elements). */
static void gather_view(struct vnpu_tinfo *o, const struct vnpu_tinfo *src, int64_t base,
			const int64_t *strides)
{
	int64_t idx[VNPU_MAX_RANK] = { 0 }, n = vnpu_tinfo_elems(o);
	size_t es = vnpu_element_type_size(o->type);

	for (int64_t i = 0; i < n; i++) {
		int64_t off = base;

		for (int32_t d = 0; d < o->rank; d++)
			off += idx[d] * strides[d];
		memcpy((char *)o->data + i * es, (const char *)src->data + off * es, es);
		next_index(idx, o->rank, o->dims);
	}
}

static void dense_strides(const struct vnpu_tinfo *t, int64_t *strides)
{
	int64_t s = 1;

	for (int32_t d = t->rank - 1; d >= 0; d--) {
		strides[d] = s;
		s *= t->dims[d];
	}
}

/* ---- elementwise ---- */

vnpu_status inf_broadcast(const struct ictx *c, const struct vnpu_tinfo *a,
			     const struct vnpu_tinfo *b, int32_t *rank, int64_t *dims)
{
	int32_t r;

	if (a->rank < 0 || b->rank < 0) {
		*rank = -1;
		return VNPU_OK;
	}
	r = a->rank > b->rank ? a->rank : b->rank;
	for (int32_t d = 0; d < r; d++) {
		int32_t da = d - (r - a->rank), db = d - (r - b->rank);
		int64_t x = da >= 0 ? a->dims[da] : 1, y = db >= 0 ? b->dims[db] : 1;

		if (x == 1)
			dims[d] = y;
		else if (y == 1)
			dims[d] = x;
		else if (x < 0)
			dims[d] = y;
		else if (y < 0 || x == y)
			dims[d] = x;
		else
			return FAIL(c, "shapes do not broadcast (dim %d: %lld vs %lld)", d,
				    (long long)x, (long long)y);
	}
	*rank = r;
	return VNPU_OK;
}

enum ew_kind { EW_SAME, EW_BOOL, EW_SLOPE };

static double unary_f(const char *op, const struct vnpu_node *n, double x, bool *ok)
{
	*ok = true;
	if (!strcmp(op, "Relu")) return x > 0 ? x : 0;
	if (!strcmp(op, "Neg")) return -x;
	if (!strcmp(op, "Abs")) return fabs(x);
	if (!strcmp(op, "Sqrt")) return sqrt(x);
	if (!strcmp(op, "Exp")) return exp(x);
	if (!strcmp(op, "Log")) return log(x);
	if (!strcmp(op, "Reciprocal")) return 1.0 / x;
	if (!strcmp(op, "Floor")) return floor(x);
	if (!strcmp(op, "Ceil")) return ceil(x);
	if (!strcmp(op, "Round")) return nearbyint(x);
	if (!strcmp(op, "Sigmoid")) return 1.0 / (1.0 + exp(-x));
	if (!strcmp(op, "Tanh")) return tanh(x);
	if (!strcmp(op, "Sign")) return x > 0 ? 1 : x < 0 ? -1 : 0;
	if (!strcmp(op, "Sin")) return sin(x);
	if (!strcmp(op, "Cos")) return cos(x);
	if (!strcmp(op, "Erf")) return erf(x);
	if (!strcmp(op, "Identity")) return x;
	if (!strcmp(op, "Not")) return x == 0;
	if (!strcmp(op, "LeakyRelu")) {
		double a = vnpu_attr_float(n, "alpha", 0.01f);

		return x >= 0 ? x : a * x;
	}
	*ok = false;
	return 0;
}

static double binary_f(const char *op, double a, double b, bool *ok)
{
	*ok = true;
	if (!strcmp(op, "Add") || !strcmp(op, "Sum")) return a + b;
	if (!strcmp(op, "Sub")) return a - b;
	if (!strcmp(op, "Mul")) return a * b;
	if (!strcmp(op, "Div")) return a / b;
	if (!strcmp(op, "Pow")) return pow(a, b);
	if (!strcmp(op, "Max")) return a > b ? a : b;
	if (!strcmp(op, "Min")) return a < b ? a : b;
	if (!strcmp(op, "Equal")) return a == b;
	if (!strcmp(op, "Less")) return a < b;
	if (!strcmp(op, "Greater")) return a > b;
	if (!strcmp(op, "LessOrEqual")) return a <= b;
	if (!strcmp(op, "GreaterOrEqual")) return a >= b;
	if (!strcmp(op, "And")) return a != 0 && b != 0;
	if (!strcmp(op, "Or")) return a != 0 || b != 0;
	if (!strcmp(op, "Xor")) return (a != 0) != (b != 0);
	*ok = false;
	return 0;
}

static int64_t binary_i(const char *op, int64_t a, int64_t b, bool *ok)
{
	*ok = true;
	if (!strcmp(op, "Add") || !strcmp(op, "Sum")) return (int64_t)((uint64_t)a + (uint64_t)b);
	if (!strcmp(op, "Sub")) return (int64_t)((uint64_t)a - (uint64_t)b);
	if (!strcmp(op, "Mul")) return (int64_t)((uint64_t)a * (uint64_t)b);
	if (!strcmp(op, "Div")) {
		if (!b || (a == INT64_MIN && b == -1)) {
			*ok = false;
			return 0;
		}
		return a / b;
	}
	if (!strcmp(op, "Max")) return a > b ? a : b;
	if (!strcmp(op, "Min")) return a < b ? a : b;
	if (!strcmp(op, "Equal")) return a == b;
	if (!strcmp(op, "Less")) return a < b;
	if (!strcmp(op, "Greater")) return a > b;
	if (!strcmp(op, "LessOrEqual")) return a <= b;
	if (!strcmp(op, "GreaterOrEqual")) return a >= b;
	if (!strcmp(op, "And")) return a && b;
	if (!strcmp(op, "Or")) return a || b;
	if (!strcmp(op, "Xor")) return !a != !b;
	*ok = false;
	return 0;
}

/* Fold a unary or binary elementwise node (op knowledge above). */
static void eval_elementwise(const struct ictx *c)
{
	struct vnpu_tinfo *o = c->out[0];
	const struct vnpu_tinfo *a = IN(c, 0), *b = IN(c, 1);
	int64_t idx[VNPU_MAX_RANK] = { 0 }, n;
	bool fl, ok = true;

	if (!inf_inputs_known(c) || !inf_alloc_out(c, o))
		return;
	fl = vnpu_type_is_float(a->type) || (b && vnpu_type_is_float(b->type));
	n = vnpu_tinfo_elems(o);
	for (int64_t i = 0; i < n && ok; i++) {
		int64_t ia = bcast_offset(a, o->rank, idx);

		if (!b || c->n->num_inputs == 1) {
			double x = vnpu_elem_get_f(a->data, a->type, ia);

			if (!fl && !strcmp(c->n->op, "Identity"))
				vnpu_elem_set_i(o->data, o->type, i, vnpu_elem_get_i(a->data, a->type, ia));
			else if (!fl && !strcmp(c->n->op, "Neg"))
				vnpu_elem_set_i(o->data, o->type, i, -vnpu_elem_get_i(a->data, a->type, ia));
			else
				vnpu_elem_set_f(o->data, o->type, i, unary_f(c->n->op, c->n, x, &ok));
		} else {
			int64_t ib = bcast_offset(b, o->rank, idx);

			if (fl)
				vnpu_elem_set_f(o->data, o->type, i,
						binary_f(c->n->op, vnpu_elem_get_f(a->data, a->type, ia),
							 vnpu_elem_get_f(b->data, b->type, ib), &ok));
			else if (!strcmp(c->n->op, "Pow"))
				vnpu_elem_set_f(o->data, o->type, i,
						pow(vnpu_elem_get_f(a->data, a->type, ia),
						    vnpu_elem_get_f(b->data, b->type, ib)));
			else
				vnpu_elem_set_i(o->data, o->type, i,
						binary_i(c->n->op, vnpu_elem_get_i(a->data, a->type, ia),
							 vnpu_elem_get_i(b->data, b->type, ib), &ok));
		}
		next_index(idx, o->rank, o->dims);
	}
	if (!ok)
		vnpu_tinfo_clear(o);
}

/* A Dropout with known inputs that zeroes elements (training mode, ratio
 * above 0): not folded here, the compiler draws its seeded mask. */
static bool dropout_drops(const struct ictx *c)
{
	const struct vnpu_tinfo *r = IN(c, 1), *t = IN(c, 2);

	if (!t || !*(const uint8_t *)t->data)
		return false;
	return !r || vnpu_elem_get_f(r->data, r->type, 0) != 0;
}

static vnpu_status infer_unary(struct ictx *c)
{
	const char *op = c->n->op;
	vnpu_element_type t;
	vnpu_status st = inf_need_inputs(c, 1, strcmp(op, "Clip") ? (strcmp(op, "Dropout") ? 1 : 3) : 3);

	if (st)
		return st;
	t = IN(c, 0)->type;
	if (!strcmp(op, "Not") && t != VNPU_TYPE_BOOL)
		return FAIL(c, "input is %s, not bool", vnpu_element_type_str(t));
	/* Clip's bounds and Dropout's ratio and training_mode are one value each. */
	for (uint32_t i = 1; i < c->n->num_inputs; i++) {
		int64_t n = IN(c, i) ? vnpu_tinfo_elems(IN(c, i)) : 1;

		if (n >= 0 && n != 1)
			return FAIL(c, "input %u holds %lld values, not one", i, (long long)n);
	}
	copy_shape(c->out[0], IN(c, 0), t);
	if (!strcmp(op, "Dropout") && c->n->num_outputs > 1 && c->out[1])
		copy_shape(c->out[1], IN(c, 0), VNPU_TYPE_BOOL);
	if (!strcmp(op, "IsNaN") || !strcmp(op, "IsInf"))
		c->out[0]->type = VNPU_TYPE_BOOL;
	if (strcmp(op, "Dropout") && strcmp(op, "Clip"))
		eval_elementwise(c);
	else if (!strcmp(op, "Dropout") && inf_inputs_known(c) && !dropout_drops(c) &&
		 inf_alloc_out(c, c->out[0]))
		memcpy(c->out[0]->data, IN(c, 0)->data,
		       (size_t)vnpu_tinfo_elems(c->out[0]) * vnpu_element_type_size(t));
	return VNPU_OK;
}

int vnpu_legacy_broadcast(const struct vnpu_model *m, const struct vnpu_node *n,
			  const struct vnpu_tinfo *a, const struct vnpu_tinfo *b,
			  struct vnpu_tinfo *aligned)
{
	bool prelu = !strcmp(n->op, "PRelu");
	int64_t axis;
	int32_t rank;

	if (m->opset >= 7 || n->domain[0] || n->num_inputs != 2)
		return 0;
	/* PRelu-6 gives a slope per channel (axis 1), or one for all. */
	if (prelu ? b->rank != 1 || vnpu_tinfo_elems(b) == 1 : !vnpu_attr_int(n, "broadcast", 0))
		return 0;
	if (a->rank < 0 || b->rank < 0) {
		*aligned = (struct vnpu_tinfo){ .kind = b->kind, .type = b->type, .rank = -1 };
		return 1;
	}
	if (b->rank > a->rank)
		return -1;
	axis = prelu ? 1 : vnpu_attr_int(n, "axis", a->rank - b->rank);
	if (axis < 0)
		axis += a->rank;
	if (axis < 0 || axis + b->rank > a->rank)
		return -1;
	rank = a->rank - (int32_t)axis;
	*aligned = (struct vnpu_tinfo){ .kind = b->kind, .type = b->type, .rank = rank };
	for (int32_t d = 0; d < rank; d++) {
		int64_t x = a->dims[axis + d], y = d < b->rank ? b->dims[d] : 1;

		if (x >= 0 && y >= 0 && y != 1 && x != y)
			return -1;
		aligned->dims[d] = y;
	}
	return 1;
}

static vnpu_status infer_binary(struct ictx *c)
{
	const char *op = c->n->op;
	const struct vnpu_tinfo *a, *b;
	vnpu_element_type t;
	int64_t dims[VNPU_MAX_RANK];
	int32_t rank;
	vnpu_status st;
	bool variadic = !strcmp(op, "Max") || !strcmp(op, "Min") || !strcmp(op, "Sum") ||
			!strcmp(op, "Mean");
	struct vnpu_tinfo aligned;
	char got[128], want[128];
	int legacy;

	st = inf_need_inputs(c, variadic ? 1 : 2, variadic ? 64 : 2);
	if (st)
		return st;
	a = IN(c, 0);
	legacy = vnpu_legacy_broadcast(c->m, c->n, a, IN(c, 1), &aligned);
	if (legacy < 0)
		return FAIL(c, "%s does not broadcast over %s as opset %lld broadcasts",
			    vnpu_tinfo_str(IN(c, 1), got, sizeof(got)),
			    vnpu_tinfo_str(a, want, sizeof(want)), (long long)opset(c));
	rank = a->rank;
	memcpy(dims, a->dims, sizeof(dims));
	for (uint32_t i = 1; i < c->n->num_inputs; i++) {
		struct vnpu_tinfo acc = { .type = a->type, .rank = rank };

		st = inf_need(c, i);
		if (st)
			return st;
		b = legacy ? &aligned : IN(c, i);
		if (b->type != a->type && strcmp(op, "Pow") && strcmp(op, "BitShift"))
			return FAIL(c, "input types differ (%s vs %s)", vnpu_element_type_str(a->type),
				    vnpu_element_type_str(b->type));
		memcpy(acc.dims, dims, sizeof(dims));
		st = inf_broadcast(c, &acc, b, &rank, dims);
		if (st)
			return st;
	}
	t = a->type;
	if (!strcmp(op, "Equal") || !strcmp(op, "Less") || !strcmp(op, "Greater") ||
	    !strcmp(op, "LessOrEqual") || !strcmp(op, "GreaterOrEqual"))
		t = VNPU_TYPE_BOOL;
	if ((!strcmp(op, "And") || !strcmp(op, "Or") || !strcmp(op, "Xor")) &&
	    a->type != VNPU_TYPE_BOOL)
		return FAIL(c, "input is %s, not bool", vnpu_element_type_str(a->type));
	set_out(c->out[0], t, rank, dims);
	/* Legacy broadcasting folds once B is aligned (the compile reshapes it). */
	if (c->n->num_inputs <= 2 && strcmp(op, "Mean") &&
	    (!legacy || aligned.rank == IN(c, 1)->rank))
		eval_elementwise(c);
	return VNPU_OK;
}

static vnpu_status infer_where(struct ictx *c)
{
	struct vnpu_tinfo acc;
	int64_t dims[VNPU_MAX_RANK];
	int32_t rank;
	vnpu_status st = inf_need_inputs(c, 3, 3);
	struct vnpu_tinfo *o = c->out[0];

	if (st)
		return st;
	if (IN(c, 0)->type != VNPU_TYPE_BOOL || IN(c, 1)->type != IN(c, 2)->type)
		return FAIL(c, "needs a bool condition and two inputs of one type");
	st = inf_broadcast(c, IN(c, 0), IN(c, 1), &rank, dims);
	if (st)
		return st;
	acc = (struct vnpu_tinfo){ .type = VNPU_TYPE_BOOL, .rank = rank };
	memcpy(acc.dims, dims, sizeof(dims));
	st = inf_broadcast(c, &acc, IN(c, 2), &rank, dims);
	if (st)
		return st;
	set_out(o, IN(c, 1)->type, rank, dims);
	if (inf_inputs_known(c) && inf_alloc_out(c, o)) {
		int64_t idx[VNPU_MAX_RANK] = { 0 }, n = vnpu_tinfo_elems(o);
		size_t es = vnpu_element_type_size(o->type);

		for (int64_t i = 0; i < n; i++) {
			bool cond = ((uint8_t *)IN(c, 0)->data)[bcast_offset(IN(c, 0), o->rank, idx)];
			const struct vnpu_tinfo *src = cond ? IN(c, 1) : IN(c, 2);

			memcpy((char *)o->data + i * es,
			       (char *)src->data + bcast_offset(src, o->rank, idx) * es, es);
			next_index(idx, o->rank, o->dims);
		}
	}
	return VNPU_OK;
}

static vnpu_status infer_cast(struct ictx *c)
{
	const struct vnpu_tinfo *x;
	vnpu_element_type to;
	vnpu_status st;

	if (!strcmp(c->n->op, "CastLike")) {
		st = inf_need_inputs(c, 2, 2);
		if (st)
			return st;
		to = IN(c, 1)->type;
	} else {
		st = inf_need_inputs(c, 1, 1);
		if (st)
			return st;
		to = (vnpu_element_type)vnpu_attr_int(c->n, "to", 0);
	}
	x = IN(c, 0);
	/* Strings are never constants: the host casts them at run time. */
	if (to == VNPU_TYPE_STRING || x->type == VNPU_TYPE_STRING) {
		copy_shape(c->out[0], x, to);
		return VNPU_OK;
	}
	if (!vnpu_element_type_size(to)) {
		const char *name = vnpu_onnx_type_name((int32_t)to);

		if (name)
			return inf_error(c, VNPU_UNSUPPORTED, "cast to %s is not supported", name);
		return inf_error(c, VNPU_UNSUPPORTED, "cast to unknown element type %d", (int)to);
	}
	copy_shape(c->out[0], x, to);
	if (has_data(x) && c->fold_limit > 0 && inf_alloc_out(c, c->out[0])) {
		int64_t n = vnpu_tinfo_elems(x);

		for (int64_t i = 0; i < n; i++) {
			if (to == VNPU_TYPE_BF16)
				((uint16_t *)c->out[0]->data)[i] = vnpu_cast_f32_to_bf16(
					(float)vnpu_elem_get_f(x->data, x->type, i));
			else if (vnpu_type_is_float(x->type) || vnpu_type_is_float(to))
				vnpu_elem_set_f(c->out[0]->data, to, i, vnpu_elem_get_f(x->data, x->type, i));
			else
				vnpu_elem_set_i(c->out[0]->data, to, i, vnpu_elem_get_i(x->data, x->type, i));
		}
	}
	return VNPU_OK;
}

/* ---- shape ops ---- */

static vnpu_status infer_constant(struct ictx *c)
{
	struct vnpu_tinfo *o = c->out[0];
	const struct vnpu_attr *a;

	if (c->n->num_attrs != 1)
		return FAIL(c, "needs exactly one value attribute");
	a = &c->n->attrs[0];
	if (!strcmp(a->name, "value") && a->type == VNPU_ATTR_TENSOR) {
		*o = a->t;
		o->owns_data = false;
		return VNPU_OK;
	}
	if (a->type != (!strcmp(a->name, "value_float") ? VNPU_ATTR_FLOAT :
			!strcmp(a->name, "value_int") ? VNPU_ATTR_INT :
			!strcmp(a->name, "value_floats") ? VNPU_ATTR_FLOATS :
			!strcmp(a->name, "value_ints") ? VNPU_ATTR_INTS : a->type))
		return FAIL(c, "attribute '%s' of another type", a->name);
	if (!strcmp(a->name, "value_float") || !strcmp(a->name, "value_int")) {
		set_out(o, a->type == VNPU_ATTR_FLOAT ? VNPU_TYPE_F32 : VNPU_TYPE_I64, 0, NULL);
	} else if (!strcmp(a->name, "value_floats") || !strcmp(a->name, "value_ints")) {
		int64_t n = (int64_t)a->n;

		set_out(o, a->type == VNPU_ATTR_FLOATS ? VNPU_TYPE_F32 : VNPU_TYPE_I64, 1, &n);
	} else {
		return inf_error(c, VNPU_UNSUPPORTED, "attribute '%s' not supported", a->name);
	}
	if (!inf_alloc_out(c, o) && !(o->data = calloc(1, a->n * 8 + 8)))
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory");
	o->owns_data = true;
	if (a->type == VNPU_ATTR_FLOAT)
		((float *)o->data)[0] = a->f;
	else if (a->type == VNPU_ATTR_INT)
		((int64_t *)o->data)[0] = a->i;
	else if (a->type == VNPU_ATTR_FLOATS && a->n)
		memcpy(o->data, a->floats, a->n * sizeof(float));
	else if (a->type == VNPU_ATTR_INTS && a->n)
		memcpy(o->data, a->ints, a->n * sizeof(int64_t));
	return VNPU_OK;
}

static vnpu_status infer_shape(struct ictx *c)
{
	const struct vnpu_tinfo *x;
	struct vnpu_tinfo *o = c->out[0];
	int64_t start = 0, end, n;
	vnpu_status st = inf_need_inputs(c, 1, 1);

	if (st)
		return st;
	x = IN(c, 0);
	if (!strcmp(c->n->op, "Size")) {
		set_out(o, VNPU_TYPE_I64, 0, NULL);
		if (vnpu_tinfo_elems(x) >= 0 && c->fold_limit > 0 && inf_alloc_out(c, o))
			((int64_t *)o->data)[0] = vnpu_tinfo_elems(x);
		return VNPU_OK;
	}
	if (x->rank < 0) {
		set_out(o, VNPU_TYPE_I64, 1, NULL);
		return VNPU_OK;
	}
	end = x->rank;
	start = vnpu_attr_int(c->n, "start", 0);
	end = vnpu_attr_int(c->n, "end", end);
	start = start < 0 ? start + x->rank : start;
	end = end < 0 ? end + x->rank : end;
	start = start < 0 ? 0 : start > x->rank ? x->rank : start;
	end = end < start ? start : end > x->rank ? x->rank : end;
	n = end - start;
	set_out(o, VNPU_TYPE_I64, 1, &n);
	for (int64_t d = start; d < end; d++)
		if (x->dims[d] < 0)
			return VNPU_OK;
	if (c->fold_limit > 0 && inf_alloc_out(c, o))
		memcpy(o->data, &x->dims[start], (size_t)n * sizeof(int64_t));
	return VNPU_OK;
}

/* Output @o is @x's data reinterpreted with @o's shape (a view). */
static void eval_view(const struct ictx *c, struct vnpu_tinfo *o, const struct vnpu_tinfo *x)
{
	if (has_data(x) && c->fold_limit > 0 && vnpu_tinfo_static(o) && inf_alloc_out(c, o))
		memcpy(o->data, x->data,
		       (size_t)vnpu_tinfo_elems(o) * vnpu_element_type_size(o->type));
}

static vnpu_status infer_reshape(struct ictx *c)
{
	const struct vnpu_tinfo *x;
	int64_t shape[VNPU_MAX_RANK + 1], known = 1, total;
	int32_t n, infer_at = -1;
	bool present;
	vnpu_status st = inf_need_inputs(c, 1, 2);

	if (st)
		return st;
	x = IN(c, 0);
	n = inf_attr_ints(c, "shape", 1, shape, VNPU_MAX_RANK + 1, &present);
	if (!present)
		return FAIL(c, "has no shape");
	if (n > VNPU_MAX_RANK)
		return inf_limit(c, "rank above %d", VNPU_MAX_RANK);
	total = vnpu_tinfo_elems(x);
	if (n < 0) {
		const struct vnpu_tinfo *s = IN(c, 1);
		int32_t rank = s && s->rank == 1 && s->dims[0] >= 0 ? (int32_t)s->dims[0] : -1;

		/* The values come later, but an empty shape is a scalar. */
		if (rank == 0 && total >= 0 && total != 1)
			return FAIL(c, "%lld elements reshaped to a scalar", (long long)total);
		set_out(c->out[0], x->type, rank, NULL);
		return VNPU_OK;
	}
	for (int32_t d = 0; d < n; d++) {
		bool copies_dynamic = false;

		if (shape[d] > VNPU_MAX_ELEMS)
			return FAIL(c, "shape entry %lld", (long long)shape[d]);
		if (shape[d] == 0 && !vnpu_attr_int(c->n, "allowzero", 0)) {
			if (d >= x->rank)
				return FAIL(c, "shape copies dim %d of a rank %d input", d, x->rank);
			shape[d] = x->dims[d];
			copies_dynamic = shape[d] == VNPU_DIM_DYNAMIC;
		}
		if (copies_dynamic) {
			/* A dimension of unknown size, not the one to infer. */
			known = -1;
		} else if (shape[d] == -1) {
			if (infer_at >= 0)
				return FAIL(c, "shape has two -1 entries");
			infer_at = d;
		} else if (shape[d] < -1) {
			return FAIL(c, "shape entry %lld", (long long)shape[d]);
		} else if (shape[d] >= 0 && known >= 0) {
			known = known && shape[d] > VNPU_MAX_ELEMS / known ? VNPU_MAX_ELEMS + 1
									  : known * shape[d];
		}
	}
	if (infer_at >= 0) {
		shape[infer_at] = VNPU_DIM_DYNAMIC;
		if (total >= 0 && known > 0) {
			if (total % known)
				return FAIL(c, "%lld elements do not reshape to the given shape",
					    (long long)total);
			shape[infer_at] = total / known;
		}
	} else if (total >= 0 && known >= 0 && total != known) {
		return FAIL(c, "%lld elements reshaped to %lld", (long long)total, (long long)known);
	}
	set_out(c->out[0], x->type, n, shape);
	eval_view(c, c->out[0], x);
	return VNPU_OK;
}

static vnpu_status infer_flatten(struct ictx *c)
{
	const struct vnpu_tinfo *x;
	int64_t axis, dims[2] = { 1, 1 };
	vnpu_status st = inf_need_inputs(c, 1, 1);

	if (st)
		return st;
	x = IN(c, 0);
	if (x->rank < 0) {
		set_out(c->out[0], x->type, 2, NULL);
		return VNPU_OK;
	}
	axis = norm_axis(vnpu_attr_int(c->n, "axis", 1), x->rank);
	if (axis < 0 || axis > x->rank)
		return FAIL(c, "axis out of range");
	for (int32_t d = 0; d < x->rank; d++) {
		int64_t *p = &dims[d < axis ? 0 : 1];

		*p = x->dims[d] < 0 || *p < 0 ? VNPU_DIM_DYNAMIC : *p * x->dims[d];
	}
	set_out(c->out[0], x->type, 2, dims);
	eval_view(c, c->out[0], x);
	return VNPU_OK;
}

static vnpu_status infer_squeeze(struct ictx *c)
{
	bool unsq = !strcmp(c->n->op, "Unsqueeze"), present, mark[VNPU_MAX_RANK * 2] = { 0 };
	const struct vnpu_tinfo *x;
	int64_t axes[VNPU_MAX_RANK * 2], dims[VNPU_MAX_RANK * 2];
	int32_t n, rank, out_rank = 0;
	vnpu_status st = inf_need_inputs(c, 1, 2);

	if (st)
		return st;
	x = IN(c, 0);
	n = inf_attr_ints(c, "axes", 1, axes, VNPU_MAX_RANK, &present);
	if (x->rank < 0 || n < 0) {
		const struct vnpu_tinfo *a = IN(c, 1);

		/* Unknown axes of a known count still give the rank. */
		set_out(c->out[0], x->type, unsq && x->rank >= 0 && a && a->rank == 1 &&
			a->dims[0] >= 0 && x->rank + a->dims[0] <= VNPU_MAX_RANK ?
			x->rank + (int32_t)a->dims[0] : -1, NULL);
		return VNPU_OK;
	}
	if (!present && unsq)
		return FAIL(c, "has no axes");
	rank = unsq ? x->rank + n : x->rank;
	if (rank > VNPU_MAX_RANK)
		return inf_limit(c, "rank above %d", VNPU_MAX_RANK);
	for (int32_t i = 0; i < n; i++) {
		int64_t a;

		st = inf_check_axis(c, axes[i], rank, &a);
		if (st)
			return st;
		if (mark[a])
			return FAIL(c, "axis %lld repeated", (long long)axes[i]);
		mark[a] = true;
	}
	if (unsq) {
		for (int32_t d = 0, k = 0; d < rank; d++)
			dims[out_rank++] = mark[d] ? 1 : x->dims[k++];
	} else {
		for (int32_t d = 0; d < rank; d++) {
			if (!present && x->dims[d] < 0) {
				set_out(c->out[0], x->type, -1, NULL);
				return VNPU_OK;
			}
			if (present ? mark[d] : x->dims[d] == 1) {
				if (x->dims[d] == 0 || x->dims[d] > 1)
					return FAIL(c, "cannot squeeze dim %d of size %lld", d,
						    (long long)x->dims[d]);
				continue;
			}
			dims[out_rank++] = x->dims[d];
		}
	}
	set_out(c->out[0], x->type, out_rank, dims);
	eval_view(c, c->out[0], x);
	return VNPU_OK;
}

static vnpu_status infer_transpose(struct ictx *c)
{
	const struct vnpu_tinfo *x;
	const struct vnpu_attr *a;
	int64_t perm[VNPU_MAX_RANK], dims[VNPU_MAX_RANK], in_str[VNPU_MAX_RANK], str[VNPU_MAX_RANK];
	bool seen[VNPU_MAX_RANK] = { 0 };
	vnpu_status st = inf_need_inputs(c, 1, 1);

	if (st)
		return st;
	x = IN(c, 0);
	if (x->rank < 0) {
		set_out(c->out[0], x->type, -1, NULL);
		return VNPU_OK;
	}
	a = vnpu_node_attr(c->n, "perm");
	if (a && (a->type != VNPU_ATTR_INTS || a->n != (size_t)x->rank))
		return FAIL(c, "perm does not match rank %d", x->rank);
	for (int32_t d = 0; d < x->rank; d++) {
		perm[d] = a ? a->ints[d] : x->rank - 1 - d;
		if (perm[d] < 0 || perm[d] >= x->rank || seen[perm[d]])
			return FAIL(c, "perm is not a permutation");
		seen[perm[d]] = true;
		dims[d] = x->dims[perm[d]];
	}
	set_out(c->out[0], x->type, x->rank, dims);
	if (has_data(x) && c->fold_limit > 0 && inf_alloc_out(c, c->out[0])) {
		dense_strides(x, in_str);
		for (int32_t d = 0; d < x->rank; d++)
			str[d] = in_str[perm[d]];
		gather_view(c->out[0], x, 0, str);
	}
	return VNPU_OK;
}

static vnpu_status infer_concat(struct ictx *c)
{
	const struct vnpu_tinfo *x;
	int64_t axis, dims[VNPU_MAX_RANK];
	vnpu_status st = inf_need_inputs(c, 1, 1024);
	struct vnpu_tinfo *o = c->out[0];

	if (st)
		return st;
	x = IN(c, 0);
	for (uint32_t i = 1; i < c->n->num_inputs; i++) {
		if ((st = inf_need(c, i)))
			return st;
		if (IN(c, i)->type != x->type)
			return FAIL(c, "input types differ");
		if (IN(c, i)->rank >= 0 && x->rank >= 0 && IN(c, i)->rank != x->rank)
			return FAIL(c, "input ranks differ");
	}
	if (x->rank < 0) {
		set_out(o, x->type, -1, NULL);
		return VNPU_OK;
	}
	st = inf_check_axis(c, vnpu_attr_int(c->n, "axis", 0), x->rank, &axis);
	if (st)
		return st;
	memcpy(dims, x->dims, sizeof(dims));
	dims[axis] = 0;
	for (uint32_t i = 0; i < c->n->num_inputs; i++) {
		const struct vnpu_tinfo *t = IN(c, i);

		if (t->rank < 0) {
			dims[axis] = VNPU_DIM_DYNAMIC;
			continue;
		}
		for (int32_t d = 0; d < x->rank; d++) {
			if (d == axis)
				continue;
			if (dims[d] < 0)
				dims[d] = t->dims[d];
			else if (t->dims[d] >= 0 && t->dims[d] != dims[d])
				return FAIL(c, "input %u dim %d is %lld, not %lld", i, d,
					    (long long)t->dims[d], (long long)dims[d]);
		}
		dims[axis] = t->dims[axis] < 0 || dims[axis] < 0 ? VNPU_DIM_DYNAMIC
								: dims[axis] + t->dims[axis];
	}
	set_out(o, x->type, x->rank, dims);
	if (inf_inputs_known(c) && inf_alloc_out(c, o)) {
		int64_t outer = 1, done = 0;
		size_t es = vnpu_element_type_size(o->type);

		for (int32_t d = 0; d < axis; d++)
			outer *= dims[d];
		for (uint32_t i = 0; i < c->n->num_inputs; i++) {
			const struct vnpu_tinfo *t = IN(c, i);
			int64_t chunk = vnpu_tinfo_elems(t) / (outer ? outer : 1);
			int64_t row = vnpu_tinfo_elems(o) / (outer ? outer : 1);

			for (int64_t k = 0; k < outer && chunk; k++)
				memcpy((char *)o->data + (k * row + done) * (int64_t)es,
				       (char *)t->data + k * chunk * (int64_t)es, (size_t)chunk * es);
			done += chunk;
		}
	}
	return VNPU_OK;
}

static vnpu_status infer_split(struct ictx *c)
{
	const struct vnpu_tinfo *x;
	int64_t axis, split[64], dims[VNPU_MAX_RANK];
	int32_t n;
	bool present;
	uint32_t outs = c->n->num_outputs;
	vnpu_status st = inf_need_inputs(c, 1, 2);

	if (st)
		return st;
	x = IN(c, 0);
	if (x->rank < 0) {
		for (uint32_t i = 0; i < outs; i++)
			if (c->out[i])
				set_out(c->out[i], x->type, -1, NULL);
		return VNPU_OK;
	}
	if (!x->rank)
		return FAIL(c, "a scalar has no axis to split");
	st = inf_check_axis(c, vnpu_attr_int(c->n, "axis", 0), x->rank, &axis);
	if (st)
		return st;
	n = inf_attr_ints(c, "split", 1, split, 64, &present);
	if (present && n != (int32_t)outs)
		return n < 0 ? inf_error(c, VNPU_UNSUPPORTED, "split sizes are not constant")
			     : FAIL(c, "%d split sizes for %u outputs", n, outs);
	for (int32_t i = 0; present && i < n; i++)
		if (split[i] < 0)
			return FAIL(c, "split size %lld", (long long)split[i]);
	if (!present) {
		int64_t len = x->dims[axis];
		int64_t num = vnpu_attr_int(c->n, "num_outputs", outs);

		for (uint32_t i = 0; i < outs; i++)
			split[i] = len < 0 ? VNPU_DIM_DYNAMIC : (len + num - 1) / num;
		if (len >= 0)
			split[outs - 1] = len - (len + num - 1) / num * (outs - 1);
		if (len >= 0 && (split[outs - 1] < 0))
			return FAIL(c, "dim %lld does not split into %u", (long long)len, outs);
	} else if (x->dims[axis] >= 0) {
		int64_t sum = 0;

		for (uint32_t i = 0; i < outs; i++) {
			/* each is at least 0: no sum past the dimension overflows */
			if (split[i] > x->dims[axis] - sum)
				return FAIL(c, "split sizes add to more than %lld",
					    (long long)x->dims[axis]);
			sum += split[i];
		}
		if (sum != x->dims[axis])
			return FAIL(c, "split sizes add to %lld, not %lld", (long long)sum,
				    (long long)x->dims[axis]);
	}
	memcpy(dims, x->dims, sizeof(dims));
	for (uint32_t i = 0; i < outs; i++) {
		if (!c->out[i])
			continue;
		dims[axis] = split[i];
		set_out(c->out[i], x->type, x->rank, dims);
	}
	if (has_data(x) && c->fold_limit > 0) {
		int64_t strides[VNPU_MAX_RANK], base = 0;

		dense_strides(x, strides);
		for (uint32_t i = 0; i < outs; i++) {
			if (c->out[i] && inf_alloc_out(c, c->out[i]))
				gather_view(c->out[i], x, base, strides);
			base += split[i] * strides[axis];
		}
	}
	return VNPU_OK;
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static vnpu_status infer_slice(struct ictx *c)
{
	const struct vnpu_tinfo *x;
	int64_t starts[VNPU_MAX_RANK], ends[VNPU_MAX_RANK], axes[VNPU_MAX_RANK],
		steps[VNPU_MAX_RANK], dims[VNPU_MAX_RANK], first[VNPU_MAX_RANK],
		step_of[VNPU_MAX_RANK];
	int32_t n, ne, na, ns;
	bool p1, p2, p3, p4;
	vnpu_status st = inf_need_inputs(c, 1, 5);

	if (st)
		return st;
	x = IN(c, 0);
	if (x->rank < 0) {
		set_out(c->out[0], x->type, -1, NULL);
		return VNPU_OK;
	}
	n = inf_attr_ints(c, "starts", 1, starts, VNPU_MAX_RANK, &p1);
	ne = inf_attr_ints(c, "ends", 2, ends, VNPU_MAX_RANK, &p2);
	na = inf_attr_ints(c, "axes", 3, axes, VNPU_MAX_RANK, &p3);
	ns = inf_attr_ints(c, "steps", 4, steps, VNPU_MAX_RANK, &p4);
	if (!p1 || !p2)
		return FAIL(c, "needs starts and ends");
	if (n < 0 || ne < 0 || na < 0 || ns < 0) {
		set_out(c->out[0], x->type, x->rank, NULL);
		return VNPU_OK;
	}
	if (ne != n || (p3 && na != n) || (p4 && ns != n))
		return FAIL(c, "starts, ends, axes and steps differ in length");
	memcpy(dims, x->dims, sizeof(dims));
	for (int32_t d = 0; d < x->rank; d++) {
		first[d] = 0;
		step_of[d] = 1;
	}
	for (int32_t i = 0; i < n; i++) {
		int64_t a, len, s, e, step = p4 ? steps[i] : 1;

		st = inf_check_axis(c, p3 ? axes[i] : i, x->rank, &a);
		if (st)
			return st;
		if (!step)
			return FAIL(c, "step 0");
		len = x->dims[a];
		if (len < 0) {
			dims[a] = VNPU_DIM_DYNAMIC;
			continue;
		}
		s = starts[i] < 0 ? starts[i] + len : starts[i];
		e = ends[i] < 0 ? ends[i] + len : ends[i];
		if (step > 0) {
			s = clamp64(s, 0, len);
			e = clamp64(e, 0, len);
			dims[a] = e > s ? (e - s + step - 1) / step : 0;
		} else {
			s = clamp64(s, 0, len - 1);
			e = clamp64(e, -1, len - 1);
			dims[a] = s > e ? (s - e - step - 1) / -step : 0;
		}
		first[a] = s;
		step_of[a] = step;
	}
	set_out(c->out[0], x->type, x->rank, dims);
	if (has_data(x) && c->fold_limit > 0 && inf_alloc_out(c, c->out[0])) {
		int64_t str[VNPU_MAX_RANK], base = 0;

		dense_strides(x, str);
		for (int32_t d = 0; d < x->rank; d++) {
			if (c->out[0]->dims[d])
				base += first[d] * str[d];
			str[d] *= step_of[d];
		}
		gather_view(c->out[0], x, base, str);
	}
	return VNPU_OK;
}

static vnpu_status infer_gather(struct ictx *c)
{
	const struct vnpu_tinfo *x, *idx;
	int64_t axis, dims[VNPU_MAX_RANK];
	int32_t rank = 0;
	vnpu_status st = inf_need_inputs(c, 2, 2);
	struct vnpu_tinfo *o = c->out[0];

	if (st)
		return st;
	x = IN(c, 0);
	idx = IN(c, 1);
	if (idx->type != VNPU_TYPE_I64 && idx->type != VNPU_TYPE_I32)
		return FAIL(c, "indices are %s", vnpu_element_type_str(idx->type));
	if (x->rank < 0 || idx->rank < 0) {
		set_out(o, x->type, -1, NULL);
		return VNPU_OK;
	}
	if (!x->rank)
		return FAIL(c, "data is a scalar");
	st = inf_check_axis(c, vnpu_attr_int(c->n, "axis", 0), x->rank, &axis);
	if (!st)
		st = inf_check_indexed(c, idx, x->dims[axis]);
	if (st)
		return st;
	if (x->rank + idx->rank - 1 > VNPU_MAX_RANK)
		return inf_limit(c, "rank above %d", VNPU_MAX_RANK);
	for (int32_t d = 0; d < axis; d++)
		dims[rank++] = x->dims[d];
	for (int32_t d = 0; d < idx->rank; d++)
		dims[rank++] = idx->dims[d];
	for (int32_t d = (int32_t)axis + 1; d < x->rank; d++)
		dims[rank++] = x->dims[d];
	set_out(o, x->type, rank, dims);
	if (inf_inputs_known(c) && inf_alloc_out(c, o)) {
		int64_t outer = 1, inner = 1, ni = vnpu_tinfo_elems(idx), len = x->dims[axis];
		size_t es = vnpu_element_type_size(x->type);

		for (int32_t d = 0; d < axis; d++)
			outer *= x->dims[d];
		for (int32_t d = (int32_t)axis + 1; d < x->rank; d++)
			inner *= x->dims[d];
		for (int64_t k = 0; k < ni; k++) {
			int64_t i = vnpu_elem_get_i(idx->data, idx->type, k);

			i = i < 0 ? i + len : i;
			if (i < 0 || i >= len) {
				vnpu_tinfo_clear(o);
				return FAIL(c, "index %lld out of range", (long long)i);
			}
			/* inner 0: nothing to copy from up to 2^40 outer rows */
			for (int64_t oi = 0; inner && oi < outer; oi++)
				memcpy((char *)o->data + ((oi * ni + k) * inner) * (int64_t)es,
				       (char *)x->data + ((oi * len + i) * inner) * (int64_t)es,
				       (size_t)inner * es);
		}
	}
	return VNPU_OK;
}

static vnpu_status infer_gather_elements(struct ictx *c)
{
	const struct vnpu_tinfo *x, *idx;
	int64_t axis;
	vnpu_status st = inf_need_inputs(c, 2, 2);

	if (st)
		return st;
	x = IN(c, 0);
	idx = IN(c, 1);
	if (idx->type != VNPU_TYPE_I64 && idx->type != VNPU_TYPE_I32)
		return FAIL(c, "indices are %s", vnpu_element_type_str(idx->type));
	if (x->rank >= 0 && idx->rank >= 0) {
		if (x->rank != idx->rank)
			return FAIL(c, "indices rank %d, data rank %d", idx->rank, x->rank);
		st = inf_check_axis(c, vnpu_attr_int(c->n, "axis", 0), x->rank, &axis);
		if (!st)
			st = inf_check_elements(c, x, idx, axis);
		if (st)
			return st;
	}
	copy_shape(c->out[0], idx, x->type);
	return VNPU_OK;
}

vnpu_status inf_check_elements(const struct ictx *c, const struct vnpu_tinfo *x,
			       const struct vnpu_tinfo *idx, int64_t axis)
{
	for (int32_t d = 0; d < x->rank; d++)
		if (d != axis && idx->dims[d] >= 0 && x->dims[d] >= 0 && idx->dims[d] > x->dims[d])
			return FAIL(c, "indices dimension %d is %lld, above the data's %lld", d,
				    (long long)idx->dims[d], (long long)x->dims[d]);
	return inf_check_indexed(c, idx, x->dims[axis]);
}

static vnpu_status infer_expand_tile(struct ictx *c)
{
	bool tile = !strcmp(c->n->op, "Tile");
	const struct vnpu_tinfo *x;
	int64_t v[VNPU_MAX_RANK], dims[VNPU_MAX_RANK];
	int32_t n, rank;
	vnpu_status st = inf_need_inputs(c, 2, 2);
	struct vnpu_tinfo *o = c->out[0];

	if (st)
		return st;
	x = IN(c, 0);
	n = inf_read_ints(IN(c, 1), v, VNPU_MAX_RANK);
	if (n < 0 || x->rank < 0) {
		const struct vnpu_tinfo *s = IN(c, 1);

		set_out(o, x->type, tile ? x->rank : s->rank == 1 && s->dims[0] >= 0 &&
			x->rank >= 0 && s->dims[0] >= x->rank ? (int32_t)s->dims[0] : -1, NULL);
		return VNPU_OK;
	}
	if (tile) {
		if (n != x->rank)
			return FAIL(c, "%d repeats for rank %d", n, x->rank);
		for (int32_t d = 0; d < n; d++) {
			if (v[d] < 0 || v[d] > VNPU_MAX_ELEMS ||
			    (x->dims[d] > 0 && v[d] > VNPU_MAX_ELEMS / x->dims[d]))
				return FAIL(c, "repeat %lld", (long long)v[d]);
			dims[d] = x->dims[d] < 0 ? VNPU_DIM_DYNAMIC : x->dims[d] * v[d];
		}
		rank = n;
	} else {
		struct vnpu_tinfo s = { .type = x->type, .rank = n };

		memcpy(s.dims, v, sizeof(v));
		st = inf_broadcast(c, x, &s, &rank, dims);
		if (st)
			return st;
	}
	set_out(o, x->type, rank, dims);
	if (has_data(x) && c->fold_limit > 0 && inf_alloc_out(c, o)) {
		int64_t idx[VNPU_MAX_RANK] = { 0 }, total = vnpu_tinfo_elems(o), str[VNPU_MAX_RANK];
		size_t es = vnpu_element_type_size(x->type);

		dense_strides(x, str);
		for (int64_t i = 0; i < total; i++) {
			int64_t off = 0;

			if (tile) {
				for (int32_t d = 0; d < rank; d++)
					off += (idx[d] % x->dims[d]) * str[d];
			} else {
				off = bcast_offset(x, rank, idx);
			}
			memcpy((char *)o->data + i * (int64_t)es, (char *)x->data + off * (int64_t)es, es);
			next_index(idx, rank, dims);
		}
	}
	return VNPU_OK;
}

static vnpu_status infer_constant_of_shape(struct ictx *c)
{
	const struct vnpu_attr *a = vnpu_node_attr(c->n, "value");
	int64_t dims[VNPU_MAX_RANK];
	int32_t n;
	vnpu_element_type t = VNPU_TYPE_F32;
	struct vnpu_tinfo *o = c->out[0];
	vnpu_status st = inf_need_inputs(c, 1, 1);

	if (st)
		return st;
	if (a && (a->type != VNPU_ATTR_TENSOR || vnpu_tinfo_elems(&a->t) != 1))
		return FAIL(c, "value must be a one-element tensor");
	if (a)
		t = a->t.type;
	n = inf_read_ints(IN(c, 0), dims, VNPU_MAX_RANK);
	if (n < 0) {
		const struct vnpu_tinfo *s = IN(c, 0);

		set_out(o, t, s->rank == 1 && s->dims[0] >= 0 ? (int32_t)s->dims[0] : -1, NULL);
		return VNPU_OK;
	}
	for (int32_t d = 0; d < n; d++)
		if (dims[d] < 0)
			return FAIL(c, "negative dimension");
	set_out(o, t, n, dims);
	if (inf_alloc_out(c, o)) {
		size_t es = vnpu_element_type_size(t);

		for (int64_t i = 0; i < vnpu_tinfo_elems(o); i++)
			if (a)
				memcpy((char *)o->data + i * (int64_t)es, a->t.data, es);
	}
	return VNPU_OK;
}

static vnpu_status infer_range(struct ictx *c)
{
	const struct vnpu_tinfo *s, *l, *d;
	double start, limit, delta, count;
	int64_t n;
	vnpu_status st = inf_need_inputs(c, 3, 3);

	if (st)
		return st;
	s = IN(c, 0);
	l = IN(c, 1);
	d = IN(c, 2);
	for (uint32_t i = 0; i < 3; i++) {
		int64_t k = vnpu_tinfo_elems(IN(c, i));

		if (k >= 0 && k != 1)
			return FAIL(c, "input %u holds %lld values, not one", i, (long long)k);
	}
	if (!has_data(s) || !has_data(l) || !has_data(d)) {
		set_out(c->out[0], s->type, 1, NULL);
		return VNPU_OK;
	}
	start = vnpu_elem_get_f(s->data, s->type, 0);
	limit = vnpu_elem_get_f(l->data, l->type, 0);
	delta = vnpu_elem_get_f(d->data, d->type, 0);
	if (delta == 0)
		return FAIL(c, "delta 0");
	count = ceil((limit - start) / delta);
	if (isnan(count))
		return FAIL(c, "start %g, limit %g, delta %g: no count", start, limit, delta);
	if (count > (double)(1ll << 32))
		return FAIL(c, "%g elements", count);
	n = count < 0 ? 0 : (int64_t)count;
	set_out(c->out[0], s->type, 1, &n);
	if (!inf_alloc_out(c, c->out[0]))
		return VNPU_OK;
	for (int64_t i = 0; i < n; i++) {
		if (vnpu_type_is_float(s->type)) {
			vnpu_elem_set_f(c->out[0]->data, s->type, i, start + (double)i * delta);
		} else {
			/* in 64 bits, wrapping as the integer type does past its range */
			uint64_t v = (uint64_t)vnpu_elem_get_i(s->data, s->type, 0) +
				     (uint64_t)i * (uint64_t)vnpu_elem_get_i(d->data, d->type, 0);

			vnpu_elem_set_i(c->out[0]->data, s->type, i, (int64_t)v);
		}
	}
	return VNPU_OK;
}

/* ---- NN ops ---- */

/* Ops whose output 0 has input 0's type and shape (checked inputs). */
static vnpu_status infer_same(struct ictx *c)
{
	vnpu_status st = inf_need_inputs(c, 1, 16);

	if (st)
		return st;
	copy_shape(c->out[0], IN(c, 0), IN(c, 0)->type);
	for (uint32_t i = 1; i < c->n->num_outputs; i++)
		if (c->out[i])
			set_out(c->out[i], IN(c, 0)->type, -1, NULL);
	return VNPU_OK;
}

/*
 * StringNormalizer: X [C] or [1, C] of strings; the stop words it drops
 * leave a length known only at run time (at least 1).
 */
static vnpu_status infer_string_normalizer(struct ictx *c)
{
	const struct vnpu_tinfo *x;
	vnpu_status st = inf_need_inputs(c, 1, 1);
	const char *action;

	if (st)
		return st;
	x = IN(c, 0);
	if (x->type != VNPU_TYPE_STRING && x->type != VNPU_TYPE_UNDEFINED)
		return FAIL(c, "input of %s, not string", vnpu_element_type_str(x->type));
	if (x->rank >= 0 && x->rank != 1 && !(x->rank == 2 && x->dims[0] == 1))
		return FAIL(c, "input of rank %d: [C] or [1, C] only", x->rank);
	action = vnpu_attr_str(c->n, "case_change_action", "NONE");
	if (strcmp(action, "NONE") && strcmp(action, "LOWER") && strcmp(action, "UPPER"))
		return FAIL(c, "case_change_action '%s': NONE, LOWER or UPPER", action);
	copy_shape(c->out[0], x, VNPU_TYPE_STRING);
	if (x->rank > 0)
		c->out[0]->dims[x->rank - 1] = VNPU_DIM_DYNAMIC;
	return VNPU_OK;
}

/* LRN: X [N, C, D1, ...], the window across C of size >= 1. */
static vnpu_status infer_lrn(struct ictx *c)
{
	int64_t size = vnpu_attr_int(c->n, "size", 0);
	vnpu_status st = inf_need_inputs(c, 1, 1);

	if (st)
		return st;
	if (IN(c, 0)->rank >= 0 && IN(c, 0)->rank < 2)
		return FAIL(c, "input rank %d, at least 2 (N, C, ...)", IN(c, 0)->rank);
	if (size < 1)
		return FAIL(c, "size %lld, at least 1", (long long)size);
	return infer_same(c);
}

/* Trilu: the last two dimensions are the matrices; k is one value. */
static vnpu_status infer_trilu(struct ictx *c)
{
	const struct vnpu_tinfo *x = IN(c, 0), *k = IN(c, 1);
	int64_t n = k ? vnpu_tinfo_elems(k) : 1;

	if (x && x->rank >= 0 && x->rank < 2)
		return FAIL(c, "input rank %d, at least 2", x->rank);
	if (n >= 0 && n != 1)
		return FAIL(c, "k holds %lld values, not one", (long long)n);
	return infer_same(c);
}

static vnpu_status infer_pad(struct ictx *c)
{
	const struct vnpu_tinfo *x;
	int64_t pads[VNPU_MAX_RANK * 2], dims[VNPU_MAX_RANK];
	int32_t n;
	bool present;
	vnpu_status st = inf_need_inputs(c, 1, 4);

	if (st)
		return st;
	x = IN(c, 0);
	n = inf_attr_ints(c, "pads", 1, pads, VNPU_MAX_RANK * 2, &present);
	if (!present)
		return FAIL(c, "has no pads");
	if (x->rank < 0 || n < 0 || IN(c, 3)) {
		set_out(c->out[0], x->type, x->rank, NULL);
		return VNPU_OK;
	}
	if (n != x->rank * 2)
		return FAIL(c, "%d pads for rank %d", n, x->rank);
	for (int32_t d = 0; d < n; d++)
		if (pads[d] > VNPU_MAX_ELEMS || pads[d] < -VNPU_MAX_ELEMS)
			return FAIL(c, "pad %lld", (long long)pads[d]);
	for (int32_t d = 0; d < x->rank; d++) {
		dims[d] = x->dims[d] < 0 ? -1 : x->dims[d] + pads[d] + pads[d + x->rank];
		if (x->dims[d] >= 0 && dims[d] < 0)
			return FAIL(c, "pads remove more than the dimension");
	}
	set_out(c->out[0], x->type, x->rank, dims);
	return VNPU_OK;
}

static vnpu_status infer_space_depth(struct ictx *c)
{
	bool d2s = !strcmp(c->n->op, "DepthToSpace");
	const struct vnpu_tinfo *x;
	int64_t b = vnpu_attr_int(c->n, "blocksize", 0), dims[4];
	vnpu_status st = inf_need_inputs(c, 1, 1);

	if (st)
		return st;
	x = IN(c, 0);
	if (b <= 0)
		return FAIL(c, "blocksize %lld", (long long)b);
	if (x->rank != 4)
		return x->rank < 0 ? (set_out(c->out[0], x->type, 4, NULL), VNPU_OK)
				   : FAIL(c, "input rank %d, not 4", x->rank);
	dims[0] = x->dims[0];
	if (d2s) {
		if (x->dims[1] >= 0 && x->dims[1] % (b * b))
			return FAIL(c, "channels not divisible by blocksize^2");
		dims[1] = x->dims[1] < 0 ? -1 : x->dims[1] / (b * b);
		dims[2] = x->dims[2] < 0 ? -1 : x->dims[2] * b;
		dims[3] = x->dims[3] < 0 ? -1 : x->dims[3] * b;
	} else {
		if ((x->dims[2] >= 0 && x->dims[2] % b) || (x->dims[3] >= 0 && x->dims[3] % b))
			return FAIL(c, "spatial dims not divisible by blocksize");
		dims[1] = x->dims[1] < 0 ? -1 : x->dims[1] * b * b;
		dims[2] = x->dims[2] < 0 ? -1 : x->dims[2] / b;
		dims[3] = x->dims[3] < 0 ? -1 : x->dims[3] / b;
	}
	set_out(c->out[0], x->type, 4, dims);
	return VNPU_OK;
}

/*
 * If: branches are inferred lazily. A known condition infers only its
 * branch (the other may be valid only for another input, as a model
 * switching on its sample rate is). Otherwise both are inferred: a branch
 * that cannot take the shapes leaves the outputs to the other one (it is
 * an error only if it is taken), both valid ones must agree on their
 * outputs' types, and the shapes merge.
 */
static vnpu_status infer_if(struct ictx *c)
{
	const struct vnpu_attr *tb = vnpu_node_attr(c->n, "then_branch");
	const struct vnpu_attr *eb = vnpu_node_attr(c->n, "else_branch");
	struct vnpu_tinfo *infos = (struct vnpu_tinfo *)c->in[c->n->num_inputs];
	vnpu_status st = inf_need_inputs(c, 1, 1), est;
	bool known, take_then = false;

	if (st)
		return st;
	if (!tb || !eb || !tb->g || !eb->g)
		return FAIL(c, "needs then_branch and else_branch graphs");
	/* One condition: the device's select would broadcast several. */
	if (vnpu_tinfo_static(IN(c, 0)) && vnpu_tinfo_elems(IN(c, 0)) != 1) {
		char buf[96];

		return FAIL(c, "cond is %s: it must hold one value",
			    vnpu_tinfo_str(IN(c, 0), buf, sizeof(buf)));
	}
	if (tb->g->num_outputs != c->n->num_outputs || eb->g->num_outputs != c->n->num_outputs)
		return FAIL(c, "branch outputs do not match the node's");
	known = has_data(IN(c, 0));
	if (known)
		take_then = ((uint8_t *)IN(c, 0)->data)[0] != 0;
	st = known && !take_then ? VNPU_OK : inf_subgraph(c, tb->g, infos);
	/* Unknown: the else branch is tried even when then failed. */
	est = known && take_then ? VNPU_OK : inf_subgraph(c, eb->g, infos);
	if (st && (known || est))
		return vnpu_node_prefix(st, c->n);
	if (est && known)
		return vnpu_node_prefix(est, c->n);
	for (uint32_t i = 0; i < c->n->num_outputs; i++) {
		const struct vnpu_tinfo *t = &infos[tb->g->outputs[i]], *e = &infos[eb->g->outputs[i]];
		struct vnpu_tinfo *o = c->out[i];

		if (!o)
			continue;
		if (known || st || est) {
			const struct vnpu_tinfo *src = (known ? take_then : !st) ? t : e;

			copy_shape(o, src, src->type);
			if (known)
				eval_view(c, o, src);
			continue;
		}
		if (t->type != e->type)
			return FAIL(c, "branches give output %u different types", i);
		copy_shape(o, t, t->type);
		if (t->rank != e->rank) {
			o->rank = -1;
			continue;
		}
		for (int32_t d = 0; d < t->rank; d++)
			if (t->dims[d] != e->dims[d])
				o->dims[d] = VNPU_DIM_DYNAMIC;
	}
	return VNPU_OK;
}

static const struct op_infer infer_table[] = {
	{ "Relu", infer_unary }, { "Sigmoid", infer_unary }, { "Tanh", infer_unary },
	{ "Exp", infer_unary }, { "Log", infer_unary }, { "Sqrt", infer_unary },
	{ "Abs", infer_unary }, { "Neg", infer_unary }, { "Reciprocal", infer_unary },
	{ "Floor", infer_unary }, { "Ceil", infer_unary }, { "Round", infer_unary },
	{ "Sin", infer_unary }, { "Cos", infer_unary }, { "Tan", infer_unary },
	{ "Asin", infer_unary }, { "Acos", infer_unary }, { "Atan", infer_unary },
	{ "Sinh", infer_unary }, { "Cosh", infer_unary }, { "Asinh", infer_unary },
	{ "Acosh", infer_unary }, { "Atanh", infer_unary }, { "Erf", infer_unary },
	{ "Sign", infer_unary }, { "Softplus", infer_unary }, { "Softsign", infer_unary },
	{ "Elu", infer_unary }, { "Selu", infer_unary }, { "Celu", infer_unary },
	{ "LeakyRelu", infer_unary }, { "HardSigmoid", infer_unary },
	{ "HardSwish", infer_unary }, { "Mish", infer_unary },
	{ "ThresholdedRelu", infer_unary }, { "Identity", infer_unary },
	{ "Dropout", infer_unary }, { "Clip", infer_unary }, { "Not", infer_unary },
	{ "Shrink", infer_unary }, { "Trilu", infer_trilu }, { "ReverseSequence", infer_same },
	{ "GatherElements", infer_gather_elements }, { "LpNormalization", infer_same },
	{ "IsNaN", infer_unary }, { "IsInf", infer_unary }, { "Add", infer_binary },
	{ "Sub", infer_binary }, { "Mul", infer_binary }, { "Div", infer_binary },
	{ "Pow", infer_binary }, { "Max", infer_binary }, { "Min", infer_binary },
	{ "Sum", infer_binary }, { "Mean", infer_binary }, { "Mod", infer_binary },
	{ "Equal", infer_binary }, { "Less", infer_binary }, { "Greater", infer_binary },
	{ "LessOrEqual", infer_binary }, { "GreaterOrEqual", infer_binary },
	{ "And", infer_binary }, { "Or", infer_binary }, { "Xor", infer_binary },
	{ "PRelu", infer_binary }, { "BitShift", infer_binary }, { "Where", infer_where },
	{ "Cast", infer_cast }, { "CastLike", infer_cast }, { "Constant", infer_constant },
	{ "Shape", infer_shape }, { "Size", infer_shape }, { "Reshape", infer_reshape },
	{ "Flatten", infer_flatten }, { "Squeeze", infer_squeeze },
	{ "Unsqueeze", infer_squeeze }, { "Transpose", infer_transpose },
	{ "Concat", infer_concat }, { "Split", infer_split }, { "Slice", infer_slice },
	{ "Gather", infer_gather }, { "Expand", infer_expand_tile },
	{ "Tile", infer_expand_tile }, { "ConstantOfShape", infer_constant_of_shape },
	{ "Range", infer_range }, { "LRN", infer_lrn }, { "CumSum", infer_same },
	{ "Pad", infer_pad }, { "DepthToSpace", infer_space_depth },
	{ "SpaceToDepth", infer_space_depth }, { "If", infer_if },
	{ "StringNormalizer", infer_string_normalizer },
};

static const struct op_infer *find(const struct op_infer *ops, size_t n, const char *op)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(ops[i].op, op))
			return &ops[i];
	return NULL;
}

/* No output of a rank above VNPU_MAX_RANK (it is forgotten: later nodes
 * never see it), no dimension negative (but unknown) or too large. */
static vnpu_status check_outputs(const struct ictx *c)
{
	for (uint32_t i = 0; i < c->n->num_outputs; i++) {
		struct vnpu_tinfo *o = c->out[i];
		bool known = o && o->rank >= 0;

		if (o && o->rank > VNPU_MAX_RANK) {
			int32_t rank = o->rank;

			for (uint32_t k = 0; k < c->n->num_outputs; k++)
				if (c->out[k])
					vnpu_tinfo_clear(c->out[k]);
			return inf_limit(c, "output %u has rank %d, above %d", i, rank,
					 VNPU_MAX_RANK);
		}

		for (int32_t d = 0; o && d < o->rank; d++) {
			if (o->dims[d] < VNPU_DIM_DYNAMIC || o->dims[d] > VNPU_MAX_ELEMS)
				return FAIL(c, "output %u has dimension %lld", i, (long long)o->dims[d]);
			known &= o->dims[d] >= 0;
		}
		if (known && vnpu_tinfo_elems(o) < 0)
			return FAIL(c, "output %u is too large", i);
	}
	return VNPU_OK;
}

/* One node, its ictx set up by the caller. */
static vnpu_status node_infer(struct ictx c)
{
	const struct vnpu_node *n = c.n;
	struct vnpu_tinfo *const *out = c.out;
	const struct op_infer *oi;
	vnpu_status st;

	for (uint32_t i = 0; i < n->num_outputs; i++)
		if (out[i])
			vnpu_tinfo_clear(out[i]);
	if (n->domain[0] && strcmp(n->domain, "ai.onnx.preview.training"))
		return inf_error(&c, VNPU_UNSUPPORTED, "domain '%s' is not supported", n->domain);
	if (n->domain[0]) {
		oi = find(vnpu_infer_train_ops, vnpu_infer_train_num_ops, n->op);
	} else {
		oi = find(infer_table, sizeof(infer_table) / sizeof(infer_table[0]), n->op);
		if (!oi)
			oi = find(vnpu_infer_nn_ops, vnpu_infer_nn_num_ops, n->op);
		if (!oi)
			oi = find(vnpu_infer_data_ops, vnpu_infer_data_num_ops, n->op);
		if (!oi)
			oi = find(vnpu_infer_loop_ops, vnpu_infer_loop_num_ops, n->op);
	}
	if (!oi)
		return inf_error(&c, VNPU_UNSUPPORTED, "unknown op");
	/* RNN, GRU and LSTM may leave out Y and keep Y_h. */
	if (!n->num_outputs || (!out[0] && strcmp(n->op, "LSTM") && strcmp(n->op, "GRU") &&
				strcmp(n->op, "RNN")))
		return inf_error(&c, VNPU_UNSUPPORTED, "its first output is omitted");
	st = oi->fn(&c);
	return st ? st : check_outputs(&c);
}

vnpu_status vnpu_node_infer(const struct vnpu_model *m, const struct vnpu_node *n,
			    struct vnpu_tinfo *const *in, struct vnpu_tinfo *const *out,
			    int64_t fold_limit)
{
	struct vnpu_work work = { 0 };

	return node_infer((struct ictx){ .m = m, .n = n, .in = in, .out = out,
					 .fold_limit = fold_limit, .work = &work });
}

/* How a graph's walk takes a node's VNPU_UNSUPPORTED. */
enum infer_mode {
	INFER_STRICT,	/* it fails the walk */
	INFER_LENIENT,	/* its outputs stay unknown, the walk goes on */
	INFER_RESHAPE,	/* so too, unless the node took the model's shapes
			 * before and the new ones are past a device limit */
};

/* Whether @n inferred in the model's last inference (its first output known). */
static bool inferred_before(const struct vnpu_model *m, const struct vnpu_node *n)
{
	for (uint32_t k = 0; k < n->num_outputs; k++)
		if (n->outputs[k] >= 0)
			return m->values[n->outputs[k]].info.type != VNPU_TYPE_UNDEFINED;
	return false;
}

static vnpu_status graph_infer(const struct vnpu_model *m, const struct vnpu_graph *g,
			       struct vnpu_tinfo *infos, int64_t fold_limit, enum infer_mode mode,
			       struct vnpu_work *work)
{
	struct vnpu_tinfo *in[1025], *out[64];

	for (uint32_t i = 0; i < g->num_nodes; i++) {
		const struct vnpu_node *n = &g->nodes[i];
		bool over_limit = false;
		vnpu_status st;

		st = vnpu_work_charge(work, n, 1);
		if (st)
			return st;
		if (n->num_inputs > 1024 || n->num_outputs > 64)
			return vnpu_node_error(VNPU_UNSUPPORTED, n, "too many inputs or outputs");
		for (uint32_t k = 0; k < n->num_inputs; k++)
			in[k] = n->inputs[k] >= 0 ? &infos[n->inputs[k]] : NULL;
		in[n->num_inputs] = infos;	/* If reaches the whole table */
		for (uint32_t k = 0; k < n->num_outputs; k++)
			out[k] = n->outputs[k] >= 0 ? &infos[n->outputs[k]] : NULL;
		st = node_infer((struct ictx){ .m = m, .n = n, .in = in, .out = out,
					       .fold_limit = fold_limit, .over_limit = &over_limit,
					       .work = work });
		/* Unknown ops leave their outputs unknown: query and compile
		 * report them node by node. */
		if (st && (mode == INFER_STRICT || st != VNPU_UNSUPPORTED || work->over))
			return st;
		if (st && mode == INFER_RESHAPE && over_limit && inferred_before(m, n))
			return st;
	}
	return VNPU_OK;
}

vnpu_status inf_subgraph(const struct ictx *c, const struct vnpu_graph *g,
			 struct vnpu_tinfo *infos)
{
	return graph_infer(c->m, g, infos, c->fold_limit, INFER_STRICT, c->work);
}

vnpu_status vnpu_graph_infer(const struct vnpu_model *m, const struct vnpu_graph *g,
			     struct vnpu_tinfo *infos, int64_t fold_limit, bool strict,
			     struct vnpu_work *work)
{
	struct vnpu_work own = { 0 };

	return graph_infer(m, g, infos, fold_limit, strict ? INFER_STRICT : INFER_LENIENT,
			   work ? work : &own);
}

vnpu_status vnpu_graph_reinfer(const struct vnpu_model *m, struct vnpu_tinfo *infos,
			       int64_t fold_limit)
{
	struct vnpu_work work = { 0 };

	return graph_infer(m, &m->main, infos, fold_limit, INFER_RESHAPE, &work);
}

// SPDX-License-Identifier: MIT
/*
 * Type and shape inference, op by op, with host evaluation of nodes whose
 * inputs are all known (constant folding): Shape -> Gather -> Concat ->
 * Reshape chains become constants, so the shapes after them are known.
 *
 * Every op checks what it reads (input count, types, ranks, attribute
 * values) and fails with a message naming the node: a malformed model is
 * an error here, not a crash later.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "ir.h"

struct ictx {
	const struct vnpu_model *m;
	const struct vnpu_node *n;
	struct vnpu_tinfo *const *in;
	struct vnpu_tinfo *const *out;
	int64_t fold_limit;
};

#define FAIL(c, ...) node_error((c), VNPU_PARSE_ERROR, __VA_ARGS__)

static vnpu_status node_error(const struct ictx *c, vnpu_status st, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static vnpu_status node_error(const struct ictx *c, vnpu_status st, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return vnpu_error(st, "node '%s' (%s): %s", c->n->name, c->n->op, msg);
}

static const struct vnpu_tinfo *IN(const struct ictx *c, uint32_t i)
{
	return i < c->n->num_inputs ? c->in[i] : NULL;
}

static int64_t opset(const struct ictx *c)
{
	return c->m->opset;
}

/* Checks that @i exists and its type is known; @what names it. */
static vnpu_status need(const struct ictx *c, uint32_t i)
{
	const struct vnpu_tinfo *t = IN(c, i);

	if (!t)
		return FAIL(c, "input %u is missing", i);
	if (t->type == VNPU_TYPE_UNDEFINED)
		return node_error(c, VNPU_UNSUPPORTED, "input %u has an unknown type", i);
	return VNPU_OK;
}

static vnpu_status need_inputs(const struct ictx *c, uint32_t min, uint32_t max)
{
	uint32_t n = c->n->num_inputs;

	if (n < min || n > max)
		return FAIL(c, "%u inputs, expected %u to %u", n, min, max);
	for (uint32_t i = 0; i < min; i++) {
		vnpu_status st = need(c, i);

		if (st)
			return st;
	}
	return VNPU_OK;
}

static void set_out(struct vnpu_tinfo *o, vnpu_element_type type, int32_t rank,
		    const int64_t *dims)
{
	o->type = type;
	o->rank = rank;
	for (int32_t d = 0; d < rank && d < VNPU_MAX_RANK; d++)
		o->dims[d] = dims ? dims[d] : VNPU_DIM_DYNAMIC;
}

static void copy_shape(struct vnpu_tinfo *o, const struct vnpu_tinfo *i, vnpu_element_type type)
{
	set_out(o, type, i->rank, i->dims);
}

static int64_t norm_axis(int64_t axis, int32_t rank)
{
	return axis < 0 ? axis + rank : axis;
}

static vnpu_status check_axis(const struct ictx *c, int64_t axis, int32_t rank, int64_t *out)
{
	int64_t a = norm_axis(axis, rank);

	*out = 0;
	if (a < 0 || a >= (rank ? rank : 1))
		return FAIL(c, "axis %lld out of range for rank %d", (long long)axis, rank);
	*out = a;
	return VNPU_OK;
}

static bool has_data(const struct vnpu_tinfo *t)
{
	return t && t->data && vnpu_tinfo_static(t);
}

/* Read a known 1-D (or scalar) integer tensor into @vals; -1 when unknown. */
static int32_t read_ints(const struct vnpu_tinfo *t, int64_t *vals, int32_t max)
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
static int32_t attr_or_input_ints(const struct ictx *c, const char *name, uint32_t idx,
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
	return read_ints(IN(c, idx), vals, max);
}

/* ---- evaluation helpers ---- */

/* Allocate @o's data for its static shape; false when too large to fold. */
static bool alloc_out(const struct ictx *c, struct vnpu_tinfo *o)
{
	int64_t n = vnpu_tinfo_elems(o);
	size_t es = vnpu_element_type_size(o->type);

	if (n < 0 || !es || n > c->fold_limit)
		return false;
	o->data = calloc(1, n ? (size_t)n * es : 1);
	o->owns_data = o->data != NULL;
	return o->data != NULL;
}

static bool all_inputs_known(const struct ictx *c)
{
	if (c->fold_limit <= 0)
		return false;
	for (uint32_t i = 0; i < c->n->num_inputs; i++)
		if (c->in[i] && !has_data(c->in[i]))
			return false;
	return true;
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

static vnpu_status broadcast(const struct ictx *c, const struct vnpu_tinfo *a,
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

	if (!all_inputs_known(c) || !alloc_out(c, o))
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

static vnpu_status infer_unary(struct ictx *c)
{
	const char *op = c->n->op;
	vnpu_element_type t;
	vnpu_status st = need_inputs(c, 1, strcmp(op, "Clip") ? (strcmp(op, "Dropout") ? 1 : 3) : 3);

	if (st)
		return st;
	t = IN(c, 0)->type;
	if (!strcmp(op, "Not") && t != VNPU_TYPE_BOOL)
		return FAIL(c, "input is %s, not bool", vnpu_element_type_str(t));
	copy_shape(c->out[0], IN(c, 0), t);
	if (!strcmp(op, "Dropout") && c->n->num_outputs > 1 && c->out[1])
		copy_shape(c->out[1], IN(c, 0), VNPU_TYPE_BOOL);
	if (!strcmp(op, "IsNaN") || !strcmp(op, "IsInf"))
		c->out[0]->type = VNPU_TYPE_BOOL;
	if (strcmp(op, "Dropout") && strcmp(op, "Clip"))
		eval_elementwise(c);
	else if (!strcmp(op, "Dropout") && all_inputs_known(c) && alloc_out(c, c->out[0]))
		memcpy(c->out[0]->data, IN(c, 0)->data,
		       (size_t)vnpu_tinfo_elems(c->out[0]) * vnpu_element_type_size(t));
	return VNPU_OK;
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

	st = need_inputs(c, variadic ? 1 : 2, variadic ? 64 : 2);
	if (st)
		return st;
	if (opset(c) < 7 && vnpu_attr_int(c->n, "broadcast", 0))
		return node_error(c, VNPU_UNSUPPORTED, "legacy (opset < 7) broadcasting");
	a = IN(c, 0);
	rank = a->rank;
	memcpy(dims, a->dims, sizeof(dims));
	for (uint32_t i = 1; i < c->n->num_inputs; i++) {
		struct vnpu_tinfo acc = { .type = a->type, .rank = rank };

		st = need(c, i);
		if (st)
			return st;
		b = IN(c, i);
		if (b->type != a->type && strcmp(op, "Pow") && strcmp(op, "BitShift"))
			return FAIL(c, "input types differ (%s vs %s)", vnpu_element_type_str(a->type),
				    vnpu_element_type_str(b->type));
		memcpy(acc.dims, dims, sizeof(dims));
		st = broadcast(c, &acc, b, &rank, dims);
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
	if (c->n->num_inputs <= 2 && strcmp(op, "Mean"))
		eval_elementwise(c);
	return VNPU_OK;
}

static vnpu_status infer_where(struct ictx *c)
{
	struct vnpu_tinfo acc;
	int64_t dims[VNPU_MAX_RANK];
	int32_t rank;
	vnpu_status st = need_inputs(c, 3, 3);
	struct vnpu_tinfo *o = c->out[0];

	if (st)
		return st;
	if (IN(c, 0)->type != VNPU_TYPE_BOOL || IN(c, 1)->type != IN(c, 2)->type)
		return FAIL(c, "needs a bool condition and two inputs of one type");
	st = broadcast(c, IN(c, 0), IN(c, 1), &rank, dims);
	if (st)
		return st;
	acc = (struct vnpu_tinfo){ .type = VNPU_TYPE_BOOL, .rank = rank };
	memcpy(acc.dims, dims, sizeof(dims));
	st = broadcast(c, &acc, IN(c, 2), &rank, dims);
	if (st)
		return st;
	set_out(o, IN(c, 1)->type, rank, dims);
	if (all_inputs_known(c) && alloc_out(c, o)) {
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
		st = need_inputs(c, 2, 2);
		if (st)
			return st;
		to = IN(c, 1)->type;
	} else {
		st = need_inputs(c, 1, 1);
		if (st)
			return st;
		to = (vnpu_element_type)vnpu_attr_int(c->n, "to", 0);
	}
	if (!vnpu_element_type_size(to))
		return node_error(c, VNPU_UNSUPPORTED, "cast to type %d not supported", (int)to);
	x = IN(c, 0);
	copy_shape(c->out[0], x, to);
	if (has_data(x) && c->fold_limit > 0 && alloc_out(c, c->out[0])) {
		int64_t n = vnpu_tinfo_elems(x);

		for (int64_t i = 0; i < n; i++) {
			if (vnpu_type_is_float(x->type) || vnpu_type_is_float(to))
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
	if (!strcmp(a->name, "value_float") || !strcmp(a->name, "value_int")) {
		set_out(o, a->type == VNPU_ATTR_FLOAT ? VNPU_TYPE_F32 : VNPU_TYPE_I64, 0, NULL);
	} else if (!strcmp(a->name, "value_floats") || !strcmp(a->name, "value_ints")) {
		int64_t n = (int64_t)a->n;

		set_out(o, a->type == VNPU_ATTR_FLOATS ? VNPU_TYPE_F32 : VNPU_TYPE_I64, 1, &n);
	} else {
		return node_error(c, VNPU_UNSUPPORTED, "attribute '%s' not supported", a->name);
	}
	if (!alloc_out(c, o) && !(o->data = calloc(1, a->n * 8 + 8)))
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory");
	o->owns_data = true;
	if (a->type == VNPU_ATTR_FLOAT)
		((float *)o->data)[0] = a->f;
	else if (a->type == VNPU_ATTR_INT)
		((int64_t *)o->data)[0] = a->i;
	else if (a->type == VNPU_ATTR_FLOATS)
		memcpy(o->data, a->floats, a->n * sizeof(float));
	else
		memcpy(o->data, a->ints, a->n * sizeof(int64_t));
	return VNPU_OK;
}

static vnpu_status infer_shape(struct ictx *c)
{
	const struct vnpu_tinfo *x;
	struct vnpu_tinfo *o = c->out[0];
	int64_t start = 0, end, n;
	vnpu_status st = need_inputs(c, 1, 1);

	if (st)
		return st;
	x = IN(c, 0);
	if (!strcmp(c->n->op, "Size")) {
		set_out(o, VNPU_TYPE_I64, 0, NULL);
		if (vnpu_tinfo_elems(x) >= 0 && c->fold_limit > 0 && alloc_out(c, o))
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
	if (c->fold_limit > 0 && alloc_out(c, o))
		memcpy(o->data, &x->dims[start], (size_t)n * sizeof(int64_t));
	return VNPU_OK;
}

/* Output @o is @x's data reinterpreted with @o's shape (a view). */
static void eval_view(const struct ictx *c, struct vnpu_tinfo *o, const struct vnpu_tinfo *x)
{
	if (has_data(x) && c->fold_limit > 0 && vnpu_tinfo_static(o) && alloc_out(c, o))
		memcpy(o->data, x->data,
		       (size_t)vnpu_tinfo_elems(o) * vnpu_element_type_size(o->type));
}

static vnpu_status infer_reshape(struct ictx *c)
{
	const struct vnpu_tinfo *x;
	int64_t shape[VNPU_MAX_RANK + 1], known = 1, total;
	int32_t n, infer_at = -1;
	bool present;
	vnpu_status st = need_inputs(c, 1, 2);

	if (st)
		return st;
	x = IN(c, 0);
	n = attr_or_input_ints(c, "shape", 1, shape, VNPU_MAX_RANK + 1, &present);
	if (!present)
		return FAIL(c, "has no shape");
	if (n > VNPU_MAX_RANK)
		return node_error(c, VNPU_UNSUPPORTED, "rank above %d", VNPU_MAX_RANK);
	if (n < 0) {
		const struct vnpu_tinfo *s = IN(c, 1);

		set_out(c->out[0], x->type, s && s->rank == 1 && s->dims[0] >= 0 ?
			(int32_t)s->dims[0] : -1, NULL);
		return VNPU_OK;
	}
	total = vnpu_tinfo_elems(x);
	for (int32_t d = 0; d < n; d++) {
		if (shape[d] > VNPU_MAX_ELEMS)
			return FAIL(c, "shape entry %lld", (long long)shape[d]);
		if (shape[d] == 0 && !vnpu_attr_int(c->n, "allowzero", 0)) {
			if (d >= x->rank)
				return FAIL(c, "shape copies dim %d of a rank %d input", d, x->rank);
			shape[d] = x->dims[d];
		}
		if (shape[d] == -1) {
			if (infer_at >= 0)
				return FAIL(c, "shape has two -1 entries");
			infer_at = d;
		} else if (shape[d] < -1) {
			return FAIL(c, "shape entry %lld", (long long)shape[d]);
		} else if (shape[d] >= 0 && known >= 0) {
			known = known && shape[d] > VNPU_MAX_ELEMS / known ? VNPU_MAX_ELEMS + 1
									  : known * shape[d];
		}
		if (shape[d] == VNPU_DIM_DYNAMIC && d != infer_at)
			known = -1;
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
	vnpu_status st = need_inputs(c, 1, 1);

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
	vnpu_status st = need_inputs(c, 1, 2);

	if (st)
		return st;
	x = IN(c, 0);
	n = attr_or_input_ints(c, "axes", 1, axes, VNPU_MAX_RANK, &present);
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
		return node_error(c, VNPU_UNSUPPORTED, "rank above %d", VNPU_MAX_RANK);
	for (int32_t i = 0; i < n; i++) {
		int64_t a;

		st = check_axis(c, axes[i], rank, &a);
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
				if (x->dims[d] > 1)
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
	vnpu_status st = need_inputs(c, 1, 1);

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
	if (has_data(x) && c->fold_limit > 0 && alloc_out(c, c->out[0])) {
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
	vnpu_status st = need_inputs(c, 1, 1024);
	struct vnpu_tinfo *o = c->out[0];

	if (st)
		return st;
	x = IN(c, 0);
	for (uint32_t i = 1; i < c->n->num_inputs; i++) {
		if ((st = need(c, i)))
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
	st = check_axis(c, vnpu_attr_int(c->n, "axis", 0), x->rank, &axis);
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
	if (all_inputs_known(c) && alloc_out(c, o)) {
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
	vnpu_status st = need_inputs(c, 1, 2);

	if (st)
		return st;
	x = IN(c, 0);
	if (x->rank < 0) {
		for (uint32_t i = 0; i < outs; i++)
			if (c->out[i])
				set_out(c->out[i], x->type, -1, NULL);
		return VNPU_OK;
	}
	st = check_axis(c, vnpu_attr_int(c->n, "axis", 0), x->rank, &axis);
	if (st)
		return st;
	n = attr_or_input_ints(c, "split", 1, split, 64, &present);
	if (present && n != (int32_t)outs)
		return n < 0 ? node_error(c, VNPU_UNSUPPORTED, "split sizes are not constant")
			     : FAIL(c, "%d split sizes for %u outputs", n, outs);
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

		for (uint32_t i = 0; i < outs; i++)
			sum += split[i];
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
			if (c->out[i] && alloc_out(c, c->out[i]))
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
	vnpu_status st = need_inputs(c, 1, 5);

	if (st)
		return st;
	x = IN(c, 0);
	if (x->rank < 0) {
		set_out(c->out[0], x->type, -1, NULL);
		return VNPU_OK;
	}
	n = attr_or_input_ints(c, "starts", 1, starts, VNPU_MAX_RANK, &p1);
	ne = attr_or_input_ints(c, "ends", 2, ends, VNPU_MAX_RANK, &p2);
	na = attr_or_input_ints(c, "axes", 3, axes, VNPU_MAX_RANK, &p3);
	ns = attr_or_input_ints(c, "steps", 4, steps, VNPU_MAX_RANK, &p4);
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

		st = check_axis(c, p3 ? axes[i] : i, x->rank, &a);
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
	if (has_data(x) && c->fold_limit > 0 && alloc_out(c, c->out[0])) {
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
	vnpu_status st = need_inputs(c, 2, 2);
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
	st = check_axis(c, vnpu_attr_int(c->n, "axis", 0), x->rank, &axis);
	if (st)
		return st;
	if (x->rank + idx->rank - 1 > VNPU_MAX_RANK)
		return node_error(c, VNPU_UNSUPPORTED, "rank above %d", VNPU_MAX_RANK);
	for (int32_t d = 0; d < axis; d++)
		dims[rank++] = x->dims[d];
	for (int32_t d = 0; d < idx->rank; d++)
		dims[rank++] = idx->dims[d];
	for (int32_t d = (int32_t)axis + 1; d < x->rank; d++)
		dims[rank++] = x->dims[d];
	set_out(o, x->type, rank, dims);
	if (all_inputs_known(c) && alloc_out(c, o)) {
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
			for (int64_t oi = 0; oi < outer; oi++)
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
	vnpu_status st = need_inputs(c, 2, 2);

	if (st)
		return st;
	x = IN(c, 0);
	idx = IN(c, 1);
	if (idx->type != VNPU_TYPE_I64 && idx->type != VNPU_TYPE_I32)
		return FAIL(c, "indices are %s", vnpu_element_type_str(idx->type));
	if (x->rank >= 0 && idx->rank >= 0) {
		if (x->rank != idx->rank)
			return FAIL(c, "indices rank %d, data rank %d", idx->rank, x->rank);
		st = check_axis(c, vnpu_attr_int(c->n, "axis", 0), x->rank, &axis);
		if (st)
			return st;
	}
	copy_shape(c->out[0], idx, x->type);
	return VNPU_OK;
}

/* NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss. */
static vnpu_status infer_loss(struct ictx *c)
{
	const struct vnpu_tinfo *x, *t;
	const char *red = vnpu_attr_str(c->n, "reduction", "mean");
	vnpu_status st = need_inputs(c, 2, 3);

	if (st)
		return st;
	x = IN(c, 0);
	t = IN(c, 1);
	if (t->type != VNPU_TYPE_I64 && t->type != VNPU_TYPE_I32)
		return FAIL(c, "target is %s", vnpu_element_type_str(t->type));
	if (x->rank >= 0 && (x->rank < 2 || (t->rank >= 0 && t->rank != x->rank - 1)))
		return FAIL(c, "input rank %d, target rank %d", x->rank, t->rank);
	if (!strcmp(red, "none"))
		copy_shape(c->out[0], t, x->type);
	else if (!strcmp(red, "sum") || !strcmp(red, "mean"))
		set_out(c->out[0], x->type, 0, NULL);
	else
		return FAIL(c, "reduction '%s'", red);
	if (c->n->num_outputs > 1 && c->out[1])
		copy_shape(c->out[1], x, x->type);
	return VNPU_OK;
}

/* EyeLike depends on the input's shape only: always a constant. */
static vnpu_status infer_eye_like(struct ictx *c)
{
	const struct vnpu_tinfo *x;
	struct vnpu_tinfo *o = c->out[0];
	int64_t k = vnpu_attr_int(c->n, "k", 0);
	vnpu_element_type t;
	vnpu_status st = need_inputs(c, 1, 1);

	if (st)
		return st;
	x = IN(c, 0);
	t = (vnpu_element_type)vnpu_attr_int(c->n, "dtype", x->type);
	if (!vnpu_element_type_size(t))
		return node_error(c, VNPU_UNSUPPORTED, "dtype %d", (int)t);
	if (x->rank >= 0 && x->rank != 2)
		return FAIL(c, "input rank %d, not 2", x->rank);
	copy_shape(o, x, t);
	if (c->fold_limit > 0 && vnpu_tinfo_static(o) && alloc_out(c, o))
		for (int64_t i = 0; i < o->dims[0]; i++)
			if (i + k >= 0 && i + k < o->dims[1])
				vnpu_elem_set_i(o->data, t, i * o->dims[1] + i + k, 1);
	return VNPU_OK;
}

/* RNN, GRU, LSTM: Y [seq, dirs, batch, H], Y_h and Y_c [dirs, batch, H]
 * (layout 1: batch first). */
static vnpu_status infer_rnn(struct ictx *c)
{
	const struct vnpu_tinfo *x, *w;
	int64_t gates = !strcmp(c->n->op, "LSTM") ? 4 : !strcmp(c->n->op, "GRU") ? 3 : 1;
	bool batch_first = vnpu_attr_int(c->n, "layout", 0);
	int64_t seq, batch, dirs, hidden, y[4], yh[3];
	vnpu_status st = need_inputs(c, 3, 8);

	if (st)
		return st;
	x = IN(c, 0);
	w = IN(c, 1);
	if (x->type != w->type || IN(c, 2)->type != x->type)
		return FAIL(c, "input types differ");
	if ((x->rank >= 0 && x->rank != 3) || (w->rank >= 0 && w->rank != 3))
		return FAIL(c, "X and W must have rank 3");
	seq = x->rank < 0 ? -1 : x->dims[batch_first ? 1 : 0];
	batch = x->rank < 0 ? -1 : x->dims[batch_first ? 0 : 1];
	dirs = !strcmp(vnpu_attr_str(c->n, "direction", "forward"), "bidirectional") ? 2 : 1;
	hidden = vnpu_attr_int(c->n, "hidden_size", w->rank == 3 && w->dims[1] >= 0 ?
			       w->dims[1] / gates : -1);
	if (w->rank == 3 && w->dims[0] >= 0 && w->dims[0] != dirs)
		return FAIL(c, "W has %lld directions, expected %lld", (long long)w->dims[0],
			    (long long)dirs);
	if (batch_first) {
		y[0] = batch, y[1] = seq, y[2] = dirs, y[3] = hidden;
		yh[0] = batch, yh[1] = dirs, yh[2] = hidden;
	} else {
		y[0] = seq, y[1] = dirs, y[2] = batch, y[3] = hidden;
		yh[0] = dirs, yh[1] = batch, yh[2] = hidden;
	}
	if (c->out[0])
		set_out(c->out[0], x->type, 4, y);
	for (uint32_t i = 1; i < c->n->num_outputs && i < 3; i++)
		if (c->out[i])
			set_out(c->out[i], x->type, 3, yh);
	return VNPU_OK;
}

/* OneHot: the indices' shape with depth inserted at axis. */
static vnpu_status infer_one_hot(struct ictx *c)
{
	const struct vnpu_tinfo *idx, *depth, *values;
	int64_t axis, dims[VNPU_MAX_RANK], d = VNPU_DIM_DYNAMIC;
	vnpu_status st = need_inputs(c, 3, 3);

	if (st)
		return st;
	idx = IN(c, 0);
	depth = IN(c, 1);
	values = IN(c, 2);
	if (idx->rank < 0) {
		set_out(c->out[0], values->type, -1, NULL);
		return VNPU_OK;
	}
	if (idx->rank + 1 > VNPU_MAX_RANK)
		return node_error(c, VNPU_UNSUPPORTED, "rank above %d", VNPU_MAX_RANK);
	st = check_axis(c, vnpu_attr_int(c->n, "axis", -1), idx->rank + 1, &axis);
	if (st)
		return st;
	if (has_data(depth) && vnpu_tinfo_elems(depth) == 1) {
		d = (int64_t)vnpu_elem_get_f(depth->data, depth->type, 0);
		if (d < 1 || d > (1 << 24))
			return FAIL(c, "depth %lld", (long long)d);
	}
	for (int32_t k = 0, j = 0; k <= idx->rank; k++)
		dims[k] = k == axis ? d : idx->dims[j++];
	set_out(c->out[0], values->type, idx->rank + 1, dims);
	return VNPU_OK;
}

/* QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear. */
static vnpu_status infer_quant(struct ictx *c)
{
	const struct vnpu_tinfo *x;
	vnpu_status st;

	if (!strcmp(c->n->op, "DynamicQuantizeLinear")) {
		st = need_inputs(c, 1, 1);
		if (st)
			return st;
		copy_shape(c->out[0], IN(c, 0), VNPU_TYPE_U8);
		if (c->n->num_outputs > 1 && c->out[1])
			set_out(c->out[1], VNPU_TYPE_F32, 0, NULL);
		if (c->n->num_outputs > 2 && c->out[2])
			set_out(c->out[2], VNPU_TYPE_U8, 0, NULL);
		return VNPU_OK;
	}
	st = need_inputs(c, 2, 3);
	if (st)
		return st;
	x = IN(c, 0);
	if (IN(c, 1)->rank > 1 || (IN(c, 2) && IN(c, 2)->rank > 1))
		return FAIL(c, "scale and zero point must be scalars or 1-D");
	if (!strcmp(c->n->op, "DequantizeLinear"))
		copy_shape(c->out[0], x, IN(c, 1)->type);
	else
		copy_shape(c->out[0], x, IN(c, 2) ? IN(c, 2)->type : VNPU_TYPE_U8);
	return VNPU_OK;
}

static int einsum_label(char ch)
{
	if (ch >= 'a' && ch <= 'z')
		return ch - 'a';
	if (ch >= 'A' && ch <= 'Z')
		return 26 + ch - 'A';
	return -1;
}

/* Labels of one term into @labels; "..." becomes labels 52.. from the
 * right. Returns the count or -1. */
static int einsum_term(const char *p, const char *end, int rank, int8_t *labels)
{
	int n = 0, ell = -1;

	for (; p < end; p++) {
		if (*p == ' ')
			continue;
		if (*p == '.') {
			if (ell >= 0 || end - p < 3 || p[1] != '.' || p[2] != '.')
				return -1;
			ell = n;
			p += 2;
			continue;
		}
		if (einsum_label(*p) < 0 || n >= VNPU_MAX_RANK)
			return -1;
		labels[n++] = (int8_t)einsum_label(*p);
	}
	if (ell >= 0) {
		int extra = rank < 0 ? 0 : rank - n;

		if (extra < 0 || n + extra > VNPU_MAX_RANK)
			return -1;
		memmove(labels + ell + extra, labels + ell, (size_t)(n - ell));
		for (int k = 0; k < extra; k++)	/* right-aligned like broadcasting */
			labels[ell + k] = (int8_t)(52 + VNPU_MAX_RANK - extra + k);
		n += extra;
	}
	return n;
}

bool vnpu_einsum_parse(const char *eq, int num_in, const int32_t *ranks, struct vnpu_einsum *e)
{
	const char *arrow = strstr(eq, "->"), *p = eq, *end = arrow ? arrow : eq + strlen(eq);
	int count[64] = { 0 };

	memset(e, 0, sizeof(*e));
	if (num_in < 1 || num_in > VNPU_EINSUM_MAX_IN)
		return false;
	for (int i = 0; i < num_in; i++) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		const char *stop = comma && i + 1 < num_in ? comma : end;

		if ((i + 1 < num_in) != (comma != NULL))
			return false;
		e->rank[i] = einsum_term(p, stop, ranks[i], e->in[i]);
		if (e->rank[i] < 0 || e->rank[i] != ranks[i])
			return false;
		for (int k = 0; k < e->rank[i]; k++)
			count[e->in[i][k]]++;
		p = stop + 1;
	}
	e->num_in = num_in;
	if (arrow) {
		int8_t seen[64] = { 0 };
		int ell_rank = 0;

		for (int i = 0; i < num_in; i++)
			for (int k = 0; k < e->rank[i]; k++)
				if (e->in[i][k] >= 52 && 52 + VNPU_MAX_RANK - e->in[i][k] > ell_rank)
					ell_rank = 52 + VNPU_MAX_RANK - e->in[i][k];
		e->out_rank = einsum_term(arrow + 2, arrow + strlen(arrow), -1, e->out);
		if (e->out_rank < 0)
			return false;
		/* An output "..." stands for the widest operand's ellipsis. */
		if (strstr(arrow + 2, "...")) {
			const char *q = strstr(arrow + 2, "...");
			int8_t tmp[VNPU_MAX_RANK];
			int before = 0;

			for (const char *r = arrow + 2; r < q; r++)
				before += einsum_label(*r) >= 0;
			if (e->out_rank + ell_rank > VNPU_MAX_RANK)
				return false;
			memcpy(tmp, e->out, sizeof(tmp));
			for (int k = 0; k < ell_rank; k++)
				e->out[before + k] = (int8_t)(52 + VNPU_MAX_RANK - ell_rank + k);
			memcpy(e->out + before + ell_rank, tmp + before,
			       (size_t)(e->out_rank - before));
			e->out_rank += ell_rank;
		}
		for (int k = 0; k < e->out_rank; k++) {
			if (!count[e->out[k]] || seen[e->out[k]]++)
				return false;
		}
		return true;
	}
	/* Implicit output: ellipsis, then the labels seen once, sorted. */
	for (int l = 52; l < 64; l++)
		if (count[l] && e->out_rank < VNPU_MAX_RANK)
			e->out[e->out_rank++] = (int8_t)l;
	for (int l = 0; l < 52; l++)
		if (count[l] == 1) {
			if (e->out_rank >= VNPU_MAX_RANK)
				return false;
			e->out[e->out_rank++] = (int8_t)l;
		}
	return true;
}

static vnpu_status infer_einsum(struct ictx *c)
{
	const char *eq = vnpu_attr_str(c->n, "equation", NULL);
	int64_t size[64], dims[VNPU_MAX_RANK];
	int32_t ranks[VNPU_EINSUM_MAX_IN];
	struct vnpu_einsum e;
	vnpu_status st = need_inputs(c, 1, VNPU_EINSUM_MAX_IN);

	if (st)
		return st;
	if (!eq)
		return FAIL(c, "no equation");
	for (uint32_t i = 0; i < c->n->num_inputs; i++) {
		if ((st = need(c, i)))
			return st;
		if (IN(c, i)->type != IN(c, 0)->type)
			return FAIL(c, "input types differ");
		if (IN(c, i)->rank < 0) {
			set_out(c->out[0], IN(c, 0)->type, -1, NULL);
			return VNPU_OK;
		}
		ranks[i] = IN(c, i)->rank;
	}
	if (!vnpu_einsum_parse(eq, (int)c->n->num_inputs, ranks, &e))
		return node_error(c, VNPU_UNSUPPORTED, "equation '%s' not supported", eq);
	for (int l = 0; l < 64; l++)
		size[l] = -2;
	for (int i = 0; i < e.num_in; i++)
		for (int k = 0; k < e.rank[i]; k++) {
			int64_t d = IN(c, (uint32_t)i)->dims[k], *sz = &size[e.in[i][k]];

			if (*sz == -2 || *sz == 1 || *sz == VNPU_DIM_DYNAMIC)
				*sz = d == 1 && *sz >= 0 ? *sz : d;
			else if (d >= 0 && d != 1 && d != *sz)
				return FAIL(c, "label dims %lld and %lld differ", (long long)*sz,
					    (long long)d);
		}
	for (int k = 0; k < e.out_rank; k++)
		dims[k] = size[e.out[k]];
	set_out(c->out[0], IN(c, 0)->type, e.out_rank, dims);
	return VNPU_OK;
}

/* Hann, Hamming and Blackman windows: constants of the size given. */
static vnpu_status infer_window(struct ictx *c)
{
	vnpu_element_type t = (vnpu_element_type)vnpu_attr_int(c->n, "output_datatype", VNPU_TYPE_F32);
	bool periodic = vnpu_attr_int(c->n, "periodic", 1);
	struct vnpu_tinfo *o = c->out[0];
	int64_t n;
	vnpu_status st = need_inputs(c, 1, 1);

	if (st)
		return st;
	if (!vnpu_element_type_size(t))
		return node_error(c, VNPU_UNSUPPORTED, "output type %d", (int)t);
	if (read_ints(IN(c, 0), &n, 1) != 1) {
		set_out(o, t, 1, NULL);
		return VNPU_OK;
	}
	if (n < 0 || n > (1 << 24))
		return FAIL(c, "size %lld", (long long)n);
	set_out(o, t, 1, &n);
	if (c->fold_limit > 0 && alloc_out(c, o)) {
		double den = (double)(periodic ? n : n - 1), pi = 3.14159265358979323846;

		for (int64_t i = 0; i < n; i++) {
			double x = den > 0 ? 2 * pi * (double)i / den : 0, v;

			if (!strcmp(c->n->op, "HannWindow"))
				v = 0.5 - 0.5 * cos(x);
			else if (!strcmp(c->n->op, "HammingWindow"))
				v = 25.0 / 46.0 - (1 - 25.0 / 46.0) * cos(x);
			else
				v = 0.42 - 0.5 * cos(x) + 0.08 * cos(2 * x);
			vnpu_elem_set_f(o->data, t, i, v);
		}
	}
	return VNPU_OK;
}

/* DFT (x [.., N, .., 1|2], axis) and STFT (signal [B, L, 1|2], step,
 * [window], [frame_length]): complex outputs as a last axis of 2. */
static vnpu_status infer_fourier(struct ictx *c)
{
	bool stft = !strcmp(c->n->op, "STFT");
	bool onesided = vnpu_attr_int(c->n, "onesided", stft);
	const struct vnpu_tinfo *x;
	int64_t dims[VNPU_MAX_RANK], len, axis;
	vnpu_status st = need_inputs(c, stft ? 2 : 1, stft ? 4 : 2);

	if (st)
		return st;
	x = IN(c, 0);
	if (x->rank < 0) {
		set_out(c->out[0], x->type, stft ? 4 : -1, NULL);
		return VNPU_OK;
	}
	if (x->rank < 3 || (x->dims[x->rank - 1] >= 0 && x->dims[x->rank - 1] != 1 &&
			    x->dims[x->rank - 1] != 2))
		return FAIL(c, "input must be [batch, ..., 1 or 2]");
	memcpy(dims, x->dims, sizeof(dims));
	dims[x->rank - 1] = 2;
	if (!stft) {
		st = check_axis(c, vnpu_attr_int(c->n, "axis", 1), x->rank, &axis);
		if (st)
			return st;
		if (axis == 0 || axis == x->rank - 1)
			return FAIL(c, "axis %lld", (long long)axis);
		if (read_ints(IN(c, 1), &len, 1) != 1)
			len = IN(c, 1) ? VNPU_DIM_DYNAMIC : x->dims[axis];
		dims[axis] = len < 0 ? len : onesided ? len / 2 + 1 : len;
		set_out(c->out[0], x->type, x->rank, dims);
		return VNPU_OK;
	} else {
		int64_t step, flen, sig = x->dims[1];
		const struct vnpu_tinfo *w = IN(c, 2);

		if (x->rank != 3)
			return FAIL(c, "signal rank %d, not 3", x->rank);
		if (read_ints(IN(c, 1), &step, 1) != 1 ||
		    (IN(c, 3) ? read_ints(IN(c, 3), &flen, 1) != 1 :
		     !(w && w->rank == 1 && (flen = w->dims[0]) >= 0))) {
			set_out(c->out[0], x->type, 4, NULL);
			return VNPU_OK;
		}
		if (step <= 0 || flen <= 0 || (sig >= 0 && flen > sig))
			return FAIL(c, "frame step %lld, frame length %lld", (long long)step,
				    (long long)flen);
		dims[0] = x->dims[0];
		dims[1] = sig < 0 ? -1 : (sig - flen) / step + 1;
		dims[2] = onesided ? flen / 2 + 1 : flen;
		dims[3] = 2;
		set_out(c->out[0], x->type, 4, dims);
		return VNPU_OK;
	}
}

static vnpu_status infer_expand_tile(struct ictx *c)
{
	bool tile = !strcmp(c->n->op, "Tile");
	const struct vnpu_tinfo *x;
	int64_t v[VNPU_MAX_RANK], dims[VNPU_MAX_RANK];
	int32_t n, rank;
	vnpu_status st = need_inputs(c, 2, 2);
	struct vnpu_tinfo *o = c->out[0];

	if (st)
		return st;
	x = IN(c, 0);
	n = read_ints(IN(c, 1), v, VNPU_MAX_RANK);
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
		st = broadcast(c, x, &s, &rank, dims);
		if (st)
			return st;
	}
	set_out(o, x->type, rank, dims);
	if (has_data(x) && c->fold_limit > 0 && alloc_out(c, o)) {
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
	vnpu_status st = need_inputs(c, 1, 1);

	if (st)
		return st;
	if (a && (a->type != VNPU_ATTR_TENSOR || vnpu_tinfo_elems(&a->t) != 1))
		return FAIL(c, "value must be a one-element tensor");
	if (a)
		t = a->t.type;
	n = read_ints(IN(c, 0), dims, VNPU_MAX_RANK);
	if (n < 0) {
		const struct vnpu_tinfo *s = IN(c, 0);

		set_out(o, t, s->rank == 1 && s->dims[0] >= 0 ? (int32_t)s->dims[0] : -1, NULL);
		return VNPU_OK;
	}
	for (int32_t d = 0; d < n; d++)
		if (dims[d] < 0)
			return FAIL(c, "negative dimension");
	set_out(o, t, n, dims);
	if (alloc_out(c, o)) {
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
	int64_t n;
	vnpu_status st = need_inputs(c, 3, 3);

	if (st)
		return st;
	s = IN(c, 0);
	l = IN(c, 1);
	d = IN(c, 2);
	if (!has_data(s) || !has_data(l) || !has_data(d)) {
		set_out(c->out[0], s->type, 1, NULL);
		return VNPU_OK;
	}
	{
		double start = vnpu_elem_get_f(s->data, s->type, 0);
		double limit = vnpu_elem_get_f(l->data, l->type, 0);
		double delta = vnpu_elem_get_f(d->data, d->type, 0);

		if (delta == 0)
			return FAIL(c, "delta 0");
		n = (int64_t)ceil((limit - start) / delta);
		n = n < 0 ? 0 : n;
		if (n > (1ll << 32))
			return FAIL(c, "%lld elements", (long long)n);
		set_out(c->out[0], s->type, 1, &n);
		if (alloc_out(c, c->out[0]))
			for (int64_t i = 0; i < n; i++) {
				if (vnpu_type_is_float(s->type))
					vnpu_elem_set_f(c->out[0]->data, s->type, i, start + (double)i * delta);
				else
					vnpu_elem_set_i(c->out[0]->data, s->type, i,
							vnpu_elem_get_i(s->data, s->type, 0) +
							i * vnpu_elem_get_i(d->data, d->type, 0));
			}
	}
	return VNPU_OK;
}

/* ---- NN ops ---- */

/* Spatial output size of conv/pool along one axis. */
static int64_t window_out(int64_t in, int64_t k, int64_t stride, int64_t dil, int64_t pad_total,
			  bool ceil_mode)
{
	int64_t eff = (k - 1) * dil + 1, span = in + pad_total - eff;

	if (in < 0)
		return VNPU_DIM_DYNAMIC;
	if (span < 0)
		return -2;
	return (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
}

/* Conv / pool geometry: fills out spatial dims from X's and the kernel's. */
static vnpu_status window_dims(struct ictx *c, const struct vnpu_tinfo *x, const int64_t *kernel,
			       int32_t nsp, int64_t *out_sp)
{
	const struct vnpu_attr *st_a = vnpu_node_attr(c->n, "strides");
	const struct vnpu_attr *di_a = vnpu_node_attr(c->n, "dilations");
	const struct vnpu_attr *pa_a = vnpu_node_attr(c->n, "pads");
	const char *autopad = vnpu_attr_str(c->n, "auto_pad", "NOTSET");
	bool ceil_mode = vnpu_attr_int(c->n, "ceil_mode", 0);

	if ((st_a && st_a->n != (size_t)nsp) || (di_a && di_a->n != (size_t)nsp) ||
	    (pa_a && pa_a->n != (size_t)nsp * 2))
		return FAIL(c, "strides, dilations or pads do not match %d spatial dims", nsp);
	for (int32_t d = 0; d < nsp; d++) {
		int64_t in = x->dims[2 + d], s = st_a ? st_a->ints[d] : 1, dl = di_a ? di_a->ints[d] : 1;
		int64_t pads = pa_a ? pa_a->ints[d] + pa_a->ints[d + nsp] : 0;

		if (s <= 0 || dl <= 0 || kernel[d] <= 0 || (pa_a && (pa_a->ints[d] < 0 ||
							    pa_a->ints[d + nsp] < 0)) ||
		    s > (1 << 24) || dl > (1 << 24) || kernel[d] > (1 << 24) || pads > (1ll << 32))
			return FAIL(c, "bad stride, dilation, kernel or pad");
		if (!strcmp(autopad, "SAME_UPPER") || !strcmp(autopad, "SAME_LOWER"))
			out_sp[d] = in < 0 ? VNPU_DIM_DYNAMIC : (in + s - 1) / s;
		else if (!strcmp(autopad, "VALID"))
			out_sp[d] = window_out(in, kernel[d], s, dl, 0, false);
		else if (!strcmp(autopad, "NOTSET"))
			out_sp[d] = window_out(in, kernel[d], s, dl, pads, ceil_mode);
		else
			return FAIL(c, "auto_pad '%s'", autopad);
		if (out_sp[d] == -2)
			return FAIL(c, "window larger than the padded input");
	}
	return VNPU_OK;
}

static vnpu_status conv_shape(struct ictx *c, const struct vnpu_tinfo *x,
			      const struct vnpu_tinfo *w, vnpu_element_type out_type);

static vnpu_status infer_conv(struct ictx *c)
{
	vnpu_status st = need_inputs(c, 2, 3);

	if (st)
		return st;
	if (IN(c, 1)->type != IN(c, 0)->type || (IN(c, 2) && IN(c, 2)->type != IN(c, 0)->type))
		return FAIL(c, "input types differ");
	return conv_shape(c, IN(c, 0), IN(c, 1), IN(c, 0)->type);
}

/* ConvInteger (x, w, [x_zp], [w_zp]) and QLinearConv (x, xs, xzp, w, ws,
 * wzp, ys, yzp, [B]). */
static vnpu_status infer_qconv(struct ictx *c)
{
	bool qlinear = !strcmp(c->n->op, "QLinearConv");
	vnpu_status st = need_inputs(c, qlinear ? 8 : 2, qlinear ? 9 : 4);

	if (st)
		return st;
	return conv_shape(c, IN(c, 0), IN(c, qlinear ? 3 : 1),
			  qlinear ? IN(c, 7)->type : VNPU_TYPE_I32);
}

static vnpu_status conv_shape(struct ictx *c, const struct vnpu_tinfo *x,
			      const struct vnpu_tinfo *w, vnpu_element_type out_type)
{
	int64_t dims[VNPU_MAX_RANK], kernel[VNPU_MAX_RANK], group;
	int32_t nsp;
	vnpu_status st;
	bool transposed = !strcmp(c->n->op, "ConvTranspose");

	if (x->rank < 0 || w->rank < 0) {
		set_out(c->out[0], out_type, x->rank >= 0 ? x->rank : w->rank, NULL);
		return VNPU_OK;
	}
	if (x->rank < 3 || w->rank != x->rank)
		return FAIL(c, "input rank %d and weight rank %d", x->rank, w->rank);
	nsp = x->rank - 2;
	group = vnpu_attr_int(c->n, "group", 1);
	if (group <= 0)
		return FAIL(c, "group %lld", (long long)group);
	for (int32_t d = 0; d < nsp; d++) {
		const struct vnpu_attr *ks = vnpu_node_attr(c->n, "kernel_shape");

		kernel[d] = ks && ks->n == (size_t)nsp ? ks->ints[d] : w->dims[2 + d];
		if (kernel[d] < 0)
			return node_error(c, VNPU_UNSUPPORTED, "kernel shape unknown");
	}
	if (!transposed && x->dims[1] >= 0 && w->dims[1] >= 0 && x->dims[1] != w->dims[1] * group)
		return FAIL(c, "%lld input channels, weights take %lld x %lld groups",
			    (long long)x->dims[1], (long long)w->dims[1], (long long)group);
	dims[0] = x->dims[0];
	dims[1] = transposed ? (w->dims[1] < 0 ? -1 : w->dims[1] * group) : w->dims[0];
	if (!transposed) {
		st = window_dims(c, x, kernel, nsp, dims + 2);
		if (st)
			return st;
	} else {
		const struct vnpu_attr *os = vnpu_node_attr(c->n, "output_shape");
		const struct vnpu_attr *op = vnpu_node_attr(c->n, "output_padding");
		const struct vnpu_attr *pa = vnpu_node_attr(c->n, "pads");
		const struct vnpu_attr *sa = vnpu_node_attr(c->n, "strides");
		const struct vnpu_attr *da = vnpu_node_attr(c->n, "dilations");

		for (int32_t d = 0; d < nsp; d++) {
			int64_t in = x->dims[2 + d], s = sa && sa->n == (size_t)nsp ? sa->ints[d] : 1;
			int64_t dl = da && da->n == (size_t)nsp ? da->ints[d] : 1;
			int64_t opad = op && op->n == (size_t)nsp ? op->ints[d] : 0;
			int64_t pads = pa && pa->n == (size_t)nsp * 2 ? pa->ints[d] + pa->ints[d + nsp] : 0;

			if (s <= 0 || s > (1 << 16) || dl <= 0 || dl > (1 << 16) || kernel[d] > (1 << 16) ||
			    opad < 0 || opad > (1 << 24) || pads < 0 || pads > (1ll << 32) ||
			    (os && os->n == (size_t)nsp && (os->ints[d] <= 0 || os->ints[d] > VNPU_MAX_ELEMS)))
				return FAIL(c, "bad stride, dilation, kernel, pad or output shape");

			if (os && os->n == (size_t)nsp)
				dims[2 + d] = os->ints[d];
			else if (in < 0)
				dims[2 + d] = VNPU_DIM_DYNAMIC;
			else if (!strcmp(vnpu_attr_str(c->n, "auto_pad", "NOTSET"), "NOTSET") ||
				 !strcmp(vnpu_attr_str(c->n, "auto_pad", "NOTSET"), "VALID"))
				dims[2 + d] = s * (in - 1) + opad + (kernel[d] - 1) * dl + 1 - pads;
			else
				dims[2 + d] = in * s;
			if (dims[2 + d] < -1 || dims[2 + d] == 0)
				return FAIL(c, "output size %lld", (long long)dims[2 + d]);
		}
	}
	set_out(c->out[0], out_type, x->rank, dims);
	return VNPU_OK;
}

static vnpu_status infer_pool(struct ictx *c)
{
	const struct vnpu_tinfo *x;
	int64_t dims[VNPU_MAX_RANK], kernel[VNPU_MAX_RANK];
	const struct vnpu_attr *ks;
	int32_t nsp;
	vnpu_status st = need_inputs(c, 1, 1);
	bool global = !strncmp(c->n->op, "Global", 6);

	if (st)
		return st;
	x = IN(c, 0);
	if (x->rank < 0) {
		set_out(c->out[0], x->type, -1, NULL);
		return VNPU_OK;
	}
	if (x->rank < 3)
		return FAIL(c, "input rank %d", x->rank);
	nsp = x->rank - 2;
	dims[0] = x->dims[0];
	dims[1] = x->dims[1];
	if (global) {
		for (int32_t d = 0; d < nsp; d++)
			dims[2 + d] = 1;
	} else {
		ks = vnpu_node_attr(c->n, "kernel_shape");
		if (!ks || ks->type != VNPU_ATTR_INTS || ks->n != (size_t)nsp)
			return FAIL(c, "kernel_shape missing or of the wrong length");
		memcpy(kernel, ks->ints, (size_t)nsp * sizeof(int64_t));
		st = window_dims(c, x, kernel, nsp, dims + 2);
		if (st)
			return st;
	}
	set_out(c->out[0], x->type, x->rank, dims);
	if (c->n->num_outputs > 1 && c->out[1])
		set_out(c->out[1], VNPU_TYPE_I64, x->rank, dims);
	return VNPU_OK;
}

static vnpu_status infer_gemm(struct ictx *c)
{
	const struct vnpu_tinfo *a, *b;
	int64_t m, k1, k2, n, dims[2];
	vnpu_status st = need_inputs(c, 2, 3);

	if (st)
		return st;
	a = IN(c, 0);
	b = IN(c, 1);
	if (a->type != b->type)
		return FAIL(c, "input types differ");
	if ((a->rank >= 0 && a->rank != 2) || (b->rank >= 0 && b->rank != 2))
		return FAIL(c, "inputs must be 2-D");
	if (a->rank < 0 || b->rank < 0) {
		set_out(c->out[0], a->type, 2, NULL);
		return VNPU_OK;
	}
	m = a->dims[vnpu_attr_int(c->n, "transA", 0) ? 1 : 0];
	k1 = a->dims[vnpu_attr_int(c->n, "transA", 0) ? 0 : 1];
	k2 = b->dims[vnpu_attr_int(c->n, "transB", 0) ? 1 : 0];
	n = b->dims[vnpu_attr_int(c->n, "transB", 0) ? 0 : 1];
	if (k1 >= 0 && k2 >= 0 && k1 != k2)
		return FAIL(c, "inner dimensions %lld and %lld differ", (long long)k1, (long long)k2);
	dims[0] = m;
	dims[1] = n;
	if (IN(c, 2)) {
		int32_t r;
		int64_t bd[VNPU_MAX_RANK];
		struct vnpu_tinfo o = { .type = a->type, .rank = 2, .dims = { m, n } };

		st = broadcast(c, &o, IN(c, 2), &r, bd);
		if (st)
			return st;
		if (r != 2 || (m >= 0 && bd[0] != m) || (n >= 0 && bd[1] != n))
			return FAIL(c, "C does not broadcast to the output");
	}
	set_out(c->out[0], a->type, 2, dims);
	return VNPU_OK;
}

static vnpu_status matmul_shape(struct ictx *c, const struct vnpu_tinfo *a,
				const struct vnpu_tinfo *b, vnpu_element_type out_type);

static vnpu_status infer_matmul(struct ictx *c)
{
	vnpu_status st = need_inputs(c, 2, 2);

	if (st)
		return st;
	if (IN(c, 0)->type != IN(c, 1)->type)
		return FAIL(c, "input types differ");
	return matmul_shape(c, IN(c, 0), IN(c, 1), IN(c, 0)->type);
}

/* MatMulInteger (a, b, [a_zp], [b_zp]) and QLinearMatMul (a, as, azp, b,
 * bs, bzp, ys, yzp). */
static vnpu_status infer_qmatmul(struct ictx *c)
{
	bool qlinear = !strcmp(c->n->op, "QLinearMatMul");
	vnpu_status st = need_inputs(c, qlinear ? 8 : 2, qlinear ? 8 : 4);

	if (st)
		return st;
	return matmul_shape(c, IN(c, 0), IN(c, qlinear ? 3 : 1),
			    qlinear ? IN(c, 7)->type : VNPU_TYPE_I32);
}

static vnpu_status matmul_shape(struct ictx *c, const struct vnpu_tinfo *a,
				const struct vnpu_tinfo *b, vnpu_element_type out_type)
{
	struct vnpu_tinfo ba = { 0 }, bb = { 0 };
	int64_t dims[VNPU_MAX_RANK + 2], k1, k2;
	int32_t r;
	vnpu_status st;

	if (a->rank < 0 || b->rank < 0) {
		set_out(c->out[0], out_type, -1, NULL);
		return VNPU_OK;
	}
	if (a->rank == 0 || b->rank == 0)
		return FAIL(c, "scalar input");
	k1 = a->dims[a->rank - 1];
	k2 = b->rank == 1 ? b->dims[0] : b->dims[b->rank - 2];
	if (k1 >= 0 && k2 >= 0 && k1 != k2)
		return FAIL(c, "inner dimensions %lld and %lld differ", (long long)k1, (long long)k2);
	/* Batch dims broadcast. */
	ba.rank = a->rank > 2 ? a->rank - 2 : 0;
	bb.rank = b->rank > 2 ? b->rank - 2 : 0;
	memcpy(ba.dims, a->dims, sizeof(int64_t) * (size_t)ba.rank);
	memcpy(bb.dims, b->dims, sizeof(int64_t) * (size_t)bb.rank);
	st = broadcast(c, &ba, &bb, &r, dims);
	if (st)
		return st;
	if (a->rank > 1)
		dims[r++] = a->dims[a->rank - 2];
	if (b->rank > 1)
		dims[r++] = b->dims[b->rank - 1];
	if (r > VNPU_MAX_RANK)
		return node_error(c, VNPU_UNSUPPORTED, "rank above %d", VNPU_MAX_RANK);
	set_out(c->out[0], out_type, r, dims);
	return VNPU_OK;
}

static vnpu_status infer_reduce(struct ictx *c)
{
	const struct vnpu_tinfo *x;
	int64_t axes[VNPU_MAX_RANK], dims[VNPU_MAX_RANK];
	bool mark[VNPU_MAX_RANK] = { 0 }, present, keep = vnpu_attr_int(c->n, "keepdims", 1);
	bool arg = !strncmp(c->n->op, "Arg", 3);
	int32_t n, r = 0;
	vnpu_status st = need_inputs(c, 1, 2);

	if (st)
		return st;
	x = IN(c, 0);
	if (arg) {
		axes[0] = vnpu_attr_int(c->n, "axis", 0);
		n = 1;
		present = true;
	} else {
		n = attr_or_input_ints(c, "axes", 1, axes, VNPU_MAX_RANK, &present);
	}
	if (x->rank < 0 || n < 0) {
		set_out(c->out[0], arg ? VNPU_TYPE_I64 : x->type, keep && x->rank >= 0 ? x->rank : -1, NULL);
		return VNPU_OK;
	}
	for (int32_t i = 0; i < n; i++) {
		int64_t a;

		st = check_axis(c, axes[i], x->rank, &a);
		if (st)
			return st;
		mark[a] = true;
	}
	if (!n && vnpu_attr_int(c->n, "noop_with_empty_axes", 0)) {
		copy_shape(c->out[0], x, x->type);
		return VNPU_OK;
	}
	for (int32_t d = 0; d < x->rank; d++) {
		bool red = mark[d] || !n;

		if (red && keep)
			dims[r++] = 1;
		else if (!red)
			dims[r++] = x->dims[d];
	}
	set_out(c->out[0], arg ? VNPU_TYPE_I64 : x->type, r, dims);
	return VNPU_OK;
}

static vnpu_status infer_softmax(struct ictx *c)
{
	vnpu_status st = need_inputs(c, 1, 1);
	int64_t axis;

	if (st)
		return st;
	if (IN(c, 0)->rank >= 0) {
		st = check_axis(c, vnpu_attr_int(c->n, "axis", opset(c) >= 13 ? -1 : 1),
				IN(c, 0)->rank, &axis);
		if (st)
			return st;
	}
	copy_shape(c->out[0], IN(c, 0), IN(c, 0)->type);
	return VNPU_OK;
}

/* Ops whose output 0 has input 0's type and shape (checked inputs). */
static vnpu_status infer_same(struct ictx *c)
{
	vnpu_status st = need_inputs(c, 1, 16);

	if (st)
		return st;
	copy_shape(c->out[0], IN(c, 0), IN(c, 0)->type);
	for (uint32_t i = 1; i < c->n->num_outputs; i++)
		if (c->out[i])
			set_out(c->out[i], IN(c, 0)->type, -1, NULL);
	return VNPU_OK;
}

static vnpu_status infer_pad(struct ictx *c)
{
	const struct vnpu_tinfo *x;
	int64_t pads[VNPU_MAX_RANK * 2], dims[VNPU_MAX_RANK];
	int32_t n;
	bool present;
	vnpu_status st = need_inputs(c, 1, 4);

	if (st)
		return st;
	x = IN(c, 0);
	n = attr_or_input_ints(c, "pads", 1, pads, VNPU_MAX_RANK * 2, &present);
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
	vnpu_status st = need_inputs(c, 1, 1);

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

/* floor(dim * scale), or an impossible dimension that check_outputs()
 * rejects when the scale is not a sane positive number. */
static int64_t scaled(int64_t dim, double scale)
{
	double v = floor((double)dim * scale);

	return v >= 0 && v <= (double)VNPU_MAX_ELEMS ? (int64_t)v : VNPU_MAX_ELEMS + 1;
}

static vnpu_status infer_resize(struct ictx *c)
{
	const struct vnpu_tinfo *x, *scales_t, *sizes_t;
	int64_t dims[VNPU_MAX_RANK], sizes[VNPU_MAX_RANK];
	vnpu_status st = need_inputs(c, 1, 4);
	bool upsample = !strcmp(c->n->op, "Upsample");

	if (st)
		return st;
	x = IN(c, 0);
	scales_t = upsample ? IN(c, 1) : opset(c) >= 11 ? IN(c, 2) : IN(c, 1);
	sizes_t = !upsample && opset(c) >= 11 ? IN(c, 3) : NULL;
	if (x->rank < 0) {
		set_out(c->out[0], x->type, -1, NULL);
		return VNPU_OK;
	}
	if (vnpu_node_attr(c->n, "axes"))
		return node_error(c, VNPU_UNSUPPORTED, "the axes attribute is not supported");
	if (sizes_t && vnpu_tinfo_elems(sizes_t) != 0) {
		if (read_ints(sizes_t, sizes, VNPU_MAX_RANK) != x->rank) {
			set_out(c->out[0], x->type, x->rank, NULL);
			return VNPU_OK;
		}
		set_out(c->out[0], x->type, x->rank, sizes);
		return VNPU_OK;
	}
	if (upsample && !scales_t && vnpu_node_attr(c->n, "scales")) {
		const struct vnpu_attr *a = vnpu_node_attr(c->n, "scales");

		if (a->n != (size_t)x->rank)
			return FAIL(c, "%zu scales for rank %d", a->n, x->rank);
		for (int32_t d = 0; d < x->rank; d++)
			dims[d] = x->dims[d] < 0 ? -1 : scaled(x->dims[d], a->floats[d]);
		set_out(c->out[0], x->type, x->rank, dims);
		return VNPU_OK;
	}
	if (!has_data(scales_t) || !vnpu_type_is_float(scales_t->type) ||
	    vnpu_tinfo_elems(scales_t) != x->rank) {
		if (has_data(scales_t) && vnpu_tinfo_elems(scales_t) != x->rank)
			return FAIL(c, "scales do not match rank %d", x->rank);
		set_out(c->out[0], x->type, x->rank, NULL);
		return VNPU_OK;
	}
	for (int32_t d = 0; d < x->rank; d++)
		dims[d] = x->dims[d] < 0 ? -1 :
			scaled(x->dims[d], vnpu_elem_get_f(scales_t->data, scales_t->type, d));
	set_out(c->out[0], x->type, x->rank, dims);
	return VNPU_OK;
}

static vnpu_status infer_norm(struct ictx *c)
{
	const struct vnpu_tinfo *x;
	vnpu_status st = need_inputs(c, 1, 6);
	int64_t axis;

	if (st)
		return st;
	x = IN(c, 0);
	copy_shape(c->out[0], x, x->type);
	if (!strcmp(c->n->op, "LayerNormalization") && x->rank >= 0) {
		int64_t dims[VNPU_MAX_RANK];

		st = check_axis(c, vnpu_attr_int(c->n, "axis", -1), x->rank, &axis);
		if (st)
			return st;
		for (int32_t d = 0; d < x->rank; d++)
			dims[d] = d < axis ? x->dims[d] : 1;
		for (uint32_t i = 1; i < c->n->num_outputs && i < 3; i++)
			if (c->out[i])
				set_out(c->out[i], (vnpu_element_type)vnpu_attr_int(c->n, "stash_type", 1),
					x->rank, dims);
		return VNPU_OK;
	}
	/* BatchNormalization in training mode: running mean and variance [C]. */
	for (uint32_t i = 1; i < c->n->num_outputs && i < 3; i++)
		if (c->out[i] && !strcmp(c->n->op, "BatchNormalization") && IN(c, 3))
			copy_shape(c->out[i], IN(c, 3), IN(c, 3)->type);
	return VNPU_OK;
}

static vnpu_status infer_topk(struct ictx *c)
{
	const struct vnpu_tinfo *x;
	int64_t k, axis, dims[VNPU_MAX_RANK];
	vnpu_status st = need_inputs(c, 1, 2);

	if (st)
		return st;
	x = IN(c, 0);
	if (x->rank < 0) {
		set_out(c->out[0], x->type, -1, NULL);
		if (c->n->num_outputs > 1 && c->out[1])
			set_out(c->out[1], VNPU_TYPE_I64, -1, NULL);
		return VNPU_OK;
	}
	st = check_axis(c, vnpu_attr_int(c->n, "axis", -1), x->rank, &axis);
	if (st)
		return st;
	if (opset(c) < 10)
		k = vnpu_attr_int(c->n, "k", -1);
	else if (read_ints(IN(c, 1), &k, 1) != 1)
		k = VNPU_DIM_DYNAMIC;
	memcpy(dims, x->dims, sizeof(dims));
	dims[axis] = k;
	set_out(c->out[0], x->type, x->rank, dims);
	if (c->n->num_outputs > 1 && c->out[1])
		set_out(c->out[1], VNPU_TYPE_I64, x->rank, dims);
	return VNPU_OK;
}

/* If: a known condition takes its branch; otherwise both branches must
 * agree on their outputs' types, and the shapes merge. */
static vnpu_status infer_if(struct ictx *c)
{
	const struct vnpu_attr *tb = vnpu_node_attr(c->n, "then_branch");
	const struct vnpu_attr *eb = vnpu_node_attr(c->n, "else_branch");
	struct vnpu_tinfo *infos = (struct vnpu_tinfo *)c->in[c->n->num_inputs];
	vnpu_status st = need_inputs(c, 1, 1);

	if (st)
		return st;
	if (!tb || !eb || !tb->g || !eb->g)
		return FAIL(c, "needs then_branch and else_branch graphs");
	if (tb->g->num_outputs != c->n->num_outputs || eb->g->num_outputs != c->n->num_outputs)
		return FAIL(c, "branch outputs do not match the node's");
	st = vnpu_graph_infer(c->m, tb->g, infos, c->fold_limit, true);
	if (!st)
		st = vnpu_graph_infer(c->m, eb->g, infos, c->fold_limit, true);
	if (st)
		return vnpu_error_prefix(st, "node '%s' (If)", c->n->name);
	for (uint32_t i = 0; i < c->n->num_outputs; i++) {
		const struct vnpu_tinfo *t = &infos[tb->g->outputs[i]], *e = &infos[eb->g->outputs[i]];
		struct vnpu_tinfo *o = c->out[i];

		if (!o)
			continue;
		if (has_data(IN(c, 0))) {
			const struct vnpu_tinfo *src = ((uint8_t *)IN(c, 0)->data)[0] ? t : e;

			copy_shape(o, src, src->type);
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

struct op_infer {
	const char *op;
	vnpu_status (*fn)(struct ictx *c);
};

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
	{ "Shrink", infer_unary }, { "Trilu", infer_same }, { "EyeLike", infer_eye_like },
	{ "LSTM", infer_rnn }, { "GRU", infer_rnn }, { "RNN", infer_rnn },
	{ "OneHot", infer_one_hot }, { "QuantizeLinear", infer_quant },
	{ "ConvInteger", infer_qconv }, { "QLinearConv", infer_qconv }, { "Einsum", infer_einsum },
	{ "HannWindow", infer_window }, { "HammingWindow", infer_window },
	{ "BlackmanWindow", infer_window }, { "DFT", infer_fourier }, { "STFT", infer_fourier },
	{ "ReverseSequence", infer_same },
	{ "MatMulInteger", infer_qmatmul }, { "QLinearMatMul", infer_qmatmul },
	{ "DequantizeLinear", infer_quant }, { "DynamicQuantizeLinear", infer_quant },
	{ "NegativeLogLikelihoodLoss", infer_loss }, { "SoftmaxCrossEntropyLoss", infer_loss },
	{ "GatherElements", infer_gather_elements }, { "LpNormalization", infer_same },
	{ "IsNaN", infer_unary }, { "IsInf", infer_unary },
	{ "Add", infer_binary }, { "Sub", infer_binary }, { "Mul", infer_binary },
	{ "Div", infer_binary }, { "Pow", infer_binary }, { "Max", infer_binary },
	{ "Min", infer_binary }, { "Sum", infer_binary }, { "Mean", infer_binary },
	{ "Mod", infer_binary }, { "Equal", infer_binary }, { "Less", infer_binary },
	{ "Greater", infer_binary }, { "LessOrEqual", infer_binary },
	{ "GreaterOrEqual", infer_binary }, { "And", infer_binary }, { "Or", infer_binary },
	{ "Xor", infer_binary }, { "PRelu", infer_binary }, { "BitShift", infer_binary },
	{ "Where", infer_where }, { "Cast", infer_cast }, { "CastLike", infer_cast },
	{ "Constant", infer_constant }, { "Shape", infer_shape }, { "Size", infer_shape },
	{ "Reshape", infer_reshape }, { "Flatten", infer_flatten },
	{ "Squeeze", infer_squeeze }, { "Unsqueeze", infer_squeeze },
	{ "Transpose", infer_transpose }, { "Concat", infer_concat }, { "Split", infer_split },
	{ "Slice", infer_slice }, { "Gather", infer_gather }, { "Expand", infer_expand_tile },
	{ "Tile", infer_expand_tile }, { "ConstantOfShape", infer_constant_of_shape },
	{ "Range", infer_range }, { "Conv", infer_conv }, { "ConvTranspose", infer_conv },
	{ "MaxPool", infer_pool }, { "AveragePool", infer_pool }, { "LpPool", infer_pool },
	{ "GlobalAveragePool", infer_pool }, { "GlobalMaxPool", infer_pool },
	{ "GlobalLpPool", infer_pool },
	{ "Gemm", infer_gemm }, { "MatMul", infer_matmul },
	{ "ReduceSum", infer_reduce }, { "ReduceMean", infer_reduce },
	{ "ReduceMax", infer_reduce }, { "ReduceMin", infer_reduce },
	{ "ReduceProd", infer_reduce }, { "ReduceL1", infer_reduce },
	{ "ReduceL2", infer_reduce }, { "ReduceLogSum", infer_reduce },
	{ "ReduceLogSumExp", infer_reduce }, { "ReduceSumSquare", infer_reduce },
	{ "ArgMax", infer_reduce }, { "ArgMin", infer_reduce },
	{ "Softmax", infer_softmax }, { "LogSoftmax", infer_softmax },
	{ "Hardmax", infer_softmax },
	{ "BatchNormalization", infer_norm }, { "InstanceNormalization", infer_norm },
	{ "LayerNormalization", infer_norm }, { "LRN", infer_same },
	{ "CumSum", infer_same },
	{ "Pad", infer_pad }, { "DepthToSpace", infer_space_depth },
	{ "SpaceToDepth", infer_space_depth }, { "Resize", infer_resize },
	{ "Upsample", infer_resize }, { "TopK", infer_topk }, { "If", infer_if },
};

/* No output dimension may be negative (but unknown) or too large. */
static vnpu_status check_outputs(const struct ictx *c)
{
	for (uint32_t i = 0; i < c->n->num_outputs; i++) {
		const struct vnpu_tinfo *o = c->out[i];
		bool known = o && o->rank >= 0;

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

vnpu_status vnpu_node_infer(const struct vnpu_model *m, const struct vnpu_node *n,
			    struct vnpu_tinfo *const *in, struct vnpu_tinfo *const *out,
			    int64_t fold_limit)
{
	struct ictx c = { .m = m, .n = n, .in = in, .out = out, .fold_limit = fold_limit };
	vnpu_status st;

	for (uint32_t i = 0; i < n->num_outputs; i++)
		if (out[i])
			vnpu_tinfo_clear(out[i]);
	if (n->domain[0])
		return node_error(&c, VNPU_UNSUPPORTED, "domain '%s' is not supported", n->domain);
	for (size_t i = 0; i < sizeof(infer_table) / sizeof(infer_table[0]); i++) {
		if (strcmp(infer_table[i].op, n->op))
			continue;
		if (!n->num_outputs || (!out[0] && infer_table[i].fn != infer_rnn))
			return node_error(&c, VNPU_UNSUPPORTED, "its first output is omitted");
		st = infer_table[i].fn(&c);
		return st ? st : check_outputs(&c);
	}
	return node_error(&c, VNPU_UNSUPPORTED, "unknown op");
}

vnpu_status vnpu_graph_infer(const struct vnpu_model *m, const struct vnpu_graph *g,
			     struct vnpu_tinfo *infos, int64_t fold_limit, bool strict)
{
	struct vnpu_tinfo *in[1025], *out[64];

	for (uint32_t i = 0; i < g->num_nodes; i++) {
		const struct vnpu_node *n = &g->nodes[i];
		vnpu_status st;

		if (n->num_inputs > 1024 || n->num_outputs > 64)
			return vnpu_error(VNPU_UNSUPPORTED, "node '%s' (%s): too many inputs or outputs",
					  n->name, n->op);
		for (uint32_t k = 0; k < n->num_inputs; k++)
			in[k] = n->inputs[k] >= 0 ? &infos[n->inputs[k]] : NULL;
		in[n->num_inputs] = infos;	/* If reaches the whole table */
		for (uint32_t k = 0; k < n->num_outputs; k++)
			out[k] = n->outputs[k] >= 0 ? &infos[n->outputs[k]] : NULL;
		st = vnpu_node_infer(m, n, in, out, fold_limit);
		/* Unknown ops leave their outputs unknown: query and compile
		 * report them node by node. */
		if (st && (strict || st != VNPU_UNSUPPORTED))
			return st;
	}
	return VNPU_OK;
}

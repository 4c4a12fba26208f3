// SPDX-License-Identifier: MIT
/*
 * Graph passes over the working graph build.c made: turn view-like nodes
 * into aliases, fold BatchNorm and a Mul by a constant per channel into
 * the Conv or ConvTranspose before it and a Mul by a constant per column
 * into a Gemm's or MatMul's constant B, fuse a constant bias, a residual
 * Add, an activation and a Max or Min with a constant into
 * Conv/Gemm/MatMul (only the activation and the bound into a
 * ConvTranspose), run sibling Convs of one input as one, compute a
 * Concat's inputs in place in its output, and an int8 convolution's
 * output over the residual it adds where nothing reads that later.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "fuse.h"
#include "lower.h"

/* ---- who reads and writes each value ---- */

static void uses_fini(struct uses *u)
{
	free(u->links);
	free(u->readers);
	free(u->writers);
	free(u->aliased);
}

/* Room for values [0, @num_vals): new ones have no links. */
static vnpu_status uses_cover(struct uses *u, uint32_t num_vals)
{
	uint32_t cap = u->cap_vals ? u->cap_vals : 64;
	int32_t *r, *w;
	bool *a;

	if (num_vals <= u->cap_vals)
		return VNPU_OK;
	while (cap < num_vals)
		cap *= 2;
	r = realloc(u->readers, cap * sizeof(*r));
	if (r)
		u->readers = r;
	w = realloc(u->writers, cap * sizeof(*w));
	if (w)
		u->writers = w;
	a = realloc(u->aliased, cap * sizeof(*a));
	if (a)
		u->aliased = a;
	if (!r || !w || !a)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	for (uint32_t v = u->cap_vals; v < cap; v++) {
		r[v] = w[v] = -1;
		a[v] = false;
	}
	u->cap_vals = cap;
	return VNPU_OK;
}

/* Put op @op at the head of the list @head. */
static vnpu_status uses_link(struct uses *u, int32_t *head, int32_t op)
{
	if (*head >= 0 && u->links[*head].op == op)
		return VNPU_OK;	/* an op reading a value twice */
	if (u->num_links == u->cap_links) {
		uint32_t cap = u->cap_links ? u->cap_links * 2 : 256;
		struct use_link *l = realloc(u->links, cap * sizeof(*l));

		if (!l)
			return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
		u->links = l;
		u->cap_links = cap;
	}
	u->links[u->num_links] = (struct use_link){ .op = op, .next = *head };
	*head = (int32_t)u->num_links++;
	return VNPU_OK;
}

vnpu_status cf_uses_add(struct cstate *s, struct uses *u, bool write, int32_t val,
			const struct cop *op)
{
	vnpu_status st = uses_cover(u, s->num_vals);

	if (st || val < 0)
		return st;
	return uses_link(u, write ? &u->writers[val] : &u->readers[val], (int32_t)(op - s->ops));
}

static vnpu_status uses_init(struct cstate *s, struct uses *u)
{
	vnpu_status st = uses_cover(u, s->num_vals);

	for (uint32_t i = 0; !st && i < s->num_ops; i++) {
		const struct cop *op = &s->ops[i];

		for (uint32_t k = 0; !st && k < op->num_in; k++)
			st = cf_uses_add(s, u, false, op->in[k], op);
		for (uint32_t k = 0; !st && k < op->num_out; k++)
			st = cf_uses_add(s, u, true, op->out[k], op);
	}
	return st;
}

static bool op_has(const int32_t *vals, uint32_t n, int32_t val)
{
	for (uint32_t k = 0; k < n; k++)
		if (vals[k] == val)
			return true;
	return false;
}

int32_t cf_live_reader(const struct cstate *s, const struct uses *u, int32_t val, int32_t skip)
{
	for (int32_t l = u->readers[val]; l >= 0; l = u->links[l].next) {
		const struct cop *op = &s->ops[u->links[l].op];

		if (u->links[l].op != skip && !op->dead && op_has(op->in, op->num_in, val))
			return u->links[l].op;
	}
	return -1;
}

/* ---- fusion ---- */

/* The one live op reading @val, or NULL when none or several do (a view
 * of @val counts as another reader). */
static struct cop *sole_reader(struct cstate *s, const struct uses *u, int32_t val,
			       uint32_t after)
{
	int32_t first;

	if (s->vals[val].out_index >= 0 || u->aliased[val])
		return NULL;
	first = cf_live_reader(s, u, val, -1);
	if (first < 0 || first <= (int32_t)after || cf_live_reader(s, u, val, first) >= 0)
		return NULL;
	return &s->ops[first];
}

int32_t cf_producer(const struct cstate *s, const struct uses *u, int32_t val)
{
	int32_t first = -1;

	for (uint32_t guard = 0; s->vals[val].alias >= 0 && guard < s->num_vals; guard++)
		val = s->vals[val].alias;
	for (int32_t l = u->writers[val]; l >= 0; l = u->links[l].next) {
		int32_t i = u->links[l].op;

		if (!s->ops[i].dead && op_has(s->ops[i].out, s->ops[i].num_out, val) &&
		    (first < 0 || i < first))
			first = i;
	}
	return first;
}

bool cf_only_read_by(const struct cstate *s, const struct uses *u, int32_t val,
		     const bool *mine)
{
	if (s->vals[val].out_index >= 0 || u->aliased[val] ||
	    s->vals[val].info.type != VNPU_TYPE_F32)
		return false;
	for (int32_t l = u->readers[val]; l >= 0; l = u->links[l].next) {
		const struct cop *op = &s->ops[u->links[l].op];

		if (!mine[u->links[l].op] && !op->dead && op_has(op->in, op->num_in, val))
			return false;
	}
	return true;
}

static bool used(const struct cstate *s, const struct uses *u, int32_t val)
{
	if (val < 0)
		return false;
	return s->vals[val].out_index >= 0 || cf_live_reader(s, u, val, -1) >= 0;
}

static bool is_float_val(const struct cstate *s, int32_t v)
{
	return s->vals[v].info.type == VNPU_TYPE_F32;
}

/* Every op reading @from reads @to instead. */
static vnpu_status replace_reads(struct cstate *s, struct uses *u, int32_t from, int32_t to)
{
	int32_t l = u->readers[from];
	vnpu_status st = VNPU_OK;

	u->readers[from] = -1;
	for (; !st && l >= 0; l = u->links[l].next) {
		struct cop *op = &s->ops[u->links[l].op];

		for (uint32_t k = 0; k < op->num_in; k++)
			if (op->in[k] == from)
				op->in[k] = to;
		st = cf_uses_add(s, u, false, to, op);
	}
	return st;
}

/*
 * A Gather of one constant index whose output is one run of bytes of its
 * data (every dimension before the axis is 1, a Scan's step of its input):
 * the run's byte offset in @offset.
 */
static bool gather_run(const struct cstate *s, const struct cop *op, uint64_t *offset)
{
	const struct vnpu_tinfo *x, *idx;
	int64_t axis, at, inner = 1;

	if (!cf_op_is(op, "Gather") || op->num_in != 2 || op->in[1] < 0 ||
	    !cs_is_const(s, op->in[1]))
		return false;
	x = cs_info(s, op->in[0]);
	idx = cs_info(s, op->in[1]);
	axis = vnpu_attr_int(op->node, "axis", 0);
	axis = axis < 0 ? axis + x->rank : axis;
	if (!vnpu_tinfo_static(x) || vnpu_tinfo_elems(idx) != 1 || axis < 0 || axis >= x->rank)
		return false;
	for (int64_t d = 0; d < x->rank; d++) {
		if (d < axis && x->dims[d] != 1)
			return false;
		if (d > axis)
			inner *= x->dims[d];
	}
	at = vnpu_elem_get_i(idx->data, idx->type, 0);
	at = at < 0 ? at + x->dims[axis] : at;
	if (at < 0 || at >= x->dims[axis])
		return false;
	*offset = (uint64_t)(at * inner) * vnpu_element_type_size(x->type);
	return true;
}

/*
 * A Slice of constant starts, ends, axes and steps 1 whose output is one
 * run of bytes of its data (the dimensions before the first it keeps
 * more than one index of are 1 in the output, those after are whole):
 * the run's byte offset in @offset.
 */
static bool slice_run(const struct cstate *s, const struct cop *op, uint64_t *offset)
{
	int64_t starts[VNPU_MAX_RANK], ends[VNPU_MAX_RANK], axes[VNPU_MAX_RANK];
	int64_t steps[VNPU_MAX_RANK], first[VNPU_MAX_RANK] = { 0 }, at = 0, stride = 1;
	const struct vnpu_tinfo *x, *y;
	bool p1, p2, p3, p4, inside = false;
	int32_t n;

	if (!cf_op_is(op, "Slice") || op->num_in < 1 || op->in[0] < 0 || op->out[0] < 0)
		return false;
	x = cs_info(s, op->in[0]);
	y = cs_info(s, op->out[0]);
	if (!vnpu_tinfo_static(x) || !vnpu_tinfo_static(y) || x->rank != y->rank ||
	    x->rank > VNPU_MAX_RANK)
		return false;
	n = cl_const_ints(s, op, "starts", 1, starts, VNPU_MAX_RANK, &p1);
	if (n < 0 || cl_const_ints(s, op, "ends", 2, ends, VNPU_MAX_RANK, &p2) < 0 ||
	    cl_const_ints(s, op, "axes", 3, axes, VNPU_MAX_RANK, &p3) < 0 ||
	    cl_const_ints(s, op, "steps", 4, steps, VNPU_MAX_RANK, &p4) < 0)
		return false;
	for (int32_t i = 0; i < n; i++) {
		int64_t a = p3 ? axes[i] : i;

		a = a < 0 ? a + x->rank : a;
		if (a < 0 || a >= x->rank || (p4 && steps[i] != 1))
			return false;
		first[a] = y->dims[a] ? cl_slice_start(starts[i], x->dims[a], 1) : 0;
	}
	/* From the last dimension: whole ones, then one partial, then ones of 1. */
	for (int32_t d = x->rank - 1; d >= 0; d--) {
		if (inside && y->dims[d] != 1)
			return false;
		inside = inside || y->dims[d] != x->dims[d];
		at += first[d] * stride;
		stride *= x->dims[d];
	}
	*offset = (uint64_t)at * vnpu_element_type_size(x->type);
	return true;
}

/*
 * A Split whose outputs are runs of its input (every dimension before the
 * axis is 1): each output that is not a model output becomes a view of
 * its run; the Split copies only the others (a copy onto itself is none,
 * lower.c), and with none left it is dead.
 */
static void split_views(struct cstate *s, struct uses *u, struct cop *op)
{
	const struct vnpu_tinfo *x = cs_info(s, op->in[0]);
	int64_t axis = vnpu_attr_int(op->node, "axis", 0), inner = 1, at = 0;
	bool all = true;

	axis = axis < 0 ? axis + x->rank : axis;
	if (x->data || !vnpu_tinfo_static(x) || axis < 0 || axis >= x->rank)
		return;
	for (int64_t d = 0; d < x->rank; d++) {
		if (d < axis && x->dims[d] != 1)
			return;
		if (d > axis)
			inner *= x->dims[d];
	}
	for (uint32_t o = 0; o < op->num_out; o++) {
		const struct vnpu_tinfo *y = op->out[o] >= 0 ? cs_info(s, op->out[o]) : NULL;

		if (!y || !vnpu_tinfo_static(y) || y->rank != x->rank)
			return;
	}
	for (uint32_t o = 0; o < op->num_out; o++) {
		struct cval *y = &s->vals[op->out[o]];

		if (y->out_index < 0) {
			y->alias = op->in[0];
			y->alias_offset = (uint64_t)(at * inner) * vnpu_element_type_size(x->type);
			u->aliased[op->in[0]] = true;
		}
		all = all && y->out_index < 0;
		at += y->info.dims[axis];
	}
	op->dead = all;
}

/* View-like nodes whose output is not a model output become aliases. */
static vnpu_status make_views(struct cstate *s, struct uses *u)
{
	static const char *const views[] = {
		"Identity", "Dropout", "Reshape", "Flatten", "Squeeze", "Unsqueeze",
	};
	vnpu_status st = VNPU_OK;

	for (uint32_t i = 0; !st && i < s->num_ops; i++) {
		struct cop *op = &s->ops[i];
		uint64_t offset = 0;
		int32_t src = -1;

		if (cf_op_is(op, "Split") && !op->dead && op->num_in && op->in[0] >= 0)
			split_views(s, u, op);
		if (op->dead || !op->num_out || op->out[0] < 0)
			continue;
		if (gather_run(s, op, &offset) || slice_run(s, op, &offset))
			src = op->in[0];
		if (op->kind == COP_SELECT && cs_is_const(s, op->in[0]))
			src = *(const uint8_t *)s->vals[op->in[0]].info.data ? op->in[1] : op->in[2];
		for (size_t k = 0; op->kind == COP_NODE && k < sizeof(views) / sizeof(views[0]); k++)
			if (!strcmp(op->node->op, views[k]))
				src = op->in[0];
		if (src < 0 || s->vals[op->out[0]].out_index >= 0)
			continue;
		if (cf_op_is(op, "Dropout") && ((op->num_out > 1 && used(s, u, op->out[1])) ||
					      (op->num_in > 2 && op->in[2] >= 0)))
			continue;
		if (s->vals[src].info.data)
			continue;	/* a view of a constant is itself folded */
		op->dead = true;
		/* Same shape (Identity, Dropout, If): readers read the source
		 * itself, so the passes see through it; otherwise a view. */
		if (!offset && cf_same_shape(&s->vals[src].info, &s->vals[op->out[0]].info)) {
			st = replace_reads(s, u, op->out[0], src);
		} else {
			s->vals[op->out[0]].alias = src;
			s->vals[op->out[0]].alias_offset = offset;
			u->aliased[src] = true;
		}
	}
	return st;
}

/* @op takes over @next's output: @next, dead, runs as part of @op. */
static vnpu_status absorb(struct cstate *s, struct uses *u, struct cop *op, struct cop *next)
{
	op->out[0] = next->out[0];
	next->dead = true;
	next->fused_into = (int32_t)(op - s->ops);
	return cf_uses_add(s, u, true, op->out[0], op);
}

/*
 * Output channels of @conv's weights: W [M, C/g, K...] for a Conv,
 * [C, M/g, K...] for a ConvTranspose.
 */
static int64_t conv_out_channels(const struct cstate *s, const struct cop *conv)
{
	const struct vnpu_tinfo *w = cs_info(s, conv->in[1]);

	if (!cf_op_is(conv, "ConvTranspose"))
		return w->dims[0];
	return w->dims[1] * vnpu_attr_int(conv->node, "group", 1);
}

/*
 * The output channel of row @row of @conv's weights W (see above), rows
 * of the first two dims: a Conv's row; a ConvTranspose's row c * @mg + j
 * holds input channel c (of group c / @cg) and output channel j of that
 * group.
 */
static int64_t weight_channel(bool transposed, int64_t cg, int64_t mg, int64_t row)
{
	if (!transposed)
		return row / mg;
	return row / mg / cg * mg + row % mg;
}

/*
 * What a per-channel affine op after @conv (constant weights, rank 3 or
 * more, a constant bias of one value per channel or none) computes,
 * folded into it: W' = W * @f and B' = (B - @mean) * @f + @add per output
 * channel (no @mean, @add: 0; with neither and no B, no bias); @next, the
 * op folded, named @what in the type, runs as part of @conv.
 */
static vnpu_status scale_conv(struct cstate *s, struct uses *u, struct cop *conv, const float *f,
			      const float *mean, const float *add, const char *what,
			      struct cop *next)
{
	const struct vnpu_tinfo *w = cs_info(s, conv->in[1]);
	int64_t m = conv_out_channels(s, conv), n = vnpu_tinfo_elems(w);
	int64_t rows = w->dims[0] * w->dims[1], per = rows ? n / rows : 0, run;
	bool transposed = cf_op_is(conv, "ConvTranspose");
	/* conv_foldable() checked a ConvTranspose's group. */
	int64_t cg = transposed ? w->dims[0] / vnpu_attr_int(conv->node, "group", 1) : 1;
	bool bias = conv->in[2] >= 0 || mean || add;
	const float *wd = w->data, *bd = NULL;
	float *nw, *nb;
	int32_t wv, bv = -1;
	vnpu_status st;

	if (conv->in[2] >= 0)
		bd = cs_info(s, conv->in[2])->data;
	nw = malloc((size_t)(n ? n : 1) * sizeof(float));
	nb = malloc((size_t)(m ? m : 1) * sizeof(float));
	if (!nw || !nb) {
		free(nw);
		free(nb);
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	}
	/*
	 * A run of one channel at a time: a Conv's channel is dims[1] rows,
	 * a ConvTranspose's one row.
	 */
	run = transposed ? per : w->dims[1] * per;
	for (int64_t r = 0; run && r < n / run; r++) {
		float fr = f[transposed ? weight_channel(true, cg, w->dims[1], r) : r];

		for (int64_t j = 0; j < run; j++)
			nw[r * run + j] = wd[r * run + j] * fr;
	}
	for (int64_t o = 0; o < m; o++)
		nb[o] = ((bd ? bd[o] : 0.0f) - (mean ? mean[o] : 0.0f)) * f[o] + (add ? add[o] : 0.0f);
	st = cs_add_const(s, VNPU_TYPE_F32, w->rank, w->dims, nw, &wv);
	if (st) {
		free(nb);
		return st;
	}
	if (bias)
		st = cs_add_const(s, VNPU_TYPE_F32, 1, &m, nb, &bv);
	else
		free(nb);
	if (st)
		return st;
	conv->in[1] = wv;
	conv->in[2] = bv;
	if (conv->num_in < 3)
		conv->num_in = 3;
	strncat(conv->type, what, sizeof(conv->type) - strlen(conv->type) - 1);
	st = cf_uses_add(s, u, false, wv, conv);
	if (!st)
		st = cf_uses_add(s, u, false, bv, conv);
	return st ? st : absorb(s, u, conv, next);
}

/*
 * Whether @conv's weights (and bias) can take a per-channel fold. A
 * ConvTranspose of an empty input computes no product: its lowering
 * takes no fused activation, so it takes no fold either.
 */
static bool conv_foldable(const struct cstate *s, const struct cop *conv)
{
	const struct vnpu_tinfo *w = cs_info(s, conv->in[1]);
	int64_t group = vnpu_attr_int(conv->node, "group", 1);

	if (!cs_is_const(s, conv->in[1]) || w->type != VNPU_TYPE_F32 || w->rank < 3)
		return false;
	if (cf_op_is(conv, "ConvTranspose") &&
	    (group < 1 || w->dims[0] % group || !vnpu_tinfo_elems(cs_info(s, conv->in[0]))))
		return false;
	return conv->in[2] < 0 || (cs_is_const(s, conv->in[2]) &&
				   vnpu_tinfo_elems(cs_info(s, conv->in[2])) ==
				   conv_out_channels(s, conv));
}

/* Fold BatchNormalization into the Conv or ConvTranspose before it. */
static vnpu_status fold_batchnorm(struct cstate *s, struct uses *u, struct cop *conv,
				  struct cop *bn)
{
	int64_t m = conv_out_channels(s, conv);
	float eps = vnpu_attr_float(bn->node, "epsilon", 1e-5f);
	const float *sc, *var;
	float *f;
	vnpu_status st;

	if (bn->num_in < 5 || !conv_foldable(s, conv))
		return VNPU_OK;
	for (uint32_t k = 1; k < 5; k++) {
		const struct vnpu_tinfo *t;

		if (bn->in[k] < 0)
			return VNPU_OK;
		t = cs_info(s, bn->in[k]);

		if (!cs_is_const(s, bn->in[k]) || t->type != VNPU_TYPE_F32 ||
		    vnpu_tinfo_elems(t) != m)
			return VNPU_OK;
	}
	sc = cs_info(s, bn->in[1])->data;
	var = cs_info(s, bn->in[4])->data;
	f = malloc((size_t)(m ? m : 1) * sizeof(float));
	if (!f)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	for (int64_t o = 0; o < m; o++)
		f[o] = sc[o] / sqrtf(var[o] + eps);
	st = scale_conv(s, u, conv, f, cs_info(s, bn->in[3])->data, cs_info(s, bn->in[2])->data,
			"+BatchNorm", bn);
	free(f);
	return st;
}

/* The activation a unary node is, when it can be fused. */
static bool act_of(const struct cstate *s, const struct cop *op, struct vnpu_layer_act *act)
{
	const struct vnpu_node *n = op->node;

	memset(act, 0, sizeof(*act));
	if (op->kind == COP_ACT) {
		*act = op->act;
		return is_float_val(s, op->in[0]);
	}
	if (op->kind != COP_NODE)
		return false;
	if (!strcmp(n->op, "Relu")) {
		act->func = VNPU_ACT_RELU;
	} else if (!strcmp(n->op, "LeakyRelu")) {
		act->func = VNPU_ACT_LEAKY_RELU;
		act->alpha = f32_bits(vnpu_attr_float(n, "alpha", 0.01f));
	} else if (!strcmp(n->op, "Sigmoid")) {
		act->func = VNPU_ACT_SIGMOID;
	} else if (!strcmp(n->op, "Tanh")) {
		act->func = VNPU_ACT_TANH;
	} else if (!strcmp(n->op, "HardSigmoid")) {
		act->func = VNPU_ACT_HARD_SIGMOID;
		act->alpha = f32_bits(vnpu_attr_float(n, "alpha", 0.2f));
		act->beta = f32_bits(vnpu_attr_float(n, "beta", 0.5f));
	} else if (!strcmp(n->op, "HardSwish")) {
		act->func = VNPU_ACT_HARD_SWISH;
	} else if (!strcmp(n->op, "Elu")) {
		act->func = VNPU_ACT_ELU;
		act->alpha = f32_bits(vnpu_attr_float(n, "alpha", 1.0f));
	} else if (!strcmp(n->op, "Clip")) {
		float lo = -INFINITY, hi = INFINITY;

		if (s->m->opset < 11) {
			lo = vnpu_attr_float(n, "min", -3.4028234e38f);
			hi = vnpu_attr_float(n, "max", 3.4028234e38f);
		} else {
			for (uint32_t k = 1; k < 3 && k < op->num_in; k++) {
				if (op->in[k] < 0)
					continue;
				if (!cs_is_const(s, op->in[k]) || !is_float_val(s, op->in[k]))
					return false;
				*(k == 1 ? &lo : &hi) = *(const float *)s->vals[op->in[k]].info.data;
			}
			if (isnan(lo) || isnan(hi))
				return false;
			lo = fmaxf(lo, -3.4028234e38f);
			hi = fminf(hi, 3.4028234e38f);
		}
		act->func = VNPU_ACT_CLIP;
		act->alpha = f32_bits(lo);
		act->beta = f32_bits(hi);
	} else {
		return false;
	}
	return is_float_val(s, op->in[0]);
}

bool cf_same_shape(const struct vnpu_tinfo *a, const struct vnpu_tinfo *b)
{
	if (a->rank != b->rank)
		return false;
	for (int32_t d = 0; d < a->rank; d++)
		if (a->dims[d] != b->dims[d])
			return false;
	return true;
}

/*
 * A Max or Min (@next) of @op's f32 output and a finite f32 constant
 * scalar, after an activation without beta: sets @act's bound
 * (VNPU_ACT_F_MAX or _MIN). Max(y, b) gives b on a tie and Max(b, y)
 * gives y, which differ only in the sign of a zero: b first must not be 0.
 */
static bool bound_of(const struct cstate *s, const struct cop *op, const struct cop *next,
		     struct vnpu_layer_act *act)
{
	bool max = cf_op_is(next, "Max"), first;
	int32_t c;
	float b;

	if ((!max && !cf_op_is(next, "Min")) || next->num_in != 2 || next->in[0] == next->in[1] ||
	    act->flags || (act->func != VNPU_ACT_IDENTITY && act->func != VNPU_ACT_RELU &&
			   act->func != VNPU_ACT_LEAKY_RELU))
		return false;
	first = next->in[0] == op->out[0];
	c = first ? next->in[1] : next->in[0];
	if (c < 0 || !cs_is_const(s, c) || !is_float_val(s, c) || !is_float_val(s, op->out[0]) ||
	    vnpu_tinfo_elems(cs_info(s, c)) != 1 ||
	    !cf_same_shape(cs_info(s, next->out[0]), cs_info(s, op->out[0])))
		return false;
	b = *(const float *)s->vals[c].info.data;
	if (!isfinite(b) || (!first && b == 0))
		return false;
	act->flags = max ? VNPU_ACT_F_MAX : VNPU_ACT_F_MIN;
	act->beta = f32_bits(b);
	return true;
}

/* A constant Add operand that is a per-channel bias of @op's output. */
static bool bias_fits(const struct cstate *s, const struct cop *op, int32_t c)
{
	const struct vnpu_tinfo *y = cs_info(s, op->out[0]), *b = cs_info(s, c);
	bool nchw = cf_op_is(op, "Conv") || cf_op_is(op, "ConvTranspose");
	int64_t ch = nchw ? y->dims[1] : y->dims[y->rank - 1];
	int32_t ch_axis = nchw ? 1 : y->rank - 1;

	if (!cs_is_const(s, c) || b->type != VNPU_TYPE_F32 || b->rank > y->rank)
		return false;
	if (vnpu_tinfo_elems(b) != ch)
		return false;
	/* Every dim of b is 1 except the channel one (right-aligned). */
	for (int32_t d = 0; d < b->rank; d++) {
		int32_t yd = d + y->rank - b->rank;

		if (b->dims[d] != 1 && yd != ch_axis)
			return false;
	}
	return true;
}

/*
 * The finite f32 constant @mul multiplies @op's output by: one value per
 * output channel (bias_fits()) or one value, as @m factors at *@f
 * (malloc'd); false (and no *@f) when it is not one.
 */
static bool scale_of(struct cstate *s, const struct cop *op, const struct cop *mul, int64_t m,
		     float **f)
{
	int32_t c = mul->in[0] == op->out[0] ? mul->in[1] : mul->in[0];
	const struct vnpu_tinfo *t;
	int64_t n;

	*f = NULL;
	if (mul->num_in != 2 || mul->in[0] == mul->in[1] || c < 0 ||
	    !cf_same_shape(cs_info(s, mul->out[0]), cs_info(s, op->out[0])))
		return false;
	t = cs_info(s, c);
	n = vnpu_tinfo_elems(t);
	if (!cs_is_const(s, c) || t->type != VNPU_TYPE_F32 ||
	    !(bias_fits(s, op, c) || (n == 1 && t->rank <= cs_info(s, op->out[0])->rank)))
		return false;
	for (int64_t i = 0; i < n; i++)
		if (!isfinite(((const float *)t->data)[i]))
			return false;
	*f = malloc((size_t)(m ? m : 1) * sizeof(float));
	if (!*f)
		return true;
	for (int64_t o = 0; o < m; o++)
		(*f)[o] = ((const float *)t->data)[n == 1 ? 0 : o];
	return true;
}

/*
 * Fold a Mul (@mul) of @conv's output by a finite f32 constant of one
 * value per output channel, or of one value, into @conv's weights and
 * bias. The product is rounded once where it was rounded twice: the
 * result moves by an ulp or so of each product (documented in
 * runtime.rst).
 */
static vnpu_status fold_scale(struct cstate *s, struct uses *u, struct cop *conv, struct cop *mul)
{
	float *f;
	vnpu_status st;

	if (!conv_foldable(s, conv) || !scale_of(s, conv, mul, conv_out_channels(s, conv), &f))
		return VNPU_OK;
	if (!f)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	st = scale_conv(s, u, conv, f, NULL, NULL, "+Mul", mul);
	free(f);
	return st;
}

/*
 * @v (a constant of @n elements, columns of @cols innermost, or @cols
 * rows of @per with @by_row) with each column j (or row) times @f[j], as
 * a new constant in *@out.
 */
static vnpu_status scaled_const(struct cstate *s, int32_t v, const float *f, int64_t cols,
				bool by_row, int32_t *out)
{
	const struct vnpu_tinfo *t = cs_info(s, v);
	int64_t n = vnpu_tinfo_elems(t), per = cols ? n / cols : 0;
	float *d = malloc((size_t)(n ? n : 1) * sizeof(float));

	if (!d)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	for (int64_t i = 0; i < n; i++)
		d[i] = ((const float *)t->data)[i] * f[by_row ? i / per : i % cols];
	return cs_add_const(s, VNPU_TYPE_F32, t->rank, t->dims, d, out);
}

/*
 * Fold a Mul (@mul) of a Gemm's or MatMul's output by a finite f32
 * constant of one value per column (or one value) into its constant B
 * (2-D) and C: Y * f = alpha * A * (B * f) + beta * (C * f), column by
 * column. C, when present, is a constant whose last dim is N. Rounding
 * as fold_scale()'s.
 */
static vnpu_status fold_gemm_scale(struct cstate *s, struct uses *u, struct cop *op,
				   struct cop *mul)
{
	bool gemm = cf_op_is(op, "Gemm"), tb = gemm && vnpu_attr_int(op->node, "transB", 0);
	const struct vnpu_tinfo *b = cs_info(s, op->in[1]), *c = NULL;
	int32_t ci = gemm && op->num_in > 2 ? op->in[2] : -1, nb, nc = -1;
	int64_t n;
	float *f;
	vnpu_status st;

	if (!cs_is_const(s, op->in[1]) || b->type != VNPU_TYPE_F32 || b->rank != 2)
		return VNPU_OK;
	n = b->dims[tb ? 0 : 1];
	if (ci >= 0) {
		c = cs_info(s, ci);
		if (!cs_is_const(s, ci) || c->type != VNPU_TYPE_F32 || c->rank < 1 ||
		    c->dims[c->rank - 1] != n)
			return VNPU_OK;
	}
	if (!scale_of(s, op, mul, n, &f))
		return VNPU_OK;
	if (!f)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	st = scaled_const(s, op->in[1], f, n, tb, &nb);
	if (!st && ci >= 0)
		st = scaled_const(s, ci, f, n, false, &nc);
	free(f);
	if (st)
		return st;
	op->in[1] = nb;
	if (ci >= 0)
		op->in[2] = nc;
	strncat(op->type, "+Mul", sizeof(op->type) - strlen(op->type) - 1);
	st = cf_uses_add(s, u, false, nb, op);
	if (!st && ci >= 0)
		st = cf_uses_add(s, u, false, nc, op);
	return st ? st : absorb(s, u, op, mul);
}

/* A new constant: the elementwise sum of two f32 constants of @a's size. */
static vnpu_status sum_bias(struct cstate *s, int32_t a, int32_t b, int32_t *out)
{
	const struct vnpu_tinfo *ta = cs_info(s, a), *tb = cs_info(s, b);
	int64_t n = vnpu_tinfo_elems(ta);
	float *sum;

	if (ta->type != VNPU_TYPE_F32 || vnpu_tinfo_elems(tb) != n)
		return VNPU_UNSUPPORTED;
	sum = malloc((size_t)(n ? n : 1) * sizeof(float));
	if (!sum)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	for (int64_t i = 0; i < n; i++)
		sum[i] = ((const float *)ta->data)[i] + ((const float *)tb->data)[i];
	return cs_add_const(s, VNPU_TYPE_F32, 1, &n, sum, out);
}

static vnpu_status fuse_into(struct cstate *s, struct uses *u, uint32_t idx)
{
	struct cop *op = &s->ops[idx];
	bool conv = cf_op_is(op, "Conv"), gemm = cf_op_is(op, "Gemm");
	bool matmul = cf_op_is(op, "MatMul"), deconv = cf_op_is(op, "ConvTranspose");
	struct cop *next;
	vnpu_status st;

	if ((!conv && !gemm && !matmul && !deconv) || !is_float_val(s, op->out[0]))
		return VNPU_OK;
	/*
	 * A ConvTranspose takes the folds and an activation, not a bias or a
	 * residual (its lowering has no room for them).
	 */
	if (deconv && !conv_foldable(s, op))
		return VNPU_OK;
	/* BatchNorm after a Conv or ConvTranspose with constant weights. */
	next = sole_reader(s, u, op->out[0], idx);
	if ((conv || deconv) && next && cf_op_is(next, "BatchNormalization") &&
	    next->in[0] == op->out[0] &&
	    cs_is_const(s, op->in[1]) && !(next->num_out > 1 && used(s, u, next->out[1]))) {
		st = fold_batchnorm(s, u, op, next);
		if (st)
			return st;
		next = sole_reader(s, u, op->out[0], idx);
	}
	/* A Mul by a constant per channel (or one value) folds into the weights. */
	if (next && cf_op_is(next, "Mul")) {
		st = conv || deconv ? fold_scale(s, u, op, next) : fold_gemm_scale(s, u, op, next);
		if (st)
			return st;
		next = sole_reader(s, u, op->out[0], idx);
	}
	/* A constant bias (added to the Conv's own constant bias). */
	if (next && !deconv && cf_op_is(next, "Add") && !(gemm && op->num_in > 2 && op->in[2] >= 0) &&
	    !(conv && op->num_in > 2 && op->in[2] >= 0 && !cs_is_const(s, op->in[2]))) {
		int32_t other = next->in[0] == op->out[0] ? next->in[1] : next->in[0];

		if (bias_fits(s, op, other) && next->in[0] != next->in[1]) {
			if (conv && op->num_in > 2 && op->in[2] >= 0) {
				if (sum_bias(s, op->in[2], other, &other))
					return VNPU_OK;	/* not fused */
				op->in[2] = -1;
			}
			op->bias = other;
			strncat(op->type, "+Add", sizeof(op->type) - strlen(op->type) - 1);
			st = absorb(s, u, op, next);
			if (st)
				return st;
			next = sole_reader(s, u, op->out[0], idx);
		}
	}
	/* A residual Add of a tensor of the output's shape computed earlier. */
	if (next && !deconv && cf_op_is(next, "Add") && next->in[0] != next->in[1]) {
		int32_t other = next->in[0] == op->out[0] ? next->in[1] : next->in[0];
		int32_t p = cf_producer(s, u, other);

		if (p < (int32_t)idx && is_float_val(s, other) &&
		    cf_same_shape(cs_info(s, other), cs_info(s, op->out[0])) &&
		    cf_same_shape(cs_info(s, next->out[0]), cs_info(s, op->out[0]))) {
			op->residual = other;
			strncat(op->type, "+Residual", sizeof(op->type) - strlen(op->type) - 1);
			st = absorb(s, u, op, next);
			if (st)
				return st;
			next = sole_reader(s, u, op->out[0], idx);
		}
	}
	/* An activation. */
	if (next && act_of(s, next, &op->act)) {
		size_t len = strlen(op->type);

		snprintf(op->type + len, sizeof(op->type) - len, "+%s", next->type);
		st = absorb(s, u, op, next);
		if (st)
			return st;
		next = sole_reader(s, u, op->out[0], idx);
	} else {
		memset(&op->act, 0, sizeof(op->act));
	}
	/* Then a Max or Min with a constant (Max(LeakyRelu(y), b) in TF exports). */
	if (next && bound_of(s, op, next, &op->act)) {
		strncat(op->type, "+", sizeof(op->type) - strlen(op->type) - 1);
		strncat(op->type, next->node->op, sizeof(op->type) - strlen(op->type) - 1);
		return absorb(s, u, op, next);
	}
	return VNPU_OK;
}

/* ---- sibling convolutions ---- */

static uint64_t val_bytes(const struct cstate *s, int32_t v)
{
	const struct vnpu_tinfo *t = &s->vals[v].info;

	return (uint64_t)vnpu_tinfo_elems(t) * vnpu_element_type_size(t->type);
}

/* Nodes @a and @b have the same attributes (numbers and strings). */
static bool same_attrs(const struct vnpu_node *a, const struct vnpu_node *b)
{
	if (a->num_attrs != b->num_attrs)
		return false;
	for (uint32_t i = 0; i < a->num_attrs; i++) {
		const struct vnpu_attr *x = &a->attrs[i], *y = NULL;

		for (uint32_t j = 0; !y && j < b->num_attrs; j++)
			if (!strcmp(b->attrs[j].name, x->name))
				y = &b->attrs[j];
		if (!y || x->type != y->type || x->n != y->n)
			return false;
		switch (x->type) {
		case VNPU_ATTR_FLOAT:
			if (memcmp(&x->f, &y->f, sizeof(x->f)))
				return false;
			break;
		case VNPU_ATTR_INT:
			if (x->i != y->i)
				return false;
			break;
		case VNPU_ATTR_STRING:
			if (strcmp(x->s, y->s))
				return false;
			break;
		case VNPU_ATTR_FLOATS:
			if (x->n && memcmp(x->floats, y->floats, x->n * sizeof(*x->floats)))
				return false;
			break;
		case VNPU_ATTR_INTS:
			if (x->n && memcmp(x->ints, y->ints, x->n * sizeof(*x->ints)))
				return false;
			break;
		default:
			return false;
		}
	}
	return true;
}

/* @op's constant bias input [M] (a Conv's third), -1 when none; -2 when
 * it has another form (a fused one, a computed one). */
static int32_t sibling_bias(const struct cstate *s, const struct cop *op, int64_t m)
{
	const struct vnpu_tinfo *b;

	if (op->bias >= 0)
		return -2;
	if (op->num_in < 3 || op->in[2] < 0)
		return -1;
	b = cs_info(s, op->in[2]);
	return cs_is_const(s, op->in[2]) && b->type == VNPU_TYPE_F32 && b->rank == 1 &&
	       b->dims[0] == m ? op->in[2] : -2;
}

/*
 * Whether Conv @b may run as part of Conv @a: the same input, attributes
 * (one group), fused activation and form of bias, constant f32 weights
 * alike but for the output channels, no residual, and outputs of a batch
 * of one (each then one run of the joint output) that are no model
 * outputs nor views themselves (views of them stay theirs).
 */
static bool siblings(const struct cstate *s, const struct cop *a,
		     const struct cop *b)
{
	const struct vnpu_tinfo *wa, *wb, *ya, *yb;
	int32_t ba, bb;

	if (!cf_op_is(b, "Conv") || b->dead || b->in[0] != a->in[0] || b->num_out != 1 ||
	    b->residual >= 0 || b->qlinear || b->up_input >= 0 || b->out[0] < 0 ||
	    memcmp(&a->act, &b->act, sizeof(a->act)) || !same_attrs(a->node, b->node) ||
	    vnpu_attr_int(b->node, "group", 1) != 1 || b->num_in < 2 || b->in[1] < 0 ||
	    !cs_is_const(s, b->in[1]))
		return false;
	wa = cs_info(s, a->in[1]);
	wb = cs_info(s, b->in[1]);
	ya = cs_info(s, a->out[0]);
	yb = cs_info(s, b->out[0]);
	if (wa->type != VNPU_TYPE_F32 || wb->type != VNPU_TYPE_F32 || wa->rank != wb->rank ||
	    wa->rank < 3 || memcmp(wa->dims + 1, wb->dims + 1, (size_t)(wa->rank - 1) * 8) ||
	    ya->type != VNPU_TYPE_F32 || yb->type != VNPU_TYPE_F32 || ya->rank != yb->rank ||
	    !vnpu_tinfo_static(ya) || !vnpu_tinfo_static(yb) || ya->dims[0] != 1 ||
	    yb->dims[0] != 1 || memcmp(ya->dims + 2, yb->dims + 2, (size_t)(ya->rank - 2) * 8) ||
	    ya->dims[1] != wa->dims[0] || yb->dims[1] != wb->dims[0])
		return false;
	for (int i = 0; i < 2; i++) {
		const struct cval *y = &s->vals[(i ? b : a)->out[0]];

		if (y->out_index >= 0 || y->alias >= 0)
			return false;
	}
	ba = sibling_bias(s, a, wa->dims[0]);
	bb = sibling_bias(s, b, wb->dims[0]);
	return ba != -2 && bb != -2 && (ba < 0) == (bb < 0);
}

/* Constants @a and @b (f32) one after the other as a new one in *@out. */
static vnpu_status join_consts(struct cstate *s, int32_t a, int32_t b, int32_t *out)
{
	const struct vnpu_tinfo *ta = cs_info(s, a), *tb = cs_info(s, b);
	int64_t na = vnpu_tinfo_elems(ta), nb = vnpu_tinfo_elems(tb), dims[VNPU_MAX_DIMS];
	int32_t rank = ta->rank;
	float *d = malloc((size_t)(na + nb) * sizeof(float));

	if (!d)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	memcpy(d, ta->data, (size_t)na * sizeof(float));
	memcpy(d + na, tb->data, (size_t)nb * sizeof(float));
	memcpy(dims, ta->dims, (size_t)rank * sizeof(dims[0]));
	dims[0] += tb->dims[0];
	return cs_add_const(s, VNPU_TYPE_F32, rank, dims, d, out);
}

/*
 * Conv @b runs as part of Conv @a (siblings()): one convolution over the
 * weights of both, one after the other, into a new value whose runs
 * their outputs become (views), so the input's windows are gathered,
 * and under the bf16 hint rounded, once, for one layer. Each output is
 * the sum of the same products as before, over the same depth (the
 * engine's algorithm is chosen for the joint shape).
 * openWakeWord's mel spectrogram: the STFT's real and imaginary 1-D
 * Convs (257 channels each over 512 taps of the audio).
 */
static vnpu_status merge_conv(struct cstate *s, struct uses *u, uint32_t ia, uint32_t ib)
{
	int64_t dims[VNPU_MAX_DIMS];
	int32_t w, bias = -1, y, ya, yb, rank;
	vnpu_status st;

	st = join_consts(s, s->ops[ia].in[1], s->ops[ib].in[1], &w);
	if (!st && s->ops[ia].num_in > 2 && s->ops[ia].in[2] >= 0)
		st = join_consts(s, s->ops[ia].in[2], s->ops[ib].in[2], &bias);
	ya = s->ops[ia].out[0];
	yb = s->ops[ib].out[0];
	rank = cs_info(s, ya)->rank;
	memcpy(dims, cs_info(s, ya)->dims, (size_t)rank * sizeof(dims[0]));
	dims[1] += cs_info(s, yb)->dims[1];
	if (!st)
		st = cs_add_temp(s, VNPU_TYPE_F32, rank, dims, &y);
	if (!st)
		st = uses_cover(u, s->num_vals);
	if (st)
		return st;
	s->ops[ia].in[1] = w;
	if (bias >= 0)
		s->ops[ia].in[2] = bias;
	s->ops[ia].out[0] = y;
	s->ops[ib].dead = true;
	s->ops[ib].fused_into = (int32_t)ia;
	s->vals[ya].alias = y;
	s->vals[ya].alias_offset = 0;
	s->vals[yb].alias = y;
	s->vals[yb].alias_offset = val_bytes(s, ya);
	u->aliased[y] = true;
	st = cf_uses_add(s, u, true, y, &s->ops[ia]);
	for (int i = 1; !st && i < 3 && i < (int)s->ops[ia].num_in; i++)
		st = cf_uses_add(s, u, false, s->ops[ia].in[i], &s->ops[ia]);
	return st;
}

/* Sibling Convs (siblings()) run as one (merge_conv()). */
static vnpu_status merge_siblings(struct cstate *s, struct uses *u)
{
	vnpu_status st = VNPU_OK;

	for (uint32_t i = 0; !st && i < s->num_ops; i++) {
		const struct cop *a = &s->ops[i];

		if (!cf_op_is(a, "Conv") || a->dead || a->num_out != 1 || a->out[0] < 0 ||
		    a->num_in < 2 || a->in[0] < 0 || a->in[1] < 0 || !cs_is_const(s, a->in[1]) ||
		    a->residual >= 0 || a->qlinear || a->up_input >= 0 ||
		    vnpu_attr_int(a->node, "group", 1) != 1)
			continue;
		for (uint32_t j = i + 1; !st && j < s->num_ops; j++)
			if (siblings(s, &s->ops[i], &s->ops[j])) {
				s->cur_op = j;
				st = merge_conv(s, u, i, j);
				break;
			}
	}
	return st;
}

/* ---- concatenation in place ---- */

/* Whether the program computes @val (an op writes it), rather than
 * taking it as an input or a constant. */
static bool computed(const struct cstate *s, const struct uses *u, int32_t val)
{
	if (s->vals[val].info.data ||
	    ((uint32_t)val < s->m->num_values && s->m->values[val].kind != VNPU_VALUE_NODE))
		return false;
	for (uint32_t i = 0; i < s->num_ins; i++)
		if (s->in_vals[i] == val)
			return false;
	for (int32_t l = u->writers[val]; l >= 0; l = u->links[l].next) {
		const struct cop *op = &s->ops[u->links[l].op];

		if (op_has(op->out, op->num_out, val))
			return true;
	}
	return false;
}

/*
 * Put input @x of the Concat writing @y at byte @offset of @y: the value
 * holding @x (@x itself or what it views, whole) becomes a view of @y
 * there, so what computes it writes it in place. Not when that value is
 * held elsewhere already (a model output, a constant, an input, in
 * another Concat or twice in this one) or is @y's own storage.
 */
static bool place_input(struct cstate *s, struct uses *u, int32_t x, int32_t y,
			uint64_t offset)
{
	uint64_t at, y_at;
	int32_t r;

	if (x < 0 || !val_bytes(s, x))
		return false;
	r = cs_storage(s, x, &at);
	if (at || val_bytes(s, r) != val_bytes(s, x) || r == cs_storage(s, y, &y_at) ||
	    s->vals[r].info.type != s->vals[y].info.type || s->vals[r].out_index >= 0 ||
	    !computed(s, u, r))
		return false;
	s->vals[r].alias = y;
	s->vals[r].alias_offset = offset;
	u->aliased[y] = true;
	return true;
}

/*
 * Input @i of Concat @op, at byte @offset of its output y, as part of a
 * larger value r that it views (a Split's parts, a C2f block's halves):
 * r computed in place in y, whole, where each input sharing y's bytes
 * with it is the view of r at that place. True also when @i sits at
 * @offset of y already (an earlier part placed r). The conditions of
 * place_input() hold for r.
 */
static bool place_part(struct cstate *s, struct uses *u, const struct cop *op, uint32_t i,
		       uint64_t offset)
{
	int32_t x = op->in[i], y = op->out[0], r, y_root;
	uint64_t at, y_at, base, end, off = 0;

	if (x < 0 || !val_bytes(s, x))
		return false;
	r = cs_storage(s, x, &at);
	y_root = cs_storage(s, y, &y_at);
	if (r == y_root)
		return at == y_at + offset;
	base = offset - at;
	end = base + val_bytes(s, r);
	if (at > offset || end > val_bytes(s, y) || s->vals[r].info.type != s->vals[y].info.type ||
	    s->vals[r].out_index >= 0 || !computed(s, u, r))
		return false;
	for (uint32_t j = 0; j < op->num_in; off += val_bytes(s, op->in[j]), j++) {
		uint64_t at_j, bytes = val_bytes(s, op->in[j]);

		if (!bytes || off + bytes <= base || off >= end)
			continue;
		if (cs_storage(s, op->in[j], &at_j) != r || at_j != off - base)
			return false;
	}
	s->vals[r].alias = y;
	s->vals[r].alias_offset = base;
	u->aliased[y] = true;
	return true;
}

/*
 * A Concat whose output holds each input in one run of bytes (every
 * dimension before the axis is 1) has its inputs computed in place
 * (place_input(), place_part()) and copies only the others; with none
 * left it is a view. Each input is then read where the Concat keeps it, which nothing
 * else writes, so every reader sees the values it saw before.
 */
static void concat_in_place(struct cstate *s, struct uses *u, struct cop *op)
{
	const struct vnpu_tinfo *y;
	int64_t axis, outer = 1;
	uint64_t offset = 0;
	bool all = true;

	if (!cf_op_is(op, "Concat") || op->num_out != 1 || op->out[0] < 0)
		return;
	y = cs_info(s, op->out[0]);
	axis = vnpu_attr_int(op->node, "axis", 0);
	axis = axis < 0 ? axis + y->rank : axis;
	if (!vnpu_tinfo_static(y) || axis < 0 || axis >= y->rank)
		return;
	for (int64_t d = 0; d < axis; d++)
		outer *= y->dims[d];
	if (outer != 1)
		return;
	for (uint32_t i = 0; i < op->num_in; i++) {
		int32_t x = op->in[i];

		if (x < 0 || !vnpu_tinfo_static(cs_info(s, x)))
			return;
	}
	for (uint32_t i = 0; i < op->num_in; i++) {
		if (!place_input(s, u, op->in[i], op->out[0], offset) &&
		    !place_part(s, u, op, i, offset))
			all = all && !val_bytes(s, op->in[i]);
		offset += val_bytes(s, op->in[i]);
	}
	if (all) {
		op->dead = true;
		op->fused_into = -1;
	}
}

/* ---- a residual convolution in place ---- */

/*
 * Whether a value held in @root's bytes, other than @y, is a model output
 * or is read or written by a live op after op @after.
 */
static bool held_after(const struct cstate *s, const struct uses *u, int32_t root, int32_t y,
		       uint32_t after)
{
	uint64_t at;

	for (uint32_t v = 0; v < s->num_vals; v++) {
		if ((int32_t)v == y || cs_storage(s, (int32_t)v, &at) != root)
			continue;
		if (s->vals[v].out_index >= 0)
			return true;
		for (int32_t l = u->readers[v]; l >= 0; l = u->links[l].next) {
			const struct cop *op = &s->ops[u->links[l].op];

			if ((uint32_t)u->links[l].op > after && !op->dead &&
			    op_has(op->in, op->num_in, (int32_t)v))
				return true;
		}
		for (int32_t l = u->writers[v]; l >= 0; l = u->links[l].next) {
			const struct cop *op = &s->ops[u->links[l].op];

			if ((uint32_t)u->links[l].op > after && !op->dead &&
			    op_has(op->out, op->num_out, (int32_t)v))
				return true;
		}
	}
	return false;
}

/*
 * An int8 1x1 convolution with its residual Add fused (fuse_qdq.c:
 * in[9] the residual R) writes its output Y over R when nothing reads R's
 * bytes after it: the epilogue reads each element of R before it writes
 * Y's element at the same place, and no other. Y's bytes are then those
 * the same positions' part wrote as R, which the same CPU holds.
 */
static void residual_in_place(struct cstate *s, struct uses *u, uint32_t idx)
{
	const struct cop *op = &s->ops[idx];
	const struct vnpu_tinfo *w;
	int32_t y, root;
	uint64_t at;

	if (!op->qlinear || op->num_in != 14 || op->num_out != 1 || !cf_op_is(op, "Conv") ||
	    op->in[9] < 0 || op->out[0] < 0)
		return;
	y = op->out[0];
	w = cs_info(s, op->in[3]);
	if (w->rank != 4 || w->dims[2] != 1 || w->dims[3] != 1 || s->vals[y].alias >= 0 ||
	    u->aliased[y] || s->vals[y].out_index >= 0)
		return;
	root = cs_storage(s, op->in[9], &at);
	if (at || val_bytes(s, root) != val_bytes(s, y) ||
	    s->vals[root].info.type != s->vals[y].info.type || !computed(s, u, root))
		return;
	for (uint32_t k = 0; k < 9; k++)
		if (op->in[k] >= 0 && cs_storage(s, op->in[k], &at) == root)
			return;
	if (held_after(s, u, root, y, idx))
		return;
	s->vals[y].alias = root;
	s->vals[y].alias_offset = 0;
	u->aliased[root] = true;
}

vnpu_status cs_fuse(struct cstate *s)
{
	struct uses u = { 0 };
	vnpu_status st = uses_init(s, &u);

	if (!st)
		st = make_views(s, &u);
	if (!st && !s->opt.no_fusion)
		st = cf_fuse_qdq(s, &u);
	if (!st && !s->opt.no_fusion)
		st = cf_fuse_layer_norms(s, &u);
	if (!st && !s->opt.no_fusion)
		st = cf_fuse_attention(s, &u);
	if (!st && !s->opt.no_fusion)
		st = cf_fuse_activations(s, &u);
	for (uint32_t i = 0; !st && !s->opt.no_fusion && i < s->num_ops; i++) {
		s->cur_op = i;
		if (!s->ops[i].dead)
			st = fuse_into(s, &u, i);
	}
	if (!st && !s->opt.no_fusion)
		st = merge_siblings(s, &u);
	if (!st && !s->opt.no_fusion)
		st = cf_fuse_chains(s, &u);
	if (!st && !s->opt.no_fusion)
		st = cf_fuse_qdq_tables(s, &u);
	if (!st && !s->opt.no_fusion)
		st = cf_fuse_upsamples(s, &u);
	for (uint32_t i = 0; !st && !s->opt.no_fusion && i < s->num_ops; i++) {
		s->cur_op = i;
		if (!s->ops[i].dead)
			concat_in_place(s, &u, &s->ops[i]);
	}
	for (uint32_t i = 0; !st && !s->opt.no_fusion && i < s->num_ops; i++) {
		s->cur_op = i;
		if (!s->ops[i].dead)
			residual_in_place(s, &u, i);
	}
	uses_fini(&u);
	return st;
}

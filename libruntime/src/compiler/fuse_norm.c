// SPDX-License-Identifier: MIT
/*
 * LayerNormalization written out, as exporters of opsets before 17 write
 * it, becomes the one NORM layer:
 *
 *	mean = ReduceMean(x)		over the last axes, keepdims
 *	d    = Sub(x, mean)
 *	sq   = Pow(d, 2) or Mul(d, d)
 *	var  = ReduceMean(sq)		the same axes
 *	sd   = Sqrt(Add(var, eps))	eps a scalar constant, either side
 *	n    = Div(d, sd) or Mul(d, Reciprocal(sd))
 *	[Mul(n, gamma)] [Add(., beta)]	constants over the normalized axes
 *
 * Every value but the last is read by these ops only (no model output, no
 * view). The last op becomes LayerNormalization(x, gamma or 1, beta) with
 * the axis and epsilon found.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "fuse.h"
#include "lower.h"

/* The ops of one match: the pattern's eight at most, then gamma's and beta's. */
#define NORM_MAX_OPS 10

struct norm_match {
	int32_t ops[NORM_MAX_OPS];
	uint32_t n;
	int32_t x;
	int64_t axis;
	float eps;
	int32_t gamma, beta;	/* constants, or -1 */
};

/* The live op writing @v when it is @name, else NULL; recorded in @m. */
static const struct cop *made_by(const struct cstate *s, const struct uses *u, int32_t v,
				 const char *name, struct norm_match *m)
{
	int32_t p = v >= 0 && s->vals[v].alias < 0 ? cf_producer(s, u, v) : -1;

	if (p < 0 || !cf_op_is(&s->ops[p], name) || s->ops[p].num_out != 1 ||
	    m->n == NORM_MAX_OPS)
		return NULL;
	m->ops[m->n++] = p;
	return &s->ops[p];
}

static bool scalar_f32(const struct cstate *s, int32_t v, float *out)
{
	const struct vnpu_tinfo *t = v >= 0 ? cs_info(s, v) : NULL;

	if (!t || !cs_is_const(s, v) || t->type != VNPU_TYPE_F32 || vnpu_tinfo_elems(t) != 1)
		return false;
	*out = *(const float *)t->data;
	return true;
}

/* A ReduceMean of @x (keepdims) over the axes from some axis to the last:
 * that axis, or -1. */
static int64_t mean_axis(const struct cstate *s, const struct cop *op, int32_t x)
{
	int32_t rank = cs_info(s, x)->rank;
	int64_t axes[VNPU_MAX_RANK];
	uint32_t mask = 0;
	bool present;
	int32_t n;

	if (op->in[0] != x || !vnpu_attr_int(op->node, "keepdims", 1))
		return -1;
	n = cl_const_ints(s, op, "axes", 1, axes, VNPU_MAX_RANK, &present);
	if (n <= 0 || rank <= 0)
		return -1;
	for (int32_t i = 0; i < n; i++) {
		int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];

		if (a < 0 || a >= rank)
			return -1;
		mask |= 1u << a;
	}
	/* Exactly the last n axes. */
	if (mask != ((1u << rank) - 1) - ((1u << (rank - n)) - 1))
		return -1;
	return rank - n;
}

/* The other input of binary @op than @v. */
static int32_t other_in(const struct cop *op, int32_t v)
{
	return op->in[0] == v ? op->in[1] : op->in[0];
}

/* d = Sub(x, mean) with mean a ReduceMean of x: fills @m's x and axis. */
static bool match_centre(const struct cstate *s, const struct uses *u, int32_t d,
			 struct norm_match *m)
{
	const struct cop *sub = made_by(s, u, d, "Sub", m), *mean;

	if (!sub || sub->num_in != 2)
		return false;
	mean = made_by(s, u, sub->in[1], "ReduceMean", m);
	if (!mean)
		return false;
	m->x = sub->in[0];
	m->axis = mean_axis(s, mean, m->x);
	return m->axis >= 0 && s->vals[m->x].info.type == VNPU_TYPE_F32 &&
	       cf_same_shape(cs_info(s, d), cs_info(s, m->x));
}

/* sd = Sqrt(Add(ReduceMean(d * d), eps)) over @m's axes. */
static bool match_deviation(const struct cstate *s, const struct uses *u, int32_t sd, int32_t d,
			    struct norm_match *m)
{
	const struct cop *root = made_by(s, u, sd, "Sqrt", m), *add, *var, *sq;
	float two;

	add = root ? made_by(s, u, root->in[0], "Add", m) : NULL;
	if (!add || add->num_in != 2)
		return false;
	if (scalar_f32(s, add->in[1], &m->eps))
		var = made_by(s, u, add->in[0], "ReduceMean", m);
	else if (scalar_f32(s, add->in[0], &m->eps))
		var = made_by(s, u, add->in[1], "ReduceMean", m);
	else
		return false;
	if (!var || !isfinite(m->eps) || m->eps < 0)
		return false;
	sq = made_by(s, u, var->in[0], "Pow", m);
	if (sq && (sq->in[0] != d || !scalar_f32(s, sq->in[1], &two) || two != 2.0f))
		return false;
	if (!sq) {
		sq = made_by(s, u, var->in[0], "Mul", m);
		if (!sq || sq->in[0] != d || sq->in[1] != d)
			return false;
	}
	return mean_axis(s, var, var->in[0]) == m->axis;
}

/* The ops are the pattern's: every value but @last's read by them only. */
static bool match_closed(const struct cstate *s, const struct uses *u, const struct norm_match *m,
			 int32_t last, bool *mine)
{
	bool ok = true;

	for (uint32_t i = 0; i < m->n; i++)
		mine[m->ops[i]] = true;
	for (uint32_t i = 0; ok && i < m->n; i++)
		if (m->ops[i] != last)
			ok = cf_only_read_by(s, u, s->ops[m->ops[i]].out[0], mine);
	for (uint32_t i = 0; i < m->n; i++)
		mine[m->ops[i]] = false;
	return ok;
}

/* A constant of f32 that broadcasts over the normalized axes of @m only. */
static bool norm_param(const struct cstate *s, int32_t c, const struct norm_match *m)
{
	const struct vnpu_tinfo *t = c >= 0 ? cs_info(s, c) : NULL, *x = cs_info(s, m->x);

	if (!t || !cs_is_const(s, c) || t->type != VNPU_TYPE_F32 || t->rank > x->rank - m->axis)
		return false;
	for (int32_t d = 0; d < t->rank; d++)
		if (t->dims[d] != 1 && t->dims[d] != x->dims[d + x->rank - t->rank])
			return false;
	return true;
}

/*
 * The op after @n's writer when it is @name with a parameter (norm_param())
 * as its other input and @n read by it only: recorded, its index.
 */
static int32_t param_op(const struct cstate *s, const struct uses *u, int32_t v, const char *name,
			struct norm_match *m, int32_t *param, bool *mine)
{
	int32_t r = cf_live_reader(s, u, v, -1);
	const struct cop *op;
	bool alone;

	if (r < 0 || m->n == NORM_MAX_OPS)
		return -1;
	op = &s->ops[r];
	mine[r] = true;
	alone = cf_only_read_by(s, u, v, mine);
	mine[r] = false;
	if (!alone || !cf_op_is(op, name) || op->num_in != 2 || op->in[0] == op->in[1] ||
	    !norm_param(s, other_in(op, v), m) ||
	    !cf_same_shape(cs_info(s, op->out[0]), cs_info(s, v)))
		return -1;
	*param = other_in(op, v);
	m->ops[m->n++] = r;
	return r;
}

static vnpu_status set_attr(struct vnpu_attr *a, const char *name, enum vnpu_attr_type type)
{
	a->name = strdup(name);
	a->type = type;
	a->t.rank = -1;
	return a->name ? VNPU_OK : vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
}

/* The op at @last becomes LayerNormalization of @m; the others die. */
static vnpu_status rewrite_norm(struct cstate *s, struct uses *u, const struct norm_match *m,
				int32_t last)
{
	struct vnpu_node *n;
	int32_t gamma = m->gamma;
	vnpu_status st = cs_add_synth(s, "LayerNormalization", s->ops[last].node, 3, 1, &n);
	struct cop *op;

	if (!st)
		st = set_attr(&n->attrs[0], "axis", VNPU_ATTR_INT);
	if (!st)
		st = set_attr(&n->attrs[1], "epsilon", VNPU_ATTR_FLOAT);
	if (st)
		return st;
	n->attrs[0].i = m->axis;
	n->attrs[1].f = m->eps;
	n->num_attrs = 2;
	if (gamma < 0) {
		st = cl_const_scalar(s, VNPU_TYPE_F32, 1.0, &gamma);
		if (st)
			return st;
	}
	for (uint32_t i = 0; i < m->n; i++) {
		if (m->ops[i] != last) {
			s->ops[m->ops[i]].dead = true;
			s->ops[m->ops[i]].fused_into = last;
		}
	}
	op = &s->ops[last];
	if (!op->root)
		op->root = op->node;
	op->node = n;
	op->in[0] = m->x;
	op->in[1] = gamma;
	op->in[2] = m->beta;
	op->num_in = 3;
	snprintf(op->type, sizeof(op->type), "LayerNormalization");
	st = cf_uses_add(s, u, false, m->x, op);
	if (!st)
		st = cf_uses_add(s, u, false, gamma, op);
	return st ? st : cf_uses_add(s, u, false, m->beta, op);
}

/* A match ending at the Div (or Mul by a Reciprocal) op @i. */
static vnpu_status try_norm(struct cstate *s, struct uses *u, uint32_t i, bool *mine)
{
	const struct cop *op = &s->ops[i], *rec = NULL;
	struct norm_match m = { .n = 1, .gamma = -1, .beta = -1 };
	int32_t d = op->in[0], sd = op->in[1], last = (int32_t)i, r;

	m.ops[0] = (int32_t)i;
	if (op->num_in != 2 || op->num_out != 1 || (!cf_op_is(op, "Div") && !cf_op_is(op, "Mul")))
		return VNPU_OK;
	if (cf_op_is(op, "Mul")) {
		rec = made_by(s, u, op->in[1], "Reciprocal", &m);
		if (!rec) {
			rec = made_by(s, u, op->in[0], "Reciprocal", &m);
			d = op->in[1];
		}
		if (!rec)
			return VNPU_OK;
		sd = rec->in[0];
	}
	if (!match_centre(s, u, d, &m) || !match_deviation(s, u, sd, d, &m))
		return VNPU_OK;
	r = param_op(s, u, op->out[0], "Mul", &m, &m.gamma, mine);
	last = r >= 0 ? r : last;
	r = param_op(s, u, s->ops[last].out[0], "Add", &m, &m.beta, mine);
	last = r >= 0 ? r : last;
	if (!match_closed(s, u, &m, last, mine))
		return VNPU_OK;
	s->cur_op = (uint32_t)last;
	return rewrite_norm(s, u, &m, last);
}

vnpu_status cf_fuse_layer_norms(struct cstate *s, struct uses *u)
{
	bool *mine = calloc(s->num_ops + 1, sizeof(*mine));
	vnpu_status st = VNPU_OK;

	if (!mine)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	for (uint32_t i = 0; !st && i < s->num_ops; i++)
		if (!s->ops[i].dead)
			st = try_norm(s, u, i, mine);
	free(mine);
	return st;
}

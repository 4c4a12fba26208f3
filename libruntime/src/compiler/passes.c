// SPDX-License-Identifier: MIT
/*
 * Graph passes: build the working graph (inference with full constant
 * folding, If branches inlined with a select, Loop and Scan unrolled), then turn view-like nodes
 * into aliases, fold BatchNorm into the Conv/Gemm before it and fuse a
 * constant bias, a residual Add and an activation into Conv/Gemm/MatMul.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgraph.h"
#include "error.h"

/* Constants computed at compile time, per tensor (elements). */
#define COMPILE_FOLD_LIMIT (1ll << 26)

static bool op_is(const struct cop *op, const char *name)
{
	return op->kind == COP_NODE && !strcmp(op->node->op, name);
}

/* ---- building: a walk over the graph, loops unrolled ---- */

/*
 * The walk maps each model value to the working value that holds it: the
 * value of the same index in the main graph, a fresh value per iteration
 * inside a loop body (whose nodes are instantiated once per iteration).
 */
struct walk {
	int32_t *map;		/* model value -> working value */
	uint32_t depth;		/* loop bodies around the node walked */
	uint64_t unrolled;	/* body nodes instantiated so far */
};

static bool outputs_folded(const struct cstate *s, const int32_t *out, uint32_t n)
{
	bool any = false;

	for (uint32_t o = 0; o < n; o++) {
		if (out[o] < 0)
			continue;
		if (!s->vals[out[o]].info.data)
			return false;
		any = true;
	}
	return any;
}

/* Infer @n on working values (NULL-terminated for If, which reads none). */
static vnpu_status infer_ids(struct cstate *s, const struct vnpu_node *n, const int32_t *in,
			     const int32_t *out)
{
	struct vnpu_tinfo *ip[COP_MAX_IO + 1], *op[COP_MAX_IO];
	vnpu_status st;

	for (uint32_t k = 0; k < n->num_inputs; k++)
		ip[k] = in[k] >= 0 ? &s->vals[in[k]].info : NULL;
	ip[n->num_inputs] = NULL;
	for (uint32_t k = 0; k < n->num_outputs; k++)
		op[k] = out[k] >= 0 ? &s->vals[out[k]].info : NULL;
	st = vnpu_node_infer(s->m, n, ip, op, COMPILE_FOLD_LIMIT);
	/* An op inference does not know leaves its outputs unknown: the
	 * lowering reports it. */
	return st == VNPU_UNSUPPORTED ? VNPU_OK : st;
}

/* An op running @n on working values @in -> @out (nothing when folded). */
static vnpu_status add_op(struct cstate *s, const struct vnpu_node *n, const int32_t *in,
			  const int32_t *out)
{
	struct cop *op;
	vnpu_status st;

	if (outputs_folded(s, out, n->num_outputs))
		return VNPU_OK;
	st = cs_add_op(s, &op);
	if (st)
		return st;
	op->kind = COP_NODE;
	op->node = n;
	op->num_in = n->num_inputs;
	op->num_out = n->num_outputs;
	memcpy(op->in, in, n->num_inputs * sizeof(int32_t));
	memcpy(op->out, out, n->num_outputs * sizeof(int32_t));
	snprintf(op->type, sizeof(op->type), "%s", n->op);
	return VNPU_OK;
}

/* A fresh working value for each output of @n inside a body. */
static vnpu_status fresh_outputs(struct cstate *s, struct walk *w, const struct vnpu_node *n,
				 int32_t *out)
{
	for (uint32_t k = 0; k < n->num_outputs; k++) {
		vnpu_status st;

		out[k] = -1;
		if (n->outputs[k] < 0)
			continue;
		st = cs_add_temp(s, VNPU_TYPE_UNDEFINED, 0, NULL, &out[k]);
		if (st)
			return st;
		s->vals[out[k]].info.rank = -1;
		w->map[n->outputs[k]] = out[k];
	}
	return VNPU_OK;
}

/* A node the compiler made, inferred and added like a model node. */
static vnpu_status add_synth(struct cstate *s, struct vnpu_node *n, const int32_t *in,
			     int32_t *out)
{
	vnpu_status st = cs_add_temp(s, VNPU_TYPE_UNDEFINED, 0, NULL, out);

	if (st)
		return st;
	s->vals[*out].info.rank = -1;
	st = infer_ids(s, n, in, out);
	if (!st && s->vals[*out].info.type == VNPU_TYPE_UNDEFINED)
		st = vnpu_error(VNPU_UNSUPPORTED, "node '%s' (%s): cannot unroll it: %s", n->name,
				n->op, vnpu_last_error());
	return st ? st : add_op(s, n, in, out);
}

static vnpu_status const_i64(struct cstate *s, int32_t rank, const int64_t *vals, int64_t n,
			     int32_t *out)
{
	int64_t *data = malloc((size_t)(n ? n : 1) * sizeof(int64_t));

	if (!data)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	memcpy(data, vals, (size_t)n * sizeof(int64_t));
	return cs_add_const(s, VNPU_TYPE_I64, rank, &n, data, out);
}

static vnpu_status set_axis(struct vnpu_node *n, int64_t axis)
{
	n->attrs[0].name = strdup("axis");
	n->attrs[0].type = VNPU_ATTR_INT;
	n->attrs[0].i = axis;
	n->attrs[0].t.rank = -1;
	n->num_attrs = 1;
	return n->attrs[0].name ? VNPU_OK :
	       vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
}

/* Working value @x at @index along @axis (a Gather of a constant index). */
static vnpu_status pick_value(struct cstate *s, const struct vnpu_node *like, int32_t x,
			      int64_t axis, int64_t index, int32_t *out)
{
	struct vnpu_node *n;
	int32_t in[2] = { x, -1 };
	vnpu_status st = cs_add_synth(s, "Gather", like, 2, 1, &n);

	if (!st)
		st = set_axis(n, axis);
	if (!st)
		st = const_i64(s, 0, &index, 1, &in[1]);
	return st ? st : add_synth(s, n, in, out);
}

/*
 * @n working values @parts (@stride apart) of one shape stacked along a new
 * axis @axis (@reverse: the last first): each reshaped with the new axis,
 * then concatenated, at most COP_MAX_IO at a time.
 */
static vnpu_status stack_values(struct cstate *s, const struct vnpu_node *like,
				const int32_t *parts, uint32_t n, uint32_t stride, int64_t axis,
				bool reverse, int32_t *out)
{
	const struct vnpu_tinfo *p0 = &s->vals[parts[0]].info;
	int64_t dims[VNPU_MAX_RANK];
	int32_t rank = p0->rank + 1, shape, acc = -1;
	vnpu_status st;

	if (p0->rank < 0 || rank > VNPU_MAX_RANK)
		return vnpu_error(VNPU_UNSUPPORTED, "node '%s' (%s): scan outputs of rank %d",
				  like->name, like->op, p0->rank);
	if (axis < 0)
		axis += rank;
	if (axis < 0 || axis >= rank)
		return vnpu_error(VNPU_PARSE_ERROR, "node '%s' (%s): scan output axis out of range",
				  like->name, like->op);
	for (int32_t d = 0; d < rank; d++)
		dims[d] = d < axis ? p0->dims[d] : d == axis ? 1 : p0->dims[d - 1];
	st = const_i64(s, 1, dims, rank, &shape);
	for (uint32_t k = 0; !st && k < n;) {
		uint32_t chunk = n - k < COP_MAX_IO - 1 ? n - k : COP_MAX_IO - 1, ni = 0;
		int32_t in[COP_MAX_IO];
		struct vnpu_node *cat;

		if (acc >= 0)
			in[ni++] = acc;
		for (uint32_t j = 0; !st && j < chunk; j++, k++) {
			struct vnpu_node *rs;
			int32_t rin[2] = { parts[(size_t)(reverse ? n - 1 - k : k) * stride], shape };

			st = cs_add_synth(s, "Reshape", like, 2, 1, &rs);
			if (!st)
				st = add_synth(s, rs, rin, &in[ni++]);
		}
		if (!st)
			st = cs_add_synth(s, "Concat", like, ni, 1, &cat);
		if (!st)
			st = set_axis(cat, axis);
		if (!st)
			st = add_synth(s, cat, in, &acc);
	}
	if (!st)
		*out = acc;
	return st;
}

static vnpu_status walk_graph(struct cstate *s, struct walk *w, const struct vnpu_graph *g);

/* Values each iteration of a loop needs kept: the carried ones, and the
 * scan outputs of every iteration. */
struct unroll {
	const struct vnpu_node *n;
	const struct vnpu_graph *body;
	uint32_t first_out;		/* body outputs before the carried ones */
	uint32_t num_carried, num_scan;
	int32_t *carried;
	int32_t *scans;			/* [iters][num_scan] */
	uint32_t iters, cap;
};

/* One iteration: the body instantiated on @in (its inputs' values). */
static vnpu_status unroll_once(struct cstate *s, struct walk *w, struct unroll *u,
			       const int32_t *in)
{
	const int32_t *outs = u->body->outputs + u->first_out;
	vnpu_status st;

	if (u->iters >= VNPU_MAX_LOOP_ITERS ||
	    w->unrolled + u->body->num_nodes > VNPU_MAX_UNROLLED_NODES)
		return vnpu_error(VNPU_UNSUPPORTED,
				  "node '%s' (%s): unrolling it takes more than %d iterations or %d nodes",
				  u->n->name, u->n->op, VNPU_MAX_LOOP_ITERS, VNPU_MAX_UNROLLED_NODES);
	w->unrolled += u->body->num_nodes;
	for (uint32_t k = 0; k < u->body->num_inputs; k++)
		w->map[u->body->inputs[k]] = in[k];
	w->depth++;
	st = walk_graph(s, w, u->body);
	w->depth--;
	if (st)
		return st;
	if (u->iters == u->cap) {
		uint32_t cap = u->cap ? u->cap * 2 : 16;
		int32_t *p = realloc(u->scans, (size_t)cap * (u->num_scan + 1) * sizeof(*p));

		if (!p)
			return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
		u->scans = p;
		u->cap = cap;
	}
	for (uint32_t k = 0; k < u->num_scan; k++)
		u->scans[(size_t)u->iters * u->num_scan + k] = w->map[outs[u->num_carried + k]];
	for (uint32_t k = 0; k < u->num_carried; k++)
		u->carried[k] = w->map[outs[k]];
	u->iters++;
	return VNPU_OK;
}

/* The node's outputs: the carried values, then the scan outputs stacked. */
static vnpu_status unroll_outputs(struct cstate *s, struct walk *w, struct unroll *u,
				  const int32_t *node_outs, const int64_t *axes,
				  const bool *reverse, int32_t *results)
{
	for (uint32_t k = 0; k < u->num_carried; k++)
		results[k] = u->carried[k];
	for (uint32_t k = 0; k < u->num_scan; k++) {
		vnpu_status st;

		results[u->num_carried + k] = -1;
		if (node_outs[u->num_carried + k] < 0)
			continue;
		if (!u->iters)
			return vnpu_error(VNPU_UNSUPPORTED, "node '%s' (%s): scan outputs of no iterations",
					  u->n->name, u->n->op);
		st = stack_values(s, u->n, &u->scans[k], u->iters, u->num_scan, axes ? axes[k] : 0,
				  reverse && reverse[k], &results[u->num_carried + k]);
		if (st)
			return st;
	}
	(void)w;
	return VNPU_OK;
}

static vnpu_status unroll_init(struct unroll *u, const struct vnpu_node *n,
			       const struct vnpu_graph *body, uint32_t first_out,
			       uint32_t num_carried, const int32_t *init)
{
	memset(u, 0, sizeof(*u));
	u->n = n;
	u->body = body;
	u->first_out = first_out;
	u->num_carried = num_carried;
	u->num_scan = body->num_outputs - first_out - num_carried;
	u->carried = malloc((num_carried + 1) * sizeof(int32_t));
	if (!u->carried)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	if (num_carried)
		memcpy(u->carried, init, num_carried * sizeof(int32_t));
	return VNPU_OK;
}

static void unroll_fini(struct unroll *u)
{
	free(u->carried);
	free(u->scans);
}

/* A scalar constant (i64 or bool) for a body input. */
static vnpu_status const_scalar(struct cstate *s, vnpu_element_type type, int64_t v, int32_t *out)
{
	void *data = malloc(8);

	if (!data)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	if (type == VNPU_TYPE_BOOL)
		*(uint8_t *)data = v != 0;
	else
		*(int64_t *)data = v;
	return cs_add_const(s, type, 0, NULL, data, out);
}

/*
 * Loop: the trip count and the condition must be known at compile time
 * (constants, or folded from them), and the body's condition after every
 * iteration too; the body is then instantiated once per iteration.
 */
static vnpu_status unroll_loop(struct cstate *s, struct walk *w, const struct vnpu_node *n,
			       const int32_t *in, int32_t *results)
{
	const struct vnpu_attr *ba = vnpu_node_attr(n, "body");
	const struct vnpu_graph *body = ba ? ba->g : NULL;
	int64_t trip = -1;
	bool go = true;
	struct unroll u;
	int32_t *bin;
	vnpu_status st;

	if (!body || n->num_inputs < 2 || body->num_inputs != n->num_inputs ||
	    body->num_outputs != n->num_outputs + 1)
		return vnpu_error(VNPU_PARSE_ERROR, "node '%s' (Loop): its body does not match its inputs and outputs",
				  n->name);
	if (in[0] >= 0 && !cs_is_const(s, in[0]))
		return vnpu_error(VNPU_UNSUPPORTED,
				  "node '%s' (Loop): the trip count is not known at compile time (loops are unrolled)",
				  n->name);
	if (in[1] >= 0 && !cs_is_const(s, in[1]))
		return vnpu_error(VNPU_UNSUPPORTED,
				  "node '%s' (Loop): condition depends on runtime values (not known at compile time)",
				  n->name);
	if (in[0] >= 0)
		trip = vnpu_elem_get_i(s->vals[in[0]].info.data, s->vals[in[0]].info.type, 0);
	if (in[1] >= 0)
		go = vnpu_elem_get_i(s->vals[in[1]].info.data, s->vals[in[1]].info.type, 0) != 0;
	if (go && (trip > VNPU_MAX_LOOP_ITERS ||
		   (trip > 0 && (uint64_t)trip * body->num_nodes > VNPU_MAX_UNROLLED_NODES)))
		return vnpu_error(VNPU_UNSUPPORTED,
				  "node '%s' (Loop): unrolling %lld iterations of %u nodes is above the limit (%d iterations, %d nodes)",
				  n->name, (long long)trip, body->num_nodes, VNPU_MAX_LOOP_ITERS,
				  VNPU_MAX_UNROLLED_NODES);
	bin = malloc((n->num_inputs + 1) * sizeof(int32_t));
	st = bin ? unroll_init(&u, n, body, 1, n->num_inputs - 2, in + 2) :
	     vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	for (int64_t i = 0; !st && go && (trip < 0 || i < trip); i++) {
		int32_t cond;

		st = const_scalar(s, VNPU_TYPE_I64, i, &bin[0]);
		if (!st)
			st = const_scalar(s, VNPU_TYPE_BOOL, 1, &bin[1]);
		if (st)
			break;
		memcpy(bin + 2, u.carried, u.num_carried * sizeof(int32_t));
		st = unroll_once(s, w, &u, bin);
		if (st)
			break;
		cond = w->map[body->outputs[0]];
		if (!cs_is_const(s, cond)) {
			st = vnpu_error(VNPU_UNSUPPORTED,
					"node '%s' (Loop): condition depends on runtime values (iteration %lld)",
					n->name, (long long)i);
			break;
		}
		go = vnpu_elem_get_i(s->vals[cond].info.data, s->vals[cond].info.type, 0) != 0;
	}
	if (!st)
		st = unroll_outputs(s, w, &u, n->outputs, NULL, NULL, results);
	if (bin)
		unroll_fini(&u);
	free(bin);
	return st;
}

/* Scan's per-input and per-output axes and directions. */
struct scan_axes {
	int64_t in_axis[COP_MAX_IO], out_axis[COP_MAX_IO];
	bool in_rev[COP_MAX_IO], out_rev[COP_MAX_IO];
};

static void read_axes(const struct vnpu_node *n, const char *axes, const char *dirs, uint32_t num,
		      int64_t *axis, bool *rev)
{
	const struct vnpu_attr *a = vnpu_node_attr(n, axes), *d = vnpu_node_attr(n, dirs);

	for (uint32_t k = 0; k < num; k++) {
		axis[k] = a && a->type == VNPU_ATTR_INTS && k < a->n ? a->ints[k] : 0;
		rev[k] = d && d->type == VNPU_ATTR_INTS && k < d->n && d->ints[k];
	}
}

/* One scan of @states over the slices of @xs along their axes. */
static vnpu_status scan_values(struct cstate *s, struct walk *w, const struct vnpu_node *n,
			       const struct scan_axes *sa, uint32_t ns, uint32_t nx,
			       const int32_t *states, const int32_t *xs, int32_t *results)
{
	const struct vnpu_graph *body = vnpu_node_attr(n, "body")->g;
	int64_t steps = -1, axis[COP_MAX_IO];
	int32_t bin[2 * COP_MAX_IO];
	struct unroll u;
	vnpu_status st = unroll_init(&u, n, body, 0, ns, states);

	for (uint32_t j = 0; !st && j < nx; j++) {
		const struct vnpu_tinfo *x = &s->vals[xs[j]].info;

		axis[j] = sa->in_axis[j] < 0 ? sa->in_axis[j] + x->rank : sa->in_axis[j];
		if (!vnpu_tinfo_static(x) || axis[j] < 0 || axis[j] >= x->rank)
			st = vnpu_error(VNPU_UNSUPPORTED,
					"node '%s' (Scan): the steps of scan input %u are not known at compile time",
					n->name, j);
		else
			steps = x->dims[axis[j]];
	}
	for (int64_t t = 0; !st && t < steps; t++) {
		memcpy(bin, u.carried, ns * sizeof(int32_t));
		for (uint32_t j = 0; !st && j < nx; j++)
			st = pick_value(s, n, xs[j], axis[j], sa->in_rev[j] ? steps - 1 - t : t,
					&bin[ns + j]);
		if (!st)
			st = unroll_once(s, w, &u, bin);
	}
	if (!st)
		st = unroll_outputs(s, w, &u, n->outputs + (n->num_outputs - body->num_outputs),
				    sa->out_axis, sa->out_rev, results);
	unroll_fini(&u);
	return st;
}

/* Scan: opset 8 scans each batch (axis 0) and stacks the batches. */
static vnpu_status unroll_scan(struct cstate *s, struct walk *w, const struct vnpu_node *n,
			       const int32_t *in, int32_t *results)
{
	const struct vnpu_attr *ba = vnpu_node_attr(n, "body");
	uint32_t first = s->m->opset < 9 ? 1 : 0, no = n->num_outputs, ns, nx;
	int64_t batch;
	struct scan_axes sa;
	int32_t *res, *bin;
	vnpu_status st = VNPU_OK;

	nx = (uint32_t)vnpu_attr_int(n, "num_scan_inputs", 0);
	if (!ba || !ba->g || !nx || nx > n->num_inputs - first ||
	    ba->g->num_inputs != n->num_inputs - first || ba->g->num_outputs != no)
		return vnpu_error(VNPU_PARSE_ERROR, "node '%s' (Scan): its body does not match its inputs and outputs",
				  n->name);
	ns = n->num_inputs - first - nx;
	read_axes(n, "scan_input_axes", first ? "directions" : "scan_input_directions", nx,
		  sa.in_axis, sa.in_rev);
	read_axes(n, "scan_output_axes", "scan_output_directions", no - ns, sa.out_axis, sa.out_rev);
	if (!first)
		return scan_values(s, w, n, &sa, ns, nx, in, in + ns, results);
	if (in[0] >= 0)
		return vnpu_error(VNPU_UNSUPPORTED, "node '%s' (Scan): sequence_lens is not supported",
				  n->name);
	batch = s->vals[in[1]].info.rank > 0 ? s->vals[in[1]].info.dims[0] : -1;
	if (batch < 1 || batch > VNPU_MAX_LOOP_ITERS)
		return vnpu_error(VNPU_UNSUPPORTED, "node '%s' (Scan): a batch of %lld",
				  n->name, (long long)batch);
	res = malloc((size_t)batch * no * sizeof(int32_t));
	bin = malloc((ns + nx + 1) * sizeof(int32_t));
	if (!res || !bin)
		st = vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	for (int64_t b = 0; !st && b < batch; b++) {
		for (uint32_t k = 0; !st && k < ns + nx; k++)
			st = pick_value(s, n, in[1 + k], 0, b, &bin[k]);
		if (!st)
			st = scan_values(s, w, n, &sa, ns, nx, bin, bin + ns, &res[b * no]);
	}
	for (uint32_t k = 0; !st && k < no; k++)
		st = n->outputs[k] < 0 ? VNPU_OK :
		     stack_values(s, n, &res[k], (uint32_t)batch, no, 0, false, &results[k]);
	free(res);
	free(bin);
	return st;
}

/* ---- sequences and optionals, resolved at compile time ---- */

static bool is_tensor(const struct cstate *s, int32_t v)
{
	return v < 0 || s->vals[v].info.kind == VNPU_TK_TENSOR;
}

/* A new working value: the sequence of the @n values @elems, or NONE. */
static vnpu_status new_sequence(struct cstate *s, enum vnpu_tkind kind, vnpu_element_type type,
				const int32_t *elems, uint32_t n, uint32_t stride, int32_t *out)
{
	int32_t *e = malloc((n + 1) * sizeof(int32_t));
	struct vnpu_tinfo *t;
	vnpu_status st;

	if (!e)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	for (uint32_t i = 0; i < n; i++)
		e[i] = elems[(size_t)i * stride];
	st = cs_add_temp(s, type, 0, NULL, out);
	if (st) {
		free(e);
		return st;
	}
	t = &s->vals[*out].info;
	t->rank = -1;
	t->kind = kind;
	t->num_elems = (int32_t)n;
	t->elems = e;
	t->owns_data = true;
	return VNPU_OK;
}

static vnpu_status seq_error(const struct vnpu_node *n, const char *what)
{
	return vnpu_error(VNPU_UNSUPPORTED, "node '%s' (%s): %s", n->name, n->op, what);
}

/* Input @i of @n as a sequence of a length known at compile time. */
static vnpu_status need_seq(const struct cstate *s, const struct vnpu_node *n, const int32_t *in,
			    uint32_t i, const struct vnpu_tinfo **out)
{
	const struct vnpu_tinfo *t = i < n->num_inputs && in[i] >= 0 ? &s->vals[in[i]].info : NULL;

	if (!t || t->kind != VNPU_TK_SEQUENCE || t->num_elems < 0)
		return seq_error(n, "input is not a sequence whose length is known at compile time (sequences must be constant or built in the graph: their length is not known at compile time)");
	*out = t;
	return VNPU_OK;
}

/* Position input @i (absent: @dflt) into [0, @len] (@end: @len allowed). */
static vnpu_status seq_position(const struct cstate *s, const struct vnpu_node *n,
				const int32_t *in, uint32_t i, int64_t len, int64_t dflt, bool end,
				int64_t *out)
{
	int64_t p = dflt;

	if (i < n->num_inputs && in[i] >= 0) {
		const struct vnpu_tinfo *t = &s->vals[in[i]].info;

		if (!cs_is_const(s, in[i]) || vnpu_tinfo_elems(t) != 1 || vnpu_type_is_float(t->type))
			return seq_error(n, "the position is not a constant integer: not known at compile time");
		p = vnpu_elem_get_i(t->data, t->type, 0);
	}
	if (p < 0)
		p += len;
	if (p < 0 || p > len || (p == len && !end))
		return vnpu_error(VNPU_INVALID_ARGUMENT, "node '%s' (%s): position %lld out of range for a sequence of %lld",
				  n->name, n->op, (long long)(i < n->num_inputs && in[i] >= 0 ? p : dflt),
				  (long long)len);
	*out = p;
	return VNPU_OK;
}

/* SequenceInsert and SequenceErase: a new sequence with @t inserted at, or
 * the element at, the position. */
static vnpu_status seq_edit(struct cstate *s, const struct vnpu_node *n, const int32_t *in,
			    bool insert, int32_t *out)
{
	const struct vnpu_tinfo *q;
	int32_t *e;
	int64_t pos, len;
	vnpu_status st = need_seq(s, n, in, 0, &q);

	if (st)
		return st;
	len = q->num_elems;
	if (insert && (n->num_inputs < 2 || in[1] < 0 || !is_tensor(s, in[1])))
		return vnpu_error(VNPU_PARSE_ERROR, "node '%s' (%s): needs a tensor to insert",
				  n->name, n->op);
	st = seq_position(s, n, in, insert ? 2 : 1, len, insert ? len : -1, insert, &pos);
	if (st)
		return st;
	e = malloc(((size_t)len + 2) * sizeof(int32_t));
	if (!e)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	memcpy(e, q->elems, (size_t)pos * sizeof(int32_t));
	if (insert) {
		e[pos] = in[1];
		memcpy(e + pos + 1, q->elems + pos, (size_t)(len - pos) * sizeof(int32_t));
		len++;
	} else {
		memcpy(e + pos, q->elems + pos + 1, (size_t)(len - pos - 1) * sizeof(int32_t));
		len--;
	}
	st = new_sequence(s, VNPU_TK_SEQUENCE, q->type, e, (uint32_t)len, 1, out);
	free(e);
	return st;
}

/* Concatenate the values @parts along @axis (Concat, COP_MAX_IO at a time). */
static vnpu_status concat_values(struct cstate *s, const struct vnpu_node *like,
				 const int32_t *parts, uint32_t n, int64_t axis, int32_t *out)
{
	int32_t acc = -1;
	vnpu_status st = VNPU_OK;

	for (uint32_t k = 0; !st && k < n;) {
		uint32_t ni = 0;
		int32_t in[COP_MAX_IO];
		struct vnpu_node *cat;

		if (acc >= 0)
			in[ni++] = acc;
		while (ni < COP_MAX_IO && k < n)
			in[ni++] = parts[k++];
		st = cs_add_synth(s, "Concat", like, ni, 1, &cat);
		if (!st)
			st = set_axis(cat, axis);
		if (!st)
			st = add_synth(s, cat, in, &acc);
	}
	if (!st)
		*out = acc;
	return st;
}

/* A Slice of @x to [@begin, @end) along @axis. */
static vnpu_status slice_value(struct cstate *s, const struct vnpu_node *like, int32_t x,
			       int64_t axis, int64_t begin, int64_t end, int32_t *out)
{
	struct vnpu_node *n;
	int32_t in[4] = { x, -1, -1, -1 };
	vnpu_status st = cs_add_synth(s, "Slice", like, 4, 1, &n);

	if (!st)
		st = const_i64(s, 1, &begin, 1, &in[1]);
	if (!st)
		st = const_i64(s, 1, &end, 1, &in[2]);
	if (!st)
		st = const_i64(s, 1, &axis, 1, &in[3]);
	return st ? st : add_synth(s, n, in, out);
}

/* SplitToSequence: pieces of 1 (keepdims 0: without the axis), of the
 * scalar split, or of the sizes a 1-D split lists. */
static vnpu_status seq_split(struct cstate *s, const struct vnpu_node *n, const int32_t *in,
			     int32_t *out)
{
	const struct vnpu_tinfo *x = &s->vals[in[0]].info, *sp = NULL;
	int64_t axis = vnpu_attr_int(n, "axis", 0), len, chunk = 1, begin = 0;
	bool keep = vnpu_attr_int(n, "keepdims", 1) != 0, sizes = false;
	int32_t *parts = NULL;
	uint32_t np = 0;
	vnpu_status st = VNPU_OK;

	if (!vnpu_tinfo_static(x))
		return seq_error(n, "the input's shape is not known at compile time");
	if (axis < 0)
		axis += x->rank;
	if (axis < 0 || axis >= x->rank)
		return vnpu_error(VNPU_PARSE_ERROR, "node '%s' (SplitToSequence): axis out of range",
				  n->name);
	len = x->dims[axis];
	if (n->num_inputs > 1 && in[1] >= 0) {
		sp = &s->vals[in[1]].info;
		if (!cs_is_const(s, in[1]) || sp->rank > 1 || vnpu_type_is_float(sp->type))
			return seq_error(n, "split is not a constant integer tensor: not known at compile time");
		sizes = sp->rank == 1;
		chunk = sizes ? 0 : vnpu_elem_get_i(sp->data, sp->type, 0);
		keep = true;
		if (!sizes && chunk < 1)
			return vnpu_error(VNPU_PARSE_ERROR, "node '%s' (SplitToSequence): split %lld",
					  n->name, (long long)chunk);
	}
	parts = malloc(((size_t)(sizes ? sp->dims[0] : len) + 1) * sizeof(int32_t));
	if (!parts)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	while (!st && (sizes ? np < (uint32_t)sp->dims[0] : begin < len)) {
		int64_t size = sizes ? vnpu_elem_get_i(sp->data, sp->type, np) : chunk;

		if (size < 0 || begin + size > len) {
			st = vnpu_error(VNPU_PARSE_ERROR, "node '%s' (SplitToSequence): the split sizes do not fit dimension %lld",
					n->name, (long long)len);
			break;
		}
		if (size > len - begin)
			size = len - begin;
		if (!keep)
			st = pick_value(s, n, in[0], axis, begin, &parts[np++]);
		else
			st = slice_value(s, n, in[0], axis, begin, begin + size, &parts[np++]);
		begin += size;
	}
	if (!st && sizes && begin != len)
		st = vnpu_error(VNPU_PARSE_ERROR, "node '%s' (SplitToSequence): the split sizes add up to %lld, not %lld",
				n->name, (long long)begin, (long long)len);
	if (!st)
		st = new_sequence(s, VNPU_TK_SEQUENCE, x->type, parts, np, 1, out);
	free(parts);
	return st;
}

/* SequenceMap: the body once per element of the first input (sequence
 * inputs give their element, tensors themselves); each output a sequence. */
static vnpu_status seq_map(struct cstate *s, struct walk *w, const struct vnpu_node *n,
			   const int32_t *in, int32_t *res)
{
	const struct vnpu_attr *ba = vnpu_node_attr(n, "body");
	const struct vnpu_tinfo *q;
	int32_t bin[COP_MAX_IO];
	struct unroll u;
	vnpu_status st = need_seq(s, n, in, 0, &q);

	if (st)
		return st;
	if (!ba || !ba->g || ba->g->num_inputs != n->num_inputs ||
	    ba->g->num_outputs != n->num_outputs)
		return vnpu_error(VNPU_PARSE_ERROR, "node '%s' (SequenceMap): its body does not match its inputs and outputs",
				  n->name);
	for (uint32_t j = 1; j < n->num_inputs; j++)
		if (in[j] < 0 || (!is_tensor(s, in[j]) &&
				  s->vals[in[j]].info.num_elems != q->num_elems))
			return vnpu_error(VNPU_INVALID_ARGUMENT, "node '%s' (SequenceMap): input %u is absent or a sequence of another length",
					  n->name, j);
	st = unroll_init(&u, n, ba->g, 0, 0, NULL);
	for (int32_t i = 0; !st && i < q->num_elems; i++) {
		for (uint32_t j = 0; j < n->num_inputs; j++)
			bin[j] = is_tensor(s, in[j]) ? in[j] : s->vals[in[j]].info.elems[i];
		st = unroll_once(s, w, &u, bin);
	}
	for (uint32_t k = 0; !st && k < n->num_outputs; k++) {
		vnpu_element_type type = u.iters ? s->vals[u.scans[k]].info.type : VNPU_TYPE_UNDEFINED;

		st = new_sequence(s, VNPU_TK_SEQUENCE, type, u.scans ? &u.scans[k] : NULL, u.iters,
				  u.num_scan, &res[k]);
	}
	unroll_fini(&u);
	return st;
}

static bool is_sequence_op(const char *op)
{
	static const char *const ops[] = {
		"SequenceEmpty", "SequenceConstruct", "SequenceInsert", "SequenceAt",
		"SequenceErase", "SequenceLength", "ConcatFromSequence", "SplitToSequence",
		"SequenceMap", "Optional", "OptionalHasElement", "OptionalGetElement",
	};

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strcmp(op, ops[i]))
			return true;
	return false;
}

/* The ops of sequences and optionals: their outputs become working values
 * built here (sequences of values, NONE, constants), never device work. */
static vnpu_status walk_sequence_op(struct cstate *s, struct walk *w, const struct vnpu_node *n,
				    const int32_t *in)
{
	const char *op = n->op;
	const struct vnpu_tinfo *q = NULL;
	int32_t res[COP_MAX_IO];
	int64_t pos;
	vnpu_status st = VNPU_OK;

	res[0] = -1;
	if (!strcmp(op, "SequenceEmpty")) {
		st = new_sequence(s, VNPU_TK_SEQUENCE,
				  (vnpu_element_type)vnpu_attr_int(n, "dtype", VNPU_TYPE_F32), NULL, 0, 1,
				  &res[0]);
	} else if (!strcmp(op, "SequenceConstruct")) {
		for (uint32_t i = 0; !st && i < n->num_inputs; i++)
			if (in[i] < 0 || !is_tensor(s, in[i]) ||
			    s->vals[in[i]].info.type != s->vals[in[0]].info.type)
				st = vnpu_error(VNPU_PARSE_ERROR, "node '%s' (SequenceConstruct): input %u is not a tensor of the first's type",
						n->name, i);
		if (!st && !n->num_inputs)
			st = vnpu_error(VNPU_PARSE_ERROR, "node '%s' (SequenceConstruct): no inputs", n->name);
		if (!st)
			st = new_sequence(s, VNPU_TK_SEQUENCE, s->vals[in[0]].info.type, in,
					  n->num_inputs, 1, &res[0]);
	} else if (!strcmp(op, "SequenceInsert") || !strcmp(op, "SequenceErase")) {
		st = seq_edit(s, n, in, !strcmp(op, "SequenceInsert"), &res[0]);
	} else if (!strcmp(op, "SequenceAt")) {
		st = need_seq(s, n, in, 0, &q);
		if (!st && (n->num_inputs < 2 || in[1] < 0))
			st = vnpu_error(VNPU_PARSE_ERROR, "node '%s' (SequenceAt): no position", n->name);
		if (!st)
			st = seq_position(s, n, in, 1, q->num_elems, 0, false, &pos);
		if (!st)
			res[0] = q->elems[pos];
	} else if (!strcmp(op, "SequenceLength")) {
		st = need_seq(s, n, in, 0, &q);
		if (!st)
			st = const_scalar(s, VNPU_TYPE_I64, q->num_elems, &res[0]);
	} else if (!strcmp(op, "ConcatFromSequence")) {
		st = need_seq(s, n, in, 0, &q);
		if (!st && !q->num_elems)
			st = vnpu_error(VNPU_INVALID_ARGUMENT, "node '%s' (ConcatFromSequence): an empty sequence",
					n->name);
		if (!st && vnpu_attr_int(n, "new_axis", 0))
			st = stack_values(s, n, q->elems, (uint32_t)q->num_elems, 1,
					  vnpu_attr_int(n, "axis", 0), false, &res[0]);
		else if (!st)
			st = concat_values(s, n, q->elems, (uint32_t)q->num_elems,
					   vnpu_attr_int(n, "axis", 0), &res[0]);
	} else if (!strcmp(op, "SplitToSequence")) {
		st = n->num_inputs && in[0] >= 0 && is_tensor(s, in[0]) ? seq_split(s, n, in, &res[0]) :
		     vnpu_error(VNPU_PARSE_ERROR, "node '%s' (SplitToSequence): needs a tensor", n->name);
	} else if (!strcmp(op, "SequenceMap")) {
		st = seq_map(s, w, n, in, res);
	} else if (!strcmp(op, "Optional")) {
		if (n->num_inputs && in[0] >= 0)
			res[0] = in[0];
		else
			st = new_sequence(s, VNPU_TK_NONE, VNPU_TYPE_UNDEFINED, NULL, 0, 1, &res[0]);
	} else if (!strcmp(op, "OptionalHasElement")) {
		st = const_scalar(s, VNPU_TYPE_BOOL, n->num_inputs && in[0] >= 0 &&
			       s->vals[in[0]].info.kind != VNPU_TK_NONE, &res[0]);
	} else {	/* OptionalGetElement, Identity of a sequence or NONE */
		if (!n->num_inputs || in[0] < 0 || s->vals[in[0]].info.kind == VNPU_TK_NONE)
			st = vnpu_error(VNPU_INVALID_ARGUMENT, "node '%s' (%s): the optional has no value",
					n->name, op);
		else
			res[0] = in[0];
	}
	for (uint32_t k = 0; !st && k < n->num_outputs; k++)
		if (n->outputs[k] >= 0)
			w->map[n->outputs[k]] = res[k];
	return st;
}

static vnpu_status walk_node(struct cstate *s, struct walk *w, const struct vnpu_node *n);

/*
 * If: a known condition walks only its branch. In the main graph each
 * output is a select (the passes make it a view when the condition is
 * known); in a body a known branch's values are used directly.
 */
static vnpu_status walk_if(struct cstate *s, struct walk *w, const struct vnpu_node *n,
			   const int32_t *in)
{
	const struct vnpu_attr *tb = vnpu_node_attr(n, "then_branch");
	const struct vnpu_attr *eb = vnpu_node_attr(n, "else_branch");
	int32_t cond = in[0];
	bool known = cs_is_const(s, cond);
	bool take_then = known && *(const uint8_t *)s->vals[cond].info.data;
	vnpu_status st = VNPU_OK;

	if (!tb || !eb || !tb->g || !eb->g || tb->g->num_outputs < n->num_outputs ||
	    eb->g->num_outputs < n->num_outputs)
		return vnpu_error(VNPU_PARSE_ERROR, "node '%s' (If): no branches", n->name);
	if (!known || take_then)
		st = walk_graph(s, w, tb->g);
	if (!st && (!known || !take_then))
		st = walk_graph(s, w, eb->g);
	for (uint32_t o = 0; !st && o < n->num_outputs; o++) {
		int32_t t = w->map[tb->g->outputs[o]], e = w->map[eb->g->outputs[o]];
		int32_t out = n->outputs[o];
		struct cop *op;

		if (out < 0)
			continue;
		if (known && (w->depth || !is_tensor(s, take_then ? t : e))) {
			w->map[out] = take_then ? t : e;
			continue;
		}
		if (!is_tensor(s, t) || !is_tensor(s, e))
			return vnpu_error(VNPU_UNSUPPORTED,
					  "node '%s' (If): a sequence or optional output and a condition not known at compile time",
					  n->name);
		if (w->depth) {
			const struct vnpu_tinfo *ti = &s->vals[t].info, *ei = &s->vals[e].info;

			if (ti->type != ei->type || ti->rank != ei->rank || ti->rank < 0 ||
			    memcmp(ti->dims, ei->dims, (size_t)ti->rank * sizeof(ti->dims[0])))
				return vnpu_error(VNPU_UNSUPPORTED,
						  "node '%s' (If): in a loop body, branches of different types or shapes",
						  n->name);
			st = cs_add_temp(s, ti->type, ti->rank, ti->dims, &out);
			if (st)
				return st;
			w->map[n->outputs[o]] = out;
		}
		st = cs_add_op(s, &op);
		if (st)
			return st;
		op->kind = COP_SELECT;
		op->node = n;
		op->num_in = 3;
		op->in[0] = cond;
		op->in[1] = t;
		op->in[2] = e;
		op->num_out = 1;
		op->out[0] = out;
		snprintf(op->type, sizeof(op->type), "If");
	}
	return st;
}

/* Loop and Scan: unrolled; their outputs are the last iteration's values. */
static vnpu_status walk_loop(struct cstate *s, struct walk *w, const struct vnpu_node *n,
			     const int32_t *in)
{
	int32_t res[COP_MAX_IO];
	vnpu_status st;

	st = !strcmp(n->op, "Loop") ? unroll_loop(s, w, n, in, res) : unroll_scan(s, w, n, in, res);
	if (st == VNPU_UNSUPPORTED && s->query && !w->depth)
		return add_op(s, n, in, n->outputs);	/* reported by op type */
	for (uint32_t k = 0; !st && k < n->num_outputs; k++)
		if (n->outputs[k] >= 0)
			w->map[n->outputs[k]] = res[k];
	return st;
}

static vnpu_status walk_node(struct cstate *s, struct walk *w, const struct vnpu_node *n)
{
	int32_t in[COP_MAX_IO], out[COP_MAX_IO];
	bool remapped = false;
	vnpu_status st = VNPU_OK;

	if (n->num_inputs > COP_MAX_IO || n->num_outputs > COP_MAX_IO) {
		if (!w->depth && outputs_folded(s, n->outputs, n->num_outputs))
			return VNPU_OK;
		return vnpu_error(VNPU_UNSUPPORTED, "node '%s' (%s): more than %d inputs or outputs",
				  n->name, n->op, COP_MAX_IO);
	}
	for (uint32_t k = 0; k < n->num_inputs; k++) {
		in[k] = n->inputs[k] >= 0 ? w->map[n->inputs[k]] : -1;
		remapped |= in[k] != n->inputs[k];
	}
	if (!w->depth && !remapped && outputs_folded(s, n->outputs, n->num_outputs))
		return VNPU_OK;
	if (!n->domain[0] && !strcmp(n->op, "If"))
		return walk_if(s, w, n, in);
	if (!n->domain[0] && (is_sequence_op(n->op) ||
			      (!strcmp(n->op, "Identity") && n->num_inputs && !is_tensor(s, in[0]))))
		return walk_sequence_op(s, w, n, in);
	for (uint32_t k = 0; k < n->num_inputs; k++)
		if (!is_tensor(s, in[k]) && strcmp(n->op, "Loop"))
			return vnpu_error(VNPU_UNSUPPORTED, "node '%s' (%s): input %u is a sequence or an optional",
					  n->name, n->op, k);
	if (!n->domain[0] && (!strcmp(n->op, "Loop") || !strcmp(n->op, "Scan")))
		return walk_loop(s, w, n, in);
	memcpy(out, n->outputs, n->num_outputs * sizeof(int32_t));
	if (w->depth)
		st = fresh_outputs(s, w, n, out);
	/* In the main graph, inference ran before; again where it could not
	 * see the values (those of loops, sequences, or an If's branch). */
	if (!st && (w->depth || remapped ||
		    (n->num_outputs && out[0] >= 0 &&
		     s->vals[out[0]].info.type == VNPU_TYPE_UNDEFINED)))
		st = infer_ids(s, n, in, out);
	return st ? st : add_op(s, n, in, out);
}

static vnpu_status walk_graph(struct cstate *s, struct walk *w, const struct vnpu_graph *g)
{
	for (uint32_t i = 0; i < g->num_nodes; i++) {
		uint32_t first = s->num_ops;
		vnpu_status st = walk_node(s, w, &g->nodes[i]);

		if (st)
			return st;
		/* Queries answer for the main graph's nodes: a loop's or a
		 * branch's ops count as their node's. */
		for (uint32_t k = first; g == &s->m->main && k < s->num_ops; k++)
			s->ops[k].root = &g->nodes[i];
	}
	return VNPU_OK;
}

static vnpu_status check_input_static(const struct vnpu_value *v)
{
	char buf[128];

	if (!vnpu_tinfo_static(&v->info))
		return vnpu_error(VNPU_INVALID_ARGUMENT,
				  "input '%s' is %s: set its dynamic dimensions with reshape before compiling",
				  v->name, vnpu_tinfo_str(&v->info, buf, sizeof(buf)));
	return VNPU_OK;
}

static vnpu_status check_inputs_static(const struct cstate *s)
{
	const struct vnpu_model *m = s->m;
	vnpu_status st = VNPU_OK;

	for (uint32_t i = 0; !st && i < m->main.num_inputs; i++) {
		const struct vnpu_value *v = &m->values[m->main.inputs[i]];

		if (v->info.kind == VNPU_TK_SEQUENCE && v->info.num_elems < 0)
			return vnpu_error(VNPU_INVALID_ARGUMENT,
					  "input '%s' is a sequence: its length is not known at compile time (give it with vnpu_model_reshape_sequence or freeze it with vnpu_model_freeze_sequence)",
					  v->name);
		if (v->info.kind != VNPU_TK_SEQUENCE)
			st = check_input_static(v);
		for (int32_t e = 0; !st && v->info.kind == VNPU_TK_SEQUENCE && e < v->info.num_elems; e++)
			st = check_input_static(&m->values[v->info.elems[e]]);
	}
	return st;
}

/* The program's input ports: a model input each, a sequence input's
 * elements each (and a group). */
static vnpu_status add_inputs(struct cstate *s)
{
	const struct vnpu_model *m = s->m;
	uint32_t n = 0;

	for (uint32_t i = 0; i < m->main.num_inputs; i++) {
		const struct vnpu_tinfo *t = &m->values[m->main.inputs[i]].info;

		/* (A query takes a sequence of unknown length too.) */
		n += t->kind != VNPU_TK_SEQUENCE ? 1 : t->num_elems > 0 ? (uint32_t)t->num_elems : 0;
	}
	s->in_vals = malloc((n + 1) * sizeof(int32_t));
	if (!s->in_vals)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	for (uint32_t i = 0; i < m->main.num_inputs; i++) {
		const struct vnpu_value *v = &m->values[m->main.inputs[i]];
		struct vnpu_prog_group *g;

		if (v->info.kind != VNPU_TK_SEQUENCE) {
			s->in_vals[s->num_ins++] = m->main.inputs[i];
			continue;
		}
		g = realloc(s->groups, (s->num_groups + 1) * sizeof(*g));
		if (!g)
			return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
		s->groups = g;
		g = &s->groups[s->num_groups];
		memset(g, 0, sizeof(*g));
		g->name = strdup(v->name);
		if (!g->name)
			return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
		s->num_groups++;
		g->kind = VNPU_PORT_SEQUENCE;
		g->first = s->num_ins;
		g->count = v->info.num_elems > 0 ? (uint32_t)v->info.num_elems : 0;
		for (int32_t e = 0; e < v->info.num_elems; e++)
			s->in_vals[s->num_ins++] = v->info.elems[e];
	}
	return VNPU_OK;
}

/* Output port @name written from working value @val: a copy when @val is
 * an input, a constant or another output already. */
static vnpu_status add_port(struct cstate *s, const char *name, int32_t val)
{
	const struct vnpu_model *m = s->m;
	struct cval *v = &s->vals[val];
	bool produced = (uint32_t)val >= m->num_values || m->values[val].kind == VNPU_VALUE_NODE;
	int32_t port = (int32_t)s->num_outs;
	vnpu_status st;
	struct cop *op;

	if (s->num_outs == s->cap_outs) {
		uint32_t cap = s->cap_outs ? s->cap_outs * 2 : 16;
		int32_t *vals = realloc(s->out_vals, cap * sizeof(*vals));
		char **names;

		if (vals)
			s->out_vals = vals;
		names = vals ? realloc(s->out_names, cap * sizeof(*names)) : NULL;
		if (!names)
			return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
		s->out_names = names;
		s->cap_outs = cap;
	}
	s->out_names[port] = strdup(name);
	if (!s->out_names[port])
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	s->out_vals[port] = val;
	s->num_outs++;
	if (v->out_index < 0 && produced && !v->info.data) {
		v->out_index = port;
		return VNPU_OK;
	}
	st = cs_add_op(s, &op);
	if (st)
		return st;
	op->kind = COP_OUTPUT;
	op->num_in = 1;
	op->in[0] = val;
	op->num_out = 0;
	op->out[0] = port;
	snprintf(op->type, sizeof(op->type), "Output");
	return VNPU_OK;
}

/* Model output @mv, held by working value @val: one port for a tensor, one
 * per element of a sequence ("<name>[<i>]"), none for NONE; a group for
 * the last two. */
static vnpu_status add_output(struct cstate *s, const struct vnpu_value *mv, int32_t val)
{
	const struct vnpu_tinfo *t = &s->vals[val].info;
	struct vnpu_prog_group *g, *groups;
	vnpu_status st = VNPU_OK;
	bool tensor_port = mv->port_kind == VNPU_PORT_TENSOR || mv->port_kind == VNPU_PORT_OPTIONAL;
	bool seq_port = mv->port_kind == VNPU_PORT_SEQUENCE ||
			mv->port_kind == VNPU_PORT_OPTIONAL_SEQUENCE;
	bool optional = mv->port_kind == VNPU_PORT_OPTIONAL ||
			mv->port_kind == VNPU_PORT_OPTIONAL_SEQUENCE;

	if (t->kind == VNPU_TK_TENSOR && tensor_port)
		return add_port(s, mv->name, val);
	if ((t->kind == VNPU_TK_SEQUENCE && !seq_port) || (t->kind == VNPU_TK_NONE && !optional) ||
	    (t->kind == VNPU_TK_TENSOR && !tensor_port))
		return vnpu_error(VNPU_PARSE_ERROR, "output '%s': its value does not have the declared kind",
				  mv->name);
	if (t->kind == VNPU_TK_SEQUENCE && t->num_elems < 0)
		return vnpu_error(VNPU_UNSUPPORTED, "output '%s': the sequence's length is not known at compile time",
				  mv->name);
	groups = realloc(s->groups, (s->num_groups + 1) * sizeof(*groups));
	if (!groups)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	s->groups = groups;
	g = &groups[s->num_groups];
	memset(g, 0, sizeof(*g));
	g->name = strdup(mv->name);
	if (!g->name)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	s->num_groups++;
	g->kind = t->kind == VNPU_TK_NONE ? VNPU_PORT_NONE : VNPU_PORT_SEQUENCE;
	g->is_output = 1;
	g->first = s->num_outs;
	for (int32_t i = 0; !st && t->kind == VNPU_TK_SEQUENCE && i < t->num_elems; i++) {
		char name[64];
		char *full;

		snprintf(name, sizeof(name), "[%d]", i);
		full = malloc(strlen(mv->name) + strlen(name) + 1);
		if (!full)
			return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
		strcat(strcpy(full, mv->name), name);
		st = add_port(s, full, t->elems[i]);
		free(full);
		t = &s->vals[val].info;		/* add_port may add values */
		s->groups[s->num_groups - 1].count++;
	}
	return st;
}

/* Values, inference with folding, ops. */
vnpu_status cs_build(struct cstate *s)
{
	const struct vnpu_model *m = s->m;
	struct walk w = { 0 };
	struct vnpu_tinfo *infos;
	vnpu_status st;
	int32_t idx;

	/* A query answers for dynamic inputs too (by op type where shapes
	 * are unknown); a compile needs them set. */
	st = s->query ? VNPU_OK : check_inputs_static(s);
	if (!st)
		st = add_inputs(s);
	if (st)
		return st;
	infos = calloc(m->num_values ? m->num_values : 1, sizeof(*infos));
	if (!infos)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	for (uint32_t v = 0; v < m->num_values; v++) {
		infos[v].rank = -1;
		if (m->values[v].kind == VNPU_VALUE_NODE)
			continue;
		infos[v] = m->values[v].info;
		infos[v].owns_data = false;
	}
	st = vnpu_graph_infer(m, &m->main, infos, COMPILE_FOLD_LIMIT, false);
	for (uint32_t v = 0; v < m->num_values; v++) {
		if (!st)
			st = cs_add_temp(s, VNPU_TYPE_UNDEFINED, 0, NULL, &idx);
		if (st) {
			vnpu_tinfo_clear(&infos[v]);
			continue;
		}
		s->vals[idx].info = infos[v];
		s->vals[idx].name = m->values[v].name;
	}
	free(infos);
	if (st)
		return st;
	w.map = malloc((m->num_values + 1) * sizeof(int32_t));
	if (!w.map)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	for (uint32_t v = 0; v < m->num_values; v++)
		w.map[v] = (int32_t)v;
	st = walk_graph(s, &w, &m->main);
	for (uint32_t o = 0; !st && o < m->main.num_outputs; o++)
		st = add_output(s, &m->values[m->main.outputs[o]], w.map[m->main.outputs[o]]);
	free(w.map);
	return st;
}

/* ---- fusion ---- */

/* The one live op reading @val, or NULL when none or several do (a view
 * of @val counts as another reader). */
static struct cop *sole_reader(struct cstate *s, int32_t val, uint32_t after)
{
	struct cop *found = NULL;

	if (s->vals[val].out_index >= 0)
		return NULL;
	for (uint32_t v = 0; v < s->num_vals; v++)
		if (s->vals[v].alias == val)
			return NULL;
	for (uint32_t i = 0; i < s->num_ops; i++) {
		struct cop *op = &s->ops[i];

		if (op->dead)
			continue;
		for (uint32_t k = 0; k < op->num_in; k++) {
			if (op->in[k] != val)
				continue;
			if (found || i <= after)
				return NULL;
			found = op;
			break;
		}
	}
	return found;
}

/* Index of the live op writing @val (or what @val views), or -1 (inputs
 * and constants). */
static int32_t producer(const struct cstate *s, int32_t val)
{
	for (uint32_t guard = 0; s->vals[val].alias >= 0 && guard < s->num_vals; guard++)
		val = s->vals[val].alias;
	for (uint32_t i = 0; i < s->num_ops; i++) {
		const struct cop *op = &s->ops[i];

		if (op->dead)
			continue;
		for (uint32_t k = 0; k < op->num_out; k++)
			if (op->out[k] == val)
				return (int32_t)i;
	}
	return -1;
}

static bool used(const struct cstate *s, int32_t val)
{
	if (val < 0)
		return false;
	if (s->vals[val].out_index >= 0)
		return true;
	for (uint32_t i = 0; i < s->num_ops; i++)
		for (uint32_t k = 0; !s->ops[i].dead && k < s->ops[i].num_in; k++)
			if (s->ops[i].in[k] == val)
				return true;
	return false;
}

static bool is_float_val(const struct cstate *s, int32_t v)
{
	return s->vals[v].info.type == VNPU_TYPE_F32;
}

static bool same_shape(const struct vnpu_tinfo *a, const struct vnpu_tinfo *b);

static void replace_reads(struct cstate *s, int32_t from, int32_t to)
{
	for (uint32_t i = 0; i < s->num_ops; i++)
		for (uint32_t k = 0; k < s->ops[i].num_in; k++)
			if (s->ops[i].in[k] == from)
				s->ops[i].in[k] = to;
}

/* View-like nodes whose output is not a model output become aliases. */
static void make_views(struct cstate *s)
{
	static const char *const views[] = {
		"Identity", "Dropout", "Reshape", "Flatten", "Squeeze", "Unsqueeze",
	};

	for (uint32_t i = 0; i < s->num_ops; i++) {
		struct cop *op = &s->ops[i];
		int32_t src = -1;

		if (op->dead || !op->num_out || op->out[0] < 0)
			continue;
		if (op->kind == COP_SELECT && cs_is_const(s, op->in[0]))
			src = *(const uint8_t *)s->vals[op->in[0]].info.data ? op->in[1] : op->in[2];
		for (size_t k = 0; op->kind == COP_NODE && k < sizeof(views) / sizeof(views[0]); k++)
			if (!strcmp(op->node->op, views[k]))
				src = op->in[0];
		if (src < 0 || s->vals[op->out[0]].out_index >= 0)
			continue;
		if (op_is(op, "Dropout") && ((op->num_out > 1 && used(s, op->out[1])) ||
					      (op->num_in > 2 && op->in[2] >= 0)))
			continue;
		if (s->vals[src].info.data)
			continue;	/* a view of a constant is itself folded */
		op->dead = true;
		/* Same shape (Identity, Dropout, If): readers read the source
		 * itself, so the passes see through it; otherwise a view. */
		if (same_shape(&s->vals[src].info, &s->vals[op->out[0]].info))
			replace_reads(s, op->out[0], src);
		else
			s->vals[op->out[0]].alias = src;
	}
}

/* Fold BatchNormalization into the Conv before it. */
static vnpu_status fold_batchnorm(struct cstate *s, struct cop *conv, struct cop *bn)
{
	const struct vnpu_tinfo *w = cs_info(s, conv->in[1]);
	int64_t m = w->dims[0], per = vnpu_tinfo_elems(w) / (m ? m : 1);
	float eps = vnpu_attr_float(bn->node, "epsilon", 1e-5f);
	const float *sc, *bb, *mean, *var, *wd, *bd = NULL;
	float *nw, *nb;
	int32_t wv, bv;
	vnpu_status st;

	if (bn->num_in < 5 || w->rank < 3)
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
	if (conv->in[2] >= 0 && (!cs_is_const(s, conv->in[2]) ||
				 vnpu_tinfo_elems(cs_info(s, conv->in[2])) != m))
		return VNPU_OK;
	sc = cs_info(s, bn->in[1])->data;
	bb = cs_info(s, bn->in[2])->data;
	mean = cs_info(s, bn->in[3])->data;
	var = cs_info(s, bn->in[4])->data;
	wd = w->data;
	if (conv->in[2] >= 0)
		bd = cs_info(s, conv->in[2])->data;
	nw = malloc((size_t)vnpu_tinfo_elems(w) * sizeof(float));
	nb = malloc((size_t)m * sizeof(float));
	if (!nw || !nb) {
		free(nw);
		free(nb);
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	}
	for (int64_t o = 0; o < m; o++) {
		float f = sc[o] / sqrtf(var[o] + eps);

		for (int64_t k = 0; k < per; k++)
			nw[o * per + k] = wd[o * per + k] * f;
		nb[o] = ((bd ? bd[o] : 0.0f) - mean[o]) * f + bb[o];
	}
	st = cs_add_const(s, VNPU_TYPE_F32, w->rank, w->dims, nw, &wv);
	if (st) {
		free(nb);
		return st;
	}
	st = cs_add_const(s, VNPU_TYPE_F32, 1, &m, nb, &bv);
	if (st)
		return st;
	conv->in[1] = wv;
	conv->in[2] = bv;
	if (conv->num_in < 3)
		conv->num_in = 3;
	conv->out[0] = bn->out[0];
	bn->dead = true;
	bn->fused_into = (int32_t)(conv - s->ops);
	strncat(conv->type, "+BatchNorm", sizeof(conv->type) - strlen(conv->type) - 1);
	return VNPU_OK;
}

/* The activation a unary node is, when it can be fused. */
static bool act_of(const struct cstate *s, const struct cop *op, struct vnpu_layer_act *act)
{
	const struct vnpu_node *n = op->node;

	memset(act, 0, sizeof(*act));
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

static bool same_shape(const struct vnpu_tinfo *a, const struct vnpu_tinfo *b)
{
	if (a->rank != b->rank)
		return false;
	for (int32_t d = 0; d < a->rank; d++)
		if (a->dims[d] != b->dims[d])
			return false;
	return true;
}

/* A constant Add operand that is a per-channel bias of @op's output. */
static bool bias_fits(const struct cstate *s, const struct cop *op, int32_t c)
{
	const struct vnpu_tinfo *y = cs_info(s, op->out[0]), *b = cs_info(s, c);
	int64_t ch = op_is(op, "Conv") ? y->dims[1] : y->dims[y->rank - 1];
	int32_t ch_axis = op_is(op, "Conv") ? 1 : y->rank - 1;

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

static void fuse_into(struct cstate *s, uint32_t idx)
{
	struct cop *op = &s->ops[idx];
	bool conv = op_is(op, "Conv"), gemm = op_is(op, "Gemm"), matmul = op_is(op, "MatMul");
	struct cop *next;

	if ((!conv && !gemm && !matmul) || !is_float_val(s, op->out[0]))
		return;
	/* BatchNorm after a Conv with constant weights. */
	next = sole_reader(s, op->out[0], idx);
	if (conv && next && op_is(next, "BatchNormalization") && next->in[0] == op->out[0] &&
	    cs_is_const(s, op->in[1]) && !(next->num_out > 1 && used(s, next->out[1]))) {
		if (fold_batchnorm(s, op, next))
			return;
		next = sole_reader(s, op->out[0], idx);
	}
	/* A constant bias (added to the Conv's own constant bias). */
	if (next && op_is(next, "Add") && !(gemm && op->num_in > 2 && op->in[2] >= 0) &&
	    !(conv && op->num_in > 2 && op->in[2] >= 0 && !cs_is_const(s, op->in[2]))) {
		int32_t other = next->in[0] == op->out[0] ? next->in[1] : next->in[0];

		if (bias_fits(s, op, other) && next->in[0] != next->in[1]) {
			if (conv && op->num_in > 2 && op->in[2] >= 0) {
				if (sum_bias(s, op->in[2], other, &other))
					return;
				op->in[2] = -1;
			}
			op->bias = other;
			op->out[0] = next->out[0];
			next->dead = true;
			next->fused_into = (int32_t)idx;
			strncat(op->type, "+Add", sizeof(op->type) - strlen(op->type) - 1);
			next = sole_reader(s, op->out[0], idx);
		}
	}
	/* A residual Add of a tensor of the output's shape computed earlier. */
	if (next && op_is(next, "Add") && next->in[0] != next->in[1]) {
		int32_t other = next->in[0] == op->out[0] ? next->in[1] : next->in[0];
		int32_t p = producer(s, other);

		if (p < (int32_t)idx && is_float_val(s, other) &&
		    same_shape(cs_info(s, other), cs_info(s, op->out[0])) &&
		    same_shape(cs_info(s, next->out[0]), cs_info(s, op->out[0]))) {
			op->residual = other;
			op->out[0] = next->out[0];
			next->dead = true;
			next->fused_into = (int32_t)idx;
			strncat(op->type, "+Residual", sizeof(op->type) - strlen(op->type) - 1);
			next = sole_reader(s, op->out[0], idx);
		}
	}
	/* An activation. */
	if (next && act_of(s, next, &op->act)) {
		op->out[0] = next->out[0];
		next->dead = true;
			next->fused_into = (int32_t)idx;
		strncat(op->type, "+", sizeof(op->type) - strlen(op->type) - 1);
		strncat(op->type, next->node->op, sizeof(op->type) - strlen(op->type) - 1);
	} else {
		memset(&op->act, 0, sizeof(op->act));
	}
}

void cs_fuse(struct cstate *s)
{
	make_views(s);
	if (s->opt.no_fusion)
		return;
	for (uint32_t i = 0; i < s->num_ops; i++) {
		s->cur_op = i;
		if (!s->ops[i].dead)
			fuse_into(s, i);
	}
}

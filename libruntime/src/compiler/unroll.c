// SPDX-License-Identifier: MIT
/*
 * Loop and Scan, unrolled: the device runs static command streams, so the
 * body is instantiated once per iteration on fresh values, the carried
 * values threaded through, scan inputs sliced with a Gather and scan
 * outputs stacked with Reshape and Concat. A Loop's trip count and its
 * condition (before and after every iteration) must be known at compile
 * time. A loop runs at most VNPU_MAX_LOOP_ITERS iterations, and every
 * node instantiated is charged to the compile's node-visit budget
 * (VNPU_MAX_NODE_VISITS, shared with its shape inference).
 */
#include <stdlib.h>
#include <string.h>

#include "build.h"
#include "error.h"

/* One iteration: the body instantiated on @in (its inputs' values). */
vnpu_status cb_unroll_once(struct cstate *s, struct walk *w, struct unroll *u,
			   const int32_t *in)
{
	const int32_t *outs = u->body->outputs + u->first_out;
	vnpu_status st;

	if (u->iters >= VNPU_MAX_LOOP_ITERS)
		return vnpu_node_error(VNPU_UNSUPPORTED, u->n,
				       "unrolling it takes more than %d iterations",
				       VNPU_MAX_LOOP_ITERS);
	for (uint32_t k = 0; k < u->body->num_inputs; k++)
		w->map[u->body->inputs[k]] = in[k];
	w->depth++;
	st = cb_walk_graph(s, w, u->body);
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
static vnpu_status unroll_outputs(struct cstate *s, struct unroll *u, const int32_t *node_outs,
				  const int64_t *axes, const bool *reverse, int32_t *results)
{
	for (uint32_t k = 0; k < u->num_carried; k++)
		results[k] = u->carried[k];
	for (uint32_t k = 0; k < u->num_scan; k++) {
		vnpu_status st;

		results[u->num_carried + k] = -1;
		if (node_outs[u->num_carried + k] < 0)
			continue;
		if (!u->iters)
			return vnpu_node_error(VNPU_UNSUPPORTED, u->n,
					       "scan outputs of no iterations");
		st = cb_stack(s, u->n, &u->scans[k], u->iters, u->num_scan, axes ? axes[k] : 0,
			      reverse && reverse[k], &results[u->num_carried + k]);
		if (st)
			return st;
	}
	return VNPU_OK;
}

vnpu_status cb_unroll_init(struct unroll *u, const struct vnpu_node *n,
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

void cb_unroll_fini(struct unroll *u)
{
	free(u->carried);
	free(u->scans);
}

/*
 * Loop: the trip count and the condition must be known at compile time
 * (constants, or folded from them), and the body's condition after every
 * iteration too; the body is then instantiated once per iteration.
 */
vnpu_status cb_unroll_loop(struct cstate *s, struct walk *w, const struct vnpu_node *n,
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
		return vnpu_node_error(VNPU_PARSE_ERROR, n,
				       "its body does not match its inputs and outputs");
	if (in[0] >= 0 && !cs_is_const(s, in[0]))
		return vnpu_node_error(VNPU_UNSUPPORTED, n,
				       "the trip count is not known at compile time (loops are unrolled)");
	if (in[1] >= 0 && !cs_is_const(s, in[1]))
		return vnpu_node_error(VNPU_UNSUPPORTED, n,
				       "condition depends on runtime values (not known at compile time)");
	if (in[0] >= 0)
		trip = vnpu_elem_get_i(s->vals[in[0]].info.data, s->vals[in[0]].info.type, 0);
	if (in[1] >= 0)
		go = vnpu_elem_get_i(s->vals[in[1]].info.data, s->vals[in[1]].info.type, 0) != 0;
	if (go && trip > VNPU_MAX_LOOP_ITERS)
		return vnpu_node_error(VNPU_UNSUPPORTED, n,
				       "unrolling %lld iterations is above the limit of %d",
				       (long long)trip, VNPU_MAX_LOOP_ITERS);
	/* Refused before any iteration when the whole loop cannot fit. */
	if (go && trip > 0 && trip * body->num_nodes > VNPU_MAX_NODE_VISITS - w->work.visits)
		return vnpu_work_charge(&w->work, n, trip * body->num_nodes);
	bin = malloc((n->num_inputs + 1) * sizeof(int32_t));
	st = bin ? cb_unroll_init(&u, n, body, 1, n->num_inputs - 2, in + 2) :
	     vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	for (int64_t i = 0; !st && go && (trip < 0 || i < trip); i++) {
		int32_t cond;

		st = cb_const_scalar(s, VNPU_TYPE_I64, i, &bin[0]);
		if (!st)
			st = cb_const_scalar(s, VNPU_TYPE_BOOL, 1, &bin[1]);
		if (st)
			break;
		memcpy(bin + 2, u.carried, u.num_carried * sizeof(int32_t));
		st = cb_unroll_once(s, w, &u, bin);
		if (st)
			break;
		cond = w->map[body->outputs[0]];
		if (!cs_is_const(s, cond)) {
			st = vnpu_node_error(VNPU_UNSUPPORTED, n,
					     "condition depends on runtime values (iteration %lld)",
					     (long long)i);
			break;
		}
		go = vnpu_elem_get_i(s->vals[cond].info.data, s->vals[cond].info.type, 0) != 0;
	}
	if (!st)
		st = unroll_outputs(s, &u, n->outputs, NULL, NULL, results);
	if (bin)
		cb_unroll_fini(&u);
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
	vnpu_status st = cb_unroll_init(&u, n, body, 0, ns, states);

	for (uint32_t j = 0; !st && j < nx; j++) {
		const struct vnpu_tinfo *x = &s->vals[xs[j]].info;

		axis[j] = sa->in_axis[j] < 0 ? sa->in_axis[j] + x->rank : sa->in_axis[j];
		if (!vnpu_tinfo_static(x) || axis[j] < 0 || axis[j] >= x->rank)
			st = vnpu_node_error(VNPU_UNSUPPORTED, n,
					     "the steps of scan input %u are not known at compile time",
					     j);
		else if (steps >= 0 && x->dims[axis[j]] != steps)
			st = vnpu_node_error(VNPU_PARSE_ERROR, n,
					     "scan inputs of %lld and %lld steps", (long long)steps,
					     (long long)x->dims[axis[j]]);
		else
			steps = x->dims[axis[j]];
	}
	for (int64_t t = 0; !st && t < steps; t++) {
		memcpy(bin, u.carried, ns * sizeof(int32_t));
		for (uint32_t j = 0; !st && j < nx; j++)
			st = cb_pick(s, n, xs[j], axis[j], sa->in_rev[j] ? steps - 1 - t : t,
				     &bin[ns + j]);
		if (!st)
			st = cb_unroll_once(s, w, &u, bin);
	}
	if (!st)
		st = unroll_outputs(s, &u, n->outputs, sa->out_axis, sa->out_rev, results);
	cb_unroll_fini(&u);
	return st;
}

/* Scan: opset 8 scans each batch (axis 0) and stacks the batches. */
vnpu_status cb_unroll_scan(struct cstate *s, struct walk *w, const struct vnpu_node *n,
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
		return vnpu_node_error(VNPU_PARSE_ERROR, n,
				       "its body does not match its inputs and outputs");
	ns = n->num_inputs - first - nx;
	for (uint32_t k = first; k < n->num_inputs; k++)
		if (in[k] < 0)
			return vnpu_node_error(VNPU_PARSE_ERROR, n, "input %u is missing", k);
	read_axes(n, "scan_input_axes", first ? "directions" : "scan_input_directions", nx,
		  sa.in_axis, sa.in_rev);
	read_axes(n, "scan_output_axes", "scan_output_directions", no - ns, sa.out_axis, sa.out_rev);
	if (!first)
		return scan_values(s, w, n, &sa, ns, nx, in, in + ns, results);
	if (in[0] >= 0)
		return vnpu_node_error(VNPU_UNSUPPORTED, n, "sequence_lens is not supported");
	batch = s->vals[in[1]].info.rank > 0 ? s->vals[in[1]].info.dims[0] : -1;
	if (batch < 1 || batch > VNPU_MAX_LOOP_ITERS)
		return vnpu_node_error(VNPU_UNSUPPORTED, n, "a batch of %lld", (long long)batch);
	res = malloc((size_t)batch * no * sizeof(int32_t));
	bin = malloc((ns + nx + 1) * sizeof(int32_t));
	if (!res || !bin)
		st = vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	for (int64_t b = 0; !st && b < batch; b++) {
		for (uint32_t k = 0; !st && k < ns + nx; k++)
			st = cb_pick(s, n, in[1 + k], 0, b, &bin[k]);
		if (!st)
			st = scan_values(s, w, n, &sa, ns, nx, bin, bin + ns, &res[b * no]);
	}
	for (uint32_t k = 0; !st && k < no; k++)
		st = n->outputs[k] < 0 ? VNPU_OK :
		     cb_stack(s, n, &res[k], (uint32_t)batch, no, 0, false, &results[k]);
	free(res);
	free(bin);
	return st;
}

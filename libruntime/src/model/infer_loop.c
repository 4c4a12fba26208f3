// SPDX-License-Identifier: MIT
/*
 * Inference of Loop and Scan: the body runs iteration by iteration over the
 * model's value table (its inputs set from the node's values, carried
 * values copied from one iteration to the next, scan outputs stacked), so
 * shapes that change per iteration are known and, when everything is,
 * the loop folds. A loop whose iteration count is not known runs once for
 * the shapes; what changes between iterations is then dynamic.
 */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "infer_priv.h"

/* @src without axis @axis, at @index along it, into @o (with data when
 * @src has it). */
static void pick(const struct ictx *c, const struct vnpu_tinfo *src, int32_t axis, int64_t index,
		 struct vnpu_tinfo *o)
{
	size_t outer = 1, inner = vnpu_element_type_size(src->type);
	const char *from = src->data;

	vnpu_tinfo_clear(o);
	o->type = src->type;
	o->rank = src->rank - 1;
	for (int32_t d = 0; d < src->rank; d++) {
		if (d < axis) {
			o->dims[d] = src->dims[d];
			outer *= (size_t)src->dims[d];
		} else if (d > axis) {
			o->dims[d - 1] = src->dims[d];
			inner *= (size_t)src->dims[d];
		}
	}
	if (!has_data(src) || !inf_alloc_out(c, o))
		return;
	for (size_t i = 0; i < outer; i++)
		memcpy((char *)o->data + i * inner,
		       from + (i * (size_t)src->dims[axis] + (size_t)index) * inner, inner);
}

/*
 * @n parts of one shape, @stride tinfos apart, stacked along a new axis
 * @axis into @o (@reverse: the last part first); @like gives the part
 * shape when @n is 0.
 */
static vnpu_status stack(const struct ictx *c, const struct vnpu_tinfo *parts, uint32_t n,
			 uint32_t stride, const struct vnpu_tinfo *like, int64_t axis,
			 bool reverse, struct vnpu_tinfo *o)
{
	const struct vnpu_tinfo *p0 = n ? parts : like;
	size_t outer = 1, inner = vnpu_element_type_size(p0->type);
	bool data = n > 0;
	vnpu_status st;

	vnpu_tinfo_clear(o);
	if (p0->rank < 0 || p0->rank >= VNPU_MAX_RANK) {
		o->type = p0->type;
		return VNPU_OK;	/* rank unknown: so is the output's */
	}
	st = inf_check_axis(c, axis, p0->rank + 1, &axis);
	if (st)
		return st;
	for (uint32_t k = 0; k < n; k++) {
		const struct vnpu_tinfo *p = &parts[(size_t)k * stride];

		if (p->type != p0->type || p->rank != p0->rank ||
		    memcmp(p->dims, p0->dims, (size_t)p0->rank * sizeof(p0->dims[0])))
			return inf_error(c, VNPU_UNSUPPORTED,
					 "a scan output changes its type or shape between iterations");
		data &= has_data(p);
	}
	o->type = p0->type;
	o->rank = p0->rank + 1;
	for (int32_t d = 0; d < o->rank; d++) {
		o->dims[d] = d < axis ? p0->dims[d] : d == axis ? (int64_t)n : p0->dims[d - 1];
		if (d != axis)
			*(d < axis ? &outer : &inner) *= (size_t)o->dims[d];
	}
	if (!data || !inf_alloc_out(c, o))
		return VNPU_OK;
	for (size_t i = 0; i < outer; i++)
		for (uint32_t k = 0; k < n; k++)
			memcpy((char *)o->data + (i * n + k) * inner,
			       (const char *)parts[(size_t)(reverse ? n - 1 - k : k) * stride].data +
			       i * inner, inner);
	return VNPU_OK;
}

/* What the iterations of one loop produced so far. */
struct loop_run {
	const struct vnpu_graph *body;
	struct vnpu_tinfo *infos;	/* the model's value table */
	uint32_t first_out;		/* body outputs before the carried ones */
	uint32_t num_carried, num_scan;
	struct vnpu_tinfo *carried;	/* [num_carried] */
	struct vnpu_tinfo *scans;	/* [iters][num_scan] */
	uint32_t iters, cap;
};

static void loop_run_reset(struct loop_run *r)
{
	for (uint32_t k = 0; r->scans && k < r->iters * r->num_scan; k++)
		vnpu_tinfo_clear(&r->scans[k]);
	r->iters = 0;
}

static void loop_run_fini(struct loop_run *r)
{
	loop_run_reset(r);
	for (uint32_t k = 0; r->carried && k < r->num_carried; k++)
		vnpu_tinfo_clear(&r->carried[k]);
	free(r->carried);
	free(r->scans);
}

/* Start with the carried values @init. */
static vnpu_status loop_run_init(struct loop_run *r, const struct vnpu_tinfo *const *init)
{
	r->carried = calloc(r->num_carried + 1, sizeof(*r->carried));
	if (!r->carried)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory inferring a loop");
	for (uint32_t k = 0; k < r->num_carried; k++) {
		vnpu_status st;

		r->carried[k].rank = -1;
		st = vnpu_tinfo_copy(&r->carried[k], init[k]);
		if (st)
			return st;
	}
	return VNPU_OK;
}

/* Forget every iteration and start again with @init. */
static vnpu_status loop_run_restart(struct loop_run *r, const struct vnpu_tinfo *const *init)
{
	loop_run_fini(r);
	r->carried = NULL;
	r->scans = NULL;
	r->cap = 0;
	return loop_run_init(r, init);
}

/* One iteration: the body's inputs set to (copies of) @in, then inferred. */
static vnpu_status run_body(const struct ictx *c, struct loop_run *r,
			    const struct vnpu_tinfo *const *in)
{
	vnpu_status st;

	for (uint32_t k = 0; k < r->body->num_inputs; k++) {
		st = vnpu_tinfo_copy(&r->infos[r->body->inputs[k]], in[k]);
		if (st)
			return st;
	}
	st = inf_subgraph(c, r->body, r->infos);
	/* A body node's complaint names that node: say whose body it is. */
	return st ? vnpu_node_prefix(st, c->n) : VNPU_OK;
}

/* Keep the iteration's carried values and scan outputs. */
static vnpu_status collect(struct loop_run *r)
{
	const int32_t *outs = r->body->outputs + r->first_out;
	vnpu_status st = VNPU_OK;

	if (r->iters == r->cap) {
		uint32_t cap = r->cap ? r->cap * 2 : 16;
		struct vnpu_tinfo *s = realloc(r->scans, (size_t)cap * (r->num_scan + 1) * sizeof(*s));

		if (!s)
			return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory inferring a loop");
		r->scans = s;
		r->cap = cap;
	}
	for (uint32_t k = 0; k < r->num_scan; k++) {
		struct vnpu_tinfo *t = &r->scans[(size_t)r->iters * r->num_scan + k];

		memset(t, 0, sizeof(*t));
		t->rank = -1;
		if (!st)
			st = vnpu_tinfo_copy(t, &r->infos[outs[r->num_carried + k]]);
	}
	r->iters++;
	for (uint32_t k = 0; !st && k < r->num_carried; k++)
		st = vnpu_tinfo_copy(&r->carried[k], &r->infos[outs[k]]);
	return st;
}

/* After a run whose iteration count is not known: the carried values keep
 * what the body does not change, the rest is dynamic. */
static void merge_shapes(struct loop_run *r)
{
	const int32_t *outs = r->body->outputs + r->first_out;

	for (uint32_t k = 0; k < r->num_carried; k++) {
		struct vnpu_tinfo *t = &r->carried[k];
		const struct vnpu_tinfo *b = &r->infos[outs[k]];

		if (t->owns_data)
			free(t->data);
		t->data = NULL;
		t->owns_data = false;
		if (t->rank != b->rank)
			t->rank = -1;
		for (int32_t d = 0; d < t->rank; d++)
			if (t->dims[d] != b->dims[d])
				t->dims[d] = VNPU_DIM_DYNAMIC;
	}
}

/* The node's outputs: the carried values, then the scan outputs stacked
 * (@iters of them, or unknown when negative). */
static vnpu_status loop_outputs(const struct ictx *c, struct loop_run *r, int64_t iters,
				struct vnpu_tinfo *const *out, const int64_t *axes,
				const bool *reverse)
{
	const int32_t *outs = r->body->outputs + r->first_out;

	for (uint32_t k = 0; k < r->num_carried; k++) {
		vnpu_status st = out[k] ? vnpu_tinfo_copy(out[k], &r->carried[k]) : VNPU_OK;

		if (st)
			return st;
	}
	for (uint32_t k = 0; k < r->num_scan; k++) {
		struct vnpu_tinfo *o = out[r->num_carried + k];
		int64_t axis = axes ? axes[k] : 0;
		vnpu_status st;

		if (!o)
			continue;
		st = stack(c, iters > 0 ? &r->scans[k] : NULL, iters > 0 ? r->iters : 0,
			   r->num_scan, &r->infos[outs[r->num_carried + k]], axis,
			   reverse && reverse[k], o);
		if (st)
			return st;
		if (iters < 0 && o->rank > 0)
			o->dims[norm_axis(axis, o->rank)] = VNPU_DIM_DYNAMIC;
	}
	return VNPU_OK;
}

static struct vnpu_tinfo scalar_info(vnpu_element_type type, void *data)
{
	return (struct vnpu_tinfo){ .type = type, .rank = 0, .data = data };
}

/*
 * Loop: with a known trip count and a condition known at every iteration,
 * the body runs that many times (folding when everything is known);
 * otherwise once for the shapes, with the iteration count unknown.
 */
static vnpu_status infer_loop(struct ictx *c)
{
	const struct vnpu_attr *ba = vnpu_node_attr(c->n, "body");
	const struct vnpu_tinfo *m = IN(c, 0), *cond = IN(c, 1), **in = NULL;
	struct loop_run r = { .infos = (struct vnpu_tinfo *)c->in[c->n->num_inputs], .first_out = 1 };
	int64_t trip = -1, i = 0;
	uint8_t go = 1;
	bool exact = true;
	vnpu_status st;

	if (c->n->num_inputs < 2)
		return FAIL(c, "%u inputs, expected 2 or more", c->n->num_inputs);
	if (!ba || !ba->g)
		return FAIL(c, "needs a body graph");
	r.body = ba->g;
	r.num_carried = c->n->num_inputs - 2;
	if (r.body->num_inputs != r.num_carried + 2 || r.body->num_outputs < r.num_carried + 1 ||
	    c->n->num_outputs != r.body->num_outputs - 1)
		return FAIL(c, "a body of %u inputs and %u outputs for %u carried values and %u outputs",
			    r.body->num_inputs, r.body->num_outputs, r.num_carried,
			    c->n->num_outputs);
	r.num_scan = r.body->num_outputs - 1 - r.num_carried;
	for (uint32_t k = 2; k < c->n->num_inputs; k++) {
		st = inf_need(c, k);
		if (st)
			return st;
	}
	if (m) {
		exact &= has_data(m) && vnpu_tinfo_elems(m) == 1;
		trip = exact ? vnpu_elem_get_i(m->data, m->type, 0) : -1;
	}
	if (cond) {
		exact &= has_data(cond) && vnpu_tinfo_elems(cond) == 1;
		go = exact && vnpu_elem_get_i(cond->data, cond->type, 0) != 0;
	}
	if (exact && go && trip > VNPU_MAX_LOOP_ITERS)
		return inf_limit(c, "%lld iterations, above the limit of %d", (long long)trip,
				 VNPU_MAX_LOOP_ITERS);
	in = calloc(r.body->num_inputs + 1, sizeof(*in));
	st = in ? loop_run_init(&r, (const struct vnpu_tinfo *const *)c->in + 2) :
	     vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory inferring a loop");
	for (; !st && exact && go && (trip < 0 || i < trip); i++) {
		struct vnpu_tinfo iter = scalar_info(VNPU_TYPE_I64, &i);
		struct vnpu_tinfo condv = scalar_info(VNPU_TYPE_BOOL, &go);
		const struct vnpu_tinfo *co = &r.infos[r.body->outputs[0]];

		if (i >= VNPU_MAX_LOOP_ITERS) {
			st = inf_limit(c, "more than %d iterations", VNPU_MAX_LOOP_ITERS);
			break;
		}
		in[0] = &iter;
		in[1] = &condv;
		for (uint32_t k = 0; k < r.num_carried; k++)
			in[2 + k] = &r.carried[k];
		st = run_body(c, &r, in);
		if (!st && !has_data(co)) {
			exact = false;	/* the condition is known at run time only */
			st = loop_run_restart(&r, (const struct vnpu_tinfo *const *)c->in + 2);
			break;
		}
		if (!st)
			go = vnpu_elem_get_i(co->data, co->type, 0) != 0;
		if (!st)
			st = collect(&r);
	}
	if (!st && (!exact || !r.iters)) {
		/* The shapes of one iteration (and of the scan outputs' parts). */
		struct vnpu_tinfo iter = scalar_info(VNPU_TYPE_I64, NULL);
		struct vnpu_tinfo condv = scalar_info(VNPU_TYPE_BOOL, NULL);

		in[0] = &iter;
		in[1] = &condv;
		for (uint32_t k = 0; k < r.num_carried; k++)
			in[2 + k] = &r.carried[k];
		st = run_body(c, &r, in);
		if (!st && !exact)
			merge_shapes(&r);
	}
	if (!st)
		st = loop_outputs(c, &r, exact ? (int64_t)r.iters : -1, c->out + 0, NULL, NULL);
	loop_run_fini(&r);
	free(in);
	return st;
}

/* The scan attributes of a Scan node: per input or output an axis and a
 * direction. */
struct scan_attrs {
	int64_t in_axes[64], out_axes[64];
	bool in_rev[64], out_rev[64];
};

static vnpu_status read_scan_axes(const struct ictx *c, const char *axes, const char *dirs,
				  uint32_t n, int64_t *axis, bool *rev)
{
	const struct vnpu_attr *a = vnpu_node_attr(c->n, axes), *d = vnpu_node_attr(c->n, dirs);

	if ((a && (a->type != VNPU_ATTR_INTS || a->n != n)) ||
	    (d && (d->type != VNPU_ATTR_INTS || d->n != n)))
		return FAIL(c, "'%s' and '%s' need %u entries", axes, dirs, n);
	for (uint32_t k = 0; k < n; k++) {
		axis[k] = a ? a->ints[k] : 0;
		rev[k] = d && d->ints[k];
	}
	return VNPU_OK;
}

/*
 * One scan over @states and @xs (the scan inputs): the body runs once per
 * slice along each input's axis; @out gets the final states, then the
 * scan outputs stacked.
 */
static vnpu_status scan_once(const struct ictx *c, const struct scan_attrs *sa,
			     uint32_t num_states, uint32_t num_xs,
			     const struct vnpu_tinfo *const *states,
			     const struct vnpu_tinfo *const *xs, struct vnpu_tinfo *const *out)
{
	const struct vnpu_attr *ba = vnpu_node_attr(c->n, "body");
	struct loop_run r = { .infos = (struct vnpu_tinfo *)c->in[c->n->num_inputs],
			      .body = ba->g, .num_carried = num_states };
	const struct vnpu_tinfo **in = calloc(num_states + num_xs + 1, sizeof(*in));
	struct vnpu_tinfo *slices = calloc(num_xs + 1, sizeof(*slices));
	int64_t steps = -1, axis[64];
	vnpu_status st = VNPU_OK;

	r.num_scan = r.body->num_outputs - num_states;
	if (!in || !slices) {
		free(in);
		free(slices);
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory inferring a scan");
	}
	for (uint32_t j = 0; j < num_xs; j++) {
		const struct vnpu_tinfo *x = xs[j];

		slices[j].rank = -1;
		if (x->rank < 1) {
			st = x->rank < 0 ? VNPU_OK : FAIL(c, "scan input %u is a scalar", j);
			steps = -2;
			continue;
		}
		if (!st)
			st = inf_check_axis(c, sa->in_axes[j], x->rank, &axis[j]);
		if (!st && x->dims[axis[j]] >= 0 && steps != -2) {
			if (steps >= 0 && steps != x->dims[axis[j]])
				st = FAIL(c, "scan inputs of %lld and %lld steps", (long long)steps,
					  (long long)x->dims[axis[j]]);
			steps = x->dims[axis[j]];
		}
	}
	/* Each step is inferred: a reshape may ask for 2^40 of them. */
	if (!st && steps > VNPU_MAX_LOOP_ITERS)
		st = inf_limit(c, "more than %d scan steps", VNPU_MAX_LOOP_ITERS);
	if (!st)
		st = loop_run_init(&r, states);
	for (int64_t t = 0; !st && t < steps; t++) {
		for (uint32_t k = 0; k < num_states; k++)
			in[k] = &r.carried[k];
		for (uint32_t j = 0; j < num_xs; j++) {
			pick(c, xs[j], (int32_t)axis[j], sa->in_rev[j] ? steps - 1 - t : t, &slices[j]);
			in[num_states + j] = &slices[j];
		}
		st = run_body(c, &r, in);
		if (!st)
			st = collect(&r);
	}
	if (!st && steps <= 0) {
		/* Unknown or no steps: one run for the shapes. */
		for (uint32_t k = 0; k < num_states; k++)
			in[k] = &r.carried[k];
		for (uint32_t j = 0; j < num_xs; j++) {
			struct vnpu_tinfo shape = *xs[j];

			shape.data = NULL;
			if (shape.rank >= 1)
				pick(c, &shape, (int32_t)axis[j], 0, &slices[j]);
			in[num_states + j] = &slices[j];
		}
		st = run_body(c, &r, in);
		if (!st && steps < 0)
			merge_shapes(&r);
	}
	if (!st)
		st = loop_outputs(c, &r, steps, out, sa->out_axes, sa->out_rev);
	for (uint32_t j = 0; slices && j < num_xs; j++)
		vnpu_tinfo_clear(&slices[j]);
	free(slices);
	free(in);
	loop_run_fini(&r);
	return st;
}

/* The scan of batch @b of opset 8's batched inputs (axis 0 is the batch). */
static vnpu_status scan_batch(const struct ictx *c, const struct scan_attrs *sa, uint32_t ns,
			      uint32_t nx, int64_t b, struct vnpu_tinfo *res)
{
	const struct vnpu_tinfo *in[128] = { 0 };
	struct vnpu_tinfo *out[128] = { 0 }, picked[128];
	vnpu_status st;

	for (uint32_t k = 0; k < ns + nx; k++) {
		picked[k] = (struct vnpu_tinfo){ .rank = -1 };
		pick(c, IN(c, 1 + k), 0, b, &picked[k]);
		in[k] = &picked[k];
	}
	for (uint32_t k = 0; k < c->n->num_outputs; k++)
		out[k] = &res[k];
	st = scan_once(c, sa, ns, nx, in, in + ns, out);
	for (uint32_t k = 0; k < ns + nx; k++)
		vnpu_tinfo_clear(&picked[k]);
	return st;
}

/*
 * Opset 8 scans every batch (axis 0 of each input) along axis 1 and
 * stacks the batches' results; sequence_lens is not supported.
 */
static vnpu_status scan_batched(struct ictx *c, struct scan_attrs *sa, uint32_t ns, uint32_t nx)
{
	uint32_t no = c->n->num_outputs;
	struct vnpu_tinfo *res = NULL;
	int64_t batch = IN(c, 1)->rank > 0 ? IN(c, 1)->dims[0] : -1;
	vnpu_status st = VNPU_OK;

	if (IN(c, 0))
		return inf_error(c, VNPU_UNSUPPORTED, "sequence_lens is not supported");
	for (uint32_t k = 0; k < ns + nx; k++)
		if (IN(c, 1 + k)->rank < 1 + (k >= ns) || IN(c, 1 + k)->dims[0] != batch)
			return batch < 0 || IN(c, 1 + k)->rank < 0 ?
			       inf_error(c, VNPU_UNSUPPORTED, "the batch size is not known") :
			       FAIL(c, "input %u does not have the batch size %lld", 1 + k,
				    (long long)batch);
	/* Every input's first dimension dynamic agrees, but is no count. */
	if (batch < 0)
		return inf_error(c, VNPU_UNSUPPORTED, "the batch size is not known");
	if (batch > VNPU_MAX_LOOP_ITERS)
		return inf_limit(c, "more than %d batches", VNPU_MAX_LOOP_ITERS);
	res = calloc((size_t)(batch ? batch : 1) * no, sizeof(*res));
	if (!res)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory inferring a scan");
	for (int64_t b = 0; !st && b < batch; b++)
		st = scan_batch(c, sa, ns, nx, b, &res[b * no]);
	for (uint32_t k = 0; !st && k < no; k++)
		if (c->out[k])
			st = stack(c, res + k, (uint32_t)batch, no, &res[k], 0, false, c->out[k]);
	for (int64_t i = 0; i < batch * no; i++)
		vnpu_tinfo_clear(&res[i]);
	free(res);
	return st;
}

static vnpu_status infer_scan(struct ictx *c)
{
	const struct vnpu_attr *ba = vnpu_node_attr(c->n, "body");
	int64_t nx = vnpu_attr_int(c->n, "num_scan_inputs", 0);
	uint32_t first = opset(c) < 9 ? 1 : 0, ns, no = c->n->num_outputs;
	struct scan_attrs sa;
	vnpu_status st;

	if (!ba || !ba->g)
		return FAIL(c, "needs a body graph");
	if (nx < 1 || nx > c->n->num_inputs - first || c->n->num_inputs - first > 64 || no > 64)
		return FAIL(c, "num_scan_inputs %lld for %u inputs", (long long)nx, c->n->num_inputs);
	ns = c->n->num_inputs - first - (uint32_t)nx;
	if (ba->g->num_inputs != ns + nx || ba->g->num_outputs != no || no < ns)
		return FAIL(c, "a body of %u inputs and %u outputs for %u states and %lld scan inputs",
			    ba->g->num_inputs, ba->g->num_outputs, ns, (long long)nx);
	for (uint32_t k = first; k < c->n->num_inputs; k++) {
		st = inf_need(c, k);
		if (st)
			return st;
	}
	st = read_scan_axes(c, "scan_input_axes", first ? "directions" : "scan_input_directions",
			    (uint32_t)nx, sa.in_axes, sa.in_rev);
	if (!st)
		st = read_scan_axes(c, "scan_output_axes", "scan_output_directions", no - ns,
				    sa.out_axes, sa.out_rev);
	if (!st && first)
		st = scan_batched(c, &sa, ns, (uint32_t)nx);
	else if (!st)
		st = scan_once(c, &sa, ns, (uint32_t)nx, (const struct vnpu_tinfo *const *)c->in,
			       (const struct vnpu_tinfo *const *)c->in + ns, c->out);
	return st;
}

const struct op_infer vnpu_infer_loop_ops[] = {
	{ "Loop", infer_loop }, { "Scan", infer_scan },
};
const size_t vnpu_infer_loop_num_ops = sizeof(vnpu_infer_loop_ops) / sizeof(vnpu_infer_loop_ops[0]);

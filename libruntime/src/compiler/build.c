// SPDX-License-Identifier: MIT
/*
 * Building the working graph: a walk over the model's nodes mapping each
 * model value to the working value holding it. The main graph's values
 * keep their indices (inference ran over it first, with full constant
 * folding; a node is inferred again where that could not see its inputs:
 * after a loop, a sequence op, in an If's branch). If branches are walked
 * (both, with a select per output, when the condition is not known); Loop
 * and Scan are unrolled (unroll.c); sequences and optionals become values
 * made here (sequence.c). Then the program's ports: a model input or
 * output each, a sequence's elements each.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"
#include "error.h"

/* Constants computed at compile time, per tensor (elements). */
#define COMPILE_FOLD_LIMIT (1ll << 26)

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

/*
 * Where an op computing some outputs at run time writes output @v, which
 * inference folded (Dropout's output with the mask computed, say): a
 * temporary of its shape, in @out. The constant stays the value readers
 * and the model's outputs see; it lives in the weights, which no command
 * may write.
 */
static vnpu_status scratch_output(struct cstate *s, int32_t v, int32_t *out)
{
	struct vnpu_tinfo t = s->vals[v].info;
	vnpu_status st = cs_add_temp(s, t.type, t.rank, t.dims, out);

	if (!st)
		s->vals[*out].name = s->vals[v].name;
	return st;
}

/* An op running @n on working values @in -> @out (nothing when folded). */
static vnpu_status add_op(struct cstate *s, const struct vnpu_node *n, const int32_t *in,
			  const int32_t *out)
{
	int32_t writes[COP_MAX_IO];
	struct cop *op;
	vnpu_status st;

	if (outputs_folded(s, out, n->num_outputs))
		return VNPU_OK;
	for (uint32_t k = 0; k < n->num_outputs; k++) {
		writes[k] = out[k];
		if (out[k] >= 0 && s->vals[out[k]].info.data) {
			st = scratch_output(s, out[k], &writes[k]);
			if (st)
				return st;
		}
	}
	st = cs_add_op(s, &op);
	if (st)
		return st;
	op->kind = COP_NODE;
	op->node = n;
	op->num_in = n->num_inputs;
	op->num_out = n->num_outputs;
	memcpy(op->in, in, n->num_inputs * sizeof(int32_t));
	memcpy(op->out, writes, n->num_outputs * sizeof(int32_t));
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
vnpu_status cb_add_synth(struct cstate *s, struct vnpu_node *n, const int32_t *in,
			 int32_t *out)
{
	vnpu_status st = cs_add_temp(s, VNPU_TYPE_UNDEFINED, 0, NULL, out);

	if (st)
		return st;
	s->vals[*out].info.rank = -1;
	st = infer_ids(s, n, in, out);
	if (!st && s->vals[*out].info.type == VNPU_TYPE_UNDEFINED)
		st = vnpu_node_error(VNPU_UNSUPPORTED, n, "cannot unroll it: %s",
				     vnpu_last_error());
	return st ? st : add_op(s, n, in, out);
}

vnpu_status cb_const_i64(struct cstate *s, int32_t rank, const int64_t *vals, int64_t n,
			 int32_t *out)
{
	int64_t *data = malloc((size_t)(n ? n : 1) * sizeof(int64_t));

	if (!data)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	memcpy(data, vals, (size_t)n * sizeof(int64_t));
	return cs_add_const(s, VNPU_TYPE_I64, rank, &n, data, out);
}

/* The only attribute of a node the compiler made: integer @name = @v. */
static vnpu_status set_int_attr(struct vnpu_node *n, const char *name, int64_t v)
{
	n->attrs[0].name = strdup(name);
	n->attrs[0].type = VNPU_ATTR_INT;
	n->attrs[0].i = v;
	n->attrs[0].t.rank = -1;
	n->num_attrs = 1;
	return n->attrs[0].name ? VNPU_OK :
	       vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
}

vnpu_status cb_set_axis(struct vnpu_node *n, int64_t axis)
{
	return set_int_attr(n, "axis", axis);
}

/* Working value @x at @index along @axis (a Gather of a constant index). */
vnpu_status cb_pick(struct cstate *s, const struct vnpu_node *like, int32_t x,
		    int64_t axis, int64_t index, int32_t *out)
{
	struct vnpu_node *n;
	int32_t in[2] = { x, -1 };
	vnpu_status st = cs_add_synth(s, "Gather", like, 2, 1, &n);

	if (!st)
		st = cb_set_axis(n, axis);
	if (!st)
		st = cb_const_i64(s, 0, &index, 1, &in[1]);
	return st ? st : cb_add_synth(s, n, in, out);
}

/*
 * @n working values @parts (@stride apart) of one shape stacked along a new
 * axis @axis (@reverse: the last first): each reshaped with the new axis,
 * then concatenated, at most COP_MAX_IO at a time.
 */
vnpu_status cb_stack(struct cstate *s, const struct vnpu_node *like,
		     const int32_t *parts, uint32_t n, uint32_t stride, int64_t axis,
		     bool reverse, int32_t *out)
{
	const struct vnpu_tinfo *p0 = &s->vals[parts[0]].info;
	int64_t dims[VNPU_MAX_RANK];
	int32_t rank = p0->rank + 1, shape, *rs_parts;
	vnpu_status st;

	if (p0->rank < 0 || rank > VNPU_MAX_RANK)
		return vnpu_node_error(VNPU_UNSUPPORTED, like, "scan outputs of rank %d", p0->rank);
	if (axis < 0)
		axis += rank;
	if (axis < 0 || axis >= rank)
		return vnpu_node_error(VNPU_PARSE_ERROR, like, "scan output axis out of range");
	for (int32_t d = 0; d < rank; d++)
		dims[d] = d < axis ? p0->dims[d] : d == axis ? 1 : p0->dims[d - 1];
	rs_parts = calloc(n, sizeof(*rs_parts));
	if (!rs_parts)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	st = cb_const_i64(s, 1, dims, rank, &shape);
	for (uint32_t k = 0; !st && k < n; k++) {
		struct vnpu_node *rs;
		int32_t rin[2] = { parts[(size_t)(reverse ? n - 1 - k : k) * stride], shape };

		st = cs_add_synth(s, "Reshape", like, 2, 1, &rs);
		/* a 0 in the shape is an empty dimension, not "copy X's" */
		if (!st)
			st = set_int_attr(rs, "allowzero", 1);
		if (!st)
			st = cb_add_synth(s, rs, rin, &rs_parts[k]);
	}
	if (!st)
		st = cb_concat(s, like, rs_parts, n, axis, out);
	free(rs_parts);
	return st;
}

/* One Concat of the @n (at most COP_MAX_IO) values @in along @axis. */
static vnpu_status concat_once(struct cstate *s, const struct vnpu_node *like,
			       const int32_t *in, uint32_t n, int64_t axis, int32_t *out)
{
	struct vnpu_node *cat;
	vnpu_status st = cs_add_synth(s, "Concat", like, n, 1, &cat);

	if (!st)
		st = cb_set_axis(cat, axis);
	return st ? st : cb_add_synth(s, cat, in, out);
}

/*
 * Concatenate the values @parts along @axis. A Concat takes COP_MAX_IO
 * values, so more are concatenated in runs first, each run as short as
 * lets the rest fit one Concat (a level of runs at a time, runs of
 * COP_MAX_IO while more are needed): every byte is copied once per level,
 * at most three times for 2^18 parts, where a chain of Concats each
 * taking the one before would copy it once per later Concat.
 */
vnpu_status cb_concat(struct cstate *s, const struct vnpu_node *like,
		      const int32_t *parts, uint32_t n, int64_t axis, int32_t *out)
{
	int32_t *vals;
	vnpu_status st = VNPU_OK;

	if (!n) {
		*out = -1;
		return VNPU_OK;
	}
	vals = malloc(n * sizeof(*vals));
	if (!vals)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	memcpy(vals, parts, n * sizeof(*vals));
	while (!st && n > COP_MAX_IO) {
		uint32_t done = 0, k = 0;

		/* vals[0, done) are this level's results, vals[k, n) the rest. */
		while (!st && k < n) {
			uint32_t left = n - k, take;
			int32_t run;

			if (done + left <= COP_MAX_IO) {
				memmove(&vals[done], &vals[k], left * sizeof(*vals));
				done += left;
				break;
			}
			take = done + 1 + left - COP_MAX_IO;
			if (take > COP_MAX_IO)
				take = COP_MAX_IO;
			if (take > left)
				take = left;	/* the next level merges it */
			run = vals[k];
			if (take > 1)
				st = concat_once(s, like, &vals[k], take, axis, &run);
			vals[done++] = run;
			k += take;
		}
		n = done;
	}
	if (!st)
		st = concat_once(s, like, vals, n, axis, out);
	free(vals);
	return st;
}

/* A scalar constant (i64 or bool) for a body input. */
vnpu_status cb_const_scalar(struct cstate *s, vnpu_element_type type, int64_t v, int32_t *out)
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

static vnpu_status walk_node(struct cstate *s, struct walk *w, const struct vnpu_node *n);

/*
 * The guard of an If's branch that cannot take the shapes, under a
 * condition known only at run time: a Gather from a one-element table at
 * index Cast(cond) (the then branch) or Cast(Not(cond)) (the else branch),
 * which faults, naming the If, when that branch is taken.
 */
static vnpu_status guard_branch(struct cstate *s, const struct vnpu_node *n, int32_t cond,
				bool then_branch)
{
	struct vnpu_node *not, *cast, *gather;
	int64_t one = 1;
	int32_t c = cond, idx, table, picked;
	vnpu_status st = VNPU_OK;

	if (!then_branch) {
		st = cs_add_synth(s, "Not", n, 1, 1, &not);
		if (!st)
			st = cb_add_synth(s, not, &cond, &c);
	}
	if (!st)
		st = cs_add_synth(s, "Cast", n, 1, 1, &cast);
	if (!st)
		st = set_int_attr(cast, "to", VNPU_TYPE_I64);
	if (!st)
		st = cb_add_synth(s, cast, &c, &idx);
	if (!st)
		st = cb_const_i64(s, 1, &one, 1, &table);
	if (!st)
		st = cs_add_synth(s, "Gather", n, 2, 1, &gather);
	if (!st)
		st = cb_add_synth(s, gather, (const int32_t[]){ table, idx }, &picked);
	return st;
}

/*
 * Walk a branch of If @n. Under a condition not known at compile time
 * (@guarded), a branch that cannot take the shapes is an error only if it
 * is taken: its ops are dropped, *@failed is set and a guard faults when
 * the condition picks it.
 */
static vnpu_status walk_branch(struct cstate *s, struct walk *w, const struct vnpu_node *n,
			       const struct vnpu_graph *g, int32_t cond, bool guarded,
			       bool then_branch, bool *failed)
{
	uint32_t first = s->num_ops;
	vnpu_status st = cb_walk_graph(s, w, g);

	*failed = false;
	if (!guarded || (st != VNPU_PARSE_ERROR && st != VNPU_INVALID_ARGUMENT))
		return st;
	s->num_ops = first;
	*failed = true;
	return guard_branch(s, n, cond, then_branch);
}

/*
 * If: a known condition walks only its branch. In the main graph each
 * output is a select (the passes make it a view when the condition is
 * known); in a body a known branch's values are used directly. An unknown
 * one walks both: a branch that cannot take the shapes gets a guard, and
 * its outputs are the other branch's.
 */
static vnpu_status walk_if(struct cstate *s, struct walk *w, const struct vnpu_node *n,
			   const int32_t *in)
{
	const struct vnpu_attr *tb = vnpu_node_attr(n, "then_branch");
	const struct vnpu_attr *eb = vnpu_node_attr(n, "else_branch");
	int32_t cond = in[0];
	bool known = cs_is_const(s, cond);
	bool take_then = known && *(const uint8_t *)s->vals[cond].info.data;
	bool t_failed = false, e_failed = false;
	vnpu_status st = VNPU_OK;

	if (!tb || !eb || !tb->g || !eb->g || tb->g->num_outputs < n->num_outputs ||
	    eb->g->num_outputs < n->num_outputs)
		return vnpu_node_error(VNPU_PARSE_ERROR, n, "no branches");
	if (!known || take_then)
		st = walk_branch(s, w, n, tb->g, cond, !known, true, &t_failed);
	if (!st && (!known || !take_then))
		/* Not both: with the then branch failed, the else one must take them. */
		st = walk_branch(s, w, n, eb->g, cond, !known && !t_failed, false, &e_failed);
	for (uint32_t o = 0; !st && o < n->num_outputs; o++) {
		int32_t t = w->map[tb->g->outputs[o]], e = w->map[eb->g->outputs[o]];
		int32_t out = n->outputs[o];
		struct cop *op;

		/* The branch not walked (or dropped) reads as the other. */
		if (t_failed || (known && !take_then))
			t = e;
		if (e_failed || (known && take_then))
			e = t;

		if (out < 0)
			continue;
		if (known && (w->depth || !cb_is_tensor(s, take_then ? t : e))) {
			w->map[out] = take_then ? t : e;
			continue;
		}
		if (!cb_is_tensor(s, t) || !cb_is_tensor(s, e))
			return vnpu_node_error(VNPU_UNSUPPORTED, n,
					       "a sequence or optional output and a condition not known at compile time");
		if (w->depth) {
			const struct vnpu_tinfo *ti = &s->vals[t].info, *ei = &s->vals[e].info;

			if (ti->type != ei->type || ti->rank != ei->rank || ti->rank < 0 ||
			    memcmp(ti->dims, ei->dims, (size_t)ti->rank * sizeof(ti->dims[0])))
				return vnpu_node_error(VNPU_UNSUPPORTED, n,
						       "in a loop body, branches of different types or shapes");
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

	st = !strcmp(n->op, "Loop") ? cb_unroll_loop(s, w, n, in, res) : cb_unroll_scan(s, w, n, in, res);
	for (uint32_t k = 0; !st && k < n->num_outputs; k++)
		if (n->outputs[k] >= 0)
			w->map[n->outputs[k]] = res[k];
	return st;
}

/* 3-D Conv: built from 2-D ones (conv3d.c). */
static vnpu_status walk_conv3d(struct cstate *s, struct walk *w, const struct vnpu_node *n,
			       const int32_t *in)
{
	int32_t res;
	vnpu_status st = cb_conv3d(s, &w->work, n, in, &res);

	if (!st && n->outputs[0] >= 0)
		w->map[n->outputs[0]] = res;
	return st;
}

/* If, Loop, Scan, the sequence ops, any node reading a sequence and 3-D
 * Conv: true when @n is one of those, with its status in @st. */
static bool walk_control(struct cstate *s, struct walk *w, const struct vnpu_node *n,
			 const int32_t *in, vnpu_status *st)
{
	bool seq_in = false;

	for (uint32_t k = 0; k < n->num_inputs; k++)
		seq_in |= !cb_is_tensor(s, in[k]);
	if (n->domain[0] && !seq_in)
		return false;
	if (!strcmp(n->op, "If"))
		*st = walk_if(s, w, n, in);
	else if (cb_is_sequence_op(n->op) || (!strcmp(n->op, "Identity") && seq_in))
		*st = cb_walk_sequence_op(s, w, n, in);
	else if (!strcmp(n->op, "Loop") || (!strcmp(n->op, "Scan") && !seq_in))
		*st = walk_loop(s, w, n, in);
	else if (!seq_in && cb_is_conv3d(s, n, in))
		*st = walk_conv3d(s, w, n, in);
	else if (seq_in)
		*st = vnpu_node_error(VNPU_UNSUPPORTED, n, "an input is a sequence or an optional");
	else
		return false;
	return true;
}

/*
 * Opset < 7 broadcasting (vnpu_legacy_broadcast()): B, input 1, is
 * reshaped with 1s after its dimensions so that the op broadcasts as ONNX
 * does today. A B that does not fit is inference's error.
 */
static vnpu_status align_legacy_b(struct cstate *s, const struct vnpu_node *n, int32_t *in,
				  bool *remapped)
{
	struct vnpu_tinfo aligned;
	struct vnpu_node *rs;
	int32_t rin[2];
	vnpu_status st;

	if (n->num_inputs != 2 || in[0] < 0 || in[1] < 0 ||
	    vnpu_legacy_broadcast(s->m, n, &s->vals[in[0]].info, &s->vals[in[1]].info,
				  &aligned) <= 0 ||
	    aligned.rank == s->vals[in[1]].info.rank)
		return VNPU_OK;
	if (!vnpu_tinfo_static(&aligned))
		return vnpu_node_error(VNPU_UNSUPPORTED, n,
				       "legacy broadcasting of an input whose shape is not known");
	rin[0] = in[1];
	st = cb_const_i64(s, 1, aligned.dims, aligned.rank, &rin[1]);
	if (!st)
		st = cs_add_synth(s, "Reshape", n, 2, 1, &rs);
	if (!st)
		st = cb_add_synth(s, rs, rin, &in[1]);
	*remapped |= !st;
	return st;
}

static vnpu_status walk_node(struct cstate *s, struct walk *w, const struct vnpu_node *n)
{
	int32_t in[COP_MAX_IO], out[COP_MAX_IO];
	bool remapped = false;
	vnpu_status st = vnpu_work_charge(&w->work, n, 1);

	if (st)
		return st;
	if (n->num_inputs > COP_MAX_IO || n->num_outputs > COP_MAX_IO) {
		if (!w->depth && outputs_folded(s, n->outputs, n->num_outputs))
			return VNPU_OK;
		return vnpu_node_error(VNPU_UNSUPPORTED, n, "more than %d inputs or outputs",
				       COP_MAX_IO);
	}
	for (uint32_t k = 0; k < n->num_inputs; k++) {
		in[k] = n->inputs[k] >= 0 ? w->map[n->inputs[k]] : -1;
		remapped |= in[k] != n->inputs[k];
	}
	st = align_legacy_b(s, n, in, &remapped);
	if (st)
		return st;
	if (!w->depth && !remapped && outputs_folded(s, n->outputs, n->num_outputs))
		return VNPU_OK;
	if (walk_control(s, w, n, in, &st)) {
		/* A query goes on: the node is answered by its op type. */
		if (st == VNPU_UNSUPPORTED && s->query && !w->depth)
			return add_op(s, n, in, n->outputs);
		return st;
	}
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

vnpu_status cb_walk_graph(struct cstate *s, struct walk *w, const struct vnpu_graph *g)
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
	if (s->query && (t->kind == VNPU_TK_TENSOR || t->num_elems < 0))
		return VNPU_OK;	/* a node before it did not compile: it is reported */
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
	infos = vnpu_model_seed_infos(m);
	if (!infos)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	st = vnpu_graph_infer(m, &m->main, infos, COMPILE_FOLD_LIMIT, false, &w.work);
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
	st = cb_walk_graph(s, &w, &m->main);
	for (uint32_t o = 0; !st && o < m->main.num_outputs; o++)
		st = add_output(s, &m->values[m->main.outputs[o]], w.map[m->main.outputs[o]]);
	free(w.map);
	return st;
}

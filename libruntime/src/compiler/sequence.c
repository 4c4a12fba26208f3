// SPDX-License-Identifier: MIT
/*
 * Sequences and optionals, resolved at compile time: the device only sees
 * tensors, so a sequence is a working value listing its elements' values
 * (lengths and positions must be constants), an optional with a value is
 * that value and one without is a NONE value. The sequence ops build such
 * values; SplitToSequence and ConcatFromSequence add Slice, Gather and
 * Concat nodes, SequenceMap instantiates its body per element.
 */
#include <stdlib.h>
#include <string.h>

#include "build.h"
#include "error.h"

bool cb_is_tensor(const struct cstate *s, int32_t v)
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
	return vnpu_node_error(VNPU_UNSUPPORTED, n, "%s", what);
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
		return vnpu_node_error(VNPU_INVALID_ARGUMENT, n,
				       "position %lld out of range for a sequence of %lld",
				       (long long)(i < n->num_inputs && in[i] >= 0 ? p : dflt),
				       (long long)len);
	*out = p;
	return VNPU_OK;
}

/* SequenceInsert and SequenceErase: a new sequence with @t inserted at, or
 * the element at, the position. */
static vnpu_status seq_edit(struct cstate *s, const struct vnpu_node *n, const int32_t *in,
			    bool insert, int32_t *out)
{
	const struct vnpu_tinfo *q = NULL;
	int32_t *e;
	int64_t pos, len;
	vnpu_status st = need_seq(s, n, in, 0, &q);

	if (st)
		return st;
	len = q->num_elems;
	if (insert && (n->num_inputs < 2 || in[1] < 0 || !cb_is_tensor(s, in[1])))
		return vnpu_node_error(VNPU_PARSE_ERROR, n, "needs a tensor to insert");
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

/* A Slice of @x to [@begin, @end) along @axis. */
static vnpu_status slice_value(struct cstate *s, const struct vnpu_node *like, int32_t x,
			       int64_t axis, int64_t begin, int64_t end, int32_t *out)
{
	struct vnpu_node *n;
	int32_t in[4] = { x, -1, -1, -1 };
	vnpu_status st = cs_add_synth(s, "Slice", like, 4, 1, &n);

	if (!st)
		st = cb_const_i64(s, 1, &begin, 1, &in[1]);
	if (!st)
		st = cb_const_i64(s, 1, &end, 1, &in[2]);
	if (!st)
		st = cb_const_i64(s, 1, &axis, 1, &in[3]);
	return st ? st : cb_add_synth(s, n, in, out);
}

/* SplitToSequence: pieces of 1 (keepdims 0: without the axis), of the
 * scalar split, or of the sizes a 1-D split lists. */
static vnpu_status seq_split(struct cstate *s, const struct vnpu_node *n, const int32_t *in,
			     int32_t *out)
{
	/* Copies of what is read while values are added (the table moves). */
	const struct vnpu_tinfo *x = &s->vals[in[0]].info, *sp = NULL;
	int64_t axis = vnpu_attr_int(n, "axis", 0), len, chunk = 1, begin = 0, num = 0;
	bool keep = vnpu_attr_int(n, "keepdims", 1) != 0, sizes = false;
	vnpu_element_type type = x->type, split_type = VNPU_TYPE_I64;
	const void *split = NULL;
	int32_t *parts = NULL;
	uint32_t np = 0;
	vnpu_status st = VNPU_OK;

	if (!vnpu_tinfo_static(x))
		return seq_error(n, "the input's shape is not known at compile time");
	if (axis < 0)
		axis += x->rank;
	if (axis < 0 || axis >= x->rank)
		return vnpu_node_error(VNPU_PARSE_ERROR, n, "axis out of range");
	len = x->dims[axis];
	if (n->num_inputs > 1 && in[1] >= 0) {
		sp = &s->vals[in[1]].info;
		if (!cs_is_const(s, in[1]) || sp->rank > 1 || vnpu_type_is_float(sp->type))
			return seq_error(n, "split is not a constant integer tensor: not known at compile time");
		sizes = sp->rank == 1;
		num = sizes ? sp->dims[0] : 0;
		split = sp->data;	/* the constant's own block: it stays */
		split_type = sp->type;
		chunk = sizes ? 0 : vnpu_elem_get_i(split, split_type, 0);
		keep = true;
		if (!sizes && chunk < 1)
			return vnpu_node_error(VNPU_PARSE_ERROR, n, "split %lld", (long long)chunk);
	}
	parts = malloc(((size_t)(sizes ? num : len) + 1) * sizeof(int32_t));
	if (!parts)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	while (!st && (sizes ? np < (uint64_t)num : begin < len)) {
		/* A scalar split: the last piece may be smaller. */
		int64_t size = sizes ? vnpu_elem_get_i(split, split_type, np) :
			       chunk < len - begin ? chunk : len - begin;

		if (size < 0 || size > len - begin) {
			st = vnpu_node_error(VNPU_PARSE_ERROR, n,
					     "the split sizes do not fit dimension %lld",
					     (long long)len);
			break;
		}
		if (!keep)
			st = cb_pick(s, n, in[0], axis, begin, &parts[np++]);
		else
			st = slice_value(s, n, in[0], axis, begin, begin + size, &parts[np++]);
		begin += size;
	}
	if (!st && sizes && begin != len)
		st = vnpu_node_error(VNPU_PARSE_ERROR, n,
				     "the split sizes add up to %lld, not %lld", (long long)begin,
				     (long long)len);
	if (!st)
		st = new_sequence(s, VNPU_TK_SEQUENCE, type, parts, np, 1, out);
	free(parts);
	return st;
}

/* SequenceMap: the body once per element of the first input (sequence
 * inputs give their element, tensors themselves); each output a sequence. */
static vnpu_status seq_map(struct cstate *s, struct walk *w, const struct vnpu_node *n,
			   const int32_t *in, int32_t *res)
{
	const struct vnpu_attr *ba = vnpu_node_attr(n, "body");
	const struct vnpu_tinfo *q = NULL;
	int32_t bin[COP_MAX_IO];
	struct unroll u;
	vnpu_status st = need_seq(s, n, in, 0, &q);

	if (st)
		return st;
	if (!ba || !ba->g || ba->g->num_inputs != n->num_inputs ||
	    ba->g->num_outputs != n->num_outputs)
		return vnpu_node_error(VNPU_PARSE_ERROR, n,
				       "its body does not match its inputs and outputs");
	for (uint32_t j = 1; j < n->num_inputs; j++)
		if (in[j] < 0 || (!cb_is_tensor(s, in[j]) &&
				  s->vals[in[j]].info.num_elems != q->num_elems))
			return vnpu_node_error(VNPU_INVALID_ARGUMENT, n,
					       "input %u is absent or a sequence of another length",
					       j);
	st = cb_unroll_init(&u, n, ba->g, 0, 0, NULL);
	for (int32_t i = 0, len = q->num_elems; !st && i < len; i++) {
		for (uint32_t j = 0; j < n->num_inputs; j++)
			bin[j] = cb_is_tensor(s, in[j]) ? in[j] : s->vals[in[j]].info.elems[i];
		st = cb_unroll_once(s, w, &u, bin);
	}
	for (uint32_t k = 0; !st && k < n->num_outputs; k++) {
		vnpu_element_type type = u.iters ? s->vals[u.scans[k]].info.type : VNPU_TYPE_UNDEFINED;

		st = new_sequence(s, VNPU_TK_SEQUENCE, type, u.scans ? &u.scans[k] : NULL, u.iters,
				  u.num_scan, &res[k]);
	}
	cb_unroll_fini(&u);
	return st;
}

static vnpu_status seq_empty(struct cstate *s, struct walk *w, const struct vnpu_node *n,
			     const int32_t *in, int32_t *res)
{
	vnpu_element_type type = (vnpu_element_type)vnpu_attr_int(n, "dtype", VNPU_TYPE_F32);

	(void)w;
	(void)in;
	if (type == VNPU_TYPE_STRING || !vnpu_element_type_size(type))
		return vnpu_node_error(VNPU_UNSUPPORTED, n, "dtype %d", (int)type);
	return new_sequence(s, VNPU_TK_SEQUENCE, type, NULL, 0, 1, res);
}

static vnpu_status seq_construct(struct cstate *s, struct walk *w, const struct vnpu_node *n,
				 const int32_t *in, int32_t *res)
{
	(void)w;
	if (!n->num_inputs)
		return vnpu_node_error(VNPU_PARSE_ERROR, n, "no inputs");
	for (uint32_t i = 0; i < n->num_inputs; i++)
		if (in[i] < 0 || !cb_is_tensor(s, in[i]) ||
		    s->vals[in[i]].info.type != s->vals[in[0]].info.type)
			return vnpu_node_error(VNPU_PARSE_ERROR, n,
					       "input %u is not a tensor of the first's type", i);
	return new_sequence(s, VNPU_TK_SEQUENCE, s->vals[in[0]].info.type, in, n->num_inputs, 1,
			    res);
}

static vnpu_status seq_insert(struct cstate *s, struct walk *w, const struct vnpu_node *n,
			      const int32_t *in, int32_t *res)
{
	(void)w;
	return seq_edit(s, n, in, true, res);
}

static vnpu_status seq_erase(struct cstate *s, struct walk *w, const struct vnpu_node *n,
			     const int32_t *in, int32_t *res)
{
	(void)w;
	return seq_edit(s, n, in, false, res);
}

static vnpu_status seq_at(struct cstate *s, struct walk *w, const struct vnpu_node *n,
			  const int32_t *in, int32_t *res)
{
	const struct vnpu_tinfo *q = NULL;
	vnpu_status st = need_seq(s, n, in, 0, &q);
	int64_t pos;

	(void)w;
	if (!st && (n->num_inputs < 2 || in[1] < 0))
		st = vnpu_node_error(VNPU_PARSE_ERROR, n, "no position");
	if (!st)
		st = seq_position(s, n, in, 1, q->num_elems, 0, false, &pos);
	if (!st)
		res[0] = q->elems[pos];
	return st;
}

static vnpu_status seq_length(struct cstate *s, struct walk *w, const struct vnpu_node *n,
			      const int32_t *in, int32_t *res)
{
	const struct vnpu_tinfo *q = NULL;
	vnpu_status st = need_seq(s, n, in, 0, &q);

	(void)w;
	return st ? st : cb_const_scalar(s, VNPU_TYPE_I64, q->num_elems, res);
}

/* ConcatFromSequence: along an axis, or a new one (a stack). */
static vnpu_status seq_concat(struct cstate *s, struct walk *w, const struct vnpu_node *n,
			      const int32_t *in, int32_t *res)
{
	int64_t axis = vnpu_attr_int(n, "axis", 0);
	const struct vnpu_tinfo *q = NULL;
	vnpu_status st = need_seq(s, n, in, 0, &q);

	(void)w;
	if (st)
		return st;
	if (!q->num_elems)
		return vnpu_node_error(VNPU_INVALID_ARGUMENT, n, "an empty sequence");
	if (vnpu_attr_int(n, "new_axis", 0))
		return cb_stack(s, n, q->elems, (uint32_t)q->num_elems, 1, axis, false, res);
	return cb_concat(s, n, q->elems, (uint32_t)q->num_elems, axis, res);
}

static vnpu_status seq_split_op(struct cstate *s, struct walk *w, const struct vnpu_node *n,
				const int32_t *in, int32_t *res)
{
	(void)w;
	if (!n->num_inputs || in[0] < 0 || !cb_is_tensor(s, in[0]))
		return vnpu_node_error(VNPU_PARSE_ERROR, n, "needs a tensor");
	return seq_split(s, n, in, res);
}

/* Optional: its input, or NONE. */
static vnpu_status opt_make(struct cstate *s, struct walk *w, const struct vnpu_node *n,
			    const int32_t *in, int32_t *res)
{
	(void)w;
	if (n->num_inputs && in[0] >= 0) {
		res[0] = in[0];
		return VNPU_OK;
	}
	return new_sequence(s, VNPU_TK_NONE, VNPU_TYPE_UNDEFINED, NULL, 0, 1, res);
}

static vnpu_status opt_has(struct cstate *s, struct walk *w, const struct vnpu_node *n,
			   const int32_t *in, int32_t *res)
{
	(void)w;
	return cb_const_scalar(s, VNPU_TYPE_BOOL, n->num_inputs && in[0] >= 0 &&
			       s->vals[in[0]].info.kind != VNPU_TK_NONE, res);
}

/* OptionalGetElement, and Identity of a sequence or NONE: the value. */
static vnpu_status opt_get(struct cstate *s, struct walk *w, const struct vnpu_node *n,
			   const int32_t *in, int32_t *res)
{
	(void)w;
	if (!n->num_inputs || in[0] < 0 || s->vals[in[0]].info.kind == VNPU_TK_NONE)
		return vnpu_node_error(VNPU_INVALID_ARGUMENT, n, "the optional has no value");
	res[0] = in[0];
	return VNPU_OK;
}

static const struct seq_op {
	const char *op;
	vnpu_status (*fn)(struct cstate *s, struct walk *w, const struct vnpu_node *n,
			  const int32_t *in, int32_t *res);
} seq_ops[] = {
	{ "SequenceEmpty", seq_empty }, { "SequenceConstruct", seq_construct },
	{ "SequenceInsert", seq_insert }, { "SequenceErase", seq_erase },
	{ "SequenceAt", seq_at }, { "SequenceLength", seq_length },
	{ "ConcatFromSequence", seq_concat }, { "SplitToSequence", seq_split_op },
	{ "SequenceMap", seq_map }, { "Optional", opt_make },
	{ "OptionalHasElement", opt_has }, { "OptionalGetElement", opt_get },
	{ "Identity", opt_get },
};

static const struct seq_op *find_seq_op(const char *op)
{
	for (size_t i = 0; i < sizeof(seq_ops) / sizeof(seq_ops[0]); i++)
		if (!strcmp(op, seq_ops[i].op))
			return &seq_ops[i];
	return NULL;
}

bool cb_is_sequence_op(const char *op)
{
	return strcmp(op, "Identity") && find_seq_op(op);
}

/* The ops of sequences and optionals: their outputs become working values
 * built here (sequences of values, NONE, constants), never device work. */
vnpu_status cb_walk_sequence_op(struct cstate *s, struct walk *w, const struct vnpu_node *n,
				const int32_t *in)
{
	const struct seq_op *op = find_seq_op(n->op);
	int32_t res[COP_MAX_IO];
	vnpu_status st;

	res[0] = -1;
	st = op ? op->fn(s, w, n, in, res) :
	     vnpu_node_error(VNPU_UNSUPPORTED, n, "not an op of sequences");
	for (uint32_t k = 0; !st && k < n->num_outputs; k++)
		if (n->outputs[k] >= 0)
			w->map[n->outputs[k]] = res[k];
	return st;
}

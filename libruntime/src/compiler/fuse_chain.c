// SPDX-License-Identifier: MIT
/*
 * Element-wise ops that feed each other become one CHAIN layer, which
 * reads its inputs once and writes its output once whatever the number
 * of steps: HardSwish written out as x * Clip(x + 3, 0, 6) / 6 (when
 * fuse_act.c left it), a residual Add and its ReLU, a scale and a bias...
 *
 * A chain grows backwards from its last op (the root): an op joins when
 * it is an f32 UNARY function (a node or a COP_ACT) or an Add, Sub, Mul,
 * Div, Max or Min of two f32 values, its output is read by one op of the
 * chain only (no model output, no view of it) and broadcasts to the
 * root's output, and the chain keeps at most VNPU_CHAIN_MAX_STEPS steps
 * and VNPU_CHAIN_MAX_INPUTS input tensors (scalar constants of binary
 * ops are immediates, not inputs). Its steps are its ops in program
 * order, each the same function on the same operands as the layer it
 * replaces, so the fused program gives the unfused one's bits. A Pow by
 * the scalar constant 2 (a power spectrum's squares) is the step x * x:
 * BINARY's square is that one product too, rounded once, and only a
 * NaN's payload differs (Pow gives the engine's one quiet NaN).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "fuse.h"

struct chain {
	int32_t ops[VNPU_CHAIN_MAX_STEPS];	/* ascending */
	uint32_t n;
	int32_t ins[VNPU_CHAIN_MAX_INPUTS];
	uint32_t num_in;
	const struct vnpu_tinfo *y;
};

static const struct { const char *op; uint32_t func; } chain_bins[] = {
	{ "Add", VNPU_BIN_ADD }, { "Sub", VNPU_BIN_SUB }, { "Mul", VNPU_BIN_MUL },
	{ "Div", VNPU_BIN_DIV }, { "Max", VNPU_BIN_MAX }, { "Min", VNPU_BIN_MIN },
};

/* @op is a Pow of an f32 value by the scalar f32 constant 2. */
static bool is_square(const struct cstate *s, const struct cop *op)
{
	const struct vnpu_tinfo *e;

	if (op->kind != COP_NODE || op->node->domain[0] || strcmp(op->node->op, "Pow") ||
	    op->num_in != 2 || op->in[0] < 0 || op->in[1] < 0 ||
	    cs_info(s, op->in[0])->type != VNPU_TYPE_F32 || !cs_is_const(s, op->in[1]))
		return false;
	e = cs_info(s, op->in[1]);
	return e->type == VNPU_TYPE_F32 && vnpu_tinfo_elems(e) == 1 &&
	       *(const float *)e->data == 2.0f;
}

/* Operand @j of step @op: x twice for a square. */
static int32_t step_in(const struct cstate *s, const struct cop *op, uint32_t j)
{
	return j && is_square(s, op) ? op->in[0] : op->in[j];
}

/* The step @op computes (its operands aside), when it can be one. */
static bool step_of(const struct cstate *s, const struct cop *op, struct vnpu_chain_step *st)
{
	struct vnpu_layer_act act;

	memset(st, 0, sizeof(*st));
	if (op->dead || op->num_out != 1 || op->out[0] < 0 ||
	    cs_info(s, op->out[0])->type != VNPU_TYPE_F32 ||
	    !vnpu_tinfo_static(cs_info(s, op->out[0])))
		return false;
	if (cl_node_act(s, op, &act)) {
		*st = (struct vnpu_chain_step){ .kind = VNPU_CHAIN_UNARY, .func = act.func,
						.alpha = act.alpha, .beta = act.beta };
		return true;
	}
	if (is_square(s, op)) {
		*st = (struct vnpu_chain_step){ .kind = VNPU_CHAIN_BINARY, .func = VNPU_BIN_MUL };
		return true;
	}
	if (op->kind != COP_NODE || op->node->domain[0] || op->num_in != 2 || op->in[0] < 0 ||
	    op->in[1] < 0 || cs_info(s, op->in[0])->type != VNPU_TYPE_F32 ||
	    cs_info(s, op->in[1])->type != VNPU_TYPE_F32)
		return false;
	for (size_t i = 0; i < sizeof(chain_bins) / sizeof(chain_bins[0]); i++)
		if (!strcmp(op->node->op, chain_bins[i].op)) {
			st->kind = VNPU_CHAIN_BINARY;
			st->func = chain_bins[i].func;
			return true;
		}
	return false;
}

/* @t broadcasts (numpy, right-aligned) to @y. */
static bool bcasts_to(const struct vnpu_tinfo *t, const struct vnpu_tinfo *y)
{
	if (!vnpu_tinfo_static(t) || t->rank > y->rank)
		return false;
	for (int32_t d = 0; d < t->rank; d++) {
		int64_t a = t->dims[d], b = y->dims[d + y->rank - t->rank];

		if (a != b && a != 1)
			return false;
	}
	return true;
}

/* A scalar f32 constant: a binary step's immediate. */
static bool is_imm(const struct cstate *s, int32_t v, uint32_t *bits)
{
	const struct vnpu_tinfo *t = cs_info(s, v);

	if (!cs_is_const(s, v) || t->type != VNPU_TYPE_F32 || vnpu_tinfo_elems(t) != 1)
		return false;
	memcpy(bits, t->data, 4);
	return ((*bits >> 23) & 0xff) != 0xff;	/* the engine takes finite ones */
}

static int32_t chain_pos(const struct chain *c, int32_t op)
{
	for (uint32_t i = 0; i < c->n; i++)
		if (c->ops[i] == op)
			return (int32_t)i;
	return -1;
}

/* The member of @c writing @v, or -1. */
static int32_t member_writing(const struct cstate *s, const struct chain *c, int32_t v)
{
	for (uint32_t i = 0; i < c->n; i++)
		if (s->ops[c->ops[i]].out[0] == v)
			return (int32_t)i;
	return -1;
}

/*
 * The operands of @c's steps: the input tensors in @c->ins, each an
 * immediate where the step is binary and the other operand is not one.
 * False when more than VNPU_CHAIN_MAX_INPUTS tensors are needed.
 */
static bool chain_operands(const struct cstate *s, struct chain *c, struct vnpu_layer_chain *lc)
{
	c->num_in = 0;
	for (uint32_t k = 0; k < c->n; k++) {
		const struct cop *op = &s->ops[c->ops[k]];
		struct vnpu_chain_step *st = &lc->steps[k];
		uint32_t nops = st->kind == VNPU_CHAIN_BINARY ? 2 : 1, bits;
		bool imm_used = false;

		for (uint32_t j = 0; j < nops; j++) {
			int32_t v = step_in(s, op, j), w = member_writing(s, c, v), ref;
			uint32_t i;

			if (w >= 0) {
				ref = VNPU_CHAIN_STEP(w);
			} else if (nops == 2 && !imm_used && is_imm(s, v, &bits)) {
				ref = VNPU_CHAIN_IMM;
				*(j ? &st->beta : &st->alpha) = bits;
				imm_used = true;
			} else {
				for (i = 0; i < c->num_in && c->ins[i] != v; i++)
					;
				if (i == VNPU_CHAIN_MAX_INPUTS)
					return false;
				c->ins[i] = v;
				c->num_in += i == c->num_in;
				ref = VNPU_CHAIN_IN(i);
			}
			*(j ? &st->b : &st->a) = (uint32_t)ref;
		}
	}
	return true;
}

/* Steps of @c (members in order) into @lc; false when they do not fit. */
static bool chain_steps(const struct cstate *s, struct chain *c, struct vnpu_layer_chain *lc)
{
	memset(lc, 0, sizeof(*lc));
	lc->num_steps = c->n;
	for (uint32_t k = 0; k < c->n; k++)
		if (!step_of(s, &s->ops[c->ops[k]], &lc->steps[k]))
			return false;
	return chain_operands(s, c, lc);
}

/* Adds op @p to @c (in order) when the chain still fits; false if not. */
static bool try_join(const struct cstate *s, struct chain *c, int32_t p)
{
	struct vnpu_layer_chain lc;
	struct chain t = *c;
	uint32_t at;

	if (c->n == VNPU_CHAIN_MAX_STEPS)
		return false;
	for (at = t.n; at && t.ops[at - 1] > p; at--)
		t.ops[at] = t.ops[at - 1];
	t.ops[at] = p;
	t.n++;
	if (!chain_steps(s, &t, &lc))
		return false;
	*c = t;
	return true;
}

/*
 * Grows @c from its root: each value a member reads that another
 * candidate op writes for that member alone joins with its writer.
 */
static void grow(const struct cstate *s, const struct uses *u, struct chain *c, bool *mine,
		 const bool *taken)
{
	struct vnpu_chain_step st;

	for (uint32_t k = 0; k < c->n; k++) {
		const struct cop *op = &s->ops[c->ops[k]];

		for (uint32_t j = 0; j < op->num_in && j < 2; j++) {
			int32_t v = op->in[j], p = v < 0 ? -1 : cf_producer(s, u, v);

			if (p < 0 || chain_pos(c, p) >= 0 || taken[p] || s->vals[v].alias >= 0 ||
			    s->ops[p].out[0] != v || !step_of(s, &s->ops[p], &st) ||
			    !bcasts_to(cs_info(s, v), c->y) || !cf_only_read_by(s, u, v, mine))
				continue;
			if (try_join(s, c, p)) {
				mine[p] = true;
				k = (uint32_t)-1;	/* the order changed: scan again */
				break;
			}
		}
	}
}

/* @c's ops' type names joined into @type ("Add+Clip+Mul+Div"). */
static void chain_type(const struct cstate *s, const struct chain *c, char *type)
{
	char buf[sizeof(s->ops[0].type)];
	size_t len = 0;

	for (uint32_t k = 0; k < c->n && len + 1 < sizeof(buf); k++) {
		const struct cop *op = &s->ops[c->ops[k]];

		if (k)
			buf[len++] = '+';
		cs_strlcpy(buf + len, sizeof(buf) - len,
			   op->kind == COP_NODE ? op->node->op : op->type);
		len += strlen(buf + len);
	}
	buf[len] = 0;
	memcpy(type, buf, sizeof(buf));
}

/* @c becomes one COP_CHAIN op at its root; the others run in it. */
static vnpu_status commit(struct cstate *s, struct uses *u, struct chain *c)
{
	struct cop *root = &s->ops[c->ops[c->n - 1]];
	struct vnpu_layer_chain lc;
	vnpu_status st = VNPU_OK;

	if (!chain_steps(s, c, &lc))
		return VNPU_OK;
	chain_type(s, c, root->type);
	root->kind = COP_CHAIN;
	root->chain = lc;
	root->num_in = c->num_in;
	for (uint32_t i = 0; i < c->num_in; i++)
		root->in[i] = c->ins[i];
	for (uint32_t i = 0; !st && i < c->num_in; i++)
		st = cf_uses_add(s, u, false, c->ins[i], root);
	for (uint32_t k = 0; k + 1 < c->n; k++) {
		s->ops[c->ops[k]].dead = true;
		s->ops[c->ops[k]].fused_into = c->ops[c->n - 1];
	}
	return st;
}

vnpu_status cf_fuse_chains(struct cstate *s, struct uses *u)
{
	bool *mine, *taken;
	vnpu_status st = VNPU_OK;

	if (s->opt.primary_layer_ops && !(s->opt.primary_layer_ops >> VNPU_LAYER_CHAIN & 1))
		return VNPU_OK;	/* the primary device does not take CHAIN */
	mine = calloc(s->num_ops + 1, sizeof(*mine));
	taken = calloc(s->num_ops + 1, sizeof(*taken));
	if (!mine || !taken) {
		free(mine);
		free(taken);
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	}
	for (uint32_t i = s->num_ops; !st && i-- > 0;) {
		struct vnpu_chain_step step;
		struct chain c = { .ops = { (int32_t)i }, .n = 1 };

		if (taken[i] || !step_of(s, &s->ops[i], &step))
			continue;
		c.y = cs_info(s, s->ops[i].out[0]);
		mine[i] = true;
		grow(s, u, &c, mine, taken);
		for (uint32_t k = 0; k < c.n; k++) {
			mine[c.ops[k]] = false;
			taken[c.ops[k]] = true;
		}
		if (c.n >= 2) {
			s->cur_op = i;
			st = commit(s, u, &c);
		}
	}
	free(mine);
	free(taken);
	return st;
}

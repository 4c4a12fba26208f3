// SPDX-License-Identifier: MIT
/*
 * Scaled dot-product attention written out, as exporters write a
 * transformer's self-attention, becomes the one ATTENTION layer:
 *
 *	[Qh = Transpose(Qr)]		any perm; else Qh as it is
 *	[KT = Transpose(Kr)]		any perm (K transposed by it); else
 *					KT as it is (K given transposed)
 *	[Vh = Transpose(Vr)]		any perm; else Vh as it is
 *	s  = MatMul(Qh, KT)		[B, H, M, D] x [B, H, D, N]
 *	[s = Div(s, c) or Mul(s, c)]	c a finite nonzero f32 scalar constant
 *	[s = Add(s, mask)]		mask f32 broadcasting to s, either side
 *	p  = Softmax(s)			on the last axis
 *	o  = MatMul(p, Vh)		[B, H, N, E]
 *	[y = Transpose(o)]		a perm that keeps E last
 *
 * The layer reads Qr, Kr and Vr through strides (the Transposes go) and
 * writes y through strides (so does its Transpose). Every value but the
 * last is read by these ops only (no model output, no view), f32 and of
 * static shape; a Transpose whose output something else reads stays, and
 * the layer reads that output. The layer computes what the ops it
 * replaces compute, in the same operations (vnpu_eng_attn.c): the fused
 * program gives the unfused one's bits. Without a scale the layer
 * multiplies by 1, which changes no value.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "fuse.h"
#include "lower.h"

/* The ops of one match: three Transposes, two MatMuls, scale, mask, Softmax, Transpose. */
#define ATTN_MAX_OPS 9

struct attn_match {
	int32_t ops[ATTN_MAX_OPS];
	uint32_t n;
	int32_t src[3];		/* Q, KT, V: the values the layer reads */
	int32_t mask;		/* or -1 */
	int32_t y;		/* the value it writes */
	int32_t last;		/* the op it becomes */
	struct cop_attn a;
};

/* The live op writing @v when it is @name with @ni inputs and one output, else -1. */
static int32_t made_by(const struct cstate *s, const struct uses *u, int32_t v, const char *name,
		       uint32_t ni)
{
	int32_t p = v >= 0 && s->vals[v].alias < 0 ? cf_producer(s, u, v) : -1;

	if (p < 0 || !cf_op_is(&s->ops[p], name) || s->ops[p].num_out != 1 ||
	    s->ops[p].num_in != ni || s->ops[p].out[0] != v)
		return -1;
	return p;
}

/* A static f32 value of rank 4. */
static bool f32_rank4(const struct cstate *s, int32_t v)
{
	const struct vnpu_tinfo *t = v >= 0 ? cs_info(s, v) : NULL;

	return t && t->type == VNPU_TYPE_F32 && t->rank == 4 && vnpu_tinfo_static(t);
}

/* A Transpose's perm of rank 4 (ONNX's default: reversed) into @perm. */
static bool transpose_perm(const struct cop *op, uint8_t *perm)
{
	const struct vnpu_attr *a = vnpu_node_attr(op->node, "perm");
	uint32_t seen = 0;

	for (uint32_t i = 0; i < 4; i++) {
		int64_t p = a ? (a->n == 4 ? a->ints[i] : -1) : 3 - (int64_t)i;

		if (p < 0 || p > 3 || (seen >> p & 1))
			return false;
		seen |= 1u << p;
		perm[i] = (uint8_t)p;
	}
	return true;
}

/*
 * Operand @i (rank 4, read by the pattern's @reader) from the Transpose
 * writing it when only @reader reads it: the Transpose's input and perm;
 * else @v itself.
 */
static void operand(const struct cstate *s, const struct uses *u, struct attn_match *m,
		    uint32_t i, int32_t v, int32_t reader, bool *mine)
{
	int32_t t = made_by(s, u, v, "Transpose", 1);
	bool alone;

	m->src[i] = v;
	for (uint8_t d = 0; d < 4; d++)
		m->a.perm[i][d] = d;
	if (t < 0 || !f32_rank4(s, s->ops[t].in[0]) || !transpose_perm(&s->ops[t], m->a.perm[i])) {
		for (uint8_t d = 0; d < 4; d++)
			m->a.perm[i][d] = d;
		return;
	}
	mine[reader] = true;
	alone = cf_only_read_by(s, u, v, mine);
	mine[reader] = false;
	if (!alone) {
		for (uint8_t d = 0; d < 4; d++)
			m->a.perm[i][d] = d;
		return;
	}
	m->src[i] = s->ops[t].in[0];
	m->ops[m->n++] = t;
}

/* A finite nonzero f32 scalar constant. */
static bool scale_of(const struct cstate *s, int32_t v, float *out)
{
	const struct vnpu_tinfo *t = v >= 0 ? cs_info(s, v) : NULL;

	if (!t || !cs_is_const(s, v) || t->type != VNPU_TYPE_F32 || vnpu_tinfo_elems(t) != 1)
		return false;
	*out = *(const float *)t->data;
	return isfinite(*out) && *out != 0;
}

/* f32 @mask of rank 4 at most broadcasting to @sv's shape, static. */
static bool mask_ok(const struct cstate *s, int32_t mask, int32_t sv)
{
	const struct vnpu_tinfo *t = mask >= 0 ? cs_info(s, mask) : NULL, *x = cs_info(s, sv);

	if (!t || t->type != VNPU_TYPE_F32 || !vnpu_tinfo_static(t) || t->rank > 4)
		return false;
	for (int32_t d = 0; d < t->rank; d++)
		if (t->dims[d] != 1 && t->dims[d] != x->dims[d + 4 - t->rank])
			return false;
	return true;
}

/* The scores before Softmax: [Add(., mask)] of [Div or Mul(., c)] of MatMul. */
static int32_t match_scores(const struct cstate *s, const struct uses *u, int32_t x,
			    struct attn_match *m)
{
	int32_t add = made_by(s, u, x, "Add", 2), op;
	float c = 1.0f;

	m->mask = -1;
	if (add >= 0) {
		const struct cop *a = &s->ops[add];

		for (int side = 0; side < 2 && m->mask < 0; side++) {
			int32_t in = a->in[side], other = a->in[1 - side];

			if (in == other || !cf_same_shape(cs_info(s, in), cs_info(s, x)))
				continue;
			if ((made_by(s, u, in, "Div", 2) >= 0 || made_by(s, u, in, "Mul", 2) >= 0 ||
			     made_by(s, u, in, "MatMul", 2) >= 0) && mask_ok(s, other, x)) {
				m->mask = other;
				x = in;
			}
		}
		if (m->mask < 0)
			return -1;
		m->ops[m->n++] = add;
		m->a.flags |= VNPU_ATTN_F_MASK;
	}
	op = made_by(s, u, x, "Div", 2);
	if (op >= 0 && !scale_of(s, s->ops[op].in[1], &c))
		return -1;
	if (op >= 0) {
		m->a.flags |= VNPU_ATTN_F_DIV;
		x = s->ops[op].in[0];
	} else if ((op = made_by(s, u, x, "Mul", 2)) >= 0) {
		const struct cop *mul = &s->ops[op];

		if (scale_of(s, mul->in[1], &c))
			x = mul->in[0];
		else if (scale_of(s, mul->in[0], &c))
			x = mul->in[1];
		else
			return -1;
	}
	if (op >= 0) {
		if (!cf_same_shape(cs_info(s, s->ops[op].out[0]), cs_info(s, x)))
			return -1;
		m->ops[m->n++] = op;
	}
	m->a.scale = f32_bits(c);
	op = made_by(s, u, x, "MatMul", 2);
	if (op >= 0)
		m->ops[m->n++] = op;
	return op;
}

/* Q [B, H, M, D] x KT [B, H, D, N] = S, P [B, H, M, N] x V [B, H, N, E] = O. */
static bool shapes_ok(const struct vnpu_tinfo *q, const struct vnpu_tinfo *k,
		      const struct vnpu_tinfo *v, const struct vnpu_tinfo *sc,
		      const struct vnpu_tinfo *o)
{
	for (int d = 0; d < 2; d++)
		if (q->dims[d] != o->dims[d] || k->dims[d] != o->dims[d] ||
		    v->dims[d] != o->dims[d] || sc->dims[d] != o->dims[d])
			return false;
	/* The layer's most depth of a product (vnpu_eng_check.c). */
	if (q->dims[3] > (1 << 19) || k->dims[3] > (1 << 19))
		return false;
	return q->dims[2] == sc->dims[2] && k->dims[3] == sc->dims[3] &&
	       q->dims[3] == k->dims[2] && v->dims[2] == k->dims[3] &&
	       o->dims[2] == q->dims[2] && o->dims[3] == v->dims[3];
}

/* The ops are the pattern's: every value but @m->y read by them only. */
static bool match_closed(const struct cstate *s, const struct uses *u, const struct attn_match *m,
			 bool *mine)
{
	bool ok = true;

	for (uint32_t i = 0; i < m->n; i++)
		mine[m->ops[i]] = true;
	for (uint32_t i = 0; ok && i < m->n; i++)
		if (s->ops[m->ops[i]].out[0] != m->y)
			ok = cf_only_read_by(s, u, s->ops[m->ops[i]].out[0], mine);
	for (uint32_t i = 0; i < m->n; i++)
		mine[m->ops[i]] = false;
	return ok;
}

/* The Transpose after O, if one reads O alone and keeps E last: it is @m's end. */
static void match_output(const struct cstate *s, const struct uses *u, struct attn_match *m,
			 int32_t pv, bool *mine)
{
	int32_t o = s->ops[pv].out[0], r = cf_live_reader(s, u, o, -1);
	uint8_t perm[4];
	bool alone;

	m->y = o;
	m->last = pv;
	for (uint8_t d = 0; d < 4; d++)
		m->a.perm[3][d] = d;
	if (r < 0 || !cf_op_is(&s->ops[r], "Transpose") || s->ops[r].num_in != 1 ||
	    s->ops[r].num_out != 1 || !transpose_perm(&s->ops[r], perm) || perm[3] != 3 ||
	    !f32_rank4(s, s->ops[r].out[0]))
		return;
	mine[r] = true;
	alone = cf_only_read_by(s, u, o, mine);
	mine[r] = false;
	if (!alone)
		return;
	/* The layer's dim perm[j] (O's) is the output's dim j. */
	for (uint8_t j = 0; j < 4; j++)
		m->a.perm[3][perm[j]] = j;
	m->y = s->ops[r].out[0];
	m->last = r;
	m->ops[m->n++] = r;
}

/* The ops of @m become one COP_ATTN op at @m->last. */
static vnpu_status rewrite_attn(struct cstate *s, struct uses *u, const struct attn_match *m)
{
	struct cop *op = &s->ops[m->last];
	vnpu_status st = VNPU_OK;

	for (uint32_t i = 0; i < m->n; i++) {
		if (m->ops[i] != m->last) {
			s->ops[m->ops[i]].dead = true;
			s->ops[m->ops[i]].fused_into = m->last;
		}
	}
	if (!op->root)
		op->root = op->node;
	op->kind = COP_ATTN;
	op->attn = m->a;
	op->num_in = m->mask >= 0 ? 4 : 3;
	for (uint32_t i = 0; i < 3; i++)
		op->in[i] = m->src[i];
	if (m->mask >= 0)
		op->in[3] = m->mask;
	snprintf(op->type, sizeof(op->type), "Attention");
	for (uint32_t i = 0; !st && i < op->num_in; i++)
		st = cf_uses_add(s, u, false, op->in[i], op);
	return st;
}

/* A match around the Softmax op @i. */
static vnpu_status try_attn(struct cstate *s, struct uses *u, uint32_t i, bool *mine)
{
	const struct cop *sm = &s->ops[i];
	struct attn_match m = { .n = 1, .ops = { (int32_t)i } };
	int32_t qk, pv, p;
	int64_t axis;

	if (!cf_op_is(sm, "Softmax") || sm->num_in != 1 || sm->num_out != 1 ||
	    !f32_rank4(s, sm->in[0]))
		return VNPU_OK;
	axis = vnpu_attr_int(sm->node, "axis", s->m->opset >= 13 ? -1 : 1);
	if (axis != -1 && axis != 3)
		return VNPU_OK;
	qk = match_scores(s, u, sm->in[0], &m);
	p = sm->out[0];
	pv = cf_live_reader(s, u, p, -1);
	if (qk < 0 || pv < 0 || cf_live_reader(s, u, p, pv) >= 0 ||
	    !cf_op_is(&s->ops[pv], "MatMul") || s->ops[pv].num_in != 2 ||
	    s->ops[pv].num_out != 1 || s->ops[pv].in[0] != p || s->ops[pv].in[1] == p ||
	    !f32_rank4(s, s->ops[qk].in[0]) || !f32_rank4(s, s->ops[qk].in[1]) ||
	    !f32_rank4(s, s->ops[qk].out[0]) || !f32_rank4(s, s->ops[pv].in[1]) ||
	    !f32_rank4(s, s->ops[pv].out[0]) ||
	    !shapes_ok(cs_info(s, s->ops[qk].in[0]), cs_info(s, s->ops[qk].in[1]),
		       cs_info(s, s->ops[pv].in[1]), cs_info(s, s->ops[qk].out[0]),
		       cs_info(s, s->ops[pv].out[0])))
		return VNPU_OK;
	m.ops[m.n++] = pv;
	match_output(s, u, &m, pv, mine);
	/* The operands' Transposes, when Q, KT and V are three values. */
	if (s->ops[qk].in[0] != s->ops[qk].in[1] && s->ops[qk].in[0] != s->ops[pv].in[1] &&
	    s->ops[qk].in[1] != s->ops[pv].in[1]) {
		operand(s, u, &m, 0, s->ops[qk].in[0], qk, mine);
		operand(s, u, &m, 1, s->ops[qk].in[1], qk, mine);
		operand(s, u, &m, 2, s->ops[pv].in[1], pv, mine);
	} else {
		for (uint32_t k = 0; k < 3; k++)
			for (uint8_t d = 0; d < 4; d++)
				m.a.perm[k][d] = d;
		m.src[0] = s->ops[qk].in[0];
		m.src[1] = s->ops[qk].in[1];
		m.src[2] = s->ops[pv].in[1];
	}
	if (!match_closed(s, u, &m, mine))
		return VNPU_OK;
	s->cur_op = (uint32_t)m.last;
	return rewrite_attn(s, u, &m);
}

vnpu_status cf_fuse_attention(struct cstate *s, struct uses *u)
{
	bool *mine;
	vnpu_status st = VNPU_OK;

	if (s->opt.primary_layer_ops && !(s->opt.primary_layer_ops >> VNPU_LAYER_ATTENTION & 1))
		return VNPU_OK;	/* the primary device does not take ATTENTION */
	mine = calloc(s->num_ops + 1, sizeof(*mine));
	if (!mine)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	for (uint32_t i = 0; !st && i < s->num_ops; i++)
		if (!s->ops[i].dead)
			st = try_attn(s, u, i, mine);
	free(mine);
	return st;
}

/* A value's dense view with the layer's dim i its dim @perm[i]. */
static struct ctensor permuted(const struct cstate *s, int32_t v, const uint8_t *perm)
{
	struct ctensor d = ct_dense(s, v), t = d;

	for (uint32_t i = 0; i < 4; i++) {
		t.dims[i] = d.dims[perm[i]];
		t.strides[i] = d.strides[perm[i]];
	}
	return t;
}

vnpu_status cl_lower_attention(struct cstate *s, struct cop *op)
{
	struct vnpu_layer_attention attr = { .flags = op->attn.flags, .scale = op->attn.scale };
	struct ctensor t[5];
	uint32_t n = 0;

	for (uint32_t i = 0; i < 3; i++)
		t[n++] = permuted(s, op->in[i], op->attn.perm[i]);
	if (op->attn.flags & VNPU_ATTN_F_MASK)
		t[n++] = ct_dense(s, op->in[3]);
	t[n++] = permuted(s, op->out[0], op->attn.perm[3]);
	return cl_layer(s, VNPU_LAYER_ATTENTION, t, n, &attr, sizeof(attr));
}

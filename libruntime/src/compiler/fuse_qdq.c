// SPDX-License-Identifier: MIT
/*
 * QDQ groups become int8 layers: a Conv whose input is DequantizeLinear of
 * an 8-bit tensor, whose weights are DequantizeLinear of 8-bit constants
 * (per tensor, or per output channel on axis 0), whose bias (if any) is
 * DequantizeLinear of an i32 constant, and whose output, through an
 * optional Relu, is read by one QuantizeLinear alone, runs as one
 * QLINEAR_CONV (the op keeps its Conv node and reads the QLinearConv
 * operands; lower_quant.c lowers it). This is the group ONNX Runtime's QDQ
 * transformer makes a QLinearConv of, and computed as it computes it: the
 * bias is taken as i32 at scale x_scale * w_scale whatever its own scale,
 * and a Relu is the saturation's low bound raised to the zero point (for
 * any zero point the same as quantizing after the Relu). An int8 layer's
 * output is the next one's DequantizeLinear input: chains stay int8.
 *
 * An Add of two DequantizeLinear outputs whose sum (through a Relu the
 * saturation does) one QuantizeLinear alone reads runs as one QLINEAR_ADD
 * with ONNX Runtime's QLinearAdd arithmetic (fuse_add()), and a MaxPool
 * between a DequantizeLinear and a QuantizeLinear of the same parameters
 * as a MaxPool of the 8-bit tensor (fuse_maxpool()). A DequantizeLinear,
 * element-wise f32 ops of one input and a QuantizeLinear, per tensor,
 * become a LOOKUP through a table of the group's results for the 256
 * codes (cf_fuse_qdq_tables(), after the activation and chain fusions).
 *
 * Constant weights and biases are DequantizeLinear ops of constants, or
 * were folded to f32 by inference: then their DequantizeLinear nodes, in
 * the model's main graph, still name the 8-bit and i32 constants.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/vnpu_engine.h"
#include "error.h"
#include "fuse.h"

/* An 8-bit integer type. */
static bool q8(vnpu_element_type t)
{
	return t == VNPU_TYPE_U8 || t == VNPU_TYPE_I8;
}

/* Elements of @v (a value index; -1 counts 1, an absent zero point). */
static int64_t elems(const struct cstate *s, int32_t v)
{
	return v < 0 ? 1 : vnpu_tinfo_elems(cs_info(s, v));
}

/* A scale or zero point of rank 0 or 1 and @n elements (or 1); a zero
 * point of @type. */
static bool qparam_ok(const struct cstate *s, int32_t v, vnpu_element_type type, int64_t n)
{
	const struct vnpu_tinfo *t;

	if (v < 0)
		return type != VNPU_TYPE_F32;
	t = cs_info(s, v);
	return t->type == type && t->rank <= 1 && (elems(s, v) == 1 || elems(s, v) == n);
}

static int32_t opt_in(const struct vnpu_node *n, uint32_t i)
{
	return i < n->num_inputs && n->inputs[i] != VNPU_NO_VALUE ? n->inputs[i] : -1;
}

/* What a DequantizeLinear of constants computes: x, scale, zero point. */
struct dq_of {
	const struct vnpu_node *node;
	int32_t x, scale, zp;
	struct cop *op;		/* the live op running it, or NULL (folded) */
};

/*
 * The DequantizeLinear writing @v from a constant: a live op, or a node of
 * the main graph inference folded.
 */
static bool const_dq(struct cstate *s, struct uses *u, int32_t v, struct dq_of *d)
{
	const struct vnpu_graph *g = &s->m->main;
	int32_t p = cf_producer(s, u, v);

	memset(d, 0, sizeof(*d));
	if (p >= 0) {
		d->op = &s->ops[p];
		if (!cf_op_is(d->op, "DequantizeLinear") || d->op->out[0] != v)
			return false;
		d->node = d->op->node;
		d->x = d->op->in[0];
		d->scale = d->op->num_in > 1 ? d->op->in[1] : -1;
		d->zp = d->op->num_in > 2 ? d->op->in[2] : -1;
		return cs_is_const(s, d->x);
	}
	if (!cs_is_const(s, v) || (uint32_t)v >= s->m->num_values)
		return false;
	for (uint32_t i = 0; i < g->num_nodes; i++) {
		const struct vnpu_node *n = &g->nodes[i];

		if (!n->num_outputs || n->outputs[0] != v)
			continue;
		if (n->domain[0] || strcmp(n->op, "DequantizeLinear"))
			return false;
		d->node = n;
		d->x = n->inputs[0];
		d->scale = opt_in(n, 1);
		d->zp = opt_in(n, 2);
		return cs_is_const(s, d->x);
	}
	return false;
}

/* A live DequantizeLinear op writing @v with per-tensor 8-bit operands. */
static struct cop *act_dq(struct cstate *s, struct uses *u, int32_t v)
{
	int32_t p = cf_producer(s, u, v);
	struct cop *op = p >= 0 ? &s->ops[p] : NULL;

	if (!op || !cf_op_is(op, "DequantizeLinear") || op->out[0] != v)
		return NULL;
	if (!q8(cs_info(s, op->in[0])->type) ||
	    !qparam_ok(s, op->in[1], VNPU_TYPE_F32, 1) ||
	    !qparam_ok(s, op->num_in > 2 ? op->in[2] : -1, cs_info(s, op->in[0])->type, 1))
		return NULL;
	return op;
}

/* The sole live reader of @v when it is @name, else NULL. */
static struct cop *only_reader(struct cstate *s, struct uses *u, int32_t v, const char *name)
{
	int32_t r = cf_live_reader(s, u, v, -1);

	if (r < 0 || s->vals[v].out_index >= 0 || u->aliased[v] ||
	    cf_live_reader(s, u, v, r) >= 0 || !cf_op_is(&s->ops[r], name))
		return NULL;
	return &s->ops[r];
}

static void kill(struct cop *op, int32_t into)
{
	op->dead = true;
	op->fused_into = into;
}

static void kill_unread(struct cstate *s, struct uses *u, struct cop *op, uint32_t idx)
{
	int32_t v = op->out[0];

	if (!op->dead && cf_live_reader(s, u, v, -1) < 0 && s->vals[v].out_index < 0 &&
	    !u->aliased[v])
		kill(op, (int32_t)idx);
}

/* The Conv at @idx as a QLINEAR_CONV when its group is the pattern. */
static vnpu_status fuse_conv(struct cstate *s, struct uses *u, uint32_t idx)
{
	struct cop *conv = &s->ops[idx], *dx, *relu, *q;
	struct dq_of dw, db = { 0 };
	bool bias = conv->num_in > 2 && conv->in[2] >= 0;
	int32_t wq, ws, wz, m, in[9];
	vnpu_status st = VNPU_OK;

	if (cs_info(s, conv->in[1])->rank != 4 && cs_info(s, conv->in[1])->rank != 3)
		return VNPU_OK;
	dx = act_dq(s, u, conv->in[0]);
	if (!dx || !const_dq(s, u, conv->in[1], &dw) ||
	    (bias && (!const_dq(s, u, conv->in[2], &db) ||
		      cs_info(s, db.x)->type != VNPU_TYPE_I32)))
		return VNPU_OK;
	wq = dw.x;
	ws = dw.scale;
	wz = dw.zp;
	m = (int32_t)cs_info(s, conv->in[1])->dims[0];
	if (!q8(cs_info(s, wq)->type) || ws < 0 || !cs_is_const(s, ws) ||
	    (wz >= 0 && !cs_is_const(s, wz)) || !qparam_ok(s, ws, VNPU_TYPE_F32, m) ||
	    !qparam_ok(s, wz, cs_info(s, wq)->type, m) ||
	    ((elems(s, ws) > 1 || elems(s, wz) > 1) && vnpu_attr_int(dw.node, "axis", 1) != 0))
		return VNPU_OK;
	relu = only_reader(s, u, conv->out[0], "Relu");
	q = only_reader(s, u, relu ? relu->out[0] : conv->out[0], "QuantizeLinear");
	if (!q || q->in[0] != (relu ? relu->out[0] : conv->out[0]) || q->num_in < 3 ||
	    !q8(cs_info(s, q->out[0])->type) || !qparam_ok(s, q->in[1], VNPU_TYPE_F32, 1) ||
	    !qparam_ok(s, q->in[2], cs_info(s, q->out[0])->type, 1))
		return VNPU_OK;
	in[0] = dx->in[0];
	in[1] = dx->in[1];
	in[2] = dx->num_in > 2 ? dx->in[2] : -1;
	in[3] = wq;
	in[4] = ws;
	in[5] = wz;
	in[6] = q->in[1];
	in[7] = q->in[2];
	in[8] = bias ? db.x : -1;
	conv->num_in = 9;
	memcpy(conv->in, in, sizeof(in));
	conv->out[0] = q->out[0];
	conv->qlinear = true;
	memset(&conv->act, 0, sizeof(conv->act));
	if (relu)
		conv->act.func = VNPU_ACT_RELU;
	snprintf(conv->type, sizeof(conv->type), "QLinearConv%s", relu ? "+Relu" : "");
	kill(q, (int32_t)idx);
	if (relu)
		kill(relu, (int32_t)idx);
	for (uint32_t i = 0; !st && i < 9; i++)
		if (in[i] >= 0)
			st = cf_uses_add(s, u, false, in[i], conv);
	if (!st)
		st = cf_uses_add(s, u, true, conv->out[0], conv);
	/* The DequantizeLinear ops, when nothing else reads them. */
	if (!st)
		kill_unread(s, u, dx, idx);
	if (!st && dw.op)
		kill_unread(s, u, dw.op, idx);
	if (!st && db.op)
		kill_unread(s, u, db.op, idx);
	return st;
}

/*
 * A Relu before QuantizeLinear @q that the saturation already does: @q's
 * zero point a constant at its type's lowest value (ONNX Runtime then
 * drops the Relu).
 */
static bool relu_saturates(struct cstate *s, const struct cop *q)
{
	const struct vnpu_tinfo *z = q->num_in > 2 ? cs_info(s, q->in[2]) : NULL;

	if (!z || !z->data || !cs_is_const(s, q->in[2]) || !cs_is_const(s, q->in[1]))
		return false;
	return z->type == VNPU_TYPE_U8 ? *(const uint8_t *)z->data == 0 :
	       *(const int8_t *)z->data == -128;
}

/*
 * The Add at @idx as a QLinearAdd when both inputs are DequantizeLinear of
 * one 8-bit type and the sum, through a Relu the saturation does, is read
 * by one QuantizeLinear alone to that type: the group ONNX Runtime makes a
 * QLinearAdd of. Broadcasting Adds stay f32 (ONNX Runtime's QLinearAdd
 * computes a broadcast scalar in another order).
 */
static vnpu_status fuse_add(struct cstate *s, struct uses *u, uint32_t idx)
{
	struct cop *add = &s->ops[idx], *da, *db, *relu, *q;
	vnpu_element_type t;
	int32_t in[8];
	vnpu_status st = VNPU_OK;

	if (s->opt.primary_layer_ops && !(s->opt.primary_layer_ops >> VNPU_LAYER_QLINEAR_ADD & 1))
		return VNPU_OK;
	if (add->num_in != 2 || !(da = act_dq(s, u, add->in[0])) || !(db = act_dq(s, u, add->in[1])))
		return VNPU_OK;
	t = cs_info(s, da->in[0])->type;
	if (cs_info(s, db->in[0])->type != t ||
	    !cf_same_shape(cs_info(s, add->in[0]), cs_info(s, add->out[0])) ||
	    !cf_same_shape(cs_info(s, add->in[1]), cs_info(s, add->out[0])))
		return VNPU_OK;
	relu = only_reader(s, u, add->out[0], "Relu");
	q = only_reader(s, u, relu ? relu->out[0] : add->out[0], "QuantizeLinear");
	if (!q || q->in[0] != (relu ? relu->out[0] : add->out[0]) || q->num_in < 3 ||
	    cs_info(s, q->out[0])->type != t || !qparam_ok(s, q->in[1], VNPU_TYPE_F32, 1) ||
	    !qparam_ok(s, q->in[2], t, 1) || (relu && !relu_saturates(s, q)))
		return VNPU_OK;
	in[0] = da->in[0];
	in[1] = da->in[1];
	in[2] = da->num_in > 2 ? da->in[2] : -1;
	in[3] = db->in[0];
	in[4] = db->in[1];
	in[5] = db->num_in > 2 ? db->in[2] : -1;
	in[6] = q->in[1];
	in[7] = q->in[2];
	add->num_in = 8;
	memcpy(add->in, in, sizeof(in));
	add->out[0] = q->out[0];
	add->qlinear = true;
	snprintf(add->type, sizeof(add->type), "QLinearAdd");
	kill(q, (int32_t)idx);
	if (relu)
		kill(relu, (int32_t)idx);
	for (uint32_t i = 0; !st && i < 8; i++)
		if (in[i] >= 0)
			st = cf_uses_add(s, u, false, in[i], add);
	if (!st)
		st = cf_uses_add(s, u, true, add->out[0], add);
	if (!st)
		kill_unread(s, u, da, idx);
	if (!st && db != da)
		kill_unread(s, u, db, idx);
	return st;
}

/* Per-tensor quantization parameters @a and @b that are one: the same
 * value, or constants of one type and the same bits. */
static bool same_qparam(const struct cstate *s, int32_t a, int32_t b)
{
	const struct vnpu_tinfo *ta, *tb;

	if (a == b)
		return true;
	if (a < 0 || b < 0 || !cs_is_const(s, a) || !cs_is_const(s, b))
		return false;
	ta = cs_info(s, a);
	tb = cs_info(s, b);
	return ta->type == tb->type && ta->data && tb->data && elems(s, a) == 1 &&
	       elems(s, b) == 1 && !memcmp(ta->data, tb->data, vnpu_element_type_size(ta->type));
}

/*
 * The MaxPool at @idx on 8-bit integers when its input is DequantizeLinear
 * of an 8-bit tensor and its output is read by one QuantizeLinear alone,
 * back to that type with the same scale and zero point: ONNX Runtime drops
 * such a pair (max commutes with the dequantization, and quantizing a
 * dequantized value with its own parameters gives it back exactly).
 */
static vnpu_status fuse_maxpool(struct cstate *s, struct uses *u, uint32_t idx)
{
	struct cop *pool = &s->ops[idx], *dx, *q;
	vnpu_status st;
	int32_t rank;

	if (pool->num_in != 1 || (pool->num_out > 1 && pool->out[1] >= 0) ||
	    !(dx = act_dq(s, u, pool->in[0])))
		return VNPU_OK;
	rank = cs_info(s, dx->in[0])->rank;
	q = only_reader(s, u, pool->out[0], "QuantizeLinear");
	if ((rank != 3 && rank != 4) || !q || q->in[0] != pool->out[0] || q->num_in < 2 ||
	    cs_info(s, q->out[0])->type != cs_info(s, dx->in[0])->type ||
	    !same_qparam(s, dx->in[1], q->in[1]) ||
	    !same_qparam(s, dx->num_in > 2 ? dx->in[2] : -1, q->num_in > 2 ? q->in[2] : -1))
		return VNPU_OK;
	pool->in[0] = dx->in[0];
	pool->out[0] = q->out[0];
	kill(q, (int32_t)idx);
	st = cf_uses_add(s, u, false, pool->in[0], pool);
	if (!st)
		st = cf_uses_add(s, u, true, pool->out[0], pool);
	if (!st)
		kill_unread(s, u, dx, idx);
	return st;
}

/*
 * ---- tables -----------------------------------------------------------
 *
 * A DequantizeLinear of an 8-bit tensor, element-wise f32 ops (UNARY
 * functions and one-input CHAINs: HardSwish, HardSigmoid, a Clip...), one
 * QuantizeLinear to 8 bits, all per tensor with constant parameters: the
 * output byte is a function of the input byte alone. The group runs as one
 * LOOKUP layer whose 256 entries are the group's own layers run here, on
 * the host's engine, once for each code: the bits the unfused program
 * gives on this host, whatever the function.
 */
#define TABLE_MAX_OPS 8

struct table_group {
	struct cop *dq, *q;
	struct cop *mid[TABLE_MAX_OPS];	/* in program order */
	uint32_t n;
};

/* A constant per-tensor parameter (or an absent zero point, -1). */
static bool const_qparam(const struct cstate *s, int32_t v, vnpu_element_type type)
{
	return v < 0 ? type != VNPU_TYPE_F32 :
	       cs_is_const(s, v) && qparam_ok(s, v, type, 1);
}

/* An op a table can take: f32 in, f32 out, same shape, one tensor input. */
static bool table_step(struct cstate *s, const struct cop *op)
{
	struct vnpu_layer_act act;

	if (op->dead || op->num_out != 1 || op->out[0] < 0 || op->num_in < 1 || op->in[0] < 0 ||
	    cs_info(s, op->out[0])->type != VNPU_TYPE_F32 ||
	    !cf_same_shape(cs_info(s, op->in[0]), cs_info(s, op->out[0])))
		return false;
	if (op->kind == COP_CHAIN)
		return op->num_in == 1;
	return cl_node_act(s, op, &act);
}

/* @v is f32 read by @op alone (no model output, no view of it). */
static bool read_by_only(struct cstate *s, struct uses *u, int32_t v, const struct cop *op)
{
	int32_t r = cf_live_reader(s, u, v, -1);

	return r >= 0 && &s->ops[r] == op && cf_live_reader(s, u, v, r) < 0 &&
	       s->vals[v].out_index < 0 && !u->aliased[v];
}

/*
 * The group ending in QuantizeLinear @q: its DequantizeLinear, and 1 to
 * TABLE_MAX_OPS ops between them, each read by the next alone.
 */
static bool table_group_of(struct cstate *s, struct uses *u, struct cop *q, struct table_group *g)
{
	struct cop *next = q;
	int32_t v = q->in[0];
	uint32_t n = 0;

	if (q->num_in < 2 || !q8(cs_info(s, q->out[0])->type) ||
	    cs_info(s, v)->type != VNPU_TYPE_F32 ||
	    !const_qparam(s, q->in[1], VNPU_TYPE_F32) ||
	    !const_qparam(s, q->num_in > 2 ? q->in[2] : -1, cs_info(s, q->out[0])->type))
		return false;
	for (;;) {
		int32_t pi = cf_producer(s, u, v);
		struct cop *p = pi >= 0 ? &s->ops[pi] : NULL;

		if (!p || p->dead || p->num_out != 1 || p->out[0] != v)
			return false;
		if (cf_op_is(p, "DequantizeLinear")) {
			g->dq = act_dq(s, u, v);
			break;
		}
		if (n == TABLE_MAX_OPS || !table_step(s, p) || !read_by_only(s, u, v, next))
			return false;
		g->mid[TABLE_MAX_OPS - 1 - n++] = p;
		next = p;
		v = p->in[0];
	}
	if (!n || !g->dq || !const_qparam(s, g->dq->in[1], VNPU_TYPE_F32) ||
	    !const_qparam(s, g->dq->num_in > 2 ? g->dq->in[2] : -1, cs_info(s, g->dq->in[0])->type) ||
	    !cf_same_shape(cs_info(s, g->dq->in[0]), cs_info(s, q->out[0])))
		return false;
	memmove(g->mid, g->mid + TABLE_MAX_OPS - n, n * sizeof(g->mid[0]));
	g->n = n;
	g->q = q;
	return true;
}

/*
 * Runs layer @op on the host engine (checked, one part): false when the
 * engine refuses it or memory runs out.
 */
static bool host_layer(uint32_t op, const struct vnpu_cmd_tensor *t, void *const *data, uint32_t n,
		       const void *attrs, uint32_t attr_size)
{
	struct vnpu_eng_ctx ctx = { .features = vnpu_eng_host_features() };
	uint64_t size;
	bool ok;

	if (vnpu_eng_layer_check(op, t, n, attrs, attr_size))
		return false;
	size = vnpu_eng_layer_scratch(op, t, n, attrs, 1, ctx.features);
	ctx.scratch = size ? malloc(size) : NULL;
	ctx.scratch_size = size;
	ok = (!size || ctx.scratch) && !vnpu_eng_layer_run(op, t, data, n, attrs, 0, 1, &ctx);
	free(ctx.scratch);
	return ok;
}

/* A rank-0 (@rank 0) or [256] dense tensor of @type. */
static struct vnpu_cmd_tensor table_tensor(uint32_t type, uint32_t rank)
{
	struct vnpu_cmd_tensor t = { .dtype = type, .rank = rank };

	if (rank) {
		t.dims[0] = VNPU_LOOKUP_ENTRIES;
		t.strides[0] = 1;
	}
	return t;
}

/*
 * Quantize or dequantize @x into @y (256 entries, the f32 one @f) with the
 * parameters of @op (type @qt).
 */
static bool table_quant(const struct cstate *s, const struct cop *op, bool dequantize,
			vnpu_element_type qt, void *codes, float *f)
{
	struct vnpu_layer_quant attr = { 0 };
	struct vnpu_cmd_tensor t[4];
	uint8_t zero = 0;
	void *data[4];

	t[0] = table_tensor(dequantize ? qt : VNPU_TYPE_F32, 1);
	t[1] = table_tensor(VNPU_TYPE_F32, 0);
	t[2] = table_tensor(qt, 0);
	t[3] = table_tensor(dequantize ? VNPU_TYPE_F32 : qt, 1);
	data[0] = dequantize ? codes : (void *)f;
	data[1] = cs_info(s, op->in[1])->data;
	data[2] = op->num_in > 2 && op->in[2] >= 0 ? cs_info(s, op->in[2])->data : &zero;
	data[3] = dequantize ? (void *)f : codes;
	return host_layer(dequantize ? VNPU_LAYER_DEQUANTIZE : VNPU_LAYER_QUANTIZE, t, data, 4,
			  &attr, sizeof(attr));
}

/* The 256 entries of @g's table into @tab: each code through the group. */
static bool table_entries(const struct cstate *s, const struct table_group *g, uint8_t *tab)
{
	struct vnpu_cmd_tensor t[2] = { table_tensor(VNPU_TYPE_F32, 1),
					table_tensor(VNPU_TYPE_F32, 1) };
	float a[VNPU_LOOKUP_ENTRIES], b[VNPU_LOOKUP_ENTRIES];
	uint8_t codes[VNPU_LOOKUP_ENTRIES];
	void *data[2] = { a, b };
	bool ok;

	for (uint32_t i = 0; i < VNPU_LOOKUP_ENTRIES; i++)
		codes[i] = (uint8_t)i;
	ok = table_quant(s, g->dq, true, cs_info(s, g->dq->in[0])->type, codes, a);
	for (uint32_t k = 0; ok && k < g->n; k++) {
		const struct cop *op = g->mid[k];
		struct vnpu_layer_act act;

		if (op->kind == COP_CHAIN)
			ok = host_layer(VNPU_LAYER_CHAIN, t, data, 2, &op->chain, sizeof(op->chain));
		else
			ok = cl_node_act(s, op, &act) &&
			     host_layer(VNPU_LAYER_UNARY, t, data, 2, &act, sizeof(act));
		memcpy(a, b, sizeof(a));
	}
	return ok && table_quant(s, g->q, false, cs_info(s, g->q->out[0])->type, tab, a);
}

/* "Lookup(HardSwish)": the group's f32 ops. */
static void table_type(const struct table_group *g)
{
	char *type = g->q->type;
	size_t size = sizeof(g->q->type), len;

	snprintf(type, size, "Lookup(");
	for (uint32_t k = 0; k < g->n; k++) {
		len = strlen(type);
		snprintf(type + len, size - len, "%s%s", k ? "+" : "", g->mid[k]->type);
	}
	len = strlen(type);
	snprintf(type + len, size - len, ")");
}

static vnpu_status fuse_table(struct cstate *s, struct uses *u, uint32_t idx)
{
	int64_t entries = VNPU_LOOKUP_ENTRIES;
	struct table_group g = { 0 };
	uint8_t *tab;
	int32_t tv;
	vnpu_status st;

	if (!table_group_of(s, u, &s->ops[idx], &g))
		return VNPU_OK;
	tab = malloc(VNPU_LOOKUP_ENTRIES);
	if (!tab)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	if (!table_entries(s, &g, tab)) {
		free(tab);
		return VNPU_OK;
	}
	st = cs_add_const(s, cs_info(s, g.q->out[0])->type, 1, &entries, tab, &tv);
	if (st)
		return st;
	g.q->in[0] = g.dq->in[0];
	g.q->in[1] = tv;
	g.q->num_in = 2;
	g.q->qlinear = true;
	table_type(&g);
	for (uint32_t k = 0; k < g.n; k++)
		kill(g.mid[k], (int32_t)idx);
	st = cf_uses_add(s, u, false, g.q->in[0], g.q);
	if (!st)
		st = cf_uses_add(s, u, false, tv, g.q);
	if (!st)
		kill_unread(s, u, g.dq, idx);
	return st;
}

vnpu_status cf_fuse_qdq_tables(struct cstate *s, struct uses *u)
{
	vnpu_status st = VNPU_OK;

	if (s->opt.primary_layer_ops && !(s->opt.primary_layer_ops >> VNPU_LAYER_LOOKUP & 1))
		return VNPU_OK;
	for (uint32_t i = 0; !st && i < s->num_ops; i++) {
		s->cur_op = i;
		if (!s->ops[i].dead && cf_op_is(&s->ops[i], "QuantizeLinear"))
			st = fuse_table(s, u, i);
	}
	return st;
}

/*
 * The QLinearConv group at @idx with the QLinearAdd that alone reads its
 * output (a residual Add): one QLINEAR_CONV whose epilogue adds the other
 * operand (%VNPU_LAYER_F_RESIDUAL), in[9..13] the residual, its scale and
 * zero point, the sum's. The Add must read the convolution's output at
 * the parameters it was quantized to, the residual be computed before
 * the convolution, and the weights constant, packed and not depthwise
 * (group 1): the engine fuses the Add there.
 */
static vnpu_status fuse_conv_add(struct cstate *s, struct uses *u, uint32_t idx)
{
	struct cop *conv = &s->ops[idx], *add;
	int32_t y = conv->out[0], in[5];
	uint32_t a, r;
	vnpu_status st = VNPU_OK;

	if (!conv->qlinear || conv->num_in != 9 || !cs_is_const(s, conv->in[3]) ||
	    s->opt.no_packing || vnpu_attr_int(conv->node, "group", 1) != 1 ||
	    !(add = only_reader(s, u, y, "Add")) || !add->qlinear || add->num_in != 8 ||
	    (add->in[0] == y) == (add->in[3] == y))
		return VNPU_OK;
	a = add->in[0] == y ? 0 : 3;
	r = 3 - a;
	if (cf_producer(s, u, add->in[r]) >= (int32_t)idx ||
	    cs_info(s, add->in[r])->type != cs_info(s, y)->type ||
	    !cf_same_shape(cs_info(s, add->in[r]), cs_info(s, y)) ||
	    !same_qparam(s, conv->in[6], add->in[a + 1]) ||
	    !same_qparam(s, conv->in[7], add->in[a + 2]))
		return VNPU_OK;
	in[0] = add->in[r];
	in[1] = add->in[r + 1];
	in[2] = add->in[r + 2];
	in[3] = add->in[6];
	in[4] = add->in[7];
	memcpy(&conv->in[9], in, sizeof(in));
	conv->num_in = 14;
	conv->qres_first = r == 0;
	conv->out[0] = add->out[0];
	strncat(conv->type, "+QLinearAdd", sizeof(conv->type) - strlen(conv->type) - 1);
	kill(add, (int32_t)idx);
	for (uint32_t i = 0; !st && i < 5; i++)
		if (in[i] >= 0)
			st = cf_uses_add(s, u, false, in[i], conv);
	if (!st)
		st = cf_uses_add(s, u, true, conv->out[0], conv);
	return st;
}

vnpu_status cf_fuse_qdq(struct cstate *s, struct uses *u)
{
	vnpu_status st = VNPU_OK;

	for (uint32_t i = 0; !st && i < s->num_ops; i++) {
		s->cur_op = i;
		if (!s->ops[i].dead && cf_op_is(&s->ops[i], "Conv"))
			st = fuse_conv(s, u, i);
		else if (!s->ops[i].dead && cf_op_is(&s->ops[i], "Add"))
			st = fuse_add(s, u, i);
		else if (!s->ops[i].dead && cf_op_is(&s->ops[i], "MaxPool"))
			st = fuse_maxpool(s, u, i);
	}
	/* Then the residual Adds into the convolutions before them. */
	for (uint32_t i = 0; !st && i < s->num_ops; i++) {
		s->cur_op = i;
		if (!s->ops[i].dead && cf_op_is(&s->ops[i], "Conv"))
			st = fuse_conv_add(s, u, i);
	}
	return st;
}

// SPDX-License-Identifier: MIT
/*
 * The QDQ rewrite, in the form ONNX Runtime's static quantizer writes
 * (QuantFormat.QDQ) and vnpu's compiler turns into int8 layers:
 *
 *  - a BatchNormalization after a Conv (its only reader) is folded into the
 *    Conv's weights and bias first;
 *  - Conv, Gemm, MatMul, Add, MaxPool, AveragePool and GlobalAveragePool
 *    nodes not kept f32 quantize their activation inputs and their output;
 *    an output read by a Relu alone is quantized after the Relu instead,
 *    which the saturation then computes; a MaxPool's output takes its
 *    input's parameters;
 *  - a quantized tensor t gets QuantizeLinear -> DequantizeLinear right
 *    after its producer and every node reads the DequantizeLinear's output;
 *    a model output keeps its f32 value (only its readers see the pair);
 *  - constant f32 weights of Conv, Gemm and MatMul become s8, symmetric per
 *    output channel (the axis of the output channels: 0 for Conv and a
 *    transposed Gemm B, 1 for MatMul and Gemm B), behind a DequantizeLinear;
 *    a Conv's or Gemm's bias becomes i32 at scale x_scale * w_scale.
 *
 * Activations are u8 (or s8) with asymmetric per-tensor parameters over the
 * calibrated range widened to hold 0.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quantize.h"

#define WEIGHT_MAX 127

static Onnx__NodeProto *node(const struct qmodel *qm, int32_t n)
{
	return n >= 0 ? qm->g->node[n] : NULL;
}

static const char *in(const Onnx__NodeProto *n, size_t i)
{
	return i < n->n_input && n->input[i][0] ? n->input[i] : NULL;
}

/* An f32 initializer of @rank (0: any) with dims[@axis] == @m (m < 0: any). */
static bool f32_init(const struct qmodel *qm, const char *name, size_t rank, int64_t m,
		     size_t axis)
{
	int32_t v = qm_find(qm, name);
	const Onnx__TensorProto *tp;

	if (!name || v < 0 || qm->t[v].init < 0)
		return false;
	tp = qm->g->initializer[qm->t[v].init];
	if (!tp->has_data_type || tp->data_type != VNPU_TYPE_F32 ||
	    (rank && tp->n_dims != rank) || tp->n_dims <= axis)
		return false;
	return m < 0 || tp->dims[axis] == m;
}

static int64_t init_dim(const struct qmodel *qm, const char *name, size_t axis)
{
	return qm->g->initializer[qm->t[qm_find(qm, name)].init]->dims[axis];
}

/* ---- BatchNormalization folding ---- */

/* The Conv whose output @bn reads, when it can take the BatchNorm. */
static Onnx__NodeProto *bn_conv(const struct qmodel *qm, const struct options *o,
				const Onnx__NodeProto *bn)
{
	int32_t x = bn->n_input == 5 ? qm_find(qm, bn->input[0]) : -1;
	Onnx__NodeProto *conv;
	int64_t m;

	if (x < 0 || qm->t[x].readers != 1 || qm->t[x].graph_output || qm_kept(o, bn) ||
	    qm_attr_int(bn, "training_mode", 0))
		return NULL;
	for (size_t i = 1; i < bn->n_output; i++)
		if (bn->output[i][0])
			return NULL;
	conv = node(qm, qm->t[x].producer);
	if (!conv || !qm_is(conv, "Conv") || qm_kept(o, conv) || conv->n_output != 1 ||
	    !f32_init(qm, in(conv, 1), 0, -1, 0) || conv->n_input < 2)
		return NULL;
	m = init_dim(qm, conv->input[1], 0);
	if (m <= 0 || (in(conv, 2) && !f32_init(qm, in(conv, 2), 1, m, 0)))
		return NULL;
	for (size_t i = 1; i < 5; i++)
		if (!f32_init(qm, in(bn, i), 1, m, 0))
			return NULL;
	return conv;
}

static const float *fdata(vnpu_tensor *t)
{
	void *p = NULL;

	vnpu_tensor_get_data(t, &p);
	return p;
}

/* A new f32 initializer called after @base + @suffix of @data and @t's shape;
 * its name into *out. */
static int add_f32(struct qmodel *qm, const char *base, const char *suffix, vnpu_tensor *t,
		   const void *data, const char **out)
{
	int64_t dims[VNPU_MAX_RANK];
	vnpu_shape shape;
	uint64_t bytes;
	const char *name = qm_unique(qm, base, suffix);

	if (!name)
		return qm_oom();
	vnpu_tensor_get_shape(t, &shape);
	vnpu_tensor_get_byte_size(t, &bytes);
	for (uint32_t d = 0; d < shape.rank; d++)
		dims[d] = shape.dims[d];
	if (!qm_add_init(qm, name, VNPU_TYPE_F32, dims, shape.rank, data, bytes))
		return qm_oom();
	*out = name;
	return 0;
}

static int fold_one(struct qmodel *qm, Onnx__NodeProto *conv, Onnx__NodeProto *bn)
{
	vnpu_tensor *w = NULL, *b = NULL, *p[4] = { 0 };
	const char *wname, *bname;
	char *swap;
	uint64_t n = 0;
	int64_t m = init_dim(qm, conv->input[1], 0);
	double eps = qm_attr_float(bn, "epsilon", 1e-5f);
	float *wf, *bf;
	int ret = 1;

	if (qm_init_floats(qm, qm_find(qm, conv->input[1]), &w) ||
	    (in(conv, 2) && qm_init_floats(qm, qm_find(qm, conv->input[2]), &b)))
		goto out;
	for (int i = 0; i < 4; i++)
		if (qm_init_floats(qm, qm_find(qm, bn->input[i + 1]), &p[i]))
			goto out;
	vnpu_tensor_get_size(w, &n);
	wf = (float *)fdata(w);
	bf = malloc((size_t)m * sizeof(*bf));
	if (!bf) {
		ret = qm_oom();
		goto out;
	}
	for (int64_t c = 0; c < m; c++) {
		double f = fdata(p[0])[c] / sqrt((double)fdata(p[3])[c] + eps);
		uint64_t k = n / (uint64_t)m;

		for (uint64_t j = 0; j < k; j++)
			wf[(uint64_t)c * k + j] = (float)(wf[(uint64_t)c * k + j] * f);
		bf[c] = (float)(((b ? fdata(b)[c] : 0.0) - fdata(p[2])[c]) * f + fdata(p[1])[c]);
	}
	ret = add_f32(qm, conv->input[1], "_folded", w, wf, &wname) ||
	      add_f32(qm, conv->output[0], "_bias", p[1], bf, &bname);
	free(bf);
	if (ret)
		goto out;
	if (conv->n_input < 3) {
		char **inputs = realloc(conv->input, 3 * sizeof(*inputs));

		if (!inputs) {
			ret = qm_oom();
			goto out;
		}
		conv->input = inputs;
		conv->input[2] = NULL;
		conv->n_input = 3;
	}
	ret = qm_set_name(qm, &conv->input[1], wname) ||
	      qm_set_name(qm, &conv->input[2], bname);
	/* The Conv writes the BatchNorm's output; the BatchNorm, dropped, keeps
	 * the Conv's old name, which the index still points to. */
	swap = conv->output[0];
	conv->output[0] = bn->output[0];
	bn->output[0] = swap;
out:
	vnpu_tensor_free(w);
	vnpu_tensor_free(b);
	for (int i = 0; i < 4; i++)
		vnpu_tensor_free(p[i]);
	return ret;
}

int qdq_fold_batchnorm(struct qmodel *qm, const struct options *o)
{
	Onnx__GraphProto *g = qm->g;
	bool *drop = calloc(g->n_node ? g->n_node : 1, sizeof(*drop));
	size_t k = 0;

	if (!drop)
		return qm_oom();
	for (size_t i = 0; i < g->n_node; i++) {
		Onnx__NodeProto *conv;

		if (!qm_is(g->node[i], "BatchNormalization"))
			continue;
		conv = bn_conv(qm, o, g->node[i]);
		if (!conv)
			continue;
		if (fold_one(qm, conv, g->node[i])) {
			free(drop);
			return 1;
		}
		drop[i] = true;
	}
	for (size_t i = 0; i < g->n_node; i++) {
		if (drop[i])
			onnx__node_proto__free_unpacked(g->node[i], NULL);
		else
			g->node[k++] = g->node[i];
	}
	g->n_node = k;
	free(drop);
	return qm_index(qm);
}

/* ---- which tensors ---- */

/* An activation (no initializer) of the graph. */
static int32_t activation(const struct qmodel *qm, const char *name)
{
	int32_t v = name ? qm_find(qm, name) : -1;

	return v >= 0 && qm->t[v].init < 0 ? v : -1;
}

/* Ops that only move values: their output keeps their input's grid. */
static const char *const movers[] = { "Flatten", "Reshape", "Squeeze", "Unsqueeze",
				      "Transpose", NULL };

static bool is_mover(const Onnx__NodeProto *n)
{
	for (const char *const *op = movers; *op; op++)
		if (qm_is(n, *op))
			return true;
	return false;
}

/*
 * An activation input of a quantized op. One that a Flatten, Reshape...
 * made of a quantized tensor takes that tensor's parameters, as ONNX
 * Runtime's quantizer does.
 */
static void mark_input(struct qmodel *qm, const struct options *o, const char *name)
{
	int32_t v = activation(qm, name), x;
	Onnx__NodeProto *p;

	if (v < 0)
		return;
	qm->t[v].quant = true;
	p = node(qm, qm->t[v].producer);
	if (!p || !is_mover(p) || qm_kept(o, p) || qm->t[v].share >= 0)
		return;
	x = activation(qm, in(p, 0));
	if (x >= 0 && x != v && qm->t[x].quant)
		qm->t[v].share = qm->t[x].share >= 0 ? qm->t[x].share : x;
}

/*
 * The output of a quantized op, or of the Relu that alone reads it. A model
 * output is quantized only after a Conv (@conv), whose int8 layer then
 * writes it: elsewhere the runtimes gain nothing and the output would lose
 * precision.
 */
static int32_t mark_output(struct qmodel *qm, const struct options *o, const char *name,
			   bool conv)
{
	int32_t v = activation(qm, name);
	Onnx__NodeProto *relu;

	if (v < 0)
		return -1;
	relu = qm->t[v].readers == 1 && !qm->t[v].graph_output ? node(qm, qm->t[v].reader) : NULL;
	if (relu && qm_is(relu, "Relu") && !qm_kept(o, relu) && relu->n_output == 1)
		v = activation(qm, relu->output[0]);
	if (v < 0 || qm->t[v].graph_input ||
	    (qm->t[v].graph_output ? !conv : !qm->t[v].readers))
		return -1;
	qm->t[v].quant = true;
	return v;
}

static void mark_weight(struct qmodel *qm, const char *name, int32_t axis)
{
	int32_t v = qm_find(qm, name);

	if (qm->t[v].weight_axis < 0)
		qm->t[v].weight_axis = axis;
}

/* The axis of @n's weight's output channels, or -1 when it has no f32 one. */
static int32_t weight_axis(const struct qmodel *qm, const Onnx__NodeProto *n)
{
	if (qm_is(n, "Conv"))
		return f32_init(qm, in(n, 1), 0, -1, 0) ? 0 : -1;
	if (qm_is(n, "MatMul"))
		return f32_init(qm, in(n, 1), 2, -1, 1) ? 1 : -1;
	if (qm_is(n, "Gemm") && !qm_attr_int(n, "transA", 0))
		return f32_init(qm, in(n, 1), 2, -1, 0) ? !qm_attr_int(n, "transB", 0) : -1;
	return -1;
}

/* The ops quantized, those with a constant weight first. */
static const char *const products[] = { "Conv", "Gemm", "MatMul", NULL };
static const char *const others[] = { "Add", "AveragePool", "GlobalAveragePool", "MaxPool",
				       NULL };

static bool in_list(const char *op, const char *const *ops, size_t n)
{
	for (size_t i = 0; i < n && ops[i]; i++)
		if (!strcmp(op, ops[i]))
			return true;
	return false;
}

bool qdq_op_known(const char *op)
{
	return in_list(op, products, SIZE_MAX) || in_list(op, others, SIZE_MAX);
}

/* @n is one of @ops and of -t's op types. */
static bool op_in(const struct options *o, const Onnx__NodeProto *n, const char *const *ops)
{
	for (; *ops; ops++)
		if (qm_is(n, *ops))
			return !o->num_ops || in_list(*ops, o->ops, o->num_ops);
	return false;
}

void qdq_plan(struct qmodel *qm, const struct options *o)
{
	for (size_t i = 0; i < qm->g->n_node; i++) {
		Onnx__NodeProto *n = qm->g->node[i];
		int32_t axis, y;

		if (qm_kept(o, n) || !n->n_output || !n->output[0][0])
			continue;
		if (op_in(o, n, products)) {
			axis = weight_axis(qm, n);
			if (axis >= 0)
				mark_weight(qm, n->input[1], axis);
			mark_input(qm, o, in(n, 0));
			if (axis < 0 && !qm_is(n, "Conv"))
				mark_input(qm, o, in(n, 1));
			mark_output(qm, o, n->output[0], qm_is(n, "Conv"));
		} else if (op_in(o, n, others) && n->n_output == 1) {
			for (size_t k = 0; k < n->n_input; k++)
				mark_input(qm, o, in(n, k));
			y = mark_output(qm, o, n->output[0], false);
			if (qm_is(n, "MaxPool") && y >= 0 && activation(qm, in(n, 0)) >= 0)
				qm->t[y].share = activation(qm, in(n, 0));
		}
	}
}

/* ---- the rewrite ---- */

static void act_params(const struct qtensor *t, const struct options *o, float *scale,
		       int32_t *zp)
{
	int32_t qmin = o->s8 ? -128 : 0, qmax = o->s8 ? 127 : 255;
	double lo, hi, z;

	stats_range(&t->stats, o, &lo, &hi);
	lo = fmin(lo, 0);
	hi = fmax(hi, 0);
	*scale = (float)((hi - lo) / (qmax - qmin));
	if (!(*scale > 0) || !isfinite(*scale))
		*scale = 1;
	z = round(qmin - lo / *scale);
	*zp = (int32_t)fmin(fmax(z, qmin), qmax);
}

/* Whether @v gets a Q -> DQ pair: calibrated itself or through its share. */
static bool quantized(const struct qmodel *qm, int32_t v)
{
	const struct qtensor *t = &qm->t[v];

	if (!t->quant)
		return false;
	return t->share >= 0 ? qm->t[t->share].quant && qm->t[t->share].calibrated
			     : t->calibrated;
}

static int dup_name(char **field, const char *s)
{
	*field = strdup(s);
	return *field ? 0 : qm_oom();
}

/* The scale and zero point initializers of activation @v. */
static int act_init(struct qmodel *qm, const struct options *o, int32_t v)
{
	struct qtensor *t = &qm->t[v];
	const char *s, *z, *dq;
	uint8_t zp8;

	if (t->share >= 0) {
		t->scale = qm->t[t->share].scale;
		t->zero_point = qm->t[t->share].zero_point;
		s = qm->t[t->share].scale_name;
		z = qm->t[t->share].zp_name;
	} else {
		act_params(t, o, &t->scale, &t->zero_point);
		zp8 = (uint8_t)t->zero_point;
		/* qm_unique() may move the table: no @t across it. */
		s = qm_unique(qm, qm->t[v].name, "_scale");
		z = s ? qm_unique(qm, qm->t[v].name, "_zero_point") : NULL;
		t = &qm->t[v];
		if (!s || !z || !qm_add_init(qm, s, VNPU_TYPE_F32, NULL, 0, &t->scale, 4) ||
		    !qm_add_init(qm, z, o->s8 ? VNPU_TYPE_I8 : VNPU_TYPE_U8, NULL, 0, &zp8, 1))
			return qm_oom();
	}
	dq = qm->t[v].graph_output ? qm->t[v].name :
	     qm_unique(qm, qm->t[v].name, "_dequantized");
	t = &qm->t[v];
	if (!dq)
		return qm_oom();
	return dup_name(&t->scale_name, s) || dup_name(&t->zp_name, z) ||
	       dup_name(&t->dq_name, dq);
}

/* Q -> DQ of activation @v, which @src holds, into @out. */
static int act_nodes(struct qmodel *qm, int32_t v, const char *src, Onnx__NodeProto **out)
{
	const char *name = qm->t[v].name, *q = qm_unique(qm, name, "_quantized");
	const char *qn = qm_unique(qm, name, "_QuantizeLinear");
	const char *dqn = qm_unique(qm, name, "_DequantizeLinear");
	const struct qtensor *t = &qm->t[v];
	const char *qin[3] = { src, t->scale_name, t->zp_name };
	const char *dqin[3] = { q, t->scale_name, t->zp_name };

	out[0] = out[1] = NULL;
	if (!q || !qn || !dqn)
		return qm_oom();
	out[0] = qm_new_node("QuantizeLinear", qn, qin, 3, q, -1);
	out[1] = qm_new_node("DequantizeLinear", dqn, dqin, 3, t->dq_name, -1);
	if (out[0] && out[1])
		return 0;
	if (out[0])
		onnx__node_proto__free_unpacked(out[0], NULL);
	if (out[1])
		onnx__node_proto__free_unpacked(out[1], NULL);
	return qm_oom();
}

/* Per-channel symmetric s8 scales of @w along @axis (@c channels). */
static void weight_scales(const float *w, const vnpu_shape *shape, int32_t axis, float *scale)
{
	uint64_t inner = 1, outer = 1;
	int64_t c = shape->dims[axis];

	for (uint32_t d = 0; d < shape->rank; d++) {
		if ((int32_t)d < axis)
			outer *= (uint64_t)shape->dims[d];
		else if ((int32_t)d > axis)
			inner *= (uint64_t)shape->dims[d];
	}
	for (int64_t k = 0; k < c; k++)
		scale[k] = 0;
	for (uint64_t o = 0; o < outer; o++)
		for (int64_t k = 0; k < c; k++)
			for (uint64_t i = 0; i < inner; i++) {
				float a = fabsf(w[(o * (uint64_t)c + (uint64_t)k) * inner + i]);

				if (a > scale[k])
					scale[k] = a;
			}
	for (int64_t k = 0; k < c; k++)
		scale[k] = scale[k] > 0 && isfinite(scale[k]) ? scale[k] / WEIGHT_MAX : 1;
}

static void weight_values(const float *w, const vnpu_shape *shape, int32_t axis,
			  const float *scale, int8_t *q)
{
	uint64_t inner = 1, n = 1;
	int64_t c = shape->dims[axis];

	for (uint32_t d = 0; d < shape->rank; d++) {
		n *= (uint64_t)shape->dims[d];
		if ((int32_t)d > axis)
			inner *= (uint64_t)shape->dims[d];
	}
	for (uint64_t i = 0; i < n; i++) {
		float r = rintf(w[i] / scale[(i / inner) % (uint64_t)c]);

		q[i] = (int8_t)fminf(fmaxf(r, -WEIGHT_MAX), WEIGHT_MAX);
	}
}

/* The s8 weight @v behind a DequantizeLinear into *@out. */
static int weight_init(struct qmodel *qm, int32_t v, Onnx__NodeProto **out)
{
	vnpu_tensor *w = NULL;
	int64_t dims[VNPU_MAX_RANK], c;
	const char *qn, *sn, *zn, *dqn, *dq;
	int32_t axis = qm->t[v].weight_axis;
	vnpu_shape shape;
	uint64_t n = 0;
	float *scale = NULL;
	int8_t *q = NULL, *zero = NULL;
	Onnx__TensorProto *st = NULL;
	int ret;

	if (qm_init_floats(qm, v, &w))
		return 1;
	vnpu_tensor_get_shape(w, &shape);
	vnpu_tensor_get_size(w, &n);
	c = shape.dims[axis];
	for (uint32_t d = 0; d < shape.rank; d++)
		dims[d] = shape.dims[d];
	scale = malloc((size_t)(c ? c : 1) * sizeof(*scale));
	zero = calloc((size_t)(c ? c : 1), 1);
	q = malloc(n ? n : 1);
	qn = qm_unique(qm, qm->t[v].name, "_quantized");
	sn = qm_unique(qm, qm->t[v].name, "_scale");
	zn = qm_unique(qm, qm->t[v].name, "_zero_point");
	dq = qm_unique(qm, qm->t[v].name, "_dequantized");
	dqn = qm_unique(qm, qm->t[v].name, "_DequantizeLinear");
	ret = !scale || !zero || !q || !qn || !sn || !zn || !dq || !dqn;
	if (ret)
		qm_oom();
	if (!ret) {
		const char *dqin[3] = { qn, sn, zn };

		weight_scales(fdata(w), &shape, axis, scale);
		weight_values(fdata(w), &shape, axis, scale, q);
		ret = !qm_add_init(qm, qn, VNPU_TYPE_I8, dims, shape.rank, q, n) ||
		      !(st = qm_add_init(qm, sn, VNPU_TYPE_F32, &c, 1, scale, (size_t)c * 4)) ||
		      !qm_add_init(qm, zn, VNPU_TYPE_I8, &c, 1, zero, (size_t)c) ||
		      !(*out = qm_new_node("DequantizeLinear", dqn, dqin, 3, dq, axis)) ||
		      dup_name(&qm->t[v].dq_name, dq) || dup_name(&qm->t[v].scale_name, sn);
		if (ret)
			qm_oom();
		else
			qm->t[v].wscale = (const float *)st->raw_data.data;
	}
	free(scale);
	free(zero);
	free(q);
	vnpu_tensor_free(w);
	return ret ? 1 : 0;
}

/* The bias of @n (Conv, Gemm) as i32 at x_scale * w_scale, when both are. */
static int bias_init(struct qmodel *qm, Onnx__NodeProto *n, Onnx__NodeProto **out)
{
	int32_t x = activation(qm, in(n, 0)), w = in(n, 1) ? qm_find(qm, n->input[1]) : -1;
	int32_t b = in(n, 2) ? qm_find(qm, n->input[2]) : -1;
	const char *qn, *sn, *dq, *dqn;
	const float *ws;
	vnpu_tensor *bt = NULL;
	float *scale;
	int32_t *q;
	int64_t c;
	int ret;

	*out = NULL;
	if (x < 0 || w < 0 || b < 0 || !quantized(qm, x) || !qm->t[w].wscale ||
	    qm->t[w].weight_axis != weight_axis(qm, n))
		return 0;
	c = init_dim(qm, n->input[1], (size_t)qm->t[w].weight_axis);
	if (!f32_init(qm, n->input[2], 1, c, 0) || (qm_is(n, "Gemm") &&
	    (qm_attr_float(n, "alpha", 1) != 1 || qm_attr_float(n, "beta", 1) != 1)))
		return 0;
	ws = qm->t[w].wscale;
	if (!ws || qm_init_floats(qm, b, &bt))
		return ws ? 1 : 0;
	scale = malloc((size_t)c * sizeof(*scale));
	q = malloc((size_t)c * sizeof(*q));
	qn = qm_unique(qm, n->input[2], "_quantized");
	sn = qm_unique(qm, n->input[2], "_scale");
	dq = qm_unique(qm, n->input[2], "_dequantized");
	dqn = qm_unique(qm, n->input[2], "_DequantizeLinear");
	ret = !scale || !q || !qn || !sn || !dq || !dqn;
	for (int64_t k = 0; !ret && k < c; k++) {
		double r;

		scale[k] = qm->t[x].scale * ws[k];
		r = scale[k] > 0 ? rint(fdata(bt)[k] / scale[k]) : 0;
		q[k] = (int32_t)fmin(fmax(r, INT32_MIN), INT32_MAX);
	}
	if (!ret) {
		const char *dqin[2] = { qn, sn };

		ret = !qm_add_init(qm, qn, VNPU_TYPE_I32, &c, 1, q, (size_t)c * 4) ||
		      !qm_add_init(qm, sn, VNPU_TYPE_F32, &c, 1, scale, (size_t)c * 4) ||
		      !(*out = qm_new_node("DequantizeLinear", dqn, dqin, 2, dq, 0)) ||
		      qm_set_name(qm, &n->input[2], dq);
	}
	free(scale);
	free(q);
	vnpu_tensor_free(bt);
	return ret ? qm_oom() : 0;
}

/* The new node list. */
struct node_list {
	Onnx__NodeProto **v;
	size_t n, cap;
};

static int list_push(struct node_list *l, Onnx__NodeProto *node)
{
	if (!node)
		return qm_oom();
	if (l->n == l->cap) {
		size_t c = l->cap ? l->cap * 2 : 64;
		Onnx__NodeProto **v = realloc(l->v, c * sizeof(*v));

		if (!v) {
			onnx__node_proto__free_unpacked(node, NULL);
			return qm_oom();
		}
		l->v = v;
		l->cap = c;
	}
	l->v[l->n++] = node;
	return 0;
}

/* Q -> DQ of activation @v, which @src holds, onto @l. */
static int push_pair(struct qmodel *qm, int32_t v, const char *src, struct node_list *l)
{
	Onnx__NodeProto *pair[2] = { NULL, NULL };

	if (act_nodes(qm, v, src, pair))
		return 1;
	if (list_push(l, pair[0])) {
		onnx__node_proto__free_unpacked(pair[1], NULL);
		return 1;
	}
	return list_push(l, pair[1]);
}

/* Every main-graph node input that has a dequantized name reads it, except
 * in nodes kept f32, which read f32 values. */
static int rename_readers(struct qmodel *qm, const struct options *o)
{
	for (size_t i = 0; i < qm->g->n_node; i++) {
		Onnx__NodeProto *n = qm->g->node[i];

		if (qm_kept(o, n))
			continue;
		for (size_t k = 0; k < n->n_input; k++) {
			int32_t v = n->input[k][0] ? qm_find(qm, n->input[k]) : -1;

			if (v >= 0 && qm->t[v].dq_name &&
			    (qm->t[v].weight_axis >= 0 || quantized(qm, v)) &&
			    qm_set_name(qm, &n->input[k], qm->t[v].dq_name))
				return 1;
		}
	}
	return 0;
}

/* The model's doc_string says how it was quantized. */
static int describe(struct qmodel *qm, const struct options *o)
{
	const char *doc = qm->proto->doc_string ? qm->proto->doc_string : "";
	size_t len = strlen(doc) + 128;
	char *s = malloc(len);

	if (!s)
		return qm_oom();
	snprintf(s, len, "%s%sQDQ by vnpu-quantize (%s activations, %s calibration)", doc,
		 doc[0] ? "; " : "", o->s8 ? "s8" : "u8",
		 o->method == CALIB_MINMAX ? "min-max" : "percentile");
	free(qm->proto->doc_string);
	qm->proto->doc_string = s;
	return 0;
}

/* Node @i followed by the Q -> DQ pairs of its quantized outputs. */
static int push_node(struct qmodel *qm, size_t i, struct node_list *l, size_t *pairs)
{
	Onnx__NodeProto *node = qm->g->node[i];
	int ret = list_push(l, node);

	for (size_t k = 0; !ret && k < node->n_output; k++) {
		int32_t v = node->output[k][0] ? qm_find(qm, node->output[k]) : -1;
		const char *src;

		if (v < 0 || !quantized(qm, v))
			continue;
		/* A model output: the producer writes NAME_float, the DQ NAME. */
		src = qm->t[v].name;
		if (qm->t[v].graph_output) {
			src = qm_unique(qm, qm->t[v].name, "_float");
			if (!src || qm_set_name(qm, &node->output[k], src))
				return qm_oom();
		}
		ret = push_pair(qm, v, src, l);
		++*pairs;
	}
	return ret;
}

int qdq_rewrite(struct qmodel *qm, const struct options *o, size_t *out_tensors,
		size_t *out_weights)
{
	struct node_list l = { 0 };
	size_t nodes = qm->g->n_node;
	uint32_t num_t = qm->num_t;
	Onnx__NodeProto *dq;
	int ret = 0;

	*out_tensors = *out_weights = 0;
	/* Parameters of the tensors computing their own first, then shares. */
	for (int pass = 0; pass < 2 && !ret; pass++)
		for (uint32_t v = 0; v < num_t && !ret; v++)
			if (quantized(qm, v) && (qm->t[v].share >= 0) == pass)
				ret = act_init(qm, o, (int32_t)v);
	for (uint32_t v = 0; v < num_t && !ret; v++) {
		if (qm->t[v].weight_axis < 0 || qm->t[v].init < 0)
			continue;
		ret = weight_init(qm, (int32_t)v, &dq) || list_push(&l, dq);
		++*out_weights;
	}
	for (size_t i = 0; i < nodes && !ret; i++) {
		ret = bias_init(qm, qm->g->node[i], &dq);
		if (!ret && dq)
			ret = list_push(&l, dq);
	}
	if (!ret)
		ret = rename_readers(qm, o);
	for (uint32_t v = 0; v < num_t && !ret; v++) {
		if (qm->t[v].graph_input && quantized(qm, v)) {
			ret = push_pair(qm, (int32_t)v, qm->t[v].name, &l);
			++*out_tensors;
		}
	}
	for (size_t i = 0; i < nodes && !ret; i++)
		ret = push_node(qm, i, &l, out_tensors);
	if (ret) {
		/* The graph's own nodes stay the graph's; only new ones are freed. */
		for (size_t i = 0; i < l.n; i++) {
			bool old = false;

			for (size_t k = 0; k < nodes && !old; k++)
				old = l.v[i] == qm->g->node[k];
			if (!old)
				onnx__node_proto__free_unpacked(l.v[i], NULL);
		}
		free(l.v);
		return 1;
	}
	free(qm->g->node);
	qm->g->node = l.v;
	qm->g->n_node = l.n;
	return describe(qm, o) || qm_drop_unused_inits(qm);
}

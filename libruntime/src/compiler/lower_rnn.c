// SPDX-License-Identifier: MIT
/*
 * RNN, GRU and LSTM, unrolled over the (static) sequence: one GEMM gives
 * every step's input projection X W^T + biases, then each step is a GEMM
 * with the recurrent weights (the projection as its residual) and a few
 * element-wise layers on views of the gates. Hidden and cell states live
 * in temporaries, or straight in Y's slice for the step.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/vnpu_engine.h"
#include "lower.h"

enum rnn_kind { RNN_PLAIN, RNN_GRU, RNN_LSTM };

struct rnn {
	enum rnn_kind kind;
	int64_t seq, batch, in, hidden, dirs, gates;
	struct vnpu_layer_act f, g, h;	/* the activations of one direction */
	bool linear_before_reset;
	bool batch_first;		/* layout 1 */
	bool reverse;			/* "reverse": the one direction runs back */
	vnpu_element_type type;
	/* this direction's recurrent weights packed, or -1 (see pack_view) */
	int32_t packed_r, packed_rzr, packed_rh;
};

/* Direction @d's [batch, H] slice of a state tensor (initial_h/c, Y_h, Y_c). */
static struct ctensor state_view(const struct cstate *s, const struct rnn *r, int32_t v, int64_t d);
/* Y's [batch, H] slice of step @t, direction @d. */
static struct ctensor y_view(const struct cstate *s, const struct rnn *r, int32_t v, int64_t t,
			     int64_t d);

/* A [rows, cols] view at element @off with row stride @ld. */
static struct ctensor mat(const struct cstate *s, int32_t v, int64_t off, int64_t rows, int64_t cols,
			  int64_t ld)
{
	struct ctensor t = ct_dense(s, v);

	memset(t.dims, 0, sizeof(t.dims));
	memset(t.strides, 0, sizeof(t.strides));
	t.off = off;
	t.rank = 2;
	t.dims[0] = rows;
	t.dims[1] = cols;
	t.strides[0] = ld;
	t.strides[1] = 1;
	return t;
}

static struct ctensor transposed(struct ctensor t)
{
	int64_t d = t.dims[0], st = t.strides[0];

	t.dims[0] = t.dims[1];
	t.strides[0] = t.strides[1];
	t.dims[1] = d;
	t.strides[1] = st;
	return t;
}

static struct ctensor state_view(const struct cstate *s, const struct rnn *r, int32_t v, int64_t d)
{
	if (r->batch_first)
		return mat(s, v, d * r->hidden, r->batch, r->hidden, r->dirs * r->hidden);
	return mat(s, v, d * r->batch * r->hidden, r->batch, r->hidden, r->hidden);
}

static struct ctensor y_view(const struct cstate *s, const struct rnn *r, int32_t v, int64_t t,
			     int64_t d)
{
	if (r->batch_first)
		return mat(s, v, (t * r->dirs + d) * r->hidden, r->batch, r->hidden,
			   r->seq * r->dirs * r->hidden);
	return mat(s, v, (t * r->dirs + d) * r->batch * r->hidden, r->batch, r->hidden, r->hidden);
}

/* Y = A B (+ C) (+ R): C and R broadcast against Y. */
/*
 * Whether the recurrent weights (R) take the precision hint's type: not
 * under f16, whose kernels run a step's few rows no faster than f32's
 * (lstm_packed_r()), so that the unrolled steps and the LSTM layer agree.
 */
static bool rec_hinted(const struct cstate *s)
{
	return s->opt.inference_precision != VNPU_TYPE_F16;
}

/*
 * B given as a transposed view [K, N] of rows of a constant f32 matrix:
 * those rows packed for the engine into a new constant (in the precision
 * hint's type when @hinted), or -1 when B is not constant (or packing is
 * off).
 */
static int32_t pack_view(struct cstate *s, struct ctensor b, bool hinted)
{
	const struct vnpu_tinfo binfo = *cs_info(s, b.val), *bi = &binfo;
	int64_t dims[2] = { b.dims[1], b.dims[0] };	/* stored [N, K] */
	int32_t rows, packed;
	float *copy;

	if (!bi->data || bi->type != VNPU_TYPE_F32 || s->opt.no_packing || b.rank != 2 ||
	    b.strides[0] != 1)
		return -1;
	copy = malloc((size_t)(dims[0] * dims[1] + 1) * sizeof(float));
	if (!copy)
		return -1;
	for (int64_t n = 0; n < dims[0]; n++)
		memcpy(&copy[n * dims[1]], (const float *)bi->data + b.off + n * b.strides[1],
		       (size_t)dims[1] * sizeof(float));
	if (cs_add_const(s, VNPU_TYPE_F32, 2, dims, copy, &rows) ||
	    cl_pack_gemm_b(s, rows, true, hinted, &packed))
		return -1;
	return packed;
}

/* Y = A B (+ C) (+ R), B from @packed when that is not -1. */
static vnpu_status gemm(struct cstate *s, struct ctensor a, struct ctensor b, int32_t packed,
			const struct ctensor *c, const struct ctensor *r, struct ctensor y)
{
	struct vnpu_layer_gemm attr = { .alpha = f32_bits(1.0f), .beta = f32_bits(1.0f) };
	struct ctensor t[5];
	uint32_t n = 0;

	t[n++] = a;
	t[n++] = packed >= 0 ? ct_dense(s, packed) : b;
	if (packed >= 0)
		attr.flags |= VNPU_LAYER_F_PACKED;
	if (c) {
		t[n++] = *c;
		attr.flags |= VNPU_LAYER_F_BIAS;
	}
	if (r) {
		t[n++] = *r;
		attr.flags |= VNPU_LAYER_F_RESIDUAL;
	}
	t[n++] = y;
	return cl_layer(s, VNPU_LAYER_GEMM, t, n, &attr, sizeof(attr));
}

static vnpu_status temp(struct cstate *s, const struct rnn *r, int64_t cols, struct ctensor *out)
{
	int64_t dims[2] = { r->batch, cols };
	int32_t v;
	vnpu_status st = cs_add_temp(s, r->type, 2, dims, &v);

	if (!st)
		*out = ct_dense(s, v);
	return st;
}

/* The activation named @name (an ONNX activation string) with its params. */
static bool act_by_name(const char *name, float alpha, float beta, bool has_alpha, bool has_beta,
			struct vnpu_layer_act *a)
{
	static const struct {
		const char *name;
		uint32_t func;
		float alpha, beta;
	} map[] = {
		{ "Sigmoid", VNPU_ACT_SIGMOID, 0, 0 }, { "Tanh", VNPU_ACT_TANH, 0, 0 },
		{ "Relu", VNPU_ACT_RELU, 0, 0 }, { "LeakyRelu", VNPU_ACT_LEAKY_RELU, 0.01f, 0 },
		{ "HardSigmoid", VNPU_ACT_HARD_SIGMOID, 0.2f, 0.5f }, { "Elu", VNPU_ACT_ELU, 1.0f, 0 },
		{ "Softsign", VNPU_ACT_SOFTSIGN, 0, 0 }, { "Softplus", VNPU_ACT_SOFTPLUS, 0, 0 },
		{ "ThresholdedRelu", VNPU_ACT_THRESHOLDED_RELU, 1.0f, 0 },
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		if (strcmp(name, map[i].name))
			continue;
		*a = (struct vnpu_layer_act){ .func = map[i].func };
		if (map[i].alpha != 0 || map[i].func == VNPU_ACT_LEAKY_RELU)
			a->alpha = f32_bits(has_alpha ? alpha : map[i].alpha);
		if (map[i].beta != 0)
			a->beta = f32_bits(has_beta ? beta : map[i].beta);
		return true;
	}
	return false;
}

static vnpu_status parse(struct cstate *s, const struct cop *op, struct rnn *r)
{
	const struct vnpu_node *n = op->node;
	const struct vnpu_tinfo *x = cs_info(s, op->in[0]), *w = cs_info(s, op->in[1]);
	const struct vnpu_attr *acts = vnpu_node_attr(n, "activations");
	const struct vnpu_attr *aa = vnpu_node_attr(n, "activation_alpha");
	const struct vnpu_attr *ab = vnpu_node_attr(n, "activation_beta");
	struct vnpu_layer_act *slots[3] = { &r->f, &r->g, &r->h };
	static const char *const defaults[3][3] = {
		{ "Tanh" }, { "Sigmoid", "Tanh" }, { "Sigmoid", "Tanh", "Tanh" },
	};
	const char *dir;
	int nacts;

	r->kind = !strcmp(n->op, "LSTM") ? RNN_LSTM : !strcmp(n->op, "GRU") ? RNN_GRU : RNN_PLAIN;
	nacts = (int)r->kind + 1;
	r->gates = r->kind == RNN_LSTM ? 4 : r->kind == RNN_GRU ? 3 : 1;
	r->type = x->type;
	if (x->type != VNPU_TYPE_F32 || x->rank != 3 || w->rank != 3)
		return UNSUP(s, "only f32 inputs of rank 3");
	if (vnpu_node_attr(n, "clip"))
		return UNSUP(s, "cell clipping");
	if (vnpu_attr_int(n, "input_forget", 0))
		return UNSUP(s, "input_forget");
	r->batch_first = vnpu_attr_int(n, "layout", 0);
	r->seq = x->dims[r->batch_first ? 1 : 0];
	r->batch = x->dims[r->batch_first ? 0 : 1];
	r->in = x->dims[2];
	r->dirs = w->dims[0];
	r->hidden = vnpu_attr_int(n, "hidden_size", w->dims[1] / r->gates);
	r->linear_before_reset = vnpu_attr_int(n, "linear_before_reset", 0);
	if (w->dims[1] != r->gates * r->hidden || w->dims[2] != r->in ||
	    (r->dirs != 1 && r->dirs != 2))
		return UNSUP(s, "weights of an unexpected shape");
	dir = vnpu_attr_str(n, "direction", "forward");
	if (strcmp(dir, "forward") && strcmp(dir, "reverse") && strcmp(dir, "bidirectional"))
		return cs_fail(s, VNPU_PARSE_ERROR, "direction '%s'", dir);
	if ((r->dirs == 2) != !strcmp(dir, "bidirectional"))
		return cs_fail(s, VNPU_PARSE_ERROR, "%lld weight directions for direction '%s'",
			       (long long)r->dirs, dir);
	r->reverse = !strcmp(dir, "reverse");
	if (acts && (acts->type != VNPU_ATTR_STRINGS || acts->n != (size_t)(nacts * r->dirs)))
		return UNSUP(s, "activations do not match the directions");
	for (int i = 0; i < nacts; i++) {
		const char *name = acts ? acts->strings[i] : defaults[r->kind][i];
		bool ok = act_by_name(name, aa && (size_t)i < aa->n ? aa->floats[i] : 0,
				      ab && (size_t)i < ab->n ? ab->floats[i] : 0,
				      aa && (size_t)i < aa->n, ab && (size_t)i < ab->n, slots[i]);

		if (!ok)
			return UNSUP(s, "activation '%s'", name);
		/* Both directions must use the same functions. */
		if (acts && r->dirs == 2 && strcmp(acts->strings[i], acts->strings[i + nacts]))
			return UNSUP(s, "different activations per direction");
	}
	if (op->num_in > 4 && op->in[4] >= 0) {
		const struct vnpu_tinfo *sl = cs_info(s, op->in[4]);

		if (!sl->data)
			return UNSUP(s, "sequence_lens computed at run time");
		for (int64_t b = 0; b < vnpu_tinfo_elems(sl); b++)
			if (vnpu_elem_get_i(sl->data, sl->type, b) != r->seq)
				return UNSUP(s, "sequence_lens shorter than the sequence");
	}
	return VNPU_OK;
}

/* Biases of the input projection (per direction, [gates * H]): Wb + Rb, but
 * for GRU with linear_before_reset without Rbh (added inside the step). */
static vnpu_status input_bias(struct cstate *s, const struct cop *op, const struct rnn *r,
			      int32_t *out)
{
	int64_t g = r->gates * r->hidden, dims[2] = { r->dirs, g };
	const struct vnpu_tinfo *b;
	float *sum;

	*out = -1;
	if (op->num_in < 4 || op->in[3] < 0)
		return VNPU_OK;
	b = cs_info(s, op->in[3]);
	if (!b->data) {
		if (r->kind == RNN_GRU && r->linear_before_reset)
			return UNSUP(s, "a bias computed at run time with linear_before_reset");
		return VNPU_OK;	/* Wb and Rb views go to the GEMM as C and R */
	}
	sum = malloc((size_t)(r->dirs * g) * sizeof(float));
	if (!sum)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	for (int64_t d = 0; d < r->dirs; d++)
		for (int64_t i = 0; i < g; i++) {
			const float *bd = (const float *)b->data + d * 2 * g;
			bool skip_rb = r->kind == RNN_GRU && r->linear_before_reset && i >= 2 * r->hidden;

			sum[d * g + i] = bd[i] + (skip_rb ? 0.0f : bd[g + i]);
		}
	return cs_add_const(s, VNPU_TYPE_F32, 2, dims, sum, out);
}

/* The state at the start of direction @d: initial value or zeros. */
static vnpu_status initial_state(struct cstate *s, const struct rnn *r, int32_t v, int64_t d,
				 struct ctensor *out)
{
	vnpu_status st;

	if (v >= 0) {
		*out = state_view(s, r, v, d);
		return VNPU_OK;
	}
	st = temp(s, r, r->hidden, out);
	return st ? st : cl_fill(s, *out, 0);
}

/* A chain step: unary @a of operand @x, or binary @func of @x and @y. */
static struct vnpu_chain_step chain_act(const struct vnpu_layer_act *a, uint32_t x)
{
	return (struct vnpu_chain_step){ .kind = VNPU_CHAIN_UNARY, .func = a->func, .a = x,
					 .alpha = a->alpha, .beta = a->beta };
}

static struct vnpu_chain_step chain_bin(uint32_t func, uint32_t x, uint32_t y)
{
	return (struct vnpu_chain_step){ .kind = VNPU_CHAIN_BINARY, .func = func, .a = x, .b = y };
}

/*
 * An LSTM step without peepholes in two CHAIN layers, the same functions
 * on the same values as the layers of lstm_step(): C = f(Gf) * C + f(Gi) *
 * g(Gc), then H = f(Go) * h(C).
 */
static vnpu_status lstm_step_chained(struct cstate *s, const struct rnn *r, struct ctensor g,
				     struct ctensor *c, struct ctensor hout)
{
	int64_t hs = r->hidden, ld = g.strides[0];
	struct vnpu_layer_chain cell = { .num_steps = 6 }, out = { .num_steps = 3 };
	struct ctensor t[5], cn;
	vnpu_status st;

	st = temp(s, r, hs, &cn);
	if (st)
		return st;
	t[0] = mat(s, g.val, g.off + 2 * hs, r->batch, hs, ld);	/* f */
	t[1] = *c;
	t[2] = mat(s, g.val, g.off, r->batch, hs, ld);		/* i */
	t[3] = mat(s, g.val, g.off + 3 * hs, r->batch, hs, ld);	/* c~ */
	t[4] = cn;
	cell.steps[0] = chain_act(&r->f, VNPU_CHAIN_IN(0));
	cell.steps[1] = chain_bin(VNPU_BIN_MUL, VNPU_CHAIN_STEP(0), VNPU_CHAIN_IN(1));
	cell.steps[2] = chain_act(&r->f, VNPU_CHAIN_IN(2));
	cell.steps[3] = chain_act(&r->g, VNPU_CHAIN_IN(3));
	cell.steps[4] = chain_bin(VNPU_BIN_MUL, VNPU_CHAIN_STEP(2), VNPU_CHAIN_STEP(3));
	cell.steps[5] = chain_bin(VNPU_BIN_ADD, VNPU_CHAIN_STEP(1), VNPU_CHAIN_STEP(4));
	st = cl_layer(s, VNPU_LAYER_CHAIN, t, 5, &cell, sizeof(cell));
	if (st)
		return st;
	t[0] = mat(s, g.val, g.off + hs, r->batch, hs, ld);		/* o */
	t[1] = cn;
	t[2] = hout;
	out.steps[0] = chain_act(&r->f, VNPU_CHAIN_IN(0));
	out.steps[1] = chain_act(&r->h, VNPU_CHAIN_IN(1));
	out.steps[2] = chain_bin(VNPU_BIN_MUL, VNPU_CHAIN_STEP(0), VNPU_CHAIN_STEP(1));
	*c = cn;
	return cl_layer(s, VNPU_LAYER_CHAIN, t, 3, &out, sizeof(out));
}

/* One LSTM step: gates G [batch, 4H] in iofc order. */
static vnpu_status lstm_step(struct cstate *s, const struct rnn *r, struct ctensor g,
			     const int32_t peep, int64_t d, struct ctensor *c, struct ctensor hout)
{
	int64_t hs = r->hidden, ld = g.strides[0];
	struct ctensor sg, ct, a, b, cn, th;
	vnpu_status st;

	if (peep < 0 && !s->opt.no_fusion &&
	    (!s->opt.primary_layer_ops || s->opt.primary_layer_ops >> VNPU_LAYER_CHAIN & 1))
		return lstm_step_chained(s, r, g, c, hout);
	st = temp(s, r, 3 * hs, &sg);
	if (!st && peep >= 0) {
		/* i and f see the previous cell (o sees the new one, below). */
		for (int k = 0; !st && k < 2; k++) {
			int64_t gate = k ? 2 * hs : 0;	/* i at 0, f at 2H */
			struct ctensor p = mat(s, peep, d * 3 * hs + gate, 1, hs, hs), pc, sum;

			st = temp(s, r, hs, &pc);
			if (!st)
				st = cl_binary_t(s, VNPU_BIN_MUL, *c, p, pc);
			if (!st)
				st = temp(s, r, hs, &sum);
			if (!st)
				st = cl_binary_t(s, VNPU_BIN_ADD, mat(s, g.val, g.off + gate, r->batch, hs, ld), pc,
					 sum);
			if (!st)
				st = cl_unary_t(s, &r->f, sum, mat(s, sg.val, gate, r->batch, hs, 3 * hs));
		}
	} else if (!st) {
		/* i, o, f through f() at once. */
		st = cl_unary_t(s, &r->f, mat(s, g.val, g.off, r->batch, 3 * hs, ld), sg);
	}
	if (!st)
		st = temp(s, r, hs, &ct);
	if (!st)
		st = cl_unary_t(s, &r->g, mat(s, g.val, g.off + 3 * hs, r->batch, hs, ld), ct);
	/* C = f * C + i * c~ */
	if (!st)
		st = temp(s, r, hs, &a);
	if (!st)
		st = cl_binary_t(s, VNPU_BIN_MUL, mat(s, sg.val, 2 * hs, r->batch, hs, 3 * hs), *c, a);
	if (!st)
		st = temp(s, r, hs, &b);
	if (!st)
		st = cl_binary_t(s, VNPU_BIN_MUL, mat(s, sg.val, 0, r->batch, hs, 3 * hs), ct, b);
	if (!st)
		st = temp(s, r, hs, &cn);
	if (!st)
		st = cl_binary_t(s, VNPU_BIN_ADD, a, b, cn);
	if (!st && peep >= 0) {
		/* o = f(o_pre + Po * C): recompute o from the pre-activation. */
		struct ctensor po = mat(s, peep, d * 3 * hs + hs, 1, hs, hs), pc, sum;

		st = temp(s, r, hs, &pc);
		if (!st)
			st = cl_binary_t(s, VNPU_BIN_MUL, cn, po, pc);
		if (!st)
			st = temp(s, r, hs, &sum);
		if (!st)
			st = cl_binary_t(s, VNPU_BIN_ADD, mat(s, g.val, g.off + hs, r->batch, hs, ld), pc, sum);
		if (!st)
			st = cl_unary_t(s, &r->f, sum, mat(s, sg.val, hs, r->batch, hs, 3 * hs));
	}
	/* H = o * h(C) */
	if (!st)
		st = temp(s, r, hs, &th);
	if (!st)
		st = cl_unary_t(s, &r->h, cn, th);
	if (!st)
		st = cl_binary_t(s, VNPU_BIN_MUL, mat(s, sg.val, hs, r->batch, hs, 3 * hs), th, hout);
	if (!st)
		*c = cn;
	return st;
}

/* One GRU step from the input projection row @xw [batch, 3H] (zrh). */
static vnpu_status gru_step(struct cstate *s, const struct rnn *r, const struct cop *op,
			    struct ctensor xw, int64_t d, struct ctensor h, struct ctensor hout)
{
	int64_t hs = r->hidden, roff = d * 3 * hs * hs;
	int32_t rv = op->in[2];
	struct ctensor gr, zr, hh, ht, t1, t2, t3;
	struct ctensor rzr = transposed(mat(s, rv, roff, 2 * hs, hs, hs));
	struct ctensor rh = transposed(mat(s, rv, roff + 2 * hs * hs, hs, hs, hs));
	struct ctensor xzr = mat(s, xw.val, xw.off, r->batch, 2 * hs, xw.strides[0]);
	struct ctensor xh = mat(s, xw.val, xw.off + 2 * hs, r->batch, hs, xw.strides[0]);
	struct ctensor rz = mat(s, 0, 0, 0, 0, 0);
	vnpu_status st;

	st = temp(s, r, 2 * hs, &gr);
	if (!st)
		st = gemm(s, h, rzr, r->packed_rzr, NULL, &xzr, gr);
	if (!st)
		st = temp(s, r, 2 * hs, &zr);
	if (!st)
		st = cl_unary_t(s, &r->f, gr, zr);
	if (st)
		return st;
	rz = mat(s, zr.val, hs, r->batch, hs, 2 * hs);
	st = temp(s, r, hs, &hh);
	if (!st)
		st = temp(s, r, hs, &t1);
	if (!st && !r->linear_before_reset) {
		/* h~ = g(x Wh + (r * H) Rh^T) */
		st = cl_binary_t(s, VNPU_BIN_MUL, rz, h, t1);
		if (!st)
			st = gemm(s, t1, rh, r->packed_rh, NULL, &xh, hh);
	} else if (!st) {
		/* h~ = g(x Wh + r * (H Rh^T + Rbh)) */
		struct ctensor rbh;
		bool has_b = op->num_in > 3 && op->in[3] >= 0;

		rbh = has_b ? mat(s, op->in[3], d * 6 * hs + 5 * hs, 1, hs, hs) : t1;
		st = gemm(s, h, rh, r->packed_rh, has_b ? &rbh : NULL, NULL, t1);
		if (!st)
			st = temp(s, r, hs, &t3);
		if (!st)
			st = cl_binary_t(s, VNPU_BIN_MUL, rz, t1, t3);
		if (!st)
			st = cl_binary_t(s, VNPU_BIN_ADD, xh, t3, hh);
	}
	if (!st)
		st = temp(s, r, hs, &ht);
	if (!st)
		st = cl_unary_t(s, &r->g, hh, ht);
	/* H = h~ + z * (H - h~) */
	if (!st)
		st = temp(s, r, hs, &t2);
	if (!st)
		st = cl_binary_t(s, VNPU_BIN_SUB, h, ht, t2);
	if (!st)
		st = temp(s, r, hs, &t3);
	if (!st)
		st = cl_binary_t(s, VNPU_BIN_MUL, mat(s, zr.val, 0, r->batch, hs, 2 * hs), t2, t3);
	return st ? st : cl_binary_t(s, VNPU_BIN_ADD, ht, t3, hout);
}

static vnpu_status direction(struct cstate *s, const struct cop *op, const struct rnn *rnn,
			     int64_t d, int32_t xw)
{
	struct rnn packs = *rnn, *r = &packs;
	int64_t roff = d * rnn->gates * rnn->hidden * rnn->hidden, hh = rnn->hidden * rnn->hidden;

	int64_t hs = r->hidden, gh = r->gates * hs;
	int32_t y = op->num_out > 0 ? op->out[0] : -1, yh = op->num_out > 1 ? op->out[1] : -1;
	int32_t yc = op->num_out > 2 ? op->out[2] : -1;
	int32_t init_h = op->num_in > 5 ? op->in[5] : -1, init_c = op->num_in > 6 ? op->in[6] : -1;
	int32_t peep = op->num_in > 7 ? op->in[7] : -1;
	struct ctensor h, c = { 0 }, rt = transposed(mat(s, op->in[2], d * gh * hs, gh, hs, hs));
	vnpu_status st;

	/* Packed once, used by every step. */
	r->packed_r = r->kind == RNN_GRU ? -1 : pack_view(s, rt, rec_hinted(s));
	r->packed_rzr = r->kind != RNN_GRU ? -1 :
		pack_view(s, transposed(mat(s, op->in[2], roff, 2 * r->hidden, r->hidden, r->hidden)),
			  rec_hinted(s));
	r->packed_rh = r->kind != RNN_GRU ? -1 :
		pack_view(s, transposed(mat(s, op->in[2], roff + 2 * hh, r->hidden, r->hidden,
					   r->hidden)), rec_hinted(s));
	st = initial_state(s, r, init_h, d, &h);
	if (!st && r->kind == RNN_LSTM)
		st = initial_state(s, r, init_c, d, &c);
	for (int64_t step = 0; !st && step < r->seq; step++) {
		int64_t t = d || r->reverse ? r->seq - 1 - step : step;
		struct ctensor row = mat(s, xw, (t * r->dirs + d) * r->batch * gh, r->batch, gh, gh);
		struct ctensor hout, g;

		if (y >= 0)
			hout = y_view(s, r, y, t, d);
		else
			st = temp(s, r, hs, &hout);
		if (st)
			break;
		if (r->kind == RNN_GRU) {
			st = gru_step(s, r, op, row, d, h, hout);
		} else {
			st = temp(s, r, gh, &g);
			if (!st)
				st = gemm(s, h, rt, r->packed_r, NULL, &row, g);
			if (!st && r->kind == RNN_LSTM)
				st = lstm_step(s, r, g, peep, d, &c, hout);
			else if (!st)
				st = cl_unary_t(s, &r->f, g, hout);
		}
		h = hout;
	}
	if (!st && yh >= 0)
		st = cl_copy(s, state_view(s, r, yh, d), h);
	if (!st && yc >= 0 && r->kind == RNN_LSTM)
		st = cl_copy(s, state_view(s, r, yc, d), c);
	return st;
}

/*
 * Whether the LSTM runs as one LSTM layer: no peepholes, time-major, not
 * "reverse" alone, constant f32 R (packed in the precision hint's type,
 * as the unrolled steps' GEMMs pack it), and fusion allowed.
 */
static bool lstm_fusable(struct cstate *s, const struct cop *op, const struct rnn *r)
{
	const struct vnpu_tinfo *rw = cs_info(s, op->in[2]);
	return r->kind == RNN_LSTM && !(op->num_in > 7 && op->in[7] >= 0) && !r->batch_first &&
	       rw->rank == 3 && rw->dims[0] == r->dirs && rw->dims[1] == 4 * r->hidden &&
	       rw->dims[2] == r->hidden &&
	       strcmp(vnpu_attr_str(op->node, "direction", "forward"), "reverse") &&
	       rw->data && rw->type == VNPU_TYPE_F32 && !s->opt.no_packing && !s->opt.no_fusion &&
	       (!s->opt.primary_layer_ops || s->opt.primary_layer_ops >> VNPU_LAYER_LSTM & 1);
}

/*
 * Every direction's R [4H, H] packed as GEMM's B [H, 4H], one after the
 * other, in the precision hint's type as cl_pack_gemm_b() packs it (bf16
 * in depth pairs per direction), but in f32 under the f16 hint: the steps
 * are mat-vecs, which no f16 kernel runs faster (CRNN's two LSTMs took
 * twice their f32 time on widened f16 R).
 */
static vnpu_status lstm_packed_r(struct cstate *s, const struct cop *op, const struct rnn *r,
				 int32_t *out)
{
	const float *rw = cs_info(s, op->in[2])->data;
	int64_t hs = r->hidden, g = 4 * hs;
	uint64_t per = vnpu_eng_packed_size(VNPU_PACK_GEMM_B, 1, (uint64_t)hs, (uint64_t)g);
	int64_t size = (int64_t)per * r->dirs;
	float *packed = calloc((size_t)size + 1, sizeof(float));
	float *dense = malloc((size_t)(hs * g) * sizeof(float));
	vnpu_element_type hint = s->opt.inference_precision;
	vnpu_status st = VNPU_OK;
	uint16_t *half;

	if (!packed || !dense) {
		free(packed);
		free(dense);
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory packing weights");
	}
	for (int64_t d = 0; d < r->dirs && !st; d++) {
		for (int64_t k = 0; k < hs; k++)
			for (int64_t n = 0; n < g; n++)
				dense[k * g + n] = rw[(d * g + n) * hs + k];
		if (vnpu_eng_pack(VNPU_PACK_GEMM_B, dense, 1, (uint64_t)hs, (uint64_t)g,
				  packed + d * (int64_t)per))
			st = VNPU_UNSUPPORTED;
	}
	free(dense);
	if (st) {
		free(packed);
		return st;
	}
	if (hint != VNPU_TYPE_BF16)
		return cs_add_const(s, VNPU_TYPE_F32, 1, &size, packed, out);
	half = malloc((size_t)size * sizeof(*half) + 1);
	if (!half) {
		free(packed);
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory packing weights");
	}
	for (int64_t i = 0; i < size; i++)
		vnpu_elem_set_f(half, hint, i, packed[i]);
	free(packed);
	for (int64_t d = 0; hint == VNPU_TYPE_BF16 && d < r->dirs && !st; d++)
		if (vnpu_eng_pair_bf16(VNPU_PACK_GEMM_B, 1, (uint64_t)hs, (uint64_t)g,
				       half + d * (int64_t)per))
			st = VNPU_UNSUPPORTED;
	if (st) {
		free(half);
		return st;
	}
	return cs_add_const(s, hint, 1, &size, half, out);
}

/* Output @i of @op, or a temporary [@d0, @d1, @d2(, @d3)] in its place. */
static vnpu_status lstm_output(struct cstate *s, const struct cop *op, uint32_t i, int32_t rank,
			       const int64_t *dims, struct ctensor *out)
{
	int32_t v;
	vnpu_status st;

	if (op->num_out > i && op->out[i] >= 0) {
		*out = ct_dense(s, op->out[i]);
		return VNPU_OK;
	}
	st = cs_add_temp(s, VNPU_TYPE_F32, rank, dims, &v);
	if (!st)
		*out = ct_dense(s, v);
	return st;
}

/* The initial state input @i, or zeros [dirs, batch, H]. */
static vnpu_status lstm_initial(struct cstate *s, const struct cop *op, uint32_t i,
				const int64_t *dims, struct ctensor *out)
{
	int32_t v;
	vnpu_status st;

	if (op->num_in > i && op->in[i] >= 0) {
		*out = ct_dense(s, op->in[i]);
		return VNPU_OK;
	}
	st = cs_add_temp(s, VNPU_TYPE_F32, 3, dims, &v);
	if (st)
		return st;
	*out = ct_dense(s, v);
	return cl_fill(s, *out, 0);
}

/* The recurrence of every direction as one LSTM layer on XW [seq, dirs * batch, 4H]. */
static vnpu_status lstm_layer(struct cstate *s, const struct cop *op, const struct rnn *r,
			      int32_t xw)
{
	struct vnpu_layer_lstm attr = { .f = r->f, .g = r->g, .h = r->h };
	int64_t state[3] = { r->dirs, r->batch, r->hidden };
	int64_t y[4] = { r->seq, r->dirs, r->batch, r->hidden };
	struct ctensor t[7];
	int32_t packed;
	vnpu_status st = lstm_packed_r(s, op, r, &packed);

	if (st)
		return st;
	y[3] = 4 * r->hidden;
	t[0] = ct_shaped(s, xw, 4, y);	/* XW [seq, dirs, batch, 4H] */
	y[3] = r->hidden;
	t[1] = ct_dense(s, packed);
	st = lstm_initial(s, op, 5, state, &t[2]);
	if (!st)
		st = lstm_initial(s, op, 6, state, &t[3]);
	if (!st)
		st = lstm_output(s, op, 0, 4, y, &t[4]);
	if (!st)
		st = lstm_output(s, op, 1, 3, state, &t[5]);
	if (!st)
		st = lstm_output(s, op, 2, 3, state, &t[6]);
	return st ? st : cl_layer(s, VNPU_LAYER_LSTM, t, 7, &attr, sizeof(attr));
}

/*
 * Whether the rows of @t [seq, batch, cols] lie evenly apart across steps:
 * one batch row, or each step's rows right after the step before's.
 */
static bool one_batch_of_steps(const struct ctensor *t)
{
	return t->dims[1] == 1 || t->strides[0] == t->dims[1] * t->strides[1];
}

/*
 * @t [seq, batch, cols] as [seq * batch, cols], so that the projection is
 * one GEMM whose weights stream once rather than a one-row product per
 * step, each reading all of W (2 MB a direction in the CRNN).
 */
static void steps_as_rows(struct ctensor *t)
{
	int64_t rs = t->dims[1] == 1 ? t->strides[0] : t->strides[1];

	t->rank = 2;
	t->dims[0] *= t->dims[1];
	t->dims[1] = t->dims[2];
	t->strides[0] = rs;
	t->strides[1] = 1;
	t->dims[2] = 0;
	t->strides[2] = 0;
}

vnpu_status cl_lower_rnn(struct cstate *s, struct cop *op)
{
	struct rnn r = { 0 };
	int64_t dims[3];
	int32_t xw, bias;
	bool fused;
	vnpu_status st = parse(s, op, &r);

	/*
	 * An empty batch: Y, Y_h and Y_c hold no elements, so there is
	 * nothing to compute (and the gates' views at offsets into empty
	 * temporaries would point past them).
	 */
	if (st || !r.batch)
		return st;
	st = input_bias(s, op, &r, &bias);
	if (st)
		return st;
	/* XW [seq, dirs, batch, G]: every step's input projection. */
	dims[0] = r.seq;
	dims[1] = r.dirs * r.batch;
	dims[2] = r.gates * r.hidden;
	st = cs_add_temp(s, r.type, 3, dims, &xw);
	fused = !st && lstm_fusable(s, op, &r);
	for (int64_t d = 0; !st && d < r.dirs; d++) {
		int64_t g = r.gates * r.hidden;
		struct ctensor x = mat(s, op->in[0], 0, r.seq, r.in, r.in);
		struct ctensor w = transposed(mat(s, op->in[1], d * g * r.in, g, r.in, r.in));
		struct ctensor y = mat(s, xw, d * r.batch * g, r.seq, g, g);
		struct ctensor cb, rb;
		bool views = bias < 0 && op->num_in > 3 && op->in[3] >= 0;

		/* X as [seq, batch, I] in either layout; the projection's
		 * rows of one step are [dirs][batch]. */
		x.rank = y.rank = 3;
		x.dims[1] = y.dims[1] = r.batch;
		x.dims[2] = r.in;
		y.dims[2] = g;
		x.strides[0] = r.batch_first ? r.in : r.batch * r.in;
		x.strides[1] = r.batch_first ? r.seq * r.in : r.in;
		x.strides[2] = 1;
		y.strides[0] = r.dirs * r.batch * g;
		y.strides[1] = g;
		y.strides[2] = 1;
		if (one_batch_of_steps(&x) && one_batch_of_steps(&y)) {
			steps_as_rows(&x);
			steps_as_rows(&y);
		}
		if (bias >= 0)
			cb = mat(s, bias, d * g, 1, g, g);
		if (views) {
			cb = mat(s, op->in[3], d * 2 * g, 1, g, g);
			rb = mat(s, op->in[3], d * 2 * g + g, 1, g, g);
		}
		st = gemm(s, x, w, pack_view(s, w, true), bias >= 0 || views ? &cb : NULL,
				 views ? &rb : NULL, y);
		if (!st && !fused)
			st = direction(s, op, &r, d, xw);
	}
	return !st && fused ? lstm_layer(s, op, &r, xw) : st;
}

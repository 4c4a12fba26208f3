// SPDX-License-Identifier: MIT
/*
 * Shape inference of the NN ops: convolutions and pooling, Gemm/MatMul
 * (and their integer and QLinear forms), reductions, softmax, the
 * normalizations, resize, TopK, recurrent layers, losses, quantization,
 * Einsum, windows and Fourier transforms.
 */
#include <math.h>
#include <string.h>

#include "infer_priv.h"

static vnpu_status conv_shape(struct ictx *c, const struct vnpu_tinfo *x,
			      const struct vnpu_tinfo *w, vnpu_element_type out_type);
static vnpu_status matmul_shape(struct ictx *c, const struct vnpu_tinfo *a,
				const struct vnpu_tinfo *b, vnpu_element_type out_type);

/*
 * Input [N, C, d1...], target [N, d1...] and weight [C]: a target value is
 * a class (or ignore_index), so C = 0 leaves none in range.
 */
static vnpu_status check_loss_shapes(const struct ictx *c, const struct vnpu_tinfo *x,
				     const struct vnpu_tinfo *t)
{
	int64_t dims[VNPU_MAX_RANK];
	vnpu_status st;

	if (x->rank < 2)
		return VNPU_OK;
	for (int32_t d = 0; d < x->rank - 1; d++)
		dims[d] = x->dims[d ? d + 1 : 0];
	st = inf_check_dims(c, 1, "target", x->rank - 1, dims);
	if (!st)
		st = inf_check_dims(c, 2, "weight", 1, &x->dims[1]);
	if (!st && x->dims[1] == 0 && vnpu_tinfo_elems(t) > 0)
		return FAIL(c, "input has no classes (dimension 1 is 0) for %lld targets",
			    (long long)vnpu_tinfo_elems(t));
	return st;
}

/* NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss. */
static vnpu_status infer_loss(struct ictx *c)
{
	const struct vnpu_tinfo *x, *t;
	const char *red = vnpu_attr_str(c->n, "reduction", "mean");
	vnpu_status st = inf_need_inputs(c, 2, 3);

	if (st)
		return st;
	x = IN(c, 0);
	t = IN(c, 1);
	if (t->type != VNPU_TYPE_I64 && t->type != VNPU_TYPE_I32)
		return FAIL(c, "target is %s", vnpu_element_type_str(t->type));
	if (x->rank >= 0 && (x->rank < 2 || (t->rank >= 0 && t->rank != x->rank - 1)))
		return FAIL(c, "input rank %d, target rank %d", x->rank, t->rank);
	st = check_loss_shapes(c, x, t);
	if (st)
		return st;
	if (!strcmp(red, "none"))
		copy_shape(c->out[0], t, x->type);
	else if (!strcmp(red, "sum") || !strcmp(red, "mean"))
		set_out(c->out[0], x->type, 0, NULL);
	else
		return FAIL(c, "reduction '%s'", red);
	if (c->n->num_outputs > 1 && c->out[1])
		copy_shape(c->out[1], x, x->type);
	return VNPU_OK;
}

/* EyeLike depends on the input's shape only: always a constant. */
static vnpu_status infer_eye_like(struct ictx *c)
{
	const struct vnpu_tinfo *x;
	struct vnpu_tinfo *o = c->out[0];
	int64_t k = vnpu_attr_int(c->n, "k", 0);
	vnpu_element_type t;
	vnpu_status st = inf_need_inputs(c, 1, 1);

	if (st)
		return st;
	x = IN(c, 0);
	t = (vnpu_element_type)vnpu_attr_int(c->n, "dtype", x->type);
	if (!vnpu_element_type_size(t))
		return inf_error(c, VNPU_UNSUPPORTED, "dtype %d", (int)t);
	if (x->rank >= 0 && x->rank != 2)
		return FAIL(c, "input rank %d, not 2", x->rank);
	copy_shape(o, x, t);
	/* No rows when there are no columns: 2^40 x 0 is no 2^40 steps. */
	if (c->fold_limit > 0 && vnpu_tinfo_static(o) && inf_alloc_out(c, o))
		for (int64_t i = 0; o->dims[1] && i < o->dims[0]; i++)
			if (i + k >= 0 && i + k < o->dims[1])
				vnpu_elem_set_i(o->data, t, i * o->dims[1] + i + k, 1);
	return VNPU_OK;
}

/* @a * @b, unknown (VNPU_DIM_DYNAMIC) when either is. */
static int64_t dim_mul(int64_t a, int64_t b)
{
	return a < 0 || b < 0 ? VNPU_DIM_DYNAMIC : a * b;
}

/*
 * The weights and states of a recurrent layer against X [seq, batch, I]:
 * W [dirs, gates*H, I], R [dirs, gates*H, H], B [dirs, 2*gates*H],
 * sequence_lens [batch], initial_h and initial_c [dirs, batch, H] (batch
 * first in layout 1), P [dirs, 3*H]; H from hidden_size, else from W or R.
 */
static vnpu_status check_rnn_inputs(const struct ictx *c, int64_t gates, int64_t dirs,
				    int64_t batch, int64_t in, bool batch_first, int64_t *hidden)
{
	const struct vnpu_tinfo *w = IN(c, 1), *r = IN(c, 2);
	int64_t h = vnpu_attr_int(c->n, "hidden_size", VNPU_DIM_DYNAMIC), gh;
	vnpu_status st;

	if (h < 0 && w->rank == 3 && w->dims[1] >= 0)
		h = w->dims[1] / gates;
	if (h < 0 && r->rank == 3)
		h = r->dims[2];
	if (h == 0 || h > VNPU_MAX_ELEMS)
		return FAIL(c, "hidden size %lld", (long long)h);
	gh = dim_mul(gates, h);
	st = inf_check_dims(c, 1, "W", 3, (int64_t[]){ dirs, gh, in });
	if (!st)
		st = inf_check_dims(c, 2, "R", 3, (int64_t[]){ dirs, gh, h });
	if (!st)
		st = inf_check_dims(c, 3, "B", 2, (int64_t[]){ dirs, dim_mul(2, gh) });
	if (!st)
		st = inf_check_dims(c, 4, "sequence_lens", 1, &batch);
	for (uint32_t i = 5; !st && i < 7; i++)
		st = inf_check_dims(c, i, i == 5 ? "initial_h" : "initial_c", 3,
				    batch_first ? (int64_t[]){ batch, dirs, h } :
						  (int64_t[]){ dirs, batch, h });
	if (!st)
		st = inf_check_dims(c, 7, "P", 2, (int64_t[]){ dirs, dim_mul(3, h) });
	*hidden = h;
	return st;
}

/* RNN, GRU, LSTM: Y [seq, dirs, batch, H], Y_h and Y_c [dirs, batch, H]
 * (layout 1: batch first). The steps are unrolled, VNPU_MAX_LOOP_ITERS at
 * most, as a Loop's iterations. */
static vnpu_status infer_rnn(struct ictx *c)
{
	const struct vnpu_tinfo *x, *w;
	int64_t gates = !strcmp(c->n->op, "LSTM") ? 4 : !strcmp(c->n->op, "GRU") ? 3 : 1;
	bool batch_first = vnpu_attr_int(c->n, "layout", 0);
	int64_t seq, batch, in, dirs, hidden = VNPU_DIM_DYNAMIC, y[4], yh[3];
	vnpu_status st = inf_need_inputs(c, 3, gates == 4 ? 8 : 6);

	if (st)
		return st;
	x = IN(c, 0);
	w = IN(c, 1);
	if (x->type != w->type || IN(c, 2)->type != x->type)
		return FAIL(c, "input types differ");
	if ((x->rank >= 0 && x->rank != 3) || (w->rank >= 0 && w->rank != 3))
		return FAIL(c, "X and W must have rank 3");
	seq = x->rank < 0 ? -1 : x->dims[batch_first ? 1 : 0];
	batch = x->rank < 0 ? -1 : x->dims[batch_first ? 0 : 1];
	in = x->rank < 0 ? -1 : x->dims[2];
	dirs = !strcmp(vnpu_attr_str(c->n, "direction", "forward"), "bidirectional") ? 2 : 1;
	st = check_rnn_inputs(c, gates, dirs, batch, in, batch_first, &hidden);
	if (st)
		return st;
	if (seq > VNPU_MAX_LOOP_ITERS)
		return inf_limit(c, "a sequence of %lld steps (at most %d are unrolled)",
				 (long long)seq, VNPU_MAX_LOOP_ITERS);
	if (batch_first) {
		y[0] = batch, y[1] = seq, y[2] = dirs, y[3] = hidden;
		yh[0] = batch, yh[1] = dirs, yh[2] = hidden;
	} else {
		y[0] = seq, y[1] = dirs, y[2] = batch, y[3] = hidden;
		yh[0] = dirs, yh[1] = batch, yh[2] = hidden;
	}
	if (c->out[0])
		set_out(c->out[0], x->type, 4, y);
	for (uint32_t i = 1; i < c->n->num_outputs && i < 3; i++)
		if (c->out[i])
			set_out(c->out[i], x->type, 3, yh);
	return VNPU_OK;
}

/* OneHot: the indices' shape with depth inserted at axis. */
static vnpu_status infer_one_hot(struct ictx *c)
{
	const struct vnpu_tinfo *idx, *depth, *values;
	int64_t axis, dims[VNPU_MAX_RANK], d = VNPU_DIM_DYNAMIC;
	vnpu_status st = inf_need_inputs(c, 3, 3);

	if (st)
		return st;
	idx = IN(c, 0);
	depth = IN(c, 1);
	values = IN(c, 2);
	if (idx->rank < 0) {
		set_out(c->out[0], values->type, -1, NULL);
		return VNPU_OK;
	}
	if (idx->rank + 1 > VNPU_MAX_RANK)
		return inf_limit(c, "rank above %d", VNPU_MAX_RANK);
	/* The off and on values: a lowering reads both. */
	if (vnpu_tinfo_static(values) && vnpu_tinfo_elems(values) != 2)
		return FAIL(c, "values holds %lld values, not two",
			    (long long)vnpu_tinfo_elems(values));
	st = inf_check_axis(c, vnpu_attr_int(c->n, "axis", -1), idx->rank + 1, &axis);
	if (st)
		return st;
	if (has_data(depth) && vnpu_tinfo_elems(depth) == 1) {
		d = (int64_t)vnpu_elem_get_f(depth->data, depth->type, 0);
		if (d < 1 || d > (1 << 24))
			return FAIL(c, "depth %lld", (long long)d);
	}
	for (int32_t k = 0, j = 0; k <= idx->rank; k++)
		dims[k] = k == axis ? d : idx->dims[j++];
	set_out(c->out[0], values->type, idx->rank + 1, dims);
	return VNPU_OK;
}

/* QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear. */
/*
 * A scale or zero point @i of (De)QuantizeLinear that is 1-D of other than
 * one element holds one value per index of X's dimension axis.
 */
static vnpu_status check_per_axis(const struct ictx *c, uint32_t i, const char *what)
{
	const struct vnpu_tinfo *x = IN(c, 0), *t = IN(c, i);
	int64_t axis;
	vnpu_status st;

	if (!t || t->rank != 1 || t->dims[0] == 1 || x->rank < 0)
		return VNPU_OK;
	st = inf_check_axis(c, vnpu_attr_int(c->n, "axis", 1), x->rank, &axis);
	if (!st && x->rank == 0)
		return FAIL(c, "a %s per axis for a scalar", what);
	return st ? st : inf_check_dims(c, i, what, 1, &x->dims[axis]);
}

static vnpu_status infer_quant(struct ictx *c)
{
	const struct vnpu_tinfo *x;
	vnpu_status st;

	if (!strcmp(c->n->op, "DynamicQuantizeLinear")) {
		st = inf_need_inputs(c, 1, 1);
		if (st)
			return st;
		copy_shape(c->out[0], IN(c, 0), VNPU_TYPE_U8);
		if (c->n->num_outputs > 1 && c->out[1])
			set_out(c->out[1], VNPU_TYPE_F32, 0, NULL);
		if (c->n->num_outputs > 2 && c->out[2])
			set_out(c->out[2], VNPU_TYPE_U8, 0, NULL);
		return VNPU_OK;
	}
	st = inf_need_inputs(c, 2, 3);
	if (st)
		return st;
	x = IN(c, 0);
	if (IN(c, 1)->rank > 1 || (IN(c, 2) && IN(c, 2)->rank > 1))
		return FAIL(c, "scale and zero point must be scalars or 1-D");
	for (uint32_t i = 1; i < 3; i++) {
		st = check_per_axis(c, i, i == 1 ? "scale" : "zero point");
		if (st)
			return st;
	}
	/* DequantizeLinear's zero point is of x's type (ONNX's T). */
	if (!strcmp(c->n->op, "DequantizeLinear") && IN(c, 2) && IN(c, 2)->type != x->type)
		return FAIL(c, "x of type %s with a zero point of type %s",
			    vnpu_element_type_str(x->type), vnpu_element_type_str(IN(c, 2)->type));
	if (!strcmp(c->n->op, "DequantizeLinear"))
		copy_shape(c->out[0], x, IN(c, 1)->type);
	else
		copy_shape(c->out[0], x, IN(c, 2) ? IN(c, 2)->type : VNPU_TYPE_U8);
	return VNPU_OK;
}

static int einsum_label(char ch)
{
	if (ch >= 'a' && ch <= 'z')
		return ch - 'a';
	if (ch >= 'A' && ch <= 'Z')
		return 26 + ch - 'A';
	return -1;
}

/* Labels of one term into @labels; "..." becomes labels 52.. from the
 * right. Returns the count or -1. */
static int einsum_term(const char *p, const char *end, int rank, int8_t *labels)
{
	int n = 0, ell = -1;

	for (; p < end; p++) {
		if (*p == ' ')
			continue;
		if (*p == '.') {
			if (ell >= 0 || end - p < 3 || p[1] != '.' || p[2] != '.')
				return -1;
			ell = n;
			p += 2;
			continue;
		}
		if (einsum_label(*p) < 0 || n >= VNPU_MAX_RANK)
			return -1;
		labels[n++] = (int8_t)einsum_label(*p);
	}
	if (ell >= 0) {
		int extra = rank < 0 ? 0 : rank - n;

		if (extra < 0 || n + extra > VNPU_MAX_RANK)
			return -1;
		memmove(labels + ell + extra, labels + ell, (size_t)(n - ell));
		for (int k = 0; k < extra; k++)	/* right-aligned like broadcasting */
			labels[ell + k] = (int8_t)(52 + VNPU_MAX_RANK - extra + k);
		n += extra;
	}
	return n;
}

bool vnpu_einsum_parse(const char *eq, int num_in, const int32_t *ranks, struct vnpu_einsum *e)
{
	const char *arrow = strstr(eq, "->"), *p = eq, *end = arrow ? arrow : eq + strlen(eq);
	int count[64] = { 0 };

	memset(e, 0, sizeof(*e));
	if (num_in < 1 || num_in > VNPU_EINSUM_MAX_IN)
		return false;
	for (int i = 0; i < num_in; i++) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		const char *stop = comma && i + 1 < num_in ? comma : end;

		if ((i + 1 < num_in) != (comma != NULL))
			return false;
		e->rank[i] = einsum_term(p, stop, ranks[i], e->in[i]);
		if (e->rank[i] < 0 || e->rank[i] != ranks[i])
			return false;
		for (int k = 0; k < e->rank[i]; k++)
			count[e->in[i][k]]++;
		p = stop + 1;
	}
	e->num_in = num_in;
	if (arrow) {
		int8_t seen[64] = { 0 };
		int ell_rank = 0;

		for (int i = 0; i < num_in; i++)
			for (int k = 0; k < e->rank[i]; k++)
				if (e->in[i][k] >= 52 && 52 + VNPU_MAX_RANK - e->in[i][k] > ell_rank)
					ell_rank = 52 + VNPU_MAX_RANK - e->in[i][k];
		e->out_rank = einsum_term(arrow + 2, arrow + strlen(arrow), -1, e->out);
		if (e->out_rank < 0)
			return false;
		/* An output "..." stands for the widest operand's ellipsis. */
		if (strstr(arrow + 2, "...")) {
			const char *q = strstr(arrow + 2, "...");
			int8_t tmp[VNPU_MAX_RANK];
			int before = 0;

			for (const char *r = arrow + 2; r < q; r++)
				before += einsum_label(*r) >= 0;
			if (e->out_rank + ell_rank > VNPU_MAX_RANK)
				return false;
			memcpy(tmp, e->out, sizeof(tmp));
			for (int k = 0; k < ell_rank; k++)
				e->out[before + k] = (int8_t)(52 + VNPU_MAX_RANK - ell_rank + k);
			memcpy(e->out + before + ell_rank, tmp + before,
			       (size_t)(e->out_rank - before));
			e->out_rank += ell_rank;
		}
		for (int k = 0; k < e->out_rank; k++) {
			if (!count[e->out[k]] || seen[e->out[k]]++)
				return false;
		}
		return true;
	}
	/* Implicit output: ellipsis, then the labels seen once, sorted. */
	for (int l = 52; l < 64; l++)
		if (count[l] && e->out_rank < VNPU_MAX_RANK)
			e->out[e->out_rank++] = (int8_t)l;
	for (int l = 0; l < 52; l++)
		if (count[l] == 1) {
			if (e->out_rank >= VNPU_MAX_RANK)
				return false;
			e->out[e->out_rank++] = (int8_t)l;
		}
	return true;
}

static vnpu_status infer_einsum(struct ictx *c)
{
	const char *eq = vnpu_attr_str(c->n, "equation", NULL);
	int64_t size[64], dims[VNPU_MAX_RANK];
	int32_t ranks[VNPU_EINSUM_MAX_IN];
	struct vnpu_einsum e;
	vnpu_status st = inf_need_inputs(c, 1, VNPU_EINSUM_MAX_IN);

	if (st)
		return st;
	if (!eq)
		return FAIL(c, "no equation");
	for (uint32_t i = 0; i < c->n->num_inputs; i++) {
		if ((st = inf_need(c, i)))
			return st;
		if (IN(c, i)->type != IN(c, 0)->type)
			return FAIL(c, "input types differ");
		if (IN(c, i)->rank < 0) {
			set_out(c->out[0], IN(c, 0)->type, -1, NULL);
			return VNPU_OK;
		}
		ranks[i] = IN(c, i)->rank;
	}
	if (!vnpu_einsum_parse(eq, (int)c->n->num_inputs, ranks, &e))
		return inf_error(c, VNPU_UNSUPPORTED, "equation '%s' not supported", eq);
	for (int l = 0; l < 64; l++)
		size[l] = -2;
	for (int i = 0; i < e.num_in; i++)
		for (int k = 0; k < e.rank[i]; k++) {
			int64_t d = IN(c, (uint32_t)i)->dims[k], *sz = &size[e.in[i][k]];

			if (*sz == -2 || *sz == 1 || *sz == VNPU_DIM_DYNAMIC)
				*sz = d == 1 && *sz >= 0 ? *sz : d;
			else if (d >= 0 && d != 1 && d != *sz)
				return FAIL(c, "label dims %lld and %lld differ", (long long)*sz,
					    (long long)d);
		}
	for (int k = 0; k < e.out_rank; k++)
		dims[k] = size[e.out[k]];
	set_out(c->out[0], IN(c, 0)->type, e.out_rank, dims);
	return VNPU_OK;
}

/* Hann, Hamming and Blackman windows: constants of the size given. */
static vnpu_status infer_window(struct ictx *c)
{
	vnpu_element_type t = (vnpu_element_type)vnpu_attr_int(c->n, "output_datatype", VNPU_TYPE_F32);
	bool periodic = vnpu_attr_int(c->n, "periodic", 1);
	struct vnpu_tinfo *o = c->out[0];
	int64_t n;
	vnpu_status st = inf_need_inputs(c, 1, 1);

	if (st)
		return st;
	if (!vnpu_element_type_size(t))
		return inf_error(c, VNPU_UNSUPPORTED, "output type %d", (int)t);
	if (inf_read_ints(IN(c, 0), &n, 1) != 1) {
		set_out(o, t, 1, NULL);
		return VNPU_OK;
	}
	if (n < 0 || n > (1 << 24))
		return FAIL(c, "size %lld", (long long)n);
	set_out(o, t, 1, &n);
	if (c->fold_limit > 0 && inf_alloc_out(c, o)) {
		double den = (double)(periodic ? n : n - 1), pi = 3.14159265358979323846;

		for (int64_t i = 0; i < n; i++) {
			double x = den > 0 ? 2 * pi * (double)i / den : 0, v;

			if (!strcmp(c->n->op, "HannWindow"))
				v = 0.5 - 0.5 * cos(x);
			else if (!strcmp(c->n->op, "HammingWindow"))
				v = 25.0 / 46.0 - (1 - 25.0 / 46.0) * cos(x);
			else
				v = 0.42 - 0.5 * cos(x) + 0.08 * cos(2 * x);
			vnpu_elem_set_f(o->data, t, i, v);
		}
	}
	return VNPU_OK;
}

/* DFT (x [.., N, .., 1|2], axis) and STFT (signal [B, L, 1|2], step,
 * [window], [frame_length]): complex outputs as a last axis of 2. */
static vnpu_status infer_fourier(struct ictx *c)
{
	bool stft = !strcmp(c->n->op, "STFT");
	bool onesided = vnpu_attr_int(c->n, "onesided", stft);
	const struct vnpu_tinfo *x;
	int64_t dims[VNPU_MAX_RANK], len, axis;
	vnpu_status st = inf_need_inputs(c, stft ? 2 : 1, stft ? 4 : 2);

	if (st)
		return st;
	x = IN(c, 0);
	if (x->rank < 0) {
		set_out(c->out[0], x->type, stft ? 4 : -1, NULL);
		return VNPU_OK;
	}
	if (x->rank < 3 || (x->dims[x->rank - 1] >= 0 && x->dims[x->rank - 1] != 1 &&
			    x->dims[x->rank - 1] != 2))
		return FAIL(c, "input must be [batch, ..., 1 or 2]");
	memcpy(dims, x->dims, sizeof(dims));
	dims[x->rank - 1] = 2;
	if (!stft) {
		st = inf_check_axis(c, vnpu_attr_int(c->n, "axis", 1), x->rank, &axis);
		if (st)
			return st;
		if (axis == 0 || axis == x->rank - 1)
			return FAIL(c, "axis %lld", (long long)axis);
		if (inf_read_ints(IN(c, 1), &len, 1) != 1)
			len = IN(c, 1) ? VNPU_DIM_DYNAMIC : x->dims[axis];
		dims[axis] = len < 0 ? len : onesided ? len / 2 + 1 : len;
		set_out(c->out[0], x->type, x->rank, dims);
		return VNPU_OK;
	} else {
		int64_t step, flen, sig = x->dims[1];
		const struct vnpu_tinfo *w = IN(c, 2);

		if (x->rank != 3)
			return FAIL(c, "signal rank %d, not 3", x->rank);
		if (inf_read_ints(IN(c, 1), &step, 1) != 1 ||
		    (IN(c, 3) ? inf_read_ints(IN(c, 3), &flen, 1) != 1 :
		     !(w && w->rank == 1 && (flen = w->dims[0]) >= 0))) {
			set_out(c->out[0], x->type, 4, NULL);
			return VNPU_OK;
		}
		if (step <= 0 || flen <= 0 || (sig >= 0 && flen > sig))
			return FAIL(c, "frame step %lld, frame length %lld", (long long)step,
				    (long long)flen);
		dims[0] = x->dims[0];
		dims[1] = sig < 0 ? -1 : (sig - flen) / step + 1;
		dims[2] = onesided ? flen / 2 + 1 : flen;
		dims[3] = 2;
		set_out(c->out[0], x->type, 4, dims);
		return VNPU_OK;
	}
}

/* Spatial output size of conv/pool along one axis. */
static int64_t window_out(int64_t in, int64_t k, int64_t stride, int64_t dil, int64_t pad_total,
			  bool ceil_mode)
{
	int64_t eff = (k - 1) * dil + 1, span = in + pad_total - eff;

	if (in < 0)
		return VNPU_DIM_DYNAMIC;
	if (span < 0)
		return -2;
	return (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
}

/* Conv / pool geometry: fills out spatial dims from X's and the kernel's. */
static vnpu_status window_dims(struct ictx *c, const struct vnpu_tinfo *x, const int64_t *kernel,
			       int32_t nsp, int64_t *out_sp)
{
	const struct vnpu_attr *st_a = vnpu_node_attr(c->n, "strides");
	const struct vnpu_attr *di_a = vnpu_node_attr(c->n, "dilations");
	const struct vnpu_attr *pa_a = vnpu_node_attr(c->n, "pads");
	const char *autopad = vnpu_attr_str(c->n, "auto_pad", "NOTSET");
	bool ceil_mode = vnpu_attr_int(c->n, "ceil_mode", 0);

	if ((st_a && st_a->n != (size_t)nsp) || (di_a && di_a->n != (size_t)nsp) ||
	    (pa_a && pa_a->n != (size_t)nsp * 2))
		return FAIL(c, "strides, dilations or pads do not match %d spatial dims", nsp);
	for (int32_t d = 0; d < nsp; d++) {
		int64_t in = x->dims[2 + d], s = st_a ? st_a->ints[d] : 1, dl = di_a ? di_a->ints[d] : 1;
		int64_t pads = pa_a ? pa_a->ints[d] + pa_a->ints[d + nsp] : 0;

		if (s <= 0 || dl <= 0 || kernel[d] <= 0 || (pa_a && (pa_a->ints[d] < 0 ||
							    pa_a->ints[d + nsp] < 0)) ||
		    s > (1 << 24) || dl > (1 << 24) || kernel[d] > (1 << 24) || pads > (1ll << 32))
			return FAIL(c, "bad stride, dilation, kernel or pad");
		if (!strcmp(autopad, "SAME_UPPER") || !strcmp(autopad, "SAME_LOWER"))
			out_sp[d] = in < 0 ? VNPU_DIM_DYNAMIC : (in + s - 1) / s;
		else if (!strcmp(autopad, "VALID"))
			out_sp[d] = window_out(in, kernel[d], s, dl, 0, false);
		else if (!strcmp(autopad, "NOTSET"))
			out_sp[d] = window_out(in, kernel[d], s, dl, pads, ceil_mode);
		else
			return FAIL(c, "auto_pad '%s'", autopad);
		if (out_sp[d] == -2)
			return FAIL(c, "window larger than the padded input");
	}
	return VNPU_OK;
}

static vnpu_status infer_conv(struct ictx *c)
{
	vnpu_status st = inf_need_inputs(c, 2, 3);

	if (st)
		return st;
	if (IN(c, 1)->type != IN(c, 0)->type || (IN(c, 2) && IN(c, 2)->type != IN(c, 0)->type))
		return FAIL(c, "input types differ");
	return conv_shape(c, IN(c, 0), IN(c, 1), IN(c, 0)->type);
}

/* ConvInteger (x, w, [x_zp], [w_zp]) and QLinearConv (x, xs, xzp, w, ws,
 * wzp, ys, yzp, [B]). */
/* Scale or zero point @i: a scalar, or one per row or column (@per of them). */
static vnpu_status check_qparam(const struct ictx *c, uint32_t i, const char *what, int64_t per,
				const char *per_what)
{
	const struct vnpu_tinfo *t = IN(c, i);
	char buf[96];

	if (!t || t->rank <= 0 ||
	    (t->rank == 1 && (t->dims[0] < 0 || t->dims[0] == 1 || per < 0 || t->dims[0] == per)))
		return VNPU_OK;
	return FAIL(c, "%s is %s: a scalar or one per %s", what, vnpu_tinfo_str(t, buf, sizeof(buf)),
		    per_what);
}

static vnpu_status infer_qconv(struct ictx *c)
{
	static const char *const qlinear_names[9] = {
		NULL, "x_scale", "x_zero_point", NULL, "w_scale", "w_zero_point", "y_scale",
		"y_zero_point", NULL,
	};
	bool qlinear = !strcmp(c->n->op, "QLinearConv");
	const struct vnpu_tinfo *w;
	int64_t m;
	vnpu_status st = inf_need_inputs(c, qlinear ? 8 : 2, qlinear ? 9 : 4);

	if (st)
		return st;
	w = IN(c, qlinear ? 3 : 1);
	m = w->rank > 0 ? w->dims[0] : VNPU_DIM_DYNAMIC;
	/* The weights' scale and zero point may be per output channel. */
	if (qlinear) {
		for (uint32_t i = 1; !st && i < 8; i++)
			if (i != 3)
				st = check_qparam(c, i, qlinear_names[i], i == 4 || i == 5 ? m : 1,
						  i == 4 || i == 5 ? "output channel" : "tensor");
		if (!st)
			st = inf_check_dims(c, 8, "B", 1, &m);
	} else {
		st = check_qparam(c, 2, "x_zero_point", 1, "tensor");
		if (!st)
			st = check_qparam(c, 3, "w_zero_point", m, "output channel");
	}
	if (st)
		return st;
	return conv_shape(c, IN(c, 0), w, qlinear ? IN(c, 7)->type : VNPU_TYPE_I32);
}

/*
 * W against X and the attributes: Conv's W is [M, C/group, kernel...],
 * ConvTranspose's [C, M/group, kernel...], M and C multiples of group; the
 * kernel_shape attribute, when given, is W's; B (Conv's and
 * ConvTranspose's input 2) is [output channels].
 */
static vnpu_status check_conv_weights(const struct ictx *c, const struct vnpu_tinfo *x,
				      const struct vnpu_tinfo *w, const int64_t *kernel,
				      int64_t group)
{
	bool transposed = !strcmp(c->n->op, "ConvTranspose");
	int64_t cin = x->dims[1], m = transposed ? dim_mul(w->dims[1], group) : w->dims[0];

	for (int32_t d = 0; d < x->rank - 2; d++)
		if (w->dims[2 + d] >= 0 && kernel[d] != w->dims[2 + d])
			return FAIL(c, "kernel_shape %lld, W's is %lld", (long long)kernel[d],
				    (long long)w->dims[2 + d]);
	if (transposed ? (w->dims[0] >= 0 && w->dims[0] % group) : (m >= 0 && m % group))
		return FAIL(c, "%lld channels of W in %lld groups",
			    (long long)w->dims[0], (long long)group);
	if (transposed && cin >= 0 && w->dims[0] >= 0 && cin != w->dims[0])
		return FAIL(c, "%lld input channels, W has %lld", (long long)cin,
			    (long long)w->dims[0]);
	if (!transposed && cin >= 0 && w->dims[1] >= 0 && cin != w->dims[1] * group)
		return FAIL(c, "%lld input channels, weights take %lld x %lld groups",
			    (long long)cin, (long long)w->dims[1], (long long)group);
	if (!strcmp(c->n->op, "Conv") || transposed)
		return inf_check_dims(c, 2, "B", 1, &m);
	return VNPU_OK;
}

static vnpu_status conv_shape(struct ictx *c, const struct vnpu_tinfo *x,
			      const struct vnpu_tinfo *w, vnpu_element_type out_type)
{
	int64_t dims[VNPU_MAX_RANK], kernel[VNPU_MAX_RANK], group;
	int32_t nsp;
	vnpu_status st;
	bool transposed = !strcmp(c->n->op, "ConvTranspose");

	if (x->rank < 0 || w->rank < 0) {
		set_out(c->out[0], out_type, x->rank >= 0 ? x->rank : w->rank, NULL);
		return VNPU_OK;
	}
	if (x->rank < 3 || w->rank != x->rank)
		return FAIL(c, "input rank %d and weight rank %d", x->rank, w->rank);
	nsp = x->rank - 2;
	group = vnpu_attr_int(c->n, "group", 1);
	if (group <= 0)
		return FAIL(c, "group %lld", (long long)group);
	for (int32_t d = 0; d < nsp; d++) {
		const struct vnpu_attr *ks = vnpu_node_attr(c->n, "kernel_shape");

		kernel[d] = ks && ks->n == (size_t)nsp ? ks->ints[d] : w->dims[2 + d];
		if (kernel[d] < 0)
			return inf_error(c, VNPU_UNSUPPORTED, "kernel shape unknown");
		if (!kernel[d])
			return FAIL(c, "an empty kernel (spatial dimension %d is 0)", d);
	}
	st = check_conv_weights(c, x, w, kernel, group);
	if (st)
		return st;
	dims[0] = x->dims[0];
	dims[1] = transposed ? (w->dims[1] < 0 ? -1 : w->dims[1] * group) : w->dims[0];
	if (!transposed) {
		st = window_dims(c, x, kernel, nsp, dims + 2);
		if (st)
			return st;
	} else {
		const struct vnpu_attr *os = vnpu_node_attr(c->n, "output_shape");
		const struct vnpu_attr *op = vnpu_node_attr(c->n, "output_padding");
		const struct vnpu_attr *pa = vnpu_node_attr(c->n, "pads");
		const struct vnpu_attr *sa = vnpu_node_attr(c->n, "strides");
		const struct vnpu_attr *da = vnpu_node_attr(c->n, "dilations");

		for (int32_t d = 0; d < nsp; d++) {
			int64_t in = x->dims[2 + d], s = sa && sa->n == (size_t)nsp ? sa->ints[d] : 1;
			int64_t dl = da && da->n == (size_t)nsp ? da->ints[d] : 1;
			int64_t opad = op && op->n == (size_t)nsp ? op->ints[d] : 0;
			int64_t pads = pa && pa->n == (size_t)nsp * 2 ? pa->ints[d] + pa->ints[d + nsp] : 0;

			if (s <= 0 || s > (1 << 16) || dl <= 0 || dl > (1 << 16) || kernel[d] > (1 << 16) ||
			    opad < 0 || opad > (1 << 24) || pads < 0 || pads > (1ll << 32) ||
			    (os && os->n == (size_t)nsp && (os->ints[d] <= 0 || os->ints[d] > VNPU_MAX_ELEMS)))
				return FAIL(c, "bad stride, dilation, kernel, pad or output shape");

			if (os && os->n == (size_t)nsp)
				dims[2 + d] = os->ints[d];
			else if (in < 0)
				dims[2 + d] = VNPU_DIM_DYNAMIC;
			else if (!strcmp(vnpu_attr_str(c->n, "auto_pad", "NOTSET"), "NOTSET") ||
				 !strcmp(vnpu_attr_str(c->n, "auto_pad", "NOTSET"), "VALID"))
				dims[2 + d] = s * (in - 1) + opad + (kernel[d] - 1) * dl + 1 - pads;
			else
				dims[2 + d] = in * s;
			if (dims[2 + d] < -1 || dims[2 + d] == 0)
				return FAIL(c, "output size %lld", (long long)dims[2 + d]);
		}
	}
	set_out(c->out[0], out_type, x->rank, dims);
	return VNPU_OK;
}

static vnpu_status infer_pool(struct ictx *c)
{
	const struct vnpu_tinfo *x;
	int64_t dims[VNPU_MAX_RANK], kernel[VNPU_MAX_RANK];
	const struct vnpu_attr *ks;
	int32_t nsp;
	vnpu_status st = inf_need_inputs(c, 1, 1);
	bool global = !strncmp(c->n->op, "Global", 6);

	if (st)
		return st;
	/* Only MaxPool has a second output, its Indices. */
	for (uint32_t k = 1; k < c->n->num_outputs; k++)
		if (c->out[k] && (k > 1 || strcmp(c->n->op, "MaxPool")))
			return FAIL(c, "%s has no output %u", c->n->op, k);
	x = IN(c, 0);
	if (x->rank < 0) {
		set_out(c->out[0], x->type, -1, NULL);
		if (c->n->num_outputs > 1 && c->out[1])
			set_out(c->out[1], VNPU_TYPE_I64, -1, NULL);
		return VNPU_OK;
	}
	if (x->rank < 3)
		return FAIL(c, "input rank %d", x->rank);
	nsp = x->rank - 2;
	dims[0] = x->dims[0];
	dims[1] = x->dims[1];
	if (global) {
		for (int32_t d = 0; d < nsp; d++) {
			dims[2 + d] = 1;
			/* a max or mean of nothing, for each of N x C outputs */
			if (!x->dims[2 + d] && x->dims[0] && x->dims[1])
				return FAIL(c, "X's spatial dimension %d is 0: an empty window", d);
		}
	} else {
		ks = vnpu_node_attr(c->n, "kernel_shape");
		if (!ks || ks->type != VNPU_ATTR_INTS || ks->n != (size_t)nsp)
			return FAIL(c, "kernel_shape missing or of the wrong length");
		memcpy(kernel, ks->ints, (size_t)nsp * sizeof(int64_t));
		st = window_dims(c, x, kernel, nsp, dims + 2);
		if (st)
			return st;
	}
	set_out(c->out[0], x->type, x->rank, dims);
	if (c->n->num_outputs > 1 && c->out[1])
		set_out(c->out[1], VNPU_TYPE_I64, x->rank, dims);
	return VNPU_OK;
}

static vnpu_status infer_gemm(struct ictx *c)
{
	const struct vnpu_tinfo *a, *b;
	int64_t m, k1, k2, n, dims[2];
	vnpu_status st = inf_need_inputs(c, 2, 3);

	if (st)
		return st;
	a = IN(c, 0);
	b = IN(c, 1);
	if (a->type != b->type)
		return FAIL(c, "input types differ");
	if ((a->rank >= 0 && a->rank != 2) || (b->rank >= 0 && b->rank != 2))
		return FAIL(c, "inputs must be 2-D");
	if (a->rank < 0 || b->rank < 0) {
		set_out(c->out[0], a->type, 2, NULL);
		return VNPU_OK;
	}
	m = a->dims[vnpu_attr_int(c->n, "transA", 0) ? 1 : 0];
	k1 = a->dims[vnpu_attr_int(c->n, "transA", 0) ? 0 : 1];
	k2 = b->dims[vnpu_attr_int(c->n, "transB", 0) ? 1 : 0];
	n = b->dims[vnpu_attr_int(c->n, "transB", 0) ? 0 : 1];
	if (k1 >= 0 && k2 >= 0 && k1 != k2)
		return FAIL(c, "inner dimensions %lld and %lld differ", (long long)k1, (long long)k2);
	dims[0] = m;
	dims[1] = n;
	if (IN(c, 2)) {
		int32_t r;
		int64_t bd[VNPU_MAX_RANK];
		struct vnpu_tinfo o = { .type = a->type, .rank = 2, .dims = { m, n } };

		st = inf_broadcast(c, &o, IN(c, 2), &r, bd);
		if (st)
			return st;
		if (r != 2 || (m >= 0 && bd[0] != m) || (n >= 0 && bd[1] != n))
			return FAIL(c, "C does not broadcast to the output");
	}
	set_out(c->out[0], a->type, 2, dims);
	return VNPU_OK;
}

static vnpu_status infer_matmul(struct ictx *c)
{
	vnpu_status st = inf_need_inputs(c, 2, 2);

	if (st)
		return st;
	if (IN(c, 0)->type != IN(c, 1)->type)
		return FAIL(c, "input types differ");
	return matmul_shape(c, IN(c, 0), IN(c, 1), IN(c, 0)->type);
}

/* MatMulInteger (a, b, [a_zp], [b_zp]) and QLinearMatMul (a, as, azp, b,
 * bs, bzp, ys, yzp). */

static vnpu_status infer_qmatmul(struct ictx *c)
{
	static const char *const qlinear_names[8] = {
		NULL, "a_scale", "a_zero_point", NULL, "b_scale", "b_zero_point", "y_scale",
		"y_zero_point",
	};
	bool qlinear = !strcmp(c->n->op, "QLinearMatMul");
	const struct vnpu_tinfo *a, *b;
	int64_t rows, cols;
	vnpu_status st = inf_need_inputs(c, qlinear ? 8 : 2, qlinear ? 8 : 4);

	if (st)
		return st;
	a = IN(c, 0);
	b = IN(c, qlinear ? 3 : 1);
	rows = a->rank >= 2 ? a->dims[a->rank - 2] : VNPU_DIM_DYNAMIC;
	cols = b->rank >= 2 ? b->dims[b->rank - 1] : VNPU_DIM_DYNAMIC;
	if (qlinear) {
		for (uint32_t i = 1; !st && i < 8; i++)
			if (i != 3)
				st = check_qparam(c, i, qlinear_names[i], i < 3 ? rows : i < 6 ? cols : 1,
						  i < 3 ? "row of A" : i < 6 ? "column of B" : "tensor");
	} else {
		st = check_qparam(c, 2, "a_zero_point", rows, "row of A");
		if (!st)
			st = check_qparam(c, 3, "b_zero_point", cols, "column of B");
	}
	if (st)
		return st;
	return matmul_shape(c, a, b, qlinear ? IN(c, 7)->type : VNPU_TYPE_I32);
}

static vnpu_status matmul_shape(struct ictx *c, const struct vnpu_tinfo *a,
				const struct vnpu_tinfo *b, vnpu_element_type out_type)
{
	struct vnpu_tinfo ba = { 0 }, bb = { 0 };
	int64_t dims[VNPU_MAX_RANK + 2], k1, k2;
	int32_t r;
	vnpu_status st;

	if (a->rank < 0 || b->rank < 0) {
		set_out(c->out[0], out_type, -1, NULL);
		return VNPU_OK;
	}
	if (a->rank == 0 || b->rank == 0)
		return FAIL(c, "scalar input");
	k1 = a->dims[a->rank - 1];
	k2 = b->rank == 1 ? b->dims[0] : b->dims[b->rank - 2];
	if (k1 >= 0 && k2 >= 0 && k1 != k2)
		return FAIL(c, "inner dimensions %lld and %lld differ", (long long)k1, (long long)k2);
	/* Batch dims broadcast. */
	ba.rank = a->rank > 2 ? a->rank - 2 : 0;
	bb.rank = b->rank > 2 ? b->rank - 2 : 0;
	memcpy(ba.dims, a->dims, sizeof(int64_t) * (size_t)ba.rank);
	memcpy(bb.dims, b->dims, sizeof(int64_t) * (size_t)bb.rank);
	st = inf_broadcast(c, &ba, &bb, &r, dims);
	if (st)
		return st;
	if (a->rank > 1)
		dims[r++] = a->dims[a->rank - 2];
	if (b->rank > 1)
		dims[r++] = b->dims[b->rank - 1];
	if (r > VNPU_MAX_RANK)
		return inf_limit(c, "rank above %d", VNPU_MAX_RANK);
	set_out(c->out[0], out_type, r, dims);
	return VNPU_OK;
}

/* Whether @x reduced along @axis keeps elements (its other dimensions, known, are not 0). */
static bool reduced_nonempty(const struct vnpu_tinfo *x, int64_t axis)
{
	for (int32_t d = 0; d < x->rank; d++)
		if (d != axis && x->dims[d] <= 0)
			return false;
	return true;
}

static vnpu_status infer_reduce(struct ictx *c)
{
	const struct vnpu_tinfo *x;
	int64_t axes[VNPU_MAX_RANK], dims[VNPU_MAX_RANK];
	bool mark[VNPU_MAX_RANK] = { 0 }, present, keep = vnpu_attr_int(c->n, "keepdims", 1);
	bool arg = !strncmp(c->n->op, "Arg", 3);
	int32_t n, r = 0;
	vnpu_status st = inf_need_inputs(c, 1, 2);

	if (st)
		return st;
	x = IN(c, 0);
	if (arg) {
		axes[0] = vnpu_attr_int(c->n, "axis", 0);
		n = 1;
		present = true;
	} else {
		n = inf_attr_ints(c, "axes", 1, axes, VNPU_MAX_RANK, &present);
	}
	if (x->rank < 0 || n < 0) {
		set_out(c->out[0], arg ? VNPU_TYPE_I64 : x->type, keep && x->rank >= 0 ? x->rank : -1, NULL);
		return VNPU_OK;
	}
	if (arg && !x->rank)
		return FAIL(c, "a scalar has no axis");
	for (int32_t i = 0; i < n; i++) {
		int64_t a;

		st = inf_check_axis(c, axes[i], x->rank, &a);
		if (st)
			return st;
		mark[a] = true;
		if (arg && !x->dims[a] && reduced_nonempty(x, a))
			return FAIL(c, "axis %lld is empty: no index to give", (long long)a);
	}
	if (!n && vnpu_attr_int(c->n, "noop_with_empty_axes", 0)) {
		copy_shape(c->out[0], x, x->type);
		return VNPU_OK;
	}
	for (int32_t d = 0; d < x->rank; d++) {
		bool red = mark[d] || !n;

		if (red && keep)
			dims[r++] = 1;
		else if (!red)
			dims[r++] = x->dims[d];
	}
	set_out(c->out[0], arg ? VNPU_TYPE_I64 : x->type, r, dims);
	return VNPU_OK;
}

static vnpu_status infer_softmax(struct ictx *c)
{
	vnpu_status st = inf_need_inputs(c, 1, 1);
	int64_t axis;

	if (st)
		return st;
	if (!IN(c, 0)->rank)
		return FAIL(c, "a scalar has no axis");
	if (IN(c, 0)->rank >= 0) {
		st = inf_check_axis(c, vnpu_attr_int(c->n, "axis", opset(c) >= 13 ? -1 : 1),
				IN(c, 0)->rank, &axis);
		if (st)
			return st;
	}
	copy_shape(c->out[0], IN(c, 0), IN(c, 0)->type);
	return VNPU_OK;
}

/* floor(dim * scale), or an impossible dimension that check_outputs()
 * rejects when the scale is not a sane positive number. */
static int64_t scaled(int64_t dim, double scale)
{
	double v = floor((double)dim * scale);

	return v >= 0 && v <= (double)VNPU_MAX_ELEMS ? (int64_t)v : VNPU_MAX_ELEMS + 1;
}

static vnpu_status infer_resize(struct ictx *c)
{
	const struct vnpu_tinfo *x, *scales_t, *sizes_t;
	int64_t dims[VNPU_MAX_RANK], sizes[VNPU_MAX_RANK];
	vnpu_status st = inf_need_inputs(c, 1, 4);
	bool upsample = !strcmp(c->n->op, "Upsample");

	if (st)
		return st;
	x = IN(c, 0);
	scales_t = upsample ? IN(c, 1) : opset(c) >= 11 ? IN(c, 2) : IN(c, 1);
	sizes_t = !upsample && opset(c) >= 11 ? IN(c, 3) : NULL;
	if (x->rank < 0) {
		set_out(c->out[0], x->type, -1, NULL);
		return VNPU_OK;
	}
	if (vnpu_node_attr(c->n, "axes"))
		return inf_error(c, VNPU_UNSUPPORTED, "the axes attribute is not supported");
	if (sizes_t && vnpu_tinfo_elems(sizes_t) != 0) {
		if (inf_read_ints(sizes_t, sizes, VNPU_MAX_RANK) != x->rank) {
			set_out(c->out[0], x->type, x->rank, NULL);
			return VNPU_OK;
		}
		set_out(c->out[0], x->type, x->rank, sizes);
		return VNPU_OK;
	}
	if (upsample && !scales_t && vnpu_node_attr(c->n, "scales")) {
		const struct vnpu_attr *a = vnpu_node_attr(c->n, "scales");

		if (a->n != (size_t)x->rank)
			return FAIL(c, "%zu scales for rank %d", a->n, x->rank);
		for (int32_t d = 0; d < x->rank; d++)
			dims[d] = x->dims[d] < 0 ? -1 : scaled(x->dims[d], a->floats[d]);
		set_out(c->out[0], x->type, x->rank, dims);
		return VNPU_OK;
	}
	if (!has_data(scales_t) || !vnpu_type_is_float(scales_t->type) ||
	    vnpu_tinfo_elems(scales_t) != x->rank) {
		if (has_data(scales_t) && vnpu_tinfo_elems(scales_t) != x->rank)
			return FAIL(c, "scales do not match rank %d", x->rank);
		set_out(c->out[0], x->type, x->rank, NULL);
		return VNPU_OK;
	}
	for (int32_t d = 0; d < x->rank; d++)
		dims[d] = x->dims[d] < 0 ? -1 :
			scaled(x->dims[d], vnpu_elem_get_f(scales_t->data, scales_t->type, d));
	set_out(c->out[0], x->type, x->rank, dims);
	return VNPU_OK;
}

/*
 * LayerNormalization's Scale and B: of rank @rank at most, each dimension
 * 1 or X's (aligned on the right), as they broadcast to the normalized shape.
 */
static vnpu_status check_bcast_param(const struct ictx *c, uint32_t i, const char *what,
				     const struct vnpu_tinfo *x, int32_t rank)
{
	const struct vnpu_tinfo *t = IN(c, i);
	char buf[96];
	bool ok;

	if (!t || t->rank < 0)
		return VNPU_OK;
	ok = t->rank <= rank;
	for (int32_t d = 1; ok && d <= t->rank; d++) {
		int64_t td = t->dims[t->rank - d], xd = x->dims[x->rank - d];

		ok = td < 0 || xd < 0 || td == 1 || td == xd;
	}
	if (ok)
		return VNPU_OK;
	return FAIL(c, "%s is %s: it must broadcast to the last %d dimensions of X", what,
		    vnpu_tinfo_str(t, buf, sizeof(buf)), rank);
}

/* BatchNormalization and InstanceNormalization: X [N, C, ...], the rest [C]. */
static vnpu_status check_channel_params(const struct ictx *c, const struct vnpu_tinfo *x)
{
	static const char *const names[] = { "scale", "B", "input_mean", "input_var" };
	bool batch = !strcmp(c->n->op, "BatchNormalization");
	vnpu_status st = VNPU_OK;

	if (x->rank < 0)
		return VNPU_OK;
	if (x->rank < (batch ? 2 : 3))
		return FAIL(c, "X has rank %d: [N, C, %s]", x->rank, batch ? "...]" : "D1, ...]");
	for (uint32_t i = 1; !st && i < (batch ? 5u : 3u); i++)
		st = inf_check_dims(c, i, names[i - 1], 1, &x->dims[1]);
	return st;
}

static vnpu_status infer_norm(struct ictx *c)
{
	const struct vnpu_tinfo *x;
	vnpu_status st = inf_need_inputs(c, 1, 6);
	int64_t axis;

	if (st)
		return st;
	x = IN(c, 0);
	if (!strcmp(c->n->op, "BatchNormalization") || !strcmp(c->n->op, "InstanceNormalization")) {
		st = check_channel_params(c, x);
		if (st)
			return st;
	}
	copy_shape(c->out[0], x, x->type);
	if (!strcmp(c->n->op, "LayerNormalization") && x->rank >= 0) {
		int64_t dims[VNPU_MAX_RANK];

		st = inf_check_axis(c, vnpu_attr_int(c->n, "axis", -1), x->rank, &axis);
		for (uint32_t i = 1; !st && i < 3; i++)
			st = check_bcast_param(c, i, i == 1 ? "Scale" : "B", x,
					       x->rank - (int32_t)axis);
		if (st)
			return st;
		for (int32_t d = 0; d < x->rank; d++)
			dims[d] = d < axis ? x->dims[d] : 1;
		for (uint32_t i = 1; i < c->n->num_outputs && i < 3; i++)
			if (c->out[i])
				set_out(c->out[i], (vnpu_element_type)vnpu_attr_int(c->n, "stash_type", 1),
					x->rank, dims);
		return VNPU_OK;
	}
	/* BatchNormalization in training mode: running mean and variance [C]. */
	for (uint32_t i = 1; i < c->n->num_outputs && i < 3; i++)
		if (c->out[i] && !strcmp(c->n->op, "BatchNormalization") && IN(c, 3))
			copy_shape(c->out[i], IN(c, 3), IN(c, 3)->type);
	return VNPU_OK;
}

static vnpu_status infer_topk(struct ictx *c)
{
	const struct vnpu_tinfo *x;
	int64_t k, axis, dims[VNPU_MAX_RANK];
	vnpu_status st = inf_need_inputs(c, 1, 2);

	if (st)
		return st;
	x = IN(c, 0);
	if (x->rank < 0) {
		set_out(c->out[0], x->type, -1, NULL);
		if (c->n->num_outputs > 1 && c->out[1])
			set_out(c->out[1], VNPU_TYPE_I64, -1, NULL);
		return VNPU_OK;
	}
	st = inf_check_axis(c, vnpu_attr_int(c->n, "axis", -1), x->rank, &axis);
	if (st)
		return st;
	if (opset(c) < 10)
		k = vnpu_attr_int(c->n, "k", -1);
	else if (inf_read_ints(IN(c, 1), &k, 1) != 1)
		k = VNPU_DIM_DYNAMIC;
	if (k < VNPU_DIM_DYNAMIC || (k >= 0 && x->dims[axis] >= 0 && k > x->dims[axis]))
		return FAIL(c, "k %lld for a dimension of %lld", (long long)k, (long long)x->dims[axis]);
	memcpy(dims, x->dims, sizeof(dims));
	dims[axis] = k;
	if (c->out[0])
		set_out(c->out[0], x->type, x->rank, dims);
	if (c->n->num_outputs > 1 && c->out[1])
		set_out(c->out[1], VNPU_TYPE_I64, x->rank, dims);
	return VNPU_OK;
}

const struct op_infer vnpu_infer_nn_ops[] = {
	{ "ReduceL1", infer_reduce }, { "ReduceL2", infer_reduce },
	{ "EyeLike", infer_eye_like }, { "LSTM", infer_rnn }, { "GRU", infer_rnn },
	{ "RNN", infer_rnn }, { "OneHot", infer_one_hot }, { "QuantizeLinear", infer_quant },
	{ "ConvInteger", infer_qconv }, { "QLinearConv", infer_qconv },
	{ "Einsum", infer_einsum }, { "HannWindow", infer_window },
	{ "HammingWindow", infer_window }, { "BlackmanWindow", infer_window },
	{ "DFT", infer_fourier }, { "STFT", infer_fourier }, { "MatMulInteger", infer_qmatmul },
	{ "QLinearMatMul", infer_qmatmul }, { "DequantizeLinear", infer_quant },
	{ "DynamicQuantizeLinear", infer_quant }, { "NegativeLogLikelihoodLoss", infer_loss },
	{ "SoftmaxCrossEntropyLoss", infer_loss }, { "Conv", infer_conv },
	{ "ConvTranspose", infer_conv }, { "MaxPool", infer_pool },
	{ "AveragePool", infer_pool }, { "LpPool", infer_pool },
	{ "GlobalAveragePool", infer_pool }, { "GlobalMaxPool", infer_pool },
	{ "GlobalLpPool", infer_pool }, { "Gemm", infer_gemm }, { "MatMul", infer_matmul },
	{ "ReduceSum", infer_reduce }, { "ReduceMean", infer_reduce },
	{ "ReduceMax", infer_reduce }, { "ReduceMin", infer_reduce },
	{ "ReduceProd", infer_reduce }, { "ReduceLogSum", infer_reduce },
	{ "ReduceLogSumExp", infer_reduce }, { "ReduceSumSquare", infer_reduce },
	{ "ArgMax", infer_reduce }, { "ArgMin", infer_reduce }, { "Softmax", infer_softmax },
	{ "LogSoftmax", infer_softmax }, { "Hardmax", infer_softmax },
	{ "BatchNormalization", infer_norm }, { "InstanceNormalization", infer_norm },
	{ "LayerNormalization", infer_norm }, { "Resize", infer_resize },
	{ "Upsample", infer_resize }, { "TopK", infer_topk },
};
const size_t vnpu_infer_nn_num_ops = sizeof(vnpu_infer_nn_ops) / sizeof(vnpu_infer_nn_ops[0]);

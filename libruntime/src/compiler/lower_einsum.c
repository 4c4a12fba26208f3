// SPDX-License-Identifier: MIT
/*
 * Einsum with one or two operands. Every operand is first seen as a view
 * over its distinct labels (a repeated label is a diagonal: the strides
 * add up); labels only one side has and the output lacks are summed away
 * with a reduction; two operands are then copied to [batch, free, summed]
 * and [batch, summed, free], multiplied with one batched GEMM, and the
 * product copied to the output's label order.
 */
#include <string.h>

#include "lower.h"
#define NUM_LABELS 64

struct labelled {
	struct ctensor t;		/* one axis per label, in labels[] order */
	int8_t labels[VNPU_MAX_RANK];
};

/* @v's axes merged by label; a label of extent 1 where the equation's is
 * larger broadcasts (stride 0). */
static struct labelled by_label(const struct cstate *s, int32_t v, const int8_t *axes, int rank,
				const int64_t *size)
{
	struct ctensor dense = ct_dense(s, v);
	struct labelled l = { .t = dense };

	l.t.rank = 0;
	for (int k = 0; k < rank; k++) {
		int j = 0;

		while (j < (int)l.t.rank && l.labels[j] != axes[k])
			j++;
		if (j == (int)l.t.rank) {
			l.labels[l.t.rank++] = axes[k];
			l.t.dims[j] = size[axes[k]];
			l.t.strides[j] = 0;
		}
		if (dense.dims[k] != 1 || size[axes[k]] == 1)
			l.t.strides[j] += dense.strides[k];
	}
	for (uint32_t d = l.t.rank; d < VNPU_MAX_DIMS; d++)
		l.t.dims[d] = l.t.strides[d] = 0;
	return l;
}

/* The axes of @l in the order of @order (labels @l has). */
static struct ctensor reorder(const struct labelled *l, const int8_t *order, int n)
{
	struct ctensor t = l->t;

	t.rank = (uint32_t)n;
	for (int k = 0; k < n; k++)
		for (uint32_t j = 0; j < l->t.rank; j++)
			if (l->labels[j] == order[k]) {
				t.dims[k] = l->t.dims[j];
				t.strides[k] = l->t.strides[j];
			}
	for (int k = n; k < VNPU_MAX_DIMS; k++)
		t.dims[k] = t.strides[k] = 0;
	return t;
}

/* A dense temporary over @labels, seen by label. */
static vnpu_status labelled_temp(struct cstate *s, vnpu_element_type type, const int8_t *labels,
				 int n, const int64_t *size, struct labelled *out)
{
	int64_t dims[VNPU_MAX_RANK];
	int32_t v;
	vnpu_status st;

	for (int k = 0; k < n; k++)
		dims[k] = size[labels[k]];
	st = cs_add_temp(s, type, n, dims, &v);
	if (st)
		return st;
	out->t = ct_dense(s, v);
	memcpy(out->labels, labels, (size_t)n);
	return VNPU_OK;
}

static bool has(const int8_t *labels, int n, int8_t l)
{
	for (int k = 0; k < n; k++)
		if (labels[k] == l)
			return true;
	return false;
}

/* Sum @in over its labels that @keep (and @keep2) lack: a reduction into a
 * temporary that keeps the rest. */
static vnpu_status sum_away(struct cstate *s, struct labelled *in, const int8_t *keep, int nk,
			    const int8_t *keep2, int nk2, const int64_t *size)
{
	struct vnpu_layer_reduce attr = { .func = VNPU_REDUCE_SUM };
	int8_t kept[VNPU_MAX_RANK];
	struct labelled out;
	struct ctensor t[2];
	int64_t dims[VNPU_MAX_RANK];
	int n = 0;
	vnpu_status st;

	for (uint32_t j = 0; j < in->t.rank; j++) {
		if (has(keep, nk, in->labels[j]) || has(keep2, nk2, in->labels[j]))
			kept[n++] = in->labels[j];
		else
			attr.axes |= 1u << j;
	}
	if (!attr.axes)
		return VNPU_OK;
	st = labelled_temp(s, in->t.type, kept, n, size, &out);
	if (st)
		return st;
	/* The reduction's output keeps the input's rank with 1s. */
	t[0] = in->t;
	t[1] = out.t;
	t[1].rank = in->t.rank;
	for (uint32_t j = 0, k = 0; j < in->t.rank; j++) {
		dims[j] = attr.axes >> j & 1 ? 1 : in->t.dims[j];
		t[1].dims[j] = dims[j];
		t[1].strides[j] = attr.axes >> j & 1 ? 0 : out.t.strides[k++];
	}
	st = cl_layer(s, VNPU_LAYER_REDUCE, t, 2, &attr, sizeof(attr));
	*in = out;
	return st;
}

/* @l viewed over @all labels: those it lacks broadcast (stride 0). */
static struct ctensor spread(const struct labelled *l, const int8_t *all, int n, const int64_t *size)
{
	struct ctensor t = reorder(l, all, n);

	for (int k = 0; k < n; k++)
		if (!has(l->labels, (int)l->t.rank, all[k])) {
			t.dims[k] = size[all[k]];
			t.strides[k] = 0;
		}
	return t;
}

/* Any numeric type: the broadcast product over every label, then summed
 * (when all labels together fit the device's rank). */
static vnpu_status lower_two_product(struct cstate *s, struct cop *op, const struct vnpu_einsum *e,
				     struct labelled *a, struct labelled *b, const int64_t *size)
{
	int8_t all[VNPU_MAX_RANK];
	int n = 0;
	struct labelled p;
	vnpu_status st;

	for (uint32_t j = 0; j < a->t.rank; j++)
		all[n++] = a->labels[j];
	for (uint32_t j = 0; j < b->t.rank; j++) {
		if (has(all, n, b->labels[j]))
			continue;
		if (n == VNPU_MAX_RANK)
			return UNSUP(s, "more than %d labels", VNPU_MAX_RANK);
		all[n++] = b->labels[j];
	}
	st = labelled_temp(s, a->t.type, all, n, size, &p);
	if (!st)
		st = cl_binary_t(s, VNPU_BIN_MUL, spread(a, all, n, size), spread(b, all, n, size), p.t);
	if (!st)
		st = sum_away(s, &p, e->out, e->out_rank, NULL, 0, size);
	if (!st && !e->out_rank)
		return cl_copy(s, ct_dense(s, op->out[0]), ct_shaped(s, p.t.val, 0, NULL));
	return st ? st : cl_copy(s, ct_dense(s, op->out[0]), reorder(&p, e->out, e->out_rank));
}

static vnpu_status lower_two(struct cstate *s, struct cop *op, const struct vnpu_einsum *e,
			     struct labelled *a, struct labelled *b, const int64_t *size)
{
	int8_t batch[VNPU_MAX_RANK], afree[VNPU_MAX_RANK], bfree[VNPU_MAX_RANK], sum[VNPU_MAX_RANK];
	int8_t order[VNPU_MAX_RANK];
	int nb = 0, na = 0, nf = 0, ns = 0;
	int64_t m = 1, n = 1, k = 1, batches = 1;
	struct labelled ap, bp, yp;
	struct vnpu_layer_gemm attr = { .alpha = f32_bits(1.0f), .beta = f32_bits(1.0f) };
	struct ctensor t[3];
	vnpu_status st;

	if (a->t.type != VNPU_TYPE_F32)
		return lower_two_product(s, op, e, a, b, size);
	st = sum_away(s, a, e->out, e->out_rank, b->labels, (int)b->t.rank, size);
	if (!st)
		st = sum_away(s, b, e->out, e->out_rank, a->labels, (int)a->t.rank, size);
	if (st)
		return st;
	for (uint32_t j = 0; j < a->t.rank; j++) {
		int8_t l = a->labels[j];

		if (!has(b->labels, (int)b->t.rank, l))
			afree[na++] = l, m *= size[l];
		else if (has(e->out, e->out_rank, l))
			batch[nb++] = l, batches *= size[l];
		else
			sum[ns++] = l, k *= size[l];
	}
	for (uint32_t j = 0; j < b->t.rank; j++)
		if (!has(a->labels, (int)a->t.rank, b->labels[j]))
			bfree[nf++] = b->labels[j], n *= size[b->labels[j]];
	/* A' [batch, afree, sum], B' [batch, sum, bfree], Y' [batch, afree, bfree] */
	memcpy(order, batch, (size_t)nb);
	memcpy(order + nb, afree, (size_t)na);
	memcpy(order + nb + na, sum, (size_t)ns);
	st = labelled_temp(s, VNPU_TYPE_F32, order, nb + na + ns, size, &ap);
	if (!st)
		st = cl_copy(s, ap.t, reorder(a, order, nb + na + ns));
	memcpy(order + nb, sum, (size_t)ns);
	memcpy(order + nb + ns, bfree, (size_t)nf);
	if (!st)
		st = labelled_temp(s, VNPU_TYPE_F32, order, nb + ns + nf, size, &bp);
	if (!st)
		st = cl_copy(s, bp.t, reorder(b, order, nb + ns + nf));
	memcpy(order + nb, afree, (size_t)na);
	memcpy(order + nb + na, bfree, (size_t)nf);
	if (!st)
		st = labelled_temp(s, VNPU_TYPE_F32, order, nb + na + nf, size, &yp);
	if (st)
		return st;
	t[0] = ct_shaped(s, ap.t.val, 3, (const int64_t[]){ batches, m, k });
	t[1] = ct_shaped(s, bp.t.val, 3, (const int64_t[]){ batches, k, n });
	t[2] = ct_shaped(s, yp.t.val, 3, (const int64_t[]){ batches, m, n });
	st = cl_layer(s, VNPU_LAYER_GEMM, t, 3, &attr, sizeof(attr));
	if (!st && !e->out_rank)
		return cl_copy(s, ct_dense(s, op->out[0]), ct_shaped(s, yp.t.val, 0, NULL));
	return st ? st : cl_copy(s, ct_dense(s, op->out[0]), reorder(&yp, e->out, e->out_rank));
}

vnpu_status cl_lower_einsum(struct cstate *s, struct cop *op)
{
	const char *eq = vnpu_attr_str(op->node, "equation", "");
	int32_t ranks[VNPU_EINSUM_MAX_IN];
	int64_t size[NUM_LABELS];
	struct labelled in[VNPU_EINSUM_MAX_IN];
	struct vnpu_einsum e;
	vnpu_status st;

	for (uint32_t i = 0; i < op->num_in && i < VNPU_EINSUM_MAX_IN; i++)
		ranks[i] = cs_info(s, op->in[i])->rank;
	if (!vnpu_einsum_parse(eq, (int)op->num_in, ranks, &e))
		return UNSUP(s, "equation '%s'", eq);
	for (int l = 0; l < NUM_LABELS; l++)
		size[l] = 1;
	for (int i = 0; i < e.num_in; i++)
		for (int k = 0; k < e.rank[i]; k++) {
			int64_t d = cs_info(s, op->in[i])->dims[k];

			if (d != 1)
				size[e.in[i][k]] = d;
		}
	for (int i = 0; i < e.num_in; i++)
		in[i] = by_label(s, op->in[i], e.in[i], e.rank[i], size);
	if (e.num_in == 2)
		return lower_two(s, op, &e, &in[0], &in[1], size);
	st = sum_away(s, &in[0], e.out, e.out_rank, NULL, 0, size);
	if (!st && !e.out_rank)
		return cl_copy(s, ct_dense(s, op->out[0]), ct_shaped(s, in[0].t.val, 0, NULL));
	return st ? st : cl_copy(s, ct_dense(s, op->out[0]), reorder(&in[0], e.out, e.out_rank));
}

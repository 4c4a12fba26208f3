// SPDX-License-Identifier: MIT
/*
 * Inference of the ops whose output shape depends on input values:
 * NonZero, Compress, Unique and NonMaxSuppression. Their output extents
 * are only known once the inputs are, so they run here, on the host, when
 * every input is known (constant folding); otherwise the data-dependent
 * extent stays unknown and a static compile reports it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "infer_priv.h"

/* The element count of @t; its shape must be static. */
static int64_t elems(const struct vnpu_tinfo *t)
{
	return vnpu_tinfo_elems(t);
}

static bool is_true(const struct vnpu_tinfo *t, int64_t i)
{
	return vnpu_type_is_float(t->type) ? vnpu_elem_get_f(t->data, t->type, i) != 0 :
					     vnpu_elem_get_i(t->data, t->type, i) != 0;
}

/* ---- NonZero ---- */

static vnpu_status infer_nonzero(struct ictx *c)
{
	const struct vnpu_tinfo *x;
	int64_t dims[2], n, k = 0;
	int32_t rank;
	vnpu_status st = inf_need_inputs(c, 1, 1);

	if (st)
		return st;
	x = IN(c, 0);
	if (x->rank < 0) {
		set_out(c->out[0], VNPU_TYPE_I64, 2, NULL);
		return VNPU_OK;
	}
	rank = x->rank;
	dims[0] = rank ? rank : 1;
	dims[1] = VNPU_DIM_DYNAMIC;
	if (!inf_inputs_known(c)) {
		set_out(c->out[0], VNPU_TYPE_I64, 2, dims);
		return VNPU_OK;
	}
	n = elems(x);
	dims[1] = 0;
	for (int64_t i = 0; i < n; i++)
		dims[1] += is_true(x, i);
	set_out(c->out[0], VNPU_TYPE_I64, 2, dims);
	if (!inf_alloc_out(c, c->out[0]))
		return VNPU_OK;
	for (int64_t i = 0; i < n; i++) {
		int64_t rest = i;

		if (!is_true(x, i))
			continue;
		/* Coordinates of element i, last axis fastest. */
		for (int32_t d = rank - 1; d >= 0; d--) {
			vnpu_elem_set_i(c->out[0]->data, VNPU_TYPE_I64, d * dims[1] + k,
					rest % x->dims[d]);
			rest /= x->dims[d];
		}
		if (!rank)
			vnpu_elem_set_i(c->out[0]->data, VNPU_TYPE_I64, k, 0);
		k++;
	}
	return VNPU_OK;
}

/* ---- Compress ---- */

static vnpu_status infer_compress(struct ictx *c)
{
	const struct vnpu_tinfo *x, *cond;
	const struct vnpu_attr *ax = vnpu_node_attr(c->n, "axis");
	int64_t axis = 0, dims[VNPU_MAX_RANK], outer = 1, inner = 1, len, n_true = 0;
	int32_t rank;
	size_t es;
	vnpu_status st = inf_need_inputs(c, 2, 2);

	if (st)
		return st;
	x = IN(c, 0);
	cond = IN(c, 1);
	if (cond->type != VNPU_TYPE_BOOL || cond->rank > 1)
		return FAIL(c, "the condition must be a 1-D bool tensor");
	if (x->rank < 0 || (ax && x->rank == 0)) {
		if (x->rank == 0)
			return FAIL(c, "axis given for a scalar input");
		set_out(c->out[0], x->type, ax ? -1 : 1, NULL);
		return VNPU_OK;
	}
	rank = ax ? x->rank : 1;
	if (ax) {
		st = inf_check_axis(c, ax->i, x->rank, &axis);
		if (st)
			return st;
		memcpy(dims, x->dims, (size_t)rank * sizeof(int64_t));
	}
	dims[axis] = VNPU_DIM_DYNAMIC;
	if (!inf_inputs_known(c)) {
		set_out(c->out[0], x->type, rank, dims);
		return VNPU_OK;
	}
	if (ax) {
		for (int32_t d = 0; d < axis; d++)
			outer *= x->dims[d];
		for (int32_t d = (int32_t)axis + 1; d < x->rank; d++)
			inner *= x->dims[d];
		len = x->dims[axis];
	} else {
		len = elems(x);
	}
	if (elems(cond) > len)
		return FAIL(c, "the condition has %lld entries, the axis %lld",
			    (long long)elems(cond), (long long)len);
	for (int64_t i = 0; i < elems(cond); i++)
		n_true += is_true(cond, i);
	dims[axis] = n_true;
	set_out(c->out[0], x->type, rank, dims);
	if (!inf_alloc_out(c, c->out[0]))
		return VNPU_OK;
	es = vnpu_element_type_size(x->type);
	for (int64_t o = 0, k = 0; o < outer; o++)
		for (int64_t i = 0; i < elems(cond); i++) {
			if (!is_true(cond, i))
				continue;
			memcpy((uint8_t *)c->out[0]->data + (size_t)k * inner * es,
			       (const uint8_t *)x->data + (size_t)((o * len + i) * inner) * es,
			       (size_t)inner * es);
			k++;
		}
	return VNPU_OK;
}

/* ---- Unique ---- */

/* Slices of @x along an axis: slice i is outer x inner elements. */
struct slices {
	const struct vnpu_tinfo *x;
	int64_t outer, len, inner;
};

static int cmp_elem(const struct vnpu_tinfo *x, int64_t a, int64_t b)
{
	if (vnpu_type_is_float(x->type)) {
		double va = vnpu_elem_get_f(x->data, x->type, a);
		double vb = vnpu_elem_get_f(x->data, x->type, b);

		return va < vb ? -1 : va > vb;
	}
	if (x->type == VNPU_TYPE_U64) {
		uint64_t va = (uint64_t)vnpu_elem_get_i(x->data, x->type, a);
		uint64_t vb = (uint64_t)vnpu_elem_get_i(x->data, x->type, b);

		return va < vb ? -1 : va > vb;
	}
	{
		int64_t va = vnpu_elem_get_i(x->data, x->type, a);
		int64_t vb = vnpu_elem_get_i(x->data, x->type, b);

		return va < vb ? -1 : va > vb;
	}
}

/* Lexicographic order of slices @a and @b. */
static int cmp_slice(const struct slices *s, int64_t a, int64_t b)
{
	for (int64_t o = 0; o < s->outer; o++)
		for (int64_t i = 0; i < s->inner; i++) {
			int r = cmp_elem(s->x, (o * s->len + a) * s->inner + i,
					 (o * s->len + b) * s->inner + i);

			if (r)
				return r;
		}
	return 0;
}

/* Insertion sort of slice indices @idx (stable: ties keep input order). */
static void sort_slices(const struct slices *s, int64_t *idx, int64_t n)
{
	for (int64_t i = 1; i < n; i++) {
		int64_t v = idx[i], j = i;

		while (j > 0 && cmp_slice(s, idx[j - 1], v) > 0) {
			idx[j] = idx[j - 1];
			j--;
		}
		idx[j] = v;
	}
}

static vnpu_status infer_unique(struct ictx *c)
{
	const struct vnpu_tinfo *x;
	const struct vnpu_attr *ax = vnpu_node_attr(c->n, "axis");
	bool sorted = vnpu_attr_int(c->n, "sorted", 1) != 0;
	int64_t axis = 0, dims[VNPU_MAX_RANK], *first = NULL, *order = NULL, *inv = NULL;
	int64_t *count = NULL, nu = 0, odims[1];
	struct slices s = { .outer = 1, .inner = 1 };
	int32_t rank;
	size_t es;
	vnpu_status st = inf_need_inputs(c, 1, 1);

	if (st)
		return st;
	x = IN(c, 0);
	s.x = x;
	if (x->rank < 0 || (ax && x->rank == 0)) {
		if (x->rank == 0)
			return FAIL(c, "axis given for a scalar input");
		set_out(c->out[0], x->type, ax ? -1 : 1, NULL);
		for (uint32_t i = 1; i < c->n->num_outputs; i++)
			if (c->out[i])
				set_out(c->out[i], VNPU_TYPE_I64, 1, NULL);
		return VNPU_OK;
	}
	rank = ax ? x->rank : 1;
	if (ax) {
		st = inf_check_axis(c, ax->i, x->rank, &axis);
		if (st)
			return st;
		memcpy(dims, x->dims, (size_t)rank * sizeof(int64_t));
	}
	dims[axis] = VNPU_DIM_DYNAMIC;
	odims[0] = VNPU_DIM_DYNAMIC;
	set_out(c->out[0], x->type, rank, dims);
	if (c->n->num_outputs > 1 && c->out[1])
		set_out(c->out[1], VNPU_TYPE_I64, 1, odims);
	if (c->n->num_outputs > 2 && c->out[2]) {
		odims[0] = ax ? x->dims[axis] : elems(x);
		set_out(c->out[2], VNPU_TYPE_I64, 1, odims);
		odims[0] = VNPU_DIM_DYNAMIC;
	}
	if (c->n->num_outputs > 3 && c->out[3])
		set_out(c->out[3], VNPU_TYPE_I64, 1, odims);
	if (!inf_inputs_known(c))
		return VNPU_OK;

	if (ax) {
		for (int32_t d = 0; d < axis; d++)
			s.outer *= x->dims[d];
		for (int32_t d = (int32_t)axis + 1; d < x->rank; d++)
			s.inner *= x->dims[d];
		s.len = x->dims[axis];
	} else {
		s.len = elems(x);
	}
	if (s.len > c->fold_limit)
		return VNPU_OK;
	first = calloc((size_t)s.len + 1, sizeof(int64_t));
	order = calloc((size_t)s.len + 1, sizeof(int64_t));
	inv = calloc((size_t)s.len + 1, sizeof(int64_t));
	count = calloc((size_t)s.len + 1, sizeof(int64_t));
	if (!first || !order || !inv || !count) {
		st = inf_error(c, VNPU_OUT_OF_MEMORY, "out of memory");
		goto out;
	}
	/* The first occurrence of each distinct slice, in input order. */
	for (int64_t i = 0; i < s.len; i++) {
		int64_t u = 0;

		while (u < nu && cmp_slice(&s, first[u], i))
			u++;
		if (u == nu)
			first[nu++] = i;
		count[u]++;
	}
	for (int64_t u = 0; u < nu; u++)
		order[u] = first[u];
	if (sorted) {
		int64_t *cnt = calloc((size_t)nu + 1, sizeof(int64_t));

		if (!cnt) {
			st = inf_error(c, VNPU_OUT_OF_MEMORY, "out of memory");
			goto out;
		}
		sort_slices(&s, order, nu);
		/* Counts follow the sorted order. */
		for (int64_t u = 0; u < nu; u++)
			for (int64_t v = 0; v < nu; v++)
				if (first[v] == order[u])
					cnt[u] = count[v];
		memcpy(count, cnt, (size_t)nu * sizeof(int64_t));
		free(cnt);
	}
	for (int64_t i = 0; i < s.len; i++)
		for (int64_t u = 0; u < nu; u++)
			if (!cmp_slice(&s, order[u], i)) {
				inv[i] = u;
				break;
			}

	dims[axis] = nu;
	set_out(c->out[0], x->type, rank, dims);
	odims[0] = nu;
	if (c->n->num_outputs > 1 && c->out[1])
		set_out(c->out[1], VNPU_TYPE_I64, 1, odims);
	if (c->n->num_outputs > 3 && c->out[3])
		set_out(c->out[3], VNPU_TYPE_I64, 1, odims);
	for (uint32_t i = 0; i < c->n->num_outputs && i < 4; i++)
		if (c->out[i] && !inf_alloc_out(c, c->out[i]))
			goto drop;
	es = vnpu_element_type_size(x->type);
	for (int64_t o = 0; o < s.outer; o++)
		for (int64_t u = 0; u < nu; u++)
			memcpy((uint8_t *)c->out[0]->data + (size_t)((o * nu + u) * s.inner) * es,
			       (const uint8_t *)x->data +
			       (size_t)((o * s.len + order[u]) * s.inner) * es,
			       (size_t)s.inner * es);
	for (int64_t u = 0; u < nu; u++) {
		if (c->n->num_outputs > 1 && c->out[1])
			vnpu_elem_set_i(c->out[1]->data, VNPU_TYPE_I64, u, order[u]);
		if (c->n->num_outputs > 3 && c->out[3])
			vnpu_elem_set_i(c->out[3]->data, VNPU_TYPE_I64, u, count[u]);
	}
	if (c->n->num_outputs > 2 && c->out[2])
		for (int64_t i = 0; i < s.len; i++)
			vnpu_elem_set_i(c->out[2]->data, VNPU_TYPE_I64, i, inv[i]);
	goto out;
drop:
	/* Too large to fold: every output stays without data. */
	for (uint32_t i = 0; i < c->n->num_outputs && i < 4; i++)
		if (c->out[i] && c->out[i]->owns_data) {
			free(c->out[i]->data);
			c->out[i]->data = NULL;
			c->out[i]->owns_data = false;
		}
out:
	free(first);
	free(order);
	free(inv);
	free(count);
	return st;
}

/* ---- NonMaxSuppression ---- */

struct nms_box {
	float y1, x1, y2, x2;
};

static struct nms_box nms_read(const struct vnpu_tinfo *b, int64_t i, bool center)
{
	float v[4];
	struct nms_box r;

	for (int k = 0; k < 4; k++)
		v[k] = (float)vnpu_elem_get_f(b->data, b->type, i * 4 + k);
	if (center) {
		/* [x_center, y_center, width, height] */
		r.x1 = v[0] - v[2] / 2;
		r.x2 = v[0] + v[2] / 2;
		r.y1 = v[1] - v[3] / 2;
		r.y2 = v[1] + v[3] / 2;
	} else {
		/* [y1, x1, y2, x2], either corner pair */
		r.y1 = fminf(v[0], v[2]);
		r.y2 = fmaxf(v[0], v[2]);
		r.x1 = fminf(v[1], v[3]);
		r.x2 = fmaxf(v[1], v[3]);
	}
	return r;
}

/* Whether @a and @b overlap by more than @thr (intersection over union). */
static bool nms_suppress(const struct nms_box *a, const struct nms_box *b, float thr)
{
	float area_a = (a->x2 - a->x1) * (a->y2 - a->y1);
	float area_b = (b->x2 - b->x1) * (b->y2 - b->y1);
	float w = fminf(a->x2, b->x2) - fmaxf(a->x1, b->x1);
	float h = fminf(a->y2, b->y2) - fmaxf(a->y1, b->y1);
	float inter;

	if (area_a <= 0 || area_b <= 0 || w <= 0 || h <= 0)
		return false;
	inter = w * h;
	return inter / (area_a + area_b - inter) > thr;
}

static vnpu_status infer_nms(struct ictx *c)
{
	const struct vnpu_tinfo *boxes, *scores, *t;
	bool center = vnpu_attr_int(c->n, "center_point_box", 0) != 0;
	int64_t nb, nc, n, max_out = 0, dims[2] = { VNPU_DIM_DYNAMIC, 3 }, *sel = NULL, nsel = 0;
	int64_t *order = NULL, *keep = NULL;
	float iou = 0, score_thr = -INFINITY;
	vnpu_status st = inf_need_inputs(c, 2, 5);

	if (st)
		return st;
	boxes = IN(c, 0);
	scores = IN(c, 1);
	if (!vnpu_type_is_float(boxes->type) || scores->type != boxes->type)
		return FAIL(c, "boxes and scores must be of the same float type");
	if (boxes->rank >= 0 && scores->rank >= 0) {
		if (boxes->rank != 3 || scores->rank != 3)
			return FAIL(c, "boxes and scores must have rank 3");
		if ((boxes->dims[2] >= 0 && boxes->dims[2] != 4) ||
		    (boxes->dims[0] >= 0 && scores->dims[0] >= 0 &&
		     boxes->dims[0] != scores->dims[0]) ||
		    (boxes->dims[1] >= 0 && scores->dims[2] >= 0 &&
		     boxes->dims[1] != scores->dims[2]))
			return FAIL(c, "boxes [batch, n, 4] and scores [batch, classes, n] disagree");
	}
	set_out(c->out[0], VNPU_TYPE_I64, 2, dims);
	if (!inf_inputs_known(c))
		return VNPU_OK;
	t = IN(c, 2);
	if (t && elems(t) > 0)
		max_out = vnpu_elem_get_i(t->data, t->type, 0);
	t = IN(c, 3);
	if (t && elems(t) > 0)
		iou = (float)vnpu_elem_get_f(t->data, t->type, 0);
	t = IN(c, 4);
	if (t && elems(t) > 0)
		score_thr = (float)vnpu_elem_get_f(t->data, t->type, 0);
	nb = boxes->dims[0];
	nc = scores->dims[1];
	n = boxes->dims[1];
	if (max_out < 0)
		max_out = 0;
	if (max_out > n)
		max_out = n;
	if (nb * nc * max_out > c->fold_limit)
		return VNPU_OK;
	sel = calloc((size_t)(nb * nc * max_out) * 3 + 1, sizeof(int64_t));
	order = calloc((size_t)n + 1, sizeof(int64_t));
	keep = calloc((size_t)n + 1, sizeof(int64_t));
	if (!sel || !order || !keep) {
		st = inf_error(c, VNPU_OUT_OF_MEMORY, "out of memory");
		goto out;
	}
	for (int64_t b = 0; b < nb; b++)
		for (int64_t k = 0; k < nc; k++) {
			int64_t base = (b * nc + k) * n, m = 0, nk = 0;

			/* Candidates above the threshold, by score descending
			 * (ties: lower index first). */
			for (int64_t i = 0; i < n; i++) {
				float si = (float)vnpu_elem_get_f(scores->data, scores->type, base + i);
				int64_t j = m;

				if (!(si > score_thr))
					continue;
				while (j > 0 && (float)vnpu_elem_get_f(scores->data, scores->type,
								      base + order[j - 1]) < si) {
					order[j] = order[j - 1];
					j--;
				}
				order[j] = i;
				m++;
			}
			for (int64_t i = 0; i < m && nk < max_out; i++) {
				struct nms_box bi = nms_read(boxes, b * n + order[i], center);
				bool drop = false;

				for (int64_t j = 0; j < nk && !drop; j++) {
					struct nms_box bj = nms_read(boxes, b * n + keep[j], center);

					drop = nms_suppress(&bi, &bj, iou);
				}
				if (drop)
					continue;
				keep[nk++] = order[i];
				sel[nsel * 3] = b;
				sel[nsel * 3 + 1] = k;
				sel[nsel * 3 + 2] = order[i];
				nsel++;
			}
		}
	dims[0] = nsel;
	set_out(c->out[0], VNPU_TYPE_I64, 2, dims);
	if (inf_alloc_out(c, c->out[0]))
		memcpy(c->out[0]->data, sel, (size_t)nsel * 3 * sizeof(int64_t));
out:
	free(sel);
	free(order);
	free(keep);
	return st;
}

/* ---- ScatterElements, Scatter, ScatterND and GatherND ---- */

static vnpu_status need_indices(const struct ictx *c, const struct vnpu_tinfo *idx)
{
	if (idx->type != VNPU_TYPE_I64 && idx->type != VNPU_TYPE_I32)
		return FAIL(c, "indices are %s", vnpu_element_type_str(idx->type));
	return VNPU_OK;
}

/*
 * Indices [q-1 dims, k] address the first k of @x's dimensions (k known: an
 * unknown k leaves the rest to the compiler), which must not be empty when
 * there are indices; updates are [q-1 dims, @x's dimensions from k].
 */
static vnpu_status check_scatter_nd(const struct ictx *c, const struct vnpu_tinfo *x,
				    const struct vnpu_tinfo *idx)
{
	int64_t k = idx->rank ? idx->dims[idx->rank - 1] : -1, dims[VNPU_MAX_RANK];
	int32_t q1 = idx->rank - 1, rank;
	vnpu_status st = VNPU_OK;

	if (!idx->rank || (k >= 0 && (k < 1 || k > x->rank)) ||
	    (k >= 0 && IN(c, 2)->rank != q1 + x->rank - k))
		return FAIL(c, "indices [..., k] need 1 <= k <= data rank and updates of rank q-1+r-k");
	if (k < 0)
		return VNPU_OK;
	rank = q1 + x->rank - (int32_t)k;
	for (int32_t d = 0; d < rank; d++)
		dims[d] = d < q1 ? idx->dims[d] : x->dims[d - q1 + k];
	for (int32_t d = 0; !st && d < k; d++)
		st = inf_check_indexed(c, idx, x->dims[d]);
	return st ? st : inf_check_dims(c, 2, "updates", rank, dims);
}

/* Output: data's type and shape; the shapes of the three inputs agree. */
static vnpu_status infer_scatter(struct ictx *c)
{
	const struct vnpu_tinfo *x, *idx, *u;
	bool nd = !strcmp(c->n->op, "ScatterND");
	int64_t axis;
	vnpu_status st = inf_need_inputs(c, 3, 3);

	if (st)
		return st;
	x = IN(c, 0);
	idx = IN(c, 1);
	u = IN(c, 2);
	st = need_indices(c, idx);
	if (st)
		return st;
	if (u->type != x->type)
		return FAIL(c, "updates are %s, data %s", vnpu_element_type_str(u->type),
			    vnpu_element_type_str(x->type));
	if (x->rank >= 0 && idx->rank >= 0 && u->rank >= 0 && !nd) {
		if (idx->rank != x->rank || u->rank != x->rank)
			return FAIL(c, "data, indices and updates must have the same rank");
		st = inf_check_axis(c, vnpu_attr_int(c->n, "axis", 0), x->rank, &axis);
		if (!st)
			st = inf_check_dims(c, 2, "updates", idx->rank, idx->dims);
		if (!st)
			st = inf_check_elements(c, x, idx, axis);
		if (st)
			return st;
	}
	if (x->rank >= 0 && idx->rank >= 0 && u->rank >= 0 && nd) {
		st = check_scatter_nd(c, x, idx);
		if (st)
			return st;
	}
	copy_shape(c->out[0], x, x->type);
	return VNPU_OK;
}

static vnpu_status infer_gather_nd(struct ictx *c)
{
	const struct vnpu_tinfo *x, *idx;
	int64_t b = vnpu_attr_int(c->n, "batch_dims", 0), k, dims[VNPU_MAX_RANK];
	int32_t rank, q1;
	vnpu_status st = inf_need_inputs(c, 2, 2);

	if (st)
		return st;
	x = IN(c, 0);
	idx = IN(c, 1);
	st = need_indices(c, idx);
	if (st)
		return st;
	/* A scalar idx (no k) is refused below. */
	if (x->rank < 0 || idx->rank < 0 || (idx->rank && idx->dims[idx->rank - 1] < 0)) {
		set_out(c->out[0], x->type, -1, NULL);
		return VNPU_OK;
	}
	q1 = idx->rank - 1;
	k = idx->rank ? idx->dims[q1] : 0;
	if (!idx->rank || b < 0 || b >= idx->rank || b >= x->rank || k < 1 || b + k > x->rank)
		return FAIL(c, "indices [..., k] need 1 <= k <= data rank - batch_dims");
	rank = q1 + x->rank - (int32_t)(b + k);
	if (rank > VNPU_MAX_RANK)
		return inf_limit(c, "output rank %d above %d", rank, VNPU_MAX_RANK);
	for (int32_t d = 0; d < b; d++)
		if (idx->dims[d] >= 0 && x->dims[d] >= 0 && idx->dims[d] != x->dims[d])
			return FAIL(c, "batch dimension %d differs", d);
	for (int32_t d = (int32_t)b; d < b + k; d++) {
		st = inf_check_indexed(c, idx, x->dims[d]);
		if (st)
			return st;
	}
	for (int32_t d = 0; d < rank; d++)
		dims[d] = d < q1 ? idx->dims[d] : x->dims[d - q1 + b + k];
	set_out(c->out[0], x->type, rank, dims);
	return VNPU_OK;
}

/* ---- GridSample ---- */

static vnpu_status infer_grid_sample(struct ictx *c)
{
	const struct vnpu_tinfo *x, *g;
	int64_t dims[4];
	vnpu_status st = inf_need_inputs(c, 2, 2);

	if (st)
		return st;
	x = IN(c, 0);
	g = IN(c, 1);
	if (!vnpu_type_is_float(x->type) || g->type != x->type)
		return FAIL(c, "X and grid must be of one float type");
	if (x->rank < 0 || g->rank < 0) {
		set_out(c->out[0], x->type, x->rank >= 0 ? x->rank : g->rank, NULL);
		return VNPU_OK;
	}
	/* N-D sampling from opset 20 (the device samples 2-D only); 2-D before */
	if (x->rank != g->rank || x->rank < 3 || (opset(c) < 20 && x->rank != 4))
		return FAIL(c, "X of rank %d and grid of rank %d: both of rank 4", x->rank, g->rank);
	if (x->rank != 4)
		return inf_limit(c, "only 2-D sampling (X of rank 4, grid of rank 4)");
	if ((g->dims[3] >= 0 && g->dims[3] != 2) ||
	    (g->dims[0] >= 0 && x->dims[0] >= 0 && g->dims[0] != x->dims[0]))
		return FAIL(c, "grid must be [N, H_out, W_out, 2]");
	if ((!x->dims[2] || !x->dims[3]) && g->dims[1] && g->dims[2] && x->dims[0] && x->dims[1])
		return FAIL(c, "X's height or width is 0: no points to sample from");
	dims[0] = x->dims[0];
	dims[1] = x->dims[1];
	dims[2] = g->dims[1];
	dims[3] = g->dims[2];
	set_out(c->out[0], x->type, 4, dims);
	return VNPU_OK;
}

/* ---- Adagrad, Momentum, Adam (ai.onnx.preview.training) ---- */

/*
 * Inputs R, T, then groups of n tensors: X, G and the states (Adam two,
 * the others one). Outputs: new X, then the new states, each shaped like
 * its input.
 */
/* The name of group @g's tensors: Adagrad's X G H, Momentum's X G V, Adam's X G V H. */
static const char *optimizer_group(const struct ictx *c, uint32_t g)
{
	static const char *const adagrad[] = { "X", "G", "H" }, *const momentum[] = { "X", "G", "V" };
	static const char *const adam[] = { "X", "G", "V", "H" };

	if (!strcmp(c->n->op, "Adam"))
		return adam[g];
	return !strcmp(c->n->op, "Adagrad") ? adagrad[g] : momentum[g];
}

static vnpu_status infer_optimizer(struct ictx *c)
{
	uint32_t groups = strcmp(c->n->op, "Adam") ? 3 : 4, n, i, g;
	vnpu_status st = inf_need_inputs(c, 2 + groups, 1024);

	if (st)
		return st;
	n = (c->n->num_inputs - 2) / groups;
	if ((c->n->num_inputs - 2) % groups || c->n->num_outputs != n * (groups - 1))
		return FAIL(c, "R, T and %u groups of tensors in, %u groups out expected", groups,
			    groups - 1);
	if (!vnpu_type_is_float(IN(c, 0)->type) || IN(c, 1)->type != VNPU_TYPE_I64)
		return FAIL(c, "R must be a float scalar and T an int64 scalar");
	for (i = 0; i < 2; i++) {
		char buf[96];

		if (IN(c, i)->rank > 0)
			return FAIL(c, "%s is %s: it must be a scalar", i ? "T" : "R",
				    vnpu_tinfo_str(IN(c, i), buf, sizeof(buf)));
	}
	for (i = 0; i < n; i++) {
		const struct vnpu_tinfo *x = IN(c, 2 + i);

		for (g = 1; g < groups; g++) {
			const struct vnpu_tinfo *t = IN(c, 2 + g * n + i);
			char what[48];

			st = inf_need(c, 2 + g * n + i);
			if (st)
				return st;
			if (t->type != x->type || (x->rank >= 0 && t->rank >= 0 && t->rank != x->rank))
				return FAIL(c, "tensor %u of group %u does not match X", i, g);
			/* a gradient or state per element of X */
			snprintf(what, sizeof(what), "%s of tensor %u", optimizer_group(c, g), i);
			st = x->rank >= 0 ? inf_check_dims(c, 2 + g * n + i, what, x->rank, x->dims) :
					    VNPU_OK;
			if (st)
				return st;
		}
		for (g = 0; g + 1 < groups; g++)
			if (c->out[g * n + i])
				copy_shape(c->out[g * n + i], IN(c, 2 + (g ? g + 1 : 0) * n + i),
					   x->type);
	}
	return VNPU_OK;
}

const struct op_infer vnpu_infer_train_ops[] = {
	{ "Adagrad", infer_optimizer }, { "Momentum", infer_optimizer },
	{ "Adam", infer_optimizer },
};
const size_t vnpu_infer_train_num_ops = sizeof(vnpu_infer_train_ops) /
					sizeof(vnpu_infer_train_ops[0]);

/* ---- TfIdfVectorizer ---- */

static vnpu_status infer_tfidf(struct ictx *c)
{
	const struct vnpu_attr *idx = vnpu_node_attr(c->n, "ngram_indexes");
	const struct vnpu_tinfo *x;
	int64_t dims[2], width = 0;
	vnpu_status st = inf_need_inputs(c, 1, 1);

	if (st)
		return st;
	x = IN(c, 0);
	if (x->type != VNPU_TYPE_I32 && x->type != VNPU_TYPE_I64)
		return inf_error(c, VNPU_UNSUPPORTED, "input of type %s (integer tokens only)",
				 vnpu_element_type_str(x->type));
	if (!idx || idx->type != VNPU_ATTR_INTS || !idx->n)
		return FAIL(c, "no ngram_indexes");
	for (size_t i = 0; i < idx->n; i++) {
		if (idx->ints[i] < 0 || idx->ints[i] > VNPU_MAX_ELEMS)
			return FAIL(c, "ngram_indexes[%zu] is %lld", i, (long long)idx->ints[i]);
		width = idx->ints[i] + 1 > width ? idx->ints[i] + 1 : width;
	}
	if (x->rank == 0 || x->rank > 2)
		return FAIL(c, "input of rank %d (1 or 2 expected)", x->rank);
	dims[0] = x->rank == 2 ? x->dims[0] : width;
	dims[1] = width;
	set_out(c->out[0], VNPU_TYPE_F32, x->rank < 0 ? -1 : x->rank, dims);
	return VNPU_OK;
}

/* ---- MaxUnpool ---- */

static vnpu_status infer_max_unpool(struct ictx *c)
{
	const struct vnpu_tinfo *x, *idx;
	const struct vnpu_attr *k = vnpu_node_attr(c->n, "kernel_shape");
	const struct vnpu_attr *sa = vnpu_node_attr(c->n, "strides");
	const struct vnpu_attr *pa = vnpu_node_attr(c->n, "pads");
	int64_t dims[VNPU_MAX_RANK], shape[VNPU_MAX_RANK];
	int32_t sp, n;
	vnpu_status st = inf_need_inputs(c, 2, 3);

	if (st)
		return st;
	x = IN(c, 0);
	idx = IN(c, 1);
	if (!vnpu_type_is_float(x->type) || idx->type != VNPU_TYPE_I64)
		return FAIL(c, "X must be float and I int64");
	if (x->rank < 0) {
		set_out(c->out[0], x->type, -1, NULL);
		return VNPU_OK;
	}
	sp = x->rank - 2;
	if (sp < 1 || !k || k->type != VNPU_ATTR_INTS || k->n != (size_t)sp ||
	    (sa && sa->n != (size_t)sp) || (pa && pa->n != (size_t)sp * 2))
		return FAIL(c, "X [N, C, spatial...] with kernel_shape, strides and pads per axis");
	/* I holds the position of each element of X. */
	st = inf_check_dims(c, 1, "I", x->rank, x->dims);
	if (st)
		return st;
	if (IN(c, 2)) {
		n = inf_read_ints(IN(c, 2), shape, VNPU_MAX_RANK);
		if (n >= 0 && n != x->rank)
			return FAIL(c, "output_shape of %d entries for rank %d", n, x->rank);
		if (n < 0) {
			set_out(c->out[0], x->type, x->rank, NULL);
			return VNPU_OK;
		}
		set_out(c->out[0], x->type, x->rank, shape);
		return VNPU_OK;
	}
	dims[0] = x->dims[0];
	dims[1] = x->dims[1];
	for (int32_t d = 0; d < sp; d++) {
		int64_t stride = sa ? sa->ints[d] : 1;
		int64_t pads = pa ? pa->ints[d] + pa->ints[d + sp] : 0;

		if (stride < 1 || k->ints[d] < 1)
			return FAIL(c, "kernel and strides must be positive");
		dims[d + 2] = x->dims[d + 2] < 0 ? VNPU_DIM_DYNAMIC :
			      (x->dims[d + 2] - 1) * stride - pads + k->ints[d];
		if (x->dims[d + 2] >= 0 && dims[d + 2] < 0)
			return FAIL(c, "output extent %lld", (long long)dims[d + 2]);
	}
	set_out(c->out[0], x->type, x->rank, dims);
	return VNPU_OK;
}

/* ---- MeanVarianceNormalization ---- */

static vnpu_status infer_mvn(struct ictx *c)
{
	const struct vnpu_attr *axes = vnpu_node_attr(c->n, "axes");
	const struct vnpu_tinfo *x;
	int64_t a;
	vnpu_status st = inf_need_inputs(c, 1, 1);

	if (st)
		return st;
	x = IN(c, 0);
	if (!vnpu_type_is_float(x->type))
		return FAIL(c, "input of type %s", vnpu_element_type_str(x->type));
	for (size_t i = 0; axes && x->rank >= 0 && i < axes->n; i++) {
		st = inf_check_axis(c, axes->ints[i], x->rank, &a);
		if (st)
			return st;
	}
	if (!axes && x->rank >= 0 && x->rank < 4)
		return FAIL(c, "the default axes 0, 2, 3 need rank 4 or more");
	copy_shape(c->out[0], x, x->type);
	return VNPU_OK;
}

/* ---- MelWeightMatrix ---- */

/*
 * Triangular filters over the spectrogram bins, evenly spaced on the mel
 * scale, as ONNX's reference computes them (bin edges rounded down to
 * whole bins). Folds once the five scalars are known.
 */
static vnpu_status infer_mel(struct ictx *c)
{
	vnpu_element_type type = (vnpu_element_type)vnpu_attr_int(c->n, "output_datatype",
								  VNPU_TYPE_F32);
	int64_t dims[2] = { VNPU_DIM_DYNAMIC, VNPU_DIM_DYNAMIC }, mels, dft, rate, *edge;
	double lo, hi, step;
	vnpu_status st = inf_need_inputs(c, 5, 5);

	if (st)
		return st;
	if (!vnpu_type_is_float(type))
		return inf_error(c, VNPU_UNSUPPORTED, "output_datatype %d", (int)type);
	if (!inf_inputs_known(c)) {
		set_out(c->out[0], type, 2, dims);
		return VNPU_OK;
	}
	for (uint32_t i = 0; i < 5; i++)
		if (elems(IN(c, i)) != 1)
			return FAIL(c, "input %u is not a scalar", i);
	mels = vnpu_elem_get_i(IN(c, 0)->data, IN(c, 0)->type, 0);
	dft = vnpu_elem_get_i(IN(c, 1)->data, IN(c, 1)->type, 0);
	rate = vnpu_elem_get_i(IN(c, 2)->data, IN(c, 2)->type, 0);
	lo = vnpu_elem_get_f(IN(c, 3)->data, IN(c, 3)->type, 0);
	hi = vnpu_elem_get_f(IN(c, 4)->data, IN(c, 4)->type, 0);
	if (mels < 1 || mels > (1 << 20) || dft < 1 || dft > (1 << 24) || rate < 1 ||
	    !(lo >= 0) || !(hi > lo))
		return FAIL(c, "num_mel_bins, dft_length, sample_rate or the edges out of range");
	dims[0] = dft / 2 + 1;
	dims[1] = mels;
	set_out(c->out[0], type, 2, dims);
	if (!inf_alloc_out(c, c->out[0]))
		return VNPU_OK;
	edge = calloc((size_t)mels + 2, sizeof(int64_t));
	if (!edge)
		return inf_error(c, VNPU_OUT_OF_MEMORY, "out of memory");
	lo = 2595 * log10(1 + lo / 700);
	hi = 2595 * log10(1 + hi / 700);
	step = (hi - lo) / (double)(mels + 2);
	for (int64_t i = 0; i < mels + 2; i++) {
		double hz = 700 * (pow(10, ((double)i * step + lo) / 2595) - 1);
		int64_t b = (int64_t)floor((double)(dft + 1) * hz / (double)rate);

		edge[i] = b < 0 ? 0 : b >= dims[0] ? dims[0] - 1 : b;
	}
	for (int64_t m = 0; m < mels; m++) {
		int64_t l = edge[m], ce = edge[m + 1], r = edge[m + 2];

		if (ce == l)
			vnpu_elem_set_f(c->out[0]->data, type, ce * mels + m, 1);
		for (int64_t j = l; ce > l && j <= ce; j++)
			vnpu_elem_set_f(c->out[0]->data, type, j * mels + m,
					(double)(j - l) / (double)(ce - l));
		for (int64_t j = ce; j < r; j++)
			vnpu_elem_set_f(c->out[0]->data, type, j * mels + m,
					(double)(r - j) / (double)(r - ce));
	}
	free(edge);
	return VNPU_OK;
}

/* ---- RoiAlign ---- */

static vnpu_status infer_roi_align(struct ictx *c)
{
	const struct vnpu_tinfo *x, *r, *b;
	int64_t dims[4];
	vnpu_status st = inf_need_inputs(c, 3, 3);

	if (st)
		return st;
	x = IN(c, 0);
	r = IN(c, 1);
	b = IN(c, 2);
	if (!vnpu_type_is_float(x->type) || r->type != x->type ||
	    (b->type != VNPU_TYPE_I64 && b->type != VNPU_TYPE_I32))
		return FAIL(c, "X and rois of one float type, batch_indices integer");
	if ((x->rank >= 0 && x->rank != 4) || (r->rank >= 0 && r->rank != 2) ||
	    (b->rank >= 0 && b->rank != 1))
		return FAIL(c, "X [N, C, H, W], rois [R, 4] and batch_indices [R] expected");
	if (r->rank == 2) {
		st = inf_check_dims(c, 1, "rois", 2, (int64_t[]){ r->dims[0], 4 });
		if (!st)
			st = inf_check_dims(c, 2, "batch_indices", 1, r->dims);
		if (st)
			return st;
	}
	/* Regions of an empty X hold no points (ONNX leaves them undefined). */
	if (x->rank == 4 && r->rank == 2 && r->dims[0] && x->dims[1] &&
	    (!x->dims[0] || !x->dims[2] || !x->dims[3]))
		return FAIL(c, "X is empty: no points to pool the regions from");
	dims[0] = r->rank == 2 ? r->dims[0] : VNPU_DIM_DYNAMIC;
	dims[1] = x->rank == 4 ? x->dims[1] : VNPU_DIM_DYNAMIC;
	dims[2] = vnpu_attr_int(c->n, "output_height", 1);
	dims[3] = vnpu_attr_int(c->n, "output_width", 1);
	if (dims[2] < 1 || dims[3] < 1 || dims[2] > VNPU_MAX_ELEMS || dims[3] > VNPU_MAX_ELEMS)
		return FAIL(c, "output_height and output_width must be positive");
	set_out(c->out[0], x->type, 4, dims);
	return VNPU_OK;
}

/* ---- Det ---- */

static vnpu_status infer_det(struct ictx *c)
{
	const struct vnpu_tinfo *x;
	vnpu_status st = inf_need_inputs(c, 1, 1);

	if (st)
		return st;
	x = IN(c, 0);
	if (!vnpu_type_is_float(x->type))
		return FAIL(c, "input of type %s", vnpu_element_type_str(x->type));
	if (x->rank < 0) {
		set_out(c->out[0], x->type, -1, NULL);
		return VNPU_OK;
	}
	if (x->rank < 2 || (x->dims[x->rank - 1] >= 0 && x->dims[x->rank - 2] >= 0 &&
			    x->dims[x->rank - 1] != x->dims[x->rank - 2]))
		return FAIL(c, "input must be [..., M, M]");
	set_out(c->out[0], x->type, x->rank - 2, x->dims);
	return VNPU_OK;
}

const struct op_infer vnpu_infer_data_ops[] = {
	{ "NonZero", infer_nonzero }, { "Compress", infer_compress },
	{ "Unique", infer_unique }, { "NonMaxSuppression", infer_nms },
	{ "ScatterElements", infer_scatter }, { "Scatter", infer_scatter },
	{ "ScatterND", infer_scatter }, { "GatherND", infer_gather_nd },
	{ "GridSample", infer_grid_sample }, { "TfIdfVectorizer", infer_tfidf },
	{ "MaxUnpool", infer_max_unpool }, { "Det", infer_det },
	{ "MeanVarianceNormalization", infer_mvn }, { "MelWeightMatrix", infer_mel },
	{ "RoiAlign", infer_roi_align },
};
const size_t vnpu_infer_data_num_ops = sizeof(vnpu_infer_data_ops) /
				       sizeof(vnpu_infer_data_ops[0]);

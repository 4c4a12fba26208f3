// SPDX-License-Identifier: MIT
/*
 * Lowering of data movement to strided copies (transpose, slice, concat,
 * split, expand, tile, depth/space rearrangements) and of the ops that are
 * index arithmetic over existing layers (negative slice steps and
 * ReverseSequence as gathers, CumSum as running sums, OneHot as a compare).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lower.h"

static vnpu_status lower_transpose(struct cstate *s, struct cop *op)
{
	const struct vnpu_tinfo *xi = INFO(s, IN(op, 0));
	const struct vnpu_attr *pa = vnpu_node_attr(N(op), "perm");
	struct ctensor x = ct_dense(s, IN(op, 0)), src = x;

	for (int32_t d = 0; d < xi->rank; d++) {
		int64_t p = pa ? pa->ints[d] : xi->rank - 1 - d;

		src.dims[d] = x.dims[p];
		src.strides[d] = x.strides[p];
	}
	return cl_copy(s, ct_dense(s, op->out[0]), src);
}

/* Gather the @len indices @idx (taken) of @x along @axis into a new temporary. */
vnpu_status cl_gather_at(struct cstate *s, int32_t x, int64_t axis, int64_t *idx, int64_t len,
			 int32_t *out)
{
	struct vnpu_layer_gather attr = { .axis = (uint32_t)axis };
	const struct vnpu_tinfo xinfo = *INFO(s, x), *xi = &xinfo;
	int64_t dims[VNPU_MAX_RANK];
	struct ctensor t[3];
	int32_t iv;
	vnpu_status st;

	st = cs_add_const(s, VNPU_TYPE_I64, 1, &len, idx, &iv);
	if (st)
		return st;
	memcpy(dims, xi->dims, sizeof(dims));
	dims[axis] = len;
	st = cs_add_temp(s, xi->type, xi->rank, dims, out);
	if (st)
		return st;
	t[0] = ct_dense(s, x);
	t[1] = ct_dense(s, iv);
	t[2] = ct_dense(s, *out);
	return cl_layer(s, VNPU_LAYER_GATHER, t, 3, &attr, sizeof(attr));
}

/* Gather @len indices start, start + step, ... of @x along @axis into a new
 * temporary (how a negative slice step is done: copies only go forward). */
vnpu_status cl_gather_steps(struct cstate *s, int32_t x, int64_t axis, int64_t start,
			    int64_t step, int64_t len, int32_t *out)
{
	int64_t *idx = malloc((size_t)(len + 1) * sizeof(int64_t));

	if (!idx)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	for (int64_t i = 0; i < len; i++)
		idx[i] = start + i * step;
	return cl_gather_at(s, x, axis, idx, len, out);
}

int64_t cl_slice_start(int64_t start, int64_t len, int64_t step)
{
	int64_t st = start < 0 ? start + len : start;

	if (step > 0)
		return st < 0 ? 0 : st > len ? len : st;
	return st < 0 ? 0 : st > len - 1 ? len - 1 : st;
}

static vnpu_status lower_slice(struct cstate *s, struct cop *op)
{
	const struct vnpu_tinfo xinfo = *INFO(s, IN(op, 0)), *xi = &xinfo;
	int64_t starts[VNPU_MAX_RANK], ends[VNPU_MAX_RANK], axes[VNPU_MAX_RANK], steps[VNPU_MAX_RANK];
	bool p1, p2, p3, p4;
	int32_t n = cl_const_ints(s, op, "starts", 1, starts, VNPU_MAX_RANK, &p1);
	int32_t ne = cl_const_ints(s, op, "ends", 2, ends, VNPU_MAX_RANK, &p2);
	int32_t na = cl_const_ints(s, op, "axes", 3, axes, VNPU_MAX_RANK, &p3);
	int32_t ns = cl_const_ints(s, op, "steps", 4, steps, VNPU_MAX_RANK, &p4);
	int32_t cur = IN(op, 0);
	struct ctensor src, dst = ct_dense(s, op->out[0]);
	int64_t first[VNPU_MAX_RANK] = { 0 }, stride[VNPU_MAX_RANK];

	if (n < 0 || ne < 0 || na < 0 || ns < 0)
		return UNSUP(s, "starts, ends, axes or steps computed at run time");
	for (int32_t d = 0; d < VNPU_MAX_RANK; d++)
		stride[d] = 1;
	for (int32_t i = 0; i < n; i++) {
		int64_t a = p3 ? axes[i] : i, step = p4 ? steps[i] : 1, len, st;

		a = a < 0 ? a + xi->rank : a;
		len = xi->dims[a];
		st = cl_slice_start(starts[i], len, step);
		if (step < 0 && dst.dims[a]) {
			vnpu_status rc = cl_gather_steps(s, cur, a, st, step, dst.dims[a], &cur);

			if (rc)
				return rc;
			continue;
		}
		first[a] = dst.dims[a] ? st : 0;
		stride[a] = step;
	}
	src = ct_dense(s, cur);
	for (int32_t d = 0; d < xi->rank; d++) {
		src.off += first[d] * src.strides[d];
		src.strides[d] *= stride[d];
		src.dims[d] = dst.dims[d];
	}
	return cl_copy(s, dst, src);
}

static vnpu_status lower_concat(struct cstate *s, struct cop *op)
{
	const struct vnpu_tinfo *yi = INFO(s, op->out[0]);
	int64_t axis = vnpu_attr_int(N(op), "axis", 0), at = 0;
	struct ctensor y = ct_dense(s, op->out[0]);

	axis = axis < 0 ? axis + yi->rank : axis;
	for (uint32_t i = 0; i < op->num_in; i++) {
		struct ctensor x = ct_dense(s, IN(op, i)), dst = y;
		vnpu_status st;

		dst.dims[axis] = x.dims[axis];
		dst.off += at * y.strides[axis];
		at += x.dims[axis];
		st = cl_copy(s, dst, x);
		if (st)
			return st;
	}
	return VNPU_OK;
}

static vnpu_status lower_split(struct cstate *s, struct cop *op)
{
	const struct vnpu_tinfo *xi = INFO(s, IN(op, 0));
	int64_t axis = vnpu_attr_int(N(op), "axis", 0), at = 0;
	struct ctensor x = ct_dense(s, IN(op, 0));

	axis = axis < 0 ? axis + xi->rank : axis;
	for (uint32_t o = 0; o < op->num_out; o++) {
		struct ctensor src = x, y;
		vnpu_status st;

		if (op->out[o] < 0)
			return UNSUP(s, "omitted outputs");
		y = ct_dense(s, op->out[o]);
		src.dims[axis] = y.dims[axis];
		src.off += at * x.strides[axis];
		at += y.dims[axis];
		st = cl_copy(s, y, src);
		if (st)
			return st;
	}
	return VNPU_OK;
}

static vnpu_status lower_expand(struct cstate *s, struct cop *op)
{
	struct ctensor y = ct_dense(s, op->out[0]);

	return cl_copy(s, y, ct_broadcast(ct_dense(s, IN(op, 0)), (int32_t)y.rank, y.dims));
}

/*
 * One Tile step: @y gets @x repeated along the axes where their extents
 * differ, Y viewed as [r0, d0, r1, d1, ...] (only repeated axes split) and
 * X broadcast along the r axes. -1 when the view needs too many dims.
 */
static int tile_view(struct ctensor x, struct ctensor y, struct ctensor *dst, struct ctensor *src)
{
	uint32_t r = 0;

	*dst = y;
	*src = x;
	for (uint32_t d = 0; d < x.rank; d++) {
		int64_t rep = x.dims[d] ? y.dims[d] / x.dims[d] : 1;

		if (r + (rep != 1) >= VNPU_MAX_DIMS)
			return -1;
		if (rep != 1) {
			dst->dims[r] = rep;
			dst->strides[r] = y.strides[d] * x.dims[d];
			src->dims[r] = rep;
			src->strides[r++] = 0;
		}
		dst->dims[r] = x.dims[d];
		dst->strides[r] = y.strides[d];
		src->dims[r] = x.dims[d];
		src->strides[r++] = x.strides[d];
	}
	dst->rank = src->rank = r;
	return 0;
}

/* @t re-shaped to @dims, dense row-major (for sizing a view only). */
static struct ctensor dense_dims(struct ctensor t, const int64_t *dims)
{
	int64_t stride = 1;

	t.off = 0;
	for (uint32_t d = t.rank; d-- > 0;) {
		t.dims[d] = dims[d];
		t.strides[d] = stride;
		stride *= dims[d];
	}
	return t;
}

/*
 * Tile. When one view needs too many dims, the repeats go in steps through
 * temporaries, each step repeating as many more axes as its view takes.
 */
static vnpu_status lower_tile(struct cstate *s, struct cop *op)
{
	struct ctensor x = ct_dense(s, IN(op, 0)), y = ct_dense(s, op->out[0]), dst, src;
	int64_t dims[VNPU_MAX_DIMS];
	uint32_t d = 0;
	vnpu_status st;

	if (!tile_view(x, y, &dst, &src))
		return cl_copy(s, dst, src);
	memcpy(dims, x.dims, sizeof(dims));
	while (d < x.rank) {
		struct ctensor next = y;
		uint32_t e;
		int32_t t;

		for (e = d; e < x.rank; e++) {
			int64_t keep = dims[e];

			dims[e] = y.dims[e];
			if (tile_view(x, dense_dims(x, dims), &dst, &src)) {
				dims[e] = keep;
				break;
			}
		}
		if (e == d)
			return UNSUP(s, "too many tiled axes");
		d = e;
		if (d < x.rank) {
			st = cs_add_temp(s, x.type, (int32_t)x.rank, dims, &t);
			if (st)
				return st;
			next = ct_dense(s, t);
		}
		tile_view(x, next, &dst, &src);
		st = cl_copy(s, dst, src);
		if (st)
			return st;
		x = next;
	}
	return VNPU_OK;
}

/* DepthToSpace / SpaceToDepth as one 6-D strided copy. */
static vnpu_status lower_space_depth(struct cstate *s, struct cop *op)
{
	const struct vnpu_tinfo *xi = INFO(s, IN(op, 0));
	int64_t b = vnpu_attr_int(N(op), "blocksize", 1), n = xi->dims[0], c = xi->dims[1];
	int64_t h = xi->dims[2], w = xi->dims[3];
	struct ctensor x = ct_dense(s, IN(op, 0)), src = x, dst;
	bool crd = !strcmp(vnpu_attr_str(N(op), "mode", "DCR"), "CRD");

	if (!strcmp(N(op)->op, "DepthToSpace")) {
		int64_t co = c / (b * b), dims[6] = { n, co, h, b, w, b };
		/* Element (n, co, h, i, w, j) of Y comes from X channel
		 * DCR: (i * b + j) * co + co_idx; CRD: co_idx * b * b + i * b + j. */
		int64_t cs = x.strides[1];

		dst = ct_shaped(s, op->out[0], 6, dims);
		src.rank = 6;
		for (int d = 0; d < 6; d++)
			src.dims[d] = dims[d];
		src.strides[0] = x.strides[0];
		src.strides[1] = crd ? cs * b * b : cs;
		src.strides[2] = x.strides[2];
		src.strides[3] = crd ? cs * b : cs * b * co;
		src.strides[4] = x.strides[3];
		src.strides[5] = crd ? cs : cs * co;
	} else {
		int64_t ho = h / b, wo = w / b, dims[6] = { n, b, b, c, ho, wo };
		/* Y channel (i * b + j) * c + ci at (ho, wo) is X (ci, ho * b + i, wo * b + j). */
		dst = ct_shaped(s, op->out[0], 6, dims);
		src.rank = 6;
		for (int d = 0; d < 6; d++)
			src.dims[d] = dims[d];
		src.strides[0] = x.strides[0];
		src.strides[1] = x.strides[2];
		src.strides[2] = x.strides[3];
		src.strides[3] = x.strides[1];
		src.strides[4] = x.strides[2] * b;
		src.strides[5] = x.strides[3] * b;
	}
	return cl_copy(s, dst, src);
}

/* The [.., 1, ..] slice @k of @v along @axis (rank kept). */
static struct ctensor slice_at(const struct cstate *s, int32_t v, int64_t axis, int64_t k)
{
	struct ctensor t = ct_dense(s, v);

	t.off += k * t.strides[axis];
	t.dims[axis] = 1;
	return t;
}

/* ReverseSequence: a GatherElements along the time axis with constant
 * indices (the first sequence_lens[b] steps reversed, the rest kept). */
static vnpu_status lower_reverse_sequence(struct cstate *s, struct cop *op)
{
	const struct vnpu_tinfo xinfo = *INFO(s, IN(op, 0)), *xi = &xinfo, *li;
	int64_t taxis = vnpu_attr_int(N(op), "time_axis", 0), baxis = vnpu_attr_int(N(op), "batch_axis", 1);
	int64_t n = vnpu_tinfo_elems(xi), idx[VNPU_MAX_RANK] = { 0 }, *data;
	struct vnpu_layer_gather attr = { .axis = (uint32_t)taxis };
	struct ctensor t[3];
	int32_t iv;
	vnpu_status st;

	if (!cs_is_const(s, IN(op, 1)))
		return UNSUP(s, "sequence_lens computed at run time");
	li = INFO(s, IN(op, 1));	/* read before any value is added */
	if (xi->rank < 2 || (taxis != 0 && taxis != 1) || baxis != 1 - taxis)
		return UNSUP(s, "time_axis %lld, batch_axis %lld", (long long)taxis, (long long)baxis);
	if (vnpu_type_is_float(li->type) || vnpu_tinfo_elems(li) != xi->dims[baxis])
		return UNSUP(s, "sequence_lens is not integers [%lld]", (long long)xi->dims[baxis]);
	data = malloc((size_t)(n + 1) * sizeof(int64_t));
	if (!data)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	for (int64_t i = 0; i < n; i++) {
		int64_t len = vnpu_elem_get_i(li->data, li->type, idx[baxis]), tt = idx[taxis];

		len = len < 0 ? 0 : len > xi->dims[taxis] ? xi->dims[taxis] : len;
		data[i] = tt < len ? len - 1 - tt : tt;
		for (int32_t d = xi->rank - 1; d >= 0 && ++idx[d] == xi->dims[d]; d--)
			idx[d] = 0;
	}
	st = cs_add_const(s, VNPU_TYPE_I64, xi->rank, xi->dims, data, &iv);
	if (st)
		return st;
	t[0] = ct_dense(s, IN(op, 0));
	t[1] = ct_dense(s, iv);
	t[2] = ct_dense(s, op->out[0]);
	return cl_layer(s, VNPU_LAYER_GATHER_ELEMENTS, t, 3, &attr, sizeof(attr));
}

/* CumSum as a running sum over slices: an ADD and a copy per step. */
static vnpu_status lower_cumsum(struct cstate *s, struct cop *op)
{
	const struct vnpu_tinfo xinfo = *INFO(s, IN(op, 0)), *xi = &xinfo;
	bool excl = vnpu_attr_int(N(op), "exclusive", 0), rev = vnpu_attr_int(N(op), "reverse", 0);
	struct vnpu_layer_binary add = { .func = VNPU_BIN_ADD };
	int64_t axis, len, dims[VNPU_MAX_RANK];
	struct ctensor acc = { 0 };
	vnpu_status st = VNPU_OK;

	if (IN(op, 1) < 0 || !cs_is_const(s, IN(op, 1)))
		return UNSUP(s, "axis computed at run time");
	axis = vnpu_elem_get_i(INFO(s, IN(op, 1))->data, INFO(s, IN(op, 1))->type, 0);
	axis = axis < 0 ? axis + xi->rank : axis;
	if (axis < 0 || axis >= xi->rank)
		return UNSUP(s, "axis out of range");
	len = xi->dims[axis];
	if (len > 1024)
		return UNSUP(s, "more than 1024 steps along the axis");
	memcpy(dims, xi->dims, sizeof(dims));
	dims[axis] = 1;
	for (int64_t j = 0; j < len && !st; j++) {
		int64_t k = rev ? len - 1 - j : j;
		struct ctensor x = slice_at(s, IN(op, 0), axis, k), y = slice_at(s, op->out[0], axis, k);

		if (excl)
			st = j ? cl_copy(s, y, acc) : cl_fill(s, y, 0);
		if (!st && j) {
			struct ctensor t[3] = { acc, x };
			int32_t sum;

			st = cs_add_temp(s, xi->type, xi->rank, dims, &sum);
			if (st)
				break;
			t[2] = ct_dense(s, sum);
			st = cl_layer(s, VNPU_LAYER_BINARY, t, 3, &add, sizeof(add));
			acc = t[2];
		} else if (!st) {
			acc = x;
		}
		if (!st && !excl)
			st = cl_copy(s, y, acc);
	}
	return st;
}

/* OneHot: (indices, negative ones wrapped) == range along the axis picks
 * values[1], else values[0]. */
static vnpu_status lower_one_hot(struct cstate *s, struct cop *op)
{
	const struct vnpu_tinfo iinfo = *INFO(s, IN(op, 0)), yinfo = *INFO(s, op->out[0]);
	const struct vnpu_tinfo *ii = &iinfo, *yi = &yinfo;
	int64_t axis = vnpu_attr_int(N(op), "axis", -1), depth, rdims[VNPU_MAX_RANK], udims[VNPU_MAX_RANK];
	int32_t idx = IN(op, 0), zero, dv, neg, wrapped, fixed, range, eq;
	vnpu_element_type t = ii->type;
	struct ctensor w[4];
	void *rd;
	vnpu_status st;

	axis = axis < 0 ? axis + yi->rank : axis;
	depth = yi->dims[axis];
	rd = calloc((size_t)depth, 8);
	if (!rd)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	for (int64_t k = 0; k < depth; k++)
		vnpu_elem_set_i(rd, t, k, k);
	for (int32_t d = 0; d < yi->rank; d++) {
		rdims[d] = d == axis ? depth : 1;
		udims[d] = d == axis ? 1 : yi->dims[d];
	}
	st = cs_add_const(s, t, yi->rank - (int32_t)axis, rdims + axis, rd, &range);
	if (!st)
		st = cl_const_scalar(s, t, 0, &zero);
	if (!st)
		st = cl_const_scalar(s, t, (double)depth, &dv);
	if (!st)
		st = cs_add_temp(s, VNPU_TYPE_BOOL, ii->rank, ii->dims, &neg);
	if (!st)
		st = cs_add_temp(s, t, ii->rank, ii->dims, &wrapped);
	if (!st)
		st = cs_add_temp(s, t, ii->rank, ii->dims, &fixed);
	if (!st)
		st = cl_binary(s, VNPU_BIN_LESS, idx, zero, neg);
	if (!st)
		st = cl_binary(s, VNPU_BIN_ADD, idx, dv, wrapped);
	if (!st)
		st = cl_where(s, neg, wrapped, idx, fixed);
	if (!st)
		st = cs_add_temp(s, VNPU_TYPE_BOOL, yi->rank, yi->dims, &eq);
	if (st)
		return st;
	w[0] = ct_shaped(s, fixed, yi->rank, udims);
	w[1] = ct_dense(s, range);
	w[2] = ct_dense(s, eq);
	{
		struct vnpu_layer_binary attr = { .func = VNPU_BIN_EQUAL };

		st = cl_layer(s, VNPU_LAYER_BINARY, w, 3, &attr, sizeof(attr));
	}
	if (st)
		return st;
	w[0] = ct_dense(s, eq);
	w[1] = ct_shaped(s, IN(op, 2), 0, NULL);
	w[1].off = 1;
	w[2] = ct_shaped(s, IN(op, 2), 0, NULL);
	w[3] = ct_dense(s, op->out[0]);
	return cl_layer(s, VNPU_LAYER_WHERE, w, 4, NULL, 0);
}

/* The value no element beats: the type's lowest (@lowest) or highest. */
static vnpu_status extreme_of(struct cstate *s, vnpu_element_type type, bool lowest, int32_t *out)
{
	uint64_t bits = vnpu_element_type_size(type) * 8;
	bool sign = type == VNPU_TYPE_I8 || type == VNPU_TYPE_I16 || type == VNPU_TYPE_I32 ||
		    type == VNPU_TYPE_I64;
	void *data = calloc(1, 8);
	int64_t v;

	if (!data)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	if (vnpu_type_is_float(type)) {
		vnpu_elem_set_f(data, type, 0, lowest ? -INFINITY : INFINITY);
	} else {
		if (sign)
			v = lowest ? (int64_t)(~0ull << (bits - 1)) : (int64_t)(~0ull >> (65 - bits));
		else
			v = lowest ? 0 : (int64_t)(~0ull >> (64 - bits));
		vnpu_elem_set_i(data, type, 0, v);
	}
	return cs_add_const(s, type, 0, NULL, data, out);
}

/* TopK as k rounds of ArgMax (ArgMin): gather the value, note the index,
 * and mask the winner out (with the type's extreme) for the next round.
 * Equal values: the lower index first, as ONNX has it. */
static vnpu_status lower_topk(struct cstate *s, struct cop *op)
{
	const struct vnpu_tinfo xinfo = *INFO(s, IN(op, 0)), yinfo = *INFO(s, op->out[0]);
	const struct vnpu_tinfo *xi = &xinfo, *yi = &yinfo;
	int64_t axis = vnpu_attr_int(N(op), "axis", -1), k, len, rdims[VNPU_MAX_RANK], *range;
	bool largest = vnpu_attr_int(N(op), "largest", 1);
	struct vnpu_layer_argreduce arg = { .min = !largest };
	struct vnpu_layer_gather gat;
	int32_t cur = IN(op, 0), rv, extreme, idx_out = op->num_out > 1 ? op->out[1] : -1;
	vnpu_status st;

	axis = axis < 0 ? axis + xi->rank : axis;
	k = yi->dims[axis];
	len = xi->dims[axis];
	if (k > 256)
		return UNSUP(s, "k above 256");
	arg.axis = gat.axis = (uint32_t)axis;
	gat.pad = 0;
	range = malloc((size_t)(len + 1) * sizeof(int64_t));
	if (!range)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	for (int64_t i = 0; i < len; i++)
		range[i] = i;
	for (int32_t d = 0; d < xi->rank - axis; d++)
		rdims[d] = d ? 1 : len;
	st = cs_add_const(s, VNPU_TYPE_I64, xi->rank - (int32_t)axis, rdims, range, &rv);
	if (!st)
		st = extreme_of(s, xi->type, largest, &extreme);
	memcpy(rdims, xi->dims, sizeof(rdims));
	rdims[axis] = 1;
	for (int64_t i = 0; !st && i < k; i++) {
		struct ctensor t[3];
		int32_t idx, mask, next;

		/* No value is looked at before it exists: a failed add leaves it unset. */
		st = cs_add_temp(s, VNPU_TYPE_I64, xi->rank, rdims, &idx);
		if (st)
			break;
		t[0] = ct_dense(s, cur);
		t[1] = ct_dense(s, idx);
		st = cl_layer(s, VNPU_LAYER_ARGREDUCE, t, 2, &arg, sizeof(arg));
		t[1] = ct_dense(s, idx);
		t[2] = slice_at(s, op->out[0], axis, i);
		if (!st)
			st = cl_layer(s, VNPU_LAYER_GATHER_ELEMENTS, t, 3, &gat, sizeof(gat));
		if (!st && idx_out >= 0)
			st = cl_copy(s, slice_at(s, idx_out, axis, i), ct_dense(s, idx));
		if (st || i + 1 == k)
			break;
		st = cs_add_temp(s, VNPU_TYPE_BOOL, xi->rank, xi->dims, &mask);
		if (!st)
			st = cs_add_temp(s, xi->type, xi->rank, xi->dims, &next);
		if (st)
			break;
		st = cl_binary(s, VNPU_BIN_EQUAL, rv, idx, mask);
		if (!st)
			st = cl_where(s, mask, extreme, cur, next);
		cur = next;
	}
	return st;
}

const struct lower_map cl_data_maps[] = {
	{ "TopK", lower_topk },
	{ "Transpose", lower_transpose }, { "Slice", lower_slice }, { "Concat", lower_concat },
	{ "Split", lower_split }, { "Expand", lower_expand }, { "Tile", lower_tile },
	{ "DepthToSpace", lower_space_depth }, { "SpaceToDepth", lower_space_depth },
	{ "CumSum", lower_cumsum }, { "OneHot", lower_one_hot },
	{ "ReverseSequence", lower_reverse_sequence },
};
const size_t cl_data_num_maps = sizeof(cl_data_maps) / sizeof(cl_data_maps[0]);

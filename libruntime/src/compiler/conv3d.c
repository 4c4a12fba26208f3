// SPDX-License-Identifier: MIT
/*
 * 3-D convolution, built from the device's 2-D one. Output depth od reads
 * input depths id = od * stride - pad + kd * dilation for the kernel
 * depths kd. Where all of them lie in the input (the interior), the kD
 * input slices are the channels of one 2-D input: a Gather of the kD
 * depths, [N, C, kD, H, W], viewed as [N, C * kD, H, W] and convolved by
 * W viewed as [M, C/group * kD, KH, KW], one 2-D convolution per depth.
 * An output depth that reads padding (a border) is the sum, over the kd
 * whose id lies in the input, of the 2-D convolution of slice id by
 * weight slice kd (the bias added once). The output depths are then
 * stacked. A slice is a Gather of one depth, folded for constant weights.
 * The nodes made are charged to the compile's node-visit budget.
 */
#include <stdlib.h>
#include <string.h>

#include "build.h"
#include "error.h"

struct conv3d {
	int64_t stride[3], dil[3], pad_begin[3], pad_end[3];
	int64_t in_depth, out_depth, k_depth;
	int64_t group;
};

static void read_ints(const struct vnpu_node *n, const char *name, size_t count, int64_t dflt,
		      int64_t *out)
{
	const struct vnpu_attr *a = vnpu_node_attr(n, name);

	for (size_t d = 0; d < count; d++)
		out[d] = a && a->type == VNPU_ATTR_INTS && a->n == count ? a->ints[d] : dflt;
}

/* The attributes of 3-D Conv @n of X @x and W @w, SAME pads made explicit. */
static vnpu_status conv3d_attrs(const struct vnpu_node *n, const struct vnpu_tinfo *x,
				const struct vnpu_tinfo *w, struct conv3d *c)
{
	const char *autopad = vnpu_attr_str(n, "auto_pad", "NOTSET");
	int64_t pads[6];

	read_ints(n, "strides", 3, 1, c->stride);
	read_ints(n, "dilations", 3, 1, c->dil);
	read_ints(n, "pads", 6, 0, pads);
	c->group = vnpu_attr_int(n, "group", 1);
	for (int d = 0; d < 3; d++) {
		int64_t in = x->dims[2 + d], extent = (w->dims[2 + d] - 1) * c->dil[d] + 1;

		if (c->stride[d] < 1 || c->dil[d] < 1 || pads[d] < 0 || pads[d + 3] < 0)
			return vnpu_node_error(VNPU_PARSE_ERROR, n, "bad strides, dilations or pads");
		c->pad_begin[d] = pads[d];
		c->pad_end[d] = pads[d + 3];
		if (!strcmp(autopad, "VALID")) {
			c->pad_begin[d] = c->pad_end[d] = 0;
		} else if (!strcmp(autopad, "SAME_UPPER") || !strcmp(autopad, "SAME_LOWER")) {
			int64_t out = (in + c->stride[d] - 1) / c->stride[d];
			int64_t total = (out - 1) * c->stride[d] + extent - in;

			total = total < 0 ? 0 : total;
			c->pad_begin[d] = !strcmp(autopad, "SAME_UPPER") ? total / 2 : total - total / 2;
			c->pad_end[d] = total - c->pad_begin[d];
		}
	}
	c->in_depth = x->dims[2];
	c->k_depth = w->dims[2];
	c->out_depth = (c->in_depth + c->pad_begin[0] + c->pad_end[0] -
			((c->k_depth - 1) * c->dil[0] + 1)) / c->stride[0] + 1;
	if (c->out_depth < 1 || c->out_depth > VNPU_MAX_LOOP_ITERS)
		return vnpu_node_error(VNPU_UNSUPPORTED, n, "an output depth of %lld",
				       (long long)c->out_depth);
	return VNPU_OK;
}

/* Attribute @a of a node the compiler made: integers @vals, @count of them. */
static vnpu_status set_ints(struct vnpu_attr *a, const char *name, const int64_t *vals,
			    size_t count)
{
	a->name = strdup(name);
	a->type = VNPU_ATTR_INTS;
	a->ints = malloc(count * sizeof(int64_t));
	a->n = count;
	a->t.rank = -1;
	if (!a->name || !a->ints)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	memcpy(a->ints, vals, count * sizeof(int64_t));
	return VNPU_OK;
}

/* Attribute @a of a node the compiler made: integer @name = @v. */
static vnpu_status set_int(struct vnpu_attr *a, const char *name, int64_t v)
{
	a->name = strdup(name);
	a->type = VNPU_ATTR_INT;
	a->i = v;
	a->t.rank = -1;
	return a->name ? VNPU_OK : vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
}

/* A node @op of @ni inputs the compiler makes, with room for @na attributes. */
static vnpu_status synth(struct cstate *s, const char *op, const struct vnpu_node *like,
			 uint32_t ni, uint32_t na, struct vnpu_node **out)
{
	struct vnpu_attr *attrs = calloc(na, sizeof(*attrs));
	vnpu_status st;

	if (!attrs)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	st = cs_add_synth(s, op, like, ni, 1, out);
	if (st) {
		free(attrs);
		return st;
	}
	for (uint32_t i = 0; i < na; i++)
		attrs[i].t.rank = -1;
	free((*out)->attrs);
	(*out)->attrs = attrs;
	(*out)->num_attrs = na;
	return VNPU_OK;
}

/* The 2-D Conv of @x by @w (and @bias unless -1) with @c's height and width. */
static vnpu_status conv2d(struct cstate *s, const struct vnpu_node *like, const struct conv3d *c,
			  int32_t x, int32_t w, int32_t bias, int32_t *out)
{
	const int64_t pads[4] = { c->pad_begin[1], c->pad_begin[2], c->pad_end[1], c->pad_end[2] };
	int32_t in[3] = { x, w, bias };
	struct vnpu_node *n;
	vnpu_status st;

	st = synth(s, "Conv", like, bias >= 0 ? 3 : 2, 4, &n);
	if (!st)
		st = set_int(&n->attrs[3], "group", c->group);
	if (!st)
		st = set_ints(&n->attrs[0], "strides", c->stride + 1, 2);
	if (!st)
		st = set_ints(&n->attrs[1], "dilations", c->dil + 1, 2);
	if (!st)
		st = set_ints(&n->attrs[2], "pads", pads, 4);
	return st ? st : cb_add_synth(s, n, in, out);
}

/* @x reshaped to the @rank dimensions @dims. */
static vnpu_status reshape(struct cstate *s, const struct vnpu_node *like, int32_t x,
			   int32_t rank, const int64_t *dims, int32_t *out)
{
	int32_t in[2] = { x, -1 };
	struct vnpu_node *n;
	vnpu_status st = synth(s, "Reshape", like, 2, 1, &n);

	/* a 0 in the shape is an empty dimension, not "copy X's" */
	if (!st)
		st = set_int(&n->attrs[0], "allowzero", 1);
	if (!st)
		st = cb_const_i64(s, 1, dims, rank, &in[1]);
	return st ? st : cb_add_synth(s, n, in, out);
}

/* Output depth @od: the sum of the 2-D convolutions that reach it. */
static vnpu_status out_depth(struct cstate *s, const struct vnpu_node *n, const struct conv3d *c,
			     const int32_t *in, int64_t od, int32_t *out)
{
	int32_t sum = -1;
	vnpu_status st = VNPU_OK;

	for (int64_t kd = 0; !st && kd < c->k_depth; kd++) {
		int64_t id = od * c->stride[0] - c->pad_begin[0] + kd * c->dil[0];
		int32_t xs, ws, term, add_in[2];
		struct vnpu_node *add;

		if (id < 0 || id >= c->in_depth)
			continue;
		st = cb_pick(s, n, in[0], 2, id, &xs);
		if (!st)
			st = cb_pick(s, n, in[1], 2, kd, &ws);
		/* the bias once, with the first term */
		if (!st)
			st = conv2d(s, n, c, xs, ws, sum < 0 && n->num_inputs > 2 ? in[2] : -1,
				    &term);
		if (!st && sum >= 0) {
			add_in[0] = sum;
			add_in[1] = term;
			st = cs_add_synth(s, "Add", n, 2, 1, &add);
			if (!st)
				st = cb_add_synth(s, add, add_in, &term);
		}
		sum = term;
	}
	if (!st && sum < 0)
		st = vnpu_node_error(VNPU_UNSUPPORTED, n,
				     "output depth %lld reads only padding", (long long)od);
	*out = sum;
	return st;
}

/*
 * Output depth @od, which reads no padding: its kD input depths gathered,
 * [N, C, kD, H, W], are the channels of one 2-D input [N, C * kD, H, W]
 * (a view), convolved by W viewed as [M, C/group * kD, KH, KW] (@wv).
 */
static vnpu_status interior_depth(struct cstate *s, const struct vnpu_node *n,
				  const struct conv3d *c, const int32_t *in, int32_t wv,
				  int64_t od, int32_t *out)
{
	/* X's dims copied: adding values below may move s->vals */
	const int64_t *xd = s->vals[in[0]].info.dims;
	const int64_t dims[4] = { xd[0], xd[1] * c->k_depth, xd[3], xd[4] };
	int64_t *idx = malloc((size_t)c->k_depth * sizeof(int64_t));
	int32_t g_in[2] = { in[0], -1 }, v;
	struct vnpu_node *g;
	vnpu_status st;

	if (!idx)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	for (int64_t k = 0; k < c->k_depth; k++)
		idx[k] = od * c->stride[0] - c->pad_begin[0] + k * c->dil[0];
	st = cb_const_i64(s, 1, idx, c->k_depth, &g_in[1]);
	free(idx);
	if (!st)
		st = synth(s, "Gather", n, 2, 1, &g);
	if (!st)
		st = set_int(&g->attrs[0], "axis", 2);
	if (!st)
		st = cb_add_synth(s, g, g_in, &v);
	if (!st)
		st = reshape(s, n, v, 4, dims, &v);
	return st ? st : conv2d(s, n, c, v, wv, n->num_inputs > 2 ? in[2] : -1, out);
}

/* The output depths [@lo, @hi) whose every kernel depth lies in the input. */
static void interior_range(const struct conv3d *c, int64_t *lo, int64_t *hi)
{
	int64_t last = c->in_depth - 1 - (c->k_depth - 1) * c->dil[0] + c->pad_begin[0];

	*lo = (c->pad_begin[0] + c->stride[0] - 1) / c->stride[0];
	if (*lo > c->out_depth)
		*lo = c->out_depth;
	*hi = last < 0 ? 0 : last / c->stride[0] + 1;
	if (*hi > c->out_depth)
		*hi = c->out_depth;
	if (*hi < *lo)
		*hi = *lo;
}

bool cb_is_conv3d(const struct cstate *s, const struct vnpu_node *n, const int32_t *in)
{
	return !n->domain[0] && !strcmp(n->op, "Conv") && n->num_inputs >= 2 && in[0] >= 0 &&
	       in[1] >= 0 && s->vals[in[1]].info.rank == 5;
}

vnpu_status cb_conv3d(struct cstate *s, struct vnpu_work *work, const struct vnpu_node *n,
		      const int32_t *in, int32_t *out)
{
	const struct vnpu_tinfo *x = &s->vals[in[0]].info, *w = &s->vals[in[1]].info;
	int32_t *parts, wv = -1;
	int64_t lo, hi;
	struct conv3d c;
	vnpu_status st;

	if (!vnpu_tinfo_static(x) || !vnpu_tinfo_static(w) || x->rank != 5)
		return vnpu_node_error(VNPU_UNSUPPORTED, n,
				       "3-D convolution of shapes not known at compile time");
	st = conv3d_attrs(n, x, w, &c);
	if (st)
		return st;
	interior_range(&c, &lo, &hi);
	/*
	 * Three nodes (a slice, its view, a 2-D Conv) per interior depth,
	 * four (two slices, a 2-D Conv, an Add) per border depth and kernel
	 * depth at most.
	 */
	st = vnpu_work_charge(work, n, 1 + 3 * (hi - lo) + 4 * (c.out_depth - (hi - lo)) *
					   (c.k_depth < c.in_depth ? c.k_depth : c.in_depth));
	if (st)
		return st;
	parts = calloc((size_t)c.out_depth, sizeof(*parts));
	if (!parts)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	if (hi > lo)
		st = reshape(s, n, in[1], 4, (const int64_t[]){ w->dims[0], w->dims[1] * c.k_depth,
								w->dims[3], w->dims[4] }, &wv);
	for (int64_t od = 0; !st && od < c.out_depth; od++) {
		if (od >= lo && od < hi)
			st = interior_depth(s, n, &c, in, wv, od, &parts[od]);
		else
			st = out_depth(s, n, &c, in, od, &parts[od]);
	}
	if (!st)
		st = cb_stack(s, n, parts, (uint32_t)c.out_depth, 1, 2, false, out);
	free(parts);
	return st;
}

// SPDX-License-Identifier: MIT
/*
 * A nearest Resize that upsamples by an integer factor per axis (an FPN's
 * top-down path: Add(lateral, Resize(coarser, 2x))) and that one Add reads
 * alone runs inside that Add: the Add reads the Resize's input through a
 * view of rank up to twice the output's, where each upsampled axis d
 * becomes [in_d, k_d] and the input steps 0 along k_d (lower.c,
 * lower_up_add()). Only where the Resize's output element o along d is
 * input element o / k_d: asymmetric coordinates rounded down (an
 * Upsample, a Resize of opset 10, or one asking for them), with scales
 * absent or exactly k_d, as the engine's RESIZE computes them. The Add
 * adds the same values as before in the same order, so the fused program
 * gives the unfused one's bits; the upsampled copy is neither written
 * nor read.
 */
#include <string.h>

#include "fuse.h"

/* @r's integer factors into @k, when it is such a Resize of @x into @y. */
static bool nearest_factors(const struct cstate *s, const struct cop *r, uint32_t *k)
{
	const struct vnpu_node *n = r->node;
	const struct vnpu_tinfo *x, *y;
	bool old = !strcmp(n->op, "Upsample") || s->m->opset < 11;
	uint32_t scale[VNPU_MAX_DIMS] = { 0 };
	int32_t d;

	if (r->kind != COP_NODE || r->num_out != 1 || r->num_in < 1 || r->in[0] < 0 ||
	    (strcmp(n->op, "Resize") && strcmp(n->op, "Upsample")) ||
	    strcmp(vnpu_attr_str(n, "mode", "nearest"), "nearest") ||
	    vnpu_attr_int(n, "exclude_outside", 0))
		return false;
	if (!old && (strcmp(vnpu_attr_str(n, "coordinate_transformation_mode", "half_pixel"),
			    "asymmetric") ||
		     strcmp(vnpu_attr_str(n, "nearest_mode", "round_prefer_floor"), "floor")))
		return false;
	x = cs_info(s, r->in[0]);
	y = cs_info(s, r->out[0]);
	if (x->type != VNPU_TYPE_F32 || y->type != VNPU_TYPE_F32 || x->rank != y->rank ||
	    x->rank < 1 || !vnpu_tinfo_static(x) || !vnpu_tinfo_static(y))
		return false;
	cl_resize_scales(s, r, scale);
	for (d = 0; d < x->rank; d++) {
		int64_t f;
		float fk;

		if (x->dims[d] < 1 || y->dims[d] % x->dims[d] || y->dims[d] / x->dims[d] > 1024)
			return false;
		f = y->dims[d] / x->dims[d];
		fk = (float)f;
		if (scale[d] && scale[d] != f32_bits(fk))
			return false;
		k[d] = (uint32_t)f;
	}
	/* the view has a dim more per upsampled axis; the engine runs pairs fast */
	return k[x->rank - 1] <= 2;
}

static vnpu_status fuse_into_add(struct cstate *s, struct uses *u, uint32_t idx)
{
	struct cop *add = &s->ops[idx];
	const struct vnpu_tinfo *y;

	if (add->kind != COP_NODE || strcmp(add->node->op, "Add") || add->qlinear ||
	    add->num_in != 2 || add->num_out != 1 || add->in[0] < 0 || add->in[1] < 0 ||
	    add->in[0] == add->in[1] || add->out[0] < 0)
		return VNPU_OK;
	y = cs_info(s, add->out[0]);
	for (uint32_t i = 0; i < 2; i++) {
		int32_t v = add->in[i], p = cf_producer(s, u, v), ups = 0;
		uint32_t k[VNPU_MAX_DIMS];
		struct cop *r;

		if (p < 0 || s->vals[v].alias >= 0 || u->aliased[v] || s->vals[v].out_index >= 0 ||
		    cf_live_reader(s, u, v, (int32_t)idx) >= 0)
			continue;
		r = &s->ops[p];
		if (r->out[0] != v || !nearest_factors(s, r, k) ||
		    !cf_same_shape(cs_info(s, v), y) ||
		    !cf_same_shape(cs_info(s, add->in[1 - i]), y))
			continue;
		for (int32_t d = 0; d < y->rank; d++)
			ups += k[d] > 1;
		if (!ups || y->rank + ups > VNPU_MAX_DIMS)
			continue;
		add->in[i] = r->in[0];
		add->up_input = (int32_t)i;
		memcpy(add->up, k, sizeof(k[0]) * (size_t)y->rank);
		strncpy(add->type, "Resize+Add", sizeof(add->type) - 1);
		r->dead = true;
		r->fused_into = (int32_t)idx;
		return cf_uses_add(s, u, false, add->in[i], add);
	}
	return VNPU_OK;
}

vnpu_status cf_fuse_upsamples(struct cstate *s, struct uses *u)
{
	vnpu_status st = VNPU_OK;

	for (uint32_t i = 0; !st && i < s->num_ops; i++) {
		s->cur_op = i;
		if (!s->ops[i].dead)
			st = fuse_into_add(s, u, i);
	}
	return st;
}

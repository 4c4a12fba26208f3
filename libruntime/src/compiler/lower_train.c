// SPDX-License-Identifier: MIT
/*
 * The optimizers of the ai.onnx.preview.training domain (Adagrad, Momentum,
 * Adam) as element-wise layers. Inputs: R (learning rate) and T (update
 * count) scalars, then n tensors X, n gradients G and n (Adam: 2n) state
 * tensors; outputs the new X and the new states. R and T may be computed at
 * run time: the step size derived from them is a scalar computed on the
 * device. And Dropout, whose training mode with a seed draws its mask here.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lower.h"

/* A temporary of @type and @like's shape (a scalar when @like is -1). */
static vnpu_status temp_like(struct cstate *s, int32_t like, vnpu_element_type type, int32_t *out)
{
	int64_t dims[VNPU_MAX_RANK];
	int32_t rank = like >= 0 ? INFO(s, like)->rank : 0;

	/* A copy: adding a value may move the table @like's info is in. */
	if (rank > 0)
		memcpy(dims, INFO(s, like)->dims, (size_t)rank * sizeof(int64_t));
	return cs_add_temp(s, type, rank, dims, out);
}

/* *@out = @a func @b, a new temporary shaped like @like. */
static vnpu_status bin(struct cstate *s, uint32_t func, int32_t a, int32_t b, int32_t like,
		       vnpu_element_type type, int32_t *out)
{
	vnpu_status st = temp_like(s, like, type, out);

	return st ? st : cl_binary(s, func, a, b, *out);
}

/* *@out = @a func (constant @v). */
static vnpu_status bin_c(struct cstate *s, uint32_t func, int32_t a, double v, int32_t like,
			 vnpu_element_type type, int32_t *out)
{
	int32_t c;
	vnpu_status st = cl_const_scalar(s, type, v, &c);

	return st ? st : bin(s, func, a, c, like, type, out);
}

static vnpu_status sqrt_of(struct cstate *s, int32_t x, vnpu_element_type type, int32_t *out)
{
	struct vnpu_layer_act a = { .func = VNPU_ACT_SQRT };
	vnpu_status st = temp_like(s, x, type, out);

	return st ? st : cl_unary(s, x, *out, &a);
}

/* G + norm * X, or G itself when norm is 0. */
static vnpu_status regularized(struct cstate *s, int32_t x, int32_t g, float norm,
			       vnpu_element_type type, int32_t *out)
{
	int32_t t;
	vnpu_status st;

	if (norm == 0) {
		*out = g;
		return VNPU_OK;
	}
	st = bin_c(s, VNPU_BIN_MUL, x, norm, x, type, &t);
	return st ? st : bin(s, VNPU_BIN_ADD, t, g, x, type, out);
}

/* Where T > 0, @a; otherwise @b (scalars). */
static vnpu_status if_started(struct cstate *s, int32_t tf, int32_t a, int32_t b,
			      vnpu_element_type type, int32_t *out)
{
	int32_t pos, zero;
	vnpu_status st = cl_const_scalar(s, type, 0, &zero);

	if (!st)
		st = bin(s, VNPU_BIN_GREATER, tf, zero, -1, VNPU_TYPE_BOOL, &pos);
	if (!st)
		st = temp_like(s, -1, type, out);
	return st ? st : cl_where(s, pos, a, b, *out);
}

static vnpu_status lower_optimizer(struct cstate *s, struct cop *op)
{
	const struct vnpu_node *n = N(op);
	bool adam = !strcmp(n->op, "Adam"), mom = !strcmp(n->op, "Momentum");
	uint32_t groups = adam ? 4 : 3, cnt = (op->num_in - 2) / groups;
	int32_t r = IN(op, 0), tf, step = -1, beta_adj = -1;
	vnpu_element_type type;
	float norm = vnpu_attr_float(n, "norm_coefficient", 0.0f);
	vnpu_status st;

	if (op->num_in < 2 + groups || (op->num_in - 2) % groups ||
	    op->num_out != cnt * (groups - 1))
		return UNSUP(s, "inputs R, T and %u groups of tensors expected", groups);
	type = INFO(s, IN(op, 2))->type;
	if (!vnpu_type_is_float(type))
		return UNSUP(s, "parameters of type %s", vnpu_element_type_str(type));
	if (INFO(s, r)->type != type) {
		st = cl_cast(s, r, type, &r);
		if (st)
			return st;
	}
	st = cl_cast(s, IN(op, 1), type, &tf);
	if (st)
		return st;

	if (!strcmp(n->op, "Adagrad")) {
		/* r = R / (1 + T * decay_factor) */
		st = bin_c(s, VNPU_BIN_MUL, tf, vnpu_attr_float(n, "decay_factor", 0.0f), -1, type,
			   &step);
		if (!st)
			st = bin_c(s, VNPU_BIN_ADD, step, 1, -1, type, &step);
		if (!st)
			st = bin(s, VNPU_BIN_DIV, r, step, -1, type, &step);
	} else if (mom) {
		int32_t beta, one;

		st = cl_const_scalar(s, type, vnpu_attr_float(n, "beta", 0.0f), &beta);
		if (!st)
			st = cl_const_scalar(s, type, 1, &one);
		if (!st)
			st = if_started(s, tf, beta, one, type, &beta_adj);
	} else {
		/* R * sqrt(1 - beta^T) / (1 - alpha^T) once T > 0, else R */
		int32_t ca, cb, pa, pb;

		st = cl_const_scalar(s, type, vnpu_attr_float(n, "alpha", 0.9f), &ca);
		if (!st)
			st = cl_const_scalar(s, type, vnpu_attr_float(n, "beta", 0.999f), &cb);
		if (!st)
			st = bin(s, VNPU_BIN_POW, ca, tf, -1, type, &pa);
		if (!st)
			st = bin(s, VNPU_BIN_POW, cb, tf, -1, type, &pb);
		if (!st)
			st = bin_c(s, VNPU_BIN_MUL, pb, -1, -1, type, &pb);
		if (!st)
			st = bin_c(s, VNPU_BIN_ADD, pb, 1, -1, type, &pb);
		if (!st)
			st = sqrt_of(s, pb, type, &pb);
		if (!st)
			st = bin_c(s, VNPU_BIN_MUL, pa, -1, -1, type, &pa);
		if (!st)
			st = bin_c(s, VNPU_BIN_ADD, pa, 1, -1, type, &pa);
		if (!st)
			st = bin(s, VNPU_BIN_DIV, pb, pa, -1, type, &pb);
		if (!st)
			st = bin(s, VNPU_BIN_MUL, r, pb, -1, type, &pb);
		if (!st)
			st = if_started(s, tf, pb, r, type, &step);
	}

	for (uint32_t i = 0; i < cnt && !st; i++) {
		int32_t x = IN(op, 2 + i), g = IN(op, 2 + cnt + i), v = IN(op, 2 + 2 * cnt + i);
		int32_t xo = op->out[i], vo = op->out[cnt + i], greg, a, b;

		st = regularized(s, x, g, norm, type, &greg);
		if (st)
			break;
		if (!strcmp(n->op, "Adagrad")) {
			/* H' = H + g^2; X' = X - r * g / (sqrt(H') + eps) */
			st = bin(s, VNPU_BIN_MUL, greg, greg, x, type, &a);
			if (!st)
				st = cl_binary(s, VNPU_BIN_ADD, v, a, vo);
			if (!st)
				st = sqrt_of(s, vo, type, &a);
			if (!st)
				st = bin_c(s, VNPU_BIN_ADD, a, vnpu_attr_float(n, "epsilon", 1e-6f), x,
					   type, &a);
			if (!st)
				st = bin(s, VNPU_BIN_MUL, step, greg, x, type, &b);
			if (!st)
				st = bin(s, VNPU_BIN_DIV, b, a, x, type, &b);
			if (!st)
				st = cl_binary(s, VNPU_BIN_SUB, x, b, xo);
		} else if (mom) {
			/* V' = alpha V + beta' g; X' = X - R V' (nesterov:
			 * X - R (g + alpha V')) */
			float alpha = vnpu_attr_float(n, "alpha", 0.0f);
			const char *mode = vnpu_attr_str(n, "mode", "standard");

			if (strcmp(mode, "standard") && strcmp(mode, "nesterov"))
				return UNSUP(s, "mode '%s'", mode);
			st = bin_c(s, VNPU_BIN_MUL, v, alpha, x, type, &a);
			if (!st)
				st = bin(s, VNPU_BIN_MUL, beta_adj, greg, x, type, &b);
			if (!st)
				st = cl_binary(s, VNPU_BIN_ADD, a, b, vo);
			if (!st && !strcmp(mode, "nesterov")) {
				st = bin_c(s, VNPU_BIN_MUL, vo, alpha, x, type, &a);
				if (!st)
					st = bin(s, VNPU_BIN_ADD, greg, a, x, type, &a);
			} else {
				a = vo;
			}
			if (!st)
				st = bin(s, VNPU_BIN_MUL, r, a, x, type, &b);
			if (!st)
				st = cl_binary(s, VNPU_BIN_SUB, x, b, xo);
		} else {
			/* V' = alpha V + (1 - alpha) g; H' = beta H + (1 - beta) g^2;
			 * X' = (1 - post) (X - step V' / (sqrt(H') + eps)) */
			float alpha = vnpu_attr_float(n, "alpha", 0.9f);
			float beta = vnpu_attr_float(n, "beta", 0.999f);
			float post = vnpu_attr_float(n, "norm_coefficient_post", 0.0f);
			int32_t h = IN(op, 2 + 3 * cnt + i), ho = op->out[2 * cnt + i];

			st = bin_c(s, VNPU_BIN_MUL, v, alpha, x, type, &a);
			if (!st)
				st = bin_c(s, VNPU_BIN_MUL, greg, 1.0 - (double)alpha, x, type, &b);
			if (!st)
				st = cl_binary(s, VNPU_BIN_ADD, a, b, vo);
			if (!st)
				st = bin_c(s, VNPU_BIN_MUL, h, beta, x, type, &a);
			if (!st)
				st = bin(s, VNPU_BIN_MUL, greg, greg, x, type, &b);
			if (!st)
				st = bin_c(s, VNPU_BIN_MUL, b, 1.0 - (double)beta, x, type, &b);
			if (!st)
				st = cl_binary(s, VNPU_BIN_ADD, a, b, ho);
			if (!st)
				st = sqrt_of(s, ho, type, &a);
			if (!st)
				st = bin_c(s, VNPU_BIN_ADD, a, vnpu_attr_float(n, "epsilon", 1e-6f), x,
					   type, &a);
			if (!st)
				st = bin(s, VNPU_BIN_DIV, vo, a, x, type, &a);
			if (!st)
				st = bin(s, VNPU_BIN_MUL, step, a, x, type, &a);
			if (!st && post != 0) {
				st = bin(s, VNPU_BIN_SUB, x, a, x, type, &a);
				if (!st)
					st = cl_const_scalar(s, type, 1.0 - (double)post, &b);
				if (!st)
					st = cl_binary(s, VNPU_BIN_MUL, a, b, xo);
			} else if (!st) {
				st = cl_binary(s, VNPU_BIN_SUB, x, a, xo);
			}
		}
	}
	return st;
}

/* The seeded generator (lower.h says what it is). */
void cl_mt_seed(struct cl_mt19937 *g, uint32_t seed)
{
	g->x[0] = seed;
	for (uint32_t i = 1; i < CL_MT_N; i++)
		g->x[i] = 1812433253u * (g->x[i - 1] ^ (g->x[i - 1] >> 30)) + i;
	g->next = CL_MT_N;
}

/* The next 624 words from the last 624: the twist of the recurrence. */
static void mt_twist(struct cl_mt19937 *g)
{
	for (uint32_t i = 0; i < CL_MT_N; i++) {
		uint32_t y = (g->x[i] & 0x80000000u) | (g->x[(i + 1) % CL_MT_N] & 0x7fffffffu);

		g->x[i] = g->x[(i + 397) % CL_MT_N] ^ (y >> 1) ^ (y & 1 ? 0x9908b0dfu : 0);
	}
	g->next = 0;
}

uint32_t cl_mt_u32(struct cl_mt19937 *g)
{
	uint32_t y;

	if (g->next >= CL_MT_N)
		mt_twist(g);
	y = g->x[g->next++];
	/* Tempering. */
	y ^= y >> 11;
	y ^= (y << 7) & 0x9d2c5680u;
	y ^= (y << 15) & 0xefc60000u;
	return y ^ (y >> 18);
}

double cl_mt_double(struct cl_mt19937 *g)
{
	uint32_t a = cl_mt_u32(g) >> 5, b = cl_mt_u32(g) >> 6;

	return ((double)a * 67108864.0 + (double)b) / 9007199254740992.0;
}

/* A constant scalar input's value, or NAN when @v is absent or not constant. */
static double const_scalar(const struct cstate *s, int32_t v)
{
	if (v < 0 || !cs_is_const(s, v))
		return NAN;
	return vnpu_elem_get_f(INFO(s, v)->data, INFO(s, v)->type, 0);
}

/*
 * Training-mode Dropout with a seed: Y = X * M, M[i] = scale where draw i
 * (row-major) is >= ratio and 0 elsewhere, scale = 1 / (1 - ratio) in f32
 * as ONNX's reference computes it; the mask output is the constant M != 0.
 * The op is deterministic once seeded, so M is computed here.
 */
static vnpu_status dropout_seeded(struct cstate *s, struct cop *op, double ratio, int64_t seed)
{
	const struct vnpu_tinfo xinfo = *INFO(s, IN(op, 0)), *xi = &xinfo;
	int64_t n = vnpu_tinfo_elems(xi), dims[VNPU_MAX_RANK];
	float scale = 1.0f / (1.0f - (float)ratio);
	vnpu_element_type type = xi->type;
	int32_t rank = xi->rank, mv, bv;
	struct cl_mt19937 *g = malloc(sizeof(*g));
	uint8_t *mask = calloc((size_t)n + 1, 1);
	void *m = calloc((size_t)n + 1, vnpu_element_type_size(type));
	vnpu_status st;

	if (!g || !mask || !m) {
		free(g);
		free(mask);
		free(m);
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory for a dropout mask");
	}
	memcpy(dims, xi->dims, (size_t)rank * sizeof(int64_t));
	cl_mt_seed(g, (uint32_t)seed);
	for (int64_t i = 0; i < n; i++) {
		mask[i] = cl_mt_double(g) >= ratio;
		vnpu_elem_set_f(m, type, i, mask[i] ? scale : 0.0f);
	}
	free(g);
	st = cs_add_const(s, type, rank, dims, m, &mv);
	if (st) {
		free(mask);
		return st;
	}
	st = cl_binary(s, VNPU_BIN_MUL, IN(op, 0), mv, op->out[0]);
	if (st || op->num_out < 2 || op->out[1] < 0) {
		free(mask);
		return st;
	}
	st = cs_add_const(s, VNPU_TYPE_BOOL, rank, dims, mask, &bv);
	return st ? st : cl_copy(s, ct_dense(s, op->out[1]), ct_dense(s, bv));
}

/*
 * Dropout: the identity (mask all true) unless in training mode with a
 * ratio above 0; then it needs its seed attribute, as a random Dropout
 * cannot be reproduced.
 */
vnpu_status cl_lower_dropout(struct cstate *s, struct cop *op)
{
	int32_t r = IN(op, 1), t = IN(op, 2);
	double ratio = r >= 0 ? const_scalar(s, r) : vnpu_attr_float(N(op), "ratio", 0.5f);
	double training = t >= 0 ? const_scalar(s, t) : 0;
	const struct vnpu_attr *seed = vnpu_node_attr(N(op), "seed");
	vnpu_status st;

	if (training == 0 || ratio == 0) {
		st = cl_copy(s, ct_dense(s, op->out[0]), ct_dense(s, IN(op, 0)));
		if (!st && op->num_out > 1 && op->out[1] >= 0)
			st = cl_fill(s, ct_dense(s, op->out[1]), 1);
		return st;
	}
	if (isnan(training))
		return UNSUP(s, "training_mode computed at run time");
	if (isnan(ratio))
		return UNSUP(s, "training mode with the ratio computed at run time");
	if (!(ratio > 0 && ratio < 1))
		return cs_fail(s, VNPU_INVALID_ARGUMENT, "ratio %g outside [0, 1)", ratio);
	if (!seed)
		return UNSUP(s, "training mode with a ratio above 0 and no seed (random dropout)");
	if (seed->type != VNPU_ATTR_INT || seed->i < 0 || seed->i > (int64_t)UINT32_MAX)
		return UNSUP(s, "seed outside 0 .. 2^32 - 1");
	return dropout_seeded(s, op, ratio, seed->i);
}

const struct lower_map cl_train_maps[] = {
	{ "Adagrad", lower_optimizer }, { "Momentum", lower_optimizer },
	{ "Adam", lower_optimizer },
};
const size_t cl_train_num_maps = sizeof(cl_train_maps) / sizeof(cl_train_maps[0]);

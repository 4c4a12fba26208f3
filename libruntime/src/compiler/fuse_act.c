// SPDX-License-Identifier: MIT
/*
 * Activations written out as element-wise nodes, as exporters write them
 * (HardSwish as x * Clip(x + 3, 0, 6) / 6, GELU as 0.5 * x * (1 +
 * Erf(x / sqrt 2)), SiLU as x * Sigmoid(x), ...), become the one UNARY
 * function they compute (a COP_ACT op), which the next pass may fuse into
 * the Conv or Gemm before it.
 *
 * A candidate is a subgraph ending at one op (the root): element-wise ops
 * of one f32 source x and scalar f32 constants, every value inside it of
 * x's shape and read by the subgraph only (no model output, no view). The
 * subgraph is evaluated in double at probe points spread over [-12, 12]
 * and compared with each function; it becomes the function when it
 * matches at every probe within a relative 1e-5, which holds for the
 * constants as exporters round them to f32 (sqrt(2) as 1.4142135) and for
 * no others the probes tell apart. Each function also asks for the ops it
 * is written with (an Erf for GELU, a Tanh for its tanh form...): a match
 * by values alone of piecewise-linear ops could hide a kink between two
 * probes, so HardSwish and HardSigmoid take only those ops.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "fuse.h"

/* The most ops one activation spans (GELU's tanh form written out: 10). */
#define ACT_MAX_OPS 16
/* A grid over [-12, 12] in steps of 0.3, then probe_extra[]. */
#define ACT_GRID 81
#define ACT_PROBES (ACT_GRID + 10)
#define ACT_TOL 1e-5

/* What an op of a candidate computes. */
enum act_op {
	AO_NONE = 0,
	AO_ADD, AO_SUB, AO_MUL, AO_DIV, AO_POW, AO_MAX, AO_MIN,
	AO_CLIP, AO_RELU, AO_NEG, AO_RECIP, AO_HARD_SIGMOID,	/* piecewise linear */
	AO_ERF, AO_TANH, AO_SIGMOID, AO_SOFTPLUS, AO_EXP, AO_LOG, AO_SQRT,
	AO_ACT,		/* a COP_ACT already recognised */
};

static const struct { const char *op; enum act_op ao; uint32_t ni; } act_ops[] = {
	{ "Add", AO_ADD, 2 }, { "Sub", AO_SUB, 2 }, { "Mul", AO_MUL, 2 },
	{ "Div", AO_DIV, 2 }, { "Pow", AO_POW, 2 }, { "Max", AO_MAX, 2 },
	{ "Min", AO_MIN, 2 }, { "Clip", AO_CLIP, 3 }, { "Relu", AO_RELU, 1 },
	{ "Neg", AO_NEG, 1 }, { "Reciprocal", AO_RECIP, 1 },
	{ "HardSigmoid", AO_HARD_SIGMOID, 1 }, { "Erf", AO_ERF, 1 },
	{ "Tanh", AO_TANH, 1 }, { "Sigmoid", AO_SIGMOID, 1 },
	{ "Softplus", AO_SOFTPLUS, 1 }, { "Exp", AO_EXP, 1 }, { "Log", AO_LOG, 1 },
	{ "Sqrt", AO_SQRT, 1 },
};

static enum act_op act_op_of(const struct cop *op)
{
	size_t i;

	if (op->dead || op->num_out != 1 || op->out[0] < 0)
		return AO_NONE;
	if (op->kind == COP_ACT)
		return AO_ACT;
	if (op->kind != COP_NODE || op->node->domain[0])
		return AO_NONE;
	for (i = 0; i < sizeof(act_ops) / sizeof(act_ops[0]); i++)
		if (!strcmp(op->node->op, act_ops[i].op))
			break;
	if (i == sizeof(act_ops) / sizeof(act_ops[0]))
		return AO_NONE;
	/* Clip's bounds are optional. */
	if (op->num_in == act_ops[i].ni || (act_ops[i].ao == AO_CLIP && op->num_in >= 1))
		return act_ops[i].ao;
	return AO_NONE;
}

/* A candidate: its ops (indices, ascending), the source and the root. */
struct act_graph {
	int32_t ops[ACT_MAX_OPS];
	enum act_op kinds[ACT_MAX_OPS];
	uint32_t n;
	int32_t x;
	int32_t root;
};

static bool graph_has(const struct act_graph *g, int32_t op)
{
	for (uint32_t i = 0; i < g->n; i++)
		if (g->ops[i] == op)
			return true;
	return false;
}

/* An f32 constant of one element that broadcasts to no larger shape
 * than @like's: its value in @v. */
static bool scalar_const(const struct cstate *s, int32_t val, int32_t like, double *v)
{
	const struct vnpu_tinfo *t;

	if (val < 0 || !cs_is_const(s, val))
		return false;
	t = cs_info(s, val);
	if (t->type != VNPU_TYPE_F32 || vnpu_tinfo_elems(t) != 1 ||
	    t->rank > cs_info(s, like)->rank)
		return false;
	*v = *(const float *)t->data;
	return isfinite(*v);
}

/*
 * The subgraph ending at @root with source @x: every value the ops read
 * is @x, a scalar constant or an output of another of them; false when
 * it is not one (another source, too many ops, an op not evaluated).
 */
static bool gather_graph(const struct cstate *s, const struct uses *u, int32_t root, int32_t x,
			 struct act_graph *g)
{
	int32_t stack[ACT_MAX_OPS * 3];	/* each op pushes its inputs' writers */
	uint32_t top = 0;
	double c;

	g->n = 0;
	g->x = x;
	g->root = root;
	stack[top++] = root;
	while (top) {
		int32_t i = stack[--top];
		const struct cop *op = &s->ops[i];
		enum act_op ao = act_op_of(op);
		uint32_t at;

		if (graph_has(g, i))
			continue;
		if (ao == AO_NONE || g->n == ACT_MAX_OPS ||
		    !cf_same_shape(cs_info(s, op->out[0]), cs_info(s, x)))
			return false;
		/* Keep the ops ascending: their order is the graph's. */
		for (at = g->n; at && g->ops[at - 1] > i; at--) {
			g->ops[at] = g->ops[at - 1];
			g->kinds[at] = g->kinds[at - 1];
		}
		g->ops[at] = i;
		g->kinds[at] = ao;
		g->n++;
		for (uint32_t k = 0; k < op->num_in; k++) {
			int32_t v = op->in[k], p;

			if (v < 0 || v == x || scalar_const(s, v, x, &c))
				continue;
			p = cf_producer(s, u, v);
			if (p < 0 || p >= i || s->vals[v].alias >= 0 || top == ACT_MAX_OPS * 3)
				return false;
			stack[top++] = p;
		}
	}
	return g->n >= 2;
}

/* Every value the ops of @g write, but the root's, is read by @g only. */
static bool graph_closed(const struct cstate *s, const struct uses *u, const struct act_graph *g,
			 bool *mine)
{
	bool ok = true;

	for (uint32_t i = 0; i < g->n; i++)
		mine[g->ops[i]] = true;
	for (uint32_t i = 0; ok && i < g->n; i++)
		if (g->ops[i] != g->root)
			ok = cf_only_read_by(s, u, s->ops[g->ops[i]].out[0], mine);
	for (uint32_t i = 0; i < g->n; i++)
		mine[g->ops[i]] = false;
	return ok;
}

static double hard_sigmoid(double v, double a, double b)
{
	return fmax(0.0, fmin(1.0, a * v + b));
}

/* One op of @g on its operand values @in. */
static double eval_op(const struct cop *op, enum act_op ao, const double *in)
{
	double a = in[0], b = in[1];

	switch (ao) {
	case AO_ADD: return a + b;
	case AO_SUB: return a - b;
	case AO_MUL: return a * b;
	case AO_DIV: return a / b;
	case AO_POW: return pow(a, b);
	case AO_MAX: return fmax(a, b);
	case AO_MIN: return fmin(a, b);
	case AO_CLIP: return fmin(fmax(a, in[1]), in[2]);
	case AO_RELU: return fmax(a, 0.0);
	case AO_NEG: return -a;
	case AO_RECIP: return 1.0 / a;
	case AO_HARD_SIGMOID:
		return hard_sigmoid(a, vnpu_attr_float(op->node, "alpha", 0.2f),
				    vnpu_attr_float(op->node, "beta", 0.5f));
	case AO_ERF: return erf(a);
	case AO_TANH: return tanh(a);
	case AO_SIGMOID: return 1.0 / (1.0 + exp(-a));
	case AO_SOFTPLUS: return log1p(exp(a));
	case AO_EXP: return exp(a);
	case AO_LOG: return log(a);
	case AO_SQRT: return sqrt(a);
	case AO_ACT:
		if (op->act.func == VNPU_ACT_HARD_SIGMOID) {
			float al, be;

			memcpy(&al, &op->act.alpha, sizeof(al));
			memcpy(&be, &op->act.beta, sizeof(be));
			return hard_sigmoid(a, al, be);
		}
		return NAN;	/* only HardSigmoid is a part of another */
	default:
		return NAN;
	}
}

/*
 * The kinks of HardSwish (-3 and 3) and HardSigmoid's default ones, then
 * magnitudes that tell a function from one equal to it on the grid only
 * (a Clip whose bounds lie outside the grid's values, another slope).
 */
static const double probe_extra[ACT_PROBES - ACT_GRID] = {
	-3, 3, -2.5, 2.5, -100, 100, -1e4, 1e4, -1e8, 1e8,
};

static double probe(uint32_t i)
{
	return i < ACT_GRID ? -12.0 + 0.3 * i : probe_extra[i - ACT_GRID];
}

/* @g at probe @p into @f; false when an operand is none of @g's. */
static bool eval_at(const struct cstate *s, const struct act_graph *g, uint32_t p, double *f)
{
	double val[ACT_MAX_OPS];

	for (uint32_t i = 0; i < g->n; i++) {
		const struct cop *op = &s->ops[g->ops[i]];
		double in[3] = { 0, 0, INFINITY };

		if (g->kinds[i] == AO_CLIP) {
			in[1] = -INFINITY;
			if (s->m->opset < 11)
				return false;
		}
		for (uint32_t k = 0; k < op->num_in; k++) {
			int32_t v = op->in[k];
			uint32_t j;

			if (v < 0) {
				if (k == 0 || g->kinds[i] != AO_CLIP)
					return false;
				continue;
			}
			if (v == g->x) {
				in[k] = probe(p);
				continue;
			}
			if (scalar_const(s, v, g->x, &in[k]))
				continue;
			for (j = 0; j < i && s->ops[g->ops[j]].out[0] != v; j++)
				;
			if (j == i)
				return false;
			in[k] = val[j];
		}
		val[i] = eval_op(op, g->kinds[i], in);
	}
	*f = val[g->n - 1];
	return true;
}

/* @g at every probe into @f. */
static bool eval_graph(const struct cstate *s, const struct act_graph *g, double *f)
{
	for (uint32_t p = 0; p < ACT_PROBES; p++)
		if (!eval_at(s, g, p, &f[p]))
			return false;
	return true;
}

static bool close_to(double f, double want)
{
	return fabs(f - want) <= ACT_TOL * (1.0 + fabs(want));
}

/* The ops of @g all among @allowed (bit per enum act_op), each of @needed
 * there at least once. */
static bool made_of(const struct act_graph *g, uint32_t allowed, uint32_t needed)
{
	uint32_t seen = 0;

	for (uint32_t i = 0; i < g->n; i++)
		seen |= 1u << g->kinds[i];
	return !(seen & ~allowed) && (seen & needed) == needed;
}

#define B(x) (1u << (x))
#define PIECEWISE_LINEAR (B(AO_ADD) | B(AO_SUB) | B(AO_MUL) | B(AO_DIV) | B(AO_MAX) | \
			  B(AO_MIN) | B(AO_CLIP) | B(AO_RELU) | B(AO_NEG) | B(AO_HARD_SIGMOID) | \
			  B(AO_ACT))
#define CLIPS (B(AO_MAX) | B(AO_MIN) | B(AO_CLIP) | B(AO_RELU) | B(AO_HARD_SIGMOID) | B(AO_ACT))
#define SMOOTH (B(AO_ADD) | B(AO_SUB) | B(AO_MUL) | B(AO_DIV) | B(AO_POW) | B(AO_NEG) | \
		B(AO_RECIP))

static double gelu(double v)
{
	return 0.5 * v * (1.0 + erf(v * M_SQRT1_2));
}

static double gelu_tanh(double v)
{
	return 0.5 * v * (1.0 + tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
}

static double silu(double v)
{
	return v / (1.0 + exp(-v));
}

static double mish(double v)
{
	return v * tanh(log1p(exp(v)));
}

static double hard_swish(double v)
{
	return v * hard_sigmoid(v, 1.0 / 6, 0.5);
}

static const struct act_fn {
	uint32_t func;
	double (*fn)(double v);
	uint32_t allowed, needed;
	const char *name;
} act_fns[] = {
	{ VNPU_ACT_HARD_SWISH, hard_swish, PIECEWISE_LINEAR, 0, "HardSwish" },
	{ VNPU_ACT_GELU, gelu, SMOOTH | B(AO_ERF), B(AO_ERF), "Gelu" },
	{ VNPU_ACT_GELU_TANH, gelu_tanh, SMOOTH | B(AO_TANH), B(AO_TANH), "GeluTanh" },
	{ VNPU_ACT_SILU, silu, SMOOTH | B(AO_SIGMOID), B(AO_SIGMOID), "SiLU" },
	{ VNPU_ACT_MISH, mish, SMOOTH | B(AO_TANH) | B(AO_SOFTPLUS) | B(AO_EXP) | B(AO_LOG),
	  B(AO_TANH), "Mish" },
};

/* Some op of @g clips: a HardSigmoid is no straight line. */
static bool clipped(const struct act_graph *g)
{
	for (uint32_t i = 0; i < g->n; i++)
		if (CLIPS & B(g->kinds[i]))
			return true;
	return false;
}

/* @f is a HardSigmoid: its alpha and beta from two probes inside (0, 1). */
static bool fit_hard_sigmoid(const double *f, struct vnpu_layer_act *act)
{
	int32_t lo = -1, hi = -1;
	float al, be;

	for (uint32_t p = 0; p < ACT_GRID; p++) {
		if (f[p] > 0.01 && f[p] < 0.99) {
			lo = lo < 0 ? (int32_t)p : lo;
			hi = (int32_t)p;
		}
	}
	if (lo < 0 || hi == lo)
		return false;
	al = (float)((f[hi] - f[lo]) / (probe(hi) - probe(lo)));
	be = (float)(f[lo] - al * probe(lo));
	if (!isfinite(al) || !isfinite(be) || al == 0)
		return false;
	for (uint32_t p = 0; p < ACT_PROBES; p++)
		if (!close_to(f[p], hard_sigmoid(probe(p), al, be)))
			return false;
	act->func = VNPU_ACT_HARD_SIGMOID;
	act->alpha = f32_bits(al);
	act->beta = f32_bits(be);
	return true;
}

/* Whether @g is written with the ops of act_fns[@i] (the piecewise-linear
 * ones clip somewhere). */
static bool written_as(const struct act_graph *g, size_t i)
{
	return made_of(g, act_fns[i].allowed, act_fns[i].needed) &&
	       (act_fns[i].needed || clipped(g));
}

/* Probes at the grid's two ends, tried before the whole grid. */
static const uint32_t first_probes[] = { 0, ACT_GRID - 1 };

/*
 * Whether @g can be any function it is written as, from its values at
 * first_probes[] alone: most graphs (a residual Add and a Relu, say) are
 * none, and a model of many element-wise ops compiles in a few probes
 * per graph instead of every probe.
 */
static bool plausible(const struct cstate *s, const struct act_graph *g, bool hard_sigmoid)
{
	double f[sizeof(first_probes) / sizeof(first_probes[0])];
	size_t i, p, n = sizeof(f) / sizeof(f[0]);

	for (p = 0; p < n; p++)
		if (!eval_at(s, g, first_probes[p], &f[p]))
			return false;
	for (i = 0; i < sizeof(act_fns) / sizeof(act_fns[0]); i++) {
		if (!written_as(g, i))
			continue;
		for (p = 0; p < n && close_to(f[p], act_fns[i].fn(probe(first_probes[p]))); p++)
			;
		if (p == n)
			return true;
	}
	/* A HardSigmoid's values lie in [0, 1]. */
	for (p = 0; hard_sigmoid && p < n && f[p] >= -ACT_TOL && f[p] <= 1 + ACT_TOL; p++)
		;
	return hard_sigmoid && p == n;
}

/*
 * The function @g computes, if it is one of act_fns[] or a HardSigmoid.
 * A graph written with the ops of none (a run of Adds, say) is not
 * evaluated: a model of many element-wise nodes compiles in time linear
 * in them.
 */
static const char *match_graph(const struct cstate *s, const struct act_graph *g,
			       struct vnpu_layer_act *act)
{
	bool hard_sigmoid = made_of(g, PIECEWISE_LINEAR, 0) && clipped(g), any = hard_sigmoid;
	double f[ACT_PROBES];

	memset(act, 0, sizeof(*act));
	for (size_t i = 0; i < sizeof(act_fns) / sizeof(act_fns[0]); i++)
		any = any || written_as(g, i);
	if (!any || !plausible(s, g, hard_sigmoid) || !eval_graph(s, g, f))
		return NULL;
	for (size_t i = 0; i < sizeof(act_fns) / sizeof(act_fns[0]); i++) {
		const struct act_fn *a = &act_fns[i];
		uint32_t p = 0;

		if (!written_as(g, i))
			continue;
		while (p < ACT_PROBES && close_to(f[p], a->fn(probe(p))))
			p++;
		if (p == ACT_PROBES) {
			act->func = a->func;
			return a->name;
		}
	}
	if (hard_sigmoid && fit_hard_sigmoid(f, act))
		return "HardSigmoid";
	return NULL;
}

/* The op at @root becomes the activation @act of @g's source. */
static vnpu_status rewrite(struct cstate *s, struct uses *u, const struct act_graph *g,
			   const struct vnpu_layer_act *act, const char *name)
{
	struct cop *root = &s->ops[g->root];

	for (uint32_t i = 0; i < g->n; i++) {
		if (g->ops[i] == g->root)
			continue;
		s->ops[g->ops[i]].dead = true;
		s->ops[g->ops[i]].fused_into = g->root;
	}
	root->kind = COP_ACT;
	root->act = *act;
	root->in[0] = g->x;
	root->num_in = 1;
	snprintf(root->type, sizeof(root->type), "%s", name);
	return cf_uses_add(s, u, false, g->x, root);
}

/* Room for the sources of one root: each op of its ancestry reads at most
 * three values. */
#define ACT_MAX_SOURCES (ACT_MAX_OPS * 3)

/*
 * The sources to try for the subgraph ending at op @root: the
 * non-constant values its element-wise ancestors (up to ACT_MAX_OPS of
 * them) read, in @out, the furthest (earliest made) first so that the
 * largest match wins; returns how many.
 */
static uint32_t sources(const struct cstate *s, const struct uses *u, int32_t root, int32_t *out)
{
	int32_t ops[ACT_MAX_OPS], made[ACT_MAX_SOURCES];
	uint32_t n = 0, seen = 0, num = 0;
	double c;

	ops[n++] = root;
	while (seen < n) {
		const struct cop *op = &s->ops[ops[seen++]];

		for (uint32_t i = 0; i < op->num_in; i++) {
			int32_t v = op->in[i], p;
			uint32_t k;

			if (v < 0 || scalar_const(s, v, op->out[0], &c))
				continue;
			for (k = 0; k < num && out[k] != v; k++)
				;
			if (k < num)
				continue;
			p = cf_producer(s, u, v);
			/* Insert by producer, inputs and constants (-1) first. */
			for (k = num++; k && made[k - 1] > p; k--) {
				out[k] = out[k - 1];
				made[k] = made[k - 1];
			}
			out[k] = v;
			made[k] = p;
			for (k = 0; p >= 0 && k < n && ops[k] != p; k++)
				;
			if (p >= 0 && k == n && n < ACT_MAX_OPS && act_op_of(&s->ops[p]) != AO_NONE)
				ops[n++] = p;
		}
	}
	return num;
}

vnpu_status cf_fuse_activations(struct cstate *s, struct uses *u)
{
	bool *mine = calloc(s->num_ops + 1, sizeof(*mine));
	vnpu_status st = VNPU_OK;

	if (!mine)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	for (uint32_t i = 0; !st && i < s->num_ops; i++) {
		int32_t src[ACT_MAX_SOURCES];
		uint32_t n;

		if (act_op_of(&s->ops[i]) == AO_NONE || act_op_of(&s->ops[i]) == AO_ACT ||
		    s->vals[s->ops[i].out[0]].info.type != VNPU_TYPE_F32)
			continue;
		n = sources(s, u, (int32_t)i, src);
		for (uint32_t k = 0; k < n; k++) {
			struct act_graph g;
			struct vnpu_layer_act act;
			const char *name;

			s->cur_op = i;
			if (s->vals[src[k]].info.type != VNPU_TYPE_F32 ||
			    !gather_graph(s, u, (int32_t)i, src[k], &g) ||
			    !graph_closed(s, u, &g, mine))
				continue;
			name = match_graph(s, &g, &act);
			if (name) {
				st = rewrite(s, u, &g, &act, name);
				break;
			}
		}
	}
	free(mine);
	return st;
}

/* SPDX-License-Identifier: MIT */
/*
 * Internal to the lowering files (lower*.c): shorthands over the working
 * graph, and the per-file tables of ops each file lowers.
 */
#ifndef VNPU_SRC_COMPILER_LOWER_H
#define VNPU_SRC_COMPILER_LOWER_H

#include "cgraph.h"
#include "error.h"

#define UNSUP(s, ...) cs_fail((s), VNPU_UNSUPPORTED, __VA_ARGS__)

static inline const struct vnpu_node *N(const struct cop *op)
{
	return op->node;
}

/* Input @i of @op, or -1 when absent. */
static inline int32_t IN(const struct cop *op, uint32_t i)
{
	return i < op->num_in ? op->in[i] : -1;
}

/*
 * INFO() points into the value table, which every added value (cs_add_temp(),
 * cs_add_const() and whatever calls them: cl_cast(), cl_const_scalar(),
 * cl_gather_steps(), cl_pack_gemm_b(), ...) may move. A pointer from INFO()
 * must not be read after such a call. The idiom: a lowering that adds values
 * copies the infos it reads up front and reads the copies,
 *
 *	const struct vnpu_tinfo xinfo = *INFO(s, x), *xi = &xinfo;
 *
 * (a copy's data, a constant's own block, stays valid), or calls INFO()
 * again after the add. The same holds for &s->vals[i], for ops from
 * cs_add_op() and commands from cs_add_cmd(). VNPU_DEBUG_CS_MOVE=1 makes
 * every add move its table (cstate.c), so tests catch a stale pointer.
 */
static inline const struct vnpu_tinfo *INFO(const struct cstate *s, int32_t v)
{
	return cs_info(s, v);
}

static inline int32_t rank_of(const struct cstate *s, int32_t v)
{
	return INFO(s, v)->rank;
}

struct lower_map {
	const char *op;
	vnpu_status (*fn)(struct cstate *s, struct cop *op);
};

/* lower_nn.c: Gemm, MatMul, Conv, pooling, normalizations, reductions,
 * resize, pad, gathers, losses. lower_data.c: copies and index work. */
extern const struct lower_map cl_nn_maps[];
extern const size_t cl_nn_num_maps;
/* lower_train.c: the ai.onnx.preview.training optimizers. */
extern const struct lower_map cl_train_maps[];
extern const size_t cl_train_num_maps;
/* Dropout (of the default domain): the identity, or seeded training mode. */
vnpu_status cl_lower_dropout(struct cstate *s, struct cop *op);

/*
 * The seeded generator of training-mode Dropout, by definition: MT19937
 * (Matsumoto and Nishimura, 1998) with the 32-bit seed spread over its 624
 * words by x[i] = 1812433253 * (x[i-1] ^ (x[i-1] >> 30)) + i, and each draw
 * a double in [0, 1) made of 53 bits of two outputs a and b:
 * ((a >> 5) * 2^26 + (b >> 6)) / 2^53. This is the stream of numpy's
 * RandomState after np.random.seed(seed), which ONNX's reference Dropout
 * draws its mask from, so a seeded Dropout gives the same mask anywhere.
 */
#define CL_MT_N 624

struct cl_mt19937 {
	uint32_t x[CL_MT_N];
	uint32_t next;		/* index of the next word; CL_MT_N: twist first */
};

void cl_mt_seed(struct cl_mt19937 *g, uint32_t seed);
uint32_t cl_mt_u32(struct cl_mt19937 *g);
double cl_mt_double(struct cl_mt19937 *g);
extern const struct lower_map cl_data_maps[];
extern const size_t cl_data_num_maps;

/* A constant int list from attribute @attr or input @idx; -1 when not
 * constant; @present says whether either is there. */
int32_t cl_const_ints(const struct cstate *s, const struct cop *op, const char *attr,
		      uint32_t idx, int64_t *vals, int32_t max, bool *present);
/* Slice's first index along an axis of @len elements for @start (ONNX's
 * clamping; negative counts from the end) and a @step that is not 0. */
int64_t cl_slice_start(int64_t start, int64_t len, int64_t step);

#endif /* VNPU_SRC_COMPILER_LOWER_H */

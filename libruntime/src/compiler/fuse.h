/* SPDX-License-Identifier: MIT */
/*
 * Internal to the compiler's passes (passes.c, fuse_act.c, fuse_norm.c):
 * who reads and writes each value of the working graph, and the queries
 * a fusion asks of it.
 */
#ifndef VNPU_SRC_COMPILER_FUSE_H
#define VNPU_SRC_COMPILER_FUSE_H

#include <string.h>

#include "cgraph.h"

/*
 * Per value, lists of the ops that read it (in[]) and write it (out[]),
 * so that a pass asks about one value without walking every op. An entry
 * is added when an op starts reading or writing a value and never
 * removed: a query skips dead ops and ops that no longer read (write) the
 * value, and answers as a walk over every op would.
 */
struct use_link {
	int32_t op;
	int32_t next;		/* the next link of the list, or -1 */
};

struct uses {
	struct use_link *links;
	uint32_t num_links, cap_links;
	int32_t *readers;	/* per value: its first reader link, or -1 */
	int32_t *writers;	/* per value: its first writer link, or -1 */
	bool *aliased;		/* per value: another value views it */
	uint32_t cap_vals;
};

static inline bool cf_op_is(const struct cop *op, const char *name)
{
	return op->kind == COP_NODE && !strcmp(op->node->op, name);
}

/* Op @op (now) reads (@write false) or writes value @val. */
vnpu_status cf_uses_add(struct cstate *s, struct uses *u, bool write, int32_t val,
			const struct cop *op);
/* The index of a live op other than @skip reading @val, or -1. */
int32_t cf_live_reader(const struct cstate *s, const struct uses *u, int32_t val, int32_t skip);
/* Index of the live op writing @val (or what @val views), or -1 (inputs
 * and constants); the first one should several. */
int32_t cf_producer(const struct cstate *s, const struct uses *u, int32_t val);
bool cf_same_shape(const struct vnpu_tinfo *a, const struct vnpu_tinfo *b);
/* @val is f32 and no model output, nothing views it and no live op but
 * those marked in @mine (per op index) reads it. */
bool cf_only_read_by(const struct cstate *s, const struct uses *u, int32_t val,
		     const bool *mine);

/* ---- fuse_act.c ---- */
/* Element-wise subgraphs that compute one activation become that
 * activation (COP_ACT). */
vnpu_status cf_fuse_activations(struct cstate *s, struct uses *u);

/* ---- fuse_norm.c ---- */
/* LayerNormalization written out becomes the NORM layer. */
vnpu_status cf_fuse_layer_norms(struct cstate *s, struct uses *u);

/* ---- fuse_attn.c ---- */
/* MatMul -> [Div or Mul] -> [Add mask] -> Softmax -> MatMul, with the
 * Transposes around it, becomes the ATTENTION layer (COP_ATTN). */
vnpu_status cf_fuse_attention(struct cstate *s, struct uses *u);

/* ---- fuse_chain.c ---- */
/* Element-wise ops feeding each other become one CHAIN layer (COP_CHAIN). */
vnpu_status cf_fuse_chains(struct cstate *s, struct uses *u);

/* ---- fuse_upsample.c ---- */
/* A nearest Resize by integer factors read by one Add only runs inside
 * that Add (cop.up_input). */
vnpu_status cf_fuse_upsamples(struct cstate *s, struct uses *u);

/* ---- fuse_qdq.c ---- */
/* DequantizeLinear -> Conv [-> Relu] -> QuantizeLinear groups become
 * QLINEAR_CONV layers, DequantizeLinear x 2 -> Add [-> Relu] ->
 * QuantizeLinear ones QLINEAR_ADD layers (cop.qlinear). */
vnpu_status cf_fuse_qdq(struct cstate *s, struct uses *u);
/* DequantizeLinear -> element-wise f32 ops -> QuantizeLinear groups, per
 * tensor, become LOOKUP layers (cop.qlinear on the QuantizeLinear); after
 * the activation and chain fusions, whose ops they take. */
vnpu_status cf_fuse_qdq_tables(struct cstate *s, struct uses *u);

#endif /* VNPU_SRC_COMPILER_FUSE_H */

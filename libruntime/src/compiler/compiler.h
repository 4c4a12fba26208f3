/* SPDX-License-Identifier: MIT */
/*
 * Internal: the compiler, from a vnpu_model to a vnpu_program.
 *
 * Pipeline: every input shape must be static; type/shape inference runs
 * again with constant folding of everything computable from constants;
 * If nodes with a data-dependent condition become both branches and a
 * select; identity/dropout/reshape-like nodes become views of their input,
 * a Gather of one constant index, a Slice of steps 1 or a Split output
 * that is one run of bytes of the input a view of it; activations
 * written out as element-wise nodes become the one function they compute
 * (fuse_act.c), LayerNormalization written out the NORM layer
 * (fuse_norm.c); BatchNorm folds into the Conv/Gemm before it; a constant
 * bias, a residual Add and an activation fuse into Conv/Gemm; element-wise
 * ops that feed each other become one CHAIN layer (fuse_chain.c); a Concat's
 * inputs are computed
 * in place in its output where it holds each in one run of bytes (a
 * Scan's stacked outputs). Each remaining node is then
 * lowered to device commands (VNPU_CMD_LAYER, COPY, FILL); constant
 * operands go to the weights (slot 0), Gemm/Conv weights pre-packed for
 * the engine; intermediates are placed in the arena (slot 1) by a
 * liveness-based planner; commands are grouped in segments per target.
 */
#ifndef VNPU_SRC_COMPILER_H
#define VNPU_SRC_COMPILER_H

#include <stdbool.h>
#include <stdint.h>

#include <vnpu/vnpu_model.h>

#include "program.h"

/* Alignment of every buffer in the arena and the weights. */
#define VNPU_COMPILE_ALIGN 64

/**
 * struct vnpu_compile_options - what the compile targets
 * @primary_layer_ops: bit n set: the primary device takes layer op n
 *	(enum vnpu_layer_op); 0 means every op the engine has
 * @primary_dtypes: bit n set: the primary device takes element type n
 *	(vnpu_element_type) in any tensor; 0 means every type
 * @allow_fallback: nodes the primary does not take run on the CPU
 *	(segments with target VNPU_TARGET_FALLBACK); without it such a node
 *	is an error
 * @strict: even with @allow_fallback, a node that needs the fallback is an
 *	error (HETERO's strict property)
 * @no_packing: keep weights row-major (for tests and debugging)
 * @no_fusion: skip the BatchNorm-folding and fusion passes, and copy every
 *	Concat's inputs
 * @inference_precision: UNDEFINED (the default) or F32: weights as the
 *	model has them; F16 or BF16: the constant weights of Gemm, MatMul and
 *	Conv packed in that type (half the bytes), the sums still in f32;
 *	any other type is VNPU_INVALID_ARGUMENT
 * @own_plan: also emit the program's command stream with every arena
 *	buffer in bytes of its own (struct vnpu_program's @own_cmd), for a
 *	device that picks one of the two plans as it runs (the CPU device of
 *	two or more tiles); only for a program of one segment whose own
 *	plan's arena is within VNPU_OWN_ARENA_MAX and VNPU_OWN_ARENA_RATIO
 *	times the greedy plan's, or VNPU_OWN_ARENA_SMALL
 */
struct vnpu_compile_options {
	uint64_t primary_layer_ops;
	uint64_t primary_dtypes;
	bool allow_fallback;
	bool strict;
	bool no_packing;
	bool no_fusion;
	vnpu_element_type inference_precision;
	bool own_plan;
};

/*
 * The bound on the own-bytes plan's arena. It costs the pages a run of
 * that plan touches, and the plan pays where the greedy plan's reuse is
 * the cost (the tiles apart): resnet50's own arena is 6.3 times the
 * greedy one (45.5 MB against 7.2), yolov8n's 7.3 (80 against 11.0),
 * dbnet's 4.0, mobilenetv3_large's 5.0; BERT's, 24 times (58 MB against
 * 2.4), and mobilenetv3_large_qdq's, 11.8, would mostly stream from DRAM
 * what the greedy plan keeps in L2/L3, so they have none. A small arena
 * (openWakeWord's, the node tests') costs nothing either way.
 */
#define VNPU_OWN_ARENA_MAX (UINT64_C(256) << 20)
#define VNPU_OWN_ARENA_RATIO 8
#define VNPU_OWN_ARENA_SMALL (UINT64_C(1) << 20)
/* Each own buffer starts on a page of its own. */
#define VNPU_OWN_ALIGN 4096

/* Compile @m (not modified). @o may be NULL for the defaults. */
vnpu_status vnpu_compile(const struct vnpu_model *m, const struct vnpu_compile_options *o,
			 struct vnpu_program **out);

/* Where query_model puts one node of the main graph. */
enum vnpu_query_place {
	VNPU_QUERY_PRIMARY = 0,		/* the primary device takes it */
	VNPU_QUERY_FALLBACK = 1,	/* only the CPU fallback takes it */
	VNPU_QUERY_FOLDED = 2,		/* computed at compile time or a view: no device work */
	VNPU_QUERY_NONE = 3,		/* nothing takes it: see reason */
};

struct vnpu_query_node {
	const char *name;		/* the node's name (the model's string) */
	const char *op;
	enum vnpu_query_place place;
	char reason[160];		/* why not PRIMARY ("" when it is) */
};

struct vnpu_query_result {
	uint32_t num_nodes;
	struct vnpu_query_node *nodes;	/* one per node of the main graph, in order */
};

/*
 * For each node of @m's main graph, which device takes it or why none
 * does. With dynamic input dimensions, a node whose shapes stay unknown is
 * answered by its op type. Fails only for what makes a whole model
 * unusable; a node no device takes is an entry.
 * Free the result with vnpu_query_result_free(); valid while @m lives.
 */
vnpu_status vnpu_query_model(const struct vnpu_model *m, const struct vnpu_compile_options *o,
			     struct vnpu_query_result **out);
void vnpu_query_result_free(struct vnpu_query_result *r);

/* ---- the arena planner, exposed for its tests ---- */

/**
 * struct vnpu_plan_buf - one buffer to place
 * @size: bytes (0 takes no room)
 * @first: index of the step that writes it first
 * @last: index of the step that reads it last (>= @first)
 * @offset: returned: its offset in the arena, a multiple of the alignment
 */
struct vnpu_plan_buf {
	uint64_t size;
	uint32_t first;
	uint32_t last;
	uint64_t offset;
};

/*
 * Place @n buffers so that no two whose [first, last] intervals intersect
 * overlap in memory; returns the arena size (0 when @n is 0). Greedy by
 * size, each at the lowest gap left by the buffers already placed, or a
 * sweep by first step when that one packs tighter.
 */
uint64_t vnpu_plan_arena(struct vnpu_plan_buf *bufs, uint32_t n, uint64_t align);

#endif /* VNPU_SRC_COMPILER_H */

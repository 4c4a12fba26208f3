/* SPDX-License-Identifier: MIT */
/*
 * Internal to the compiler's graph building (build.c, unroll.c,
 * sequence.c): the walk over a model and its helpers.
 */
#ifndef VNPU_SRC_COMPILER_BUILD_H
#define VNPU_SRC_COMPILER_BUILD_H

#include "cgraph.h"

/*
 * The walk maps each model value to the working value that holds it: the
 * value of the same index in the main graph, a fresh value per iteration
 * inside a loop body (whose nodes are instantiated once per iteration).
 */
struct walk {
	int32_t *map;		/* model value -> working value */
	uint32_t depth;		/* loop bodies around the node walked */
	struct vnpu_work work;	/* the compile's node visits: inference, then walk */
};

/* Values each iteration of a loop needs kept: the carried ones, and the
 * scan outputs of every iteration. */
struct unroll {
	const struct vnpu_node *n;
	const struct vnpu_graph *body;
	uint32_t first_out;		/* body outputs before the carried ones */
	uint32_t num_carried, num_scan;
	int32_t *carried;
	int32_t *scans;			/* [iters][num_scan] */
	uint32_t iters, cap;
};

/* ---- build.c ---- */
vnpu_status cb_walk_graph(struct cstate *s, struct walk *w, const struct vnpu_graph *g);
/* A node the compiler made (cs_add_synth), inferred and added as an op
 * into a new value @out. */
vnpu_status cb_add_synth(struct cstate *s, struct vnpu_node *n, const int32_t *in,
			 int32_t *out);
/* Constants: @n i64 values (rank 0 or 1), an i64 or bool scalar. */
vnpu_status cb_const_i64(struct cstate *s, int32_t rank, const int64_t *vals, int64_t n,
			 int32_t *out);
vnpu_status cb_const_scalar(struct cstate *s, vnpu_element_type type, int64_t v, int32_t *out);
vnpu_status cb_set_axis(struct vnpu_node *n, int64_t axis);
vnpu_status cb_concat(struct cstate *s, const struct vnpu_node *like,
		      const int32_t *parts, uint32_t n, int64_t axis, int32_t *out);
/* Value @x at @index along @axis (the axis removed). */
vnpu_status cb_pick(struct cstate *s, const struct vnpu_node *like, int32_t x, int64_t axis,
		    int64_t index, int32_t *out);
/* @n values @parts (@stride apart) stacked along a new axis @axis. */
vnpu_status cb_stack(struct cstate *s, const struct vnpu_node *like, const int32_t *parts,
		     uint32_t n, uint32_t stride, int64_t axis, bool reverse, int32_t *out);

/* ---- conv3d.c ---- */
/* Whether @n (inputs @in) is a 3-D Conv, which cb_conv3d() builds. */
bool cb_is_conv3d(const struct cstate *s, const struct vnpu_node *n, const int32_t *in);
/* 3-D Conv @n of working values @in from 2-D ones, charged to @work: its
 * output in @out. */
vnpu_status cb_conv3d(struct cstate *s, struct vnpu_work *work, const struct vnpu_node *n,
		      const int32_t *in, int32_t *out);

/* ---- unroll.c ---- */
vnpu_status cb_unroll_init(struct unroll *u, const struct vnpu_node *n,
			   const struct vnpu_graph *body, uint32_t first_out,
			   uint32_t num_carried, const int32_t *init);
/* One iteration: the body instantiated on the values @in of its inputs. */
vnpu_status cb_unroll_once(struct cstate *s, struct walk *w, struct unroll *u,
			   const int32_t *in);
void cb_unroll_fini(struct unroll *u);
/* Loop and Scan on the working values @in; @results gets their outputs. */
vnpu_status cb_unroll_loop(struct cstate *s, struct walk *w, const struct vnpu_node *n,
			   const int32_t *in, int32_t *results);
vnpu_status cb_unroll_scan(struct cstate *s, struct walk *w, const struct vnpu_node *n,
			   const int32_t *in, int32_t *results);

/* ---- sequence.c ---- */
/* Whether @v is a tensor (or absent), not a sequence or NONE. */
bool cb_is_tensor(const struct cstate *s, int32_t v);
bool cb_is_sequence_op(const char *op);
vnpu_status cb_walk_sequence_op(struct cstate *s, struct walk *w, const struct vnpu_node *n,
				const int32_t *in);

#endif /* VNPU_SRC_COMPILER_BUILD_H */

/* SPDX-License-Identifier: MIT */
/* Internal to infer.c and infer_nn.c: one node's inference context. */
#ifndef VNPU_SRC_MODEL_INFER_PRIV_H
#define VNPU_SRC_MODEL_INFER_PRIV_H

#include <stdbool.h>
#include <stddef.h>

#include "ir.h"

struct ictx {
	const struct vnpu_model *m;
	const struct vnpu_node *n;
	struct vnpu_tinfo *const *in;
	struct vnpu_tinfo *const *out;
	int64_t fold_limit;
	bool *over_limit;	/* set by inf_limit(), or NULL */
	struct vnpu_work *work;
};

struct op_infer {
	const char *op;
	vnpu_status (*fn)(struct ictx *c);
};

/* The ops infer_nn.c knows. */
extern const struct op_infer vnpu_infer_nn_ops[];
extern const size_t vnpu_infer_nn_num_ops;
/* The ops infer_data.c knows (output shapes that depend on values). */
extern const struct op_infer vnpu_infer_data_ops[];
extern const size_t vnpu_infer_data_num_ops;
/* Loop and Scan (infer_loop.c). */
extern const struct op_infer vnpu_infer_loop_ops[];
extern const size_t vnpu_infer_loop_num_ops;
/* The ai.onnx.preview.training ops (infer_data.c). */
extern const struct op_infer vnpu_infer_train_ops[];
extern const size_t vnpu_infer_train_num_ops;

#define FAIL(c, ...) inf_error((c), VNPU_PARSE_ERROR, __VA_ARGS__)

/* A failure naming the node. */
vnpu_status inf_error(const struct ictx *c, vnpu_status st, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/*
 * VNPU_UNSUPPORTED naming the node, for shapes past a limit of the device
 * (a rank above VNPU_MAX_RANK, more steps than are unrolled): the model
 * is fine, the device cannot run it, and a reshape that leads there is
 * refused (vnpu_graph_reinfer()).
 */
vnpu_status inf_limit(const struct ictx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static inline const struct vnpu_tinfo *IN(const struct ictx *c, uint32_t i)
{
	return i < c->n->num_inputs ? c->in[i] : NULL;
}

static inline int64_t opset(const struct ictx *c)
{
	return c->m->opset;
}

static inline void set_out(struct vnpu_tinfo *o, vnpu_element_type type, int32_t rank,
			   const int64_t *dims)
{
	o->type = type;
	o->rank = rank;
	for (int32_t d = 0; d < rank && d < VNPU_MAX_RANK; d++)
		o->dims[d] = dims ? dims[d] : VNPU_DIM_DYNAMIC;
}

static inline void copy_shape(struct vnpu_tinfo *o, const struct vnpu_tinfo *i,
			      vnpu_element_type type)
{
	set_out(o, type, i->rank, i->dims);
}

static inline int64_t norm_axis(int64_t axis, int32_t rank)
{
	return axis < 0 ? axis + rank : axis;
}

static inline bool has_data(const struct vnpu_tinfo *t)
{
	return t && t->data && vnpu_tinfo_static(t);
}

/* Every input present holds its values, and the node may fold. */
static inline bool inf_inputs_known(const struct ictx *c)
{
	if (c->fold_limit <= 0)
		return false;
	for (uint32_t i = 0; i < c->n->num_inputs; i++)
		if (c->in[i] && !has_data(c->in[i]))
			return false;
	return true;
}

/*
 * Subgraph @g of the node (an If branch, a loop body's iteration) inferred
 * into the model's table @infos, strictly, on the node's work budget.
 */
vnpu_status inf_subgraph(const struct ictx *c, const struct vnpu_graph *g,
			 struct vnpu_tinfo *infos);

/* Input @i present with a known type. */
vnpu_status inf_need(const struct ictx *c, uint32_t i);
/* @min to @max inputs, the first @min present with known types. */
vnpu_status inf_need_inputs(const struct ictx *c, uint32_t min, uint32_t max);
/* @axis (negative counts from the end) inside @rank, into @out. */
vnpu_status inf_check_axis(const struct ictx *c, int64_t axis, int32_t rank, int64_t *out);
/*
 * Input @i, when given and of a known rank, has rank @rank and, where both
 * are known, the dimensions @dims (VNPU_DIM_DYNAMIC: any); @what names it
 * in the message.
 */
vnpu_status inf_check_dims(const struct ictx *c, uint32_t i, const char *what, int32_t rank,
			   const int64_t *dims);
/*
 * Indices @idx into an axis of @len: when the axis is empty and there are
 * indices, none can be in range (ONNX makes that an error), whatever the
 * values, so the shapes are refused.
 */
vnpu_status inf_check_indexed(const struct ictx *c, const struct vnpu_tinfo *idx, int64_t len);
/*
 * GatherElements and ScatterElements: indices @idx of @x's rank reach along
 * @axis, and no further than @x in the other dimensions.
 */
vnpu_status inf_check_elements(const struct ictx *c, const struct vnpu_tinfo *x,
			       const struct vnpu_tinfo *idx, int64_t axis);
/* A known 1-D or scalar int tensor into @vals; -1 when unknown or longer. */
int32_t inf_read_ints(const struct vnpu_tinfo *t, int64_t *vals, int32_t max);
/* An int list from attribute @name or else input @idx (see inf_read_ints). */
int32_t inf_attr_ints(const struct ictx *c, const char *name, uint32_t idx, int64_t *vals,
		      int32_t max, bool *present);
/* Allocate @o's data when it is small enough to fold. */
bool inf_alloc_out(const struct ictx *c, struct vnpu_tinfo *o);
/* Numpy broadcasting of @a and @b into @rank/@dims. */
vnpu_status inf_broadcast(const struct ictx *c, const struct vnpu_tinfo *a,
			  const struct vnpu_tinfo *b, int32_t *rank, int64_t *dims);

#endif /* VNPU_SRC_MODEL_INFER_PRIV_H */

/* SPDX-License-Identifier: MIT */
/*
 * Internal to the compiler: the working graph a compile builds from a
 * model, and the device commands it lowers it to before memory is placed.
 */
#ifndef VNPU_SRC_COMPILER_CGRAPH_H
#define VNPU_SRC_COMPILER_CGRAPH_H

#include <drm/vnpu_cmd.h>
#include <drm/vnpu_layers.h>

#include "compiler.h"
#include "ir.h"

/*
 * The compiler writes a value's vnpu_element_type into a command tensor's
 * dtype unchanged: the two enums carry ONNX's TensorProto numbers, and
 * these must agree (the device has no STRING).
 */
#define CG_SAME_TYPE(t) \
	_Static_assert((int)VNPU_TYPE_##t == (int)VNPU_DTYPE_##t, #t " differs")
CG_SAME_TYPE(F32);
CG_SAME_TYPE(U8);
CG_SAME_TYPE(I8);
CG_SAME_TYPE(U16);
CG_SAME_TYPE(I16);
CG_SAME_TYPE(I32);
CG_SAME_TYPE(I64);
CG_SAME_TYPE(BOOL);
CG_SAME_TYPE(F16);
CG_SAME_TYPE(F64);
CG_SAME_TYPE(U32);
CG_SAME_TYPE(U64);
CG_SAME_TYPE(BF16);
#undef CG_SAME_TYPE

/* A model's shapes (public API) become command tensors' dims (uAPI). */
_Static_assert(VNPU_MAX_RANK == VNPU_MAX_DIMS, "the API's rank is the device's");

enum cval_storage {
	CV_NONE = 0,	/* not placed yet */
	CV_WEIGHT,	/* slot 0 */
	CV_ARENA,	/* slot 1 */
	CV_IO,		/* a model input or output slot */
};

/* One tensor of the working graph: the model's values, then temporaries. */
struct cval {
	const char *name;
	struct vnpu_tinfo info;		/* static shape; data for constants */
	int32_t alias;			/* the value whose storage this one views, or -1 */
	uint64_t alias_offset;		/* bytes into that storage where this one starts
					 * (a Concat's input computed in place, a run
					 * a Gather, Slice or Split picks) */
	enum cval_storage storage;
	uint32_t slot;
	uint64_t offset;		/* bytes into the slot */
	uint64_t own_offset;		/* in the arena's own-bytes plan (emit.c) */
	uint32_t first, last;		/* steps writing it first / reading it last */
	bool written;
	int32_t readers;		/* ops reading it */
	int32_t out_index;		/* model output index, or -1 */
};

enum cop_kind {
	COP_NODE = 0,	/* a model node */
	COP_SELECT,	/* an If's output: Where(cond, then, else) */
	COP_OUTPUT,	/* a copy into a model output's slot */
	COP_ACT,	/* an activation fuse_act.c recognised: UNARY act of in[0];
			 * node is the last node of what it computes */
	COP_CHAIN,	/* element-wise ops fuse_chain.c joined: CHAIN chain of
			 * in[], node the last of them (its out[0] is Y) */
	COP_ATTN,	/* attention fuse_attn.c recognised: ATTENTION of in[]
			 * (Q, KT, V, [mask]) into out[0], viewed by attn */
};

/* A COP_ATTN's views and attributes (fuse_attn.c). */
struct cop_attn {
	uint8_t perm[4][4];	/* Q, KT, V, Y: the layer's dim i is dim perm[i]
				 * of in[0], in[1], in[2], out[0] */
	uint32_t flags;		/* VNPU_ATTN_F_* */
	uint32_t scale;		/* f32 bits */
};

/* One node to run, with what the passes fused into it. */
struct cop {
	enum cop_kind kind;
	const struct vnpu_node *node;	/* COP_NODE, COP_SELECT (the If) */
	const struct vnpu_node *root;	/* the main-graph node it comes from (a
					 * loop's, an If's), for queries */
	uint32_t num_in, num_out;
#define COP_MAX_IO 64
	int32_t in[COP_MAX_IO];		/* value indices or -1 */
	int32_t out[COP_MAX_IO];
	bool dead;
	bool qlinear;			/* a QDQ Conv or Add group: in[] are
					 * QLinearConv's or QLinearAdd's */
	bool qres_first;		/* a QDQ Conv group with a QLinearAdd
					 * (in[9..13]): the residual is its A */
	int32_t fused_into;		/* a dead op: the op that runs it, or -1 (a view) */
	int32_t bias;			/* fused bias (a constant), or -1 */
	int32_t residual;		/* fused residual input, or -1 */
	int32_t up_input;		/* an Add: its in[] that a fused nearest Resize
					 * upsamples (fuse_upsample.c), or -1 */
	uint32_t up[VNPU_MAX_DIMS];	/* that Resize's integer factor per axis */
	struct vnpu_layer_act act;	/* fused activation (COP_ACT: the function) */
	struct vnpu_layer_chain chain;	/* COP_CHAIN: the steps */
	struct cop_attn attn;		/* COP_ATTN: the views */
	char type[64];			/* "Conv+Add+Relu" */
	uint32_t first_cmd, num_cmds;
	enum vnpu_prog_target target;
	char reason[160];		/* why not the primary, or why nothing */
};

/* A tensor operand before placement: a view into a value's storage. */
struct ctensor {
	int32_t val;
	vnpu_element_type type;
	int64_t off;			/* elements from the value's first */
	uint32_t rank;
	int64_t dims[VNPU_MAX_DIMS];
	int64_t strides[VNPU_MAX_DIMS];	/* elements */
};

struct ccmd {
	uint32_t opcode;		/* VNPU_CMD_* */
	uint32_t layer;			/* VNPU_LAYER_* */
	uint32_t num_tensors;
	uint32_t first_tensor;		/* its tensors: cstate.tensors[first_tensor...] */
	uint32_t attr_size;
	uint64_t attrs[32];		/* the op's attribute struct */
	uint64_t fill_value;
	uint32_t op;			/* index of the cop */
};

struct cstate {
	const struct vnpu_model *m;
	struct vnpu_compile_options opt;
	bool query;			/* record reasons, do not stop at a node */
	bool emit_own;			/* commands take the own-bytes plan's offsets */
	bool static_inputs;		/* every model input dimension known */
	struct cval *vals;
	uint32_t num_vals, cap_vals;
	struct cop *ops;
	uint32_t num_ops, cap_ops;
	struct ccmd *cmds;
	uint32_t num_cmds, cap_cmds;
	struct ctensor *tensors;	/* the commands' tensors, in their order */
	uint32_t num_tensors, cap_tensors;
	uint32_t cur_op;		/* the op being lowered */
	struct vnpu_node **synth;	/* nodes the passes made (loop unrolling) */
	uint32_t num_synth, cap_synth;
	/* The program's input ports: one per tensor of the model's inputs
	 * (each element of a sequence input). */
	int32_t *in_vals;
	uint32_t num_ins;
	/* The program's output ports: one per tensor of the model's outputs
	 * (each element of a sequence output; none for an empty optional). */
	int32_t *out_vals;		/* the working value a port is written from */
	char **out_names;
	uint32_t num_outs, cap_outs;
	struct vnpu_prog_group *groups;	/* outputs that are sequences or NONE */
	uint32_t num_groups;
	/*
	 * The weights arena: address space reserved for the program's
	 * weights (vnpu_program_weights_reserve()), where the packers make
	 * the large constants (cs_weights_alloc()) so that placing them
	 * copies nothing. Blocks go up from @wbase: the last one starts at
	 * @wlast and ends at @wtop, of @wcap bytes reserved. NULL until the
	 * first such constant, and after a failed reservation (@no_arena).
	 */
	uint8_t *wbase;
	uint64_t wlast, wtop, wcap;
	bool no_arena;
	/* VNPU_DEBUG_CS_MOVE: the blocks the last moves left, poisoned. */
#define CS_RETIRED 16
	void *retired[CS_RETIRED];
	uint32_t next_retired;
};

/* ---- cstate.c ---- */
vnpu_status cs_add_temp(struct cstate *s, vnpu_element_type type, int32_t rank,
			const int64_t *dims, int32_t *out);
vnpu_status cs_add_const(struct cstate *s, vnpu_element_type type, int32_t rank,
			 const int64_t *dims, void *data, int32_t *out);
vnpu_status cs_add_op(struct cstate *s, struct cop **out);
/*
 * @bytes of zeroed, 64-byte aligned memory for a constant the compiler
 * makes (cs_add_const() takes it): a large one in the weights arena, where
 * placement leaves it, others from calloc(). NULL when out of memory.
 * cs_weights_free() frees such a block (or any other cs_add_const() would
 * take); cs_weights_shrink() keeps its first @bytes (where the block now
 * is: an arena block stays, and the rest of it is zeroed for the next).
 */
void *cs_weights_alloc(struct cstate *s, uint64_t bytes);
void cs_weights_free(struct cstate *s, void *p);
void *cs_weights_shrink(struct cstate *s, void *p, uint64_t bytes);
bool cs_in_arena(const struct cstate *s, const void *p);
/* A node of op type @op (default domain) the compiler made, with @ni
 * inputs, @no outputs and no attributes yet, named after @like; the
 * state owns it. */
vnpu_status cs_add_synth(struct cstate *s, const char *op, const struct vnpu_node *like,
			 uint32_t ni, uint32_t no, struct vnpu_node **out);
void cs_free_synth(struct cstate *s);
/* The tables VNPU_DEBUG_CS_MOVE moved off (cstate.c). */
void cs_free_retired(struct cstate *s);
/* A command with room for @num_tensors tensors (cs_cmd_tensors()). */
struct ccmd *cs_add_cmd(struct cstate *s, uint32_t opcode, uint32_t num_tensors);
struct ctensor *cs_cmd_tensors(const struct cstate *s, const struct ccmd *c);
struct ctensor ct_dense(const struct cstate *s, int32_t val);
struct ctensor ct_shaped(const struct cstate *s, int32_t val, int32_t rank, const int64_t *dims);
/* @t broadcast (numpy, right-aligned, stride 0) to @rank/@dims. */
struct ctensor ct_broadcast(struct ctensor t, int32_t rank, const int64_t *dims);
void ct_dense_strides(struct ctensor *t);
const struct vnpu_tinfo *cs_info(const struct cstate *s, int32_t val);
bool cs_is_const(const struct cstate *s, int32_t val);
uint32_t f32_bits(float f);
void cs_strlcpy(char *dst, size_t size, const char *src);
vnpu_status cs_fail(struct cstate *s, vnpu_status st, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ---- build.c (with unroll.c, sequence.c), passes.c ---- */
vnpu_status cs_build(struct cstate *s);
vnpu_status cs_fuse(struct cstate *s);

/* ---- lower.c ---- */
vnpu_status cs_lower_op(struct cstate *s, struct cop *op);
/* Whether some lowering exists for op type @op (shapes aside). */
bool cl_has_lowering(const char *op);
/* The one UNARY function f32 node (or COP_ACT) @op lowers to, or false. */
bool cl_node_act(const struct cstate *s, const struct cop *op, struct vnpu_layer_act *a);
/* Append one command (layer @lop with its tensors and attributes, a copy,
 * a fill); element-wise helpers over whole dense values. */
vnpu_status cl_layer(struct cstate *s, uint32_t lop, const struct ctensor *t, uint32_t n,
		     const void *attrs, uint32_t attr_size);
vnpu_status cl_copy(struct cstate *s, struct ctensor dst, struct ctensor src);
vnpu_status cl_fill(struct cstate *s, struct ctensor dst, uint64_t value);
vnpu_status cl_unary(struct cstate *s, int32_t x, int32_t y, const struct vnpu_layer_act *a);
/* The same on views. */
vnpu_status cl_unary_t(struct cstate *s, const struct vnpu_layer_act *a, struct ctensor x,
		       struct ctensor y);
vnpu_status cl_binary_t(struct cstate *s, uint32_t func, struct ctensor a, struct ctensor b,
			struct ctensor y);
vnpu_status cl_binary(struct cstate *s, uint32_t func, int32_t a, int32_t b, int32_t y);
/* A Resize's or Upsample's constant scales as f32 bits per axis into
 * @scale (left as they are where the model gives none). */
void cl_resize_scales(const struct cstate *s, const struct cop *op, uint32_t *scale);
vnpu_status cl_where(struct cstate *s, int32_t c, int32_t x, int32_t y, int32_t z);
vnpu_status cl_cast(struct cstate *s, int32_t v, vnpu_element_type type, int32_t *out);
vnpu_status cl_const_scalar(struct cstate *s, vnpu_element_type type, double v, int32_t *out);
/* The same from an integer, exact for every int64 (an integer @type). */
vnpu_status cl_const_int(struct cstate *s, vnpu_element_type type, int64_t v, int32_t *out);
/* x's @len indices @idx (taken) along @axis, into a new temporary. */
vnpu_status cl_gather_at(struct cstate *s, int32_t x, int64_t axis, int64_t *idx, int64_t len,
			 int32_t *out);
/* x's indices start, start + step, ... (@len of them) along @axis, into a new temporary. */
vnpu_status cl_gather_steps(struct cstate *s, int32_t x, int64_t axis, int64_t start,
			    int64_t step, int64_t len, int32_t *out);
/* Conv/ConvInteger/QLinearConv attributes of @op for X @x, W @w, Y @y. */
vnpu_status cl_conv_attrs(struct cstate *s, const struct cop *op, int32_t x, int32_t w, int32_t y,
			  struct vnpu_layer_conv *attr);
/*
 * Constant B [K, N] (@trans: stored [N, K]) packed for GEMM into a new
 * constant: in the inference precision when @hinted (a model's weights),
 * else f32 (a matrix the compiler made, such as DFT's basis).
 */
vnpu_status cl_pack_gemm_b(struct cstate *s, int32_t bv, bool trans, bool hinted,
			   int32_t *out);

/* ---- lower_rnn.c, lower_quant.c, lower_einsum.c, lower_fourier.c ---- */
vnpu_status cl_lower_rnn(struct cstate *s, struct cop *op);
vnpu_status cl_lower_quantize(struct cstate *s, struct cop *op);
vnpu_status cl_lower_einsum(struct cstate *s, struct cop *op);
vnpu_status cl_lower_fourier(struct cstate *s, struct cop *op);

/* ---- fuse_attn.c ---- */
vnpu_status cl_lower_attention(struct cstate *s, struct cop *op);

/* ---- emit.c ---- */
vnpu_status cs_emit(struct cstate *s, struct vnpu_program **out);
/* The value whose storage @v lies in (itself, or what it views), with in
 * @offset the bytes into it where @v starts. */
int32_t cs_storage(const struct cstate *s, int32_t v, uint64_t *offset);

#endif /* VNPU_SRC_COMPILER_CGRAPH_H */

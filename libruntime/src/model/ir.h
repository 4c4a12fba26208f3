/* SPDX-License-Identifier: MIT */
/*
 * Internal: the graph IR a vnpu_model holds.
 *
 * Values (tensors) live in one table per model, named as in ONNX; nodes
 * refer to them by index. Subgraphs (If branches, Loop and Scan bodies)
 * are node lists over the same table, so a branch reads outer values by
 * index like any node; a body's inputs are values its node sets at every
 * iteration.
 * Each value carries a vnpu_tinfo: its element type, rank and dims as far
 * as inference knows them, and its data when it is a constant or was
 * computed from constants.
 */
#ifndef VNPU_SRC_MODEL_IR_H
#define VNPU_SRC_MODEL_IR_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include <vnpu/vnpu_model.h>

#define VNPU_NO_VALUE (-1)

/*
 * What a value holds. An optional with a value is that value (a tensor or
 * a sequence), an empty one is NONE: the device only sees tensors, so
 * sequences and optionals are resolved at compile time.
 */
enum vnpu_tkind {
	VNPU_TK_TENSOR = 0,
	VNPU_TK_SEQUENCE,	/* tensors that are other values (elems) */
	VNPU_TK_NONE,		/* an optional without a value */
};

/* What is known of one value: a tensor, or (kind) a sequence or none. */
struct vnpu_tinfo {
	vnpu_element_type type;		/* UNDEFINED when unknown; a sequence's elements' */
	int32_t rank;			/* -1 when unknown (always for a sequence) */
	int64_t dims[VNPU_MAX_RANK];	/* VNPU_DIM_DYNAMIC when unknown */
	void *data;			/* dense row-major contents, or NULL */
	bool owns_data;			/* data and elems are this tinfo's */
	enum vnpu_tkind kind;
	int32_t num_elems;		/* SEQUENCE: its length, -1 when unknown */
	int32_t *elems;			/* SEQUENCE: the values of its elements */
};

enum vnpu_value_kind {
	VNPU_VALUE_NODE = 0,	/* produced by a node */
	VNPU_VALUE_INPUT,	/* a model input */
	VNPU_VALUE_CONST,	/* an initializer */
	VNPU_VALUE_UNDEFINED,	/* named but never produced: an error */
};

struct vnpu_value {
	char *name;
	enum vnpu_value_kind kind;
	struct vnpu_tinfo info;
	vnpu_port_kind port_kind;	/* as declared, for model inputs and outputs */
	vnpu_element_type port_type;	/* the declared (element) type, or UNDEFINED */
};

/* Attribute types: ONNX's AttributeProto values. */
enum vnpu_attr_type {
	VNPU_ATTR_FLOAT = 1,
	VNPU_ATTR_INT = 2,
	VNPU_ATTR_STRING = 3,
	VNPU_ATTR_TENSOR = 4,
	VNPU_ATTR_GRAPH = 5,
	VNPU_ATTR_FLOATS = 6,
	VNPU_ATTR_INTS = 7,
	VNPU_ATTR_STRINGS = 8,
	VNPU_ATTR_TYPE_PROTO = 13,	/* read, its content not kept */
	VNPU_ATTR_TYPE_PROTOS = 14,
};

struct vnpu_graph;
struct vnpu_work;

struct vnpu_attr {
	char *name;
	enum vnpu_attr_type type;
	float f;
	int64_t i;
	char *s;			/* STRING, NUL-terminated */
	size_t n;			/* entries of floats/ints/strings */
	float *floats;
	int64_t *ints;
	char **strings;
	struct vnpu_tinfo t;		/* TENSOR, with its data */
	struct vnpu_graph *g;		/* GRAPH */
};

struct vnpu_node {
	char *name;			/* "" when unnamed */
	char *op;
	char *domain;			/* "" for the default domain */
	uint32_t num_inputs;
	uint32_t num_outputs;
	int32_t *inputs;		/* value index or VNPU_NO_VALUE */
	int32_t *outputs;
	uint32_t num_attrs;
	struct vnpu_attr *attrs;
};

struct vnpu_graph {
	uint32_t num_nodes;
	struct vnpu_node *nodes;	/* in topological order */
	uint32_t num_inputs;		/* model inputs; a loop body's per-iteration inputs */
	int32_t *inputs;
	uint32_t num_outputs;
	int32_t *outputs;
};

struct vnpu_model {
	uint32_t num_values;
	uint32_t cap_values;
	struct vnpu_value *values;
	struct vnpu_graph main;
	int64_t ir_version;
	int64_t opset;			/* of the default domain */
	char *dir;			/* folder of the file, for external data */
};

/* ---- attr_schema.c ---- */
/*
 * VNPU_PARSE_ERROR naming the node, the attribute and both types when an
 * attribute the library reads has another type than its op defines.
 */
vnpu_status vnpu_node_check_attrs(const struct vnpu_node *n);
/* Whether the table is in the order its lookup needs (a unit test). */
bool vnpu_attr_schema_sorted(void);

/*
 * ---- ir.c ----
 * Attribute readers: @dflt when the node has no attribute @name. The name
 * must be in attr_schema.c's table (frontend-attr-names checks): then a
 * read model's attribute has the type read, and another type is only a
 * node the compiler made wrongly (read as absent).
 */
const struct vnpu_attr *vnpu_node_attr(const struct vnpu_node *n, const char *name);
int64_t vnpu_attr_int(const struct vnpu_node *n, const char *name, int64_t dflt);
float vnpu_attr_float(const struct vnpu_node *n, const char *name, float dflt);
const char *vnpu_attr_str(const struct vnpu_node *n, const char *name, const char *dflt);

/* The most elements (and the largest dimension) a tensor may have. */
#define VNPU_MAX_ELEMS (1ll << 40)

/* Elements of a tinfo with a known static shape, or -1 (also when above
 * VNPU_MAX_ELEMS). */
int64_t vnpu_tinfo_elems(const struct vnpu_tinfo *t);
bool vnpu_tinfo_static(const struct vnpu_tinfo *t);
void vnpu_tinfo_clear(struct vnpu_tinfo *t);
/* @dst (cleared first) becomes a copy of @src with its own copy of the data. */
vnpu_status vnpu_tinfo_copy(struct vnpu_tinfo *dst, const struct vnpu_tinfo *src);
/* A tinfo as a vnpu_shape for the public API. */
void vnpu_tinfo_shape(const struct vnpu_tinfo *t, vnpu_shape *out);
/* "f32[1,3,?,?]" into @buf, for messages. */
const char *vnpu_tinfo_str(const struct vnpu_tinfo *t, char *buf, size_t size);

void vnpu_graph_fini(struct vnpu_graph *g);
/* ---- copy.c: a deep copy of @src (values, graph, subgraphs, data) ---- */
vnpu_status vnpu_model_copy(const struct vnpu_model *src, struct vnpu_model **out);
void vnpu_node_fini(struct vnpu_node *n);
void vnpu_attr_fini(struct vnpu_attr *a);

/*
 * vnpu_model_freeze_sequence() on tensors given as tinfos (type, static
 * shape, data; copied).
 */
vnpu_status vnpu_model_freeze_elems(struct vnpu_model *m, const char *name,
				    const struct vnpu_tinfo *elems, size_t count);

/* Infos to start an inference from: inputs and constants known, no more. */
struct vnpu_tinfo *vnpu_model_seed_infos(const struct vnpu_model *m);

/* Forget everything inferred and infer again from inputs and constants. */
vnpu_status vnpu_model_infer(struct vnpu_model *m);

/*
 * Opset < 7 broadcasting of @n's B (@b) over A (@a): a binary op with
 * broadcast=1 takes B along A's dimensions from its axis attribute on
 * (default: A's last ones), PRelu-6 a 1-D slope along axis 1 (channels).
 * 1 with @aligned B's shape for today's (numpy) broadcasting, 1s added
 * after its dimensions (rank -1 when a rank is unknown); 0 when @n
 * broadcasts as ONNX does today; -1 when B does not fit A there.
 */
int vnpu_legacy_broadcast(const struct vnpu_model *m, const struct vnpu_node *n,
			  const struct vnpu_tinfo *a, const struct vnpu_tinfo *b,
			  struct vnpu_tinfo *aligned);

/* ---- onnx_reader.c ---- */

/* A model's bytes: a file (@fd, read with pread()) or memory (@fd -1). */
struct vnpu_onnx_src {
	int fd;
	const uint8_t *mem;
	uint64_t size;
};

vnpu_status vnpu_onnx_parse(const struct vnpu_onnx_src *src, const char *dir,
			    struct vnpu_model **out);

/*
 * ---- onnx_skel.c ----
 * A model's skeleton: its bytes without its large raw_data payloads, each
 * a field VNPU_ONNX_PAYLOAD_FIELD (varint: its index in @payloads) of its
 * TensorProto instead. Refused as vnpu_onnx_wire_check() refuses.
 */
#define VNPU_ONNX_PAYLOAD_FIELD 4095
struct vnpu_onnx_payload {
	uint64_t offset;	/* in the source */
	uint64_t len;
};

struct vnpu_onnx_skel {
	uint8_t *data;		/* mapped, of @map_size bytes */
	size_t size, map_size;
	struct vnpu_onnx_payload *payloads;
	uint32_t num_payloads;
};

vnpu_status vnpu_onnx_skeleton(const struct vnpu_onnx_src *src, struct vnpu_onnx_skel *out);
/* The skeleton's bytes only (protobuf-c unpacked them), or everything. */
void vnpu_onnx_skel_free_data(struct vnpu_onnx_skel *s);
void vnpu_onnx_skel_free(struct vnpu_onnx_skel *s);
/* @len bytes of @src at @at into @dst; VNPU_PARSE_ERROR when not there. */
vnpu_status vnpu_onnx_read_at(const struct vnpu_onnx_src *src, uint64_t at, void *dst,
			      uint64_t len);

/*
 * ---- onnx_wire.c ----
 * A model's bytes are refused before protobuf-c unpacks them when they are
 * more than VNPU_ONNX_MAX_BYTES, nest messages deeper than
 * VNPU_ONNX_MAX_DEPTH (the ModelProto is depth 0), hold more than
 * VNPU_ONNX_MAX_MESSAGES messages or would unpack into more than
 * VNPU_ONNX_MAX_DECODED bytes (VNPU_UNSUPPORTED), or are no protobuf
 * (VNPU_PARSE_ERROR). Documentation/vnpu/runtime.rst lists the limits.
 */
#define VNPU_ONNX_MAX_BYTES (1ull << 31)
#define VNPU_ONNX_MAX_DEPTH 64
#define VNPU_ONNX_MAX_MESSAGES (1 << 22)
#define VNPU_ONNX_MAX_DECODED (1ull << 32)
vnpu_status vnpu_onnx_wire_check(const void *data, size_t size);

/* ---- infer.c ---- */

/*
 * Infer the outputs of @n from its inputs (NULL for absent ones). When
 * every input has data and the op can be evaluated on the host, the
 * outputs get data too, limited to @fold_limit elements per output
 * (0: evaluate nothing beyond shapes). Sets a message on failure.
 */
vnpu_status vnpu_node_infer(const struct vnpu_model *m, const struct vnpu_node *n,
			    struct vnpu_tinfo *const *in, struct vnpu_tinfo *const *out,
			    int64_t fold_limit);

/*
 * Infer a whole graph in order into @infos (one tinfo per model value; those
 * of graph inputs and constants set by the caller). Evaluates like
 * vnpu_node_infer(). Unless @strict, a node that fails with VNPU_UNSUPPORTED
 * (an op or type not known here) leaves its outputs unknown and the walk
 * goes on. Used for the model and by the compiler, which charges its walk
 * to the same @work (NULL: a budget of its own).
 */
vnpu_status vnpu_graph_infer(const struct vnpu_model *m, const struct vnpu_graph *g,
			     struct vnpu_tinfo *infos, int64_t fold_limit, bool strict,
			     struct vnpu_work *work);
/*
 * The main graph again after a reshape, as vnpu_graph_infer() leniently,
 * but a node that inferred in the model's last inference and now is past
 * a device limit (an RNN's steps, a rank) fails it with VNPU_UNSUPPORTED.
 */
vnpu_status vnpu_graph_reinfer(const struct vnpu_model *m, struct vnpu_tinfo *infos,
			       int64_t fold_limit);

/* Loops are unrolled (the device runs static command streams): at most
 * this many iterations each. */
#define VNPU_MAX_LOOP_ITERS 65536

/*
 * The node-visit budget: one inference (of a model, a reshape, a node the
 * compiler infers) and one compile (its inference of the model, then every
 * node it walks, loop bodies once per unrolled iteration) each visit at
 * most VNPU_MAX_NODE_VISITS nodes, counted across every subgraph and
 * iteration. Loops nested in loops cost the product of their trip counts;
 * past the budget the model is refused with VNPU_UNSUPPORTED, even where a
 * lenient inference would leave a node's outputs unknown and go on.
 */
#define VNPU_MAX_NODE_VISITS (1 << 21)

struct vnpu_work {
	int64_t visits;
	bool over;	/* spent: the whole inference or compile fails */
};

/*
 * Charge @count visits (at node @n) to @w: VNPU_UNSUPPORTED with a message
 * naming @n once the total passes VNPU_MAX_NODE_VISITS, and @w is spent.
 */
vnpu_status vnpu_work_charge(struct vnpu_work *w, const struct vnpu_node *n, int64_t count);

/* An Einsum equation: each operand axis and output axis as a label 0..51
 * (ellipsis axes get labels of their own). */
#define VNPU_EINSUM_MAX_IN 2
struct vnpu_einsum {
	int num_in;
	int rank[VNPU_EINSUM_MAX_IN];
	int8_t in[VNPU_EINSUM_MAX_IN][VNPU_MAX_RANK];
	int out_rank;
	int8_t out[VNPU_MAX_RANK];
};

/* Parse @eq for operands of @ranks; false when malformed or unsupported. */
bool vnpu_einsum_parse(const char *eq, int num_in, const int32_t *ranks, struct vnpu_einsum *e);

/* Read element @i of a data tensor of @type as double / int64. */
double vnpu_elem_get_f(const void *data, vnpu_element_type type, int64_t i);
int64_t vnpu_elem_get_i(const void *data, vnpu_element_type type, int64_t i);
void vnpu_elem_set_f(void *data, vnpu_element_type type, int64_t i, double v);
void vnpu_elem_set_i(void *data, vnpu_element_type type, int64_t i, int64_t v);
/* ONNX Cast into bf16: the upper half of the f32 bits (truncation, not the
 * rounding vnpu_elem_set_f() does; Documentation/vnpu/conformance.rst). */
uint16_t vnpu_cast_f32_to_bf16(float f);
bool vnpu_type_is_float(vnpu_element_type type);
/* How messages name node @n: "node 'conv1' (Conv)", or "Conv node" when it
 * has no name. @buf of @size bytes holds it. */
const char *vnpu_node_label(const struct vnpu_node *n, char *buf, size_t size);
/* vnpu_error() of @st with the detail "<node @n's label>: <fmt...>". */
vnpu_status vnpu_node_error(vnpu_status st, const struct vnpu_node *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* vnpu_error_prefix() of @st with node @n's label. */
vnpu_status vnpu_node_prefix(vnpu_status st, const struct vnpu_node *n);
vnpu_status vnpu_node_verror(vnpu_status st, const struct vnpu_node *n, const char *fmt,
			     va_list ap) __attribute__((format(printf, 3, 0)));
/* The name of ONNX element type @t for messages ("string", "complex64",
 * "f32"); NULL when ONNX has no such type. */
const char *vnpu_onnx_type_name(int32_t t);

#endif /* VNPU_SRC_MODEL_IR_H */

/* SPDX-License-Identifier: MIT */
/*
 * libvnpu: a model read from ONNX, before compilation.
 *
 * A vnpu_model is the graph with its weights, element types and shapes
 * inferred from the inputs through every node. Dimensions an ONNX input
 * leaves symbolic are VNPU_DIM_DYNAMIC until vnpu_model_reshape() sets
 * them; a model compiled with some left dynamic keeps dynamic ports and
 * compiles a program per input shape when a request runs one
 * (vnpu_compiled_model.h).
 *
 * Ownership: the caller owns the model and frees it with vnpu_model_free();
 * names returned by the getters live as long as the model. Thread safety:
 * getters may run concurrently; vnpu_model_reshape() and vnpu_model_free()
 * need exclusive use. Compiling reads the model and keeps no reference.
 */
#ifndef VNPU_MODEL_H
#define VNPU_MODEL_H

#include <vnpu/vnpu_common.h>
#include <vnpu/vnpu_tensor.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Read an ONNX model file. Tensors stored in external data files are read
 * from the model's folder. Opsets 7 to 17 of the default domain (older
 * models are read too; their nodes whose meaning changed in opset 7, the
 * legacy broadcasting, are refused). An application with a core reads
 * models with vnpu_core_read_model(), the same reader; this one needs no
 * core.
 */
VNPU_API vnpu_status vnpu_model_read_file(const char *path, vnpu_model **out);

/**
 * Read an ONNX model from @size bytes at @data (copied: the caller may free
 * @data afterwards). A model with external data fails with
 * VNPU_NOT_FOUND: there is no folder to read it from.
 */
VNPU_API vnpu_status vnpu_model_read_memory(const void *data, size_t size,
					    vnpu_model **out);

/** Free @model (NULL is fine). */
VNPU_API void vnpu_model_free(vnpu_model *model);

/** Number of model inputs (graph inputs that are not initializers). */
VNPU_API vnpu_status vnpu_model_get_inputs_size(const vnpu_model *model,
						size_t *out);
/** Number of model outputs. */
VNPU_API vnpu_status vnpu_model_get_outputs_size(const vnpu_model *model,
						 size_t *out);

/** Name of input @index, valid while @model lives. */
VNPU_API vnpu_status vnpu_model_input_name(const vnpu_model *model,
					   size_t index, const char **out);
/** Name of output @index, valid while @model lives. */
VNPU_API vnpu_status vnpu_model_output_name(const vnpu_model *model,
					    size_t index, const char **out);

/** Index of the input called @name, VNPU_NOT_FOUND when none is. */
VNPU_API vnpu_status vnpu_model_input_index(const vnpu_model *model,
					    const char *name, size_t *out);
/** Index of the output called @name, VNPU_NOT_FOUND when none is. */
VNPU_API vnpu_status vnpu_model_output_index(const vnpu_model *model,
					     const char *name, size_t *out);

/** Element type of input @index. */
VNPU_API vnpu_status vnpu_model_input_type(const vnpu_model *model,
					   size_t index,
					   vnpu_element_type *out);
/** Element type of output @index (UNDEFINED when it cannot be inferred). */
VNPU_API vnpu_status vnpu_model_output_type(const vnpu_model *model,
					    size_t index,
					    vnpu_element_type *out);

/** (Partial) shape of input @index: VNPU_DIM_DYNAMIC where unknown. */
VNPU_API vnpu_status vnpu_model_input_shape(const vnpu_model *model,
					    size_t index, vnpu_shape *out);
/**
 * (Partial) shape of output @index as inferred; VNPU_UNSUPPORTED when not
 * even its rank can be inferred (a data-dependent shape).
 */
VNPU_API vnpu_status vnpu_model_output_shape(const vnpu_model *model,
					     size_t index, vnpu_shape *out);

/**
 * Set the shape of the input called @name and infer every shape again. As
 * OpenVINO's reshape, any shape of up to VNPU_MAX_RANK dimensions may
 * replace the declared one (a fixed batch changed, dynamic dimensions set,
 * another rank) as long as every node takes it, with the node's complaint
 * otherwise: VNPU_INVALID_ARGUMENT for a shape the node's op does not
 * define (inputs that do not broadcast, a weight of another shape, an
 * index into an empty axis), VNPU_UNSUPPORTED for one it defines but the
 * device cannot run (a node that took the previous shapes and now goes
 * past a device limit: an RNN, GRU or LSTM of more than 65536 steps, a
 * Loop or Scan of more iterations, a tensor of rank above VNPU_MAX_RANK).
 * VNPU_INVALID_ARGUMENT too for a negative dimension other than
 * VNPU_DIM_DYNAMIC, a rank above VNPU_MAX_RANK, known dimensions of more
 * than 2^40 elements, and a sequence input (vnpu_model_reshape_sequence());
 * VNPU_NOT_FOUND when no input (a frozen one is none) is called @name. On
 * failure the model is left as it was. Shapes past what the device's
 * layers take (a dimension above 2^31 in one) are refused by the compile,
 * which knows the layers, as VNPU_UNSUPPORTED.
 */
VNPU_API vnpu_status vnpu_model_reshape(vnpu_model *model, const char *name,
					const vnpu_shape *shape);

/**
 * Replace the input called @name by a constant holding @data (@size bytes,
 * dense row-major, of @type and the static @shape). @type must be the
 * input's and @shape fit its shape as declared or last reshaped: the same
 * rank, the same known dimensions, any size for a dynamic one (an input
 * declared f32[?,3] is frozen as f32[5,3]). Inputs that decide shapes
 * (axes, sizes, scales, repeats given as graph inputs) then fold at
 * compile time. The input leaves the model's inputs (later indices move
 * down by one).
 *
 * Refused as vnpu_model_reshape() refuses, the model left as it was:
 * VNPU_INVALID_ARGUMENT for a @shape of a rank above VNPU_MAX_RANK, a
 * negative or dynamic dimension or known dimensions of more than 2^40
 * elements (the message names the limit), a @shape or @type that does not
 * fit the input, @size other than the shape's bytes, a sequence input, and
 * data a node's op does not define ("freeze 'shape': Reshape node: 24
 * elements reshaped to 25"); VNPU_UNSUPPORTED for data that takes a node
 * which inferred before past a device limit ("freeze 'cond': Loop node:
 * 65537 iterations, above the limit of 65536") and for a string input
 * (no string is a constant); VNPU_NOT_FOUND when no input is called @name.
 */
VNPU_API vnpu_status vnpu_model_freeze_input(vnpu_model *model, const char *name,
					     vnpu_element_type type,
					     const vnpu_shape *shape,
					     const void *data, size_t size);

/**
 * Whether the values of input @index decide shapes in @model: @out is 1
 * when some node reads them, directly or through ops that compute on them,
 * to know an output's shape (a Reshape's shape, a Slice's starts, Resize's
 * scales or sizes, TopK's k, Range's limits, a Loop's trip count, an If's
 * condition...), else 0. Shape and Size read only a shape, so an input
 * reaching a node through them alone decides nothing. A static-shape
 * device compiles such a model once the caller who knows the values
 * freezes these inputs with vnpu_model_freeze_input() (as vnpu-run and
 * vnpu-bench do with the inputs they are given). VNPU_INVALID_ARGUMENT
 * for NULL arguments, VNPU_NOT_FOUND past the model's inputs.
 */
VNPU_API vnpu_status vnpu_model_input_decides_shapes(const vnpu_model *model, size_t index,
						     int *out);

/**
 * What an input or output holds. A model port is a TENSOR, a SEQUENCE of
 * tensors (of one element type, the port's type) or an OPTIONAL tensor or
 * sequence, which may have no value. The device runs tensors only, so a
 * model compiles for sequences of a known length and optionals known to be
 * present or not: a compiled port is a TENSOR, a SEQUENCE or NONE (an
 * optional compiled without a value); see vnpu_infer_request_get_kind().
 */
typedef enum vnpu_port_kind {
	VNPU_PORT_TENSOR = 0,
	VNPU_PORT_SEQUENCE = 1,
	VNPU_PORT_OPTIONAL = 2,			/**< a tensor or none */
	VNPU_PORT_OPTIONAL_SEQUENCE = 3,	/**< a sequence or none */
	VNPU_PORT_NONE = 4,			/**< compiled: an optional without a value */
} vnpu_port_kind;

/** The kind of input or output @index as the model declares it. */
VNPU_API vnpu_status vnpu_model_input_kind(const vnpu_model *model, size_t index,
					   vnpu_port_kind *out);
VNPU_API vnpu_status vnpu_model_output_kind(const vnpu_model *model, size_t index,
					    vnpu_port_kind *out);

/**
 * Replace the SEQUENCE or OPTIONAL_SEQUENCE input called @name by the
 * constant sequence of the @count tensors @elems (their contents are
 * copied; each of the input's element type, any shape; @count may be 0),
 * as vnpu_model_freeze_input() does for a tensor. A present OPTIONAL
 * tensor is frozen with vnpu_model_freeze_input(), or left an input: it
 * then compiles as a tensor input. VNPU_INVALID_ARGUMENT for a tensor
 * input, a wrong element type, a NULL element, more than 65536 elements
 * or an element past vnpu_model_freeze_input()'s shape limits (one of no
 * elements may have any dimension: "freeze 'seq': element 0: dimension 1
 * is 2199023255552: more than 2^40 elements"); otherwise the statuses of
 * vnpu_model_freeze_input(). On failure the model is left as it was.
 */
VNPU_API vnpu_status vnpu_model_freeze_sequence(vnpu_model *model, const char *name,
						vnpu_tensor *const *elems, size_t count);

/**
 * Fix the length of the SEQUENCE or OPTIONAL_SEQUENCE input called @name to
 * @count and the shapes of its elements to @shapes (static): its values
 * then come at run time, vnpu_infer_request_set_sequence(). Once fixed, the
 * length cannot change, the shapes can.
 *
 * The statuses of vnpu_model_reshape(), the model left as it was on
 * failure (a refused call fixes no length and keeps the element shapes of
 * the last call taken): VNPU_INVALID_ARGUMENT for NULL @shapes with a
 * @count, a tensor input, another length once fixed, more than 65536
 * elements, an element shape of a rank above VNPU_MAX_RANK, a negative or
 * dynamic dimension or more than 2^40 elements ("reshape 'seq': element
 * 1: rank 9 above 8"); VNPU_INVALID_ARGUMENT or VNPU_UNSUPPORTED as
 * vnpu_model_reshape() for what shape inference then refuses;
 * VNPU_NOT_FOUND when no input is called @name. The sequence ops
 * (SequenceAt, SequenceMap, ConcatFromSequence...) are resolved by the
 * compile, which checks the elements against them: element shapes a node
 * does not define are the compile's VNPU_INVALID_ARGUMENT, a layer past
 * the device's limits its VNPU_UNSUPPORTED, with the node's message.
 */
VNPU_API vnpu_status vnpu_model_reshape_sequence(vnpu_model *model, const char *name,
						 size_t count, const vnpu_shape *shapes);

/**
 * Replace the OPTIONAL or OPTIONAL_SEQUENCE input called @name by an
 * optional without a value. VNPU_INVALID_ARGUMENT for any other kind.
 */
VNPU_API vnpu_status vnpu_model_freeze_none(vnpu_model *model, const char *name);

/** Number of nodes of the main graph as read. */
VNPU_API vnpu_status vnpu_model_get_ops_size(const vnpu_model *model,
					     size_t *out);
/** Op type and name of node @index ("" when the node has no name). */
VNPU_API vnpu_status vnpu_model_op(const vnpu_model *model, size_t index,
				   const char **out_type,
				   const char **out_name);

/** The opset version of the default ONNX domain the model imports. */
VNPU_API vnpu_status vnpu_model_get_opset(const vnpu_model *model,
					  int64_t *out);

#ifdef __cplusplus
}
#endif

#endif /* VNPU_MODEL_H */

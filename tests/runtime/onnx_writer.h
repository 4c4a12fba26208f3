/* SPDX-License-Identifier: MIT */
/*
 * ONNX models written in memory by the tests: a protobuf writer (varints
 * and length-delimited fields, nothing else) and a few builders of
 * ModelProto pieces addressed by their field numbers in onnx.proto (the
 * enum below names the ones used).
 *
 * Errors: a writer that runs out of memory sets @failed and drops every
 * later write, so a test builds the whole model unchecked and looks at
 * @failed once, before reading the bytes. pb_msg() passes a failure of
 * the submessage on to its parent.
 */
#ifndef VNPU_TEST_ONNX_WRITER_H
#define VNPU_TEST_ONNX_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pb {
	uint8_t *data;
	size_t len, cap;
	bool failed;		/* out of memory: every later write is dropped */
};

/* ONNX field numbers (by message) and enum values used by the tests. */
enum {
	MODEL_IR_VERSION = 1, MODEL_GRAPH = 7, MODEL_OPSET = 8,
	OPSET_DOMAIN = 1, OPSET_VERSION = 2,
	GRAPH_NODE = 1, GRAPH_NAME = 2, GRAPH_INIT = 5, GRAPH_INPUT = 11, GRAPH_OUTPUT = 12,
	NODE_INPUT = 1, NODE_OUTPUT = 2, NODE_NAME = 3, NODE_OP = 4, NODE_ATTR = 5,
	ATTR_NAME = 1, ATTR_I = 3, ATTR_G = 6, ATTR_TYPE = 20,
	ATTR_INT = 2, ATTR_GRAPH = 5,
	VALUE_NAME = 1, VALUE_TYPE = 2,
	TYPE_TENSOR = 1, TENSOR_ELEM = 1, TENSOR_SHAPE = 2, SHAPE_DIM = 1, DIM_VALUE = 1,
	INIT_DIMS = 1, INIT_TYPE = 2, INIT_NAME = 8, INIT_RAW = 9,
	ONNX_FLOAT = 1, ONNX_INT64 = 7, ONNX_BOOL = 9,
};

void pb_put(struct pb *b, const void *p, size_t n);
void pb_varint(struct pb *b, uint64_t v);
void pb_int(struct pb *b, uint32_t field, int64_t v);
void pb_bytes(struct pb *b, uint32_t field, const void *p, size_t n);
void pb_str(struct pb *b, uint32_t field, const char *s);
/* @sub as field @field of @b; @sub is emptied for the next message. */
void pb_msg(struct pb *b, uint32_t field, struct pb *sub);
void pb_free(struct pb *b);

/*
 * A ValueInfoProto: @name, f32 of @rank dimensions @dims (@rank -1: no
 * shape; a negative dimension: one of unknown size).
 */
void onnx_value(struct pb *g, uint32_t field, const char *name, int rank,
		const int64_t *dims);
/* The same, of ONNX element type @type. */
void onnx_value_typed(struct pb *g, uint32_t field, const char *name, int type, int rank,
		      const int64_t *dims);
/* An initializer @name of ONNX type @type and shape @dims, @bytes of @data. */
void onnx_init(struct pb *g, const char *name, int type, int rank, const int64_t *dims,
	       const void *data, size_t bytes);
/* A node @op without attributes reading the @ni names @in, writing @out. */
void onnx_node(struct pb *g, const char *op, const char *const *in, int ni,
	       const char *out);
/* The model around graph @g: IR version 8, the default domain at @opset. */
void onnx_model(struct pb *out, struct pb *g, int64_t opset);

struct vnpu_core;
struct vnpu_compiled_model;
/*
 * Graph @g (freed) as a model of @opset, read by @core and compiled for
 * @device with @props: the compile's status (VNPU_OUT_OF_MEMORY when the
 * writer ran out), or the read's.
 */
int onnx_compile(struct vnpu_core *core, struct pb *g, int64_t opset, const char *device,
		 const char *const *props, struct vnpu_compiled_model **out);

#endif

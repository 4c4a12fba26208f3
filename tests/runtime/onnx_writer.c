// SPDX-License-Identifier: MIT
/*
 * The tests' ONNX writer: see onnx_writer.h for what it writes and how it
 * reports running out of memory.
 */
#include <stdlib.h>
#include <string.h>

#include <vnpu/vnpu.h>

#include "onnx_writer.h"

void pb_put(struct pb *b, const void *p, size_t n)
{
	if (b->failed || !n)
		return;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		uint8_t *d;

		while (cap < b->len + n)
			cap *= 2;
		d = realloc(b->data, cap);
		if (!d) {
			b->failed = true;
			return;
		}
		b->data = d;
		b->cap = cap;
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

void pb_varint(struct pb *b, uint64_t v)
{
	uint8_t buf[10];
	size_t n = 0;

	do {
		buf[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	pb_put(b, buf, n);
}

void pb_int(struct pb *b, uint32_t field, int64_t v)
{
	pb_varint(b, field << 3);
	pb_varint(b, (uint64_t)v);
}

void pb_bytes(struct pb *b, uint32_t field, const void *p, size_t n)
{
	pb_varint(b, field << 3 | 2);
	pb_varint(b, n);
	pb_put(b, p, n);
}

void pb_str(struct pb *b, uint32_t field, const char *s)
{
	pb_bytes(b, field, s, strlen(s));
}

void pb_msg(struct pb *b, uint32_t field, struct pb *sub)
{
	b->failed |= sub->failed;
	pb_bytes(b, field, sub->data, sub->len);
	sub->len = 0;
	sub->failed = false;
}

void pb_free(struct pb *b)
{
	free(b->data);
}

void onnx_value(struct pb *g, uint32_t field, const char *name, int rank,
		const int64_t *dims)
{
	onnx_value_typed(g, field, name, ONNX_FLOAT, rank, dims);
}

void onnx_value_typed(struct pb *g, uint32_t field, const char *name, int type, int rank,
		      const int64_t *dims)
{
	struct pb v = { 0 }, t = { 0 }, tt = { 0 }, shape = { 0 }, dim = { 0 };

	for (int d = 0; d < rank; d++) {
		if (dims[d] >= 0)
			pb_int(&dim, DIM_VALUE, dims[d]);
		pb_msg(&shape, SHAPE_DIM, &dim);
	}
	pb_int(&tt, TENSOR_ELEM, type);
	if (rank >= 0)
		pb_msg(&tt, TENSOR_SHAPE, &shape);
	pb_msg(&t, TYPE_TENSOR, &tt);
	pb_str(&v, VALUE_NAME, name);
	pb_msg(&v, VALUE_TYPE, &t);
	pb_msg(g, field, &v);
	pb_free(&v);
	pb_free(&t);
	pb_free(&tt);
	pb_free(&shape);
	pb_free(&dim);
}

void onnx_init(struct pb *g, const char *name, int type, int rank, const int64_t *dims,
	       const void *data, size_t bytes)
{
	struct pb t = { 0 };

	for (int d = 0; d < rank; d++)
		pb_int(&t, INIT_DIMS, dims[d]);
	pb_int(&t, INIT_TYPE, type);
	pb_str(&t, INIT_NAME, name);
	pb_bytes(&t, INIT_RAW, data, bytes);
	pb_msg(g, GRAPH_INIT, &t);
	pb_free(&t);
}

void onnx_node(struct pb *g, const char *op, const char *const *in, int ni,
	       const char *out)
{
	struct pb n = { 0 };

	for (int k = 0; k < ni; k++)
		pb_str(&n, NODE_INPUT, in[k]);
	pb_str(&n, NODE_OUTPUT, out);
	pb_str(&n, NODE_OP, op);
	pb_msg(g, GRAPH_NODE, &n);
	pb_free(&n);
}

void onnx_model(struct pb *out, struct pb *g, int64_t opset)
{
	struct pb id = { 0 };

	pb_int(out, MODEL_IR_VERSION, 8);
	pb_int(&id, OPSET_VERSION, opset);
	pb_msg(out, MODEL_OPSET, &id);
	pb_msg(out, MODEL_GRAPH, g);
	pb_free(&id);
}

int onnx_compile(struct vnpu_core *core, struct pb *g, int64_t opset, const char *device,
		 const char *const *props, struct vnpu_compiled_model **out)
{
	struct pb model = { 0 };
	vnpu_model *m;
	vnpu_status st;

	onnx_model(&model, g, opset);
	pb_free(g);
	if (model.failed) {
		pb_free(&model);
		return VNPU_OUT_OF_MEMORY;
	}
	st = vnpu_core_read_model_from_memory(core, model.data, model.len, &m);
	pb_free(&model);
	if (st != VNPU_OK)
		return st;
	st = vnpu_core_compile_model(core, m, device, props, out);
	vnpu_model_free(m);
	return st;
}

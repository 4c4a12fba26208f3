// SPDX-License-Identifier: MIT
/*
 * Compiled models of string tensors, run on the host (host_model.h): the
 * model's copy, its ports, and the requests that run it node by node.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "host_model.h"
#include "model/ir.h"

struct vnpu_host_model {
	struct vnpu_model *model;
};

struct vnpu_host_request {
	struct vnpu_compiled_model *cm;
	uint32_t num_io;			/* inputs, then outputs */
	struct vnpu_tensor_handle **io;
	uint64_t run_ns;			/* the last run's, 0 before */
	vnpu_status async_status;		/* of the last start_async */
	vnpu_infer_callback callback;
	void *user_data;
};

static bool is_string(const struct vnpu_model *m, int32_t v)
{
	return v >= 0 && m->values[v].info.type == VNPU_TYPE_STRING;
}

bool vnpu_host_wanted(const struct vnpu_model *m)
{
	const struct vnpu_graph *g = &m->main;

	for (uint32_t i = 0; i < g->num_inputs; i++)
		if (is_string(m, g->inputs[i]))
			return true;
	for (uint32_t i = 0; i < g->num_nodes; i++)
		for (uint32_t k = 0; k < g->nodes[i].num_outputs; k++)
			if (is_string(m, g->nodes[i].outputs[k]))
				return true;
	for (uint32_t i = 0; i < g->num_outputs; i++)
		if (is_string(m, g->outputs[i]))
			return true;
	return false;
}

void vnpu_host_model_free(struct vnpu_host_model *h)
{
	if (!h)
		return;
	vnpu_model_free(h->model);
	free(h);
}

/* Every node one the host runs, every constant a number. */
static vnpu_status check_host_model(const struct vnpu_model *m)
{
	const struct vnpu_graph *g = &m->main;

	for (uint32_t i = 0; i < g->num_nodes; i++) {
		const struct vnpu_node *n = &g->nodes[i];

		if (*n->domain || !vnpu_host_runs(n->op))
			return vnpu_error(VNPU_UNSUPPORTED, "node '%s' (%s): a model of string "
					  "tensors runs on the host, which runs only Cast, "
					  "CastLike, Identity and StringNormalizer", n->name, n->op);
	}
	for (uint32_t i = 0; i < g->num_inputs + g->num_outputs; i++) {
		const struct vnpu_value *v = &m->values[i < g->num_inputs ? g->inputs[i] :
						       g->outputs[i - g->num_inputs]];

		if (v->info.kind != VNPU_TK_TENSOR || v->info.rank < 0 ||
		    v->info.type == VNPU_TYPE_UNDEFINED)
			return vnpu_error(VNPU_UNSUPPORTED, "'%s' is not a tensor of a known rank "
					  "and type: a model of string tensors has only such ports",
					  v->name);
	}
	return VNPU_OK;
}

static vnpu_status host_ports(struct vnpu_compiled_model *cm, const struct vnpu_model *m)
{
	uint32_t n_in = m->main.num_inputs, n_out = m->main.num_outputs;

	cm->inputs = calloc(n_in ? n_in : 1, sizeof(vnpu_port));
	cm->outputs = calloc(n_out ? n_out : 1, sizeof(vnpu_port));
	if (!cm->inputs || !cm->outputs)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory");
	for (uint32_t i = 0; i < n_in + n_out; i++) {
		bool output = i >= n_in;
		uint32_t index = output ? i - n_in : i;
		const struct vnpu_value *v = &m->values[output ? m->main.outputs[index] :
								 m->main.inputs[index]];
		vnpu_port *port = output ? &cm->outputs[index] : &cm->inputs[index];

		*port = (vnpu_port){ v->name, v->info.type, { 0 }, index, output };
		vnpu_tinfo_shape(&v->info, &port->shape);
	}
	cm->num_inputs = n_in;
	cm->num_outputs = n_out;
	return VNPU_OK;
}

vnpu_status vnpu_host_compiled_model_new(struct vnpu_core *core,
					 struct vnpu_core_device *primary,
					 const char *device_name,
					 const struct vnpu_config *config,
					 const struct vnpu_model *m,
					 struct vnpu_compiled_model **out)
{
	struct vnpu_compiled_model *cm;
	struct vnpu_host_model *h;
	vnpu_status st = check_host_model(m);

	if (st)
		return st;
	h = calloc(1, sizeof(*h));
	if (!h)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory");
	cm = vnpu_compiled_model_alloc(core, primary, NULL, device_name, config);
	if (!cm) {
		free(h);
		return VNPU_OUT_OF_MEMORY;
	}
	cm->host = h;
	st = vnpu_model_copy(m, &h->model);
	if (st == VNPU_OK)
		st = host_ports(cm, h->model);
	if (st != VNPU_OK) {
		vnpu_compiled_model_free(cm);
		return st;
	}
	*out = cm;
	return VNPU_OK;
}

/* ---- requests ---- */

/* A tensor of @port's type and shape, its unknown dimensions 0. */
static vnpu_status port_tensor(const vnpu_port *port, struct vnpu_tensor_handle **out)
{
	vnpu_shape shape = port->shape;

	for (uint32_t d = 0; d < shape.rank; d++)
		if (shape.dims[d] < 0)
			shape.dims[d] = 0;
	return vnpu_tensor_create(port->type, &shape, out);
}

static const vnpu_port *io_port(const struct vnpu_host_request *r, uint32_t io)
{
	const struct vnpu_compiled_model *cm = r->cm;

	return io < cm->num_inputs ? &cm->inputs[io] : &cm->outputs[io - cm->num_inputs];
}

vnpu_status vnpu_host_request_new(struct vnpu_compiled_model *cm,
				  struct vnpu_host_request **out)
{
	struct vnpu_host_request *r = calloc(1, sizeof(*r));
	vnpu_status st = VNPU_OK;

	if (!r)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory");
	r->cm = cm;
	r->num_io = cm->num_inputs + cm->num_outputs;
	r->io = calloc(r->num_io ? r->num_io : 1, sizeof(*r->io));
	if (!r->io)
		st = vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory");
	for (uint32_t i = 0; !st && i < r->num_io; i++)
		st = port_tensor(io_port(r, i), &r->io[i]);
	if (st) {
		vnpu_host_request_free(r);
		return st;
	}
	*out = r;
	return VNPU_OK;
}

void vnpu_host_request_free(struct vnpu_host_request *r)
{
	if (!r)
		return;
	for (uint32_t i = 0; r->io && i < r->num_io; i++)
		vnpu_tensor_free(r->io[i]);
	free(r->io);
	free(r);
}

vnpu_status vnpu_host_get_tensor(struct vnpu_host_request *r, uint32_t io, vnpu_tensor **out)
{
	*out = vnpu_tensor_ref(r->io[io]);
	return VNPU_OK;
}

vnpu_status vnpu_host_set_tensor(struct vnpu_host_request *r, uint32_t io, vnpu_tensor *t)
{
	const vnpu_port *port = io_port(r, io);
	char want[96], got[96];
	bool fits = t->shape.rank == port->shape.rank;

	if (port->is_output)
		return vnpu_error(VNPU_UNSUPPORTED, "\"%s\": a model of string tensors makes its "
				  "output tensors at each run (read them with get_tensor)",
				  port->name);
	for (uint32_t d = 0; fits && d < t->shape.rank; d++)
		fits = port->shape.dims[d] < 0 || port->shape.dims[d] == t->shape.dims[d];
	if (!fits)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "\"%s\" has shape %s, the tensor %s",
				  port->name, vnpu_shape_str(&port->shape, want, sizeof(want)),
				  vnpu_shape_str(&t->shape, got, sizeof(got)));
	if (t->type != port->type)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "\"%s\" is %s, the tensor %s", port->name,
				  vnpu_element_type_str(port->type),
				  vnpu_element_type_str(t->type));
	vnpu_tensor_ref(t);
	vnpu_tensor_free(r->io[io]);
	r->io[io] = t;
	return VNPU_OK;
}

/* A constant of @m as a host tensor. */
static vnpu_status const_tensor(const struct vnpu_value *v, struct vnpu_tensor_handle **out)
{
	vnpu_shape shape;
	vnpu_status st;

	if (!v->info.data || v->info.type == VNPU_TYPE_STRING || !vnpu_tinfo_static(&v->info))
		return vnpu_error(VNPU_UNSUPPORTED, "'%s' has no value the host can read",
				  v->name);
	vnpu_tinfo_shape(&v->info, &shape);
	st = vnpu_tensor_create(v->info.type, &shape, out);
	if (!st && (*out)->bytes)
		memcpy((*out)->data, v->info.data, (*out)->bytes);
	return st;
}

/* Every value a node of @g reads and nobody computes: a constant. */
static vnpu_status load_constants(const struct vnpu_model *m, struct vnpu_tensor_handle **vals)
{
	const struct vnpu_graph *g = &m->main;
	vnpu_status st = VNPU_OK;

	for (uint32_t i = 0; !st && i < g->num_nodes; i++) {
		for (uint32_t k = 0; !st && k < g->nodes[i].num_inputs; k++) {
			int32_t v = g->nodes[i].inputs[k];

			if (v >= 0 && !vals[v] && m->values[v].kind == VNPU_VALUE_CONST)
				st = const_tensor(&m->values[v], &vals[v]);
		}
	}
	return st;
}

static vnpu_status run(struct vnpu_host_request *r)
{
	const struct vnpu_model *m = r->cm->host->model;
	const struct vnpu_graph *g = &m->main;
	struct vnpu_tensor_handle **vals = calloc(m->num_values, sizeof(*vals));
	struct timespec t0, t1;
	vnpu_status st;

	if (!vals)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (uint32_t i = 0; i < g->num_inputs; i++)
		vals[g->inputs[i]] = vnpu_tensor_ref(r->io[i]);
	st = load_constants(m, vals);
	for (uint32_t i = 0; !st && i < g->num_nodes; i++) {
		st = vnpu_host_run_node(&g->nodes[i], vals);
		if (st)
			st = vnpu_error_prefix(st, "node '%s' (%s)", g->nodes[i].name,
					       g->nodes[i].op);
	}
	for (uint32_t i = 0; !st && i < g->num_outputs; i++)
		if (!vals[g->outputs[i]])
			st = vnpu_error(VNPU_GENERAL_ERROR, "output '%s' was not computed",
					m->values[g->outputs[i]].name);
	for (uint32_t i = 0; !st && i < g->num_outputs; i++) {
		vnpu_tensor_free(r->io[g->num_inputs + i]);
		r->io[g->num_inputs + i] = vnpu_tensor_ref(vals[g->outputs[i]]);
	}
	for (uint32_t i = 0; i < m->num_values; i++)
		vnpu_tensor_free(vals[i]);
	free(vals);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	r->run_ns = st ? 0 : (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000ll +
					 (t1.tv_nsec - t0.tv_nsec)) + 1;
	return st;
}

vnpu_status vnpu_host_infer(struct vnpu_host_request *r)
{
	return run(r);
}

vnpu_status vnpu_host_profiling_info(struct vnpu_host_request *r, vnpu_profiling_info **out)
{
	vnpu_profiling_info *info;
	vnpu_profiling_entry *e;

	if (!r->cm->config.profiling)
		return vnpu_error(VNPU_UNSUPPORTED, "ENABLE_PROFILING was off when compiling");
	if (!r->run_ns)
		return vnpu_error(VNPU_NOT_READY, "no profiled inference has completed yet");
	info = calloc(1, sizeof(*info) + sizeof(*e));
	if (!info)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory");
	e = (vnpu_profiling_entry *)(info + 1);
	*e = (vnpu_profiling_entry){ "host", "Stage", "host", VNPU_PROFILING_EXECUTED,
				     r->run_ns };
	info->count = 1;
	info->entries = e;
	*out = info;
	return VNPU_OK;
}

void vnpu_host_start_async(struct vnpu_host_request *r)
{
	r->async_status = run(r);
}

void vnpu_host_callback(struct vnpu_host_request *r, vnpu_infer_request *req)
{
	if (r->callback)
		r->callback(req, r->async_status, r->user_data);
}

vnpu_status vnpu_host_wait(struct vnpu_host_request *r)
{
	return r->async_status;
}

vnpu_status vnpu_host_set_callback(struct vnpu_host_request *r, vnpu_infer_callback cb,
				   void *user_data)
{
	r->callback = cb;
	r->user_data = user_data;
	return VNPU_OK;
}

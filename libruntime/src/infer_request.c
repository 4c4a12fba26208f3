// SPDX-License-Identifier: MIT
/*
 * Infer requests. Each stage of a run is its own function so that the
 * asynchronous pipeline can put the host stages and the device stages on
 * different executors:
 *
 *   preprocess   convert caller tensors whose type is not the port's
 *   upload       copy caller inputs into the request's device buffers
 *   submit       start the next segment of the program on its device
 *   wait         wait for that segment (and collect its timings)
 *   download     copy outputs into caller tensors
 *   postprocess  convert outputs whose caller type is not the port's
 *
 * Inputs and outputs that the caller left as the request's own tensors
 * (mapped device buffers) skip every copy: they are zero-copy. So do
 * device tensors of the request's device and the port's type set on it
 * (remote tensors, another request's): their buffer becomes the port's
 * slot.
 *
 * Fences (vnpu_remote.h): the in-fences of the tensors a run uses in
 * place go to the device with its first segment's job; its last segment's
 * job returns the out-fence that the bound output tensors keep.
 */
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "async.h"
#include "dynamic.h"
#include "host_model.h"
#include "runtime.h"

enum request_stage {
	STAGE_PREPROCESS,
	STAGE_UPLOAD,
	STAGE_SUBMIT,
	STAGE_WAIT,
	STAGE_DOWNLOAD,
	STAGE_POSTPROCESS,
	NUM_STAGES,
};

static const char *const stage_names[NUM_STAGES] = {
	"preprocess", "upload", "submit", "wait", "download", "postprocess",
};

/* One input or output of a request. */
struct io_state {
	const vnpu_port *port;
	uint64_t port_bytes;
	struct vnpu_tensor_handle *own;	/* the request's mapped device buffer */
	struct vnpu_tensor_handle *cur;	/* the tensor in use (@own or the caller's) */
	void *staging;			/* port-typed copy when @cur's type differs */
	const void *upload_src;		/* what upload copies, set by preprocess */
	bool bound;			/* @cur's device buffer is the port's slot */
	bool fence_pending;		/* the run gives @cur its out-fence at submit */
};

struct vnpu_infer_request {
	struct vnpu_compiled_model *cm;
	uint32_t num_inputs;
	uint32_t num_io;		/* inputs, then outputs */
	struct io_state *io;
	struct vnpu_buf *arena;
	struct vnpu_buf **slots;
	uint32_t num_slots;

	uint32_t segment;		/* the segment submit starts next */
	struct vnpu_dev_job *job;	/* the segment running, or NULL */
	uint64_t **cmd_ns;		/* per segment, per command */
	uint64_t stage_ns[NUM_STAGES];
	bool profiled;			/* the last run completed with timings */
	struct vnpu_request_async *async;	/* async.c's, NULL until used */
	uint64_t job_ns;			/* device time of the last job waited for */
	struct vnpu_dyn_request *dyn;		/* a model of dynamic inputs: runs there */
	struct vnpu_host_request *host;		/* a model of strings: runs there */
	/*
	 * Set while a caller's call touches the request (vnpu_request_enter()):
	 * a second thread's call meanwhile gets VNPU_BUSY instead of racing it.
	 */
	atomic_bool in_call;
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static const struct vnpu_plugin_ops *primary_ops(const struct vnpu_infer_request *req)
{
	return req->cm->primary->plugin->ops;
}

/* ---- one call at a time ---- */

bool vnpu_request_enter(struct vnpu_infer_request *req)
{
	bool was = false;

	return atomic_compare_exchange_strong_explicit(&req->in_call, &was, true,
						       memory_order_acquire,
						       memory_order_relaxed);
}

void vnpu_request_leave(struct vnpu_infer_request *req)
{
	atomic_store_explicit(&req->in_call, false, memory_order_release);
}

vnpu_status vnpu_request_busy_error(void)
{
	return vnpu_error(VNPU_BUSY, "the request is running, or another thread is using it");
}

vnpu_status vnpu_request_enter_idle(struct vnpu_infer_request *req)
{
	if (!vnpu_request_enter(req))
		return vnpu_request_busy_error();
	if (vnpu_async_busy(req)) {
		vnpu_request_leave(req);
		return vnpu_request_busy_error();
	}
	return VNPU_OK;
}

/* ---- life time ---- */

VNPU_API void vnpu_infer_request_free(vnpu_infer_request *req)
{
	uint32_t i;

	if (!req || !vnpu_async_release(req))
		return;
	vnpu_dyn_request_free(req->dyn);
	vnpu_host_request_free(req->host);
	if (req->job)
		vnpu_segment_device(req->cm, req->segment)->plugin->ops->job_free(req->job);
	for (i = 0; req->io && i < req->num_io; i++) {
		vnpu_tensor_free(req->io[i].cur);
		vnpu_tensor_free(req->io[i].own);
		free(req->io[i].staging);
	}
	for (i = 0; req->cmd_ns && i < req->cm->program->num_segments; i++)
		free(req->cmd_ns[i]);
	free(req->cmd_ns);
	if (req->arena)
		primary_ops(req)->buf_free(req->arena);
	free(req->slots);
	free(req->io);
	vnpu_compiled_model_free(req->cm);
	free(req);
}

static vnpu_status alloc_timings(struct vnpu_infer_request *req)
{
	const struct vnpu_program *p = req->cm->program;
	uint32_t i;

	req->cmd_ns = calloc(p->num_segments, sizeof(*req->cmd_ns));
	if (!req->cmd_ns)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory");
	for (i = 0; i < p->num_segments; i++) {
		req->cmd_ns[i] = calloc(p->segments[i].num_cmds + 1, sizeof(uint64_t));
		if (!req->cmd_ns[i])
			return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory");
	}
	return VNPU_OK;
}

static vnpu_status alloc_buffers(struct vnpu_infer_request *req)
{
	struct vnpu_compiled_model *cm = req->cm;
	struct io_state *io = NULL;
	vnpu_status st;
	uint32_t i;

	req->num_slots = vnpu_program_num_slots(cm->program);
	req->slots = calloc(req->num_slots, sizeof(*req->slots));
	req->io = calloc(req->num_io ? req->num_io : 1, sizeof(*req->io));
	if (!req->slots || !req->io)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory");
	st = primary_ops(req)->buf_create(cm->primary->dev,
					  vnpu_program_arena_bytes(cm->program),
					  &req->arena);
	if (st != VNPU_OK)
		return vnpu_error_prefix(st, "allocating the request's arena");
	req->slots[VNPU_SLOT_WEIGHTS] = cm->weights;
	req->slots[VNPU_SLOT_ARENA] = req->arena;
	for (i = 0; i < req->num_io; i++) {
		io = &req->io[i];
		io->port = i < req->num_inputs ? &cm->inputs[i] : &cm->outputs[i - req->num_inputs];
		st = vnpu_tensor_new_device(cm->core, cm->primary, io->port->type,
					    &io->port->shape, &io->own);
		if (st != VNPU_OK)
			return vnpu_error_prefix(st, "allocating the buffer of \"%s\"",
						 io->port->name);
		io->port_bytes = io->own->bytes;
		io->cur = vnpu_tensor_ref(io->own);
		req->slots[VNPU_SLOT_FIRST_IO + i] = io->own->buf;
	}
	return VNPU_OK;
}

/* A request of dynamic inputs: its ports name them, dynamic.c runs it. */
static vnpu_status dyn_ports(struct vnpu_infer_request *req)
{
	struct vnpu_compiled_model *cm = req->cm;
	uint32_t i;

	req->io = calloc(req->num_io ? req->num_io : 1, sizeof(*req->io));
	if (!req->io)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory");
	for (i = 0; i < req->num_io; i++)
		req->io[i].port = i < req->num_inputs ? &cm->inputs[i] :
							&cm->outputs[i - req->num_inputs];
	return vnpu_dyn_request_new(cm, req, &req->dyn);
}

struct vnpu_dyn_request *vnpu_request_dyn(const struct vnpu_infer_request *req)
{
	return req->dyn;
}

/* A request of a model of strings: its ports name them, host_model.c runs it. */
static vnpu_status host_ports(struct vnpu_infer_request *req)
{
	struct vnpu_compiled_model *cm = req->cm;

	req->io = calloc(req->num_io ? req->num_io : 1, sizeof(*req->io));
	if (!req->io)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory");
	for (uint32_t i = 0; i < req->num_io; i++)
		req->io[i].port = i < req->num_inputs ? &cm->inputs[i] :
							&cm->outputs[i - req->num_inputs];
	return vnpu_host_request_new(cm, &req->host);
}

struct vnpu_host_request *vnpu_request_host(const struct vnpu_infer_request *req)
{
	return req->host;
}

VNPU_API vnpu_status vnpu_compiled_model_create_infer_request(vnpu_compiled_model *cm,
							      vnpu_infer_request **out)
{
	struct vnpu_infer_request *req;
	vnpu_status st;

	if (!cm || !out)
		return vnpu_error(VNPU_INVALID_ARGUMENT,
				  "vnpu_compiled_model_create_infer_request: NULL argument");
	req = calloc(1, sizeof(*req));
	if (!req)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory");
	atomic_fetch_add(&cm->refs, 1);
	req->cm = cm;
	atomic_init(&req->in_call, false);
	req->num_inputs = cm->num_inputs;
	req->num_io = cm->num_inputs + cm->num_outputs;
	if (cm->dyn)
		st = dyn_ports(req);
	else if (cm->host)
		st = host_ports(req);
	else
		st = alloc_buffers(req);
	if (st == VNPU_OK && !cm->dyn && !cm->host)
		st = alloc_timings(req);
	if (st != VNPU_OK) {
		vnpu_infer_request_free(req);
		return st;
	}
	*out = req;
	return VNPU_OK;
}

/* ---- tensors ---- */

static vnpu_status find_io(struct vnpu_infer_request *req, const char *name,
			   struct io_state **out)
{
	uint32_t i;

	for (i = 0; i < req->num_io; i++) {
		if (!strcmp(req->io[i].port->name, name)) {
			*out = &req->io[i];
			return VNPU_OK;
		}
	}
	return vnpu_error(VNPU_NOT_FOUND, "the model has no input or output \"%s\"", name);
}

static vnpu_status io_by_index(struct vnpu_infer_request *req, bool output, uint32_t index,
			       struct io_state **out)
{
	uint32_t n = output ? req->num_io - req->num_inputs : req->num_inputs;

	if (index >= n)
		return vnpu_error(VNPU_NOT_FOUND, "no %s %u: the model has %u",
				  output ? "output" : "input", index, n);
	*out = &req->io[(output ? req->num_inputs : 0) + index];
	return VNPU_OK;
}

static vnpu_status io_by_port(struct vnpu_infer_request *req, const vnpu_port *port,
			      struct io_state **out)
{
	struct io_state *io = NULL;
	vnpu_status st = io_by_index(req, port->is_output != 0, port->index, &io);

	if (st != VNPU_OK)
		return st;
	if (!port->name || strcmp(port->name, io->port->name))
		return vnpu_error(VNPU_NOT_FOUND, "the port is not one of this model");
	*out = io;
	return VNPU_OK;
}

static vnpu_status get_tensor(struct vnpu_infer_request *req, struct io_state *io,
			      vnpu_tensor **out)
{
	vnpu_status st = vnpu_request_enter_idle(req);

	if (st)
		return st;
	if (req->dyn)
		st = vnpu_dyn_get_tensor(req->dyn, (uint32_t)(io - req->io), out);
	else if (req->host)
		st = vnpu_host_get_tensor(req->host, (uint32_t)(io - req->io), out);
	else
		*out = vnpu_tensor_ref(io->cur);
	vnpu_request_leave(req);
	return st;
}

VNPU_API vnpu_status vnpu_infer_request_get_tensor(vnpu_infer_request *req,
						   const char *name, vnpu_tensor **out)
{
	struct io_state *io = NULL;

	if (!req || !name || !out)
		return vnpu_error(VNPU_INVALID_ARGUMENT,
				  "vnpu_infer_request_get_tensor: NULL argument");
	return find_io(req, name, &io) ?: get_tensor(req, io, out);
}

VNPU_API vnpu_status vnpu_infer_request_get_input_tensor(vnpu_infer_request *req,
							 uint32_t index, vnpu_tensor **out)
{
	struct io_state *io = NULL;

	if (!req || !out)
		return vnpu_error(VNPU_INVALID_ARGUMENT,
				  "vnpu_infer_request_get_input_tensor: NULL argument");
	return io_by_index(req, false, index, &io) ?: get_tensor(req, io, out);
}

VNPU_API vnpu_status vnpu_infer_request_get_output_tensor(vnpu_infer_request *req,
							  uint32_t index, vnpu_tensor **out)
{
	struct io_state *io = NULL;

	if (!req || !out)
		return vnpu_error(VNPU_INVALID_ARGUMENT,
				  "vnpu_infer_request_get_output_tensor: NULL argument");
	return io_by_index(req, true, index, &io) ?: get_tensor(req, io, out);
}

VNPU_API vnpu_status vnpu_infer_request_get_tensor_by_port(vnpu_infer_request *req,
							   const vnpu_port *port,
							   vnpu_tensor **out)
{
	struct io_state *io = NULL;

	if (!req || !port || !out)
		return vnpu_error(VNPU_INVALID_ARGUMENT,
				  "vnpu_infer_request_get_tensor_by_port: NULL argument");
	return io_by_port(req, port, &io) ?: get_tensor(req, io, out);
}

/* ---- sequences and optionals ---- */

/* The group (sequence or NONE) called @name, or NULL. */
static const struct vnpu_prog_group *find_group(const struct vnpu_infer_request *req,
						const char *name)
{
	const struct vnpu_program *p = req->cm->program;

	for (uint32_t i = 0; p && i < p->num_groups; i++)
		if (!strcmp(p->groups[i].name, name))
			return &p->groups[i];
	return NULL;
}

VNPU_API vnpu_status vnpu_infer_request_get_kind(vnpu_infer_request *req, const char *name,
						 vnpu_port_kind *out)
{
	const struct vnpu_prog_group *g;
	struct io_state *io = NULL;
	vnpu_status st;

	if (!req || !name || !out)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "vnpu_infer_request_get_kind: NULL argument");
	g = find_group(req, name);
	if (g) {
		*out = g->kind;
		return VNPU_OK;
	}
	st = find_io(req, name, &io);
	if (!st)
		*out = VNPU_PORT_TENSOR;
	return st;
}

/* The sequence called @name, for @fn's messages. */
static vnpu_status find_sequence(struct vnpu_infer_request *req, const char *name,
				 const char *fn, const struct vnpu_prog_group **out)
{
	struct io_state *io = NULL;

	*out = find_group(req, name);
	if (*out && (*out)->kind == VNPU_PORT_SEQUENCE)
		return VNPU_OK;
	if (*out)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "%s: \"%s\" is an optional without a value",
				  fn, name);
	if (!find_io(req, name, &io))
		return vnpu_error(VNPU_INVALID_ARGUMENT, "%s: \"%s\" is a tensor, not a sequence",
				  fn, name);
	return vnpu_error(VNPU_NOT_FOUND, "%s: the model has no input or output \"%s\"", fn,
			  name);
}

VNPU_API vnpu_status vnpu_infer_request_get_sequence_size(vnpu_infer_request *req,
							  const char *name, size_t *out)
{
	const struct vnpu_prog_group *g;
	vnpu_status st;

	if (!req || !name || !out)
		return vnpu_error(VNPU_INVALID_ARGUMENT,
				  "vnpu_infer_request_get_sequence_size: NULL argument");
	st = find_sequence(req, name, "vnpu_infer_request_get_sequence_size", &g);
	if (!st)
		*out = g->count;
	return st;
}

VNPU_API vnpu_status vnpu_infer_request_get_sequence_tensor(vnpu_infer_request *req,
							    const char *name, size_t index,
							    vnpu_tensor **out)
{
	const struct vnpu_prog_group *g;
	struct io_state *io = NULL;
	vnpu_status st;

	if (!req || !name || !out)
		return vnpu_error(VNPU_INVALID_ARGUMENT,
				  "vnpu_infer_request_get_sequence_tensor: NULL argument");
	st = find_sequence(req, name, "vnpu_infer_request_get_sequence_tensor", &g);
	if (st)
		return st;
	if (index >= g->count)
		return vnpu_error(VNPU_NOT_FOUND, "sequence \"%s\" has no element %zu (it has %u)",
				  name, index, g->count);
	st = io_by_index(req, g->is_output, g->first + (uint32_t)index, &io);
	return st ?: get_tensor(req, io, out);
}

/*
 * A device tensor of the request's device, of the port's type, is the
 * port's slot itself: no copy. Anything else is copied to and from the
 * request's own buffer.
 */
static void bind_slot(struct vnpu_infer_request *req, struct io_state *io)
{
	const struct vnpu_tensor_handle *t = io->cur;

	io->bound = t != io->own && t->buf && t->device == req->cm->primary &&
		    t->type == io->port->type && t->buf->size >= io->port_bytes;
	req->slots[VNPU_SLOT_FIRST_IO + (uint32_t)(io - req->io)] =
		io->bound ? t->buf : io->own->buf;
}

/*
 * Check @t against @io's port; on success it replaces the current tensor.
 * The caller has entered the request and binds the slot.
 */
static vnpu_status replace_tensor(struct io_state *io, struct vnpu_tensor_handle *t)
{
	const vnpu_port *port = io->port;
	char want[96], got[96];
	void *staging = NULL;

	if (!vnpu_shape_equal(&t->shape, &port->shape))
		return vnpu_error(VNPU_INVALID_ARGUMENT, "\"%s\" has shape %s, the tensor %s",
				  port->name, vnpu_shape_str(&port->shape, want, sizeof(want)),
				  vnpu_shape_str(&t->shape, got, sizeof(got)));
	if (vnpu_convert_check(port->name, port->type, t->type))
		return VNPU_INVALID_ARGUMENT;
	if (t->type != port->type) {
		staging = malloc(io->port_bytes ? io->port_bytes : 1);
		if (!staging)
			return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory");
	}
	free(io->staging);
	io->staging = staging;
	vnpu_tensor_ref(t);
	vnpu_tensor_free(io->cur);
	io->cur = t;
	return VNPU_OK;
}

static vnpu_status set_tensor(struct vnpu_infer_request *req, struct io_state *io,
			      struct vnpu_tensor_handle *t)
{
	vnpu_status st = vnpu_request_enter_idle(req);

	if (st)
		return st;
	if (req->dyn) {
		st = vnpu_dyn_set_tensor(req->dyn, (uint32_t)(io - req->io), t);
	} else if (req->host) {
		st = vnpu_host_set_tensor(req->host, (uint32_t)(io - req->io), t);
	} else {
		st = replace_tensor(io, t);
		if (!st)
			bind_slot(req, io);
	}
	vnpu_request_leave(req);
	return st;
}

VNPU_API vnpu_status vnpu_infer_request_set_sequence(vnpu_infer_request *req, const char *name,
						     vnpu_tensor *const *tensors, size_t count)
{
	static const char fn[] = "vnpu_infer_request_set_sequence";
	const struct vnpu_prog_group *g;
	struct io_state *io = NULL;
	char want[96], got[96];
	vnpu_status st;

	if (!req || !name || (!tensors && count))
		return vnpu_error(VNPU_INVALID_ARGUMENT, "%s: NULL argument", fn);
	st = find_sequence(req, name, fn, &g);
	if (st)
		return st;
	if (g->is_output)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "%s: \"%s\" is an output", fn, name);
	if (count != g->count)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "%s: \"%s\" was compiled for %u tensors, not %zu",
				  fn, name, g->count, count);
	/* Every element checked first: a bad one changes nothing. */
	for (size_t i = 0; i < count; i++) {
		const vnpu_port *port;

		io_by_index(req, false, g->first + (uint32_t)i, &io);
		port = io->port;
		if (!tensors[i])
			return vnpu_error(VNPU_INVALID_ARGUMENT, "%s: element %zu is NULL", fn, i);
		if (!vnpu_shape_equal(&tensors[i]->shape, &port->shape) ||
		    !vnpu_convert_supported(tensors[i]->type, port->type))
			return vnpu_error(VNPU_INVALID_ARGUMENT,
					  "%s: element %zu of \"%s\" is %s %s, the element is %s %s", fn,
					  i, name, vnpu_element_type_str(tensors[i]->type),
					  vnpu_shape_str(&tensors[i]->shape, got, sizeof(got)),
					  vnpu_element_type_str(port->type),
					  vnpu_shape_str(&port->shape, want, sizeof(want)));
	}
	st = vnpu_request_enter_idle(req);
	if (st)
		return st;
	for (size_t i = 0; !st && i < count; i++) {
		io_by_index(req, false, g->first + (uint32_t)i, &io);
		st = replace_tensor(io, tensors[i]);
		if (!st)
			bind_slot(req, io);
	}
	vnpu_request_leave(req);
	return st;
}

VNPU_API vnpu_status vnpu_infer_request_set_tensor(vnpu_infer_request *req,
						   const char *name, vnpu_tensor *tensor)
{
	struct io_state *io = NULL;

	if (!req || !name || !tensor)
		return vnpu_error(VNPU_INVALID_ARGUMENT,
				  "vnpu_infer_request_set_tensor: NULL argument");
	return find_io(req, name, &io) ?: set_tensor(req, io, tensor);
}

VNPU_API vnpu_status vnpu_infer_request_set_input_tensor(vnpu_infer_request *req,
							 uint32_t index, vnpu_tensor *tensor)
{
	struct io_state *io = NULL;

	if (!req || !tensor)
		return vnpu_error(VNPU_INVALID_ARGUMENT,
				  "vnpu_infer_request_set_input_tensor: NULL argument");
	return io_by_index(req, false, index, &io) ?: set_tensor(req, io, tensor);
}

VNPU_API vnpu_status vnpu_infer_request_set_output_tensor(vnpu_infer_request *req,
							  uint32_t index, vnpu_tensor *tensor)
{
	struct io_state *io = NULL;

	if (!req || !tensor)
		return vnpu_error(VNPU_INVALID_ARGUMENT,
				  "vnpu_infer_request_set_output_tensor: NULL argument");
	return io_by_index(req, true, index, &io) ?: set_tensor(req, io, tensor);
}

VNPU_API vnpu_status vnpu_infer_request_set_tensor_by_port(vnpu_infer_request *req,
							   const vnpu_port *port,
							   vnpu_tensor *tensor)
{
	struct io_state *io = NULL;

	if (!req || !port || !tensor)
		return vnpu_error(VNPU_INVALID_ARGUMENT,
				  "vnpu_infer_request_set_tensor_by_port: NULL argument");
	return io_by_port(req, port, &io) ?: set_tensor(req, io, tensor);
}

/* ---- the stages ---- */

vnpu_status vnpu_request_preprocess(struct vnpu_infer_request *req)
{
	struct io_state *io = NULL;
	uint32_t i;

	for (i = 0; i < req->num_inputs; i++) {
		io = &req->io[i];
		io->upload_src = NULL;
		if (io->cur == io->own || io->bound)
			continue;
		if (io->staging) {
			vnpu_convert(io->staging, io->port->type, io->cur->data, io->cur->type,
				     io->cur->elems);
			io->upload_src = io->staging;
		} else {
			io->upload_src = io->cur->data;
		}
	}
	req->segment = 0;
	return VNPU_OK;
}

vnpu_status vnpu_request_upload(struct vnpu_infer_request *req)
{
	struct io_state *io = NULL;
	vnpu_status st;
	uint32_t i;

	for (i = 0; i < req->num_inputs; i++) {
		io = &req->io[i];
		if (!io->upload_src || !io->port_bytes)
			continue;
		st = primary_ops(req)->buf_write(io->own->buf, 0, io->upload_src, io->port_bytes);
		if (st != VNPU_OK)
			return vnpu_error_prefix(st, "uploading \"%s\"", io->port->name);
	}
	return VNPU_OK;
}

bool vnpu_request_has_segment(const struct vnpu_infer_request *req)
{
	return req->segment < req->cm->program->num_segments;
}

/*
 * The in-fences of the run (first segment) into @f: every tensor used in
 * place may carry one; a tensor the request copies cannot.
 */
static vnpu_status collect_in_fences(struct vnpu_infer_request *req, int *fds,
				     struct vnpu_job_fences *f)
{
	struct vnpu_tensor_fences *tf;
	struct io_state *io;
	int fd;

	for (io = req->io; io < req->io + req->num_io; io++) {
		tf = io->cur->fences;
		if (!tf)
			continue;
		pthread_mutex_lock(&tf->lock);
		fd = tf->in_fd;
		pthread_mutex_unlock(&tf->lock);
		if (fd < 0)
			continue;
		if (io->cur != io->own && !io->bound)
			return vnpu_error(VNPU_INVALID_ARGUMENT,
					  "\"%s\" has an in-fence, but the request copies the tensor "
					  "(of another device or element type)", io->port->name);
		if (f->num_in == VNPU_MAX_IN_FENCES)
			return vnpu_error(VNPU_INVALID_ARGUMENT,
					  "more than %d tensors of the request have in-fences",
					  VNPU_MAX_IN_FENCES);
		fds[f->num_in++] = fd;
	}
	return VNPU_OK;
}

/* The job reached the device: its in-fences are used, its out-fence kept. */
static void fences_submitted(struct vnpu_infer_request *req, const struct vnpu_job_fences *f)
{
	struct vnpu_tensor_fences *tf;
	struct io_state *io;
	uint32_t i;

	for (i = 0; i < f->num_in; i++) {
		for (io = req->io; io < req->io + req->num_io; io++) {
			tf = io->cur->fences;
			if (!tf)
				continue;
			pthread_mutex_lock(&tf->lock);
			if (tf->in_fd == f->in_fds[i]) {
				close(tf->in_fd);
				tf->in_fd = -1;
			}
			pthread_mutex_unlock(&tf->lock);
		}
	}
	if (f->out_fd < 0)
		return;
	for (io = req->io + req->num_inputs; io < req->io + req->num_io; io++) {
		if (io->fence_pending) {
			vnpu_tensor_fence_submitted(io->cur, fcntl(f->out_fd, F_DUPFD_CLOEXEC, 0));
			io->fence_pending = false;
		}
	}
	close(f->out_fd);
}

vnpu_status vnpu_request_submit(struct vnpu_infer_request *req, uint32_t flags)
{
	struct vnpu_core_device *d = vnpu_segment_device(req->cm, req->segment);
	struct vnpu_job_fences f = { .out_fd = -1 };
	int in_fds[VNPU_MAX_IN_FENCES];
	struct io_state *io;
	vnpu_status st;

	if (req->job)
		return vnpu_error(VNPU_BUSY, "the request is running");
	f.in_fds = in_fds;
	if (req->segment == 0) {
		st = collect_in_fences(req, in_fds, &f);
		if (st != VNPU_OK)
			return st;
	}
	if (f.num_in && !d->plugin->ops->fence_import)
		return vnpu_error(VNPU_UNSUPPORTED, "%s runs the first part of the model and "
				  "cannot wait for the in-fences", d->info.name);
	/* A last part on a device without fences gives no out-fence. */
	if (req->segment + 1 == req->cm->program->num_segments && d->plugin->ops->fence_import) {
		for (io = req->io + req->num_inputs; io < req->io + req->num_io; io++)
			f.want_out |= io->fence_pending;
	}
	st = d->plugin->ops->submit(req->cm->exes[req->segment], req->slots, req->num_slots,
				    req->cm->config.profiling, flags,
				    f.num_in || f.want_out ? &f : NULL, &req->job);
	if (st != VNPU_OK)
		return vnpu_error_prefix(st, "submitting segment %u to %s", req->segment,
					 d->info.name);
	fences_submitted(req, &f);
	return VNPU_OK;
}

/* Prefix the fault @st of the running segment's job with the layer that faulted. */
static vnpu_status name_fault(struct vnpu_infer_request *req, const struct vnpu_plugin_ops *ops,
			      vnpu_status st)
{
	const struct vnpu_program *p = req->cm->program;
	const struct vnpu_prog_layer *l;
	uint32_t cmd, i;

	if (!ops->fault_cmd || !ops->fault_cmd(req->job, &cmd))
		return st;
	for (i = 0; i < p->num_layers; i++) {
		l = &p->layers[i];
		if (l->segment == req->segment && cmd >= l->first_cmd &&
		    cmd - l->first_cmd < l->num_cmds)
			return vnpu_error_prefix(st, "layer \"%s\" (%s)", l->name, l->type);
	}
	return st;
}

vnpu_status vnpu_request_job_wait(struct vnpu_infer_request *req, int64_t deadline_ns)
{
	struct vnpu_core_device *d = vnpu_segment_device(req->cm, req->segment);
	uint64_t total = 0;
	vnpu_status st;

	if (!req->job)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "no segment is running");
	st = d->plugin->ops->wait(req->job, deadline_ns, req->cmd_ns[req->segment], &total);
	if (st == VNPU_DEVICE_FAULT || st == VNPU_TIMEOUT)
		st = name_fault(req, d->plugin->ops, st);
	if (st != VNPU_NOT_READY)
		req->job_ns = st == VNPU_OK ? total : 0;
	return st;
}

vnpu_status vnpu_request_job_end(struct vnpu_infer_request *req, vnpu_status st)
{
	struct vnpu_core_device *d = vnpu_segment_device(req->cm, req->segment);

	if (!req->job)
		return st;
	d->plugin->ops->job_free(req->job);
	req->job = NULL;
	if (st != VNPU_OK)
		return vnpu_error_prefix(st, "running segment %u on %s", req->segment,
					 d->info.name);
	req->segment++;
	return VNPU_OK;
}

vnpu_status vnpu_request_wait(struct vnpu_infer_request *req, int64_t deadline_ns)
{
	vnpu_status st = vnpu_request_job_wait(req, deadline_ns);

	return st == VNPU_NOT_READY ? st : vnpu_request_job_end(req, st);
}

vnpu_status vnpu_request_download(struct vnpu_infer_request *req)
{
	struct io_state *io = NULL;
	vnpu_status st;
	uint32_t i;

	for (i = req->num_inputs; i < req->num_io; i++) {
		io = &req->io[i];
		if (io->cur == io->own || io->bound || !io->port_bytes)
			continue;
		st = primary_ops(req)->buf_read(io->own->buf, 0,
						io->staging ? io->staging : io->cur->data,
						io->port_bytes);
		if (st != VNPU_OK)
			return vnpu_error_prefix(st, "downloading \"%s\"", io->port->name);
	}
	return VNPU_OK;
}

vnpu_status vnpu_request_postprocess(struct vnpu_infer_request *req)
{
	struct io_state *io = NULL;
	uint32_t i;

	for (i = req->num_inputs; i < req->num_io; i++) {
		io = &req->io[i];
		if (io->cur != io->own && !io->bound && io->staging)
			vnpu_convert(io->cur->data, io->cur->type, io->staging, io->port->type,
				     io->cur->elems);
	}
	return VNPU_OK;
}

/* Run @stage, adding its wall time to the request's profile. */
#define TIMED(req, stage, call) \
	({ int64_t t0_ = now_ns(); vnpu_status st_ = (call); \
	   vnpu_request_stage_done(req, (enum vnpu_request_stage)(stage), t0_, now_ns()); st_; })

void vnpu_request_stage_done(struct vnpu_infer_request *req,
			     enum vnpu_request_stage stage, int64_t t0, int64_t t1)
{
	req->stage_ns[stage] += (uint64_t)(t1 - t0);
	vnpu_async_timeline_add(req, stage, t0, t1);
}

/* The bound outputs of a device with fences get the run's out-fence. */
static void mark_out_fences(struct vnpu_infer_request *req)
{
	struct io_state *io;

	for (io = req->io + req->num_inputs; io < req->io + req->num_io; io++) {
		if (io->bound && io->cur->fences) {
			vnpu_tensor_fence_pending(io->cur, 1);
			io->fence_pending = true;
		}
	}
}

/* A run that ended without its out-fence lets the waiting exports go. */
static void drop_out_fences(struct vnpu_infer_request *req)
{
	struct io_state *io;

	for (io = req->io + req->num_inputs; io < req->io + req->num_io; io++) {
		if (io->fence_pending) {
			vnpu_tensor_fence_pending(io->cur, -1);
			io->fence_pending = false;
		}
	}
}

void vnpu_request_run_begin(struct vnpu_infer_request *req)
{
	mark_out_fences(req);
	req->profiled = false;
	memset(req->stage_ns, 0, sizeof(req->stage_ns));
	vnpu_async_timeline_reset(req);
}

void vnpu_request_run_end(struct vnpu_infer_request *req, vnpu_status st)
{
	drop_out_fences(req);
	req->profiled = st == VNPU_OK && req->cm->config.profiling;
}

/* ---- what the asynchronous pipeline (async.c) reaches ---- */

struct vnpu_request_async **vnpu_request_async_state(struct vnpu_infer_request *req)
{
	return &req->async;
}

struct vnpu_compiled_model *vnpu_request_compiled_model(const struct vnpu_infer_request *req)
{
	return req->cm;
}

struct vnpu_core_device *vnpu_request_device(const struct vnpu_infer_request *req)
{
	uint32_t last = req->cm->program->num_segments - 1;

	return vnpu_segment_device(req->cm, req->segment < last ? req->segment : last);
}

uint64_t vnpu_request_job_ns(const struct vnpu_infer_request *req)
{
	return req->job_ns;
}

vnpu_status vnpu_request_notify(struct vnpu_infer_request *req, void (*fn)(void *arg),
				void *arg)
{
	struct vnpu_core_device *d = vnpu_segment_device(req->cm, req->segment);
	vnpu_status st;

	if (!req->job)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "no segment is running");
	st = d->plugin->ops->notify(req->job, fn, arg);
	return st == VNPU_OK ? st : vnpu_error_prefix(st, "segment %u on %s", req->segment,
						      d->info.name);
}

void vnpu_request_cancel_job(struct vnpu_infer_request *req)
{
	if (req->job)
		vnpu_segment_device(req->cm, req->segment)->plugin->ops->cancel(req->job);
}

VNPU_API vnpu_status vnpu_infer_request_infer(vnpu_infer_request *req)
{
	vnpu_status st;

	if (!req)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "vnpu_infer_request_infer: req is NULL");
	st = vnpu_request_enter_idle(req);
	if (st)
		return st;
	if (req->dyn || req->host) {
		st = req->dyn ? vnpu_dyn_infer(req->dyn) : vnpu_host_infer(req->host);
		vnpu_request_leave(req);
		return st;
	}
	vnpu_request_run_begin(req);
	st = TIMED(req, STAGE_PREPROCESS, vnpu_request_preprocess(req));
	if (st == VNPU_OK)
		st = TIMED(req, STAGE_UPLOAD, vnpu_request_upload(req));
	while (st == VNPU_OK && vnpu_request_has_segment(req)) {
		st = TIMED(req, STAGE_SUBMIT, vnpu_request_submit(req, VNPU_SUBMIT_CALLER_WAITS));
		if (st == VNPU_OK)
			st = TIMED(req, STAGE_WAIT, vnpu_request_wait(req, INT64_MAX));
	}
	if (st == VNPU_OK)
		st = TIMED(req, STAGE_DOWNLOAD, vnpu_request_download(req));
	if (st == VNPU_OK)
		st = TIMED(req, STAGE_POSTPROCESS, vnpu_request_postprocess(req));
	vnpu_request_run_end(req, st);
	vnpu_request_leave(req);
	return st;
}

/* ---- profiling ---- */

static uint64_t layer_time(const struct vnpu_infer_request *req,
			   const struct vnpu_prog_layer *l)
{
	uint64_t sum = 0;
	uint32_t i;

	for (i = 0; i < l->num_cmds; i++)
		sum += req->cmd_ns[l->segment][l->first_cmd + i];
	return sum;
}

vnpu_status vnpu_request_profiling_info(struct vnpu_infer_request *req,
					vnpu_profiling_info **out)
{
	const struct vnpu_program *p;
	const struct vnpu_prog_layer *l;
	vnpu_profiling_entry *e;
	vnpu_profiling_info *info;
	size_t size, strings = 0;
	uint32_t i, n;
	char *pool;

	if (!req->cm->config.profiling)
		return vnpu_error(VNPU_UNSUPPORTED, "ENABLE_PROFILING was off when compiling");
	if (!req->profiled)
		return vnpu_error(VNPU_NOT_READY, "no profiled inference has completed yet");
	p = req->cm->program;
	n = NUM_STAGES + p->num_layers;
	for (i = 0; i < p->num_layers; i++)
		strings += strlen(p->layers[i].name) + strlen(p->layers[i].type) +
			   strlen(vnpu_segment_device(req->cm, p->layers[i].segment)->info.name) + 3;
	size = sizeof(*info) + n * sizeof(*e) + strings;
	info = calloc(1, size);
	if (!info)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory");
	e = (vnpu_profiling_entry *)(info + 1);
	pool = (char *)(e + n);
	for (i = 0; i < NUM_STAGES; i++)
		e[i] = (vnpu_profiling_entry){ stage_names[i], "Stage", "host",
					       VNPU_PROFILING_EXECUTED, req->stage_ns[i] };
	for (i = 0; i < p->num_layers; i++) {
		l = &p->layers[i];
		e[NUM_STAGES + i].name = pool;
		pool = stpcpy(pool, l->name) + 1;
		e[NUM_STAGES + i].node_type = pool;
		pool = stpcpy(pool, l->type) + 1;
		e[NUM_STAGES + i].exec_type = pool;
		pool = stpcpy(pool, vnpu_segment_device(req->cm, l->segment)->info.name) + 1;
		e[NUM_STAGES + i].status = l->num_cmds ? VNPU_PROFILING_EXECUTED :
							 VNPU_PROFILING_NOT_RUN;
		e[NUM_STAGES + i].real_time_ns = layer_time(req, l);
	}
	info->count = n;
	info->entries = e;
	*out = info;
	return VNPU_OK;
}

VNPU_API void vnpu_profiling_info_free(vnpu_profiling_info *info)
{
	free(info);
}

VNPU_API vnpu_status vnpu_infer_request_get_profiling_info(vnpu_infer_request *req,
							   vnpu_profiling_info **out)
{
	vnpu_status st;

	if (!req || !out)
		return vnpu_error(VNPU_INVALID_ARGUMENT,
				  "vnpu_infer_request_get_profiling_info: NULL argument");
	st = vnpu_request_enter_idle(req);
	if (st)
		return st;
	st = req->dyn ? vnpu_dyn_profiling_info(req->dyn, out) :
	     req->host ? vnpu_host_profiling_info(req->host, out) :
			vnpu_request_profiling_info(req, out);
	vnpu_request_leave(req);
	return st;
}

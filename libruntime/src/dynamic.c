// SPDX-License-Identifier: MIT
/*
 * Compiled models with dynamic inputs: their ports as declared, the LRU
 * cache of programs compiled per input shapes, and the requests that run
 * each inference on the program of its shapes (see dynamic.h).
 *
 * A miss compiles under the model's compile lock (the model copy is
 * reshaped to the shapes, compiled, then reshaped back), so two requests
 * that miss at once compile one after the other; lookups that hit take
 * only the cache lock and never wait for a compile.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "async.h"
#include "dynamic.h"
#include "model/ir.h"
#include "compiler/compiler.h"

struct dyn_entry {
	vnpu_shape *shapes;			/* one per input */
	struct vnpu_compiled_model *cm;		/* the program for them */
	uint64_t used;				/* the clock when last used */
};

struct vnpu_dyn_model {
	pthread_mutex_t compile_lock;	/* protects @model: reshaped while compiling */
	struct vnpu_model *model;	/* NULL when imported: no shape compiles */
	char **names;			/* imported: the ports' names, or NULL */
	struct vnpu_compile_options opts;
	pthread_mutex_t lock;		/* protects what follows */
	uint32_t capacity;
	uint32_t num_entries;
	struct dyn_entry *entries;
	uint64_t clock;
	int64_t compiles;
};

static const struct vnpu_value *model_input(const struct vnpu_model *m, uint32_t i)
{
	return &m->values[m->main.inputs[i]];
}

bool vnpu_dyn_wanted(const struct vnpu_model *m)
{
	for (uint32_t i = 0; i < m->main.num_inputs; i++) {
		const struct vnpu_tinfo *t = &model_input(m, i)->info;

		for (int32_t d = 0; t->kind == VNPU_TK_TENSOR && d < t->rank; d++)
			if (t->dims[d] < 0)
				return true;
	}
	return false;
}

void vnpu_dyn_model_free(struct vnpu_dyn_model *d)
{
	if (!d)
		return;
	for (uint32_t i = 0; i < d->num_entries; i++) {
		vnpu_compiled_model_free(d->entries[i].cm);
		free(d->entries[i].shapes);
	}
	free(d->entries);
	for (uint32_t i = 0; d->names && d->names[i]; i++)
		free(d->names[i]);
	free(d->names);
	vnpu_model_free(d->model);
	pthread_mutex_destroy(&d->lock);
	pthread_mutex_destroy(&d->compile_lock);
	free(d);
}

/* The ports as the model declares them: tensors of a known rank and type. */
static vnpu_status dyn_ports(struct vnpu_compiled_model *cm, const struct vnpu_model *m)
{
	uint32_t i, n_in = m->main.num_inputs, n_out = m->main.num_outputs;
	const struct vnpu_value *v;
	vnpu_shape shape;

	cm->inputs = calloc(n_in ? n_in : 1, sizeof(vnpu_port));
	cm->outputs = calloc(n_out ? n_out : 1, sizeof(vnpu_port));
	if (!cm->inputs || !cm->outputs)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory");
	for (i = 0; i < n_in + n_out; i++) {
		bool output = i >= n_in;
		uint32_t index = output ? i - n_in : i;

		v = &m->values[output ? m->main.outputs[index] : m->main.inputs[index]];
		if (v->info.kind != VNPU_TK_TENSOR || v->info.rank < 0 ||
		    v->info.type == VNPU_TYPE_UNDEFINED)
			return vnpu_error(VNPU_UNSUPPORTED,
					  "%s '%s' is not a tensor of a known rank and type: a model "
					  "with dynamic inputs compiles only such ports",
					  output ? "output" : "input", v->name);
		vnpu_tinfo_shape(&v->info, &shape);
		if (output)
			cm->outputs[index] = (vnpu_port){ v->name, v->info.type, shape, index, 1 };
		else
			cm->inputs[index] = (vnpu_port){ v->name, v->info.type, shape, index, 0 };
	}
	cm->num_inputs = n_in;
	cm->num_outputs = n_out;
	return VNPU_OK;
}

/* A dynamic model of @config's cache size (at least @least) and no entry yet. */
static struct vnpu_compiled_model *dyn_alloc(struct vnpu_core *core,
					     struct vnpu_core_device *primary,
					     struct vnpu_core_device *fallback,
					     const char *device_name,
					     const struct vnpu_config *config, uint32_t least)
{
	struct vnpu_dyn_model *d = calloc(1, sizeof(*d));
	struct vnpu_compiled_model *cm;

	if (!d) {
		vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory");
		return NULL;
	}
	cm = vnpu_compiled_model_alloc(core, primary, fallback, device_name, config);
	if (!cm) {
		free(d);
		return NULL;
	}
	pthread_mutex_init(&d->lock, NULL);
	pthread_mutex_init(&d->compile_lock, NULL);
	d->capacity = config->shape_cache_size ? (uint32_t)config->shape_cache_size :
						 VNPU_SHAPE_CACHE_DEFAULT;
	d->capacity = d->capacity < least ? least : d->capacity;
	cm->dyn = d;
	d->entries = calloc(d->capacity, sizeof(*d->entries));
	if (!d->entries) {
		vnpu_compiled_model_free(cm);
		vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory");
		return NULL;
	}
	return cm;
}

vnpu_status vnpu_dyn_compiled_model_new(struct vnpu_core *core,
					struct vnpu_core_device *primary,
					struct vnpu_core_device *fallback,
					const char *device_name,
					const struct vnpu_config *config,
					const struct vnpu_compile_options *opts,
					const struct vnpu_model *m,
					struct vnpu_compiled_model **out)
{
	struct vnpu_compiled_model *cm = dyn_alloc(core, primary, fallback, device_name, config, 0);
	struct vnpu_dyn_model *d;
	vnpu_status st;

	if (!cm)
		return VNPU_OUT_OF_MEMORY;
	d = cm->dyn;
	d->opts = *opts;
	st = vnpu_model_copy(m, &d->model);
	if (st == VNPU_OK)
		st = dyn_ports(cm, d->model);
	if (st != VNPU_OK) {
		vnpu_compiled_model_free(cm);
		return st;
	}
	*out = cm;
	return VNPU_OK;
}

vnpu_status vnpu_dyn_compiled_model_import(struct vnpu_core *core,
					   struct vnpu_core_device *primary,
					   struct vnpu_core_device *fallback,
					   const char *device_name,
					   const struct vnpu_config *config,
					   const vnpu_port *ports, uint32_t n_in, uint32_t n_out,
					   uint32_t n, const vnpu_shape *shapes,
					   struct vnpu_compiled_model **progs,
					   struct vnpu_compiled_model **out)
{
	struct vnpu_compiled_model *cm = dyn_alloc(core, primary, fallback, device_name, config,
						   n);
	vnpu_status st = VNPU_OK;
	struct vnpu_dyn_model *d;

	if (!cm) {
		for (uint32_t i = 0; i < n; i++)
			vnpu_compiled_model_free(progs[i]);
		return VNPU_OUT_OF_MEMORY;
	}
	d = cm->dyn;
	for (uint32_t i = 0; i < n; i++) {
		vnpu_shape *copy = malloc(n_in * sizeof(*copy) + 1);

		if (!copy && st == VNPU_OK)
			st = vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory");
		if (copy)
			memcpy(copy, &shapes[i * n_in], n_in * sizeof(*copy));
		d->entries[d->num_entries++] = (struct dyn_entry){ copy, progs[i], ++d->clock };
	}
	d->names = calloc(n_in + n_out + 1, sizeof(*d->names));
	cm->inputs = calloc(n_in ? n_in : 1, sizeof(vnpu_port));
	cm->outputs = calloc(n_out ? n_out : 1, sizeof(vnpu_port));
	if (!d->names || !cm->inputs || !cm->outputs)
		st = vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory");
	for (uint32_t i = 0; st == VNPU_OK && i < n_in + n_out; i++) {
		vnpu_port *port = i < n_in ? &cm->inputs[i] : &cm->outputs[i - n_in];

		d->names[i] = strdup(ports[i].name);
		if (!d->names[i]) {
			st = vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory");
			break;
		}
		*port = (vnpu_port){ d->names[i], ports[i].type, ports[i].shape,
				     i < n_in ? i : i - n_in, i >= n_in };
	}
	cm->num_inputs = n_in;
	cm->num_outputs = n_out;
	if (st != VNPU_OK) {
		vnpu_compiled_model_free(cm);
		return st;
	}
	*out = cm;
	return VNPU_OK;
}

vnpu_status vnpu_dyn_programs(struct vnpu_compiled_model *cm, uint32_t *n, vnpu_shape **shapes,
			      struct vnpu_compiled_model ***progs)
{
	struct vnpu_dyn_model *d = cm->dyn;
	vnpu_status st = VNPU_OK;

	pthread_mutex_lock(&d->lock);
	*n = d->num_entries;
	*shapes = calloc((size_t)*n * cm->num_inputs + 1, sizeof(**shapes));
	*progs = calloc(*n + 1, sizeof(**progs));
	if (!*shapes || !*progs) {
		free(*shapes);
		free(*progs);
		st = vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory");
	}
	for (uint32_t i = 0; st == VNPU_OK && i < *n; i++) {
		memcpy(&(*shapes)[i * cm->num_inputs], d->entries[i].shapes,
		       cm->num_inputs * sizeof(vnpu_shape));
		(*progs)[i] = d->entries[i].cm;
		atomic_fetch_add(&d->entries[i].cm->refs, 1);
	}
	pthread_mutex_unlock(&d->lock);
	return st;
}

int64_t vnpu_dyn_compiles(struct vnpu_dyn_model *d)
{
	int64_t n;

	pthread_mutex_lock(&d->lock);
	n = d->compiles;
	pthread_mutex_unlock(&d->lock);
	return n;
}

struct vnpu_compiled_model *vnpu_dyn_last(struct vnpu_dyn_model *d)
{
	struct dyn_entry *last = NULL;

	pthread_mutex_lock(&d->lock);
	for (uint32_t i = 0; i < d->num_entries; i++)
		if (!last || d->entries[i].used > last->used)
			last = &d->entries[i];
	if (last)
		atomic_fetch_add(&last->cm->refs, 1);
	pthread_mutex_unlock(&d->lock);
	return last ? last->cm : NULL;
}

/* ---- the program of some input shapes ---- */

/* The entry of @shapes, marked used, with a reference for the caller. */
static struct vnpu_compiled_model *cache_find(struct vnpu_compiled_model *cm,
					      const vnpu_shape *shapes)
{
	struct vnpu_dyn_model *d = cm->dyn;
	struct vnpu_compiled_model *hit = NULL;

	pthread_mutex_lock(&d->lock);
	for (uint32_t i = 0; i < d->num_entries && !hit; i++) {
		uint32_t j = 0;

		while (j < cm->num_inputs && vnpu_shape_equal(&d->entries[i].shapes[j], &shapes[j]))
			j++;
		if (j == cm->num_inputs) {
			hit = d->entries[i].cm;
			d->entries[i].used = ++d->clock;
			atomic_fetch_add(&hit->refs, 1);
		}
	}
	pthread_mutex_unlock(&d->lock);
	return hit;
}

/* Keep @spec for @shapes, dropping the least recently used when full. */
static vnpu_status cache_add(struct vnpu_compiled_model *cm, const vnpu_shape *shapes,
			     struct vnpu_compiled_model *spec)
{
	struct vnpu_dyn_model *d = cm->dyn;
	vnpu_shape *copy = malloc(cm->num_inputs * sizeof(*copy) + 1);
	struct dyn_entry *e;

	if (!copy)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory");
	memcpy(copy, shapes, cm->num_inputs * sizeof(*copy));
	pthread_mutex_lock(&d->lock);
	if (d->num_entries < d->capacity) {
		e = &d->entries[d->num_entries++];
	} else {
		e = &d->entries[0];
		for (uint32_t i = 1; i < d->num_entries; i++)
			if (d->entries[i].used < e->used)
				e = &d->entries[i];
		vnpu_compiled_model_free(e->cm);
		free(e->shapes);
	}
	atomic_fetch_add(&spec->refs, 1);
	*e = (struct dyn_entry){ copy, spec, ++d->clock };
	d->compiles++;
	pthread_mutex_unlock(&d->lock);
	return VNPU_OK;
}

/* "x=f32[1,3,8,8], y=..." for messages. */
static const char *shapes_str(const struct vnpu_compiled_model *cm, const vnpu_shape *shapes,
			      char *buf, size_t size)
{
	size_t len = 0;
	char one[96];

	buf[0] = '\0';
	for (uint32_t i = 0; i < cm->num_inputs && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s=%s", i ? ", " : "",
					cm->inputs[i].name,
					vnpu_shape_str(&shapes[i], one, sizeof(one)));
	return buf;
}

/* Reshape the model copy to @shapes, compile it, and put the shapes back. */
static vnpu_status compile_shapes(struct vnpu_compiled_model *cm, const vnpu_shape *shapes,
				  struct vnpu_compiled_model **out)
{
	struct vnpu_dyn_model *d = cm->dyn;
	vnpu_status st = VNPU_OK;
	uint32_t i, done;
	char text[512];

	if (!d->model)
		return vnpu_error(VNPU_UNSUPPORTED, "%s: the compiled model was imported with the "
				  "programs of %u input shapes and compiles no other (compile the "
				  "model to run new shapes)",
				  shapes_str(cm, shapes, text, sizeof(text)), d->num_entries);

	for (done = 0; st == VNPU_OK && done < cm->num_inputs; done++)
		st = vnpu_model_reshape(d->model, cm->inputs[done].name, &shapes[done]);
	if (st == VNPU_OK)
		st = vnpu_compile_static(cm->core, cm->primary, cm->fallback, cm->device,
					 &cm->config, &d->opts, d->model, out);
	for (i = 0; i < done; i++) {
		if (vnpu_model_reshape(d->model, cm->inputs[i].name, &cm->inputs[i].shape))
			vnpu_log(VNPU_LOG_ERROR, "putting back the shape of '%s': %s",
				 cm->inputs[i].name, vnpu_last_error());
	}
	if (st != VNPU_OK)
		return vnpu_error_prefix(st, "compiling for %s",
					 shapes_str(cm, shapes, text, sizeof(text)));
	return VNPU_OK;
}

/*
 * The program of @shapes (a new reference), compiled now when the cache has
 * none; @compile_ns is the time that took (0 on a hit).
 */
static vnpu_status dyn_program(struct vnpu_compiled_model *cm, const vnpu_shape *shapes,
			       struct vnpu_compiled_model **out, int64_t *compile_ns)
{
	struct vnpu_dyn_model *d = cm->dyn;
	int64_t t0;
	vnpu_status st;

	*compile_ns = 0;
	*out = cache_find(cm, shapes);
	if (*out)
		return VNPU_OK;
	pthread_mutex_lock(&d->compile_lock);
	/* Another request may have compiled them while this one waited. */
	*out = cache_find(cm, shapes);
	if (*out) {
		pthread_mutex_unlock(&d->compile_lock);
		return VNPU_OK;
	}
	t0 = vnpu_async_now_ns();
	st = compile_shapes(cm, shapes, out);
	if (st == VNPU_OK) {
		st = cache_add(cm, shapes, *out);
		if (st != VNPU_OK)
			vnpu_compiled_model_free(*out);
	}
	*compile_ns = vnpu_async_now_ns() - t0;
	pthread_mutex_unlock(&d->compile_lock);
	return st;
}

/* ---- requests ---- */

/* An ordinary request on one program, with its own output tensors. */
struct dyn_inner {
	struct vnpu_infer_request *req;
	struct vnpu_compiled_model *spec;	/* @req's (it holds the reference) */
	vnpu_tensor **own_out;			/* @req's own output tensors */
	uint64_t used;
};

struct vnpu_dyn_request {
	struct vnpu_compiled_model *cm;		/* the outer request holds the reference */
	struct vnpu_infer_request *outer;
	vnpu_tensor **given;			/* per input, then output: the caller's */
	vnpu_infer_callback callback;
	void *user_data;
	int64_t compile_ns;			/* of the last run: its program's compile */
	pthread_mutex_t lock;			/* protects what follows */
	struct dyn_inner *inners;
	uint32_t num_inners;
	int32_t cur;				/* the inner of the last run, or -1 */
	uint32_t waiters;			/* in wait/cancel on an inner: none is freed */
	uint64_t clock;
};

static void inner_free(struct vnpu_dyn_request *r, struct dyn_inner *in)
{
	vnpu_infer_request_free(in->req);
	for (uint32_t i = 0; in->own_out && i < r->cm->num_outputs; i++)
		vnpu_tensor_free(in->own_out[i]);
	free(in->own_out);
}

vnpu_status vnpu_dyn_request_new(struct vnpu_compiled_model *cm,
				 struct vnpu_infer_request *outer,
				 struct vnpu_dyn_request **out)
{
	struct vnpu_dyn_request *r = calloc(1, sizeof(*r));

	if (r)
		r->given = calloc(cm->num_inputs + cm->num_outputs + 1, sizeof(*r->given));
	if (!r || !r->given) {
		free(r);
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory");
	}
	r->cm = cm;
	r->outer = outer;
	r->cur = -1;
	pthread_mutex_init(&r->lock, NULL);
	*out = r;
	return VNPU_OK;
}

void vnpu_dyn_request_free(struct vnpu_dyn_request *r)
{
	if (!r)
		return;
	for (uint32_t i = 0; i < r->num_inners; i++)
		inner_free(r, &r->inners[i]);
	for (uint32_t i = 0; i < r->cm->num_inputs + r->cm->num_outputs; i++)
		vnpu_tensor_free(r->given[i]);
	free(r->inners);
	free(r->given);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

static const vnpu_port *io_port(const struct vnpu_dyn_request *r, uint32_t io)
{
	return io < r->cm->num_inputs ? &r->cm->inputs[io] :
					&r->cm->outputs[io - r->cm->num_inputs];
}

/* The inner request of the last run, or NULL. */
static struct vnpu_infer_request *current(struct vnpu_dyn_request *r)
{
	struct vnpu_infer_request *req;

	pthread_mutex_lock(&r->lock);
	req = r->cur >= 0 ? r->inners[r->cur].req : NULL;
	pthread_mutex_unlock(&r->lock);
	return req;
}

static bool running(struct vnpu_dyn_request *r)
{
	struct vnpu_infer_request *req = current(r);

	return req && vnpu_async_busy(req);
}

static bool shape_static(const vnpu_shape *s)
{
	for (uint32_t d = 0; d < s->rank; d++)
		if (s->dims[d] < 0)
			return false;
	return true;
}

vnpu_status vnpu_dyn_get_tensor(struct vnpu_dyn_request *r, uint32_t io, vnpu_tensor **out)
{
	const vnpu_port *port = io_port(r, io);
	struct vnpu_infer_request *req = current(r);
	char want[96];
	vnpu_status st;

	if (running(r))
		return vnpu_request_busy_error();
	if (!r->given[io] && port->is_output && req)
		return vnpu_infer_request_get_tensor(req, port->name, out);
	if (!r->given[io] && !shape_static(&port->shape))
		return vnpu_error(VNPU_NOT_READY,
				  "\"%s\" is %s %s: its tensor exists once %s", port->name,
				  vnpu_element_type_str(port->type),
				  vnpu_shape_str(&port->shape, want, sizeof(want)),
				  port->is_output ? "an inference ran" : "one is set");
	if (!r->given[io]) {
		st = vnpu_tensor_create(port->type, &port->shape, &r->given[io]);
		if (st != VNPU_OK)
			return st;
	}
	*out = vnpu_tensor_ref(r->given[io]);
	return VNPU_OK;
}

vnpu_status vnpu_dyn_set_tensor(struct vnpu_dyn_request *r, uint32_t io, vnpu_tensor *t)
{
	const vnpu_port *port = io_port(r, io);
	char want[96], got[96];
	bool fits = t->shape.rank == port->shape.rank;

	if (running(r))
		return vnpu_request_busy_error();
	for (uint32_t d = 0; fits && d < port->shape.rank; d++)
		fits = port->shape.dims[d] < 0 || port->shape.dims[d] == t->shape.dims[d];
	if (!fits)
		return vnpu_error(VNPU_INVALID_ARGUMENT,
				  "\"%s\" takes shapes %s (? any size), the tensor is %s",
				  port->name, vnpu_shape_str(&port->shape, want, sizeof(want)),
				  vnpu_shape_str(&t->shape, got, sizeof(got)));
	if (vnpu_convert_check(port->name, port->type, t->type))
		return VNPU_INVALID_ARGUMENT;
	vnpu_tensor_ref(t);
	vnpu_tensor_free(r->given[io]);
	r->given[io] = t;
	return VNPU_OK;
}

/* The inner request of @spec, made when the request has none. */
static vnpu_status inner_of(struct vnpu_dyn_request *r, struct vnpu_compiled_model *spec,
			    struct dyn_inner *out)
{
	struct dyn_inner in = { .spec = spec };
	vnpu_status st;

	for (uint32_t i = 0; i < r->num_inners; i++) {
		if (r->inners[i].spec == spec) {
			*out = r->inners[i];
			return VNPU_OK;
		}
	}
	st = vnpu_compiled_model_create_infer_request(spec, &in.req);
	if (st != VNPU_OK)
		return st;
	in.own_out = calloc(r->cm->num_outputs + 1, sizeof(*in.own_out));
	if (!in.own_out)
		st = vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory");
	for (uint32_t i = 0; st == VNPU_OK && i < r->cm->num_outputs; i++)
		st = vnpu_infer_request_get_tensor(in.req, r->cm->outputs[i].name,
						   &in.own_out[i]);
	if (st != VNPU_OK) {
		inner_free(r, &in);
		return st;
	}
	*out = in;
	return VNPU_OK;
}

/*
 * Make @in the current inner: added when new, and the least recently used
 * other inner freed past the cache size (unless a wait is inside one).
 */
static vnpu_status inner_use(struct vnpu_dyn_request *r, struct dyn_inner *in)
{
	uint32_t i, lru = 0;
	struct dyn_inner *grown;

	pthread_mutex_lock(&r->lock);
	for (i = 0; i < r->num_inners && r->inners[i].req != in->req; i++)
		;
	if (i == r->num_inners) {
		grown = realloc(r->inners, (r->num_inners + 1) * sizeof(*grown));
		if (!grown) {
			pthread_mutex_unlock(&r->lock);
			inner_free(r, in);
			return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory");
		}
		r->inners = grown;
		r->inners[r->num_inners++] = *in;
	}
	r->inners[i].used = ++r->clock;
	r->cur = (int32_t)i;
	if (r->num_inners > r->cm->dyn->capacity && !r->waiters) {
		for (i = 1; i < r->num_inners; i++)
			if (r->inners[i].used < r->inners[lru].used)
				lru = i;
		inner_free(r, &r->inners[lru]);
		r->inners[lru] = r->inners[--r->num_inners];
		if (r->cur == (int32_t)r->num_inners)
			r->cur = (int32_t)lru;
	}
	pthread_mutex_unlock(&r->lock);
	return VNPU_OK;
}

static void forward_callback(vnpu_infer_request *inner, vnpu_status st, void *arg)
{
	struct vnpu_dyn_request *r = arg;

	(void)inner;
	r->callback(r->outer, st, r->user_data);
}

/* Set the caller's tensors (or the inner's own outputs) on @in. */
static vnpu_status inner_bind(struct vnpu_dyn_request *r, struct dyn_inner *in)
{
	uint32_t i, n_in = r->cm->num_inputs;
	vnpu_status st = VNPU_OK;

	for (i = 0; st == VNPU_OK && i < n_in + r->cm->num_outputs; i++) {
		vnpu_tensor *t = r->given[i] ? r->given[i] : in->own_out[i - n_in];

		st = vnpu_infer_request_set_tensor(in->req, io_port(r, i)->name, t);
	}
	if (st == VNPU_OK)
		st = vnpu_infer_request_set_callback(in->req, r->callback ? forward_callback : NULL,
						     r);
	return st;
}

/* Choose (compile on first use) the program of the given inputs' shapes. */
static vnpu_status run_prepare(struct vnpu_dyn_request *r, struct vnpu_infer_request **out)
{
	uint32_t i, n = r->cm->num_inputs;
	struct vnpu_compiled_model *spec;
	vnpu_shape *shapes;
	struct dyn_inner in;
	char want[96];
	vnpu_status st = VNPU_OK;

	if (running(r))
		return vnpu_request_busy_error();
	shapes = calloc(n + 1, sizeof(*shapes));
	if (!shapes)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory");
	for (i = 0; st == VNPU_OK && i < n; i++) {
		const vnpu_port *port = &r->cm->inputs[i];

		if (!r->given[i] && !shape_static(&port->shape))
			st = vnpu_error(VNPU_INVALID_ARGUMENT,
					"input \"%s\" is %s %s: set a tensor of its shape first",
					port->name, vnpu_element_type_str(port->type),
					vnpu_shape_str(&port->shape, want, sizeof(want)));
		else if (!r->given[i])
			st = vnpu_tensor_create(port->type, &port->shape, &r->given[i]);
		if (st == VNPU_OK)
			shapes[i] = r->given[i]->shape;
	}
	if (st == VNPU_OK)
		st = dyn_program(r->cm, shapes, &spec, &r->compile_ns);
	free(shapes);
	if (st != VNPU_OK)
		return st;
	st = inner_of(r, spec, &in);
	vnpu_compiled_model_free(spec);
	if (st == VNPU_OK)
		st = inner_use(r, &in);
	if (st == VNPU_OK)
		st = inner_bind(r, &in);
	if (st == VNPU_OK)
		*out = in.req;
	return st;
}

vnpu_status vnpu_dyn_infer(struct vnpu_dyn_request *r)
{
	struct vnpu_infer_request *req = NULL;

	return run_prepare(r, &req) ?: vnpu_infer_request_infer(req);
}

vnpu_status vnpu_dyn_start_async(struct vnpu_dyn_request *r)
{
	struct vnpu_infer_request *req = NULL;
	vnpu_status st;

	if (!vnpu_request_enter(r->outer))
		return vnpu_request_busy_error();
	st = run_prepare(r, &req);
	vnpu_request_leave(r->outer);
	return st ?: vnpu_infer_request_start_async(req);
}

/* Run @fn on the current inner, which no other run frees meanwhile. */
static vnpu_status with_current(struct vnpu_dyn_request *r,
				vnpu_status (*fn)(struct vnpu_infer_request *req, void *arg),
				void *arg, vnpu_status none)
{
	struct vnpu_infer_request *req;
	vnpu_status st;

	pthread_mutex_lock(&r->lock);
	req = r->cur >= 0 ? r->inners[r->cur].req : NULL;
	if (req)
		r->waiters++;
	pthread_mutex_unlock(&r->lock);
	if (!req)
		return none;
	st = fn(req, arg);
	pthread_mutex_lock(&r->lock);
	r->waiters--;
	pthread_mutex_unlock(&r->lock);
	return st;
}

static vnpu_status wait_fn(struct vnpu_infer_request *req, void *arg)
{
	const int64_t *timeout_ms = arg;

	return *timeout_ms < 0 ? vnpu_infer_request_wait(req) :
				 vnpu_infer_request_wait_for(req, *timeout_ms);
}

vnpu_status vnpu_dyn_wait_for(struct vnpu_dyn_request *r, int64_t timeout_ms, bool forever)
{
	int64_t ms = forever ? -1 : timeout_ms;

	if (!forever && timeout_ms < 0)
		return vnpu_error(VNPU_INVALID_ARGUMENT,
				  "vnpu_infer_request_wait_for: negative timeout %lld ms",
				  (long long)timeout_ms);
	return with_current(r, wait_fn, &ms, VNPU_OK);
}

static vnpu_status cancel_fn(struct vnpu_infer_request *req, void *arg)
{
	(void)arg;
	return vnpu_infer_request_cancel(req);
}

vnpu_status vnpu_dyn_cancel(struct vnpu_dyn_request *r)
{
	return with_current(r, cancel_fn, NULL, VNPU_OK);
}

vnpu_status vnpu_dyn_set_callback(struct vnpu_dyn_request *r, vnpu_infer_callback cb,
				  void *user_data)
{
	struct vnpu_infer_request *req = current(r);
	vnpu_status st = VNPU_OK;

	if (req)
		st = vnpu_infer_request_set_callback(req, cb ? forward_callback : NULL, r);
	if (st == VNPU_OK) {
		r->callback = cb;
		r->user_data = user_data;
	}
	return st;
}

vnpu_status vnpu_dyn_timeline(struct vnpu_dyn_request *r, vnpu_timeline **out)
{
	struct vnpu_infer_request *req = current(r);

	if (!req)
		return vnpu_error(VNPU_NOT_READY, "no inference has completed yet");
	return vnpu_infer_request_get_timeline(req, out);
}

/*
 * The last run's profile with one more stage after the host stages,
 * "compile": the time its program took to compile, NOT_RUN when the
 * cache had it.
 */
vnpu_status vnpu_dyn_profiling_info(struct vnpu_dyn_request *r, vnpu_profiling_info **out)
{
	struct vnpu_infer_request *req = current(r);
	vnpu_profiling_info *in, *info;
	vnpu_profiling_entry *e;
	size_t size, stages = 0;
	vnpu_status st;
	char *pool;

	if (!r->cm->config.profiling)
		return vnpu_error(VNPU_UNSUPPORTED, "ENABLE_PROFILING was off when compiling");
	if (!req)
		return vnpu_error(VNPU_NOT_READY, "no profiled inference has completed yet");
	st = vnpu_infer_request_get_profiling_info(req, &in);
	if (st != VNPU_OK)
		return st;
	size = sizeof(*info) + (in->count + 1) * sizeof(*e);
	for (uint32_t i = 0; i < in->count; i++)
		size += strlen(in->entries[i].name) + strlen(in->entries[i].node_type) +
			strlen(in->entries[i].exec_type) + 3;
	info = calloc(1, size);
	if (!info) {
		vnpu_profiling_info_free(in);
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory");
	}
	e = (vnpu_profiling_entry *)(info + 1);
	pool = (char *)(e + in->count + 1);
	while (stages < in->count && !strcmp(in->entries[stages].node_type, "Stage"))
		stages++;
	for (uint32_t i = 0, j = 0; i <= in->count; i++, j++) {
		if (i == stages) {
			e[i] = (vnpu_profiling_entry){ "compile", "Stage", "host",
						       r->compile_ns ? VNPU_PROFILING_EXECUTED :
						       VNPU_PROFILING_NOT_RUN,
						       (uint64_t)r->compile_ns };
			j--;
			continue;
		}
		e[i] = in->entries[j];
		e[i].name = pool;
		pool = stpcpy(pool, in->entries[j].name) + 1;
		e[i].node_type = pool;
		pool = stpcpy(pool, in->entries[j].node_type) + 1;
		e[i].exec_type = pool;
		pool = stpcpy(pool, in->entries[j].exec_type) + 1;
	}
	info->count = in->count + 1;
	info->entries = e;
	vnpu_profiling_info_free(in);
	*out = info;
	return VNPU_OK;
}

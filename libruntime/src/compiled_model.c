// SPDX-License-Identifier: MIT
/*
 * Compiled models: a program loaded on its devices (each segment's stream
 * on its device, the weights uploaded once to the primary device), its
 * ports and its read-only properties, among them the number of requests
 * that keeps the device busy (measured from a few runs' timelines).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "async.h"
#include "dynamic.h"
#include "host_model.h"
#include "runtime.h"

struct vnpu_core_device *vnpu_segment_device(const struct vnpu_compiled_model *cm,
					     uint32_t segment)
{
	if (cm->program->segments[segment].target == VNPU_TARGET_FALLBACK)
		return cm->fallback;
	return cm->primary;
}

static void compiled_model_destroy(struct vnpu_compiled_model *cm)
{
	struct vnpu_core_device *d;
	uint32_t i;

	if (cm->exes) {
		for (i = 0; i < cm->program->num_segments; i++) {
			d = vnpu_segment_device(cm, i);
			if (cm->exes[i])
				d->plugin->ops->exe_free(cm->exes[i]);
		}
	}
	if (cm->weights)
		cm->primary->plugin->ops->buf_free(cm->weights);
	free(cm->exes);
	free(cm->slots);
	free(cm->inputs);
	free(cm->outputs);
	vnpu_dyn_model_free(cm->dyn);
	vnpu_host_model_free(cm->host);
	vnpu_program_free(cm->program);
	vnpu_core_unref(cm->core);
	free(cm);
}

static vnpu_status make_ports(struct vnpu_compiled_model *cm)
{
	const struct vnpu_program *p = cm->program;
	uint32_t i;

	cm->inputs = calloc(p->num_inputs ? p->num_inputs : 1, sizeof(vnpu_port));
	cm->outputs = calloc(p->num_outputs ? p->num_outputs : 1, sizeof(vnpu_port));
	if (!cm->inputs || !cm->outputs)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory");
	for (i = 0; i < p->num_inputs; i++)
		cm->inputs[i] = (vnpu_port){ p->inputs[i].name, p->inputs[i].type,
					     p->inputs[i].shape, i, 0 };
	for (i = 0; i < p->num_outputs; i++)
		cm->outputs[i] = (vnpu_port){ p->outputs[i].name, p->outputs[i].type,
					      p->outputs[i].shape, i, 1 };
	cm->num_inputs = p->num_inputs;
	cm->num_outputs = p->num_outputs;
	return VNPU_OK;
}

/* Every port dense and sized as its shape says, in its own slot. */
static vnpu_status check_program(const struct vnpu_program *p, bool has_fallback)
{
	const struct vnpu_prog_port *port;
	uint32_t i, n = p->num_inputs + p->num_outputs;

	if (!p->num_segments)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "the program has no segment");
	for (i = 0; i < n; i++) {
		port = i < p->num_inputs ? &p->inputs[i] : &p->outputs[i - p->num_inputs];
		if (port->slot != VNPU_SLOT_FIRST_IO + i || !port->name ||
		    port->shape.rank > VNPU_MAX_RANK ||
		    port->size != vnpu_shape_elems(&port->shape) *
				  vnpu_element_type_size(port->type))
			return vnpu_error(VNPU_INVALID_ARGUMENT,
					  "the program's port %u is malformed", i);
	}
	for (i = 0; i < p->num_segments; i++) {
		if (p->segments[i].target == VNPU_TARGET_FALLBACK && !has_fallback)
			return vnpu_error(VNPU_UNSUPPORTED,
					  "the program has CPU segments but no fallback device");
	}
	for (i = 0; i < p->num_layers; i++) {
		const struct vnpu_prog_layer *l = &p->layers[i];

		if (!l->name || !l->type || l->segment >= p->num_segments ||
		    l->first_cmd > p->segments[l->segment].num_cmds ||
		    l->num_cmds > p->segments[l->segment].num_cmds - l->first_cmd)
			return vnpu_error(VNPU_INVALID_ARGUMENT,
					  "the program's layer %u is malformed", i);
	}
	return VNPU_OK;
}

/*
 * The weights into a buffer of the primary device, held once: the CPU
 * device runs on the program's own (vnpu_program_weights_alloc() gave them
 * its buffers' alignment and pages); any other device gets a copy and the
 * program's are freed (export reads them back from the device).
 */
static vnpu_status load_weights(struct vnpu_compiled_model *cm)
{
	const struct vnpu_plugin_ops *ops = cm->primary->plugin->ops;
	struct vnpu_program *p = cm->program;
	vnpu_status st;

	if (cm->primary == cm->core->cpu && ops->buf_wrap)
		return ops->buf_wrap(cm->primary->dev, p->weights, p->weights_size, &cm->weights);
	st = ops->buf_create(cm->primary->dev, p->weights_size, &cm->weights);
	if (st == VNPU_OK && p->weights_size)
		st = ops->buf_write(cm->weights, 0, p->weights, p->weights_size);
	if (st != VNPU_OK)
		return vnpu_error_prefix(st, "uploading %llu bytes of weights to %s",
					 (unsigned long long)p->weights_size,
					 cm->primary->info.name);
	vnpu_program_weights_free(p);
	return VNPU_OK;
}

/*
 * The own-bytes plan's stream, to a primary device that takes one (a
 * program of one segment has it); on any other it goes, and the requests'
 * arenas hold the greedy plan alone.
 */
static vnpu_status load_own(struct vnpu_compiled_model *cm)
{
	struct vnpu_program *p = cm->program;
	struct vnpu_core_device *d = vnpu_segment_device(cm, 0);
	struct vnpu_slot_desc arena = cm->slots[VNPU_SLOT_ARENA];
	vnpu_status st;

	if (!p->own_cmd)
		return VNPU_OK;
	if (p->num_segments != 1 || !d->plugin->ops->exe_load_alt) {
		free(p->own_cmd);
		p->own_cmd = NULL;
		p->own_cmd_size = 0;
		p->own_arena_size = 0;
		return VNPU_OK;
	}
	cm->slots[VNPU_SLOT_ARENA].size = p->own_arena_size;
	st = d->plugin->ops->exe_load_alt(cm->exes[0], p->own_cmd, p->own_cmd_size, cm->slots,
					  vnpu_program_num_slots(p));
	cm->slots[VNPU_SLOT_ARENA] = arena;
	if (st != VNPU_OK)
		return vnpu_error_prefix(st, "loading the own-bytes arena plan on %s",
					 d->info.name);
	return VNPU_OK;
}

static vnpu_status load_segments(struct vnpu_compiled_model *cm)
{
	const struct vnpu_program *p = cm->program;
	const struct vnpu_prog_segment *seg;
	struct vnpu_core_device *d;
	uint32_t i, num_cmds, num_slots = vnpu_program_num_slots(p);
	vnpu_status st;

	/* The weights and the inputs are read only: infer never changes them. */
	cm->slots = calloc(num_slots, sizeof(*cm->slots));
	cm->exes = calloc(p->num_segments, sizeof(*cm->exes));
	if (!cm->slots || !cm->exes)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory");
	cm->slots[VNPU_SLOT_WEIGHTS].size = p->weights_size;
	cm->slots[VNPU_SLOT_ARENA] = (struct vnpu_slot_desc){ p->arena_size, true };
	for (i = 0; i < p->num_inputs; i++)
		cm->slots[p->inputs[i].slot].size = p->inputs[i].size;
	for (i = 0; i < p->num_outputs; i++)
		cm->slots[p->outputs[i].slot] = (struct vnpu_slot_desc){ p->outputs[i].size, true };

	for (i = 0; i < p->num_segments; i++) {
		seg = &p->segments[i];
		d = vnpu_segment_device(cm, i);
		st = d->plugin->ops->exe_load(d->dev, seg->cmd, seg->cmd_size, cm->slots,
					      num_slots, &num_cmds, &cm->exes[i]);
		if (st != VNPU_OK)
			return vnpu_error_prefix(st, "loading segment %u on %s", i, d->info.name);
		if (num_cmds != seg->num_cmds)
			return vnpu_error(VNPU_INVALID_ARGUMENT,
					  "segment %u has %u commands, the program says %u", i,
					  num_cmds, seg->num_cmds);
	}
	st = load_own(cm);
	if (st != VNPU_OK)
		return st;

	return load_weights(cm);
}

struct vnpu_compiled_model *vnpu_compiled_model_alloc(struct vnpu_core *core,
						       struct vnpu_core_device *primary,
						       struct vnpu_core_device *fallback,
						       const char *device_name,
						       const struct vnpu_config *config)
{
	struct vnpu_compiled_model *cm = calloc(1, sizeof(*cm));

	if (!cm) {
		vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory");
		return NULL;
	}
	atomic_init(&cm->refs, 1);
	cm->core = core;
	vnpu_core_ref(core);
	cm->primary = primary;
	cm->fallback = fallback;
	snprintf(cm->device, sizeof(cm->device), "%s", device_name);
	cm->config = *config;
	return cm;
}

vnpu_status vnpu_compiled_model_new(struct vnpu_core *core,
				    struct vnpu_core_device *primary,
				    struct vnpu_core_device *fallback,
				    const char *device_name,
				    const struct vnpu_config *config,
				    struct vnpu_program *program,
				    struct vnpu_compiled_model **out)
{
	struct vnpu_compiled_model *cm;
	vnpu_status st;

	st = check_program(program, fallback != NULL);
	if (st != VNPU_OK) {
		vnpu_program_free(program);
		return st;
	}
	cm = vnpu_compiled_model_alloc(core, primary, fallback, device_name, config);
	if (!cm) {
		vnpu_program_free(program);
		return VNPU_OUT_OF_MEMORY;
	}
	cm->program = program;
	st = make_ports(cm);
	if (st == VNPU_OK)
		st = load_segments(cm);
	if (st != VNPU_OK) {
		compiled_model_destroy(cm);
		return st;
	}
	*out = cm;
	return VNPU_OK;
}

VNPU_API void vnpu_compiled_model_free(vnpu_compiled_model *cm)
{
	if (cm && atomic_fetch_sub(&cm->refs, 1) == 1)
		compiled_model_destroy(cm);
}

VNPU_API vnpu_status vnpu_compiled_model_get_num_inputs(const vnpu_compiled_model *cm,
							uint32_t *out)
{
	if (!cm || !out)
		return vnpu_error(VNPU_INVALID_ARGUMENT,
				  "vnpu_compiled_model_get_num_inputs: NULL argument");
	*out = cm->num_inputs;
	return VNPU_OK;
}

VNPU_API vnpu_status vnpu_compiled_model_get_num_outputs(const vnpu_compiled_model *cm,
							 uint32_t *out)
{
	if (!cm || !out)
		return vnpu_error(VNPU_INVALID_ARGUMENT,
				  "vnpu_compiled_model_get_num_outputs: NULL argument");
	*out = cm->num_outputs;
	return VNPU_OK;
}

static vnpu_status get_port(const vnpu_compiled_model *cm, bool output, uint32_t index,
			    vnpu_port *out)
{
	uint32_t n;

	if (!cm || !out)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "vnpu_compiled_model_get_%s: NULL argument",
				  output ? "output" : "input");
	n = output ? cm->num_outputs : cm->num_inputs;
	if (index >= n)
		return vnpu_error(VNPU_NOT_FOUND, "no %s %u: the model has %u",
				  output ? "output" : "input", index, n);
	*out = output ? cm->outputs[index] : cm->inputs[index];
	return VNPU_OK;
}

VNPU_API vnpu_status vnpu_compiled_model_get_input(const vnpu_compiled_model *cm,
						   uint32_t index, vnpu_port *out)
{
	return get_port(cm, false, index, out);
}

VNPU_API vnpu_status vnpu_compiled_model_get_output(const vnpu_compiled_model *cm,
						    uint32_t index, vnpu_port *out)
{
	return get_port(cm, true, index, out);
}

VNPU_API vnpu_status vnpu_compiled_model_get_port_by_name(const vnpu_compiled_model *cm,
							  const char *name,
							  vnpu_port *out)
{
	uint32_t i;

	if (!cm || !name || !out)
		return vnpu_error(VNPU_INVALID_ARGUMENT,
				  "vnpu_compiled_model_get_port_by_name: NULL argument");
	for (i = 0; i < cm->num_inputs; i++) {
		if (!strcmp(cm->inputs[i].name, name)) {
			*out = cm->inputs[i];
			return VNPU_OK;
		}
	}
	for (i = 0; i < cm->num_outputs; i++) {
		if (!strcmp(cm->outputs[i].name, name)) {
			*out = cm->outputs[i];
			return VNPU_OK;
		}
	}
	return vnpu_error(VNPU_NOT_FOUND, "the model has no input or output \"%s\"", name);
}

/* ---- THROUGHPUT: how many requests keep the device busy ---- */

#define MEASURE_LONG_NS 100000000

/* Add the host and the device (wait) time of @tl's stages. */
static void stage_times(const vnpu_timeline *tl, int64_t *host, int64_t *device)
{
	uint32_t i;

	for (i = 0; i < tl->count; i++) {
		if (strcmp(tl->spans[i].kind, "stage"))
			continue;
		if (!strcmp(tl->spans[i].name, "wait"))
			*device += tl->spans[i].end_ns - tl->spans[i].start_ns;
		else
			*host += tl->spans[i].end_ns - tl->spans[i].start_ns;
	}
}

static int64_t measure_requests(struct vnpu_compiled_model *cm)
{
	const struct vnpu_device_info *info = &cm->primary->info;
	int64_t host = 0, device = 0, depth, most;
	struct vnpu_infer_request *req;
	vnpu_timeline *tl;
	uint32_t run;

	if (vnpu_compiled_model_create_infer_request(cm, &req) != VNPU_OK)
		return 0;
	/*
	 * The first run warms caches and the device up; time the next two.
	 * A first run longer than MEASURE_LONG_NS is timed alone: its device
	 * time dwarfs any warm-up, and more runs would cost seconds.
	 */
	for (run = 0; run < 3; run++) {
		if (vnpu_infer_request_infer(req) != VNPU_OK ||
		    vnpu_infer_request_get_timeline(req, &tl) != VNPU_OK)
			break;
		stage_times(tl, &host, &device);
		vnpu_timeline_free(tl);
		if (!run && host + device > MEASURE_LONG_NS)
			run = 2;
		else if (!run)
			host = device = 0;
	}
	vnpu_infer_request_free(req);
	if (run < 3)
		return 0;
	/* While one request is on the device the others do their host stages. */
	depth = 1 + (host + (device ? device : 1) - 1) / (device ? device : 1);
	most = info->tiles + 1;
	if (info->max_requests && most > info->max_requests)
		most = info->max_requests;
	if (depth > most)
		depth = most;
	return depth < 2 ? 2 : depth;
}

/*
 * OPTIMAL_NUMBER_OF_INFER_REQUESTS for THROUGHPUT: the pipeline depth that
 * keeps the device busy, from the stage times of a few runs of @cm
 * (measured once) and the device's tiles; the device's own figure when
 * the runs fail.
 */
static int64_t throughput_requests(struct vnpu_compiled_model *cm)
{
	int64_t n = atomic_load(&cm->measured_requests);

	if (!n) {
		n = measure_requests(cm);
		if (!n)
			return cm->primary->info.optimal_requests;
		atomic_store(&cm->measured_requests, n);
	}
	return n;
}

static int64_t optimal_requests(const struct vnpu_compiled_model *cm)
{
	if (cm->config.num_requests)
		return cm->config.num_requests;
	if (cm->config.perf_mode == VNPU_PERF_LATENCY)
		return 1;
	return throughput_requests((struct vnpu_compiled_model *)cm);
}

static vnpu_status execution_devices(const struct vnpu_compiled_model *cm,
				     vnpu_property_value **out)
{
	const char *names[2] = { cm->primary->info.name, NULL };
	bool primary = false, fallback = false;
	uint32_t i, n = 0;

	/* None for a model of strings: the host runs it. */
	for (i = 0; cm->program && i < cm->program->num_segments; i++) {
		if (cm->program->segments[i].target == VNPU_TARGET_FALLBACK)
			fallback = true;
		else
			primary = true;
	}
	if (primary)
		names[n++] = cm->primary->info.name;
	if (fallback)
		names[n++] = cm->fallback->info.name;
	return vnpu_prop_new(VNPU_PROPERTY_LIST, 0, NULL, names, n, NULL, NULL, out);
}

static vnpu_status int_value(int64_t v, vnpu_property_value **out)
{
	return vnpu_prop_new(VNPU_PROPERTY_INT, v, NULL, NULL, 0, NULL, NULL, out);
}

static bool program_property(const char *key)
{
	return !strcmp(key, VNPU_PROP_EXECUTION_DEVICES) || !strcmp(key, VNPU_PROP_WEIGHTS_SIZE) ||
	       !strcmp(key, VNPU_PROP_ARENA_SIZE) || !strcmp(key, VNPU_PROP_INTERMEDIATES_SIZE);
}

/*
 * A property of the program of dynamic inputs' shapes used last; before
 * the first, the primary device and sizes of 0.
 */
static vnpu_status dyn_program_property(const struct vnpu_compiled_model *cm, const char *key,
					vnpu_property_value **out)
{
	struct vnpu_compiled_model *last = vnpu_dyn_last(cm->dyn);
	const char *name = cm->primary->info.name;
	vnpu_status st;

	if (!last && !strcmp(key, VNPU_PROP_EXECUTION_DEVICES))
		return vnpu_prop_new(VNPU_PROPERTY_LIST, 0, NULL, &name, 1, NULL, NULL, out);
	if (!last && !strcmp(key, VNPU_PROP_LOADED_FROM_CACHE))
		return vnpu_prop_new(VNPU_PROPERTY_BOOL, 0, NULL, NULL, 0, NULL, NULL, out);
	if (!last)
		return int_value(0, out);
	st = vnpu_compiled_model_get_property(last, key, out);
	vnpu_compiled_model_free(last);
	return st;
}

VNPU_API vnpu_status vnpu_compiled_model_get_property(const vnpu_compiled_model *cm,
						      const char *key,
						      vnpu_property_value **out)
{
	if (!cm || !key || !out)
		return vnpu_error(VNPU_INVALID_ARGUMENT,
				  "vnpu_compiled_model_get_property: NULL argument");
	if (!vnpu_prop_find(key, VNPU_SCOPE_COMPILED))
		return vnpu_error(VNPU_NOT_FOUND, "unknown compiled model property \"%s\"", key);
	if (!strcmp(key, VNPU_PROP_SUPPORTED_PROPERTIES))
		return vnpu_prop_supported(VNPU_SCOPE_COMPILED, true, out);
	if (!strcmp(key, VNPU_PROP_OPTIMAL_NUMBER_OF_INFER_REQUESTS))
		return int_value(optimal_requests(cm), out);
	/* Of a model of dynamic inputs: whether its last program came from CACHE_DIR. */
	if (cm->dyn && !strcmp(key, VNPU_PROP_LOADED_FROM_CACHE))
		return dyn_program_property(cm, key, out);
	if (!strcmp(key, VNPU_PROP_LOADED_FROM_CACHE))
		return vnpu_prop_new(VNPU_PROPERTY_BOOL, cm->loaded_from_cache, NULL, NULL, 0,
				     NULL, NULL, out);
	if (!strcmp(key, VNPU_PROP_DYNAMIC_SHAPE_COMPILES))
		return int_value(cm->dyn ? vnpu_dyn_compiles(cm->dyn) : 0, out);
	if (cm->dyn && program_property(key))
		return dyn_program_property(cm, key, out);
	if (cm->host && program_property(key) && strcmp(key, VNPU_PROP_EXECUTION_DEVICES))
		return int_value(0, out);	/* no weights, arena or intermediates */
	if (!strcmp(key, VNPU_PROP_EXECUTION_DEVICES))
		return execution_devices(cm, out);
	if (!strcmp(key, VNPU_PROP_DEVICE))
		return vnpu_prop_string(cm->device, out);
	if (!strcmp(key, VNPU_PROP_WEIGHTS_SIZE))
		return int_value((int64_t)cm->program->weights_size, out);
	if (!strcmp(key, VNPU_PROP_ARENA_SIZE))
		return int_value((int64_t)cm->program->arena_size, out);
	if (!strcmp(key, VNPU_PROP_INTERMEDIATES_SIZE))
		return int_value((int64_t)cm->program->intermediates_size, out);
	return vnpu_config_get(&cm->config, key, out);
}

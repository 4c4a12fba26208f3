// SPDX-License-Identifier: MIT
/*
 * The core's model calls: reading (the frontend), query and compile with
 * device selection (plain devices, HETERO, AUTO), compile properties and
 * the model cache (CACHE_DIR).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <vnpu/vnpu_model.h>

#include "dynamic.h"
#include "host_model.h"
#include "runtime.h"
#include "model/ir.h"
#include "compiler/compiler.h"

/* The devices a compile runs on. */
struct target {
	struct vnpu_core_device *primary;
	struct vnpu_core_device *fallback;	/* the CPU, or NULL */
	char name[80];
};

VNPU_API vnpu_status vnpu_core_read_model(vnpu_core *core, const char *path,
					  vnpu_model **out)
{
	if (!core || !path || !out)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "vnpu_core_read_model: NULL argument");
	return vnpu_model_read_file(path, out);
}

VNPU_API vnpu_status vnpu_core_read_model_from_memory(vnpu_core *core, const void *data,
						      size_t size, vnpu_model **out)
{
	if (!core || !data || !out)
		return vnpu_error(VNPU_INVALID_ARGUMENT,
				  "vnpu_core_read_model_from_memory: NULL argument");
	return vnpu_model_read_memory(data, size, out);
}

/* The first device that is not the CPU (the NPU), else the CPU. */
static struct vnpu_core_device *best_device(struct vnpu_core *core)
{
	uint32_t i;

	for (i = 0; i < core->num_devices; i++) {
		if (&core->devices[i] != core->cpu)
			return &core->devices[i];
	}
	return core->cpu;
}

static vnpu_status parse_hetero(struct vnpu_core *core, const char *list,
				struct target *t)
{
	char buf[80], *second;

	if (strlen(list) >= sizeof(buf) || !*list)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "HETERO: needs a list of devices");
	strcpy(buf, list);
	second = strchr(buf, ',');
	if (second)
		*second++ = '\0';
	if (second && strchr(second, ','))
		return vnpu_error(VNPU_UNSUPPORTED,
				  "HETERO takes two devices: the first and the CPU");
	t->primary = vnpu_core_find_device(core, buf);
	if (!t->primary)
		return VNPU_NOT_FOUND;
	if (second) {
		t->fallback = vnpu_core_find_device(core, second);
		if (!t->fallback)
			return VNPU_NOT_FOUND;
		if (t->fallback != core->cpu)
			return vnpu_error(VNPU_UNSUPPORTED,
					  "HETERO falls back only to the CPU, not to %s", second);
		if (t->fallback == t->primary)
			t->fallback = NULL;
	}
	return VNPU_OK;
}

static vnpu_status parse_target(struct vnpu_core *core, const char *device,
				struct target *t)
{
	vnpu_status st = VNPU_OK;

	memset(t, 0, sizeof(*t));
	if (!strcmp(device, "AUTO")) {
		t->primary = best_device(core);
		if (t->primary != core->cpu)
			t->fallback = core->cpu;
	} else if (!strncmp(device, "HETERO:", 7)) {
		st = parse_hetero(core, device + 7, t);
	} else {
		t->primary = vnpu_core_find_device(core, device);
		if (!t->primary)
			st = VNPU_NOT_FOUND;
	}
	if (st != VNPU_OK)
		return st;
	if (t->fallback)
		snprintf(t->name, sizeof(t->name), "HETERO:%s,%s", t->primary->info.name,
			 t->fallback->info.name);
	else
		snprintf(t->name, sizeof(t->name), "%s", t->primary->info.name);
	return VNPU_OK;
}

/* The primary device's config overridden by @properties (key, value, ...). */
static vnpu_status compile_config(struct vnpu_core *core, const struct target *t,
				  const char *const *properties, struct vnpu_config *cfg)
{
	const struct vnpu_prop_def *def;
	vnpu_status st;
	size_t i;

	pthread_mutex_lock(&core->lock);
	*cfg = t->primary->config;
	strcpy(cfg->cache_dir, core->cache_dir);
	pthread_mutex_unlock(&core->lock);
	for (i = 0; properties && properties[i]; i += 2) {
		if (!properties[i + 1])
			return vnpu_error(VNPU_INVALID_ARGUMENT,
					  "compile property %s has no value", properties[i]);
		def = vnpu_prop_find(properties[i], VNPU_SCOPE_COMPILED);
		if (!def || !def->writable)
			return vnpu_error(VNPU_NOT_FOUND, "\"%s\" is not a compile property",
					  properties[i]);
		st = vnpu_config_set_text(cfg, def, properties[i + 1]);
		if (st != VNPU_OK)
			return st;
	}
	return VNPU_OK;
}

/* ---- the model cache ---- */

static uint64_t hash_str(uint64_t h, const char *s)
{
	return vnpu_fnv1a(h, s ? s : "", (s ? strlen(s) : 0) + 1);
}

static uint64_t hash_tinfo(uint64_t h, const struct vnpu_tinfo *t)
{
	int64_t elems = vnpu_tinfo_elems(t);

	h = vnpu_fnv1a(h, &t->type, sizeof(t->type));
	h = vnpu_fnv1a(h, &t->rank, sizeof(t->rank));
	if (t->rank > 0)
		h = vnpu_fnv1a(h, t->dims, (size_t)t->rank * sizeof(t->dims[0]));
	if (t->data && elems > 0)
		h = vnpu_fnv1a(h, t->data, (size_t)elems * vnpu_element_type_size(t->type));
	/* A frozen sequence (its elements' values) or optional without a value. */
	h = vnpu_fnv1a(h, &t->kind, sizeof(t->kind));
	h = vnpu_fnv1a(h, &t->num_elems, sizeof(t->num_elems));
	if (t->elems && t->num_elems > 0)
		h = vnpu_fnv1a(h, t->elems, (size_t)t->num_elems * sizeof(t->elems[0]));
	return h;
}

static uint64_t hash_graph(uint64_t h, const struct vnpu_graph *g);

static uint64_t hash_attr(uint64_t h, const struct vnpu_attr *a)
{
	size_t i;

	h = hash_str(h, a->name);
	h = vnpu_fnv1a(h, &a->type, sizeof(a->type));
	h = vnpu_fnv1a(h, &a->f, sizeof(a->f));
	h = vnpu_fnv1a(h, &a->i, sizeof(a->i));
	h = hash_str(h, a->s);
	h = vnpu_fnv1a(h, &a->n, sizeof(a->n));
	if (a->floats)
		h = vnpu_fnv1a(h, a->floats, a->n * sizeof(float));
	if (a->ints)
		h = vnpu_fnv1a(h, a->ints, a->n * sizeof(int64_t));
	for (i = 0; a->strings && i < a->n; i++)
		h = hash_str(h, a->strings[i]);
	if (a->type == VNPU_ATTR_TENSOR)
		h = hash_tinfo(h, &a->t);
	if (a->g)
		h = hash_graph(h, a->g);
	return h;
}

static uint64_t hash_graph(uint64_t h, const struct vnpu_graph *g)
{
	const struct vnpu_node *n;
	uint32_t i, j;

	for (i = 0; i < g->num_nodes; i++) {
		n = &g->nodes[i];
		h = hash_str(hash_str(hash_str(h, n->name), n->op), n->domain);
		h = vnpu_fnv1a(h, n->inputs, n->num_inputs * sizeof(int32_t));
		h = vnpu_fnv1a(h, n->outputs, n->num_outputs * sizeof(int32_t));
		for (j = 0; j < n->num_attrs; j++)
			h = hash_attr(h, &n->attrs[j]);
	}
	h = vnpu_fnv1a(h, g->inputs, g->num_inputs * sizeof(int32_t));
	return vnpu_fnv1a(h, g->outputs, g->num_outputs * sizeof(int32_t));
}

/* What a compile depends on: the model, the devices, the properties. */
static uint64_t cache_key(const struct vnpu_model *m, const struct target *t,
			  const char *props)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	uint32_t i;

	h = hash_str(h, vnpu_get_version());
	h = hash_str(h, t->name);
	h = hash_str(h, t->primary->info.architecture);
	h = hash_str(h, props);
	h = vnpu_fnv1a(h, &m->opset, sizeof(m->opset));
	for (i = 0; i < m->num_values; i++) {
		h = hash_str(h, m->values[i].name);
		h = vnpu_fnv1a(h, &m->values[i].kind, sizeof(m->values[i].kind));
		h = hash_tinfo(h, &m->values[i].info);
	}
	return hash_graph(h, &m->main);
}

static vnpu_status cache_path(const struct vnpu_model *m, const struct target *t,
			      const struct vnpu_config *cfg, char *path, size_t size)
{
	char *props;
	vnpu_status st = vnpu_config_text(cfg, &props);

	if (st != VNPU_OK)
		return st;
	if (snprintf(path, size, "%s/%016llx.vnpublob", cfg->cache_dir,
		     (unsigned long long)cache_key(m, t, props)) >= (int)size) {
		free(props);
		return vnpu_error(VNPU_INVALID_ARGUMENT, "CACHE_DIR is too long");
	}
	free(props);
	return VNPU_OK;
}

/* A blob in the cache, or VNPU_NOT_FOUND (an unusable one is a miss too). */
static vnpu_status cache_load(struct vnpu_core *core, const char *path,
			      const struct target *t, struct vnpu_compiled_model **out)
{
	vnpu_status st;
	size_t size;
	void *data;

	if (vnpu_read_file(path, &data, &size) != VNPU_OK)
		return VNPU_NOT_FOUND;
	st = vnpu_blob_read(core, data, size, t->primary->info.name, out);
	free(data);
	if (st != VNPU_OK) {
		vnpu_log(VNPU_LOG_WARNING, "ignoring cached blob %s: %s", path,
			 vnpu_last_error());
		return VNPU_NOT_FOUND;
	}
	snprintf((*out)->device, sizeof((*out)->device), "%s", t->name);
	(*out)->loaded_from_cache = true;
	return VNPU_OK;
}

/* Store a blob; the compile succeeded already, so failures only warn. */
static void cache_store(const struct vnpu_compiled_model *cm, const char *path)
{
	size_t size;
	void *blob;

	if (mkdir(cm->config.cache_dir, 0755) && errno != EEXIST) {
		vnpu_log(VNPU_LOG_WARNING, "cannot create CACHE_DIR %s", cm->config.cache_dir);
		return;
	}
	if (vnpu_blob_write(cm, &blob, &size) == VNPU_OK) {
		if (vnpu_write_file_atomic(path, blob, size) != VNPU_OK)
			vnpu_log(VNPU_LOG_WARNING, "%s", vnpu_last_error());
		free(blob);
	}
}

/* ---- compile and query ---- */

/*
 * A model was read (parsed) before it is compiled: what inference refuses
 * only now, with the values it folds at compile time (a Reshape's shape
 * computed from a large constant, a loop's body unrolled), is the model
 * refusing the shapes it was given, not a file that cannot be read.
 */
static vnpu_status compile_status(vnpu_status st)
{
	return st == VNPU_PARSE_ERROR ? VNPU_INVALID_ARGUMENT : st;
}

vnpu_status vnpu_compile_static(struct vnpu_core *core, struct vnpu_core_device *primary,
				struct vnpu_core_device *fallback, const char *device_name,
				const struct vnpu_config *cfg,
				const struct vnpu_compile_options *opts,
				const struct vnpu_model *model, struct vnpu_compiled_model **out)
{
	struct target t = { .primary = primary, .fallback = fallback };
	struct vnpu_program *program = NULL;
	char path[1024] = "";
	vnpu_status st;

	snprintf(t.name, sizeof(t.name), "%s", device_name);
	if (cfg->cache_dir[0]) {
		st = cache_path(model, &t, cfg, path, sizeof(path));
		if (st != VNPU_OK)
			return st;
		if (cache_load(core, path, &t, out) == VNPU_OK)
			return VNPU_OK;
	}
	st = vnpu_compile(model, opts, &program);
	if (st != VNPU_OK)
		return compile_status(st);
	st = vnpu_compiled_model_new(core, primary, fallback, device_name, cfg, program, out);
	if (st == VNPU_OK && path[0])
		cache_store(*out, path);
	return st;
}

static void compile_options(const struct target *t, const struct vnpu_config *cfg,
			    struct vnpu_compile_options *o)
{
	memset(o, 0, sizeof(*o));
	o->primary_layer_ops = t->primary->info.layer_ops;
	o->primary_dtypes = t->primary->info.dtypes;
	o->allow_fallback = t->fallback != NULL;
	o->strict = cfg->hetero_strict;
	o->inference_precision = cfg->precision;
	/* The device picks one of two arena plans as it runs (cpu_plugin.c). */
	o->own_plan = t->primary->plugin->ops->exe_load_alt && t->primary->info.tiles >= 2;
}

VNPU_API vnpu_status vnpu_core_compile_model(vnpu_core *core, const vnpu_model *model,
					     const char *device,
					     const char *const *properties,
					     vnpu_compiled_model **out)
{
	struct vnpu_compile_options opts;
	struct vnpu_config cfg;
	struct target t;
	vnpu_status st;

	if (!core || !model || !device || !out)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "vnpu_core_compile_model: NULL argument");
	st = parse_target(core, device, &t);
	if (st == VNPU_OK)
		st = compile_config(core, &t, properties, &cfg);
	if (st != VNPU_OK)
		return st;
	compile_options(&t, &cfg, &opts);
	if (vnpu_host_wanted(model)) {
		st = vnpu_host_compiled_model_new(core, t.primary, t.name, &cfg, model, out);
		return st ? vnpu_error_prefix(st, "compiling for %s", t.name) : st;
	}
	if (vnpu_dyn_wanted(model)) {
		st = vnpu_dyn_compiled_model_new(core, t.primary, t.fallback, t.name, &cfg, &opts,
						 model, out);
		return st ? vnpu_error_prefix(st, "compiling for %s", t.name) : st;
	}
	st = vnpu_compile_static(core, t.primary, t.fallback, t.name, &cfg, &opts, model, out);
	return st ? vnpu_error_prefix(st, "compiling for %s", t.name) : st;
}

/* One report entry per node, with copies of every string. */
static vnpu_status make_report(const struct vnpu_query_result *r, const struct target *t,
			       vnpu_query_report **out)
{
	size_t size = sizeof(vnpu_query_report) + r->num_nodes * sizeof(vnpu_query_entry);
	const struct vnpu_query_node *n;
	vnpu_query_report *report;
	vnpu_query_entry *e;
	const char *dev;
	char *pool;
	uint32_t i;

	for (i = 0; i < r->num_nodes; i++)
		size += strlen(r->nodes[i].name) + strlen(r->nodes[i].op) +
			strlen(r->nodes[i].reason) + 3 + sizeof(t->primary->info.name);
	report = calloc(1, size);
	if (!report)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory");
	e = (vnpu_query_entry *)(report + 1);
	pool = (char *)(e + r->num_nodes);
	for (i = 0; i < r->num_nodes; i++) {
		n = &r->nodes[i];
		dev = n->place == VNPU_QUERY_PRIMARY || n->place == VNPU_QUERY_FOLDED ?
		      t->primary->info.name :
		      n->place == VNPU_QUERY_FALLBACK && t->fallback ? t->fallback->info.name :
		      NULL;
		e[i].node = pool;
		pool = stpcpy(pool, n->name) + 1;
		e[i].op_type = pool;
		pool = stpcpy(pool, n->op) + 1;
		e[i].reason = pool;
		pool = stpcpy(pool, n->reason) + 1;
		if (dev) {
			e[i].device = pool;
			pool = stpcpy(pool, dev) + 1;
		}
	}
	report->count = r->num_nodes;
	report->entries = e;
	*out = report;
	return VNPU_OK;
}

VNPU_API vnpu_status vnpu_core_query_model(vnpu_core *core, const vnpu_model *model,
					   const char *device, vnpu_query_report **out)
{
	struct vnpu_compile_options opts;
	struct vnpu_query_result *r;
	struct vnpu_config cfg;
	struct target t;
	vnpu_status st;

	if (!core || !model || !device || !out)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "vnpu_core_query_model: NULL argument");
	st = parse_target(core, device, &t);
	if (st == VNPU_OK)
		st = compile_config(core, &t, NULL, &cfg);
	if (st != VNPU_OK)
		return st;
	compile_options(&t, &cfg, &opts);
	opts.strict = false;
	st = vnpu_query_model(model, &opts, &r);
	if (st != VNPU_OK)
		return vnpu_error_prefix(compile_status(st), "querying for %s", t.name);
	st = make_report(r, &t, out);
	vnpu_query_result_free(r);
	return st;
}

VNPU_API void vnpu_query_report_free(vnpu_query_report *report)
{
	free(report);
}

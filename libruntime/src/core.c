// SPDX-License-Identifier: MIT
/*
 * The core: loads the device plugins, names their devices, and answers
 * the global and per-device properties.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dynamic.h"
#include "runtime.h"

#ifndef VNPU_PLUGIN_DIR
#define VNPU_PLUGIN_DIR "/usr/local/lib/vnpu"
#endif
#ifndef VNPU_VERSION
#define VNPU_VERSION "0.0.0"
#endif

/* The plugins the core knows, in the order their devices are listed. */
static const char *const plugin_names[] = { "cpu", "npu" };

const struct vnpu_host vnpu_host_services = {
	.abi_version = VNPU_PLUGIN_ABI_VERSION,
	.error = vnpu_error,
	.error_prefix = vnpu_error_prefix,
	.log = vnpu_log,
};

VNPU_API const char *vnpu_get_version(void)
{
	return VNPU_VERSION;
}

VNPU_API void vnpu_free(void *ptr)
{
	free(ptr);
}

/* ---- plugin loading ---- */

static void *try_dlopen(const char *dir, size_t dir_len, const char *name)
{
	char path[PATH_MAX];
	void *handle;

	if (snprintf(path, sizeof(path), "%.*s/libvnpu_%s.so", (int)dir_len, dir, name) >=
	    (int)sizeof(path))
		return NULL;
	handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (handle)
		vnpu_log(VNPU_LOG_DEBUG, "loaded plugin %s", path);
	else if (access(path, F_OK) == 0)
		vnpu_log(VNPU_LOG_WARNING, "cannot load %s: %s", path, dlerror());
	return handle;
}

/* The folder of libvnpu.so itself (or of the program it is linked into). */
static size_t library_dir(char *buf, size_t size)
{
	Dl_info info;
	const char *slash;

	if (!dladdr((void *)vnpu_core_create, &info) || !info.dli_fname)
		return 0;
	slash = strrchr(info.dli_fname, '/');
	if (!slash || (size_t)(slash - info.dli_fname) >= size)
		return 0;
	memcpy(buf, info.dli_fname, (size_t)(slash - info.dli_fname));
	buf[slash - info.dli_fname] = '\0';
	return (size_t)(slash - info.dli_fname);
}

/*
 * Search: $VNPU_PLUGIN_PATH, then next to libvnpu.so in the install tree
 * (<libdir>/vnpu) and the build tree (plugins/<name>), then the install
 * folder.
 */
static void *find_plugin(const char *name)
{
	const char *path = getenv("VNPU_PLUGIN_PATH");
	char dir[PATH_MAX], sub[PATH_MAX + 64];
	void *handle = NULL;
	size_t len;

	while (path && *path && !handle) {
		len = strcspn(path, ":");
		if (len)
			handle = try_dlopen(path, len, name);
		path += len + (path[len] == ':');
	}
	len = library_dir(dir, sizeof(dir));
	if (!handle && len) {
		snprintf(sub, sizeof(sub), "%s/vnpu", dir);
		handle = try_dlopen(sub, strlen(sub), name);
		snprintf(sub, sizeof(sub), "%s/plugins/%s", dir, name);
		if (!handle)
			handle = try_dlopen(sub, strlen(sub), name);
	}
	if (!handle)
		handle = try_dlopen(VNPU_PLUGIN_DIR, strlen(VNPU_PLUGIN_DIR), name);
	return handle;
}

static void load_plugin(struct vnpu_core *core, const char *name)
{
	vnpu_plugin_entry_fn entry;
	struct vnpu_plugin *plugin;
	void *handle = find_plugin(name);

	if (!handle) {
		vnpu_log(VNPU_LOG_INFO, "no %s plugin found", name);
		return;
	}
	entry = (vnpu_plugin_entry_fn)(uintptr_t)dlsym(handle, VNPU_PLUGIN_ENTRY);
	if (!entry || entry(&vnpu_host_services, &plugin) != VNPU_OK) {
		vnpu_log(VNPU_LOG_WARNING, "the %s plugin did not start: %s", name,
			 entry ? vnpu_last_error() : "no entry point");
		dlclose(handle);
		return;
	}
	core->handles[core->num_plugins] = handle;
	core->plugins[core->num_plugins++] = plugin;
}

static vnpu_status list_devices(struct vnpu_core *core)
{
	struct vnpu_core_device *d;
	uint32_t i, j, n = 0;

	for (i = 0; i < core->num_plugins; i++)
		n += core->plugins[i]->num_devices;
	core->devices = calloc(n ? n : 1, sizeof(*core->devices));
	if (!core->devices)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory");
	for (i = 0; i < core->num_plugins; i++) {
		for (j = 0; j < core->plugins[i]->num_devices; j++) {
			d = &core->devices[core->num_devices++];
			d->plugin = core->plugins[i];
			d->dev = core->plugins[i]->devices[j];
			d->plugin->ops->get_info(d->dev, &d->info);
			d->config.precision = VNPU_TYPE_F32;
			d->config.shape_cache_size = VNPU_SHAPE_CACHE_DEFAULT;
			if (!strcmp(d->plugin->type, "CPU") && !core->cpu)
				core->cpu = d;
		}
	}
	return VNPU_OK;
}

static void core_destroy(struct vnpu_core *core)
{
	uint32_t i;

	for (i = core->num_plugins; i-- > 0;) {
		core->plugins[i]->ops->destroy(core->plugins[i]);
		dlclose(core->handles[i]);
	}
	free(core->devices);
	pthread_mutex_destroy(&core->lock);
	free(core);
}

VNPU_API vnpu_status vnpu_core_create(vnpu_core **out)
{
	struct vnpu_core *core;
	vnpu_status st;
	size_t i;

	if (!out)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "vnpu_core_create: out is NULL");
	core = calloc(1, sizeof(*core));
	if (!core)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory");
	atomic_init(&core->refs, 1);
	pthread_mutex_init(&core->lock, NULL);
	for (i = 0; i < sizeof(plugin_names) / sizeof(plugin_names[0]); i++)
		load_plugin(core, plugin_names[i]);
	if (!core->num_plugins) {
		core_destroy(core);
		return vnpu_error(VNPU_NOT_FOUND,
				  "no device plugin found (set VNPU_PLUGIN_PATH to the folder of libvnpu_cpu.so)");
	}
	st = list_devices(core);
	if (st != VNPU_OK) {
		core_destroy(core);
		return st;
	}
	*out = core;
	return VNPU_OK;
}

void vnpu_core_ref(struct vnpu_core *core)
{
	atomic_fetch_add(&core->refs, 1);
}

void vnpu_core_unref(struct vnpu_core *core)
{
	if (core && atomic_fetch_sub(&core->refs, 1) == 1)
		core_destroy(core);
}

VNPU_API void vnpu_core_free(vnpu_core *core)
{
	vnpu_core_unref(core);
}

/*
 * Why device @name is absent when its plugin says so (no vnpu module, no
 * permission on the render node, another uAPI), or when the plugin of
 * its type did not load; NULL when nothing is known.
 */
static const char *absent_reason(const struct vnpu_core *core, const char *name)
{
	const struct vnpu_plugin *p;
	uint32_t i;

	for (i = 0; i < core->num_plugins; i++) {
		p = core->plugins[i];
		if (!strncmp(name, p->type, strlen(p->type)))
			return p->num_devices ? NULL : p->absent_reason;
	}
	if (!strncmp(name, "NPU", 3))
		return "the NPU plugin (libvnpu_npu.so) was not found or did not load (VNPU_LOG_LEVEL=INFO says which)";
	return NULL;
}

struct vnpu_core_device *vnpu_core_find_device(struct vnpu_core *core,
					       const char *name)
{
	const char *why;
	uint32_t i;

	if (!strcmp(name, "NPU"))
		name = "NPU.0";
	for (i = 0; i < core->num_devices; i++) {
		if (!strcmp(core->devices[i].info.name, name))
			return &core->devices[i];
	}
	why = absent_reason(core, name);
	vnpu_error(VNPU_NOT_FOUND, "no device \"%s\" (see AVAILABLE_DEVICES)%s%s", name,
		   why ? ": " : "", why ? why : "");
	return NULL;
}

VNPU_API vnpu_status vnpu_core_get_available_devices(vnpu_core *core,
						     char ***out,
						     uint32_t *out_count)
{
	size_t size;
	char **names;
	char *pool;
	uint32_t i;

	if (!core || !out || !out_count)
		return vnpu_error(VNPU_INVALID_ARGUMENT,
				  "vnpu_core_get_available_devices: NULL argument");
	size = core->num_devices * sizeof(char *) + 1;
	for (i = 0; i < core->num_devices; i++)
		size += strlen(core->devices[i].info.name) + 1;
	names = malloc(size);
	if (!names)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory");
	pool = (char *)(names + core->num_devices);
	for (i = 0; i < core->num_devices; i++) {
		names[i] = pool;
		pool = stpcpy(pool, core->devices[i].info.name) + 1;
	}
	*out = names;
	*out_count = core->num_devices;
	return VNPU_OK;
}

/* ---- properties ---- */

static vnpu_status devices_value(struct vnpu_core *core, const char *type,
				 vnpu_property_value **out)
{
	const char *names[64];
	uint32_t i, n = 0;

	for (i = 0; i < core->num_devices && n < 64; i++) {
		if (!type || !strcmp(core->devices[i].plugin->type, type))
			names[n++] = core->devices[i].info.name;
	}
	return vnpu_prop_new(VNPU_PROPERTY_LIST, 0, NULL, names, n, NULL, NULL, out);
}

static vnpu_status capabilities_value(const char *caps, vnpu_property_value **out)
{
	char buf[sizeof(((struct vnpu_device_info *)0)->capabilities)];
	const char *items[32];
	uint32_t n = 0;
	char *save, *tok;

	snprintf(buf, sizeof(buf), "%s", caps);
	for (tok = strtok_r(buf, " ", &save); tok && n < 32; tok = strtok_r(NULL, " ", &save))
		items[n++] = tok;
	return vnpu_prop_new(VNPU_PROPERTY_LIST, 0, NULL, items, n, NULL, NULL, out);
}

static vnpu_status get_global(struct vnpu_core *core, const char *key,
			      vnpu_property_value **out)
{
	vnpu_status st;

	if (!strcmp(key, VNPU_PROP_SUPPORTED_PROPERTIES))
		return vnpu_prop_supported(VNPU_SCOPE_GLOBAL, false, out);
	if (!strcmp(key, VNPU_PROP_AVAILABLE_DEVICES))
		return devices_value(core, NULL, out);
	if (!strcmp(key, VNPU_PROP_VERSION))
		return vnpu_prop_string(VNPU_VERSION, out);
	if (!strcmp(key, VNPU_PROP_LOG_LEVEL))
		return vnpu_prop_string(vnpu_log_level_str(), out);
	if (!strcmp(key, VNPU_PROP_CACHE_DIR)) {
		pthread_mutex_lock(&core->lock);
		st = vnpu_prop_string(core->cache_dir, out);
		pthread_mutex_unlock(&core->lock);
		return st;
	}
	return vnpu_error(VNPU_NOT_FOUND, "unknown global property \"%s\"", key);
}

/*
 * The property scopes of device @d: telemetry on devices that report it,
 * the thread count on those that set it.
 */
static unsigned int device_scope(const struct vnpu_core_device *d)
{
	return VNPU_SCOPE_DEVICE | (d->plugin->ops->get_stats ? VNPU_SCOPE_TELEMETRY : 0) |
	       (d->plugin->ops->set_threads ? VNPU_SCOPE_THREADS : 0);
}

/* A telemetry key of @d, read from the device now; NOT_FOUND when not one. */
static vnpu_status get_telemetry(struct vnpu_core_device *d, const char *key,
				 vnpu_property_value **out)
{
	static const struct {
		const char *key;
		size_t offset;
	} u64_keys[] = {
#define STAT(k, f) { k, offsetof(struct vnpu_device_stats, f) }
		STAT(VNPU_PROP_DEVICE_BUSY_TIME_NS, busy_ns),
		STAT(VNPU_PROP_DEVICE_JOBS_SUBMITTED, jobs_submitted),
		STAT(VNPU_PROP_DEVICE_JOBS_COMPLETED, jobs_completed),
		STAT(VNPU_PROP_DEVICE_JOBS_FAILED, jobs_failed),
		STAT(VNPU_PROP_DEVICE_JOBS_TIMED_OUT, jobs_timed_out),
		STAT(VNPU_PROP_DEVICE_JOBS_CANCELLED, jobs_cancelled),
		STAT(VNPU_PROP_DEVICE_RESETS, resets),
		STAT(VNPU_PROP_DEVICE_MEMORY_USED, memory_used),
		STAT(VNPU_PROP_DEVICE_MEMORY_LIMIT, memory_limit),
		STAT(VNPU_PROP_DEVICE_BUFFERS, buffers),
		STAT(VNPU_PROP_DEVICE_BYTES_UPLOADED, bytes_uploaded),
		STAT(VNPU_PROP_DEVICE_BYTES_DOWNLOADED, bytes_downloaded),
		STAT(VNPU_PROP_DEVICE_CLIENTS, clients),
#undef STAT
	};
	struct vnpu_device_stats stats;
	uint64_t value;
	vnpu_status st;
	size_t i;

	for (i = 0; i < sizeof(u64_keys) / sizeof(u64_keys[0]); i++) {
		if (!strcmp(u64_keys[i].key, key))
			break;
	}
	if (!(device_scope(d) & VNPU_SCOPE_TELEMETRY) ||
	    (i == sizeof(u64_keys) / sizeof(u64_keys[0]) &&
	     strcmp(key, VNPU_PROP_DEVICE_UTILIZATION)))
		return VNPU_NOT_FOUND;
	memset(&stats, 0, sizeof(stats));
	st = d->plugin->ops->get_stats(d->dev, &stats);
	if (st != VNPU_OK)
		return st;
	if (i < sizeof(u64_keys) / sizeof(u64_keys[0]))
		memcpy(&value, (const char *)&stats + u64_keys[i].offset, sizeof(value));
	else
		value = (stats.utilization + 5) / 10;	/* thousandths to % */
	if (value > INT64_MAX)
		value = INT64_MAX;
	return vnpu_prop_new(VNPU_PROPERTY_INT, (int64_t)value, NULL, NULL, 0, NULL, NULL, out);
}

static vnpu_status get_device(struct vnpu_core *core, struct vnpu_core_device *d,
			      const char *key, vnpu_property_value **out)
{
	const struct vnpu_device_info *info = &d->info;
	uint32_t range[3] = { 1, info->max_requests, 1 };
	uint32_t threads;
	vnpu_status st;

	if (!strcmp(key, VNPU_PROP_SUPPORTED_PROPERTIES))
		return vnpu_prop_supported(device_scope(d), false, out);
	if (!strcmp(key, VNPU_PROP_AVAILABLE_DEVICES))
		return devices_value(core, d->plugin->type, out);
	if (!strcmp(key, VNPU_PROP_FULL_DEVICE_NAME)) {
		pthread_mutex_lock(&core->lock);	/* it says the thread count */
		st = vnpu_prop_string(info->full_name, out);
		pthread_mutex_unlock(&core->lock);
		return st;
	}
	if (!strcmp(key, VNPU_PROP_DEVICE_ARCHITECTURE))
		return vnpu_prop_string(info->architecture, out);
	if (!strcmp(key, VNPU_PROP_DEVICE_VERSION))
		return vnpu_prop_string(info->device_version, out);
	if (!strcmp(key, VNPU_PROP_DRIVER_VERSION))
		return vnpu_prop_string(info->driver_version, out);
	if (!strcmp(key, VNPU_PROP_DEVICE_ID))
		return vnpu_prop_string(info->device_id, out);
	if (!strcmp(key, VNPU_PROP_OPTIMIZATION_CAPABILITIES))
		return capabilities_value(info->capabilities, out);
	if (!strcmp(key, VNPU_PROP_RANGE_FOR_ASYNC_INFER_REQUESTS))
		return vnpu_prop_new(VNPU_PROPERTY_RANGE, 0, range, NULL, 0, NULL, NULL, out);
	st = get_telemetry(d, key, out);
	if (st != VNPU_NOT_FOUND)
		return st;
	if ((device_scope(d) & VNPU_SCOPE_THREADS) &&
	    !strcmp(key, VNPU_PROP_INFERENCE_NUM_THREADS)) {
		pthread_mutex_lock(&core->lock);
		threads = info->tiles;		/* set_threads() rewrites it */
		pthread_mutex_unlock(&core->lock);
		return vnpu_prop_new(VNPU_PROPERTY_INT, threads, NULL, NULL, 0, NULL, NULL, out);
	}
	pthread_mutex_lock(&core->lock);
	st = vnpu_config_get(&d->config, key, out);
	pthread_mutex_unlock(&core->lock);
	if (st == VNPU_NOT_FOUND || !vnpu_prop_find(key, VNPU_SCOPE_DEVICE))
		return vnpu_error(VNPU_NOT_FOUND, "unknown property \"%s\" of device %s", key,
				  info->name);
	return st;
}

VNPU_API vnpu_status vnpu_core_get_property(vnpu_core *core, const char *device,
					    const char *key,
					    vnpu_property_value **out)
{
	struct vnpu_core_device *d;

	if (!core || !key || !out)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "vnpu_core_get_property: NULL argument");
	if (!device)
		return get_global(core, key, out);
	d = vnpu_core_find_device(core, device);
	if (!d)
		return VNPU_NOT_FOUND;
	return get_device(core, d, key, out);
}

/* INFERENCE_NUM_THREADS of @d; the device's info (name, tiles) follows. */
static vnpu_status set_threads(struct vnpu_core *core, struct vnpu_core_device *d,
			       int64_t n)
{
	vnpu_status st;

	if (n < 0 || n > VNPU_MAX_THREADS)
		return vnpu_error(VNPU_INVALID_ARGUMENT,
				  "property %s: %lld is out of range (1..%d, 0 for the default)",
				  VNPU_PROP_INFERENCE_NUM_THREADS, (long long)n, VNPU_MAX_THREADS);
	pthread_mutex_lock(&core->lock);
	st = d->plugin->ops->set_threads(d->dev, (uint32_t)n);
	if (st == VNPU_OK)
		d->plugin->ops->get_info(d->dev, &d->info);
	pthread_mutex_unlock(&core->lock);
	return st;
}

static vnpu_status set_property(struct vnpu_core *core, const char *device,
				const char *key, const vnpu_property_value *value)
{
	struct vnpu_core_device *d = NULL;
	const struct vnpu_prop_def *def;
	struct vnpu_config cfg;
	vnpu_status st;

	if (device) {
		d = vnpu_core_find_device(core, device);
		if (!d)
			return VNPU_NOT_FOUND;
	}
	def = vnpu_prop_find(key, d ? device_scope(d) : VNPU_SCOPE_GLOBAL);
	if (!def)
		return vnpu_error(VNPU_NOT_FOUND, "unknown property \"%s\"%s%s", key,
				  d ? " of device " : "", d ? d->info.name : "");
	if (!def->writable)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "property %s is read only", key);
	if (value->type != def->type)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "property %s takes another type of value",
				  key);
	if (!strcmp(key, VNPU_PROP_LOG_LEVEL))
		return value->text ? vnpu_log_level_set(value->text) :
		       vnpu_error(VNPU_INVALID_ARGUMENT, "property %s: no text", key);
	if (def->scopes == VNPU_SCOPE_THREADS)
		return set_threads(core, d, value->integer);

	pthread_mutex_lock(&core->lock);
	if (d) {
		cfg = d->config;
		st = vnpu_config_set(&cfg, def, value);
		if (st == VNPU_OK)
			d->config = cfg;
	} else {
		/* CACHE_DIR, the one other global RW key. */
		memset(&cfg, 0, sizeof(cfg));
		st = vnpu_config_set(&cfg, def, value);
		if (st == VNPU_OK)
			strcpy(core->cache_dir, cfg.cache_dir);
	}
	pthread_mutex_unlock(&core->lock);
	return st;
}

VNPU_API vnpu_status vnpu_core_set_property(vnpu_core *core, const char *device,
					    const char *key,
					    const vnpu_property_value *value)
{
	if (!core || !key || !value)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "vnpu_core_set_property: NULL argument");
	return set_property(core, device, key, value);
}

VNPU_API vnpu_status vnpu_core_set_property_str(vnpu_core *core, const char *device,
						const char *key, const char *text)
{
	const struct vnpu_prop_def *def;
	vnpu_property_value v;
	vnpu_status st;

	if (!core || !key || !text)
		return vnpu_error(VNPU_INVALID_ARGUMENT,
				  "vnpu_core_set_property_str: NULL argument");
	def = vnpu_prop_find(key, device ? VNPU_SCOPE_DEVICE | VNPU_SCOPE_THREADS :
				      VNPU_SCOPE_GLOBAL);
	if (!def)
		return set_property(core, device, key, &(vnpu_property_value){ 0 });
	if (!def->writable)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "property %s is read only", key);
	st = vnpu_value_from_text(def, text, &v);
	return st ? st : set_property(core, device, key, &v);
}

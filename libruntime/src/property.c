// SPDX-License-Identifier: MIT
/*
 * Properties: the table of keys (type, scope, RO/RW, allowed values), the
 * one-allocation property values handed to callers, and parsing of the
 * text forms into a struct vnpu_config.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dynamic.h"
#include "runtime.h"

#define G VNPU_SCOPE_GLOBAL
#define D VNPU_SCOPE_DEVICE
#define C VNPU_SCOPE_COMPILED
#define T VNPU_SCOPE_TELEMETRY
#define N VNPU_SCOPE_THREADS

static const char *const perf_modes[] = {
	"LATENCY", "THROUGHPUT", "CUMULATIVE_THROUGHPUT", NULL,
};
static const char *const precisions[] = { "f32", "f16", "bf16", NULL };
/* The element type of each of precisions[], in order. */
static const vnpu_element_type precision_types[] = {
	VNPU_TYPE_F32, VNPU_TYPE_F16, VNPU_TYPE_BF16,
};
static const char *const log_levels[] = {
	"NONE", "ERROR", "WARNING", "INFO", "DEBUG", NULL,
};

static const struct vnpu_prop_def prop_defs[] = {
	{ VNPU_PROP_SUPPORTED_PROPERTIES, VNPU_PROPERTY_LIST, G | D | C, false, NULL },
	{ VNPU_PROP_AVAILABLE_DEVICES, VNPU_PROPERTY_LIST, G | D, false, NULL },
	{ VNPU_PROP_VERSION, VNPU_PROPERTY_STRING, G, false, NULL },
	{ VNPU_PROP_CACHE_DIR, VNPU_PROPERTY_STRING, G | C, true, NULL },
	{ VNPU_PROP_LOG_LEVEL, VNPU_PROPERTY_STRING, G, true, log_levels },
	{ VNPU_PROP_FULL_DEVICE_NAME, VNPU_PROPERTY_STRING, D, false, NULL },
	{ VNPU_PROP_DEVICE_ARCHITECTURE, VNPU_PROPERTY_STRING, D, false, NULL },
	{ VNPU_PROP_DEVICE_VERSION, VNPU_PROPERTY_STRING, D, false, NULL },
	{ VNPU_PROP_DRIVER_VERSION, VNPU_PROPERTY_STRING, D, false, NULL },
	{ VNPU_PROP_DEVICE_ID, VNPU_PROPERTY_STRING, D, false, NULL },
	{ VNPU_PROP_OPTIMIZATION_CAPABILITIES, VNPU_PROPERTY_LIST, D, false, NULL },
	{ VNPU_PROP_RANGE_FOR_ASYNC_INFER_REQUESTS, VNPU_PROPERTY_RANGE, D, false, NULL },
	{ VNPU_PROP_ENABLE_PROFILING, VNPU_PROPERTY_BOOL, D | C, true, NULL },
	{ VNPU_PROP_PERFORMANCE_HINT, VNPU_PROPERTY_STRING, D | C, true, perf_modes },
	{ VNPU_PROP_PERFORMANCE_HINT_NUM_REQUESTS, VNPU_PROPERTY_INT, D | C, true, NULL },
	{ VNPU_PROP_INFERENCE_PRECISION_HINT, VNPU_PROPERTY_STRING, D | C, true, precisions },
	{ VNPU_PROP_HETERO_STRICT, VNPU_PROPERTY_BOOL, D | C, true, NULL },
	{ VNPU_PROP_INFERENCE_NUM_THREADS, VNPU_PROPERTY_INT, N, true, NULL },
	{ VNPU_PROP_OPTIMAL_NUMBER_OF_INFER_REQUESTS, VNPU_PROPERTY_INT, C, false, NULL },
	{ VNPU_PROP_LOADED_FROM_CACHE, VNPU_PROPERTY_BOOL, C, false, NULL },
	{ VNPU_PROP_EXECUTION_DEVICES, VNPU_PROPERTY_LIST, C, false, NULL },
	{ VNPU_PROP_DEVICE, VNPU_PROPERTY_STRING, C, false, NULL },
	{ VNPU_PROP_WEIGHTS_SIZE, VNPU_PROPERTY_INT, C, false, NULL },
	{ VNPU_PROP_ARENA_SIZE, VNPU_PROPERTY_INT, C, false, NULL },
	{ VNPU_PROP_INTERMEDIATES_SIZE, VNPU_PROPERTY_INT, C, false, NULL },
	{ VNPU_PROP_DYNAMIC_SHAPE_CACHE_SIZE, VNPU_PROPERTY_INT, D | C, true, NULL },
	{ VNPU_PROP_DYNAMIC_SHAPE_COMPILES, VNPU_PROPERTY_INT, C, false, NULL },
	{ VNPU_PROP_DEVICE_UTILIZATION, VNPU_PROPERTY_INT, T, false, NULL },
	{ VNPU_PROP_DEVICE_BUSY_TIME_NS, VNPU_PROPERTY_INT, T, false, NULL },
	{ VNPU_PROP_DEVICE_JOBS_SUBMITTED, VNPU_PROPERTY_INT, T, false, NULL },
	{ VNPU_PROP_DEVICE_JOBS_COMPLETED, VNPU_PROPERTY_INT, T, false, NULL },
	{ VNPU_PROP_DEVICE_JOBS_FAILED, VNPU_PROPERTY_INT, T, false, NULL },
	{ VNPU_PROP_DEVICE_JOBS_TIMED_OUT, VNPU_PROPERTY_INT, T, false, NULL },
	{ VNPU_PROP_DEVICE_JOBS_CANCELLED, VNPU_PROPERTY_INT, T, false, NULL },
	{ VNPU_PROP_DEVICE_RESETS, VNPU_PROPERTY_INT, T, false, NULL },
	{ VNPU_PROP_DEVICE_MEMORY_USED, VNPU_PROPERTY_INT, T, false, NULL },
	{ VNPU_PROP_DEVICE_MEMORY_LIMIT, VNPU_PROPERTY_INT, T, false, NULL },
	{ VNPU_PROP_DEVICE_BUFFERS, VNPU_PROPERTY_INT, T, false, NULL },
	{ VNPU_PROP_DEVICE_BYTES_UPLOADED, VNPU_PROPERTY_INT, T, false, NULL },
	{ VNPU_PROP_DEVICE_BYTES_DOWNLOADED, VNPU_PROPERTY_INT, T, false, NULL },
	{ VNPU_PROP_DEVICE_CLIENTS, VNPU_PROPERTY_INT, T, false, NULL },
};

#define NUM_PROPS (sizeof(prop_defs) / sizeof(prop_defs[0]))

const struct vnpu_prop_def *vnpu_prop_find(const char *key, unsigned int scope)
{
	size_t i;

	for (i = 0; i < NUM_PROPS; i++) {
		if ((prop_defs[i].scopes & scope) && !strcmp(prop_defs[i].key, key))
			return &prop_defs[i];
	}
	return NULL;
}

/* ---- values ---- */

static size_t value_text_len(vnpu_property_type type, int64_t integer,
			     const uint32_t *range, const char *const *items,
			     uint32_t count, char *buf, size_t size)
{
	size_t len = 0;
	uint32_t i;

	switch (type) {
	case VNPU_PROPERTY_BOOL:
		return (size_t)snprintf(buf, size, "%s", integer ? "YES" : "NO");
	case VNPU_PROPERTY_INT:
		return (size_t)snprintf(buf, size, "%lld", (long long)integer);
	case VNPU_PROPERTY_RANGE:
		return (size_t)snprintf(buf, size, "%u %u %u", range[0], range[1], range[2]);
	case VNPU_PROPERTY_LIST:
		for (i = 0; i < count; i++) {
			if (buf && len + (i ? 1 : 0) + strlen(items[i]) + 1 <= size)
				len += (size_t)sprintf(buf + len, "%s%s", i ? " " : "", items[i]);
			else
				len += strlen(items[i]) + (i ? 1 : 0);
		}
		return len;
	case VNPU_PROPERTY_STRING:
		break;
	}
	return 0;
}

vnpu_status vnpu_prop_new(vnpu_property_type type, int64_t integer,
			  const uint32_t *range, const char *const *items,
			  uint32_t count, const uint8_t *writable,
			  const char *text, vnpu_property_value **out)
{
	static const uint32_t no_range[3];
	vnpu_property_value *v;
	size_t text_len, size, items_len = 0;
	const char **item_ptrs;
	uint8_t *flags;
	char *pool;
	uint32_t i;

	if (!range)
		range = no_range;
	text_len = text ? strlen(text) :
		   value_text_len(type, integer, range, items, count, NULL, 0);
	for (i = 0; i < count; i++)
		items_len += strlen(items[i]) + 1;
	size = sizeof(*v) + count * sizeof(char *) + count + items_len + text_len + 1;
	v = calloc(1, size);
	if (!v)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory for a property value");
	item_ptrs = (const char **)(v + 1);
	flags = (uint8_t *)(item_ptrs + count);
	pool = (char *)(flags + count);
	for (i = 0; i < count; i++) {
		item_ptrs[i] = pool;
		pool = stpcpy(pool, items[i]) + 1;
		flags[i] = writable ? writable[i] : 0;
	}
	if (text)
		memcpy(pool, text, text_len + 1);
	else
		value_text_len(type, integer, range, items, count, pool, text_len + 1);
	v->type = type;
	v->integer = integer;
	memcpy(v->range, range, sizeof(v->range));
	v->count = count;
	v->items = count ? item_ptrs : NULL;
	v->writable = writable && count ? flags : NULL;
	v->text = pool;
	*out = v;
	return VNPU_OK;
}

vnpu_status vnpu_prop_string(const char *text, vnpu_property_value **out)
{
	return vnpu_prop_new(VNPU_PROPERTY_STRING, 0, NULL, NULL, 0, NULL, text, out);
}

VNPU_API void vnpu_property_value_free(vnpu_property_value *value)
{
	free(value);
}

vnpu_status vnpu_prop_supported(unsigned int scope, bool compiled,
				vnpu_property_value **out)
{
	const char *keys[NUM_PROPS];
	uint8_t rw[NUM_PROPS];
	uint32_t n = 0;
	size_t i;

	for (i = 0; i < NUM_PROPS; i++) {
		if (!(prop_defs[i].scopes & scope))
			continue;
		keys[n] = prop_defs[i].key;
		rw[n++] = compiled ? 0 : prop_defs[i].writable;
	}
	return vnpu_prop_new(VNPU_PROPERTY_LIST, 0, NULL, keys, n, rw, NULL, out);
}

/* ---- parsing ---- */

static int choice_index(const struct vnpu_prop_def *def, const char *text)
{
	int i;

	for (i = 0; def->choices[i]; i++) {
		if (!strcasecmp(def->choices[i], text))
			return i;
	}
	return -1;
}

static vnpu_status bad_value(const struct vnpu_prop_def *def, const char *why)
{
	char allowed[160] = "";
	size_t len = 0;
	int i;

	if (def->choices) {
		for (i = 0; def->choices[i] && len + 32 < sizeof(allowed); i++)
			len += (size_t)snprintf(allowed + len, sizeof(allowed) - len, "%s%s",
						i ? ", " : " (one of ", def->choices[i]);
		snprintf(allowed + len, sizeof(allowed) - len, ")");
	}
	return vnpu_error(VNPU_INVALID_ARGUMENT, "property %s: %s%s", def->key, why, allowed);
}

vnpu_status vnpu_value_from_text(const struct vnpu_prop_def *def, const char *text,
				 vnpu_property_value *out)
{
	char *end;
	long long n;

	memset(out, 0, sizeof(*out));
	out->type = def->type;
	out->text = text;
	switch (def->type) {
	case VNPU_PROPERTY_BOOL:
		if (!strcasecmp(text, "YES") || !strcasecmp(text, "TRUE") || !strcmp(text, "1"))
			out->integer = 1;
		else if (!strcasecmp(text, "NO") || !strcasecmp(text, "FALSE") || !strcmp(text, "0"))
			out->integer = 0;
		else
			return bad_value(def, "not YES or NO");
		return VNPU_OK;
	case VNPU_PROPERTY_INT:
		errno = 0;
		n = strtoll(text, &end, 10);
		if (errno || end == text || *end)
			return bad_value(def, "not an integer");
		out->integer = n;
		return VNPU_OK;
	case VNPU_PROPERTY_STRING:
		return VNPU_OK;
	case VNPU_PROPERTY_LIST:
	case VNPU_PROPERTY_RANGE:
		break;
	}
	return bad_value(def, "read only");
}

vnpu_status vnpu_config_set(struct vnpu_config *cfg, const struct vnpu_prop_def *def,
			    const vnpu_property_value *value)
{
	const char *key = def->key;
	int choice = -1;

	if (!def->writable)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "property %s is read only", key);
	if (value->type != def->type)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "property %s takes another type of value",
				  key);
	if (def->type == VNPU_PROPERTY_STRING && !value->text)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "property %s: no text", key);
	if (def->choices) {
		choice = choice_index(def, value->text);
		if (choice < 0)
			return bad_value(def, "not an allowed value");
	}
	if (!strcmp(key, VNPU_PROP_ENABLE_PROFILING)) {
		cfg->profiling = value->integer != 0;
	} else if (!strcmp(key, VNPU_PROP_HETERO_STRICT)) {
		cfg->hetero_strict = value->integer != 0;
	} else if (!strcmp(key, VNPU_PROP_PERFORMANCE_HINT)) {
		cfg->perf_mode = (enum vnpu_perf_mode)choice;
	} else if (!strcmp(key, VNPU_PROP_PERFORMANCE_HINT_NUM_REQUESTS)) {
		if (value->integer < 0 || value->integer > 1024)
			return bad_value(def, "not between 0 and 1024");
		cfg->num_requests = value->integer;
	} else if (!strcmp(key, VNPU_PROP_DYNAMIC_SHAPE_CACHE_SIZE)) {
		if (value->integer < 1 || value->integer > VNPU_SHAPE_CACHE_MAX)
			return bad_value(def, "not between 1 and 1024");
		cfg->shape_cache_size = value->integer;
	} else if (!strcmp(key, VNPU_PROP_INFERENCE_PRECISION_HINT)) {
		cfg->precision = precision_types[choice];
	} else if (!strcmp(key, VNPU_PROP_CACHE_DIR)) {
		if (strlen(value->text) >= sizeof(cfg->cache_dir))
			return bad_value(def, "the path is too long");
		strcpy(cfg->cache_dir, value->text);
	} else {
		return vnpu_error(VNPU_NOT_FOUND, "property %s is not a configuration key", key);
	}
	return VNPU_OK;
}

vnpu_status vnpu_config_set_text(struct vnpu_config *cfg,
				 const struct vnpu_prop_def *def, const char *text)
{
	vnpu_property_value v;
	vnpu_status st = vnpu_value_from_text(def, text, &v);

	return st ? st : vnpu_config_set(cfg, def, &v);
}

vnpu_status vnpu_config_get(const struct vnpu_config *cfg, const char *key,
			    vnpu_property_value **out)
{
	if (!strcmp(key, VNPU_PROP_ENABLE_PROFILING))
		return vnpu_prop_new(VNPU_PROPERTY_BOOL, cfg->profiling, NULL, NULL, 0,
				     NULL, NULL, out);
	if (!strcmp(key, VNPU_PROP_HETERO_STRICT))
		return vnpu_prop_new(VNPU_PROPERTY_BOOL, cfg->hetero_strict, NULL, NULL, 0,
				     NULL, NULL, out);
	if (!strcmp(key, VNPU_PROP_PERFORMANCE_HINT))
		return vnpu_prop_string(perf_modes[cfg->perf_mode], out);
	if (!strcmp(key, VNPU_PROP_PERFORMANCE_HINT_NUM_REQUESTS))
		return vnpu_prop_new(VNPU_PROPERTY_INT, cfg->num_requests, NULL, NULL, 0,
				     NULL, NULL, out);
	if (!strcmp(key, VNPU_PROP_INFERENCE_PRECISION_HINT)) {
		size_t i = 0;

		while (precision_types[i] != cfg->precision && precisions[i + 1])
			i++;
		return vnpu_prop_string(precisions[i], out);
	}
	if (!strcmp(key, VNPU_PROP_CACHE_DIR))
		return vnpu_prop_string(cfg->cache_dir, out);
	if (!strcmp(key, VNPU_PROP_DYNAMIC_SHAPE_CACHE_SIZE))
		return vnpu_prop_new(VNPU_PROPERTY_INT,
				     cfg->shape_cache_size ?: VNPU_SHAPE_CACHE_DEFAULT, NULL, NULL,
				     0, NULL, NULL, out);
	return VNPU_NOT_FOUND;
}

/* The compile properties in a fixed order, one "KEY=VALUE" per line. */
vnpu_status vnpu_config_text(const struct vnpu_config *cfg, char **out)
{
	static const char *const keys[] = {
		VNPU_PROP_ENABLE_PROFILING, VNPU_PROP_HETERO_STRICT,
		VNPU_PROP_PERFORMANCE_HINT, VNPU_PROP_PERFORMANCE_HINT_NUM_REQUESTS,
		VNPU_PROP_INFERENCE_PRECISION_HINT,
	};
	vnpu_property_value *v;
	char *text = NULL;
	size_t size = 0;
	bool failed;
	FILE *f;
	size_t i;

	f = open_memstream(&text, &size);
	if (!f)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory");
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (vnpu_config_get(cfg, keys[i], &v) != VNPU_OK) {
			fclose(f);
			free(text);
			return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory");
		}
		fprintf(f, "%s=%s\n", keys[i], v->text);
		vnpu_property_value_free(v);
	}
	/* A write that found no memory marks the stream, not fclose(). */
	failed = ferror(f);
	if (fclose(f) || failed || !text) {
		free(text);
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory");
	}
	*out = text;
	return VNPU_OK;
}

/* ---- the log level, process-wide ---- */

static atomic_int log_level = -1;

int vnpu_log_level_get(void)
{
	const char *env;
	int level = atomic_load(&log_level);
	size_t i;

	if (level >= 0)
		return level;
	level = -1;
	env = getenv("VNPU_LOG_LEVEL");
	for (i = 0; env && log_levels[i]; i++) {
		if (!strcasecmp(env, log_levels[i]))
			level = (int)i;
	}
	if (level < 0) {
		int unset = -1;

		/* Only the thread that sets it warns: once per process. */
		if (!atomic_compare_exchange_strong(&log_level, &unset, VNPU_LOG_WARNING))
			return atomic_load(&log_level);
		if (env)
			fprintf(stderr, "vnpu: VNPU_LOG_LEVEL=%s is none of NONE ERROR WARNING INFO DEBUG: using WARNING\n",
				env);
		return VNPU_LOG_WARNING;
	}
	atomic_store(&log_level, level);
	return level;
}

const char *vnpu_log_level_str(void)
{
	return log_levels[vnpu_log_level_get()];
}

vnpu_status vnpu_log_level_set(const char *text)
{
	int i;

	for (i = 0; log_levels[i]; i++) {
		if (!strcasecmp(log_levels[i], text)) {
			atomic_store(&log_level, i);
			return VNPU_OK;
		}
	}
	return bad_value(vnpu_prop_find(VNPU_PROP_LOG_LEVEL, G), "not an allowed value");
}

void vnpu_log(enum vnpu_log_level level, const char *fmt, ...)
{
	va_list ap;

	if (level == VNPU_LOG_NONE || (int)level > vnpu_log_level_get())
		return;
	va_start(ap, fmt);
	fprintf(stderr, "vnpu: %s: ", log_levels[level]);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

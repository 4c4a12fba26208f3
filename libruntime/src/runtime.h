/* SPDX-License-Identifier: MIT */
/*
 * Internal: the objects behind the public handles (core, devices,
 * compiled models, requests, tensors) and the helpers they share.
 */
#ifndef VNPU_SRC_RUNTIME_H
#define VNPU_SRC_RUNTIME_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include <vnpu/vnpu_core.h>
#include <vnpu/vnpu_compiled_model.h>
#include <vnpu/vnpu_infer_request.h>
#include <vnpu/vnpu_tensor.h>

#include "error.h"
#include "plugin.h"
#include "program.h"

enum vnpu_perf_mode {
	VNPU_PERF_LATENCY = 0,
	VNPU_PERF_THROUGHPUT = 1,
	VNPU_PERF_CUMULATIVE_THROUGHPUT = 2,
};

/* What compiling and running a model takes from the properties. */
struct vnpu_config {
	bool profiling;
	bool hetero_strict;
	enum vnpu_perf_mode perf_mode;
	int64_t num_requests;		/* 0: as the hint says */
	vnpu_element_type precision;	/* F32, F16 or BF16 */
	int64_t shape_cache_size;	/* DYNAMIC_SHAPE_CACHE_SIZE, 0: the default */
	char cache_dir[512];		/* "" when off */
};

/* One device the core found. */
struct vnpu_core_device {
	struct vnpu_plugin *plugin;
	struct vnpu_dev *dev;
	struct vnpu_device_info info;
	struct vnpu_config config;	/* under core->lock */
};

#define VNPU_MAX_PLUGINS 4
/* The most threads a device takes (INFERENCE_NUM_THREADS). */
#define VNPU_MAX_THREADS 64

struct vnpu_core {
	atomic_int refs;
	pthread_mutex_t lock;		/* protects every config and cache_dir */
	uint32_t num_plugins;
	void *handles[VNPU_MAX_PLUGINS];
	struct vnpu_plugin *plugins[VNPU_MAX_PLUGINS];
	uint32_t num_devices;
	struct vnpu_core_device *devices;
	struct vnpu_core_device *cpu;	/* the fallback device, or NULL */
	char cache_dir[512];
};

void vnpu_core_ref(struct vnpu_core *core);
void vnpu_core_unref(struct vnpu_core *core);
/* The device called @name ("CPU", "NPU", "NPU.1"), or NULL with an error. */
struct vnpu_core_device *vnpu_core_find_device(struct vnpu_core *core,
					       const char *name);
/* Process-wide log level (LOG_LEVEL) and the host services table. */
extern const struct vnpu_host vnpu_host_services;
void vnpu_log(enum vnpu_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* ---- properties (property.c) ---- */

enum vnpu_prop_scope {
	VNPU_SCOPE_GLOBAL = 1u << 0,
	VNPU_SCOPE_DEVICE = 1u << 1,
	VNPU_SCOPE_COMPILED = 1u << 2,
	VNPU_SCOPE_TELEMETRY = 1u << 3,	/* devices with get_stats */
	VNPU_SCOPE_THREADS = 1u << 4,	/* devices with set_threads */
};

struct vnpu_prop_def {
	const char *key;
	vnpu_property_type type;
	unsigned int scopes;
	bool writable;			/* in the core (global or device) */
	const char *const *choices;	/* STRING enums, NULL-terminated */
};

const struct vnpu_prop_def *vnpu_prop_find(const char *key, unsigned int scope);
/* The keys of @scope as a SUPPORTED_PROPERTIES value. */
vnpu_status vnpu_prop_supported(unsigned int scope, bool compiled,
				vnpu_property_value **out);
vnpu_status vnpu_prop_new(vnpu_property_type type, int64_t integer,
			  const uint32_t *range, const char *const *items,
			  uint32_t count, const uint8_t *writable,
			  const char *text, vnpu_property_value **out);
vnpu_status vnpu_prop_string(const char *text, vnpu_property_value **out);
/* Parse @text (or take @value) into @cfg / @cache_dir for @def. */
vnpu_status vnpu_config_set(struct vnpu_config *cfg, const struct vnpu_prop_def *def,
			    const vnpu_property_value *value);
vnpu_status vnpu_config_set_text(struct vnpu_config *cfg,
				 const struct vnpu_prop_def *def, const char *text);
/* A config property of @cfg as a value (NOT_FOUND when not one). */
vnpu_status vnpu_config_get(const struct vnpu_config *cfg, const char *key,
			    vnpu_property_value **out);
/* "KEY=VALUE\n" lines of every compile property of @cfg. */
vnpu_status vnpu_config_text(const struct vnpu_config *cfg, char **out);
vnpu_status vnpu_value_from_text(const struct vnpu_prop_def *def, const char *text,
				 vnpu_property_value *out);
int vnpu_log_level_get(void);
vnpu_status vnpu_log_level_set(const char *text);
const char *vnpu_log_level_str(void);

/* ---- tensors (tensor.c) ---- */

/* The fences of a device tensor whose device has them (vnpu_remote.h). */
struct vnpu_tensor_fences {
	pthread_mutex_t lock;		/* protects the members below */
	pthread_cond_t submitted;	/* @pending went down */
	int in_fd;			/* sync_file the next run waits for, or -1 */
	int out_fd;			/* sync_file of the last run writing it, or -1 */
	uint32_t pending;		/* runs started that write it, not submitted yet */
};

struct vnpu_tensor_handle {
	atomic_int refs;
	vnpu_element_type type;
	vnpu_shape shape;
	uint64_t elems;
	uint64_t bytes;
	void *data;			/* STRING: elems char * (NULL: ""), owned */
	uint64_t str_bytes;		/* STRING: the bytes its strings hold */
	bool owns_data;
	struct vnpu_buf *buf;		/* a device buffer (a request's, remote), or NULL */
	struct vnpu_core_device *device;/* owner of @buf */
	struct vnpu_core *core;		/* keeps @device's plugin loaded */
	struct vnpu_tensor_fences *fences;	/* NULL: no fences (host, the CPU) */
};

/* Make a buffer of @bytes on @device for a tensor (remote.c, tensor.c). */
typedef vnpu_status (*vnpu_make_buf_fn)(struct vnpu_core_device *device, uint64_t bytes,
					void *ctx, struct vnpu_buf **out);
/* A tensor whose data is the buffer @make makes. */
vnpu_status vnpu_tensor_new_buf(struct vnpu_core *core, struct vnpu_core_device *device,
				vnpu_element_type type, const vnpu_shape *shape,
				vnpu_make_buf_fn make, void *ctx,
				struct vnpu_tensor_handle **out);
vnpu_status vnpu_tensor_new_device(struct vnpu_core *core,
				   struct vnpu_core_device *device,
				   vnpu_element_type type, const vnpu_shape *shape,
				   struct vnpu_tensor_handle **out);
/* A run that will write @t started (+1) or reached the device or ended (-1). */
void vnpu_tensor_fence_pending(struct vnpu_tensor_handle *t, int delta);
/* The run that writes @t reached the device with out-fence @sync_file (kept). */
void vnpu_tensor_fence_submitted(struct vnpu_tensor_handle *t, int sync_file);
struct vnpu_tensor_handle *vnpu_tensor_ref(struct vnpu_tensor_handle *t);
/* Element @index (in range) of string tensor @t: a copy of @len bytes of @str. */
vnpu_status vnpu_string_set(struct vnpu_tensor_handle *t, uint64_t index, const char *str,
			    size_t len);
/* Element @index (in range) of string tensor @t, "" when empty. */
const char *vnpu_string_get(const struct vnpu_tensor_handle *t, uint64_t index);
uint64_t vnpu_shape_elems(const vnpu_shape *shape);
bool vnpu_shape_equal(const vnpu_shape *a, const vnpu_shape *b);
const char *vnpu_shape_str(const vnpu_shape *shape, char *buf, size_t size);

/* ---- precision conversion (convert.c) ---- */

bool vnpu_convert_supported(vnpu_element_type from, vnpu_element_type to);
/* VNPU_INVALID_ARGUMENT naming port @name of @port_type unless @from converts. */
vnpu_status vnpu_convert_check(const char *name, vnpu_element_type port_type,
			       vnpu_element_type from);
void vnpu_convert(void *dst, vnpu_element_type dst_type, const void *src,
		  vnpu_element_type src_type, uint64_t elems);

/* ---- compiled models (compiled_model.c) ---- */

struct vnpu_compiled_model {
	atomic_int refs;
	struct vnpu_core *core;
	struct vnpu_core_device *primary;
	struct vnpu_core_device *fallback;	/* NULL: no fallback segments */
	char device[80];			/* as compiled: "HETERO:NPU.0,CPU" */
	struct vnpu_config config;
	bool loaded_from_cache;
	struct vnpu_program *program;	/* NULL with @dyn */
	struct vnpu_dyn_model *dyn;	/* dynamic inputs (dynamic.h), or NULL */
	struct vnpu_host_model *host;	/* string tensors (host_model.h), or NULL */
	uint32_t num_inputs;
	uint32_t num_outputs;
	struct vnpu_slot_desc *slots;	/* one per slot */
	struct vnpu_buf *weights;		/* on @primary */
	struct vnpu_exe **exes;			/* one per segment */
	vnpu_port *inputs;
	vnpu_port *outputs;
	atomic_llong measured_requests;		/* THROUGHPUT, measured once; 0: not yet */
};

/*
 * Make a compiled model of @program (taken over, also on failure) for
 * @primary with optional @fallback: load every segment on its device and
 * upload the weights once.
 */
vnpu_status vnpu_compiled_model_new(struct vnpu_core *core,
				    struct vnpu_core_device *primary,
				    struct vnpu_core_device *fallback,
				    const char *device_name,
				    const struct vnpu_config *config,
				    struct vnpu_program *program,
				    struct vnpu_compiled_model **out);
/*
 * Compile @model, whose inputs have static shapes, for @primary (and
 * @fallback) through the core's CACHE_DIR when @cfg sets one: a blob there
 * for the same model, devices and properties is loaded instead.
 */
struct vnpu_compile_options;
vnpu_status vnpu_compile_static(struct vnpu_core *core, struct vnpu_core_device *primary,
				struct vnpu_core_device *fallback, const char *device_name,
				const struct vnpu_config *cfg,
				const struct vnpu_compile_options *opts,
				const struct vnpu_model *model, struct vnpu_compiled_model **out);
/* A compiled model of no program yet (also on failure: NULL, an error set). */
struct vnpu_compiled_model *vnpu_compiled_model_alloc(struct vnpu_core *core,
						       struct vnpu_core_device *primary,
						       struct vnpu_core_device *fallback,
						       const char *device_name,
						       const struct vnpu_config *config);
struct vnpu_core_device *vnpu_segment_device(const struct vnpu_compiled_model *cm,
					     uint32_t segment);

/* ---- the stages of an infer request (infer_request.c) ---- */

vnpu_status vnpu_request_preprocess(struct vnpu_infer_request *req);
vnpu_status vnpu_request_upload(struct vnpu_infer_request *req);
/* True while a segment of the program is left to submit. */
bool vnpu_request_has_segment(const struct vnpu_infer_request *req);
/* Submit the next segment; @flags: enum vnpu_submit_flags (plugin.h). */
vnpu_status vnpu_request_submit(struct vnpu_infer_request *req, uint32_t flags);
/* VNPU_NOT_READY when @deadline_ns (CLOCK_MONOTONIC) passes first. */
vnpu_status vnpu_request_wait(struct vnpu_infer_request *req, int64_t deadline_ns);
vnpu_status vnpu_request_download(struct vnpu_infer_request *req);
vnpu_status vnpu_request_postprocess(struct vnpu_infer_request *req);

/* ---- blobs and the cache (blob.c) ---- */

vnpu_status vnpu_blob_write(const struct vnpu_compiled_model *cm, void **out,
			    size_t *out_size);
/* Check a blob and read its program, device name and config. */
vnpu_status vnpu_blob_read(struct vnpu_core *core, const void *data, size_t size,
			   const char *device, struct vnpu_compiled_model **out);
/* A blob's "KEY=VALUE\n" compile properties (@size <= 4096 bytes) into @cfg. */
vnpu_status vnpu_blob_read_props(const char *text, size_t size, struct vnpu_config *cfg);
uint64_t vnpu_fnv1a(uint64_t hash, const void *data, size_t size);
/*
 * The FNV-1a of the @size-byte @blob whose @header_size-byte header holds
 * its u64 checksum at @checksum_at: everything, that field taken as zero.
 */
uint64_t vnpu_sealed_checksum(const void *blob, size_t size, size_t header_size,
			      size_t checksum_at);
vnpu_status vnpu_read_file(const char *path, void **out, size_t *out_size);
vnpu_status vnpu_write_file_atomic(const char *path, const void *data, size_t size);

#endif /* VNPU_SRC_RUNTIME_H */

/* SPDX-License-Identifier: MIT */
/*
 * libvnpu: the core. It finds the devices (one plugin per device type,
 * loaded from the plugin search path), holds the global and per-device
 * properties, reads models, asks devices which nodes they take, compiles
 * models for a device and imports exported blobs. It owns the model cache
 * (CACHE_DIR).
 *
 * Devices: "CPU" (the device engine on host threads) and "NPU.0" ..
 * "NPU.<n-1>" (the vnpu driver's render nodes); "NPU" names NPU.0. Compile
 * also takes "HETERO:<dev>,<dev>..." (nodes the first device does not take
 * run on the next) and "AUTO" (the best device present, falling back to
 * the CPU for what it does not take).
 *
 * Ownership: vnpu_core_free() drops the caller's reference; compiled models
 * (and the tensors and requests made from them) keep the core alive, so
 * objects may be freed in any order.
 *
 * Thread safety: every call on a core may be made from any thread at any
 * time.
 */
#ifndef VNPU_CORE_H
#define VNPU_CORE_H

#include <vnpu/vnpu_common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Property keys. RO: read only; RW: read and write. "G" global (device
 * NULL), "D" per device, "C" compiled model (and compile properties). */
#define VNPU_PROP_SUPPORTED_PROPERTIES "SUPPORTED_PROPERTIES" /* G D C RO list */
#define VNPU_PROP_AVAILABLE_DEVICES "AVAILABLE_DEVICES"       /* G D RO list */
#define VNPU_PROP_VERSION "VERSION"                           /* G RO string */
#define VNPU_PROP_CACHE_DIR "CACHE_DIR"                       /* G C RW string */
#define VNPU_PROP_LOG_LEVEL "LOG_LEVEL"               /* G RW NONE|ERROR|WARNING|INFO|DEBUG */
#define VNPU_PROP_FULL_DEVICE_NAME "FULL_DEVICE_NAME"         /* D RO string */
#define VNPU_PROP_DEVICE_ARCHITECTURE "DEVICE_ARCHITECTURE"   /* D RO string */
#define VNPU_PROP_DEVICE_VERSION "DEVICE_VERSION"             /* D RO string */
#define VNPU_PROP_DRIVER_VERSION "DRIVER_VERSION"             /* D RO string: uAPI */
#define VNPU_PROP_DEVICE_ID "DEVICE_ID"                       /* D RO string */
#define VNPU_PROP_OPTIMIZATION_CAPABILITIES "OPTIMIZATION_CAPABILITIES" /* D RO list */
#define VNPU_PROP_RANGE_FOR_ASYNC_INFER_REQUESTS "RANGE_FOR_ASYNC_INFER_REQUESTS" /* D RO range */
#define VNPU_PROP_ENABLE_PROFILING "ENABLE_PROFILING"         /* D C RW bool */
#define VNPU_PROP_PERFORMANCE_HINT "PERFORMANCE_HINT" /* D C RW LATENCY|THROUGHPUT|CUMULATIVE_THROUGHPUT */
#define VNPU_PROP_PERFORMANCE_HINT_NUM_REQUESTS "PERFORMANCE_HINT_NUM_REQUESTS" /* D C RW int, 0 = auto */
#define VNPU_PROP_INFERENCE_PRECISION_HINT "INFERENCE_PRECISION_HINT" /* D C RW f32|f16 */
#define VNPU_PROP_HETERO_STRICT "HETERO_STRICT"       /* D C RW bool: no CPU fallback */
/* The CPU device's threads (N: devices whose thread count is set; RW int,
 * 1..64; 0 sets the default: the CPUs of the process's affinity within
 * its cgroup's CPU limit). Set before the device's first inference:
 * VNPU_BUSY once its threads run. */
#define VNPU_PROP_INFERENCE_NUM_THREADS "INFERENCE_NUM_THREADS" /* N RW int */
#define VNPU_PROP_OPTIMAL_NUMBER_OF_INFER_REQUESTS "OPTIMAL_NUMBER_OF_INFER_REQUESTS" /* C RO int */
#define VNPU_PROP_LOADED_FROM_CACHE "LOADED_FROM_CACHE"       /* C RO bool */
#define VNPU_PROP_EXECUTION_DEVICES "EXECUTION_DEVICES"       /* C RO list */
#define VNPU_PROP_DEVICE "DEVICE"                     /* C RO string: compiled for */
#define VNPU_PROP_WEIGHTS_SIZE "WEIGHTS_SIZE"                 /* C RO int, bytes */
#define VNPU_PROP_ARENA_SIZE "ARENA_SIZE"                     /* C RO int, bytes */
#define VNPU_PROP_INTERMEDIATES_SIZE "INTERMEDIATES_SIZE"     /* C RO int, bytes */
/* A model compiled with dynamic input dimensions runs each new combination
 * of input shapes on a program compiled on its first use; the compiled
 * model keeps the DYNAMIC_SHAPE_CACHE_SIZE (default 8) used last, and
 * DYNAMIC_SHAPE_COMPILES counts the programs it compiled. */
#define VNPU_PROP_DYNAMIC_SHAPE_CACHE_SIZE "DYNAMIC_SHAPE_CACHE_SIZE" /* D C RW int, 1..1024 */
#define VNPU_PROP_DYNAMIC_SHAPE_COMPILES "DYNAMIC_SHAPE_COMPILES" /* C RO int */
/* Telemetry: "T" per device on devices that report it (the NPU, read live
 * from the driver's netlink family at each get; counters only reset with
 * the driver). A device without it answers VNPU_NOT_FOUND. */
#define VNPU_PROP_DEVICE_UTILIZATION "DEVICE_UTILIZATION"     /* T RO int, % of last second */
#define VNPU_PROP_DEVICE_BUSY_TIME_NS "DEVICE_BUSY_TIME_NS"   /* T RO int, ns running jobs */
#define VNPU_PROP_DEVICE_JOBS_SUBMITTED "DEVICE_JOBS_SUBMITTED" /* T RO int */
#define VNPU_PROP_DEVICE_JOBS_COMPLETED "DEVICE_JOBS_COMPLETED" /* T RO int, ended OK */
#define VNPU_PROP_DEVICE_JOBS_FAILED "DEVICE_JOBS_FAILED"     /* T RO int, ended in a fault */
#define VNPU_PROP_DEVICE_JOBS_TIMED_OUT "DEVICE_JOBS_TIMED_OUT" /* T RO int */
#define VNPU_PROP_DEVICE_JOBS_CANCELLED "DEVICE_JOBS_CANCELLED" /* T RO int */
#define VNPU_PROP_DEVICE_RESETS "DEVICE_RESETS"               /* T RO int */
#define VNPU_PROP_DEVICE_MEMORY_USED "DEVICE_MEMORY_USED"     /* T RO int, bytes, all processes */
#define VNPU_PROP_DEVICE_MEMORY_LIMIT "DEVICE_MEMORY_LIMIT"   /* T RO int, bytes */
#define VNPU_PROP_DEVICE_BUFFERS "DEVICE_BUFFERS"             /* T RO int, live buffers */
#define VNPU_PROP_DEVICE_BYTES_UPLOADED "DEVICE_BYTES_UPLOADED" /* T RO int */
#define VNPU_PROP_DEVICE_BYTES_DOWNLOADED "DEVICE_BYTES_DOWNLOADED" /* T RO int */
#define VNPU_PROP_DEVICE_CLIENTS "DEVICE_CLIENTS"             /* T RO int, open files */

/** How a property value is typed. */
typedef enum vnpu_property_type {
	VNPU_PROPERTY_BOOL = 0,   /**< @integer 0 or 1; text "YES" / "NO" */
	VNPU_PROPERTY_INT = 1,    /**< @integer */
	VNPU_PROPERTY_STRING = 2, /**< @text (enums are strings too) */
	VNPU_PROPERTY_LIST = 3,   /**< @items[@count]; text: items joined by " " */
	VNPU_PROPERTY_RANGE = 4,  /**< @range: min, max, step; text "min max step" */
} vnpu_property_type;

/**
 * A property value. Values handed out by get_property are one allocation
 * freed with vnpu_property_value_free(); every type also carries its text
 * form in @text. To set a property, fill @type and @integer or @text in a
 * caller-owned struct.
 */
typedef struct vnpu_property_value {
	vnpu_property_type type;
	int64_t integer;
	uint32_t range[3];
	uint32_t count;
	const char *const *items;
	/** SUPPORTED_PROPERTIES only: per item, 1 when writable (RW). */
	const uint8_t *writable;
	const char *text;
} vnpu_property_value;

VNPU_API void vnpu_property_value_free(vnpu_property_value *value);

/** The library's version, "MAJOR.MINOR.PATCH" (static text). */
VNPU_API const char *vnpu_get_version(void);

/**
 * Create a core: load the plugins and find the devices. Fails only when
 * no plugin at all could be loaded (the CPU device is always present).
 * The plugin search path is $VNPU_PLUGIN_PATH (':'-separated), then the
 * folder of libvnpu.so (build and install trees), then the install folder.
 */
VNPU_API vnpu_status vnpu_core_create(vnpu_core **out);

/** Drop the caller's reference (see Ownership above). NULL is ok. */
VNPU_API void vnpu_core_free(vnpu_core *core);

/**
 * The names of the devices present, e.g. {"CPU", "NPU.0"}: an array of
 * @out_count strings, one allocation freed with vnpu_free().
 */
VNPU_API vnpu_status vnpu_core_get_available_devices(vnpu_core *core,
						     char ***out,
						     uint32_t *out_count);

/** Free memory the library handed out (strings, string arrays). NULL ok. */
VNPU_API void vnpu_free(void *ptr);

/**
 * Read property @key of @device, or a global property when @device is
 * NULL. An unknown key or device is VNPU_NOT_FOUND.
 */
VNPU_API vnpu_status vnpu_core_get_property(vnpu_core *core,
					    const char *device,
					    const char *key,
					    vnpu_property_value **out);

/**
 * Set a RW property. @value->type must be the property's type
 * (VNPU_INVALID_ARGUMENT otherwise, and for values out of range); a RO key
 * is VNPU_INVALID_ARGUMENT. On failure nothing changes.
 */
VNPU_API vnpu_status vnpu_core_set_property(vnpu_core *core,
					    const char *device,
					    const char *key,
					    const vnpu_property_value *value);

/** Set a RW property from its text form (as get_property's @text). */
VNPU_API vnpu_status vnpu_core_set_property_str(vnpu_core *core,
						const char *device,
						const char *key,
						const char *text);

/**
 * Read an ONNX model from @path (external data files are looked up next to
 * it) or from memory. The model is the caller's (vnpu_model_free()).
 * These are the calls to use (OpenVINO's Core::read_model);
 * vnpu_model_read_file() and vnpu_model_read_memory() are the same reader
 * without a core, for programs that only inspect a model.
 */
VNPU_API vnpu_status vnpu_core_read_model(vnpu_core *core, const char *path,
					  vnpu_model **out);
VNPU_API vnpu_status vnpu_core_read_model_from_memory(vnpu_core *core,
						      const void *data,
						      size_t size,
						      vnpu_model **out);

/** Which device takes a node: one entry per node of the model. */
typedef struct vnpu_query_entry {
	const char *node;    /**< the node's name */
	const char *op_type; /**< its ONNX op type */
	const char *device;  /**< the device that takes it, or NULL */
	const char *reason;  /**< when @device is NULL: why no device does */
} vnpu_query_entry;

typedef struct vnpu_query_report {
	uint32_t count;
	const vnpu_query_entry *entries;
} vnpu_query_report;

/**
 * For each node of @model, the device of @device (a device, "HETERO:..."
 * or "AUTO") that takes it, or why none does; a node computed at compile
 * time names the first device and says so in @reason. The report holds
 * its own copies of the strings; free it with vnpu_query_report_free().
 */
VNPU_API vnpu_status vnpu_core_query_model(vnpu_core *core,
					   const vnpu_model *model,
					   const char *device,
					   vnpu_query_report **out);
VNPU_API void vnpu_query_report_free(vnpu_query_report *report);

/**
 * Compile @model for @device with @properties, a NULL-terminated list of
 * key, value text pairs ({"ENABLE_PROFILING", "YES", NULL}) that override
 * the device's properties; NULL for none. With CACHE_DIR set (globally or
 * in @properties) the first compile of a model and properties writes a
 * blob there and later compiles import it (LOADED_FROM_CACHE).
 * The compiled model does not keep @model. A node the device cannot run
 * (an op, a type, a shape past the limits of its layers) fails it with
 * VNPU_UNSUPPORTED and the node's name and reason; shapes a node refuses
 * only now, with the values the compile folds, with VNPU_INVALID_ARGUMENT
 * (never VNPU_PARSE_ERROR: the model was read).
 */
VNPU_API vnpu_status vnpu_core_compile_model(vnpu_core *core,
					     const vnpu_model *model,
					     const char *device,
					     const char *const *properties,
					     vnpu_compiled_model **out);

/**
 * Import a blob written by vnpu_compiled_model_export*() for @device (NULL:
 * the device it was exported from). A blob of another library version or
 * device architecture (DEVICE_ARCHITECTURE: on the NPU its command set,
 * whatever its driver's uAPI version) is VNPU_WRONG_VERSION; a truncated
 * or corrupted one VNPU_PARSE_ERROR.
 */
VNPU_API vnpu_status vnpu_core_import_model(vnpu_core *core, const void *data,
					    size_t size, const char *device,
					    vnpu_compiled_model **out);
VNPU_API vnpu_status vnpu_core_import_model_file(vnpu_core *core,
						 const char *path,
						 const char *device,
						 vnpu_compiled_model **out);

#ifdef __cplusplus
}
#endif

#endif /* VNPU_CORE_H */

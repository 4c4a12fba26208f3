/* SPDX-License-Identifier: MIT */
/*
 * libvnpu: status codes, element types, shapes and error reporting shared
 * by every part of the API.
 *
 * Conventions of the whole API: every call returns a vnpu_status; a result
 * goes to the last `T **out` parameter and is written only on success; every
 * object has a _free() that accepts NULL. On failure, vnpu_last_error() gives
 * the detail for the calling thread.
 */
#ifndef VNPU_COMMON_H
#define VNPU_COMMON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(VNPU_BUILDING_LIBRARY)
#define VNPU_API __attribute__((visibility("default")))
#else
#define VNPU_API
#endif

/*
 * The opaque handles, declared once here (a typedef may not be repeated
 * in C99): the core, a model read from ONNX, a compiled model, an infer
 * request and a tensor. The command stream's view of a tensor is another
 * thing, the uAPI's struct vnpu_cmd_tensor (<drm/vnpu_cmd.h>).
 */
typedef struct vnpu_core vnpu_core;
typedef struct vnpu_model vnpu_model;
typedef struct vnpu_compiled_model vnpu_compiled_model;
typedef struct vnpu_infer_request vnpu_infer_request;
typedef struct vnpu_tensor_handle vnpu_tensor;

/** Status of every call. */
typedef enum vnpu_status {
	VNPU_OK = 0,
	VNPU_GENERAL_ERROR = -1,     /**< an internal error (see the message) */
	VNPU_NOT_IMPLEMENTED = -2,   /**< the device does not do this */
	VNPU_INVALID_ARGUMENT = -3,  /**< a NULL, out-of-range or malformed argument */
	VNPU_NOT_FOUND = -4,         /**< no such device, property, port or file */
	VNPU_OUT_OF_MEMORY = -5,     /**< host or device memory ran out */
	VNPU_UNSUPPORTED = -6,       /**< an op, type or feature the device does not take */
	VNPU_PARSE_ERROR = -7,       /**< a model or blob that cannot be read */
	VNPU_DEVICE_ERROR = -8,      /**< the driver or device failed (see the message) */
	VNPU_BUSY = -9,              /**< the request is running, or another thread is in a call on it */
	VNPU_NOT_READY = -10,        /**< wait_for() ran out before the result */
	VNPU_CANCELLED = -11,        /**< the request was cancelled */
	VNPU_TIMEOUT = -12,          /**< the device timed out and was reset */
	VNPU_DEVICE_FAULT = -13,     /**< the device reported a fault running the job */
	VNPU_WRONG_VERSION = -14,    /**< a blob from another version or device */
} vnpu_status;

/** Static text naming @status (never NULL). */
VNPU_API const char *vnpu_status_str(vnpu_status status);

/**
 * The detail of the calling thread's last failed call: a thread-local
 * string, valid until that thread's next failing call. "" when none.
 */
VNPU_API const char *vnpu_last_error(void);

/** Element types; the values are ONNX's TensorProto ones. */
typedef enum vnpu_element_type {
	VNPU_TYPE_UNDEFINED = 0,
	VNPU_TYPE_F32 = 1,
	VNPU_TYPE_U8 = 2,
	VNPU_TYPE_I8 = 3,
	VNPU_TYPE_U16 = 4,
	VNPU_TYPE_I16 = 5,
	VNPU_TYPE_I32 = 6,
	VNPU_TYPE_I64 = 7,
	VNPU_TYPE_STRING = 8,
	VNPU_TYPE_BOOL = 9,
	VNPU_TYPE_F16 = 10,
	VNPU_TYPE_F64 = 11,
	VNPU_TYPE_U32 = 12,
	VNPU_TYPE_U64 = 13,
	VNPU_TYPE_BF16 = 16,
} vnpu_element_type;

/** Bytes of one element of @type, 0 for UNDEFINED and STRING. */
VNPU_API size_t vnpu_element_type_size(vnpu_element_type type);
/** Static name of @type ("f32", "i64", ...). */
VNPU_API const char *vnpu_element_type_str(vnpu_element_type type);

/** The highest tensor rank (the device's VNPU_MAX_DIMS). */
#define VNPU_MAX_RANK 8
/** A dimension not known until reshape or set_tensor. */
#define VNPU_DIM_DYNAMIC (-1)

/** What a fence fd is. */
typedef enum vnpu_fence_kind {
	VNPU_FENCE_SYNC_FILE = 0,	/* a sync_file (a dma_fence as a file) */
	VNPU_FENCE_SYNCOBJ = 1,		/* a DRM syncobj fd (drmSyncobjHandleToFD) */
} vnpu_fence_kind;

/** A tensor shape: @rank dimensions, VNPU_DIM_DYNAMIC where unknown. */
typedef struct vnpu_shape {
	uint32_t rank;
	int64_t dims[VNPU_MAX_RANK];
} vnpu_shape;

#ifdef __cplusplus
}
#endif

#endif /* VNPU_COMMON_H */

/* SPDX-License-Identifier: MIT */
/*
 * libvnpu: an infer request, one inference of a compiled model at a time.
 *
 * On creation a request allocates one device buffer per input and output
 * and hands them out as tensors (get_tensor): writing an input there and
 * reading an output there is zero-copy. A tensor set by the caller instead
 * (set_tensor) is converted (u8, i8, i32, i64, f16, f32, f64 to the port's
 * type) and uploaded before the run, and outputs are downloaded and
 * converted into it after.
 *
 * infer() runs the stages preprocess -> upload -> submit -> wait ->
 * download -> postprocess; with ENABLE_PROFILING each stage and each layer
 * the device ran is timed (get_profiling_info).
 *
 * Ownership: vnpu_infer_request_free() frees the request (it keeps its
 * compiled model alive while it exists); tensors it handed out stay valid
 * while the caller holds them.
 *
 * Thread safety: one request is used by one thread at a time; different
 * requests of one compiled model may run concurrently on different threads.
 */
#ifndef VNPU_INFER_REQUEST_H
#define VNPU_INFER_REQUEST_H

#include <vnpu/vnpu_common.h>
#include <vnpu/vnpu_compiled_model.h>
#include <vnpu/vnpu_tensor.h>

#ifdef __cplusplus
extern "C" {
#endif

VNPU_API void vnpu_infer_request_free(vnpu_infer_request *req);

/**
 * The tensor of the input or output called @name (or of @port, or of input
 * / output @index): a new reference for the caller (vnpu_tensor_free()).
 */
VNPU_API vnpu_status vnpu_infer_request_get_tensor(vnpu_infer_request *req,
						   const char *name,
						   vnpu_tensor **out);
VNPU_API vnpu_status vnpu_infer_request_get_input_tensor(vnpu_infer_request *req,
							 uint32_t index,
							 vnpu_tensor **out);
VNPU_API vnpu_status vnpu_infer_request_get_output_tensor(vnpu_infer_request *req,
							  uint32_t index,
							  vnpu_tensor **out);
VNPU_API vnpu_status vnpu_infer_request_get_tensor_by_port(vnpu_infer_request *req,
							   const vnpu_port *port,
							   vnpu_tensor **out);

/**
 * Use @tensor for the input or output called @name (by @port, by index).
 * Its shape must be the port's and its type one the request converts
 * (the port's type, or u8, i8, i32, i64, f16, f32, f64 for a numeric
 * port); otherwise VNPU_INVALID_ARGUMENT and nothing changes. The request
 * takes its own reference.
 */
VNPU_API vnpu_status vnpu_infer_request_set_tensor(vnpu_infer_request *req,
						   const char *name,
						   vnpu_tensor *tensor);
VNPU_API vnpu_status vnpu_infer_request_set_input_tensor(vnpu_infer_request *req,
							 uint32_t index,
							 vnpu_tensor *tensor);
VNPU_API vnpu_status vnpu_infer_request_set_output_tensor(vnpu_infer_request *req,
							  uint32_t index,
							  vnpu_tensor *tensor);
VNPU_API vnpu_status vnpu_infer_request_set_tensor_by_port(vnpu_infer_request *req,
							   const vnpu_port *port,
							   vnpu_tensor *tensor);

/** Run one inference, blocking the calling thread until it is done. */
VNPU_API vnpu_status vnpu_infer_request_infer(vnpu_infer_request *req);

/** Kind of a profiling entry. */
typedef enum vnpu_profiling_status {
	VNPU_PROFILING_NOT_RUN = 0,   /**< not run (e.g. optimized out) */
	VNPU_PROFILING_EXECUTED = 1,
} vnpu_profiling_status;

typedef struct vnpu_profiling_entry {
	const char *name;       /**< the stage or the layer's node name */
	const char *node_type;  /**< "Stage" or the layer's type ("Conv+Relu") */
	const char *exec_type;  /**< the device that ran it ("NPU.0", "CPU", "host") */
	vnpu_profiling_status status;
	uint64_t real_time_ns;  /**< wall time it took */
} vnpu_profiling_entry;

typedef struct vnpu_profiling_info {
	uint32_t count;
	const vnpu_profiling_entry *entries;
} vnpu_profiling_info;

/**
 * The timings of the last infer(): the six stages first, then each layer
 * in execution order. VNPU_NOT_READY before the first infer, and
 * VNPU_UNSUPPORTED when the compiled model's ENABLE_PROFILING is off.
 * Free with vnpu_profiling_info_free().
 */
VNPU_API vnpu_status vnpu_infer_request_get_profiling_info(vnpu_infer_request *req,
							   vnpu_profiling_info **out);
VNPU_API void vnpu_profiling_info_free(vnpu_profiling_info *info);

#ifdef __cplusplus
}
#endif

#endif /* VNPU_INFER_REQUEST_H */

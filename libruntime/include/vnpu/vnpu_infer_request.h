/* SPDX-License-Identifier: MIT */
/*
 * libvnpu: an infer request, one inference of a compiled model at a time.
 *
 * On creation a request allocates one device buffer per input and output
 * and hands them out as tensors (get_tensor): writing an input there and
 * reading an output there is zero-copy. A tensor set by the caller instead
 * (set_tensor) is converted (any numeric type to the port's) and uploaded
 * before the run, and outputs are downloaded and converted into it after.
 *
 * Conversions round once, from the exact value: to f16, bf16, f32 and f64
 * to nearest, ties to even, past the largest finite value to infinity,
 * NaN to a quiet NaN of the same sign; to integers to nearest, ties to
 * even, then saturated to the type's range (infinities too), NaN to 0; to
 * bool 1 for anything but zero and NaN.
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
 * A call on a request that another thread is inside of (infer, start_async,
 * get/set tensor, set_sequence, get_profiling_info, get_timeline) returns
 * VNPU_BUSY at once: misuse is refused, never a corruption.
 */
#ifndef VNPU_INFER_REQUEST_H
#define VNPU_INFER_REQUEST_H

#include <vnpu/vnpu_common.h>
#include <vnpu/vnpu_compiled_model.h>
#include <vnpu/vnpu_model.h>
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
 * Its shape must be the port's (any size in a VNPU_DIM_DYNAMIC dimension
 * of a model compiled with dynamic inputs: the run then uses the program
 * of the inputs' shapes, and an output tensor of another shape than the
 * run's fails it) and its type one the request converts (the port's type,
 * or any numeric type for a numeric port); otherwise
 * VNPU_INVALID_ARGUMENT and nothing changes. The request takes its own
 * reference. VNPU_BUSY while the request runs or another thread uses it.
 * With dynamic ports, get_tensor is VNPU_NOT_READY for an input of a
 * dynamic dimension until one is set, for such an output until a run ends,
 * and a run with such an input not set is VNPU_INVALID_ARGUMENT.
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

/**
 * Sequences and optionals (see vnpu_port_kind). A model compiles for
 * sequences of a known length and optionals known to be present or not, so
 * the compiled kind of input or output @name is VNPU_PORT_TENSOR (also a
 * present optional tensor), VNPU_PORT_SEQUENCE (also a present optional
 * sequence) or VNPU_PORT_NONE (an optional without a value).
 * VNPU_NOT_FOUND when the model has no such input or output.
 */
VNPU_API vnpu_status vnpu_infer_request_get_kind(vnpu_infer_request *req,
						 const char *name,
						 vnpu_port_kind *out);

/**
 * The number of tensors of the sequence called @name, and its element
 * @index: a new reference, as get_tensor gives (the element is also the
 * tensor called "@name[@index]"). VNPU_INVALID_ARGUMENT when @name is a
 * tensor or NONE, VNPU_NOT_FOUND when it does not exist or @index is out
 * of range.
 */
VNPU_API vnpu_status vnpu_infer_request_get_sequence_size(vnpu_infer_request *req,
							  const char *name,
							  size_t *out);
VNPU_API vnpu_status vnpu_infer_request_get_sequence_tensor(vnpu_infer_request *req,
							    const char *name,
							    size_t index,
							    vnpu_tensor **out);

/**
 * Use the @count tensors @tensors for the elements of sequence input @name
 * (one given a length with vnpu_model_reshape_sequence()), each as
 * set_tensor takes it. @count must be the compiled length and every
 * element must fit its port, else VNPU_INVALID_ARGUMENT and nothing
 * changes.
 */
VNPU_API vnpu_status vnpu_infer_request_set_sequence(vnpu_infer_request *req,
						     const char *name,
						     vnpu_tensor *const *tensors,
						     size_t count);

/**
 * Run one inference, blocking the calling thread until it is done.
 * VNPU_BUSY while a run is in flight or another thread uses the request.
 * A device fault (VNPU_DEVICE_FAULT, e.g. an index out of range) names
 * the layer whose command faulted in vnpu_last_error().
 */
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
 * The timings of the last infer(): the six stages first (with dynamic
 * inputs a seventh, "compile": the compile of the run's program, NOT_RUN
 * when it was cached), then each layer in execution order. VNPU_NOT_READY before the first infer, and
 * VNPU_UNSUPPORTED when the compiled model's ENABLE_PROFILING is off.
 * Free with vnpu_profiling_info_free().
 */
VNPU_API vnpu_status vnpu_infer_request_get_profiling_info(vnpu_infer_request *req,
							   vnpu_profiling_info **out);
VNPU_API void vnpu_profiling_info_free(vnpu_profiling_info *info);

/* ---- asynchronous inference ---------------------------------------------
 *
 * start_async() returns once the run is queued (or, when the host stages
 * are cheaper than handing them to a thread, once it is submitted); the
 * stages then run on the library's threads: preprocess, upload and
 * submit on the task executor; once the job ended, download and
 * postprocess on the device's completion context (the NPU's completion
 * thread, the CPU device thread that ran the job), the callback there (or
 * on the callback executor when another callback runs).
 * While a run is in flight the request is busy: infer, set/get tensor,
 * set_callback, get_profiling_info and get_timeline return VNPU_BUSY.
 *
 * Thread safety: start_async, wait, wait_for and cancel may be called from
 * any thread, also concurrently. Callbacks run on the library's threads,
 * one at a time for the process (never concurrently); a callback may start
 * its own request again, and may free it; it may wait for or free other
 * requests, but must not wait for a request that has a callback (that
 * one's callback would queue behind it: VNPU_INVALID_ARGUMENT instead of a
 * deadlock).
 * Freeing a running request cancels the run and waits for its end, and
 * for its callback to return when one runs on another thread.
 */

/** Called once per run with the run's status, before wait() returns. */
typedef void (*vnpu_infer_callback)(vnpu_infer_request *req, vnpu_status status,
				    void *user_data);

/** Start one inference; VNPU_BUSY while the previous one is in flight. */
VNPU_API vnpu_status vnpu_infer_request_start_async(vnpu_infer_request *req);

/**
 * Wait until the last run and its callback are done and return the run's
 * status (its message in vnpu_last_error()). VNPU_OK before any run.
 */
VNPU_API vnpu_status vnpu_infer_request_wait(vnpu_infer_request *req);

/**
 * As wait(), for at most @timeout_ms milliseconds (0 polls): VNPU_NOT_READY
 * when the run is still in flight then.
 */
VNPU_API vnpu_status vnpu_infer_request_wait_for(vnpu_infer_request *req,
						 int64_t timeout_ms);

/** Call @callback (NULL: none) at the end of every later run. */
VNPU_API vnpu_status vnpu_infer_request_set_callback(vnpu_infer_request *req,
						     vnpu_infer_callback callback,
						     void *user_data);

/**
 * Cancel the run in flight, if any: its device job is cancelled when it
 * has not started yet, and the run ends VNPU_CANCELLED either way (its
 * outputs are then undefined). Returns at once; wait() reports the end.
 * The request may be started again after.
 */
VNPU_API vnpu_status vnpu_infer_request_cancel(vnpu_infer_request *req);

/** One timed span of a run, on CLOCK_MONOTONIC. */
typedef struct vnpu_timeline_span {
	const char *name;     /**< stage ("upload") or layer name */
	const char *kind;     /**< "stage", "callback" or "layer" */
	const char *where;    /**< the thread ("caller", "task", "wait", "callback")
			       *   or, for a layer, the device ("NPU.0") */
	int64_t start_ns;
	int64_t end_ns;
} vnpu_timeline_span;

typedef struct vnpu_timeline {
	uint32_t count;
	const vnpu_timeline_span *spans;
} vnpu_timeline;

/**
 * When each stage of the last completed run (infer or start_async) started
 * and ended and on which thread, and, with ENABLE_PROFILING, each layer on
 * its device. A layer's start is placed back from the moment the wait saw
 * its job end (the device reports durations). VNPU_NOT_READY before the
 * first run. Free with vnpu_timeline_free().
 */
VNPU_API vnpu_status vnpu_infer_request_get_timeline(vnpu_infer_request *req,
						     vnpu_timeline **out);
VNPU_API void vnpu_timeline_free(vnpu_timeline *timeline);

#ifdef __cplusplus
}
#endif

#endif /* VNPU_INFER_REQUEST_H */

/* SPDX-License-Identifier: MIT */
/*
 * Internal: compiled models of string tensors (host_model.c). The device
 * computes numbers only, so a model with a string value anywhere runs on
 * the host, node by node, in the calling thread: Cast and CastLike to and
 * from strings, Identity and StringNormalizer. A model mixing these with
 * ops for the device is refused (VNPU_UNSUPPORTED), and so is one with a
 * string constant.
 *
 * The compiled model keeps a copy of the model and its ports as declared
 * (an output's length may depend on the values, as StringNormalizer's);
 * a request holds one tensor per port and makes new output tensors at
 * every run. start_async runs the model before it returns and calls the
 * callback on the calling thread; cancel has nothing to stop.
 */
#ifndef VNPU_SRC_HOST_MODEL_H
#define VNPU_SRC_HOST_MODEL_H

#include "runtime.h"

struct vnpu_model;
struct vnpu_node;
struct vnpu_host_model;
struct vnpu_host_request;

/* Whether @m holds a string value (input, output or node output). */
bool vnpu_host_wanted(const struct vnpu_model *m);

/* A compiled model of @m (copied) run on the host; VNPU_UNSUPPORTED naming the node the host does not run. */
vnpu_status vnpu_host_compiled_model_new(struct vnpu_core *core,
					 struct vnpu_core_device *primary,
					 const char *device_name,
					 const struct vnpu_config *config,
					 const struct vnpu_model *m,
					 struct vnpu_compiled_model **out);
void vnpu_host_model_free(struct vnpu_host_model *h);

/* The request side: the public request calls on a request of a host model. */
vnpu_status vnpu_host_request_new(struct vnpu_compiled_model *cm,
				  struct vnpu_host_request **out);
void vnpu_host_request_free(struct vnpu_host_request *r);
vnpu_status vnpu_host_get_tensor(struct vnpu_host_request *r, uint32_t io, vnpu_tensor **out);
vnpu_status vnpu_host_set_tensor(struct vnpu_host_request *r, uint32_t io, vnpu_tensor *t);
vnpu_status vnpu_host_infer(struct vnpu_host_request *r);
vnpu_status vnpu_host_profiling_info(struct vnpu_host_request *r, vnpu_profiling_info **out);
/* Run now, keeping the status for vnpu_host_wait(); then call vnpu_host_callback(). */
void vnpu_host_start_async(struct vnpu_host_request *r);
void vnpu_host_callback(struct vnpu_host_request *r, vnpu_infer_request *req);
vnpu_status vnpu_host_wait(struct vnpu_host_request *r);
vnpu_status vnpu_host_set_callback(struct vnpu_host_request *r, vnpu_infer_callback cb,
				   void *user_data);
/* The host side of @req, or NULL for a request of a device program. */
struct vnpu_host_request *vnpu_request_host(const struct vnpu_infer_request *req);

/* ---- the ops (host_ops.c) ---- */

/* Run node @n on @vals (one tensor or NULL per value): its outputs set. */
vnpu_status vnpu_host_run_node(const struct vnpu_node *n, struct vnpu_tensor_handle **vals);
/* Whether the host runs op @op (default domain). */
bool vnpu_host_runs(const char *op);

#endif /* VNPU_SRC_HOST_MODEL_H */

/* SPDX-License-Identifier: MIT */
/*
 * Internal: compiled models with dynamic inputs (dynamic.c). Such a model
 * keeps its ports as the ONNX model declares them and a copy of the model;
 * a request runs each new combination of input shapes on a program
 * compiled for it on first use and kept in a bounded LRU cache of
 * DYNAMIC_SHAPE_CACHE_SIZE programs inside the compiled model.
 *
 * The request side is a thin layer: a dynamic request holds one ordinary
 * request per program it ran (as many as the cache keeps) and hands each
 * run to the one of the run's shapes.
 */
#ifndef VNPU_SRC_DYNAMIC_H
#define VNPU_SRC_DYNAMIC_H

#include "runtime.h"

struct vnpu_model;
struct vnpu_compile_options;
struct vnpu_dyn_model;
struct vnpu_dyn_request;

/* Programs a compiled model keeps when DYNAMIC_SHAPE_CACHE_SIZE is not set. */
#define VNPU_SHAPE_CACHE_DEFAULT 8
/* The most DYNAMIC_SHAPE_CACHE_SIZE takes. */
#define VNPU_SHAPE_CACHE_MAX 1024

/* Whether @m has a tensor input of a dynamic dimension. */
bool vnpu_dyn_wanted(const struct vnpu_model *m);

/*
 * A compiled model of @m (copied) for @primary and @fallback with dynamic
 * ports: no program until a request runs. VNPU_UNSUPPORTED for inputs
 * other than tensors and outputs of unknown rank or type.
 */
vnpu_status vnpu_dyn_compiled_model_new(struct vnpu_core *core,
					struct vnpu_core_device *primary,
					struct vnpu_core_device *fallback,
					const char *device_name,
					const struct vnpu_config *config,
					const struct vnpu_compile_options *opts,
					const struct vnpu_model *m,
					struct vnpu_compiled_model **out);
void vnpu_dyn_model_free(struct vnpu_dyn_model *d);

/*
 * A compiled model of dynamic inputs of @ports (@n_in inputs then @n_out
 * outputs, copied) without a model: it runs the @n programs @progs
 * (taken, also on failure) compiled for the input shapes @shapes
 * (@n_in per program) and no other shape (VNPU_UNSUPPORTED at the run).
 * Its cache keeps at least those @n.
 */
vnpu_status vnpu_dyn_compiled_model_import(struct vnpu_core *core,
					   struct vnpu_core_device *primary,
					   struct vnpu_core_device *fallback,
					   const char *device_name,
					   const struct vnpu_config *config,
					   const vnpu_port *ports, uint32_t n_in, uint32_t n_out,
					   uint32_t n, const vnpu_shape *shapes,
					   struct vnpu_compiled_model **progs,
					   struct vnpu_compiled_model **out);
/*
 * The programs @cm keeps: @n, their input shapes (@cm's inputs per program)
 * and a new reference to each, in arrays the caller frees.
 */
vnpu_status vnpu_dyn_programs(struct vnpu_compiled_model *cm, uint32_t *n, vnpu_shape **shapes,
			      struct vnpu_compiled_model ***progs);

/*
 * Export (dyn_blob.c): a blob of the ports and of the program of every
 * input shape @cm keeps; VNPU_NOT_READY when it has none yet.
 */
vnpu_status vnpu_dyn_blob_write(const struct vnpu_compiled_model *cm, void **out,
				size_t *out_size);
/* Whether @data is such a blob (by its magic). */
bool vnpu_dyn_blob_is(const void *data, size_t size);
/* Import such a blob as vnpu_dyn_compiled_model_import() makes one. */
vnpu_status vnpu_dyn_blob_read(struct vnpu_core *core, const void *data, size_t size,
			       const char *device, struct vnpu_compiled_model **out);
/* Programs compiled so far (DYNAMIC_SHAPE_COMPILES). */
int64_t vnpu_dyn_compiles(struct vnpu_dyn_model *d);
/* The program used last (a new reference), or NULL before the first. */
struct vnpu_compiled_model *vnpu_dyn_last(struct vnpu_dyn_model *d);

/* The request side: the public request calls on a dynamic request. */
vnpu_status vnpu_dyn_request_new(struct vnpu_compiled_model *cm,
				 struct vnpu_infer_request *outer,
				 struct vnpu_dyn_request **out);
void vnpu_dyn_request_free(struct vnpu_dyn_request *r);
vnpu_status vnpu_dyn_get_tensor(struct vnpu_dyn_request *r, uint32_t io, vnpu_tensor **out);
vnpu_status vnpu_dyn_set_tensor(struct vnpu_dyn_request *r, uint32_t io, vnpu_tensor *t);
vnpu_status vnpu_dyn_infer(struct vnpu_dyn_request *r);
vnpu_status vnpu_dyn_profiling_info(struct vnpu_dyn_request *r, vnpu_profiling_info **out);
vnpu_status vnpu_dyn_start_async(struct vnpu_dyn_request *r);
vnpu_status vnpu_dyn_wait_for(struct vnpu_dyn_request *r, int64_t timeout_ms, bool forever);
vnpu_status vnpu_dyn_set_callback(struct vnpu_dyn_request *r, vnpu_infer_callback cb,
				  void *user_data);
vnpu_status vnpu_dyn_cancel(struct vnpu_dyn_request *r);
vnpu_status vnpu_dyn_timeline(struct vnpu_dyn_request *r, vnpu_timeline **out);
/* The dynamic side of @req, or NULL for a request of a static model. */
struct vnpu_dyn_request *vnpu_request_dyn(const struct vnpu_infer_request *req);

#endif /* VNPU_SRC_DYNAMIC_H */

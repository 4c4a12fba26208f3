/* SPDX-License-Identifier: MIT */
/*
 * libvnpu: a compiled model. It holds what every request of the model
 * shares: the program (command streams, weights uploaded once to the
 * device) and the properties it was compiled with.
 *
 * A model with tensor inputs of dynamic dimensions compiles too: the
 * compiled model keeps its ports as declared and a copy of the model, and
 * an inference with new input shapes runs on a program compiled for them
 * on its first use (on the thread that starts it), kept in an LRU cache of
 * DYNAMIC_SHAPE_CACHE_SIZE programs. Such a compiled model is not
 * exported (VNPU_UNSUPPORTED).
 *
 * Ownership: vnpu_compiled_model_free() drops the caller's reference;
 * requests keep their compiled model (and it keeps its core) alive.
 *
 * Thread safety: every call may be made from any thread at any time.
 */
#ifndef VNPU_COMPILED_MODEL_H
#define VNPU_COMPILED_MODEL_H

#include <vnpu/vnpu_common.h>
#include <vnpu/vnpu_core.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * A model input or output as compiled: every dim known, or, for a model
 * compiled with dynamic input dimensions, VNPU_DIM_DYNAMIC where the model
 * leaves them so.
 */
typedef struct vnpu_port {
	const char *name;        /**< valid while the compiled model lives */
	vnpu_element_type type;
	vnpu_shape shape;
	uint32_t index;          /**< its index among inputs or outputs */
	int is_output;
} vnpu_port;

VNPU_API void vnpu_compiled_model_free(vnpu_compiled_model *cm);

VNPU_API vnpu_status vnpu_compiled_model_get_num_inputs(const vnpu_compiled_model *cm,
							uint32_t *out);
VNPU_API vnpu_status vnpu_compiled_model_get_num_outputs(const vnpu_compiled_model *cm,
							 uint32_t *out);
/** Input or output @index, copied into @out. */
VNPU_API vnpu_status vnpu_compiled_model_get_input(const vnpu_compiled_model *cm,
						   uint32_t index, vnpu_port *out);
VNPU_API vnpu_status vnpu_compiled_model_get_output(const vnpu_compiled_model *cm,
						    uint32_t index, vnpu_port *out);
/** The input or output called @name (VNPU_NOT_FOUND when none). */
VNPU_API vnpu_status vnpu_compiled_model_get_port_by_name(const vnpu_compiled_model *cm,
							  const char *name,
							  vnpu_port *out);

/**
 * Read a property: SUPPORTED_PROPERTIES, DEVICE, EXECUTION_DEVICES,
 * OPTIMAL_NUMBER_OF_INFER_REQUESTS, LOADED_FROM_CACHE, the compile
 * properties (ENABLE_PROFILING, PERFORMANCE_HINT, ...), and WEIGHTS_SIZE,
 * ARENA_SIZE (the planned scratch) and INTERMEDIATES_SIZE (the sum of all
 * intermediates; with dynamic inputs, of the program used last, 0 before
 * the first), DYNAMIC_SHAPE_CACHE_SIZE and DYNAMIC_SHAPE_COMPILES (the
 * programs compiled so far for dynamic inputs). All are read only.
 */
VNPU_API vnpu_status vnpu_compiled_model_get_property(const vnpu_compiled_model *cm,
						      const char *key,
						      vnpu_property_value **out);

/**
 * Export to memory (@out: one allocation freed with vnpu_free()) or to a
 * file. The blob starts with a versioned header (library and uAPI
 * version, device architecture, compile properties, checksum). A model
 * compiled with dynamic inputs exports the programs of the input shapes
 * it has run (VNPU_NOT_READY before its first run); its import runs
 * those shapes and no other (runtime.rst, Dynamic shapes). A model of
 * string tensors has no program to export (VNPU_UNSUPPORTED).
 */
VNPU_API vnpu_status vnpu_compiled_model_export(const vnpu_compiled_model *cm,
						void **out, size_t *out_size);
VNPU_API vnpu_status vnpu_compiled_model_export_file(const vnpu_compiled_model *cm,
						     const char *path);

/** Create a request with its own device buffers for inputs and outputs. */
VNPU_API vnpu_status vnpu_compiled_model_create_infer_request(vnpu_compiled_model *cm,
							      vnpu_infer_request **out);

#ifdef __cplusplus
}
#endif

#endif /* VNPU_COMPILED_MODEL_H */

/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the frontend unit tests (on kselftest_harness.h, through
 * tests/ksft_main.h, which only the test programs include): an ONNX model
 * builder over the protobuf-c structs (graphs made in code, no binaries in
 * the tree), and a host executor that runs a compiled program with the
 * device's own command-stream executor. They report failures by their
 * return values, for the tests to check.
 */
#ifndef FE_TEST_H
#define FE_TEST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <vnpu/vnpu_model.h>

#include "compiler/compiler.h"
#include "onnx.pb-c.h"

/* ---- model builder ---- */
struct mb;

struct mb *mb_new(int64_t opset);
void mb_input(struct mb *b, const char *name, int type, int rank, const int64_t *dims);
void mb_output(struct mb *b, const char *name);
/* An initializer of f32 (@data may be NULL: 0.01 * i pattern). */
void mb_init_f32(struct mb *b, const char *name, int rank, const int64_t *dims,
		 const float *data);
void mb_init_i64(struct mb *b, const char *name, int rank, const int64_t *dims,
		 const int64_t *data);
/* An initializer of ONNX type @type, its @bytes of little-endian data at @data. */
void mb_init_raw(struct mb *b, const char *name, int type, int rank, const int64_t *dims,
		 const void *data, size_t bytes);
/* An f32 initializer whose data is in file @location (relative to the
 * model) at @offset, @count floats. */
void mb_init_external(struct mb *b, const char *name, int rank, const int64_t *dims,
		      const char *location, long offset, long count);
/* A node; inputs and outputs are NULL-terminated lists. Returns it for
 * attributes. */
Onnx__NodeProto *mb_node(struct mb *b, const char *op, const char *const *in,
			 const char *const *out);
/* Put @n in operator domain @domain (version 1; a string that outlives the
 * builder); one such domain per model. */
void mb_node_domain(struct mb *b, Onnx__NodeProto *n, const char *domain);
void mb_attr_int(Onnx__NodeProto *n, const char *name, int64_t v);
void mb_attr_float(Onnx__NodeProto *n, const char *name, float v);
void mb_attr_ints(Onnx__NodeProto *n, const char *name, int count, const int64_t *v);
void mb_attr_string(Onnx__NodeProto *n, const char *name, const char *v);
/* Attach @sub's graph (nodes and outputs) as a GRAPH attribute; @n's
 * builder frees it. */
void mb_attr_graph(struct mb *b, Onnx__NodeProto *n, const char *name, struct mb *sub);
/* Serialize (malloc'd) and free the builder. */
void *mb_pack(struct mb *b, size_t *size);
/* Serialize, read it back and free the builder; NULL on failure. */
vnpu_model *mb_read(struct mb *b);

/* ---- host execution of a program ---- */

/*
 * Run @p on the host with the device executor: @inputs[i] has the bytes of
 * input i; outputs are written to @outputs[i] (p->outputs[i].size bytes).
 * Also validates every segment. Returns 0 or -1.
 */
int fe_run_program(const struct vnpu_program *p, void *const *inputs, void *const *outputs);

/*
 * Compile @m with @o (NULL: the defaults) and run it on its one f32 input
 * @x: output i in @out[i], allocated (4 bytes more than its size). NULL
 * when it does not compile or does not run (why on stderr).
 */
struct vnpu_program *fe_compile_run(const vnpu_model *m, const struct vnpu_compile_options *o,
				    const float *x, float **out);

/* Fill @n floats with a deterministic pattern seeded by @seed. */
void fe_pattern(float *x, size_t n, unsigned seed);

/* Path of an openWakeWord model under build/npm, or NULL when absent. */
const char *fe_wakeword_model(const char *file);

#endif /* FE_TEST_H */

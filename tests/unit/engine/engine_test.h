/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Shared helpers of the engine unit tests: dense tensors, random data, and
 * running a layer in several splits on both kernel builds. They report by
 * return value (and why on stderr): the tests, each file a program on
 * kselftest_harness.h, check it.
 */
#ifndef ENGINE_TEST_H
#define ENGINE_TEST_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vnpu_engine.h"

extern unsigned int et_host_features;

/* A dense row-major tensor of @rank dims (slot and offset unused). */
struct vnpu_cmd_tensor et_dense(__u32 dtype, __u32 rank, const __u64 *dims);
size_t et_bytes(const struct vnpu_cmd_tensor *t);
/* Element count of @t, row-major coordinates of its element @e, and the
 * offset (in elements, through its strides) of coordinates @c. */
size_t et_numel(const struct vnpu_cmd_tensor *t);
void et_coords(const struct vnpu_cmd_tensor *t, size_t e, size_t *c);
size_t et_offset(const struct vnpu_cmd_tensor *t, const size_t *c);
float et_randf(void);
void et_fill_f32(float *p, size_t n);

/**
 * et_run() - run a checked layer whole, in @parts parts (capped at the
 * layer's maximum), in reverse part order, with @features
 *
 * Return: 0, the check's error, or the first run error.
 */
int et_run(__u32 op, const struct vnpu_cmd_tensor *t, void *const *data, __u32 n,
	   const void *attrs, __u32 attr_size, __u32 features, __u32 parts);

/**
 * et_layer_f32() - run a layer in four ways (baseline whole and split, AVX2
 * whole and split): the splits must match bit for bit, and the output
 * (tensor n - 1, dense f32) must match @ref within the tolerances
 *
 * Return: 0 when all matched.
 */
int et_layer_f32(const char *name, __u32 op, const struct vnpu_cmd_tensor *t,
		 void **data, __u32 n, const void *attrs, __u32 attr_size,
		 const float *ref, double atol, double rtol);

/* The same for any output dtype, compared bytewise with @ref. */
int et_layer_exact(const char *name, __u32 op, const struct vnpu_cmd_tensor *t,
		   void **data, __u32 n, const void *attrs, __u32 attr_size,
		   const void *ref);

static inline __u32 et_f32_bits(float f)
{
	__u32 u;

	memcpy(&u, &f, 4);
	return u;
}

#endif

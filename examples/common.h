/* SPDX-License-Identifier: MIT */
/*
 * What the examples share: fail with the library's message, fill an f32
 * input with a known ramp, and print an f32 output's checksum (the tests
 * compare it with numpy's).
 */
#ifndef VNPU_EXAMPLES_COMMON_H
#define VNPU_EXAMPLES_COMMON_H

#include <stdio.h>

#include <vnpu/vnpu.h>

/* Print what failed, the status and the library's detail; return 1. */
static inline int example_fail(const char *what, vnpu_status st)
{
	fprintf(stderr, "%s: %s: %s\n", what, vnpu_status_str(st), vnpu_last_error());
	return 1;
}

/*
 * A core and @path compiled for @device with @props (sync.c shows these
 * calls one by one). On failure the message is printed and *@core may be
 * set: the caller frees it either way.
 */
static inline vnpu_status example_compile(const char *path, const char *device,
					  const char *const *props, vnpu_core **core,
					  vnpu_compiled_model **cm)
{
	vnpu_model *model = NULL;
	vnpu_status st;

	st = vnpu_core_create(core);
	if (st != VNPU_OK) {
		example_fail("create the core", st);
		return st;
	}
	st = vnpu_core_read_model(*core, path, &model);
	if (st == VNPU_OK)
		st = vnpu_core_compile_model(*core, model, device, props, cm);
	/* A compiled model does not need its model. */
	vnpu_model_free(model);
	if (st != VNPU_OK)
		example_fail(path, st);
	return st;
}

/* Whether input @port is one these examples fill (f32); says so if not. */
static inline int example_takes(const vnpu_port *port)
{
	if (port->type == VNPU_TYPE_F32)
		return 1;
	fprintf(stderr, "input %s is %s: this example fills f32 inputs only\n", port->name,
		vnpu_element_type_str(port->type));
	return 0;
}

/* Input value @i of request @k: ((i % 17) - 8) / 4 + k. */
static inline void example_fill(float *data, uint64_t count, int k)
{
	uint64_t i;

	for (i = 0; i < count; i++)
		data[i] = (float)((int)(i % 17) - 8) / 4.0f + (float)k;
}

/* "<label> <name> f32 <count> sum=<sum>" for an f32 @tensor. */
static inline int example_print_sum(const char *label, const char *name,
				    vnpu_tensor *tensor)
{
	vnpu_element_type type;
	uint64_t count, i;
	vnpu_status st;
	double sum = 0;
	void *data;

	st = vnpu_tensor_get_element_type(tensor, &type);
	if (st == VNPU_OK)
		st = vnpu_tensor_get_size(tensor, &count);
	if (st == VNPU_OK)
		st = vnpu_tensor_get_data(tensor, &data);
	if (st != VNPU_OK)
		return example_fail("read the output", st);
	if (type != VNPU_TYPE_F32) {
		printf("%s %s %s (not summed)\n", label, name, vnpu_element_type_str(type));
		return 0;
	}
	for (i = 0; i < count; i++)
		sum += ((const float *)data)[i];
	printf("%s %s f32 %llu sum=%.6f\n", label, name, (unsigned long long)count, sum);
	return 0;
}

#endif /* VNPU_EXAMPLES_COMMON_H */

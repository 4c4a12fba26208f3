// SPDX-License-Identifier: MIT
/*
 * Synchronous inference: read a model, compile it, give each input a
 * tensor of the caller's (set_tensor: the request converts and copies it),
 * run once and read the outputs. Every call is checked and every object
 * freed.
 *
 *   sync MODEL.onnx [DEVICE]      (DEVICE: CPU by default, NPU, AUTO...)
 */
#include <stdlib.h>

#include "common.h"

/* Give input @index a host tensor of its shape filled with the ramp. */
static int set_input(vnpu_compiled_model *cm, vnpu_infer_request *req, uint32_t index)
{
	vnpu_tensor *tensor = NULL;
	vnpu_status st;
	vnpu_port port;
	uint64_t count;
	void *data;

	st = vnpu_compiled_model_get_input(cm, index, &port);
	if (st != VNPU_OK)
		return example_fail("get an input", st);
	if (!example_takes(&port))
		return 1;
	st = vnpu_tensor_create(VNPU_TYPE_F32, &port.shape, &tensor);
	if (st == VNPU_OK)
		st = vnpu_tensor_get_size(tensor, &count);
	if (st == VNPU_OK)
		st = vnpu_tensor_get_data(tensor, &data);
	if (st == VNPU_OK) {
		example_fill(data, count, 0);
		st = vnpu_infer_request_set_tensor(req, port.name, tensor);
	}
	/* The request holds its own reference: ours can go now. */
	vnpu_tensor_free(tensor);
	return st == VNPU_OK ? 0 : example_fail("set an input", st);
}

static int print_outputs(vnpu_compiled_model *cm, vnpu_infer_request *req)
{
	vnpu_tensor *tensor;
	uint32_t i, count;
	vnpu_status st;
	vnpu_port port;
	int rc = 0;

	st = vnpu_compiled_model_get_num_outputs(cm, &count);
	if (st != VNPU_OK)
		return example_fail("count the outputs", st);
	for (i = 0; i < count && !rc; i++) {
		st = vnpu_compiled_model_get_output(cm, i, &port);
		if (st == VNPU_OK)
			st = vnpu_infer_request_get_output_tensor(req, i, &tensor);
		if (st != VNPU_OK)
			return example_fail("get an output", st);
		rc = example_print_sum("output", port.name, tensor);
		vnpu_tensor_free(tensor);
	}
	return rc;
}

int main(int argc, char **argv)
{
	const char *device = argc > 2 ? argv[2] : "CPU";
	vnpu_compiled_model *cm = NULL;
	vnpu_infer_request *req = NULL;
	vnpu_model *model = NULL;
	vnpu_core *core = NULL;
	uint32_t i, inputs;
	vnpu_status st;
	int rc = 1;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: %s MODEL.onnx [DEVICE]\n", argv[0]);
		return 2;
	}
	st = vnpu_core_create(&core);
	if (st != VNPU_OK)
		return example_fail("create the core", st);
	st = vnpu_core_read_model(core, argv[1], &model);
	if (st != VNPU_OK) {
		example_fail(argv[1], st);
		goto out;
	}
	st = vnpu_core_compile_model(core, model, device, NULL, &cm);
	if (st != VNPU_OK) {
		example_fail(device, st);
		goto out;
	}
	st = vnpu_compiled_model_create_infer_request(cm, &req);
	if (st == VNPU_OK)
		st = vnpu_compiled_model_get_num_inputs(cm, &inputs);
	if (st != VNPU_OK) {
		example_fail("create a request", st);
		goto out;
	}
	for (i = 0; i < inputs; i++) {
		if (set_input(cm, req, i))
			goto out;
	}
	st = vnpu_infer_request_infer(req);
	if (st != VNPU_OK) {
		example_fail("infer", st);
		goto out;
	}
	rc = print_outputs(cm, req);
out:
	/* Any order works: each object keeps what it needs alive. */
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
	vnpu_model_free(model);
	vnpu_core_free(core);
	return rc;
}

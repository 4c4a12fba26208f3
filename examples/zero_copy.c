// SPDX-License-Identifier: MIT
/*
 * Zero-copy tensors: a request hands out its own buffers as tensors (on
 * the NPU, device memory mapped into the process). Writing an input
 * there and reading an output there copies nothing: no set_tensor, no
 * upload or download stage. The tensors stay valid while held, even
 * after the request is freed.
 *
 *   zero_copy MODEL.onnx [DEVICE] [RUNS]     (CPU and 3 by default)
 *
 * Each run writes the ramp plus the run's number into the same input
 * tensors and prints the outputs read from the same output tensors.
 */
#include <stdlib.h>

#include "common.h"

#define MAX_PORTS 16

struct ports {
	uint32_t num_inputs, num_outputs;
	vnpu_tensor *inputs[MAX_PORTS];
	vnpu_tensor *outputs[MAX_PORTS];
	vnpu_port output_ports[MAX_PORTS];
};

/* Take the request's own tensors once; they are reused by every run. */
static int take_tensors(vnpu_compiled_model *cm, vnpu_infer_request *req, struct ports *p)
{
	vnpu_status st;
	vnpu_port port;
	uint32_t i;

	st = vnpu_compiled_model_get_num_inputs(cm, &p->num_inputs);
	if (st == VNPU_OK)
		st = vnpu_compiled_model_get_num_outputs(cm, &p->num_outputs);
	if (st != VNPU_OK)
		return example_fail("count the ports", st);
	if (p->num_inputs > MAX_PORTS || p->num_outputs > MAX_PORTS) {
		fprintf(stderr, "this example takes at most %d inputs and outputs\n", MAX_PORTS);
		return 1;
	}
	for (i = 0; i < p->num_inputs; i++) {
		st = vnpu_compiled_model_get_input(cm, i, &port);
		if (st == VNPU_OK && !example_takes(&port))
			return 1;
		if (st == VNPU_OK)
			st = vnpu_infer_request_get_input_tensor(req, i, &p->inputs[i]);
		if (st != VNPU_OK)
			return example_fail("get an input tensor", st);
	}
	for (i = 0; i < p->num_outputs; i++) {
		st = vnpu_compiled_model_get_output(cm, i, &p->output_ports[i]);
		if (st == VNPU_OK)
			st = vnpu_infer_request_get_output_tensor(req, i, &p->outputs[i]);
		if (st != VNPU_OK)
			return example_fail("get an output tensor", st);
	}
	return 0;
}

static int run_once(vnpu_infer_request *req, struct ports *p, int run)
{
	char label[32];
	vnpu_status st;
	uint64_t size;
	void *data;
	uint32_t i;

	for (i = 0; i < p->num_inputs; i++) {
		st = vnpu_tensor_get_size(p->inputs[i], &size);
		if (st == VNPU_OK)
			st = vnpu_tensor_get_data(p->inputs[i], &data);
		if (st != VNPU_OK)
			return example_fail("write an input", st);
		example_fill(data, size, run);
	}
	st = vnpu_infer_request_infer(req);
	if (st != VNPU_OK)
		return example_fail("infer", st);
	snprintf(label, sizeof(label), "run %d", run);
	for (i = 0; i < p->num_outputs; i++) {
		if (example_print_sum(label, p->output_ports[i].name, p->outputs[i]))
			return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *device = argc > 2 ? argv[2] : "CPU";
	int runs = argc > 3 ? atoi(argv[3]) : 3;
	vnpu_compiled_model *cm = NULL;
	vnpu_infer_request *req = NULL;
	struct ports ports = { 0 };
	vnpu_core *core = NULL;
	vnpu_status st;
	int rc = 1, run;
	uint32_t i;

	if (argc < 2 || argc > 4 || runs < 1) {
		fprintf(stderr, "usage: %s MODEL.onnx [DEVICE] [RUNS]\n", argv[0]);
		return 2;
	}
	if (example_compile(argv[1], device, NULL, &core, &cm) != VNPU_OK)
		goto out;
	st = vnpu_compiled_model_create_infer_request(cm, &req);
	if (st != VNPU_OK) {
		example_fail("create a request", st);
		goto out;
	}
	if (take_tensors(cm, req, &ports))
		goto out;
	for (run = 0; run < runs; run++) {
		if (run_once(req, &ports, run))
			goto out;
	}
	rc = 0;
out:
	for (i = 0; i < MAX_PORTS; i++) {
		vnpu_tensor_free(ports.inputs[i]);
		vnpu_tensor_free(ports.outputs[i]);
	}
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
	vnpu_core_free(core);
	return rc;
}

// SPDX-License-Identifier: MIT
/*
 * Asynchronous inference: several requests of one compiled model in
 * flight at once, each started with start_async() and reporting its end
 * through a callback; the main thread then waits for each. Request k's
 * inputs are the ramp plus k, so each prints its own sums.
 *
 *   async MODEL.onnx [DEVICE] [REQUESTS]   (CPU and 4 by default)
 *
 * With PERFORMANCE_HINT THROUGHPUT the device runs the requests side by
 * side; OPTIMAL_NUMBER_OF_INFER_REQUESTS says how many keep it busy.
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "common.h"

#define MAX_REQUESTS 16

struct slot {
	vnpu_infer_request *req;
	int index;
	vnpu_status status;	/* written by the callback */
};

static atomic_int callbacks_run;

/*
 * Runs on one of the library's threads, once per run, before wait()
 * returns for it. Keep it short: callbacks of the process run one at a
 * time.
 */
static void on_done(vnpu_infer_request *req, vnpu_status status, void *user_data)
{
	struct slot *slot = user_data;

	(void)req;
	slot->status = status;
	atomic_fetch_add(&callbacks_run, 1);
}

/* Fill every input of @slot's request through the tensors it hands out. */
static int fill_inputs(vnpu_compiled_model *cm, struct slot *slot)
{
	vnpu_tensor *tensor;
	uint32_t i, count;
	vnpu_status st;
	vnpu_port port;
	uint64_t size;
	void *data;

	st = vnpu_compiled_model_get_num_inputs(cm, &count);
	for (i = 0; st == VNPU_OK && i < count; i++) {
		st = vnpu_compiled_model_get_input(cm, i, &port);
		if (st == VNPU_OK && !example_takes(&port))
			return 1;
		if (st == VNPU_OK)
			st = vnpu_infer_request_get_input_tensor(slot->req, i, &tensor);
		if (st != VNPU_OK)
			break;
		st = vnpu_tensor_get_size(tensor, &size);
		if (st == VNPU_OK)
			st = vnpu_tensor_get_data(tensor, &data);
		if (st == VNPU_OK)
			example_fill(data, size, slot->index);
		vnpu_tensor_free(tensor);
	}
	return st == VNPU_OK ? 0 : example_fail("fill the inputs", st);
}

static int print_outputs(vnpu_compiled_model *cm, struct slot *slot)
{
	vnpu_tensor *tensor;
	uint32_t i, count;
	char label[32];
	vnpu_status st;
	vnpu_port port;
	int rc = 0;

	snprintf(label, sizeof(label), "request %d", slot->index);
	st = vnpu_compiled_model_get_num_outputs(cm, &count);
	for (i = 0; st == VNPU_OK && i < count && !rc; i++) {
		st = vnpu_compiled_model_get_output(cm, i, &port);
		if (st == VNPU_OK)
			st = vnpu_infer_request_get_output_tensor(slot->req, i, &tensor);
		if (st != VNPU_OK)
			break;
		rc = example_print_sum(label, port.name, tensor);
		vnpu_tensor_free(tensor);
	}
	return st == VNPU_OK ? rc : example_fail("read the outputs", st);
}

/* Create, fill and start every request; then wait for each and print. */
static int run(vnpu_compiled_model *cm, struct slot *slots, int n)
{
	vnpu_status st;
	int k;

	for (k = 0; k < n; k++) {
		slots[k].index = k;
		st = vnpu_compiled_model_create_infer_request(cm, &slots[k].req);
		if (st == VNPU_OK)
			st = vnpu_infer_request_set_callback(slots[k].req, on_done, &slots[k]);
		if (st != VNPU_OK)
			return example_fail("create a request", st);
		if (fill_inputs(cm, &slots[k]))
			return 1;
	}
	for (k = 0; k < n; k++) {
		st = vnpu_infer_request_start_async(slots[k].req);
		if (st != VNPU_OK)
			return example_fail("start a request", st);
	}
	for (k = 0; k < n; k++) {
		st = vnpu_infer_request_wait(slots[k].req);
		if (st != VNPU_OK)
			return example_fail("a request", st);
		if (slots[k].status != VNPU_OK) {
			fprintf(stderr, "request %d: its callback saw %s\n", k,
				vnpu_status_str(slots[k].status));
			return 1;
		}
		if (print_outputs(cm, &slots[k]))
			return 1;
	}
	printf("callbacks %d\n", atomic_load(&callbacks_run));
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const props[] = { "PERFORMANCE_HINT", "THROUGHPUT", NULL };
	const char *device = argc > 2 ? argv[2] : "CPU";
	struct slot slots[MAX_REQUESTS] = { { 0 } };
	int n = argc > 3 ? atoi(argv[3]) : 4;
	vnpu_compiled_model *cm = NULL;
	vnpu_core *core = NULL;
	int k, rc = 1;

	if (argc < 2 || argc > 4 || n < 1 || n > MAX_REQUESTS) {
		fprintf(stderr, "usage: %s MODEL.onnx [DEVICE] [REQUESTS 1..%d]\n", argv[0],
			MAX_REQUESTS);
		return 2;
	}
	if (example_compile(argv[1], device, props, &core, &cm) == VNPU_OK)
		rc = run(cm, slots, n);
	/* Freeing a request that still runs would cancel it; none does now. */
	for (k = 0; k < n; k++)
		vnpu_infer_request_free(slots[k].req);
	vnpu_compiled_model_free(cm);
	vnpu_core_free(core);
	return rc;
}

// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: an ONNX model from memory through the reader, shape
 * inference and the compiler, for the CPU device (every pass, the memory
 * planner, lowering and the device's own check of the command stream).
 * Seeds: the model.onnx files of Debian's libonnx-testdata.
 */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	vnpu_compiled_model *cm = NULL;
	vnpu_model *model = NULL;
	vnpu_status st;

	st = vnpu_core_read_model_from_memory(fuzz_core(), data, size, &model);
	fuzz_expect_message(st, "vnpu_core_read_model_from_memory");
	if (st != VNPU_OK)
		return 0;
	st = vnpu_core_compile_model(fuzz_core(), model, "CPU", NULL, &cm);
	fuzz_expect_message(st, "vnpu_core_compile_model");
	vnpu_compiled_model_free(cm);
	vnpu_model_free(model);
	return 0;
}

// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: an ONNX model from memory through the reader, shape
 * inference and the compiler, for the CPU device (every pass, the memory
 * planner, lowering and the device's own check of the command stream).
 * Seeds: the model.onnx files of Debian's libonnx-testdata.
 *
 * The compiler's tables move at every add while they are small
 * (VNPU_DEBUG_CS_MOVE, cstate.c): a pointer kept into one across an add
 * is then a use after free on the first input that takes that path, not
 * only on one whose add happens to grow the table.
 */
#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	setenv("VNPU_DEBUG_CS_MOVE", "1", 0);
	setenv("VNPU_DEBUG_CS_MOVE_MAX", "16384", 0);
	return 0;
}

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

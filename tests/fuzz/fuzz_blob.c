// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: a compiled blob imported on the CPU device, and an
 * infer request created from what imports (the request sizes its buffers
 * from the imported program). The input is resealed first (its checksum
 * set, vnpu_blob_seal()), so mutations reach the header, property and
 * program readers instead of stopping at the checksum.
 * Seeds: blobs exported from models of libonnx-testdata (fuzz-seeds).
 */
#include <string.h>

#include "blob.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	vnpu_compiled_model *cm = NULL;
	vnpu_infer_request *req = NULL;
	vnpu_status st;
	void *blob;

	blob = malloc(size ? size : 1);
	if (!blob)
		return 0;
	memcpy(blob, data, size);
	if (size >= sizeof(struct vnpu_blob_header))
		vnpu_blob_seal(blob, size);
	st = vnpu_core_import_model(fuzz_core(), blob, size, "CPU", &cm);
	fuzz_expect_message(st, "vnpu_core_import_model");
	if (st == VNPU_OK) {
		st = vnpu_compiled_model_create_infer_request(cm, &req);
		fuzz_expect_message(st, "vnpu_compiled_model_create_infer_request");
		vnpu_infer_request_free(req);
		vnpu_compiled_model_free(cm);
	}
	free(blob);
	return 0;
}

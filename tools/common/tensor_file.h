/* SPDX-License-Identifier: MIT */
/*
 * Tools: tensors in ONNX's TensorProto files (the ONNX test-data format,
 * input_N.pb / output_N.pb), read into and written from vnpu_tensor.
 */
#ifndef VNPU_TOOLS_TENSOR_FILE_H
#define VNPU_TOOLS_TENSOR_FILE_H

#include <vnpu/vnpu.h>

/*
 * Read the TensorProto at @path into a new host tensor (*out, the caller's)
 * and its name (*out_name, malloc'd, "" when it has none; may be NULL).
 * Errors come with a message in @err.
 */
vnpu_status tensor_file_read(const char *path, vnpu_tensor **out,
			     char **out_name, char *err, size_t err_size);

/* Write @tensor as a TensorProto called @name (raw_data) to @path. */
vnpu_status tensor_file_write(const char *path, const char *name,
			      const vnpu_tensor *tensor, char *err,
			      size_t err_size);

#endif /* VNPU_TOOLS_TENSOR_FILE_H */

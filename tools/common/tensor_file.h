/* SPDX-License-Identifier: MIT */
/*
 * Tools: tensors in ONNX's TensorProto files (the ONNX test-data format,
 * input_N.pb / output_N.pb), read into and written from vnpu_tensor, and
 * the test data of sequences (SequenceProto) and optionals (OptionalProto).
 */
#ifndef VNPU_TOOLS_TENSOR_FILE_H
#define VNPU_TOOLS_TENSOR_FILE_H

#include <vnpu/vnpu.h>

/*
 * Read the TensorProto at @path into a new host tensor (*out, the caller's)
 * and its name (*out_name, malloc'd, "" when it has none; may be NULL).
 * Errors come with a message in @err. A @path ending in .npy is read by
 * tensor_npy_read() and a FILE.raw:TYPE:D,D,... spec by tensor_raw_read()
 * instead (their name is "").
 */
vnpu_status tensor_file_read(const char *path, vnpu_tensor **out,
			     char **out_name, char *err, size_t err_size);

/* The whole of the regular file at @path (a directory or a device is
 * refused), malloc'd, its length in *@size; NULL with a message in @err. */
void *file_read_whole(const char *path, size_t *size, char *err, size_t err_size);

/*
 * A decoded TensorProto into a new host tensor; @path names it in messages.
 * The data the proto holds is checked against the shape before the tensor
 * is allocated: a shape alone never costs memory. External data is refused.
 */
struct Onnx__TensorProto;
vnpu_status tensor_from_proto(const struct Onnx__TensorProto *tp, const char *path,
			      vnpu_tensor **out, char *err, size_t err_size);

/* The model's input @name becomes a constant holding @t's values
 * (vnpu_model_freeze_input() with @t's type, shape and data). */
vnpu_status tensor_freeze_input(vnpu_model *model, const char *name, vnpu_tensor *t);

/*
 * A test value: a tensor, a sequence of tensors or an optional of those,
 * as a kind (TENSOR, SEQUENCE, or NONE for an optional without a value)
 * and its tensors (1 for a tensor; the caller's references).
 */
struct tensor_value {
	vnpu_port_kind kind;
	vnpu_tensor **tensors;
	size_t count;
};

/*
 * Read the file at @path holding a value of a model port of @kind: a
 * TensorProto for TENSOR, a SequenceProto for SEQUENCE, an OptionalProto
 * for OPTIONAL and OPTIONAL_SEQUENCE (read as its value, or NONE).
 */
vnpu_status tensor_value_read(const char *path, vnpu_port_kind kind,
			      struct tensor_value *out, char *err, size_t err_size);
void tensor_value_fini(struct tensor_value *v);

/*
 * npy.c: a NumPy .npy file (versions 1.0 to 3.0, little-endian f16 f32 f64
 * i8 u8 i16 u16 i32 u32 i64 u64 bool, C order), and raw data given as
 * "FILE.raw:TYPE:D,D,..." (TYPE as vnpu_element_type_str(): f32, u8, ...;
 * no D for a scalar). Header, type and shape are checked, and the data's
 * size against the file's, before the tensor is allocated.
 */
vnpu_status tensor_npy_read(const char *path, vnpu_tensor **out, char *err,
			    size_t err_size);
int tensor_spec_is_raw(const char *spec);
vnpu_status tensor_raw_read(const char *spec, vnpu_tensor **out, char *err,
			    size_t err_size);
/* Write @tensor to @path as numpy.save() does (bf16 has no .npy type). */
vnpu_status tensor_npy_write(const char *path, const vnpu_tensor *tensor, char *err,
			     size_t err_size);

/* Write @tensor as a TensorProto called @name (raw_data) to @path. */
vnpu_status tensor_file_write(const char *path, const char *name,
			      const vnpu_tensor *tensor, char *err,
			      size_t err_size);

#endif /* VNPU_TOOLS_TENSOR_FILE_H */

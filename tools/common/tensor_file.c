// SPDX-License-Identifier: MIT
/* TensorProto files <-> vnpu_tensor, through the protobuf-c code. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "onnx.pb-c.h"
#include "onnx_data.pb-c.h"
#include "tensor_file.h"

void *file_read_whole(const char *path, size_t *size, char *err, size_t err_size)
{
	FILE *f = fopen(path, "rb");
	struct stat sb;
	char *buf = NULL;
	size_t len;

	if (!f) {
		snprintf(err, err_size, "%s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fileno(f), &sb)) {
		snprintf(err, err_size, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(sb.st_mode)) {
		snprintf(err, err_size, "%s: %s", path, S_ISDIR(sb.st_mode) ?
			 "is a directory, not a tensor file" : "not a regular file");
		goto out;
	}
	len = (size_t)sb.st_size;
	buf = malloc(len ? len : 1);
	if (!buf) {
		snprintf(err, err_size, "%s: out of memory", path);
		goto out;
	}
	if (fread(buf, 1, len, f) != len) {
		snprintf(err, err_size, "%s: short read", path);
		free(buf);
		buf = NULL;
		goto out;
	}
	*size = len;
out:
	fclose(f);
	return buf;
}

/* How many values of @type the repeated field ONNX packs them in holds. */
static size_t typed_count(const Onnx__TensorProto *tp, vnpu_element_type type)
{
	switch (type) {
	case VNPU_TYPE_F32:
		return tp->n_float_data;
	case VNPU_TYPE_F64:
		return tp->n_double_data;
	case VNPU_TYPE_I64:
		return tp->n_int64_data;
	case VNPU_TYPE_U32:
	case VNPU_TYPE_U64:
		return tp->n_uint64_data;
	default:
		return tp->n_int32_data;
	}
}

/* Copy the @n typed values (typed_count()) into @dst, narrowing as ONNX packs them. */
static void copy_typed(const Onnx__TensorProto *tp, vnpu_element_type type,
		       void *dst, uint64_t n)
{
	uint64_t i;

	if (!n)		/* an empty tensor's array is NULL */
		return;
	switch (type) {
	case VNPU_TYPE_F32:
		memcpy(dst, tp->float_data, n * 4);
		return;
	case VNPU_TYPE_F64:
		memcpy(dst, tp->double_data, n * 8);
		return;
	case VNPU_TYPE_I64:
		memcpy(dst, tp->int64_data, n * 8);
		return;
	case VNPU_TYPE_U32:
	case VNPU_TYPE_U64:
		for (i = 0; i < n; i++) {
			if (type == VNPU_TYPE_U32)
				((uint32_t *)dst)[i] = (uint32_t)tp->uint64_data[i];
			else
				((uint64_t *)dst)[i] = tp->uint64_data[i];
		}
		return;
	default:
		for (i = 0; i < n; i++) {
			int32_t v = tp->int32_data[i];

			switch (vnpu_element_type_size(type)) {
			case 4:
				((int32_t *)dst)[i] = v;
				break;
			case 2:
				((uint16_t *)dst)[i] = (uint16_t)v;
				break;
			default:
				((uint8_t *)dst)[i] = (uint8_t)v;
				break;
			}
		}
		return;
	}
}

/* The string_data of @tp (@n strings, counted) into string tensor @t. */
static vnpu_status strings_from_proto(const Onnx__TensorProto *tp, const char *path,
				      vnpu_tensor *t, uint64_t n, char *err, size_t err_size)
{
	vnpu_status st = VNPU_OK;

	for (uint64_t i = 0; !st && i < n; i++)
		st = vnpu_tensor_set_string(t, i, (const char *)tp->string_data[i].data,
					    tp->string_data[i].len);
	if (st)
		snprintf(err, err_size, "%s: %s", path, vnpu_last_error());
	return st;
}

vnpu_status tensor_from_proto(const Onnx__TensorProto *tp, const char *path,
				     vnpu_tensor **out, char *err, size_t err_size)
{
	vnpu_element_type type;
	vnpu_tensor *t = NULL;
	uint64_t n = 1, bytes;
	vnpu_shape shape;
	vnpu_status st;
	size_t esize;
	void *data;
	size_t i;

	type = (vnpu_element_type)tp->data_type;
	esize = type == VNPU_TYPE_STRING ? 1 : vnpu_element_type_size(type);
	if (!esize) {
		snprintf(err, err_size, "%s: element type %d is not supported", path,
			 tp->data_type);
		return VNPU_UNSUPPORTED;
	}
	if (tp->n_dims > VNPU_MAX_RANK) {
		snprintf(err, err_size, "%s: rank %zu is above %d", path, tp->n_dims,
			 VNPU_MAX_RANK);
		return VNPU_UNSUPPORTED;
	}
	shape.rank = (uint32_t)tp->n_dims;
	for (i = 0; i < tp->n_dims; i++) {
		if (tp->dims[i] < 0 || __builtin_mul_overflow(n, (uint64_t)tp->dims[i], &n)) {
			snprintf(err, err_size, "%s: bad dimension", path);
			return VNPU_PARSE_ERROR;
		}
		shape.dims[i] = tp->dims[i];
	}
	if (tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
		snprintf(err, err_size, "%s: external data is not supported here", path);
		return VNPU_UNSUPPORTED;
	}
	if (__builtin_mul_overflow(n, esize, &bytes)) {
		snprintf(err, err_size, "%s: bad dimension", path);
		return VNPU_PARSE_ERROR;
	}
	if (type == VNPU_TYPE_STRING) {
		if (tp->n_string_data != n) {
			snprintf(err, err_size, "%s: %zu strings, the shape needs %llu", path,
				 tp->n_string_data, (unsigned long long)n);
			return VNPU_PARSE_ERROR;
		}
	} else if (tp->has_raw_data && tp->raw_data.len != bytes) {
		snprintf(err, err_size, "%s: raw_data holds %zu bytes, the shape needs %llu",
			 path, tp->raw_data.len, (unsigned long long)bytes);
		return VNPU_PARSE_ERROR;
	}
	if (type != VNPU_TYPE_STRING && !tp->has_raw_data && typed_count(tp, type) != n) {
		snprintf(err, err_size, "%s: the typed data holds %zu values, the shape needs %llu",
			 path, typed_count(tp, type), (unsigned long long)n);
		return VNPU_PARSE_ERROR;
	}

	st = vnpu_tensor_create(type, &shape, &t);
	if (st != VNPU_OK) {
		snprintf(err, err_size, "%s: %s", path, vnpu_last_error());
		return st;
	}
	if (type == VNPU_TYPE_STRING) {
		st = strings_from_proto(tp, path, t, n, err, err_size);
		if (st)
			vnpu_tensor_free(t);
		else
			*out = t;
		return st;
	}
	vnpu_tensor_get_data(t, &data);
	if (tp->has_raw_data && bytes)
		memcpy(data, tp->raw_data.data, bytes);
	else if (!tp->has_raw_data)
		copy_typed(tp, type, data, n);
	*out = t;
	return VNPU_OK;
}

vnpu_status tensor_file_read(const char *path, vnpu_tensor **out,
			     char **out_name, char *err, size_t err_size)
{
	Onnx__TensorProto *tp;
	vnpu_tensor *t = NULL;
	size_t size = 0, len = strlen(path);
	vnpu_status st;
	void *buf;

	if (tensor_spec_is_raw(path) || (len > 4 && !strcmp(path + len - 4, ".npy"))) {
		st = tensor_spec_is_raw(path) ? tensor_raw_read(path, &t, err, err_size) :
		     tensor_npy_read(path, &t, err, err_size);
		if (!st && out_name && !(*out_name = strdup(""))) {
			vnpu_tensor_free(t);
			snprintf(err, err_size, "out of memory");
			return VNPU_OUT_OF_MEMORY;
		}
		if (!st)
			*out = t;
		return st;
	}
	buf = file_read_whole(path, &size, err, err_size);
	if (!buf)
		return VNPU_NOT_FOUND;
	tp = onnx__tensor_proto__unpack(NULL, size, buf);
	free(buf);
	if (!tp) {
		snprintf(err, err_size, "%s: not a TensorProto", path);
		return VNPU_PARSE_ERROR;
	}
	st = tensor_from_proto(tp, path, &t, err, err_size);
	if (!st && out_name) {
		*out_name = strdup(tp->name ? tp->name : "");
		if (!*out_name) {
			snprintf(err, err_size, "out of memory");
			st = VNPU_OUT_OF_MEMORY;
		}
	}
	if (!st) {
		*out = t;
		t = NULL;
	}
	vnpu_tensor_free(t);
	onnx__tensor_proto__free_unpacked(tp, NULL);
	return st;
}

void tensor_value_fini(struct tensor_value *v)
{
	for (size_t i = 0; v->tensors && i < v->count; i++)
		vnpu_tensor_free(v->tensors[i]);
	free(v->tensors);
	memset(v, 0, sizeof(*v));
}

/* A SequenceProto of tensors into @v. */
static vnpu_status sequence_from_proto(const VnpuData__SequenceProto *sp, const char *path,
				       struct tensor_value *v, char *err, size_t err_size)
{
	if (sp->n_sequence_values || sp->n_optional_values ||
	    (sp->has_elem_type && sp->elem_type != 1 && sp->n_tensor_values)) {
		snprintf(err, err_size, "%s: a sequence of sequences or optionals is not supported",
			 path);
		return VNPU_UNSUPPORTED;
	}
	v->kind = VNPU_PORT_SEQUENCE;
	v->tensors = calloc(sp->n_tensor_values + 1, sizeof(*v->tensors));
	if (!v->tensors) {
		snprintf(err, err_size, "out of memory");
		return VNPU_OUT_OF_MEMORY;
	}
	for (size_t i = 0; i < sp->n_tensor_values; i++) {
		vnpu_status st = tensor_from_proto(sp->tensor_values[i], path, &v->tensors[i], err,
						   err_size);

		if (st)
			return st;
		v->count++;
	}
	return VNPU_OK;
}

/* An OptionalProto of a tensor or a sequence (or of nothing) into @v. */
static vnpu_status optional_from_proto(const VnpuData__OptionalProto *op, const char *path,
				       struct tensor_value *v, char *err, size_t err_size)
{
	if (op->optional_value) {
		snprintf(err, err_size, "%s: an optional of an optional is not supported", path);
		return VNPU_UNSUPPORTED;
	}
	if (op->sequence_value)
		return sequence_from_proto(op->sequence_value, path, v, err, err_size);
	if (!op->tensor_value) {
		v->kind = VNPU_PORT_NONE;
		return VNPU_OK;
	}
	v->kind = VNPU_PORT_TENSOR;
	v->tensors = calloc(2, sizeof(*v->tensors));
	if (!v->tensors) {
		snprintf(err, err_size, "out of memory");
		return VNPU_OUT_OF_MEMORY;
	}
	v->count = 1;
	return tensor_from_proto(op->tensor_value, path, &v->tensors[0], err, err_size);
}

vnpu_status tensor_value_read(const char *path, vnpu_port_kind kind, struct tensor_value *out,
			      char *err, size_t err_size)
{
	VnpuData__SequenceProto *sp = NULL;
	VnpuData__OptionalProto *op = NULL;
	struct tensor_value v = { 0 };
	vnpu_status st;
	size_t size = 0;
	void *buf;

	if (kind == VNPU_PORT_TENSOR) {
		v.kind = VNPU_PORT_TENSOR;
		v.tensors = calloc(2, sizeof(*v.tensors));
		if (!v.tensors) {
			snprintf(err, err_size, "out of memory");
			return VNPU_OUT_OF_MEMORY;
		}
		v.count = 1;
		st = tensor_file_read(path, &v.tensors[0], NULL, err, err_size);
		if (st)
			v.count = 0;
		goto out;
	}
	buf = file_read_whole(path, &size, err, err_size);
	if (!buf)
		return VNPU_NOT_FOUND;
	if (kind == VNPU_PORT_SEQUENCE)
		sp = vnpu_data__sequence_proto__unpack(NULL, size, buf);
	else
		op = vnpu_data__optional_proto__unpack(NULL, size, buf);
	free(buf);
	if (!sp && !op) {
		snprintf(err, err_size, "%s: not a%s", path,
			 kind == VNPU_PORT_SEQUENCE ? " SequenceProto" : "n OptionalProto");
		return VNPU_PARSE_ERROR;
	}
	st = sp ? sequence_from_proto(sp, path, &v, err, err_size) :
	     optional_from_proto(op, path, &v, err, err_size);
	if (sp)
		vnpu_data__sequence_proto__free_unpacked(sp, NULL);
	if (op)
		vnpu_data__optional_proto__free_unpacked(op, NULL);
out:
	if (st) {
		tensor_value_fini(&v);
		return st;
	}
	*out = v;
	return VNPU_OK;
}

/* Write packed TensorProto @tp to @path. */
static vnpu_status write_proto(const char *path, const Onnx__TensorProto *tp, char *err,
			       size_t err_size);

/* String tensor @tensor of @shape (@dims) as a TensorProto of string_data. */
static vnpu_status strings_file_write(const char *path, const char *name,
				      const vnpu_tensor *tensor, const vnpu_shape *shape,
				      int64_t *dims, char *err, size_t err_size)
{
	Onnx__TensorProto tp = ONNX__TENSOR_PROTO__INIT;
	ProtobufCBinaryData *strs;
	uint64_t n = 0;
	vnpu_status st;

	vnpu_tensor_get_size(tensor, &n);
	strs = calloc(n ? n : 1, sizeof(*strs));
	if (!strs) {
		snprintf(err, err_size, "out of memory");
		return VNPU_OUT_OF_MEMORY;
	}
	for (uint64_t i = 0; i < n; i++) {
		const char *s = "";

		vnpu_tensor_get_string(tensor, i, &s);
		strs[i].data = (uint8_t *)s;
		strs[i].len = strlen(s);
	}
	tp.n_dims = shape->rank;
	tp.dims = dims;
	tp.has_data_type = 1;
	tp.data_type = VNPU_TYPE_STRING;
	tp.name = (char *)name;
	tp.n_string_data = n;
	tp.string_data = strs;
	st = write_proto(path, &tp, err, err_size);
	free(strs);
	return st;
}

vnpu_status tensor_file_write(const char *path, const char *name,
			      const vnpu_tensor *tensor, char *err,
			      size_t err_size)
{
	Onnx__TensorProto tp = ONNX__TENSOR_PROTO__INIT;
	vnpu_element_type type;
	int64_t dims[VNPU_MAX_RANK];
	uint64_t bytes;
	vnpu_shape shape;
	void *data;
	uint32_t i;

	vnpu_tensor_get_element_type(tensor, &type);
	vnpu_tensor_get_shape(tensor, &shape);
	vnpu_tensor_get_byte_size(tensor, &bytes);
	for (i = 0; i < shape.rank; i++)
		dims[i] = shape.dims[i];
	if (type == VNPU_TYPE_STRING)
		return strings_file_write(path, name, tensor, &shape, dims, err, err_size);
	vnpu_tensor_get_data(tensor, &data);

	tp.n_dims = shape.rank;
	tp.dims = dims;
	tp.has_data_type = 1;
	tp.data_type = (int32_t)type;
	tp.name = (char *)name;
	tp.has_raw_data = 1;
	tp.raw_data.len = bytes;
	tp.raw_data.data = data;
	return write_proto(path, &tp, err, err_size);
}

static vnpu_status write_proto(const char *path, const Onnx__TensorProto *tp, char *err,
			       size_t err_size)
{
	size_t len = onnx__tensor_proto__get_packed_size(tp);
	uint8_t *buf = malloc(len ? len : 1);
	vnpu_status st = VNPU_OK;
	FILE *f;

	if (!buf) {
		snprintf(err, err_size, "out of memory");
		return VNPU_OUT_OF_MEMORY;
	}
	onnx__tensor_proto__pack(tp, buf);
	f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, len, f) != len) {
		snprintf(err, err_size, "%s: %s", path, strerror(errno));
		st = VNPU_GENERAL_ERROR;
	}
	if (f && fclose(f) && st == VNPU_OK) {
		snprintf(err, err_size, "%s: %s", path, strerror(errno));
		st = VNPU_GENERAL_ERROR;
	}
	free(buf);
	return st;
}

vnpu_status tensor_freeze_input(vnpu_model *model, const char *name, vnpu_tensor *t)
{
	vnpu_element_type type;
	vnpu_shape shape;
	uint64_t bytes;
	vnpu_status st;
	void *data;

	st = vnpu_tensor_get_element_type(t, &type);
	if (!st)
		st = vnpu_tensor_get_shape(t, &shape);
	if (!st)
		st = vnpu_tensor_get_byte_size(t, &bytes);
	if (!st)
		st = vnpu_tensor_get_data(t, &data);
	return st ? st : vnpu_model_freeze_input(model, name, type, &shape, data, bytes);
}

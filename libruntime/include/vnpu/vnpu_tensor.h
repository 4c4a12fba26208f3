/* SPDX-License-Identifier: MIT */
/*
 * libvnpu: tensors, dense row-major arrays of one element type.
 *
 * A tensor is either host memory (created here, owned or wrapping the
 * caller's memory) or a device buffer an infer request created and mapped
 * into the process: writing into the data of the latter is zero-copy.
 *
 * Ownership: tensors are reference counted. Every call that hands out a
 * tensor (create, vnpu_infer_request_get_tensor) gives the caller one
 * reference, released with vnpu_tensor_free(); an infer request holds its
 * own reference to every tensor set on it, so a tensor may be freed by the
 * caller right after set_tensor.
 *
 * Thread safety: references may be taken and dropped from any thread; the
 * data itself is not synchronized (do not write it while a request that
 * uses it runs).
 */
#ifndef VNPU_TENSOR_H
#define VNPU_TENSOR_H

#include <vnpu/vnpu_common.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Create a host tensor of @type and @shape (every dim known, >= 0) with
 * zeroed, 64-byte aligned memory the tensor owns.
 */
VNPU_API vnpu_status vnpu_tensor_create(vnpu_element_type type,
					const vnpu_shape *shape,
					vnpu_tensor **out);

/**
 * Create a host tensor over the caller's @data (at least the tensor's byte
 * size, aligned to the element size). The caller keeps owning @data and
 * keeps it alive while the tensor exists.
 */
VNPU_API vnpu_status vnpu_tensor_create_from_ptr(vnpu_element_type type,
						 const vnpu_shape *shape,
						 void *data,
						 vnpu_tensor **out);

/** Drop the caller's reference; the last one frees the tensor. NULL is ok. */
VNPU_API void vnpu_tensor_free(vnpu_tensor *tensor);

VNPU_API vnpu_status vnpu_tensor_get_element_type(const vnpu_tensor *tensor,
						  vnpu_element_type *out);
VNPU_API vnpu_status vnpu_tensor_get_shape(const vnpu_tensor *tensor,
					   vnpu_shape *out);
/** Number of elements (the product of the dims). */
VNPU_API vnpu_status vnpu_tensor_get_size(const vnpu_tensor *tensor,
					  uint64_t *out);
VNPU_API vnpu_status vnpu_tensor_get_byte_size(const vnpu_tensor *tensor,
					       uint64_t *out);
/**
 * The tensor's first element. The memory stays valid while the caller
 * holds its reference.
 */
VNPU_API vnpu_status vnpu_tensor_get_data(const vnpu_tensor *tensor,
					  void **out);

/*
 * String tensors (VNPU_TYPE_STRING) hold one byte string per element,
 * copied in and out through the two calls below: vnpu_tensor_create()
 * makes one of empty strings; vnpu_tensor_create_from_ptr() and
 * vnpu_tensor_get_data() refuse the type, and vnpu_tensor_get_byte_size()
 * gives the bytes its strings hold. A string holds no NUL byte and at most
 * VNPU_STRING_MAX_BYTES; the strings of one tensor at most
 * VNPU_STRING_TENSOR_MAX_BYTES together, and it has at most
 * VNPU_STRING_MAX_ELEMS elements.
 */
#define VNPU_STRING_MAX_BYTES (1u << 20)
#define VNPU_STRING_TENSOR_MAX_BYTES (UINT64_C(1) << 30)
#define VNPU_STRING_MAX_ELEMS (UINT64_C(1) << 24)

/** Element @index (row-major) of string tensor @tensor becomes a copy of @len bytes of @str. */
VNPU_API vnpu_status vnpu_tensor_set_string(vnpu_tensor *tensor, uint64_t index,
					    const char *str, size_t len);
/**
 * Element @index of string tensor @tensor, NUL-terminated, into @out: valid
 * until that element is set again or the tensor is freed.
 */
VNPU_API vnpu_status vnpu_tensor_get_string(const vnpu_tensor *tensor, uint64_t index,
					    const char **out);

#ifdef __cplusplus
}
#endif

#endif /* VNPU_TENSOR_H */

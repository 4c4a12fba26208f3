// SPDX-License-Identifier: MIT
/* Tensors: host memory or a request's mapped device buffer, refcounted. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime.h"
#include "model/ir.h"

/* Tensors larger than this are refused rather than attempted. */
#define VNPU_TENSOR_MAX_BYTES (UINT64_C(1) << 40)

uint64_t vnpu_shape_elems(const vnpu_shape *shape)
{
	uint64_t n = 1;
	uint32_t i;

	for (i = 0; i < shape->rank; i++)
		n *= (uint64_t)shape->dims[i];
	return n;
}

bool vnpu_shape_equal(const vnpu_shape *a, const vnpu_shape *b)
{
	uint32_t i;

	if (a->rank != b->rank)
		return false;
	for (i = 0; i < a->rank; i++) {
		if (a->dims[i] != b->dims[i])
			return false;
	}
	return true;
}

const char *vnpu_shape_str(const vnpu_shape *shape, char *buf, size_t size)
{
	size_t len = 0;
	uint32_t i;

	len += (size_t)snprintf(buf, size, "[");
	for (i = 0; i < shape->rank && i < VNPU_MAX_RANK && len < size; i++) {
		if (shape->dims[i] < 0)
			len += (size_t)snprintf(buf + len, size - len, "%s?", i ? "," : "");
		else
			len += (size_t)snprintf(buf + len, size - len, "%s%lld", i ? "," : "",
						(long long)shape->dims[i]);
	}
	if (len < size)
		snprintf(buf + len, size - len, "]");
	return buf;
}

/* Check @type and @shape and compute the element and byte counts. */
static vnpu_status check_layout(vnpu_element_type type, const vnpu_shape *shape,
				uint64_t *elems, uint64_t *bytes)
{
	size_t esize = type == VNPU_TYPE_STRING ? sizeof(char *) : vnpu_element_type_size(type);
	uint64_t n = 1;
	uint32_t i;

	if (!shape)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "tensor: shape is NULL");
	if (!esize)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "tensor: element type %d (%s) has no size",
				  (int)type, vnpu_element_type_str(type));
	if (shape->rank > VNPU_MAX_RANK)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "tensor: rank %u is above %d",
				  shape->rank, VNPU_MAX_RANK);
	for (i = 0; i < shape->rank; i++) {
		if (shape->dims[i] < 0)
			return vnpu_error(VNPU_INVALID_ARGUMENT,
					  "tensor: dimension %u is %lld (dynamic or negative)", i,
					  (long long)shape->dims[i]);
		if (shape->dims[i] && n > VNPU_TENSOR_MAX_BYTES / (uint64_t)shape->dims[i])
			return vnpu_error(VNPU_INVALID_ARGUMENT, "tensor: too many elements");
		n *= (uint64_t)shape->dims[i];
	}
	if (n > VNPU_TENSOR_MAX_BYTES / esize)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "tensor: too many bytes");
	if (type == VNPU_TYPE_STRING && n > VNPU_STRING_MAX_ELEMS)
		return vnpu_error(VNPU_INVALID_ARGUMENT,
				  "tensor: %llu strings is above the most, %llu",
				  (unsigned long long)n, (unsigned long long)VNPU_STRING_MAX_ELEMS);
	*elems = n;
	*bytes = n * esize;
	return VNPU_OK;
}

static vnpu_status tensor_alloc(vnpu_element_type type, const vnpu_shape *shape,
				struct vnpu_tensor_handle **out)
{
	struct vnpu_tensor_handle *t;
	uint64_t elems = 0, bytes = 0;
	vnpu_status st = check_layout(type, shape, &elems, &bytes);

	if (st != VNPU_OK)
		return st;
	t = calloc(1, sizeof(*t));
	if (!t)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory");
	atomic_init(&t->refs, 1);
	t->type = type;
	t->shape = *shape;
	t->elems = elems;
	t->bytes = bytes;
	*out = t;
	return VNPU_OK;
}

VNPU_API vnpu_status vnpu_tensor_create(vnpu_element_type type, const vnpu_shape *shape,
					vnpu_tensor **out)
{
	struct vnpu_tensor_handle *t;
	vnpu_status st;

	if (!out)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "vnpu_tensor_create: out is NULL");
	st = tensor_alloc(type, shape, &t);
	if (st != VNPU_OK)
		return st;
	t->data = aligned_alloc(64, t->bytes ? (t->bytes + 63) & ~(uint64_t)63 : 64);
	if (!t->data) {
		st = vnpu_error(VNPU_OUT_OF_MEMORY, "no memory for a %llu-byte tensor",
				(unsigned long long)t->bytes);
		free(t);
		return st;
	}
	memset(t->data, 0, t->bytes);
	t->owns_data = true;
	*out = t;
	return VNPU_OK;
}

VNPU_API vnpu_status vnpu_tensor_create_from_ptr(vnpu_element_type type,
						 const vnpu_shape *shape, void *data,
						 vnpu_tensor **out)
{
	struct vnpu_tensor_handle *t;
	vnpu_status st;

	if (!out || !data)
		return vnpu_error(VNPU_INVALID_ARGUMENT,
				  "vnpu_tensor_create_from_ptr: NULL argument");
	if (type == VNPU_TYPE_STRING)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "vnpu_tensor_create_from_ptr: a string "
				  "tensor owns its strings (vnpu_tensor_create)");
	if ((uintptr_t)data % vnpu_element_type_size(type ? type : VNPU_TYPE_U8))
		return vnpu_error(VNPU_INVALID_ARGUMENT,
				  "vnpu_tensor_create_from_ptr: data is not aligned to its elements");
	st = tensor_alloc(type, shape, &t);
	if (st != VNPU_OK)
		return st;
	t->data = data;
	*out = t;
	return VNPU_OK;
}

static vnpu_status make_new_buf(struct vnpu_core_device *device, uint64_t bytes, void *ctx,
				struct vnpu_buf **out)
{
	(void)ctx;
	return device->plugin->ops->buf_create(device->dev, bytes, out);
}

vnpu_status vnpu_tensor_new_device(struct vnpu_core *core,
				   struct vnpu_core_device *device,
				   vnpu_element_type type, const vnpu_shape *shape,
				   struct vnpu_tensor_handle **out)
{
	return vnpu_tensor_new_buf(core, device, type, shape, make_new_buf, NULL, out);
}

vnpu_status vnpu_tensor_new_buf(struct vnpu_core *core, struct vnpu_core_device *device,
				vnpu_element_type type, const vnpu_shape *shape,
				vnpu_make_buf_fn make, void *ctx,
				struct vnpu_tensor_handle **out)
{
	struct vnpu_tensor_handle *t;
	vnpu_status st = tensor_alloc(type, shape, &t);

	if (st != VNPU_OK)
		return st;
	st = make(device, t->bytes, ctx, &t->buf);
	if (st != VNPU_OK) {
		free(t);
		return st;
	}
	t->data = t->buf->map;
	t->device = device;
	t->core = core;
	vnpu_core_ref(core);
	if (device->plugin->ops->fence_import) {
		t->fences = calloc(1, sizeof(*t->fences));
		if (!t->fences) {
			vnpu_tensor_free(t);
			return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory");
		}
		pthread_mutex_init(&t->fences->lock, NULL);
		pthread_cond_init(&t->fences->submitted, NULL);
		t->fences->in_fd = -1;
		t->fences->out_fd = -1;
	}
	*out = t;
	return VNPU_OK;
}

static void fences_free(struct vnpu_tensor_fences *f)
{
	if (!f)
		return;
	if (f->in_fd >= 0)
		close(f->in_fd);
	if (f->out_fd >= 0)
		close(f->out_fd);
	pthread_cond_destroy(&f->submitted);
	pthread_mutex_destroy(&f->lock);
	free(f);
}

void vnpu_tensor_fence_pending(struct vnpu_tensor_handle *t, int delta)
{
	pthread_mutex_lock(&t->fences->lock);
	t->fences->pending += (uint32_t)delta;
	if (delta < 0)
		pthread_cond_broadcast(&t->fences->submitted);
	pthread_mutex_unlock(&t->fences->lock);
}

void vnpu_tensor_fence_submitted(struct vnpu_tensor_handle *t, int sync_file)
{
	pthread_mutex_lock(&t->fences->lock);
	if (t->fences->out_fd >= 0)
		close(t->fences->out_fd);
	t->fences->out_fd = sync_file;
	t->fences->pending--;
	pthread_cond_broadcast(&t->fences->submitted);
	pthread_mutex_unlock(&t->fences->lock);
}

struct vnpu_tensor_handle *vnpu_tensor_ref(struct vnpu_tensor_handle *t)
{
	atomic_fetch_add(&t->refs, 1);
	return t;
}

VNPU_API void vnpu_tensor_free(vnpu_tensor *t)
{
	if (!t || atomic_fetch_sub(&t->refs, 1) != 1)
		return;
	fences_free(t->fences);
	if (t->buf) {
		t->device->plugin->ops->buf_free(t->buf);
		vnpu_core_unref(t->core);
	}
	if (t->owns_data && t->type == VNPU_TYPE_STRING) {
		for (uint64_t i = 0; i < t->elems; i++)
			free(((char **)t->data)[i]);
	}
	if (t->owns_data)
		free(t->data);
	free(t);
}

#define CHECK_ARGS(t, out, fn) \
	do { \
		if (!(t) || !(out)) \
			return vnpu_error(VNPU_INVALID_ARGUMENT, fn ": NULL argument"); \
	} while (0)

VNPU_API vnpu_status vnpu_tensor_get_element_type(const vnpu_tensor *t,
						  vnpu_element_type *out)
{
	CHECK_ARGS(t, out, "vnpu_tensor_get_element_type");
	*out = t->type;
	return VNPU_OK;
}

VNPU_API vnpu_status vnpu_tensor_get_shape(const vnpu_tensor *t, vnpu_shape *out)
{
	CHECK_ARGS(t, out, "vnpu_tensor_get_shape");
	*out = t->shape;
	return VNPU_OK;
}

VNPU_API vnpu_status vnpu_tensor_get_size(const vnpu_tensor *t, uint64_t *out)
{
	CHECK_ARGS(t, out, "vnpu_tensor_get_size");
	*out = t->elems;
	return VNPU_OK;
}

VNPU_API vnpu_status vnpu_tensor_get_byte_size(const vnpu_tensor *t, uint64_t *out)
{
	CHECK_ARGS(t, out, "vnpu_tensor_get_byte_size");
	*out = t->type == VNPU_TYPE_STRING ? t->str_bytes : t->bytes;
	return VNPU_OK;
}

VNPU_API vnpu_status vnpu_tensor_get_data(const vnpu_tensor *t, void **out)
{
	CHECK_ARGS(t, out, "vnpu_tensor_get_data");
	if (t->type == VNPU_TYPE_STRING)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "vnpu_tensor_get_data: a string tensor's "
				  "elements are read with vnpu_tensor_get_string");
	*out = t->data;
	return VNPU_OK;
}

/* VNPU_INVALID_ARGUMENT unless @t is a string tensor with an element @index. */
static vnpu_status check_string_elem(const struct vnpu_tensor_handle *t, uint64_t index,
				     const char *fn)
{
	if (t->type != VNPU_TYPE_STRING)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "%s: the tensor is %s, not string", fn,
				  vnpu_element_type_str(t->type));
	if (index >= t->elems)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "%s: element %llu of %llu", fn,
				  (unsigned long long)index, (unsigned long long)t->elems);
	return VNPU_OK;
}

vnpu_status vnpu_string_set(struct vnpu_tensor_handle *t, uint64_t index, const char *str,
			    size_t len)
{
	char **elems = t->data, *copy = NULL;
	size_t old = elems[index] ? strlen(elems[index]) : 0;

	if (len > VNPU_STRING_MAX_BYTES)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "string element %llu: %zu bytes is above "
				  "the most, %u", (unsigned long long)index, len,
				  VNPU_STRING_MAX_BYTES);
	if (len && memchr(str, '\0', len))
		return vnpu_error(VNPU_INVALID_ARGUMENT, "string element %llu holds a NUL byte",
				  (unsigned long long)index);
	if (t->str_bytes - old + len > VNPU_STRING_TENSOR_MAX_BYTES)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "a string tensor's strings would hold "
				  "more than %llu bytes",
				  (unsigned long long)VNPU_STRING_TENSOR_MAX_BYTES);
	if (len) {
		copy = malloc(len + 1);
		if (!copy)
			return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory");
		memcpy(copy, str, len);
		copy[len] = '\0';
	}
	free(elems[index]);
	elems[index] = copy;
	t->str_bytes = t->str_bytes - old + len;
	return VNPU_OK;
}

const char *vnpu_string_get(const struct vnpu_tensor_handle *t, uint64_t index)
{
	const char *s = ((char *const *)t->data)[index];

	return s ? s : "";
}

VNPU_API vnpu_status vnpu_tensor_set_string(vnpu_tensor *t, uint64_t index, const char *str,
					    size_t len)
{
	static const char fn[] = "vnpu_tensor_set_string";

	if (!t || (!str && len))
		return vnpu_error(VNPU_INVALID_ARGUMENT, "%s: NULL argument", fn);
	return check_string_elem(t, index, fn) ?: vnpu_string_set(t, index, str, len);
}

VNPU_API vnpu_status vnpu_tensor_get_string(const vnpu_tensor *t, uint64_t index,
					    const char **out)
{
	static const char fn[] = "vnpu_tensor_get_string";
	vnpu_status st;

	CHECK_ARGS(t, out, "vnpu_tensor_get_string");
	st = check_string_elem(t, index, fn);
	if (st)
		return st;
	*out = vnpu_string_get(t, index);
	return VNPU_OK;
}

/* ---- a sequence of tensors frozen into a model ---- */

VNPU_API vnpu_status vnpu_model_freeze_sequence(vnpu_model *m, const char *name,
						vnpu_tensor *const *elems, size_t count)
{
	struct vnpu_tinfo *infos;
	vnpu_status st;

	if (!m || !name || (!elems && count))
		return vnpu_error(VNPU_INVALID_ARGUMENT, "freeze: NULL argument");
	infos = calloc(count + 1, sizeof(*infos));
	if (!infos)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "freeze: out of memory");
	for (size_t i = 0; i < count; i++) {
		const struct vnpu_tensor_handle *t = elems[i];

		if (!t || t->shape.rank > VNPU_MAX_RANK) {
			free(infos);
			return vnpu_error(VNPU_INVALID_ARGUMENT, "freeze '%s': element %zu is %s", name,
					  i, t ? "of a rank above the highest" : "NULL");
		}
		/* Borrowed: the model copies them. */
		infos[i].type = t->type;
		infos[i].rank = (int32_t)t->shape.rank;
		memcpy(infos[i].dims, t->shape.dims, t->shape.rank * sizeof(t->shape.dims[0]));
		infos[i].data = t->data;
	}
	st = vnpu_model_freeze_elems(m, name, infos, count);
	free(infos);
	return st;
}

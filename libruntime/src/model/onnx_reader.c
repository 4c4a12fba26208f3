// SPDX-License-Identifier: MIT
/*
 * ONNX reader: the protobuf-c decoded ModelProto into the graph IR.
 *
 * Every name a node reads must be a model input, an initializer or the
 * output of exactly one node; nodes are sorted topologically (a cycle is
 * an error) and every tensor's byte count is checked against its dims.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/openat2.h>

#include "error.h"
#include "ir.h"
#include "onnx.pb-c.h"

/* Opsets 1 to 6 are read too: nodes whose meaning changed since (legacy
 * broadcasting) are refused one by one by inference. */
#define MIN_OPSET 1
#define MAX_OPSET 17
#define MAX_TENSOR_BYTES (1ull << 34)
/* All the external data of one model. */
#define MAX_EXTERNAL_BYTES (1ull << 36)

/* Name -> value index, open addressing over the model's value table. */
struct name_map {
	uint32_t cap;		/* a power of two */
	int32_t *slots;		/* value index or -1 */
};

/* Subgraphs (If branches, loop bodies) nest at most this deep. */
#define MAX_GRAPH_DEPTH 16

struct reader {
	struct vnpu_model *m;
	struct name_map map;
	const char *dir;
	int dirfd;			/* @dir, opened for the first external data */
	uint64_t external_bytes;	/* read so far */
	int depth;
	int32_t *producer;		/* value -> its node in the graph sorted now */
	uint32_t num_producers;
	const struct vnpu_onnx_src *src;
	const struct vnpu_onnx_skel *skel;	/* the payloads left out of the proto */
};

static uint32_t hash_name(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h;
}

static vnpu_status oom(void)
{
	return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory reading the model");
}

static int32_t map_find(const struct reader *r, const char *name)
{
	uint32_t mask = r->map.cap - 1;

	if (!r->map.cap)
		return -1;
	for (uint32_t i = hash_name(name) & mask;; i = (i + 1) & mask) {
		int32_t v = r->map.slots[i];

		if (v < 0)
			return -1;
		if (!strcmp(r->m->values[v].name, name))
			return v;
	}
}

static vnpu_status map_grow(struct reader *r)
{
	uint32_t cap = r->map.cap ? r->map.cap * 2 : 256;
	int32_t *slots = malloc(cap * sizeof(*slots));

	if (!slots)
		return oom();
	for (uint32_t i = 0; i < cap; i++)
		slots[i] = -1;
	for (uint32_t v = 0; v < r->m->num_values; v++) {
		uint32_t i = hash_name(r->m->values[v].name) & (cap - 1);

		while (slots[i] >= 0)
			i = (i + 1) & (cap - 1);
		slots[i] = (int32_t)v;
	}
	free(r->map.slots);
	r->map.slots = slots;
	r->map.cap = cap;
	return VNPU_OK;
}

/* Add a value called @name; fails when the name is taken. */
static vnpu_status add_value(struct reader *r, const char *name,
			     enum vnpu_value_kind kind, int32_t *out)
{
	struct vnpu_model *m = r->m;
	struct vnpu_value *v;
	uint32_t i;

	if (map_find(r, name) >= 0)
		return vnpu_error(VNPU_PARSE_ERROR, "tensor '%s' is defined twice", name);
	if (m->num_values >= INT32_MAX / 2)
		return vnpu_error(VNPU_PARSE_ERROR, "too many tensors");
	if (m->num_values == m->cap_values) {
		uint32_t cap = m->cap_values ? m->cap_values * 2 : 64;
		struct vnpu_value *vals = realloc(m->values, cap * sizeof(*vals));

		if (!vals)
			return oom();
		m->values = vals;
		m->cap_values = cap;
	}
	if ((m->num_values + 1) * 2 > r->map.cap && map_grow(r))
		return VNPU_OUT_OF_MEMORY;
	v = &m->values[m->num_values];
	memset(v, 0, sizeof(*v));
	v->name = strdup(name);
	if (!v->name)
		return oom();
	v->kind = kind;
	v->info.rank = -1;
	for (i = hash_name(name) & (r->map.cap - 1); r->map.slots[i] >= 0;
	     i = (i + 1) & (r->map.cap - 1))
		;
	r->map.slots[i] = (int32_t)m->num_values;
	*out = (int32_t)m->num_values++;
	return VNPU_OK;
}

/* ---- tensors ---- */

static bool type_supported(int32_t t)
{
	return t != VNPU_TYPE_UNDEFINED && t != VNPU_TYPE_STRING &&
	       vnpu_element_type_size((vnpu_element_type)t) != 0;
}

/*
 * A value's declared type: also strings, which only the host runs (a
 * compiled model of string values, host_model.c); no constant is a string.
 */
static bool value_type_supported(int32_t t)
{
	return t == VNPU_TYPE_STRING || type_supported(t);
}

/* @what '@name' has element type @t, which type_supported() refuses. */
static vnpu_status type_unsupported(const char *what, const char *name, int32_t t)
{
	const char *type = vnpu_onnx_type_name(t);

	if (type)
		return vnpu_error(VNPU_UNSUPPORTED, "%s'%s': %s tensors are not supported", what,
				  name, type);
	return vnpu_error(VNPU_UNSUPPORTED, "%s'%s': element type %d is not supported", what,
			  name, t);
}

/*
 * External data: a file named by a tensor's location, relative to the
 * model's folder and never outside it. The folder is opened once; each
 * location is resolved beneath it without following any symbolic link
 * (openat2's RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS, or one openat() with
 * O_NOFOLLOW per component where the kernel lacks openat2), opened
 * without blocking (a FIFO) and read only when it is a regular file.
 */
struct external {
	const char *location;
	uint64_t offset;
	int fd;
};

/* A decimal number of an external_data entry into @v. */
static bool parse_u64(const char *s, uint64_t *v)
{
	*v = 0;
	if (!*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || *v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return false;
		*v = *v * 10 + (uint64_t)(*s - '0');
	}
	return true;
}

static bool is_symlink(int dirfd, const char *name)
{
	struct stat sb;

	return !fstatat(dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) && S_ISLNK(sb.st_mode);
}

/* @location below @dirfd, one component at a time, no link followed. */
static int open_by_components(int dirfd, const char *location)
{
	char comp[NAME_MAX + 1];
	int fd = dirfd;

	for (const char *p = location; *p;) {
		size_t len = strcspn(p, "/");
		bool last = !p[len];
		int next;

		if (len > NAME_MAX) {
			errno = ENAMETOOLONG;
			next = -1;
		} else {
			memcpy(comp, p, len);
			comp[len] = 0;
			next = openat(fd, len ? comp : ".", O_RDONLY | O_NOFOLLOW | O_CLOEXEC |
				      (last ? O_NONBLOCK : O_DIRECTORY));
			/* O_DIRECTORY says a link is no folder: say it is a link. */
			if (next < 0 && errno == ENOTDIR && is_symlink(fd, comp))
				errno = ELOOP;
		}
		if (fd != dirfd) {
			int err = errno;

			close(fd);
			errno = err;
		}
		if (next < 0)
			return -1;
		fd = next;
		p += len + !last;
	}
	return fd;
}

/* VNPU_DEBUG_NO_OPENAT2 set: as on a kernel without openat2 (a test). */
static int open_beneath(int dirfd, const char *location)
{
#ifdef SYS_openat2
	struct open_how how = {
		.flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	int fd;

	if (!getenv("VNPU_DEBUG_NO_OPENAT2")) {
		fd = (int)syscall(SYS_openat2, dirfd, location, &how, sizeof(how));
		/* Older kernels, and sandboxes that filter the call. */
		if (fd >= 0 || (errno != ENOSYS && errno != EPERM))
			return fd;
	}
#endif
	return open_by_components(dirfd, location);
}

/* Whether @location climbs out of its folder: absolute, or a ".." in it. */
static bool leaves_folder(const char *location)
{
	if (location[0] == '/')
		return true;
	for (const char *p = location; *p; p += strcspn(p, "/"), p += *p == '/')
		if (!strncmp(p, "..", 2) && (!p[2] || p[2] == '/'))
			return true;
	return false;
}

static vnpu_status external_error(const Onnx__TensorProto *tp, vnpu_status st,
				  const char *location, const char *what)
{
	return vnpu_error(st, "tensor '%s': external data '%s' %s", tp->name ? tp->name : "",
			  location, what);
}

/*
 * Open the external data of @tp (@bytes of it) into @x, checked before
 * anything is allocated: a regular file beneath the model's folder that
 * holds the bytes at their offset, the model's total within
 * MAX_EXTERNAL_BYTES.
 */
static vnpu_status external_open(struct reader *r, const Onnx__TensorProto *tp, uint64_t bytes,
				 struct external *x)
{
	uint64_t length = bytes;
	struct stat sb;

	x->location = NULL;
	x->offset = 0;
	for (size_t i = 0; i < tp->n_external_data; i++) {
		const Onnx__StringStringEntryProto *e = tp->external_data[i];
		bool ok = true;

		if (!e->key || !e->value)
			continue;
		if (!strcmp(e->key, "location"))
			x->location = e->value;
		else if (!strcmp(e->key, "offset"))
			ok = parse_u64(e->value, &x->offset);
		else if (!strcmp(e->key, "length"))
			ok = parse_u64(e->value, &length);
		if (!ok)
			return vnpu_error(VNPU_PARSE_ERROR, "tensor '%s': external data %s '%s' is not a number",
					  tp->name ? tp->name : "", e->key, e->value);
	}
	if (!x->location || !*x->location)
		return vnpu_error(VNPU_PARSE_ERROR, "tensor '%s': external data without a location",
				  tp->name ? tp->name : "");
	if (!r->dir)
		return external_error(tp, VNPU_NOT_FOUND, x->location,
				      "cannot be read from a model in memory");
	if (leaves_folder(x->location))
		return external_error(tp, VNPU_PARSE_ERROR, x->location, "leaves the model's folder");
	if (length != bytes)
		return vnpu_error(VNPU_PARSE_ERROR, "tensor '%s': external data length %llu, expected %llu",
				  tp->name ? tp->name : "", (unsigned long long)length,
				  (unsigned long long)bytes);
	if (bytes > MAX_EXTERNAL_BYTES - r->external_bytes)
		return vnpu_error(VNPU_UNSUPPORTED, "tensor '%s': more than %llu bytes of external data",
				  tp->name ? tp->name : "",
				  (unsigned long long)MAX_EXTERNAL_BYTES);
	if (r->dirfd < 0) {
		r->dirfd = open(r->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (r->dirfd < 0)
			return vnpu_error(VNPU_NOT_FOUND, "the model's folder %s: %s", r->dir,
					  strerror(errno));
	}
	x->fd = open_beneath(r->dirfd, x->location);
	if (x->fd < 0 && (errno == ELOOP || errno == EXDEV))
		return external_error(tp, VNPU_PARSE_ERROR, x->location,
				      "is or passes through a symbolic link, which is not followed");
	if (x->fd < 0)
		return vnpu_error(errno == ENOENT || errno == ENOTDIR ? VNPU_NOT_FOUND :
				  VNPU_INVALID_ARGUMENT, "tensor '%s': external data %s/%s: %s",
				  tp->name ? tp->name : "", r->dir, x->location, strerror(errno));
	if (fstat(x->fd, &sb) || !S_ISREG(sb.st_mode)) {
		close(x->fd);
		return external_error(tp, VNPU_PARSE_ERROR, x->location, "is not a regular file");
	}
	if ((uint64_t)sb.st_size < x->offset || (uint64_t)sb.st_size - x->offset < bytes) {
		close(x->fd);
		return vnpu_error(VNPU_PARSE_ERROR,
				  "tensor '%s': external data '%s' of %lld bytes has no %llu at offset %llu",
				  tp->name ? tp->name : "", x->location, (long long)sb.st_size,
				  (unsigned long long)bytes, (unsigned long long)x->offset);
	}
	r->external_bytes += bytes;
	return VNPU_OK;
}

/* @bytes from @x into @dst; closes it. */
static vnpu_status external_read(const Onnx__TensorProto *tp, struct external *x, void *dst,
				 uint64_t bytes)
{
	uint64_t got = 0;

	while (got < bytes) {
		ssize_t n = pread(x->fd, (char *)dst + got, bytes - got > (1u << 30) ?
				  (1u << 30) : (size_t)(bytes - got), (off_t)(x->offset + got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (uint64_t)n;
	}
	close(x->fd);
	if (got != bytes)
		return vnpu_error(VNPU_PARSE_ERROR,
				  "tensor '%s': external data '%s': %llu of %llu bytes at offset %llu",
				  tp->name ? tp->name : "", x->location, (unsigned long long)got,
				  (unsigned long long)bytes, (unsigned long long)x->offset);
	return VNPU_OK;
}

/* Typed fields (not raw_data) into @dst; @n elements. */
/* The number of values a tensor of @type holds in its typed field. */
static size_t typed_count(const Onnx__TensorProto *tp, vnpu_element_type type)
{
	switch (type) {
	case VNPU_TYPE_F32:
		return tp->n_float_data;
	case VNPU_TYPE_I64:
		return tp->n_int64_data;
	case VNPU_TYPE_F64:
		return tp->n_double_data;
	case VNPU_TYPE_U32:
	case VNPU_TYPE_U64:
		return tp->n_uint64_data;
	default:
		return tp->n_int32_data;
	}
}

/* Copies the @n values of the typed field, which read_tensor() counted. */
static vnpu_status read_typed(const Onnx__TensorProto *tp, vnpu_element_type type,
			      void *dst, int64_t n)
{
	for (int64_t i = 0; i < n; i++) {
		switch (type) {
		case VNPU_TYPE_F32:
			((float *)dst)[i] = tp->float_data[i];
			break;
		case VNPU_TYPE_I64:
			((int64_t *)dst)[i] = tp->int64_data[i];
			break;
		case VNPU_TYPE_F64:
			((double *)dst)[i] = tp->double_data[i];
			break;
		case VNPU_TYPE_U32:
			((uint32_t *)dst)[i] = (uint32_t)tp->uint64_data[i];
			break;
		case VNPU_TYPE_U64:
			((uint64_t *)dst)[i] = tp->uint64_data[i];
			break;
		case VNPU_TYPE_F16:
		case VNPU_TYPE_BF16:
		case VNPU_TYPE_U16:
		case VNPU_TYPE_I16:
			((uint16_t *)dst)[i] = (uint16_t)tp->int32_data[i];
			break;
		case VNPU_TYPE_I32:
			((int32_t *)dst)[i] = tp->int32_data[i];
			break;
		case VNPU_TYPE_BOOL:
			((uint8_t *)dst)[i] = tp->int32_data[i] != 0;
			break;
		default:	/* U8, I8 */
			((uint8_t *)dst)[i] = (uint8_t)tp->int32_data[i];
			break;
		}
	}
	return VNPU_OK;
}

/*
 * The pages of @p's @bytes, faulted in at once before they are written:
 * on this kind of VM a page faulted in by its first write costs half as
 * much again (0.7 ms/MB, against 0.47 with the populate and the write).
 * A hint: nothing where the kernel does not take it.
 */
static void populate(void *p, uint64_t bytes)
{
#ifdef MADV_POPULATE_WRITE
	uintptr_t a = ((uintptr_t)p + 4095) & ~(uintptr_t)4095;
	uintptr_t e = ((uintptr_t)p + bytes) & ~(uintptr_t)4095;

	if (bytes >= (1u << 20) && e > a)
		madvise((void *)a, e - a, MADV_POPULATE_WRITE);
#else
	(void)p;
	(void)bytes;
#endif
}

/*
 * The payload left out of the skeleton that @tp's raw data is (*@pay), or
 * NULL; an error when it has two raw data fields so.
 */
static vnpu_status tensor_payload(const struct reader *r, const Onnx__TensorProto *tp,
				  const struct vnpu_onnx_payload **pay)
{
	const char *name = tp->name ? tp->name : "";

	*pay = NULL;
	for (unsigned i = 0; i < tp->base.n_unknown_fields; i++) {
		const ProtobufCMessageUnknownField *u = &tp->base.unknown_fields[i];
		uint64_t v = 0;

		if (u->tag != VNPU_ONNX_PAYLOAD_FIELD)
			continue;
		for (size_t b = 0; b < u->len && b < 10; b++)
			v |= (uint64_t)(u->data[b] & 0x7f) << (7 * b);
		if (*pay || tp->has_raw_data || u->wire_type != PROTOBUF_C_WIRE_TYPE_VARINT ||
		    v >= r->skel->num_payloads)
			return vnpu_error(VNPU_PARSE_ERROR, "tensor '%s': raw data given twice", name);
		*pay = &r->skel->payloads[v];
	}
	return VNPU_OK;
}

/*
 * A TensorProto's data into @t (type, dims, data). A large raw data
 * payload, left out of the skeleton, is read straight into @t's own block;
 * a smaller one is taken, not copied: protobuf-c unpacked it into a
 * malloc() block of its own, which @t now owns (the proto's field left
 * empty, so that freeing the proto skips it). Fresh pages are what reading
 * costs most: each copy of the weights costs as much again.
 */
static vnpu_status read_tensor(struct reader *r, Onnx__TensorProto *tp,
			       struct vnpu_tinfo *t)
{
	const char *name = tp->name ? tp->name : "";
	uint64_t elems = 1, nonzero = 1, bytes;
	const struct vnpu_onnx_payload *pay;
	struct external x = { .fd = -1 };
	bool external;
	size_t esize;
	vnpu_status st;

	if (!tp->has_data_type || !type_supported(tp->data_type))
		return type_unsupported("tensor ", name, tp->has_data_type ? tp->data_type : 0);
	if (tp->n_dims > VNPU_MAX_RANK)
		return vnpu_error(VNPU_UNSUPPORTED, "tensor '%s': rank %zu above %d",
				  name, tp->n_dims, VNPU_MAX_RANK);
	t->type = (vnpu_element_type)tp->data_type;
	t->rank = (int32_t)tp->n_dims;
	esize = vnpu_element_type_size(t->type);
	for (size_t d = 0; d < tp->n_dims; d++) {
		int64_t dim = tp->dims[d];

		/* Zeros aside: an empty tensor's strides are products too. */
		if (dim < 0 || (dim && nonzero > MAX_TENSOR_BYTES / (uint64_t)dim))
			return vnpu_error(VNPU_PARSE_ERROR, "tensor '%s': bad or huge dimension %lld",
					  name, (long long)dim);
		t->dims[d] = dim;
		elems *= (uint64_t)dim;
		if (dim)
			nonzero *= (uint64_t)dim;
	}
	bytes = elems * esize;
	if (bytes > MAX_TENSOR_BYTES)
		return vnpu_error(VNPU_UNSUPPORTED, "tensor '%s': %llu bytes is too large",
				  name, (unsigned long long)bytes);
	external = tp->has_data_location &&
		   tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
	st = tensor_payload(r, tp, &pay);
	if (st)
		return st;
	/* The data must be there before its declared size is allocated. */
	if (external) {
		st = external_open(r, tp, bytes, &x);
		if (st)
			return st;
	} else if (pay) {
		if (pay->len != bytes)
			return vnpu_error(VNPU_PARSE_ERROR, "tensor '%s': %llu raw bytes, expected %llu",
					  name, (unsigned long long)pay->len,
					  (unsigned long long)bytes);
		t->data = malloc(bytes);
		if (!t->data)
			return oom();
		t->owns_data = true;
		populate(t->data, bytes);
		st = vnpu_onnx_read_at(r->src, pay->offset, t->data, bytes);
		if (!st && t->type == VNPU_TYPE_BOOL)
			for (uint64_t i = 0; i < bytes; i++)
				((uint8_t *)t->data)[i] = ((uint8_t *)t->data)[i] != 0;
		return st;
	} else if (tp->has_raw_data && tp->raw_data.len != bytes) {
		return vnpu_error(VNPU_PARSE_ERROR, "tensor '%s': %zu raw bytes, expected %llu",
				  name, tp->raw_data.len, (unsigned long long)bytes);
	} else if (!tp->has_raw_data && typed_count(tp, t->type) != elems) {
		return vnpu_error(VNPU_PARSE_ERROR, "tensor '%s': %zu values for %llu elements",
				  name, typed_count(tp, t->type), (unsigned long long)elems);
	}
	if (!external && tp->has_raw_data && bytes) {
		t->data = tp->raw_data.data;
		t->owns_data = true;
		tp->raw_data.data = NULL;
		tp->raw_data.len = 0;
		if (t->type == VNPU_TYPE_BOOL)
			for (uint64_t i = 0; i < bytes; i++)
				((uint8_t *)t->data)[i] = ((uint8_t *)t->data)[i] != 0;
		return VNPU_OK;
	}
	t->data = calloc(1, bytes ? bytes : 1);
	if (!t->data) {
		if (external)
			close(x.fd);
		return oom();
	}
	t->owns_data = true;
	if (external)
		return external_read(tp, &x, t->data, bytes);
	if (tp->has_raw_data)
		return VNPU_OK;		/* no bytes */
	st = read_typed(tp, t->type, t->data, (int64_t)elems);
	return st;
}

/*
 * The kind of a TypeProto: a tensor, a sequence of tensors, an optional of
 * either; @tensor is the tensor type inside. Other types (maps, sparse
 * tensors, nested sequences) are not supported.
 */
static vnpu_status read_kind(const char *name, const Onnx__TypeProto *tp, vnpu_port_kind *kind,
			     const Onnx__TypeProto__Tensor **tensor)
{
	bool optional = false, sequence = false;

	if (tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE && tp->optional_type) {
		optional = true;
		tp = tp->optional_type->elem_type;
	}
	if (tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE && tp->sequence_type) {
		sequence = true;
		tp = tp->sequence_type->elem_type;
	}
	if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
		return vnpu_error(VNPU_UNSUPPORTED,
				  "'%s' is not a tensor, a sequence of tensors or an optional of those",
				  name);
	*tensor = tp->tensor_type;
	*kind = optional ? (sequence ? VNPU_PORT_OPTIONAL_SEQUENCE : VNPU_PORT_OPTIONAL) :
		sequence ? VNPU_PORT_SEQUENCE : VNPU_PORT_TENSOR;
	return VNPU_OK;
}

/*
 * A ValueInfoProto's type into @t (no data) and @v's declared kind. A
 * sequence's length is unknown until it is frozen; a present optional is
 * its value, so an optional input reads as that value's type.
 */
static vnpu_status read_value_info(const Onnx__ValueInfoProto *vi, struct vnpu_value *v)
{
	struct vnpu_tinfo *t = &v->info;
	const Onnx__TypeProto__Tensor *tt;
	vnpu_status st = read_kind(vi->name, vi->type, &v->port_kind, &tt);

	if (st)
		return st;
	if (v->port_kind == VNPU_PORT_SEQUENCE || v->port_kind == VNPU_PORT_OPTIONAL_SEQUENCE) {
		t->kind = VNPU_TK_SEQUENCE;
		t->num_elems = -1;
	}
	if (!tt->has_elem_type || !value_type_supported(tt->elem_type))
		return type_unsupported("", vi->name, tt->has_elem_type ? tt->elem_type : 0);
	t->type = (vnpu_element_type)tt->elem_type;
	v->port_type = t->type;
	if (!tt->shape || t->kind == VNPU_TK_SEQUENCE) {
		t->rank = -1;
		return VNPU_OK;
	}
	if (tt->shape->n_dim > VNPU_MAX_RANK)
		return vnpu_error(VNPU_UNSUPPORTED, "'%s': rank %zu above %d", vi->name,
				  tt->shape->n_dim, VNPU_MAX_RANK);
	t->rank = (int32_t)tt->shape->n_dim;
	for (size_t d = 0; d < tt->shape->n_dim; d++) {
		const Onnx__TensorShapeProto__Dimension *dim = tt->shape->dim[d];

		if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
			if (dim->dim_value < 0 || dim->dim_value > (1ll << 40))
				return vnpu_error(VNPU_PARSE_ERROR, "'%s': bad dimension %lld",
						  vi->name, (long long)dim->dim_value);
			t->dims[d] = dim->dim_value;
		} else {
			t->dims[d] = VNPU_DIM_DYNAMIC;
		}
	}
	return VNPU_OK;
}

/* The declared kind and type of a graph output (inference gives the rest). */
static void read_declared(const Onnx__ValueInfoProto *vi, struct vnpu_value *v)
{
	const Onnx__TypeProto__Tensor *tt;

	if (!read_kind(vi->name, vi->type, &v->port_kind, &tt) && tt->has_elem_type &&
	    value_type_supported(tt->elem_type))
		v->port_type = (vnpu_element_type)tt->elem_type;
}

/* ---- graphs ---- */

static vnpu_status read_graph(struct reader *r, Onnx__GraphProto *gp,
			      struct vnpu_graph *g, bool main);

static vnpu_status read_attr(struct reader *r, Onnx__AttributeProto *ap,
			     struct vnpu_attr *a)
{
	a->name = strdup(ap->name ? ap->name : "");
	if (!a->name)
		return oom();
	a->t.rank = -1;
	if (!ap->has_type)
		return vnpu_error(VNPU_PARSE_ERROR, "attribute '%s' without a type", a->name);
	a->type = (enum vnpu_attr_type)ap->type;
	switch (ap->type) {
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT:
		a->f = ap->f;
		return VNPU_OK;
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT:
		a->i = ap->i;
		return VNPU_OK;
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING:
		a->s = strndup(ap->has_s ? (const char *)ap->s.data : "", ap->has_s ? ap->s.len : 0);
		return a->s ? VNPU_OK : oom();
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR:
		if (!ap->t)
			return vnpu_error(VNPU_PARSE_ERROR, "attribute '%s' without its tensor", a->name);
		return read_tensor(r, ap->t, &a->t);
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH:
		if (!ap->g)
			return vnpu_error(VNPU_PARSE_ERROR, "attribute '%s' without its graph", a->name);
		a->g = calloc(1, sizeof(*a->g));
		if (!a->g)
			return oom();
		if (r->depth >= MAX_GRAPH_DEPTH)
			return vnpu_error(VNPU_UNSUPPORTED, "subgraphs nested deeper than %d",
					  MAX_GRAPH_DEPTH);
		{
			vnpu_status st;

			r->depth++;
			st = read_graph(r, ap->g, a->g, false);
			r->depth--;
			return st;
		}
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS:
		a->n = ap->n_floats;
		a->floats = malloc((a->n ? a->n : 1) * sizeof(float));
		if (!a->floats)
			return oom();
		if (a->n)
			memcpy(a->floats, ap->floats, a->n * sizeof(float));
		return VNPU_OK;
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS:
		a->n = ap->n_ints;
		a->ints = malloc((a->n ? a->n : 1) * sizeof(int64_t));
		if (!a->ints)
			return oom();
		if (a->n)
			memcpy(a->ints, ap->ints, a->n * sizeof(int64_t));
		return VNPU_OK;
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS:
		a->strings = calloc(ap->n_strings ? ap->n_strings : 1, sizeof(char *));
		if (!a->strings)
			return oom();
		for (size_t i = 0; i < ap->n_strings; i++, a->n++) {
			a->strings[i] = strndup((const char *)ap->strings[i].data, ap->strings[i].len);
			if (!a->strings[i])
				return oom();
		}
		return VNPU_OK;
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO:
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTOS:
		return VNPU_OK;	/* Optional's type: an empty optional is NONE */
	default:
		return vnpu_error(VNPU_UNSUPPORTED, "attribute '%s' of type %d not supported",
				  a->name, ap->type);
	}
}

static vnpu_status read_node(struct reader *r, Onnx__NodeProto *np,
			     struct vnpu_node *n)
{
	vnpu_status st;

	n->name = strdup(np->name ? np->name : "");
	n->op = strdup(np->op_type ? np->op_type : "");
	n->domain = strdup(np->domain && strcmp(np->domain, "ai.onnx") ? np->domain : "");
	n->inputs = calloc(np->n_input ? np->n_input : 1, sizeof(int32_t));
	n->outputs = calloc(np->n_output ? np->n_output : 1, sizeof(int32_t));
	n->attrs = calloc(np->n_attribute ? np->n_attribute : 1, sizeof(*n->attrs));
	if (!n->name || !n->op || !n->domain || !n->inputs || !n->outputs || !n->attrs)
		return oom();
	if (!*n->op)
		return vnpu_error(VNPU_PARSE_ERROR, "node '%s' without an op type", n->name);
	/* Resolved once every node's outputs are known. */
	for (size_t i = 0; i < np->n_input; i++, n->num_inputs++)
		n->inputs[i] = VNPU_NO_VALUE;
	for (size_t i = 0; i < np->n_output; i++, n->num_outputs++) {
		n->outputs[i] = VNPU_NO_VALUE;
		if (!np->output[i][0])
			continue;
		st = add_value(r, np->output[i], VNPU_VALUE_NODE, &n->outputs[i]);
		if (st)
			return vnpu_node_prefix(st, n);
	}
	/* Every op has a first output; only RNN, GRU and LSTM may leave Y out. */
	if (!n->num_outputs || (n->outputs[0] == VNPU_NO_VALUE && strcmp(n->op, "RNN") &&
				strcmp(n->op, "GRU") && strcmp(n->op, "LSTM")))
		return vnpu_node_prefix(vnpu_error(VNPU_PARSE_ERROR, "the node has no first output"),
					n);
	for (size_t i = 0; i < np->n_attribute; i++) {
		n->num_attrs = (uint32_t)i + 1;
		st = read_attr(r, np->attribute[i], &n->attrs[i]);
		if (st)
			return vnpu_node_prefix(st, n);
	}
	return vnpu_node_check_attrs(n);
}

static vnpu_status resolve_inputs(struct reader *r, const Onnx__NodeProto *np,
				  struct vnpu_node *n)
{
	for (size_t i = 0; i < np->n_input; i++) {
		if (!np->input[i][0])
			continue;
		n->inputs[i] = map_find(r, np->input[i]);
		if (n->inputs[i] < 0)
			return vnpu_node_error(VNPU_PARSE_ERROR, n,
					       "reads '%s', which no node, input or initializer defines",
					       np->input[i]);
	}
	return VNPU_OK;
}

/* Append to @deps the values @g reads but does not produce (recursively). */
static void graph_reads(const struct vnpu_graph *g, int32_t **deps, uint32_t *n, uint32_t *cap,
			bool *failed)
{
	for (uint32_t i = 0; i < g->num_nodes; i++) {
		const struct vnpu_node *node = &g->nodes[i];

		for (uint32_t k = 0; k < node->num_inputs + node->num_attrs; k++) {
			if (k >= node->num_inputs) {
				const struct vnpu_attr *a = &node->attrs[k - node->num_inputs];

				if (a->g)
					graph_reads(a->g, deps, n, cap, failed);
				continue;
			}
			if (node->inputs[k] < 0)
				continue;
			if (*n == *cap) {
				uint32_t c = *cap ? *cap * 2 : 16;
				int32_t *d = realloc(*deps, c * sizeof(int32_t));

				if (!d) {
					*failed = true;
					return;
				}
				*deps = d;
				*cap = c;
			}
			(*deps)[(*n)++] = node->inputs[k];
		}
	}
}

/* Every value a node depends on: its inputs and what its subgraphs read. */
static vnpu_status node_deps(const struct vnpu_node *n, int32_t **deps, uint32_t *num)
{
	uint32_t cap = n->num_inputs + 1;
	bool failed = false;

	*deps = malloc(cap * sizeof(int32_t));
	if (!*deps)
		return oom();
	*num = 0;
	for (uint32_t i = 0; i < n->num_inputs; i++)
		if (n->inputs[i] >= 0)
			(*deps)[(*num)++] = n->inputs[i];
	for (uint32_t a = 0; a < n->num_attrs; a++)
		if (n->attrs[a].g)
			graph_reads(n->attrs[a].g, deps, num, &cap, &failed);
	return failed ? oom() : VNPU_OK;
}

/* A min-heap of node positions: the ready node listed first comes out. */
struct ready_heap {
	uint32_t *pos;
	uint32_t n;
};

static void heap_push(struct ready_heap *h, uint32_t v)
{
	uint32_t i = h->n++;

	while (i && h->pos[(i - 1) / 2] > v) {
		h->pos[i] = h->pos[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->pos[i] = v;
}

static uint32_t heap_pop(struct ready_heap *h)
{
	uint32_t top = h->pos[0], v = h->pos[--h->n], i = 0;

	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && h->pos[c + 1] < h->pos[c])
			c++;
		if (h->pos[c] >= v)
			break;
		h->pos[i] = h->pos[c];
		i = c;
	}
	if (h->n)
		h->pos[i] = v;
	return top;
}

/* r->producer covers every value, -1 where no node of the graph sorted now writes it. */
static vnpu_status producers_grow(struct reader *r)
{
	uint32_t nv = r->m->num_values;
	int32_t *p;

	if (nv <= r->num_producers)
		return VNPU_OK;
	p = realloc(r->producer, nv * sizeof(*p));
	if (!p)
		return oom();
	for (uint32_t v = r->num_producers; v < nv; v++)
		p[v] = -1;
	r->producer = p;
	r->num_producers = nv;
	return VNPU_OK;
}

/* The edges of @g: for each node, the nodes that read its outputs (CSR). */
struct edges {
	int32_t **deps;		/* per node: the values it reads (node_deps()) */
	uint32_t *num_deps;
	uint32_t *first;	/* [nn + 2]: node i's readers are to[first[i]..first[i+1]) */
	uint32_t *to;
	uint32_t *waiting;	/* per node: producers not placed yet */
};

static void edges_free(struct edges *e, uint32_t nn)
{
	for (uint32_t i = 0; e->deps && i < nn; i++)
		free(e->deps[i]);
	free(e->deps);
	free(e->num_deps);
	free(e->first);
	free(e->to);
	free(e->waiting);
}

static vnpu_status edges_build(struct reader *r, const struct vnpu_graph *g, struct edges *e)
{
	uint32_t nn = g->num_nodes;
	uint64_t total = 0;
	vnpu_status st;

	e->deps = calloc(nn + 1, sizeof(*e->deps));
	e->num_deps = calloc(nn + 1, sizeof(*e->num_deps));
	e->first = calloc(nn + 2, sizeof(*e->first));
	e->waiting = calloc(nn + 1, sizeof(*e->waiting));
	if (!e->deps || !e->num_deps || !e->first || !e->waiting)
		return oom();
	for (uint32_t i = 0; i < nn; i++) {
		st = node_deps(&g->nodes[i], &e->deps[i], &e->num_deps[i]);
		if (st)
			return st;
		for (uint32_t k = 0; k < e->num_deps[i]; k++) {
			int32_t p = r->producer[e->deps[i][k]];

			if (p >= 0) {
				e->first[p + 2]++;
				e->waiting[i]++;
				total++;
			}
		}
	}
	e->to = malloc((total + 1) * sizeof(*e->to));
	if (!e->to)
		return oom();
	/* first[p + 1] starts at node p's readers and moves past them as
	 * they are filled in, ending where node p + 1's start. */
	for (uint32_t i = 0; i < nn; i++)
		e->first[i + 2] += e->first[i + 1];
	for (uint32_t i = 0; i < nn; i++)
		for (uint32_t k = 0; k < e->num_deps[i]; k++) {
			int32_t p = r->producer[e->deps[i][k]];

			if (p >= 0)
				e->to[e->first[p + 1]++] = i;
		}
	return VNPU_OK;
}

/*
 * Order @g's nodes so every node comes after the producers of what it
 * reads (a subgraph's reads count as its node's): Kahn's algorithm, the
 * ready node listed first taken each time, so a graph in order (as ONNX
 * requires) keeps its order and any other gets the same one every time.
 * O((nodes + edges) log nodes).
 */
static vnpu_status sort_nodes(struct reader *r, struct vnpu_graph *g)
{
	uint32_t nn = g->num_nodes, done = 0;
	struct ready_heap heap = { 0 };
	struct edges e = { 0 };
	struct vnpu_node *sorted;
	vnpu_status st;

	st = producers_grow(r);
	if (st)
		return st;
	for (uint32_t i = 0; i < nn; i++)
		for (uint32_t o = 0; o < g->nodes[i].num_outputs; o++)
			if (g->nodes[i].outputs[o] >= 0)
				r->producer[g->nodes[i].outputs[o]] = (int32_t)i;
	sorted = calloc(nn + 1, sizeof(*sorted));
	heap.pos = malloc((nn + 1) * sizeof(*heap.pos));
	st = sorted && heap.pos ? edges_build(r, g, &e) : oom();
	for (uint32_t i = 0; !st && i < nn; i++)
		if (!e.waiting[i])
			heap_push(&heap, i);
	while (!st && heap.n) {
		uint32_t i = heap_pop(&heap);

		sorted[done++] = g->nodes[i];
		for (uint32_t k = e.first[i]; k < e.first[i + 1]; k++)
			if (!--e.waiting[e.to[k]])
				heap_push(&heap, e.to[k]);
	}
	for (uint32_t i = 0; !st && done < nn && i < nn; i++) {
		if (e.waiting[i]) {
			char label[256];

			vnpu_node_label(&g->nodes[i], label, sizeof(label));
			st = vnpu_error(VNPU_PARSE_ERROR, "the graph has a cycle through %s", label);
		}
	}
	if (!st)
		memcpy(g->nodes, sorted, nn * sizeof(*sorted));
	for (uint32_t i = 0; i < nn; i++)
		for (uint32_t o = 0; o < g->nodes[i].num_outputs; o++)
			if (g->nodes[i].outputs[o] >= 0)
				r->producer[g->nodes[i].outputs[o]] = -1;
	edges_free(&e, nn);
	free(heap.pos);
	free(sorted);
	return st;
}

static vnpu_status read_graph(struct reader *r, Onnx__GraphProto *gp,
			      struct vnpu_graph *g, bool main)
{
	vnpu_status st;
	int32_t idx;

	for (size_t i = 0; i < gp->n_initializer; i++) {
		Onnx__TensorProto *tp = gp->initializer[i];

		st = add_value(r, tp->name ? tp->name : "", VNPU_VALUE_CONST, &idx);
		if (st)
			return st;
		st = read_tensor(r, tp, &r->m->values[idx].info);
		if (st)
			return vnpu_error_prefix(st, "initializer '%s'", tp->name ? tp->name : "");
	}
	if (gp->n_sparse_initializer)
		return vnpu_error(VNPU_UNSUPPORTED, "sparse initializers are not supported");
	g->inputs = calloc(gp->n_input + 1, sizeof(int32_t));
	g->outputs = calloc(gp->n_output + 1, sizeof(int32_t));
	g->nodes = calloc(gp->n_node + 1, sizeof(*g->nodes));
	if (!g->inputs || !g->outputs || !g->nodes)
		return oom();
	for (size_t i = 0; i < gp->n_input; i++) {
		const Onnx__ValueInfoProto *vi = gp->input[i];
		const char *name = vi->name ? vi->name : "";

		if (map_find(r, name) >= 0 &&
		    r->m->values[map_find(r, name)].kind == VNPU_VALUE_CONST)
			continue;	/* an initializer listed as input (IR < 4) */
		/* A body's inputs (Loop, Scan) are set by its node at every
		 * iteration: values without a producer in the body, typed by
		 * inference from the node's inputs. */
		st = add_value(r, name, main ? VNPU_VALUE_INPUT : VNPU_VALUE_NODE, &idx);
		if (st)
			return st;
		g->inputs[g->num_inputs++] = idx;
		if (!main)
			continue;
		st = read_value_info(vi, &r->m->values[idx]);
		if (st)
			return vnpu_error_prefix(st, "input");
	}
	for (size_t i = 0; i < gp->n_node; i++) {
		g->num_nodes = (uint32_t)i + 1;
		st = read_node(r, gp->node[i], &g->nodes[i]);
		if (st)
			return st;
	}
	for (size_t i = 0; i < gp->n_node; i++) {
		st = resolve_inputs(r, gp->node[i], &g->nodes[i]);
		if (st)
			return st;
	}
	for (size_t i = 0; i < gp->n_output; i++) {
		const char *name = gp->output[i]->name ? gp->output[i]->name : "";

		idx = map_find(r, name);
		if (idx < 0)
			return vnpu_error(VNPU_PARSE_ERROR, "graph output '%s' is never produced", name);
		/* Outputs are found by name: each name once. A loop body may
		 * give one value as a carried and a scan output. */
		for (uint32_t k = 0; main && k < g->num_outputs; k++)
			if (g->outputs[k] == idx)
				return vnpu_error(VNPU_PARSE_ERROR, "graph output '%s' is listed twice",
						  name);
		g->outputs[g->num_outputs++] = idx;
		if (main && gp->output[i]->type)
			read_declared(gp->output[i], &r->m->values[idx]);
	}
	if (main && !g->num_outputs)
		return vnpu_error(VNPU_PARSE_ERROR, "the graph has no outputs");
	return sort_nodes(r, g);
}

static vnpu_status read_opset(struct vnpu_model *m, const Onnx__ModelProto *mp)
{
	m->opset = -1;
	for (size_t i = 0; i < mp->n_opset_import; i++) {
		const Onnx__OperatorSetIdProto *os = mp->opset_import[i];
		const char *domain = os->domain ? os->domain : "";

		if (os->has_version && os->version < 0)
			return vnpu_error(VNPU_PARSE_ERROR, "opset version %lld of domain '%s' is negative",
					  (long long)os->version, domain);
		if (!domain[0] || !strcmp(domain, "ai.onnx"))
			m->opset = os->has_version ? os->version : 1;
	}
	if (m->opset < 0 && m->ir_version < 3)
		m->opset = 1;
	/* Only other domains imported (the training optimizers): no default
	 * op may appear, so the default-domain rules do not matter. */
	if (m->opset < 0 && mp->n_opset_import && mp->graph) {
		for (size_t i = 0; i < mp->graph->n_node; i++) {
			const char *d = mp->graph->node[i]->domain;

			if (!d || !d[0] || !strcmp(d, "ai.onnx"))
				return vnpu_error(VNPU_PARSE_ERROR,
						  "node %zu is of the default domain, which the model does not import",
						  i);
		}
		m->opset = MAX_OPSET;
	}
	if (m->opset < MIN_OPSET || m->opset > MAX_OPSET)
		return vnpu_error(VNPU_UNSUPPORTED, "opset %lld of the default domain, supported are %d to %d",
				  (long long)m->opset, 7, MAX_OPSET);
	return VNPU_OK;
}

vnpu_status vnpu_onnx_parse(const struct vnpu_onnx_src *src, const char *dir,
			    struct vnpu_model **out)
{
	struct reader r = { .dir = dir, .dirfd = -1, .src = src };
	struct vnpu_onnx_skel skel;
	Onnx__ModelProto *mp;
	vnpu_status st;

	st = vnpu_onnx_skeleton(src, &skel);
	if (st)
		return st;
	r.skel = &skel;
	/* Bounded before protobuf-c, which recurses and allocates freely. */
	st = vnpu_onnx_wire_check(skel.data, skel.size);
	if (st) {
		vnpu_onnx_skel_free(&skel);
		return st;
	}
	mp = onnx__model_proto__unpack(NULL, skel.size, skel.data);
	if (!mp) {
		vnpu_onnx_skel_free(&skel);
		return vnpu_error(VNPU_PARSE_ERROR,
				  "not an ONNX model: protobuf decoding of %llu bytes failed (truncated or corrupt)",
				  (unsigned long long)src->size);
	}
	/* protobuf-c copied what it keeps. */
	vnpu_onnx_skel_free_data(&skel);
	r.m = calloc(1, sizeof(*r.m));
	if (!r.m) {
		onnx__model_proto__free_unpacked(mp, NULL);
		vnpu_onnx_skel_free(&skel);
		return oom();
	}
	r.m->ir_version = mp->has_ir_version ? mp->ir_version : 0;
	if (dir) {
		r.m->dir = strdup(dir);
		if (!r.m->dir) {
			st = oom();
			goto fail;
		}
	}
	if (!mp->graph) {
		st = vnpu_error(VNPU_PARSE_ERROR, "the model has no graph");
		goto fail;
	}
	st = read_opset(r.m, mp);
	if (!st)
		st = read_graph(&r, mp->graph, &r.m->main, true);
	if (!st)
		st = vnpu_model_infer(r.m);
	if (st)
		goto fail;
	onnx__model_proto__free_unpacked(mp, NULL);
	vnpu_onnx_skel_free(&skel);
	free(r.map.slots);
	free(r.producer);
	if (r.dirfd >= 0)
		close(r.dirfd);
	*out = r.m;
	return VNPU_OK;
fail:
	onnx__model_proto__free_unpacked(mp, NULL);
	vnpu_onnx_skel_free(&skel);
	free(r.map.slots);
	free(r.producer);
	if (r.dirfd >= 0)
		close(r.dirfd);
	vnpu_model_free(r.m);
	return st;
}

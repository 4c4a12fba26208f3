// SPDX-License-Identifier: MIT
/*
 * NumPy .npy files and raw files (FILE.raw:TYPE:D,D,...) <-> vnpu_tensor.
 *
 * Every file is hostile: the .npy header is read alone and checked whole
 * (magic, version, a bounded header length, a dict of exactly descr,
 * fortran_order and shape, a little-endian type libvnpu knows, C order,
 * a shape of at most VNPU_MAX_RANK dimensions whose byte size does not
 * overflow) and the data's size is compared with what is left of the
 * file before the tensor is allocated; the data is then read straight
 * into the tensor.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tensor_file.h"

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAX_HEADER 65536	/* numpy writes < 1 KiB; it reads at most 10000 */

/* numpy's type string of each element type (little-endian, '|' for bytes). */
static const struct {
	vnpu_element_type type;
	const char *descr;
} npy_types[] = {
	{ VNPU_TYPE_F32, "<f4" }, { VNPU_TYPE_F64, "<f8" }, { VNPU_TYPE_F16, "<f2" },
	{ VNPU_TYPE_I8, "|i1" }, { VNPU_TYPE_U8, "|u1" }, { VNPU_TYPE_I16, "<i2" },
	{ VNPU_TYPE_U16, "<u2" }, { VNPU_TYPE_I32, "<i4" }, { VNPU_TYPE_U32, "<u4" },
	{ VNPU_TYPE_I64, "<i8" }, { VNPU_TYPE_U64, "<u8" }, { VNPU_TYPE_BOOL, "|b1" },
};
#define NUM_NPY_TYPES (sizeof(npy_types) / sizeof(npy_types[0]))

/* A regular file opened for reading, with its size. */
static FILE *open_regular(const char *path, uint64_t *size, char *err, size_t err_size)
{
	FILE *f = fopen(path, "rb");
	struct stat sb;

	if (!f) {
		snprintf(err, err_size, "%s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fileno(f), &sb) || !S_ISREG(sb.st_mode)) {
		snprintf(err, err_size, "%s: not a regular file", path);
		fclose(f);
		return NULL;
	}
	*size = (uint64_t)sb.st_size;
	return f;
}

/* Elements and bytes of @shape of @type; false on overflow. */
static int shape_bytes(const vnpu_shape *shape, vnpu_element_type type, uint64_t *bytes)
{
	uint64_t n = 1;
	uint32_t i;

	for (i = 0; i < shape->rank; i++) {
		if (shape->dims[i] < 0 || __builtin_mul_overflow(n, (uint64_t)shape->dims[i], &n))
			return 0;
	}
	return !__builtin_mul_overflow(n, vnpu_element_type_size(type), bytes);
}

/*
 * A new tensor of @type and @shape holding the @bytes at the file position
 * of @f, which must be exactly what is left of the file (@left bytes).
 */
static vnpu_status read_data(FILE *f, const char *path, vnpu_element_type type,
			     const vnpu_shape *shape, uint64_t left, vnpu_tensor **out,
			     char *err, size_t err_size)
{
	vnpu_tensor *t;
	uint64_t bytes;
	vnpu_status st;
	void *data;

	if (!shape_bytes(shape, type, &bytes)) {
		snprintf(err, err_size, "%s: the shape's size overflows", path);
		return VNPU_PARSE_ERROR;
	}
	if (bytes != left) {
		snprintf(err, err_size, "%s: the shape needs %llu bytes of data, the file holds %llu",
			 path, (unsigned long long)bytes, (unsigned long long)left);
		return VNPU_PARSE_ERROR;
	}
	st = vnpu_tensor_create(type, shape, &t);
	if (st != VNPU_OK) {
		snprintf(err, err_size, "%s: %s", path, vnpu_last_error());
		return st;
	}
	vnpu_tensor_get_data(t, &data);
	if (bytes && fread(data, 1, bytes, f) != bytes) {
		snprintf(err, err_size, "%s: short read", path);
		vnpu_tensor_free(t);
		return VNPU_PARSE_ERROR;
	}
	*out = t;
	return VNPU_OK;
}

/* ---- the .npy header: a Python dict literal, parsed strictly ---- */

static const char *skip_space(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* A quoted string ('x' or "x", no escapes) into @buf; NULL when not one. */
static const char *parse_str(const char *p, char *buf, size_t size)
{
	char quote = *p;
	const char *end;

	if (quote != '\'' && quote != '"')
		return NULL;
	end = strchr(p + 1, quote);
	if (!end || (size_t)(end - p - 1) >= size || memchr(p + 1, '\\', (size_t)(end - p - 1)))
		return NULL;
	memcpy(buf, p + 1, (size_t)(end - p - 1));
	buf[end - p - 1] = '\0';
	return end + 1;
}

/* "(3, 4, 5)", "(5,)" or "()" into @shape; NULL when not such a tuple. */
static const char *parse_shape(const char *p, vnpu_shape *shape)
{
	unsigned long long d;
	int comma = 0;
	char *end;

	if (*p != '(')
		return NULL;
	shape->rank = 0;
	p = skip_space(p + 1);
	while (*p != ')') {
		if (!isdigit((unsigned char)*p) || shape->rank == VNPU_MAX_RANK)
			return NULL;
		errno = 0;
		d = strtoull(p, &end, 10);
		if (errno || d > INT64_MAX)
			return NULL;
		shape->dims[shape->rank++] = (int64_t)d;
		p = skip_space(end);
		comma = *p == ',';
		if (comma)
			p = skip_space(p + 1);
		else if (*p != ')')
			return NULL;
	}
	/* A tuple of one needs its comma: "(5)" is a number, not a shape. */
	if (shape->rank == 1 && !comma)
		return NULL;
	return p + 1;
}

/* The dict {'descr': ..., 'fortran_order': ..., 'shape': (...)}, each once. */
static int parse_header(const char *h, const char *path, vnpu_element_type *type,
			vnpu_shape *shape, char *err, size_t err_size)
{
	char key[32], descr[32];
	int seen = 0, fortran = 0;
	const char *p = skip_space(h);
	size_t i;

	if (*p++ != '{')
		goto bad;
	for (p = skip_space(p); *p != '}'; p = skip_space(p)) {
		p = parse_str(p, key, sizeof(key));
		if (!p)
			goto bad;
		p = skip_space(p);
		if (*p++ != ':')
			goto bad;
		p = skip_space(p);
		if (!strcmp(key, "descr") && !(seen & 1)) {
			p = parse_str(p, descr, sizeof(descr));
			seen |= 1;
		} else if (!strcmp(key, "fortran_order") && !(seen & 2)) {
			fortran = !strncmp(p, "True", 4);
			p = fortran || !strncmp(p, "False", 5) ? p + (fortran ? 4 : 5) : NULL;
			seen |= 2;
		} else if (!strcmp(key, "shape") && !(seen & 4)) {
			p = parse_shape(p, shape);
			seen |= 4;
		} else {
			snprintf(err, err_size, "%s: unexpected key '%s' in the .npy header", path, key);
			return -1;
		}
		if (!p)
			goto bad;
		p = skip_space(p);
		if (*p == ',')
			p++;
		else if (*p != '}')
			goto bad;
	}
	p = skip_space(p + 1);
	while (*p == '\n' || *p == ' ')
		p++;
	if (*p || seen != 7)
		goto bad;
	for (i = 0; i < NUM_NPY_TYPES; i++) {
		if (!strcmp(descr, npy_types[i].descr) ||
		    (descr[0] == '=' && !strcmp(descr + 1, npy_types[i].descr + 1)))
			break;
	}
	if (i == NUM_NPY_TYPES) {
		snprintf(err, err_size, "%s: dtype '%s' is not one of f2 f4 f8 i1 u1 i2 u2 i4 u4 i8 u8 b1 in little-endian order",
			 path, descr);
		return -1;
	}
	if (fortran && shape->rank > 1) {
		snprintf(err, err_size, "%s: a Fortran-order array (save it with numpy.ascontiguousarray)",
			 path);
		return -1;
	}
	*type = npy_types[i].type;
	return 0;
bad:
	snprintf(err, err_size, "%s: a malformed .npy header", path);
	return -1;
}

vnpu_status tensor_npy_read(const char *path, vnpu_tensor **out, char *err, size_t err_size)
{
	unsigned char pre[12];
	uint64_t size, hlen, start;
	vnpu_element_type type;
	vnpu_status st = VNPU_PARSE_ERROR;
	vnpu_shape shape;
	char *header = NULL;
	FILE *f;

	f = open_regular(path, &size, err, err_size);
	if (!f)
		return VNPU_NOT_FOUND;
	if (size < 10 || fread(pre, 1, 10, f) != 10 || memcmp(pre, NPY_MAGIC, 6)) {
		snprintf(err, err_size, "%s: not a .npy file (no \\x93NUMPY magic)", path);
		goto out;
	}
	if (pre[6] == 1 && pre[7] == 0) {
		hlen = pre[8] | (uint64_t)pre[9] << 8;
		start = 10;
	} else if ((pre[6] == 2 || pre[6] == 3) && pre[7] == 0) {
		if (size < 12 || fread(pre + 10, 1, 2, f) != 2) {
			snprintf(err, err_size, "%s: a truncated .npy header", path);
			goto out;
		}
		hlen = pre[8] | (uint64_t)pre[9] << 8 | (uint64_t)pre[10] << 16 |
		       (uint64_t)pre[11] << 24;
		start = 12;
	} else {
		snprintf(err, err_size, "%s: .npy version %u.%u (1.0, 2.0 and 3.0 are read)", path,
			 pre[6], pre[7]);
		goto out;
	}
	if (hlen > NPY_MAX_HEADER || hlen > size - start) {
		snprintf(err, err_size, "%s: a .npy header of %llu bytes (the file holds %llu, at most %d are read)",
			 path, (unsigned long long)hlen, (unsigned long long)(size - start),
			 NPY_MAX_HEADER);
		goto out;
	}
	header = malloc(hlen + 1);
	if (!header) {
		snprintf(err, err_size, "out of memory");
		st = VNPU_OUT_OF_MEMORY;
		goto out;
	}
	if (fread(header, 1, hlen, f) != hlen) {
		snprintf(err, err_size, "%s: short read", path);
		goto out;
	}
	header[hlen] = '\0';
	if (strlen(header) != hlen || !hlen || header[hlen - 1] != '\n') {
		snprintf(err, err_size, "%s: a malformed .npy header", path);
		goto out;
	}
	if (parse_header(header, path, &type, &shape, err, err_size))
		goto out;
	st = read_data(f, path, type, &shape, size - start - hlen, out, err, err_size);
out:
	free(header);
	fclose(f);
	return st;
}

/* The element type called @name ("f32", "u8", ... as vnpu_element_type_str). */
static vnpu_element_type type_by_name(const char *name, size_t len)
{
	static const vnpu_element_type all[] = {
		VNPU_TYPE_F32, VNPU_TYPE_U8, VNPU_TYPE_I8, VNPU_TYPE_U16, VNPU_TYPE_I16,
		VNPU_TYPE_I32, VNPU_TYPE_I64, VNPU_TYPE_BOOL, VNPU_TYPE_F16, VNPU_TYPE_F64,
		VNPU_TYPE_U32, VNPU_TYPE_U64, VNPU_TYPE_BF16,
	};
	size_t i;

	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		if (strlen(vnpu_element_type_str(all[i])) == len &&
		    !strncmp(vnpu_element_type_str(all[i]), name, len))
			return all[i];
	}
	return VNPU_TYPE_UNDEFINED;
}

int tensor_spec_is_raw(const char *spec)
{
	return strstr(spec, ".raw:") != NULL;
}

vnpu_status tensor_raw_read(const char *spec, vnpu_tensor **out, char *err, size_t err_size)
{
	const char *colon = strstr(spec, ".raw:") + 4, *type_end, *p;
	char path[4096];
	vnpu_element_type type;
	vnpu_shape shape = { 0 };
	unsigned long long d;
	uint64_t size;
	vnpu_status st;
	char *end;
	FILE *f;

	type_end = strchr(colon + 1, ':');
	type = type_end ? type_by_name(colon + 1, (size_t)(type_end - colon - 1)) :
	       VNPU_TYPE_UNDEFINED;
	if (!type_end || type == VNPU_TYPE_UNDEFINED) {
		snprintf(err, err_size, "%s: a raw file is FILE.raw:TYPE:D,D,... with TYPE f32, f16, bf16, f64, i8, u8, i16, u16, i32, u32, i64, u64 or bool",
			 spec);
		return VNPU_INVALID_ARGUMENT;
	}
	for (p = type_end + 1; *p; p = end + (*end == ',')) {
		errno = 0;
		d = isdigit((unsigned char)*p) ? strtoull(p, &end, 10) : 0;
		if (!isdigit((unsigned char)*p) || errno || d > INT64_MAX ||
		    (*end && *end != ',') || (*end == ',' && !end[1]) ||
		    shape.rank == VNPU_MAX_RANK) {
			snprintf(err, err_size, "%s: the shape is D,D,... of at most %d dimensions",
				 spec, VNPU_MAX_RANK);
			return VNPU_INVALID_ARGUMENT;
		}
		shape.dims[shape.rank++] = (int64_t)d;
	}
	if ((size_t)(colon - spec) >= sizeof(path)) {
		snprintf(err, err_size, "%s: the path is too long", spec);
		return VNPU_INVALID_ARGUMENT;
	}
	memcpy(path, spec, (size_t)(colon - spec));
	path[colon - spec] = '\0';
	f = open_regular(path, &size, err, err_size);
	if (!f)
		return VNPU_NOT_FOUND;
	st = read_data(f, path, type, &shape, size, out, err, err_size);
	fclose(f);
	return st;
}

vnpu_status tensor_npy_write(const char *path, const vnpu_tensor *tensor, char *err,
			     size_t err_size)
{
	char header[512], dims[VNPU_MAX_RANK * 22 + 4];
	vnpu_element_type type;
	size_t len, pad, i, n = 0;
	vnpu_status st = VNPU_OK;
	vnpu_shape shape;
	uint64_t bytes;
	void *data;
	FILE *f;

	vnpu_tensor_get_element_type(tensor, &type);
	vnpu_tensor_get_shape(tensor, &shape);
	vnpu_tensor_get_byte_size(tensor, &bytes);
	vnpu_tensor_get_data(tensor, &data);
	for (i = 0; i < NUM_NPY_TYPES && npy_types[i].type != type; i++)
		;
	if (i == NUM_NPY_TYPES) {
		snprintf(err, err_size, "%s has no .npy type (write it as .pb)",
			 vnpu_element_type_str(type));
		return VNPU_UNSUPPORTED;
	}
	for (uint32_t d = 0; d < shape.rank; d++)
		n += (size_t)snprintf(dims + n, sizeof(dims) - n, "%lld, ",
				      (long long)shape.dims[d]);
	/* numpy's own forms: "(5,)" for one dimension, "(3, 4)" for more. */
	if (shape.rank > 1)
		n -= 2;
	else if (shape.rank == 1)
		n -= 1;
	dims[n] = '\0';
	len = (size_t)snprintf(header, sizeof(header),
			       "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }",
			       npy_types[i].descr, dims);
	/* Pad with spaces so the data starts 64-byte aligned, then '\n'. */
	pad = 63 - (10 + len) % 64;
	memset(header + len, ' ', pad);
	header[len + pad] = '\n';
	len += pad + 1;
	f = fopen(path, "wb");
	if (!f || fwrite(NPY_MAGIC "\x01\x00", 1, 8, f) != 8 ||
	    fputc((int)(len & 0xff), f) == EOF || fputc((int)(len >> 8), f) == EOF ||
	    fwrite(header, 1, len, f) != len || fwrite(data, 1, bytes, f) != bytes) {
		snprintf(err, err_size, "%s: %s", path, strerror(errno));
		st = VNPU_GENERAL_ERROR;
	}
	if (f && fclose(f) && st == VNPU_OK) {
		snprintf(err, err_size, "%s: %s", path, strerror(errno));
		st = VNPU_GENERAL_ERROR;
	}
	return st;
}

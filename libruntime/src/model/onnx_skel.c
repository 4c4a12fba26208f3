// SPDX-License-Identifier: MIT
/*
 * A model's skeleton: its protobuf bytes without the payloads of its large
 * raw_data fields, which the reader then reads straight into their
 * tensors (from the file with pread(), or from the caller's memory). A
 * model's weights are otherwise in memory three times over while it is
 * read: the file's bytes, protobuf-c's copy of each field, the tensor.
 *
 * The walk reads the bytes in order once, through a window of the file,
 * with an explicit stack of at most VNPU_ONNX_MAX_DEPTH frames and the
 * generated descriptors (which fields are messages) as the wire check
 * does (onnx_wire.c), which then checks the skeleton as any model. A
 * TensorProto's raw_data field (9) of SKEL_MIN_PAYLOAD bytes or more
 * becomes a varint field of number VNPU_ONNX_PAYLOAD_FIELD holding the
 * payload's index (such fields the file has are dropped), and the length
 * of every message around it shrinks, written in the width it had (a
 * varint may be padded with 0x80 bytes).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "error.h"
#include "ir.h"
#include "onnx.pb-c.h"

/* Payloads from this many bytes on are left out. */
#define SKEL_MIN_PAYLOAD 1024
/*
 * Bytes of the file read at a time for the walk: below glibc's first
 * mmap() threshold, whose rise (a freed mapped block raises it) would
 * leave later blocks in a heap that keeps more pages.
 */
#define SKEL_WINDOW (64u << 10)
/* The widest length prefix protobuf-c takes. */
#define SKEL_MAX_PREFIX 5
#define TENSOR_RAW_DATA 9

struct skel_frame {
	const ProtobufCMessageDescriptor *desc;
	uint64_t end;		/* where its bytes end in the source */
	size_t prefix_at;	/* where its length prefix is in the skeleton */
	unsigned width;		/* of that prefix */
};

struct skel {
	const struct vnpu_onnx_src *src;
	const uint8_t *win;	/* the source's bytes [win_at, win_at + win_len) */
	uint8_t *buf;		/* the window's memory, for a file */
	uint64_t win_at, win_len;
	uint64_t pos;
	uint64_t messages;
	uint8_t *out;
	size_t len, cap;
	struct vnpu_onnx_payload *pay;
	uint32_t num_pay, cap_pay;
	int top;
	struct skel_frame stack[VNPU_ONNX_MAX_DEPTH + 1];
};

static vnpu_status corrupt(const struct skel *k, const char *what)
{
	return vnpu_error(VNPU_PARSE_ERROR,
			  "not an ONNX model: protobuf decoding failed at byte %llu: %s (truncated or corrupt)",
			  (unsigned long long)k->pos, what);
}

vnpu_status vnpu_onnx_read_at(const struct vnpu_onnx_src *src, uint64_t at, void *dst,
			      uint64_t len)
{
	uint64_t got = 0;

	if (at > src->size || len > src->size - at)
		return vnpu_error(VNPU_PARSE_ERROR, "not an ONNX model: %llu bytes at %llu are past its end",
				  (unsigned long long)len, (unsigned long long)at);
	if (src->fd < 0) {
		memcpy(dst, src->mem + at, len);
		return VNPU_OK;
	}
	while (got < len) {
		ssize_t n = pread(src->fd, (char *)dst + got, len - got > (1u << 30) ?
				  (1u << 30) : len - got, (off_t)(at + got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return vnpu_error(VNPU_PARSE_ERROR,
					  "the model file changed or failed while read: %llu of %llu bytes at %llu",
					  (unsigned long long)got, (unsigned long long)len,
					  (unsigned long long)at);
		got += (uint64_t)n;
	}
	return VNPU_OK;
}

/* The source's bytes from @k->pos on in the window, at least one. */
static vnpu_status fill(struct skel *k)
{
	uint64_t n;
	vnpu_status st;

	if (k->pos >= k->win_at && k->pos < k->win_at + k->win_len)
		return VNPU_OK;
	if (k->pos >= k->src->size)
		return corrupt(k, "the bytes end");
	n = k->src->size - k->pos < SKEL_WINDOW ? k->src->size - k->pos : SKEL_WINDOW;
	st = vnpu_onnx_read_at(k->src, k->pos, k->buf, n);
	if (st)
		return st;
	k->win_at = k->pos;
	k->win_len = n;
	return VNPU_OK;
}

/*
 * Room for @n more bytes. The skeleton is never longer than the source (a
 * payload of 1 KiB or more becomes 8 bytes at most), whose size is
 * mapped for it at the start: pages are spent only as written.
 */
static vnpu_status reserve(struct skel *k, size_t n)
{
	if (n > k->cap - k->len)
		return corrupt(k, "a skeleton longer than the model");
	return VNPU_OK;
}

/* The next @n source bytes into the skeleton (@keep) or past. */
static vnpu_status copy(struct skel *k, uint64_t n, bool keep)
{
	vnpu_status st;

	if (!keep) {
		k->pos += n;
		return VNPU_OK;
	}
	st = reserve(k, (size_t)n);
	while (!st && n) {
		uint64_t m;

		st = fill(k);
		if (st)
			break;
		m = k->win_at + k->win_len - k->pos;
		m = m < n ? m : n;
		memcpy(k->out + k->len, k->win + (k->pos - k->win_at), (size_t)m);
		k->len += (size_t)m;
		k->pos += m;
		n -= m;
	}
	return st;
}

/* A varint ending before @end into @v, of @width bytes. */
static vnpu_status varint(struct skel *k, uint64_t end, uint64_t *v, unsigned *width)
{
	vnpu_status st;

	*v = 0;
	for (unsigned i = 0; i < 10 && k->pos < end; i++) {
		uint8_t b;

		st = fill(k);
		if (st)
			return st;
		b = k->win[k->pos++ - k->win_at];
		*v |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80)) {
			*width = i + 1;
			return VNPU_OK;
		}
	}
	return corrupt(k, "a bad varint");
}

/* @v as a varint of exactly @width bytes at @p (@v fits). */
static void put_padded(uint8_t *p, uint64_t v, unsigned width)
{
	for (unsigned i = 0; i < width; i++, v >>= 7)
		p[i] = (uint8_t)(v & 0x7f) | (i + 1 < width ? 0x80 : 0);
}

static vnpu_status put_varint(struct skel *k, uint64_t v)
{
	vnpu_status st = reserve(k, 10);

	if (st)
		return st;
	do {
		k->out[k->len++] = (uint8_t)(v & 0x7f) | (v > 0x7f ? 0x80 : 0);
		v >>= 7;
	} while (v);
	return VNPU_OK;
}

/* The raw_data payload of @len bytes here: left out, its index instead. */
static vnpu_status leave_out(struct skel *k, uint64_t len)
{
	vnpu_status st;

	if (k->num_pay == k->cap_pay) {
		uint32_t cap = k->cap_pay ? k->cap_pay * 2 : 64;
		struct vnpu_onnx_payload *p = realloc(k->pay, cap * sizeof(*p));

		if (!p)
			return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory reading the model");
		k->pay = p;
		k->cap_pay = cap;
	}
	k->pay[k->num_pay] = (struct vnpu_onnx_payload){ .offset = k->pos, .len = len };
	st = put_varint(k, (uint64_t)VNPU_ONNX_PAYLOAD_FIELD << 3 | PROTOBUF_C_WIRE_TYPE_VARINT);
	if (!st)
		st = put_varint(k, k->num_pay++);
	k->pos += len;
	return st;
}

/* One field of the message on top of the stack. */
static vnpu_status field(struct skel *k)
{
	struct skel_frame *fr = &k->stack[k->top];
	const ProtobufCFieldDescriptor *f;
	uint64_t start = k->pos, tag, v;
	unsigned width, tag_width;
	size_t at = k->len;
	bool keep;
	vnpu_status st;

	st = varint(k, fr->end, &tag, &tag_width);
	if (st)
		return st;
	if (!(tag >> 3) || tag >> 32)
		return corrupt(k, "a bad field tag");
	f = protobuf_c_message_descriptor_get_field(fr->desc, (unsigned)(tag >> 3));
	keep = fr->desc != &onnx__tensor_proto__descriptor ||
	       tag >> 3 != VNPU_ONNX_PAYLOAD_FIELD;
	/* The tag as it is, the field's bytes after it below. */
	k->pos = start;
	st = copy(k, tag_width, keep);
	if (st)
		return st;
	switch (tag & 7) {
	case PROTOBUF_C_WIRE_TYPE_VARINT:
		st = varint(k, fr->end, &v, &width);
		if (!st) {
			k->pos -= width;
			st = copy(k, width, keep);
		}
		return st;
	case PROTOBUF_C_WIRE_TYPE_64BIT:
	case PROTOBUF_C_WIRE_TYPE_32BIT:
		v = (tag & 7) == PROTOBUF_C_WIRE_TYPE_64BIT ? 8 : 4;
		if (fr->end - k->pos < v)
			return corrupt(k, "a truncated fixed-size field");
		return copy(k, v, keep);
	case PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED:
		st = varint(k, fr->end, &v, &width);
		if (st)
			return st;
		if (v > fr->end - k->pos || width > SKEL_MAX_PREFIX)
			return corrupt(k, "a bad length");
		if (!keep)
			return copy(k, v, false);
		if (f && f->type == PROTOBUF_C_TYPE_MESSAGE) {
			if (k->top == VNPU_ONNX_MAX_DEPTH)
				return vnpu_error(VNPU_UNSUPPORTED,
						  "messages nested deeper than %d (%s in %s at byte %llu)",
						  VNPU_ONNX_MAX_DEPTH,
						  ((const ProtobufCMessageDescriptor *)f->descriptor)->short_name,
						  fr->desc->short_name, (unsigned long long)k->pos);
			if (++k->messages > VNPU_ONNX_MAX_MESSAGES)
				return vnpu_error(VNPU_UNSUPPORTED, "more than %d protobuf messages",
						  VNPU_ONNX_MAX_MESSAGES);
			st = reserve(k, width);
			if (st)
				return st;
			k->stack[++k->top] = (struct skel_frame){
				.desc = f->descriptor, .end = k->pos + v,
				.prefix_at = k->len, .width = width };
			k->len += width;	/* written when the message ends */
			return VNPU_OK;
		}
		if (fr->desc == &onnx__tensor_proto__descriptor && f &&
		    f->id == TENSOR_RAW_DATA && v >= SKEL_MIN_PAYLOAD) {
			k->len = at;	/* not the tag either */
			return leave_out(k, v);
		}
		k->pos -= width;
		return copy(k, width + v, true);
	default:
		return corrupt(k, "a group or an unknown wire type");
	}
}

vnpu_status vnpu_onnx_skeleton(const struct vnpu_onnx_src *src, struct vnpu_onnx_skel *out)
{
	struct skel *k;
	vnpu_status st = VNPU_OK;

	memset(out, 0, sizeof(*out));
	if (src->size > VNPU_ONNX_MAX_BYTES)
		return vnpu_error(VNPU_UNSUPPORTED, "a model of %llu bytes, above the limit of %llu",
				  (unsigned long long)src->size,
				  (unsigned long long)VNPU_ONNX_MAX_BYTES);
	k = calloc(1, sizeof(*k));
	if (!k)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory reading the model");
	k->src = src;
	if (src->fd >= 0) {
		k->buf = malloc(SKEL_WINDOW);
		k->win = k->buf;
		if (!k->buf)
			st = vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory reading the model");
	} else {
		k->win = src->mem;
		k->win_len = src->size;
	}
	k->cap = (size_t)src->size + 1;
	k->out = mmap(NULL, k->cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (k->out == MAP_FAILED) {
		k->out = NULL;
		st = vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory reading the model");
	}
	k->messages = 1;
	k->stack[0] = (struct skel_frame){ .desc = &onnx__model_proto__descriptor,
					   .end = src->size };
	while (!st) {
		struct skel_frame *fr = &k->stack[k->top];

		if (k->pos < fr->end) {
			st = field(k);
			continue;
		}
		if (!k->top)
			break;
		/* The message ends: its length is what the skeleton kept. */
		put_padded(k->out + fr->prefix_at, k->len - fr->prefix_at - fr->width, fr->width);
		k->top--;
	}
	free(k->buf);
	if (st) {
		if (k->out)
			munmap(k->out, k->cap);
		free(k->pay);
	} else {
		out->data = k->out;
		out->size = k->len;
		out->map_size = k->cap;
		out->payloads = k->pay;
		out->num_payloads = k->num_pay;
	}
	free(k);
	return st;
}

void vnpu_onnx_skel_free_data(struct vnpu_onnx_skel *s)
{
	if (s->data)
		munmap(s->data, s->map_size);
	s->data = NULL;
}

void vnpu_onnx_skel_free(struct vnpu_onnx_skel *s)
{
	vnpu_onnx_skel_free_data(s);
	free(s->payloads);
	memset(s, 0, sizeof(*s));
}

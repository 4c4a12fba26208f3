// SPDX-License-Identifier: MIT
/*
 * The protobuf wire bytes of a model, walked before protobuf-c unpacks
 * them. protobuf-c recurses once per nested message and allocates every
 * message, repeated entry and string it meets; a crafted file of a few
 * kilobytes nests TypeProtos thousands deep (its stack overflows) or
 * packs millions of one-byte varints that each become eight bytes.
 *
 * The walk uses an explicit stack of at most VNPU_ONNX_MAX_DEPTH frames and
 * the generated descriptors (which fields are messages, which repeated) to
 * bound nesting, the number of messages and the memory the unpack will
 * allocate, before it runs. It reads each byte once.
 */
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "ir.h"
#include "onnx.pb-c.h"

/* One message being walked: its descriptor and where its bytes end. */
struct wire_frame {
	const ProtobufCMessageDescriptor *desc;
	size_t end;
};

struct wire {
	const uint8_t *p;
	size_t pos;
	uint64_t messages;
	uint64_t bytes;		/* what the unpack will allocate, roughly */
	int top;
	struct wire_frame stack[VNPU_ONNX_MAX_DEPTH + 1];
};

static vnpu_status corrupt(const struct wire *w, const char *what)
{
	return vnpu_error(VNPU_PARSE_ERROR,
			  "not an ONNX model: protobuf decoding failed at byte %zu: %s (truncated or corrupt)", w->pos, what);
}

/* A varint ending before @end into @v. */
static bool read_varint(struct wire *w, size_t end, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; shift < 64 && w->pos < end; shift += 7) {
		uint8_t b = w->p[w->pos++];

		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

/* Bytes one entry of a repeated field of @type takes in its C array. */
static unsigned entry_size(ProtobufCType type)
{
	switch (type) {
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
	case PROTOBUF_C_TYPE_DOUBLE:
	case PROTOBUF_C_TYPE_STRING:
	case PROTOBUF_C_TYPE_MESSAGE:
		return 8;
	case PROTOBUF_C_TYPE_BYTES:
		return sizeof(ProtobufCBinaryData);
	default:
		return 4;
	}
}

/* Entries in a packed run of @len bytes at @w's position of @type. */
static uint64_t packed_entries(const struct wire *w, ProtobufCType type, size_t len)
{
	uint64_t n = 0;

	switch (type) {
	case PROTOBUF_C_TYPE_FIXED64:
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_DOUBLE:
		return len / 8;
	case PROTOBUF_C_TYPE_FIXED32:
	case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_FLOAT:
		return len / 4;
	default:
		for (size_t i = 0; i < len; i++)
			n += !(w->p[w->pos + i] & 0x80);
		return n;
	}
}

/* What the unpack allocates for one field of wire type 2 of @len bytes. */
static uint64_t delimited_bytes(const struct wire *w, const ProtobufCFieldDescriptor *f,
				size_t len)
{
	if (!f)	/* kept as an unknown field */
		return len + sizeof(ProtobufCMessageUnknownField);
	if (f->label != PROTOBUF_C_LABEL_REPEATED)
		return len + 1;
	if (f->type == PROTOBUF_C_TYPE_STRING || f->type == PROTOBUF_C_TYPE_BYTES)
		return len + 1 + entry_size(f->type);
	return packed_entries(w, f->type, len) * entry_size(f->type);
}

/* Enter the submessage of @len bytes that field @f starts here. */
static vnpu_status push(struct wire *w, const ProtobufCFieldDescriptor *f, size_t len)
{
	const ProtobufCMessageDescriptor *d = f->descriptor;

	if (w->top == VNPU_ONNX_MAX_DEPTH)
		return vnpu_error(VNPU_UNSUPPORTED,
				  "messages nested deeper than %d (%s in %s at byte %zu)",
				  VNPU_ONNX_MAX_DEPTH, d->short_name, w->stack[w->top].desc->short_name,
				  w->pos);
	if (++w->messages > VNPU_ONNX_MAX_MESSAGES)
		return vnpu_error(VNPU_UNSUPPORTED, "more than %d protobuf messages",
				  VNPU_ONNX_MAX_MESSAGES);
	w->bytes += d->sizeof_message + entry_size(f->type);
	w->stack[++w->top] = (struct wire_frame){ .desc = d, .end = w->pos + len };
	return VNPU_OK;
}

/* One field of the message on top of the stack. */
static vnpu_status walk_field(struct wire *w)
{
	const struct wire_frame *fr = &w->stack[w->top];
	const ProtobufCFieldDescriptor *f;
	uint64_t tag, v;

	if (!read_varint(w, fr->end, &tag) || !(tag >> 3) || tag >> 32)
		return corrupt(w, "a bad field tag");
	f = protobuf_c_message_descriptor_get_field(fr->desc, (unsigned)(tag >> 3));
	switch (tag & 7) {
	case PROTOBUF_C_WIRE_TYPE_VARINT:
		if (!read_varint(w, fr->end, &v))
			return corrupt(w, "a bad varint");
		break;
	case PROTOBUF_C_WIRE_TYPE_64BIT:
	case PROTOBUF_C_WIRE_TYPE_32BIT:
		v = (tag & 7) == PROTOBUF_C_WIRE_TYPE_64BIT ? 8 : 4;
		if (fr->end - w->pos < v)
			return corrupt(w, "a truncated fixed-size field");
		w->pos += v;
		break;
	case PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED:
		if (!read_varint(w, fr->end, &v) || v > fr->end - w->pos)
			return corrupt(w, "a bad length");
		if (f && f->type == PROTOBUF_C_TYPE_MESSAGE)
			return push(w, f, (size_t)v);
		w->bytes += delimited_bytes(w, f, (size_t)v);
		w->pos += (size_t)v;
		return VNPU_OK;
	default:
		return corrupt(w, "a group or an unknown wire type");
	}
	if (!f)
		w->bytes += sizeof(ProtobufCMessageUnknownField) + 8;
	else if (f->label == PROTOBUF_C_LABEL_REPEATED)
		w->bytes += entry_size(f->type);
	return VNPU_OK;
}

vnpu_status vnpu_onnx_wire_check(const void *data, size_t size)
{
	struct wire w = { .p = data, .messages = 1,
			  .bytes = onnx__model_proto__descriptor.sizeof_message };
	vnpu_status st;

	if (size > VNPU_ONNX_MAX_BYTES)
		return vnpu_error(VNPU_UNSUPPORTED, "a model of %zu bytes, above the limit of %llu",
				  size, (unsigned long long)VNPU_ONNX_MAX_BYTES);
	w.stack[0] = (struct wire_frame){ .desc = &onnx__model_proto__descriptor, .end = size };
	for (;;) {
		if (w.pos == w.stack[w.top].end) {
			if (!w.top)
				return VNPU_OK;
			w.top--;
			continue;
		}
		st = walk_field(&w);
		if (st)
			return st;
		if (w.bytes > VNPU_ONNX_MAX_DECODED)
			return vnpu_error(VNPU_UNSUPPORTED,
					  "the model decodes to more than %llu bytes (at byte %zu)",
					  (unsigned long long)VNPU_ONNX_MAX_DECODED, w.pos);
	}
}

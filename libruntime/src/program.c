// SPDX-License-Identifier: MIT
/*
 * The compiled program: freeing, and a flat little-endian serialization
 * that the blob code wraps in its versioned header.
 *
 * Layout: sizes and counts, then the ports, segments (command streams
 * padded to 8) and layers, the groups (flag PROGRAM_F_GROUPS), the
 * own-bytes plan's arena size and stream (flag PROGRAM_F_OWN, padded to
 * 8), then the weights. Strings are a u32 length and
 * bytes without a terminator. Deserialization trusts nothing: every count
 * is checked against the bytes left before anything is allocated from it,
 * and every cross reference (slot, segment, command range) is checked.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <drm/vnpu_cmd.h>

#include "engine/vnpu_engine.h"
#include "error.h"
#include "program.h"

#define PROGRAM_MAGIC 0x4750554e /* "NUPG" */
/* Flags: a group count and the groups follow the layers. */
#define PROGRAM_F_GROUPS 1u
/*
 * The own-bytes plan (program.h's @own_cmd) follows the groups. A reader
 * refuses flags it does not know, and a blob imports only into the
 * library version that wrote it (blob.c): no format change.
 */
#define PROGRAM_F_OWN 2u
/* name length, kind, is_output, first, count */
#define GROUP_MIN_SIZE 20
#define MAX_NAME_LEN 4096
/* name length, type, rank, the dims, slot, size */
#define PORT_MIN_SIZE (4 + 4 + 4 + 8 * VNPU_MAX_RANK + 4 + 8)

static void free_ports(struct vnpu_prog_port *ports, uint32_t n)
{
	if (!ports)
		return;
	for (uint32_t i = 0; i < n; i++)
		free(ports[i].name);
	free(ports);
}

void *vnpu_program_weights_alloc(uint64_t size)
{
	return vnpu_eng_host_alloc(size);
}

void vnpu_program_weights_free(struct vnpu_program *p)
{
	vnpu_eng_host_free(p->weights, p->weights_size);
	p->weights = NULL;
}

void *vnpu_program_weights_reserve(uint64_t cap)
{
	return vnpu_eng_host_reserve(cap);
}

void vnpu_program_weights_keep(void *base, uint64_t cap, uint64_t size)
{
	vnpu_eng_host_trim(base, cap, size);
}

void vnpu_program_weights_release(void *base, uint64_t cap)
{
	vnpu_eng_host_free(base, cap);
}

void vnpu_program_free(struct vnpu_program *p)
{
	if (!p)
		return;
	for (uint32_t i = 0; p->groups && i < p->num_groups; i++)
		free(p->groups[i].name);
	free(p->groups);
	free(p->own_cmd);
	vnpu_program_weights_free(p);
	free_ports(p->inputs, p->num_inputs);
	free_ports(p->outputs, p->num_outputs);
	if (p->segments) {
		for (uint32_t i = 0; i < p->num_segments; i++)
			free(p->segments[i].cmd);
		free(p->segments);
	}
	if (p->layers) {
		for (uint32_t i = 0; i < p->num_layers; i++) {
			free(p->layers[i].name);
			free(p->layers[i].type);
		}
		free(p->layers);
	}
	free(p);
}

/* ---- writing ---- */

struct writer {
	uint8_t *buf;
	uint64_t len;
	uint64_t cap;
	bool failed;
};

static void put(struct writer *w, const void *data, uint64_t n)
{
	if (w->failed)
		return;
	if (w->len + n > w->cap) {
		uint64_t cap = w->cap ? w->cap : 4096;
		uint8_t *buf;

		while (cap < w->len + n)
			cap *= 2;
		buf = realloc(w->buf, cap);
		if (!buf) {
			w->failed = true;
			return;
		}
		w->buf = buf;
		w->cap = cap;
	}
	if (n)
		memcpy(w->buf + w->len, data, n);
	w->len += n;
}

static void put_u32(struct writer *w, uint32_t v)
{
	uint8_t b[4];

	for (int i = 0; i < 4; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	put(w, b, 4);
}

static void put_u64(struct writer *w, uint64_t v)
{
	uint8_t b[8];

	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	put(w, b, 8);
}

static void put_str(struct writer *w, const char *s)
{
	uint32_t n = s ? (uint32_t)strlen(s) : 0;

	put_u32(w, n);
	put(w, s, n);
}

static void put_pad8(struct writer *w)
{
	static const uint8_t zero[8];

	put(w, zero, (8 - (w->len & 7)) & 7);
}

static void put_port(struct writer *w, const struct vnpu_prog_port *port)
{
	put_str(w, port->name);
	put_u32(w, (uint32_t)port->type);
	put_u32(w, port->shape.rank);
	for (uint32_t d = 0; d < VNPU_MAX_RANK; d++)
		put_u64(w, (uint64_t)port->shape.dims[d]);
	put_u32(w, port->slot);
	put_u64(w, port->size);
}

vnpu_status vnpu_program_serialize(const struct vnpu_program *p,
				   void **out_data, uint64_t *out_size)
{
	struct writer w = { 0 };

	if (!p || !out_data || !out_size)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "program serialize: NULL argument");

	put_u32(&w, PROGRAM_MAGIC);
	put_u32(&w, (p->num_groups ? PROGRAM_F_GROUPS : 0) | (p->own_cmd ? PROGRAM_F_OWN : 0));
	put_u64(&w, p->weights_size);
	put_u64(&w, p->arena_size);
	put_u64(&w, p->intermediates_size);
	put_u32(&w, p->num_inputs);
	put_u32(&w, p->num_outputs);
	put_u32(&w, p->num_segments);
	put_u32(&w, p->num_layers);
	for (uint32_t i = 0; i < p->num_inputs; i++)
		put_port(&w, &p->inputs[i]);
	for (uint32_t i = 0; i < p->num_outputs; i++)
		put_port(&w, &p->outputs[i]);
	for (uint32_t i = 0; i < p->num_segments; i++) {
		const struct vnpu_prog_segment *s = &p->segments[i];

		put_u32(&w, (uint32_t)s->target);
		put_u32(&w, s->num_cmds);
		put_u32(&w, s->first_layer);
		put_u32(&w, s->num_layers);
		put_u64(&w, s->cmd_size);
		put(&w, s->cmd, s->cmd_size);
		put_pad8(&w);
	}
	for (uint32_t i = 0; i < p->num_layers; i++) {
		const struct vnpu_prog_layer *l = &p->layers[i];

		put_str(&w, l->name);
		put_str(&w, l->type);
		put_u32(&w, l->segment);
		put_u32(&w, l->first_cmd);
		put_u32(&w, l->num_cmds);
	}
	if (p->num_groups)
		put_u32(&w, p->num_groups);
	for (uint32_t i = 0; i < p->num_groups; i++) {
		const struct vnpu_prog_group *g = &p->groups[i];

		put_str(&w, g->name);
		put_u32(&w, (uint32_t)g->kind);
		put_u32(&w, g->is_output);
		put_u32(&w, g->first);
		put_u32(&w, g->count);
	}
	if (p->own_cmd) {
		put_u64(&w, p->own_arena_size);
		put_u64(&w, p->own_cmd_size);
		put_pad8(&w);
		put(&w, p->own_cmd, p->own_cmd_size);
	}
	put_pad8(&w);
	put(&w, p->weights, p->weights_size);
	if (w.failed) {
		free(w.buf);
		return vnpu_error(VNPU_OUT_OF_MEMORY, "program serialize: out of memory");
	}
	*out_data = w.buf;
	*out_size = w.len;
	return VNPU_OK;
}

/* ---- reading ---- */

struct reader {
	const uint8_t *buf;
	uint64_t len;
	uint64_t pos;
	const char *what;	/* the first failure, for the message */
};

static uint64_t left(const struct reader *r)
{
	return r->len - r->pos;
}

static bool take(struct reader *r, void *dst, uint64_t n, const char *what)
{
	if (r->what)
		return false;
	if (n > left(r)) {
		r->what = what;
		return false;
	}
	if (dst && n)
		memcpy(dst, r->buf + r->pos, n);
	r->pos += n;
	return true;
}

static uint32_t get_u32(struct reader *r, const char *what)
{
	uint8_t b[4] = { 0 };
	uint32_t v = 0;

	take(r, b, 4, what);
	for (int i = 0; i < 4; i++)
		v |= (uint32_t)b[i] << (8 * i);
	return v;
}

static uint64_t get_u64(struct reader *r, const char *what)
{
	uint8_t b[8] = { 0 };
	uint64_t v = 0;

	take(r, b, 8, what);
	for (int i = 0; i < 8; i++)
		v |= (uint64_t)b[i] << (8 * i);
	return v;
}

static void fail(struct reader *r, const char *what)
{
	if (!r->what)
		r->what = what;
}

static void skip_pad8(struct reader *r)
{
	uint8_t pad[8];
	uint64_t n = (8 - (r->pos & 7)) & 7;

	if (!take(r, pad, n, "padding"))
		return;
	for (uint64_t i = 0; i < n; i++)
		if (pad[i])
			fail(r, "non-zero padding");
}

/* A malloc'd, NUL-terminated copy of a length-prefixed string. */
static char *get_str(struct reader *r, const char *what, bool *oom)
{
	uint32_t n = get_u32(r, what);
	char *s;

	if (r->what)
		return NULL;
	if (n > MAX_NAME_LEN || n > left(r)) {
		fail(r, what);
		return NULL;
	}
	s = malloc((size_t)n + 1);
	if (!s) {
		*oom = true;
		fail(r, "out of memory");
		return NULL;
	}
	take(r, s, n, what);
	s[n] = '\0';
	if (strlen(s) != n) {
		fail(r, what);
		free(s);
		return NULL;
	}
	return s;
}

/* malloc @count elements of @elem_size, but only when the input could hold
 * at least @min_bytes per element: a corrupted count cannot make us
 * allocate more than a small multiple of the input. */
static void *alloc_counted(struct reader *r, uint32_t count, size_t elem_size,
			   uint64_t min_bytes, const char *what, bool *oom)
{
	void *p;

	if (r->what)
		return NULL;
	if ((uint64_t)count * min_bytes > left(r)) {
		fail(r, what);
		return NULL;
	}
	p = calloc(count ? count : 1, elem_size);
	if (!p) {
		*oom = true;
		fail(r, "out of memory");
	}
	return p;
}

static void get_port(struct reader *r, struct vnpu_prog_port *port, bool *oom)
{
	uint64_t elems = 1;
	size_t esize;
	bool overflow = false;

	port->name = get_str(r, "port name", oom);
	port->type = (vnpu_element_type)get_u32(r, "port type");
	port->shape.rank = get_u32(r, "port rank");
	for (uint32_t d = 0; d < VNPU_MAX_RANK; d++)
		port->shape.dims[d] = (int64_t)get_u64(r, "port dims");
	port->slot = get_u32(r, "port slot");
	port->size = get_u64(r, "port size");
	if (r->what)
		return;
	esize = vnpu_element_type_size(port->type);
	if (!esize || port->shape.rank > VNPU_MAX_RANK) {
		fail(r, "port type or rank");
		return;
	}
	for (uint32_t d = 0; d < VNPU_MAX_RANK; d++) {
		int64_t dim = port->shape.dims[d];

		if (d >= port->shape.rank) {
			if (dim)
				fail(r, "port dims beyond rank");
			continue;
		}
		if (dim < 0 || (dim && elems > UINT64_MAX / (uint64_t)dim))
			overflow = true;
		else
			elems *= (uint64_t)dim;
	}
	if (overflow || elems > UINT64_MAX / esize || elems * esize != port->size)
		fail(r, "port size does not match its shape");
}

/* Each command's size a non-zero multiple of 8, together exactly the
 * stream, @num_cmds of them; the device validates the rest at submit. */
static bool stream_framed(const struct vnpu_prog_segment *s)
{
	const uint8_t *cmd = s->cmd;
	uint64_t pos = 0;
	uint32_t n = 0;

	while (pos < s->cmd_size) {
		struct vnpu_cmd_header hdr;

		if (s->cmd_size - pos < sizeof(hdr))
			return false;
		memcpy(&hdr, cmd + pos, sizeof(hdr));
		if (hdr.size < sizeof(hdr) || hdr.size % 8 || hdr.size > s->cmd_size - pos)
			return false;
		pos += hdr.size;
		n++;
	}
	return n == s->num_cmds;
}

static void get_segment(struct reader *r, struct vnpu_prog_segment *s, bool *oom)
{
	s->target = (enum vnpu_prog_target)get_u32(r, "segment target");
	s->num_cmds = get_u32(r, "segment command count");
	s->first_layer = get_u32(r, "segment layers");
	s->num_layers = get_u32(r, "segment layers");
	s->cmd_size = get_u64(r, "segment size");
	if (r->what)
		return;
	if (s->target != VNPU_TARGET_PRIMARY && s->target != VNPU_TARGET_FALLBACK) {
		fail(r, "segment target");
		return;
	}
	if (s->cmd_size % 8 || s->cmd_size > left(r) ||
	    (uint64_t)s->num_cmds * sizeof(struct vnpu_cmd_header) > s->cmd_size) {
		fail(r, "segment command stream size");
		return;
	}
	s->cmd = malloc(s->cmd_size ? s->cmd_size : 1);
	if (!s->cmd) {
		*oom = true;
		fail(r, "out of memory");
		return;
	}
	take(r, s->cmd, s->cmd_size, "segment command stream");
	skip_pad8(r);
	if (!r->what && !stream_framed(s))
		fail(r, "segment command framing");
}

/*
 * The own-bytes plan's stream: the one segment's commands, each of the
 * same op and size (only offsets differ); the device validates the rest
 * when it loads it, against an arena of @own_arena_size.
 */
static void get_own(struct reader *r, struct vnpu_program *p, bool *oom)
{
	const struct vnpu_prog_segment *seg = &p->segments[0];
	uint64_t pos;

	p->own_arena_size = get_u64(r, "own plan arena size");
	p->own_cmd_size = get_u64(r, "own plan stream size");
	skip_pad8(r);
	if (r->what)
		return;
	if (p->num_segments != 1 || p->own_cmd_size != seg->cmd_size ||
	    p->own_cmd_size > left(r) || !p->own_arena_size ||
	    p->own_arena_size > (UINT64_C(1) << 40)) {
		fail(r, "own plan");
		return;
	}
	p->own_cmd = malloc(p->own_cmd_size ? p->own_cmd_size : 1);
	if (!p->own_cmd) {
		*oom = true;
		fail(r, "out of memory");
		return;
	}
	take(r, p->own_cmd, p->own_cmd_size, "own plan stream");
	/* The segment's framing was checked: each header in turn. */
	for (pos = 0; !r->what && pos < seg->cmd_size;) {
		struct vnpu_cmd_header a, b;

		memcpy(&a, (const uint8_t *)seg->cmd + pos, sizeof(a));
		memcpy(&b, (const uint8_t *)p->own_cmd + pos, sizeof(b));
		if (a.opcode != b.opcode || a.size != b.size)
			fail(r, "own plan commands differ from the segment's");
		pos += a.size;
	}
}

static void get_layer(struct reader *r, struct vnpu_prog_layer *l, bool *oom)
{
	l->name = get_str(r, "layer name", oom);
	l->type = get_str(r, "layer type", oom);
	l->segment = get_u32(r, "layer segment");
	l->first_cmd = get_u32(r, "layer commands");
	l->num_cmds = get_u32(r, "layer commands");
}

static void get_group(struct reader *r, const struct vnpu_program *p,
		      struct vnpu_prog_group *g, bool *oom)
{
	uint32_t ports;

	g->name = get_str(r, "group name", oom);
	g->kind = (vnpu_port_kind)get_u32(r, "group kind");
	g->is_output = get_u32(r, "group side");
	g->first = get_u32(r, "group ports");
	g->count = get_u32(r, "group ports");
	if (r->what)
		return;
	ports = g->is_output ? p->num_outputs : p->num_inputs;
	if ((g->kind != VNPU_PORT_SEQUENCE && g->kind != VNPU_PORT_NONE) || g->is_output > 1 ||
	    (g->kind == VNPU_PORT_NONE && g->count) || g->first > ports ||
	    g->count > ports - g->first)
		fail(r, "group");
}

/* Cross references: slots, segment layer ranges, layer command ranges. */
static void check_links(struct reader *r, const struct vnpu_program *p)
{
	uint32_t slot = VNPU_SLOT_FIRST_IO;

	for (uint32_t i = 0; i < p->num_inputs; i++)
		if (p->inputs[i].slot != slot++)
			fail(r, "input slot");
	for (uint32_t i = 0; i < p->num_outputs; i++)
		if (p->outputs[i].slot != slot++)
			fail(r, "output slot");
	for (uint32_t i = 0; i < p->num_segments; i++) {
		const struct vnpu_prog_segment *s = &p->segments[i];

		if (s->first_layer > p->num_layers ||
		    s->num_layers > p->num_layers - s->first_layer)
			fail(r, "segment layer range");
	}
	for (uint32_t i = 0; i < p->num_layers; i++) {
		const struct vnpu_prog_layer *l = &p->layers[i];
		const struct vnpu_prog_segment *s;

		if (l->segment >= p->num_segments) {
			fail(r, "layer segment");
			continue;
		}
		s = &p->segments[l->segment];
		if (l->first_cmd > s->num_cmds ||
		    l->num_cmds > s->num_cmds - l->first_cmd)
			fail(r, "layer command range");
	}
}

vnpu_status vnpu_program_deserialize(const void *data, uint64_t size,
				     struct vnpu_program **out)
{
	struct reader r = { .buf = data, .len = size };
	struct vnpu_program *p;
	bool oom = false;
	uint32_t flags;

	if (!data || !out)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "program deserialize: NULL argument");
	p = calloc(1, sizeof(*p));
	if (!p)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "program deserialize: out of memory");

	if (get_u32(&r, "magic") != PROGRAM_MAGIC)
		fail(&r, "magic");
	flags = get_u32(&r, "flags");
	if (flags & ~(PROGRAM_F_GROUPS | PROGRAM_F_OWN))
		fail(&r, "flags");
	p->weights_size = get_u64(&r, "weights size");
	p->arena_size = get_u64(&r, "arena size");
	p->intermediates_size = get_u64(&r, "intermediates size");
	p->num_inputs = get_u32(&r, "input count");
	p->num_outputs = get_u32(&r, "output count");
	p->num_segments = get_u32(&r, "segment count");
	p->num_layers = get_u32(&r, "layer count");
	if (p->num_inputs + (uint64_t)p->num_outputs + VNPU_SLOT_FIRST_IO > UINT32_MAX)
		fail(&r, "port count");

	/* A port is at least PORT_MIN_SIZE bytes, a segment 24, a layer 20. */
	p->inputs = alloc_counted(&r, p->num_inputs, sizeof(*p->inputs), PORT_MIN_SIZE, "input count", &oom);
	for (uint32_t i = 0; !r.what && i < p->num_inputs; i++)
		get_port(&r, &p->inputs[i], &oom);
	p->outputs = alloc_counted(&r, p->num_outputs, sizeof(*p->outputs), PORT_MIN_SIZE, "output count", &oom);
	for (uint32_t i = 0; !r.what && i < p->num_outputs; i++)
		get_port(&r, &p->outputs[i], &oom);
	p->segments = alloc_counted(&r, p->num_segments, sizeof(*p->segments), 24, "segment count", &oom);
	for (uint32_t i = 0; !r.what && i < p->num_segments; i++)
		get_segment(&r, &p->segments[i], &oom);
	p->layers = alloc_counted(&r, p->num_layers, sizeof(*p->layers), 20, "layer count", &oom);
	for (uint32_t i = 0; !r.what && i < p->num_layers; i++)
		get_layer(&r, &p->layers[i], &oom);
	if (flags & PROGRAM_F_GROUPS) {
		p->num_groups = get_u32(&r, "group count");
		p->groups = alloc_counted(&r, p->num_groups, sizeof(*p->groups), GROUP_MIN_SIZE,
					  "group count", &oom);
		for (uint32_t i = 0; !r.what && i < p->num_groups; i++)
			get_group(&r, p, &p->groups[i], &oom);
	}
	if ((flags & PROGRAM_F_OWN) && !r.what)
		get_own(&r, p, &oom);
	skip_pad8(&r);
	if (!r.what && p->weights_size != left(&r))
		fail(&r, "weights size");
	if (!r.what) {
		p->weights = vnpu_program_weights_alloc(p->weights_size);
		if (!p->weights) {
			oom = true;
			fail(&r, "out of memory");
		}
		take(&r, p->weights, p->weights_size, "weights");
	}
	if (!r.what)
		check_links(&r, p);
	if (r.what) {
		/* Counts of arrays never allocated must not be walked by free. */
		if (!p->inputs)
			p->num_inputs = 0;
		if (!p->outputs)
			p->num_outputs = 0;
		if (!p->segments)
			p->num_segments = 0;
		if (!p->layers)
			p->num_layers = 0;
		if (!p->groups)
			p->num_groups = 0;
		vnpu_program_free(p);
		if (oom)
			return vnpu_error(VNPU_OUT_OF_MEMORY, "program: out of memory");
		return vnpu_error(VNPU_PARSE_ERROR, "program: malformed at byte %llu (%s)",
				  (unsigned long long)r.pos, r.what);
	}
	*out = p;
	return VNPU_OK;
}

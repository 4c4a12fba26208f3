// SPDX-License-Identifier: MIT
/*
 * Exported compiled models of dynamic inputs: the ports as declared and
 * the program of each input shape compiled so far, each an ordinary blob
 * (blob.c). The model itself is not in it, so the import runs those
 * shapes and compiles no other (dynamic.h).
 *
 *   struct dyn_blob_header
 *   u64 props_size, props_size bytes   "KEY=VALUE\n" lines
 *   per port (inputs, then outputs):
 *     u32 type, u32 rank, i64 dims[VNPU_MAX_RANK], u32 name_size, name
 *   per program:
 *     per input: u32 rank, u32 pad, i64 dims[VNPU_MAX_RANK]
 *     u64 blob_size, blob_size bytes   an ordinary blob
 *
 * Everything after the magic is covered by one checksum; every count and
 * size is checked against the bytes left before anything is allocated.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dynamic.h"

#define DYN_BLOB_MAGIC "VNPUDYNB"
#define DYN_BLOB_FORMAT 1
#define DYN_MAX_PORTS 4096
#define DYN_MAX_NAME 4096
#define DYN_MAX_PROPS 4096

struct dyn_blob_header {
	char magic[8];
	uint32_t format;
	uint32_t header_size;
	char library_version[16];
	uint32_t num_inputs;
	uint32_t num_outputs;
	uint32_t num_programs;
	uint32_t pad;
	uint64_t checksum;		/* FNV-1a of everything, this field zero */
};

static uint64_t checksum(const void *blob, size_t size)
{
	return vnpu_sealed_checksum(blob, size, sizeof(struct dyn_blob_header),
				    offsetof(struct dyn_blob_header, checksum));
}

/* ---- writing ---- */

struct out {
	char *data;
	size_t len, cap;
	bool failed;
};

static void put(struct out *o, const void *p, size_t n)
{
	if (o->failed || !n)
		return;
	if (o->len + n > o->cap) {
		size_t cap = o->cap ? o->cap : 4096;
		char *d;

		while (cap < o->len + n)
			cap *= 2;
		d = realloc(o->data, cap);
		if (!d) {
			o->failed = true;
			return;
		}
		o->data = d;
		o->cap = cap;
	}
	memcpy(o->data + o->len, p, n);
	o->len += n;
}

static void put_u32(struct out *o, uint32_t v)
{
	put(o, &v, sizeof(v));
}

static void put_u64(struct out *o, uint64_t v)
{
	put(o, &v, sizeof(v));
}

static void put_dims(struct out *o, const vnpu_shape *s)
{
	int64_t dims[VNPU_MAX_RANK] = { 0 };

	memcpy(dims, s->dims, s->rank * sizeof(dims[0]));
	put(o, dims, sizeof(dims));
}

static void put_port(struct out *o, const vnpu_port *p)
{
	put_u32(o, (uint32_t)p->type);
	put_u32(o, p->shape.rank);
	put_dims(o, &p->shape);
	put_u32(o, (uint32_t)strlen(p->name));
	put(o, p->name, strlen(p->name));
}

/* Program @prog of input shapes @shapes, as an ordinary blob. */
static vnpu_status put_program(struct out *o, const struct vnpu_compiled_model *cm,
			       const vnpu_shape *shapes, const struct vnpu_compiled_model *prog)
{
	size_t size;
	void *blob;
	vnpu_status st = vnpu_blob_write(prog, &blob, &size);

	if (st != VNPU_OK)
		return st;
	for (uint32_t i = 0; i < cm->num_inputs; i++) {
		put_u32(o, shapes[i].rank);
		put_u32(o, 0);
		put_dims(o, &shapes[i]);
	}
	put_u64(o, size);
	put(o, blob, size);
	free(blob);
	return VNPU_OK;
}

vnpu_status vnpu_dyn_blob_write(const struct vnpu_compiled_model *cm, void **out,
				size_t *out_size)
{
	struct dyn_blob_header h = { .format = DYN_BLOB_FORMAT, .header_size = sizeof(h) };
	struct vnpu_compiled_model **progs = NULL;
	vnpu_shape *shapes = NULL;
	struct out o = { 0 };
	char *props = NULL;
	uint32_t n = 0;
	vnpu_status st;

	st = vnpu_dyn_programs((struct vnpu_compiled_model *)cm, &n, &shapes, &progs);
	if (st != VNPU_OK)
		return st;
	if (!n)
		st = vnpu_error(VNPU_NOT_READY, "a model of dynamic inputs exports the programs "
				"of the shapes it ran, and it has run none yet");
	if (st == VNPU_OK)
		st = vnpu_config_text(&cm->config, &props);
	memcpy(h.magic, DYN_BLOB_MAGIC, sizeof(h.magic));
	snprintf(h.library_version, sizeof(h.library_version), "%s", vnpu_get_version());
	h.num_inputs = cm->num_inputs;
	h.num_outputs = cm->num_outputs;
	h.num_programs = n;
	put(&o, &h, sizeof(h));
	if (st == VNPU_OK) {
		put_u64(&o, strlen(props));
		put(&o, props, strlen(props));
	}
	for (uint32_t i = 0; st == VNPU_OK && i < cm->num_inputs + cm->num_outputs; i++)
		put_port(&o, i < cm->num_inputs ? &cm->inputs[i] :
						  &cm->outputs[i - cm->num_inputs]);
	for (uint32_t i = 0; st == VNPU_OK && i < n; i++)
		st = put_program(&o, cm, &shapes[i * cm->num_inputs], progs[i]);
	if (st == VNPU_OK && o.failed)
		st = vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory for the blob");
	for (uint32_t i = 0; i < n; i++)
		vnpu_compiled_model_free(progs[i]);
	free(progs);
	free(shapes);
	free(props);
	if (st != VNPU_OK) {
		free(o.data);
		return vnpu_error_prefix(st, "exporting");
	}
	h.checksum = checksum(o.data, o.len);
	memcpy(o.data + offsetof(struct dyn_blob_header, checksum), &h.checksum,
	       sizeof(h.checksum));
	*out = o.data;
	*out_size = o.len;
	return VNPU_OK;
}

/* ---- reading ---- */

bool vnpu_dyn_blob_is(const void *data, size_t size)
{
	return size >= 8 && !memcmp(data, DYN_BLOB_MAGIC, 8);
}

struct in {
	const char *p;
	size_t left;
	const char *bad;	/* what did not fit, or NULL */
};

static bool take(struct in *r, void *dst, size_t n, const char *what)
{
	if (r->bad || n > r->left) {
		r->bad = r->bad ? r->bad : what;
		return false;
	}
	memcpy(dst, r->p, n);
	r->p += n;
	r->left -= n;
	return true;
}

static uint32_t take_u32(struct in *r, const char *what)
{
	uint32_t v = 0;

	take(r, &v, sizeof(v), what);
	return v;
}

static uint64_t take_u64(struct in *r, const char *what)
{
	uint64_t v = 0;

	take(r, &v, sizeof(v), what);
	return v;
}

/* A shape of @rank (at most VNPU_MAX_RANK, checked) into @s; dims >= -1. */
static bool take_shape(struct in *r, uint32_t rank, vnpu_shape *s, const char *what)
{
	int64_t dims[VNPU_MAX_RANK];

	if (!take(r, dims, sizeof(dims), what) || rank > VNPU_MAX_RANK) {
		r->bad = r->bad ? r->bad : what;
		return false;
	}
	s->rank = rank;
	for (uint32_t d = 0; d < rank; d++) {
		if (dims[d] < VNPU_DIM_DYNAMIC || dims[d] > (INT64_C(1) << 40)) {
			r->bad = what;
			return false;
		}
		s->dims[d] = dims[d];
	}
	return true;
}

static vnpu_status bad(const struct in *r)
{
	return vnpu_error(VNPU_PARSE_ERROR, "the blob of dynamic inputs is malformed (%s)",
			  r->bad);
}

/* Ports into @ports (names owned by @names, freed by the caller). */
static vnpu_status take_ports(struct in *r, uint32_t n, vnpu_port *ports, char **names)
{
	for (uint32_t i = 0; i < n; i++) {
		uint32_t type = take_u32(r, "port type"), rank = take_u32(r, "port rank");
		uint32_t len;

		if (!take_shape(r, rank, &ports[i].shape, "port shape"))
			return bad(r);
		len = take_u32(r, "port name");
		if (r->bad || !len || len > DYN_MAX_NAME || len > r->left ||
		    memchr(r->p, '\0', len) ||
		    !vnpu_element_type_size((vnpu_element_type)type)) {
			r->bad = r->bad ? r->bad : "port";
			return bad(r);
		}
		names[i] = strndup(r->p, len);
		if (!names[i])
			return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory");
		r->p += len;
		r->left -= len;
		ports[i].name = names[i];
		ports[i].type = (vnpu_element_type)type;
	}
	return VNPU_OK;
}

/* Whether program @prog has the ports @ports and was compiled for @shapes. */
static bool program_fits(const struct vnpu_compiled_model *prog, const vnpu_port *ports,
			 uint32_t n_in, uint32_t n_out, const vnpu_shape *shapes)
{
	if (prog->num_inputs != n_in || prog->num_outputs != n_out)
		return false;
	for (uint32_t i = 0; i < n_in + n_out; i++) {
		const vnpu_port *p = i < n_in ? &prog->inputs[i] : &prog->outputs[i - n_in];

		if (strcmp(p->name, ports[i].name) || p->type != ports[i].type ||
		    p->shape.rank != ports[i].shape.rank)
			return false;
		if (i < n_in && !vnpu_shape_equal(&p->shape, &shapes[i]))
			return false;
		for (uint32_t d = 0; d < p->shape.rank; d++)
			if (ports[i].shape.dims[d] >= 0 &&
			    ports[i].shape.dims[d] != p->shape.dims[d])
				return false;
	}
	return true;
}

/* Program @k: its input shapes into @shapes, its blob read on @device. */
static vnpu_status take_program(struct vnpu_core *core, struct in *r, const char *device,
				const vnpu_port *ports, uint32_t n_in, uint32_t n_out,
				vnpu_shape *shapes, struct vnpu_compiled_model **prog)
{
	uint64_t size;
	vnpu_status st;

	for (uint32_t i = 0; i < n_in; i++) {
		uint32_t rank = take_u32(r, "program shape");

		take_u32(r, "program shape");
		if (!take_shape(r, rank, &shapes[i], "program shape"))
			return bad(r);
	}
	size = take_u64(r, "program size");
	if (r->bad || size > r->left) {
		r->bad = r->bad ? r->bad : "program size";
		return bad(r);
	}
	st = vnpu_blob_read(core, r->p, size, device, prog);
	if (st != VNPU_OK)
		return vnpu_error_prefix(st, "a program of the blob");
	r->p += size;
	r->left -= size;
	if (!program_fits(*prog, ports, n_in, n_out, shapes)) {
		vnpu_compiled_model_free(*prog);
		*prog = NULL;
		return vnpu_error(VNPU_PARSE_ERROR, "a program of the blob does not fit its ports");
	}
	return VNPU_OK;
}

static vnpu_status check_header(const void *data, size_t size, struct dyn_blob_header *h)
{
	if (size < sizeof(*h))
		return vnpu_error(VNPU_PARSE_ERROR, "the blob is truncated (%zu bytes)", size);
	memcpy(h, data, sizeof(*h));
	if (h->format != DYN_BLOB_FORMAT || h->header_size != sizeof(*h))
		return vnpu_error(VNPU_WRONG_VERSION, "blob of dynamic inputs format %u, this "
				  "library reads %u", h->format, DYN_BLOB_FORMAT);
	if (!memchr(h->library_version, 0, sizeof(h->library_version)))
		return vnpu_error(VNPU_PARSE_ERROR, "the blob header is corrupted");
	if (strcmp(h->library_version, vnpu_get_version()))
		return vnpu_error(VNPU_WRONG_VERSION, "the blob is from libvnpu %s, this is %s",
				  h->library_version, vnpu_get_version());
	if (checksum(data, size) != h->checksum)
		return vnpu_error(VNPU_PARSE_ERROR, "the blob is corrupted (checksum mismatch)");
	if (h->num_inputs + (uint64_t)h->num_outputs > DYN_MAX_PORTS || !h->num_programs ||
	    h->num_programs > VNPU_SHAPE_CACHE_MAX)
		return vnpu_error(VNPU_PARSE_ERROR, "the blob has %u inputs, %u outputs and %u "
				  "programs", h->num_inputs, h->num_outputs, h->num_programs);
	return VNPU_OK;
}

struct import {
	vnpu_port *ports;
	char **names;
	vnpu_shape *shapes;
	struct vnpu_compiled_model **progs;
	uint32_t num_ports, num_progs;
};

static void import_fini(struct import *im)
{
	for (uint32_t i = 0; im->names && i < im->num_ports; i++)
		free(im->names[i]);
	for (uint32_t i = 0; im->progs && i < im->num_progs; i++)
		vnpu_compiled_model_free(im->progs[i]);
	free(im->ports);
	free(im->names);
	free(im->shapes);
	free(im->progs);
}

static vnpu_status take_config(struct in *r, struct vnpu_config *cfg)
{
	uint64_t n = take_u64(r, "properties");

	if (r->bad || n > DYN_MAX_PROPS || n > r->left) {
		r->bad = r->bad ? r->bad : "properties";
		return bad(r);
	}
	r->p += n;
	r->left -= n;
	return vnpu_blob_read_props(r->p - n, (size_t)n, cfg);
}

vnpu_status vnpu_dyn_blob_read(struct vnpu_core *core, const void *data, size_t size,
			       const char *device, struct vnpu_compiled_model **out)
{
	struct vnpu_config cfg = { .precision = VNPU_TYPE_F32 };
	struct in r = { (const char *)data, size, NULL };
	struct import im = { 0 };
	struct dyn_blob_header h;
	struct vnpu_compiled_model *first;
	vnpu_status st = check_header(data, size, &h);

	if (st != VNPU_OK)
		return st;
	r.p += sizeof(h);
	r.left -= sizeof(h);
	im.num_ports = h.num_inputs + h.num_outputs;
	im.ports = calloc(im.num_ports + 1, sizeof(*im.ports));
	im.names = calloc(im.num_ports + 1, sizeof(*im.names));
	im.shapes = calloc((size_t)h.num_programs * h.num_inputs + 1, sizeof(*im.shapes));
	im.progs = calloc(h.num_programs, sizeof(*im.progs));
	if (!im.ports || !im.names || !im.shapes || !im.progs)
		st = vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory");
	if (st == VNPU_OK)
		st = take_config(&r, &cfg);
	if (st == VNPU_OK)
		st = take_ports(&r, im.num_ports, im.ports, im.names);
	for (uint32_t i = 0; st == VNPU_OK && i < h.num_programs; i++, im.num_progs++)
		st = take_program(core, &r, device, im.ports, h.num_inputs, h.num_outputs,
				  &im.shapes[i * h.num_inputs], &im.progs[i]);
	if (st == VNPU_OK && r.left)
		st = vnpu_error(VNPU_PARSE_ERROR, "the blob has %zu extra bytes", r.left);
	for (uint32_t i = 1; st == VNPU_OK && i < im.num_progs; i++)
		if (im.progs[i]->primary != im.progs[0]->primary ||
		    im.progs[i]->fallback != im.progs[0]->fallback)
			st = vnpu_error(VNPU_PARSE_ERROR, "the blob's programs are for different "
					"devices");
	if (st != VNPU_OK) {
		import_fini(&im);
		return st;
	}
	first = im.progs[0];
	st = vnpu_dyn_compiled_model_import(core, first->primary, first->fallback, first->device,
					    &cfg, im.ports, h.num_inputs, h.num_outputs,
					    h.num_programs, im.shapes, im.progs, out);
	im.num_progs = 0;	/* taken */
	import_fini(&im);
	return st;
}

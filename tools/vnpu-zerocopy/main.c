// SPDX-License-Identifier: MIT
/*
 * vnpu-zerocopy: a model of one input and one output run three ways in
 * one process, side by side:
 *
 *   copy     host memory, uploaded and downloaded by the driver each run
 *   userptr  the program's page-aligned memory as remote tensors
 *   dma-buf  two vgem dma-bufs imported as the input and output tensors
 *
 * It prints, per way, the bytes the driver copied per inference (its
 * UPLOAD and DOWNLOAD counters) and the latency over rounds that take the
 * ways in turn, and checks that the zero-copy outputs equal the copying
 * path's bit for bit. Public API, plus libdrm to allocate vgem buffers
 * (the stand-in for a camera or decoder that fills a dma-buf).
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <xf86drm.h>

#include <vnpu/vnpu.h>

#include "vgem.h"
#include "usage.h"

#define TOOL "vnpu-zerocopy"

#define PAGE 4096u
#define MAX_ROUNDS 10000

enum way { WAY_COPY, WAY_USERPTR, WAY_DMABUF, NUM_WAYS };

static const char *const way_names[NUM_WAYS] = { "copy", "userptr", "dma-buf" };

struct way_run {
	vnpu_infer_request *req;
	void *in, *out;			/* the tensors' data */
	void *own_in, *own_out;		/* malloc'd memory of copy and userptr */
	int fds[2];			/* dma-buf: the vgem buffers' fds */
	const char *where;		/* the device the tensors are memory of, or NULL */
	double *latency_ms;
	int64_t copied;			/* bytes over the measured rounds; -1: unknown */
	bool skipped;
};

struct options {
	const char *model;
	const char *device;
	const char *shape;
	uint64_t rounds;
};

struct zc {
	const struct options *o;
	vnpu_core *core;
	vnpu_compiled_model *cm;
	vnpu_port in_port, out_port;
	uint64_t in_bytes, out_bytes;
	int vgem;
	struct way_run ways[NUM_WAYS];
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: vnpu-zerocopy -m MODEL [-d DEVICE] [-shape D,D,...] [-niter N]\n"
		"Run a model of one input and one output with copies (host memory), over\n"
		"the program's memory (userptr remote tensors) and over vgem dma-bufs, in\n"
		"turns; print the bytes the driver copied per inference and the latency of\n"
		"each, and check the zero-copy outputs against the copying path's.\n"
		"  -m MODEL        the .onnx file\n"
		"  -d DEVICE       NPU.<n> or NPU (default NPU.0); the CPU has no dma-bufs\n"
		"  -shape D,D,...  the input's shape (default: the model's)\n"
		"  -niter N        measured rounds, each runs every way once (default 5)\n"
		"  -h, --help      this text\n"
		"The dma-buf way needs vgem (modprobe vgem) and its card node.\n");
}

static int fail(const char *what)
{
	fprintf(stderr, "vnpu-zerocopy: %s: %s\n", what, vnpu_last_error());
	return 1;
}

static int parse_args(int argc, char **argv, struct options *o)
{
	static const struct option long_options[] = {
		{ "m", required_argument, NULL, 'm' },
		{ "d", required_argument, NULL, 'd' },
		{ "shape", required_argument, NULL, 's' },
		{ "niter", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ "h", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c;

	o->device = "NPU.0";
	o->rounds = 5;
	opterr = 0;
	while ((c = getopt_long_only(argc, argv, ":", long_options, NULL)) != -1) {
		switch (c) {
		case 'm': o->model = optarg; break;
		case 'd': o->device = optarg; break;
		case 's': o->shape = optarg; break;
		case 'h': usage(stdout); exit(0);
		case 'n':
			o->rounds = strtoull(optarg, &end, 10);
			if (end == optarg || *end || optarg[0] == '-' || !o->rounds ||
			    o->rounds > MAX_ROUNDS)
				return usage_error(TOOL, "-niter takes 1 to 10000, not '%s'", optarg);
			break;
		case ':':
			return usage_error(TOOL, "%s needs a value", argv[optind - 1]);
		default:
			return usage_error(TOOL, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error(TOOL, "unexpected argument '%s'", argv[optind]);
	if (!o->model)
		return usage_error(TOOL, "a model is needed (-m MODEL)");
	return 0;
}

/* "D,D,..." into @shape; false on anything else. */
static bool parse_shape(const char *s, vnpu_shape *shape)
{
	char *end;

	shape->rank = 0;
	do {
		if (shape->rank == VNPU_MAX_RANK || *s < '0' || *s > '9')
			return false;
		shape->dims[shape->rank++] = strtoll(s, &end, 10);
		s = end;
	} while (*s++ == ',');
	return s[-1] == '\0';
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int compile(struct zc *z)
{
	vnpu_model *model;
	vnpu_shape shape;
	size_t inputs, outputs;
	const char *name;

	if (vnpu_core_read_model(z->core, z->o->model, &model))
		return fail(z->o->model);
	if (vnpu_model_get_inputs_size(model, &inputs) ||
	    vnpu_model_get_outputs_size(model, &outputs) || inputs != 1 || outputs != 1) {
		fprintf(stderr, "vnpu-zerocopy: %s: a model of one input and one output is needed\n",
			z->o->model);
		vnpu_model_free(model);
		return 1;
	}
	if (z->o->shape) {
		if (!parse_shape(z->o->shape, &shape)) {
			vnpu_model_free(model);
			return usage_error(TOOL, "-shape takes D,D,... not '%s'", z->o->shape);
		}
		if (vnpu_model_input_name(model, 0, &name) ||
		    vnpu_model_reshape(model, name, &shape)) {
			vnpu_model_free(model);
			return fail("-shape");
		}
	}
	if (vnpu_core_compile_model(z->core, model, z->o->device, NULL, &z->cm)) {
		vnpu_model_free(model);
		return fail("compiling");
	}
	vnpu_model_free(model);
	if (vnpu_compiled_model_get_input(z->cm, 0, &z->in_port) ||
	    vnpu_compiled_model_get_output(z->cm, 0, &z->out_port))
		return fail("ports");
	return 0;
}

static uint64_t port_bytes(const vnpu_port *p)
{
	uint64_t n = vnpu_element_type_size(p->type);

	for (uint32_t d = 0; d < p->shape.rank; d++)
		n *= (uint64_t)p->shape.dims[d];
	return n;
}

static uint64_t page_round(uint64_t bytes)
{
	return bytes ? (bytes + PAGE - 1) & ~(uint64_t)(PAGE - 1) : PAGE;
}

/* The tensor of @port for way @w, in @*data. */
static vnpu_status way_tensor(struct zc *z, enum way w, const vnpu_port *port, int slot,
			      vnpu_tensor **out)
{
	struct way_run *r = &z->ways[w];
	uint64_t bytes = port_bytes(port);
	void **own = slot ? &r->own_out : &r->own_in;

	if (w == WAY_DMABUF) {
		r->fds[slot] = vgem_dmabuf(z->vgem, bytes);
		if (r->fds[slot] < 0)
			return VNPU_OUT_OF_MEMORY;
		return vnpu_core_import_dmabuf_tensor(z->core, z->o->device, port->type,
						      &port->shape, r->fds[slot], out);
	}
	*own = aligned_alloc(PAGE, page_round(bytes));
	if (!*own)
		return VNPU_OUT_OF_MEMORY;
	memset(*own, 0, page_round(bytes));
	if (w == WAY_USERPTR)
		return vnpu_core_create_remote_tensor(z->core, z->o->device, port->type,
						      &port->shape, *own, out);
	return vnpu_tensor_create_from_ptr(port->type, &port->shape, *own, out);
}

/* Make way @w's request with its input and output tensors set. */
static int way_setup(struct zc *z, enum way w)
{
	struct way_run *r = &z->ways[w];
	vnpu_tensor *in = NULL, *out = NULL;
	vnpu_status st;

	r->latency_ms = calloc(z->o->rounds, sizeof(*r->latency_ms));
	if (!r->latency_ms)
		return fail("allocating");
	if (w == WAY_DMABUF && z->vgem < 0) {
		printf("dma-buf: skipped, no vgem card node (modprobe vgem, as root)\n");
		r->skipped = true;
		return 0;
	}
	if (vnpu_compiled_model_create_infer_request(z->cm, &r->req))
		return fail("creating a request");
	st = way_tensor(z, w, &z->in_port, 0, &in);
	if (st == VNPU_OK)
		st = way_tensor(z, w, &z->out_port, 1, &out);
	if (st == VNPU_OK)
		st = vnpu_tensor_get_data(in, &r->in) ?: vnpu_tensor_get_data(out, &r->out) ?:
		     vnpu_tensor_get_device(in, &r->where) ?:
		     vnpu_infer_request_set_tensor(r->req, z->in_port.name, in) ?:
		     vnpu_infer_request_set_tensor(r->req, z->out_port.name, out);
	vnpu_tensor_free(in);
	vnpu_tensor_free(out);
	if (st == VNPU_UNSUPPORTED && w == WAY_DMABUF) {
		printf("dma-buf: skipped, %s\n", vnpu_last_error());
		r->skipped = true;
		return 0;
	}
	return st ? fail(way_names[w]) : 0;
}

static void way_free(struct way_run *r)
{
	vnpu_infer_request_free(r->req);
	for (int i = 0; i < 2; i++) {
		if (r->fds[i] >= 0)
			close(r->fds[i]);
	}
	free(r->own_in);
	free(r->own_out);
	free(r->latency_ms);
}

/* Bytes the device's driver copied (UPLOAD + DOWNLOAD), or -1. */
static int64_t bytes_copied(struct zc *z)
{
	const char *keys[2] = { VNPU_PROP_DEVICE_BYTES_UPLOADED,
				VNPU_PROP_DEVICE_BYTES_DOWNLOADED };
	vnpu_property_value *v;
	int64_t sum = 0;

	for (int k = 0; k < 2; k++) {
		if (vnpu_core_get_property(z->core, z->o->device, keys[k], &v))
			return -1;
		sum += v->integer;
		vnpu_property_value_free(v);
	}
	return sum;
}

/* Every way's input gets the same bytes (a fixed pattern of small values). */
static void fill_inputs(struct zc *z)
{
	uint32_t seed = 12345;

	for (uint64_t i = 0; i < z->in_bytes; i++) {
		seed = seed * 1103515245 + 12345;
		((uint8_t *)z->ways[WAY_COPY].in)[i] = (uint8_t)(seed >> 16) & 0x3f;
	}
	for (int w = WAY_USERPTR; w < NUM_WAYS; w++) {
		if (!z->ways[w].skipped)
			memcpy(z->ways[w].in, z->ways[WAY_COPY].in, z->in_bytes);
	}
}

/* One inference of way @w in round @round, timed, its copies counted. */
static int way_run(struct zc *z, enum way w, uint64_t round)
{
	struct way_run *r = &z->ways[w];
	int64_t before = bytes_copied(z), after, t0;

	memset(r->out, 0, z->out_bytes);
	t0 = now_ns();
	if (vnpu_infer_request_infer(r->req))
		return fail(way_names[w]);
	r->latency_ms[round] = (double)(now_ns() - t0) / 1e6;
	after = bytes_copied(z);
	if (before < 0 || after < 0 || r->copied < 0)
		r->copied = -1;
	else
		r->copied += after - before;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The table; 1 when a zero-copy way copied or its output differs. */
static int report(struct zc *z)
{
	uint64_t n = z->o->rounds;
	int bad = 0;

	printf("%-8s %-8s %22s %10s %10s %10s  %s\n", "way", "memory", "bytes copied/inference",
	       "median ms", "min ms", "max ms", "output");
	for (int w = 0; w < NUM_WAYS; w++) {
		struct way_run *r = &z->ways[w];
		char copied[24];
		bool same;

		if (r->skipped)
			continue;
		qsort(r->latency_ms, n, sizeof(double), cmp_double);
		same = !memcmp(r->out, z->ways[WAY_COPY].out, z->out_bytes);
		if (r->copied < 0)
			snprintf(copied, sizeof(copied), "unknown");
		else
			snprintf(copied, sizeof(copied), "%lld",
				 (long long)(r->copied / (int64_t)n));
		printf("%-8s %-8s %22s %10.3f %10.3f %10.3f  %s\n", way_names[w],
		       r->where ? r->where : "host", copied,
		       r->latency_ms[n / 2], r->latency_ms[0], r->latency_ms[n - 1],
		       w == WAY_COPY ? "reference" : same ? "equal" : "DIFFERS");
		if (w != WAY_COPY && (!same || (r->where && r->copied > 0)))
			bad = 1;
	}
	if (bad)
		fprintf(stderr, "vnpu-zerocopy: a zero-copy way copied or gave another output\n");
	return bad;
}

static int zerocopy(struct zc *z)
{
	if (compile(z))
		return 1;
	z->in_bytes = port_bytes(&z->in_port);
	z->out_bytes = port_bytes(&z->out_port);
	printf("%s on %s: input %s %llu bytes, output %s %llu bytes, %llu rounds\n",
	       z->o->model, z->o->device, z->in_port.name, (unsigned long long)z->in_bytes,
	       z->out_port.name, (unsigned long long)z->out_bytes,
	       (unsigned long long)z->o->rounds);
	z->vgem = vgem_open();
	for (int w = 0; w < NUM_WAYS; w++) {
		if (way_setup(z, w))
			return 1;
	}
	fill_inputs(z);
	/* A first run of each, untimed, then the rounds take the ways in turn. */
	for (uint64_t round = 0; round <= z->o->rounds; round++) {
		for (int w = 0; w < NUM_WAYS; w++) {
			if (!z->ways[w].skipped && way_run(z, w, round ? round - 1 : 0))
				return 1;
		}
		if (!round) {
			for (int w = 0; w < NUM_WAYS; w++)
				z->ways[w].copied = 0;
		}
	}
	return report(z);
}

int main(int argc, char **argv)
{
	struct options o = { 0 };
	struct zc z = { .o = &o, .vgem = -1 };
	int ret = parse_args(argc, argv, &o);

	for (int w = 0; w < NUM_WAYS; w++)
		z.ways[w].fds[0] = z.ways[w].fds[1] = -1;
	if (ret)
		return ret;
	if (vnpu_core_create(&z.core))
		return fail("creating the core");
	ret = zerocopy(&z);
	for (int w = 0; w < NUM_WAYS; w++)
		way_free(&z.ways[w]);
	vnpu_compiled_model_free(z.cm);
	vnpu_core_free(z.core);
	if (z.vgem >= 0)
		close(z.vgem);
	return ret;
}

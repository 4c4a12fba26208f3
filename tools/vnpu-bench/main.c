// SPDX-License-Identifier: MIT
/*
 * vnpu-bench: how fast a model runs on a device, with the sync or the
 * async API, as benchmark_app measures it: first-inference time, latency
 * statistics and throughput; optionally per-layer counters (-pc), a JSON
 * report (--json) and a Chrome trace of every run (--trace). Public API
 * only.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "bench.h"
#include "tensor_file.h"
#include "usage.h"

#define TOOL "vnpu-bench"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: vnpu-bench -m MODEL [-d DEVICE] [-api sync|async] [-nireq N]\n"
		"                  [-niter N | -t SECONDS] [-hint HINT] [-b N] [-shape SHAPES]\n"
		"                  [-infer_precision f32|f16|bf16]\n"
		"                  [-i [NAME=]FILE ...] [-pc] [-io device|host|remote]\n"
		"                  [--json FILE] [--trace FILE]\n"
		"Measure how fast an ONNX model runs: first inference, latency, throughput.\n"
		"  -m MODEL         the .onnx file\n"
		"  -d DEVICE        CPU, NPU, NPU.<n>, HETERO:..., AUTO (default CPU)\n"
		"  -api API         sync (infer) or async (start_async + callbacks; default)\n"
		"  -nireq N         infer requests (default: the compiled model's\n"
		"                   OPTIMAL_NUMBER_OF_INFER_REQUESTS; 1 for sync)\n"
		"  -niter N         run N inferences\n"
		"  -t SECONDS       run for SECONDS (default 10 when -niter is not given)\n"
		"  -hint HINT       latency, throughput, cumulative_throughput or none\n"
		"                   (default: throughput for async, latency for sync);\n"
		"                   cumulative_throughput with -d NPU uses every NPU\n"
		"  -infer_precision P  f32, f16 or bf16: the device's\n"
		"                   INFERENCE_PRECISION_HINT (the weights of Conv, Gemm\n"
		"                   and MatMul in that type; default: the device's)\n"
		"  -b N             batch: the first dimension of every input (default:\n"
		"                   1 where it is dynamic)\n"
		"  -shape SHAPES    input shapes: [1,3,224,224] (the only input) or\n"
		"                   name[1,3,224,224],other[1,10]\n"
		"  -i [NAME=]FILE   input data instead of random values, for input NAME\n"
		"                   (without NAME=: the only input); repeat for more:\n"
		"                   a TensorProto (.pb), a NumPy array (.npy) or raw\n"
		"                   data (FILE.raw:TYPE:D,D,...), of the input's shape\n"
		"  -pc              print the per-layer counters of the last inference\n"
		"  -io WHERE        the inputs and outputs: device (the requests' own\n"
		"                   buffers, written in place; default), host (the\n"
		"                   program's memory, copied every inference) or remote\n"
		"                   (the program's page-aligned memory as remote tensors:\n"
		"                   no copy where the device takes it)\n"
		"  --json FILE      write the report as JSON\n"
		"  --trace FILE     write a Chrome trace (Perfetto) of the runs: the host\n"
		"                   stages per request and the layers on the device\n"
		"  -h, --help       this text\n");
}

static bool parse_u64(const char *s, uint64_t min, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v < min)
		return false;
	*out = v;
	return true;
}

static const char *parse_hint(const char *s)
{
	static const char *const hints[] = { "LATENCY", "THROUGHPUT", "CUMULATIVE_THROUGHPUT" };
	size_t i;

	for (i = 0; i < sizeof(hints) / sizeof(hints[0]); i++) {
		if (!strcasecmp(s, hints[i]))
			return hints[i];
	}
	return !strcasecmp(s, "none") ? "" : NULL;
}

/* A terminal someone watches: not a dumb one, nor a serial console (logs). */
static bool watched_terminal(int fd)
{
	const char *term = getenv("TERM"), *name;

	if (!isatty(fd) || !term || !strcmp(term, "dumb"))
		return false;
	name = ttyname(fd);
	return name && strcmp(name, "/dev/console") && strncmp(name, "/dev/ttyS", 9) &&
	       strncmp(name, "/dev/hvc", 8);
}

enum { OPT_JSON = 256, OPT_TRACE, OPT_INPUT, OPT_IO, OPT_PRECISION };

/* benchmark_app's -infer_precision values, in the runtime's spelling. */
static const char *parse_precision(const char *s)
{
	static const char *const names[] = { "f32", "f16", "bf16" };
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcasecmp(s, names[i]))
			return names[i];
	}
	return NULL;
}

static int parse_args(int argc, char **argv, struct bench_opts *o)
{
	static const struct option long_options[] = {
		{ "m", required_argument, NULL, 'm' },
		{ "d", required_argument, NULL, 'd' },
		{ "api", required_argument, NULL, 'a' },
		{ "nireq", required_argument, NULL, 'n' },
		{ "niter", required_argument, NULL, 'i' },
		{ "t", required_argument, NULL, 't' },
		{ "hint", required_argument, NULL, 'H' },
		{ "infer_precision", required_argument, NULL, OPT_PRECISION },
		{ "b", required_argument, NULL, 'b' },
		{ "shape", required_argument, NULL, 's' },
		{ "i", required_argument, NULL, OPT_INPUT },
		{ "pc", no_argument, NULL, 'p' },
		{ "io", required_argument, NULL, OPT_IO },
		{ "json", required_argument, NULL, OPT_JSON },
		{ "trace", required_argument, NULL, OPT_TRACE },
		{ "help", no_argument, NULL, 'h' },
		{ "h", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *hint = NULL;
	uint64_t v;
	char *end;
	int c;

	o->device = "CPU";
	o->async = true;
	opterr = 0;
	while ((c = getopt_long_only(argc, argv, ":", long_options, NULL)) != -1) {
		switch (c) {
		case 'm': o->model = optarg; break;
		case 'd': o->device = optarg; break;
		case 's': o->shapes = optarg; break;
		case 'p': o->per_layer = true; break;
		case OPT_JSON: o->json_path = optarg; break;
		case OPT_TRACE: o->trace_path = optarg; break;
		case OPT_INPUT:
			if (o->num_files == BENCH_MAX_FILES)
				return usage_error(TOOL, "-i is taken at most %d times", BENCH_MAX_FILES);
			o->files[o->num_files++] = optarg;
			break;
		case OPT_IO:
			if (!strcmp(optarg, "device"))
				o->io = BENCH_IO_DEVICE;
			else if (!strcmp(optarg, "host"))
				o->io = BENCH_IO_HOST;
			else if (!strcmp(optarg, "remote"))
				o->io = BENCH_IO_REMOTE;
			else
				return usage_error(TOOL, "-io takes device, host or remote, not '%s'",
						   optarg);
			break;
		case 'h': usage(stdout); exit(0);
		case 'a':
			if (strcmp(optarg, "sync") && strcmp(optarg, "async"))
				return usage_error(TOOL, "-api takes sync or async, not '%s'", optarg);
			o->async = !strcmp(optarg, "async");
			break;
		case 'n':
			if (!parse_u64(optarg, 1, &v) || v > 1024)
				return usage_error(TOOL, "-nireq takes 1 to 1024, not '%s'", optarg);
			o->nireq = (uint32_t)v;
			break;
		case 'i':
			if (!parse_u64(optarg, 1, &o->niter))
				return usage_error(TOOL, "-niter takes a positive count, not '%s'", optarg);
			break;
		case 't':
			o->seconds = strtod(optarg, &end);
			if (end == optarg || *end || !(o->seconds > 0) || o->seconds > 1e6)
				return usage_error(TOOL, "-t takes a positive number of seconds, not '%s'",
						   optarg);
			break;
		case 'H':
			hint = parse_hint(optarg);
			if (!hint)
				return usage_error(TOOL, "-hint takes latency, throughput, "
						   "cumulative_throughput or none, not '%s'", optarg);
			break;
		case OPT_PRECISION:
			o->precision = parse_precision(optarg);
			if (!o->precision)
				return usage_error(TOOL, "-infer_precision takes f32, f16 or bf16, not '%s'",
						   optarg);
			break;
		case 'b':
			if (!parse_u64(optarg, 1, &v) || v > (1u << 20))
				return usage_error(TOOL, "-b takes a positive batch size, not '%s'", optarg);
			o->batch = (int64_t)v;
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
	if (o->niter && o->seconds > 0)
		return usage_error(TOOL, "-niter and -t exclude each other");
	if (!o->niter && !(o->seconds > 0))
		o->seconds = 10;
	if (!hint)
		hint = o->async ? "THROUGHPUT" : "LATENCY";
	o->hint = hint[0] ? hint : NULL;
	o->progress = watched_terminal(STDERR_FILENO);
	return 0;
}

static int fail(const char *what)
{
	fprintf(stderr, "vnpu-bench: %s: %s\n", what, vnpu_last_error());
	return 1;
}

/* The tool's own allocation failed: no library call has a message for it. */
static int oom(const char *what)
{
	fprintf(stderr, "vnpu-bench: out of memory for %s\n", what);
	return 1;
}

/* ---- shapes ---- */

/* Parse "[d,d,...]" at *@pp into @shape; advances past the ']'. */
static bool parse_dims(const char **pp, vnpu_shape *shape)
{
	const char *p = *pp;
	char *end;
	long long d;

	if (*p++ != '[')
		return false;
	shape->rank = 0;
	while (*p != ']') {
		if (shape->rank == VNPU_MAX_RANK)
			return false;
		errno = 0;
		d = strtoll(p, &end, 10);
		if (errno || end == p || d < 1)
			return false;
		shape->dims[shape->rank++] = d;
		p = end;
		if (*p == ',')
			p++;
		else if (*p != ']')
			return false;
	}
	*pp = p + 1;
	return true;
}

static int reshape(vnpu_model *model, const char *name, const vnpu_shape *shape)
{
	if (vnpu_model_reshape(model, name, shape) == VNPU_OK)
		return 0;
	fprintf(stderr, "vnpu-bench: reshaping input '%s': %s\n", name, vnpu_last_error());
	return 1;
}

static int apply_shapes(vnpu_model *model, const char *spec)
{
	const char *p = spec, *bracket;
	char name[256];
	vnpu_shape shape;
	const char *only;
	size_t n;

	if (vnpu_model_get_inputs_size(model, &n))
		return fail("model inputs");
	while (*p) {
		bracket = strchr(p, '[');
		if (!bracket || (size_t)(bracket - p) >= sizeof(name))
			return usage_error(TOOL, "-shape: cannot read '%s'", spec);
		memcpy(name, p, (size_t)(bracket - p));
		name[bracket - p] = '\0';
		p = bracket;
		if (!parse_dims(&p, &shape) || (*p && *p != ','))
			return usage_error(TOOL, "-shape: cannot read '%s'", spec);
		if (*p == ',')
			p++;
		if (!name[0]) {
			if (n != 1)
				return usage_error(TOOL, "-shape: the model has several inputs; name "
						   "them: '%s'", spec);
			if (vnpu_model_input_name(model, 0, &only))
				return fail("model inputs");
			snprintf(name, sizeof(name), "%s", only);
		}
		if (reshape(model, name, &shape))
			return 1;
	}
	return 0;
}

/* Set the first dimension of every input: dynamic ones, and with -b all. */
static int apply_batch(vnpu_model *model, int64_t batch, bool explicit_batch)
{
	vnpu_shape shape;
	const char *name;
	size_t n, i;

	if (vnpu_model_get_inputs_size(model, &n))
		return fail("model inputs");
	for (i = 0; i < n; i++) {
		if (vnpu_model_input_shape(model, i, &shape) || vnpu_model_input_name(model, i, &name))
			return fail("model inputs");
		if (!shape.rank || shape.dims[0] == batch)
			continue;
		if (shape.dims[0] != VNPU_DIM_DYNAMIC && !explicit_batch)
			continue;
		if (shape.dims[0] != VNPU_DIM_DYNAMIC) {
			fprintf(stderr, "vnpu-bench: input '%s' has a fixed batch of %lld, not %lld\n",
				name, (long long)shape.dims[0], (long long)batch);
			return 1;
		}
		shape.dims[0] = batch;
		if (reshape(model, name, &shape))
			return 1;
	}
	return 0;
}

/*
 * The -i file @spec's input of @model is frozen to the file's values when
 * they decide shapes (vnpu_model_input_decides_shapes): the model then
 * compiles with static shapes, and every request runs on those values.
 */
static int freeze_input_file(vnpu_model *model, const char *spec, bool *frozen)
{
	const char *eq = strchr(spec, '='), *path = eq ? eq + 1 : spec, *only;
	char name[256], err[512];
	vnpu_tensor *t = NULL;
	size_t index, n;
	int decides;
	int ret;

	if (vnpu_model_get_inputs_size(model, &n))
		return fail("model inputs");
	/* An input the model does not have is read_input_file()'s error. */
	if (eq) {
		snprintf(name, sizeof(name), "%.*s", (int)(eq - spec), spec);
		if (vnpu_model_input_index(model, name, &index))
			return 0;
	} else {
		if (n != 1 || vnpu_model_input_name(model, 0, &only))
			return 0;
		snprintf(name, sizeof(name), "%s", only);
		index = 0;
	}
	if (vnpu_model_input_decides_shapes(model, index, &decides))
		return fail(name);
	if (!decides)
		return 0;
	if (tensor_file_read(path, &t, NULL, err, sizeof(err))) {
		fprintf(stderr, "vnpu-bench: %s\n", err);
		return 1;
	}
	ret = tensor_freeze_input(model, name, t) != VNPU_OK;
	if (ret)
		fprintf(stderr, "vnpu-bench: -i %s: %s\n", spec, vnpu_last_error());
	vnpu_tensor_free(t);
	*frozen = !ret;
	return ret;
}

static int freeze_input_files(vnpu_model *model, struct bench_opts *o)
{
	for (uint32_t i = 0; i < o->num_files; i++)
		if (freeze_input_file(model, o->files[i], &o->frozen[i]))
			return 1;
	return 0;
}

/* ---- compile and set up the requests ---- */

/* The devices to compile for: every NPU for CUMULATIVE_THROUGHPUT on "NPU". */
static int pick_devices(vnpu_core *core, struct bench_run *b)
{
	const struct bench_opts *o = b->o;
	uint32_t n, i;
	char **list;

	if (!o->hint || strcmp(o->hint, "CUMULATIVE_THROUGHPUT") || strcmp(o->device, "NPU")) {
		snprintf(b->devices[0], sizeof(b->devices[0]), "%s", o->device);
		b->num_models = 1;
		return 0;
	}
	if (vnpu_core_get_available_devices(core, &list, &n))
		return fail("devices");
	for (i = 0; i < n && b->num_models < BENCH_MAX_MODELS; i++) {
		if (!strncmp(list[i], "NPU.", 4))
			snprintf(b->devices[b->num_models++], sizeof(b->devices[0]), "%s", list[i]);
	}
	vnpu_free(list);
	if (!b->num_models) {
		fprintf(stderr, "vnpu-bench: no NPU device is present\n");
		return 1;
	}
	return 0;
}

static int64_t int_property(vnpu_compiled_model *cm, const char *key)
{
	vnpu_property_value *v;
	int64_t n;

	if (vnpu_compiled_model_get_property(cm, key, &v))
		return 0;
	n = v->integer;
	vnpu_property_value_free(v);
	return n;
}

/* The device a compiled model runs on (the first of EXECUTION_DEVICES). */
static void execution_device(vnpu_compiled_model *cm, char *buf, size_t size)
{
	vnpu_property_value *v;

	if (vnpu_compiled_model_get_property(cm, VNPU_PROP_EXECUTION_DEVICES, &v))
		return;
	if (v->count)
		snprintf(buf, size, "%s", v->items[0]);
	vnpu_property_value_free(v);
}

static void string_property(vnpu_compiled_model *cm, const char *key, char *buf, size_t size)
{
	vnpu_property_value *v;

	snprintf(buf, size, "?");
	if (vnpu_compiled_model_get_property(cm, key, &v))
		return;
	snprintf(buf, size, "%s", v->text);
	vnpu_property_value_free(v);
}

static void full_device_name(vnpu_core *core, const char *device, char *buf, size_t size)
{
	vnpu_property_value *v;

	if (vnpu_core_get_property(core, device, VNPU_PROP_FULL_DEVICE_NAME, &v))
		return;
	snprintf(buf, size, "%s", v->text);
	vnpu_property_value_free(v);
}

static int compile_all(vnpu_core *core, vnpu_model *model, struct bench_run *b)
{
	const struct bench_opts *o = b->o;
	const char *props[9];
	char nireq[16];
	int64_t t0 = bench_now_ns();
	uint32_t i, p = 0;

	props[p++] = VNPU_PROP_ENABLE_PROFILING;
	props[p++] = o->per_layer || o->trace_path ? "YES" : "NO";
	if (o->hint) {
		props[p++] = VNPU_PROP_PERFORMANCE_HINT;
		props[p++] = o->hint;
	}
	if (o->precision) {
		props[p++] = VNPU_PROP_INFERENCE_PRECISION_HINT;
		props[p++] = o->precision;
	}
	if (o->nireq) {
		snprintf(nireq, sizeof(nireq), "%u", o->nireq);
		props[p++] = VNPU_PROP_PERFORMANCE_HINT_NUM_REQUESTS;
		props[p++] = nireq;
	}
	props[p] = NULL;
	for (i = 0; i < b->num_models; i++) {
		if (vnpu_core_compile_model(core, model, b->devices[i], props, &b->models[i])) {
			fprintf(stderr, "vnpu-bench: compiling for %s: %s\n", b->devices[i],
				vnpu_last_error());
			return 1;
		}
		execution_device(b->models[i], b->devices[i], sizeof(b->devices[i]));
	}
	full_device_name(core, b->devices[0], b->device_name, sizeof(b->device_name));
	string_property(b->models[0], VNPU_PROP_INFERENCE_PRECISION_HINT, b->precision,
			sizeof(b->precision));
	b->res.compile_ms = (double)(bench_now_ns() - t0) / 1e6;
	b->nireq = o->nireq;
	if (!b->nireq && !o->async)
		b->nireq = 1;
	for (i = 0; !o->nireq && o->async && i < b->num_models; i++)
		b->nireq += (uint32_t)int_property(b->models[i],
						   VNPU_PROP_OPTIMAL_NUMBER_OF_INFER_REQUESTS);
	if (!b->nireq)
		b->nireq = 1;
	return 0;
}

/* Random inputs (seeded): uniform [0, 1) floats, zeros for the rest. */
static int fill_inputs(vnpu_infer_request *req, uint32_t num_inputs, unsigned int *seed)
{
	vnpu_element_type type;
	vnpu_tensor *t;
	size_t n, i;
	void *data;
	uint32_t k;

	for (k = 0; k < num_inputs; k++) {
		if (vnpu_infer_request_get_input_tensor(req, k, &t))
			return fail("input tensor");
		vnpu_tensor_get_element_type(t, &type);
		vnpu_tensor_get_size(t, &n);
		vnpu_tensor_get_data(t, &data);
		for (i = 0; i < n; i++) {
			if (type == VNPU_TYPE_F32)
				((float *)data)[i] = (float)rand_r(seed) / ((float)RAND_MAX + 1.0f);
			else if (type == VNPU_TYPE_F64)
				((double *)data)[i] = (double)rand_r(seed) / ((double)RAND_MAX + 1.0);
		}
		vnpu_tensor_free(t);
	}
	return 0;
}

/*
 * Input -i @spec ([NAME=]FILE) of @cm: its port and the file's tensor,
 * which must have the port's shape (its type may differ: the request
 * converts it).
 */
static int read_input_file(vnpu_compiled_model *cm, const char *spec, uint32_t num_inputs,
			   vnpu_port *port, vnpu_tensor **out)
{
	const char *eq = strchr(spec, '='), *path = eq ? eq + 1 : spec;
	char name[256], err[512];
	vnpu_shape shape;
	vnpu_status st;

	if (eq) {
		snprintf(name, sizeof(name), "%.*s", (int)(eq - spec), spec);
		st = vnpu_compiled_model_get_port_by_name(cm, name, port);
		if (st || port->is_output) {
			fprintf(stderr, "vnpu-bench: -i %s: the model has no input \"%s\"\n", spec,
				name);
			return 1;
		}
	} else if (num_inputs != 1 || vnpu_compiled_model_get_input(cm, 0, port)) {
		fprintf(stderr, "vnpu-bench: -i %s: the model has %u inputs: name it (-i NAME=FILE)\n",
			spec, num_inputs);
		return 1;
	}
	if (tensor_file_read(path, out, NULL, err, sizeof(err))) {
		fprintf(stderr, "vnpu-bench: %s\n", err);
		return 1;
	}
	vnpu_tensor_get_shape(*out, &shape);
	if (shape.rank != port->shape.rank ||
	    memcmp(shape.dims, port->shape.dims, shape.rank * sizeof(shape.dims[0]))) {
		fprintf(stderr, "vnpu-bench: %s: its shape is not input %s's (give -shape or -b to match)\n",
			path, port->name);
		vnpu_tensor_free(*out);
		return 1;
	}
	return 0;
}

/*
 * -io host or remote: a tensor over new page-aligned memory of the
 * program for @port of @req, set on it.
 */
static int set_caller_tensor(struct bench_run *b, vnpu_core *core, const char *device,
			     vnpu_infer_request *req, const vnpu_port *port)
{
	uint64_t n = 1, bytes;
	vnpu_tensor *t;
	vnpu_status st;
	void *mem;
	uint32_t d;

	for (d = 0; d < port->shape.rank; d++)
		n *= (uint64_t)port->shape.dims[d];
	bytes = (n * vnpu_element_type_size(port->type) + 4095) & ~(uint64_t)4095;
	mem = aligned_alloc(4096, bytes ? bytes : 4096);
	if (!mem)
		return oom("a tensor");
	memset(mem, 0, bytes);
	b->io_mem[b->num_io_mem++] = mem;
	st = b->o->io == BENCH_IO_REMOTE ?
	     vnpu_core_create_remote_tensor(core, device, port->type, &port->shape, mem, &t) :
	     vnpu_tensor_create_from_ptr(port->type, &port->shape, mem, &t);
	if (st == VNPU_OK) {
		st = vnpu_infer_request_set_tensor(req, port->name, t);
		vnpu_tensor_free(t);
	}
	return st ? fail("setting a tensor of the program's memory") : 0;
}

static int set_caller_tensors(struct bench_run *b, vnpu_core *core, uint32_t i)
{
	vnpu_compiled_model *cm = b->models[i % b->num_models];
	uint32_t inputs, outputs, k;
	vnpu_port port;

	if (vnpu_compiled_model_get_num_inputs(cm, &inputs) ||
	    vnpu_compiled_model_get_num_outputs(cm, &outputs))
		return fail("ports");
	if (!b->io_mem)
		b->io_mem = calloc((size_t)b->nireq * (inputs + outputs), sizeof(*b->io_mem));
	if (!b->io_mem)
		return oom("the tensors' table");
	for (k = 0; k < inputs + outputs; k++) {
		if ((k < inputs ? vnpu_compiled_model_get_input(cm, k, &port) :
				  vnpu_compiled_model_get_output(cm, k - inputs, &port)) ||
		    set_caller_tensor(b, core, b->devices[i % b->num_models], b->reqs[i], &port))
			return 1;
	}
	return 0;
}

/*
 * The -i files into every request: copied into its own input tensor (a
 * benchmark's inputs stay in place) when of the port's type, else set
 * for the request to convert at each run.
 */
static int set_input_files(struct bench_run *b, vnpu_infer_request *req,
			   vnpu_compiled_model *cm, uint32_t num_inputs)
{
	vnpu_tensor *file, *own;
	vnpu_element_type type;
	uint64_t bytes;
	vnpu_port port;
	void *src, *dst;
	uint32_t i;
	int ret = 0;

	for (i = 0; i < b->o->num_files && !ret; i++) {
		if (b->o->frozen[i])
			continue;
		if (read_input_file(cm, b->o->files[i], num_inputs, &port, &file))
			return 1;
		vnpu_tensor_get_element_type(file, &type);
		if (type != port.type) {
			if (vnpu_infer_request_set_tensor(req, port.name, file))
				ret = fail(b->o->files[i]);
		} else if (vnpu_infer_request_get_tensor(req, port.name, &own)) {
			ret = fail(port.name);
		} else {
			vnpu_tensor_get_byte_size(file, &bytes);
			vnpu_tensor_get_data(file, &src);
			vnpu_tensor_get_data(own, &dst);
			memcpy(dst, src, bytes);
			vnpu_tensor_free(own);
		}
		vnpu_tensor_free(file);
	}
	return ret;
}

static int create_requests(struct bench_run *b, vnpu_core *core)
{
	unsigned int seed = 1;
	uint32_t i, inputs;

	b->reqs = calloc(b->nireq, sizeof(*b->reqs));
	if (!b->reqs)
		return oom("the infer requests");
	for (i = 0; i < b->nireq; i++) {
		vnpu_compiled_model *cm = b->models[i % b->num_models];

		if (vnpu_compiled_model_create_infer_request(cm, &b->reqs[i]))
			return fail("creating an infer request");
		if (b->o->io != BENCH_IO_DEVICE && set_caller_tensors(b, core, i))
			return 1;
		if (vnpu_compiled_model_get_num_inputs(cm, &inputs) ||
		    fill_inputs(b->reqs[i], inputs, &seed) ||
		    set_input_files(b, b->reqs[i], cm, inputs))
			return 1;
	}
	return 0;
}

/* Bytes the first device's driver copied (UPLOAD + DOWNLOAD), or -1. */
static int64_t device_bytes_copied(vnpu_core *core, const char *device)
{
	const char *keys[2] = { VNPU_PROP_DEVICE_BYTES_UPLOADED,
				VNPU_PROP_DEVICE_BYTES_DOWNLOADED };
	vnpu_property_value *v;
	int64_t sum = 0;

	for (int k = 0; k < 2; k++) {
		if (vnpu_core_get_property(core, device, keys[k], &v))
			return -1;
		sum += v->integer;
		vnpu_property_value_free(v);
	}
	return sum;
}

/* The measured inferences, and what the driver copied meanwhile. */
static int measure(struct bench_run *b, vnpu_core *core)
{
	int64_t before = device_bytes_copied(core, b->devices[0]), after;

	if (bench_measure(b))
		return 1;
	after = device_bytes_copied(core, b->devices[0]);
	b->res.copied_bytes = before < 0 || after < 0 ? -1 : after - before;
	return 0;
}

static void print_ports(vnpu_compiled_model *cm)
{
	uint32_t n, i, d;
	vnpu_port port;
	int out;

	for (out = 0; out < 2; out++) {
		if (out ? vnpu_compiled_model_get_num_outputs(cm, &n) :
			  vnpu_compiled_model_get_num_inputs(cm, &n))
			return;
		for (i = 0; i < n; i++) {
			if (out ? vnpu_compiled_model_get_output(cm, i, &port) :
				  vnpu_compiled_model_get_input(cm, i, &port))
				return;
			printf("%-20s %s %s[", i ? "" : out ? "Outputs" : "Inputs", port.name,
			       vnpu_element_type_str(port.type));
			for (d = 0; d < port.shape.rank; d++)
				printf("%s%lld", d ? "," : "", (long long)port.shape.dims[d]);
			printf("]\n");
		}
	}
}

static int first_inference(struct bench_run *b)
{
	int64_t t0 = bench_now_ns();

	if (vnpu_infer_request_infer(b->reqs[0]))
		return fail("first inference");
	b->res.first_ms = (double)(bench_now_ns() - t0) / 1e6;
	return 0;
}

static int bench(struct bench_opts *o, struct bench_run *b, vnpu_core *core)
{
	int64_t t0 = bench_now_ns();
	vnpu_model *model;
	int ret;

	if (vnpu_core_read_model(core, o->model, &model)) {
		fprintf(stderr, "vnpu-bench: %s: %s\n", o->model, vnpu_last_error());
		return 1;
	}
	b->res.read_ms = (double)(bench_now_ns() - t0) / 1e6;
	ret = o->shapes ? apply_shapes(model, o->shapes) : 0;	/* 2: a usage error */
	if (!ret)
		ret = freeze_input_files(model, o);
	if (!ret)
		ret = apply_batch(model, o->batch ? o->batch : 1, o->batch != 0) ||
		      pick_devices(core, b) || compile_all(core, model, b);
	vnpu_model_free(model);
	if (ret)
		return ret;
	print_ports(b->models[0]);
	fflush(stdout);
	if (create_requests(b, core) || first_inference(b) || measure(b, core))
		return 1;
	bench_print(b, stdout);
	if (o->per_layer && bench_print_layers(b, stdout))
		return 1;
	if (o->json_path && bench_write_json(b, o->json_path))
		return 1;
	if (o->trace_path && bench_write_trace(b, o->trace_path))
		return 1;
	return 0;
}

static void bench_free(struct bench_run *b)
{
	uint64_t i;

	for (i = 0; b->reqs && i < b->nireq; i++)
		vnpu_infer_request_free(b->reqs[i]);
	for (i = 0; i < b->num_models; i++)
		vnpu_compiled_model_free(b->models[i]);
	for (i = 0; i < b->res.num_strings; i++)
		free(b->res.strings[i]);
	free(b->res.strings);
	free(b->res.spans);
	free(b->res.latency_ms);
	free(b->reqs);
	for (i = 0; i < b->num_io_mem; i++)
		free(b->io_mem[i]);
	free(b->io_mem);
}

int main(int argc, char **argv)
{
	struct bench_opts o = { 0 };
	struct bench_run b = { .o = &o };
	vnpu_core *core;
	int ret = parse_args(argc, argv, &o);

	if (ret)
		return ret;
	if (vnpu_core_create(&core))
		return fail("creating the core");
	ret = bench(&o, &b, core);
	bench_free(&b);
	vnpu_core_free(core);
	return ret;
}

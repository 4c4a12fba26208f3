// SPDX-License-Identifier: MIT
/*
 * vnpu-run: run an ONNX model once on a device and write each output as an
 * ONNX TensorProto file named after it (the ONNX test-data format).
 *
 *   vnpu-run -m MODEL [-d DEVICE] [-i NAME=FILE ...] [-o DIR] [-f pb|npy] [--profile]
 *
 * Inputs not given are filled with random values (seeded, reproducible).
 * Inputs with dynamic dimensions are reshaped to the given tensors first;
 * given inputs whose values decide shapes (vnpu_model_input_decides_shapes:
 * a Reshape's shape, a Slice's starts...) are frozen to those values, so
 * the model compiles with static shapes. Public API only.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <vnpu/vnpu.h>

#include "json.h"
#include "tensor_file.h"
#include "usage.h"

#define TOOL "vnpu-run"

#define MAX_INPUTS 64

struct input_arg {
	const char *name;	/* NULL: by the file's own name, else by position */
	const char *path;
	vnpu_tensor *tensor;
	char *file_name;
	int frozen;		/* a constant of the model: not set at run time */
};

struct options {
	const char *model;
	const char *device;
	const char *out_dir;
	int npy;		/* -f npy: outputs as .npy, else TensorProto */
	const char *const *props;
	const char *precision;	/* --precision: f32, f16, bf16; NULL: the device's */
	int profile;
	int json;
	int json_open;		/* the JSON object was opened on stdout */
	unsigned int seed;
	uint32_t num_shapes;
	struct { const char *name; vnpu_shape shape; } shapes[MAX_INPUTS];
	uint32_t num_inputs;
	struct input_arg inputs[MAX_INPUTS];
	char random[256];	/* the inputs given random values, comma-separated */
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: vnpu-run -m MODEL [-d DEVICE] [-i [NAME=]FILE ...] [-o DIR] [-f pb|npy]\n"
		"                [--precision f32|f16|bf16] [--profile] [--json]\n"
		"Run an ONNX model once and write each output to DIR/<output name>.pb (or .npy).\n"
		"  -m, --model MODEL      the .onnx file\n"
		"  -d, --device DEVICE    CPU, NPU, NPU.<n>, HETERO:NPU,CPU or AUTO (default AUTO)\n"
		"  -i, --input NAME=FILE  a tensor for input NAME (without NAME=: the\n"
		"                         file's tensor name, else the next input): a\n"
		"                         TensorProto (.pb), a NumPy array (.npy) or raw\n"
		"                         data (FILE.raw:TYPE:D,D,..., e.g.\n"
		"                         in.raw:f32:1,3,224,224); inputs not given get\n"
		"                         random values\n"
		"  -o, --output-dir DIR   where to write the outputs, created when absent\n"
		"                         (default .)\n"
		"  -f, --format FORMAT    pb (TensorProto, the default) or npy\n"
		"  -P, --precision P      f32, f16 or bf16: INFERENCE_PRECISION_HINT (the\n"
		"                         weights of Conv, Gemm and MatMul in that type;\n"
		"                         default: the device's)\n"
		"  -p, --profile          print the stage and layer timings\n"
		"  -j, --json             print the outputs (and timings) as JSON\n"
		"  -s, --seed N           seed of the random inputs (default 1)\n"
		"  -S, --shape NAME=D,D.. the shape of random input NAME (default: its\n"
		"                         dynamic dimensions become 1)\n"
		"  -h, --help             this text\n");
}

static int fail(const char *what)
{
	fprintf(stderr, "vnpu-run: %s: %s\n", what, vnpu_last_error());
	return 1;
}

/* NAME=D,D,... into o->shapes. */
static int parse_shape(struct options *o, char *arg)
{
	char *eq = strchr(arg, '='), *p, *end;
	vnpu_shape *s;

	if (!eq || o->num_shapes == MAX_INPUTS) {
		return usage_error(TOOL, "--shape takes NAME=D,D,...");
	}
	*eq = '\0';
	o->shapes[o->num_shapes].name = arg;
	s = &o->shapes[o->num_shapes++].shape;
	s->rank = 0;
	for (p = eq + 1; *p; p = *end ? end + 1 : end) {
		if (s->rank == VNPU_MAX_RANK) {
			return usage_error(TOOL, "--shape: more than %d dimensions", VNPU_MAX_RANK);
		}
		s->dims[s->rank++] = strtoll(p, &end, 10);
		if (end == p || (*end && *end != ',') || s->dims[s->rank - 1] < 0) {
			return usage_error(TOOL, "--shape: bad dimension in \"%s\"", eq + 1);
		}
	}
	return 0;
}

static int parse_seed(struct options *o, const char *arg)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(arg, &end, 0);
	if (end == arg || *end || *arg == '-' || errno || v > UINT_MAX) {
		return usage_error(TOOL, "--seed takes a number from 0 to %u, not \"%s\"",
				   UINT_MAX, arg);
	}
	o->seed = (unsigned int)v;
	return 0;
}

static int parse_args(int argc, char **argv, struct options *o)
{
	static const struct option long_options[] = {
		{ "model", required_argument, NULL, 'm' },
		{ "device", required_argument, NULL, 'd' },
		{ "input", required_argument, NULL, 'i' },
		{ "output-dir", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, 'f' },
		{ "profile", no_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "seed", required_argument, NULL, 's' },
		{ "shape", required_argument, NULL, 'S' },
		{ "precision", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct input_arg *in;
	char *eq;
	int c;

	o->device = "AUTO";
	o->out_dir = ".";
	o->seed = 1;
	while ((c = getopt_long(argc, argv, "m:d:i:o:f:pjs:S:P:h", long_options, NULL)) != -1) {
		switch (c) {
		case 'm': o->model = optarg; break;
		case 'd': o->device = optarg; break;
		case 'o': o->out_dir = optarg; break;
		case 'f':
			if (strcmp(optarg, "pb") && strcmp(optarg, "npy")) {
				return usage_error(TOOL, "--format takes pb or npy, not '%s'", optarg);
			}
			o->npy = !strcmp(optarg, "npy");
			break;
		case 'p': o->profile = 1; break;
		case 'j': o->json = 1; break;
		case 'P':
			if (strcmp(optarg, "f32") && strcmp(optarg, "f16") && strcmp(optarg, "bf16")) {
				return usage_error(TOOL, "--precision takes f32, f16 or bf16, not '%s'", optarg);
			}
			o->precision = optarg;
			break;
		case 's':
			if (parse_seed(o, optarg))
				return 2;
			break;
		case 'h': usage(stdout); exit(0);
		case 'S':
			if (parse_shape(o, optarg))
				return 2;
			break;
		case 'i':
			if (o->num_inputs == MAX_INPUTS) {
				return usage_error(TOOL, "more than %d inputs", MAX_INPUTS);
			}
			in = &o->inputs[o->num_inputs++];
			eq = strchr(optarg, '=');
			if (eq) {
				*eq = '\0';
				in->name = optarg;
				in->path = eq + 1;
			} else {
				in->path = optarg;
			}
			break;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!o->model || optind < argc) {
		return usage_error(TOOL, "%s", o->model ? "unexpected argument" :
				   "a model is needed (-m MODEL)");
	}
	return 0;
}

/* Read every -i file; name the ones given by position after the model's inputs. */
static int read_inputs(struct options *o, vnpu_model *model)
{
	struct input_arg *in;
	char err[256];
	size_t index, n_model, next = 0;
	uint32_t i;

	if (vnpu_model_get_inputs_size(model, &n_model))
		return fail("model inputs");
	for (i = 0; i < o->num_inputs; i++) {
		in = &o->inputs[i];
		if (tensor_file_read(in->path, &in->tensor, &in->file_name, err, sizeof(err))) {
			fprintf(stderr, "vnpu-run: %s\n", err);
			return 1;
		}
		if (!in->name && in->file_name[0] &&
		    !vnpu_model_input_index(model, in->file_name, &index))
			in->name = in->file_name;
		if (!in->name) {
			if (next >= n_model || vnpu_model_input_name(model, next, &in->name)) {
				fprintf(stderr, "vnpu-run: %s: the model has only %zu inputs\n",
					in->path, n_model);
				return 1;
			}
		}
		if (vnpu_model_input_index(model, in->name, &index)) {
			fprintf(stderr, "vnpu-run: the model has no input \"%s\"\n", in->name);
			return 1;
		}
		next = index + 1;
	}
	return 0;
}

/* Every --shape names an input of the model: a usage error otherwise. */
static int check_shape_names(const struct options *o, vnpu_model *model)
{
	size_t index;
	uint32_t i;

	for (i = 0; i < o->num_shapes; i++) {
		if (vnpu_model_input_index(model, o->shapes[i].name, &index)) {
			return usage_error(TOOL, "--shape: the model has no input \"%s\"",
					   o->shapes[i].name);
		}
	}
	return 0;
}

/* Dynamic dimensions of inputs not given become 1 (random data). */
static int reshape_random_inputs(struct options *o, vnpu_model *model)
{
	const char *name;
	size_t n, index;
	vnpu_shape shape;
	uint32_t i, d;
	int given, dynamic;

	if (vnpu_model_get_inputs_size(model, &n))
		return fail("model inputs");
	for (index = 0; index < n; index++) {
		if (vnpu_model_input_name(model, index, &name) ||
		    vnpu_model_input_shape(model, index, &shape))
			return fail("model inputs");
		given = 0;
		for (i = 0; i < o->num_inputs; i++)
			given |= !strcmp(o->inputs[i].name, name);
		dynamic = 0;
		for (d = 0; d < shape.rank; d++) {
			if (shape.dims[d] == VNPU_DIM_DYNAMIC) {
				shape.dims[d] = 1;
				dynamic = 1;
			}
		}
		for (i = 0; i < o->num_shapes && !given; i++) {
			if (!strcmp(o->shapes[i].name, name)) {
				if (vnpu_model_reshape(model, name, &o->shapes[i].shape))
					return fail(name);
				given = 1;
			}
		}
		if (given || !dynamic)
			continue;
		fprintf(stderr, "vnpu-run: input \"%s\" has dynamic dimensions: using 1\n", name);
		if (vnpu_model_reshape(model, name, &shape))
			return fail(name);
	}
	return 0;
}

/*
 * Given inputs whose values decide shapes are frozen to them; the other
 * inputs' dynamic dimensions take the given tensor's.
 */
static int reshape_inputs(struct options *o, vnpu_model *model)
{
	vnpu_shape want, have;
	size_t index;
	uint32_t i, d;
	int dynamic, decides;

	for (i = 0; i < o->num_inputs; i++) {
		if (vnpu_model_input_index(model, o->inputs[i].name, &index) ||
		    vnpu_model_input_decides_shapes(model, index, &decides))
			return fail(o->inputs[i].name);
		if (decides) {
			if (tensor_freeze_input(model, o->inputs[i].name, o->inputs[i].tensor))
				return fail(o->inputs[i].name);
			o->inputs[i].frozen = 1;
			continue;
		}
		if (vnpu_model_input_shape(model, index, &want) ||
		    vnpu_tensor_get_shape(o->inputs[i].tensor, &have))
			return fail(o->inputs[i].name);
		dynamic = 0;
		for (d = 0; d < want.rank; d++)
			dynamic |= want.dims[d] == VNPU_DIM_DYNAMIC;
		if (dynamic && vnpu_model_reshape(model, o->inputs[i].name, &have))
			return fail(o->inputs[i].name);
	}
	return 0;
}

static void fill_random(vnpu_tensor *t, unsigned int *seed)
{
	vnpu_element_type type;
	uint64_t n, i;
	void *data;

	vnpu_tensor_get_element_type(t, &type);
	vnpu_tensor_get_size(t, &n);
	vnpu_tensor_get_data(t, &data);
	for (i = 0; i < n; i++) {
		int r = rand_r(seed);

		switch (type) {
		case VNPU_TYPE_F32: ((float *)data)[i] = (float)r / (float)RAND_MAX * 2 - 1; break;
		case VNPU_TYPE_F64: ((double *)data)[i] = (double)r / RAND_MAX * 2 - 1; break;
		case VNPU_TYPE_I64: ((int64_t *)data)[i] = r % 16; break;
		case VNPU_TYPE_I32: ((int32_t *)data)[i] = r % 16; break;
		case VNPU_TYPE_BOOL: ((uint8_t *)data)[i] = r & 1; break;
		default:
			memset((char *)data + i * vnpu_element_type_size(type), r % 16,
			       vnpu_element_type_size(type));
			break;
		}
	}
}

/* Adds @name to o->random; a list past its room ends in "...". */
static void note_random(struct options *o, const char *name)
{
	size_t len = strlen(o->random), room = sizeof(o->random) - len;

	if (len && !strcmp(o->random + len - 3, "..."))
		return;
	if ((size_t)snprintf(o->random + len, room, "%s%s", len ? ", " : "", name) >= room)
		strcpy(o->random + sizeof(o->random) - 4, "...");
}

static int set_inputs(struct options *o, vnpu_compiled_model *cm, vnpu_infer_request *req)
{
	vnpu_tensor *t;
	vnpu_port port;
	uint32_t n, i, j;
	int given;

	for (i = 0; i < o->num_inputs; i++) {
		if (!o->inputs[i].frozen &&
		    vnpu_infer_request_set_tensor(req, o->inputs[i].name, o->inputs[i].tensor))
			return fail(o->inputs[i].name);
	}
	vnpu_compiled_model_get_num_inputs(cm, &n);
	for (i = 0; i < n; i++) {
		vnpu_compiled_model_get_input(cm, i, &port);
		given = 0;
		for (j = 0; j < o->num_inputs; j++)
			given |= !strcmp(o->inputs[j].name, port.name);
		if (given)
			continue;
		if (vnpu_infer_request_get_input_tensor(req, i, &t))
			return fail(port.name);
		fill_random(t, &o->seed);
		note_random(o, port.name);
		vnpu_tensor_free(t);
	}
	return 0;
}

/* DIR/<name>.<ext>, with characters a file name cannot hold replaced. */
static void output_path(const char *dir, const char *name, const char *ext, char *path,
			size_t size)
{
	size_t len = (size_t)snprintf(path, size, "%s/", dir), i;

	for (i = 0; name[i] && len + 5 < size; i++)
		path[len++] = name[i] == '/' ? '_' : name[i];
	snprintf(path + len, size - len, ".%s", ext);
}

/* mkdir -p @dir. */
static int make_dirs(const char *dir)
{
	char path[4096], *p;

	if (snprintf(path, sizeof(path), "%s", dir) >= (int)sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (p = path + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		if (mkdir(path, 0755) && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(path, 0755) && errno != EEXIST ? -1 : 0;
}

static void print_json_output(uint32_t index, const vnpu_port *port, const char *path)
{
	uint32_t d;

	printf("%s\n    {\"name\": ", index ? "," : "");
	json_string(stdout, port->name);
	printf(", \"type\": \"%s\", \"shape\": [", vnpu_element_type_str(port->type));
	for (d = 0; d < port->shape.rank; d++)
		printf("%s%lld", d ? ", " : "", (long long)port->shape.dims[d]);
	printf("], \"file\": ");
	json_string(stdout, path);
	printf("}");
}

static int write_outputs(struct options *o, vnpu_compiled_model *cm, vnpu_infer_request *req)
{
	char path[4096], err[256];
	vnpu_tensor *t;
	vnpu_port port;
	uint32_t n, i;
	int ret = 0;

	if (make_dirs(o->out_dir)) {
		fprintf(stderr, "vnpu-run: cannot create %s: %s\n", o->out_dir, strerror(errno));
		return 1;
	}
	vnpu_compiled_model_get_num_outputs(cm, &n);
	if (o->json) {
		o->json_open = 1;
		printf("{\n  \"device\": ");
		json_string(stdout, o->device);
		printf(",\n  \"outputs\": [");
	}
	for (i = 0; i < n && !ret; i++) {
		vnpu_compiled_model_get_output(cm, i, &port);
		if (vnpu_infer_request_get_output_tensor(req, i, &t)) {
			ret = fail(port.name);
			break;
		}
		output_path(o->out_dir, port.name, o->npy ? "npy" : "pb", path, sizeof(path));
		if (o->npy ? tensor_npy_write(path, t, err, sizeof(err)) :
		    tensor_file_write(path, port.name, t, err, sizeof(err))) {
			fprintf(stderr, "vnpu-run: %s: %s\n", path, err);
			ret = 1;
		} else if (o->json) {
			print_json_output(i, &port, path);
		} else {
			printf("%s\n", path);
		}
		vnpu_tensor_free(t);
	}
	if (o->json)
		printf("\n  ]");
	return ret;
}

static void print_profile_json(const vnpu_profiling_info *info)
{
	const vnpu_profiling_entry *e;
	uint32_t i;

	printf(",\n  \"profile\": [");
	for (i = 0; i < info->count; i++) {
		e = &info->entries[i];
		printf("%s\n    {\"name\": ", i ? "," : "");
		json_string(stdout, e->name);
		printf(", \"type\": ");
		json_string(stdout, e->node_type);
		printf(", \"device\": ");
		json_string(stdout, e->exec_type);
		printf(", \"executed\": %s, \"time_ns\": %llu}",
		       e->status == VNPU_PROFILING_EXECUTED ? "true" : "false",
		       (unsigned long long)e->real_time_ns);
	}
	printf("\n  ]");
}

static void print_profile(vnpu_infer_request *req, int json)
{
	const vnpu_profiling_entry *e;
	vnpu_profiling_info *info;
	uint32_t i;

	if (vnpu_infer_request_get_profiling_info(req, &info)) {
		fail("profiling");
		return;
	}
	if (json) {
		print_profile_json(info);
		vnpu_profiling_info_free(info);
		return;
	}
	fprintf(stderr, "%-32s %-16s %-8s %12s\n", "name", "type", "device", "time (us)");
	for (i = 0; i < info->count; i++) {
		e = &info->entries[i];
		fprintf(stderr, "%-32s %-16s %-8s %12.1f%s\n", e->name, e->node_type,
			e->exec_type, (double)e->real_time_ns / 1000,
			e->status == VNPU_PROFILING_EXECUTED ? "" : " (not run)");
	}
	vnpu_profiling_info_free(info);
}

static int run(struct options *o, vnpu_core *core)
{
	const char *props[] = { VNPU_PROP_ENABLE_PROFILING, o->profile ? "YES" : "NO",
				VNPU_PROP_INFERENCE_PRECISION_HINT, o->precision, NULL };
	vnpu_compiled_model *cm = NULL;
	vnpu_infer_request *req = NULL;
	vnpu_model *model = NULL;
	int ret;

	if (!o->precision)
		props[2] = NULL;
	if (vnpu_core_read_model(core, o->model, &model))
		return fail(o->model);
	ret = check_shape_names(o, model);
	if (!ret)
		ret = read_inputs(o, model);
	if (!ret)
		ret = reshape_inputs(o, model);
	if (!ret)
		ret = reshape_random_inputs(o, model);
	if (!ret && vnpu_core_compile_model(core, model, o->device, props, &cm))
		ret = fail("compile");
	if (!ret && vnpu_compiled_model_create_infer_request(cm, &req))
		ret = fail("infer request");
	if (!ret)
		ret = set_inputs(o, cm, req);
	if (!ret) {
		vnpu_status st = vnpu_infer_request_infer(req);

		/* A fault on random values is most likely an index out of range. */
		if (st == VNPU_DEVICE_FAULT && o->random[0]) {
			fprintf(stderr,
				"vnpu-run: infer: %s; inputs given random values: %s (give real ones with -i NAME=FILE)\n",
				vnpu_last_error(), o->random);
			ret = 1;
		} else if (st) {
			ret = fail("infer");
		}
	}
	if (!ret)
		ret = write_outputs(o, cm, req);
	if (!ret && o->profile)
		print_profile(req, o->json);
	if (o->json_open)
		printf("\n}\n");
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
	vnpu_model_free(model);
	return ret;
}

int main(int argc, char **argv)
{
	struct options o = { 0 };
	vnpu_core *core;
	uint32_t i;
	int ret;

	ret = parse_args(argc, argv, &o);
	if (ret)
		return ret;
	if (vnpu_core_create(&core))
		return fail("core");
	ret = run(&o, core);
	for (i = 0; i < o.num_inputs; i++) {
		vnpu_tensor_free(o.inputs[i].tensor);
		free(o.inputs[i].file_name);
	}
	vnpu_core_free(core);
	return ret;
}

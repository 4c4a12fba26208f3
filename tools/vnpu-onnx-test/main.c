// SPDX-License-Identifier: MIT
/*
 * vnpu-onnx-test: run ONNX backend test cases (a folder with model.onnx and
 * test_data_set_N/{input,output}_M.pb) on a device and classify each:
 *
 *   pass         every output within the tolerances
 *   fail         values, shape or type differ (the worst element is shown)
 *   error        a call failed, or the case crashed or hung (message shown)
 *   unsupported  an op or type the runtime does not take (reason shown)
 *
 * Each case runs in a child process, so a crash or a hang is a result, not
 * the end of the run. Only the public API of libvnpu is used.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <regex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <vnpu/vnpu.h>

#include "tensor_file.h"

#define DEFAULT_DIR "/usr/share/libonnx-testdata/data/node"
#define DETAIL_MAX 400

enum outcome { PASS, FAIL, ERROR, UNSUPPORTED, NUM_OUTCOMES };
static const char *const outcome_name[] = { "pass", "fail", "error", "unsupported" };

struct result {
	char name[256];
	char op[64];
	enum outcome outcome;
	int device_only;	/* every layer ran on the device asked for */
	int specialized;	/* shape-deciding inputs were made constants */
	double seconds;
	char detail[DETAIL_MAX];
};

struct options {
	const char *device;
	const char *json;
	const char *floor;
	const char *precision;		/* --precision; NULL: the device's hint */
	double rtol, atol;
	unsigned int timeout;
	int have_filter;
	regex_t filter;
	int verbose;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: vnpu-onnx-test [OPTIONS] [DIR...]\n"
		"\n"
		"Run ONNX backend test cases (DIR holds model.onnx and test_data_set_*/,\n"
		"or such cases as subfolders; default %s).\n"
		"\n"
		"  -d, --device DEV     device: CPU, NPU.0, HETERO:NPU,CPU, AUTO (default CPU)\n"
		"      --filter REGEX   only cases whose name matches (extended regex)\n"
		"      --json FILE      write every case's result as JSON\n"
		"      --floor FILE     fail (exit 1) when the pass count, or the count of\n"
		"                       cases run entirely on the device, is below the\n"
		"                       floor the file gives for DEV\n"
		"      --rtol X         relative tolerance (default 1e-3)\n"
		"      --atol X         absolute tolerance (default 1e-7)\n"
		"      --precision P    compile with INFERENCE_PRECISION_HINT P (f32, f16,\n"
		"                       bf16; default: the device's)\n"
		"      --timeout SEC    per case (default 120)\n"
		"  -v, --verbose        list every case, not only those that do not pass\n"
		"  -h, --help           this text\n"
		"\n"
		"Exit status: 0 all at or above the floor, 1 below it or a run error,\n"
		"2 bad arguments, 77 an NPU device asked for but none present.\n",
		DEFAULT_DIR);
}

static void set_detail(struct result *r, enum outcome o, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_detail(struct result *r, enum outcome o, const char *fmt, ...)
{
	va_list ap;

	r->outcome = o;
	va_start(ap, fmt);
	vsnprintf(r->detail, sizeof(r->detail), fmt, ap);
	va_end(ap);
}

/* What a failed call means for the case. */
static enum outcome status_outcome(vnpu_status st)
{
	return st == VNPU_UNSUPPORTED || st == VNPU_NOT_IMPLEMENTED ? UNSUPPORTED : ERROR;
}

static double half_to_double(uint16_t h)
{
	int e = (h >> 10) & 0x1f, m = h & 0x3ff;
	double v;

	if (e == 0)
		v = ldexp(m, -24);
	else if (e == 31)
		v = m ? NAN : INFINITY;
	else
		v = ldexp(m + 1024, e - 25);
	return (h & 0x8000) ? -v : v;
}

static double element(const void *data, vnpu_element_type type, uint64_t i)
{
	switch (type) {
	case VNPU_TYPE_F32: return ((const float *)data)[i];
	case VNPU_TYPE_F64: return ((const double *)data)[i];
	case VNPU_TYPE_F16: return half_to_double(((const uint16_t *)data)[i]);
	case VNPU_TYPE_BF16: {
		uint32_t bits = (uint32_t)((const uint16_t *)data)[i] << 16;
		float f;

		memcpy(&f, &bits, 4);
		return f;
	}
	case VNPU_TYPE_U8: case VNPU_TYPE_BOOL: return ((const uint8_t *)data)[i];
	case VNPU_TYPE_I8: return ((const int8_t *)data)[i];
	case VNPU_TYPE_U16: return ((const uint16_t *)data)[i];
	case VNPU_TYPE_I16: return ((const int16_t *)data)[i];
	case VNPU_TYPE_I32: return ((const int32_t *)data)[i];
	case VNPU_TYPE_U32: return ((const uint32_t *)data)[i];
	case VNPU_TYPE_I64: return (double)((const int64_t *)data)[i];
	case VNPU_TYPE_U64: return (double)((const uint64_t *)data)[i];
	default: return NAN;
	}
}

static int is_float(vnpu_element_type t)
{
	return t == VNPU_TYPE_F32 || t == VNPU_TYPE_F64 || t == VNPU_TYPE_F16 ||
	       t == VNPU_TYPE_BF16;
}

static void shape_str(const vnpu_shape *s, char *buf, size_t size)
{
	size_t n = 0;
	uint32_t i;

	n += snprintf(buf + n, size - n, "[");
	for (i = 0; i < s->rank && n < size; i++)
		n += snprintf(buf + n, size - n, "%s%lld", i ? "," : "", (long long)s->dims[i]);
	if (n < size)
		snprintf(buf + n, size - n, "]");
}

/*
 * Compare one output with its expectation like numpy's assert_allclose
 * (NaN equals NaN; integers and bools exactly). Returns 0 when it matches,
 * else fills the result.
 */
/* String tensors of one shape: every element equal. */
static int compare_strings(struct result *r, const char *what, const vnpu_tensor *got,
			   const vnpu_tensor *want)
{
	uint64_t n = 0, bad = 0, first = 0;
	const char *g = "", *e = "";

	vnpu_tensor_get_size(got, &n);
	for (uint64_t i = n; i-- > 0;) {
		const char *gi = "", *ei = "";

		vnpu_tensor_get_string(got, i, &gi);
		vnpu_tensor_get_string(want, i, &ei);
		if (!strcmp(gi, ei))
			continue;
		bad++;
		first = i;
		g = gi;
		e = ei;
	}
	if (!bad)
		return 0;
	set_detail(r, FAIL, "%s: %llu of %llu strings differ; first at [%llu]: \"%.40s\", "
		   "expected \"%.40s\"", what, (unsigned long long)bad, (unsigned long long)n,
		   (unsigned long long)first, g, e);
	return -1;
}

static int compare(const struct options *o, struct result *r, const char *what,
		   const vnpu_tensor *got, const vnpu_tensor *want)
{
	vnpu_element_type gt, wt;
	vnpu_shape gs, ws;
	double worst = -1, wa = 0, we = 0;
	uint64_t n, i, worst_i = 0, bad = 0;
	void *gd, *wd;
	char a[96], b[96];

	vnpu_tensor_get_element_type(got, &gt);
	vnpu_tensor_get_element_type(want, &wt);
	vnpu_tensor_get_shape(got, &gs);
	vnpu_tensor_get_shape(want, &ws);
	if (gt != wt) {
		set_detail(r, FAIL, "%s: type %s, expected %s", what,
			   vnpu_element_type_str(gt), vnpu_element_type_str(wt));
		return -1;
	}
	if (gs.rank != ws.rank || memcmp(gs.dims, ws.dims, gs.rank * sizeof(gs.dims[0]))) {
		shape_str(&gs, a, sizeof(a));
		shape_str(&ws, b, sizeof(b));
		set_detail(r, FAIL, "%s: shape %s, expected %s", what, a, b);
		return -1;
	}
	if (gt == VNPU_TYPE_STRING)
		return compare_strings(r, what, got, want);
	vnpu_tensor_get_size(got, &n);
	vnpu_tensor_get_data(got, &gd);
	vnpu_tensor_get_data(want, &wd);

	for (i = 0; i < n; i++) {
		double g = element(gd, gt, i), e = element(wd, wt, i), excess;

		if (!is_float(gt)) {
			if (gt == VNPU_TYPE_I64 || gt == VNPU_TYPE_U64) {
				if (((const int64_t *)gd)[i] == ((const int64_t *)wd)[i])
					continue;
			} else if (g == e) {
				continue;
			}
			excess = fabs(g - e) + 1;
		} else if (isnan(e) || isnan(g)) {
			if (isnan(e) && isnan(g))
				continue;
			excess = INFINITY;
		} else if (isinf(e) || isinf(g)) {
			if (g == e)
				continue;
			excess = INFINITY;
		} else {
			excess = fabs(g - e) - (o->atol + o->rtol * fabs(e));
			if (excess <= 0)
				continue;
		}
		bad++;
		if (excess > worst) {
			worst = excess;
			worst_i = i;
			wa = g;
			we = e;
		}
	}
	if (!bad)
		return 0;
	set_detail(r, FAIL, "%s: %llu of %llu elements differ; worst at [%llu]: %.9g, expected %.9g",
		   what, (unsigned long long)bad, (unsigned long long)n,
		   (unsigned long long)worst_i, wa, we);
	return -1;
}

static int count_files(const char *dir, const char *prefix)
{
	char path[4096];
	int n = 0;

	for (;;) {
		snprintf(path, sizeof(path), "%s/%s_%d.pb", dir, prefix, n);
		if (access(path, R_OK))
			return n;
		n++;
	}
}

static int is_dir(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The sorted subfolders of @dir starting with @prefix (NULL-terminated). */
static char **list_dirs(const char *dir, const char *prefix, size_t *count)
{
	size_t n = 0, cap = 16;
	char **v = malloc(cap * sizeof(*v));
	struct dirent *de;
	DIR *d = opendir(dir);

	*count = 0;
	if (!d || !v) {
		if (d)
			closedir(d);
		free(v);
		return NULL;
	}
	while ((de = readdir(d))) {
		char path[4096];

		if (de->d_name[0] == '.' || strncmp(de->d_name, prefix, strlen(prefix)))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (!is_dir(path))
			continue;
		if (n + 1 >= cap) {
			char **nv = realloc(v, (cap *= 2) * sizeof(*v));

			if (!nv)
				break;
			v = nv;
		}
		v[n++] = strdup(path);
	}
	closedir(d);
	qsort(v, n, sizeof(*v), name_cmp);
	v[n] = NULL;
	*count = n;
	return v;
}

static void free_list(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/* The op type a case tests: its node's, or for a graph the one its name names. */
static void case_op(vnpu_model *model, const char *case_name, char *op, size_t size)
{
	const char *type = NULL, *name, *key = case_name;
	char flat[256];
	size_t n = 0, i, j = 0;

	if (vnpu_model_get_ops_size(model, &n) || !n) {
		snprintf(op, size, "(none)");
		return;
	}
	if (n == 1) {
		vnpu_model_op(model, 0, &type, &name);
		snprintf(op, size, "%s", type);
		return;
	}
	if (!strncmp(key, "test_", 5))
		key += 5;
	for (i = 0; key[i] && j + 1 < sizeof(flat); i++)
		if (key[i] != '_')
			flat[j++] = key[i];
	flat[j] = '\0';
	for (i = 0; i < n; i++) {
		vnpu_model_op(model, i, &type, &name);
		if (!strncasecmp(flat, type, strlen(type))) {
			snprintf(op, size, "%s", type);
			return;
		}
	}
	/* A function expanded into primitives: name it after the test. */
	for (i = 0; key[i] && key[i] != '_' && i + 1 < size; i++)
		op[i] = key[i];
	op[i] = '\0';
	if (strstr(case_name, "_expanded"))
		snprintf(op + i, size - i, "%s", " (expanded)");
}

/*
 * ONNX's test generator stores bfloat16 data as uint16 TensorProtos: when
 * the model's port is bf16, @t (u16) becomes a bf16 tensor with the same
 * bits. 0, or -1 when out of memory.
 */
static int retag_bf16(vnpu_tensor **t, vnpu_element_type port)
{
	vnpu_element_type type;
	vnpu_tensor *bf = NULL;
	void *src, *dst;
	uint64_t bytes;
	vnpu_shape sh;

	vnpu_tensor_get_element_type(*t, &type);
	if (type != VNPU_TYPE_U16 || port != VNPU_TYPE_BF16)
		return 0;
	vnpu_tensor_get_shape(*t, &sh);
	if (vnpu_tensor_create(VNPU_TYPE_BF16, &sh, &bf))
		return -1;
	vnpu_tensor_get_data(*t, &src);
	vnpu_tensor_get_data(bf, &dst);
	vnpu_tensor_get_byte_size(*t, &bytes);
	if (bytes)
		memcpy(dst, src, bytes);
	vnpu_tensor_free(*t);
	*t = bf;
	return 0;
}

/* Read a value file of a port of @kind and @type (bf16 retagged). */
static int load_value(const char *path, vnpu_port_kind kind, vnpu_element_type type,
		      struct tensor_value *v, struct result *r)
{
	char err[512];
	vnpu_status st = tensor_value_read(path, kind, v, err, sizeof(err));

	if (st) {
		set_detail(r, status_outcome(st), "%s", err);
		return -1;
	}
	for (size_t k = 0; k < v->count; k++) {
		if (retag_bf16(&v->tensors[k], type)) {
			set_detail(r, ERROR, "%s: out of memory", path);
			return -1;
		}
	}
	return 0;
}

/* Read the input files of one data set. */
static int load_inputs(const char *set, const vnpu_model *model, struct result *r,
		       struct tensor_value *inputs, int n_in)
{
	char path[4096];
	int i;

	for (i = 0; i < n_in; i++) {
		vnpu_element_type port = VNPU_TYPE_UNDEFINED;
		vnpu_port_kind kind = VNPU_PORT_TENSOR;

		snprintf(path, sizeof(path), "%s/input_%d.pb", set, i);
		vnpu_model_input_type(model, (size_t)i, &port);
		vnpu_model_input_kind(model, (size_t)i, &kind);
		if (load_value(path, kind, port, &inputs[i], r))
			return -1;
	}
	return 0;
}

/*
 * A static-shape compiler cannot compile a node whose output shape depends
 * on the values of a graph input (Reshape's shape, Resize's scales, TopK's
 * k, ...). For those cases the runner specializes the model to the data
 * set, as a user of such a compiler would: level 1 turns the inputs after
 * the first that have rank 0 or 1 into constants, level 2 every input after
 * the first, level 3 every input (Range's start decides its length). Such
 * passes are reported as specialized. Sequences and optionals without a
 * value decide the program's structure: they are always frozen.
 */
#define MAX_SPECIALIZE 3

static int shape_needs_values(const char *msg)
{
	return strstr(msg, "not known at compile time") || strstr(msg, "computed at run time") ||
	       strstr(msg, "not constant");
}

static int frozen_at(int level, int i, const struct tensor_value *v)
{
	vnpu_shape sh;

	if (level >= 3 || v->kind != VNPU_PORT_TENSOR)
		return 1;
	if (!level || i == 0)
		return 0;
	vnpu_tensor_get_shape(v->tensors[0], &sh);
	return level >= 2 || sh.rank <= 1;
}

/* Input @name of @model fixed to @v (or, not frozen, reshaped to it). */
static vnpu_status fit_input(vnpu_model *model, const char *name, const struct tensor_value *v,
			     int frozen)
{
	vnpu_shape ts;

	if (v->kind == VNPU_PORT_NONE)
		return vnpu_model_freeze_none(model, name);
	if (v->kind == VNPU_PORT_SEQUENCE)
		return vnpu_model_freeze_sequence(model, name, v->tensors, v->count);
	if (frozen)
		return tensor_freeze_input(model, name, v->tensors[0]);
	vnpu_tensor_get_shape(v->tensors[0], &ts);
	return vnpu_model_reshape(model, name, &ts);
}

/*
 * Read the model and fit it to one data set: dynamic dims set from the
 * inputs, inputs frozen as @level says. 0, or -1 with @r filled.
 */
static int fit_model(vnpu_core *core, const char *dir, struct tensor_value *inputs, char **names,
		     int n_in, int level, vnpu_model **out, struct result *r)
{
	vnpu_model *model = NULL;
	char path[4096];
	vnpu_status st;
	int i;

	snprintf(path, sizeof(path), "%s/model.onnx", dir);
	st = vnpu_core_read_model(core, path, &model);
	if (st) {
		set_detail(r, status_outcome(st), "read: %s", vnpu_last_error());
		return -1;
	}
	for (i = 0; i < n_in; i++) {
		st = fit_input(model, names[i], &inputs[i], frozen_at(level, i, &inputs[i]));
		if (st) {
			set_detail(r, status_outcome(st), "input %s: %s", names[i], vnpu_last_error());
			vnpu_model_free(model);
			return -1;
		}
	}
	*out = model;
	return 0;
}

static int device_only(vnpu_compiled_model *cm, const char *device)
{
	vnpu_property_value *v = NULL;
	int only = 1;

	if (vnpu_compiled_model_get_property(cm, VNPU_PROP_EXECUTION_DEVICES, &v))
		return 0;
	for (uint32_t i = 0; i < v->count; i++) {
		const char *d = v->items[i];

		if (!strncmp(device, "HETERO:", 7) || !strcmp(device, "AUTO"))
			only &= !strncmp(d, "NPU", 3);
		else
			only &= !strncmp(d, device, strlen(d));
	}
	if (!v->count)
		only = 0;
	vnpu_property_value_free(v);
	return only;
}

/* Compile for one data set, specializing when the shapes need input values. */
static int prepare(const struct options *o, vnpu_core *core, const char *dir,
		   struct tensor_value *inputs, char **names, int n_in, int *level,
		   vnpu_compiled_model **cm, vnpu_infer_request **req, struct result *r)
{
	const char *props[] = { VNPU_PROP_INFERENCE_PRECISION_HINT, o->precision, NULL };
	vnpu_model *model = NULL;
	vnpu_status st;

	for (;;) {
		if (fit_model(core, dir, inputs, names, n_in, *level, &model, r))
			return -1;
		st = vnpu_core_compile_model(core, model, o->device,
					     o->precision ? props : NULL, cm);
		vnpu_model_free(model);
		if (!st)
			break;
		if (*level == 0 || !shape_needs_values(vnpu_last_error()))
			set_detail(r, status_outcome(st), "compile: %s", vnpu_last_error());
		if (*level >= MAX_SPECIALIZE || !shape_needs_values(vnpu_last_error()))
			return -1;
		++*level;
	}
	set_detail(r, PASS, "%s", "");
	r->device_only = device_only(*cm, o->device);
	r->specialized = *level > 0;
	for (int i = 0; i < n_in; i++)
		r->specialized |= frozen_at(0, i, &inputs[i]);	/* a sequence or none */
	st = vnpu_compiled_model_create_infer_request(*cm, req);
	if (st) {
		set_detail(r, status_outcome(st), "request: %s", vnpu_last_error());
		return -1;
	}
	return 0;
}

/*
 * Compare output @name (@what in messages) of the request with @want: the
 * kinds (tensor, sequence, none), then tensor by tensor.
 */
static void compare_value(const struct options *o, vnpu_infer_request *req, const char *name,
			  const char *what, struct tensor_value *want, struct result *r)
{
	static const char *const kinds[] = { "a tensor", "a sequence", "an optional",
					     "an optional sequence", "none" };
	vnpu_port_kind kind = VNPU_PORT_TENSOR;
	size_t count = 1;
	vnpu_status st = vnpu_infer_request_get_kind(req, name, &kind);

	if (!st && kind == VNPU_PORT_SEQUENCE)
		st = vnpu_infer_request_get_sequence_size(req, name, &count);
	if (st) {
		set_detail(r, ERROR, "%s: %s", what, vnpu_last_error());
		return;
	}
	if (kind != want->kind) {
		set_detail(r, FAIL, "%s: %s, expected %s", what, kinds[kind], kinds[want->kind]);
		return;
	}
	if (kind == VNPU_PORT_SEQUENCE && count != want->count) {
		set_detail(r, FAIL, "%s: a sequence of %zu, expected %zu", what, count, want->count);
		return;
	}
	for (size_t k = 0; kind != VNPU_PORT_NONE && k < count && r->outcome == PASS; k++) {
		vnpu_tensor *got = NULL;
		vnpu_element_type type;
		char elem[96];

		st = kind == VNPU_PORT_SEQUENCE ?
		     vnpu_infer_request_get_sequence_tensor(req, name, k, &got) :
		     vnpu_infer_request_get_tensor(req, name, &got);
		if (!st) {
			vnpu_tensor_get_element_type(got, &type);
			if (retag_bf16(&want->tensors[k], type))
				st = VNPU_OUT_OF_MEMORY;
		}
		if (st) {
			set_detail(r, ERROR, "%s: %s", what, vnpu_last_error());
		} else if (kind == VNPU_PORT_SEQUENCE) {
			snprintf(elem, sizeof(elem), "%s element %zu", what, k);
			compare(o, r, elem, got, want->tensors[k]);
		} else {
			compare(o, r, what, got, want->tensors[k]);
		}
		vnpu_tensor_free(got);
	}
}

/* Run one data set on a prepared request and compare every output. */
static void run_set(const struct options *o, const vnpu_model *model, vnpu_infer_request *req,
		    const char *set, size_t set_index, struct tensor_value *inputs, char **names,
		    int n_in, int level, struct result *r)
{
	int n_out = count_files(set, "output"), i;
	char path[4096], what[64];
	vnpu_status st;

	for (i = 0; i < n_in; i++) {
		if (frozen_at(level, i, &inputs[i]))
			continue;
		st = vnpu_infer_request_set_tensor(req, names[i], inputs[i].tensors[0]);
		if (st) {
			set_detail(r, status_outcome(st), "input %s: %s", names[i], vnpu_last_error());
			return;
		}
	}
	st = vnpu_infer_request_infer(req);
	if (st) {
		set_detail(r, status_outcome(st), "infer: %s", vnpu_last_error());
		return;
	}
	for (i = 0; i < n_out && r->outcome == PASS; i++) {
		struct tensor_value want = { 0 };
		vnpu_element_type type = VNPU_TYPE_UNDEFINED;
		vnpu_port_kind kind = VNPU_PORT_TENSOR;
		const char *name = NULL;

		snprintf(path, sizeof(path), "%s/output_%d.pb", set, i);
		if (vnpu_model_output_name(model, (size_t)i, &name)) {
			set_detail(r, ERROR, "%s: the model has no output %d", path, i);
			return;
		}
		vnpu_model_output_kind(model, (size_t)i, &kind);
		vnpu_model_output_type(model, (size_t)i, &type);
		if (load_value(path, kind, type, &want, r)) {
			tensor_value_fini(&want);
			return;
		}
		snprintf(what, sizeof(what), "set %zu output %d", set_index, i);
		compare_value(o, req, name, what, &want, r);
		tensor_value_fini(&want);
	}
}

/* Run every data set of one case; fills @r. Runs in the child. */
static void run_case(const struct options *o, const char *dir, struct result *r)
{
	vnpu_compiled_model *cm = NULL;
	vnpu_infer_request *req = NULL;
	vnpu_model *model = NULL;
	vnpu_core *core = NULL;
	char path[4096], *names[64] = { 0 };
	char **sets = NULL;
	size_t n_sets = 0, n_model_in = 0, s, i;
	int level = 0;
	vnpu_status st;

	set_detail(r, PASS, "%s", "");
	st = vnpu_core_create(&core);
	if (st) {
		set_detail(r, ERROR, "core: %s", vnpu_last_error());
		return;
	}
	snprintf(path, sizeof(path), "%s/model.onnx", dir);
	st = vnpu_core_read_model(core, path, &model);
	if (st) {
		set_detail(r, status_outcome(st), "read: %s", vnpu_last_error());
		goto out;
	}
	case_op(model, r->name, r->op, sizeof(r->op));
	vnpu_model_get_inputs_size(model, &n_model_in);
	if (n_model_in > 64) {
		set_detail(r, UNSUPPORTED, "%zu inputs: the runner takes 64", n_model_in);
		goto out;
	}
	for (i = 0; i < n_model_in; i++) {
		const char *name = "";

		vnpu_model_input_name(model, i, &name);
		names[i] = strdup(name);
	}

	sets = list_dirs(dir, "test_data_set_", &n_sets);
	if (!n_sets)
		set_detail(r, ERROR, "no test_data_set_* folder");
	for (s = 0; s < n_sets && r->outcome == PASS; s++) {
		int n_in = count_files(sets[s], "input"), k;
		struct tensor_value inputs[64] = { 0 };

		if ((size_t)n_in != n_model_in) {
			set_detail(r, ERROR, "%d input files for %zu model inputs", n_in, n_model_in);
			break;
		}
		if (!load_inputs(sets[s], model, r, inputs, n_in)) {
			/* A specialized model holds one set's values: compile per set. */
			if (!cm || level) {
				vnpu_infer_request_free(req);
				vnpu_compiled_model_free(cm);
				req = NULL;
				cm = NULL;
				if (prepare(o, core, dir, inputs, names, n_in, &level, &cm, &req, r))
					goto next;
			}
			run_set(o, model, req, sets[s], s, inputs, names, n_in, level, r);
		}
next:
		for (k = 0; k < n_in; k++)
			tensor_value_fini(&inputs[k]);
	}
out:
	for (i = 0; i < 64; i++)
		free(names[i]);
	free_list(sets);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
	vnpu_model_free(model);
	vnpu_core_free(core);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Run one case in a child process, with a deadline. */
static void run_isolated(const struct options *o, const char *dir, struct result *r)
{
	int fds[2], status = 0;
	double t0 = now(), deadline = t0 + o->timeout;
	struct result child;
	ssize_t got = 0;
	pid_t pid;

	if (pipe(fds)) {
		set_detail(r, ERROR, "pipe: %s", strerror(errno));
		return;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		set_detail(r, ERROR, "fork: %s", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return;
	}
	if (!pid) {
		close(fds[0]);
		child = *r;
		run_case(o, dir, &child);
		if (write(fds[1], &child, sizeof(child)) != sizeof(child))
			_exit(2);
		_exit(0);
	}
	close(fds[1]);

	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);

		if (w == pid)
			break;
		if (now() > deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			set_detail(r, ERROR, "hung: killed after %u s", o->timeout);
			close(fds[0]);
			r->seconds = now() - t0;
			return;
		}
		usleep(2000);
	}
	got = read(fds[0], &child, sizeof(child));
	close(fds[0]);
	r->seconds = now() - t0;
	if (got == (ssize_t)sizeof(child)) {
		*r = child;
		r->seconds = now() - t0;
	} else if (WIFSIGNALED(status)) {
		set_detail(r, ERROR, "crashed: %s", strsignal(WTERMSIG(status)));
	} else {
		set_detail(r, ERROR, "the case's process exited %d without a result",
			   WEXITSTATUS(status));
	}
}

/* Collect the cases below each DIR. */
static char **collect_cases(int argc, char **argv, size_t *count)
{
	size_t n = 0, cap = 1024;
	char **all = malloc(cap * sizeof(*all));
	int i;

	if (!all)
		return NULL;
	for (i = 0; i < argc; i++) {
		char model[4096], **sub;
		size_t k, ns;

		snprintf(model, sizeof(model), "%s/model.onnx", argv[i]);
		if (!access(model, R_OK)) {
			sub = calloc(2, sizeof(*sub));
			if (sub)
				sub[0] = strdup(argv[i]);
			ns = sub ? 1 : 0;
		} else {
			sub = list_dirs(argv[i], "", &ns);
			if (!sub) {
				fprintf(stderr, "vnpu-onnx-test: %s: %s\n", argv[i], strerror(errno));
				continue;
			}
		}
		for (k = 0; k < ns; k++) {
			snprintf(model, sizeof(model), "%s/model.onnx", sub[k]);
			if (access(model, R_OK))
				continue;
			if (n + 1 >= cap) {
				char **nv = realloc(all, (cap *= 2) * sizeof(*all));

				if (!nv)
					break;
				all = nv;
			}
			all[n++] = strdup(sub[k]);
		}
		free_list(sub);
	}
	all[n] = NULL;
	*count = n;
	return all;
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static int write_json(const struct options *o, const struct result *res, size_t n,
		      const size_t *totals, size_t device_only)
{
	FILE *f = fopen(o->json, "w");
	size_t i;

	if (!f) {
		fprintf(stderr, "vnpu-onnx-test: %s: %s\n", o->json, strerror(errno));
		return -1;
	}
	fprintf(f, "{\n  \"device\": ");
	json_str(f, o->device);
	fprintf(f, ",\n  \"precision\": ");
	json_str(f, o->precision ? o->precision : "");
	fprintf(f, ",\n  \"rtol\": %g, \"atol\": %g", o->rtol, o->atol);
	fprintf(f, ",\n  \"totals\": {\"cases\": %zu, \"pass\": %zu, \"fail\": %zu, "
		"\"error\": %zu, \"unsupported\": %zu, \"device_only\": %zu},\n  \"cases\": [\n",
		n, totals[PASS], totals[FAIL], totals[ERROR], totals[UNSUPPORTED], device_only);
	for (i = 0; i < n; i++) {
		fprintf(f, "    {\"name\": ");
		json_str(f, res[i].name);
		fprintf(f, ", \"op\": ");
		json_str(f, res[i].op);
		fprintf(f, ", \"result\": \"%s\", \"device_only\": %s, \"specialized\": %s, "
			"\"seconds\": %.4f, \"detail\": ",
			outcome_name[res[i].outcome], res[i].device_only ? "true" : "false",
			res[i].specialized ? "true" : "false", res[i].seconds);
		json_str(f, res[i].detail);
		fprintf(f, "}%s\n", i + 1 < n ? "," : "");
	}
	fprintf(f, "  ]\n}\n");
	return fclose(f) ? -1 : 0;
}

struct op_row {
	char op[64];
	size_t counts[NUM_OUTCOMES];
};

static int row_cmp(const void *a, const void *b)
{
	return strcmp(((const struct op_row *)a)->op, ((const struct op_row *)b)->op);
}

static void print_table(const struct result *res, size_t n)
{
	struct op_row *rows = calloc(n ? n : 1, sizeof(*rows));
	size_t nrows = 0, i, j;

	if (!rows)
		return;
	for (i = 0; i < n; i++) {
		const char *op = res[i].op[0] ? res[i].op : "(unread)";

		for (j = 0; j < nrows && strcmp(rows[j].op, op); j++)
			;
		if (j == nrows)
			snprintf(rows[nrows++].op, sizeof(rows[0].op), "%s", op);
		rows[j].counts[res[i].outcome]++;
	}
	qsort(rows, nrows, sizeof(*rows), row_cmp);
	printf("%-32s %5s %5s %5s %5s %5s\n", "op type", "cases", "pass", "fail", "error", "unsup");
	for (j = 0; j < nrows; j++) {
		size_t *c = rows[j].counts;

		printf("%-32s %5zu %5zu %5zu %5zu %5zu\n", rows[j].op,
		       c[PASS] + c[FAIL] + c[ERROR] + c[UNSUPPORTED],
		       c[PASS], c[FAIL], c[ERROR], c[UNSUPPORTED]);
	}
	free(rows);
}

/*
 * The floor file: lines "DEVICE MIN_PASS [MIN_DEVICE_ONLY]", '#' comments.
 * Returns -1 when the file cannot be read, 0 when no line is for @device.
 */
static int read_floor(const char *path, const char *device, long *min_pass,
		      long *min_only)
{
	char line[512], dev[256];
	FILE *f = fopen(path, "r");
	int found = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		long p, d = 0;
		int k;

		if (line[0] == '#')
			continue;
		k = sscanf(line, "%255s %ld %ld", dev, &p, &d);
		if (k >= 2 && !strcmp(dev, device)) {
			*min_pass = p;
			*min_only = k == 3 ? d : 0;
			found = 1;
		}
	}
	fclose(f);
	return found;
}

static int parse_args(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "json", required_argument, NULL, 'j' },
		{ "filter", required_argument, NULL, 'f' },
		{ "floor", required_argument, NULL, 'F' },
		{ "rtol", required_argument, NULL, 'r' },
		{ "atol", required_argument, NULL, 'a' },
		{ "timeout", required_argument, NULL, 't' },
		{ "precision", required_argument, NULL, 'P' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "d:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			o->device = optarg;
			break;
		case 'j':
			o->json = optarg;
			break;
		case 'F':
			o->floor = optarg;
			break;
		case 'f':
			if (regcomp(&o->filter, optarg, REG_EXTENDED | REG_NOSUB)) {
				fprintf(stderr, "vnpu-onnx-test: bad --filter regex '%s'\n", optarg);
				return 2;
			}
			o->have_filter = 1;
			break;
		case 'r':
		case 'a':
			errno = 0;
			*(c == 'r' ? &o->rtol : &o->atol) = strtod(optarg, &end);
			if (errno || *end || end == optarg) {
				fprintf(stderr, "vnpu-onnx-test: --%s takes a number\n",
					c == 'r' ? "rtol" : "atol");
				return 2;
			}
			break;
		case 't':
			o->timeout = (unsigned int)strtoul(optarg, &end, 10);
			if (*end || !o->timeout) {
				fprintf(stderr, "vnpu-onnx-test: --timeout takes whole seconds > 0\n");
				return 2;
			}
			break;
		case 'P':
			if (strcmp(optarg, "f32") && strcmp(optarg, "f16") &&
			    strcmp(optarg, "bf16")) {
				fprintf(stderr, "vnpu-onnx-test: --precision takes f32, f16 or bf16\n");
				return 2;
			}
			o->precision = optarg;
			break;
		case 'v':
			o->verbose = 1;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return 2;
		}
	}
	return 0;
}

/*
 * A run that asks for the NPU on a machine without one (vnpu.ko not loaded,
 * e.g. the host side of `make check`) is a skip (77), not a failure.
 */
static int npu_missing(const char *device)
{
	vnpu_core *core = NULL;
	char **devs = NULL;
	uint32_t n = 0, i;
	int missing = 1;

	if (!strstr(device, "NPU"))
		return 0;
	if (vnpu_core_create(&core))
		return 0;	/* the first case reports the error */
	if (!vnpu_core_get_available_devices(core, &devs, &n))
		for (i = 0; i < n; i++)
			missing &= strncmp(devs[i], "NPU", 3) != 0;
	else
		missing = 0;
	vnpu_free(devs);
	vnpu_core_free(core);
	return missing;
}

int main(int argc, char **argv)
{
	struct options o = { .device = "CPU", .rtol = 1e-3, .atol = 1e-7, .timeout = 120 };
	char *default_dirs[] = { (char *)DEFAULT_DIR };
	size_t n_cases = 0, n = 0, i, totals[NUM_OUTCOMES] = { 0 }, device_only = 0;
	size_t specialized = 0;
	int tty = isatty(STDOUT_FILENO), rc;
	struct result *res;
	char **cases;

	rc = parse_args(argc, argv, &o);
	if (rc)
		return rc;
	if (npu_missing(o.device)) {
		fprintf(stderr, "vnpu-onnx-test: %s: no NPU device (is vnpu.ko loaded?), skipped\n",
			o.device);
		return 77;
	}
	if (optind < argc)
		cases = collect_cases(argc - optind, argv + optind, &n_cases);
	else
		cases = collect_cases(1, default_dirs, &n_cases);
	if (!cases || !n_cases) {
		fprintf(stderr, "vnpu-onnx-test: no test cases found\n");
		return 1;
	}
	res = calloc(n_cases, sizeof(*res));
	if (!res) {
		fprintf(stderr, "vnpu-onnx-test: out of memory\n");
		return 1;
	}

	for (i = 0; i < n_cases; i++) {
		const char *base = strrchr(cases[i], '/') ? strrchr(cases[i], '/') + 1 : cases[i];
		struct result *r = &res[n];

		if (o.have_filter && regexec(&o.filter, base, 0, NULL, 0))
			continue;
		memset(r, 0, sizeof(*r));
		snprintf(r->name, sizeof(r->name), "%s", base);
		run_isolated(&o, cases[i], r);
		totals[r->outcome]++;
		device_only += r->outcome == PASS && r->device_only;
		specialized += r->outcome == PASS && r->specialized;
		n++;
		if (tty)
			printf("\r\033[K[%zu/%zu] pass %zu fail %zu error %zu unsupported %zu  %s",
			       i + 1, n_cases, totals[PASS], totals[FAIL], totals[ERROR],
			       totals[UNSUPPORTED], r->name);
		fflush(stdout);
	}
	if (tty)
		printf("\r\033[K");

	print_table(res, n);
	printf("\n");
	for (i = 0; i < n; i++)
		if (o.verbose || res[i].outcome != PASS)
			printf("%-11s %s: %s\n", outcome_name[res[i].outcome], res[i].name,
			       res[i].specialized && res[i].outcome == PASS ?
			       "(specialized)" : res[i].detail);
	printf("\n%s: %zu cases: %zu pass (%.1f%%), %zu fail, %zu error, %zu unsupported\n",
	       o.device, n, totals[PASS], n ? 100.0 * totals[PASS] / n : 0.0,
	       totals[FAIL], totals[ERROR], totals[UNSUPPORTED]);
	printf("%s: %zu of the passes specialized shape-deciding inputs to constants\n",
	       o.device, specialized);
	if (strcmp(o.device, "CPU"))
		printf("%s: %zu cases passed running entirely on the NPU (%.1f%%)\n", o.device,
		       device_only, n ? 100.0 * device_only / n : 0.0);

	rc = 0;
	if (o.json && write_json(&o, res, n, totals, device_only))
		rc = 1;
	if (o.floor) {
		long min_pass = 0, min_only = 0;
		int found = read_floor(o.floor, o.device, &min_pass, &min_only);

		if (found < 0) {
			fprintf(stderr, "vnpu-onnx-test: %s: %s\n", o.floor, strerror(errno));
			rc = 1;
		} else if (!found) {
			fprintf(stderr, "vnpu-onnx-test: %s has no floor for %s\n", o.floor, o.device);
			rc = 1;
		} else {
			printf("floor for %s: %ld pass, %ld entirely on the device\n", o.device,
			       min_pass, min_only);
			if ((long)totals[PASS] < min_pass || (long)device_only < min_only) {
				printf("BELOW THE FLOOR: %zu pass, %zu on the device\n",
				       totals[PASS], device_only);
				rc = 1;
			}
		}
	}
	for (i = 0; i < n_cases; i++)
		free(cases[i]);
	free(cases);
	free(res);
	if (o.have_filter)
		regfree(&o.filter);
	return rc;
}

// SPDX-License-Identifier: MIT
/*
 * Samples and calibration.
 *
 * Samples come from a folder (every .npy or .pb file is one sample of a
 * model of one input; every subfolder one sample holding input_N.pb or
 * input_N.npy for input N, as the ONNX test data sets do) or are random
 * values in [-1, 1] from a seed. Each tensor must have its input's element
 * type and shape; dynamic dimensions take the first sample's and every
 * sample must agree.
 *
 * Calibration runs the f32 model on the CPU device through the public API,
 * with every tensor to quantize made an extra graph output, and keeps for
 * each its smallest and largest finite value and, for the percentile
 * method, a histogram of |x| over [0, top] whose top doubles (merging bins
 * in pairs) when a larger value comes.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "quantize.h"
#include "tensor_file.h"

#define MAX_SAMPLES 65536
/* All samples are held at once: their bytes together, at most. */
#define MAX_SAMPLE_BYTES (1ull << 32)

void samples_fini(struct samples *s)
{
	for (size_t i = 0; s->t && i < s->count * s->num_inputs; i++)
		vnpu_tensor_free(s->t[i]);
	free(s->t);
	memset(s, 0, sizeof(*s));
}

static bool dynamic(const vnpu_shape *s)
{
	for (uint32_t d = 0; d < s->rank; d++)
		if (s->dims[d] == VNPU_DIM_DYNAMIC)
			return true;
	return false;
}

static int too_big(const char *what)
{
	fprintf(stderr, TOOL ": %s: the samples would hold more than %llu GiB\n", what,
		MAX_SAMPLE_BYTES >> 30);
	return 1;
}

/* @count f32 tensors of @shape in bytes, or past MAX_SAMPLE_BYTES. */
static uint64_t f32_bytes(const vnpu_shape *shape, uint64_t count)
{
	uint64_t bytes = 4 * count;

	for (uint32_t d = 0; d < shape->rank; d++)
		if (__builtin_mul_overflow(bytes, (uint64_t)shape->dims[d], &bytes) ||
		    bytes > MAX_SAMPLE_BYTES)
			return MAX_SAMPLE_BYTES + 1;
	return bytes;
}

static void fill_random(vnpu_tensor *t, unsigned int *seed)
{
	uint64_t n = 0;
	float *x = NULL;

	vnpu_tensor_get_size(t, &n);
	vnpu_tensor_get_data(t, (void **)&x);
	for (uint64_t i = 0; i < n; i++)
		x[i] = (float)rand_r(seed) / (float)RAND_MAX * 2 - 1;
}

int samples_random(vnpu_model *m, long n, unsigned int seed, struct samples *s)
{
	vnpu_element_type type;
	const char *name;
	vnpu_shape shape;

	memset(s, 0, sizeof(*s));
	if (vnpu_model_get_inputs_size(m, &s->num_inputs))
		return run_fail("inputs");
	s->t = calloc((size_t)n * s->num_inputs + 1, sizeof(*s->t));
	if (!s->t)
		return qm_oom();
	s->count = (size_t)n;
	for (size_t i = 0; i < s->num_inputs; i++) {
		if (vnpu_model_input_name(m, i, &name) || vnpu_model_input_type(m, i, &type) ||
		    vnpu_model_input_shape(m, i, &shape))
			return run_fail("inputs");
		if (type != VNPU_TYPE_F32) {
			fprintf(stderr, TOOL ": --random: input \"%s\" is %s, not f32: give "
				"samples with -c\n", name, vnpu_element_type_str(type));
			return 1;
		}
		if (dynamic(&shape)) {
			fprintf(stderr, TOOL ": --random: input \"%s\" has dynamic dimensions: "
				"give samples with -c\n", name);
			return 1;
		}
		s->bytes += f32_bytes(&shape, s->count);
		if (s->bytes > MAX_SAMPLE_BYTES)
			return too_big("--random");
		for (size_t k = 0; k < s->count; k++) {
			if (vnpu_tensor_create(type, &shape, &s->t[k * s->num_inputs + i]))
				return run_fail(name);
			fill_random(s->t[k * s->num_inputs + i], &seed);
		}
	}
	return 0;
}

static bool has_ext(const char *name, const char *ext)
{
	size_t n = strlen(name), e = strlen(ext);

	return n > e && !strcmp(name + n - e, ext);
}

static void print_shape(char *buf, size_t size, const vnpu_shape *s)
{
	size_t len = 0;

	buf[0] = '\0';
	for (uint32_t d = 0; d < s->rank && len < size; d++)
		len += (size_t)snprintf(buf + len, size - len, d ? ",%lld" : "%lld",
					(long long)s->dims[d]);
}

/* @t fits input @index of @m, and the first sample @first when it has one. */
static int check_sample(vnpu_model *m, size_t index, vnpu_tensor *t, vnpu_tensor *first,
			const char *path)
{
	vnpu_element_type want, have;
	vnpu_shape ws, hs, fs;
	char a[256], b[256];
	const char *name;
	bool fits;

	if (vnpu_model_input_name(m, index, &name) || vnpu_model_input_type(m, index, &want) ||
	    vnpu_model_input_shape(m, index, &ws))
		return run_fail("inputs");
	vnpu_tensor_get_element_type(t, &have);
	vnpu_tensor_get_shape(t, &hs);
	if (have != want) {
		fprintf(stderr, TOOL ": %s: a %s tensor; input \"%s\" is %s\n", path,
			vnpu_element_type_str(have), name, vnpu_element_type_str(want));
		return 1;
	}
	if (first)
		vnpu_tensor_get_shape(first, &fs);
	fits = hs.rank == ws.rank;
	for (uint32_t d = 0; d < hs.rank && fits; d++) {
		int64_t w = ws.dims[d] == VNPU_DIM_DYNAMIC && first ? fs.dims[d] : ws.dims[d];

		fits = w == VNPU_DIM_DYNAMIC || w == hs.dims[d];
	}
	if (!fits) {
		print_shape(a, sizeof(a), &hs);
		print_shape(b, sizeof(b), &ws);
		fprintf(stderr, TOOL ": %s: shape [%s]; input \"%s\" is [%s]%s\n", path, a, name,
			b, first && dynamic(&ws) ? " (its dynamic dimensions as the first sample's)" :
			"");
		return 1;
	}
	return 0;
}

/* Add the tensor at @path as input @index of the sample being read. */
static int read_one(vnpu_model *m, struct samples *s, size_t index, const char *path)
{
	vnpu_tensor **slot = &s->t[s->count * s->num_inputs + index];
	uint64_t bytes = 0;
	struct stat sb;
	char err[512];

	if (!stat(path, &sb) && s->bytes + (uint64_t)sb.st_size > MAX_SAMPLE_BYTES)
		return too_big(path);
	if (tensor_file_read(path, slot, NULL, err, sizeof(err))) {
		fprintf(stderr, TOOL ": %s\n", err);
		return 1;
	}
	vnpu_tensor_get_byte_size(*slot, &bytes);
	s->bytes += bytes;
	if (s->bytes > MAX_SAMPLE_BYTES)
		return too_big(path);
	return check_sample(m, index, *slot, s->count ? s->t[index] : NULL, path);
}

/* A subfolder: input_N.pb or input_N.npy for each input N. */
static int read_folder(vnpu_model *m, struct samples *s, const char *dir)
{
	char path[PATH_MAX + 64];
	struct stat sb;

	for (size_t i = 0; i < s->num_inputs; i++) {
		snprintf(path, sizeof(path), "%s/input_%zu.pb", dir, i);
		if (stat(path, &sb))
			snprintf(path, sizeof(path), "%s/input_%zu.npy", dir, i);
		if (read_one(m, s, i, path))
			return 1;
	}
	return 0;
}

int samples_read_dir(vnpu_model *m, const char *dir, struct samples *s)
{
	struct dirent **ents = NULL;
	char path[PATH_MAX];
	struct stat sb;
	int n, ret = 0;

	memset(s, 0, sizeof(*s));
	if (vnpu_model_get_inputs_size(m, &s->num_inputs))
		return run_fail("inputs");
	if (stat(dir, &sb)) {
		fprintf(stderr, TOOL ": %s: %s\n", dir, strerror(errno));
		return 1;
	}
	if (!S_ISDIR(sb.st_mode)) {
		fprintf(stderr, TOOL ": %s: not a folder\n", dir);
		return 1;
	}
	n = scandir(dir, &ents, NULL, alphasort);
	if (n < 0) {
		fprintf(stderr, TOOL ": %s: %s\n", dir, strerror(errno));
		return 1;
	}
	s->t = calloc(((size_t)n + 1) * s->num_inputs + 1, sizeof(*s->t));
	if (!s->t)
		ret = qm_oom();
	for (int i = 0; i < n && !ret; i++) {
		const char *e = ents[i]->d_name;

		if (e[0] == '.')
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, e) >= (int)sizeof(path) ||
		    stat(path, &sb))
			continue;
		if (s->count == MAX_SAMPLES) {
			fprintf(stderr, TOOL ": %s: more than %d samples\n", dir, MAX_SAMPLES);
			ret = 1;
		} else if (S_ISDIR(sb.st_mode)) {
			ret = read_folder(m, s, path);
			s->count += !ret;
		} else if (S_ISREG(sb.st_mode) && (has_ext(e, ".npy") || has_ext(e, ".pb"))) {
			if (s->num_inputs != 1) {
				fprintf(stderr, TOOL ": %s: the model has %zu inputs: give each "
					"sample as a folder of input_N.pb or .npy files\n", path,
					s->num_inputs);
				ret = 1;
			} else {
				ret = read_one(m, s, 0, path);
				s->count += !ret;
			}
		}
	}
	for (int i = 0; i < n; i++)
		free(ents[i]);
	free(ents);
	if (!ret && !s->count) {
		fprintf(stderr, TOOL ": %s: no samples (.npy or .pb files, or folders of "
			"input_N files)\n", dir);
		ret = 1;
	}
	if (ret) {
		s->count++;	/* the tensors of the sample that failed */
		samples_fini(s);
	}
	return ret;
}

int samples_apply_shapes(vnpu_model *m, const struct samples *s)
{
	const char *name;
	vnpu_shape want, have;

	for (size_t i = 0; i < s->num_inputs; i++) {
		if (vnpu_model_input_name(m, i, &name) || vnpu_model_input_shape(m, i, &want))
			return run_fail("inputs");
		if (!dynamic(&want))
			continue;
		vnpu_tensor_get_shape(s->t[i], &have);
		if (vnpu_model_reshape(m, name, &have))
			return run_fail(name);
	}
	return 0;
}

/* ---- statistics ---- */

static void hist_add(struct tensor_stats *st, const float *x, uint64_t n, double amax)
{
	if (!st->top && amax > 0)
		st->top = amax;
	while (amax > st->top) {
		for (int b = 0; b < HIST_BINS / 2; b++)
			st->hist[b] = st->hist[2 * b] + st->hist[2 * b + 1];
		memset(st->hist + HIST_BINS / 2, 0, HIST_BINS / 2 * sizeof(*st->hist));
		st->top *= 2;
	}
	for (uint64_t i = 0; i < n; i++) {
		double a = fabs((double)x[i]);
		uint64_t b = st->top > 0 ? (uint64_t)(a / st->top * HIST_BINS) : 0;

		if (isfinite(a))
			st->hist[b < HIST_BINS ? b : HIST_BINS - 1]++;
	}
}

static int stats_add(struct tensor_stats *st, const struct options *o, const float *x,
		     uint64_t n)
{
	double lo = INFINITY, hi = -INFINITY;
	uint64_t count = 0;

	for (uint64_t i = 0; i < n; i++) {
		if (!isfinite(x[i]))
			continue;
		lo = fmin(lo, x[i]);
		hi = fmax(hi, x[i]);
		count++;
	}
	if (!count)
		return 0;
	if (!st->count) {
		st->lo = lo;
		st->hi = hi;
	}
	st->lo = fmin(st->lo, lo);
	st->hi = fmax(st->hi, hi);
	st->count += count;
	if (o->method != CALIB_PERCENTILE)
		return 0;
	if (!st->hist && !(st->hist = calloc(HIST_BINS, sizeof(*st->hist))))
		return qm_oom();
	hist_add(st, x, n, fmax(fabs(lo), fabs(hi)));
	return 0;
}

void stats_range(const struct tensor_stats *st, const struct options *o, double *lo,
		 double *hi)
{
	uint64_t want, sum = 0;
	double thr;
	int b;

	*lo = st->lo;
	*hi = st->hi;
	if (o->method != CALIB_PERCENTILE || !st->hist || !(st->top > 0))
		return;
	want = (uint64_t)ceil((double)st->count * o->percentile / 100);
	for (b = 0; b < HIST_BINS - 1; b++) {
		sum += st->hist[b];
		if (sum >= want)
			break;
	}
	thr = (b + 1) * st->top / HIST_BINS;
	*lo = fmax(*lo, -thr);
	*hi = fmin(*hi, thr);
}

/* ---- the calibration run ---- */

static int add_stats(struct qmodel *qm, const struct options *o, int32_t v, vnpu_tensor *t)
{
	vnpu_element_type type;
	uint64_t n = 0;
	void *data;

	vnpu_tensor_get_element_type(t, &type);
	if (type != VNPU_TYPE_F32)
		return 0;
	vnpu_tensor_get_size(t, &n);
	vnpu_tensor_get_data(t, &data);
	qm->t[v].calibrated = true;
	return stats_add(&qm->t[v].stats, o, data, n);
}

/* What to calibrate: the tensors to quantize that take no other's parameters. */
static bool to_calibrate(const struct qtensor *t)
{
	return t->quant && t->share < 0;
}

/* The model with the tensors to calibrate as extra outputs, packed. */
static int calib_model(struct qmodel *qm, uint8_t **out, size_t *size)
{
	Onnx__GraphProto *g = qm->g;
	Onnx__ValueInfoProto **outputs, *vi;
	size_t n = 0, n_output = g->n_output;
	Onnx__ValueInfoProto **saved = g->output;
	int ret;

	for (uint32_t v = 0; v < qm->num_t; v++)
		n += to_calibrate(&qm->t[v]) && !qm->t[v].graph_input && !qm->t[v].graph_output;
	outputs = malloc((n_output + n + 1) * sizeof(*outputs));
	vi = calloc(n + 1, sizeof(*vi));
	if (!outputs || !vi) {
		free(outputs);
		free(vi);
		return qm_oom();
	}
	memcpy(outputs, g->output, n_output * sizeof(*outputs));
	n = 0;
	for (uint32_t v = 0; v < qm->num_t; v++) {
		if (!to_calibrate(&qm->t[v]) || qm->t[v].graph_input || qm->t[v].graph_output)
			continue;
		onnx__value_info_proto__init(&vi[n]);
		vi[n].name = (char *)qm->t[v].name;
		outputs[n_output + n] = &vi[n];
		n++;
	}
	g->output = outputs;
	g->n_output = n_output + n;
	ret = qm_pack(qm, out, size);
	g->output = saved;
	g->n_output = n_output;
	free(outputs);
	free(vi);
	return ret;
}

/* One sample's inputs set on @req. */
int set_sample(vnpu_infer_request *req, const struct samples *s, size_t k)
{
	for (size_t i = 0; i < s->num_inputs; i++)
		if (vnpu_infer_request_set_input_tensor(req, (uint32_t)i, s->t[k * s->num_inputs + i]))
			return run_fail("set input");
	return 0;
}

static int calib_run(struct qmodel *qm, vnpu_compiled_model *cm, vnpu_infer_request *req,
		     const struct samples *s, const struct options *o)
{
	uint32_t outputs = 0;
	vnpu_tensor *t;
	vnpu_port port;
	int ret = 0;

	vnpu_compiled_model_get_num_outputs(cm, &outputs);
	for (size_t k = 0; k < s->count && !ret; k++) {
		if (isatty(STDERR_FILENO))
			fprintf(stderr, "\rcalibrating: sample %zu of %zu", k + 1, s->count);
		if (set_sample(req, s, k))
			return 1;
		if (vnpu_infer_request_infer(req))
			return run_fail("calibration run");
		for (uint32_t j = 0; j < outputs && !ret; j++) {
			int32_t v;

			vnpu_compiled_model_get_output(cm, j, &port);
			v = qm_find(qm, port.name);
			if (v < 0 || !to_calibrate(&qm->t[v]))
				continue;
			if (vnpu_infer_request_get_output_tensor(req, j, &t))
				return run_fail(port.name);
			ret = add_stats(qm, o, v, t);
			vnpu_tensor_free(t);
		}
		for (size_t i = 0; i < s->num_inputs && !ret; i++) {
			const char *name;
			int32_t v;

			vnpu_compiled_model_get_input(cm, (uint32_t)i, &port);
			name = port.name;
			v = qm_find(qm, name);
			if (v >= 0 && to_calibrate(&qm->t[v]))
				ret = add_stats(qm, o, v, s->t[k * s->num_inputs + i]);
		}
	}
	if (isatty(STDERR_FILENO))
		fprintf(stderr, "\n");
	return ret;
}

int calibrate(vnpu_core *core, struct qmodel *qm, const struct samples *s,
	      const struct options *o)
{
	vnpu_compiled_model *cm = NULL;
	vnpu_infer_request *req = NULL;
	vnpu_model *m = NULL;
	uint8_t *buf = NULL;
	size_t size = 0;
	int ret;

	ret = calib_model(qm, &buf, &size);
	if (!ret && vnpu_core_read_model_from_memory(core, buf, size, &m))
		ret = run_fail("calibration model");
	free(buf);
	if (!ret)
		ret = samples_apply_shapes(m, s);
	if (!ret && vnpu_core_compile_model(core, m, "CPU", NULL, &cm))
		ret = run_fail("compile the calibration model");
	if (!ret && vnpu_compiled_model_create_infer_request(cm, &req))
		ret = run_fail("infer request");
	if (!ret)
		ret = calib_run(qm, cm, req, s, o);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
	vnpu_model_free(m);
	return ret;
}

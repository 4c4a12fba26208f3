// SPDX-License-Identifier: MIT
/*
 * How far the QDQ model is from its f32 original: both run on the CPU
 * device on the same samples, and each f32 output is compared:
 *   cosine     of the two outputs as vectors (lowest and mean over samples)
 *   top-1      whether the largest value along the last axis is at the
 *              same place, for each row of it (outputs of 2 or more there)
 *   error      max |qdq - f32| / max |f32| (largest over samples)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json.h"
#include "quantize.h"

struct agreement {
	const char *name;
	bool f32;
	size_t samples;
	double cos_min, cos_sum, err_max;
	uint64_t top1_same, top1_rows;
};

int run_fail(const char *what)
{
	fprintf(stderr, TOOL ": %s: %s\n", what, vnpu_last_error());
	return 1;
}

static double cosine(const float *a, const float *b, uint64_t n)
{
	double ab = 0, aa = 0, bb = 0;

	for (uint64_t i = 0; i < n; i++) {
		ab += (double)a[i] * b[i];
		aa += (double)a[i] * a[i];
		bb += (double)b[i] * b[i];
	}
	if (!aa && !bb)
		return 1;
	return aa && bb ? ab / sqrt(aa * bb) : 0;
}

static uint64_t argmax(const float *x, uint64_t n)
{
	uint64_t best = 0;

	for (uint64_t i = 1; i < n; i++)
		if (x[i] > x[best])
			best = i;
	return best;
}

static void compare(struct agreement *a, vnpu_tensor *ft, vnpu_tensor *qt)
{
	vnpu_element_type ftype, qtype;
	const float *f = NULL, *q = NULL;
	uint64_t n = 0, qn = 0, last;
	double amax = 0, dmax = 0, c;
	vnpu_shape shape;

	vnpu_tensor_get_element_type(ft, &ftype);
	vnpu_tensor_get_element_type(qt, &qtype);
	vnpu_tensor_get_size(ft, &n);
	vnpu_tensor_get_size(qt, &qn);
	a->f32 = ftype == VNPU_TYPE_F32 && qtype == VNPU_TYPE_F32 && n == qn && n;
	if (!a->f32)
		return;
	vnpu_tensor_get_data(ft, (void **)&f);
	vnpu_tensor_get_data(qt, (void **)&q);
	vnpu_tensor_get_shape(ft, &shape);
	c = cosine(f, q, n);
	a->cos_min = a->samples ? fmin(a->cos_min, c) : c;
	a->cos_sum += c;
	for (uint64_t i = 0; i < n; i++) {
		amax = fmax(amax, fabs(f[i]));
		dmax = fmax(dmax, fabs((double)f[i] - q[i]));
	}
	a->err_max = fmax(a->err_max, amax > 0 ? dmax / amax : dmax);
	last = shape.rank ? (uint64_t)shape.dims[shape.rank - 1] : 1;
	for (uint64_t r = 0; last > 1 && r < n / last; r++) {
		a->top1_same += argmax(f + r * last, last) == argmax(q + r * last, last);
		a->top1_rows++;
	}
	a->samples++;
}

static void print_table(const struct agreement *a, uint32_t n, const struct samples *s)
{
	printf("accuracy against f32 on %zu %s (CPU device):\n", s->count, s->source);
	printf("%-24s %12s %12s %20s %12s\n", "output", "cosine min", "cosine mean",
	       "top-1 agrees", "max error");
	for (uint32_t i = 0; i < n; i++) {
		char top1[64] = "-";

		if (!a[i].f32) {
			printf("%-24s %12s %12s %20s %12s\n", a[i].name, "-", "-", "-", "-");
			continue;
		}
		if (a[i].top1_rows)
			snprintf(top1, sizeof(top1), "%llu of %llu",
				 (unsigned long long)a[i].top1_same,
				 (unsigned long long)a[i].top1_rows);
		printf("%-24s %12.6f %12.6f %20s %12.4g\n", a[i].name, a[i].cos_min,
		       a[i].cos_sum / (double)a[i].samples, top1, a[i].err_max);
	}
}

static void print_json(const struct agreement *a, uint32_t n, const struct samples *s)
{
	printf(",\n  \"samples\": %zu,\n  \"samples_from\": ", s->count);
	json_string(stdout, s->source);
	printf(",\n  \"outputs\": [");
	for (uint32_t i = 0; i < n; i++) {
		printf("%s\n    {\"name\": ", i ? "," : "");
		json_string(stdout, a[i].name);
		if (a[i].f32)
			printf(", \"cosine_min\": %.9g, \"cosine_mean\": %.9g, \"max_error\": %.9g, "
			       "\"top1_same\": %llu, \"top1_rows\": %llu", a[i].cos_min,
			       a[i].cos_sum / (double)a[i].samples, a[i].err_max,
			       (unsigned long long)a[i].top1_same,
			       (unsigned long long)a[i].top1_rows);
		printf("}");
	}
	printf("\n  ]");
}

static int compile(vnpu_core *core, vnpu_model *m, const struct samples *s,
		   vnpu_compiled_model **cm, vnpu_infer_request **req, const char *what)
{
	if (samples_apply_shapes(m, s))
		return 1;
	if (vnpu_core_compile_model(core, m, "CPU", NULL, cm))
		return run_fail(what);
	if (vnpu_compiled_model_create_infer_request(*cm, req))
		return run_fail(what);
	return 0;
}

static int compare_runs(vnpu_compiled_model *cm, vnpu_infer_request *freq,
			vnpu_infer_request *qreq, const struct samples *s,
			const struct options *o)
{
	struct agreement *a;
	vnpu_tensor *ft, *qt;
	uint32_t n = 0;
	vnpu_port port;
	int ret = 0;

	vnpu_compiled_model_get_num_outputs(cm, &n);
	a = calloc(n ? n : 1, sizeof(*a));
	if (!a)
		return qm_oom();
	for (uint32_t j = 0; j < n; j++) {
		vnpu_compiled_model_get_output(cm, j, &port);
		a[j].name = port.name;
	}
	for (size_t k = 0; k < s->count && !ret; k++) {
		if (isatty(STDERR_FILENO))
			fprintf(stderr, "\rcomparing: sample %zu of %zu", k + 1, s->count);
		ret = set_sample(freq, s, k) || set_sample(qreq, s, k);
		if (!ret && (vnpu_infer_request_infer(freq) || vnpu_infer_request_infer(qreq)))
			ret = run_fail("accuracy run");
		for (uint32_t j = 0; j < n && !ret; j++) {
			ft = qt = NULL;
			if (vnpu_infer_request_get_output_tensor(freq, j, &ft) ||
			    vnpu_infer_request_get_output_tensor(qreq, j, &qt))
				ret = run_fail(a[j].name);
			else
				compare(&a[j], ft, qt);
			vnpu_tensor_free(ft);
			vnpu_tensor_free(qt);
		}
	}
	if (isatty(STDERR_FILENO))
		fprintf(stderr, "\n");
	if (!ret && o->json)
		print_json(a, n, s);
	else if (!ret)
		print_table(a, n, s);
	free(a);
	return ret;
}

int evaluate(vnpu_core *core, vnpu_model *f32, const uint8_t *qdq, size_t qdq_size,
	     const struct samples *s, const struct options *o)
{
	vnpu_compiled_model *fcm = NULL, *qcm = NULL;
	vnpu_infer_request *freq = NULL, *qreq = NULL;
	vnpu_model *qm = NULL;
	int ret;

	if (vnpu_core_read_model_from_memory(core, qdq, qdq_size, &qm))
		return run_fail("the quantized model");
	ret = compile(core, f32, s, &fcm, &freq, "compile the f32 model") ||
	      compile(core, qm, s, &qcm, &qreq, "compile the quantized model");
	if (!ret)
		ret = compare_runs(fcm, freq, qreq, s, o);
	vnpu_infer_request_free(freq);
	vnpu_infer_request_free(qreq);
	vnpu_compiled_model_free(fcm);
	vnpu_compiled_model_free(qcm);
	vnpu_model_free(qm);
	return ret;
}

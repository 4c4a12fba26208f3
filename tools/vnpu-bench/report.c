// SPDX-License-Identifier: MIT
/*
 * vnpu-bench: the report as a table, as JSON (--json) and the runs as a
 * Chrome trace (--trace; Perfetto and chrome://tracing open it).
 */
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "json.h"

struct latency_stats {
	double median, avg, min, max, p90, p99;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The @q quantile of sorted @v[@n], interpolated between neighbours. */
static double quantile(const double *v, uint64_t n, double q)
{
	double pos = q * (double)(n - 1);
	uint64_t i = (uint64_t)pos;

	if (i + 1 >= n)
		return v[n - 1];
	return v[i] + (v[i + 1] - v[i]) * (pos - (double)i);
}

static struct latency_stats latency_stats(const struct bench_result *r)
{
	struct latency_stats s = { 0 };
	double *v, sum = 0;
	uint64_t i;

	if (!r->count)
		return s;
	v = malloc(r->count * sizeof(*v));
	if (!v)
		return s;
	memcpy(v, r->latency_ms, r->count * sizeof(*v));
	qsort(v, r->count, sizeof(*v), cmp_double);
	for (i = 0; i < r->count; i++)
		sum += v[i];
	s.avg = sum / (double)r->count;
	s.min = v[0];
	s.max = v[r->count - 1];
	s.median = quantile(v, r->count, 0.5);
	s.p90 = quantile(v, r->count, 0.9);
	s.p99 = quantile(v, r->count, 0.99);
	free(v);
	return s;
}

static double duration_ms(const struct bench_result *r)
{
	return (double)(r->end_ns - r->start_ns) / 1e6;
}

static double fps(const struct bench_run *b)
{
	double ms = duration_ms(&b->res);
	int64_t batch = b->o->batch ? b->o->batch : 1;

	return ms > 0 ? (double)b->res.count * (double)batch * 1000.0 / ms : 0;
}

static const char *api_name(const struct bench_opts *o)
{
	return o->async ? "async" : "sync";
}

static void device_list(const struct bench_run *b, char *buf, size_t size)
{
	size_t len = 0;
	uint32_t i;

	buf[0] = '\0';
	for (i = 0; i < b->num_models && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? "," : "",
					b->devices[i]);
}

static const char *io_name(const struct bench_opts *o)
{
	return o->io == BENCH_IO_HOST ? "host" : o->io == BENCH_IO_REMOTE ? "remote" : "device";
}

void bench_print(const struct bench_run *b, FILE *f)
{
	struct latency_stats s = latency_stats(&b->res);
	char devices[256];

	device_list(b, devices, sizeof(devices));
	fprintf(f, "Model                %s\n", b->o->model);
	fprintf(f, "Device               %s%s%s\n", devices, b->device_name[0] ? ": " : "",
		b->device_name);
	fprintf(f, "API                  %s, %u infer request%s, hint %s\n", api_name(b->o),
		b->nireq, b->nireq == 1 ? "" : "s", b->o->hint ? b->o->hint : "none");
	fprintf(f, "Precision            %s\n", b->precision);
	fprintf(f, "Read                 %10.2f ms\n", b->res.read_ms);
	fprintf(f, "Compile              %10.2f ms\n", b->res.compile_ms);
	fprintf(f, "First inference      %10.2f ms\n", b->res.first_ms);
	fprintf(f, "Count                %10llu inferences\n", (unsigned long long)b->res.count);
	fprintf(f, "Duration             %10.2f ms\n", duration_ms(&b->res));
	fprintf(f, "Latency\n");
	fprintf(f, "  median             %10.3f ms\n", s.median);
	fprintf(f, "  average            %10.3f ms\n", s.avg);
	fprintf(f, "  min                %10.3f ms\n", s.min);
	fprintf(f, "  max                %10.3f ms\n", s.max);
	fprintf(f, "  p90                %10.3f ms\n", s.p90);
	fprintf(f, "  p99                %10.3f ms\n", s.p99);
	fprintf(f, "Throughput           %10.2f FPS\n", fps(b));
	if (b->res.copied_bytes >= 0 && b->res.count)
		fprintf(f, "Copied by the driver %10.0f bytes per inference (-io %s)\n",
			(double)b->res.copied_bytes / (double)b->res.count, io_name(b->o));
}

/* ---- per-layer counters ---- */

static const char *status_text(vnpu_profiling_status st)
{
	return st == VNPU_PROFILING_EXECUTED ? "EXECUTED" : "NOT_RUN";
}

int bench_print_layers(const struct bench_run *b, FILE *f)
{
	vnpu_profiling_info *info;
	double total = 0;
	uint32_t i;

	if (vnpu_infer_request_get_profiling_info(b->reqs[0], &info) != VNPU_OK) {
		fprintf(stderr, "vnpu-bench: per-layer counters: %s\n", vnpu_last_error());
		return 1;
	}
	fprintf(f, "\nPer-layer counters of the last inference of request 0\n");
	fprintf(f, "%-40s %-18s %-8s %-9s %12s\n", "name", "type", "on", "status", "time ms");
	for (i = 0; i < info->count; i++) {
		const vnpu_profiling_entry *e = &info->entries[i];

		fprintf(f, "%-40.40s %-18.18s %-8.8s %-9s %12.3f\n", e->name, e->node_type,
			e->exec_type, status_text(e->status), (double)e->real_time_ns / 1e6);
		if (strcmp(e->node_type, "Stage"))
			total += (double)e->real_time_ns / 1e6;
	}
	fprintf(f, "%-40s %-18s %-8s %-9s %12.3f\n", "total of the layers", "", "", "", total);
	vnpu_profiling_info_free(info);
	return 0;
}

/* ---- JSON ---- */

static void json_layers(const struct bench_run *b, FILE *f)
{
	vnpu_profiling_info *info;
	uint32_t i;

	if (!b->o->per_layer || vnpu_infer_request_get_profiling_info(b->reqs[0], &info))
		return;
	fprintf(f, ",\n  \"layers\": [");
	for (i = 0; i < info->count; i++) {
		const vnpu_profiling_entry *e = &info->entries[i];

		fprintf(f, "%s\n    {\"name\": ", i ? "," : "");
		json_string(f, e->name);
		fprintf(f, ", \"type\": ");
		json_string(f, e->node_type);
		fprintf(f, ", \"on\": ");
		json_string(f, e->exec_type);
		fprintf(f, ", \"status\": \"%s\", \"time_ms\": %.6f}", status_text(e->status),
			(double)e->real_time_ns / 1e6);
	}
	fprintf(f, "\n  ]");
	vnpu_profiling_info_free(info);
}

int bench_write_json(const struct bench_run *b, const char *path)
{
	struct latency_stats s = latency_stats(&b->res);
	FILE *f = fopen(path, "w");
	char devices[256];

	if (!f) {
		fprintf(stderr, "vnpu-bench: %s: %m\n", path);
		return 1;
	}
	device_list(b, devices, sizeof(devices));
	fprintf(f, "{\n  \"model\": ");
	json_string(f, b->o->model);
	fprintf(f, ",\n  \"device\": ");
	json_string(f, devices);
	fprintf(f, ",\n  \"api\": \"%s\",\n  \"hint\": ", api_name(b->o));
	if (b->o->hint)
		json_string(f, b->o->hint);
	else
		fprintf(f, "null");
	fprintf(f, ",\n  \"precision\": ");
	json_string(f, b->precision);
	fprintf(f, ",\n  \"nireq\": %u,\n  \"batch\": %lld,\n", b->nireq,
		(long long)(b->o->batch ? b->o->batch : 1));
	fprintf(f, "  \"read_ms\": %.6f,\n  \"compile_ms\": %.6f,\n"
		"  \"first_inference_ms\": %.6f,\n", b->res.read_ms, b->res.compile_ms,
		b->res.first_ms);
	fprintf(f, "  \"count\": %llu,\n  \"duration_ms\": %.6f,\n",
		(unsigned long long)b->res.count, duration_ms(&b->res));
	fprintf(f, "  \"latency_ms\": {\"median\": %.6f, \"avg\": %.6f, \"min\": %.6f, "
		"\"max\": %.6f, \"p90\": %.6f, \"p99\": %.6f},\n",
		s.median, s.avg, s.min, s.max, s.p90, s.p99);
	fprintf(f, "  \"throughput_fps\": %.6f", fps(b));
	if (b->res.copied_bytes >= 0)
		fprintf(f, ",\n  \"driver_bytes_copied\": %lld",
			(long long)b->res.copied_bytes);
	json_layers(b, f);
	fprintf(f, "\n}\n");
	if (fclose(f)) {
		fprintf(stderr, "vnpu-bench: %s: %m\n", path);
		return 1;
	}
	return 0;
}

/* ---- Chrome trace ---- */

/*
 * Process 1 is the host, one thread (track) per request with its stages
 * and callback; process 2 + d is device d with two tracks, the jobs and
 * their layers. Times are microseconds since the first span.
 */
static bool on_device(const struct trace_span *s)
{
	return !strcmp(s->kind, "layer") || !strcmp(s->kind, "job");
}

static uint32_t trace_tid(const struct trace_span *s)
{
	if (!on_device(s))
		return s->request;
	return strcmp(s->kind, "job") ? 1 : 0;
}

static uint32_t trace_pid(const struct bench_run *b, const struct trace_span *s)
{
	uint32_t d;

	if (!on_device(s))
		return 1;
	for (d = 0; d < b->num_models; d++) {
		if (!strcmp(s->where, b->devices[d]))
			return 2 + d;
	}
	return 2 + b->num_models;
}

static void trace_names(const struct bench_run *b, FILE *f)
{
	uint32_t i, d;

	fprintf(f, "  {\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 1, "
		"\"args\": {\"name\": \"host (vnpu-bench %s)\"}}", api_name(b->o));
	for (d = 0; d <= b->num_models; d++) {
		fprintf(f, ",\n  {\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %u, "
			"\"args\": {\"name\": \"%s\"}}", 2 + d,
			d < b->num_models ? b->devices[d] : "other devices");
		fprintf(f, ",\n  {\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": %u, "
			"\"tid\": 0, \"args\": {\"name\": \"jobs\"}}", 2 + d);
		fprintf(f, ",\n  {\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": %u, "
			"\"tid\": 1, \"args\": {\"name\": \"layers\"}}", 2 + d);
	}
	for (i = 0; i < b->nireq; i++)
		fprintf(f, ",\n  {\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 1, "
			"\"tid\": %u, \"args\": {\"name\": \"request %u\"}}", i, i);
}

int bench_write_trace(const struct bench_run *b, const char *path)
{
	const struct bench_result *r = &b->res;
	const struct trace_span *s;
	FILE *f = fopen(path, "w");
	int64_t t0 = INT64_MAX;
	uint64_t i;

	if (!f) {
		fprintf(stderr, "vnpu-bench: %s: %m\n", path);
		return 1;
	}
	for (i = 0; i < r->num_spans; i++)
		t0 = r->spans[i].start_ns < t0 ? r->spans[i].start_ns : t0;
	fprintf(f, "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n");
	trace_names(b, f);
	for (i = 0; i < r->num_spans; i++) {
		s = &r->spans[i];
		fprintf(f, ",\n  {\"ph\": \"X\", \"name\": ");
		json_string(f, s->name);
		fprintf(f, ", \"cat\": \"%s\", \"pid\": %u, \"tid\": %u, \"ts\": %.3f, "
			"\"dur\": %.3f, \"args\": {\"request\": %u, \"run\": %llu, \"on\": ", s->kind,
			trace_pid(b, s), trace_tid(s), (double)(s->start_ns - t0) / 1e3,
			(double)(s->end_ns - s->start_ns) / 1e3, s->request,
			(unsigned long long)s->run);
		json_string(f, s->where);
		fprintf(f, "}}");
	}
	fprintf(f, "\n]}\n");
	if (fclose(f)) {
		fprintf(stderr, "vnpu-bench: %s: %m\n", path);
		return 1;
	}
	return 0;
}

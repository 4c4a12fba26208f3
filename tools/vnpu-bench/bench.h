/* SPDX-License-Identifier: MIT */
/* vnpu-bench: what its parts share. */
#ifndef VNPU_BENCH_H
#define VNPU_BENCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <vnpu/vnpu.h>

#define BENCH_MAX_MODELS 8	/* one per device with CUMULATIVE_THROUGHPUT */
/* Runs whose timelines the trace keeps (the first ones). */
#define BENCH_TRACE_RUNS 4000

#define BENCH_MAX_FILES 64

/* Where the inputs and outputs live (-io). */
enum bench_io {
	BENCH_IO_DEVICE,		/* the requests' own buffers, written in place */
	BENCH_IO_HOST,			/* the caller's memory: copied every inference */
	BENCH_IO_REMOTE,		/* the caller's memory as remote tensors */
};

struct bench_opts {
	const char *model;
	const char *device;
	bool async;
	const char *hint;		/* "LATENCY", "THROUGHPUT", ...; NULL: none */
	const char *precision;		/* -infer_precision: "f32", "f16", "bf16"; NULL: the device's */
	uint32_t nireq;			/* 0: the compiled model's optimal number */
	uint64_t niter;			/* 0: run for @seconds */
	double seconds;
	int64_t batch;			/* 0: as the model says */
	const char *shapes;		/* -shape */
	uint32_t num_files;		/* -i [NAME=]FILE, in order */
	const char *files[BENCH_MAX_FILES];
	bool frozen[BENCH_MAX_FILES];	/* the file's input decides shapes: a constant */
	bool per_layer;			/* -pc */
	const char *json_path;
	const char *trace_path;
	bool progress;			/* stderr is a terminal */
	enum bench_io io;		/* -io */
};

/* One span of the trace: a stage or layer of one run of one request. */
struct trace_span {
	const char *name;		/* static text, or in the string pool */
	const char *kind;
	const char *where;
	uint32_t request;
	uint64_t run;
	int64_t start_ns, end_ns;
};

struct bench_result {
	uint64_t count;			/* inferences completed */
	int64_t start_ns, end_ns;	/* of the measured runs */
	double *latency_ms;		/* @count of them */
	uint64_t latency_cap;
	double first_ms;
	double read_ms;			/* read_model(), the file parsed */
	double compile_ms;
	int64_t copied_bytes;		/* uploaded + downloaded while measuring; -1: unknown */

	struct trace_span *spans;
	uint64_t num_spans, max_spans;
	char **strings;			/* layer names kept for the trace */
	uint64_t num_strings, max_strings;
};

struct bench_run {
	const struct bench_opts *o;
	uint32_t num_models;
	vnpu_compiled_model *models[BENCH_MAX_MODELS];
	char devices[BENCH_MAX_MODELS][32];
	char device_name[160];		/* FULL_DEVICE_NAME of the first */
	char precision[8];		/* INFERENCE_PRECISION_HINT it was compiled with */
	uint32_t nireq;
	vnpu_infer_request **reqs;
	void **io_mem;			/* -io host or remote: the caller's memory */
	uint32_t num_io_mem;
	struct bench_result res;
};

int64_t bench_now_ns(void);

/* Run the measured inferences (run.c); 0, or 1 with a message printed. */
int bench_measure(struct bench_run *b);
/* Keep the timeline of @req's last run for the trace. */
void bench_keep_timeline(struct bench_run *b, vnpu_infer_request *req, uint32_t index,
			 uint64_t run);

/* Report (report.c). */
void bench_print(const struct bench_run *b, FILE *f);
int bench_print_layers(const struct bench_run *b, FILE *f);
int bench_write_json(const struct bench_run *b, const char *path);
int bench_write_trace(const struct bench_run *b, const char *path);

#endif /* VNPU_BENCH_H */

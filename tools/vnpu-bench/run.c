// SPDX-License-Identifier: MIT
/*
 * vnpu-bench: the measured inferences. Sync: infer() in a loop on one
 * request at a time. Async: every request is started once, and each
 * callback records its run and starts its request again until the
 * iterations or the time are used up; the library runs callbacks one at
 * a time (under its own lock), so the results need no lock here.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

#define PROGRESS_NS 250000000

int64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int add_latency(struct bench_result *r, double ms)
{
	double *grown;

	uint64_t cap;

	if (r->count == r->latency_cap) {
		/* The capacity changes with the buffer: a failure keeps both. */
		cap = r->latency_cap ? 2 * r->latency_cap : 1024;
		grown = realloc(r->latency_ms, cap * sizeof(*grown));
		if (!grown)
			return -1;
		r->latency_ms = grown;
		r->latency_cap = cap;
	}
	r->latency_ms[r->count] = ms;
	return 0;
}

static const char *keep_string(struct bench_result *r, const char *s)
{
	char **grown;
	uint64_t i, max;

	/* Layer names repeat every run: look at the last run's first. */
	for (i = r->num_strings; i-- > 0 && r->num_strings - i <= 4096;) {
		if (!strcmp(r->strings[i], s))
			return r->strings[i];
	}
	if (r->num_strings == r->max_strings) {
		max = r->max_strings ? 2 * r->max_strings : 256;
		grown = realloc(r->strings, max * sizeof(*grown));
		if (!grown)
			return "?";
		r->strings = grown;
		r->max_strings = max;
	}
	r->strings[r->num_strings] = strdup(s);
	return r->strings[r->num_strings] ? r->strings[r->num_strings++] : "?";
}

void bench_keep_timeline(struct bench_run *b, vnpu_infer_request *req, uint32_t index,
			 uint64_t run)
{
	struct bench_result *r = &b->res;
	const vnpu_timeline_span *s;
	struct trace_span *grown;
	vnpu_timeline *tl;
	uint32_t i;

	if (!b->o->trace_path || run >= BENCH_TRACE_RUNS ||
	    vnpu_infer_request_get_timeline(req, &tl) != VNPU_OK)
		return;
	if (r->num_spans + tl->count > r->max_spans) {
		grown = realloc(r->spans, 2 * (r->num_spans + tl->count) * sizeof(*grown));
		if (!grown) {
			vnpu_timeline_free(tl);
			return;
		}
		r->spans = grown;
		r->max_spans = 2 * (r->num_spans + tl->count);
	}
	for (i = 0; i < tl->count; i++) {
		s = &tl->spans[i];
		r->spans[r->num_spans++] = (struct trace_span){
			strcmp(s->kind, "layer") ? s->name : keep_string(r, s->name),
			s->kind, strcmp(s->kind, "layer") && strcmp(s->kind, "job") ? s->where :
			keep_string(r, s->where),
			index, run, s->start_ns, s->end_ns };
	}
	vnpu_timeline_free(tl);
}

static void progress(const struct bench_run *b, int64_t start, bool done)
{
	double s = (double)(bench_now_ns() - start) / 1e9;

	if (!b->o->progress)
		return;
	if (done) {
		fprintf(stderr, "\r\033[K");
		return;
	}
	fprintf(stderr, "\r  %6.1f s  %8llu inferences  %9.2f FPS", s,
		(unsigned long long)b->res.count, s > 0 ? (double)b->res.count / s : 0.0);
	fflush(stderr);
}

static bool more_to_do(const struct bench_opts *o, uint64_t issued, int64_t deadline)
{
	return o->niter ? issued < o->niter : bench_now_ns() < deadline;
}

static int64_t deadline_of(const struct bench_opts *o, int64_t start)
{
	return o->niter ? INT64_MAX : start + (int64_t)(o->seconds * 1e9);
}

static int run_sync(struct bench_run *b)
{
	struct bench_result *r = &b->res;
	int64_t deadline, t0, last_progress;
	vnpu_infer_request *req;
	uint64_t i;

	r->start_ns = last_progress = bench_now_ns();
	deadline = deadline_of(b->o, r->start_ns);
	for (i = 0; more_to_do(b->o, i, deadline); i++) {
		req = b->reqs[i % b->nireq];
		t0 = bench_now_ns();
		if (vnpu_infer_request_infer(req) != VNPU_OK) {
			progress(b, r->start_ns, true);
			fprintf(stderr, "vnpu-bench: inference %llu: %s\n", (unsigned long long)i,
				vnpu_last_error());
			return 1;
		}
		if (add_latency(r, (double)(bench_now_ns() - t0) / 1e6)) {
			progress(b, r->start_ns, true);
			fprintf(stderr, "vnpu-bench: out of memory keeping the latencies\n");
			return 1;
		}
		r->count++;
		bench_keep_timeline(b, req, (uint32_t)(i % b->nireq), i);
		if (bench_now_ns() - last_progress > PROGRESS_NS) {
			last_progress = bench_now_ns();
			progress(b, r->start_ns, false);
		}
	}
	r->end_ns = bench_now_ns();
	progress(b, r->start_ns, true);
	return 0;
}

/* ---- async ---- */

struct async_shared {
	struct bench_run *b;
	int64_t deadline;
	atomic_uint_fast64_t issued;
	atomic_bool failed;
	vnpu_status status;
	char message[512];
};

struct async_req {
	struct async_shared *sh;
	uint32_t index;
	uint64_t run;
	int64_t started_ns;
};

static void fail_async(struct async_shared *sh, vnpu_status st)
{
	if (atomic_exchange(&sh->failed, true))
		return;
	sh->status = st;
	snprintf(sh->message, sizeof(sh->message), "%s", vnpu_last_error());
}

/* Issue the next inference on @ctx's request, if there is one to do. */
static void issue(struct async_req *ctx, vnpu_infer_request *req)
{
	struct async_shared *sh = ctx->sh;
	uint64_t n = atomic_load(&sh->issued);
	vnpu_status st;

	do {
		if (atomic_load(&sh->failed) || !more_to_do(sh->b->o, n, sh->deadline))
			return;
	} while (!atomic_compare_exchange_weak(&sh->issued, &n, n + 1));
	ctx->run = n;
	ctx->started_ns = bench_now_ns();
	st = vnpu_infer_request_start_async(req);
	if (st != VNPU_OK)
		fail_async(sh, st);
}

static void on_done(vnpu_infer_request *req, vnpu_status st, void *data)
{
	struct async_req *ctx = data;
	struct async_shared *sh = ctx->sh;
	struct bench_run *b = sh->b;

	if (st != VNPU_OK) {
		fail_async(sh, st);
		return;
	}
	if (add_latency(&b->res, (double)(bench_now_ns() - ctx->started_ns) / 1e6)) {
		fail_async(sh, VNPU_OUT_OF_MEMORY);
		return;
	}
	b->res.count++;
	bench_keep_timeline(b, req, ctx->index, ctx->run);
	issue(ctx, req);
}

static int run_async(struct bench_run *b)
{
	struct bench_result *r = &b->res;
	struct async_shared sh = { .b = b };
	struct async_req *ctx = calloc(b->nireq, sizeof(*ctx));
	vnpu_status st = VNPU_OK;
	uint32_t i;

	if (!ctx) {
		fprintf(stderr, "vnpu-bench: out of memory for the requests' state\n");
		return 1;
	}
	for (i = 0; i < b->nireq && st == VNPU_OK; i++) {
		ctx[i] = (struct async_req){ &sh, i, 0, 0 };
		st = vnpu_infer_request_set_callback(b->reqs[i], on_done, &ctx[i]);
	}
	if (st != VNPU_OK) {
		fprintf(stderr, "vnpu-bench: set_callback: %s\n", vnpu_last_error());
		free(ctx);
		return 1;
	}
	r->start_ns = bench_now_ns();
	sh.deadline = deadline_of(b->o, r->start_ns);
	for (i = 0; i < b->nireq; i++)
		issue(&ctx[i], b->reqs[i]);
	for (i = 0; i < b->nireq;) {
		st = vnpu_infer_request_wait_for(b->reqs[i], PROGRESS_NS / 1000000);
		if (st == VNPU_NOT_READY) {
			progress(b, r->start_ns, false);
			continue;
		}
		if (st != VNPU_OK)
			fail_async(&sh, st);
		i++;
	}
	r->end_ns = bench_now_ns();
	progress(b, r->start_ns, true);
	for (i = 0; i < b->nireq; i++)
		vnpu_infer_request_set_callback(b->reqs[i], NULL, NULL);
	free(ctx);
	if (atomic_load(&sh.failed)) {
		fprintf(stderr, "vnpu-bench: inference failed: %s (%s)\n", sh.message,
			vnpu_status_str(sh.status));
		return 1;
	}
	return 0;
}

int bench_measure(struct bench_run *b)
{
	return b->o->async ? run_async(b) : run_sync(b);
}

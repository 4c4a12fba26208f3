// SPDX-License-Identifier: MIT
/*
 * The timeline of a request's last asynchronous run (timeline.h): its
 * spans as the pipeline recorded them, each device's jobs placed one
 * after another, and the layers of each job from the profile.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"
#include "timeline.h"

/* Devices whose last job end the timeline keeps (job_span()). */
#define TRACKED_DEVICES 32

/*
 * When each device's last job ended, as the timeline places it: its jobs
 * end on several threads. Keyed by the device's name (its own string).
 */
static struct {
	pthread_mutex_t lock;		/* protects everything here */
	uint32_t count;
	const char *device[TRACKED_DEVICES];
	int64_t free_ns[TRACKED_DEVICES];
} tracks = { .lock = PTHREAD_MUTEX_INITIALIZER };

static const char *const stage_names[VNPU_NUM_STAGES] = {
	"preprocess", "upload", "submit", "wait", "download", "postprocess",
};

bool vnpu_run_spans_init(struct vnpu_run_spans *s, uint32_t num_segments)
{
	/* preprocess, upload, submit + wait + job per segment, download, post, callback */
	s->max = 5 + 3 * num_segments;
	s->spans = calloc(s->max, sizeof(*s->spans));
	return s->spans != NULL;
}

void vnpu_run_spans_fini(struct vnpu_run_spans *s)
{
	free(s->spans);
}

void vnpu_run_spans_reset(struct vnpu_run_spans *s)
{
	s->count = 0;
}

/* When @device's last job ended, as placed; NULL when no slot is left. */
static int64_t *device_free_ns_locked(const char *device)
{
	uint32_t i;

	for (i = 0; i < tracks.count; i++) {
		if (tracks.device[i] == device)
			return &tracks.free_ns[i];
	}
	if (tracks.count == TRACKED_DEVICES)
		return NULL;
	tracks.device[tracks.count] = device;
	tracks.free_ns[tracks.count] = 0;
	return &tracks.free_ns[tracks.count++];
}

/*
 * The span of the job a wait ending at @wait_end saw end. The device says
 * how long it ran, not when: it started when it was submitted, no later
 * than its length before the wait saw it end, and not before the device's
 * previous job ended, unless that is too late (that end is itself
 * only placed this way).
 */
static struct vnpu_span job_span(const struct vnpu_run_spans *s,
				 struct vnpu_infer_request *req, int64_t wait_end)
{
	int64_t length = (int64_t)vnpu_request_job_ns(req);
	int64_t start = s->submit_end_ns, *free_ns;

	if (start > wait_end - length)
		start = wait_end - length;
	pthread_mutex_lock(&tracks.lock);
	free_ns = device_free_ns_locked(s->job_device);
	if (free_ns && *free_ns > start && *free_ns <= wait_end - length)
		start = *free_ns;
	if (free_ns && *free_ns < start + length)
		*free_ns = start + length;
	pthread_mutex_unlock(&tracks.lock);
	return (struct vnpu_span){ "job", "job", s->job_device, start, start + length };
}

void vnpu_run_spans_stage(struct vnpu_run_spans *s, struct vnpu_infer_request *req,
			  enum vnpu_request_stage stage, const char *where, int64_t t0,
			  int64_t t1)
{
	if (s->count + 1 >= s->max)
		return;
	if (stage == VNPU_STAGE_SUBMIT) {
		s->submit_end_ns = t1;
		s->job_device = vnpu_request_device(req)->info.name;
	}
	s->spans[s->count++] = (struct vnpu_span){ stage_names[stage], "stage", where, t0, t1 };
	if (stage == VNPU_STAGE_WAIT && vnpu_request_job_ns(req))
		s->spans[s->count++] = job_span(s, req, t1);
}

void vnpu_run_spans_callback(struct vnpu_run_spans *s, const char *where, int64_t t0,
			     int64_t t1)
{
	if (s->count < s->max)
		s->spans[s->count++] = (struct vnpu_span){ "callback", "callback", where, t0, t1 };
}

/* Sum of the layer times of segment @seg, from profiling @info. */
static int64_t segment_layers_ns(const struct vnpu_program *p,
				 const vnpu_profiling_info *info, uint32_t seg)
{
	int64_t sum = 0;
	uint32_t i;

	for (i = 0; i < p->num_layers; i++) {
		if (p->layers[i].segment == seg)
			sum += (int64_t)info->entries[VNPU_NUM_STAGES + i].real_time_ns;
	}
	return sum;
}

/*
 * Where segment @seg's layers start: its job's start, else as late as
 * they fit before its wait ended (but not before its submit); 0: not run.
 */
static int64_t segment_start(const struct vnpu_run_spans *s, uint32_t seg, int64_t layers_ns)
{
	int64_t submit_end = 0, t;
	uint32_t i, n = 0;

	for (i = 0; i < s->count; i++) {
		if (s->spans[i].name == stage_names[VNPU_STAGE_SUBMIT] && n == seg)
			submit_end = s->spans[i].end_ns;
		if (s->spans[i].name != stage_names[VNPU_STAGE_WAIT] || n++ != seg)
			continue;
		if (i + 1 < s->count && !strcmp(s->spans[i + 1].kind, "job"))
			return s->spans[i + 1].start_ns;
		t = s->spans[i].end_ns - layers_ns;
		return t < submit_end ? submit_end : t;
	}
	return 0;
}

/* Append one span per layer that ran, one after the other from its job's start. */
static uint32_t layer_spans(const struct vnpu_run_spans *s, const struct vnpu_program *p,
			    const vnpu_profiling_info *info, vnpu_timeline_span *out,
			    char **pool_pos)
{
	const vnpu_profiling_entry *e;
	uint32_t seg, i, n = 0;
	int64_t t;

	for (seg = 0; seg < p->num_segments; seg++) {
		t = segment_start(s, seg, segment_layers_ns(p, info, seg));
		if (!t)
			continue;
		for (i = 0; i < p->num_layers; i++) {
			e = &info->entries[VNPU_NUM_STAGES + i];
			if (p->layers[i].segment != seg || e->status != VNPU_PROFILING_EXECUTED)
				continue;
			out[n].kind = "layer";
			out[n].name = *pool_pos;
			*pool_pos = stpcpy(*pool_pos, e->name) + 1;
			out[n].where = *pool_pos;
			*pool_pos = stpcpy(*pool_pos, e->exec_type) + 1;
			out[n].start_ns = t;
			t += (int64_t)e->real_time_ns;
			out[n].end_ns = t;
			n++;
		}
	}
	return n;
}

vnpu_status vnpu_run_spans_timeline(const struct vnpu_run_spans *s,
				    struct vnpu_infer_request *req, vnpu_timeline **out)
{
	const struct vnpu_program *p;
	vnpu_profiling_info *info = NULL;
	vnpu_timeline_span *ts;
	vnpu_timeline *tl;
	size_t strings = 0;
	uint32_t i, n;
	char *pos;

	if (!s->count)
		return vnpu_error(VNPU_NOT_READY, "no run has completed yet");
	p = vnpu_request_compiled_model(req)->program;
	if (vnpu_request_profiling_info(req, &info) != VNPU_OK)
		info = NULL;
	for (i = 0; info && i < p->num_layers; i++)
		strings += strlen(info->entries[VNPU_NUM_STAGES + i].name) +
			   strlen(info->entries[VNPU_NUM_STAGES + i].exec_type) + 2;
	n = s->count + (info ? p->num_layers : 0);
	tl = calloc(1, sizeof(*tl) + n * sizeof(*ts) + strings);
	if (!tl) {
		vnpu_profiling_info_free(info);
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory");
	}
	ts = (vnpu_timeline_span *)(tl + 1);
	pos = (char *)(ts + n);
	for (i = 0; i < s->count; i++)
		ts[i] = (vnpu_timeline_span){ s->spans[i].name, s->spans[i].kind, s->spans[i].where,
					      s->spans[i].start_ns, s->spans[i].end_ns };
	n = s->count;
	if (info)
		n += layer_spans(s, p, info, ts + n, &pos);
	vnpu_profiling_info_free(info);
	tl->count = n;
	tl->spans = ts;
	*out = tl;
	return VNPU_OK;
}

VNPU_API void vnpu_timeline_free(vnpu_timeline *timeline)
{
	free(timeline);
}

/* SPDX-License-Identifier: MIT */
/*
 * Internal: the timeline of a request's last asynchronous run, what
 * vnpu_infer_request_get_timeline() returns. The pipeline (async.c)
 * records the spans of the run's stages, of each job on its device and
 * of the callback as they end; the layers are placed inside their jobs
 * from the profile when the timeline is read.
 *
 * Thread safety: one thread records at a time (the one running the
 * run's current stage); the timeline is read only while the request is
 * idle.
 */
#ifndef VNPU_SRC_TIMELINE_H
#define VNPU_SRC_TIMELINE_H

#include <stdbool.h>
#include <stdint.h>

#include <vnpu/vnpu_infer_request.h>

#include "async.h"

struct vnpu_span {
	const char *name;
	const char *kind;		/* "stage", "job" or "callback" */
	const char *where;		/* a thread's role, or a device's name */
	int64_t start_ns, end_ns;
};

/* The spans of one run. */
struct vnpu_run_spans {
	uint32_t count, max;
	struct vnpu_span *spans;
	int64_t submit_end_ns;		/* when its last segment was submitted */
	const char *job_device;		/* the device of that segment: its name */
};

/* Room for the spans of a run of @num_segments segments; false: no memory. */
bool vnpu_run_spans_init(struct vnpu_run_spans *s, uint32_t num_segments);
void vnpu_run_spans_fini(struct vnpu_run_spans *s);
/* A new run starts. */
void vnpu_run_spans_reset(struct vnpu_run_spans *s);
/*
 * Stage @stage of @req's run went from @t0 to @t1 on a thread of role
 * @where; a wait that saw a job end adds the job's span on its device.
 */
void vnpu_run_spans_stage(struct vnpu_run_spans *s, struct vnpu_infer_request *req,
			  enum vnpu_request_stage stage, const char *where, int64_t t0,
			  int64_t t1);
/* The run's callback went from @t0 to @t1 on a thread of role @where. */
void vnpu_run_spans_callback(struct vnpu_run_spans *s, const char *where, int64_t t0,
			     int64_t t1);
/* get_timeline's work, for a caller that has entered the idle request. */
vnpu_status vnpu_run_spans_timeline(const struct vnpu_run_spans *s,
				    struct vnpu_infer_request *req, vnpu_timeline **out);

#endif /* VNPU_SRC_TIMELINE_H */

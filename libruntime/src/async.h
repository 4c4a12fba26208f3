/* SPDX-License-Identifier: MIT */
/*
 * Internal: the asynchronous pipeline of infer requests (async.c) and the
 * few hooks it shares with the synchronous request (infer_request.c).
 *
 * The request's stages are numbered as its profiling entries are:
 * preprocess, upload, submit, wait, download, postprocess.
 */
#ifndef VNPU_SRC_ASYNC_H
#define VNPU_SRC_ASYNC_H

#include <stdbool.h>
#include <stdint.h>

#include <vnpu/vnpu_infer_request.h>

struct vnpu_core_device;
struct vnpu_request_async;

enum vnpu_request_stage {
	VNPU_STAGE_PREPROCESS,
	VNPU_STAGE_UPLOAD,
	VNPU_STAGE_SUBMIT,
	VNPU_STAGE_WAIT,
	VNPU_STAGE_DOWNLOAD,
	VNPU_STAGE_POSTPROCESS,
	VNPU_NUM_STAGES,
};

/* ---- infer_request.c, for the pipeline ---- */

/*
 * One caller's call at a time: enter() claims the request (false when
 * another call is inside it), leave() lets it go. The pipeline's own
 * threads never enter: a run in flight is busy through the async state.
 */
bool vnpu_request_enter(struct vnpu_infer_request *req);
void vnpu_request_leave(struct vnpu_infer_request *req);
/* VNPU_BUSY, with the message every busy call gives. */
vnpu_status vnpu_request_busy_error(void);
/*
 * Enter the request for a call that needs it idle: no other call inside,
 * no asynchronous run in flight (a run starts only from inside a call, so
 * it stays idle until vnpu_request_leave()); else VNPU_BUSY.
 */
vnpu_status vnpu_request_enter_idle(struct vnpu_infer_request *req);
/* get_profiling_info's work, for a caller that has entered the request. */
vnpu_status vnpu_request_profiling_info(struct vnpu_infer_request *req,
					vnpu_profiling_info **out);

/* The request's async state (NULL until its first async call). */
struct vnpu_request_async **vnpu_request_async_state(struct vnpu_infer_request *req);
struct vnpu_compiled_model *vnpu_request_compiled_model(const struct vnpu_infer_request *req);
/* The device of the segment running, or of the one submit starts next. */
struct vnpu_core_device *vnpu_request_device(const struct vnpu_infer_request *req);
/* Device time of the job the last wait saw end (0 when unknown). */
uint64_t vnpu_request_job_ns(const struct vnpu_infer_request *req);
/*
 * vnpu_request_wait() in two steps, so that the pipeline can free the job
 * under its own lock while another thread may cancel it: wait for the
 * running segment's job (VNPU_NOT_READY when @deadline_ns passes first),
 * then free it and account its status @st (the next segment on success).
 */
vnpu_status vnpu_request_job_wait(struct vnpu_infer_request *req, int64_t deadline_ns);
vnpu_status vnpu_request_job_end(struct vnpu_infer_request *req, vnpu_status st);
/*
 * Have @fn(@arg) called on the device's completion context once the
 * running segment's job ended (see notify in plugin.h); an error leaves
 * the job to vnpu_request_job_wait().
 */
vnpu_status vnpu_request_notify(struct vnpu_infer_request *req, void (*fn)(void *arg),
				void *arg);
/* Ask the device to stop the running segment's job (any thread, while it lives). */
void vnpu_request_cancel_job(struct vnpu_infer_request *req);
/* Start and end a run: reset, then keep, the stage times and timeline. */
void vnpu_request_run_begin(struct vnpu_infer_request *req);
void vnpu_request_run_end(struct vnpu_infer_request *req, vnpu_status st);
/* Account stage @stage that ran from @t0 to @t1 (CLOCK_MONOTONIC ns). */
void vnpu_request_stage_done(struct vnpu_infer_request *req,
			     enum vnpu_request_stage stage, int64_t t0, int64_t t1);

/* ---- async.c, for infer_request.c ---- */

/* True while a start_async run (or its callback) is in flight. */
bool vnpu_async_busy(struct vnpu_infer_request *req);
/*
 * At vnpu_infer_request_free(): cancel a run in flight, wait for it, drop
 * the async state. False when called from the request's own callback: the
 * callback executor frees the request once the callback returns.
 */
bool vnpu_async_release(struct vnpu_infer_request *req);
/* Timeline bookkeeping of a run (vnpu_request_run_begin / stage_done). */
void vnpu_async_timeline_reset(struct vnpu_infer_request *req);
void vnpu_async_timeline_add(struct vnpu_infer_request *req,
			     enum vnpu_request_stage stage, int64_t t0, int64_t t1);
int64_t vnpu_async_now_ns(void);

#endif /* VNPU_SRC_ASYNC_H */

/* SPDX-License-Identifier: MIT */
/* Internal: recording a failure for vnpu_last_error(). */
#ifndef VNPU_SRC_ERROR_H
#define VNPU_SRC_ERROR_H

#include <vnpu/vnpu_common.h>

/*
 * Record @status with a printf-style detail for the calling thread and
 * return @status, so a failure reads `return vnpu_error(VNPU_..., "...")`.
 */
vnpu_status vnpu_error(vnpu_status status, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Prefix the calling thread's last error with more context. */
vnpu_status vnpu_error_prefix(vnpu_status status, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* VNPU_SRC_ERROR_H */

// SPDX-License-Identifier: MIT
/*
 * An LD_PRELOAD library for the tools' out-of-memory test
 * (tools_alloc_fail.py): with VNPU_FAIL_ALLOC=N in the environment, the
 * process's Nth call of malloc, calloc or realloc fails (ENOMEM); with
 * VNPU_FAIL_ALLOC_COUNT=FILE, the number of calls made is written to FILE
 * at exit; with VNPU_FAIL_ALLOC_BACKTRACE set, the failing call's stack
 * goes to stderr (to find the code that mishandled it). Memory comes from
 * libc's own functions, so libc's free() frees it.
 */
#include <errno.h>
#include <execinfo.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

void *__libc_malloc(size_t size);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t size);

static atomic_ulong calls;
static unsigned long fail_at;
static int show_stack;

__attribute__((constructor)) static void failmalloc_init(void)
{
	const char *n = getenv("VNPU_FAIL_ALLOC");

	if (n)
		fail_at = strtoul(n, NULL, 10);
	/* backtrace() allocates the first time (after the failure: counts hold). */
	show_stack = getenv("VNPU_FAIL_ALLOC_BACKTRACE") != NULL;
}

__attribute__((destructor)) static void failmalloc_fini(void)
{
	const char *path = getenv("VNPU_FAIL_ALLOC_COUNT");
	FILE *f;

	if (!path)
		return;
	fail_at = 0;
	f = fopen(path, "w");
	if (f) {
		fprintf(f, "%lu\n", atomic_load(&calls));
		fclose(f);
	}
}

static int fail_now(void)
{
	void *frames[32];

	if (atomic_fetch_add(&calls, 1) + 1 != fail_at)
		return 0;
	if (show_stack)
		backtrace_symbols_fd(frames, backtrace(frames, 32), 2);
	return 1;
}

void *malloc(size_t size)
{
	if (fail_now()) {
		errno = ENOMEM;
		return NULL;
	}
	return __libc_malloc(size);
}

void *calloc(size_t n, size_t size)
{
	if (fail_now()) {
		errno = ENOMEM;
		return NULL;
	}
	return __libc_calloc(n, size);
}

void *realloc(void *p, size_t size)
{
	if (fail_now()) {
		errno = ENOMEM;
		return NULL;
	}
	return __libc_realloc(p, size);
}

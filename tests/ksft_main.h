/* SPDX-License-Identifier: MIT */
/*
 * The main of the userspace test programs, on kselftest_harness.h (from
 * Debian's linux-source-6.1 at build time, never in this tree): TEST(),
 * TEST_F() and FIXTURE(); ASSERT_* stops a test, EXPECT_* notes the failure
 * and goes on, TH_LOG() adds context. Each test runs in a child process of
 * its own and prints one TAP line (meson's protocol 'tap').
 *
 * 6.1's harness runs every test and reads no argument, so ksft_main_run()
 * first keeps the tests named on the command line from argv[@first] on: a
 * test's name, its fixture's, its variant's or "fixture.test" (no name:
 * every test; arguments starting with '-' are the program's own options).
 * It also lifts the harness's 30 s alarm of each test to KSFT_MAIN_TIMEOUT:
 * meson's timeout of the program bounds the whole run.
 */
#ifndef KSFT_MAIN_H
#define KSFT_MAIN_H

#include <stdbool.h>
#include <string.h>

#include "kselftest_harness.h"

#define KSFT_MAIN_TIMEOUT (24 * 3600)

static inline bool ksft_main_names(const struct __fixture_metadata *f,
				   const struct __test_metadata *t, const char *arg)
{
	const struct __fixture_variant_metadata *v;
	size_t flen = strlen(f->name);

	if (!strcmp(arg, t->name) || !strcmp(arg, f->name))
		return true;
	if (!strncmp(arg, f->name, flen) && arg[flen] == '.' &&
	    !strcmp(arg + flen + 1, t->name))
		return true;
	for (v = f->variant; v; v = v->next) {
		if (!strcmp(arg, v->name))
			return true;
	}
	return false;
}

/* Keep the tests of @f that argv[@first..] name (all when it names none). */
static inline void ksft_main_select(struct __fixture_metadata *f, int argc, char **argv,
				    int first)
{
	struct __test_metadata *t, *next, *head = NULL, *tail = NULL;
	bool any = false, keep;
	int a;

	for (a = first; a < argc; a++)
		any |= argv[a][0] != '-';
	for (t = f->tests; t; t = next) {
		next = t->next;
		keep = !any;
		for (a = first; a < argc && !keep; a++)
			keep = argv[a][0] != '-' && ksft_main_names(f, t, argv[a]);
		if (!keep)
			continue;
		t->next = NULL;
		t->prev = tail;
		if (tail)
			tail->next = t;
		else
			head = t;
		tail = t;
	}
	if (head)
		head->prev = tail;
	f->tests = head;
}

static inline int ksft_main_run(int argc, char **argv, int first)
{
	struct __fixture_metadata *f;
	struct __test_metadata *t;

	for (f = __fixture_list; f; f = f->next) {
		ksft_main_select(f, argc, argv, first);
		for (t = f->tests; t; t = t->next) {
			if (t->timeout == TEST_TIMEOUT_DEFAULT)
				t->timeout = KSFT_MAIN_TIMEOUT;
		}
	}
	return test_harness_run(argc, argv);
}

/* A TAP plan of no test, skipped for @why (exit status 0: meson's TAP needs it). */
static inline int ksft_main_skip_all(const char *why)
{
	printf("TAP version 13\n1..0 # SKIP %s\n", why);
	return KSFT_PASS;
}

/* The harness's constructor-order probe, then main() over ksft_main_run(). */
#define KSFT_MAIN_ORDER \
	static void __attribute__((constructor)) __constructor_order_last(void) \
	{ \
		if (!__constructor_order) \
			__constructor_order = _CONSTRUCTOR_ORDER_BACKWARD; \
	}

#define KSFT_MAIN \
	KSFT_MAIN_ORDER \
	int main(int argc, char **argv) \
	{ \
		return ksft_main_run(argc, argv, 1); \
	}

#endif /* KSFT_MAIN_H */

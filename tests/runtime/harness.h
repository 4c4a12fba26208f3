/* SPDX-License-Identifier: MIT */
/*
 * A small harness for the runtime tests: each test is a function run once
 * per device; CHECK* print the failing line with vnpu_last_error().
 *
 *   test-x            every device present
 *   test-x --npu      only the NPU devices; exit 77 (skip) when none
 *   test-x NAME...    only the tests called NAME
 */
#ifndef VNPU_TEST_HARNESS_H
#define VNPU_TEST_HARNESS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vnpu/vnpu.h>

#define CHECK(cond) \
	do { \
		if (!(cond)) { \
			fprintf(stderr, "%s:%d: CHECK(%s) failed; last error: %s\n", \
				__FILE__, __LINE__, #cond, vnpu_last_error()); \
			return 1; \
		} \
	} while (0)

/* @call returns @want (a vnpu_status). */
#define CHECK_ST(call, want) \
	do { \
		vnpu_status st_ = (call); \
		if (st_ != (want)) { \
			fprintf(stderr, "%s:%d: %s returned %d (%s), want %d (%s); " \
				"last error: %s\n", __FILE__, __LINE__, #call, st_, \
				vnpu_status_str(st_), (want), vnpu_status_str(want), \
				vnpu_last_error()); \
			return 1; \
		} \
	} while (0)

#define CHECK_OK(call) CHECK_ST(call, VNPU_OK)

/* A failure must leave a message behind. */
#define CHECK_ERR(call, want) \
	do { \
		CHECK_ST(call, want); \
		CHECK(vnpu_last_error()[0] != '\0'); \
	} while (0)

/* Whether @core has a device whose name starts with @name ("NPU": any). */
static inline int has_device(vnpu_core *core, const char *name)
{
	uint32_t n, i;
	char **devices;
	int found = 0;

	if (vnpu_core_get_available_devices(core, &devices, &n))
		return 0;
	for (i = 0; i < n; i++)
		found |= !strncmp(devices[i], name, strlen(name));
	vnpu_free(devices);
	return found;
}

struct test {
	const char *name;
	int (*fn)(vnpu_core *core, const char *device);
};

#define TEST(fn) { #fn, fn }

static inline int run_tests(int argc, char **argv, const struct test *tests, size_t n)
{
	int npu_only = 0, failed = 0, ran = 0, a, selected;
	uint32_t num_devices, d;
	char **devices;
	vnpu_core *core;
	size_t i;

	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--npu"))
			npu_only = 1;
	}
	if (vnpu_core_create(&core) != VNPU_OK) {
		fprintf(stderr, "vnpu_core_create: %s\n", vnpu_last_error());
		return 1;
	}
	if (vnpu_core_get_available_devices(core, &devices, &num_devices) != VNPU_OK) {
		fprintf(stderr, "get_available_devices: %s\n", vnpu_last_error());
		return 1;
	}
	for (d = 0; d < num_devices; d++) {
		if (npu_only && strncmp(devices[d], "NPU", 3))
			continue;
		for (i = 0; i < n; i++) {
			selected = 1;
			for (a = 1; a < argc; a++) {
				if (argv[a][0] != '-')
					selected = 0;
			}
			for (a = 1; a < argc; a++) {
				if (!strcmp(argv[a], tests[i].name))
					selected = 1;
			}
			if (!selected)
				continue;
			ran++;
			if (tests[i].fn(core, devices[d])) {
				printf("not ok - %s on %s\n", tests[i].name, devices[d]);
				failed++;
			} else {
				printf("ok - %s on %s\n", tests[i].name, devices[d]);
			}
			fflush(stdout);
		}
	}
	vnpu_free(devices);
	vnpu_core_free(core);
	if (!ran) {
		printf("skip: no %sdevice to test\n", npu_only ? "NPU " : "");
		return 77;
	}
	printf("%d of %d failed\n", failed, ran);
	return failed ? 1 : 0;
}

#endif /* VNPU_TEST_HARNESS_H */

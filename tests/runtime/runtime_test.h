/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the runtime tests, on kselftest_harness.h (tests/ksft_main.h):
 * fixture 'dev' runs each TEST_F once per device present, a variant per
 * device ("dev.CPU.name", "dev.NPU.0.name"), with a core of its own; a
 * failed test logs vnpu_last_error() at its end.
 *
 *   test-x            every device present
 *   test-x --npu      only the NPU devices; skips (TAP plan 1..0) when none
 *   test-x NAME...    only the tests (or devices) called NAME
 */
#ifndef VNPU_RUNTIME_TEST_H
#define VNPU_RUNTIME_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vnpu/vnpu.h>

#include "ksft_main.h"

/* @call returns @want, a failure status, and leaves a message behind. */
#define ASSERT_FAILS(want, call) do { \
	ASSERT_EQ(want, call); \
	ASSERT_NE('\0', vnpu_last_error()[0]); \
} while (0)

/*
 * The _metadata of a thread that a test starts, for helpers that ASSERT:
 * a failed ASSERT on that thread runs @on_fail and ends the thread
 * (returns NULL); the test checks what @on_fail set once it joined it.
 */
#define RUNTIME_THREAD_METADATA(on_fail) \
	struct __test_metadata thread_md_ = { .name = __func__, .passed = 1 }; \
	struct __test_metadata *_metadata = &thread_md_; \
	if (setjmp(thread_md_.env)) { \
		on_fail; \
		return NULL; \
	}

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

FIXTURE(dev) {
	vnpu_core *core;
	const char *device;
};

FIXTURE_VARIANT(dev) {
	const char *device;
};

FIXTURE_SETUP(dev)
{
	ASSERT_NE(NULL, variant);
	ASSERT_EQ(VNPU_OK, vnpu_core_create(&self->core));
	self->device = variant->device;
}

FIXTURE_TEARDOWN(dev)
{
	if (!_metadata->passed)
		TH_LOG("last error: %s", vnpu_last_error());
	vnpu_core_free(self->core);
}

/*
 * Register a variant of fixture 'dev' for each device present (only the
 * NPUs with --npu), then run the tests named on the command line.
 */
static inline int runtime_test_main(int argc, char **argv)
{
	struct __fixture_variant_metadata *v;
	FIXTURE_VARIANT(dev) *data;
	bool npu_only = false;
	uint32_t n, i;
	char **devices;
	vnpu_core *core;
	int a;

	for (a = 1; a < argc; a++)
		npu_only |= !strcmp(argv[a], "--npu");
	if (vnpu_core_create(&core) != VNPU_OK ||
	    vnpu_core_get_available_devices(core, &devices, &n) != VNPU_OK) {
		fprintf(stderr, "no device list: %s\n", vnpu_last_error());
		return KSFT_FAIL;
	}
	for (i = 0; i < n; i++) {
		if (npu_only && strncmp(devices[i], "NPU", 3))
			continue;
		v = calloc(1, sizeof(*v));
		data = calloc(1, sizeof(*data));
		if (!v || !data)
			return KSFT_FAIL;
		data->device = strdup(devices[i]);
		v->name = data->device;
		v->data = data;
		__register_fixture_variant(&_dev_fixture_object, v);
	}
	vnpu_free(devices);
	vnpu_core_free(core);
	/* 6.1's harness runs a test whose setup skipped: skip them all here. */
	if (!_dev_fixture_object.variant)
		return ksft_main_skip_all(npu_only ? "no NPU device to test" : "no device to test");
	return ksft_main_run(argc, argv, 1);
}

#define RUNTIME_TEST_MAIN \
	KSFT_MAIN_ORDER \
	int main(int argc, char **argv) \
	{ \
		return runtime_test_main(argc, argv); \
	}

#endif /* VNPU_RUNTIME_TEST_H */

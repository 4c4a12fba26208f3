/* SPDX-License-Identifier: MIT */
/*
 * What the libFuzzer targets share: the entry points libFuzzer calls, and
 * the oracle every target applies besides the sanitizers: a refusal always
 * comes with a message.
 */
#ifndef VNPU_FUZZ_H
#define VNPU_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <vnpu/vnpu.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A failing call of the library must say why (vnpu_last_error()). */
static inline void fuzz_expect_message(vnpu_status st, const char *call)
{
	if (st != VNPU_OK && !vnpu_last_error()[0]) {
		fprintf(stderr, "%s failed with %s and no message\n", call, vnpu_status_str(st));
		abort();
	}
}

/* One core for the whole run, made by the first input. */
static inline vnpu_core *fuzz_core(void)
{
	static vnpu_core *core;

	if (!core && vnpu_core_create(&core) != VNPU_OK) {
		fprintf(stderr, "vnpu_core_create: %s\n", vnpu_last_error());
		abort();
	}
	return core;
}

#endif /* VNPU_FUZZ_H */

// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the command-stream validator (driver/sim/vnpu_exec.c,
 * the same source vnpu.ko runs), host build. An input is a slot table and
 * a stream (stream_input.h). A stream the validator accepts is also run,
 * command by command, over buffers of exactly the slots' sizes when it is
 * short (vnpu_exec_stream_is_short(): bounded work), on the kernels the
 * input picks (the baseline, or the host's AVX2+FMA or widest ones, each
 * with the scratch it asks for): ASan then catches any access the
 * validator should have refused, on every path the host has.
 * Seeds: the command streams of models compiled from libonnx-testdata.
 */
#include "fuzz.h"
#include "stream_input.h"
#include "vnpu_exec.h"

/* Buffers of at most this many bytes in all are allocated to run a stream. */
#define RUN_MAX_BYTES (1u << 22)

/* The engine features of input @kernels (stream_input.h), within the host's. */
static uint32_t stream_features(uint32_t kernels)
{
	uint32_t host = vnpu_eng_host_features();

	if (kernels == STREAM_KERNELS_BASE)
		return 0;
	return kernels == STREAM_KERNELS_AVX2 ? host & VNPU_ENG_F_AVX2_FMA : host;
}

/* Command @cmd in one part, with the scratch it needs on @features. */
static void run_command(const struct vnpu_cmd_header *cmd, void *const *base, uint32_t features)
{
	struct vnpu_eng_ctx ctx = { .features = features };

	ctx.scratch_size = vnpu_exec_scratch(cmd, 1, features);
	if (ctx.scratch_size > RUN_MAX_BYTES)
		return;
	if (ctx.scratch_size) {
		ctx.scratch = malloc(ctx.scratch_size);
		if (!ctx.scratch)
			return;
	}
	vnpu_exec_part(cmd, base, 0, 1, &ctx);
	free(ctx.scratch);
}

/* Each command of the validated @stream, in one part, over fresh buffers. */
static void run_stream(const void *stream, uint64_t size, const struct stream_slot *slots,
		       uint32_t n, uint32_t features)
{
	const struct vnpu_cmd_header *cmd = NULL;
	void *base[STREAM_MAX_SLOTS] = { 0 };
	uint64_t total = 0;
	uint32_t i, k;

	for (i = 0; i < n; i++)
		total += slots[i].size;
	if (total > RUN_MAX_BYTES)
		return;
	for (i = 0; i < n; i++) {
		k = (slots[i].flags >> STREAM_SLOT_ALIAS_SHIFT) & 0xfu;
		base[i] = k < i ? base[k] : calloc(1, slots[i].size ? slots[i].size : 1);
		if (!base[i])
			goto out;
	}
	while ((cmd = vnpu_stream_next(stream, size, cmd)))
		run_command(cmd, base, features);
out:
	for (i = 0; i < n; i++) {
		k = (slots[i].flags >> STREAM_SLOT_ALIAS_SHIFT) & 0xfu;
		if (k >= i)
			free(base[i]);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vnpu_slot_info info[STREAM_MAX_SLOTS];
	struct stream_slot slots[STREAM_MAX_SLOTS];
	const uint8_t *stream;
	size_t stream_size;
	uint32_t n, i, k, num_cmds;
	uint64_t *copy;

	n = stream_input_parse(data, size, slots, &stream, &stream_size);
	if (!n)
		return 0;
	for (i = 0; i < n; i++) {
		k = (slots[i].flags >> STREAM_SLOT_ALIAS_SHIFT) & 0xfu;
		info[i] = (struct vnpu_slot_info){
			.size = k < i ? slots[k].size : slots[i].size,
			.id = k < i ? info[k].id : i + 1,
			.flags = slots[i].flags & STREAM_SLOT_WRITE ? VNPU_SLOT_INFO_WRITE : 0,
		};
		slots[i].size = (uint32_t)info[i].size;
	}
	/* The device reads streams from 8-byte aligned buffers. */
	copy = malloc(stream_size ? stream_size : 8);
	if (!copy)
		return 0;
	memcpy(copy, stream, stream_size);
	if (!vnpu_stream_validate(copy, stream_size, info, n, &num_cmds) &&
	    vnpu_exec_stream_is_short(copy, stream_size))
		run_stream(copy, stream_size, slots, n, stream_features(data[1] & 3u));
	free(copy);
	return 0;
}

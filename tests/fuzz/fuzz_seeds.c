// SPDX-License-Identifier: MIT
/*
 * Seeds of the blob and command-stream fuzzers, made at build time: each
 * model given is compiled for the CPU; its exported blob goes to BLOB_DIR
 * and the command stream of each of its segments, with its slot table
 * (stream_input.h), to STREAM_DIR. Models that do not compile are skipped.
 *
 *   fuzz-seeds BLOB_DIR STREAM_DIR MODEL.onnx...
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "runtime.h"
#include "stream_input.h"

static int write_file(const char *dir, uint32_t n, const char *ext, const void *head,
		      size_t head_size, const void *data, size_t size)
{
	char path[4096];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "%s/%05u.%s", dir, n, ext);
	f = fopen(path, "wb");
	if (!f)
		return -1;
	ok = fwrite(head, 1, head_size, f) == head_size && fwrite(data, 1, size, f) == size;
	return fclose(f) || !ok ? -1 : 0;
}

/* Each segment's stream and the slot table the model loaded it with. */
static int write_streams(const char *dir, uint32_t *n, const struct vnpu_compiled_model *cm)
{
	const struct vnpu_program *p = cm->program;
	uint8_t head[8 + 8 * STREAM_MAX_SLOTS] = { 0 };
	struct stream_slot s;
	uint32_t num_slots, i;

	/* A model of string tensors runs on the host: it has no program. */
	if (!p)
		return 0;
	num_slots = vnpu_program_num_slots(p);
	if (num_slots > STREAM_MAX_SLOTS)
		return 0;
	head[0] = (uint8_t)(num_slots - 1);
	for (i = 0; i < num_slots; i++) {
		s.size = cm->slots[i].size > UINT32_MAX ? UINT32_MAX : (uint32_t)cm->slots[i].size;
		s.flags = cm->slots[i].writable ? STREAM_SLOT_WRITE : 0;
		/* no alias: every slot its own buffer (k = i) */
		s.flags |= i << STREAM_SLOT_ALIAS_SHIFT;
		memcpy(head + 8 + 8 * i, &s, sizeof(s));
	}
	/* Each stream twice: on the baseline kernels and on the host's widest. */
	for (i = 0; i < 2 * p->num_segments; i++) {
		head[1] = i % 2 ? STREAM_KERNELS_HOST : STREAM_KERNELS_BASE;
		if (write_file(dir, (*n)++, "stream", head, stream_header_size(num_slots),
			       p->segments[i / 2].cmd, p->segments[i / 2].cmd_size))
			return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	uint32_t blobs = 0, streams = 0;
	vnpu_compiled_model *cm;
	vnpu_model *model;
	vnpu_core *core;
	size_t size;
	void *blob;
	int i;

	if (argc < 3) {
		fprintf(stderr, "usage: fuzz-seeds BLOB_DIR STREAM_DIR MODEL.onnx...\n");
		return 2;
	}
	if ((mkdir(argv[1], 0755) && errno != EEXIST) ||
	    (mkdir(argv[2], 0755) && errno != EEXIST) || vnpu_core_create(&core)) {
		fprintf(stderr, "fuzz-seeds: cannot start: %s\n", strerror(errno));
		return 1;
	}
	for (i = 3; i < argc; i++) {
		if (vnpu_core_read_model(core, argv[i], &model))
			continue;
		if (vnpu_core_compile_model(core, model, "CPU", NULL, &cm) == VNPU_OK) {
			if (vnpu_compiled_model_export(cm, &blob, &size) == VNPU_OK) {
				if (write_file(argv[1], blobs++, "blob", "", 0, blob, size))
					fprintf(stderr, "fuzz-seeds: cannot write %s\n", argv[1]);
				vnpu_free(blob);
			}
			if (write_streams(argv[2], &streams, cm))
				fprintf(stderr, "fuzz-seeds: cannot write %s\n", argv[2]);
			vnpu_compiled_model_free(cm);
		}
		vnpu_model_free(model);
	}
	vnpu_core_free(core);
	printf("fuzz-seeds: %u blobs, %u streams from %d models\n", blobs, streams, argc - 3);
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * The header of an exported blob (blob.c), for the code that writes and
 * reads blobs and for the tests that rewrite one as an older library or
 * another device would have written it.
 *
 *   struct vnpu_blob_header
 *   props_size bytes    "KEY=VALUE\n" lines (vnpu_config_text)
 *   program_size bytes  vnpu_program_serialize()
 */
#ifndef VNPU_SRC_BLOB_H
#define VNPU_SRC_BLOB_H

#include <stddef.h>
#include <stdint.h>

#define VNPU_BLOB_MAGIC "VNPUBLOB"
/*
 * 2: tensor descriptors and ports of up to rank 8 (was 6)
 * 3: the NPU's architecture names its command set, not its driver's uAPI
 *    version (see vnpu_blob_architecture())
 */
#define VNPU_BLOB_FORMAT 3
/* The oldest format this library reads: 2 differs only in that name. */
#define VNPU_BLOB_FORMAT_OLDEST 2

/* All little-endian (the only byte order vnpu runs on), 8-byte aligned. */
struct vnpu_blob_header {
	char magic[8];
	uint32_t format;
	uint32_t header_size;
	char library_version[16];
	char device[80];		/* as compiled: "NPU.0", "HETERO:NPU.0,CPU" */
	char architecture[64];		/* of the primary device */
	uint32_t uapi_version;		/* of its driver; not checked at import */
	uint32_t has_fallback;
	uint64_t props_size;
	uint64_t program_size;
	uint64_t checksum;		/* FNV-1a of everything, this field zero */
};

/* Set the checksum of the @size-byte blob at @blob (its header complete). */
void vnpu_blob_seal(void *blob, size_t size);

/*
 * The architecture a device needs to import a blob whose header is @h:
 * its architecture field as the devices name architectures today.
 */
const char *vnpu_blob_architecture(const struct vnpu_blob_header *h);

#endif /* VNPU_SRC_BLOB_H */

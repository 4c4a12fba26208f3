/* SPDX-License-Identifier: MIT */
/*
 * The input of the command-stream fuzzer (fuzz_stream.c), which the seed
 * generator (fuzz_seeds.c) also writes:
 *
 *   byte 0              number of slots - 1 (low 4 bits: 1 to 16 slots)
 *   byte 1              the kernels a valid short stream runs on (low 2
 *                       bits): STREAM_KERNELS_BASE, _AVX2 (AVX2+FMA if the
 *                       host has it), _HOST (3 too: every path it has)
 *   bytes 2..7          unused
 *   8 bytes per slot    u32 size (bytes of its buffer), u32 flags:
 *                       bit 0 writable, bits 8..11 k: the same buffer as
 *                       slot k when k < this slot (else a buffer of its own)
 *   the rest            the command stream (cut to a multiple of 8)
 *
 * All little-endian.
 */
#ifndef VNPU_FUZZ_STREAM_INPUT_H
#define VNPU_FUZZ_STREAM_INPUT_H

#include <stdint.h>
#include <string.h>

#define STREAM_MAX_SLOTS 16
#define STREAM_SLOT_WRITE 0x1u
#define STREAM_SLOT_ALIAS_SHIFT 8
#define STREAM_KERNELS_BASE 0u
#define STREAM_KERNELS_AVX2 1u
#define STREAM_KERNELS_HOST 2u

struct stream_slot {
	uint32_t size;
	uint32_t flags;
};

/* Bytes of the header of an input with @num_slots slots. */
static inline size_t stream_header_size(uint32_t num_slots)
{
	return 8 + 8 * (size_t)num_slots;
}

/*
 * Split @data: the slots into @slots (returns how many), the stream's
 * start and size (a multiple of 8) into @stream and @stream_size. 0 when
 * @data is shorter than its own header.
 */
static inline uint32_t stream_input_parse(const uint8_t *data, size_t size,
					  struct stream_slot *slots,
					  const uint8_t **stream, size_t *stream_size)
{
	uint32_t n, i;

	if (size < 8)
		return 0;
	n = (data[0] & 0xfu) + 1;
	if (size < stream_header_size(n))
		return 0;
	for (i = 0; i < n; i++)
		memcpy(&slots[i], data + 8 + 8 * i, sizeof(slots[i]));
	*stream = data + stream_header_size(n);
	*stream_size = (size - stream_header_size(n)) & ~(size_t)7;
	return n;
}

#endif /* VNPU_FUZZ_STREAM_INPUT_H */

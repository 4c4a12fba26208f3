/* SPDX-License-Identifier: MIT */
/*
 * How the tiles share a command's parts: each tile starts on a run of
 * consecutive parts of its own, and a tile whose run is done takes the
 * back half of the largest run left to another. A tile so runs
 * neighbouring parts one after another: a convolution's window slides on
 * across its parts, a Winograd run's transformed input serves all its
 * units, and the next layer's tile finds much of its input in its own
 * cache, where one shared counter handed the tiles every other part. The
 * runs balance at the end as the counter did, a part at a time.
 */
#ifndef VNPU_CPU_SPLIT_H
#define VNPU_CPU_SPLIT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "cpu_threads.h"

/**
 * struct cpu_split - the parts of one command, over its tiles
 * @tiles: tiles, 1 to CPU_MAX_THREADS
 * @run: each tile's parts left, first | last + 1 << 32, on a cache line
 *	of its own; the owner takes from the front and other tiles from
 *	the back, each with a compare-and-swap; only the owner writes an
 *	empty run
 */
struct cpu_split {
	uint32_t tiles;
	struct {
		_Atomic uint64_t v;
	} __attribute__((aligned(64))) run[CPU_MAX_THREADS];
};

/*
 * Give @parts parts to @tiles tiles (at most CPU_MAX_THREADS; 0 counts as
 * 1) in even runs, in tile order. Not concurrent with cpu_split_next().
 */
void cpu_split_init(struct cpu_split *s, uint32_t parts, uint32_t tiles);

/*
 * The next part for tile @tile (below @s->tiles): the first of its run,
 * or, once that is empty, of the back half it takes of the largest other
 * run. False when no part is left to take. Each part goes to exactly one
 * caller, from any number of threads at once.
 */
bool cpu_split_next(struct cpu_split *s, uint32_t tile, uint32_t *part);

#endif /* VNPU_CPU_SPLIT_H */

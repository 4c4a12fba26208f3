// SPDX-License-Identifier: MIT
/*
 * The tiles' runs of parts (cpu_split.h): lock-free, one 64-bit word per
 * tile, so that taking a part costs one compare-and-swap on a line the
 * other tiles touch only when they steal.
 */
#include "cpu_split.h"

static uint64_t run_of(uint32_t first, uint32_t end)
{
	return (uint64_t)first | (uint64_t)end << 32;
}

static uint32_t run_first(uint64_t r)
{
	return (uint32_t)r;
}

static uint32_t run_end(uint64_t r)
{
	return (uint32_t)(r >> 32);
}

void cpu_split_init(struct cpu_split *s, uint32_t parts, uint32_t tiles)
{
	uint32_t t;

	if (!tiles)
		tiles = 1;
	if (tiles > CPU_MAX_THREADS)
		tiles = CPU_MAX_THREADS;
	s->tiles = tiles;
	for (t = 0; t < tiles; t++)
		atomic_store(&s->run[t].v,
			     run_of((uint32_t)((uint64_t)parts * t / tiles),
				    (uint32_t)((uint64_t)parts * (t + 1) / tiles)));
}

/* Take the first part of @tile's run. */
static bool take_own(struct cpu_split *s, uint32_t tile, uint32_t *part)
{
	uint64_t r = atomic_load(&s->run[tile].v);

	while (run_first(r) < run_end(r)) {
		if (atomic_compare_exchange_weak(&s->run[tile].v, &r,
						 run_of(run_first(r) + 1, run_end(r)))) {
			*part = run_first(r);
			return true;
		}
	}
	return false;
}

/*
 * Take the back half (rounded up) of the largest run of another tile:
 * its first part for now, the rest as @tile's run. @tile's run is empty,
 * so no other tile writes it meanwhile.
 */
static bool steal(struct cpu_split *s, uint32_t tile, uint32_t *part)
{
	uint32_t t, victim, most, mid;
	uint64_t r;

	for (;;) {
		most = 0;
		victim = tile;
		for (t = 0; t < s->tiles; t++) {
			r = atomic_load(&s->run[t].v);
			if (t != tile && run_end(r) - run_first(r) > most &&
			    run_first(r) < run_end(r)) {
				most = run_end(r) - run_first(r);
				victim = t;
			}
		}
		if (victim == tile)
			return false;
		r = atomic_load(&s->run[victim].v);
		if (run_first(r) >= run_end(r))
			continue;
		mid = run_first(r) + (run_end(r) - run_first(r)) / 2;
		if (!atomic_compare_exchange_strong(&s->run[victim].v, &r,
						    run_of(run_first(r), mid)))
			continue;
		*part = mid;
		atomic_store(&s->run[tile].v, run_of(mid + 1, run_end(r)));
		return true;
	}
}

bool cpu_split_next(struct cpu_split *s, uint32_t tile, uint32_t *part)
{
	return take_own(s, tile, part) || steal(s, tile, part);
}

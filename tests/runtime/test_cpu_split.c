// SPDX-License-Identifier: MIT
/*
 * The CPU device's runs of parts (cpu_split.c): every part of a command
 * goes to exactly one tile, for any count of parts and tiles, whichever
 * tiles ask and in whatever order (some never, as a helper asleep);
 * each tile starts on its own neighbouring parts; a tile whose run is
 * done takes the rest from another's back; and so from threads at once.
 * Host only: the plugin's source, no device.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_split.h"
#include "runtime_test.h"

#define MAX_PARTS 4096

static struct cpu_split split;
static _Atomic uint32_t taken[MAX_PARTS];

/*
 * Take every part of @parts over @tiles tiles, asking as tile
 * (i * @stride) % @asking on the i-th call; 0 when each went out once.
 */
static int take_all(uint32_t parts, uint32_t tiles, uint32_t asking, uint32_t stride)
{
	uint32_t part, i, idle = 0, t;

	memset(taken, 0, sizeof(taken));
	cpu_split_init(&split, parts, tiles);
	for (i = 0; idle < asking; i++) {
		t = (i * stride) % asking;
		if (!cpu_split_next(&split, t, &part)) {
			idle++;
			continue;
		}
		idle = 0;
		if (part >= parts || taken[part]++)
			return -1;
	}
	for (part = 0; part < parts; part++)
		if (taken[part] != 1)
			return -1;
	return 0;
}

TEST(every_part_once)
{
	uint32_t parts, tiles, asking, stride;

	for (parts = 0; parts <= 70; parts++)
		for (tiles = 1; tiles <= 9; tiles++)
			for (asking = 1; asking <= tiles; asking++)
				for (stride = 1; stride <= 3; stride++)
					ASSERT_EQ(0, take_all(parts, tiles, asking, stride));
	ASSERT_EQ(0, take_all(MAX_PARTS, CPU_MAX_THREADS, CPU_MAX_THREADS, 7));
	ASSERT_EQ(0, take_all(1000, CPU_MAX_THREADS, 1, 1));	/* one tile does all */
}

TEST(tile_counts_clamped)
{
	uint32_t part;

	cpu_split_init(&split, 5, 0);			/* no tiles: one */
	ASSERT_EQ(1, split.tiles);
	ASSERT_EQ(0, take_all(5, 0, 1, 1));
	cpu_split_init(&split, 100, CPU_MAX_THREADS + 5);
	ASSERT_EQ(CPU_MAX_THREADS, split.tiles);
	cpu_split_init(&split, 0, 2);			/* nothing to take */
	ASSERT_FALSE(cpu_split_next(&split, 0, &part));
	ASSERT_FALSE(cpu_split_next(&split, 1, &part));
}

TEST(own_run_then_steal_back_half)
{
	uint32_t part, i;

	cpu_split_init(&split, 10, 2);
	/* Tile 1 starts on the second half, in order. */
	ASSERT_TRUE(cpu_split_next(&split, 1, &part));
	ASSERT_EQ(5, part);
	ASSERT_TRUE(cpu_split_next(&split, 1, &part));
	ASSERT_EQ(6, part);
	/* Tile 0 runs 0-4, then takes the back half of 7-9: 8, then 9. */
	for (i = 0; i < 5; i++) {
		ASSERT_TRUE(cpu_split_next(&split, 0, &part));
		ASSERT_EQ(i, part);
	}
	ASSERT_TRUE(cpu_split_next(&split, 0, &part));
	ASSERT_EQ(8, part);
	ASSERT_TRUE(cpu_split_next(&split, 1, &part));
	ASSERT_EQ(7, part);
	ASSERT_TRUE(cpu_split_next(&split, 0, &part));
	ASSERT_EQ(9, part);
	ASSERT_FALSE(cpu_split_next(&split, 0, &part));
	ASSERT_FALSE(cpu_split_next(&split, 1, &part));
}

struct taker {
	uint32_t tile;
	uint32_t count;
};

static void *take_thread(void *arg)
{
	struct taker *tk = arg;
	uint32_t part;

	while (cpu_split_next(&split, tk->tile, &part)) {
		atomic_fetch_add(&taken[part], 1);
		tk->count++;
	}
	return NULL;
}

TEST(threads_take_each_part_once)
{
	struct taker tk[8];
	pthread_t th[8];
	uint32_t round, i, n, part, sum;

	for (round = 0; round < 200; round++) {
		n = 2 + round % 7;
		memset(taken, 0, sizeof(taken));
		cpu_split_init(&split, MAX_PARTS - round, n);
		for (i = 0; i < n; i++) {
			tk[i].tile = i;
			tk[i].count = 0;
			ASSERT_EQ(0, pthread_create(&th[i], NULL, take_thread, &tk[i]));
		}
		sum = 0;
		for (i = 0; i < n; i++) {
			ASSERT_EQ(0, pthread_join(th[i], NULL));
			sum += tk[i].count;
		}
		ASSERT_EQ(MAX_PARTS - round, sum);
		for (part = 0; part < MAX_PARTS - round; part++)
			ASSERT_EQ(1, taken[part]);
	}
}

KSFT_MAIN

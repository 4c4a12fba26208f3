// SPDX-License-Identifier: MIT
/*
 * The CPU device's choice between one part and a split (cpu_fine.c), fed
 * synthetic times: the first choice from the least of the first runs,
 * taken in turns; a run the other way every so many runs, less often
 * while the choice holds; a new choice when the times change, as they do
 * when the hypervisor moves the vCPUs; one slow run alone changes
 * nothing. Host only: the plugin's source, no device, no clock.
 */
#include <string.h>

#include "cpu_fine.h"
#include "runtime_test.h"

/* Run the command the way it asks, taking @one_ns or @split_ns: that way. */
static enum cpu_fine_way run(struct cpu_fine *f, uint64_t one_ns, uint64_t split_ns)
{
	enum cpu_fine_way way = cpu_fine_next(f);

	cpu_fine_took(f, way, way == CPU_FINE_ONE ? one_ns : split_ns);
	return way;
}

/* Runs until the first choice, with the times of the first runs each way. */
static void first_runs(struct cpu_fine *f, const uint64_t *one_ns, const uint64_t *split_ns)
{
	uint32_t i;

	memset(f, 0, sizeof(*f));
	for (i = 0; i < CPU_FINE_RUNS; i++) {
		cpu_fine_took(f, CPU_FINE_ONE, one_ns[i]);
		cpu_fine_took(f, CPU_FINE_SPLIT, split_ns[i]);
	}
}

/* Runs the chosen way until the next run the other way; how many. */
static uint32_t runs_to_probe(struct cpu_fine *f, uint64_t one_ns, uint64_t split_ns)
{
	enum cpu_fine_way way = cpu_fine_next(f);
	uint32_t n = 0;

	while (cpu_fine_next(f) == way && n < 10000) {
		run(f, one_ns, split_ns);
		n++;
	}
	return n;
}

TEST(first_choice_in_turns_least_wins)
{
	static const uint64_t one[] = { 50, 20, 60 }, split[] = { 15, 90, 90 };
	struct cpu_fine f = { 0 };
	uint32_t i;

	/* Nothing run yet: no split for it. */
	ASSERT_FALSE(cpu_fine_splits(&f));
	for (i = 0; i < CPU_FINE_RUNS; i++) {
		ASSERT_EQ(CPU_FINE_ONE, run(&f, one[i], 0));
		ASSERT_TRUE(cpu_fine_splits(&f));
		ASSERT_EQ(CPU_FINE_SPLIT, run(&f, 0, split[i]));
	}
	/* 15 < 20: the least of each way, not the means. */
	ASSERT_EQ(CPU_FINE_SPLIT, cpu_fine_next(&f));
	ASSERT_TRUE(cpu_fine_splits(&f));

	/* A tie stays in one part. */
	first_runs(&f, (const uint64_t[]){ 30, 30, 30 }, (const uint64_t[]){ 30, 40, 30 });
	ASSERT_EQ(CPU_FINE_ONE, cpu_fine_next(&f));
	ASSERT_FALSE(cpu_fine_splits(&f));

	/* Runs one way beyond its first ones do not choose early. */
	memset(&f, 0, sizeof(f));
	for (i = 0; i < 2 * CPU_FINE_RUNS; i++)
		cpu_fine_took(&f, CPU_FINE_ONE, 10);
	ASSERT_EQ(CPU_FINE_SPLIT, cpu_fine_next(&f));
	for (i = 0; i + 1 < CPU_FINE_RUNS; i++)
		cpu_fine_took(&f, CPU_FINE_SPLIT, 5);
	ASSERT_EQ(CPU_FINE_SPLIT, cpu_fine_next(&f));
	cpu_fine_took(&f, CPU_FINE_SPLIT, 5);
	ASSERT_EQ(CPU_FINE_SPLIT, cpu_fine_next(&f));
	ASSERT_EQ(CPU_FINE_EVERY, runs_to_probe(&f, 10, 5));
}

TEST(other_way_less_often_while_choice_holds)
{
	struct cpu_fine f;
	uint32_t every = CPU_FINE_EVERY, i;

	first_runs(&f, (const uint64_t[]){ 20, 20, 20 }, (const uint64_t[]){ 40, 40, 40 });
	for (i = 0; i < 8; i++) {
		ASSERT_EQ(every, runs_to_probe(&f, 20, 40));
		/* A run in one part asks for no split; a run the other way does. */
		ASSERT_TRUE(cpu_fine_splits(&f));
		ASSERT_EQ(CPU_FINE_SPLIT, run(&f, 20, 40));
		ASSERT_FALSE(cpu_fine_splits(&f));
		ASSERT_EQ(CPU_FINE_ONE, cpu_fine_next(&f));
		every = every * 2 > CPU_FINE_EVERY_MAX ? CPU_FINE_EVERY_MAX : every * 2;
	}
	ASSERT_EQ(CPU_FINE_EVERY_MAX, runs_to_probe(&f, 20, 40));
}

/* Near vCPUs, then far: one part slows fivefold; split, the other way, wins. */
TEST(slower_chosen_way_tries_other_soon)
{
	struct cpu_fine f;
	uint32_t n;

	first_runs(&f, (const uint64_t[]){ 20, 21, 22 }, (const uint64_t[]){ 30, 30, 31 });
	ASSERT_EQ(CPU_FINE_ONE, cpu_fine_next(&f));
	/* Its choice held a while: the other way waits CPU_FINE_EVERY_MAX runs. */
	for (n = 0; n < 8 && f.every < CPU_FINE_EVERY_MAX; n++) {
		runs_to_probe(&f, 20, 30);
		run(&f, 20, 30);
	}
	ASSERT_EQ(CPU_FINE_EVERY_MAX, f.every);
	n = runs_to_probe(&f, 100, 30);
	ASSERT_LE(2, n);
	ASSERT_GE(4, n);
	ASSERT_EQ(CPU_FINE_SPLIT, run(&f, 100, 30));
	ASSERT_EQ(CPU_FINE_SPLIT, cpu_fine_next(&f));
	/* And the other way again within CPU_FINE_EVERY runs. */
	ASSERT_EQ(CPU_FINE_EVERY, runs_to_probe(&f, 100, 30));
	ASSERT_EQ(CPU_FINE_ONE, run(&f, 100, 30));
	ASSERT_EQ(CPU_FINE_SPLIT, cpu_fine_next(&f));
}

/* Far, then near: split still runs as fast, but one part now runs faster. */
TEST(faster_other_way_found_by_its_runs)
{
	struct cpu_fine f;
	uint32_t i;

	first_runs(&f, (const uint64_t[]){ 100, 90, 95 }, (const uint64_t[]){ 30, 31, 30 });
	ASSERT_EQ(CPU_FINE_SPLIT, cpu_fine_next(&f));
	for (i = 0; i < 3; i++) {
		runs_to_probe(&f, 95, 30);
		ASSERT_EQ(CPU_FINE_ONE, run(&f, 95, 30));
	}
	ASSERT_EQ(CPU_FINE_SPLIT, cpu_fine_next(&f));
	ASSERT_EQ(CPU_FINE_EVERY << 3, runs_to_probe(&f, 20, 30));
	ASSERT_EQ(CPU_FINE_ONE, run(&f, 20, 30));
	ASSERT_EQ(CPU_FINE_ONE, cpu_fine_next(&f));
	ASSERT_FALSE(cpu_fine_splits(&f));
	ASSERT_EQ(CPU_FINE_EVERY, runs_to_probe(&f, 20, 30));
}

/* One preempted run (a thousand times as long) moves nothing. */
TEST(one_slow_run_changes_nothing)
{
	struct cpu_fine f;

	first_runs(&f, (const uint64_t[]){ 20, 20, 20 }, (const uint64_t[]){ 30, 30, 30 });
	run(&f, 20, 30);
	ASSERT_EQ(CPU_FINE_ONE, run(&f, 20000, 30));
	ASSERT_EQ(CPU_FINE_ONE, cpu_fine_next(&f));
	ASSERT_GE(35, f.est[CPU_FINE_ONE]);
	/* Runs as before bring the estimate back down. */
	ASSERT_EQ(CPU_FINE_ONE, run(&f, 20, 30));
	ASSERT_EQ(CPU_FINE_ONE, run(&f, 20, 30));
	ASSERT_GE(25, f.est[CPU_FINE_ONE]);
	ASSERT_EQ(CPU_FINE_ONE, cpu_fine_next(&f));
	/* A slow run the other way keeps the choice too. */
	runs_to_probe(&f, 20, 30);
	ASSERT_EQ(CPU_FINE_SPLIT, run(&f, 20, 30000));
	ASSERT_EQ(CPU_FINE_ONE, cpu_fine_next(&f));
}

/*
 * Whole jobs against jobs over the tiles (@blocks): each way's first runs
 * in a row (CPU_FINE_BLOCK), then as many runs the other way in a row
 * every CPU_FINE_BLOCK_EVERY runs at first, the least counting; whole by
 * a sixteenth. oww_embedding's bf16 jobs, the vCPUs on two CCDs, took 655
 * us whole and 720 us split, but 960 us whole after split runs (what the
 * other CPU's cache held): one run each way in turns chose split.
 */
TEST(blocks_for_whole_jobs)
{
	struct cpu_fine f = { .blocks = true };
	uint32_t i;

	for (i = 0; i < CPU_FINE_BLOCK; i++)
		ASSERT_EQ(CPU_FINE_ONE, run(&f, i ? 655000 : 960000, 0));
	for (i = 0; i < CPU_FINE_BLOCK; i++)
		ASSERT_EQ(CPU_FINE_SPLIT, run(&f, 0, i ? 720000 : 800000));
	ASSERT_EQ(CPU_FINE_ONE, cpu_fine_next(&f));
	ASSERT_EQ(655000, f.est[CPU_FINE_ONE]);

	/* The vCPUs moved to one L3: split takes 430 us, 900 us first. */
	ASSERT_EQ(CPU_FINE_BLOCK_EVERY, runs_to_probe(&f, 655000, 0));
	for (i = 0; i < CPU_FINE_BLOCK; i++)
		ASSERT_EQ(CPU_FINE_SPLIT, run(&f, 0, i ? 430000 : 900000));
	ASSERT_EQ(CPU_FINE_SPLIT, cpu_fine_next(&f));
	ASSERT_TRUE(cpu_fine_splits(&f));
	/* Whole again, in a row, its first run slow too: split holds. */
	ASSERT_EQ(CPU_FINE_BLOCK_EVERY, runs_to_probe(&f, 0, 430000));
	for (i = 0; i < CPU_FINE_BLOCK; i++)
		ASSERT_EQ(CPU_FINE_ONE, run(&f, i ? 420000 : 960000, 0));
	ASSERT_EQ(CPU_FINE_SPLIT, cpu_fine_next(&f));
	ASSERT_EQ(2 * CPU_FINE_BLOCK_EVERY, runs_to_probe(&f, 0, 430000));

	/* Whole faster by less than a sixteenth: split; by more: whole. */
	memset(&f, 0, sizeof(f));
	f.blocks = true;
	for (i = 0; i < 2 * CPU_FINE_BLOCK; i++)
		run(&f, 640000, 679000);
	ASSERT_EQ(CPU_FINE_SPLIT, cpu_fine_next(&f));
	memset(&f, 0, sizeof(f));
	f.blocks = true;
	for (i = 0; i < 2 * CPU_FINE_BLOCK; i++)
		run(&f, 639000, 679000);
	ASSERT_EQ(CPU_FINE_ONE, cpu_fine_next(&f));

	/* Without blocks, one run the other way counts: a slow one keeps the choice. */
	memset(&f, 0, sizeof(f));
	first_runs(&f, (const uint64_t[]){ 655000, 655000, 655000 },
		   (const uint64_t[]){ 720000, 720000, 720000 });
	ASSERT_EQ(CPU_FINE_ONE, cpu_fine_next(&f));
	runs_to_probe(&f, 655000, 0);
	ASSERT_EQ(CPU_FINE_SPLIT, run(&f, 0, 900000));
	ASSERT_EQ(CPU_FINE_ONE, cpu_fine_next(&f));
}

/* A zero time (a coarse clock) counts as 1 ns, and none overflows. */
TEST(extreme_times)
{
	struct cpu_fine f;

	first_runs(&f, (const uint64_t[]){ 0, 0, 0 }, (const uint64_t[]){ 0, 0, 0 });
	ASSERT_EQ(CPU_FINE_ONE, cpu_fine_next(&f));
	first_runs(&f, (const uint64_t[]){ UINT64_MAX, UINT64_MAX, UINT64_MAX },
		   (const uint64_t[]){ UINT64_MAX - 1, UINT64_MAX, UINT64_MAX });
	ASSERT_EQ(CPU_FINE_SPLIT, cpu_fine_next(&f));
	run(&f, UINT64_MAX, UINT64_MAX);
	ASSERT_EQ(UINT64_MAX - 1, f.est[CPU_FINE_SPLIT]);
}

KSFT_MAIN

/* SPDX-License-Identifier: MIT */
/*
 * Whether a command runs in one part or split over the tiles, from its
 * own times (cpu_plugin.c's cmd_parts()), or a small program's jobs whole
 * or over the tiles (run_job()). A first choice from the least
 * of CPU_FINE_RUNS runs each way, taken in turns, one part first, so that
 * the host's speed, which swings for seconds at a time, and a job's cold
 * first run weigh on both alike. The choice is then kept under watch:
 * where the hypervisor puts the two vCPUs changes every few minutes, and
 * with it which way wins (mobilenetv3_large_qdq's element-wise layers,
 * reading what both tiles wrote, took 3-10x as long in one part when the
 * vCPUs sat on cores of different CCDs as on cores sharing an L3). Each
 * run of the chosen way moves a running estimate of its time (fast down,
 * slowly up, a run's outlier bounded); every so many runs (CPU_FINE_EVERY
 * doubling up to CPU_FINE_EVERY_MAX while the choice holds), or as soon
 * as the chosen way's estimate rose by half since it was chosen, one run
 * takes the other way, and the faster of the two is the choice from then
 * on. Plain arithmetic on the times given: the tests feed it synthetic
 * ones.
 */
#ifndef VNPU_CPU_FINE_H
#define VNPU_CPU_FINE_H

#include <stdbool.h>
#include <stdint.h>

/* Runs each way before the first choice. */
#define CPU_FINE_RUNS 3
/*
 * In blocks (@blocks): runs a way takes in a row, its first ones and each
 * time the other way; runs of the chosen way between the first two runs
 * the other way.
 */
#define CPU_FINE_BLOCK 2
#define CPU_FINE_BLOCK_EVERY 32
/* Runs of the chosen way between two runs the other way: at first, and at most. */
#define CPU_FINE_EVERY 8
#define CPU_FINE_EVERY_MAX 128

enum cpu_fine_way {
	CPU_FINE_ONE,		/* one part, on the job's thread */
	CPU_FINE_SPLIT,		/* split over the tiles */
};

/**
 * struct cpu_fine - one command's choice between one part and a split
 * @est: each way's time in ns: the least of the first runs, then the
 *	chosen way's running estimate and the other's last run
 * @base: the chosen way's estimate when it was chosen
 * @runs: the first runs each way, up to CPU_FINE_RUNS
 * @way: the chosen way, once each way has its first runs
 * @probe: the next run takes the other way
 * @since: runs of the chosen way since the last run the other way
 * @every: runs of the chosen way due before the next run the other way
 * @blocks: set before the first run: each way's first runs come in a row
 *	(one part's first), and so do the runs the other way each time
 *	(CPU_FINE_BLOCK), the least of them counting, less often
 *	(CPU_FINE_BLOCK_EVERY), and one part is chosen only when faster by a
 *	sixteenth; for whole jobs, whose first run after runs the other way
 *	reads what the other CPU's cache holds, and which have more runs to
 *	spare on the slower way (struct vnpu_exe's @whole)
 * @probed: runs the other way in a row so far
 *
 * Zeroed: no run yet, in turns. Not thread-safe: one thread at a time
 * runs the command's jobs over the tiles.
 */
struct cpu_fine {
	uint64_t est[2];
	uint64_t base;
	uint8_t runs[2];
	uint8_t way;
	bool probe;
	uint16_t since, every;
	bool blocks;
	uint8_t probed;
};

/* The way the command's next run should take. */
enum cpu_fine_way cpu_fine_next(const struct cpu_fine *f);

/*
 * Whether jobs with the command should be split over the tiles for it:
 * it splits now, or will try to, once it has run in one part.
 */
bool cpu_fine_splits(const struct cpu_fine *f);

/* The command took @ns when run @way. */
void cpu_fine_took(struct cpu_fine *f, enum cpu_fine_way way, uint64_t ns);

#endif /* VNPU_CPU_FINE_H */

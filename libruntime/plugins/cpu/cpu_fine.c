// SPDX-License-Identifier: MIT
/*
 * One command's choice between one part and a split, from its times
 * (cpu_fine.h). Integer arithmetic on the times it is given, nothing else.
 */
#include "cpu_fine.h"

/* Runs each way before the first choice. */
static uint8_t first_runs(const struct cpu_fine *f)
{
	return f->blocks ? CPU_FINE_BLOCK : CPU_FINE_RUNS;
}

/* Runs of the chosen way before the first run the other way, after a choice. */
static uint16_t first_every(const struct cpu_fine *f)
{
	return f->blocks ? CPU_FINE_BLOCK_EVERY : CPU_FINE_EVERY;
}

/* Each way has had its first runs: the choice is made. */
static bool chosen(const struct cpu_fine *f)
{
	return f->runs[CPU_FINE_ONE] >= first_runs(f) &&
	       f->runs[CPU_FINE_SPLIT] >= first_runs(f);
}

static enum cpu_fine_way other(enum cpu_fine_way way)
{
	return way == CPU_FINE_ONE ? CPU_FINE_SPLIT : CPU_FINE_ONE;
}

enum cpu_fine_way cpu_fine_next(const struct cpu_fine *f)
{
	if (!chosen(f) && f->blocks)
		return f->runs[CPU_FINE_ONE] < CPU_FINE_BLOCK ? CPU_FINE_ONE : CPU_FINE_SPLIT;
	if (!chosen(f))
		return f->runs[CPU_FINE_ONE] > f->runs[CPU_FINE_SPLIT] ?
		       CPU_FINE_SPLIT : CPU_FINE_ONE;
	return f->probe ? other(f->way) : f->way;
}

bool cpu_fine_splits(const struct cpu_fine *f)
{
	if (!chosen(f))
		return f->runs[CPU_FINE_ONE] > 0;
	return f->way == CPU_FINE_SPLIT || f->probe;
}

/*
 * The chosen way's estimate after a run of @ns: halfway down to a faster
 * run, an eighth of the way up to a slower one, and no run counts as more
 * than four times the estimate (one preempted run). So it follows the
 * quicker of the recent runs, and a lasting slowdown within a few runs.
 */
static uint64_t track(uint64_t est, uint64_t ns)
{
	if (ns < est)
		return est - (est - ns) / 2;
	if (ns / 4 > est)
		ns = 4 * est;
	return est + (ns - est) / 8;
}

/*
 * Take the faster way from now on; run the other one again in a while.
 * In blocks, one part must be faster by a sixteenth: whole jobs took
 * within a few percent of split ones on two CCDs (mobilenetv3_large,
 * oww_embedding in f32), where the least of three runs chose either.
 */
static void choose(struct cpu_fine *f, uint16_t every)
{
	uint64_t one = f->est[CPU_FINE_ONE];

	if (f->blocks)
		one = one > UINT64_MAX - one / 16 ? UINT64_MAX : one + one / 16;
	f->way = f->est[CPU_FINE_SPLIT] < one ? CPU_FINE_SPLIT : CPU_FINE_ONE;
	f->base = f->est[f->way];
	f->probe = false;
	f->since = 0;
	f->every = every;
}

void cpu_fine_took(struct cpu_fine *f, enum cpu_fine_way way, uint64_t ns)
{
	enum cpu_fine_way was;

	if (!ns)
		ns = 1;
	if (!chosen(f)) {
		if (!f->runs[way] || ns < f->est[way])
			f->est[way] = ns;
		if (f->runs[way] < first_runs(f))
			f->runs[way]++;
		if (chosen(f))
			choose(f, first_every(f));
		return;
	}
	if (way == f->way) {
		f->est[way] = track(f->est[way], ns);
		if (f->since < f->every)
			f->since++;
		/* Due, or slower by half since chosen: the other way may win now. */
		if (f->since >= f->every || (f->est[way] > f->base &&
		     f->est[way] - f->base > f->base / 2))
			f->probe = true;
		return;
	}
	/*
	 * A run the other way: its time now (in blocks, the least of the
	 * probe's runs), against the chosen way's.
	 */
	if (f->probed && ns > f->est[way])
		ns = f->est[way];
	f->est[way] = ns;
	if (f->blocks && ++f->probed < CPU_FINE_BLOCK)
		return;
	f->probed = 0;
	was = f->way;
	choose(f, f->every);
	if (f->way != was)
		f->every = first_every(f);
	else if (f->every < CPU_FINE_EVERY_MAX)
		f->every *= 2;
}

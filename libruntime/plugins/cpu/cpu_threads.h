/* SPDX-License-Identifier: MIT */
/*
 * How many threads the CPU device runs by default: the CPUs the process
 * may run on (sched_getaffinity) within its cgroup's CPU limit (v2
 * cpu.max, v1 cpu.cfs_quota_us / cpu.cfs_period_us, the tightest of its
 * cgroup and their parents), at least 1 and at most CPU_MAX_THREADS.
 */
#ifndef VNPU_CPU_THREADS_H
#define VNPU_CPU_THREADS_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CPU_MAX_THREADS 64

/* The default for this process: cpu_default_threads_at("/sys/fs/cgroup", ...). */
uint32_t cpu_default_threads(void);

/*
 * The CPUs a cgroup limit allows, for the process whose /proc/<pid>/cgroup
 * is @proc_cgroup, with the cgroup file systems mounted under
 * @cgroup_root (v2 there, v1 in its "cpu,cpuacct" or "cpu" folder);
 * 0 when nothing limits it. A separate function so tests can give it a
 * tree of their own.
 */
uint32_t cpu_cgroup_limit(const char *cgroup_root, const char *proc_cgroup);

/**
 * struct cpu_load - one reading of how busy the process's CPUs are
 * @wall_ns: when, CLOCK_MONOTONIC
 * @busy_ns: busy time of the CPUs in the affinity mask, every process's
 *	(/proc/stat: user, nice, system, irq, softirq, steal)
 * @self_ns: this process's CPU time (CLOCK_PROCESS_CPUTIME_ID)
 */
struct cpu_load {
	int64_t wall_ns;
	int64_t busy_ns;
	int64_t self_ns;
};

/*
 * Take a reading, with @stat a /proc/stat and @set (of @setsize bytes)
 * the CPUs to count; 0 on success, -1 when @stat says nothing of them.
 */
int cpu_load_read(const char *stat, const cpu_set_t *set, size_t setsize,
		  struct cpu_load *out);

/*
 * Thousandths of a CPU that other processes kept busy between readings
 * @a and @b: the CPUs' busy time less this process's, over the time
 * between them (0 when there is none).
 */
int64_t cpu_load_others_mcpu(const struct cpu_load *a, const struct cpu_load *b);

/*
 * Which of a program's two arena plans the CPU device runs (cpu_plugin.c):
 * the own-bytes one while its tiles sit apart (on two CCDs, no shared
 * L3), where the lines a greedy plan reuses were cached by the other
 * tile and each write costs a remote invalidation; the greedy one near
 * and on one CPU, where its small footprint stays in L2/L3. Apart is told
 * by the cache line round trip between two tiles, the median of a few:
 * 50-130 ns near, 290-385 ns apart on the EPYC hosts measured. A reading
 * at or above CPU_RT_APART_NS counts apart, at or under CPU_RT_NEAR_NS
 * near; one between them, or above CPU_RT_MAX_NS (a tile was off its
 * CPU: the host's load, not the placement), says nothing. The first
 * reading that says something is the answer (a process's first second
 * counts: a short benchmark's whole run); from then on it changes only
 * after CPU_RT_STREAK readings in a row say the other.
 */
#define CPU_RT_NEAR_NS 160
#define CPU_RT_APART_NS 240
#define CPU_RT_MAX_NS 1000
#define CPU_RT_STREAK 2

struct cpu_plan {
	bool known;		/* a reading said something */
	bool apart;		/* the answer: run the own-bytes plan */
	uint32_t streak;	/* readings in a row that said the other */
};

/* Take a round trip of @rt_ns (negative: none) into @p; returns @p->apart. */
bool cpu_plan_update(struct cpu_plan *p, int64_t rt_ns);

#endif /* VNPU_CPU_THREADS_H */

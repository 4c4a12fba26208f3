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

#endif /* VNPU_CPU_THREADS_H */

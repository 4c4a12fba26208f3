/* SPDX-License-Identifier: MIT */
/*
 * How many threads the CPU device runs by default: the CPUs the process
 * may run on (sched_getaffinity) within its cgroup's CPU limit (v2
 * cpu.max, v1 cpu.cfs_quota_us / cpu.cfs_period_us, the tightest of its
 * cgroup and their parents), at least 1 and at most CPU_MAX_THREADS.
 */
#ifndef VNPU_CPU_THREADS_H
#define VNPU_CPU_THREADS_H

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

#endif /* VNPU_CPU_THREADS_H */

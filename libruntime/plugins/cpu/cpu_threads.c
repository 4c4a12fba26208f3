// SPDX-License-Identifier: MIT
/*
 * The CPU device's default thread count (INFERENCE_NUM_THREADS): one
 * thread per CPU the process may really use. Counting online CPUs
 * oversubscribes a process under taskset or in a container whose cgroup
 * gives it a share of the machine: its threads then take turns on fewer
 * CPUs, and each command waits for its slowest part.
 */
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cpu_threads.h"

/* The CPUs in the process's affinity mask; 0 when it cannot be read. */
static uint32_t affinity_cpus(void)
{
	int n = 0, ncpus;
	cpu_set_t *set;
	size_t size;

	/* Grow the mask until the kernel's fits (EINVAL when too small). */
	for (ncpus = 1024; ncpus <= (1 << 16); ncpus *= 2) {
		set = CPU_ALLOC(ncpus);
		if (!set)
			return 0;
		size = CPU_ALLOC_SIZE(ncpus);
		if (sched_getaffinity(0, size, set) == 0) {
			n = CPU_COUNT_S(size, set);
			CPU_FREE(set);
			return (uint32_t)n;
		}
		CPU_FREE(set);
	}
	return 0;
}

/* Read the first line of @path into @buf; false when it cannot. */
static int read_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	int ok;

	if (!f)
		return 0;
	ok = fgets(buf, (int)size, f) != NULL;
	fclose(f);
	return ok;
}

/* ceil(quota / period) as CPUs, 0 for no limit or a value not understood. */
static uint32_t quota_cpus(long long quota, long long period)
{
	long long n;

	if (quota <= 0 || period <= 0)
		return 0;
	n = (quota + period - 1) / period;
	return n > CPU_MAX_THREADS ? CPU_MAX_THREADS : (uint32_t)n;
}

/* cgroup v2: cpu.max is "max PERIOD" or "QUOTA PERIOD". */
static uint32_t v2_limit(const char *dir)
{
	char path[PATH_MAX], line[128];
	long long quota, period;

	if (snprintf(path, sizeof(path), "%s/cpu.max", dir) >= (int)sizeof(path) ||
	    !read_line(path, line, sizeof(line)))
		return 0;
	if (sscanf(line, "%lld %lld", &quota, &period) != 2)
		return 0;	/* "max": no limit here */
	return quota_cpus(quota, period);
}

/* cgroup v1: cpu.cfs_quota_us (-1: no limit) over cpu.cfs_period_us. */
static uint32_t v1_limit(const char *dir)
{
	char path[PATH_MAX], line[64];
	long long quota, period;

	if (snprintf(path, sizeof(path), "%s/cpu.cfs_quota_us", dir) >= (int)sizeof(path) ||
	    !read_line(path, line, sizeof(line)) || sscanf(line, "%lld", &quota) != 1)
		return 0;
	if (snprintf(path, sizeof(path), "%s/cpu.cfs_period_us", dir) >= (int)sizeof(path) ||
	    !read_line(path, line, sizeof(line)) || sscanf(line, "%lld", &period) != 1)
		return 0;
	return quota_cpus(quota, period);
}

/*
 * The tightest limit of cgroup @cg (a path from the hierarchy's root) and
 * its parents, under the hierarchy mounted at @mount.
 */
static uint32_t walk_limits(const char *mount, const char *cg,
			    uint32_t (*limit)(const char *dir))
{
	char dir[PATH_MAX];
	uint32_t best = 0, n;
	char *slash;

	if (strstr(cg, "..") ||
	    snprintf(dir, sizeof(dir), "%s%s", mount, cg) >= (int)sizeof(dir))
		return 0;
	for (;;) {
		n = limit(dir);
		if (n && (!best || n < best))
			best = n;
		slash = strrchr(dir, '/');
		if (!slash || (size_t)(slash - dir) < strlen(mount))
			break;
		*slash = '\0';
	}
	return best;
}

/* Whether the comma-separated @list names controller "cpu". */
static int has_cpu_controller(const char *list)
{
	size_t len;

	while (*list) {
		len = strcspn(list, ",");
		if (len == 3 && !strncmp(list, "cpu", 3))
			return 1;
		list += len + (list[len] == ',');
	}
	return 0;
}

uint32_t cpu_cgroup_limit(const char *cgroup_root, const char *proc_cgroup)
{
	static const char *const v1_mounts[] = { "cpu,cpuacct", "cpu" };
	char line[PATH_MAX + 64], mount[PATH_MAX];
	uint32_t best = 0, n;
	char *ctrl, *cg;
	size_t i;
	FILE *f;

	f = fopen(proc_cgroup, "r");
	if (!f)
		return 0;
	/* Lines "ID:CONTROLLERS:PATH"; v2's is "0::PATH". */
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		ctrl = strchr(line, ':');
		cg = ctrl ? strchr(ctrl + 1, ':') : NULL;
		if (!cg || cg[1] != '/')
			continue;
		*cg++ = '\0';
		ctrl++;
		n = 0;
		if (!*ctrl) {
			n = walk_limits(cgroup_root, cg, v2_limit);
		} else if (has_cpu_controller(ctrl)) {
			for (i = 0; i < 2 && !n; i++) {
				snprintf(mount, sizeof(mount), "%s/%s", cgroup_root, v1_mounts[i]);
				n = walk_limits(mount, cg, v1_limit);
			}
		}
		if (n && (!best || n < best))
			best = n;
	}
	fclose(f);
	return best;
}

uint32_t cpu_default_threads(void)
{
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	uint32_t n = affinity_cpus(), limit;

	if (!n)
		n = online > 0 ? (uint32_t)online : 1;
	limit = cpu_cgroup_limit("/sys/fs/cgroup", "/proc/self/cgroup");
	if (limit && limit < n)
		n = limit;
	return n > CPU_MAX_THREADS ? CPU_MAX_THREADS : n;
}

static int64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	if (clock_gettime(id, &ts))
		return 0;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*
 * Busy ticks of "cpuN" lines whose N is in @set: user, nice, system,
 * irq, softirq and steal (idle and iowait are not busy; guest time is
 * in user already). -1 when no line counted.
 */
static int64_t busy_ticks(FILE *f, const cpu_set_t *set, size_t setsize)
{
	unsigned long long v[8];
	char line[512];
	int64_t busy = 0;
	int counted = 0, cpu;

	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "cpu", 3) || line[3] < '0' || line[3] > '9')
			continue;
		if (sscanf(line + 3, "%d %llu %llu %llu %llu %llu %llu %llu %llu", &cpu,
			   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) != 9 ||
		    cpu < 0 || !CPU_ISSET_S((size_t)cpu, setsize, set))
			continue;
		busy += (int64_t)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]);
		counted = 1;
	}
	return counted ? busy : -1;
}

int cpu_load_read(const char *stat, const cpu_set_t *set, size_t setsize,
		  struct cpu_load *out)
{
	long hz = sysconf(_SC_CLK_TCK);
	int64_t ticks;
	FILE *f;

	f = fopen(stat, "re");
	if (!f)
		return -1;
	ticks = busy_ticks(f, set, setsize);
	fclose(f);
	if (ticks < 0 || hz <= 0)
		return -1;
	out->wall_ns = clock_ns(CLOCK_MONOTONIC);
	out->busy_ns = ticks * (1000000000 / hz);
	out->self_ns = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	return 0;
}

int64_t cpu_load_others_mcpu(const struct cpu_load *a, const struct cpu_load *b)
{
	int64_t wall = b->wall_ns - a->wall_ns;
	int64_t others = (b->busy_ns - a->busy_ns) - (b->self_ns - a->self_ns);

	if (wall <= 0 || others <= 0)
		return 0;
	return others / (wall / 1000 ? wall / 1000 : 1);
}

bool cpu_plan_update(struct cpu_plan *p, int64_t rt_ns)
{
	bool apart;

	if (rt_ns < 0 || rt_ns > CPU_RT_MAX_NS ||
	    (rt_ns > CPU_RT_NEAR_NS && rt_ns < CPU_RT_APART_NS))
		return p->apart;
	apart = rt_ns >= CPU_RT_APART_NS;
	if (!p->known) {
		p->known = true;
		p->apart = apart;
	}
	if (apart == p->apart) {
		p->streak = 0;
		return p->apart;
	}
	if (++p->streak >= CPU_RT_STREAK) {
		p->apart = apart;
		p->streak = 0;
	}
	return p->apart;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * vnpu under stress, in the VM harness (module reloads, device-wide
 * counters: runs alone):
 *
 * - kill_storm: VNPU_STRESS_PROCS processes run VNPU_STRESS_JOBS jobs each,
 *   several in flight, checking every result, while half of them are
 *   killed with SIGKILL at random moments: every survivor gets every
 *   completion with the right data, and once all are gone no file, BO,
 *   job or byte of BO memory is left.
 * - hang_reset_cycles: VNPU_STRESS_RESETS jobs that never finish, each
 *   ended by a device reset (the module reloaded with timeout_ms =
 *   VNPU_STRESS_TIMEOUT_MS), while another process runs ordinary jobs:
 *   each hung job ends TIMEOUT, the reset count grows by exactly that
 *   many, and every ordinary job ends OK with the right data.
 * - memory_pressure: with mem_limit_mb = 64, processes allocate, touch and
 *   use BOs past the limit for VNPU_STRESS_ROUNDS rounds each, while
 *   another process runs ordinary jobs: past the limit BO_CREATE and
 *   BO_USERPTR fail with ENOMEM and nothing else, the charge never exceeds
 *   the limit, and the other process's jobs all end right.
 * - rmmod_refused_while_open: delete_module (what rmmod calls) fails with
 *   EWOULDBLOCK, VNPU_STRESS_RMMOD times, while a file is open and another
 *   process's jobs run; the jobs end right; once the file is closed the
 *   module unloads.
 *
 * Each test ends with the module loaded again with the harness's
 * parameters. The defaults are short (the 'vm' suite of make check);
 * tests/vm/stress runs the full figures. VNPU_STRESS_SEED changes the
 * random choices.
 */
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "vnpu_test.h"

#define STRESS_DEPTH 4		/* jobs a process keeps in flight */
#define STRESS_REGIONS 8	/* result regions of its BO, > STRESS_DEPTH */
#define STRESS_ELEMS 256	/* u32 a job fills */
#define STRESS_BO_SIZE (STRESS_REGIONS * STRESS_ELEMS * 4)

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

/* The first debugfs "state" figure of what processes hold that is not 0. */
static const char *figure_left(void)
{
	static const char *const keys[] = {
		"clients", "file_records", "job_records", "bos", "mem_used",
		"jobs_in_flight",
	};
	unsigned int i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (vnpu_state_figure(keys[i]))
			return keys[i];
	return NULL;
}

/*
 * Nothing of any process is left on the device once they are gone: the
 * caller holds no file. Jobs of killed processes may still be draining:
 * wait for them first (up to a minute of TCG).
 */
static void assert_nothing_left(struct __test_metadata *_metadata)
{
	const char *left = figure_left();
	int tries;

	for (tries = 0; left && tries < 600; tries++) {
		usleep(100000);
		left = figure_left();
	}
	EXPECT_EQ(NULL, left) {
		TH_LOG("debugfs state: %s is %lld", left ? left : "",
		       left ? vnpu_state_figure(left) : 0);
	}
}

/* rmmod and insmod vnpu with the harness's parameters, then @extra. */
static int reload_vnpu(const char *extra)
{
	if (!access("/sys/module/vnpu", F_OK) && system("rmmod vnpu"))
		return -1;
	return vnpu_insmod(extra) ? -1 : 0;
}

/* What a process running ordinary jobs reports to the test. */
struct worker_report {
	_Atomic int stop;		/* set by the test */
	_Atomic uint64_t jobs;		/* ended OK with the right data */
	char failure[256];		/* the first thing that went wrong */
};

static void *shared_map(struct __test_metadata *_metadata, size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(MAP_FAILED, p);
	memset(p, 0, size);
	return p;
}

/* The value job @n of worker @id writes. */
static uint32_t job_value(uint32_t id, uint64_t n)
{
	return (id << 24) ^ (uint32_t)(n * 2654435761u) ^ 0x5a5a;
}

/*
 * Submit job @n of worker @id (see run_worker()) from the command BO @cmd,
 * which the worker made before the test began (SUBMIT copies the stream,
 * so the next job may rewrite it): a BO_CREATE per job would meet the
 * device full in memory_pressure, where ENOMEM is BO_CREATE's right
 * answer. Its id to @job_id.
 */
static int worker_submit(int fd, const struct drm_vnpu_slot *slot,
			 uint32_t cmd, uint32_t id, uint64_t n,
			 uint64_t *job_id)
{
	struct drm_vnpu_submit a = { 0 };
	struct stream s = { 0 };
	int ret;

	stream_fill(&s, tensor_1d(0, VNPU_DTYPE_U32,
				  (n % STRESS_REGIONS) * STRESS_ELEMS * 4,
				  STRESS_ELEMS),
		    job_value(id, n));
	ret = _bo_xfer(fd, 1, cmd, 0, s.size, s.words, 0);
	if (!ret) {
		a.cmd_handle = cmd;
		a.cmd_size = s.size;
		a.slots_ptr = (uintptr_t)slot;
		a.slot_count = 1;
		a.priority = DRM_VNPU_PRIORITY_NORMAL;
		ret = _submit(fd, &a);
		*job_id = a.job_id;
	}
	return ret;
}

/*
 * Ordinary jobs on a file of its own, STRESS_DEPTH in flight: job n fills
 * region n % STRESS_REGIONS of the BO with job_value(); once it has ended
 * OK, the region is read back and checked. Runs @count jobs, or until
 * @rep->stop when @count is 0. Returns 0, or 1 with @rep->failure set.
 */
static int run_worker(uint32_t id, uint64_t count, struct worker_report *rep)
{
	struct drm_vnpu_slot slot = { .flags = DRM_VNPU_SLOT_WRITE };
	static uint32_t out[STRESS_ELEMS];
	uint64_t ids[STRESS_DEPTH] = { 0 }, n = 0, done = 0;
	struct drm_vnpu_wait w;
	int fd = vnpu_open(0), ret;
	struct stream s = { 0 };
	uint32_t i, cmd;

	stream_fill(&s, tensor_1d(0, VNPU_DTYPE_U32, 0, STRESS_ELEMS), 0);
	if (fd < 0 || _bo_create(fd, STRESS_BO_SIZE, 0, &slot.handle) ||
	    _bo_create(fd, s.size, 0, &cmd)) {
		snprintf(rep->failure, sizeof(rep->failure),
			 "worker %u: no file or BO", id);
		return 1;
	}
	for (;;) {
		bool more = count ? n < count : !rep->stop;

		if (more && n - done < STRESS_DEPTH) {
			ret = worker_submit(fd, &slot, cmd, id, n,
					    &ids[n % STRESS_DEPTH]);
			if (ret) {
				snprintf(rep->failure, sizeof(rep->failure),
					 "worker %u: job %llu: submit %d", id,
					 (unsigned long long)n, ret);
				return 1;
			}
			n++;
			continue;
		}
		if (done == n)
			break;
		ret = _wait_job(fd, ids[done % STRESS_DEPTH],
				now_ns() + LONG_WAIT_NS, &w);
		if (ret || w.status != DRM_VNPU_JOB_OK) {
			snprintf(rep->failure, sizeof(rep->failure),
				 "worker %u: job %llu: wait %d, status %u", id,
				 (unsigned long long)done, ret, w.status);
			return 1;
		}
		ret = _bo_xfer(fd, 0, slot.handle,
			       (done % STRESS_REGIONS) * sizeof(out),
			       sizeof(out), out, 0);
		for (i = 0; !ret && i < STRESS_ELEMS; i++)
			if (out[i] != job_value(id, done))
				ret = -EIO;
		if (ret) {
			snprintf(rep->failure, sizeof(rep->failure),
				 "worker %u: job %llu: wrong result (%d)", id,
				 (unsigned long long)done, ret);
			return 1;
		}
		done++;
		rep->jobs++;
	}
	close(fd);
	return 0;
}

static pid_t start_worker(struct __test_metadata *_metadata, uint32_t id,
			  uint64_t count, struct worker_report *rep)
{
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (!pid)
		_exit(run_worker(id, count, rep));
	return pid;
}

static void stop_worker(struct __test_metadata *_metadata, pid_t pid,
			struct worker_report *rep)
{
	int status;

	rep->stop = 1;
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, rep->failure[0]) {
		TH_LOG("%s", rep->failure);
	}
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
}

/* The test needs the harness's module and its debugfs, as root. */
#define NEED_HARNESS() do { \
	int fd_ = vnpu_open(0); \
	if (fd_ < 0) \
		SKIP(return, "no vnpu render node (vnpu.ko not loaded)"); \
	close(fd_); \
	if (!getenv("VNPU_VM_KO") || vnpu_state_figure("bos") < 0) \
		SKIP(return, "not in the VM harness (VNPU_VM_KO, debugfs)"); \
} while (0)

FIXTURE(stress) {
	int unused;
};

FIXTURE_SETUP(stress)
{
}

/* Leave the module loaded with the harness's parameters, whatever happened. */
FIXTURE_TEARDOWN(stress)
{
	if (access("/sys/module/vnpu", F_OK) && getenv("VNPU_VM_KO"))
		reload_vnpu("");
}

TEST_F_TIMEOUT(stress, kill_storm, 3600)
{
	uint64_t procs = env_u64("VNPU_STRESS_PROCS", 8);
	uint64_t jobs = env_u64("VNPU_STRESS_JOBS", 50);
	uint64_t seed = env_u64("VNPU_STRESS_SEED", 20261201) | 1;
	uint64_t killed = 0, survivors = 0, survivor_jobs = 0, pending, i;
	uint64_t kill_at[64];
	struct worker_report *rep;
	pid_t *pid;
	int status;

	NEED_HARNESS();
	ASSERT_LT(0, procs);
	ASSERT_GE(64, procs);
	ASSERT_LT(0, jobs);
	rep = shared_map(_metadata, procs * sizeof(*rep));
	pid = calloc(procs, sizeof(*pid));
	ASSERT_NE(NULL, pid);
	/*
	 * Half of them are killed, each once it has ended a random number of
	 * jobs: those run jobs until then, the others run @jobs jobs.
	 */
	for (i = 0; i < procs; i++)
		kill_at[i] = UINT64_MAX;
	for (i = 0; i < procs / 2; i++) {
		uint64_t victim = rng_next(&seed) % procs;

		while (kill_at[victim] != UINT64_MAX)
			victim = (victim + 1) % procs;
		kill_at[victim] = rng_next(&seed) % jobs;
	}
	for (i = 0; i < procs; i++)
		pid[i] = start_worker(_metadata, (uint32_t)i,
				      kill_at[i] == UINT64_MAX ? jobs : 0, &rep[i]);

	for (pending = procs / 2; pending; usleep(1000)) {
		for (i = 0; i < procs; i++) {
			if (kill_at[i] == UINT64_MAX || !pid[i] ||
			    (rep[i].jobs < kill_at[i] && !rep[i].failure[0]))
				continue;
			ASSERT_EQ(0, kill(pid[i], SIGKILL));
			ASSERT_EQ(pid[i], waitpid(pid[i], &status, 0));
			EXPECT_EQ(0, rep[i].failure[0]) {
				TH_LOG("%s", rep[i].failure);
			}
			ASSERT_TRUE(WIFSIGNALED(status));
			pid[i] = 0;
			pending--;
			killed++;
		}
	}
	for (i = 0; i < procs; i++) {
		if (!pid[i])
			continue;
		ASSERT_EQ(pid[i], waitpid(pid[i], &status, 0));
		EXPECT_EQ(0, rep[i].failure[0]) {
			TH_LOG("%s", rep[i].failure);
		}
		ASSERT_TRUE(WIFEXITED(status));
		ASSERT_EQ(0, WEXITSTATUS(status));
		ASSERT_EQ(jobs, rep[i].jobs);
		survivors++;
		survivor_jobs += rep[i].jobs;
	}
	assert_nothing_left(_metadata);
	TH_LOG("%llu processes x %llu jobs: %llu killed with SIGKILL, %llu survivors completed %llu jobs right; nothing left",
	       (unsigned long long)procs, (unsigned long long)jobs,
	       (unsigned long long)killed, (unsigned long long)survivors,
	       (unsigned long long)survivor_jobs);
	free(pid);
	munmap(rep, procs * sizeof(*rep));
}

TEST_F_TIMEOUT(stress, hang_reset_cycles, 3600)
{
	uint64_t cycles = env_u64("VNPU_STRESS_RESETS", 10);
	uint64_t timeout_ms = env_u64("VNPU_STRESS_TIMEOUT_MS", 200);
	struct drm_vnpu_wait w;
	struct worker_report *rep;
	uint64_t resets, after, i, id;
	struct stream sp = { 0 };
	char param[64];
	pid_t worker;
	int fd;

	NEED_HARNESS();
	snprintf(param, sizeof(param), "timeout_ms=%llu",
		 (unsigned long long)timeout_ms);
	ASSERT_EQ(0, reload_vnpu(param));
	rep = shared_map(_metadata, sizeof(*rep));
	worker = start_worker(_metadata, 1, 0, rep);

	fd = vnpu_open(0);
	ASSERT_LE(0, fd);
	resets = get_param(_metadata, fd, DRM_VNPU_PARAM_RESET_COUNT);
	stream_spin(&sp);
	for (i = 0; i < cycles && !rep->failure[0]; i++) {
		id = run_stream(_metadata, fd, &sp, NULL, 0);
		ASSERT_EQ(0, _wait_job(fd, id, now_ns() + LONG_WAIT_NS, &w));
		ASSERT_EQ(DRM_VNPU_JOB_TIMEOUT, w.status) {
			TH_LOG("cycle %llu", (unsigned long long)i);
		}
	}
	after = get_param(_metadata, fd, DRM_VNPU_PARAM_RESET_COUNT);
	close(fd);
	stop_worker(_metadata, worker, rep);
	ASSERT_EQ(resets + cycles, after);
	ASSERT_LT(0, rep->jobs);
	assert_nothing_left(_metadata);
	TH_LOG("%llu hang -> reset cycles (timeout %llu ms) beside %llu ordinary jobs, all right",
	       (unsigned long long)cycles, (unsigned long long)timeout_ms,
	       (unsigned long long)rep->jobs);
	munmap(rep, sizeof(*rep));
	ASSERT_EQ(0, reload_vnpu(""));
}

/*
 * One process of memory_pressure: @rounds times, fill the device with BOs
 * of random sizes (touching and using some) until BO_CREATE says ENOMEM,
 * try a userptr BO there too, then free them all. Returns 0, or 1 with
 * @rep->failure set.
 */
static int pressure_proc(uint32_t id, uint64_t rounds, uint64_t seed,
			 struct worker_report *rep)
{
	static uint32_t handles[1024];
	int fd = vnpu_open(0), ret = 0;
	uint64_t limit = 0, used = 0, r = 0, size;
	unsigned int n, i;
	void *user;

	user = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (fd < 0 || user == MAP_FAILED ||
	    _get_param(fd, DRM_VNPU_PARAM_MEM_LIMIT, &limit))
		goto fail;
	for (r = 0; r < rounds; r++) {
		for (n = 0; n < 1024; n++) {
			size = 4096 * (1 + rng_next(&seed) % 1024);
			ret = _bo_create(fd, size, 0, &handles[n]);
			if (ret)
				break;
			if (rng_next(&seed) % 4 == 0) {
				struct drm_vnpu_bo_info info;
				char *map;

				if (_bo_info(fd, handles[n], 0, &info))
					goto fail;
				map = mmap(NULL, size, PROT_READ | PROT_WRITE,
					   MAP_SHARED, fd, info.mmap_offset);
				if (map == MAP_FAILED)
					goto fail;
				map[0] = (char)n;
				map[size - 1] = (char)n;
				munmap(map, size);
			}
			if (_get_param(fd, DRM_VNPU_PARAM_MEM_USED, &used) ||
			    used > limit)
				goto fail;
		}
		/* Full (or 1024 BOs): what fails must fail with ENOMEM. */
		if (ret && ret != -ENOMEM)
			goto fail;
		if (ret) {
			uint32_t h;

			ret = _bo_userptr(fd, user, 1 << 20, 0, &h);
			if (!ret)
				gem_close(fd, h);
			else if (ret != -ENOMEM)
				goto fail;
		}
		for (i = 0; i < n; i++)
			gem_close(fd, handles[i]);
		rep->jobs++;
	}
	close(fd);
	return 0;
fail:
	snprintf(rep->failure, sizeof(rep->failure),
		 "pressure %u: round %llu: error %d, %llu of %llu bytes used",
		 id, (unsigned long long)r, ret, (unsigned long long)used,
		 (unsigned long long)limit);
	return 1;
}

TEST_F_TIMEOUT(stress, memory_pressure, 3600)
{
	uint64_t procs = env_u64("VNPU_STRESS_MEM_PROCS", 4);
	uint64_t rounds = env_u64("VNPU_STRESS_ROUNDS", 5);
	uint64_t seed = env_u64("VNPU_STRESS_SEED", 20261201) | 1;
	struct worker_report *rep, *job_rep;
	uint64_t i, total = 0;
	pid_t worker, *pid;
	int status;

	NEED_HARNESS();
	ASSERT_LT(0, procs);
	ASSERT_GE(64, procs);
	ASSERT_EQ(0, reload_vnpu("mem_limit_mb=64"));
	rep = shared_map(_metadata, (procs + 1) * sizeof(*rep));
	job_rep = &rep[procs];
	worker = start_worker(_metadata, 1, 0, job_rep);
	/* Its BOs exist once its first job has ended: then fill the device. */
	for (i = 0; i < 10000ull * vnpu_timeout_scale() &&
	     !job_rep->jobs && !job_rep->failure[0]; i++)
		usleep(1000);
	pid = calloc(procs, sizeof(*pid));
	ASSERT_NE(NULL, pid);
	for (i = 0; i < procs; i++) {
		pid[i] = fork();
		ASSERT_LE(0, pid[i]);
		if (!pid[i])
			_exit(pressure_proc((uint32_t)i, rounds,
					    seed + i * 0x9e3779b97f4a7c15ull,
					    &rep[i]));
	}
	for (i = 0; i < procs; i++) {
		ASSERT_EQ(pid[i], waitpid(pid[i], &status, 0));
		EXPECT_EQ(0, rep[i].failure[0]) {
			TH_LOG("%s", rep[i].failure);
		}
		ASSERT_TRUE(WIFEXITED(status));
		ASSERT_EQ(0, WEXITSTATUS(status));
		total += rep[i].jobs;
	}
	stop_worker(_metadata, worker, job_rep);
	ASSERT_LT(0, job_rep->jobs);
	assert_nothing_left(_metadata);
	TH_LOG("%llu processes filled a 64 MiB device %llu times in all beside %llu ordinary jobs, all right",
	       (unsigned long long)procs, (unsigned long long)total,
	       (unsigned long long)job_rep->jobs);
	free(pid);
	munmap(rep, (procs + 1) * sizeof(*rep));
	ASSERT_EQ(0, reload_vnpu(""));
}

TEST_F_TIMEOUT(stress, rmmod_refused_while_open, 600)
{
	uint64_t tries = env_u64("VNPU_STRESS_RMMOD", 1000), i;
	struct worker_report *rep;
	pid_t worker;
	int fd;

	NEED_HARNESS();
	rep = shared_map(_metadata, sizeof(*rep));
	worker = start_worker(_metadata, 2, 0, rep);
	fd = vnpu_open(0);
	ASSERT_LE(0, fd);
	while (!rep->jobs && !rep->failure[0])
		usleep(1000);
	/* What rmmod does: the module is in use, so EWOULDBLOCK. */
	for (i = 0; i < tries; i++) {
		ASSERT_EQ(-1, syscall(SYS_delete_module, "vnpu", O_NONBLOCK));
		ASSERT_EQ(EWOULDBLOCK, errno);
	}
	ASSERT_EQ(0, access("/sys/module/vnpu", F_OK));
	stop_worker(_metadata, worker, rep);
	ASSERT_LT(0, rep->jobs);
	/* Still open here: refused; then closed: unloads. */
	ASSERT_NE(0, system("rmmod vnpu 2>/dev/null"));
	close(fd);
	assert_nothing_left(_metadata);
	ASSERT_EQ(0, system("rmmod vnpu"));
	ASSERT_NE(0, access("/sys/module/vnpu", F_OK));
	ASSERT_EQ(0, reload_vnpu(""));
	TH_LOG("rmmod refused %llu times with a file open beside %llu jobs, then unloaded",
	       (unsigned long long)tries + 1, (unsigned long long)rep->jobs);
	munmap(rep, sizeof(*rep));
}

TEST_HARNESS_MAIN

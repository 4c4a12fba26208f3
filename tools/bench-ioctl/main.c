// SPDX-License-Identifier: MIT
/*
 * bench-ioctl: what the vnpu driver itself costs, each figure next to the
 * reference it is judged against, measured in the same run:
 *
 *   noop job      submit + wait of a one-NOP job    vs  a bare GET_PARAM
 *                 as libvnpu does it: SUBMIT, then WAIT unless SUBMIT
 *                 returned the job's result (it ran and ended in SUBMIT)
 *                 (also timed: SUBMIT + WAIT always, SUBMIT alone)
 *   upload        BO_UPLOAD GB/s                    vs  memcpy GB/s
 *   download      BO_DOWNLOAD GB/s                  vs  memcpy GB/s
 *   (and memcpy into an mmap of the BO: the zero-copy path, for comparison)
 *
 * The calls are summed up by their mean, median and minimum (the VM is
 * noisy: the median is the figure), the copies by their best run. Prints
 * one "key value" line per figure (for scripts/bench) after a readable
 * table. Exit 77 when no vnpu device is present.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <drm/vnpu_drm.h>
#include <drm/vnpu_cmd.h>

#define XFER_SIZE (64u << 20)
#define XFER_REPS 8

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int xioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, req, arg);
	} while (ret == -1 && (errno == EINTR || errno == EAGAIN));
	return ret;
}

/* The first render node whose driver is "vnpu", or -1. */
static int open_vnpu(void)
{
	struct dirent *e;
	char path[300], name[16];
	struct drm_version v;
	DIR *d = opendir("/dev/dri");
	int fd = -1;

	while (d && (e = readdir(d)) && fd < 0) {
		if (strncmp(e->d_name, "renderD", 7))
			continue;
		snprintf(path, sizeof(path), "/dev/dri/%s", e->d_name);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		memset(&v, 0, sizeof(v));
		memset(name, 0, sizeof(name));
		v.name = name;
		v.name_len = sizeof(name) - 1;
		if (xioctl(fd, DRM_IOCTL_VERSION, &v) || strcmp(name, "vnpu")) {
			close(fd);
			fd = -1;
		}
	}
	if (d)
		closedir(d);
	return fd;
}

static int fail(const char *what)
{
	fprintf(stderr, "bench-ioctl: %s: %s\n", what, strerror(errno));
	return 1;
}

static int bo_create(int fd, uint64_t size, uint32_t *handle)
{
	struct drm_vnpu_bo_create c = { .size = size };

	if (xioctl(fd, DRM_IOCTL_VNPU_BO_CREATE, &c))
		return fail("BO_CREATE");
	*handle = c.handle;
	return 0;
}

static int bo_xfer(int fd, unsigned long req, uint32_t handle, void *data, uint64_t size)
{
	struct drm_vnpu_bo_xfer x = { .handle = handle, .size = size,
				      .data_ptr = (uint64_t)(uintptr_t)data };

	if (xioctl(fd, req, &x))
		return fail(req == DRM_IOCTL_VNPU_BO_UPLOAD ? "BO_UPLOAD" : "BO_DOWNLOAD");
	return 0;
}

/*
 * Calls are timed in batches of BATCH back-to-back calls, one sample being
 * the batch's time over BATCH: reading the clock costs about as much as
 * the ioctls timed in the TCG guest (its clocksource is the HPET, so
 * clock_gettime() is a system call there), and per-call timing would add
 * it to every sample. The kinds of samples are taken in interleaved
 * rounds, so that a noisy stretch of the VM hits them all alike, and
 * each kind reports the mean, the median and the minimum of its samples.
 */
#define BATCH 10
#define ROUNDS 1000
#define WARMUP_ROUNDS 20
#define WAIT_NS 10000000000ll

struct bench {
	int fd;
	uint32_t nop_bo;	/* holds the one-NOP command stream */
	int64_t deadline;	/* of the WAITs of the current batch */
	uint64_t jobs;		/* noop jobs of the submit+wait kind */
	uint64_t ended;		/* of those, ended in SUBMIT */
};

/* Submit a job that is one NOP; @ended: it ran and ended in SUBMIT. */
static int noop_submit(const struct bench *b, uint64_t *id, bool *ended)
{
	struct drm_vnpu_submit s = {
		.cmd_handle = b->nop_bo,
		.cmd_size = sizeof(struct vnpu_cmd_header),
		.priority = DRM_VNPU_PRIORITY_NORMAL,
	};

	if (xioctl(b->fd, DRM_IOCTL_VNPU_SUBMIT, &s))
		return fail("SUBMIT");
	*id = s.job_id;
	*ended = s.out_flags & DRM_VNPU_SUBMIT_OUT_ENDED;
	if (*ended && s.status != DRM_VNPU_JOB_OK) {
		fprintf(stderr, "bench-ioctl: the noop job ended with status %u\n", s.status);
		return 1;
	}
	return 0;
}

static int noop_wait(const struct bench *b, uint64_t id)
{
	struct drm_vnpu_wait w = { .job_id = id, .timeout_ns = b->deadline };

	if (xioctl(b->fd, DRM_IOCTL_VNPU_WAIT, &w))
		return fail("WAIT");
	if (w.status != DRM_VNPU_JOB_OK) {
		fprintf(stderr, "bench-ioctl: the noop job ended with status %u\n", w.status);
		return 1;
	}
	return 0;
}

/* BATCH bare GET_PARAMs: the reference. */
static int batch_get_param(struct bench *b, int64_t *ns)
{
	struct drm_vnpu_get_param p = { .param = DRM_VNPU_PARAM_NUM_TILES };
	int64_t t0 = now_ns();
	int i;

	for (i = 0; i < BATCH; i++) {
		if (xioctl(b->fd, DRM_IOCTL_VNPU_GET_PARAM, &p))
			return fail("GET_PARAM");
	}
	*ns = now_ns() - t0;
	return 0;
}

/*
 * BATCH noop jobs, each submitted and waited for: with @always_wait by a
 * WAIT ioctl in any case, otherwise as libvnpu does, the WAIT only when
 * SUBMIT did not return the job's result.
 */
static int noop_jobs(struct bench *b, int64_t *ns, bool always_wait)
{
	bool ended;
	int64_t t0;
	uint64_t id;
	int i;

	b->deadline = now_ns() + WAIT_NS;
	t0 = now_ns();
	for (i = 0; i < BATCH; i++) {
		if (noop_submit(b, &id, &ended))
			return 1;
		if (!always_wait)
			b->ended += ended;
		if ((always_wait || !ended) && noop_wait(b, id))
			return 1;
	}
	*ns = now_ns() - t0;
	if (!always_wait)
		b->jobs += BATCH;
	return 0;
}

static int batch_noop_job(struct bench *b, int64_t *ns)
{
	return noop_jobs(b, ns, false);
}

static int batch_noop_job_ioctls(struct bench *b, int64_t *ns)
{
	return noop_jobs(b, ns, true);
}

/* BATCH SUBMITs of noop jobs back to back, then their WAITs (not timed). */
static int batch_noop_submit(struct bench *b, int64_t *ns)
{
	uint64_t ids[BATCH];
	bool ended;
	int64_t t0;
	int i;

	b->deadline = now_ns() + WAIT_NS;
	t0 = now_ns();
	for (i = 0; i < BATCH; i++) {
		if (noop_submit(b, &ids[i], &ended))
			return 1;
	}
	*ns = now_ns() - t0;
	for (i = 0; i < BATCH; i++) {
		if (noop_wait(b, ids[i]))
			return 1;
	}
	return 0;
}

/* BATCH reads of CLOCK_MONOTONIC, for scale. */
static int batch_clock(struct bench *b, int64_t *ns)
{
	volatile int64_t sink = 0;
	int64_t t0 = now_ns();
	int i;

	(void)b;
	for (i = 0; i < BATCH; i++)
		sink += now_ns();
	*ns = now_ns() - t0;
	return 0;
}

enum { K_GET_PARAM, K_NOOP_JOB, K_NOOP_JOB_IOCTLS, K_NOOP_SUBMIT, K_CLOCK, NUM_KINDS };

static const struct kind {
	const char *key;	/* of the "key value" lines */
	const char *name;	/* in the table */
	int (*batch)(struct bench *b, int64_t *ns);
} kinds[NUM_KINDS] = {
	[K_GET_PARAM] = { "get_param", "GET_PARAM", batch_get_param },
	[K_NOOP_JOB] = { "noop_job", "noop job submit+wait", batch_noop_job },
	[K_NOOP_JOB_IOCTLS] = { "noop_job_ioctls", "  SUBMIT+WAIT always", batch_noop_job_ioctls },
	[K_NOOP_SUBMIT] = { "noop_submit", "  SUBMIT alone", batch_noop_submit },
	[K_CLOCK] = { "clock", "clock_gettime", batch_clock },
};

/* Mean, median and minimum of a kind's samples, ns per call. */
struct summary {
	double mean;
	double median;
	double min;
};

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* Sorts @ns (@n batch times) and sums them up per call. */
static struct summary summarize(int64_t *ns, int n)
{
	struct summary s;
	double sum = 0;
	int i;

	qsort(ns, n, sizeof(*ns), cmp_i64);
	for (i = 0; i < n; i++)
		sum += (double)ns[i];
	s.mean = sum / n / BATCH;
	s.median = (n % 2 ? (double)ns[n / 2] : ((double)ns[n / 2 - 1] + ns[n / 2]) / 2) / BATCH;
	s.min = (double)ns[0] / BATCH;
	return s;
}

/* Every kind of sample, ROUNDS times in turn after WARMUP_ROUNDS. */
static int bench_calls(int fd, struct summary sum[NUM_KINDS], double *ended)
{
	struct vnpu_cmd_header nop = { .opcode = VNPU_CMD_NOP, .size = sizeof(nop) };
	struct bench b = { .fd = fd };
	int64_t *ns = calloc((size_t)NUM_KINDS * ROUNDS, sizeof(*ns)), t;
	int r, k, ret = 1;

	if (!ns) {
		fprintf(stderr, "bench-ioctl: out of memory\n");
		return 1;
	}
	if (bo_create(fd, 4096, &b.nop_bo) ||
	    bo_xfer(fd, DRM_IOCTL_VNPU_BO_UPLOAD, b.nop_bo, &nop, sizeof(nop)))
		goto out;
	for (r = -WARMUP_ROUNDS; r < ROUNDS; r++) {
		for (k = 0; k < NUM_KINDS; k++) {
			if (kinds[k].batch(&b, &t))
				goto out;
			if (r >= 0)
				ns[k * ROUNDS + r] = t;
		}
	}
	for (k = 0; k < NUM_KINDS; k++)
		sum[k] = summarize(ns + k * ROUNDS, ROUNDS);
	*ended = b.jobs ? (double)b.ended / (double)b.jobs : 0;
	ret = 0;
out:
	free(ns);
	return ret;
}

/* The BO mapped into the process, or MAP_FAILED. */
static void *bo_mmap(int fd, uint32_t handle, uint64_t size)
{
	struct drm_vnpu_bo_info info = { .handle = handle };

	if (xioctl(fd, DRM_IOCTL_VNPU_BO_INFO, &info))
		return MAP_FAILED;
	return mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)info.mmap_offset);
}

/*
 * Best GB/s of @XFER_REPS copies of XFER_SIZE bytes: upload, download,
 * memcpy, and memcpy into the BO's mmap.
 */
static int bench_xfer(int fd, double *up, double *down, double *mem, double *mapped)
{
	char *a = malloc(XFER_SIZE), *b = malloc(XFER_SIZE), *map = MAP_FAILED;
	int64_t t0, best[4] = { INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX }, t;
	uint32_t bo;
	int i, k, ret = 1;

	if (!a || !b || bo_create(fd, XFER_SIZE, &bo))
		goto out;
	map = bo_mmap(fd, bo, XFER_SIZE);
	if (map == MAP_FAILED) {
		fail("mmap of a BO");
		goto out;
	}
	memset(a, 1, XFER_SIZE);
	memset(b, 2, XFER_SIZE);
	for (i = 0; i < XFER_REPS; i++) {
		for (k = 0; k < 4; k++) {
			t0 = now_ns();
			if (k == 0 && bo_xfer(fd, DRM_IOCTL_VNPU_BO_UPLOAD, bo, a, XFER_SIZE))
				goto out;
			if (k == 1 && bo_xfer(fd, DRM_IOCTL_VNPU_BO_DOWNLOAD, bo, b, XFER_SIZE))
				goto out;
			if (k == 2)
				memcpy(b, a, XFER_SIZE);
			if (k == 3)
				memcpy(map, a, XFER_SIZE);
			t = now_ns() - t0;
			best[k] = t < best[k] ? t : best[k];
		}
	}
	if (b[XFER_SIZE - 1] != 1) {
		fprintf(stderr, "bench-ioctl: the downloaded data is wrong\n");
		goto out;
	}
	*up = (double)XFER_SIZE / (double)best[0];
	*down = (double)XFER_SIZE / (double)best[1];
	*mem = (double)XFER_SIZE / (double)best[2];
	*mapped = (double)XFER_SIZE / (double)best[3];
	ret = 0;
out:
	if (map != MAP_FAILED)
		munmap(map, XFER_SIZE);
	free(a);
	free(b);
	return ret;
}

static void print_call(const struct summary *s, const struct summary *ref, const char *name)
{
	printf("%-26s %8.2f %8.2f %8.2f us %9.2f us %8.2fx\n", name, s->mean / 1e3,
	       s->median / 1e3, s->min / 1e3, ref->median / 1e3, s->median / ref->median);
}

int main(int argc, char **argv)
{
	double up = 0, down = 0, mem = 0, mapped = 0, ended = 0;
	struct summary sum[NUM_KINDS];
	int fd, k;

	if (argc > 1) {
		printf("usage: bench-ioctl\nTime the vnpu driver's ioctls against their references.\n");
		return strcmp(argv[1], "--help") && strcmp(argv[1], "-h") ? 2 : 0;
	}
	fd = open_vnpu();
	if (fd < 0) {
		printf("bench-ioctl: no vnpu render node: skipped\n");
		return 77;
	}
	if (bench_calls(fd, sum, &ended) || bench_xfer(fd, &up, &down, &mem, &mapped))
		return 1;
	close(fd);
	printf("%-26s %8s %8s %8s    %-12s %9s\n", "figure (per call)", "mean", "median", "min",
	       "GET_PARAM", "ratio");
	for (k = 0; k < NUM_KINDS; k++)
		print_call(&sum[k], &sum[K_GET_PARAM], kinds[k].name);
	printf("(%d samples of %d calls each; the ratio is of the medians; %.1f%% of the\n"
	       " submit+wait jobs ended in SUBMIT and needed no WAIT)\n", ROUNDS, BATCH,
	       100 * ended);
	printf("%-26s %7.2f GB/s %9.2f GB/s %9.0f%%\n", "BO_UPLOAD (vs memcpy)",
	       up, mem, 100 * up / mem);
	printf("%-26s %7.2f GB/s %9.2f GB/s %9.0f%%\n", "BO_DOWNLOAD (vs memcpy)",
	       down, mem, 100 * down / mem);
	printf("%-26s %7.2f GB/s %9.2f GB/s %9.0f%%\n", "memcpy into the BO's mmap",
	       mapped, mem, 100 * mapped / mem);
	for (k = 0; k < NUM_KINDS; k++)
		printf("%s_mean_us %.3f\n%s_median_us %.3f\n%s_min_us %.3f\n", kinds[k].key,
		       sum[k].mean / 1e3, kinds[k].key, sum[k].median / 1e3, kinds[k].key,
		       sum[k].min / 1e3);
	printf("noop_job_ended_in_submit %.4f\n", ended);
	printf("upload_gbps %.3f\ndownload_gbps %.3f\nmemcpy_gbps %.3f\nmmap_write_gbps %.3f\n",
	       up, down, mem, mapped);
	return 0;
}

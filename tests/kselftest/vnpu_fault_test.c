// SPDX-License-Identifier: GPL-2.0
/*
 * vnpu faults and limits: debugfs fault injection (hang, device fault,
 * allocation failure, a firmware slow to start jobs), devcoredump on
 * reset, the memory limit, and the device's FPU section count. The knobs,
 * the limit and the count are device-wide, so this program runs alone.
 */
#include <dirent.h>

#include "vnpu_test.h"

FIXTURE(fault) {
	int fd;
	uint32_t bo;
	struct drm_vnpu_slot slot;
	struct stream s;
};

FIXTURE_SETUP(fault)
{
	VNPU_OPEN_OR_SKIP(self->fd);
	if (vnpu_debugfs_write("fail_alloc", "0"))
		SETUP_SKIP("no vnpu debugfs (not root?)");
	self->bo = bo_create(_metadata, self->fd, 4096);
	self->slot.handle = self->bo;
	self->slot.flags = DRM_VNPU_SLOT_WRITE;
	memset(&self->s, 0, sizeof(self->s));
	stream_fill(&self->s, tensor_1d(0, VNPU_DTYPE_U32, 0, 16), 3);
	stream_nop(&self->s);
}

#define FPU_SECTION_US "/sys/module/vnpu/parameters/fpu_section_us"

/* The module parameter's value before a test changed it, or "". */
static char fpu_section_us[32];

/* Read (@value NULL) or write @file, a one-line sysfs file. */
static int sysfs_rw(const char *file, char *buf, size_t size,
		    const char *value)
{
	FILE *f = fopen(file, value ? "w" : "r");
	int ret = 0;

	if (!f)
		return -1;
	if (value)
		ret = fputs(value, f) < 0 ? -1 : 0;
	else if (!fgets(buf, (int)size, f))
		ret = -1;
	if (fclose(f))
		ret = -1;
	return ret;
}

FIXTURE_TEARDOWN(fault)
{
	if (fpu_section_us[0]) {
		sysfs_rw(FPU_SECTION_US, NULL, 0, fpu_section_us);
		fpu_section_us[0] = 0;
	}
	vnpu_debugfs_write("inject_hang", "0");
	vnpu_debugfs_write("inject_fault", "0");
	vnpu_debugfs_write("inject_stall_ms", "0");
	vnpu_debugfs_write("fail_alloc", "0");
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F_TIMEOUT(fault, inject_hang, 120)
{
	uint64_t resets = get_param(_metadata, self->fd, DRM_VNPU_PARAM_RESET_COUNT);
	struct drm_vnpu_wait w;
	uint64_t id;

	ASSERT_EQ(0, vnpu_debugfs_write("inject_hang", "1"));
	id = run_stream(_metadata, self->fd, &self->s, &self->slot, 1);
	ASSERT_EQ(0, _wait_job(self->fd, id, now_ns() + LONG_WAIT_NS, &w));
	ASSERT_EQ(DRM_VNPU_JOB_TIMEOUT, w.status);
	ASSERT_EQ(resets + 1,
		  get_param(_metadata, self->fd, DRM_VNPU_PARAM_RESET_COUNT));
	id = run_stream(_metadata, self->fd, &self->s, &self->slot, 1);
	ASSERT_EQ(DRM_VNPU_JOB_OK, wait_job(_metadata, self->fd, id));
}

TEST_F(fault, inject_fault)
{
	uint64_t resets = get_param(_metadata, self->fd, DRM_VNPU_PARAM_RESET_COUNT);
	struct drm_vnpu_wait w;
	uint32_t out[16];
	uint64_t id;

	ASSERT_EQ(0, vnpu_debugfs_write("inject_fault", "1"));
	id = run_stream(_metadata, self->fd, &self->s, &self->slot, 1);
	ASSERT_EQ(0, _wait_job(self->fd, id, now_ns() + LONG_WAIT_NS, &w));
	ASSERT_EQ(DRM_VNPU_JOB_FAULT, w.status);
	ASSERT_EQ(0, w.fault_cmd);
	bo_download(_metadata, self->fd, self->bo, 0, out, sizeof(out));
	ASSERT_EQ(0, out[0]);
	ASSERT_EQ(resets, get_param(_metadata, self->fd, DRM_VNPU_PARAM_RESET_COUNT));

	id = run_stream(_metadata, self->fd, &self->s, &self->slot, 1);
	ASSERT_EQ(DRM_VNPU_JOB_OK, wait_job(_metadata, self->fd, id));
	bo_download(_metadata, self->fd, self->bo, 0, out, sizeof(out));
	ASSERT_EQ(3, out[0]);
}

TEST_F(fault, fail_alloc_bo_create)
{
	ASSERT_EQ(0, vnpu_debugfs_write("fail_alloc", "1"));
	bo_create_err(_metadata, self->fd, ENOMEM, 4096, 0);
	bo_create(_metadata, self->fd, 4096);
}

TEST_F(fault, fail_alloc_submit)
{
	struct drm_vnpu_submit a;

	submit_prepare(_metadata, self->fd, &self->s, &self->slot, 1, &a);
	ASSERT_EQ(0, vnpu_debugfs_write("fail_alloc", "1"));
	submit_err(_metadata, self->fd, ENOMEM, &a);
	ASSERT_EQ(DRM_VNPU_JOB_OK,
		  wait_job(_metadata, self->fd, submit(_metadata, self->fd, &a)));
}

TEST_F(fault, fail_alloc_userptr)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(0, vnpu_debugfs_write("fail_alloc", "1"));
	bo_userptr_err(_metadata, self->fd, ENOMEM, p, 4096, 0);
	gem_close(self->fd, bo_userptr(_metadata, self->fd, p, 4096, 0));
	munmap(p, 4096);
}

/* Read every devcoredump of vnpu; 1 when one mentions "vnpu devcoredump". */
static int read_devcoredumps(void)
{
	DIR *d = opendir("/sys/class/devcoredump");
	struct dirent *e;
	int found = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char path[300], buf[64] = "";
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/class/devcoredump/%s/data",
			 e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(buf, sizeof(buf), f) &&
		    !strcmp(buf, "vnpu devcoredump\n"))
			found = 1;
		fclose(f);
		/* Writing anything frees the dump. */
		f = fopen(path, "w");
		if (f) {
			fputs("1", f);
			fclose(f);
		}
	}
	closedir(d);
	return found;
}

TEST_F_TIMEOUT(fault, devcoredump_on_reset, 120)
{
	uint64_t id;

	read_devcoredumps();
	ASSERT_EQ(0, vnpu_debugfs_write("inject_hang", "1"));
	id = run_stream(_metadata, self->fd, &self->s, &self->slot, 1);
	ASSERT_EQ(DRM_VNPU_JOB_TIMEOUT, wait_job(_metadata, self->fd, id));
	ASSERT_EQ(1, read_devcoredumps());
}

/* Elements of the innocent job's fill: too many to run at submit. */
#define INNOCENT_ELEMS 8192

/*
 * A hang beside an innocent job of another file, with the firmware thread
 * slow to start each job (two timeouts, as a starved VM's thread may be):
 * the watchdog fires while a job waits to start, which is not a hang. The
 * hung job alone ends TIMEOUT, after exactly one reset; the innocent job
 * ends OK with its data.
 */
TEST_F_TIMEOUT(fault, innocent_job_beside_hang_completes, 300)
{
	uint64_t resets = get_param(_metadata, self->fd, DRM_VNPU_PARAM_RESET_COUNT);
	struct drm_vnpu_slot slot = { .flags = DRM_VNPU_SLOT_WRITE };
	static uint32_t out[INNOCENT_ELEMS];
	struct stream spin = { 0 }, fill = { 0 };
	char timeout[32] = "", stall[32];
	uint64_t hung, innocent;
	int fd2, i;

	ASSERT_EQ(0, sysfs_rw("/sys/module/vnpu/parameters/timeout_ms",
			      timeout, sizeof(timeout), NULL));
	snprintf(stall, sizeof(stall), "%d", 2 * atoi(timeout));
	ASSERT_EQ(0, vnpu_debugfs_write("inject_stall_ms", stall));
	fd2 = vnpu_open(0);
	ASSERT_LE(0, fd2);
	slot.handle = bo_create(_metadata, fd2, sizeof(out));
	stream_spin(&spin);
	stream_fill(&fill, tensor_1d(0, VNPU_DTYPE_U32, 0, INNOCENT_ELEMS), 7);

	hung = run_stream(_metadata, self->fd, &spin, NULL, 0);
	innocent = run_stream(_metadata, fd2, &fill, &slot, 1);
	ASSERT_EQ(DRM_VNPU_JOB_TIMEOUT, wait_job(_metadata, self->fd, hung));
	ASSERT_EQ(DRM_VNPU_JOB_OK, wait_job(_metadata, fd2, innocent));
	ASSERT_EQ(resets + 1,
		  get_param(_metadata, self->fd, DRM_VNPU_PARAM_RESET_COUNT));
	bo_download(_metadata, fd2, slot.handle, 0, out, sizeof(out));
	for (i = 0; i < INNOCENT_ELEMS; i++)
		ASSERT_EQ(7, out[i]);
	close(fd2);
}

TEST_F(fault, mem_used_tracks_bos)
{
	uint64_t before = get_param(_metadata, self->fd, DRM_VNPU_PARAM_MEM_USED);
	uint32_t h = bo_create(_metadata, self->fd, (1 << 20) + 1);

	ASSERT_EQ(before + (1 << 20) + 4096,
		  get_param(_metadata, self->fd, DRM_VNPU_PARAM_MEM_USED));
	gem_close(self->fd, h);
	ASSERT_EQ(before, get_param(_metadata, self->fd, DRM_VNPU_PARAM_MEM_USED));
}

/* A userptr BO is charged; a failed pin (a hole in the range) is not. */
TEST_F(fault, mem_used_tracks_userptr)
{
	uint64_t before = get_param(_metadata, self->fd, DRM_VNPU_PARAM_MEM_USED);
	char *p = mmap(NULL, 4 << 20, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint32_t h;

	ASSERT_NE(MAP_FAILED, p);
	h = bo_userptr(_metadata, self->fd, p, 2 << 20, 0);
	ASSERT_EQ(before + (2 << 20),
		  get_param(_metadata, self->fd, DRM_VNPU_PARAM_MEM_USED));
	gem_close(self->fd, h);
	ASSERT_EQ(0, munmap(p + (3 << 20), 4096));
	bo_userptr_err(_metadata, self->fd, EFAULT, p, 4 << 20, 0);
	ASSERT_EQ(before, get_param(_metadata, self->fd, DRM_VNPU_PARAM_MEM_USED));
	munmap(p, 4 << 20);
}

/* Past the memory limit, a userptr BO is -ENOMEM before any pin. */
TEST_F(fault, memory_limit_userptr)
{
	uint64_t max = get_param(_metadata, self->fd, DRM_VNPU_PARAM_MAX_BO_SIZE);
	void *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint32_t big = bo_create(_metadata, self->fd, max - 4096);

	ASSERT_NE(MAP_FAILED, p);
	bo_userptr_err(_metadata, self->fd, ENOMEM, p, 8192, 0);
	gem_close(self->fd, big);
	gem_close(self->fd, bo_userptr(_metadata, self->fd, p, 8192, 0));
	munmap(p, 8192);
}

TEST_F(fault, memory_limit)
{
	uint64_t limit = get_param(_metadata, self->fd, DRM_VNPU_PARAM_MEM_LIMIT);
	uint64_t chunk = limit / 8, used;
	uint32_t handles[16], h;
	int n = 0, ret;

	/* Fill the device (BO pages only exist when touched). */
	while (n < 16 && !(ret = _bo_create(self->fd, chunk, 0, &handles[n])))
		n++;
	ASSERT_EQ(-ENOMEM, ret);
	ASSERT_LE(7, n);
	used = get_param(_metadata, self->fd, DRM_VNPU_PARAM_MEM_USED);
	ASSERT_GE(limit, used);
	ASSERT_LT(limit - chunk, used);

	/* The device still works, and freeing makes room again. */
	ASSERT_EQ(DRM_VNPU_JOB_OK,
		  wait_job(_metadata, self->fd,
			   run_stream(_metadata, self->fd, &self->s, &self->slot, 1)));
	gem_close(self->fd, handles[--n]);
	ASSERT_EQ(0, _bo_create(self->fd, chunk, 0, &h));
	gem_close(self->fd, h);
	while (n > 0)
		gem_close(self->fd, handles[--n]);
}

/*
 * Every part of a command runs in one FPU section, a NOP in none: alone on
 * the device, a job of NOPs adds no section and the fixture's job (a FILL
 * of 16 elements, one part, and a NOP) adds exactly one.
 */
TEST_F(fault, fpu_sections_count_parts_not_nops)
{
	struct fpu_figures a, b;
	struct stream nops = { 0 };
	int i;

	ASSERT_EQ(0, vnpu_fpu_figures(&a));
	for (i = 0; i < 8; i++)
		stream_nop(&nops);
	ASSERT_EQ(DRM_VNPU_JOB_OK,
		  wait_job(_metadata, self->fd,
			   run_stream(_metadata, self->fd, &nops, NULL, 0)));
	ASSERT_EQ(0, vnpu_fpu_figures(&b));
	ASSERT_EQ(a.sections, b.sections);
	ASSERT_EQ(a.ns, b.ns);

	ASSERT_EQ(DRM_VNPU_JOB_OK,
		  wait_job(_metadata, self->fd,
			   run_stream(_metadata, self->fd, &self->s, &self->slot, 1)));
	ASSERT_EQ(0, vnpu_fpu_figures(&b));
	ASSERT_EQ(a.sections + 1, b.sections);
	ASSERT_LT(a.ns, b.ns);
	ASSERT_LE(b.max_ns, b.ns);
}

/*
 * A part pauses between the depth slices of a GEMM, and there an FPU
 * section that has run fpu_section_us microseconds ends: with 0, every
 * pause ends one. Y = A x B of 6 x 1152 by 1152 x 16 is one unit in one
 * part, in three slices of 384: three sections. With ones in A and B
 * every sum is still 1152.
 */
TEST_F(fault, fpu_sections_end_at_pauses)
{
	const uint64_t m = 6, n = 16, k = 1152, in = m * k + k * n;
	struct drm_vnpu_slot slot = { .flags = DRM_VNPU_SLOT_WRITE };
	struct stream s = { 0 };
	struct fpu_figures a, b;
	uint32_t status;
	float *buf;
	uint64_t i;

	ASSERT_EQ(0, sysfs_rw(FPU_SECTION_US, fpu_section_us,
			      sizeof(fpu_section_us), NULL));
	buf = malloc(4 * (in + m * n));
	ASSERT_NE(NULL, buf);
	for (i = 0; i < in; i++)
		buf[i] = 1.0f;
	slot.handle = bo_create(_metadata, self->fd, 4 * (in + m * n));
	bo_upload(_metadata, self->fd, slot.handle, 0, buf, 4 * in);
	stream_gemm(&s, 0, m, n, k);

	ASSERT_EQ(0, sysfs_rw(FPU_SECTION_US, NULL, 0, "0"));
	ASSERT_EQ(0, vnpu_fpu_figures(&a));
	status = wait_job(_metadata, self->fd,
			  run_stream(_metadata, self->fd, &s, &slot, 1));
	ASSERT_EQ(0, vnpu_fpu_figures(&b));
	ASSERT_EQ(DRM_VNPU_JOB_OK, status);
	ASSERT_EQ(a.sections + 3, b.sections);

	bo_download(_metadata, self->fd, slot.handle, 4 * in, buf, 4 * m * n);
	for (i = 0; i < m * n; i++)
		ASSERT_EQ(1152.0f, buf[i]);
	free(buf);
}

/* fpu_section_us takes a number of microseconds, nothing else. */
TEST_F(fault, fpu_section_us_bad_values)
{
	static const char *const bad[] = { "x", "-1", "4294967296" };
	char now[32];
	unsigned int i;

	ASSERT_EQ(0, sysfs_rw(FPU_SECTION_US, fpu_section_us,
			      sizeof(fpu_section_us), NULL));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ASSERT_NE(0, sysfs_rw(FPU_SECTION_US, NULL, 0, bad[i]));
	ASSERT_EQ(0, sysfs_rw(FPU_SECTION_US, now, sizeof(now), NULL));
	ASSERT_STREQ(fpu_section_us, now);
}

TEST_HARNESS_MAIN

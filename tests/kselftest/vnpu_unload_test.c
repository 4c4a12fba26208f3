// SPDX-License-Identifier: GPL-2.0
/*
 * vnpu module lifetime: rmmod is refused while a file, an mmap or an
 * exported dma-buf is alive, and succeeds once they are gone; then the
 * module is loaded again (VNPU_VM_KO, VNPU_VM_PARAMS from the VM harness)
 * for the tests that follow. Runs alone.
 */
#include <sys/wait.h>

#include "vnpu_test.h"

static int rmmod_vnpu(void)
{
	return system("rmmod vnpu 2>/dev/null");
}

static int insmod_vnpu_with(const char *extra)
{
	return vnpu_insmod(extra);
}

static int insmod_vnpu(void)
{
	return insmod_vnpu_with("");
}

FIXTURE(unload) {
	int fd;
};

FIXTURE_SETUP(unload)
{
	VNPU_OPEN_OR_SKIP(self->fd);
	if (!getenv("VNPU_VM_KO"))
		SETUP_SKIP("not in the VM harness (VNPU_VM_KO unset)");
}

FIXTURE_TEARDOWN(unload)
{
	if (self->fd >= 0)
		close(self->fd);
	/* Leave the module loaded, whatever happened. */
	if (access("/sys/module/vnpu", F_OK))
		insmod_vnpu();
}

static void unload_and_reload(struct __test_metadata *_metadata)
{
	ASSERT_EQ(0, rmmod_vnpu());
	ASSERT_EQ(0, insmod_vnpu());
	ASSERT_EQ(0, access("/sys/module/vnpu", F_OK));
}

TEST_F(unload, refused_while_file_open)
{
	ASSERT_NE(0, rmmod_vnpu());
	close(self->fd);
	self->fd = -1;
	unload_and_reload(_metadata);
}

TEST_F(unload, refused_while_mmapped)
{
	uint32_t h = bo_create(_metadata, self->fd, 4096);
	char *map = bo_mmap(_metadata, self->fd, h, 4096);

	map[0] = 1;
	close(self->fd);
	self->fd = -1;
	ASSERT_NE(0, rmmod_vnpu());
	munmap(map, 4096);
	unload_and_reload(_metadata);
}

TEST_F(unload, refused_while_dmabuf_alive)
{
	uint32_t h = bo_create(_metadata, self->fd, 4096);
	struct drm_prime_handle p = { .handle = h, .flags = DRM_CLOEXEC };

	ASSERT_EQ(0, vnpu_ioctl(self->fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p));
	close(self->fd);
	self->fd = -1;
	ASSERT_NE(0, rmmod_vnpu());
	close(p.fd);
	unload_and_reload(_metadata);
}

TEST_F_TIMEOUT(unload, after_jobs_of_closed_file, 120)
{
	struct drm_vnpu_slot slot = { .flags = DRM_VNPU_SLOT_WRITE };
	struct stream s = { 0 }, sp = { 0 };
	int i;

	slot.handle = bo_create(_metadata, self->fd, 1 << 20);
	stream_fill(&s, tensor_1d(0, VNPU_DTYPE_U32, 0, 1 << 18), 1);
	stream_spin(&sp);
	run_stream(_metadata, self->fd, &sp, NULL, 0);
	for (i = 0; i < 20; i++)
		run_stream(_metadata, self->fd, &s, &slot, 1);
	close(self->fd);
	self->fd = -1;
	unload_and_reload(_metadata);
}

/*
 * Out-of-range module parameters fail the load cleanly. Six loads of a
 * module read over 9p take a minute under TCG on a busy host.
 */
TEST_F_TIMEOUT(unload, bad_module_params_refused, 300)
{
	static const char *const bad[] = {
		"num_devices=0", "num_devices=9", "tiles=65",
		"mem_limit_mb=0", "timeout_ms=0",
	};
	unsigned int i;

	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(0, rmmod_vnpu());
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ASSERT_NE(0, insmod_vnpu_with(bad[i]));
		ASSERT_NE(0, access("/sys/module/vnpu", F_OK));
	}
	ASSERT_EQ(0, insmod_vnpu());
	self->fd = vnpu_open(0);
	ASSERT_LE(0, self->fd);
}

/* A child uses BOs, mmaps, dma-bufs and jobs, then exits: nothing stays. */
TEST_F_TIMEOUT(unload, nothing_left_after_exit, 120)
{
	pid_t pid;
	int status, i;

	if (vnpu_state_figure("bos") < 0)
		SKIP(return, "no vnpu debugfs");
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct drm_vnpu_slot slot = { .flags = DRM_VNPU_SLOT_WRITE };
		struct stream s = { 0 }, sp = { 0 };
		int fd = vnpu_open(0), dmabuf;
		char *map;

		slot.handle = bo_create(_metadata, fd, 1 << 20);
		map = bo_mmap(_metadata, fd, slot.handle, 1 << 20);
		map[0] = 1;
		ASSERT_EQ(0, prime_export(fd, slot.handle, &dmabuf));
		stream_fill(&s, tensor_1d(0, VNPU_DTYPE_U32, 0, 1 << 18), 1);
		stream_spin(&sp);
		for (i = 0; i < 30; i++)
			run_stream(_metadata, fd, i == 10 ? &sp : &s, &slot, 1);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, WEXITSTATUS(status));
	/* The jobs of the dead process drain; then nothing is left. */
	for (i = 0; i < 600 && vnpu_state_figure("jobs_in_flight"); i++)
		usleep(100000);
	ASSERT_EQ(0, vnpu_state_figure("jobs_in_flight"));
	ASSERT_EQ(0, vnpu_state_figure("bos"));
	ASSERT_EQ(0, vnpu_state_figure("mem_used"));
	ASSERT_EQ(1, vnpu_state_figure("clients"));
}

TEST_HARNESS_MAIN

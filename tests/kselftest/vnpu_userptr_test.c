// SPDX-License-Identifier: GPL-2.0
/*
 * vnpu uAPI: BO_USERPTR, a BO over the caller's own memory. The memory
 * limit and allocation failures are device-wide: vnpu_fault_test has them.
 */
#include <sys/wait.h>

#include "vnpu_test.h"

#define PAGE 4096u

FIXTURE(userptr) {
	int fd;
	uint32_t *mem;		/* 4 pages, read-write */
};

FIXTURE_SETUP(userptr)
{
	VNPU_OPEN_OR_SKIP(self->fd);
	if (!(get_param(_metadata, self->fd, DRM_VNPU_PARAM_CAPABILITIES) &
	      DRM_VNPU_CAP_USERPTR))
		SETUP_SKIP("the driver has no BO_USERPTR");
	self->mem = anon_map(_metadata, 4 * PAGE, PROT_READ | PROT_WRITE);
	fill_random(self->mem, 4 * PAGE, 24);
}

FIXTURE_TEARDOWN(userptr)
{
	if (self->mem)
		munmap(self->mem, 4 * PAGE);
	if (self->fd >= 0)
		close(self->fd);
}

/* One job: COPY @n u32 from slot 0 to slot 1, then wait for it. */
static void run_copy(struct __test_metadata *_metadata, int fd, uint32_t src,
		     uint32_t dst, uint64_t n)
{
	struct drm_vnpu_slot slots[2] = {
		{ src, DRM_VNPU_SLOT_READ }, { dst, DRM_VNPU_SLOT_WRITE },
	};
	struct stream s = { 0 };

	stream_copy(&s, tensor_1d(1, VNPU_DTYPE_U32, 0, n),
		    tensor_1d(0, VNPU_DTYPE_U32, 0, n));
	ASSERT_EQ(DRM_VNPU_JOB_OK,
		  wait_job(_metadata, fd, run_stream(_metadata, fd, &s, slots, 2)));
}

TEST_F(userptr, info_size)
{
	uint32_t h = bo_userptr(_metadata, self->fd, self->mem, 4 * PAGE, 0);

	ASSERT_EQ(4 * PAGE, bo_info(_metadata, self->fd, h).size);
}

/* The BO and the process see the same memory, both ways, no copy. */
TEST_F(userptr, shares_memory)
{
	uint32_t h = bo_userptr(_metadata, self->fd, self->mem, 4 * PAGE, 0);
	uint32_t out[4], in[4] = { 1, 2, 3, 4 };

	bo_download(_metadata, self->fd, h, 8 * PAGE / 4, out, sizeof(out));
	ASSERT_EQ(0, memcmp(out, self->mem + 2 * PAGE / 4, sizeof(out)));
	self->mem[PAGE / 4] = 77;
	bo_download(_metadata, self->fd, h, PAGE, out, 4);
	ASSERT_EQ(77, out[0]);
	bo_upload(_metadata, self->fd, h, 12, in, sizeof(in));
	ASSERT_EQ(0, memcmp(self->mem + 3, in, sizeof(in)));
}

/* A job reads one userptr BO and writes another: the process sees it. */
TEST_F(userptr, job_reads_and_writes)
{
	uint32_t *dst = anon_map(_metadata, 4 * PAGE, PROT_READ | PROT_WRITE);
	uint32_t src_h = bo_userptr(_metadata, self->fd, self->mem, 4 * PAGE, 0);
	uint32_t dst_h = bo_userptr(_metadata, self->fd, dst, 4 * PAGE, 0);

	run_copy(_metadata, self->fd, src_h, dst_h, PAGE);
	ASSERT_EQ(0, memcmp(dst, self->mem, 4 * PAGE));
	munmap(dst, 4 * PAGE);
}

/* A read-only BO over PROT_READ memory feeds a job. */
TEST_F(userptr, read_only_memory)
{
	uint32_t *ro = anon_map(_metadata, PAGE, PROT_READ | PROT_WRITE);
	uint32_t dst = bo_create(_metadata, self->fd, PAGE), h, out[8];

	fill_random(ro, PAGE, 5);
	ASSERT_EQ(0, mprotect(ro, PAGE, PROT_READ));
	h = bo_userptr(_metadata, self->fd, ro, PAGE,
		       DRM_VNPU_BO_USERPTR_READ_ONLY);
	run_copy(_metadata, self->fd, h, dst, 8);
	bo_download(_metadata, self->fd, dst, 0, out, sizeof(out));
	ASSERT_EQ(0, memcmp(out, ro, sizeof(out)));
	munmap(ro, PAGE);
}

TEST_F(userptr, read_only_memory_asked_writable)
{
	ASSERT_EQ(0, mprotect(self->mem, PAGE, PROT_READ));
	bo_userptr_err(_metadata, self->fd, EFAULT, self->mem, PAGE, 0);
	bo_userptr_err(_metadata, self->fd, EFAULT, self->mem, 4 * PAGE, 0);
}

/* Neither a job slot nor an upload may write a read-only BO. */
TEST_F(userptr, read_only_not_written)
{
	uint32_t h = bo_userptr(_metadata, self->fd, self->mem, PAGE,
				DRM_VNPU_BO_USERPTR_READ_ONLY);
	struct drm_vnpu_slot slot = { h, DRM_VNPU_SLOT_READ | DRM_VNPU_SLOT_WRITE };
	struct drm_vnpu_submit a;
	struct stream s = { 0 };
	uint32_t v = 1;

	stream_fill(&s, tensor_1d(0, VNPU_DTYPE_U32, 0, 4), 9);
	submit_prepare(_metadata, self->fd, &s, &slot, 1, &a);
	submit_err(_metadata, self->fd, EINVAL, &a);
	ASSERT_EQ(-EINVAL, _bo_xfer(self->fd, 1, h, 0, 4, &v, 0));
	ASSERT_EQ(0, _bo_xfer(self->fd, 0, h, 0, 4, &v, 0));
	ASSERT_EQ(self->mem[0], v);
}

TEST_F(userptr, read_only_not_profiled)
{
	uint32_t h = bo_userptr(_metadata, self->fd, self->mem, PAGE,
				DRM_VNPU_BO_USERPTR_READ_ONLY);
	struct drm_vnpu_submit a;
	struct stream s = { 0 };

	stream_nop(&s);
	submit_prepare(_metadata, self->fd, &s, NULL, 0, &a);
	a.flags = DRM_VNPU_SUBMIT_PROFILE;
	a.profile_handle = h;
	submit_err(_metadata, self->fd, EINVAL, &a);
}

TEST_F(userptr, bad_flags)
{
	bo_userptr_err(_metadata, self->fd, EINVAL, self->mem, PAGE, 2);
	bo_userptr_err(_metadata, self->fd, EINVAL, self->mem, PAGE, 0x80000000u);
}

TEST_F(userptr, unaligned_ptr)
{
	bo_userptr_err(_metadata, self->fd, EINVAL, (char *)self->mem + 8,
		       PAGE, 0);
	bo_userptr_err(_metadata, self->fd, EINVAL, (char *)self->mem + PAGE - 1,
		       PAGE, 0);
}

TEST_F(userptr, unaligned_size)
{
	bo_userptr_err(_metadata, self->fd, EINVAL, self->mem, 100, 0);
	bo_userptr_err(_metadata, self->fd, EINVAL, self->mem, PAGE + 1, 0);
}

TEST_F(userptr, zero_size)
{
	bo_userptr_err(_metadata, self->fd, EINVAL, self->mem, 0, 0);
}

TEST_F(userptr, huge)
{
	uint64_t max = get_param(_metadata, self->fd, DRM_VNPU_PARAM_MAX_BO_SIZE);

	bo_userptr_err(_metadata, self->fd, EINVAL, self->mem, max + PAGE, 0);
	bo_userptr_err(_metadata, self->fd, EINVAL, self->mem, 1ull << 62, 0);
	bo_userptr_err(_metadata, self->fd, EINVAL, self->mem, ~0ull & ~(PAGE - 1ull), 0);
}

/* The end wraps around the address space, or lies past user space. */
TEST_F(userptr, overflowing)
{
	bo_userptr_err(_metadata, self->fd, EFAULT,
		       (void *)(uintptr_t)(~0ull & ~(PAGE - 1ull)), 2 * PAGE, 0);
	bo_userptr_err(_metadata, self->fd, EFAULT,
		       (void *)(uintptr_t)0xffff800000000000ull, PAGE, 0);
	bo_userptr_err(_metadata, self->fd, EFAULT,
		       (void *)(uintptr_t)0x7ffffffff000ull, 2 * PAGE, 0);
}

TEST_F(userptr, unmapped)
{
	void *p = anon_map(_metadata, 2 * PAGE, PROT_READ | PROT_WRITE);

	ASSERT_EQ(0, munmap(p, 2 * PAGE));
	bo_userptr_err(_metadata, self->fd, EFAULT, p, PAGE, 0);
	bo_userptr_err(_metadata, self->fd, EFAULT, NULL, PAGE, 0);
}

/* A hole in the middle: the pages pinned before it are let go. */
TEST_F(userptr, partly_unmapped)
{
	ASSERT_EQ(0, munmap(self->mem + 2 * PAGE / 4, PAGE));
	bo_userptr_err(_metadata, self->fd, EFAULT, self->mem, 4 * PAGE, 0);
	bo_userptr_err(_metadata, self->fd, EFAULT, self->mem, 4 * PAGE,
		       DRM_VNPU_BO_USERPTR_READ_ONLY);
	bo_userptr(_metadata, self->fd, self->mem, 2 * PAGE, 0);
}

TEST_F(userptr, null_arg)
{
	ASSERT_EQ(-EFAULT, vnpu_ioctl(self->fd, DRM_IOCTL_VNPU_BO_USERPTR, NULL));
}

/* No shmem file behind it: no mmap through the render node. */
TEST_F(userptr, mmap_refused)
{
	uint32_t h = bo_userptr(_metadata, self->fd, self->mem, PAGE, 0);
	struct drm_vnpu_bo_info info = bo_info(_metadata, self->fd, h);

	ASSERT_EQ(MAP_FAILED, mmap(NULL, PAGE, PROT_READ, MAP_SHARED, self->fd,
				   info.mmap_offset));
}

/*
 * Exported as a dma-buf and imported by another file, the BO is the same
 * memory: that file's jobs read the process's data and their writes
 * reach it. The dma-buf itself does not mmap.
 */
TEST_F(userptr, export_shares_memory)
{
	uint32_t h = bo_userptr(_metadata, self->fd, self->mem, 4 * PAGE, 0);
	uint32_t h2, bo, out[PAGE / 4];
	int fd2, dmabuf = -1;

	ASSERT_EQ(0, prime_export(self->fd, h, &dmabuf));
	ASSERT_EQ(MAP_FAILED, mmap(NULL, PAGE, PROT_READ, MAP_SHARED, dmabuf, 0));
	fd2 = vnpu_open(0);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, prime_import(fd2, dmabuf, &h2));
	ASSERT_EQ(4 * PAGE, bo_info(_metadata, fd2, h2).size);
	bo = bo_create(_metadata, fd2, PAGE);
	run_copy(_metadata, fd2, h2, bo, PAGE / 4);
	bo_download(_metadata, fd2, bo, 0, out, PAGE);
	ASSERT_EQ(0, memcmp(out, self->mem, PAGE));
	fill_random(out, PAGE, 7);
	bo_upload(_metadata, fd2, bo, 0, out, PAGE);
	run_copy(_metadata, fd2, bo, h2, PAGE / 4);
	ASSERT_EQ(0, memcmp(out, self->mem, PAGE));
	close(fd2);
	close(dmabuf);
}

/* Importers could write a read-only BO: it does not export. */
TEST_F(userptr, export_read_only_refused)
{
	uint32_t h = bo_userptr(_metadata, self->fd, self->mem, PAGE,
				DRM_VNPU_BO_USERPTR_READ_ONLY);
	int dmabuf = -1;

	ASSERT_EQ(-EINVAL, prime_export(self->fd, h, &dmabuf));
}

/*
 * The dma-buf holds the BO: with the handle closed and the memory
 * unmapped, an import still has the pages and their data.
 */
TEST_F(userptr, export_outlives_handle_and_munmap)
{
	uint32_t h = bo_userptr(_metadata, self->fd, self->mem, 4 * PAGE, 0);
	uint32_t *copy = malloc(4 * PAGE), *out = malloc(4 * PAGE);
	int dmabuf = -1;

	ASSERT_NE(NULL, copy);
	ASSERT_NE(NULL, out);
	memcpy(copy, self->mem, 4 * PAGE);
	ASSERT_EQ(0, prime_export(self->fd, h, &dmabuf));
	gem_close(self->fd, h);
	ASSERT_EQ(0, munmap(self->mem, 4 * PAGE));
	self->mem = NULL;
	ASSERT_EQ(0, prime_import(self->fd, dmabuf, &h));
	bo_download(_metadata, self->fd, h, 0, out, 4 * PAGE);
	ASSERT_EQ(0, memcmp(copy, out, 4 * PAGE));
	gem_close(self->fd, h);
	close(dmabuf);
	free(copy);
	free(out);
}

/* Another driver (vgem) maps the pinned pages through an sg table. */
TEST_F(userptr, export_to_vgem)
{
	uint32_t vh, h = bo_userptr(_metadata, self->fd, self->mem, 2 * PAGE, 0);
	int vgem_fd, dmabuf = -1;

	if (vgem_load())
		SKIP(return, "cannot run modprobe");
	vgem_fd = drm_open_driver("vgem", "card", 0, 0);
	if (vgem_fd < 0)
		SKIP(return, "vgem is not available");
	ASSERT_EQ(0, prime_export(self->fd, h, &dmabuf));
	ASSERT_EQ(0, prime_import(vgem_fd, dmabuf, &vh));
	gem_close(vgem_fd, vh);
	close(dmabuf);
	close(vgem_fd);
}

/* After munmap() the BO keeps the pages it pinned, with their data. */
TEST_F(userptr, munmap_keeps_pages)
{
	uint32_t h = bo_userptr(_metadata, self->fd, self->mem, 4 * PAGE, 0);
	uint32_t *copy = malloc(4 * PAGE), *out = malloc(4 * PAGE);

	ASSERT_NE(NULL, copy);
	ASSERT_NE(NULL, out);
	memcpy(copy, self->mem, 4 * PAGE);
	ASSERT_EQ(0, munmap(self->mem, 4 * PAGE));
	self->mem = NULL;
	bo_download(_metadata, self->fd, h, 0, out, 4 * PAGE);
	ASSERT_EQ(0, memcmp(copy, out, 4 * PAGE));
	free(copy);
	free(out);
}

/*
 * After fork() the parent keeps the pinned pages: its writes reach the
 * BO, the child's (to its copies) do not.
 */
TEST_F(userptr, fork_parent_keeps_pages)
{
	uint32_t h = bo_userptr(_metadata, self->fd, self->mem, PAGE, 0);
	uint32_t v = 0;
	int status;
	pid_t pid;

	self->mem[0] = 1;
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		self->mem[0] = 2;
		_exit(self->mem[0] == 2 ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, WEXITSTATUS(status));
	bo_download(_metadata, self->fd, h, 0, &v, 4);
	ASSERT_EQ(1, v);
	self->mem[0] = 3;
	bo_download(_metadata, self->fd, h, 0, &v, 4);
	ASSERT_EQ(3, v);
}

/* Freeing the BO unpins: the memory stays the process's. */
TEST_F(userptr, close_then_reuse)
{
	uint32_t h = bo_userptr(_metadata, self->fd, self->mem, 4 * PAGE, 0);

	gem_close(self->fd, h);
	bo_info_err(_metadata, self->fd, ENOENT, h, 0);
	self->mem[5] = 5;
	h = bo_userptr(_metadata, self->fd, self->mem, 4 * PAGE, 0);
	ASSERT_EQ(5, self->mem[5]);
}

TEST_HARNESS_MAIN

// SPDX-License-Identifier: GPL-2.0
/*
 * vnpu uAPI: SUBMIT, WAIT, CANCEL, syncobjs, implicit fences, ordering,
 * profiling, hangs, file lifetime, and short jobs run in SUBMIT itself.
 */
#include <sched.h>
#include <stddef.h>
#include <sys/wait.h>

#include <linux/dma-buf.h>

#include "vnpu_test.h"

FIXTURE(job) {
	int fd;
	uint32_t bo;		/* 1 MiB data BO, slot 0 */
	struct drm_vnpu_slot slot;
	struct stream s;	/* one FILL of the first 256 u32 of the BO */
	struct drm_vnpu_submit a;
};

FIXTURE_SETUP(job)
{
	VNPU_OPEN_OR_SKIP(self->fd);
	self->bo = bo_create(_metadata, self->fd, 1 << 20);
	self->slot.handle = self->bo;
	self->slot.flags = DRM_VNPU_SLOT_READ | DRM_VNPU_SLOT_WRITE;
	memset(&self->s, 0, sizeof(self->s));
	stream_fill(&self->s, tensor_1d(0, VNPU_DTYPE_U32, 0, 256), 0x1234);
	submit_prepare(_metadata, self->fd, &self->s, &self->slot, 1, &self->a);
}

FIXTURE_TEARDOWN(job)
{
	if (self->fd >= 0)
		close(self->fd);
}

static int syncobj_create(int fd, uint32_t *handle, uint32_t flags)
{
	struct drm_syncobj_create c = { .flags = flags };
	int ret = vnpu_ioctl(fd, DRM_IOCTL_SYNCOBJ_CREATE, &c);

	*handle = c.handle;
	return ret;
}

static int syncobj_wait(int fd, uint32_t handle, int64_t deadline)
{
	struct drm_syncobj_wait w = {
		.handles = (uintptr_t)&handle, .count_handles = 1,
		.timeout_nsec = deadline,
	};

	return vnpu_ioctl(fd, DRM_IOCTL_SYNCOBJ_WAIT, &w);
}

/* @self->a becomes a long job: 16 fills of the whole 1 MiB BO. */
static void prepare_long_job(struct __test_metadata *_metadata,
			     FIXTURE_DATA(job) *self)
{
	int i;

	memset(&self->s, 0, sizeof(self->s));
	for (i = 0; i < 16; i++)
		stream_fill(&self->s, tensor_1d(0, VNPU_DTYPE_U8, 0, 1 << 20), i);
	submit_prepare(_metadata, self->fd, &self->s, &self->slot, 1, &self->a);
}

/* SUBMIT's result of a queued job: none, whatever came in. */
static void assert_no_submit_result(struct __test_metadata *_metadata,
				    const struct drm_vnpu_submit *a)
{
	ASSERT_EQ(0, a->out_flags);
	ASSERT_EQ(0, a->status);
	ASSERT_EQ(0, a->fault_cmd);
	ASSERT_EQ(0, a->start_ns);
	ASSERT_EQ(0, a->end_ns);
}

TEST_F(job, submit_fill_ok)
{
	struct drm_vnpu_wait w;
	uint32_t out[257];
	uint64_t id;
	int i;

	id = submit(_metadata, self->fd, &self->a);
	ASSERT_EQ(1, id);
	ASSERT_EQ(0, _wait_job(self->fd, id, now_ns() + LONG_WAIT_NS, &w));
	ASSERT_EQ(DRM_VNPU_JOB_OK, w.status);
	ASSERT_NE(0, w.start_ns);
	ASSERT_LE(w.start_ns, w.end_ns);
	ASSERT_GE((uint64_t)now_ns(), w.end_ns);
	bo_download(_metadata, self->fd, self->bo, 0, out, sizeof(out));
	for (i = 0; i < 256; i++)
		ASSERT_EQ(0x1234, out[i]);
	ASSERT_EQ(0, out[256]);
}

TEST_F(job, submit_ids_increase)
{
	uint64_t a = submit(_metadata, self->fd, &self->a);
	uint64_t b = submit(_metadata, self->fd, &self->a);

	ASSERT_EQ(a + 1, b);
}

TEST_F(job, submit_bad_flags)
{
	self->a.flags = 1u << 5;
	submit_err(_metadata, self->fd, EINVAL, &self->a);
}

TEST_F(job, submit_bad_pad)
{
	self->a.pad = 1;
	submit_err(_metadata, self->fd, EINVAL, &self->a);
}

TEST_F(job, submit_bad_pad2)
{
	self->a.pad2 = 1;
	submit_err(_metadata, self->fd, EINVAL, &self->a);
}

/*
 * A program built with uAPI version 1's struct drm_vnpu_submit (no result
 * members, a smaller ioctl number) submits as before, and the driver
 * writes nothing past the struct it passed.
 */
struct drm_vnpu_submit_v1 {
	__u32 cmd_handle;
	__u32 flags;
	__u64 cmd_offset;
	__u64 cmd_size;
	__u64 slots_ptr;
	__u32 slot_count;
	__u32 in_syncobj_count;
	__u64 in_syncobjs_ptr;
	__u32 out_syncobj;
	__u32 priority;
	__u32 profile_handle;
	__u32 pad;
	__u64 job_id;
};

#define DRM_IOCTL_VNPU_SUBMIT_V1 \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VNPU_SUBMIT, struct drm_vnpu_submit_v1)

TEST_F(job, submit_v1_struct)
{
	struct {
		struct drm_vnpu_submit_v1 a;
		unsigned char canary[32];
	} v1;
	uint32_t out[2];
	int i;

	ASSERT_EQ(offsetof(struct drm_vnpu_submit, out_flags), sizeof(v1.a));
	memcpy(&v1.a, &self->a, sizeof(v1.a));
	memset(v1.canary, 0xa5, sizeof(v1.canary));
	ASSERT_EQ(0, vnpu_ioctl(self->fd, DRM_IOCTL_VNPU_SUBMIT_V1, &v1.a));
	ASSERT_EQ(1, v1.a.job_id);
	for (i = 0; i < (int)sizeof(v1.canary); i++)
		ASSERT_EQ(0xa5, v1.canary[i]);
	ASSERT_EQ(DRM_VNPU_JOB_OK, wait_job(_metadata, self->fd, v1.a.job_id));
	bo_download(_metadata, self->fd, self->bo, 0, out, sizeof(out));
	ASSERT_EQ(0x1234, out[0]);

	/* A version 1 struct with garbage in its pad is refused. */
	v1.a.pad = 1;
	ASSERT_EQ(-EINVAL, vnpu_ioctl(self->fd, DRM_IOCTL_VNPU_SUBMIT_V1, &v1.a));
}

/* A queued job: SUBMIT returns no result, whatever the struct held. */
TEST_F_TIMEOUT(job, submit_result_none_when_queued, 120)
{
	struct drm_vnpu_submit sa;
	struct stream s = { 0 };
	uint64_t long_id, id;

	prepare_long_job(_metadata, self);
	stream_nop(&s);
	submit_prepare(_metadata, self->fd, &s, NULL, 0, &sa);

	long_id = submit(_metadata, self->fd, &self->a);
	assert_no_submit_result(_metadata, &self->a);
	/* Behind the file's long job: queued, not run at submit. */
	sa.out_flags = DRM_VNPU_SUBMIT_OUT_ENDED;
	sa.status = DRM_VNPU_JOB_FAULT;
	sa.fault_cmd = 7;
	sa.start_ns = sa.end_ns = 1;
	id = submit(_metadata, self->fd, &sa);
	assert_no_submit_result(_metadata, &sa);
	ASSERT_EQ(DRM_VNPU_JOB_OK, wait_job(_metadata, self->fd, long_id));
	ASSERT_EQ(DRM_VNPU_JOB_OK, wait_job(_metadata, self->fd, id));
}

TEST_F(job, submit_profile_handle_without_flag)
{
	self->a.profile_handle = self->bo;
	submit_err(_metadata, self->fd, EINVAL, &self->a);
}

TEST_F(job, submit_bad_priority)
{
	self->a.priority = 3;
	submit_err(_metadata, self->fd, EINVAL, &self->a);
}

TEST_F(job, submit_misaligned_cmd_offset)
{
	self->a.cmd_offset = 4;
	submit_err(_metadata, self->fd, EINVAL, &self->a);
}

TEST_F(job, submit_zero_cmd_size)
{
	self->a.cmd_size = 0;
	submit_err(_metadata, self->fd, EINVAL, &self->a);
}

TEST_F(job, submit_unaligned_cmd_size)
{
	self->a.cmd_size -= 4;
	submit_err(_metadata, self->fd, EINVAL, &self->a);
}

TEST_F(job, submit_huge_cmd_size)
{
	self->a.cmd_size = DRM_VNPU_MAX_CMD_SIZE + 8;
	submit_err(_metadata, self->fd, EINVAL, &self->a);
}

TEST_F(job, submit_cmd_beyond_bo)
{
	self->a.cmd_offset = 4096;
	submit_err(_metadata, self->fd, EINVAL, &self->a);
}

TEST_F(job, submit_cmd_offset_overflow)
{
	self->a.cmd_offset = ~7ull;
	submit_err(_metadata, self->fd, EINVAL, &self->a);
}

TEST_F(job, submit_too_many_slots)
{
	self->a.slot_count = DRM_VNPU_MAX_SLOTS + 1;
	submit_err(_metadata, self->fd, EINVAL, &self->a);
}

TEST_F(job, submit_max_slots)
{
	struct drm_vnpu_slot *slots = calloc(DRM_VNPU_MAX_SLOTS, sizeof(*slots));
	int i;

	ASSERT_NE(NULL, slots);
	for (i = 0; i < DRM_VNPU_MAX_SLOTS; i++)
		slots[i] = self->slot;
	self->a.slots_ptr = (uintptr_t)slots;
	self->a.slot_count = DRM_VNPU_MAX_SLOTS;
	ASSERT_EQ(DRM_VNPU_JOB_OK,
		  wait_job(_metadata, self->fd, submit(_metadata, self->fd, &self->a)));
	free(slots);
}

TEST_F(job, submit_too_many_syncobjs)
{
	self->a.in_syncobj_count = DRM_VNPU_MAX_IN_SYNCOBJS + 1;
	submit_err(_metadata, self->fd, EINVAL, &self->a);
}

TEST_F(job, submit_bad_cmd_handle)
{
	self->a.cmd_handle = 4242;
	submit_err(_metadata, self->fd, ENOENT, &self->a);
}

TEST_F(job, submit_foreign_cmd_handle)
{
	int fd2 = vnpu_open(0);
	uint32_t h = 0;
	int i;

	ASSERT_LE(0, fd2);
	for (i = 0; i < 8; i++)
		h = bo_create(_metadata, fd2, 4096);
	self->a.cmd_handle = h;
	submit_err(_metadata, self->fd, ENOENT, &self->a);
	close(fd2);
}

TEST_F(job, submit_bad_slot_handle)
{
	self->slot.handle = 4242;
	submit_err(_metadata, self->fd, ENOENT, &self->a);
}

TEST_F(job, submit_zero_slot_flags)
{
	self->slot.flags = 0;
	submit_err(_metadata, self->fd, EINVAL, &self->a);
}

TEST_F(job, submit_unknown_slot_flags)
{
	self->slot.flags |= 4;
	submit_err(_metadata, self->fd, EINVAL, &self->a);
}

TEST_F(job, submit_write_to_read_slot)
{
	self->slot.flags = DRM_VNPU_SLOT_READ;
	submit_err(_metadata, self->fd, EINVAL, &self->a);
}

TEST_F(job, submit_null_slots)
{
	self->a.slots_ptr = 0;
	submit_err(_metadata, self->fd, EFAULT, &self->a);
}

TEST_F(job, submit_null_syncobjs)
{
	self->a.in_syncobj_count = 1;
	submit_err(_metadata, self->fd, EFAULT, &self->a);
}

TEST_F(job, submit_bad_in_syncobj)
{
	uint32_t h = 4242;

	self->a.in_syncobjs_ptr = (uintptr_t)&h;
	self->a.in_syncobj_count = 1;
	submit_err(_metadata, self->fd, ENOENT, &self->a);
}

TEST_F(job, submit_bad_out_syncobj)
{
	self->a.out_syncobj = 4242;
	submit_err(_metadata, self->fd, ENOENT, &self->a);
}

TEST_F(job, submit_null_arg)
{
	ASSERT_EQ(-EFAULT, vnpu_ioctl(self->fd, DRM_IOCTL_VNPU_SUBMIT, NULL));
}

TEST_F(job, submit_profile_too_small)
{
	struct stream s = { 0 };
	int i;

	/* 300 commands need 4800 bytes: one page is too small. */
	for (i = 0; i < 300; i++)
		stream_nop(&s);
	submit_prepare(_metadata, self->fd, &s, &self->slot, 1, &self->a);
	self->a.flags = DRM_VNPU_SUBMIT_PROFILE;
	self->a.profile_handle = bo_create(_metadata, self->fd, 4096);
	submit_err(_metadata, self->fd, EINVAL, &self->a);
}

TEST_F(job, submit_bad_profile_handle)
{
	self->a.flags = DRM_VNPU_SUBMIT_PROFILE;
	self->a.profile_handle = 4242;
	submit_err(_metadata, self->fd, ENOENT, &self->a);
}

TEST_F(job, profile_timestamps)
{
	struct stream s = { 0 };
	struct drm_vnpu_wait w;
	uint64_t ts[8], id;
	uint32_t prof;
	int i;

	stream_nop(&s);
	stream_fill(&s, tensor_1d(0, VNPU_DTYPE_U8, 0, 1 << 20), 7);
	stream_copy(&s, tensor_1d(0, VNPU_DTYPE_U8, 0, 1000),
		    tensor_1d(0, VNPU_DTYPE_U8, 4096, 1000));
	stream_nop(&s);
	submit_prepare(_metadata, self->fd, &s, &self->slot, 1, &self->a);
	prof = bo_create(_metadata, self->fd, 4096);
	self->a.flags = DRM_VNPU_SUBMIT_PROFILE;
	self->a.profile_handle = prof;
	id = submit(_metadata, self->fd, &self->a);
	ASSERT_EQ(0, _wait_job(self->fd, id, now_ns() + LONG_WAIT_NS, &w));
	ASSERT_EQ(DRM_VNPU_JOB_OK, w.status);
	bo_download(_metadata, self->fd, prof, 0, ts, sizeof(ts));
	for (i = 0; i < 4; i++) {
		ASSERT_LE(w.start_ns, ts[2 * i]);
		ASSERT_LE(ts[2 * i], ts[2 * i + 1]);
		ASSERT_LE(ts[2 * i + 1], w.end_ns);
		if (i)
			ASSERT_LE(ts[2 * i - 1], ts[2 * i]);
	}
}

/* A job of NOPs only ends at once (in run_job) with the same results. */
TEST_F(job, nop_job_profile_timestamps)
{
	struct stream s = { 0 };
	struct drm_vnpu_wait w;
	uint64_t ts[6], id;
	uint32_t prof;
	int i;

	for (i = 0; i < 3; i++)
		stream_nop(&s);
	submit_prepare(_metadata, self->fd, &s, &self->slot, 1, &self->a);
	prof = bo_create(_metadata, self->fd, 4096);
	self->a.flags = DRM_VNPU_SUBMIT_PROFILE;
	self->a.profile_handle = prof;
	id = submit(_metadata, self->fd, &self->a);
	ASSERT_EQ(0, _wait_job(self->fd, id, now_ns() + LONG_WAIT_NS, &w));
	ASSERT_EQ(DRM_VNPU_JOB_OK, w.status);
	ASSERT_NE(0, w.start_ns);
	ASSERT_LE(w.start_ns, w.end_ns);
	bo_download(_metadata, self->fd, prof, 0, ts, sizeof(ts));
	for (i = 0; i < 3; i++) {
		ASSERT_LE(w.start_ns, ts[2 * i]);
		ASSERT_LE(ts[2 * i], ts[2 * i + 1]);
		ASSERT_LE(ts[2 * i + 1], w.end_ns);
	}
}

/* A NOP job queued behind a long job does not overtake it. */
TEST_F(job, nop_job_after_long_job)
{
	struct drm_vnpu_submit nop_args;
	struct drm_vnpu_wait w, wl;
	struct stream s = { 0 };
	uint64_t long_id, nop_id;

	prepare_long_job(_metadata, self);
	stream_nop(&s);
	submit_prepare(_metadata, self->fd, &s, &self->slot, 1, &nop_args);

	long_id = submit(_metadata, self->fd, &self->a);
	nop_id = submit(_metadata, self->fd, &nop_args);
	ASSERT_EQ(0, _wait_job(self->fd, nop_id, now_ns() + LONG_WAIT_NS, &w));
	ASSERT_EQ(DRM_VNPU_JOB_OK, w.status);
	ASSERT_EQ(0, _wait_job(self->fd, long_id, 0, &wl));
	ASSERT_EQ(DRM_VNPU_JOB_OK, wl.status);
	ASSERT_LE(wl.end_ns, w.start_ns);
}

/* Empty tensors run and touch nothing (they once divided by zero). */
TEST_F(job, empty_tensor_commands)
{
	struct vnpu_cmd_tensor t = tensor_1d(0, VNPU_DTYPE_U32, 0, 0);
	struct stream s = { 0 };
	uint32_t out[4];

	stream_fill(&s, t, 7);
	t.offset = 1 << 20;
	stream_fill(&s, t, 7);
	stream_copy(&s, tensor_1d(0, VNPU_DTYPE_U32, 0, 0),
		    tensor_1d(0, VNPU_DTYPE_U32, 4096, 0));
	ASSERT_EQ(DRM_VNPU_JOB_OK,
		  wait_job(_metadata, self->fd,
			   run_stream(_metadata, self->fd, &s, &self->slot, 1)));
	bo_download(_metadata, self->fd, self->bo, 0, out, sizeof(out));
	ASSERT_EQ(0, out[0]);
}

TEST_F(job, copy_transpose)
{
	struct vnpu_cmd_tensor src = tensor_1d(0, VNPU_DTYPE_U16, 0, 0);
	struct vnpu_cmd_tensor dst = src;
	uint16_t in[6 * 5], out[5 * 6];
	struct stream s = { 0 };
	int r, c;

	for (r = 0; r < 6 * 5; r++)
		in[r] = 100 + r;
	bo_upload(_metadata, self->fd, self->bo, 0, in, sizeof(in));
	/* src: 6 rows x 5 cols; dst at 4096: 5 rows x 6 cols. */
	src.rank = 2;
	src.dims[0] = 5;
	src.dims[1] = 6;
	src.strides[0] = 1;
	src.strides[1] = 5;
	dst.rank = 2;
	dst.offset = 4096;
	dst.dims[0] = 5;
	dst.dims[1] = 6;
	dst.strides[0] = 6;
	dst.strides[1] = 1;
	stream_copy(&s, dst, src);
	ASSERT_EQ(DRM_VNPU_JOB_OK,
		  wait_job(_metadata, self->fd,
			   run_stream(_metadata, self->fd, &s, &self->slot, 1)));
	bo_download(_metadata, self->fd, self->bo, 4096, out, sizeof(out));
	for (r = 0; r < 5; r++)
		for (c = 0; c < 6; c++)
			ASSERT_EQ(in[c * 5 + r], out[r * 6 + c]);
}

TEST_F(job, wait_poll_done_job)
{
	uint64_t id = submit(_metadata, self->fd, &self->a);
	struct drm_vnpu_wait w;

	wait_job(_metadata, self->fd, id);
	ASSERT_EQ(0, _wait_job(self->fd, id, 0, &w));
	ASSERT_EQ(DRM_VNPU_JOB_OK, w.status);
}

TEST_F(job, wait_bad_flags)
{
	struct drm_vnpu_wait w = { .job_id = submit(_metadata, self->fd, &self->a),
				   .timeout_ns = now_ns() + LONG_WAIT_NS,
				   .flags = 1 };

	ASSERT_EQ(-EINVAL, vnpu_ioctl(self->fd, DRM_IOCTL_VNPU_WAIT, &w));
}

TEST_F(job, wait_bad_pad)
{
	struct drm_vnpu_wait w = { .job_id = submit(_metadata, self->fd, &self->a),
				   .timeout_ns = now_ns() + LONG_WAIT_NS,
				   .pad = 1 };

	ASSERT_EQ(-EINVAL, vnpu_ioctl(self->fd, DRM_IOCTL_VNPU_WAIT, &w));
}

TEST_F(job, wait_bad_id)
{
	wait_err(_metadata, self->fd, ENOENT, 0, now_ns());
	wait_err(_metadata, self->fd, ENOENT, 1, now_ns());
	submit(_metadata, self->fd, &self->a);
	wait_err(_metadata, self->fd, ENOENT, 2, now_ns());
}

TEST_F(job, wait_foreign_id)
{
	int fd2 = vnpu_open(0);

	ASSERT_LE(0, fd2);
	submit(_metadata, self->fd, &self->a);
	wait_err(_metadata, fd2, ENOENT, 1, now_ns());
	close(fd2);
}

TEST_F(job, wait_null)
{
	ASSERT_EQ(-EFAULT, vnpu_ioctl(self->fd, DRM_IOCTL_VNPU_WAIT, NULL));
}

TEST_F(job, cancel_bad_args)
{
	uint64_t id = submit(_metadata, self->fd, &self->a);

	ASSERT_EQ(-EINVAL, _cancel(self->fd, id, 1, 0));
	ASSERT_EQ(-EINVAL, _cancel(self->fd, id, 0, 1));
	ASSERT_EQ(-ENOENT, _cancel(self->fd, id + 1, 0, 0));
	ASSERT_EQ(-EFAULT, vnpu_ioctl(self->fd, DRM_IOCTL_VNPU_CANCEL, NULL));
}

TEST_F(job, cancel_done_job)
{
	uint64_t id = submit(_metadata, self->fd, &self->a);

	ASSERT_EQ(DRM_VNPU_JOB_OK, wait_job(_metadata, self->fd, id));
	ASSERT_EQ(-EBUSY, _cancel(self->fd, id, 0, 0));
}

/* 100 jobs, alternating priorities: once the last is done, all are. */
TEST_F(job, ordering_last_done_means_all_done)
{
	struct drm_vnpu_wait w;
	uint64_t ids[100];
	int i;

	for (i = 0; i < 100; i++) {
		self->a.priority = i % 3;
		ids[i] = submit(_metadata, self->fd, &self->a);
	}
	ASSERT_EQ(DRM_VNPU_JOB_OK, wait_job(_metadata, self->fd, ids[99]));
	for (i = 0; i < 99; i++) {
		ASSERT_EQ(0, _wait_job(self->fd, ids[i], 0, &w));
		ASSERT_EQ(DRM_VNPU_JOB_OK, w.status);
	}
}

/* Each job's start is after the previous one's end. */
TEST_F(job, ordering_timestamps)
{
	struct drm_vnpu_wait w;
	uint64_t ids[20], prev_end = 0;
	int i;

	for (i = 0; i < 20; i++)
		ids[i] = submit(_metadata, self->fd, &self->a);
	for (i = 0; i < 20; i++) {
		ASSERT_EQ(0, _wait_job(self->fd, ids[i], now_ns() + LONG_WAIT_NS, &w));
		ASSERT_LE(prev_end, w.start_ns);
		prev_end = w.end_ns;
	}
}

TEST_F(job, syncobj_out_signals)
{
	uint32_t sync;

	ASSERT_EQ(0, syncobj_create(self->fd, &sync, 0));
	self->a.out_syncobj = sync;
	submit(_metadata, self->fd, &self->a);
	ASSERT_EQ(0, syncobj_wait(self->fd, sync, now_ns() + LONG_WAIT_NS));
}

TEST_F(job, syncobj_in_unsignaled_is_einval)
{
	uint32_t sync;

	/* A syncobj without a fence has nothing to wait for. */
	ASSERT_EQ(0, syncobj_create(self->fd, &sync, 0));
	self->a.in_syncobjs_ptr = (uintptr_t)&sync;
	self->a.in_syncobj_count = 1;
	submit_err(_metadata, self->fd, EINVAL, &self->a);
}

/* A job waiting on a SPIN job's out-syncobj starts after the reset. */
TEST_F_TIMEOUT(job, syncobj_in_waits, 120)
{
	struct drm_vnpu_wait spin_w, w;
	struct stream s = { 0 };
	struct drm_vnpu_submit sa;
	uint32_t sync;
	uint64_t spin, id;
	int fd2 = vnpu_open(0);

	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, syncobj_create(self->fd, &sync, 0));
	stream_spin(&s);
	submit_prepare(_metadata, self->fd, &s, NULL, 0, &sa);
	sa.out_syncobj = sync;
	spin = submit(_metadata, self->fd, &sa);

	/* On another fd, so only the syncobj orders it after the spin. */
	{
		struct drm_syncobj_handle h = { .handle = sync };
		uint32_t sync2;

		ASSERT_EQ(0, vnpu_ioctl(self->fd, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &h));
		h.handle = 0;
		ASSERT_EQ(0, vnpu_ioctl(fd2, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &h));
		sync2 = h.handle;
		close(h.fd);
		struct drm_vnpu_slot slot = { .flags = DRM_VNPU_SLOT_WRITE };
		struct stream f = { 0 };

		slot.handle = bo_create(_metadata, fd2, 4096);
		stream_fill(&f, tensor_1d(0, VNPU_DTYPE_U8, 0, 16), 1);
		submit_prepare(_metadata, fd2, &f, &slot, 1, &sa);
		sa.in_syncobjs_ptr = (uintptr_t)&sync2;
		sa.in_syncobj_count = 1;
		id = submit(_metadata, fd2, &sa);
	}
	ASSERT_EQ(0, _wait_job(fd2, id, now_ns() + LONG_WAIT_NS, &w));
	ASSERT_EQ(DRM_VNPU_JOB_OK, w.status);
	ASSERT_EQ(0, _wait_job(self->fd, spin, now_ns() + LONG_WAIT_NS, &spin_w));
	ASSERT_EQ(DRM_VNPU_JOB_TIMEOUT, spin_w.status);
	ASSERT_LE(spin_w.end_ns, w.start_ns);
	close(fd2);
}

/*
 * Implicit fences across files: the writer waits on a spinning job; the
 * reader on another fd must still see the written data.
 */
TEST_F_TIMEOUT(job, implicit_writer_then_reader, 120)
{
	struct drm_vnpu_slot slots[2];
	struct drm_vnpu_submit sa;
	struct stream s = { 0 }, w = { 0 }, r = { 0 };
	struct drm_vnpu_wait ww, rw;
	uint32_t sync, data, out, dmabuf_h;
	uint64_t wid, rid;
	int fd2 = vnpu_open(0);
	uint32_t result[64];
	int i;

	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, syncobj_create(self->fd, &sync, 0));
	stream_spin(&s);
	submit_prepare(_metadata, self->fd, &s, NULL, 0, &sa);
	sa.out_syncobj = sync;
	submit(_metadata, self->fd, &sa);

	/* Writer: waits for the spin, then fills data. */
	data = bo_create(_metadata, self->fd, 4096);
	slots[0].handle = data;
	slots[0].flags = DRM_VNPU_SLOT_WRITE;
	stream_fill(&w, tensor_1d(0, VNPU_DTYPE_U32, 0, 64), 0xabcd);
	submit_prepare(_metadata, self->fd, &w, slots, 1, &sa);
	sa.in_syncobjs_ptr = (uintptr_t)&sync;
	sa.in_syncobj_count = 1;
	wid = submit(_metadata, self->fd, &sa);

	/* Reader on fd2 through a dma-buf: copies data to out. */
	{
		struct drm_prime_handle p = { .handle = data, .flags = DRM_CLOEXEC };

		ASSERT_EQ(0, vnpu_ioctl(self->fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p));
		p.handle = 0;
		ASSERT_EQ(0, vnpu_ioctl(fd2, DRM_IOCTL_PRIME_FD_TO_HANDLE, &p));
		dmabuf_h = p.handle;
		close(p.fd);
	}
	out = bo_create(_metadata, fd2, 4096);
	slots[0].handle = dmabuf_h;
	slots[0].flags = DRM_VNPU_SLOT_READ;
	slots[1].handle = out;
	slots[1].flags = DRM_VNPU_SLOT_WRITE;
	stream_copy(&r, tensor_1d(1, VNPU_DTYPE_U32, 0, 64),
		    tensor_1d(0, VNPU_DTYPE_U32, 0, 64));
	rid = run_stream(_metadata, fd2, &r, slots, 2);

	ASSERT_EQ(0, _wait_job(fd2, rid, now_ns() + LONG_WAIT_NS, &rw));
	ASSERT_EQ(0, _wait_job(self->fd, wid, now_ns() + LONG_WAIT_NS, &ww));
	ASSERT_EQ(DRM_VNPU_JOB_OK, rw.status);
	ASSERT_EQ(DRM_VNPU_JOB_OK, ww.status);
	ASSERT_LE(ww.end_ns, rw.start_ns);
	bo_download(_metadata, fd2, out, 0, result, sizeof(result));
	for (i = 0; i < 64; i++)
		ASSERT_EQ(0xabcd, result[i]);
	close(fd2);
}

/* vgem's fence ioctls (uapi/drm/vgem_drm.h), spelled here. */
struct vgem_fence_attach {
	uint32_t handle;
	uint32_t flags;
	uint32_t out_fence;
	uint32_t pad;
};

struct vgem_fence_signal {
	uint32_t fence;
	uint32_t flags;
};

#define VGEM_FENCE_WRITE 0x1
#define VGEM_IOCTL_FENCE_ATTACH \
	DRM_IOWR(DRM_COMMAND_BASE + 0x1, struct vgem_fence_attach)
#define VGEM_IOCTL_FENCE_SIGNAL \
	DRM_IOW(DRM_COMMAND_BASE + 0x2, struct vgem_fence_signal)

/*
 * Implicit fences across drivers: a job reading a vgem dma-buf waits for
 * vgem's write fence on it, and then sees what was written before it.
 */
TEST_F(job, implicit_fence_of_vgem_dmabuf)
{
	struct vgem_fence_attach fa = { .flags = VGEM_FENCE_WRITE };
	struct vgem_fence_signal fs = { 0 };
	struct drm_vnpu_slot slots[2];
	struct stream s = { 0 };
	struct drm_vnpu_wait w;
	uint32_t size = 4096, vh, h, out[64], *map;
	int vgem_fd = -1, dmabuf, i;
	uint64_t id;

	dmabuf = vgem_dmabuf(&vgem_fd, size, &vh);
	if (dmabuf < 0)
		SKIP(return, "vgem is not available");
	ASSERT_EQ(0, prime_import(self->fd, dmabuf, &h));
	map = vgem_mmap(vgem_fd, vh, size);
	ASSERT_NE(MAP_FAILED, map);
	fa.handle = vh;
	ASSERT_EQ(0, vnpu_ioctl(vgem_fd, VGEM_IOCTL_FENCE_ATTACH, &fa));

	slots[0].handle = h;
	slots[0].flags = DRM_VNPU_SLOT_READ;
	slots[1] = self->slot;
	stream_copy(&s, tensor_1d(1, VNPU_DTYPE_U32, 0, 64),
		    tensor_1d(0, VNPU_DTYPE_U32, 0, 64));
	id = run_stream(_metadata, self->fd, &s, slots, 2);
	wait_err(_metadata, self->fd, ETIMEDOUT, id, now_ns() + 200000000);

	for (i = 0; i < 64; i++)
		map[i] = 500 + i;
	fs.fence = fa.out_fence;
	ASSERT_EQ(0, vnpu_ioctl(vgem_fd, VGEM_IOCTL_FENCE_SIGNAL, &fs));
	ASSERT_EQ(0, _wait_job(self->fd, id, now_ns() + LONG_WAIT_NS, &w));
	ASSERT_EQ(DRM_VNPU_JOB_OK, w.status);
	bo_download(_metadata, self->fd, self->bo, 0, out, sizeof(out));
	for (i = 0; i < 64; i++)
		ASSERT_EQ(500 + i, out[i]);
	munmap(map, size);
	close(dmabuf);
	close(vgem_fd);
}

/* The device writes an imported vgem BO; vgem's mapping sees the data. */
TEST_F(job, job_writes_vgem_dmabuf)
{
	struct drm_vnpu_slot slot = { .flags = DRM_VNPU_SLOT_WRITE };
	uint32_t size = 8192, vh, *map;
	struct stream s = { 0 };
	int vgem_fd = -1, dmabuf, i;

	dmabuf = vgem_dmabuf(&vgem_fd, size, &vh);
	if (dmabuf < 0)
		SKIP(return, "vgem is not available");
	ASSERT_EQ(0, prime_import(self->fd, dmabuf, &slot.handle));
	map = vgem_mmap(vgem_fd, vh, size);
	ASSERT_NE(MAP_FAILED, map);
	stream_fill(&s, tensor_1d(0, VNPU_DTYPE_U32, 4096, 1024), 0x5a5a);
	ASSERT_EQ(DRM_VNPU_JOB_OK,
		  wait_job(_metadata, self->fd,
			   run_stream(_metadata, self->fd, &s, &slot, 1)));
	for (i = 0; i < 1024; i++) {
		ASSERT_EQ(0, map[i]);
		ASSERT_EQ(0x5a5a, map[1024 + i]);
	}
	munmap(map, size);
	close(dmabuf);
	close(vgem_fd);
}

/* A DOWNLOAD waits for the job writing the BO. */
TEST_F(job, download_waits_for_writer)
{
	uint32_t out[4];
	struct stream s = { 0 };

	stream_fill(&s, tensor_1d(0, VNPU_DTYPE_U8, 0, 1 << 20), 9);
	stream_fill(&s, tensor_1d(0, VNPU_DTYPE_U32, 0, 4), 77);
	run_stream(_metadata, self->fd, &s, &self->slot, 1);
	bo_download(_metadata, self->fd, self->bo, 0, out, sizeof(out));
	ASSERT_EQ(77, out[0]);
	ASSERT_EQ(77, out[3]);
}

TEST_F_TIMEOUT(job, wait_timeout_on_spin, 120)
{
	struct stream s = { 0 };
	uint64_t resets = get_param(_metadata, self->fd, DRM_VNPU_PARAM_RESET_COUNT);
	struct drm_vnpu_wait w;
	int64_t t0;
	uint64_t id;

	stream_spin(&s);
	id = run_stream(_metadata, self->fd, &s, NULL, 0);
	t0 = now_ns();
	wait_err(_metadata, self->fd, ETIMEDOUT, id, t0 + 100000000);
	ASSERT_LE(t0 + 100000000, now_ns());
	wait_err(_metadata, self->fd, ETIMEDOUT, id, 0);

	ASSERT_EQ(0, _wait_job(self->fd, id, now_ns() + LONG_WAIT_NS, &w));
	ASSERT_EQ(DRM_VNPU_JOB_TIMEOUT, w.status);
	ASSERT_EQ(0, w.fault_cmd);
	ASSERT_LT(resets, get_param(_metadata, self->fd, DRM_VNPU_PARAM_RESET_COUNT));
}

/* A hang on one fd: its job ends TIMEOUT, a second fd's jobs complete. */
TEST_F_TIMEOUT(job, hang_then_recovery_from_second_fd, 120)
{
	int fd2 = vnpu_open(0);
	struct drm_vnpu_slot slot = { .flags = DRM_VNPU_SLOT_WRITE };
	struct stream s = { 0 }, f = { 0 };
	uint64_t spin, ids[10];
	uint32_t out[10];
	int i;

	ASSERT_LE(0, fd2);
	stream_spin(&s);
	spin = run_stream(_metadata, self->fd, &s, NULL, 0);

	slot.handle = bo_create(_metadata, fd2, 4096);
	for (i = 0; i < 10; i++) {
		memset(&f, 0, sizeof(f));
		stream_fill(&f, tensor_1d(0, VNPU_DTYPE_U32, 4 * i, 1), i + 1);
		ids[i] = run_stream(_metadata, fd2, &f, &slot, 1);
	}
	for (i = 0; i < 10; i++)
		ASSERT_EQ(DRM_VNPU_JOB_OK, wait_job(_metadata, fd2, ids[i]));
	ASSERT_EQ(DRM_VNPU_JOB_TIMEOUT, wait_job(_metadata, self->fd, spin));
	bo_download(_metadata, fd2, slot.handle, 0, out, sizeof(out));
	for (i = 0; i < 10; i++)
		ASSERT_EQ(i + 1, out[i]);

	/* The first fd works again too. */
	ASSERT_EQ(DRM_VNPU_JOB_OK,
		  wait_job(_metadata, self->fd, submit(_metadata, self->fd, &self->a)));
	close(fd2);
}

TEST_F_TIMEOUT(job, cancel_queued_job, 120)
{
	struct stream s = { 0 };
	uint64_t spin, id;
	struct drm_vnpu_wait w;
	uint32_t out[4];

	stream_spin(&s);
	spin = run_stream(_metadata, self->fd, &s, NULL, 0);
	id = submit(_metadata, self->fd, &self->a);
	ASSERT_EQ(0, _cancel(self->fd, id, 0, 0));
	ASSERT_EQ(-EBUSY, _cancel(self->fd, id, 0, 0));
	ASSERT_EQ(0, _wait_job(self->fd, id, now_ns() + LONG_WAIT_NS, &w));
	ASSERT_EQ(DRM_VNPU_JOB_CANCELLED, w.status);
	ASSERT_EQ(0, w.start_ns);
	ASSERT_EQ(DRM_VNPU_JOB_TIMEOUT, wait_job(_metadata, self->fd, spin));
	bo_download(_metadata, self->fd, self->bo, 0, out, sizeof(out));
	ASSERT_EQ(0, out[0]);
}

TEST_F_TIMEOUT(job, cancel_running_job_is_ebusy, 120)
{
	struct stream s = { 0 };
	struct drm_vnpu_wait w;
	uint64_t id;

	stream_spin(&s);
	id = run_stream(_metadata, self->fd, &s, NULL, 0);
	/* Wait until it runs: a short WAIT times out, then CANCEL is late. */
	while (1) {
		char line[256];
		FILE *f = vnpu_debugfs_open("jobs", "r");
		int running = 0;

		if (!f)
			SKIP(return, "no debugfs");
		while (fgets(line, sizeof(line), f)) {
			unsigned long long c, j;
			unsigned int p, n, cmd;
			int state;

			if (sscanf(line, "%llu %llu %u %u %d %u", &c, &j, &p, &n,
				   &state, &cmd) == 6 && j == id && state == 2)
				running = 1;
		}
		fclose(f);
		if (running)
			break;
		usleep(10000);
	}
	ASSERT_EQ(-EBUSY, _cancel(self->fd, id, 0, 0));
	ASSERT_EQ(0, _wait_job(self->fd, id, now_ns() + LONG_WAIT_NS, &w));
	ASSERT_EQ(DRM_VNPU_JOB_TIMEOUT, w.status);
}

/*
 * A HIGH job of another file runs before LOW jobs still waiting for the
 * device: a SPIN and 100 LOW jobs fill the hardware queue first.
 */
TEST_F_TIMEOUT(job, priority_high_overtakes_low, 120)
{
	int fd2 = vnpu_open(0);
	struct drm_vnpu_slot slot = { .flags = DRM_VNPU_SLOT_WRITE };
	struct stream sp = { 0 }, f = { 0 };
	struct drm_vnpu_submit a;
	struct drm_vnpu_wait last, high;
	uint64_t id = 0, hid;
	int i;

	ASSERT_LE(0, fd2);
	stream_spin(&sp);
	submit_prepare(_metadata, self->fd, &sp, NULL, 0, &a);
	a.priority = DRM_VNPU_PRIORITY_LOW;
	submit(_metadata, self->fd, &a);
	self->a.priority = DRM_VNPU_PRIORITY_LOW;
	for (i = 0; i < 100; i++)
		id = submit(_metadata, self->fd, &self->a);

	slot.handle = bo_create(_metadata, fd2, 4096);
	stream_fill(&f, tensor_1d(0, VNPU_DTYPE_U32, 0, 4), 9);
	submit_prepare(_metadata, fd2, &f, &slot, 1, &a);
	a.priority = DRM_VNPU_PRIORITY_HIGH;
	hid = submit(_metadata, fd2, &a);

	ASSERT_EQ(0, _wait_job(fd2, hid, now_ns() + LONG_WAIT_NS, &high));
	ASSERT_EQ(0, _wait_job(self->fd, id, now_ns() + LONG_WAIT_NS, &last));
	ASSERT_EQ(DRM_VNPU_JOB_OK, high.status);
	ASSERT_EQ(DRM_VNPU_JOB_OK, last.status);
	ASSERT_LT(high.start_ns, last.start_ns);
	close(fd2);
}

static void child_submit_and_exit(struct __test_metadata *_metadata,
				  int with_spin)
{
	int fd = vnpu_open(0);
	struct drm_vnpu_slot slot = { .flags = DRM_VNPU_SLOT_WRITE };
	struct stream s = { 0 }, sp = { 0 };
	struct drm_vnpu_submit a;
	int i;

	if (fd < 0)
		_exit(2);
	slot.handle = bo_create(_metadata, fd, 4 << 20);
	stream_fill(&s, tensor_1d(0, VNPU_DTYPE_U32, 0, 1 << 20), 5);
	stream_spin(&sp);
	submit_prepare(_metadata, fd, &s, &slot, 1, &a);
	for (i = 0; i < 100; i++) {
		if (with_spin && i == 1)
			run_stream(_metadata, fd, &sp, NULL, 0);
		if (_submit(fd, &a))
			_exit(3);
	}
	close(fd);
	_exit(0);
}

TEST_F_TIMEOUT(job, close_with_100_jobs_in_flight, 120)
{
	int status;
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (!pid)
		child_submit_and_exit(_metadata, 0);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, WEXITSTATUS(status));
	ASSERT_EQ(DRM_VNPU_JOB_OK,
		  wait_job(_metadata, self->fd, submit(_metadata, self->fd, &self->a)));
}

TEST_F_TIMEOUT(job, exit_with_spin_and_jobs_in_flight, 120)
{
	int status;
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (!pid)
		child_submit_and_exit(_metadata, 1);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, WEXITSTATUS(status));
	ASSERT_EQ(DRM_VNPU_JOB_OK,
		  wait_job(_metadata, self->fd, submit(_metadata, self->fd, &self->a)));
}

/* Each process's 200 jobs each set one word; none lost or duplicated. */
static int stress_child(int index)
{
	struct drm_vnpu_slot slot = { .flags = DRM_VNPU_SLOT_WRITE };
	struct drm_vnpu_submit a;
	struct drm_vnpu_wait w;
	uint32_t out[200], cmd;
	uint64_t ids[200];
	struct stream s;
	int fd = vnpu_open(0), i;

	if (fd < 0 || _bo_create(fd, 4096, 0, &slot.handle) ||
	    _bo_create(fd, 4096, 0, &cmd))
		return 2;
	for (i = 0; i < 200; i++) {
		memset(&s, 0, sizeof(s));
		stream_fill(&s, tensor_1d(0, VNPU_DTYPE_U32, 4 * i, 1),
			    index * 1000 + i);
		if (_bo_xfer(fd, 1, cmd, 0, s.size, s.words, 0))
			return 3;
		memset(&a, 0, sizeof(a));
		a.cmd_handle = cmd;
		a.cmd_size = s.size;
		a.slots_ptr = (uintptr_t)&slot;
		a.slot_count = 1;
		a.priority = i % 3;
		if (_submit(fd, &a) || a.job_id != (uint64_t)i + 1)
			return 4;
		ids[i] = a.job_id;
	}
	for (i = 0; i < 200; i++)
		if (_wait_job(fd, ids[i], now_ns() + LONG_WAIT_NS, &w) ||
		    w.status != DRM_VNPU_JOB_OK)
			return 5;
	if (_bo_xfer(fd, 0, slot.handle, 0, sizeof(out), out, 0))
		return 6;
	for (i = 0; i < 200; i++)
		if (out[i] != (uint32_t)(index * 1000 + i))
			return 7;
	close(fd);
	return 0;
}

TEST_F_TIMEOUT(job, four_processes_200_jobs, 300)
{
	pid_t pids[4];
	int i, status;

	for (i = 0; i < 4; i++) {
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (!pids[i])
			_exit(stress_child(i + 1));
	}
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
		ASSERT_EQ(0, WEXITSTATUS(status));
	}
}

TEST_F(job, fdinfo_engine_time_moves)
{
	char path[64], line[256];
	unsigned long long ns = 0;
	FILE *f;

	wait_job(_metadata, self->fd, submit(_metadata, self->fd, &self->a));
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", self->fd);
	f = fopen(path, "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f))
		sscanf(line, "drm-engine-npu:\t%llu ns", &ns);
	fclose(f);
	ASSERT_LT(0, ns);
}

TEST_F(job, debugfs_files)
{
	static const char *const names[] = { "state", "bos", "jobs", "client_stats" };
	char line[256];
	unsigned int i;

	for (i = 0; i < 4; i++) {
		FILE *f = vnpu_debugfs_open(names[i], "r");

		if (!f)
			SKIP(return, "no debugfs");
		ASSERT_NE(NULL, fgets(line, sizeof(line), f));
		fclose(f);
	}
}

/*
 * A job that runs a real layer (a GEMM of 2^21 multiply-adds, split across
 * the tiles) adds FPU sections to the device's figures: at least one, a
 * longest one that is no longer than their total, and a culprit that is a
 * command which runs in FPU sections. Other programs may run jobs
 * meanwhile, so the figures may grow more (vnpu_fault_test checks that a
 * NOP job adds none, alone on the device).
 */
TEST_F(job, debugfs_fpu_sections_after_layer)
{
	struct fpu_figures a, b;
	struct stream s = { 0 };

	if (vnpu_fpu_figures(&a))
		SKIP(return, "no debugfs");
	stream_gemm(&s, 0, 128, 128, 128);
	ASSERT_EQ(DRM_VNPU_JOB_OK,
		  wait_job(_metadata, self->fd,
			   run_stream(_metadata, self->fd, &s, &self->slot, 1)));
	ASSERT_EQ(0, vnpu_fpu_figures(&b));
	ASSERT_LT(a.sections, b.sections);
	TH_LOG("FPU sections %" PRIu64 " -> %" PRIu64 ", longest %" PRIu64
	       " ns (opcode %" PRIu64 ", layer op %" PRIu64 "), mean %" PRIu64 " ns",
	       a.sections, b.sections, b.max_ns, b.max_opcode, b.max_layer_op,
	       b.ns / b.sections);
	ASSERT_LT(a.ns, b.ns);
	ASSERT_LT(0, b.max_ns);
	ASSERT_LE(a.max_ns, b.max_ns);
	ASSERT_LE(b.max_ns, b.ns);
	ASSERT_TRUE(b.max_opcode == VNPU_CMD_FILL || b.max_opcode == VNPU_CMD_COPY ||
		    b.max_opcode == VNPU_CMD_LAYER);
	ASSERT_EQ(b.max_opcode == VNPU_CMD_LAYER, b.max_layer_op != 0);
}

/*
 * Jobs run at submit: a short job that can start at once (its file has
 * nothing unfinished, its fences have signalled, the device is idle) runs
 * in SUBMIT itself. Whether one did is per file in fdinfo; whether the
 * device is idle depends on other tests running meanwhile, so the tests
 * below assert what must hold on either path, and retry until a job does
 * run at submit where they need one.
 */

/* The file's jobs that ran in SUBMIT itself (fdinfo). */
static uint64_t jobs_run_at_submit(struct __test_metadata *_metadata, int fd)
{
	unsigned long long n = ~0ull;
	char path[64], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f))
		sscanf(line, "vnpu-jobs-run-at-submit:\t%llu", &n);
	fclose(f);
	ASSERT_NE(~0ull, n);
	return n;
}

/*
 * Submit @a until one of its jobs runs in SUBMIT itself (the device may be
 * busy with other tests' jobs); the others are waited for in between.
 * SUBMIT says a job ended in it exactly when fdinfo counts one more job
 * run at submit; the result fields come in set to garbage each time.
 * Returns the id of the job that ran at submit.
 */
static uint64_t submit_until_run_at_submit(struct __test_metadata *_metadata,
					   int fd, struct drm_vnpu_submit *a)
{
	uint64_t before, id;
	int i;

	for (i = 0; i < 500; i++) {
		before = jobs_run_at_submit(_metadata, fd);
		a->out_flags = ~0u;
		a->status = a->fault_cmd = 0xdead;
		a->start_ns = a->end_ns = ~0ull;
		id = submit(_metadata, fd, a);
		if (jobs_run_at_submit(_metadata, fd) == before + 1) {
			ASSERT_EQ(DRM_VNPU_SUBMIT_OUT_ENDED, a->out_flags);
			return id;
		}
		ASSERT_EQ(before, jobs_run_at_submit(_metadata, fd));
		assert_no_submit_result(_metadata, a);
		ASSERT_EQ(DRM_VNPU_JOB_OK, wait_job(_metadata, fd, id));
		usleep(2000);
	}
	TH_LOG("no job ran at submit in 500 tries");
	ASSERT_TRUE(0);
	return 0;
}

/* A job run at submit has ended when SUBMIT returns, with all its results. */
TEST_F(job, run_at_submit_ended_on_return)
{
	struct stream s = { 0 };
	struct drm_vnpu_wait w;
	uint32_t sync, prof;
	uint64_t ts[4], id;
	int64_t t0 = now_ns();
	int i;

	stream_nop(&s);
	stream_nop(&s);
	submit_prepare(_metadata, self->fd, &s, &self->slot, 1, &self->a);
	ASSERT_EQ(0, syncobj_create(self->fd, &sync, 0));
	prof = bo_create(_metadata, self->fd, 4096);
	self->a.out_syncobj = sync;
	self->a.flags = DRM_VNPU_SUBMIT_PROFILE;
	self->a.profile_handle = prof;
	id = submit_until_run_at_submit(_metadata, self->fd, &self->a);

	/* Polls, not waits: everything is there already. */
	ASSERT_EQ(0, syncobj_wait(self->fd, sync, 0));
	ASSERT_EQ(0, _wait_job(self->fd, id, 0, &w));
	ASSERT_EQ(DRM_VNPU_JOB_OK, w.status);
	/* SUBMIT returned what WAIT returns. */
	ASSERT_EQ(w.status, self->a.status);
	ASSERT_EQ(w.fault_cmd, self->a.fault_cmd);
	ASSERT_EQ(w.start_ns, self->a.start_ns);
	ASSERT_EQ(w.end_ns, self->a.end_ns);
	ASSERT_LE(t0, w.start_ns);
	ASSERT_LE(w.start_ns, w.end_ns);
	ASSERT_GE((uint64_t)now_ns(), w.end_ns);
	ASSERT_EQ(-EBUSY, _cancel(self->fd, id, 0, 0));
	bo_download(_metadata, self->fd, prof, 0, ts, sizeof(ts));
	for (i = 0; i < 4; i++) {
		ASSERT_LE(w.start_ns, ts[i]);
		ASSERT_LE(ts[i], w.end_ns);
		if (i)
			ASSERT_LE(ts[i - 1], ts[i]);
	}
}

/* A short FILL run at submit: its data is in the BO when SUBMIT returns. */
TEST_F(job, run_at_submit_short_fill_writes)
{
	struct drm_vnpu_wait w;
	uint32_t out[257];
	uint64_t id;
	int i;

	id = submit_until_run_at_submit(_metadata, self->fd, &self->a);
	bo_download(_metadata, self->fd, self->bo, 0, out, sizeof(out));
	for (i = 0; i < 256; i++)
		ASSERT_EQ(0x1234, out[i]);
	ASSERT_EQ(0, out[256]);
	ASSERT_EQ(0, _wait_job(self->fd, id, 0, &w));
	ASSERT_EQ(DRM_VNPU_JOB_OK, w.status);
}

/*
 * A long job, then short jobs (on other BOs) at @prio: none starts before
 * the job submitted before it ended, and none runs at submit while the
 * long job runs.
 */
static void long_then_short_jobs(struct __test_metadata *_metadata,
				 FIXTURE_DATA(job) *self, uint32_t prio)
{
	struct drm_vnpu_slot slot = { .flags = DRM_VNPU_SLOT_WRITE };
	struct drm_vnpu_wait lw, w[3];
	struct drm_vnpu_submit sa;
	struct stream s = { 0 };
	uint64_t before, ids[3], long_id, ended = 0;
	int i;

	prepare_long_job(_metadata, self);
	self->a.priority = DRM_VNPU_PRIORITY_NORMAL;
	slot.handle = bo_create(_metadata, self->fd, 4096);
	stream_fill(&s, tensor_1d(0, VNPU_DTYPE_U32, 0, 16), 5);
	submit_prepare(_metadata, self->fd, &s, &slot, 1, &sa);
	sa.priority = prio;

	long_id = submit(_metadata, self->fd, &self->a);
	before = jobs_run_at_submit(_metadata, self->fd);
	for (i = 0; i < 3; i++) {
		ids[i] = submit(_metadata, self->fd, &sa);
		if (sa.out_flags)
			ended++;
		else
			assert_no_submit_result(_metadata, &sa);
	}
	ASSERT_EQ(before + ended, jobs_run_at_submit(_metadata, self->fd));
	ASSERT_EQ(0, _wait_job(self->fd, long_id, now_ns() + LONG_WAIT_NS, &lw));
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, _wait_job(self->fd, ids[i], now_ns() + LONG_WAIT_NS, &w[i]));
		ASSERT_EQ(DRM_VNPU_JOB_OK, w[i].status);
		ASSERT_LE(i ? w[i - 1].end_ns : lw.end_ns, w[i].start_ns);
	}
	ASSERT_EQ(DRM_VNPU_JOB_OK, lw.status);
	/* A job run at submit has ended before SUBMIT returned. */
	if (jobs_run_at_submit(_metadata, self->fd) != before)
		ASSERT_LE(lw.end_ns, w[0].start_ns);
}

TEST_F_TIMEOUT(job, run_at_submit_keeps_order_same_queue, 120)
{
	long_then_short_jobs(_metadata, self, DRM_VNPU_PRIORITY_NORMAL);
}

TEST_F_TIMEOUT(job, run_at_submit_keeps_order_other_queue, 120)
{
	long_then_short_jobs(_metadata, self, DRM_VNPU_PRIORITY_HIGH);
}

/*
 * Another file writes a BO for long; a short job of this file reading it
 * (implicit fence) starts after the writer ended and sees its data.
 */
TEST_F_TIMEOUT(job, run_at_submit_waits_for_other_files_writer, 120)
{
	struct drm_vnpu_slot wslot = { .flags = DRM_VNPU_SLOT_WRITE };
	struct drm_vnpu_slot slots[2];
	struct drm_vnpu_wait ww, rw;
	struct stream ws = { 0 }, rs = { 0 };
	uint32_t shared, out[64];
	uint64_t wid, rid;
	int fd2 = vnpu_open(0), dmabuf, i;

	ASSERT_LE(0, fd2);
	wslot.handle = bo_create(_metadata, fd2, 1 << 20);
	for (i = 0; i < 16; i++)
		stream_fill(&ws, tensor_1d(0, VNPU_DTYPE_U8, 0, 1 << 20), i);
	stream_fill(&ws, tensor_1d(0, VNPU_DTYPE_U32, 0, 64), 0xabc);
	ASSERT_EQ(0, prime_export(fd2, wslot.handle, &dmabuf));
	ASSERT_EQ(0, prime_import(self->fd, dmabuf, &shared));
	close(dmabuf);

	slots[0].handle = shared;
	slots[0].flags = DRM_VNPU_SLOT_READ;
	slots[1] = self->slot;
	stream_copy(&rs, tensor_1d(1, VNPU_DTYPE_U32, 0, 64),
		    tensor_1d(0, VNPU_DTYPE_U32, 0, 64));
	wid = run_stream(_metadata, fd2, &ws, &wslot, 1);
	rid = run_stream(_metadata, self->fd, &rs, slots, 2);

	ASSERT_EQ(0, _wait_job(self->fd, rid, now_ns() + LONG_WAIT_NS, &rw));
	ASSERT_EQ(0, _wait_job(fd2, wid, now_ns() + LONG_WAIT_NS, &ww));
	ASSERT_EQ(DRM_VNPU_JOB_OK, rw.status);
	ASSERT_EQ(DRM_VNPU_JOB_OK, ww.status);
	ASSERT_LE(ww.end_ns, rw.start_ns);
	bo_download(_metadata, self->fd, self->bo, 0, out, sizeof(out));
	for (i = 0; i < 64; i++)
		ASSERT_EQ(0xabc, out[i]);
	close(fd2);
}

/*
 * A job whose in-syncobj holds an unsignalled fence (vgem's, through a
 * sync_file) does not run at submit: it ends after the fence signals.
 * Once the fence has signalled, the same job can run at submit.
 */
TEST_F(job, run_at_submit_not_with_unsignalled_in_fence)
{
	struct dma_buf_export_sync_file ex = { .flags = DMA_BUF_SYNC_RW, .fd = -1 };
	struct vgem_fence_attach fa = { .flags = VGEM_FENCE_WRITE };
	struct drm_syncobj_handle h = { 0 };
	struct vgem_fence_signal fs = { 0 };
	struct stream s = { 0 };
	struct drm_vnpu_wait w;
	uint64_t before, id;
	uint32_t vh, sync;
	int vgem_fd = -1, dmabuf;
	int64_t t_signal;

	dmabuf = vgem_dmabuf(&vgem_fd, 4096, &vh);
	if (dmabuf < 0)
		SKIP(return, "vgem is not available");
	fa.handle = vh;
	ASSERT_EQ(0, vnpu_ioctl(vgem_fd, VGEM_IOCTL_FENCE_ATTACH, &fa));
	ASSERT_EQ(0, vnpu_ioctl(dmabuf, DMA_BUF_IOCTL_EXPORT_SYNC_FILE, &ex));
	ASSERT_EQ(0, syncobj_create(self->fd, &sync, 0));
	h.handle = sync;
	h.flags = DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE;
	h.fd = ex.fd;
	ASSERT_EQ(0, vnpu_ioctl(self->fd, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &h));
	close(ex.fd);

	stream_nop(&s);
	submit_prepare(_metadata, self->fd, &s, NULL, 0, &self->a);
	self->a.in_syncobjs_ptr = (uintptr_t)&sync;
	self->a.in_syncobj_count = 1;
	before = jobs_run_at_submit(_metadata, self->fd);
	id = submit(_metadata, self->fd, &self->a);
	ASSERT_EQ(before, jobs_run_at_submit(_metadata, self->fd));
	wait_err(_metadata, self->fd, ETIMEDOUT, id, now_ns() + 100000000);

	t_signal = now_ns();
	fs.fence = fa.out_fence;
	ASSERT_EQ(0, vnpu_ioctl(vgem_fd, VGEM_IOCTL_FENCE_SIGNAL, &fs));
	ASSERT_EQ(0, _wait_job(self->fd, id, now_ns() + LONG_WAIT_NS, &w));
	ASSERT_EQ(DRM_VNPU_JOB_OK, w.status);
	ASSERT_LE(t_signal, w.start_ns);

	id = submit_until_run_at_submit(_metadata, self->fd, &self->a);
	ASSERT_EQ(DRM_VNPU_JOB_OK, wait_job(_metadata, self->fd, id));
	close(dmabuf);
	close(vgem_fd);
}

/*
 * Jobs run at submit and jobs through the scheduler, mixed: device time
 * never goes back, within a job (profile) or from one job to the next.
 */
TEST_F_TIMEOUT(job, run_at_submit_profile_monotonic, 120)
{
	struct drm_vnpu_submit a[3];
	struct drm_vnpu_wait w;
	uint64_t ids[48], ts[4], prev_end = 0;
	uint32_t prof[48];
	struct stream s[3];
	int i, k;

	memset(s, 0, sizeof(s));
	stream_nop(&s[0]);
	stream_nop(&s[0]);
	stream_fill(&s[1], tensor_1d(0, VNPU_DTYPE_U32, 0, 256), 3);
	stream_nop(&s[1]);
	stream_fill(&s[2], tensor_1d(0, VNPU_DTYPE_U8, 0, 1 << 20), 4);
	stream_nop(&s[2]);
	for (k = 0; k < 3; k++) {
		submit_prepare(_metadata, self->fd, &s[k], &self->slot, 1, &a[k]);
		a[k].flags = DRM_VNPU_SUBMIT_PROFILE;
	}
	for (i = 0; i < 48; i++) {
		k = i % 8 == 7 ? 2 : i % 2;
		prof[i] = bo_create(_metadata, self->fd, 4096);
		a[k].profile_handle = prof[i];
		ids[i] = submit(_metadata, self->fd, &a[k]);
		if (i % 3 == 2)
			wait_job(_metadata, self->fd, ids[i]);
	}
	for (i = 0; i < 48; i++) {
		ASSERT_EQ(0, _wait_job(self->fd, ids[i], now_ns() + LONG_WAIT_NS, &w));
		ASSERT_EQ(DRM_VNPU_JOB_OK, w.status);
		ASSERT_LE(prev_end, w.start_ns);
		ASSERT_LE(w.start_ns, w.end_ns);
		bo_download(_metadata, self->fd, prof[i], 0, ts, sizeof(ts));
		for (k = 0; k < 4; k++) {
			ASSERT_LE(k ? ts[k - 1] : w.start_ns, ts[k]);
			ASSERT_LE(ts[k], w.end_ns);
		}
		prev_end = w.end_ns;
	}
	ASSERT_LT(0, jobs_run_at_submit(_metadata, self->fd));
}

/* Shared by a submitting process and a cancelling one (CLONE_FILES). */
struct submit_race {
	int fd;
	volatile uint64_t last_id;
};

/*
 * Cancel the last job submitted and the next ones (in SUBMIT or not yet
 * submitted) again and again, then close the shared fd under the
 * submitter's feet.
 */
static int cancel_and_close(void *arg)
{
	struct submit_race *r = arg;
	uint64_t id;
	int i, k, ret;

	for (i = 0; i < 2000; i++) {
		id = r->last_id;
		for (k = 0; k < 3; k++) {
			ret = _cancel(r->fd, id + k, 0, 0);
			if (ret && ret != -EBUSY && ret != -ENOENT)
				return 1;
		}
	}
	return close(r->fd) ? 2 : 0;
}

/*
 * CANCEL and close() from another process sharing the fd table while
 * short jobs run in SUBMIT: every job ends OK or CANCELLED, the submitter
 * sees EBADF once the fd is gone, and the device goes on.
 */
TEST_F_TIMEOUT(job, run_at_submit_cancel_and_close_racing, 120)
{
	size_t stack_size = 256 * 1024;
	struct drm_vnpu_slot slot = { .flags = DRM_VNPU_SLOT_WRITE };
	struct submit_race *r;
	struct drm_vnpu_submit a;
	struct drm_vnpu_wait w;
	int i, ret, status;
	char *stack;
	pid_t pid;

	r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, r);
	stack = malloc(stack_size);
	ASSERT_NE(NULL, stack);
	r->fd = vnpu_open(0);
	ASSERT_LE(0, r->fd);
	r->last_id = 1;
	slot.handle = bo_create(_metadata, r->fd, 4096);
	submit_prepare(_metadata, r->fd, &self->s, &slot, 1, &a);

	pid = clone(cancel_and_close, stack + stack_size, CLONE_FILES | SIGCHLD, r);
	ASSERT_LT(0, pid);
	for (i = 0; i < 100000; i++) {
		ret = _submit(r->fd, &a);
		if (ret == -EBADF)
			break;
		ASSERT_EQ(0, ret);
		r->last_id = a.job_id;
		ret = _wait_job(r->fd, a.job_id, now_ns() + LONG_WAIT_NS, &w);
		if (ret == -EBADF)
			break;
		ASSERT_EQ(0, ret);
		ASSERT_TRUE(w.status == DRM_VNPU_JOB_OK ||
			    w.status == DRM_VNPU_JOB_CANCELLED);
	}
	ASSERT_GT(100000, i);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	free(stack);
	munmap(r, sizeof(*r));

	ASSERT_EQ(DRM_VNPU_JOB_OK,
		  wait_job(_metadata, self->fd, submit(_metadata, self->fd, &self->a)));
}

TEST_HARNESS_MAIN

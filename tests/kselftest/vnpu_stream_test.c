// SPDX-License-Identifier: GPL-2.0
/*
 * vnpu uAPI: SUBMIT validates the whole command stream. One test per
 * malformed field (vnpu_stream_cases.h): each is -EINVAL and queues
 * nothing; the unchanged stream runs and computes the right data.
 */
#include "vnpu_test.h"
#include "vnpu_stream_cases.h"

FIXTURE(stream) {
	int fd;
	uint32_t bo[2];
	struct drm_vnpu_slot slots[CASE_NUM_SLOTS];
};

FIXTURE_VARIANT(stream) {
	void (*mutate)(struct case_stream *s);
	int valid;
};

#define ADD_VARIANT(name, fn, ok) \
	FIXTURE_VARIANT_ADD(stream, name) { .mutate = fn, .valid = ok };
STREAM_CASES(ADD_VARIANT)

FIXTURE_SETUP(stream)
{
	uint32_t pattern[256];
	int i;

	VNPU_OPEN_OR_SKIP(self->fd);
	self->bo[0] = bo_create(_metadata, self->fd, CASE_SLOT_SIZE);
	self->bo[1] = bo_create(_metadata, self->fd, CASE_SLOT_SIZE);
	for (i = 0; i < 256; i++)
		pattern[i] = 1000 + i;
	bo_upload(_metadata, self->fd, self->bo[1], 0, pattern, sizeof(pattern));
	self->slots[0].handle = self->bo[0];
	self->slots[0].flags = DRM_VNPU_SLOT_READ | DRM_VNPU_SLOT_WRITE;
	self->slots[1].handle = self->bo[1];
	self->slots[1].flags = DRM_VNPU_SLOT_READ;
	self->slots[2].handle = self->bo[0];
	self->slots[2].flags = DRM_VNPU_SLOT_READ;
}

FIXTURE_TEARDOWN(stream)
{
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F(stream, submit)
{
	struct case_stream cs;
	struct stream s = { 0 };
	struct drm_vnpu_submit a;
	uint32_t out[256];
	uint64_t id;
	int i;

	case_base(&cs);
	variant->mutate(&cs);
	memcpy(s.words, cs.words, cs.size);
	s.size = cs.size;
	submit_prepare(_metadata, self->fd, &s, self->slots, CASE_NUM_SLOTS, &a);
	if (!variant->valid) {
		submit_err(_metadata, self->fd, EINVAL, &a);
		/* Nothing was queued: the next job gets id 1. */
		memset(&s, 0, sizeof(s));
		stream_nop(&s);
		ASSERT_EQ(1, run_stream(_metadata, self->fd, &s, NULL, 0));
		return;
	}
	id = submit(_metadata, self->fd, &a);
	ASSERT_EQ(DRM_VNPU_JOB_OK, wait_job(_metadata, self->fd, id));
	bo_download(_metadata, self->fd, self->bo[0], 0, out, sizeof(out));
	for (i = 0; i < 256; i++)
		ASSERT_EQ(5, out[i]);
	bo_download(_metadata, self->fd, self->bo[0], 4096, out, sizeof(out));
	for (i = 0; i < 256; i++)
		ASSERT_EQ(1000 + i, out[i]);
}

TEST_HARNESS_MAIN

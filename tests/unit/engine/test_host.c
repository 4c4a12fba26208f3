// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The engine's host memory (vnpu_eng_host_alloc()): sizes around the huge
 * page threshold come back aligned, zero and whole, also when the memory
 * was written and freed just before; scratch sizes round as documented.
 */
#include <stdint.h>

#include "engine_test.h"

static void check_block(__u64 size)
{
	unsigned char *p = vnpu_eng_host_alloc(size);
	__u64 align = size >= VNPU_ENG_HOST_HUGE ? VNPU_ENG_HOST_HUGE : 64, i;
	int zero = 1;

	if (!p) {
		ET_FAIL("host alloc of %llu bytes failed", (unsigned long long)size);
		return;
	}
	ET_EXPECT((uintptr_t)p % align == 0, "host alloc of %llu bytes: %p is not %llu-aligned",
		  (unsigned long long)size, (void *)p, (unsigned long long)align);
	for (i = 0; i < size; i++)
		zero &= !p[i];
	ET_EXPECT(zero, "host alloc of %llu bytes is not zero", (unsigned long long)size);
	/* Every byte is ours: dirty it for the next allocation to clear. */
	memset(p, 0xa5, size);
	ET_EXPECT(!size || (p[0] == 0xa5 && p[size - 1] == 0xa5),
		  "host alloc of %llu bytes is not writable", (unsigned long long)size);
	vnpu_eng_host_free(p, size);
}

void et_test_host(void)
{
	static const __u64 sizes[] = {
		0, 1, 63, 64, 65, 4096, VNPU_ENG_HOST_HUGE - 1, VNPU_ENG_HOST_HUGE,
		VNPU_ENG_HOST_HUGE + 1, VNPU_ENG_HOST_HUGE + 4096, 3 * VNPU_ENG_HOST_HUGE + 123,
	};
	static const __u64 scratch[][2] = {
		{ 0, 0 }, { 1, 1 }, { (64 << 10) - 1, (64 << 10) - 1 },
		{ 64 << 10, VNPU_ENG_HOST_HUGE }, { VNPU_ENG_HOST_HUGE - 1, VNPU_ENG_HOST_HUGE },
		{ VNPU_ENG_HOST_HUGE, VNPU_ENG_HOST_HUGE },
		{ VNPU_ENG_HOST_HUGE + 1, VNPU_ENG_HOST_HUGE + 1 },
	};
	size_t i;
	int round;

	/* Twice: the second round gets memory the first one dirtied. */
	for (round = 0; round < 2; round++)
		for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
			check_block(sizes[i]);
	for (i = 0; i < sizeof(scratch) / sizeof(scratch[0]); i++)
		ET_EXPECT(vnpu_eng_host_scratch_size(scratch[i][0]) == scratch[i][1],
			  "scratch of %llu bytes takes %llu, not %llu",
			  (unsigned long long)scratch[i][0],
			  (unsigned long long)vnpu_eng_host_scratch_size(scratch[i][0]),
			  (unsigned long long)scratch[i][1]);
	vnpu_eng_host_free(NULL, 0);
	vnpu_eng_host_free(NULL, VNPU_ENG_HOST_HUGE);
	printf("host memory: %zu sizes, twice\n", sizeof(sizes) / sizeof(sizes[0]));
}

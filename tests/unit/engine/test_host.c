// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The engine's host memory (vnpu_eng_host_alloc()): sizes around the huge
 * page threshold come back aligned, zero and whole, also when the memory
 * was written and freed just before; sizes whose page rounding would wrap
 * are refused; scratch sizes round as documented.
 * A reservation (vnpu_eng_host_reserve()) is refused under the huge page
 * size, is aligned and zero, and after a trim keeps exactly the pages a
 * vnpu_eng_host_alloc() of the kept size would have.
 * VNPU_ENGINE_ISA: a known value caps the features (bf16 takes the
 * AVX512-BF16 kernels where the CPU has them, whether they pay or not),
 * another one caps nothing and is said once on stderr.
 * vnpu_eng_bf16_pays() on the cores with AVX512-BF16 and a few without,
 * vnpu_eng_bf16_min_depth() and vnpu_eng_half_zmm() on some of them,
 * whatever CPU runs the test.
 */
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine_test.h"
#include "ksft_main.h"

static void check_block(struct __test_metadata *_metadata, __u64 size)
{
	unsigned char *p = vnpu_eng_host_alloc(size);
	__u64 align = size >= VNPU_ENG_HOST_HUGE ? VNPU_ENG_HOST_HUGE : 64, i;
	int zero = 1;

	if (!p) {
		EXPECT_TRUE(false)
			TH_LOG("host alloc of %llu bytes failed", (unsigned long long)size);
		return;
	}
	EXPECT_EQ(0, (uintptr_t)p % align)
		TH_LOG("host alloc of %llu bytes: %p is not %llu-aligned", (unsigned long long)size,
		       (void *)p, (unsigned long long)align);
	for (i = 0; i < size; i++)
		zero &= !p[i];
	EXPECT_TRUE(zero)
		TH_LOG("host alloc of %llu bytes is not zero", (unsigned long long)size);
	/* Every byte is ours: dirty it for the next allocation to clear. */
	memset(p, 0xa5, size);
	EXPECT_TRUE(!size || (p[0] == 0xa5 && p[size - 1] == 0xa5))
		TH_LOG("host alloc of %llu bytes is not writable", (unsigned long long)size);
	vnpu_eng_host_free(p, size);
}

/* Whether the page at @p is mapped: mincore() says ENOMEM where not. */
static int page_mapped(const void *p)
{
	unsigned char vec;
	void *page = (void *)((uintptr_t)p & ~(uintptr_t)4095);

	return mincore(page, 4096, &vec) == 0 || errno != ENOMEM;
}

TEST(reserve)
{
	static const __u64 keeps[] = {
		VNPU_ENG_HOST_HUGE, VNPU_ENG_HOST_HUGE + 1, 2 * VNPU_ENG_HOST_HUGE + 4095,
		8 * VNPU_ENG_HOST_HUGE,
	};
	const __u64 size = 8 * VNPU_ENG_HOST_HUGE;
	size_t i;

	EXPECT_EQ(NULL, vnpu_eng_host_reserve(0));
	EXPECT_EQ(NULL, vnpu_eng_host_reserve(VNPU_ENG_HOST_HUGE - 1));
	EXPECT_EQ(NULL, vnpu_eng_host_reserve(~0ull));
	EXPECT_EQ(NULL, vnpu_eng_host_reserve(~0ull - 4095));
	for (i = 0; i < ARRAY_SIZE(keeps); i++) {
		__u64 keep = keeps[i], end = (keep + 4095) & ~4095ull;
		unsigned char *p = vnpu_eng_host_reserve(size);

		ASSERT_NE(NULL, p);
		EXPECT_EQ(0, (uintptr_t)p % VNPU_ENG_HOST_HUGE);
		EXPECT_EQ(0, p[0] | p[keep - 1] | p[size - 1]);
		memset(p, 0x5a, keep);
		vnpu_eng_host_trim(p, size, keep);
		EXPECT_TRUE(p[0] == 0x5a && p[keep - 1] == 0x5a)
			TH_LOG("keep %llu: the kept bytes changed", (unsigned long long)keep);
		EXPECT_TRUE(page_mapped(p + end - 1));
		if (end < size)
			EXPECT_FALSE(page_mapped(p + end))
				TH_LOG("keep %llu: the page after the kept ones is still mapped",
				       (unsigned long long)keep);
		vnpu_eng_host_free(p, keep);
		EXPECT_FALSE(page_mapped(p))
			TH_LOG("keep %llu: freed, still mapped", (unsigned long long)keep);
	}
}

/*
 * In a child with VNPU_ENGINE_ISA=@isa: the features of two calls must be
 * @want, and its stderr must hold @warnings lines of the warning.
 */
static void check_isa(struct __test_metadata *_metadata, const char *isa, __u32 want, int warnings)
{
	char buf[1024], *p;
	int fd[2], status, n = 0;
	ssize_t len = 0, r;
	pid_t pid;

	if (pipe(fd)) {
		EXPECT_TRUE(false)
			TH_LOG("pipe failed");
		return;
	}
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		setenv("VNPU_ENGINE_ISA", isa, 1);
		dup2(fd[1], 2);
		close(fd[0]);
		_exit(vnpu_eng_host_features() != want ||
		      vnpu_eng_host_features() != want);
	}
	close(fd[1]);
	while (len < (ssize_t)sizeof(buf) - 1 &&
	       (r = read(fd[0], buf + len, sizeof(buf) - 1 - len)) > 0)
		len += r;
	buf[len] = 0;
	close(fd[0]);
	EXPECT_TRUE(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status)
		    && !WEXITSTATUS(status))
		TH_LOG("VNPU_ENGINE_ISA=%s: features other than %#x", isa, want);
	for (p = buf; (p = strstr(p, "is none of base avx2 avx512 vnni bf16")); p++)
		n++;
	EXPECT_EQ(warnings, n)
		TH_LOG("VNPU_ENGINE_ISA=%s: %d warnings, not %d: %s", isa, n, warnings, buf);
}

TEST(host)
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
	char *isa;
	__u32 all, bf16;
	size_t i;
	int round;

	/* Twice: the second round gets memory the first one dirtied. */
	for (round = 0; round < 2; round++)
		for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
			check_block(_metadata, sizes[i]);
	/* A size within a huge page of the top would wrap as it is rounded. */
	EXPECT_EQ(NULL, vnpu_eng_host_alloc(~0ull));
	EXPECT_EQ(NULL, vnpu_eng_host_alloc(~0ull - 4095));
	EXPECT_EQ(NULL, vnpu_eng_host_alloc(~0ull - VNPU_ENG_HOST_HUGE));
	for (i = 0; i < sizeof(scratch) / sizeof(scratch[0]); i++) {
		EXPECT_EQ(scratch[i][1], vnpu_eng_host_scratch_size(scratch[i][0]))
			TH_LOG("scratch of %llu bytes takes %llu, not %llu",
			       (unsigned long long)scratch[i][0],
			       (unsigned long long)vnpu_eng_host_scratch_size(scratch[i][0]),
			       (unsigned long long)scratch[i][1]);
	}
	vnpu_eng_host_free(NULL, 0);
	vnpu_eng_host_free(NULL, VNPU_ENG_HOST_HUGE);
	/* The CPU's features, whatever VNPU_ENGINE_ISA this test runs with. */
	isa = getenv("VNPU_ENGINE_ISA");
	isa = isa ? strdup(isa) : NULL;
	unsetenv("VNPU_ENGINE_ISA");
	all = vnpu_eng_host_features();
	/* CPUID is asked once a process, VNPU_ENGINE_ISA on every call. */
	setenv("VNPU_ENGINE_ISA", "base", 1);
	EXPECT_EQ(0, vnpu_eng_host_features());
	setenv("VNPU_ENGINE_ISA", "avx2", 1);
	EXPECT_EQ(all & VNPU_ENG_F_AVX2_FMA, vnpu_eng_host_features());
	unsetenv("VNPU_ENGINE_ISA");
	EXPECT_EQ(all, vnpu_eng_host_features());
	if (isa)
		setenv("VNPU_ENGINE_ISA", isa, 1);
	free(isa);
	check_isa(_metadata, "bogus", all, 1);
	check_isa(_metadata, "", all, 1);
	check_isa(_metadata, "AVX2", all, 1);
	check_isa(_metadata, "avx2", all & VNPU_ENG_F_AVX2_FMA, 0);
	check_isa(_metadata, "base", 0, 0);
	check_isa(_metadata, "vnni", all & (VNPU_ENG_F_AVX2_FMA | VNPU_ENG_F_AVX512 | VNPU_ENG_F_VNNI), 0);
	/* bf16 asks for the kernels: the CPU's feature, not the rule. */
	bf16 = all & (VNPU_ENG_F_AVX2_FMA | VNPU_ENG_F_AVX512);
	if ((all & VNPU_ENG_F_AVX512) && __builtin_cpu_supports("avx512bw") &&
	    __builtin_cpu_supports("avx512bf16"))
		bf16 |= VNPU_ENG_F_AVX512_BF16;
	check_isa(_metadata, "bf16", bf16, 0);
	check_isa(_metadata, "fp16",
		  all & (VNPU_ENG_F_AVX2_FMA | VNPU_ENG_F_AVX512 | VNPU_ENG_F_AVX512_FP16), 0);
	check_isa(_metadata, "vbmi",
		  all & (VNPU_ENG_F_AVX2_FMA | VNPU_ENG_F_AVX512 | VNPU_ENG_F_VBMI), 0);
	printf("host memory: %zu sizes, twice\n", sizeof(sizes) / sizeof(sizes[0]));
}

/*
 * Whether the AVX512-BF16 kernels pay, the least depth of a bf16 Conv's
 * bf16 weights and whether the core halves zmm: the rules' table, on any
 * CPU.
 */
TEST(bf16_pays)
{
	static const struct {
		const char *core;
		__u32 vendor, family, model;
		int pays;
		__u32 depth;
		int half_zmm;
	} cores[] = {
		{ "Cooper Lake", VNPU_ENG_VENDOR_INTEL, 6, 85, 0, 32, 0 },
		{ "Sapphire Rapids", VNPU_ENG_VENDOR_INTEL, 6, 143, 0, 32, 0 },
		{ "Emerald Rapids", VNPU_ENG_VENDOR_INTEL, 6, 207, 0, 32, 0 },
		{ "Granite Rapids", VNPU_ENG_VENDOR_INTEL, 6, 173, 0, 32, 0 },
		{ "Zen 4 Genoa", VNPU_ENG_VENDOR_AMD, 0x19, 0x11, 1, 4, 1 },
		{ "Zen 4 Raphael", VNPU_ENG_VENDOR_AMD, 0x19, 0x61, 1, 4, 1 },
		{ "Zen 5 Turin", VNPU_ENG_VENDOR_AMD, 0x1a, 0x02, 1, 32, 0 },
		{ "Zen 5 Granite Ridge", VNPU_ENG_VENDOR_AMD, 0x1a, 0x44, 1, 32, 0 },
		{ "Zen 2", VNPU_ENG_VENDOR_AMD, 0x17, 0x31, 0, 32, 0 },
		{ "Hygon Dhyana", VNPU_ENG_VENDOR_OTHER, 0x18, 0x00, 0, 32, 0 },
		{ "Zhaoxin", VNPU_ENG_VENDOR_OTHER, 7, 0x3b, 0, 32, 0 },
		{ "unknown vendor 0x19", VNPU_ENG_VENDOR_OTHER, 0x19, 0x11, 0, 32, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(cores) / sizeof(cores[0]); i++) {
		EXPECT_EQ(cores[i].pays,
			  vnpu_eng_bf16_pays(cores[i].vendor, cores[i].family,
					     cores[i].model))
			TH_LOG("%s (vendor %u, family %#x, model %#x): pays %d, not %d",
			       cores[i].core, cores[i].vendor, cores[i].family,
			       cores[i].model, !cores[i].pays, cores[i].pays);
		EXPECT_EQ(cores[i].depth,
			  vnpu_eng_bf16_min_depth(cores[i].vendor, cores[i].family,
						  cores[i].model))
			TH_LOG("%s: least bf16 depth", cores[i].core);
		EXPECT_EQ(cores[i].half_zmm,
			  vnpu_eng_half_zmm(cores[i].vendor, cores[i].family,
					    cores[i].model))
			TH_LOG("%s: halves zmm", cores[i].core);
	}
	i = vnpu_eng_host_bf16_min_depth();
	EXPECT_TRUE(i == 4 || i == 32)
		TH_LOG("this host: %zu", i);
}

KSFT_MAIN

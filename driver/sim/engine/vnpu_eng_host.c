// SPDX-License-Identifier: GPL-2.0 OR MIT
/* Host builds only: the CPU features the engine may use here, its memory. */
#include <cpuid.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "vnpu_eng_priv.h"

/*
 * VNPU_ENGINE_ISA=base|avx2|avx512|vnni|bf16|fp16|vbmi caps the paths
 * taken (tests of the narrower ones on a wider CPU; vnni, bf16, fp16 and
 * vbmi are AVX-512 with that one extension); it never adds what the CPU lacks, but
 * bf16 takes the AVX512-BF16 kernels also where vnpu_eng_bf16_pays() says
 * they do not pay (*@bf16 set); each clears %VNPU_ENG_F_HALF_ZMM, so
 * avx512 runs the AVX-512 GEMM tiles on every core. Any other value caps
 * nothing and is said once per process on stderr, as the library does for
 * a VNPU_LOG_LEVEL it does not know.
 */
static __u32 host_isa_cap(int *bf16)
{
	static const struct { const char *name; __u32 f; } caps[] = {
		{ "base", 0 },
		{ "avx2", VNPU_ENG_F_AVX2_FMA },
		{ "avx512", VNPU_ENG_F_AVX2_FMA | VNPU_ENG_F_AVX512 },
		{ "vnni", VNPU_ENG_F_AVX2_FMA | VNPU_ENG_F_AVX512 | VNPU_ENG_F_VNNI },
		{ "bf16", VNPU_ENG_F_AVX2_FMA | VNPU_ENG_F_AVX512 |
			  VNPU_ENG_F_AVX512_BF16 },
		{ "fp16", VNPU_ENG_F_AVX2_FMA | VNPU_ENG_F_AVX512 |
			  VNPU_ENG_F_AVX512_FP16 },
		{ "vbmi", VNPU_ENG_F_AVX2_FMA | VNPU_ENG_F_AVX512 | VNPU_ENG_F_VBMI },
		{ NULL, 0 },
	};
	static int warned;
	const char *e = getenv("VNPU_ENGINE_ISA");
	size_t i;

	if (!e)
		return ~0u;
	for (i = 0; caps[i].name; i++)
		if (!strcmp(e, caps[i].name)) {
			*bf16 = !!(caps[i].f & VNPU_ENG_F_AVX512_BF16);
			return caps[i].f;
		}
	if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
		fprintf(stderr,
			"vnpu: VNPU_ENGINE_ISA=%s is none of base avx2 avx512 vnni bf16 fp16 vbmi: ignored\n",
			e);
	return ~0u;
}

/*
 * What CPUID says of this CPU, asked once a process: under a hypervisor
 * every CPUID leaves the guest (about 20 us an instruction on a Zen 4
 * guest, where vnpu_eng_host_features() took 82 us a call), and the
 * compiler asks for every convolution. VNPU_ENGINE_ISA is read on every
 * call (tests change it), CPUID only here.
 */
struct host_cpu {
	__u32 features;		/* VNPU_ENG_F_*, AVX512-BF16 where present */
	int bf16_pays;		/* vnpu_eng_bf16_pays() of this core */
	int core;		/* CPUID told vendor, family and model */
	__u32 vendor, family, model;
};

/*
 * This CPU's vendor (VNPU_ENG_VENDOR_*), family and model as
 * vnpu_eng_bf16_pays() takes them; 0 where CPUID does not tell.
 */
static int host_core(__u32 *vendor, __u32 *family, __u32 *model)
{
	unsigned int a, b, c, d;

	*vendor = VNPU_ENG_VENDOR_OTHER;
	if (!__get_cpuid(0, &a, &b, &c, &d))
		return 0;
	/* The vendor string is in EBX, EDX, ECX. */
	if (b == 0x756e6547 && d == 0x49656e69 && c == 0x6c65746e)
		*vendor = VNPU_ENG_VENDOR_INTEL;	/* GenuineIntel */
	else if (b == 0x68747541 && d == 0x69746e65 && c == 0x444d4163)
		*vendor = VNPU_ENG_VENDOR_AMD;		/* AuthenticAMD */
	if (!__get_cpuid(1, &a, &b, &c, &d))
		return 0;
	*family = (a >> 8) & 0xf;
	*model = (a >> 4) & 0xf;
	if (*family == 0x6 || *family == 0xf)
		*model |= ((a >> 16) & 0xf) << 4;
	if (*family == 0xf)
		*family += (a >> 20) & 0xff;
	return 1;
}

static __u32 host_cpu_features(void)
{
	unsigned int a, b, c, d;
	__u32 f = VNPU_ENG_F_AVX2_FMA;

	__builtin_cpu_init();
	/* The FMA build widens f16 with F16C. */
	if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma") ||
	    !__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_F16C))
		return 0;
	/*
	 * libgcc checks that the OS saves the ZMM state too. AVX-512 takes
	 * VL too (the depthwise rows' 32 ymm registers): every AVX-512 CPU
	 * but the Xeon Phis has it.
	 */
	if (!__builtin_cpu_supports("avx512f") ||
	    !__builtin_cpu_supports("avx512vl"))
		return f;
	f |= VNPU_ENG_F_AVX512;
	if (!__builtin_cpu_supports("avx512bw"))
		return f;
	if (__builtin_cpu_supports("avx512vnni"))
		f |= VNPU_ENG_F_VNNI;
	if (__builtin_cpu_supports("avx512vbmi"))
		f |= VNPU_ENG_F_VBMI;
	if (__builtin_cpu_supports("avx512bf16"))
		f |= VNPU_ENG_F_AVX512_BF16;
	/* CPUID.(7, 0):EDX[23]; not every compiler's builtin knows it. */
	if (__get_cpuid_count(7, 0, &a, &b, &c, &d) && (d & (1u << 23)))
		f |= VNPU_ENG_F_AVX512_FP16;
	return f;
}

static struct host_cpu host_cpu_once;
static pthread_once_t host_cpu_done = PTHREAD_ONCE_INIT;

static void host_cpu_init(void)
{
	struct host_cpu *h = &host_cpu_once;

	h->features = host_cpu_features();
	h->core = host_core(&h->vendor, &h->family, &h->model);
	h->bf16_pays = h->core &&
		       vnpu_eng_bf16_pays(h->vendor, h->family, h->model);
	if (h->core && (h->features & VNPU_ENG_F_AVX512) &&
	    vnpu_eng_half_zmm(h->vendor, h->family, h->model))
		h->features |= VNPU_ENG_F_HALF_ZMM;
}

static const struct host_cpu *host_cpu(void)
{
	pthread_once(&host_cpu_done, host_cpu_init);
	return &host_cpu_once;
}

/*
 * Zen 4 (AMD family 0x19) runs a 512-bit vfmadd231ps as two 256-bit halves
 * (0.75 TSC cycles) and vdpbf16ps at the same rate (0.71) with twice its
 * products: twice f32's rate, which pays for rounding the columns of
 * depths from 16 (MobileNetV3_large, one CPU, f32 -> bf16 ms: 1x1 16->64
 * on 112x112 0.313 -> 0.201, 1x1 24->72 on 56x56 0.115 -> 0.066, 3x3 3->16
 * stride 2 on 224x224 0.221 -> 0.167, 1x1 16->16 on 112x112 0.104 ->
 * 0.083) and from 4 (1x1 4->64 on 112x112 0.132 -> 0.099, 6->32 0.080 ->
 * 0.060, 8->64 0.188 -> 0.125, 12->48 on 56x56 0.045 -> 0.028;
 * openWakeWord's embedding's 3x3 1->24 on 76x32 0.023 -> 0.019). Zen 5
 * runs vfmadd231ps at full width, where those depths ran slower in bf16
 * (0.84-0.94x f32's speed), and Intel widens.
 */
__u32 vnpu_eng_bf16_min_depth(__u32 vendor, __u32 family, __u32 model)
{
	(void)model;
	return vendor == VNPU_ENG_VENDOR_AMD && family == 0x19 ? 4 : 32;
}

__u32 vnpu_eng_host_bf16_min_depth(void)
{
	const struct host_cpu *h = host_cpu();

	if (!h->core)
		return 32;
	return vnpu_eng_bf16_min_depth(h->vendor, h->family, h->model);
}

__u32 vnpu_eng_host_features(void)
{
	const struct host_cpu *h = host_cpu();
	int bf16 = 0;
	__u32 cap = host_isa_cap(&bf16);
	__u32 f = h->features;

	if (!bf16 && !h->bf16_pays)
		f &= ~VNPU_ENG_F_AVX512_BF16;
	return f & cap;
}

int vnpu_eng_wino_pays(const struct vnpu_layer_conv *a,
		       const struct vnpu_cmd_tensor *x, const struct vnpu_cmd_tensor *y)
{
	const struct vnpu_cmd_tensor t[2] = { *x, *y };
	struct vnpu_layer_conv at = *a;
	const struct eng_layer l = { .op = VNPU_LAYER_CONV, .t = t, .n = 2,
				     .attrs = &at };
	struct eng_conv_shape s;

	at.flags = 0;
	if (!eng_wino_fits(&at, x, VNPU_DTYPE_F32) || y->rank != 4)
		return 0;
	eng_conv_shape(&l, &s);
	return eng_wino_pays(&s);
}

/*
 * F(2x2, 3x3) on f32 U where F(4x4, 3x3) has too few tiles but its own
 * 2x2 tiles are enough (as many as F(4x4)'s on a map twice the size), on
 * every FMA host: ResNet-50's 512->512 on 7x7 on AVX2 ran as the direct
 * convolution's 64 padded columns of 63 (of 49 outputs) at 3.2 ms on one
 * Zen 3 CPU, as F(2x2) 16 GEMMs of one panel of 16 tiles at 2.3 ms, about
 * as fast as U's 16.8 MB come from memory. With AVX-512 it also comes
 * before the lanes (vnpu_eng_lanes_pays()): 4/9 of their multiply-adds
 * for 1.8 times the weights' bytes. On Zen 4, in the model, 2.04 ms on
 * the lanes, now 1.47 on one CPU and 1.05 -> 0.78 on two; alone, 7x7
 * 128->128 0.135 -> 0.099 ms (two CPUs 0.135 -> 0.057: the lanes made one
 * unit), 1024->1024 8.1 -> 5.1, and 8x8 512->512 (too many positions for
 * the lanes, so the GEMM's direct convolution) 3.32 -> 1.28.
 */
int vnpu_eng_wino2_pays(const struct vnpu_layer_conv *a,
			const struct vnpu_cmd_tensor *x,
			const struct vnpu_cmd_tensor *y)
{
	__u32 f = vnpu_eng_host_features();
	struct vnpu_cmd_tensor y2 = *y;

	if (!(f & VNPU_ENG_F_AVX2_FMA) || y->rank != 4 ||
	    vnpu_eng_wino_pays(a, x, y))
		return 0;
	y2.dims[2] *= 2;
	y2.dims[3] *= 2;
	return vnpu_eng_wino_pays(a, x, &y2);
}

/*
 * Integer Winograd F(2x2, 3x3): the AVX2 hosts without VNNI (its tile
 * sums 4 u8 x i8 products an instruction, twice the pair tile's rate) on
 * at least ENG_QWINO_MIN_C input and output channels a group and
 * ENG_QWINO_MIN_TILES tiles a map (fewer read U, 3.6 times W's bytes, for
 * too few tiles: ResNet-50's 7x7 512->512 took 1.92 ms against 1.66).
 */
int vnpu_eng_qwino_pays(const struct vnpu_layer_conv *a,
			const struct vnpu_cmd_tensor *x,
			const struct vnpu_cmd_tensor *y)
{
	__u32 f = vnpu_eng_host_features();

	if (!(f & VNPU_ENG_F_AVX2_FMA) || (f & VNPU_ENG_F_VNNI) ||
	    !eng_qwino_fits(a, x, y))
		return 0;
	return x->dims[1] / a->group >= ENG_QWINO_MIN_C &&
	       y->dims[1] / a->group >= ENG_QWINO_MIN_C &&
	       eng_div_up(y->dims[2], 2) * eng_div_up(y->dims[3], 2) >=
	       ENG_QWINO_MIN_TILES;
}

/*
 * Integer Winograd F(4x4, 3x3) over U packed once (%VNPU_LAYER_F_QW4): the
 * hosts whose engine runs it (AVX512-VNNI with VBMI, eng_qw4_fits()), on
 * maps of ENG_QW4_PAYS_W columns or more, where it runs faster than the
 * direct tile (U is four times W's bytes, read from memory: 14x14 256 ->
 * 256 took 0.78-0.93 ms in resnet50_qdq against the direct tile's 0.53;
 * elsewhere W stays as it was).
 */
#define ENG_QW4_PAYS_W	28	/* map columns, at least */

int vnpu_eng_qw4_pays(const struct vnpu_layer_conv *a,
		      const struct vnpu_cmd_tensor *x,
		      const struct vnpu_cmd_tensor *y)
{
	const __u32 need = VNPU_ENG_F_AVX2_FMA | VNPU_ENG_F_AVX512 |
			   VNPU_ENG_F_VNNI | VNPU_ENG_F_VBMI;

	return (vnpu_eng_host_features() & need) == need &&
	       eng_qw4_shape(a, x, y) && y->dims[3] >= ENG_QW4_PAYS_W;
}

/* Not where F(2x2, 3x3) pays (vnpu_eng_wino2_pays(): the 3x3s of stride 1 on 7x7). */
int vnpu_eng_lanes_pays(const struct vnpu_layer_conv *a,
			const struct vnpu_cmd_tensor *x,
			const struct vnpu_cmd_tensor *y)
{
	const struct vnpu_cmd_tensor t[2] = { *x, *y };
	const struct eng_layer l = { .op = VNPU_LAYER_CONV, .t = t, .n = 2,
				     .attrs = a };
	struct eng_conv_shape s;

	if (x->rank != 4 || y->rank != 4 || x->dtype != VNPU_DTYPE_F32 ||
	    !a->group || x->dims[1] % a->group || y->dims[1] % a->group ||
	    a->dilation[0] != 1 || a->dilation[1] != 1 ||
	    vnpu_eng_wino2_pays(a, x, y))
		return 0;
	eng_conv_shape(&l, &s);
	return !eng_conv_depthwise(&s) &&
	       eng_lanes_pays(a, &s, vnpu_eng_host_features());
}

/* The baseline build's transform: every build's bits (no contraction). */
int vnpu_eng_wino_pack(const float *src, __u64 groups, __u64 rows,
		       __u64 cols, float *dst)
{
	if (!vnpu_eng_packed_size(VNPU_PACK_WINO_W, groups, rows, cols))
		return VNPU_ENG_EINVAL;
	return vnpu_eng_kernels_base.wino_pack(src, groups, rows, cols / 9,
					       dst);
}

/* G's rows of F(2x2, 3x3) on (@g0, @g1, @g2) @s apart, to @o (4, @os apart). */
static void wino2_g(const float *g, __u64 s, float *o, __u64 os)
{
	float e = g[0] + g[2 * s];

	o[0] = g[0];
	o[os] = (e + g[s]) * 0.5f;
	o[2 * os] = (e - g[s]) * 0.5f;
	o[3 * os] = g[2 * s];
}

/*
 * G's rows of F(4, 3) (points 0, 1, -1, 1/2, -2, infinity; the
 * %VNPU_PACK_WINO42_W rows) on (@g0, @g1, @g2) @s apart, to @o (6, @os
 * apart).
 */
static void wino42_g(const float *g, __u64 s, float *o, __u64 os)
{
	float g0 = g[0], g1 = g[s], g2 = g[2 * s], e = g0 + g2;

	o[0] = g0 * 0.5f;
	o[os] = (e + g1) * (1.0f / 6);
	o[2 * os] = (e - g1) * (-1.0f / 6);
	o[3 * os] = ((g0 * 4.0f + g1 * 2.0f) + g2) * (-1.0f / 30);
	o[4 * os] = ((g0 - g1 * 2.0f) + g2 * 4.0f) * (1.0f / 30);
	o[5 * os] = g2 * 0.5f;
}

/*
 * U of the bf16 kinds in f32: G (@ch rows, wino2_g()'s or wino42_g())
 * down the kernels' columns, then F(2, 3)'s along the rows, @ch * 4
 * points.
 */
static int wino_bf16_pack(__u32 layout, const float *src, __u64 groups,
			  __u64 rows, __u64 cols, float *dst)
{
	__u64 cg = cols / 9, pr = eng_div_up(rows, ENG_MR) * ENG_MR, g, m, c;
	__u64 ch = layout == VNPU_PACK_WINO42_W ? 6 : 4, xn = ch * 4;
	float t[18], u[24];
	__u64 i;

	if (!vnpu_eng_packed_size(layout, groups, rows, cols))
		return VNPU_ENG_EINVAL;
	for (g = 0; g < groups; g++)
		for (m = 0; m < pr; m++)
			for (c = 0; c < cg; c++) {
				const float *w = src + ((g * rows + m) * cg + c) * 9;
				float *d = dst + (g * xn * (pr / ENG_MR) +
						  m / ENG_MR) * cg * ENG_MR +
					   c * ENG_MR + m % ENG_MR;

				/* Down the columns, then along the rows. */
				for (i = 0; i < 3 && m < rows; i++) {
					if (ch == 6)
						wino42_g(w + i, 3, t + i, 3);
					else
						wino2_g(w + i, 3, t + i, 3);
				}
				for (i = 0; i < ch && m < rows; i++)
					wino2_g(t + 3 * i, 1, u + 4 * i, 1);
				for (i = 0; i < xn; i++)
					d[i * pr * cg] = m < rows ? u[i] : 0.0f;
			}
	return 0;
}

int vnpu_eng_wino2_pack(const float *src, __u64 groups, __u64 rows,
			__u64 cols, float *dst)
{
	return wino_bf16_pack(VNPU_PACK_WINO2_W, src, groups, rows, cols, dst);
}

int vnpu_eng_wino42_pack(const float *src, __u64 groups, __u64 rows,
			 __u64 cols, float *dst)
{
	return wino_bf16_pack(VNPU_PACK_WINO42_W, src, groups, rows, cols,
			      dst);
}

/* Bytes a huge allocation keeps mapped: whole small pages. */
static __u64 host_map_size(__u64 size)
{
	return (size + 4095) & ~4095ull;
}

/*
 * @size bytes (whole small pages) mapped on a huge page boundary: map one
 * huge page more and keep the aligned part. @flags adds to the mapping's.
 */
static void *host_map_huge(__u64 size, int flags)
{
	__u64 align = VNPU_ENG_HOST_HUGE, len, head;
	unsigned char *p;

	if (size > SIZE_MAX - 2 * align)
		return NULL;
	len = host_map_size(size);
	p = mmap(NULL, len + align, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	head = (align - (uintptr_t)p % align) % align;
	if (head)
		munmap(p, head);
	munmap(p + head + len, align - head);
	p += head;
	madvise(p, len, MADV_HUGEPAGE);	/* a hint: fine where unsupported */
	return p;
}

void *vnpu_eng_host_alloc(__u64 size)
{
	unsigned char *p;

	if (size < VNPU_ENG_HOST_HUGE) {
		p = aligned_alloc(64, size ? (size + 63) & ~63ull : 64);
		if (p)
			memset(p, 0, size);
		return p;
	}
	return host_map_huge(size, 0);
}

void *vnpu_eng_host_reserve(__u64 size)
{
	if (size < VNPU_ENG_HOST_HUGE)
		return NULL;
	return host_map_huge(size, MAP_NORESERVE);
}

void vnpu_eng_host_trim(void *mem, __u64 size, __u64 keep)
{
	__u64 len = host_map_size(size), kept = host_map_size(keep);

	if (kept < len)
		munmap((unsigned char *)mem + kept, len - kept);
}

void vnpu_eng_host_free(void *mem, __u64 size)
{
	if (!mem)
		return;
	if (size < VNPU_ENG_HOST_HUGE)
		free(mem);
	else
		munmap(mem, host_map_size(size));
}

__u64 vnpu_eng_host_scratch_size(__u64 size)
{
	return size >= (64ull << 10) && size < VNPU_ENG_HOST_HUGE ?
	       VNPU_ENG_HOST_HUGE : size;
}

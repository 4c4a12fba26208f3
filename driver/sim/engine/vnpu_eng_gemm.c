// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * GEMM, convolution and pooling kernels, built per ISA (vnpu_eng_isa.h).
 *
 * One blocked GEMM serves GEMM and CONV: units of at most ENG_UNIT_MACS
 * multiply-adds (a 64th of that on the baseline path), output blocks of at
 * most ENG_GEMM_MC (GEMM) or ENG_MC (CONV) rows, depth in even slices of at
 * most ENG_KC, micro-kernels on packed panels of A (ENG_MR rows) and B
 * (ENG_NR columns). A block's partial sums live in an f32 accumulator in
 * scratch between slices, and after the last slice the epilogue (alpha,
 * bias, residual, activation) runs on it on the way to the output, which
 * may be f32, f16 or bf16 (stored rounding to nearest even). Operands of
 * f16 and bf16 are converted to f32 while they are packed. The order of
 * every sum depends on the shapes only, never on how the layer is split or
 * on which FMA kernel ran (6x16 AVX2 or 12x32 AVX-512): that is what keeps
 * the NPU and the CPU device bit-identical.
 *
 * Convolutions with strides up to ENG_WIN_STRIDE read B straight from a
 * zero-padded copy of the input rows through a table of offsets (one per
 * (c, kh, kw)), over "padded columns" q = oh * Wq + ow, so a run of 16
 * outputs is 16 consecutive floats of the copy; larger strides pack B by
 * im2col. Depthwise convolutions are vnpu_eng_dw.c's.
 */
#include "vnpu_eng_gemm_kern.h"

/*
 * The most depth of a slice over B packed at compile time on the AVX2
 * path: a panel of 16 KiB, so that it and the next one, fetched ahead
 * (b_panel_ahead()), stay in L1 and L2 as A streams through (BERT's
 * MatMuls about 8% faster than with ENG_KC).
 */
#define ENG_GEMM_KC_AVX2 256

/*
 * The most depth of a slice of a direct convolution (conv_direct()) whose
 * channels do not start on a panel's boundary (resnet50's 1x1 layers on
 * 14x14 and 7x7 maps, channels 196 and 49 floats apart): each row of its
 * B panel then spans two cache lines, and the panel of ENG_KC rows
 * (48 KiB of lines) left L1 for every tile; 128 rows fit with A's panel
 * (those layers 4-6% faster, vnpu-kbench-like loop of resnet50's convs).
 */
#define ENG_CONV_KC_SKEW 128

/* ---- micro-kernels --------------------------------------------------- */

void copy_f32(float *dst, const float *src, __u64 n)
{
	__u64 i = 0;

	for (; i + 8 <= n; i += 8)
		vstore(dst + i, vload(src + i));
	for (; i < n; i++)
		dst[i] = src[i];
}

#ifdef ENG_FMA
/*
 * Columns @x to @x + 7 of a window row: column q is input @first + q of
 * @row where q lies in [@lo, @hi) (at least 8 columns), zero elsewhere.
 * Read inside [@lo, @hi) only: a vector loaded there (at @x itself when
 * it lies inside), its lanes moved back by vpermps and those outside
 * cleared. Not masked loads: AMD leaves faults on masked-off lanes to the
 * implementation, and QEMU's TCG takes them (vnpu.ko faulted on a row
 * that started a page after an unmapped one).
 */
static inline v8sf vload_run(const float *row, __s64 first, __s64 x,
			     __s64 lo, __s64 hi)
{
	const v8si i = { 0, 1, 2, 3, 4, 5, 6, 7 };
	__s64 b = x < lo ? lo : x > hi - 8 ? hi - 8 : x;
	v8si c = i + (int)x, m = (c >= (int)lo) & (c < (int)hi);
	v8sf v;

	if (b == x)
		return vload(row + first + x);
	v = __builtin_ia32_permvarsf256(vload(row + first + b),
					i + (int)(x - b));
	return (v8sf)((v8si)v & m);
}

/* Lane i of @a (@h clear) or @b (@h set), at @j[i] of 0-7. */
static inline v8sf vpick2(v8sf a, v8sf b, v8si j, v8si h)
{
	return __builtin_ia32_blendvps256(__builtin_ia32_permvarsf256(a, j),
					  __builtin_ia32_permvarsf256(b, j),
					  (v8sf)h);
}
#endif

/*
 * copy_f32() inline, for short runs (an output row of a small map): whole
 * vectors, the last ending at the run's end over the one before (masked
 * stores are slow on AMD's cores).
 */
static inline void copy_run_f32(float *dst, const float *src, __u64 n)
{
	__u64 i = 0;

	if (n < 8) {
		for (; i < n; i++)
			dst[i] = src[i];
		return;
	}
	for (; i + 8 < n; i += 8)
		vstore(dst + i, vload(src + i));
	vstore(dst + n - 8, vload(src + n - 8));
}

void zero_f32(float *dst, __u64 n)
{
	const v8sf z = {};
	__u64 i = 0;

	for (; i + 8 <= n; i += 8)
		vstore(dst + i, z);
	for (; i < n; i++)
		dst[i] = 0;
}

/* @n elements of @dt at @src, @st apart, as f32 at @dst. */
void load_f32(float *dst, const void *src, __s64 st, __u64 n, __u32 dt)
{
	__u64 i;

	if (dt == VNPU_DTYPE_F32 && st == 1) {
		copy_f32(dst, src, n);
		return;
	}
	if ((dt == VNPU_DTYPE_F16 || dt == VNPU_DTYPE_BF16) && st == 1) {
		eng_widen16(dst, src, n, dt);
		return;
	}
	if (dt == VNPU_DTYPE_F32 && st == 2) {
		const float *p = src;

		/* Every other float: vectors that stay inside the run. */
		for (i = 0; i + 8 < n; i += 8) {
			v8sf lo = vload(p + 2 * i), hi = vload(p + 2 * i + 8);

			vstore(dst + i, __builtin_shufflevector(lo, hi, 0, 2, 4,
								6, 8, 10, 12,
								14));
		}
		for (; i < n; i++)
			dst[i] = p[2 * i];
		return;
	}
	for (i = 0; i < n; i++)
		dst[i] = ldf(src, (__s64)i * st, dt);
}

/*
 * Depth [k0, k0 + @kc) of a packed f16 or bf16 panel of width @w, read
 * from @src (k0 even), as f32 rows of @w at @dst: bf16 panels hold depth
 * pairs (vnpu_eng_pair_bf16()), and an odd @kc ends on the panel's plain
 * last row.
 */
static void widen_panel(float *dst, const __u16 *src, __u64 kc, __u64 w,
			__u32 dt)
{
	/* A pair's word: depth 2p's bits in its low half, 2p + 1's high. */
	typedef __u32 v8su __attribute__((vector_size(32), aligned(4), may_alias));
	__u64 k, x, x8 = w / 8 * 8;

	if (dt != VNPU_DTYPE_BF16) {
		load_f32(dst, src, 1, kc * w, dt);
		return;
	}

	for (k = 0; k + 1 < kc; k += 2, src += 2 * w, dst += 2 * w) {
		for (x = 0; x < x8; x += 8) {
			v8su p = *(const v8su *)(src + 2 * x);

			*(v8su *)(dst + x) = p << 16;
			*(v8su *)(dst + w + x) = p & 0xffff0000u;
		}
		for (x = x8; x < w; x++) {
			dst[x] = bf16_to_f32(src[2 * x]);
			dst[w + x] = bf16_to_f32(src[2 * x + 1]);
		}
	}
	if (kc % 2)
		load_f32(dst, src, 1, w, dt);
}

#ifndef ENG_FMA
/*
 * The baseline build, for CPUs without FMA: the same micro-kernels with
 * fma() computed in software (fma_exact(), vnpu_eng_gemm_kern.h), so that
 * every build gives the same bits.
 */

/* The sums of a 6x16 tile to @c (rows @rs apart), or to @o's output. */
static void uk_store(float acc[ENG_MR][ENG_NR], float *c, __s64 rs,
		     const struct eng_tile_out *o)
{
	int i, j;

	if (o) {
		c = o->y;
		rs = (__s64)(o->rsb / 4);
	}
	for (i = 0; i < ENG_MR; i++)
		for (j = 0; j < ENG_NR; j++)
			c[i * rs + j] = o && o->add ? acc[i][j] + o->add[i] :
						      acc[i][j];
}

/*
 * c[6][16] (rows @rs apart) = (@load ? c : 0) + A panel times B panel;
 * to @o's output instead when set.
 */
static __attribute__((__noinline__))
void ukernel(__u64 kc, const float *a, const float *b, float *c, __s64 rs,
	     int load, const struct eng_tile_out *o)
{
	float acc[ENG_MR][ENG_NR];
	__u64 k;
	int i, j;

	for (i = 0; i < ENG_MR; i++)
		for (j = 0; j < ENG_NR; j++)
			acc[i][j] = load ? c[i * rs + j] : 0;
	for (k = 0; k < kc; k++, a += ENG_MR, b += ENG_NR)
		for (i = 0; i < ENG_MR; i++)
			for (j = 0; j < ENG_NR; j++)
				acc[i][j] = fma_exact(a[i], b[j], acc[i][j]);
	uk_store(acc, c, rs, o);
}

/* The same with row k of B at b + off[k]. */
static __attribute__((__noinline__))
void ukernel_ind(__u64 kc, const float *a, const float *b, const __s32 *off,
		 float *c, __s64 rs, int load, const struct eng_tile_out *o)
{
	float acc[ENG_MR][ENG_NR];
	__u64 k;
	int i, j;

	for (i = 0; i < ENG_MR; i++)
		for (j = 0; j < ENG_NR; j++)
			acc[i][j] = load ? c[i * rs + j] : 0;
	for (k = 0; k < kc; k++, a += ENG_MR)
		for (i = 0; i < ENG_MR; i++)
			for (j = 0; j < ENG_NR; j++)
				acc[i][j] = fma_exact(a[i], b[off[k] + j],
						      acc[i][j]);
	uk_store(acc, c, rs, o);
}
#else
/*
 * The 6x16 tiles, in inline assembly: compiled, the loop's address
 * arithmetic took ALU ports that the 256-bit FMAs share (AVX2 conv 3x3
 * about 5% slower with B by offsets). Row r of the tile lives in ymm(2r)
 * (columns 0-7) and ymm(2r+1) (8-15); per depth step B's row goes to
 * ymm14 and ymm15, and each row's element of A, broadcast to ymm13, is
 * multiplied into both: fma(a[k], b[k], sum) for k in depth order, from
 * zero or from the tile, as in the AVX-512 tiles and the baseline's
 * ukernel(): same bits. Four steps a trip, then single steps. UK2_B(u)
 * loads B's row of step u of a trip, UK2_ADV4 and UK2_ADV1 move the
 * pointers past four steps and past one. UK2_HI(x) is x in the 16-column
 * tiles; the 6x8 ones, for a block's last 8 columns or fewer, leave out
 * what touches columns 8-15 (UK2_HI empty).
 */
#define UK2_HI(x) x

#define UK2_FMA(u, r, z0, z1)						\
	"vbroadcastss " UK2_A_##r(u) ", %%ymm13\n\t"			\
	"vfmadd231ps %%ymm14, %%ymm13, %%ymm" #z0 "\n\t"		\
	UK2_HI("vfmadd231ps %%ymm15, %%ymm13, %%ymm" #z1 "\n\t")

#define UK2_STEP(u)							\
	UK2_B(u)							\
	UK2_FMA(u, 0, 0, 1) UK2_FMA(u, 1, 2, 3) UK2_FMA(u, 2, 4, 5)	\
	UK2_FMA(u, 3, 6, 7) UK2_FMA(u, 4, 8, 9) UK2_ROW5(UK2_FMA(u, 5, 10, 11))

/* M(r, z0, z1) for each row of the tile. */
#define UK2_ROWS(M)							\
	M(0, 0, 1) M(1, 2, 3) M(2, 4, 5) M(3, 6, 7) M(4, 8, 9)		\
	UK2_ROW5(M(5, 10, 11))

/* Row 5 of the tile: left out by the 5x16 one (UK2_ROW5 empty). */
#define UK2_ROW5(x) x

/* A line of B ahead per trip of four steps: the in-place tiles only. */
#define UK2_PF

#define UK2_LD(r, z0, z1)						\
	"vmovups (%[p]), %%ymm" #z0 "\n\t"				\
	UK2_HI("vmovups 32(%[p]), %%ymm" #z1 "\n\t")			\
	"add %[rsb], %[p]\n\t"

#define UK2_ZERO(r, z0, z1)						\
	"vxorps %%ymm" #z0 ", %%ymm" #z0 ", %%ymm" #z0 "\n\t"		\
	UK2_HI("vxorps %%ymm" #z1 ", %%ymm" #z1 ", %%ymm" #z1 "\n\t")

/* Row r plus the r-th float at %[t], broadcast. */
#define UK2_ADD(r, z0, z1)						\
	"vbroadcastss (4 * " #r ")(%[t]), %%ymm13\n\t"			\
	"vaddps %%ymm13, %%ymm" #z0 ", %%ymm" #z0 "\n\t"		\
	UK2_HI("vaddps %%ymm13, %%ymm" #z1 ", %%ymm" #z1 "\n\t")

/* Row r plus the columns' adds, in ymm14 (columns 0-7) and ymm15 (8-15). */
#define UK2_CADD(r, z0, z1)						\
	"vaddps %%ymm14, %%ymm" #z0 ", %%ymm" #z0 "\n\t"		\
	UK2_HI("vaddps %%ymm15, %%ymm" #z1 ", %%ymm" #z1 "\n\t")

/* Row r plus the residual's row at %[k], which then moves %[a] bytes on. */
#define UK2_RES(r, z0, z1)						\
	"vaddps (%[k]), %%ymm" #z0 ", %%ymm" #z0 "\n\t"		\
	UK2_HI("vaddps 32(%[k]), %%ymm" #z1 ", %%ymm" #z1 "\n\t")	\
	"add %[a], %[k]\n\t"

/*
 * Relu of row r with ymm12 zero: max(0, x) keeps x unless 0 > x, so a
 * NaN or -0 stays, as in the epilogue's x < 0 ? 0 : x.
 */
#define UK2_RELU(r, z0, z1)						\
	"vmaxps %%ymm" #z0 ", %%ymm12, %%ymm" #z0 "\n\t"		\
	UK2_HI("vmaxps %%ymm" #z1 ", %%ymm12, %%ymm" #z1 "\n\t")

/*
 * LeakyRelu of row r with ymm12 zero and ymm14 alpha: x * alpha where
 * x < 0 (a NaN or -0 stays), as vneg_sel(x, x * alpha).
 */
#define UK2_LR(z)							\
	"vcmpps $1, %%ymm12, %%ymm" #z ", %%ymm13\n\t"			\
	"vmulps %%ymm14, %%ymm" #z ", %%ymm15\n\t"			\
	"vblendvps %%ymm13, %%ymm15, %%ymm" #z ", %%ymm" #z "\n\t"
#define UK2_LEAKY(r, z0, z1) UK2_LR(z0) UK2_HI(UK2_LR(z1))

/*
 * HardSwish of row r as vhswish() computes it, with ymm12 zero and %[t]
 * at struct eng_tile_out's @hs (3, fl(1/6) and 1, eight of each):
 * h = (x + 3) * fl(1/6), then x where h > 1, else +0 where h < 0, else
 * x * h.
 */
#define UK2_HS(z)							\
	"vaddps (%[t]), %%ymm" #z ", %%ymm13\n\t"			\
	"vmulps 32(%[t]), %%ymm13, %%ymm13\n\t"			\
	"vmulps %%ymm13, %%ymm" #z ", %%ymm14\n\t"			\
	"vcmpps $14, 64(%[t]), %%ymm13, %%ymm15\n\t"			\
	"vblendvps %%ymm15, %%ymm" #z ", %%ymm14, %%ymm14\n\t"		\
	"vcmpps $1, %%ymm12, %%ymm13, %%ymm15\n\t"			\
	"vblendvps %%ymm15, %%ymm12, %%ymm14, %%ymm" #z "\n\t"
#define UK2_HSWISH(r, z0, z1) UK2_HS(z0) UK2_HI(UK2_HS(z1))

/*
 * The bound b in ymm15 (no NaN) of row r: act_bound()'s Max(y, b), b
 * where y <= b (a NaN y stays, a tie gives b), or with predicate 13 its
 * Min(y, b), b where y >= b.
 */
#define UK2_BX(z, pred)							\
	"vcmpps $" #pred ", %%ymm15, %%ymm" #z ", %%ymm13\n\t"		\
	"vblendvps %%ymm13, %%ymm15, %%ymm" #z ", %%ymm" #z "\n\t"
#define UK2_BMAX(r, z0, z1) UK2_BX(z0, 2) UK2_HI(UK2_BX(z1, 2))
#define UK2_BMIN(r, z0, z1) UK2_BX(z0, 13) UK2_HI(UK2_BX(z1, 13))

#define UK2_ST(r, z0, z1)						\
	"vmovups %%ymm" #z0 ", (%[p])\n\t"				\
	UK2_HI("vmovups %%ymm" #z1 ", 32(%[p])\n\t")			\
	"add %[rsb], %[p]\n\t"

#define UK2_STR_(x) #x
#define UK2_STR(x) UK2_STR_(x)

/*
 * The whole tile: from %[c] (rows %[rsb] bytes apart) when %[load], else
 * zero; %[k] steps; to %[c], or to %[o]'s output (struct eng_tile_out: y
 * at 0, rsb at 8, add at 16, res at 40, res_rsb at 48, act at 56, cadd
 * at 64, alpha at 72, beta at 76, hs at 80) plus its row adds, then its
 * column adds, then its residual, then its activation (Relu, LeakyRelu or
 * HardSwish) and bound. %[p] and %[t] are scratch; after the depth loop
 * %[k] and %[a] are too.
 */
#define UK2_TILE							\
	"mov %[c], %[p]\n\t"						\
	"test %[load], %[load]\n\t"					\
	"jz 5f\n\t"							\
	UK2_ROWS(UK2_LD)						\
	"jmp 6f\n"							\
	"5:\n\t"							\
	UK2_ROWS(UK2_ZERO)						\
	"6:\n\t"							\
	"cmp $4, %[k]\n\t"						\
	"jb 2f\n"							\
	".p2align 6\n"							\
	"1:\n\t"							\
	UK2_STEP(0) UK2_STEP(1) UK2_PF UK2_STEP(2) UK2_STEP(3)		\
	UK2_ADV4							\
	"sub $4, %[k]\n\t"						\
	"cmp $4, %[k]\n\t"						\
	"jae 1b\n"							\
	"2:\n\t"							\
	"test %[k], %[k]\n\t"						\
	"jz 4f\n"							\
	"3:\n\t"							\
	UK2_STEP(0)							\
	UK2_ADV1							\
	"dec %[k]\n\t"							\
	"jnz 3b\n"							\
	"4:\n\t"							\
	"mov %[c], %[p]\n\t"						\
	"test %[o], %[o]\n\t"						\
	"jz 7f\n\t"							\
	"mov (%[o]), %[p]\n\t"						\
	"mov 8(%[o]), %[rsb]\n\t"					\
	"mov 16(%[o]), %[t]\n\t"					\
	"test %[t], %[t]\n\t"						\
	"jz 8f\n\t"							\
	UK2_ROWS(UK2_ADD)						\
	"8:\n\t"							\
	"mov 64(%[o]), %[t]\n\t"					\
	"test %[t], %[t]\n\t"						\
	"jz 10f\n\t"							\
	"vmovups (%[t]), %%ymm14\n\t"					\
	UK2_HI("vmovups 32(%[t]), %%ymm15\n\t")			\
	UK2_ROWS(UK2_CADD)						\
	"10:\n\t"							\
	"mov 40(%[o]), %[k]\n\t"					\
	"test %[k], %[k]\n\t"						\
	"jz 9f\n\t"							\
	"mov 48(%[o]), %[a]\n\t"					\
	UK2_ROWS(UK2_RES)						\
	"9:\n\t"							\
	"mov 56(%[o]), %[k]\n\t"					\
	"test %[k], %[k]\n\t"						\
	"jz 7f\n\t"							\
	"vxorps %%ymm12, %%ymm12, %%ymm12\n\t"			\
	"movzbl %b[k], %k[t]\n\t"					\
	"cmp $" UK2_STR(ENG_TILE_RELU) ", %k[t]\n\t"			\
	"jne 11f\n\t"							\
	UK2_ROWS(UK2_RELU)						\
	"jmp 12f\n"							\
	"11:\n\t"							\
	"cmp $" UK2_STR(ENG_TILE_LEAKY) ", %k[t]\n\t"			\
	"jne 13f\n\t"							\
	"vbroadcastss 72(%[o]), %%ymm14\n\t"				\
	UK2_ROWS(UK2_LEAKY)						\
	"jmp 12f\n"							\
	"13:\n\t"							\
	"cmp $" UK2_STR(ENG_TILE_HSWISH) ", %k[t]\n\t"			\
	"jne 12f\n\t"							\
	"mov 80(%[o]), %[t]\n\t"					\
	UK2_ROWS(UK2_HSWISH)						\
	"12:\n\t"							\
	"test $" UK2_STR(ENG_TILE_BOUND) ", %k[k]\n\t"		\
	"jz 7f\n\t"							\
	"vbroadcastss 76(%[o]), %%ymm15\n\t"				\
	"test $" UK2_STR(ENG_TILE_MIN) ", %k[k]\n\t"			\
	"jnz 14f\n\t"							\
	UK2_ROWS(UK2_BMAX)						\
	"jmp 7f\n"							\
	"14:\n\t"							\
	UK2_ROWS(UK2_BMIN)						\
	"7:\n\t"							\
	UK2_ROWS(UK2_ST)						\
	"vzeroupper\n\t"

#define UK2_CLOBBER							\
	"xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",	\
	"xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14",	\
	"xmm15", "cc", "memory"

/* A in panels: row r of step u at a + 6 * u + r. */
#define UK2_A_0(u) "(4 * (6 * " #u " + 0))(%[a])"
#define UK2_A_1(u) "(4 * (6 * " #u " + 1))(%[a])"
#define UK2_A_2(u) "(4 * (6 * " #u " + 2))(%[a])"
#define UK2_A_3(u) "(4 * (6 * " #u " + 3))(%[a])"
#define UK2_A_4(u) "(4 * (6 * " #u " + 4))(%[a])"
#define UK2_A_5(u) "(4 * (6 * " #u " + 5))(%[a])"

/* B in panels: step u's row at b + 64 * u. */
#define UK2_B(u)							\
	"vmovups (64 * " #u ")(%[b]), %%ymm14\n\t"			\
	UK2_HI("vmovups (64 * " #u " + 32)(%[b]), %%ymm15\n\t")
#define UK2_ADV4 "add $96, %[a]\n\tadd $256, %[b]\n\t"
#define UK2_ADV1 "add $24, %[a]\n\tadd $64, %[b]\n\t"

/*
 * c[6][16] (rows @rs apart) = (@load ? c : 0) + A panel (kc x 6) times
 * B panel (kc x 16); to @o's output instead when set.
 */
static __attribute__((__noinline__))
void ukernel(__u64 kc, const float *a, const float *b, float *c, __s64 rs,
	     int load, const struct eng_tile_out *o)
{
	__u64 rsb = (__u64)rs * 4;
	const float *t;
	float *p;

	__asm__ __volatile__(UK2_TILE
			     : [k] "+r"(kc), [a] "+r"(a), [b] "+r"(b),
			       [p] "=&r"(p), [t] "=&r"(t), [rsb] "+r"(rsb)
			     : [c] "r"(c), [load] "r"(load), [o] "r"(o)
			     : UK2_CLOBBER);
}

/* The same on columns 0-7 of the tile alone (c[6][8]). */
#undef UK2_HI
#define UK2_HI(x)
static __attribute__((__noinline__))
void ukernel8(__u64 kc, const float *a, const float *b, float *c, __s64 rs,
	      int load, const struct eng_tile_out *o)
{
	__u64 rsb = (__u64)rs * 4;
	const float *t;
	float *p;

	__asm__ __volatile__(UK2_TILE
			     : [k] "+r"(kc), [a] "+r"(a), [b] "+r"(b),
			       [p] "=&r"(p), [t] "=&r"(t), [rsb] "+r"(rsb)
			     : [c] "r"(c), [load] "r"(load), [o] "r"(o)
			     : UK2_CLOBBER);
}

#undef UK2_HI
#define UK2_HI(x) x

/*
 * Lines [%[pf], %[pfe]) toward L1, two a trip (a panel of A takes 96
 * bytes a trip), then the last two of them again for the trips left: the
 * next tile's A, weights from memory (the AVX-512 tiles' a_ahead_pd()).
 * The depth loop's UK2_PF in ukernel_pf() and ukernel_ind_pf().
 */
#define UK2_PF_A_AHEAD							\
	"prefetcht0 (%[pf])\n\t"					\
	"prefetcht0 64(%[pf])\n\t"					\
	"add $128, %[pf]\n\t"						\
	"lea -128(%[pfe]), %[t]\n\t"					\
	"cmp %[pfe], %[pf]\n\t"					\
	"cmovae %[t], %[pf]\n\t"

#undef UK2_PF
#define UK2_PF UK2_PF_A_AHEAD

/* ukernel() fetching lines [@pf, @pfe) ahead (@pfe >= @pf + 128). */
static __attribute__((__noinline__))
void ukernel_pf(__u64 kc, const float *a, const float *b, float *c, __s64 rs,
		int load, const struct eng_tile_out *o, const char *pf,
		const char *pfe)
{
	__u64 rsb = (__u64)rs * 4;
	const float *t;
	float *p;

	__asm__ __volatile__(UK2_TILE
			     : [k] "+r"(kc), [a] "+r"(a), [b] "+r"(b),
			       [p] "=&r"(p), [t] "=&r"(t), [rsb] "+r"(rsb),
			       [pf] "+r"(pf)
			     : [c] "r"(c), [load] "r"(load), [o] "r"(o),
			       [pfe] "r"(pfe)
			     : UK2_CLOBBER);
}

#undef UK2_PF
#define UK2_PF

/*
 * A read in place, rows %[ars] bytes apart: rows 0-2 from %[a], rows 3-5
 * from %[a3] (three rows further), step u of row r at + 4 * u.
 */
#undef UK2_A_0
#undef UK2_A_1
#undef UK2_A_2
#undef UK2_A_3
#undef UK2_A_4
#undef UK2_A_5
#undef UK2_ADV4
#undef UK2_ADV1
#define UK2_A_0(u) "(4 * " #u ")(%[a])"
#define UK2_A_1(u) "(4 * " #u ")(%[a], %[ars])"
#define UK2_A_2(u) "(4 * " #u ")(%[a], %[ars], 2)"
#define UK2_A_3(u) "(4 * " #u ")(%[a3])"
#define UK2_A_4(u) "(4 * " #u ")(%[a3], %[ars])"
#define UK2_A_5(u) "(4 * " #u ")(%[a3], %[ars], 2)"
#define UK2_ADV4 "add $16, %[a]\n\tadd $16, %[a3]\n\tadd $256, %[b]\n\t"
#define UK2_ADV1 "add $4, %[a]\n\tadd $4, %[a3]\n\tadd $64, %[b]\n\t"

/*
 * Lines [%[pf], %[pfe]) toward L2, one a trip, then the last of them again
 * (a line at hand) for the trips left: B's next panel fetched between the
 * FMAs of the tiles that read the one before (b_panel_share()), where a
 * run of prefetches ahead of each tile stalled (about 1.5% of BERT-base
 * on Zen 3).
 */
#undef UK2_PF
#define UK2_PF								\
	"prefetcht1 (%[pf])\n\t"					\
	"add $64, %[pf]\n\t"						\
	"lea -64(%[pfe]), %[t]\n\t"					\
	"cmp %[pfe], %[pf]\n\t"					\
	"cmovae %[t], %[pf]\n\t"

/*
 * The same with A's six rows read in place, @ars floats apart (the FMAs
 * and their order are ukernel()'s: the same bits without packing A), and
 * lines [@pf, @pfe) fetched ahead toward L2 (@pfe > @pf).
 */
static __attribute__((__noinline__))
void ukernel_rows(__u64 kc, const float *a, __s64 ars, const float *b,
		  float *c, __s64 rs, int load, const struct eng_tile_out *o,
		  const char *pf, const char *pfe)
{
	__u64 rsb = (__u64)rs * 4, arsb = (__u64)ars * 4;
	const float *a3 = a + 3 * ars, *t;
	float *p;

	__asm__ __volatile__(UK2_TILE
			     : [k] "+r"(kc), [a] "+r"(a), [a3] "+r"(a3),
			       [b] "+r"(b), [p] "=&r"(p), [t] "=&r"(t),
			       [rsb] "+r"(rsb), [pf] "+r"(pf)
			     : [ars] "r"(arsb), [c] "r"(c), [load] "r"(load),
			       [o] "r"(o), [pfe] "r"(pfe)
			     : UK2_CLOBBER);
}

/*
 * The same on rows 0-4 alone (c[5][16]): a slice of A in place whose rows
 * are no multiple of 6 ends in up to five of these (slice_run(),
 * rows_fives()).
 */
#undef UK2_ROW5
#define UK2_ROW5(x)
static __attribute__((__noinline__))
void ukernel_rows5(__u64 kc, const float *a, __s64 ars, const float *b,
		   float *c, __s64 rs, int load, const struct eng_tile_out *o,
		   const char *pf, const char *pfe)
{
	__u64 rsb = (__u64)rs * 4, arsb = (__u64)ars * 4;
	const float *a3 = a + 3 * ars, *t;
	float *p;

	__asm__ __volatile__(UK2_TILE
			     : [k] "+r"(kc), [a] "+r"(a), [a3] "+r"(a3),
			       [b] "+r"(b), [p] "=&r"(p), [t] "=&r"(t),
			       [rsb] "+r"(rsb), [pf] "+r"(pf)
			     : [ars] "r"(arsb), [c] "r"(c), [load] "r"(load),
			       [o] "r"(o), [pfe] "r"(pfe)
			     : UK2_CLOBBER);
}

#undef UK2_ROW5
#define UK2_ROW5(x) x
#undef UK2_PF
#define UK2_PF

/* B by offsets: step u's row at b + 4 * off[u]. */
#undef UK2_A_0
#undef UK2_A_1
#undef UK2_A_2
#undef UK2_A_3
#undef UK2_A_4
#undef UK2_A_5
#define UK2_A_0(u) "(4 * (6 * " #u " + 0))(%[a])"
#define UK2_A_1(u) "(4 * (6 * " #u " + 1))(%[a])"
#define UK2_A_2(u) "(4 * (6 * " #u " + 2))(%[a])"
#define UK2_A_3(u) "(4 * (6 * " #u " + 3))(%[a])"
#define UK2_A_4(u) "(4 * (6 * " #u " + 4))(%[a])"
#define UK2_A_5(u) "(4 * (6 * " #u " + 5))(%[a])"
#undef UK2_B
#undef UK2_ADV4
#undef UK2_ADV1
#define UK2_B(u)							\
	"movslq (4 * " #u ")(%[off]), %[t]\n\t"			\
	"vmovups (%[b], %[t], 4), %%ymm14\n\t"				\
	UK2_HI("vmovups 32(%[b], %[t], 4), %%ymm15\n\t")
#define UK2_ADV4 "add $96, %[a]\n\tadd $16, %[off]\n\t"
#define UK2_ADV1 "add $24, %[a]\n\tadd $4, %[off]\n\t"

/* The same with row k of B at b + off[k]. */
static __attribute__((__noinline__))
void ukernel_ind(__u64 kc, const float *a, const float *b, const __s32 *off,
		 float *c, __s64 rs, int load, const struct eng_tile_out *o)
{
	__u64 rsb = (__u64)rs * 4;
	const float *t;
	float *p;

	__asm__ __volatile__(UK2_TILE
			     : [k] "+r"(kc), [a] "+r"(a), [off] "+r"(off),
			       [p] "=&r"(p), [t] "=&r"(t), [rsb] "+r"(rsb)
			     : [b] "r"(b), [c] "r"(c), [load] "r"(load),
			       [o] "r"(o)
			     : UK2_CLOBBER);
}

/* ukernel_ind() fetching lines [@pf, @pfe) ahead, as ukernel_pf(). */
#undef UK2_PF
#define UK2_PF UK2_PF_A_AHEAD
static __attribute__((__noinline__))
void ukernel_ind_pf(__u64 kc, const float *a, const float *b,
		    const __s32 *off, float *c, __s64 rs, int load,
		    const struct eng_tile_out *o, const char *pf,
		    const char *pfe)
{
	__u64 rsb = (__u64)rs * 4;
	const float *t;
	float *p;

	__asm__ __volatile__(UK2_TILE
			     : [k] "+r"(kc), [a] "+r"(a), [off] "+r"(off),
			       [p] "=&r"(p), [t] "=&r"(t), [rsb] "+r"(rsb),
			       [pf] "+r"(pf)
			     : [b] "r"(b), [c] "r"(c), [load] "r"(load),
			       [o] "r"(o), [pfe] "r"(pfe)
			     : UK2_CLOBBER);
}

#undef UK2_PF
#define UK2_PF

/* The same on columns 0-7 of the tile alone. */
#undef UK2_HI
#define UK2_HI(x)
static __attribute__((__noinline__))
void ukernel_ind8(__u64 kc, const float *a, const float *b, const __s32 *off,
		  float *c, __s64 rs, int load, const struct eng_tile_out *o)
{
	__u64 rsb = (__u64)rs * 4;
	const float *t;
	float *p;

	__asm__ __volatile__(UK2_TILE
			     : [k] "+r"(kc), [a] "+r"(a), [off] "+r"(off),
			       [p] "=&r"(p), [t] "=&r"(t), [rsb] "+r"(rsb)
			     : [b] "r"(b), [c] "r"(c), [load] "r"(load),
			       [o] "r"(o)
			     : UK2_CLOBBER);
}

#undef UK2_HI
#define UK2_HI(x) x

#endif /* ENG_FMA */

/*
 * @n panels of one row's sums at @acc (from zero unless @load) plus the
 * slice: fma(a[k], b[k][j], sum) in depth order, as the micro-kernels sum
 * each output.
 */
#define GEMV_PANELS(n) do {						\
	v8sf v[2 * (n)];						\
	int i;								\
									\
	for (i = 0; i < 2 * (n); i++)					\
		v[i] = g->load ? vload(acc + 8 * i) : vbcast(0.0f);	\
	for (k = 0; k < g->kc; k++) {					\
		v8sf ak = vbcast(g->a[k]);				\
									\
		for (i = 0; i < 2 * (n); i++)				\
			v[i] = LANE_FMA(ak, vload(b + (i / 2) * g->b_ps +	\
						  k * ENG_NR + 8 * (i % 2)), \
					v[i]);				\
	}								\
	for (i = 0; i < 2 * (n); i++)					\
		vstore(acc + 8 * i, v[i]);				\
} while (0)

/*
 * A depth slice of a one-row block over packed B: four panels at a time
 * (eight independent sums), then one; in sixteen lanes with @avx512 (the
 * FMA build only), same bits.
 */
static void gemv_slice(const struct eng_gemv *g, int avx512)
{
	const float *b = g->b;
	float *acc = g->acc;
	__u64 p = 0, k;

#ifdef ENG_FMA
	if (avx512) {
		vnpu_eng_gemv_avx512(g);
		return;
	}
#endif
	for (; p + 4 <= g->np; p += 4, b += 4 * g->b_ps, acc += 4 * ENG_NR)
		GEMV_PANELS(4);
	for (; p < g->np; p++, b += g->b_ps, acc += ENG_NR)
		GEMV_PANELS(1);
}

/*
 * A 6x16 tile of the last slice at block row @i and column @j, with padded
 * columns (@s->out_wp): its output run starts at padded column *@qc of
 * output row q / wp, at *@y. Inside one output row the tile stores there
 * itself (returns 0); across rows' ends it stores to a buffer, returns 1,
 * and tile_scatter() takes it on.
 */
static int tile_padded(const struct eng_slice *s, __u64 i, __u64 j, float **y,
		       __u64 *qc)
{
	__u64 q = s->out_q0 + j;

	*qc = q % s->out_wp;
	*y = s->out + (__s64)i * s->out_rs +
	     (__s64)((q / s->out_wp) * s->out_ow + *qc);
	return *qc + ENG_NR > s->out_ow;
}

/*
 * The buffered tile @t (rows ENG_NR apart) to the outputs of its columns
 * (tile_padded()'s @y and @qc): the run left in the first output row, then,
 * past the padding, the start of the next (output rows are at least ENG_NR
 * wide).
 */
static void tile_scatter(const struct eng_slice *s, float *y, __u64 qc,
			 const float *t)
{
	__u64 ow = s->out_ow, hi = s->out_wp - qc;
	__u64 lo = qc < ow ? eng_min(ENG_NR, ow - qc) : 0;
	float *next = y - qc + ow;
	int r;

#ifdef ENG_FMA
	/*
	 * The columns that are outputs, [0, lo) and [hi, ENG_NR), are a run
	 * of @n at @y (next == y + lo): per row, two vectors of it picked
	 * from the tile's two, the first 8 and the last 8, stored over each
	 * other (masked stores are slow on AMD's cores).
	 */
	__s64 n = (__s64)(lo + (hi < ENG_NR ? ENG_NR - hi : 0));

	if (qc < ow && n >= 8) {
		const v8si i = { 0, 1, 2, 3, 4, 5, 6, 7 };
		v8si j0 = i, j1 = i + (int)(n - 8), h0, h1;
		__s64 g = (__s64)(hi - lo);

		j0 += (j0 >= (int)lo) & (int)g;
		j1 += (j1 >= (int)lo) & (int)g;
		h0 = j0 >= 8;
		h1 = j1 >= 8;
		j0 &= 7;
		j1 &= 7;
		for (r = 0; r < ENG_MR; r++, t += ENG_NR) {
			v8sf a = vload(t), b = vload(t + 8);
			float *d = y + (__s64)r * s->out_rs;

			vstore(d, vpick2(a, b, j0, h0));
			vstore(d + n - 8, vpick2(a, b, j1, h1));
		}
		return;
	}
#endif
	for (r = 0; r < ENG_MR; r++, t += ENG_NR) {
		copy_f32(y + (__s64)r * s->out_rs, t, lo);
		if (hi < ENG_NR)
			copy_f32(next + (__s64)r * s->out_rs, t + hi,
				 ENG_NR - hi);
	}
}

#ifdef ENG_FMA
/*
 * A block's last panel of B when it has at most ENG_COLS columns: there a
 * 6x8 tile runs one load of B and six broadcasts of A for six FMAs of
 * which one to four columns count (resnet50's 1x1 convolutions on 7x7
 * maps: 49 columns, the 49th about a sixth of the layer). These tiles put
 * A's rows in the lanes instead: per depth step one load of each of @np
 * panels of A (rows 0-5 in lanes 0-5; lanes 6 and 7 hold the next step's
 * rows and are dropped), a broadcast of B per column, and one FMA per
 * panel and column: fma(a[k], b[k], sum) in depth order from zero or from
 * @c (rows @rs apart), as the 6x16 tiles sum each output: same bits. B's
 * row k at @b + k * ENG_NR, or with @off at @b + off[k]. The last step
 * builds A's rows from six floats (a load of eight would read past the
 * panel).
 */
#define ENG_COLS 4

static __attribute__((__always_inline__)) inline void
col_tile(__u64 kc, const float *a, __u64 a_ps, const float *b,
	 const __s32 *off, float *c, __s64 rs, int load, const int np,
	 const int nq)
{
	/* At most nine sums (3 panels x 3 columns), panel by panel. */
	v8sf acc[9], bq[ENG_COLS];
	__u64 k;
	int p, q, r;

	for (p = 0; p < np; p++)
		for (q = 0; q < nq; q++) {
			v8sf v = vbcast(0.0f);

			if (load)
				for (r = 0; r < ENG_MR; r++)
					v[r] = c[(p * ENG_MR + r) * rs + q];
			acc[p * nq + q] = v;
		}
	for (k = 0; k < kc; k++) {
		const float *bk = off ? b + off[k] : b + k * ENG_NR;

		for (q = 0; q < nq; q++)
			bq[q] = vbcast(bk[q]);
		for (p = 0; p < np; p++) {
			const float *ap = a + p * a_ps + k * ENG_MR;
			v8sf ak;

			if (k + 1 < kc)
				ak = vload(ap);
			else
				ak = (v8sf){ ap[0], ap[1], ap[2], ap[3],
					     ap[4], ap[5], 0.0f, 0.0f };
			for (q = 0; q < nq; q++)
				acc[p * nq + q] = VFMA(ak, bq[q],
						       acc[p * nq + q]);
		}
	}
	for (p = 0; p < np; p++)
		for (q = 0; q < nq; q++)
			for (r = 0; r < ENG_MR; r++)
				c[(p * ENG_MR + r) * rs + q] =
					acc[p * nq + q][r];
}

/* col_tile() of @np panels and @nq columns, B in panels or by offsets. */
#define COL_TILE_FN(np, nq)						\
static __attribute__((__noinline__)) void				\
col_tile_##np##_##nq(__u64 kc, const float *a, __u64 a_ps,		\
		     const float *b, const __s32 *off, float *c,	\
		     __s64 rs, int load)				\
{									\
	if (off)							\
		col_tile(kc, a, a_ps, b, off, c, rs, load, np, nq);	\
	else								\
		col_tile(kc, a, a_ps, b, 0, c, rs, load, np, nq);	\
}

COL_TILE_FN(8, 1)
COL_TILE_FN(7, 1)
COL_TILE_FN(6, 1)
COL_TILE_FN(5, 1)
COL_TILE_FN(4, 1)
COL_TILE_FN(3, 1)
COL_TILE_FN(2, 1)
COL_TILE_FN(1, 1)
COL_TILE_FN(4, 2)
COL_TILE_FN(3, 2)
COL_TILE_FN(2, 2)
COL_TILE_FN(1, 2)
COL_TILE_FN(3, 3)
COL_TILE_FN(2, 3)
COL_TILE_FN(1, 3)
COL_TILE_FN(2, 4)
COL_TILE_FN(1, 4)

typedef void (*col_tile_fn)(__u64 kc, const float *a, __u64 a_ps,
			    const float *b, const __s32 *off, float *c,
			    __s64 rs, int load);

/*
 * Columns [@j, @s->nc) of the slice, fewer than ENG_COLS + 1 from the
 * start @j of a panel, with col_tile(): the panels of A eight sums at a
 * time, then the panels left in one call. Each sum is one chain of FMAs
 * in depth order, so a call of fewer sums waits on their latency: a
 * unit of two panels (the 7x7 projections split for two CPUs: 12 rows)
 * took its 49th column as two one-panel calls at a quarter of the FMA
 * rate, 18% of the layer's time.
 */
static void col_tiles(const struct eng_slice *s, __u64 j)
{
	static const col_tile_fn fn[ENG_COLS][8] = {
		{ col_tile_1_1, col_tile_2_1, col_tile_3_1, col_tile_4_1,
		  col_tile_5_1, col_tile_6_1, col_tile_7_1, col_tile_8_1 },
		{ col_tile_1_2, col_tile_2_2, col_tile_3_2, col_tile_4_2 },
		{ col_tile_1_3, col_tile_2_3, col_tile_3_3 },
		{ col_tile_1_4, col_tile_2_4 },
	};
	static const __u64 step[ENG_COLS] = { 8, 4, 3, 2 };
	__u64 nq = s->nc - j, np = eng_div_up(s->mc, ENG_MR), p = 0, n;
	const float *b = s->b + (j / ENG_NR) * s->b_ps;
	float *c = s->acc + j;

	for (; p < np; p += n) {
		n = eng_min(step[nq - 1], np - p);
		fn[nq - 1][n - 1](s->kc, s->a + p * s->a_ps, s->a_ps, b,
				  s->off, c + p * ENG_MR * s->acc_rs,
				  (__s64)s->acc_rs, s->load);
	}
}
#endif

#ifdef ENG_FMA
/*
 * @nr rows (at most 2) of A's packed panel @a times @np panels of B (at
 * most 3, @b_ps floats apart) into @c (rows @rs apart), from zero or from
 * @c when @load: the rows a block has past its whole 6-row panels (BERT's
 * 128 rows: 2), which a 6x16 tile would take at a third of its speed.
 * fma(a[k], b[k], sum) in depth order per output, as the tiles: same bits.
 */
static __attribute__((__always_inline__)) inline void
rows_tile(__u64 kc, const float *a, const float *b, __u64 b_ps, float *c,
	  __s64 rs, int load, const int nr, const int np)
{
	v8sf acc[2][6];
	__u64 k;
	int r, x;

	for (r = 0; r < nr; r++)
		for (x = 0; x < 2 * np; x++)
			acc[r][x] = load ? vload(c + r * rs + (x / 2) * ENG_NR +
						 8 * (x % 2)) : vbcast(0.0f);
	for (k = 0; k < kc; k++, a += ENG_MR, b += ENG_NR)
		for (x = 0; x < 2 * np; x++) {
			v8sf bx = vload(b + (x / 2) * b_ps + 8 * (x % 2));

			for (r = 0; r < nr; r++)
				acc[r][x] = VFMA(vbcast(a[r]), bx, acc[r][x]);
		}
	for (r = 0; r < nr; r++)
		for (x = 0; x < 2 * np; x++)
			vstore(c + r * rs + (x / 2) * ENG_NR + 8 * (x % 2),
			       acc[r][x]);
}

#define ROWS_TILE_FN(nr, np)						\
static __attribute__((__noinline__)) void				\
rows_tile_##nr##_##np(__u64 kc, const float *a, const float *b,		\
		      __u64 b_ps, float *c, __s64 rs, int load)		\
{									\
	rows_tile(kc, a, b, b_ps, c, rs, load, nr, np);			\
}

ROWS_TILE_FN(1, 3)
ROWS_TILE_FN(1, 1)
ROWS_TILE_FN(2, 3)
ROWS_TILE_FN(2, 1)

/*
 * Panels [0, @np) of a slice of at most 2 rows over B in panels, to its
 * accumulator: three panels at a time, then one.
 */
static void rows_tiles(const struct eng_slice *s, __u64 np)
{
	__u64 p = 0;
	float *c = s->acc;
	const float *b = s->b;
	__s64 rs = (__s64)s->acc_rs;

	for (; p + 3 <= np; p += 3, b += 3 * s->b_ps, c += 3 * ENG_NR)
		(s->mc == 1 ? rows_tile_1_3 : rows_tile_2_3)(s->kc, s->a, b,
							     s->b_ps, c, rs,
							     s->load);
	for (; p < np; p++, b += s->b_ps, c += ENG_NR)
		(s->mc == 1 ? rows_tile_1_1 : rows_tile_2_1)(s->kc, s->a, b,
							     s->b_ps, c, rs,
							     s->load);
}
#endif

/*
 * Tile @t's share (of @nt tiles down the block) of the lines of the next
 * panel of B at @next: weights packed at compile time come from memory, a
 * panel used by only as many tiles as the block has tiles of rows (BERT's
 * 128 rows: 22), and a tile that waits for its panel runs at a fraction of
 * its speed. Spread over the panel's tiles, toward L2 (prefetcht1): the
 * panel being read stays in L1.
 */
static void b_panel_ahead(const struct eng_slice *s, const float *next,
			  __u64 t, __u64 nt)
{
	__u64 per = eng_div_up(s->kc, nt);
	__u64 l = t * per, end = eng_min(l + per, s->kc);
	const char *p = (const char *)next;

	for (; l < end; l++)
		__builtin_prefetch(p + 64 * l, 0, 2);
}

#ifdef ENG_FMA
/*
 * b_panel_ahead()'s share of tile @t as the lines [*@pf, *@pfe) that the
 * in-place tiles fetch themselves, a line every four depth steps.
 */
static void b_panel_share(const struct eng_slice *s, const float *next,
			  __u64 t, __u64 nt, const char **pf, const char **pfe)
{
	__u64 per = eng_div_up(s->kc, nt);
	__u64 l = eng_min(t * per, s->kc - 1), end = eng_min(l + per, s->kc);

	*pf = (const char *)next + 64 * l;
	*pfe = (const char *)next + 64 * eng_max(end, l + 1);
}

/*
 * The 5-row tiles that end a slice of @mc rows of A in place (struct
 * eng_slice's @a_rows) whose rows are no multiple of ENG_MR: as many as
 * make the rest a multiple of it, or 0 with too few rows for them.
 * BERT's 128 rows: 18 tiles of 6 and 4 of 5, all near the 6x16 tile's
 * speed, where the 2 rows past 21 tiles of 6 took a pass of their own
 * over B (rows_tiles(), once B had left L2) at about half of it.
 */
static __u64 rows_fives(__u64 mc)
{
	__u64 f = 5 * (mc % ENG_MR) % ENG_MR;

	return 5 * f <= mc ? f : 0;
}
#endif

/*
 * Asks for the lines a tile's epilogue reads and writes (@o's residual
 * rows and, unless it goes through @buf, its output rows) before its depth
 * loop: the tile's loads after the loop would wait for them, and its
 * stores for their lines (ResNet's 1x1 layers on 56x56 maps write 3 MB
 * and read as much of residual).
 */
static void tile_ahead(const struct eng_tile_out *o, __s64 res_rs,
		       __s64 out_rs, int buf)
{
	const float *res = o->res;
	float *y = o->y;
	int r;

	for (r = 0; r < ENG_MR; r++) {
		if (res) {
			__builtin_prefetch(res);
			__builtin_prefetch(res + ENG_NR - 1);
			res += res_rs;
		}
		if (!buf) {
			__builtin_prefetch(y, 1);
			__builtin_prefetch(y + ENG_NR - 1, 1);
			y += out_rs;
		}
	}
}

#ifdef ENG_FMA
/*
 * The lines [*@pf, *@pfe) of A that the tile after tile @tile (of @nt,
 * at row @i) of a slice's first panel reads: the next tile's panel, or
 * after the last one the next slice's or what the caller reads next
 * (@s->a_next) when the slice has one panel of B (@nc columns), else
 * none (the first tile's A, just read): 0.
 */
static int slice_a_ahead(const struct eng_slice *s, __u64 i, __u64 tile,
			 __u64 nt, __u64 nc, const char **pf, const char **pfe)
{
	const float *next;

	if (tile + 1 < nt)
		next = s->a + (i / ENG_MR + 1) * s->a_ps;
	else if (nc <= ENG_NR && s->a_next)
		next = s->a_next;
	else
		return 0;
	*pf = (const char *)next;
	*pfe = *pf + eng_max(s->kc * ENG_MR * 4, 128);
	return 1;
}
#endif

/*
 * HardSwish's constants for the AVX2 tiles (struct eng_tile_out's @hs):
 * 3, fl(1/6) and 1, a vector of each.
 */
static const float eng_tile_hswish[3][8] __attribute__((aligned(32))) = {
	{ 3.0f, 3.0f, 3.0f, 3.0f, 3.0f, 3.0f, 3.0f, 3.0f },
	{ 1.0f / 6.0f, 1.0f / 6.0f, 1.0f / 6.0f, 1.0f / 6.0f,
	  1.0f / 6.0f, 1.0f / 6.0f, 1.0f / 6.0f, 1.0f / 6.0f },
	{ 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f },
};

/* One slice of a block with the 6x16 kernel, panel by panel. */
static void slice_run(struct eng_slice *s)
{
	struct eng_tile_out out = { .rsb = (__u64)s->out_rs * 4,
				    .res_rsb = s->out_res_rs * 4,
				    .act = s->out_act, .alpha = s->out_alpha,
				    .beta = s->out_beta,
				    .hs = eng_tile_hswish[0] };
	struct eng_tile_out buf = { .rsb = ENG_NR * 4, .act = s->out_act,
				    .alpha = s->out_alpha,
				    .beta = s->out_beta,
				    .hs = eng_tile_hswish[0] };
	float t[ENG_MR * ENG_NR];
	__u64 i, j, nc = s->nc, tile, fives = 0, nt;
#ifdef ENG_FMA
	const char *pf, *pfe;
	int ahead;
#endif
	int nr;

#ifdef ENG_FMA
	if (s->a_rows && !s->out_wp)
		fives = rows_fives(s->mc);
#endif
	/* Rows [mc - 5 * fives, mc) in tiles of 5, those before in 6. */
	nt = eng_div_up(s->mc - 5 * fives, ENG_MR) + fives;
	/* Whole tiles inside the block go to the output. */
	s->out_mc = s->out ? (fives ? s->mc : s->mc / ENG_MR * ENG_MR) : 0;
	s->out_nc = s->out ? s->nc / ENG_NR * ENG_NR : 0;
	buf.y = t;
#ifdef ENG_FMA
	/* A last panel of a few columns: A's rows in the lanes. */
	if (!s->a_rows && nc % ENG_NR && nc % ENG_NR <= ENG_COLS) {
		nc -= nc % ENG_NR;
		col_tiles(s, nc);
	}
	/* One or two rows in panels, none to the output: rows_tiles(). */
	if (!s->a_rows && !s->off && s->mc <= 2) {
		rows_tiles(s, eng_div_up(nc, ENG_NR));
		return;
	}
#endif
	for (j = 0; j < nc; j += ENG_NR)
		for (i = 0, tile = 0; i < s->mc; i += nr, tile++) {
			const float *ai = s->a_rows ? s->a + (__s64)i * s->a_rows :
					  s->a + (i / ENG_MR) * s->a_ps;
			const float *bj = s->b + (j / ENG_NR) * s->b_ps;
			float *c = s->acc + i * s->acc_rs + j;
			const struct eng_tile_out *o = 0;
			int scatter = 0;
			__u64 qc;

			nr = tile < nt - fives ? ENG_MR : 5;
			if (s->b_ahead && j + ENG_NR < nc && !s->a_rows)
				b_panel_ahead(s, bj + s->b_ps, tile, nt);
#ifdef ENG_FMA
			/* No line ahead: the panel's first, again. */
			pf = (const char *)bj;
			pfe = pf + 64;
			if (s->b_ahead && j + ENG_NR < nc && s->a_rows)
				b_panel_share(s, bj + s->b_ps, tile, nt, &pf,
					      &pfe);
#endif

			if (i < s->out_mc && j < s->out_nc) {
				out.y = s->out + (__s64)i * s->out_rs + (__s64)j;
				out.add = s->out_add ? s->out_add + i : 0;
				out.res = s->out_res ? s->out_res +
					  (__s64)i * s->out_res_rs + (__s64)j : 0;
				out.cadd = s->out_cadd ? s->out_cadd + j : 0;
				o = &out;
				if (s->out_wp)
					scatter = tile_padded(s, i, j, &out.y,
							      &qc);
				if (scatter) {
					buf.add = out.add;
					o = &buf;
				}
				tile_ahead(&out, s->out_res_rs, s->out_rs,
					   scatter);
			}
#ifdef ENG_FMA
			/* The last 8 columns or fewer: a 6x8 tile. */
			if (!o && !s->a_rows && s->nc - j <= 8) {
				if (s->off)
					ukernel_ind8(s->kc, ai, bj, s->off, c,
						     (__s64)s->acc_rs, s->load,
						     o);
				else
					ukernel8(s->kc, ai, bj, c,
						 (__s64)s->acc_rs, s->load, o);
				continue;
			}
#endif
#ifdef ENG_FMA
			/* The first panel's tiles: the next tile's A ahead. */
			ahead = s->a_ahead && j == 0 &&
				slice_a_ahead(s, i, tile, nt, nc, &pf, &pfe);
			if (ahead && s->off)
				ukernel_ind_pf(s->kc, ai, bj, s->off, c,
					       (__s64)s->acc_rs, s->load, o,
					       pf, pfe);
			else if (ahead)
				ukernel_pf(s->kc, ai, bj, c, (__s64)s->acc_rs,
					   s->load, o, pf, pfe);
			else if (s->off)
#else
			if (s->off)
#endif
				ukernel_ind(s->kc, ai, bj, s->off, c,
					    (__s64)s->acc_rs, s->load, o);
#ifdef ENG_FMA
			else if (s->a_rows && nr < ENG_MR)
				ukernel_rows5(s->kc, ai, s->a_rows, bj, c,
					      (__s64)s->acc_rs, s->load, o,
					      pf, pfe);
			else if (s->a_rows)
				ukernel_rows(s->kc, ai, s->a_rows, bj, c,
					     (__s64)s->acc_rs, s->load, o,
					     pf, pfe);
#endif
			else
				ukernel(s->kc, ai, bj, c, (__s64)s->acc_rs,
					s->load, o);
			if (o && s->out_fn)
				s->out_fn(s->out_arg, o->y, (__s64)(o->rsb / 4),
					  (__u64)nr, ENG_NR);
			if (scatter)
				tile_scatter(s, out.y, qc, t);
		}
}

#ifdef ENG_FMA
void vnpu_eng_slice_avx2(struct eng_slice *s)
{
	slice_run(s);
}
#endif

/* ---- operands, output and epilogue --------------------------------- */

/* t[c] += s * v[c * cs] over @len (@s: 1 adds the values as they are). */
static void epi_add(float *t, const void *v, __s64 cs, __u32 dt, float s,
		    int scaled, __u32 len)
{
	__u32 c;

	if (!cs) {
		/* One value for the run: its product once, the same bits. */
		float x = ldf(v, 0, dt);

		if (scaled)
			x = s * x;
		for (c = 0; c < len; c++)
			t[c] += x;
	} else if (dt == VNPU_DTYPE_F32 && cs == 1) {
		const float *p = v;

		if (scaled)
			for (c = 0; c < len; c++)
				t[c] += s * p[c];
		else
			for (c = 0; c < len; c++)
				t[c] += p[c];
	} else {
		for (c = 0; c < len; c++) {
			float x = ldf(v, (__s64)c * cs, dt);

			t[c] += scaled ? s * x : x;
		}
	}
}

/*
 * After the last slice: @y = act(t * alpha + beta * C + R) for the @len
 * outputs of row @i from column @col, the adds in place at @t, the
 * activation from @t to @y (which may be @t).
 */
static void epilogue_run(const struct gemm_epi *e, float *t, float *y,
			 __u64 i, __u64 col, __u32 len)
{
	__u32 c;

	if (e->alpha != 1.0f)
		for (c = 0; c < len; c++)
			t[c] *= e->alpha;
	if (e->c)
		epi_add(t, elem_at(e->c, (__s64)i * e->c_rs + (__s64)col * e->c_cs,
				   e->c_dt), e->c_cs, e->c_dt, e->beta, 1, len);
	if (e->r)
		epi_add(t, elem_at(e->r, (__s64)i * e->r_rs + (__s64)col * e->r_cs,
				   e->r_dt), e->r_cs, e->r_dt, 1.0f, 0, len);
	act_f32(e->act, t, y, len, e->avx512);
	act_bound(e->act, y, len);
}

/*
 * The epilogue on @len sums at @t, stored to row @i from column @col: f32
 * outputs straight from the activation's pass, without one more to copy
 * them (BERT's MatMul+Add+Gelu on AVX2).
 */
static void flush_run(const struct gemm_out *o, const struct gemm_epi *e,
		      float *t, __u64 i, __u64 col, __u32 len)
{
	__s64 off = (__s64)i * o->rs + (__s64)col;
	__u32 c;

	if (o->dt == VNPU_DTYPE_F32) {
		epilogue_run(e, t, (float *)o->y + off, i, col, len);
		return;
	}
	epilogue_run(e, t, t, i, col, len);
	for (c = 0; c < len; c++)
		stf(o->y, off + c, o->dt, t[c]);
}

/* act_bound() on @n floats at @y, eight lanes at a time. */
static void bound_f32(const struct vnpu_layer_act *a, float *y, __u64 n)
{
	int max = !!(a->flags & VNPU_ACT_F_MAX);
	float b = f32_of(a->beta);
	__u64 i = 0;

	if (!a->flags)
		return;
	for (; i + 8 <= n; i += 8)
		vstore(y + i, vbound(vload(y + i), vbcast(b), max));
	for (; i < n; i++)
		y[i] = F32_MAX(y[i], b, max);
}

/* The activations act_store() applies in its pass, as act_f32() does. */
static int act_plain(const struct vnpu_layer_act *a)
{
	return a->func == VNPU_ACT_IDENTITY || a->func == VNPU_ACT_RELU ||
	       a->func == VNPU_ACT_LEAKY_RELU || a->func == VNPU_ACT_CLIP ||
	       a->func == VNPU_ACT_HARD_SWISH;
}

/*
 * The tail of PLAIN_RUN(): with FMA one output at a time in lane 0 of v,
 * VF's operations without the branches a float's comparisons compile to
 * (mispredicted on outputs of either sign), and the bound; in the
 * baseline build, whose emulated vectors would take the kernel's stack
 * past its frame budget, SF of float x, the bound after (bound_f32()).
 */
#ifdef ENG_FMA
#define PLAIN_BOUND_IN 1
#define PLAIN_TAIL(VF, SF) do {						\
	v8sf v = vbcast(t[c]);						\
									\
	if (add)							\
		v = v + vbcast(a);					\
	if (res)							\
		v = v + vbcast(res[c]);					\
	y[c] = vbound_if(VF, vb, bound, max)[0];			\
} while (0)
#else
#define PLAIN_BOUND_IN 0
#define PLAIN_TAIL(VF, SF) do {						\
	float x = t[c];							\
									\
	if (add)							\
		x = x + a;						\
	if (res)							\
		x = x + res[c];						\
	y[c] = SF;							\
} while (0)
#endif

/*
 * y[c] = act((t[c] + a) + res[c]) over [c, len), each add only when there
 * is one (adding 0.0f would turn -0 into +0), then the bound if @bound:
 * the lanes as v8sf VF of v, the tail as PLAIN_TAIL().
 */
#define PLAIN_RUN(VF, SF) do {						\
	for (; c + 8 <= len; c += 8) {					\
		v8sf v = vload(t + c);					\
									\
		if (add)						\
			v = v + vbcast(a);				\
		if (res)						\
			v = v + vload(res + c);				\
		vstore(y + c, vbound_if(VF, vb, bound, max));		\
	}								\
	for (; c < len; c++)						\
		PLAIN_TAIL(VF, SF);					\
} while (0)

/*
 * @len sums at @t, plus @add[0] when set, plus the f32 residual run at
 * @res when set, through @act to the f32 outputs at @y: epilogue_run()'s
 * operations in its order, in one pass when act_plain() takes @act, else
 * the sums to @y and then the activation over @y in place (act_f32() on
 * the same run, so the same bits), never through the sums' scratch again.
 */
void act_store(float *y, const float *t, __u32 len, const float *add,
	       const float *res, const struct vnpu_layer_act *act,
	       int avx512)
{
	float a = add ? *add : 0.0f;
	float al = f32_of(act->alpha), be = f32_of(act->beta);
	int bound = PLAIN_BOUND_IN && act->flags;
	int max = !!(act->flags & VNPU_ACT_F_MAX);
	v8sf vb = vbcast(be);
	__u32 c = 0;

#ifdef ENG_FMA
	/* The same operations on 16 lanes: a bf16 layer's whole output. */
	if (avx512 && (act->func == VNPU_ACT_RELU || act->func == VNPU_ACT_HARD_SWISH ||
		       act->func == VNPU_ACT_LEAKY_RELU ||
		       act->func == VNPU_ACT_IDENTITY)) {
		vnpu_eng_plain_store_avx512(y, t, len, add, res, act);
		return;
	}
#endif
	if (!add && !res) {
		act_f32(act, t, y, len, avx512);
		bound_f32(act, y, len);
		return;
	}
	/* A bound follows an identity, Relu or LeakyRelu only (the checker's). */
	switch (act->func) {
	case VNPU_ACT_RELU:
		PLAIN_RUN(vneg_sel(v, vbcast(0.0f)), x < 0 ? 0.0f : x);
		break;
	case VNPU_ACT_LEAKY_RELU:
		PLAIN_RUN(vneg_sel(v, v * al), x < 0 ? al * x : x);
		break;
	case VNPU_ACT_CLIP:
		PLAIN_RUN(vclip(v, al, be), x < al ? al : x > be ? be : x);
		break;
	case VNPU_ACT_HARD_SWISH:
		PLAIN_RUN(vhswish(v), hswish(x));
		break;
	default:
		PLAIN_RUN(v, x);
		if (!act_plain(act))
			act_f32(act, y, y, len, avx512);
		break;
	}
	if (!PLAIN_BOUND_IN)
		bound_f32(act, y, len);
}

/* Row @r's run of @len sums from column @c to output column @col. */
void flush_seg(const struct gemm_out *o, const struct gemm_epi *e,
	       const struct gemm_flush *f, __u64 r, __u64 c, __u64 col,
	       __u32 len)
{
	float *t = f->acc + r * f->acc_rs + c;
	const float *res = 0;

	if (f->plain && e->r)
		res = (const float *)e->r + (__s64)(f->m0 + r) * e->r_rs +
		      (__s64)col;
	if (f->plain)
		act_store((float *)o->y + (__s64)(f->m0 + r) * o->rs + (__s64)col,
			  t, len, f->add ? f->add + r : 0, res, f->act,
			  e->avx512);
	else
		flush_run(o, e, t, f->m0 + r, col, len);
}

/*
 * Whether the epilogue of padded columns may run over a row's whole run
 * of sums, the padding's included, before the outputs are picked out:
 * f32 outputs, and nothing added per column (C by rows only, no
 * residual), so each output gets the same operations either way.
 */
static int flush_whole_rows(const struct gemm_out *o,
			    const struct gemm_epi *e)
{
	return o->wp && o->dt == VNPU_DTYPE_F32 && !e->r &&
	       (!e->c || !e->c_cs);
}

/*
 * The outputs of rows [r0, r1) x columns [c0, c1) of a block, row by row
 * (a row's outputs are neighbours): padded columns in runs of one output
 * row each, found from one division. Where flush_whole_rows(), a row's
 * epilogue is one pass over its sums in place, then each output row's run
 * is copied out: short output rows (a 7x7 map's) would otherwise each
 * take the epilogue's scalar tail.
 */
void block_flush(const struct gemm_out *o, const struct gemm_epi *e,
		 const struct gemm_flush *f, __u64 r0, __u64 r1,
		 __u64 c0, __u64 c1)
{
	__u64 r, c, len, row, qc, row0 = 0, qc0 = 0;
	int whole = flush_whole_rows(o, e);
	float *t, *y;

	if (c0 >= c1)
		return;
	if (o->wp) {
		row0 = (f->n0 + c0) / o->wp;
		qc0 = (f->n0 + c0) % o->wp;
	}
	for (r = r0; r < r1; r++) {
		if (!o->wp) {
			flush_seg(o, e, f, r, c0, f->n0 + c0, (__u32)(c1 - c0));
			continue;
		}
		t = f->acc + r * f->acc_rs + c0;
		y = (float *)o->y + (__s64)(f->m0 + r) * o->rs;
		if (whole && f->plain)
			act_store(t, t, (__u32)(c1 - c0), f->add ? f->add + r : 0,
				  0, f->act, e->avx512);
		else if (whole)
			epilogue_run(e, t, t, f->m0 + r, f->n0 + c0,
				     (__u32)(c1 - c0));
		for (c = c0, row = row0, qc = qc0; c < c1; c += len, row++, qc = 0) {
			len = eng_min(c1 - c, o->wp - qc);
			if (qc >= o->ow)
				continue;
			if (whole)
				copy_run_f32(y + row * o->ow + qc, t + (c - c0),
					     eng_min(len, o->ow - qc));
			else
				flush_seg(o, e, f, r, c, row * o->ow + qc,
					  (__u32)eng_min(len, o->ow - qc));
		}
	}
}

/* Rows [m0, m0 + mc) and depth [k0, k0 + kc) of a strided A, in panels. */
static void pack_a(const struct gemm_a *a, __u64 m0, __u64 mc, __u64 k0,
		   __u64 kc, float *dst)
{
	__u64 p, i, k;

	for (p = 0; p < mc; p += ENG_MR, dst += kc * ENG_MR) {
		/* Whole panels of dense f32 rows: six streams in, one out. */
		if (a->dt == VNPU_DTYPE_F32 && a->cs == 1 && p + ENG_MR <= mc) {
			const float *r0 = (const float *)a->p +
					  (__s64)(m0 + p) * a->rs + (__s64)k0;

			for (k = 0; k < kc; k++)
				for (i = 0; i < ENG_MR; i++)
					dst[k * ENG_MR + i] = r0[(__s64)i * a->rs +
								 (__s64)k];
			continue;
		}
		for (i = 0; i < ENG_MR; i++) {
			__s64 o = (__s64)(m0 + p + i) * a->rs + (__s64)k0 * a->cs;

			if (p + i >= mc) {
				for (k = 0; k < kc; k++)
					dst[k * ENG_MR + i] = 0;
				continue;
			}
			for (k = 0; k < kc; k++)
				dst[k * ENG_MR + i] = ldf(a->p, o + (__s64)k * a->cs,
							  a->dt);
		}
	}
}

/*
 * The same as rows ENG_KC apart, whole panels of them (rows past @mc
 * zero): no transposition, so the copy runs at memory speed; for the
 * AVX-512 kernels, which broadcast A at fixed offsets either way.
 */
static void pack_a_rows(const struct gemm_a *a, __u64 m0, __u64 mc, __u64 k0,
			__u64 kc, float *dst)
{
	__u64 r, k;

	for (r = 0; r < eng_div_up(mc, ENG_MR) * ENG_MR; r++, dst += ENG_KC) {
		if (r >= mc) {
			for (k = 0; k < kc; k++)
				dst[k] = 0;
			continue;
		}
		load_f32(dst, elem_at(a->p, (__s64)(m0 + r) * a->rs +
				      (__s64)k0 * a->cs, a->dt), a->cs, kc, a->dt);
	}
}

/*
 * A panel's @w columns (ENG_NR at most) of f32 B whose depth is dense
 * (@b->rs 1: B given transposed, as attention's K) from @src: 8x8 blocks
 * transposed in registers, the rest one by one; zero past @w.
 */
static void pack_b_cols(const struct gemm_b *b, const float *src, __u64 kc,
			__u64 w, float *d)
{
	__u64 k, j, kb = kc / 8 * 8, jb = w / 8 * 8;

	for (j = 0; j < jb; j += 8)
		for (k = 0; k < kb; k += 8)
			transpose8(src + (__s64)j * b->cs + (__s64)k, b->cs,
				   d + k * ENG_NR + j, ENG_NR);
	for (k = 0; k < kc; k++) {
		for (j = k < kb ? jb : 0; j < w; j++)
			d[k * ENG_NR + j] = src[(__s64)j * b->cs + (__s64)k];
		for (j = w; j < ENG_NR; j++)
			d[k * ENG_NR + j] = 0;
	}
}

/*
 * Whole panels of f32 B in dense rows (@b->cs 1), as attention's V: row by
 * row, each row's panels in one go, and the rows a few ahead asked for.
 * Panel by panel, every row's line of a panel came on its own from L3
 * (BERT's V rows are 3 KiB apart): about 80 cycles a line.
 */
static void pack_b_rows(const struct gemm_b *b, __u64 k0, __u64 kc, __u64 n0,
			__u64 np, float *dst)
{
	const float *src = (const float *)b->p + (__s64)k0 * b->rs +
			   (__s64)n0;
	__u64 k, p, l;

	for (k = 0; k < kc; k++, src += b->rs) {
		if (k + 4 < kc)
			for (l = 0; l < np; l++)
				__builtin_prefetch(src + 4 * b->rs + l * ENG_NR);
		for (p = 0; p < np; p++) {
			const float *s = src + p * ENG_NR;
			float *d = dst + (p * kc + k) * ENG_NR;

			vstore(d, vload(s));
			vstore(d + 8, vload(s + 8));
		}
	}
}

/* Depth [k0, k0 + kc) and columns [n0, n0 + nc) of a strided B. */
void gemm_pack_b(const void *arg, __u64 k0, __u64 kc, __u64 n0, __u64 nc,
		 float *dst)
{
	const struct gemm_b *b = arg;
	__u64 p = 0, k, j;

	if (b->cs == 1 && b->dt == VNPU_DTYPE_F32 && nc >= ENG_NR) {
		p = nc / ENG_NR * ENG_NR;
		pack_b_rows(b, k0, kc, n0, p / ENG_NR, dst);
		dst += p / ENG_NR * kc * ENG_NR;
	}
	for (; p < nc; p += ENG_NR, dst += kc * ENG_NR) {
		__u64 w = eng_min(ENG_NR, nc - p);

		if (b->rs == 1 && b->cs != 1 && b->dt == VNPU_DTYPE_F32) {
			pack_b_cols(b, (const float *)b->p + (__s64)k0 +
				    (__s64)(n0 + p) * b->cs, kc, w, dst);
			continue;
		}
		for (k = 0; k < kc; k++) {
			__s64 o = (__s64)(k0 + k) * b->rs + (__s64)(n0 + p) * b->cs;
			float *d = dst + k * ENG_NR;

			load_f32(d, elem_at(b->p, o, b->dt), b->cs, w, b->dt);
			for (j = w; j < ENG_NR; j++)
				d[j] = 0;
		}
	}
}

/*
 * Depth [k0, k0 + kc) of the panels of columns [n0, n0 + nc) of packed
 * f16 or bf16 B (VNPU_PACK_GEMM_B), widened: exactly the f32 panels.
 */
static void pack_b_lowp(const void *arg, __u64 k0, __u64 kc, __u64 n0,
			__u64 nc, float *dst)
{
	const struct gemm_b *b = arg;
	__u64 p;

	for (p = n0 / ENG_NR; p * ENG_NR < n0 + nc; p++, dst += kc * ENG_NR)
		widen_panel(dst, elem_at(b->p, (__s64)((p * b->k + k0) * ENG_NR),
					 b->dt), kc, ENG_NR, b->dt);
}

/* One slice with the kernels of this build (and AVX-512 when allowed). */
static void slice_dispatch(struct eng_slice *s, int avx512)
{
#ifdef ENG_FMA
	if (avx512) {
		vnpu_eng_slice_avx512(s);
		return;
	}
#endif
	slice_run(s);
}

/*
 * Whether the epilogue is at most a per-row add, a dense f32 residual and
 * an activation to f32 outputs: then the flush is one pass (two with an
 * activation act_plain() does not take: act_store()), and without the
 * residual and the activation the last slice's micro-kernels may store
 * the block's own columns. Fills @add[r] with beta * C[r] as epi_add()
 * computes it, and *@has_add.
 */
int epi_plain(const struct gemm_out *o, const struct gemm_epi *e,
	      __u64 m0, __u64 mc, float *add, int *has_add)
{
	__u64 r;

	if (o->dt != VNPU_DTYPE_F32 || e->alpha != 1.0f ||
	    (e->r && (e->r_dt != VNPU_DTYPE_F32 || e->r_cs != 1)) ||
	    (e->c && e->c_cs))
		return 0;
	*has_add = !!e->c;
	for (r = 0; e->c && r < mc; r++)
		add[r] = e->beta * ldf(e->c, (__s64)(m0 + r) * e->c_rs,
				       e->c_dt);
	return 1;
}

/*
 * Whether the last slice's micro-kernels store the epilogue of a plain
 * flush (epi_plain()) to @o themselves: a per-row add and any activation
 * on every path, and a residual too with AVX-512, and with the AVX2 tiles
 * where the columns are the outputs' own (ResNet's Conv+Add+Relu: the
 * separate flush of their sums took about 3% of resnet50 on AVX2;
 * MobileNetV3's Conv+HardSwish, YOLOv8's Conv+SiLU).
 */
static int tile_epilogue(const struct gemm_epi *e, const struct gemm_out *o,
			 int avx512)
{
#ifdef ENG_FMA
	if (!o->wp)
		return 1;
#endif
	return avx512 || !e->r;
}

/*
 * A GEMM's bias by columns that the FMA tiles of a last slice add in
 * registers (struct eng_slice's @out_cadd) for the block's columns from
 * @n0, or NULL: f32 C of one row (broadcast over Y's rows) and f32
 * outputs of their own columns, alpha and beta 1 (so beta * C[c] is
 * C[c]: the flush's bits), at most a dense f32 residual, and no
 * activation or one the tiles apply in registers (BERT's MatMul+Add and
 * MatMul+Add+Add; its MatMul+Add+Gelu, Gelu on each tile's 12 runs of
 * 32, took 1-2% longer on AVX-512 than in the flush's whole rows). The
 * AVX2 tiles spare their blocks the flush's passes over the sums, one per
 * add and one to copy them out.
 */
static const float *tile_col_add(const struct gemm_epi *e,
				 const struct gemm_out *o, __u64 n0)
{
#ifdef ENG_FMA
	if (!e->c || e->c_dt != VNPU_DTYPE_F32 || e->c_cs != 1 ||
	    e->c_rs || e->alpha != 1.0f || e->beta != 1.0f ||
	    o->dt != VNPU_DTYPE_F32 || o->wp ||
	    (e->r && (e->r_dt != VNPU_DTYPE_F32 || e->r_cs != 1)) ||
	    e->act->flags || (e->act->func != VNPU_ACT_IDENTITY &&
			      e->act->func != VNPU_ACT_RELU &&
			      e->act->func != VNPU_ACT_HARD_SWISH))
		return 0;
	return (const float *)e->c + n0;
#else
	return 0;
#endif
}

/*
 * The activation the tiles apply in registers (struct eng_slice's
 * @out_act, with its @out_alpha and @out_beta): Relu, HardSwish, and
 * LeakyRelu, Relu or none with a bound that is no NaN (openWakeWord's
 * LeakyRelu then Max(y, -0.4): a pass of act_rows_f32() over each tile's
 * outputs took 6-9% of its embedding model); or 0 when tile_act() is to.
 */
static __u64 tile_act_asm(const struct gemm_epi *e)
{
#ifdef ENG_FMA
	const struct vnpu_layer_act *a = e->act;
	__u64 bound = a->flags & VNPU_ACT_F_MAX ? ENG_TILE_MAX : ENG_TILE_MIN;

	if (!a->flags && a->func == VNPU_ACT_RELU)
		return ENG_TILE_RELU;
	if (!a->flags)
		return a->func == VNPU_ACT_HARD_SWISH ? ENG_TILE_HSWISH :
		       a->func == VNPU_ACT_LEAKY_RELU ? ENG_TILE_LEAKY : 0;
	if ((a->beta & 0x7fffffffu) > 0x7f800000u)
		return 0;
	switch (a->func) {
	case VNPU_ACT_IDENTITY:
		return bound;
	case VNPU_ACT_RELU:
		return ENG_TILE_RELU | bound;
	case VNPU_ACT_LEAKY_RELU:
		return ENG_TILE_LEAKY | bound;
	default:
		return 0;
	}
#else
	return 0;
#endif
}

/*
 * The epilogue's activation (and bound) on @rows runs of @n outputs at
 * @y, @rs floats apart, that a tile stored with the adds (struct
 * eng_slice's @out_fn, @arg the struct gemm_epi): act_store()'s
 * operations on them, so the same bits; the act_vmath() functions on
 * AVX-512 in one call.
 */
static void tile_act(const void *arg, float *y, __s64 rs, __u64 rows,
		     __u64 n)
{
	const struct gemm_epi *e = arg;

	act_rows_f32(e->act, y, rs, rows, n, e->avx512);
}

#ifdef ENG_FMA
/*
 * The activation the AVX512-BF16 12x32 tiles apply in registers besides
 * tile_act_asm()'s: SiLU and the logistic function at bf16's grade, of a
 * layer whose products run on them (ENG_ACT_BF16); or 0.
 */
static __u64 tile_act_bf16(const struct gemm_epi *e)
{
	if (e->avx512 != ENG_ACT_BF16 || e->act->flags)
		return 0;
	return e->act->func == VNPU_ACT_SILU ? ENG_TILE_SILU16 :
	       e->act->func == VNPU_ACT_SIGMOID ? ENG_TILE_SIGMOID16 : 0;
}

/*
 * The lanes such a tile left (struct eng_tile_out's @far) among @rows
 * runs of @n outputs at @y, @rs floats apart (struct eng_slice's @out_fn,
 * @arg the struct gemm_epi): as tile_act() would have given them.
 */
static void tile_act_far(const void *arg, float *y, __s64 rs, __u64 rows,
			 __u64 n)
{
	const struct gemm_epi *e = arg;

	vnpu_eng_logistic_far_avx512(e->act->func == VNPU_ACT_SILU, y, rs,
				     rows, n);
}
#endif

/*
 * The f32 slice [@k0, @k0 + @kc) of a mat-vec's row @row of @a: in place
 * where the row is dense f32, else converted into @bufs' A buffer.
 */
static const float *gemv_a_slice(const struct gemm_a *a, const void *row,
				 __u64 k0, __u64 kc,
				 const struct gemm_bufs *bufs)
{
	if (a->dt == VNPU_DTYPE_F32 && a->cs == 1)
		return (const float *)row + k0;
	load_f32(bufs->a, elem_at(row, (__s64)k0 * a->cs, a->dt), a->cs, kc,
		 a->dt);
	return bufs->a;
}

/* The epilogue of a mat-vec's row, @nc sums in @f's accumulators. */
static void gemv_flush(const struct gemm_out *o, const struct gemm_epi *e,
		       struct gemm_flush *f, __u64 nc)
{
	float add[1];
	int has_add = 0;

	f->plain = epi_plain(o, e, f->m0, 1, add, &has_add);
	f->add = has_add ? add : 0;
	f->act = e->act;
	block_flush(o, e, f, 0, 1, 0, nc);
}

/*
 * Row @m0 of a GEMM over packed B, columns [n0, n0 + nc): a mat-vec in
 * the same slices as gemm_block(), each output the same chain of FMAs as
 * a micro-kernel's, so the same bits without a tile's idle rows. Not
 * inlined: its flush would add its frame to gemm_block()'s.
 */
static __attribute__((__noinline__))
void gemv_block(const struct gemm_a *a, const struct gemm_b *b, __u64 m0,
		__u64 n0, __u64 nc, __u64 kt, const struct gemm_out *o,
		const struct gemm_epi *e, const struct gemm_bufs *bufs)
{
	struct gemm_flush f = { .acc = bufs->acc, .acc_rs = eng_acc_rs(nc),
				.m0 = m0, .n0 = n0 };
	struct eng_gemv g = { .acc = bufs->acc, .np = eng_div_up(nc, ENG_NR),
			      .b_ps = kt * ENG_NR };
	const void *row = elem_at(a->p, (__s64)m0 * a->rs, a->dt);
	__u64 k0, kstep = eng_div_up(kt, eng_div_up(kt, ENG_KC));

	for (k0 = 0; k0 < kt; k0 += g.kc) {
		g.kc = eng_min(kstep, kt - k0);
		g.load = k0 != 0;
		g.b = b->packed + (n0 / ENG_NR) * kt * ENG_NR + k0 * ENG_NR;
		g.a = gemv_a_slice(a, row, k0, g.kc, bufs);
		if (k0)
			eng_pause(bufs->ctx);
		gemv_slice(&g, bufs->avx512);
	}
	gemv_flush(o, e, &f, nc);
}

#ifdef ENG_FMA
/*
 * gemv_block() over packed bf16 weights on the AVX512-BF16 path: the row
 * rounded to bf16 pairs a slice at a time, each output the chain of
 * vdpbf16ps of a tile's row (the same bits), without the tile's five or
 * eleven idle rows. The slices start on depth pairs as gemm_block()'s.
 */
static __attribute__((__noinline__))
void gemv_bf16_block(const struct gemm_a *a, const struct gemm_b *b, __u64 m0,
		     __u64 n0, __u64 nc, __u64 kt, const struct gemm_out *o,
		     const struct gemm_epi *e, const struct gemm_bufs *bufs)
{
	struct gemm_flush f = { .acc = bufs->acc, .acc_rs = eng_acc_rs(nc),
				.m0 = m0, .n0 = n0 };
	struct eng_bf16_gemv g = { .acc = bufs->acc,
				   .np = eng_div_up(nc, ENG_NR),
				   .b_ps = kt * ENG_NR / 2,
				   .work = (__u32 *)bufs->b };
	const void *row = elem_at(a->p, (__s64)m0 * a->rs, a->dt);
	__u64 k0, kstep = eng_div_up(kt, eng_div_up(kt, ENG_KC));

	if (kstep < kt)
		kstep += kstep % 2;
	for (k0 = 0; k0 < kt; k0 += g.kc) {
		g.kc = eng_min(kstep, kt - k0);
		g.load = k0 != 0;
		g.b = (const __u32 *)(b->pairs + (n0 / ENG_NR) * kt * ENG_NR +
				      k0 * ENG_NR);
		g.a = gemv_a_slice(a, row, k0, g.kc, bufs);
		if (k0)
			eng_pause(bufs->ctx);
		vnpu_eng_gemv_bf16(&g);
	}
	gemv_flush(o, e, &f, nc);
}

#endif

/*
 * Row @m0 over packed f16 or bf16 B that widens (pack_b_lowp()): a
 * mat-vec as gemv_block(), its bits. AVX-512 widens the weights in
 * registers (vnpu_eng_gemv_lowp(): half the bytes streamed); the other
 * paths widen a slice of the block's panels into B's scratch, as the
 * tiles would, then run gemv_slice() rather than tiles of one row. The
 * slices start on depth pairs, as gemm_block()'s.
 */
static __attribute__((__noinline__))
void gemv_lowp_block(const struct gemm_a *a, const struct gemm_b *b, __u64 m0,
		     __u64 n0, __u64 nc, __u64 kt, const struct gemm_out *o,
		     const struct gemm_epi *e, const struct gemm_bufs *bufs)
{
	struct gemm_flush f = { .acc = bufs->acc, .acc_rs = eng_acc_rs(nc),
				.m0 = m0, .n0 = n0 };
	struct eng_gemv g = { .acc = bufs->acc, .np = eng_div_up(nc, ENG_NR) };
	const void *row = elem_at(a->p, (__s64)m0 * a->rs, a->dt);
	__u64 k0, kstep = eng_div_up(kt, eng_div_up(kt, ENG_KC));

	if (kstep < kt)
		kstep += kstep % 2;
	for (k0 = 0; k0 < kt; k0 += g.kc) {
		g.kc = eng_min(kstep, kt - k0);
		g.load = k0 != 0;
		g.a = gemv_a_slice(a, row, k0, g.kc, bufs);
		if (k0)
			eng_pause(bufs->ctx);
#ifdef ENG_FMA
		if (bufs->avx512) {
			struct eng_lowp_gemv w = {
				.a = g.a, .acc = g.acc, .kc = g.kc, .np = g.np,
				.b_ps = b->k * ENG_NR, .dt = b->dt,
				.load = g.load,
				.b = elem_at(b->p, (__s64)(((n0 / ENG_NR) * b->k +
							    k0) * ENG_NR), b->dt),
			};

			vnpu_eng_gemv_lowp(&w);
			continue;
		}
#endif
		pack_b_lowp(b, k0, g.kc, n0, nc, bufs->b);
		g.b = bufs->b;
		g.b_ps = g.kc * ENG_NR;
		gemv_slice(&g, bufs->avx512);
	}
	gemv_flush(o, e, &f, nc);
}

#ifdef ENG_FMA
/*
 * The depth slice of @s with the AVX512-BF16 kernels: the packed bf16
 * weights in place, the activations rounded to bf16 pairs on the way (a
 * GEMM's A rows in B's unused room, a CONV's B a column pair at a time
 * from the window or the im2col panels, in A's). With @s->out the last
 * slice's whole tiles store through the epilogue (@s->out_mc, @s->out_nc).
 */
static void slice_bf16(const struct gemm_a *a, const struct gemm_b *b,
		       struct eng_slice *s, __u64 m0, __u64 n0, __u64 k0,
		       __u64 kt, const struct gemm_bufs *bufs)
{
	struct eng_bf16_slice t = { .kc = s->kc, .mc = s->mc, .nc = s->nc,
				    .acc = s->acc, .acc_rs = s->acc_rs,
				    .load = s->load, .out = s->out ? s : 0 };
	__u32 *tail = (__u32 *)bufs->b, *room = eng_align(tail + ENG_GEMM_MC);

	if (b->pairs) {
		if (a->dt == VNPU_DTYPE_F32 && a->cs == 1) {
			vnpu_eng_bf16_pack_a((const float *)a->p +
					     (__s64)m0 * a->rs + (__s64)k0,
					     a->rs, s->mc, s->kc, room, tail);
		} else {
			pack_a_rows(a, m0, s->mc, k0, s->kc, bufs->a);
			vnpu_eng_bf16_pack_a(bufs->a, ENG_KC, s->mc, s->kc,
					     room, tail);
		}
		t.a = room;
		t.a_ps = ENG_MR * ENG_BF16_ARS;
		t.a_rows = 1;
		t.a_tail = tail;
		t.b = (const __u32 *)(b->pairs + (n0 / ENG_NR) * kt * ENG_NR +
				      k0 * ENG_NR);
		t.b_ps = kt * ENG_NR / 2;
		t.work = eng_align(room + ENG_GEMM_MC * ENG_KC / 2);
	} else {
		t.a = (const __u32 *)(a->pairs + m0 * kt + k0 * ENG_MR);
		t.a_ps = kt * ENG_MR / 2;
		if (b->off) {
			t.fb = b->win + n0;
			t.off = b->off + k0;
			t.bc = b->bc ? b->bc + (k0 / 2) * ENG_NR : 0;
			t.bc_ps = b->bc_ps;
			t.edges = b->edges;
			t.e_q0 = n0;
			t.e_k0 = k0;
			if (b->bc && !b->bc_fill)
				t.fb = 0;
		} else {
			b->pack(b->arg, k0, s->kc, n0, s->nc, bufs->b);
			t.fb = bufs->b;
			t.fb_ps = s->kc * ENG_NR;
		}
		t.work = (__u32 *)bufs->a;
	}
	vnpu_eng_slice_bf16(&t);
}

/*
 * gemv_block() over packed f16 weights on the AVX512-FP16 path: the row
 * rounded to f16 a slice at a time (the slices of gemm_block()), each
 * output the chains of a tile's row (the same bits), without the tile's
 * five or eleven idle rows.
 */
static __attribute__((__noinline__))
void gemv_f16_block(const struct gemm_a *a, const struct gemm_b *b, __u64 m0,
		    __u64 n0, __u64 nc, __u64 kt, const struct gemm_out *o,
		    const struct gemm_epi *e, const struct gemm_bufs *bufs)
{
	struct gemm_flush f = { .acc = bufs->acc, .acc_rs = eng_acc_rs(nc),
				.m0 = m0, .n0 = n0 };
	__u16 *row16 = (__u16 *)bufs->b;
	struct eng_f16_gemv g = { .acc = bufs->acc, .a = row16,
				  .np = eng_div_up(nc, ENG_NR),
				  .b_ps = kt * ENG_NR };
	const void *row = elem_at(a->p, (__s64)m0 * a->rs, a->dt);
	__u64 k0, kstep = eng_div_up(kt, eng_div_up(kt, ENG_KC));

	for (k0 = 0; k0 < kt; k0 += g.kc) {
		g.kc = eng_min(kstep, kt - k0);
		g.load = k0 != 0;
		g.b = b->h16 + (n0 / ENG_NR) * kt * ENG_NR + k0 * ENG_NR;
		vnpu_eng_f16_pack_a(gemv_a_slice(a, row, k0, g.kc, bufs), 0, 1,
				    g.kc, row16);
		if (k0)
			eng_pause(bufs->ctx);
		vnpu_eng_gemv_f16(&g);
	}
	gemv_flush(o, e, &f, nc);
}

/*
 * The depth slice of @s with the AVX512-FP16 kernels: the packed f16
 * weights in place, the activations rounded to f16 on the way (a GEMM's
 * A rows in B's room, a CONV's B a column pair at a time from the window
 * or the im2col panels). The sums go to the accumulator; the flush
 * applies the epilogue.
 */
static void slice_f16(const struct gemm_a *a, const struct gemm_b *b,
		      struct eng_slice *s, __u64 m0, __u64 n0, __u64 k0,
		      __u64 kt, const struct gemm_bufs *bufs)
{
	struct eng_f16_slice t = { .kc = s->kc, .mc = s->mc, .nc = s->nc,
				   .acc = s->acc, .acc_rs = s->acc_rs,
				   .load = s->load };
	__u16 *room = (__u16 *)bufs->b;

	if (b->h16) {
		if (a->dt == VNPU_DTYPE_F32 && a->cs == 1) {
			vnpu_eng_f16_pack_a((const float *)a->p +
					    (__s64)m0 * a->rs + (__s64)k0,
					    a->rs, s->mc, s->kc, room);
		} else {
			pack_a_rows(a, m0, s->mc, k0, s->kc, bufs->a);
			vnpu_eng_f16_pack_a(bufs->a, ENG_KC, s->mc, s->kc, room);
		}
		t.a = room;
		t.a_ps = ENG_MR * ENG_F16_ARS;
		t.a_rows = 1;
		t.b = b->h16 + (n0 / ENG_NR) * kt * ENG_NR + k0 * ENG_NR;
		t.b_ps = kt * ENG_NR;
		t.work = eng_align(room + ENG_GEMM_MC * ENG_F16_ARS);
	} else {
		t.a = a->h16 + m0 * kt + k0 * ENG_MR;
		t.a_ps = kt * ENG_MR;
		if (b->off) {
			t.fb = b->win + n0;
			t.off = b->off + k0;
		} else {
			b->pack(b->arg, k0, s->kc, n0, s->nc, bufs->b);
			t.fb = bufs->b;
			t.fb_ps = s->kc * ENG_NR;
		}
		t.work = (__u16 *)bufs->a;
	}
	s->out_mc = 0;
	s->out_nc = 0;
	vnpu_eng_slice_f16(&t);
}
#endif

#ifdef ENG_FMA
/*
 * The slice @s of rows [@m0, @m0 + @s->mc) and depth from @k0 of a dense
 * f32 A, B in panels: the tiles of whole panels (pairs of them for
 * AVX-512) read A in place (no copy), the rows past them from @buf,
 * packed (a tile reads whole panels, and A may end before the last one
 * does); on AVX2 all rows in place where 5-row tiles can take those
 * (rows_fives()). The same FMAs in the same order either way: the same
 * bits.
 */
static void slice_a_in_place(struct eng_slice *s, const struct gemm_a *a,
			     __u64 m0, __u64 k0, float *buf, int avx512)
{
	__u64 mc = s->mc, mr = (avx512 ? 2 : 1) * ENG_MR;
	__u64 whole = mc / mr * mr, first_mc = 0, first_nc = 0;
	struct eng_slice t = *s;

	if (!avx512 && !s->out_wp && rows_fives(mc))
		whole = mc;
	if (whole) {
		s->a = (const float *)a->p + (__s64)m0 * a->rs + (__s64)k0;
		s->a_rows = a->rs;
		s->a_ps = ENG_MR * a->rs;
		s->mc = whole;
		slice_dispatch(s, avx512);
		s->mc = mc;
		first_mc = s->out_mc;
		first_nc = s->out_nc;
	}
	if (whole == mc)
		return;
	if (avx512) {
		pack_a_rows(a, m0 + whole, mc - whole, k0, s->kc, buf);
		t.a_rows = ENG_KC;
		t.a_ps = ENG_MR * ENG_KC;
	} else {
		pack_a(a, m0 + whole, mc - whole, k0, s->kc, buf);
		t.a_rows = 0;
		t.a_ps = s->kc * ENG_MR;
	}
	t.a = buf;
	t.mc = mc - whole;
	t.acc += whole * t.acc_rs;
	if (t.out) {
		t.out += (__s64)whole * t.out_rs;
		t.out_add = t.out_add ? t.out_add + whole : 0;
		t.out_res = t.out_res ? t.out_res + (__s64)whole * t.out_res_rs :
					0;
	}
	slice_dispatch(&t, avx512);
	/* The first part stored all its rows when it stored any. */
	s->out_mc = first_mc + t.out_mc;
	s->out_nc = whole ? first_nc : t.out_nc;
}

/*
 * Whether the tiles read dense f32 A's rows in place. Not the AVX-512
 * ones where the rows are a multiple of 4 KiB apart: their twelve rows'
 * cache lines then fall in one set of an L1 whose ways are 4 KiB, more
 * lines than it has ways, and they miss every time (BERT's 3072-deep
 * output projection ran at 87% of the FMA peak on Zen 4 in place, 91%
 * with A packed a slice at a time; the AVX2 tiles' six rows fit).
 */
static int a_in_place(const struct gemm_a *a, const struct gemm_b *b,
		      int avx512)
{
	return !a->packed && !a->pack && !b->off && a->dt == VNPU_DTYPE_F32 &&
	       a->cs == 1 && !(avx512 && a->rs % (4096 / sizeof(float)) == 0);
}
#endif

/*
 * Output block [m0, m0 + mc) x [n0, n0 + nc) of a depth-@kt product,
 * summed in @bufs->acc and stored through the epilogue after the last
 * slice, or by the last slice's micro-kernels when it fuses.
 */
void gemm_block(const struct gemm_a *a, const struct gemm_b *b,
		__u64 m0, __u64 mc, __u64 n0, __u64 nc, __u64 kt,
		const struct gemm_out *o, const struct gemm_epi *e,
		const struct gemm_bufs *bufs)
{
	struct eng_slice s = {};
	struct gemm_flush f = { .acc = bufs->acc, .acc_rs = eng_acc_rs(nc),
				.m0 = m0, .n0 = n0 };
	const float *cadd = tile_col_add(e, o, n0);
	__u64 k0 = 0, kstep;
	float add[ENG_GEMM_MC];
	int fuse, has_add = 0;
	/* Dense f32 A, B in panels: the FMA tiles read A in place. */
#ifdef ENG_FMA
	int in_place = a_in_place(a, b, bufs->avx512);
	int bf16 = bufs->bf16 && (a->pairs || b->pairs);
	int f16 = bufs->f16 && (a->h16 || b->h16);
#else
	int in_place = 0;
#endif

	/* One row over packed B (a batch of one): a mat-vec. */
	if (mc == 1 && kt && b->packed && !a->packed && !a->pack) {
		gemv_block(a, b, m0, n0, nc, kt, o, e, bufs);
		return;
	}
#ifdef ENG_FMA
	if (mc == 1 && kt && bufs->bf16 && b->pairs && !a->packed && !a->pack) {
		gemv_bf16_block(a, b, m0, n0, nc, kt, o, e, bufs);
		return;
	}
	if (mc == 1 && kt && bufs->f16 && b->h16 && !a->packed && !a->pack) {
		gemv_f16_block(a, b, m0, n0, nc, kt, o, e, bufs);
		return;
	}
#endif
	if (mc == 1 && kt && b->pack == pack_b_lowp && !a->packed && !a->pack) {
		gemv_lowp_block(a, b, m0, n0, nc, kt, o, e, bufs);
		return;
	}

	f.plain = epi_plain(o, e, m0, mc, add, &has_add);
	f.add = has_add ? add : 0;
	f.act = e->act;
	/*
	 * Padded columns: output rows at least a tile wide, so that a tile's
	 * columns reach at most two of them.
	 */
	fuse = kt && (f.plain || cadd) && tile_epilogue(e, o, bufs->avx512) &&
	       (!o->wp || o->ow >= (bufs->avx512 ? 2 : 1) * ENG_NR);
	s.mc = mc;
	s.nc = nc;
	s.acc = bufs->acc;
	s.acc_rs = eng_acc_rs(nc);
	/* Even slices of at most ENG_KC (ENG_GEMM_KC_AVX2). */
	kstep = eng_div_up(kt, eng_div_up(kt ? kt : 1,
					  b->packed && !bufs->avx512 ?
					  ENG_GEMM_KC_AVX2 : ENG_KC));
	/* Deep enough for several slices anyway: B's own most depth. */
	if (b->kc && !bufs->avx512 && kt > ENG_KC)
		kstep = eng_div_up(kt, eng_div_up(kt, b->kc));
	/* Packed bf16 weights: slices start on a depth pair. */
	if ((a->pairs || b->pairs) && kstep < kt)
		kstep += kstep % 2;
	if (!kt) {
		/* No depth: every sum is zero. */
		__u64 i;

		for (i = 0; i < eng_div_up(mc, ENG_MR) * ENG_MR * s.acc_rs; i++)
			s.acc[i] = 0;
	}
	while (k0 < kt) {
		s.kc = eng_min(kstep, kt - k0);
		s.load = k0 != 0;
		if (fuse && k0 + s.kc == kt) {
			s.out = (float *)o->y + (__s64)m0 * o->rs +
				(__s64)(o->wp ? 0 : n0);
			s.out_rs = o->rs;
			s.out_wp = o->wp;
			s.out_ow = o->ow;
			s.out_q0 = n0;
			s.out_add = has_add ? add : 0;
			s.out_cadd = cadd;
			s.out_act = tile_act_asm(e);
			s.out_alpha = e->act->alpha;
			s.out_beta = e->act->beta;
			if (!s.out_act && (e->act->func != VNPU_ACT_IDENTITY ||
					   e->act->flags)) {
				s.out_fn = tile_act;
				s.out_arg = e;
			}
#ifdef ENG_FMA
			if (bf16 && tile_act_bf16(e)) {
				s.out_act = tile_act_bf16(e);
				s.out_fn = tile_act_far;
			}
#endif
			if (e->r) {
				s.out_res = (const float *)e->r +
					    (__s64)m0 * e->r_rs +
					    (__s64)(o->wp ? 0 : n0);
				s.out_res_rs = e->r_rs;
			}
		}
#ifdef ENG_FMA
		if (bf16) {
			slice_bf16(a, b, &s, m0, n0, k0, kt, bufs);
			goto next;
		}
		if (f16) {
			slice_f16(a, b, &s, m0, n0, k0, kt, bufs);
			goto next;
		}
#endif
		s.a_rows = 0;
		s.a_next = 0;
		if (a->packed) {
			s.a = a->packed + (m0 / ENG_MR) * a->k * ENG_MR +
			      k0 * ENG_MR;
			s.a_ps = a->k * ENG_MR;
			s.a_next = k0 + s.kc < kt ? s.a + s.kc * ENG_MR :
				   a->next;
			s.a_ahead = 1;
		} else if (a->pack) {
			a->pack(a->arg, m0, mc, k0, s.kc, bufs->a);
			s.a = bufs->a;
			s.a_ps = s.kc * ENG_MR;
		} else if (in_place) {
			/* slice_a_in_place() takes A. */
		} else if (bufs->avx512) {
			pack_a_rows(a, m0, mc, k0, s.kc, bufs->a);
			s.a = bufs->a;
			s.a_ps = ENG_MR * ENG_KC;
			s.a_rows = ENG_KC;
		} else {
			pack_a(a, m0, mc, k0, s.kc, bufs->a);
			s.a = bufs->a;
			s.a_ps = s.kc * ENG_MR;
		}
		s.off = 0;
		if (b->packed) {
			s.b = b->packed + (n0 / ENG_NR) * kt * ENG_NR +
			      k0 * ENG_NR;
			s.b_ps = kt * ENG_NR;
			s.b_next = k0 + s.kc < kt ? s.b + s.kc * ENG_NR : 0;
			s.b_ahead = 1;
		} else if (b->off) {
			s.b = b->win + n0;
			s.b_ps = ENG_NR;
			s.off = b->off + k0;
		} else {
			b->pack(b->arg, k0, s.kc, n0, nc, bufs->b);
			s.b = bufs->b;
			s.b_ps = s.kc * ENG_NR;
		}
#ifdef ENG_FMA
		if (in_place) {
			slice_a_in_place(&s, a, m0, k0, bufs->a, bufs->avx512);
			goto next;
		}
#endif
		slice_dispatch(&s, bufs->avx512);
#ifdef ENG_FMA
next:
#endif
		k0 += s.kc;
		/* The sums so far are in scratch: vnpu.ko may pause here. */
		if (k0 < kt)
			eng_pause(bufs->ctx);
	}
	/* What the micro-kernels did not store: the right, then the bottom. */
	block_flush(o, e, &f, 0, s.out_mc, s.out_nc, nc);
	block_flush(o, e, &f, s.out_mc, mc, 0, nc);
}

/*
 * Splits scratch into the A slice, the block accumulator and B, for the
 * units @u of this path (as vnpu_eng_layer_scratch() sized it).
 */
static void gemm_scratch(const struct vnpu_eng_ctx *ctx, int need_a,
			 const struct eng_unit *u, struct gemm_bufs *bufs)
{
	char *p = eng_align(ctx->scratch);
	struct eng_unit blk;

	/* The AVX-512 kernels extend the FMA build only. */
#ifdef ENG_FMA
	bufs->avx512 = !!(ctx->features & VNPU_ENG_F_AVX512);
	bufs->bf16 = eng_bf16_path(ctx->features);
	bufs->f16 = eng_f16_path(ctx->features);
#else
	bufs->avx512 = 0;
	bufs->bf16 = 0;
	bufs->f16 = 0;
#endif
	bufs->ctx = ctx;
	eng_scratch_block(ctx->features, u, &blk);
	bufs->a = 0;
	if (need_a) {
		bufs->a = (float *)p;
		p = eng_align(p + blk.rows * ENG_KC * 4);
	}
	bufs->acc = (float *)p;
	p = eng_align(p + blk.rows * eng_acc_rs(blk.cols) * 4);
	bufs->b = (float *)p;
}

/* ---- GEMM ------------------------------------------------------------ */

/* Offset of batch @b (over Y's leading dims) in @t, right-aligned. */
__s64 batch_offset(const struct vnpu_cmd_tensor *t,
		   const struct vnpu_cmd_tensor *y, __u64 b)
{
	__s64 off = 0;
	int d;

	for (d = (int)y->rank - 3; d >= 0; d--) {
		__u64 coord = b % y->dims[d];
		int ti = d - ((int)y->rank - (int)t->rank);

		b /= y->dims[d];
		if (ti >= 0 && t->dims[ti] != 1)
			off += (__s64)coord * t->strides[ti];
	}
	return off;
}

/* The stride of @t along Y's dim @yd (right-aligned), 0 if broadcast. */
static __s64 bstride(const struct vnpu_cmd_tensor *t, const struct vnpu_cmd_tensor *y,
		     __u32 yd)
{
	int ti = (int)yd - ((int)y->rank - (int)t->rank);

	return ti >= 0 && t->dims[ti] != 1 ? t->strides[ti] : 0;
}

/* Element @off of tensor @i of @l, in its own element type. */
static const void *tensor_at(const struct eng_layer *l, __u32 i, __s64 off)
{
	return elem_at(l->data[i], off, l->t[i].dtype);
}

int run_gemm(const struct eng_layer *l, __u64 ub, __u64 ue,
	     const struct vnpu_eng_ctx *ctx)
{
	const struct vnpu_layer_gemm *at = l->attrs;
	const struct vnpu_cmd_tensor *y = &l->t[l->n - 1], *ta = &l->t[0];
	const struct vnpu_cmd_tensor *tb = &l->t[1];
	__u64 batch, m, n, k, mb, nb, u;
	struct eng_unit unit;
	struct gemm_epi e = {};
	struct gemm_a a = {};
	struct gemm_b b = {};
	struct gemm_out o = {};
	struct gemm_bufs bufs;
	__u32 ci = eng_opt_index(at->flags, VNPU_LAYER_F_BIAS);
	__u32 ri = eng_opt_index(at->flags, VNPU_LAYER_F_RESIDUAL);

	eng_gemm_shape(l, &batch, &m, &n, &k);
	eng_gemm_unit(m, n, k, ctx->features, &unit);
	mb = eng_div_up(m, unit.rows);
	nb = eng_div_up(n, unit.cols);
	gemm_scratch(ctx, 1, &unit, &bufs);
	/*
	 * f32 B on a core that halves zmm: the AVX2 tiles, the faster there
	 * (vnpu_eng_half_zmm()); a row alone keeps the 16-lane mat-vec.
	 */
	if ((ctx->features & VNPU_ENG_F_HALF_ZMM) && m > 1 &&
	    tb->dtype == VNPU_DTYPE_F32)
		bufs.avx512 = 0;
	e.alpha = f32_of(at->alpha);
	e.beta = f32_of(at->beta);
	e.act = &at->act;
	e.avx512 = eng_act_avx512(ctx);
	a.rs = ta->strides[ta->rank - 2];
	a.cs = ta->strides[ta->rank - 1];
	a.dt = ta->dtype;
	a.k = k;
	b.dt = tb->dtype;
	b.arg = &b;
	if (!(at->flags & VNPU_LAYER_F_PACKED)) {
		b.rs = tb->strides[tb->rank - 2];
		b.cs = tb->strides[tb->rank - 1];
		b.pack = gemm_pack_b;
	} else if (tb->dtype != VNPU_DTYPE_F32) {
		b.pack = pack_b_lowp;
		b.p = l->data[1];
		if (tb->dtype == VNPU_DTYPE_BF16)
			b.pairs = l->data[1];
		if (tb->dtype == VNPU_DTYPE_F16)
			b.h16 = l->data[1];
	}
	b.n = n;
	b.k = k;
	/* Its products in bf16: SiLU at bf16's grade too (ENG_ACT_BF16). */
	if (bufs.bf16 && b.pairs)
		e.avx512 = ENG_ACT_BF16;
	o.rs = y->strides[y->rank - 2];
	o.dt = y->dtype;
	if (at->flags & VNPU_LAYER_F_BIAS) {
		e.c_rs = bstride(&l->t[ci], y, y->rank - 2);
		e.c_cs = bstride(&l->t[ci], y, y->rank - 1);
		e.c_dt = l->t[ci].dtype;
	}
	if (at->flags & VNPU_LAYER_F_RESIDUAL) {
		e.r_rs = bstride(&l->t[ri], y, y->rank - 2);
		e.r_cs = bstride(&l->t[ri], y, y->rank - 1);
		e.r_dt = l->t[ri].dtype;
	}
	for (u = ub; u < ue; u++) {
		__u64 bi = u / (mb * nb), mi = (u / nb) % mb, ni = u % nb;

		a.p = tensor_at(l, 0, batch_offset(ta, y, bi));
		if (eng_packed_f32(at->flags, tb))
			b.packed = l->data[1];
		else if (!(at->flags & VNPU_LAYER_F_PACKED))
			b.p = tensor_at(l, 1, batch_offset(tb, y, bi));
		o.y = elem_at_w(l->data[l->n - 1], batch_offset(y, y, bi),
				y->dtype);
		if (at->flags & VNPU_LAYER_F_BIAS)
			e.c = tensor_at(l, ci, batch_offset(&l->t[ci], y, bi));
		if (at->flags & VNPU_LAYER_F_RESIDUAL)
			e.r = tensor_at(l, ri, batch_offset(&l->t[ri], y, bi));
		gemm_block(&a, &b, mi * unit.rows,
			   eng_min(unit.rows, m - mi * unit.rows),
			   ni * unit.cols, eng_min(unit.cols, n - ni * unit.cols),
			   k, &o, &e, &bufs);
	}
	return 0;
}

/* ---- CONV ------------------------------------------------------------ */

/**
 * struct conv_job - one image and group of a convolution
 * @s: the shape
 * @l: the layer
 * @g: the group
 * @at: the attributes
 * @x: the image's input channels of the group (of @dt)
 * @dt: the input's element type
 * @xs: input strides (c, h, w) in elements
 */
struct conv_job {
	struct eng_conv_shape s;
	const struct eng_layer *l;
	__u64 g;
	const struct vnpu_layer_conv *at;
	const void *x;
	__u32 dt;
	__s64 xs[3];
};

/*
 * The 8x8 block of floats at @src, rows @rs floats apart, transposed into
 * @d, rows @ds floats apart: d[t * ds + j] = src[j * rs + t].
 */
void transpose8(const float *src, __s64 rs, float *d, __s64 ds)
{
	v8sf r[8];
	int i;

	for (i = 0; i < 8; i++)
		r[i] = vload(src + i * rs);
	vtranspose8(r);
	for (i = 0; i < 8; i++)
		vstore(d + i * ds, r[i]);
}

/*
 * Row k of im2col's panel at @d for the 16 outputs from @q, the tap at
 * input offsets (@hoff, @woff) of channel @xc: zero where a tap falls in
 * the padding or an output past the last.
 */
static void im2col_row(const struct conv_job *cj, const void *xc, __s64 hoff,
		       __s64 woff, __u64 q, float *d)
{
	const struct eng_conv_shape *s = &cj->s;
	const struct vnpu_layer_conv *at = cj->at;
	__u64 oh = q / s->ow, ow = q % s->ow, np = s->oh * s->ow, j;
	__u64 m = q < np ? eng_min(ENG_NR, np - q) : 0;
	__s64 ih0 = (__s64)oh * at->stride[0] + hoff;
	__s64 iw0 = (__s64)ow * at->stride[1] + woff;

	/*
	 * A panel whose m outputs (the rest past the last) lie in one output
	 * row with all their f32 taps inside the input: a strided read.
	 */
	if (cj->dt == VNPU_DTYPE_F32 && m && ow + m <= s->ow &&
	    ih0 >= 0 && ih0 < (__s64)s->h && iw0 >= 0 &&
	    iw0 + (__s64)((m - 1) * at->stride[1]) < (__s64)s->w) {
		const float *src = (const float *)xc + ih0 * cj->xs[1] +
				   iw0 * cj->xs[2];
		__s64 step = (__s64)at->stride[1] * cj->xs[2];

		for (j = 0; j < m; j++)
			d[j] = src[(__s64)j * step];
		for (; j < ENG_NR; j++)
			d[j] = 0;
		return;
	}
	for (j = 0; j < ENG_NR; j++, q++) {
		__s64 ih = (__s64)oh * at->stride[0] + hoff;
		__s64 iw = (__s64)ow * at->stride[1] + woff;

		d[j] = q < np && ih >= 0 && ih < (__s64)s->h && iw >= 0 &&
		       iw < (__s64)s->w ?
		       ldf(xc, ih * cj->xs[1] + iw * cj->xs[2], cj->dt) : 0;
		if (++ow == s->ow) {
			ow = 0;
			oh++;
		}
	}
}

/*
 * Rows [k, k + 8) of the panel at @d (rows ENG_NR apart) for the 16
 * outputs from @q, taps kw..kw + 7 of one f32 row that are neighbours in
 * the input (tap kw + t at input column iw + t): where the 16 outputs lie
 * in one output row with all their taps inside the input, two transposes
 * of their runs of 8 (a long 1-D window, an STFT's); else row by row.
 */
static void im2col_rows8(const struct conv_job *cj, const float *xc,
			 __s64 hoff, __s64 woff, __u64 q, float *d)
{
	const struct eng_conv_shape *s = &cj->s;
	const struct vnpu_layer_conv *at = cj->at;
	__u64 oh = q / s->ow, ow = q % s->ow, t;
	__s64 ih = (__s64)oh * at->stride[0] + hoff;
	__s64 iw = (__s64)ow * at->stride[1] + woff, rs = at->stride[1];

	if (q + ENG_NR > s->oh * s->ow || ow + ENG_NR > s->ow || ih < 0 ||
	    ih >= (__s64)s->h || iw < 0 ||
	    iw + 7 + (__s64)(ENG_NR - 1) * rs >= (__s64)s->w) {
		for (t = 0; t < 8; t++)
			im2col_row(cj, xc, hoff, woff + (__s64)t, q, d + t * ENG_NR);
		return;
	}
	transpose8(xc + ih * cj->xs[1] + iw, rs, d, ENG_NR);
	transpose8(xc + ih * cj->xs[1] + iw + 8 * rs, rs, d + 8, ENG_NR);
}

/* im2col: B(k, p) = x[c][oh * sh - ph + kh * dh][ow * sw - pw + kw * dw]. */
static void pack_im2col(const void *arg, __u64 k0, __u64 kc, __u64 n0,
			__u64 nc, float *dst)
{
	const struct conv_job *cj = arg;
	const struct eng_conv_shape *s = &cj->s;
	const struct vnpu_layer_conv *at = cj->at;
	__u64 k, p, khw = s->kh * s->kw;

	for (k = 0; k < kc; k++) {
		__u64 kk = k0 + k, c = kk / khw, kh = (kk % khw) / s->kw;
		__u64 kw = kk % s->kw;
		const void *xc = elem_at(cj->x, (__s64)c * cj->xs[0], cj->dt);
		__s64 hoff = (__s64)(kh * at->dilation[0]) - at->pad_begin[0];
		__s64 woff = (__s64)(kw * at->dilation[1]) - at->pad_begin[1];
		/* Eight taps side by side in a dense f32 row. */
		int run8 = cj->dt == VNPU_DTYPE_F32 && cj->xs[2] == 1 &&
			   at->dilation[1] == 1 && kw + 8 <= s->kw && k + 8 <= kc;

		for (p = 0; p < nc; p += ENG_NR) {
			float *d = dst + (p / ENG_NR) * kc * ENG_NR + k * ENG_NR;

			if (run8)
				im2col_rows8(cj, xc, hoff, woff, n0 + p, d);
			else
				im2col_row(cj, xc, hoff, woff, n0 + p, d);
		}
		if (run8)
			k += 7;
	}
}

/* Output extent [lo, hi) whose input column ow * s + off lies in [0, n). */
void valid_span(__s64 off, __u64 s, __u64 n, __u64 out, __u64 *lo,
		__u64 *hi)
{
	__s64 l = off >= 0 ? 0 : (-off + (__s64)s - 1) / (__s64)s;
	__s64 h = (__s64)n - 1 - off < 0 ? 0 :
		  ((__s64)n - 1 - off) / (__s64)s + 1;

	*lo = eng_min((__u64)l, out);
	*hi = eng_min((__u64)h, out);
	if (*hi < *lo)
		*hi = *lo;
}

/*
 * Both column phases of a dense f32 row of stride 2 in one pass: padded
 * column 2x + pw (input column 2x + pw - @pb, zero outside [0, @w)) to
 * @d[pw][x], x in [0, @wq); eight x at a time where their 16 inputs lie
 * inside the row. Without @d1, phase 0 alone.
 */
static void conv_window_row2_f32(const float *row, __u64 w, __u64 pb,
				 __u64 wq, float *d0, float *d1)
{
	__u64 x = 0, pw;
	__s64 i;

	for (; x < wq; x++) {
		i = (__s64)(2 * x) - (__s64)pb;
		if (i >= 0 && i + 16 <= (__s64)w)
			break;
		for (pw = 0; pw < (d1 ? 2 : 1); pw++)
			(pw ? d1 : d0)[x] = i + (__s64)pw >= 0 &&
					    i + (__s64)pw < (__s64)w ?
					    row[i + (__s64)pw] : 0;
	}
	for (; x + 8 <= wq && 2 * x + 16 <= w + pb; x += 8) {
		v8sf a = vload(row + 2 * x - pb), b = vload(row + 2 * x - pb + 8);

		vstore(d0 + x, __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10,
						       12, 14));
		if (d1)
			vstore(d1 + x, __builtin_shufflevector(a, b, 1, 3, 5, 7,
							       9, 11, 13, 15));
	}
	for (; x < wq; x++) {
		i = (__s64)(2 * x) - (__s64)pb;
		d0[x] = i >= 0 && i < (__s64)w ? row[i] : 0;
		if (d1)
			d1[x] = i + 1 >= 0 && i + 1 < (__s64)w ? row[i + 1] : 0;
	}
}

/*
 * Whether a kernel tap of @k taps @dil apart reads stride phase @ph of
 * @s (conv_offsets()): a 1x1 convolution of stride 2 reads one plane of
 * four.
 */
static int phase_read(__u64 ph, __u64 k, __u32 dil, __u64 s)
{
	__u64 i;

	for (i = 0; i < k && i < s; i++)
		if (i * dil % s == ph)
			return 1;
	return 0;
}

/*
 * Whether the taps of @cj read one stride-phase plane, (0, 0): a 1x1
 * convolution of stride 2 (ResNet's downsampling) or a dilation the
 * stride divides. Its window holds that plane alone per channel, which is
 * all it copies: the other three of stride 2 would only be zeroed.
 */
static int conv_one_plane(const struct conv_job *cj)
{
	const struct vnpu_layer_conv *at = cj->at;
	__u64 p;

	for (p = 1; p < at->stride[0]; p++)
		if (phase_read(p, cj->s.kh, at->dilation[0], at->stride[0]))
			return 0;
	for (p = 1; p < at->stride[1]; p++)
		if (phase_read(p, cj->s.kw, at->dilation[1], at->stride[1]))
			return 0;
	return 1;
}

/*
 * The stride-phase planes of channel @c for padded rows [@r0, @r0 + @rows)
 * of each into @d (plane (ph, pw) at (ph * sw + pw) * @plane): row r of
 * plane (ph, pw) is padded input row r * sh + ph, its columns pw, pw +
 * sw, ...; rows in the padding are zeros. Each column phase's run inside
 * the input is found once, not per row. Planes no tap reads are not
 * copied (conv_window() zeroes them once): only columns the tiles drop
 * read them. With @one, the taps read one plane (conv_one_plane()), which
 * goes to @d alone.
 */
static void conv_window_phased(const struct conv_job *cj, __u64 c, __u64 r0,
			       __u64 rows, float *d, __u64 plane, int one)
{
	const struct vnpu_layer_conv *at = cj->at;
	__u64 sh = at->stride[0], sw = at->stride[1], wq = eng_conv_wq(&cj->s, at);
	__u64 lo[ENG_WIN_STRIDE], hi[ENG_WIN_STRIDE], ph, pw, r, l, h;
	__s64 first[ENG_WIN_STRIDE], ih, src;
	float *dr;

	for (pw = 0; pw < sw; pw++) {
		first[pw] = (__s64)pw - at->pad_begin[1];
		valid_span(first[pw], sw, cj->s.w, wq, &lo[pw], &hi[pw]);
	}
	for (ph = 0; ph < sh; ph++) {
		if (!phase_read(ph, cj->s.kh, at->dilation[0], sh))
			continue;
		for (r = 0; r < rows; r++) {
			ih = (__s64)((r0 + r) * sh + ph) - at->pad_begin[0];
			src = (__s64)c * cj->xs[0] + ih * cj->xs[1];
			dr = d + (one ? 0 : ph * sw * plane) + r * wq;
			if (sw == 2 && cj->dt == VNPU_DTYPE_F32 && cj->xs[2] == 1 &&
			    ih >= 0 && ih < (__s64)cj->s.h) {
				conv_window_row2_f32((const float *)cj->x + src,
						     cj->s.w, at->pad_begin[1],
						     wq, dr, one ? 0 : dr + plane);
				continue;
			}
			for (pw = 0; pw < sw; pw++) {
				if (!phase_read(pw, cj->s.kw, at->dilation[1], sw))
					continue;
				dr = d + (one ? 0 : (ph * sw + pw) * plane) + r * wq;
				l = wq;
				h = wq;
				if (ih >= 0 && ih < (__s64)cj->s.h) {
					l = lo[pw];
					h = hi[pw];
				}
				zero_f32(dr, l);
				if (h > l)
					load_f32(dr + l,
						 elem_at(cj->x, src + ((__s64)l * (__s64)sw +
								       first[pw]) * cj->xs[2],
							 cj->dt),
						 (__s64)sw * cj->xs[2], h - l, cj->dt);
				zero_f32(dr + h, wq - h);
			}
		}
	}
}

/*
 * The same for stride 1 over dense f32 rows, the common case: @rows
 * padded rows of channel @c from @r0 into @d, the run of each row that
 * lies inside the input found once.
 */
static void conv_window_rows_f32(const struct conv_job *cj, __u64 c, __u64 r0,
				 __u64 rows, float *d)
{
	const struct vnpu_layer_conv *at = cj->at;
	const float *xc = (const float *)cj->x + (__s64)c * cj->xs[0];
	__s64 first = -(__s64)at->pad_begin[1], ih;
	__u64 wq = eng_conv_wq(&cj->s, at), lo, hi, r, x;

	valid_span(first, 1, cj->s.w, wq, &lo, &hi);
#ifdef ENG_FMA
	/*
	 * Rows of a small map, at least 8 of whose columns are inputs: each
	 * in vectors of 8 read inside the row's run (vload_run()), the last
	 * ending at the row's end over the one before.
	 */
	if (wq >= 8 && wq <= 64 && hi - lo >= 8) {
		for (r = 0; r < rows; r++, d += wq) {
			const float *src;

			ih = (__s64)(r0 + r) - at->pad_begin[0];
			if (ih < 0 || ih >= (__s64)cj->s.h) {
				for (x = 0; x + 8 < wq; x += 8)
					vstore(d + x, vbcast(0.0f));
				vstore(d + wq - 8, vbcast(0.0f));
				continue;
			}
			src = xc + ih * cj->xs[1];
			for (x = 0; x + 8 < wq; x += 8)
				vstore(d + x, vload_run(src, first, (__s64)x,
							(__s64)lo, (__s64)hi));
			vstore(d + wq - 8, vload_run(src, first, (__s64)(wq - 8),
						     (__s64)lo, (__s64)hi));
		}
		return;
	}
#endif
	for (r = 0; r < rows; r++, d += wq) {
		ih = (__s64)(r0 + r) - at->pad_begin[0];
		if (ih < 0 || ih >= (__s64)cj->s.h) {
			for (x = 0; x < wq; x++)
				d[x] = 0;
			continue;
		}
		for (x = 0; x < lo; x++)
			d[x] = 0;
		copy_f32(d + lo, xc + ih * cj->xs[1] + (__s64)lo + first, hi - lo);
		for (x = hi; x < wq; x++)
			d[x] = 0;
	}
}

/*
 * Asks for the input rows of channel @c that a window of @rows rows from
 * @r0 reads, ahead of their copy: a channel's rows are a short stream that
 * the hardware prefetcher only finds late. Into L2 (prefetcht2): into L1
 * each of the burst's lines held one of L1's few miss buffers until
 * memory answered, and ResNet-50's layer2.0 1x1 of stride 2 (its copy
 * bound by reading X) took 2.03-2.07 ms on one CPU, 1.96 so.
 */
static void conv_window_prefetch(const struct conv_job *cj, __u64 c, __u64 r0,
				 __u64 rows)
{
	const struct vnpu_layer_conv *at = cj->at;
	__s64 h0 = (__s64)(r0 * at->stride[0]) - at->pad_begin[0];
	__s64 h1 = h0 + (__s64)(rows * at->stride[0]);
	const char *p, *e;

	if (c >= cj->s.cg || cj->xs[2] != 1 ||
	    (cj->s.h > 1 && cj->xs[1] != (__s64)cj->s.w))
		return;
	h0 = h0 < 0 ? 0 : h0;
	h1 = h1 > (__s64)cj->s.h ? (__s64)cj->s.h : h1;
	if (h1 <= h0)
		return;
	p = elem_at(cj->x, (__s64)c * cj->xs[0] + h0 * cj->xs[1], cj->dt);
	e = elem_at(cj->x, (__s64)c * cj->xs[0] + h1 * cj->xs[1], cj->dt);
	for (; p < e; p += 64)
		__builtin_prefetch(p, 0, 1);
}

/*
 * The offsets of B's rows in a window of phase planes @plane floats and
 * channels @cs floats apart, plus @base: the taps of channel 0, then each
 * channel's, @cs further.
 */
static void conv_offsets(const struct conv_job *cj, __u64 plane, __u64 cs,
			 __u64 base, __s32 *off)
{
	const struct vnpu_layer_conv *at = cj->at;
	__u64 sh = at->stride[0], sw = at->stride[1];
	__u64 wq = eng_conv_wq(&cj->s, at), c, i, k = 0, r;

	for (r = 0; r < cj->s.kh; r++)
		for (i = 0; i < cj->s.kw; i++) {
			__u64 dy = r * at->dilation[0], dx = i * at->dilation[1];

			off[k++] = (__s32)(((dy % sh) * sw + dx % sw) * plane +
					   dy / sh * wq + dx / sw + base);
		}
	for (c = 1; c < cj->s.cg; c++)
		for (i = 0; i < k; i++)
			off[c * k + i] = off[i] + (__s32)(c * cs);
}

/*
 * Copies the input that padded columns [q0, q1) read into @win, and fills
 * the offset table; the zeroed slack after it is that of units of @cols.
 * The zero-padded input (Hp x Wp) is split into stride phases: plane
 * (ph, pw) holds padded element (r * sh + ph, x * sw + pw) at (r, x),
 * Wq = ceil(Wp / sw) wide. Output (oh, ow) is padded column
 * q = oh * Wq + ow, and its input for kernel tap (kh, kw) lies in plane
 * (kh * dh % sh, kw * dw % sw) at (oh + kh * dh / sh, ow + kw * dw / sw):
 * q plus a constant, so 16 neighbouring outputs read 16 neighbouring floats.
 * With stride 1 there is one plane, the padded input itself, its rows
 * W + max(left, right pad) wide: the last outputs' right-most taps read the
 * next row's left padding (see eng_conv_wq()). Taps that read plane
 * (0, 0) alone keep that plane alone, @cs floats a channel
 * (conv_one_plane()).
 */
static void conv_window(const struct conv_job *cj, __u64 q0, __u64 q1,
			__u64 cols, float *win, __s32 *off, __u64 *laid)
{
	const struct eng_conv_shape *s = &cj->s;
	const struct vnpu_layer_conv *at = cj->at;
	__u64 sh = at->stride[0], sw = at->stride[1], wq = eng_conv_wq(s, at);
	__u64 r0 = q0 / wq, rows, plane, ps, np, cs, c, p, lead = 0;
	int one;

	rows = (q1 - 1) / wq - r0 + 1 + (s->kh - 1) * at->dilation[0] / sh;
	plane = rows * wq;
	ps = plane;
	one = conv_one_plane(cj);
	np = one ? 1 : sh * sw;
	/*
	 * With strides, each plane starts @lead floats past a line, planes
	 * @ps apart, a whole number of lines: column @q0 then starts a line
	 * in every plane, so the rows of B of the taps at a plane's first
	 * column (all of a 1x1 of stride 2, four of a 3x3's nine) are
	 * aligned, where planes of 49 or 290 floats had most rows straddle
	 * two lines (eng_conv_bbuf() has the room).
	 */
	if (sh * sw > 1) {
		lead = (ENG_NR - (q0 - r0 * wq) % ENG_NR) % ENG_NR;
		ps = eng_div_up(plane, ENG_NR) * ENG_NR;
	}
	cs = np * ps;
	for (c = 0; c < s->cg; c++) {
		conv_window_prefetch(cj, c + 2, r0, rows);
		if (sh == 1 && sw == 1 && cj->dt == VNPU_DTYPE_F32 &&
		    cj->xs[2] == 1)
			conv_window_rows_f32(cj, c, r0, rows, win + c * cs);
		else
			conv_window_phased(cj, c, r0, rows, win + c * cs + lead,
					   ps, one);
	}
	/*
	 * Columns past the last row read the slack: keep it defined. The
	 * slack and the offsets depend on the planes' size and the unit's
	 * first column in its row only: units alike (a depthwise layer's
	 * channels) set them once (@laid: the planes' size and that column
	 * they were last set for; a size of 0 for none).
	 */
	if (laid[0] == cs && laid[1] == q0 - r0 * wq)
		return;
	zero_f32(win + s->cg * cs + lead, eng_conv_slack(s, at, cols));
	/*
	 * Before the first plane and after each: zeros, which only columns
	 * the tiles drop read. The lead comes once: before any other plane
	 * lie the last plane's gap and the end of its data, which a map's
	 * last unit reads where the lead is longer than the gap.
	 */
	zero_f32(win, lead);
	for (c = 0; c < s->cg && ps != plane; c++)
		for (p = 0; p < np; p++)
			zero_f32(win + c * cs + p * ps + lead + plane,
				 ps - plane);
	/* The planes no tap reads: zeros too, as nothing copies them. */
	for (p = 0; p < sh * sw && sh * sw > 1 && !one; p++)
		if (!phase_read(p / sw, s->kh, at->dilation[0], sh) ||
		    !phase_read(p % sw, s->kw, at->dilation[1], sw))
			for (c = 0; c < s->cg; c++)
				zero_f32(win + c * cs + p * ps + lead, plane);
	conv_offsets(cj, ps, cs, q0 - r0 * wq + lead, off);
	laid[0] = cs;
	laid[1] = q0 - r0 * wq;
}

/**
 * struct conv_slide - a stride-1 window kept across a part's units
 * @wb: first padded row in the planes: row r of a channel at (r - @wb) * Wq
 *	in its plane of @cap rows
 * @wf: rows [@wb, @wf) are in the planes
 * @cap: rows of a plane
 * @valid: 0 until the first unit of a group (and image) sets the planes up
 * @ready: the offsets and the zeroed slack past the planes are set: they
 *	do not depend on the group or image, so a part sets them once
 */
struct conv_slide {
	__u64 wb, wf, cap;
	int valid, ready;
};

/*
 * The window of padded columns [@q0, @q1) over dense f32 rows where it
 * slides (eng_conv_slides()), kept from the part's previous unit in @sl:
 * only the rows past @sl->wf come from the input, into each stride-phase
 * plane (conv_window(); @sl->cap rows a plane). When the unit's rows
 * would pass the planes' end, the rows it shares with the window move to
 * their start first. The offsets do not depend on the unit: they are set
 * with the planes, and the tiles read B at @win - @sl->wb * Wq. With
 * stride 1 the row after the window is zeros: the last outputs'
 * right-most taps read its left padding (see conv_window()); with
 * strides a tap reads inside its row. Past that, only columns the unit
 * drops read the planes.
 */
static void conv_window_slide(const struct conv_job *cj, __u64 q0, __u64 q1,
			      __u64 cols, float *win, __s32 *off,
			      struct conv_slide *sl)
{
	const struct eng_conv_shape *s = &cj->s;
	const struct vnpu_layer_conv *at = cj->at;
	__u64 sh = at->stride[0], sw = at->stride[1], wq = eng_conv_wq(s, at);
	__u64 plane = sl->cap * wq, np = 1, cs, c, p, from;
	__u64 r0 = q0 / wq;
	__u64 r1 = (q1 - 1) / wq + 1 + (s->kh - 1) * at->dilation[0] / sh;
	int one = 1;

	if (sh * sw > 1 && !conv_one_plane(cj)) {
		one = 0;
		np = sh * sw;
	}
	cs = np * plane;
	if (!sl->valid || r0 < sl->wb || r0 > sl->wf) {
		sl->valid = 1;
		sl->wb = r0;
		sl->wf = r0;
		if (!sl->ready) {
			zero_f32(win + s->cg * cs, eng_conv_slack(s, at, cols));
			/* The planes no tap reads, as conv_window(). */
			for (p = 0; p < np; p++)
				if (!phase_read(p / sw, s->kh, at->dilation[0], sh) ||
				    !phase_read(p % sw, s->kw, at->dilation[1], sw))
					for (c = 0; c < s->cg; c++)
						zero_f32(win + c * cs + p * plane,
							 plane);
			conv_offsets(cj, plane, cs, 0, off);
			sl->ready = 1;
		}
	} else if (r1 > sl->wb + sl->cap) {
		/* Forward copies: each chunk is read before it is overwritten. */
		for (c = 0; c < s->cg; c++)
			for (p = 0; p < np; p++)
				copy_f32(win + c * cs + p * plane,
					 win + c * cs + p * plane +
					 (r0 - sl->wb) * wq, (sl->wf - r0) * wq);
		sl->wb = r0;
	}
	from = sl->wf;
	if (r1 <= from)
		return;
	for (c = 0; c < s->cg; c++) {
		float *d = win + c * cs + (from - sl->wb) * wq;

		conv_window_prefetch(cj, c + 2, from, r1 - from);
		if (sh * sw > 1)
			conv_window_phased(cj, c, from, r1 - from, d, plane,
					   one);
		else
			conv_window_rows_f32(cj, c, from, r1 - from, d);
		/*
		 * At the planes' end it is the next plane's first (or
		 * slack).
		 */
		for (p = 0; sw == 1 && r1 - sl->wb < sl->cap && p < np; p++)
			zero_f32(d + p * plane + (r1 - from) * wq, wq);
	}
	sl->wf = r1;
}

void conv_epi(const struct eng_layer *l, __u64 img, __u64 g,
	      struct gemm_epi *e, struct gemm_out *o)
{
	const struct vnpu_layer_conv *at = l->attrs;
	const struct vnpu_cmd_tensor *y = &l->t[l->n - 1];
	__u32 ri = eng_opt_index(at->flags, VNPU_LAYER_F_RESIDUAL);
	__u64 mg = y->dims[1] / at->group;

	e->alpha = 1.0f;
	e->beta = 1.0f;
	e->act = &at->act;
	e->c = 0;
	e->r = 0;
	if (at->flags & VNPU_LAYER_F_BIAS) {
		e->c = tensor_at(l, 2, (__s64)(g * mg) * l->t[2].strides[0]);
		e->c_rs = l->t[2].strides[0];
		e->c_cs = 0;
		e->c_dt = l->t[2].dtype;
	}
	if (at->flags & VNPU_LAYER_F_RESIDUAL) {
		const struct vnpu_cmd_tensor *r = &l->t[ri];

		e->r = tensor_at(l, ri, (__s64)img * r->strides[0] +
				 (__s64)(g * mg) * r->strides[1]);
		e->r_rs = r->strides[1];
		e->r_cs = 1;
		e->r_dt = r->dtype;
	}
	o->y = elem_at_w(l->data[l->n - 1], (__s64)img * y->strides[0] +
			 (__s64)(g * mg) * y->strides[1], y->dtype);
	o->dt = y->dtype;
	o->rs = y->strides[1];
}

static void conv_job_init(const struct eng_layer *l, __u64 img, __u64 g,
			  struct conv_job *cj)
{
	const struct vnpu_cmd_tensor *x = &l->t[0];

	eng_conv_shape(l, &cj->s);
	cj->l = l;
	cj->g = g;
	cj->at = l->attrs;
	cj->dt = x->dtype;
	cj->xs[0] = x->strides[1];
	cj->xs[1] = x->rank == 4 ? x->strides[2] : 0;
	cj->xs[2] = x->strides[x->rank - 1];
	cj->x = tensor_at(l, 0, (__s64)img * x->strides[0] +
			  (__s64)(g * cj->s.cg) * x->strides[1]);
}

static void pack_a_conv(const void *arg, __u64 m0, __u64 mc, __u64 k0,
			__u64 kc, float *dst);

/* The weights of group @g as GEMM's A. */
static void conv_weights(const struct eng_layer *l, __u64 g,
			 const struct conv_job *cj, struct gemm_a *a)
{
	const struct vnpu_layer_conv *at = l->attrs;
	const struct vnpu_cmd_tensor *w = &l->t[1];
	__u64 kt = cj->s.cg * cj->s.kh * cj->s.kw;

	a->k = kt;
	a->packed = 0;
	a->pack = 0;
	if (eng_packed_f32(at->flags, w)) {
		a->packed = (const float *)l->data[1] +
			    g * eng_div_up(cj->s.mg, ENG_MR) * ENG_MR * kt;
		return;
	}
	a->pairs = 0;
	a->h16 = 0;
	if (at->flags & VNPU_LAYER_F_PACKED) {
		a->pack = pack_a_conv;
		if (w->dtype == VNPU_DTYPE_BF16)
			a->pairs = (const __u16 *)l->data[1] +
				   g * eng_div_up(cj->s.mg, ENG_MR) * ENG_MR * kt;
		if (w->dtype == VNPU_DTYPE_F16)
			a->h16 = (const __u16 *)l->data[1] +
				 g * eng_div_up(cj->s.mg, ENG_MR) * ENG_MR * kt;
		return;
	}
	/* Dense weights: rows of kt; strided ones per element. */
	a->p = tensor_at(l, 1, (__s64)(g * cj->s.mg) * w->strides[0]);
	a->rs = w->strides[0];
	a->cs = w->strides[w->rank - 1];
	a->dt = w->dtype;
	if (kt > 1 && a->cs == 1 && w->strides[1] == (__s64)(cj->s.kh * cj->s.kw) &&
	    (w->rank == 3 || w->strides[2] == (__s64)cj->s.kw))
		return;
	a->pack = pack_a_conv;
}

/*
 * Packs strided weights the slow way when they are not dense rows, and
 * widens packed f16 or bf16 panels (VNPU_PACK_CONV_W): rows [m0, m0 + mc)
 * of a panel are ENG_MR apart, one panel of depth kt after another, so
 * the slice of each is one run.
 */
static void pack_a_weights(const struct eng_layer *l, __u64 g,
			   const struct conv_job *cj, __u64 m0, __u64 mc,
			   __u64 k0, __u64 kc, float *dst)
{
	const struct vnpu_layer_conv *at = l->attrs;
	const struct vnpu_cmd_tensor *w = &l->t[1];
	__u64 p, i, k, khw = cj->s.kh * cj->s.kw, kt = cj->s.cg * khw;
	__u64 g0 = g * eng_div_up(cj->s.mg, ENG_MR) * ENG_MR;

	if (at->flags & VNPU_LAYER_F_PACKED) {
		for (p = 0; p < mc; p += ENG_MR, dst += kc * ENG_MR)
			widen_panel(dst, elem_at(l->data[1],
						 (__s64)((g0 + m0 + p) * kt +
							 k0 * ENG_MR), w->dtype),
				    kc, ENG_MR, w->dtype);
		return;
	}

	for (p = 0; p < mc; p += ENG_MR, dst += kc * ENG_MR)
		for (i = 0; i < ENG_MR; i++)
			for (k = 0; k < kc; k++) {
				__u64 m = g * cj->s.mg + m0 + p + i, kk = k0 + k;
				__s64 o = (__s64)m * w->strides[0] +
					  (__s64)(kk / khw) * w->strides[1] +
					  (__s64)(kk % cj->s.kw) *
					  w->strides[w->rank - 1];

				if (w->rank == 4)
					o += (__s64)((kk % khw) / cj->s.kw) *
					     w->strides[2];
				dst[k * ENG_MR + i] = p + i < mc ?
					ldf(l->data[1], o, w->dtype) : 0;
			}
}

/*
 * How far past a column a direct convolution's taps read (conv_direct()):
 * the last tap's offset in the input.
 */
static __u64 conv_direct_reach(const struct conv_job *cj)
{
	const struct vnpu_layer_conv *at = cj->at;

	return (cj->s.kh - 1) * at->dilation[0] * cj->s.w +
	       (cj->s.kw - 1) * at->dilation[1];
}

/*
 * A convolution of stride 1 without padding over a dense f32 input reads
 * B straight from the input, no window: with padded columns of the
 * input's width (eng_conv_wq()), tap (r, i) of channel c of column q is
 * input element c * C + q + r * dh * W + i * dw, the element the window
 * would hold there (a 1x1 convolution is a plain GEMM; openWakeWord's
 * 3x1 ones read three rows). Only kernels one column wide: then every
 * column before the last output row's end reads inside its channel, so
 * only a unit's last, partial panel can read past it. A wider kernel's
 * padded columns of the last row read up to (kw - 1) * dw past the
 * channel, past the input itself on its last channel, from panels the
 * tail copy does not take. Returns whether it is one, and where the tail
 * copy of a unit of @cols columns (conv_direct_tail()) fits in the room
 * of its window.
 */
static int conv_direct(const struct conv_job *cj, __u64 cols)
{
	const struct vnpu_layer_conv *at = cj->at;
	__u64 kt = cj->s.cg * cj->s.kh * cj->s.kw;

	if (cj->dt != VNPU_DTYPE_F32 || at->stride[0] != 1 ||
	    at->stride[1] != 1 || at->pad_begin[0] || at->pad_begin[1] ||
	    at->pad_end[0] || at->pad_end[1] || cj->xs[2] != 1 ||
	    (cj->s.h > 1 && cj->xs[1] != (__s64)cj->s.w) ||
	    cj->xs[0] < (__s64)(cj->s.h * cj->s.w))
		return 0;
	if (cj->s.kw != 1)
		return 0;
	if (cj->s.kh == 1)
		return 1;
	return eng_conv_wq(&cj->s, at) == cj->s.w &&
	       kt * (ENG_NR + 1) + ENG_ALIGN / 4 <=
	       cj->s.cg * eng_conv_win_cap(&cj->s, at, cols) * cj->s.w +
	       eng_conv_slack(&cj->s, at, cols);
}

/*
 * Where the last panel of a direct unit [@q0, @q1) would read past its
 * channel (the micro-kernels read whole panels of ENG_NR columns, each
 * tap up to conv_direct_reach() further), the first of the columns it
 * takes from a copy instead; @q1 when every panel lies inside.
 */
static __u64 conv_direct_split(const struct conv_job *cj, __u64 q0, __u64 q1)
{
	if (q0 + eng_div_up(q1 - q0, ENG_NR) * ENG_NR +
	    conv_direct_reach(cj) <= cj->s.h * cj->s.w)
		return q1;
	return q0 + (q1 - q0) / ENG_NR * ENG_NR;
}

/*
 * Columns [@qf, @q1) (fewer than ENG_NR) of each tap's row of B to
 * @tail, one zero-padded panel per tap, their offsets to @off: taps past
 * the channel's end (padded columns' only) read zeros. A tap's run goes
 * in vectors (copy_run_f32()): an element at a time it took 30% of
 * openWakeWord's conv2d_18 (3x1 onto 6x2, 12 columns), f32 and bf16.
 */
static void conv_direct_tail(const struct conv_job *cj, __u64 qf, __u64 q1,
			     __s32 *off, float *tail)
{
	const struct vnpu_layer_conv *at = cj->at;
	const float *x = (const float *)cj->x;
	__u64 hw = cj->s.h * cj->s.w, c, r, i, k = 0;
	const v8sf z = {};

	for (c = 0; c < cj->s.cg; c++)
		for (r = 0; r < cj->s.kh; r++)
			for (i = 0; i < cj->s.kw; i++, k++, tail += ENG_NR) {
				__u64 t = r * at->dilation[0] * cj->s.w +
					  i * at->dilation[1] + qf;

				vstore(tail, z);
				vstore(tail + 8, z);
				if (t < hw)
					copy_run_f32(tail, x + c * cj->xs[0] + t,
						     eng_min(q1 - qf, hw - t));
				off[k] = (__s32)(k * ENG_NR);
			}
}

static void pack_a_conv(const void *arg, __u64 m0, __u64 mc, __u64 k0,
			__u64 kc, float *dst)
{
	const struct conv_job *cj = arg;

	pack_a_weights(cj->l, cj->g, cj, m0, mc, k0, kc, dst);
}

/*
 * Whether a direct 1x1 convolution (conv_direct()) of units of @cols
 * columns reads a copy of its columns instead of the input itself: where
 * its channels are not a whole number of panels apart (ResNet-50's 14x14
 * and 7x7 maps: 196 and 49 floats), half the rows of B the AVX2 tiles
 * read would straddle two cache lines, and the depth would go in short
 * slices (ENG_CONV_KC_SKEW) so that those lines stay in L1. The copy
 * puts each channel's columns of a unit at the start of a line, a whole
 * number of panels apart, once for all the units of those columns on the
 * scratch (in ResNet-50 on one CPU, 2048->512 on 7x7: 1.49 -> 1.32 ms,
 * 256->1024 on 14x14: 1.25 -> 1.19 ms). The AVX-512 tiles keep the
 * input.
 */
static int conv_direct_copies(const struct conv_job *cj, __u64 cols,
			      __u32 features)
{
	const struct vnpu_layer_conv *at = cj->at;
	__u64 room = cj->s.cg * eng_conv_win_cap(&cj->s, at, cols) *
		     eng_conv_wq(&cj->s, at) + eng_conv_slack(&cj->s, at, cols);

	return !(features & VNPU_ENG_F_AVX512) && cj->s.kh == 1 &&
	       cj->s.kw == 1 && cj->xs[0] % ENG_NR &&
	       cj->s.cg * eng_div_up(cols, ENG_NR) * ENG_NR + ENG_ALIGN / 4 <=
	       room;
}

/*
 * Columns [@q0, @q1) of each channel of a direct 1x1 convolution to @win,
 * zero-padded to whole panels, @ps floats a channel, their offsets to
 * @off.
 */
static void conv_direct_copy(const struct conv_job *cj, __u64 q0, __u64 q1,
			     __s32 *off, float *win)
{
	const float *x = (const float *)cj->x + q0;
	__u64 ps = eng_div_up(q1 - q0, ENG_NR) * ENG_NR, c;

	for (c = 0; c < cj->s.cg; c++, win += ps) {
		copy_f32(win, x + (__s64)c * cj->xs[0], q1 - q0);
		zero_f32(win + (q1 - q0), ps - (q1 - q0));
		off[c] = (__s32)(c * ps);
	}
}

/*
 * struct conv_held's @laid for a direct convolution's offsets, and for
 * those of one reading its input in place under conv_edges().
 */
#define ENG_CONV_LAID_DIRECT	((__u64)-1)
#define ENG_CONV_LAID_EDGES	((__u64)-2)

/**
 * struct conv_held - what a windowed convolution's B scratch holds, kept
 * at its start for the command's next parts on the same scratch (struct
 * vnpu_eng_ctx's @epoch)
 * @epoch: the command run that set it (0: none)
 * @attrs: the layer's attributes, as the same run's one layer
 * @sl: the stride-1 window kept across units
 * @x: NULL, or the input (image and group) whose columns [@q0, @q1) the
 *	scratch holds: a direct unit's tail copy (conv_direct_tail()) or a
 *	unit's own window (conv_window()), which the units of the same
 *	columns' other output channels share; with a sliding window, the
 *	input it is over
 * @q0: see @x
 * @q1: see @x
 * @laid: the layout the offsets and slack of a unit's own window were
 *	last set for (conv_window()), or ENG_CONV_LAID_DIRECT: the offsets
 *	are a direct convolution's (conv_direct()), the same for each unit
 * @bc_x: NULL, or the input whose columns [@bc_q[0], @bc_q[1]) the B cache
 *	holds as bf16 pairs (eng_conv_bf16_cache())
 * @bc_q: see @bc_x
 */
struct conv_held {
	__u64 epoch;
	const void *attrs;
	struct conv_slide sl;
	const void *x;
	__u64 q0, q1;
	__u64 laid[2];
	const void *bc_x;
	__u64 bc_q[2];
};

/**
 * struct conv_src - where a convolution part's units read B
 * @bbuf: the offsets, then the window (eng_conv_bbuf())
 * @h: what they hold, from the command's earlier parts on this scratch
 * @slide: whether the window slides (stride 1 over f32)
 * @windowed: whether B comes from a window (else im2col)
 * @copies: whether a direct 1x1's units read a copy of their columns
 *	(conv_direct_copies())
 */
struct conv_src {
	__s32 *bbuf;
	struct conv_held *h;
	int slide, windowed, copies;
};

/* Whether the scratch holds columns [@q0, @q1) of @cj's input. */
static int conv_src_held(struct conv_src *cs, const struct conv_job *cj,
			 __u64 q0, __u64 q1)
{
	struct conv_held *h = cs->h;

	if (h->x == cj->x && h->q0 == q0 && h->q1 == q1)
		return 1;
	h->x = cj->x;
	h->q0 = q0;
	h->q1 = q1;
	return 0;
}

/*
 * A part's B scratch at @bbuf: what the command's earlier parts left
 * there when @ctx names the run that left it, else nothing.
 */
static void conv_src_init(const struct eng_layer *l, const struct conv_job *cj,
			  __u64 cols, void *bbuf, const struct vnpu_eng_ctx *ctx,
			  struct conv_src *cs)
{
	const struct vnpu_layer_conv *at = l->attrs;
	struct conv_held *h = bbuf;

	cs->h = h;
	cs->bbuf = (__s32 *)bbuf + ENG_CONV_HELD;
	cs->windowed = eng_conv_windowed(at);
	cs->slide = eng_conv_slides(&cj->s, at, cols) &&
		    l->t[0].dtype == VNPU_DTYPE_F32;
	cs->copies = 0;
	if (!cs->windowed)
		return;
	if (ctx->epoch && h->epoch == ctx->epoch && h->attrs == l->attrs)
		return;
	h->epoch = ctx->epoch;
	h->attrs = l->attrs;
	h->sl.valid = 0;
	h->sl.ready = 0;
	h->sl.cap = eng_conv_win_cap(&cj->s, at, cols);
	h->x = 0;
	h->laid[0] = 0;
	h->laid[1] = 0;
	h->bc_x = 0;
}

/*
 * B of padded columns [@q0, @q1) of a unit of @cols: the input itself (a
 * 1x1 convolution), the sliding or the unit's own window, or im2col; sets
 * where the outputs go in @o.
 * Columns [*@qf, @q1) read @tail instead (a direct unit's last panel).
 */
static void conv_src_unit(const struct conv_job *cj, struct conv_src *cs,
			  __u64 q0, __u64 q1, __u64 cols, struct gemm_b *b,
			  struct gemm_b *tail, __u64 *qf, struct gemm_out *o)
{
	__u64 wq = eng_conv_wq(&cj->s, cj->at), kt = cj->s.cg * cj->s.kh * cj->s.kw;
	__s32 *off = cs->bbuf;
	float *win = eng_align(off + kt);

	b->pack = 0;
	b->kc = 0;
	*qf = q1;
	/* Without spare columns, columns are outputs. */
	o->wp = wq == cj->s.ow ? 0 : wq;
	o->ow = cj->s.ow;
	if (!cs->windowed) {
		o->wp = 0;
		b->off = 0;
		b->pack = pack_im2col;
		b->arg = cj;
		return;
	}
	b->off = off;
	if (cs->copies) {
		/* The offsets are the copy's: set with it. */
		if (!conv_src_held(cs, cj, q0, q1))
			conv_direct_copy(cj, q0, q1, off, win);
		cs->h->laid[0] = 0;
		b->win = win - q0;
	} else if (conv_direct(cj, cols)) {
		/* The tail's offsets, then its panels, in the window's room. */
		tail->off = (__s32 *)win;
		tail->pack = 0;
		*qf = conv_direct_split(cj, q0, q1);
		b->kc = cj->xs[0] % ENG_NR ? ENG_CONV_KC_SKEW : 0;
		tail->win = (const float *)eng_align((__s32 *)win + kt) - *qf;
		if (*qf < q1 && !conv_src_held(cs, cj, *qf, q1))
			conv_direct_tail(cj, *qf, q1, (__s32 *)win,
					 eng_align((__s32 *)win + kt));
		if (cs->h->laid[0] != ENG_CONV_LAID_DIRECT) {
			conv_offsets(cj, 0, (__u64)cj->xs[0], 0, off);
			cs->h->laid[0] = ENG_CONV_LAID_DIRECT;
		}
		b->win = cj->x;
		cs->h->sl.valid = 0;
		cs->h->sl.ready = 0;
	} else if (cs->slide && cj->xs[2] == 1) {
		/* A new group or image starts the window again. */
		if (cs->h->x != cj->x)
			cs->h->sl.valid = 0;
		cs->h->x = cj->x;
		conv_window_slide(cj, q0, q1, cols, win, off, &cs->h->sl);
		b->win = win - cs->h->sl.wb * wq;
	} else {
		if (!conv_src_held(cs, cj, q0, q1))
			conv_window(cj, q0, q1, cols, win, off, cs->h->laid);
		b->win = win - q0;
	}
}

/*
 * Whether a convolution whose B the AVX512-BF16 path rounds into a cache
 * (@bc) fills it from its dense f32 input in place instead of a window
 * (struct eng_bf16_edges): stride 1, padding by columns only and as much
 * as the kernel reaches, so that its outputs' rows are its input's
 * (openWakeWord's 1x3 convolutions over maps 32 to 2 wide). Its columns
 * are then its outputs, not padded ones: no window to copy, no padding
 * columns to compute, and the tiles store even rows narrower than a tile
 * through their epilogue, where padded columns of rows under 32 took the
 * flush (the sums' scratch, then a copy of each output row). Unpadded
 * ones keep the direct path (conv_direct()): under masks YOLOv8n's and
 * MobileNetV3's 1x1s took 2-5% longer on one CPU.
 */
static int conv_edges(const struct conv_job *cj, const __u32 *bc)
{
	const struct vnpu_layer_conv *at = cj->at;

	return bc && cj->dt == VNPU_DTYPE_F32 && at->stride[0] == 1 &&
	       at->stride[1] == 1 && !at->pad_begin[0] && !at->pad_end[0] &&
	       (at->pad_begin[1] || at->pad_end[1]) &&
	       at->pad_begin[1] + at->pad_end[1] ==
	       (cj->s.kw - 1) * at->dilation[1] && cj->s.ow == cj->s.w &&
	       cj->s.kw <= ENG_BF16_EDGE_KW && cj->xs[2] == 1 &&
	       (cj->s.h == 1 || cj->xs[1] == (__s64)cj->s.w) &&
	       cj->xs[0] >= (__s64)(cj->s.h * cj->s.w);
}

/* The output column of padded column @q (the next one's, in a padding column). */
static __u64 conv_edge_col(const struct conv_job *cj, __u64 q)
{
	__u64 wq = eng_conv_wq(&cj->s, cj->at);

	return q / wq * cj->s.ow + eng_min(q % wq, cj->s.ow);
}

/*
 * B of a unit under conv_edges(): the input in place, each tap's offset
 * to @cs's offsets (once for the part), the outputs dense in @o.
 */
static void conv_src_edges(const struct conv_job *cj, struct conv_src *cs,
			   struct eng_bf16_edges *e, struct gemm_b *b,
			   struct gemm_out *o)
{
	const struct vnpu_layer_conv *at = cj->at;
	__u64 c, r, i, k = 0;

	e->w = cj->s.w;
	e->n = cj->s.oh * cj->s.ow;
	e->kw = (__u32)cj->s.kw;
	e->dil = at->dilation[1];
	e->pad = at->pad_begin[1];
	if (cs->h->laid[0] != ENG_CONV_LAID_EDGES) {
		for (c = 0; c < cj->s.cg; c++)
			for (r = 0; r < cj->s.kh; r++)
				for (i = 0; i < cj->s.kw; i++)
					cs->bbuf[k++] = (__s32)(c * cj->xs[0] +
						r * at->dilation[0] * cj->s.w +
						i * at->dilation[1]) - (__s32)e->pad;
		cs->h->laid[0] = ENG_CONV_LAID_EDGES;
	}
	b->pack = 0;
	b->kc = 0;
	b->off = cs->bbuf;
	b->win = (const float *)cj->x;
	b->edges = e;
	o->wp = 0;
	o->ow = cj->s.ow;
}

static int run_conv_gemm(const struct eng_layer *l, __u64 ub, __u64 ue,
			 const struct vnpu_eng_ctx *ctx)
{
	const struct vnpu_layer_conv *at = l->attrs;
	struct conv_job cj;
	struct gemm_epi e;
	struct gemm_out o = {};
	struct gemm_a a = {};
	struct gemm_b b = {}, tail = {};
	struct gemm_bufs bufs;
	struct conv_src cs;
	struct eng_bf16_edges edges;
	__u64 u, qn, nb, q0, q1, qf, m0, mc, mbu, kt, rstep, cstep;
	struct eng_unit unit;
	int own, in_place;

	eng_conv_shape(l, &cj.s);
	kt = cj.s.cg * cj.s.kh * cj.s.kw;
	qn = eng_conv_cols(&cj.s, at);
	eng_conv_unit(&cj.s, at, ctx->features, &unit);
	nb = eng_div_up(qn, unit.cols);
	gemm_scratch(ctx, !eng_packed_f32(at->flags, &l->t[1]), &unit, &bufs);
	/* A single panel of output channels widens instead. */
	if (!eng_conv_bf16_native(&cj.s, at, &l->t[1], ctx->features))
		bufs.bf16 = 0;
	e.avx512 = eng_act_avx512(ctx);
	/* Its products in bf16: SiLU at bf16's grade too (ENG_ACT_BF16). */
	if (bufs.bf16 && l->t[1].dtype == VNPU_DTYPE_BF16)
		e.avx512 = ENG_ACT_BF16;
	mbu = eng_div_up(cj.s.mg, unit.rows);
	/*
	 * An even count of units splits rows and columns in blocks of even
	 * sizes (eng_even_at()), in the unit's steps; an odd count keeps whole
	 * blocks and a short last one, which falls to the tile that takes a
	 * unit more.
	 */
	rstep = eng_unit_step(unit.rows);
	cstep = unit.cols % (2 * ENG_NR) ? ENG_NR : 2 * ENG_NR;
	if ((cj.s.n * cj.s.group * mbu * nb) % 2) {
		rstep = unit.rows;
		cstep = unit.cols;
	}
	conv_src_init(l, &cj, unit.cols, bufs.b, ctx, &cs);
	/* bf16 pairs: the units' rounded input, after the window. */
	b.bc = eng_conv_bf16_cache(&cj.s, at, &l->t[1], ctx->features,
				   unit.cols) ?
	       eng_align(bufs.b + eng_conv_bbuf(&cj.s, at, unit.cols)) : 0;
	b.bc_ps = eng_div_up(kt, 2) * ENG_NR;
	/*
	 * Units with a window of strides over 1 (their own or sliding), a
	 * copy of their columns or a B cache take the output channels of
	 * one window one after another, so that they share it, and so do
	 * those the tiles take by columns (eng_conv_by_cols()); the others
	 * take the columns of one block of channels in turn.
	 */
	conv_job_init(l, 0, 0, &cj);
	cs.copies = cs.windowed && conv_direct(&cj, unit.cols) &&
		    conv_direct_copies(&cj, unit.cols, ctx->features);
	in_place = cs.windowed && conv_edges(&cj, b.bc);
	own = b.bc || cs.copies || eng_conv_by_cols(ctx->features) ||
	      (cs.windowed && !conv_direct(&cj, unit.cols) &&
	       !(cs.slide && cj.xs[2] == 1 && at->stride[0] == 1 &&
		 at->stride[1] == 1));
	for (u = ub; u < ue; u++) {
		__u64 qi = own ? (u / mbu) % nb : u % nb;
		__u64 mi = own ? u % mbu : (u / nb) % mbu;
		__u64 g = (u / (nb * mbu)) % cj.s.group;
		__u64 img = u / (nb * mbu * cj.s.group);
		__u64 m1 = eng_even_at(mi + 1, mbu, cj.s.mg, rstep);

		conv_job_init(l, img, g, &cj);
		conv_weights(l, g, &cj, &a);
		a.arg = &cj;
		conv_epi(l, img, g, &e, &o);
		q0 = eng_even_at(qi, nb, qn, cstep);
		q1 = eng_even_at(qi + 1, nb, qn, cstep);
		if (in_place) {
			q0 = conv_edge_col(&cj, q0);
			q1 = conv_edge_col(&cj, q1);
			qf = q1;
			conv_src_edges(&cj, &cs, &edges, &b, &o);
		} else {
			conv_src_unit(&cj, &cs, q0, q1, unit.cols, &b, &tail,
				      &qf, &o);
		}
		/* The cache holds the last unit's columns on this scratch. */
		if (b.bc) {
			struct conv_held *h = cs.h;

			b.bc_fill = h->bc_x != cj.x || h->bc_q[0] != q0 ||
				    h->bc_q[1] != qf;
			h->bc_x = cj.x;
			h->bc_q[0] = q0;
			h->bc_q[1] = qf;
		}
		for (m0 = eng_even_at(mi, mbu, cj.s.mg, rstep); m0 < m1;
		     m0 += ENG_MC) {
			mc = eng_min(ENG_MC, m1 - m0);
			if (qf > q0)
				gemm_block(&a, &b, m0, mc, q0, qf - q0, kt, &o,
					   &e, &bufs);
			b.bc_fill = 0;
			if (q1 > qf)
				gemm_block(&a, &tail, m0, mc, qf, q1 - qf, kt,
					   &o, &e, &bufs);
		}
	}
	return 0;
}

/*
 * A tile of struct eng_lanes_tile with this build's 8-lane vectors, @rows
 * positions at once, 8 channels at a time: each sum in depth order from
 * zero, as the AVX-512 tiles take it.
 */
static __attribute__((__always_inline__)) inline
void lanes_rows(const struct eng_lanes_tile *t, const int rows)
{
	__u64 k;
	int r, h, l;

	for (h = 0; h < 2 * t->nv; h++) {
		const float *w = t->w + h * 8;
		v8sf acc[ENG_LANES_ROWS];

		for (r = 0; r < rows; r++)
			acc[r] = vbcast(0.0f);
		for (k = 0; k < t->kc; k++) {
			const float *xk = t->x + t->off[k];
			v8sf wk = vload(w + k * ENG_LANES_NR);

			for (r = 0; r < rows; r++)
				acc[r] = LANE_FMA(vbcast(xk[r * t->xstep]), wk,
						  acc[r]);
		}
		for (r = 0; r < rows; r++)
			for (l = 0; l < 8; l++)
				t->acc[(h * 8 + l) * t->acc_rs + r] = acc[r][l];
	}
}

static void lanes_tile(const struct eng_lanes_tile *t)
{
	switch (t->rows) {
	case 7:
		lanes_rows(t, 7);
		break;
	case 6:
		lanes_rows(t, 6);
		break;
	case 5:
		lanes_rows(t, 5);
		break;
	case 4:
		lanes_rows(t, 4);
		break;
	case 3:
		lanes_rows(t, 3);
		break;
	case 2:
		lanes_rows(t, 2);
		break;
	default:
		lanes_rows(t, 1);
		break;
	}
}

/*
 * A CONV whose packed weights hold its output channels on the lanes
 * (VNPU_LAYER_F_LANES, VNPU_PACK_CONV_LANES): unit u is up to
 * ENG_LANES_MB output channels of a group by a block of positions
 * (eng_lanes_unit()); a tile takes up to ENG_LANES_ROWS positions of one
 * output row, their input broadcast, by a panel of ENG_LANES_NR channels
 * (a 7x7 map: 7 tiles of 7, where positions on the lanes pad 49 as 32 +
 * 16 + 1), the whole depth. The sums then go through the GEMM's flush
 * (block_flush()), so the outputs have the bits of the same weights
 * packed as VNPU_PACK_CONV_W.
 */
/*
 * @cj's group of input planes into @xp as a lanes CONV's tiles read them
 * (eng_lanes_copied()): padded with zeros around, each padded row's
 * columns by phase (eng_lanes_phase()), so that a tile's positions, a
 * stride apart in the row, are one float apart in a phase. Padded column
 * j of padded row y of channel c at @xp + (c * hp + y) * rw +
 * (j % sw) * ph + j / sw, rw = sw * ph.
 */
static void lanes_copy_planes(const struct conv_job *cj, float *xp)
{
	const struct vnpu_layer_conv *a = cj->at;
	__u64 ph = eng_lanes_phase(cj->s.w, a), sw = a->stride[1];
	__u64 rw = ph * sw, hp = cj->s.h + a->pad_begin[0] + a->pad_end[0];
	__u64 pl = a->pad_begin[1], c, y, i, r, j0, n;
	__s64 xs2 = cj->xs[2];

	for (c = 0; c < cj->s.cg; c++) {
		const float *xc = (const float *)cj->x + (__s64)c * cj->xs[0];
		float *d = xp + c * hp * rw;

		zero_f32(d, a->pad_begin[0] * rw);
		d += a->pad_begin[0] * rw;
		for (y = 0; y < cj->s.h; y++, d += rw) {
			const float *xr = xc + (__s64)y * cj->xs[1];

			/* A dense row of stride 2: both phases in one pass. */
			if (sw == 2 && xs2 == 1) {
				conv_window_row2_f32(xr, cj->s.w, pl, ph, d,
						     d + ph);
				continue;
			}
			zero_f32(d, rw);
			/*
			 * Phase r: padded columns j0 * sw + r, ..., the
			 * first at or past pad_begin[1], n of them in X.
			 */
			for (r = 0; r < sw; r++) {
				const float *s;
				float *o;

				j0 = (pl + sw - 1 - r) / sw;
				if (j0 * sw + r - pl >= cj->s.w)
					continue;
				n = (cj->s.w - (j0 * sw + r - pl) + sw - 1) / sw;
				s = xr + (__s64)(j0 * sw + r - pl) * xs2;
				o = d + r * ph + j0;
				for (i = 0; i < n; i++)
					o[i] = s[(__s64)(i * sw) * xs2];
			}
		}
		zero_f32(d, a->pad_end[0] * rw);
	}
}

/**
 * struct lanes_held - what a lanes CONV's copy of its input holds, kept
 * just before it for the command's next parts on the same scratch (struct
 * vnpu_eng_ctx's @epoch): a part then does not copy again the planes its
 * tile copied for the run's last part (ResNet-50's layer4.0 conv2 copied
 * its 0.5 MB for each of its four units of 128 channels)
 * @epoch: the command run that made it (0: none)
 * @attrs: the layer's attributes, as the same run's one layer
 * @x: NULL, or the input planes (image and group) it is a copy of
 */
struct lanes_held {
	__u64 epoch;
	const void *attrs;
	const void *x;
};

/**
 * struct lanes_run - where a lanes CONV unit's tiles read and write
 * @x: the input the tiles read, X or its copy
 * @acc: the unit's sums (block_flush()'s), channel c of position p at
 *	@acc + c * @cols + p - @p0
 * @part: the AVX-512 tiles' sums between slices of the depth, by position
 * @xs1: floats from an output row's input to the next's
 * @xs2: floats from a position's input to the next's
 * @p0: the unit's first position
 * @pc: its positions
 * @cols: the positions of a unit (@acc's rows)
 * @ow: positions of an output row
 * @panels: panels of the layer's weights
 * @ks: depth of a slice (the whole depth but for the AVX-512 tiles)
 * @avx512: whether the AVX-512 tiles run
 */
struct lanes_run {
	const float *x;
	float *acc, *part;
	__s64 xs1, xs2;
	__u64 p0, pc, cols, ow, panels, ks;
	int avx512;
};

/*
 * The tiles of @lr's unit over one panel (output channels from @j of the
 * unit's), for a slice of the depth (@t's @kc, @off, @w, @pin, @pout):
 * the AVX-512 tiles take it in slices, each for all of the unit's
 * positions, so that a slice's weights and input stay in L2 for the
 * panel's tiles (ResNet-50's layer4.0 3x3: 590 KB of weights a panel and
 * a 524 KB copy of its input). The first two tiles of a slice fetch the
 * next panel's halves of it into L2 (@t->pf: ResNet-50's layer4 weights
 * come from memory).
 */
static void lanes_slice(struct eng_lanes_tile *t, const struct lanes_run *lr,
			__u64 j, __u64 kt)
{
	const float *pf = t->pf;
	__u64 p, ti;

	for (p = lr->p0, ti = 0; p < lr->p0 + lr->pc; p += (__u64)t->rows, ti++) {
		__u64 oy = p / lr->ow, ox = p % lr->ow;

		t->rows = (int)eng_min(eng_min(ENG_LANES_ROWS, lr->ow - ox),
				       lr->p0 + lr->pc - p);
		t->x = lr->x + (__s64)oy * lr->xs1 + (__s64)ox * lr->xs2;
		t->acc = lr->acc + j * lr->cols + (p - lr->p0);
		t->part = lr->part + (p - lr->p0) * ENG_LANES_NR;
#ifdef ENG_FMA
		/* The AVX-512 tiles: positions 1 apart. */
		if (lr->avx512 && t->xstep == 1) {
			/*
			 * Where the unit is whole rows of whole tiles, its
			 * even rows take the next row's same positions too,
			 * which the loop then steps over.
			 */
			t->two = !(lr->ow % ENG_LANES_ROWS) &&
				 !(lr->p0 % lr->ow) && !(lr->pc % lr->ow) &&
				 !((oy - lr->p0 / lr->ow) % 2) &&
				 (oy + 1) * lr->ow < lr->p0 + lr->pc;
			t->pf = ti < 2 && pf ? pf + ti * kt * ENG_NR : 0;
			vnpu_eng_lanes_avx512(t);
			if (t->two && ox + (__u64)t->rows == lr->ow)
				p += lr->ow;
			continue;
		}
#endif
		lanes_tile(t);
	}
	t->pf = pf;
}

static int run_conv_lanes(const struct eng_layer *l, __u64 ub, __u64 ue,
			  const struct vnpu_eng_ctx *ctx)
{
	struct gemm_out o = {};
	struct gemm_flush f = {};
	struct eng_lanes_tile t = {};
	struct eng_unit unit;
	struct gemm_epi e;
	struct conv_job cj;
	float add[ENG_LANES_MB], *acc;
	const struct vnpu_layer_conv *a = l->attrs;
	__u64 kt, np, mb, pb, u, k, c, r, q, j, ph, k0;
	struct lanes_held *held = 0;
	struct lanes_run lr = {};
	__s32 *off = eng_align(ctx->scratch);
	/*
	 * The input the tiles read, X or its copy: an output row's rows
	 * @xs[1] apart, a tap's kernel rows @xs[1] / stride[0] apart.
	 */
	__s64 xs[3];
	float *xp = 0;
	int has_add = 0;

	eng_conv_shape(l, &cj.s);
	kt = cj.s.cg * cj.s.kh * cj.s.kw;
	np = cj.s.oh * cj.s.ow;
	eng_lanes_unit(&cj.s, ctx->features, &unit);
	mb = eng_div_up(cj.s.mg, unit.rows);
	pb = eng_div_up(np, unit.cols);
	acc = eng_align(off + kt);
	lr.part = eng_align(acc + unit.rows * unit.cols);
	conv_job_init(l, 0, 0, &cj);
	xs[0] = cj.xs[0];
	xs[1] = cj.xs[1];
	xs[2] = cj.xs[2];
	ph = 0;
	if (eng_lanes_copied(a)) {
		held = eng_align(lr.part + unit.cols * ENG_LANES_NR);
		xp = (float *)held + ENG_ALIGN / 4;
		if (!ctx->epoch || held->epoch != ctx->epoch ||
		    held->attrs != a) {
			held->epoch = ctx->epoch;
			held->attrs = a;
			held->x = 0;
		}
		ph = eng_lanes_phase(cj.s.w, a);
		xs[2] = 1;
		xs[1] = (__s64)(ph * a->stride[1]);
		xs[0] = xs[1] * (__s64)(cj.s.h + a->pad_begin[0] +
					a->pad_end[0]);
	}
	/* The taps' offsets, channel, kernel row, column (its phase). */
	for (k = 0, c = 0; c < cj.s.cg; c++)
		for (r = 0; r < cj.s.kh; r++)
			for (q = 0; q < cj.s.kw; q++)
				off[k++] = (__s32)((__s64)c * xs[0] +
						   (__s64)r * xs[1] +
						   (xp ? (__s64)(q % a->stride[1] * ph +
								 q / a->stride[1]) :
						    (__s64)q * xs[2]));
	xs[1] *= a->stride[0];
	lr.acc = acc;
	lr.xs1 = xs[1];
	lr.xs2 = xs[2];
	lr.cols = unit.cols;
	lr.ow = cj.s.ow;
	lr.panels = cj.s.group * eng_div_up(cj.s.mg, ENG_LANES_NR);
	lr.ks = kt;
#ifdef ENG_FMA
	lr.avx512 = eng_act_avx512(ctx);
	/* The AVX-512 tiles take the depth in slices (lanes_slice()). */
	if (lr.avx512 && xs[2] == 1)
		lr.ks = ENG_LANES_KC;
#endif
	t.acc_rs = unit.cols;
	t.xstep = xs[2];
	t.x2 = xs[1];
	t.acc2 = (__s64)cj.s.ow;
	for (u = ub; u < ue; u++) {
		__u64 pi = u % pb, mi = u / pb % mb;
		__u64 g = u / (pb * mb) % cj.s.group;
		__u64 img = u / (pb * mb * cj.s.group);
		__u64 m0 = mi * unit.rows, mc = eng_min(unit.rows, cj.s.mg - m0);
		__u64 p0 = pi * unit.cols, pc = eng_min(unit.cols, np - p0);

		conv_job_init(l, img, g, &cj);
		conv_epi(l, img, g, &e, &o);
		e.avx512 = eng_act_avx512(ctx);
		o.wp = 0;
		o.ow = cj.s.ow;
		/* A tile copies each group's planes once a command run. */
		if (held && held->x != cj.x) {
			lanes_copy_planes(&cj, xp);
			held->x = cj.x;
		}
		lr.x = xp ? xp : (const float *)cj.x;
		lr.p0 = p0;
		lr.pc = pc;
		for (j = 0; j < mc; j += ENG_LANES_NR) {
			__u64 panel = g * eng_div_up(cj.s.mg, ENG_LANES_NR) +
				      (m0 + j) / ENG_LANES_NR;
			const float *pw = (const float *)l->data[1] +
					  panel * kt * ENG_LANES_NR;

			t.nv = mc - j > ENG_NR ? 2 : 1;
			for (k0 = 0; k0 < kt; k0 += t.kc) {
				t.kc = eng_min(lr.ks, kt - k0);
				t.off = off + k0;
				t.w = pw + k0 * ENG_LANES_NR;
				t.pin = k0 > 0;
				t.pout = k0 + t.kc < kt;
				t.pf = panel + 1 < lr.panels ?
				       pw + (2 * kt + k0) * ENG_NR : 0;
				lanes_slice(&t, &lr, j, kt);
			}
		}
		f.acc = acc;
		f.acc_rs = unit.cols;
		f.m0 = m0;
		f.n0 = p0;
		f.plain = epi_plain(&o, &e, m0, mc, add, &has_add);
		f.add = has_add ? add : 0;
		f.act = e.act;
		block_flush(&o, &e, &f, 0, mc, 0, pc);
	}
	return 0;
}

int run_conv(const struct eng_layer *l, __u64 ub, __u64 ue,
	     const struct vnpu_eng_ctx *ctx)
{
	struct eng_conv_shape s;

	if (eng_conv_wino(l) && eng_conv_wino2(l))
		return run_conv_wino2(l, ub, ue, ctx);
	if (eng_conv_wino(l))
		return run_conv_wino(l, ub, ue, ctx);
	if (eng_conv_lanes(l->attrs))
		return run_conv_lanes(l, ub, ue, ctx);
	eng_conv_shape(l, &s);
	if (eng_dw_lanes(l, &s))
		return run_conv_dw_lanes(l, ub, ue, ctx);
	if (eng_dw_windows(&s, l->attrs))
		return run_conv_dw_window(l, ub, ue, ctx);
	if (eng_conv_depthwise(&s))
		return run_conv_dw(l, ub, ue, ctx);
	return run_conv_gemm(l, ub, ue, ctx);
}

/* ---- POOL ------------------------------------------------------------ */

/* The running results of one pooling window. */
struct pool_acc {
	float mx, sum;
	double lp;
	__u64 count, padded;
};

/* Window row @ih, taps [@k0, @k1), into @r. */
static void pool_taps(const struct vnpu_layer_pool *at, const void *xc,
		      __u32 dt, __s64 xsh, __s64 xsw, __u64 h, __u64 w,
		      __s64 ih, __s64 w0, __u64 k0, __u64 k1,
		      struct pool_acc *r)
{
	__u64 kw;
	__u32 i;

	for (kw = k0; kw < k1; kw++) {
		__s64 iw = w0 + (__s64)(kw * at->dilation[1]);
		float v;

		if (ih < (__s64)h + at->pad_end[0] &&
		    iw < (__s64)w + at->pad_end[1])
			r->padded++;
		if (ih < 0 || ih >= (__s64)h || iw < 0 || iw >= (__s64)w)
			continue;
		v = ldf(xc, ih * xsh + iw * xsw, dt);
		r->count++;
		if (at->mode == VNPU_POOL_MAX) {
			if (v > r->mx || v != v)
				r->mx = v;
		} else if (at->mode == VNPU_POOL_AVG) {
			r->sum += v;
		} else {
			double a = m_fabs(v), t = 1;

			for (i = 0; i < at->p; i++)
				t *= a;
			r->lp += t;
		}
	}
}

/*
 * One output's window, each row in stretches with pause points between
 * them: a global window over a huge input is one unit.
 */
static float pool_one(const struct vnpu_layer_pool *at, const void *xc,
		      __u32 dt, __s64 xsh, __s64 xsw, __u64 h, __u64 w,
		      __u64 oh, __u64 ow, struct eng_pacer *pc)
{
	__s64 h0 = (__s64)(oh * at->stride[0]) - at->pad_begin[0];
	__s64 w0 = (__s64)(ow * at->stride[1]) - at->pad_begin[1];
	struct pool_acc r = { .mx = -(float)m_inf() };
	__u64 kh, k0, k1;

	for (kh = 0; kh < at->kernel[0]; kh++) {
		__s64 ih = h0 + (__s64)(kh * at->dilation[0]);

		for (k0 = 0; k0 < at->kernel[1]; k0 = k1) {
			k1 = eng_pace_end(pc, k0, at->kernel[1]);
			pool_taps(at, xc, dt, xsh, xsw, h, w, ih, w0, k0, k1,
				  &r);
			eng_pace(pc, k1 - k0);
		}
	}
	if (at->mode == VNPU_POOL_MAX)
		return r.mx;
	if (at->mode == VNPU_POOL_AVG) {
		if (at->flags & VNPU_POOL_F_COUNT_PAD)
			r.count = r.padded;
		return r.count ? r.sum / (float)r.count : 0.0f;
	}
	if (at->p == 1)
		return (float)r.lp;
	if (at->p == 2)
		return (float)m_sqrt(r.lp);
	return (float)m_pow(r.lp, 1.0 / at->p);
}

/* Windows of at most this many taps may take pool_inside(). */
#define POOL_INSIDE_TAPS	256

/*
 * max or average (@avg) of @v into @acc, as pool_taps() does, per lane:
 * @v where it is a NaN or above @acc, else @acc. With AVX that is vmaxps
 * (@v where @v > @acc, else @acc, a NaN @acc kept) under a NaN @v: the
 * mask does not wait for @acc, so a window's chain is two operations a
 * tap, not four.
 */
static inline v8sf pool_lane(v8sf acc, v8sf v, int avg)
{
	v8si take;

	if (avg)
		return acc + v;
#ifdef ENG_FMA
	take = v != v;
	acc = __builtin_ia32_maxps256(v, acc);
	return (v8sf)(((v8si)v & take) | ((v8si)acc & ~take));
#else
	take = (v > acc) | (v != v);
	return (v8sf)(((v8si)v & take) | ((v8si)acc & ~take));
#endif
}

/*
 * @v if it is a NaN or above @mx, else @mx (pool_taps()' max), without a
 * branch: on random data the branch is mispredicted every other tap.
 */
static inline float pool_max1(float mx, float v)
{
	v4sf a = { mx }, b = { v };
	v4si take = (b > a) | (b != b);

	return ((v4sf)(((v4si)b & take) | ((v4si)a & ~take)))[0];
}

/*
 * Taps of eight outputs @step apart from @p on: with stride 2, the even
 * lanes of @p[0..7] and of @p[7..14], so nothing past the eighth output's
 * tap is read.
 */
static inline v8sf pool_tap8(const float *p, __s64 step)
{
	v8sf v;
	__u32 l;

	if (step == 1)
		return vload(p);
	if (step == 2)
		return __builtin_shufflevector(vload(p), vload(p + 7),
					       0, 2, 4, 6, 9, 11, 13, 15);
	for (l = 0; l < 8; l++)
		v[l] = p[l * step];
	return v;
}

static inline void pool_store8(float *y, __s64 ysw, v8sf acc, int avg,
			       float div)
{
	__u32 l;

	if (avg)
		acc = acc / vbcast(div);
	if (ysw == 1) {
		vstore(y, acc);
		return;
	}
	for (l = 0; l < 8; l++)
		y[(__s64)l * ysw] = acc[l];
}

/* Runs of outputs pool_inside() takes in one pass over a window's taps. */
#define POOL_RUNS	4

/* How pool_runs() takes a window's taps. */
enum pool_how {
	POOL_SUM,	/* averages: the taps' sum */
	POOL_EXACT,	/* maxima: pool_lane() */
	POOL_FAST,	/* maxima: vmaxps, NaNs noted aside (AVX2) */
};

/*
 * @nr runs of eight outputs of pool_inside_step() into @acc, the windows
 * of run r @run floats past run 0's at @p0 (@k0 rows @xsh apart of @k1
 * taps @xsw apart, outputs @step apart), independent chains: a window's
 * chain waits on each tap. POOL_FAST takes a max tap in one vmaxps (@v
 * where @v > @acc, else @acc: pool_lane() while no tap is a NaN) and
 * notes NaNs aside in an unordered compare that stays all ones (a NaN)
 * once set; it returns nonzero when a tap was a NaN, and the caller then
 * takes the runs again with POOL_EXACT, so the bits are pool_lane()'s.
 */
static __attribute__((__always_inline__)) inline int
pool_runs(const float *p0, __u32 k0, __u32 k1, __s64 xsh, __s64 xsw,
	  __s64 step, __u32 nr, enum pool_how how, v8sf *acc)
{
	float init = how == POOL_SUM ? 0.0f : -(float)m_inf();
	__s64 run = 8 * step;
	__u32 kh, kw, r;
#ifdef ENG_FMA
	v8sf seen[POOL_RUNS];

	for (r = 0; r < nr; r++)
		seen[r] = vbcast(0.0f);
#endif

	for (r = 0; r < nr; r++)
		acc[r] = vbcast(init);
	for (kh = 0; kh < k0; kh++)
		for (kw = 0; kw < k1; kw++) {
			const float *p = p0 + kh * xsh + kw * xsw;

			for (r = 0; r < nr; r++) {
				v8sf v = pool_tap8(p + r * run, step);

#ifdef ENG_FMA
				if (how == POOL_FAST) {
					acc[r] = __builtin_ia32_maxps256(v,
									 acc[r]);
					seen[r] = __builtin_ia32_cmpps256(seen[r],
									  v, 3);
					continue;
				}
#endif
				acc[r] = pool_lane(acc[r], v, how == POOL_SUM);
			}
		}
#ifdef ENG_FMA
	if (how == POOL_FAST) {
		for (r = 1; r < nr; r++)
			seen[0] = (v8sf)((v8si)seen[0] | (v8si)seen[r]);
		return __builtin_ia32_movmskps256(seen[0]);
	}
#endif
	return 0;
}

#ifdef ENG_FMA
/* pool_runs() for POOL_EXACT, out of line: only windows with a NaN. */
static __attribute__((__noinline__)) void
pool_runs_exact(const float *p0, __u32 k0, __u32 k1, __s64 xsh, __s64 xsw,
		__s64 step, __u32 nr, v8sf *acc)
{
	pool_runs(p0, k0, k1, xsh, xsw, step, nr, POOL_EXACT, acc);
}
#endif

/* pool_runs() of a max or average (@avg), the fastest way that fits. */
static __attribute__((__always_inline__)) inline void
pool_runs_any(const float *p0, __u32 k0, __u32 k1, __s64 xsh, __s64 xsw,
	      __s64 step, __u32 nr, int avg, v8sf *acc)
{
	if (avg)
		pool_runs(p0, k0, k1, xsh, xsw, step, nr, POOL_SUM, acc);
#ifdef ENG_FMA
	else if (pool_runs(p0, k0, k1, xsh, xsw, step, nr, POOL_FAST, acc))
		pool_runs_exact(p0, k0, k1, xsh, xsw, step, nr, acc);
#else
	else
		pool_runs(p0, k0, k1, xsh, xsw, step, nr, POOL_EXACT, acc);
#endif
}

/*
 * @n f32 outputs, @ysw apart at @y, of max or average windows without
 * dilation whose @k0 rows (the window's rows inside the input) take whole
 * rows of taps inside the input: output o's window starts at
 * @x + o * @step, its rows @xsh apart, its taps @xsw; averages divide by
 * @div. pool_taps()' reads of the taps inside, in the same order without
 * its checks, so the same bits: POOL_RUNS runs of eight outputs at a time
 * (pool_runs()), then eight at a time (the last eight again when @n is
 * not a multiple: the same values).
 */
static __attribute__((__always_inline__)) inline void
pool_inside_step(const struct vnpu_layer_pool *at, const float *x, __u32 k0,
		 __s64 xsh, __s64 xsw, __s64 step, __u64 n, float *y, __s64 ysw,
		 float div)
{
	__u32 kh, kw, k1 = at->kernel[1], r;
	int avg = at->mode == VNPU_POOL_AVG;
	float init = avg ? 0.0f : -(float)m_inf();
	__u64 o = 0;

	for (; o + 8 * POOL_RUNS <= n; o += 8 * POOL_RUNS) {
		v8sf acc[POOL_RUNS];

		pool_runs_any(x + (__s64)o * step, k0, k1, xsh, xsw, step,
			      POOL_RUNS, avg, acc);
		for (r = 0; r < POOL_RUNS; r++)
			pool_store8(y + (__s64)(o + 8 * r) * ysw, ysw, acc[r],
				    avg, div);
	}
	/* A last run of fewer than 8 takes the 8 outputs ending the row. */
	for (; o < n && n >= 8; o += 8) {
		v8sf acc[1];

		if (o + 8 > n)
			o = n - 8;
		pool_runs_any(x + (__s64)o * step, k0, k1, xsh, xsw, step, 1,
			      avg, acc);
		pool_store8(y + (__s64)o * ysw, ysw, acc[0], avg, div);
	}
	for (; o < n; o++) {
		const float *p = x + (__s64)o * step;
		float mx = init, sum = 0;

		for (kh = 0; kh < k0; kh++)
			for (kw = 0; kw < k1; kw++) {
				float v = p[kh * xsh + kw * xsw];

				if (avg)
					sum += v;
				else
					mx = pool_max1(mx, v);
			}
		y[(__s64)o * ysw] = avg ? sum / div : mx;
	}
}

/* pool_inside_step() with the stride as a constant where it is 1 or 2. */
static void pool_inside(const struct vnpu_layer_pool *at, const float *x,
			__u32 k0, __s64 xsh, __s64 xsw, __s64 step, __u64 n,
			float *y, __s64 ysw, float div)
{
	if (step == 1)
		pool_inside_step(at, x, k0, xsh, xsw, 1, n, y, ysw, div);
	else if (step == 2)
		pool_inside_step(at, x, k0, xsh, xsw, 2, n, y, ysw, div);
	else
		pool_inside_step(at, x, k0, xsh, xsw, step, n, y, ysw, div);
}

/*
 * Of a window's @k rows (or taps) from @t0 on, those inside [0, @n):
 * [*@lo, *@hi); *@padded: how many lie before the end of the padding
 * @pad_end past @n, which pool_taps() counts for COUNT_PAD.
 */
static void pool_clip(__s64 t0, __u64 k, __u64 n, __s64 pad_end, __u64 *lo,
		      __u64 *hi, __u64 *padded)
{
	__s64 a = t0 < 0 ? -t0 : 0, b = (__s64)n - t0;
	__s64 p = (__s64)n + pad_end - t0;

	if (a > (__s64)k)
		a = (__s64)k;
	if (b > (__s64)k)
		b = (__s64)k;
	if (p > (__s64)k)
		p = (__s64)k;
	*lo = (__u64)a;
	*hi = b > a ? (__u64)b : (__u64)a;
	*padded = p > 0 ? (__u64)p : 0;
}

/*
 * Output (@oh, @ow) of an f32 max or average pool without dilation whose
 * window crosses the input's edge: the taps inside, in pool_taps()' order
 * without its checks, so the same bits.
 */
static float pool_edge(const struct vnpu_layer_pool *at, const float *x,
		       __s64 xsh, __s64 xsw, __u64 h, __u64 w, __u64 oh,
		       __u64 ow)
{
	__s64 h0 = (__s64)(oh * at->stride[0]) - at->pad_begin[0];
	__s64 w0 = (__s64)(ow * at->stride[1]) - at->pad_begin[1];
	__u64 r0, r1, c0, c1, ph, pw, r, c, count;
	float mx = -(float)m_inf(), sum = 0;

	pool_clip(h0, at->kernel[0], h, at->pad_end[0], &r0, &r1, &ph);
	pool_clip(w0, at->kernel[1], w, at->pad_end[1], &c0, &c1, &pw);
	for (r = r0; r < r1; r++) {
		const float *p = x + (h0 + (__s64)r) * xsh + w0 * xsw;

		for (c = c0; c < c1; c++) {
			float v = p[(__s64)c * xsw];

			if (at->mode == VNPU_POOL_AVG)
				sum += v;
			else
				mx = pool_max1(mx, v);
		}
	}
	if (at->mode == VNPU_POOL_MAX)
		return mx;
	count = (at->flags & VNPU_POOL_F_COUNT_PAD) ? ph * pw :
		(r1 - r0) * (c1 - c0);
	return count ? sum / (float)count : 0.0f;
}

/*
 * Whether pool_edge8() takes the edges of rows of @ow_n outputs: stride
 * 1 over dense f32 rows of at least 8, AVX2's permutes.
 */
static int pool_edge8_fits(const struct vnpu_layer_pool *at, __u64 w,
			   __s64 xsw, __u64 ow_n)
{
#ifdef ENG_FMA
	return ow_n >= 8 && w >= 8 && xsw == 1 && at->stride[1] == 1;
#else
	return 0;
#endif
}

#ifdef ENG_FMA
/*
 * Input columns [@c0, @c0 + 8) of the dense row @p of @w (at least 8)
 * floats, @init where a column lies outside the row: one load inside it
 * and a permute, so windows across the edge take the vector path too.
 */
static inline v8sf pool_row8(const float *p, __s64 c0, __u64 w, float init)
{
	const v8si lane = { 0, 1, 2, 3, 4, 5, 6, 7 };
	__s64 base = c0 < 0 ? 0 : c0 > (__s64)w - 8 ? (__s64)w - 8 : c0;
	__s64 lo = -c0, hi = (__s64)w - c0;
	v8si in, idx;
	v8sf v;

	lo = lo < 0 ? 0 : lo > 8 ? 8 : lo;
	hi = hi < 0 ? 0 : hi > 8 ? 8 : hi;
	in = (lane >= (int)lo) & (lane < (int)hi);
	/* Inside the row, column c0 + l is lane c0 + l - base of the load. */
	idx = (lane + (int)(c0 - base)) & 7;
	v = __builtin_ia32_permvarsf256(vload(p + base), idx);
	return (v8sf)(((v8si)v & in) | ((v8si)vbcast(init) & ~in));
}
#endif

/*
 * Outputs [@b0, @b0 + 8) of output row @oh of an f32 max or average pool
 * without dilation (pool_edge8_fits()) to @out, one per lane, windows
 * across the input's edges included: the taps outside the input read as
 * what changes neither a max nor a sum (-inf, +0: a sum that starts at
 * +0 never is -0), so each lane takes pool_edge()'s taps in its order
 * with those in between, the same bits; averages divide by pool_edge()'s
 * count, lane by lane.
 */
static void pool_edge8(const struct vnpu_layer_pool *at, const float *x,
		       __s64 xsh, __u64 h, __u64 w, __u64 oh, __u64 b0,
		       float *out)
{
#ifdef ENG_FMA
	__s64 h0 = (__s64)(oh * at->stride[0]) - at->pad_begin[0];
	__s64 w0 = (__s64)b0 - at->pad_begin[1];
	__u64 kw = at->kernel[1], r0, r1, ph, c0, c1, pw, r, k, cnt;
	int avg = at->mode == VNPU_POOL_AVG;
	float init = avg ? 0.0f : -(float)m_inf();
	v8sf acc = vbcast(init);
	int l;

	pool_clip(h0, at->kernel[0], h, at->pad_end[0], &r0, &r1, &ph);
	for (r = r0; r < r1; r++)
		for (k = 0; k < kw; k++)
			acc = pool_lane(acc, pool_row8(x + (h0 + (__s64)r) * xsh,
						       w0 + (__s64)k, w, init),
					avg);
	for (l = 0; l < 8; l++) {
		out[l] = acc[l];
		if (!avg)
			continue;
		pool_clip(w0 + l, kw, w, at->pad_end[1], &c0, &c1, &pw);
		cnt = (at->flags & VNPU_POOL_F_COUNT_PAD) ? ph * pw :
		      (r1 - r0) * (c1 - c0);
		out[l] = cnt ? acc[l] / (float)cnt : 0.0f;
	}
#endif
}

/* Runs of ENG_POOL_LANES channels pool_global() takes at once. */
#define POOL_GROUPS	4

/*
 * The windows of @ng runs of ENG_POOL_LANES channels at once (@ng a
 * constant up to POOL_GROUPS), one per lane, for max or average windows
 * of @kh rows of @kw taps inside f32 planes @cs floats apart (rows @xsh
 * apart): each lane takes its window's taps in window order, so it does
 * what pool_taps() does, the same bits. Runs of eight taps come as two
 * 8x8 transposes' worth of one. The runs' chains are independent: one
 * run's chain (a tap's latency each) took about three times as long as
 * its transposes.
 */
static __attribute__((__always_inline__)) inline void
pool_lanes_k(const struct vnpu_layer_pool *at, const float *x, __s64 cs,
	     __s64 xsh, __u64 kh, __u64 kw, float *y, __s64 ycs,
	     struct eng_pacer *pc, int ng)
{
	int avg = at->mode == VNPU_POOL_AVG;
	const __s64 gs = ENG_POOL_LANES * cs;
	v8sf acc[POOL_GROUPS];
	__u64 taps = kh * kw, r, k, k0, k1, j;
	float t[64];
	int l, g;

	for (g = 0; g < ng; g++)
		acc[g] = vbcast(avg ? 0.0f : -(float)m_inf());
	/* Dense rows are one row of all the taps, in the same order. */
	if (xsh == (__s64)kw) {
		kw = taps;
		kh = 1;
	}
	for (r = 0; r < kh; r++) {
		const float *row = x + (__s64)r * xsh;

		for (k0 = 0; k0 < kw; k0 = k1) {
			k1 = eng_pace_end_w(pc, k0, kw, ENG_POOL_LANES * ng);
			for (k = k0; k + 8 <= k1; k += 8) {
				for (g = 0; g < ng; g++) {
					transpose8(row + g * gs + k, cs, t, 8);
					for (j = 0; j < 8; j++)
						acc[g] = pool_lane(acc[g],
								   vload(t + 8 * j), avg);
				}
			}
			for (; k < k1; k++) {
				for (g = 0; g < ng; g++) {
					v8sf v;

					for (l = 0; l < ENG_POOL_LANES; l++)
						v[l] = row[g * gs + l * cs +
							   (__s64)k];
					acc[g] = pool_lane(acc[g], v, avg);
				}
			}
			eng_pace(pc, (k1 - k0) * ENG_POOL_LANES * ng);
		}
	}
	for (g = 0; g < ng; g++) {
		if (avg)
			acc[g] = acc[g] / vbcast((float)taps);
		for (l = 0; l < ENG_POOL_LANES; l++)
			y[(g * ENG_POOL_LANES + l) * ycs] = acc[g][l];
	}
}

static void pool_lanes(const struct vnpu_layer_pool *at, const float *x,
		       __s64 cs, __s64 xsh, __u64 kh, __u64 kw, float *y,
		       __s64 ycs, struct eng_pacer *pc)
{
	pool_lanes_k(at, x, cs, xsh, kh, kw, y, ycs, pc, 1);
}

static void pool_lanes4(const struct vnpu_layer_pool *at, const float *x,
			__s64 cs, __s64 xsh, __u64 kh, __u64 kw, float *y,
			__s64 ycs, struct eng_pacer *pc)
{
	pool_lanes_k(at, x, cs, xsh, kh, kw, y, ycs, pc, POOL_GROUPS);
}

/*
 * Outputs [@e, @end) of a pool with one output per plane whose window
 * lies inside f32 planes: runs of ENG_POOL_LANES channels of one image
 * take pool_lanes(), POOL_GROUPS of them at a time where they can;
 * returns where the runs stop.
 */
static __u64 pool_global(const struct eng_layer *l, __u64 e, __u64 end,
			 struct eng_pacer *pc)
{
	const struct vnpu_layer_pool *at = l->attrs;
	const struct vnpu_cmd_tensor *x = &l->t[0], *y = &l->t[1];
	__u64 c = e % y->dims[1], img = e / y->dims[1], n;
	__s64 xsh = x->rank == 4 ? x->strides[2] : 0;

	for (; e + ENG_POOL_LANES <= end && c + ENG_POOL_LANES <= y->dims[1];
	     e += n, c += n) {
		const float *xc = (const float *)l->data[0] +
				  (__s64)img * x->strides[0] +
				  (__s64)c * x->strides[1];
		float *yc = (float *)l->data[1] + (__s64)img * y->strides[0] +
			    (__s64)c * y->strides[1];

		n = POOL_GROUPS * ENG_POOL_LANES;
		if (e + n <= end && c + n <= y->dims[1]) {
			pool_lanes4(at, xc, x->strides[1], xsh, at->kernel[0],
				    at->kernel[1], yc, y->strides[1], pc);
			continue;
		}
		n = ENG_POOL_LANES;
		pool_lanes(at, xc, x->strides[1], xsh, at->kernel[0],
			   at->kernel[1], yc, y->strides[1], pc);
	}
	return e;
}

/*
 * Rows [@r0, @r1) of the window rows from input row @h0 of plane @xc
 * (rows @xsh apart, columns @xsw) to @d, @wq padded columns each: padded
 * column j is input column j - pad_begin, -inf outside the input, which
 * changes no maximum (pool_max1(), pool_lane()): the same bits as taking
 * the taps inside only.
 */
static void pool_pad_rows(const struct vnpu_layer_pool *at, const float *xc,
			  __s64 xsh, __s64 xsw, __u64 w, __s64 h0, __u64 r0,
			  __u64 r1, __u64 wq, float *d)
{
	__u64 pl = at->pad_begin[1], a = eng_min(pl, wq);
	__u64 b = eng_min(wq, pl + w), r, j;
	float ninf = -(float)m_inf();

	for (r = r0; r < r1; r++, d += wq) {
		const float *row = xc + (h0 + (__s64)r) * xsh;

		for (j = 0; j < a; j++)
			d[j] = ninf;
		if (xsw == 1) {
			for (j = a; j < b; j++)
				d[j] = row[j - pl];
		} else {
			for (j = a; j < b; j++)
				d[j] = row[(__s64)(j - pl) * xsw];
		}
		for (j = b; j < wq; j++)
			d[j] = ninf;
	}
}

/* Window rows pool_sep_row() keeps the row maxima of. */
#define POOL_RING	16

/**
 * struct pool_ring - the row maxima pool_sep_row() keeps between rows
 * @xc: the plane they are of (NULL: none yet)
 * @lo: the first input row kept
 * @hi: the end of the input rows kept, at most POOL_RING past @lo
 * @nan: per slot, whether its row met a NaN
 *
 * Input row ih's maxima (ow_n floats) lie in slot ih % kernel[0] of the
 * part's scratch.
 */
struct pool_ring {
	const float *xc;
	__s64 lo, hi;
	int nan[POOL_RING];
};

/*
 * Whether pool_sep_row() takes an f32 MAX over padded rows (@pad): AVX2
 * at stride 1, AVX-512 at stride 2 (in 16 lanes, where the row maxima
 * cost less than pool_inside()'s windows: not in 8), along dense rows of
 * at least 8 with at least 8 outputs, at most POOL_RING window rows, the
 * row maxima in the scratch.
 */
static int pool_sep_fits(const struct vnpu_layer_pool *at, __u64 w,
			 __s64 xsw, __u64 ow_n, __u64 pad,
			 const struct vnpu_eng_ctx *ctx)
{
#ifdef ENG_FMA
	return pad && at->mode == VNPU_POOL_MAX && ow_n >= 8 && w >= 8 &&
	       xsw == 1 && (at->stride[1] == 1 ||
			    (at->stride[1] == 2 && at->kernel[1] <= 34 &&
			     eng_act_avx512(ctx))) &&
	       at->kernel[0] <= POOL_RING &&
	       at->kernel[0] * ow_n <= pad;
#else
	return 0;
#endif
}

#ifdef ENG_FMA
/*
 * Eight windows' maxima, output columns [@o, @o + 8), over the dense row
 * @row of @w floats (window k1 taps wide from column o - pad_begin on),
 * taps outside the row -inf (pool_row8()): pool_lane() in tap order, or
 * (@fast) vmaxps with NaNs noted in *@seen, as pool_runs() does.
 */
static __attribute__((__always_inline__)) inline v8sf
pool_hmax8(const struct vnpu_layer_pool *at, const float *row, __u64 w,
	   __u64 o, int fast, v8sf *seen)
{
	__s64 c0 = (__s64)o - at->pad_begin[1];
	__u32 k1 = at->kernel[1], kw;
	int inside = c0 >= 0 && c0 + 7 + (__s64)k1 - 1 < (__s64)w;
	v8sf acc = vbcast(-(float)m_inf()), v;

	for (kw = 0; kw < k1; kw++) {
		v = inside ? vload(row + c0 + kw) :
			     pool_row8(row, c0 + kw, w, -(float)m_inf());
		if (fast) {
			acc = __builtin_ia32_maxps256(v, acc);
			*seen = __builtin_ia32_cmpps256(*seen, v, 3);
		} else {
			acc = pool_lane(acc, v, 0);
		}
	}
	return acc;
}

/*
 * pool_hmax8() at stride 2, pool_lane() in tap order: output column
 * o + l's window starts at input column 2 (o + l) - pad_begin, tap t of
 * the eight windows is the even lanes of the columns [c0 + t, c0 + t + 8)
 * and of [c0 + t + 7, c0 + t + 15) (pool_tap8()).
 */
static v8sf pool_hmax8_s2(const struct vnpu_layer_pool *at, const float *row,
			  __u64 w, __u64 o)
{
	__s64 c0 = 2 * (__s64)o - at->pad_begin[1];
	float ninf = -(float)m_inf();
	v8sf acc = vbcast(ninf), a, b;
	__u32 kw;

	for (kw = 0; kw < at->kernel[1]; kw++) {
		a = pool_row8(row, c0 + kw, w, ninf);
		b = pool_row8(row, c0 + kw + 7, w, ninf);
		acc = pool_lane(acc, __builtin_shufflevector(a, b, 0, 2, 4, 6,
							     9, 11, 13, 15), 0);
	}
	return acc;
}

/* pool_hrow() at stride 2 in tap order (a row with a NaN). */
static void pool_hrow_s2(const struct vnpu_layer_pool *at, const float *row,
			 __u64 w, __u64 ow_n, float *hr)
{
	__u64 o;

	for (o = 0; o < ow_n; o += 8) {
		o = eng_min(o, ow_n - 8);
		vstore(hr + o, pool_hmax8_s2(at, row, w, o));
	}
}

/*
 * Input row @ih of plane @xc: the maxima over each output column's
 * window taps in it, to @hr (ow_n floats), eight at a time (the last
 * eight again: the same values); returns whether a tap was a NaN.
 */
static int pool_hrow(const struct vnpu_layer_pool *at, const float *xc,
		     __s64 xsh, __u64 w, __u64 ow_n, __s64 ih, float *hr)
{
	const float *row = xc + ih * xsh;
	v8sf seen = vbcast(0.0f);
	__u64 o;

	for (o = 0; o < ow_n; o += 8) {
		o = eng_min(o, ow_n - 8);
		vstore(hr + o, pool_hmax8(at, row, w, o, 1, &seen));
	}
	if (!__builtin_ia32_movmskps256(seen))
		return 0;
	for (o = 0; o < ow_n; o += 8) {
		o = eng_min(o, ow_n - 8);
		vstore(hr + o, pool_hmax8(at, row, w, o, 0, &seen));
	}
	return 1;
}
#endif

/*
 * Outputs [@ow, @end) of output row @oh of an f32 MAX (pool_sep_fits()),
 * whose window rows inside the input are [@a, @b), to @yr: each window
 * row's maxima (pool_hrow(), kept in @ring for the next output rows),
 * then their maximum row by row. The maximum of a window is that of its
 * rows' maxima taken in order (pool_lane() picks the last NaN, else the
 * first of the largest values, and so does it over consecutive runs of
 * taps), the same bits as pool_taps(); vmaxps where no row met a NaN.
 */
static void pool_sep_row(const struct vnpu_layer_pool *at, const float *xc,
			 __s64 xsh, __u64 w, __u64 ow_n, __s64 a, __s64 b,
			 __u64 ow, __u64 end, float *yr, __s64 ysw,
			 float *ringbuf, struct pool_ring *ring, int avx512)
{
#ifdef ENG_FMA
	const float *rp[POOL_RING];
	__u32 k0 = at->kernel[0], n = (__u32)(b - a), slot, i, rs[POOL_RING];
	int nan = 0;
	__s64 ih = a;
	__u64 o, l;

	if (ring->xc == xc && a >= ring->lo && a <= ring->hi && b >= ring->hi)
		ih = ring->hi;
	if (at->stride[1] == 2 && ih < b) {
		/* 16 lanes (pool_sep_fits()), rows with a NaN in order. */
		float *hr[POOL_RING] = {};
		__u32 nr = (__u32)(b - ih), bad;

		for (i = 0, slot = (__u32)(ih % k0); i < nr; i++, slot++) {
			slot = slot == k0 ? 0 : slot;
			hr[i] = ringbuf + slot * ow_n;
			rs[i] = slot;
		}
		bad = vnpu_eng_pool_hrows_s2_avx512(xc + ih * xsh, xsh, nr, w,
						    ow_n, at->pad_begin[1],
						    at->kernel[1], hr);
		for (i = 0; i < nr; i++) {
			ring->nan[rs[i]] = (bad >> i) & 1;
			if (ring->nan[rs[i]])
				pool_hrow_s2(at, xc + (ih + i) * xsh, w, ow_n,
					     hr[i]);
		}
		ih = b;
	}
	for (slot = (__u32)(ih % k0); ih < b; ih++, slot++) {
		slot = slot == k0 ? 0 : slot;
		ring->nan[slot] = pool_hrow(at, xc, xsh, w, ow_n, ih,
					    ringbuf + slot * ow_n);
	}
	ring->xc = xc;
	ring->lo = a;
	ring->hi = b;
	for (i = 0, slot = (__u32)(a % k0); i < n; i++, slot++) {
		slot = slot == k0 ? 0 : slot;
		rp[i] = ringbuf + slot * ow_n;
		nan |= ring->nan[slot];
	}
	if (avx512 && !nan && ysw == 1 && n) {
		vnpu_eng_pool_vmax_avx512(rp, n, ow, end, yr);
		return;
	}
	for (o = ow; o < end; o += 8) {
		__u64 o8 = eng_min(o, ow_n - 8);
		v8sf acc = vbcast(-(float)m_inf());

		for (i = 0; i < n; i++) {
			v8sf v = vload(rp[i] + o8);

			acc = nan ? pool_lane(acc, v, 0) :
				    __builtin_ia32_maxps256(v, acc);
		}
		if (o8 == o && o + 8 <= end && ysw == 1) {
			vstore(yr + o, acc);
			continue;
		}
		/* Only the part's outputs: [o, end) of o8's eight. */
		for (l = o - o8; l < 8 && o8 + l < end; l++)
			yr[(__s64)(o8 + l) * ysw] = acc[l];
		o = o8;
	}
#endif
}

#ifdef ENG_FMA
/*
 * Rows [@a, @b) of plane @xc (rows @xsh apart, @w floats each) to @pp,
 * @wq floats a row, input column j at @pb + j and -inf in the columns
 * before and after; returns whether a copied float is a NaN.
 */
static int pool_s1_pad(const float *xc, __s64 xsh, __u64 w, __u32 pb,
		       __u64 wq, __s64 a, __s64 b, float *pp)
{
	__u64 n = eng_min(w, wq - pb), j;
	float ninf = -(float)m_inf();
	v8sf seen = vbcast(0.0f), v;
	int nan = 0;
	__s64 ih;

	for (ih = a; ih < b; ih++, pp += wq) {
		const float *row = xc + ih * xsh;

		for (j = 0; j < pb; j++)
			pp[j] = ninf;
		for (j = 0; j + 8 <= n; j += 8) {
			v = vload(row + j);
			seen = __builtin_ia32_cmpps256(seen, v, 3);
			vstore(pp + pb + j, v);
		}
		for (; j < n; j++) {
			pp[pb + j] = row[j];
			nan |= row[j] != row[j];
		}
		for (j = pb + n; j < wq; j++)
			pp[j] = ninf;
	}
	return nan || __builtin_ia32_movmskps256(seen);
}

/*
 * The maximum of @acc and the @n vectors from @p on, @step floats apart,
 * none of them a NaN: vmaxps over consecutive runs, pairs of vectors
 * first (half the chain), each later one kept only where it is above
 * (the first of equal values, as pool_lane() keeps it).
 */
static inline v8sf pool_max_run(v8sf acc, const float *p, __s64 step,
				__u32 n)
{
	v8sf two;
	__u32 i;

	for (i = 0; i + 2 <= n; i += 2, p += 2 * step) {
		two = __builtin_ia32_maxps256(vload(p + step), vload(p));
		acc = __builtin_ia32_maxps256(two, acc);
	}
	if (i < n)
		acc = __builtin_ia32_maxps256(vload(p), acc);
	return acc;
}

/*
 * Each output column's window maximum in the padded row @pr to @hr, eight
 * outputs a vector over @owq columns, output column o's @kw taps from
 * @pr[o] on, in order: vmaxps, or pool_lane() where the plane has a NaN
 * (@nan). The -inf around the input changes no maximum: the same bits as
 * the window's taps inside the input.
 */
static void pool_s1_hrow(const float *pr, __u32 kw, __u64 owq, int nan,
			 float *hr)
{
	__u64 o;
	__u32 k;
	v8sf acc;

	for (o = 0; o < owq; o += 8) {
		acc = vload(pr + o);
		if (!nan) {
			acc = pool_max_run(acc, pr + o + 1, 1, kw - 1);
		} else {
			for (k = 1; k < kw; k++)
				acc = pool_lane(acc, vload(pr + o + k), 0);
		}
		vstore(hr + o, acc);
	}
}
#endif

/*
 * Whether pool_s1() takes an f32 MAX pool: AVX2, eng_pool_s1_floats()'s
 * shapes within the part's scratch, dense rows in and out, every window
 * with a tap inside the input, and not one output per plane
 * (pool_global()).
 */
static int pool_s1_fits(const struct eng_layer *l,
			const struct vnpu_eng_ctx *ctx)
{
#ifdef ENG_FMA
	const struct vnpu_layer_pool *at = l->attrs;
	const struct vnpu_cmd_tensor *x = &l->t[0], *y = &l->t[1];
	__u64 f = eng_pool_s1_floats(at, x, y);

	return f && f * 4 <= ctx->scratch_size && x->strides[3] == 1 &&
	       y->strides[3] == 1 && at->pad_begin[0] < at->kernel[0] &&
	       at->pad_begin[1] < at->kernel[1] && y->dims[2] &&
	       (y->dims[2] > 1 || y->dims[3] > 1) &&
	       (y->dims[2] - 1) * at->stride[0] < x->dims[2] + at->pad_begin[0] &&
	       y->dims[3] - 1 < x->dims[3] + at->pad_begin[1];
#else
	return 0;
#endif
}

/*
 * Outputs [@lo, @hi) of a pool pool_s1_fits() takes, a plane's run of
 * them at a time: the input rows their windows read, padded
 * (pool_s1_pad()), then each one's window maxima (pool_s1_hrow()), all
 * in @scratch, then each output row's maximum of its window rows' maxima,
 * row by row. The maximum of a window is that of its rows' maxima in
 * order (pool_lane() takes the last NaN, else the first of the largest,
 * and so it does over consecutive runs of taps): pool_taps()' bits, with
 * vmaxps where the plane has no NaN.
 */
static void pool_s1(const struct eng_layer *l, __u64 lo, __u64 hi,
		    float *scratch, struct eng_pacer *pc)
{
#ifdef ENG_FMA
	const struct vnpu_layer_pool *at = l->attrs;
	const struct vnpu_cmd_tensor *x = &l->t[0], *y = &l->t[1];
	__u64 c_n = y->dims[1], oh_n = y->dims[2], ow_n = y->dims[3];
	__u64 h = x->dims[2], w = x->dims[3], plane = oh_n * ow_n;
	__u64 owq = (ow_n + 7) & ~7ull, wq = owq + at->kernel[1] - 1;
	__u32 kh = at->kernel[0], s0 = at->stride[0], pt = at->pad_begin[0];
	__u64 p = lo / plane, rem = lo % plane, end, oh, oh1, c0, c1, o, j;
	float *pp = scratch, *hr = scratch + h * wq, *yr;
	__s64 a, b, ra, rb, r;
	const float *xc;
	int nan;
	v8sf acc;

	for (; lo < hi; lo += end - rem, rem = 0, p++) {
		end = eng_min(plane, rem + (hi - lo));
		oh = rem / ow_n;
		oh1 = (end - 1) / ow_n;
		xc = (const float *)l->data[0] +
		     (__s64)(p / c_n) * x->strides[0] +
		     (__s64)(p % c_n) * x->strides[1];
		yr = (float *)l->data[1] + (__s64)(p / c_n) * y->strides[0] +
		     (__s64)(p % c_n) * y->strides[1];
		a = (__s64)(oh * s0) - pt;
		a = a < 0 ? 0 : a;
		b = (__s64)eng_min(oh1 * s0 - pt + kh, h);
		nan = pool_s1_pad(xc, x->strides[2], w, at->pad_begin[1], wq,
				  a, b, pp);
		for (r = 0; r < b - a; r++)
			pool_s1_hrow(pp + r * wq, at->kernel[1], owq, nan,
				     hr + r * owq);
		for (; oh <= oh1; oh++) {
			float *yo = yr + (__s64)oh * y->strides[2];

			ra = (__s64)(oh * s0) - pt;
			rb = (__s64)eng_min(ra + kh, h) - a;
			ra = (ra < 0 ? 0 : ra) - a;
			c0 = oh * ow_n < rem ? rem - oh * ow_n : 0;
			c1 = eng_min(ow_n, end - oh * ow_n);
			for (o = c0 & ~7ull; o < c1; o += 8) {
				acc = vload(hr + ra * owq + o);
				if (!nan)
					acc = pool_max_run(acc, hr + (ra + 1) * owq + o,
							   (__s64)owq,
							   (__u32)(rb - ra - 1));
				for (r = ra + 1; nan && r < rb; r++)
					acc = pool_lane(acc, vload(hr + r * owq + o),
							0);
				if (o >= c0 && o + 8 <= c1) {
					vstore(yo + o, acc);
					continue;
				}
				for (j = eng_max(o, c0); j < o + 8 && j < c1; j++)
					yo[j] = acc[j - o];
			}
		}
		eng_pace(pc, (end - rem) * at->kernel[0] * at->kernel[1]);
	}
#endif
}

/**
 * struct pool_row - where an output row's windows lie
 * @r0: the first of the window rows inside the input
 * @r1: the end of the window rows inside the input
 * @div: what averages over columns [in0, in1) of the row divide by
 */
struct pool_row {
	__u64 r0, r1;
	float div;
};

static void pool_row_init(const struct vnpu_layer_pool *at, __u64 h,
			  __s64 h0, struct pool_row *pr)
{
	__u64 ph;

	pool_clip(h0, at->kernel[0], h, at->pad_end[0], &pr->r0, &pr->r1, &ph);
	if (!(at->flags & VNPU_POOL_F_COUNT_PAD))
		ph = pr->r1 - pr->r0;
	pr->div = (float)(ph * at->kernel[1]);
}

/* Input columns pool_max8_run() takes a row's maximum of at once. */
#define POOL8_COLS	256

typedef unsigned char v32qu_p8 __attribute__((vector_size(32)));
typedef unsigned char v32qu_p8u __attribute__((vector_size(32), aligned(1), may_alias));
typedef unsigned short v16hu_p8 __attribute__((vector_size(32)));
typedef unsigned char v16qu_p8 __attribute__((vector_size(16)));
typedef unsigned char v16qu_p8u __attribute__((vector_size(16), aligned(1), may_alias));

/*
 * max of 8-bit integers, @flip 0x80 for signed ones ((u8)x ^ 0x80 orders
 * as x does, 0 the lowest): the window of output @ow of row @oh of plane
 * @xc one tap at a time; a window wholly in the padding is the lowest value.
 */
static __u8 pool_max8_one(const struct vnpu_layer_pool *at, const __u8 *xc,
			  __s64 xsh, __s64 xsw, __u64 h, __u64 w, __u64 oh,
			  __u64 ow, __u8 flip)
{
	__s64 h0 = (__s64)(oh * at->stride[0]) - at->pad_begin[0];
	__s64 w0 = (__s64)(ow * at->stride[1]) - at->pad_begin[1];
	__u32 kh, kw;
	__u8 acc = 0;

	for (kh = 0; kh < at->kernel[0]; kh++) {
		__s64 ih = h0 + (__s64)kh * at->dilation[0];

		if (ih < 0 || ih >= (__s64)h)
			continue;
		for (kw = 0; kw < at->kernel[1]; kw++) {
			__s64 iw = w0 + (__s64)kw * at->dilation[1];
			__u8 v;

			if (iw < 0 || iw >= (__s64)w)
				continue;
			v = xc[ih * xsh + iw * xsw] ^ flip;
			acc = v > acc ? v : acc;
		}
	}
	return acc ^ flip;
}

/*
 * The maxima over @k taps @d apart of the windows @s apart in the columns
 * @buf into @o[0, @n); inlined with constant strides, the loops vectorise.
 */
static __attribute__((__always_inline__)) inline void
pool8_cols(const __u8 *buf, __u64 n, __u32 s, __u32 k, __u32 d, __u8 *o)
{
	__u64 i;
	__u32 kw;

	for (i = 0; i < n; i++)
		o[i] = buf[i * s];
	for (kw = 1; kw < k; kw++)
		for (i = 0; i < n; i++) {
			__u8 v = buf[i * s + kw * d];

			o[i] = v > o[i] ? v : o[i];
		}
}

/* The larger of each byte of @a and @b (vpmaxub). */
static inline v32qu_p8 pool8_max32(v32qu_p8 a, v32qu_p8 b)
{
	v32qu_p8 m = (v32qu_p8)(a > b);

	return (a & m) | (b & ~m);
}

/*
 * pool8_cols() of windows of 3 columns 2 apart, 16 at a time: of the
 * 16-bit words at @buf and at @buf + 1, the low byte of the larger of
 * a word's bytes and of the high byte of the next one. Reads up to 32
 * bytes past the last window's last column and writes @o up to @n
 * rounded up to 16.
 */
static void pool8_cols_k3s2(const __u8 *buf, __u64 n, __u8 *o)
{
	__u64 i;

	for (i = 0; i < n; i += 16) {
		v16hu_p8 w = (v16hu_p8)*(const v32qu_p8u *)(buf + 2 * i);
		v16hu_p8 v = (v16hu_p8)*(const v32qu_p8u *)(buf + 2 * i + 1);
		v32qu_p8 a = (v32qu_p8)w, b = (v32qu_p8)(w >> 8), c = (v32qu_p8)(v >> 8);

		a = pool8_max32(pool8_max32(a, b), c);
		*(v16qu_p8u *)(o + i) = __builtin_convertvector((v16hu_p8)a & 0xff, v16qu_p8);
	}
}

/*
 * The same for outputs [@ow, @ow + @n) of row @oh, whose windows span at
 * most POOL8_COLS input columns: the maximum per column of the window rows
 * inside the input (the padding's columns the lowest value), then each
 * window's columns of it.
 */
static void pool_max8_run(const struct vnpu_layer_pool *at, const __u8 *xc,
			  __s64 xsh, __s64 xsw, __u64 h, __u64 w, __u64 oh,
			  __u64 ow, __u64 n, __u8 *yr, __s64 ysw, __u8 flip)
{
	__s64 h0 = (__s64)(oh * at->stride[0]) - at->pad_begin[0];
	__s64 c0 = (__s64)(ow * at->stride[1]) - at->pad_begin[1];
	__s64 c1 = c0 + (__s64)((n - 1) * at->stride[1]) +
		   (__s64)(at->kernel[1] - 1) * at->dilation[1] + 1;
	__s64 a = c0 < 0 ? 0 : c0, b = c1 > (__s64)w ? (__s64)w : c1, j;
	/* Slack for pool8_cols_k3s2(). */
	__u8 buf[POOL8_COLS + 32], o[POOL8_COLS + 16], *bc = buf + (a - c0);
	__u32 kh, s = at->stride[1], k = at->kernel[1], d = at->dilation[1];
	__u64 i;

	for (j = 0; j < c1 - c0 + 32; j++)
		buf[j] = 0;
	for (kh = 0; kh < at->kernel[0]; kh++) {
		__s64 ih = h0 + (__s64)kh * at->dilation[0];
		const __u8 *row;

		if (ih < 0 || ih >= (__s64)h)
			continue;
		row = xc + ih * xsh + a * xsw;
		if (xsw == 1) {
			for (j = 0; j < b - a; j++) {
				__u8 v = row[j] ^ flip;

				bc[j] = v > bc[j] ? v : bc[j];
			}
		} else {
			for (j = 0; j < b - a; j++) {
				__u8 v = row[j * xsw] ^ flip;

				bc[j] = v > bc[j] ? v : bc[j];
			}
		}
	}
	if (s == 2 && k == 3 && d == 1)
		pool8_cols_k3s2(buf, n, o);
	else if (s == 2 && d == 1)
		pool8_cols(buf, n, 2, k, 1, o);
	else if (s == 1 && d == 1)
		pool8_cols(buf, n, 1, k, 1, o);
	else
		pool8_cols(buf, n, s, k, d, o);
	if (ysw == 1) {
		for (i = 0; i < n; i++)
			yr[ow + i] = o[i] ^ flip;
		return;
	}
	for (i = 0; i < n; i++)
		yr[(__s64)(ow + i) * ysw] = o[i] ^ flip;
}

#ifdef ENG_FMA
static inline v32qu_p8 pool8_load(const __u8 *p, __u8 flip)
{
	return *(const v32qu_p8u *)p ^ flip;
}

/* Columns -1 (the lowest value) to 30 of the columns 0 to 31 @l. */
static inline v32qu_p8 pool8_after0(v32qu_p8 l)
{
	const v32qu_p8 zero = {};

	return __builtin_shufflevector(zero, l, 0, 32, 33, 34, 35, 36, 37, 38,
				       39, 40, 41, 42, 43, 44, 45, 46, 47, 48,
				       49, 50, 51, 52, 53, 54, 55, 56, 57, 58,
				       59, 60, 61, 62);
}
#endif

/*
 * Whether pool8_k3s2() takes an 8-bit MAX: AVX2, 2-D, windows 3 columns
 * 2 apart (ResNet's stem), at most one column of padding before a row
 * and every window's columns before its end, rows of 32 bytes at least
 * and 16 outputs, dense rows in and out.
 */
static int pool8_k3s2_fits(const struct vnpu_layer_pool *at,
			   const struct vnpu_cmd_tensor *x,
			   const struct vnpu_cmd_tensor *y)
{
#ifdef ENG_FMA
	__u64 w = x->dims[3], ow_n = y->dims[3];

	return x->rank == 4 && at->kernel[1] == 3 && at->stride[1] == 2 &&
	       at->dilation[0] == 1 && at->dilation[1] == 1 &&
	       at->pad_begin[1] <= 1 && w >= 32 && ow_n >= 16 &&
	       2 * (ow_n - 1) + 2 - at->pad_begin[1] < w &&
	       x->strides[3] == 1 && y->strides[3] == 1;
#else
	return 0;
#endif
}

/*
 * Outputs [@ow, @end) of output row @oh of plane @xc (pool8_k3s2_fits())
 * to @yr, sixteen a step (the last sixteen again: the same values): the
 * maximum of the window rows inside the input, column by column, in
 * registers (at 16-bit words, a window's three columns are a word's two
 * bytes and the high byte of the word one byte on), the column of padding
 * before the row the lowest value. Bytes compare unsigned, @flip 0x80 for
 * signed ones.
 */
static void pool8_k3s2(const struct vnpu_layer_pool *at, const __u8 *xc,
		       __s64 xsh, __u64 h, __u64 ow_n, __u64 oh, __u64 ow,
		       __u64 end, __u8 *yr, __u8 flip)
{
#ifdef ENG_FMA
	const v32qu_p8 zero = {};
	__s64 h0 = (__s64)(oh * at->stride[0]) - at->pad_begin[0];
	__s64 r0 = h0 < 0 ? 0 : h0, r1 = h0 + (__s64)at->kernel[0], r, c;
	__u32 pb = at->pad_begin[1];
	__u64 o, o8, e, j;
	v32qu_p8 v, v1, l;
	v16qu_p8 out;

	r1 = r1 > (__s64)h ? (__s64)h : r1;
	for (o = ow; o < end; o = e) {
		o8 = eng_min(o, ow_n - 16);
		e = eng_min(o8 + 16, end);
		c = 2 * (__s64)o8 - pb;
		v = zero;
		v1 = zero;
		for (r = r0; r < r1; r++) {
			const __u8 *p = xc + r * xsh;

			if (c < 0) {
				l = pool8_load(p, flip);
				v = eng_maxu8(v, pool8_after0(l));
				v1 = eng_maxu8(v1, l);
				continue;
			}
			v = eng_maxu8(v, pool8_load(p + c, flip));
			v1 = eng_maxu8(v1, pool8_load(p + c + 1, flip));
		}
		v = eng_maxu8(v, (v32qu_p8)((v16hu_p8)v >> 8));
		v = eng_maxu8(v, (v32qu_p8)((v16hu_p8)v1 >> 8));
		out = __builtin_convertvector((v16hu_p8)v & 0xff, v16qu_p8) ^
		      flip;
		if (o8 == o && e == o8 + 16) {
			*(v16qu_p8u *)(yr + o) = out;
			continue;
		}
		/* Only the part's outputs. */
		for (j = o; j < e; j++)
			yr[j] = out[j - o8];
	}
#endif
}

/*
 * MAX of u8 or i8 (ONNX Runtime's MaxPool of a QDQ model's 8-bit tensors):
 * outputs [@lo, @hi), a row's windows POOL8_COLS input columns at a time
 * through pool_max8_run(), or one at a time when one window is wider.
 */
static void run_pool8(const struct eng_layer *l, __u64 lo, __u64 hi,
		      struct eng_pacer *pc)
{
	const struct vnpu_layer_pool *at = l->attrs;
	const struct vnpu_cmd_tensor *x = &l->t[0], *y = &l->t[1];
	int two = x->rank == 4;
	__u64 oh_n = two ? y->dims[2] : 1, ow_n = y->dims[y->rank - 1];
	__u64 h = two ? x->dims[2] : 1, w = x->dims[x->rank - 1];
	__u64 taps = (__u64)at->kernel[0] * at->kernel[1];
	__u64 span = (__u64)(at->kernel[1] - 1) * at->dilation[1] + 1;
	__u64 most = span <= POOL8_COLS ?
		     (POOL8_COLS - span) / at->stride[1] + 1 : 0;
	__s64 xsh = two ? x->strides[2] : 0, xsw = x->strides[x->rank - 1];
	__s64 ysh = two ? y->strides[2] : 0, ysw = y->strides[y->rank - 1];
	__u8 flip = x->dtype == VNPU_DTYPE_I8 ? 0x80 : 0;
	__u64 e, end, run, ow, oh, c, img;
	int k3s2 = pool8_k3s2_fits(at, x, y);

	/* Where output @lo lies; then stepped along (no divisions a row). */
	ow = lo % ow_n;
	oh = (lo / ow_n) % oh_n;
	c = (lo / (ow_n * oh_n)) % y->dims[1];
	img = lo / (ow_n * oh_n * y->dims[1]);
	for (e = lo; e < hi; ) {
		const __u8 *xc = (const __u8 *)l->data[0] +
				 (__s64)img * x->strides[0] +
				 (__s64)c * x->strides[1];
		__u8 *yr = (__u8 *)l->data[1] + (__s64)img * y->strides[0] +
			   (__s64)c * y->strides[1] + (__s64)oh * ysh;

		end = eng_min(hi, e + ow_n - ow);
		run = most ? eng_min(end - e, most) : 1;
		if (k3s2) {
			run = end - e;
			pool8_k3s2(at, xc, xsh, h, ow_n, oh, ow, ow + run, yr,
				   flip);
		} else if (!most)
			yr[(__s64)ow * ysw] = pool_max8_one(at, xc, xsh, xsw, h,
							    w, oh, ow, flip);
		else
			pool_max8_run(at, xc, xsh, xsw, h, w, oh, ow, run, yr,
				      ysw, flip);
		eng_pace(pc, run * taps);
		e += run;
		ow += run;
		if (ow < ow_n)
			continue;
		ow = 0;
		if (++oh < oh_n)
			continue;
		oh = 0;
		if (++c < y->dims[1])
			continue;
		c = 0;
		img++;
	}
}

/*
 * Output elements, each one window, grouped to about ENG_ELEM_UNIT work,
 * a row of outputs at a time: with f32 max or average windows without
 * dilation of at most POOL_INSIDE_TAPS taps, the columns whose windows lie
 * inside the input's rows take pool_inside() over the window's rows inside
 * the input, the others pool_edge() (MAX rows whose windows cross the
 * edges: all of them pool_inside() over a padded copy, pool_pad_rows());
 * every other f32, f16 or bf16 pool takes pool_one(), a MAX of u8 or i8
 * run_pool8().
 */
/*
 * Whether pool_planes() takes an f32 max or average pool: 2-D, no padding
 * or dilation, every window inside the input (no ceil_mode overhang),
 * dense rows in and dense outputs, and not one output per plane
 * (pool_global()).
 */
static int pool_planes_fit(const struct eng_layer *l)
{
	const struct vnpu_layer_pool *at = l->attrs;
	const struct vnpu_cmd_tensor *x = &l->t[0], *y = &l->t[1];

	if (x->rank != 4 || x->dtype != VNPU_DTYPE_F32 ||
	    y->dtype != VNPU_DTYPE_F32 || at->mode == VNPU_POOL_LP ||
	    at->dilation[0] != 1 || at->dilation[1] != 1 ||
	    at->pad_begin[0] || at->pad_begin[1] || at->pad_end[0] ||
	    at->pad_end[1] ||
	    (__u64)at->kernel[0] * at->kernel[1] > POOL_INSIDE_TAPS ||
	    (y->dims[2] == 1 && y->dims[3] == 1) || !y->dims[2] || !y->dims[3])
		return 0;
	return (y->dims[2] - 1) * at->stride[0] + at->kernel[0] <= x->dims[2] &&
	       (y->dims[3] - 1) * at->stride[1] + at->kernel[1] <= x->dims[3] &&
	       x->strides[3] == 1 && y->strides[3] == 1 &&
	       y->strides[2] == (__s64)y->dims[3] &&
	       y->strides[1] == (__s64)(y->dims[2] * y->dims[3]) &&
	       (y->dims[0] == 1 ||
		y->strides[0] == (__s64)(y->dims[1] * y->strides[1]));
}

#ifdef ENG_FMA
/*
 * pool_runs() of one run of eight windows that start at @x + @idx
 * (floats), their taps gathered.
 */
static __attribute__((__always_inline__)) inline int
pool_gather_runs(const float *x, v8si idx, __u32 k0, __u32 k1, __s64 xsh,
		 enum pool_how how, v8sf *acc)
{
	v8sf seen = vbcast(0.0f);
	__u32 kh, kw;

	*acc = vbcast(how == POOL_SUM ? 0.0f : -(float)m_inf());
	for (kh = 0; kh < k0; kh++)
		for (kw = 0; kw < k1; kw++) {
			v8sf v = eng_gather8f(x + kh * xsh + kw, idx);

			if (how == POOL_FAST) {
				*acc = __builtin_ia32_maxps256(v, *acc);
				seen = __builtin_ia32_cmpps256(seen, v, 3);
			} else {
				*acc = pool_lane(*acc, v, how == POOL_SUM);
			}
		}
	return how == POOL_FAST ? __builtin_ia32_movmskps256(seen) : 0;
}

/*
 * Outputs [@q, @q + @n) of a plane of pool_planes() (@n at least eight),
 * in rows of @ow_n, shorter than eight: eight at a time across rows, the
 * last eight again when @n is not a multiple. Window (oh, ow) starts at
 * @xp + oh * @rstep + ow * stride; @idx[s] holds the starts of outputs
 * s to s + 7 of the plane, less that of row 0. Each window's taps in
 * pool_inside()'s order, a max as POOL_FAST (again as POOL_EXACT where a
 * tap was a NaN), an average's sum divided by @div: the same bits.
 */
static void pool_plane_gather(const struct vnpu_layer_pool *at,
			      const float *xp, __s64 rstep, __s64 xsh,
			      __u64 ow_n, const v8si *idx, __u64 q, __u64 n,
			      float *y, float div, struct eng_pacer *pc)
{
	__u32 k0 = at->kernel[0], k1 = at->kernel[1];
	__u64 o, b;
	v8sf acc;

	for (o = 0; o < n; o += 8) {
		const float *x;

		if (o + 8 > n)
			o = n - 8;
		b = q + o;
		x = xp + (__s64)(b / ow_n) * rstep;
		if (at->mode == VNPU_POOL_AVG) {
			pool_gather_runs(x, idx[b % ow_n], k0, k1, xsh,
					 POOL_SUM, &acc);
			acc = acc / vbcast(div);
		} else if (pool_gather_runs(x, idx[b % ow_n], k0, k1, xsh,
					    POOL_FAST, &acc)) {
			pool_gather_runs(x, idx[b % ow_n], k0, k1, xsh,
					 POOL_EXACT, &acc);
		}
		vstore(y + o, acc);
		eng_pace(pc, 8 * (__u64)k0 * k1);
	}
}
#endif

/*
 * Outputs [@lo, @hi) of a pool pool_planes_fit() takes, an output row's
 * run at a time through pool_inside() (the same reads in the same order
 * as run_pool()'s rows, so the same bits) without a row's setup: small
 * maps are many short rows.
 */
static void pool_planes_rows(const struct eng_layer *l, __u64 lo, __u64 hi,
			     struct eng_pacer *pc)
{
	const struct vnpu_layer_pool *at = l->attrs;
	const struct vnpu_cmd_tensor *x = &l->t[0], *y = &l->t[1];
	__u64 c_n = y->dims[1], oh_n = y->dims[2], ow_n = y->dims[3];
	__u64 sw = at->stride[1], taps = (__u64)at->kernel[0] * at->kernel[1];
	__s64 xsh = x->strides[2], rstep = (__s64)at->stride[0] * xsh;
	float div = (float)taps, *yr = (float *)l->data[1] + lo;
	const float *x0 = l->data[0], *xr;
	__u64 e = lo, run, p, oh, ow;

	p = lo / (oh_n * ow_n);
	oh = lo / ow_n % oh_n;
	ow = lo % ow_n;
	xr = x0 + (__s64)(p / c_n) * x->strides[0] +
	     (__s64)(p % c_n) * x->strides[1] + (__s64)oh * rstep;
	while (e < hi) {
		run = eng_pace_end_w(pc, 0, eng_min(hi - e, ow_n - ow), taps);
		pool_inside(at, xr + (__s64)(ow * sw), at->kernel[0], xsh, 1,
			    (__s64)sw, run, yr, 1, div);
		eng_pace(pc, run * taps);
		e += run;
		yr += run;
		ow += run;
		if (ow < ow_n)
			continue;
		ow = 0;
		xr += rstep;
		if (++oh < oh_n)
			continue;
		oh = 0;
		p++;
		xr = x0 + (__s64)(p / c_n) * x->strides[0] +
		     (__s64)(p % c_n) * x->strides[1];
	}
}

/*
 * pool_planes_rows(), but where a plane's windows follow each other in
 * memory (one row high, vertical stride 1, rows of exactly OW * stride
 * and dense planes: openWakeWord's 1x2 pools over rows of 16 to 4 inputs)
 * the outputs are one run, windows a stride apart, planes and rows alike;
 * on AVX2, rows of fewer than eight outputs by pool_plane_gather().
 */
static void pool_planes(const struct eng_layer *l, __u64 lo, __u64 hi,
			struct eng_pacer *pc)
{
	const struct vnpu_layer_pool *at = l->attrs;
	const struct vnpu_cmd_tensor *x = &l->t[0], *y = &l->t[1];
	__u64 c_n = y->dims[1], ow_n = y->dims[3];
	__u64 h = x->dims[2], w = x->dims[3], sw = at->stride[1];
	__u64 taps = (__u64)at->kernel[0] * at->kernel[1];
	__s64 xsh = x->strides[2];
	float div = (float)taps, *yr = (float *)l->data[1] + lo;
	const float *x0 = l->data[0];
	__u64 e = lo, run;
	int flat = at->kernel[0] == 1 && at->stride[0] == 1 &&
		   xsh == (__s64)w && w == ow_n * sw &&
		   x->strides[1] == (__s64)(h * w) &&
		   (x->dims[0] == 1 || x->strides[0] == (__s64)(c_n * h * w));

	if (flat) {
		for (; e < hi; e += run, yr += run) {
			run = eng_pace_end_w(pc, 0, hi - e, taps);
			pool_inside(at, x0 + (__s64)(e * sw), 1, xsh, 1,
				    (__s64)sw, run, yr, 1, div);
			eng_pace(pc, run * taps);
		}
		return;
	}
#ifdef ENG_FMA
	/*
	 * Rows of fewer than eight outputs in planes of eight or more
	 * (openWakeWord's 2x2 pool over 7 columns: 3 a row) take eight
	 * outputs at a time across a plane's rows, their taps gathered,
	 * where a part holds eight or more of the plane.
	 */
	if (ow_n < 8 && y->dims[2] * ow_n >= 8 &&
	    (__u64)(at->stride[0] * xsh) < (1u << 24) && sw < (1u << 24)) {
		__s64 rstep = (__s64)at->stride[0] * xsh;
		__u64 plane = y->dims[2] * ow_n, p, q, n, s, i;
		v8si idx[8];

		for (s = 0; s < ow_n; s++)
			for (i = 0; i < 8; i++)
				idx[s][i] = (int)((__s64)((s + i) / ow_n) * rstep +
						  (__s64)((s + i) % ow_n * sw));
		for (; e < hi; e += n, yr += n) {
			p = e / plane;
			q = e % plane;
			n = eng_min(hi - e, plane - q);
			if (n < 8) {
				pool_planes_rows(l, e, e + n, pc);
				continue;
			}
			pool_plane_gather(at, x0 + (__s64)(p / c_n) * x->strides[0] +
					  (__s64)(p % c_n) * x->strides[1],
					  rstep, xsh, ow_n, idx, q, n, yr, div,
					  pc);
		}
		return;
	}
#endif
	pool_planes_rows(l, lo, hi, pc);
}

int run_pool(const struct eng_layer *l, __u64 ub, __u64 ue,
	     const struct vnpu_eng_ctx *ctx)
{
	const struct vnpu_layer_pool *at = l->attrs;
	const struct vnpu_cmd_tensor *x = &l->t[0], *y = &l->t[1];
	int two = x->rank == 4;
	__u64 oh_n = two ? y->dims[2] : 1, ow_n = y->dims[y->rank - 1];
	__u64 h = two ? x->dims[2] : 1, w = x->dims[x->rank - 1];
	__u64 taps = (__u64)at->kernel[0] * at->kernel[1];
	__u64 lo, hi, e, in0 = 0, in1 = 0;
	__u64 ow = 0, oh = 0, c = 0, img = 0, next;
	__s64 xsh = two ? x->strides[2] : 0, xsw = x->strides[x->rank - 1];
	__s64 ysh = two ? y->strides[2] : 0, ysw = y->strides[y->rank - 1];
	__u32 size = vnpu_eng_dtype_size(x->dtype);
	int fast = x->dtype == VNPU_DTYPE_F32 && y->dtype == VNPU_DTYPE_F32 &&
		   at->mode != VNPU_POOL_LP && at->dilation[0] == 1 &&
		   at->dilation[1] == 1;
	int edge = fast && taps <= POOL_INSIDE_TAPS;
	int edge8 = edge && pool_edge8_fits(at, w, xsw, ow_n);
	/* MAX rows across the edges: over a padded copy (pool_pad_rows()). */
	__u64 pad = edge ? eng_pool_pad_floats(at, x, y) : 0;
	__u64 wq = pad ? pad / at->kernel[0] : 0;
	/* One output per plane, its window inside dense f32 rows. */
	int global = fast && oh_n == 1 && ow_n == 1 && xsw == 1 &&
		     !at->pad_begin[0] && !at->pad_begin[1] &&
		     at->kernel[0] <= h && at->kernel[1] <= w;
	struct eng_pacer pc;
	struct pool_row pr = {};
	struct pool_ring ring = {};
	__u64 per = eng_pool_per_unit(y, taps);
	int sep;

	/* Columns [in0, in1) of outputs whose windows lie inside each row. */
	if (edge && w >= at->kernel[1]) {
		in0 = eng_div_up(at->pad_begin[1], at->stride[1]);
		in1 = (w - at->kernel[1] + at->pad_begin[1]) / at->stride[1] + 1;
		in1 = eng_min(in1, ow_n);
	}
	if (pad * 4 > ctx->scratch_size)
		pad = 0;
	sep = pool_sep_fits(at, w, xsw, ow_n, pad, ctx);
	/* Past stride 1 only pool_sep_row() pays for the scratch. */
	if (!sep && at->stride[1] != 1)
		pad = 0;
	eng_pacer_init(&pc, ctx);
	lo = eng_min(ub * per, vnpu_eng_numel(y));
	hi = eng_min(ue * per, vnpu_eng_numel(y));
	if (size == 1) {
		run_pool8(l, lo, hi, &pc);
		return 0;
	}
	if (pool_planes_fit(l)) {
		pool_planes(l, lo, hi, &pc);
		return 0;
	}
	if (pool_s1_fits(l, ctx)) {
		pool_s1(l, lo, hi, ctx->scratch, &pc);
		return 0;
	}
	for (e = lo, next = hi; e < hi; ) {
		__u64 end, run, rows;
		const char *xc;
		__s64 yo, h0;
		float *yr;

		/* Runs of channels at once, then one output at a time. */
		run = global ? pool_global(l, e, hi, &pc) : e;
		if (run != e) {
			e = run;
			continue;
		}
		/* Where output e lies: divisions only where a part starts. */
		if (e == next) {
			ow = 0;
			if (++oh == oh_n) {
				oh = 0;
				if (++c == y->dims[1]) {
					c = 0;
					img++;
				}
			}
		} else {
			ow = e % ow_n;
			oh = (e / ow_n) % oh_n;
			c = (e / (ow_n * oh_n)) % y->dims[1];
			img = e / (ow_n * oh_n * y->dims[1]);
		}
		next = e + ow_n - ow;
		xc = (const char *)l->data[0] + size *
		     ((__s64)img * x->strides[0] + (__s64)c * x->strides[1]);
		yo = (__s64)img * y->strides[0] + (__s64)c * y->strides[1] +
		     (__s64)oh * ysh;
		h0 = (__s64)(oh * at->stride[0]) - at->pad_begin[0];
		yr = (float *)l->data[1] + yo;
		if (edge)
			pool_row_init(at, h, h0, &pr);
		rows = pr.r1 - pr.r0;
		end = eng_min(hi, next);
		if (sep && rows) {
			pool_sep_row(at, (const float *)xc, xsh, w, ow_n,
				     h0 + (__s64)pr.r0, h0 + (__s64)pr.r1, ow,
				     ow + (end - e), yr, ysw, ctx->scratch,
				     &ring, eng_act_avx512(ctx));
			eng_pace(&pc, (end - e) * taps);
			e = end;
			continue;
		}
		if (pad && rows) {
			float *d = ctx->scratch;

			pool_pad_rows(at, (const float *)xc, xsh, xsw, w, h0,
				      pr.r0, pr.r1, wq, d);
			while (e < end) {
				run = eng_pace_end_w(&pc, 0, end - e, taps);
				pool_inside(at, d + ow * at->stride[1],
					    (__u32)rows, (__s64)wq, 1,
					    at->stride[1], run,
					    yr + (__s64)ow * ysw, ysw, pr.div);
				eng_pace(&pc, run * taps);
				e += run;
				ow += run;
			}
			continue;
		}
		while (e < end) {
			if (rows && ow >= in0 && ow < in1) {
				__s64 w0 = (__s64)(ow * at->stride[1]) -
					   at->pad_begin[1];

				run = eng_min(end - e, in1 - ow);
				run = eng_pace_end_w(&pc, 0, run, taps);
				pool_inside(at, (const float *)xc +
					    (h0 + (__s64)pr.r0) * xsh + w0 * xsw,
					    (__u32)rows, xsh, xsw,
					    at->stride[1] * xsw, run,
					    yr + (__s64)ow * ysw, ysw, pr.div);
				eng_pace(&pc, run * taps);
				e += run;
				ow += run;
				continue;
			}
			if (edge8) {
				/* Eight windows, the edge's among them. */
				__u64 b0 = eng_min(ow, ow_n - 8), i;
				float out[8];

				pool_edge8(at, (const float *)xc, xsh, h, w,
					   oh, b0, out);
				run = eng_min(end - e, b0 + 8 - ow);
				for (i = 0; i < run; i++)
					yr[(__s64)(ow + i) * ysw] = out[ow + i - b0];
				eng_pace(&pc, run * taps);
				e += run;
				ow += run;
				continue;
			}
			if (edge) {
				yr[(__s64)ow * ysw] =
					pool_edge(at, (const float *)xc, xsh,
						  xsw, h, w, oh, ow);
				eng_pace(&pc, taps);
			} else {
				stf(l->data[1], yo + (__s64)ow * ysw, y->dtype,
				    pool_one(at, xc, x->dtype, xsh, xsw, h, w,
					     oh, ow, &pc));
			}
			e++;
			ow++;
		}
	}
	return 0;
}

// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * AVX512-BF16 micro-kernels of the blocked GEMM (built with -mavx512f
 * -mfma; the BF16 and BW instructions are inline assembly, so they run
 * only when the caller sets VNPU_ENG_F_AVX512_BF16).
 *
 * The operands are bf16 in depth pairs: a 32-bit word holds depths 2p
 * (low half) and 2p + 1 (high half) of one row of A or one column of B,
 * and vdpbf16ps adds both products to an f32 sum. Weights come pre-packed
 * so (vnpu_eng_pair_bf16()); the f32 operand, activations, is rounded to
 * bf16 here (vcvtne2ps2bf16) while it is packed, a column pair of B or a
 * block of A's rows per depth slice.
 *
 * The numbers are those of the instruction: each sum is
 * s = (s + a[2p+1] * b[2p+1]) + a[2p] * b[2p] per pair in depth order,
 * each product exact and each addition rounded to nearest even in f32,
 * subnormal inputs and results flushed to zero; activations round to
 * nearest even, subnormals to zero. An odd depth's last step is the pair
 * (x, 0). The order depends on the shapes only, so any split of a layer
 * gives the same bits, on the NPU and on the CPU device alike.
 *
 * A tile is two panels of A (12 rows) by two of B (32 columns): 24
 * accumulators, two loads of B and twelve broadcasts of A per pair.
 */
#include "vnpu_eng_gemm.h"
#include "vnpu_eng_zmm_tile.h"
#include "vnpu_eng_vmath16.h"

typedef float v16sf_u __attribute__((vector_size(64), aligned(4), may_alias));
typedef int v16si_u __attribute__((vector_size(64), aligned(4), may_alias));

static inline v16sf ld16(const float *p)
{
	return *(const v16sf_u *)p;
}

static inline void st16(float *p, v16sf v)
{
	*(v16sf_u *)p = v;
}

static inline v16si ldi16(const __u32 *p)
{
	return *(const v16si_u *)p;
}

static inline void sti16(__u32 *p, v16si v)
{
	*(v16si_u *)p = v;
}

/* @acc plus the pair products of @a and @b, lane by lane. */
static inline v16sf dp16(v16sf acc, v16si a, v16si b)
{
	__asm__("vdpbf16ps %2, %1, %0" : "+v"(acc) : "v"(a), "v"(b));
	return acc;
}

/* 32 floats, @lo's then @hi's, as 32 bf16 in order. */
static inline v16si bf16x32(v16sf lo, v16sf hi)
{
	v16si w;

	__asm__("vcvtne2ps2bf16 %2, %1, %0" : "=v"(w) : "v"(hi), "v"(lo));
	return w;
}

/* Word 2j from word j (lo's), word 2j + 1 from word 16 + j (hi's). */
static const unsigned short pair_idx[32] __attribute__((aligned(64))) = {
	0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23,
	8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31,
};

/*
 * Columns @lo (low halves) and @hi (high halves) as bf16 pairs, @perm
 * holding pair_idx (a loop loads it once).
 */
static inline v16si pair16p(v16sf lo, v16sf hi, v16si perm)
{
	v16si w = bf16x32(lo, hi);

	__asm__("vpermw %1, %2, %0" : "+v"(w) : "v"(w), "v"(perm));
	return w;
}

static inline v16si pair16(v16sf lo, v16sf hi)
{
	return pair16p(lo, hi, *(const v16si *)pair_idx);
}

/*
 * A tile's parameters, and a tile function's head (tiles[] below): rows
 * [0, 4), [0, 6) or [0, 12) by panels [0, 1) or [0, 2) of columns, @np2 pairs
 * from A's panels @a0 and @a1 (rows 6-11; pair p of row r at
 * + p * ENG_MR + r, or in rows ENG_BF16_ARS words apart) and B's @b0 and
 * @b1 (pair p of column j at + p * ENG_NR + j), then with @ta the tail
 * pair of the rows (ta[r], rows 6-11 at ta[ENG_MR + r]) and of the
 * columns (tb[j], tb[ENG_NR + j]). Sums to @c (rows @rs floats apart),
 * from there when @load; each sum takes its pairs in depth order, one
 * vdpbf16ps each, the tail pair last. Each trip fetches a line of each
 * panel @pd bytes on from its A (a_ahead(): the weights of a tile ahead).
 */
#define TILE_PARAMS							\
	__u64 np2, const __u32 *a0, const __u32 *a1, const __u32 *b0,	\
	const __u32 *b1, const __u32 *ta, const __u32 *tb, float *c,	\
	__u64 rs, int load, struct eng_tile_out *out, __s64 pd
#define TILE_HEAD(name)							\
static __attribute__((__noinline__)) void name(TILE_PARAMS)

/*
 * The full 12x32 tile, nearly all of the time, in one asm statement so
 * that nothing spills (gcc's C tile spilled a third of its sums): row
 * r in zmm(2r) and zmm(2r+1), B's pair row in zmm30 and zmm31, A's word
 * broadcast into zmm29; two pairs a loop trip, then one, then the tail.
 * With @out (struct eng_tile_out) the sums go through the epilogue of the
 * f32 tiles (ZT_STORE_X()), and SiLU or the logistic function at bf16's
 * grade of their own (LG_TILE_ACT(), which may set @out->far), to the
 * output instead of back to @c.
 */
#define BK_DP(addr, z0, z1)						\
	"vpbroadcastd " addr ", %%zmm29\n\t"				\
	"vdpbf16ps %%zmm30, %%zmm29, %%zmm" #z0 "\n\t"			\
	"vdpbf16ps %%zmm31, %%zmm29, %%zmm" #z1 "\n\t"

/*
 * Pair @u of a trip for the tile's rows, A's word of row r at BK_A(u, r)
 * (of a0 for rows 0-5, a1 for 6-11, the variant's addressing); of a0's
 * rows only for the 6x32 tile.
 */
#define BK_STEP6_(u, BK_A)						\
	"vmovdqu32 (64 * " #u ")(%[b]), %%zmm30\n\t"			\
	"vmovdqu32 (64 * " #u ")(%[b], %[bd]), %%zmm31\n\t"		\
	BK_DP(BK_A(u, 0, a0), 0, 1) BK_DP(BK_A(u, 1, a0), 2, 3)		\
	BK_DP(BK_A(u, 2, a0), 4, 5) BK_DP(BK_A(u, 3, a0), 6, 7)		\
	BK_DP(BK_A(u, 4, a0), 8, 9) BK_DP(BK_A(u, 5, a0), 10, 11)
#define BK_STEP_(u, BK_A)						\
	BK_STEP6_(u, BK_A)						\
	BK_DP(BK_A(u, 0, a1), 12, 13) BK_DP(BK_A(u, 1, a1), 14, 15)	\
	BK_DP(BK_A(u, 2, a1), 16, 17) BK_DP(BK_A(u, 3, a1), 18, 19)	\
	BK_DP(BK_A(u, 4, a1), 20, 21) BK_DP(BK_A(u, 5, a1), 22, 23)

/* A in panels (pair u, row r at word 6u + r), or in rows ENG_BF16_ARS apart. */
#define BK_A_PANEL(u, r, a) "(4 * (6 * " #u " + " #r "))(%[" #a "])"
#define BK_A_ROWS(u, r, a)						\
	"(4 * (" #u " + " ZT_STR(ENG_BF16_ARS) " * " #r "))(%[" #a "])"

/* A tile TILE in both forms: @name with A in panels, @name_rows in rows. */
#define BK_TILES(TILE, name)						\
	TILE(name, BK_A_PANEL, "add $48, %[a0]\n\tadd $48, %[a1]\n\t")	\
	TILE(name##_rows, BK_A_ROWS, "add $8, %[a0]\n\tadd $8, %[a1]\n\t")

/*
 * The body of a tile's asm statement: the sums loaded from %[p] (LOADS)
 * or zeroed (ZEROS), two pairs a trip of STEP(u, BK_A) and ADV2 (A's
 * advance), then one, then with %[ta] the tail pair (TAIL: B's setup and
 * the step over the tails' panels), then STORES.
 */
#define BK_BODY(LOADS, ZEROS, STEP, BK_A, ADV2, TAIL, STORES)		\
	"mov %[c], %[p]\n\t"						\
	"cmpl $0, %[load]\n\t"						\
	"je 5f\n\t"							\
	LOADS								\
	"jmp 6f\n"							\
	"5:\n\t"							\
	ZEROS								\
	"6:\n\t"							\
	"cmp $2, %[k]\n\t"						\
	"jb 2f\n"							\
	".p2align 6\n"							\
	"1:\n\t"							\
	STEP(0, BK_A) STEP(1, BK_A)					\
	"prefetcht0 (%[a0], %[pd])\n\t"				\
	"prefetcht0 (%[a1], %[pd])\n\t"				\
	ADV2								\
	"add $128, %[b]\n\t"						\
	"sub $2, %[k]\n\t"						\
	"cmp $2, %[k]\n\t"						\
	"jae 1b\n"							\
	"2:\n\t"							\
	"test %[k], %[k]\n\t"						\
	"jz 3f\n\t"							\
	STEP(0, BK_A)							\
	"3:\n\t"							\
	"cmpq $0, %[ta]\n\t"						\
	"je 4f\n\t"							\
	"mov %[ta], %[a0]\n\t"						\
	"mov %[ta], %[a1]\n\t"						\
	"add $24, %[a1]\n\t"						\
	"mov %[tb], %[b]\n\t"						\
	TAIL								\
	"4:\n\t"							\
	STORES								\
	"vzeroupper\n\t"

/*
 * The constants of vm16_logistic_bf16() for the tile's SiLU, in the order
 * of LG_K(): the fast range's bounds -VM_LOGISTIC_NORMAL and
 * VM_LOGISTIC_NORMAL, -log2(e), p(f)'s coefficients, 1.
 */
static const float lg_k[8] __attribute__((aligned(32))) = {
	-VM_LOGISTIC_NORMAL, VM_LOGISTIC_NORMAL, -VM_LOG2E, VM_LB_P3,
	VM_LB_P2, VM_LB_P1, VM_LB_P0, 1.0f,
};

/* Constant @i of lg_k[] (the asm operand %[lk]), broadcast or not. */
#define LG_K(i) #i " * 4 + %[lk]%{1to16%}"
#define LG_K1(i) #i " * 4 + %[lk]"

/*
 * vm16_logistic_bf16_normal()'s operations on zmm z, in zmm a, b and c,
 * then FIN(z, c) with k5 the lanes where |z| < VM_LOGISTIC_NORMAL (z
 * < VM_LOGISTIC_NORMAL, then z > -VM_LOGISTIC_NORMAL: no NaN), z staying
 * in the others, which k7 gathers.
 */
#define LG_VEC(z, a, b, c, FIN)						\
	"vcmpps $0x11, " LG_K(1) ", %%zmm" #z ", %%k5\n\t"		\
	"vcmpps $0x1e, " LG_K(0) ", %%zmm" #z ", %%k5%{%%k5%}\n\t"	\
	"kandw %%k5, %%k7, %%k7\n\t"					\
	"vmulps " LG_K(2) ", %%zmm" #z ", %%zmm" #a "\n\t"		\
	"vrndscaleps $8, %%zmm" #a ", %%zmm" #b "\n\t"			\
	"vsubps %%zmm" #b ", %%zmm" #a ", %%zmm" #a "\n\t"		\
	"vbroadcastss " LG_K1(3) ", %%zmm" #c "\n\t"			\
	"vfmadd213ps " LG_K(4) ", %%zmm" #a ", %%zmm" #c "\n\t"	\
	"vfmadd213ps " LG_K(5) ", %%zmm" #a ", %%zmm" #c "\n\t"	\
	"vfmadd213ps " LG_K(6) ", %%zmm" #a ", %%zmm" #c "\n\t"	\
	"vscalefps %%zmm" #b ", %%zmm" #c ", %%zmm" #c "\n\t"		\
	"vaddps " LG_K(7) ", %%zmm" #c ", %%zmm" #c "\n\t"		\
	"vrcp14ps %%zmm" #c ", %%zmm" #c "\n\t"			\
	FIN(z, c)

#define LG_SILU(z, c)							\
	"vmulps %%zmm" #c ", %%zmm" #z ", %%zmm" #z "%{%%k5%}\n\t"
#define LG_SIGMOID(z, c)						\
	"vmovaps %%zmm" #c ", %%zmm" #z "%{%%k5%}\n\t"
#define LG_SILU_ROW(z0, z1)						\
	LG_VEC(z0, 24, 25, 26, LG_SILU) LG_VEC(z1, 27, 28, 29, LG_SILU)
#define LG_SIGMOID_ROW(z0, z1)						\
	LG_VEC(z0, 24, 25, 26, LG_SIGMOID)				\
	LG_VEC(z1, 27, 28, 29, LG_SIGMOID)

/*
 * A 32-column tile's own activation (ZT_OUT_X()'s ACT) on the rows ROWS:
 * with out->act ENG_TILE_SILU16 or ENG_TILE_SIGMOID16, the function on
 * each row in place, and out->far set where a lane took none.
 */
#define LG_TILE_ACT(ROWS)						\
	"cmp $" ZT_STR(ENG_TILE_SILU16) ", %[k]\n\t"			\
	"je 20f\n\t"							\
	"cmp $" ZT_STR(ENG_TILE_SIGMOID16) ", %[k]\n\t"		\
	"jne 22f\n\t"							\
	"kxnorw %%k7, %%k7, %%k7\n\t"					\
	ROWS(LG_SIGMOID_ROW)						\
	"jmp 21f\n"							\
	"20:\n\t"							\
	"kxnorw %%k7, %%k7, %%k7\n\t"					\
	ROWS(LG_SILU_ROW)						\
	"21:\n\t"							\
	"kortestw %%k7, %%k7\n\t"					\
	"jc 22f\n\t"							\
	"movl $1, 88(%[out])\n"						\
	"22:\n\t"

/* A 32-column tile of the rows ROWS and the step STEP. */
#define BK_TILE_(name, BK_A, ADV2, ROWS, STEP)				\
TILE_HEAD(name)								\
{									\
	__s64 bd = (const char *)b1 - (const char *)b0;			\
	__u64 rsb = rs * 4;						\
	const float *t;							\
	float *p;							\
									\
	__asm__ __volatile__(BK_BODY(ROWS(ZT_LD), ROWS(ZT_ZERO),	\
				     STEP, BK_A, ADV2,			\
				     "mov $64, %[bd]\n\t"		\
				     STEP(0, BK_A_PANEL),		\
				     ZT_STORE_X(ROWS, LG_TILE_ACT(ROWS))) \
			     : [k] "+r"(np2), [a0] "+r"(a0), [a1] "+r"(a1),	\
			       [b] "+r"(b0), [bd] "+r"(bd), [p] "=&r"(p),	\
			       [t] "=&r"(t), [rsb] "+r"(rsb)		\
			     : [c] "r"(c), [load] "rm"(load), [ta] "rm"(ta), \
			       [tb] "rm"(tb), [pd] "r"(pd), [out] "r"(out),	\
			       [lk] "m"(lg_k)				\
			     : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5",	\
			       "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",	\
			       "xmm12", "xmm13", "xmm14", "xmm15", "xmm16",	\
			       "xmm17", "xmm18", "xmm19", "xmm20", "xmm21",	\
			       "xmm22", "xmm23", "xmm28", "xmm30", "xmm31",	\
			       ZT_OUT_CLOBBER, "k7", "cc", "memory");	\
}

#define BK_TILE(name, BK_A, ADV2)					\
	BK_TILE_(name, BK_A, ADV2, ZT_ROWS, BK_STEP_)

BK_TILES(BK_TILE, tile_12x32)

/*
 * The 6x32 tile (a lone last panel of a unit's rows, when they are not a
 * multiple of 12) likewise, rows 0-5 only, to the output too when the
 * block's rows end with it (the slice's @out_mc). gcc's C tile copied
 * every sum to another register each pair. The 4x32 tile, rows 0-3,
 * takes a lone last panel of which at most SHORT_ROWS rows are used, as
 * the f32 tiles do: 16, 64 and 256 channels (YOLOv8n's and DBNet's
 * layers, ResNet-50's) end on a panel of 4, whose 6x32 tile spent a third
 * of its products on zero rows. The 8x32 tile, rows 0-7, takes a last
 * pair of panels of which at most PAIR_SHORT_ROWS rows are used: 32, 80
 * and 128 channels end on 6 + 2.
 */
#define B6_ROWS(M) ZT_ROWS4(M) M(8, 9) M(10, 11)
#define B4_ROWS(M) ZT_ROWS4(M)
#define B8_ROWS(M) B6_ROWS(M) M(12, 13) M(14, 15)
#define BK_STEP8_(u, BK_A)						\
	BK_STEP6_(u, BK_A)						\
	BK_DP(BK_A(u, 0, a1), 12, 13) BK_DP(BK_A(u, 1, a1), 14, 15)
#define BK_STEP4_(u, BK_A)						\
	"vmovdqu32 (64 * " #u ")(%[b]), %%zmm30\n\t"			\
	"vmovdqu32 (64 * " #u ")(%[b], %[bd]), %%zmm31\n\t"		\
	BK_DP(BK_A(u, 0, a0), 0, 1) BK_DP(BK_A(u, 1, a0), 2, 3)		\
	BK_DP(BK_A(u, 2, a0), 4, 5) BK_DP(BK_A(u, 3, a0), 6, 7)

#define SHORT_ROWS 4
#define PAIR_SHORT_ROWS 8

#define B6_TILE(name, BK_A, ADV2)					\
	BK_TILE_(name, BK_A, ADV2, B6_ROWS, BK_STEP6_)
#define B4_TILE(name, BK_A, ADV2)					\
	BK_TILE_(name, BK_A, ADV2, B4_ROWS, BK_STEP4_)
#define B8_TILE(name, BK_A, ADV2)					\
	BK_TILE_(name, BK_A, ADV2, B8_ROWS, BK_STEP8_)

BK_TILES(B6_TILE, tile_6x32)
BK_TILES(B4_TILE, tile_4x32)
BK_TILES(B8_TILE, tile_8x32)

/*
 * The 12x16 tile (a unit's odd last panel of columns) likewise: row r in
 * zmm(r), B's pair row in zmm30, each of A's words broadcast from memory
 * by its vdpbf16ps, which sums the same products in the same order (the
 * instruction treats its two pair operands alike). The C tile spent 1.4
 * times as long a pair: a register copy per sum and a broadcast each.
 * To the sums only (one register a row: not ZT_OUT()'s); the 4x16, 6x16 and 8x16
 * tiles (the short rows' above at an odd last panel of columns) alike.
 */
#define T16_ROWS(M)							\
	M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7) M(8) M(9) M(10) M(11)
#define T16_LD(z)							\
	"vmovups (%[p]), %%zmm" #z "\n\t"				\
	"add %[rsb], %[p]\n\t"
#define T16_ZERO(z)							\
	"vpxord %%zmm" #z ", %%zmm" #z ", %%zmm" #z "\n\t"
#define T16_ST(z)							\
	"vmovups %%zmm" #z ", (%[p])\n\t"				\
	"add %[rsb], %[p]\n\t"
#define T16_DP(addr, z)							\
	"vdpbf16ps " addr "%{1to16%}, %%zmm30, %%zmm" #z "\n\t"
#define T16_STEP_(u, BK_A)						\
	"vmovdqu32 (64 * " #u ")(%[b]), %%zmm30\n\t"			\
	T16_DP(BK_A(u, 0, a0), 0) T16_DP(BK_A(u, 1, a0), 1)		\
	T16_DP(BK_A(u, 2, a0), 2) T16_DP(BK_A(u, 3, a0), 3)		\
	T16_DP(BK_A(u, 4, a0), 4) T16_DP(BK_A(u, 5, a0), 5)		\
	T16_DP(BK_A(u, 0, a1), 6) T16_DP(BK_A(u, 1, a1), 7)		\
	T16_DP(BK_A(u, 2, a1), 8) T16_DP(BK_A(u, 3, a1), 9)		\
	T16_DP(BK_A(u, 4, a1), 10) T16_DP(BK_A(u, 5, a1), 11)

#define T6_ROWS(M) M(0) M(1) M(2) M(3) M(4) M(5)
#define T6_STEP_(u, BK_A)						\
	"vmovdqu32 (64 * " #u ")(%[b]), %%zmm30\n\t"			\
	T16_DP(BK_A(u, 0, a0), 0) T16_DP(BK_A(u, 1, a0), 1)		\
	T16_DP(BK_A(u, 2, a0), 2) T16_DP(BK_A(u, 3, a0), 3)		\
	T16_DP(BK_A(u, 4, a0), 4) T16_DP(BK_A(u, 5, a0), 5)
#define T4_ROWS(M) M(0) M(1) M(2) M(3)
#define T4_STEP_(u, BK_A)						\
	"vmovdqu32 (64 * " #u ")(%[b]), %%zmm30\n\t"			\
	T16_DP(BK_A(u, 0, a0), 0) T16_DP(BK_A(u, 1, a0), 1)		\
	T16_DP(BK_A(u, 2, a0), 2) T16_DP(BK_A(u, 3, a0), 3)
#define T8_ROWS(M) T6_ROWS(M) M(6) M(7)
#define T8_STEP_(u, BK_A)						\
	T6_STEP_(u, BK_A)						\
	T16_DP(BK_A(u, 0, a1), 6) T16_DP(BK_A(u, 1, a1), 7)

/* A 16-column tile of the rows ROWS and the step STEP. */
#define T16_TILE_(name, BK_A, ADV2, ROWS, STEP)				\
TILE_HEAD(name)								\
{									\
	__u64 rsb = rs * 4;						\
	float *p;							\
									\
	(void)b1;							\
	(void)out;							\
	__asm__ __volatile__(BK_BODY(ROWS(T16_LD), ROWS(T16_ZERO),	\
				     STEP, BK_A, ADV2,			\
				     STEP(0, BK_A_PANEL),		\
				     "mov %[c], %[p]\n\t"		\
				     ROWS(T16_ST))			\
			     : [k] "+r"(np2), [a0] "+r"(a0), [a1] "+r"(a1),	\
			       [b] "+r"(b0), [p] "=&r"(p)		\
			     : [c] "r"(c), [load] "rm"(load), [ta] "rm"(ta), \
			       [tb] "rm"(tb), [pd] "r"(pd), [rsb] "r"(rsb)	\
			     : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5",	\
			       "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",	\
			       "xmm30", "cc", "memory");		\
}

#define T16_TILE(name, BK_A, ADV2)					\
	T16_TILE_(name, BK_A, ADV2, T16_ROWS, T16_STEP_)
#define T6_TILE(name, BK_A, ADV2)					\
	T16_TILE_(name, BK_A, ADV2, T6_ROWS, T6_STEP_)
#define T4_TILE(name, BK_A, ADV2)					\
	T16_TILE_(name, BK_A, ADV2, T4_ROWS, T4_STEP_)
#define T8_TILE(name, BK_A, ADV2)					\
	T16_TILE_(name, BK_A, ADV2, T8_ROWS, T8_STEP_)

BK_TILES(T16_TILE, tile_12x16)
BK_TILES(T6_TILE, tile_6x16)
BK_TILES(T4_TILE, tile_4x16)
BK_TILES(T8_TILE, tile_8x16)

typedef void (*tile_fn)(TILE_PARAMS);

/*
 * [A in rows][rows: a lone panel's first SHORT_ROWS, one panel, two
 * panels' first PAIR_SHORT_ROWS, two panels][two column panels]
 */
static const tile_fn tiles[2][4][2] = {
	{ { tile_4x16, tile_4x32 }, { tile_6x16, tile_6x32 },
	  { tile_8x16, tile_8x32 }, { tile_12x16, tile_12x32 } },
	{ { tile_4x16_rows, tile_4x32_rows },
	  { tile_6x16_rows, tile_6x32_rows },
	  { tile_8x16_rows, tile_8x32_rows },
	  { tile_12x16_rows, tile_12x32_rows } },
};

/*
 * Depth [0, @kc) of the @w (at most 32) columns of f32 B at @s (rows at
 * b + off[k], or panel q's row k at b + q * b_ps + k * ENG_NR), from
 * column @c0, as pair panels at @dst (ENG_NR pairs a row, panel q at
 * + q * @ps), the odd depth's last row to @tail (pairs (x, 0), panel q at
 * + q * @tps). Columns past @w are the source's (its slack or zero
 * panels), never used. Rows at offsets lie a plane apart (a channel, a
 * tap of the window), which the hardware's prefetchers do not follow:
 * both panels' columns are read a row at a time, PACK_AHEAD rows fetched
 * ahead.
 */
#define PACK_AHEAD 32

/* The 16 floats at @p in the lanes of @m, zero in the others (no fault). */
static inline v16sf ldm16(const float *p, __u16 m)
{
	v16sf v;

	__asm__("vmovups %1, %0%{%2%}%{z%}" : "=v"(v)
		: "m"(*(const float (*)[16])p), "Yk"(m));
	return v;
}

/*
 * The lanes of the 16 columns from @col (of @e->n) that tap i of a
 * kernel row reads inside the input, to @m[i]: those of columns before
 * @e->n whose row position plus the tap's reach stays in the row.
 */
static void edge_masks(const struct eng_bf16_edges *e, __u64 col, __u16 *m)
{
	__s64 w = (__s64)e->w, c = (__s64)(col % e->w), x;
	__u32 i, j;

	for (i = 0; i < e->kw; i++)
		m[i] = 0;
	for (j = 0; j < ENG_NR && col + j < e->n; j++) {
		for (i = 0; i < e->kw; i++) {
			x = c + (__s64)(i * e->dil) - (__s64)e->pad;
			if (x >= 0 && x < w)
				m[i] |= (__u16)(1u << j);
		}
		if (++c == w)
			c = 0;
	}
}

/*
 * Each panel's edge_masks(), kept for the next column pair's: the same
 * where its columns start at the same place in a row and end before the
 * last (@key: that place, or ~0 for none).
 */
struct edge_memo {
	__u64 key[2];
	__u16 m[2][ENG_BF16_EDGE_KW];
};

/*
 * pack_b_pairs() from a convolution's input read in place (@s->edges):
 * each load under its tap's lanes, so that taps past a row's ends and
 * columns past the last read zeros, as a window's padding would give.
 */
static void pack_b_edges(const struct eng_bf16_slice *s, __u64 c0, __u64 nq,
			 const float *const *b, __u32 *dst, __u64 ps,
			 __u32 *tail, __u64 tps, struct edge_memo *em)
{
	const struct eng_bf16_edges *e = s->edges;
	const v16si perm = *(const v16si *)pair_idx;
	const __s32 *off = s->off;
	__u16 (*m)[ENG_BF16_EDGE_KW] = em->m;
	__u64 q, k, col, key;
	__u32 i = (__u32)(s->e_k0 % e->kw), i1;

	for (q = 0; q < nq; q++) {
		col = s->e_q0 + c0 + q * ENG_NR;
		key = col + ENG_NR <= e->n ? col % e->w : ~0ull;
		if (key == ~0ull || key != em->key[q])
			edge_masks(e, col, m[q]);
		em->key[q] = key;
	}
	for (k = 0; k + 1 < s->kc; k += 2) {
		i1 = i + 1 == e->kw ? 0 : i + 1;
		for (q = 0; q < nq; q++)
			sti16(dst + q * ps + k / 2 * ENG_NR,
			      pair16p(ldm16(b[q] + off[k], m[q][i]),
				      ldm16(b[q] + off[k + 1], m[q][i1]),
				      perm));
		i = i1 + 1 == e->kw ? 0 : i1 + 1;
	}
	for (q = 0; k < s->kc && q < nq; q++)
		sti16(tail + q * tps,
		      pair16(ldm16(b[q] + off[k], m[q][i]), (v16sf){}));
}

static void pack_b_pairs(const struct eng_bf16_slice *s, __u64 c0, __u64 w,
			 __u32 *dst, __u64 ps, __u32 *tail, __u64 tps,
			 struct edge_memo *em)
{
	__u64 nq = eng_div_up(w, ENG_NR), q, k;
	const float *b[2];
	const v16sf z = {};

	for (q = 0; q < nq; q++)
		b[q] = s->off ? s->fb + c0 + q * ENG_NR :
		       s->fb + (c0 / ENG_NR + q) * s->fb_ps;
	if (s->edges) {
		pack_b_edges(s, c0, nq, b, dst, ps, tail, tps, em);
		return;
	}
	if (!s->off) {
		for (q = 0; q < nq; q++)
			for (k = 0; k + 1 < s->kc; k += 2)
				sti16(dst + q * ps + k / 2 * ENG_NR,
				      pair16(ld16(b[q] + k * ENG_NR),
					     ld16(b[q] + (k + 1) * ENG_NR)));
		k = s->kc & ~1ull;
	} else {
		/* In locals: the stores may alias what s points to. */
		const __s32 *off = s->off;
		const v16si perm = *(const v16si *)pair_idx;
		__u64 kc = s->kc, ka = kc > PACK_AHEAD + 1 ?
				      kc - PACK_AHEAD - 1 : 0;

		for (k = 0; k + 1 < kc; k += 2) {
			__s64 o0 = off[k], o1 = off[k + 1];

			if (k < ka)
				for (q = 0; q < nq; q++) {
					__builtin_prefetch(b[q] +
							   off[k + PACK_AHEAD]);
					__builtin_prefetch(b[q] +
							   off[k + PACK_AHEAD + 1]);
				}
			for (q = 0; q < nq; q++)
				sti16(dst + q * ps + k / 2 * ENG_NR,
				      pair16p(ld16(b[q] + o0), ld16(b[q] + o1),
					      perm));
		}
	}
	if (s->kc % 2)
		for (q = 0; q < nq; q++)
			sti16(tail + q * tps,
			      pair16(ld16(s->off ? b[q] + s->off[k] :
					  b[q] + k * ENG_NR), z));
}

void vnpu_eng_bf16_pack_row(const float *row, __u64 kc, __u32 *d)
{
	float part[32];
	__u64 k, i;

	/* 32 depths to 16 words, the last run through a copy. */
	for (k = 0; k + 32 <= kc; k += 32)
		sti16(d + k / 2, bf16x32(ld16(row + k), ld16(row + k + 16)));
	if (k < kc) {
		for (i = 0; i < 32; i++)
			part[i] = k + i < kc ? row[k + i] : 0.0f;
		sti16(d + k / 2, bf16x32(ld16(part), ld16(part + 16)));
	}
}

void vnpu_eng_bf16_pack_a(const float *src, __s64 rs, __u64 rows, __u64 kc,
			  __u32 *dst, __u32 *tail)
{
	__u64 pn = eng_div_up(rows, ENG_MR) * ENG_MR, r, k;

	for (r = 0; r < pn; r++) {
		__u32 *d = dst + r * ENG_BF16_ARS;

		if (r >= rows) {
			for (k = 0; k < kc / 2; k += 16)
				sti16(d + k, (v16si){});
			if (kc % 2)
				tail[r] = 0;
			continue;
		}
		vnpu_eng_bf16_pack_row(src + (__s64)r * rs, kc, d);
		if (kc % 2)
			tail[r] = d[kc / 2] & 0xffff;
	}
}

/*
 * The rows' tail pairs of pre-packed A: the last depth of each panel is
 * a plain row of ENG_MR bf16 (vnpu_eng_pair_bf16()).
 */
static void tail_a(const struct eng_bf16_slice *s, __u64 ma, __u32 *ta)
{
	const __u16 *last = (const __u16 *)(s->a + (s->kc / 2) * ENG_MR);
	__u64 i, r;

	for (i = 0; i < ma; i++)
		for (r = 0; r < ENG_MR; r++)
			ta[i * ENG_MR + r] = last[i * s->a_ps * 2 + r];
}

/* The same for pre-packed B: its last depth is a row of ENG_NR bf16. */
static void tail_b(const struct eng_bf16_slice *s, __u64 j, __u64 np,
		   __u32 *tb)
{
	const __u16 *last = (const __u16 *)(s->b + (s->kc / 2) * ENG_NR);
	__u64 q, c;

	for (q = 0; q < np; q++)
		for (c = 0; c < ENG_NR; c++)
			tb[q * ENG_NR + c] = last[(j + q) * s->b_ps * 2 + c];
}

/* The ENG_MR words at @p (a panel's pair of its rows) in lanes 0-5. */
static inline v16si ld6(const __u32 *p)
{
	const __u16 m = (1u << ENG_MR) - 1;
	v16si w;

	__asm__("vmovdqu32 %1, %0%{%2%}%{z%}" : "=v"(w)
		: "m"(*(const __u32 (*)[ENG_MR])p), "Yk"(m));
	return w;
}

/* The word at @p in every lane. */
static inline v16si bc16(const __u32 *p)
{
	v16si w;

	__asm__("vpbroadcastd %1, %0" : "=v"(w) : "m"(*p));
	return w;
}

#define NARROW_COLS 2

/* Panel @q's sums of column @c from @acc (zero unless @s->load). */
static inline v16sf narrow_ld(const struct eng_bf16_slice *s,
			      const float *acc, int q, int c)
{
	float v[16] = {};
	int r;

	for (r = 0; s->load && r < ENG_MR; r++)
		v[r] = acc[(q * ENG_MR + r) * s->acc_rs + c];
	return *(const v16sf *)v;
}

static inline void narrow_st(const struct eng_bf16_slice *s, float *acc,
			     int q, int c, v16sf sum)
{
	float v[16];
	int r;

	*(v16sf *)v = sum;
	for (r = 0; r < ENG_MR; r++)
		acc[(q * ENG_MR + r) * s->acc_rs + c] = v[r];
}

/*
 * The narrow blocks' kernel (NARROW_COLS columns or fewer: a direct
 * convolution's last columns past its whole panels, such as a 7x7 map's
 * 49th): eight panels of A from @a (panel q at + q * @s->a_ps) by @NC
 * columns of the B pairs at @b, as a mat-vec per column: per pair one
 * masked load of a panel's six words, one broadcast of the column's word
 * and one vdpbf16ps (lanes 0-5: the panel's rows; in zmm registers,
 * which gcc allocates all 32 of), the tail pair (@ta, @tb) last. The
 * same chain of each sum as the tiles' (the instruction treats its two
 * pair operands alike), without their 16 columns a pair: the 12x16 tile
 * took a third as long as a 12x32 one for one column.
 */
static __attribute__((__always_inline__)) inline
void narrow8(const struct eng_bf16_slice *s, const __u32 *a, const __u32 *b,
	     const __u32 *ta, const __u32 *tb, float *acc, const int NC)
{
	__u64 np2 = s->kc / 2, p;
	v16sf sum[8][2];
	int q, c;

#pragma GCC unroll 8
	for (q = 0; q < 8; q++)
#pragma GCC unroll 2
		for (c = 0; c < NC; c++)
			sum[q][c] = narrow_ld(s, acc, q, c);
	for (p = 0; p <= np2; p++) {
		const __u32 *bp = p < np2 ? b + p * ENG_NR : tb;

		if (p == np2 && !ta)
			break;
#pragma GCC unroll 8
		for (q = 0; q < 8; q++) {
			v16si av = ld6(p < np2 ? a + q * s->a_ps + p * ENG_MR :
				      ta + q * ENG_MR);

#pragma GCC unroll 2
			for (c = 0; c < NC; c++)
				sum[q][c] = dp16(sum[q][c], av, bc16(bp + c));
		}
	}
#pragma GCC unroll 8
	for (q = 0; q < 8; q++)
#pragma GCC unroll 2
		for (c = 0; c < NC; c++)
			narrow_st(s, acc, q, c, sum[q][c]);
}

/* One panel likewise (the last few of a block). */
static void narrow1(const struct eng_bf16_slice *s, const __u32 *a,
		    const __u32 *b, const __u32 *ta, const __u32 *tb,
		    float *acc, __u64 nc)
{
	__u64 np2 = s->kc / 2, p, c;

	for (c = 0; c < nc; c++) {
		v16sf sum = narrow_ld(s, acc, 0, c);

		for (p = 0; p < np2; p++)
			sum = dp16(sum, ld6(a + p * ENG_MR),
				   bc16(b + p * ENG_NR + c));
		if (ta)
			sum = dp16(sum, ld6(ta), bc16(tb + c));
		narrow_st(s, acc, 0, c, sum);
	}
}

/* Columns [0, @nc) of every panel of @s by narrow8() and narrow1(). */
static void narrow(const struct eng_bf16_slice *s, const __u32 *b,
		   const __u32 *ta, const __u32 *tb, __u64 nc)
{
	__u64 ma = eng_div_up(s->mc, ENG_MR), i;

	for (i = 0; i < ma; i += i + 8 <= ma ? 8 : 1) {
		const __u32 *a = s->a + i * s->a_ps;
		const __u32 *t = ta ? ta + i * ENG_MR : 0;
		float *acc = s->acc + i * ENG_MR * s->acc_rs;

		if (i + 8 > ma)
			narrow1(s, a, b, t, tb, acc, nc);
		else if (nc == 1)
			narrow8(s, a, b, t, tb, acc, 1);
		else
			narrow8(s, a, b, t, tb, acc, 2);
	}
}

/*
 * Bytes from the A of the tile at row pair @i, column pair @j to the
 * A a tile should fetch ahead: in the first column pair, whose tiles read
 * the slice's weights from memory, the next row pair's; in the last
 * column pair's last tile the panels' next slice (after the last slice,
 * past it: prefetches do not fault); else 0, its own lines, which the
 * first column pair left in L2 (fetching them into L1 too evicted the B
 * pairs the other tiles of a column pair share: DBNet's 160x160 layers
 * lost 7-10%). A in rows (a GEMM's activations) fetches its own too.
 */
static __s64 a_ahead(const struct eng_bf16_slice *s, __u64 i, __u64 ma,
		     __u64 j, __u64 nb)
{
	if (s->a_rows)
		return 0;
	if (!j && i + 2 < ma)
		return (__s64)(2 * s->a_ps * 4);
	if (j + 2 >= nb && i + 2 >= ma)
		return (__s64)(s->kc / 2 * ENG_MR * 4) -
		       (__s64)(i * s->a_ps * 4);
	return 0;
}

/* The rows of tiles[][rows][]: a lone short panel, one, a short pair, two. */
static const int tile_h[4] = { SHORT_ROWS, ENG_MR, PAIR_SHORT_ROWS,
			       2 * ENG_MR };

/*
 * The rows of a block of @mc that its tiles cover without reaching past
 * @mc: all when the last tile's rows end there (a remainder of 0, 4, 6 or
 * 8 past the whole 12s), else the whole 12s.
 */
static __u64 out_rows(__u64 mc)
{
	__u64 whole = mc / (2 * ENG_MR) * 2 * ENG_MR, rem = mc - whole;

	return rem == SHORT_ROWS || rem == ENG_MR || rem == PAIR_SHORT_ROWS ?
	       mc : whole;
}

/*
 * Whether the slice's out_fn is due on the outputs of the tile that has
 * just stored to @o: always, but after the tile's own SiLU or logistic
 * function only where it left lanes (@o->far, which this clears).
 */
static int out_fn_due(struct eng_tile_out *o)
{
	int due = o->far || (o->act != ENG_TILE_SILU16 &&
			     o->act != ENG_TILE_SIGMOID16);

	o->far = 0;
	return due;
}

void vnpu_eng_slice_bf16(const struct eng_bf16_slice *s)
{
	__u64 ma = eng_div_up(s->mc, ENG_MR), nb = eng_div_up(s->nc, ENG_NR);
	__u64 np2 = s->kc / 2, i, j, out_mc = 0, out_nc = 0;
	__u32 *ta = s->work, *tb = ta + ENG_GEMM_MC, *bw = tb + 2 * ENG_NR;
	int odd = s->kc % 2;
	/*
	 * A lone last panel of SHORT_ROWS rows or fewer: the 4-row tiles; a
	 * last pair of PAIR_SHORT_ROWS or fewer: the 8-row ones.
	 */
	int short_m = ma % 2 && s->mc - (ma - 1) * ENG_MR <= SHORT_ROWS;
	struct eng_tile_out out = {};
	struct edge_memo em = { .key = { ~0ull, ~0ull } };

	/*
	 * Tiles of 32 columns go to the output, of all rows when the last
	 * tile's rows end the block; the others to the sums.
	 */
	if (s->out) {
		out_mc = out_rows(s->mc);
		out_nc = s->nc / (2 * ENG_NR) * 2 * ENG_NR;
		out.rsb = (__u64)s->out->out_rs * 4;
		out.res_rsb = s->out->out_res_rs * 4;
		out.act = s->out->out_act;
		out.alpha = s->out->out_alpha;
		out.beta = s->out->out_beta;
		s->out->out_mc = out_mc;
		s->out->out_nc = out_nc;
	}

	if (odd && !s->a_tail)
		tail_a(s, ma, ta);
	else if (odd)
		ta = (__u32 *)s->a_tail;
	for (j = 0; j < nb; j += 2) {
		int two_n = j + 1 < nb;
		const __u32 *b0, *b1;

		if (s->bc) {
			b0 = s->bc + j * s->bc_ps;
			b1 = b0 + s->bc_ps;
			if (s->fb)
				pack_b_pairs(s, j * ENG_NR,
					     (two_n ? 2 : 1) * ENG_NR,
					     s->bc + j * s->bc_ps, s->bc_ps,
					     s->bc + j * s->bc_ps + np2 * ENG_NR,
					     s->bc_ps, &em);
			/* The tiles read the two tails side by side. */
			for (i = 0; odd && i < ENG_NR; i++) {
				tb[i] = b0[np2 * ENG_NR + i];
				tb[ENG_NR + i] = two_n ? b1[np2 * ENG_NR + i] : 0;
			}
		} else if (s->fb) {
			pack_b_pairs(s, j * ENG_NR,
				     (two_n ? 2 : 1) * ENG_NR, bw,
				     np2 * ENG_NR, tb, ENG_NR, &em);
			b0 = bw;
			b1 = bw + np2 * ENG_NR;
		} else {
			b0 = s->b + j * s->b_ps;
			b1 = b0 + s->b_ps;
			if (odd)
				tail_b(s, j, two_n ? 2 : 1, tb);
		}
		if (!s->a_rows && s->nc <= NARROW_COLS) {
			narrow(s, b0, odd ? ta : 0, tb, s->nc);
			continue;
		}
		for (i = 0; i < ma; i += 2) {
			int rows = i + 1 >= ma ? (short_m ? 0 : 1) :
				   s->mc - i * ENG_MR <= PAIR_SHORT_ROWS ? 2 : 3;
			const __u32 *a0 = s->a + i * s->a_ps;
			struct eng_tile_out *o = 0;

			if (i * ENG_MR < out_mc && j * ENG_NR < out_nc) {
				vnpu_eng_tile_out(s->out, i * ENG_MR,
						  j * ENG_NR, 2 * ENG_NR, &out);
				o = &out;
				vnpu_eng_out_ahead(o, tile_h[rows], 2 * ENG_NR);
			}
			tiles[s->a_rows][rows][two_n](np2, a0, a0 + s->a_ps, b0, b1,
					    odd ? ta + i * ENG_MR : 0, tb,
					    s->acc + i * ENG_MR * s->acc_rs +
					    j * ENG_NR, s->acc_rs, s->load, o,
					    a_ahead(s, i, ma, j, nb));
			if (o && s->out->out_fn && out_fn_due(&out))
				vnpu_eng_tile_out_fn(s->out, o, tile_h[rows],
						     2 * ENG_NR);
		}
	}
}

/*
 * Panels [0, @NP) of a mat-vec slice from @b into @acc: per pair of the
 * row @a (@np2 of them, then the odd depth's @ta), one vdpbf16ps per
 * panel, as a tile's row does. NP independent sums hide the latency.
 */
#define GEMV_PANELS(NP) do {						\
	v16sf s[NP];							\
	int q;								\
									\
	for (q = 0; q < NP; q++)					\
		s[q] = g->load ? ld16(acc + q * ENG_NR) : (v16sf){};	\
	for (p = 0; p < np2; p++) {					\
		v16si av = (v16si){} + (int)a[p];			\
									\
		for (q = 0; q < NP; q++)				\
			s[q] = dp16(s[q], av,				\
				    ldi16(b + q * g->b_ps + p * ENG_NR)); \
	}								\
	if (odd) {							\
		v16si av = (v16si){} + (int)ta;				\
									\
		for (q = 0; q < NP; q++)				\
			s[q] = dp16(s[q], av, tail16(b + q * g->b_ps +	\
						     np2 * ENG_NR));	\
	}								\
	for (q = 0; q < NP; q++)					\
		st16(acc + q * ENG_NR, s[q]);				\
} while (0)

/* A panel's plain last row of ENG_NR bf16 at @p as words (x, 0). */
static inline v16si tail16(const __u32 *p)
{
	typedef unsigned short v16hu __attribute__((vector_size(32), aligned(2)));

	return __builtin_convertvector(*(const v16hu *)p, v16si);
}

void vnpu_eng_gemv_bf16(const struct eng_bf16_gemv *g)
{
	const __u32 *b = g->b, *a = g->work;
	__u64 np2 = g->kc / 2, p, i;
	float *acc = g->acc;
	int odd = g->kc % 2;
	__u32 ta = 0;

	/* The row as pairs; an odd depth's last as (x, 0). */
	vnpu_eng_bf16_pack_row(g->a, g->kc, g->work);
	if (odd)
		ta = g->work[np2] & 0xffff;
	for (i = 0; i + 8 <= g->np; i += 8, b += 8 * g->b_ps, acc += 8 * ENG_NR)
		GEMV_PANELS(8);
	for (; i + 2 <= g->np; i += 2, b += 2 * g->b_ps, acc += 2 * ENG_NR)
		GEMV_PANELS(2);
	for (; i < g->np; i++, b += g->b_ps, acc += ENG_NR)
		GEMV_PANELS(1);
}

typedef short v16hi_u __attribute__((vector_size(32), aligned(2), may_alias));
typedef unsigned int v16su __attribute__((vector_size(64)));

/* The f32 multiply-add of vnpu_eng_gemv_avx512(), one rounding. */
#define FMA16(a, b, c) __builtin_ia32_vfmaddps512_mask((a), (b), (c), 0xffff, 4)

/* ENG_NR f16 at @p, widened (exact). */
static inline v16sf wide_f16(const __u16 *p)
{
	return __builtin_ia32_vcvtph2ps512_mask(*(const v16hi_u *)p,
						(v16sf){}, 0xffff, 4);
}

/*
 * @NP panels of a struct eng_lowp_gemv's sums plus its slice: each
 * output fma(a[k], w[k], sum) in depth order, w widened exactly, as
 * vnpu_eng_gemv_avx512() sums the f32 panels.
 */
#define LOWP_PANELS(NP) do {						\
	v16sf s[NP];							\
	int q;								\
									\
	for (q = 0; q < NP; q++)					\
		s[q] = g->load ? ld16(acc + q * ENG_NR) : (v16sf){};	\
	if (g->dt == VNPU_DTYPE_BF16) {					\
		for (k = 0; k + 1 < g->kc; k += 2) {			\
			v16sf a0 = (v16sf){} + g->a[k];			\
			v16sf a1 = (v16sf){} + g->a[k + 1];		\
									\
			for (q = 0; q < NP; q++) {			\
				v16su w = (v16su)ldi16((const __u32 *)	\
					(b + q * g->b_ps + k * ENG_NR)); \
									\
				s[q] = FMA16(a0, (v16sf)(w << 16), s[q]); \
				s[q] = FMA16(a1, (v16sf)(w & 0xffff0000u), \
					     s[q]);			\
			}						\
		}							\
		for (q = 0; k < g->kc && q < NP; q++)			\
			s[q] = FMA16((v16sf){} + g->a[k],		\
				     (v16sf)((v16su)tail16((const __u32 *) \
					(b + q * g->b_ps + k * ENG_NR)) << 16), \
				     s[q]);				\
	} else {							\
		for (k = 0; k < g->kc; k++) {				\
			v16sf ak = (v16sf){} + g->a[k];			\
									\
			for (q = 0; q < NP; q++)			\
				s[q] = FMA16(ak, wide_f16(b + q * g->b_ps + \
							  k * ENG_NR), s[q]); \
		}							\
	}								\
	for (q = 0; q < NP; q++)					\
		st16(acc + q * ENG_NR, s[q]);				\
} while (0)

void vnpu_eng_gemv_lowp(const struct eng_lowp_gemv *g)
{
	const __u16 *b = g->b;
	float *acc = g->acc;
	__u64 i, k;

	for (i = 0; i + 8 <= g->np; i += 8, b += 8 * g->b_ps, acc += 8 * ENG_NR)
		LOWP_PANELS(8);
	for (; i < g->np; i++, b += g->b_ps, acc += ENG_NR)
		LOWP_PANELS(1);
}

/* Panel @q's sums @s plus the residual, to the outputs (struct eng_bf16_wide). */
static void wide_out(const struct eng_bf16_wide *w, __u64 q, v16sf s)
{
	__u64 c = q * ENG_NR, j;
	float part[ENG_NR];

	if (c + ENG_NR <= w->n) {
		st16(w->y + c, s + ld16(w->res + c));
		return;
	}
	st16(part, s);
	for (j = 0; c + j < w->n; j++)
		w->y[c + j] = part[j] + w->res[c + j];
}

/*
 * Panels [@q, @q + NP) of group @g of @nq interleaved ones (struct
 * eng_bf16_wide) at @b: GEMV_PANELS()'s chains, the group's pairs read in
 * one run.
 */
#define WIDE_PANELS(NP) do {						\
	const __u32 *bq = b + q * ENG_NR;				\
	v16sf t[NP];							\
	int r;								\
									\
	for (r = 0; r < NP; r++)					\
		t[r] = (v16sf){};					\
	for (p = 0; p < np2; p++, bq += nq * ENG_NR) {			\
		v16si av = (v16si){} + (int)w->a[p];			\
									\
		for (r = 0; r < NP; r++)				\
			t[r] = dp16(t[r], av, ldi16(bq + r * ENG_NR));	\
	}								\
	for (r = 0; odd && r < NP; r++)					\
		t[r] = dp16(t[r], (v16si){} + (int)ta,			\
			    tail16(b + np2 * nq * ENG_NR +		\
				   (q + r) * ENG_NR / 2));		\
	for (r = 0; r < NP; r++)					\
		wide_out(w, g + q + r, t[r]);				\
	q += NP;							\
} while (0)

void vnpu_eng_gemv_bf16_wide(const struct eng_bf16_wide *w)
{
	__u64 np = eng_div_up(w->n, ENG_NR), np2 = w->kc / 2, g, nq, q, p;
	const __u32 *b = w->b;
	int odd = w->kc % 2;
	__u32 ta = odd ? w->a[np2] & 0xffff : 0;

	for (g = 0; g < np; g += nq, b += nq * w->kc * ENG_NR / 2) {
		nq = eng_min(np - g, ENG_BF16_WIDE);
		q = 0;
		if (nq == ENG_BF16_WIDE)
			WIDE_PANELS(ENG_BF16_WIDE);
		while (q + 4 <= nq)
			WIDE_PANELS(4);
		while (q < nq)
			WIDE_PANELS(1);
	}
}

/*
 * Y = A^T M A for panels of sixteen tiles: each column of points (@WH + 2
 * of them) through A^T down it, then each of the @WH rows through
 * F(2, 3)'s A^T, the two outputs of each tile interleaved into the stage
 * (vnpu_eng_wino2.c's wino2_output() in eight lanes: the same operations).
 * With o->silu each of the 2 @WH vectors then takes the epilogue before
 * its store (o->add[r] where set, then SiLU, four vectors in flight):
 * the flush only copies them out, rather than adding, storing and then
 * reading its short runs again for SiLU (their tails one at a time).
 */
/*
 * @add[0] where set, then SiLU, on the @n (4 or 8) vectors @v, four at a
 * time; at bf16's grade with @bf16.
 */
static __attribute__((__noinline__))
void silu_vecs(v16sf *v, int n, const float *add, int bf16)
{
	int i;

	for (i = 0; add && i < n; i++)
		v[i] = v[i] + add[0];
	for (i = 0; bf16 && i < n; i++)
		v[i] = vm16_silu_bf16(v[i]);
	for (i = 0; !bf16 && i < n; i += 4)
		vm16_logistic4(v + i, 1);
}

static __attribute__((__always_inline__)) inline
void out16(const struct eng_wino2_out *o, const int WH, const int SILU)
{
	__u64 r, t, ps = o->ps;
	v16sf y[4][4], c[4], v[8];
	int b, i;

	for (r = 0; r < o->mc; r++)
		for (t = 0; t < o->nt; t += 16) {
			const float *p = o->m + r * o->cols + t;
			float *st = o->stage + r * 2 * WH * o->cols + 2 * t;

			/* Down the columns of M, then along the rows. */
			for (b = 0; b < 4; b++) {
				const float *q = p + b * ps;

				if (WH == 4) {
					ENG_WINO42_AT(v16sf, ld16(q), ld16(q + 4 * ps),
						      ld16(q + 8 * ps), ld16(q + 12 * ps),
						      ld16(q + 16 * ps), ld16(q + 20 * ps),
						      c);
				} else {
					v16sf m1 = ld16(q + 4 * ps), m2 = ld16(q + 8 * ps);

					c[0] = (ld16(q) + m1) + m2;
					c[1] = (m1 - m2) - ld16(q + 12 * ps);
				}
				for (i = 0; i < WH; i++)
					y[i][b] = c[i];
			}
			for (i = 0; i < WH; i++) {
				v16sf o0 = (y[i][0] + y[i][1]) + y[i][2];
				v16sf o1 = (y[i][1] - y[i][2]) - y[i][3];

				v[2 * i] = __builtin_shufflevector(o0, o1, 0, 16, 1, 17,
								   2, 18, 3, 19, 4, 20,
								   5, 21, 6, 22, 7, 23);
				v[2 * i + 1] = __builtin_shufflevector(o0, o1, 8, 24, 9,
								       25, 10, 26, 11, 27,
								       12, 28, 13, 29, 14,
								       30, 15, 31);
			}
			if (SILU)
				silu_vecs(v, 2 * WH, o->add ? o->add + r : 0,
					  o->silu == ENG_ACT_BF16);
			for (i = 0; i < WH; i++) {
				st16(st + i * 2 * o->cols, v[2 * i]);
				st16(st + i * 2 * o->cols + 16, v[2 * i + 1]);
			}
		}
}

/* Each kind with and without SiLU, a function each. */
#define OUT16_FN(name, WH, SILU)					\
static __attribute__((__noinline__))					\
void name(const struct eng_wino2_out *o)				\
{									\
	out16(o, WH, SILU);						\
}

OUT16_FN(out16_42_silu, 4, 1)
OUT16_FN(out16_42, 4, 0)
OUT16_FN(out16_2_silu, 2, 1)
OUT16_FN(out16_2, 2, 0)

void vnpu_eng_wino2_out16(const struct eng_wino2_out *o)
{
	if (o->wh == 4 && o->silu)
		out16_42_silu(o);
	else if (o->wh == 4)
		out16_42(o);
	else if (o->silu)
		out16_2_silu(o);
	else
		out16_2(o);
}

/* B^T of F(2x2, 3x3) along one axis, in place over t[0], ..., t[3 * @s]. */
static __attribute__((__always_inline__)) inline
void bt4(v16sf *t, const int s)
{
	v16sf d0 = t[0], d1 = t[s], d2 = t[2 * s], d3 = t[3 * s];

	t[0] = d0 - d2;
	t[s] = d1 + d2;
	t[2 * s] = d2 - d1;
	t[3 * s] = d1 - d3;
}

/* F(4, 3)'s B^T along one axis, in place over t[0], ..., t[5 * @s]. */
static __attribute__((__always_inline__)) inline
void bt6(v16sf *t, const int s)
{
	v16sf o[6];
	int i;

	ENG_WINO42_BT(v16sf, t[0], t[s], t[2 * s], t[3 * s], t[4 * s],
		      t[5 * s], o);
	for (i = 0; i < 6; i++)
		t[i * s] = o[i];
}

/*
 * B^T of @R (4: F(2x2, 3x3), 6: F(4x2, 3x3)) input rows by 4 columns
 * at @d, in place: along the rows, then down the columns.
 */
static __attribute__((__always_inline__)) inline
void bt_tiles(v16sf *d, const int R)
{
	int r;

	for (r = 0; r < R; r++)
		bt4(d + 4 * r, 1);
	for (r = 0; r < 4; r++) {
		if (R == 6)
			bt6(d + r, 4);
		else
			bt4(d + r, 4);
	}
}

/* One channel's Rx4 tiles at @x, gathered and transformed, into @d. */
static __attribute__((__always_inline__)) inline
void in_tiles(const struct eng_wino_in *w, const float *x, v16si idx, v16sf *d,
	      const int R)
{
	int r, k;

	for (r = 0; r < R; r++)
		for (k = 0; k < 4; k++) {
			v16si ik = idx + (r * w->rs + k * w->ks);
			__u16 m = w->rmask[r] & w->kmask[k];

			d[r * 4 + k] = __builtin_ia32_gathersiv16sf((v16sf){}, x,
								    ik, m, 4);
		}
	bt_tiles(d, R);
}

/* The even and the odd lanes of two vectors taken as one of 32. */
#define EVEN32(a, b) __builtin_shufflevector((a), (b), 0, 2, 4, 6, 8, 10, \
					     12, 14, 16, 18, 20, 22, 24, 26, \
					     28, 30)
#define ODD32(a, b) __builtin_shufflevector((a), (b), 1, 3, 5, 7, 9, 11, 13, \
					    15, 17, 19, 21, 23, 25, 27, 29, 31)

/* Columns [0, 32) of a segment's rows its lanes take: two a lane. */
static inline __u32 lane_cols(__u16 lanes)
{
	__u32 x = lanes;

	x = (x | x << 8) & 0x00ff00ff;
	x = (x | x << 4) & 0x0f0f0f0f;
	x = (x | x << 2) & 0x33333333;
	x = (x | x << 1) & 0x55555555;
	return x | x << 1;
}

/*
 * Row @r of a channel's Rx4 tiles from rows of unit column stride, B^T
 * along it into @t[0..3]: each segment's loads masked to its lanes'
 * columns (@m: m0 and m2 of segment g at m[2g] and m[2g + 1]) and merged
 * into one row, split into even and odd columns once (bt4()'s operations).
 */
static __attribute__((__always_inline__)) inline
void row_tiles(const struct eng_wino2_in *w, const float *x, const __u32 *m,
	       int r, v16sf *t)
{
	v16sf a0 = {}, a1 = {}, b0 = {}, b1 = {}, d0, d1, d2, d3;
	__u32 g;

	for (g = 0; g < w->nseg; g++) {
		const float *p = x + w->seg[g].off + r * w->rs;
		__u32 m0 = m[2 * g], m2 = m[2 * g + 1];

		if (!(w->seg[g].rows >> r & 1))
			continue;
		a0 = __builtin_ia32_loadups512_mask(p, a0, (__u16)m0);
		a1 = __builtin_ia32_loadups512_mask(p + 16, a1,
						    (__u16)(m0 >> 16));
		b0 = __builtin_ia32_loadups512_mask(p + 2, b0, (__u16)m2);
		b1 = __builtin_ia32_loadups512_mask(p + 18, b1,
						    (__u16)(m2 >> 16));
	}
	d0 = EVEN32(a0, a1);
	d1 = ODD32(a0, a1);
	d2 = EVEN32(b0, b1);
	d3 = ODD32(b0, b1);
	t[0] = d0 - d2;
	t[1] = d1 + d2;
	t[2] = d2 - d1;
	t[3] = d1 - d3;
}

/*
 * Channels a panel's rows are fetched ahead: each channel's rows lie a
 * plane apart, which the hardware's prefetchers do not follow.
 */
#define PF_AHEAD 4

/* Fetches the @R rows two channels at @x read toward L1. */
static __attribute__((__always_inline__)) inline
void rows_ahead(const struct eng_wino2_in *w, const float *x, const int R)
{
	__u32 g;
	int r, h;

	for (h = 0; h < 2; h++, x += w->cs)
		for (g = 0; g < w->nseg; g++)
			for (r = 0; r < R; r++) {
				const float *p = x + w->seg[g].off + r * w->rs;

				if (!(w->seg[g].rows >> r & 1))
					continue;
				__builtin_prefetch(p);
				__builtin_prefetch(p + 16);
				__builtin_prefetch(p + 33);
			}
}

/* How rows_chan() leaves a channel's points. */
enum { CHAN_FIRST, CHAN_SECOND, CHAN_LAST };

/*
 * Point @xi, @p, of channel @c: the first of a pair's to @d[@xi] as it
 * is; the second's and that one as one bf16 pair a lane (pair16p(), as
 * the gather path pairs them) into V; an odd last channel's as a plain row
 * of ENG_NR bf16.
 */
static __attribute__((__always_inline__)) inline
void chan_point(const struct eng_wino2_in *w, v16sf *d, __u64 c, int xi,
		v16sf p, const int mode, v16si perm)
{
	typedef int v8si_u __attribute__((vector_size(32), aligned(4),
					  may_alias));
	__u32 *v = w->v + xi * w->ps + c / 2 * ENG_NR;
	v16si h;

	if (mode == CHAN_FIRST) {
		d[xi] = p;
	} else if (mode == CHAN_SECOND) {
		sti16(v, pair16p(d[xi], p, perm));
	} else {
		h = bf16x32(p, (v16sf){});
		*(v8si_u *)v = __builtin_shufflevector(h, h, 0, 1, 2, 3, 4, 5,
						       6, 7);
	}
}

/*
 * Column @k of a channel's transformed rows @t0 to @t5 (@R of them), B^T
 * down it (bt4()'s or bt6()'s operations), its points to chan_point().
 */
#define CHAN_COL(k) do {						\
	v16sf o_[6];							\
									\
	if (R == 6) {							\
		ENG_WINO42_BT(v16sf, t0[k], t1[k], t2[k], t3[k], t4[k],	\
			      t5[k], o_);				\
	} else {							\
		o_[0] = t0[k] - t2[k];					\
		o_[1] = t1[k] + t2[k];					\
		o_[2] = t2[k] - t1[k];					\
		o_[3] = t1[k] - t3[k];					\
	}								\
	chan_point(w, d, c, 0 * 4 + (k), o_[0], mode, perm);		\
	chan_point(w, d, c, 1 * 4 + (k), o_[1], mode, perm);		\
	chan_point(w, d, c, 2 * 4 + (k), o_[2], mode, perm);		\
	chan_point(w, d, c, 3 * 4 + (k), o_[3], mode, perm);		\
	if (R == 6) {							\
		chan_point(w, d, c, 4 * 4 + (k), o_[4], mode, perm);	\
		chan_point(w, d, c, 5 * 4 + (k), o_[5], mode, perm);	\
	}								\
} while (0)

/*
 * Channel @c of a panel of Rx4 tiles by rows, transformed in registers
 * (no loop over an array of its points, so that none goes to memory),
 * its points left as @mode says.
 */
static __attribute__((__always_inline__)) inline
void rows_chan(const struct eng_wino2_in *w, const __u32 *m, v16sf *d,
	       __u64 c, const int mode, v16si perm, const int R)
{
	const float *x = w->x + (__s64)c * w->cs;
	v16sf t0[4], t1[4], t2[4], t3[4], t4[4] = {}, t5[4] = {};

	row_tiles(w, x, m, 0, t0);
	row_tiles(w, x, m, 1, t1);
	row_tiles(w, x, m, 2, t2);
	row_tiles(w, x, m, 3, t3);
	if (R == 6) {
		row_tiles(w, x, m, 4, t4);
		row_tiles(w, x, m, 5, t5);
	}
	CHAN_COL(0);
	CHAN_COL(1);
	CHAN_COL(2);
	CHAN_COL(3);
}

/*
 * Channels [w->c0, w->c1) of a panel of Rx4 tiles by rows, as bf16
 * pairs. Each channel's 4 * R points are transformed in registers; the
 * first of a pair's wait at w->d (a kernel stack frame has no room for
 * them), the second's are paired with them as they are stored. Each point
 * had gone through memory three times (both channels' points to w->d,
 * the transforms in place there, the pairs), which took 35% of DBNet's
 * 256->64 3x3 on 80x80 on Zen 4.
 */
static __attribute__((__always_inline__)) inline
void rows_bf16(const struct eng_wino2_in *w, const int R)
{
	const v16si perm = *(const v16si *)pair_idx;
	v16sf *d = (v16sf *)w->d;
	__u32 m[2 * ENG_WINO2_SEGS], g;
	__u64 c;

	for (g = 0; g < w->nseg; g++) {
		__u32 cm = lane_cols(w->seg[g].lanes);

		m[2 * g] = w->seg[g].m0 & cm;
		m[2 * g + 1] = w->seg[g].m2 & cm;
	}
	for (c = w->c0; c + 1 < w->c1; c += 2) {
		if (c + PF_AHEAD + 1 < w->cn)
			rows_ahead(w, w->x + (__s64)(c + PF_AHEAD) * w->cs, R);
		rows_chan(w, m, d, c, CHAN_FIRST, perm, R);
		rows_chan(w, m, d, c + 1, CHAN_SECOND, perm, R);
	}
	if (c < w->c1)
		rows_chan(w, m, d, c, CHAN_LAST, perm, R);
}

void vnpu_eng_wino2_rows_bf16(const struct eng_wino2_in *w)
{
	rows_bf16(w, 4);
}

void vnpu_eng_wino42_rows_bf16(const struct eng_wino2_in *w)
{
	rows_bf16(w, 6);
}

/*
 * V of F(2x2, 3x3) (@R 4) or F(4x2, 3x3) (@R 6) for a panel of sixteen
 * tiles as bf16 pairs: each point of two channels' Rx4 input tiles a
 * masked gather (lanes outside X or past the run hold zero), transformed
 * as vnpu_eng_wino2.c's wino2_in_f32() does, then the two channels'
 * values of each point rounded to one pair a lane (w->v: words, point xi
 * at + xi * w->ps, channel pair c / 2 at + c / 2 * ENG_NR); an odd last
 * channel's a plain row of ENG_NR bf16. The first channel's points wait
 * at @d0 (w->d: a kernel stack frame has no room for both), the second's
 * at @d1.
 */
static __attribute__((__always_inline__)) inline
void in_bf16(const struct eng_wino_in *w, v16sf *d0, v16sf *d1, const int R)
{
	v16si idx = ldi16((const __u32 *)w->off);
	__u32 *v = (__u32 *)w->v;
	__u64 c;
	int xi;

	for (c = 0; c + 1 < w->cn; c += 2) {
		in_tiles(w, w->x + (__s64)c * w->cs, idx, d0, R);
		in_tiles(w, w->x + (__s64)(c + 1) * w->cs, idx, d1, R);
		for (xi = 0; xi < 4 * R; xi++)
			sti16(v + xi * w->ps + c / 2 * ENG_NR,
			      pair16(d0[xi], d1[xi]));
	}
	if (c < w->cn) {
		typedef int v8si_u __attribute__((vector_size(32), aligned(4),
						  may_alias));

		in_tiles(w, w->x + (__s64)c * w->cs, idx, d0, R);
		for (xi = 0; xi < 4 * R; xi++) {
			v16si h = bf16x32(d0[xi], (v16sf){});

			*(v8si_u *)(v + xi * w->ps + c / 2 * ENG_NR) =
				(v8si_u){ h[0], h[1], h[2], h[3], h[4], h[5],
					  h[6], h[7] };
		}
	}
}

void vnpu_eng_wino2_in_bf16(const struct eng_wino_in *w)
{
	v16sf d1[16];

	in_bf16(w, (v16sf *)w->d, d1, 4);
}

/* F(4x2, 3x3)'s: 6x4 tiles, both channels' points in w->d. */
void vnpu_eng_wino42_in_bf16(const struct eng_wino_in *w)
{
	in_bf16(w, (v16sf *)w->d, (v16sf *)w->d + 24, 6);
}

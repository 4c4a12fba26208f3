/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Inline-assembly pieces of the AVX-512 GEMM tiles, f32 and bf16 alike:
 * row r of a 12x32 tile in zmm(2r) and zmm(2r+1), stored %[rsb] bytes
 * apart from %[p].
 */
#ifndef VNPU_ENG_ZMM_TILE_H
#define VNPU_ENG_ZMM_TILE_H

/* M(z0, z1) for the registers of each row, of 12 rows, of 4 and of 8. */
#define ZT_ROWS(M)							\
	ZT_ROWS4(M) M(8, 9) M(10, 11)					\
	M(12, 13) M(14, 15) M(16, 17) M(18, 19) M(20, 21) M(22, 23)
#define ZT_ROWS4(M) M(0, 1) M(2, 3) M(4, 5) M(6, 7)
#define ZT_ROWS8(M) ZT_ROWS4(M) M(8, 9) M(10, 11) M(12, 13) M(14, 15)

/* A row loaded from %[p], zeroed, or stored to %[p]; %[p] moves on. */
#define ZT_LD(z0, z1)							\
	"vmovups (%[p]), %%zmm" #z0 "\n\t"				\
	"vmovups 64(%[p]), %%zmm" #z1 "\n\t"				\
	"add %[rsb], %[p]\n\t"

#define ZT_ZERO(z0, z1)							\
	"vpxord %%zmm" #z0 ", %%zmm" #z0 ", %%zmm" #z0 "\n\t"		\
	"vpxord %%zmm" #z1 ", %%zmm" #z1 ", %%zmm" #z1 "\n\t"

#define ZT_ST(z0, z1)							\
	"vmovups %%zmm" #z0 ", (%[p])\n\t"				\
	"vmovups %%zmm" #z1 ", 64(%[p])\n\t"				\
	"add %[rsb], %[p]\n\t"

/* ZT_ST under the masks in k1-k4, the second pair %[t] bytes on. */
#define ZT_STM(z0, z1)							\
	"vmovups %%zmm" #z0 ", (%[p])%{%%k1%}\n\t"			\
	"vmovups %%zmm" #z1 ", 64(%[p])%{%%k2%}\n\t"			\
	"vmovups %%zmm" #z0 ", (%[p], %[t])%{%%k3%}\n\t"		\
	"vmovups %%zmm" #z1 ", 64(%[p], %[t])%{%%k4%}\n\t"		\
	"add %[rsb], %[p]\n\t"

/* Row r = z0 / 2 of the tile plus the r-th float at %[t], broadcast. */
#define ZT_ADD(z0, z1)							\
	"vaddps (2 * " #z0 ")(%[t])%{1to16%}, %%zmm" #z0 ", %%zmm" #z0 "\n\t" \
	"vaddps (2 * " #z0 ")(%[t])%{1to16%}, %%zmm" #z1 ", %%zmm" #z1 "\n\t"

/* Row z0 / 2 plus the 32 floats at %[t], one a column. */
#define ZT_CADD(z0, z1)							\
	"vaddps (%[t]), %%zmm" #z0 ", %%zmm" #z0 "\n\t"			\
	"vaddps 64(%[t]), %%zmm" #z1 ", %%zmm" #z1 "\n\t"

/*
 * Row r = z0 / 2 of the tile plus the residual's row at %[k], which then
 * moves %[a0] bytes on: whole, or (ZT_RESM) under the store masks, the
 * second pair %[t] bytes on. Masked lanes read nothing.
 */
#define ZT_RES(z0, z1)							\
	"vaddps (%[k]), %%zmm" #z0 ", %%zmm" #z0 "\n\t"		\
	"vaddps 64(%[k]), %%zmm" #z1 ", %%zmm" #z1 "\n\t"		\
	"add %[a0], %[k]\n\t"

#define ZT_RESM(z0, z1)							\
	"vaddps (%[k]), %%zmm" #z0 ", %%zmm" #z0 "%{%%k1%}\n\t"	\
	"vaddps 64(%[k]), %%zmm" #z1 ", %%zmm" #z1 "%{%%k2%}\n\t"	\
	"vaddps (%[k], %[t]), %%zmm" #z0 ", %%zmm" #z0 "%{%%k3%}\n\t" \
	"vaddps 64(%[k], %[t]), %%zmm" #z1 ", %%zmm" #z1 "%{%%k4%}\n\t" \
	"add %[a0], %[k]\n\t"

/*
 * Relu of row z0 / 2 with zmm29 zero: max(0, x) keeps x unless 0 > x,
 * so a NaN or -0 stays, as in the epilogue's x < 0 ? 0 : x.
 */
#define ZT_RELU(z0, z1)							\
	"vmaxps %%zmm" #z0 ", %%zmm29, %%zmm" #z0 "\n\t"		\
	"vmaxps %%zmm" #z1 ", %%zmm29, %%zmm" #z1 "\n\t"

/*
 * HardSwish of zmm z as hswish() computes it, with zmm24-26 holding 3,
 * fl(1/6) and 1 and zmm29 zero: h = (x + 3) * fl(1/6), then x where
 * h > 1, else +0 where h < 0, else x * h (a NaN's h is the NaN, so x * h
 * keeps its payload in either operand order).
 */
#define ZT_HS(z)							\
	"vaddps %%zmm24, %%zmm" #z ", %%zmm27\n\t"			\
	"vmulps %%zmm25, %%zmm27, %%zmm27\n\t"			\
	"vcmpps $1, %%zmm29, %%zmm27, %%k5\n\t"			\
	"vcmpps $14, %%zmm26, %%zmm27, %%k6\n\t"			\
	"vmulps %%zmm27, %%zmm" #z ", %%zmm27\n\t"			\
	"vpxord %%zmm27, %%zmm27, %%zmm27%{%%k5%}\n\t"		\
	"vblendmps %%zmm" #z ", %%zmm27, %%zmm" #z "%{%%k6%}\n\t"

#define ZT_HSWISH(z0, z1) ZT_HS(z0) ZT_HS(z1)

/*
 * LeakyRelu of zmm z with zmm24 holding alpha and zmm29 zero: x * alpha
 * where x < 0 (a NaN or -0 stays), as the epilogue's x < 0 ? alpha * x : x.
 */
#define ZT_LR(z)							\
	"vcmpps $1, %%zmm29, %%zmm" #z ", %%k5\n\t"			\
	"vmulps %%zmm24, %%zmm" #z ", %%zmm" #z "%{%%k5%}\n\t"

#define ZT_LEAKY(z0, z1) ZT_LR(z0) ZT_LR(z1)

/*
 * The bound of zmm z with zmm25 holding a bound b that is no NaN:
 * act_bound()'s Max(y, b) (b where y <= b: a NaN y stays, a tie gives b)
 * or Min(y, b) (b where y >= b).
 */
#define ZT_BX(z, pred)							\
	"vcmpps $" #pred ", %%zmm25, %%zmm" #z ", %%k5\n\t"		\
	"vmovaps %%zmm25, %%zmm" #z "%{%%k5%}\n\t"

#define ZT_BMAX(z0, z1) ZT_BX(z0, 2) ZT_BX(z1, 2)
#define ZT_BMIN(z0, z1) ZT_BX(z0, 13) ZT_BX(z1, 13)

/*
 * The epilogue of a tile whose depth loop is done, the same for the f32
 * and the bf16 tiles (the sums are f32 either way), with the operands
 * %[c], %[out], %[p], %[rsb] (read-write), %[t], %[k] and %[a0] (free
 * after the loop) and the labels 7-19.
 *
 * Where the tile goes: back to %[c], or with %[out] (struct eng_tile_out)
 * to out->y, rows out->rsb bytes apart, after adding out->add[r] to row r
 * when out->add is set, then out->cadd[c] to column c when out->cadd is
 * set, then out->res's elements when set, then out->act (Relu, LeakyRelu
 * of out->alpha or HardSwish, then the bound out->beta when it says), and
 * under out->mask[] when out->jb is set (then the stores jump to 8, with
 * out->jb in %[t]). ZT_OUT_X's ACT comes after those, with %[k] holding
 * out->act (0 for none): an activation of the tile's own.
 */
#define ZT_OUT(ROWS) ZT_OUT_X(ROWS, "")
#define ZT_OUT_X(ROWS, ACT)						\
	"mov %[c], %[p]\n\t"						\
	"test %[out], %[out]\n\t"					\
	"jz 7f\n\t"							\
	"mov (%[out]), %[p]\n\t"					\
	"mov 8(%[out]), %[rsb]\n\t"					\
	"mov 16(%[out]), %[t]\n\t"					\
	"test %[t], %[t]\n\t"						\
	"jz 9f\n\t"							\
	ROWS(ZT_ADD)							\
	"9:\n\t"							\
	"mov 64(%[out]), %[t]\n\t"					\
	"test %[t], %[t]\n\t"						\
	"jz 16f\n\t"							\
	ROWS(ZT_CADD)							\
	"16:\n\t"							\
	"mov 24(%[out]), %[t]\n\t"					\
	"test %[t], %[t]\n\t"						\
	"jz 11f\n\t"							\
	"kmovw 32(%[out]), %%k1\n\t"					\
	"kmovw 34(%[out]), %%k2\n\t"					\
	"kmovw 36(%[out]), %%k3\n\t"					\
	"kmovw 38(%[out]), %%k4\n\t"					\
	"11:\n\t"							\
	"mov 40(%[out]), %[k]\n\t"					\
	"test %[k], %[k]\n\t"						\
	"jz 13f\n\t"							\
	"mov 48(%[out]), %[a0]\n\t"					\
	"test %[t], %[t]\n\t"						\
	"jnz 12f\n\t"							\
	ROWS(ZT_RES)							\
	"jmp 13f\n"							\
	"12:\n\t"							\
	ROWS(ZT_RESM)							\
	"13:\n\t"							\
	"mov 56(%[out]), %[k]\n\t"					\
	"test %[k], %[k]\n\t"						\
	"jz 14f\n\t"							\
	"vpxord %%zmm29, %%zmm29, %%zmm29\n\t"			\
	"movzbl %b[k], %k[a0]\n\t"					\
	"cmp $" ZT_STR(ENG_TILE_RELU) ", %[a0]\n\t"			\
	"jne 15f\n\t"							\
	ROWS(ZT_RELU)							\
	"jmp 17f\n"							\
	"15:\n\t"							\
	"cmp $" ZT_STR(ENG_TILE_LEAKY) ", %[a0]\n\t"			\
	"jne 18f\n\t"							\
	"vbroadcastss 72(%[out]), %%zmm24\n\t"			\
	ROWS(ZT_LEAKY)							\
	"jmp 17f\n"							\
	"18:\n\t"							\
	"cmp $" ZT_STR(ENG_TILE_HSWISH) ", %[a0]\n\t"			\
	"jne 17f\n\t"							\
	"mov $0x40400000, %k[a0]\n\t"					\
	"vpbroadcastd %k[a0], %%zmm24\n\t"				\
	"mov $0x3e2aaaab, %k[a0]\n\t"					\
	"vpbroadcastd %k[a0], %%zmm25\n\t"				\
	"mov $0x3f800000, %k[a0]\n\t"					\
	"vpbroadcastd %k[a0], %%zmm26\n\t"				\
	ROWS(ZT_HSWISH)							\
	"17:\n\t"							\
	"test $" ZT_STR(ENG_TILE_BOUND) ", %k[k]\n\t"			\
	"jz 14f\n\t"							\
	"vbroadcastss 76(%[out]), %%zmm25\n\t"			\
	"test $" ZT_STR(ENG_TILE_MIN) ", %k[k]\n\t"			\
	"jnz 19f\n\t"							\
	ROWS(ZT_BMAX)							\
	"jmp 14f\n"							\
	"19:\n\t"							\
	ROWS(ZT_BMIN)							\
	"14:\n\t"							\
	ACT								\
	"test %[t], %[t]\n\t"						\
	"jnz 8f\n"							\
	"7:\n\t"

/* The epilogue, then the stores: whole rows, or (label 8) under masks. */
#define ZT_STORE(ROWS) ZT_STORE_X(ROWS, "")
#define ZT_STORE_X(ROWS, ACT)						\
	ZT_OUT_X(ROWS, ACT)						\
	ROWS(ZT_ST)							\
	"jmp 10f\n"							\
	"8:\n\t"							\
	ROWS(ZT_STM)							\
	"10:\n\t"

/* The registers the epilogue uses beyond the tile's. */
#define ZT_OUT_CLOBBER							\
	"xmm24", "xmm25", "xmm26", "xmm27", "xmm29", "k1", "k2", "k3",	\
	"k4", "k5", "k6"

/* A constant's value as a string, for an address in the assembly. */
#define ZT_STR_(x) #x
#define ZT_STR(x) ZT_STR_(x)

#endif /* VNPU_ENG_ZMM_TILE_H */

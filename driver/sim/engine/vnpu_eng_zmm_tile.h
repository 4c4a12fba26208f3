/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Inline-assembly pieces of the AVX-512 GEMM tiles, f32 and bf16 alike:
 * row r of a 12x32 tile in zmm(2r) and zmm(2r+1), stored %[rsb] bytes
 * apart from %[p].
 */
#ifndef VNPU_ENG_ZMM_TILE_H
#define VNPU_ENG_ZMM_TILE_H

/* M(z0, z1) for the registers of each row, of 12 rows and of 4. */
#define ZT_ROWS(M)							\
	ZT_ROWS4(M) M(8, 9) M(10, 11)					\
	M(12, 13) M(14, 15) M(16, 17) M(18, 19) M(20, 21) M(22, 23)
#define ZT_ROWS4(M) M(0, 1) M(2, 3) M(4, 5) M(6, 7)

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

/* A constant's value as a string, for an address in the assembly. */
#define ZT_STR_(x) #x
#define ZT_STR(x) ZT_STR_(x)

#endif /* VNPU_ENG_ZMM_TILE_H */

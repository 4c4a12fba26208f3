// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * AVX-512F micro-kernels of the blocked GEMM (built with -mavx512f -mfma,
 * run only when the caller sets VNPU_ENG_F_AVX512).
 *
 * A tile is two panels of A (12 rows) by two panels of B (32 columns): 24
 * accumulators of 16 lanes, two loads of B and twelve broadcasts of A per
 * depth step. The last odd panel of either side takes the 6- or 16-wide
 * variant, or the 4-row one when at most 4 of the panel's rows are used.
 * Each output is fma(a[k], b[k], sum) for k in depth order, from zero or
 * from the accumulator, exactly as in the AVX2 6x16 kernel: the two give
 * the same bits. The full 12x32 tiles and the 4x32 edge ones (the last
 * 4 rows of a convolution of 64 outputs) are inline assembly, the other
 * edge ones C (tile()). One to four columns past a block's whole panels
 * of B take tail_cols() after the tiles: twelve rows of A a vector (a
 * single one with B by offsets inside the first column pair's 12x32
 * tiles, tile_12x32_tail()).
 */
#include "vnpu_eng_gemm.h"
#include "vnpu_eng_zmm_tile.h"

typedef float v16sf __attribute__((vector_size(64)));
typedef float v16sf_u __attribute__((vector_size(64), aligned(4), may_alias));
typedef float v8sf __attribute__((vector_size(32)));
typedef float v8sf_u __attribute__((vector_size(32), aligned(4), may_alias));

static inline v16sf ld16(const float *p)
{
	return *(const v16sf_u *)p;
}

static inline void st16(float *p, v16sf v)
{
	*(v16sf_u *)p = v;
}

static inline v16sf bc16(float x)
{
	return (v16sf){ x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x };
}

#define FMA16(a, b, c) __builtin_ia32_vfmaddps512_mask((a), (b), (c), 0xffff, 4)

/*
 * Rows [0, @rows) x panels [0, @np) of the tile at @c: @rows and @np are
 * constants in each caller, so the accumulators stay in registers.
 */
/*
 * Element (row r, depth k) of the A panel at @a: panels hold k-major
 * groups of ENG_MR, or with @arow rows @ars floats apart (see struct
 * eng_slice's @a_rows).
 */
#define A_AT(a, r, k, arow, ars) ((arow) ? (a)[(r) * (ars) + (k)] :	\
				  (a)[(k) * ENG_MR + (r)])

typedef int v16sm __attribute__((vector_size(64)));

/* Lanes of @a where @m is set, else of @b. */
static inline v16sf sel16(v16sm m, v16sf a, v16sf b)
{
	return (v16sf)(((v16sm)a & m) | ((v16sm)b & ~m));
}

/*
 * @o's activation and bound on sixteen sums, lane by lane (the engine is
 * built with -ffp-contract=off: a lane's bits depend on its sum only).
 */
static __attribute__((__always_inline__)) inline
v16sf out_act(const struct eng_tile_out *o, v16sf x)
{
	v16sf h, zero = {};
	float al, be;

	switch (o->act & 0xff) {
	case ENG_TILE_RELU:
		x = sel16(x < zero, zero, x);
		break;
	case ENG_TILE_LEAKY:
		__builtin_memcpy(&al, &o->alpha, 4);
		x = sel16(x < zero, x * bc16(al), x);
		break;
	case ENG_TILE_HSWISH:
		h = (x + bc16(3.0f)) * bc16(1.0f / 6.0f);
		return sel16(h < zero, zero, sel16(h > bc16(1.0f), x, x * h));
	default:
		break;
	}
	if (!(o->act & ENG_TILE_BOUND))
		return x;
	__builtin_memcpy(&be, &o->beta, 4);
	if (o->act & ENG_TILE_MAX)
		return sel16((x != x) | (x > bc16(be)), x, bc16(be));
	return sel16((x != x) | (x < bc16(be)), x, bc16(be));
}

/*
 * The sum @x of tile row @r, @d floats from the row's start at the
 * output, plus @o's residual at the same place, through @o's activation:
 * what the epilogue computes after the per-row add.
 */
static __attribute__((__always_inline__)) inline
float out_elem(const struct eng_tile_out *o, float x, int r, __s64 d)
{
	if (o->res)
		x = x + *(const float *)((const char *)o->res +
					 r * o->res_rsb + d * 4);
	return out_act(o, bc16(x))[0];
}

/*
 * out_elem() on the sixteen sums @x of tile row @r from @d on, the same
 * operations on each (a residual's row is dense): the same bits.
 */
static __attribute__((__always_inline__)) inline
v16sf out_vec(const struct eng_tile_out *o, v16sf x, int r, __s64 d)
{
	if (o->res)
		x = x + ld16((const float *)((const char *)o->res +
					     r * o->res_rsb + d * 4));
	return out_act(o, x);
}

/* Rows [0, @rows) x panels [0, @np) of @acc to @y as @o's masks say. */
static __attribute__((__always_inline__)) inline
void st_masked(float *y, __u64 rs, const struct eng_tile_out *o,
	       v16sf acc[12][2], const int rows, const int np)
{
	int r, p, l;

	for (r = 0; r < rows; r++)
		for (p = 0; p < np; p++)
			for (l = 0; l < ENG_NR; l++) {
				__s64 c = p * ENG_NR + l;

				if (o->mask[p] >> l & 1)
					y[r * rs + c] = out_elem(o, acc[r][p][l],
								 r, c);
				else if (o->mask[2 + p] >> l & 1)
					y[r * rs + c + o->jb / 4] =
						out_elem(o, acc[r][p][l], r,
							 c + o->jb / 4);
			}
}

/*
 * The lines of the next tile's A that hold the four depth steps at @a of
 * this one's panel, @pd bytes on (the weights come from memory: a tile
 * that waits for them runs at half speed), into L2 a tile ahead: a
 * prefetch into L1 holds one of L1's few miss buffers until memory
 * answers, which capped a 12x16 tile's stream of A (5 bytes a cycle:
 * ResNet-50's 512 x 512 Winograd over 7x7, U of 16.8 MB) at about 11
 * GB/s on Zen 4; the tile's loads then find A in L2.
 */
static __attribute__((__always_inline__)) inline
void a_ahead(const float *a, __s64 pd)
{
	const char *p = (const char *)a + pd;

	__builtin_prefetch(p, 0, 1);
	__builtin_prefetch(p + 64, 0, 1);
}

static __attribute__((__always_inline__)) inline
void tile(__u64 kc, const float *a0, const float *a1, const float *b0,
	  const float *b1, const __s32 *off, float *c, __u64 rs, int load,
	  const struct eng_tile_out *out, __s64 ars, __s64 pd, const int rows,
	  const int np, const int ind, const int arow)
{
	v16sf acc[12][2];
	__u64 k;
	int r, p;

	for (r = 0; r < rows; r++)
		for (p = 0; p < np; p++)
			acc[r][p] = load ? ld16(c + r * rs + p * ENG_NR) :
					   (v16sf){};
	/* Unrolled: fewer loop uops competing with the FMAs for ports. */
#pragma GCC unroll 4
	for (k = 0; k < kc; k++) {
		const float *bk0 = ind ? b0 + off[k] : b0 + k * ENG_NR;
		const float *bk1 = ind ? b1 + off[k] : b1 + k * ENG_NR;
		v16sf bv[2];

		if (!arow && !(k & 3)) {
			a_ahead(a0 + k * ENG_MR, pd);
			if (rows > ENG_MR)
				a_ahead(a1 + k * ENG_MR, pd);
		}

		bv[0] = ld16(bk0);
		if (np == 2)
			bv[1] = ld16(bk1);
		for (r = 0; r < rows; r++) {
			v16sf av = bc16(r < ENG_MR ? A_AT(a0, r, k, arow, ars) :
					A_AT(a1, r - ENG_MR, k, arow, ars));

			for (p = 0; p < np; p++)
				acc[r][p] = FMA16(av, bv[p], acc[r][p]);
		}
	}
	if (out) {
		c = out->y;
		rs = out->rsb / 4;
		if (out->add)
			for (r = 0; r < rows; r++)
				for (p = 0; p < np; p++)
					acc[r][p] += bc16(out->add[r]);
		if (out->cadd)
			for (r = 0; r < rows; r++)
				for (p = 0; p < np; p++)
					acc[r][p] += ld16(out->cadd + p * ENG_NR);
		if (out->jb) {
			st_masked(c, rs, out, acc, rows, np);
			return;
		}
		/* Sixteen lanes at a time: one at a time took 20% of a 12x16 tile. */
		for (r = 0; r < rows; r++)
			for (p = 0; p < np; p++)
				acc[r][p] = out_vec(out, acc[r][p], r, p * ENG_NR);
	}
	for (r = 0; r < rows; r++)
		for (p = 0; p < np; p++)
			st16(c + r * rs + p * ENG_NR, acc[r][p]);
}

/*
 * The full 12x32 tiles, whose loops are nearly all of the time, in inline
 * assembly, all of the tile in one asm statement so that nothing spills:
 * row r of the tile lives in zmm(2r) (columns 0-15) and zmm(2r+1)
 * (16-31). Per depth step, B's row goes to zmm30 and zmm31, then for each
 * row its element of A is broadcast into zmm29 and two FMAs add A * B to
 * the row. Four steps per loop trip, addresses as displacements from
 * pointers that move once a trip, then single steps for the rest. Each
 * output gets the same FMAs in the same order as in tile(): same bits.
 *
 * The 4-step loop starts on a 64-byte line, which the uop cache streams
 * best (GEMM and conv 1x1 about +1% of the peak).
 *
 * Operands: %[c] the tile (rows %[rsb] bytes apart), loaded when %[load]
 * is nonzero, else zero; %[k] the steps left (0 at the end); %[p] and %[t]
 * scratch. Each variant defines the addresses of A's elements at step u
 * of a trip, UK_A0(u, r) for row r (0-5) and UK_A1(u, r) for row 6 + r;
 * UK_B(u), which loads B's row of step u; UK_ADV4 and UK_ADV1, which
 * move its pointers past four steps and past one; UK_PF, a prefetch
 * per trip from %[pf] (empty where B is read by offsets); and UK_SETUP,
 * which sets up its pointers before the depth loop (or is empty).
 */
#define UK_FMA(addr, z0, z1)						\
	"vbroadcastss " addr ", %%zmm29\n\t"				\
	"vfmadd231ps %%zmm30, %%zmm29, %%zmm" #z0 "\n\t"		\
	"vfmadd231ps %%zmm31, %%zmm29, %%zmm" #z1 "\n\t"

#define UK_STEP(u)							\
	UK_B(u)								\
	UK_FMA(UK_A0(u, 0), 0, 1) UK_FMA(UK_A0(u, 1), 2, 3)		\
	UK_FMA(UK_A0(u, 2), 4, 5) UK_FMA(UK_A0(u, 3), 6, 7)		\
	UK_FMA(UK_A0(u, 4), 8, 9) UK_FMA(UK_A0(u, 5), 10, 11)		\
	UK_FMA(UK_A1(u, 0), 12, 13) UK_FMA(UK_A1(u, 1), 14, 15)		\
	UK_FMA(UK_A1(u, 2), 16, 17) UK_FMA(UK_A1(u, 3), 18, 19)		\
	UK_FMA(UK_A1(u, 4), 20, 21) UK_FMA(UK_A1(u, 5), 22, 23)

/* The 4-row edge tile: the first four rows of a panel of A. */
#define UK_STEP4(u)							\
	UK_B(u)								\
	UK_FMA(UK_A0(u, 0), 0, 1) UK_FMA(UK_A0(u, 1), 2, 3)		\
	UK_FMA(UK_A0(u, 2), 4, 5) UK_FMA(UK_A0(u, 3), 6, 7)

/*
 * The 8-row tile: a panel of A and the first two rows of the next (BERT's
 * 128 rows: ten 12-row tiles, then 8 rows, not 12 of which 4 are zero).
 */
#define UK_STEP8(u)							\
	UK_B(u)								\
	UK_FMA(UK_A0(u, 0), 0, 1) UK_FMA(UK_A0(u, 1), 2, 3)		\
	UK_FMA(UK_A0(u, 2), 4, 5) UK_FMA(UK_A0(u, 3), 6, 7)		\
	UK_FMA(UK_A0(u, 4), 8, 9) UK_FMA(UK_A0(u, 5), 10, 11)		\
	UK_FMA(UK_A1(u, 0), 12, 13) UK_FMA(UK_A1(u, 1), 14, 15)

/*
 * The whole tile of STEP and ROWS: 12 rows, 4 or 8, with IN before the loop
 * and OUT after it (a tail column's sums: tile_12x32_ind_t1()); the
 * vzeroupper leaves no dirty upper state behind.
 */
#define UK_TILE_(STEP, ROWS, IN, OUT)					\
	"mov %[c], %[p]\n\t"						\
	"test %[load], %[load]\n\t"					\
	"jz 5f\n\t"							\
	ROWS(ZT_LD)							\
	"jmp 6f\n"							\
	"5:\n\t"							\
	ROWS(ZT_ZERO)							\
	"6:\n\t"							\
	UK_SETUP							\
	IN								\
	"cmp $4, %[k]\n\t"						\
	"jb 2f\n"							\
	".p2align 6\n"							\
	"1:\n\t"							\
	STEP(0) STEP(1) STEP(2) STEP(3)					\
	UK_PF_A								\
	UK_PF								\
	UK_ADV4								\
	"sub $4, %[k]\n\t"						\
	"cmp $4, %[k]\n\t"						\
	"jae 1b\n"							\
	"2:\n\t"							\
	"test %[k], %[k]\n\t"						\
	"jz 4f\n"							\
	"3:\n\t"							\
	STEP(0)								\
	UK_ADV1								\
	"dec %[k]\n\t"							\
	"jnz 3b\n"							\
	"4:\n\t"							\
	OUT								\
	ZT_STORE(ROWS)							\
	"vzeroupper\n\t"

#define UK_TILE UK_TILE_(UK_STEP, ZT_ROWS, , )
#define UK_TILE4 UK_TILE_(UK_STEP4, ZT_ROWS4, , )
#define UK_TILE8 UK_TILE_(UK_STEP8, ZT_ROWS8, , )

#define UK_CLOBBER							\
	"xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",	\
	"xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14",	\
	"xmm15", "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21",	\
	"xmm22", "xmm23", "xmm24", "xmm25", "xmm26", "xmm27", "xmm29",	\
	"xmm30", "xmm31", "k1", "k2", "k3", "k4", "k5", "k6", "cc",	\
	"memory"

/*
 * Each variant's tiles, 12x32 and 4x32, from UK_FN_B(name, TILE) (B in
 * panels) or UK_FN_IND(name, TILE) (B by offsets) under the variant's
 * UK_A0, UK_A1, UK_B, UK_ADV4, UK_ADV1 and UK_PF: the tile_fn parameters,
 * of which each uses its own.
 */
#define UK_PARAMS							\
	__u64 kc, const float *a0, const float *a1, const float *b0,	\
	const float *b1, const __s32 *off, float *c, __u64 rs, int load, \
	const struct eng_tile_out *out, const float *pf, __s64 ars,	\
	__s64 pd

/* A in panels: k-major groups of 6 at a0 (rows 0-5) and a1 (6-11). */
#define UK_SETUP
/*
 * The next tile's A, %[pd] bytes on from this one's (a0()): the two lines
 * of each panel that hold this trip's steps there, a tile ahead, into L2
 * (see a_ahead()).
 */
#define UK_PF_A								\
	"prefetcht2 (%[a0], %[pd])\n\t"				\
	"prefetcht2 64(%[a0], %[pd])\n\t"				\
	"prefetcht2 (%[a1], %[pd])\n\t"				\
	"prefetcht2 64(%[a1], %[pd])\n\t"
#define UK_A0(u, r) "(4 * (6 * " #u " + " #r "))(%[a0])"
#define UK_A1(u, r) "(4 * (6 * " #u " + " #r "))(%[a1])"
/* B in panels: step u at b, columns 16-31 a panel (bd bytes) further. */
#define UK_B(u)								\
	"vmovups (64 * " #u ")(%[b]), %%zmm30\n\t"			\
	"vmovups (64 * " #u ")(%[b], %[bd]), %%zmm31\n\t"
#define UK_ADV4 "add $96, %[a0]\n\tadd $96, %[a1]\n\tadd $256, %[b]\n\t"
/* A line of B for a later tile per trip, into L2 (see b_ahead()). */
#define UK_PF_B "prefetcht1 (%[pf])\n\tadd $64, %[pf]\n\t"
#define UK_PF UK_PF_B
#define UK_ADV1 "add $24, %[a0]\n\tadd $24, %[a1]\n\tadd $64, %[b]\n\t"

#define UK_FN_B(name, TILE)						\
static __attribute__((__noinline__))					\
void name(UK_PARAMS)							\
{									\
	__s64 bd = (const char *)b1 - (const char *)b0;			\
	__u64 rsb = rs * 4;						\
	const float *t;							\
	float *p;							\
									\
	__asm__ __volatile__(TILE					\
			     : [k] "+r"(kc), [a0] "+r"(a0), [a1] "+r"(a1), \
			       [b] "+r"(b0), [p] "=&r"(p), [t] "=&r"(t), \
			       [rsb] "+r"(rsb), [pf] "+r"(pf)		\
			     : [bd] "r"(bd), [c] "r"(c), [load] "r"(load), \
			       [out] "r"(out), [pd] "r"(pd)		\
			     : UK_CLOBBER);				\
}

UK_FN_B(tile_12x32, UK_TILE)
UK_FN_B(tile_4x32, UK_TILE4)
UK_FN_B(tile_8x32, UK_TILE8)

/* B by offsets: step u's row at b + 4 * off[u], columns 16-31 64 bytes on. */
#undef UK_B
#undef UK_ADV4
#undef UK_ADV1
#define UK_B(u)								\
	"movslq (4 * " #u ")(%[off]), %[t]\n\t"				\
	"vmovups (%[b], %[t], 4), %%zmm30\n\t"				\
	"vmovups 64(%[b], %[t], 4), %%zmm31\n\t"
#undef UK_PF
#define UK_PF
#define UK_ADV4 "add $96, %[a0]\n\tadd $96, %[a1]\n\tadd $16, %[off]\n\t"
#define UK_ADV1 "add $24, %[a0]\n\tadd $24, %[a1]\n\tadd $4, %[off]\n\t"

#define UK_FN_IND(name, TILE)						\
static __attribute__((__noinline__))					\
void name(UK_PARAMS)							\
{									\
	__u64 rsb = rs * 4;						\
	__s64 t;							\
	float *p;							\
									\
	__asm__ __volatile__(TILE					\
			     : [k] "+r"(kc), [a0] "+r"(a0), [a1] "+r"(a1), \
			       [off] "+r"(off), [p] "=&r"(p), [t] "=&r"(t), \
			       [rsb] "+r"(rsb)				\
			     : [b] "r"(b0), [c] "r"(c), [load] "r"(load), \
			       [out] "r"(out), [pd] "r"(pd), [pf] "r"(pf) \
			     : UK_CLOBBER);				\
}

UK_FN_IND(tile_12x32_ind, UK_TILE)
UK_FN_IND(tile_4x32_ind, UK_TILE4)
UK_FN_IND(tile_8x32_ind, UK_TILE8)

/*
 * The 12x32 tile with B by offsets that also fetches the line at %[pf] +
 * 4 * off[u] into L2 a step (see B_FAR_ROW): a variant of its own, as the
 * extra load of every step cost the tiles that have nothing to fetch
 * (YOLOv8n's 3x3 convolutions of stride 2 took 5% longer).
 */
#undef UK_B
#define UK_B(u)								\
	"movslq (4 * " #u ")(%[off]), %[t]\n\t"				\
	"vmovups (%[b], %[t], 4), %%zmm30\n\t"				\
	"vmovups 64(%[b], %[t], 4), %%zmm31\n\t"			\
	"prefetcht1 (%[pf], %[t], 4)\n\t"
UK_FN_IND(tile_12x32_ind_far, UK_TILE)
#undef UK_B
#define UK_B(u)								\
	"movslq (4 * " #u ")(%[off]), %[t]\n\t"				\
	"vmovups (%[b], %[t], 4), %%zmm30\n\t"				\
	"vmovups 64(%[b], %[t], 4), %%zmm31\n\t"

/*
 * The 12x32 tile with B by offsets and a block's one tail column
 * (tail_cols(): a 7x7 map's 49th) in the same loop, while the tile's A
 * is in L1: alone, the tail read the slice's A again from L2, two loads
 * a multiply-add (1x1 1024->2048 of stride 2 onto 7x7: 9% of the time
 * for 2% of the work). The column's sums of the tile's 12 rows are in
 * zmm24, lanes 0-5 and 8-13 as tail_a() puts them; per step, after the
 * tile's, A's rows go to zmm25 under the masks k5 and k6 (no read past
 * a panel) and one FMA adds them times the column's element of B, at
 * %[bt] + 4 * off[k]. The sums come from and go to the 16 floats at
 * %[tl] (tile_12x32_tail()). Each sum's FMAs are those of tail_block(),
 * in the same order: the same bits.
 */
#define UT_STEP(u)							\
	UK_STEP(u)							\
	"vmovups (24 * " #u ")(%[a0]), %%zmm25%{%%k5%}%{z%}\n\t"	\
	"vmovups (24 * " #u " - 32)(%[a1]), %%zmm25%{%%k6%}\n\t"	\
	"vfmadd231ps (%[bt], %[t], 4)%{1to16%}, %%zmm25, %%zmm24\n\t"

/* The masks and the column's sums in before the loop, and out after. */
#define UT_IN								\
	"mov $0x3f, %k[t]\n\t"						\
	"kmovw %k[t], %%k5\n\t"					\
	"mov $0x3f00, %k[t]\n\t"					\
	"kmovw %k[t], %%k6\n\t"					\
	"vmovups %[tl], %%zmm24\n\t"
#define UT_OUT "vmovups %%zmm24, %[tl]\n\t"

static __attribute__((__noinline__))
void tile_12x32_ind_t1(UK_PARAMS, const float *bt, float (*tl)[16])
{
	__u64 rsb = rs * 4;
	__s64 t;
	float *p;

	(void)b1;
	(void)pf;
	(void)ars;
	__asm__ __volatile__(UK_TILE_(UT_STEP, ZT_ROWS, UT_IN, UT_OUT)
			     : [k] "+r"(kc), [a0] "+r"(a0), [a1] "+r"(a1),
			       [off] "+r"(off), [p] "=&r"(p), [t] "=&r"(t),
			       [rsb] "+r"(rsb), [tl] "+m"(*tl)
			     : [b] "r"(b0), [bt] "r"(bt), [c] "r"(c),
			       [load] "r"(load), [out] "r"(out), [pd] "r"(pd)
			     : UK_CLOBBER);
}

/*
 * A in rows ENG_KC floats apart (pack_a_rows(); ars is ENG_KC): row r of
 * step u at a0 + 4 * (u + ENG_KC * r), in the part's scratch, which the
 * tiles before read: nothing to fetch ahead.
 */
#undef UK_PF_A
#define UK_PF_A
#undef UK_A0
#undef UK_A1
#undef UK_ADV4
#undef UK_ADV1
#define UK_A0(u, r) "(4 * (" #u " + " ZT_STR(ENG_KC) " * " #r "))(%[a0])"
#define UK_A1(u, r) "(4 * (" #u " + " ZT_STR(ENG_KC) " * (6 + " #r ")))(%[a0])"
#define UK_ADV4 "add $16, %[a0]\n\tadd $16, %[off]\n\t"
#define UK_ADV1 "add $4, %[a0]\n\tadd $4, %[off]\n\t"

UK_FN_IND(tile_12x32_ind_rows, UK_TILE)
UK_FN_IND(tile_4x32_ind_rows, UK_TILE4)
UK_FN_IND(tile_8x32_ind_rows, UK_TILE8)

/*
 * A in rows %[lda] bytes apart (ars floats), read in place: rows 0-2 from
 * a0, 3-5 from a1, 6-8 from %[p] and 9-11 from %[t], the first of each
 * three at its pointer, the others one and two strides on. UK_SETUP
 * points a1, %[p] and %[t] 3, 6 and 9 rows on from a0; they move past
 * the steps together.
 */
#undef UK_SETUP
#undef UK_A0
#undef UK_A1
#undef UK_ADV4
#undef UK_ADV1
#undef UK_B
#undef UK_PF
#define UK_SETUP							\
	"lea (%[a0], %[lda], 2), %[a1]\n\t"				\
	"add %[lda], %[a1]\n\t"					\
	"lea (%[a1], %[lda], 2), %[p]\n\t"				\
	"add %[lda], %[p]\n\t"						\
	"lea (%[p], %[lda], 2), %[t]\n\t"				\
	"add %[lda], %[t]\n\t"
#define UK_AROW_(u, base, s) "(4 * " #u ")(%[" #base "], %[lda], " #s ")"
#define UK_AROW_0(u) "(4 * " #u ")(%[a0])"
#define UK_AROW_1(u) UK_AROW_(u, a0, 1)
#define UK_AROW_2(u) UK_AROW_(u, a0, 2)
#define UK_AROW_3(u) "(4 * " #u ")(%[a1])"
#define UK_AROW_4(u) UK_AROW_(u, a1, 1)
#define UK_AROW_5(u) UK_AROW_(u, a1, 2)
#define UK_AROW_6(u) "(4 * " #u ")(%[p])"
#define UK_AROW_7(u) UK_AROW_(u, p, 1)
#define UK_AROW_8(u) UK_AROW_(u, p, 2)
#define UK_AROW_9(u) "(4 * " #u ")(%[t])"
#define UK_AROW_10(u) UK_AROW_(u, t, 1)
#define UK_AROW_11(u) UK_AROW_(u, t, 2)
#define UK_A0(u, r) UK_AROW_##r(u)
#define UK_A1(u, r) UK_A1_##r(u)
#define UK_A1_0(u) UK_AROW_6(u)
#define UK_A1_1(u) UK_AROW_7(u)
#define UK_A1_2(u) UK_AROW_8(u)
#define UK_A1_3(u) UK_AROW_9(u)
#define UK_A1_4(u) UK_AROW_10(u)
#define UK_A1_5(u) UK_AROW_11(u)
#define UK_ADV_A(n)							\
	"add $" #n ", %[a0]\n\tadd $" #n ", %[a1]\n\t"			\
	"add $" #n ", %[p]\n\tadd $" #n ", %[t]\n\t"

#define UK_B(u)								\
	"vmovups (64 * " #u ")(%[b]), %%zmm30\n\t"			\
	"vmovups (64 * " #u ")(%[b], %[bd]), %%zmm31\n\t"
#define UK_PF UK_PF_B
#define UK_ADV4 UK_ADV_A(16) "add $256, %[b]\n\t"
#define UK_ADV1 UK_ADV_A(4) "add $64, %[b]\n\t"

#define UK_FN_ROWS(name, TILE)						\
static __attribute__((__noinline__))					\
void name(UK_PARAMS)							\
{									\
	__s64 bd = (const char *)b1 - (const char *)b0, lda = ars * 4;	\
	__u64 rsb = rs * 4;						\
	const float *t;							\
	float *p;							\
									\
	__asm__ __volatile__(TILE					\
			     : [k] "+r"(kc), [a0] "+r"(a0), [a1] "+r"(a1), \
			       [b] "+r"(b0), [p] "=&r"(p), [t] "=&r"(t), \
			       [rsb] "+r"(rsb), [pf] "+r"(pf)		\
			     : [bd] "r"(bd), [c] "r"(c), [load] "r"(load), \
			       [out] "r"(out), [lda] "r"(lda)		\
			     : UK_CLOBBER);				\
}

UK_FN_ROWS(tile_12x32_rows, UK_TILE)
UK_FN_ROWS(tile_4x32_rows, UK_TILE4)
UK_FN_ROWS(tile_8x32_rows, UK_TILE8)

#define TILE_FN(name, rows, np, ind, arow)				\
static __attribute__((__noinline__))					\
void name(UK_PARAMS)							\
{									\
	tile(kc, a0, a1, b0, b1, off, c, rs, load, out, ars, pd, rows,	\
	     np, ind, arow);						\
}

TILE_FN(tile_12x16, 12, 1, 0, 0)
TILE_FN(tile_6x32, 6, 2, 0, 0)
TILE_FN(tile_6x16, 6, 1, 0, 0)
TILE_FN(tile_12x16_ind, 12, 1, 1, 0)
TILE_FN(tile_6x32_ind, 6, 2, 1, 0)
TILE_FN(tile_6x16_ind, 6, 1, 1, 0)
TILE_FN(tile_12x16_rows, 12, 1, 0, 1)
TILE_FN(tile_6x32_rows, 6, 2, 0, 1)
TILE_FN(tile_6x16_rows, 6, 1, 0, 1)
TILE_FN(tile_12x16_ind_rows, 12, 1, 1, 1)
TILE_FN(tile_6x32_ind_rows, 6, 2, 1, 1)
TILE_FN(tile_6x16_ind_rows, 6, 1, 1, 1)
TILE_FN(tile_4x16, 4, 1, 0, 0)
TILE_FN(tile_4x16_ind, 4, 1, 1, 0)
TILE_FN(tile_4x16_rows, 4, 1, 0, 1)
TILE_FN(tile_4x16_ind_rows, 4, 1, 1, 1)
TILE_FN(tile_8x16, 8, 1, 0, 0)
TILE_FN(tile_8x16_ind, 8, 1, 1, 0)
TILE_FN(tile_8x16_rows, 8, 1, 0, 1)
TILE_FN(tile_8x16_ind_rows, 8, 1, 1, 1)

typedef void (*tile_fn)(UK_PARAMS);

/*
 * [A in rows][ind][rows: one panel's first 4, one panel, two panels, a
 * panel and the next one's first 2][two column panels]
 */
static const tile_fn tiles[2][2][4][2] = {
	{
		{ { tile_4x16, tile_4x32 }, { tile_6x16, tile_6x32 },
		  { tile_12x16, tile_12x32 }, { tile_8x16, tile_8x32 } },
		{ { tile_4x16_ind, tile_4x32_ind },
		  { tile_6x16_ind, tile_6x32_ind },
		  { tile_12x16_ind, tile_12x32_ind },
		  { tile_8x16_ind, tile_8x32_ind } },
	}, {
		{ { tile_4x16_rows, tile_4x32_rows },
		  { tile_6x16_rows, tile_6x32_rows },
		  { tile_12x16_rows, tile_12x32_rows },
		  { tile_8x16_rows, tile_8x32_rows } },
		{ { tile_4x16_ind_rows, tile_4x32_ind_rows },
		  { tile_6x16_ind_rows, tile_6x32_ind_rows },
		  { tile_12x16_ind_rows, tile_12x32_ind_rows },
		  { tile_8x16_ind_rows, tile_8x32_ind_rows } },
	},
};

/* Rows of the last tile when it is a panel of which 4 or fewer are used. */
#define SHORT_ROWS 4

/* Rows of the 8-row tile: a last pair of panels with 2 or fewer in the second. */
#define PAIR8_ROWS (ENG_MR + 2)

/* The rows of a tile of tiles[][][rows][]. */
static const int tile_rows[4] = { SHORT_ROWS, ENG_MR, 2 * ENG_MR, PAIR8_ROWS };

/*
 * Rows (or columns) of a block of @n that tiles of two panels of @w, the
 * last one alone when odd (or its first @short_w), or the last pair's
 * first @pair_w, cover without reaching past @n.
 */
static __u64 whole_tiles(__u64 n, __u64 w, __u64 short_w, __u64 pair_w)
{
	__u64 pairs = n / (2 * w) * 2 * w;

	return n - pairs == w || n - pairs == short_w || n - pairs == pair_w ?
	       n : pairs;
}

/*
 * Where tile row @t of column pair @j prefetches, a line per four depth
 * steps: the next pair's B, its first panel shared by the first @half
 * tiles of the column and its second by the rest, so that the next pair's
 * first tile finds B in L2 rather than memory. The last pair fetches
 * @s->b_next; tiles with nothing to fetch touch their own B.
 */
static const float *b_ahead(const struct eng_slice *s, __u64 nb, __u64 j,
			    __u64 t, __u64 half)
{
	__u64 pj = j + 2 < nb ? j + 2 : 0, trips = s->kc / 4;
	__u64 panel = t >= half, step = t - panel * half;
	const float *next = j + 2 < nb ? s->b + pj * s->b_ps : s->b_next;

	if (!next || step >= half || pj + panel >= nb ||
	    (step + 1) * trips > s->kc)
		return s->b + j * s->b_ps;
	return next + panel * s->b_ps + step * trips * ENG_NR;
}

/*
 * Bytes between B's depth rows, evenly apart, from which tiles that read
 * B by offsets fetch the next column pair's rows ahead: a column pair's
 * first two 12x32 tiles, into L2, a line per depth step at that step's
 * offset, the first tile the next pair's first panel and the second its
 * second (tile_12x32_ind_far()). Such rows are a 1x1 convolution's input
 * read in place, channels 3 KiB (28x28) or 12.5 KiB (56x56) apart, one
 * stream per channel for the hardware's prefetchers, which follow far
 * fewer. Nearer rows (14x14 maps' 784 bytes) and a window's taps (a
 * strided one's alternate between its stride phases' planes: YOLOv8n's
 * 3x3 convolutions of stride 2) lost: L2 holds them already.
 */
#define B_FAR_ROW 2048

/*
 * Where the last slice's tile at block row @r0 and column @c0, @w columns
 * wide, goes (see struct eng_slice's @out): with padded columns, a tile
 * that reaches past its output row's last column stores under masks, the
 * columns past the padding into the next output row.
 */
void vnpu_eng_tile_out(const struct eng_slice *s, __u64 r0, __u64 c0, __u64 w,
		       struct eng_tile_out *o)
{
	__u64 q = s->out_q0 + c0, wp = s->out_wp, ow = s->out_ow;
	__u64 qc, lo = 0, hi = 0, c;

	o->add = s->out_add ? s->out_add + r0 : 0;
	o->cadd = s->out_cadd ? s->out_cadd + c0 : 0;
	o->jb = 0;
	o->y = s->out + (__s64)r0 * s->out_rs;
	o->res = s->out_res ? s->out_res + (__s64)r0 * s->out_res_rs : 0;
	c = wp ? q / wp * ow + q % wp : c0;
	o->y += c;
	if (o->res)
		o->res += c;
	if (!wp)
		return;
	qc = q % wp;
	if (qc + w <= ow)
		return;
	if (qc < ow)
		lo = (1ull << (eng_min(w, ow - qc))) - 1;
	if (qc + w > wp) {
		c = wp - qc;
		hi = ((1ull << eng_min(w, c + ow)) - 1) & ~((1ull << c) - 1);
	}
	o->jb = -(__s64)(wp - ow) * 4;
	o->mask[0] = (__u16)lo;
	o->mask[1] = (__u16)(lo >> 16);
	o->mask[2] = (__u16)hi;
	o->mask[3] = (__u16)(hi >> 16);
}

/* The line at @p, for writing: fetched and owned. */
static inline void prefetch_own(const void *p)
{
	__asm__ __volatile__("prefetchw %0" : : "m"(*(const char *)p));
}

/*
 * The line at @p, for reading: into L1, or with @far into L2 only (the
 * locality must be a constant where the builtin is seen: clang checks it
 * before inlining).
 */
static __attribute__((__always_inline__)) inline
void res_line(const char *p, const int far)
{
	if (far)
		__builtin_prefetch(p, 0, 1);
	else
		__builtin_prefetch(p, 0, 3);
}

/*
 * The residual's lines of a tile of @rows rows and @cols columns that
 * reads it at @o: into L1, or with @far into L2 only.
 */
static __attribute__((__always_inline__)) inline
void res_ahead(const struct eng_tile_out *o, int rows, __u64 cols,
	       const int far)
{
	const char *res = (const char *)o->res;
	__s64 last = cols * 4 - 1;
	int r;

	for (r = 0; res && r < rows; r++, res += o->res_rsb) {
		res_line(res, far);
		res_line(res + last, far);
		if (o->jb) {
			res_line(res + o->jb, far);
			res_line(res + o->jb + last, far);
		}
	}
}

/*
 * Asks for the output lines of a tile of @rows rows and @cols columns that
 * stores to @o, to own them by the time its stores come: they are new
 * lines, and a tile's stores that miss stall the next tile's start.
 */
void vnpu_eng_out_ahead(const struct eng_tile_out *o, int rows, __u64 cols)
{
	const char *y = (const char *)o->y;
	__s64 last = cols * 4 - 1;
	int r;

	for (r = 0; r < rows; r++, y += o->rsb) {
		prefetch_own(y);
		prefetch_own(y + last);
		if (o->jb) {
			prefetch_own(y + o->jb);
			prefetch_own(y + o->jb + last);
		}
	}
	/* The residual's lines too: twelve short runs defeat the streamer. */
	res_ahead(o, rows, cols, 0);
}

/*
 * The residual's lines of the tile at block row @r0 and column @c0 into
 * L2, a column pair before the tile reads them (vnpu_eng_out_ahead() then
 * brings them on into L1). A tile of ResNet-50's 64 -> 256 1x1 over 56x56
 * whose residual came from L3 (written three layers before) took ~10%
 * longer than one without, though its own fetch into L1 came a tile's
 * 1,200 cycles early.
 */
static void res_far(const struct eng_slice *s, __u64 r0, __u64 c0, int rows,
		    __u64 cols)
{
	struct eng_tile_out o;

	vnpu_eng_tile_out(s, r0, c0, cols, &o);
	o.res_rsb = s->out_res_rs * 4;
	res_ahead(&o, rows, cols, 1);
}

/*
 * @s->out_fn on the outputs the tile of @rows rows and @cols columns at
 * @o stored, while they are in L1. Under masks (vnpu_eng_tile_out()) a
 * row's outputs are one run all the same: the columns of @o->mask[0..1]
 * from @o->y on, then those of @o->mask[2..3], which the stores put
 * @o->jb bytes back, right after them (at the next output row's start).
 */
void vnpu_eng_tile_out_fn(const struct eng_slice *s,
			  const struct eng_tile_out *o, int rows, __u64 cols)
{
	__u32 lo = o->mask[0] | (__u32)o->mask[1] << 16;
	__u32 hi = o->mask[2] | (__u32)o->mask[3] << 16;
	__u64 n = cols, h0 = 0, c;
	float *y = o->y;

	if (o->jb) {
		for (n = 0; n < cols && (lo >> n & 1); n++)
			;
		for (h0 = 0; h0 < cols && !(hi >> h0 & 1); h0++)
			;
		if (!n)
			y += (__s64)h0 + o->jb / 4;
		for (c = h0; c < cols && (hi >> c & 1); c++)
			n++;
	}
	if (n)
		s->out_fn(s->out_arg, y, (__s64)(o->rsb / 4), (__u64)rows, n);
}

/*
 * The last columns of a block, past its whole panels of B, when there are
 * at most TAIL_COLS of them (a 7x7 map's 49th output, a 14x14 one's last
 * 4): twelve rows of A (two panels) a vector instead of sixteen columns,
 * so that each FMA has twelve useful lanes rather than one to four. (With
 * eight, conv 3x3 512->512 on 7x7 took 10% longer than with a 12x32 tile.)
 */
#define TAIL_COLS ENG_TAIL_COLS
#define TAIL_PAIRS 8	/* panel pairs of a tail call at most */
#define TAIL_SUMS 16	/* its sums: pairs times columns */

/* Lane @l's row of a pair (tail_a()), or -1 for none of @n rows. */
static inline int tail_row(int l, int n)
{
	int r = l < 8 ? l : l - 2;

	return l % 8 < ENG_MR && r < n ? r : -1;
}

/* Rows [@r0, @r0 + @n) of column @c of @s's sums in a pair's lanes (zero unless @s->load). */
static __attribute__((__noinline__))
v16sf tail_load(const struct eng_slice *s, __u64 r0, int n, __u64 c)
{
	float lane[16];
	int l, r;

	for (l = 0; l < 16; l++) {
		r = tail_row(l, n);
		lane[l] = s->load && r >= 0 ?
			  s->acc[(r0 + r) * s->acc_rs + c] : 0.0f;
	}
	return ld16(lane);
}

/* A pair's lanes @v to rows [@r0, @r0 + @n) of column @c of @s's sums. */
static __attribute__((__noinline__))
void tail_store(const struct eng_slice *s, __u64 r0, int n, __u64 c, v16sf v)
{
	float lane[16];
	int l, r;

	st16(lane, v);
	for (l = 0; l < 16; l++) {
		r = tail_row(l, n);
		if (r >= 0)
			s->acc[(r0 + r) * s->acc_rs + c] = lane[l];
	}
}

/*
 * Depth @k of the panels of A at @a0 (rows 0-5 in lanes 0-5) and @a1
 * (rows 6-11 in lanes 8-13); lanes 6-7 and 14-15 hold the next depth's
 * first rows, which no sum keeps. A depth before a panel's last reads
 * inside the panel.
 */
static __attribute__((__always_inline__)) inline
v16sf tail_a(const float *a0, const float *a1, __u64 k)
{
	v8sf lo = *(const v8sf_u *)(a0 + ENG_MR * k);
	v8sf hi = *(const v8sf_u *)(a1 + ENG_MR * k);

	return __builtin_shufflevector(lo, hi, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
				       10, 11, 12, 13, 14, 15);
}

/* tail_a() at a slice's last depth, where a panel may end: six floats each. */
static __attribute__((__always_inline__)) inline
v16sf tail_a_last(const float *a0, const float *a1, __u64 k)
{
	v16sf v = __builtin_ia32_loadups512_mask(a0 + ENG_MR * k, (v16sf){},
						 0x003f);

	return __builtin_ia32_loadups512_mask(a1 + ENG_MR * k - 8, v, 0x3f00);
}

/* One depth step of tail_block(): B's @t columns at @bk times @np pairs. */
static __attribute__((__always_inline__)) inline
void tail_fma(v16sf *acc, const v16sf *av, const float *bk, const int t,
	      const int np)
{
	int p, c;

#pragma GCC unroll 8
	for (c = 0; c < t; c++) {
		v16sf bv = bc16(bk[c]);

#pragma GCC unroll 8
		for (p = 0; p < np; p++)
			acc[p * t + c] = FMA16(av[p], bv, acc[p * t + c]);
	}
}

/*
 * Columns [@c0, @c0 + @t) of panel pairs [@i0, @i0 + @np) of @s (2 * @np
 * panels of A, the last alone when @ma ends it; a pair's rows in the
 * lanes tail_a() puts them in), from zero unless @s->load: fma(a[k], b[k],
 * sum) per output in depth order, as the tiles compute it. B is read by
 * offsets when @ind.
 */
static __attribute__((__always_inline__)) inline
void tail_block(const struct eng_slice *s, __u64 i0, __u64 ma, __u64 c0,
		const int t, const int np, const int ind)
{
	const float *a0[TAIL_PAIRS], *a1[TAIL_PAIRS], *b = s->b + c0;
	/* In registers: no zeroing of them (-ftrivial-auto-var-init). */
	v16sf acc[TAIL_SUMS] __attribute__((__uninitialized__));
	v16sf av[TAIL_PAIRS] __attribute__((__uninitialized__));
	__u64 k, kc = s->kc;
	int p, c, n[TAIL_PAIRS];

	if (!ind)
		b = s->b + c0 / ENG_NR * s->b_ps;
#pragma GCC unroll 8
	for (p = 0; p < np; p++) {
		__u64 i = i0 + 2 * p;

		a0[p] = s->a + i * s->a_ps;
		a1[p] = i + 1 < ma ? a0[p] + s->a_ps : a0[p];
		n[p] = i + 1 < ma ? 2 * ENG_MR : ENG_MR;
#pragma GCC unroll 8
		for (c = 0; c < t; c++)
			acc[p * t + c] = tail_load(s, i * ENG_MR, n[p], c0 + c);
	}
	/* The last depth apart: there a panel may end. */
	for (k = 0; k + 1 < kc; k++) {
#pragma GCC unroll 8
		for (p = 0; p < np; p++)
			av[p] = tail_a(a0[p], a1[p], k);
		tail_fma(acc, av, ind ? b + s->off[k] : b + k * ENG_NR, t, np);
	}
	if (kc) {
		for (p = 0; p < np; p++)
			av[p] = tail_a_last(a0[p], a1[p], k);
		tail_fma(acc, av, ind ? b + s->off[k] : b + k * ENG_NR, t, np);
	}
#pragma GCC unroll 8
	for (p = 0; p < np; p++)
#pragma GCC unroll 8
		for (c = 0; c < t; c++)
			tail_store(s, (i0 + 2 * p) * ENG_MR, n[p], c0 + c,
				   acc[p * t + c]);
}

/* Each tail_block() on its own, so that no frame holds several. */
#define TAIL_FN(t, np, ind)						\
static __attribute__((__noinline__))					\
void tail_##t##_##np##_##ind(const struct eng_slice *s, __u64 i0,	\
			     __u64 ma, __u64 c0)			\
{									\
	tail_block(s, i0, ma, c0, t, np, ind);				\
}

#define TAIL_FNS(t, np)							\
	TAIL_FN(t, np, 0) TAIL_FN(t, np, 1)

TAIL_FNS(1, 1) TAIL_FNS(1, 2) TAIL_FNS(1, 4) TAIL_FNS(1, 8)
TAIL_FNS(2, 1) TAIL_FNS(2, 2) TAIL_FNS(2, 4)
TAIL_FNS(3, 1) TAIL_FNS(3, 2) TAIL_FNS(3, 4)
TAIL_FNS(4, 1) TAIL_FNS(4, 2) TAIL_FNS(4, 4)

typedef void (*tail_fn)(const struct eng_slice *s, __u64 i0, __u64 ma,
			__u64 c0);

#define TAIL_NP(t, np) { tail_##t##_##np##_0, tail_##t##_##np##_1 }

/*
 * [columns - 1][log2 of the panel pairs][B by offsets]: up to TAIL_SUMS
 * sums a call.
 */
static const tail_fn tail_fns[TAIL_COLS][4][2] = {
	{ TAIL_NP(1, 1), TAIL_NP(1, 2), TAIL_NP(1, 4), TAIL_NP(1, 8) },
	{ TAIL_NP(2, 1), TAIL_NP(2, 2), TAIL_NP(2, 4), { 0, 0 } },
	{ TAIL_NP(3, 1), TAIL_NP(3, 2), TAIL_NP(3, 4), { 0, 0 } },
	{ TAIL_NP(4, 1), TAIL_NP(4, 2), TAIL_NP(4, 4), { 0, 0 } },
};

/*
 * Columns [@c0, @c0 + @t) of @s, @t at most TAIL_COLS, of panel pairs
 * @i on, to its @acc: as many panel pairs a call as the table has, then
 * halves. Each sum is a chain of dependent FMAs, so a call wants eight in
 * flight to keep both FMA units busy (ResNet-50's strided 3x3 over 14x14
 * has units of 24 rows and 2 tail columns: one pair a call kept two).
 */
static void tail_cols(const struct eng_slice *s, __u64 c0, __u64 t, __u64 i)
{
	__u64 ma = eng_div_up(s->mc, ENG_MR), pairs = eng_div_up(ma, 2);
	int ind = !!s->off, l;

	for (l = 3; l >= 0; l--)
		for (; tail_fns[t - 1][l][ind] && i + (1u << l) <= pairs;
		     i += 1u << l)
			tail_fns[t - 1][l][ind](s, 2 * i, ma, c0);
}

/*
 * The 12x32 tile at block row @r0 (the tile_fn parameters, B by offsets)
 * with tail column @c0 of its rows: its sums through tail_load() and
 * tail_store(), the tile's own as any tile's.
 */
static void tile_12x32_tail(const struct eng_slice *s, __u64 r0, __u64 c0,
			    UK_PARAMS)
{
	float tl[1][16] __attribute__((__aligned__(64)));

	st16(tl[0], tail_load(s, r0, 2 * ENG_MR, c0));
	tile_12x32_ind_t1(kc, a0, a1, b0, b1, off, c, rs, load, out, pf, ars,
			  pd, s->b + c0, tl);
	tail_store(s, r0, 2 * ENG_MR, c0, ld16(tl[0]));
}

/*
 * Bytes from the A of the tile at row pair @i, column pair @j (at @a0) to
 * the next tile's: the next row pair's, the first one's for the next
 * column pair, @s->a_next after the last tile (0: none to fetch).
 */
static __s64 a_ahead_pd(const struct eng_slice *s, const float *a0, __u64 i,
			__u64 ma, __u64 j, __u64 nb)
{
	const float *next = s->a_next;

	if (s->a_rows)
		return 0;
	if (i + 2 < ma)
		return (__s64)(2 * s->a_ps * 4);
	if (j + 2 < nb)
		next = s->a;
	return next ? (const char *)next - (const char *)a0 : 0;
}

void vnpu_eng_slice_avx512(struct eng_slice *s)
{
	__u64 ma = eng_div_up(s->mc, ENG_MR), nb = eng_div_up(s->nc, ENG_NR);
	__u64 half = eng_div_up(ma, 4), i, j, nc = s->nc;
	int ind = !!s->off, fuse, far = 0;
	/*
	 * A lone last panel with at most SHORT_ROWS rows in the block takes
	 * the short tiles: a convolution of 64 outputs computes 64 rows, not 66.
	 */
	int short_m = ma % 2 && s->mc - (ma - 1) * ENG_MR <= SHORT_ROWS;
	struct eng_tile_out out = { .rsb = (__u64)s->out_rs * 4,
				    .res_rsb = s->out_res_rs * 4,
				    .act = s->out_act,
				    .alpha = s->out_alpha,
				    .beta = s->out_beta };

	/* A few columns past the whole panels (A in panels): the tail's. */
	if (!s->a_rows && nc % ENG_NR && nc % ENG_NR <= TAIL_COLS) {
		nb--;
		nc = nb * ENG_NR;
	}
	/*
	 * One tail column with B by offsets (a 7x7 map's 49th): in the loop
	 * of the first column pair's 12-row tiles (tile_12x32_tail()).
	 */
	fuse = ind && s->nc - nc == 1 && nb >= 2;
	if (ind && s->kc > 2) {
		__s64 d = (__s64)s->off[1] - s->off[0];

		far = d == (__s64)s->off[2] - s->off[1] &&
		      (d < 0 ? -d : d) * 4 >= B_FAR_ROW;
	}
	s->out_mc = s->out ? whole_tiles(s->mc, ENG_MR, SHORT_ROWS,
					 fuse ? 0 : PAIR8_ROWS) : 0;
	s->out_nc = s->out ? whole_tiles(nc, ENG_NR, ENG_NR, ENG_NR) : 0;
	for (j = 0; j < nb; j += 2) {
		const float *b0 = s->b + j * s->b_ps;
		int two_n = j + 1 < nb;

		for (i = 0; i < ma; i += 2) {
			const float *a0 = s->a + i * s->a_ps;
			int rows = i + 1 < ma ? 2 : short_m ? 0 : 1;

			/* Not with the tail column, which takes 12 rows. */
			if (!fuse && i + 2 == ma &&
			    s->mc - (i + 1) * ENG_MR <= 2)
				rows = 3;
			__u64 cols = two_n ? 2 * ENG_NR : ENG_NR;
			const struct eng_tile_out *o = 0;

			/* Tiles wholly inside the block go to the output. */
			if (i * ENG_MR < s->out_mc && j * ENG_NR < s->out_nc) {
				vnpu_eng_tile_out(s, i * ENG_MR, j * ENG_NR, cols,
						  &out);
				o = &out;
				vnpu_eng_out_ahead(o, tile_rows[rows], cols);
				if (s->out_res && j + 2 < nb &&
				    (j + 2) * ENG_NR < s->out_nc)
					res_far(s, i * ENG_MR, (j + 2) * ENG_NR,
						tile_rows[rows],
						j + 3 < nb ? 2 * ENG_NR : ENG_NR);
			}
			if (fuse && !j && rows == 2)
				tile_12x32_tail(s, i * ENG_MR, nc, s->kc, a0,
						a0 + s->a_ps, b0, b0 + s->b_ps,
						s->off, s->acc + i * ENG_MR *
						s->acc_rs, s->acc_rs, s->load,
						o, 0, 0,
						a_ahead_pd(s, a0, i, ma, j, nb));
			else if (far && i < 4 && j + 2 < nb && rows == 2 &&
				 two_n && !s->a_rows)
				tile_12x32_ind_far(s->kc, a0, a0 + s->a_ps, b0,
						   b0 + s->b_ps, s->off,
						   s->acc + i * ENG_MR *
						   s->acc_rs + j * ENG_NR,
						   s->acc_rs, s->load, o,
						   b0 + (2 + i / 2) * ENG_NR, 0,
						   a_ahead_pd(s, a0, i, ma, j, nb));
			else
				tiles[!!s->a_rows][ind][rows][two_n](s->kc, a0,
						a0 + s->a_ps, b0, b0 + s->b_ps,
						s->off, s->acc + i * ENG_MR *
						s->acc_rs + j * ENG_NR,
						s->acc_rs, s->load, o,
						b_ahead(s, nb, j, i / 2, half),
						s->a_rows,
						a_ahead_pd(s, a0, i, ma, j, nb));
			if (o && s->out_fn)
				vnpu_eng_tile_out_fn(s, o, tile_rows[rows], cols);
		}
	}
	/* After the tiles: they have brought the slice of A into the caches. */
	if (nc < s->nc)
		tail_cols(s, nc, s->nc - nc, fuse ? ma / 2 : 0);
}

/*
 * @n panels of the row's sums (one register each) plus the slice, in
 * depth order.
 */
#define GEMV16_PANELS(n) do {						\
	v16sf v[n];							\
	int i;								\
									\
	for (i = 0; i < (n); i++)					\
		v[i] = g->load ? ld16(acc + ENG_NR * i) : (v16sf){};	\
	for (k = 0; k < g->kc; k++) {					\
		v16sf ak = bc16(g->a[k]);				\
									\
		for (i = 0; i < (n); i++)				\
			v[i] = FMA16(ak, ld16(b + i * g->b_ps + k * ENG_NR), \
				     v[i]);				\
	}								\
	for (i = 0; i < (n); i++)					\
		st16(acc + ENG_NR * i, v[i]);				\
} while (0)

/* Eight panels at a time (eight independent sums), then one. */
void vnpu_eng_gemv_avx512(const struct eng_gemv *g)
{
	const float *b = g->b;
	float *acc = g->acc;
	__u64 p = 0, k;

	for (; p + 8 <= g->np; p += 8, b += 8 * g->b_ps, acc += 8 * ENG_NR)
		GEMV16_PANELS(8);
	for (; p < g->np; p++, b += g->b_ps, acc += ENG_NR)
		GEMV16_PANELS(1);
}

/*
 * The Winograd input transform's B^T along one axis on sixteen lanes, in
 * place over t[0], t[@s], ..., t[5 * @s]: wino_bt()'s operations in its
 * order (vnpu_eng_wino.c), so its bits.
 */
static __attribute__((__always_inline__)) inline
void bt16(v16sf *t, const int s)
{
	v16sf d0 = t[0], d1 = t[s], d2 = t[2 * s], d3 = t[3 * s];
	v16sf d4 = t[4 * s], d5 = t[5 * s];
	v16sf a = d4 - d2 * 4.0f, b = d3 - d1 * 4.0f;
	v16sf c = d4 - d2, e = (d3 - d1) * 2.0f;

	t[0] = (d0 * 4.0f - d2 * 5.0f) + d4;
	t[s] = a + b;
	t[2 * s] = a - b;
	t[3 * s] = c + e;
	t[4 * s] = c - e;
	t[5 * s] = (d1 * 4.0f - d3 * 5.0f) + d5;
}

/* Most runs of tiles of one tile row a panel loads by rows. */
#define WIN_SEGS	4

typedef int v16si __attribute__((vector_size(64), aligned(4)));

/**
 * struct win_seg - a run of a panel's lanes whose tiles follow each other
 *	along one tile row (a lane's tile 4 columns right of the previous
 *	lane's), for the input transform by rows
 * @base: floats from a channel's image to the column lane 0's tile would
 *	start at in the run's first input row
 * @lm: the columns [16 j, 16 j + 16) from @base inside X, in the run's
 *	tiles (column p is lane p / 4's tile's point p % 4, or for p % 4 < 2
 *	lane p / 4 - 1's point p % 4 + 4)
 * @lanes: the run's lanes
 * @rows: the input rows 0-5 from @base's inside X (each lane's alike)
 */
struct win_seg {
	__s64 base;
	__u16 lm[5];
	__u16 lanes;
	__u8 rows;
};

/* The input rows 0-5 of lane @l's tile inside X. */
static __u32 win_lane_rows(const struct eng_wino_in *w, __u32 l)
{
	__u32 r, m = 0;

	for (r = 0; r < 6; r++)
		m |= (w->rmask[r] >> l & 1u) << r;
	return m;
}

/*
 * Whether lane @l's tile follows lane @l - 1's in its run: 4 columns
 * right, the same rows inside X, and the columns the two share (the
 * earlier's points 4 and 5) inside X alike.
 */
static int win_follows(const struct eng_wino_in *w, __u32 l)
{
	return w->off[l] == w->off[l - 1] + 4 &&
	       win_lane_rows(w, l) == win_lane_rows(w, l - 1) &&
	       (w->kmask[4] >> (l - 1) & 1) == (w->kmask[0] >> l & 1) &&
	       (w->kmask[5] >> (l - 1) & 1) == (w->kmask[1] >> l & 1);
}

/*
 * The panel's runs into @sg: their count, or 0 where its tiles are not
 * runs of consecutive tiles of unit column stride, or lie in more than
 * WIN_SEGS tile rows (then the gathers are no slower).
 */
static int win_segs(const struct eng_wino_in *w, struct win_seg *sg)
{
	__u32 valid = 0, lane, j, p;
	int n = 0, i;

	if (w->ks != 1)
		return 0;
	for (i = 0; i < 6; i++)
		valid |= w->rmask[i];
	for (lane = 0; lane < ENG_NR; lane++) {
		if (!(valid >> lane & 1))
			continue;
		if (!n || !(sg[n - 1].lanes >> (lane - 1) & 1) ||
		    !win_follows(w, lane)) {
			if (n == WIN_SEGS)
				return 0;
			sg[n].base = (__s64)w->off[lane] - 4 * (__s64)lane;
			sg[n].lanes = 0;
			sg[n].rows = (__u8)win_lane_rows(w, lane);
			for (j = 0; j < 5; j++)
				sg[n].lm[j] = 0;
			n++;
		}
		sg[n - 1].lanes |= (__u16)(1u << lane);
	}
	for (i = 0; i < n; i++) {
		__u32 ln = sg[i].lanes;

		for (p = 0; p < 4 * ENG_NR + 2; p++) {
			__u32 l = p / 4, k = p % 4;
			int in = (l < ENG_NR && (ln >> l & 1) &&
				  (w->kmask[k] >> l & 1)) ||
				 (k < 2 && l >= 1 && (ln >> (l - 1) & 1) &&
				  (w->kmask[k + 4] >> (l - 1) & 1));

			if (in)
				sg[i].lm[p / 16] |= (__u16)(1u << (p % 16));
		}
	}
	return n;
}

/*
 * Point k of the sixteen tiles whose columns start 4 apart at @a[0]'s
 * first (@a: 64 consecutive floats): a[4 l + k] into lane l.
 */
#define WIN_PICK(a, k)							\
	__builtin_shufflevector(					\
		__builtin_shufflevector((a)[0], (a)[1], (k), 4 + (k),	\
					8 + (k), 12 + (k), 16 + (k),	\
					20 + (k), 24 + (k), 28 + (k),	\
					0, 0, 0, 0, 0, 0, 0, 0),	\
		__builtin_shufflevector((a)[2], (a)[3], 0, 0, 0, 0, 0,	\
					0, 0, 0, (k), 4 + (k), 8 + (k),	\
					12 + (k), 16 + (k), 20 + (k),	\
					24 + (k), 28 + (k)),		\
		0, 1, 2, 3, 4, 5, 6, 7, 24, 25, 26, 27, 28, 29, 30, 31)

/* Lanes 1-15 of @v, then lane @i of @e. */
#define WIN_NEXT(v, e, i)						\
	__builtin_shufflevector((v), (e), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,	\
				11, 12, 13, 14, 15, 16 + (i))

/*
 * Row @r of channel @x's 6x6 tiles of the panel's runs @sg (@n of them)
 * into @t, points 0-5: each run's row five masked loads of consecutive
 * columns split by lane, the values the gathers load (zero outside X and
 * past the runs).
 */
static __attribute__((__always_inline__)) inline
void win_row(const struct eng_wino_in *w, const float *x,
	     const struct win_seg *sg, const v16si *lm, int n, int r,
	     v16sf *t)
{
	v16si o[6] = {};
	int i, j, k;

	for (i = 0; i < n; i++) {
		const float *p = x + sg[i].base + (__s64)r * w->rs;
		v16sf a[5], u[6];

		if (!(sg[i].rows >> r & 1))
			continue;
		for (j = 0; j < 5; j++)
			a[j] = sg[i].lm[j] ?
			       __builtin_ia32_loadups512_mask(p + 16 * j,
							      (v16sf){},
							      sg[i].lm[j]) :
			       (v16sf){};
		u[0] = WIN_PICK(a, 0);
		u[1] = WIN_PICK(a, 1);
		u[2] = WIN_PICK(a, 2);
		u[3] = WIN_PICK(a, 3);
		u[4] = WIN_NEXT(u[0], a[4], 0);
		u[5] = WIN_NEXT(u[1], a[4], 1);
		for (k = 0; k < 6; k++)
			o[k] |= (v16si)u[k] & lm[i];
	}
	for (k = 0; k < 6; k++)
		t[k] = (v16sf)o[k];
}

/* Row @r of channel @x's 6x6 tiles of the panel into @t, each a gather. */
static __attribute__((__always_inline__)) inline
void win_gather(const struct eng_wino_in *w, const float *x, v16si idx,
		int r, v16sf *t)
{
	int k;

	for (k = 0; k < 6; k++) {
		v16si ik = idx + (r * w->rs + k * w->ks);
		__u16 m = w->rmask[r] & w->kmask[k];

		t[k] = __builtin_ia32_gathersiv16sf((v16sf){}, x, ik, m, 4);
	}
}

/*
 * V = B^T d B of a panel of sixteen tiles, channel after channel: each
 * point of the 6x6 input tiles a masked gather (lanes outside X or past
 * the run read nothing and hold zero), or where the panel's tiles are
 * runs along at most WIN_SEGS tile rows (win_segs()) each row of a run
 * loaded whole and split by lane (the same values), each row transformed
 * as it comes into w->d, then down the columns to the panels, as
 * wino_input() does.
 */
void vnpu_eng_wino_in_avx512(const struct eng_wino_in *w)
{
	v16si idx = *(const v16si *)w->off, lm[WIN_SEGS];
	v16sf *d = (v16sf *)w->d;
	struct win_seg sg[WIN_SEGS];
	int nseg = win_segs(w, sg);
	__u64 c;
	int r, k, i, l;

	/* Each run's lanes all ones. */
	for (i = 0; i < nseg; i++)
		for (l = 0; l < ENG_NR; l++)
			lm[i][l] = sg[i].lanes >> l & 1 ? -1 : 0;

	for (c = 0; c < w->cn; c++) {
		const float *x = w->x + (__s64)c * w->cs;
		float *v = w->v + c * ENG_NR;

		for (r = 0; r < 6; r++) {
			v16sf t[6];

			if (nseg)
				win_row(w, x, sg, lm, nseg, r, t);
			else
				win_gather(w, x, idx, r, t);
			bt16(t, 1);
			for (k = 0; k < 6; k++)
				d[r * 6 + k] = t[k];
		}
		for (k = 0; k < 6; k++) {
			v16sf t[6];

			for (r = 0; r < 6; r++)
				t[r] = d[r * 6 + k];
			bt16(t, 1);
			for (r = 0; r < 6; r++)
				st16(v + (r * 6 + k) * w->ps, t[r]);
		}
	}
}

/*
 * struct eng_lanes_tile's tile of @rows positions by @nv vectors, with
 * @two a second row of @rows positions at @t->x2 (its sums at
 * @t->acc2): the input's elements broadcast, ENG_NR channels a vector;
 * each sum fma(x, w, sum) in depth order from zero, as lanes_tile() takes
 * it. Two rows of 7 positions by two vectors keep 28 sums in registers
 * and load each depth's weights once for 28 FMAs, not 14: a 7x7 map's
 * 1x1 then waits half as long on the weights it streams from L2. With
 * @t->pf, a line of it into L2 a depth step.
 */
/*
 * Where vector @p of row @r of a tile's sums waits between slices of the
 * depth: by position, as the sums of the second row go (@t->acc2 on).
 */
#define LANES_PART(t, r, p)						\
	((t)->part + ((r) < rows ? (r) : acc2 + (r) - rows) * ENG_LANES_NR + \
	 (p) * ENG_NR)

static __attribute__((__always_inline__)) inline
void lanes_rows(const struct eng_lanes_tile *t, const int rows, const int nv,
		const int two)
{
	/* In registers: no zeroing of them (-ftrivial-auto-var-init). */
	float out[ENG_LANES_ROWS][ENG_LANES_NR] __attribute__((__uninitialized__));
	v16sf acc[2 * ENG_LANES_ROWS][2] __attribute__((__uninitialized__));
	const float *w = t->w, *x = t->x, *pf = t->pf;
	const __s32 *off = t->off;
	const int n = two ? 2 * rows : rows;
	__s64 x2 = two ? t->x2 : 0, acc2 = two ? t->acc2 : 0;
	__u64 k, kc = t->kc, rs = t->acc_rs;
	float *y = t->acc, *yh;
	int r, p, l;

#pragma GCC unroll 16
	for (r = 0; r < n; r++)
#pragma GCC unroll 2
		for (p = 0; p < nv; p++)
			acc[r][p] = t->pin ? ld16(LANES_PART(t, r, p)) :
				    (v16sf){};
#pragma GCC unroll 2
	for (k = 0; k < kc; k++, w += ENG_LANES_NR) {
		const float *xk = x + off[k];
		v16sf wv[2];

		if (pf)
			__builtin_prefetch(pf + k * ENG_NR, 0, 2);
		wv[0] = ld16(w);
		if (nv == 2)
			wv[1] = ld16(w + ENG_NR);
		for (r = 0; r < n; r++) {
			v16sf xv = bc16(r < rows ? xk[r] : xk[x2 + r - rows]);

			/*
			 * One broadcast a row in a register: GCC would fold
			 * it into each vector's FMA, two loads where one does
			 * (the loads, not the FMAs, then set the pace).
			 */
			if (nv == 2)
				__asm__("" : "+v"(xv));
			for (p = 0; p < nv; p++)
				acc[r][p] = FMA16(xv, wv[p], acc[r][p]);
		}
	}
	if (t->pout) {
#pragma GCC unroll 16
		for (r = 0; r < n; r++)
#pragma GCC unroll 2
			for (p = 0; p < nv; p++)
				st16(LANES_PART(t, r, p), acc[r][p]);
		return;
	}
	/* A row of positions at a time through @out (locals: no aliasing). */
#pragma GCC unroll 16
	for (r = 0; r < rows; r++)
#pragma GCC unroll 2
		for (p = 0; p < nv; p++)
			st16(out[r] + p * ENG_NR, acc[r][p]);
	for (l = 0, yh = y; l < nv * ENG_NR; l++, yh += rs)
		for (r = 0; r < rows; r++)
			yh[r] = out[r][l];
	if (!two)
		return;
#pragma GCC unroll 16
	for (r = 0; r < rows; r++)
#pragma GCC unroll 2
		for (p = 0; p < nv; p++)
			st16(out[r] + p * ENG_NR, acc[rows + r][p]);
	for (l = 0, yh = y + acc2; l < nv * ENG_NR; l++, yh += rs)
		for (r = 0; r < rows; r++)
			yh[r] = out[r][l];
}

/*
 * Each variant on its own, so that no frame holds several tiles' sums
 * (vnpu.ko's stack).
 */
#define LANES_FN(rows, nv, two)						\
static __attribute__((__noinline__))					\
void lanes_##rows##_##nv##_##two(const struct eng_lanes_tile *t)	\
{									\
	lanes_rows(t, rows, nv, two);					\
}

#define LANES_FNS(rows)							\
	LANES_FN(rows, 1, 0) LANES_FN(rows, 2, 0)

LANES_FNS(1) LANES_FNS(2) LANES_FNS(3) LANES_FNS(4) LANES_FNS(5)
LANES_FNS(6) LANES_FNS(7)
LANES_FN(7, 1, 1) LANES_FN(7, 2, 1)

typedef void (*lanes_fn)(const struct eng_lanes_tile *t);

/* [rows - 1][vectors - 1]: one row of positions */
static const lanes_fn lanes_fns[ENG_LANES_ROWS][2] = {
	{ lanes_1_1_0, lanes_1_2_0 }, { lanes_2_1_0, lanes_2_2_0 },
	{ lanes_3_1_0, lanes_3_2_0 }, { lanes_4_1_0, lanes_4_2_0 },
	{ lanes_5_1_0, lanes_5_2_0 }, { lanes_6_1_0, lanes_6_2_0 },
	{ lanes_7_1_0, lanes_7_2_0 },
};

void vnpu_eng_lanes_avx512(const struct eng_lanes_tile *t)
{
	int v = t->nv == 2;

	if (t->two)
		(v ? lanes_7_2_1 : lanes_7_1_1)(t);
	else
		lanes_fns[t->rows > 1 ? t->rows - 1 : 0][v](t);
}

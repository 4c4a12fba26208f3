// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The AVX512-VNNI tile of the packed int8 convolution (built with
 * -mavx512f -mavx512bw -mavx512vnni, run only when the caller sets
 * VNPU_ENG_F_VNNI): ENG_QMR rows of weights by two 16-lane panels of
 * positions, 24 accumulators; per depth step of 4, two loads of the
 * packed input, one broadcast of 4 weight bytes per row and 24 vpdpbusd
 * (u8 x i8 products, four to a 32-bit lane, wrapping sums: exact, as the
 * plain tile); then, given struct eng_qout, the requantized outputs
 * straight from the accumulators. Also the depthwise row (struct
 * eng_qdw): four taps of 16 positions per vpdpbusd, gathered by vpshufb.
 */
#include "vnpu_eng_priv.h"

typedef int v16si __attribute__((vector_size(64)));
typedef unsigned int v16su __attribute__((vector_size(64)));
typedef float v16sf __attribute__((vector_size(64)));
typedef unsigned char v16qu __attribute__((vector_size(16)));
typedef signed char v16qs __attribute__((vector_size(16)));
typedef int v8si_n __attribute__((vector_size(32)));
typedef int v4si_n __attribute__((vector_size(16)));
typedef int v16si_u __attribute__((vector_size(64), aligned(4), may_alias));
typedef unsigned int v16su_u __attribute__((vector_size(64), aligned(4), may_alias));
typedef float v16sf_u __attribute__((vector_size(64), aligned(4), may_alias));
typedef unsigned char v16qu_u __attribute__((vector_size(16), aligned(1), may_alias));
typedef __s32 s32_u __attribute__((aligned(1), may_alias));
typedef unsigned long long v2du_q __attribute__((vector_size(16)));
typedef unsigned int v4su_q __attribute__((vector_size(16)));

/* @acc += the u8 x i8 products of @u and @s, four to a lane (clang and gcc). */
static inline v16si dpbusd(v16si acc, v16si u, v16si s)
{
	__asm__("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(u), "v"(s));
	return acc;
}

/* The larger and the smaller of @a and @b: @b where either is NaN. */
static inline v16sf q_max(v16sf a, v16sf b)
{
	__asm__("vmaxps %1, %0, %0" : "+v"(a) : "v"(b));
	return a;
}

static inline v16sf q_min(v16sf a, v16sf b)
{
	__asm__("vminps %1, %0, %0" : "+v"(a) : "v"(b));
	return a;
}

/* @f rounded half to even to integers (|f| < 2^31). */
static inline v16si q_rne(v16sf f)
{
	v16si r;

	__asm__("vcvtps2dq %{rn-sae%}, %1, %0" : "=v"(r) : "v"(f));
	return r;
}

/*
 * Sums @a as 16 outputs: times @mult, clamped to [@lo, @hi], rounded
 * half to even, plus @yz; the bits of q_round8().
 * Clamped with vmaxps/vminps (bounds are integers, so clamping before
 * rounding is the same as after) and rounded by vcvtps2dq {rn-sae};
 * NaN (@mult NaN or infinite only) gives 0 as q_round8() does.
 */
static v16qu q_bytes16(v16su a, float mult, float lo, float hi, __s32 yz)
{
	v16sf f = __builtin_convertvector((v16si)a, v16sf) * mult;
	v16si v;

	v = q_rne(q_min(q_max(f, (v16sf){} + lo), (v16sf){} + hi)) + yz;
	if (mult - mult != 0.0f)
		v &= ~(f != f);
	return __builtin_convertvector(v, v16qu);
}

/*
 * The first @n (below 16) bytes of @b at @y, by a masked store: no bytes
 * stored one at a time from a copy in memory (a store-forwarding stall).
 */
static inline void q_store_n(v16qu b, __u8 *y, __u32 n)
{
	__u32 m = (1u << n) - 1;

	__asm__("kmovw %k2, %%k1\n\t"
		"vmovdqu8 %1, %0%{%%k1%}"
		: "=m"(*(__u8 (*)[16])y) : "v"(b), "r"(m) : "k1");
}

/* Sums @a as @n (at most 16) outputs at @y (q_bytes16()). */
static void q_store16(v16su a, float mult, float lo, float hi, __s32 yz,
		      __u8 *y, __u32 n)
{
	v16qu b = q_bytes16(a, mult, lo, hi, yz);

	if (n >= 16)
		*(v16qu_u *)y = b;
	else
		q_store_n(b, y, n);
}

/* @n lanes of 8-bit values at @p widened to 32 bits (sign-extended if @s8). */
static inline v16si qadd_load16(const __u8 *p, __u32 s8)
{
	v16si v;

	if (s8)
		__asm__("vpmovsxbd %1, %0" : "=v"(v) : "m"(*(const __u8 (*)[16])p));
	else
		__asm__("vpmovzxbd %1, %0" : "=v"(v) : "m"(*(const __u8 (*)[16])p));
	return v;
}

/* @acc + @a * @b, rounded once. */
static inline v16sf q_fma(v16sf a, v16sf b, v16sf acc)
{
	__asm__("vfmadd231ps %2, %1, %0" : "+v"(acc) : "v"(a), "v"(b));
	return acc;
}

/*
 * The fused QLinearAdd's parameters (struct eng_qadd_arg) in registers.
 */
struct qres_regs {
	v16sf ra, rb, f;
	v16si lo, hi;
	__u32 s8, first;
};

/*
 * Outputs @v (integers of Y's dtype) of @n positions (16 read at most)
 * and R's at @r, added as vnpu_eng_qadd_avx512() adds them: the bits of
 * the unfused QLINEAR_ADD. Past @n, R's bytes are not read.
 */
static inline v16si qres16(const struct qres_regs *q, v16si v, const __u8 *r,
			   __u32 n)
{
	v16sf a, b, fr, fv = __builtin_convertvector(v, v16sf);
	v16si rv;

	if (n >= 16) {
		rv = qadd_load16(r, q->s8);
	} else {
		__u32 m = (1u << n) - 1;
		v16qu rb;

		__asm__("kmovw %k2, %%k1\n\t"
			"vmovdqu8 %1, %0%{%%k1%}%{z%}"
			: "=v"(rb) : "m"(*(const __u8 (*)[16])r), "r"(m) : "k1");
		rv = q->s8 ? __builtin_convertvector((v16qs)rb, v16si) :
		     __builtin_convertvector(rb, v16si);
	}
	fr = __builtin_convertvector(rv, v16sf);
	a = q->first ? fr : fv;
	b = q->first ? fv : fr;
	v = q_rne(q_fma(a, q->ra, q_fma(b, q->rb, q->f)));
	/* NaN and values out of range converted to INT_MIN: the low bound. */
	__asm__("vpmaxsd %1, %0, %0\n\t"
		"vpminsd %2, %0, %0"
		: "+v"(v) : "v"(q->lo), "v"(q->hi));
	return v;
}

/*
 * Row @r of a tile's sums, @np panels (@acc0, @acc1; fix in already
 * when @fixed), as outputs at @y: struct eng_qout's arithmetic
 * (q_bytes16()) with the bounds, zero point and sums of x (@xs0, @xs1)
 * in registers; @n outputs (at most 32); with @res, the fused add of R's
 * row at @rp (qres16()).
 */
static __attribute__((__always_inline__)) inline
void qout_row(const struct eng_qout *o, __u32 r, v16si acc0, v16si acc1,
	      const __u32 np, int xsum, v16su xs0, v16su xs1, v16sf lo,
	      v16sf hi, __s32 yz, __u8 *y, __u32 n, const int res,
	      const struct qres_regs *qr, const __u8 *rp, const int fixed)
{
	__u32 fix = fixed ? 0 : (__u32)o->fix[r];
	v16su a0 = (v16su)acc0 + fix, a1 = (v16su)acc1 + fix;
	float mult = o->mult[r];
	v16sf f0, f1;
	v16si v0, v1;

	if (xsum) {
		a0 -= (__u32)o->wz[r] * xs0;
		a1 -= (__u32)o->wz[r] * xs1;
	}
	f0 = __builtin_convertvector((v16si)a0, v16sf) * mult;
	v0 = q_rne(q_min(q_max(f0, lo), hi)) + yz;
	if (np > 1) {
		f1 = __builtin_convertvector((v16si)a1, v16sf) * mult;
		v1 = q_rne(q_min(q_max(f1, lo), hi)) + yz;
	}
	if (mult - mult != 0.0f) {
		v0 &= ~(f0 != f0);
		if (np > 1)
			v1 &= ~(f1 != f1);
	}
	if (res) {
		v0 = qres16(qr, v0, rp, n);
		if (np > 1 && n > 16)
			v1 = qres16(qr, v1, rp + 16, n - 16);
	}
	if (n >= 16)
		*(v16qu_u *)y = __builtin_convertvector(v0, v16qu);
	else
		q_store_n(__builtin_convertvector(v0, v16qu), y, n);
	if (np < 2 || n <= 16)
		return;
	if (n >= 32)
		*(v16qu_u *)(y + 16) = __builtin_convertvector(v1, v16qu);
	else
		q_store_n(__builtin_convertvector(v1, v16qu), y + 16, n - 16);
}

/*
 * The sums of a tile's ENG_QMR rows over its first panel of 16 positions
 * (a 7x7 map's positions 32-47, a 28x28 map's last 16), stored to
 * t->acc (row r at t->acc + r * ENG_QNR), in one asm statement: gcc's loop kept row pointers
 * in vector registers and on the stack (a vmovq or a reload for every
 * few rows each step) and tested for the prefetch each step. Row r in
 * zmm(r), the step's inputs in zmm31, each row's 4 weight bytes
 * broadcast from memory by its vpdpbusd (the same products as a
 * broadcast register); two steps a trip, then one. Each step fetches 48
 * bytes of @pf, the next rows' weights (ENG_QMR rows of @k4 bytes).
 */
#define QV_ROWS(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7) M(8) M(9) M(10) M(11)
#define QV_ZERO(z) "vpxord %%zmm" #z ", %%zmm" #z ", %%zmm" #z "\n\t"
#define QV_STR_(x) #x
#define QV_STR(x) QV_STR_(x)
#define QV_ST(z) "vmovdqu32 %%zmm" #z ", (4 * " QV_STR(ENG_QNR) " * " #z ")(%[acc])\n\t"
#define QV_DP(u, addr, z) "vpdpbusd (4 * " #u ")" addr "%{1to16%}, %%zmm31, %%zmm" #z "\n\t"
#define QV_STEP(u)							\
	"vmovdqa32 (128 * " #u ")(%[b]), %%zmm31\n\t"			\
	"prefetcht0 (48 * " #u ")(%[pf])\n\t"				\
	QV_DP(u, "(%[w0])", 0) QV_DP(u, "(%[w0], %[k4])", 1)		\
	QV_DP(u, "(%[w0], %[k4], 2)", 2) QV_DP(u, "(%[w3])", 3)		\
	QV_DP(u, "(%[w3], %[k4])", 4) QV_DP(u, "(%[w3], %[k4], 2)", 5)	\
	QV_DP(u, "(%[w6])", 6) QV_DP(u, "(%[w6], %[k4])", 7)		\
	QV_DP(u, "(%[w6], %[k4], 2)", 8) QV_DP(u, "(%[w9])", 9)		\
	QV_DP(u, "(%[w9], %[k4])", 10) QV_DP(u, "(%[w9], %[k4], 2)", 11)

static void qtile_sums12x16(const struct eng_qtile *t)
{
	__u64 k4 = t->k4, n = k4 / 4;
	const __s8 *w0 = t->w, *w3 = w0 + 3 * k4, *w6 = w0 + 6 * k4, *w9 = w0 + 9 * k4;
	const __u8 *b = t->b;
	const __s8 *pf = t->pf ? t->pf : t->w;

	__asm__ __volatile__(QV_ROWS(QV_ZERO)
			     "cmp $2, %[n]\n\t"
			     "jb 2f\n"
			     ".p2align 6\n"
			     "1:\n\t"
			     QV_STEP(0) QV_STEP(1)
			     "add $8, %[w0]\n\t"
			     "add $8, %[w3]\n\t"
			     "add $8, %[w6]\n\t"
			     "add $8, %[w9]\n\t"
			     "add $256, %[b]\n\t"
			     "add $96, %[pf]\n\t"
			     "sub $2, %[n]\n\t"
			     "cmp $2, %[n]\n\t"
			     "jae 1b\n"
			     "2:\n\t"
			     "test %[n], %[n]\n\t"
			     "jz 3f\n\t"
			     QV_STEP(0)
			     "3:\n\t"
			     QV_ROWS(QV_ST)
			     : [n] "+r"(n), [w0] "+r"(w0), [w3] "+r"(w3), [w6] "+r"(w6),
			       [w9] "+r"(w9), [b] "+r"(b), [pf] "+r"(pf)
			     : [k4] "r"(k4), [acc] "r"(t->acc)
			     : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6",
			       "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm31", "cc",
			       "memory");
}

typedef short v32hi_q __attribute__((vector_size(64)));

/*
 * F(r) for each of a tile's ENG_QMR (12) rows, and for each pair: the
 * rows of the sums by name, not in a loop over r. gcc scalarizes the
 * tile's sums (qtile_part()) only where every index is a constant before
 * its late unrolling: with loops, it kept them in memory after the
 * sums (24 stores after the depth loop, 24 loads in the epilogue).
 */
#if ENG_QMR != 12
#error "QOUT_ROWS() and QOUT_PAIRS() name 12 rows"
#endif
#define QOUT_ROWS(F) F(0); F(1); F(2); F(3); F(4); F(5); F(6); F(7); F(8); F(9); \
		     F(10); F(11)
#define QOUT_PAIRS(F) F(0); F(2); F(4); F(6); F(8); F(10)

typedef int v8si_qu __attribute__((vector_size(32), aligned(1), may_alias));

/*
 * Whether qout_packed() stores the outputs of a whole tile of ENG_QMR
 * rows and ENG_QNR positions without the fused add: every multiplier
 * at most 0.5 in magnitude (not NaN), so that a sum times it rounds to
 * an integer of at most 2^30 and that plus the zero point does not wrap.
 */
static inline int qout_whole(const struct eng_qout *o)
{
	const v16sf half = (v16sf){} + 0.5f;
	v16sf m;
	__u32 k;

	if (o->rows != ENG_QMR || o->n != ENG_QNR || o->r)
		return 0;
	/* |mult| <= 0.5 in the 12 lanes, the rest 0 (NaN fails LE_OQ). */
	__asm__("kmovw %k2, %%k1\n\t"
		"vmovups %1, %0%{%%k1%}%{z%}"
		: "=v"(m) : "m"(*(const float (*)[ENG_QMR])o->mult),
		  "r"((1u << ENG_QMR) - 1) : "k1");
	m = (v16sf)((v16si)m & 0x7fffffff);
	__asm__("vcmpps $0x12, %2, %1, %%k1\n\t"	/* LE_OQ */
		"kmovw %%k1, %0"
		: "=r"(k) : "v"(m), "v"(half) : "k1");
	return k == 0xffff;
}

/*
 * Sums @a (bias and zero point terms in, at most 2^31 in magnitude)
 * times @mult rounded half to even: no clamp (qout_whole()).
 */
static inline v16si qout_round(v16si a, float mult)
{
	return q_rne(__builtin_convertvector(a, v16sf) * mult);
}

/* @a and @b saturated to 16 bits (vpackssdw: per 128-bit lane, @a's 4 then @b's). */
static inline v32hi_q q_packs32(v16si a, v16si b)
{
	v32hi_q r;

	__asm__("vpackssdw %2, %1, %0" : "=v"(r) : "v"(a), "v"(b));
	return r;
}

/* @a + @b, saturated to 16 bits (vpaddsw). */
static inline v32hi_q q_adds16(v32hi_q a, v32hi_q b)
{
	__asm__("vpaddsw %1, %0, %0" : "+v"(a) : "v"(b));
	return a;
}

/*
 * Rows r and r + 1 of a tile's 32-bit outputs, two panels each (@s0,
 * @s1; @s2, @s3), saturated to 16 bits by vpackssdw, plus the zero
 * point @z16 with @addz (vpaddsw), saturated to bytes by vpackuswb (@u8)
 * or vpacksswb, raised to @lo8's bytes with @relu (vpmaxub/vpmaxsb),
 * and stored as rows @y and @y + @ys by one vpermd. The zero point
 * (|z| < 256) added after the first saturation gives the bytes it gives
 * added before: a sum saturated at 16 bits stays past the 8-bit bounds.
 */
static __attribute__((__always_inline__)) inline
void qout_pack2(v16si s0, v16si s1, v16si s2, v16si s3, const int addz, v32hi_q z16,
		const int u8, const int relu, v16si lo8, __u8 *y, __s64 ys)
{
	v32hi_q p0 = q_packs32(s0, s1), p1 = q_packs32(s2, s3);
	v16si v;

	if (addz) {
		p0 = q_adds16(p0, z16);
		p1 = q_adds16(p1, z16);
	}

	if (u8 && relu)
		__asm__("vpackuswb %2, %1, %0\n\t"
			"vpmaxub %3, %0, %0"
			: "=&v"(v) : "v"(p0), "v"(p1), "v"(lo8));
	else if (u8)
		__asm__("vpackuswb %2, %1, %0" : "=v"(v) : "v"(p0), "v"(p1));
	else if (relu)
		__asm__("vpacksswb %2, %1, %0\n\t"
			"vpmaxsb %3, %0, %0"
			: "=&v"(v) : "v"(p0), "v"(p1), "v"(lo8));
	else
		__asm__("vpacksswb %2, %1, %0" : "=v"(v) : "v"(p0), "v"(p1));
	/*
	 * 128-bit lane L: 4 bytes each of row r's positions 4L..4L+3 and
	 * 16 + 4L.., then row r + 1's.
	 */
	v = __builtin_shufflevector(v, v, 0, 4, 8, 12, 1, 5, 9, 13,
				    2, 6, 10, 14, 3, 7, 11, 15);
	*(v8si_qu *)y = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7);
	*(v8si_qu *)(y + ys) = __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
}

/*
 * The tile's sums @acc (row r, panel p at acc[r][p]; fix in already:
 * qtile_part() starts them there) as the outputs of struct eng_qout
 * where qout_whole() holds, two rows at a time: less wz times xsum,
 * times mult, rounded half to even, saturated to 16 bits by vpackssdw,
 * plus the zero point (qout_pack2()), saturated by vpackuswb (u8) or
 * vpacksswb (i8), a vpmaxub/vpmaxsb where the low bound is above the
 * type's (ReLU), and one vpermd into the rows' order. Rounding is
 * monotonic and keeps integers, so clamping to integer bounds after it
 * gives what clamping before it does (q_bytes16()): the same bits, with
 * no float clamp, and 4 narrowing uops for 64 outputs in place of
 * vpmovdb's 8.
 */
static __attribute__((__always_inline__)) inline
void qout_packed(const struct eng_qtile *t, v16si (*acc)[2], const int u8, const int relu,
		 const int xsum)
{
	const struct eng_qout *o = t->out;
	const v32hi_q z16 = (v32hi_q){} + (short)o->yz;
	const __s32 lo = (__s32)o->lo + o->yz;
	const v16si lo8 = (v16si){} + (__s32)(0x01010101u * (__u8)lo);
	v16su xs0 = {}, xs1 = {};
	__u8 *y = o->y;
	__s64 ys = o->ys;

	if (xsum) {
		xs0 = *(const v16su_u *)o->xsum;
		xs1 = *(const v16su_u *)(o->xsum + 16);
	}
#define QOUT_PAIR(r)								\
	do {									\
		v16su a0 = (v16su)acc[r][0], a1 = (v16su)acc[r][1];		\
		v16su a2 = (v16su)acc[(r) + 1][0], a3 = (v16su)acc[(r) + 1][1];	\
										\
		if (xsum) {							\
			a0 -= (__u32)o->wz[r] * xs0;				\
			a1 -= (__u32)o->wz[r] * xs1;				\
			a2 -= (__u32)o->wz[(r) + 1] * xs0;			\
			a3 -= (__u32)o->wz[(r) + 1] * xs1;			\
		}								\
		qout_pack2(qout_round((v16si)a0, o->mult[r]),			\
			   qout_round((v16si)a1, o->mult[r]),			\
			   qout_round((v16si)a2, o->mult[(r) + 1]),		\
			   qout_round((v16si)a3, o->mult[(r) + 1]), 1, z16, u8,	\
			   relu, lo8, y + (__s64)(r) * ys, ys);			\
	} while (0)
	QOUT_PAIRS(QOUT_PAIR);
#undef QOUT_PAIR
}

/* @f rounded half to even to integers, as floats (vrndscaleps). */
static inline v16sf q_rndf(v16sf f)
{
	__asm__("vrndscaleps $8, %1, %0" : "=v"(f) : "v"(f));
	return f;
}

/*
 * Whether qout_packed_res() stores a whole tile: ENG_QMR rows and
 * ENG_QNR positions with the fused add, every multiplier finite (a NaN
 * sum gives 0, which its float clamp does not).
 */
static inline int qout_whole_res(const struct eng_qout *o)
{
	__u32 r;

	if (o->rows != ENG_QMR || o->n != ENG_QNR || !o->r)
		return 0;
	for (r = 0; r < ENG_QMR; r++)
		if (o->mult[r] - o->mult[r] != 0.0f)
			return 0;
	return 1;
}

/*
 * Sums @a of row @r (fix in already) as the convolution's outputs, as
 * floats: less wz times @xs, times mult, rounded half to even by vrndscaleps,
 * clamped to [@lo, @hi] and plus the zero point @yz: the integers of
 * qout_row() (clamping integer bounds after rounding gives what clamping
 * before it does), exact in f32, as qres16() converts them.
 */
static __attribute__((__always_inline__)) inline
v16sf qout_float(const struct eng_qout *o, __u32 r, v16si a, int xsum, v16su xs,
		 v16sf lo, v16sf hi, v16sf yz)
{
	v16su v = (v16su)a;

	if (xsum)
		v -= (__u32)o->wz[r] * xs;
	return q_min(q_max(q_rndf(__builtin_convertvector((v16si)v, v16sf) * o->mult[r]),
			   lo), hi) + yz;
}

/*
 * The fused add of R's 16 bytes at @rp to outputs @v (floats of
 * qout_float()): qres16()'s multiply-adds and rounding, not clamped
 * (qout_packed_res() saturates, NaN and values past 32 bits as INT_MIN).
 */
static __attribute__((__always_inline__)) inline
v16si qres_sum(const struct qres_regs *q, v16sf v, const __u8 *rp)
{
	v16sf fr = __builtin_convertvector(qadd_load16(rp, q->s8), v16sf);
	v16sf a = q->first ? fr : v, b = q->first ? v : fr;

	return q_rne(q_fma(a, q->ra, q_fma(b, q->rb, q->f)));
}

/*
 * A whole tile's sums @acc with the fused add (qout_whole_res()), two
 * rows at a time: the convolution's outputs kept as floats for the add
 * (qout_float(): no conversion to integers and back), the add's sums
 * saturated to the output type by vpackssdw and vpackuswb (u8) or
 * vpacksswb (i8), then one vpermd into the rows' order, as
 * qout_packed(). QLINEAR_ADD's bounds are the type's, and its INT_MIN
 * (NaN, out of range) saturates to the low bound as its clamp takes it:
 * the bits of qout_row(), in 13 vector operations per 16 outputs where
 * it takes 17 and vpmovdb's 2 uops.
 */
static __attribute__((__always_inline__)) inline
void qout_packed_res(const struct eng_qtile *t, v16si (*acc)[2], const int u8,
		     const int first, const int xsum)
{
	const struct eng_qout *o = t->out;
	const v16sf lo = (v16sf){} + o->lo, hi = (v16sf){} + o->hi;
	const v16sf yz = (v16sf){} + (float)o->yz;
	struct qres_regs q = {
		.ra = (v16sf){} + o->res->ra, .rb = (v16sf){} + o->res->rb,
		.f = (v16sf){} + o->res->f, .s8 = !u8, .first = first,
	};
	v16su xs0 = {}, xs1 = {};
	const __u8 *rp = o->r;
	__s64 rs = o->rs, ys = o->ys;
	__u8 *y = o->y;

	if (xsum) {
		xs0 = *(const v16su_u *)o->xsum;
		xs1 = *(const v16su_u *)(o->xsum + 16);
	}
#define QOUT_PAIR(r)								\
	do {									\
		const __u8 *r0 = rp + (__s64)(r) * rs, *r1 = r0 + rs;		\
		v16si s0 = qres_sum(&q, qout_float(o, r, acc[r][0], xsum, xs0,	\
						   lo, hi, yz), r0);		\
		v16si s1 = qres_sum(&q, qout_float(o, r, acc[r][1], xsum, xs1,	\
						   lo, hi, yz), r0 + 16);	\
		v16si s2 = qres_sum(&q, qout_float(o, (r) + 1, acc[(r) + 1][0],	\
						   xsum, xs0, lo, hi, yz), r1);	\
		v16si s3 = qres_sum(&q, qout_float(o, (r) + 1, acc[(r) + 1][1],	\
						   xsum, xs1, lo, hi, yz),	\
				    r1 + 16);					\
										\
		qout_pack2(s0, s1, s2, s3, 0, (v32hi_q){}, u8, 0, (v16si){},	\
			   y + (__s64)(r) * ys, ys);				\
	} while (0)
	QOUT_PAIRS(QOUT_PAIR);
#undef QOUT_PAIR
}

/*
 * The outputs of a tile's first @nr rows, @np panels, of sums @acc (fix
 * in already when @fixed), row by row (qout_row()), with the fused add
 * when @res. Locals: a store to y may alias anything o points to.
 */
static __attribute__((__always_inline__)) inline
void qout_tile_rows(const struct eng_qout *o, v16si (*acc)[2], const __u32 nr,
		    const __u32 np, const int res, const int fixed)
{
	const v16sf lo = (v16sf){} + o->lo, hi = (v16sf){} + o->hi;
	v16su xs0 = {}, xs1 = {};
	__u8 *y = o->y;
	__s64 ys = o->ys;
	__u32 rows = o->rows, n = o->n;
	__s32 yz = o->yz;
	int xsum = !!o->xsum;
	const __u8 *rp = o->r;
	__s64 rs = o->rs;
	struct qres_regs qr = {};

	if (res) {
		qr.ra = (v16sf){} + o->res->ra;
		qr.rb = (v16sf){} + o->res->rb;
		qr.f = (v16sf){} + o->res->f;
		qr.lo = (v16si){} + (__s32)o->res->lo;
		qr.hi = (v16si){} + (__s32)o->res->hi;
		qr.s8 = o->res->dtype == VNPU_DTYPE_I8;
		qr.first = o->res->first;
	}

	if (xsum) {
		xs0 = *(const v16su_u *)o->xsum;
		if (np > 1)
			xs1 = *(const v16su_u *)(o->xsum + 16);
	}
#define QT_ROW(r)							\
	do {								\
		if ((r) < nr && (r) < rows)				\
			qout_row(o, r, acc[r][0], acc[r][1], np, xsum, xs0, xs1, \
				 lo, hi, yz, y + (__s64)(r) * ys, n, res, &qr, \
				 res ? rp + (__s64)(r) * rs : rp, fixed); \
	} while (0)
	QOUT_ROWS(QT_ROW);
#undef QT_ROW
}

/* Whether qout_packed() stores @o's outputs as u8 (else i8). */
static inline int qout_u8(const struct eng_qout *o)
{
	return (__s32)o->hi + o->yz > 127;
}

/* Whether qout_packed() raises @o's outputs to its low bound (ReLU). */
static inline int qout_relu(const struct eng_qout *o)
{
	const __s32 lo = (__s32)o->lo + o->yz;

	return qout_u8(o) ? lo > 0 : lo > -128;
}

/*
 * qout_packed() (qout_packed_res() with @res) for the tile's kind of
 * output, each its own code: u8 or i8 (@a); ReLU or not, or with the
 * add which operand R is (@b); weight zero points or not. Tested per
 * vector in one code, the kind's branches (and the moves around them)
 * took 4% of resnet50_qdq's 1x1s of depth 64 with the add.
 */
static __attribute__((__always_inline__)) inline
void qout_whole_kind(const struct eng_qtile *t, v16si (*acc)[2], const int res)
{
	const struct eng_qout *o = t->out;
	const int a = res ? o->res->dtype == VNPU_DTYPE_U8 : qout_u8(o);
	const int b = res ? (int)o->res->first : qout_relu(o);

#define QOUT_KIND(a, b, xsum)						\
	do {								\
		if (res)						\
			qout_packed_res(t, acc, a, b, xsum);		\
		else							\
			qout_packed(t, acc, a, b, xsum);		\
	} while (0)
	if (o->xsum)
		QOUT_KIND(a, b, 1);
	else if (a && b)
		QOUT_KIND(1, 1, 0);
	else if (a)
		QOUT_KIND(1, 0, 0);
	else if (b)
		QOUT_KIND(0, 1, 0);
	else
		QOUT_KIND(0, 0, 0);
#undef QOUT_KIND
}

/*
 * The tile over its first @nr (4, 8 or ENG_QMR) rows and @np (1 or 2)
 * panels of 16 positions: one panel where the outputs stop within the
 * first 16 (the last tile of a 14x14 or 28x28 map), fewer rows where
 * the outputs stop within them (64 channels are 5 tiles of 12 and one
 * of 4), so that no vpdpbusd sums outputs that are not stored.
 */
static __attribute__((__always_inline__)) inline
void qtile_part(const struct eng_qtile *t, const __u32 nr, const __u32 np,
		const int res)
{
	const struct eng_qout *o = t->out;
	/*
	 * The sums start at fix where the epilogue below follows (not the
	 * asm one-panel loop's): one add less per 16 outputs after, the
	 * same wrapping sums.
	 */
	const int fixed = o && (nr < ENG_QMR || np > 1);
	v16si acc[ENG_QMR][2];
	__u64 j;
	__u32 r;

	/* Not "= {}": GCC clears the array in memory (rep stos) first. */
#define QT_INIT(r)							\
	do {								\
		acc[r][0] = fixed && (r) < nr ? (v16si){} + o->fix[r] : (v16si){}; \
		acc[r][1] = acc[r][0];					\
	} while (0)
	QOUT_ROWS(QT_INIT);
#undef QT_INIT

	/* R's bytes of the outputs, into L1 while the sums run. */
	for (r = 0; res && r < nr && r < o->rows; r++) {
		__builtin_prefetch(o->r + (__s64)r * o->rs, 0, 3);
		if (np > 1)
			__builtin_prefetch(o->r + (__s64)r * o->rs + o->n - 1, 0, 3);
	}
	if (nr == ENG_QMR && np == 1) {
		qtile_sums12x16(t);
#define QT_LOAD(r) (acc[r][0] = *(const v16si_u *)(t->acc + (r) * ENG_QNR))
		QOUT_ROWS(QT_LOAD);
#undef QT_LOAD
	}
	/*
	 * The others: gcc's two-panel loop runs as fast as it does in asm
	 * (on Emerald Rapids an asm loop, alone, ran 24 vpdpbusd in 12
	 * cycles from L2, and resnet50_qdq no faster with it), and keeps
	 * the sums in registers for the epilogue.
	 */
	for (j = 0; (nr < ENG_QMR || np > 1) && j < t->k4 / 4; j++) {
		const v16si *b = (const v16si *)(t->b + j * ENG_QNR * 4);
		v16si b0 = b[0], b1 = np > 1 ? b[1] : b0;

		/* A line of the next rows' weights a step: 16 k4 bytes >= 12 k4. */
		if (t->pf && 64 * j < ENG_QMR * t->k4)
			__builtin_prefetch(t->pf + 64 * j, 0, 3);

		for (r = 0; r < nr; r++) {
			__s32 d = *(const s32_u *)(t->w + r * t->k4 + 4 * j);
			v16si w = { d, d, d, d, d, d, d, d, d, d, d, d, d, d, d, d };

			acc[r][0] = dpbusd(acc[r][0], b0, w);
			if (np > 1)
				acc[r][1] = dpbusd(acc[r][1], b1, w);
		}
	}
	if (nr == ENG_QMR && np > 1 && o && (res ? qout_whole_res(o) : qout_whole(o))) {
		qout_whole_kind(t, acc, res);
		return;
	}
	if (!o) {
#define QT_STORE(r)							\
	do {								\
		*(v16si_u *)(t->acc + (r) * ENG_QNR) = acc[r][0];	\
		*(v16si_u *)(t->acc + (r) * ENG_QNR + 16) = acc[r][1];	\
	} while (0)
		QOUT_ROWS(QT_STORE);
#undef QT_STORE
		return;
	}
	qout_tile_rows(o, acc, nr, np, res, fixed);
}

/* The tile with the fused add (eng_qout's @r) or without. */
static __attribute__((__always_inline__)) inline
void qtile_rows(const struct eng_qtile *t, const __u32 nr, const __u32 np)
{
	if (t->out && t->out->r)
		qtile_part(t, nr, np, 1);
	else
		qtile_part(t, nr, np, 0);
}

/*
 * Each shape of tile (rows, panels) a function of its own: in the
 * kernel's build (gcc -O2) the sums of each qtile_part() are in memory,
 * and in one function their frames added up past 2048 bytes.
 */
#define QTILE_SHAPE(nr, np)						\
static __attribute__((__noinline__)) void qtile_##nr##x##np(const struct eng_qtile *t) \
{									\
	qtile_rows(t, nr, np);						\
}

QTILE_SHAPE(4, 1)
QTILE_SHAPE(4, 2)
QTILE_SHAPE(8, 1)
QTILE_SHAPE(8, 2)
QTILE_SHAPE(12, 1)
QTILE_SHAPE(12, 2)
#undef QTILE_SHAPE

void vnpu_eng_qtile_vnni(const struct eng_qtile *t)
{
	const struct eng_qout *o = t->out;
	int one = o && o->n <= 16;

	if (o && o->rows <= 4) {
		if (one)
			qtile_4x1(t);
		else
			qtile_4x2(t);
	} else if (o && o->rows <= 8) {
		if (one)
			qtile_8x1(t);
		else
			qtile_8x2(t);
	} else if (one) {
		qtile_12x1(t);
	} else {
		qtile_12x2(t);
	}
}

/*
 * A run of whole tiles in one asm statement (vnpu_eng_qtile_vnni_run()):
 * each tile's rows in two halves, rows 0-5 (sums in zmm0-11, row r's
 * panel p in zmm(2r + p)) then rows 6-11 (zmm12-23), each half over the
 * whole depth; the outputs of the half before are stored from its
 * registers, a pair of rows after each of the first, third and fifth
 * steps of the next half (the last half's after the run). The steps'
 * inputs in zmm24 and zmm25, a row's weights broadcast to zmm26; zmm27
 * to zmm31 for the outputs. A half's rows as %[wa], %[wa] + k4,
 * %[wa] + 2 k4, then from %[wb] likewise.
 */
#define QR_DP(addr, r0, r1)						\
	"vpbroadcastd " addr ", %%zmm26\n\t"				\
	"vpdpbusd %%zmm26, %%zmm24, %%zmm" #r0 "\n\t"			\
	"vpdpbusd %%zmm26, %%zmm25, %%zmm" #r1 "\n\t"
#define QR_HALF(r0, r1, r2, r3, r4, r5, r6, r7, r8, r9, r10, r11)	\
	QR_DP("(%[wa])", r0, r1) QR_DP("(%[wa], %[k4])", r2, r3)	\
	QR_DP("(%[wa], %[k4], 2)", r4, r5) QR_DP("(%[wb])", r6, r7)	\
	QR_DP("(%[wb], %[k4])", r8, r9) QR_DP("(%[wb], %[k4], 2)", r10, r11) \
	"add $4, %[wa]\n\t"						\
	"add $4, %[wb]\n\t"						\
	"add $128, %[b]\n\t"
/* A step of rows 0-5 (fetching 48 bytes of the next rows' weights), of 6-11. */
#define QR_STEP0							\
	"vmovdqa32 (%[b]), %%zmm24\n\t"					\
	"vmovdqa32 64(%[b]), %%zmm25\n\t"				\
	"prefetcht0 (%[pf])\n\t"					\
	"add $48, %[pf]\n\t"						\
	QR_HALF(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)
#define QR_STEP1							\
	"vmovdqa32 (%[b]), %%zmm24\n\t"					\
	"vmovdqa32 64(%[b]), %%zmm25\n\t"				\
	QR_HALF(12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23)
/* Sums zmm@r0 and zmm@r1 (a row's two panels) from the row's fix at @f of %[c]. */
#define QR_INIT(r0, r1, f)						\
	"vpbroadcastd " f "(%[c]), %%zmm" #r0 "\n\t"			\
	"vmovdqa32 %%zmm" #r0 ", %%zmm" #r1 "\n\t"
#define QR_INIT0							\
	QR_INIT(0, 1, "80") QR_INIT(2, 3, "84") QR_INIT(4, 5, "88")	\
	QR_INIT(6, 7, "92") QR_INIT(8, 9, "96") QR_INIT(10, 11, "100")
#define QR_INIT1							\
	QR_INIT(12, 13, "104") QR_INIT(14, 15, "108") QR_INIT(16, 17, "112") \
	QR_INIT(18, 19, "116") QR_INIT(20, 21, "120") QR_INIT(22, 23, "124")
/* The steps past the first six, one at a time. */
#define QR_REST(STEP)							\
	"mov %[nst], %[n]\n\t"						\
	"test %[n], %[n]\n\t"						\
	"jz 3f\n"							\
	".p2align 5\n"							\
	"2:\n\t"							\
	STEP								\
	"sub $1, %[n]\n\t"						\
	"jnz 2b\n"							\
	"3:\n\t"
/* The three pairs of rows 0-5 (@s 0) or 6-11 (1): registers, multipliers' offsets. */
#define QR_S0P0(P, k1, k2, k3) P(k1, k2, k3, 0, 1, 2, 3, "32", "36")
#define QR_S0P1(P, k1, k2, k3) P(k1, k2, k3, 4, 5, 6, 7, "40", "44")
#define QR_S0P2(P, k1, k2, k3) P(k1, k2, k3, 8, 9, 10, 11, "48", "52")
#define QR_S1P0(P, k1, k2, k3) P(k1, k2, k3, 12, 13, 14, 15, "56", "60")
#define QR_S1P1(P, k1, k2, k3) P(k1, k2, k3, 16, 17, 18, 19, "64", "68")
#define QR_S1P2(P, k1, k2, k3) P(k1, k2, k3, 20, 21, 22, 23, "72", "76")
/*
 * A half's steps, the outputs of half @s's three pairs of rows
 * (@P(@k1, @k2, @k3, its four registers, its multipliers' offsets))
 * after the first, third and fifth.
 */
#define QR_STEPS(STEP, P, k1, k2, k3, s)				\
	STEP QR_S##s##P0(P, k1, k2, k3) STEP				\
	STEP QR_S##s##P1(P, k1, k2, k3) STEP				\
	STEP QR_S##s##P2(P, k1, k2, k3) STEP				\
	QR_REST(STEP)
/*
 * One vector of the fused add's outputs in place (qout_float() and
 * qres_sum()'s instructions, the constants broadcast from memory): the
 * sums in zmm@a, the multiplier at @m of %[c], R's bytes at @r widened
 * by @x (vpmovzxbd or vpmovsxbd) into zmm27, the add's f in zmm28. %[c]
 * is struct eng_qpipe: lo at 0, hi 4, yz 8, ra 12, rb 16, f 20, yz16
 * 24, lo8 28, mult 32, fix 80. R second (QR_VEC0: fma(v, ra, fma(r,
 * rb, f))) or first (QR_VEC1).
 */
#define QR_CONV(x, a, m, r)						\
	"vcvtdq2ps %%zmm" #a ", %%zmm" #a "\n\t"			\
	"vmulps " m "(%[c])%{1to16%}, %%zmm" #a ", %%zmm" #a "\n\t"	\
	"vrndscaleps $8, %%zmm" #a ", %%zmm" #a "\n\t"			\
	"vmaxps 0(%[c])%{1to16%}, %%zmm" #a ", %%zmm" #a "\n\t"		\
	"vminps 4(%[c])%{1to16%}, %%zmm" #a ", %%zmm" #a "\n\t"		\
	"vaddps 8(%[c])%{1to16%}, %%zmm" #a ", %%zmm" #a "\n\t"		\
	x " " r ", %%zmm27\n\t"						\
	"vcvtdq2ps %%zmm27, %%zmm27\n\t"
#define QR_VEC0(x, a, m, r)						\
	QR_CONV(x, a, m, r)						\
	"vfmadd132ps 16(%[c])%{1to16%}, %%zmm28, %%zmm27\n\t"		\
	"vfmadd231ps 12(%[c])%{1to16%}, %%zmm" #a ", %%zmm27\n\t"	\
	"vcvtps2dq %{rn-sae%}, %%zmm27, %%zmm" #a "\n\t"
#define QR_VEC1(x, a, m, r)						\
	QR_CONV(x, a, m, r)						\
	"vfmadd132ps 16(%[c])%{1to16%}, %%zmm28, %%zmm" #a "\n\t"	\
	"vfmadd231ps 12(%[c])%{1to16%}, %%zmm27, %%zmm" #a "\n\t"	\
	"vcvtps2dq %{rn-sae%}, %%zmm" #a ", %%zmm" #a "\n\t"
#define QR_MAXUB(a) "vpmaxub %%zmm30, %%zmm" #a ", %%zmm" #a "\n\t"
#define QR_MAXSB(a) "vpmaxsb %%zmm30, %%zmm" #a ", %%zmm" #a "\n\t"
#define QR_NOMAX(a) ""
/*
 * Rows zmm@a0, @a1 (a row's panels) and @a2, @a3 (the next row's),
 * saturated to 16 bits, as bytes by @pk (raised to the low bound by
 * @MAX), stored as rows %[y] and %[y] + %[ys] by one vpermd (the
 * indices in zmm29), %[y] then two rows on.
 */
#define QR_STORE(pk, MAX, a0, a2)					\
	pk " %%zmm" #a2 ", %%zmm" #a0 ", %%zmm" #a0 "\n\t"		\
	MAX(a0)								\
	"vpermd %%zmm" #a0 ", %%zmm29, %%zmm" #a0 "\n\t"		\
	"vmovdqu32 %%ymm" #a0 ", (%[y])\n\t"				\
	"vextracti64x4 $1, %%zmm" #a0 ", (%[y], %[ys])\n\t"		\
	"lea (%[y], %[ys], 2), %[y]\n\t"
/*
 * A pair of rows with the fused add (qout_packed_res()'s pair): @V
 * QR_VEC0 or QR_VEC1, @x vpmovzxbd or vpmovsxbd, @pk vpackuswb or
 * vpacksswb; R at %[rp], then two rows on (R two tiles on fetched).
 */
#define QR_PAIRR(V, x, pk, a0, a1, a2, a3, m0, m1)			\
	V(x, a0, m0, "(%[rp])") V(x, a1, m0, "16(%[rp])")		\
	V(x, a2, m1, "(%[rp], %[rs])") V(x, a3, m1, "16(%[rp], %[rs])")	\
	"prefetcht0 64(%[rp])\n\t"					\
	"prefetcht0 64(%[rp], %[rs])\n\t"				\
	"vpackssdw %%zmm" #a1 ", %%zmm" #a0 ", %%zmm" #a0 "\n\t"	\
	"vpackssdw %%zmm" #a3 ", %%zmm" #a2 ", %%zmm" #a2 "\n\t"	\
	QR_STORE(pk, QR_NOMAX, a0, a2)					\
	"lea (%[rp], %[rs], 2), %[rp]\n\t"
/* One vector without the add in place (qout_round()). */
#define QR_VECP(a, m)							\
	"vcvtdq2ps %%zmm" #a ", %%zmm" #a "\n\t"			\
	"vmulps " m "(%[c])%{1to16%}, %%zmm" #a ", %%zmm" #a "\n\t"	\
	"vcvtps2dq %{rn-sae%}, %%zmm" #a ", %%zmm" #a "\n\t"
/*
 * A pair of rows without the add (qout_packed()'s pair, qout_pack2()):
 * the zero point's words in zmm28, the low bound's bytes in zmm30; @pk
 * vpackuswb or vpacksswb, @MAX QR_MAXUB, QR_MAXSB (ReLU) or QR_NOMAX.
 */
#define QR_PAIRP(pk, MAX, unused, a0, a1, a2, a3, m0, m1)		\
	QR_VECP(a0, m0) QR_VECP(a1, m0) QR_VECP(a2, m1) QR_VECP(a3, m1)	\
	"vpackssdw %%zmm" #a1 ", %%zmm" #a0 ", %%zmm" #a0 "\n\t"	\
	"vpackssdw %%zmm" #a3 ", %%zmm" #a2 ", %%zmm" #a2 "\n\t"	\
	"vpaddsw %%zmm28, %%zmm" #a0 ", %%zmm" #a0 "\n\t"		\
	"vpaddsw %%zmm28, %%zmm" #a2 ", %%zmm" #a2 "\n\t"		\
	QR_STORE(pk, MAX, a0, a2)
#define QR_PRER								\
	"vmovdqu32 %[perm], %%zmm29\n\t"				\
	"vbroadcastss 20(%[c]), %%zmm28\n\t"
#define QR_PREP								\
	"vmovdqu32 %[perm], %%zmm29\n\t"				\
	"vpbroadcastw 24(%[c]), %%zmm28\n\t"				\
	"vpbroadcastb 28(%[c]), %%zmm30\n\t"
/* Rows 0-5 from the rows' weights at %[w] (the next rows' from %[pf0]). */
#define QR_HALF0							\
	"mov %[w], %[wa]\n\t"						\
	"lea (%[wa], %[k4], 2), %[wb]\n\t"				\
	"add %[k4], %[wb]\n\t"						\
	"mov %[pf0], %[pf]\n\t"						\
	QR_INIT0
/*
 * The run: the first tile's rows 0-5 alone, then rows 6-11 with the
 * outputs of rows 0-5 and, each further tile, rows 0-5 with those of
 * the tile before's rows 6-11 (%[y] and %[rp] then back 12 rows and on
 * a tile: %[yb], %[rb]), rows 6-11 with those of rows 0-5; the last
 * tile's rows 6-11 after. Each half reads the tile's inputs from %[b]
 * (rows 6-11 back %[bst] bytes to them).
 */
#define QR_RUN(pre, P, k1, k2, k3)					\
	pre								\
	QR_HALF0							\
	"mov %[nall], %[n]\n\t"						\
	".p2align 5\n"							\
	"1:\n\t"							\
	QR_STEP0							\
	"sub $1, %[n]\n\t"						\
	"jnz 1b\n\t"							\
	"jmp 5f\n"							\
	"4:\n\t"							\
	QR_HALF0							\
	QR_STEPS(QR_STEP0, P, k1, k2, k3, 1)				\
	"sub %[yb], %[y]\n\t"						\
	"sub %[rb], %[rp]\n"						\
	"5:\n\t"							\
	"sub %[bst], %[b]\n\t"						\
	"lea (%[wa], %[k4], 4), %[wa]\n\t"				\
	"add %[k4], %[wa]\n\t"						\
	"lea (%[wb], %[k4], 4), %[wb]\n\t"				\
	"add %[k4], %[wb]\n\t"						\
	QR_INIT1							\
	QR_STEPS(QR_STEP1, P, k1, k2, k3, 0)				\
	"sub $1, %[nt]\n\t"						\
	"jnz 4b\n\t"							\
	QR_S1P0(P, k1, k2, k3) QR_S1P1(P, k1, k2, k3) QR_S1P2(P, k1, k2, k3)

/* Build fails unless @cond holds (a negative array size): the asm's layout. */
#define QR_CHECK(cond) ((void)sizeof(char[1 - 2 * !(cond)]))
#define QR_AT(f, at) QR_CHECK(__builtin_offsetof(struct eng_qpipe, f) == (at))
/* Called by vnpu_eng_qtile_vnni_run_init(); compiles to nothing. */
static inline void qr_layout(void)
{
	QR_AT(lo, 0);
	QR_AT(hi, 4);
	QR_AT(yz, 8);
	QR_AT(ra, 12);
	QR_AT(rb, 16);
	QR_AT(f, 20);
	QR_AT(yz16, 24);
	QR_AT(lo8, 28);
	QR_AT(mult, 32);
	QR_AT(fix, 80);
	/* 12 rows (two halves of six) of two 16-lane panels, 32 bytes of Y a row. */
	QR_CHECK(ENG_QMR == 12 && ENG_QNR == 32);
}

#undef QR_AT
#undef QR_CHECK

/*
 * @tiles whole tiles (ENG_QMR rows, ENG_QNR positions, at least 12
 * steps of depth) from @t, each ENG_QNR positions on from the one
 * before in the packed block, Y and R, as one asm statement (QR_RUN()).
 * With the fused add (@res) its epilogue takes about 12 vector
 * operations per 16 outputs against 16 vpdpbusd at a depth of 64,
 * without it 3 and a few packs; most of them run beside vpdpbusd (here
 * 6 vcvtdq2ps, vrndscaleps, vmaxps, vaddps, vcvtps2dq, vpmovzxbd,
 * vpackssdw or vpermd took no time among 24 vpdpbusd; 6 vmulps or
 * vfmadd231ps took 6 vpdpbusd's). Split into halves, a tile's sums stay
 * in registers until they are stored: stored to memory and loaded back
 * they cost as much as the epilogue they let overlap. @a: u8 outputs
 * (else i8); @b: with the add R first, else ReLU (qout_whole_kind()).
 */
static __attribute__((__always_inline__)) inline
void qrun_tiles(const struct eng_qtile *t, const struct eng_qpipe *c, __u64 tiles,
		const int res, const int a, const int b)
{
	static const __s32 perm[16] = { 0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15 };
	const struct eng_qout *o = t->out;
	__u64 k4 = t->k4, nall = k4 / 4, nst = nall - 6, bst = k4 * ENG_QNR, n = 0;
	const __s8 *w = t->w, *pf0 = t->pf ? t->pf : t->w, *wa = w, *wb = w, *pf = w;
	const __u8 *bp = t->b, *rp = o->r;
	__s64 rs = o->rs, ys = o->ys, yb = ENG_QMR * ys - ENG_QNR, rb = ENG_QMR * rs - ENG_QNR;
	__u8 *y = o->y;
	__u32 r;

	/* R's first two tiles; the pairs fetch the rest two tiles ahead. */
	for (r = 0; res && r < ENG_QMR; r++) {
		__builtin_prefetch(rp + (__s64)r * rs, 0, 3);
		__builtin_prefetch(rp + (__s64)r * rs + 2 * ENG_QNR - 1, 0, 3);
	}
#define QR_OPS								\
	: [b] "+r"(bp), [wa] "+r"(wa), [wb] "+r"(wb), [pf] "+r"(pf),	\
	  [n] "+r"(n), [y] "+r"(y), [rp] "+r"(rp), [nt] "+r"(tiles)	\
	: [k4] "r"(k4), [c] "r"(c), [rs] "r"(rs), [ys] "r"(ys),		\
	  [w] "m"(w), [pf0] "m"(pf0), [nall] "m"(nall), [nst] "m"(nst),	\
	  [bst] "m"(bst), [yb] "m"(yb), [rb] "m"(rb), [perm] "m"(perm)	\
	: "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", \
	  "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14",	\
	  "xmm15", "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21",	\
	  "xmm22", "xmm23", "xmm24", "xmm25", "xmm26", "xmm27", "xmm28",	\
	  "xmm29", "xmm30", "xmm31", "cc", "memory"
	if (res && a && b)
		__asm__ __volatile__(QR_RUN(QR_PRER, QR_PAIRR, QR_VEC1, "vpmovzxbd",
					    "vpackuswb") QR_OPS);
	else if (res && a)
		__asm__ __volatile__(QR_RUN(QR_PRER, QR_PAIRR, QR_VEC0, "vpmovzxbd",
					    "vpackuswb") QR_OPS);
	else if (res && b)
		__asm__ __volatile__(QR_RUN(QR_PRER, QR_PAIRR, QR_VEC1, "vpmovsxbd",
					    "vpacksswb") QR_OPS);
	else if (res)
		__asm__ __volatile__(QR_RUN(QR_PRER, QR_PAIRR, QR_VEC0, "vpmovsxbd",
					    "vpacksswb") QR_OPS);
	else if (a && b)
		__asm__ __volatile__(QR_RUN(QR_PREP, QR_PAIRP, "vpackuswb", QR_MAXUB, "")
				     QR_OPS);
	else if (a)
		__asm__ __volatile__(QR_RUN(QR_PREP, QR_PAIRP, "vpackuswb", QR_NOMAX, "")
				     QR_OPS);
	else if (b)
		__asm__ __volatile__(QR_RUN(QR_PREP, QR_PAIRP, "vpacksswb", QR_MAXSB, "")
				     QR_OPS);
	else
		__asm__ __volatile__(QR_RUN(QR_PREP, QR_PAIRP, "vpacksswb", QR_NOMAX, "")
				     QR_OPS);
#undef QR_OPS
}

#define QRUN_KIND(res, a, b)						\
static __attribute__((__noinline__))					\
void qrun_##res##a##b(const struct eng_qtile *t, const struct eng_qpipe *c, \
		      __u64 tiles)					\
{									\
	qrun_tiles(t, c, tiles, res, a, b);				\
}

QRUN_KIND(0, 0, 0)
QRUN_KIND(0, 0, 1)
QRUN_KIND(0, 1, 0)
QRUN_KIND(0, 1, 1)
QRUN_KIND(1, 0, 0)
QRUN_KIND(1, 0, 1)
QRUN_KIND(1, 1, 0)
QRUN_KIND(1, 1, 1)
#undef QRUN_KIND

int vnpu_eng_qtile_vnni_runs(const struct eng_qtile *t)
{
	const struct eng_qout *o = t->out;

	if (t->k4 < 4 * ENG_QMR || o->xsum)
		return 0;
	return o->r ? qout_whole_res(o) : qout_whole(o);
}

void vnpu_eng_qtile_vnni_run_init(struct eng_qpipe *c, const struct eng_qout *o)
{
	__u32 r;

	qr_layout();
	c->lo = o->lo;
	c->hi = o->hi;
	c->yz = (float)o->yz;
	c->ra = o->res ? o->res->ra : 0.0f;
	c->rb = o->res ? o->res->rb : 0.0f;
	c->f = o->res ? o->res->f : 0.0f;
	c->yz16 = (__s16)o->yz;
	c->lo8 = (__u8)((__s32)o->lo + o->yz);
	for (r = 0; r < ENG_QMR; r++) {
		c->mult[r] = o->mult[r];
		c->fix[r] = o->fix[r];
	}
}

void vnpu_eng_qtile_vnni_run(const struct eng_qtile *t, const struct eng_qpipe *c,
			     __u64 tiles)
{
	/* By kind: with the add, u8, R first or ReLU (qrun_tiles()). */
	static void (*const run[8])(const struct eng_qtile *t, const struct eng_qpipe *c,
				    __u64 tiles) = {
		qrun_000, qrun_001, qrun_010, qrun_011,
		qrun_100, qrun_101, qrun_110, qrun_111,
	};
	const struct eng_qout *o = t->out;
	int res = !!o->r;
	int a = res ? o->res->dtype == VNPU_DTYPE_U8 : qout_u8(o);
	int b = res ? (int)o->res->first : qout_relu(o);

	run[4 * res + 2 * a + b](t, c, tiles);
}

/* The sum of @v's 16 lanes (wrapping). */
static inline __s32 q_hsum16(v16si v)
{
	v8si_n a = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7) +
		   __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
	v4si_n b = __builtin_shufflevector(a, a, 0, 1, 2, 3) +
		   __builtin_shufflevector(a, a, 4, 5, 6, 7);

	return (__s32)((__u32)b[0] + (__u32)b[1] + (__u32)b[2] + (__u32)b[3]);
}

/* @n (at most 64) bytes at @p, the rest 0: a masked load, nothing past @n read. */
static inline v16si q_load_n(const __u8 *p, __u32 n)
{
	__u64 m = n >= 64 ? ~0ull : (1ull << n) - 1;
	v16si v;

	__asm__("kmovq %2, %%k1\n\t"
		"vmovdqu8 (%1), %0%{%%k1%}%{z%}"
		: "=v"(v) : "r"(p), "r"(m), "m"(*(const __u8 (*)[64])p) : "k1");
	return v;
}

/*
 * Positions 16 to @n - 1 of the tile's first @nr rows (a multiple of 4:
 * W's rows are there, as qtile_part() reads them) one at a time, sums
 * into t->acc: a row's products with the position's inputs 16 depth
 * steps to a vpdpbusd (the inputs from t->x1, or gathered from the
 * packed block, 4 bytes ENG_QNR * 4 apart), the lanes summed at the end.
 */
static __attribute__((__always_inline__)) inline
void qtile_single(const struct eng_qtile *t, const __u32 nr, __u32 n)
{
	const __u64 steps = t->k4 / 4;
	const v16si idx = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };
	__u32 q, r;
	__u64 c;

	for (q = 16; q < n; q++) {
		v16si acc[ENG_QMR];

		for (r = 0; r < ENG_QMR; r++)
			acc[r] = (v16si){};
		for (c = 0; c < steps; c += 16) {
			__u32 left = (__u32)(steps - c < 16 ? steps - c : 16);
			__u16 m = (__u16)(left >= 16 ? 0xffff : (1u << left) - 1);
			v16si x;

			if (t->x1)
				x = q_load_n(t->x1 + (q - 16) * t->k4 + 4 * c, 4 * left);
			else
				x = __builtin_ia32_gathersiv16si((v16si){},
								 t->b + c * ENG_QNR * 4 + 4 * q,
								 idx * (ENG_QNR * 4), m, 1);

#pragma GCC unroll 12
			for (r = 0; r < nr; r++)
				acc[r] = dpbusd(acc[r], x,
						q_load_n((const __u8 *)t->w + r * t->k4 + 4 * c,
							 4 * left));
		}
#pragma GCC unroll 12
		for (r = 0; r < nr; r++)
			t->acc[r * ENG_QNR + q] = q_hsum16(acc[r]);
	}
}

typedef int v4si_u __attribute__((vector_size(16), aligned(4), may_alias));

/*
 * Positions 0 to 3 of 4 depth steps of the packed block at @b (16 bytes
 * a step, ENG_QNR * 4 apart; the first @n steps, 1 to 4, the others 0
 * and not read), transposed: 128-bit lane q holds position q's 4 bytes
 * of each step.
 */
static inline v16si qfew_x(const __u8 *b, __u32 n)
{
	v4si_n a0 = *(const v4si_u *)b, a1 = {}, a2 = {}, a3 = {};
	v8si_n lo, hi;
	v16si x;

	if (n >= 4) {
		__asm__("vbroadcasti32x4 (%1), %0\n\t"
			"vinserti32x4 $1, %c2(%1), %0, %0\n\t"
			"vinserti32x4 $2, %c3(%1), %0, %0\n\t"
			"vinserti32x4 $3, %c4(%1), %0, %0"
			: "=&v"(x)
			: "r"(b), "i"(ENG_QNR * 4), "i"(2 * ENG_QNR * 4), "i"(3 * ENG_QNR * 4),
			  "m"(*(const __u8 (*)[4 * ENG_QNR * 4])b));
	} else {
		if (n > 1)
			a1 = *(const v4si_u *)(b + ENG_QNR * 4);
		if (n > 2)
			a2 = *(const v4si_u *)(b + 2 * ENG_QNR * 4);
		lo = __builtin_shufflevector(a0, a1, 0, 1, 2, 3, 4, 5, 6, 7);
		hi = __builtin_shufflevector(a2, a3, 0, 1, 2, 3, 4, 5, 6, 7);
		x = __builtin_shufflevector(lo, hi, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
					    13, 14, 15);
	}
	return __builtin_shufflevector(x, x, 0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
}

/* @p's 16 bytes (@n of them, the rest 0: a masked load) in each 128-bit lane. */
static inline v16si qfew_w(const __s8 *p, __u32 n)
{
	v16si w;

	if (n >= 16) {
		__asm__("vbroadcasti32x4 (%1), %0"
			: "=v"(w) : "r"(p), "m"(*(const __u8 (*)[16])p));
	} else {
		__u32 m = (1u << n) - 1;

		__asm__("kmovw %k2, %%k1\n\t"
			"vmovdqu8 %1, %x0%{%%k1%}%{z%}\n\t"
			"vshufi32x4 $0, %0, %0, %0"
			: "=v"(w) : "m"(*(const __u8 (*)[16])p), "r"(m) : "k1");
	}
	return w;
}

/*
 * The sums of the tile's first @nr rows (a multiple of 4, as
 * qtile_single()) over its first 4 positions into t->acc: where the
 * outputs stop there (a 14x14 map's last 4 of 196), in place of a panel
 * of 16. Per 4 depth steps, one vector of the 4 positions' inputs
 * (qfew_x(): 128-bit lane q, position q) and one vpdpbusd per row by its
 * 16 weight bytes in each lane; the 4 lanes of each 128-bit lane summed
 * at the end. Positions 1 to 3 past the outputs sum the packed padding.
 */
static __attribute__((__always_inline__)) inline
void qtile_few(const struct eng_qtile *t, const __u32 nr)
{
	const __u64 steps = t->k4 / 4;
	v16si acc[ENG_QMR];
	__u64 j;
	__u32 r;

	for (r = 0; r < ENG_QMR; r++)
		acc[r] = (v16si){};
	for (j = 0; j + 4 <= steps; j += 4) {
		v16si x = qfew_x(t->b + j * ENG_QNR * 4, 4);

#pragma GCC unroll 12
		for (r = 0; r < nr; r++)
			acc[r] = dpbusd(acc[r], x, qfew_w(t->w + r * t->k4 + 4 * j, 16));
	}
	if (j < steps) {
		__u32 left = (__u32)(steps - j);
		v16si x = qfew_x(t->b + j * ENG_QNR * 4, left);

#pragma GCC unroll 12
		for (r = 0; r < nr; r++)
			acc[r] = dpbusd(acc[r], x, qfew_w(t->w + r * t->k4 + 4 * j, 4 * left));
	}
#pragma GCC unroll 12
	for (r = 0; r < nr; r++) {
		v16si a = acc[r];

		a += __builtin_shufflevector(a, a, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9,
					     14, 15, 12, 13);
		a += __builtin_shufflevector(a, a, 1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10,
					     13, 12, 15, 14);
		*(v4si_u *)(t->acc + r * ENG_QNR) = __builtin_shufflevector(a, a, 0, 4, 8, 12);
	}
}

/*
 * The outputs of struct eng_qout from the sums at t->acc (row r at
 * t->acc + r * ENG_QNR), @np panels: qout_tile_rows(), the AVX-512
 * epilogue of the tile's own sums.
 */
static __attribute__((__always_inline__)) inline
void qtile_acc_rows(const struct eng_qtile *t, const __u32 np, const int res)
{
	v16si acc[ENG_QMR][2];

#define QT_ACC(r)							\
	do {								\
		acc[r][0] = *(const v16si_u *)(t->acc + (r) * ENG_QNR);	\
		acc[r][1] = *(const v16si_u *)(t->acc + (r) * ENG_QNR + 16); \
	} while (0)
	QOUT_ROWS(QT_ACC);
#undef QT_ACC
	qout_tile_rows(t->out, acc, ENG_QMR, np, res, 0);
}

/* qtile_acc_rows() for the tile's panels and add. */
static __attribute__((__noinline__)) void qtile_acc_out(const struct eng_qtile *t)
{
	int two = t->out->n > 16;

	if (t->out->r && two)
		qtile_acc_rows(t, 2, 1);
	else if (t->out->r)
		qtile_acc_rows(t, 1, 1);
	else if (two)
		qtile_acc_rows(t, 2, 0);
	else
		qtile_acc_rows(t, 1, 0);
}

void vnpu_eng_qtile_vnni_narrow(const struct eng_qtile *t, __u32 rows, __u32 n)
{
	struct eng_qtile s = *t;

	/* The sums to s.acc (t->acc), then t->out's stores of them. */
	s.out = (const struct eng_qout *)0;
	if (n <= 4) {
		if (rows <= 4)
			qtile_few(&s, 4);
		else if (rows <= 8)
			qtile_few(&s, 8);
		else
			qtile_few(&s, ENG_QMR);
	} else if (rows <= 4) {
		qtile_part(&s, 4, 1, 0);
		qtile_single(&s, 4, n);
	} else if (rows <= 8) {
		qtile_part(&s, 8, 1, 0);
		qtile_single(&s, 8, n);
	} else {
		qtile_part(&s, ENG_QMR, 1, 0);
		qtile_single(&s, ENG_QMR, n);
	}
	if (t->out)
		qtile_acc_out(t);
}

typedef unsigned char v64qu __attribute__((vector_size(64)));
typedef unsigned long long u64_u __attribute__((aligned(1), may_alias));
typedef __u32 u32_u __attribute__((aligned(1), may_alias));

/*
 * Four taps of 16 positions as 16 groups of 4 bytes: 128-bit loads at
 * @src, @src + @q[1], @src + @q[2] and @src + @q[3] into lanes 0 to 3
 * (positions 4j..4j+3), then vpshufb by @pat (bytes 0-3, 1-4, 2-5, 3-6
 * of the lane for stride 1; 0-3, 2-5, 4-7, 6-9 for stride 2).
 */
static inline v16si qdw_taps(const __u8 *src, const __u64 *q, v64qu pat)
{
	v16si v;

	__asm__("vbroadcasti32x4 (%1), %0\n\t"
		"vinserti32x4 $1, (%1,%2), %0, %0\n\t"
		"vinserti32x4 $2, (%1,%3), %0, %0\n\t"
		"vinserti32x4 $3, (%1,%4), %0, %0\n\t"
		"vpshufb %5, %0, %0"
		: "=&v"(v)
		: "r"(src), "r"(q[1]), "r"(q[2]), "r"(q[3]), "v"(pat),
		  "m"(*(const __u8 (*)[16])src), "m"(*(const __u8 (*)[16])(src + q[1])),
		  "m"(*(const __u8 (*)[16])(src + q[2])),
		  "m"(*(const __u8 (*)[16])(src + q[3])));
	return v;
}

/*
 * Outputs @b of @n rows from row @r (of @rows), @lw lanes each, as rows
 * of @ow bytes at @y: a row's store of @lw bytes runs into the next
 * ones, which are stored after it; one that would run past the
 * channel's last output stores its @ow bytes alone.
 */
static void qdw_store_rows(v16qu b, __u32 r, __u32 n, __u32 lw,
			   const struct eng_qdw *d)
{
	__u32 i;

	for (i = 0; i < n && r + i < d->rows; i++) {
		__u8 *y = d->y + (__u64)(r + i) * d->ow;
		int whole = (__u64)(r + i) * d->ow + lw <= (__u64)d->rows * d->ow;

		if (lw == 8 && whole)
			*(u64_u *)y = ((v2du_q)b)[i];
		else if (whole)
			*(u32_u *)y = ((v4su_q)b)[i];
		else if (lw == 8)
			q_store_n((v16qu)(v2du_q){ ((v2du_q)b)[i] }, y, d->ow);
		else
			q_store_n((v16qu)(v4su_q){ ((v4su_q)b)[i] }, y, d->ow);
	}
}

void vnpu_eng_qdw_vnni(const struct eng_qdw *d)
{
	static const v64qu pat1 = {
		0, 1, 2, 3, 1, 2, 3, 4, 2, 3, 4, 5, 3, 4, 5, 6,
		0, 1, 2, 3, 1, 2, 3, 4, 2, 3, 4, 5, 3, 4, 5, 6,
		0, 1, 2, 3, 1, 2, 3, 4, 2, 3, 4, 5, 3, 4, 5, 6,
		0, 1, 2, 3, 1, 2, 3, 4, 2, 3, 4, 5, 3, 4, 5, 6 };
	static const v64qu pat2 = {
		0, 1, 2, 3, 2, 3, 4, 5, 4, 5, 6, 7, 6, 7, 8, 9,
		0, 1, 2, 3, 2, 3, 4, 5, 4, 5, 6, 7, 6, 7, 8, 9,
		0, 1, 2, 3, 2, 3, 4, 5, 4, 5, 6, 7, 6, 7, 8, 9,
		0, 1, 2, 3, 2, 3, 4, 5, 4, 5, 6, 7, 6, 7, 8, 9 };
	v64qu pat = d->sw == 1 ? pat1 : pat2;
	v16si flip = (v16si){} + (__s32)(0x01010101u * d->flip);
	/* Rows a vector holds, lanes of a row, quarters (4 lanes) of a row. */
	__u32 rpv = d->ow <= 4 ? 4 : d->ow <= 8 ? 2 : 1;
	__u32 lw = 16 / rpv, qpr = 4 / rpv;
	__u32 o, r, j, g, ng = (d->kw + 3) / 4, nt = d->kh * ng;
	/* Quarter j's bytes from its vector's first: row j / qpr. */
	__u64 q0[4], q[4];
	/* Tap group i's bytes from a vector's first: one loop over them. */
	__u64 toff[ENG_QDW_W4];

	/* Nested loops, not divisions: this runs once per channel. */
	for (r = 0, j = 0; r < rpv; r++)
		for (o = 0; o < qpr; o++)
			q0[j++] = r * d->rstep + 4 * o * d->sw;
	for (r = 0, j = 0; r < d->kh; r++)
		for (g = 0; g < ng; g++)
			toff[j++] = r * d->rs + 4 * g;
	for (r = 0; r < d->rows; r += rpv) {
		for (o = 0; o < d->ow; o += 16) {
			const __u8 *src = d->row + r * d->rstep + o * d->sw;
			v16si acc = (v16si){} + d->fix;
			const __u64 *qv = q0;

			/* Rows past the last read the last. */
			for (j = 0; r + rpv > d->rows && j < 4; j++) {
				q[j] = r + j / qpr < d->rows ? q0[j] :
				       q0[j] - (r + j / qpr - (d->rows - 1)) * d->rstep;
				qv = q;
			}
			for (g = 0; g < nt; g++) {
				v16si w = (v16si){} + d->w4[g];

				acc = dpbusd(acc, qdw_taps(src + toff[g], qv, pat) ^ flip, w);
			}
			if (rpv == 1) {
				q_store16((v16su)acc, d->mult, d->lo, d->hi, d->yz,
					  d->y + (__u64)r * d->ow + o, d->ow - o);
				continue;
			}
			qdw_store_rows(q_bytes16((v16su)acc, d->mult, d->lo, d->hi, d->yz),
				       r, rpv, lw, d);
		}
	}
}

void vnpu_eng_qadd_avx512(const struct eng_qadd *q)
{
	const v16sf ra = (v16sf){} + q->ra, rb = (v16sf){} + q->rb;
	const v16sf f = (v16sf){} + q->f;
	const v16si lo = (v16si){} + q->lo, hi = (v16si){} + q->hi;
	__u64 i;

	for (i = 0; i + 16 <= q->n; i += 16) {
		v16sf a = __builtin_convertvector(qadd_load16(q->a + i, q->s8), v16sf);
		v16sf b = __builtin_convertvector(qadd_load16(q->b + i, q->s8), v16sf);
		v16si v = q_rne(q_fma(a, ra, q_fma(b, rb, f)));

		/* NaN and values out of range converted to INT_MIN: the low bound. */
		__asm__("vpmaxsd %2, %1, %1\n\t"
			"vpminsd %3, %1, %1\n\t"
			"vpmovdb %1, %0"
			: "=m"(*(__u8 (*)[16])(q->y + i)), "+v"(v)
			: "v"(lo), "v"(hi));
	}
}

/*
 * Quantized: x / s (vdivps, rounded as the AVX2 rows' division), then
 * q_bytes16()'s clamp, rounding and NaN; dequantized: (x - z) * s.
 */
void vnpu_eng_qlin_avx512(const struct eng_qlin *q)
{
	const v16sf lo = (v16sf){} + q->lo, hi = (v16sf){} + q->hi;
	const v16sf s = (v16sf){} + q->s;
	__u64 i;

	for (i = 0; q->quant && i + 16 <= q->n; i += 16) {
		v16sf f = *(const v16sf_u *)((const float *)q->x + i) / s;
		v16si v = (q_rne(q_min(q_max(f, lo), hi)) + q->z) & ~(f != f);

		__asm__("vpmovdb %1, %0"
			: "=m"(*(__u8 (*)[16])((__u8 *)q->y + i)) : "v"(v));
	}
	for (i = 0; !q->quant && i + 16 <= q->n; i += 16) {
		v16si v = qadd_load16((const __u8 *)q->x + i, q->s8) - q->z;

		*(v16sf_u *)((float *)q->y + i) = __builtin_convertvector(v, v16sf) * s;
	}
}

typedef unsigned short v32hu __attribute__((vector_size(64)));
typedef unsigned long long v8du __attribute__((vector_size(64)));
typedef unsigned char v64qu_a __attribute__((vector_size(64), aligned(64), may_alias));

/*
 * 64 bytes at @p, those of lanes not in @m as @v (masked lanes are not
 * read: no fault past the input's ends).
 */
static inline v64qu qpack_load(const __u8 *p, __u64 m, v64qu v)
{
	__asm__("kmovq %2, %%k1\n\t"
		"vmovdqu8 (%1), %0%{%%k1%}"
		: "+v"(v) : "r"(p), "r"(m) : "k1", "memory");
	return v;
}

/*
 * 64 positions of four rows (@a, @b, @c, @e) as 64 groups of their 4
 * bytes: positions 0-31 at @d0, 32-63 at @d1 (128 bytes each, aligned);
 * bytes then pairs interleaved within each 128-bit lane (positions
 * 16L..16L+15 of lane L as four vectors of 4), the lanes transposed last.
 */
static inline void qpack_interleave(v64qu a, v64qu b, v64qu c, v64qu e,
				    __u8 *d0, __u8 *d1, int two)
{
#define QP_B(h) \
	16 * 0 + 8 * h + 0, 64 + 16 * 0 + 8 * h + 0, 16 * 0 + 8 * h + 1, 64 + 16 * 0 + 8 * h + 1, \
	16 * 0 + 8 * h + 2, 64 + 16 * 0 + 8 * h + 2, 16 * 0 + 8 * h + 3, 64 + 16 * 0 + 8 * h + 3, \
	16 * 0 + 8 * h + 4, 64 + 16 * 0 + 8 * h + 4, 16 * 0 + 8 * h + 5, 64 + 16 * 0 + 8 * h + 5, \
	16 * 0 + 8 * h + 6, 64 + 16 * 0 + 8 * h + 6, 16 * 0 + 8 * h + 7, 64 + 16 * 0 + 8 * h + 7, \
	16 * 1 + 8 * h + 0, 64 + 16 * 1 + 8 * h + 0, 16 * 1 + 8 * h + 1, 64 + 16 * 1 + 8 * h + 1, \
	16 * 1 + 8 * h + 2, 64 + 16 * 1 + 8 * h + 2, 16 * 1 + 8 * h + 3, 64 + 16 * 1 + 8 * h + 3, \
	16 * 1 + 8 * h + 4, 64 + 16 * 1 + 8 * h + 4, 16 * 1 + 8 * h + 5, 64 + 16 * 1 + 8 * h + 5, \
	16 * 1 + 8 * h + 6, 64 + 16 * 1 + 8 * h + 6, 16 * 1 + 8 * h + 7, 64 + 16 * 1 + 8 * h + 7, \
	16 * 2 + 8 * h + 0, 64 + 16 * 2 + 8 * h + 0, 16 * 2 + 8 * h + 1, 64 + 16 * 2 + 8 * h + 1, \
	16 * 2 + 8 * h + 2, 64 + 16 * 2 + 8 * h + 2, 16 * 2 + 8 * h + 3, 64 + 16 * 2 + 8 * h + 3, \
	16 * 2 + 8 * h + 4, 64 + 16 * 2 + 8 * h + 4, 16 * 2 + 8 * h + 5, 64 + 16 * 2 + 8 * h + 5, \
	16 * 2 + 8 * h + 6, 64 + 16 * 2 + 8 * h + 6, 16 * 2 + 8 * h + 7, 64 + 16 * 2 + 8 * h + 7, \
	16 * 3 + 8 * h + 0, 64 + 16 * 3 + 8 * h + 0, 16 * 3 + 8 * h + 1, 64 + 16 * 3 + 8 * h + 1, \
	16 * 3 + 8 * h + 2, 64 + 16 * 3 + 8 * h + 2, 16 * 3 + 8 * h + 3, 64 + 16 * 3 + 8 * h + 3, \
	16 * 3 + 8 * h + 4, 64 + 16 * 3 + 8 * h + 4, 16 * 3 + 8 * h + 5, 64 + 16 * 3 + 8 * h + 5, \
	16 * 3 + 8 * h + 6, 64 + 16 * 3 + 8 * h + 6, 16 * 3 + 8 * h + 7, 64 + 16 * 3 + 8 * h + 7
#define QP_W(h) \
	8 * 0 + 4 * h + 0, 32 + 8 * 0 + 4 * h + 0, 8 * 0 + 4 * h + 1, 32 + 8 * 0 + 4 * h + 1, \
	8 * 0 + 4 * h + 2, 32 + 8 * 0 + 4 * h + 2, 8 * 0 + 4 * h + 3, 32 + 8 * 0 + 4 * h + 3, \
	8 * 1 + 4 * h + 0, 32 + 8 * 1 + 4 * h + 0, 8 * 1 + 4 * h + 1, 32 + 8 * 1 + 4 * h + 1, \
	8 * 1 + 4 * h + 2, 32 + 8 * 1 + 4 * h + 2, 8 * 1 + 4 * h + 3, 32 + 8 * 1 + 4 * h + 3, \
	8 * 2 + 4 * h + 0, 32 + 8 * 2 + 4 * h + 0, 8 * 2 + 4 * h + 1, 32 + 8 * 2 + 4 * h + 1, \
	8 * 2 + 4 * h + 2, 32 + 8 * 2 + 4 * h + 2, 8 * 2 + 4 * h + 3, 32 + 8 * 2 + 4 * h + 3, \
	8 * 3 + 4 * h + 0, 32 + 8 * 3 + 4 * h + 0, 8 * 3 + 4 * h + 1, 32 + 8 * 3 + 4 * h + 1, \
	8 * 3 + 4 * h + 2, 32 + 8 * 3 + 4 * h + 2, 8 * 3 + 4 * h + 3, 32 + 8 * 3 + 4 * h + 3
	v32hu ab0 = (v32hu)__builtin_shufflevector(a, b, QP_B(0));
	v32hu ab1 = (v32hu)__builtin_shufflevector(a, b, QP_B(1));
	v32hu ce0 = (v32hu)__builtin_shufflevector(c, e, QP_B(0));
	v32hu ce1 = (v32hu)__builtin_shufflevector(c, e, QP_B(1));
	/* Lane L of w[i]: positions 16L + 4i .. 16L + 4i + 3. */
	v8du w0 = (v8du)__builtin_shufflevector(ab0, ce0, QP_W(0));
	v8du w1 = (v8du)__builtin_shufflevector(ab0, ce0, QP_W(1));
	v8du w2 = (v8du)__builtin_shufflevector(ab1, ce1, QP_W(0));
	v8du w3 = (v8du)__builtin_shufflevector(ab1, ce1, QP_W(1));
#undef QP_B
#undef QP_W
	/* Lanes 0 and 1 of w0 and w1, of w2 and w3; then lanes 2 and 3. */
	v8du t0 = __builtin_shufflevector(w0, w1, 0, 1, 2, 3, 8, 9, 10, 11);
	v8du t1 = __builtin_shufflevector(w2, w3, 0, 1, 2, 3, 8, 9, 10, 11);

	*(v64qu_a *)d0 = (v64qu)__builtin_shufflevector(t0, t1, 0, 1, 4, 5, 8, 9, 12, 13);
	*(v64qu_a *)(d0 + 64) = (v64qu)__builtin_shufflevector(t0, t1, 2, 3, 6, 7, 10, 11,
							      14, 15);
	if (two) {
		v8du t2 = __builtin_shufflevector(w0, w1, 4, 5, 6, 7, 12, 13, 14, 15);
		v8du t3 = __builtin_shufflevector(w2, w3, 4, 5, 6, 7, 12, 13, 14, 15);

		*(v64qu_a *)d1 = (v64qu)__builtin_shufflevector(t2, t3, 0, 1, 4, 5, 8, 9,
								12, 13);
		*(v64qu_a *)(d1 + 64) = (v64qu)__builtin_shufflevector(t2, t3, 2, 3, 6, 7,
								      10, 11, 14, 15);
	}
}

/*
 * Steps of depth qpack_1x1() takes at once: each group of 64 positions
 * of them, then the next group, so that each tile's stores run on for
 * 128 * QPACK_STEPS bytes. Step by step over all groups, as below, a
 * step's stores went to every tile of the block in turn, a tile's bytes
 * apart (8 KB at a depth of 256), so to a few L1 sets: a 1x1 of 256 ->
 * 64 channels on 56x56 took 8% longer on one CPU. A larger kernel's taps
 * re-read a row's bytes at small offsets, and there step by step was
 * the faster (3x3 of 64 channels on 56x56: 3% less).
 */
#define QPACK_STEPS	8

/* vnpu_eng_qpack_vnni() of a 1x1: one tap, one mask per group. */
static void qpack_1x1(const struct eng_qpack *p)
{
	const v64qu flip = (v64qu){} + p->flip, pad = (v64qu){} + p->pad;
	__u64 steps = p->k4 / 4, ng = (p->ncp + 63) / 64, ts = steps * ENG_QNR * 4;
	__u64 j0, j1, j, r, g, m;
	const __u8 *x = p->x + p->toff[0];

	for (j0 = 0; j0 < steps; j0 = j1) {
		j1 = steps - j0 < QPACK_STEPS ? steps : j0 + QPACK_STEPS;
		for (g = 0; g < ng; g++) {
			__u8 *d = p->b + (j0 + 2 * g * steps) * ENG_QNR * 4;

			m = p->rowm[g] & p->colm[g];
			for (j = j0; j < j1; j++, d += ENG_QNR * 4) {
				v64qu v[4];

				for (r = 0; r < 4; r++)
					v[r] = 4 * j + r < p->k ?
					       qpack_load(x + (__s64)(4 * j + r) * p->cs + 64 * g,
							  m, pad) ^ flip : flip;
				qpack_interleave(v[0], v[1], v[2], v[3], d, d + ts,
						 64 * g + ENG_QNR < p->ncp);
			}
		}
	}
}

void vnpu_eng_qpack_vnni(const struct eng_qpack *p)
{
	const v64qu flip = (v64qu){} + p->flip, pad = (v64qu){} + p->pad;
	__u64 steps = p->k4 / 4, ng = (p->ncp + 63) / 64, j, r, g;
	/* Depth k's channel and tap, stepped with k. */
	__u64 k = 0, c = 0, th = 0, tw = 0;
	const __u8 *src[4];
	__u32 tr[4] = { 0 }, tc[4] = { 0 };

	if (p->kh * p->kw == 1) {
		qpack_1x1(p);
		return;
	}
	for (j = 0; j < steps; j++) {
		__u8 *d = p->b + j * ENG_QNR * 4;

		for (r = 0; r < 4; r++, k++) {
			src[r] = (const __u8 *)0;
			if (k >= p->k)
				continue;
			src[r] = p->x + (__s64)c * p->cs + p->toff[th * p->kw + tw];
			tr[r] = th;
			tc[r] = tw;
			if (++tw < p->kw)
				continue;
			tw = 0;
			if (++th < p->kh)
				continue;
			th = 0;
			c++;
		}
		for (g = 0; g < ng; g++, d += 2 * steps * ENG_QNR * 4) {
			v64qu v[4];

			for (r = 0; r < 4; r++)
				v[r] = src[r] ? qpack_load(src[r] + 64 * g,
							   p->rowm[tr[r] * ng + g] &
							   p->colm[tc[r] * ng + g], pad) ^ flip :
						flip;
			qpack_interleave(v[0], v[1], v[2], v[3], d, d + steps * ENG_QNR * 4,
					 64 * g + ENG_QNR < p->ncp);
		}
	}
}

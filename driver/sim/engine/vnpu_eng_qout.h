/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The int8 requantize epilogue: a tile's 32-bit sums (struct eng_qtile,
 * struct eng_qout) as 8-bit outputs, with the fused QLINEAR_ADD, and the
 * vector helpers under it (QUANTIZE's rounding, QLINEAR_ADD's arithmetic).
 * Included after vnpu_eng_kern.h by vnpu_eng_quant.c and by the other
 * QLINEAR_CONV kernels that end in the same stores, so all give the same
 * bits. qadd8() and qres8() are static but not inline: the keyword raises
 * GCC's inlining limits, and the callers of both in vnpu_eng_quant.c are
 * tuned as they inline without it.
 */
#ifndef VNPU_ENG_QOUT_H
#define VNPU_ENG_QOUT_H

typedef float v8sf_qq __attribute__((vector_size(32)));
typedef int v8si_qq __attribute__((vector_size(32)));
typedef float v8sf_qqu __attribute__((vector_size(32), aligned(4), may_alias));
typedef unsigned char v8qu_qq __attribute__((vector_size(8)));
typedef unsigned char v8qu_qqu __attribute__((vector_size(8), aligned(1), may_alias));
typedef int v8si_qu __attribute__((vector_size(32), aligned(4), may_alias));
typedef unsigned int v8su_qq __attribute__((vector_size(32)));
typedef unsigned int v8su_qu __attribute__((vector_size(32), aligned(4), may_alias));
typedef unsigned char v8qu_qu __attribute__((vector_size(8), aligned(1), may_alias));

/*
 * Eight f32 values @f as quantized integers: clamped to [@lo, @hi] (the
 * range less the zero point; integers, so the same as saturating after
 * rounding), rounded half to even, plus the zero point @z; NaN gives 0,
 * as vnpu_eng_quant.c's st_q() stores it. QUANTIZE's x / s and
 * QLINEAR_CONV's requantized sums both end here.
 */
static inline v8si_qq q_round8(v8sf_qq f, float lo, float hi, __s32 z)
{
	v8sf_qq b = (v8sf_qq){} + lo, c = (v8sf_qq){} + hi;
	v8si_qq nan = f != f;

#ifdef ENG_FMA
	/*
	 * vmaxps, vminps: what they make of a NaN, @nan turns into 0;
	 * vcvtps2dq rounds as the magic sum below does (both by MXCSR).
	 */
	f = __builtin_ia32_minps256(__builtin_ia32_maxps256(f, b), c);
	return (__builtin_ia32_cvtps2dq256(f) + z) & ~nan;
#else
	const v8sf_qq magic = (v8sf_qq){} + 12582912.0f;
	v8si_qq m = f < b;

	f = (v8sf_qq)(((v8si_qq)f & ~m) | ((v8si_qq)b & m));
	m = f > c;
	f = (v8sf_qq)(((v8si_qq)f & ~m) | ((v8si_qq)c & m));
	f = (f + magic) - magic;
	return (__builtin_convertvector(f, v8si_qq) + z) & ~nan;
#endif
}

typedef unsigned char v32qu_qq __attribute__((vector_size(32)));

/*
 * The low bytes of eight integers (in range already: truncating is
 * saturating): one byte shuffle, where GCC narrows a conversion lane by
 * lane.
 */
static inline v8qu_qq q_bytes8(v8si_qq v)
{
	v32qu_qq b = (v32qu_qq)v;

	return __builtin_shufflevector(b, b, 0, 4, 8, 12, 16, 20, 24, 28);
}

/*
 * Eight bytes at @p, each xor @flip, as integers: 0x80 and less 128
 * sign-extends i8. GCC 12 widens a vector loaded from memory a lane at a
 * time (eight byte loads and inserts) but one in a register in one
 * instruction (vpmovzxbd); clang does both in one.
 */
static inline v8si_qq q_widen8(const void *p, __u8 flip)
{
	v8qu_qq b = *(const v8qu_qqu *)p ^ flip;

	ENG_OPAQUE(b);
	return __builtin_convertvector(b, v8si_qq);
}

/* Eight u8 (@dtype VNPU_DTYPE_U8) or i8 values at @p as integers. */
static inline v8si_qq q_load8(const void *p, __u32 dtype)
{
	if (dtype == VNPU_DTYPE_U8)
		return q_widen8(p, 0);
	return q_widen8(p, 0x80) - 128;
}

/*
 * QLINEAR_ADD: ONNX Runtime's QLinearAdd as its AVX2 kernel computes it
 * (the kernel it runs on x86 CPUs with AVX2), in f32 with fused
 * multiply-adds:
 *   ra = sa / sy, rb = sb / sy, f = zy - fma(ra, za, rb * zb)
 *   y = saturate(cvt(fma(a, ra, fma(b, rb, f))))
 * where cvt rounds half to even and gives INT_MIN for NaN and values
 * outside the 32-bit range (cvtps2dq's "integer indefinite"), which
 * saturates to the low bound. The baseline build's software fma gives
 * the same bits.
 */
#ifdef ENG_FMA
#define Q_FMA VFMA
#else
#define Q_FMA vm_fma8
#endif

static v8si_qq qadd8(const struct eng_qadd_arg *q, v8si_qq a, v8si_qq b)
{
	v8sf_qq t = Q_FMA(__builtin_convertvector(b, v8sf_qq), (v8sf_qq){} + q->rb,
			  (v8sf_qq){} + q->f);
	v8si_qq in;

	t = Q_FMA(__builtin_convertvector(a, v8sf_qq), (v8sf_qq){} + q->ra, t);
	in = (t >= -2147483648.0f) & (t < 2147483648.0f);
	t = (v8sf_qq)(((v8si_qq)t & in) | ((v8si_qq)((v8sf_qq){} + q->lo) & ~in));
	return q_round8(t, q->lo, q->hi, 0);
}

/* Eight 8-bit elements @st bytes apart (at most @n of them) as integers. */
static inline v8si_qq qadd_load(const char *p, __s64 st, __u64 n,
				__u32 dtype)
{
	v8si_qq v = {};
	__u64 i;

	if (st == 1 && n >= 8)
		return q_load8(p, dtype);
	for (i = 0; i < n && i < 8; i++)
		v[i] = dtype == VNPU_DTYPE_U8 ? ((const __u8 *)p)[(__s64)i * st] :
		       ((const __s8 *)p)[(__s64)i * st];
	return v;
}

#ifdef ENG_FMA
typedef short v16hi_qq __attribute__((vector_size(32)));
typedef unsigned char v32qu_qqu __attribute__((vector_size(32), aligned(1), may_alias));

/*
 * Four vectors of integers in [-128, 255] as their 32 low bytes at @y:
 * two packs to 16 bits (exact), the low bytes of those packed (vpackuswb
 * of the bytes masked) and the 8-byte runs put in order (vpermd).
 */
static inline void q_bytes32(const v8si_qq *v, __u8 *y)
{
	const v16hi_qq lsb = (v16hi_qq){} + 0xff;
	const v8si_qq order = { 0, 4, 1, 5, 2, 6, 3, 7 };
	v16hi_qq s01 = __builtin_ia32_packssdw256(v[0], v[1]) & lsb;
	v16hi_qq s23 = __builtin_ia32_packssdw256(v[2], v[3]) & lsb;
	v8si_qq b = (v8si_qq)__builtin_ia32_packuswb256(s01, s23);

	*(v32qu_qqu *)y = (v32qu_qq)__builtin_ia32_permvarsi256(b, order);
}

/*
 * Whether every qadd8() of the layer @q is finite and inside 32 bits
 * (|a|, |b| <= 256 as 8-bit values): then its range check and NaN mask
 * change nothing and qadd_fast() gives its bits.
 */
static inline int qadd_bounded(const struct eng_qadd_arg *q)
{
	float ra = q->ra < 0 ? -q->ra : q->ra, rb = q->rb < 0 ? -q->rb : q->rb;
	float f = q->f < 0 ? -q->f : q->f;

	/* NaN compares false: not bounded. */
	return ra < 1e6f && rb < 1e6f && f < 1e9f;
}
#endif

/*
 * The outputs @v (of Y's dtype) of a tile row's positions to @n (at most
 * 8 are read) added to R's at @r (%VNPU_LAYER_F_RESIDUAL): qadd8().
 */
static v8si_qq qres8(const struct eng_qout *o, v8si_qq v, const __u8 *r,
		     __u64 n)
{
	const struct eng_qadd_arg *q = o->res;
	v8si_qq rv = qadd_load((const char *)r, 1, n, q->dtype);

	return q->first ? qadd8(q, rv, v) : qadd8(q, v, rv);
}

#ifdef ENG_FMA
/*
 * qtile_out() of a whole row (ENG_QNR positions) of row @r whose
 * multiplier is finite (no NaN to make 0): q_round8()'s steps, the fused
 * add (qres8(); qadd_fast()'s steps when @bounded, its parameters
 * qadd_bounded()), and the four vectors' integers as bytes (q_bytes32()).
 */
static inline void qout_row(const struct eng_qout *o, __u32 r,
			    const __s32 *acc, __u8 *y, int bounded)
{
	v8sf_qq lo = (v8sf_qq){} + o->lo, hi = (v8sf_qq){} + o->hi;
	v8si_qq v[4];
	__u32 i;

	for (i = 0; i < 4; i++) {
		v8si_qq a = (v8si_qq)(*(const v8su_qu *)(acc + 8 * i) + (__u32)o->fix[r]);
		v8sf_qq f;

		if (o->xsum)
			a = (v8si_qq)((v8su_qq)a - (__u32)o->wz[r] *
				      *(const v8su_qu *)(o->xsum + 8 * i));
		f = __builtin_convertvector(a, v8sf_qq) * o->mult[r];
		f = __builtin_ia32_minps256(__builtin_ia32_maxps256(f, lo), hi);
		v[i] = __builtin_ia32_cvtps2dq256(f) + o->yz;
	}
	if (o->r && bounded) {
		const struct eng_qadd_arg *q = o->res;
		v8sf_qq ra = (v8sf_qq){} + q->ra, rb = (v8sf_qq){} + q->rb;
		v8sf_qq qf = (v8sf_qq){} + q->f, qlo = (v8sf_qq){} + q->lo;
		v8sf_qq qhi = (v8sf_qq){} + q->hi;
		const __u8 *rr = o->r + (__s64)r * o->rs;

		for (i = 0; i < 4; i++) {
			v8si_qq rv = q_load8(rr + 8 * i, q->dtype);
			v8sf_qq fa = __builtin_convertvector(q->first ? rv : v[i], v8sf_qq);
			v8sf_qq fb = __builtin_convertvector(q->first ? v[i] : rv, v8sf_qq);
			v8sf_qq t = VFMA(fa, ra, VFMA(fb, rb, qf));

			t = __builtin_ia32_minps256(__builtin_ia32_maxps256(t, qlo), qhi);
			v[i] = __builtin_ia32_cvtps2dq256(t);
		}
	} else if (o->r) {
		for (i = 0; i < 4; i++)
			v[i] = qres8(o, v[i], o->r + (__s64)r * o->rs + 8 * i, 8);
	}
	q_bytes32(v, y);
}
#endif

/*
 * struct eng_qout's arithmetic over the sums at t->acc, eight at a time
 * with q_round8(): the bits of the VNNI tile's own stores.
 */
static inline void qtile_out(const struct eng_qtile *t)
{
	const struct eng_qout *o = t->out;
	__u32 r, i, e;
#ifdef ENG_FMA
	int bounded = o->r && qadd_bounded(o->res);
#endif

	for (r = 0; r < o->rows; r++) {
		const __s32 *acc = t->acc + r * ENG_QNR;
		__u8 *y = o->y + (__s64)r * o->ys;

#ifdef ENG_FMA
		if (o->n == ENG_QNR && o->mult[r] - o->mult[r] == 0) {
			qout_row(o, r, acc, y, bounded);
			continue;
		}
#endif
		for (i = 0; i < o->n; i += 8) {
			v8si_qq a = *(const v8si_qu *)(acc + i), v;

			a = (v8si_qq)((v8su_qq)a + (__u32)o->fix[r]);
			if (o->xsum)
				a = (v8si_qq)((v8su_qq)a - (__u32)o->wz[r] *
					      *(const v8su_qu *)(o->xsum + i));
			v = q_round8(__builtin_convertvector(a, v8sf_qq) * o->mult[r],
				     o->lo, o->hi, o->yz);
			if (o->r)
				v = qres8(o, v, o->r + (__s64)r * o->rs + i, o->n - i);
			if (i + 8 <= o->n) {
				*(v8qu_qu *)(y + i) = q_bytes8(v);
				continue;
			}
			for (e = 0; e < o->n - i; e++)
				y[i + e] = (__u8)v[e];
		}
	}
}

#endif /* VNPU_ENG_QOUT_H */

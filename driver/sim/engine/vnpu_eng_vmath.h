/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The transcendental activations in float, whole vectors at a time: exp,
 * log, erf, tanh, the logistic function and the functions made of them
 * (SiLU, GELU and its tanh form). Each lane runs the same operations in
 * the same order, so a lane's bits depend on its input only: the AVX2
 * build (8 lanes), the AVX-512 one (16 lanes), the baseline one (whose fused
 * multiply-add is exact in software) and a tail padded into a whole
 * vector agree bit for bit.
 *
 * Included by the objects built with hardware float, after defining
 * VM_F (the float vector type), VM_I (the int vector of as many lanes),
 * VM_FMA(a, b, c) (a * b + c rounded once) and VM(name) (the names of
 * the functions for this width). Nothing here keeps state. exp() alone
 * also keeps its accuracy with a VM_FMA that rounds twice.
 *
 * Accuracy against libm in double, in ulps of the float result (a
 * subnormal's ulp is 2^-149): log within 1, erf and tanh 2, the
 * logistic function 3, SiLU 4, GELU 6, GELU's tanh form 3 (1 + |z|),
 * z = 2 sqrt(2 / pi) (x + 0.044715 x^3), as z in float carries a relative
 * error of some 2^-24 into exp(z). engine-test's vmath part checks these
 * over a sweep of all floats, tails, zeros, subnormals, infinities and
 * NaNs included.
 */

/* Lanes where @m is all ones from @a, the others from @b. */
static inline VM_F VM(sel)(VM_I m, VM_F a, VM_F b)
{
	return (VM_F)((m & (VM_I)a) | (~m & (VM_I)b));
}

static inline VM_F VM(splat)(float c)
{
	return (VM_F){} + c;
}

/*
 * Whether every lane of mask @m is set: VM_ALL(m) where the includer has
 * a one-instruction test for its width, else lane by lane.
 */
static inline int VM(all)(VM_I m)
{
#ifdef VM_ALL
	return VM_ALL(m);
#else
	unsigned int i;

	for (i = 0; i < sizeof(VM_I) / sizeof(m[0]); i++)
		if (!m[i])
			return 0;
	return 1;
#endif
}

/*
 * Whether every lane of @x is below @c (not where NaN): VM_ALL_LT() where
 * the includer has a compare into a mask.
 */
static inline int VM(all_lt)(VM_F x, float c)
{
#ifdef VM_ALL_LT
	return VM_ALL_LT(x, c);
#else
	return VM(all)(x < c);
#endif
}

/* |x| and x's sign bit. */
static inline VM_F VM(abs)(VM_F x, VM_I *sign)
{
	*sign = (VM_I)x & ~0x7fffffff;
	return (VM_F)((VM_I)x & 0x7fffffff);
}

/* 2^n in two steps: n in [-252, 254] keeps both factors normal. */
#define VM_LN2_HI	0.693359375f	/* 9 bits: n * VM_LN2_HI is exact */
#define VM_LN2_LO	-2.12194440e-4f
#define VM_LOG2E	1.44269504f
#define VM_RINT		12582912.0f	/* 1.5 * 2^23 */
/* Below this |z|, exp(-|z|) is 2^n p with n >= -124: normal (logistic()). */
#define VM_LOGISTIC_NORMAL	85.0f

/*
 * @m * exp(@r) * 2^@n for |@r| <= ln 2 / 2 (a little more is fine):
 * Taylor to degree 7 (truncation below 1e-8, relative), then the power of
 * two in two factors, @m between them, so that results down to the
 * subnormals round once more at most and no finite @m overflows where
 * n <= 0.
 */
static inline VM_F VM(exp_poly)(VM_F r)
{
	VM_F p = VM(splat)(1.0f / 5040);

	p = VM_FMA(p, r, VM(splat)(1.0f / 720));
	p = VM_FMA(p, r, VM(splat)(1.0f / 120));
	p = VM_FMA(p, r, VM(splat)(1.0f / 24));
	p = VM_FMA(p, r, VM(splat)(1.0f / 6));
	p = VM_FMA(p, r, VM(splat)(0.5f));
	p = VM_FMA(p, r, VM(splat)(1.0f));
	return VM_FMA(p, r, VM(splat)(1.0f));
}

static inline VM_F VM(exp_kern)(VM_F r, VM_F n, VM_F m)
{
	VM_I ni = __builtin_convertvector(n, VM_I), h = ni >> 1;

	return VM(exp_poly)(r) * (VM_F)((h + 127) << 23) * m *
	       (VM_F)((ni - h + 127) << 23);
}

/*
 * exp_kern() of two vectors, each step of exp_poly() on one and then the
 * other: two chains of dependent operations interleaved, where one at a
 * time leaves the FP pipes waiting on its latency. The same operations
 * on each lane, so the same bits.
 */
static inline void VM(exp_kern2)(VM_F *r0, VM_F n0, VM_F *r1, VM_F n1,
				 VM_F m)
{
	VM_I i0 = __builtin_convertvector(n0, VM_I), h0 = i0 >> 1;
	VM_I i1 = __builtin_convertvector(n1, VM_I), h1 = i1 >> 1;
	VM_F p0 = VM(splat)(1.0f / 5040), p1 = p0;

	p0 = VM_FMA(p0, *r0, VM(splat)(1.0f / 720));
	p1 = VM_FMA(p1, *r1, VM(splat)(1.0f / 720));
	p0 = VM_FMA(p0, *r0, VM(splat)(1.0f / 120));
	p1 = VM_FMA(p1, *r1, VM(splat)(1.0f / 120));
	p0 = VM_FMA(p0, *r0, VM(splat)(1.0f / 24));
	p1 = VM_FMA(p1, *r1, VM(splat)(1.0f / 24));
	p0 = VM_FMA(p0, *r0, VM(splat)(1.0f / 6));
	p1 = VM_FMA(p1, *r1, VM(splat)(1.0f / 6));
	p0 = VM_FMA(p0, *r0, VM(splat)(0.5f));
	p1 = VM_FMA(p1, *r1, VM(splat)(0.5f));
	p0 = VM_FMA(p0, *r0, VM(splat)(1.0f));
	p1 = VM_FMA(p1, *r1, VM(splat)(1.0f));
	p0 = VM_FMA(p0, *r0, VM(splat)(1.0f));
	p1 = VM_FMA(p1, *r1, VM(splat)(1.0f));
	*r0 = p0 * (VM_F)((h0 + 127) << 23) * m * (VM_F)((i0 - h0 + 127) << 23);
	*r1 = p1 * (VM_F)((h1 + 127) << 23) * m * (VM_F)((i1 - h1 + 127) << 23);
}

/* The nearest integer to @z / ln 2. */
static inline VM_F VM(exp_n)(VM_F z)
{
	return VM_FMA(z, VM(splat)(VM_LOG2E), VM(splat)(VM_RINT)) - VM_RINT;
}

/* exp(x) = exp(r) 2^n: r, and n in @n; x clamped to [-110, 89]. */
static inline VM_F VM(exp_reduce)(VM_F x, VM_F *n)
{
	VM_F r;

	x = VM(sel)(x < -110.0f, VM(splat)(-110.0f), x);
	x = VM(sel)(x > 89.0f, VM(splat)(89.0f), x);
	*n = VM(exp_n)(x);
	r = VM_FMA(*n, VM(splat)(-VM_LN2_HI), x);
	return VM_FMA(*n, VM(splat)(-VM_LN2_LO), r);
}

/* exp(x); 0 below -104, infinity above 88.8, NaN kept. */
static inline VM_F VM(exp)(VM_F x)
{
	VM_F n, r = VM(exp_reduce)(x, &n);

	return VM(exp_kern)(r, n, VM(splat)(1.0f));
}

/*
 * erf(a) / a - 1.12837922 for a * a = @s in [0, 0.81]: a least-squares
 * fit, error below 4e-10.
 */
static inline VM_F VM(erf_small)(VM_F s)
{
	VM_F p = VM(splat)(8.507224993e-05f);

	p = VM_FMA(p, s, VM(splat)(-8.174079121e-04f));
	p = VM_FMA(p, s, VM(splat)(5.203702953e-03f));
	p = VM_FMA(p, s, VM(splat)(-2.686043642e-02f));
	p = VM_FMA(p, s, VM(splat)(1.128371358e-01f));
	p = VM_FMA(p, s, VM(splat)(-3.761263490e-01f));
	return VM_FMA(p, s, VM(splat)(-5.893503285e-08f));
}

#define VM_ERF_SPLIT	0.9f	/* erf_small() below, erfc() from here */
#define VM_2_SQRTPI	1.12837922f

/* erf(@a) for 0 <= @a < VM_ERF_SPLIT, within an ulp. */
static inline VM_F VM(erf_near0)(VM_F a)
{
	return VM_FMA(a, VM(splat)(VM_2_SQRTPI), a * VM(erf_small)(a * a));
}

/*
 * erfc(a) for a >= VM_ERF_SPLIT, as t exp(-a^2 + P(t)) with t = 2 / (2 +
 * a) and P a least-squares fit over a in [0.9, 10] (error below 6e-9).
 * The caller gives a^2 as @hi + @lo exactly (square()) and @hi goes into
 * exp's reduction whole, so the large exponent costs no accuracy. 0 from
 * a = 10.1 on, NaN kept.
 */
static inline VM_F VM(erfc_sq)(VM_F a, VM_F hi, VM_F lo)
{
	VM_I big = a > 10.5f;
	VM_F t, p, n, r;

	a = VM(sel)(big, VM(splat)(10.5f), a);
	hi = VM(sel)(big, VM(splat)(110.25f), hi);
	lo = VM(sel)(big, VM(splat)(0.0f), lo);
	t = 2.0f / (2.0f + a);
	p = VM(splat)(-2.189291120e-01f);
	p = VM_FMA(p, t, VM(splat)(5.751507878e-01f));
	p = VM_FMA(p, t, VM(splat)(-3.550804555e-01f));
	p = VM_FMA(p, t, VM(splat)(-1.383128017e-01f));
	p = VM_FMA(p, t, VM(splat)(-3.940113261e-02f));
	p = VM_FMA(p, t, VM(splat)(6.207691133e-02f));
	p = VM_FMA(p, t, VM(splat)(3.794797361e-01f));
	p = VM_FMA(p, t, VM(splat)(9.995260239e-01f));
	p = VM_FMA(p, t, VM(splat)(-1.265491843e+00f));
	n = VM(exp_n)(p - hi);
	r = VM_FMA(n, VM(splat)(-VM_LN2_HI), -hi);
	r = VM_FMA(n, VM(splat)(-VM_LN2_LO), r);
	return VM(exp_kern)(r + (p - lo), n, t);
}

/* @x * @x as hi + lo, exactly. */
static inline VM_F VM(square)(VM_F x, VM_F *lo)
{
	VM_F hi = x * x;
	*lo = VM_FMA(x, x, -hi);
	return hi;
}

static inline VM_F VM(erf)(VM_F x)
{
	VM_I sign, near0;
	VM_F a = VM(abs)(x, &sign), lo, hi = VM(square)(a, &lo), y;

	near0 = a < VM_ERF_SPLIT;
	y = VM(sel)(near0, VM(erf_near0)(a), 1.0f - VM(erfc_sq)(a, hi, lo));
	/*
	 * A NaN x as it is: which NaN the arithmetic gives depends on the
	 * operand order the compiler picks, which differs between builds.
	 */
	return VM(sel)(x != x, x, (VM_F)((VM_I)y | sign));
}

/*
 * x / 2 * (1 + erf(u)), u = x / sqrt 2, and 1 + erf(u) as erfc(-u) for u
 * < 0; u^2 is x^2 / 2, whose halving is exact.
 */
static inline VM_F VM(gelu)(VM_F x)
{
	VM_I sign, near0, neg;
	VM_F u = x * 0.707106769f, a = VM(abs)(u, &sign), e, s, w, lo, hi;

	neg = u < 0.0f;
	s = VM(erf_near0)(a);
	w = VM(sel)(neg, 1.0f - s, 1.0f + s);
	/*
	 * Every lane below the split (most vectors of BERT's activations,
	 * none of them NaN): erfc_sq() is not needed, the same bits.
	 */
	if (VM(all_lt)(a, VM_ERF_SPLIT))
		return (x * 0.5f) * w;
	near0 = a < VM_ERF_SPLIT;
	hi = VM(square)(x, &lo);
	e = VM(erfc_sq)(a, hi * 0.5f, lo * 0.5f);
	w = VM(sel)(near0, w, VM(sel)(neg, e, 2.0f - e));
	/*
	 * A NaN lane's w is NaN too: the product of two NaNs is whichever
	 * operand the compiler put first, which differs between builds.
	 * w = 1 there leaves x's own NaN on every path.
	 */
	w = VM(sel)(x == x, w, VM(splat)(1.0f));
	return (x * 0.5f) * w;
}

/* (tanh(a) - a) / a^3 for a * a = @s in [0, 0.390625]: error below 5e-8. */
static inline VM_F VM(tanh_small)(VM_F s)
{
	VM_F p = VM(splat)(-6.096077617e-03f);

	p = VM_FMA(p, s, VM(splat)(2.099583670e-02f));
	p = VM_FMA(p, s, VM(splat)(-5.385020748e-02f));
	p = VM_FMA(p, s, VM(splat)(1.333275735e-01f));
	return VM_FMA(p, s, VM(splat)(-3.333332837e-01f));
}

#define VM_TANH_SPLIT	0.625f	/* tanh_small() below, exp() from here */

static inline VM_F VM(tanh)(VM_F x)
{
	VM_I sign;
	VM_F a = VM(abs)(x, &sign), s = a * a, y1, y2, e;

	y1 = VM_FMA(a * s, VM(tanh_small)(s), a);
	e = VM(exp)(2.0f * VM(sel)(a > 9.5f, VM(splat)(9.5f), a));
	y2 = 1.0f - 2.0f / (e + 1.0f);
	return (VM_F)((VM_I)VM(sel)(a < VM_TANH_SPLIT, y1, y2) | sign);
}

#ifndef VM_EXP2_16
#define VM_EXP2_16
/*
 * 2^(j / 16) for j in [0, 16) as hi + lo: the floats nearest 2^(j / 16)
 * (within 0.8 * 2^-24, relative), then those nearest what they miss by.
 */
static const float vm_exp2_16[32] __attribute__((__aligned__(64))) = {
	0x1p+0f, 0x1.0b5586p+0f, 0x1.172b84p+0f, 0x1.2387a6p+0f,
	0x1.306fe0p+0f, 0x1.3dea64p+0f, 0x1.4bfdaep+0f, 0x1.5ab07ep+0f,
	0x1.6a09e6p+0f, 0x1.7a1148p+0f, 0x1.8ace54p+0f, 0x1.9c4918p+0f,
	0x1.ae89fap+0f, 0x1.c199bep+0f, 0x1.d5818ep+0f, 0x1.ea4afap+0f,
	0.0f, 0x1.9f3122p-25f, -0x1.c15742p-27f, 0x1.ceac48p-25f,
	0x1.4636e2p-25f, 0x1.824684p-25f, -0x1.593abcp-25f, -0x1.5bd5ecp-27f,
	0x1.9fcef4p-26f, -0x1.829fd0p-25f, 0x1.15506ep-27f, 0x1.51f848p-27f,
	-0x1.a94b14p-26f, -0x1.3d56b2p-27f, -0x1.822dbcp-27f, 0x1.52486cp-27f,
};
#endif

/*
 * Lane i of the 16 floats at @tab (64-byte aligned) by k[i] % 16:
 * VM_TAB16() where the includer has one instruction for it (vpermps on 16
 * lanes), else two and a blend on 8 (a lane at a time for clang).
 */
static inline VM_F VM(tab16)(const float *tab, VM_I k)
{
#ifdef VM_TAB16
	return VM_TAB16(tab, k);
#elif defined(__clang__)
	VM_F r;
	__u64 i;

	for (i = 0; i < sizeof(VM_F) / sizeof(float); i++)
		r[i] = tab[k[i] & 15];
	return r;
#else
	typedef VM_F vt __attribute__((aligned(4), may_alias));
	const __u64 lanes = sizeof(VM_F) / sizeof(float);

	return __builtin_shuffle(*(const vt *)tab,
				 *(const vt *)(tab + 16 - lanes), k & 15);
#endif
}

/* 1.5 * 2^23 + 127 * 16: t's bits hold n + 2032 (logistic_normal()). */
#define VM_RINT16	12584944.0f

/*
 * @m / (1 + exp(-z)) where |z| < VM_LOGISTIC_NORMAL: exp(-z) = 2^(n / 16)
 * exp(-r), r = z + n ln2 / 16 in about [-ln2 / 32, ln2 / 32] (Cody-Waite
 * in two steps), 2^(j / 16) for j = n % 16 from a table as hi + lo, and
 * e = hi + (hi q + lo), q = expm1(-r) = -r + r^2 (c2 - c3 r) (fitted,
 * error below 1.7e-9), rounds once (within 0.6 2^-24 of exp(-z) / 2^N).
 * Then 1 + e 2^N, N = floor(n / 16) in [-123, 123], in one fused
 * multiply-add: N + 127 is t's bits from bit 4 up, shifted into a
 * float's exponent as they are. The quotient rounds once more: within 2.4
 * ulps of the logistic function and of SiLU (@m = z). Its result in a
 * lane depends on that lane alone.
 */
static inline VM_F VM(logistic_normal)(VM_F z, VM_F m)
{
	VM_F t = VM_FMA(z, VM(splat)(-16 * VM_LOG2E), VM(splat)(VM_RINT16));
	VM_F n = t - VM_RINT16, r, q, hi, e;
	VM_I k = (VM_I)t;

	r = VM_FMA(n, VM(splat)(VM_LN2_HI / 16), z);
	r = VM_FMA(n, VM(splat)(VM_LN2_LO / 16), r);
	q = VM_FMA(r, VM(splat)(-0x1.555740p-3f), VM(splat)(0x1.00022ap-1f));
	q = VM_FMA(q, r * r, -r);
	hi = VM(tab16)(vm_exp2_16, k);
	e = hi + VM_FMA(hi, q, VM(tab16)(vm_exp2_16 + 16, k));
	/* The sign and exponent bits: 0xff800000. */
	e = VM_FMA(e, (VM_F)((k << 19) & ((VM_I){} - 0x800000)),
		   VM(splat)(1.0f));
	return m / e;
}

/*
 * @m / (1 + exp(-z)): logistic_normal() where |z| < VM_LOGISTIC_NORMAL
 * (every lane in one vector of the models' activations), else from e =
 * exp(-|z|) <= 1 so that nothing overflows: m e / (1 + e) below 0, with
 * m e scaled by 2^n last so that it loses nothing where e alone would be
 * subnormal. @m is 1 for the logistic function, x for SiLU.
 */
static inline VM_F VM(logistic)(VM_F z, VM_F m)
{
	VM_I sign, normal;
	VM_F a = VM(abs)(z, &sign), n, r, e, me;

	if (VM(all_lt)(a, VM_LOGISTIC_NORMAL))
		return VM(logistic_normal)(z, m);
	normal = a < VM_LOGISTIC_NORMAL;
	r = VM(exp_reduce)(-a, &n);
	e = VM(exp_kern)(r, n, VM(splat)(1.0f));
	/* Past exp_reduce()'s clamp, m e is 0 (or NaN for an infinite m). */
	me = VM(sel)(a > 110.0f, m * 0.0f, VM(exp_kern)(r, n, m));
	me = VM(sel)(z < 0.0f, me, m) / (1.0f + e);
	/* The normal lanes as logistic_normal() gives them alone. */
	z = VM(sel)(normal, z, VM(splat)(0.0f));
	return VM(sel)(normal, VM(logistic_normal)(z, m), me);
}

static inline VM_F VM(sigmoid)(VM_F x)
{
	return VM(logistic)(x, VM(splat)(1.0f));
}

static inline VM_F VM(silu)(VM_F x)
{
	return VM(logistic)(x, x);
}

/*
 * GELU's tanh form, x / 2 * (1 + tanh(u)) with u = sqrt(2 / pi) (x +
 * 0.044715 x^3): x times the logistic function of 2u.
 */
static inline VM_F VM(gelu_tanh)(VM_F x)
{
	VM_F z = VM_FMA(x * x * x, VM(splat)(0.044715f), x) * 1.59576912f;

	return VM(logistic)(z, x);
}

/*
 * log(x) = e ln 2 + log(1 + f) for x = 2^e (1 + f), 1 + f in [sqrt(1/2),
 * sqrt(2)), and log(1 + f) = 2 atanh(s) with s = f / (2 + f), |s| < 0.172:
 * the atanh series to s^9 (truncated below 3e-9, relative), written as f
 * - f^2/2 + s (f^2/2 + R(s^2)) so that its rounding errors fall on the
 * small terms. No fused multiply-add: the baseline runs it at full speed.
 * Subnormals are scaled by 2^23 first; NaN and x < 0 give the canonical
 * NaN, zeros -infinity, infinity itself (as m_log() in double).
 */
static inline VM_F VM(log)(VM_F x)
{
	VM_I sub = x < 0x1p-126f, ix, e;
	VM_F m = VM(sel)(sub, x * 0x1p23f, x), f, s, z, r, hf, ef, y;

	ix = (VM_I)m + (0x3f800000 - 0x3f3504f3);
	e = (ix >> 23) - 127 - (sub & 23);
	f = (VM_F)((ix & 0x007fffff) + 0x3f3504f3) - 1.0f;
	s = f / (2.0f + f);
	z = s * s;
	r = z * (2.0f / 3 + z * (2.0f / 5 + z * (2.0f / 7 + z * (2.0f / 9))));
	hf = 0.5f * f * f;
	ef = __builtin_convertvector(e, VM_F);
	r = s * (hf + r) + ef * VM_LN2_LO;
	y = ((r - hf) + f) + ef * VM_LN2_HI;
	y = VM(sel)(x == __builtin_inff(), x, y);
	y = VM(sel)(x == 0.0f, VM(splat)(-__builtin_inff()), y);
	return VM(sel)((x < 0.0f) | (x != x), (VM_F)((VM_I){} + 0x7fc00000), y);
}

/* One of the functions by its &enum vnpu_act_func (SiLU for any other). */
static inline VM_F VM(act)(__u32 func, VM_F v)
{
	switch (func) {
	case VNPU_ACT_ERF:
		return VM(erf)(v);
	case VNPU_ACT_GELU:
		return VM(gelu)(v);
	case VNPU_ACT_GELU_TANH:
		return VM(gelu_tanh)(v);
	case VNPU_ACT_TANH:
		return VM(tanh)(v);
	case VNPU_ACT_SIGMOID:
		return VM(sigmoid)(v);
	case VNPU_ACT_LOG:
		return VM(log)(v);
	default:
		return VM(silu)(v);
	}
}

#ifndef VM_MAP_RUN
/*
 * @FN on @n contiguous floats at @x into @y (which may be @x), a vector
 * at a time; the tail goes through a whole vector too, so that each
 * output's bits depend on its input only.
 */
#define VM_MAP_RUN(FN, x, y, n) do {					\
	const __u64 lanes_ = sizeof(VM_F) / sizeof(float);		\
	VM_F t_ = {};							\
	__u64 i_, j_;							\
									\
	for (i_ = 0; i_ + lanes_ <= (n); i_ += lanes_)			\
		*(vu *)((y) + i_) = FN(*(const vu *)((x) + i_));	\
	if (i_ == (n))							\
		break;							\
	for (j_ = 0; i_ + j_ < (n); j_++)				\
		t_[j_] = (x)[i_ + j_];					\
	t_ = FN(t_);							\
	for (j_ = 0; i_ + j_ < (n); j_++)				\
		(y)[i_ + j_] = t_[j_];					\
} while (0)
#endif

/*
 * The offset of the vector after the one at @i in runs of @whole floats,
 * @rs apart: the next run's first (0, with @xr and @yr moved on to it)
 * after a run's last.
 */
static inline __u64 VM(run_step)(__u64 i, __u64 whole, const float **xr,
				 float **yr, __s64 rs)
{
	i += sizeof(VM_F) / sizeof(float);
	if (i < whole)
		return i;
	*xr += rs;
	*yr += rs;
	return 0;
}

/*
 * VM(rows_silu)()...: one function on @rows runs of @n floats, at @x and
 * @y (which may be @x) @rs floats apart; each its own frame, not inlined.
 * The whole vectors of all the runs go through one loop (a tile's six
 * runs of 16 are twelve vectors: its constants set up once, not per run),
 * then each run's tail.
 */
#define VM_ROWS_FN(NAME)						\
static __attribute__((__noinline__, __unused__)) void			\
VM(rows_##NAME)(const float *x, float *y, __u64 n, __u64 rows, __s64 rs) \
{									\
	typedef VM_F vu __attribute__((aligned(4), may_alias));	\
	const __u64 lanes = sizeof(VM_F) / sizeof(float);		\
	const __u64 whole = n / lanes * lanes;				\
	const float *xr = x;						\
	float *yr = y;							\
	__u64 i = 0, k;							\
									\
	for (k = rows * (whole / lanes); k; k--) {			\
		*(vu *)(yr + i) = VM(NAME)(*(const vu *)(xr + i));	\
		i = VM(run_step)(i, whole, &xr, &yr, rs);		\
	}								\
	for (; whole < n && rows; rows--, x += rs, y += rs)		\
		VM_MAP_RUN(VM(NAME), x + whole, y + whole, n - whole);	\
}

VM_ROWS_FN(erf)
VM_ROWS_FN(gelu)
VM_ROWS_FN(gelu_tanh)
VM_ROWS_FN(tanh)
VM_ROWS_FN(log)
#undef VM_ROWS_FN

/*
 * SiLU where @silu, else the logistic function, of the four vectors at @v
 * in place: logistic_normal() on all four where every lane allows it
 * (one test; the four in flight together), else logistic() on each. The
 * same bits as logistic() on each.
 */
static inline void VM(logistic4)(VM_F *v, int silu)
{
	VM_I s;
	int i;

	if (VM(all_lt)(VM(abs)(v[0], &s), VM_LOGISTIC_NORMAL) &
	    VM(all_lt)(VM(abs)(v[1], &s), VM_LOGISTIC_NORMAL) &
	    VM(all_lt)(VM(abs)(v[2], &s), VM_LOGISTIC_NORMAL) &
	    VM(all_lt)(VM(abs)(v[3], &s), VM_LOGISTIC_NORMAL)) {
		for (i = 0; i < 4; i++)
			v[i] = VM(logistic_normal)(v[i], silu ? v[i] :
						   VM(splat)(1.0f));
		return;
	}
	for (i = 0; i < 4; i++)
		v[i] = VM(logistic)(v[i], silu ? v[i] : VM(splat)(1.0f));
}

/*
 * VM(rows_silu)() and VM(rows_sigmoid)(): as VM_ROWS_FN()'s, the whole
 * vectors four at a time through logistic4() (a tile's twelve rows of 32
 * are six such steps), then those left and the tails one at a time.
 */
#define VM_ROWS4_FN(NAME, SILU)						\
static __attribute__((__noinline__, __unused__)) void			\
VM(rows_##NAME)(const float *x, float *y, __u64 n, __u64 rows, __s64 rs) \
{									\
	typedef VM_F vu __attribute__((aligned(4), may_alias));	\
	const __u64 lanes = sizeof(VM_F) / sizeof(float);		\
	const __u64 whole = n / lanes * lanes;				\
	const float *xr = x, *xp[4];					\
	float *yr = y, *yp[4];						\
	__u64 i = 0, k, g, j;						\
	VM_F v[4];							\
									\
	for (k = rows * (whole / lanes); k; k -= g) {			\
		for (g = 0; g < 4 && g < k; g++) {			\
			xp[g] = xr + i;					\
			yp[g] = yr + i;					\
			i = VM(run_step)(i, whole, &xr, &yr, rs);	\
		}							\
		if (g < 4) {						\
			for (j = 0; j < g; j++)				\
				*(vu *)yp[j] = VM(NAME)(*(const vu *)xp[j]); \
			break;						\
		}							\
		for (j = 0; j < 4; j++)					\
			v[j] = *(const vu *)xp[j];			\
		VM(logistic4)(v, SILU);					\
		for (j = 0; j < 4; j++)					\
			*(vu *)yp[j] = v[j];				\
	}								\
	for (; whole < n && rows; rows--, x += rs, y += rs)		\
		VM_MAP_RUN(VM(NAME), x + whole, y + whole, n - whole);	\
}

VM_ROWS4_FN(sigmoid, 0)
VM_ROWS4_FN(silu, 1)
#undef VM_ROWS4_FN

/* VM(act)() on those runs: the switch once, a loop per function. */
static inline void VM(act_map_rows)(__u32 func, const float *x, float *y,
				    __u64 n, __u64 rows, __s64 rs)
{
	switch (func) {
	case VNPU_ACT_ERF:
		VM(rows_erf)(x, y, n, rows, rs);
		break;
	case VNPU_ACT_GELU:
		VM(rows_gelu)(x, y, n, rows, rs);
		break;
	case VNPU_ACT_GELU_TANH:
		VM(rows_gelu_tanh)(x, y, n, rows, rs);
		break;
	case VNPU_ACT_TANH:
		VM(rows_tanh)(x, y, n, rows, rs);
		break;
	case VNPU_ACT_SIGMOID:
		VM(rows_sigmoid)(x, y, n, rows, rs);
		break;
	case VNPU_ACT_LOG:
		VM(rows_log)(x, y, n, rows, rs);
		break;
	default:
		VM(rows_silu)(x, y, n, rows, rs);
		break;
	}
}

/*
 * VM(act)() on @n contiguous floats at @x into @y (which may be @x), the
 * switch per vector: one loop, a small frame (VM(act_map_rows)() has a
 * loop per function).
 */
static inline void VM(act_map)(__u32 func, const float *x, float *y, __u64 n)
{
	typedef VM_F vu __attribute__((aligned(4), may_alias));

#define VM_ACT_(v) VM(act)(func, v)
	VM_MAP_RUN(VM_ACT_, x, y, n);
#undef VM_ACT_
}

/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Freestanding elementary functions for the engine's float objects.
 *
 * They compute in double and are accurate to a few double ulps, so the f32
 * results the engine stores are correctly rounded or within one f32 ulp.
 * No libm: the same code runs in vnpu.ko and on the host, which is what
 * makes the NPU and the CPU device agree bit for bit. Only included by the
 * objects built with hardware float (the float kernels, vnpu_eng_kern.h).
 */
#ifndef _VNPU_ENG_MATH_H_
#define _VNPU_ENG_MATH_H_

#include <linux/types.h>

#define M_LN2_HI 6.93147180369123816490e-01
#define M_LN2_LO 1.90821492927058770002e-10
#define M_LOG2E_D 1.44269504088896338700e+00
#define M_PI_D 3.14159265358979311600e+00
#define M_PI_2_D 1.57079632679489655800e+00
#define M_2_SQRTPI_D 1.12837916709551255856e+00

union m_dbits {
	double d;
	__u64 u;
	__s64 s;
};

static inline double m_inf(void)
{
	union m_dbits v = { .u = 0x7ff0000000000000ull };

	return v.d;
}

static inline double m_nan(void)
{
	union m_dbits v = { .u = 0x7ff8000000000000ull };

	return v.d;
}

static inline int m_isnan(double x)
{
	return x != x;
}

static inline double m_fabs(double x)
{
	union m_dbits v = { .d = x };

	v.u &= ~(1ull << 63);
	return v.d;
}

static inline double m_sqrt(double x)
{
	return __builtin_sqrt(x);	/* sqrtsd: -fno-math-errno */
}

/* 2^n for integer n in [-1022, 1023], built from the bits. */
static inline double m_pow2i(__s64 n)
{
	union m_dbits v;

	v.u = (__u64)(n + 1023) << 52;
	return v.d;
}

/* Round to the nearest integer, halves away from zero, |x| < 2^62. */
static inline __s64 m_lround(double x)
{
	return (__s64)(x < 0 ? x - 0.5 : x + 0.5);
}

static inline double m_trunc(double x)
{
	if (!(m_fabs(x) < 4503599627370496.0))
		return x;	/* already integral, inf or NaN */
	return (double)(__s64)x + 0.0 * x;	/* keeps -0.0 */
}

static inline double m_floor(double x)
{
	double t = m_trunc(x);

	return t > x ? t - 1.0 : t;
}

static inline double m_ceil(double x)
{
	double t = m_trunc(x);

	return t < x ? t + 1.0 : t;
}

/*
 * Round half to even, in the current (nearest-even) rounding mode. Without
 * -ffast-math the compiler keeps (a + 2^52) - 2^52 as written.
 */
static inline double m_rint(double x)
{
	const double big = 4503599627370496.0;
	double a = m_fabs(x), r;

	if (!(a < 4503599627370496.0))
		return x;
	r = (a + big) - big;
	return x < 0 ? -r : r;
}

static inline double m_fmod(double a, double b)
{
	double q, r;

	if (m_isnan(a) || m_isnan(b) || b == 0 || m_fabs(a) == m_inf())
		return m_nan();
	if (m_fabs(b) == m_inf())
		return a;
	/*
	 * Exact long division in steps of at most 2^52, so each product
	 * and difference is exact.
	 */
	r = m_fabs(a);
	b = m_fabs(b);
	while (r >= b) {
		double s = b;

		while (s * 4503599627370496.0 <= r && s < 1e300)
			s *= 4503599627370496.0;
		q = m_trunc(r / s);
		r -= q * s;
		if (r < 0)
			r += s;
	}
	return a < 0 ? -r : r;
}

#define M_EXP_HI 709.78
#define M_EXP_LO -745.2
#define M_RINT_MAGIC 6755399441055744.0	/* 1.5 * 2^52 */

/*
 * exp(x): x = n ln2 + r, Taylor to degree 13 on |r| <= ln2/2 (error below
 * 1e-17), times 2^n in two steps so that n down to -1075 stays normal.
 * m_exp() and v_exp() run the same operations in the same order, so a lane
 * of the vector form gives the bits of the scalar one.
 */
#define M_EXP_POLY(p, r, splat) do {					\
	p = splat(1.0 / 6227020800.0);					\
	p = p * (r) + 1.0 / 479001600.0;				\
	p = p * (r) + 1.0 / 39916800.0;					\
	p = p * (r) + 1.0 / 3628800.0;					\
	p = p * (r) + 1.0 / 362880.0;					\
	p = p * (r) + 1.0 / 40320.0;					\
	p = p * (r) + 1.0 / 5040.0;					\
	p = p * (r) + 1.0 / 720.0;					\
	p = p * (r) + 1.0 / 120.0;					\
	p = p * (r) + 1.0 / 24.0;					\
	p = p * (r) + 1.0 / 6.0;					\
	p = p * (r) + 0.5;						\
	p = p * (r) + 1.0;						\
	p = p * (r) + 1.0;						\
} while (0)

#define M_SCALAR(c) (c)

static inline double m_exp(double x)
{
	double xc = x > M_EXP_HI ? M_EXP_HI : x < M_EXP_LO ? M_EXP_LO : x;
	double t = xc * M_LOG2E_D + M_RINT_MAGIC, n = t - M_RINT_MAGIC;
	double r = (xc - n * M_LN2_HI) - n * M_LN2_LO, p;
	__s64 ni, h;

	if (x != x)
		return x;
	ni = (__s64)n;
	h = ni >> 1;
	M_EXP_POLY(p, r, M_SCALAR);
	p = p * m_pow2i(h) * m_pow2i(ni - h);
	if (x > M_EXP_HI)
		return m_inf();
	return x < M_EXP_LO ? 0.0 : p;
}

typedef double v4df __attribute__((vector_size(32)));
typedef __s64 v4di __attribute__((vector_size(32)));

/* Lanes of @mask (all ones or zero) from @a, the others from @b. */
static inline v4df v_sel(v4di mask, v4df a, v4df b)
{
	return (v4df)((mask & (v4di)a) | (~mask & (v4di)b));
}

static inline v4df v_splat(double d)
{
	return (v4df){ d, d, d, d };
}

/* x = n ln2 + r as m_exp() reduces it, n in @ni, x clamped first. */
static inline v4df v_exp_reduce(v4df x, v4di *ni)
{
	v4df xc = v_sel(x > M_EXP_HI, v_splat(M_EXP_HI), x), t, n;

	xc = v_sel(xc < M_EXP_LO, v_splat(M_EXP_LO), xc);
	t = xc * M_LOG2E_D + M_RINT_MAGIC;
	n = t - M_RINT_MAGIC;
	*ni = __builtin_convertvector(n, v4di);
	return (xc - n * M_LN2_HI) - n * M_LN2_LO;
}

/* @p times 2^@ni in two steps, and exp's results where @x is out of range. */
static inline v4df v_exp_scale(v4df x, v4df p, v4di ni)
{
	v4di h = ni >> 1;

	p = p * (v4df)((h + 1023) << 52) * (v4df)((ni - h + 1023) << 52);
	p = v_sel(x < M_EXP_LO, v_splat(0.0), p);
	p = v_sel(x > M_EXP_HI, v_splat(m_inf()), p);
	return v_sel(x != x, x, p);
}

static inline v4df v_exp(v4df x)
{
	v4di ni;
	v4df r = v_exp_reduce(x, &ni), p;

	M_EXP_POLY(p, r, v_splat);
	return v_exp_scale(x, p, ni);
}

/*
 * NaN as the default NaN: where several NaNs meet in a sum, which payload
 * survives depends on the order of the operands the compiler chose, so the
 * ops whose vector and scalar forms must agree store this one.
 */
static inline double m_canon(double x)
{
	return x != x ? m_nan() : x;
}

static inline v4df v_canon(v4df x)
{
	return v_sel(x != x, v_splat(m_nan()), x);
}

/* exp(x) - 1 without cancellation near 0. */
static inline double m_expm1(double x)
{
	double p, t;
	int i;

	if (m_fabs(x) > 0.25)
		return m_exp(x) - 1.0;
	p = 0;
	t = x;
	for (i = 2; i <= 16; i++) {
		p += t;
		t = t * x / i;
	}
	return p;
}

/* log(x) */
static inline double m_log(double x)
{
	union m_dbits v = { .d = x };
	double m, s, s2, p;
	__s64 e;

	if (m_isnan(x) || x < 0)
		return m_nan();
	if (x == 0)
		return -m_inf();
	if (x == m_inf())
		return x;
	e = 0;
	if (x < 2.2250738585072014e-308) {
		v.d = x * 4503599627370496.0;
		e = -52;
	}
	e += (__s64)((v.u >> 52) & 0x7ff) - 1023;
	v.u = (v.u & 0x000fffffffffffffull) | 0x3ff0000000000000ull;
	m = v.d;
	if (m > 1.4142135623730951) {
		m *= 0.5;
		e++;
	}
	/* log(m) = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.1716 */
	s = (m - 1.0) / (m + 1.0);
	s2 = s * s;
	p = 1.0 / 25;
	p = p * s2 + 1.0 / 23;
	p = p * s2 + 1.0 / 21;
	p = p * s2 + 1.0 / 19;
	p = p * s2 + 1.0 / 17;
	p = p * s2 + 1.0 / 15;
	p = p * s2 + 1.0 / 13;
	p = p * s2 + 1.0 / 11;
	p = p * s2 + 1.0 / 9;
	p = p * s2 + 1.0 / 7;
	p = p * s2 + 1.0 / 5;
	p = p * s2 + 1.0 / 3;
	p = p * s2 + 1.0;
	return (double)e * M_LN2_HI + ((double)e * M_LN2_LO + 2.0 * s * p);
}

/* log(1 + x) without cancellation near 0. */
static inline double m_log1p(double x)
{
	double u = 1.0 + x;

	if (u == 1.0)
		return x;
	/* The classic correction: log(u) * x / (u - 1). */
	return m_log(u) * (x / (u - 1.0));
}

static inline int m_is_int(double y)
{
	return m_trunc(y) == y;
}

static inline int m_is_odd_int(double y)
{
	return m_is_int(y) && m_fabs(y) < 9007199254740992.0 &&
	       ((__s64)y & 1);
}

/* pow(x, y) with C's special cases. */
static inline double m_pow(double x, double y)
{
	double r;

	if (y == 0)
		return 1.0;
	if (x == 1.0)
		return 1.0;
	if (m_isnan(x) || m_isnan(y))
		return m_nan();
	if (x == 0) {
		if (y < 0)
			return m_is_odd_int(y) && 1 / x < 0 ? -m_inf() : m_inf();
		return m_is_odd_int(y) ? x : 0.0;
	}
	if (x == -1.0 && m_fabs(y) == m_inf())
		return 1.0;
	if (x < 0 && !m_is_int(y))
		return m_nan();
	if (m_is_int(y) && m_fabs(y) <= 64) {
		/*
		 * Exact enough by squaring, and exact for small integers, of
		 * either sign: the square of a float is its exact product.
		 */
		double b = m_fabs(x), acc = 1.0;
		__s64 n = (__s64)m_fabs(y);

		while (n) {
			if (n & 1)
				acc *= b;
			b *= b;
			n >>= 1;
		}
		r = y < 0 ? 1.0 / acc : acc;
		return x < 0 && m_is_odd_int(y) ? -r : r;
	}
	r = m_exp(y * m_log(m_fabs(x)));
	return x < 0 && m_is_odd_int(y) ? -r : r;
}

static inline double m_tanh(double x)
{
	double a = m_fabs(x), r;

	if (m_isnan(x))
		return x;
	if (a > 20)
		r = 1.0;
	else if (a < 0.5)
		r = m_expm1(2 * a) / (m_expm1(2 * a) + 2.0);
	else
		r = 1.0 - 2.0 / (m_exp(2 * a) + 1.0);
	return x < 0 ? -r : r;
}

static inline double m_sinh(double x)
{
	double a = m_fabs(x), r;

	if (a < 0.5) {
		double e = m_expm1(a);

		r = 0.5 * (e + e / (e + 1.0));
	} else {
		double e = m_exp(a);

		r = 0.5 * (e - 1.0 / e);
	}
	return x < 0 ? -r : r;
}

static inline double m_cosh(double x)
{
	double e = m_exp(m_fabs(x));

	return 0.5 * (e + 1.0 / e);
}

/* erf(x): 2/sqrt(pi) exp(-x^2) sum 2^n x^(2n+1) / (1*3*...*(2n+1)). */
static inline double m_erf(double x)
{
	double a = m_fabs(x), x2, term, sum;
	int n;

	if (m_isnan(x))
		return x;
	if (a > 6.0)
		return x < 0 ? -1.0 : 1.0;
	x2 = a * a;
	term = a;
	sum = a;
	for (n = 1; n < 200; n++) {
		term *= 2.0 * x2 / (2 * n + 1);
		sum += term;
		if (term < sum * 1e-17)
			break;
	}
	sum *= M_2_SQRTPI_D * m_exp(-x2);
	return x < 0 ? -sum : sum;
}

/*
 * sin and cos of r in [-pi/4, pi/4]: Taylor to degree 17/18 (error below
 * 1e-18).
 */
static inline double m_sin_kern(double r)
{
	double r2 = r * r, p;

	p = 1.0 / 355687428096000.0;
	p = p * r2 - 1.0 / 1307674368000.0;
	p = p * r2 + 1.0 / 6227020800.0;
	p = p * r2 - 1.0 / 39916800.0;
	p = p * r2 + 1.0 / 362880.0;
	p = p * r2 - 1.0 / 5040.0;
	p = p * r2 + 1.0 / 120.0;
	p = p * r2 - 1.0 / 6.0;
	return r + r * r2 * p;
}

static inline double m_cos_kern(double r)
{
	double r2 = r * r, q;

	q = -1.0 / 6402373705728000.0;
	q = q * r2 + 1.0 / 20922789888000.0;
	q = q * r2 - 1.0 / 87178291200.0;
	q = q * r2 + 1.0 / 479001600.0;
	q = q * r2 - 1.0 / 3628800.0;
	q = q * r2 + 1.0 / 40320.0;
	q = q * r2 - 1.0 / 720.0;
	q = q * r2 + 1.0 / 24.0;
	return 1.0 - 0.5 * r2 + r2 * r2 * q;
}

/* x = q * pi/2 + r, three-part pi/2 (exact for |x| up to about 2^26). */
static inline double m_reduce_pi2(double x, __s64 *q)
{
	const double p1 = 1.57079632673412561417e+00;
	const double p2 = 6.07710050650619224932e-11;
	const double p3 = 2.02226624879595063154e-21;
	double n = m_rint(x * 6.36619772367581382433e-01);

	*q = (__s64)n;
	return ((x - n * p1) - n * p2) - n * p3;
}

static inline double m_sin(double x)
{
	__s64 q;
	double r;

	if (m_isnan(x) || m_fabs(x) == m_inf())
		return m_nan();
	r = m_reduce_pi2(x, &q);
	switch (q & 3) {
	case 0:
		return m_sin_kern(r);
	case 1:
		return m_cos_kern(r);
	case 2:
		return -m_sin_kern(r);
	default:
		return -m_cos_kern(r);
	}
}

static inline double m_cos(double x)
{
	__s64 q;
	double r;

	if (m_isnan(x) || m_fabs(x) == m_inf())
		return m_nan();
	r = m_reduce_pi2(x, &q);
	switch (q & 3) {
	case 0:
		return m_cos_kern(r);
	case 1:
		return -m_sin_kern(r);
	case 2:
		return -m_cos_kern(r);
	default:
		return m_sin_kern(r);
	}
}

static inline double m_tan(double x)
{
	__s64 q;
	double r, s, c;

	if (m_isnan(x) || m_fabs(x) == m_inf())
		return m_nan();
	r = m_reduce_pi2(x, &q);
	s = m_sin_kern(r);
	c = m_cos_kern(r);
	return (q & 1) ? -c / s : s / c;
}

/* atan(x) for 0 <= x <= tan(pi/8) by its series. */
static inline double m_atan_kern(double t)
{
	double t2 = t * t, p = 0;
	int n;

	for (n = 24; n >= 0; n--)
		p = p * t2 + ((n & 1) ? -1.0 : 1.0) / (2 * n + 1);
	return t * p;
}

static inline double m_atan(double x)
{
	double a = m_fabs(x), r;

	if (m_isnan(x))
		return x;
	if (a > 1.0)
		r = M_PI_2_D - (a == m_inf() ? 0.0 : m_atan(1.0 / a));
	else if (a > 0.41421356237309503)
		r = 0.78539816339744830962 + m_atan_kern((a - 1.0) / (a + 1.0));
	else
		r = m_atan_kern(a);
	return x < 0 ? -r : r;
}

static inline double m_asin(double x)
{
	double a = m_fabs(x), r;

	if (m_isnan(x) || a > 1.0)
		return m_nan();
	if (a < 0.5)
		r = m_atan(a / m_sqrt((1.0 - a) * (1.0 + a)));
	else
		r = M_PI_2_D - 2.0 * m_atan(m_sqrt((1.0 - a) / (1.0 + a)));
	return x < 0 ? -r : r;
}

static inline double m_acos(double x)
{
	if (m_isnan(x) || m_fabs(x) > 1.0)
		return m_nan();
	if (x == -1.0)
		return M_PI_D;
	return 2.0 * m_atan(m_sqrt((1.0 - x) / (1.0 + x)));
}

static inline double m_asinh(double x)
{
	double a = m_fabs(x), r;

	if (a > 1e8)
		r = m_log(a) + M_LN2_HI + M_LN2_LO;
	else
		r = m_log1p(a + a * a / (1.0 + m_sqrt(1.0 + a * a)));
	return x < 0 ? -r : r;
}

static inline double m_acosh(double x)
{
	if (m_isnan(x) || x < 1.0)
		return m_nan();
	if (x > 1e8)
		return m_log(x) + M_LN2_HI + M_LN2_LO;
	return m_log1p((x - 1.0) + m_sqrt((x - 1.0) * (x + 1.0)));
}

static inline double m_atanh(double x)
{
	double a = m_fabs(x), r;

	if (m_isnan(x) || a > 1.0)
		return m_nan();
	if (a == 1.0)
		return x < 0 ? -m_inf() : m_inf();
	r = 0.5 * m_log1p(2.0 * a / (1.0 - a));
	return x < 0 ? -r : r;
}

#endif /* _VNPU_ENG_MATH_H_ */

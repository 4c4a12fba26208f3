// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The element-wise functions (enum vnpu_act_func) of the float kernels:
 * on doubles (act_d()) and 64-bit integers (act_i()) for any dtype, and
 * on f32 runs (act_f32()) for fused activations and UNARY, with the
 * fused bound (act_bound()). Built per ISA (vnpu_eng_isa.h).
 */
#include "vnpu_eng_kern.h"

/* HardSwish on @n contiguous floats at @x into @y, which may be @x. */
void hswish_f32(const float *x, float *y, __u64 n)
{
	__u64 i;

	for (i = 0; i + 8 <= n; i += 8)
		vstore(y + i, vhswish(vload(x + i)));
	for (; i < n; i++)
		y[i] = hswish(x[i]);
}

#define MAP(expr) do {							\
	for (i = 0; i < n; i++) {					\
		double v = x[i];					\
		x[i] = (expr);						\
	}								\
} while (0)

static inline double softplus_d(double v)
{
	return v > 30 ? v : m_log1p(m_exp(v));
}

static inline double gelu_tanh_d(double v)
{
	return 0.5 * v * (1.0 + m_tanh(0.7978845608028654 *
				       (v + 0.044715 * v * v * v)));
}

enum map_exp_fn { MAP_EXP, MAP_SIGMOID, MAP_SILU };

/*
 * exp, the logistic function or x times it of @n doubles, four lanes at
 * a time (a lane gives the bits of the scalar m_exp(), wherever it sits).
 */
static void map_exp(double *x, __u32 n, enum map_exp_fn fn)
{
	__u32 i, j;

	for (i = 0; i < n; i += 4) {
		v4df v = {};

		for (j = 0; j < 4 && i + j < n; j++)
			v[j] = x[i + j];
		if (fn == MAP_EXP)
			v = v_exp(v);
		else
			v = (fn == MAP_SILU ? v : v_splat(1.0)) / (1.0 + v_exp(-v));
		for (j = 0; j < 4 && i + j < n; j++)
			x[i + j] = v[j];
	}
}

/* Applies @a to @n doubles in place. */
void act_d(const struct vnpu_layer_act *a, double *x, __u32 n)
{
	double al = f32_of(a->alpha), be = f32_of(a->beta);
	__u32 i;

	switch (a->func) {
	case VNPU_ACT_IDENTITY:
		break;
	case VNPU_ACT_RELU:
		MAP(v < 0 ? 0.0 : v);
		break;
	case VNPU_ACT_LEAKY_RELU:
		MAP(v < 0 ? al * v : v);
		break;
	case VNPU_ACT_ELU:
		MAP(v < 0 ? al * m_expm1(v) : v);
		break;
	case VNPU_ACT_SELU:
		MAP(be * (v <= 0 ? al * m_expm1(v) : v));
		break;
	case VNPU_ACT_CELU:
		MAP(v > 0 ? v : al * m_expm1(v / al));
		break;
	case VNPU_ACT_CLIP:
		MAP(v < al ? al : v > be ? be : v);
		break;
	case VNPU_ACT_SIGMOID:
		map_exp(x, n, MAP_SIGMOID);
		break;
	case VNPU_ACT_SILU:
		map_exp(x, n, MAP_SILU);
		break;
	case VNPU_ACT_HARD_SIGMOID:
		MAP(al * v + be < 0 ? 0.0 : al * v + be > 1 ? 1.0 : al * v + be);
		break;
	case VNPU_ACT_HARD_SWISH:
		MAP(v / 6 + 0.5 < 0 ? 0.0 : v / 6 + 0.5 > 1 ? v : v * (v / 6 + 0.5));
		break;
	case VNPU_ACT_TANH:
		MAP(m_tanh(v));
		break;
	case VNPU_ACT_GELU:
		MAP(0.5 * v * (1.0 + m_erf(v * 0.7071067811865476)));
		break;
	case VNPU_ACT_GELU_TANH:
		MAP(gelu_tanh_d(v));
		break;
	case VNPU_ACT_ERF:
		MAP(m_erf(v));
		break;
	case VNPU_ACT_EXP:
		map_exp(x, n, MAP_EXP);
		break;
	case VNPU_ACT_LOG:
		MAP(m_log(v));
		break;
	case VNPU_ACT_SQRT:
		MAP(v < 0 ? m_nan() : m_sqrt(v));
		break;
	case VNPU_ACT_RECIPROCAL:
		MAP(1.0 / v);
		break;
	case VNPU_ACT_ABS:
		MAP(m_fabs(v));
		break;
	case VNPU_ACT_NEG:
		MAP(-v);
		break;
	case VNPU_ACT_FLOOR:
		MAP(m_floor(v));
		break;
	case VNPU_ACT_CEIL:
		MAP(m_ceil(v));
		break;
	case VNPU_ACT_ROUND:
		MAP(m_rint(v));
		break;
	case VNPU_ACT_SIGN:
		MAP(v > 0 ? 1.0 : v < 0 ? -1.0 : v);
		break;
	case VNPU_ACT_SIN:
		MAP(m_sin(v));
		break;
	case VNPU_ACT_COS:
		MAP(m_cos(v));
		break;
	case VNPU_ACT_TAN:
		MAP(m_tan(v));
		break;
	case VNPU_ACT_ASIN:
		MAP(m_asin(v));
		break;
	case VNPU_ACT_ACOS:
		MAP(m_acos(v));
		break;
	case VNPU_ACT_ATAN:
		MAP(m_atan(v));
		break;
	case VNPU_ACT_SINH:
		MAP(m_sinh(v));
		break;
	case VNPU_ACT_COSH:
		MAP(m_cosh(v));
		break;
	case VNPU_ACT_ASINH:
		MAP(m_asinh(v));
		break;
	case VNPU_ACT_ACOSH:
		MAP(m_acosh(v));
		break;
	case VNPU_ACT_ATANH:
		MAP(m_atanh(v));
		break;
	case VNPU_ACT_SOFTPLUS:
		MAP(softplus_d(v));
		break;
	case VNPU_ACT_SOFTSIGN:
		MAP(v / (1.0 + m_fabs(v)));
		break;
	case VNPU_ACT_MISH:
		MAP(v * m_tanh(softplus_d(v)));
		break;
	case VNPU_ACT_THRESHOLDED_RELU:
		MAP(v > al ? v : 0.0);
		break;
	case VNPU_ACT_SHRINK:
		MAP(v < -be ? v + al : v > be ? v - al : 0.0);
		break;
	default:
		break;
	}
}

/* Integer dtypes: the subset act_ok() lets through. */
void act_i(const struct vnpu_layer_act *a, __s64 *x, __u32 n, int uns)
{
	__s64 lo = d_to_i64(f32_of(a->alpha)), hi = d_to_i64(f32_of(a->beta));
	__u32 i;

	for (i = 0; i < n; i++) {
		__s64 v = x[i];

		switch (a->func) {
		case VNPU_ACT_RELU:
			v = !uns && v < 0 ? 0 : v;
			break;
		case VNPU_ACT_ABS:
			v = !uns && v < 0 ? (__s64)(0 - (__u64)v) : v;
			break;
		case VNPU_ACT_NEG:
			v = (__s64)(0 - (__u64)v);
			break;
		case VNPU_ACT_SIGN:
			v = uns ? v != 0 : (v > 0) - (v < 0);
			break;
		case VNPU_ACT_CLIP:
			v = v < lo ? lo : v > hi ? hi : v;
			break;
		case VNPU_ACT_NOT:
			v = !v;
			break;
		default:
			break;
		}
		x[i] = v;
	}
}

/* HardSigmoid of four floats as act_d() computes it: al * x + be clamped. */
static inline v4df hard_sigmoid4(v4df v, double al, double be)
{
	v4df h = al * v + be;

	return v_sel(h < 0, v_splat(0), v_sel(h > 1, v_splat(1), h));
}

/*
 * One of the act_vmath() functions on @n contiguous floats: by 16 lanes
 * where @avx512 (vnpu_eng_act_avx512(), the same bits; SiLU and the
 * logistic function at bf16's grade where it is ENG_ACT_BF16), else by 8.
 */
void act_vmath_f32(__u32 func, const float *x, float *y, __u64 n,
		   int avx512)
{
	if (avx512)
		vnpu_eng_act_avx512(func, x, y, n, avx512 == ENG_ACT_BF16);
	else
		vm8_act_map_rows(func, x, y, n, 1, 0);
}

/*
 * act_f32()'s functions but those its own loop takes: their own frame,
 * with the doubles act_d() takes, which that loop does not pay for.
 */
static __attribute__((__noinline__))
void act_f32_rest(const struct vnpu_layer_act *a, const float *x, float *y,
		  __u64 n, int avx512)
{
	float al = f32_of(a->alpha), be = f32_of(a->beta);
	double buf[ENG_BLOCK];
	__u64 i, j;

	switch (a->func) {
	case VNPU_ACT_THRESHOLDED_RELU:
		for (i = 0; i < n; i++)
			y[i] = x[i] > al ? x[i] : 0.0f;
		return;
	case VNPU_ACT_NEG:
		for (i = 0; i < n; i++)
			y[i] = -x[i];
		return;
	case VNPU_ACT_ABS:
		for (i = 0; i < n; i++)
			y[i] = __builtin_fabsf(x[i]);
		return;
	case VNPU_ACT_HARD_SIGMOID:
		for (i = 0; i + 4 <= n; i += 4) {
			v4df v = __builtin_convertvector(*(const v4sf_u *)(x + i),
							 v4df);

			v = hard_sigmoid4(v, al, be);
			*(v4sf_u *)(y + i) = __builtin_convertvector(v, v4sf);
		}
		x += i;
		y += i;
		n -= i;
		break;
	default:
		break;
	}
	for (i = 0; i < n; i += ENG_BLOCK) {
		__u32 m = (__u32)eng_min(ENG_BLOCK, n - i);

		for (j = 0; j < m; j++)
			buf[j] = x[i + j];
		act_d(a, buf, m);
		for (j = 0; j < m; j++)
			y[i + j] = (float)buf[j];
	}
}

/*
 * Applies @a to @n contiguous floats at @x into @y, which may be @x (fused
 * activations, unary layers); @avx512 from eng_act_avx512(). The
 * functions whose float result is the double path's bit for bit run in
 * float loops the compiler vectorizes: comparisons and sign changes round
 * nothing, and a product of two floats rounds once either way. The
 * act_vmath() ones and HardSwish (vhswish()) compute in float, in every
 * f32 layer (unary_row() gathers strided ones); the others go through
 * act_d(). The epilogues call it on short runs (a tile's row of 16 after
 * the AVX2 micro-kernels): Relu, LeakyRelu, Clip, HardSwish and
 * Identity return before anything else is set up, the act_vmath() ones go
 * straight to their loop (act_f32_rest() has the rest, whose frame of
 * doubles would weigh on such short runs, as in openWakeWord's embedding
 * convolutions with LeakyRelu).
 */
void act_f32(const struct vnpu_layer_act *a, const float *x, float *y,
	     __u64 n, int avx512)
{
	float al = f32_of(a->alpha), be = f32_of(a->beta);
	__u64 i;

	switch (a->func) {
	case VNPU_ACT_IDENTITY:
		for (i = 0; x != y && i < n; i++)
			y[i] = x[i];
		return;
	case VNPU_ACT_RELU:
		for (i = 0; i < n; i++)
			y[i] = x[i] < 0 ? 0.0f : x[i];
		return;
	case VNPU_ACT_LEAKY_RELU:
		for (i = 0; i + 8 <= n; i += 8) {
			v8sf v = vload(x + i);

			vstore(y + i, vneg_sel(v, v * al));
		}
		for (; i < n; i++)
			y[i] = x[i] < 0 ? al * x[i] : x[i];
		return;
	case VNPU_ACT_CLIP:
		for (i = 0; i + 8 <= n; i += 8)
			vstore(y + i, vclip(vload(x + i), al, be));
		for (; i < n; i++)
			y[i] = x[i] < al ? al : x[i] > be ? be : x[i];
		return;
	case VNPU_ACT_HARD_SWISH:
		for (i = 0; i + 8 <= n; i += 8)
			vstore(y + i, vhswish(vload(x + i)));
		for (; i < n; i++)
			y[i] = hswish(x[i]);
		return;
	default:
		if (act_vmath(a->func))
			act_vmath_f32(a->func, x, y, n, avx512);
		else
			act_f32_rest(a, x, y, n, avx512);
	}
}

/* Relu of eight floats as act_f32() gives it: a negative to +0, -0 and NaN kept. */
static inline v8sf vrelu(v8sf x)
{
	return (v8sf)((v8si)x & ~(x < 0));
}

/*
 * @rows runs of @n floats at @y, @rs apart, through F (of v8sf v), then
 * the bound if any; a run's last n % 8 one at a time in lane 0 of v, the
 * same operations without the branches a float's comparisons compile to
 * (LeakyRelu and its bound on outputs of either sign mispredicted them
 * half the time: openWakeWord's embedding convolutions' rows of 34
 * columns).
 */
#define ROWS_MAP(F) do {					\
	for (r = 0; r < rows; r++, y += rs) {			\
		for (i = 0; i + 8 <= n; i += 8) {		\
			v8sf v = vload(y + i);			\
								\
			vstore(y + i, vbound_if(F, vb, bound, max));	\
		}						\
		for (; i < n; i++) {				\
			v8sf v = vbcast(y[i]);			\
								\
			y[i] = vbound_if(F, vb, bound, max)[0];	\
		}						\
	}							\
} while (0)

/*
 * act_f32() and act_bound() in place on @rows runs of @n floats at @y,
 * @rs floats apart: a tile's rows after the micro-kernels stored them (a
 * 12x32 tile's twelve rows of 32), the same bits as a call per row;
 * Identity, Relu and LeakyRelu with or without a bound (openWakeWord's
 * LeakyRelu then Max(y, -0.4)), Clip, HardSwish and the act_vmath()
 * functions in one loop over them, without a call per row.
 */
void act_rows_f32(const struct vnpu_layer_act *a, float *y, __s64 rs,
		  __u64 rows, __u64 n, int avx512)
{
	float al = f32_of(a->alpha), be = f32_of(a->beta);
	int bound = !!a->flags, max = !!(a->flags & VNPU_ACT_F_MAX);
	v8sf vb = vbcast(be);
	__u64 r, i;

	/* A bound follows an identity, Relu or LeakyRelu only (the checker's). */
	switch (a->flags ? VNPU_ACT_COUNT : a->func) {
	case VNPU_ACT_COUNT:
		break;
	case VNPU_ACT_CLIP:
		ROWS_MAP(vclip(v, al, be));
		return;
	case VNPU_ACT_HARD_SWISH:
		ROWS_MAP(vhswish(v));
		return;
	default:
		if (!act_vmath(a->func))
			break;
#ifdef ENG_FMA
		if (avx512) {
			vnpu_eng_act_rows_avx512(a->func, y, rs, rows, n,
						 avx512 == ENG_ACT_BF16);
			return;
		}
#endif
		vm8_act_map_rows(a->func, y, y, n, rows, rs);
		return;
	}
	switch (a->func) {
	case VNPU_ACT_IDENTITY:
		if (bound)
			ROWS_MAP(v);
		return;
	case VNPU_ACT_RELU:
		ROWS_MAP(vrelu(v));
		return;
	case VNPU_ACT_LEAKY_RELU:
		ROWS_MAP(vneg_sel(v, v * al));
		return;
	default:
		break;
	}
	for (r = 0; r < rows; r++, y += rs) {
		act_f32(a, y, y, n, avx512);
		act_bound(a, y, n);
	}
}

#undef ROWS_MAP

/*
 * The bound of a fused activation (VNPU_ACT_F_MAX or _MIN) on @n floats
 * at @y, after the function: BINARY's Max(y, beta) or Min(y, beta), which
 * keep a NaN y and give beta on a tie.
 */
void act_bound(const struct vnpu_layer_act *a, float *y, __u64 n)
{
	float b = f32_of(a->beta);
	__u64 i;

	if (a->flags & VNPU_ACT_F_MAX)
		for (i = 0; i < n; i++)
			y[i] = F32_MAX(y[i], b, 1);
	else if (a->flags & VNPU_ACT_F_MIN)
		for (i = 0; i < n; i++)
			y[i] = F32_MAX(y[i], b, 0);
}

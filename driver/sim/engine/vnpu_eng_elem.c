// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Element-wise, normalization, reduction and data-movement kernels, built
 * per ISA (vnpu_eng_isa.h).
 *
 * Float dtypes compute in double and round once on store, so every f32
 * result is correctly rounded for the basic operations (and within an ulp
 * for the transcendental ones) whatever path computed it; integers compute
 * in 64 bits and wrap on store.
 */
#include "vnpu_eng_kern.h"

/*
 * @n elements of @size bytes from @src to @dst, @ss and @ds elements
 * apart: one memcpy() where both are dense.
 */
void copy_run(char *dst, __s64 ds, const char *src, __s64 ss, __u64 n,
	      __u32 size)
{
	__u64 i;

	if (ds == 1 && ss == 1) {
		__builtin_memcpy(dst, src, n * size);
		return;
	}
	for (i = 0; i < n; i++)
		copy_elem(dst + (__s64)i * ds * size, src + (__s64)i * ss * size,
			  size);
}

/* ---- BINARY ---------------------------------------------------------- */

struct bin_arg {
	__u32 func, in, out;
	int avx512;	/* f32 runs in 16 lanes (bin_f32_runs()) */
};

static double nan_max(double a, double b, int max)
{
	if (a != a)
		return a;
	if (b != b)
		return b;
	return (max ? a > b : a < b) ? a : b;
}

static void bin_d(__u32 func, double *x, const double *y, __u32 n)
{
	__u32 i;

	for (i = 0; i < n; i++) {
		double a = x[i], b = y[i], r;

		switch (func) {
		case VNPU_BIN_ADD:
			r = a + b;
			break;
		case VNPU_BIN_SUB:
			r = a - b;
			break;
		case VNPU_BIN_MUL:
			r = a * b;
			break;
		case VNPU_BIN_DIV:
			r = a / b;
			break;
		case VNPU_BIN_POW:
			r = m_pow(a, b);
			break;
		case VNPU_BIN_MAX:
			r = nan_max(a, b, 1);
			break;
		case VNPU_BIN_MIN:
			r = nan_max(a, b, 0);
			break;
		case VNPU_BIN_MOD:
			r = m_fmod(a, b);
			/* Python's mod: the result takes the divisor's sign. */
			if ((r < 0 && b > 0) || (r > 0 && b < 0))
				r += b;
			break;
		case VNPU_BIN_FMOD:
			r = m_fmod(a, b);
			break;
		case VNPU_BIN_EQUAL:
			r = a == b;
			break;
		case VNPU_BIN_LESS:
			r = a < b;
			break;
		case VNPU_BIN_LESS_EQUAL:
			r = a <= b;
			break;
		case VNPU_BIN_GREATER:
			r = a > b;
			break;
		case VNPU_BIN_GREATER_EQUAL:
			r = a >= b;
			break;
		case VNPU_BIN_PRELU:
			r = a < 0 ? a * b : a;
			break;
		default:
			r = 0;
			break;
		}
		x[i] = r;
	}
}

static __s64 ipow(__s64 a, __s64 b)
{
	__u64 r = 1, base = (__u64)a;

	if (b < 0)
		return a == 1 ? 1 : a == -1 ? (b & 1 ? -1 : 1) : 0;
	while (b) {
		if (b & 1)
			r *= base;
		base *= base;
		b >>= 1;
	}
	return (__s64)r;
}

static __s64 bin_one_i(__u32 func, __s64 a, __s64 b, int uns)
{
	__u64 ua = (__u64)a, ub = (__u64)b;
	__s64 r;

	switch (func) {
	case VNPU_BIN_ADD:
		return (__s64)(ua + ub);
	case VNPU_BIN_SUB:
		return (__s64)(ua - ub);
	case VNPU_BIN_MUL:
		return (__s64)(ua * ub);
	case VNPU_BIN_DIV:
		if (!b)
			return 0;
		if (uns)
			return (__s64)(ua / ub);
		return b == -1 ? (__s64)(0 - ua) : a / b;
	case VNPU_BIN_POW:
		return ipow(a, b);
	case VNPU_BIN_MAX:
		return (uns ? ua > ub : a > b) ? a : b;
	case VNPU_BIN_MIN:
		return (uns ? ua < ub : a < b) ? a : b;
	case VNPU_BIN_MOD:
	case VNPU_BIN_FMOD:
		if (!b)
			return 0;
		if (uns)
			return (__s64)(ua % ub);
		r = b == -1 ? 0 : a % b;
		if (func == VNPU_BIN_MOD && ((r < 0 && b > 0) || (r > 0 && b < 0)))
			r += b;
		return r;
	case VNPU_BIN_EQUAL:
		return a == b;
	case VNPU_BIN_LESS:
		return uns ? ua < ub : a < b;
	case VNPU_BIN_LESS_EQUAL:
		return uns ? ua <= ub : a <= b;
	case VNPU_BIN_GREATER:
		return uns ? ua > ub : a > b;
	case VNPU_BIN_GREATER_EQUAL:
		return uns ? ua >= ub : a >= b;
	case VNPU_BIN_AND:
		return a && b;
	case VNPU_BIN_OR:
		return a || b;
	case VNPU_BIN_XOR:
		return !a != !b;
	case VNPU_BIN_BITAND:
		return a & b;
	case VNPU_BIN_BITOR:
		return a | b;
	case VNPU_BIN_BITXOR:
		return a ^ b;
	default:
		return 0;
	}
}

/*
 * f32 operands, contiguous or scalar, in plain loops (the comparisons)
 * or in explicit vectors (bin_f32_runs(), square_f32()). Only functions
 * whose float result is the double path's (bin_d(), then rounded to
 * float) bit for bit: +, -, *, /, the product in PReLU and a square (POW
 * by a scalar 2) round once either way, max, min and the comparisons
 * round nothing.
 */
#define F32_LOOP(T, expr) do {						\
	T *py = (T *)p[2];						\
									\
	if (st[0] == 4 && st[1] == 4)					\
		for (i = 0; i < n; i++) {				\
			float a = pa[i], b = pb[i];			\
			py[i] = (expr);					\
		}							\
	else if (st[0] == 4)						\
		for (i = 0; i < n; i++) {				\
			float a = pa[i], b = pb[0];			\
			py[i] = (expr);					\
		}							\
	else								\
		for (i = 0; i < n; i++) {				\
			float a = pa[0], b = pb[i];			\
			py[i] = (expr);					\
		}							\
} while (0)

/* PRELU of contiguous @a and @b (either may be a scalar: @sa, @sb 0). */
static void prelu_f32(const float *a, const float *b, float *y, int sa,
		      int sb, __u64 n)
{
	__u64 i = 0;

	for (; sa && sb && i + 8 <= n; i += 8) {
		v8sf v = vload(a + i);

		vstore(y + i, vneg_sel(v, v * vload(b + i)));
	}
	for (; sa && !sb && i + 8 <= n; i += 8) {
		v8sf v = vload(a + i);

		vstore(y + i, vneg_sel(v, v * b[0]));
	}
	for (; i < n; i++) {
		float v = a[sa ? i : 0], w = b[sb ? i : 0];

		y[i] = v < 0 ? v * w : v;
	}
}

/*
 * Squares of @n contiguous f32 @a into @y: m_pow()'s one exact product,
 * rounded once to float either way; its NaNs are m_nan().
 */
static void square_f32(const float *a, float *y, __u64 n)
{
	const v8sf qnan = vbcast((float)m_nan());
	__u64 i = 0;

	for (; i + 8 <= n; i += 8) {
		v8sf v = vload(a + i);

		vstore(y + i, vm8_sel(v == v, v * v, qnan));
	}
	for (; i < n; i++)
		y[i] = a[i] != a[i] ? (float)m_nan() : a[i] * a[i];
}

/* The functions bin_f32_runs() computes. */
static int bin_runs_func(__u32 func)
{
	return func == VNPU_BIN_ADD || func == VNPU_BIN_SUB ||
	       func == VNPU_BIN_MUL || func == VNPU_BIN_DIV ||
	       func == VNPU_BIN_MAX || func == VNPU_BIN_MIN;
}

static int bin_f32_fast(const struct bin_arg *b, char *const *p,
			const __s64 *st, __u64 n)
{
	const float *pa = (const float *)p[0], *pb = (const float *)p[1];
	__u32 func = b->func, out = b->out, m;
	__u64 i;

	if ((st[0] != 4 && st[0] != 0) || (st[1] != 4 && st[1] != 0) ||
	    (st[0] == 0 && st[1] == 0))
		return 0;
	/*
	 * With both operands NaN, x86 returns its first source's NaN, and the
	 * compiler may swap the sources of a + b or a * b: the SSE2 build's
	 * two-operand addps keeps the loaded b[i] as the first. A scalar NaN
	 * makes every output a NaN: the double path picks its payload (a
	 * vectorized a[i] * b puts the broadcast b first, or not, as the
	 * compiler likes, and differently where Y is A).
	 */
	if ((!st[0] && pa[0] != pa[0]) || (!st[1] && pb[0] != pb[0]))
		return 0;
	if (out == VNPU_DTYPE_BOOL) {
		if (st[2] != 1)
			return 0;
		switch (func) {
		case VNPU_BIN_EQUAL:
			F32_LOOP(__u8, a == b);
			return 1;
		case VNPU_BIN_LESS:
			F32_LOOP(__u8, a < b);
			return 1;
		case VNPU_BIN_LESS_EQUAL:
			F32_LOOP(__u8, a <= b);
			return 1;
		case VNPU_BIN_GREATER:
			F32_LOOP(__u8, a > b);
			return 1;
		case VNPU_BIN_GREATER_EQUAL:
			F32_LOOP(__u8, a >= b);
			return 1;
		default:
			return 0;
		}
	}
	if (out != VNPU_DTYPE_F32 || st[2] != 4)
		return 0;
	if (bin_runs_func(func) && st[0] && st[1]) {
		/*
		 * In explicit vectors: the compiler leaves F32_LOOP's
		 * two-run case scalar, unable to rule out that Y overlaps A
		 * or B in part (it vectorizes the others, whose short rows
		 * a call a row would slow down).
		 */
		for (i = 0; i < n; i += m) {
			m = (__u32)eng_min(n - i, 1u << 30);
			bin_f32_runs(func, pa + i, 1, pb + i, 1,
				     (float *)p[2] + i, m, b->avx512);
		}
		return 1;
	}
	switch (func) {
	case VNPU_BIN_ADD:
		F32_LOOP(float, a + b);
		return 1;
	case VNPU_BIN_SUB:
		F32_LOOP(float, a - b);
		return 1;
	case VNPU_BIN_MUL:
		F32_LOOP(float, a * b);
		return 1;
	case VNPU_BIN_DIV:
		F32_LOOP(float, a / b);
		return 1;
	case VNPU_BIN_MAX:
		F32_LOOP(float, F32_MAX(a, b, 1));
		return 1;
	case VNPU_BIN_MIN:
		F32_LOOP(float, F32_MAX(a, b, 0));
		return 1;
	case VNPU_BIN_PRELU:
		prelu_f32(pa, pb, (float *)p[2], st[0] != 0, st[1] != 0, n);
		return 1;
	case VNPU_BIN_POW:
		if (st[1] || pb[0] != 2.0f || !st[0])
			return 0;
		square_f32(pa, (float *)p[2], n);
		return 1;
	default:
		return 0;
	}
}

/*
 * f32 @a OP @b into f32 @y, all dense but one operand that holds one
 * element per output pair (@st 2, iter_run_pairs()): F32_LOOP's a OP b on
 * the same values, eight outputs a step.
 */
#define F32_PAIRS(op) do {						\
	if (st[0] == 2) {						\
		for (i = 0; i + 8 <= n; i += 8) {			\
			v4sf q = *(const v4sf_u *)(pa + i / 2);		\
									\
			vstore(py + i, __builtin_shufflevector(q, q, 0, 0, 1, \
					1, 2, 2, 3, 3) op vload(pb + i)); \
		}							\
		for (; i < n; i++)					\
			py[i] = pa[i / 2] op pb[i];			\
	} else {							\
		for (i = 0; i + 8 <= n; i += 8) {			\
			v4sf q = *(const v4sf_u *)(pb + i / 2);		\
									\
			vstore(py + i, vload(pa + i) op			\
				__builtin_shufflevector(q, q, 0, 0, 1, 1, 2, \
							2, 3, 3));	\
		}							\
		for (; i < n; i++)					\
			py[i] = pa[i] op pb[i / 2];			\
	}								\
} while (0)

/* The functions bin_f32_pairs() computes. */
static int bin_pairs_func(__u32 func)
{
	return func == VNPU_BIN_ADD || func == VNPU_BIN_SUB ||
	       func == VNPU_BIN_MUL || func == VNPU_BIN_DIV;
}

static void bin_f32_pairs(__u32 func, char *const *p, const __s64 *st,
			  __u64 n)
{
	const float *pa = (const float *)p[0], *pb = (const float *)p[1];
	float *py = (float *)p[2];
	__u64 i;

	switch (func) {
	case VNPU_BIN_ADD:
		F32_PAIRS(+);
		break;
	case VNPU_BIN_SUB:
		F32_PAIRS(-);
		break;
	case VNPU_BIN_MUL:
		F32_PAIRS(*);
		break;
	default:
		F32_PAIRS(/);
		break;
	}
}

static void bin_row(const void *arg, char *const *p, const __s64 *st, __u64 n)
{
	const struct bin_arg *b = arg;
	double x[ENG_BLOCK], y[ENG_BLOCK];
	__s64 xi[ENG_BLOCK], yi[ENG_BLOCK];
	__u64 i, j;

	if (b->in == VNPU_DTYPE_F32 && (st[0] == 2 || st[1] == 2)) {
		bin_f32_pairs(b->func, p, st, n);
		return;
	}
	if (b->in == VNPU_DTYPE_F32 && bin_f32_fast(b, p, st, n))
		return;
	for (i = 0; i < n; i += ENG_BLOCK) {
		__u32 m = (__u32)eng_min(ENG_BLOCK, n - i);

		if (dt_float(b->in)) {
			load_d(x, p[0] + (__s64)i * st[0], st[0], m, b->in);
			load_d(y, p[1] + (__s64)i * st[1], st[1], m, b->in);
			bin_d(b->func, x, y, m);
			store_d(p[2] + (__s64)i * st[2], st[2], x, m, b->out);
			continue;
		}
		load_i(xi, p[0] + (__s64)i * st[0], st[0], m, b->in);
		load_i(yi, p[1] + (__s64)i * st[1], st[1], m, b->in);
		for (j = 0; j < m; j++)
			xi[j] = bin_one_i(b->func, xi[j], yi[j],
					  b->in == VNPU_DTYPE_U64);
		store_i(p[2] + (__s64)i * st[2], st[2], xi, m, b->out);
	}
}

/*
 * Whether @it (a binary's operands and output, rank 4) is f32 X times a
 * per-channel scale S, [N, C, 1, 1] against a dense [N, C, H, W] output
 * (squeeze-excite's Mul, either operand order); @sc is set to S's index.
 */
static int bin_is_scale(const struct eng_iter *it, const struct bin_arg *b,
			__u32 *sc)
{
	__s64 dense = 4;
	__u32 o, q;
	int d;

	if (b->func != VNPU_BIN_MUL || b->in != VNPU_DTYPE_F32 ||
	    b->out != VNPU_DTYPE_F32 || it->rank != 4 ||
	    it->dims[2] * it->dims[3] < 8)
		return 0;
	for (d = 3; d >= 0; d--) {
		if (it->dims[d] != 1 && it->st[2][d] != dense)
			return 0;
		dense *= (__s64)it->dims[d];
	}
	for (q = 0; q < 2; q++) {
		o = 1 - q;
		if (it->st[q][2] || it->st[q][3])
			continue;
		for (d = 0; d < 4; d++)
			if (it->dims[d] != 1 && it->st[o][d] != it->st[2][d])
				break;
		/* Y is X or apart from it: a vector's loads precede its store. */
		if (d == 4 && (it->base[o] == it->base[2] ||
			       it->base[o] >= it->base[2] + dense ||
			       it->base[2] >= it->base[o] + dense)) {
			*sc = q;
			return 1;
		}
	}
	return 0;
}

/*
 * Outputs [@lo, @hi) of X times a per-channel scale (bin_is_scale(), S
 * operand @sc): each channel plane's run in a vector loop, its last eight
 * (computed before the loop's stores, so also in place) stored again over
 * the vectors before where the run is not a multiple of eight: iter_run()
 * called bin_row() a plane, which cost MobileNetV3's 7x7 planes about as
 * much as their products. A run of fewer than eight, or under a NaN scale
 * (the product of two NaNs is either's: F32_LOOP's bits), takes bin_row().
 */
static void bin_scale_planes(const struct eng_iter *it,
			     const struct bin_arg *b, __u32 sc, __u64 lo,
			     __u64 hi)
{
	const __u64 plane = it->dims[2] * it->dims[3], ch = it->dims[1];
	__u32 xo = 1 - sc;
	__u64 e, r, q, n, i;

	for (e = lo; e < hi; e += n) {
		char *p[3];
		__s64 st[3] = { 0, 0, 4 };
		const float *x;
		float *y, s;
		v8sf sv, last;

		r = e / plane;
		q = e % plane;
		n = eng_min(hi - e, plane - q);
		p[sc] = it->base[sc] + (__s64)(r / ch) * it->st[sc][0] +
			(__s64)(r % ch) * it->st[sc][1];
		p[xo] = it->base[xo] + (__s64)e * 4;
		p[2] = it->base[2] + (__s64)e * 4;
		s = *(const float *)p[sc];
		if (n < 8 || s != s) {
			st[xo] = 4;
			bin_row(b, p, st, n);
			continue;
		}
		x = (const float *)p[xo];
		y = (float *)p[2];
		sv = vbcast(s);
		last = vload(x + n - 8) * sv;
		for (i = 0; i + 8 <= n; i += 8)
			vstore(y + i, vload(x + i) * sv);
		if (i < n)
			vstore(y + n - 8, last);
	}
}

int run_binary(const struct eng_layer *l, __u64 ub, __u64 ue,
	       const struct vnpu_eng_ctx *ctx)
{
	const struct vnpu_layer_binary *at = l->attrs;
	struct bin_arg arg = { at->func, l->t[0].dtype, l->t[2].dtype,
			       eng_act_avx512(ctx) };
	struct eng_iter it;
	__u64 lo, hi;
	__u32 sc;

	iter_init(&it, &l->t[2]);
	iter_add(&it, &l->t[0], &l->t[2], l->data[0]);
	iter_add(&it, &l->t[1], &l->t[2], l->data[1]);
	iter_add(&it, &l->t[2], &l->t[2], l->data[2]);
	elem_range(&l->t[2], ub, ue, &lo, &hi);
	if (bin_is_scale(&it, &arg, &sc))
		bin_scale_planes(&it, &arg, sc, lo, hi);
	else if (arg.in == VNPU_DTYPE_F32 && arg.out == VNPU_DTYPE_F32 &&
		 bin_pairs_func(arg.func))
		iter_run_pairs(&it, 4, lo, hi, bin_row, &arg);
	else
		iter_run(&it, lo, hi, bin_row, &arg);
	return 0;
}

/* ---- WHERE ----------------------------------------------------------- */

static void where_row(const void *arg, char *const *p, const __s64 *st,
		      __u64 n)
{
	__u32 size = *(const __u32 *)arg;
	__u64 i;

	for (i = 0; i < n; i++) {
		const char *c = p[0] + (__s64)i * st[0];
		const char *src = *c ? p[1] + (__s64)i * st[1] :
				  p[2] + (__s64)i * st[2];

		copy_elem(p[3] + (__s64)i * st[3], src, size);
	}
}

int run_where(const struct eng_layer *l, __u64 ub, __u64 ue,
	      const struct vnpu_eng_ctx *ctx)
{
	__u32 size = vnpu_eng_dtype_size(l->t[3].dtype), i;
	struct eng_iter it;
	__u64 lo, hi;

	iter_init(&it, &l->t[3]);
	for (i = 0; i < 4; i++)
		iter_add(&it, &l->t[i], &l->t[3], l->data[i]);
	elem_range(&l->t[3], ub, ue, &lo, &hi);
	iter_run(&it, lo, hi, where_row, &size);
	return 0;
}

/* ---- UNARY and CAST -------------------------------------------------- */

struct unary_arg {
	const struct vnpu_layer_act *act;	/* NULL: a cast */
	__u32 in, out;
	int avx512;				/* eng_act_avx512() */
};

static void unary_row(const void *arg, char *const *p, const __s64 *st,
		      __u64 n)
{
	const struct unary_arg *u = arg;
	double x[ENG_BLOCK];
	__s64 xi[ENG_BLOCK];
	__u64 i;

	if (u->act && u->in == VNPU_DTYPE_F32 && u->out == VNPU_DTYPE_F32 &&
	    st[0] == 4 && st[1] == 4) {
		act_f32(u->act, (const float *)p[0], (float *)p[1], n,
			u->avx512);
		return;
	}
	for (i = 0; i < n; i += ENG_BLOCK) {
		__u32 m = (__u32)eng_min(ENG_BLOCK, n - i), j;
		const char *src = p[0] + (__s64)i * st[0];
		char *dst = p[1] + (__s64)i * st[1];

		if (u->act && act_in_float(u->act->func) &&
		    u->in == VNPU_DTYPE_F32 && u->out == VNPU_DTYPE_F32) {
			float f[ENG_BLOCK];

			for (j = 0; j < m; j++)
				f[j] = *(const float *)(src + (__s64)j * st[0]);
			if (u->act->func == VNPU_ACT_HARD_SWISH)
				hswish_f32(f, f, m);
			else
				act_vmath_f32(u->act->func, f, f, m,
					      u->avx512);
			for (j = 0; j < m; j++)
				*(float *)(dst + (__s64)j * st[1]) = f[j];
			continue;
		}
		if (dt_float(u->in) || (dt_float(u->out) && !u->act)) {
			load_d(x, src, st[0], m, u->in);
			if (u->act)
				act_d(u->act, x, m);
			store_d(dst, st[1], x, m, u->out);
			continue;
		}
		load_i(xi, src, st[0], m, u->in);
		if (u->act)
			act_i(u->act, xi, m, dt_unsigned(u->in));
		store_i(dst, st[1], xi, m, u->out);
	}
}

static int run_unary_cast(const struct eng_layer *l, __u64 ub, __u64 ue,
			  const struct vnpu_layer_act *act,
			  const struct vnpu_eng_ctx *ctx)
{
	struct unary_arg arg = { act, l->t[0].dtype, l->t[1].dtype,
				 eng_act_avx512(ctx) };
	struct eng_iter it;
	__u64 lo, hi;

	iter_init(&it, &l->t[1]);
	iter_add(&it, &l->t[0], &l->t[1], l->data[0]);
	iter_add(&it, &l->t[1], &l->t[1], l->data[1]);
	elem_range(&l->t[1], ub, ue, &lo, &hi);
	iter_run(&it, lo, hi, unary_row, &arg);
	return 0;
}

int run_unary(const struct eng_layer *l, __u64 ub, __u64 ue,
	      const struct vnpu_eng_ctx *ctx)
{
	return run_unary_cast(l, ub, ue, l->attrs, ctx);
}

int run_cast(const struct eng_layer *l, __u64 ub, __u64 ue,
	     const struct vnpu_eng_ctx *ctx)
{
	return run_unary_cast(l, ub, ue, 0, ctx);
}

/* ---- LOOKUP ---------------------------------------------------------- */

#ifdef ENG_FMA
typedef char v32qi_lk __attribute__((vector_size(32)));
typedef char v32qi_lku __attribute__((vector_size(32), aligned(1), may_alias));

/*
 * @n dense bytes through the 256-entry table @t, 32 at a time: the table
 * as 16 rows of 16 bytes, each in both lanes for vpshufb. Row k answers
 * the bytes whose high nibble is k: x ^ 16k is below 16 for them alone,
 * and a saturating add of 0x70 keeps those below 0x80 while the others
 * reach it, where vpshufb gives 0; so OR-ing the 16 rows' answers leaves
 * each byte's own entry.
 */
static __u64 lookup_dense(const __u8 *t, const __u8 *x, __u8 *y, __u64 n)
{
	const v32qi_lk bias = (v32qi_lk){} + 0x70;
	v32qi_lk rows[16];
	__u64 i;
	int k, j;

	for (k = 0; k < 16; k++)
		for (j = 0; j < 32; j++)
			rows[k][j] = (char)t[16 * k + (j & 15)];
	for (i = 0; i + 32 <= n; i += 32) {
		v32qi_lk v = *(const v32qi_lku *)(x + i), r = {};

		for (k = 0; k < 16; k++) {
			v32qi_lk idx = v ^ (char)(16 * k);

			idx = __builtin_ia32_paddusb256(idx, bias);
			r |= __builtin_ia32_pshufb256(rows[k], idx);
		}
		*(v32qi_lku *)(y + i) = r;
	}
	return i;
}
#else
static __u64 lookup_dense(const __u8 *t, const __u8 *x, __u8 *y, __u64 n)
{
	return 0;
}
#endif

static void lookup_row(const void *arg, char *const *p, const __s64 *st,
		       __u64 n)
{
	const __u8 *t = arg, *x = (const __u8 *)p[0];
	__u8 *y = (__u8 *)p[1];
	__u64 i = 0;

	if (st[0] == 1 && st[1] == 1)
		i = lookup_dense(t, x, y, n);
	for (; i < n; i++)
		y[(__s64)i * st[1]] = t[x[(__s64)i * st[0]]];
}

#ifdef ENG_FMA
/* lookup_row() with its dense rows in 64 bytes (VNPU_ENG_F_VBMI). */
static void lookup_row_vbmi(const void *arg, char *const *p, const __s64 *st,
			    __u64 n)
{
	if (st[0] != 1 || st[1] != 1) {
		lookup_row(arg, p, st, n);
		return;
	}
	vnpu_eng_lookup_vbmi(arg, (const __u8 *)p[0], (__u8 *)p[1], n);
}
#endif

int run_lookup(const struct eng_layer *l, __u64 ub, __u64 ue,
	       const struct vnpu_eng_ctx *ctx)
{
	iter_row_fn row = lookup_row;
	struct eng_iter it;
	__u64 lo, hi;

#ifdef ENG_FMA
	if ((ctx->features & (VNPU_ENG_F_AVX512 | VNPU_ENG_F_VBMI)) ==
	    (VNPU_ENG_F_AVX512 | VNPU_ENG_F_VBMI))
		row = lookup_row_vbmi;
#endif
	iter_init(&it, &l->t[2]);
	iter_add(&it, &l->t[0], &l->t[2], l->data[0]);
	iter_add(&it, &l->t[2], &l->t[2], l->data[2]);
	elem_range(&l->t[2], ub, ue, &lo, &hi);
	iter_run(&it, lo, hi, row, l->data[1]);
	return 0;
}

/* ---- lanes along one axis (SOFTMAX, LP, LRN, ARGMAX) ---------------- */

/* Offset of lane @lane of @t: its coords over all dims but @axis. */
static __s64 lane_offset(const struct vnpu_cmd_tensor *t, __u32 axis, __u64 lane)
{
	__s64 off = 0;
	int d;

	for (d = (int)t->rank - 1; d >= 0; d--) {
		if ((__u32)d == axis)
			continue;
		off += (__s64)(lane % t->dims[d]) * t->strides[d];
		lane /= t->dims[d];
	}
	return off;
}

static void lane_range(const struct vnpu_cmd_tensor *x, __u32 axis, __u64 ub,
		       __u64 ue, __u64 *lo, __u64 *hi)
{
	__u64 len = x->dims[axis];

	row_range(len ? vnpu_eng_numel(x) / len : 0, len, ub, ue, lo, hi);
}

/* One lane of @len elements, @xs and @ys apart, of storage type @dt. */
static void softmax_lane(__u32 mode, const void *x, __s64 xs, void *y,
			 __s64 ys, __u64 len, __u32 dt, struct eng_pacer *pc)
{
	float mx = -(float)m_inf(), v;
	__u64 i, i0, e, arg = 0;
	double sum = 0, ls;

	for (i0 = 0; i0 < len; i0 = e) {
		e = eng_pace_end(pc, i0, len);
		for (i = i0; i < e; i++) {
			v = ldf(x, (__s64)i * xs, dt);
			if (v > mx || i == 0) {
				mx = v;
				arg = i;
			}
		}
		eng_pace(pc, e - i0);
	}
	if (mode == VNPU_HARDMAX) {
		for (i0 = 0; i0 < len; i0 = e) {
			e = eng_pace_end(pc, i0, len);
			for (i = i0; i < e; i++)
				stf(y, (__s64)i * ys, dt, i == arg ? 1.0f : 0.0f);
			eng_pace(pc, e - i0);
		}
		return;
	}
	for (i0 = 0; i0 < len; i0 = e) {
		e = eng_pace_end(pc, i0, len);
		for (i = i0; i < e; i++)
			sum += m_exp((double)ldf(x, (__s64)i * xs, dt) - mx);
		eng_pace(pc, e - i0);
	}
	ls = m_log(sum);
	for (i0 = 0; i0 < len; i0 = e) {
		e = eng_pace_end(pc, i0, len);
		for (i = i0; i < e; i++) {
			double d = (double)ldf(x, (__s64)i * xs, dt) - mx;

			stf(y, (__s64)i * ys, dt, (float)m_canon(mode ==
			    VNPU_LOG_SOFTMAX ? d - ls : m_exp(d) / sum));
		}
		eng_pace(pc, e - i0);
	}
}

/* Lanes of v > m ? v : m, which keeps m where v is NaN. */
static inline v8sf vmax_keep(v8sf v, v8sf m)
{
	v8si gt = v > m;

	return (v8sf)(((v8si)v & gt) | ((v8si)m & ~gt));
}

/* The larger of @mx and elements [@i, @e) of @x, NaNs skipped. */
static float span_max_f32(const float *x, __u64 i, __u64 e, float mx)
{
	v8sf m = vbcast(mx);
	__u32 j;

	for (; i + 8 <= e; i += 8)
		m = vmax_keep(vload(x + i), m);
	for (; i < e; i++)
		mx = x[i] > mx ? x[i] : mx;
	for (j = 0; j < 8; j++)
		mx = m[j] > mx ? m[j] : mx;
	return mx;
}

/*
 * The maximum softmax_lane() finds in a contiguous f32 lane: x[0] when it
 * is NaN, else the largest of the others that are not NaN. Its sign may
 * differ when the maximum is zero and both zeros are there, which changes
 * no result: x - mx and the sum are the same for either.
 */
static float lane_max_f32(const float *x, __u64 len, struct eng_pacer *pc)
{
	float mx = x[0];
	__u64 i0, e;

	for (i0 = 1; mx == mx && i0 < len; i0 = e) {
		e = eng_pace_end(pc, i0, len);
		mx = span_max_f32(x, i0, e, mx);
		eng_pace(pc, e - i0);
	}
	return mx;
}

/* Hardmax of a contiguous f32 lane whose maximum is @mx. */
static void hardmax_lane_f32(const float *x, float *y, __u64 len, float mx,
			     struct eng_pacer *pc)
{
	__u64 i, i0, e, arg = mx == mx ? len : 0;

	for (i0 = 0; i0 < len; i0 = e) {
		e = eng_pace_end(pc, i0, len);
		for (i = i0; i < e && arg == len; i++)
			if (x[i] == mx)
				arg = i;
		for (i = i0; i < e; i++)
			y[i] = i == arg ? 1.0f : 0.0f;
		eng_pace(pc, e - i0);
	}
}

/*
 * The f32 softmax: e = exp(x - mx) per element in float (vmu8_exp(), x -
 * mx taken exactly as a float and its rounding error), summed in
 * double into eight partial sums by element index modulo 8, added as
 * ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7)); Softmax stores e
 * and then scales it by 1 / sum in double, LogSoftmax stores x - mx -
 * log(sum) computed in double. Within a few ulps of the exact result, the
 * same bits for a lane whatever its layout, path or split.
 */
static double sm_total(const double *s)
{
	return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

/*
 * exp(x - mx) in each lane: d = x - mx rounded, its error lo (TwoSum; 0
 * where d is not finite) added after exp's reduction.
 */
static inline v8sf sm_exp(v8sf x, v8sf mx)
{
	v8sf d = x - mx, bp = d - x, lo = (x - (d - bp)) + (-mx - bp), n, r;

	lo = vm8_sel(lo == lo, lo, vbcast(0.0f));
	r = vmu8_exp_reduce(d, &n);
	return vmu8_exp_kern(r + lo, n, vbcast(1.0f));
}

/*
 * sm_exp() of the 16 floats at @x: the first 8's in *@e0, the others' in
 * *@e1, each step on one vector and then the other (vmu8_exp_kern2()).
 */
static inline void sm_exp16(const float *x, v8sf mx, v8sf *e0, v8sf *e1)
{
	v8sf x0 = vload(x), x1 = vload(x + 8), n0, n1;
	v8sf d0 = x0 - mx, d1 = x1 - mx, b0 = d0 - x0, b1 = d1 - x1;
	v8sf l0 = (x0 - (d0 - b0)) + (-mx - b0);
	v8sf l1 = (x1 - (d1 - b1)) + (-mx - b1);

	l0 = vm8_sel(l0 == l0, l0, vbcast(0.0f));
	l1 = vm8_sel(l1 == l1, l1, vbcast(0.0f));
	d0 = vmu8_exp_reduce(d0, &n0) + l0;
	d1 = vmu8_exp_reduce(d1, &n1) + l1;
	vmu8_exp_kern2(&d0, n0, &d1, n1, vbcast(1.0f));
	*e0 = d0;
	*e1 = d1;
}

/* The exps of elements [@i, @i + 8) (those below @len), zero past it. */
static inline v8sf sm_exp8(const float *x, __u64 i, __u64 len, float mx)
{
	v8si live = { 0, 1, 2, 3, 4, 5, 6, 7 };
	v8sf v = vbcast(mx);
	__u32 j;

	if (len - i >= 8)
		return sm_exp(vload(x + i), v);
	for (j = 0; i + j < len; j++)
		v[j] = x[i + j];
	return vm8_sel(live < (int)(len - i), sm_exp(v, vbcast(mx)),
		       vbcast(0.0f));
}

/* @s += the eight lanes of @e as doubles. */
static inline void sm_add8(v4df *s_lo, v4df *s_hi, v8sf e)
{
	*s_lo += v_widen(__builtin_shufflevector(e, e, 0, 1, 2, 3));
	*s_hi += v_widen(__builtin_shufflevector(e, e, 4, 5, 6, 7));
}

/* A stretch of @i0 .. at most @len, ending on a multiple of 8 but at @len. */
static __u64 sm_stretch(const struct eng_pacer *pc, __u64 i0, __u64 len)
{
	__u64 e = eng_pace_end(pc, i0, len);

	if (e == len)
		return e;
	e = i0 + (e - i0) / 8 * 8;
	return e > i0 ? e : eng_min(i0 + 8, len);
}

/*
 * softmax_lane_avx512() past its maximum: the lane's exps and their sum,
 * then the outputs, from the maximum @mx it finds.
 */
static void softmax_exp_avx512(__u32 mode, const float *x, float *y,
			       __u64 len, float mx, struct eng_pacer *pc)
{
	struct eng_sm sm = { .x = x, .y = y, .store = mode == VNPU_SOFTMAX,
			     .mx = mx };
	__u64 i0, e;

	for (i0 = 0; i0 < len; i0 = e) {
		e = sm_stretch(pc, i0, len);
		vnpu_eng_sm_exp_avx512(&sm, i0, e);
		eng_pace(pc, e - i0);
	}
	sm.inv = 1.0 / sm_total(sm.sum);
	/* Only LogSoftmax takes log(sum): a scalar log a lane. */
	sm.ls = sm.store ? 0 : m_log(sm_total(sm.sum));
	for (i0 = 0; i0 < len; i0 = e) {
		e = sm_stretch(pc, i0, len);
		vnpu_eng_sm_out_avx512(&sm, i0, e);
		eng_pace(pc, e - i0);
	}
}

/*
 * softmax_lane_f32() on 16 lanes (VNPU_ENG_F_AVX512): the same operations
 * on every element, the same sums in the same order, so the same bits.
 */
static void softmax_lane_avx512(__u32 mode, const float *x, float *y,
				__u64 len, struct eng_pacer *pc)
{
	float mx = x[0];
	__u64 i0, e;

	for (i0 = 1; mx == mx && i0 < len; i0 = e) {
		e = eng_pace_end(pc, i0, len);
		vnpu_eng_sm_max_avx512(x, i0, e, &mx);
		eng_pace(pc, e - i0);
	}
	softmax_exp_avx512(mode, x, y, len, mx, pc);
}

/*
 * Softmax or LogSoftmax of a contiguous f32 lane whose maximum, as
 * lane_max_f32() finds it, is @mx: the exps 16 at a time while 16 are
 * left (sm_exp16(), its sums in the same order as 8 at a time).
 */
static void softmax_exp_f32(__u32 mode, const float *x, float *y, __u64 len,
			    float mx, struct eng_pacer *pc)
{
	v4df lv, s_lo = v_splat(0), s_hi = v_splat(0);
	double inv, ls, s[8];
	__u64 i, i0, e;
	__u32 j;
	v8sf ex, ex1;

	for (i0 = 0; i0 < len; i0 = e) {
		e = sm_stretch(pc, i0, len);
		for (i = i0; i + 16 <= e; i += 16) {
			sm_exp16(x + i, vbcast(mx), &ex, &ex1);
			sm_add8(&s_lo, &s_hi, ex);
			sm_add8(&s_lo, &s_hi, ex1);
			if (mode == VNPU_SOFTMAX) {
				vstore(y + i, ex);
				vstore(y + i + 8, ex1);
			}
		}
		for (; i < e; i += 8) {
			ex = sm_exp8(x, i, len, mx);
			sm_add8(&s_lo, &s_hi, ex);
			if (mode == VNPU_SOFTMAX && i + 8 <= len)
				vstore(y + i, ex);
			for (j = 0; mode == VNPU_SOFTMAX && i + 8 > len &&
			     i + j < len; j++)
				y[i + j] = ex[j];
		}
		eng_pace(pc, e - i0);
	}
	for (j = 0; j < 4; j++) {
		s[j] = s_lo[j];
		s[4 + j] = s_hi[j];
	}
	inv = 1.0 / sm_total(s);
	ls = mode == VNPU_SOFTMAX ? 0 : m_log(sm_total(s));
	for (i0 = 0; i0 < len; i0 = e) {
		e = sm_stretch(pc, i0, len);
		for (i = i0; i + 4 <= e; i += 4) {
			if (mode == VNPU_SOFTMAX)
				lv = v_widen(*(v4sf_u *)(y + i)) * inv;
			else
				lv = v_widen(*(const v4sf_u *)(x + i)) - mx - ls;
			*(v4sf_u *)(y + i) = __builtin_convertvector(v_canon(lv),
								     v4sf);
		}
		for (; i < e; i++)
			y[i] = (float)m_canon(mode == VNPU_SOFTMAX ?
					      (double)y[i] * inv :
					      ((double)x[i] - mx) - ls);
		eng_pace(pc, e - i0);
	}
}

/* The softmax of a contiguous f32 lane. */
static void softmax_lane_f32(__u32 mode, const float *x, float *y, __u64 len,
			     struct eng_pacer *pc)
{
	float mx;

	if (mode != VNPU_HARDMAX && eng_act_avx512(pc->ctx)) {
		softmax_lane_avx512(mode, x, y, len, pc);
		return;
	}
	mx = lane_max_f32(x, len, pc);
	if (mode == VNPU_HARDMAX)
		hardmax_lane_f32(x, y, len, mx, pc);
	else
		softmax_exp_f32(mode, x, y, len, mx, pc);
}

void softmax_row_f32(const float *x, float *y, __u64 len,
		     struct eng_pacer *pc)
{
	softmax_lane_f32(VNPU_SOFTMAX, x, y, len, pc);
}

void softmax_rows_max_f32(float *y, __u64 len, __u64 rows, const float *mx,
			  struct eng_pacer *pc)
{
	__u64 r = 0;

	/*
	 * Two lanes a call where both fit between two pauses: one lane a
	 * call, each with its passes, pacing and division, took BERT's
	 * attention (rows of 128) 6% longer on Zen 4.
	 */
	if (eng_act_avx512(pc->ctx) && 2 * len <= ENG_PAUSE_READS)
		for (; r + 2 <= rows; r += 2) {
			vnpu_eng_sm_pair_avx512(y + r * len, (__s64)len, len,
						mx + r);
			eng_pace(pc, 2 * len);
		}
	for (; r < rows; r++) {
		if (eng_act_avx512(pc->ctx))
			softmax_exp_avx512(VNPU_SOFTMAX, y + r * len,
					   y + r * len, len, mx[r], pc);
		else
			softmax_exp_f32(VNPU_SOFTMAX, y + r * len, y + r * len,
					len, mx[r], pc);
	}
}

/* @nl (1 to 4) f32 elements @st apart, the lanes past them lane 0's. */
static inline v4sf sm_load4(const float *x, __s64 st, __u32 nl)
{
	if (nl == 4 && st == 1)
		return *(const v4sf_u *)x;
	if (nl == 4)
		return (v4sf){ x[0], x[st], x[2 * st], x[3 * st] };
	return (v4sf){ x[0], x[nl > 1 ? st : 0], x[nl > 2 ? 2 * st : 0], x[0] };
}

/* Doubles x - mx of @nl lanes @ls apart. */
static inline v4df sm_quad_diff(const float *x, __s64 ls, __u32 nl, v4df mx)
{
	return v_widen(sm_load4(x, ls, nl)) - mx;
}

static inline void sm_store4(float *y, __s64 yl, __u32 nl, v4df v)
{
	v4sf r = __builtin_convertvector(v, v4sf);
	__u32 j;

	if (nl == 4 && yl == 1) {
		*(v4sf_u *)y = r;
		return;
	}
	for (j = 0; j < nl; j++)
		y[j * yl] = r[j];
}

/*
 * The softmax of @nl (1 to 4) f32 lanes at once, lane l at @x + l * @ls,
 * its elements @xs apart (@y likewise): each vector lane does one lane's
 * operations of softmax_lane_f32().
 */
static void softmax_quad_f32(__u32 mode, const float *x, __s64 xs, __s64 ls,
			     float *y, __s64 ys, __s64 yl, __u64 len, __u32 nl,
			     struct eng_pacer *pc)
{
	v4sf m = sm_load4(x, ls, nl), e4;
	v4df mx, inv = {}, lg = {}, v, a[8] = {};
	__u64 i, i0, e;
	__u32 j, k;
	double s[8];
	v8sf x8, m8;

	for (i0 = 1; i0 < len; i0 = e) {
		e = eng_pace_end_w(pc, i0, len, 4);
		for (i = i0; i < e; i++) {
			v4sf v = sm_load4(x + (__s64)i * xs, ls, nl);
			v4si gt = v > m;

			m = (v4sf)(((v4si)v & gt) | ((v4si)m & ~gt));
		}
		eng_pace(pc, (e - i0) * 4);
	}
	mx = __builtin_convertvector(m, v4df);
	m8 = __builtin_shufflevector(m, m, 0, 1, 2, 3, 0, 1, 2, 3);
	for (i0 = 0; i0 < len; i0 = e) {
		e = eng_pace_end_w(pc, i0, len, 4);
		for (i = i0; i < e; i++) {
			e4 = sm_load4(x + (__s64)i * xs, ls, nl);
			x8 = __builtin_shufflevector(e4, e4, 0, 1, 2, 3, 0, 1, 2, 3);
			x8 = sm_exp(x8, m8);
			e4 = __builtin_shufflevector(x8, x8, 0, 1, 2, 3);
			v = v_widen(e4);
			a[i % 8] += v;
			if (mode == VNPU_SOFTMAX)
				sm_store4(y + (__s64)i * ys, yl, nl, v);
		}
		eng_pace(pc, (e - i0) * 4);
	}
	for (j = 0; j < 4; j++) {
		for (k = 0; k < 8; k++)
			s[k] = a[k][j];
		inv[j] = 1.0 / sm_total(s);
		lg[j] = m_log(sm_total(s));
	}
	for (i0 = 0; i0 < len; i0 = e) {
		e = eng_pace_end_w(pc, i0, len, 4);
		for (i = i0; i < e; i++) {
			if (mode == VNPU_SOFTMAX)
				v = sm_quad_diff(y + (__s64)i * ys, yl, nl,
						 v_splat(0)) * inv;
			else
				v = sm_quad_diff(x + (__s64)i * xs, ls, nl, mx) - lg;
			sm_store4(y + (__s64)i * ys, yl, nl, v_canon(v));
		}
		eng_pace(pc, (e - i0) * 4);
	}
}

/* Lanes [0, 4) and [4, 8) of @v as doubles. */
static inline v4df sm_lo4(v8sf v)
{
	return v_widen(__builtin_shufflevector(v, v, 0, 1, 2, 3));
}

static inline v4df sm_hi4(v8sf v)
{
	return v_widen(__builtin_shufflevector(v, v, 4, 5, 6, 7));
}

/*
 * softmax_quad_f32() on eight neighbouring lanes of a dense innermost
 * axis (lane l at @x + l, its elements @xs apart; @y likewise): the same
 * operations on each lane, the same sums in the same order, so the same
 * bits, with whole vectors for the loads, the exps and the stores.
 */
static void softmax_oct_f32(__u32 mode, const float *x, __s64 xs, float *y,
			    __s64 ys, __u64 len, struct eng_pacer *pc)
{
	v8sf m = vload(x), e8;
	v4df a_lo[8] = {}, a_hi[8] = {}, inv_lo, inv_hi, lg_lo, lg_hi;
	v4df mx_lo, mx_hi, lo, hi;
	__u64 i, i0, e;
	__u32 j, k;
	double s[8], inv[8], lg[8];

	for (i0 = 1; i0 < len; i0 = e) {
		e = eng_pace_end_w(pc, i0, len, 8);
		for (i = i0; i < e; i++)
			m = vmax_keep(vload(x + (__s64)i * xs), m);
		eng_pace(pc, (e - i0) * 8);
	}
	for (i0 = 0; i0 < len; i0 = e) {
		e = eng_pace_end_w(pc, i0, len, 8);
		for (i = i0; i < e; i++) {
			e8 = sm_exp(vload(x + (__s64)i * xs), m);
			a_lo[i % 8] += sm_lo4(e8);
			a_hi[i % 8] += sm_hi4(e8);
			if (mode == VNPU_SOFTMAX)
				vstore(y + (__s64)i * ys, e8);
		}
		eng_pace(pc, (e - i0) * 8);
	}
	for (j = 0; j < 8; j++) {
		for (k = 0; k < 8; k++)
			s[k] = j < 4 ? a_lo[k][j] : a_hi[k][j - 4];
		inv[j] = 1.0 / sm_total(s);
		lg[j] = mode == VNPU_SOFTMAX ? 0 : m_log(sm_total(s));
	}
	inv_lo = (v4df){ inv[0], inv[1], inv[2], inv[3] };
	inv_hi = (v4df){ inv[4], inv[5], inv[6], inv[7] };
	lg_lo = (v4df){ lg[0], lg[1], lg[2], lg[3] };
	lg_hi = (v4df){ lg[4], lg[5], lg[6], lg[7] };
	mx_lo = sm_lo4(m);
	mx_hi = sm_hi4(m);
	for (i0 = 0; i0 < len; i0 = e) {
		e = eng_pace_end_w(pc, i0, len, 8);
		for (i = i0; i < e; i++) {
			if (mode == VNPU_SOFTMAX) {
				e8 = vload(y + (__s64)i * ys);
				lo = sm_lo4(e8) * inv_lo;
				hi = sm_hi4(e8) * inv_hi;
			} else {
				e8 = vload(x + (__s64)i * xs);
				lo = (sm_lo4(e8) - mx_lo) - lg_lo;
				hi = (sm_hi4(e8) - mx_hi) - lg_hi;
			}
			*(v4sf_u *)(y + (__s64)i * ys) =
				__builtin_convertvector(v_canon(lo), v4sf);
			*(v4sf_u *)(y + (__s64)i * ys + 4) =
				__builtin_convertvector(v_canon(hi), v4sf);
		}
		eng_pace(pc, (e - i0) * 8);
	}
}

/*
 * softmax_oct_f32() on sixteen neighbouring lanes (VNPU_ENG_F_AVX512):
 * the same operations on each lane, the same sums in the same order, so
 * the same bits.
 */
static void softmax_hex_f32(__u32 mode, const float *x, __s64 xs, float *y,
			    __s64 ys, __u64 len, struct eng_pacer *pc)
{
	struct eng_sm16 s;
	__u64 i0, e;
	__u32 j;

	/* Not zeroed as a whole: the exps' pass starts the sums. */
	s.x = x;
	s.y = y;
	s.xs = xs;
	s.ys = ys;
	s.store = mode == VNPU_SOFTMAX;
	for (j = 0; j < 16; j++)
		s.mx[j] = x[j];
	for (i0 = 1; i0 < len; i0 = e) {
		e = eng_pace_end_w(pc, i0, len, 16);
		vnpu_eng_sm16_max_avx512(&s, i0, e);
		eng_pace(pc, (e - i0) * 16);
	}
	for (i0 = 0; i0 < len; i0 = e) {
		e = eng_pace_end_w(pc, i0, len, 16);
		vnpu_eng_sm16_exp_avx512(&s, i0, e);
		eng_pace(pc, (e - i0) * 16);
	}
	vnpu_eng_sm16_total_avx512(&s);
	for (j = 0; !s.store && j < 16; j++)
		s.ls[j] = m_log(s.ls[j]);
	for (i0 = 0; i0 < len; i0 = e) {
		e = eng_pace_end_w(pc, i0, len, 16);
		vnpu_eng_sm16_out_avx512(&s, i0, e);
		eng_pace(pc, (e - i0) * 16);
	}
}

/*
 * Lanes [@lo, @hi) of an f32 softmax, sixteen (dense ones on AVX-512),
 * eight (dense ones) or up to four neighbours along the innermost axis at
 * a time when it is not the softmax's; 0 when the lanes are not f32, or
 * for HARDMAX on a strided axis (softmax_lane()).
 */
static int softmax_f32(const struct eng_layer *l, __u64 lo, __u64 hi,
		       struct eng_pacer *pc)
{
	const struct vnpu_layer_softmax *at = l->attrs;
	const struct vnpu_cmd_tensor *x = &l->t[0], *y = &l->t[1];
	__u32 ax = at->axis, last = x->rank - 1;
	__u64 inner = x->dims[last], lane = lo;
	const float *xf = l->data[0];
	float *yf = l->data[1];

	if (x->dtype != VNPU_DTYPE_F32)
		return 0;
	if (ax == last && x->strides[ax] == 1 && y->strides[ax] == 1) {
		for (; lane < hi; lane++)
			softmax_lane_f32(at->mode, xf + lane_offset(x, ax, lane),
					 yf + lane_offset(y, ax, lane),
					 x->dims[ax], pc);
		return 1;
	}
	if (at->mode == VNPU_HARDMAX)
		return 0;
	while (lane < hi) {
		__u32 nl = ax == last ? 1 :
			   (__u32)eng_min(16, eng_min(inner - lane % inner,
						      hi - lane));
		int dense = x->strides[last] == 1 && y->strides[last] == 1;

		if (nl == 16 && dense && eng_act_avx512(pc->ctx)) {
			softmax_hex_f32(at->mode, xf + lane_offset(x, ax, lane),
					x->strides[ax],
					yf + lane_offset(y, ax, lane),
					y->strides[ax], x->dims[ax], pc);
			lane += nl;
			continue;
		}
		nl = eng_min(8, nl);
		if (nl == 8 && dense) {
			softmax_oct_f32(at->mode, xf + lane_offset(x, ax, lane),
					x->strides[ax],
					yf + lane_offset(y, ax, lane),
					y->strides[ax], x->dims[ax], pc);
			lane += nl;
			continue;
		}
		nl = eng_min(4, nl);
		softmax_quad_f32(at->mode, xf + lane_offset(x, ax, lane),
				 x->strides[ax], x->strides[last],
				 yf + lane_offset(y, ax, lane), y->strides[ax],
				 y->strides[last], x->dims[ax], nl, pc);
		lane += nl;
	}
	return 1;
}

int run_softmax(const struct eng_layer *l, __u64 ub, __u64 ue,
		const struct vnpu_eng_ctx *ctx)
{
	const struct vnpu_layer_softmax *at = l->attrs;
	const struct vnpu_cmd_tensor *x = &l->t[0], *y = &l->t[1];
	__u32 size = vnpu_eng_dtype_size(x->dtype);
	__u64 lo, hi, lane;
	struct eng_pacer pc;

	eng_pacer_init(&pc, ctx);
	lane_range(x, at->axis, ub, ue, &lo, &hi);
	if (lo < hi && softmax_f32(l, lo, hi, &pc))
		return 0;
	for (lane = lo; lane < hi; lane++)
		softmax_lane(at->mode, (const char *)l->data[0] +
			     lane_offset(x, at->axis, lane) * size,
			     x->strides[at->axis],
			     (char *)l->data[1] + lane_offset(y, at->axis, lane) * size,
			     y->strides[at->axis], x->dims[at->axis], x->dtype,
			     &pc);
	return 0;
}

/* ---- sums of f32 runs in lanes -------------------------------------- */

/*
 * A running double sum of f32 elements in eight lanes, element i of a run
 * into lane i % 8, four lanes a vector: the same bits however a pause cuts
 * the run into spans (and so however the layer is split), twice the
 * additions in flight of one vector.
 */
struct eng_lanes {
	v4df lo, hi;
};

enum lanes_fn { LANES_SUM, LANES_ABS, LANES_DEV2 };

static inline v4df lanes_term(v4df v, enum lanes_fn fn, double c)
{
	if (fn == LANES_ABS)
		return (v4df)((v4di)v & 0x7fffffffffffffffll);
	if (fn == LANES_DEV2)
		return (v - c) * (v - c);
	return v;
}

/* Element @i of a run, @v, into its lane. */
static inline void lanes_one(v4df *lo, v4df *hi, __u64 i, double v)
{
	if ((i & 7) < 4)
		(*lo)[i & 3] += v;
	else
		(*hi)[i & 3] += v;
}

/* Elements [@i, @e) of the run at @x: each, its |x| or its (x - @c)^2. */
static void lanes_add(struct eng_lanes *s, const float *x, __u64 i, __u64 e,
		      enum lanes_fn fn, double c)
{
	v4df lo = s->lo, hi = s->hi;

	for (; i < e && (i & 7); i++)
		lanes_one(&lo, &hi, i, lanes_term(v_splat(x[i]), fn, c)[0]);
	for (; i + 8 <= e; i += 8) {
		lo += lanes_term(__builtin_convertvector(*(const v4sf_u *)(x + i),
							 v4df), fn, c);
		hi += lanes_term(__builtin_convertvector(*(const v4sf_u *)(x + i + 4),
							 v4df), fn, c);
	}
	for (; i < e; i++)
		lanes_one(&lo, &hi, i, lanes_term(v_splat(x[i]), fn, c)[0]);
	s->lo = lo;
	s->hi = hi;
}

static double lanes_total(const struct eng_lanes *s)
{
	v4df v = s->lo + s->hi;

	return (v[0] + v[1]) + (v[2] + v[3]);
}

/*
 * lanes_add() of two runs of @len at @x0 and @x1 (a multiple of 8) into
 * @s0 and @s1 from empty, in one loop: four chains of additions in
 * flight, where one run's two left each addition's latency exposed.
 */
static void lanes_add2(struct eng_lanes *s0, struct eng_lanes *s1,
		       const float *x0, const float *x1, __u64 len,
		       enum lanes_fn fn, double c0, double c1)
{
	v4df lo0 = v_splat(0), hi0 = v_splat(0), lo1 = v_splat(0);
	v4df hi1 = v_splat(0);
	__u64 i;

	for (i = 0; i < len; i += 8) {
		lo0 += lanes_term(__builtin_convertvector(*(const v4sf_u *)(x0 + i),
							  v4df), fn, c0);
		hi0 += lanes_term(__builtin_convertvector(*(const v4sf_u *)(x0 + i + 4),
							  v4df), fn, c0);
		lo1 += lanes_term(__builtin_convertvector(*(const v4sf_u *)(x1 + i),
							  v4df), fn, c1);
		hi1 += lanes_term(__builtin_convertvector(*(const v4sf_u *)(x1 + i + 4),
							  v4df), fn, c1);
	}
	s0->lo = lo0;
	s0->hi = hi0;
	s1->lo = lo1;
	s1->hi = hi1;
}

/* ---- NORM ------------------------------------------------------------ */

static float param(const struct eng_layer *l, __u32 i, __u64 c)
{
	return ldf(l->data[i], (__s64)c * l->t[i].strides[0], l->t[i].dtype);
}

/*
 * The elements of a block of @x and @y: dims [@from, rank) at offsets
 * @xo and @yo, with up to two parameter tensors broadcast against @x.
 */
struct norm_block {
	struct eng_iter it;
	__u32 dt;	/* the storage type of all the tensors */
	double sum, mean, inv;
	float scale, bias;
	int per_elem;	/* scale/bias are tensors (operands 2 and 3) */
	int pass;
	struct eng_pacer *pc;
	struct eng_lanes lanes;	/* the sums of dense f32 runs */
};

static void norm_block_init(struct norm_block *b, const struct eng_layer *l,
			    __u32 from, __s64 xo, __s64 yo, __u32 nparams)
{
	const struct vnpu_cmd_tensor *x = &l->t[0], *y = &l->t[l->n - 1];
	__s64 st[VNPU_MAX_DIMS];
	__u32 d, o, r = x->rank - from, size = vnpu_eng_dtype_size(x->dtype);

	b->it.rank = r ? r : 1;
	b->it.nops = 2 + nparams;
	for (d = 0; d < VNPU_MAX_DIMS; d++) {
		b->it.dims[d] = 1;
		for (o = 0; o < ITER_MAX_OPS; o++)
			b->it.st[o][d] = 0;
	}
	b->dt = x->dtype;
	for (d = 0; from + d < x->rank && from + d < VNPU_MAX_DIMS; d++) {
		b->it.dims[d] = x->dims[from + d];
		b->it.st[0][d] = x->strides[from + d] * size;
		b->it.st[1][d] = y->strides[from + d] * size;
	}
	b->it.base[0] = (char *)l->data[0] + xo * size;
	b->it.base[1] = (char *)l->data[l->n - 1] + yo * size;
	for (o = 0; o < nparams; o++) {
		vnpu_eng_bcast_strides(&l->t[1 + o], x, st);
		for (d = 0; from + d < x->rank && from + d < VNPU_MAX_DIMS; d++)
			b->it.st[2 + o][d] = st[from + d] * size;
		b->it.base[2 + o] = l->data[1 + o];
	}
	b->per_elem = nparams > 0;
	b->sum = 0;
}

/* Elements [@i, @e) of a run of @b. */
static void norm_span(struct norm_block *b, char *const *p, const __s64 *st,
		      __u64 i, __u64 e)
{
	for (; i < e; i++) {
		double v = ldf(p[0] + (__s64)i * st[0], 0, b->dt), r;

		if (b->pass == 0) {
			b->sum += v;
			continue;
		}
		if (b->pass == 1) {
			b->sum += (v - b->mean) * (v - b->mean);
			continue;
		}
		r = (v - b->mean) * b->inv;
		if (b->per_elem) {
			r *= ldf(p[2] + (__s64)i * st[2], 0, b->dt);
			if (b->it.nops > 3)
				r += ldf(p[3] + (__s64)i * st[3], 0, b->dt);
		} else {
			r = r * b->scale + b->bias;
		}
		stf(p[1] + (__s64)i * st[1], 0, b->dt, (float)r);
	}
}

/* Runs of f32 tensors all dense along the run (a LayerNorm's rows). */
static int norm_dense_f32(const struct norm_block *b, const __s64 *st)
{
	return b->dt == VNPU_DTYPE_F32 && st[0] == 4 && st[1] == 4 &&
	       (!b->per_elem || (st[2] == 4 && (b->it.nops < 4 || st[3] == 4)));
}

/*
 * norm_span() of dense f32 runs: the sums in lanes, the outputs four at a
 * time with norm_span()'s operations in the same order.
 */
static void norm_span_f32(struct norm_block *b, char *const *p, __u64 i,
			  __u64 e)
{
	const float *x = (const float *)p[0], *sc = 0, *bi = 0;
	float *y = (float *)p[1];
	v4df r;

	if (b->pass < 2) {
		lanes_add(&b->lanes, x, i, e, b->pass ? LANES_DEV2 : LANES_SUM,
			  b->mean);
		return;
	}
	if (b->per_elem)
		sc = (const float *)p[2];
	if (b->per_elem && b->it.nops > 3)
		bi = (const float *)p[3];
	for (; i + 4 <= e; i += 4) {
		r = (__builtin_convertvector(*(const v4sf_u *)(x + i), v4df) -
		     b->mean) * b->inv;
		if (!b->per_elem) {
			r = r * (double)b->scale + (double)b->bias;
		} else {
			r *= __builtin_convertvector(*(const v4sf_u *)(sc + i), v4df);
			if (bi)
				r += __builtin_convertvector(*(const v4sf_u *)(bi + i),
							     v4df);
		}
		*(v4sf_u *)(y + i) = __builtin_convertvector(r, v4sf);
	}
	norm_span(b, p, (const __s64[]){ 4, 4, 4, 4 }, i, e);
}

static void norm_row(const void *arg, char *const *p, const __s64 *st, __u64 n)
{
	struct norm_block *b = (struct norm_block *)arg;
	int dense = norm_dense_f32(b, st);
	__u64 i, e;

	for (i = 0; i < n; i = e) {
		e = eng_pace_end(b->pc, i, n);
		if (dense)
			norm_span_f32(b, p, i, e);
		else
			norm_span(b, p, st, i, e);
		eng_pace(b->pc, e - i);
	}
}

/* One pass over the block: the sum of its elements or of their squares. */
static double norm_pass(struct norm_block *b, __u64 len, int pass)
{
	b->pass = pass;
	b->sum = 0;
	b->lanes.lo = v_splat(0);
	b->lanes.hi = v_splat(0);
	iter_run(&b->it, 0, len, norm_row, b);
	return b->sum + lanes_total(&b->lanes);
}

/* Mean and variance normalization of one block (INSTANCE, LAYER). */
static void norm_moments(struct norm_block *b, __u64 len, __u32 eps_bits)
{
	double sum = norm_pass(b, len, 0);

	b->mean = len ? sum / (double)len : 0;
	sum = norm_pass(b, len, 1);
	b->inv = 1.0 / m_sqrt((len ? sum / (double)len : 0) +
			      (double)f32_of(eps_bits));
	b->pass = 2;
	iter_run(&b->it, 0, len, norm_row, b);
}

/* BATCH and INSTANCE: one (n, c) plane per row. */
static void norm_planes(const struct eng_layer *l, __u64 lo, __u64 hi,
			struct eng_pacer *pc)
{
	const struct vnpu_layer_norm *at = l->attrs;
	const struct vnpu_cmd_tensor *x = &l->t[0], *y = &l->t[l->n - 1];
	__u64 len, r;
	struct norm_block b;

	if (lo >= hi)
		return;
	len = vnpu_eng_numel(x) / (x->dims[0] * x->dims[1]);
	for (r = lo; r < hi; r++) {
		__u64 img = r / x->dims[1], c = r % x->dims[1];

		norm_block_init(&b, l, 2,
				(__s64)img * x->strides[0] + (__s64)c * x->strides[1],
				(__s64)img * y->strides[0] + (__s64)c * y->strides[1],
				0);
		b.pc = pc;
		b.scale = param(l, 1, c);
		b.bias = param(l, 2, c);
		if (at->mode == VNPU_NORM_INSTANCE) {
			norm_moments(&b, len, at->epsilon);
			continue;
		}
		b.mean = param(l, 3, c);
		b.inv = 1.0 / m_sqrt((double)param(l, 4, c) +
				     (double)f32_of(at->epsilon));
		b.pass = 2;
		iter_run(&b.it, 0, len, norm_row, &b);
	}
}

/* Whether @t is dense f32: row r of @len floats at r * @len. */
static int dense_f32(const struct vnpu_cmd_tensor *t)
{
	__s64 step = 1;
	int d;

	for (d = (int)t->rank - 1; d >= 0; step *= t->dims[d], d--)
		if (t->dims[d] != 1 && t->strides[d] != step)
			return 0;
	return t->dtype == VNPU_DTYPE_F32;
}

/*
 * Asks for the @len floats of X at @x and, to own them, of Y at @y: the
 * next row's, during this one's three passes. A split GEMM before wrote
 * X's row on two CPUs and both read Y's last time: with the CPUs on two
 * CCDs, the stream of misses that reading X and storing Y's lines
 * caused tripled the time of BERT's LayerNorms (0.12 ms, 0.05 on one
 * CCD).
 */
static void norm_row_ahead(const float *x, float *y, __u64 len)
{
	__u64 i;

	for (i = 0; i < len; i += 64 / sizeof(float)) {
		__builtin_prefetch(x + i);
		__builtin_prefetch(y + i, 1);
	}
}

/*
 * Whether LAYER's rows of @len, the last dim, are dense f32 in X, Y and
 * its parameters (a row each), @len a multiple of 8 whose pair of rows a
 * pause need not cut (norm_rows_f32()).
 */
static int norm_rows_dense(const struct eng_layer *l, __u32 axis, __u64 len)
{
	__u32 i;

	if (len % 8 || 2 * len > ENG_PAUSE_READS || axis + 1 != l->t[0].rank)
		return 0;
	for (i = 0; i < l->n; i++)
		if (!dense_f32(&l->t[i]) ||
		    (i && i < l->n - 1 && vnpu_eng_numel(&l->t[i]) != len))
			return 0;
	return 1;
}

/* A row's outputs from its @mean and @inv: norm_span_f32()'s pass 2. */
static void norm_row_out(const float *x, float *y, const float *sc,
			 const float *bi, __u64 len, double mean, double inv)
{
	__u64 i;
	v4df r;

	for (i = 0; i < len; i += 4) {
		r = (__builtin_convertvector(*(const v4sf_u *)(x + i), v4df) -
		     mean) * inv;
		r *= __builtin_convertvector(*(const v4sf_u *)(sc + i), v4df);
		if (bi)
			r += __builtin_convertvector(*(const v4sf_u *)(bi + i),
						     v4df);
		*(v4sf_u *)(y + i) = __builtin_convertvector(r, v4sf);
	}
}

/*
 * LAYER's rows [@lo, @hi) where norm_rows_dense(), two at a time:
 * norm_moments()' passes on each, the sums of both rows in one loop
 * (lanes_add2()), and the next pair's lines asked for meanwhile. The
 * same operations in the same order, so the same bits; BERT's LayerNorm
 * of 768 took 0.88 ns an element on Zen 4 a row at a time, its six
 * chains of additions (the two sums' lanes, then the output pass) one
 * after another.
 */
static void norm_rows_f32(const struct eng_layer *l, __u64 lo, __u64 hi,
			  __u64 len, struct eng_pacer *pc)
{
	const struct vnpu_layer_norm *at = l->attrs;
	const float *sc = l->data[1], *bi = l->n > 3 ? l->data[2] : 0;
	const float *x = (const float *)l->data[0] + lo * len;
	float *y = (float *)l->data[l->n - 1] + lo * len;
	double eps = (double)f32_of(at->epsilon), mean[2], inv[2], sum;
	struct eng_lanes s[2];
	__u64 r, k, rows;

	for (r = lo; r < hi; r += rows, x += rows * len, y += rows * len) {
		rows = hi - r >= 2 ? 2 : 1;
		if (r + rows < hi)
			norm_row_ahead(x + rows * len, y + rows * len,
				       eng_min(hi - r - rows, 2) * len);
		lanes_add2(&s[0], &s[1], x, x + (rows - 1) * len, len,
			   LANES_SUM, 0, 0);
		for (k = 0; k < rows; k++) {
			sum = lanes_total(&s[k]);
			mean[k] = sum / (double)len;
		}
		eng_pace(pc, rows * len);
		lanes_add2(&s[0], &s[1], x, x + (rows - 1) * len, len,
			   LANES_DEV2, mean[0], mean[rows - 1]);
		for (k = 0; k < rows; k++) {
			sum = lanes_total(&s[k]);
			inv[k] = 1.0 / m_sqrt(sum / (double)len + eps);
		}
		eng_pace(pc, rows * len);
		for (k = 0; k < rows; k++)
			norm_row_out(x + k * len, y + k * len, sc, bi, len,
				     mean[k], inv[k]);
		eng_pace(pc, rows * len);
	}
}

static void norm_layer(const struct eng_layer *l, __u64 lo, __u64 hi,
		       struct eng_pacer *pc)
{
	const struct vnpu_layer_norm *at = l->attrs;
	const struct vnpu_cmd_tensor *x = &l->t[0], *y = &l->t[l->n - 1];
	__u64 len = 1, coord[VNPU_MAX_DIMS] = {}, r;
	struct norm_block b;
	__u32 d;

	for (d = at->axis; d < x->rank; d++)
		len *= x->dims[d];
	if (len && norm_rows_dense(l, at->axis, len)) {
		norm_rows_f32(l, lo, hi, len, pc);
		return;
	}
	for (r = lo; r < hi; r++) {
		__u64 rem = r;
		int dd;

		for (dd = (int)at->axis - 1; dd >= 0; dd--) {
			coord[dd] = rem % x->dims[dd];
			rem /= x->dims[dd];
		}
		norm_block_init(&b, l, at->axis, offset_of(x, coord),
				offset_of(y, coord), l->n - 2);
		b.pc = pc;
		norm_moments(&b, len, at->epsilon);
	}
}

/*
 * LRN: x / (bias + alpha / size * sum of squares in the window) ^ beta, for
 * channels [@c0, @c1) of a lane of @len.
 */
static void lrn_lane(const struct vnpu_layer_norm *at, const void *xl,
		     __s64 xs, void *yl, __s64 ys, __u64 len, __u64 c0,
		     __u64 c1, __u32 dt)
{
	double al = f32_of(at->alpha), be = f32_of(at->beta);
	double bias = f32_of(at->bias);
	__u64 i, j;

	/* Window [c - (size - 1) / 2, c + size / 2]. */
	for (i = c0; i < c1; i++) {
		__s64 c0 = (__s64)i - (__s64)(at->size - 1) / 2;
		__s64 c1 = (__s64)i + at->size / 2;
		double sq = 0, v = ldf(xl, (__s64)i * xs, dt);

		for (j = c0 < 0 ? 0 : c0; (__s64)j <= c1 && j < len; j++) {
			double w = ldf(xl, (__s64)j * xs, dt);

			sq += w * w;
		}
		stf(yl, (__s64)i * ys, dt,
		    (float)(v / m_pow(bias + al / at->size * sq, be)));
	}
}

static void lp_lane(__u32 p, const void *xl, __s64 xs, void *yl, __s64 ys,
		    __u64 len, __u32 dt, struct eng_pacer *pc)
{
	double norm = 0;
	__u64 i, i0, e;

	for (i0 = 0; i0 < len; i0 = e) {
		e = eng_pace_end(pc, i0, len);
		for (i = i0; i < e; i++) {
			double v = ldf(xl, (__s64)i * xs, dt);

			norm += p == 1 ? m_fabs(v) : v * v;
		}
		eng_pace(pc, e - i0);
	}
	if (p == 2)
		norm = m_sqrt(norm);
	for (i0 = 0; i0 < len; i0 = e) {
		e = eng_pace_end(pc, i0, len);
		for (i = i0; i < e; i++)
			stf(yl, (__s64)i * ys, dt, norm == 0 ? 0.0f :
			    (float)(ldf(xl, (__s64)i * xs, dt) / norm));
		eng_pace(pc, e - i0);
	}
}

/*
 * Lanes [@b->r0, @b->r1) along @axis, LRN's channels [@b->c0, @b->c1) of
 * each (LpNormalization's units hold whole lanes).
 */
static void norm_lanes(const struct eng_layer *l, __u32 axis,
		       const struct eng_block *b, struct eng_pacer *pc)
{
	const struct vnpu_layer_norm *at = l->attrs;
	const struct vnpu_cmd_tensor *x = &l->t[0], *y = &l->t[1];
	__u32 size = vnpu_eng_dtype_size(x->dtype);
	__u64 lane;

	for (lane = b->r0; lane < b->r1; lane++) {
		const char *xl = (const char *)l->data[0] +
				 lane_offset(x, axis, lane) * size;
		char *yl = (char *)l->data[1] + lane_offset(y, axis, lane) * size;

		if (at->mode == VNPU_NORM_LRN)
			lrn_lane(at, xl, x->strides[axis], yl, y->strides[axis],
				 x->dims[axis], b->c0, b->c1, x->dtype);
		else
			lp_lane(at->p, xl, x->strides[axis], yl, y->strides[axis],
				x->dims[axis], x->dtype, pc);
	}
}

/*
 * LRN: units of eng_block_units() over lanes of C channels, matching
 * norm_units() in vnpu_eng_units.c.
 */
static void norm_lrn(const struct eng_layer *l, __u64 ub, __u64 ue,
		     struct eng_pacer *pc)
{
	const struct vnpu_layer_norm *at = l->attrs;
	const struct vnpu_cmd_tensor *x = &l->t[0];
	__u64 c = x->dims[1], lanes = c ? vnpu_eng_numel(x) / c : 0, u;
	struct eng_block b;

	for (u = ub; u < ue; u++) {
		eng_block_of(lanes, c, eng_min(at->size, c), u, &b);
		norm_lanes(l, 1, &b, pc);
	}
}

int run_norm(const struct eng_layer *l, __u64 ub, __u64 ue,
	     const struct vnpu_eng_ctx *ctx)
{
	const struct vnpu_layer_norm *at = l->attrs;
	const struct vnpu_cmd_tensor *x = &l->t[0];
	__u64 lo, hi, rows = 1, numel = vnpu_eng_numel(x);
	struct eng_pacer pc;
	__u32 d;

	eng_pacer_init(&pc, ctx);
	switch (at->mode) {
	case VNPU_NORM_BATCH:
	case VNPU_NORM_INSTANCE:
		rows = x->dims[0] * x->dims[1];
		row_range(rows, rows ? numel / rows : 0, ub, ue, &lo, &hi);
		norm_planes(l, lo, hi, &pc);
		break;
	case VNPU_NORM_LAYER:
		for (d = 0; d < at->axis; d++)
			rows *= x->dims[d];
		row_range(rows, rows ? numel / rows : 0, ub, ue, &lo, &hi);
		norm_layer(l, lo, hi, &pc);
		break;
	case VNPU_NORM_LRN:
		norm_lrn(l, ub, ue, &pc);
		break;
	default: {
		struct eng_block b = { .c1 = x->dims[at->axis] };

		lane_range(x, at->axis, ub, ue, &b.r0, &b.r1);
		norm_lanes(l, at->axis, &b, &pc);
		break;
	}
	}
	return 0;
}

/* ---- REDUCE and ARGREDUCE ------------------------------------------- */

struct reduce_acc {
	__u32 func, dtype;
	int pass;
	double d, mx;
	__s64 i;
	__u64 count;
	struct eng_pacer *pc;
	struct eng_lanes lanes;	/* the sums of dense f32 runs */
	int laned;	/* lanes holds the sum */
};

/* The sums of dense f32 runs, which reduce_lanes() takes in lanes. */
static int reduce_dense_f32(const struct reduce_acc *a, __s64 st)
{
	if (a->dtype != VNPU_DTYPE_F32 || st != 4)
		return 0;
	switch (a->func) {
	case VNPU_REDUCE_SUM:
	case VNPU_REDUCE_MEAN:
	case VNPU_REDUCE_L1:
	case VNPU_REDUCE_L2:
	case VNPU_REDUCE_SUM_SQUARE:
		return 1;
	default:
		return 0;
	}
}

static void reduce_lanes(struct reduce_acc *a, const char *p, __u64 i,
			 __u64 e)
{
	enum lanes_fn fn = a->func == VNPU_REDUCE_L1 ? LANES_ABS :
			   a->func == VNPU_REDUCE_L2 ||
			   a->func == VNPU_REDUCE_SUM_SQUARE ? LANES_DEV2 :
			   LANES_SUM;

	lanes_add(&a->lanes, (const float *)p, i, e, fn, 0);
}

/* @n elements @st bytes apart from @p into @a. */
static void reduce_span(struct reduce_acc *a, const char *p, __s64 st,
			__u64 n)
{
	double x[ENG_BLOCK];
	__s64 xi[ENG_BLOCK];
	__u64 i, j;
	int uns = a->dtype == VNPU_DTYPE_U64;

	for (i = 0; i < n; i += ENG_BLOCK) {
		__u32 m = (__u32)eng_min(ENG_BLOCK, n - i);
		const char *src = p + (__s64)i * st;

		if (!dt_float(a->dtype)) {
			load_i(xi, src, st, m, a->dtype);
			for (j = 0; j < m; j++) {
				__s64 v = xi[j];

				switch (a->func) {
				case VNPU_REDUCE_MAX:
					a->i = bin_one_i(VNPU_BIN_MAX, a->i, v, uns);
					break;
				case VNPU_REDUCE_MIN:
					a->i = bin_one_i(VNPU_BIN_MIN, a->i, v, uns);
					break;
				case VNPU_REDUCE_PROD:
					a->i = (__s64)((__u64)a->i * (__u64)v);
					break;
				case VNPU_REDUCE_L1:
					a->i += v < 0 && !uns ? -v : v;
					break;
				case VNPU_REDUCE_SUM_SQUARE:
					a->i = (__s64)((__u64)a->i +
						       (__u64)v * (__u64)v);
					break;
				default:
					a->i = (__s64)((__u64)a->i + (__u64)v);
					break;
				}
			}
			continue;
		}
		load_d(x, src, st, m, a->dtype);
		for (j = 0; j < m; j++) {
			double v = x[j];

			switch (a->func) {
			case VNPU_REDUCE_MAX:
				a->d = nan_max(a->d, v, 1);
				break;
			case VNPU_REDUCE_MIN:
				a->d = nan_max(a->d, v, 0);
				break;
			case VNPU_REDUCE_PROD:
				a->d *= v;
				break;
			case VNPU_REDUCE_L1:
				a->d += m_fabs(v);
				break;
			case VNPU_REDUCE_L2:
			case VNPU_REDUCE_SUM_SQUARE:
				a->d += v * v;
				break;
			case VNPU_REDUCE_LOG_SUM_EXP:
				if (a->pass == 0)
					a->mx = nan_max(a->mx, v, 1);
				else
					a->d += m_exp(v - a->mx);
				break;
			default:
				a->d += v;
				break;
			}
		}
	}
}

/*
 * MAX (@max) or MIN of a dense f32 run into @a->d, as reduce_span() takes
 * it in order: the extreme of eight lanes, then of the last few, is the
 * value; among equal values (zeros of either sign) reduce_span() keeps
 * the last, so a zero extreme takes the last zero's sign. A run with a
 * NaN goes to reduce_span() (the first NaN).
 */
static void reduce_ext_f32(struct reduce_acc *a, const float *p, __u64 n,
			   int max)
{
	v8sf m, x;
	v8si nan, t;
	float e, l[8];
	__u64 i;

	if (n < 8) {
		reduce_span(a, (const char *)p, 4, n);
		return;
	}
	m = vload(p);
	nan = m != m;
	for (i = 8; i + 8 <= n; i += 8) {
		x = vload(p + i);
		nan |= x != x;
		t = max ? x > m : x < m;
		m = (v8sf)(((v8si)x & t) | ((v8si)m & ~t));
	}
	vstore(l, m);
	e = l[0];
	for (i = 1; i < 8; i++)
		e = (max ? l[i] > e : l[i] < e) ? l[i] : e;
	for (i = n / 8 * 8; i < n; i++) {
		if (p[i] != p[i])
			nan[0] = -1;
		e = (max ? p[i] > e : p[i] < e) ? p[i] : e;
	}
	for (i = 0; i < 8; i++)
		if (nan[i]) {
			reduce_span(a, (const char *)p, 4, n);
			return;
		}
	for (i = n; e == 0 && i-- > 0;)
		if (p[i] == 0) {
			e = p[i];
			break;
		}
	a->d = nan_max(a->d, e, max);
}

static void reduce_row(const void *arg, char *const *p, const __s64 *st,
		       __u64 n)
{
	struct reduce_acc *a = (struct reduce_acc *)arg;
	/* A local copy, which the pauses cannot reach: kept in registers. */
	struct reduce_acc acc;
	__u64 i, e;

	if (reduce_dense_f32(a, st[0])) {
		a->laned = 1;
		for (i = 0; i < n; i = e) {
			e = eng_pace_end(a->pc, i, n);
			reduce_lanes(a, p[0], i, e);
			eng_pace(a->pc, e - i);
		}
		return;
	}
	if (a->dtype == VNPU_DTYPE_F32 && st[0] == 4 && n >= 8 &&
	    (a->func == VNPU_REDUCE_MAX || a->func == VNPU_REDUCE_MIN)) {
		for (i = 0; i < n; i = e) {
			e = eng_pace_end(a->pc, i, n);
			reduce_ext_f32(a, (const float *)p[0] + i, e - i,
				       a->func == VNPU_REDUCE_MAX);
			eng_pace(a->pc, e - i);
		}
		return;
	}
	/* Short runs (a reduction over an outer axis) need no copy. */
	if (n < ENG_BLOCK) {
		reduce_span(a, p[0], st[0], n);
		eng_pace(a->pc, n);
		return;
	}
	acc = *a;
	for (i = 0; i < n; i = e) {
		e = eng_pace_end(acc.pc, i, n);
		reduce_span(&acc, p[0] + (__s64)i * st[0], st[0], e - i);
		eng_pace(acc.pc, e - i);
	}
	*a = acc;
}

static void reduce_init(struct reduce_acc *a)
{
	int uns = a->dtype == VNPU_DTYPE_U64;
	__u32 size = vnpu_eng_dtype_size(a->dtype);

	a->d = 0;
	a->i = 0;
	a->mx = -m_inf();
	a->pass = 0;
	a->lanes.lo = v_splat(0);
	a->lanes.hi = v_splat(0);
	a->laned = 0;
	if (a->func == VNPU_REDUCE_PROD) {
		a->d = 1;
		a->i = 1;
	} else if (a->func == VNPU_REDUCE_MAX) {
		a->d = -m_inf();
		/* The lowest value of the type, loaded like its elements. */
		a->i = uns || dt_unsigned(a->dtype) ? 0 :
		       (__s64)(~0ull << (8 * size - 1));
	} else if (a->func == VNPU_REDUCE_MIN) {
		a->d = m_inf();
		a->i = uns ? -1 : dt_unsigned(a->dtype) ?
		       (__s64)((1ull << (8 * size)) - 1) :
		       (__s64)((1ull << (8 * size - 1)) - 1);
	}
}

int run_reduce(const struct eng_layer *l, __u64 ub, __u64 ue,
	       const struct vnpu_eng_ctx *ctx)
{
	const struct vnpu_layer_reduce *at = l->attrs;
	const struct vnpu_cmd_tensor *x = &l->t[0], *y = &l->t[1];
	__u64 numel_y = vnpu_eng_numel(y), coord[VNPU_MAX_DIMS];
	__u64 len = numel_y ? vnpu_eng_numel(x) / numel_y : 0, lo, hi, e;
	struct reduce_acc a = { .func = at->func, .dtype = x->dtype };
	__u32 size = vnpu_eng_dtype_size(x->dtype), d;
	struct eng_pacer pc;
	struct eng_iter it;
	double r;

	eng_pacer_init(&pc, ctx);
	a.pc = &pc;
	row_range(numel_y, len, ub, ue, &lo, &hi);
	it.rank = x->rank ? x->rank : 1;
	it.nops = 1;
	for (d = 0; d < VNPU_MAX_DIMS; d++) {
		int red = d < x->rank && ((at->axes >> d) & 1);

		it.dims[d] = red ? x->dims[d] : 1;
		it.st[0][d] = red ? x->strides[d] * size : 0;
	}
	if (lo < hi)
		coords_of(y, lo, coord);
	for (e = lo; e < hi; e++, coords_next(y, coord)) {
		char *out = (char *)l->data[1] + offset_of(y, coord) * size;

		it.base[0] = (char *)l->data[0] + offset_of(x, coord) * size;
		reduce_init(&a);
		iter_run(&it, 0, len, reduce_row, &a);
		if (at->func == VNPU_REDUCE_LOG_SUM_EXP) {
			a.pass = 1;
			if (a.mx == a.mx && a.mx != m_inf() && a.mx != -m_inf())
				iter_run(&it, 0, len, reduce_row, &a);
			else
				a.d = 1;
		}
		if (a.laned)
			a.d += lanes_total(&a.lanes);
		if (!dt_float(x->dtype)) {
			if (at->func == VNPU_REDUCE_MEAN)
				a.i = len ? a.i / (__s64)len : 0;
			store_i(out, 0, &a.i, 1, y->dtype);
			continue;
		}
		r = a.d;
		switch (at->func) {
		case VNPU_REDUCE_MEAN:
			r = a.d / (double)len;
			break;
		case VNPU_REDUCE_L2:
			r = m_sqrt(a.d);
			break;
		case VNPU_REDUCE_LOG_SUM:
			r = m_log(a.d);
			break;
		case VNPU_REDUCE_LOG_SUM_EXP:
			r = a.mx == -m_inf() || a.mx != a.mx ? a.mx :
			    a.mx + m_log(a.d);
			break;
		default:
			break;
		}
		store_d(out, 0, &r, 1, y->dtype);
	}
	return 0;
}

int run_argreduce(const struct eng_layer *l, __u64 ub, __u64 ue,
		  const struct vnpu_eng_ctx *ctx)
{
	const struct vnpu_layer_argreduce *at = l->attrs;
	const struct vnpu_cmd_tensor *x = &l->t[0], *y = &l->t[1];
	__u32 size = vnpu_eng_dtype_size(x->dtype), ax = at->axis;
	int last = !!(at->flags & VNPU_ARG_F_LAST);
	int uns = x->dtype == VNPU_DTYPE_U64;
	__u32 op = at->min ? VNPU_BIN_LESS : VNPU_BIN_GREATER;
	__s64 xs = x->strides[ax] * size;
	__u64 lo, hi, lane, i, i0, e;
	struct eng_pacer pc;

	eng_pacer_init(&pc, ctx);
	lane_range(x, ax, ub, ue, &lo, &hi);
	for (lane = lo; lane < hi; lane++) {
		const char *xl = (const char *)l->data[0] +
				 lane_offset(x, ax, lane) * size;
		__s64 *yl = (__s64 *)l->data[1] + lane_offset(y, ax, lane);
		__s64 best = 0, bi = 0, vi;
		double bd = 0, vd;

		for (i0 = 0; i0 < x->dims[ax]; i0 = e) {
			e = eng_pace_end(&pc, i0, x->dims[ax]);
			for (i = i0; i < e; i++) {
				const char *p = xl + (__s64)i * xs;
				int better;

				if (dt_float(x->dtype)) {
					load_d(&vd, p, 0, 1, x->dtype);
					better = i == 0 || (last && vd == bd) ||
						 (at->min ? vd < bd : vd > bd);
					if (better)
						bd = vd;
				} else {
					load_i(&vi, p, 0, 1, x->dtype);
					better = i == 0 || (last && vi == best) ||
						 bin_one_i(op, vi, best, uns);
					if (better)
						best = vi;
				}
				if (better)
					bi = (__s64)i;
			}
			eng_pace(&pc, e - i0);
		}
		*yl = bi;
	}
	return 0;
}

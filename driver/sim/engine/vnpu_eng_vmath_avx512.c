// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The float activations of vnpu_eng_vmath.h on 16 lanes (built with
 * -mavx512f -mfma, run only when the caller sets VNPU_ENG_F_AVX512): the
 * same operations as the AVX2 build's 8 lanes, so the same bits.
 */
#include "vnpu_eng_vmath16.h"

/* exp once more without fused multiply-adds: Softmax's (vmu8_exp()). */
#define VM_FMA(a, b, c) ((a) * (b) + (c))
#define VM(name) vmu16_##name
#include "vnpu_eng_vmath.h"
#undef VM_FMA
#undef VM

typedef float v16sf_u __attribute__((vector_size(64), aligned(4), may_alias));

/*
 * SiLU (@silu) or the logistic function at bf16's grade
 * (vm16_logistic_bf16()) on @rows runs of @n floats at @x into @y (which
 * may be @x), @rs floats apart; each run's tail under a mask.
 */
static __attribute__((__always_inline__)) inline
void logistic_bf16_rows(const float *x, float *y, __u64 n, __u64 rows,
			__s64 rs, const int silu)
{
	__u16 m = (__u16)((1u << (n % 16)) - 1);
	__u64 r, i;
	v16sf v;

	for (r = 0; r < rows; r++, x += rs, y += rs) {
		for (i = 0; i + 16 <= n; i += 16) {
			v = *(const v16sf_u *)(x + i);
			*(v16sf_u *)(y + i) =
				vm16_logistic_bf16(v, silu ? v : vm16_splat(1.0f));
		}
		if (!m)
			continue;
		v = __builtin_ia32_loadups512_mask(x + i, (v16sf){}, m);
		v = vm16_logistic_bf16(v, silu ? v : vm16_splat(1.0f));
		__builtin_ia32_storeups512_mask(y + i, v, m);
	}
}

static __attribute__((__noinline__))
void silu_bf16_rows(const float *x, float *y, __u64 n, __u64 rows, __s64 rs)
{
	logistic_bf16_rows(x, y, n, rows, rs, 1);
}

static __attribute__((__noinline__))
void sigmoid_bf16_rows(const float *x, float *y, __u64 n, __u64 rows,
		       __s64 rs)
{
	logistic_bf16_rows(x, y, n, rows, rs, 0);
}

/*
 * The lanes a tile left to finish after SiLU (@silu) or the logistic
 * function at bf16's grade in its registers (ENG_TILE_SILU16,
 * ENG_TILE_SIGMOID16): among @rows runs of @n floats at @y, @rs floats
 * apart, those that hold the sum itself, |z| from VM_LOGISTIC_NORMAL up
 * or a NaN, through vm16_logistic(), as vm16_logistic_bf16() takes them.
 * The tile's own results stay below VM_LOGISTIC_NORMAL in magnitude (a
 * logistic at most 1; z times vrcp14ps(1) = 1 for z above 17), so which
 * lanes are left shows in their values.
 */
void vnpu_eng_logistic_far_avx512(int silu, float *y, __s64 rs, __u64 rows,
				  __u64 n)
{
	__u64 r, i;

	for (r = 0; r < rows; r++, y += rs)
		for (i = 0; i < n; i += 16) {
			__u16 m = n - i >= 16 ? 0xffff :
				  (__u16)((1u << (n - i)) - 1);
			v16sf v = __builtin_ia32_loadups512_mask(y + i, (v16sf){}, m);
			v16si sign, near;

			near = vm16_abs(v, &sign) < VM_LOGISTIC_NORMAL;
			if (vm16_all_set(near))
				continue;
			v = vm16_sel(near, v,
				     vm16_logistic(v, silu ? v : vm16_splat(1.0f)));
			__builtin_ia32_storeups512_mask(y + i, v, m);
		}
}

/*
 * With @bf16, SiLU or the logistic function at bf16's grade; else @func
 * as vm16_act_map_rows() gives it (f32's bits). True where it took @func.
 */
static int act_bf16(__u32 func, const float *x, float *y, __u64 n,
		    __u64 rows, __s64 rs, int bf16)
{
	if (bf16 && func == VNPU_ACT_SILU)
		silu_bf16_rows(x, y, n, rows, rs);
	else if (bf16 && func == VNPU_ACT_SIGMOID)
		sigmoid_bf16_rows(x, y, n, rows, rs);
	else
		return 0;
	return 1;
}

/*
 * SiLU and the logistic function, the common ones, in loops of their own;
 * the others through one switch a vector (their own loops' frames would
 * pass the kernel's 2 KiB).
 */
void vnpu_eng_act_avx512(__u32 func, const float *x, float *y, __u64 n,
			 int bf16)
{
	if (act_bf16(func, x, y, n, 1, 0, bf16))
		return;
	switch (func) {
	case VNPU_ACT_SILU:
		vm16_rows_silu(x, y, n, 1, 0);
		break;
	case VNPU_ACT_SIGMOID:
		vm16_rows_sigmoid(x, y, n, 1, 0);
		break;
	default:
		vm16_act_map(func, x, y, n);
		break;
	}
}

/* vm16_act_map()'s per-vector function on the runs: @FN, not a switch. */
#define ACT_ROWS(FN) do {						\
	for (r = 0; r < rows; r++, y += rs) {				\
		for (i = 0; i + 16 <= n; i += 16)			\
			*(vu *)(y + i) = FN(*(const vu *)(y + i));	\
		if (i == n)						\
			continue;					\
		m = (__u16)((1u << (n - i)) - 1);			\
		v = __builtin_ia32_loadups512_mask(y + i, (v16sf){}, m); \
		__builtin_ia32_storeups512_mask(y + i, FN(v), m);	\
	}								\
} while (0)

/* The runs' last n % 16 through @FN under a mask. */
#define ACT_TAILS(FN) do {						\
	m = (__u16)((1u << (n % 16)) - 1);				\
	for (r = 0, y += n / 16 * 16; m && r < rows; r++, y += rs) {	\
		v = __builtin_ia32_loadups512_mask(y, (v16sf){}, m);	\
		__builtin_ia32_storeups512_mask(y, FN(v), m);		\
	}								\
} while (0)

static inline v16sf act_any(__u32 func, v16sf v)
{
	return vm16_act(func, v);
}

#define ACT_ANY(v) act_any(func, v)

/*
 * SiLU and the logistic function: the runs' whole vectors four at a time
 * (vm16_rows_silu(): a tile's 24 in six steps), then their tails.
 */
void vnpu_eng_act_rows_avx512(__u32 func, float *y, __s64 rs, __u64 rows,
			      __u64 n, int bf16)
{
	typedef v16sf vu __attribute__((aligned(4), may_alias));
	v16sf v;
	__u64 r, i;
	__u16 m;

	if (act_bf16(func, y, y, n, rows, rs, bf16))
		return;
	switch (func) {
	case VNPU_ACT_SILU:
		vm16_rows_silu(y, y, n / 16 * 16, rows, rs);
		ACT_TAILS(vm16_silu);
		break;
	case VNPU_ACT_SIGMOID:
		vm16_rows_sigmoid(y, y, n / 16 * 16, rows, rs);
		ACT_TAILS(vm16_sigmoid);
		break;
	default:
		ACT_ROWS(ACT_ANY);
		break;
	}
}

/* ---- Softmax of a contiguous f32 lane (vnpu_eng_elem.c) ------------- */

typedef double v8df __attribute__((vector_size(64)));
typedef double v8df_u __attribute__((vector_size(64), aligned(8), may_alias));

/* Lanes [0, @n) of 16 (all from 16 up). */
static inline __u16 sm_mask(__u64 n)
{
	return n >= 16 ? 0xffff : (__u16)((1u << n) - 1);
}

static inline v16si sm_iota(void)
{
	return (v16si){ 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };
}

/* The 16 floats at @p under @m, @fill in the other lanes. */
static inline v16sf sm_load(const float *p, __u16 m, v16sf fill)
{
	if (m == 0xffff)
		return *(const v16sf_u *)p;
	return __builtin_ia32_loadups512_mask(p, fill, m);
}

static inline void sm_store(float *p, __u16 m, v16sf v)
{
	if (m == 0xffff)
		*(v16sf_u *)p = v;
	else
		__builtin_ia32_storeups512_mask(p, v, m);
}

/* Lanes of v > m ? v : m, which keeps m where v is NaN. */
static inline v16sf sm_max16(v16sf v, v16sf m)
{
	return vm16_sel(v > m, v, m);
}

void vnpu_eng_sm_max_avx512(const float *x, __u64 i, __u64 e, float *mx)
{
	v16sf m0 = vm16_splat(*mx), m1 = m0, m2 = m0, m3 = m0;
	__u32 j;

	/* Four maxima in flight: the loads of a lane out of the caches. */
	for (; i + 64 <= e; i += 64) {
		m0 = sm_max16(*(const v16sf_u *)(x + i), m0);
		m1 = sm_max16(*(const v16sf_u *)(x + i + 16), m1);
		m2 = sm_max16(*(const v16sf_u *)(x + i + 32), m2);
		m3 = sm_max16(*(const v16sf_u *)(x + i + 48), m3);
	}
	for (; i < e; i += 16)
		m0 = sm_max16(sm_load(x + i, sm_mask(e - i), m0), m0);
	m0 = sm_max16(m1, sm_max16(m2, sm_max16(m3, m0)));
	for (j = 0; j < 16; j++)
		*mx = m0[j] > *mx ? m0[j] : *mx;
}

/*
 * softmax_lane_f32()'s sm_exp() on 16 lanes, with the same results: the
 * same operations but for exp's clamps (vmu16_exp_reduce()'s). @mx is
 * the lane's largest element (or NaN), so d is at most 0 or NaN and the
 * clamp at 89 never acts; the one at -110 is a vmaxps with -110 first,
 * which keeps a NaN d as the select does. Five instructions fewer of
 * some fifty: BERT's attention 3% faster on Zen 4.
 */
static inline v16sf sm_exp16(v16sf x, v16sf mx)
{
	v16sf d = x - mx, bp = d - x, lo = (x - (d - bp)) + (-mx - bp), n, r;

	lo = vm16_sel(lo == lo, lo, vm16_splat(0.0f));
	d = vm16_maxps(vm16_splat(-110.0f), d);
	n = vmu16_exp_n(d);
	r = n * -VM_LN2_HI + d;
	r = n * -VM_LN2_LO + r;
	return vmu16_exp_kern(r + lo, n, vm16_splat(1.0f));
}

/*
 * Half @hi of @v as doubles (exact): GCC 12 converts a generic vector in
 * quarters (vcvtps2pd xmm) and puts them together again.
 */
static inline v8df sm_widen(v16sf v, int hi)
{
	v8sf h = hi ? __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15) :
		      __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7);

#ifdef __clang__
	return __builtin_convertvector(h, v8df);
#else
	return __builtin_ia32_cvtps2pd512_mask(h, (v8df){}, 0xff, 4);
#endif
}

void vnpu_eng_sm_exp_avx512(struct eng_sm *sm, __u64 i, __u64 e)
{
	v16sf mx = vm16_splat(sm->mx), ex;
	v8df s = *(const v8df_u *)sm->sum;
	__u16 m;

	/* Two vectors a step: each exp is a long chain of dependent steps. */
	for (; i + 32 <= e; i += 32) {
		v16sf e1 = sm_exp16(*(const v16sf_u *)(sm->x + i + 16), mx);

		ex = sm_exp16(*(const v16sf_u *)(sm->x + i), mx);
		s += sm_widen(ex, 0);
		s += sm_widen(ex, 1);
		s += sm_widen(e1, 0);
		s += sm_widen(e1, 1);
		if (!sm->store)
			continue;
		*(v16sf_u *)(sm->y + i) = ex;
		*(v16sf_u *)(sm->y + i + 16) = e1;
	}
	for (; i < e; i += 16) {
		m = sm_mask(e - i);
		ex = sm_exp16(sm_load(sm->x + i, m, mx), mx);
		if (m != 0xffff)
			ex = vm16_sel(sm_iota() < (int)(e - i), ex,
				      vm16_splat(0.0f));
		/* Element i into partial sum i % 8, in element order. */
		s += sm_widen(ex, 0);
		s += sm_widen(ex, 1);
		if (sm->store)
			sm_store(sm->y + i, m, ex);
	}
	*(v8df_u *)sm->sum = s;
}

/*
 * Softmax: y = e * inv in double, LogSoftmax: y = (x - mx) - ls in
 * double; rounded to float, a NaN as the default NaN (m_canon()).
 */
static inline v16sf sm_narrow(v8df a, v8df b)
{
	v16sf r = __builtin_shufflevector(__builtin_convertvector(a, v8sf),
					  __builtin_convertvector(b, v8sf), 0,
					  1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
					  12, 13, 14, 15);

	return vm16_sel(r != r, (v16sf)((v16si){} + 0x7fc00000), r);
}

static inline v16sf sm_out16(const struct eng_sm *sm, v16sf v)
{
	v8df lo = sm_widen(v, 0), hi = sm_widen(v, 1);

	if (sm->store)
		return sm_narrow(lo * sm->inv, hi * sm->inv);
	return sm_narrow((lo - (double)sm->mx) - sm->ls,
			 (hi - (double)sm->mx) - sm->ls);
}

void vnpu_eng_sm_out_avx512(const struct eng_sm *sm, __u64 i, __u64 e)
{
	const float *src = sm->store ? sm->y : sm->x;
	__u16 m;

	for (; i + 16 <= e; i += 16)
		*(v16sf_u *)(sm->y + i) = sm_out16(sm, *(const v16sf_u *)(src + i));
	if (i < e) {
		m = sm_mask(e - i);
		sm_store(sm->y + i, m, sm_out16(sm, sm_load(src + i, m,
							    vm16_splat(0.0f))));
	}
}

/* elem.c's sm_total(): the eight partial sums in a fixed order. */
static inline double sm_sum8(v8df s)
{
	return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

/* A lane's exps at @y from @i into @s, masked past @n as the tail's. */
static inline v16sf sm_pair_exp(const float *y, __u64 i, __u64 n, v16sf mx,
				v8df *s)
{
	__u16 m = sm_mask(n - i);
	v16sf ex = sm_exp16(sm_load(y + i, m, mx), mx);

	if (m != 0xffff)
		ex = vm16_sel(sm_iota() < (int)(n - i), ex, vm16_splat(0.0f));
	*s += sm_widen(ex, 0);
	*s += sm_widen(ex, 1);
	return ex;
}

void vnpu_eng_sm_pair_avx512(float *y, __s64 ys, __u64 n, const float *mx)
{
	v16sf m0 = vm16_splat(mx[0]), m1 = vm16_splat(mx[1]), e0, e1;
	float *y1 = y + ys;
	v8df s0 = {}, s1 = {};
	double inv0, inv1;
	__u64 i;
	__u16 m;

	for (i = 0; i < n; i += 16) {
		e0 = sm_pair_exp(y, i, n, m0, &s0);
		e1 = sm_pair_exp(y1, i, n, m1, &s1);
		m = sm_mask(n - i);
		sm_store(y + i, m, e0);
		sm_store(y1 + i, m, e1);
	}
	inv0 = 1.0 / sm_sum8(s0);
	inv1 = 1.0 / sm_sum8(s1);
	for (i = 0; i < n; i += 16) {
		m = sm_mask(n - i);
		e0 = sm_load(y + i, m, vm16_splat(0.0f));
		e1 = sm_load(y1 + i, m, vm16_splat(0.0f));
		sm_store(y + i, m, sm_narrow(sm_widen(e0, 0) * inv0,
					     sm_widen(e0, 1) * inv0));
		sm_store(y1 + i, m, sm_narrow(sm_widen(e1, 0) * inv1,
					      sm_widen(e1, 1) * inv1));
	}
}

void vnpu_eng_sm16_max_avx512(struct eng_sm16 *s, __u64 i, __u64 e)
{
	v16sf m = *(const v16sf_u *)s->mx;

	for (; i < e; i++)
		m = sm_max16(*(const v16sf_u *)(s->x + (__s64)i * s->xs), m);
	*(v16sf_u *)s->mx = m;
}

/* Row @i's exps, stored where @s->store (Softmax). */
static inline v16sf sm16_row(const struct eng_sm16 *s, __u64 i, v16sf mx)
{
	v16sf ex = sm_exp16(*(const v16sf_u *)(s->x + (__s64)i * s->xs), mx);

	if (s->store)
		*(v16sf_u *)(s->y + (__s64)i * s->ys) = ex;
	return ex;
}

/* Row @i into its partial sums in @s. */
static void sm16_row_sum(struct eng_sm16 *s, __u64 i, v16sf mx)
{
	v16sf ex = sm16_row(s, i, mx);
	v8df_u *a = (v8df_u *)s->sum[i % 8];

	a[0] += sm_widen(ex, 0);
	a[1] += sm_widen(ex, 1);
}

void vnpu_eng_sm16_exp_avx512(struct eng_sm16 *s, __u64 i, __u64 e)
{
	v16sf mx = *(const v16sf_u *)s->mx;
	v8df lo[8], hi[8];
	int k;

	if (!i)
		for (k = 0; k < 8; k++) {
			*(v8df_u *)s->sum[k] = (v8df){};
			*(v8df_u *)(s->sum[k] + 8) = (v8df){};
		}
	for (; i < e && i % 8; i++)
		sm16_row_sum(s, i, mx);
	if (i + 8 <= e) {
		/* Eight rows a step: the partial sums stay in registers. */
#pragma GCC unroll 8
		for (k = 0; k < 8; k++) {
			lo[k] = *(const v8df_u *)s->sum[k];
			hi[k] = *(const v8df_u *)(s->sum[k] + 8);
		}
		for (; i + 8 <= e; i += 8)
#pragma GCC unroll 8
			for (k = 0; k < 8; k++) {
				v16sf ex = sm16_row(s, i + k, mx);

				lo[k] += sm_widen(ex, 0);
				hi[k] += sm_widen(ex, 1);
			}
#pragma GCC unroll 8
		for (k = 0; k < 8; k++) {
			*(v8df_u *)s->sum[k] = lo[k];
			*(v8df_u *)(s->sum[k] + 8) = hi[k];
		}
	}
	for (; i < e; i++)
		sm16_row_sum(s, i, mx);
}

/* sm_total() of each lane's partial sums, in vectors: the same sums. */
void vnpu_eng_sm16_total_avx512(struct eng_sm16 *s)
{
	v8df t[8];
	int h, k;

	for (h = 0; h < 16; h += 8) {
		for (k = 0; k < 8; k++)
			t[k] = *(const v8df_u *)(s->sum[k] + h);
		t[0] = ((t[0] + t[1]) + (t[2] + t[3])) +
		       ((t[4] + t[5]) + (t[6] + t[7]));
		*(v8df_u *)(s->ls + h) = t[0];
		*(v8df_u *)(s->inv + h) = 1.0 / t[0];
	}
}

/* sm_out16() with each lane's own inv, ls and mx. */
void vnpu_eng_sm16_out_avx512(const struct eng_sm16 *s, __u64 i, __u64 e)
{
	v16sf mx = *(const v16sf_u *)s->mx, v;
	v8df inv_lo = *(const v8df_u *)s->inv;
	v8df inv_hi = *(const v8df_u *)(s->inv + 8);
	v8df ls_lo = *(const v8df_u *)s->ls, ls_hi = *(const v8df_u *)(s->ls + 8);
	v8df mx_lo = sm_widen(mx, 0), mx_hi = sm_widen(mx, 1);
	float *y;

	for (; i < e; i++) {
		y = s->y + (__s64)i * s->ys;
		if (s->store) {
			v = *(const v16sf_u *)y;
			v = sm_narrow(sm_widen(v, 0) * inv_lo,
				      sm_widen(v, 1) * inv_hi);
		} else {
			v = *(const v16sf_u *)(s->x + (__s64)i * s->xs);
			v = sm_narrow((sm_widen(v, 0) - mx_lo) - ls_lo,
				      (sm_widen(v, 1) - mx_hi) - ls_hi);
		}
		*(v16sf_u *)y = v;
	}
}

/* act_store()'s vneg_sel() (Relu, LeakyRelu) and vhswish() on 16 lanes. */
static inline v16sf ps_act(__u32 func, float al, v16sf v)
{
	v16si lt, lo, hi;
	v16sf h;

	if (func == VNPU_ACT_RELU) {
		lt = v < 0;
		return (v16sf)((v16si)v & ~lt);
	}
	if (func == VNPU_ACT_LEAKY_RELU) {
		lt = v < 0;
		return (v16sf)(((v16si)(v * al) & lt) | ((v16si)v & ~lt));
	}
	if (func != VNPU_ACT_HARD_SWISH)
		return v;
	h = (v + 3.0f) * (1.0f / 6.0f);
	lo = h < 0;
	hi = h > 1;
	return (v16sf)(((v16si)v & hi) | ((v16si)(v * h) & ~lo & ~hi));
}

/* vbound() on 16 lanes: F32_MAX(y, b, @max), a NaN y kept, b on a tie. */
static inline v16sf ps_bound(v16sf y, v16sf b, int max)
{
	v16si keep = (max ? y > b : y < b) | (y != y);

	return (v16sf)(((v16si)y & keep) | ((v16si)b & ~keep));
}

/* The float of IEEE bits @b (kern.h's f32_of(), which this build does not include). */
static inline float ps_f32(__u32 b)
{
	union { __u32 u; float f; } x = { .u = b };

	return x.f;
}

/* @x in every lane (0 + x would turn -0 into +0). */
static inline v16sf ps_bcast(float x)
{
	return (v16sf){ x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x };
}

/* ps_act(), then @act's bound when @bound. */
static inline v16sf ps_act_bound(const struct vnpu_layer_act *act, float al,
				 v16sf be, int bound, int max, v16sf v)
{
	v = ps_act(act->func, al, v);
	return bound ? ps_bound(v, be, max) : v;
}

void vnpu_eng_plain_store_avx512(float *y, const float *t, __u64 len,
				 const float *add, const float *res,
				 const struct vnpu_layer_act *act)
{
	typedef v16sf vu __attribute__((aligned(4), may_alias));
	v16sf a = ps_bcast(add ? *add : 0.0f), v;
	v16sf be = ps_bcast(ps_f32(act->beta));
	float al = ps_f32(act->alpha);
	int bound = !!act->flags, max = !!(act->flags & VNPU_ACT_F_MAX);
	__u64 c;
	__u16 m;

	for (c = 0; c + 16 <= len; c += 16) {
		v = *(const vu *)(t + c);
		if (add)
			v = v + a;
		if (res)
			v = v + *(const vu *)(res + c);
		*(vu *)(y + c) = ps_act_bound(act, al, be, bound, max, v);
	}
	if (c == len)
		return;
	m = (__u16)((1u << (len - c)) - 1);
	v = __builtin_ia32_loadups512_mask(t + c, (v16sf){}, m);
	if (add)
		v = v + a;
	if (res)
		v = v + __builtin_ia32_loadups512_mask(res + c, (v16sf){}, m);
	__builtin_ia32_storeups512_mask(y + c,
					ps_act_bound(act, al, be, bound, max, v),
					m);
}

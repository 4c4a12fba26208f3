// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Element access of the float kernels in blocks and strides: ENG_BLOCK
 * elements of any dtype as doubles or 64-bit integers and back, the
 * strided walk over an output with its operands (struct eng_iter), and
 * the output ranges of a part's units. Built per ISA (vnpu_eng_isa.h).
 */
#include "vnpu_eng_kern.h"

#define LOAD_LOOP(T, expr) do {					\
	for (i = 0; i < n; i++) {					\
		T v = *(const T *)(p + i * st);				\
		dst[i] = (expr);					\
	}								\
} while (0)

/* @n elements at @p, @st bytes apart, as doubles. */
void load_d(double *dst, const char *p, __s64 st, __u32 n, __u32 dt)
{
	__u32 i;

	switch (dt) {
	case VNPU_DTYPE_F32:
		LOAD_LOOP(float, v);
		break;
	case VNPU_DTYPE_F64:
		LOAD_LOOP(double, v);
		break;
	case VNPU_DTYPE_F16:
		LOAD_LOOP(__u16, f16_to_f32(v));
		break;
	case VNPU_DTYPE_BF16:
		LOAD_LOOP(__u16, bf16_to_f32(v));
		break;
	case VNPU_DTYPE_U8:
	case VNPU_DTYPE_BOOL:
		LOAD_LOOP(__u8, v);
		break;
	case VNPU_DTYPE_I8:
		LOAD_LOOP(__s8, v);
		break;
	case VNPU_DTYPE_U16:
		LOAD_LOOP(__u16, v);
		break;
	case VNPU_DTYPE_I16:
		LOAD_LOOP(__s16, v);
		break;
	case VNPU_DTYPE_I32:
		LOAD_LOOP(__s32, v);
		break;
	case VNPU_DTYPE_U32:
		LOAD_LOOP(__u32, v);
		break;
	case VNPU_DTYPE_I64:
		LOAD_LOOP(__s64, (double)v);
		break;
	default:
		LOAD_LOOP(__u64, (double)v);
		break;
	}
}

void load_i(__s64 *dst, const char *p, __s64 st, __u32 n, __u32 dt)
{
	__u32 i;

	switch (dt) {
	case VNPU_DTYPE_U8:
	case VNPU_DTYPE_BOOL:
		LOAD_LOOP(__u8, v);
		break;
	case VNPU_DTYPE_I8:
		LOAD_LOOP(__s8, v);
		break;
	case VNPU_DTYPE_U16:
		LOAD_LOOP(__u16, v);
		break;
	case VNPU_DTYPE_I16:
		LOAD_LOOP(__s16, v);
		break;
	case VNPU_DTYPE_I32:
		LOAD_LOOP(__s32, v);
		break;
	case VNPU_DTYPE_U32:
		LOAD_LOOP(__u32, v);
		break;
	case VNPU_DTYPE_I64:
	case VNPU_DTYPE_U64:
		LOAD_LOOP(__s64, v);
		break;
	case VNPU_DTYPE_F32:
		LOAD_LOOP(float, d_to_i64(v));
		break;
	case VNPU_DTYPE_F64:
		LOAD_LOOP(double, d_to_i64(v));
		break;
	case VNPU_DTYPE_F16:
		LOAD_LOOP(__u16, d_to_i64(f16_to_f32(v)));
		break;
	default:
		LOAD_LOOP(__u16, d_to_i64(bf16_to_f32(v)));
		break;
	}
}

#define STORE_LOOP(T, expr) do {					\
	for (i = 0; i < n; i++) {					\
		__typeof__(*src) v = src[i];				\
		*(T *)(p + i * st) = (expr);				\
	}								\
} while (0)

void store_d(char *p, __s64 st, const double *src, __u32 n, __u32 dt)
{
	__u32 i;

	switch (dt) {
	case VNPU_DTYPE_F32:
		STORE_LOOP(float, (float)v);
		break;
	case VNPU_DTYPE_F64:
		STORE_LOOP(double, v);
		break;
	case VNPU_DTYPE_F16:
		STORE_LOOP(__u16, f32_to_f16((float)v));
		break;
	case VNPU_DTYPE_BF16:
		STORE_LOOP(__u16, f32_to_bf16((float)v));
		break;
	case VNPU_DTYPE_BOOL:
		STORE_LOOP(__u8, v != 0);
		break;
	case VNPU_DTYPE_U8:
		STORE_LOOP(__u8, (__u8)d_to_i64(v));
		break;
	case VNPU_DTYPE_I8:
		STORE_LOOP(__s8, (__s8)d_to_i64(v));
		break;
	case VNPU_DTYPE_U16:
		STORE_LOOP(__u16, (__u16)d_to_i64(v));
		break;
	case VNPU_DTYPE_I16:
		STORE_LOOP(__s16, (__s16)d_to_i64(v));
		break;
	case VNPU_DTYPE_I32:
		STORE_LOOP(__s32, (__s32)d_to_i64(v));
		break;
	case VNPU_DTYPE_U32:
		STORE_LOOP(__u32, (__u32)d_to_i64(v));
		break;
	case VNPU_DTYPE_I64:
		STORE_LOOP(__s64, d_to_i64(v));
		break;
	default:
		STORE_LOOP(__u64, d_to_u64(v));
		break;
	}
}

void store_i(char *p, __s64 st, const __s64 *src, __u32 n, __u32 dt)
{
	__u32 i;

	switch (dt) {
	case VNPU_DTYPE_BOOL:
		STORE_LOOP(__u8, v != 0);
		break;
	case VNPU_DTYPE_U8:
	case VNPU_DTYPE_I8:
		STORE_LOOP(__u8, (__u8)v);
		break;
	case VNPU_DTYPE_U16:
	case VNPU_DTYPE_I16:
		STORE_LOOP(__u16, (__u16)v);
		break;
	case VNPU_DTYPE_I32:
	case VNPU_DTYPE_U32:
		STORE_LOOP(__u32, (__u32)v);
		break;
	case VNPU_DTYPE_I64:
	case VNPU_DTYPE_U64:
		STORE_LOOP(__u64, (__u64)v);
		break;
	case VNPU_DTYPE_F32:
		STORE_LOOP(float, (float)v);
		break;
	case VNPU_DTYPE_F64:
		STORE_LOOP(double, (double)v);
		break;
	case VNPU_DTYPE_F16:
		STORE_LOOP(__u16, f32_to_f16((float)v));
		break;
	default:
		STORE_LOOP(__u16, f32_to_bf16((float)v));
		break;
	}
}

void iter_init(struct eng_iter *it, const struct vnpu_cmd_tensor *out)
{
	__u32 d;

	it->rank = out->rank ? out->rank : 1;
	it->nops = 0;
	for (d = 0; d < VNPU_MAX_DIMS; d++)
		it->dims[d] = d < out->rank ? out->dims[d] : 1;
}

/* Adds operand @t (broadcast against the output @out) at @data. */
void iter_add(struct eng_iter *it, const struct vnpu_cmd_tensor *t,
	      const struct vnpu_cmd_tensor *out, void *data)
{
	__s64 st[VNPU_MAX_DIMS];
	__u32 size = vnpu_eng_dtype_size(t->dtype), d, o = it->nops++;

	vnpu_eng_bcast_strides(t, out, st);
	it->base[o] = data;
	for (d = 0; d < VNPU_MAX_DIMS; d++)
		it->st[o][d] = d < out->rank ? st[d] * size : 0;
}

/*
 * @it with its dims of one left out and each dim merged into the one
 * before where every operand steps through both as through one (a dense
 * operand, a broadcast one): the same elements in the same order, in
 * longer runs (a per-channel [N, C, 1, 1] operand against [N, C, H, W]
 * runs H * W elements a call, not W).
 */
static void iter_merge(const struct eng_iter *it, struct eng_iter *m)
{
	__u32 d, o, r = 0, same;

	m->nops = it->nops;
	for (o = 0; o < it->nops; o++) {
		m->base[o] = it->base[o];
		m->st[o][0] = it->st[o][0];
	}
	m->dims[0] = it->dims[0];
	for (d = 1; d < it->rank; d++) {
		if (it->dims[d] == 1)
			continue;
		same = m->dims[r] != 1;
		for (o = 0; same && o < it->nops; o++)
			same = m->st[o][r] == it->st[o][d] * (__s64)it->dims[d];
		if (same)
			m->dims[r] *= it->dims[d];
		else if (m->dims[r] != 1)
			r++;
		if (!same)
			m->dims[r] = it->dims[d];
		for (o = 0; o < it->nops; o++)
			m->st[o][r] = it->st[o][d];
	}
	m->rank = r + 1;
}

/*
 * The merged @m's inner dims [n, 2] as one of 2 * n elements of @size
 * bytes when every operand runs dense through both (the output among
 * them) but one, which steps through each pair as through one element
 * and through n densely (a nearest 2x upsampled operand): that one's
 * inner stride becomes @size / 2, which no operand of @size bytes has
 * otherwise, and the row function reads it as "each element twice".
 * Every row then starts at an even element, as [@lo, @hi) are even.
 */
static void iter_pairs(struct eng_iter *m, __u32 size, __u64 lo, __u64 hi)
{
	__u32 last = m->rank - 1, o, dup = ITER_MAX_OPS;

	if (m->rank < 2 || m->dims[last] != 2 || (lo | hi) & 1)
		return;
	for (o = 0; o < m->nops; o++) {
		if (m->st[o][last] == 0 && m->st[o][last - 1] == size &&
		    dup == ITER_MAX_OPS)
			dup = o;
		else if (m->st[o][last] != size ||
			 m->st[o][last - 1] != 2 * (__s64)size)
			return;
	}
	if (dup == ITER_MAX_OPS)
		return;
	m->dims[last - 1] *= 2;
	for (o = 0; o < m->nops; o++)
		m->st[o][last - 1] = o == dup ? size / 2 : size;
	m->rank--;
}

static void iter_walk(const struct eng_iter *it, __u64 lo, __u64 hi,
		      iter_row_fn fn, const void *arg)
{
	__u64 coord[VNPU_MAX_DIMS], rem = lo, n;
	__s64 inner[ITER_MAX_OPS];
	char *p[ITER_MAX_OPS];
	__u32 last = it->rank - 1, o;
	int d;

	for (d = last; d >= 0; d--) {
		coord[d] = rem % it->dims[d];
		rem /= it->dims[d];
	}
	for (o = 0; o < it->nops; o++)
		inner[o] = it->st[o][last];
	while (lo < hi) {
		for (o = 0; o < it->nops; o++) {
			p[o] = it->base[o];
			for (d = 0; d <= (int)last; d++)
				p[o] += (__s64)coord[d] * it->st[o][d];
		}
		n = eng_min(it->dims[last] - coord[last], hi - lo);
		fn(arg, p, inner, n);
		lo += n;
		coord[last] += n;
		for (d = last; d > 0 && coord[d] == it->dims[d]; d--) {
			coord[d] = 0;
			coord[d - 1]++;
		}
	}
}

/* Calls @fn for each run of the inner dim within elements [@lo, @hi). */
void iter_run(const struct eng_iter *full, __u64 lo, __u64 hi,
	      iter_row_fn fn, const void *arg)
{
	struct eng_iter merged;

	if (lo >= hi)
		return;	/* also keeps a zero extent out of the divisions */
	iter_merge(full, &merged);
	iter_walk(&merged, lo, hi, fn, arg);
}

/*
 * iter_run() over operands of @size bytes, where a row may hold one
 * operand's elements twice each (iter_pairs()).
 */
void iter_run_pairs(const struct eng_iter *full, __u32 size, __u64 lo,
		    __u64 hi, iter_row_fn fn, const void *arg)
{
	struct eng_iter merged;

	if (lo >= hi)
		return;
	iter_merge(full, &merged);
	iter_pairs(&merged, size, lo, hi);
	iter_walk(&merged, lo, hi, fn, arg);
}

/* Element range of units [@ub, @ue) of an element-wise op on @out. */
void elem_range(const struct vnpu_cmd_tensor *out, __u64 ub, __u64 ue,
		__u64 *lo, __u64 *hi)
{
	__u64 numel = vnpu_eng_numel(out);

	*lo = eng_min(ub * ENG_ELEM_UNIT, numel);
	*hi = eng_min(ue * ENG_ELEM_UNIT, numel);
}

/*
 * Output range of units [@ub, @ue) of an op whose outputs read @depth
 * elements each, matching flat_units() in vnpu_eng_units.c.
 */
void flat_range(const struct vnpu_cmd_tensor *out, __u64 depth, __u64 ub,
		__u64 ue, __u64 *lo, __u64 *hi)
{
	__u64 numel = vnpu_eng_numel(out), bc = eng_block_cols(numel, depth);

	*lo = eng_min(ub * bc, numel);
	*hi = eng_min(ue * bc, numel);
}

/* Rows of @row_len per unit, matching row_units() in vnpu_eng_units.c. */
void row_range(__u64 rows, __u64 row_len, __u64 ub, __u64 ue,
	       __u64 *lo, __u64 *hi)
{
	__u64 per = ENG_ELEM_UNIT / (row_len ? row_len : 1);

	per = per ? per : 1;
	*lo = eng_min(ub * per, rows);
	*hi = eng_min(ue * per, rows);
}

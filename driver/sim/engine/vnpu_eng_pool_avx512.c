// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Pooling rows in 16 lanes (built with -mavx512f, run only when the
 * caller sets VNPU_ENG_F_AVX512): an f32 MAX pool's window maxima along
 * rows at stride 2 and their maxima down an output row's window rows,
 * the bits of vnpu_eng_gemm.c's 8-lane rows (pool_sep_row()).
 */
#include "vnpu_eng_vmath16.h"

typedef float v16sf_u __attribute__((vector_size(64), aligned(4), may_alias));

/*
 * Of the 64 columns from @c on, the bits of those inside [0, @w): masked
 * loads read them and leave the others, which need not be mapped.
 */
static inline __u64 pool_cols64(__s64 c, __u64 w)
{
	__s64 lo = c < 0 ? -c : 0, hi = (__s64)w - c;

	hi = hi > 64 ? 64 : hi;
	if (lo >= hi)
		return 0;
	return (hi == 64 ? ~0ull : (1ull << hi) - 1) & ~((1ull << lo) - 1);
}

/* @v where @v > @acc, else @acc: vmaxps. */
static inline v16sf pool_max16(v16sf acc, v16sf v)
{
	return vm16_maxps(v, acc);
}

/*
 * Sixteen windows' maxima from column @c on (pool_hrow_k()): tap t is
 * the even lanes of the columns [c + t, c + t + 16) and the odd ones of
 * [c + t + 15, c + t + 31), so no column past the last window's is read.
 * @m: the columns inside the row from @c on (pool_cols64(); @k1 at most
 * 34, so 64 columns hold them), all ones: plain loads, else masked ones.
 * A NaN read sets *@nan.
 */
static __attribute__((__always_inline__)) inline v16sf
pool_win16(const float *row, __s64 c, __u32 k1, __u64 m, __u16 *nan)
{
	const v16sf ninf = (v16sf){} - __builtin_inff();
	v16sf lo = ninf, hi = ninf, a, b;
	__u16 nn = 0;
	__u32 t;

	for (t = 0; t < k1; t++) {
		if (m == ~0ull) {
			a = *(const v16sf_u *)(row + c + t);
			b = *(const v16sf_u *)(row + c + t + 15);
		} else {
			a = __builtin_ia32_loadups512_mask(row + c + t, ninf,
							   (__u16)(m >> t));
			b = __builtin_ia32_loadups512_mask(row + c + t + 15,
							   ninf,
							   (__u16)(m >> (t + 15)));
		}
		lo = pool_max16(lo, a);
		hi = pool_max16(hi, b);
		nn |= __builtin_ia32_cmpps512_mask(a, b, 3, 0xffff, 4);
	}
	*nan |= nn;
	return __builtin_shufflevector(lo, hi, 0, 2, 4, 6, 8, 10, 12, 14, 17,
				       19, 21, 23, 25, 27, 29, 31);
}

/*
 * pool_win16() for windows of 3 taps (ResNet's and DBNet's 3x3 at stride
 * 2): the 48 columns from @c on in three loads, tap 0 their even lanes,
 * tap 1 the odd ones, tap 2 the even ones one further.
 */
static inline v16sf pool_win16_k3(const float *row, __s64 c, __u64 m,
				  __u16 *nan)
{
	const v16sf ninf = (v16sf){} - __builtin_inff();
	v16sf x0, x1, x2, e, acc;

	if (m == ~0ull) {
		x0 = *(const v16sf_u *)(row + c);
		x1 = *(const v16sf_u *)(row + c + 16);
		x2 = *(const v16sf_u *)(row + c + 32);
	} else {
		x0 = __builtin_ia32_loadups512_mask(row + c, ninf, (__u16)m);
		x1 = __builtin_ia32_loadups512_mask(row + c + 16, ninf,
						    (__u16)(m >> 16));
		x2 = __builtin_ia32_loadups512_mask(row + c + 32, ninf,
						    (__u16)(m >> 32));
	}
	*nan |= __builtin_ia32_cmpps512_mask(x0, x1, 3, 0xffff, 4) |
		__builtin_ia32_cmpps512_mask(x2, x2, 3, 1, 4);
	e = __builtin_shufflevector(x0, x1, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18,
				    20, 22, 24, 26, 28, 30);
	acc = pool_max16(e, __builtin_shufflevector(x0, x1, 1, 3, 5, 7, 9, 11,
						    13, 15, 17, 19, 21, 23,
						    25, 27, 29, 31));
	return pool_max16(acc, __builtin_shufflevector(e, x2, 1, 2, 3, 4, 5, 6,
						       7, 8, 9, 10, 11, 12, 13,
						       14, 15, 16));
}

/*
 * vnpu_eng_pool_hrows_s2_avx512() for windows of @k1 taps (a constant
 * where inlined): sixteen outputs a vector, the last sixteen again where
 * @ow_n is not a multiple (the same values), under a mask below sixteen;
 * the edges' column masks once for all the rows.
 */
static __attribute__((__always_inline__)) inline __u32
pool_hrows_k(const float *row, __s64 xsh, __u32 nr, __u64 w, __u64 ow_n,
	     __s64 pb, __u32 k1, float *const *hr)
{
	__u64 last = ow_n < 16 ? 0 : ow_n - 16, o, m;
	__u64 m0 = pool_cols64(-pb, w), m1 = pool_cols64(2 * (__s64)last - pb, w);
	__u32 r, nan = 0;
	__u16 nn;
	__s64 c;

	for (r = 0; r < nr; r++, row += xsh) {
		nn = 0;
		if (ow_n < 16) {
			v16sf v = pool_win16(row, -pb, k1, m0, &nn);

			__builtin_ia32_storeups512_mask(hr[r], v,
							(__u16)((1u << ow_n) - 1));
			nan |= nn ? 1u << r : 0;
			continue;
		}
		for (o = 0; o < ow_n; o += 16) {
			o = o > last ? last : o;
			c = 2 * (__s64)o - pb;
			m = o == 0 ? m0 : o == last ? m1 :
			    c >= 0 && c + 30 + (__s64)k1 <= (__s64)w ? ~0ull :
			    pool_cols64(c, w);
			if (k1 == 3) {
				if (m == ~0ull && c + 48 > (__s64)w)
					m = pool_cols64(c, w);
				*(v16sf_u *)(hr[r] + o) =
					pool_win16_k3(row, c, m, &nn);
				continue;
			}
			*(v16sf_u *)(hr[r] + o) = pool_win16(row, c, k1, m,
							     &nn);
		}
		nan |= nn ? 1u << r : 0;
	}
	return nan;
}

/*
 * The maxima of @nr f32 rows from @row on, @xsh floats apart (@w floats
 * each, -inf around them) over the windows of @k1 taps, window o from
 * column 2 o - @pb on, to @hr[r][0, @ow_n), sixteen outputs a vector: two
 * runs of 16 columns of each tap, their maxima over the taps column by
 * column, then every other lane. While no tap is a NaN that is each
 * window's taps in order (the first of equal values kept); returns the
 * rows (bit r) where a column read is a NaN, whose values are to be
 * taken again in order.
 */
__u32 vnpu_eng_pool_hrows_s2_avx512(const float *row, __s64 xsh, __u32 nr,
				    __u64 w, __u64 ow_n, __s64 pb, __u32 k1,
				    float *const *hr)
{
	if (k1 == 3)
		return pool_hrows_k(row, xsh, nr, w, ow_n, pb, 3, hr);
	return pool_hrows_k(row, xsh, nr, w, ow_n, pb, k1, hr);
}

/*
 * Outputs [@o, @end) of an output row to @y (dense): each the maximum of
 * the @n rows @rp at its column, in row order, vmaxps (no row has a NaN:
 * the first of equal values kept), sixteen a vector, the tail under a
 * mask.
 */
void vnpu_eng_pool_vmax_avx512(const float *const *rp, __u32 n, __u64 o,
			       __u64 end, float *y)
{
	v16sf acc;
	__u16 m;
	__u32 i;

	for (; o + 16 <= end; o += 16) {
		acc = *(const v16sf_u *)(rp[0] + o);
		for (i = 1; i < n; i++)
			acc = pool_max16(acc, *(const v16sf_u *)(rp[i] + o));
		*(v16sf_u *)(y + o) = acc;
	}
	if (o == end)
		return;
	m = (__u16)((1u << (end - o)) - 1);
	acc = __builtin_ia32_loadups512_mask(rp[0] + o, (v16sf){}, m);
	for (i = 1; i < n; i++)
		acc = pool_max16(acc, __builtin_ia32_loadups512_mask(rp[i] + o,
								     (v16sf){}, m));
	__builtin_ia32_storeups512_mask(y + o, acc, m);
}

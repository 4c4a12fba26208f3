// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Moves of COPY commands that need vector shuffles: a transposition of
 * 4-byte elements in 8x8 tiles (transpose8(), the convolution's, in
 * registers). Built per ISA (vnpu_eng_isa.h).
 */
#include "vnpu_eng_kern.h"

/* Rows [@r0, @r1) x columns [@c0, @c1) of @t, one element at a time. */
static void transpose32_edge(const struct vnpu_eng_transpose *t, __u64 r0,
			     __u64 r1, __u64 c0, __u64 c1)
{
	const __u32 *s = t->src;
	__u32 *d = t->dst;
	__u64 r, c;

	for (r = r0; r < r1; r++)
		for (c = c0; c < c1; c++)
			d[(__s64)r * t->dst_row + (__s64)c] =
				s[(__s64)r + (__s64)c * t->src_col];
}

/*
 * Strips of eight rows, each in 8x8 tiles: a tile reads eight source runs
 * of 32 bytes and writes eight destination runs, so both sides move whole
 * cache lines however long the rows are.
 */
void eng_transpose32(const struct vnpu_eng_transpose *t)
{
	const float *s = t->src;
	float *d = t->dst;
	__u64 r, c, rows8 = t->rows & ~7ull, cols8 = t->cols & ~7ull;

	for (r = 0; r < rows8; r += 8) {
		for (c = 0; c < cols8; c += 8)
			transpose8(s + (__s64)r + (__s64)c * t->src_col,
				   t->src_col, d + (__s64)r * t->dst_row + (__s64)c,
				   t->dst_row);
		transpose32_edge(t, r, r + 8, cols8, t->cols);
	}
	transpose32_edge(t, rows8, t->rows, 0, t->cols);
}

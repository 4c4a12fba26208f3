// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * LOOKUP's dense rows in 64 bytes (built with -mavx512f, run only when the
 * caller sets VNPU_ENG_F_AVX512 and VNPU_ENG_F_VBMI). The BW and VBMI
 * instructions are inline assembly, so the file needs no flags beyond
 * AVX-512F and builds with any compiler that builds the other AVX-512
 * files.
 */
#include "vnpu_eng_priv.h"

typedef char v64qi_lk __attribute__((vector_size(64)));
typedef char v64qi_lku __attribute__((vector_size(64), aligned(1), may_alias));

/*
 * @n dense bytes through the 256-entry table @t, 64 at a time: vpermi2b
 * looks a byte's low seven bits up in two 64-byte registers, so one such
 * pair answers the codes below 128 and another those from 128 on; the
 * code's top bit (vpmovb2m) picks between the two answers. The last bytes
 * of a row go through masked loads and stores, which touch no byte past
 * the row.
 */
void vnpu_eng_lookup_vbmi(const __u8 *t, const __u8 *x, __u8 *y, __u64 n)
{
	const v64qi_lk t0 = *(const v64qi_lku *)t;
	const v64qi_lk t1 = *(const v64qi_lku *)(t + 64);
	const v64qi_lk t2 = *(const v64qi_lku *)(t + 128);
	const v64qi_lk t3 = *(const v64qi_lku *)(t + 192);
	v64qi_lk v, lo, hi;
	__u64 i, m;

	for (i = 0; i + 64 <= n; i += 64) {
		v = *(const v64qi_lku *)(x + i);
		lo = v;
		hi = v;
		/* %[v] may share a register with %[lo] or %[hi]: read it first. */
		__asm__("vpmovb2m %[v], %%k1\n\t"
			"vpermi2b %[t1], %[t0], %[lo]\n\t"
			"vpermi2b %[t3], %[t2], %[hi]\n\t"
			"vpblendmb %[hi], %[lo], %[lo]%{%%k1%}"
			: [lo] "+v" (lo), [hi] "+v" (hi)
			: [v] "v" (v), [t0] "v" (t0), [t1] "v" (t1), [t2] "v" (t2),
			  [t3] "v" (t3)
			: "k1");
		*(v64qi_lku *)(y + i) = lo;
	}
	if (i == n)
		return;
	m = ~0ull >> (64 - (n - i));
	__asm__("kmovq %[m], %%k2\n\t"
		"vmovdqu8 %[x], %[v]%{%%k2%}%{z%}\n\t"
		"vmovdqa64 %[v], %[lo]\n\t"
		"vmovdqa64 %[v], %[hi]\n\t"
		"vpermi2b %[t1], %[t0], %[lo]\n\t"
		"vpermi2b %[t3], %[t2], %[hi]\n\t"
		"vpmovb2m %[v], %%k1\n\t"
		"vpblendmb %[hi], %[lo], %[lo]%{%%k1%}\n\t"
		"vmovdqu8 %[lo], %[y]%{%%k2%}"
		: [v] "=&v" (v), [lo] "=&v" (lo), [hi] "=&v" (hi),
		  [y] "+m" (*(v64qi_lku *)(y + i))
		: [x] "m" (*(const v64qi_lku *)(x + i)), [m] "r" (m),
		  [t0] "v" (t0), [t1] "v" (t1), [t2] "v" (t2), [t3] "v" (t3)
		: "k1", "k2");
}

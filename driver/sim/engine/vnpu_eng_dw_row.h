/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The depthwise row kernel (struct eng_dw_row), written once for a vector
 * type. The includer defines DW_F (a vector of DW_LANES floats), DW_LD and
 * DW_ST (unaligned load and store), DW_BC (broadcast), DW_FMA(a, b, c)
 * (a * b + c rounded once per lane) and DW(name). Included by
 * vnpu_eng_dw.c (8 lanes, in both float builds) and vnpu_eng_dw_avx512.c
 * (16 lanes): each output is fma(w, x, sum) over the taps in (kh, kw)
 * order from zero whatever the lanes, so every build gives the same bits.
 */

/* @nv vectors of sums from output @j: accumulators in registers. */
#define DW_VECS(nv) do {						\
	DW_F v[nv];							\
	int i;								\
									\
	for (i = 0; i < (nv); i++)					\
		v[i] = DW_BC(0.0f);					\
	for (r = 0; r < t->kh; r++) {					\
		const float *x = t->in[r] + t->q0 + j, *w = t->w + r * t->kw;	\
									\
		for (k = 0; k < t->kw; k++) {				\
			const float *p = x + t->tap[k];			\
			DW_F wk = DW_BC(w[k]);				\
									\
			for (i = 0; i < (nv); i++)			\
				v[i] = DW_FMA(wk, DW_LD(p + DW_LANES * i), \
					      v[i]);			\
		}							\
	}								\
	for (i = 0; i < (nv); i++)					\
		DW_ST(t->acc + j + DW_LANES * i, v[i]);			\
} while (0)

/* Four vectors at a time (four independent sums), then the rest at once. */
static void DW(row)(const struct eng_dw_row *t)
{
	__u64 j = 0, r, k, left;

	for (; j + 4 * DW_LANES < t->n; j += 4 * DW_LANES)
		DW_VECS(4);
	left = eng_div_up(t->n - j, DW_LANES);
	if (left == 4)
		DW_VECS(4);
	else if (left == 3)
		DW_VECS(3);
	else if (left == 2)
		DW_VECS(2);
	else if (left == 1)
		DW_VECS(1);
}

#undef DW_VECS

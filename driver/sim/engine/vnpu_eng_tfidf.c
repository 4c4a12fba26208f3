// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * TFIDF kernel (TfIdfVectorizer over integer tokens), built per ISA
 * (vnpu_eng_isa.h); a unit is one row of X.
 */
#include "vnpu_eng_kern.h"

static __s64 tfidf_tok(const struct vnpu_cmd_tensor *x, const void *data,
		       __s64 row, __u64 i)
{
	__s64 off = row + (__s64)i * x->strides[x->rank - 1];

	return x->dtype == VNPU_DTYPE_I32 ? ((const __s32 *)data)[off] :
	       ((const __s64 *)data)[off];
}

static __s64 tfidf_i64(const struct vnpu_cmd_tensor *t, const void *data, __u64 i)
{
	return ((const __s64 *)data)[(__s64)i * t->strides[0]];
}

/*
 * Where the n-grams of length @n lie in pool: [*begin, *end), and how many
 * n-grams of shorter lengths come before them (*first). -1 when counts do
 * not describe whole n-grams.
 */
static int tfidf_segment(const struct eng_layer *l, __u32 n, __u64 *begin,
			 __u64 *end, __u64 *first)
{
	const struct vnpu_cmd_tensor *pool = &l->t[1], *cnt = &l->t[2];
	__u64 p = pool->dims[0], g = cnt->dims[0], m;

	*first = 0;
	for (m = 1; m <= n; m++) {
		__s64 b = tfidf_i64(cnt, l->data[2], m - 1);
		__s64 e = m < g ? tfidf_i64(cnt, l->data[2], m) : (__s64)p;

		if (b < 0 || e < b || (__u64)e > p || (e - b) % (__s64)m)
			return -1;
		if (m == n) {
			*begin = (__u64)b;
			*end = (__u64)e;
		} else {
			*first += (__u64)(e - b) / m;
		}
	}
	return 0;
}

/* The n-gram of @n items from @i, @step apart, in pool: its number or -1. */
static __s64 tfidf_find(const struct eng_layer *l, __s64 row, __u64 i,
			__u64 step, __u32 n, __u64 begin, __u64 end)
{
	const struct vnpu_cmd_tensor *x = &l->t[0], *pool = &l->t[1];
	__u64 c, k;

	for (c = begin; c < end; c += n) {
		for (k = 0; k < n; k++)
			if (tfidf_i64(pool, l->data[1], c + k) !=
			    tfidf_tok(x, l->data[0], row, i + k * step))
				break;
		if (k == n)
			return (__s64)((c - begin) / n);
	}
	return -1;
}

int run_tfidf(const struct eng_layer *l, __u64 ub, __u64 ue,
	      const struct vnpu_eng_ctx *ctx)
{
	const struct vnpu_layer_tfidf *at = l->attrs;
	const struct vnpu_cmd_tensor *x = &l->t[0], *idx = &l->t[3], *wt = &l->t[4];
	const struct vnpu_cmd_tensor *y = &l->t[5];
	__u64 len = x->dims[x->rank - 1], width = y->dims[y->rank - 1];
	__u64 r, j, total, begin, end, first;
	struct eng_pacer pc;
	__u32 n;

	eng_pacer_init(&pc, ctx);
	/* One index per n-gram of every length. */
	if (tfidf_segment(l, (__u32)l->t[2].dims[0], &begin, &end, &first))
		return VNPU_ENG_EINVAL;
	total = first + (end - begin) / l->t[2].dims[0];
	if (total != idx->dims[0])
		return VNPU_ENG_EINVAL;
	for (j = 0; j < total; j++) {
		__s64 c = tfidf_i64(idx, l->data[3], j);

		if (c < 0 || (__u64)c >= width)
			return VNPU_ENG_EINVAL;
	}
	for (r = ub; r < ue; r++) {
		__s64 xrow = x->rank == 2 ? (__s64)r * x->strides[0] : 0;
		__s64 yrow = y->rank == 2 ? (__s64)r * y->strides[0] : 0;
		__s64 ys = y->strides[y->rank - 1];
		float *yd = l->data[5];

		for (j = 0; j < width; j++)
			yd[yrow + (__s64)j * ys] = 0;
		for (n = at->min_gram; n <= at->max_gram; n++) {
			__u64 skip, i;

			if (tfidf_segment(l, n, &begin, &end, &first))
				return VNPU_ENG_EINVAL;
			for (skip = 0; skip <= (n > 1 ? at->max_skip : 0) &&
			     (n - 1) * (skip + 1) < len; skip++)
				for (i = 0; i + (n - 1) * (skip + 1) < len; i++) {
					__s64 g = tfidf_find(l, xrow, i, skip + 1, n,
							     begin, end), c;

					/* The pool's tokens, at most. */
					eng_pace(&pc, end - begin + 1);
					if (g < 0)
						continue;
					c = tfidf_i64(idx, l->data[3], first + (__u64)g);
					yd[yrow + c * ys] += 1;
				}
		}
		if (at->mode == VNPU_TFIDF_TF)
			continue;
		/* Weights per n-gram: each n-gram's column once. */
		for (j = 0; j < total; j++) {
			__s64 c = tfidf_i64(idx, l->data[3], j);
			float w = ((const float *)l->data[4])[(__s64)j * wt->strides[0]];
			float *v = &yd[yrow + c * ys];

			if (at->mode == VNPU_TFIDF_IDF)
				*v = *v > 0 ? w : 0;
			else
				*v *= w;
		}
	}
	return 0;
}

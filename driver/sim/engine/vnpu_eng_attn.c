// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ATTENTION: softmax(Q KT * scale + mask) V per (batch, head), a block of
 * query rows a unit. Each unit sums its rows of S = Q KT with the GEMM's
 * blocks (gemm_block(), K read through its strides), scales each row and
 * adds the mask as CHAIN's binary runs (bin_f32_runs()) would while it
 * finds the row's maximum as Softmax does, in one pass, takes the row
 * through the rest of Softmax's lane (softmax_rows_max_f32(): 16 lanes
 * where Softmax takes them), and sums its rows of Y = S V
 * with the GEMM's blocks again into Y's strided rows: the operations, in
 * the same order, of the GEMM, CHAIN (or BINARY) and SOFTMAX layers the
 * compiler would otherwise run, so the same bits on every path.
 */
#include "vnpu_eng_gemm_kern.h"

/**
 * struct attn_run - one layer's operands as its units take them
 * @l: the layer
 * @m: query rows of a head
 * @n: key columns
 * @d: depth of Q KT
 * @e: columns of V and Y
 * @rows: query rows of a unit (eng_attn_rows())
 * @s: the unit's rows of S, @n floats apart
 * @mrow: a strided mask row, gathered
 * @bufs: the GEMM's scratch
 */
struct attn_run {
	const struct eng_layer *l;
	__u64 m, n, d, e, rows;
	float *s, *mrow;
	struct gemm_bufs bufs;
};

/* Offset of (b, h) of 4-D @t, dims 0 and 1 of size 1 broadcast. */
static __s64 attn_bh(const struct vnpu_cmd_tensor *t, __u64 b, __u64 h)
{
	__s64 off = 0;
	int lead = (int)t->rank - 4;

	if (lead >= 0 && t->dims[lead] != 1)
		off += (__s64)b * t->strides[lead];
	if (lead + 1 >= 0 && t->dims[lead + 1] != 1)
		off += (__s64)h * t->strides[lead + 1];
	return off;
}

/* Stride of the mask along S's dim @sd (2: rows, 3: columns), 0 if broadcast. */
static __s64 mask_stride(const struct vnpu_cmd_tensor *t, __u32 sd)
{
	int d = (int)sd - (4 - (int)t->rank);

	return d >= 0 && t->dims[d] != 1 ? t->strides[d] : 0;
}

/* Splits the part's scratch: the GEMM's A, sums and B, then S and a row. */
static void attn_scratch(struct attn_run *r, const struct vnpu_eng_ctx *ctx)
{
	char *p = eng_align(ctx->scratch);
	struct eng_unit blk;

	eng_attn_block(r->rows, &blk);
#ifdef ENG_FMA
	r->bufs.avx512 = !!(ctx->features & VNPU_ENG_F_AVX512);
#else
	r->bufs.avx512 = 0;
#endif
	r->bufs.bf16 = 0;
	r->bufs.ctx = ctx;
	r->bufs.a = (float *)p;
	p = eng_align(p + blk.rows * ENG_KC * 4);
	r->bufs.acc = (float *)p;
	p = eng_align(p + blk.rows * eng_acc_rs(blk.cols) * 4);
	r->bufs.b = (float *)p;
	p = eng_align(p + ENG_KC * blk.cols * 4);
	r->s = (float *)p;
	p = eng_align(p + r->rows * r->n * 4);
	r->mrow = (float *)p;
}

/*
 * Rows [@m0, @m0 + @mc) of A times B into @o, columns in blocks of at
 * most ENG_GEMM_NC: the GEMM's sums.
 */
static void attn_gemm(const struct attn_run *r, const struct gemm_a *a,
		      const struct gemm_b *b, __u64 m0, __u64 mc,
		      const struct gemm_out *o)
{
	static const struct vnpu_layer_act ident;
	struct gemm_epi e = { .alpha = 1.0f, .beta = 1.0f, .act = &ident };
	__u64 n0, nc, nb = eng_even_side(b->n, ENG_GEMM_NC, ENG_NR);

#ifdef ENG_FMA
	e.avx512 = r->bufs.avx512;
#endif
	for (n0 = 0; n0 < b->n; n0 += nc) {
		nc = eng_min(nb, b->n - n0);
		gemm_block(a, b, m0, mc, n0, nc, b->k, o, &e, &r->bufs);
	}
}

/* Lanes of F32_NAN_FIRST(x, r): CHAIN's and BINARY's f32 + and *. */
static inline v8sf attn_nan_first(v8sf x, v8sf r)
{
	v8si nan = x != x;

	return (v8sf)(((v8si)(x + x) & nan) | ((v8si)r & ~nan));
}

/*
 * Row @s of @n floats scaled (s / @scale with @div, else s * @scale) and
 * masked (s + @mp[j], or + @mp[0] without @mrun; none without @mp) in
 * place, each step as bin_f32_runs() takes it, in one pass that also
 * finds the row's maximum as Softmax does (s[0] when it is NaN, else the
 * largest of those that are not): the pass Softmax's own maximum took.
 */
static float attn_scale_max(float *s, __u64 n, int div, float scale,
			    const float *mp, int mrun)
{
	const v8sf vs = vbcast(scale), m0 = vbcast(mp ? mp[0] : 0.0f);
	v8sf v, mx8 = vbcast(-__builtin_inff());
	float mx, a;
	__u64 j;
	int i;

	for (j = 0; j + 8 <= n; j += 8) {
		v = vload(s + j);
		v = div ? v / vs : attn_nan_first(v, v * vs);
		if (mp)
			v = attn_nan_first(v, v + (mrun ? vload(mp + j) : m0));
		vstore(s + j, v);
		/* v > mx8 ? v : mx8, which keeps mx8 where v is NaN. */
		mx8 = (v8sf)(((v8si)v & (v > mx8)) | ((v8si)mx8 & ~(v > mx8)));
	}
	for (; j < n; j++) {
		a = div ? s[j] / scale : F32_NAN_FIRST(s[j], s[j] * scale);
		if (mp)
			a = F32_NAN_FIRST(a, a + mp[mrun ? j : 0]);
		s[j] = a;
		mx8[0] = a > mx8[0] ? a : mx8[0];
	}
	if (s[0] != s[0])
		return s[0];
	mx = mx8[0];
	for (i = 1; i < 8; i++)
		mx = mx8[i] > mx ? mx8[i] : mx;
	return mx;
}

/* S's rows of (@bi, @hi) from @m0: scale, mask, softmax, two at a time. */
static void attn_rows(const struct attn_run *r, __u64 bi, __u64 hi, __u64 m0,
		      __u64 mc, struct eng_pacer *pc)
{
	const struct vnpu_layer_attention *at = r->l->attrs;
	const struct vnpu_cmd_tensor *mt = &r->l->t[3];
	int mask = at->flags & VNPU_ATTN_F_MASK;
	int div = !!(at->flags & VNPU_ATTN_F_DIV);
	float scale = f32_of(at->scale), mx[2];
	__s64 mrs = 0, mcs = 0, mb = 0;
	__u64 i, j, k, nr;

	if (mask) {
		mrs = mask_stride(mt, 2);
		mcs = mask_stride(mt, 3);
		mb = attn_bh(mt, bi, hi);
	}
	for (i = 0; i < mc; i += nr) {
		nr = eng_min(2, mc - i);
		for (k = 0; k < nr; k++) {
			float *s = r->s + (i + k) * r->n;
			const float *mp = 0;

			if (mask) {
				mp = (const float *)r->l->data[3] + mb +
				     (__s64)(m0 + i + k) * mrs;
				if (mcs > 1 || mcs < 0) {
					for (j = 0; j < r->n; j++)
						r->mrow[j] = mp[(__s64)j * mcs];
					mp = r->mrow;
				}
			}
			mx[k] = attn_scale_max(s, r->n, div, scale, mp,
					       mcs != 0);
		}
		softmax_rows_max_f32(r->s + i * r->n, r->n, nr, mx, pc);
	}
}

/* A product's right operand: 4-D @t's last two dims, packed from its strides. */
static void attn_b(struct gemm_b *b, const struct vnpu_cmd_tensor *t)
{
	b->rs = t->strides[2];
	b->cs = t->strides[3];
	b->dt = VNPU_DTYPE_F32;
	b->k = t->dims[2];
	b->n = t->dims[3];
	b->pack = gemm_pack_b;
	b->arg = b;
}

int run_attention(const struct eng_layer *l, __u64 ub, __u64 ue,
		  const struct vnpu_eng_ctx *ctx)
{
	const struct vnpu_cmd_tensor *q = &l->t[0], *k = &l->t[1], *v = &l->t[2];
	const struct vnpu_cmd_tensor *y = &l->t[l->n - 1];
	struct attn_run r = { .l = l };
	struct gemm_a qa = {}, sa = {};
	struct gemm_b kb = {}, vb = {};
	struct gemm_out so = {}, yo = {};
	struct eng_pacer pc;
	__u64 u, blocks;

	r.m = q->dims[2];
	r.d = q->dims[3];
	r.n = k->dims[3];
	r.e = v->dims[3];
	r.rows = eng_attn_rows(r.m, r.n);
	blocks = eng_div_up(r.m, r.rows);
	attn_scratch(&r, ctx);
	eng_pacer_init(&pc, ctx);
	qa.rs = q->strides[2];
	qa.cs = q->strides[3];
	qa.dt = VNPU_DTYPE_F32;
	qa.k = r.d;
	attn_b(&kb, k);
	attn_b(&vb, v);
	sa.rs = (__s64)r.n;
	sa.cs = 1;
	sa.dt = VNPU_DTYPE_F32;
	sa.k = r.n;
	so.dt = VNPU_DTYPE_F32;
	so.rs = (__s64)r.n;
	yo.dt = VNPU_DTYPE_F32;
	yo.rs = y->strides[2];
	for (u = ub; u < ue; u++) {
		__u64 bh = u / blocks, bi = bh / y->dims[1], hi = bh % y->dims[1];
		__u64 m0 = (u % blocks) * r.rows, mc = eng_min(r.rows, r.m - m0);

		qa.p = (const float *)l->data[0] + attn_bh(q, bi, hi) +
		       (__s64)m0 * q->strides[2];
		kb.p = (const float *)l->data[1] + attn_bh(k, bi, hi);
		vb.p = (const float *)l->data[2] + attn_bh(v, bi, hi);
		/* S's rows from 0: the unit's rows of Q start at qa.p. */
		so.y = r.s;
		attn_gemm(&r, &qa, &kb, 0, mc, &so);
		eng_pause(ctx);
		attn_rows(&r, bi, hi, m0, mc, &pc);
		sa.p = r.s;
		yo.y = (float *)l->data[l->n - 1] + attn_bh(y, bi, hi) +
		       (__s64)m0 * y->strides[2];
		attn_gemm(&r, &sa, &vb, 0, mc, &yo);
		eng_pause(ctx);
	}
	return 0;
}

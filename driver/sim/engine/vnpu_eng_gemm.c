// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * GEMM, convolution and pooling kernels. Included by the kernel builds
 * (vnpu_eng_avx2.c, vnpu_eng_base.c), never compiled on its own.
 *
 * One blocked GEMM serves GEMM and CONV: units of at most ENG_UNIT_MACS,
 * depth in slices of ENG_KC, a 6x16 micro-kernel on packed panels of A
 * (ENG_MR rows) and B (ENG_NR columns), and the epilogue (alpha, bias,
 * residual, activation) applied to a tile once its last slice is summed.
 * Partial sums live in the output itself between slices, so the order of
 * every sum depends on the shapes only, never on how the layer is split:
 * that is what keeps the NPU and the CPU device bit-identical.
 *
 * Convolutions with stride 1 read B straight from a zero-padded copy of
 * the input rows through a table of offsets (one per (c, kh, kw)), over
 * "padded columns" q = oh * Wp + ow, so a run of 16 outputs is 16
 * consecutive floats of the copy; strided ones pack B by im2col. Depthwise
 * convolutions run a direct kernel.
 */

/* ---- micro-kernels --------------------------------------------------- */

static void copy_f32(float *dst, const float *src, __u64 n)
{
	__u64 i = 0;

	for (; i + 8 <= n; i += 8)
		vstore(dst + i, vload(src + i));
	for (; i < n; i++)
		dst[i] = src[i];
}

/* The 6x16 accumulators, from the tile at c (rows rs apart) or zero. */
#define UK_INIT(c, rs, load)						\
	v8sf c00 = {}, c01 = {}, c10 = {}, c11 = {}, c20 = {}, c21 = {}; \
	v8sf c30 = {}, c31 = {}, c40 = {}, c41 = {}, c50 = {}, c51 = {}; \
	if (load) {							\
		c00 = vload(c); c01 = vload((c) + 8);			\
		c10 = vload((c) + (rs)); c11 = vload((c) + (rs) + 8);	\
		c20 = vload((c) + 2 * (rs)); c21 = vload((c) + 2 * (rs) + 8); \
		c30 = vload((c) + 3 * (rs)); c31 = vload((c) + 3 * (rs) + 8); \
		c40 = vload((c) + 4 * (rs)); c41 = vload((c) + 4 * (rs) + 8); \
		c50 = vload((c) + 5 * (rs)); c51 = vload((c) + 5 * (rs) + 8); \
	}

#define UK_STEP(a, b0, b1) do {						\
	v8sf av;							\
	av = vbcast((a)[0]);						\
	c00 = VFMA(av, b0, c00); c01 = VFMA(av, b1, c01);		\
	av = vbcast((a)[1]);						\
	c10 = VFMA(av, b0, c10); c11 = VFMA(av, b1, c11);		\
	av = vbcast((a)[2]);						\
	c20 = VFMA(av, b0, c20); c21 = VFMA(av, b1, c21);		\
	av = vbcast((a)[3]);						\
	c30 = VFMA(av, b0, c30); c31 = VFMA(av, b1, c31);		\
	av = vbcast((a)[4]);						\
	c40 = VFMA(av, b0, c40); c41 = VFMA(av, b1, c41);		\
	av = vbcast((a)[5]);						\
	c50 = VFMA(av, b0, c50); c51 = VFMA(av, b1, c51);		\
} while (0)

#define UK_STORE(c, rs) do {						\
	vstore(c, c00); vstore((c) + 8, c01);				\
	vstore((c) + (rs), c10); vstore((c) + (rs) + 8, c11);		\
	vstore((c) + 2 * (rs), c20); vstore((c) + 2 * (rs) + 8, c21);	\
	vstore((c) + 3 * (rs), c30); vstore((c) + 3 * (rs) + 8, c31);	\
	vstore((c) + 4 * (rs), c40); vstore((c) + 4 * (rs) + 8, c41);	\
	vstore((c) + 5 * (rs), c50); vstore((c) + 5 * (rs) + 8, c51);	\
} while (0)

/*
 * c[6][16] (rows @rs apart) = (@load ? c : 0) + A panel (kc x 6) times
 * B panel (kc x 16).
 */
/* Not inlined: the caller's live values would push accumulators to the stack. */
static __attribute__((__noinline__))
void ukernel(__u64 kc, const float *a, const float *b, float *c, __s64 rs,
	     int load)
{
	__u64 k;

	UK_INIT(c, rs, load);

	/* Unrolled by hand: the loop overhead is a quarter of the front end. */
	for (k = 0; k + 2 <= kc; k += 2, a += 2 * ENG_MR, b += 2 * ENG_NR) {
		v8sf b0, b1;

		b0 = vload(b);
		b1 = vload(b + 8);
		UK_STEP(a, b0, b1);
		b0 = vload(b + 16);
		b1 = vload(b + 24);
		UK_STEP(a + 6, b0, b1);
	}
	for (; k < kc; k++, a += ENG_MR, b += ENG_NR) {
		v8sf b0 = vload(b), b1 = vload(b + 8);

		UK_STEP(a, b0, b1);
	}
	UK_STORE(c, rs);
}

/* The same with row k of B at b + off[k]. */
static __attribute__((__noinline__))
void ukernel_ind(__u64 kc, const float *a, const float *b, const __s32 *off,
		 float *c, __s64 rs, int load)
{
	__u64 k;

	UK_INIT(c, rs, load);

	for (k = 0; k + 2 <= kc; k += 2, a += 2 * ENG_MR) {
		const float *b0p = b + off[k], *b1p = b + off[k + 1];
		v8sf b0, b1;

		b0 = vload(b0p);
		b1 = vload(b0p + 8);
		UK_STEP(a, b0, b1);
		b0 = vload(b1p);
		b1 = vload(b1p + 8);
		UK_STEP(a + 6, b0, b1);
	}
	for (; k < kc; k++, a += ENG_MR) {
		const float *bk = b + off[k];
		v8sf b0 = vload(bk), b1 = vload(bk + 8);

		UK_STEP(a, b0, b1);
	}
	UK_STORE(c, rs);
}

/* ---- operands, output and epilogue --------------------------------- */

/**
 * struct gemm_a - the left operand: packed panels over the whole depth,
 * a strided matrix packed per slice, or a packer of its own
 */
struct gemm_a {
	const float *packed;
	const float *p;
	__s64 rs, cs;
	__u64 k;
	void (*pack)(const void *arg, __u64 m0, __u64 mc, __u64 k0, __u64 kc,
		     float *dst);
	const void *arg;
};

/**
 * struct gemm_b - the right operand, one of: packed panels over the whole
 * depth; a strided matrix; an im2col packer; or (with @off) rows read at
 * @win + off[k] + column
 */
struct gemm_b {
	const float *packed;
	const float *p;
	__s64 rs, cs;
	__u64 n;
	void (*pack)(const void *arg, __u64 k0, __u64 kc, __u64 n0, __u64 nc,
		     float *dst);
	const void *arg;
	const float *win;
	const __s32 *off;
};

/**
 * struct gemm_out - where output (i, j) goes: y[i * rs + col(j)], with
 * col(j) = j, or for padded columns (@wp != 0) j's (j / wp, j % wp) as
 * (j / wp) * ow + j % wp, dropped when j % wp >= ow
 */
struct gemm_out {
	float *y;
	__s64 rs;
	__u64 wp, ow;
};

struct gemm_epi {
	float alpha, beta;
	const float *c;
	__s64 c_rs, c_cs;
	const float *r;
	__s64 r_rs, r_cs;
	const struct vnpu_layer_act *act;
};

/* After the last slice: y = act(y * alpha + beta * C + R), in place. */
static void epilogue_run(const struct gemm_epi *e, float *y, __u64 i,
			 __u64 col, __u32 len)
{
	__u32 c;

	if (e->alpha != 1.0f)
		for (c = 0; c < len; c++)
			y[c] *= e->alpha;
	if (e->c) {
		const float *cp = e->c + (__s64)i * e->c_rs + (__s64)col * e->c_cs;

		if (e->c_cs == 1)
			for (c = 0; c < len; c++)
				y[c] += e->beta * cp[c];
		else
			for (c = 0; c < len; c++)
				y[c] += e->beta * cp[(__s64)c * e->c_cs];
	}
	if (e->r) {
		const float *rp = e->r + (__s64)i * e->r_rs + (__s64)col * e->r_cs;

		if (e->r_cs == 1)
			for (c = 0; c < len; c++)
				y[c] += rp[c];
		else
			for (c = 0; c < len; c++)
				y[c] += rp[(__s64)c * e->r_cs];
	}
	act_f32(e->act, y, len);
}

enum tile_op { TILE_LOAD, TILE_STORE, TILE_EPILOGUE };

/* One run of a tile row: @len columns at @t and at output column @col. */
static void tile_run(const struct gemm_out *o, const struct gemm_epi *e,
		     float *t, __u64 i, __u64 col, __u32 len, enum tile_op op)
{
	float *y = o->y + (__s64)i * o->rs + col;
	__u32 c;

	if (op == TILE_LOAD)
		for (c = 0; c < len; c++)
			t[c] = y[c];
	else if (op == TILE_STORE)
		for (c = 0; c < len; c++)
			y[c] = t[c];
	else
		epilogue_run(e, y, i, col, len);
}

/* Applies @op to the outputs of tile rows [i0, +mr) x columns [j0, +nr). */
static void tile_runs(const struct gemm_out *o, const struct gemm_epi *e,
		      float *tile, __u64 i0, __u32 mr, __u64 j0, __u32 nr,
		      enum tile_op op)
{
	__u32 r, c, len;

	for (r = 0; r < mr; r++) {
		float *t = tile + r * ENG_NR;

		if (!o->wp) {
			tile_run(o, e, t, i0 + r, j0, nr, op);
			continue;
		}
		for (c = 0; c < nr; c += len) {
			__u64 q = j0 + c, row = q / o->wp, qc = q % o->wp;

			len = (__u32)eng_min(nr - c, o->wp - qc);
			if (qc < o->ow)
				tile_run(o, e, t + c, i0 + r, row * o->ow + qc,
					 (__u32)eng_min(len, o->ow - qc), op);
		}
	}
}

/*
 * One micro-tile and slice: a whole tile whose 16 columns are 16 adjacent
 * outputs accumulates in place; the others go through @tile. Either way the
 * sums run y = ((y + slice 1) + slice 2) ..., the same for every split.
 */
static void gemm_tile(const struct gemm_out *o, const struct gemm_epi *e,
		      const struct gemm_b *b, const float *ai, const float *bj,
		      __u64 k0, __u64 kc, __u64 i0, __u32 mr, __u64 j0,
		      __u32 nr, int first, int last, float *tile)
{
	__u64 col = j0, qc = o->wp ? j0 % o->wp : 0;
	int whole = mr == ENG_MR && nr == ENG_NR && (!o->wp || qc + ENG_NR <= o->ow);
	float *c;
	__s64 rs;

	/* Padded columns: 16 in one output row are 16 consecutive outputs. */
	if (o->wp)
		col = j0 / o->wp * o->ow + qc;
	c = whole ? o->y + (__s64)i0 * o->rs + col : tile;
	rs = whole ? o->rs : ENG_NR;

	if (!whole && !first)
		tile_runs(o, e, tile, i0, mr, j0, nr, TILE_LOAD);
	if (b->off)
		ukernel_ind(kc, ai, bj, b->off + k0, c, rs, !first);
	else
		ukernel(kc, ai, bj, c, rs, !first);
	if (!whole)
		tile_runs(o, e, tile, i0, mr, j0, nr, TILE_STORE);
	if (last)
		tile_runs(o, e, tile, i0, mr, j0, nr, TILE_EPILOGUE);
}

/* Rows [m0, m0 + mc) and depth [k0, k0 + kc) of a strided A, in panels. */
static void pack_a(const struct gemm_a *a, __u64 m0, __u64 mc, __u64 k0,
		   __u64 kc, float *dst)
{
	__u64 p, i, k;

	for (p = 0; p < mc; p += ENG_MR, dst += kc * ENG_MR) {
		const float *r0 = a->p + (__s64)(m0 + p) * a->rs + (__s64)k0;

		/* Whole panels of dense rows: six streams in, one out. */
		if (a->cs == 1 && p + ENG_MR <= mc) {
			for (k = 0; k < kc; k++)
				for (i = 0; i < ENG_MR; i++)
					dst[k * ENG_MR + i] = r0[(__s64)i * a->rs +
								 (__s64)k];
			continue;
		}
		for (i = 0; i < ENG_MR; i++) {
			const float *src = a->p + (__s64)(m0 + p + i) * a->rs +
					   (__s64)k0 * a->cs;

			if (p + i >= mc) {
				for (k = 0; k < kc; k++)
					dst[k * ENG_MR + i] = 0;
				continue;
			}
			for (k = 0; k < kc; k++)
				dst[k * ENG_MR + i] = src[(__s64)k * a->cs];
		}
	}
}

/* Depth [k0, k0 + kc) and columns [n0, n0 + nc) of a strided B. */
static void pack_b(const void *arg, __u64 k0, __u64 kc, __u64 n0, __u64 nc,
		   float *dst)
{
	const struct gemm_b *b = arg;
	__u64 p, k, j;

	for (p = 0; p < nc; p += ENG_NR, dst += kc * ENG_NR) {
		__u64 w = eng_min(ENG_NR, nc - p);

		for (k = 0; k < kc; k++) {
			const float *src = b->p + (__s64)(k0 + k) * b->rs +
					   (__s64)(n0 + p) * b->cs;
			float *d = dst + k * ENG_NR;

			if (b->cs == 1 && w == ENG_NR) {
				for (j = 0; j < ENG_NR; j++)
					d[j] = src[j];
				continue;
			}
			for (j = 0; j < ENG_NR; j++)
				d[j] = j < w ? src[(__s64)j * b->cs] : 0;
		}
	}
}

/*
 * Output block [m0, m0 + mc) x [n0, n0 + nc) of a depth-@kt product;
 * @abuf and @bbuf are scratch for the packed slices.
 */
static void gemm_block(const struct gemm_a *a, const struct gemm_b *b,
		       __u64 m0, __u64 mc, __u64 n0, __u64 nc, __u64 kt,
		       const struct gemm_out *o, const struct gemm_epi *e,
		       float *abuf, float *bbuf)
{
	float tile[ENG_MR * ENG_NR] __attribute__((aligned(32)));
	__u64 k0 = 0, kc, kstep, i, j, a_ps, b_ps;
	const float *ap, *bp;

	/* Even slices of at most ENG_KC: the tile stores per slice are few. */
	kstep = eng_div_up(kt, eng_div_up(kt ? kt : 1, ENG_KC));
	do {
		int first = k0 == 0, last;

		kc = eng_min(kstep, kt - k0);
		last = k0 + kc >= kt;
		if (a->packed) {
			ap = a->packed + (m0 / ENG_MR) * a->k * ENG_MR +
			     k0 * ENG_MR;
			a_ps = a->k * ENG_MR;
		} else {
			if (a->pack)
				a->pack(a->arg, m0, mc, k0, kc, abuf);
			else
				pack_a(a, m0, mc, k0, kc, abuf);
			ap = abuf;
			a_ps = kc * ENG_MR;
		}
		if (b->packed) {
			bp = b->packed + (n0 / ENG_NR) * kt * ENG_NR +
			     k0 * ENG_NR;
			b_ps = kt * ENG_NR;
		} else if (b->off) {
			bp = b->win + n0;
			b_ps = ENG_NR;
		} else {
			b->pack(b->arg, k0, kc, n0, nc, bbuf);
			bp = bbuf;
			b_ps = kc * ENG_NR;
		}
		for (j = 0; j < nc; j += ENG_NR)
			for (i = 0; i < mc; i += ENG_MR) {
				const float *ai = ap + (i / ENG_MR) * a_ps;
				const float *bj = bp + (j / ENG_NR) * b_ps;

				gemm_tile(o, e, b, ai, bj, k0, kc, m0 + i,
					  (__u32)eng_min(ENG_MR, mc - i), n0 + j,
					  (__u32)eng_min(ENG_NR, nc - j), first,
					  last, tile);
			}
		k0 += kc;
	} while (k0 < kt);
}

/* Splits scratch into the A and B slice buffers. */
static void gemm_scratch(const struct vnpu_eng_ctx *ctx, int need_a,
			 float **abuf, float **bbuf)
{
	char *p = eng_align(ctx->scratch);

	*abuf = 0;
	if (need_a) {
		*abuf = (float *)p;
		p = eng_align(p + ENG_MC * ENG_KC * 4);
	}
	*bbuf = (float *)p;
}

/* ---- GEMM ------------------------------------------------------------ */

/* Offset of batch @b (over Y's leading dims) in @t, right-aligned. */
static __s64 batch_offset(const struct vnpu_tensor *t,
			  const struct vnpu_tensor *y, __u64 b)
{
	__s64 off = 0;
	int d;

	for (d = (int)y->rank - 3; d >= 0; d--) {
		__u64 coord = b % y->dims[d];
		int ti = d - ((int)y->rank - (int)t->rank);

		b /= y->dims[d];
		if (ti >= 0 && t->dims[ti] != 1)
			off += (__s64)coord * t->strides[ti];
	}
	return off;
}

/* The stride of @t along Y's dim @yd (right-aligned), 0 if broadcast. */
static __s64 bstride(const struct vnpu_tensor *t, const struct vnpu_tensor *y,
		     __u32 yd)
{
	int ti = (int)yd - ((int)y->rank - (int)t->rank);

	return ti >= 0 && t->dims[ti] != 1 ? t->strides[ti] : 0;
}

static int run_gemm(const struct eng_layer *l, __u64 ub, __u64 ue,
		    const struct vnpu_eng_ctx *ctx)
{
	const struct vnpu_layer_gemm *at = l->attrs;
	const struct vnpu_tensor *y = &l->t[l->n - 1], *ta = &l->t[0];
	const struct vnpu_tensor *tb = &l->t[1];
	__u64 batch, m, n, k, mb, nb, ncu, u;
	struct gemm_epi e = {};
	struct gemm_a a = {};
	struct gemm_b b = {};
	struct gemm_out o = {};
	float *abuf, *bbuf;
	__u32 ci = eng_opt_index(at->flags, VNPU_LAYER_F_BIAS);
	__u32 ri = eng_opt_index(at->flags, VNPU_LAYER_F_RESIDUAL);

	eng_gemm_shape(l, &batch, &m, &n, &k);
	mb = eng_div_up(m, ENG_MC);
	ncu = eng_gemm_nc(k);
	nb = eng_div_up(n, ncu);
	gemm_scratch(ctx, 1, &abuf, &bbuf);
	e.alpha = f32_of(at->alpha);
	e.beta = f32_of(at->beta);
	e.act = &at->act;
	a.rs = ta->strides[ta->rank - 2];
	a.cs = ta->strides[ta->rank - 1];
	a.k = k;
	if (!(at->flags & VNPU_LAYER_F_PACKED)) {
		b.rs = tb->strides[tb->rank - 2];
		b.cs = tb->strides[tb->rank - 1];
		b.pack = pack_b;
		b.arg = &b;
	}
	b.n = n;
	o.rs = y->strides[y->rank - 2];
	if (at->flags & VNPU_LAYER_F_BIAS) {
		e.c_rs = bstride(&l->t[ci], y, y->rank - 2);
		e.c_cs = bstride(&l->t[ci], y, y->rank - 1);
	}
	if (at->flags & VNPU_LAYER_F_RESIDUAL) {
		e.r_rs = bstride(&l->t[ri], y, y->rank - 2);
		e.r_cs = bstride(&l->t[ri], y, y->rank - 1);
	}
	for (u = ub; u < ue; u++) {
		__u64 bi = u / (mb * nb), mi = (u / nb) % mb, ni = u % nb;

		a.p = (const float *)l->data[0] + batch_offset(ta, y, bi);
		if (at->flags & VNPU_LAYER_F_PACKED)
			b.packed = l->data[1];
		else
			b.p = (const float *)l->data[1] + batch_offset(tb, y, bi);
		o.y = (float *)l->data[l->n - 1] + batch_offset(y, y, bi);
		if (at->flags & VNPU_LAYER_F_BIAS)
			e.c = (const float *)l->data[ci] +
			      batch_offset(&l->t[ci], y, bi);
		if (at->flags & VNPU_LAYER_F_RESIDUAL)
			e.r = (const float *)l->data[ri] +
			      batch_offset(&l->t[ri], y, bi);
		gemm_block(&a, &b, mi * ENG_MC, eng_min(ENG_MC, m - mi * ENG_MC),
			   ni * ncu, eng_min(ncu, n - ni * ncu), k, &o, &e, abuf,
			   bbuf);
	}
	return 0;
}

/* ---- CONV ------------------------------------------------------------ */

/**
 * struct conv_job - one image and group of a convolution
 * @s: the shape
 * @at: the attributes
 * @x: the image's input channels of the group
 * @xs: input strides (c, h, w) in elements
 */
struct conv_job {
	struct eng_conv_shape s;
	const struct eng_layer *l;
	__u64 g;
	const struct vnpu_layer_conv *at;
	const float *x;
	__s64 xs[3];
};

/* im2col: B(k, p) = x[c][oh * sh - ph + kh * dh][ow * sw - pw + kw * dw]. */
static void pack_im2col(const void *arg, __u64 k0, __u64 kc, __u64 n0,
			__u64 nc, float *dst)
{
	const struct conv_job *cj = arg;
	const struct eng_conv_shape *s = &cj->s;
	const struct vnpu_layer_conv *at = cj->at;
	__u64 k, p, j, khw = s->kh * s->kw, np = s->oh * s->ow;

	for (k = 0; k < kc; k++) {
		__u64 kk = k0 + k, c = kk / khw, kh = (kk % khw) / s->kw;
		__u64 kw = kk % s->kw;
		const float *xc = cj->x + (__s64)c * cj->xs[0];
		__s64 hoff = (__s64)(kh * at->dilation[0]) - at->pad_begin[0];
		__s64 woff = (__s64)(kw * at->dilation[1]) - at->pad_begin[1];

		for (p = 0; p < nc; p += ENG_NR) {
			float *d = dst + (p / ENG_NR) * kc * ENG_NR + k * ENG_NR;
			__u64 q = n0 + p, oh = q / s->ow, ow = q % s->ow;

			for (j = 0; j < ENG_NR; j++, q++) {
				__s64 ih = (__s64)oh * at->stride[0] + hoff;
				__s64 iw = (__s64)ow * at->stride[1] + woff;

				d[j] = q < np && ih >= 0 && ih < (__s64)s->h &&
				       iw >= 0 && iw < (__s64)s->w ?
				       xc[ih * cj->xs[1] + iw * cj->xs[2]] : 0;
				if (++ow == s->ow) {
					ow = 0;
					oh++;
				}
			}
		}
	}
}

/* Output extent [lo, hi) whose input column ow * s + off lies in [0, n). */
static void valid_span(__s64 off, __u64 s, __u64 n, __u64 out, __u64 *lo,
		       __u64 *hi)
{
	__s64 l = off >= 0 ? 0 : (-off + (__s64)s - 1) / (__s64)s;
	__s64 h = (__s64)n - 1 - off < 0 ? 0 :
		  ((__s64)n - 1 - off) / (__s64)s + 1;

	*lo = eng_min((__u64)l, out);
	*hi = eng_min((__u64)h, out);
	if (*hi < *lo)
		*hi = *lo;
}

/* Column phase @pw of one input row (zero-padded) into @d, Wq wide. */
static void conv_window_row(const struct conv_job *cj, const float *src,
			    __u64 pw, float *d)
{
	const struct vnpu_layer_conv *at = cj->at;
	__u64 sw = at->stride[1], wq = eng_conv_wq(&cj->s, at), x, lo, hi;
	__s64 first = (__s64)pw - at->pad_begin[1];

	/* Output x reads input column x * sw + first when inside the row. */
	valid_span(first, sw, cj->s.w, wq, &lo, &hi);
	for (x = 0; x < lo; x++)
		d[x] = 0;
	if (sw == 1 && cj->xs[2] == 1)
		copy_f32(d + lo, src + (__s64)lo + first, hi - lo);
	else
		for (x = lo; x < hi; x++)
			d[x] = src[((__s64)x * (__s64)sw + first) * cj->xs[2]];
	for (x = hi; x < wq; x++)
		d[x] = 0;
}

/*
 * The stride-phase rows of channel @c's padded input row @row * sh + @ph:
 * phase pw goes to @d + pw * @plane; rows in the padding are zeros.
 */
static void conv_window_phases(const struct conv_job *cj, __u64 c, __u64 row,
			       __u64 ph, float *d, __u64 plane)
{
	const struct vnpu_layer_conv *at = cj->at;
	__u64 sw = at->stride[1], wq = eng_conv_wq(&cj->s, at), pw, i;
	__s64 ih = (__s64)(row * at->stride[0] + ph) - at->pad_begin[0];
	const float *src = cj->x + (__s64)c * cj->xs[0] + ih * cj->xs[1];

	for (pw = 0; pw < sw; pw++, d += plane) {
		if (ih < 0 || ih >= (__s64)cj->s.h) {
			for (i = 0; i < wq; i++)
				d[i] = 0;
			continue;
		}
		conv_window_row(cj, src, pw, d);
	}
}

/*
 * Copies the input that padded columns [q0, q1) read into @win, and fills
 * the offset table. The zero-padded input (Hp x Wp) is split into stride
 * phases: plane (ph, pw) holds padded element (r * sh + ph, x * sw + pw) at
 * (r, x), Wq = ceil(Wp / sw) wide. Output (oh, ow) is padded column
 * q = oh * Wq + ow, and its input for kernel tap (kh, kw) lies in plane
 * (kh * dh % sh, kw * dw % sw) at (oh + kh * dh / sh, ow + kw * dw / sw):
 * q plus a constant, so 16 neighbouring outputs read 16 neighbouring floats.
 * With stride 1 there is one plane, the padded input itself.
 */
static void conv_window(const struct conv_job *cj, __u64 q0, __u64 q1,
			float *win, __s32 *off)
{
	const struct eng_conv_shape *s = &cj->s;
	const struct vnpu_layer_conv *at = cj->at;
	__u64 sh = at->stride[0], sw = at->stride[1], wq = eng_conv_wq(s, at);
	__u64 r0 = q0 / wq, rows, plane, cs, c, ph, r, i, k;

	rows = (q1 - 1) / wq - r0 + 1 + (s->kh - 1) * at->dilation[0] / sh;
	plane = rows * wq;
	cs = sh * sw * plane;
	for (c = 0; c < s->cg; c++)
		for (ph = 0; ph < sh; ph++)
			for (r = 0; r < rows; r++)
				conv_window_phases(cj, c, r0 + r, ph,
						   win + c * cs + ph * sw * plane + r * wq,
						   plane);
	/* Columns past the last row read the slack: keep it defined. */
	for (i = 0; i < ENG_NC + wq + s->kw * at->dilation[1] + ENG_NR; i++)
		win[s->cg * cs + i] = 0;
	k = 0;
	for (c = 0; c < s->cg; c++)
		for (r = 0; r < s->kh; r++)
			for (i = 0; i < s->kw; i++) {
				__u64 dy = r * at->dilation[0], dx = i * at->dilation[1];

				off[k++] = (__s32)(c * cs +
						   ((dy % sh) * sw + dx % sw) * plane +
						   dy / sh * wq + dx / sw +
						   (q0 - r0 * wq));
			}
}

static void conv_epi(const struct eng_layer *l, __u64 img, __u64 g,
		     struct gemm_epi *e, struct gemm_out *o)
{
	const struct vnpu_layer_conv *at = l->attrs;
	const struct vnpu_tensor *y = &l->t[l->n - 1];
	__u32 ri = eng_opt_index(at->flags, VNPU_LAYER_F_RESIDUAL);
	__u64 mg = y->dims[1] / at->group;

	e->alpha = 1.0f;
	e->beta = 1.0f;
	e->act = &at->act;
	e->c = 0;
	e->r = 0;
	if (at->flags & VNPU_LAYER_F_BIAS) {
		e->c = (const float *)l->data[2] + (__s64)(g * mg) *
		       l->t[2].strides[0];
		e->c_rs = l->t[2].strides[0];
		e->c_cs = 0;
	}
	if (at->flags & VNPU_LAYER_F_RESIDUAL) {
		const struct vnpu_tensor *r = &l->t[ri];

		e->r = (const float *)l->data[ri] + (__s64)img * r->strides[0] +
		       (__s64)(g * mg) * r->strides[1];
		e->r_rs = r->strides[1];
		e->r_cs = 1;
	}
	o->y = (float *)l->data[l->n - 1] + (__s64)img * y->strides[0] +
	       (__s64)(g * mg) * y->strides[1];
	o->rs = y->strides[1];
}

static void conv_job_init(const struct eng_layer *l, __u64 img, __u64 g,
			  struct conv_job *cj)
{
	const struct vnpu_tensor *x = &l->t[0];

	eng_conv_shape(l, &cj->s);
	cj->l = l;
	cj->g = g;
	cj->at = l->attrs;
	cj->xs[0] = x->strides[1];
	cj->xs[1] = x->rank == 4 ? x->strides[2] : 0;
	cj->xs[2] = x->strides[x->rank - 1];
	cj->x = (const float *)l->data[0] + (__s64)img * x->strides[0] +
		(__s64)(g * cj->s.cg) * x->strides[1];
}

static void pack_a_conv(const void *arg, __u64 m0, __u64 mc, __u64 k0,
			__u64 kc, float *dst);

/* The weights of group @g as GEMM's A. */
static void conv_weights(const struct eng_layer *l, __u64 g,
			 const struct conv_job *cj, struct gemm_a *a)
{
	const struct vnpu_layer_conv *at = l->attrs;
	const struct vnpu_tensor *w = &l->t[1];
	__u64 kt = cj->s.cg * cj->s.kh * cj->s.kw;

	a->k = kt;
	a->packed = 0;
	a->pack = 0;
	if (at->flags & VNPU_LAYER_F_PACKED) {
		a->packed = (const float *)l->data[1] +
			    g * eng_div_up(cj->s.mg, ENG_MR) * ENG_MR * kt;
		return;
	}
	/* Dense weights: rows of kt; strided ones per element. */
	a->p = (const float *)l->data[1] + (__s64)(g * cj->s.mg) * w->strides[0];
	a->rs = w->strides[0];
	a->cs = w->strides[w->rank - 1];
	if (kt > 1 && a->cs == 1 && w->strides[1] == (__s64)(cj->s.kh * cj->s.kw) &&
	    (w->rank == 3 || w->strides[2] == (__s64)cj->s.kw))
		return;
	a->pack = pack_a_conv;
}

/* Packs strided weights the slow way when they are not dense rows. */
static void pack_a_weights(const struct eng_layer *l, __u64 g,
			   const struct conv_job *cj, __u64 m0, __u64 mc,
			   __u64 k0, __u64 kc, float *dst)
{
	const struct vnpu_tensor *w = &l->t[1];
	__u64 p, i, k, khw = cj->s.kh * cj->s.kw;

	for (p = 0; p < mc; p += ENG_MR, dst += kc * ENG_MR)
		for (i = 0; i < ENG_MR; i++)
			for (k = 0; k < kc; k++) {
				__u64 m = g * cj->s.mg + m0 + p + i, kk = k0 + k;
				__s64 o = (__s64)m * w->strides[0] +
					  (__s64)(kk / khw) * w->strides[1] +
					  (__s64)(kk % cj->s.kw) *
					  w->strides[w->rank - 1];

				if (w->rank == 4)
					o += (__s64)((kk % khw) / cj->s.kw) *
					     w->strides[2];
				dst[k * ENG_MR + i] = p + i < mc ?
					((const float *)l->data[1])[o] : 0;
			}
}

/*
 * A 1x1 convolution without padding over a dense input reads B straight
 * from the input, when the unit's last panel stays inside the image.
 */
static int conv_direct(const struct conv_job *cj, __u64 q0, __u64 q1)
{
	const struct vnpu_layer_conv *at = cj->at;

	return cj->s.kh == 1 && cj->s.kw == 1 && at->stride[0] == 1 &&
	       at->stride[1] == 1 && !at->pad_begin[0] &&
	       !at->pad_begin[1] && !at->pad_end[0] && !at->pad_end[1] &&
	       cj->xs[2] == 1 && (cj->s.h == 1 || cj->xs[1] == (__s64)cj->s.w) &&
	       cj->xs[0] >= (__s64)(cj->s.h * cj->s.w) &&
	       q0 + eng_div_up(q1 - q0, ENG_NR) * ENG_NR <= cj->s.h * cj->s.w;
}

static void pack_a_conv(const void *arg, __u64 m0, __u64 mc, __u64 k0,
			__u64 kc, float *dst)
{
	const struct conv_job *cj = arg;

	pack_a_weights(cj->l, cj->g, cj, m0, mc, k0, kc, dst);
}

static int run_conv_gemm(const struct eng_layer *l, __u64 ub, __u64 ue,
			 const struct vnpu_eng_ctx *ctx)
{
	const struct vnpu_layer_conv *at = l->attrs;
	int windowed = eng_conv_windowed(at);
	struct conv_job cj;
	struct gemm_epi e;
	struct gemm_out o = {};
	struct gemm_a a = {};
	struct gemm_b b = {};
	__u64 u, qn, nb, q0, q1, m0, kt, wq, mu, mbu;
	float *abuf, *bbuf;

	eng_conv_shape(l, &cj.s);
	wq = eng_conv_wq(&cj.s, at);
	qn = eng_conv_cols(&cj.s, at);
	nb = eng_div_up(qn, ENG_NC);
	kt = cj.s.cg * cj.s.kh * cj.s.kw;
	gemm_scratch(ctx, !(at->flags & VNPU_LAYER_F_PACKED), &abuf, &bbuf);
	mu = eng_conv_mu(&cj.s);
	mbu = eng_div_up(cj.s.mg, mu);
	for (u = ub; u < ue; u++) {
		__u64 qi = u % nb, mi = (u / nb) % mbu;
		__u64 g = (u / (nb * mbu)) % cj.s.group;
		__u64 img = u / (nb * mbu * cj.s.group);
		__u64 m1 = eng_min(cj.s.mg, (mi + 1) * mu);

		conv_job_init(l, img, g, &cj);
		conv_weights(l, g, &cj, &a);
		a.arg = &cj;
		conv_epi(l, img, g, &e, &o);
		q0 = qi * ENG_NC;
		q1 = eng_min(q0 + ENG_NC, qn);
		if (windowed && conv_direct(&cj, q0, q1)) {
			__s32 *off = (__s32 *)bbuf;

			for (m0 = 0; m0 < cj.s.cg; m0++)
				off[m0] = (__s32)(m0 * cj.xs[0]);
			b.win = cj.x;
			b.off = off;
			o.wp = 0;
		} else if (windowed) {
			__s32 *off = (__s32 *)bbuf;
			float *win = eng_align(off + kt);

			conv_window(&cj, q0, q1, win, off);
			b.win = win - q0;
			b.off = off;
			/* Without spare columns, columns are outputs. */
			o.wp = wq == cj.s.ow ? 0 : wq;
			o.ow = cj.s.ow;
		} else {
			b.pack = pack_im2col;
			b.arg = &cj;
		}
		for (m0 = mi * mu; m0 < m1; m0 += ENG_MC)
			gemm_block(&a, &b, m0, eng_min(ENG_MC, m1 - m0), q0,
				   q1 - q0, kt, &o, &e, abuf, bbuf);
	}
	return 0;
}

static float dw_weight(const struct eng_layer *l, __u64 c, __u64 kh, __u64 kw)
{
	const struct vnpu_layer_conv *at = l->attrs;
	const struct vnpu_tensor *w = &l->t[1];
	const float *wp = l->data[1];
	__u64 khw = (__u64)at->kernel[0] * at->kernel[1];

	if (at->flags & VNPU_LAYER_F_PACKED)
		return wp[c * ENG_MR * khw + (kh * at->kernel[1] + kw) * ENG_MR];
	if (w->rank == 3)
		return wp[(__s64)c * w->strides[0] + (__s64)kw * w->strides[2]];
	return wp[(__s64)c * w->strides[0] + (__s64)kh * w->strides[2] +
		  (__s64)kw * w->strides[3]];
}

/* Depthwise: each unit is one output row of one channel. */
static int run_conv_dw(const struct eng_layer *l, __u64 ub, __u64 ue,
		       const struct vnpu_eng_ctx *ctx)
{
	const struct vnpu_layer_conv *at = l->attrs;
	const struct vnpu_tensor *x = &l->t[0], *y = &l->t[l->n - 1];
	__u32 ri = eng_opt_index(at->flags, VNPU_LAYER_F_RESIDUAL);
	__s64 xsh = x->rank == 4 ? x->strides[2] : 0;
	__s64 xsw = x->strides[x->rank - 1];
	struct eng_conv_shape s;
	__u64 u, ow, kh, kw, lo, hi;

	eng_conv_shape(l, &s);
	for (u = ub; u < ue; u++) {
		__u64 img = u / (s.m * s.oh), c = (u / s.oh) % s.m, oh = u % s.oh;
		float *yr = (float *)l->data[l->n - 1] +
			    (__s64)img * y->strides[0] + (__s64)c * y->strides[1] +
			    (__s64)(oh * s.ow);
		const float *xc = (const float *)l->data[0] +
				  (__s64)img * x->strides[0] +
				  (__s64)c * x->strides[1];
		float b0 = 0;

		if (at->flags & VNPU_LAYER_F_BIAS)
			b0 = ((const float *)l->data[2])[(__s64)c *
							 l->t[2].strides[0]];
		for (ow = 0; ow < s.ow; ow++)
			yr[ow] = b0;
		for (kh = 0; kh < s.kh; kh++) {
			__s64 ih = (__s64)(oh * at->stride[0] +
					   kh * at->dilation[0]) - at->pad_begin[0];
			const float *xr = xc + ih * xsh;

			if (ih < 0 || ih >= (__s64)s.h)
				continue;
			for (kw = 0; kw < s.kw; kw++) {
				__s64 off = (__s64)(kw * at->dilation[1]) -
					    at->pad_begin[1];
				float wv = dw_weight(l, c, kh, kw);

				valid_span(off, at->stride[1], s.w, s.ow, &lo, &hi);
				if (at->stride[1] == 1 && xsw == 1) {
					const float *xo = xr + off;

					for (ow = lo; ow < hi; ow++)
						yr[ow] += wv * xo[ow];
				} else {
					for (ow = lo; ow < hi; ow++)
						yr[ow] += wv *
						xr[((__s64)ow * at->stride[1] + off) * xsw];
				}
			}
		}
		if (at->flags & VNPU_LAYER_F_RESIDUAL) {
			const struct vnpu_tensor *r = &l->t[ri];
			const float *rr = (const float *)l->data[ri] +
					  (__s64)img * r->strides[0] +
					  (__s64)c * r->strides[1] +
					  (__s64)(oh * s.ow);

			for (ow = 0; ow < s.ow; ow++)
				yr[ow] += rr[ow];
		}
		act_f32(&at->act, yr, s.ow);
	}
	return 0;
}

static int run_conv(const struct eng_layer *l, __u64 ub, __u64 ue,
		    const struct vnpu_eng_ctx *ctx)
{
	struct eng_conv_shape s;

	eng_conv_shape(l, &s);
	if (eng_conv_depthwise(&s))
		return run_conv_dw(l, ub, ue, ctx);
	return run_conv_gemm(l, ub, ue, ctx);
}

/* ---- POOL ------------------------------------------------------------ */

static float pool_one(const struct vnpu_layer_pool *at, const void *xc,
		      __u32 dt, __s64 xsh, __s64 xsw, __u64 h, __u64 w,
		      __u64 oh, __u64 ow)
{
	__s64 h0 = (__s64)(oh * at->stride[0]) - at->pad_begin[0];
	__s64 w0 = (__s64)(ow * at->stride[1]) - at->pad_begin[1];
	float mx = -(float)m_inf(), sum = 0;
	double lp = 0;
	__u64 kh, kw, count = 0, padded = 0;
	__u32 i;

	for (kh = 0; kh < at->kernel[0]; kh++) {
		__s64 ih = h0 + (__s64)(kh * at->dilation[0]);

		for (kw = 0; kw < at->kernel[1]; kw++) {
			__s64 iw = w0 + (__s64)(kw * at->dilation[1]);
			float v;

			if (ih < (__s64)h + at->pad_end[0] &&
			    iw < (__s64)w + at->pad_end[1])
				padded++;
			if (ih < 0 || ih >= (__s64)h || iw < 0 || iw >= (__s64)w)
				continue;
			v = ldf(xc, ih * xsh + iw * xsw, dt);
			count++;
			if (at->mode == VNPU_POOL_MAX) {
				if (v > mx || v != v)
					mx = v;
			} else if (at->mode == VNPU_POOL_AVG) {
				sum += v;
			} else {
				double a = m_fabs(v), t = 1;

				for (i = 0; i < at->p; i++)
					t *= a;
				lp += t;
			}
		}
	}
	if (at->mode == VNPU_POOL_MAX)
		return mx;
	if (at->mode == VNPU_POOL_AVG) {
		if (at->flags & VNPU_POOL_F_COUNT_PAD)
			count = padded;
		return count ? sum / (float)count : 0.0f;
	}
	if (at->p == 1)
		return (float)lp;
	if (at->p == 2)
		return (float)m_sqrt(lp);
	return (float)m_pow(lp, 1.0 / at->p);
}

/* Output elements, each one window, grouped to about ENG_ELEM_UNIT work. */
static int run_pool(const struct eng_layer *l, __u64 ub, __u64 ue,
		    const struct vnpu_eng_ctx *ctx)
{
	const struct vnpu_layer_pool *at = l->attrs;
	const struct vnpu_tensor *x = &l->t[0], *y = &l->t[1];
	int two = x->rank == 4;
	__u64 oh_n = two ? y->dims[2] : 1, ow_n = y->dims[y->rank - 1];
	__u64 h = two ? x->dims[2] : 1, w = x->dims[x->rank - 1];
	__u64 lo, hi, e;
	__s64 xsh = two ? x->strides[2] : 0, xsw = x->strides[x->rank - 1];
	__s64 ysh = two ? y->strides[2] : 0, ysw = y->strides[y->rank - 1];
	__u32 size = vnpu_eng_dtype_size(x->dtype);

	row_range(vnpu_eng_numel(y), (__u64)at->kernel[0] * at->kernel[1], ub,
		  ue, &lo, &hi);
	for (e = lo; e < hi; e++) {
		__u64 ow = e % ow_n, oh = (e / ow_n) % oh_n;
		__u64 c = (e / (ow_n * oh_n)) % y->dims[1];
		__u64 img = e / (ow_n * oh_n * y->dims[1]);
		const char *xc = (const char *)l->data[0] + size *
				 ((__s64)img * x->strides[0] +
				  (__s64)c * x->strides[1]);

		stf(l->data[1], (__s64)img * y->strides[0] +
		    (__s64)c * y->strides[1] + (__s64)oh * ysh + (__s64)ow * ysw,
		    y->dtype,
		    pool_one(at, xc, x->dtype, xsh, xsw, h, w, oh, ow));
	}
	return 0;
}

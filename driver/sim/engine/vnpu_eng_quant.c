// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * 8-bit quantized ops: QuantizeLinear, DequantizeLinear, MatMulInteger,
 * QLinearMatMul and QLinearConv, built per ISA (vnpu_eng_isa.h). Sums
 * are exact 32-bit integers; requantization is in
 * f32 with round half to even, as ONNX Runtime does.
 */
#include "vnpu_eng_kern.h"
#include "vnpu_eng_qout.h"

static __s32 ld_q(const void *base, __s64 off, __u32 dtype)
{
	if (dtype == VNPU_DTYPE_U8)
		return ((const __u8 *)base)[off];
	if (dtype == VNPU_DTYPE_I8)
		return ((const __s8 *)base)[off];
	return ((const __s32 *)base)[off];
}

/* A per-tensor or per-index parameter of a quantized op. */
static __s64 qparam_off(const struct vnpu_cmd_tensor *p, __u64 i)
{
	return p->rank == 1 && p->dims[0] > 1 ? (__s64)i * p->strides[0] : 0;
}

static float qscale(const struct eng_layer *l, __u32 t, __u64 i)
{
	return ((const float *)l->data[t])[qparam_off(&l->t[t], i)];
}

static __s32 qzero(const struct eng_layer *l, __u32 t, __u64 i)
{
	return ld_q(l->data[t], qparam_off(&l->t[t], i), l->t[t].dtype);
}

static void st_q(void *base, __s64 off, __u32 dtype, double v)
{
	__s64 lo = dtype == VNPU_DTYPE_U8 ? 0 : -128;
	__s64 hi = dtype == VNPU_DTYPE_U8 ? 255 : 127;
	__s64 r = v != v ? 0 : v < lo ? lo : v > hi ? hi : (__s64)v;

	if (dtype == VNPU_DTYPE_U8)
		((__u8 *)base)[off] = (__u8)r;
	else
		((__s8 *)base)[off] = (__s8)r;
}

/* Row-major and dense (dims of extent 1 take any stride). */
static int q_dense(const struct vnpu_cmd_tensor *t)
{
	__s64 step = 1;
	__u32 d;

	for (d = t->rank; d-- > 0;) {
		if (t->dims[d] != 1 && t->strides[d] != step)
			return 0;
		step *= (__s64)t->dims[d];
	}
	return 1;
}

/*
 * Per-tensor QUANTIZE and DEQUANTIZE of dense 8-bit tensors, eight
 * elements at a time: the bits of the element loop below.
 */
static int quant_flat(const struct eng_layer *l, __u64 lo, __u64 hi,
		      const struct vnpu_eng_ctx *ctx)
{
	const struct vnpu_cmd_tensor *x = &l->t[0], *y = &l->t[3];
	int q = l->op == VNPU_LAYER_QUANTIZE;
	__u32 qt = q ? y->dtype : x->dtype;
	float s = qscale(l, 1, 0), bl = qt == VNPU_DTYPE_U8 ? 0 : -128;
	float bh = qt == VNPU_DTYPE_U8 ? 255 : 127;
	__s32 z = qzero(l, 2, 0);
	__u64 e;

	if (vnpu_eng_numel(&l->t[1]) != 1 ||
	    (qt != VNPU_DTYPE_U8 && qt != VNPU_DTYPE_I8) || !q_dense(x) ||
	    !q_dense(y))
		return 0;
	bl -= (float)z;
	bh -= (float)z;
	e = lo;
#ifdef ENG_FMA
	if (ctx->features & VNPU_ENG_F_VNNI) {
		struct eng_qlin v = { .n = hi - lo, .s = s, .lo = bl, .hi = bh, .z = z,
				      .quant = q, .s8 = qt == VNPU_DTYPE_I8 };

		v.x = (const __u8 *)l->data[0] + lo * (q ? 4 : 1);
		v.y = (__u8 *)l->data[3] + lo * (q ? 1 : 4);
		vnpu_eng_qlin_avx512(&v);
		e = lo + (hi - lo) / 16 * 16;
	}
#endif
	for (; e + 8 <= hi; e += 8) {
		if (q) {
			v8si_qq v = q_round8(*(const v8sf_qqu *)((const float *)l->data[0] + e) / s,
					     bl, bh, z);

			*(v8qu_qqu *)((__u8 *)l->data[3] + e) = q_bytes8(v);
		} else {
			v8si_qq v = q_load8((const __u8 *)l->data[0] + e, qt);

			*(v8sf_qqu *)((float *)l->data[3] + e) =
				__builtin_convertvector(v - z, v8sf_qq) * s;
		}
	}
	for (; e < hi; e++) {
		if (q) {
			float v = ((const float *)l->data[0])[e];

			st_q(l->data[3], (__s64)e, qt, m_rint((double)(v / s)) + z);
		} else {
			((float *)l->data[3])[e] = (float)(__s64)
				((__s64)ld_q(l->data[0], (__s64)e, qt) - z) * s;
		}
	}
	return 1;
}

int run_quant(const struct eng_layer *l, __u64 ub, __u64 ue,
	      const struct vnpu_eng_ctx *ctx)
{
	const struct vnpu_layer_quant *at = l->attrs;
	const struct vnpu_cmd_tensor *x = &l->t[0], *y = &l->t[3];
	__u64 coord[VNPU_MAX_DIMS] = {}, lo, hi, e;

	elem_range(y, ub, ue, &lo, &hi);
	if (quant_flat(l, lo, hi, ctx))
		return 0;
	if (lo < hi)
		coords_of(y, lo, coord);
	for (e = lo; e < hi; e++, coords_next(y, coord)) {
		__u64 i = x->rank ? coord[at->axis] : 0;
		float s = qscale(l, 1, i);
		__s32 z = qzero(l, 2, i);

		if (l->op == VNPU_LAYER_QUANTIZE) {
			float v = ((const float *)l->data[0])[offset_of(x, coord)];

			st_q(l->data[3], offset_of(y, coord), y->dtype,
			     m_rint((double)(v / s)) + z);
		} else {
			__s32 v = ld_q(l->data[0], offset_of(x, coord), x->dtype);

			((float *)l->data[3])[offset_of(y, coord)] =
				(float)(__s64)((__s64)v - z) * s;
		}
	}
	return 0;
}

/*
 * ---- QLINEAR_ADD ------------------------------------------------------
 *
 * qadd8() (vnpu_eng_qout.h) eight elements at a time.
 */
static void qadd_row(const void *arg, char *const *p, const __s64 *st,
		     __u64 n)
{
	const struct eng_qadd_arg *q = arg;
	__u64 i, j;

	for (i = 0; i < n; i += 8) {
		__u64 m = eng_min(8, n - i);
		v8si_qq y = qadd8(q, qadd_load(p[0] + (__s64)i * st[0], st[0], m,
					       q->dtype),
				  qadd_load(p[1] + (__s64)i * st[1], st[1], m,
					    q->dtype));
		__u8 *out = (__u8 *)p[2] + (__s64)i * st[2];

		if (st[2] == 1 && m == 8) {
			*(v8qu_qqu *)out = q_bytes8(y);
			continue;
		}
		for (j = 0; j < m; j++)
			out[(__s64)j * st[2]] = (__u8)y[j];
	}
}

#ifdef ENG_FMA
/*
 * @n (a multiple of 32) dense elements of qadd_bounded() parameters, 32
 * at a time: qadd8()'s fused multiply-adds, clamp and conversion, the
 * bytes packed as the conv tile's are.
 */
static void qadd_fast(const struct eng_qadd_arg *q, const char *a, const char *b,
		      char *y, __u64 n)
{
	v8sf_qq ra = (v8sf_qq){} + q->ra, rb = (v8sf_qq){} + q->rb;
	v8sf_qq f = (v8sf_qq){} + q->f, lo = (v8sf_qq){} + q->lo;
	v8sf_qq hi = (v8sf_qq){} + q->hi;
	__u64 i, e;

	for (i = 0; i < n; i += 32) {
		v8si_qq v[4];

		for (e = 0; e < 4; e++) {
			v8sf_qq t = VFMA(__builtin_convertvector(q_load8(b + i + 8 * e,
									   q->dtype),
								   v8sf_qq), rb, f);

			t = VFMA(__builtin_convertvector(q_load8(a + i + 8 * e, q->dtype),
							 v8sf_qq), ra, t);
			t = __builtin_ia32_minps256(__builtin_ia32_maxps256(t, lo), hi);
			v[e] = __builtin_ia32_cvtps2dq256(t);
		}
		q_bytes32(v, (__u8 *)y + i);
	}
}
#endif

/*
 * @n dense elements: qadd_row() with the parameters in locals, which the
 * byte stores cannot alias (through @arg GCC loads them again after
 * every store).
 */
static void qadd_flat(const struct eng_qadd_arg *arg, char *a, char *b,
		      char *y, __u64 n, const struct vnpu_eng_ctx *ctx)
{
	const struct eng_qadd_arg q = *arg;
	static const __s64 one[3] = { 1, 1, 1 };
	char *p[3];
	__u64 i = 0;

#ifdef ENG_FMA
	if (ctx->features & VNPU_ENG_F_VNNI) {
		struct eng_qadd v = { .a = (const __u8 *)a, .b = (const __u8 *)b,
				      .y = (__u8 *)y, .n = n, .ra = q.ra, .rb = q.rb,
				      .f = q.f, .lo = (__s32)q.lo, .hi = (__s32)q.hi,
				      .s8 = q.dtype == VNPU_DTYPE_I8 };

		vnpu_eng_qadd_avx512(&v);
		i = n / 16 * 16;
	} else if (qadd_bounded(&q)) {
		i = n / 32 * 32;
		qadd_fast(&q, a, b, y, i);
	}
#endif
	for (; i + 8 <= n; i += 8)
		*(v8qu_qqu *)(y + i) = q_bytes8(qadd8(&q, q_load8(a + i, q.dtype),
						      q_load8(b + i, q.dtype)));
	p[0] = a + i;
	p[1] = b + i;
	p[2] = y + i;
	if (i < n)
		qadd_row(&q, p, one, n - i);
}

/* @a * @b + @c rounded once, as Q_FMA does it. */
static float qadd_fma1(float a, float b, float c)
{
	return Q_FMA((v8sf_qq){} + a, (v8sf_qq){} + b, (v8sf_qq){} + c)[0];
}

/*
 * The parameters of a QLinearAdd of @dtype whose A's scale and zero
 * point are tensors @a and @a + 1 of @l, B's @b and @b + 1, Y's @z and
 * @z + 1.
 */
static void qadd_params(const struct eng_layer *l, __u32 a, __u32 b, __u32 z,
			__u32 dtype, struct eng_qadd_arg *q)
{
	q->dtype = dtype;
	q->ra = qscale(l, a, 0) / qscale(l, z, 0);
	q->rb = qscale(l, b, 0) / qscale(l, z, 0);
	q->f = (float)qzero(l, z + 1, 0) - qadd_fma1(q->ra, (float)qzero(l, a + 1, 0),
						      q->rb * (float)qzero(l, b + 1, 0));
	q->lo = dtype == VNPU_DTYPE_U8 ? 0 : -128;
	q->hi = dtype == VNPU_DTYPE_U8 ? 255 : 127;
}

int run_qlinear_add(const struct eng_layer *l, __u64 ub, __u64 ue,
		    const struct vnpu_eng_ctx *ctx)
{
	const struct vnpu_cmd_tensor *y = &l->t[8];
	struct eng_qadd_arg q;
	struct eng_iter it;
	__u64 lo, hi;

	qadd_params(l, 1, 4, 6, y->dtype, &q);
	elem_range(y, ub, ue, &lo, &hi);
	if (q_dense(&l->t[0]) && q_dense(&l->t[3]) && q_dense(y) &&
	    vnpu_eng_numel(&l->t[0]) == vnpu_eng_numel(y) &&
	    vnpu_eng_numel(&l->t[3]) == vnpu_eng_numel(y)) {
		/* Same shapes, all dense: one flat row, no iterator. */
		qadd_flat(&q, (char *)l->data[0] + lo, (char *)l->data[3] + lo,
			  (char *)l->data[8] + lo, hi - lo, ctx);
		return 0;
	}
	iter_init(&it, y);
	iter_add(&it, &l->t[0], y, l->data[0]);
	iter_add(&it, &l->t[3], y, l->data[3]);
	iter_add(&it, y, y, l->data[8]);
	iter_run(&it, lo, hi, qadd_row, &q);
	return 0;
}

/* The exact sum of row @m of A times column @n of B, zero points off. */
static __s32 qdot(const void *a, const struct vnpu_cmd_tensor *ta, __s64 ao,
		  __s32 az, const void *b, const struct vnpu_cmd_tensor *tb,
		  __s64 bo, __s32 bz, __u64 k)
{
	__s64 as = ta->strides[ta->rank - 1], bs = tb->strides[tb->rank - 2];
	__u32 acc = 0;
	__u64 i;

	for (i = 0; i < k; i++)
		acc += (__u32)((ld_q(a, ao + (__s64)i * as, ta->dtype) - az) *
			       (ld_q(b, bo + (__s64)i * bs, tb->dtype) - bz));
	return (__s32)acc;
}

/* Rows [@b->r0, @b->r1) of a quantized MatMul, columns [@b->c0, @b->c1). */
static void qmatmul_block(const struct eng_layer *l, const struct eng_block *b,
			  __u64 m)
{
	int qlinear = l->op == VNPU_LAYER_QLINEAR_MATMUL;
	__u32 ib = qlinear ? 3 : 1, iaz = 2, ibz = qlinear ? 5 : 3;
	const struct vnpu_cmd_tensor *ta = &l->t[0], *tb = &l->t[ib];
	const struct vnpu_cmd_tensor *y = &l->t[l->n - 1];
	__u64 k = ta->dims[ta->rank - 1], r, j;

	for (r = b->r0; r < b->r1; r++) {
		__u64 bi = r / m, mi = r % m;
		__s64 ao = batch_offset(ta, y, bi) +
			   (__s64)mi * ta->strides[ta->rank - 2];
		__s64 bo = batch_offset(tb, y, bi);
		__s64 yo = batch_offset(y, y, bi) +
			   (__s64)mi * y->strides[y->rank - 2];
		__s32 az = qzero(l, iaz, qlinear ? 0 : mi);

		for (j = b->c0; j < b->c1; j++) {
			__s32 acc = qdot(l->data[0], ta, ao, az, l->data[ib], tb,
					 bo + (__s64)j * tb->strides[tb->rank - 1],
					 qzero(l, ibz, j), k);
			float mult;

			if (!qlinear) {
				((__s32 *)l->data[4])[yo + (__s64)j] = acc;
				continue;
			}
			mult = qscale(l, 1, 0) * qscale(l, 4, j) / qscale(l, 6, 0);
			st_q(l->data[8], yo + (__s64)j, y->dtype,
			     m_rint((double)((float)acc * mult)) + qzero(l, 7, 0));
		}
	}
}

int run_qmatmul(const struct eng_layer *l, __u64 ub, __u64 ue,
		const struct vnpu_eng_ctx *ctx)
{
	__u64 batch, m, n, k, u;
	struct eng_block b;

	eng_gemm_shape(l, &batch, &m, &n, &k);
	for (u = ub; u < ue; u++) {
		eng_block_of(batch * m, n, k, u, &b);
		qmatmul_block(l, &b, m);
	}
	return 0;
}

/* (x - xz) * (w - wz) of QLinearConv's X at @xo and W at @wo, wrapping. */
static __u32 qprod(const struct eng_layer *l, __s64 xo, __s32 xz, __s64 wo,
		   __s32 wz)
{
	return (__u32)((ld_q(l->data[0], xo, l->t[0].dtype) - xz) *
		       (ld_q(l->data[3], wo, l->t[3].dtype) - wz));
}

/* QLinearConv output (img, m, oh, ow) summed over its window, wrapping. */
static __u32 qconv_window(const struct eng_layer *l,
			  const struct eng_conv_shape *s, __u64 img, __u64 m,
			  __u64 oh, __u64 ow)
{
	const struct vnpu_layer_conv *at = l->attrs;
	const struct vnpu_cmd_tensor *x = &l->t[0], *w = &l->t[3];
	int two = x->rank == 4;
	__s64 xsh = two ? x->strides[2] : 0, xsw = x->strides[x->rank - 1];
	__s64 wsh = two ? w->strides[2] : 0, wsw = w->strides[w->rank - 1];
	__s32 xz = qzero(l, 2, 0), wz = qzero(l, 5, m);
	__u64 g = m / s->mg, c, kh, kw;
	__u32 acc = 0;

	for (c = 0; c < s->cg; c++) {
		for (kh = 0; kh < s->kh; kh++) {
			__s64 ih = (__s64)(oh * at->stride[0] +
					   kh * at->dilation[0]) - at->pad_begin[0];
			__s64 xrow = (__s64)img * x->strides[0] +
				     (__s64)(g * s->cg + c) * x->strides[1] + ih * xsh;
			__s64 wrow = (__s64)m * w->strides[0] +
				     (__s64)c * w->strides[1] + (__s64)kh * wsh;

			if (ih < 0 || ih >= (__s64)s->h)
				continue;
			for (kw = 0; kw < s->kw; kw++) {
				__s64 iw = (__s64)(ow * at->stride[1] +
						   kw * at->dilation[1]) -
					   at->pad_begin[1];

				if (iw >= 0 && iw < (__s64)s->w)
					acc += qprod(l, xrow + iw * xsw, xz,
						     wrow + (__s64)kw * wsw, wz);
			}
		}
	}
	return acc;
}

static int run_qconv(const struct eng_layer *l, __u64 ub, __u64 ue,
		     const struct vnpu_eng_ctx *ctx)
{
	const struct vnpu_layer_conv *at = l->attrs;
	const struct vnpu_cmd_tensor *y = &l->t[l->n - 1];
	__s32 yz = qzero(l, 7, 0);
	struct eng_conv_shape s;
	struct eng_block b;
	__u64 u, r, ow;

	eng_conv_shape(l, &s);
	for (u = ub; u < ue; u++) {
		eng_block_of(s.n * s.m * s.oh, s.ow, s.cg * s.kh * s.kw, u, &b);
		for (r = b.r0; r < b.r1; r++) {
			__u64 img = r / (s.m * s.oh), m = (r / s.oh) % s.m;
			__u64 oh = r % s.oh;
			float mult = qscale(l, 1, 0) * qscale(l, 4, m) /
				     qscale(l, 6, 0);
			__s64 yo = (__s64)img * y->strides[0] +
				   (__s64)m * y->strides[1] + (__s64)(oh * s.ow);

			for (ow = b.c0; ow < b.c1; ow++) {
				__u32 acc = 0;
				double v;

				if (at->flags & VNPU_LAYER_F_BIAS)
					acc = (__u32)((const __s32 *)l->data[8])
						[(__s64)m * l->t[8].strides[0]];
				acc += qconv_window(l, &s, img, m, oh, ow);
				v = m_rint((double)((float)(__s32)acc * mult)) + yz;
				if (at->act.func == VNPU_ACT_RELU && v < yz)
					v = yz;
				st_q(l->data[l->n - 1], yo + (__s64)ow, y->dtype, v);
			}
		}
	}
	return 0;
}

/*
 * ---- QLINEAR_CONV over packed weights --------------------------------
 *
 * A GEMM of the packed i8 weights (rows: output channels) by the input's
 * im2col (columns: output positions) in exact 32-bit sums. X is read as
 * u8: i8 inputs are flipped by 0x80 (x + 128) and their zero point moved
 * by 128, so that sum (x - xz) * (w - wz) is
 *   sum x * w - xz * sum w - wz * sum x + K * xz * wz
 * from the u8 x i8 products vpdpbusd takes; sum w comes packed, sum x is
 * counted while packing (only when a weight zero point is not 0). Padding
 * reads as xz, so it adds nothing.
 */
/**
 * struct qx8 - a pair of weights left out of a tile's rows: an entry of
 * a %VNPU_PACK_QCONV_SPLIT table (little-endian, as x86 reads it), or
 * of qw8_split()'s at run time; a row's pairs one run, the runs by row,
 * where each ends said apart (struct eng_qconv's x8end)
 * @off: the pair's offset in a packed block, ENG_QPAIR_OFF() of the depth
 *	k of its first weight (even): only its bits ENG_QPAIR_STEP and 0
 *	count
 * @w2: the two weights as 16-bit halves (low: depth k)
 *
 * Packed: a table may sit at any offset of W.
 */
struct qx8 {
	__u32 off;
	__s32 w2;
} __attribute__((__packed__));

struct eng_qconv {
	const struct eng_layer *l;
	const struct vnpu_eng_ctx *ctx;
	struct eng_conv_shape s;
	struct eng_qplan p;
	const __s8 *w;
	const __s32 *wsum;
	__s32 xz, yz, lo, hi;
	__u8 flip;
	int need_xsum, direct;
	int flat;		/* VNNI: packed from X itself (qconv_pack_flat()) */
	int phase;		/* VNNI, stride 2: from X's phases (qconv_pack_phase()) */
	__u8 *ph;		/* the stride phases (p.ph bytes) */
	int wide;		/* AVX2 without VNNI: qtile8_avx2() or qtile_avx2() */
	__u8 *b;		/* [ncp / QNR][k4 / 4][QNR][4] */
	__u8 *rows;		/* 4 rows of p.rs, one per depth of a step */
	__u8 *stage;		/* one input channel, padded (qconv_stage) */
	__u8 *planes;		/* ENG_QPLANES channels' tap planes, or NULL */
	__s32 *xsum;		/* per position: sum of its inputs */
	__s32 *acc;		/* one tile's sums */
	__s16 *b16;		/* AVX2: the packed block widened (qb16_block) */
	__s16 *w16;		/* AVX2: a tile's weight rows widened, or... */
	__s8 *w8buf;		/* ...split for vpmaddubsw (qw8_split(): at w16) */
	struct qx8 *x8buf;	/* ...and the pairs it leaves out (after w8buf) */
	const __s8 *w8;		/* the 8-bit tile's rows: w8buf or W's own */
	const struct qx8 *x8;	/* the pairs left out of a tile's rows: x8buf */
				/* or W's table (VNPU_LAYER_F_SPLIT8) */
	__u64 nx8;		/* how many; ~0: the rows take qtile_avx2() */
	const __u8 *x8end;	/* the end of each row's run of them (u32) */
	__u32 x8endbuf[ENG_QMR];	/* ...qw8_split()'s */
	const __u8 *tab;	/* VNPU_LAYER_F_SPLIT8: the tiles' tables */
	const __u8 *sched;	/* the tile's step schedule (its table's), or NULL */
	struct qconv_held *h;
	__s16 *stage16;		/* AVX2 depthwise: @stage widened */
	__u8 *dw8;		/* AVX2 eight-channel depthwise (p.dw8), or NULL */
	const struct eng_qadd_arg *res;	/* VNPU_LAYER_F_RESIDUAL's add, or NULL */
	/* Per output channel m, read once a layer (qconv_params()): */
	float xs, ys;		/* x_scale and y_scale */
	const float *ws;	/* w_scale: m's at ws[m * wss] (wss 0: one) */
	const void *wzp;	/* w_zero_point of dtype @wzt, m's at m * wzs */
	const __s32 *bias;	/* the i32 bias, m's at m * bs; NULL: none */
	__s64 wss, wzs, bs;
	__u32 wzt;
};

/*
 * What a part's scratch holds at its start, for the command's next parts
 * on it (struct vnpu_eng_ctx's @epoch): the packed column block @key
 * (image, group, column block; ~0: none) of the layer of @attrs, packed
 * in the run @epoch. A layer runs as many parts as it has units, and a
 * column block has one unit per channel block (struct eng_qplan): without
 * it, each of them packed the block again.
 */
struct qconv_held {
	__u64 epoch;
	const void *attrs;
	__u64 key;
	int need_xsum;		/* the layer's (a scan of its M zero points) */
	int b16;		/* the block @key is widened too (qb16_block()) */
};

static void *q_align(__u8 **p, __u64 bytes)
{
	__u8 *r = (__u8 *)(((unsigned long)*p + ENG_ALIGN - 1) &
			   ~(unsigned long)(ENG_ALIGN - 1));

	*p = r + bytes;
	return r;
}

typedef unsigned char v16qu_s __attribute__((vector_size(16)));
typedef unsigned char v32qu_s __attribute__((vector_size(32)));
typedef unsigned char v16qu_su __attribute__((vector_size(16), aligned(1), may_alias));
typedef unsigned char v32qu_su __attribute__((vector_size(32), aligned(1), may_alias));
typedef unsigned char v8qu_s8u __attribute__((vector_size(8), aligned(1), may_alias));

typedef unsigned char v4qu_s4u __attribute__((vector_size(4), aligned(1), may_alias));

/*
 * @w (at least 1) bytes from @s to @d: 16, 8 or 4 at a time, the last
 * move ending at the row's end (moves overlap; none reads past @s + @w).
 */
static __attribute__((__always_inline__)) inline
void qconv_copy_row(__u8 *d, const __u8 *s, __u64 w)
{
	__u64 i;

	if (w >= 16) {
		for (i = 0; i + 16 < w; i += 16)
			*(v16qu_su *)(d + i) = *(const v16qu_su *)(s + i);
		*(v16qu_su *)(d + w - 16) = *(const v16qu_su *)(s + w - 16);
	} else if (w >= 8) {
		*(v8qu_s8u *)d = *(const v8qu_s8u *)s;
		*(v8qu_s8u *)(d + w - 8) = *(const v8qu_s8u *)(s + w - 8);
	} else if (w >= 4) {
		*(v4qu_s4u *)d = *(const v4qu_s4u *)s;
		*(v4qu_s4u *)(d + w - 4) = *(const v4qu_s4u *)(s + w - 4);
	} else {
		for (i = 0; i < w; i++)
			d[i] = s[i];
	}
}

/*
 * Stage input channel @c of image @img for the column block from output
 * row @oh0: its p.hp rows as the padded input has them (padding read as
 * the zero point), each p.wp bytes, so that every tap's row of the
 * im2col is a plain (strided) copy of it. A row inside the input gets
 * the zero point only where it is padding or slack.
 */
static void qconv_stage(const struct eng_qconv *q, __u64 img, __u64 c,
			__u64 oh0)
{
	const struct vnpu_layer_conv *a = q->l->attrs;
	const struct vnpu_cmd_tensor *x = &q->l->t[0];
	__s64 xsh = x->rank == 4 ? x->strides[2] : 0;
	__u64 w = q->s.w, hp = q->p.hp, wp = q->p.wp, r, i;
	__u64 pb = a->pad_begin[1], ihb = oh0 * a->stride[0];
	__s64 h = (__s64)q->s.h, top = a->pad_begin[0];
	v16qu_s pad = (v16qu_s){} + (__u8)(q->xz ^ q->flip);
	const __u8 *xc = (const __u8 *)q->l->data[0] +
			 (__s64)img * x->strides[0] + (__s64)c * x->strides[1];
	/* Locals: the byte stores below may alias anything q points to. */
	__u8 *d = q->stage;

	for (r = 0; r < hp; r++, d += wp) {
		__s64 ih = (__s64)(ihb + r) - top;

		/* The last store may run 15 bytes on: the next row's. */
		if (ih < 0 || ih >= h) {
			for (i = 0; i < wp; i += 16)
				*(v16qu_su *)(d + i) = pad;
			continue;
		}
		for (i = 0; i < pb; i += 16)
			*(v16qu_su *)(d + i) = pad;
		qconv_copy_row(d + pb, xc + ih * xsh, w);
		for (i = pb + w; i < wp; i += 16)
			*(v16qu_su *)(d + i) = pad;
	}
}

/*
 * Tap (@kh, @kw)'s row of the im2col from the staged channel: @cnt
 * positions from column @o0 of the staged first output row, then zeros
 * to the last tile's end. Rows of stride 1 and 2 move 16 positions at a
 * time; what a store writes past a row's end, the next row overwrites
 * (or ENG_QSLACK takes).
 */
static void qconv_tap(const struct eng_qconv *q, __u8 *dst, __u64 kh,
		      __u64 kw, __u64 o0, __u64 cnt)
{
	const struct vnpu_layer_conv *a = q->l->attrs;
	const struct eng_qplan *p = &q->p;
	const __u8 *src = q->stage + kh * a->dilation[0] * p->wp +
			  kw * a->dilation[1];
	__u64 ow = q->s.ow, sw = a->stride[1], i, o, e;

	for (i = 0; i < cnt; i += e - o0, o0 = 0, src += a->stride[0] * p->wp) {
		__u8 *d = dst + i - o0;

		e = eng_min(ow, o0 + cnt - i);
		if (sw == 1) {
			for (o = o0; o < e; o += 16)
				*(v16qu_su *)(d + o) = *(const v16qu_su *)(src + o);
		} else if (sw == 2) {
			for (o = o0; o < e; o += 16) {
				v32qu_s v = *(const v32qu_su *)(src + 2 * o);

				*(v16qu_su *)(d + o) = __builtin_shufflevector(v, v,
					0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
			}
		} else {
			for (o = o0; o < e; o++)
				d[o] = src[o * sw];
		}
	}
	for (i = cnt; i < eng_div_up(cnt, ENG_QNR) * ENG_QNR; i++)
		dst[i] = 0;
}

typedef unsigned char v16qu_q __attribute__((vector_size(16)));
typedef unsigned char v16qu_qu __attribute__((vector_size(16), aligned(1), may_alias));
typedef unsigned short v8hu_q __attribute__((vector_size(16)));
typedef unsigned char v8qu_q __attribute__((vector_size(8)));
typedef __u32 u32_qu __attribute__((aligned(1), may_alias));

/*
 * 16 positions of four rows as 16 groups of their 4 bytes, at @d; each
 * byte xor @flip (0x80 turns i8 into u8 + 128).
 */
static void qconv_interleave(const __u8 *const *r, __u8 *d, __u8 flip)
{
	v16qu_q f = (v16qu_q){} + flip;
	v16qu_q a = *(const v16qu_qu *)r[0] ^ f, b = *(const v16qu_qu *)r[1] ^ f;
	v16qu_q c = *(const v16qu_qu *)r[2] ^ f, e = *(const v16qu_qu *)r[3] ^ f;
	v8hu_q ab0 = (v8hu_q)__builtin_shufflevector(a, b, 0, 16, 1, 17, 2, 18,
						     3, 19, 4, 20, 5, 21, 6, 22,
						     7, 23);
	v8hu_q ab1 = (v8hu_q)__builtin_shufflevector(a, b, 8, 24, 9, 25, 10, 26,
						     11, 27, 12, 28, 13, 29, 14,
						     30, 15, 31);
	v8hu_q cd0 = (v8hu_q)__builtin_shufflevector(c, e, 0, 16, 1, 17, 2, 18,
						     3, 19, 4, 20, 5, 21, 6, 22,
						     7, 23);
	v8hu_q cd1 = (v8hu_q)__builtin_shufflevector(c, e, 8, 24, 9, 25, 10, 26,
						     11, 27, 12, 28, 13, 29, 14,
						     30, 15, 31);

	*(v16qu_qu *)d = (v16qu_q)__builtin_shufflevector(ab0, cd0, 0, 8, 1, 9,
							  2, 10, 3, 11);
	*(v16qu_qu *)(d + 16) = (v16qu_q)__builtin_shufflevector(ab0, cd0, 4, 12,
								 5, 13, 6, 14,
								 7, 15);
	*(v16qu_qu *)(d + 32) = (v16qu_q)__builtin_shufflevector(ab1, cd1, 0, 8,
								 1, 9, 2, 10,
								 3, 11);
	*(v16qu_qu *)(d + 48) = (v16qu_q)__builtin_shufflevector(ab1, cd1, 4, 12,
								 5, 13, 6, 14,
								 7, 15);
}

/*
 * Whether row k of the im2col is channel k's plane as it is: a 1x1
 * convolution of stride 1, no padding, rows of X dense.
 */
static int qconv_direct(const struct eng_qconv *q)
{
	const struct vnpu_layer_conv *a = q->l->attrs;
	const struct vnpu_cmd_tensor *x = &q->l->t[0];

	return q->s.kh == 1 && q->s.kw == 1 && a->stride[0] == 1 &&
	       a->stride[1] == 1 && !a->pad_begin[0] && !a->pad_begin[1] &&
	       !a->pad_end[0] && !a->pad_end[1] &&
	       (x->rank == 3 || q->s.h == 1 || x->strides[2] == (__s64)q->s.w);
}

#ifdef ENG_FMA
static __attribute__((__noinline__))
void qconv_pack_direct(struct eng_qconv *q, __u64 img, __u64 g, __u64 nbi);
#endif

/*
 * The packed input of image @img, group @g, column block @nbi: per depth
 * step, its four rows (raw bytes; an i8 input is flipped to u8 while
 * interleaving), from X itself where the rows are planes of X, with
 * the block's last partial 16 positions copied.
 */
static void qconv_pack(struct eng_qconv *q, __u64 img, __u64 g, __u64 nbi)
{
	const struct eng_qplan *p = &q->p;
	const struct vnpu_cmd_tensor *x = &q->l->t[0];
	__u64 p0 = nbi * p->pos, steps = p->k4 / 4, j, n, r;
	__u64 oh0 = p0 / q->s.ow, o0 = p0 % q->s.ow;
	__u64 cnt = eng_qblock_cnt(p, nbi);
	__u64 full = q->direct ? cnt / 16 * 16 : 0;
	__u64 ncp = eng_div_up(cnt, ENG_QNR) * ENG_QNR;
	/* Depth k's channel, tap row and column, stepped with k. */
	__u64 c = 0, kh = 0, kw = 0, staged = ~0ull;
	const __u8 *plane[4], *at[4];

#ifdef ENG_FMA
	if (q->direct) {
		qconv_pack_direct(q, img, g, nbi);
		return;
	}
#endif
	for (n = 0; n < ncp; n++)
		q->xsum[n] = 0;
	for (j = 0; j < steps; j++) {
		for (r = 0; r < 4; r++) {
			__u8 *row = q->rows + r * p->rs;
			__u64 k = 4 * j + r;

			plane[r] = (const __u8 *)0;
			if (k >= p->k) {
				for (n = 0; n < ncp; n++)
					row[n] = 0;
				continue;
			}
			if (q->direct) {
				plane[r] = (const __u8 *)q->l->data[0] +
					   (__s64)img * x->strides[0] +
					   (__s64)(g * q->s.cg + k) * x->strides[1] +
					   (__s64)p0;
				for (n = full; n < cnt; n++)
					row[n] = plane[r][n];
				for (; n < ncp; n++)
					row[n] = 0;
			} else {
				if (c != staged) {
					qconv_stage(q, img, g * q->s.cg + c, oh0);
					staged = c;
				}
				qconv_tap(q, row, kh, kw, o0, cnt);
				if (++kw == q->s.kw) {
					kw = 0;
					if (++kh == q->s.kh) {
						kh = 0;
						c++;
					}
				}
			}
			if (q->need_xsum)
				for (n = 0; n < cnt; n++)
					q->xsum[n] += (plane[r] ? plane[r] : row)[n] ^ q->flip;
		}
		for (n = 0; n < ncp; n += 16) {
			for (r = 0; r < 4; r++)
				at[r] = plane[r] && n < full ? plane[r] + n :
					q->rows + r * p->rs + n;
			qconv_interleave(at, q->b + (n / ENG_QNR * steps + j) *
					 ENG_QNR * 4 + n % ENG_QNR * 4, q->flip);
		}
	}
}

#ifdef ENG_FMA
typedef unsigned short v16hu_s __attribute__((vector_size(32)));
typedef unsigned long long v4du_s __attribute__((vector_size(32)));
typedef unsigned char v32qu_sa __attribute__((vector_size(32), aligned(32), may_alias));

/*
 * 32 positions of four rows (@a, @b, @c, @e) as 32 groups of their 4
 * bytes, at @d (a tile's depth step: 128 bytes, aligned): bytes then
 * pairs interleaved within each 16-byte half, the halves put in order
 * last (vpunpck*bw, vpunpck*wd, vperm2i128 on AVX2).
 */
static __attribute__((__always_inline__)) inline
void qconv_interleave32(v32qu_s a, v32qu_s b, v32qu_s c, v32qu_s e, __u8 *d)
{
	v16hu_s ab0 = (v16hu_s)__builtin_shufflevector(a, b,
		0, 32, 1, 33, 2, 34, 3, 35, 4, 36, 5, 37, 6, 38, 7, 39,
		16, 48, 17, 49, 18, 50, 19, 51, 20, 52, 21, 53, 22, 54, 23, 55);
	v16hu_s ab1 = (v16hu_s)__builtin_shufflevector(a, b,
		8, 40, 9, 41, 10, 42, 11, 43, 12, 44, 13, 45, 14, 46, 15, 47,
		24, 56, 25, 57, 26, 58, 27, 59, 28, 60, 29, 61, 30, 62, 31, 63);
	v16hu_s ce0 = (v16hu_s)__builtin_shufflevector(c, e,
		0, 32, 1, 33, 2, 34, 3, 35, 4, 36, 5, 37, 6, 38, 7, 39,
		16, 48, 17, 49, 18, 50, 19, 51, 20, 52, 21, 53, 22, 54, 23, 55);
	v16hu_s ce1 = (v16hu_s)__builtin_shufflevector(c, e,
		8, 40, 9, 41, 10, 42, 11, 43, 12, 44, 13, 45, 14, 46, 15, 47,
		24, 56, 25, 57, 26, 58, 27, 59, 28, 60, 29, 61, 30, 62, 31, 63);
	/* Positions 0-3 and 16-19, 4-7 and 20-23, 8-11 and 24-27, 12-15 and 28-31. */
	v4du_s w0 = (v4du_s)__builtin_shufflevector(ab0, ce0, 0, 16, 1, 17, 2, 18,
						     3, 19, 8, 24, 9, 25, 10, 26,
						     11, 27);
	v4du_s w1 = (v4du_s)__builtin_shufflevector(ab0, ce0, 4, 20, 5, 21, 6, 22,
						     7, 23, 12, 28, 13, 29, 14,
						     30, 15, 31);
	v4du_s w2 = (v4du_s)__builtin_shufflevector(ab1, ce1, 0, 16, 1, 17, 2, 18,
						     3, 19, 8, 24, 9, 25, 10, 26,
						     11, 27);
	v4du_s w3 = (v4du_s)__builtin_shufflevector(ab1, ce1, 4, 20, 5, 21, 6, 22,
						     7, 23, 12, 28, 13, 29, 14,
						     30, 15, 31);

	*(v32qu_sa *)d = (v32qu_s)__builtin_shufflevector(w0, w1, 0, 1, 4, 5);
	*(v32qu_sa *)(d + 32) = (v32qu_s)__builtin_shufflevector(w2, w3, 0, 1, 4, 5);
	*(v32qu_sa *)(d + 64) = (v32qu_s)__builtin_shufflevector(w0, w1, 2, 3, 6, 7);
	*(v32qu_sa *)(d + 96) = (v32qu_s)__builtin_shufflevector(w2, w3, 2, 3, 6, 7);
}
#endif

/*
 * qconv_planes() of a stride of 1 straight from X, without staging the
 * channel: plane tw's row r is staged row r from column tw * dw on, so
 * the zero point where that is padding, X's row, then the zero point
 * again. Padding goes 16 bytes at a time before X's bytes are copied
 * (exactly, never reading past X's row) and after them, running on into
 * the next row (which overwrites it) or the plane's slack. Not inlined:
 * run_qconv_packed()'s frame would pass the kernel's limit.
 */
static __attribute__((__noinline__))
void qconv_planes1(struct eng_qconv *q, __u8 *pl, __u64 img, __u64 c, __u64 oh0)
{
	const struct vnpu_layer_conv *a = q->l->attrs;
	const struct vnpu_cmd_tensor *x = &q->l->t[0];
	__s64 xsh = x->rank == 4 ? x->strides[2] : 0;
	__u64 ow = q->s.ow, w = q->s.w, hp = q->p.hp, pb = q->p.pb;
	__u64 left = a->pad_begin[1], dw = a->dilation[1], kw = q->s.kw;
	__s64 h = (__s64)q->s.h, ih0 = (__s64)oh0 - a->pad_begin[0];
	v16qu_s pad = (v16qu_s){} + (__u8)(q->xz ^ q->flip);
	const __u8 *xc = (const __u8 *)q->l->data[0] +
			 (__s64)img * x->strides[0] + (__s64)c * x->strides[1];
	__u64 tw, r, i;

	for (tw = 0; tw < kw; tw++) {
		/* Staged column tw * dw on: @lp of padding, @n of X from @xs. */
		__u64 col = tw * dw;
		__u64 lp = col < left ? eng_min(left - col, ow) : 0;
		__u64 xs = col > left ? col - left : 0;
		__u64 n = xs < w ? eng_min(w - xs, ow - lp) : 0;
		__u8 *d = pl + tw * pb;

		for (r = 0; r < hp; r++, d += ow) {
			__s64 ih = ih0 + (__s64)r;

			if (ih < 0 || ih >= h || !n) {
				for (i = 0; i < ow; i += 16)
					*(v16qu_su *)(d + i) = pad;
				continue;
			}
			for (i = 0; i < lp; i += 16)
				*(v16qu_su *)(d + i) = pad;
			qconv_copy_row(d + lp, xc + ih * xsh + xs, n);
			for (i = lp + n; i < ow; i += 16)
				*(v16qu_su *)(d + i) = pad;
		}
	}
}

/*
 * The tap planes of input channel @c at @pl (p.np planes of p.pb bytes):
 * plane (tw, r0) holds, row by row, the taps of column tw of the staged
 * rows r0, r0 + sh, r0 + 2 sh, ...: one byte per output column, so that
 * a tap (th, tw) of every position of the block is one run of bytes,
 * from plane (tw, th * dh % sh), row th * dh / sh, column o0 on. Rows
 * are copied 16 positions at a time: what runs past a row the next one
 * overwrites, the last one the plane's slack takes.
 */
static void qconv_planes(struct eng_qconv *q, __u8 *pl, __u64 img, __u64 c,
			 __u64 oh0)
{
	const struct vnpu_layer_conv *a = q->l->attrs;
	const struct eng_qplan *p = &q->p;
	__u64 sh = a->stride[0], sw = a->stride[1], ow = q->s.ow;
	__u64 tw, r0, r, o;

	if (sh == 1 && sw == 1) {
		qconv_planes1(q, pl, img, c, oh0);
		return;
	}
	qconv_stage(q, img, c, oh0);
	for (tw = 0; tw < q->s.kw; tw++)
		for (r0 = 0; r0 < sh; r0++) {
			__u8 *d = pl + (tw * sh + r0) * p->pb;

			for (r = r0; r < p->hp; r += sh, d += ow) {
				const __u8 *src = q->stage + r * p->wp +
						  tw * a->dilation[1];

				if (sw == 1) {
					for (o = 0; o < ow; o += 16)
						*(v16qu_su *)(d + o) =
							*(const v16qu_su *)(src + o);
					continue;
				}
				for (o = 0; o < ow; o += 16) {
					v32qu_s v = *(const v32qu_su *)(src + 2 * o);

					*(v16qu_su *)(d + o) = __builtin_shufflevector(v, v,
						0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24,
						26, 28, 30);
				}
			}
		}
}

/*
 * A tile's depth step at @d from 32 positions of the four rows at @src
 * + @n (NULL: zeros), each byte xor @flip. The baseline build takes the
 * 32 positions as two runs of 16 (its 32-byte shuffles would be
 * scalar).
 */
static __attribute__((__always_inline__)) inline
void qplane_tile(const __u8 *const *src, __u64 n, __u8 *d, __u8 flip)
{
#ifdef ENG_FMA
	v32qu_s f = (v32qu_s){} + flip;

	qconv_interleave32(src[0] ? (v32qu_s)*(const v32qu_su *)(src[0] + n) ^ f : f,
			   src[1] ? (v32qu_s)*(const v32qu_su *)(src[1] + n) ^ f : f,
			   src[2] ? (v32qu_s)*(const v32qu_su *)(src[2] + n) ^ f : f,
			   src[3] ? (v32qu_s)*(const v32qu_su *)(src[3] + n) ^ f : f, d);
#else
	static const __u8 zero[16];
	const __u8 *at[4];
	__u64 h, r;

	for (h = 0; h < 2; h++) {
		for (r = 0; r < 4; r++)
			at[r] = src[r] ? src[r] + n + 16 * h : zero;
		qconv_interleave(at, d + 64 * h, flip);
	}
#endif
}

/* Sum x of each position of the packed block, from its bytes. */
static void qconv_xsum(struct eng_qconv *q)
{
	const struct eng_qplan *p = &q->p;
	__u64 steps = p->k4 / 4, n, j;

	for (n = 0; n < p->ncp; n++) {
		const __u8 *b = q->b + (n / ENG_QNR * steps * ENG_QNR + n % ENG_QNR) * 4;
		__u32 sum = 0;

		for (j = 0; j < steps; j++, b += ENG_QNR * 4)
			sum += (__u32)b[0] + b[1] + b[2] + b[3];
		/* Rows past the depth hold 0 ^ flip. */
		q->xsum[n] = (__s32)(sum - (__u32)(p->k4 - p->k) * q->flip);
	}
}

/*
 * The packed input of image @img, group @g, column block @nbi from tap
 * planes: per depth step, its four rows are runs of bytes in the
 * planes (a row past the depth: zeros), read 32 positions at a time
 * and interleaved into a tile's step; sum x from the packed bytes.
 * Positions past the block's last read what the planes hold there:
 * their outputs are not stored.
 */
static void qconv_pack_planes(struct eng_qconv *q, __u64 img, __u64 g,
			      __u64 nbi)
{
	const struct vnpu_layer_conv *a = q->l->attrs;
	const struct eng_qplan *p = &q->p;
	__u64 p0 = nbi * p->pos, steps = p->k4 / 4;
	__u64 oh0 = p0 / q->s.ow, o0 = p0 % q->s.ow, sh = a->stride[0];
	__u64 staged[ENG_QPLANES] = { ~0ull, ~0ull, ~0ull, ~0ull };
	/*
	 * Depth k's channel and tap, stepped with k (no divisions per
	 * depth); @at: tap row th's offset in the channel's planes.
	 */
	__u64 c = 0, th = 0, tw = 0, k = 0, at = o0;
	const __u8 *src[4];
	__u8 *pl = q->planes;
	__u64 j, r, n;

	for (j = 0; j < steps; j++) {
		__u8 *d = q->b + j * ENG_QNR * 4;

		for (r = 0; r < 4; r++, k++) {
			src[r] = (const __u8 *)0;
			if (k >= p->k)
				continue;
			if (!th && !tw) {
				pl = q->planes + c % ENG_QPLANES * p->np * p->pb;
				if (staged[c % ENG_QPLANES] != c) {
					qconv_planes(q, pl, img, g * q->s.cg + c, oh0);
					staged[c % ENG_QPLANES] = c;
				}
			}
			src[r] = pl + tw * sh * p->pb + at;
			if (++tw < q->s.kw)
				continue;
			tw = 0;
			if (++th == q->s.kh) {
				th = 0;
				c++;
			}
			at = th * a->dilation[0] % sh * p->pb +
			     th * a->dilation[0] / sh * q->s.ow + o0;
		}
		for (n = 0; n < p->ncp; n += ENG_QNR, d += steps * ENG_QNR * 4)
			qplane_tile(src, n, d, q->flip);
	}
	if (q->need_xsum)
		qconv_xsum(q);
}

#ifdef ENG_FMA
/*
 * qconv_pack() of a layer whose im2col rows are planes of X
 * (qconv_direct()) on AVX2: per depth step, 32 positions of its four
 * planes at a time into a tile's step (qplane_tile()), the block's last
 * partial 32 from copies of them in q->rows, zeros after. Not inlined:
 * run_qconv_packed()'s frame would pass the kernel's limit.
 */
static __attribute__((__noinline__))
void qconv_pack_direct(struct eng_qconv *q, __u64 img, __u64 g, __u64 nbi)
{
	const struct eng_qplan *p = &q->p;
	const struct vnpu_cmd_tensor *x = &q->l->t[0];
	__u64 p0 = nbi * p->pos, steps = p->k4 / 4, j, n, r;
	__u64 cnt = eng_qblock_cnt(p, nbi), full = cnt / ENG_QNR * ENG_QNR;
	__s64 xc = x->strides[1];
	const __u8 *xg = (const __u8 *)q->l->data[0] + (__s64)img * x->strides[0] +
			 (__s64)(g * q->s.cg) * xc + (__s64)p0;
	const __u8 *src[4], *tail[4];

	for (n = 0; n < p->ncp; n++)
		q->xsum[n] = 0;
	for (j = 0; j < steps; j++) {
		__u8 *d = q->b + j * ENG_QNR * 4;

		for (r = 0; r < 4; r++) {
			__u64 k = 4 * j + r;
			__u8 *row = q->rows + r * p->rs;

			src[r] = (const __u8 *)0;
			tail[r] = (const __u8 *)0;
			if (k >= p->k)
				continue;
			src[r] = xg + (__s64)k * xc;
			if (full < cnt) {
				*(v32qu_su *)row = (v32qu_s){};
				qconv_copy_row(row, src[r] + full, cnt - full);
				tail[r] = row;
			}
			if (q->need_xsum)
				for (n = 0; n < cnt; n++)
					q->xsum[n] += src[r][n] ^ q->flip;
		}
		for (n = 0; n < full; n += ENG_QNR, d += steps * ENG_QNR * 4)
			qplane_tile(src, n, d, q->flip);
		if (full < cnt)
			qplane_tile(tail, 0, d, q->flip);
	}
}
#endif

#ifdef ENG_FMA
/*
 * Whether vnpu_eng_qpack_vnni() packs the layer's blocks from X itself:
 * stride 1, output rows as wide as the input's (position p of a map and
 * its tap's input are a constant apart where the tap is inside), X's
 * rows dense, taps of at most 7 x 7 (the masks fit in q->rows).
 */
static int qconv_flat(const struct eng_qconv *q)
{
	const struct vnpu_layer_conv *a = q->l->attrs;
	const struct vnpu_cmd_tensor *x = &q->l->t[0];

	return (q->ctx->features & VNPU_ENG_F_VNNI) && x->rank == 4 &&
	       a->stride[0] == 1 && a->stride[1] == 1 && q->s.ow == q->s.w &&
	       (q->s.h == 1 || x->strides[2] == (__s64)q->s.w) &&
	       q->s.kh <= 7 && q->s.kw <= 7 && !eng_conv_depthwise(&q->s);
}

/* Bits [@b, @e) of a 64-bit mask (none where @e <= @b). */
static __u64 qbits(__s64 b, __s64 e)
{
	if (e <= b)
		return 0;
	return (e - b == 64 ? ~0ull : ((1ull << (e - b)) - 1)) << b;
}

/*
 * Where the taps of a block packed by vnpu_eng_qpack_vnni() read inside
 * its input: tap row t of output row r reads the input's row r +
 * @roff[t], inside for rows in [0, @rlim[t]); tap column t of output
 * column c reads column c + @coff[t], inside for columns in
 * [0, @clim[t]).
 */
struct qmask {
	__s64 roff[7], rlim[7], coff[7], clim[7];
};

/*
 * The masks (@rowm and @colm of struct eng_qpack) of @q's column block
 * from position @p0, from @m: per group of 64 positions, which of them
 * each tap row and tap column finds inside the input, from the output
 * rows the block runs over.
 */
static void qconv_masks(const struct eng_qconv *q, const struct qmask *m, __u64 p0,
			__u64 *rowm, __u64 *colm)
{
	const struct eng_qplan *p = &q->p;
	__u64 ow = q->s.ow, kh = q->s.kh, kw = q->s.kw;
	__u64 cnt = eng_qblock_cnt(p, p0 / p->pos), ng = eng_div_up(p->ncp, 64);
	__u64 oh = p0 / ow, oc = p0 % ow, i, n, t;

	for (i = 0; i < (kh + kw) * ng; i++)
		rowm[i] = 0;
	/* Runs of positions within one output row and one group. */
	for (i = 0; i < cnt; i += n) {
		__u64 gi = i / 64, b = i % 64;

		n = eng_min(eng_min(ow - oc, cnt - i), 64 - b);
		for (t = 0; t < kh; t++) {
			__s64 r = (__s64)oh + m->roff[t];

			if (r >= 0 && r < m->rlim[t])
				rowm[t * ng + gi] |= qbits((__s64)b, (__s64)(b + n));
		}
		/* Column c of the run reads c + coff: inside for c in [lo, hi). */
		for (t = 0; t < kw; t++) {
			__s64 tc = m->coff[t];
			__s64 lo = -tc > (__s64)oc ? -tc : (__s64)oc;
			__s64 hi = m->clim[t] - tc < (__s64)(oc + n) ? m->clim[t] - tc :
				   (__s64)(oc + n);

			colm[t * ng + gi] |= qbits((__s64)b + lo - (__s64)oc,
						   (__s64)b + hi - (__s64)oc);
		}
		oc += n;
		if (oc == ow) {
			oc = 0;
			oh++;
		}
	}
}

/*
 * The packed input of image @img, group @g, column block @nbi straight
 * from X (qconv_flat()): the masks of its taps (qconv_masks()), then
 * vnpu_eng_qpack_vnni().
 */
static void qconv_pack_flat(struct eng_qconv *q, __u64 img, __u64 g, __u64 nbi)
{
	const struct vnpu_layer_conv *a = q->l->attrs;
	const struct vnpu_cmd_tensor *x = &q->l->t[0];
	const struct eng_qplan *p = &q->p;
	__u64 p0 = nbi * p->pos, kh = q->s.kh, kw = q->s.kw;
	__u64 ng = eng_div_up(p->ncp, 64), t;
	__s64 top = a->pad_begin[0], left = a->pad_begin[1];
	__s64 h = (__s64)q->s.h, w = (__s64)q->s.w;
	__u64 *rowm = (__u64 *)q->rows, *colm = rowm + kh * ng;
	struct qmask m;
	struct eng_qpack k = {
		.x = (const __u8 *)q->l->data[0] + (__s64)img * x->strides[0] +
		     (__s64)(g * q->s.cg) * x->strides[1] + (__s64)p0,
		.cs = x->strides[1], .rowm = rowm, .colm = colm, .b = q->b,
		.k = p->k, .k4 = p->k4, .ncp = p->ncp, .kh = (__u32)kh,
		.kw = (__u32)kw, .pad = (__u8)(q->xz ^ q->flip), .flip = q->flip,
	};

	for (t = 0; t < kh * kw; t++)
		k.toff[t] = ((__s64)(t / kw * a->dilation[0]) - top) * w +
			    (__s64)(t % kw * a->dilation[1]) - left;
	for (t = 0; t < kh; t++) {
		m.roff[t] = (__s64)(t * a->dilation[0]) - top;
		m.rlim[t] = h;
	}
	for (t = 0; t < kw; t++) {
		m.coff[t] = (__s64)(t * a->dilation[1]) - left;
		m.clim[t] = w;
	}
	qconv_masks(q, &m, p0, rowm, colm);
	vnpu_eng_qpack_vnni(&k);
	if (q->need_xsum)
		qconv_xsum(q);
}

/* @v / 2 rounded down. */
static __s64 q_half(__s64 v)
{
	return v >= 0 ? v / 2 : -((1 - v) / 2);
}

/*
 * Whether qconv_pack_phase() packs the layer's blocks: stride 2 on the
 * VNNI path (p.ph), X's rows dense, and every column phase a tap reads
 * no wider than OW (a phase's row is OW bytes).
 */
static int qconv_phase(const struct eng_qconv *q)
{
	const struct vnpu_layer_conv *a = q->l->attrs;
	const struct vnpu_cmd_tensor *x = &q->l->t[0];
	__u64 t;

	if (!(q->ctx->features & VNPU_ENG_F_VNNI) || !q->p.ph || x->rank != 4 ||
	    x->strides[3] != 1)
		return 0;
	for (t = 0; t < q->s.kw; t++) {
		__s64 c = (__s64)t - a->pad_begin[1], pc = c - 2 * q_half(c);

		if ((q->s.w - (__u64)pc + 1) / 2 > q->s.ow)
			return 0;
	}
	return 1;
}

/*
 * A row of stride phase column @pc at @d: the bytes @pc, @pc + 2, ...
 * of the input row @src, @n of them (those inside the row), 16 at a
 * time: the last store runs up to 15 bytes on (the next row's, or the
 * phases' slack), the loads up to 31 past the row while they end
 * before @end (X's end), byte by byte after.
 */
static void qphase_row(__u8 *d, const __u8 *src, const __u8 *end, __u64 pc, __u64 n)
{
	__u64 j;

	for (j = 0; j < n && src + pc + 2 * j + 32 <= end; j += 16) {
		v32qu_s v = *(const v32qu_su *)(src + pc + 2 * j);

		*(v16qu_su *)(d + j) = __builtin_shufflevector(v, v,
			0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
	}
	for (; j < n; j++)
		d[j] = src[pc + 2 * j];
}

/*
 * The packed input of image @img, group @g, column block @nbi of a
 * stride-2 convolution (qconv_phase()): X split by row and column
 * parity into phases whose rows are OW bytes, the block's rows of them
 * (per input channel, the phases its taps read), so that each tap reads
 * a phase at a constant offset from its output position, as a stride-1
 * convolution reads X; then vnpu_eng_qpack_vnni() with the masks of the
 * taps inside the input, as qconv_pack_flat().
 */
static __attribute__((__noinline__))
void qconv_pack_phase(struct eng_qconv *q, __u64 img, __u64 g, __u64 nbi)
{
	const struct vnpu_layer_conv *a = q->l->attrs;
	const struct vnpu_cmd_tensor *x = &q->l->t[0];
	const struct eng_qplan *p = &q->p;
	__u64 p0 = nbi * p->pos, ow = q->s.ow, kh = q->s.kh, kw = q->s.kw;
	__u64 cnt = eng_qblock_cnt(p, nbi), ng = eng_div_up(p->ncp, 64);
	__u64 oh = p0 / ow, last = (p0 + cnt - 1) / ow, nph = 0, plane, t, c, r, ph;
	__s64 h = (__s64)q->s.h, w = (__s64)q->s.w, r0, r1, dmin = 0, dmax = 0;
	__u64 *rowm = (__u64 *)q->rows, *colm = rowm + kh * ng;
	int slot[4] = { -1, -1, -1, -1 }, used[4] = { 0, 0, 0, 0 };
	__u64 pr[7], pc[7];
	struct qmask m;
	const __u8 *xg = (const __u8 *)q->l->data[0] + (__s64)img * x->strides[0] +
			 (__s64)(g * q->s.cg) * x->strides[1];
	/* One past X's last byte (its strides are not negative). */
	const __u8 *xend = (const __u8 *)q->l->data[0] + (__s64)(q->s.n - 1) * x->strides[0] +
			   (__s64)(q->s.c - 1) * x->strides[1] + (h - 1) * x->strides[2] + w;
	struct eng_qpack k = {
		.rowm = rowm, .colm = colm, .b = q->b,
		.k = p->k, .k4 = p->k4, .ncp = p->ncp, .kh = (__u32)kh,
		.kw = (__u32)kw, .pad = (__u8)(q->xz ^ q->flip), .flip = q->flip,
	};

	/*
	 * Tap row t reads phase row r + roff[t] of row parity pr[t] (rows
	 * inside below rlim[t]); tap column t, phase column c + coff[t] of
	 * column parity pc[t].
	 */
	for (t = 0; t < kh; t++) {
		m.roff[t] = q_half((__s64)t - a->pad_begin[0]);
		pr[t] = (__u64)((__s64)t - a->pad_begin[0] - 2 * m.roff[t]);
		m.rlim[t] = (h - (__s64)pr[t] + 1) / 2;
		if (!t || m.roff[t] < dmin)
			dmin = m.roff[t];
		if (!t || m.roff[t] > dmax)
			dmax = m.roff[t];
	}
	for (t = 0; t < kw; t++) {
		m.coff[t] = q_half((__s64)t - a->pad_begin[1]);
		pc[t] = (__u64)((__s64)t - a->pad_begin[1] - 2 * m.coff[t]);
		m.clim[t] = (w - (__s64)pc[t] + 1) / 2;
	}
	for (t = 0; t < kh * kw; t++)
		used[pr[t / kw] * 2 + pc[t % kw]] = 1;
	for (ph = 0; ph < 4; ph++)
		if (used[ph])
			slot[ph] = (int)nph++;
	/* The phase rows the block reads, inside the input's. */
	r0 = (__s64)oh + dmin > 0 ? (__s64)oh + dmin : 0;
	r1 = (__s64)last + dmax + 1 < (h + 1) / 2 ? (__s64)last + dmax + 1 : (h + 1) / 2;
	plane = r1 > r0 ? (__u64)(r1 - r0) * ow : 0;
	for (c = 0; c < q->s.cg && plane; c++)
		for (ph = 0; ph < 4; ph++) {
			const __u8 *xc = xg + (__s64)c * x->strides[1];
			__u8 *d;

			if (slot[ph] < 0)
				continue;
			d = q->ph + (c * nph + (__u64)slot[ph]) * plane;
			for (r = (__u64)r0; r < (__u64)r1; r++, d += ow) {
				__s64 ih = 2 * (__s64)r + (__s64)(ph / 2);

				if (ih < h)
					qphase_row(d, xc + ih * x->strides[2], xend, ph % 2,
						   eng_min(ow, ((__u64)w - ph % 2 + 1) / 2));
			}
		}
	k.x = q->ph + (__s64)p0 - r0 * (__s64)ow;
	k.cs = (__s64)(nph * plane);
	for (t = 0; t < kh * kw; t++)
		k.toff[t] = (__s64)((__u64)slot[pr[t / kw] * 2 + pc[t % kw]] * plane) +
			    m.roff[t / kw] * (__s64)ow + m.coff[t % kw];
	/* Rows outside [r0, r1) are outside the input: their masks are 0. */
	qconv_masks(q, &m, p0, rowm, colm);
	vnpu_eng_qpack_vnni(&k);
	if (q->need_xsum)
		qconv_xsum(q);
}
#endif

#ifndef ENG_FMA
/*
 * The plain tile: the reference of the vector ones; then the @nx pairs
 * at @x left out of its rows, in runs ending at @end (the rules of
 * qx8_add_avx2()).
 */
static void qtile_c(const struct eng_qtile *t, const struct qx8 *x, const __u8 *end,
		    __u64 nx)
{
	__u64 r, i, j, e;

	for (r = 0; r < ENG_QMR; r++)
		for (i = 0; i < ENG_QNR; i++) {
			__u32 acc = 0;

			for (j = 0; j < t->k4 / 4; j++)
				for (e = 0; e < 4; e++)
					acc += (__u32)((__s32)t->w[r * t->k4 + 4 * j + e] *
						       t->b[(j * ENG_QNR + i) * 4 + e]);
			t->acc[r * ENG_QNR + i] = (__s32)acc;
		}
	for (r = 0, j = 0; r < ENG_QMR && nx; r++)
		for (; j < eng_min(*(const u32_qu *)(end + 4 * r), nx); j++) {
			__u32 o = x[j].off & ENG_QPAIR_STEP, w2 = (__u32)x[j].w2;
			const __u8 *b = t->b + o + (x[j].off & 1) * 2;

			if (o >= t->k4 * ENG_QNR)
				continue;
			for (i = 0; i < ENG_QNR; i++)
				t->acc[r * ENG_QNR + i] = (__s32)((__u32)t->acc[r * ENG_QNR + i] +
					(__u32)((__s32)(__s16)w2 * b[4 * i] +
						(__s32)(__s16)(w2 >> 16) * b[4 * i + 1]));
		}
}
#else
typedef short v16hi_q __attribute__((vector_size(32)));
typedef short v16hi_qa __attribute__((vector_size(32), aligned(32), may_alias));
typedef short v16hi_qu __attribute__((vector_size(32), aligned(2), may_alias));
typedef signed char v16qi_qu __attribute__((vector_size(16), aligned(1), may_alias));
typedef int v8si_qa __attribute__((vector_size(32), aligned(32), may_alias));

/*
 * ---- The AVX2 tile: exact sums with vpmaddwd --------------------------
 *
 * AVX2 has no vpdpbusd, and vpmaddubsw's 16-bit pair sums saturate on
 * full-range i8 weights (255 * 127 * 2 > 32767), so inputs and weights
 * are 16-bit and vpmaddwd sums each pair into 32 bits (at most
 * 2 * 255 * 128: exact). Widening them in the tile's inner loop cost more
 * than the products; instead the packed block is widened once
 * (qb16_block(): per depth pair, ENG_QNR positions of two s16, so that a
 * vector is 8 positions) and a tile's ENG_QMR weight rows once
 * (qw16_rows()), and the inner loop is a 32-bit broadcast of a row's
 * weight pair and vpmaddwd and vpaddd into 8 positions' sums.
 */

/* Pairs of depth the tile sums between visits of its sums in memory. */
#define QK2_CHUNK	128

/*
 * The packed block at @b (ENG_QNR positions x 4 depths per step, a tile
 * of positions in @steps of them, @tiles tiles) as 16-bit pairs at @d: step
 * j's depths 4j, 4j + 1 become pair 2j, its 4j + 2, 4j + 3 pair 2j + 1,
 * each ENG_QNR positions of two s16 (zero-extended).
 */
static void qb16_block(const __u8 *b, __s16 *d, __u64 tiles, __u64 steps)
{
	__u64 n = tiles * steps, i, v;

	for (i = 0; i < n; i++, b += ENG_QNR * 4, d += ENG_QNR * 4) {
		for (v = 0; v < ENG_QNR / 8; v++) {
			v32qu_s q = *(const v32qu_sa *)(b + 32 * v);
			v16qu_s lo = __builtin_shufflevector(q, q, 0, 1, 4, 5, 8, 9, 12, 13,
							     16, 17, 20, 21, 24, 25, 28, 29);
			v16qu_s hi = __builtin_shufflevector(q, q, 2, 3, 6, 7, 10, 11, 14, 15,
							     18, 19, 22, 23, 26, 27, 30, 31);

			*(v16hi_qa *)(d + 16 * v) = __builtin_convertvector(lo, v16hi_q);
			*(v16hi_qa *)(d + ENG_QNR * 2 + 16 * v) =
				__builtin_convertvector(hi, v16hi_q);
		}
	}
}

/* ENG_QMR rows of @k4 i8 weights at @w as s16 at @d, row-major. */
static void qw16_rows(const __s8 *w, __s16 *d, __u64 k4)
{
	__u64 n = ENG_QMR * k4, i;

	for (i = 0; i + 16 <= n; i += 16)
		*(v16hi_qu *)(d + i) = __builtin_convertvector(*(const v16qi_qu *)(w + i),
							       v16hi_q);
	for (; i < n; i++)
		d[i] = w[i];
}

/*
 * @nr (1 to 6) rows of weights (@w, rows @k4 apart) by @nv (1 or 2)
 * vectors of 8 positions of the widened block (@b, ENG_QNR * 2 apart per
 * pair), pairs [0, @pairs), added to the sums at @acc (row r at
 * r * ENG_QNR; zeroed first when @init): up to twelve sums in registers,
 * the inputs' vectors and one broadcast weight pair. @nr and @nv are
 * constants where inlined (qmadd_tile()).
 */
static __attribute__((__always_inline__)) inline
void qmadd_rxn(const __s16 *w, __u64 k4, const __s16 *b, __u64 pairs,
	       __s32 *acc, int init, __u64 nr, __u64 nv)
{
	v8si_qq a[6][2];
	__u64 p, r, v;

#pragma GCC unroll 6
	for (r = 0; r < nr; r++)
		for (v = 0; v < nv; v++)
			a[r][v] = init ? (v8si_qq){} :
				  (v8si_qq)*(const v8si_qa *)(acc + r * ENG_QNR + 8 * v);
	for (p = 0; p < pairs; p++, b += ENG_QNR * 2, w += 2) {
		v16hi_q bv[2];

		for (v = 0; v < nv; v++)
			bv[v] = *(const v16hi_qa *)(b + 16 * v);
#pragma GCC unroll 6
		for (r = 0; r < nr; r++) {
			v16hi_q wv = (v16hi_q)((v8si_qq){} + *(const __s32 *)(w + r * k4));

			for (v = 0; v < nv; v++)
				a[r][v] += (v8si_qq)__builtin_ia32_pmaddwd256(bv[v], wv);
		}
	}
#pragma GCC unroll 6
	for (r = 0; r < nr; r++)
		for (v = 0; v < nv; v++)
			*(v8si_qa *)(acc + r * ENG_QNR + 8 * v) = a[r][v];
}

#define QMADD_ROWS(n)							\
	case n:								\
		if (nv == 2)						\
			qmadd_rxn(w, k4, b, pairs, acc, init, n, 2);	\
		else							\
			qmadd_rxn(w, k4, b, pairs, acc, init, n, 1);	\
		break

/*
 * qmadd_rxn() of the @nr rows a tile has left (no products of rows past
 * M: 13 output channels are 6 + 6 + 1 rows, not 18), by 16 positions or
 * by 8 (a tile's last, on small maps).
 */
static void qmadd_tile(const __s16 *w, __u64 k4, const __s16 *b, __u64 pairs,
		       __s32 *acc, int init, __u64 nr, __u64 nv)
{
	switch (nr) {
	QMADD_ROWS(1);
	QMADD_ROWS(2);
	QMADD_ROWS(3);
	QMADD_ROWS(4);
	QMADD_ROWS(5);
	default:
	QMADD_ROWS(6);
	}
}

/*
 * The AVX2 tile: ENG_QMR rows of widened weights @w16 by ENG_QNR
 * positions of the widened block @b16, into t->acc (the quarters of
 * t->out's rows and positions); by chunks of depth whose weights and
 * inputs stay in L1 while its four 6x16 quarters run.
 */
static void qtile_avx2(const struct eng_qtile *t, const __s16 *w16,
		       const __s16 *b16)
{
	__u64 pairs = t->k4 / 2, p0, n, r, h;
	/*
	 * The rows and positions that hold outputs to store, the last
	 * vector of 8 positions where that is all it has (the sums of
	 * others: unused).
	 */
	__u64 rows = t->out->rows, cols = t->out->n;

	for (p0 = 0; p0 < pairs; p0 += QK2_CHUNK) {
		n = eng_min(QK2_CHUNK, pairs - p0);
		for (r = 0; r < rows; r += 6)
			for (h = 0; h < cols; h += 16)
				qmadd_tile(w16 + r * t->k4 + 2 * p0, t->k4,
					   b16 + (p0 * ENG_QNR + h) * 2, n,
					   t->acc + r * ENG_QNR + h, !p0,
					   eng_min(6, rows - r), cols - h > 8 ? 2 : 1);
	}
}

/*
 * ---- The AVX2 tile of u8 x i8 pairs: vpmaddubsw, exactly -----------------
 *
 * vpmaddubsw sums the products of two u8 inputs by two i8 weights into
 * 16 bits, saturating: exact unless the pair's positive weights add up
 * to more than 128 or its negative ones to less than -128 (255 * 129 >
 * 32767). A tile's rows of weights come with each such pair set to 0
 * and listed apart: packed so (VNPU_LAYER_F_SPLIT8), or copied so at
 * run time (qw8_split()); the pairs left out are summed after the rows, one
 * vpmaddwd of the inputs' two bytes (vpshufb to 16 bits) by the pair
 * each. The rows need no widened block: per depth step, a 32-bit
 * broadcast of a row's four weights, vpmaddubsw by 8 positions' four
 * inputs, vpmaddwd by ones (pairs into 32 bits) and vpaddd: three
 * operations a 32 products, where the 16-bit tile takes four a 16.
 * Rows with more than one pair in 16 left out take the 16-bit tile.
 * The sums are the same integers: the bits do not depend on the tile.
 */

#define QK4_CHUNK	ENG_QK4_CHUNK

typedef char v32qi_q __attribute__((vector_size(32)));
typedef __s32 s32_qu __attribute__((aligned(1), may_alias));
typedef long long v4di_q __attribute__((vector_size(32)));

/*
 * Pair @k (its first byte's index) of the rows at @w, of @k4 a row, as
 * qw8_split() leaves it out: into @x[@nx], 0 at @d; the runs of the rows
 * before its own, from row *@r, end at @end.
 */
static void qx8_put(const __s8 *w, __s8 *d, __u64 k, __u64 k4, struct qx8 *x,
		    __u64 nx, __u32 *end, __u64 *r)
{
	for (; *r < k / k4; ++*r)
		end[*r] = (__u32)nx;
	x[nx].off = ENG_QPAIR_OFF(k % k4);
	x[nx].w2 = (__s32)((__u32)(__u16)w[k] | (__u32)(__u16)w[k + 1] << 16);
	d[k] = 0;
	d[k + 1] = 0;
}

/*
 * @rows rows of @k4 i8 weights at @w to @d, each pair of them that
 * vpmaddubsw could saturate on as 0 and at @x, in runs of a row each
 * ending at @end; the number of those, or
 * ~0 past @cap of them (the rows then take the 16-bit tile). A pair's
 * sum of positive weights is above 128 or its sum of negative ones
 * below -128 only when its two weights have one sign (else the sum is
 * no larger than either): the pairs of |w0 + w1| > 128. Few are: the
 * masks of 32 bytes with one go to @x without a branch on it (which
 * mispredicted a fifth of the time), and the pairs from them after.
 */
static __u64 qw8_split(const __s8 *w, __s8 *d, __u64 rows, __u64 k4,
		       struct qx8 *x, __u32 *end, __u64 cap)
{
	const v16hi_q top = (v16hi_q){} + 128;
	__u64 n = rows * k4, nx = 0, nm = 0, r = 0, i, k;
	/* Past the pairs' room: as many masks as there are runs of 32. */
	__u32 *mask = (__u32 *)(x + cap), *at;

	for (i = 0; i + 32 <= n; i += 32) {
		v16hi_q v = *(const v16hi_qu *)(w + i);
		v16hi_q s = ((v << 8) >> 8) + (v >> 8);
		v16hi_q bad = (s > top) | (s < -top);
		/* Two bits a pair: its first's. */
		__u32 m = (__u32)__builtin_ia32_pmovmskb256((v32qi_q)bad) & 0x55555555u;

		*(v16hi_qu *)(d + i) = v & ~bad;
		mask[2 * nm] = m;
		mask[2 * nm + 1] = (__u32)(i / 32);
		nm += !!m;
	}
	for (at = mask; at < mask + 2 * nm; at += 2) {
		for (k = at[0]; k; k &= k - 1) {
			if (nx == cap)
				return ~0ull;
			qx8_put(w, d, 32 * (__u64)at[1] + (__u64)__builtin_ctzll(k), k4,
				x, nx++, end, &r);
		}
	}
	for (k = i; k < n; k += 2) {
		__s32 sum = w[k] + w[k + 1];

		d[k] = w[k];
		d[k + 1] = w[k + 1];
		if (sum <= 128 && sum >= -128)
			continue;
		if (nx == cap)
			return ~0ull;
		qx8_put(w, d, k, k4, x, nx++, end, &r);
	}
	for (; r < ENG_QMR; r++)
		end[r] = (__u32)nx;
	return nx;
}

/*
 * vpmaddwd of @v by ones taken from memory: the 8-bit tiles' sums,
 * inputs and weights then leave registers for their products (with
 * ones in a register, qmaddubs_rxn()'s 12 sums and qmaddubs2_rxn()'s 8
 * each sent one to the stack and back every step or pair of steps).
 */
static __attribute__((__always_inline__)) inline
v8si_qq qmadd_ones(v16hi_q v)
{
	static const v16hi_qa ones = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 };
	v8si_qq r;

	__asm__("vpmaddwd %2, %1, %0" : "=x"(r) : "x"(v), "m"(ones));
	return r;
}

/*
 * qmadd_rxn() for the 8-bit tile: @nr rows of split weights (@w, rows
 * @k4 apart) by @nv vectors of 8 positions of the packed block (@b),
 * depth steps [0, @steps).
 */
static __attribute__((__always_inline__)) inline
void qmaddubs_rxn(const __s8 *w, __u64 k4, const __u8 *b, __u64 steps,
		  __s32 *acc, int init, __u64 nr, __u64 nv)
{
	v8si_qq a[6][2];
	__u64 j, r, v;

#pragma GCC unroll 6
	for (r = 0; r < nr; r++)
		for (v = 0; v < nv; v++)
			a[r][v] = init ? (v8si_qq){} :
				  (v8si_qq)*(const v8si_qa *)(acc + r * ENG_QNR + 8 * v);
	for (j = 0; j < steps; j++, b += ENG_QNR * 4, w += 4) {
		v32qi_q bv[2];

		for (v = 0; v < nv; v++)
			bv[v] = (v32qi_q)*(const v32qu_sa *)(b + 32 * v);
#pragma GCC unroll 6
		for (r = 0; r < nr; r++) {
			v32qi_q wv = (v32qi_q)((v8si_qq){} + *(const s32_qu *)(w + r * k4));

			for (v = 0; v < nv; v++) {
				v16hi_q p = __builtin_ia32_pmaddubsw256(bv[v], wv);

				a[r][v] += qmadd_ones(p);
			}
		}
	}
#pragma GCC unroll 6
	for (r = 0; r < nr; r++)
		for (v = 0; v < nv; v++)
			*(v8si_qa *)(acc + r * ENG_QNR + 8 * v) = a[r][v];
}

#define QMADDUBS_ROWS(n)						\
	case n:								\
		if (nv == 2)						\
			qmaddubs_rxn(w, k4, b, steps, acc, init, n, 2);	\
		else							\
			qmaddubs_rxn(w, k4, b, steps, acc, init, n, 1);	\
		break

/* qmadd_tile() for the 8-bit tile. */
static void qmaddubs_tile(const __s8 *w, __u64 k4, const __u8 *b, __u64 steps,
			  __s32 *acc, int init, __u64 nr, __u64 nv)
{
	switch (nr) {
	QMADDUBS_ROWS(1);
	QMADDUBS_ROWS(2);
	QMADDUBS_ROWS(3);
	QMADDUBS_ROWS(4);
	QMADDUBS_ROWS(5);
	default:
	QMADDUBS_ROWS(6);
	}
}

/*
 * qmaddubs_rxn() over a chunk's step schedule @o (%VNPU_QSPLIT_F_PAIRS)
 * of its @n steps: per pair of steps, the two vpmaddubsw's 16-bit sums
 * added (vpaddw: the schedule keeps them within 16 bits) before one
 * vpmaddwd by ones, three multiplies a 64 products where single steps
 * take four; then the steps left alone as qmaddubs_rxn() sums them.
 * Steps by the schedule's order: the same integers in another order.
 */
static __attribute__((__always_inline__)) inline
void qmaddubs2_rxn(const __s8 *w, __u64 k4, const __u8 *b, const __u8 *o, __u64 n,
		   __s32 *acc, int init, __u64 nr, __u64 nv)
{
	const __u8 *ord = o + 1;
	v8si_qq a[ENG_QS_ROWS][2];
	__u64 np = o[0], p, r, v;

#pragma GCC unroll 4
	for (r = 0; r < nr; r++)
		for (v = 0; v < nv; v++)
			a[r][v] = init ? (v8si_qq){} :
				  (v8si_qq)*(const v8si_qa *)(acc + r * ENG_QNR + 8 * v);
	for (p = 0; p < np; p++) {
		__u64 j = ord[2 * p], j2 = ord[2 * p + 1];
		const __u8 *b0 = b + j * ENG_QNR * 4, *b1 = b + j2 * ENG_QNR * 4;
		v32qi_q bv0[2], bv1[2];

		for (v = 0; v < nv; v++) {
			bv0[v] = (v32qi_q)*(const v32qu_sa *)(b0 + 32 * v);
			bv1[v] = (v32qi_q)*(const v32qu_sa *)(b1 + 32 * v);
		}
#pragma GCC unroll 4
		for (r = 0; r < nr; r++) {
			const __s8 *wr = w + r * k4;
			v32qi_q w0 = (v32qi_q)((v8si_qq){} + *(const s32_qu *)(wr + 4 * j));
			v32qi_q w1 = (v32qi_q)((v8si_qq){} + *(const s32_qu *)(wr + 4 * j2));

			for (v = 0; v < nv; v++) {
				v16hi_q sum = __builtin_ia32_pmaddubsw256(bv0[v], w0) +
					      __builtin_ia32_pmaddubsw256(bv1[v], w1);

				a[r][v] += qmadd_ones(sum);
			}
		}
	}
	for (p = 2 * np; p < n; p++) {
		__u64 j = ord[p];
		const __u8 *b0 = b + j * ENG_QNR * 4;
		v32qi_q bv[2];

		for (v = 0; v < nv; v++)
			bv[v] = (v32qi_q)*(const v32qu_sa *)(b0 + 32 * v);
#pragma GCC unroll 4
		for (r = 0; r < nr; r++) {
			v32qi_q wv = (v32qi_q)((v8si_qq){} + *(const s32_qu *)(w + r * k4 + 4 * j));

			for (v = 0; v < nv; v++) {
				v16hi_q pr = __builtin_ia32_pmaddubsw256(bv[v], wv);

				a[r][v] += qmadd_ones(pr);
			}
		}
	}
#pragma GCC unroll 4
	for (r = 0; r < nr; r++)
		for (v = 0; v < nv; v++)
			*(v8si_qa *)(acc + r * ENG_QNR + 8 * v) = a[r][v];
}

#define QMADDUBS2_ROWS(n)							\
	case n:									\
		if (nv == 2)							\
			qmaddubs2_rxn(w, k4, b, o, steps, acc, init, n, 2);	\
		else								\
			qmaddubs2_rxn(w, k4, b, o, steps, acc, init, n, 1);	\
		break

/* qmadd_tile() for the 8-bit tile over a step schedule: up to 4 rows. */
static void qmaddubs2_tile(const __s8 *w, __u64 k4, const __u8 *b, const __u8 *o,
			   __u64 steps, __s32 *acc, int init, __u64 nr, __u64 nv)
{
	switch (nr) {
	QMADDUBS2_ROWS(1);
	QMADDUBS2_ROWS(2);
	QMADDUBS2_ROWS(3);
	default:
	QMADDUBS2_ROWS(4);
	}
}

/*
 * Positions at the end of a tile past its last whole vector of 8, at
 * most: QDOT_MAX. Each is summed alone (qdot_rxn()) instead of in a
 * vector of 8 positions: a 7x7 map's 49th position takes a vector's
 * work at 1/8 of its use, and as a dot product of its inputs with the
 * rows a little more than 1/8 of it.
 */
#define QDOT_MAX	2

/*
 * The 32-bit sum of each of the 8 lanes of @v (a position's sums of
 * 8 x 4 depths).
 */
static __attribute__((__always_inline__)) inline
__s32 qdot_hsum(v8si_qq v)
{
	v8si_qq h = __builtin_shufflevector(v, v, 4, 5, 6, 7, 0, 1, 2, 3);

	v += h;
	v += __builtin_shufflevector(v, v, 2, 3, 0, 1, 2, 3, 0, 1);
	v += __builtin_shufflevector(v, v, 1, 0, 3, 2, 1, 0, 3, 2);
	return v[0];
}

/* A position's inputs of 8 steps at @p: 8 x 4 bytes, ENG_QNR * 4 apart. */
static __attribute__((__always_inline__)) inline
v8si_qq qdot_gather(const __u8 *p)
{
	const v8si_qq idx = { 0, 1 * ENG_QNR * 4, 2 * ENG_QNR * 4, 3 * ENG_QNR * 4,
			      4 * ENG_QNR * 4, 5 * ENG_QNR * 4, 6 * ENG_QNR * 4,
			      7 * ENG_QNR * 4 };

	return eng_gather8w(p, idx);
}

/*
 * Position @s of the packed block at @b (its ENG_QNR positions x 4
 * depths a step) by @nr rows of split weights at @w (@k4 apart), @steps
 * steps: 8 steps at a time, the position's 32 inputs (qdot_gather())
 * by each row's 32 weights, vpmaddubsw
 * (safe on split rows: qw8_split()) and vpmaddwd by ones into a vector
 * per row; the steps past the last 8 with the missing ones 0. The sums
 * to @acc (row r's at @acc[r * ENG_QNR]). The same integers as the
 * vector tile's: sums of the same products in another order.
 */
static __attribute__((__always_inline__)) inline
void qdot_rxn(const __s8 *w, __u64 k4, const __u8 *b, __u64 s, __u64 steps,
	      __s32 *acc, __u64 nr)
{
	const __u8 *bp = b + 4 * s;
	v8si_qq a[12];
	__u64 j, r, i;

#pragma GCC unroll 12
	for (r = 0; r < nr; r++)
		a[r] = (v8si_qq){};
	for (j = 0; j + 8 <= steps; j += 8, bp += 8 * ENG_QNR * 4) {
		v8si_qq x = qdot_gather(bp);

#pragma GCC unroll 12
		for (r = 0; r < nr; r++) {
			v32qi_q wv = (v32qi_q)*(const v8si_qu *)(w + r * k4 + 4 * j);

			a[r] += qmadd_ones(__builtin_ia32_pmaddubsw256((v32qi_q)x, wv));
		}
	}
	if (j < steps) {
		v8si_qq x = {};

		for (i = 0; j + i < steps; i++)
			x[i] = *(const s32_qu *)(bp + i * ENG_QNR * 4);
#pragma GCC unroll 12
		for (r = 0; r < nr; r++) {
			v8si_qq wv = {};

			for (i = 0; j + i < steps; i++)
				wv[i] = *(const s32_qu *)(w + r * k4 + 4 * (j + i));
			a[r] += qmadd_ones(__builtin_ia32_pmaddubsw256((v32qi_q)x,
								      (v32qi_q)wv));
		}
	}
#pragma GCC unroll 12
	for (r = 0; r < nr; r++)
		acc[r * ENG_QNR] = qdot_hsum(a[r]);
}

/*
 * qdot_rxn() of position @s over the tile's @rows rows: 12 at once (a
 * whole tile), else 4 at a time.
 */
static void qdot_tile(const __s8 *w, __u64 k4, const __u8 *b, __u64 s,
		      __s32 *acc, __u64 rows)
{
	__u64 steps = k4 / 4, r;

	if (rows == ENG_QMR) {
		qdot_rxn(w, k4, b, s, steps, acc, ENG_QMR);
		return;
	}
	for (r = 0; r < rows; r += 4) {
		switch (rows - r) {
		case 1:
			qdot_rxn(w + r * k4, k4, b, s, steps, acc + r * ENG_QNR, 1);
			break;
		case 2:
			qdot_rxn(w + r * k4, k4, b, s, steps, acc + r * ENG_QNR, 2);
			break;
		case 3:
			qdot_rxn(w + r * k4, k4, b, s, steps, acc + r * ENG_QNR, 3);
			break;
		default:
			qdot_rxn(w + r * k4, k4, b, s, steps, acc + r * ENG_QNR, 4);
		}
	}
}

/*
 * The @nx pairs at @x left out of the tile's rows added to t->acc, each
 * a vpmaddwd of its two inputs per 8 positions (of the tile's ENG_QNR:
 * the packed block has them all; sums past the outputs are not used).
 * A row's pairs one run, ending at its @end (as the split and the
 * tables list them): its sums in registers meanwhile. A run past @nx
 * stops there; a pair past the block (a hostile table) adds nothing.
 */
static __attribute__((__always_inline__)) inline
void qx8_add_avx2(const struct eng_qtile *t, const struct qx8 *x, const __u8 *end,
		  __u64 nx)
{
	/* vpshufb (in 16-byte lanes): each position's bytes 2h, 2h + 1 as 16 bits. */
	static const v8su_qq pair[2] = {
		{ 0x80018000u, 0x80058004u, 0x80098008u, 0x800d800cu,
		  0x80018000u, 0x80058004u, 0x80098008u, 0x800d800cu },
		{ 0x80038002u, 0x80078006u, 0x800b800au, 0x800f800eu,
		  0x80038002u, 0x80078006u, 0x800b800au, 0x800f800eu },
	};
	/* Read once: the sums' stores below may alias @t for the compiler. */
	const __u8 *b0 = t->b;
	__s32 *acc0 = t->acc;
	__u64 lim = t->k4 * ENG_QNR, h, i = 0, r, e;

	for (r = 0; r < ENG_QMR && i < nx; r++) {
		v8si_qq *acc = (v8si_qq *)(acc0 + r * ENG_QNR), a[4];

		e = eng_min(*(const u32_qu *)(end + 4 * r), nx);
		if (i >= e)
			continue;
		for (h = 0; h < 4; h++)
			a[h] = *(const v8si_qa *)(acc + h);
		for (; i < e; i++) {
			__u32 off = x[i].off, o = off & ENG_QPAIR_STEP;
			v16hi_q wv;
			v32qi_q sel;

			if (o >= lim)
				continue;
			wv = (v16hi_q)((v8si_qq){} + x[i].w2);
			sel = (v32qi_q)pair[off & 1];
			for (h = 0; h < 4; h++) {
				v32qi_q q = (v32qi_q)*(const v32qu_sa *)(b0 + o + 32 * h);

				q = __builtin_ia32_pshufb256(q, sel);
				a[h] += (v8si_qq)__builtin_ia32_pmaddwd256((v16hi_q)q, wv);
			}
		}
		for (h = 0; h < 4; h++)
			*(v8si_qa *)(acc + h) = a[h];
	}
}

/*
 * Depths [@d0, @d1) of the ENG_QMR weight rows at @pf (@k4 apart) into
 * L2 (none when @pf is NULL): the next rows of a tile read in place from
 * W (%VNPU_PACK_QCONV_SPLIT), which comes from memory (resnet50_qdq's
 * weights are 25 MB); fetched by chunks of depth while the sums run.
 */
static __attribute__((__always_inline__)) inline
void qtile_prefetch(const __s8 *pf, __u64 k4, __u64 d0, __u64 d1)
{
	__u64 r, o;

	if (!pf)
		return;
	for (r = 0; r < ENG_QMR; r++)
		for (o = d0 & ~63ull; o < d1; o += 64)
			__builtin_prefetch(pf + r * k4 + o, 0, 2);
}

/*
 * The 8-bit tile: ENG_QMR rows of split weights @w8 by the packed block
 * t->b, into t->acc as qtile_avx2() sums them; then the @nx pairs at @x
 * (runs ending at @end) the split left out (qx8_add_avx2()); the rows at
 * @pf fetched meanwhile
 * (qtile_prefetch()).
 * Not inlined: its vectors would grow run_qconv_packed()'s frame past
 * the kernel's 2048 bytes.
 */
static __attribute__((__noinline__))
void qtile8_avx2(const struct eng_qtile *t, const __s8 *w8, const struct qx8 *x,
		 const __u8 *end, __u64 nx, const __s8 *pf, const __u8 *sched)
{
	__u64 steps = t->k4 / 4, rows = t->out->rows, cols = t->out->n;
	__u64 nch = eng_div_up(steps, QK4_CHUNK), j0, n, r, h, c;

	/* The positions past the last vector of 8, alone (QDOT_MAX). */
	c = cols % 8 && cols % 8 <= QDOT_MAX ? cols - cols % 8 : cols;
	for (h = c; h < cols; h++)
		qdot_tile(w8, t->k4, t->b, h, t->acc + h, rows);
	cols = c;
	for (j0 = 0; j0 < steps; j0 += QK4_CHUNK) {
		n = eng_min(QK4_CHUNK, steps - j0);
		qtile_prefetch(pf, t->k4, 4 * j0, 4 * (j0 + n));
		if (sched) {
			for (r = 0; r < rows; r += ENG_QS_ROWS)
				for (h = 0; h < cols; h += 16)
					qmaddubs2_tile(w8 + r * t->k4 + 4 * j0, t->k4,
						       t->b + (j0 * ENG_QNR + h) * 4,
						       sched + (r / ENG_QS_ROWS * nch +
								j0 / QK4_CHUNK) *
						       (1 + QK4_CHUNK), n,
						       t->acc + r * ENG_QNR + h, !j0,
						       eng_min(ENG_QS_ROWS, rows - r),
						       cols - h > 8 ? 2 : 1);
			continue;
		}
		for (r = 0; r < rows; r += 6)
			for (h = 0; h < cols; h += 16)
				qmaddubs_tile(w8 + r * t->k4 + 4 * j0, t->k4,
					      t->b + (j0 * ENG_QNR + h) * 4, n,
					      t->acc + r * ENG_QNR + h, !j0,
					      eng_min(6, rows - r), cols - h > 8 ? 2 : 1);
	}
	qx8_add_avx2(t, x, end, nx);
}

/*
 * Whether the VNNI tile @t takes vnpu_eng_qtile_vnni_narrow(): a few
 * positions past a panel (ENG_QNR_NARROW at most), each far cheaper
 * alone than in a second panel of 16, or no more than ENG_QNR_NARROW
 * positions in all, far cheaper four to a vpdpbusd than in a panel.
 */
#define ENG_QNR_NARROW	4
static inline int qtile_narrow(const struct eng_qtile *t)
{
	return t->out->n <= ENG_QNR_NARROW ||
	       (t->out->n > 16 && t->out->n <= 16 + ENG_QNR_NARROW);
}

/*
 * The VNNI tile over rows that leave @nx pairs at @x (runs ending at
 * @end) out: its sums, the
 * pairs added (qx8_add_avx2()), then stored as qtile_out() does. Not
 * inlined (qtile8_avx2()).
 */
static __attribute__((__noinline__))
void qtile_vnni_pairs(const struct eng_qtile *t, const struct qx8 *x, const __u8 *end,
		      __u64 nx)
{
	struct eng_qtile sums = *t;

	sums.out = (const struct eng_qout *)0;
	if (qtile_narrow(t))
		vnpu_eng_qtile_vnni_narrow(&sums, t->out->rows, t->out->n);
	else
		vnpu_eng_qtile_vnni(&sums);
	qx8_add_avx2(t, x, end, nx);
}
#endif

/*
 * The tile of positions from @n0 of the packed block, the last of its
 * rows when @last.
 */
static void qconv_tile(const struct eng_qconv *q, const struct eng_qtile *t,
		       __u64 n0, int last)
{
#ifdef ENG_FMA
	if (q->ctx->features & VNPU_ENG_F_VNNI) {
		if (!q->nx8 && qtile_narrow(t)) {
			vnpu_eng_qtile_vnni_narrow(t, t->out->rows, t->out->n);
			return;
		}
		if (!q->nx8) {
			vnpu_eng_qtile_vnni(t);
			return;
		}
		qtile_vnni_pairs(t, q->x8, q->x8end, q->nx8);
	} else if (q->nx8 != ~0ull) {
		/* W's next rows, read in place: fetched by the rows' last tile. */
		qtile8_avx2(t, q->w8, q->x8, q->x8end, q->nx8,
			    last && q->tab ? t->pf : (const __s8 *)0, q->sched);
	} else {
		qtile_avx2(t, q->w16, q->b16 + n0 / ENG_QNR * q->p.k4 * ENG_QNR);
	}
#else
	qtile_c(t, q->x8, q->x8end, q->nx8);
#endif
	qtile_out(t);
}

/* The i32 bias of output channel @m, 0 without one. */
static inline __u32 qconv_bias(const struct eng_qconv *q, __u64 m)
{
	return q->bias ? (__u32)q->bias[(__s64)m * q->bs] : 0;
}

/*
 * Output channel @m's requantization multiplier: x_scale * w_scale /
 * y_scale, in that order (the same bits as ever).
 */
static inline float qconv_mult(const struct eng_qconv *q, __u64 m)
{
	return q->xs * q->ws[(__s64)m * q->wss] / q->ys;
}

/* Output channel @m's weight zero point. */
static inline __s32 qconv_wz(const struct eng_qconv *q, __u64 m)
{
	return ld_q(q->wzp, (__s64)m * q->wzs, q->wzt);
}

#ifdef ENG_FMA
/*
 * The 16-bit tile's weight rows of @t widened, and the block of @cnt
 * positions with them, once a block.
 */
static void qconv_widen(struct eng_qconv *q, const struct eng_qtile *t, __u64 cnt)
{
	q->nx8 = ~0ull;
	qw16_rows(t->w, q->w16, q->p.k4);
	if (!q->h->b16) {
		qb16_block(q->b, q->b16, eng_div_up(cnt, ENG_QNR), q->p.k4 / 4);
		q->h->b16 = 1;
	}
}

/*
 * The AVX2 tile's weight rows of @t: split for the 8-bit tile, or, with
 * more than one pair in 16 to leave out, widened for the 16-bit one.
 * Not inlined (qtile8_avx2()).
 */
static __attribute__((__noinline__))
void qconv_rows16(struct eng_qconv *q, const struct eng_qtile *t, __u64 cnt)
{
	__u64 rows = t->out->rows;

	q->w8 = q->w8buf;
	q->x8 = q->x8buf;
	q->x8end = (const __u8 *)q->x8endbuf;
	q->nx8 = qw8_split(t->w, q->w8buf, rows, q->p.k4, q->x8buf, q->x8endbuf,
			   rows * q->p.k4 / 32);
	if (q->nx8 == ~0ull)
		qconv_widen(q, t, cnt);
}
#endif

typedef __u64 u64_qu __attribute__((aligned(1), may_alias));

/*
 * Whether the step schedule at @s (%VNPU_QSPLIT_F_PAIRS, depth @k4)
 * reads within its chunks: its pairs no more than its steps, each step
 * one of its chunk's. Checked every rows visit: a whole chunk's steps
 * (below ENG_QK4_CHUNK, a power of two) eight bytes at a time, by the
 * bits at or above it.
 */
static int qsched_valid(const __u8 *s, __u64 k4)
{
	const __u64 high = 0x0101010101010101ull * (__u8)~(ENG_QK4_CHUNK - 1);
	__u64 steps = k4 / 4, nch = eng_div_up(steps, ENG_QK4_CHUNK), g, c, i;

	for (g = 0; g < ENG_QMR / ENG_QS_ROWS; g++)
		for (c = 0; c < nch; c++, s += 1 + ENG_QK4_CHUNK) {
			__u64 n = eng_min(ENG_QK4_CHUNK, steps - c * ENG_QK4_CHUNK), or = 0;

			if (2 * (__u64)s[0] > n)
				return 0;
			if (n == ENG_QK4_CHUNK) {
				for (i = 0; i < ENG_QK4_CHUNK; i += 8)
					or |= *(const u64_qu *)(s + 1 + i);
				if (or & high)
					return 0;
				continue;
			}
			for (i = 0; i < n; i++)
				if (s[1 + i] >= n)
					return 0;
		}
	return 1;
}

/*
 * The rows of tile @tile (of the layer's group * p.mp / ENG_QMR) as
 * their %VNPU_PACK_QCONV_SPLIT table lists them: the rows for the 8-bit
 * tile as they are and the pairs left out, or, past the table's room,
 * the rows whole (the 16-bit tile's on AVX2). Any count is safe: the
 * entries read are within the table.
 */
static void qconv_rows_split(struct eng_qconv *q, const struct eng_qtile *t,
			     __u64 tile, __u64 cnt)
{
	__u64 cap = eng_qsplit_cap(q->p.k4);
	const __u8 *tab = q->tab + tile * eng_qsplit_table(q->p.k4);
	__u32 n = *(const u32_qu *)tab;

	const __u8 *next = tab + eng_qsplit_table(q->p.k4);
	__u64 o, nn;

	q->w8 = t->w;
	q->x8 = (const struct qx8 *)(tab + eng_qsplit_pairs(q->p.k4));
	q->x8end = tab + eng_qsplit_ends(q->p.k4);
	q->nx8 = n <= cap ? n : 0;
	if (n <= cap && (*(const u32_qu *)(tab + 4) & VNPU_QSPLIT_F_PAIRS) &&
	    qsched_valid(tab + 8, q->p.k4))
		q->sched = tab + 8;
	/*
	 * The next tile's schedule and pairs into L2 while these rows run
	 * (its count fetched by the tile before), and the count after it.
	 */
	if (tile + 1 < q->s.group * q->p.mp / ENG_QMR) {
		nn = eng_min(*(const u32_qu *)next, cap);
		for (o = 0; o < eng_qsplit_pairs(q->p.k4) + 8 * nn; o += 64)
			__builtin_prefetch(next + o, 0, 2);
		__builtin_prefetch(next + eng_qsplit_table(q->p.k4), 0, 2);
	}
#ifdef ENG_FMA
	if (q->wide && n > cap)
		qconv_widen(q, t, cnt);
#endif
}

#ifdef ENG_FMA
/*
 * Positions 16 on of the last tile of the packed block at q->b (@cnt
 * positions) where the VNNI tile takes them one at a time
 * (qtile_narrow()): as rows of k4 bytes at q->b16 (the AVX2 tile's, free
 * on VNNI; struct eng_qtile's @x1), copied once a rows visit, where the
 * tile gathered them from the block 16 steps at a time (vpgatherdd:
 * half of such a tile's time past its 16 positions, 5% of resnet50_qdq's
 * blocks on 7x7 maps). NULL where the last tile takes none.
 */
static const __u8 *qconv_tail(struct eng_qconv *q, __u64 cnt)
{
	__u64 n0 = (cnt - 1) / ENG_QNR * ENG_QNR, n = cnt - n0, steps = q->p.k4 / 4, i, j;
	const __u8 *b = q->b + n0 / ENG_QNR * steps * ENG_QNR * 4;
	__u32 *d = (__u32 *)q->b16;

	if (!(q->ctx->features & VNPU_ENG_F_VNNI) || !cnt || n <= 16 ||
	    n > 16 + ENG_QNR_NARROW)
		return (const __u8 *)0;
	for (i = 16; i < n; i++)
		for (j = 0; j < steps; j++)
			*d++ = *(const u32_qu *)(b + j * ENG_QNR * 4 + 4 * i);
	return (const __u8 *)q->b16;
}
#endif

/*
 * Rows [@m0, @m1) of group @g over the packed block at q->b, each tile
 * requantized as it leaves the tile.
 */
static void qconv_rows(struct eng_qconv *q, __u64 img, __u64 g, __u64 nbi,
		       __u64 m0, __u64 m1)
{
	const struct eng_qplan *p = &q->p;
	const struct vnpu_cmd_tensor *y = &q->l->t[q->l->n - 1];
	__u64 p0 = nbi * p->pos, steps = p->k4 / 4, r0, n0, r;
	__u64 cnt = eng_qblock_cnt(p, nbi);
	__u8 *yd = (__u8 *)q->l->data[q->l->n - 1] +
		   ((__s64)img * y->strides[0] + (__s64)p0);
	struct eng_qout o = { .ys = y->strides[1], .lo = (float)(q->lo - q->yz),
			      .hi = (float)(q->hi - q->yz), .yz = q->yz, .res = q->res };
	struct eng_qtile t = { .acc = q->acc, .out = &o, .k4 = p->k4 };
	const struct vnpu_cmd_tensor *rt = &q->l->t[q->l->n - 6];
	const __u8 *rd = (const __u8 *)0, *x1 = (const __u8 *)0;
#ifdef ENG_FMA
	struct eng_qpipe pc;
	int run;
#endif

	/* The fused add's R: dense rows of OH * OW like Y's (the check's). */
	if (q->res) {
		rd = (const __u8 *)q->l->data[q->l->n - 6] +
		     ((__s64)img * rt->strides[0] + (__s64)p0);
		o.rs = rt->strides[1];
	}
#ifdef ENG_FMA
	x1 = qconv_tail(q, cnt);
#endif

	for (r0 = m0; r0 < m1; r0 += ENG_QMR) {
		t.w = q->w + (g * p->mp + r0) * p->k4;
		/*
		 * The group's next rows (this unit's, or the next unit's: a
		 * part runs consecutive units), from memory where weights are
		 * large.
		 */
		t.pf = r0 + ENG_QMR < q->s.mg ? t.w + ENG_QMR * p->k4 : (const __s8 *)0;
		o.rows = (__u32)eng_min(ENG_QMR, q->s.mg - r0);
		q->nx8 = 0;
		q->sched = (const __u8 *)0;
		if (q->tab)
			qconv_rows_split(q, &t, (g * p->mp + r0) / ENG_QMR, cnt);
#ifdef ENG_FMA
		else if (q->wide)
			qconv_rows16(q, &t, cnt);
#endif
		for (r = 0; r < o.rows; r++) {
			__u64 m = g * q->s.mg + r0 + r;

			o.wz[r] = qconv_wz(q, m);
			o.fix[r] = (__s32)(qconv_bias(q, m) -
					   (__u32)q->xz * (__u32)q->wsum[g * p->mp + r0 + r] +
					   (__u32)p->k * (__u32)q->xz * (__u32)o.wz[r]);
			o.mult[r] = qconv_mult(q, m);
		}
#ifdef ENG_FMA
		/*
		 * Two or more whole tiles at the block's start, on VNNI: one
		 * run (vnpu_eng_qtile_vnni_run()), each tile's outputs stored
		 * under the next one's sums.
		 */
		run = !q->nx8 && cnt >= 2 * ENG_QNR && (q->ctx->features & VNPU_ENG_F_VNNI);
#endif
		for (n0 = 0; n0 < cnt; n0 += ENG_QNR) {
			t.b = q->b + n0 / ENG_QNR * steps * ENG_QNR * 4;
			o.n = (__u32)eng_min(ENG_QNR, cnt - n0);
			o.xsum = q->need_xsum ? q->xsum + n0 : (const __s32 *)0;
			o.y = yd + (__s64)(g * q->s.mg + r0) * y->strides[1] + (__s64)n0;
			if (rd)
				o.r = rd + (__s64)(g * q->s.mg + r0) * o.rs + (__s64)n0;
			t.x1 = n0 + ENG_QNR >= cnt ? x1 : (const __u8 *)0;
#ifdef ENG_FMA
			if (run && !n0 && vnpu_eng_qtile_vnni_runs(&t)) {
				vnpu_eng_qtile_vnni_run_init(&pc, &o);
				vnpu_eng_qtile_vnni_run(&t, &pc, cnt / ENG_QNR);
				n0 = (cnt / ENG_QNR - 1) * ENG_QNR;
				continue;
			}
#endif
			qconv_tile(q, &t, n0, n0 + ENG_QNR >= cnt);
		}
		eng_pause(q->ctx);
	}
}

/*
 * @n (at most 8; none below 1) positions of a depthwise tap, @sw bytes
 * apart from @src in the staged channel, xor @flip, as integers. Stride
 * 1 and 2 read 8 and 16 bytes: past a row's end they read its
 * ENG_QSLACK.
 */
static __attribute__((__always_inline__)) inline
v8si_qq qdw_load(const __u8 *src, __u64 sw, __s64 n, __u8 flip)
{
	v8qu_q v = {};
	__s64 i;

	if (sw == 1)
		return q_widen8(src, flip);
	if (sw == 2) {
		v16qu_q b = *(const v16qu_qu *)src;

		v = __builtin_shufflevector(b, b, 0, 2, 4, 6, 8, 10, 12, 14);
		return __builtin_convertvector(v ^ flip, v8si_qq);
	}
	for (i = 0; i < n && i < 8; i++)
		v[i] = src[i * (__s64)sw];
	return __builtin_convertvector(v ^ flip, v8si_qq);
}

/* A depthwise channel's requantization. */
struct qdw_out {
	__u32 bias;
	__s32 wz;
	float mult, lo, hi;
	__u64 rows;
};

/* Eight sums @acc of a depthwise row as @n (at most 8) outputs at @y. */
static void qdw_store(const struct eng_qconv *q, const struct qdw_out *d,
		      v8su_qq acc, __s64 n, __u8 *y)
{
	v8si_qq v = q_round8(__builtin_convertvector((v8si_qq)acc, v8sf_qq) * d->mult,
			     d->lo, d->hi, q->yz);
	__s64 e;

	if (n >= 8) {
		*(v8qu_qu *)y = q_bytes8(v);
		return;
	}
	for (e = 0; e < n; e++)
		y[e] = (__u8)v[e];
}

/*
 * Output row @y of a depthwise channel from staged row @row: 16 outputs
 * at a time, summed over the taps in registers (exact: 8-bit values less
 * their zero points, products below 2^17), then requantized.
 */
static __attribute__((__always_inline__)) inline
void qdw_row(const struct eng_qconv *q, const struct qdw_out *d,
	     const __s8 *w, const __u8 *row, __u64 sw, __u8 *y)
{
	const struct vnpu_layer_conv *a = q->l->attrs;
	__u64 ow = q->s.ow, o, kh, kw;

	for (o = 0; o < ow; o += 16) {
		v8su_qq acc0 = (v8su_qq){} + d->bias, acc1 = acc0;
		__s64 n = (__s64)(ow - o);
		const __s8 *wk = w;

		for (kh = 0; kh < q->s.kh; kh++) {
			const __u8 *src = row + kh * a->dilation[0] * q->p.wp + o * sw;

			for (kw = 0; kw < q->s.kw; kw++, src += a->dilation[1]) {
				__s32 wv = *wk++ - d->wz;

				acc0 += (v8su_qq)((qdw_load(src, sw, n, q->flip) - q->xz) * wv);
				acc1 += (v8su_qq)((qdw_load(src + 8 * sw, sw, n - 8,
							    q->flip) - q->xz) * wv);
			}
		}
		qdw_store(q, d, acc0, n, y + o);
		if (n > 8)
			qdw_store(q, d, acc1, n - 8, y + o + 8);
	}
}

#ifdef ENG_FMA
/*
 * The staged depthwise channel by the VNNI rows, where it applies
 * (a weight zero point of 0, stride 1 or 2 and dilation 1 along rows,
 * at most ENG_QDW_W4 groups of four taps); 0 where it does not.
 */
static int qdw_vnni(const struct eng_qconv *q, const struct qdw_out *d,
		    const __s8 *w, __u8 *yd)
{
	const struct vnpu_layer_conv *a = q->l->attrs;
	__u64 kh, kw, ng = (q->s.kw + 3) / 4;
	struct eng_qdw v;
	__u32 wsum = 0;

	if (!(q->ctx->features & VNPU_ENG_F_VNNI) || d->wz ||
	    a->dilation[1] != 1 || a->stride[1] > 2 ||
	    q->s.kh * ng > ENG_QDW_W4)
		return 0;
	/*
	 * Each group of four taps built in a register: byte stores into
	 * v.w4 read back as 32 bits stalled on store forwarding.
	 */
	for (kh = 0; kh < q->s.kh; kh++) {
		for (kw = 0; kw < 4 * ng; kw += 4) {
			__u32 w4 = 0, e;

			for (e = 0; e < 4 && kw + e < q->s.kw; e++) {
				__s8 b = w[kh * q->s.kw + kw + e];

				w4 |= (__u32)(__u8)b << (8 * e);
				wsum += (__u32)(__s32)b;
			}
			v.w4[kh * ng + kw / 4] = (__s32)w4;
		}
	}
	v.rs = a->dilation[0] * q->p.wp;
	v.kh = (__u32)q->s.kh;
	v.kw = (__u32)q->s.kw;
	v.sw = a->stride[1];
	v.ow = (__u32)q->s.ow;
	v.fix = (__s32)(d->bias - (__u32)q->xz * wsum);
	v.yz = q->yz;
	v.mult = d->mult;
	v.lo = d->lo;
	v.hi = d->hi;
	v.flip = q->flip;
	v.row = q->stage;
	v.rstep = a->stride[0] * q->p.wp;
	v.rows = (__u32)d->rows;
	v.y = yd;
	vnpu_eng_qdw_vnni(&v);
	return 1;
}
#endif

#ifdef ENG_FMA
/*
 * Eight positions of a depthwise tap, @sw (1 or 2) bytes apart from
 * @src, as integers: i8 inputs (@s8) sign-extended, u8 zero-extended
 * (vpmovsxbd / vpmovzxbd; stride 2 takes every other of 16 bytes).
 * Reads 8 or 16 bytes: past a row's end, its ENG_QSLACK.
 */
static __attribute__((__always_inline__)) inline
v8si_qq qdw_ld8(const __u8 *src, __u64 sw, int s8)
{
	typedef signed char v8qi_l __attribute__((vector_size(8)));
	v8qu_q b;

	if (sw == 1) {
		b = *(const v8qu_qu *)src;
	} else {
		v16qu_q w = *(const v16qu_qu *)src;

		b = __builtin_shufflevector(w, w, 0, 2, 4, 6, 8, 10, 12, 14);
	}
	ENG_OPAQUE(b);
	if (s8)
		return __builtin_convertvector((v8qi_l)b, v8si_qq);
	return __builtin_convertvector(b, v8si_qq);
}

/*
 * Output rows of a depthwise channel on AVX2: eight outputs at a time,
 * each tap one widening load, vpmulld by the tap's weight less its zero
 * point (in a register) and vpaddd. The input's zero point is taken out
 * once, in @fix (the bias less it times the sum of the weights @wt; as
 * sign-extended i8, an i8 input needs no flip): padding reads the zero
 * point, so it still adds nothing. Exact: the true sum fits 32 bits and
 * the wrapping ones agree with it. @kh and @kw are constants where it
 * is inlined for 3x3 and 5x5.
 */
static __attribute__((__always_inline__)) inline
void qdw_rows_avx2(const struct eng_qconv *q, const struct qdw_out *d,
		   const __s32 *wt, __u32 fix, const __u8 *row, __u8 *y,
		   __u64 sw, int s8, __u64 kh, __u64 kw)
{
	const struct vnpu_layer_conv *a = q->l->attrs;
	__u64 ow = q->s.ow, rs = a->dilation[0] * q->p.wp, dl = a->dilation[1];
	__u64 rstep = a->stride[0] * q->p.wp, r, o, i, j;

	for (r = 0; r < d->rows; r++, row += rstep, y += ow) {
		for (o = 0; o < ow; o += 8) {
			const __u8 *src = row + o * sw;
			v8su_qq acc = (v8su_qq){} + fix;

			for (i = 0; i < kh; i++)
				for (j = 0; j < kw; j++)
					acc += (v8su_qq)(qdw_ld8(src + i * rs + j * dl, sw, s8) *
							 ((v8si_qq){} + wt[i * kw + j]));
			qdw_store(q, d, acc, (__s64)(ow - o), y + o);
		}
	}
}

/*
 * qdw_rows_avx2() for one stride, 3x3, 5x5 or another window; a
 * function of its own (cloned per constant stride and sign), as the
 * weights it hoists into registers spill: in one frame, the copies'
 * were over the kernel's 2048 bytes.
 */
static __attribute__((__noinline__))
void qdw_avx2_sw(const struct eng_qconv *q, const struct qdw_out *d,
		 const __s32 *wt, __u32 fix, __u8 *yd, __u64 sw, int s8)
{
	__u64 kh = q->s.kh, kw = q->s.kw;

	if (kh == 3 && kw == 3)
		qdw_rows_avx2(q, d, wt, fix, q->stage, yd, sw, s8, 3, 3);
	else if (kh == 5 && kw == 5)
		qdw_rows_avx2(q, d, wt, fix, q->stage, yd, sw, s8, 5, 5);
	else
		qdw_rows_avx2(q, d, wt, fix, q->stage, yd, sw, s8, kh, kw);
}

/*
 * The staged depthwise channel (@n bytes from @s) as s16 at @d: u8
 * zero-extended, i8 (@s8) sign-extended; 16 at a time, the last 16
 * reading past @n into the scratch after it.
 */
static void qdw_widen(const __u8 *s, __s16 *d, __u64 n, int s8)
{
	__u64 i;

	for (i = 0; i < n; i += 16) {
		v16qu_q b = *(const v16qu_qu *)(s + i);

		ENG_OPAQUE(b);
		if (s8)
			*(v16hi_qu *)(d + i) = eng_sx16(b);
		else
			*(v16hi_qu *)(d + i) = eng_zx16(b);
	}
}

/**
 * struct qdw16_rq - a depthwise channel's requantization in registers
 * @mult: the channel's multiplier
 * @lo: the output range's low bound less the zero point
 * @hi: its high bound less the zero point
 * @z: the output zero point
 */
struct qdw16_rq {
	v8sf_qq mult, lo, hi;
	v8si_qq z;
};

/* @f clamped to [@rq->lo, @rq->hi] as q_round8() clamps it. */
static __attribute__((__always_inline__)) inline
v8sf_qq q_clamp8(v8sf_qq f, const struct qdw16_rq *rq)
{
	return __builtin_ia32_minps256(__builtin_ia32_maxps256(f, rq->lo), rq->hi);
}

/*
 * 16 requantized outputs of a depthwise row at @y (at most @n of them):
 * with @inter, @e holds outputs 0, 2, ..., 14 and @o 1, 3, ..., 15
 * (stride 1), else @e outputs 0-7 and @o 8-15. q_round8()'s steps, and
 * with @fin (a finite multiplier: no sum is NaN) no NaN mask; the two
 * vectors' integers (inside a byte's range) packed to 16 bits, their low
 * bytes packed and put in order (vpshufb, vpermd), one 16-byte store.
 */
static __attribute__((__always_inline__)) inline
void qdw16_store(const struct qdw16_rq *rq, v8su_qq e, v8su_qq o, __s64 n,
		 __u8 *y, int inter, int fin)
{
	const v16hi_qq lsb = (v16hi_qq){} + 0xff;
	/* Per 128-bit lane: bytes e0-e3 o0-o3 as e0 o0 e1 o1 .. e3 o3. */
	const v32qi_q il = { 0, 4, 1, 5, 2, 6, 3, 7, 8, 12, 9, 13, 10, 14, 11, 15,
			      0, 4, 1, 5, 2, 6, 3, 7, 8, 12, 9, 13, 10, 14, 11, 15 };
	const v8si_qq oi = { 0, 1, 4, 5, 2, 3, 6, 7 }, oc = { 0, 4, 1, 5, 2, 6, 3, 7 };
	v8sf_qq fe = __builtin_convertvector((v8si_qq)e, v8sf_qq) * rq->mult;
	v8sf_qq fo = __builtin_convertvector((v8si_qq)o, v8sf_qq) * rq->mult;
	v8si_qq ie, io, b;
	v16hi_qq p;
	__u8 t[32] __attribute__((aligned(32)));
	__s64 i;

	ie = __builtin_ia32_cvtps2dq256(q_clamp8(fe, rq)) + rq->z;
	io = __builtin_ia32_cvtps2dq256(q_clamp8(fo, rq)) + rq->z;
	if (!fin) {
		ie &= ~(v8si_qq)(fe != fe);
		io &= ~(v8si_qq)(fo != fo);
	}
	/* Lane l: ie[4l..4l+3], io[4l..4l+3], 16 bits each: exact. */
	p = __builtin_ia32_packssdw256(ie, io) & lsb;
	b = (v8si_qq)__builtin_ia32_packuswb256(p, p);
	/* Dwords 0, 1 of lane 0, then of lane 1 (4, 5): the 16 outputs. */
	if (inter)
		b = __builtin_ia32_permvarsi256((v8si_qq)
			__builtin_ia32_pshufb256((v32qi_q)b, il), oi);
	else
		b = __builtin_ia32_permvarsi256(b, oc);
	if (n >= 16) {
		*(v16qu_qu *)y = __builtin_shufflevector((v32qu_qq)b, (v32qu_qq)b, 0, 1, 2,
							 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
							 13, 14, 15);
		return;
	}
	*(v32qu_qq *)t = (v32qu_qq)b;
	i = 0;
	if (n >= 8) {
		*(v8qu_qu *)y = *(const v8qu_qu *)t;
		i = 8;
	}
	for (; i < n; i++)
		y[i] = t[i];
}

/*
 * Output rows of a depthwise channel of dilation 1 along rows, from its
 * staged rows widened to s16 (@row): a 32-bit lane of them at element e
 * holds inputs e and e + 1, the pair of taps (2j, 2j + 1) of the output
 * at e - 2j for stride 1 (a load per even and per odd outputs) and at
 * (e - 2j) / 2 for stride 2 (eight consecutive outputs a load), so one
 * vpmaddwd by a broadcast pair of weights (@w2: per tap row, (kw + 1) /
 * 2 pairs, the last one's second 0 for odd kw) sums two taps of eight
 * outputs: half the multiplies of qdw_rows_avx2()'s vpmulld, no
 * widening loads. Exact: 16-bit inputs and weights (less the zero
 * point: 9 bits), 32-bit sums as qdw_rows_avx2() has them, the same
 * requantization. @kh and @kw: constants where inlined.
 */
static __attribute__((__always_inline__)) inline
void qdw16_rows(const struct eng_qconv *q, const struct qdw_out *d,
		const __s32 *w2, __u32 fix, const __s16 *row, __u8 *y,
		__u64 sw, __u64 kh, __u64 kw, int fin)
{
	const struct vnpu_layer_conv *a = q->l->attrs;
	__u64 ow = q->s.ow, rs = a->dilation[0] * q->p.wp, np = (kw + 1) / 2;
	__u64 rstep = a->stride[0] * q->p.wp, r, o, i, j;
	const struct qdw16_rq rq = { .mult = (v8sf_qq){} + d->mult,
				     .lo = (v8sf_qq){} + d->lo,
				     .hi = (v8sf_qq){} + d->hi,
				     .z = (v8si_qq){} + q->yz };

	for (r = 0; r < d->rows; r++, row += rstep, y += ow) {
		for (o = 0; o < ow; o += 16) {
			v8su_qq e = (v8su_qq){} + fix, f = e;

			for (i = 0; i < kh; i++) {
				const __s16 *src = row + i * rs + o * sw;

				for (j = 0; j < np; j++, src += 2) {
					v16hi_q wv = (v16hi_q)((v8si_qq){} + w2[i * np + j]);

					const v16hi_qu *xe = (const v16hi_qu *)src;
					const v16hi_qu *xf = (const v16hi_qu *)
						(src + (sw == 1 ? 1 : 16));

					e += (v8su_qq)__builtin_ia32_pmaddwd256(*xe, wv);
					f += (v8su_qq)__builtin_ia32_pmaddwd256(*xf, wv);
					/*
					 * One sum a tap pair: GCC otherwise
					 * reassociates the adds into a tree of
					 * the products, which spill.
					 */
					ENG_OPAQUE2(e, f);
				}
			}
			/*
			 * A row's last outputs store 16 too where the bytes
			 * past them are the block's later rows, which their
			 * own stores write after.
			 */
			qdw16_store(&rq, e, f, o + 16 <= ow + (d->rows - r - 1) * ow ?
				    16 : (__s64)(ow - o), y + o, sw == 1, fin);
		}
	}
}

/*
 * qdw16_rows() for one stride, 3x3, 5x5 or another window (qdw_avx2_sw());
 * a multiplier that is not finite (sums of NaN) takes the last.
 */
static __attribute__((__noinline__))
void qdw16_sw(const struct eng_qconv *q, const struct qdw_out *d,
	      const __s32 *w2, __u32 fix, __u8 *yd, __u64 sw)
{
	__u64 kh = q->s.kh, kw = q->s.kw;
	int fin = d->mult - d->mult == 0;

	if (fin && kh == 3 && kw == 3)
		qdw16_rows(q, d, w2, fix, q->stage16, yd, sw, 3, 3, 1);
	else if (fin && kh == 5 && kw == 5)
		qdw16_rows(q, d, w2, fix, q->stage16, yd, sw, 5, 5, 1);
	else
		qdw16_rows(q, d, w2, fix, q->stage16, yd, sw, kh, kw, 0);
}

/*
 * The staged depthwise channel by qdw_rows_avx2(), where it applies
 * (stride 1 or 2 along rows, at most ENG_QDW_TAPS taps); 0 where not.
 */
#define ENG_QDW_TAPS	49
static int qdw_avx2(const struct eng_qconv *q, const struct qdw_out *d,
		    const __s8 *w, __u8 *yd, int staged16)
{
	const struct vnpu_layer_conv *a = q->l->attrs;
	__u64 taps = q->s.kh * q->s.kw, t;
	__s32 xz = q->xz - (q->flip ? 128 : 0);
	__s32 wt[ENG_QDW_TAPS];
	__u32 wsum = 0;

	if (a->stride[1] > 2 || taps > ENG_QDW_TAPS)
		return 0;
	for (t = 0; t < taps; t++) {
		__s32 v = w[t] - d->wz;

		wt[t] = v;
		wsum += (__u32)v;
	}
	if (a->dilation[1] == 1) {
		__u64 np = (q->s.kw + 1) / 2, i, j;
		__s32 w2[ENG_QDW_TAPS];

		/* Pairs of taps along each row: (2j, 2j + 1), 0 past kw. */
		for (i = 0; i < q->s.kh; i++)
			for (j = 0; j < np; j++) {
				__s32 lo = wt[i * q->s.kw + 2 * j];
				__s32 hi = 2 * j + 1 < q->s.kw ? wt[i * q->s.kw + 2 * j + 1] : 0;

				w2[i * np + j] = (__s32)((__u32)(__u16)lo | (__u32)(__u16)hi << 16);
			}
		if (!staged16)
			qdw_widen(q->stage, q->stage16, (q->p.hp + 1) * q->p.wp, !!q->flip);
		qdw16_sw(q, d, w2, d->bias - (__u32)xz * wsum, yd, a->stride[1]);
		return 1;
	}
	/* @xz: the zero point of the loaded values (i8 unflipped). */
	if (a->stride[1] == 1 && q->flip)
		qdw_avx2_sw(q, d, wt, d->bias - (__u32)xz * wsum, yd, 1, 1);
	else if (a->stride[1] == 1)
		qdw_avx2_sw(q, d, wt, d->bias - (__u32)xz * wsum, yd, 1, 0);
	else if (q->flip)
		qdw_avx2_sw(q, d, wt, d->bias - (__u32)xz * wsum, yd, 2, 1);
	else
		qdw_avx2_sw(q, d, wt, d->bias - (__u32)xz * wsum, yd, 2, 0);
	return 1;
}
#endif

#ifdef ENG_FMA
/*
 * ---- Eight depthwise channels at once (AVX2, small maps) --------------
 *
 * On a 7x7 or 14x14 map a channel's rows are shorter than a vector and
 * its staging, widening and stores cost more than its products. Where
 * the whole map is one column block (p.dw8), eight channels run
 * together, one per 32-bit lane: their padded inputs as 8 bytes a
 * position (@t, rows of @wq), as 16-bit pairs of each position and its
 * right neighbour (@pr: 32 bytes a position), so that one vpmaddwd by
 * the eight channels' weights of a tap pair sums two taps of one output
 * of all eight; outputs requantized per lane (q_round8(), each lane its
 * channel's multiplier), 8 bytes a position, then back to the planes.
 * The sums are qdw16_rows()'s: the same bytes.
 */
struct qdw8 {
	__u8 *t;
	__s16 *pr;
	__u8 *o;
	__s32 *w2;	/* per tap row, per pair: the eight channels' pairs */
	v8si_qq fix;
	v8sf_qq mult;
	__u64 wq, hp, np;
};

/*
 * An 8x8 byte transpose: byte j of row i (8 bytes at @s + i * @ss) to
 * byte i of row j, rows 2k and 2k + 1 in @o[k]: byte, 16-bit and 32-bit
 * interleaves.
 */
static __attribute__((__always_inline__)) inline
void q_tr8v(const __u8 *s, __s64 ss, v16qu_q *o)
{
	v16qu_q t[4], u[4];
	__u64 i;

	for (i = 0; i < 4; i++) {
		v8qu_q a = *(const v8qu_qu *)(s + 2 * i * ss);
		v8qu_q b = *(const v8qu_qu *)(s + (2 * i + 1) * ss);

		t[i] = __builtin_shufflevector(a, b, 0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13,
					       6, 14, 7, 15);
	}
	for (i = 0; i < 2; i++) {
		u[2 * i] = __builtin_shufflevector(t[2 * i], t[2 * i + 1], 0, 1, 16, 17,
						   2, 3, 18, 19, 4, 5, 20, 21, 6, 7, 22, 23);
		u[2 * i + 1] = __builtin_shufflevector(t[2 * i], t[2 * i + 1], 8, 9, 24, 25,
						       10, 11, 26, 27, 12, 13, 28, 29, 14, 15,
						       30, 31);
	}
	/* u[0]: rows 0-3 of columns 0-3, u[1] of 4-7; u[2], u[3]: rows 4-7. */
	for (i = 0; i < 4; i++) {
		v16qu_q lo = u[i / 2], hi = u[2 + i / 2];

		if (i % 2)
			o[i] = __builtin_shufflevector(lo, hi, 8, 9, 10, 11, 24, 25, 26, 27,
						       12, 13, 14, 15, 28, 29, 30, 31);
		else
			o[i] = __builtin_shufflevector(lo, hi, 0, 1, 2, 3, 16, 17, 18, 19,
						       4, 5, 6, 7, 20, 21, 22, 23);
	}
}

/* The low (@hi 0) or high 8 bytes of @o at @d. */
static __attribute__((__always_inline__)) inline
void q_half8(v16qu_q o, int hi, __u8 *d)
{
	if (hi)
		*(v8qu_qu *)d = __builtin_shufflevector(o, o, 8, 9, 10, 11, 12, 13, 14, 15);
	else
		*(v8qu_qu *)d = __builtin_shufflevector(o, o, 0, 1, 2, 3, 4, 5, 6, 7);
}

/* q_tr8v() with row j at @d + j * @ds. */
static void q_tr8(const __u8 *s, __s64 ss, __u8 *d, __s64 ds)
{
	v16qu_q o[4];
	__u64 i;

	q_tr8v(s, ss, o);
	for (i = 0; i < 4; i++) {
		q_half8(o[i], 0, d + 2 * i * ds);
		q_half8(o[i], 1, d + (2 * i + 1) * ds);
	}
}

/*
 * @v.t from channels [@g, @g + 8) of image @img: padding is x's zero
 * point; a row of 8 inputs or more moves 8 columns at a time (q_tr8(),
 * the last 8 overlapping the others), shorter rows of a dense plane of 8
 * inputs or more 8 positions of the plane at a time (q_tr8v(), each to
 * its padded place), others a byte at a time.
 */
static void qdw8_gather(const struct eng_qconv *q, const struct qdw8 *v,
			__u64 img, __u64 g)
{
	const struct vnpu_layer_conv *a = q->l->attrs;
	const struct vnpu_cmd_tensor *x = &q->l->t[0];
	__s64 xsh = x->rank == 4 ? x->strides[2] : 0, cs = x->strides[1];
	__u64 top = a->pad_begin[0], left = a->pad_begin[1];
	__u64 h = q->s.h, w = q->s.w, ri, ci, c, p, i;
	const __u8 *xc = (const __u8 *)q->l->data[0] + (__s64)img * x->strides[0] +
			 (__s64)g * cs;
	__u64 pad = 0x0101010101010101ull * (__u8)(q->xz ^ q->flip);
	int flat = x->rank == 4 && xsh == (__s64)w && w < 8 && h * w >= 8;

	for (ri = 0; ri < v->hp; ri++) {
		__u64 *d = (__u64 *)(v->t + ri * v->wq * 8);
		const __u8 *xr = xc + (__s64)(ri - top) * xsh;

		if (ri < top || ri - top >= h) {
			for (ci = 0; ci < v->wq; ci++)
				d[ci] = pad;
			continue;
		}
		for (ci = 0; ci < left; ci++)
			d[ci] = pad;
		for (ci = left + w; ci < v->wq; ci++)
			d[ci] = pad;
		if (flat)
			continue;
		if (w < 8) {
			__u8 *b = (__u8 *)(d + left);

			for (ci = 0; ci < w; ci++)
				for (c = 0; c < 8; c++)
					b[8 * ci + c] = xr[(__s64)c * cs + (__s64)ci];
			continue;
		}
		for (ci = 0; ci < w; ci += 8) {
			ci = eng_min(ci, w - 8);
			q_tr8(xr + ci, cs, (__u8 *)(d + left + ci), 8);
		}
	}
	if (!flat)
		return;
	for (p = 0; p < h * w; p += 8) {
		v16qu_q o[4];

		__u8 *d;

		p = eng_min(p, h * w - 8);
		q_tr8v(xc + p, cs, o);
		ci = p % w;
		d = v->t + ((p / w + top) * v->wq + left + ci) * 8;
		for (i = 0; i < 8; i++, d += 8) {
			q_half8(o[i / 2], i % 2, d);
			if (++ci == w) {
				ci = 0;
				d += (v->wq - w) * 8;
			}
		}
	}
}

/* @v.pr from @v.t: per position, the eight channels' (x, right neighbour). */
static void qdw8_pairs(const struct eng_qconv *q, const struct qdw8 *v)
{
	__u64 n = v->hp * v->wq - 1, i;

	for (i = 0; i < n; i++) {
		v16qu_q b = *(const v16qu_qu *)(v->t + 8 * i);

		b = __builtin_shufflevector(b, b, 0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13,
					    6, 14, 7, 15);
		ENG_OPAQUE(b);
		if (q->flip)
			*(v16hi_qa *)(v->pr + 16 * i) =
				eng_sx16(b);
		else
			*(v16hi_qa *)(v->pr + 16 * i) = eng_zx16(b);
	}
}

/*
 * The outputs of the eight channels (@kh, @kw: constants where inlined)
 * at @v.o: per position, a sum of kh * np vpmaddwd.
 */
static __attribute__((__always_inline__)) inline
void qdw8_sums(const struct eng_qconv *q, const struct qdw8 *v, __u64 kh,
	       __u64 kw)
{
	const struct vnpu_layer_conv *a = q->l->attrs;
	__u64 sh = a->stride[0], sw = a->stride[1], np = (kw + 1) / 2;
	__u64 oh = q->s.oh, ow = q->s.ow, r, o, i, j;
	float lo = (float)(q->lo - q->yz), hi = (float)(q->hi - q->yz);
	__u8 *out = v->o;

	for (r = 0; r < oh; r++)
		for (o = 0; o < ow; o++, out += 8) {
			const __s16 *src = v->pr + ((r * sh) * v->wq + o * sw) * 16;
			v8si_qq acc = v->fix;

			for (i = 0; i < kh; i++)
				for (j = 0; j < np; j++) {
					const __s16 *x2 = src + (i * v->wq + 2 * j) * 16;
					const __s32 *w2 = v->w2 + (i * np + j) * 8;

					v16hi_q xv = *(const v16hi_qa *)x2;

					acc += (v8si_qq)__builtin_ia32_pmaddwd256(xv,
						*(const v16hi_qa *)w2);
				}
			*(v8qu_qu *)out = q_bytes8(q_round8(__builtin_convertvector(acc, v8sf_qq) *
							    v->mult, lo, hi, q->yz));
		}
}

/*
 * qdw8_sums() for a finite multiplier in all eight lanes (no sum is
 * NaN: no mask), two positions at a time: their sums converted, scaled
 * and clamped as q_round8() does, packed to 16 bits (in range: exact),
 * the zero point added there, their low bytes packed and put in order
 * (vpermd), one 16-byte store (8 for an odd last position).
 */
static __attribute__((__always_inline__)) inline
void qdw8_sums2(const struct eng_qconv *q, const struct qdw8 *v, __u64 kh,
		__u64 kw)
{
	const struct vnpu_layer_conv *a = q->l->attrs;
	const v16hi_qq lsb = (v16hi_qq){} + 0xff;
	const v8si_qq oi = { 0, 4, 1, 5, 2, 6, 3, 7 };
	__u64 sw = a->stride[1], np = (kw + 1) / 2, wq = v->wq;
	__u64 ow = q->s.ow, n = q->s.oh * ow, e, i, j, col = 0;
	__s64 step = (__s64)sw * 16, wrap = (__s64)(a->stride[0] * wq - (ow - 1) * sw) * 16;
	const v8sf_qq lo = (v8sf_qq){} + (float)(q->lo - q->yz);
	const v8sf_qq hi = (v8sf_qq){} + (float)(q->hi - q->yz);
	const v16hi_qq z = (v16hi_qq){} + (short)q->yz;
	const __s16 *s0 = v->pr, *s1;
	__u8 *out = v->o;

	for (e = 0; e < n; e += 2, out += 16) {
		v8si_qq a0 = v->fix, a1 = a0, i0, i1, b;
		v8sf_qq f0, f1;
		v16hi_qq p;

		s1 = col + 1 < ow ? s0 + step : s0 + wrap;
		if (e + 1 == n)
			s1 = s0;
		for (i = 0; i < kh; i++)
			for (j = 0; j < np; j++) {
				v16hi_q wv = *(const v16hi_qa *)(v->w2 + (i * np + j) * 8);
				__u64 off = (i * wq + 2 * j) * 16;

				v16hi_q x0 = *(const v16hi_qa *)(s0 + off);
				v16hi_q x1 = *(const v16hi_qa *)(s1 + off);

				a0 += (v8si_qq)__builtin_ia32_pmaddwd256(x0, wv);
				a1 += (v8si_qq)__builtin_ia32_pmaddwd256(x1, wv);
				/* One sum a tap pair (qdw16_rows()). */
				ENG_OPAQUE2(a0, a1);
			}
		f0 = __builtin_convertvector(a0, v8sf_qq) * v->mult;
		f1 = __builtin_convertvector(a1, v8sf_qq) * v->mult;
		f0 = __builtin_ia32_minps256(__builtin_ia32_maxps256(f0, lo), hi);
		f1 = __builtin_ia32_minps256(__builtin_ia32_maxps256(f1, lo), hi);
		i0 = __builtin_ia32_cvtps2dq256(f0);
		i1 = __builtin_ia32_cvtps2dq256(f1);
		/* Lane l: i0[4l..4l+3], i1[4l..4l+3]; then their bytes. */
		p = ((v16hi_qq)__builtin_ia32_packssdw256(i0, i1) + z) & lsb;
		b = __builtin_ia32_permvarsi256((v8si_qq)__builtin_ia32_packuswb256(p, p), oi);
		if (e + 1 < n)
			*(v16qu_qu *)out = __builtin_shufflevector((v32qu_qq)b, (v32qu_qq)b, 0, 1,
								   2, 3, 4, 5, 6, 7, 8, 9, 10,
								   11, 12, 13, 14, 15);
		else
			*(v8qu_qu *)out = __builtin_shufflevector((v32qu_qq)b, (v32qu_qq)b, 0, 1,
								  2, 3, 4, 5, 6, 7);
		/* Two positions on. */
		col = col + 1 < ow ? col + 1 : 0;
		if (col + 1 < ow) {
			s0 = s1 + step;
			col++;
		} else {
			s0 = s1 + wrap;
			col = 0;
		}
	}
}

static __attribute__((__noinline__))
void qdw8_sums_k(const struct eng_qconv *q, const struct qdw8 *v)
{
	v8sf_qq m = v->mult;
	v8si_qq fin = (v8si_qq)(m - m == 0);

	if (fin[0] & fin[1] & fin[2] & fin[3] & fin[4] & fin[5] & fin[6] & fin[7]) {
		if (q->s.kh == 3 && q->s.kw == 3)
			qdw8_sums2(q, v, 3, 3);
		else if (q->s.kh == 5 && q->s.kw == 5)
			qdw8_sums2(q, v, 5, 5);
		else
			qdw8_sums2(q, v, q->s.kh, q->s.kw);
		return;
	}
	qdw8_sums(q, v, q->s.kh, q->s.kw);
}

typedef unsigned int v4su_q __attribute__((vector_size(16)));

/* Vectors of two taps of eight channels: windows of up to 7x7, 16 at a time. */
#define ENG_QDW8_TP	32

/*
 * @v.w2 and @v.fix of channels [@g, @g + 8): their taps 16 at a time,
 * 8 channels by 16 bytes transposed (byte, 16-bit and 32-bit
 * interleaves) to two taps a vector, the 8 channels' bytes of each;
 * then per tap pair one interleave of two taps, sign-extended, less the
 * weight zero points (with @wzp, not the missing second of an odd row's
 * last pair: 0); the sums of the weights from the pairs' 16-bit sums
 * (|w - wz| <= 255, at most 49 taps a lane). The scalar setup's values.
 * Reads up to 16 bytes a channel past its taps: the rest of its rows.
 */
static void qdw8_weights(const struct eng_qconv *q, struct qdw8 *v, __u64 g,
			 __s32 xz)
{
	__u64 kh = q->s.kh, kw = q->s.kw, k = kh * kw, np = (kw + 1) / 2;
	__u64 rs = q->p.mp * q->p.k4, tb, c, i, j;
	const __u8 *w0 = (const __u8 *)q->w + g * rs;
	v16qu_q tp[ENG_QDW8_TP];
	v16hi_q wzp = {}, wzl = {}, sum = {};
	v8si_qq wsum, bias;

	for (tb = 0; tb < k; tb += 16) {
		v16qu_q r[8], b[8];
		v8hu_q d[8];

		for (c = 0; c < 8; c++)
			r[c] = *(const v16qu_qu *)(w0 + c * rs + tb);
		for (c = 0; c < 4; c++) {
			b[2 * c] = __builtin_shufflevector(r[2 * c], r[2 * c + 1], 0, 16, 1, 17,
							   2, 18, 3, 19, 4, 20, 5, 21, 6, 22,
							   7, 23);
			b[2 * c + 1] = __builtin_shufflevector(r[2 * c], r[2 * c + 1], 8, 24,
							       9, 25, 10, 26, 11, 27, 12, 28,
							       13, 29, 14, 30, 15, 31);
		}
		/* b[2c + h]: taps 8h..8h+7 of channels 2c, 2c + 1 (16 bits a tap). */
		for (c = 0; c < 2; c++) {
			v8hu_q p0 = (v8hu_q)b[c], p1 = (v8hu_q)b[2 + c];
			v8hu_q p2 = (v8hu_q)b[4 + c], p3 = (v8hu_q)b[6 + c];

			d[4 * c] = __builtin_shufflevector(p0, p1, 0, 8, 1, 9, 2, 10, 3, 11);
			d[4 * c + 1] = __builtin_shufflevector(p0, p1, 4, 12, 5, 13, 6, 14, 7, 15);
			d[4 * c + 2] = __builtin_shufflevector(p2, p3, 0, 8, 1, 9, 2, 10, 3, 11);
			d[4 * c + 3] = __builtin_shufflevector(p2, p3, 4, 12, 5, 13, 6, 14, 7, 15);
		}
		/*
		 * d[4h + l]: taps 8h + 4l .. 8h + 4l + 3, 32 bits each: channels
		 * 0-3 (l 0, 1), 4-7 (d[4h + 2 + l]).
		 */
		for (c = 0; c < 2; c++)
			for (i = 0; i < 2; i++) {
				v4su_q lo = (v4su_q)d[4 * c + i], hi = (v4su_q)d[4 * c + 2 + i];

				tp[tb / 2 + 4 * c + 2 * i] =
					(v16qu_q)__builtin_shufflevector(lo, hi, 0, 4, 1, 5);
				tp[tb / 2 + 4 * c + 2 * i + 1] =
					(v16qu_q)__builtin_shufflevector(lo, hi, 2, 6, 3, 7);
			}
	}
	if (q->need_xsum) {
		v8si_qq wz;

		for (c = 0; c < 8; c++)
			wz[c] = qconv_wz(q, g + c);
		wzl = (v16hi_q)(wz & 0xffff);
		wzp = (v16hi_q)((wz & 0xffff) | wz << 16);
	}
	for (i = 0; i < kh; i++)
		for (j = 0; j < np; j++) {
			__u64 t = i * kw + 2 * j;
			v16qu_q x = tp[t / 2], y = {}, u;
			v16hi_q pr;

			if (2 * j + 1 == kw && t % 2) {
				u = __builtin_shufflevector(x, y, 8, 16, 9, 16, 10, 16, 11, 16, 12,
							    16, 13, 16, 14, 16, 15, 16);
			} else if (2 * j + 1 == kw) {
				u = __builtin_shufflevector(x, y, 0, 16, 1, 16, 2, 16, 3, 16, 4, 16,
							    5, 16, 6, 16, 7, 16);
			} else if (t % 2) {
				y = tp[t / 2 + 1];
				u = __builtin_shufflevector(x, y, 8, 16, 9, 17, 10, 18, 11, 19, 12,
							    20, 13, 21, 14, 22, 15, 23);
			} else {
				u = __builtin_shufflevector(x, x, 0, 8, 1, 9, 2, 10, 3, 11, 4, 12,
							    5, 13, 6, 14, 7, 15);
			}
			pr = eng_sx16(u) - (2 * j + 1 == kw ? wzl : wzp);
			sum += pr;
			*(v16hi_qa *)(v->w2 + (i * np + j) * 8) = pr;
		}
	wsum = (v8si_qq)__builtin_ia32_pmaddwd256(sum, (v16hi_q){} + 1);
	bias = (v8si_qq){ (__s32)qconv_bias(q, g), (__s32)qconv_bias(q, g + 1),
			  (__s32)qconv_bias(q, g + 2), (__s32)qconv_bias(q, g + 3),
			  (__s32)qconv_bias(q, g + 4), (__s32)qconv_bias(q, g + 5),
			  (__s32)qconv_bias(q, g + 6), (__s32)qconv_bias(q, g + 7) };
	v->fix = (v8si_qq)((v8su_qq)bias - (__u32)xz * (v8su_qq)wsum);
}

/* Channels [@g, @g + 8) of image @img (p.dw8). */
static void qdw8_run(struct eng_qconv *q, __u64 img, __u64 g)
{
	const struct vnpu_cmd_tensor *y = &q->l->t[q->l->n - 1];
	const struct vnpu_layer_conv *a = q->l->attrs;
	__u64 kh = q->s.kh, kw = q->s.kw, n = q->s.oh * q->s.ow, c, e;
	__s32 xz = q->xz - (q->flip ? 128 : 0);
	__u8 *sp = q->dw8, *yd;
	struct qdw8 v;

	v.hp = q->p.hp;
	v.np = (kw + 1) / 2;
	v.wq = (q->s.ow - 1) * a->stride[1] + kw + 1;
	v.t = q_align(&sp, 8 * v.hp * v.wq);
	v.pr = q_align(&sp, 32 * v.hp * v.wq);
	v.o = q_align(&sp, 8 * n);
	v.w2 = q_align(&sp, 4 * 8 * kh * v.np);
	/*
	 * The next eight channels' taps (MP rows apart in the packed
	 * weights: on lines of their own), fetched while these run.
	 */
	for (c = 8; c < 16; c++) {
		__builtin_prefetch(q->w + (g + c) * q->p.mp * q->p.k4);
		__builtin_prefetch(q->w + (g + c) * q->p.mp * q->p.k4 + q->p.k4 - 1);
	}
	qdw8_weights(q, &v, g, xz);
	v.mult = (v8sf_qq){ qconv_mult(q, g), qconv_mult(q, g + 1), qconv_mult(q, g + 2),
			    qconv_mult(q, g + 3), qconv_mult(q, g + 4), qconv_mult(q, g + 5),
			    qconv_mult(q, g + 6), qconv_mult(q, g + 7) };
	qdw8_gather(q, &v, img, g);
	qdw8_pairs(q, &v);
	qdw8_sums_k(q, &v);
	yd = (__u8 *)q->l->data[q->l->n - 1] + (__s64)img * y->strides[0] +
	     (__s64)g * y->strides[1];
	if (n < 8) {
		for (c = 0; c < 8; c++)
			for (e = 0; e < n; e++)
				yd[(__s64)c * y->strides[1] + (__s64)e] = v.o[8 * e + c];
		return;
	}
	/* The last 8 positions overlap the others: the same bytes again. */
	for (e = 0; e < n; e += 8) {
		e = eng_min(e, n - 8);
		q_tr8(v.o + 8 * e, 8, yd + e, y->strides[1]);
	}
}
#endif

#ifdef ENG_FMA
/*
 * Whether a depthwise channel runs qdw16_rows() without VNNI (qdw_avx2()'s
 * first case), whose input qdw_stage16() stages.
 */
static int qdw16_staged(const struct eng_qconv *q)
{
	const struct vnpu_layer_conv *a = q->l->attrs;

	return !(q->ctx->features & VNPU_ENG_F_VNNI) && a->stride[1] <= 2 &&
	       a->dilation[1] == 1 && q->s.kh * q->s.kw <= ENG_QDW_TAPS;
}

/*
 * qconv_stage() and qdw_widen() in one pass: the staged rows of channel
 * @c of image @img from output row @oh0 as 16-bit values (u8 inputs
 * zero-extended, i8 sign-extended), padding the zero point, the row
 * after them too; rows of 16 inputs or more 16 at a time (the last 16
 * overlapping), the padding 16 at a time (what runs past a row, the next
 * row or the stage's 16 spare values take).
 */
static void qdw_stage16(const struct eng_qconv *q, __u64 img, __u64 c,
			__u64 oh0)
{
	const struct vnpu_layer_conv *a = q->l->attrs;
	const struct vnpu_cmd_tensor *x = &q->l->t[0];
	__s64 xsh = x->rank == 4 ? x->strides[2] : 0;
	__u64 w = q->s.w, hp = q->p.hp, wp = q->p.wp, r, i;
	__u64 pb = a->pad_begin[1], ihb = oh0 * a->stride[0];
	__s64 h = (__s64)q->s.h, top = a->pad_begin[0];
	__u8 pb8 = (__u8)(q->xz ^ q->flip);
	int s8 = !!q->flip;
	const __s16 p16 = s8 ? (__s16)(__s8)pb8 : (__s16)pb8;
	const v16hi_q pad = (v16hi_q){} + p16;
	const __u8 *xc = (const __u8 *)q->l->data[0] +
			 (__s64)img * x->strides[0] + (__s64)c * x->strides[1];
	__s16 *d = q->stage16;

	for (r = 0; r <= hp; r++, d += wp) {
		__s64 ih = (__s64)(ihb + r) - top;
		const __u8 *s = xc + ih * xsh;

		if (r == hp || ih < 0 || ih >= h) {
			for (i = 0; i < wp; i += 16)
				*(v16hi_qu *)(d + i) = pad;
			continue;
		}
		for (i = 0; i < pb; i += 16)
			*(v16hi_qu *)(d + i) = pad;
		if (w >= 16) {
			for (i = 0; i + 16 < w; i += 16)
				qdw_widen(s + i, d + pb + i, 16, s8);
			qdw_widen(s + w - 16, d + pb + w - 16, 16, s8);
		} else {
			for (i = 0; i < w; i++)
				d[pb + i] = s8 ? (__s16)(__s8)s[i] : (__s16)s[i];
		}
		for (i = pb + w; i < wp; i += 16)
			*(v16hi_qu *)(d + i) = pad;
	}
}
#endif

/*
 * Depthwise (one input and one output channel per group): from the
 * staged channel straight to the outputs (qdw_row()), instead of a
 * 12-row tile of which one row is used.
 */
static void qconv_depthwise(struct eng_qconv *q, __u64 img, __u64 g, __u64 nbi)
{
	const struct vnpu_layer_conv *a = q->l->attrs;
	const struct eng_qplan *p = &q->p;
	const struct vnpu_cmd_tensor *y = &q->l->t[q->l->n - 1];
	const __s8 *w = q->w + g * p->mp * p->k4;
	__u64 oh0 = nbi * p->rows, ow = q->s.ow, r;
	__u64 nr = eng_min(p->rows, q->s.oh - oh0);
	struct qdw_out d = { .bias = qconv_bias(q, g), .wz = qconv_wz(q, g),
			     .mult = qconv_mult(q, g),
			     .lo = (float)(q->lo - q->yz), .hi = (float)(q->hi - q->yz),
			     .rows = nr };
	__u8 *yd = (__u8 *)q->l->data[q->l->n - 1] +
		   ((__s64)img * y->strides[0] + (__s64)g * y->strides[1] +
		    (__s64)(oh0 * ow));

#ifdef ENG_FMA
	if (qdw16_staged(q)) {
		qdw_stage16(q, img, g, oh0);
		qdw_avx2(q, &d, w, yd, 1);
		return;
	}
#endif
	qconv_stage(q, img, g, oh0);
#ifdef ENG_FMA
	if (qdw_vnni(q, &d, w, yd) || qdw_avx2(q, &d, w, yd, 0))
		return;
#endif
	for (r = 0; r < nr; r++) {
		const __u8 *row = q->stage + r * a->stride[0] * p->wp;

		/* Constant strides: each loop its own loads. */
		if (a->stride[1] == 1)
			qdw_row(q, &d, w, row, 1, yd + r * ow);
		else if (a->stride[1] == 2)
			qdw_row(q, &d, w, row, 2, yd + r * ow);
		else
			qdw_row(q, &d, w, row, a->stride[1], yd + r * ow);
	}
}

/*
 * The fused QLinearAdd's parameters (run_qlinear_add()'s): the
 * convolution's output at y_scale, y_zero_point, R at its own, in the
 * order of %VNPU_LAYER_F_RES_FIRST.
 */
static void qconv_residual_arg(const struct eng_layer *l, struct eng_qadd_arg *q)
{
	__u32 r = l->n - 5;

	if (((const struct vnpu_layer_conv *)l->attrs)->flags & VNPU_LAYER_F_RES_FIRST)
		qadd_params(l, r, 6, l->n - 3, l->t[l->n - 1].dtype, q);
	else
		qadd_params(l, 6, r, l->n - 3, l->t[l->n - 1].dtype, q);
	q->first = !!(((const struct vnpu_layer_conv *)l->attrs)->flags &
		      VNPU_LAYER_F_RES_FIRST);
}

/* qparam_off()'s step: an index's offset is index times it. */
static __s64 qparam_step(const struct vnpu_cmd_tensor *p)
{
	return qparam_off(p, 1);
}

/* The per-channel parameters' places (struct eng_qconv), once a layer. */
static void qconv_params(struct eng_qconv *q)
{
	const struct eng_layer *l = q->l;
	const struct vnpu_layer_conv *a = l->attrs;

	q->xs = qscale(l, 1, 0);
	q->ys = qscale(l, 6, 0);
	q->ws = (const float *)l->data[4];
	q->wss = qparam_step(&l->t[4]);
	q->wzp = l->data[5];
	q->wzs = qparam_step(&l->t[5]);
	q->wzt = l->t[5].dtype;
	if (a->flags & VNPU_LAYER_F_BIAS) {
		q->bias = (const __s32 *)l->data[8];
		q->bs = l->t[8].strides[0];
	}
}

static int run_qconv_packed(const struct eng_layer *l, __u64 ub, __u64 ue,
			    const struct vnpu_eng_ctx *ctx)
{
	const struct vnpu_layer_conv *a = l->attrs;
	const struct vnpu_cmd_tensor *y = &l->t[l->n - 1];
	struct eng_qconv q = { .l = l, .ctx = ctx };
	struct eng_qadd_arg qa;
	int res = a->flags & VNPU_LAYER_F_RESIDUAL;
	__u64 u, m;
	__u8 *sp = ctx->scratch;
	struct qconv_held *h = q_align(&sp, sizeof(*h));

	if (res) {
		qconv_residual_arg(l, &qa);
		q.res = &qa;
	}
	eng_conv_shape(l, &q.s);
	eng_qplan(&q.s, a, &q.p);
	qconv_params(&q);
	q.w = l->data[3];
	q.wsum = (const __s32 *)(q.w + q.s.group * q.p.mp * q.p.k4);
	q.flip = l->t[0].dtype == VNPU_DTYPE_I8 ? 0x80 : 0;
	q.xz = qzero(l, 2, 0) + (q.flip ? 128 : 0);
	q.yz = qzero(l, 7, 0);
	q.lo = y->dtype == VNPU_DTYPE_U8 ? 0 : -128;
	q.hi = y->dtype == VNPU_DTYPE_U8 ? 255 : 127;
	if (a->act.func == VNPU_ACT_RELU && q.yz > q.lo)
		q.lo = q.yz;
	if (!ctx->epoch || h->epoch != ctx->epoch || h->attrs != l->attrs) {
		h->epoch = ctx->epoch;
		h->attrs = l->attrs;
		h->key = ~0ull;
		h->need_xsum = 0;
		for (m = 0; m < q.s.m && !h->need_xsum; m++)
			h->need_xsum = qzero(l, 5, m) != 0;
	}
	q.need_xsum = h->need_xsum;
	q.direct = qconv_direct(&q);
#ifdef ENG_FMA
	q.wide = !(ctx->features & VNPU_ENG_F_VNNI);
	q.flat = qconv_flat(&q);
	q.phase = !q.flat && qconv_phase(&q);
#endif
	q.b = q_align(&sp, q.p.k4 * q.p.ncp);
	q.rows = q_align(&sp, 4 * q.p.rs);
	q.stage = q_align(&sp, (q.p.hp + 1) * q.p.wp);
	q.xsum = q_align(&sp, 4 * q.p.ncp);
	q.acc = q_align(&sp, 4 * ENG_QMR * ENG_QNR);
	q.b16 = q_align(&sp, 2 * q.p.k4 * q.p.ncp);
	q.w16 = q_align(&sp, 2 * ENG_QMR * q.p.k4);
	q.w8buf = (__s8 *)q.w16;
	q.x8buf = (struct qx8 *)(q.w8buf + ENG_QMR * q.p.k4);
	q.x8 = q.x8buf;
	q.nx8 = 0;
	q.tab = a->flags & VNPU_LAYER_F_SPLIT8 ?
		(const __u8 *)q.w + q.s.group * q.p.mp * (q.p.k4 + 4) : (const __u8 *)0;
	q.h = h;
	q.stage16 = q_align(&sp, 2 * ((q.p.hp + 1) * q.p.wp + 16));
	q.planes = q.p.np && !q.direct ?
		   q_align(&sp, ENG_QPLANES * q.p.np * q.p.pb) : (__u8 *)0;
	q.dw8 = q.wide && q.p.dw8 ? q_align(&sp, q.p.dw8) : (__u8 *)0;
	q.ph = q.phase ? q_align(&sp, q.p.ph) : (__u8 *)0;
	for (u = ub; u < ue; u++) {
		__u64 mbi = u % q.p.nmb, blk = u / q.p.nmb;
		__u64 nbi = blk % q.p.nb, g = blk / q.p.nb % q.s.group;
		__u64 img = blk / q.p.nb / q.s.group;

		if (eng_conv_depthwise(&q.s)) {
#ifdef ENG_FMA
			/* Units of a map whole in one block: u is img * group + g. */
			if (q.dw8 && u + 8 <= ue && g + 8 <= q.s.group) {
				qdw8_run(&q, img, g);
				u += 7;
				continue;
			}
#endif
			qconv_depthwise(&q, img, g, nbi);
			continue;
		}
		if (blk != h->key) {
#ifdef ENG_FMA
			if (q.flat)
				qconv_pack_flat(&q, img, g, nbi);
			else if (q.phase)
				qconv_pack_phase(&q, img, g, nbi);
#endif
			if (!q.flat && !q.phase && q.planes)
				qconv_pack_planes(&q, img, g, nbi);
			else if (!q.flat && !q.phase)
				qconv_pack(&q, img, g, nbi);
			h->key = blk;
			h->b16 = 0;
		}
		qconv_rows(&q, img, g, nbi, eng_qblock_m(&q.p, mbi),
			   eng_min(eng_qblock_m(&q.p, mbi + 1), q.s.mg));
	}
	return 0;
}

void eng_qout_layer(const struct eng_layer *l, struct eng_qadd_arg *qa,
		    struct eng_qout *o)
{
	const struct vnpu_layer_conv *a = l->attrs;
	const struct vnpu_cmd_tensor *y = &l->t[l->n - 1];
	__s32 yz = qzero(l, 7, 0), lo = y->dtype == VNPU_DTYPE_U8 ? 0 : -128;
	__s32 hi = y->dtype == VNPU_DTYPE_U8 ? 255 : 127;

	if (a->act.func == VNPU_ACT_RELU && yz > lo)
		lo = yz;
	*o = (struct eng_qout){ .ys = y->strides[1], .lo = (float)(lo - yz),
				.hi = (float)(hi - yz), .yz = yz };
	/* qconv_residual_arg()'s, which stays inlined in its one caller. */
	if (a->flags & VNPU_LAYER_F_RESIDUAL) {
		if (a->flags & VNPU_LAYER_F_RES_FIRST)
			qadd_params(l, l->n - 5, 6, l->n - 3, y->dtype, qa);
		else
			qadd_params(l, 6, l->n - 5, l->n - 3, y->dtype, qa);
		qa->first = !!(a->flags & VNPU_LAYER_F_RES_FIRST);
		o->res = qa;
	}
}

void eng_qout_rows(const struct eng_layer *l, __u64 m, __u32 rows,
		   struct eng_qout *o)
{
	const struct vnpu_layer_conv *a = l->attrs;
	struct eng_qconv q = { .l = l };
	__u32 r;

	/* qconv_params()'s, which stays inlined in its one caller. */
	q.xs = qscale(l, 1, 0);
	q.ys = qscale(l, 6, 0);
	q.ws = (const float *)l->data[4];
	q.wss = qparam_step(&l->t[4]);
	if (a->flags & VNPU_LAYER_F_BIAS) {
		q.bias = (const __s32 *)l->data[8];
		q.bs = l->t[8].strides[0];
	}
	for (r = 0; r < rows; r++) {
		o->fix[r] = (__s32)qconv_bias(&q, m + r);
		o->wz[r] = 0;
		o->mult[r] = qconv_mult(&q, m + r);
	}
	o->rows = rows;
	o->xsum = (const __s32 *)0;
}

int run_qlinear_conv(const struct eng_layer *l, __u64 ub, __u64 ue,
		     const struct vnpu_eng_ctx *ctx)
{
	const struct vnpu_layer_conv *a = l->attrs;

	if (a->flags & VNPU_LAYER_F_QWINO)
		return eng_qwino_run(l, ub, ue, ctx);
#ifdef ENG_FMA
	if (eng_qw4_fits(l, ctx->features))
		return eng_qw4_run(l, ub, ue, ctx);
#endif
	if (a->flags & VNPU_LAYER_F_PACKED)
		/* The GEMV reads W's rows whole: not SPLIT8's. */
		return eng_qgemv_fits(l) && !(a->flags & VNPU_LAYER_F_SPLIT8) ?
		       eng_qgemv_conv(l, ub, ue, ctx) :
		       run_qconv_packed(l, ub, ue, ctx);
	return run_qconv(l, ub, ue, ctx);
}

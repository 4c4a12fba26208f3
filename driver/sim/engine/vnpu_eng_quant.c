// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * 8-bit quantized ops: QuantizeLinear, DequantizeLinear, MatMulInteger,
 * QLinearMatMul and QLinearConv. Included by the kernel builds, never
 * compiled on its own. Sums are exact 32-bit integers; requantization is in
 * f32 with round half to even, as ONNX Runtime does.
 */

static __s32 ld_q(const void *base, __s64 off, __u32 dtype)
{
	if (dtype == VNPU_DTYPE_U8)
		return ((const __u8 *)base)[off];
	if (dtype == VNPU_DTYPE_I8)
		return ((const __s8 *)base)[off];
	return ((const __s32 *)base)[off];
}

/* A per-tensor or per-index parameter of a quantized op. */
static __s64 qparam_off(const struct vnpu_tensor *p, __u64 i)
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

static int run_quant(const struct eng_layer *l, __u64 ub, __u64 ue,
		     const struct vnpu_eng_ctx *ctx)
{
	const struct vnpu_layer_quant *at = l->attrs;
	const struct vnpu_tensor *x = &l->t[0], *y = &l->t[3];
	__u64 coord[VNPU_MAX_DIMS] = {}, lo, hi, e;

	elem_range(y, ub, ue, &lo, &hi);
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

/* The exact sum of row @m of A times column @n of B, zero points off. */
static __s32 qdot(const void *a, const struct vnpu_tensor *ta, __s64 ao,
		  __s32 az, const void *b, const struct vnpu_tensor *tb,
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
	const struct vnpu_tensor *ta = &l->t[0], *tb = &l->t[ib];
	const struct vnpu_tensor *y = &l->t[l->n - 1];
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

static int run_qmatmul(const struct eng_layer *l, __u64 ub, __u64 ue,
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
	const struct vnpu_tensor *x = &l->t[0], *w = &l->t[3];
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
	const struct vnpu_tensor *y = &l->t[l->n - 1];
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

				if (at->flags & VNPU_LAYER_F_BIAS)
					acc = (__u32)((const __s32 *)l->data[8])
						[(__s64)m * l->t[8].strides[0]];
				acc += qconv_window(l, &s, img, m, oh, ow);
				st_q(l->data[l->n - 1], yo + (__s64)ow, y->dtype,
				     m_rint((double)((float)(__s32)acc * mult)) +
				     yz);
			}
		}
	}
	return 0;
}

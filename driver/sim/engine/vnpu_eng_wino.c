// SPDX-License-Identifier: GPL-2.0 OR MIT
/**
 * DOC: Winograd convolution
 *
 * Stride-1 3x3 convolutions as Winograd F(4x4, 3x3) (CONV layers of
 * %VNPU_LAYER_F_WINO, which the compiler sets by shape): each 4x4 tile of
 * outputs of a channel is A^T M A, where the 6x6 M is, point by point,
 * the sum over input channels of the transformed weights U = G g G^T
 * times the transformed input tile V = B^T d B. U comes with the layer
 * (%VNPU_PACK_WINO_W): the runtime transformed it once at compile time
 * with wino_pack_u() below, so the device and the CPU read the same bits.
 * A unit of tiles is 36 GEMMs (one per point) of the output channels by
 * the tiles, of depth C, run by the GEMM's blocks and micro-kernels,
 * between an input and an output transform; the output rows then take
 * the GEMM's epilogue. The
 * transforms are fixed sequences of float adds, subtractions and
 * multiplies (no fused multiply-add) on eight lanes, and each GEMM sums
 * in depth order, so every path gives the same bits whatever the split.
 * Built per ISA, on vnpu_eng_gemm.c's blocks (vnpu_eng_gemm_kern.h).
 */
#include "vnpu_eng_gemm_kern.h"

/*
 * The weights' transform along one axis on eight lanes: three vectors at
 * @g, @gs floats apart, to six at @o, @os apart; G's rows (1/4, 0, 0),
 * -(1, 1, 1)/6, -(1, -1, 1)/6, (1, 2, 4)/24, (1, -2, 4)/24, (0, 0, 1).
 */
static void wino_g(const float *g, __u32 gs, float *o, __u32 os)
{
	v8sf g0 = vload(g), g1 = vload(g + gs), g2 = vload(g + 2 * gs);
	v8sf s = g0 + g2, p = g0 + g2 * 4.0f, q = g1 * 2.0f;

	vstore(o, g0 * 0.25f);
	vstore(o + os, (s + g1) * (-1.0f / 6));
	vstore(o + 2 * os, (s - g1) * (-1.0f / 6));
	vstore(o + 3 * os, (p + q) * (1.0f / 24));
	vstore(o + 4 * os, (p - q) * (1.0f / 24));
	vstore(o + 5 * os, g2);
}

/*
 * The input's transform along one axis on eight lanes, in place over six
 * vectors @ds floats apart: B^T's rows (4, 0, -5, 0, 1, 0),
 * (0, -4, -4, 1, 1, 0), (0, 4, -4, -1, 1, 0), (0, -2, -1, 2, 1, 0),
 * (0, 2, -1, -2, 1, 0), (0, 4, 0, -5, 0, 1).
 */
static void wino_bt(float *p, __u32 ds)
{
	v8sf d0 = vload(p), d1 = vload(p + ds), d2 = vload(p + 2 * ds);
	v8sf d3 = vload(p + 3 * ds), d4 = vload(p + 4 * ds);
	v8sf d5 = vload(p + 5 * ds);
	v8sf a = d4 - d2 * 4.0f, b = d3 - d1 * 4.0f;
	v8sf c = d4 - d2, e = (d3 - d1) * 2.0f;

	vstore(p, (d0 * 4.0f - d2 * 5.0f) + d4);
	vstore(p + ds, a + b);
	vstore(p + 2 * ds, a - b);
	vstore(p + 3 * ds, c + e);
	vstore(p + 4 * ds, c - e);
	vstore(p + 5 * ds, (d1 * 4.0f - d3 * 5.0f) + d5);
}

/* Copies @n floats of each point from @buf (ENG_WINO_BUF apart) to @o. */
static void wino_spread(const float *buf, __u64 n, float *o, __u64 os)
{
	__u64 xi;

	for (xi = 0; xi < ENG_WINO_XI; xi++)
		copy_f32(o + xi * os, buf + xi * ENG_WINO_BUF, n);
}

/*
 * U = G g G^T of the 3x3 kernels at @src (@groups groups of @rows output
 * channels by @cg input channels, dense, row-major) in %VNPU_PACK_WINO_W
 * at @dst, eight (channel, row) pairs a step in the order of the points'
 * panels: the compiler's transform (vnpu_eng_wino_pack(); the host calls
 * it, vnpu.ko never does).
 */
int wino_pack_u(const float *src, __u64 groups, __u64 rows, __u64 cg,
		float *dst)
{
	__u64 n = eng_div_up(rows, ENG_MR) * ENG_MR * cg, g, k0, k, m, c, i, j;
	float g9[9 * 8], t[18 * 8], u[6 * 8];
	const float *p;
	__u32 lane;

	for (g = 0; g < groups; g++)
		for (k0 = 0; k0 < n; k0 += 8) {
			for (lane = 0; lane < 8; lane++) {
				k = k0 + lane;
				m = k / (cg * ENG_MR) * ENG_MR + k % ENG_MR;
				c = k / ENG_MR % cg;
				p = src + ((g * rows + m) * cg + c) * 9;
				for (i = 0; i < 9; i++)
					g9[i * 8 + lane] = k < n && m < rows ?
							   p[i] : 0.0f;
			}
			/* Down the columns, then along the rows. */
			for (i = 0; i < 3; i++)
				wino_g(g9 + i * 8, 3 * 8, t + i * 8, 3 * 8);
			for (i = 0; i < 6; i++) {
				wino_g(t + i * 3 * 8, 8, u, 8);
				for (j = 0; j < 6; j++)
					for (lane = 0; lane < 8 && k0 + lane < n;
					     lane++)
						dst[(g * ENG_WINO_XI + i * 6 + j) *
						    n + k0 + lane] = u[j * 8 + lane];
			}
		}
	return 0;
}

/*
 * The 6x6 input tile of tile @t of channel @c of the image at @x into
 * lane @lane of wp->d (point (r, k) at d[(r * 6 + k) * ENG_NR]), zero
 * outside the input.
 */
static void wino_gather(const struct wino_part *wp, const float *x,
			const __s64 *xs, __u64 t, __u32 lane)
{
	float *d = wp->d + lane;
	__s64 y0, x0, r, k, r0, r1, k0, k1;

	wino_origin(wp, t, &y0, &x0);
	if (y0 >= 0 && x0 >= 0 && y0 + 6 <= (__s64)wp->s.h &&
	    x0 + 6 <= (__s64)wp->s.w && xs[2] == 1) {
		const float *row = x + y0 * xs[1] + x0;

		for (r = 0; r < 6; r++, row += xs[1])
			for (k = 0; k < 6; k++)
				d[(r * 6 + k) * ENG_NR] = row[k];
		return;
	}
	/* Zeros, then the rows and columns inside X (a short map's all). */
	for (r = 0; r < 36; r++)
		d[r * ENG_NR] = 0.0f;
	r0 = y0 < 0 ? -y0 : 0;
	r1 = eng_min(6, (__s64)wp->s.h - y0);
	k0 = x0 < 0 ? -x0 : 0;
	k1 = eng_min(6, (__s64)wp->s.w - x0);
	for (r = r0; r < r1; r++)
		for (k = k0; k < k1; k++)
			d[(r * 6 + k) * ENG_NR] = x[(y0 + r) * xs[1] +
						    (x0 + k) * xs[2]];
}

#ifdef ENG_FMA
/*
 * The gathers of panel @p of the unit's tiles as vnpu_eng_wino_in_avx512()
 * and vnpu_eng_wino2_in_bf16() take them, but for @w->v, @w->ps and
 * @w->cn (each kind's); 0 where an input's offset does not fit their
 * 32-bit indices.
 */
int wino_part_in16(const struct wino_part *wp, __u64 p, struct eng_wino_in *w)
{
	const __s64 lim = 0x7fffffff / 2, *xs = wp->xs;
	__u32 lane, i, nh = (__u32)wp->s.wh + 2, nw = (__u32)wp->s.ww + 2;

	/* |off + r * rs + k * ks| < 2^31 for every tile and point. */
	if (xs[1] > lim / (__s64)(wp->s.h + 8) ||
	    xs[1] < -lim / (__s64)(wp->s.h + 8) ||
	    xs[2] > lim / (__s64)(wp->s.w + 8) ||
	    xs[2] < -lim / (__s64)(wp->s.w + 8))
		return 0;
	w->x = wp->x;
	w->cs = xs[0];
	w->rs = (__s32)xs[1];
	w->ks = (__s32)xs[2];
	w->d = wp->d;
	for (i = 0; i < 6; i++) {
		w->rmask[i] = 0;
		w->kmask[i] = 0;
	}
	for (lane = 0; lane < ENG_NR; lane++) {
		__u64 t = wp->t0 + p * ENG_NR + lane;
		__s64 y0, x0;

		w->off[lane] = 0;
		if (t >= wp->t1)
			continue;
		wino_origin(wp, t, &y0, &x0);
		w->off[lane] = (__s32)(y0 * xs[1] + x0 * xs[2]);
		for (i = 0; i < nh; i++)
			if (y0 + i >= 0 && y0 + i < (__s64)wp->s.h)
				w->rmask[i] |= 1u << lane;
		for (i = 0; i < nw; i++)
			if (x0 + i >= 0 && x0 + i < (__s64)wp->s.w)
				w->kmask[i] |= 1u << lane;
	}
	return 1;
}
#endif

#ifdef ENG_FMA
/* wino_bt() over six vectors in registers: the same operations. */
static __attribute__((__always_inline__)) inline void wino_bt8(v8sf *t)
{
	v8sf d0 = t[0], d1 = t[1], d2 = t[2], d3 = t[3], d4 = t[4];
	v8sf d5 = t[5];
	v8sf a = d4 - d2 * 4.0f, b = d3 - d1 * 4.0f;
	v8sf c = d4 - d2, e = (d3 - d1) * 2.0f;

	t[0] = (d0 * 4.0f - d2 * 5.0f) + d4;
	t[1] = a + b;
	t[2] = a - b;
	t[3] = c + e;
	t[4] = c - e;
	t[5] = (d1 * 4.0f - d3 * 5.0f) + d5;
}

/*
 * Row k of eight neighbouring 6x6 tiles whose rows start four floats
 * apart at @p, for k = 0..5: lane l of @v[k] is @p[4 l + k]. The eight
 * tiles' first four columns are a 4x8 transpose of @p[0..31] (the
 * halves' swap, then in-lane interleaves), the last two those of the
 * next tile (one lane on).
 */
static __attribute__((__always_inline__)) inline
void wino_deint(const float *p, v8sf *v)
{
	v8sf a0 = vload(p), a1 = vload(p + 8), a2 = vload(p + 16);
	v8sf a3 = vload(p + 24);
	v8sf b0 = __builtin_shufflevector(a0, a2, 0, 1, 2, 3, 8, 9, 10, 11);
	v8sf b1 = __builtin_shufflevector(a0, a2, 4, 5, 6, 7, 12, 13, 14, 15);
	v8sf b2 = __builtin_shufflevector(a1, a3, 0, 1, 2, 3, 8, 9, 10, 11);
	v8sf b3 = __builtin_shufflevector(a1, a3, 4, 5, 6, 7, 12, 13, 14, 15);
	v8sf u0 = __builtin_shufflevector(b0, b1, 0, 8, 1, 9, 4, 12, 5, 13);
	v8sf u1 = __builtin_shufflevector(b0, b1, 2, 10, 3, 11, 6, 14, 7, 15);
	v8sf u2 = __builtin_shufflevector(b2, b3, 0, 8, 1, 9, 4, 12, 5, 13);
	v8sf u3 = __builtin_shufflevector(b2, b3, 2, 10, 3, 11, 6, 14, 7, 15);

	v[0] = __builtin_shufflevector(u0, u2, 0, 1, 8, 9, 4, 5, 12, 13);
	v[1] = __builtin_shufflevector(u0, u2, 2, 3, 10, 11, 6, 7, 14, 15);
	v[2] = __builtin_shufflevector(u1, u3, 0, 1, 8, 9, 4, 5, 12, 13);
	v[3] = __builtin_shufflevector(u1, u3, 2, 3, 10, 11, 6, 7, 14, 15);
	v[4] = __builtin_shufflevector(v[0], vbcast(p[32]), 1, 2, 3, 4, 5, 6,
				       7, 8);
	v[5] = __builtin_shufflevector(v[1], vbcast(p[33]), 1, 2, 3, 4, 5, 6,
				       7, 8);
}

/* Floats of a row of wino_in_rows()'s copy before padded column 0. */
#define WINO_ROW_LEAD	32

/*
 * Whether the copy of a panel's input rows fits wp->tail and the tiles
 * are F(4x4)'s over dense rows (wino_in_rows()): its rows, their floats.
 */
static int wino_rows_fit(const struct wino_part *wp, __u64 p, __u64 *nr,
			 __u64 *rw)
{
	__u64 ta = wp->t0 + p * ENG_NR;
	__u64 tb = eng_min(ta + ENG_NR, wp->t1) - 1;

	*nr = 4 * (tb / wp->tw - ta / wp->tw) + 6;
	*rw = eng_div_up(WINO_ROW_LEAD + 4 * wp->tw + 32, 8) * 8;
	return wp->s.wh == 4 && wp->s.ww == 4 && wp->xs[2] == 1 &&
	       *nr * *rw <= ENG_WINO_XI * ENG_WINO_BUF;
}

/*
 * V = B^T d B of panel @p of the unit's tiles on AVX2, channel after
 * channel: the input rows its tiles read are copied zero-padded to
 * wp->tail (@nr rows of @rw floats; padded column j at WINO_ROW_LEAD +
 * j), where the tiles of each tile row are runs four floats apart, so
 * each row of eight tiles' inputs is four loads and a transpose
 * (wino_deint()), lanes of other tile rows and past the run taken from
 * their own run or zero; each row is then transformed in registers, then
 * down the columns straight to V, half a panel at a time (the points'
 * lines lie in different L1 sets, wp->vs, so a point's line stays in L1
 * between its halves). The same values and operations as
 * wino_gather()'s scalar path: the same bits.
 */
static void wino_in_rows(struct wino_part *wp, const float *x,
			 const __s64 *xs, __u64 p, __u64 nr, __u64 rw,
			 float *vp, __u64 ps)
{
	const struct vnpu_layer_conv *a = wp->l->attrs;
	const v8si iota = { 0, 1, 2, 3, 4, 5, 6, 7 };
	__u64 ta = wp->t0 + p * ENG_NR, tn = eng_min(ENG_NR, wp->t1 - ta);
	__u64 ty0 = ta / wp->tw, c, j;
	__s64 y0 = (__s64)(ty0 * 4) - a->pad_begin[0];
	__u64 lo = a->pad_begin[1], n = wp->s.w;
	struct wino_seg sg[2][8];
	int ns[2], h, r, k, e;
	v8sf rt[36];
	float *buf = wp->tail;

	wino_segs(wp, ta, tn, rw, WINO_ROW_LEAD, sg, ns);
	/* The copy's padding: zeros, which no channel's copy overwrites. */
	zero_f32(buf, nr * rw);
	for (c = 0; c < wp->s.cg; c++) {
		const float *xc = x + (__s64)c * xs[0];
		float *v = vp + c * ENG_NR;

		for (j = 0; j < nr; j++)
			if (y0 + (__s64)j >= 0 && y0 + (__s64)j < (__s64)wp->s.h)
				copy_f32(buf + j * rw + WINO_ROW_LEAD + lo,
					 xc + (y0 + (__s64)j) * xs[1], n);
		for (h = 0; h < 2; h++) {
			for (r = 0; r < 6; r++) {
				v8sf t[6] = {}, u[6];

				for (e = 0; e < ns[h]; e++) {
					v8si m = (iota >= sg[h][e].lo) &
						 (iota < sg[h][e].hi);

					wino_deint(buf + sg[h][e].at +
						   (__u64)r * rw, u);
					for (k = 0; k < 6; k++)
						t[k] = (v8sf)(((v8si)u[k] & m) |
							      ((v8si)t[k] & ~m));
				}
				wino_bt8(t);
				for (k = 0; k < 6; k++)
					rt[r * 6 + k] = t[k];
			}
			for (k = 0; k < 6; k++) {
				v8sf t[6];

				for (r = 0; r < 6; r++)
					t[r] = rt[r * 6 + k];
				wino_bt8(t);
				for (r = 0; r < 6; r++)
					vstore(v + (r * 6 + k) * ps + h * 8,
					       t[r]);
			}
		}
	}
}
#endif

/*
 * V = B^T d B of tiles [@t0, @t1) of the image at @x (channel stride,
 * row stride, column stride in @xs), all channels of the group, in the
 * GEMMs' panels (tiles past @t1 zero): on the AVX-512 path a panel at a
 * time in sixteen lanes, each point a gather; on AVX2 from a copy of the
 * panel's rows (wino_in_rows()) where it fits.
 */
static __attribute__((__noinline__))
void wino_input(struct wino_part *wp, const float *x, const __s64 *xs,
		__u64 t0, __u64 t1, const struct vnpu_eng_ctx *ctx)
{
	__u64 cg = wp->s.cg, ps = wp->vs, p, c0, cn, c, i, h;
	__u32 lane;

	for (p = 0; t0 + p * ENG_NR < t1; p++) {
#ifdef ENG_FMA
		struct eng_wino_in w;
		__u64 nr, rw;

		if (wp->bufs.avx512 && wino_part_in16(wp, p, &w)) {
			w.ps = ps;
			w.v = wp->v + p * cg * ENG_NR;
			w.cn = cg;
			vnpu_eng_wino_in_avx512(&w);
			eng_pause(ctx);
			continue;
		}
		if (!wp->bufs.avx512 && wino_rows_fit(wp, p, &nr, &rw)) {
			wino_in_rows(wp, x, xs, p, nr, rw,
				     wp->v + p * cg * ENG_NR, ps);
			eng_pause(ctx);
			continue;
		}
#endif
		for (c0 = 0; c0 < cg; c0 += cn) {
			cn = eng_min(ENG_WINO_BUF / ENG_NR, cg - c0);
			for (c = 0; c < cn; c++) {
				float *o = wp->tail + c * ENG_NR;

				for (lane = 0; lane < ENG_NR; lane++) {
					__u64 t = t0 + p * ENG_NR + lane;

					if (t < t1) {
						wino_gather(wp, x + (__s64)(c0 + c) *
							    xs[0], xs, t, lane);
						continue;
					}
					for (i = 0; i < 36; i++)
						wp->d[i * ENG_NR + lane] = 0.0f;
				}
				/* Along the rows, then down the columns. */
				for (h = 0; h < ENG_NR; h += 8) {
					for (i = 0; i < 6; i++)
						wino_bt(wp->d + i * 6 * ENG_NR + h,
							ENG_NR);
					for (i = 0; i < 6; i++)
						wino_bt(wp->d + i * ENG_NR + h,
							6 * ENG_NR);
					for (i = 0; i < 36; i++)
						vstore(o + i * ENG_WINO_BUF + h,
						       vload(wp->d + i * ENG_NR + h));
				}
			}
			wino_spread(wp->tail, cn * ENG_NR,
				    wp->v + p * cg * ENG_NR + c0 * ENG_NR, ps);
		}
		eng_pause(ctx);
	}
}

/* Point @xi's U, from row @m0 on, and the next point's to fetch. */
static int wino_point(struct wino_part *wp, struct gemm_a *a, __u64 xi,
		      __u64 m0, __u64 mc, __u64 nt,
		      const struct vnpu_eng_ctx *ctx)
{
	a->packed = (const float *)wp->l->data[1] +
		    (wp->g * ENG_WINO_XI + xi) * wp->ws + m0 * wp->s.cg;
	a->next = xi + 1 < ENG_WINO_XI ? a->packed + wp->ws : 0;
	return 0;
}

/*
 * The products M = U V, point by point (36, or F(2x2)'s 16), of rows
 * [@m0, @m0 + @mc) of the group by tiles [0, @nt), M's row r for row
 * @m0 + r, each point's left operand @k's. V's tiles past @nt are zeros
 * up to the panel's end: the GEMMs run whole panels (M has the room),
 * but for one to four tiles past them on the AVX-512 path, which its
 * tail columns take for about a twelfth of a panel's FMAs (tail_cols():
 * the same sums). M's columns past @nt then hold what they held, which
 * the output transform reads and wino_flush() drops.
 */
static __attribute__((__noinline__))
void wino_gemms(struct wino_part *wp, const struct wino_kind *k, __u64 m0,
		__u64 mc, __u64 nt, const struct vnpu_eng_ctx *ctx)
{
	static const struct vnpu_layer_act none = { .func = VNPU_ACT_IDENTITY };
	struct gemm_epi e = { .alpha = 1.0f, .beta = 1.0f, .act = &none };
	struct gemm_out o = { .dt = VNPU_DTYPE_F32, .rs = (__s64)wp->u.cols };
	struct gemm_a a = { .k = wp->s.cg };
	struct gemm_b b = { .k = wp->s.cg, .n = nt };
	__u64 xn = eng_wino_xi(&wp->s), xi, nc = nt;

	e.avx512 = eng_act_avx512(ctx);
	if (!wp->bufs.avx512 || nt % ENG_NR > ENG_TAIL_COLS)
		nc = eng_div_up(nt, ENG_NR) * ENG_NR;
	for (xi = 0; xi < xn; xi++) {
		if (!k->point(wp, &a, xi, m0, mc, nt, ctx)) {
			b.packed = wp->v + xi * wp->vs;
			o.y = wp->m + xi * wp->u.rows * wp->u.cols;
			gemm_block(&a, &b, 0, mc, 0, nc, wp->s.cg, &o, &e,
				   &wp->bufs);
		}
		eng_pause(ctx);
	}
}

/*
 * The outputs' transform along one axis on eight lanes, in registers:
 * six vectors @m[0], @m[@ms], ..., @m[5 * @ms] to four at @o[0], @o[@os],
 * ...; A^T's rows (1, 1, 1, 1, 1, 0), (0, 1, -1, 2, -2, 0),
 * (0, 1, 1, 4, 4, 0), (0, 1, -1, 8, -8, 1).
 */
static inline void wino_at(const v8sf *m, int ms, v8sf *o, int os)
{
	v8sf a = m[ms] + m[2 * ms], b = m[ms] - m[2 * ms];
	v8sf c = m[3 * ms] + m[4 * ms], d = m[3 * ms] - m[4 * ms];

	o[0] = (m[0] + a) + c;
	o[os] = b + d * 2.0f;
	o[2 * os] = a + c * 4.0f;
	o[3 * os] = (b + d * 8.0f) + m[5 * ms];
}

/*
 * The four columns @y[0..3] of one output row of eight tiles to the
 * row's 32 outputs at @st, tile after tile (lane l's four at @st + 4 l):
 * a 4x8 transpose, in-lane interleaves and then the halves' swap.
 */
static inline void wino_row_out(const v8sf *y, float *st)
{
	v8sf u0 = __builtin_shufflevector(y[0], y[1], 0, 8, 1, 9, 4, 12, 5, 13);
	v8sf u1 = __builtin_shufflevector(y[0], y[1], 2, 10, 3, 11, 6, 14, 7,
					  15);
	v8sf v0 = __builtin_shufflevector(y[2], y[3], 0, 8, 1, 9, 4, 12, 5, 13);
	v8sf v1 = __builtin_shufflevector(y[2], y[3], 2, 10, 3, 11, 6, 14, 7,
					  15);
	v8sf w0 = __builtin_shufflevector(u0, v0, 0, 1, 8, 9, 4, 5, 12, 13);
	v8sf w1 = __builtin_shufflevector(u0, v0, 2, 3, 10, 11, 6, 7, 14, 15);
	v8sf w2 = __builtin_shufflevector(u1, v1, 0, 1, 8, 9, 4, 5, 12, 13);
	v8sf w3 = __builtin_shufflevector(u1, v1, 2, 3, 10, 11, 6, 7, 14, 15);

	vstore(st, __builtin_shufflevector(w0, w1, 0, 1, 2, 3, 8, 9, 10, 11));
	vstore(st + 8, __builtin_shufflevector(w2, w3, 0, 1, 2, 3, 8, 9, 10,
					       11));
	vstore(st + 16, __builtin_shufflevector(w0, w1, 4, 5, 6, 7, 12, 13, 14,
						15));
	vstore(st + 24, __builtin_shufflevector(w2, w3, 4, 5, 6, 7, 12, 13, 14,
						15));
}

/*
 * Y = A^T M A of rows [0, @mc) by tiles [0, @nt) into the stage, eight
 * tiles a vector (M has whole panels of them, the stage their room): down
 * the columns of M, then along the rows, each output row of the tiles
 * then transposed into the stage's run of that row, all in registers.
 */
static __attribute__((__noinline__))
void wino_output(struct wino_part *wp, __u64 mc, __u64 nt)
{
	__u64 cols = wp->u.cols, ps = wp->u.rows * cols, r, t;
	const float *m0 = wp->m;
	float *s0 = wp->stage;
	int b, i;

	for (r = 0; r < mc; r++)
		for (t = 0; t < nt; t += 8) {
			const float *p = m0 + r * cols + t;
			float *st = s0 + r * 16 * cols + 4 * t;
			v8sf m[6], q[24], y[4];

			for (b = 0; b < 6; b++) {
				for (i = 0; i < 6; i++)
					m[i] = vload(p + (i * 6 + b) * ps);
				wino_at(m, 1, q + b, 6);
			}
			for (i = 0; i < 4; i++) {
				wino_at(q + i * 6, 1, y, 1);
				wino_row_out(y, st + i * 4 * cols);
			}
		}
}

/*
 * The stage's rows of the unit (output channels @wp->m0 on) of its tiles
 * through the layer's epilogue: each tile row's run of outputs, cut at
 * the output's right and bottom edges.
 */
static const struct vnpu_layer_act wino_copy = { .func = VNPU_ACT_IDENTITY };

static __attribute__((__noinline__))
void wino_flush(const struct wino_part *wp, const struct vnpu_eng_ctx *ctx)
{
	__u64 wh = wp->s.wh, ww = wp->s.ww, cols = wp->u.cols, t0 = wp->t0;
	__u64 t1 = wp->t1;
	struct gemm_flush f = { .acc = wp->stage, .acc_rs = wh * ww * cols,
				.m0 = wp->m0 };
	struct gemm_out o = {};
	struct gemm_epi e;
	float add[ENG_MC];
	__u64 r, tr, i, a, b, oy, ox;
	int has_add = 0;

	conv_epi(wp->l, wp->img, wp->g, &e, &o);
	e.avx512 = eng_act_avx512(ctx);
	/* bf16 Winograd on the AVX512-BF16 tiles: SiLU at bf16's grade. */
	if (wp->bufs.bf16)
		e.avx512 = ENG_ACT_BF16;
	f.plain = epi_plain(&o, &e, wp->m0, wp->mc, add, &has_add);
	f.add = has_add ? add : 0;
	f.act = e.act;
	/* The output step took the add and the activation (wino2_staged()). */
	if (wp->staged) {
		f.add = 0;
		f.act = &wino_copy;
	}
	for (r = 0; r < wp->mc; r++)
		for (tr = t0 / wp->tw; tr * wp->tw < t1; tr++) {
			a = eng_max(t0, tr * wp->tw);
			b = eng_min(t1, (tr + 1) * wp->tw);
			ox = (a - tr * wp->tw) * ww;
			for (i = 0; i < wh; i++) {
				oy = tr * wh + i;
				if (oy >= wp->s.oh)
					break;
				flush_seg(&o, &e, &f, r,
					  i * ww * cols + ww * (a - t0),
					  oy * wp->s.ow + ox,
					  (__u32)eng_min(ww * (b - a),
							 wp->s.ow - ox));
			}
		}
}

/*
 * Sets up a Winograd part of either kind (@l's flag decides): its shape,
 * units and input's strides, and its scratch split as eng_wino_scratch()
 * sized it; what the scratch held is forgotten for another layer or
 * command run.
 */
void wino_part_start(struct wino_part *wp, const struct eng_layer *l,
		     const struct vnpu_eng_ctx *ctx)
{
	__u64 cg, rows, cols, xi, i;
	float *p = eng_align(ctx->scratch);

	wp->l = l;
	eng_conv_shape(l, &wp->s);
	eng_wino_unit(&wp->s, ctx->features, &wp->u);
	cg = wp->s.cg;
	rows = wp->u.rows;
	cols = wp->u.cols;
	xi = eng_wino_xi(&wp->s);
	wp->tw = eng_div_up(wp->s.ow, wp->s.ww);
	wp->tiles = eng_wino_tiles(&wp->s);
	wp->ws = eng_div_up(wp->s.mg, ENG_MR) * ENG_MR * cg;
	wp->vs = cg * cols + ENG_WINO_VPAD;
	for (i = 0; i < 3; i++)
		wp->xs[i] = l->t[0].strides[i + 1];
	wp->held = (struct wino_held *)p;
	p = eng_align(p + ENG_ALIGN / 4);
	wp->v = p;
	p = eng_align(p + xi * wp->vs);
	wp->m = p;
	p = eng_align(p + xi * rows * cols);
	wp->stage = p;
	p = eng_align(p + rows * wp->s.wh * wp->s.ww * cols);
	wp->bufs.acc = p;
	p = eng_align(p + ENG_MC * eng_acc_rs(cols));
	wp->d = p;
	p = eng_align(p + ENG_WINO_XI * ENG_NR);
	wp->tail = p;
	wp->bufs.a = 0;
	wp->bufs.b = 0;
	wp->bufs.bf16 = 0;
	wp->bufs.ctx = ctx;
	wp->staged = 0;
#ifdef ENG_FMA
	wp->bufs.avx512 = !!(ctx->features & VNPU_ENG_F_AVX512);
#else
	wp->bufs.avx512 = 0;
#endif
	if (!ctx->epoch || wp->held->epoch != ctx->epoch ||
	    wp->held->attrs != l->attrs) {
		wp->held->epoch = ctx->epoch;
		wp->held->attrs = l->attrs;
		wp->held->run = ~0ull;
	}
}

/*
 * Units [@ub, @ue) of the part @wp: @k's transforms and GEMMs, then the
 * epilogue. The blocks of rows of one run of tiles follow each other:
 * the parts on one scratch transform that run's input once.
 */
void wino_part_run(struct wino_part *wp, __u64 ub, __u64 ue,
		   const struct wino_kind *k, const struct vnpu_eng_ctx *ctx)
{
	const struct vnpu_cmd_tensor *x = &wp->l->t[0];
	__u64 ntb = eng_div_up(wp->tiles, wp->u.cols);
	__u64 mb = eng_div_up(wp->s.mg, wp->u.rows), u, ti, mi;
	/*
	 * Even blocks of rows for an even count (an odd one keeps whole
	 * blocks and a short last one, as eng_wino_balance() chose them).
	 */
	__u64 step = mb % 2 ? wp->u.rows : eng_unit_step(wp->u.rows);

	for (u = ub; u < ue; u++) {
		mi = u % mb;
		ti = eng_wino_run((u / mb) % ntb, ntb);
		wp->img = (u / (mb * ntb)) % wp->s.n;
		wp->g = u / (mb * ntb * wp->s.n);
		wp->t0 = ti * wp->u.cols;
		wp->t1 = eng_min(wp->t0 + wp->u.cols, wp->tiles);
		wp->m0 = eng_even_at(mi, mb, wp->s.mg, step);
		wp->mc = eng_even_at(mi + 1, mb, wp->s.mg, step) - wp->m0;
		wp->x = (const float *)wp->l->data[0] +
			(__s64)wp->img * x->strides[0] +
			(__s64)(wp->g * wp->s.cg) * x->strides[1];
		wp->fresh = u / mb != wp->held->run;
		wp->held->run = u / mb;
		if (wp->fresh)
			k->input(wp, wp->x, wp->xs, wp->t0, wp->t1, ctx);
		wino_gemms(wp, k, wp->m0, wp->mc, wp->t1 - wp->t0, ctx);
		k->output(wp, wp->mc, wp->t1 - wp->t0);
		wino_flush(wp, ctx);
	}
}

int run_conv_wino(const struct eng_layer *l, __u64 ub, __u64 ue,
		  const struct vnpu_eng_ctx *ctx)
{
	static const struct wino_kind f4 = {
		.input = wino_input, .point = wino_point, .output = wino_output,
	};
	struct wino_part wp;

	wino_part_start(&wp, l, ctx);
	wino_part_run(&wp, ub, ue, &f4, ctx);
	return 0;
}

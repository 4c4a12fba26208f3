// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * LSTM: a direction's whole recurrence in one part, so that a step costs
 * no command of its own and the direction's recurrent weights stay in the
 * cache of the CPU that runs it. Each step is the GEMM of the unrolled
 * form (run_gemm() on a one-row layer: H_prev by the packed panels, XW's
 * row as the residual) and the two CHAIN layers' functions and products
 * in the same order, so the same bits. Built per ISA (vnpu_eng_isa.h).
 */
#include "vnpu_eng_kern.h"
#include "vnpu_eng_gemm.h"

/*
 * The element-wise half of a step on the gates @gt [4H] (i, o, f, c; their
 * functions applied in place): C = f(Gf) * C + f(Gi) * g(Gc), then
 * H = f(Go) * h(C) into @y and @hs, @tmp holding h(C).
 */
static void lstm_cell(const struct vnpu_layer_lstm *a, float *gt, float *c,
		      float *tmp, float *y, float *hs, __u64 h, int avx512)
{
	__u64 j;

	act_f32(&a->f, gt, gt, 3 * h, avx512);
	act_f32(&a->g, gt + 3 * h, gt + 3 * h, h, avx512);
	for (j = 0; j < h; j++) {
		float fc = gt[2 * h + j] * c[j];
		float ig = gt[j] * gt[3 * h + j];

		c[j] = fc + ig;
	}
	act_f32(&a->h, c, tmp, h, avx512);
	for (j = 0; j < h; j++) {
		float v = gt[h + j] * tmp[j];

		y[j] = v;
		hs[j] = v;
	}
}

static void lstm_copy(float *dst, const float *src, __u64 n)
{
	__u64 i;

	for (i = 0; dst != src && i < n; i++)
		dst[i] = src[i];
}

/* One direction's gates: the GEMM, or the mat-vec over regrouped panels. */
struct lstm_dir {
	struct eng_layer gl;
	void *data[4];
	const struct vnpu_eng_ctx *gctx;
	__u64 units;
	struct eng_bf16_wide w;	/* with @w.b: the AVX512-BF16 path */
	__u32 *wide;		/* @w.b, written once per direction */
	__u32 *row;		/* H_prev as bf16 pairs there */
};

#ifdef ENG_FMA
/*
 * A direction's bf16 panels (VNPU_PACK_GEMM_B in depth pairs, @kt deep,
 * @np of them) at @src regrouped as struct eng_bf16_wide's @b at @dst.
 */
static void lstm_regroup(const __u32 *src, __u64 kt, __u64 np, __u32 *dst)
{
	/* A pair row of a panel, 64 bytes, in two vector copies. */
	typedef __u32 half_row __attribute__((vector_size(32), aligned(4),
					       may_alias));
	__u64 ps = kt * ENG_NR / 2, np2 = kt / 2, g, nq, q, p, j;

	for (g = 0; g < np; g += nq, dst += nq * ps) {
		nq = eng_min(np - g, ENG_BF16_WIDE);
		for (q = 0; q < nq; q++) {
			const __u32 *s = src + (g + q) * ps;

			for (p = 0; p < np2 * 2; p++)
				*(half_row *)(dst + (p / 2 * nq + q) * ENG_NR +
					      p % 2 * 8) =
					*(const half_row *)(s + p * 8);
			for (j = 0; kt % 2 && j < ENG_NR / 2; j++)
				dst[np2 * nq * ENG_NR + q * ENG_NR / 2 + j] =
					s[np2 * ENG_NR + j];
		}
	}
}
#endif

/* The gates of the row @hs into @gates, XW's row @xw their residual. */
static void lstm_gates(struct lstm_dir *ld, float *hs, float *xw,
		       float *gates)
{
#ifdef ENG_FMA
	if (ld->w.b) {
		vnpu_eng_bf16_pack_row(hs, ld->w.kc, ld->row);
		ld->w.res = xw;
		ld->w.y = gates;
		vnpu_eng_gemv_bf16_wide(&ld->w);
		return;
	}
#endif
	ld->data[0] = hs;
	ld->data[2] = xw;
	ld->data[3] = gates;
	run_gemm(&ld->gl, 0, ld->units, ld->gctx);
}

/*
 * Units are directions; Y_h and Y_c hold a direction's states as it runs.
 * On the AVX512-BF16 path a bf16 R's panels are first regrouped in the
 * scratch (eng_lstm_wide()), so that each step's mat-vec reads them in
 * one run with sixteen sums at once: the same chains, the same bits.
 */
int run_lstm(const struct eng_layer *l, __u64 ub, __u64 ue,
	     const struct vnpu_eng_ctx *ctx)
{
	const struct vnpu_layer_lstm *at = l->attrs;
	const struct vnpu_cmd_tensor *xw = &l->t[0];
	__u64 seq = xw->dims[0], dirs = xw->dims[1], nb = xw->dims[2];
	__u64 g = xw->dims[3], h = g / 4, d, step, b;
	float *gates = eng_align(ctx->scratch), *tmp = gates + g;
	struct vnpu_eng_ctx gctx = *ctx;
	struct eng_lstm_gemm sg;
	struct lstm_dir ld = { .gctx = &gctx };
	__u64 rb = vnpu_eng_dtype_size(l->t[1].dtype);
	int avx512 = eng_act_avx512(ctx);

	eng_lstm_gemm_init(h, l->t[1].dtype, &sg);
	ld.gl = (struct eng_layer){ VNPU_LAYER_GEMM, sg.t, ld.data, 4, &sg.a };
	gctx.scratch = (char *)gates + eng_lstm_head(h);
	gctx.scratch_size -= (__u64)((char *)gctx.scratch - (char *)ctx->scratch);
	ld.units = vnpu_eng_units(&ld.gl, ctx->features);
#ifdef ENG_FMA
	if (eng_lstm_wide(h, l->t[1].dtype, ctx->features)) {
		ld.wide = gctx.scratch;
		ld.w.b = ld.wide;
		ld.row = (__u32 *)((char *)gctx.scratch +
			 eng_lstm_wide(h, l->t[1].dtype, ctx->features) -
			 (h + 31) / 32 * 64);
		ld.w.a = ld.row;
		ld.w.kc = h;
		ld.w.n = g;
	}
#endif
	for (d = ub; d < ue; d++) {
		float *hs0 = (float *)l->data[5] + d * nb * h;
		float *cs0 = (float *)l->data[6] + d * nb * h;

		lstm_copy(hs0, (const float *)l->data[2] + d * nb * h, nb * h);
		lstm_copy(cs0, (const float *)l->data[3] + d * nb * h, nb * h);
		ld.data[1] = (char *)l->data[1] + d * sg.t[1].dims[0] * rb;
#ifdef ENG_FMA
		if (ld.w.b)
			lstm_regroup(ld.data[1], h, eng_div_up(g, ENG_NR),
				     ld.wide);
#endif
		for (step = 0; step < seq; step++) {
			__u64 t = d ? seq - 1 - step : step;
			__u64 row = (t * dirs + d) * nb;

			for (b = 0; b < nb; b++) {
				lstm_gates(&ld, hs0 + b * h,
					   (float *)l->data[0] + (row + b) * g,
					   gates);
				lstm_cell(at, gates, cs0 + b * h, tmp,
					  (float *)l->data[4] + (row + b) * h,
					  hs0 + b * h, h, avx512);
			}
			eng_pause(ctx);
		}
	}
	return 0;
}

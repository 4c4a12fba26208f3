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

/* Units are directions; Y_h and Y_c hold a direction's states as it runs. */
int run_lstm(const struct eng_layer *l, __u64 ub, __u64 ue,
	     const struct vnpu_eng_ctx *ctx)
{
	const struct vnpu_layer_lstm *at = l->attrs;
	const struct vnpu_cmd_tensor *xw = &l->t[0];
	__u64 seq = xw->dims[0], dirs = xw->dims[1], nb = xw->dims[2];
	__u64 g = xw->dims[3], h = g / 4, d, step, b, units;
	float *gates = eng_align(ctx->scratch), *tmp = gates + g;
	struct vnpu_eng_ctx gctx = *ctx;
	struct eng_lstm_gemm sg;
	struct eng_layer gl;
	void *data[4];
	int avx512 = eng_act_avx512(ctx);

	eng_lstm_gemm_init(h, l->t[1].dtype, &sg);
	gl = (struct eng_layer){ VNPU_LAYER_GEMM, sg.t, data, 4, &sg.a };
	gctx.scratch = (char *)gates + eng_lstm_head(h);
	gctx.scratch_size -= (__u64)((char *)gctx.scratch - (char *)ctx->scratch);
	units = vnpu_eng_units(&gl, ctx->features);
	data[3] = gates;
	for (d = ub; d < ue; d++) {
		float *hs0 = (float *)l->data[5] + d * nb * h;
		float *cs0 = (float *)l->data[6] + d * nb * h;

		lstm_copy(hs0, (const float *)l->data[2] + d * nb * h, nb * h);
		lstm_copy(cs0, (const float *)l->data[3] + d * nb * h, nb * h);
		data[1] = (char *)l->data[1] + d * sg.t[1].dims[0] *
			  vnpu_eng_dtype_size(sg.t[1].dtype);
		for (step = 0; step < seq; step++) {
			__u64 t = d ? seq - 1 - step : step;
			__u64 row = (t * dirs + d) * nb;

			for (b = 0; b < nb; b++) {
				data[0] = hs0 + b * h;
				data[2] = (float *)l->data[0] + (row + b) * g;
				run_gemm(&gl, 0, units, &gctx);
				lstm_cell(at, gates, cs0 + b * h, tmp,
					  (float *)l->data[4] + (row + b) * h,
					  hs0 + b * h, h, avx512);
			}
			eng_pause(ctx);
		}
	}
	return 0;
}

// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The float kernels' op table, one per build (vnpu_eng_isa.h):
 * vnpu_eng_kernels_avx2 and vnpu_eng_kernels_base, which
 * vnpu_eng_layer_run() picks from by the CPU's features.
 */
#include "vnpu_eng_kern.h"

const struct eng_kernels ENG_TABLE = {
	.run = {
		[VNPU_LAYER_GEMM] = run_gemm,
		[VNPU_LAYER_CONV] = run_conv,
		[VNPU_LAYER_POOL] = run_pool,
		[VNPU_LAYER_BINARY] = run_binary,
		[VNPU_LAYER_WHERE] = run_where,
		[VNPU_LAYER_UNARY] = run_unary,
		[VNPU_LAYER_SOFTMAX] = run_softmax,
		[VNPU_LAYER_NORM] = run_norm,
		[VNPU_LAYER_REDUCE] = run_reduce,
		[VNPU_LAYER_ARGREDUCE] = run_argreduce,
		[VNPU_LAYER_RESIZE] = run_resize,
		[VNPU_LAYER_PAD] = run_pad,
		[VNPU_LAYER_GATHER] = run_gather,
		[VNPU_LAYER_GATHER_ELEMENTS] = run_gather_elements,
		[VNPU_LAYER_CAST] = run_cast,
		[VNPU_LAYER_QUANTIZE] = run_quant,
		[VNPU_LAYER_DEQUANTIZE] = run_quant,
		[VNPU_LAYER_MATMUL_INTEGER] = run_qmatmul,
		[VNPU_LAYER_QLINEAR_MATMUL] = run_qmatmul,
		[VNPU_LAYER_QLINEAR_CONV] = run_qlinear_conv,
		[VNPU_LAYER_SCATTER_ELEMENTS] = run_scatter_elements,
		[VNPU_LAYER_SCATTER_ND] = run_scatter_nd,
		[VNPU_LAYER_GATHER_ND] = run_gather_nd,
		[VNPU_LAYER_GRID_SAMPLE] = run_grid_sample,
		[VNPU_LAYER_TFIDF] = run_tfidf,
		[VNPU_LAYER_DET] = run_det,
		[VNPU_LAYER_ROI_ALIGN] = run_roi_align,
		[VNPU_LAYER_MAXPOOL_INDEX] = run_maxpool_index,
		[VNPU_LAYER_CHAIN] = run_chain,
		[VNPU_LAYER_LSTM] = run_lstm,
		[VNPU_LAYER_QLINEAR_ADD] = run_qlinear_add,
		[VNPU_LAYER_LOOKUP] = run_lookup,
		[VNPU_LAYER_ATTENTION] = run_attention,
	},
	.transpose32 = eng_transpose32,
	.wino_pack = wino_pack_u,
};

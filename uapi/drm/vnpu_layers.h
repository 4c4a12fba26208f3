/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * vnpu NN layers: the ops of %VNPU_CMD_LAYER and their attribute structs.
 * Every struct's size is a multiple of 8, every pad and flag must be zero.
 *
 * Conventions shared by all ops:
 *
 * - Every op has exactly one output, its last tensor (&struct
 *   vnpu_cmd_layer.num_outputs is 1); it must not alias itself nor
 *   overlap another tensor, but where an op says so.
 * - Tensors are the strided views of &struct vnpu_cmd_tensor. A transposed or
 *   sliced operand is just a view with other strides: no op has transpose
 *   flags. Unless an op says otherwise, inputs broadcast the numpy way: an
 *   input of lower rank is right-aligned against the output, and an input
 *   dimension of 1 (or stride 0) is repeated along the output's.
 * - Float attributes are IEEE-754 binary32 bit patterns in a __u32 (the
 *   kernel never does float arithmetic outside the device's compute
 *   sections). NaN and infinite attribute values are rejected.
 * - Optional tensors are present when their flag is set, and then take
 *   their place in the tensor order given for the op; absent ones are
 *   skipped (the count of tensors must match the flags).
 * - Ops whose output drops dimensions (reductions, ArgMax) keep them with
 *   extent 1: ONNX's keepdims=0 is the same buffer described with the 1s.
 * - Float compute is f32 (f64 ops compute in f64); f16 and bf16 are storage
 *   types converted to and from f32 where an op accepts them.
 * - Work that cannot be split stays bounded: the depth of a GEMM or CONV
 *   output (K, or C/group * KH * KW) is at most 2^19, a pooling window at
 *   most 2^24 elements, and one output of a reduction, softmax, argmax or
 *   normalization reads at most 2^28 elements.
 */
#ifndef _VNPU_LAYERS_H_
#define _VNPU_LAYERS_H_

#include <linux/types.h>

#include "vnpu_cmd.h"

#if defined(__cplusplus)
extern "C" {
#endif

/**
 * enum vnpu_layer_op - the layers of %VNPU_CMD_LAYER
 * @VNPU_LAYER_INVALID: never valid
 * @VNPU_LAYER_GEMM: Gemm and MatMul, &struct vnpu_layer_gemm; tensors
 *	A [..., M, K], B [..., K, N] (or packed), [C] bias, [R] residual,
 *	Y [..., M, N]; all f32
 * @VNPU_LAYER_CONV: Conv 1-D and 2-D, &struct vnpu_layer_conv; tensors
 *	X [N, C, (H,) W], W [M, C/group, (KH,) KW] (or packed), [B] [M],
 *	[R] residual (shape of Y), Y [N, M, (OH,) OW]; all f32
 * @VNPU_LAYER_POOL: MaxPool, AveragePool, LpPool and their global forms,
 *	&struct vnpu_layer_pool; tensors X [N, C, (H,) W], Y [N, C, (OH,) OW];
 *	f32, f16 or bf16, and u8 or i8 for %VNPU_POOL_MAX (one for both)
 * @VNPU_LAYER_BINARY: element-wise binary ops with broadcasting,
 *	&struct vnpu_layer_binary; tensors A, B, Y
 * @VNPU_LAYER_WHERE: Where, no attributes (attr_size 0); tensors
 *	condition (bool), X, Y, Z (Z = condition ? X : Y), broadcasting
 * @VNPU_LAYER_UNARY: element-wise functions, &struct vnpu_layer_act;
 *	tensors X, Y (same dims)
 * @VNPU_LAYER_SOFTMAX: Softmax, LogSoftmax, Hardmax on one axis,
 *	&struct vnpu_layer_softmax; tensors X, Y (same dims); f32, f16 or bf16
 * @VNPU_LAYER_NORM: the normalizations, &struct vnpu_layer_norm; tensors
 *	by &enum vnpu_norm_mode; all f32, f16 or bf16
 * @VNPU_LAYER_REDUCE: reductions over any set of axes,
 *	&struct vnpu_layer_reduce; tensors X, Y (X's rank, 1 on reduced axes)
 * @VNPU_LAYER_ARGREDUCE: ArgMax, ArgMin, &struct vnpu_layer_argreduce;
 *	tensors X, Y (i64, X's rank, 1 on the axis)
 * @VNPU_LAYER_RESIZE: Resize and Upsample, &struct vnpu_layer_resize;
 *	tensors X, Y (same rank); f32, f16 or bf16
 * @VNPU_LAYER_PAD: Pad, &struct vnpu_layer_pad; tensors X, Y (same rank)
 * @VNPU_LAYER_GATHER: Gather, &struct vnpu_layer_gather; tensors data,
 *	indices (i32 or i64), Y (rank of data - 1 + rank of indices)
 * @VNPU_LAYER_GATHER_ELEMENTS: GatherElements, &struct vnpu_layer_gather;
 *	tensors data, indices (i32 or i64), Y (dims of indices)
 * @VNPU_LAYER_CAST: Cast between any two dtypes, no attributes; tensors
 *	X, Y (same dims)
 * @VNPU_LAYER_QUANTIZE: QuantizeLinear, &struct vnpu_layer_quant; tensors
 *	X (f32), scale (f32), zero_point (u8 or i8), Y (zero_point's dtype)
 * @VNPU_LAYER_DEQUANTIZE: DequantizeLinear, &struct vnpu_layer_quant;
 *	tensors X (u8, i8 or i32), scale (f32), zero_point (X's dtype), Y (f32)
 * @VNPU_LAYER_MATMUL_INTEGER: MatMulInteger, &struct vnpu_layer_qgemm;
 *	tensors A [..., M, K] (u8 or i8), B [..., K, N] (u8 or i8), a_zero_point
 *	(A's dtype; scalar or [M]), b_zero_point (B's dtype; scalar or [N]),
 *	Y [..., M, N] (i32); batch dims broadcast as in GEMM
 * @VNPU_LAYER_QLINEAR_MATMUL: QLinearMatMul, &struct vnpu_layer_qgemm;
 *	tensors A, a_scale, a_zero_point, B, b_scale, b_zero_point, y_scale,
 *	y_zero_point, Y; A, B and Y u8 or i8 (zero points of their tensor's
 *	dtype), scales f32; b_scale and b_zero_point scalar or [N], the others
 *	scalar
 * @VNPU_LAYER_QLINEAR_CONV: QLinearConv, &struct vnpu_layer_conv (flags
 *	%VNPU_LAYER_F_BIAS, %VNPU_LAYER_F_PACKED and %VNPU_LAYER_F_SPLIT8,
 *	act %VNPU_ACT_IDENTITY or %VNPU_ACT_RELU with alpha and beta zero);
 *	tensors X, x_scale, x_zero_point, W, w_scale, w_zero_point, y_scale,
 *	y_zero_point, [B] (i32 [M]), Y; X, W and Y u8 or i8, w_scale and
 *	w_zero_point scalar or [M], the other parameters scalar. Sums are
 *	exact (wrapping) 32-bit integers, Y = saturate(round_half_even(f32(sum
 *	+ B) * (x_scale * w_scale / y_scale)) + y_zero_point), the scale's
 *	product and quotient in f32; %VNPU_ACT_RELU raises the low bound of
 *	the saturation to y_zero_point (ReLU before quantizing). Packed, W
 *	is i8 in %VNPU_PACK_QCONV_W (with %VNPU_LAYER_F_SPLIT8:
 *	%VNPU_PACK_QCONV_SPLIT, with %VNPU_LAYER_F_QW4: %VNPU_PACK_QW4_W).
 *	With %VNPU_LAYER_F_RESIDUAL (packed, not depthwise), tensors R,
 *	r_scale, r_zero_point, z_scale, z_zero_point follow [B] and Y is
 *	the %VNPU_LAYER_QLINEAR_ADD of the convolution's output (at
 *	y_scale, y_zero_point) and R (Y's dtype and dims, dense rows like
 *	Y's) to z_scale, z_zero_point, all scalar: the
 *	convolution's output its A operand, R its B, or with
 *	%VNPU_LAYER_F_RES_FIRST R its A. Y may be R itself (the same slot,
 *	offset, dtype, dims and strides): each element of R is read before
 *	Y's element at its place is written
 * @VNPU_LAYER_SCATTER_ELEMENTS: ScatterElements, &struct vnpu_layer_scatter;
 *	tensors data, indices (i32 or i64, data's rank), updates (indices'
 *	dims, data's dtype), Y (data's dims and dtype)
 * @VNPU_LAYER_SCATTER_ND: ScatterND, &struct vnpu_layer_scatter (axis 0);
 *	tensors data [r dims], indices (i32 or i64) [q-1 dims, k], updates
 *	[indices' q-1 dims, data's last r-k dims], Y (data's dims and dtype)
 * @VNPU_LAYER_GATHER_ND: GatherND, &struct vnpu_layer_gather_nd; tensors
 *	data [r dims], indices (i32 or i64) [q-1 dims, k], Y [indices' q-1
 *	dims, data's last r-b-k dims] (b: batch_dims)
 * @VNPU_LAYER_GRID_SAMPLE: GridSample, &struct vnpu_layer_grid_sample;
 *	tensors X [N, C, H, W], grid [N, Ho, Wo, 2] (x then y, normalized to
 *	-1..1), Y [N, C, Ho, Wo]; one float storage dtype
 * @VNPU_LAYER_TFIDF: TfIdfVectorizer, &struct vnpu_layer_tfidf; tensors X
 *	(i32 or i64, [L] or [B, L]), pool (i64 [P]: the n-grams, by length),
 *	counts (i64 [G]: where the n-grams of length g + 1 start in pool),
 *	indexes (i64, one per n-gram: its column of Y), weights (f32, one per
 *	n-gram), Y (f32, [W] or [B, W])
 * @VNPU_LAYER_DET: Det, no attributes; tensors X [..., M, M] (M 1 to
 *	%VNPU_DET_MAX_M), Y [...]; one float storage dtype
 * @VNPU_LAYER_ROI_ALIGN: RoiAlign, &struct vnpu_layer_roi_align; tensors
 *	X [N, C, H, W], rois [R, 4] (x1, y1, x2, y2; X's dtype), batch
 *	indices (i32 or i64 [R]), Y [R, C, Ho, Wo]; one float storage dtype
 * @VNPU_LAYER_MAXPOOL_INDEX: MaxPool with its Indices output, &struct
 *	vnpu_layer_pool_index; tensors X [N, C, H, W] (a float storage dtype),
 *	Y [N, C, OH, OW] (X's dtype), I [N, C, OH, OW] (i64)
 * @VNPU_LAYER_CHAIN: a short program of element-wise steps run in one
 *	pass, &struct vnpu_layer_chain; tensors 1 to %VNPU_CHAIN_MAX_INPUTS
 *	inputs, Y; all f32, the inputs broadcasting against Y
 * @VNPU_LAYER_LSTM: an LSTM's recurrence over a whole sequence, &struct
 *	vnpu_layer_lstm; tensors XW [S, D, B, 4H] (each step's input
 *	projection with both biases, gates in i, o, f, c order), R (the
 *	recurrent weights of the D directions, each [H, 4H] packed as
 *	%VNPU_PACK_GEMM_B and stored one after the other: f32, or f16 or
 *	bf16 panels as GEMM's packed B of those types, bf16 in depth pairs),
 *	H0 and C0 [D, B, H], Y [S, D, B, H], Y_h and Y_c [D, B, H]; all
 *	others f32, and all dense. Direction 1 runs from the last step to
 *	the first
 * @VNPU_LAYER_QLINEAR_ADD: QLinearAdd, no attributes; tensors A, a_scale,
 *	a_zero_point, B, b_scale, b_zero_point, y_scale, y_zero_point, Y; A, B
 *	and Y of one 8-bit dtype (u8 or i8) and the same dims, zero points of
 *	it, scales f32, all scalar. With ra = a_scale / y_scale, rb = b_scale /
 *	y_scale and f = y_zero_point - fma(ra, a_zero_point, rb * b_zero_point),
 *	Y = saturate(cvt(fma(A, ra, fma(B, rb, f)))) in f32, each fma rounded
 *	once; cvt rounds half to even and takes NaN and values outside the
 *	32-bit range to the low bound (ONNX Runtime's AVX2 QLinearAdd)
 * @VNPU_LAYER_LOOKUP: a table lookup per element, &struct
 *	vnpu_layer_lookup; tensors X (u8 or i8), T (the table: u8 or i8,
 *	rank 1, %VNPU_LOOKUP_ENTRIES elements, stride 1), Y (T's dtype, X's
 *	dims). Y = T[x] with x's byte read as unsigned (an i8 x of -1 reads
 *	T[255]): any function of one 8-bit code, such as a DequantizeLinear,
 *	element-wise f32 ops and a QuantizeLinear run once per code
 * @VNPU_LAYER_ATTENTION: scaled dot-product attention per (batch, head),
 *	&struct vnpu_layer_attention; tensors Q [B, H, M, D], KT [B, H, D, N]
 *	(K transposed: any strides, so a head split of K is a view), V [B,
 *	H, N, E], [mask] (broadcasting to [B, H, M, N], rank 4 at most), Y
 *	[B, H, M, E] (its last stride 1); all f32. S = Q KT is summed as
 *	%VNPU_LAYER_GEMM sums it, then each element divided by (with
 *	%VNPU_ATTN_F_DIV) or multiplied by the scale, the mask added, each
 *	step rounded to f32 as %VNPU_LAYER_BINARY does it, each row of S
 *	taken through %VNPU_LAYER_SOFTMAX (mode %VNPU_SOFTMAX) and Y = S V
 *	summed as GEMM does: the bits of those layers run one by one
 */
enum vnpu_layer_op {
	VNPU_LAYER_INVALID = 0,
	VNPU_LAYER_GEMM = 1,
	VNPU_LAYER_CONV = 2,
	VNPU_LAYER_POOL = 3,
	VNPU_LAYER_BINARY = 4,
	VNPU_LAYER_WHERE = 5,
	VNPU_LAYER_UNARY = 6,
	VNPU_LAYER_SOFTMAX = 7,
	VNPU_LAYER_NORM = 8,
	VNPU_LAYER_REDUCE = 9,
	VNPU_LAYER_ARGREDUCE = 10,
	VNPU_LAYER_RESIZE = 11,
	VNPU_LAYER_PAD = 12,
	VNPU_LAYER_GATHER = 13,
	VNPU_LAYER_GATHER_ELEMENTS = 14,
	VNPU_LAYER_CAST = 15,
	VNPU_LAYER_QUANTIZE = 16,
	VNPU_LAYER_DEQUANTIZE = 17,
	VNPU_LAYER_MATMUL_INTEGER = 18,
	VNPU_LAYER_QLINEAR_MATMUL = 19,
	VNPU_LAYER_QLINEAR_CONV = 20,
	VNPU_LAYER_SCATTER_ELEMENTS = 21,
	VNPU_LAYER_SCATTER_ND = 22,
	VNPU_LAYER_GATHER_ND = 23,
	VNPU_LAYER_GRID_SAMPLE = 24,
	VNPU_LAYER_TFIDF = 25,
	VNPU_LAYER_DET = 26,
	VNPU_LAYER_ROI_ALIGN = 27,
	VNPU_LAYER_MAXPOOL_INDEX = 28,
	VNPU_LAYER_CHAIN = 29,
	VNPU_LAYER_LSTM = 30,
	VNPU_LAYER_QLINEAR_ADD = 31,
	VNPU_LAYER_LOOKUP = 32,
	VNPU_LAYER_ATTENTION = 33,
};

/** VNPU_LAYER_OP_LAST - the highest op this header defines */
#define VNPU_LAYER_OP_LAST VNPU_LAYER_ATTENTION

/** VNPU_DET_MAX_M - the largest matrix %VNPU_LAYER_DET takes */
#define VNPU_DET_MAX_M 8

/**
 * enum vnpu_act_func - element-wise functions of %VNPU_LAYER_UNARY, also
 * the activation fused into GEMM and CONV
 * @VNPU_ACT_IDENTITY: x (as a fused activation: none)
 * @VNPU_ACT_RELU: max(x, 0)
 * @VNPU_ACT_LEAKY_RELU: x < 0 ? alpha * x : x
 * @VNPU_ACT_ELU: x < 0 ? alpha * (exp(x) - 1) : x
 * @VNPU_ACT_SELU: beta * (x <= 0 ? alpha * (exp(x) - 1) : x) (beta is
 *	ONNX's gamma)
 * @VNPU_ACT_CELU: max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
 * @VNPU_ACT_CLIP: min(max(x, alpha), beta)
 * @VNPU_ACT_SIGMOID: 1 / (1 + exp(-x))
 * @VNPU_ACT_HARD_SIGMOID: max(0, min(1, alpha * x + beta))
 * @VNPU_ACT_HARD_SWISH: x * max(0, min(1, x / 6 + 1 / 2))
 * @VNPU_ACT_TANH: tanh(x)
 * @VNPU_ACT_GELU: x / 2 * (1 + erf(x / sqrt(2)))
 * @VNPU_ACT_GELU_TANH: GELU's tanh approximation
 * @VNPU_ACT_ERF: erf(x)
 * @VNPU_ACT_EXP: exp(x)
 * @VNPU_ACT_LOG: log(x)
 * @VNPU_ACT_SQRT: sqrt(x)
 * @VNPU_ACT_RECIPROCAL: 1 / x
 * @VNPU_ACT_ABS: |x|
 * @VNPU_ACT_NEG: -x
 * @VNPU_ACT_FLOOR: floor(x)
 * @VNPU_ACT_CEIL: ceil(x)
 * @VNPU_ACT_ROUND: round half to even
 * @VNPU_ACT_SIGN: -1, 0 or 1
 * @VNPU_ACT_SIN: sin(x)
 * @VNPU_ACT_COS: cos(x)
 * @VNPU_ACT_TAN: tan(x)
 * @VNPU_ACT_ASIN: asin(x)
 * @VNPU_ACT_ACOS: acos(x)
 * @VNPU_ACT_ATAN: atan(x)
 * @VNPU_ACT_SINH: sinh(x)
 * @VNPU_ACT_COSH: cosh(x)
 * @VNPU_ACT_ASINH: asinh(x)
 * @VNPU_ACT_ACOSH: acosh(x)
 * @VNPU_ACT_ATANH: atanh(x)
 * @VNPU_ACT_SOFTPLUS: log(1 + exp(x))
 * @VNPU_ACT_SOFTSIGN: x / (1 + |x|)
 * @VNPU_ACT_MISH: x * tanh(softplus(x))
 * @VNPU_ACT_THRESHOLDED_RELU: x > alpha ? x : 0
 * @VNPU_ACT_NOT: logical not (bool only)
 * @VNPU_ACT_SHRINK: x < -beta ? x + alpha : x > beta ? x - alpha : 0
 *	(alpha is ONNX's bias, beta its lambd)
 * @VNPU_ACT_SILU: x / (1 + exp(-x)) (x * sigmoid(x), SiLU or Swish)
 * @VNPU_ACT_COUNT: the number of functions (not a function)
 *
 * Integer dtypes (i8 to i64, u8 to u64) take IDENTITY, RELU, ABS, NEG,
 * SIGN and CLIP (bounds truncated to the integer); bool takes NOT and
 * IDENTITY; f32, f64, f16 and bf16 take all but NOT.
 */
enum vnpu_act_func {
	VNPU_ACT_IDENTITY = 0,
	VNPU_ACT_RELU = 1,
	VNPU_ACT_LEAKY_RELU = 2,
	VNPU_ACT_ELU = 3,
	VNPU_ACT_SELU = 4,
	VNPU_ACT_CELU = 5,
	VNPU_ACT_CLIP = 6,
	VNPU_ACT_SIGMOID = 7,
	VNPU_ACT_HARD_SIGMOID = 8,
	VNPU_ACT_HARD_SWISH = 9,
	VNPU_ACT_TANH = 10,
	VNPU_ACT_GELU = 11,
	VNPU_ACT_GELU_TANH = 12,
	VNPU_ACT_ERF = 13,
	VNPU_ACT_EXP = 14,
	VNPU_ACT_LOG = 15,
	VNPU_ACT_SQRT = 16,
	VNPU_ACT_RECIPROCAL = 17,
	VNPU_ACT_ABS = 18,
	VNPU_ACT_NEG = 19,
	VNPU_ACT_FLOOR = 20,
	VNPU_ACT_CEIL = 21,
	VNPU_ACT_ROUND = 22,
	VNPU_ACT_SIGN = 23,
	VNPU_ACT_SIN = 24,
	VNPU_ACT_COS = 25,
	VNPU_ACT_TAN = 26,
	VNPU_ACT_ASIN = 27,
	VNPU_ACT_ACOS = 28,
	VNPU_ACT_ATAN = 29,
	VNPU_ACT_SINH = 30,
	VNPU_ACT_COSH = 31,
	VNPU_ACT_ASINH = 32,
	VNPU_ACT_ACOSH = 33,
	VNPU_ACT_ATANH = 34,
	VNPU_ACT_SOFTPLUS = 35,
	VNPU_ACT_SOFTSIGN = 36,
	VNPU_ACT_MISH = 37,
	VNPU_ACT_THRESHOLDED_RELU = 38,
	VNPU_ACT_NOT = 39,
	VNPU_ACT_SHRINK = 40,
	VNPU_ACT_SILU = 41,
	VNPU_ACT_COUNT,
};

/**
 * struct vnpu_layer_act - an element-wise function; the attributes of
 * %VNPU_LAYER_UNARY and the fused activation of GEMM and CONV
 * @func: one of &enum vnpu_act_func
 * @flags: zero, or for the fused activation of GEMM and CONV one of
 *	%VNPU_ACT_F_MAX and %VNPU_ACT_F_MIN
 * @alpha: f32 bits, the function's first parameter (0 when it has none)
 * @beta: f32 bits, the function's second parameter (0 when it has none),
 *	or with a flag the bound
 */
struct vnpu_layer_act {
	__u32 func;
	__u32 flags;
	__u32 alpha;
	__u32 beta;
};

/*
 * Flags of &struct vnpu_layer_act: a bound after the function, for the
 * fused activation of GEMM and CONV (UNARY refuses them) whose function
 * has no @beta (IDENTITY, RELU or LEAKY_RELU), @beta finite. The
 * function's f32 result y becomes ONNX's Max(y, beta) or Min(y, beta): a
 * NaN y stays, a tie gives beta.
 */
/** VNPU_ACT_F_MAX - y = max(y, beta) after the function */
#define VNPU_ACT_F_MAX			0x1u
/** VNPU_ACT_F_MIN - y = min(y, beta) after the function */
#define VNPU_ACT_F_MIN			0x2u

/* Flags of &struct vnpu_layer_gemm and &struct vnpu_layer_conv. */
/** VNPU_LAYER_F_BIAS - a bias tensor follows the weights */
#define VNPU_LAYER_F_BIAS		0x1u
/** VNPU_LAYER_F_RESIDUAL - a residual tensor follows (the bias) */
#define VNPU_LAYER_F_RESIDUAL		0x2u
/** VNPU_LAYER_F_PACKED - the weights are packed, see vnpu_eng_pack() */
#define VNPU_LAYER_F_PACKED		0x4u
#define VNPU_LAYER_F_MASK		(VNPU_LAYER_F_BIAS | \
					 VNPU_LAYER_F_RESIDUAL | \
					 VNPU_LAYER_F_PACKED)
/**
 * VNPU_LAYER_F_WINO - CONV only, not with %VNPU_LAYER_F_PACKED: W is
 * %VNPU_PACK_WINO_W and the layer runs as Winograd F(4x4, 3x3). X and W
 * f32, 2-D, a 3x3 kernel, strides and dilations 1, each pad at most 2,
 * at most %VNPU_WINO_MAX_C input channels a group
 */
#define VNPU_LAYER_F_WINO		0x8u
/**
 * VNPU_LAYER_F_SPLIT8 - QLINEAR_CONV only, with %VNPU_LAYER_F_PACKED and
 * not depthwise: W is %VNPU_PACK_QCONV_SPLIT (its pairs of weights that
 * 16-bit pair sums of u8 x i8 products could saturate on listed apart)
 */
#define VNPU_LAYER_F_SPLIT8		0x10u
/**
 * VNPU_LAYER_F_WINO2 - CONV only, not with %VNPU_LAYER_F_PACKED or
 * %VNPU_LAYER_F_WINO: W is bf16 or f32 %VNPU_PACK_WINO2_W and the layer
 * runs as Winograd F(2x2, 3x3); X f32, the rest as %VNPU_LAYER_F_WINO
 */
#define VNPU_LAYER_F_WINO2		0x20u
/**
 * VNPU_LAYER_F_RES_FIRST - QLINEAR_CONV with %VNPU_LAYER_F_RESIDUAL only:
 * R is the fused QLinearAdd's first operand (A), the convolution's output
 * its second (B)
 */
#define VNPU_LAYER_F_RES_FIRST		0x40u
/**
 * VNPU_LAYER_F_LANES - CONV only, with %VNPU_LAYER_F_PACKED and f32 W,
 * not with %VNPU_LAYER_F_WINO: W is %VNPU_PACK_CONV_LANES (output
 * channels on the vector lanes, positions on a tile's rows: small maps,
 * where positions pad panels of columns badly). X f32, strides 1 or 2,
 * dilations 1, each pad below the kernel; with padding or strides, a
 * group's padded input planes (C/group * (H + pads) * (W + pads + 1)
 * elements) below 2^28
 */
#define VNPU_LAYER_F_LANES		0x80u
/**
 * VNPU_LAYER_F_WINO42 - CONV only, not with %VNPU_LAYER_F_PACKED,
 * %VNPU_LAYER_F_WINO or %VNPU_LAYER_F_WINO2: W is bf16 %VNPU_PACK_WINO42_W
 * and the layer runs as Winograd F(4x2, 3x3) (tiles of 4 output rows by 2
 * columns); X f32, the rest as %VNPU_LAYER_F_WINO
 */
#define VNPU_LAYER_F_WINO42		0x100u
/** VNPU_WINO_MAX_C - the most input channels a group of a Winograd CONV */
#define VNPU_WINO_MAX_C			1024
/**
 * VNPU_LAYER_F_QWINO - QLINEAR_CONV only, not with %VNPU_LAYER_F_PACKED or
 * %VNPU_LAYER_F_SPLIT8: W is %VNPU_PACK_QWINO_W and the layer runs as
 * integer Winograd F(2x2, 3x3), its sums the direct ones exactly. X of
 * rank 4 with its rows dense, a 3x3 kernel, strides and dilations 1, each
 * pad at most 2, at most %VNPU_QWINO_MAX_C input channels a group, not
 * depthwise. W's zero points count as 0 (the compiler sets the flag only
 * where they are).
 */
#define VNPU_LAYER_F_QWINO		0x200u
/**
 * VNPU_LAYER_F_QW4 - QLINEAR_CONV only, with %VNPU_LAYER_F_PACKED, not
 * with %VNPU_LAYER_F_SPLIT8, %VNPU_LAYER_F_QWINO or
 * %VNPU_LAYER_F_RESIDUAL: W is %VNPU_PACK_QW4_W, W's rows followed by
 * their integer Winograd F(4x4, 3x3) transform, which a device may run
 * the layer over (the direct sums' outputs either way). X and Y of rank 4,
 * X's rows dense, one group, a 3x3 kernel, strides and dilations 1, pads
 * 1, output channels a multiple of 16, at most %VNPU_QW4_MAX_W columns.
 */
#define VNPU_LAYER_F_QW4		0x400u
/** VNPU_QW4_MAX_W - the most columns of a %VNPU_LAYER_F_QW4 QLINEAR_CONV */
#define VNPU_QW4_MAX_W			56
/**
 * VNPU_QWINO_MAX_C - the most input channels a group of a
 * %VNPU_LAYER_F_QWINO QLINEAR_CONV: four times a sum of C * 9 products of
 * 255 by 128 stays below 2^31
 */
#define VNPU_QWINO_MAX_C		1824

/*
 * Packed weights. A packed operand is a rank-1, stride-1 f32, f16 or bf16
 * tensor of exactly the packed size (f16 and bf16 panels are the f32
 * ones, each element rounded; bf16 ones then in depth pairs, see below):
 *
 * %VNPU_PACK_GEMM_B, GEMM's B [K, N]: the columns in panels of
 *   %VNPU_PACK_NR: panel p holds element (k, j) of B[k][p * NR + j] at
 *   p * K * NR + k * NR + j, zero where p * NR + j >= N. B has no batch
 *   dimensions then (it is shared by all of A's). Size: ceil(N / NR) * NR * K.
 * %VNPU_PACK_CONV_W, CONV's W [M, C/group, KH, KW] as group matrices
 *   Wg [M/group, KC] with KC = C/group * KH * KW (row-major over c, kh, kw):
 *   group g, panel p holds Wg[p * MR + i][k] at
 *   g * P * MR * KC + p * KC * MR + k * MR + i, where P = ceil((M/group) / MR),
 *   zero where p * MR + i >= M/group. Size: group * P * MR * KC.
 * %VNPU_PACK_CONV_LANES, CONV's W as the transposes of the group matrices
 *   Wg of %VNPU_PACK_CONV_W in panels of L = %VNPU_PACK_LANES_NR output
 *   channels: group g, panel p holds Wg[p * L + j][k] at
 *   g * Q * L * KC + p * KC * L + k * L + j, where Q = ceil((M/group) / L),
 *   zero where p * L + j >= M/group. Size: group * Q * L * KC. f32 only.
 * %VNPU_PACK_WINO_W, CONV's f32 W [M, C/group, 3, 3] for Winograd F(4x4,
 *   3x3) (%VNPU_LAYER_F_WINO): each 3x3 kernel w of output channel m and
 *   input channel c of a group becomes its 6x6 transform U = G w G^T,
 *   with G's rows (1/4, 0, 0), -(1, 1, 1)/6, -(1, -1, 1)/6,
 *   (1, 2, 4)/24, (1, -2, 4)/24 and (0, 0, 1) (vnpu_eng_wino_pack()
 *   computes it). For each group g and each point x = 6 * i + j of the
 *   6x6 (0 to 35), the matrix of U[i][j] over rows m < M/group and
 *   columns c < C/group is laid out as %VNPU_PACK_CONV_W lays out Wg:
 *   element (m, c) at ((g * 36 + x) * P + m / MR) * C/group * MR +
 *   c * MR + m % MR, P = ceil((M/group) / MR), zero where m >= M/group.
 *   Its rows and columns are given as for %VNPU_PACK_CONV_W (columns
 *   C/group * 9). Size: group * 36 * P * MR * C/group. f32 only.
 * %VNPU_PACK_WINO2_W, CONV's W [M, C/group, 3, 3] for Winograd F(2x2,
 *   3x3) (%VNPU_LAYER_F_WINO2): as %VNPU_PACK_WINO_W with 16 points of a
 *   4x4 U = G w G^T, G's rows (1, 0, 0), (1, 1, 1)/2, (1, -1, 1)/2 and
 *   (0, 0, 1) (vnpu_eng_wino2_pack()), point x = 4 * i + j at
 *   ((g * 16 + x) * P + m / MR) * C/group * MR. Size: group * 16 * P *
 *   MR * C/group. f32, or bf16 in depth pairs (below) of depth C/group.
 * %VNPU_PACK_WINO42_W, CONV's W [M, C/group, 3, 3] for Winograd F(4x2,
 *   3x3) (%VNPU_LAYER_F_WINO42): as %VNPU_PACK_WINO2_W with 24 points of
 *   a 6x4 U = G6 w G^T, G the rows of %VNPU_PACK_WINO2_W's and G6's (down
 *   the kernel's columns; points 0, 1, -1, 1/2, -2 and infinity) (1/2, 0,
 *   0), (1, 1, 1)/6, -(1, -1, 1)/6, -(4, 2, 1)/30, (1, -2, 4)/30 and
 *   (0, 0, 1/2) (vnpu_eng_wino42_pack()), point x = 4 * i + j (row i of
 *   6, column j of 4) at ((g * 24 + x) * P + m / MR) * C/group * MR.
 *   Size: group * 24 * P * MR * C/group. bf16 only (in depth pairs).
 *
 * bf16 panels pair their depths, for dot-product instructions: in a panel
 * of width w (NR, or MR) and depth K (K, or KC), element (k, x) is at
 * (k / 2) * 2 * w + 2 * x + k % 2 from the panel's start for k below K
 * rounded down to even; the last depth of an odd K is a plain row at
 * k * w + x. vnpu_eng_pair_bf16() rearranges panels so.
 *
 * The packed operand of %VNPU_LAYER_QLINEAR_CONV is a rank-1, stride-1 i8
 * tensor instead (its size counts bytes):
 *
 * %VNPU_PACK_QCONV_W, QLINEAR_CONV's i8 W as the group matrices Wg [M/group,
 *   KC] of %VNPU_PACK_CONV_W: row r of group g, its KC elements then zeros
 *   up to K4 = KC rounded up to a multiple of 4, at (g * MP + r) * K4, where
 *   MP = M/group rounded up to a multiple of %VNPU_PACK_QMR (rows past
 *   M/group zero); then, from byte group * MP * K4, for each of those
 *   group * MP rows the sum of its elements as a little-endian i32.
 *   Size: group * MP * (K4 + 4).
 *
 * %VNPU_PACK_QCONV_SPLIT, %VNPU_PACK_QCONV_W laid out for 16-bit sums of
 *   two u8 x i8 products (vpmaddubsw): such a sum is exact unless the
 *   pair's two weights have one sign and |w0 + w1| > 128. Its rows and
 *   sums are %VNPU_PACK_QCONV_W's, except that in each tile (rows t *
 *   %VNPU_PACK_QMR to t * %VNPU_PACK_QMR + %VNPU_PACK_QMR - 1 of the
 *   group * MP, T = group * MP / %VNPU_PACK_QMR tiles) each such pair
 *   (depths k, k + 1 of a row, k even) is 0 and listed in the tile's
 *   table instead, when it has at most NX = %VNPU_PACK_QMR * K4 / 32 of
 *   them; with more, its rows hold W whole. The sums are W's. From byte
 *   group * MP * (K4 + 4), T tables of 8 + S + 4 * %VNPU_PACK_QMR + 8 *
 *   NX bytes, S = 3 * 65 * ceil(K4 / 256) (K4 below 2^24): a
 *   little-endian u32 count n, a u32 of flags, S bytes of a step
 *   schedule, a u32 e_r for each row r of the tile, then NX entries of a
 *   u32 off = 128 * (k / 4) + (k / 2) % 2, k even, and an i32 w2 (its low
 *   and high 16 bits: the weights of depths k and k + 1, as i16). n > NX:
 *   the tile is whole; otherwise W is its rows plus the pairs of its
 *   first n entries, row r's those from e_(r-1) (0 for row 0) to e_r (an
 *   entry at or past n, or of off / 128 >= K4 / 4, adds nothing; off's
 *   bits 1-6 are not read). Rows that hold a pair the rule above lists
 *   give unspecified outputs (never a fault). With %VNPU_QSPLIT_F_PAIRS, the
 *   step schedule holds, for each group of 4 rows of the tile (3) and
 *   each chunk of 64 steps of 4 depths (K4 / 4 steps, the last chunk
 *   short), 65 bytes: a count np, then the chunk's steps (0 to 63, from
 *   its first) with 2 np paired ones first; two paired steps' 16-bit sums
 *   of a lane (depths 4s + 2h, 4s + 2h + 1 of both steps, h 0 or 1) of
 *   the group's rows, four u8 x i8 products, stay within 16 bits (a
 *   sign's weights add up to 128 at most). Schedules that break that
 *   rule, or list a step twice, give unspecified outputs (never a
 *   fault). Size: group * MP * (K4 + 4) + T * (8 + S + 4 * %VNPU_PACK_QMR +
 *   8 * NX).
 *
 * %VNPU_PACK_QWINO_W, QLINEAR_CONV's i8 W [M, C/group, 3, 3] for integer
 *   Winograd F(2x2, 3x3) (%VNPU_LAYER_F_QWINO): each 3x3 kernel w of
 *   output channel m and input channel c of a group becomes its 4x4
 *   transform U = G w G^T with G's rows (2, 0, 0), (1, 1, 1), (1, -1, 1)
 *   and (0, 0, 2) (twice %VNPU_PACK_WINO2_W's: integers, |U| <= 1152), as
 *   little-endian i16. Rows per group MP = M/group rounded up to even,
 *   CP = ceil(C/group / 2) channel pairs, in chunks of
 *   %VNPU_QWINO_CHUNK pairs (the last one short): chunk h of group g
 *   holds, for each row m < MP and each of its pairs p, the 16 points
 *   x = 4 * i + j of U[i][j] of channels 2p and 2p + 1 interleaved (64
 *   bytes), at byte (g * MP * CP + h * %VNPU_QWINO_CHUNK * MP + m * N +
 *   p - h * %VNPU_QWINO_CHUNK) * 64 + x * 4 + 2 * (c % 2), N the chunk's
 *   pairs; zero where m >= M/group or c >= C/group. Size: group * MP *
 *   CP * 64 bytes.
 *
 * %VNPU_PACK_QW4_W, QLINEAR_CONV's i8 W [M, C, 3, 3] of one group, M a
 *   multiple of 16, for integer Winograd F(4x4, 3x3) (%VNPU_LAYER_F_QW4):
 *   %VNPU_PACK_QCONV_W's bytes, zeros up to byte B, their size rounded up
 *   to a multiple of 64, then from byte B each 3x3 kernel w of output
 *   channel m and input channel c as U = G (w - wz) G^T, wz the layer's
 *   w_zero_point of m, G's rows (1, 0, 0), (-1, -1, -1), (-1, 1, -1), (1,
 *   2, 4), (1, -2, 4) and (0, 0, 1) (integers, |U| <= 12495), as
 *   little-endian i16: with CP = ceil(C / 2) channel pairs, point x = 6 *
 *   i + j of U[i][j] at byte B + ((m / 16 * 36 + x) * CP + c / 2) * 64 +
 *   (m % 16) * 4 + 2 * (c % 2), zero where c >= C (each 16 output
 *   channels' U in one run of bytes). Size: B + 36 * M / 16 * CP * 64
 *   bytes. A U that is not W's with these zero points
 *   gives unspecified outputs (never a fault).
 */
/** VNPU_PACK_NR - columns per panel of %VNPU_PACK_GEMM_B */
#define VNPU_PACK_NR 16
/** VNPU_PACK_MR - rows per panel of %VNPU_PACK_CONV_W */
#define VNPU_PACK_MR 6
/** VNPU_PACK_LANES_NR - output channels per panel of %VNPU_PACK_CONV_LANES */
#define VNPU_PACK_LANES_NR 32
/** VNPU_QWINO_CHUNK - channel pairs per chunk of %VNPU_PACK_QWINO_W */
#define VNPU_QWINO_CHUNK 32
/** VNPU_PACK_QMR - %VNPU_PACK_QCONV_W's rows per group are a multiple of it */
#define VNPU_PACK_QMR 12
/**
 * VNPU_QSPLIT_F_PAIRS - a %VNPU_PACK_QCONV_SPLIT tile table's flag: a step
 * schedule follows its entries
 */
#define VNPU_QSPLIT_F_PAIRS 1u

/**
 * enum vnpu_pack_layout - the packed weight layouts
 * @VNPU_PACK_GEMM_B: GEMM's B, panels of %VNPU_PACK_NR columns
 * @VNPU_PACK_CONV_W: CONV's W, per group panels of %VNPU_PACK_MR rows
 * @VNPU_PACK_QCONV_W: QLINEAR_CONV's i8 W, rows of 4-byte groups and sums
 * @VNPU_PACK_WINO_W: CONV's f32 3x3 W transformed for Winograd, per group
 *	and point panels of %VNPU_PACK_MR rows
 * @VNPU_PACK_QCONV_SPLIT: %VNPU_PACK_QCONV_W with the pairs of weights that
 *	16-bit pair sums saturate on listed apart
 * @VNPU_PACK_WINO2_W: CONV's bf16 3x3 W transformed for Winograd F(2x2,
 *	3x3), per group and point panels of %VNPU_PACK_MR rows
 * @VNPU_PACK_CONV_LANES: CONV's W, per group panels of %VNPU_PACK_LANES_NR
 *	output channels (%VNPU_LAYER_F_LANES)
 * @VNPU_PACK_WINO42_W: CONV's bf16 3x3 W transformed for Winograd F(4x2,
 *	3x3), per group and point panels of %VNPU_PACK_MR rows
 * @VNPU_PACK_QWINO_W: QLINEAR_CONV's i8 3x3 W transformed for integer
 *	Winograd F(2x2, 3x3), i16 points of channel pairs per row
 * @VNPU_PACK_QW4_W: %VNPU_PACK_QCONV_W, then W transformed for integer
 *	Winograd F(4x4, 3x3), i16 points of channel pairs per 16 rows
 */
enum vnpu_pack_layout {
	VNPU_PACK_GEMM_B = 1,
	VNPU_PACK_CONV_W = 2,
	VNPU_PACK_QCONV_W = 3,
	VNPU_PACK_WINO_W = 4,
	VNPU_PACK_QCONV_SPLIT = 5,
	VNPU_PACK_WINO2_W = 6,
	VNPU_PACK_CONV_LANES = 7,
	VNPU_PACK_WINO42_W = 8,
	VNPU_PACK_QWINO_W = 9,
	VNPU_PACK_QW4_W = 10,
};

/**
 * struct vnpu_layer_gemm - attributes of %VNPU_LAYER_GEMM
 * @flags: %VNPU_LAYER_F_* (%VNPU_LAYER_F_PACKED: B is %VNPU_PACK_GEMM_B)
 * @alpha: f32 bits, the product's factor
 * @beta: f32 bits, the bias's factor (ignored without a bias)
 * @pad: must be zero
 * @act: activation applied last
 *
 * Y = act(alpha * A x B + beta * C + R). Transposes are views: give A or B
 * with swapped dims and strides. A, B, C and R broadcast against Y on the
 * batch dimensions (A and B) or all dimensions (C and R). Y's last
 * dimension must have stride 1.
 */
struct vnpu_layer_gemm {
	__u32 flags;
	__u32 alpha;
	__u32 beta;
	__u32 pad;
	struct vnpu_layer_act act;
};

/**
 * struct vnpu_layer_conv - attributes of %VNPU_LAYER_CONV
 * @flags: %VNPU_LAYER_F_* (%VNPU_LAYER_F_PACKED: W is %VNPU_PACK_CONV_W,
 *	%VNPU_LAYER_F_WINO: W is %VNPU_PACK_WINO_W, %VNPU_LAYER_F_WINO2:
 *	W is %VNPU_PACK_WINO2_W, %VNPU_LAYER_F_WINO42: W is
 *	%VNPU_PACK_WINO42_W; either way its shape
 *	comes from @kernel and the other tensors)
 * @group: groups, >= 1, dividing C and M (group == C == M: depthwise)
 * @kernel: kernel extent (KH, KW); for 1-D, [0] is 1 and [1] is KW
 * @stride: strides (H, W), >= 1
 * @dilation: dilations (H, W), >= 1
 * @pad_begin: leading zero padding (H, W); SAME pads are made explicit by
 *	the compiler
 * @pad_end: trailing zero padding (H, W)
 * @act: activation applied last
 *
 * Y = act(conv(X, W) + B + R), where OH = (H + pads - dilation * (KH - 1)
 * - 1) / stride + 1, likewise OW. X's and Y's last dimension must have
 * stride 1.
 */
struct vnpu_layer_conv {
	__u32 flags;
	__u32 group;
	__u32 kernel[2];
	__u32 stride[2];
	__u32 dilation[2];
	__u32 pad_begin[2];
	__u32 pad_end[2];
	struct vnpu_layer_act act;
};

/**
 * enum vnpu_pool_mode - pooling
 * @VNPU_POOL_MAX: maximum (padding never wins)
 * @VNPU_POOL_AVG: average; over the window inside the input unless
 *	%VNPU_POOL_F_COUNT_PAD
 * @VNPU_POOL_LP: (sum |x|^p)^(1/p), p in &struct vnpu_layer_pool.p
 */
enum vnpu_pool_mode {
	VNPU_POOL_MAX = 1,
	VNPU_POOL_AVG = 2,
	VNPU_POOL_LP = 3,
};

/** VNPU_POOL_F_COUNT_PAD - average pooling divides by the whole window */
#define VNPU_POOL_F_COUNT_PAD	0x1u
/** VNPU_POOL_F_CEIL - output extents rounded up (ceil_mode) */
#define VNPU_POOL_F_CEIL	0x2u
#define VNPU_POOL_F_MASK	(VNPU_POOL_F_COUNT_PAD | VNPU_POOL_F_CEIL)

/**
 * struct vnpu_layer_pool - attributes of %VNPU_LAYER_POOL
 * @mode: one of &enum vnpu_pool_mode
 * @flags: %VNPU_POOL_F_*
 * @kernel: window (KH, KW); global pooling is the window of the input;
 *	for 1-D, [0] is 1
 * @stride: strides, >= 1
 * @dilation: dilations, >= 1
 * @pad_begin: leading padding
 * @pad_end: trailing padding
 * @p: the exponent of %VNPU_POOL_LP, 1 to 16; 0 otherwise
 * @pad: must be zero
 *
 * OH = floor or, with %VNPU_POOL_F_CEIL, ceil of (H + pads - dilation *
 * (KH - 1) - 1) / stride, plus 1; with ceil a last window must start inside
 * the input or its leading padding (as ONNX has it). Windows that lie in
 * the padding only give 0 (AVG without COUNT_PAD, LP) or -inf (MAX).
 */
struct vnpu_layer_pool {
	__u32 mode;
	__u32 flags;
	__u32 kernel[2];
	__u32 stride[2];
	__u32 dilation[2];
	__u32 pad_begin[2];
	__u32 pad_end[2];
	__u32 p;
	__u32 pad;
};

/**
 * enum vnpu_binary_func - element-wise binary functions
 * @VNPU_BIN_ADD: a + b
 * @VNPU_BIN_SUB: a - b
 * @VNPU_BIN_MUL: a * b
 * @VNPU_BIN_DIV: a / b (integers: truncated; division by 0 gives 0)
 * @VNPU_BIN_POW: a ^ b
 * @VNPU_BIN_MAX: max(a, b) (NaN wins)
 * @VNPU_BIN_MIN: min(a, b) (NaN wins)
 * @VNPU_BIN_MOD: ONNX Mod, fmod=0: the result has b's sign (integers)
 * @VNPU_BIN_FMOD: ONNX Mod, fmod=1: the result has a's sign
 * @VNPU_BIN_EQUAL: a == b, bool result
 * @VNPU_BIN_LESS: a < b, bool result
 * @VNPU_BIN_LESS_EQUAL: a <= b, bool result
 * @VNPU_BIN_GREATER: a > b, bool result
 * @VNPU_BIN_GREATER_EQUAL: a >= b, bool result
 * @VNPU_BIN_AND: logical and (bool only)
 * @VNPU_BIN_OR: logical or (bool only)
 * @VNPU_BIN_XOR: logical xor (bool only)
 * @VNPU_BIN_PRELU: a < 0 ? a * b : a (b is the slope)
 * @VNPU_BIN_BITAND: bitwise and (integers)
 * @VNPU_BIN_BITOR: bitwise or (integers)
 * @VNPU_BIN_BITXOR: bitwise xor (integers)
 * @VNPU_BIN_COUNT: the number of functions (not a function)
 *
 * A, B and Y share one dtype, except that comparisons give bool. Float
 * dtypes are f32, f64, f16, bf16; integers i8 to i64 and u8 to u64.
 */
enum vnpu_binary_func {
	VNPU_BIN_ADD = 0,
	VNPU_BIN_SUB = 1,
	VNPU_BIN_MUL = 2,
	VNPU_BIN_DIV = 3,
	VNPU_BIN_POW = 4,
	VNPU_BIN_MAX = 5,
	VNPU_BIN_MIN = 6,
	VNPU_BIN_MOD = 7,
	VNPU_BIN_FMOD = 8,
	VNPU_BIN_EQUAL = 9,
	VNPU_BIN_LESS = 10,
	VNPU_BIN_LESS_EQUAL = 11,
	VNPU_BIN_GREATER = 12,
	VNPU_BIN_GREATER_EQUAL = 13,
	VNPU_BIN_AND = 14,
	VNPU_BIN_OR = 15,
	VNPU_BIN_XOR = 16,
	VNPU_BIN_PRELU = 17,
	VNPU_BIN_BITAND = 18,
	VNPU_BIN_BITOR = 19,
	VNPU_BIN_BITXOR = 20,
	VNPU_BIN_COUNT,
};

/**
 * struct vnpu_layer_binary - attributes of %VNPU_LAYER_BINARY
 * @func: one of &enum vnpu_binary_func
 * @flags: must be zero
 */
struct vnpu_layer_binary {
	__u32 func;
	__u32 flags;
};

/**
 * enum vnpu_softmax_mode - the ops of %VNPU_LAYER_SOFTMAX
 * @VNPU_SOFTMAX: exp(x - max) / sum
 * @VNPU_LOG_SOFTMAX: x - max - log(sum)
 * @VNPU_HARDMAX: 1 at the first maximum, 0 elsewhere
 */
enum vnpu_softmax_mode {
	VNPU_SOFTMAX = 0,
	VNPU_LOG_SOFTMAX = 1,
	VNPU_HARDMAX = 2,
};

/**
 * struct vnpu_layer_softmax - attributes of %VNPU_LAYER_SOFTMAX
 * @mode: one of &enum vnpu_softmax_mode
 * @axis: the axis, 0 to rank - 1 (ONNX's opset < 13 flattening is a view
 *	with the trailing dimensions merged)
 */
struct vnpu_layer_softmax {
	__u32 mode;
	__u32 axis;
};

/**
 * enum vnpu_norm_mode - the ops of %VNPU_LAYER_NORM and their tensors
 * @VNPU_NORM_BATCH: BatchNormalization (inference); X [N, C, ...],
 *	scale [C], bias [C], mean [C], var [C], Y
 * @VNPU_NORM_INSTANCE: InstanceNormalization; X [N, C, ...], scale [C],
 *	bias [C], Y
 * @VNPU_NORM_LAYER: LayerNormalization over the axes from @axis on; X,
 *	scale, [bias] (with %VNPU_LAYER_F_BIAS), Y; scale and bias broadcast
 *	against X's normalized dimensions
 * @VNPU_NORM_LP: LpNormalization along @axis, p = @p (1 or 2); X, Y
 * @VNPU_NORM_LRN: LRN across channels, size @size, alpha, beta, bias in
 *	@alpha, @beta, @bias; X [N, C, ...], Y
 */
enum vnpu_norm_mode {
	VNPU_NORM_BATCH = 1,
	VNPU_NORM_INSTANCE = 2,
	VNPU_NORM_LAYER = 3,
	VNPU_NORM_LP = 4,
	VNPU_NORM_LRN = 5,
};

/**
 * struct vnpu_layer_norm - attributes of %VNPU_LAYER_NORM
 * @mode: one of &enum vnpu_norm_mode
 * @flags: %VNPU_LAYER_F_BIAS for %VNPU_NORM_LAYER, otherwise zero
 * @axis: %VNPU_NORM_LAYER and %VNPU_NORM_LP: the axis; otherwise 0
 * @p: %VNPU_NORM_LP: 1 or 2; otherwise 0
 * @size: %VNPU_NORM_LRN: the window (odd or even, >= 1); otherwise 0
 * @epsilon: f32 bits; BATCH, INSTANCE and LAYER
 * @alpha: f32 bits; LRN
 * @beta: f32 bits; LRN
 * @bias: f32 bits; LRN
 * @pad: must be zero
 */
struct vnpu_layer_norm {
	__u32 mode;
	__u32 flags;
	__u32 axis;
	__u32 p;
	__u32 size;
	__u32 epsilon;
	__u32 alpha;
	__u32 beta;
	__u32 bias;
	__u32 pad;
};

/**
 * enum vnpu_reduce_func - reductions
 * @VNPU_REDUCE_SUM: sum
 * @VNPU_REDUCE_MEAN: mean
 * @VNPU_REDUCE_MAX: maximum
 * @VNPU_REDUCE_MIN: minimum
 * @VNPU_REDUCE_PROD: product
 * @VNPU_REDUCE_L1: sum of |x|
 * @VNPU_REDUCE_L2: sqrt of the sum of squares
 * @VNPU_REDUCE_LOG_SUM: log of the sum
 * @VNPU_REDUCE_LOG_SUM_EXP: log of the sum of exp
 * @VNPU_REDUCE_SUM_SQUARE: sum of squares
 * @VNPU_REDUCE_COUNT: the number of functions (not a function)
 */
enum vnpu_reduce_func {
	VNPU_REDUCE_SUM = 0,
	VNPU_REDUCE_MEAN = 1,
	VNPU_REDUCE_MAX = 2,
	VNPU_REDUCE_MIN = 3,
	VNPU_REDUCE_PROD = 4,
	VNPU_REDUCE_L1 = 5,
	VNPU_REDUCE_L2 = 6,
	VNPU_REDUCE_LOG_SUM = 7,
	VNPU_REDUCE_LOG_SUM_EXP = 8,
	VNPU_REDUCE_SUM_SQUARE = 9,
	VNPU_REDUCE_COUNT,
};

/**
 * struct vnpu_layer_reduce - attributes of %VNPU_LAYER_REDUCE
 * @func: one of &enum vnpu_reduce_func
 * @axes: bit d set: axis d is reduced (Y's extent there is 1); bits at and
 *	above X's rank must be zero; 0 reduces nothing (a copy, ONNX's
 *	noop_with_empty_axes)
 *
 * X and Y: f32, f64, f16 or bf16 for all; i32, i64, u8, i8, u32, u64 for
 * SUM, MAX, MIN and PROD (integer arithmetic, wrapping) and L1,
 * SUM_SQUARE. An empty reduction gives the function's identity (MAX: -inf
 * or the type's lowest).
 */
struct vnpu_layer_reduce {
	__u32 func;
	__u32 axes;
};

/** VNPU_ARG_F_LAST - the last index of equal extremes, not the first */
#define VNPU_ARG_F_LAST		0x1u

/**
 * struct vnpu_layer_argreduce - attributes of %VNPU_LAYER_ARGREDUCE
 * @min: 0 for ArgMax, 1 for ArgMin
 * @axis: the axis, 0 to rank - 1, of extent >= 1
 * @flags: %VNPU_ARG_F_LAST
 * @pad: must be zero
 */
struct vnpu_layer_argreduce {
	__u32 min;
	__u32 axis;
	__u32 flags;
	__u32 pad;
};

/**
 * enum vnpu_resize_mode - interpolation of %VNPU_LAYER_RESIZE
 * @VNPU_RESIZE_NEAREST: nearest, rounded per @nearest
 * @VNPU_RESIZE_LINEAR: linear along every resized axis (bilinear ...)
 * @VNPU_RESIZE_CUBIC: cubic convolution with parameter
 *	&struct vnpu_layer_resize.cubic_a along every resized axis
 */
enum vnpu_resize_mode {
	VNPU_RESIZE_NEAREST = 0,
	VNPU_RESIZE_LINEAR = 1,
	VNPU_RESIZE_CUBIC = 2,
};

/** VNPU_RESIZE_F_EXCLUDE_OUTSIDE - cubic: taps outside the input weigh 0 */
#define VNPU_RESIZE_F_EXCLUDE_OUTSIDE	0x1u

/**
 * enum vnpu_resize_coord - ONNX's coordinate_transformation_mode
 * @VNPU_COORD_HALF_PIXEL: (y + 0.5) / scale - 0.5
 * @VNPU_COORD_ASYMMETRIC: y / scale
 * @VNPU_COORD_ALIGN_CORNERS: y * (in - 1) / (out - 1), 0 when out == 1
 * @VNPU_COORD_PYTORCH_HALF_PIXEL: half_pixel, 0 when out == 1
 * @VNPU_COORD_TF_HALF_PIXEL_FOR_NN: (y + 0.5) / scale
 * @VNPU_COORD_HALF_PIXEL_SYMMETRIC: half_pixel centred on the output
 */
enum vnpu_resize_coord {
	VNPU_COORD_HALF_PIXEL = 0,
	VNPU_COORD_ASYMMETRIC = 1,
	VNPU_COORD_ALIGN_CORNERS = 2,
	VNPU_COORD_PYTORCH_HALF_PIXEL = 3,
	VNPU_COORD_TF_HALF_PIXEL_FOR_NN = 4,
	VNPU_COORD_HALF_PIXEL_SYMMETRIC = 5,
};

/**
 * enum vnpu_resize_nearest - ONNX's nearest_mode
 * @VNPU_NEAREST_ROUND_PREFER_FLOOR: round, halves down
 * @VNPU_NEAREST_ROUND_PREFER_CEIL: round, halves up
 * @VNPU_NEAREST_FLOOR: floor
 * @VNPU_NEAREST_CEIL: ceil
 */
enum vnpu_resize_nearest {
	VNPU_NEAREST_ROUND_PREFER_FLOOR = 0,
	VNPU_NEAREST_ROUND_PREFER_CEIL = 1,
	VNPU_NEAREST_FLOOR = 2,
	VNPU_NEAREST_CEIL = 3,
};

/**
 * struct vnpu_layer_resize - attributes of %VNPU_LAYER_RESIZE
 * @mode: one of &enum vnpu_resize_mode
 * @coord: one of &enum vnpu_resize_coord
 * @nearest: one of &enum vnpu_resize_nearest (nearest mode only, else 0)
 * @flags: %VNPU_RESIZE_F_EXCLUDE_OUTSIDE (cubic only), otherwise zero
 * @scale: per axis, f32 bits of the scale ONNX uses (> 0), or 0 to use
 *	output extent / input extent; entries at and above the rank zero
 * @cubic_a: cubic: f32 bits of ONNX's cubic_coeff_a (-0.75 by default
 *	there); otherwise 0
 * @pad: must be zero
 *
 * Linear and nearest clamp the source coordinate into the input; cubic
 * clamps its four tap indices (the edge repeats).
 */
struct vnpu_layer_resize {
	__u32 mode;
	__u32 coord;
	__u32 nearest;
	__u32 flags;
	__u32 scale[VNPU_MAX_DIMS];
	__u32 cubic_a;
	__u32 pad;
};

/**
 * enum vnpu_pad_mode - ONNX Pad modes
 * @VNPU_PAD_CONSTANT: the value
 * @VNPU_PAD_REFLECT: mirrored without repeating the edge
 * @VNPU_PAD_EDGE: the edge element repeated
 * @VNPU_PAD_WRAP: the input repeated
 */
enum vnpu_pad_mode {
	VNPU_PAD_CONSTANT = 0,
	VNPU_PAD_REFLECT = 1,
	VNPU_PAD_EDGE = 2,
	VNPU_PAD_WRAP = 3,
};

/**
 * struct vnpu_layer_pad - attributes of %VNPU_LAYER_PAD
 * @mode: one of &enum vnpu_pad_mode
 * @pad: must be zero
 * @value: %VNPU_PAD_CONSTANT: the element's bit pattern in the low bytes,
 *	bytes above the element size zero; otherwise 0
 * @begin: elements added before each axis (negative: removed); the ones
 *	added after follow from Y's dims; entries at and above the rank zero
 *
 * X and Y: any dtype, the same. An axis of X with extent 0 can only be
 * padded with %VNPU_PAD_CONSTANT.
 */
struct vnpu_layer_pad {
	__u32 mode;
	__u32 pad;
	__u64 value;
	__s64 begin[VNPU_MAX_DIMS];
};

/**
 * struct vnpu_layer_gather - attributes of %VNPU_LAYER_GATHER and
 * %VNPU_LAYER_GATHER_ELEMENTS
 * @axis: the axis of data, 0 to rank - 1
 * @pad: must be zero
 *
 * data and Y: any dtype, the same. Negative indices count from the end;
 * an index out of range faults the job.
 */
struct vnpu_layer_gather {
	__u32 axis;
	__u32 pad;
};

/**
 * enum vnpu_scatter_reduction - how an update meets the element it lands on
 * @VNPU_SCATTER_NONE: replaces it
 * @VNPU_SCATTER_ADD: adds to it
 * @VNPU_SCATTER_MUL: multiplies it
 * @VNPU_SCATTER_MAX: the larger of the two
 * @VNPU_SCATTER_MIN: the smaller of the two
 */
enum vnpu_scatter_reduction {
	VNPU_SCATTER_NONE = 0,
	VNPU_SCATTER_ADD = 1,
	VNPU_SCATTER_MUL = 2,
	VNPU_SCATTER_MAX = 3,
	VNPU_SCATTER_MIN = 4,
};

/**
 * struct vnpu_layer_scatter - attributes of %VNPU_LAYER_SCATTER_ELEMENTS
 * and %VNPU_LAYER_SCATTER_ND
 * @axis: ScatterElements: the axis of data the indices select along,
 *	0 to rank - 1; ScatterND: 0
 * @reduction: one of &enum vnpu_scatter_reduction
 *
 * Y is data with the updates applied in the updates' row-major order (with
 * duplicate indices and %VNPU_SCATTER_NONE the last one stays). Data,
 * updates and Y: any dtype, the same; reductions other than none take the
 * float dtypes, i32 and i64. Negative indices count from the end; an
 * index out of range faults the job. The layer splits into ranges of Y,
 * each applying the updates that land in it in their order.
 */
struct vnpu_layer_scatter {
	__u32 axis;
	__u32 reduction;
};

/**
 * struct vnpu_layer_gather_nd - attributes of %VNPU_LAYER_GATHER_ND
 * @batch_dims: leading dims shared by data and indices (ONNX batch_dims)
 * @pad: must be zero
 *
 * data and Y: any dtype, the same. Negative indices count from the end;
 * an index out of range faults the job.
 */
struct vnpu_layer_gather_nd {
	__u32 batch_dims;
	__u32 pad;
};

/**
 * enum vnpu_grid_padding - where GridSample reads outside the input
 * @VNPU_GRID_PAD_ZEROS: zeros
 * @VNPU_GRID_PAD_BORDER: the nearest edge element
 * @VNPU_GRID_PAD_REFLECTION: the input mirrored at its borders
 */
enum vnpu_grid_padding {
	VNPU_GRID_PAD_ZEROS = 0,
	VNPU_GRID_PAD_BORDER = 1,
	VNPU_GRID_PAD_REFLECTION = 2,
};

/**
 * struct vnpu_layer_grid_sample - attributes of %VNPU_LAYER_GRID_SAMPLE
 * @mode: one of &enum vnpu_resize_mode (cubic with a = -0.75)
 * @padding: one of &enum vnpu_grid_padding
 * @align_corners: 1: -1 and 1 are the centres of the corner elements;
 *	0: their outer edges
 * @pad: must be zero
 */
struct vnpu_layer_grid_sample {
	__u32 mode;
	__u32 padding;
	__u32 align_corners;
	__u32 pad;
};

/**
 * enum vnpu_tfidf_mode - what %VNPU_LAYER_TFIDF writes per n-gram
 * @VNPU_TFIDF_TF: its count
 * @VNPU_TFIDF_IDF: its weight where it occurs, else 0
 * @VNPU_TFIDF_TFIDF: its count times its weight
 */
enum vnpu_tfidf_mode {
	VNPU_TFIDF_TF = 0,
	VNPU_TFIDF_IDF = 1,
	VNPU_TFIDF_TFIDF = 2,
};

/**
 * struct vnpu_layer_tfidf - attributes of %VNPU_LAYER_TFIDF
 * @min_gram: shortest n-gram counted, 1 to @max_gram
 * @max_gram: longest n-gram counted, at most the entries of counts
 * @max_skip: n-grams of two or more items are also taken with 1 to
 *	@max_skip items skipped between neighbours (unigrams once)
 * @mode: one of &enum vnpu_tfidf_mode
 *
 * A pool or counts that do not describe whole n-grams, an index outside Y
 * or an indexes tensor not of one entry per n-gram fault the job.
 */
struct vnpu_layer_tfidf {
	__u32 min_gram;
	__u32 max_gram;
	__u32 max_skip;
	__u32 mode;
};

/**
 * struct vnpu_layer_pool_index - attributes of %VNPU_LAYER_MAXPOOL_INDEX
 * @kernel: window (KH, KW), >= 1
 * @stride: strides, >= 1
 * @dilation: dilations, >= 1
 * @pad_begin: leading padding (the trailing padding follows from Y)
 * @storage_order: 0: I counts row-major over X ((n, c, h, w)); 1:
 *	column-major within each plane ((n, c, w, h))
 * @pad: must be zero
 *
 * Y is the largest element of each window (padding excluded; the first of
 * equal ones), I its index into X; a window in the padding only gives
 * -inf and index -1.
 */
struct vnpu_layer_pool_index {
	__u32 kernel[2];
	__u32 stride[2];
	__u32 dilation[2];
	__u32 pad_begin[2];
	__u32 storage_order;
	__u32 pad;
};

/**
 * struct vnpu_layer_roi_align - attributes of %VNPU_LAYER_ROI_ALIGN
 * @mode: 0: the average of the samples of a bin; 1: their maximum (each
 *	sample the largest of its four weighted neighbours)
 * @half_pixel: 1: ROI corners shifted by half an element (ONNX
 *	half_pixel); 0: not, and ROIs at least 1 x 1 (output_half_pixel)
 * @sampling_ratio: samples per bin along each axis; 0: ceil(ROI extent /
 *	output extent)
 * @spatial_scale: f32 bits of the scale from ROI to X coordinates (finite)
 */
struct vnpu_layer_roi_align {
	__u32 mode;
	__u32 half_pixel;
	__u32 sampling_ratio;
	__u32 spatial_scale;
};

/**
 * struct vnpu_layer_quant - attributes of %VNPU_LAYER_QUANTIZE and
 * %VNPU_LAYER_DEQUANTIZE
 * @axis: with per-axis parameters (scale and zero_point of rank 1 and
 *	extent X.dims[@axis]), the axis of X, 0 to rank - 1; 0 otherwise
 * @pad: must be zero
 *
 * Parameters are per tensor (rank 0, or rank 1 of extent 1) or per axis.
 * Quantize: Y = saturate(round_half_even(X / scale) + zero_point), the
 * division in f32. Dequantize: Y = (X - zero_point) * scale, in f32.
 */
struct vnpu_layer_quant {
	__u32 axis;
	__u32 pad;
};

/**
 * struct vnpu_layer_qgemm - attributes of %VNPU_LAYER_MATMUL_INTEGER and
 * %VNPU_LAYER_QLINEAR_MATMUL
 * @flags: must be zero
 * @pad: must be zero
 *
 * The products are summed exactly in 32-bit integers (wrapping). QLinear
 * ops then scale by a_scale * b_scale / y_scale (or x_scale * w_scale /
 * y_scale), in f32, round half to even, add the output zero point and
 * saturate.
 */
struct vnpu_layer_qgemm {
	__u32 flags;
	__u32 pad;
};

/** VNPU_LOOKUP_ENTRIES - the entries of a %VNPU_LAYER_LOOKUP table */
#define VNPU_LOOKUP_ENTRIES 256

/**
 * struct vnpu_layer_lookup - attributes of %VNPU_LAYER_LOOKUP
 * @flags: must be zero
 * @pad: must be zero
 */
struct vnpu_layer_lookup {
	__u32 flags;
	__u32 pad;
};

/* Flags of struct vnpu_layer_attention. */
#define VNPU_ATTN_F_MASK	(1u << 0)	/* the mask tensor is present */
#define VNPU_ATTN_F_DIV		(1u << 1)	/* S / scale, not S * scale */

/**
 * struct vnpu_layer_attention - attributes of %VNPU_LAYER_ATTENTION
 * @flags: %VNPU_ATTN_F_MASK, %VNPU_ATTN_F_DIV; others must be zero
 * @scale: f32 bits, finite and not zero
 */
struct vnpu_layer_attention {
	__u32 flags;
	__u32 scale;
};

/** VNPU_CHAIN_MAX_STEPS - the most steps of one %VNPU_LAYER_CHAIN */
#define VNPU_CHAIN_MAX_STEPS 8
/** VNPU_CHAIN_MAX_INPUTS - the most input tensors of one %VNPU_LAYER_CHAIN */
#define VNPU_CHAIN_MAX_INPUTS 4

/*
 * Operands of a chain step: input tensor i (%VNPU_CHAIN_IN(i), i below
 * the layer's inputs), the result of an earlier step j (%VNPU_CHAIN_STEP(j),
 * j below the step's own index) or an f32 immediate (%VNPU_CHAIN_IMM: the
 * step's @alpha for operand a, @beta for operand b).
 */
/** VNPU_CHAIN_IN - operand: input tensor @i */
#define VNPU_CHAIN_IN(i)	(i)
/** VNPU_CHAIN_STEP - operand: the result of step @j */
#define VNPU_CHAIN_STEP(j)	(16 + (j))
/** VNPU_CHAIN_IMM - operand: the step's immediate */
#define VNPU_CHAIN_IMM		32

/**
 * enum vnpu_chain_kind - what a chain step computes
 * @VNPU_CHAIN_UNARY: &enum vnpu_act_func @func of operand a, with @alpha
 *	and @beta its parameters (as in &struct vnpu_layer_act, no flags);
 *	operand a an input or a step, operand b 0
 * @VNPU_CHAIN_BINARY: &enum vnpu_binary_func @func of operands a and b:
 *	%VNPU_BIN_ADD, _SUB, _MUL, _DIV, _MAX or _MIN; at most one of them
 *	an immediate
 */
enum vnpu_chain_kind {
	VNPU_CHAIN_UNARY = 1,
	VNPU_CHAIN_BINARY = 2,
};

/**
 * struct vnpu_chain_step - one step of &struct vnpu_layer_chain
 * @kind: one of &enum vnpu_chain_kind
 * @func: the function
 * @a: operand a (%VNPU_CHAIN_IN, %VNPU_CHAIN_STEP or %VNPU_CHAIN_IMM)
 * @b: operand b of a binary step; 0 for a unary one
 * @alpha: f32 bits: the function's first parameter (unary), or operand
 *	a's immediate (binary; else 0)
 * @beta: f32 bits: the function's second parameter (unary), or operand
 *	b's immediate (binary; else 0)
 */
struct vnpu_chain_step {
	__u32 kind;
	__u32 func;
	__u32 a;
	__u32 b;
	__u32 alpha;
	__u32 beta;
};

/**
 * struct vnpu_layer_chain - attributes of %VNPU_LAYER_CHAIN
 * @num_steps: steps, 1 to %VNPU_CHAIN_MAX_STEPS
 * @pad: must be zero
 * @steps: the steps, run in order for every element of Y; Y is the last
 *	one's result; entries from @num_steps on all zero
 *
 * Each step gives every element what the UNARY or BINARY layer of its
 * function gives on f32 tensors holding its operands, so a chain's Y is
 * bit for bit the Y of its steps run as layers one after the other; the
 * inputs are read once and Y written once, whatever the number of steps.
 */
struct vnpu_layer_chain {
	__u32 num_steps;
	__u32 pad;
	struct vnpu_chain_step steps[VNPU_CHAIN_MAX_STEPS];
};

/**
 * struct vnpu_layer_lstm - attributes of %VNPU_LAYER_LSTM
 * @f: the gates' function (ONNX's f: i, o and f go through it)
 * @g: the cell input's function (ONNX's g)
 * @h: the output's function (ONNX's h)
 * @flags: must be zero
 * @pad: must be zero
 *
 * The functions are UNARY's on f32, without flags. Each step of each
 * direction gives what a GEMM of H_prev by R's panels with XW's row as
 * its residual (alpha and beta 1) followed by these element-wise layers
 * gives: C = f(Gf) * C + f(Gi) * g(Gc), H = f(Go) * h(C), every product
 * and sum rounded to f32; Y_h and Y_c hold the states after the last step.
 */
struct vnpu_layer_lstm {
	struct vnpu_layer_act f;
	struct vnpu_layer_act g;
	struct vnpu_layer_act h;
	__u32 flags;
	__u32 pad;
};

#if defined(__cplusplus)
}
#endif

#endif /* _VNPU_LAYERS_H_ */

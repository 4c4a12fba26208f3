// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A layer's checks (vnpu_eng_layer_check()): each tensor's dtype, dims
 * and strides and the attributes, one check per op, so that the kernels
 * take any layer that passes. Integer only, as the rest of the integer
 * half (vnpu_engine.c).
 */
#include "vnpu_eng_priv.h"

#define ENG_MAX_PAD	(1u << 20)
/*
 * Work that cannot be split, bounded so that one unit (one FPU section in
 * vnpu.ko) stays well under a second: the reduction length of a GEMM or
 * CONV output, and a pooling window.
 */
#define ENG_MAX_DEPTH	(1ull << 19)
#define ENG_MAX_WINDOW_ELEMS	(1ull << 24)
/* The elements one output of a row-wise op (reduce, softmax...) reads. */
#define ENG_MAX_ROW	(1ull << 28)

static int is_float(__u32 dtype)
{
	return dtype == VNPU_DTYPE_F32 || dtype == VNPU_DTYPE_F64 ||
	       dtype == VNPU_DTYPE_F16 || dtype == VNPU_DTYPE_BF16;
}

/* The float storage types: f32, and f16 and bf16 computed in f32. */
static int is_fstore(__u32 dtype)
{
	return dtype == VNPU_DTYPE_F32 || dtype == VNPU_DTYPE_F16 ||
	       dtype == VNPU_DTYPE_BF16;
}

static int is_int(__u32 dtype)
{
	return vnpu_eng_dtype_size(dtype) && !is_float(dtype) &&
	       dtype != VNPU_DTYPE_BOOL;
}

static int is_numeric(__u32 dtype)
{
	return is_float(dtype) || is_int(dtype);
}

/* An f32 attribute: any finite value. */
static int f32_ok(__u32 bits)
{
	return ((bits >> 23) & 0xff) != 0xff;
}

static int f32_positive(__u32 bits)
{
	return f32_ok(bits) && !(bits >> 31) && (bits & 0x7fffffff);
}

/* Dims small enough that no product of them overflows. */
static int tensor_ok(const struct vnpu_cmd_tensor *t)
{
	__u64 n = 1;
	__u32 d;

	if (!vnpu_eng_dtype_size(t->dtype) || t->rank > VNPU_MAX_DIMS)
		return 0;
	for (d = 0; d < t->rank; d++) {
		if (t->dims[d] > ENG_MAX_DIM)
			return 0;
		n *= t->dims[d] ? t->dims[d] : 1;
		if (n > ENG_MAX_NUMEL)
			return 0;
	}
	return 1;
}

/*
 * An output must not alias itself, or parts would race: with the dims of
 * extent > 1 sorted by stride, each stride must clear the span of the
 * ones below it.
 */
static int tensor_injective(const struct vnpu_cmd_tensor *t)
{
	__u32 used = 0, i, d, best;
	__u64 span = 0;

	if (!vnpu_eng_numel(t))
		return 1;
	for (i = 0; i < t->rank; i++) {
		best = VNPU_MAX_DIMS;
		for (d = 0; d < t->rank; d++) {
			if ((used >> d) & 1 || t->dims[d] <= 1)
				continue;
			if (best == VNPU_MAX_DIMS ||
			    t->strides[d] < t->strides[best])
				best = d;
		}
		if (best == VNPU_MAX_DIMS)
			break;
		used |= 1u << best;
		if (t->strides[best] <= 0 || (__u64)t->strides[best] <= span)
			return 0;
		span += (t->dims[best] - 1) * (__u64)t->strides[best];
	}
	return 1;
}

static int same_dims(const struct vnpu_cmd_tensor *a, const struct vnpu_cmd_tensor *b)
{
	__u32 d;

	if (a->rank != b->rank)
		return 0;
	for (d = 0; d < a->rank; d++)
		if (a->dims[d] != b->dims[d])
			return 0;
	return 1;
}

/*
 * numpy broadcasting of @in against @out, right-aligned, ignoring the
 * last @skip dims of both (GEMM's matrix dims).
 */
static int bcast_ok(const struct vnpu_cmd_tensor *in, const struct vnpu_cmd_tensor *out,
		    __u32 skip)
{
	__u32 i;

	if (in->rank > out->rank || in->rank < skip)
		return 0;
	for (i = skip; i < in->rank; i++) {
		__u64 a = in->dims[in->rank - 1 - i];
		__u64 b = out->dims[out->rank - 1 - i];

		if (a != b && a != 1)
			return 0;
	}
	return 1;
}

/*
 * @a on @dtype; @fused: GEMM's or CONV's activation, which may take one
 * bound (VNPU_ACT_F_MAX or _MIN) after a function without beta.
 */
static int act_ok(const struct vnpu_layer_act *a, __u32 dtype, int fused)
{
	if (a->func >= VNPU_ACT_COUNT || !f32_ok(a->alpha) || !f32_ok(a->beta))
		return 0;
	if (a->flags && (!fused ||
			 (a->flags != VNPU_ACT_F_MAX && a->flags != VNPU_ACT_F_MIN) ||
			 (a->func != VNPU_ACT_IDENTITY && a->func != VNPU_ACT_RELU &&
			  a->func != VNPU_ACT_LEAKY_RELU)))
		return 0;
	if (dtype == VNPU_DTYPE_BOOL)
		return a->func == VNPU_ACT_NOT || a->func == VNPU_ACT_IDENTITY;
	if (a->func == VNPU_ACT_NOT)
		return 0;
	if (is_int(dtype))
		return a->func == VNPU_ACT_IDENTITY || a->func == VNPU_ACT_RELU ||
		       a->func == VNPU_ACT_ABS || a->func == VNPU_ACT_NEG ||
		       a->func == VNPU_ACT_SIGN || a->func == VNPU_ACT_CLIP;
	/* CELU divides by alpha. */
	if (a->func == VNPU_ACT_CELU && !(a->alpha & 0x7fffffff))
		return 0;
	return is_float(dtype);
}

static int all_dtype(const struct vnpu_cmd_tensor *t, __u32 n, __u32 dtype)
{
	__u32 i;

	for (i = 0; i < n; i++)
		if (t[i].dtype != dtype)
			return 0;
	return 1;
}

static __u32 popcount2(__u32 flags)
{
	return !!(flags & VNPU_LAYER_F_BIAS) + !!(flags & VNPU_LAYER_F_RESIDUAL);
}

/* ---- checks, one per op ---------------------------------------------- */

/*
 * A [..., M, K] times B [..., K, N] into Y [..., M, N] (B unchecked when
 * NULL), batch dims broadcasting, Y's rows dense.
 */
static int matmul_shapes_ok(const struct vnpu_cmd_tensor *ta,
			    const struct vnpu_cmd_tensor *tb,
			    const struct vnpu_cmd_tensor *y)
{
	if (y->rank < 2 || !tensor_injective(y) || ta->rank < 2 ||
	    !bcast_ok(ta, y, 2) || ta->dims[ta->rank - 2] != y->dims[y->rank - 2])
		return 0;
	if (y->dims[y->rank - 1] > 1 && y->strides[y->rank - 1] != 1)
		return 0;
	if (ta->dims[ta->rank - 1] > ENG_MAX_DEPTH)
		return 0;
	return !tb || (tb->rank >= 2 && bcast_ok(tb, y, 2) &&
		       tb->dims[tb->rank - 2] == ta->dims[ta->rank - 1] &&
		       tb->dims[tb->rank - 1] == y->dims[y->rank - 1]);
}

/*
 * GEMM and CONV tensors: each f32, f16 or bf16 (computed in f32), packed
 * weights too (f16 and bf16 panels are widened a slice at a time).
 */
static int gemm_dtypes_ok(const struct vnpu_cmd_tensor *t, __u32 n)
{
	__u32 i;

	for (i = 0; i < n; i++)
		if (!is_fstore(t[i].dtype))
			return 0;
	return 1;
}

static int check_gemm(const struct vnpu_cmd_tensor *t, __u32 n,
		      const struct vnpu_layer_gemm *a)
{
	const struct vnpu_cmd_tensor *y = &t[n - 1], *ta = &t[0], *tb = &t[1];
	__u64 k;
	__u32 i;

	if (a->flags & ~VNPU_LAYER_F_MASK || a->pad || !f32_ok(a->alpha) ||
	    !f32_ok(a->beta) || !act_ok(&a->act, VNPU_DTYPE_F32, 1) ||
	    n != 3 + popcount2(a->flags) || !gemm_dtypes_ok(t, n))
		return 0;
	if (!matmul_shapes_ok(ta, a->flags & VNPU_LAYER_F_PACKED ? 0 : tb,
			      y))
		return 0;
	k = ta->dims[ta->rank - 1];
	if (a->flags & VNPU_LAYER_F_PACKED) {
		if (tb->rank != 1 || (tb->dims[0] > 1 && tb->strides[0] != 1) ||
		    tb->dims[0] != vnpu_eng_packed_size(VNPU_PACK_GEMM_B, 1, k,
							y->dims[y->rank - 1]))
			return 0;
	}
	for (i = 2; i < n - 1; i++)
		if (!bcast_ok(&t[i], y, 0))
			return 0;
	return 1;
}

static int conv_pool_geometry(__u32 rank, const __u32 *kernel,
			      const __u32 *stride, const __u32 *dilation,
			      const __u32 *pad_begin, const __u32 *pad_end)
{
	__u32 d;

	for (d = 0; d < 2; d++)
		if (!kernel[d] || !stride[d] || !dilation[d] ||
		    kernel[d] > ENG_MAX_PAD || stride[d] > ENG_MAX_PAD ||
		    dilation[d] > ENG_MAX_PAD || pad_begin[d] > ENG_MAX_PAD ||
		    pad_end[d] > ENG_MAX_PAD)
			return 0;
	/* 1-D: the height axis is the identity. */
	return rank == 4 || (rank == 3 && kernel[0] == 1 && stride[0] == 1 &&
			     dilation[0] == 1 && !pad_begin[0] && !pad_end[0]);
}

/* Output extent of a window op, or -1 when the window does not fit. */
static __s64 window_out(__u64 in, __u32 k, __u32 s, __u32 dil, __u32 pb,
			__u32 pe, int ceil)
{
	__s64 span = (__s64)in + pb + pe - (__s64)dil * (k - 1) - 1;
	__s64 o;

	if (span < 0)
		return -1;
	o = (ceil ? (span + s - 1) / s : span / s) + 1;
	/* The last window must start inside the input or leading pad. */
	if (ceil && (o - 1) * s >= (__s64)in + pb)
		o--;
	return o;
}

/* Y's innermost dims dense, so a channel is one row of OH * OW. */
static int spatial_dense(const struct vnpu_cmd_tensor *t)
{
	__u32 r = t->rank;

	if (t->dims[r - 1] > 1 && t->strides[r - 1] != 1)
		return 0;
	return r == 3 || t->dims[2] <= 1 ||
	       t->strides[2] == (__s64)t->dims[3];
}

/* X, W (unpacked unless @packed) and Y of a convolution agree with @a. */
static int conv_shapes_ok(const struct vnpu_cmd_tensor *x,
			  const struct vnpu_cmd_tensor *w,
			  const struct vnpu_cmd_tensor *y,
			  const struct vnpu_layer_conv *a, int packed)
{
	__u64 c, m, cg, d;
	__u32 r = x->rank;

	if (!a->group || (r != 3 && r != 4) || y->rank != r ||
	    !conv_pool_geometry(r, a->kernel, a->stride, a->dilation,
				a->pad_begin, a->pad_end))
		return 0;
	c = x->dims[1];
	m = y->dims[1];
	if (c % a->group || m % a->group || y->dims[0] != x->dims[0] ||
	    !tensor_injective(y) || !spatial_dense(y))
		return 0;
	cg = c / a->group;
	if (cg * a->kernel[0] * a->kernel[1] > ENG_MAX_DEPTH)
		return 0;
	for (d = 0; d + 2 < r; d++) {
		__u32 s = r == 3 ? 1 : d;

		if ((__s64)y->dims[d + 2] !=
		    window_out(x->dims[d + 2], a->kernel[s], a->stride[s],
			       a->dilation[s], a->pad_begin[s], a->pad_end[s], 0))
			return 0;
	}
	if (packed)
		return w->rank == 1 && (w->dims[0] <= 1 || w->strides[0] == 1) &&
		       w->dims[0] == vnpu_eng_packed_size((__u32)packed,
							  a->group, m / a->group,
							  cg * a->kernel[0] *
							  a->kernel[1]);
	return w->rank == r && w->dims[0] == m && w->dims[1] == cg &&
	       w->dims[r - 1] == a->kernel[1] &&
	       (r == 3 || w->dims[2] == a->kernel[0]);
}

/*
 * The input window of a windowed convolution must fit the scratch limit,
 * and its offsets 32 bits.
 */
static int conv_window_ok(const struct vnpu_cmd_tensor *x,
			  const struct vnpu_layer_conv *a)
{
	__u64 wp = x->dims[x->rank - 1] + a->pad_begin[1] + a->pad_end[1];
	__u64 wq = eng_div_up(wp, a->stride[1]);
	__u64 rows = eng_conv_win_rows(ENG_NC, wq, a->kernel[0],
				       a->dilation[0], a->stride[0]);

	if (!eng_conv_windowed(a))
		return 1;
	return sat_mul(sat_mul(sat_mul(x->dims[1] / a->group, rows),
			       (__u64)a->stride[0] * a->stride[1]),
		       wq + ENG_NC) < ENG_MAX_WINDOW;
}

/*
 * A CONV with its output channels on the lanes (%VNPU_LAYER_F_LANES): f32
 * X of rank 4 and packed f32 W, not Winograd, strides 1 or 2, dilations
 * 1, pads below the kernel (with padding or strides, a copy of a group's
 * input planes within ENG_MAX_WINDOW); the taps' offsets in a group's
 * channels fit 31 bits (struct eng_lanes_tile's table).
 */
static int lanes_fits(const struct vnpu_cmd_tensor *t,
		      const struct vnpu_layer_conv *a)
{
	const struct vnpu_cmd_tensor *x = &t[0];
	__u64 reach[3];
	int d;

	if (!(a->flags & VNPU_LAYER_F_PACKED) ||
	    (a->flags & (VNPU_LAYER_F_WINO | VNPU_LAYER_F_WINO2 |
			 VNPU_LAYER_F_WINO42)) ||
	    x->dtype != VNPU_DTYPE_F32 || t[1].dtype != VNPU_DTYPE_F32 ||
	    x->rank != 4 || !a->group ||
	    a->stride[0] < 1 || a->stride[0] > 2 ||
	    a->stride[1] < 1 || a->stride[1] > 2 ||
	    a->dilation[0] != 1 || a->dilation[1] != 1 ||
	    a->pad_begin[0] >= a->kernel[0] || a->pad_end[0] >= a->kernel[0] ||
	    a->pad_begin[1] >= a->kernel[1] || a->pad_end[1] >= a->kernel[1])
		return 0;
	/* The copy of a group's planes: the tiles' input, in scratch. */
	if (eng_lanes_copied(a) &&
	    sat_mul(sat_mul(x->dims[1] / a->group,
			    x->dims[2] + a->pad_begin[0] + a->pad_end[0]),
		    x->dims[3] + a->pad_begin[1] + a->pad_end[1] + 1) >=
	    ENG_MAX_WINDOW)
		return 0;
	for (d = 1; d < 4; d++)
		if (x->strides[d] < 0)
			return 0;
	reach[0] = sat_mul(x->dims[1] / a->group, (__u64)x->strides[1]);
	reach[1] = sat_mul(a->kernel[0], (__u64)x->strides[2]);
	reach[2] = sat_mul(a->kernel[1], (__u64)x->strides[3]);
	return reach[0] < ENG_MAX_DIM && reach[1] < ENG_MAX_DIM &&
	       reach[2] < ENG_MAX_DIM &&
	       reach[0] + reach[1] + reach[2] < ENG_MAX_DIM;
}

static int check_conv(const struct vnpu_cmd_tensor *t, __u32 n,
		      const struct vnpu_layer_conv *a)
{
	const struct vnpu_cmd_tensor *y = &t[n - 1];
	__u32 i = 2;
	__u32 wino = a->flags & (VNPU_LAYER_F_WINO | VNPU_LAYER_F_WINO2 |
				 VNPU_LAYER_F_WINO42);
	__u32 lanes = a->flags & VNPU_LAYER_F_LANES;

	/* One Winograd kind at most (eng_wino_fits() checks). */
	if (a->flags & ~(VNPU_LAYER_F_MASK | VNPU_LAYER_F_WINO |
			 VNPU_LAYER_F_WINO2 | VNPU_LAYER_F_WINO42 |
			 VNPU_LAYER_F_LANES) ||
	    !act_ok(&a->act, VNPU_DTYPE_F32, 1) ||
	    n != 3 + popcount2(a->flags) || !gemm_dtypes_ok(t, n) ||
	    (wino && !eng_wino_fits(a, &t[0], t[1].dtype)) ||
	    (lanes && !lanes_fits(t, a)) ||
	    !conv_shapes_ok(&t[0], &t[1], y, a,
			    wino == VNPU_LAYER_F_WINO2 ? VNPU_PACK_WINO2_W :
			    wino == VNPU_LAYER_F_WINO42 ? VNPU_PACK_WINO42_W :
			    wino ? VNPU_PACK_WINO_W :
			    lanes ? VNPU_PACK_CONV_LANES :
			    a->flags & VNPU_LAYER_F_PACKED ?
			    VNPU_PACK_CONV_W : 0) ||
	    (!lanes && !conv_window_ok(&t[0], a)))
		return 0;
	if (a->flags & VNPU_LAYER_F_BIAS) {
		if (t[i].rank != 1 || t[i].dims[0] != y->dims[1])
			return 0;
		i++;
	}
	if (a->flags & VNPU_LAYER_F_RESIDUAL)
		if (!same_dims(&t[i], y) || !spatial_dense(&t[i]))
			return 0;
	return 1;
}

static int check_pool(const struct vnpu_cmd_tensor *t, __u32 n,
		      const struct vnpu_layer_pool *a)
{
	const struct vnpu_cmd_tensor *x = &t[0], *y = &t[1];
	__u32 d, r = x->rank;

	if (n != 2 || a->mode < VNPU_POOL_MAX || a->mode > VNPU_POOL_LP ||
	    (__u64)a->kernel[0] * a->kernel[1] > ENG_MAX_WINDOW_ELEMS ||
	    a->flags & ~VNPU_POOL_F_MASK || a->pad ||
	    (a->mode == VNPU_POOL_LP ? a->p < 1 || a->p > 16 : a->p != 0) ||
	    !(is_fstore(x->dtype) ||
	      (a->mode == VNPU_POOL_MAX &&
	       (x->dtype == VNPU_DTYPE_U8 || x->dtype == VNPU_DTYPE_I8))) ||
	    !all_dtype(t, 2, x->dtype) ||
	    (r != 3 && r != 4) || y->rank != r || !tensor_injective(y) ||
	    !conv_pool_geometry(r, a->kernel, a->stride, a->dilation,
				a->pad_begin, a->pad_end) ||
	    x->dims[0] != y->dims[0] || x->dims[1] != y->dims[1])
		return 0;
	for (d = 0; d + 2 < r; d++) {
		__u32 s = r == 3 ? 1 : d;

		if ((__s64)y->dims[d + 2] !=
		    window_out(x->dims[d + 2], a->kernel[s], a->stride[s],
			       a->dilation[s], a->pad_begin[s], a->pad_end[s],
			       !!(a->flags & VNPU_POOL_F_CEIL)))
			return 0;
	}
	return 1;
}

static int binary_types_ok(__u32 func, __u32 in, __u32 out)
{
	switch (func) {
	case VNPU_BIN_EQUAL:
		return out == VNPU_DTYPE_BOOL &&
		       (is_numeric(in) || in == VNPU_DTYPE_BOOL);
	case VNPU_BIN_LESS:
	case VNPU_BIN_LESS_EQUAL:
	case VNPU_BIN_GREATER:
	case VNPU_BIN_GREATER_EQUAL:
		return out == VNPU_DTYPE_BOOL && is_numeric(in);
	case VNPU_BIN_AND:
	case VNPU_BIN_OR:
	case VNPU_BIN_XOR:
		return in == VNPU_DTYPE_BOOL && out == VNPU_DTYPE_BOOL;
	case VNPU_BIN_BITAND:
	case VNPU_BIN_BITOR:
	case VNPU_BIN_BITXOR:
		return in == out && is_int(in);
	case VNPU_BIN_PRELU:
		return in == out && is_float(in);
	default:
		return in == out && is_numeric(in);
	}
}

static int check_binary(const struct vnpu_cmd_tensor *t, __u32 n,
			const struct vnpu_layer_binary *a)
{
	return n == 3 && a->func < VNPU_BIN_COUNT && !a->flags &&
	       t[0].dtype == t[1].dtype &&
	       binary_types_ok(a->func, t[0].dtype, t[2].dtype) &&
	       tensor_injective(&t[2]) && bcast_ok(&t[0], &t[2], 0) &&
	       bcast_ok(&t[1], &t[2], 0);
}

static int check_where(const struct vnpu_cmd_tensor *t, __u32 n)
{
	return n == 4 && t[0].dtype == VNPU_DTYPE_BOOL &&
	       t[1].dtype == t[3].dtype && t[2].dtype == t[3].dtype &&
	       tensor_injective(&t[3]) && bcast_ok(&t[0], &t[3], 0) &&
	       bcast_ok(&t[1], &t[3], 0) && bcast_ok(&t[2], &t[3], 0);
}

static int check_unary(const struct vnpu_cmd_tensor *t, __u32 n,
		       const struct vnpu_layer_act *a)
{
	return n == 2 && t[0].dtype == t[1].dtype && act_ok(a, t[0].dtype, 0) &&
	       same_dims(&t[0], &t[1]) && tensor_injective(&t[1]);
}

/*
 * An operand of chain step @k: one of @inputs, an earlier step or, where
 * @imm, the step's immediate.
 */
static int chain_operand_ok(__u32 ref, __u32 k, __u32 inputs, int imm)
{
	if (ref == VNPU_CHAIN_IMM)
		return imm;
	if (ref >= VNPU_CHAIN_STEP(0))
		return ref - VNPU_CHAIN_STEP(0) < k;
	return ref < inputs;
}

static int chain_step_ok(const struct vnpu_chain_step *st, __u32 k,
			 __u32 inputs)
{
	struct vnpu_layer_act act = { st->func, 0, st->alpha, st->beta };

	switch (st->kind) {
	case VNPU_CHAIN_UNARY:
		return !st->b && chain_operand_ok(st->a, k, inputs, 0) &&
		       act_ok(&act, VNPU_DTYPE_F32, 0);
	case VNPU_CHAIN_BINARY:
		if (st->func != VNPU_BIN_ADD && st->func != VNPU_BIN_SUB &&
		    st->func != VNPU_BIN_MUL && st->func != VNPU_BIN_DIV &&
		    st->func != VNPU_BIN_MAX && st->func != VNPU_BIN_MIN)
			return 0;
		if ((st->a != VNPU_CHAIN_IMM && st->alpha) ||
		    (st->b != VNPU_CHAIN_IMM && st->beta) ||
		    (st->a == VNPU_CHAIN_IMM && st->b == VNPU_CHAIN_IMM))
			return 0;
		return chain_operand_ok(st->a, k, inputs, 1) &&
		       chain_operand_ok(st->b, k, inputs, 1) &&
		       f32_ok(st->alpha) && f32_ok(st->beta);
	default:
		return 0;
	}
}

static int check_chain(const struct vnpu_cmd_tensor *t, __u32 n,
		       const struct vnpu_layer_chain *a)
{
	__u32 i, k;

	if (n < 2 || n > VNPU_CHAIN_MAX_INPUTS + 1 || a->pad || !a->num_steps ||
	    a->num_steps > VNPU_CHAIN_MAX_STEPS ||
	    !all_dtype(t, n, VNPU_DTYPE_F32) || !tensor_injective(&t[n - 1]))
		return 0;
	for (i = 0; i + 1 < n; i++)
		if (!bcast_ok(&t[i], &t[n - 1], 0))
			return 0;
	for (k = 0; k < a->num_steps; k++)
		if (!chain_step_ok(&a->steps[k], k, n - 1))
			return 0;
	for (; k < VNPU_CHAIN_MAX_STEPS; k++) {
		const struct vnpu_chain_step *z = &a->steps[k];

		if (z->kind || z->func || z->a || z->b || z->alpha || z->beta)
			return 0;
	}
	return 1;
}

/* @t is f32 of the @rank dims @d, its elements packed in order. */
static int dense_f32(const struct vnpu_cmd_tensor *t, __u32 rank, const __u64 *d)
{
	__s64 st = 1;
	__u32 i;

	if (t->dtype != VNPU_DTYPE_F32 || t->rank != rank)
		return 0;
	for (i = rank; i-- > 0;) {
		if (t->dims[i] != d[i] || (d[i] > 1 && t->strides[i] != st))
			return 0;
		st *= (__s64)d[i];
	}
	return 1;
}

static int lstm_act_ok(const struct vnpu_layer_act *a)
{
	return !a->flags && act_ok(a, VNPU_DTYPE_F32, 0);
}

/* XW [S, D, B, 4H], R, H0 and C0 [D, B, H], Y [S, D, B, H], Y_h, Y_c. */
static int check_lstm(const struct vnpu_cmd_tensor *t, __u32 n,
		      const struct vnpu_layer_lstm *a)
{
	const struct vnpu_cmd_tensor *xw = &t[0], *r = &t[1];
	__u64 y[4], state[3], h, per;
	__u32 i;

	if (n != 7 || a->flags || a->pad || !lstm_act_ok(&a->f) ||
	    !lstm_act_ok(&a->g) || !lstm_act_ok(&a->h) || xw->rank != 4 ||
	    xw->dims[3] % 4)
		return 0;
	h = xw->dims[3] / 4;
	if (!h || h > ENG_MAX_DEPTH || !dense_f32(xw, 4, xw->dims))
		return 0;
	for (i = 0; i < 3; i++) {
		y[i] = xw->dims[i];
		state[i] = i < 2 ? xw->dims[i + 1] : h;
	}
	y[3] = h;
	if (!dense_f32(&t[4], 4, y))
		return 0;
	for (i = 2; i < n; i++)
		if (i != 4 && !dense_f32(&t[i], 3, state))
			return 0;
	/* The directions' panels one after the other. */
	per = vnpu_eng_packed_size(VNPU_PACK_GEMM_B, 1, h, 4 * h);
	return per && (r->dtype == VNPU_DTYPE_F32 || r->dtype == VNPU_DTYPE_F16 ||
		       r->dtype == VNPU_DTYPE_BF16) && r->rank == 1 &&
	       (r->dims[0] <= 1 || r->strides[0] == 1) &&
	       r->dims[0] % per == 0 && r->dims[0] / per == state[0];
}

static int check_softmax(const struct vnpu_cmd_tensor *t, __u32 n,
			 const struct vnpu_layer_softmax *a)
{
	return n == 2 && a->mode <= VNPU_HARDMAX && a->axis < t[0].rank &&
	       t[0].dims[a->axis] <= ENG_MAX_ROW &&
	       is_fstore(t[0].dtype) && all_dtype(t, 2, t[0].dtype) &&
	       same_dims(&t[0], &t[1]) &&
	       tensor_injective(&t[1]);
}

/* A per-channel parameter: [C] of X [N, C, ...]. */
static int channel_param(const struct vnpu_cmd_tensor *p,
			 const struct vnpu_cmd_tensor *x)
{
	return p->rank == 1 && x->rank >= 2 && p->dims[0] == x->dims[1];
}

/* The elements one output of a normalization reads. */
static __u64 norm_row_len(const struct vnpu_cmd_tensor *x,
			  const struct vnpu_layer_norm *a)
{
	__u64 len = 1;
	__u32 d;

	switch (a->mode) {
	case VNPU_NORM_LAYER:
		for (d = a->axis; d < x->rank; d++)
			len *= x->dims[d];
		return len;
	case VNPU_NORM_LP:
		return a->axis < x->rank ? x->dims[a->axis] : 0;
	default:
		for (d = 2; d < x->rank; d++)
			len *= x->dims[d];
		return x->rank > 1 ? len + x->dims[1] : 0;
	}
}

static int check_norm(const struct vnpu_cmd_tensor *t, __u32 n,
		      const struct vnpu_layer_norm *a)
{
	const struct vnpu_cmd_tensor *x = &t[0], *y = &t[n - 1];
	__u32 i, want_flags = 0;

	if (a->pad || n < 2 || !is_fstore(x->dtype) || !all_dtype(t, n, x->dtype) ||
	    !same_dims(x, y) || !tensor_injective(y) || !f32_ok(a->epsilon) ||
	    !f32_ok(a->alpha) || !f32_ok(a->beta) || !f32_ok(a->bias))
		return 0;
	if (a->mode == VNPU_NORM_LAYER)
		want_flags = a->flags & VNPU_LAYER_F_BIAS;
	if (a->flags != want_flags)
		return 0;
	if (a->mode != VNPU_NORM_LAYER && a->mode != VNPU_NORM_LP && a->axis)
		return 0;
	if (a->mode != VNPU_NORM_LP && a->p)
		return 0;
	if (a->mode != VNPU_NORM_LRN && (a->size || a->alpha || a->beta ||
					 a->bias))
		return 0;
	if ((a->mode == VNPU_NORM_LP || a->mode == VNPU_NORM_LRN) && a->epsilon)
		return 0;
	if (norm_row_len(x, a) > ENG_MAX_ROW)
		return 0;
	switch (a->mode) {
	case VNPU_NORM_BATCH:
		if (n != 6)
			return 0;
		for (i = 1; i < 5; i++)
			if (!channel_param(&t[i], x))
				return 0;
		return 1;
	case VNPU_NORM_INSTANCE:
		return n == 4 && x->rank >= 3 && channel_param(&t[1], x) &&
		       channel_param(&t[2], x);
	case VNPU_NORM_LAYER:
		if (a->axis >= x->rank || n != 3 + !!a->flags)
			return 0;
		for (i = 1; i < n - 1; i++)
			if (t[i].rank > x->rank - a->axis || !bcast_ok(&t[i], x, 0))
				return 0;
		return 1;
	case VNPU_NORM_LP:
		return n == 2 && a->axis < x->rank && (a->p == 1 || a->p == 2);
	case VNPU_NORM_LRN:
		return n == 2 && x->rank >= 2 && a->size >= 1 &&
		       a->size <= ENG_MAX_PAD;
	default:
		return 0;
	}
}

static int reduce_types_ok(__u32 func, __u32 dtype)
{
	if (is_float(dtype))
		return 1;
	if (!is_int(dtype))
		return 0;
	return func == VNPU_REDUCE_SUM || func == VNPU_REDUCE_MAX ||
	       func == VNPU_REDUCE_MIN || func == VNPU_REDUCE_PROD ||
	       func == VNPU_REDUCE_L1 || func == VNPU_REDUCE_SUM_SQUARE ||
	       func == VNPU_REDUCE_MEAN;
}

/* Y has X's rank with extent 1 on @axes and X's extents elsewhere. */
static int reduced_dims(const struct vnpu_cmd_tensor *x,
			const struct vnpu_cmd_tensor *y, __u32 axes)
{
	__u32 d;

	if (x->rank != y->rank || axes >> x->rank)
		return 0;
	for (d = 0; d < x->rank; d++)
		if (y->dims[d] != ((axes >> d) & 1 ? 1 : x->dims[d]))
			return 0;
	return 1;
}

static int check_reduce(const struct vnpu_cmd_tensor *t, __u32 n,
			const struct vnpu_layer_reduce *a)
{
	return n == 2 && a->func < VNPU_REDUCE_COUNT &&
	       t[0].dtype == t[1].dtype && reduce_types_ok(a->func, t[0].dtype) &&
	       reduced_dims(&t[0], &t[1], a->axes) && tensor_injective(&t[1]) &&
	       vnpu_eng_numel(&t[0]) <=
	       ENG_MAX_ROW * (vnpu_eng_numel(&t[1]) ? vnpu_eng_numel(&t[1]) : 1);
}

static int check_argreduce(const struct vnpu_cmd_tensor *t, __u32 n,
			   const struct vnpu_layer_argreduce *a)
{
	return n == 2 && a->min <= 1 && !(a->flags & ~VNPU_ARG_F_LAST) &&
	       !a->pad && a->axis < t[0].rank && t[0].dims[a->axis] >= 1 &&
	       t[0].dims[a->axis] <= ENG_MAX_ROW &&
	       is_numeric(t[0].dtype) && t[1].dtype == VNPU_DTYPE_I64 &&
	       reduced_dims(&t[0], &t[1], 1u << a->axis) &&
	       tensor_injective(&t[1]);
}

static int check_resize(const struct vnpu_cmd_tensor *t, __u32 n,
			const struct vnpu_layer_resize *a)
{
	__u32 d;

	if (n != 2 || a->mode > VNPU_RESIZE_CUBIC ||
	    a->coord > VNPU_COORD_HALF_PIXEL_SYMMETRIC ||
	    a->nearest > VNPU_NEAREST_CEIL ||
	    (a->mode != VNPU_RESIZE_NEAREST && a->nearest) || a->pad ||
	    (a->mode == VNPU_RESIZE_CUBIC ?
	     a->flags & ~VNPU_RESIZE_F_EXCLUDE_OUTSIDE || !f32_ok(a->cubic_a) :
	     a->flags || a->cubic_a) ||
	    !is_fstore(t[0].dtype) || !all_dtype(t, 2, t[0].dtype) ||
	    t[0].rank != t[1].rank ||
	    !tensor_injective(&t[1]))
		return 0;
	for (d = 0; d < VNPU_MAX_DIMS; d++) {
		if (d >= t[0].rank) {
			if (a->scale[d])
				return 0;
			continue;
		}
		if (a->scale[d] && !f32_positive(a->scale[d]))
			return 0;
		if (!t[0].dims[d] && t[1].dims[d])
			return 0;
	}
	return 1;
}

static int check_pad(const struct vnpu_cmd_tensor *t, __u32 n,
		     const struct vnpu_layer_pad *a)
{
	__u32 size = vnpu_eng_dtype_size(t[0].dtype), d;
	__s64 lim = (__s64)ENG_MAX_DIM;

	if (n != 2 || a->mode > VNPU_PAD_WRAP || a->pad ||
	    t[0].dtype != t[1].dtype || t[0].rank != t[1].rank ||
	    !tensor_injective(&t[1]))
		return 0;
	if (a->mode != VNPU_PAD_CONSTANT ? a->value != 0 :
	    size < 8 && a->value >> (8 * size))
		return 0;
	for (d = 0; d < VNPU_MAX_DIMS; d++) {
		__s64 end;

		if (d >= t[0].rank) {
			if (a->begin[d])
				return 0;
			continue;
		}
		if (a->begin[d] > lim || a->begin[d] < -lim)
			return 0;
		end = (__s64)t[1].dims[d] - (__s64)t[0].dims[d] - a->begin[d];
		/* Cropping cannot remove more than the input has. */
		if ((__s64)t[0].dims[d] + (a->begin[d] < 0 ? a->begin[d] : 0) +
		    (end < 0 ? end : 0) < 0)
			return 0;
		if (!t[0].dims[d] && t[1].dims[d] && a->mode != VNPU_PAD_CONSTANT)
			return 0;
	}
	return 1;
}

static int check_gather(const struct vnpu_cmd_tensor *t, __u32 n,
			const struct vnpu_layer_gather *a)
{
	const struct vnpu_cmd_tensor *x = &t[0], *idx = &t[1], *y = &t[2];
	__u32 d;

	if (n != 3 || a->pad || a->axis >= x->rank || x->dtype != y->dtype ||
	    (idx->dtype != VNPU_DTYPE_I32 && idx->dtype != VNPU_DTYPE_I64) ||
	    y->rank != x->rank - 1 + idx->rank || !tensor_injective(y))
		return 0;
	for (d = 0; d < y->rank; d++) {
		__u64 want;

		if (d < a->axis)
			want = x->dims[d];
		else if (d < a->axis + idx->rank)
			want = idx->dims[d - a->axis];
		else
			want = x->dims[d - idx->rank + 1];
		if (y->dims[d] != want)
			return 0;
	}
	return 1;
}

static int check_gather_elements(const struct vnpu_cmd_tensor *t, __u32 n,
				 const struct vnpu_layer_gather *a)
{
	const struct vnpu_cmd_tensor *x = &t[0], *idx = &t[1], *y = &t[2];
	__u32 d;

	if (n != 3 || a->pad || a->axis >= x->rank || x->dtype != y->dtype ||
	    (idx->dtype != VNPU_DTYPE_I32 && idx->dtype != VNPU_DTYPE_I64) ||
	    idx->rank != x->rank || !same_dims(idx, y) || !tensor_injective(y))
		return 0;
	for (d = 0; d < x->rank; d++)
		if (d != a->axis && idx->dims[d] > x->dims[d])
			return 0;
	return 1;
}

static int is_index(__u32 dtype)
{
	return dtype == VNPU_DTYPE_I32 || dtype == VNPU_DTYPE_I64;
}

/* Data, indices, updates, Y of a scatter: Y like data, updates' dtype. */
static int scatter_common(const struct vnpu_cmd_tensor *t, __u32 n,
			  const struct vnpu_layer_scatter *a)
{
	if (n != 4 || a->reduction > VNPU_SCATTER_MIN ||
	    !is_index(t[1].dtype) || !all_dtype(t + 2, 2, t[0].dtype) ||
	    !same_dims(&t[0], &t[3]) || !tensor_injective(&t[3]))
		return 0;
	return a->reduction == VNPU_SCATTER_NONE || is_fstore(t[0].dtype) ||
	       t[0].dtype == VNPU_DTYPE_F64 || is_index(t[0].dtype);
}

static int check_scatter_elements(const struct vnpu_cmd_tensor *t, __u32 n,
				  const struct vnpu_layer_scatter *a)
{
	__u32 d;

	if (!scatter_common(t, n, a) || a->axis >= t[0].rank ||
	    t[1].rank != t[0].rank || !same_dims(&t[1], &t[2]))
		return 0;
	for (d = 0; d < t[0].rank; d++)
		if (d != a->axis && t[1].dims[d] > t[0].dims[d])
			return 0;
	return 1;
}

/* Indices [q-1 dims, k], k within @avail dims: k, or 0 when bad. */
static __u32 nd_depth(const struct vnpu_cmd_tensor *idx, __u32 avail)
{
	if (!is_index(idx->dtype) || idx->rank < 1 ||
	    idx->dims[idx->rank - 1] < 1 || idx->dims[idx->rank - 1] > avail)
		return 0;
	return (__u32)idx->dims[idx->rank - 1];
}

static int check_scatter_nd(const struct vnpu_cmd_tensor *t, __u32 n,
			    const struct vnpu_layer_scatter *a)
{
	__u32 k, q1, d;

	if (!scatter_common(t, n, a) || a->axis)
		return 0;
	k = nd_depth(&t[1], t[0].rank);
	q1 = t[1].rank - 1;
	if (!k || t[2].rank != q1 + t[0].rank - k)
		return 0;
	for (d = 0; d < t[2].rank; d++)
		if (t[2].dims[d] != (d < q1 ? t[1].dims[d] : t[0].dims[d - q1 + k]))
			return 0;
	return 1;
}

static int check_gather_nd(const struct vnpu_cmd_tensor *t, __u32 n,
			   const struct vnpu_layer_gather_nd *a)
{
	const struct vnpu_cmd_tensor *x = &t[0], *idx = &t[1], *y = &t[2];
	__u32 k, q1, b = a->batch_dims, d;

	if (n != 3 || a->pad || x->dtype != y->dtype || idx->rank < 1 ||
	    b >= idx->rank || b >= x->rank || !tensor_injective(y))
		return 0;
	k = nd_depth(idx, x->rank - b);
	q1 = idx->rank - 1;
	if (!k || y->rank != q1 + x->rank - b - k)
		return 0;
	for (d = 0; d < b; d++)
		if (idx->dims[d] != x->dims[d])
			return 0;
	for (d = 0; d < y->rank; d++)
		if (y->dims[d] != (d < q1 ? idx->dims[d] : x->dims[d - q1 + b + k]))
			return 0;
	return 1;
}

static int check_grid_sample(const struct vnpu_cmd_tensor *t, __u32 n,
			     const struct vnpu_layer_grid_sample *a)
{
	const struct vnpu_cmd_tensor *x = &t[0], *g = &t[1], *y = &t[2];

	if (n != 3 || a->mode > VNPU_RESIZE_CUBIC ||
	    a->padding > VNPU_GRID_PAD_REFLECTION || a->align_corners > 1 ||
	    a->pad || !is_fstore(x->dtype) || !all_dtype(t, 3, x->dtype) ||
	    x->rank != 4 || g->rank != 4 || y->rank != 4 ||
	    g->dims[3] != 2 || g->dims[0] != x->dims[0] ||
	    y->dims[0] != x->dims[0] || y->dims[1] != x->dims[1] ||
	    y->dims[2] != g->dims[1] || y->dims[3] != g->dims[2] ||
	    (vnpu_eng_numel(y) && (!x->dims[2] || !x->dims[3])) ||
	    !tensor_injective(y))
		return 0;
	return 1;
}

/* A rank-1 i64 tensor of @n entries (n > 0). */
static int i64_list(const struct vnpu_cmd_tensor *t)
{
	return t->dtype == VNPU_DTYPE_I64 && t->rank == 1 && t->dims[0];
}

static int check_tfidf(const struct vnpu_cmd_tensor *t, __u32 n,
		       const struct vnpu_layer_tfidf *a)
{
	const struct vnpu_cmd_tensor *x = &t[0], *y = &t[5];

	if (n != 6 || !is_index(x->dtype) || x->rank < 1 || x->rank > 2 ||
	    !i64_list(&t[1]) || !i64_list(&t[2]) || !i64_list(&t[3]) ||
	    t[4].dtype != VNPU_DTYPE_F32 || t[4].rank != 1 ||
	    t[4].dims[0] != t[3].dims[0] || y->dtype != VNPU_DTYPE_F32 ||
	    y->rank != x->rank || (x->rank == 2 && y->dims[0] != x->dims[0]) ||
	    !y->dims[y->rank - 1] || a->min_gram < 1 ||
	    a->min_gram > a->max_gram || a->max_gram > t[2].dims[0] ||
	    a->max_skip > ENG_MAX_DIM || a->mode > VNPU_TFIDF_TFIDF ||
	    !tensor_injective(y))
		return 0;
	return 1;
}

static int check_det(const struct vnpu_cmd_tensor *t, __u32 n)
{
	const struct vnpu_cmd_tensor *x = &t[0], *y = &t[1];
	__u32 d;

	if (n != 2 || !is_fstore(x->dtype) || y->dtype != x->dtype ||
	    x->rank < 2 || y->rank != x->rank - 2 ||
	    x->dims[x->rank - 1] != x->dims[x->rank - 2] ||
	    x->dims[x->rank - 1] < 1 || x->dims[x->rank - 1] > VNPU_DET_MAX_M ||
	    !tensor_injective(y))
		return 0;
	for (d = 0; d < y->rank; d++)
		if (y->dims[d] != x->dims[d])
			return 0;
	return 1;
}

static int check_roi_align(const struct vnpu_cmd_tensor *t, __u32 n,
			   const struct vnpu_layer_roi_align *a)
{
	const struct vnpu_cmd_tensor *x = &t[0], *r = &t[1], *b = &t[2], *y = &t[3];

	if (n != 4 || a->mode > 1 || a->half_pixel > 1 ||
	    a->sampling_ratio > ENG_MAX_PAD || !f32_ok(a->spatial_scale) ||
	    !is_fstore(x->dtype) || r->dtype != x->dtype || y->dtype != x->dtype ||
	    !is_index(b->dtype) || x->rank != 4 || r->rank != 2 ||
	    r->dims[1] != 4 || b->rank != 1 || b->dims[0] != r->dims[0] ||
	    y->rank != 4 || y->dims[0] != r->dims[0] || y->dims[1] != x->dims[1] ||
	    !y->dims[2] || !y->dims[3] ||
	    (vnpu_eng_numel(y) && (!x->dims[0] || !x->dims[2] || !x->dims[3])) ||
	    !tensor_injective(y))
		return 0;
	return 1;
}

static int check_maxpool_index(const struct vnpu_cmd_tensor *t, __u32 n,
			       const struct vnpu_layer_pool_index *a)
{
	const struct vnpu_cmd_tensor *x = &t[0], *y = &t[1], *ix = &t[2];
	__u32 d;

	if (n != 3 || a->storage_order > 1 || a->pad || !is_fstore(x->dtype) ||
	    y->dtype != x->dtype || ix->dtype != VNPU_DTYPE_I64 ||
	    x->rank != 4 || !same_dims(y, ix) || y->rank != 4 ||
	    y->dims[0] != x->dims[0] || y->dims[1] != x->dims[1] ||
	    !tensor_injective(y) || !tensor_injective(ix))
		return 0;
	for (d = 0; d < 2; d++) {
		/* Every window starts at most its extent past the input. */
		__u64 span = (__u64)a->dilation[d] * (a->kernel[d] - 1) + 1;

		if (!a->kernel[d] || !a->stride[d] || !a->dilation[d] ||
		    eng_poolidx_window(a) > ENG_MAX_WINDOW_ELEMS ||
		    a->kernel[d] > ENG_MAX_PAD || a->stride[d] > ENG_MAX_PAD ||
		    a->dilation[d] > ENG_MAX_PAD || a->pad_begin[d] >= span ||
		    (y->dims[d + 2] &&
		     (y->dims[d + 2] - 1) * a->stride[d] >
		     x->dims[d + 2] + a->pad_begin[d] + span))
			return 0;
	}
	return 1;
}

static int is_q8(__u32 dtype)
{
	return dtype == VNPU_DTYPE_U8 || dtype == VNPU_DTYPE_I8;
}

/* A quantization parameter: per tensor, or rank 1 of extent @n (n > 1). */
static int qparam(const struct vnpu_cmd_tensor *p, __u32 dtype, __u64 n)
{
	if (p->dtype != dtype)
		return 0;
	return p->rank == 0 ||
	       (p->rank == 1 && (p->dims[0] == 1 || (n > 1 && p->dims[0] == n)));
}

static int check_quant(__u32 op, const struct vnpu_cmd_tensor *t, __u32 n,
		       const struct vnpu_layer_quant *a)
{
	const struct vnpu_cmd_tensor *x = &t[0], *y = &t[3];
	__u64 along;

	if (n != 4 || a->pad || !same_dims(x, y) || !tensor_injective(y) ||
	    a->axis >= (x->rank ? x->rank : 1))
		return 0;
	along = x->rank ? x->dims[a->axis] : 1;
	if (op == VNPU_LAYER_QUANTIZE) {
		if (x->dtype != VNPU_DTYPE_F32 || !is_q8(y->dtype))
			return 0;
	} else if ((!is_q8(x->dtype) && x->dtype != VNPU_DTYPE_I32) ||
		   y->dtype != VNPU_DTYPE_F32) {
		return 0;
	}
	return qparam(&t[1], VNPU_DTYPE_F32, along) &&
	       qparam(&t[2], op == VNPU_LAYER_QUANTIZE ? y->dtype : x->dtype,
		      along) &&
	       /* Both per tensor or both per axis. */
	       vnpu_eng_numel(&t[1]) == vnpu_eng_numel(&t[2]);
}

static int check_matmul_integer(const struct vnpu_cmd_tensor *t, __u32 n,
				const struct vnpu_layer_qgemm *a)
{
	const struct vnpu_cmd_tensor *y = &t[4];

	return n == 5 && !a->flags && !a->pad && is_q8(t[0].dtype) &&
	       is_q8(t[1].dtype) && y->dtype == VNPU_DTYPE_I32 &&
	       matmul_shapes_ok(&t[0], &t[1], y) &&
	       qparam(&t[2], t[0].dtype, y->dims[y->rank - 2]) &&
	       qparam(&t[3], t[1].dtype, y->dims[y->rank - 1]);
}

/* x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zp, .., y */
static int qlinear_params_ok(const struct vnpu_cmd_tensor *t, __u32 y,
			     __u64 per_w)
{
	return is_q8(t[0].dtype) && is_q8(t[3].dtype) && is_q8(t[y].dtype) &&
	       qparam(&t[1], VNPU_DTYPE_F32, 0) && qparam(&t[2], t[0].dtype, 0) &&
	       qparam(&t[4], VNPU_DTYPE_F32, per_w) &&
	       qparam(&t[5], t[3].dtype, per_w) &&
	       qparam(&t[6], VNPU_DTYPE_F32, 0) && qparam(&t[7], t[y].dtype, 0);
}

static int check_qlinear_matmul(const struct vnpu_cmd_tensor *t, __u32 n,
				const struct vnpu_layer_qgemm *a)
{
	const struct vnpu_cmd_tensor *y = &t[8];

	return n == 9 && !a->flags && !a->pad &&
	       matmul_shapes_ok(&t[0], &t[3], y) &&
	       qlinear_params_ok(t, 8, y->dims[y->rank - 1]);
}

/* a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp, y: one 8-bit dtype. */
static int check_qlinear_add(const struct vnpu_cmd_tensor *t, __u32 n)
{
	__u32 q;

	if (n != 9)
		return 0;
	q = t[8].dtype;
	return is_q8(q) && t[0].dtype == q && t[3].dtype == q &&
	       same_dims(&t[0], &t[8]) && same_dims(&t[3], &t[8]) &&
	       tensor_injective(&t[8]) && qparam(&t[1], VNPU_DTYPE_F32, 0) &&
	       qparam(&t[2], q, 0) && qparam(&t[4], VNPU_DTYPE_F32, 0) &&
	       qparam(&t[5], q, 0) && qparam(&t[6], VNPU_DTYPE_F32, 0) &&
	       qparam(&t[7], q, 0);
}

/* x (8-bit), the table (8-bit, 256 dense entries), y (the table's dtype). */
static int check_lookup(const struct vnpu_cmd_tensor *t, __u32 n,
			const struct vnpu_layer_lookup *a)
{
	const struct vnpu_cmd_tensor *tab = &t[1];

	return n == 3 && !a->flags && !a->pad && is_q8(t[0].dtype) &&
	       is_q8(tab->dtype) && tab->rank == 1 &&
	       tab->dims[0] == VNPU_LOOKUP_ENTRIES && tab->strides[0] == 1 &&
	       t[2].dtype == tab->dtype && same_dims(&t[0], &t[2]) &&
	       tensor_injective(&t[2]);
}

static int check_qlinear_conv(const struct vnpu_cmd_tensor *t, __u32 n,
			      const struct vnpu_layer_conv *a)
{
	const struct vnpu_cmd_tensor *y = &t[n - 1];
	int packed = a->flags & VNPU_LAYER_F_PACKED;
	int split = a->flags & VNPU_LAYER_F_SPLIT8;
	int res = a->flags & VNPU_LAYER_F_RESIDUAL;
	int qwino = a->flags & VNPU_LAYER_F_QWINO;
	int qw4 = a->flags & VNPU_LAYER_F_QW4;
	__u32 nb = 8 + !!(a->flags & VNPU_LAYER_F_BIAS), i;
	int dw = a->group == t[0].dims[1] && a->group == y->dims[1];

	if (a->flags & ~(VNPU_LAYER_F_BIAS | VNPU_LAYER_F_PACKED |
			 VNPU_LAYER_F_SPLIT8 | VNPU_LAYER_F_RESIDUAL |
			 VNPU_LAYER_F_RES_FIRST | VNPU_LAYER_F_QWINO |
			 VNPU_LAYER_F_QW4) ||
	    (split && !packed) || (qwino && packed) ||
	    (qwino && (t[3].dtype != VNPU_DTYPE_I8 || !eng_qwino_fits(a, &t[0], y))) ||
	    /* U after W's rows: F(4x4)'s shapes only, not split, no add. */
	    (qw4 && (!packed || split || res || !eng_qw4_shape(a, &t[0], y))) ||
	    ((a->flags & VNPU_LAYER_F_RES_FIRST) && !res) ||
	    (a->act.func != VNPU_ACT_IDENTITY && a->act.func != VNPU_ACT_RELU) ||
	    a->act.flags || a->act.alpha || a->act.beta ||
	    n != nb + 1 + (res ? 5 : 0) ||
	    (packed && t[3].dtype != VNPU_DTYPE_I8) ||
	    !conv_shapes_ok(&t[0], &t[3], y, a,
			    qwino ? VNPU_PACK_QWINO_W :
			    qw4 ? VNPU_PACK_QW4_W :
			    split ? VNPU_PACK_QCONV_SPLIT :
			    packed ? VNPU_PACK_QCONV_W : 0) ||
	    /* The depthwise paths read W's rows whole. */
	    (split && dw) ||
	    !qlinear_params_ok(t, n - 1, y->dims[1]))
		return 0;
	/*
	 * The fused QLinearAdd: the packed paths, not depthwise, add R to
	 * each block of Y they write; R like Y, its parameters scalar.
	 */
	if (res) {
		if (!(packed || qwino) || dw || y->rank != 4 || t[nb].dtype != y->dtype ||
		    !same_dims(&t[nb], y) || !spatial_dense(&t[nb]))
			return 0;
		for (i = nb + 1; i < nb + 5; i++)
			if (!qparam(&t[i], (i - nb) % 2 ? VNPU_DTYPE_F32 : y->dtype, 0))
				return 0;
	}
	return nb == 8 || (t[8].dtype == VNPU_DTYPE_I32 && t[8].rank == 1 &&
			   t[8].dims[0] == y->dims[1]);
}

/*
 * Q [B, H, M, D], KT [B, H, D, N], V [B, H, N, E], [mask] broadcasting to
 * [B, H, M, N], Y [B, H, M, E] with its rows dense; all f32.
 */
static int check_attention(const struct vnpu_cmd_tensor *t, __u32 n,
			   const struct vnpu_layer_attention *a)
{
	const struct vnpu_cmd_tensor *q = &t[0], *k = &t[1], *v = &t[2];
	const struct vnpu_cmd_tensor *y = &t[n - 1];
	struct vnpu_cmd_tensor s;
	__u32 i;

	if (a->flags & ~(VNPU_ATTN_F_MASK | VNPU_ATTN_F_DIV) ||
	    !f32_ok(a->scale) || !(a->scale & 0x7fffffff) ||
	    n != 4 + !!(a->flags & VNPU_ATTN_F_MASK) ||
	    !all_dtype(t, n, VNPU_DTYPE_F32) || q->rank != 4 || k->rank != 4 ||
	    v->rank != 4 || y->rank != 4 || !tensor_injective(y))
		return 0;
	/* Every operand has Y's batches and heads: no broadcast. */
	for (i = 0; i < 2; i++)
		if (q->dims[i] != y->dims[i] || k->dims[i] != y->dims[i] ||
		    v->dims[i] != y->dims[i])
			return 0;
	if (q->dims[2] != y->dims[2] || k->dims[2] != q->dims[3] ||
	    v->dims[2] != k->dims[3] || v->dims[3] != y->dims[3] ||
	    q->dims[3] > ENG_MAX_DEPTH || k->dims[3] > ENG_MAX_DEPTH ||
	    (y->dims[3] > 1 && y->strides[3] != 1))
		return 0;
	if (!(a->flags & VNPU_ATTN_F_MASK))
		return 1;
	s = *y;
	s.dims[3] = k->dims[3];
	return t[3].rank <= 4 && bcast_ok(&t[3], &s, 0);
}

static __u32 attr_size_of(__u32 op)
{
	switch (op) {
	case VNPU_LAYER_GEMM:
		return sizeof(struct vnpu_layer_gemm);
	case VNPU_LAYER_CONV:
		return sizeof(struct vnpu_layer_conv);
	case VNPU_LAYER_POOL:
		return sizeof(struct vnpu_layer_pool);
	case VNPU_LAYER_BINARY:
		return sizeof(struct vnpu_layer_binary);
	case VNPU_LAYER_UNARY:
		return sizeof(struct vnpu_layer_act);
	case VNPU_LAYER_SOFTMAX:
		return sizeof(struct vnpu_layer_softmax);
	case VNPU_LAYER_NORM:
		return sizeof(struct vnpu_layer_norm);
	case VNPU_LAYER_REDUCE:
		return sizeof(struct vnpu_layer_reduce);
	case VNPU_LAYER_ARGREDUCE:
		return sizeof(struct vnpu_layer_argreduce);
	case VNPU_LAYER_RESIZE:
		return sizeof(struct vnpu_layer_resize);
	case VNPU_LAYER_PAD:
		return sizeof(struct vnpu_layer_pad);
	case VNPU_LAYER_GATHER:
	case VNPU_LAYER_GATHER_ELEMENTS:
		return sizeof(struct vnpu_layer_gather);
	case VNPU_LAYER_QUANTIZE:
	case VNPU_LAYER_DEQUANTIZE:
		return sizeof(struct vnpu_layer_quant);
	case VNPU_LAYER_MATMUL_INTEGER:
	case VNPU_LAYER_QLINEAR_MATMUL:
		return sizeof(struct vnpu_layer_qgemm);
	case VNPU_LAYER_QLINEAR_CONV:
		return sizeof(struct vnpu_layer_conv);
	case VNPU_LAYER_SCATTER_ELEMENTS:
	case VNPU_LAYER_SCATTER_ND:
		return sizeof(struct vnpu_layer_scatter);
	case VNPU_LAYER_GATHER_ND:
		return sizeof(struct vnpu_layer_gather_nd);
	case VNPU_LAYER_GRID_SAMPLE:
		return sizeof(struct vnpu_layer_grid_sample);
	case VNPU_LAYER_TFIDF:
		return sizeof(struct vnpu_layer_tfidf);
	case VNPU_LAYER_ROI_ALIGN:
		return sizeof(struct vnpu_layer_roi_align);
	case VNPU_LAYER_MAXPOOL_INDEX:
		return sizeof(struct vnpu_layer_pool_index);
	case VNPU_LAYER_CHAIN:
		return sizeof(struct vnpu_layer_chain);
	case VNPU_LAYER_LSTM:
		return sizeof(struct vnpu_layer_lstm);
	case VNPU_LAYER_LOOKUP:
		return sizeof(struct vnpu_layer_lookup);
	case VNPU_LAYER_ATTENTION:
		return sizeof(struct vnpu_layer_attention);
	default:
		return 0;	/* WHERE, CAST, DET: none */
	}
}

static int check_op(__u32 op, const struct vnpu_cmd_tensor *t, __u32 n,
		    const void *attrs)
{
	switch (op) {
	case VNPU_LAYER_GEMM:
		return check_gemm(t, n, attrs);
	case VNPU_LAYER_CONV:
		return check_conv(t, n, attrs);
	case VNPU_LAYER_POOL:
		return check_pool(t, n, attrs);
	case VNPU_LAYER_BINARY:
		return check_binary(t, n, attrs);
	case VNPU_LAYER_WHERE:
		return check_where(t, n);
	case VNPU_LAYER_UNARY:
		return check_unary(t, n, attrs);
	case VNPU_LAYER_SOFTMAX:
		return check_softmax(t, n, attrs);
	case VNPU_LAYER_NORM:
		return check_norm(t, n, attrs);
	case VNPU_LAYER_REDUCE:
		return check_reduce(t, n, attrs);
	case VNPU_LAYER_ARGREDUCE:
		return check_argreduce(t, n, attrs);
	case VNPU_LAYER_RESIZE:
		return check_resize(t, n, attrs);
	case VNPU_LAYER_PAD:
		return check_pad(t, n, attrs);
	case VNPU_LAYER_GATHER:
		return check_gather(t, n, attrs);
	case VNPU_LAYER_GATHER_ELEMENTS:
		return check_gather_elements(t, n, attrs);
	case VNPU_LAYER_CAST:
		return n == 2 && same_dims(&t[0], &t[1]) &&
		       tensor_injective(&t[1]);
	case VNPU_LAYER_QUANTIZE:
	case VNPU_LAYER_DEQUANTIZE:
		return check_quant(op, t, n, attrs);
	case VNPU_LAYER_MATMUL_INTEGER:
		return check_matmul_integer(t, n, attrs);
	case VNPU_LAYER_QLINEAR_MATMUL:
		return check_qlinear_matmul(t, n, attrs);
	case VNPU_LAYER_QLINEAR_CONV:
		return check_qlinear_conv(t, n, attrs);
	case VNPU_LAYER_SCATTER_ELEMENTS:
		return check_scatter_elements(t, n, attrs);
	case VNPU_LAYER_SCATTER_ND:
		return check_scatter_nd(t, n, attrs);
	case VNPU_LAYER_GATHER_ND:
		return check_gather_nd(t, n, attrs);
	case VNPU_LAYER_GRID_SAMPLE:
		return check_grid_sample(t, n, attrs);
	case VNPU_LAYER_TFIDF:
		return check_tfidf(t, n, attrs);
	case VNPU_LAYER_DET:
		return check_det(t, n);
	case VNPU_LAYER_ROI_ALIGN:
		return check_roi_align(t, n, attrs);
	case VNPU_LAYER_MAXPOOL_INDEX:
		return check_maxpool_index(t, n, attrs);
	case VNPU_LAYER_CHAIN:
		return check_chain(t, n, attrs);
	case VNPU_LAYER_LSTM:
		return check_lstm(t, n, attrs);
	case VNPU_LAYER_QLINEAR_ADD:
		return check_qlinear_add(t, n);
	case VNPU_LAYER_LOOKUP:
		return check_lookup(t, n, attrs);
	case VNPU_LAYER_ATTENTION:
		return check_attention(t, n, attrs);
	default:
		return 0;
	}
}

__u32 vnpu_eng_layer_outputs(__u32 op)
{
	return op == VNPU_LAYER_LSTM ? 3 : 1;
}

int vnpu_eng_layer_check(__u32 op, const struct vnpu_cmd_tensor *t,
			 __u32 num_tensors, const void *attrs, __u32 attr_size)
{
	__u32 i;

	if (op == VNPU_LAYER_INVALID || op > VNPU_LAYER_OP_LAST || !t ||
	    !num_tensors || num_tensors > VNPU_LAYER_MAX_TENSORS ||
	    attr_size != attr_size_of(op) || (attr_size && !attrs))
		return VNPU_ENG_EINVAL;
	for (i = 0; i < num_tensors; i++)
		if (!tensor_ok(&t[i]))
			return VNPU_ENG_EINVAL;
	return check_op(op, t, num_tensors, attrs) ? 0 : VNPU_ENG_EINVAL;
}

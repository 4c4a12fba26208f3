// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A layer's work: its cost (vnpu_eng_layer_cost()), the units it splits
 * into (vnpu_eng_units(); the kernels take a range of units apart the
 * same way), the parts it may run as and the scratch a part needs.
 * Integer only, as the rest of the integer half (vnpu_engine.c).
 */
#include "vnpu_eng_priv.h"

/* Rows of @row_len elements, grouped so that a unit is worth a part. */
static __u64 row_units(__u64 rows, __u64 row_len)
{
	__u64 per = ENG_ELEM_UNIT / (row_len ? row_len : 1);

	return eng_div_up(rows, per ? per : 1);
}

static __u64 conv_units(const struct eng_layer *l, __u32 features)
{
	struct eng_conv_shape s;
	struct eng_unit u;

	eng_conv_shape(l, &s);
	if (eng_conv_lanes(l->attrs)) {
		eng_lanes_unit(&s, features, &u);
		return s.n * s.group * eng_div_up(s.mg, u.rows) *
		       eng_div_up(s.oh * s.ow, u.cols);
	}
	if (eng_dw_lanes(l, &s))
		return eng_dwl_units(&s, features);
	if (eng_dw_windows(&s, l->attrs))
		return eng_dw_units(&s, l->attrs, features);
	if (eng_conv_depthwise(&s))
		return eng_block_units(s.n * s.m * s.oh, s.ow, s.kh * s.kw);
	if (eng_conv_wino(l))
		return eng_wino_units(&s, features);
	eng_conv_unit(&s, l->attrs, features, &u);
	return s.n * s.group * eng_div_up(s.mg, u.rows) *
	       eng_div_up(eng_conv_cols(&s, l->attrs), u.cols);
}

/* Softmax, LpNormalization, ArgMax: lanes along one axis. */
static __u64 axis_units(const struct vnpu_cmd_tensor *x, __u32 axis)
{
	__u64 len = x->dims[axis];

	return row_units(len ? vnpu_eng_numel(x) / len : 0, len);
}

/* Outputs of @depth reads each, in flat order. */
static __u64 flat_units(const struct vnpu_cmd_tensor *y, __u64 depth)
{
	return eng_block_units(1, vnpu_eng_numel(y), depth);
}

static __u64 norm_units(const struct eng_layer *l)
{
	const struct vnpu_layer_norm *a = l->attrs;
	const struct vnpu_cmd_tensor *x = &l->t[0];
	__u64 rows = 1, numel = vnpu_eng_numel(x);
	__u32 d;

	switch (a->mode) {
	case VNPU_NORM_BATCH:
	case VNPU_NORM_INSTANCE:
		rows = x->dims[0] * x->dims[1];
		return row_units(rows, rows ? numel / rows : 0);
	case VNPU_NORM_LAYER:
		for (d = 0; d < a->axis; d++)
			rows *= x->dims[d];
		return row_units(rows, rows ? numel / rows : 0);
	case VNPU_NORM_LP:
		return axis_units(x, a->axis);
	default:
		/* LRN: lanes of C outputs of a window each. */
		return eng_block_units(x->dims[1] ? numel / x->dims[1] : 0,
				       x->dims[1], eng_min(a->size, x->dims[1]));
	}
}

__u64 vnpu_eng_units(const struct eng_layer *l, __u32 features)
{
	const struct vnpu_cmd_tensor *y = &l->t[l->n - 1];
	__u64 batch, m, n, k, numel_y = vnpu_eng_numel(y);
	struct eng_unit u;

	switch (l->op) {
	case VNPU_LAYER_GEMM:
		eng_gemm_shape(l, &batch, &m, &n, &k);
		eng_gemm_unit(m, n, k, features, &u);
		return batch * eng_div_up(m, u.rows) * eng_div_up(n, u.cols);
	case VNPU_LAYER_CONV:
		return conv_units(l, features);
	case VNPU_LAYER_POOL: {
		const struct vnpu_layer_pool *a = l->attrs;

		/* Output elements of one window each. */
		return eng_div_up(numel_y, eng_pool_per_unit(y, (__u64)a->kernel[0] *
							     a->kernel[1]));
	}
	case VNPU_LAYER_SOFTMAX:
		return axis_units(&l->t[0],
				  ((const struct vnpu_layer_softmax *)l->attrs)->axis);
	case VNPU_LAYER_NORM:
		return norm_units(l);
	case VNPU_LAYER_REDUCE:
	case VNPU_LAYER_ARGREDUCE:
		return row_units(numel_y, numel_y ?
				 vnpu_eng_numel(&l->t[0]) / numel_y : 0);
	case VNPU_LAYER_MATMUL_INTEGER:
	case VNPU_LAYER_QLINEAR_MATMUL:
		eng_gemm_shape(l, &batch, &m, &n, &k);
		return eng_block_units(batch * m, n, k);
	case VNPU_LAYER_QLINEAR_CONV: {
		const struct vnpu_layer_conv *a = l->attrs;
		struct eng_conv_shape s;
		struct eng_qplan p;

		eng_conv_shape(l, &s);
		if (a->flags & VNPU_LAYER_F_QWINO) {
			struct eng_qwplan qw;

			eng_qwino_plan(&s, &qw);
			return qw.units;
		}
		if (eng_qw4_fits(l, features)) {
			struct eng_qw4plan q4;

			eng_qw4_plan(&s, &q4);
			return q4.units;
		}
		if (a->flags & VNPU_LAYER_F_PACKED) {
			eng_qplan(&s, a, &p);
			return p.units;
		}
		return eng_block_units(s.n * s.m * s.oh, s.ow,
				       s.cg * s.kh * s.kw);
	}
	case VNPU_LAYER_RESIZE:
		return flat_units(y, eng_resize_taps(&l->t[0], y, l->attrs));
	case VNPU_LAYER_GRID_SAMPLE:
		return flat_units(y, eng_grid_taps(l->attrs));
	case VNPU_LAYER_ROI_ALIGN:
		return flat_units(y, eng_roi_reads(&l->t[0], y, l->attrs));
	case VNPU_LAYER_MAXPOOL_INDEX:
		return flat_units(y, eng_poolidx_window(l->attrs));
	case VNPU_LAYER_CHAIN:
		/* Outputs of as many reads as steps: a unit stays one of UNARY. */
		return flat_units(y, ((const struct vnpu_layer_chain *)
				      l->attrs)->num_steps);
	case VNPU_LAYER_SCATTER_ELEMENTS:
	case VNPU_LAYER_SCATTER_ND:
		return eng_scatter_units(numel_y, vnpu_eng_numel(&l->t[2]));
	case VNPU_LAYER_TFIDF:
		return l->t[0].rank == 2 ? l->t[0].dims[0] : 1;	/* rows */
	case VNPU_LAYER_LSTM:
		return l->t[0].dims[1];	/* directions: each a chain of steps */
	case VNPU_LAYER_DET:
		return numel_y;	/* matrices */
	case VNPU_LAYER_ATTENTION:
		/* Blocks of query rows of each (batch, head). */
		k = eng_attn_rows(y->dims[2], l->t[1].dims[3]);
		return y->dims[0] * y->dims[1] * eng_div_up(y->dims[2], k);
	default:
		return eng_div_up(numel_y, ENG_ELEM_UNIT);
	}
}

/*
 * Element operations per output of the element-wise functions: a call of
 * exp, log, sin... in double is worth some 64 additions, the composite
 * ones (GELU, Mish, erf) some 256 (engine-fpu-audit's ns/cost column).
 * The float ones of vnpu_eng_vmath.h take 1 to 2 ns on the FMA paths but
 * 60 to 150 on the baseline's software fused multiply-adds: 128 or 256.
 */
static __u64 act_cost(__u32 func)
{
	switch (func) {
	case VNPU_ACT_IDENTITY:
	case VNPU_ACT_RELU:
	case VNPU_ACT_LEAKY_RELU:
	case VNPU_ACT_CLIP:
	case VNPU_ACT_HARD_SIGMOID:
	case VNPU_ACT_HARD_SWISH:
	case VNPU_ACT_ABS:
	case VNPU_ACT_NEG:
	case VNPU_ACT_FLOOR:
	case VNPU_ACT_CEIL:
	case VNPU_ACT_ROUND:
	case VNPU_ACT_SIGN:
	case VNPU_ACT_THRESHOLDED_RELU:
	case VNPU_ACT_NOT:
	case VNPU_ACT_SHRINK:
	case VNPU_ACT_RECIPROCAL:
	case VNPU_ACT_SQRT:
	case VNPU_ACT_SOFTSIGN:
		return 4;
	case VNPU_ACT_TANH:
	case VNPU_ACT_SIGMOID:
	case VNPU_ACT_SILU:
		return 128;
	case VNPU_ACT_GELU:
	case VNPU_ACT_GELU_TANH:
	case VNPU_ACT_ERF:
	case VNPU_ACT_MISH:
	case VNPU_ACT_SOFTPLUS:
		return 256;
	default:
		return 64;
	}
}

static __u64 binary_cost(__u32 func)
{
	switch (func) {
	case VNPU_BIN_POW:
		return 128;
	case VNPU_BIN_MOD:
	case VNPU_BIN_FMOD:
		return 16;
	default:
		return 2;
	}
}

/* Per output of a chain: its steps' costs. */
static __u64 chain_cost(const struct vnpu_layer_chain *a)
{
	__u64 cost = 0;
	__u32 k;

	for (k = 0; k < a->num_steps; k++)
		cost += a->steps[k].kind == VNPU_CHAIN_UNARY ?
			act_cost(a->steps[k].func) : binary_cost(a->steps[k].func);
	return cost;
}

/*
 * Per element of X (of storage type @dt): the row-wise ops. An f32
 * Softmax's exp in float takes about 6 ns an element on the baseline
 * path, 20 with its lane out of the caches (engine-fpu-audit), 2 on the
 * FMA paths; f16 and bf16 lanes take m_exp() in double twice.
 */
static __u64 row_cost(__u32 op, const void *attrs, __u32 dt)
{
	const struct vnpu_layer_norm *norm = attrs;

	switch (op) {
	case VNPU_LAYER_SOFTMAX:
		if (((const struct vnpu_layer_softmax *)attrs)->mode == VNPU_HARDMAX)
			return 4;
		return dt == VNPU_DTYPE_F32 ? 32 : 64;
	case VNPU_LAYER_REDUCE:
		return ((const struct vnpu_layer_reduce *)attrs)->func ==
		       VNPU_REDUCE_LOG_SUM_EXP ? 32 : 4;
	case VNPU_LAYER_NORM:
		/* LRN: a power and the window's squares per element. */
		return norm->mode == VNPU_NORM_LRN ? 64 + 2 * (__u64)norm->size :
		       8;
	default:
		return 4;
	}
}

/* Each n-gram of each position and skip is looked up in the whole pool. */
static __u64 tfidf_cost(const struct vnpu_cmd_tensor *t,
			const struct vnpu_layer_tfidf *a)
{
	return sat_mul(sat_mul(vnpu_eng_numel(&t[0]),
			       a->max_gram - a->min_gram + 1),
		       sat_mul((__u64)a->max_skip + 1, t[1].dims[0]));
}

/*
 * GEMM and CONV compute whole micro-tiles of ENG_MR x ENG_NR outputs: a
 * product of a few rows or columns costs as much as a tile's.
 */
static __u64 tile_up(__u64 v, __u64 step)
{
	return eng_div_up(v, step) * step;
}

/* Every step's GEMM as GEMM counts it, and its element-wise functions. */
static __u64 lstm_cost(const struct vnpu_cmd_tensor *t,
		       const struct vnpu_layer_lstm *a)
{
	__u64 g = t[0].dims[3], h = g / 4;
	__u64 rows = sat_mul(t[0].dims[0], t[0].dims[1] * t[0].dims[2]);
	__u64 step = 2 * ENG_MR * tile_up(g, ENG_NR) * h +
		     h * (3 * act_cost(a->f.func) + act_cost(a->g.func) +
			  act_cost(a->h.func) + 8);

	return sat_mul(rows, step);
}

/*
 * A packed int8 convolution computes whole tiles of ENG_QMR channels by
 * ENG_QNR positions over the depth rounded up to 4: a squeeze-excite
 * layer's 1x1 map takes 32 times the sums of its one position (240 x 960
 * over 1 position, 0.46 million counted so, took 70 us on one CPU and
 * stayed whole).
 */
static __u64 qconv_cost(const struct eng_conv_shape *s)
{
	return sat_mul(sat_mul(2 * s->n * s->group, tile_up(s->mg, ENG_QMR)),
		       sat_mul(tile_up(s->oh * s->ow, ENG_QNR),
			       eng_q4(s->cg * s->kh * s->kw)));
}

/*
 * Integer Winograd (%VNPU_LAYER_F_QWINO): 16 products a tile of 2x2
 * outputs, rows in pairs, the input channels in pairs, and the
 * transforms of a tile's channels and rows.
 */
static __u64 qwino_cost(const struct eng_conv_shape *s)
{
	struct eng_qwplan p;

	eng_qwino_plan(s, &p);
	return sat_mul(sat_mul(2 * s->n * s->group, p.mp + 16),
		       sat_mul(p.ntb * p.nt, 16 * (2 * p.cp + 16)));
}

/*
 * In element operations of about a nanosecond each on the slowest kernel
 * path (the baseline's GEMM does about 2 a nanosecond): the firmware cuts
 * layers into parts of VNPU_EXEC_FW_CHUNK_COST, so an op that costs more
 * than its figure here makes FPU sections longer than the chunk's.
 */
__u64 vnpu_eng_layer_cost(__u32 op, const struct vnpu_cmd_tensor *t,
			  __u32 num_tensors, const void *attrs)
{
	struct eng_layer l = { op, t, 0, num_tensors, attrs };
	const struct vnpu_cmd_tensor *y = &t[num_tensors - 1];
	__u64 batch, m, n, k, ny = vnpu_eng_numel(y);
	struct eng_conv_shape s;

	switch (op) {
	case VNPU_LAYER_GEMM:
		eng_gemm_shape(&l, &batch, &m, &n, &k);
		return sat_mul(sat_mul(2 * batch, tile_up(m, ENG_MR)),
			       sat_mul(tile_up(n, ENG_NR), k));
	case VNPU_LAYER_MATMUL_INTEGER:
	case VNPU_LAYER_QLINEAR_MATMUL:
		eng_gemm_shape(&l, &batch, &m, &n, &k);
		return sat_mul(sat_mul(4 * batch, m), sat_mul(n, k));
	case VNPU_LAYER_CONV:
		eng_conv_shape(&l, &s);
		/*
		 * Windowed depthwise: every tap of every padded column, and
		 * each unit's window (the baseline's units, the most).
		 */
		if (eng_dw_windows(&s, attrs))
			return sat_mul(2 * s.n * s.m,
				       sat_mul(tile_up(s.oh * eng_dw_wq(&s, attrs),
						       ENG_DW_LANES),
					       s.kh * s.kw)) +
			       sat_mul(eng_dw_units(&s, attrs, 0),
				       eng_dw_win(&s, attrs, 0));
		if (eng_conv_depthwise(&s))
			break;
		return sat_mul(sat_mul(2 * s.n * s.group, tile_up(s.mg, ENG_MR)),
			       sat_mul(tile_up(eng_conv_cols(&s, attrs), ENG_NR),
				       s.cg * s.kh * s.kw));
	case VNPU_LAYER_QLINEAR_CONV:
		eng_conv_shape(&l, &s);
		if (((const struct vnpu_layer_conv *)attrs)->flags & VNPU_LAYER_F_QWINO)
			return qwino_cost(&s);
		if (!eng_conv_depthwise(&s) &&
		    (((const struct vnpu_layer_conv *)attrs)->flags &
		     VNPU_LAYER_F_PACKED))
			return qconv_cost(&s);
		return sat_mul(sat_mul(2 * s.n * s.m, s.oh * s.ow),
			       s.cg * s.kh * s.kw);
	case VNPU_LAYER_POOL: {
		const struct vnpu_layer_pool *a = attrs;

		return sat_mul(ny, (__u64)a->kernel[0] * a->kernel[1] *
			       (a->mode == VNPU_POOL_LP ? 4 : 2));
	}
	case VNPU_LAYER_MAXPOOL_INDEX:
		return sat_mul(ny, 2 * eng_poolidx_window(attrs));
	case VNPU_LAYER_REDUCE:
	case VNPU_LAYER_ARGREDUCE:
	case VNPU_LAYER_SOFTMAX:
	case VNPU_LAYER_NORM:
		return sat_mul(vnpu_eng_numel(&t[0]),
			       row_cost(op, attrs, t[0].dtype)) + ny;
	case VNPU_LAYER_UNARY:
		return ny * act_cost(((const struct vnpu_layer_act *)attrs)->func);
	case VNPU_LAYER_BINARY:
		return ny * binary_cost(((const struct vnpu_layer_binary *)attrs)->func);
	case VNPU_LAYER_CHAIN:
		return sat_mul(ny, chain_cost(attrs));
	case VNPU_LAYER_LSTM:
		return lstm_cost(t, attrs);
	case VNPU_LAYER_RESIZE:
		/*
		 * From tables: a multiply-add per tap; rows of more outer
		 * taps than a table row holds compute each output's taps.
		 */
		if (eng_resize_row_taps(&t[0], y, attrs) > ENG_RESIZE_ROW_TAPS)
			return sat_mul(ny, 4 * eng_resize_taps(&t[0], y, attrs) +
				       16 * y->rank);
		return sat_mul(ny, 2 * eng_resize_taps(&t[0], y, attrs));
	case VNPU_LAYER_GRID_SAMPLE:
		return ny * 8 * eng_grid_taps(attrs);
	case VNPU_LAYER_ROI_ALIGN:
		return sat_mul(ny, 8 * eng_roi_reads(&t[0], y, attrs));
	case VNPU_LAYER_DET:
		/* Elimination: about 2 M^3 per matrix of M^2 elements. */
		return sat_mul(vnpu_eng_numel(&t[0]), 2 * t[0].dims[t[0].rank - 1]);
	case VNPU_LAYER_TFIDF:
		return tfidf_cost(t, attrs);
	case VNPU_LAYER_ATTENTION:
		/* Both products as GEMM counts them, and SOFTMAX's rows of S. */
		batch = y->dims[0] * y->dims[1];
		m = tile_up(y->dims[2], ENG_MR);
		n = t[1].dims[3];
		k = t[0].dims[3];
		return sat_mul(2 * batch, sat_mul(m, tile_up(n, ENG_NR) * k) +
			       sat_mul(m, tile_up(y->dims[3], ENG_NR) * n)) +
		       sat_mul(batch * y->dims[2], n * 36);
	case VNPU_LAYER_SCATTER_ELEMENTS:
	case VNPU_LAYER_SCATTER_ND:
		/* Every unit reads all the updates' indices. */
		n = vnpu_eng_numel(&t[2]);
		return sat_mul(4, ny + sat_mul(eng_scatter_units(ny, n), n));
	case VNPU_LAYER_QUANTIZE:
	case VNPU_LAYER_DEQUANTIZE:
	case VNPU_LAYER_QLINEAR_ADD:
		return 8 * ny;
	case VNPU_LAYER_WHERE:
	case VNPU_LAYER_CAST:
	case VNPU_LAYER_LOOKUP:
		return 2 * ny;
	default:
		return 4 * ny;
	}
	/*
	 * Depthwise convolution: every tap of every output, and each unit
	 * sets every tap up (a weight, a span) for its block of outputs.
	 */
	return sat_mul(2 * s.n * s.m, sat_mul(s.oh * s.ow, s.kh * s.kw)) +
	       sat_mul(8 * eng_block_units(s.n * s.m * s.oh, s.ow,
					   s.kh * s.kw), s.kh * s.kw);
}

/*
 * Whether the products of a GEMM or CONV run on the AVX512-BF16 kernels
 * with @features: packed bf16 weights where the engine takes them
 * (run_gemm(), eng_conv_bf16_native(), wino2_native()).
 */
static int layer_bf16_native(const struct eng_layer *l, __u32 features)
{
	const struct vnpu_layer_conv *a = l->attrs;
	struct eng_conv_shape s;

	if (!eng_bf16_path(features) || l->n < 2 ||
	    l->t[1].dtype != VNPU_DTYPE_BF16)
		return 0;
	if (l->op == VNPU_LAYER_GEMM)
		return !!(((const struct vnpu_layer_gemm *)l->attrs)->flags &
			  VNPU_LAYER_F_PACKED);
	if (l->op != VNPU_LAYER_CONV)
		return 0;
	eng_conv_shape(l, &s);
	if (eng_conv_depthwise(&s))
		return 0;
	return eng_conv_wino2(l) || eng_conv_bf16_native(&s, a, &l->t[1], features);
}

__u64 vnpu_eng_layer_part_cost(__u32 op, const struct vnpu_cmd_tensor *t,
			       __u32 num_tensors, const void *attrs,
			       __u32 features)
{
	struct eng_layer l = { op, t, 0, num_tensors, attrs };
	__u64 cost = vnpu_eng_layer_cost(op, t, num_tensors, attrs);

	return layer_bf16_native(&l, features) ? cost / 2 : cost;
}

__u32 vnpu_eng_layer_max_parts(__u32 op, const struct vnpu_cmd_tensor *t,
			       __u32 num_tensors, const void *attrs,
			       __u32 features)
{
	struct eng_layer l = { op, t, 0, num_tensors, attrs };
	__u64 u = vnpu_eng_units(&l, features), max = ENG_MAX_UNITS;
	struct eng_conv_shape s;

	if (op == VNPU_LAYER_CONV && eng_conv_wino(&l)) {
		eng_conv_shape(&l, &s);
		u = eng_wino_parts(&s, features);
	}
	if (eng_base_path(features))
		max <<= ENG_UNIT_SHIFT_BASE;
	return u < 1 ? 1 : u > max ? (__u32)max : (__u32)u;
}

/* A part's scratch: A slice, accumulator and B for blocks up to @blk. */
static __u64 gemm_scratch(int pack_a, const struct eng_unit *blk,
			  __u64 bbuf_floats)
{
	__u64 bytes = ENG_ALIGN;

	if (pack_a)
		bytes += blk->rows * ENG_KC * 4 + ENG_ALIGN;
	/* The block's sums. */
	bytes += blk->rows * eng_acc_rs(blk->cols) * 4 + ENG_ALIGN;
	return bytes + bbuf_floats * 4 + ENG_ALIGN;
}

__u64 vnpu_eng_layer_scratch(__u32 op, const struct vnpu_cmd_tensor *t,
			     __u32 num_tensors, const void *attrs,
			     __u32 num_parts, __u32 features)
{
	struct eng_layer l = { op, t, 0, num_tensors, attrs };
	struct eng_conv_shape s;
	struct eng_unit u, blk;
	__u64 batch, m, n, k;

	if (op == VNPU_LAYER_GEMM) {
		const struct vnpu_layer_gemm *a = attrs;

		eng_gemm_shape(&l, &batch, &m, &n, &k);
		eng_gemm_unit(m, n, k, features, &u);
		eng_scratch_block(features, &u, &blk);
		return gemm_scratch(1, &blk, eng_packed_f32(a->flags, &t[1]) ?
				    0 : ENG_KC * blk.cols);
	}
	if (op == VNPU_LAYER_CONV) {
		const struct vnpu_layer_conv *a = attrs;

		eng_conv_shape(&l, &s);
		if (eng_conv_lanes(a)) {
			eng_lanes_unit(&s, features, &u);
			return eng_lanes_scratch(&s, a, &u) * 4 + ENG_ALIGN;
		}
		if (eng_dw_lanes(&l, &s))
			return eng_dwl_scratch(&s, a) * 4;
		if (eng_dw_windows(&s, a))
			return eng_dw_scratch(&s, a, features) * 4;
		if (eng_conv_depthwise(&s))
			return 0;
		if (eng_conv_wino(&l)) {
			eng_wino_unit(&s, features, &u);
			return eng_wino_scratch(&s, &u) * 4;
		}

		eng_conv_unit(&s, a, features, &u);
		eng_scratch_block(features, &u, &blk);
		return gemm_scratch(!eng_packed_f32(a->flags, &t[1]), &blk,
				    eng_conv_bbuf(&s, a, u.cols) + ENG_ALIGN / 4 +
				    eng_conv_bf16_cache(&s, a, &t[1], features,
							u.cols));
	}
	if (op == VNPU_LAYER_QLINEAR_CONV &&
	    (((const struct vnpu_layer_conv *)attrs)->flags & VNPU_LAYER_F_QWINO)) {
		struct eng_qwplan qw;

		eng_conv_shape(&l, &s);
		eng_qwino_plan(&s, &qw);
		return eng_qwino_scratch(&qw);
	}
	if (op == VNPU_LAYER_QLINEAR_CONV && eng_qw4_fits(&l, features)) {
		struct eng_qw4plan q4;

		eng_conv_shape(&l, &s);
		eng_qw4_plan(&s, &q4);
		return eng_qw4_scratch(&q4, !!(((const struct vnpu_layer_conv *)attrs)->flags &
					       VNPU_LAYER_F_QW4));
	}
	if (op == VNPU_LAYER_QLINEAR_CONV &&
	    (((const struct vnpu_layer_conv *)attrs)->flags & VNPU_LAYER_F_PACKED)) {
		struct eng_qplan p;

		eng_conv_shape(&l, &s);
		eng_qplan(&s, attrs, &p);
		return eng_qconv_scratch(&p);
	}
	if (op == VNPU_LAYER_ATTENTION) {
		/* vnpu_eng_attn.c: A, sums, B, S's rows and a mask row. */
		n = t[1].dims[3];
		m = eng_attn_rows(t[0].dims[2], n);
		eng_attn_block(m, &blk);
		return 5 * ENG_ALIGN + (blk.rows * ENG_KC +
					blk.rows * eng_acc_rs(blk.cols) +
					ENG_KC * blk.cols + m * n + n) * 4;
	}
	if (op == VNPU_LAYER_RESIZE)
		return eng_resize_scratch(&t[1]);
	if (op == VNPU_LAYER_POOL)
		return eng_max(eng_pool_pad_floats(attrs, &t[0], &t[1]),
			       eng_pool_s1_floats(attrs, &t[0], &t[1])) * 4;
	if (op == VNPU_LAYER_LSTM) {
		struct eng_lstm_gemm g;

		eng_lstm_gemm_init(t[0].dims[3] / 4, t[1].dtype, &g);
		return ENG_ALIGN + eng_lstm_head(t[0].dims[3] / 4) +
		       eng_max(eng_lstm_wide(t[0].dims[3] / 4, t[1].dtype,
					     features),
			       vnpu_eng_layer_scratch(VNPU_LAYER_GEMM, g.t, 4,
						      &g.a, 1, features));
	}
	if (op == VNPU_LAYER_CHAIN) {
		__u8 slot[VNPU_CHAIN_MAX_STEPS];

		/* Step buffers, then one per input (strided ones gathered). */
		return (eng_chain_slots(attrs, slot) + num_tensors - 1) *
		       ENG_CHAIN_BLOCK * sizeof(__u32);
	}
	return 0;
}

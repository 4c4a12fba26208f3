/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Malformed command streams, shared by the kselftest (rejected by SUBMIT)
 * and the validator's host unit test (rejected by vnpu_stream_validate()).
 *
 * The base stream is valid: a FILL of 256 u32 at slot 0 offset 0, then a
 * COPY of 256 u32 from slot 1 offset 0 to slot 0 offset 4096. Slots: 0 is a
 * writable 64 KiB BO, 1 a read-only 64 KiB BO, 2 the BO of slot 0 again,
 * read-only. Each case changes one field; the valid ones still fill 5 and
 * copy the 256 elements in place (the kselftest checks that).
 */
#ifndef VNPU_STREAM_CASES_H
#define VNPU_STREAM_CASES_H

#include <stdint.h>
#include <string.h>

#include <drm/vnpu_cmd.h>
#include <drm/vnpu_layers.h>

#define CASE_SLOT_SIZE 65536
#define CASE_NUM_SLOTS 3

struct case_stream {
	uint64_t words[512];
	uint32_t size;
};

static inline void *case_add(struct case_stream *s, uint32_t opcode,
			     uint32_t size)
{
	struct vnpu_cmd_header *h = (void *)((char *)s->words + s->size);

	memset(h, 0, size);
	h->opcode = opcode;
	h->size = size;
	s->size += size;
	return h;
}

static inline struct vnpu_cmd_tensor case_tensor(uint32_t slot, uint32_t dtype,
						 uint64_t offset, uint64_t n)
{
	struct vnpu_cmd_tensor t = {
		.slot = slot, .dtype = dtype, .offset = offset, .rank = 1,
	};

	t.dims[0] = n;
	t.strides[0] = 1;
	return t;
}

static inline void case_base(struct case_stream *s)
{
	struct vnpu_cmd_fill *f;
	struct vnpu_cmd_copy *c;

	memset(s, 0, sizeof(*s));
	f = case_add(s, VNPU_CMD_FILL, sizeof(*f));
	f->dst = case_tensor(0, VNPU_DTYPE_U32, 0, 256);
	f->value = 5;
	c = case_add(s, VNPU_CMD_COPY, sizeof(*c));
	c->dst = case_tensor(0, VNPU_DTYPE_U32, 4096, 256);
	c->src = case_tensor(1, VNPU_DTYPE_U32, 0, 256);
}

static inline struct vnpu_cmd_fill *case_fill(struct case_stream *s)
{
	return (struct vnpu_cmd_fill *)s->words;
}

static inline struct vnpu_cmd_copy *case_copy(struct case_stream *s)
{
	return (struct vnpu_cmd_copy *)((char *)s->words +
					sizeof(struct vnpu_cmd_fill));
}

/* Replace the stream by one LAYER command with one tensor. */
static inline struct vnpu_cmd_layer *case_layer(struct case_stream *s)
{
	struct vnpu_cmd_layer *l;

	memset(s, 0, sizeof(*s));
	l = case_add(s, VNPU_CMD_LAYER,
		     sizeof(*l) + sizeof(struct vnpu_cmd_tensor));
	l->op = 0;
	l->num_tensors = 1;
	l->num_outputs = 1;
	l->tensors[0] = case_tensor(0, VNPU_DTYPE_F32, 0, 16);
	return l;
}

static inline struct vnpu_cmd_layer *case_layer_at0(struct case_stream *s)
{
	return (struct vnpu_cmd_layer *)s->words;
}

/*
 * Replace the stream by one CHAIN layer: Y (slot 0) = relu(A + B), A and
 * B from slot 1, 256 f32 each. Valid as it is; the cases break one field.
 */
static inline struct vnpu_layer_chain *case_chain(struct case_stream *s)
{
	struct vnpu_layer_chain *a;
	struct vnpu_cmd_layer *l;

	memset(s, 0, sizeof(*s));
	l = case_add(s, VNPU_CMD_LAYER, sizeof(*l) + 3 * sizeof(struct vnpu_cmd_tensor) +
		     sizeof(*a));
	l->op = VNPU_LAYER_CHAIN;
	l->num_tensors = 3;
	l->num_outputs = 1;
	l->attr_size = sizeof(*a);
	l->tensors[0] = case_tensor(1, VNPU_DTYPE_F32, 0, 256);
	l->tensors[1] = case_tensor(1, VNPU_DTYPE_F32, 1024, 256);
	l->tensors[2] = case_tensor(0, VNPU_DTYPE_F32, 0, 256);
	a = (struct vnpu_layer_chain *)&l->tensors[3];
	a->num_steps = 2;
	a->steps[0].kind = VNPU_CHAIN_BINARY;
	a->steps[0].func = VNPU_BIN_ADD;
	a->steps[0].a = VNPU_CHAIN_IN(0);
	a->steps[0].b = VNPU_CHAIN_IN(1);
	a->steps[1].kind = VNPU_CHAIN_UNARY;
	a->steps[1].func = VNPU_ACT_RELU;
	a->steps[1].a = VNPU_CHAIN_STEP(0);
	return a;
}

/* @t as a dense tensor of the @rank dims @d. */
static inline void case_dense(struct vnpu_cmd_tensor *t, uint32_t rank,
			      const uint64_t *d)
{
	int64_t st = 1;
	int i;

	t->rank = rank;
	for (i = (int)rank - 1; i >= 0; i--) {
		t->dims[i] = d[i];
		t->strides[i] = st;
		st *= (int64_t)d[i];
	}
}

/*
 * Replace the stream by one LSTM layer of 2 steps, 1 direction, batch 1,
 * 4 hidden units: XW, R (one panel of 16 columns by 4), H0 and C0 from
 * slot 1; Y, Y_h and Y_c, its 3 outputs, in slot 0. Valid as it is.
 */
static inline struct vnpu_cmd_layer *case_lstm(struct case_stream *s)
{
	static const uint64_t xw[4] = { 2, 1, 1, 16 }, y[4] = { 2, 1, 1, 4 };
	static const uint64_t st[3] = { 1, 1, 4 };
	struct vnpu_layer_lstm *a;
	struct vnpu_cmd_layer *l;
	int i;

	memset(s, 0, sizeof(*s));
	l = case_add(s, VNPU_CMD_LAYER, sizeof(*l) + 7 * sizeof(struct vnpu_cmd_tensor) +
		     sizeof(*a));
	l->op = VNPU_LAYER_LSTM;
	l->num_tensors = 7;
	l->num_outputs = 3;
	l->attr_size = sizeof(*a);
	l->tensors[0] = case_tensor(1, VNPU_DTYPE_F32, 0, 0);
	case_dense(&l->tensors[0], 4, xw);
	l->tensors[1] = case_tensor(1, VNPU_DTYPE_F32, 1024, 64);
	for (i = 2; i < 7; i++) {
		l->tensors[i] = case_tensor(i < 4 ? 1 : 0, VNPU_DTYPE_F32,
					    2048 + 256 * i, 0);
		case_dense(&l->tensors[i], 3, st);
	}
	case_dense(&l->tensors[4], 4, y);
	a = (struct vnpu_layer_lstm *)&l->tensors[7];
	a->f.func = VNPU_ACT_SIGMOID;
	a->g.func = VNPU_ACT_TANH;
	a->h.func = VNPU_ACT_TANH;
	return l;
}

/*
 * Replace the stream by one packed QLINEAR_CONV layer, a 3x3 convolution
 * of X u8 [1, 2, 4, 4] (pad 1) to Y u8 [1, 4, 4, 4] in slot 0: the i8
 * weights in VNPU_PACK_QCONV_W (4 rows padded to 12, depth 18 to 20, then
 * 12 i32 row sums: 288 bytes), ReLU, a bias; the rest from slot 1, the
 * quantization parameters per tensor. Valid as it is.
 */
static inline struct vnpu_cmd_layer *case_qconv(struct case_stream *s)
{
	static const uint64_t x[4] = { 1, 2, 4, 4 }, y[4] = { 1, 4, 4, 4 };
	static const uint32_t dtypes[8] = {
		VNPU_DTYPE_F32, VNPU_DTYPE_U8, VNPU_DTYPE_I8, VNPU_DTYPE_F32,
		VNPU_DTYPE_I8, VNPU_DTYPE_F32, VNPU_DTYPE_U8, VNPU_DTYPE_I32,
	};
	struct vnpu_layer_conv *a;
	struct vnpu_cmd_layer *l;
	int i;

	memset(s, 0, sizeof(*s));
	l = case_add(s, VNPU_CMD_LAYER, sizeof(*l) + 10 * sizeof(struct vnpu_cmd_tensor) +
		     sizeof(*a));
	l->op = VNPU_LAYER_QLINEAR_CONV;
	l->num_tensors = 10;
	l->num_outputs = 1;
	l->attr_size = sizeof(*a);
	l->tensors[0] = case_tensor(1, VNPU_DTYPE_U8, 0, 0);
	case_dense(&l->tensors[0], 4, x);
	/* x_scale, x_zero_point, W, w_scale, w_zero_point, y_scale, y_zp, B */
	for (i = 1; i < 9; i++)
		l->tensors[i] = case_tensor(1, dtypes[i - 1], 1024 + 64 * i, 1);
	l->tensors[3] = case_tensor(1, VNPU_DTYPE_I8, 2048, 288);
	l->tensors[8].dims[0] = 4;
	l->tensors[9] = case_tensor(0, VNPU_DTYPE_U8, 0, 0);
	case_dense(&l->tensors[9], 4, y);
	a = (struct vnpu_layer_conv *)&l->tensors[10];
	a->flags = VNPU_LAYER_F_BIAS | VNPU_LAYER_F_PACKED;
	a->group = 1;
	a->act.func = VNPU_ACT_RELU;
	for (i = 0; i < 2; i++) {
		a->kernel[i] = 3;
		a->stride[i] = 1;
		a->dilation[i] = 1;
		a->pad_begin[i] = 1;
		a->pad_end[i] = 1;
	}
	return l;
}

static inline struct vnpu_layer_conv *case_qconv_attrs(struct case_stream *s)
{
	return (struct vnpu_layer_conv *)&case_qconv(s)->tensors[10];
}

/*
 * case_qconv() over VNPU_PACK_QCONV_SPLIT weights (%VNPU_LAYER_F_SPLIT8):
 * the 288 bytes, then one tile's table of 8 + 195 + 48 + 8 * 7 bytes (the
 * step schedule of 3 groups of rows, the ends of 12 rows' pairs, room for
 * 7 pairs). Valid.
 */
static inline struct vnpu_layer_conv *case_qconv_split(struct case_stream *s)
{
	struct vnpu_cmd_layer *l = case_qconv(s);
	struct vnpu_layer_conv *a = (struct vnpu_layer_conv *)&l->tensors[10];

	l->tensors[3].dims[0] = 595;
	a->flags |= VNPU_LAYER_F_SPLIT8;
	return a;
}

/*
 * case_qconv() over VNPU_PACK_QW4_W weights (%VNPU_LAYER_F_QW4): Y u8 [1,
 * 16, 4, 4], the bias of 16; W's 16 rows padded to 24 of depth 20 with
 * their sums (576 bytes), then U of 36 points of one group of 16 rows by
 * one channel pair (2304 bytes). Valid.
 */
static inline struct vnpu_layer_conv *case_qconv_qw4(struct case_stream *s)
{
	struct vnpu_cmd_layer *l = case_qconv(s);
	struct vnpu_layer_conv *a = (struct vnpu_layer_conv *)&l->tensors[10];

	l->tensors[3].dims[0] = 2880;
	l->tensors[8].dims[0] = 16;
	l->tensors[9].dims[1] = 16;
	l->tensors[9].strides[0] = 256;
	a->flags |= VNPU_LAYER_F_QW4;
	return a;
}

/*
 * case_qconv() fused with a QLinearAdd (%VNPU_LAYER_F_RESIDUAL): R u8
 * [1, 4, 4, 4] at slot 1 offset 3072, r_scale (f32), r_zero_point (u8),
 * z_scale (f32), z_zero_point (u8) after it, then Y. Valid.
 */
static inline struct vnpu_cmd_layer *case_qconv_res(struct case_stream *s)
{
	static const uint64_t y[4] = { 1, 4, 4, 4 };
	static const uint32_t dtypes[4] = {
		VNPU_DTYPE_F32, VNPU_DTYPE_U8, VNPU_DTYPE_F32, VNPU_DTYPE_U8,
	};
	struct vnpu_layer_conv a;
	struct vnpu_cmd_tensor t[10];
	struct vnpu_cmd_layer *l = case_qconv(s);
	int i;

	memcpy(t, l->tensors, sizeof(t));
	memcpy(&a, &l->tensors[10], sizeof(a));
	memset(s, 0, sizeof(*s));
	l = case_add(s, VNPU_CMD_LAYER, sizeof(*l) + 15 * sizeof(struct vnpu_cmd_tensor) +
		     sizeof(a));
	l->op = VNPU_LAYER_QLINEAR_CONV;
	l->num_tensors = 15;
	l->num_outputs = 1;
	l->attr_size = sizeof(a);
	memcpy(l->tensors, t, 9 * sizeof(t[0]));
	l->tensors[9] = case_tensor(1, VNPU_DTYPE_U8, 3072, 0);
	case_dense(&l->tensors[9], 4, y);
	for (i = 0; i < 4; i++)
		l->tensors[10 + i] = case_tensor(1, dtypes[i], 3200 + 64 * i, 1);
	l->tensors[14] = t[9];
	a.flags |= VNPU_LAYER_F_RESIDUAL;
	memcpy(&l->tensors[15], &a, sizeof(a));
	return l;
}

static inline struct vnpu_layer_conv *case_qconv_res_attrs(struct case_stream *s)
{
	return (struct vnpu_layer_conv *)&case_qconv_res(s)->tensors[15];
}

/*
 * case_qconv_res() with R at Y's slot and offset plus @skew bytes (in slot
 * 2, the same BO as Y's read only, when @other_slot): only R exactly in
 * Y's place, in Y's slot, may be written over.
 */
static inline void case_qconv_res_r_at_y(struct case_stream *s, uint64_t skew,
					 int other_slot)
{
	struct vnpu_cmd_layer *l = case_qconv_res(s);

	l->tensors[9].slot = other_slot ? 2 : l->tensors[14].slot;
	l->tensors[9].offset = l->tensors[14].offset + skew;
}

/*
 * Replace the stream by one CONV layer of X f32 @x in slot 1 to Y f32 @y
 * in slot 0, stride 1, kernel @k, pads @pad: @wn weights of type @wdt at
 * offset 1024 and a bias of Y's channels at 4096 in slot 1, @flags (with
 * %VNPU_LAYER_F_BIAS).
 */
static inline struct vnpu_cmd_layer *case_conv_layer(struct case_stream *s,
						     const uint64_t *x, const uint64_t *y,
						     uint32_t wdt, uint64_t wn,
						     uint32_t flags, uint32_t k, uint32_t pad)
{
	struct vnpu_layer_conv *a;
	struct vnpu_cmd_layer *l;
	int i;

	memset(s, 0, sizeof(*s));
	l = case_add(s, VNPU_CMD_LAYER, sizeof(*l) + 4 * sizeof(struct vnpu_cmd_tensor) +
		     sizeof(*a));
	l->op = VNPU_LAYER_CONV;
	l->num_tensors = 4;
	l->num_outputs = 1;
	l->attr_size = sizeof(*a);
	l->tensors[0] = case_tensor(1, VNPU_DTYPE_F32, 0, 0);
	case_dense(&l->tensors[0], 4, x);
	l->tensors[1] = case_tensor(1, wdt, 1024, wn);
	l->tensors[2] = case_tensor(1, VNPU_DTYPE_F32, 4096, y[1]);
	l->tensors[3] = case_tensor(0, VNPU_DTYPE_F32, 0, 0);
	case_dense(&l->tensors[3], 4, y);
	a = (struct vnpu_layer_conv *)&l->tensors[4];
	a->flags = VNPU_LAYER_F_BIAS | flags;
	a->group = 1;
	for (i = 0; i < 2; i++) {
		a->kernel[i] = k;
		a->stride[i] = 1;
		a->dilation[i] = 1;
		a->pad_begin[i] = pad;
		a->pad_end[i] = pad;
	}
	return l;
}

/*
 * Replace the stream by one packed CONV layer with its output channels on
 * the lanes (%VNPU_LAYER_F_LANES): a 1x1 convolution of X f32 [1, 8, 2, 2]
 * in slot 1 to Y f32 [1, 4, 2, 2] in slot 0, the weights f32
 * VNPU_PACK_CONV_LANES (4 channels padded to a panel of 32, depth 8: 256
 * floats) and a bias in slot 1, ReLU. Valid as it is.
 */
static inline struct vnpu_cmd_layer *case_conv_lanes(struct case_stream *s)
{
	static const uint64_t x[4] = { 1, 8, 2, 2 }, y[4] = { 1, 4, 2, 2 };
	struct vnpu_cmd_layer *l;
	struct vnpu_layer_conv *a;

	l = case_conv_layer(s, x, y, VNPU_DTYPE_F32, 256,
			    VNPU_LAYER_F_PACKED | VNPU_LAYER_F_LANES, 1, 0);
	a = (struct vnpu_layer_conv *)&l->tensors[4];
	a->act.func = VNPU_ACT_RELU;
	return l;
}

static inline struct vnpu_layer_conv *case_conv_lanes_attrs(struct case_stream *s)
{
	return (struct vnpu_layer_conv *)&case_conv_lanes(s)->tensors[4];
}

/*
 * Replace the stream by one Winograd F(4x2, 3x3) CONV layer
 * (%VNPU_LAYER_F_WINO42): a 3x3 convolution, pads 1, of X f32
 * [1, 2, 6, 6] in slot 1 to Y f32 [1, 3, 6, 6] in slot 0, the weights bf16
 * VNPU_PACK_WINO42_W (3 channels padded to a panel of 6, depth 2, 24
 * points: 288 bf16) and a bias in slot 1. Valid as it is.
 */
static inline struct vnpu_cmd_layer *case_conv_wino42(struct case_stream *s)
{
	static const uint64_t x[4] = { 1, 2, 6, 6 }, y[4] = { 1, 3, 6, 6 };

	return case_conv_layer(s, x, y, VNPU_DTYPE_BF16, 288, VNPU_LAYER_F_WINO42, 3, 1);
}

static inline struct vnpu_layer_conv *case_conv_wino42_attrs(struct case_stream *s)
{
	return (struct vnpu_layer_conv *)&case_conv_wino42(s)->tensors[4];
}

/*
 * Replace the stream by one LOOKUP layer: Y u8 [256] (slot 0) from X u8
 * [256] and its table u8 [256] in slot 1. Valid as it is.
 */
static inline struct vnpu_cmd_layer *case_lookup(struct case_stream *s)
{
	struct vnpu_cmd_layer *l;

	memset(s, 0, sizeof(*s));
	l = case_add(s, VNPU_CMD_LAYER, sizeof(*l) + 3 * sizeof(struct vnpu_cmd_tensor) +
		     sizeof(struct vnpu_layer_lookup));
	l->op = VNPU_LAYER_LOOKUP;
	l->num_tensors = 3;
	l->num_outputs = 1;
	l->attr_size = sizeof(struct vnpu_layer_lookup);
	l->tensors[0] = case_tensor(1, VNPU_DTYPE_U8, 0, 256);
	l->tensors[1] = case_tensor(1, VNPU_DTYPE_U8, 1024, VNPU_LOOKUP_ENTRIES);
	l->tensors[2] = case_tensor(0, VNPU_DTYPE_U8, 0, 256);
	return l;
}

static inline struct vnpu_layer_lookup *case_lookup_attrs(struct case_stream *s)
{
	return (struct vnpu_layer_lookup *)&case_lookup(s)->tensors[3];
}

/*
 * @t as a dense f32 tensor [1, 2, @r, @c] at @offset of @slot, or with
 * @swap its last two dims' strides swapped (a transposed view).
 */
static inline struct vnpu_cmd_tensor case_heads(uint32_t slot, uint64_t offset,
						uint64_t r, uint64_t c, int swap)
{
	struct vnpu_cmd_tensor t = case_tensor(slot, VNPU_DTYPE_F32, offset, 1);

	t.rank = 4;
	t.dims[1] = 2;
	t.dims[2] = r;
	t.dims[3] = c;
	t.strides[3] = swap ? (int64_t)r : 1;
	t.strides[2] = swap ? 1 : (int64_t)c;
	t.strides[1] = (int64_t)(r * c);
	t.strides[0] = (int64_t)(2 * r * c);
	return t;
}

/*
 * Replace the stream by one ATTENTION layer with a mask: Q [1, 2, 4, 8],
 * KT [1, 2, 8, 4] (K [1, 2, 4, 8] transposed), V [1, 2, 4, 8] and the
 * mask [1, 1, 1, 4] in slot 1, Y [1, 2, 4, 8] in slot 0. Valid as it is
 * (test_attn.c runs the layer; the cases break one field).
 */
static inline struct vnpu_cmd_layer *case_attention(struct case_stream *s)
{
	struct vnpu_cmd_layer *l;
	struct vnpu_layer_attention *a;

	memset(s, 0, sizeof(*s));
	l = case_add(s, VNPU_CMD_LAYER, sizeof(*l) + 5 * sizeof(struct vnpu_cmd_tensor) +
		     sizeof(struct vnpu_layer_attention));
	l->op = VNPU_LAYER_ATTENTION;
	l->num_tensors = 5;
	l->num_outputs = 1;
	l->attr_size = sizeof(struct vnpu_layer_attention);
	l->tensors[0] = case_heads(1, 0, 4, 8, 0);
	l->tensors[1] = case_heads(1, 1024, 8, 4, 1);
	l->tensors[2] = case_heads(1, 2048, 4, 8, 0);
	l->tensors[3] = case_tensor(1, VNPU_DTYPE_F32, 3072, 4);
	l->tensors[3].rank = 4;
	l->tensors[3].dims[0] = l->tensors[3].dims[1] = l->tensors[3].dims[2] = 1;
	l->tensors[3].dims[3] = 4;
	l->tensors[3].strides[3] = 1;
	l->tensors[4] = case_heads(0, 0, 4, 8, 0);
	a = (struct vnpu_layer_attention *)&l->tensors[5];
	a->flags = VNPU_ATTN_F_MASK | VNPU_ATTN_F_DIV;
	a->scale = 0x40000000;	/* 2.0f */
	return l;
}

static inline struct vnpu_layer_attention *case_attention_attrs(struct case_stream *s)
{
	return (struct vnpu_layer_attention *)&case_attention(s)->tensors[5];
}

/*
 * @t (256 elements of one dim) as the same elements in VNPU_MAX_DIMS dims
 * of extent 2, row-major, or with the dims reversed (a transpose).
 */
static inline void case_rank_max(struct vnpu_cmd_tensor *t, int reversed)
{
	int d;

	t->rank = VNPU_MAX_DIMS;
	for (d = 0; d < VNPU_MAX_DIMS; d++) {
		int k = reversed ? d : VNPU_MAX_DIMS - 1 - d;

		t->dims[d] = 2;
		t->strides[d] = 1ll << k;
	}
}

#define M(name, body) \
	static inline void name(struct case_stream *s) { body; }

M(m_valid, (void)s)
M(m_fill_bad_slot, case_fill(s)->dst.slot = CASE_NUM_SLOTS)
M(m_fill_huge_slot, case_fill(s)->dst.slot = 0xffffffffu)
M(m_fill_dtype_zero, case_fill(s)->dst.dtype = 0)
M(m_fill_dtype_string, case_fill(s)->dst.dtype = 8)
M(m_fill_dtype_unknown, case_fill(s)->dst.dtype = 17)
M(m_fill_misaligned_offset, case_fill(s)->dst.offset = 2)
M(m_fill_rank_max, case_rank_max(&case_fill(s)->dst, 0))
M(m_fill_rank_too_big, case_fill(s)->dst.rank = VNPU_MAX_DIMS + 1)
M(m_fill_rank_huge, case_fill(s)->dst.rank = 0xffffffffu)
M(m_fill_top_dim_above_rank, case_fill(s)->dst.dims[VNPU_MAX_DIMS - 1] = 1)
M(m_fill_top_stride_above_rank,
  case_fill(s)->dst.strides[VNPU_MAX_DIMS - 1] = 1)
M(m_fill_tensor_flags, case_fill(s)->dst.flags = 1)
M(m_fill_dim_above_rank, case_fill(s)->dst.dims[3] = 1)
M(m_fill_stride_above_rank, case_fill(s)->dst.strides[2] = 1)
M(m_fill_negative_stride, case_fill(s)->dst.strides[0] = -1)
M(m_fill_unit_dim_stride,
  struct vnpu_cmd_fill *f = case_fill(s);
  f->dst.rank = 2; f->dst.dims[1] = 1; f->dst.strides[1] = VNPU_MAX_STRIDE)
M(m_fill_unit_dim_stride_huge,
  struct vnpu_cmd_fill *f = case_fill(s);
  f->dst.rank = 2; f->dst.dims[1] = 1; f->dst.strides[1] = VNPU_MAX_STRIDE + 1)
M(m_fill_empty_stride_huge,
  struct vnpu_cmd_fill *f = case_fill(s);
  f->dst.rank = 2; f->dst.dims[1] = 0; f->dst.strides[1] = 1ll << 62)
M(m_fill_beyond_bo, case_fill(s)->dst.dims[0] = CASE_SLOT_SIZE / 4 + 1)
M(m_fill_offset_beyond_bo, case_fill(s)->dst.offset = CASE_SLOT_SIZE)
M(m_fill_end_beyond_bo, case_fill(s)->dst.offset = CASE_SLOT_SIZE - 1020)
M(m_fill_offset_overflow, case_fill(s)->dst.offset = ~3ull)
M(m_fill_span_overflow, case_fill(s)->dst.dims[0] = 1ull << 62)
M(m_fill_stride_overflow, case_fill(s)->dst.strides[0] = INT64_MAX)
M(m_fill_elems_overflow,
  struct vnpu_cmd_fill *f = case_fill(s);
  f->dst.rank = 3; f->dst.dims[0] = 1ull << 30; f->dst.dims[1] = 1ull << 30;
  f->dst.dims[2] = 1ull << 30; f->dst.strides[1] = 1ull << 30;
  f->dst.strides[2] = 1ull << 60)
M(m_fill_value_high_bits, case_fill(s)->value = 1ull << 32)
M(m_fill_readonly_slot, case_fill(s)->dst.slot = 1)
M(m_fill_readonly_alias_slot, case_fill(s)->dst.slot = 2)
M(m_fill_zero_stride_dst, case_fill(s)->dst.strides[0] = 0)
M(m_fill_size_small, case_fill(s)->hdr.size -= 8)
/* The stream is a FILL's header alone: nothing past it may be read. */
M(m_fill_header_only,
  memset(s, 0, sizeof(*s));
  case_add(s, VNPU_CMD_FILL, sizeof(struct vnpu_cmd_header)))
M(m_cmd_size_zero, case_fill(s)->hdr.size = 0)
M(m_cmd_size_unaligned, case_fill(s)->hdr.size += 4)
M(m_cmd_size_beyond_stream, case_copy(s)->hdr.size += 8)
M(m_cmd_size_huge, case_copy(s)->hdr.size = 0xfffffff8u)
M(m_unknown_opcode, case_fill(s)->hdr.opcode = 99)
M(m_nop_with_payload, case_fill(s)->hdr.opcode = VNPU_CMD_NOP)
M(m_spin_with_payload, case_copy(s)->hdr.opcode = VNPU_CMD_SPIN)
M(m_copy_bad_src_slot, case_copy(s)->src.slot = CASE_NUM_SLOTS)
M(m_copy_src_beyond_bo, case_copy(s)->src.offset = CASE_SLOT_SIZE - 4)
M(m_copy_rank_max_reversed,
  case_rank_max(&case_copy(s)->dst, 1); case_rank_max(&case_copy(s)->src, 1))
M(m_copy_rank_max_src_only, case_rank_max(&case_copy(s)->src, 1))
M(m_copy_rank_mismatch,
  struct vnpu_cmd_copy *c = case_copy(s);
  c->src.rank = 2; c->src.dims[1] = 1; c->src.strides[1] = 1)
M(m_copy_dims_mismatch, case_copy(s)->src.dims[0] = 255)
M(m_copy_esize_mismatch, case_copy(s)->src.dtype = VNPU_DTYPE_U16)
M(m_copy_src_flags, case_copy(s)->src.flags = 2)
M(m_copy_overlap, case_copy(s)->src = case_tensor(0, VNPU_DTYPE_U32, 4608, 256))
M(m_copy_overlap_alias,
  case_copy(s)->src = case_tensor(2, VNPU_DTYPE_U32, 4100, 256))
M(m_copy_dst_repeats,
  struct vnpu_cmd_copy *c = case_copy(s);
  c->dst.rank = 2; c->dst.dims[0] = 16; c->dst.dims[1] = 16;
  c->dst.strides[0] = 8; c->dst.strides[1] = 1;
  c->src.rank = 2; c->src.dims[0] = 16; c->src.dims[1] = 16;
  c->src.strides[0] = 16; c->src.strides[1] = 1)
M(m_layer_invalid_op, case_layer(s))
M(m_layer_flags, case_layer(s)->flags = 1)
M(m_layer_pad, case_layer(s)->pad = 1)
M(m_layer_no_tensors, case_layer(s)->num_tensors = 0)
M(m_layer_no_outputs, case_layer(s)->num_outputs = 0)
M(m_layer_too_many_tensors, case_layer(s)->num_tensors = VNPU_LAYER_MAX_TENSORS + 1)
M(m_layer_attr_too_big, case_layer(s)->attr_size = VNPU_LAYER_MAX_ATTR_SIZE + 8)
M(m_layer_size_mismatch, case_layer(s)->attr_size = 8)
M(m_chain_too_many_steps, case_chain(s)->num_steps = VNPU_CHAIN_MAX_STEPS + 1)
M(m_chain_forward_ref, case_chain(s)->steps[0].a = VNPU_CHAIN_STEP(1))
M(m_chain_input_past_inputs, case_chain(s)->steps[0].b = VNPU_CHAIN_IN(2))
M(m_chain_stale_step, case_chain(s)->steps[5].kind = VNPU_CHAIN_UNARY)
M(m_chain_bad_func, case_chain(s)->steps[0].func = VNPU_BIN_POW)
M(m_chain_input_beyond_bo,
  case_chain(s); case_layer_at0(s)->tensors[1].offset = CASE_SLOT_SIZE - 512)
M(m_lstm_one_output, case_lstm(s)->num_outputs = 1)
M(m_lstm_y_read_only, case_lstm(s)->tensors[4].slot = 1)
M(m_lstm_short_weights, case_lstm(s)->tensors[1].dims[0] = 48)
M(m_qconv_short_weights, case_qconv(s)->tensors[3].dims[0] = 287)
M(m_qconv_u8_weights,
  struct vnpu_cmd_layer *l = case_qconv(s);
  l->tensors[3].dtype = VNPU_DTYPE_U8; l->tensors[5].dtype = VNPU_DTYPE_U8)
M(m_qconv_sigmoid, case_qconv_attrs(s)->act.func = VNPU_ACT_SIGMOID)
M(m_qconv_relu_alpha, case_qconv_attrs(s)->act.alpha = 1)
M(m_qconv_residual, case_qconv_attrs(s)->flags |= VNPU_LAYER_F_RESIDUAL)
M(m_qconv_y_read_only, case_qconv(s)->tensors[9].slot = 1)
M(m_qconv_split_w_size, case_qconv_attrs(s)->flags |= VNPU_LAYER_F_SPLIT8)
M(m_qconv_split_unpacked, case_qconv_split(s)->flags &= ~VNPU_LAYER_F_PACKED)
M(m_qconv_qw4_short_weights,
  case_qconv_qw4(s); case_layer_at0(s)->tensors[3].dims[0] = 2879)
M(m_qconv_qw4_without_u, case_qconv_attrs(s)->flags |= VNPU_LAYER_F_QW4)
M(m_qconv_qw4_unpacked, case_qconv_qw4(s)->flags &= ~VNPU_LAYER_F_PACKED)
M(m_qconv_qw4_split, case_qconv_qw4(s)->flags |= VNPU_LAYER_F_SPLIT8)
M(m_qconv_qw4_stride2,
  struct vnpu_layer_conv *a = case_qconv_qw4(s);
  struct vnpu_cmd_tensor *y = &case_layer_at0(s)->tensors[9];
  a->stride[0] = a->stride[1] = 2; a->pad_end[0] = a->pad_end[1] = 0;
  y->dims[2] = y->dims[3] = 2; y->strides[2] = 2; y->strides[1] = 4; y->strides[0] = 64)
M(m_qconv_qw4_dilated,
  struct vnpu_layer_conv *a = case_qconv_qw4(s);
  a->dilation[0] = a->dilation[1] = 2;
  a->pad_begin[0] = a->pad_begin[1] = a->pad_end[0] = a->pad_end[1] = 2)
M(m_qconv_res_first_alone, case_qconv_attrs(s)->flags |= VNPU_LAYER_F_RES_FIRST)
M(m_qconv_res_unpacked, case_qconv_res_attrs(s)->flags &= ~VNPU_LAYER_F_PACKED)
M(m_qconv_res_r_dtype, case_qconv_res(s)->tensors[9].dtype = VNPU_DTYPE_I8)
M(m_qconv_res_r_dims, case_qconv_res(s)->tensors[9].dims[1] = 3)
M(m_qconv_res_r_strided, case_qconv_res(s)->tensors[9].strides[3] = 2)
M(m_qconv_res_r_beyond_bo, case_qconv_res(s)->tensors[9].offset = CASE_SLOT_SIZE - 32)
M(m_qconv_res_scale_dtype, case_qconv_res(s)->tensors[10].dtype = VNPU_DTYPE_U8)
M(m_qconv_res_zp_dtype, case_qconv_res(s)->tensors[11].dtype = VNPU_DTYPE_I8)
M(m_qconv_res_zscale_two, case_qconv_res(s)->tensors[12].dims[0] = 2)
M(m_qconv_res_zzp_dtype, case_qconv_res(s)->tensors[13].dtype = VNPU_DTYPE_F32)
M(m_qconv_res_short, case_qconv_res(s)->num_tensors = 14)
M(m_qconv_res_r_skewed, case_qconv_res_r_at_y(s, 1, 0))
M(m_qconv_res_r_other_slot, case_qconv_res_r_at_y(s, 0, 1))
M(m_qconv_res_x_is_y,
  struct vnpu_cmd_layer *l = case_qconv_res(s);
  l->tensors[0].slot = l->tensors[14].slot; l->tensors[0].offset = l->tensors[14].offset)
M(m_lanes_short_weights, case_conv_lanes(s)->tensors[1].dims[0] = 255)
M(m_lanes_conv_w_size,
  case_conv_lanes(s)->tensors[1].dims[0] = 8 * 6)
M(m_lanes_unpacked, case_conv_lanes_attrs(s)->flags &= ~VNPU_LAYER_F_PACKED)
M(m_lanes_wino, case_conv_lanes_attrs(s)->flags |= VNPU_LAYER_F_WINO)
M(m_lanes_f16_weights,
  struct vnpu_cmd_layer *l = case_conv_lanes(s);
  l->tensors[1].dtype = VNPU_DTYPE_F16; l->tensors[1].offset = 2048;
  l->tensors[1].dims[0] = 512)
M(m_lanes_bf16_x,
  struct vnpu_cmd_layer *l = case_conv_lanes(s);
  l->tensors[0].dtype = VNPU_DTYPE_BF16)
M(m_lanes_stride_3,
  struct vnpu_cmd_layer *l = case_conv_lanes(s);
  struct vnpu_layer_conv *a = (struct vnpu_layer_conv *)&l->tensors[4];
  a->stride[0] = a->stride[1] = 3;
  l->tensors[3].dims[2] = l->tensors[3].dims[3] = 1;
  l->tensors[3].strides[0] = 4; l->tensors[3].strides[1] = 1;
  l->tensors[3].strides[2] = 1)
M(m_lanes_padded,
  struct vnpu_cmd_layer *l = case_conv_lanes(s);
  struct vnpu_layer_conv *a = (struct vnpu_layer_conv *)&l->tensors[4];
  a->pad_begin[1] = a->pad_end[1] = 1;
  l->tensors[3].dims[3] = 4; l->tensors[3].strides[0] = 32;
  l->tensors[3].strides[1] = 8; l->tensors[3].strides[2] = 4)
M(m_wino42_short_weights, case_conv_wino42(s)->tensors[1].dims[0] = 287)
M(m_wino42_wino2_size, case_conv_wino42(s)->tensors[1].dims[0] = 192)
M(m_wino42_f32_weights,
  struct vnpu_cmd_layer *l = case_conv_wino42(s);
  l->tensors[1].dtype = VNPU_DTYPE_F32; l->tensors[1].offset = 2048)
M(m_wino42_and_wino2, case_conv_wino42_attrs(s)->flags |= VNPU_LAYER_F_WINO2)
M(m_wino42_and_wino, case_conv_wino42_attrs(s)->flags |= VNPU_LAYER_F_WINO)
M(m_wino42_packed, case_conv_wino42_attrs(s)->flags |= VNPU_LAYER_F_PACKED)
M(m_wino42_bf16_x,
  struct vnpu_cmd_layer *l = case_conv_wino42(s);
  l->tensors[0].dtype = VNPU_DTYPE_BF16)
M(m_wino42_stride_2,
  struct vnpu_cmd_layer *l = case_conv_wino42(s);
  struct vnpu_layer_conv *a = (struct vnpu_layer_conv *)&l->tensors[4];
  a->stride[0] = a->stride[1] = 2;
  l->tensors[3].dims[2] = l->tensors[3].dims[3] = 3;
  l->tensors[3].strides[0] = 27; l->tensors[3].strides[1] = 9;
  l->tensors[3].strides[2] = 3)
M(m_lookup_flags, case_lookup_attrs(s)->flags = 1)
M(m_lookup_pad, case_lookup_attrs(s)->pad = 1)
M(m_lookup_short_table, case_lookup(s)->tensors[1].dims[0] = VNPU_LOOKUP_ENTRIES - 1)
M(m_lookup_strided_table, case_lookup(s)->tensors[1].strides[0] = 2)
M(m_lookup_table_dtype, case_lookup(s)->tensors[1].dtype = VNPU_DTYPE_I8)
M(m_lookup_f32_x, case_lookup(s)->tensors[0].dtype = VNPU_DTYPE_F32)
M(m_lookup_table_beyond_bo,
  case_lookup(s)->tensors[1].offset = CASE_SLOT_SIZE - VNPU_LOOKUP_ENTRIES + 8)
M(m_lookup_y_read_only, case_lookup(s)->tensors[2].slot = 1)
M(m_attention_flags, case_attention_attrs(s)->flags |= 4)
M(m_attention_zero_scale, case_attention_attrs(s)->scale = 0)
M(m_attention_no_mask_flag, case_attention_attrs(s)->flags = VNPU_ATTN_F_DIV)
M(m_attention_heads, case_attention(s)->tensors[2].dims[1] = 1)
M(m_attention_depth, case_attention(s)->tensors[1].dims[2] = 7)
M(m_attention_mask_shape, case_attention(s)->tensors[3].dims[3] = 3)
M(m_attention_y_strided, case_attention(s)->tensors[4].strides[3] = 2)
M(m_attention_kt_beyond_bo,
  case_attention(s)->tensors[1].offset = CASE_SLOT_SIZE - 64 * 4 + 4)
M(m_attention_mask_beyond_bo,
  case_attention(s)->tensors[3].offset = CASE_SLOT_SIZE - 8)
M(m_attention_y_read_only, case_attention(s)->tensors[4].slot = 1)

#undef M

/* X(name, mutate, valid) for every case. */
#define STREAM_CASES(X) \
	X(valid_fill_copy, m_valid, 1) \
	X(fill_bad_slot, m_fill_bad_slot, 0) \
	X(fill_huge_slot, m_fill_huge_slot, 0) \
	X(fill_dtype_zero, m_fill_dtype_zero, 0) \
	X(fill_dtype_string, m_fill_dtype_string, 0) \
	X(fill_dtype_unknown, m_fill_dtype_unknown, 0) \
	X(fill_misaligned_offset, m_fill_misaligned_offset, 0) \
	X(fill_rank_max, m_fill_rank_max, 1) \
	X(fill_rank_too_big, m_fill_rank_too_big, 0) \
	X(fill_rank_huge, m_fill_rank_huge, 0) \
	X(fill_top_dim_above_rank, m_fill_top_dim_above_rank, 0) \
	X(fill_top_stride_above_rank, m_fill_top_stride_above_rank, 0) \
	X(fill_tensor_flags, m_fill_tensor_flags, 0) \
	X(fill_dim_above_rank, m_fill_dim_above_rank, 0) \
	X(fill_stride_above_rank, m_fill_stride_above_rank, 0) \
	X(fill_negative_stride, m_fill_negative_stride, 0) \
	X(fill_unit_dim_stride, m_fill_unit_dim_stride, 1) \
	X(fill_unit_dim_stride_huge, m_fill_unit_dim_stride_huge, 0) \
	X(fill_empty_stride_huge, m_fill_empty_stride_huge, 0) \
	X(fill_beyond_bo, m_fill_beyond_bo, 0) \
	X(fill_offset_beyond_bo, m_fill_offset_beyond_bo, 0) \
	X(fill_end_beyond_bo, m_fill_end_beyond_bo, 0) \
	X(fill_offset_overflow, m_fill_offset_overflow, 0) \
	X(fill_span_overflow, m_fill_span_overflow, 0) \
	X(fill_stride_overflow, m_fill_stride_overflow, 0) \
	X(fill_elems_overflow, m_fill_elems_overflow, 0) \
	X(fill_value_high_bits, m_fill_value_high_bits, 0) \
	X(fill_readonly_slot, m_fill_readonly_slot, 0) \
	X(fill_readonly_alias_slot, m_fill_readonly_alias_slot, 0) \
	X(fill_zero_stride_dst, m_fill_zero_stride_dst, 0) \
	X(fill_size_small, m_fill_size_small, 0) \
	X(fill_header_only, m_fill_header_only, 0) \
	X(cmd_size_zero, m_cmd_size_zero, 0) \
	X(cmd_size_unaligned, m_cmd_size_unaligned, 0) \
	X(cmd_size_beyond_stream, m_cmd_size_beyond_stream, 0) \
	X(cmd_size_huge, m_cmd_size_huge, 0) \
	X(unknown_opcode, m_unknown_opcode, 0) \
	X(nop_with_payload, m_nop_with_payload, 0) \
	X(spin_with_payload, m_spin_with_payload, 0) \
	X(copy_bad_src_slot, m_copy_bad_src_slot, 0) \
	X(copy_src_beyond_bo, m_copy_src_beyond_bo, 0) \
	X(copy_rank_max_reversed, m_copy_rank_max_reversed, 1) \
	X(copy_rank_max_src_only, m_copy_rank_max_src_only, 0) \
	X(copy_rank_mismatch, m_copy_rank_mismatch, 0) \
	X(copy_dims_mismatch, m_copy_dims_mismatch, 0) \
	X(copy_esize_mismatch, m_copy_esize_mismatch, 0) \
	X(copy_src_flags, m_copy_src_flags, 0) \
	X(copy_overlap, m_copy_overlap, 0) \
	X(copy_overlap_alias, m_copy_overlap_alias, 0) \
	X(copy_dst_repeats, m_copy_dst_repeats, 0) \
	X(layer_invalid_op, m_layer_invalid_op, 0) \
	X(layer_flags, m_layer_flags, 0) \
	X(layer_pad, m_layer_pad, 0) \
	X(layer_no_tensors, m_layer_no_tensors, 0) \
	X(layer_no_outputs, m_layer_no_outputs, 0) \
	X(layer_too_many_tensors, m_layer_too_many_tensors, 0) \
	X(layer_attr_too_big, m_layer_attr_too_big, 0) \
	X(layer_size_mismatch, m_layer_size_mismatch, 0) \
	X(chain_too_many_steps, m_chain_too_many_steps, 0) \
	X(chain_forward_ref, m_chain_forward_ref, 0) \
	X(chain_input_past_inputs, m_chain_input_past_inputs, 0) \
	X(chain_stale_step, m_chain_stale_step, 0) \
	X(chain_bad_func, m_chain_bad_func, 0) \
	X(chain_input_beyond_bo, m_chain_input_beyond_bo, 0) \
	X(lstm_one_output, m_lstm_one_output, 0) \
	X(lstm_y_read_only, m_lstm_y_read_only, 0) \
	X(lstm_short_weights, m_lstm_short_weights, 0) \
	X(qconv_short_weights, m_qconv_short_weights, 0) \
	X(qconv_u8_weights, m_qconv_u8_weights, 0) \
	X(qconv_sigmoid, m_qconv_sigmoid, 0) \
	X(qconv_relu_alpha, m_qconv_relu_alpha, 0) \
	X(qconv_residual, m_qconv_residual, 0) \
	X(qconv_y_read_only, m_qconv_y_read_only, 0) \
	X(qconv_split_w_size, m_qconv_split_w_size, 0) \
	X(qconv_split_unpacked, m_qconv_split_unpacked, 0) \
	X(qconv_qw4_short_weights, m_qconv_qw4_short_weights, 0) \
	X(qconv_qw4_without_u, m_qconv_qw4_without_u, 0) \
	X(qconv_qw4_unpacked, m_qconv_qw4_unpacked, 0) \
	X(qconv_qw4_split, m_qconv_qw4_split, 0) \
	X(qconv_qw4_stride2, m_qconv_qw4_stride2, 0) \
	X(qconv_qw4_dilated, m_qconv_qw4_dilated, 0) \
	X(qconv_res_first_alone, m_qconv_res_first_alone, 0) \
	X(qconv_res_unpacked, m_qconv_res_unpacked, 0) \
	X(qconv_res_r_dtype, m_qconv_res_r_dtype, 0) \
	X(qconv_res_r_dims, m_qconv_res_r_dims, 0) \
	X(qconv_res_r_strided, m_qconv_res_r_strided, 0) \
	X(qconv_res_r_beyond_bo, m_qconv_res_r_beyond_bo, 0) \
	X(qconv_res_scale_dtype, m_qconv_res_scale_dtype, 0) \
	X(qconv_res_zp_dtype, m_qconv_res_zp_dtype, 0) \
	X(qconv_res_zscale_two, m_qconv_res_zscale_two, 0) \
	X(qconv_res_zzp_dtype, m_qconv_res_zzp_dtype, 0) \
	X(qconv_res_short, m_qconv_res_short, 0) \
	X(qconv_res_r_skewed, m_qconv_res_r_skewed, 0) \
	X(qconv_res_r_other_slot, m_qconv_res_r_other_slot, 0) \
	X(qconv_res_x_is_y, m_qconv_res_x_is_y, 0) \
	X(lanes_short_weights, m_lanes_short_weights, 0) \
	X(lanes_conv_w_size, m_lanes_conv_w_size, 0) \
	X(lanes_unpacked, m_lanes_unpacked, 0) \
	X(lanes_wino, m_lanes_wino, 0) \
	X(lanes_f16_weights, m_lanes_f16_weights, 0) \
	X(lanes_bf16_x, m_lanes_bf16_x, 0) \
	X(lanes_stride_3, m_lanes_stride_3, 0) \
	X(lanes_padded, m_lanes_padded, 0) \
	X(wino42_short_weights, m_wino42_short_weights, 0) \
	X(wino42_wino2_size, m_wino42_wino2_size, 0) \
	X(wino42_f32_weights, m_wino42_f32_weights, 0) \
	X(wino42_and_wino2, m_wino42_and_wino2, 0) \
	X(wino42_and_wino, m_wino42_and_wino, 0) \
	X(wino42_packed, m_wino42_packed, 0) \
	X(wino42_bf16_x, m_wino42_bf16_x, 0) \
	X(wino42_stride_2, m_wino42_stride_2, 0) \
	X(lookup_flags, m_lookup_flags, 0) \
	X(lookup_pad, m_lookup_pad, 0) \
	X(lookup_short_table, m_lookup_short_table, 0) \
	X(lookup_strided_table, m_lookup_strided_table, 0) \
	X(lookup_table_dtype, m_lookup_table_dtype, 0) \
	X(lookup_f32_x, m_lookup_f32_x, 0) \
	X(lookup_table_beyond_bo, m_lookup_table_beyond_bo, 0) \
	X(lookup_y_read_only, m_lookup_y_read_only, 0) \
	X(attention_flags, m_attention_flags, 0) \
	X(attention_zero_scale, m_attention_zero_scale, 0) \
	X(attention_no_mask_flag, m_attention_no_mask_flag, 0) \
	X(attention_heads, m_attention_heads, 0) \
	X(attention_depth, m_attention_depth, 0) \
	X(attention_mask_shape, m_attention_mask_shape, 0) \
	X(attention_y_strided, m_attention_y_strided, 0) \
	X(attention_kt_beyond_bo, m_attention_kt_beyond_bo, 0) \
	X(attention_mask_beyond_bo, m_attention_mask_beyond_bo, 0) \
	X(attention_y_read_only, m_attention_y_read_only, 0)

#endif /* VNPU_STREAM_CASES_H */

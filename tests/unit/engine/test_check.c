// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * vnpu_eng_layer_check(): a valid layer of each op passes, and each
 * malformed field of it, one at a time, is rejected.
 */
#include "engine_test.h"
#include "ksft_main.h"

#define NAN_BITS 0x7fc00000u
#define INF_BITS 0x7f800000u

struct fixture {
	__u32 op;
	__u32 n;
	struct vnpu_cmd_tensor t[8];
	union {
		struct vnpu_layer_gemm gemm;
		struct vnpu_layer_conv conv;
		struct vnpu_layer_pool pool;
		struct vnpu_layer_binary bin;
		struct vnpu_layer_act act;
		struct vnpu_layer_softmax sm;
		struct vnpu_layer_norm norm;
		struct vnpu_layer_reduce red;
		struct vnpu_layer_argreduce arg;
		struct vnpu_layer_resize rs;
		struct vnpu_layer_pad pad;
		struct vnpu_layer_gather ga;
		unsigned char bytes[256];
	} a;
	__u32 size;
};

static int check(const struct fixture *f)
{
	return vnpu_eng_layer_check(f->op, f->t, f->n, &f->a, f->size);
}

static struct vnpu_cmd_tensor T(__u32 dt, __u32 rank, __u64 d0, __u64 d1,
				__u64 d2, __u64 d3)
{
	__u64 dims[4] = { d0, d1, d2, d3 };

	return et_dense(dt, rank, dims);
}

/* Applies @stmt to a copy of @base and expects the check to fail. */
#define BAD(base, what, stmt) do {					\
	struct fixture f_ = (base);					\
	struct fixture *f = &f_;					\
	stmt;								\
	EXPECT_EQ(VNPU_ENG_EINVAL, check(f))				\
		TH_LOG("%s: %s accepted", op_name(f->op), what);	\
	(void)f;							\
} while (0)

static const char *op_name(__u32 op)
{
	static const char *const names[] = {
		"invalid", "gemm", "conv", "pool", "binary", "where", "unary",
		"softmax", "norm", "reduce", "argreduce", "resize", "pad",
		"gather", "gather_elements", "cast",
	};

	return op < 16 ? names[op] : "?";
}

/* Malformations every op must reject. */
static void common_bad(struct __test_metadata *_metadata, const struct fixture *b)
{
	__u32 last = b->n - 1;

	EXPECT_TRUE(!check(b))
		TH_LOG("%s: the valid layer is rejected", op_name(b->op));
	BAD(*b, "op 0", f->op = 0);
	BAD(*b, "op past the last", f->op = VNPU_LAYER_CAST + 1);
	BAD(*b, "attr_size + 8", f->size += 8);
	if (b->size)
		BAD(*b, "attr_size - 8", f->size -= 8);
	BAD(*b, "no tensors", f->n = 0);
	BAD(*b, "one tensor too many", f->n++; f->t[f->n - 1] = f->t[f->n - 2]);
	BAD(*b, "17 tensors", f->n = 17);
	BAD(*b, "output rank above the maximum", f->t[last].rank = VNPU_MAX_DIMS + 1);
	BAD(*b, "input rank above the maximum", f->t[0].rank = VNPU_MAX_DIMS + 1);
	BAD(*b, "unknown dtype", f->t[last].dtype = 8);
	BAD(*b, "dtype 0", f->t[0].dtype = 0);
	BAD(*b, "huge dim", f->t[0].dims[0] = 1ull << 40);
	if (b->t[last].rank && b->t[last].dims[0] > 1)
		BAD(*b, "aliased output", f->t[last].strides[0] = 0);
	if (b->t[last].rank)
		BAD(*b, "output rank - 1", f->t[last].rank--);
	BAD(*b, "output rank + 1", f->t[last].dims[f->t[last].rank++] = 2);
}

static void gemm_bad(struct __test_metadata *_metadata)
{
	struct fixture b = { .op = VNPU_LAYER_GEMM, .n = 5 };
	__u64 psize = vnpu_eng_packed_size(VNPU_PACK_GEMM_B, 1, 7, 9);

	b.t[0] = T(VNPU_DTYPE_F32, 3, 2, 5, 7, 0);
	b.t[1] = T(VNPU_DTYPE_F32, 3, 2, 7, 9, 0);
	b.t[2] = T(VNPU_DTYPE_F32, 1, 9, 0, 0, 0);
	b.t[3] = T(VNPU_DTYPE_F32, 3, 2, 5, 9, 0);
	b.t[4] = T(VNPU_DTYPE_F32, 3, 2, 5, 9, 0);
	b.a.gemm.flags = VNPU_LAYER_F_BIAS | VNPU_LAYER_F_RESIDUAL;
	b.a.gemm.alpha = b.a.gemm.beta = et_f32_bits(1);
	b.size = sizeof(b.a.gemm);
	common_bad(_metadata, &b);
	BAD(b, "unknown flag", f->a.gemm.flags |= 1u << 5);
	BAD(b, "the conv-only wino flag", f->a.gemm.flags |= VNPU_LAYER_F_WINO);
	BAD(b, "flags without the bias tensor", f->a.gemm.flags &= ~VNPU_LAYER_F_BIAS);
	BAD(b, "pad", f->a.gemm.pad = 1);
	BAD(b, "alpha NaN", f->a.gemm.alpha = NAN_BITS);
	BAD(b, "beta inf", f->a.gemm.beta = INF_BITS);
	BAD(b, "act func", f->a.gemm.act.func = VNPU_ACT_COUNT);
	BAD(b, "act NOT", f->a.gemm.act.func = VNPU_ACT_NOT);
	BAD(b, "act unknown flag", f->a.gemm.act.flags = 4);
	BAD(b, "act MAX and MIN", f->a.gemm.act.flags = VNPU_ACT_F_MAX | VNPU_ACT_F_MIN);
	BAD(b, "act MAX after CLIP", f->a.gemm.act.flags = VNPU_ACT_F_MAX;
	    f->a.gemm.act.func = VNPU_ACT_CLIP);
	BAD(b, "act MIN after SIGMOID", f->a.gemm.act.flags = VNPU_ACT_F_MIN;
	    f->a.gemm.act.func = VNPU_ACT_SIGMOID);
	BAD(b, "act MAX bound NaN", f->a.gemm.act.flags = VNPU_ACT_F_MAX;
	    f->a.gemm.act.beta = NAN_BITS);
	BAD(b, "act MIN bound -inf", f->a.gemm.act.flags = VNPU_ACT_F_MIN;
	    f->a.gemm.act.beta = INF_BITS | 0x80000000u);
	{
		struct fixture ok = b;

		ok.a.gemm.act.func = VNPU_ACT_LEAKY_RELU;
		ok.a.gemm.act.flags = VNPU_ACT_F_MAX;
		ok.a.gemm.act.beta = et_f32_bits(-0.4f);
		EXPECT_TRUE(!check(&ok))
			TH_LOG("gemm: LEAKY_RELU with a MAX bound rejected");
		ok.a.gemm.act.func = VNPU_ACT_IDENTITY;
		ok.a.gemm.act.flags = VNPU_ACT_F_MIN;
		EXPECT_TRUE(!check(&ok))
			TH_LOG("gemm: IDENTITY with a MIN bound rejected");
	}
	BAD(b, "act alpha NaN", f->a.gemm.act.alpha = NAN_BITS);
	BAD(b, "K mismatch", f->t[1].dims[1] = 8);
	BAD(b, "M mismatch", f->t[0].dims[1] = 4);
	BAD(b, "N mismatch", f->t[1].dims[2] = 10);
	BAD(b, "batch mismatch", f->t[0].dims[0] = 3);
	BAD(b, "bias not broadcastable", f->t[2].dims[0] = 8);
	BAD(b, "residual not broadcastable", f->t[3].dims[1] = 2);
	BAD(b, "f64 A", f->t[0].dtype = VNPU_DTYPE_F64);
	BAD(b, "i32 Y", f->t[4].dtype = VNPU_DTYPE_I32);
	BAD(b, "i16 bias", f->t[2].dtype = VNPU_DTYPE_I16);
	BAD(b, "u16 residual", f->t[3].dtype = VNPU_DTYPE_U16);
	{
		/* f16 and bf16 storage, each tensor its own type. */
		struct fixture h = b;
		__u32 i;

		for (i = 0; i < 5; i++)
			h.t[i] = T(i % 2 ? VNPU_DTYPE_F16 : VNPU_DTYPE_BF16,
				   b.t[i].rank, b.t[i].dims[0], b.t[i].dims[1],
				   b.t[i].dims[2], 0);
		EXPECT_TRUE(!check(&h))
			TH_LOG("gemm f16/bf16: valid layer rejected");
		BAD(h, "f16 with i8 A", f->t[0].dtype = VNPU_DTYPE_I8);
	}
	BAD(b, "Y columns strided", f->t[4].strides[2] = 2;
	    f->t[4].strides[1] = 18; f->t[4].strides[0] = 90);
	BAD(b, "rank 1 A", f->t[0].rank = 1);
	BAD(b, "depth over the limit", f->t[0].dims[2] = (1u << 19) + 1;
	    f->t[1].dims[1] = (1u << 19) + 1);
	/* Packed B: its size must match. */
	b.n = 3;
	b.a.gemm.flags = VNPU_LAYER_F_PACKED;
	b.t[0] = T(VNPU_DTYPE_F32, 2, 5, 7, 0, 0);
	b.t[1] = T(VNPU_DTYPE_F32, 1, psize, 0, 0, 0);
	b.t[2] = T(VNPU_DTYPE_F32, 2, 5, 9, 0, 0);
	EXPECT_TRUE(!check(&b))
		TH_LOG("gemm packed: valid layer rejected");
	BAD(b, "packed size - 1", f->t[1].dims[0]--);
	BAD(b, "packed rank 2", f->t[1] = T(VNPU_DTYPE_F32, 2, 7, 9, 0, 0));
	BAD(b, "packed strided", f->t[1].strides[0] = 2);
	BAD(b, "packed i16", f->t[1].dtype = VNPU_DTYPE_I16);
	BAD(b, "packed u8", f->t[1].dtype = VNPU_DTYPE_U8);
	b.t[1].dtype = VNPU_DTYPE_F16;
	EXPECT_TRUE(!check(&b))
		TH_LOG("gemm packed f16: valid layer rejected");
	b.t[1].dtype = VNPU_DTYPE_BF16;
	EXPECT_TRUE(!check(&b))
		TH_LOG("gemm packed bf16: valid layer rejected");
	b.t[1].dtype = VNPU_DTYPE_F32;
	b.t[0].dtype = VNPU_DTYPE_F16;
	b.t[2].dtype = VNPU_DTYPE_F16;
	EXPECT_TRUE(!check(&b))
		TH_LOG("gemm packed, f16 A and Y: valid layer rejected");
}

static struct fixture conv_base(void)
{
	struct fixture b = { .op = VNPU_LAYER_CONV, .n = 5 };

	b.t[0] = T(VNPU_DTYPE_F32, 4, 1, 4, 9, 9);
	b.t[1] = T(VNPU_DTYPE_F32, 4, 6, 2, 3, 3);
	b.t[2] = T(VNPU_DTYPE_F32, 1, 6, 0, 0, 0);
	b.t[3] = T(VNPU_DTYPE_F32, 4, 1, 6, 4, 9);
	b.t[4] = T(VNPU_DTYPE_F32, 4, 1, 6, 4, 9);
	b.a.conv.flags = VNPU_LAYER_F_BIAS | VNPU_LAYER_F_RESIDUAL;
	b.a.conv.group = 2;
	b.a.conv.kernel[0] = b.a.conv.kernel[1] = 3;
	b.a.conv.stride[0] = 2;
	b.a.conv.stride[1] = 1;
	b.a.conv.dilation[0] = b.a.conv.dilation[1] = 1;
	b.a.conv.pad_begin[0] = 1;
	b.a.conv.pad_end[0] = 0;
	b.a.conv.pad_begin[1] = b.a.conv.pad_end[1] = 1;
	b.size = sizeof(b.a.conv);
	return b;
}

/*
 * conv_base() as a Winograd layer of kind @flag: stride 1, Y 8x9, W
 * transformed into @points points of type @wtype. Checks that it passes and
 * that what every Winograd kind refuses is refused.
 */
static struct fixture wino_base(struct __test_metadata *_metadata, __u32 flag,
				__u32 pack, __u32 wtype, __u64 points)
{
	struct fixture w = conv_base();
	__u64 ws = vnpu_eng_packed_size(pack, 2, 3, 18);

	w.a.conv.flags |= flag;
	w.a.conv.stride[0] = 1;
	w.t[1] = T(wtype, 1, ws, 0, 0, 0);
	w.t[3] = T(VNPU_DTYPE_F32, 4, 1, 6, 8, 9);
	w.t[4] = w.t[3];
	EXPECT_EQ(2ull * 6 * 2 * points, ws)
		TH_LOG("flag %#x: packed size", flag);
	EXPECT_TRUE(!check(&w))
		TH_LOG("conv flag %#x: valid layer rejected", flag);
	BAD(w, "Winograd size - 1", f->t[1].dims[0]--);
	BAD(w, "Winograd and packed", f->a.conv.flags |= VNPU_LAYER_F_PACKED);
	BAD(w, "Winograd stride 2", f->a.conv.stride[0] = 2;
	    f->t[3] = T(VNPU_DTYPE_F32, 4, 1, 6, 4, 9); f->t[4] = f->t[3]);
	BAD(w, "Winograd pad 3", f->a.conv.pad_begin[1] = 3;
	    f->t[3] = T(VNPU_DTYPE_F32, 4, 1, 6, 8, 11); f->t[4] = f->t[3]);
	return w;
}

static void conv_bad(struct __test_metadata *_metadata)
{
	struct fixture b = conv_base(), one;

	common_bad(_metadata, &b);
	BAD(b, "unknown flag", f->a.conv.flags |= 1u << 7);
	BAD(b, "unknown flag 0x200", f->a.conv.flags |= 1u << 9);
	BAD(b, "group 0", f->a.conv.group = 0);
	BAD(b, "group not dividing C", f->a.conv.group = 3);
	BAD(b, "kernel 0", f->a.conv.kernel[1] = 0);
	BAD(b, "kernel not W's", f->a.conv.kernel[0] = 2);
	BAD(b, "stride 0", f->a.conv.stride[0] = 0);
	BAD(b, "dilation 0", f->a.conv.dilation[1] = 0);
	BAD(b, "huge pad", f->a.conv.pad_end[1] = 1u << 30);
	BAD(b, "pad changing OW", f->a.conv.pad_end[1] = 2);
	BAD(b, "act func", f->a.conv.act.func = 99);
	BAD(b, "act unknown flag", f->a.conv.act.flags = 8);
	BAD(b, "act MIN after ELU", f->a.conv.act.flags = VNPU_ACT_F_MIN;
	    f->a.conv.act.func = VNPU_ACT_ELU);
	BAD(b, "act MAX bound inf", f->a.conv.act.flags = VNPU_ACT_F_MAX;
	    f->a.conv.act.beta = INF_BITS);
	{
		struct fixture ok = b;

		ok.a.conv.act.func = VNPU_ACT_RELU;
		ok.a.conv.act.flags = VNPU_ACT_F_MIN;
		ok.a.conv.act.beta = et_f32_bits(6);
		EXPECT_TRUE(!check(&ok))
			TH_LOG("conv: RELU with a MIN bound rejected");
	}
	BAD(b, "OH wrong", f->t[4].dims[2] = 5; f->t[3].dims[2] = 5);
	BAD(b, "N mismatch", f->t[4].dims[0] = 2);
	BAD(b, "W channels", f->t[1].dims[1] = 4);
	BAD(b, "W count", f->t[1].dims[0] = 5);
	BAD(b, "bias size", f->t[2].dims[0] = 5);
	BAD(b, "residual dims", f->t[3].dims[3] = 8);
	BAD(b, "Y not spatially dense", f->t[4].strides[2] = 10;
	    f->t[4].strides[1] = 40; f->t[4].strides[0] = 240);
	BAD(b, "window larger than input", f->a.conv.kernel[0] = 20;
	    f->t[1].dims[2] = 20);
	BAD(b, "depth over the limit", f->t[0].dims[1] = 1u << 17;
	    f->t[1].dims[1] = 1u << 16);
	{
		struct fixture win = b;

		win.a.conv.stride[0] = 1;
		win.t[3] = T(VNPU_DTYPE_F32, 4, 1, 6, 8, 9);
		win.t[4] = win.t[3];
		EXPECT_TRUE(!check(&win))
			TH_LOG("conv stride 1: valid layer rejected");
		BAD(win, "input window over the scratch limit",
		    f->t[0].dims[1] = 1ull << 22; f->t[1].dims[1] = 1ull << 21);
	}
	one = b;
	one.t[0] = T(VNPU_DTYPE_F32, 3, 1, 4, 9, 0);
	one.t[1] = T(VNPU_DTYPE_F32, 3, 6, 2, 3, 0);
	one.t[3] = T(VNPU_DTYPE_F32, 3, 1, 6, 9, 0);
	one.t[4] = one.t[3];
	one.a.conv.kernel[0] = 1;
	one.a.conv.stride[0] = 1;
	one.a.conv.pad_begin[0] = 0;
	EXPECT_TRUE(!check(&one))
		TH_LOG("conv1d: valid layer rejected");
	BAD(one, "1-D with a kernel height", f->a.conv.kernel[0] = 2);
	BAD(one, "1-D with a height pad", f->a.conv.pad_end[0] = 1);
	b.a.conv.flags |= VNPU_LAYER_F_PACKED;
	b.t[1] = T(VNPU_DTYPE_F32, 1,
		   vnpu_eng_packed_size(VNPU_PACK_CONV_W, 2, 3, 18), 0, 0, 0);
	EXPECT_TRUE(!check(&b))
		TH_LOG("conv packed: valid layer rejected");
	BAD(b, "packed size + 1", f->t[1].dims[0]++);
	BAD(b, "the QLINEAR_CONV-only split flag", f->a.conv.flags |= VNPU_LAYER_F_SPLIT8);
	BAD(b, "packed i16", f->t[1].dtype = VNPU_DTYPE_I16);
	BAD(b, "packed f64", f->t[1].dtype = VNPU_DTYPE_F64);
	b.t[1].dtype = VNPU_DTYPE_BF16;
	EXPECT_TRUE(!check(&b))
		TH_LOG("conv packed bf16: valid layer rejected");
	b.t[1].dtype = VNPU_DTYPE_F32;
	{
		/* Winograd F(4x4, 3x3): W transformed, 2 x 3 x 2 x 36. */
		struct fixture wn = wino_base(_metadata, VNPU_LAYER_F_WINO,
					      VNPU_PACK_WINO_W, VNPU_DTYPE_F32,
					      36);

		BAD(wn, "wino size + 1", f->t[1].dims[0]++);
		BAD(wn, "wino W plain", f->t[1] = T(VNPU_DTYPE_F32, 4, 6, 2, 3, 3));
		BAD(wn, "wino W f16", f->t[1].dtype = VNPU_DTYPE_F16);
		BAD(wn, "wino W bf16", f->t[1].dtype = VNPU_DTYPE_BF16);
		BAD(wn, "wino X f16", f->t[0].dtype = VNPU_DTYPE_F16);
		BAD(wn, "wino dilation 2", f->a.conv.dilation[1] = 2;
		    f->t[3] = T(VNPU_DTYPE_F32, 4, 1, 6, 8, 7); f->t[4] = f->t[3]);
		BAD(wn, "wino kernel 1x1", f->a.conv.kernel[0] = 1;
		    f->a.conv.kernel[1] = 1; f->a.conv.pad_begin[0] = 0;
		    f->a.conv.pad_begin[1] = f->a.conv.pad_end[1] = 0;
		    f->t[1].dims[0] = vnpu_eng_packed_size(VNPU_PACK_WINO_W, 2, 3, 18);
		    f->t[3] = T(VNPU_DTYPE_F32, 4, 1, 6, 9, 9); f->t[4] = f->t[3]);
		BAD(wn, "wino C/group over VNPU_WINO_MAX_C",
		    f->t[0] = T(VNPU_DTYPE_F32, 4, 1, 2 * (VNPU_WINO_MAX_C + 1), 9, 9);
		    f->t[1].dims[0] = vnpu_eng_packed_size(VNPU_PACK_WINO_W, 2, 3,
							   (VNPU_WINO_MAX_C + 1) * 9));
	}
	{
		/* Winograd F(2x2, 3x3): the same layer over bf16 U, 16 points. */
		struct fixture w2 = wino_base(_metadata, VNPU_LAYER_F_WINO2,
					      VNPU_PACK_WINO2_W, VNPU_DTYPE_BF16,
					      16);

		BAD(w2, "wino2 size of F(4x4, 3x3)",
		    f->t[1].dims[0] = vnpu_eng_packed_size(VNPU_PACK_WINO_W, 2, 3, 18));
		BAD(w2, "wino2 W f16", f->t[1].dtype = VNPU_DTYPE_F16);
		BAD(w2, "wino2 X bf16", f->t[0].dtype = VNPU_DTYPE_BF16);
		BAD(w2, "wino2 and wino", f->a.conv.flags |= VNPU_LAYER_F_WINO);
	}
	{
		/* F(2x2, 3x3) over f32 U (vnpu_eng_wino2_pays()). */
		struct fixture w2f = wino_base(_metadata, VNPU_LAYER_F_WINO2,
					       VNPU_PACK_WINO2_W,
					       VNPU_DTYPE_F32, 16);

		BAD(w2f, "wino2 f32 size of F(4x4, 3x3)",
		    f->t[1].dims[0] = vnpu_eng_packed_size(VNPU_PACK_WINO_W, 2, 3, 18));
		BAD(w2f, "wino2 f32 X bf16", f->t[0].dtype = VNPU_DTYPE_BF16);
	}
	{
		/* Winograd F(4x2, 3x3): the same layer over bf16 U, 24 points. */
		struct fixture w42 = wino_base(_metadata, VNPU_LAYER_F_WINO42,
					       VNPU_PACK_WINO42_W, VNPU_DTYPE_BF16,
					       24);

		BAD(w42, "wino42 size of F(2x2, 3x3)",
		    f->t[1].dims[0] = vnpu_eng_packed_size(VNPU_PACK_WINO2_W, 2, 3, 18));
		BAD(w42, "wino42 size of F(4x4, 3x3)",
		    f->t[1].dims[0] = vnpu_eng_packed_size(VNPU_PACK_WINO_W, 2, 3, 18));
		BAD(w42, "wino42 W f32", f->t[1].dtype = VNPU_DTYPE_F32);
		BAD(w42, "wino42 W f16", f->t[1].dtype = VNPU_DTYPE_F16);
		BAD(w42, "wino42 X bf16", f->t[0].dtype = VNPU_DTYPE_BF16);
		BAD(w42, "wino42 and wino", f->a.conv.flags |= VNPU_LAYER_F_WINO);
		BAD(w42, "wino42 and wino2", f->a.conv.flags |= VNPU_LAYER_F_WINO2);
		BAD(w42, "wino42 and lanes", f->a.conv.flags |= VNPU_LAYER_F_LANES);
		BAD(w42, "wino42 dilation 2", f->a.conv.dilation[1] = 2;
		    f->t[3] = T(VNPU_DTYPE_F32, 4, 1, 6, 8, 7); f->t[4] = f->t[3]);
		BAD(w42, "wino42 kernel 1x1", f->a.conv.kernel[0] = 1;
		    f->a.conv.kernel[1] = 1; f->a.conv.pad_begin[0] = 0;
		    f->a.conv.pad_begin[1] = f->a.conv.pad_end[1] = 0;
		    f->t[1].dims[0] = vnpu_eng_packed_size(VNPU_PACK_WINO42_W, 2, 3, 18);
		    f->t[3] = T(VNPU_DTYPE_F32, 4, 1, 6, 9, 9); f->t[4] = f->t[3]);
		BAD(w42, "wino42 C/group over VNPU_WINO_MAX_C",
		    f->t[0] = T(VNPU_DTYPE_F32, 4, 1, 2 * (VNPU_WINO_MAX_C + 1), 9, 9);
		    f->t[1].dims[0] = vnpu_eng_packed_size(VNPU_PACK_WINO42_W, 2, 3,
							   (VNPU_WINO_MAX_C + 1) * 9));
	}
	{
		/* Output channels on the lanes: 1x1 of stride 1, Y 9x9. */
		struct fixture ln = conv_base();

		ln.a.conv.flags |= VNPU_LAYER_F_PACKED | VNPU_LAYER_F_LANES;
		ln.a.conv.kernel[0] = ln.a.conv.kernel[1] = 1;
		ln.a.conv.stride[0] = 1;
		ln.a.conv.pad_begin[0] = ln.a.conv.pad_begin[1] = 0;
		ln.a.conv.pad_end[1] = 0;
		ln.t[1] = T(VNPU_DTYPE_F32, 1,
			    vnpu_eng_packed_size(VNPU_PACK_CONV_LANES, 2, 3, 2), 0, 0, 0);
		ln.t[3] = T(VNPU_DTYPE_F32, 4, 1, 6, 9, 9);
		ln.t[4] = ln.t[3];
		EXPECT_EQ(2ull * 32 * 2, ln.t[1].dims[0])
			TH_LOG("lanes packed size");
		EXPECT_TRUE(!check(&ln))
			TH_LOG("conv lanes: valid layer rejected");
		BAD(ln, "lanes size of VNPU_PACK_CONV_W",
		    f->t[1].dims[0] = vnpu_eng_packed_size(VNPU_PACK_CONV_W, 2, 3, 2));
		BAD(ln, "lanes W bf16", f->t[1].dtype = VNPU_DTYPE_BF16);
		BAD(ln, "lanes X f16", f->t[0].dtype = VNPU_DTYPE_F16);
		BAD(ln, "lanes unpacked", f->a.conv.flags &= ~VNPU_LAYER_F_PACKED);
		BAD(ln, "lanes and wino2", f->a.conv.flags |= VNPU_LAYER_F_WINO2);
		BAD(ln, "lanes and wino42", f->a.conv.flags |= VNPU_LAYER_F_WINO42);
		BAD(ln, "lanes channel offsets past 31 bits",
		    f->t[0].strides[1] = 1ll << 30; f->t[0].strides[0] = 1ll << 33);
		BAD(ln, "lanes stride 3", f->a.conv.stride[1] = 3;
		    f->t[3] = T(VNPU_DTYPE_F32, 4, 1, 6, 9, 3); f->t[4] = f->t[3]);
		BAD(ln, "lanes pad", f->a.conv.pad_begin[1] = 1;
		    f->t[3] = T(VNPU_DTYPE_F32, 4, 1, 6, 9, 10); f->t[4] = f->t[3]);
	}
	{
		/* A 3x3 over padded planes: conv_base() of stride 1, Y 8x9. */
		struct fixture lp = conv_base(), big;
		__u64 e = 1ull << 14;

		lp.a.conv.flags |= VNPU_LAYER_F_PACKED | VNPU_LAYER_F_LANES;
		lp.a.conv.stride[0] = 1;
		lp.t[1] = T(VNPU_DTYPE_F32, 1,
			    vnpu_eng_packed_size(VNPU_PACK_CONV_LANES, 2, 3, 18), 0, 0, 0);
		lp.t[3] = T(VNPU_DTYPE_F32, 4, 1, 6, 8, 9);
		lp.t[4] = lp.t[3];
		EXPECT_TRUE(!check(&lp))
			TH_LOG("conv lanes padded: valid layer rejected");
		{
			/* Of stride 2: Y 4x5. */
			struct fixture l2 = lp;

			l2.a.conv.stride[0] = l2.a.conv.stride[1] = 2;
			l2.t[3] = T(VNPU_DTYPE_F32, 4, 1, 6, 4, 5);
			l2.t[4] = l2.t[3];
			EXPECT_TRUE(!check(&l2))
				TH_LOG("conv lanes stride 2: valid layer rejected");
		}
		BAD(lp, "lanes pad of the kernel", f->a.conv.pad_begin[1] = 3;
		    f->t[3] = T(VNPU_DTYPE_F32, 4, 1, 6, 8, 11); f->t[4] = f->t[3]);
		BAD(lp, "lanes pad past the kernel", f->a.conv.pad_end[0] = 4;
		    f->t[3] = T(VNPU_DTYPE_F32, 4, 1, 6, 12, 9); f->t[4] = f->t[3]);
		/* Planes of 2^14 squared: valid without padding only. */
		big = lp;
		big.a.conv.pad_begin[0] = big.a.conv.pad_begin[1] = 0;
		big.a.conv.pad_end[0] = big.a.conv.pad_end[1] = 0;
		big.t[0] = T(VNPU_DTYPE_F32, 4, 1, 4, e, e);
		big.t[3] = T(VNPU_DTYPE_F32, 4, 1, 6, e - 2, e - 2);
		big.t[4] = big.t[3];
		EXPECT_TRUE(!check(&big))
			TH_LOG("conv lanes 2^14 planes: valid layer rejected");
		BAD(big, "lanes padded planes past ENG_MAX_WINDOW",
		    f->a.conv.pad_begin[0] = f->a.conv.pad_end[0] = 1;
		    f->t[3] = T(VNPU_DTYPE_F32, 4, 1, 6, e, e - 2); f->t[4] = f->t[3]);
	}
	{
		struct fixture h = conv_base();
		__u32 i;

		for (i = 0; i < 5; i++)
			h.t[i].dtype = i == 2 ? VNPU_DTYPE_BF16 : VNPU_DTYPE_F16;
		EXPECT_TRUE(!check(&h))
			TH_LOG("conv f16/bf16: valid layer rejected");
		BAD(h, "f16 with f64 W", f->t[1].dtype = VNPU_DTYPE_F64);
		BAD(h, "f16 with u16 Y", f->t[4].dtype = VNPU_DTYPE_U16);
		BAD(h, "f16 with i32 bias", f->t[2].dtype = VNPU_DTYPE_I32);
	}
}

static void pool_bad(struct __test_metadata *_metadata)
{
	struct fixture b = { .op = VNPU_LAYER_POOL, .n = 2 };

	b.t[0] = T(VNPU_DTYPE_F32, 4, 1, 3, 8, 8);
	b.t[1] = T(VNPU_DTYPE_F32, 4, 1, 3, 4, 4);
	b.a.pool.mode = VNPU_POOL_LP;
	b.a.pool.p = 2;
	b.a.pool.kernel[0] = b.a.pool.kernel[1] = 2;
	b.a.pool.stride[0] = b.a.pool.stride[1] = 2;
	b.a.pool.dilation[0] = b.a.pool.dilation[1] = 1;
	b.size = sizeof(b.a.pool);
	common_bad(_metadata, &b);
	BAD(b, "mode 0", f->a.pool.mode = 0);
	BAD(b, "mode 4", f->a.pool.mode = 4);
	BAD(b, "p 0 for LP", f->a.pool.p = 0);
	BAD(b, "p 17", f->a.pool.p = 17);
	BAD(b, "p for MAX", f->a.pool.mode = VNPU_POOL_MAX);
	BAD(b, "unknown flag", f->a.pool.flags = 4);
	BAD(b, "pad", f->a.pool.pad = 1);
	BAD(b, "kernel 0", f->a.pool.kernel[0] = 0);
	BAD(b, "stride 0", f->a.pool.stride[1] = 0);
	BAD(b, "dilation 0", f->a.pool.dilation[0] = 0);
	BAD(b, "OW wrong", f->t[1].dims[3] = 5);
	BAD(b, "ceil changes OW", f->a.pool.flags = VNPU_POOL_F_CEIL;
	    f->t[0].dims[3] = 9);
	BAD(b, "channels differ", f->t[1].dims[1] = 2);
	BAD(b, "f16 into f32", f->t[0].dtype = VNPU_DTYPE_F16);
	BAD(b, "window over the limit", f->a.pool.kernel[0] = 4097;
	    f->a.pool.kernel[1] = 4097);
	/* 8-bit integers for MAX alone, one type for both. */
	BAD(b, "u8 LP", f->t[0].dtype = f->t[1].dtype = VNPU_DTYPE_U8);
	b.a.pool.mode = VNPU_POOL_MAX;
	b.a.pool.p = 0;
	b.t[0].dtype = b.t[1].dtype = VNPU_DTYPE_U8;
	EXPECT_TRUE(!check(&b))
		TH_LOG("pool: u8 MAX rejected");
	b.t[0].dtype = b.t[1].dtype = VNPU_DTYPE_I8;
	EXPECT_TRUE(!check(&b))
		TH_LOG("pool: i8 MAX rejected");
	BAD(b, "i8 AVG", f->a.pool.mode = VNPU_POOL_AVG);
	BAD(b, "i8 into u8", f->t[1].dtype = VNPU_DTYPE_U8);
	BAD(b, "i8 into f32", f->t[1].dtype = VNPU_DTYPE_F32);
	BAD(b, "u16 MAX", f->t[0].dtype = f->t[1].dtype = VNPU_DTYPE_U16);
}

static void elementwise_bad(struct __test_metadata *_metadata)
{
	struct fixture b = { .op = VNPU_LAYER_BINARY, .n = 3 }, w, u, c;

	b.t[0] = T(VNPU_DTYPE_F32, 2, 4, 1, 0, 0);
	b.t[1] = T(VNPU_DTYPE_F32, 1, 5, 0, 0, 0);
	b.t[2] = T(VNPU_DTYPE_F32, 2, 4, 5, 0, 0);
	b.size = sizeof(b.a.bin);
	common_bad(_metadata, &b);
	BAD(b, "func past the last", f->a.bin.func = VNPU_BIN_COUNT);
	BAD(b, "flags", f->a.bin.flags = 1);
	BAD(b, "not broadcastable", f->t[1].dims[0] = 3);
	BAD(b, "input rank above output", f->t[0].rank = 3; f->t[0].dims[2] = 1);
	BAD(b, "dtypes differ", f->t[1].dtype = VNPU_DTYPE_F64);
	BAD(b, "comparison into f32", f->a.bin.func = VNPU_BIN_LESS);
	BAD(b, "AND on f32", f->a.bin.func = VNPU_BIN_AND);
	BAD(b, "BITAND on f32", f->a.bin.func = VNPU_BIN_BITAND);
	BAD(b, "PRELU on i32", f->t[0].dtype = f->t[1].dtype =
	    f->t[2].dtype = VNPU_DTYPE_I32; f->a.bin.func = VNPU_BIN_PRELU);
	BAD(b, "ADD on bool", f->t[0].dtype = f->t[1].dtype =
	    f->t[2].dtype = VNPU_DTYPE_BOOL);

	w = b;
	w.op = VNPU_LAYER_WHERE;
	w.n = 4;
	w.size = 0;
	w.t[3] = w.t[2];
	w.t[2] = w.t[1];
	w.t[1] = w.t[0];
	w.t[0] = T(VNPU_DTYPE_BOOL, 1, 5, 0, 0, 0);
	common_bad(_metadata, &w);
	BAD(w, "condition not bool", f->t[0].dtype = VNPU_DTYPE_U8);
	BAD(w, "X dtype", f->t[1].dtype = VNPU_DTYPE_F64);

	u.op = VNPU_LAYER_UNARY;
	u.n = 2;
	u.t[0] = T(VNPU_DTYPE_F32, 2, 3, 4, 0, 0);
	u.t[1] = u.t[0];
	memset(&u.a, 0, sizeof(u.a));
	u.a.act.func = VNPU_ACT_CELU;
	u.a.act.alpha = et_f32_bits(1);
	u.size = sizeof(u.a.act);
	common_bad(_metadata, &u);
	BAD(u, "func past the last", f->a.act.func = VNPU_ACT_COUNT);
	BAD(u, "flags", f->a.act.flags = 2);
	BAD(u, "a MAX bound (GEMM and CONV only)", f->a.act.flags = VNPU_ACT_F_MAX;
	    f->a.act.func = VNPU_ACT_RELU);
	BAD(u, "alpha NaN", f->a.act.alpha = NAN_BITS);
	BAD(u, "beta inf", f->a.act.beta = INF_BITS | 0x80000000u);
	BAD(u, "CELU alpha 0", f->a.act.alpha = 0);
	BAD(u, "dims differ", f->t[1].dims[1] = 5);
	BAD(u, "dtypes differ", f->t[1].dtype = VNPU_DTYPE_F64);
	BAD(u, "SIN on i32", f->t[0].dtype = f->t[1].dtype = VNPU_DTYPE_I32;
	    f->a.act.func = VNPU_ACT_SIN);
	BAD(u, "NOT on f32", f->a.act.func = VNPU_ACT_NOT);
	BAD(u, "RELU on bool", f->t[0].dtype = f->t[1].dtype = VNPU_DTYPE_BOOL;
	    f->a.act.func = VNPU_ACT_RELU);

	c = u;
	c.op = VNPU_LAYER_CAST;
	c.size = 0;
	c.t[1].dtype = VNPU_DTYPE_F16;
	common_bad(_metadata, &c);
	BAD(c, "dims differ", f->t[1].dims[0] = 2);
}

static void other_bad(struct __test_metadata *_metadata)
{
	struct fixture s = { .op = VNPU_LAYER_SOFTMAX, .n = 2 }, n, r, a, z, p, g;

	s.t[0] = T(VNPU_DTYPE_F32, 3, 2, 3, 4, 0);
	s.t[1] = s.t[0];
	s.a.sm.axis = 2;
	s.size = sizeof(s.a.sm);
	common_bad(_metadata, &s);
	BAD(s, "axis = rank", f->a.sm.axis = 3);
	BAD(s, "mode 3", f->a.sm.mode = 3);
	BAD(s, "dims differ", f->t[1].dims[2] = 5);
	BAD(s, "a broadcast lane over the limit",
	    f->t[0].dims[2] = f->t[1].dims[2] = (1u << 28) + 1;
	    f->t[0].strides[0] = f->t[0].strides[1] = f->t[0].strides[2] = 0);

	n.op = VNPU_LAYER_NORM;
	n.n = 4;
	n.t[0] = T(VNPU_DTYPE_F32, 3, 2, 3, 4, 0);
	n.t[1] = T(VNPU_DTYPE_F32, 1, 4, 0, 0, 0);
	n.t[2] = n.t[1];
	n.t[3] = n.t[0];
	memset(&n.a, 0, sizeof(n.a));
	n.a.norm.mode = VNPU_NORM_LAYER;
	n.a.norm.axis = 2;
	n.a.norm.flags = VNPU_LAYER_F_BIAS;
	n.a.norm.epsilon = et_f32_bits(1e-5f);
	n.size = sizeof(n.a.norm);
	common_bad(_metadata, &n);
	BAD(n, "mode 0", f->a.norm.mode = 0);
	BAD(n, "mode 6", f->a.norm.mode = 6);
	BAD(n, "pad", f->a.norm.pad = 1);
	BAD(n, "unknown flag", f->a.norm.flags |= 2);
	BAD(n, "axis = rank", f->a.norm.axis = 3);
	BAD(n, "epsilon NaN", f->a.norm.epsilon = NAN_BITS);
	BAD(n, "p for LAYER", f->a.norm.p = 2);
	BAD(n, "size for LAYER", f->a.norm.size = 3);
	BAD(n, "alpha for LAYER", f->a.norm.alpha = 1);
	BAD(n, "scale not broadcastable", f->t[1].dims[0] = 3);
	BAD(n, "bias flag without bias", f->n = 3; f->t[2] = f->t[3]);
	BAD(n, "LRN size 0", f->a.norm.mode = VNPU_NORM_LRN; f->a.norm.axis = 0;
	    f->a.norm.flags = 0; f->a.norm.epsilon = 0; f->n = 2;
	    f->t[1] = f->t[0]);
	BAD(n, "LP p 3", f->a.norm.mode = VNPU_NORM_LP; f->a.norm.p = 3;
	    f->a.norm.flags = 0; f->a.norm.epsilon = 0; f->n = 2;
	    f->t[1] = f->t[0]);
	BAD(n, "BATCH with 4 tensors", f->a.norm.mode = VNPU_NORM_BATCH;
	    f->a.norm.axis = 0; f->a.norm.flags = 0);
	BAD(n, "INSTANCE parameter size", f->a.norm.mode = VNPU_NORM_INSTANCE;
	    f->a.norm.axis = 0; f->a.norm.flags = 0);

	r.op = VNPU_LAYER_REDUCE;
	r.n = 2;
	r.t[0] = T(VNPU_DTYPE_F32, 3, 2, 3, 4, 0);
	r.t[1] = T(VNPU_DTYPE_F32, 3, 2, 1, 4, 0);
	memset(&r.a, 0, sizeof(r.a));
	r.a.red.func = VNPU_REDUCE_L2;
	r.a.red.axes = 2;
	r.size = sizeof(r.a.red);
	common_bad(_metadata, &r);
	BAD(r, "func past the last", f->a.red.func = VNPU_REDUCE_COUNT);
	BAD(r, "axis bit above rank", f->a.red.axes |= 8);
	BAD(r, "reduced extent not 1", f->a.red.axes = 3);
	BAD(r, "kept extent differs", f->t[1].dims[2] = 3);
	BAD(r, "L2 on i32", f->t[0].dtype = f->t[1].dtype = VNPU_DTYPE_I32);
	BAD(r, "dtypes differ", f->t[1].dtype = VNPU_DTYPE_F64);
	BAD(r, "a broadcast row over the limit", f->t[0].dims[1] = 1u << 29;
	    f->t[0].strides[0] = f->t[0].strides[1] = f->t[0].strides[2] = 0);

	a.op = VNPU_LAYER_ARGREDUCE;
	a.n = 2;
	a.t[0] = r.t[0];
	a.t[1] = T(VNPU_DTYPE_I64, 3, 2, 1, 4, 0);
	memset(&a.a, 0, sizeof(a.a));
	a.a.arg.axis = 1;
	a.size = sizeof(a.a.arg);
	common_bad(_metadata, &a);
	BAD(a, "min 2", f->a.arg.min = 2);
	BAD(a, "unknown flag", f->a.arg.flags = 2);
	BAD(a, "pad", f->a.arg.pad = 1);
	BAD(a, "axis = rank", f->a.arg.axis = 3);
	BAD(a, "i32 output", f->t[1].dtype = VNPU_DTYPE_I32);
	BAD(a, "axis extent 0", f->t[0].dims[1] = 0);

	z.op = VNPU_LAYER_RESIZE;
	z.n = 2;
	z.t[0] = T(VNPU_DTYPE_F32, 4, 1, 2, 3, 4);
	z.t[1] = T(VNPU_DTYPE_F32, 4, 1, 2, 6, 8);
	memset(&z.a, 0, sizeof(z.a));
	z.a.rs.mode = VNPU_RESIZE_LINEAR;
	z.a.rs.scale[2] = et_f32_bits(2);
	z.size = sizeof(z.a.rs);
	common_bad(_metadata, &z);
	BAD(z, "mode 3", f->a.rs.mode = 3);
	BAD(z, "cubic_a for linear", f->a.rs.cubic_a = et_f32_bits(-0.5f));
	BAD(z, "exclude_outside for linear",
	    f->a.rs.flags = VNPU_RESIZE_F_EXCLUDE_OUTSIDE);
	BAD(z, "cubic with NaN a", f->a.rs.mode = VNPU_RESIZE_CUBIC;
	    f->a.rs.cubic_a = NAN_BITS);
	BAD(z, "cubic unknown flag", f->a.rs.mode = VNPU_RESIZE_CUBIC;
	    f->a.rs.flags = 2);
	BAD(z, "pad", f->a.rs.pad = 1);
	BAD(z, "coord 6", f->a.rs.coord = 6);
	BAD(z, "nearest for linear", f->a.rs.nearest = 1);
	BAD(z, "nearest 4", f->a.rs.mode = 0; f->a.rs.nearest = 4);
	BAD(z, "flags", f->a.rs.flags = 1);
	BAD(z, "negative scale", f->a.rs.scale[2] = et_f32_bits(-2));
	BAD(z, "NaN scale", f->a.rs.scale[3] = NAN_BITS);
	BAD(z, "scale above rank", f->a.rs.scale[5] = et_f32_bits(1));
	BAD(z, "rank differs", f->t[1].rank = 3);
	BAD(z, "from empty", f->t[0].dims[3] = 0);

	p.op = VNPU_LAYER_PAD;
	p.n = 2;
	p.t[0] = T(VNPU_DTYPE_U8, 2, 3, 4, 0, 0);
	p.t[1] = T(VNPU_DTYPE_U8, 2, 5, 4, 0, 0);
	memset(&p.a, 0, sizeof(p.a));
	p.a.pad.begin[0] = 1;
	p.a.pad.begin[1] = -1;
	p.a.pad.value = 7;
	p.size = sizeof(p.a.pad);
	common_bad(_metadata, &p);
	BAD(p, "mode 4", f->a.pad.mode = 4);
	BAD(p, "pad", f->a.pad.pad = 1);
	BAD(p, "value above element", f->a.pad.value = 0x100);
	BAD(p, "value for EDGE", f->a.pad.mode = VNPU_PAD_EDGE);
	BAD(p, "begin above rank", f->a.pad.begin[2] = 1);
	BAD(p, "crop past the input", f->a.pad.begin[1] = -9;
	    f->t[1].dims[1] = 0);
	BAD(p, "huge begin", f->a.pad.begin[0] = 1ll << 40);
	BAD(p, "dtypes differ", f->t[1].dtype = VNPU_DTYPE_I8);
	BAD(p, "edge from empty", f->a.pad.mode = VNPU_PAD_EDGE;
	    f->a.pad.value = 0; f->t[0].dims[0] = 0);

	g.op = VNPU_LAYER_GATHER;
	g.n = 3;
	g.t[0] = T(VNPU_DTYPE_F32, 2, 5, 6, 0, 0);
	g.t[1] = T(VNPU_DTYPE_I64, 2, 2, 3, 0, 0);
	g.t[2] = T(VNPU_DTYPE_F32, 3, 5, 2, 3, 0);
	memset(&g.a, 0, sizeof(g.a));
	g.a.ga.axis = 1;
	g.size = sizeof(g.a.ga);
	common_bad(_metadata, &g);
	BAD(g, "axis = rank", f->a.ga.axis = 2);
	BAD(g, "pad", f->a.ga.pad = 1);
	BAD(g, "f32 indices", f->t[1].dtype = VNPU_DTYPE_F32);
	BAD(g, "output dims", f->t[2].dims[1] = 3);
	BAD(g, "output rank", f->t[2].rank = 2);
	BAD(g, "dtypes differ", f->t[2].dtype = VNPU_DTYPE_I32);
	g.op = VNPU_LAYER_GATHER_ELEMENTS;
	g.t[1] = T(VNPU_DTYPE_I32, 2, 5, 9, 0, 0);
	g.t[2] = g.t[1];
	g.t[2].dtype = VNPU_DTYPE_F32;
	common_bad(_metadata, &g);
	BAD(g, "indices wider than data off the axis", f->t[1].dims[0] = 6;
	    f->t[2].dims[0] = 6);
	BAD(g, "output dims", f->t[2].dims[1] = 8);
}

/* vnpu_eng_layer_run() refuses bad parts, contexts and short scratch. */
static void run_bad(struct __test_metadata *_metadata)
{
	__u64 da[2] = { 30, 40 }, db[2] = { 40, 50 }, dy[2] = { 30, 50 };
	struct vnpu_layer_gemm g = { .alpha = 0x3f800000 };
	struct vnpu_cmd_tensor t[3];
	float *a = calloc(30 * 40, 4), *b = calloc(40 * 50, 4), *y = calloc(30 * 50, 4);
	void *data[3] = { a, b, y };
	__u64 need;
	struct vnpu_eng_ctx ctx = {};

	t[0] = et_dense(VNPU_DTYPE_F32, 2, da);
	t[1] = et_dense(VNPU_DTYPE_F32, 2, db);
	t[2] = et_dense(VNPU_DTYPE_F32, 2, dy);
	need = vnpu_eng_layer_scratch(VNPU_LAYER_GEMM, t, 3, &g, 1, ctx.features);
	EXPECT_GT(need, 0)
		TH_LOG("gemm needs scratch");
	ctx.scratch = malloc(need);
	ctx.scratch_size = need - 1;
	EXPECT_EQ(VNPU_ENG_ENOSPC, vnpu_eng_layer_run(VNPU_LAYER_GEMM, t, data, 3, &g, 0, 1, &ctx))
		TH_LOG("short scratch accepted");
	ctx.scratch_size = need;
	EXPECT_TRUE(!vnpu_eng_layer_run(VNPU_LAYER_GEMM, t, data, 3, &g, 0, 1, &ctx))
		TH_LOG("enough scratch refused");
	EXPECT_EQ(VNPU_ENG_EINVAL, vnpu_eng_layer_run(VNPU_LAYER_GEMM, t, data, 3, &g, 1, 1, &ctx))
		TH_LOG("part = num_parts accepted");
	EXPECT_EQ(VNPU_ENG_EINVAL, vnpu_eng_layer_run(VNPU_LAYER_GEMM, t, data, 3, &g, 0, 0, &ctx))
		TH_LOG("zero parts accepted");
	EXPECT_EQ(VNPU_ENG_EINVAL, vnpu_eng_layer_run(VNPU_LAYER_GEMM, t, data, 3, &g, 0, 1, NULL))
		TH_LOG("no context accepted");
	EXPECT_EQ(VNPU_ENG_EINVAL, vnpu_eng_layer_run(0, t, data, 3, &g, 0, 1, &ctx))
		TH_LOG("op 0 run");
	EXPECT_EQ(VNPU_ENG_EINVAL,
		  vnpu_eng_layer_run(VNPU_LAYER_OP_LAST + 1, t, data, 3, &g, 0, 1, &ctx))
		TH_LOG("unknown op run");
	/* More parts than the layer splits into: the extra parts do nothing. */
	EXPECT_TRUE(!vnpu_eng_layer_run(VNPU_LAYER_GEMM, t, data, 3, &g, 99, 100, &ctx))
		TH_LOG("an empty part");
	EXPECT_GE(vnpu_eng_layer_max_parts(VNPU_LAYER_GEMM, t, 3, &g, 0), 1)
		TH_LOG("max parts");
	/* N padded to whole panels of 16 columns, as the kernels compute. */
	EXPECT_EQ(2ull * 30 * 64 * 40, vnpu_eng_layer_cost(VNPU_LAYER_GEMM, t, 3, &g))
		TH_LOG("gemm cost");
	/* Packing: unknown layouts and groups for GEMM's B. */
	EXPECT_TRUE(!vnpu_eng_packed_size(0, 1, 4, 4) && !vnpu_eng_packed_size(VNPU_PACK_GEMM_B, 2,
									       4, 4) && vnpu_eng_packed_size(VNPU_PACK_GEMM_B, 1, 4, 17) == 4 * 32 && vnpu_eng_packed_size(VNPU_PACK_CONV_W, 3, 7, 5) == 3 * 12 * 5 && !vnpu_eng_packed_size(VNPU_PACK_CONV_W, 1, 1ull << 40, 1))
		TH_LOG("packed sizes");
	EXPECT_EQ(VNPU_ENG_EINVAL, vnpu_eng_pack(9, a, 1, 4, 4, b))
		TH_LOG("unknown layout packed");
	/* Winograd's: whole 3x3 kernels only, and never by vnpu_eng_pack(). */
	EXPECT_TRUE(!vnpu_eng_packed_size(VNPU_PACK_WINO_W, 1, 4, 10) &&
		    vnpu_eng_packed_size(VNPU_PACK_WINO_W, 1, 7, 9) == 12 * 36)
		TH_LOG("wino packed sizes");
	EXPECT_EQ(VNPU_ENG_EINVAL, vnpu_eng_pack(VNPU_PACK_WINO_W, a, 1, 1, 9, b))
		TH_LOG("wino layout through vnpu_eng_pack");
	EXPECT_EQ(VNPU_ENG_EINVAL, vnpu_eng_wino_pack(a, 1, 1, 10, b))
		TH_LOG("wino pack of a partial kernel");
	EXPECT_TRUE(!vnpu_eng_packed_size(VNPU_PACK_WINO42_W, 1, 4, 10) &&
		    vnpu_eng_packed_size(VNPU_PACK_WINO42_W, 1, 7, 9) == 12 * 24)
		TH_LOG("wino42 packed sizes");
	EXPECT_EQ(VNPU_ENG_EINVAL, vnpu_eng_pack(VNPU_PACK_WINO42_W, a, 1, 1, 9, b))
		TH_LOG("wino42 layout through vnpu_eng_pack");
	EXPECT_EQ(VNPU_ENG_EINVAL, vnpu_eng_wino42_pack(a, 1, 1, 10, b))
		TH_LOG("wino42 pack of a partial kernel");
	free(ctx.scratch);
	free(a);
	free(b);
	free(y);
}

TEST(malformed_layers)
{
	run_bad(_metadata);
	gemm_bad(_metadata);
	conv_bad(_metadata);
	pool_bad(_metadata);
	elementwise_bad(_metadata);
	other_bad(_metadata);
	EXPECT_EQ(VNPU_ENG_EINVAL, vnpu_eng_layer_check(VNPU_LAYER_CAST, NULL, 2, NULL, 0))
		TH_LOG("NULL tensors accepted");
}

KSFT_MAIN

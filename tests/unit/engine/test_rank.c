// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The highest ranks: layers on tensors of rank VNPU_MAX_DIMS - 1 and
 * VNPU_MAX_DIMS (strided views, reductions, the per-axis attributes of PAD
 * and RESIZE), and the checks that refuse one dim more.
 */
#include "engine_test.h"
#include "ksft_main.h"

#define R VNPU_MAX_DIMS

/* Y = -X where X is a transposed view (dims reversed) of a dense tensor. */
static void test_transposed_view(struct __test_metadata *_metadata, __u32 rank)
{
	static const __u64 xd[R] = { 2, 3, 1, 2, 2, 1, 3, 2 };
	struct vnpu_layer_act at = { .func = VNPU_ACT_NEG };
	struct vnpu_cmd_tensor dense = et_dense(VNPU_DTYPE_F32, rank, xd), t[2];
	float x[144], y[144], ref[144];
	void *data[2] = { x, y };
	size_t e, c[R];
	__u32 d;
	char name[64];

	t[0] = dense;
	for (d = 0; d < rank; d++) {
		t[0].dims[d] = dense.dims[rank - 1 - d];
		t[0].strides[d] = dense.strides[rank - 1 - d];
	}
	t[1] = et_dense(VNPU_DTYPE_F32, rank, t[0].dims);
	et_fill_f32(x, et_numel(&dense));
	for (e = 0; e < et_numel(&t[1]); e++) {
		et_coords(&t[1], e, c);
		ref[e] = -x[et_offset(&t[0], c)];
	}
	snprintf(name, sizeof(name), "neg of a rank-%u transpose", rank);
	EXPECT_EQ(0, et_layer_exact(name, VNPU_LAYER_UNARY, t, data, 2, &at, sizeof(at), ref));
}

/* Integer sums over sets of axes that include the last one. */
static void test_reduce(struct __test_metadata *_metadata, __u32 rank)
{
	static const __u64 xd[R] = { 2, 2, 3, 1, 2, 2, 1, 3 };
	static const __u32 axes_of[] = { 0x81, 0x76, 0xff, 0x40 };
	struct vnpu_cmd_tensor t[2];
	int32_t x[288], y[288], ref[288];
	void *data[2] = { x, y };
	size_t e, i, c[R];
	char name[64];
	__u32 d;

	t[0] = et_dense(VNPU_DTYPE_I32, rank, xd);
	for (e = 0; e < et_numel(&t[0]); e++)
		x[e] = (int32_t)(e * 37 % 101) - 50;
	for (i = 0; i < sizeof(axes_of) / sizeof(axes_of[0]); i++) {
		struct vnpu_layer_reduce at = {
			.func = VNPU_REDUCE_SUM,
			.axes = axes_of[i] & ((1u << rank) - 1),
		};
		__u64 yd[R];

		for (d = 0; d < rank; d++)
			yd[d] = (at.axes >> d) & 1 ? 1 : xd[d];
		t[1] = et_dense(VNPU_DTYPE_I32, rank, yd);
		memset(ref, 0, sizeof(ref));
		for (e = 0; e < et_numel(&t[0]); e++) {
			et_coords(&t[0], e, c);
			for (d = 0; d < rank; d++)
				if ((at.axes >> d) & 1)
					c[d] = 0;
			ref[et_offset(&t[1], c)] += x[e];
		}
		snprintf(name, sizeof(name), "rank-%u sum over axes 0x%x", rank,
			 at.axes);
		EXPECT_EQ(0,
			  et_layer_exact(name, VNPU_LAYER_REDUCE, t, data, 2, &at, sizeof(at),
					 ref));
	}
}

/* PAD with a begin on every axis, the last ones included. */
static void test_pad(struct __test_metadata *_metadata, __u32 rank)
{
	static const __u64 xd[R] = { 2, 1, 2, 2, 1, 2, 2, 3 };
	static const __s64 begin[R] = { 1, 0, -1, 0, 1, 0, 1, 2 };
	static const __s64 end[R] = { 0, 1, 0, 0, 0, 0, -1, 1 };
	struct vnpu_layer_pad at = { .mode = VNPU_PAD_CONSTANT, .value = 0x7b };
	struct vnpu_cmd_tensor t[2];
	uint8_t x[192], y[4096], ref[4096];
	void *data[2] = { x, y };
	__u64 yd[R];
	size_t e, c[R];
	char name[64];
	__u32 d;

	for (d = 0; d < rank; d++) {
		yd[d] = (__u64)((__s64)xd[d] + begin[d] + end[d]);
		at.begin[d] = begin[d];
	}
	t[0] = et_dense(VNPU_DTYPE_U8, rank, xd);
	t[1] = et_dense(VNPU_DTYPE_U8, rank, yd);
	for (e = 0; e < et_numel(&t[0]); e++)
		x[e] = (uint8_t)(e + 1);
	for (e = 0; e < et_numel(&t[1]); e++) {
		et_coords(&t[1], e, c);
		ref[e] = 0x7b;
		for (d = 0; d < rank; d++) {
			__s64 s = (__s64)c[d] - begin[d];

			if (s < 0 || s >= (__s64)xd[d])
				break;
			c[d] = (size_t)s;
		}
		if (d == rank)
			ref[e] = x[et_offset(&t[0], c)];
	}
	snprintf(name, sizeof(name), "rank-%u pad", rank);
	EXPECT_EQ(0, et_layer_exact(name, VNPU_LAYER_PAD, t, data, 2, &at, sizeof(at), ref));
}

/* Nearest (floor, asymmetric) RESIZE doubling the first and last axes. */
static void test_resize(struct __test_metadata *_metadata, __u32 rank)
{
	static const __u64 xd[R] = { 2, 1, 2, 1, 2, 1, 2, 3 };
	struct vnpu_layer_resize at = {
		.mode = VNPU_RESIZE_NEAREST, .coord = VNPU_COORD_ASYMMETRIC,
		.nearest = VNPU_NEAREST_FLOOR,
	};
	struct vnpu_cmd_tensor t[2];
	float x[48], y[192], ref[192];
	void *data[2] = { x, y };
	__u64 yd[R];
	size_t e, c[R];
	char name[64];
	__u32 d;

	for (d = 0; d < rank; d++)
		yd[d] = xd[d];
	yd[0] *= 2;
	yd[rank - 1] *= 2;
	at.scale[0] = et_f32_bits(2);
	at.scale[rank - 1] = et_f32_bits(2);
	t[0] = et_dense(VNPU_DTYPE_F32, rank, xd);
	t[1] = et_dense(VNPU_DTYPE_F32, rank, yd);
	et_fill_f32(x, et_numel(&t[0]));
	for (e = 0; e < et_numel(&t[1]); e++) {
		et_coords(&t[1], e, c);
		c[0] /= 2;
		c[rank - 1] /= 2;
		ref[e] = x[et_offset(&t[0], c)];
	}
	snprintf(name, sizeof(name), "rank-%u resize", rank);
	EXPECT_EQ(0, et_layer_exact(name, VNPU_LAYER_RESIZE, t, data, 2, &at, sizeof(at), ref));
}

/* One dim more than the device takes, or an attribute above the rank. */
static void test_checks(struct __test_metadata *_metadata)
{
	static const __u64 dims[R + 1] = { 1, 2, 1, 2, 1, 2, 1, 2, 1 };
	struct vnpu_layer_binary add = { .func = VNPU_BIN_ADD };
	struct vnpu_layer_resize rs = { .mode = VNPU_RESIZE_NEAREST };
	struct vnpu_layer_pad pad = { .mode = VNPU_PAD_CONSTANT };
	struct vnpu_cmd_tensor t[3];
	__u32 i;

	for (i = 0; i < 3; i++)
		t[i] = et_dense(VNPU_DTYPE_F32, R, dims);
	EXPECT_TRUE(!vnpu_eng_layer_check(VNPU_LAYER_BINARY, t, 3, &add, sizeof(add)))
		TH_LOG("binary at rank %u rejected", R);
	for (i = 0; i < 3; i++) {
		struct vnpu_cmd_tensor bad[3] = { t[0], t[1], t[2] };

		bad[i].rank = R + 1;
		EXPECT_EQ(VNPU_ENG_EINVAL,
			  vnpu_eng_layer_check(VNPU_LAYER_BINARY, bad, 3, &add, sizeof(add)))
			TH_LOG("binary with tensor %u of rank %u accepted", i, R + 1);
	}
	rs.scale[R - 1] = et_f32_bits(1);
	EXPECT_TRUE(!vnpu_eng_layer_check(VNPU_LAYER_RESIZE, t, 2, &rs, sizeof(rs)))
		TH_LOG("resize with a scale on axis %u rejected", R - 1);
	pad.begin[R - 1] = 0;
	EXPECT_TRUE(!vnpu_eng_layer_check(VNPU_LAYER_PAD, t, 2, &pad, sizeof(pad)))
		TH_LOG("pad at rank %u rejected", R);
	t[0].rank = t[1].rank = R - 1;
	t[0].dims[R - 1] = t[1].dims[R - 1] = 0;
	t[0].strides[R - 1] = t[1].strides[R - 1] = 0;
	EXPECT_EQ(VNPU_ENG_EINVAL, vnpu_eng_layer_check(VNPU_LAYER_RESIZE, t, 2, &rs, sizeof(rs)))
		TH_LOG("resize with a scale above the rank accepted");
	pad.begin[R - 1] = 1;
	EXPECT_EQ(VNPU_ENG_EINVAL, vnpu_eng_layer_check(VNPU_LAYER_PAD, t, 2, &pad, sizeof(pad)))
		TH_LOG("pad with a begin above the rank accepted");
}

TEST(rank)
{
	__u32 rank;

	for (rank = R - 1; rank <= R; rank++) {
		test_transposed_view(_metadata, rank);
		test_reduce(_metadata, rank);
		test_pad(_metadata, rank);
		test_resize(_metadata, rank);
	}
	test_checks(_metadata);
}

KSFT_MAIN

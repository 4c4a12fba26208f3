// SPDX-License-Identifier: GPL-2.0
/*
 * vnpu_stream_validate(): every malformed field rejected (the cases the
 * kselftest also submits), overflow and framing cases; and the executor:
 * FILL and COPY give the reference result however they are split.
 */
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "vnpu_exec.h"
#include "vnpu_stream_cases.h"

static const struct vnpu_slot_info case_slots[CASE_NUM_SLOTS] = {
	{ .size = CASE_SLOT_SIZE, .id = 1, .flags = VNPU_SLOT_INFO_WRITE },
	{ .size = CASE_SLOT_SIZE, .id = 2, .flags = 0 },
	{ .size = CASE_SLOT_SIZE, .id = 1, .flags = 0 },
};

FIXTURE(cases) {
	struct case_stream s;
};

FIXTURE_VARIANT(cases) {
	void (*mutate)(struct case_stream *s);
	int valid;
};

#define ADD_VARIANT(name, fn, ok) \
	FIXTURE_VARIANT_ADD(cases, name) { .mutate = fn, .valid = ok };
STREAM_CASES(ADD_VARIANT)

FIXTURE_SETUP(cases)
{
	case_base(&self->s);
	variant->mutate(&self->s);
}

FIXTURE_TEARDOWN(cases)
{
}

/*
 * Each case is validated from a copy of exactly its bytes: under ASan a
 * read past the stream's end is a report.
 */
TEST_F(cases, validate)
{
	void *copy = malloc(self->s.size);
	__u32 n = 99;
	int ret;

	ASSERT_NE(NULL, copy);
	memcpy(copy, self->s.words, self->s.size);
	ret = vnpu_stream_validate(copy, self->s.size, case_slots,
				   CASE_NUM_SLOTS, &n);
	free(copy);
	if (variant->valid) {
		ASSERT_EQ(0, ret);
		ASSERT_EQ(2, n);
	} else {
		ASSERT_EQ(-22, ret);
		ASSERT_GE(1, n);
	}
}

TEST(bad_cmd_index_reported)
{
	struct case_stream s;
	__u32 n;

	case_base(&s);
	case_copy(&s)->src.dims[0] = 7;
	ASSERT_EQ(-22, vnpu_stream_validate(s.words, s.size, case_slots,
					    CASE_NUM_SLOTS, &n));
	ASSERT_EQ(1, n);
}

TEST(chain_layer_valid)
{
	struct case_stream s;
	__u32 n = 99;

	case_chain(&s);
	ASSERT_EQ(0, vnpu_stream_validate(s.words, s.size, case_slots,
					  CASE_NUM_SLOTS, &n));
	ASSERT_EQ(1, n);
}

TEST(attention_layer_valid)
{
	struct case_stream s;
	__u32 n = 99;

	case_attention(&s);
	ASSERT_EQ(0, vnpu_stream_validate(s.words, s.size, case_slots,
					  CASE_NUM_SLOTS, &n));
	ASSERT_EQ(1, n);
}

TEST(lstm_layer_valid)
{
	struct case_stream s;
	__u32 n = 99;

	case_lstm(&s);
	ASSERT_EQ(0, vnpu_stream_validate(s.words, s.size, case_slots,
					  CASE_NUM_SLOTS, &n));
	ASSERT_EQ(1, n);
}

TEST(qconv_layer_valid)
{
	struct case_stream s;
	__u32 n = 99;

	case_qconv(&s);
	ASSERT_EQ(0, vnpu_stream_validate(s.words, s.size, case_slots,
					  CASE_NUM_SLOTS, &n));
	ASSERT_EQ(1, n);
}

TEST(qconv_split_layer_valid)
{
	struct case_stream s;
	__u32 n = 99;

	case_qconv_split(&s);
	ASSERT_EQ(0, vnpu_stream_validate(s.words, s.size, case_slots,
					  CASE_NUM_SLOTS, &n));
	ASSERT_EQ(1, n);
}

TEST(qconv_qw4_layer_valid)
{
	struct case_stream s;
	__u32 n = 99;

	case_qconv_qw4(&s);
	ASSERT_EQ(0, vnpu_stream_validate(s.words, s.size, case_slots,
					  CASE_NUM_SLOTS, &n));
	ASSERT_EQ(1, n);
}

TEST(qconv_residual_layer_valid)
{
	struct case_stream s;
	__u32 n = 99;

	case_qconv_res(&s);
	ASSERT_EQ(0, vnpu_stream_validate(s.words, s.size, case_slots,
					  CASE_NUM_SLOTS, &n));
	ASSERT_EQ(1, n);
	case_qconv_res_attrs(&s)->flags |= VNPU_LAYER_F_RES_FIRST;
	ASSERT_EQ(0, vnpu_stream_validate(s.words, s.size, case_slots,
					  CASE_NUM_SLOTS, &n));
	/* Y written over R, exactly in its place (skewed or in another
	 * slot it is one of the invalid cases). */
	case_qconv_res_r_at_y(&s, 0, 0);
	ASSERT_EQ(0, vnpu_stream_validate(s.words, s.size, case_slots,
					  CASE_NUM_SLOTS, &n));
	ASSERT_EQ(1, n);
}

TEST(conv_lanes_layer_valid)
{
	struct case_stream s;
	__u32 n = 99;

	case_conv_lanes(&s);
	ASSERT_EQ(0, vnpu_stream_validate(s.words, s.size, case_slots,
					  CASE_NUM_SLOTS, &n));
	ASSERT_EQ(1, n);
}

/*
 * The mutations of case_conv_lanes() that stay valid without the lanes
 * flag, each a valid layer of some other path: the lanes checks reject
 * them, not a broken fixture.
 */
TEST(conv_lanes_mutations_valid_without_flag)
{
	static void (*const mutate[])(struct case_stream *s) = {
		m_lanes_stride_3, m_lanes_padded, m_lanes_bf16_x,
	};
	struct case_stream s;
	size_t i;
	__u32 n;

	for (i = 0; i < sizeof(mutate) / sizeof(mutate[0]); i++) {
		struct vnpu_cmd_layer *l;
		struct vnpu_layer_conv *a;

		mutate[i](&s);
		l = (struct vnpu_cmd_layer *)s.words;
		a = (struct vnpu_layer_conv *)&l->tensors[4];
		a->flags &= ~VNPU_LAYER_F_LANES;
		l->tensors[1].dims[0] = 8 * 6;
		EXPECT_EQ(0, vnpu_stream_validate(s.words, s.size, case_slots,
						  CASE_NUM_SLOTS, &n))
			TH_LOG("mutation %zu without the lanes flag rejected", i);
	}
}

TEST(conv_wino42_layer_valid)
{
	struct case_stream s;
	__u32 n = 99;

	case_conv_wino42(&s);
	ASSERT_EQ(0, vnpu_stream_validate(s.words, s.size, case_slots,
					  CASE_NUM_SLOTS, &n));
	ASSERT_EQ(1, n);
}

/*
 * The mutations of case_conv_wino42() that stay valid as another layer:
 * the F(4x2, 3x3) checks reject them, not a broken fixture (a stride of 2
 * or bf16 X without the flag and with dense f32 W; F(2x2, 3x3) with its
 * own size).
 */
TEST(conv_wino42_mutations_valid_as_others)
{
	static void (*const mutate[])(struct case_stream *s) = {
		m_wino42_stride_2, m_wino42_wino2_size,
	};
	struct case_stream s;
	size_t i;
	__u32 n;

	for (i = 0; i < sizeof(mutate) / sizeof(mutate[0]); i++) {
		struct vnpu_cmd_layer *l;
		struct vnpu_layer_conv *a;

		mutate[i](&s);
		l = (struct vnpu_cmd_layer *)s.words;
		a = (struct vnpu_layer_conv *)&l->tensors[4];
		a->flags &= ~VNPU_LAYER_F_WINO42;
		if (i == 1) {
			a->flags |= VNPU_LAYER_F_WINO2;
		} else {
			static const uint64_t w[4] = { 3, 2, 3, 3 };

			l->tensors[1] = case_tensor(1, VNPU_DTYPE_F32, 1024, 0);
			case_dense(&l->tensors[1], 4, w);
		}
		EXPECT_EQ(0, vnpu_stream_validate(s.words, s.size, case_slots,
						  CASE_NUM_SLOTS, &n))
			TH_LOG("mutation %zu as another layer rejected", i);
	}
}

TEST(lookup_layer_valid)
{
	struct case_stream s;
	__u32 n = 99;

	case_lookup(&s);
	ASSERT_EQ(0, vnpu_stream_validate(s.words, s.size, case_slots,
					  CASE_NUM_SLOTS, &n));
	ASSERT_EQ(1, n);
}

TEST(stream_size_not_multiple_of_8)
{
	struct case_stream s;
	__u32 n;

	case_base(&s);
	ASSERT_EQ(-22, vnpu_stream_validate(s.words, s.size - 4, case_slots,
					    CASE_NUM_SLOTS, &n));
}

TEST(stream_truncated)
{
	struct case_stream s;
	__u32 n;

	case_base(&s);
	ASSERT_EQ(-22, vnpu_stream_validate(s.words, s.size - 8, case_slots,
					    CASE_NUM_SLOTS, &n));
	ASSERT_EQ(-22, vnpu_stream_validate(s.words, 8, case_slots,
					    CASE_NUM_SLOTS, &n));
}

TEST(stream_misaligned_pointer)
{
	static __u64 buf[64];
	struct vnpu_cmd_header *h = (void *)((char *)buf + 4);
	__u32 n;

	h->opcode = VNPU_CMD_NOP;
	h->size = 8;
	ASSERT_EQ(-22, vnpu_stream_validate(h, 8, case_slots, CASE_NUM_SLOTS, &n));
}

TEST(no_slots)
{
	struct case_stream s;
	__u32 n;

	case_base(&s);
	ASSERT_EQ(-22, vnpu_stream_validate(s.words, s.size, NULL, 0, &n));
}

TEST(nop_spin_only)
{
	__u64 buf[2] = { 0, 0 };
	struct vnpu_cmd_header *h = (void *)buf;
	__u32 n;

	h[0].opcode = VNPU_CMD_NOP;
	h[0].size = 8;
	h[1].opcode = VNPU_CMD_SPIN;
	h[1].size = 8;
	ASSERT_EQ(0, vnpu_stream_validate(buf, 16, NULL, 0, &n));
	ASSERT_EQ(2, n);
}

TEST(empty_tensor_touches_nothing)
{
	struct case_stream s;
	__u32 n;

	case_base(&s);
	case_fill(&s)->dst.offset = CASE_SLOT_SIZE;
	case_fill(&s)->dst.dims[0] = 0;
	ASSERT_EQ(0, vnpu_stream_validate(s.words, s.size, case_slots,
					  CASE_NUM_SLOTS, &n));
}

TEST(tensor_ends_exactly_at_bo_end)
{
	struct case_stream s;
	__u32 n;

	case_base(&s);
	case_fill(&s)->dst.offset = CASE_SLOT_SIZE - 1024;
	ASSERT_EQ(0, vnpu_stream_validate(s.words, s.size, case_slots,
					  CASE_NUM_SLOTS, &n));
}

TEST(broadcast_source_allowed)
{
	struct case_stream s;
	__u32 n;

	case_base(&s);
	case_copy(&s)->src.strides[0] = 0;
	ASSERT_EQ(0, vnpu_stream_validate(s.words, s.size, case_slots,
					  CASE_NUM_SLOTS, &n));
}

/*
 * Run every part of every command of a validated stream, in reverse: in
 * @tiles parts at least, though vnpu_exec_parts() keeps a small command
 * whole, as any split of a command must give its result.
 */
static void run_stream(struct __test_metadata *_metadata, const void *stream,
		       __u64 size, void *const *base, __u32 tiles)
{
	const struct vnpu_cmd_header *cmd = NULL;
	struct vnpu_eng_ctx ctx = { 0 };

	while ((cmd = vnpu_stream_next(stream, size, cmd))) {
		__u32 parts = vnpu_exec_parts(cmd, tiles, 1000, ctx.features);
		__u32 p;

		ASSERT_LE(1, parts);
		if (parts < tiles)
			parts = tiles;
		ASSERT_EQ(0, vnpu_exec_scratch(cmd, parts, ctx.features));
		for (p = parts; p-- > 0;)
			ASSERT_EQ(0, vnpu_exec_part(cmd, base, p, parts, &ctx));
	}
}

TEST(exec_fill_copy_reference)
{
	static __u32 a[CASE_SLOT_SIZE / 4], b[CASE_SLOT_SIZE / 4];
	void *base[3] = { a, b, a };
	struct case_stream s;
	__u32 n, tiles;
	int i;

	for (tiles = 1; tiles <= 7; tiles += 3) {
		memset(a, 0, sizeof(a));
		for (i = 0; i < 256; i++)
			b[i] = 1000 + i;
		case_base(&s);
		case_fill(&s)->dst.dims[0] = 10000;
		ASSERT_EQ(0, vnpu_stream_validate(s.words, s.size, case_slots,
						  CASE_NUM_SLOTS, &n));
		run_stream(_metadata, s.words, s.size, base, tiles);
		for (i = 0; i < 10000; i++) {
			__u32 want = i >= 1024 && i < 1024 + 256 ? 1000 + i - 1024 : 5;

			ASSERT_EQ(want, a[i]);
		}
		ASSERT_EQ(0, a[10000]);
	}
}

/*
 * A command splits only into parts worth handing to another tile: a copy
 * of 10000 elements stays whole, one of 2^18 splits across the tiles.
 */
TEST(exec_parts_small_command_whole)
{
	struct case_stream s;
	struct vnpu_cmd_copy *c;

	memset(&s, 0, sizeof(s));
	c = case_add(&s, VNPU_CMD_COPY, sizeof(*c));
	c->dst = case_tensor(0, VNPU_DTYPE_U8, 0, 10000);
	c->src = case_tensor(1, VNPU_DTYPE_U8, 0, 10000);
	ASSERT_EQ(1, vnpu_exec_parts(&c->hdr, 4, 0, 0));
	c->dst.dims[0] = c->src.dims[0] = 1u << 18;
	ASSERT_EQ(4, vnpu_exec_parts(&c->hdr, 4, 0, 0));
}

/*
 * Where its work limits the parts, a command splits in a multiple of the
 * tiles: a copy of 3 * 2^16 elements in 2 on 2 tiles (not 3, two of them
 * on one tile), 3 on 3, and on 4 in as many as it has work for.
 */
TEST(exec_parts_multiple_of_tiles)
{
	struct case_stream s;
	struct vnpu_cmd_copy *c;

	memset(&s, 0, sizeof(s));
	c = case_add(&s, VNPU_CMD_COPY, sizeof(*c));
	c->dst = case_tensor(0, VNPU_DTYPE_U8, 0, 3u << 16);
	c->src = case_tensor(1, VNPU_DTYPE_U8, 0, 3u << 16);
	ASSERT_EQ(2, vnpu_exec_parts(&c->hdr, 2, 0, 0));
	ASSERT_EQ(3, vnpu_exec_parts(&c->hdr, 3, 0, 0));
	ASSERT_EQ(3, vnpu_exec_parts(&c->hdr, 4, 0, 0));
}

/*
 * Tiles that poll take finer parts (vnpu_exec_parts_fine()): a copy of
 * 3 * 2^14 elements, whole for vnpu_exec_parts(), splits in a multiple of
 * the tiles where its work limits the parts (2 on 2 tiles, not 3), in as
 * many as it has work for below that; too little work for two parts
 * splits in one a tile all the same (10000 in 2 on 2 tiles), as far as
 * there are elements (1 stays whole); a large copy splits as
 * vnpu_exec_parts() splits it.
 */
TEST(exec_parts_fine)
{
	struct case_stream s;
	struct vnpu_cmd_copy *c;

	memset(&s, 0, sizeof(s));
	c = case_add(&s, VNPU_CMD_COPY, sizeof(*c));
	c->dst = case_tensor(0, VNPU_DTYPE_U8, 0, 3u << 14);
	c->src = case_tensor(1, VNPU_DTYPE_U8, 0, 3u << 14);
	ASSERT_EQ(1, vnpu_exec_parts(&c->hdr, 2, 0, 0));
	ASSERT_EQ(2, vnpu_exec_parts_fine(&c->hdr, 2, 0, 0));
	ASSERT_EQ(3, vnpu_exec_parts_fine(&c->hdr, 3, 0, 0));
	ASSERT_EQ(3, vnpu_exec_parts_fine(&c->hdr, 4, 0, 0));	/* work for 3 of 4 tiles */
	c->dst.dims[0] = c->src.dims[0] = 10000;
	ASSERT_EQ(1, vnpu_exec_parts(&c->hdr, 2, 0, 0));
	ASSERT_EQ(2, vnpu_exec_parts_fine(&c->hdr, 2, 0, 0));
	c->dst.dims[0] = c->src.dims[0] = 1;
	ASSERT_EQ(1, vnpu_exec_parts_fine(&c->hdr, 2, 0, 0));
	c->dst.dims[0] = c->src.dims[0] = 1u << 18;
	ASSERT_EQ(vnpu_exec_parts(&c->hdr, 4, 0, 0), vnpu_exec_parts_fine(&c->hdr, 4, 0, 0));
}

/* A GEMM layer, @m x @k by packed @w_dtype weights onto @n columns. */
static struct vnpu_cmd_layer *case_gemm(struct case_stream *s, __u64 m, __u64 n,
					__u64 k, __u32 w_dtype)
{
	struct vnpu_cmd_layer *l;
	struct vnpu_layer_gemm *g;

	memset(s, 0, sizeof(*s));
	l = case_add(s, VNPU_CMD_LAYER, sizeof(*l) + 3 * sizeof(l->tensors[0]) +
		     ((sizeof(*g) + 7) & ~7ul));
	l->op = VNPU_LAYER_GEMM;
	l->num_tensors = 3;
	l->num_outputs = 1;
	l->attr_size = sizeof(*g);
	l->tensors[0] = case_tensor(0, VNPU_DTYPE_F32, 0, m);
	l->tensors[0].rank = 2;
	l->tensors[0].dims[1] = k;
	l->tensors[0].strides[0] = k;
	l->tensors[1] = case_tensor(1, w_dtype, 0, k * n);
	l->tensors[2] = case_tensor(2, VNPU_DTYPE_F32, 0, m);
	l->tensors[2].rank = 2;
	l->tensors[2].dims[1] = n;
	l->tensors[2].strides[0] = n;
	g = (struct vnpu_layer_gemm *)&l->tensors[3];
	g->flags = VNPU_LAYER_F_PACKED;
	g->alpha = 0x3f800000;
	return l;
}

/*
 * A layer on the AVX512-BF16 kernels splits by half its f32 work
 * (vnpu_eng_layer_part_cost()): a GEMM of twice the least work of a part
 * (64 x 64 x 256) goes in one part with bf16 weights there, in two with
 * f32 weights or where those kernels do not run; a large one (1024 x 1024
 * x 64) in as many as it has units either way.
 */
TEST(exec_parts_bf16_half)
{
	const __u32 fma = VNPU_ENG_F_AVX2_FMA | VNPU_ENG_F_AVX512;
	const __u32 bf = fma | VNPU_ENG_F_AVX512_BF16;
	struct case_stream s;
	struct vnpu_cmd_layer *l;

	l = case_gemm(&s, 64, 64, 256, VNPU_DTYPE_F32);
	ASSERT_EQ(2, vnpu_exec_parts(&l->hdr, 2, 1u << 18, bf));
	l = case_gemm(&s, 64, 64, 256, VNPU_DTYPE_BF16);
	ASSERT_EQ(1, vnpu_exec_parts(&l->hdr, 2, 1u << 18, bf));
	ASSERT_EQ(2, vnpu_exec_parts(&l->hdr, 2, 1u << 18, fma));
	l = case_gemm(&s, 1024, 1024, 64, VNPU_DTYPE_BF16);
	ASSERT_EQ(22, vnpu_exec_parts(&l->hdr, 2, 1u << 18, bf));
	ASSERT_EQ(22, vnpu_exec_parts(&l->hdr, 2, 1u << 18, fma));
}

/*
 * The work vnpu_exec_parts() splits by (vnpu_exec_cost()): a COPY's
 * elements count 16 each (2^16 of them, 2^20 of a layer's, are a part's
 * least work); a layer's on the AVX512-BF16 kernels half, on the
 * baseline path four times what the FMA paths weigh; a NOP nothing.
 */
TEST(exec_cost)
{
	const __u32 fma = VNPU_ENG_F_AVX2_FMA | VNPU_ENG_F_AVX512;
	const __u32 bf = fma | VNPU_ENG_F_AVX512_BF16;
	struct case_stream s;
	struct vnpu_cmd_copy *c;
	struct vnpu_cmd_header *h;
	struct vnpu_cmd_layer *l;
	__u64 cost;

	memset(&s, 0, sizeof(s));
	c = case_add(&s, VNPU_CMD_COPY, sizeof(*c));
	c->dst = case_tensor(0, VNPU_DTYPE_U8, 0, 3u << 14);
	c->src = case_tensor(1, VNPU_DTYPE_U8, 0, 3u << 14);
	ASSERT_EQ(16ull * (3u << 14), vnpu_exec_cost(&c->hdr, fma));
	memset(&s, 0, sizeof(s));
	h = case_add(&s, VNPU_CMD_NOP, sizeof(*h));
	ASSERT_EQ(0, vnpu_exec_cost(h, fma));

	l = case_gemm(&s, 64, 64, 256, VNPU_DTYPE_BF16);
	cost = vnpu_exec_cost(&l->hdr, fma);
	ASSERT_LT(1ull << 21, cost);
	ASSERT_EQ(cost / 2, vnpu_exec_cost(&l->hdr, bf));
	ASSERT_EQ(4 * cost, vnpu_exec_cost(&l->hdr, 0));
}

TEST(exec_transpose_and_broadcast)
{
	static __u16 a[4096], b[4096];
	void *base[3] = { a, b, a };
	struct case_stream s;
	struct vnpu_cmd_copy *c;
	__u32 n;
	int r, k;

	memset(&s, 0, sizeof(s));
	for (r = 0; r < 4096; r++)
		b[r] = r;
	/* a[r][k] (3 x 100) = b[k][r] (100 x 3): a transpose. */
	c = case_add(&s, VNPU_CMD_COPY, sizeof(*c));
	c->dst = case_tensor(0, VNPU_DTYPE_U16, 0, 0);
	c->dst.rank = 2;
	c->dst.dims[0] = 3;
	c->dst.dims[1] = 100;
	c->dst.strides[0] = 100;
	c->dst.strides[1] = 1;
	c->src = c->dst;
	c->src.slot = 1;
	c->src.strides[0] = 1;
	c->src.strides[1] = 3;
	/* a[1000 + k] = b[7] for 50 k: a broadcast. */
	c = case_add(&s, VNPU_CMD_COPY, sizeof(*c));
	c->dst = case_tensor(0, VNPU_DTYPE_U16, 2000, 50);
	c->src = case_tensor(1, VNPU_DTYPE_U16, 14, 50);
	c->src.strides[0] = 0;
	ASSERT_EQ(0, vnpu_stream_validate(s.words, s.size, case_slots,
					  CASE_NUM_SLOTS, &n));
	run_stream(_metadata, s.words, s.size, base, 4);
	for (r = 0; r < 3; r++)
		for (k = 0; k < 100; k++)
			ASSERT_EQ(k * 3 + r, a[r * 100 + k]);
	for (k = 0; k < 50; k++)
		ASSERT_EQ(7, a[1000 + k]);
}

/* A FILL and a transposing COPY of VNPU_MAX_DIMS dims, split in parts. */
TEST(exec_rank_max_transpose)
{
	static __u32 a[CASE_SLOT_SIZE / 4], b[CASE_SLOT_SIZE / 4];
	void *base[3] = { a, b, a };
	struct case_stream s;
	__u32 n, tiles, i;

	ASSERT_EQ(8, VNPU_MAX_DIMS);
	for (i = 0; i < 256; i++)
		b[i] = 1000 + i;
	for (tiles = 1; tiles <= 7; tiles += 3) {
		memset(a, 0, sizeof(a));
		case_base(&s);
		case_rank_max(&case_fill(&s)->dst, 0);
		case_rank_max(&case_copy(&s)->dst, 0);
		case_rank_max(&case_copy(&s)->src, 1);
		ASSERT_EQ(0, vnpu_stream_validate(s.words, s.size, case_slots,
						  CASE_NUM_SLOTS, &n));
		run_stream(_metadata, s.words, s.size, base, tiles);
		for (i = 0; i < 256; i++) {
			__u32 rev = 0, k;

			for (k = 0; k < 8; k++)
				rev |= ((i >> k) & 1) << (7 - k);
			ASSERT_EQ(5, a[i]);
			ASSERT_EQ(1000 + rev, a[1024 + i]);
		}
		ASSERT_EQ(0, a[256]);
	}
}

/* The engine paths this CPU runs, for COPY's transposition. */
static __u32 exec_paths(__u32 *paths)
{
	__u32 n = 0;

	paths[n++] = 0;
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
		paths[n++] = VNPU_ENG_F_AVX2_FMA;
		if (__builtin_cpu_supports("avx512f"))
			paths[n++] = VNPU_ENG_F_AVX2_FMA | VNPU_ENG_F_AVX512;
	}
	return n;
}

/*
 * One COPY of @rank @dims into a with rows @pad elements apart beyond
 * their length, from b laid out dense in the dim order @perm (a
 * Transpose), or broadcast along dim @bcast (< rank); with @scatter the
 * other way round (from b's padded rows into a in the order @perm, no
 * broadcast); run in @parts parts (split at any element) per path and
 * checked element by element.
 */
static void check_copy_layout(struct __test_metadata *_metadata, __u32 dtype,
			      __u32 rank, const __u64 *dims, const __u32 *perm,
			      __u64 pad, __u32 bcast, __u32 parts, int scatter)
{
	static const struct vnpu_slot_info slots[2] = {
		{ .size = 1 << 20, .id = 1, .flags = VNPU_SLOT_INFO_WRITE },
		{ .size = 1 << 20, .id = 2, .flags = 0 },
	};
	static unsigned char a[1 << 20], b[1 << 20];
	void *base[2] = { a, b };
	struct case_stream s;
	struct vnpu_cmd_copy *c;
	__u32 paths[3], np = exec_paths(paths), esize, d, k, n;
	__u64 numel = 1, e, i, span;
	__s64 st;

	memset(&s, 0, sizeof(s));
	c = case_add(&s, VNPU_CMD_COPY, sizeof(*c));
	c->dst = case_tensor(0, dtype, 0, 1);
	c->dst.rank = rank;
	c->src = c->dst;
	c->src.slot = 1;
	esize = dtype == VNPU_DTYPE_U8 ? 1 : dtype == VNPU_DTYPE_U16 ? 2 :
		dtype == VNPU_DTYPE_U64 ? 8 : 4;
	for (st = 1, d = rank; d-- > 0;) {
		c->dst.dims[d] = c->src.dims[d] = dims[d];
		c->dst.strides[d] = st;
		st *= (__s64)(dims[d] + (d == rank - 1 ? pad : 0));
		numel *= dims[d];
	}
	for (st = 1, k = rank; k-- > 0;) {
		c->src.strides[perm[k]] = perm[k] == bcast ? 0 : st;
		st *= perm[k] == bcast ? 1 : (__s64)dims[perm[k]];
	}
	if (scatter) {
		for (d = 0; d < rank; d++) {
			__s64 t = c->src.strides[d];

			c->src.strides[d] = c->dst.strides[d];
			c->dst.strides[d] = t;
		}
		st = (__s64)(numel / dims[rank - 1] * (dims[rank - 1] + pad));
	}
	span = (__u64)st * esize;
	ASSERT_GE(sizeof(b), span);
	for (i = 0; i < span; i++)
		b[i] = (unsigned char)(i * 7 + i / 251);
	ASSERT_EQ(0, vnpu_stream_validate(s.words, s.size, slots, 2, &n));
	for (k = 0; k < np; k++) {
		struct vnpu_eng_ctx ctx = { .features = paths[k] };
		__u32 p;

		memset(a, 0xee, sizeof(a));
		for (p = parts; p-- > 0;)
			ASSERT_EQ(0, vnpu_exec_part((void *)s.words, base, p, parts,
						    &ctx));
		for (e = 0; e < numel; e++) {
			__u64 rem = e, doff = 0, soff = 0;

			for (d = rank; d-- > 0;) {
				doff += rem % dims[d] * (__u64)c->dst.strides[d];
				soff += rem % dims[d] * (__u64)c->src.strides[d];
				rem /= dims[d];
			}
			ASSERT_EQ(0, memcmp(a + doff * esize, b + soff * esize,
					    esize));
			/* The row padding is left alone. */
			if (pad && !scatter && e % dims[rank - 1] == dims[rank - 1] - 1)
				ASSERT_EQ(0xee, a[(doff + 1) * esize]);
		}
	}
}

/*
 * COPY's row moves (memcpy, strided, broadcast, pairs of rows
 * interleaved) and its tiled
 * transposition, gathering and scattering: odd shapes whose tiles have tails, row padding, every
 * element size, split at any element, on every engine path.
 */
TEST(exec_copy_layouts)
{
	static const __u64 shapes[][4] = {
		{ 1, 3, 37, 21 }, { 2, 16, 8, 8 }, { 1, 1, 64, 96 },
		{ 3, 5, 7, 9 }, { 1, 1, 9, 130 }, { 2, 3, 17, 8 },
	};
	static const __u32 perms[][4] = {
		{ 0, 1, 2, 3 }, { 0, 1, 3, 2 }, { 0, 2, 3, 1 }, { 0, 3, 1, 2 },
		{ 3, 2, 1, 0 }, { 0, 2, 1, 3 }, { 1, 0, 3, 2 },
	};
	static const __u32 dtypes[] = {
		VNPU_DTYPE_F32, VNPU_DTYPE_U8, VNPU_DTYPE_U16, VNPU_DTYPE_U64,
	};
	static const __u64 pairs[][4] = {
		{ 3, 5, 2, 37 }, { 1, 4, 2, 96 }, { 2, 3, 2, 1 }, { 1, 2, 2, 160 },
	};
	__u32 sh, pe, dt, parts;
	int sc;

	for (sh = 0; sh < ARRAY_SIZE(shapes); sh++)
		for (pe = 0; pe < ARRAY_SIZE(perms); pe++)
			for (dt = 0; dt < ARRAY_SIZE(dtypes); dt++)
				for (parts = 1; parts <= 7; parts += 6)
					for (sc = 0; sc < 2; sc++)
						check_copy_layout(_metadata,
								  dtypes[dt], 4,
								  shapes[sh],
								  perms[pe],
								  (sh + pe) % 3,
								  4, parts, sc);
	/*
	 * Two rows interleaved into one (pair_rows(): dst strides 1 and 2 on
	 * the last two dims, src rows dense or strided), split at any
	 * element, so parts start and end inside the pairs too.
	 */
	for (sh = 0; sh < ARRAY_SIZE(pairs); sh++)
		for (parts = 1; parts <= 7; parts += 2)
			for (dt = 0; dt < 2; dt++)
				check_copy_layout(_metadata, dtypes[dt], 4, pairs[sh],
						  perms[1], sh % 2, 4, parts, 1);
	/* Broadcast sources: a dim of stride 0 inside and outside. */
	for (sh = 0; sh < ARRAY_SIZE(shapes); sh++)
		for (pe = 0; pe < 4; pe++)
			check_copy_layout(_metadata, VNPU_DTYPE_F32, 4, shapes[sh],
					  perms[pe % 2], pe % 2, pe, 5, 0);
}

/* The descriptor's size is part of the uAPI: 24 bytes + 16 per dim. */
TEST(descriptor_sizes)
{
	ASSERT_EQ(152, sizeof(struct vnpu_cmd_tensor));
	ASSERT_EQ(168, sizeof(struct vnpu_cmd_fill));
	ASSERT_EQ(312, sizeof(struct vnpu_cmd_copy));
	ASSERT_EQ(32, sizeof(struct vnpu_cmd_layer));
}

/* Empty tensors validate and run without touching memory (was a SIGFPE). */
TEST(exec_empty_tensors)
{
	static __u32 a[CASE_SLOT_SIZE / 4];
	void *base[3] = { a, a, a };
	struct case_stream s;
	__u32 n;

	case_base(&s);
	case_fill(&s)->dst.dims[0] = 0;
	case_copy(&s)->dst.dims[0] = 0;
	case_copy(&s)->src.dims[0] = 0;
	ASSERT_EQ(0, vnpu_stream_validate(s.words, s.size, case_slots,
					  CASE_NUM_SLOTS, &n));
	run_stream(_metadata, s.words, s.size, base, 4);
	ASSERT_EQ(0, a[0]);
	ASSERT_EQ(0, a[1024]);
}

TEST(exec_part_out_of_range)
{
	struct case_stream s;
	struct vnpu_eng_ctx ctx = { 0 };
	static __u32 a[CASE_SLOT_SIZE / 4];
	void *base[3] = { a, a, a };

	case_base(&s);
	ASSERT_EQ(-22, vnpu_exec_part((void *)s.words, base, 2, 2, &ctx));
	ASSERT_EQ(-22, vnpu_exec_part((void *)s.words, base, 0, 0, &ctx));
}

/*
 * Property: every stream the validator accepts runs inside its slots.
 * Random mutations of the base stream; accepted ones are executed on slot
 * buffers that end at an inaccessible guard page, so any access beyond a
 * slot crashes the test.
 */
static __u64 rng_next(__u64 *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void *guarded_slot(size_t size)
{
	long page = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, size + 2 * page, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	mprotect(p, page, PROT_NONE);
	mprotect(p + page + size, page, PROT_NONE);
	return p + page;
}

TEST(random_mutations_stay_inside_slots)
{
	static const __u64 interesting[] = {
		0, 1, 2, 3, 4, 7, 8, 255, 256, 4096, 65535, 65536, 65537,
		1ull << 31, 1ull << 32, 1ull << 62, 1ull << 63, ~0ull, ~0ull - 7,
	};
	void *base[3];
	__u64 x = 0x9e3779b97f4a7c15ull;
	int i, accepted = 0;

	base[0] = guarded_slot(CASE_SLOT_SIZE);
	base[1] = guarded_slot(CASE_SLOT_SIZE);
	base[2] = base[0];
	ASSERT_NE(NULL, base[0]);
	ASSERT_NE(NULL, base[1]);

	for (i = 0; i < 20000; i++) {
		struct case_stream s;
		__u32 n, words, k, muts = 1 + rng_next(&x) % 3;

		case_base(&s);
		words = s.size / 8;
		for (k = 0; k < muts; k++) {
			__u64 r = rng_next(&x);
			__u32 w = r % words;

			if (r & (1ull << 40))
				s.words[w] = interesting[(r >> 20) %
					(sizeof(interesting) / sizeof(interesting[0]))];
			else
				((unsigned char *)s.words)[w * 8 + (r >> 8) % 8] = r >> 16;
		}
		if (vnpu_stream_validate(s.words, s.size, case_slots,
					 CASE_NUM_SLOTS, &n))
			continue;
		accepted++;
		run_stream(_metadata, s.words, s.size, base, 3);
	}
	TH_LOG("%d of 20000 mutated streams were valid and ran", accepted);
	ASSERT_LT(0, accepted);
}

TEST_HARNESS_MAIN

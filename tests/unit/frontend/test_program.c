// SPDX-License-Identifier: MIT
/* The program's serialization: round trip, and rejection of corruption. */
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include <drm/vnpu_cmd.h>

#include "fe_test.h"
#include "ksft_main.h"

#define F32 ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT

static struct vnpu_program *small_program(void)
{
	struct mb *b = mb_new(13);
	struct vnpu_program *p = NULL;
	vnpu_model *m;

	mb_input(b, "x", F32, 2, (const int64_t[]){ 2, 4 });
	mb_init_f32(b, "w", 2, (const int64_t[]){ 4, 3 }, NULL);
	mb_node(b, "MatMul", (const char *[]){ "x", "w", NULL }, (const char *[]){ "a", NULL });
	mb_node(b, "Relu", (const char *[]){ "a", NULL }, (const char *[]){ "y", NULL });
	mb_node(b, "Neg", (const char *[]){ "a", NULL }, (const char *[]){ "z", NULL });
	mb_output(b, "y");
	mb_output(b, "z");
	m = mb_read(b);
	if (m && vnpu_compile(m, NULL, &p))
		p = NULL;
	vnpu_model_free(m);
	return p;
}

/*
 * x [64, 64] through four MatMuls of 16 KiB outputs: the greedy plan puts
 * the third where the first was; with @own_plan, a second stream where
 * each has its own bytes.
 */
static struct vnpu_program *chain_program(bool own_plan)
{
	static const char *const names[] = { "x", "a", "b", "c", "y" };
	const struct vnpu_compile_options o = { .own_plan = own_plan };
	struct mb *b = mb_new(13);
	struct vnpu_program *p = NULL;
	vnpu_model *m;

	mb_input(b, "x", F32, 2, (const int64_t[]){ 64, 64 });
	mb_init_f32(b, "w", 2, (const int64_t[]){ 64, 64 }, NULL);
	for (int i = 0; i < 4; i++)
		mb_node(b, "MatMul", (const char *[]){ names[i], "w", NULL },
			(const char *[]){ names[i + 1], NULL });
	mb_output(b, "y");
	m = mb_read(b);
	if (m && vnpu_compile(m, &o, &p))
		p = NULL;
	vnpu_model_free(m);
	return p;
}

static void check_same(struct __test_metadata *_metadata, const struct vnpu_program *a,
		       const struct vnpu_program *b)
{
	EXPECT_EQ(b->weights_size, a->weights_size);
	EXPECT_EQ(0, memcmp(a->weights, b->weights, a->weights_size));
	EXPECT_EQ(b->arena_size, a->arena_size);
	EXPECT_EQ(b->intermediates_size, a->intermediates_size);
	EXPECT_EQ(b->num_inputs, a->num_inputs);
	EXPECT_EQ(b->num_outputs, a->num_outputs);
	for (uint32_t i = 0; i < a->num_outputs && i < b->num_outputs; i++) {
		EXPECT_STREQ(b->outputs[i].name, a->outputs[i].name);
		EXPECT_EQ(0, memcmp(&a->outputs[i].shape, &b->outputs[i].shape,
				    sizeof(vnpu_shape)));
		EXPECT_EQ(b->outputs[i].slot, a->outputs[i].slot);
	}
	EXPECT_EQ(b->num_segments, a->num_segments);
	for (uint32_t i = 0; i < a->num_segments && i < b->num_segments; i++) {
		EXPECT_EQ(b->segments[i].cmd_size, a->segments[i].cmd_size);
		EXPECT_EQ(0,
			  memcmp(a->segments[i].cmd, b->segments[i].cmd, a->segments[i].cmd_size));
	}
	EXPECT_EQ(b->own_arena_size, a->own_arena_size);
	EXPECT_EQ(b->own_cmd_size, a->own_cmd_size);
	EXPECT_EQ(!b->own_cmd, !a->own_cmd);
	if (a->own_cmd && b->own_cmd)
		EXPECT_EQ(0, memcmp(a->own_cmd, b->own_cmd, a->own_cmd_size));
	EXPECT_EQ(b->num_layers, a->num_layers);
	for (uint32_t i = 0; i < a->num_layers && i < b->num_layers; i++) {
		EXPECT_STREQ(b->layers[i].name, a->layers[i].name);
		EXPECT_STREQ(b->layers[i].type, a->layers[i].type);
	}
}

TEST(round_trip)
{
	struct vnpu_program *p = small_program(), *q = NULL;
	uint64_t size, size2;
	void *data, *data2;

	EXPECT_NE(NULL, p);
	if (!p)
		return;
	EXPECT_EQ(VNPU_OK, vnpu_program_serialize(p, &data, &size));
	EXPECT_EQ(VNPU_OK, vnpu_program_deserialize(data, size, &q));
	if (q) {
		check_same(_metadata, p, q);
		/* Serializing again gives the same bytes. */
		EXPECT_EQ(VNPU_OK, vnpu_program_serialize(q, &data2, &size2));
		EXPECT_EQ(size, size2);
		EXPECT_EQ(0, memcmp(data, data2, size));
		free(data2);
	}
	vnpu_program_free(q);
	free(data);
	vnpu_program_free(p);
	vnpu_program_free(NULL);
}

/* The own-bytes plan: the same commands, other arena offsets, and back. */
TEST(own_plan)
{
	struct vnpu_program *p = chain_program(true), *g = chain_program(false), *q = NULL;
	uint64_t size, size2, pos;
	uint8_t *data, *data2;

	ASSERT_NE(NULL, p);
	ASSERT_NE(NULL, g);
	/* Without the option, none: the program is as it was. */
	EXPECT_EQ(NULL, g->own_cmd);
	EXPECT_EQ(0, g->own_arena_size);
	EXPECT_EQ(p->arena_size, g->arena_size);
	/* a, b, c: 16 KiB each, in pages of their own; greedy reuses a's. */
	EXPECT_EQ(3 * 16384, p->own_arena_size);
	EXPECT_EQ(2 * 16384, p->arena_size);
	ASSERT_NE(NULL, p->own_cmd);
	ASSERT_EQ(p->segments[0].cmd_size, p->own_cmd_size);
	EXPECT_EQ(0, memcmp(p->segments[0].cmd, g->segments[0].cmd, g->segments[0].cmd_size));
	EXPECT_NE(0, memcmp(p->segments[0].cmd, p->own_cmd, p->own_cmd_size));
	for (pos = 0; pos < p->own_cmd_size;) {
		const struct vnpu_cmd_header *h = (const void *)((uint8_t *)p->segments[0].cmd + pos);
		const struct vnpu_cmd_header *o = (const void *)((uint8_t *)p->own_cmd + pos);

		ASSERT_EQ(h->opcode, o->opcode);
		ASSERT_EQ(h->size, o->size);
		pos += h->size;
	}
	/* Serialized with it, and back; a program without has no flag. */
	ASSERT_EQ(VNPU_OK, vnpu_program_serialize(g, (void **)&data, &size));
	EXPECT_EQ(0, data[4] & 2);
	free(data);
	ASSERT_EQ(VNPU_OK, vnpu_program_serialize(p, (void **)&data, &size));
	EXPECT_EQ(2, data[4] & 2);
	ASSERT_EQ(VNPU_OK, vnpu_program_deserialize(data, size, &q));
	check_same(_metadata, p, q);
	ASSERT_EQ(VNPU_OK, vnpu_program_serialize(q, (void **)&data2, &size2));
	EXPECT_EQ(size, size2);
	EXPECT_EQ(0, memcmp(data, data2, size));
	free(data2);
	vnpu_program_free(q);
	free(data);
	vnpu_program_free(g);
	vnpu_program_free(p);
}

/* A second stream that is not the program's commands, or sized wrong, is refused. */
TEST(own_plan_malformed)
{
	struct vnpu_program *p = chain_program(true), *q = NULL;
	uint64_t size, at, sizes = 0, v;
	uint8_t *data;

	ASSERT_NE(NULL, p);
	ASSERT_NE(NULL, p->own_cmd);
	ASSERT_EQ(VNPU_OK, vnpu_program_serialize(p, (void **)&data, &size));
	/* The stream ends where the weights start; its sizes before it. */
	at = size - p->weights_size - p->own_cmd_size;
	ASSERT_EQ(0, memcmp(data + at, p->own_cmd, p->own_cmd_size));
	for (uint64_t k = at - 16; k + 16 >= at - 8 && k + 16 <= at; k--) {
		memcpy(&v, data + k + 8, 8);
		if (v == p->own_cmd_size) {
			memcpy(&v, data + k, 8);
			if (v == p->own_arena_size) {
				sizes = k;
				break;
			}
		}
	}
	ASSERT_NE(0, sizes);
	/* A command of another op. */
	data[at] ^= 1;
	EXPECT_EQ(VNPU_PARSE_ERROR, vnpu_program_deserialize(data, size, &q));
	EXPECT_NE(NULL, strstr(vnpu_last_error(), "own plan"));
	data[at] ^= 1;
	/* A command of another size (the same total). */
	data[at + 4] ^= 8;
	EXPECT_EQ(VNPU_PARSE_ERROR, vnpu_program_deserialize(data, size, &q));
	data[at + 4] ^= 8;
	/* Not the segment's size; no arena; a huge arena. */
	for (int c = 0; c < 3; c++) {
		uint8_t save[16];

		memcpy(save, data + sizes, 16);
		v = c == 0 ? p->own_cmd_size - 8 : 0;
		if (c == 0)
			memcpy(data + sizes + 8, &v, 8);
		else
			memcpy(data + sizes, c == 1 ? &v : &(uint64_t){ UINT64_MAX }, 8);
		EXPECT_EQ(VNPU_PARSE_ERROR, vnpu_program_deserialize(data, size, &q));
		EXPECT_EQ(NULL, q);
		EXPECT_NE(NULL, strstr(vnpu_last_error(), "own plan"));
		memcpy(data + sizes, save, 16);
	}
	/* Intact, it reads. */
	EXPECT_EQ(VNPU_OK, vnpu_program_deserialize(data, size, &q));
	vnpu_program_free(q);
	free(data);
	vnpu_program_free(p);
}

TEST(corruption)
{
	struct vnpu_program *p = small_program(), *q;
	uint64_t size;
	uint8_t *data;
	int accepted = 0;

	EXPECT_NE(NULL, p);
	if (!p)
		return;
	EXPECT_EQ(VNPU_OK, vnpu_program_serialize(p, (void **)&data, &size));
	/* Every truncation is rejected with a message. */
	for (uint64_t cut = 0; cut < size; cut++) {
		q = NULL;
		EXPECT_EQ(VNPU_PARSE_ERROR, vnpu_program_deserialize(data, cut, &q));
		EXPECT_EQ(NULL, q);
	}
	EXPECT_NE(NULL, strstr(vnpu_last_error(), "program"));
	/* Every flipped byte outside the weights' values is rejected or still
	 * a program whose cross references hold; never a crash. */
	for (uint64_t pos = 0; pos < size; pos++) {
		for (int bit = 0; bit < 8; bit += 3) {
			vnpu_status st;

			data[pos] ^= (uint8_t)(1u << bit);
			q = NULL;
			st = vnpu_program_deserialize(data, size, &q);
			EXPECT_TRUE(st == VNPU_OK || st == VNPU_PARSE_ERROR);
			if (!st) {
				accepted++;
				EXPECT_TRUE(q->num_segments <= 64 && q->num_layers <= 64);
			}
			vnpu_program_free(q);
			data[pos] ^= (uint8_t)(1u << bit);
		}
	}
	TH_LOG("%llu bytes, %d of %llu single-bit corruptions still parse (weights, names, command bodies)",
	       (unsigned long long)size, accepted, (unsigned long long)size * 3);
	/* Trailing bytes. */
	{
		uint8_t *longer = calloc(1, size + 8);

		memcpy(longer, data, size);
		EXPECT_EQ(VNPU_PARSE_ERROR, vnpu_program_deserialize(longer, size + 8, &q));
		free(longer);
	}
	EXPECT_EQ(VNPU_INVALID_ARGUMENT, vnpu_program_deserialize(NULL, 0, &q));
	free(data);
	vnpu_program_free(p);
}

KSFT_MAIN

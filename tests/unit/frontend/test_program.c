// SPDX-License-Identifier: MIT
/* The program's serialization: round trip, and rejection of corruption. */
#include <stdlib.h>
#include <string.h>

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

// SPDX-License-Identifier: MIT
/* The program's serialization: round trip, and rejection of corruption. */
#include <stdlib.h>
#include <string.h>

#include "fe_test.h"

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

static void check_same(const struct vnpu_program *a, const struct vnpu_program *b)
{
	CHECK_EQ(a->weights_size, b->weights_size);
	CHECK(!memcmp(a->weights, b->weights, a->weights_size));
	CHECK_EQ(a->arena_size, b->arena_size);
	CHECK_EQ(a->intermediates_size, b->intermediates_size);
	CHECK_EQ(a->num_inputs, b->num_inputs);
	CHECK_EQ(a->num_outputs, b->num_outputs);
	for (uint32_t i = 0; i < a->num_outputs && i < b->num_outputs; i++) {
		CHECK(!strcmp(a->outputs[i].name, b->outputs[i].name));
		CHECK(!memcmp(&a->outputs[i].shape, &b->outputs[i].shape, sizeof(vnpu_shape)));
		CHECK_EQ(a->outputs[i].slot, b->outputs[i].slot);
	}
	CHECK_EQ(a->num_segments, b->num_segments);
	for (uint32_t i = 0; i < a->num_segments && i < b->num_segments; i++) {
		CHECK_EQ(a->segments[i].cmd_size, b->segments[i].cmd_size);
		CHECK(!memcmp(a->segments[i].cmd, b->segments[i].cmd, a->segments[i].cmd_size));
	}
	CHECK_EQ(a->num_layers, b->num_layers);
	for (uint32_t i = 0; i < a->num_layers && i < b->num_layers; i++) {
		CHECK(!strcmp(a->layers[i].name, b->layers[i].name));
		CHECK(!strcmp(a->layers[i].type, b->layers[i].type));
	}
}

static void test_round_trip(void)
{
	struct vnpu_program *p = small_program(), *q = NULL;
	uint64_t size, size2;
	void *data, *data2;

	CHECK(p != NULL);
	if (!p)
		return;
	CHECK_EQ(vnpu_program_serialize(p, &data, &size), VNPU_OK);
	CHECK_EQ(vnpu_program_deserialize(data, size, &q), VNPU_OK);
	if (q) {
		check_same(p, q);
		/* Serializing again gives the same bytes. */
		CHECK_EQ(vnpu_program_serialize(q, &data2, &size2), VNPU_OK);
		CHECK_EQ(size2, size);
		CHECK(!memcmp(data, data2, size));
		free(data2);
	}
	vnpu_program_free(q);
	free(data);
	vnpu_program_free(p);
	vnpu_program_free(NULL);
}

static void test_corruption(void)
{
	struct vnpu_program *p = small_program(), *q;
	uint64_t size;
	uint8_t *data;
	int accepted = 0;

	CHECK(p != NULL);
	if (!p)
		return;
	CHECK_EQ(vnpu_program_serialize(p, (void **)&data, &size), VNPU_OK);
	/* Every truncation is rejected with a message. */
	for (uint64_t cut = 0; cut < size; cut++) {
		q = NULL;
		CHECK_EQ(vnpu_program_deserialize(data, cut, &q), VNPU_PARSE_ERROR);
		CHECK(q == NULL);
	}
	CHECK(strstr(vnpu_last_error(), "program") != NULL);
	/* Every flipped byte outside the weights' values is rejected or still
	 * a program whose cross references hold; never a crash. */
	for (uint64_t pos = 0; pos < size; pos++) {
		for (int bit = 0; bit < 8; bit += 3) {
			vnpu_status st;

			data[pos] ^= (uint8_t)(1u << bit);
			q = NULL;
			st = vnpu_program_deserialize(data, size, &q);
			CHECK(st == VNPU_OK || st == VNPU_PARSE_ERROR);
			if (!st) {
				accepted++;
				CHECK(q->num_segments <= 64 && q->num_layers <= 64);
			}
			vnpu_program_free(q);
			data[pos] ^= (uint8_t)(1u << bit);
		}
	}
	printf("  %llu bytes, %d of %llu single-bit corruptions still parse (weights, names, command bodies)\n",
	       (unsigned long long)size, accepted, (unsigned long long)size * 3);
	/* Trailing bytes. */
	{
		uint8_t *longer = calloc(1, size + 8);

		memcpy(longer, data, size);
		CHECK_EQ(vnpu_program_deserialize(longer, size + 8, &q), VNPU_PARSE_ERROR);
		free(longer);
	}
	CHECK_EQ(vnpu_program_deserialize(NULL, 0, &q), VNPU_INVALID_ARGUMENT);
	free(data);
	vnpu_program_free(p);
}

int main(int argc, char **argv)
{
	static const struct fe_test tests[] = {
		{ "round_trip", test_round_trip },
		{ "corruption", test_corruption },
	};

	return fe_run(tests, sizeof(tests) / sizeof(tests[0]), argc, argv);
}

// SPDX-License-Identifier: MIT
/*
 * Mutated ONNX models: a seeded, deterministic loop truncates, flips,
 * overwrites, deletes, duplicates and inserts bytes of a few of the ONNX
 * node suite's model.onnx files and reads each result. Every mutation must
 * come back with a status (and a message when it is an error), never a
 * crash; a model that still reads is compiled for the CPU, and a compiled
 * one runs once.
 *
 *   test-runtime-fuzz [-b] [-d DEVICE] [-n MUTATIONS] [-s SEED] [-v] [MODEL.onnx...]
 *
 * (given models instead of the built-in list; those that do not read as
 * they are are left out).
 *
 * It prints its figures: mutations per kind of outcome and the time taken.
 * VNPU_DEBUG_CS_MOVE=1 (set by the meson test) makes the compiler move its
 * tables at every add, so a stale pointer in a compile path shows too.
 *
 * With -b the same models are compiled for the CPU and exported, and the
 * blobs are mutated instead: their properties and program (words set to
 * values a reader must check, besides the byte mutations), after which the
 * header's sizes and checksum are made right again. The checksum only finds
 * accidents; a crafted blob must be refused by the program reader (or the
 * device's stream validator) with a status, and an imported one runs once.
 * -d compiles and imports for DEVICE instead of the CPU ("NPU": the
 * driver's validator; the test skips when the device is not there).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <vnpu/vnpu.h>

#include "runtime_test.h"

#define NODE_DIR "/usr/share/libonnx-testdata/data/node/"

/* Small models over the readers' and the compiler's paths: convolutions,
 * recurrences, control flow, sequences, optionals, quantities of attributes. */
static const char *const cases[] = {
	"test_conv_with_strides_padding", "test_lstm_defaults", "test_gru_defaults",
	"test_loop11", "test_scan9_sum", "test_if", "test_if_seq",
	"test_sequence_map_add_2_sequences", "test_resize_upsample_scales_linear",
	"test_einsum_batch_matmul", "test_gather_0", "test_slice_neg_steps", "test_top_k",
	"test_layer_normalization_4d_axis0", "test_dft",
	"test_range_float_type_positive_delta_expanded", "test_convtranspose",
	"test_onehot_with_axis", "test_cumsum_1d_reverse",
	"test_batchnorm_example_training_mode", "test_stft",
	"test_optional_get_element_sequence", "test_nonmaxsuppression_center_point_box_format",
	"test_maxpool_2d_pads", "test_gemm_default_matrix_bias",
	/* more layer kinds, for the blobs (these compile without input values) */
	"test_averagepool_2d_pads_count_include_pad", "test_reduce_log_sum_exp_keepdims_example",
	"test_softmax_axis_0", "test_transpose_all_permutations_3", "test_concat_3d_axis_1",
	"test_depthtospace_dcr_mode", "test_matmul_4d", "test_qlinearconv", "test_instancenorm_example",
	"test_lrn", "test_argmax_keepdims_example", "test_where_example",
	"test_gathernd_example_int32", "test_resize_downsample_scales_nearest",
	"test_globalaveragepool", "test_mod_mixed_sign_float32", "test_cast_FLOAT_to_FLOAT16",
	"test_dequantizelinear", "test_quantizelinear", "test_matmulinteger",
	"test_split_equal_parts_1d", "test_tile", "test_expand_dim_changed", "test_hardmax_axis_1",
	"test_reduce_prod_default_axes_keepdims_example", "test_erf",
};
#define NUM_CASES (sizeof(cases) / sizeof(cases[0]))

/* A scalar field of the protobuf encoding: a varint or a fixed32/64. */
struct leaf {
	uint32_t pos, len;
	bool varint;
};

struct model {
	unsigned char *data;
	size_t size;
	struct leaf *leaves;	/* every scalar field, nested messages included */
	size_t num_leaves, cap_leaves;
};

/* xorshift64*: the same mutations for the same seed everywhere. */
static uint64_t rng_state;
static bool verbose;
static const char *device = "CPU";

static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

static size_t rnd_below(size_t n)
{
	return n ? (size_t)(rnd() % n) : 0;
}

static int read_file(const char *path, struct model *m)
{
	FILE *f = fopen(path, "rb");
	long n;

	if (!f)
		return -1;
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return -1;
	}
	m->data = malloc((size_t)n);
	if (!m->data || fread(m->data, 1, (size_t)n, f) != (size_t)n) {
		fclose(f);
		return -1;
	}
	fclose(f);
	m->size = (size_t)n;
	return 0;
}

static bool get_varint(const unsigned char *p, size_t end, size_t *at, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; shift < 64 && *at < end; shift += 7) {
		unsigned char b = p[(*at)++];

		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

/*
 * Note the scalar fields of the message in [@at, @end) of @m, descending
 * into length-delimited fields that parse as messages themselves (strings
 * and raw tensor data do not, as a rule). False when the range is not a
 * message; the leaves noted for it are dropped then.
 */
static bool walk(struct model *m, size_t at, size_t end, int depth)
{
	size_t first = m->num_leaves;

	while (at < end) {
		uint64_t key, v;
		size_t start;

		if (!get_varint(m->data, end, &at, &key) || (key >> 3) == 0)
			goto not_message;
		start = at;
		switch (key & 7) {
		case 0:
			if (!get_varint(m->data, end, &at, &v))
				goto not_message;
			break;
		case 1:
		case 5:
			at += (key & 7) == 1 ? 8 : 4;
			if (at > end)
				goto not_message;
			break;
		case 2:
			if (!get_varint(m->data, end, &at, &v) || v > end - at)
				goto not_message;
			if (depth < 16 && v)
				walk(m, at, at + v, depth + 1);
			at += v;
			continue;
		default:
			goto not_message;
		}
		if (m->num_leaves == m->cap_leaves) {
			size_t cap = m->cap_leaves ? 2 * m->cap_leaves : 64;
			struct leaf *l = realloc(m->leaves, cap * sizeof(*l));

			if (!l)
				goto not_message;
			m->leaves = l;
			m->cap_leaves = cap;
		}
		m->leaves[m->num_leaves++] = (struct leaf){
			.pos = (uint32_t)start, .len = (uint32_t)(at - start), .varint = !(key & 7),
		};
	}
	return true;
not_message:
	m->num_leaves = first;
	return false;
}

enum mutation {
	MUT_FIELD, MUT_FIELD2,
	MUT_TRUNCATE, MUT_FLIP, MUT_BYTE, MUT_VARINT, MUT_DELETE, MUT_DUPLICATE, MUT_INSERT,
	MUT_SEVERAL,
	/* blobs only: an aligned 32- or 64-bit word gets a value from a list */
	MUT_WORD32, MUT_WORD64, NUM_MUT,
};
#define NUM_ONNX_MUT MUT_WORD32

static const char *const mut_names[NUM_MUT] = {
	"field", "field2", "truncate", "flip", "byte", "varint", "delete", "duplicate", "insert", "several",
	"word32", "word64",
};

/* Bytes a protobuf reader finds interesting: lengths, tags, varint ends. */
static unsigned char special_byte(void)
{
	static const unsigned char b[] = { 0x00, 0x01, 0x7f, 0x80, 0xff, 0x08, 0x0a, 0x12,
					   0x1a, 0x22, 0x3a, 0x40, 0x42, 0x4a, 0x52, 0xfe };

	return rnd() & 1 ? b[rnd_below(sizeof(b))] : (unsigned char)rnd();
}

/* A new value for @l in place, the encoding's length kept: dimensions,
 * attribute values, types, counts and floats the readers must check. */
static void mutate_leaf(unsigned char *p, const struct leaf *l)
{
	static const uint8_t small[] = { 0, 1, 2, 3, 4, 7, 8, 15, 16, 17, 63, 64, 100, 127 };
	static const uint32_t f32[] = { 0x00000000, 0x80000000, 0x3f800000, 0xbf800000, 0x7f800000,
					0xff800000, 0x7fc00000, 0x7f7fffff, 0x00000001, 0x4f000000 };

	if (!l->varint) {
		if (l->len == 4 && rnd() & 1) {
			uint32_t v = f32[rnd_below(sizeof(f32) / sizeof(f32[0]))];

			memcpy(p + l->pos, &v, 4);
		} else {
			p[l->pos + rnd_below(l->len)] = (unsigned char)rnd();
		}
		return;
	}
	if (l->len == 1) {
		p[l->pos] = rnd() & 1 ? small[rnd_below(sizeof(small))] : (unsigned char)(rnd() & 0x7f);
		return;
	}
	/* continuation bits kept: the same length, any value (the top bytes
	 * of a 10-byte one make it negative or not) */
	for (uint32_t i = 0; i < l->len; i++) {
		unsigned char b = rnd() & 3 ? p[l->pos + i] & 0x7f : (unsigned char)(rnd() & 0x7f);

		p[l->pos + i] = (unsigned char)(i + 1 < l->len ? b | 0x80 : b);
	}
}

/* Apply mutation @k of @src into @dst (room for src->size + 16 bytes);
 * returns the new size. */
static size_t mutate(enum mutation k, const struct model *src, unsigned char *dst)
{
	size_t n = src->size, at = rnd_below(n), len;

	memcpy(dst, src->data, n);
	switch (k) {
	case MUT_FIELD:
	case MUT_FIELD2:
		/* one scalar field (field2: two) gets another value */
		for (int i = k == MUT_FIELD ? 1 : 2; i > 0 && src->num_leaves; i--)
			mutate_leaf(dst, &src->leaves[rnd_below(src->num_leaves)]);
		return n;
	case MUT_TRUNCATE:
		return at;
	case MUT_FLIP:
		dst[at] ^= (unsigned char)(1u << rnd_below(8));
		return n;
	case MUT_BYTE:
		dst[at] = special_byte();
		return n;
	case MUT_VARINT:
		/* a run of continuation bytes: a huge length, tag or dimension */
		len = 1 + rnd_below(10);
		for (size_t i = 0; i < len && at + i < n; i++)
			dst[at + i] = i + 1 < len ? 0xff : (unsigned char)(rnd() & 0x7f);
		return n;
	case MUT_DELETE:
		len = 1 + rnd_below(16);
		if (len > n - at)
			len = n - at;
		memmove(dst + at, dst + at + len, n - at - len);
		return n - len;
	case MUT_DUPLICATE:
		len = 1 + rnd_below(16);
		if (len > n - at)
			len = n - at;
		memmove(dst + at + len, dst + at, n - at);
		return n + len;
	case MUT_INSERT:
		len = 1 + rnd_below(16);
		memmove(dst + at + len, dst + at, n - at);
		for (size_t i = 0; i < len; i++)
			dst[at + i] = special_byte();
		return n + len;
	case MUT_SEVERAL:
		for (int i = 0; i < 4; i++)
			dst[rnd_below(n)] = special_byte();
		return n;
	case MUT_WORD32:
	case MUT_WORD64:
	case NUM_MUT:
		break;
	}
	return n;
}

/*
 * The blob format (libruntime/src/blob.c): a header of header_size bytes
 * (its u32 at byte 12) ending in props_size, program_size and checksum
 * (u64 each; the checksum is FNV-1a of the blob with it zero), then the
 * properties' text and the program.
 */
#define BLOB_HEADER_SIZE_AT 12

static uint64_t fnv1a(uint64_t h, const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static size_t blob_header_size(const unsigned char *blob)
{
	uint32_t hs;

	memcpy(&hs, blob + BLOB_HEADER_SIZE_AT, sizeof(hs));
	return hs;
}

/* Sizes and checksum of a blob of @size bytes whose program changed size. */
static void blob_reseal(unsigned char *blob, size_t size)
{
	size_t hs = blob_header_size(blob);
	uint64_t props, program, sum = 0;

	memcpy(&props, blob + hs - 24, sizeof(props));
	program = size - hs - props;
	memcpy(blob + hs - 16, &program, sizeof(program));
	memcpy(blob + hs - 8, &sum, sizeof(sum));
	sum = fnv1a(fnv1a(0xcbf29ce484222325ull, blob, hs), blob + hs, size - hs);
	memcpy(blob + hs - 8, &sum, sizeof(sum));
}

/*
 * Mutation @k of the blob @src into @dst (room for src->size + 16 bytes),
 * resealed; returns the new size. Words and bytes change anywhere past the
 * header; bytes are removed or added in the program only.
 */
static size_t mutate_blob(enum mutation k, const struct model *src, unsigned char *dst)
{
	static const uint32_t w32[] = { 0, 1, 2, 3, 7, 8, 9, 15, 16, 64, 0x7f, 0x80, 0xff, 0xffff,
					0x10000, 0x7fffffff, 0x80000000, 0xfffffff8, 0xffffffff };
	static const uint64_t w64[] = { 0, 1, 8, 64, 4096, 1ull << 31, 1ull << 32, 1ull << 40,
					1ull << 62, 1ull << 63, ~0ull, ~7ull };
	size_t hs = blob_header_size(src->data), props, first, n = src->size, at;
	struct model program;
	uint64_t v64;
	uint32_t v32;

	memcpy(&v64, src->data + hs - 24, sizeof(v64));
	props = (size_t)v64;
	first = k == MUT_FLIP || k == MUT_BYTE || k >= MUT_WORD32 ? hs : hs + props;
	memcpy(dst, src->data, n);
	switch (k) {
	case MUT_WORD32:
		at = first + rnd_below((n - first) / 4) * 4;
		v32 = rnd() & 3 ? w32[rnd_below(sizeof(w32) / sizeof(w32[0]))] : (uint32_t)rnd();
		memcpy(dst + at, &v32, sizeof(v32));
		break;
	case MUT_WORD64:
		at = first + rnd_below((n - first) / 8) * 8;
		v64 = rnd() & 3 ? w64[rnd_below(sizeof(w64) / sizeof(w64[0]))] : rnd() >> (rnd() & 63);
		memcpy(dst + at, &v64, sizeof(v64));
		break;
	default:
		/* the byte mutations, on the part past @first */
		program = (struct model){ .data = src->data + first, .size = n - first };
		n = first + mutate(k, &program, dst + first);
		break;
	}
	blob_reseal(dst, n);
	return n;
}

struct counts {
	unsigned long read_err, compile_err, import_err, run_err, ran;
	unsigned long per_kind[NUM_MUT];
};

/* Count a step that failed: 0, or -1 when it left no message. */
static int failed(unsigned long *counter, const char *step)
{
	(*counter)++;
	if (verbose)
		fprintf(stderr, "  %s: %s\n", step, vnpu_last_error());
	return vnpu_last_error()[0] ? 0 : -1;
}

/* Run @cm once and free it; as failed(). */
static int run_once(vnpu_compiled_model *cm, struct counts *c)
{
	vnpu_infer_request *req = NULL;
	vnpu_status st = vnpu_compiled_model_create_infer_request(cm, &req);

	if (!st)
		st = vnpu_infer_request_infer(req);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
	if (st)
		return failed(&c->run_err, "run");
	c->ran++;
	return 0;
}

/* One mutated model through read, compile and a run. 0, or -1 when a
 * failure left no message. */
static int try_model(vnpu_core *core, const unsigned char *data, size_t size, struct counts *c)
{
	vnpu_compiled_model *cm = NULL;
	vnpu_model *m = NULL;
	vnpu_status st;

	if (vnpu_core_read_model_from_memory(core, data, size, &m))
		return failed(&c->read_err, "read");
	st = vnpu_core_compile_model(core, m, device, NULL, &cm);
	vnpu_model_free(m);
	if (st)
		return failed(&c->compile_err, "compile");
	return run_once(cm, c);
}

/* One mutated blob through import and a run: as try_model(). */
static int try_blob(vnpu_core *core, const unsigned char *data, size_t size, struct counts *c)
{
	vnpu_compiled_model *cm = NULL;

	if (vnpu_core_import_model(core, data, size, device, &cm))
		return failed(&c->import_err, "import");
	return run_once(cm, c);
}

/* Replace the model's bytes by the blob of the model compiled for the device. */
static int to_blob(vnpu_core *core, struct model *md)
{
	vnpu_compiled_model *cm;
	vnpu_model *m;
	void *blob;
	size_t size;

	if (vnpu_core_read_model_from_memory(core, md->data, md->size, &m))
		return -1;
	if (vnpu_core_compile_model(core, m, device, NULL, &cm)) {
		vnpu_model_free(m);
		return -1;
	}
	vnpu_model_free(m);
	if (vnpu_compiled_model_export(cm, &blob, &size)) {
		vnpu_compiled_model_free(cm);
		return -1;
	}
	vnpu_compiled_model_free(cm);
	free(md->data);
	md->data = malloc(size);
	if (md->data)
		memcpy(md->data, blob, size);
	md->size = size;
	vnpu_free(blob);
	return md->data ? 0 : -1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The options, set by main() before the harness runs the test. */
static unsigned long iters = 5000, seed = 20261130;
static bool blobs;
static char **given_paths;
static size_t given;

TEST(mutations)
{
	unsigned long slowest_i = 0;
	struct model *models;
	const char **names;
	size_t num = 0;
	double t0, slowest = 0;
	struct counts c = { 0 };
	unsigned char *buf;
	size_t max_size = 0;
	vnpu_core *core;

	ASSERT_EQ(VNPU_OK, vnpu_core_create(&core));
	if (!has_device(core, device)) {
		vnpu_core_free(core);
		SKIP(return, "no %s device", device);
	}
	models = calloc(given ? given : NUM_CASES, sizeof(*models));
	names = calloc(given ? given : NUM_CASES, sizeof(*names));
	ASSERT_NE(NULL, models);
	ASSERT_NE(NULL, names);
	for (size_t i = 0; i < (given ? given : NUM_CASES); i++) {
		struct model *md = &models[num];
		char path[4096];
		vnpu_model *m;

		if (given)
			snprintf(path, sizeof(path), "%s", given_paths[i]);
		else
			snprintf(path, sizeof(path), NODE_DIR "%s/model.onnx", cases[i]);
		if (read_file(path, md)) {
			ASSERT_FALSE(given) TH_LOG("cannot read %s", path);
			SKIP(return, "%s is missing (libonnx-testdata)", cases[i]);
		}
		/* The models as they are must read (the built-in ones are the suite's). */
		if (vnpu_core_read_model_from_memory(core, md->data, md->size, &m)) {
			ASSERT_TRUE(given) TH_LOG("%s does not read: %s", path, vnpu_last_error());
			free(md->data);
			md->data = NULL;
			continue;
		}
		vnpu_model_free(m);
		/* Some need their inputs' values to compile (a Loop's trip count). */
		if (blobs && to_blob(core, md)) {
			if (verbose)
				TH_LOG("%s does not compile for %s: %s", path, device,
				       vnpu_last_error());
			free(md->data);
			md->data = NULL;
			continue;
		}
		if (!blobs)
			walk(md, 0, md->size, 0);
		if (md->size > max_size)
			max_size = md->size;
		names[num++] = given ? given_paths[i] : cases[i];
	}
	ASSERT_NE(0, num) TH_LOG("no model reads");
	buf = malloc(max_size + 16);
	ASSERT_NE(NULL, buf);
	rng_state = seed * 0x9e3779b97f4a7c15ull + 1;
	t0 = now();
	for (unsigned long i = 0; i < iters; i++) {
		size_t which = rnd_below(num), size;
		/* half of them keep the encoding valid and change a value */
		enum mutation k = (enum mutation)(rnd() & 1 ? (blobs ? MUT_WORD32 : 0) + rnd_below(2) :
					     blobs ? MUT_TRUNCATE + rnd_below(MUT_WORD32 - MUT_TRUNCATE) :
					     rnd_below(NUM_ONNX_MUT));
		double t1 = now(), dt;

		size = blobs ? mutate_blob(k, &models[which], buf) : mutate(k, &models[which], buf);
		if (verbose)
			TH_LOG("%lu: %s %s, %zu bytes", i, names[which], mut_names[k], size);
		c.per_kind[k]++;
		ASSERT_EQ(0, blobs ? try_blob(core, buf, size, &c) : try_model(core, buf, size, &c))
			TH_LOG("mutation %lu (seed %lu, %s of %s) failed without a message",
			       i, seed, mut_names[k], names[which]);
		dt = now() - t1;
		if (dt > slowest) {
			slowest = dt;
			slowest_i = i;
		}
	}
	if (blobs)
		TH_LOG("%lu mutations of %zu blobs (seed %lu) in %.2f s: %lu not imported, "
		       "%lu failed to run, %lu ran; slowest %.3f s (mutation %lu)",
		       iters, num, seed, now() - t0, c.import_err, c.run_err, c.ran, slowest,
		       slowest_i);
	else
		TH_LOG("%lu mutations of %zu models (seed %lu) in %.2f s: %lu not read, %lu not compiled, "
		       "%lu failed to run, %lu ran; slowest %.3f s (mutation %lu)",
		       iters, num, seed, now() - t0, c.read_err, c.compile_err, c.run_err, c.ran,
		       slowest, slowest_i);
	for (int k = 0; k < NUM_MUT; k++)
		if (c.per_kind[k])
			TH_LOG("  %-9s %lu", mut_names[k], c.per_kind[k]);
	vnpu_core_free(core);
	free(buf);
	for (size_t i = 0; i < num; i++) {
		free(models[i].data);
		free(models[i].leaves);
	}
	free(models);
	free(names);
}

KSFT_MAIN_ORDER

int main(int argc, char **argv)
{
	int opt;

	while ((opt = getopt(argc, argv, "bd:n:s:v")) != -1) {
		switch (opt) {
		case 'b':
			blobs = true;
			break;
		case 'd':
			device = optarg;
			break;
		case 'n':
			iters = strtoul(optarg, NULL, 0);
			break;
		case 's':
			seed = strtoul(optarg, NULL, 0);
			break;
		case 'v':
			verbose = true;
			break;
		default:
			fprintf(stderr,
				"usage: test-runtime-fuzz [-b] [-d DEVICE] [-n MUTATIONS] [-s SEED] [-v] [MODEL.onnx...]\n");
			return 2;
		}
	}
	given = (size_t)(argc - optind);
	given_paths = argv + optind;
	/* The arguments left are models, not test names. */
	return ksft_main_run(argc, argv, argc);
}

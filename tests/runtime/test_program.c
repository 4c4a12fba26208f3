// SPDX-License-Identifier: MIT
/*
 * The request pipeline, blobs and lifetimes over hand-built programs
 * (COPY and FILL streams), without the compiler: the runtime's half of
 * issue 5 on its own. Links the library's objects to build the programs;
 * everything after that goes through the public API.
 */
#include <pthread.h>
#include <unistd.h>

#include "blob.h"
#include "runtime_test.h"
#include "runtime.h"
#include <drm/vnpu_cmd.h>

#define N 6	/* elements of x and y: f32[2,3] */

static struct vnpu_cmd_tensor view(uint32_t slot, uint64_t offset, uint64_t elems)
{
	struct vnpu_cmd_tensor t = { .slot = slot, .dtype = VNPU_DTYPE_F32,
				     .offset = offset, .rank = 1 };

	t.dims[0] = elems;
	t.strides[0] = 1;
	return t;
}

static void put_copy(struct vnpu_cmd_copy *c, struct vnpu_cmd_tensor dst,
		     struct vnpu_cmd_tensor src)
{
	memset(c, 0, sizeof(*c));
	c->hdr.opcode = VNPU_CMD_COPY;
	c->hdr.size = sizeof(*c);
	c->dst = dst;
	c->src = src;
}

static char *dup_str(const char *s)
{
	return strcpy(malloc(strlen(s) + 1), s);
}

/*
 * y = x (through the arena, the second copy in segment 1 on @second),
 * c = the weights {1, 2, 3, 4}; plus a layer folded away (no commands).
 */
static struct vnpu_program *copy_program(enum vnpu_prog_target second)
{
	static const float weights[4] = { 1, 2, 3, 4 };
	struct vnpu_program *p = calloc(1, sizeof(*p));
	struct vnpu_cmd_copy *s0 = calloc(2, sizeof(*s0)), *s1 = calloc(1, sizeof(*s1));
	const vnpu_shape xs = { 2, { 2, 3 } }, cs = { 1, { 4 } };

	p->weights = vnpu_program_weights_alloc(sizeof(weights));
	memcpy(p->weights, weights, sizeof(weights));
	p->weights_size = sizeof(weights);
	p->arena_size = N * 4;
	p->intermediates_size = N * 4;
	p->num_inputs = 1;
	p->num_outputs = 2;
	p->inputs = calloc(1, sizeof(*p->inputs));
	p->outputs = calloc(2, sizeof(*p->outputs));
	p->inputs[0] = (struct vnpu_prog_port){ dup_str("x"), VNPU_TYPE_F32, xs, 2, N * 4 };
	p->outputs[0] = (struct vnpu_prog_port){ dup_str("y"), VNPU_TYPE_F32, xs, 3, N * 4 };
	p->outputs[1] = (struct vnpu_prog_port){ dup_str("c"), VNPU_TYPE_F32, cs, 4, 16 };

	put_copy(&s0[0], view(1, 0, N), view(2, 0, N));
	put_copy(&s0[1], view(4, 0, 4), view(0, 0, 4));
	put_copy(&s1[0], view(3, 0, N), view(1, 0, N));
	p->num_segments = 2;
	p->segments = calloc(2, sizeof(*p->segments));
	p->segments[0] = (struct vnpu_prog_segment){ VNPU_TARGET_PRIMARY, s0,
						     2 * sizeof(*s0), 2, 0, 2 };
	p->segments[1] = (struct vnpu_prog_segment){ second, s1, sizeof(*s1), 1, 2, 2 };
	p->num_layers = 4;
	p->layers = calloc(4, sizeof(*p->layers));
	p->layers[0] = (struct vnpu_prog_layer){ dup_str("in"), dup_str("Copy"), 0, 0, 1 };
	p->layers[1] = (struct vnpu_prog_layer){ dup_str("const"), dup_str("Constant"), 0, 1, 1 };
	p->layers[2] = (struct vnpu_prog_layer){ dup_str("out"), dup_str("Copy"), 1, 0, 1 };
	p->layers[3] = (struct vnpu_prog_layer){ dup_str("gone"), dup_str("Identity"), 1, 1, 0 };
	return p;
}

/* Compile the copy program for @device (its second segment on the CPU). */
static vnpu_status compile_copy(vnpu_core *core, const char *device, bool profiling,
				bool hetero, vnpu_compiled_model **out)
{
	struct vnpu_core_device *d = vnpu_core_find_device(core, device);
	struct vnpu_config cfg = { .profiling = profiling, .precision = VNPU_TYPE_F32 };
	char name[80];

	if (!d)
		return VNPU_NOT_FOUND;
	snprintf(name, sizeof(name), hetero ? "HETERO:%s,CPU" : "%s", device);
	return vnpu_compiled_model_new(core, d, hetero ? core->cpu : NULL, name, &cfg,
				       copy_program(hetero ? VNPU_TARGET_FALLBACK :
						    VNPU_TARGET_PRIMARY), out);
}

static int check_floats(struct __test_metadata *_metadata, vnpu_tensor *t, const float *want,
			uint32_t n)
{
	float *data;
	uint32_t i;

	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(t, (void **)&data));
	for (i = 0; i < n; i++) {
		if (data[i] != want[i]) {
			TH_LOG("element %u is %g, want %g", i, data[i], want[i]);
			return 1;
		}
	}
	return 0;
}

static const float weights_want[4] = { 1, 2, 3, 4 };

/* Write x into the request's own tensor, run, read y and c. */
static int run_zero_copy(struct __test_metadata *_metadata, vnpu_infer_request *req, float base)
{
	float x[N], *data;
	vnpu_tensor *t;
	int i, ret;

	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_tensor(req, "x", &t));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(t, (void **)&data));
	for (i = 0; i < N; i++)
		data[i] = x[i] = base + (float)i;
	vnpu_tensor_free(t);
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_infer(req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_output_tensor(req, 0, &t));
	ret = check_floats(_metadata, t, x, N);
	vnpu_tensor_free(t);
	ASSERT_TRUE(!ret);
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_tensor(req, "c", &t));
	ret = check_floats(_metadata, t, weights_want, 4);
	vnpu_tensor_free(t);
	return ret;
}

TEST_F(dev, pipeline_zero_copy)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	int hetero;

	for (hetero = 0; hetero < 2; hetero++) {
		ASSERT_EQ(VNPU_OK, compile_copy(core, device, false, hetero, &cm));
		ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
		ASSERT_EQ(0, run_zero_copy(_metadata, req, 10));
		ASSERT_EQ(0, run_zero_copy(_metadata, req, -3));
		vnpu_infer_request_free(req);
		vnpu_compiled_model_free(cm);
	}
}

/* i32 in, f16 and i64 out: converted in pre- and postprocess. */
TEST_F(dev, pipeline_convert)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	int32_t x[N] = { -2, 0, 1, 7, 100, 65504 };
	const vnpu_shape xs = { 2, { 2, 3 } }, cs = { 1, { 4 } };
	uint16_t y[N];
	int64_t c[4];
	static const uint16_t y_want[N] = { 0xc000, 0, 0x3c00, 0x4700, 0x5640, 0x7bff };
	vnpu_tensor *tx, *ty, *tc, *got;
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	int i;

	ASSERT_EQ(VNPU_OK, compile_copy(core, device, false, false, &cm));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_create_from_ptr(VNPU_TYPE_I32, &xs, x, &tx));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_create_from_ptr(VNPU_TYPE_F16, &xs, y, &ty));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_create_from_ptr(VNPU_TYPE_I64, &cs, c, &tc));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_tensor(req, "x", tx));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_output_tensor(req, 0, ty));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_set_tensor(req, "c", tc));
	/* set then get: the same tensor */
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_tensor(req, "x", &got));
	ASSERT_EQ(tx, got);
	vnpu_tensor_free(got);
	vnpu_tensor_free(tx);
	vnpu_tensor_free(ty);
	vnpu_tensor_free(tc);
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_infer(req));
	for (i = 0; i < N; i++) {
		ASSERT_EQ(y_want[i], y[i]);
	}
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(i + 1, c[i]);
	}
	/* infer does not modify inputs */
	ASSERT_TRUE(x[0] == -2 && x[5] == 65504);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
}

TEST_F(dev, set_tensor_bad)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	const vnpu_shape xs = { 2, { 2, 3 } }, wrong = { 2, { 3, 2 } };
	vnpu_tensor *own, *bad_shape, *bad_type, *t;
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	vnpu_port port;

	ASSERT_EQ(VNPU_OK, compile_copy(core, device, false, false, &cm));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_tensor(req, "x", &own));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_create(VNPU_TYPE_F32, &wrong, &bad_shape));
	ASSERT_EQ(VNPU_OK,
		  vnpu_tensor_create(VNPU_TYPE_STRING == 8 ? VNPU_TYPE_BOOL : VNPU_TYPE_F32, &xs,
				     &bad_type));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_infer_request_set_tensor(req, "x", bad_shape));
	ASSERT_FAILS(VNPU_NOT_FOUND, vnpu_infer_request_set_tensor(req, "nope", own));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_infer_request_set_tensor(req, NULL, own));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_infer_request_set_tensor(req, "x", NULL));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_infer_request_set_tensor(NULL, "x", own));
	ASSERT_FAILS(VNPU_NOT_FOUND, vnpu_infer_request_set_input_tensor(req, 1, own));
	ASSERT_FAILS(VNPU_NOT_FOUND, vnpu_infer_request_set_output_tensor(req, 2, own));
	ASSERT_FAILS(VNPU_NOT_FOUND, vnpu_infer_request_get_input_tensor(req, 1, &t));
	ASSERT_FAILS(VNPU_NOT_FOUND, vnpu_infer_request_get_output_tensor(req, 9, &t));
	ASSERT_FAILS(VNPU_NOT_FOUND, vnpu_infer_request_get_tensor(req, "", &t));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_infer_request_get_tensor(req, "x", NULL));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_get_input(cm, 0, &port));
	port.index = 5;
	ASSERT_FAILS(VNPU_NOT_FOUND, vnpu_infer_request_set_tensor_by_port(req, &port, own));
	ASSERT_FAILS(VNPU_NOT_FOUND, vnpu_infer_request_get_tensor_by_port(req, &port, &t));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_get_output(cm, 1, &port));
	port.name = "x";
	ASSERT_FAILS(VNPU_NOT_FOUND, vnpu_infer_request_get_tensor_by_port(req, &port, &t));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_infer_request_set_tensor_by_port(req, NULL, own));
	/* the failures changed nothing */
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_tensor(req, "x", &t));
	ASSERT_EQ(own, t);
	vnpu_tensor_free(t);
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_get_input(cm, 0, &port));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_tensor_by_port(req, &port, &t));
	ASSERT_EQ(own, t);
	vnpu_tensor_free(t);
	ASSERT_EQ(0, run_zero_copy(_metadata, req, 1));
	vnpu_tensor_free(bad_shape);
	vnpu_tensor_free(bad_type);
	vnpu_tensor_free(own);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
}

TEST_F(dev, profiling)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	vnpu_profiling_info *info;
	const vnpu_profiling_entry *e;
	int hetero;

	for (hetero = 0; hetero < 2; hetero++) {
		ASSERT_EQ(VNPU_OK, compile_copy(core, device, true, hetero, &cm));
		ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
		ASSERT_FAILS(VNPU_NOT_READY, vnpu_infer_request_get_profiling_info(req, &info));
		ASSERT_EQ(0, run_zero_copy(_metadata, req, 2));
		ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
			     vnpu_infer_request_get_profiling_info(req, NULL));
		ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_profiling_info(req, &info));
		ASSERT_EQ(6 + 4, info->count);
		e = info->entries;
		ASSERT_TRUE(!strcmp(e[0].name, "preprocess") && !strcmp(e[0].node_type, "Stage"));
		ASSERT_TRUE(!strcmp(e[3].name, "wait") && e[3].real_time_ns > 0);
		ASSERT_TRUE(!strcmp(e[6].name, "in") && !strcmp(e[6].node_type, "Copy"));
		ASSERT_TRUE(!strcmp(e[6].exec_type, device) || !strcmp(device, "NPU"));
		ASSERT_TRUE(e[6].status == VNPU_PROFILING_EXECUTED && e[6].real_time_ns > 0);
		ASSERT_STREQ(hetero ? "CPU" : e[6].exec_type, e[8].exec_type);
		ASSERT_TRUE(e[9].status == VNPU_PROFILING_NOT_RUN && e[9].real_time_ns == 0);
		vnpu_profiling_info_free(info);
		vnpu_infer_request_free(req);
		vnpu_compiled_model_free(cm);
	}
	ASSERT_EQ(VNPU_OK, compile_copy(core, device, false, false, &cm));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	ASSERT_EQ(0, run_zero_copy(_metadata, req, 2));
	ASSERT_FAILS(VNPU_UNSUPPORTED, vnpu_infer_request_get_profiling_info(req, &info));
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
	vnpu_profiling_info_free(NULL);
}

TEST_F(dev, blob_round_trip)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	vnpu_compiled_model *cm, *cm2;
	vnpu_property_value *v;
	vnpu_infer_request *req;
	unsigned char *blob;
	char path[] = "/tmp/vnpu-blob-XXXXXX";
	size_t size, i;
	int fd;

	ASSERT_EQ(VNPU_OK, compile_copy(core, device, true, true, &cm));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_export(cm, (void **)&blob, &size));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_compiled_model_export(cm, NULL, &size));
	ASSERT_EQ(VNPU_OK, vnpu_core_import_model(core, blob, size, NULL, &cm2));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_get_property(cm2, VNPU_PROP_ENABLE_PROFILING, &v));
	ASSERT_EQ(1, v->integer);
	vnpu_property_value_free(v);
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_get_property(cm2, VNPU_PROP_EXECUTION_DEVICES, &v));
	ASSERT_TRUE(v->count == 2 && !strcmp(v->items[1], "CPU"));
	vnpu_property_value_free(v);
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm2, &req));
	ASSERT_EQ(0, run_zero_copy(_metadata, req, 5));
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm2);

	/* truncated, corrupted, another version, not a blob */
	ASSERT_FAILS(VNPU_PARSE_ERROR, vnpu_core_import_model(core, blob, size - 1, NULL, &cm2));
	ASSERT_FAILS(VNPU_PARSE_ERROR, vnpu_core_import_model(core, blob, 20, NULL, &cm2));
	ASSERT_FAILS(VNPU_PARSE_ERROR, vnpu_core_import_model(core, blob, 0, NULL, &cm2));
	blob[size - 5] ^= 0x10;
	ASSERT_FAILS(VNPU_PARSE_ERROR, vnpu_core_import_model(core, blob, size, NULL, &cm2));
	ASSERT_NE(NULL, strstr(vnpu_last_error(), "corrupt"));
	blob[size - 5] ^= 0x10;
	blob[16] = '9';		/* the library version */
	ASSERT_FAILS(VNPU_WRONG_VERSION, vnpu_core_import_model(core, blob, size, NULL, &cm2));
	blob[16] = '0';
	blob[0] = 'X';
	ASSERT_FAILS(VNPU_PARSE_ERROR, vnpu_core_import_model(core, blob, size, NULL, &cm2));
	blob[0] = 'V';
	ASSERT_FAILS(VNPU_NOT_FOUND, vnpu_core_import_model(core, blob, size, "nodev", &cm2));
	/* any single flipped bit anywhere is found */
	for (i = 0; i < size; i++) {
		blob[i] ^= 1u << (i % 8);
		ASSERT_NE(VNPU_OK, vnpu_core_import_model(core, blob, size, NULL, &cm2));
		blob[i] ^= 1u << (i % 8);
	}
	ASSERT_EQ(VNPU_OK, vnpu_core_import_model(core, blob, size, NULL, &cm2));
	vnpu_compiled_model_free(cm2);
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_core_import_model(NULL, blob, size, NULL, &cm2));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_core_import_model(core, NULL, size, NULL, &cm2));

	/* to a file and back */
	fd = mkstemp(path);
	ASSERT_GE(fd, 0);
	close(fd);
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_export_file(cm, path));
	ASSERT_EQ(VNPU_OK, vnpu_core_import_model_file(core, path, device, &cm2));
	vnpu_compiled_model_free(cm2);
	unlink(path);
	ASSERT_FAILS(VNPU_NOT_FOUND, vnpu_core_import_model_file(core, path, NULL, &cm2));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_core_import_model_file(core, "/", NULL, &cm2));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_compiled_model_export_file(cm, "/nonexistent/dir/blob"));
	vnpu_free(blob);
	vnpu_compiled_model_free(cm);
}

/*
 * The copy program in one segment (y = x through arena bytes 0, c = the
 * weights), with a second arena plan (program.h's own_cmd) of
 * @own_arena bytes: x to arena bytes 4096, y from bytes 8192, which
 * nothing writes. Not a plan a compiler makes: y says which stream ran
 * (zeros from a new arena for the own one).
 */
static struct vnpu_program *own_program(uint64_t own_arena)
{
	struct vnpu_program *p = copy_program(VNPU_TARGET_PRIMARY);
	struct vnpu_cmd_copy *s = calloc(3, sizeof(*s)), *own = calloc(3, sizeof(*own));

	put_copy(&s[0], view(1, 0, N), view(2, 0, N));
	put_copy(&s[1], view(4, 0, 4), view(0, 0, 4));
	put_copy(&s[2], view(3, 0, N), view(1, 0, N));
	put_copy(&own[0], view(1, 4096, N), view(2, 0, N));
	put_copy(&own[1], view(4, 0, 4), view(0, 0, 4));
	put_copy(&own[2], view(3, 0, N), view(1, 8192, N));
	free(p->segments[0].cmd);
	free(p->segments[1].cmd);
	p->num_segments = 1;
	p->segments[0] = (struct vnpu_prog_segment){ VNPU_TARGET_PRIMARY, s, 3 * sizeof(*s), 3,
						     0, 4 };
	p->layers[2].segment = 0;
	p->layers[2].first_cmd = 2;
	p->layers[3].segment = 0;
	p->layers[3].first_cmd = 3;
	p->own_cmd = own;
	p->own_cmd_size = 3 * sizeof(*own);
	p->own_arena_size = own_arena;
	return p;
}

/* Run a request of @cm on x = 1..N; 1 if y was x, 0 if zeros, -1 else. */
static int own_run(struct __test_metadata *_metadata, vnpu_compiled_model *cm)
{
	static const float zeros[N];
	vnpu_infer_request *req;
	float x[N], *data;
	vnpu_tensor *t;
	int i, ret = -1;

	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_tensor(req, "x", &t));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(t, (void **)&data));
	for (i = 0; i < N; i++)
		data[i] = x[i] = 1 + (float)i;
	vnpu_tensor_free(t);
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_infer(req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_output_tensor(req, 0, &t));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(t, (void **)&data));
	if (!memcmp(data, x, sizeof(x)))
		ret = 1;
	else if (!memcmp(data, zeros, sizeof(zeros)))
		ret = 0;
	vnpu_tensor_free(t);
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_tensor(req, "c", &t));
	EXPECT_EQ(0, check_floats(_metadata, t, weights_want, 4));
	vnpu_tensor_free(t);
	vnpu_infer_request_free(req);
	return ret;
}

/*
 * The CPU device's second arena plan: VNPU_DEBUG_CPU_PLAN runs either
 * stream; an export carries it; one that does not fit its arena, or whose
 * commands are not the program's, is refused at load. Other devices drop it.
 */
TEST_F(dev, own_arena_plan)
{
	struct vnpu_core_device *d = vnpu_core_find_device(self->core, self->device);
	struct vnpu_config cfg = { .precision = VNPU_TYPE_F32 };
	vnpu_compiled_model *cm, *cm2;
	struct vnpu_program *p;
	struct vnpu_cmd_copy *c;
	unsigned char *blob;
	size_t size;

	ASSERT_NE(NULL, d);
	/* Read when the device's threads start: in this test's process, now. */
	setenv("VNPU_DEBUG_CPU_PLAN", "own", 1);
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_new(self->core, d, NULL, self->device, &cfg,
						   own_program(8192 + N * 4), &cm));
	if (strcmp(self->device, "CPU")) {
		/* Dropped: the program runs its one plan. */
		EXPECT_EQ(1, own_run(_metadata, cm));
		vnpu_compiled_model_free(cm);
		return;
	}
	EXPECT_EQ(0, own_run(_metadata, cm));
	/* Exported and imported with it. */
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_export(cm, (void **)&blob, &size));
	ASSERT_EQ(VNPU_OK, vnpu_core_import_model(self->core, blob, size, NULL, &cm2));
	EXPECT_EQ(0, own_run(_metadata, cm2));
	vnpu_compiled_model_free(cm2);
	vnpu_free(blob);
	vnpu_compiled_model_free(cm);
	/* The arena too small for the second stream's offsets. */
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_compiled_model_new(self->core, d, NULL, self->device, &cfg,
					     own_program(8192), &cm));
	EXPECT_NE(NULL, strstr(vnpu_last_error(), "own-bytes arena plan"));
	/* Not the program's commands: a NOP for the first COPY. */
	p = own_program(8192 + N * 4);
	c = p->own_cmd;
	c[0].hdr.opcode = VNPU_CMD_NOP;
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_compiled_model_new(self->core, d, NULL, self->device, &cfg, p, &cm));
	EXPECT_NE(NULL, strstr(vnpu_last_error(), "own-bytes arena plan"));
}

/* Forced greedy, the two-plan program runs its first stream. */
TEST_F(dev, own_arena_plan_greedy)
{
	struct vnpu_core_device *d = vnpu_core_find_device(self->core, self->device);
	struct vnpu_config cfg = { .precision = VNPU_TYPE_F32 };
	vnpu_compiled_model *cm;

	ASSERT_NE(NULL, d);
	setenv("VNPU_DEBUG_CPU_PLAN", "greedy", 1);
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_new(self->core, d, NULL, self->device, &cfg,
						   own_program(8192 + N * 4), &cm));
	EXPECT_EQ(1, own_run(_metadata, cm));
	vnpu_compiled_model_free(cm);
}

/* A blob of one architecture does not import on another. */
TEST_F(dev, blob_other_device)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	vnpu_compiled_model *cm, *cm2;
	const char *other = strcmp(device, "CPU") ? "CPU" : NULL;
	char **devices;
	uint32_t n, i;
	size_t size;
	void *blob;

	ASSERT_EQ(VNPU_OK, vnpu_core_get_available_devices(core, &devices, &n));
	for (i = 0; i < n && !other; i++) {
		if (strcmp(devices[i], "CPU"))
			other = devices[i];
	}
	if (other) {
		ASSERT_EQ(VNPU_OK, compile_copy(core, device, false, false, &cm));
		ASSERT_EQ(VNPU_OK, vnpu_compiled_model_export(cm, &blob, &size));
		ASSERT_FAILS(VNPU_WRONG_VERSION,
			     vnpu_core_import_model(core, blob, size, other, &cm2));
		vnpu_free(blob);
		vnpu_compiled_model_free(cm);
	}
	vnpu_free(devices);
}

/* A blob header as an older library or another device would have written it. */
struct arch_case {
	uint32_t format;
	const char *architecture;
	uint32_t uapi_version;		/* major << 16 */
	bool imports;
};

/* On the NPU of command set 3, whatever its uAPI: older sets' blobs are refused. */
static const struct arch_case npu_cases[] = {
	{ 2, "vnpu-npu-1", 1u << 16, false },	/* uAPI 1: command set 1 */
	{ 2, "vnpu-npu-2", 2u << 16, false },	/* uAPI 2: command set 1 too */
	{ 3, "vnpu-npu-1", 2u << 16, false },	/* command set 1 */
	{ 3, "vnpu-npu-2", 2u << 16, false },	/* command set 2 */
	{ 3, "vnpu-npu-3", 7u << 16, true },	/* a uAPI this driver is not */
	{ 3, "vnpu-npu-4", 2u << 16, false },
	{ 3, "vnpu-npu-99", 2u << 16, false },
	{ 2, "vnpu-npu-99", 2u << 16, false },
	{ 3, "vnpu-cpu", 0, false },
};

/* On the CPU, which has no uAPI: the NPU's names are never its own. */
static const struct arch_case cpu_cases[] = {
	{ 2, "vnpu-cpu", 0, true },
	{ 3, "vnpu-cpu", 2u << 16, true },
	{ 3, "vnpu-npu-1", 2u << 16, false },
	{ 3, "vnpu-npu-99", 2u << 16, false },
};

/* @blob (@size bytes) with its header rewritten as @c says, resealed. */
static void rewrite_header(unsigned char *blob, size_t size, const struct arch_case *c)
{
	struct vnpu_blob_header h;

	memcpy(&h, blob, sizeof(h));
	h.format = c->format;
	memset(h.architecture, 0, sizeof(h.architecture));
	snprintf(h.architecture, sizeof(h.architecture), "%s", c->architecture);
	h.uapi_version = c->uapi_version;
	memcpy(blob, &h, sizeof(h));
	vnpu_blob_seal(blob, size);
}

/* Import the blob of @c and run it, or see it refused naming both architectures. */
static int import_as(struct __test_metadata *_metadata, vnpu_core *core, unsigned char *blob,
		     size_t size,
		     const struct arch_case *c, const char *device_arch)
{
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;

	rewrite_header(blob, size, c);
	if (!c->imports) {
		ASSERT_FAILS(VNPU_WRONG_VERSION,
			     vnpu_core_import_model(core, blob, size, NULL, &cm));
		ASSERT_NE(NULL, strstr(vnpu_last_error(), c->architecture));
		ASSERT_NE(NULL, strstr(vnpu_last_error(), device_arch));
		return 0;
	}
	ASSERT_EQ(VNPU_OK, vnpu_core_import_model(core, blob, size, NULL, &cm));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	ASSERT_EQ(0, run_zero_copy(_metadata, req, 7));
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
	return 0;
}

/*
 * A blob runs on a device of its architecture, which names the NPU's
 * command set (VNPU_CMD_SET_VERSION), not its driver's uAPI version: a
 * newer driver with the same commands keeps every exported blob.
 */
TEST_F(dev, blob_architecture)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	bool npu = !strncmp(device, "NPU", 3);
	const struct arch_case *cases = npu ? npu_cases : cpu_cases;
	size_t num = npu ? sizeof(npu_cases) / sizeof(npu_cases[0]) :
		     sizeof(cpu_cases) / sizeof(cpu_cases[0]);
	struct vnpu_blob_header h = { .format = 2, .architecture = "vnpu-npu-2" };
	const struct arch_case uapi2_era = { 2, "vnpu-npu-2", 2u << 16, false };
	const struct arch_case other_format[] = {
		{ VNPU_BLOB_FORMAT_OLDEST - 1, "vnpu-cpu", 0, false },
		{ VNPU_BLOB_FORMAT + 1, "vnpu-cpu", 0, false },
	};
	char want[64], *arch;
	vnpu_compiled_model *cm;
	vnpu_property_value *v;
	unsigned char *blob;
	size_t size, i;

	/* the one alias, and only in the format that wrote it */
	ASSERT_STREQ("vnpu-npu-1", vnpu_blob_architecture(&h));
	h.format = 3;
	ASSERT_STREQ("vnpu-npu-2", vnpu_blob_architecture(&h));

	ASSERT_EQ(VNPU_OK, vnpu_core_get_property(core, device, VNPU_PROP_DEVICE_ARCHITECTURE, &v));
	arch = strcpy(malloc(strlen(v->text) + 1), v->text);
	vnpu_property_value_free(v);
	snprintf(want, sizeof(want), "vnpu-npu-%d", VNPU_CMD_SET_VERSION);
	ASSERT_STREQ(npu ? want : "vnpu-cpu", arch);

	ASSERT_EQ(VNPU_OK, compile_copy(core, device, false, false, &cm));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_export(cm, (void **)&blob, &size));
	vnpu_compiled_model_free(cm);
	for (i = 0; i < num; i++) {
		ASSERT_FALSE(import_as(_metadata, core, blob, size, &cases[i], arch))
			TH_LOG("case %zu: format %u, %s", i, cases[i].format,
			       cases[i].architecture);
	}
	/* the CPU refuses the NPU's old name, saying what it stands for */
	if (!npu) {
		ASSERT_EQ(0, import_as(_metadata, core, blob, size, &uapi2_era, arch));
		ASSERT_NE(NULL, strstr(vnpu_last_error(), "now named vnpu-npu-1"));
	}
	for (i = 0; i < 2; i++) {
		rewrite_header(blob, size, &other_format[i]);
		ASSERT_FAILS(VNPU_WRONG_VERSION,
			     vnpu_core_import_model(core, blob, size, NULL, &cm));
	}
	vnpu_free(blob);
	free(arch);
}

struct thread_arg {
	vnpu_compiled_model *cm;
	float base;
	int failed;
};

static void *thread_main(void *p)
{
	struct thread_arg *a = p;
	vnpu_infer_request *req;
	int i;
	RUNTIME_THREAD_METADATA(a->failed = 1);

	if (vnpu_compiled_model_create_infer_request(a->cm, &req) != VNPU_OK) {
		a->failed = 1;
		return NULL;
	}
	for (i = 0; i < 50 && !a->failed; i++)
		a->failed = run_zero_copy(_metadata, req, a->base + (float)i);
	vnpu_infer_request_free(req);
	return NULL;
}

/* 3 threads, each its own request of one compiled model. */
TEST_F(dev, three_threads)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	struct thread_arg args[3];
	pthread_t threads[3];
	vnpu_compiled_model *cm;
	int i;

	ASSERT_EQ(VNPU_OK, compile_copy(core, device, true, true, &cm));
	for (i = 0; i < 3; i++) {
		args[i] = (struct thread_arg){ cm, (float)(i * 1000), 0 };
		ASSERT_EQ(0, pthread_create(&threads[i], NULL, thread_main, &args[i]));
	}
	for (i = 0; i < 3; i++) {
		pthread_join(threads[i], NULL);
		ASSERT_TRUE(!args[i].failed);
	}
	vnpu_compiled_model_free(cm);
}

/* Free core, compiled model, request (and a tensor) in all 6 orders. */
TEST_F(dev, lifetime_orders)
{
	const char *device = self->device;
	static const int orders[6][3] = {
		{ 0, 1, 2 }, { 0, 2, 1 }, { 1, 0, 2 }, { 1, 2, 0 }, { 2, 0, 1 }, { 2, 1, 0 },
	};
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	vnpu_tensor *t;
	vnpu_core *core;
	float *data;
	int o, k;

	for (o = 0; o < 6; o++) {
		ASSERT_EQ(VNPU_OK, vnpu_core_create(&core));
		ASSERT_EQ(VNPU_OK, compile_copy(core, device, false, false, &cm));
		ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
		ASSERT_EQ(0, run_zero_copy(_metadata, req, 1));
		ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_output_tensor(req, 0, &t));
		for (k = 0; k < 3; k++) {
			switch (orders[o][k]) {
			case 0: vnpu_core_free(core); break;
			case 1: vnpu_compiled_model_free(cm); break;
			case 2: vnpu_infer_request_free(req); break;
			}
		}
		/* the request's tensor outlives everything */
		ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(t, (void **)&data));
		ASSERT_EQ(2, data[1]);
		vnpu_tensor_free(t);
	}
	vnpu_core_free(NULL);
	vnpu_compiled_model_free(NULL);
	vnpu_infer_request_free(NULL);
	vnpu_tensor_free(NULL);
}

TEST_F(dev, compiled_model_ports)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	vnpu_compiled_model *cm;
	vnpu_property_value *v;
	uint32_t n;
	vnpu_port port;

	ASSERT_EQ(VNPU_OK, compile_copy(core, device, false, false, &cm));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_get_num_inputs(cm, &n));
	ASSERT_EQ(1, n);
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_get_num_outputs(cm, &n));
	ASSERT_EQ(2, n);
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_get_input(cm, 0, &port));
	ASSERT_TRUE(!strcmp(port.name, "x") && port.type == VNPU_TYPE_F32 && port.shape.rank == 2
		    && port.shape.dims[1] == 3 && !port.is_output);
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_get_port_by_name(cm, "c", &port));
	ASSERT_TRUE(port.is_output && port.index == 1 && port.shape.dims[0] == 4);
	ASSERT_FAILS(VNPU_NOT_FOUND, vnpu_compiled_model_get_port_by_name(cm, "z", &port));
	ASSERT_FAILS(VNPU_NOT_FOUND, vnpu_compiled_model_get_input(cm, 1, &port));
	ASSERT_FAILS(VNPU_NOT_FOUND, vnpu_compiled_model_get_output(cm, 2, &port));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_compiled_model_get_output(NULL, 0, &port));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_compiled_model_get_num_inputs(cm, NULL));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_compiled_model_get_num_outputs(NULL, &n));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_compiled_model_get_port_by_name(cm, NULL, &port));

	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_get_property(cm, VNPU_PROP_SUPPORTED_PROPERTIES,
							    &v));
	ASSERT_GT(v->count, 5);
	for (n = 0; n < v->count; n++) {
		vnpu_property_value *w;

		ASSERT_TRUE(!v->writable || !v->writable[n]);
		ASSERT_EQ(VNPU_OK, vnpu_compiled_model_get_property(cm, v->items[n], &w));
		ASSERT_NE(NULL, w->text);
		vnpu_property_value_free(w);
	}
	vnpu_property_value_free(v);
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_get_property(cm, VNPU_PROP_ARENA_SIZE, &v));
	ASSERT_EQ(N * 4, v->integer);
	vnpu_property_value_free(v);
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_get_property(cm, VNPU_PROP_LOADED_FROM_CACHE, &v));
	ASSERT_TRUE(v->integer == 0 && !strcmp(v->text, "NO"));
	vnpu_property_value_free(v);
	ASSERT_FAILS(VNPU_NOT_FOUND, vnpu_compiled_model_get_property(cm, "NOPE", &v));
	ASSERT_FAILS(VNPU_NOT_FOUND,
		     vnpu_compiled_model_get_property(cm, VNPU_PROP_FULL_DEVICE_NAME, &v));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_compiled_model_get_property(cm, NULL, &v));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_compiled_model_create_infer_request(cm, NULL));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_compiled_model_create_infer_request(NULL, NULL));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_infer_request_infer(NULL));
	vnpu_compiled_model_free(cm);
}

/* Precision conversion edge cases (the blobCopy of preprocess/postprocess). */
TEST_F(dev, conversions)
{
	const char *device = self->device;
	static const float f[] = { 0.0f, -0.0f, 1.0f, -2.5f, 65504.0f, 65520.0f, 1e-8f,
				   6.103515625e-5f, 3.0e-7f, 1.0f / 0.0f, 300.7f, -129.5f };
	static const uint16_t h_want[] = { 0x0000, 0x8000, 0x3c00, 0xc100, 0x7bff, 0x7c00,
					   0x0000, 0x0400, 0x0005, 0x7c00, 0x5cb3, 0xd80c };
	const uint32_t n = sizeof(f) / sizeof(f[0]);
	uint16_t h[sizeof(f) / sizeof(f[0])];
	float back[sizeof(f) / sizeof(f[0])], nan = 0.0f / 0.0f;
	uint8_t u8[4];
	int8_t i8[4];
	int64_t i64[4];
	double d;
	uint32_t i;

	if (strcmp(device, "CPU"))
		return;	/* host code: once is enough */
	vnpu_convert(h, VNPU_TYPE_F16, f, VNPU_TYPE_F32, n);
	for (i = 0; i < n; i++) {
		if (h[i] != h_want[i])
			TH_LOG("f16 of %g: 0x%04x, want 0x%04x", f[i], h[i], h_want[i]);
		ASSERT_EQ(h_want[i], h[i]);
	}
	vnpu_convert(back, VNPU_TYPE_F32, h, VNPU_TYPE_F16, n);
	ASSERT_TRUE(back[2] == 1.0f && back[3] == -2.5f && back[4] == 65504.0f);
	ASSERT_TRUE(back[7] == 6103515625e-14f && back[8] == 2.98023223876953125e-7f);
	vnpu_convert(h, VNPU_TYPE_F16, &nan, VNPU_TYPE_F32, 1);
	ASSERT_TRUE((h[0] & 0x7c00) == 0x7c00 && (h[0] & 0x3ff));
	/* floats to integers: round to nearest, saturate, NaN to 0 */
	vnpu_convert(u8, VNPU_TYPE_U8, &f[9], VNPU_TYPE_F32, 3);
	ASSERT_TRUE(u8[0] == 255 && u8[1] == 255 && u8[2] == 0);
	vnpu_convert(i8, VNPU_TYPE_I8, &f[10], VNPU_TYPE_F32, 2);
	ASSERT_TRUE(i8[0] == 127 && i8[1] == -128);
	vnpu_convert(i64, VNPU_TYPE_I64, &nan, VNPU_TYPE_F32, 1);
	ASSERT_EQ(0, i64[0]);
	vnpu_convert(i64, VNPU_TYPE_I64, &f[3], VNPU_TYPE_F32, 1);
	ASSERT_EQ(-2, i64[0]);	/* -2.5 to even */
	/* integers to integers saturate; to floats exactly when they fit */
	i64[0] = -5;
	i64[1] = 1000;
	i64[2] = INT64_MAX;
	vnpu_convert(u8, VNPU_TYPE_U8, i64, VNPU_TYPE_I64, 3);
	ASSERT_TRUE(u8[0] == 0 && u8[1] == 255 && u8[2] == 255);
	vnpu_convert(&d, VNPU_TYPE_F64, &i64[1], VNPU_TYPE_I64, 1);
	ASSERT_EQ(1000.0, d);
	ASSERT_TRUE(vnpu_convert_supported(VNPU_TYPE_U8, VNPU_TYPE_F16));
	ASSERT_EQ(0, vnpu_convert_supported(VNPU_TYPE_STRING, VNPU_TYPE_F32));
	ASSERT_EQ(0, vnpu_convert_supported(VNPU_TYPE_F32, VNPU_TYPE_UNDEFINED));
}

/* A job that never ends: the NPU times it out, resets, and runs the next. */
TEST_F(dev, device_timeout)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	struct vnpu_core_device *d = vnpu_core_find_device(core, device);
	struct vnpu_config cfg = { .precision = VNPU_TYPE_F32 };
	struct vnpu_program *p;
	struct vnpu_cmd_header *spin;
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;

	if (strncmp(device, "NPU", 3))
		return;	/* the CPU has no timeout: SPIN runs until cancelled */
	ASSERT_NE(NULL, d);
	p = copy_program(VNPU_TARGET_PRIMARY);
	spin = calloc(1, 8);
	spin->opcode = VNPU_CMD_SPIN;
	spin->size = 8;
	free(p->segments[1].cmd);
	p->segments[1].cmd = spin;
	p->segments[1].cmd_size = 8;
	p->segments[1].num_cmds = 1;
	p->layers[2].num_cmds = 1;
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_new(core, d, NULL, device, &cfg, p, &cm));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	ASSERT_FAILS(VNPU_TIMEOUT, vnpu_infer_request_infer(req));
	ASSERT_NE(NULL, strstr(vnpu_last_error(), "reset"));
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);

	ASSERT_EQ(VNPU_OK, compile_copy(core, device, false, false, &cm));
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	ASSERT_EQ(0, run_zero_copy(_metadata, req, 4));
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
}

RUNTIME_TEST_MAIN

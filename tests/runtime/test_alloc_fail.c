// SPDX-License-Identifier: MIT
/*
 * Out of memory at every allocation: reading, compiling and running node
 * suite models while the Nth allocation of the process fails, for each N
 * the run makes (a sample of them when it makes many). Each call returns
 * OK or a status with a message; none crashes, none reads a value the
 * failed call never made, and a run that ends OK gives the same output
 * as with memory to spare, as does the next run, with memory back.
 *
 * The test defines malloc, calloc and realloc: an executable's own
 * definitions take the place of libc's for every library of the process
 * (libvnpu and its plugins too). Memory from them is libc's, so libc's
 * free() frees it.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime_test.h"

void *__libc_malloc(size_t size);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t size);

#define NODE_DIR "/usr/share/libonnx-testdata/data/node"
/* Runs per case at most: each failure point, or an even sample of them. */
#define MAX_RUNS 300

/*
 * Allocations counted since counting started, on every thread (an async
 * run's executors and completion threads allocate too, so which one is
 * the Nth may change from run to run); the one to fail (0: none).
 */
static atomic_ulong allocs;
static unsigned long fail_at;
static atomic_int counting;

static int fail_now(void)
{
	if (!atomic_load(&counting))
		return 0;
	return atomic_fetch_add(&allocs, 1) + 1 == fail_at;
}

void *malloc(size_t size)
{
	if (fail_now()) {
		errno = ENOMEM;
		return NULL;
	}
	return __libc_malloc(size);
}

void *calloc(size_t n, size_t size)
{
	if (fail_now()) {
		errno = ENOMEM;
		return NULL;
	}
	return __libc_calloc(n, size);
}

void *realloc(void *p, size_t size)
{
	if (fail_now()) {
		errno = ENOMEM;
		return NULL;
	}
	return __libc_realloc(p, size);
}

/* A run's first output, kept in memory the failures do not touch. */
struct output {
	void *data;
	uint64_t bytes;
};

/*
 * Element @j of @n at @data: floats from a pattern (@f: all that value
 * instead), integers 1. False for a type this test does not fill.
 */
static bool set_elem(void *data, vnpu_element_type type, uint64_t j, const float *f)
{
	float v = f ? *f : (float)((j * 7) % 11) / 4.0f - 1.0f;

	switch (type) {
	case VNPU_TYPE_F32:
		((float *)data)[j] = v;
		return true;
	case VNPU_TYPE_F64:
		((double *)data)[j] = v;
		return true;
	case VNPU_TYPE_I64:
	case VNPU_TYPE_U64:
		((int64_t *)data)[j] = 1;
		return true;
	case VNPU_TYPE_I32:
	case VNPU_TYPE_U32:
		((int32_t *)data)[j] = 1;
		return true;
	case VNPU_TYPE_I16:
	case VNPU_TYPE_U16:
		((int16_t *)data)[j] = 1;
		return true;
	case VNPU_TYPE_I8:
	case VNPU_TYPE_U8:
	case VNPU_TYPE_BOOL:
		((uint8_t *)data)[j] = 1;
		return true;
	default:
		return false;
	}
}

/* Inputs the same in every run (set_elem()). */
static vnpu_status fill_inputs(vnpu_compiled_model *cm, vnpu_infer_request *req)
{
	vnpu_element_type type;
	vnpu_tensor *t;
	uint64_t n, j;
	uint32_t num, i;
	vnpu_status st;
	void *data;

	st = vnpu_compiled_model_get_num_inputs(cm, &num);
	for (i = 0; st == VNPU_OK && i < num; i++) {
		st = vnpu_infer_request_get_input_tensor(req, i, &t);
		if (st != VNPU_OK)
			break;
		st = vnpu_tensor_get_element_type(t, &type);
		if (st == VNPU_OK)
			st = vnpu_tensor_get_size(t, &n);
		if (st == VNPU_OK)
			st = vnpu_tensor_get_data(t, &data);
		for (j = 0; st == VNPU_OK && j < n; j++)
			set_elem(data, type, j, NULL);
		vnpu_tensor_free(t);
	}
	return st;
}

/* Keep output 0 of @req in @out (libc's memory, never failed). */
static vnpu_status keep_output(vnpu_infer_request *req, struct output *out)
{
	vnpu_tensor *t;
	vnpu_status st;
	void *data;

	st = vnpu_infer_request_get_output_tensor(req, 0, &t);
	if (st != VNPU_OK)
		return st;
	st = vnpu_tensor_get_byte_size(t, &out->bytes);
	if (st == VNPU_OK)
		st = vnpu_tensor_get_data(t, &data);
	if (st == VNPU_OK) {
		out->data = __libc_malloc(out->bytes ? out->bytes : 1);
		if (out->data)
			memcpy(out->data, data, out->bytes);
	}
	vnpu_tensor_free(t);
	return st;
}

/*
 * Freeze the inputs that decide shapes (TopK's k, Resize's scales) and the
 * small integer ones (CumSum's axis): integers 1, floats 2.
 */
static vnpu_status freeze_inputs(vnpu_model *m)
{
	static const float two = 2.0f;
	vnpu_element_type type;
	int64_t buf[64];
	vnpu_shape shape;
	size_t num, i, n, j;
	const char *name;
	vnpu_status st;
	int decides;

	st = vnpu_model_get_inputs_size(m, &num);
	for (i = num; st == VNPU_OK && i-- > 0;) {
		st = vnpu_model_input_decides_shapes(m, i, &decides);
		if (st == VNPU_OK)
			st = vnpu_model_input_name(m, i, &name);
		if (st == VNPU_OK)
			st = vnpu_model_input_type(m, i, &type);
		if (st == VNPU_OK)
			st = vnpu_model_input_shape(m, i, &shape);
		if (st != VNPU_OK)
			break;
		for (n = 1, j = 0; j < shape.rank; j++)
			n = shape.dims[j] < 0 ? SIZE_MAX : n * (size_t)shape.dims[j];
		if (n > 64 || (!decides && (type == VNPU_TYPE_F32 || type == VNPU_TYPE_F64)))
			continue;
		for (j = 0; j < n; j++) {
			if (!set_elem(buf, type, j, &two))
				return VNPU_UNSUPPORTED;
		}
		st = vnpu_model_freeze_input(m, name, type, &shape, buf,
					     n * vnpu_element_type_size(type));
	}
	return st;
}

/* How a run gets from the compile to its output. */
enum run_mode {
	RUN_SYNC,	/* vnpu_infer_request_infer() */
	RUN_ASYNC,	/* start_async() and wait() */
	RUN_BLOB,	/* the compiled model exported, imported, then infer() */
};

/*
 * One run, from reading the model to its first output (in @out): OK, or
 * the status of the step that failed.
 */
static vnpu_status run_once(vnpu_core *core, const char *path, const char *device,
			    enum run_mode mode, struct output *out)
{
	void *blob = NULL;
	size_t size;
	vnpu_compiled_model *cm = NULL;
	vnpu_infer_request *req = NULL;
	vnpu_model *m = NULL;
	vnpu_status st;

	out->data = NULL;
	st = vnpu_core_read_model(core, path, &m);
	if (st == VNPU_OK)
		st = freeze_inputs(m);
	if (st == VNPU_OK)
		st = vnpu_core_compile_model(core, m, device, NULL, &cm);
	if (st == VNPU_OK && mode == RUN_BLOB) {
		st = vnpu_compiled_model_export(cm, &blob, &size);
		vnpu_compiled_model_free(cm);
		cm = NULL;
		if (st == VNPU_OK)
			st = vnpu_core_import_model(core, blob, size, device, &cm);
		vnpu_free(blob);
	}
	if (st == VNPU_OK)
		st = vnpu_compiled_model_create_infer_request(cm, &req);
	if (st == VNPU_OK)
		st = fill_inputs(cm, req);
	if (st == VNPU_OK && mode == RUN_ASYNC) {
		st = vnpu_infer_request_start_async(req);
		if (st == VNPU_OK)
			st = vnpu_infer_request_wait(req);
	} else if (st == VNPU_OK) {
		st = vnpu_infer_request_infer(req);
	}
	if (st == VNPU_OK)
		st = keep_output(req, out);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
	vnpu_model_free(m);
	return st;
}

static void fail_each_allocation(struct __test_metadata *_metadata, vnpu_core *core,
				 const char *device, enum run_mode mode, const char *name)
{
	struct output ref, got;
	unsigned long total, n, step, failed = 0;
	char path[512];
	vnpu_status st;

	snprintf(path, sizeof(path), NODE_DIR "/%s/model.onnx", name);
	if (access(path, R_OK))
		SKIP(return, "%s is not there (libonnx-testdata)", path);
	/* Once whole: how many allocations a run makes, and its answer. */
	atomic_store(&allocs, 0);
	fail_at = 0;
	atomic_store(&counting, 1);
	st = run_once(core, path, device, mode, &ref);
	atomic_store(&counting, 0);
	total = atomic_load(&allocs);
	if (st == VNPU_UNSUPPORTED) {
		/* The NPU takes no f64 tensors, for one. */
		TH_LOG("%s on %s: not run: %s", name, device, vnpu_last_error());
		return;
	}
	ASSERT_EQ(VNPU_OK, st);
	ASSERT_NE(NULL, ref.data);
	ASSERT_GT(total, 0);

	step = total > MAX_RUNS ? total / MAX_RUNS : 1;
	for (n = 1; n <= total; n += step) {
		atomic_store(&allocs, 0);
		fail_at = n;
		atomic_store(&counting, 1);
		st = run_once(core, path, device, mode, &got);
		atomic_store(&counting, 0);
		if (st != VNPU_OK) {
			failed++;
			ASSERT_NE('\0', vnpu_last_error()[0])
				TH_LOG("%s: allocation %lu failed: status %d without a message",
				       name, n, st);
			continue;
		}
		/* A failure recovered from (a cache, a fallback) still gives the answer. */
		ASSERT_NE(NULL, got.data);
		EXPECT_EQ(ref.bytes, got.bytes);
		if (ref.bytes == got.bytes)
			EXPECT_EQ(0, memcmp(ref.data, got.data, ref.bytes))
				TH_LOG("%s: another output with allocation %lu failed", name, n);
		free(got.data);
	}
	/* Memory back: the same core gives the same answer. */
	st = run_once(core, path, device, mode, &got);
	ASSERT_EQ(VNPU_OK, st);
	ASSERT_EQ(ref.bytes, got.bytes);
	EXPECT_EQ(0, memcmp(ref.data, got.data, ref.bytes));
	TH_LOG("%s on %s: %lu allocations a run, %lu of the runs failing one ended with a status",
	       name, device, total, failed);
	free(got.data);
	free(ref.data);
}

/*
 * Node-suite models through the compiler's lowerings (those that add values
 * of their own: TopK, CumSum, the losses, the RNNs, DFT/STFT, Loop and
 * Scan, Einsum) and plain layers.
 */
static const char *const cases[] = {
	"test_top_k", "test_cumsum_2d_axis_0", "test_nllloss_NCd1_weight_expanded",
	"test_conv_with_strides_padding", "test_convtranspose", "test_lstm_defaults",
	"test_gru_defaults", "test_resize_upsample_scales_linear", "test_einsum_batch_matmul",
	"test_stft", "test_dft", "test_scan9_sum", "test_loop11", "test_if",
	"test_qlinearconv", "test_matmulinteger", "test_layer_normalization_2d_axis0",
	"test_instancenorm_example", "test_softmax_axis_1", "test_gathernd_example_int32",
	"test_onehot_with_axis", "test_reversesequence_batch", "test_depthtospace_example",
	"test_tile", "test_maxpool_2d_pads",
	"test_nonmaxsuppression_center_point_box_format", "test_reduce_mean_keepdims_example",
	"test_where_example", "test_expand_dim_changed", "test_slice",
	"test_split_equal_parts_1d", "test_gemm_all_attributes",
};

/* Fewer for the async runs and the blobs: what differs is not the model. */
static const char *const few_cases[] = {
	"test_conv_with_strides_padding", "test_lstm_defaults", "test_loop11",
	"test_qlinearconv", "test_top_k",
};

TEST_F(dev, every_allocation)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		fail_each_allocation(_metadata, self->core, self->device, RUN_SYNC, cases[i]);
}

TEST_F(dev, every_allocation_async)
{
	size_t i;

	for (i = 0; i < sizeof(few_cases) / sizeof(few_cases[0]); i++)
		fail_each_allocation(_metadata, self->core, self->device, RUN_ASYNC,
				     few_cases[i]);
}

TEST_F(dev, every_allocation_blob)
{
	size_t i;

	for (i = 0; i < sizeof(few_cases) / sizeof(few_cases[0]); i++)
		fail_each_allocation(_metadata, self->core, self->device, RUN_BLOB,
				     few_cases[i]);
}

RUNTIME_TEST_MAIN

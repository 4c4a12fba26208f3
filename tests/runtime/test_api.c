// SPDX-License-Identifier: MIT
/*
 * The public API without models: core, devices, properties (the OpenVINO
 * behaviour checklist), tensors, statuses and the last error; every call
 * with its bad inputs. Runs on every device present.
 */
#include <pthread.h>

#include "harness.h"

static int status_strings(vnpu_core *core, const char *device)
{
	vnpu_status st;

	(void)core;
	(void)device;
	for (st = VNPU_WRONG_VERSION; st <= VNPU_OK; st++)
		CHECK(vnpu_status_str(st) && strcmp(vnpu_status_str(st), "unknown status"));
	CHECK(!strcmp(vnpu_status_str((vnpu_status)42), "unknown status"));
	CHECK(!strcmp(vnpu_get_version(), "0.1.0") || vnpu_get_version()[0]);
	return 0;
}

static void *other_thread(void *arg)
{
	(void)arg;
	return (void *)(uintptr_t)(vnpu_last_error()[0] == '\0');
}

/* The last error is per thread: a failure here leaves another thread's alone. */
static int last_error_thread_local(vnpu_core *core, const char *device)
{
	vnpu_property_value *v;
	pthread_t t;
	void *clean;

	CHECK_ERR(vnpu_core_get_property(core, device, "NO_SUCH_KEY", &v), VNPU_NOT_FOUND);
	CHECK(strstr(vnpu_last_error(), "NO_SUCH_KEY"));
	CHECK(!pthread_create(&t, NULL, other_thread, NULL));
	CHECK(!pthread_join(t, &clean));
	CHECK(clean);
	return 0;
}

static int core_devices(vnpu_core *core, const char *device)
{
	char **devices;
	uint32_t n, i;
	int found = 0;

	CHECK_OK(vnpu_core_get_available_devices(core, &devices, &n));
	CHECK(n >= 1 && !strcmp(devices[0], "CPU"));
	for (i = 0; i < n; i++)
		found |= !strcmp(devices[i], device);
	CHECK(found);
	vnpu_free(devices);
	CHECK_ERR(vnpu_core_get_available_devices(NULL, &devices, &n), VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_core_get_available_devices(core, NULL, &n), VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_core_get_available_devices(core, &devices, NULL), VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_core_create(NULL), VNPU_INVALID_ARGUMENT);
	vnpu_free(NULL);
	return 0;
}

/* Every supported property readable and non-empty; RW ones set back. */
static int check_supported(vnpu_core *core, const char *device)
{
	vnpu_property_value *list, *v;
	uint32_t i;

	CHECK_OK(vnpu_core_get_property(core, device, VNPU_PROP_SUPPORTED_PROPERTIES, &list));
	CHECK(list->type == VNPU_PROPERTY_LIST && list->count > 3 && list->writable);
	for (i = 0; i < list->count; i++) {
		CHECK_OK(vnpu_core_get_property(core, device, list->items[i], &v));
		if (strcmp(list->items[i], VNPU_PROP_CACHE_DIR)) {
			if (v->text[0] == '\0')
				fprintf(stderr, "%s of %s is empty\n", list->items[i],
					device ? device : "the core");
			CHECK(v->text[0] != '\0');
		}
		if (list->writable[i]) {
			CHECK_OK(vnpu_core_set_property(core, device, list->items[i], v));
			CHECK_OK(vnpu_core_set_property_str(core, device, list->items[i], v->text));
		} else {
			CHECK_ERR(vnpu_core_set_property(core, device, list->items[i], v),
				  VNPU_INVALID_ARGUMENT);
		}
		vnpu_property_value_free(v);
	}
	vnpu_property_value_free(list);
	return 0;
}

static int properties_checklist(vnpu_core *core, const char *device)
{
	CHECK(!check_supported(core, NULL));
	return check_supported(core, device);
}

static int property_values(vnpu_core *core, const char *device)
{
	vnpu_property_value *v;
	vnpu_property_value set = { .type = VNPU_PROPERTY_BOOL, .integer = 1 };

	CHECK_OK(vnpu_core_get_property(core, device, VNPU_PROP_RANGE_FOR_ASYNC_INFER_REQUESTS,
					&v));
	CHECK(v->type == VNPU_PROPERTY_RANGE && v->range[0] == 1 && v->range[1] >= 1 &&
	      v->range[2] == 1);
	vnpu_property_value_free(v);
	CHECK_OK(vnpu_core_get_property(core, device, VNPU_PROP_AVAILABLE_DEVICES, &v));
	CHECK(v->count >= 1);
	vnpu_property_value_free(v);
	CHECK_OK(vnpu_core_get_property(core, device, VNPU_PROP_OPTIMIZATION_CAPABILITIES, &v));
	CHECK(v->count >= 1 && strstr(v->text, "FP32"));
	vnpu_property_value_free(v);
	CHECK_OK(vnpu_core_get_property(core, NULL, VNPU_PROP_VERSION, &v));
	CHECK(!strcmp(v->text, vnpu_get_version()));
	vnpu_property_value_free(v);

	/* typed set, then read back */
	CHECK_OK(vnpu_core_set_property(core, device, VNPU_PROP_ENABLE_PROFILING, &set));
	CHECK_OK(vnpu_core_get_property(core, device, VNPU_PROP_ENABLE_PROFILING, &v));
	CHECK(v->type == VNPU_PROPERTY_BOOL && v->integer == 1 && !strcmp(v->text, "YES"));
	vnpu_property_value_free(v);
	CHECK_OK(vnpu_core_set_property_str(core, device, VNPU_PROP_ENABLE_PROFILING, "NO"));
	CHECK_OK(vnpu_core_set_property_str(core, device, VNPU_PROP_PERFORMANCE_HINT,
					    "throughput"));
	CHECK_OK(vnpu_core_get_property(core, device, VNPU_PROP_PERFORMANCE_HINT, &v));
	CHECK(!strcmp(v->text, "THROUGHPUT"));
	vnpu_property_value_free(v);
	CHECK_OK(vnpu_core_set_property_str(core, device, VNPU_PROP_PERFORMANCE_HINT, "LATENCY"));
	CHECK_OK(vnpu_core_set_property_str(core, device,
					    VNPU_PROP_PERFORMANCE_HINT_NUM_REQUESTS, "4"));
	CHECK_OK(vnpu_core_get_property(core, device, VNPU_PROP_PERFORMANCE_HINT_NUM_REQUESTS,
					&v));
	CHECK(v->type == VNPU_PROPERTY_INT && v->integer == 4);
	vnpu_property_value_free(v);
	CHECK_OK(vnpu_core_set_property_str(core, device,
					    VNPU_PROP_PERFORMANCE_HINT_NUM_REQUESTS, "0"));
	CHECK_OK(vnpu_core_set_property_str(core, NULL, VNPU_PROP_CACHE_DIR, "/tmp/x"));
	CHECK_OK(vnpu_core_get_property(core, NULL, VNPU_PROP_CACHE_DIR, &v));
	CHECK(!strcmp(v->text, "/tmp/x"));
	vnpu_property_value_free(v);
	CHECK_OK(vnpu_core_set_property_str(core, NULL, VNPU_PROP_CACHE_DIR, ""));
	CHECK_OK(vnpu_core_set_property_str(core, NULL, VNPU_PROP_LOG_LEVEL, "ERROR"));
	CHECK_OK(vnpu_core_get_property(core, NULL, VNPU_PROP_LOG_LEVEL, &v));
	CHECK(!strcmp(v->text, "ERROR"));
	vnpu_property_value_free(v);
	CHECK_OK(vnpu_core_set_property_str(core, NULL, VNPU_PROP_LOG_LEVEL, "WARNING"));
	vnpu_property_value_free(NULL);
	return 0;
}

/* Unknown keys and devices, wrong types, values and scopes: errors, no change. */
static int property_errors(vnpu_core *core, const char *device)
{
	vnpu_property_value *v;
	vnpu_property_value as_int = { .type = VNPU_PROPERTY_INT, .integer = 1 };
	vnpu_property_value no_text = { .type = VNPU_PROPERTY_STRING };

	CHECK_ERR(vnpu_core_get_property(core, device, "NOPE", &v), VNPU_NOT_FOUND);
	CHECK_ERR(vnpu_core_get_property(core, NULL, "NOPE", &v), VNPU_NOT_FOUND);
	CHECK_ERR(vnpu_core_get_property(core, "GPU", VNPU_PROP_FULL_DEVICE_NAME, &v),
		  VNPU_NOT_FOUND);
	CHECK(strstr(vnpu_last_error(), "GPU"));
	CHECK_ERR(vnpu_core_get_property(core, "NPU.99", VNPU_PROP_FULL_DEVICE_NAME, &v),
		  VNPU_NOT_FOUND);
	/* a device key asked of the core, a global one of a device */
	CHECK_ERR(vnpu_core_get_property(core, NULL, VNPU_PROP_FULL_DEVICE_NAME, &v),
		  VNPU_NOT_FOUND);
	CHECK_ERR(vnpu_core_get_property(core, device, VNPU_PROP_LOG_LEVEL, &v),
		  VNPU_NOT_FOUND);
	CHECK_ERR(vnpu_core_get_property(NULL, device, VNPU_PROP_DEVICE_ID, &v),
		  VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_core_get_property(core, device, NULL, &v), VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_core_get_property(core, device, VNPU_PROP_DEVICE_ID, NULL),
		  VNPU_INVALID_ARGUMENT);

	CHECK_ERR(vnpu_core_set_property(core, device, "NOPE", &as_int), VNPU_NOT_FOUND);
	CHECK_ERR(vnpu_core_set_property(core, "GPU", VNPU_PROP_ENABLE_PROFILING, &as_int),
		  VNPU_NOT_FOUND);
	CHECK_ERR(vnpu_core_set_property(core, device, VNPU_PROP_ENABLE_PROFILING, &as_int),
		  VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_core_set_property(core, device, VNPU_PROP_PERFORMANCE_HINT, &no_text),
		  VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_core_set_property(core, device, VNPU_PROP_FULL_DEVICE_NAME, &no_text),
		  VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_core_set_property(core, device, VNPU_PROP_ENABLE_PROFILING, NULL),
		  VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_core_set_property(NULL, device, VNPU_PROP_ENABLE_PROFILING, &as_int),
		  VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_core_set_property_str(core, device, VNPU_PROP_ENABLE_PROFILING, "maybe"),
		  VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_core_set_property_str(core, device, VNPU_PROP_PERFORMANCE_HINT, "FAST"),
		  VNPU_INVALID_ARGUMENT);
	CHECK(strstr(vnpu_last_error(), "LATENCY"));
	CHECK_ERR(vnpu_core_set_property_str(core, device, VNPU_PROP_INFERENCE_PRECISION_HINT,
					     "i4"), VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_core_set_property_str(core, device,
					     VNPU_PROP_PERFORMANCE_HINT_NUM_REQUESTS, "-1"),
		  VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_core_set_property_str(core, device,
					     VNPU_PROP_PERFORMANCE_HINT_NUM_REQUESTS, "4x"),
		  VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_core_set_property_str(core, NULL, VNPU_PROP_LOG_LEVEL, "LOUD"),
		  VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_core_set_property_str(core, device, VNPU_PROP_DEVICE_ID, "1"),
		  VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_core_set_property_str(core, device, "NOPE", "1"), VNPU_NOT_FOUND);
	CHECK_ERR(vnpu_core_set_property_str(core, device, VNPU_PROP_ENABLE_PROFILING, NULL),
		  VNPU_INVALID_ARGUMENT);
	/* nothing changed */
	CHECK_OK(vnpu_core_get_property(core, device, VNPU_PROP_PERFORMANCE_HINT, &v));
	CHECK(!strcmp(v->text, "LATENCY"));
	vnpu_property_value_free(v);
	CHECK_OK(vnpu_core_get_property(core, device, VNPU_PROP_PERFORMANCE_HINT_NUM_REQUESTS,
					&v));
	CHECK(v->integer == 0);
	vnpu_property_value_free(v);
	return 0;
}

static int tensors(vnpu_core *core, const char *device)
{
	const vnpu_shape s = { 3, { 2, 3, 4 } }, empty = { 2, { 0, 5 } }, scalar = { 0, { 0 } };
	vnpu_shape dyn = { 2, { 2, VNPU_DIM_DYNAMIC } }, huge = { 2, { INT64_MAX, 4 } };
	vnpu_shape deep = { VNPU_MAX_RANK + 1, { 1 } };
	vnpu_element_type type;
	uint64_t n, bytes;
	vnpu_shape got;
	vnpu_tensor *t;
	int32_t mem[24];
	void *data;

	(void)core;
	(void)device;
	CHECK_OK(vnpu_tensor_create(VNPU_TYPE_F16, &s, &t));
	CHECK_OK(vnpu_tensor_get_size(t, &n));
	CHECK_OK(vnpu_tensor_get_byte_size(t, &bytes));
	CHECK(n == 24 && bytes == 48);
	CHECK_OK(vnpu_tensor_get_element_type(t, &type));
	CHECK(type == VNPU_TYPE_F16);
	CHECK_OK(vnpu_tensor_get_shape(t, &got));
	CHECK(got.rank == 3 && got.dims[2] == 4);
	CHECK_OK(vnpu_tensor_get_data(t, &data));
	CHECK(data && ((uintptr_t)data % 64) == 0 && ((uint16_t *)data)[23] == 0);
	CHECK_ERR(vnpu_tensor_get_data(t, NULL), VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_tensor_get_size(NULL, &n), VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_tensor_get_byte_size(t, NULL), VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_tensor_get_shape(NULL, &got), VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_tensor_get_element_type(t, NULL), VNPU_INVALID_ARGUMENT);
	vnpu_tensor_free(t);

	CHECK_OK(vnpu_tensor_create(VNPU_TYPE_I64, &empty, &t));
	CHECK_OK(vnpu_tensor_get_byte_size(t, &bytes));
	CHECK(bytes == 0);
	vnpu_tensor_free(t);
	CHECK_OK(vnpu_tensor_create(VNPU_TYPE_U8, &scalar, &t));
	CHECK_OK(vnpu_tensor_get_size(t, &n));
	CHECK(n == 1);
	vnpu_tensor_free(t);

	CHECK_OK(vnpu_tensor_create_from_ptr(VNPU_TYPE_I32, &s, mem, &t));
	CHECK_OK(vnpu_tensor_get_data(t, &data));
	CHECK(data == mem);
	vnpu_tensor_free(t);

	t = (vnpu_tensor *)&mem;	/* results only on success */
	CHECK_ERR(vnpu_tensor_create(VNPU_TYPE_F32, &dyn, &t), VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_tensor_create(VNPU_TYPE_F32, &huge, &t), VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_tensor_create(VNPU_TYPE_F32, &deep, &t), VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_tensor_create_from_ptr(VNPU_TYPE_STRING, &s, mem, &t),
		  VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_tensor_create((vnpu_element_type)99, &s, &t), VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_tensor_create(VNPU_TYPE_F32, NULL, &t), VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_tensor_create(VNPU_TYPE_F32, &s, NULL), VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_tensor_create_from_ptr(VNPU_TYPE_F32, &s, NULL, &t),
		  VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_tensor_create_from_ptr(VNPU_TYPE_F32, &s, (char *)mem + 1, &t),
		  VNPU_INVALID_ARGUMENT);
	CHECK(t == (vnpu_tensor *)&mem);
	vnpu_tensor_free(NULL);
	return 0;
}

static int model_errors(vnpu_core *core, const char *device)
{
	static const unsigned char junk[] = { 0x08, 0xff, 0xff, 0xff, 0x0a, 0x99, 0x01 };
	vnpu_compiled_model *cm;
	vnpu_query_report *report;
	vnpu_model *m = NULL;

	CHECK_ERR(vnpu_core_read_model(core, "/nonexistent.onnx", &m), VNPU_NOT_FOUND);
	CHECK_ERR(vnpu_core_read_model(core, NULL, &m), VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_core_read_model(NULL, "x.onnx", &m), VNPU_INVALID_ARGUMENT);
	CHECK(vnpu_core_read_model_from_memory(core, junk, sizeof(junk), &m) != VNPU_OK);
	CHECK(vnpu_last_error()[0]);
	CHECK_ERR(vnpu_core_read_model_from_memory(core, NULL, 4, &m), VNPU_INVALID_ARGUMENT);
	CHECK(m == NULL);
	CHECK_ERR(vnpu_core_compile_model(core, NULL, device, NULL, &cm), VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_core_query_model(core, NULL, device, &report), VNPU_INVALID_ARGUMENT);
	vnpu_query_report_free(NULL);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct test tests[] = {
		TEST(status_strings),
		TEST(last_error_thread_local),
		TEST(core_devices),
		TEST(properties_checklist),
		TEST(property_values),
		TEST(property_errors),
		TEST(tensors),
		TEST(model_errors),
	};

	return run_tests(argc, argv, tests, sizeof(tests) / sizeof(tests[0]));
}

// SPDX-License-Identifier: MIT
/*
 * The public API without models: core, devices, properties (the OpenVINO
 * behaviour checklist), tensors, statuses and the last error; every call
 * with its bad inputs. Runs on every device present.
 */
#include <pthread.h>

#include "runtime_test.h"

TEST_F(dev, status_strings)
{
	vnpu_status st;

	for (st = VNPU_WRONG_VERSION; st <= VNPU_OK; st++) {
		ASSERT_TRUE(vnpu_status_str(st) && strcmp(vnpu_status_str(st), "unknown status"));
	}
	ASSERT_STREQ("unknown status", vnpu_status_str((vnpu_status)42));
	ASSERT_TRUE(!strcmp(vnpu_get_version(), "0.1.0") || vnpu_get_version()[0]);
}

static void *other_thread(void *arg)
{
	(void)arg;
	return (void *)(uintptr_t)(vnpu_last_error()[0] == '\0');
}

/* The last error is per thread: a failure here leaves another thread's alone. */
TEST_F(dev, last_error_thread_local)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	vnpu_property_value *v;
	pthread_t t;
	void *clean;

	ASSERT_FAILS(VNPU_NOT_FOUND, vnpu_core_get_property(core, device, "NO_SUCH_KEY", &v));
	ASSERT_NE(NULL, strstr(vnpu_last_error(), "NO_SUCH_KEY"));
	ASSERT_EQ(0, pthread_create(&t, NULL, other_thread, NULL));
	ASSERT_EQ(0, pthread_join(t, &clean));
	ASSERT_NE(NULL, clean);
}

TEST_F(dev, core_devices)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	char **devices;
	uint32_t n, i;
	int found = 0;

	ASSERT_EQ(VNPU_OK, vnpu_core_get_available_devices(core, &devices, &n));
	ASSERT_TRUE(n >= 1 && !strcmp(devices[0], "CPU"));
	for (i = 0; i < n; i++)
		found |= !strcmp(devices[i], device);
	ASSERT_TRUE(found);
	vnpu_free(devices);
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_core_get_available_devices(NULL, &devices, &n));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_core_get_available_devices(core, NULL, &n));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_core_get_available_devices(core, &devices, NULL));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_core_create(NULL));
	vnpu_free(NULL);
}

/* Every supported property readable and non-empty; RW ones set back. */
static int check_supported(struct __test_metadata *_metadata, vnpu_core *core, const char *device)
{
	vnpu_property_value *list, *v;
	uint32_t i;

	ASSERT_EQ(VNPU_OK,
		  vnpu_core_get_property(core, device, VNPU_PROP_SUPPORTED_PROPERTIES, &list));
	ASSERT_TRUE(list->type == VNPU_PROPERTY_LIST && list->count > 3 && list->writable);
	for (i = 0; i < list->count; i++) {
		ASSERT_EQ(VNPU_OK, vnpu_core_get_property(core, device, list->items[i], &v));
		if (strcmp(list->items[i], VNPU_PROP_CACHE_DIR)) {
			if (v->text[0] == '\0')
				TH_LOG("%s of %s is empty", list->items[i],
					device ? device : "the core");
			ASSERT_NE('\0', v->text[0]);
		}
		if (list->writable[i]) {
			ASSERT_EQ(VNPU_OK, vnpu_core_set_property(core, device, list->items[i], v));
			ASSERT_EQ(VNPU_OK,
				  vnpu_core_set_property_str(core, device, list->items[i],
							     v->text));
		} else {
			ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
				     vnpu_core_set_property(core, device, list->items[i], v));
		}
		vnpu_property_value_free(v);
	}
	vnpu_property_value_free(list);
	return 0;
}

TEST_F(dev, properties_checklist)
{
	vnpu_core *core = self->core;
	const char *device = self->device;

	ASSERT_EQ(0, check_supported(_metadata, core, NULL));
	ASSERT_EQ(0, check_supported(_metadata, core, device));
}

TEST_F(dev, property_values)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	vnpu_property_value *v;
	vnpu_property_value set = { .type = VNPU_PROPERTY_BOOL, .integer = 1 };

	ASSERT_EQ(VNPU_OK,
		  vnpu_core_get_property(core, device, VNPU_PROP_RANGE_FOR_ASYNC_INFER_REQUESTS,
					 &v));
	ASSERT_TRUE(v->type == VNPU_PROPERTY_RANGE && v->range[0] == 1 && v->range[1] >= 1
		    && v->range[2] == 1);
	vnpu_property_value_free(v);
	ASSERT_EQ(VNPU_OK, vnpu_core_get_property(core, device, VNPU_PROP_AVAILABLE_DEVICES, &v));
	ASSERT_GE(v->count, 1);
	vnpu_property_value_free(v);
	ASSERT_EQ(VNPU_OK,
		  vnpu_core_get_property(core, device, VNPU_PROP_OPTIMIZATION_CAPABILITIES, &v));
	ASSERT_TRUE(v->count >= 1 && strstr(v->text, "FP32"));
	vnpu_property_value_free(v);
	ASSERT_EQ(VNPU_OK, vnpu_core_get_property(core, NULL, VNPU_PROP_VERSION, &v));
	ASSERT_STREQ(vnpu_get_version(), v->text);
	vnpu_property_value_free(v);

	/* typed set, then read back */
	ASSERT_EQ(VNPU_OK, vnpu_core_set_property(core, device, VNPU_PROP_ENABLE_PROFILING, &set));
	ASSERT_EQ(VNPU_OK, vnpu_core_get_property(core, device, VNPU_PROP_ENABLE_PROFILING, &v));
	ASSERT_TRUE(v->type == VNPU_PROPERTY_BOOL && v->integer == 1 && !strcmp(v->text, "YES"));
	vnpu_property_value_free(v);
	ASSERT_EQ(VNPU_OK,
		  vnpu_core_set_property_str(core, device, VNPU_PROP_ENABLE_PROFILING, "NO"));
	ASSERT_EQ(VNPU_OK,
		  vnpu_core_set_property_str(core, device, VNPU_PROP_PERFORMANCE_HINT,
					     "throughput"));
	ASSERT_EQ(VNPU_OK, vnpu_core_get_property(core, device, VNPU_PROP_PERFORMANCE_HINT, &v));
	ASSERT_STREQ("THROUGHPUT", v->text);
	vnpu_property_value_free(v);
	ASSERT_EQ(VNPU_OK,
		  vnpu_core_set_property_str(core, device, VNPU_PROP_PERFORMANCE_HINT, "LATENCY"));
	ASSERT_EQ(VNPU_OK,
		  vnpu_core_set_property_str(core, device, VNPU_PROP_PERFORMANCE_HINT_NUM_REQUESTS,
					     "4"));
	ASSERT_EQ(VNPU_OK,
		  vnpu_core_get_property(core, device, VNPU_PROP_PERFORMANCE_HINT_NUM_REQUESTS,
					 &v));
	ASSERT_TRUE(v->type == VNPU_PROPERTY_INT && v->integer == 4);
	vnpu_property_value_free(v);
	ASSERT_EQ(VNPU_OK,
		  vnpu_core_set_property_str(core, device, VNPU_PROP_PERFORMANCE_HINT_NUM_REQUESTS,
					     "0"));
	ASSERT_EQ(VNPU_OK, vnpu_core_set_property_str(core, NULL, VNPU_PROP_CACHE_DIR, "/tmp/x"));
	ASSERT_EQ(VNPU_OK, vnpu_core_get_property(core, NULL, VNPU_PROP_CACHE_DIR, &v));
	ASSERT_STREQ("/tmp/x", v->text);
	vnpu_property_value_free(v);
	ASSERT_EQ(VNPU_OK, vnpu_core_set_property_str(core, NULL, VNPU_PROP_CACHE_DIR, ""));
	ASSERT_EQ(VNPU_OK, vnpu_core_set_property_str(core, NULL, VNPU_PROP_LOG_LEVEL, "ERROR"));
	ASSERT_EQ(VNPU_OK, vnpu_core_get_property(core, NULL, VNPU_PROP_LOG_LEVEL, &v));
	ASSERT_STREQ("ERROR", v->text);
	vnpu_property_value_free(v);
	ASSERT_EQ(VNPU_OK, vnpu_core_set_property_str(core, NULL, VNPU_PROP_LOG_LEVEL, "WARNING"));
	vnpu_property_value_free(NULL);
}

/* Unknown keys and devices, wrong types, values and scopes: errors, no change. */
TEST_F(dev, property_errors)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	vnpu_property_value *v;
	vnpu_property_value as_int = { .type = VNPU_PROPERTY_INT, .integer = 1 };
	vnpu_property_value no_text = { .type = VNPU_PROPERTY_STRING };

	ASSERT_FAILS(VNPU_NOT_FOUND, vnpu_core_get_property(core, device, "NOPE", &v));
	ASSERT_FAILS(VNPU_NOT_FOUND, vnpu_core_get_property(core, NULL, "NOPE", &v));
	ASSERT_FAILS(VNPU_NOT_FOUND,
		     vnpu_core_get_property(core, "GPU", VNPU_PROP_FULL_DEVICE_NAME, &v));
	ASSERT_NE(NULL, strstr(vnpu_last_error(), "GPU"));
	ASSERT_FAILS(VNPU_NOT_FOUND,
		     vnpu_core_get_property(core, "NPU.99", VNPU_PROP_FULL_DEVICE_NAME, &v));
	/* a device key asked of the core, a global one of a device */
	ASSERT_FAILS(VNPU_NOT_FOUND,
		     vnpu_core_get_property(core, NULL, VNPU_PROP_FULL_DEVICE_NAME, &v));
	ASSERT_FAILS(VNPU_NOT_FOUND, vnpu_core_get_property(core, device, VNPU_PROP_LOG_LEVEL, &v));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_core_get_property(NULL, device, VNPU_PROP_DEVICE_ID, &v));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_core_get_property(core, device, NULL, &v));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_core_get_property(core, device, VNPU_PROP_DEVICE_ID, NULL));

	ASSERT_FAILS(VNPU_NOT_FOUND, vnpu_core_set_property(core, device, "NOPE", &as_int));
	ASSERT_FAILS(VNPU_NOT_FOUND,
		     vnpu_core_set_property(core, "GPU", VNPU_PROP_ENABLE_PROFILING, &as_int));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_core_set_property(core, device, VNPU_PROP_ENABLE_PROFILING, &as_int));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_core_set_property(core, device, VNPU_PROP_PERFORMANCE_HINT, &no_text));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_core_set_property(core, device, VNPU_PROP_FULL_DEVICE_NAME, &no_text));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_core_set_property(core, device, VNPU_PROP_ENABLE_PROFILING, NULL));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_core_set_property(NULL, device, VNPU_PROP_ENABLE_PROFILING, &as_int));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_core_set_property_str(core, device, VNPU_PROP_ENABLE_PROFILING, "maybe"));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_core_set_property_str(core, device, VNPU_PROP_PERFORMANCE_HINT, "FAST"));
	ASSERT_NE(NULL, strstr(vnpu_last_error(), "LATENCY"));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_core_set_property_str(core, device, VNPU_PROP_INFERENCE_PRECISION_HINT,
						"i4"));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_core_set_property_str(core, device,
						VNPU_PROP_PERFORMANCE_HINT_NUM_REQUESTS, "-1"));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_core_set_property_str(core, device,
						VNPU_PROP_PERFORMANCE_HINT_NUM_REQUESTS, "4x"));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_core_set_property_str(core, NULL, VNPU_PROP_LOG_LEVEL, "LOUD"));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_core_set_property_str(core, device, VNPU_PROP_DEVICE_ID, "1"));
	ASSERT_FAILS(VNPU_NOT_FOUND, vnpu_core_set_property_str(core, device, "NOPE", "1"));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_core_set_property_str(core, device, VNPU_PROP_ENABLE_PROFILING, NULL));
	/* nothing changed */
	ASSERT_EQ(VNPU_OK, vnpu_core_get_property(core, device, VNPU_PROP_PERFORMANCE_HINT, &v));
	ASSERT_STREQ("LATENCY", v->text);
	vnpu_property_value_free(v);
	ASSERT_EQ(VNPU_OK,
		  vnpu_core_get_property(core, device, VNPU_PROP_PERFORMANCE_HINT_NUM_REQUESTS,
					 &v));
	ASSERT_EQ(0, v->integer);
	vnpu_property_value_free(v);
}

TEST_F(dev, tensors)
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

	ASSERT_EQ(VNPU_OK, vnpu_tensor_create(VNPU_TYPE_F16, &s, &t));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_size(t, &n));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_byte_size(t, &bytes));
	ASSERT_TRUE(n == 24 && bytes == 48);
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_element_type(t, &type));
	ASSERT_EQ(VNPU_TYPE_F16, type);
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_shape(t, &got));
	ASSERT_TRUE(got.rank == 3 && got.dims[2] == 4);
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(t, &data));
	ASSERT_TRUE(data && ((uintptr_t)data % 64) == 0 && ((uint16_t *)data)[23] == 0);
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_tensor_get_data(t, NULL));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_tensor_get_size(NULL, &n));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_tensor_get_byte_size(t, NULL));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_tensor_get_shape(NULL, &got));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_tensor_get_element_type(t, NULL));
	vnpu_tensor_free(t);

	ASSERT_EQ(VNPU_OK, vnpu_tensor_create(VNPU_TYPE_I64, &empty, &t));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_byte_size(t, &bytes));
	ASSERT_EQ(0, bytes);
	vnpu_tensor_free(t);
	ASSERT_EQ(VNPU_OK, vnpu_tensor_create(VNPU_TYPE_U8, &scalar, &t));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_size(t, &n));
	ASSERT_EQ(1, n);
	vnpu_tensor_free(t);

	ASSERT_EQ(VNPU_OK, vnpu_tensor_create_from_ptr(VNPU_TYPE_I32, &s, mem, &t));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(t, &data));
	ASSERT_EQ((void *)mem, data);
	vnpu_tensor_free(t);

	t = (vnpu_tensor *)&mem;	/* results only on success */
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_tensor_create(VNPU_TYPE_F32, &dyn, &t));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_tensor_create(VNPU_TYPE_F32, &huge, &t));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_tensor_create(VNPU_TYPE_F32, &deep, &t));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_tensor_create_from_ptr(VNPU_TYPE_STRING, &s, mem, &t));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_tensor_create((vnpu_element_type)99, &s, &t));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_tensor_create(VNPU_TYPE_F32, NULL, &t));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_tensor_create(VNPU_TYPE_F32, &s, NULL));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_tensor_create_from_ptr(VNPU_TYPE_F32, &s, NULL, &t));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_tensor_create_from_ptr(VNPU_TYPE_F32, &s, (char *)mem + 1, &t));
	ASSERT_EQ((vnpu_tensor *)&mem, t);
	vnpu_tensor_free(NULL);
}

TEST_F(dev, model_errors)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	static const unsigned char junk[] = { 0x08, 0xff, 0xff, 0xff, 0x0a, 0x99, 0x01 };
	vnpu_compiled_model *cm;
	vnpu_query_report *report;
	vnpu_model *m = NULL;

	ASSERT_FAILS(VNPU_NOT_FOUND, vnpu_core_read_model(core, "/nonexistent.onnx", &m));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_core_read_model(core, NULL, &m));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_core_read_model(NULL, "x.onnx", &m));
	ASSERT_NE(VNPU_OK, vnpu_core_read_model_from_memory(core, junk, sizeof(junk), &m));
	ASSERT_TRUE(vnpu_last_error()[0]);
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_core_read_model_from_memory(core, NULL, 4, &m));
	ASSERT_EQ(NULL, m);
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_core_compile_model(core, NULL, device, NULL, &cm));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT, vnpu_core_query_model(core, NULL, device, &report));
	vnpu_query_report_free(NULL);
}

RUNTIME_TEST_MAIN

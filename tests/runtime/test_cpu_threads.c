// SPDX-License-Identifier: MIT
/*
 * INFERENCE_NUM_THREADS, the CPU device's threads: the default from the
 * cgroup limit (fake cgroup trees: v2 cpu.max, v1 quotas, nested limits,
 * files that say nothing or lie) and from the affinity mask (the process
 * pinned to one CPU), setting it, bad values, and the count fixed once
 * the threads run. Host only: public API plus the plugin's cgroup reader.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cpu_threads.h"
#include "harness.h"

#define RELU "/usr/share/libonnx-testdata/data/node/test_relu/model.onnx"

static char root[64];

/* Write @text to @root/@rel, making its folders. */
static void put(const char *rel, const char *text)
{
	char path[256], *p;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static uint32_t limit(void)
{
	char proc[96];

	snprintf(proc, sizeof(proc), "%s/proc-cgroup", root);
	return cpu_cgroup_limit(root, proc);
}

static int cgroup_limits(void)
{
	CHECK(mkdtemp(strcpy(root, "/tmp/vnpu-cgroup-XXXXXX")));
	CHECK(limit() == 0);				/* no /proc file */
	put("proc-cgroup", "0::/a/b\n");
	CHECK(limit() == 0);				/* no cpu.max anywhere */
	put("a/b/cpu.max", "max 100000\n");
	CHECK(limit() == 0);				/* "max": no limit */
	put("a/cpu.max", "250000 100000\n");
	CHECK(limit() == 3);				/* the parent's 2.5 CPUs */
	put("a/b/cpu.max", "50000 100000\n");
	CHECK(limit() == 1);				/* the tighter child */
	put("a/b/cpu.max", "garbage\n");
	CHECK(limit() == 3);
	put("a/b/cpu.max", "-5 100000\n");
	CHECK(limit() == 3);				/* a negative quota: none */
	put("a/b/cpu.max", "100000 0\n");
	CHECK(limit() == 3);				/* a zero period: none */
	put("a/b/cpu.max", "99999999999 1\n");
	CHECK(limit() == 3);				/* the parent's is tighter */
	put("a/cpu.max", "max 100000\n");
	CHECK(limit() == CPU_MAX_THREADS);		/* clamped */
	put("proc-cgroup", "0::/../a\n");
	CHECK(limit() == 0);				/* no way out of the root */
	/* v1: the cpu controller's folder, -1 for no limit, parents. */
	put("proc-cgroup", "4:memory:/m\n3:cpu,cpuacct:/c/d\n0::/\n");
	put("cpu,cpuacct/c/d/cpu.cfs_quota_us", "-1\n");
	put("cpu,cpuacct/c/d/cpu.cfs_period_us", "100000\n");
	CHECK(limit() == 0);
	put("cpu,cpuacct/c/cpu.cfs_quota_us", "200000\n");
	put("cpu,cpuacct/c/cpu.cfs_period_us", "100000\n");
	CHECK(limit() == 2);
	put("proc-cgroup", "3:cpuacct:/c/d\n");
	CHECK(limit() == 0);				/* not the cpu controller */
	put("proc-cgroup", "no colons at all\n::\n7:cpu\n");
	CHECK(limit() == 0);
	return system("rm -rf /tmp/vnpu-cgroup-*") != 0;
}

static int64_t threads(vnpu_core *core)
{
	vnpu_property_value *v;
	int64_t n;

	if (vnpu_core_get_property(core, "CPU", VNPU_PROP_INFERENCE_NUM_THREADS, &v))
		return -1;
	n = v->integer;
	vnpu_property_value_free(v);
	return n;
}

/* FULL_DEVICE_NAME says "@n threads". */
static int name_says(vnpu_core *core, int64_t n)
{
	vnpu_property_value *v;
	char want[32];
	int ok;

	if (vnpu_core_get_property(core, "CPU", VNPU_PROP_FULL_DEVICE_NAME, &v))
		return 0;
	snprintf(want, sizeof(want), " %lld threads", (long long)n);
	ok = strstr(v->text, want) != NULL;
	vnpu_property_value_free(v);
	return ok;
}

/* A core created while the process may run on one CPU only. */
static int default_follows_affinity(void)
{
	cpu_set_t all, one;
	vnpu_core *core;
	int64_t n;

	CHECK(sched_getaffinity(0, sizeof(all), &all) == 0);
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	CHECK(sched_setaffinity(0, sizeof(one), &one) == 0);
	CHECK_OK(vnpu_core_create(&core));
	n = threads(core);
	vnpu_core_free(core);
	CHECK(sched_setaffinity(0, sizeof(all), &all) == 0);
	CHECK(n == 1);

	CHECK_OK(vnpu_core_create(&core));
	n = threads(core);
	CHECK(n == cpu_default_threads() && n >= 1);
	CHECK(n <= CPU_COUNT(&all));
	CHECK(name_says(core, n));
	vnpu_core_free(core);
	return 0;
}

static int run_relu(vnpu_core *core)
{
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	vnpu_tensor *in, *out;
	vnpu_model *model;
	float *x, *y;
	int i, ok = 1;

	CHECK_OK(vnpu_core_read_model(core, RELU, &model));
	CHECK_OK(vnpu_core_compile_model(core, model, "CPU", NULL, &cm));
	vnpu_model_free(model);
	CHECK_OK(vnpu_compiled_model_create_infer_request(cm, &req));
	CHECK_OK(vnpu_infer_request_get_input_tensor(req, 0, &in));
	CHECK_OK(vnpu_tensor_get_data(in, (void **)&x));
	for (i = 0; i < 60; i++)
		x[i] = (float)(i - 30);
	CHECK_OK(vnpu_infer_request_infer(req));
	CHECK_OK(vnpu_infer_request_get_output_tensor(req, 0, &out));
	CHECK_OK(vnpu_tensor_get_data(out, (void **)&y));
	for (i = 0; i < 60; i++)
		ok &= y[i] == (i > 30 ? (float)(i - 30) : 0.0f);
	vnpu_tensor_free(in);
	vnpu_tensor_free(out);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
	CHECK(ok);
	return 0;
}

static int set_and_refuse(void)
{
	vnpu_property_value v = { .type = VNPU_PROPERTY_INT }, *list;
	vnpu_core *core;
	int64_t def;
	uint32_t i;
	int rw = -1;

	CHECK_OK(vnpu_core_create(&core));
	def = threads(core);
	CHECK_OK(vnpu_core_get_property(core, "CPU", VNPU_PROP_SUPPORTED_PROPERTIES, &list));
	for (i = 0; i < list->count; i++) {
		if (!strcmp(list->items[i], VNPU_PROP_INFERENCE_NUM_THREADS))
			rw = list->writable[i];
	}
	vnpu_property_value_free(list);
	CHECK(rw == 1);
	CHECK_OK(vnpu_core_set_property_str(core, "CPU", VNPU_PROP_INFERENCE_NUM_THREADS, "3"));
	CHECK(threads(core) == 3 && name_says(core, 3));
	v.integer = 65;
	CHECK_ERR(vnpu_core_set_property(core, "CPU", VNPU_PROP_INFERENCE_NUM_THREADS, &v),
		  VNPU_INVALID_ARGUMENT);
	CHECK(strstr(vnpu_last_error(), "out of range"));
	v.integer = -1;
	CHECK_ERR(vnpu_core_set_property(core, "CPU", VNPU_PROP_INFERENCE_NUM_THREADS, &v),
		  VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_core_set_property_str(core, "CPU", VNPU_PROP_INFERENCE_NUM_THREADS,
					     "two"), VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_core_set_property_str(core, "CPU", VNPU_PROP_INFERENCE_NUM_THREADS,
					     "YES"), VNPU_INVALID_ARGUMENT);
	CHECK_ERR(vnpu_core_set_property_str(core, NULL, VNPU_PROP_INFERENCE_NUM_THREADS, "2"),
		  VNPU_NOT_FOUND);
	CHECK(threads(core) == 3);			/* refused: unchanged */
	CHECK_OK(vnpu_core_set_property_str(core, "CPU", VNPU_PROP_INFERENCE_NUM_THREADS, "0"));
	CHECK(threads(core) == def);			/* 0: the default again */
	CHECK_OK(vnpu_core_set_property_str(core, "CPU", VNPU_PROP_INFERENCE_NUM_THREADS, "3"));
	if (run_relu(core))
		return 1;
	/* The threads run now: the same count is taken, another refused. */
	CHECK_OK(vnpu_core_set_property_str(core, "CPU", VNPU_PROP_INFERENCE_NUM_THREADS, "3"));
	CHECK_ERR(vnpu_core_set_property_str(core, "CPU", VNPU_PROP_INFERENCE_NUM_THREADS, "1"),
		  VNPU_BUSY);
	CHECK(threads(core) == 3);
	vnpu_core_free(core);

	/* One thread runs every job too. */
	CHECK_OK(vnpu_core_create(&core));
	CHECK_OK(vnpu_core_set_property_str(core, "CPU", VNPU_PROP_INFERENCE_NUM_THREADS, "1"));
	if (run_relu(core))
		return 1;
	vnpu_core_free(core);
	return 0;
}

int main(void)
{
	if (cgroup_limits() || default_follows_affinity() || set_and_refuse())
		return 1;
	printf("cpu threads: ok\n");
	return 0;
}

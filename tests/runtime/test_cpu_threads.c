// SPDX-License-Identifier: MIT
/*
 * INFERENCE_NUM_THREADS, the CPU device's threads: the default from the
 * cgroup limit (fake cgroup trees: v2 cpu.max, v1 quotas, nested limits,
 * files that say nothing or lie) and from the affinity mask (the process
 * pinned to one CPU), setting it, bad values, and the count fixed once
 * the threads run; the load reader that gates the helpers' poll (fake
 * /proc/stat files). Host only: public API plus the plugin's readers.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cpu_threads.h"
#include "runtime_test.h"

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

TEST(cgroup_limits)
{
	ASSERT_NE(NULL, mkdtemp(strcpy(root, "/tmp/vnpu-cgroup-XXXXXX")));
	ASSERT_EQ(0, limit());				/* no /proc file */
	put("proc-cgroup", "0::/a/b\n");
	ASSERT_EQ(0, limit());				/* no cpu.max anywhere */
	put("a/b/cpu.max", "max 100000\n");
	ASSERT_EQ(0, limit());				/* "max": no limit */
	put("a/cpu.max", "250000 100000\n");
	ASSERT_EQ(3, limit());				/* the parent's 2.5 CPUs */
	put("a/b/cpu.max", "50000 100000\n");
	ASSERT_EQ(1, limit());				/* the tighter child */
	put("a/b/cpu.max", "garbage\n");
	ASSERT_EQ(3, limit());
	put("a/b/cpu.max", "-5 100000\n");
	ASSERT_EQ(3, limit());				/* a negative quota: none */
	put("a/b/cpu.max", "100000 0\n");
	ASSERT_EQ(3, limit());				/* a zero period: none */
	put("a/b/cpu.max", "99999999999 1\n");
	ASSERT_EQ(3, limit());				/* the parent's is tighter */
	put("a/cpu.max", "max 100000\n");
	ASSERT_EQ(CPU_MAX_THREADS, limit());		/* clamped */
	put("proc-cgroup", "0::/../a\n");
	ASSERT_EQ(0, limit());				/* no way out of the root */
	/* v1: the cpu controller's folder, -1 for no limit, parents. */
	put("proc-cgroup", "4:memory:/m\n3:cpu,cpuacct:/c/d\n0::/\n");
	put("cpu,cpuacct/c/d/cpu.cfs_quota_us", "-1\n");
	put("cpu,cpuacct/c/d/cpu.cfs_period_us", "100000\n");
	ASSERT_EQ(0, limit());
	put("cpu,cpuacct/c/cpu.cfs_quota_us", "200000\n");
	put("cpu,cpuacct/c/cpu.cfs_period_us", "100000\n");
	ASSERT_EQ(2, limit());
	put("proc-cgroup", "3:cpuacct:/c/d\n");
	ASSERT_EQ(0, limit());				/* not the cpu controller */
	put("proc-cgroup", "no colons at all\n::\n7:cpu\n");
	ASSERT_EQ(0, limit());
	ASSERT_EQ(0, system("rm -rf /tmp/vnpu-cgroup-*"));
}

/* The load reader over fake /proc/stat files: which CPUs, what is busy. */
TEST(load_reading)
{
	struct cpu_load a, b;
	char path[96];
	cpu_set_t set;
	long hz = sysconf(_SC_CLK_TCK);

	ASSERT_NE(NULL, mkdtemp(strcpy(root, "/tmp/vnpu-stat-XXXXXX")));
	snprintf(path, sizeof(path), "%s/stat", root);
	CPU_ZERO(&set);
	CPU_SET(1, &set);
	CPU_SET(3, &set);
	ASSERT_EQ(-1, cpu_load_read(path, &set, sizeof(set), &a));	/* no file */
	/* The total line, cpu0 and cpu2 are not counted; cpu3's line is short. */
	put("stat", "cpu  900 900 900 900 900 900 900 900 0 0\n"
		    "cpu0 100 100 100 100 100 100 100 100 0 0\n"
		    "cpu1 1 2 3 1000 1000 4 5 6 0 0\n"
		    "cpu2 100 100 100 100 100 100 100 100 0 0\n"
		    "cpu3 7 7 7\n"
		    "intr 5 5 5\n");
	ASSERT_EQ(0, cpu_load_read(path, &set, sizeof(set), &a));
	ASSERT_EQ(21 * (1000000000 / hz), a.busy_ns);	/* all but idle and iowait */
	ASSERT_GT(a.wall_ns, 0);
	put("stat", "cpu0 1 1 1 1 1 1 1 1 0 0\ncpuX 1 1 1 1 1 1 1 1 0 0\n");
	ASSERT_EQ(-1, cpu_load_read(path, &set, sizeof(set), &b));	/* none in @set */
	put("stat", "");
	ASSERT_EQ(-1, cpu_load_read(path, &set, sizeof(set), &b));
	ASSERT_EQ(0, system("rm -rf /tmp/vnpu-stat-*"));

	/* 1 s: 1.5 CPUs busy, 1.2 of them this process's: others 0.3. */
	a = (struct cpu_load){ .wall_ns = 1000000000, .busy_ns = 0, .self_ns = 0 };
	b = (struct cpu_load){ .wall_ns = 2000000000, .busy_ns = 1500000000,
			       .self_ns = 1200000000 };
	ASSERT_EQ(300, cpu_load_others_mcpu(&a, &b));
	b.self_ns = 1600000000;		/* tick-sampled busy below our own time */
	ASSERT_EQ(0, cpu_load_others_mcpu(&a, &b));
	b.wall_ns = a.wall_ns;		/* no time between them */
	ASSERT_EQ(0, cpu_load_others_mcpu(&a, &b));
	b.wall_ns = a.wall_ns - 1;
	ASSERT_EQ(0, cpu_load_others_mcpu(&a, &b));
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
TEST(default_follows_affinity)
{
	cpu_set_t all, one;
	vnpu_core *core;
	int64_t n;

	ASSERT_EQ(0, sched_getaffinity(0, sizeof(all), &all));
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(one), &one));
	ASSERT_EQ(VNPU_OK, vnpu_core_create(&core));
	n = threads(core);
	vnpu_core_free(core);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(all), &all));
	ASSERT_EQ(1, n);

	ASSERT_EQ(VNPU_OK, vnpu_core_create(&core));
	n = threads(core);
	ASSERT_TRUE(n == cpu_default_threads() && n >= 1);
	ASSERT_LE(n, CPU_COUNT(&all));
	ASSERT_TRUE(name_says(core, n));
	vnpu_core_free(core);
}

static int run_relu(struct __test_metadata *_metadata, vnpu_core *core)
{
	vnpu_compiled_model *cm;
	vnpu_infer_request *req;
	vnpu_tensor *in, *out;
	vnpu_model *model;
	float *x, *y;
	int i, ok = 1;

	ASSERT_EQ(VNPU_OK, vnpu_core_read_model(core, RELU, &model));
	ASSERT_EQ(VNPU_OK, vnpu_core_compile_model(core, model, "CPU", NULL, &cm));
	vnpu_model_free(model);
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_input_tensor(req, 0, &in));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(in, (void **)&x));
	for (i = 0; i < 60; i++)
		x[i] = (float)(i - 30);
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_infer(req));
	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_output_tensor(req, 0, &out));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(out, (void **)&y));
	for (i = 0; i < 60; i++)
		ok &= y[i] == (i > 30 ? (float)(i - 30) : 0.0f);
	vnpu_tensor_free(in);
	vnpu_tensor_free(out);
	vnpu_infer_request_free(req);
	vnpu_compiled_model_free(cm);
	ASSERT_TRUE(ok);
	return 0;
}

TEST(set_and_refuse)
{
	vnpu_property_value v = { .type = VNPU_PROPERTY_INT }, *list;
	vnpu_core *core;
	int64_t def;
	uint32_t i;
	int rw = -1;

	ASSERT_EQ(VNPU_OK, vnpu_core_create(&core));
	def = threads(core);
	ASSERT_EQ(VNPU_OK,
		  vnpu_core_get_property(core, "CPU", VNPU_PROP_SUPPORTED_PROPERTIES, &list));
	for (i = 0; i < list->count; i++) {
		if (!strcmp(list->items[i], VNPU_PROP_INFERENCE_NUM_THREADS))
			rw = list->writable[i];
	}
	vnpu_property_value_free(list);
	ASSERT_EQ(1, rw);
	ASSERT_EQ(VNPU_OK,
		  vnpu_core_set_property_str(core, "CPU", VNPU_PROP_INFERENCE_NUM_THREADS, "3"));
	ASSERT_TRUE(threads(core) == 3 && name_says(core, 3));
	v.integer = 65;
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_core_set_property(core, "CPU", VNPU_PROP_INFERENCE_NUM_THREADS, &v));
	ASSERT_NE(NULL, strstr(vnpu_last_error(), "out of range"));
	v.integer = -1;
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_core_set_property(core, "CPU", VNPU_PROP_INFERENCE_NUM_THREADS, &v));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_core_set_property_str(core, "CPU", VNPU_PROP_INFERENCE_NUM_THREADS,
						"two"));
	ASSERT_FAILS(VNPU_INVALID_ARGUMENT,
		     vnpu_core_set_property_str(core, "CPU", VNPU_PROP_INFERENCE_NUM_THREADS,
						"YES"));
	ASSERT_FAILS(VNPU_NOT_FOUND,
		     vnpu_core_set_property_str(core, NULL, VNPU_PROP_INFERENCE_NUM_THREADS, "2"));
	ASSERT_EQ(3, threads(core));			/* refused: unchanged */
	ASSERT_EQ(VNPU_OK,
		  vnpu_core_set_property_str(core, "CPU", VNPU_PROP_INFERENCE_NUM_THREADS, "0"));
	ASSERT_EQ(def, threads(core));			/* 0: the default again */
	ASSERT_EQ(VNPU_OK,
		  vnpu_core_set_property_str(core, "CPU", VNPU_PROP_INFERENCE_NUM_THREADS, "3"));
	ASSERT_EQ(0, run_relu(_metadata, core));
	/* The threads run now: the same count is taken, another refused. */
	ASSERT_EQ(VNPU_OK,
		  vnpu_core_set_property_str(core, "CPU", VNPU_PROP_INFERENCE_NUM_THREADS, "3"));
	ASSERT_FAILS(VNPU_BUSY,
		     vnpu_core_set_property_str(core, "CPU", VNPU_PROP_INFERENCE_NUM_THREADS, "1"));
	ASSERT_EQ(3, threads(core));
	vnpu_core_free(core);

	/* One thread runs every job too. */
	ASSERT_EQ(VNPU_OK, vnpu_core_create(&core));
	ASSERT_EQ(VNPU_OK,
		  vnpu_core_set_property_str(core, "CPU", VNPU_PROP_INFERENCE_NUM_THREADS, "1"));
	ASSERT_EQ(0, run_relu(_metadata, core));
	vnpu_core_free(core);
}

/*
 * The arena plan from the round trips between tiles: the first reading
 * that says something decides; then apart only after CPU_RT_STREAK
 * readings in a row say so, and back likewise; readings between the
 * thresholds, past CPU_RT_MAX_NS or missing say nothing.
 */
TEST(plan_from_round_trips)
{
	struct cpu_plan p = { 0 }, q = { 0 };

	ASSERT_EQ(2, CPU_RT_STREAK);
	/* The first reading that says something: apart at once. */
	EXPECT_FALSE(cpu_plan_update(&q, -1));
	EXPECT_FALSE(cpu_plan_update(&q, 200));
	EXPECT_FALSE(cpu_plan_update(&q, 5000));
	EXPECT_FALSE(q.known);
	EXPECT_TRUE(cpu_plan_update(&q, 320));
	EXPECT_TRUE(q.known);
	EXPECT_TRUE(cpu_plan_update(&q, 60));
	EXPECT_FALSE(cpu_plan_update(&q, 60));
	/* Near, then one noisy apart reading: still near. */
	EXPECT_FALSE(cpu_plan_update(&p, 60));
	EXPECT_FALSE(cpu_plan_update(&p, 330));
	EXPECT_FALSE(cpu_plan_update(&p, 70));
	EXPECT_FALSE(cpu_plan_update(&p, 330));
	/* Two apart in a row, with nothing said between them. */
	EXPECT_FALSE(cpu_plan_update(&p, 200));
	EXPECT_FALSE(cpu_plan_update(&p, -1));
	EXPECT_FALSE(cpu_plan_update(&p, 50000));
	EXPECT_TRUE(cpu_plan_update(&p, 300));
	EXPECT_TRUE(p.apart);
	/* The thresholds: CPU_RT_APART_NS counts apart, CPU_RT_NEAR_NS near. */
	EXPECT_TRUE(cpu_plan_update(&p, CPU_RT_APART_NS));
	EXPECT_TRUE(cpu_plan_update(&p, CPU_RT_NEAR_NS + 1));
	EXPECT_TRUE(cpu_plan_update(&p, CPU_RT_APART_NS - 1));
	EXPECT_TRUE(cpu_plan_update(&p, CPU_RT_NEAR_NS));
	/* An apart reading between two near ones starts their count again. */
	EXPECT_TRUE(cpu_plan_update(&p, CPU_RT_MAX_NS));
	EXPECT_TRUE(cpu_plan_update(&p, CPU_RT_NEAR_NS));
	EXPECT_TRUE(cpu_plan_update(&p, 200));
	EXPECT_FALSE(cpu_plan_update(&p, CPU_RT_NEAR_NS));
	EXPECT_FALSE(p.apart);
	/* The far end of the range still counts; past it, nothing. */
	EXPECT_FALSE(cpu_plan_update(&p, CPU_RT_MAX_NS + 1));
	EXPECT_FALSE(cpu_plan_update(&p, CPU_RT_MAX_NS + 1));
	EXPECT_FALSE(cpu_plan_update(&p, CPU_RT_MAX_NS));
	EXPECT_TRUE(cpu_plan_update(&p, CPU_RT_MAX_NS));
	/* Zero is a reading (near), not a missing one. */
	EXPECT_TRUE(cpu_plan_update(&p, 0));
	EXPECT_FALSE(cpu_plan_update(&p, 0));
}

KSFT_MAIN

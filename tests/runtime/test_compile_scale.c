// SPDX-License-Identifier: MIT
/*
 * Querying, compiling, exporting and importing models of 262144 ops: the
 * test writes ONNX models in memory (a chain of Add and Relu, a chain of
 * MatMul blocks the passes fuse, a Scan unrolled over 65536 steps) and
 * checks what each computes. At that size a compiler whose time grows
 * with the square of the op count runs for over half an hour (each model
 * several minutes: meson's timeout ends it), a linear one for seconds;
 * the test itself measures no time. Also: querying the node suite's
 * Loops over sequences, which the compiler cannot unroll (this crashed).
 * The arena planner with thousands of buffers alive together: random
 * lifetimes (seeded), each plan checked by a sweep of the test's own.
 *
 *   test-runtime-compile-scale            the tests on every device
 *   test-runtime-compile-scale --bench KIND OPS [DEVICE]
 *       print how long reading, querying, compiling, exporting, importing
 *       and one inference take for a model of KIND (chain, fused, scan)
 *       with about OPS ops
 *   test-runtime-compile-scale --bench plan BUFFERS [ALIVE]
 *       plan BUFFERS random buffers, about ALIVE (BUFFERS / 10) alive at
 *       each step: print the time, the arena bytes and the most bytes
 *       alive at one step
 *   test-runtime-compile-scale --bench stack STEPS
 *       print the bytes the COPY commands of an unrolled Scan write (its
 *       outputs stacked) for 16, 64, ... up to STEPS steps
 *   test-runtime-compile-scale --arena MODEL...
 *       compile each model (dynamic input dimensions 1, or 512 when 1
 *       does not compile) and print its arena bytes and their total
 */
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include <drm/vnpu_cmd.h>
#include <drm/vnpu_layers.h>

#include "compiler/compiler.h"
#include "runtime_test.h"
#include "onnx_writer.h"

#define WIDTH 4		/* elements per row */

/* ---- the models ---- */

enum kind { CHAIN, FUSED, SCAN };

static const char *const kind_names[] = { "chain", "fused", "scan" };

/* Ops of each kind's repeating unit (a Scan step: Gather, Add, Identity,
 * Reshape, and a Concat per 64 steps). */
static const int64_t unit_ops[] = { 2, 5, 4 };

static void name_of(char *buf, const char *prefix, int64_t i)
{
	snprintf(buf, 32, "%s%lld", prefix, (long long)i);
}

/*
 * chain: y = x, then @units times y = Relu(y + 1).
 * fused: @units times y = Reshape(Identity(Relu(MatMul(y, I) + 1))), the
 * MatMul, Add and Relu fused into one layer, Identity and Reshape views
 * (to [1, 1, WIDTH] and back in turn, so the views alias).
 * Both give x + @units for x >= 0; x is f32[1, WIDTH].
 */
static void write_chain(struct pb *g, enum kind kind, int64_t units)
{
	static const int64_t row[2] = { 1, WIDTH }, mat[2] = { WIDTH, WIDTH };
	static const int64_t row3[3] = { 1, 1, WIDTH }, two = 2, three = 3;
	static const float one = 1.0f;
	float ident[WIDTH * WIDTH] = { 0 }, bias[WIDTH];
	char prev[32] = "x", a[32], b[32];

	for (int i = 0; i < WIDTH; i++) {
		ident[i * WIDTH + i] = 1.0f;
		bias[i] = 1.0f;
	}
	pb_str(g, GRAPH_NAME, kind_names[kind]);
	onnx_init(g, "one", ONNX_FLOAT, 0, NULL, &one, sizeof(one));
	onnx_init(g, "ident", ONNX_FLOAT, 2, mat, ident, sizeof(ident));
	onnx_init(g, "bias", ONNX_FLOAT, 1, &mat[1], bias, sizeof(bias));
	onnx_init(g, "row", ONNX_INT64, 1, &two, row, sizeof(row));
	onnx_init(g, "row3", ONNX_INT64, 1, &three, row3, sizeof(row3));
	for (int64_t u = 0; u < units; u++) {
		const char *in[2] = { prev, kind == CHAIN ? "one" : "ident" };

		name_of(a, "a", u);
		name_of(b, "b", u);
		onnx_node(g, kind == CHAIN ? "Add" : "MatMul", in, 2, a);
		if (kind == FUSED) {
			in[0] = a;
			in[1] = "bias";
			onnx_node(g, "Add", in, 2, b);
			memcpy(a, b, sizeof(a));
		}
		name_of(b, u + 1 == units ? "y" : "r", u);
		in[0] = a;
		onnx_node(g, "Relu", in, 1, u + 1 == units ? "y" : b);
		if (kind == FUSED && u + 1 < units) {
			name_of(a, "i", u);
			in[0] = b;
			onnx_node(g, "Identity", in, 1, a);
			name_of(b, "s", u);
			in[0] = a;
			in[1] = u % 2 ? "row" : "row3";
			onnx_node(g, "Reshape", in, 2, b);
		}
		memcpy(prev, b, sizeof(prev));
	}
	onnx_value(g, GRAPH_INPUT, "x", 2, row);
	onnx_value(g, GRAPH_OUTPUT, "y", -1, NULL);
}

/*
 * scan: Scan over x f32[@steps, WIDTH] from s0 f32[WIDTH], the body
 * s = s + x_t with s the scan output too: y the sum, z the running sums.
 */
static void write_scan(struct pb *g, int64_t steps)
{
	const int64_t vec = WIDTH, xs[2] = { steps, WIDTH };
	struct pb body = { 0 }, attr = { 0 }, nsi = { 0 };
	const char *add_in[2] = { "s", "xt" }, *id_in[1] = { "s1" };
	const char *scan_in[2] = { "s0", "x" };
	struct pb n = { 0 };

	pb_str(&body, GRAPH_NAME, "body");
	onnx_node(&body, "Add", add_in, 2, "s1");
	onnx_node(&body, "Identity", id_in, 1, "t");
	onnx_value(&body, GRAPH_INPUT, "s", 1, &vec);
	onnx_value(&body, GRAPH_INPUT, "xt", 1, &vec);
	onnx_value(&body, GRAPH_OUTPUT, "s1", 1, &vec);
	onnx_value(&body, GRAPH_OUTPUT, "t", 1, &vec);
	pb_str(&attr, ATTR_NAME, "body");
	pb_int(&attr, ATTR_TYPE, ATTR_GRAPH);
	pb_msg(&attr, ATTR_G, &body);
	pb_str(&nsi, ATTR_NAME, "num_scan_inputs");
	pb_int(&nsi, ATTR_TYPE, ATTR_INT);
	pb_int(&nsi, ATTR_I, 1);
	for (int k = 0; k < 2; k++)
		pb_str(&n, NODE_INPUT, scan_in[k]);
	pb_str(&n, NODE_OUTPUT, "y");
	pb_str(&n, NODE_OUTPUT, "z");
	pb_str(&n, NODE_OP, "Scan");
	pb_msg(&n, NODE_ATTR, &attr);
	pb_msg(&n, NODE_ATTR, &nsi);
	pb_str(g, GRAPH_NAME, "scan");
	pb_msg(g, GRAPH_NODE, &n);
	onnx_value(g, GRAPH_INPUT, "s0", 1, &vec);
	onnx_value(g, GRAPH_INPUT, "x", 2, xs);
	onnx_value(g, GRAPH_OUTPUT, "y", 1, &vec);
	onnx_value(g, GRAPH_OUTPUT, "z", 2, xs);
	pb_free(&body);
	pb_free(&attr);
	pb_free(&nsi);
	pb_free(&n);
}

/* A model of @kind with @units repeating units, read through @core. */
static int make_model(struct __test_metadata *_metadata, vnpu_core *core, enum kind kind,
		      int64_t units, vnpu_model **out)
{
	struct pb g = { 0 }, model = { 0 };
	vnpu_status st;

	if (kind == SCAN)
		write_scan(&g, units);
	else
		write_chain(&g, kind, units);
	onnx_model(&model, &g, 17);
	pb_free(&g);
	ASSERT_TRUE(!model.failed);
	st = vnpu_core_read_model_from_memory(core, model.data, model.len, out);
	pb_free(&model);
	ASSERT_EQ(VNPU_OK, st);
	return 0;
}

/* ---- running them ---- */

static int set_input(struct __test_metadata *_metadata, vnpu_infer_request *req, const char *name,
		     int64_t n,
		     float (*value)(int64_t i))
{
	vnpu_tensor *t;
	uint64_t size;
	float *p;

	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_tensor(req, name, &t));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_size(t, &size));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(t, (void **)&p));
	ASSERT_EQ((uint64_t)n, size);
	for (int64_t i = 0; i < n; i++)
		p[i] = value(i);
	vnpu_tensor_free(t);
	return 0;
}

/* Output @name has @n elements, element i being want(i, @arg). */
static int check_output(struct __test_metadata *_metadata, vnpu_infer_request *req,
			const char *name, int64_t n,
			float (*want)(int64_t i, int64_t arg), int64_t arg)
{
	vnpu_tensor *t;
	uint64_t size;
	float *p;
	int ret = 0;

	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_tensor(req, name, &t));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_size(t, &size));
	ASSERT_EQ(VNPU_OK, vnpu_tensor_get_data(t, (void **)&p));
	ASSERT_EQ((uint64_t)n, size);
	for (int64_t i = 0; i < n && !ret; i++) {
		if (p[i] != want(i, arg)) {
			TH_LOG("%s[%lld] = %g, want %g", name, (long long)i, p[i],
				want(i, arg));
			ret = 1;
		}
	}
	vnpu_tensor_free(t);
	return ret;
}

static float x_value(int64_t i)
{
	return (float)(i % WIDTH);
}

/* s0 and every row of x: 0, 1, 2, 3 (sums stay exact in f32). */
static float plus_units(int64_t i, int64_t units)
{
	return x_value(i) + (float)units;
}

/* y = s0 + every row of x = (@steps + 1) * column. */
static float scan_sum(int64_t i, int64_t steps)
{
	return (float)(steps + 1) * x_value(i);
}

/* z[t] = s0 + x[0] + ... + x[t] = (t + 2) * column. */
static float running_sum(int64_t i, int64_t unused)
{
	(void)unused;
	return (float)(i / WIDTH + 2) * x_value(i);
}

/* The layers the device ran: a chain's Adds and Relus joined into CHAIN
 * layers of VNPU_CHAIN_MAX_STEPS steps, a fused chain's MatMul, Add and
 * Relu as one. */
static int check_layers(struct __test_metadata *_metadata, vnpu_infer_request *req, enum kind kind,
			int64_t units)
{
	vnpu_profiling_info *info;
	int64_t layers = 0;
	int ret = 0;

	ASSERT_EQ(VNPU_OK, vnpu_infer_request_get_profiling_info(req, &info));
	for (uint32_t i = 0; i < info->count; i++) {
		const char *type = info->entries[i].node_type;

		if (!strcmp(type, "Stage"))
			continue;
		layers++;
		if (((kind == FUSED && strcmp(type, "MatMul+Add+Relu")) ||
		     (kind == CHAIN && strncmp(type, "Add+Relu", 8))) && !ret) {
			TH_LOG("layer %lld is a %s", (long long)layers, type);
			ret = 1;
		}
	}
	vnpu_profiling_info_free(info);
	if (!ret && layers != (kind == CHAIN ? (2 * units + VNPU_CHAIN_MAX_STEPS - 1) /
					   VNPU_CHAIN_MAX_STEPS : units)) {
		TH_LOG("%lld layers for %lld units", (long long)layers,
			(long long)units);
		ret = 1;
	}
	return ret;
}

/* Run @cm once and check its outputs (and its layers when @profiled). */
static int run_and_check(struct __test_metadata *_metadata, vnpu_compiled_model *cm, enum kind kind,
			 int64_t units,
			 bool profiled)
{
	vnpu_infer_request *req;
	int ret;

	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_create_infer_request(cm, &req));
	if (kind == SCAN)
		ret = set_input(_metadata, req, "s0", WIDTH, x_value) ||
		      set_input(_metadata, req, "x", units * WIDTH, x_value);
	else
		ret = set_input(_metadata, req, "x", WIDTH, x_value);
	if (!ret && vnpu_infer_request_infer(req)) {
		TH_LOG("infer: %s", vnpu_last_error());
		ret = 1;
	}
	if (!ret && kind == SCAN)
		ret = check_output(_metadata, req, "y", WIDTH, scan_sum, units) ||
		      check_output(_metadata, req, "z", units * WIDTH, running_sum, 0);
	if (!ret && kind != SCAN)
		ret = check_output(_metadata, req, "y", WIDTH, plus_units, units);
	if (!ret && kind != SCAN && profiled)
		ret = check_layers(_metadata, req, kind, units);
	vnpu_infer_request_free(req);
	return ret;
}

/* Every node of the model is placed on a device (or folded into one). */
static int check_query(struct __test_metadata *_metadata, vnpu_core *core, const vnpu_model *m,
		       const char *device)
{
	vnpu_query_report *r;
	size_t nodes;

	ASSERT_EQ(VNPU_OK, vnpu_model_get_ops_size(m, &nodes));
	ASSERT_EQ(VNPU_OK, vnpu_core_query_model(core, m, device, &r));
	ASSERT_EQ(nodes, r->count);
	for (size_t i = 0; i < r->count; i++) {
		if (!r->entries[i].device) {
			TH_LOG("node %zu (%s): %s", i, r->entries[i].op_type,
				r->entries[i].reason);
			vnpu_query_report_free(r);
			return 1;
		}
	}
	vnpu_query_report_free(r);
	return 0;
}

/* Query, compile, export and import a model of @kind of about @ops ops on
 * @device; run what was imported and check its outputs. */
static int compile_check(struct __test_metadata *_metadata, vnpu_core *core, const char *device,
			 enum kind kind, int64_t ops)
{
	static const char *const profiling[] = { VNPU_PROP_ENABLE_PROFILING, "YES", NULL };
	int64_t units = ops / unit_ops[kind];
	vnpu_compiled_model *cm;
	vnpu_model *m;
	size_t size;
	void *blob;
	int ret;

	ASSERT_EQ(0, make_model(_metadata, core, kind, units, &m));
	ret = check_query(_metadata, core, m, device);
	if (!ret && vnpu_core_compile_model(core, m, device, profiling, &cm)) {
		TH_LOG("compile: %s", vnpu_last_error());
		ret = 1;
	}
	vnpu_model_free(m);
	if (ret)
		return ret;
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_export(cm, &blob, &size));
	vnpu_compiled_model_free(cm);
	ASSERT_EQ(VNPU_OK, vnpu_core_import_model(core, blob, size, device, &cm));
	vnpu_free(blob);
	ret = run_and_check(_metadata, cm, kind, units, true);
	vnpu_compiled_model_free(cm);
	return ret;
}

TEST_F(dev, chain_262144_ops)
{
	vnpu_core *core = self->core;
	const char *device = self->device;

	ASSERT_EQ(0, compile_check(_metadata, core, device, CHAIN, 262144));
}

TEST_F(dev, fused_262144_ops)
{
	vnpu_core *core = self->core;
	const char *device = self->device;

	ASSERT_EQ(0, compile_check(_metadata, core, device, FUSED, 262144));
}

TEST_F(dev, scan_65536_steps)
{
	vnpu_core *core = self->core;
	const char *device = self->device;

	ASSERT_EQ(0, compile_check(_metadata, core, device, SCAN, 65536 * unit_ops[SCAN]));
}

/* A Loop over sequences is answered (no device, and why), not a crash. */
TEST_F(dev, query_sequence_loops)
{
	vnpu_core *core = self->core;
	const char *device = self->device;

	static const char *const models[] = {
		"test_loop13_seq", "test_loop16_seq_none",
		"test_sequence_map_add_1_sequence_1_tensor_expanded",
		"test_sequence_map_add_2_sequences_expanded",
		"test_sequence_map_extract_shapes_expanded",
		"test_sequence_map_identity_1_sequence_1_tensor_expanded",
		"test_sequence_map_identity_1_sequence_expanded",
		"test_sequence_map_identity_2_sequences_expanded",
	};

	for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++) {
		char path[256];
		vnpu_query_report *r;
		vnpu_model *m;
		size_t loops = 0;

		snprintf(path, sizeof(path), "/usr/share/libonnx-testdata/data/node/%s/model.onnx",
			 models[i]);
		if (access(path, R_OK)) {
			TH_LOG("no %s", path);
			continue;
		}
		ASSERT_EQ(VNPU_OK, vnpu_core_read_model(core, path, &m));
		ASSERT_EQ(VNPU_OK, vnpu_core_query_model(core, m, device, &r));
		vnpu_model_free(m);
		for (uint32_t e = 0; e < r->count; e++) {
			if (strcmp(r->entries[e].op_type, "Loop"))
				continue;
			loops++;
			ASSERT_TRUE(!r->entries[e].device && r->entries[e].reason[0]);
		}
		vnpu_query_report_free(r);
		ASSERT_EQ(1, loops);
	}
}

/* ---- the arena planner with many buffers alive together ---- */

static uint32_t rng(uint64_t *state)
{
	*state = *state * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(*state >> 33);
}

/*
 * @n buffers with about @alive of them alive at every step: four start at
 * each step and live a random number of steps (mean @alive / 4); sizes
 * log-uniform from 1 byte to 1 MiB, one in 16 empty, one in 64 with a
 * last step before its first (it lives its first step only).
 */
static void random_bufs(struct vnpu_plan_buf *b, uint32_t n, uint32_t alive, uint64_t seed)
{
	uint32_t span = alive / 2 > 1 ? alive / 2 : 1, bits;

	for (uint32_t i = 0; i < n; i++) {
		b[i].first = i / 4;
		b[i].last = b[i].first + rng(&seed) % span;
		if (b[i].first && rng(&seed) % 64 == 0)
			b[i].last = b[i].first - 1;
		/* One call per statement: the same sizes from every compiler. */
		bits = rng(&seed) % 21;
		b[i].size = 1 + rng(&seed) % (1u << bits);
		if (rng(&seed) % 16 == 0)
			b[i].size = 0;
		b[i].offset = UINT64_MAX;
	}
}

struct start {
	uint32_t first, index;
};

static int by_start(const void *a, const void *b)
{
	const struct start *x = a, *y = b;

	if (x->first != y->first)
		return x->first < y->first ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static uint32_t last_step(const struct vnpu_plan_buf *b)
{
	return b->last > b->first ? b->last : b->first;
}

/*
 * The plan's own check, not the planner's code: offsets aligned and inside
 * @arena, and no two non-empty buffers alive at a common step share a
 * byte. Two lifetimes meet when one starts while the other is alive, so a
 * sweep over the starts compares each buffer with those alive then. The
 * most bytes alive at one step (a bound no plan beats) in *@peak.
 */
static int check_plan(struct __test_metadata *_metadata, const struct vnpu_plan_buf *b, uint32_t n,
		      uint64_t align,
		      uint64_t arena, uint64_t *peak)
{
	struct start *order = malloc((n ? n : 1) * sizeof(*order));
	uint32_t *live = malloc((n ? n : 1) * sizeof(*live)), num_live = 0;
	uint64_t live_bytes = 0;
	int ret = 0;

	ASSERT_TRUE(order && live);
	*peak = 0;
	for (uint32_t i = 0; i < n; i++)
		order[i] = (struct start){ b[i].first, i };
	qsort(order, n, sizeof(*order), by_start);
	for (uint32_t k = 0; k < n && !ret; k++) {
		const struct vnpu_plan_buf *x = &b[order[k].index];

		if (x->offset % align || x->offset + x->size > arena) {
			TH_LOG("buffer %u: offset %llu, %llu bytes, arena %llu",
				order[k].index, (unsigned long long)x->offset,
				(unsigned long long)x->size, (unsigned long long)arena);
			ret = 1;
		}
		for (uint32_t j = 0; j < num_live && !ret;) {
			const struct vnpu_plan_buf *y = &b[live[j]];

			if (last_step(y) < x->first) {
				live_bytes -= y->size;
				live[j] = live[--num_live];
				continue;
			}
			if (x->size && y->size && x->offset < y->offset + y->size &&
			    y->offset < x->offset + x->size) {
				TH_LOG("buffers %u and %u overlap", order[k].index,
					live[j]);
				ret = 1;
			}
			j++;
		}
		live[num_live++] = order[k].index;
		live_bytes += x->size;
		if (live_bytes > *peak)
			*peak = live_bytes;
	}
	free(order);
	free(live);
	return ret;
}

/* Plans of @n random buffers, about @alive alive together, are valid,
 * no larger than the sum of their sizes and, from 1000 buffers on,
 * within a quarter (and the alignment of those alive) of the most bytes
 * alive at one step (1.00-1.15 times it here). */
static int plan_random(struct __test_metadata *_metadata, uint32_t n, uint32_t alive, uint64_t seed)
{
	struct vnpu_plan_buf *b = malloc(n * sizeof(*b));
	uint64_t arena, sum = 0, peak;
	int ret;

	ASSERT_NE(NULL, b);
	random_bufs(b, n, alive, seed);
	for (uint32_t i = 0; i < n; i++)
		sum += (b[i].size + VNPU_COMPILE_ALIGN - 1) / VNPU_COMPILE_ALIGN * VNPU_COMPILE_ALIGN;
	arena = vnpu_plan_arena(b, n, VNPU_COMPILE_ALIGN);
	ret = check_plan(_metadata, b, n, VNPU_COMPILE_ALIGN, arena, &peak);
	free(b);
	ASSERT_TRUE(!ret);
	ASSERT_TRUE(arena <= sum && arena >= peak);
	ASSERT_TRUE(n < 1000 || arena <= peak + peak / 4 + (uint64_t)alive * VNPU_COMPILE_ALIGN);
	return 0;
}

TEST_F(dev, plan_many_alive)
{
	static const uint32_t cases[][2] = {
		{ 1, 1 }, { 7, 3 }, { 100, 10 }, { 1000, 1000 }, { 5000, 40 }, { 20000, 2000 },
		{ 20000, 6000 },	/* past the greedy planner's budget */
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		for (uint64_t seed = 1; seed <= (cases[c][0] < 1000 ? 20 : 2); seed++) {
			ASSERT_EQ(0, plan_random(_metadata, cases[c][0], cases[c][1], seed))
				TH_LOG("%u buffers, %u alive, seed %llu", cases[c][0],
				       cases[c][1], (unsigned long long)seed);
		}
	}
}

/* ---- --bench ---- */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Print the seconds since *@t under @what and restart the clock. */
static void lap(double *t, const char *what)
{
	double t1 = now();

	printf(" %s %.3f s", what, t1 - *t);
	fflush(stdout);
	*t = t1;
}

/* Plan @n random buffers, about @alive alive together: time and bytes. */
static int bench_plan(struct __test_metadata *_metadata, uint32_t n, uint32_t alive)
{
	struct vnpu_plan_buf *b = malloc((n ? n : 1) * sizeof(*b));
	uint64_t arena, peak, sum = 0;
	double t;
	int ret;

	ASSERT_NE(NULL, b);
	if (!alive)
		alive = n / 10 ? n / 10 : 1;
	random_bufs(b, n, alive, 1);
	for (uint32_t i = 0; i < n; i++)
		sum += b[i].size;
	t = now();
	arena = vnpu_plan_arena(b, n, VNPU_COMPILE_ALIGN);
	t = now() - t;
	ret = check_plan(_metadata, b, n, VNPU_COMPILE_ALIGN, arena, &peak);
	printf("plan %u buffers, about %u alive: %.3f s, arena %llu bytes (peak alive %llu, "
	       "%.3fx; all %llu)%s\n", n, alive, t, (unsigned long long)arena,
	       (unsigned long long)peak, peak ? (double)arena / (double)peak : 0.0,
	       (unsigned long long)sum, ret ? " INVALID" : "");
	free(b);
	return ret;
}

/* Bytes the COPY commands of @p write. */
static uint64_t copied_bytes(const struct vnpu_program *p)
{
	uint64_t bytes = 0;

	for (uint32_t g = 0; g < p->num_segments; g++) {
		const uint8_t *c = p->segments[g].cmd, *end = c + p->segments[g].cmd_size;

		while (c + sizeof(struct vnpu_cmd_header) <= end) {
			struct vnpu_cmd_header h;
			struct vnpu_cmd_copy copy;
			uint64_t elems = 1;

			memcpy(&h, c, sizeof(h));
			if (h.size < sizeof(h))
				break;
			if (h.opcode == VNPU_CMD_COPY && h.size >= sizeof(copy)) {
				memcpy(&copy, c, sizeof(copy));
				for (uint32_t d = 0; d < copy.dst.rank && d < VNPU_MAX_DIMS; d++)
					elems *= copy.dst.dims[d];
				bytes += elems * vnpu_element_type_size(copy.dst.dtype);
			}
			c += h.size;
		}
	}
	return bytes;
}

/* Compile a Scan of @steps steps (internally) and count what it copies. */
static int scan_copies(struct __test_metadata *_metadata, vnpu_core *core, int64_t steps,
		       uint64_t *bytes, double *seconds)
{
	struct vnpu_program *p;
	vnpu_model *m;
	double t;

	ASSERT_EQ(0, make_model(_metadata, core, SCAN, steps, &m));
	t = now();
	ASSERT_EQ(VNPU_OK, vnpu_compile(m, NULL, &p));
	*seconds = now() - t;
	*bytes = copied_bytes(p);
	vnpu_program_free(p);
	vnpu_model_free(m);
	return 0;
}

/* Read @file with every dynamic input dimension set to @dim. */
static vnpu_model *read_static(const char *file, int64_t dim)
{
	vnpu_model *m;
	size_t inputs;

	if (vnpu_model_read_file(file, &m))
		return NULL;
	if (vnpu_model_get_inputs_size(m, &inputs))
		return m;
	for (size_t i = 0; i < inputs; i++) {
		const char *name;
		vnpu_shape shape;

		if (vnpu_model_input_shape(m, i, &shape) || vnpu_model_input_name(m, i, &name))
			continue;
		for (uint32_t d = 0; d < shape.rank; d++)
			if (shape.dims[d] == VNPU_DIM_DYNAMIC)
				shape.dims[d] = dim;
		if (vnpu_model_reshape(m, name, &shape))
			break;	/* the compile says why */
	}
	return m;
}

/* Compile each model file (dynamic input dimensions 1, or 512 where 1
 * does not compile) and print its arena bytes, then their total. */
static int bench_arena(char **files, int num)
{
	uint64_t total = 0, all = 0;
	int compiled = 0;

	for (int f = 0; f < num; f++) {
		struct vnpu_program *p = NULL;

		for (int64_t dim = 1; !p && dim <= 512; dim *= 512) {
			vnpu_model *m = read_static(files[f], dim);

			if (m && vnpu_compile(m, NULL, &p))
				p = NULL;
			vnpu_model_free(m);
		}
		if (!p)
			continue;
		printf("%s %llu %llu\n", files[f], (unsigned long long)p->arena_size,
		       (unsigned long long)p->intermediates_size);
		total += p->arena_size;
		all += p->intermediates_size;
		compiled++;
		vnpu_program_free(p);
	}
	printf("arena total %llu bytes over %d of %d models (unplanned %llu)\n",
	       (unsigned long long)total, compiled, num, (unsigned long long)all);
	return 0;
}

/* A Scan's copies and compile time for 16, 64, ... up to @max steps. */
static int bench_stack(struct __test_metadata *_metadata, int64_t max)
{
	vnpu_core *core;
	int ret = 0;

	ASSERT_EQ(VNPU_OK, vnpu_core_create(&core));
	for (int64_t steps = 16; steps <= max && !ret; steps = steps * 4 > max && steps < max ?
								 max : steps * 4) {
		uint64_t bytes;
		double t;

		ret = scan_copies(_metadata, core, steps, &bytes, &t);
		if (!ret)
			printf("scan %lld steps: compile %.3f s, copies %llu bytes (%.1f per output "
			       "byte)\n", (long long)steps, t, (unsigned long long)bytes,
			       (double)bytes / (double)(steps * WIDTH * sizeof(float)));
	}
	vnpu_core_free(core);
	return ret;
}

/*
 * A Scan's stacked output is right for steps around the 64 inputs of one
 * Concat and its powers, and each step computes its row in place in the
 * stacked output: the Concats copy only the last row, whose state is the
 * model's other output as well (they copied each byte once per level of
 * Concats, three times beyond 4096 steps).
 */
TEST_F(dev, scan_stack_copies)
{
	vnpu_core *core = self->core;
	const char *device = self->device;
	static const int64_t steps[] = { 1, 2, 63, 64, 65, 127, 129, 4095, 4097, 20000 };

	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		uint64_t bytes, row = WIDTH * sizeof(float);
		double t;

		ASSERT_EQ(0, compile_check(_metadata, core, device, SCAN,
					   steps[i] * unit_ops[SCAN]))
			TH_LOG("scan of %lld steps", (long long)steps[i]);
		ASSERT_EQ(0, scan_copies(_metadata, core, steps[i], &bytes, &t))
			TH_LOG("scan of %lld steps", (long long)steps[i]);
		ASSERT_EQ(row, bytes)
			TH_LOG("scan of %lld steps copies %llu bytes, not one row (%llu)",
			       (long long)steps[i], (unsigned long long)bytes,
			       (unsigned long long)row);
	}
}

static int bench(struct __test_metadata *_metadata, const char *kind_name, const char *ops_arg,
		 const char *device)
{
	vnpu_compiled_model *cm, *cm2;
	enum kind kind = CHAIN;
	vnpu_query_report *r;
	vnpu_core *core;
	int64_t ops = strtoll(ops_arg, NULL, 0), units;
	vnpu_model *m;
	size_t size;
	double t;
	void *blob;
	int ret;

	while (kind <= SCAN && strcmp(kind_names[kind], kind_name))
		kind++;
	if (kind > SCAN || ops < unit_ops[kind]) {
		TH_LOG("--bench KIND OPS [DEVICE]: KIND is chain, fused or scan");
		return 2;
	}
	units = ops / unit_ops[kind];
	ASSERT_EQ(VNPU_OK, vnpu_core_create(&core));
	printf("%s %lld ops (%lld units) on %s:", kind_names[kind],
	       (long long)(units * unit_ops[kind]), (long long)units, device);
	t = now();
	ASSERT_EQ(0, make_model(_metadata, core, kind, units, &m));
	lap(&t, "read");
	ASSERT_EQ(VNPU_OK, vnpu_core_compile_model(core, m, device, NULL, &cm));
	lap(&t, "compile");
	ASSERT_EQ(VNPU_OK, vnpu_compiled_model_export(cm, &blob, &size));
	lap(&t, "export");
	ASSERT_EQ(VNPU_OK, vnpu_core_import_model(core, blob, size, device, &cm2));
	lap(&t, "import");
	vnpu_free(blob);
	ret = run_and_check(_metadata, cm2, kind, units, false);
	lap(&t, ret ? "infer+check WRONG OUTPUT" : "infer+check");
	ASSERT_EQ(VNPU_OK, vnpu_core_query_model(core, m, device, &r));
	lap(&t, "query");
	printf("\n");
	vnpu_query_report_free(r);
	vnpu_model_free(m);
	vnpu_compiled_model_free(cm2);
	vnpu_compiled_model_free(cm);
	vnpu_core_free(core);
	return ret;
}

KSFT_MAIN_ORDER

int main(int argc, char **argv)
{
	/* The figures of --bench run outside the harness: a failed ASSERT there ends it with 1. */
	struct __test_metadata bench_md = { .name = "bench", .passed = 1 };
	struct __test_metadata *_metadata = &bench_md;

	if (setjmp(bench_md.env))
		return 1;
	if (argc > 1 && !strcmp(argv[1], "--arena"))
		return bench_arena(argv + 2, argc - 2);
	if (argc > 1 && !strcmp(argv[1], "--bench")) {
		if (argc < 4) {
			fprintf(stderr, "usage: %s --bench chain|fused|scan OPS [DEVICE]\n"
				"       %s --bench plan BUFFERS [ALIVE]\n"
				"       %s --bench stack STEPS\n"
				"       %s --arena MODEL...\n", argv[0], argv[0], argv[0], argv[0]);
			return 2;
		}
		if (!strcmp(argv[2], "plan"))
			return bench_plan(_metadata, (uint32_t)strtoul(argv[3], NULL, 0),
					  (uint32_t)strtoul(argc > 4 ? argv[4] : "0", NULL, 0));
		if (!strcmp(argv[2], "stack"))
			return bench_stack(_metadata, strtoll(argv[3], NULL, 0));
		return bench(_metadata, argv[2], argv[3], argc > 4 ? argv[4] : "CPU");
	}
	return runtime_test_main(argc, argv);
}

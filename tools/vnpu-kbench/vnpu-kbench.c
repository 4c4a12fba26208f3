// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * vnpu-kbench: GFLOP/s of the device engine's main kernels on this CPU,
 * with 1 thread and all threads, for each kernel path (AVX-512, AVX2) next
 * to that path's FMA peak measured in the same run and, when
 * onnxruntime-node is installed, next to ONNX Runtime on the same shapes.
 * Prints figures; asserts nothing about speed.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vnpu_engine.h"
#include "vnpu_eng_gemm.h"
#include "vnpu_exec.h"

#ifndef KBENCH_SOURCE_DIR
#define KBENCH_SOURCE_DIR "."
#endif

/*
 * A layer, and for a ConvTranspose as the compiler lowers it, the COPY
 * that puts its output phases in place after it (@copy.hdr.opcode set);
 * a COPY alone (a Transpose, a Concat) has @op VNPU_LAYER_INVALID.
 * Pools are judged against memory bandwidth: @bytes they read, no flops.
 */
struct layer {
	const char *name;	/* the ORT model's name too */
	__u32 op;
	struct vnpu_cmd_tensor t[4];
	void *data[4];
	__u32 n;
	union {
		struct vnpu_layer_gemm gemm;
		struct vnpu_layer_conv conv;
		struct vnpu_layer_resize resize;
		struct vnpu_layer_softmax softmax;
		struct vnpu_layer_binary binary;
		struct vnpu_layer_act act;
		struct vnpu_layer_pool pool;
		struct vnpu_layer_reduce reduce;
		struct vnpu_layer_norm norm;
	} attrs;
	__u32 attr_size;
	double flops;
	/* --bandwidth: bytes its tensors read and write; a pool's: read */
	double bytes;
	struct vnpu_cmd_copy copy;
};

#define NUM_LAYERS 12

/* The layers' names (ORT's models' too), and what the tables call them. */
static const char *const names[NUM_LAYERS] = {
	"gemm", "conv3x3", "dw3x3", "conv1x1", "gconv3x3", "deconv2x2", "gap",
	"conv1x1_7", "conv3x3_7", "bert_ffn1", "bert_ffn2", "bert_qkv",
};
static const char *const desc[NUM_LAYERS] = {
	"GEMM 1024x1024x1024 (packed B)",
	"conv 3x3 64->64 56x56 (Winograd)",
	"depthwise 3x3 32x112x112",
	"conv 1x1 256->256 28x28",
	"grouped 3x3 128->128 g32 56x56",
	"ConvTranspose 2x2 s2 64->64 160x160",
	"GlobalAveragePool 256x160x160",
	"conv 1x1 2048->512 7x7",
	"conv 3x3 512->512 7x7",
	"GEMM 128x3072x768 (BERT FFN in)",
	"GEMM 128x768x3072 (BERT FFN out)",
	"GEMM 128x768x768 (BERT Q/K/V/out)",
};

struct job {
	const struct layer *l;
	__u32 features, num_parts, copy_parts;
	atomic_uint next;
	int copying;	/* the parts taken from @next are the COPY's */
	int rc;
	void *scratch[64];
	__u64 scratch_size;
	double cpu;	/* CPU seconds of the last run's first worker */
};

/* Seconds of CPU time the calling thread has used. */
static double thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* --cpu-time: 1-thread runs timed by their CPU time, not the clock. */
static int use_cpu_time;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- the FMA peaks --------------------------------------------------- */

typedef float v8sf __attribute__((vector_size(32)));
typedef float v16sf __attribute__((vector_size(64)));

/*
 * Independent FMA chains, each from its own start so that the compiler
 * cannot merge them: 12 of 8 lanes cover two FMA ports' latency, 24 of 16
 * lanes with AVX-512. The empty asm keeps every chain in a register.
 */
#define PEAK_DECL(T, a, b, c, d, e, f, base)				\
	T a = (T){} + (base), b = (T){} + (base) + 1, c = (T){} + (base) + 2, \
	  d = (T){} + (base) + 3, e = (T){} + (base) + 4,		\
	  f = (T){} + (base) + 5
#define PEAK_FMA6(F, a, b, c, d, e, f) do {				\
	a = F(a); b = F(b); c = F(c); d = F(d); e = F(e); f = F(f);	\
	__asm__ volatile("" : "+v"(a), "+v"(b), "+v"(c), "+v"(d), "+v"(e), \
			 "+v"(f));					\
} while (0)

__attribute__((target("avx2,fma"), noinline))
static float fma_loop_avx2(long iters)
{
	v8sf x = (v8sf){} + 1.000001f, y = (v8sf){} + 0.999999f;
	PEAK_DECL(v8sf, a0, a1, a2, a3, a4, a5, 0.0f);
	PEAK_DECL(v8sf, b0, b1, b2, b3, b4, b5, 6.0f);
	long i;

#define F8(v) __builtin_ia32_vfmaddps256(v, x, y)
	for (i = 0; i < iters; i++) {
		PEAK_FMA6(F8, a0, a1, a2, a3, a4, a5);
		PEAK_FMA6(F8, b0, b1, b2, b3, b4, b5);
	}
#undef F8
	a0 += a1 + a2 + a3 + a4 + a5 + b0 + b1 + b2 + b3 + b4 + b5;
	return a0[0] + a0[7];
}

__attribute__((target("avx512f"), noinline))
static float fma_loop_avx512(long iters)
{
	v16sf x = (v16sf){} + 1.000001f, y = (v16sf){} + 0.999999f;
	PEAK_DECL(v16sf, a0, a1, a2, a3, a4, a5, 0.0f);
	PEAK_DECL(v16sf, b0, b1, b2, b3, b4, b5, 6.0f);
	PEAK_DECL(v16sf, c0, c1, c2, c3, c4, c5, 12.0f);
	PEAK_DECL(v16sf, d0, d1, d2, d3, d4, d5, 18.0f);
	long i;

#define F16(v) __builtin_ia32_vfmaddps512_mask(v, x, y, 0xffff, 4)
	for (i = 0; i < iters; i++) {
		PEAK_FMA6(F16, a0, a1, a2, a3, a4, a5);
		PEAK_FMA6(F16, b0, b1, b2, b3, b4, b5);
		PEAK_FMA6(F16, c0, c1, c2, c3, c4, c5);
		PEAK_FMA6(F16, d0, d1, d2, d3, d4, d5);
	}
#undef F16
	a0 += a1 + a2 + a3 + a4 + a5 + b0 + b1 + b2 + b3 + b4 + b5;
	a0 += c0 + c1 + c2 + c3 + c4 + c5 + d0 + d1 + d2 + d3 + d4 + d5;
	return a0[0] + a0[15];
}

#define FMA_ITERS 4000000L

struct peak_arg {
	int avx512;
	float sink;
};

static void *fma_thread(void *arg)
{
	struct peak_arg *p = arg;

	p->sink = p->avx512 ? fma_loop_avx512(FMA_ITERS / 4) :
			      fma_loop_avx2(FMA_ITERS);
	return NULL;
}

/*
 * FLOP/s of @threads threads running the FMA loop at once: 8-wide (AVX2)
 * or 16-wide (@avx512). Both do FMA_ITERS * 12 * 16 flops.
 */
static double fma_peak(int threads, int avx512)
{
	pthread_t tid[64];
	struct peak_arg arg[64];
	double t0, best = 0, flops = threads * FMA_ITERS * 12.0 * 16;
	int rep, i;

	for (rep = 0; rep < 20; rep++) {
		t0 = now();
		for (i = 0; i < threads; i++) {
			arg[i].avx512 = avx512;
			pthread_create(&tid[i], NULL, fma_thread, &arg[i]);
		}
		for (i = 0; i < threads; i++)
			pthread_join(tid[i], NULL);
		t0 = now() - t0;
		if (best == 0 || flops / t0 > best)
			best = flops / t0;
	}
	return best;
}

/* ---- layers ---------------------------------------------------------- */

static struct vnpu_cmd_tensor dense(__u32 rank, const __u64 *dims)
{
	struct vnpu_cmd_tensor t;
	__s64 s = 1;
	int d;

	memset(&t, 0, sizeof(t));
	t.dtype = VNPU_DTYPE_F32;
	t.rank = rank;
	for (d = (int)rank - 1; d >= 0; d--) {
		t.dims[d] = dims[d];
		t.strides[d] = s;
		s *= (__s64)dims[d];
	}
	return t;
}

static void fill_random(float *p, __u64 n)
{
	__u64 i;

	for (i = 0; i < n; i++)
		p[i] = (float)((i * 2654435761u) % 1000) / 500.0f - 1.0f;
}

/*
 * The layers' tensors, one after another in one allocation, as a model's
 * weights and intermediates share the CPU device's weight and arena
 * buffers: from vnpu_eng_host_alloc(), as those are (huge pages). Pages
 * past what the layers take are never touched.
 */
#define ARENA_SIZE (192ull << 20)

/* The arena, slot 0 of the COPY commands the layers run. */
static unsigned char *arena;

static void *random_floats(__u64 n)
{
	static __u64 used;
	__u64 bytes = (n * 4 + 63) & ~63ull;
	float *p;

	if (!arena)
		arena = vnpu_eng_host_alloc(ARENA_SIZE);
	if (!arena || bytes > ARENA_SIZE - used) {
		fprintf(stderr, "vnpu-kbench: out of memory\n");
		exit(1);
	}
	p = (float *)(arena + used);
	used += bytes;
	fill_random(p, n);
	return p;
}

/* Unpacked weights, freed once packed. */
static void *random_floats_tmp(__u64 n)
{
	float *p = vnpu_eng_host_alloc(n * 4);

	if (!p) {
		fprintf(stderr, "vnpu-kbench: out of memory\n");
		exit(1);
	}
	fill_random(p, n);
	return p;
}

static __u64 numel(const struct vnpu_cmd_tensor *t)
{
	__u64 n = 1;
	__u32 d;

	for (d = 0; d < t->rank; d++)
		n *= t->dims[d];
	return n;
}

static void make_gemm(struct layer *l, __u64 m, __u64 n, __u64 k)
{
	__u64 da[2] = { m, k }, dy[2] = { m, n };
	__u64 psize = vnpu_eng_packed_size(VNPU_PACK_GEMM_B, 1, k, n);
	void *b = random_floats_tmp(k * n);

	l->op = VNPU_LAYER_GEMM;
	l->n = 3;
	l->t[0] = dense(2, da);
	l->t[1] = dense(1, &psize);
	l->t[2] = dense(2, dy);
	l->data[0] = random_floats(m * k);
	l->data[1] = random_floats(psize);
	vnpu_eng_pack(VNPU_PACK_GEMM_B, b, 1, k, n, l->data[1]);
	vnpu_eng_host_free(b, k * n * 4);
	l->data[2] = random_floats(m * n);
	memset(&l->attrs, 0, sizeof(l->attrs));
	l->attrs.gemm.flags = VNPU_LAYER_F_PACKED;
	l->attrs.gemm.alpha = 0x3f800000;
	l->attrs.gemm.beta = 0x3f800000;
	l->attr_size = sizeof(l->attrs.gemm);
	l->flops = 2.0 * m * n * k;
}

static void make_conv(struct layer *l, __u64 c, __u64 m, __u64 hw, __u32 k,
		      __u32 group)
{
	__u64 dx[4] = { 1, c, hw, hw }, dy[4] = { 1, m, hw, hw };
	__u64 kt = c / group * k * k;
	__u64 psize = vnpu_eng_packed_size(VNPU_PACK_CONV_W, group, m / group,
					   kt);
	void *w = random_floats_tmp(m * kt);
	struct vnpu_layer_conv *a = &l->attrs.conv;

	memset(&l->attrs, 0, sizeof(l->attrs));
	l->op = VNPU_LAYER_CONV;
	l->n = 4;
	l->t[0] = dense(4, dx);
	l->t[1] = dense(1, &psize);
	l->t[2] = dense(1, &m);
	l->t[3] = dense(4, dy);
	l->data[0] = random_floats(numel(&l->t[0]));
	l->data[1] = random_floats(psize);
	vnpu_eng_pack(VNPU_PACK_CONV_W, w, group, m / group, kt, l->data[1]);
	vnpu_eng_host_free(w, m * kt * 4);
	l->data[2] = random_floats(m);
	l->data[3] = random_floats(numel(&l->t[3]));
	a->flags = VNPU_LAYER_F_PACKED | VNPU_LAYER_F_BIAS;
	a->group = group;
	a->kernel[0] = a->kernel[1] = k;
	a->stride[0] = a->stride[1] = 1;
	a->dilation[0] = a->dilation[1] = 1;
	a->pad_begin[0] = a->pad_begin[1] = k / 2;
	a->pad_end[0] = a->pad_end[1] = k / 2;
	l->attr_size = sizeof(*a);
	l->flops = 2.0 * m * hw * hw * kt;
}

/* @t of the data at @p, as slot 0 (the arena) of a command sees it. */
static struct vnpu_cmd_tensor in_arena(struct vnpu_cmd_tensor t, const void *p)
{
	t.slot = 0;
	t.offset = (__u64)((const unsigned char *)p - arena);
	return t;
}

/*
 * ConvTranspose @c -> @m, kernel 2 stride 2, on @hw x @hw, as the
 * compiler lowers it: a 1x1 CONV of 4 * @m channels (each output
 * channel's four phases), then a COPY of the phases into place.
 */
static void make_deconv(struct layer *l, __u64 c, __u64 m, __u64 hw)
{
	__u64 dt[6] = { 1, m, 2, 2, hw, hw }, dy[4] = { 1, m, 2 * hw, 2 * hw };
	struct vnpu_cmd_tensor *dst = &l->copy.dst, *src = &l->copy.src;
	int d;

	make_conv(l, c, 4 * m, hw, 1, 1);
	l->flops = 2.0 * c * 4 * m * hw * hw;
	memset(&l->copy, 0, sizeof(l->copy));
	l->copy.hdr.opcode = VNPU_CMD_COPY;
	l->copy.hdr.size = sizeof(l->copy);
	*src = in_arena(dense(6, dt), l->data[3]);
	*dst = in_arena(dense(4, dy), random_floats(4 * m * hw * hw));
	/* Y [1, M, OH, OW] as [1, M, rh, rw, H, W]: (2i + rh, 2j + rw). */
	dst->rank = 6;
	for (d = 0; d < 6; d++)
		dst->dims[d] = dt[d];
	dst->strides[5] = 2;
	dst->strides[4] = (__s64)(4 * hw);
	dst->strides[3] = 1;
	dst->strides[2] = (__s64)(2 * hw);
	dst->strides[1] = (__s64)(4 * hw * hw);
	dst->strides[0] = (__s64)(4 * hw * hw * m);
}

/* GlobalAveragePool over @c planes of @hw x @hw: @bytes it reads. */
static void make_gap(struct layer *l, __u64 c, __u64 hw)
{
	__u64 dx[4] = { 1, c, hw, hw }, dy[4] = { 1, c, 1, 1 };
	struct vnpu_layer_pool *a = &l->attrs.pool;

	memset(&l->attrs, 0, sizeof(l->attrs));
	l->op = VNPU_LAYER_POOL;
	l->n = 2;
	l->t[0] = dense(4, dx);
	l->t[1] = dense(4, dy);
	l->data[0] = random_floats(numel(&l->t[0]));
	l->data[1] = random_floats(numel(&l->t[1]));
	a->mode = VNPU_POOL_AVG;
	a->kernel[0] = a->kernel[1] = (__u32)hw;
	a->stride[0] = a->stride[1] = 1;
	a->dilation[0] = a->dilation[1] = 1;
	l->attr_size = sizeof(*a);
	l->flops = 0;
	l->bytes = 4.0 * c * hw * hw;
}

/* ---- memory bandwidth ------------------------------------------------ */

struct bw_arg {
	const __u64 *p;
	__u64 n, sink;
};

typedef __u64 v4du __attribute__((vector_size(32)));

/*
 * Reads @n words as eight streams side by side, as the global pools read
 * eight planes (one stream alone leaves the prefetchers idle), in 256-bit
 * loads (AVX2 CPUs only).
 */
__attribute__((target("avx2")))
static void *bw_thread(void *arg)
{
	struct bw_arg *b = arg;
	const v4du *p = (const v4du *)b->p;
	__u64 i, len = b->n / 4 / 8 - 3;
	v4du x = {}, y = {};
	int k;

	/* Starts 3 vectors apart beyond @len: not in one cache set. */
	for (i = 0; i + 2 <= len; i += 2)
		for (k = 0; k < 8; k++) {
			x ^= p[k * (len + 3) + i];
			y ^= p[k * (len + 3) + i + 1];
		}
	x ^= y;
	b->sink = x[0] ^ x[1] ^ x[2] ^ x[3];
	return NULL;
}

/*
 * Bytes per second @threads threads read at once from a buffer of @bytes,
 * each its own share, as warm in the caches as a pool's input read run
 * after run: the peak of a pool that reads @bytes.
 */
static double mem_bandwidth(int threads, __u64 bytes)
{
	__u64 *buf = vnpu_eng_host_alloc(bytes), per;
	struct bw_arg arg[64];
	pthread_t tid[64];
	double best = 0, t0;
	int rep, i;

	if (!buf)
		return 0;
	memset(buf, 1, bytes);
	per = bytes / 8 / (__u64)threads;
	for (rep = 0; rep < 10; rep++) {
		t0 = now();
		for (i = 0; i < threads; i++) {
			arg[i].p = buf + per * (__u64)i;
			arg[i].n = per;
			pthread_create(&tid[i], NULL, bw_thread, &arg[i]);
		}
		for (i = 0; i < threads; i++)
			pthread_join(tid[i], NULL);
		t0 = now() - t0;
		if (best == 0 || bytes / t0 > best)
			best = bytes / t0;
	}
	vnpu_eng_host_free(buf, bytes);
	return best;
}

/* ---- running a layer on threads ------------------------------------- */

struct worker {
	struct job *j;
	int me;
};

static void *part_thread(void *arg)
{
	const struct worker *w = arg;
	struct job *j = w->j;
	struct vnpu_eng_ctx ctx = { .features = j->features };
	void *slots[1] = { arena };
	unsigned int p;
	double t0 = thread_cpu();

	ctx.scratch = j->scratch[w->me];
	ctx.scratch_size = j->scratch_size;

	while (!j->copying &&
	       (p = atomic_fetch_add(&j->next, 1)) < j->num_parts) {
		int rc = vnpu_eng_layer_run(j->l->op, j->l->t, j->l->data,
					    j->l->n, &j->l->attrs, p,
					    j->num_parts, &ctx);
		if (rc)
			j->rc = rc;
	}
	while (j->copying &&
	       (p = atomic_fetch_add(&j->next, 1)) < j->copy_parts)
		if (vnpu_exec_part(&j->l->copy.hdr, slots, p, j->copy_parts,
				   &ctx))
			j->rc = -1;
	if (!w->me)
		j->cpu += thread_cpu() - t0;
	return NULL;
}

/*
 * The parts of @j on @threads threads: one runs on this one, which keeps
 * its CPU and caches from run to run as a device tile's thread does, and
 * is not charged a thread's start.
 */
static void run_parts(struct job *j, int threads)
{
	pthread_t tid[64];
	struct worker w[64];
	int i;

	atomic_store(&j->next, 0);
	for (i = 0; i < threads; i++) {
		w[i].j = j;
		w[i].me = i;
	}
	if (threads == 1) {
		part_thread(&w[0]);
		return;
	}
	for (i = 0; i < threads; i++)
		pthread_create(&tid[i], NULL, part_thread, &w[i]);
	for (i = 0; i < threads; i++)
		pthread_join(tid[i], NULL);
}

/* Best seconds of @repeat runs of @l on @threads threads. */
static double time_layer(const struct layer *l, int threads, __u32 features,
			 int repeat)
{
	__u32 max = vnpu_eng_layer_max_parts(l->op, l->t, l->n, &l->attrs,
					     features);
	struct job j;
	double best = 0, t0;
	int rep, i;

	memset(&j, 0, sizeof(j));
	j.l = l;
	j.features = features;
	j.num_parts = threads == 1 ? 1 : max < 8u * threads ? max : 8u * threads;
	if (l->op == VNPU_LAYER_INVALID)
		j.num_parts = 0;
	/* The COPY in as many parts as the firmware would make for @threads. */
	if (l->copy.hdr.opcode)
		j.copy_parts = vnpu_exec_parts(&l->copy.hdr, (__u32)threads *
					       VNPU_EXEC_FW_PARTS_PER_TILE,
					       VNPU_EXEC_FW_CHUNK_COST, features);
	j.scratch_size = vnpu_eng_layer_scratch(l->op, l->t, l->n, &l->attrs,
						j.num_parts, features);
	/* As the CPU device's tiles get theirs. */
	j.scratch_size = vnpu_eng_host_scratch_size(j.scratch_size);
	for (i = 0; i < threads; i++)
		j.scratch[i] = j.scratch_size ? vnpu_eng_host_alloc(j.scratch_size) : NULL;
	for (rep = 0; rep < repeat + 1; rep++) {
		j.cpu = 0;
		j.copying = 0;
		t0 = now();
		run_parts(&j, threads);
		if (j.copy_parts) {
			j.copying = 1;
			run_parts(&j, threads);
		}
		t0 = now() - t0;
		if (use_cpu_time && threads == 1)
			t0 = j.cpu;
		/* The first run warms caches and pages. */
		if (rep && (best == 0 || t0 < best))
			best = t0;
	}
	for (i = 0; i < threads; i++)
		vnpu_eng_host_free(j.scratch[i], j.scratch_size);
	if (j.rc) {
		fprintf(stderr, "vnpu-kbench: %s: run failed (%d)\n", l->name,
			j.rc);
		exit(1);
	}
	return best;
}

/* ---- ONNX Runtime ---------------------------------------------------- */

/*
 * Runs tools/vnpu-kbench/ort-bench.js on the models @names (@count of
 * them), which prints one line "name threads milliseconds" per model and
 * thread count: ms[i][0] one thread, ms[i][1] @threads.
 */
static int ort_times_of(const char *node_modules, int threads,
			const char *const *names, size_t count, double ms[][2])
{
	char cmd[16384], line[256], name[64], list[1024] = "";
	FILE *f;
	int th, n = 0;
	double t;
	size_t i;

	for (i = 0; i < count; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list),
			 "%s%s", i ? "," : "", names[i]);
	snprintf(cmd, sizeof(cmd),
		 "NODE_PATH='%s' node '%s/tools/vnpu-kbench/ort-bench.js' "
		 "'%s/tools/vnpu-kbench/make-models.py' %d '%s' 2>&1",
		 node_modules, KBENCH_SOURCE_DIR, KBENCH_SOURCE_DIR, threads,
		 list);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63s %d %lf", name, &th, &t) != 3) {
			fprintf(stderr, "vnpu-kbench: ort: %s", line);
			continue;
		}
		/* With one thread the one-thread figure is both columns. */
		for (i = 0; i < count; i++) {
			if (strcmp(name, names[i]))
				continue;
			if (th == 1)
				ms[i][0] = t, n++;
			if (th == threads)
				ms[i][1] = t;
		}
	}
	return pclose(f) == 0 && n ? 0 : -1;
}

static int ort_times(const char *node_modules, int threads, double ms[][2])
{
	return ort_times_of(node_modules, threads, names, NUM_LAYERS, ms);
}

/*
 * The target for kernel @i of the table on one thread, and whether
 * this run met it: GEMM and conv 3x3 at 85% of the path's FMA peak or
 * better (@pct; below 0 for the baseline, which has no peak of its own),
 * the others within 1.2x of ONNX Runtime (@ratio: our speed over ORT's, 0
 * when ORT did not run). ONNX Runtime uses the CPU's widest vectors, so it
 * is the peer of the path that does, the engine's default (@narrow: this
 * path's are narrower, e.g. AVX2 on an AVX-512 CPU): the ratio is printed,
 * not judged.
 */
static const char *target(int i, double pct, double ratio, int narrow)
{
	if (i < 2) {
		if (pct < 0)
			return "-";
		return pct >= 85 ? ">= 85% of peak: met" :
				   ">= 85% of peak: NOT met";
	}
	if (ratio <= 0)
		return "within 1.2x of ORT: no ORT";
	if (narrow)
		return "within 1.2x of ORT: n/a (narrower)";
	return ratio >= 1 / 1.2 ? "within 1.2x of ORT: met" :
				  "within 1.2x of ORT: NOT met";
}

/* What a layer's speed counts: bytes read for pools, else flops. */
static double work(const struct layer *l)
{
	return l->bytes > 0 ? l->bytes : l->flops;
}

/* @x as a percentage of @peak, 0 without a peak. */
static double percent(double x, double peak)
{
	return peak > 0 ? 100 * x / peak : 0;
}

/* ---- the micro-kernels alone ------------------------------------------ */

/*
 * One depth slice on packed operands that stay in cache, the way
 * gemm_block() hands it to a path's micro-kernels: a 12x32 tile over a
 * depth of 192 (A, B and the sums fit L1), or a whole 96x256 block over
 * 342 (the depth of the 1024^3 GEMM's slices; fits L2), or BERT's
 * 120x256 blocks over 384 with A read in place from rows of 768 or 3072,
 * or a 12x16 tile (a block's lone last panel of columns), or the blocks
 * of a 7x7 map's 49 columns (32 + 16 + a tail column) and of a 14x14
 * map's units of 84 (64 + 16 + 4), their MACs those of the block's
 * columns.
 * Buffers start on a cache line; @skew floats further on, rows of B read
 * by offsets cross lines as a convolution's window rows mostly do (the
 * 96x256 block both ways: from L2, tiles whose B loads cross lines lose
 * about a sixth of their speed on AVX2). A is in panels, or with @a_rows
 * in rows that many floats apart: ENG_KC, rows packed for the AVX-512
 * kernels, else a dense A read in place.
 */
struct ucase {
	const char *desc;
	__u64 mc, nc, kc;
	__s64 a_rows;
	int ind, skew;
};

static const struct ucase ucases[] = {
	{ "12x32 k192 (L1), A panels", 12, 32, 192, 0, 0, 0 },
	{ "12x32 k192 (L1), A rows", 12, 32, 192, ENG_KC, 0, 0 },
	{ "12x32 k192 (L1), B by offsets", 12, 32, 192, 0, 1, 0 },
	{ "12x32 k192 (L1), B offsets +4 bytes", 12, 32, 192, 0, 1, 1 },
	{ "96x256 k342 (L2), A rows", 96, 256, 342, ENG_KC, 0, 0 },
	{ "96x256 k342 (L2), B by offsets", 96, 256, 342, 0, 1, 0 },
	{ "96x256 k342 (L2), B offsets +4 bytes", 96, 256, 342, 0, 1, 1 },
	{ "12x16 k192 (L1), A panels", 12, 16, 192, 0, 0, 0 },
	{ "12x16 k192 (L1), B by offsets", 12, 16, 192, 0, 1, 0 },
	{ "96x49 k342 (L2), B by offsets", 96, 49, 342, 0, 1, 0 },
	{ "96x84 k342 (L2), B by offsets", 96, 84, 342, 0, 1, 0 },
	{ "120x256 k384, A in place, rows 768", 120, 256, 384, 768, 0, 0 },
	{ "120x256 k384, A in place, rows 3072", 120, 256, 384, 3072, 0, 0 },
};

#define UK_CASES (sizeof(ucases) / sizeof(ucases[0]))

static void *zalloc64(__u64 bytes)
{
	void *p = aligned_alloc(64, (bytes + 63) / 64 * 64);

	if (!p) {
		fprintf(stderr, "vnpu-kbench: out of memory\n");
		exit(1);
	}
	memset(p, 0, bytes);
	return p;
}

/*
 * Best FLOP/s of @batches batches of about 1 ms of slices of @u on the
 * AVX-512 (@wide) or AVX2 kernels. A in rows is the AVX-512 kernels' only.
 */
static double time_ukernel(const struct ucase *u, int wide, int batches)
{
	__u64 mp = (u->mc + ENG_MR - 1) / ENG_MR * ENG_MR;
	__u64 np = (u->nc + ENG_NR - 1) / ENG_NR * ENG_NR;
	__u64 i, calls, c;
	double flops = 2.0 * u->mc * u->nc * u->kc, best = 0, t0;
	struct eng_slice s = {};
	__s32 *off = NULL;
	__u64 na = mp * (u->a_rows > ENG_KC ? (__u64)u->a_rows : ENG_KC);
	float *a, *b;
	int n;

	a = zalloc64(na * sizeof(float));
	b = zalloc64((np * u->kc + ENG_NR) * sizeof(float));
	for (i = 0; i < na; i++)
		a[i] = (float)(i % 7) * 0.25f - 0.75f;
	for (i = 0; i < np * u->kc + ENG_NR; i++)
		b[i] = (float)(i % 5) * 0.25f - 0.5f;
	s.kc = u->kc;
	s.mc = u->mc;
	s.nc = u->nc;
	s.a = a;
	s.b = b + u->skew;
	s.a_rows = u->a_rows;
	s.a_ps = ENG_MR * (u->a_rows ? (__u64)u->a_rows : u->kc);
	s.b_ps = ENG_NR * u->kc;
	if (u->ind) {
		/* Rows of B np wide, as a convolution's window holds them. */
		off = zalloc64(u->kc * sizeof(*off));
		for (i = 0; i < u->kc; i++)
			off[i] = (__s32)(i * np);
		s.off = off;
		s.b_ps = ENG_NR;
	}
	s.acc_rs = np + ENG_NR;
	s.acc = zalloc64(mp * s.acc_rs * sizeof(float));
	s.load = 1;
	calls = (__u64)(2e8 / flops) + 1;
	for (n = 0; n < batches + 1; n++) {
		t0 = now();
		for (c = 0; c < calls; c++)
			if (wide)
				vnpu_eng_slice_avx512(&s);
			else
				vnpu_eng_slice_avx2(&s);
		t0 = now() - t0;
		/* The first batch warms the caches. */
		if (n && calls * flops / t0 > best)
			best = calls * flops / t0;
	}
	free(a);
	free(b);
	free(off);
	free(s.acc);
	return best;
}

/* --ukernel: each case on each FMA path against that path's peak. */
static int run_ukernel(__u32 host, int rounds)
{
	double gf[2][UK_CASES] = {}, peak[2] = {};
	int r, w;
	__u64 i;

	if (!(host & VNPU_ENG_F_AVX2_FMA)) {
		fprintf(stderr, "vnpu-kbench: --ukernel: this CPU has no AVX2 and FMA\n");
		return 1;
	}
	for (r = 0; r < rounds; r++)
		for (w = (host & VNPU_ENG_F_AVX512) ? 1 : 0; w >= 0; w--) {
			double p = fma_peak(1, w);

			peak[w] = p > peak[w] ? p : peak[w];
			for (i = 0; i < UK_CASES; i++) {
				double g;

				/*
				 * The AVX2 kernels read A in panels or in
				 * place, never in packed rows.
				 */
				if (!w && ucases[i].a_rows == ENG_KC)
					continue;
				g = time_ukernel(&ucases[i], w, 50);
				gf[w][i] = g > gf[w][i] ? g : gf[w][i];
			}
		}
	printf("micro-kernels alone, 1 thread, in cache; best of %d rounds of 50 batches\n",
	       rounds);
	for (w = (host & VNPU_ENG_F_AVX512) ? 1 : 0; w >= 0; w--) {
		printf("\n%s kernels (FMA peak %.1f GFLOP/s)\n",
		       w ? "AVX-512 12x32" : "AVX2 6x16", peak[w] / 1e9);
		for (i = 0; i < UK_CASES; i++)
			if (gf[w][i] > 0)
				printf("%-36s %9.1f GF/s %6.1f%%\n", ucases[i].desc,
				       gf[w][i] / 1e9, percent(gf[w][i], peak[w]));
	}
	return 0;
}

/* Whether @list (NULL: everything) names @word among its commas. */
static int listed(const char *list, const char *word)
{
	size_t n = strlen(word);
	const char *p;

	for (p = list; p; p = strchr(p, ','), p = p ? p + 1 : NULL)
		if (!strncmp(p, word, n) && (p[n] == ',' || !p[n]))
			return 1;
	return 0;
}

/* Whether every word of --only @list names a kernel or a path. */
static int only_valid(const char *list)
{
	static const char *const words[] = { "gemm", "conv3x3", "dw3x3",
					     "conv1x1", "gconv3x3", "deconv2x2",
					     "gap", "conv1x1_7", "conv3x3_7",
					     "bert_ffn1", "bert_ffn2", "bert_qkv",
					     "avx512", "avx2", "baseline" };
	const char *p = list, *e;
	size_t i, n;

	for (;;) {
		e = strchr(p, ',');
		n = e ? (size_t)(e - p) : strlen(p);
		for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
			if (strlen(words[i]) == n && !strncmp(p, words[i], n))
				break;
		if (i == sizeof(words) / sizeof(words[0]))
			return 0;
		if (!e)
			return 1;
		p = e + 1;
	}
}

/*
 * Whether --only @list selects layer @name on engine path @features: a
 * list without layer names selects every layer, one without path names
 * every path.
 */
static int selected(const char *list, const char *name, __u32 features)
{
	const char *pn = (features & VNPU_ENG_F_AVX512) ? "avx512" :
			 features ? "avx2" : "baseline";
	int any_name = 0;
	size_t i;

	if (!list)
		return 1;
	for (i = 0; i < NUM_LAYERS; i++)
		any_name |= listed(list, names[i]);
	if (any_name && !listed(list, name))
		return 0;
	if ((listed(list, "avx512") || listed(list, "avx2") ||
	     listed(list, "baseline")) && !listed(list, pn))
		return 0;
	return 1;
}

/* Whether --only leaves any of @layers to time on the path of @features. */
static int path_selected(const char *only, const struct layer *layers,
			 __u32 features)
{
	int i;

	for (i = 0; i < NUM_LAYERS; i++)
		if (selected(only, layers[i].name, features))
			return 1;
	return 0;
}

/* The tables' name of the engine path of @features. */
static const char *path_name(__u32 features)
{
	return (features & VNPU_ENG_F_AVX512) ? "avx512" :
	       features ? "avx2+fma" : "baseline";
}

/* ---- --bandwidth: the bandwidth-bound layers ------------------------ */

/*
 * Layers of the shapes real models run (DBNet's upsampling, CRNN's
 * classifier, MobileNetV3's squeeze-excite and residual adds, the copies
 * of a Transpose and a Concat, BERT's ReduceMean and LayerNorm), each also
 * a model of make-models.py for ONNX Runtime under the same name.
 */
static const char *const bw_names[] = {
	"resize_nn2x", "resize_lin2x", "softmax", "softmax_c", "mul_se",
	"add_res", "hardswish", "transpose", "concat", "reduce_mean",
	"layernorm",
};

static const char *const bw_desc[] = {
	"Resize nearest 2x 96x40x40",
	"Resize bilinear 2x 96x40x40",
	"Softmax 40x6625, last axis",
	"Softmax 64x40x40, axis 1",
	"Mul 96x40x40 by 96x1x1",
	"Add 96x40x40 + 96x40x40",
	"HardSwish 96x40x40",
	"Transpose 96x80x80 to 80x80x96",
	"Concat 96x80x80 into 192 ch",
	"ReduceMean 512x768, last axis",
	"LayerNorm 512x768, scale+bias",
};

#define BW_LAYERS (sizeof(bw_names) / sizeof(bw_names[0]))

/* Tensor @i of @l, dense with @rank @dims, in the arena. */
static void bw_tensor(struct layer *l, __u32 i, __u32 rank, const __u64 *dims)
{
	l->t[i] = dense(rank, dims);
	l->data[i] = random_floats(numel(&l->t[i]));
	l->bytes += 4.0 * (double)numel(&l->t[i]);
}

/*
 * The COPY that lowers a Transpose of [1, 96, 80, 80] by (0, 2, 3, 1)
 * (@i 7) or one input of a Concat of two along the channels (@i 8).
 */
static void make_bw_copy(struct layer *l, size_t i)
{
	static const __u64 fm[4] = { 1, 96, 80, 80 }, nhwc[4] = { 1, 80, 80, 96 };
	static const __u64 cat[4] = { 1, 192, 80, 80 };
	struct vnpu_cmd_tensor *dst = &l->copy.dst, *src = &l->copy.src;

	l->op = VNPU_LAYER_INVALID;
	bw_tensor(l, 0, 4, fm);
	bw_tensor(l, 1, 4, i == 7 ? nhwc : cat);
	l->copy.hdr.opcode = VNPU_CMD_COPY;
	l->copy.hdr.size = sizeof(l->copy);
	*src = in_arena(l->t[0], l->data[0]);
	*dst = in_arena(l->t[0], l->data[1]);
	if (i == 8) {
		dst->strides[0] = 192 * 80 * 80;
		/* The second input: half the destination's bytes. */
		l->bytes -= 4.0 * 96 * 80 * 80;
		return;
	}
	/* y[n, h, w, c] = x[n, c, h, w], in y's order. */
	*dst = in_arena(l->t[1], l->data[1]);
	src->dims[1] = 80;
	src->dims[3] = 96;
	src->strides[1] = 80;
	src->strides[2] = 1;
	src->strides[3] = 80 * 80;
}

static void make_bw(struct layer *l, size_t i)
{
	static const __u64 fm[4] = { 1, 96, 40, 40 }, up[4] = { 1, 96, 80, 80 };
	static const __u64 ch[4] = { 1, 96, 1, 1 }, cls[3] = { 1, 40, 6625 };
	static const __u64 sm[4] = { 1, 64, 40, 40 };
	static const __u64 seq[3] = { 1, 512, 768 }, seq1[3] = { 1, 512, 1 };

	memset(l, 0, sizeof(*l));
	l->name = bw_names[i];
	l->n = 2;
	switch (i) {
	case 0:
	case 1:
		l->op = VNPU_LAYER_RESIZE;
		l->attrs.resize.mode = i ? VNPU_RESIZE_LINEAR : VNPU_RESIZE_NEAREST;
		l->attrs.resize.coord = i ? VNPU_COORD_HALF_PIXEL :
				       VNPU_COORD_ASYMMETRIC;
		l->attrs.resize.nearest = i ? 0 : VNPU_NEAREST_FLOOR;
		l->attr_size = sizeof(l->attrs.resize);
		bw_tensor(l, 0, 4, fm);
		bw_tensor(l, 1, 4, up);
		break;
	case 2:
	case 3:
		l->op = VNPU_LAYER_SOFTMAX;
		l->attrs.softmax.axis = i == 2 ? 2 : 1;
		l->attr_size = sizeof(l->attrs.softmax);
		bw_tensor(l, 0, i == 2 ? 3 : 4, i == 2 ? cls : sm);
		bw_tensor(l, 1, i == 2 ? 3 : 4, i == 2 ? cls : sm);
		break;
	case 4:
	case 5:
		l->op = VNPU_LAYER_BINARY;
		l->n = 3;
		l->attrs.binary.func = i == 4 ? VNPU_BIN_MUL : VNPU_BIN_ADD;
		l->attr_size = sizeof(l->attrs.binary);
		bw_tensor(l, 0, 4, fm);
		bw_tensor(l, 1, 4, i == 4 ? ch : fm);
		bw_tensor(l, 2, 4, fm);
		break;
	case 6:
		l->op = VNPU_LAYER_UNARY;
		l->attrs.act.func = VNPU_ACT_HARD_SWISH;
		l->attr_size = sizeof(l->attrs.act);
		bw_tensor(l, 0, 4, fm);
		bw_tensor(l, 1, 4, fm);
		break;
	case 7:
	case 8:
		make_bw_copy(l, i);
		break;
	case 9:
		l->op = VNPU_LAYER_REDUCE;
		l->attrs.reduce.func = VNPU_REDUCE_MEAN;
		l->attrs.reduce.axes = 1u << 2;
		l->attr_size = sizeof(l->attrs.reduce);
		bw_tensor(l, 0, 3, seq);
		bw_tensor(l, 1, 3, seq1);
		break;
	default:
		l->op = VNPU_LAYER_NORM;
		l->n = 4;
		l->attrs.norm.mode = VNPU_NORM_LAYER;
		l->attrs.norm.flags = VNPU_LAYER_F_BIAS;
		l->attrs.norm.axis = 2;
		l->attrs.norm.epsilon = 0x3727c5ac;	/* 1e-5f */
		l->attr_size = sizeof(l->attrs.norm);
		bw_tensor(l, 0, 3, seq);
		bw_tensor(l, 1, 1, &seq[2]);
		bw_tensor(l, 2, 1, &seq[2]);
		bw_tensor(l, 3, 3, seq);
		break;
	}
}

struct copy_job {
	char *dst;
	const char *src;
	__u64 bytes;
	int threads, me;
};

static void *copy_thread(void *arg)
{
	const struct copy_job *c = arg;
	__u64 b = c->bytes * (__u64)c->me / (__u64)c->threads;
	__u64 e = c->bytes * (__u64)(c->me + 1) / (__u64)c->threads;

	memcpy(c->dst + b, c->src + b, e - b);
	return NULL;
}

/*
 * Best seconds of @repeat memcpy()s that read and write @bytes in all (so
 * @bytes / 2 copied), on @threads threads: the bandwidth a layer moving
 * that many bytes could reach, from the same level of the memory
 * hierarchy.
 */
static double time_copy(__u64 bytes, int threads, int repeat)
{
	__u64 half = (bytes / 2 + 63) & ~63ull;
	char *src = vnpu_eng_host_alloc(half), *dst = vnpu_eng_host_alloc(half);
	struct copy_job c[64];
	pthread_t tid[64];
	double best = 0, t0;
	int rep, i;

	if (!src || !dst) {
		fprintf(stderr, "vnpu-kbench: out of memory\n");
		exit(1);
	}
	memset(src, 1, half);
	memset(dst, 2, half);
	for (rep = 0; rep < repeat + 1; rep++) {
		for (i = 0; i < threads; i++)
			c[i] = (struct copy_job){ dst, src, half, threads, i };
		t0 = now();
		if (threads == 1) {
			copy_thread(&c[0]);
		} else {
			for (i = 0; i < threads; i++)
				pthread_create(&tid[i], NULL, copy_thread, &c[i]);
			for (i = 0; i < threads; i++)
				pthread_join(tid[i], NULL);
		}
		t0 = now() - t0;
		if (rep && (best == 0 || t0 < best))
			best = t0;
	}
	vnpu_eng_host_free(src, half);
	vnpu_eng_host_free(dst, half);
	return best;
}

/*
 * --bandwidth: each layer's milliseconds and GB/s (its tensors' bytes read
 * and written over the time) with one thread and @threads, as a
 * percentage of memcpy() moving the same bytes, and next to ONNX Runtime.
 */
static int run_bandwidth(__u32 features, int threads, int rounds, int repeat,
			 const char *ort)
{
	double ms[BW_LAYERS][2] = {}, cp[BW_LAYERS][2] = {};
	double ort_ms[BW_LAYERS][2] = {};
	struct layer l[BW_LAYERS];
	int r, k, have_ort;
	size_t i;

	for (i = 0; i < BW_LAYERS; i++) {
		make_bw(&l[i], i);
		if (l[i].op != VNPU_LAYER_INVALID && vnpu_eng_layer_check(l[i].op, l[i].t, l[i].n, &l[i].attrs,
					 l[i].attr_size)) {
			fprintf(stderr, "vnpu-kbench: %s: bad layer\n", l[i].name);
			return 1;
		}
	}
	for (r = 0; r < rounds; r++)
		for (i = 0; i < BW_LAYERS; i++)
			for (k = 0; k < (threads > 1 ? 2 : 1); k++) {
				int th = k ? threads : 1;
				double t = time_layer(&l[i], th, features, repeat);
				double c = time_copy((__u64)l[i].bytes, th, repeat);

				if (!ms[i][k] || t < ms[i][k])
					ms[i][k] = t;
				if (!cp[i][k] || c < cp[i][k])
					cp[i][k] = c;
			}
	have_ort = ort && !ort_times_of(ort, threads, bw_names, BW_LAYERS,
					ort_ms);
	printf("threads: %d; best of %d rounds; engine path %s\n", threads,
	       rounds, path_name(features));
	if (!have_ort && ort)
		printf("ONNX Runtime: not available (onnxruntime-node under %s)\n",
		       ort);
	printf("%-30s %6s %8s %8s %6s %8s %8s %6s %8s %8s %7s\n", "layer", "MB",
	       "1T ms", "1T GB/s", "%copy", "NT ms", "NT GB/s", "%copy",
	       "ORT 1T", "ORT NT", "1T/ORT");
	for (i = 0; i < BW_LAYERS; i++) {
		double mb = l[i].bytes / 1e6;
		int n = threads > 1;

		printf("%-30s %6.2f %8.3f %8.1f %5.0f%% %8.3f %8.1f %5.0f%%",
		       bw_desc[i], mb, ms[i][0] * 1e3, mb / 1e3 / ms[i][0],
		       100 * cp[i][0] / ms[i][0], ms[i][n] * 1e3,
		       mb / 1e3 / ms[i][n], 100 * cp[i][n] / ms[i][n]);
		if (have_ort && ort_ms[i][0] > 0)
			printf(" %8.3f %8.3f %7.2f\n", ort_ms[i][0],
			       ort_ms[i][1], ort_ms[i][0] / (ms[i][0] * 1e3));
		else
			printf(" %8s %8s %7s\n", "-", "-", "-");
	}
	printf("(MB: bytes the layer's tensors read and write; GB/s: those over "
	       "the time; %%copy: memcpy() moving the same bytes in the same "
	       "run, over the layer's time; 1T/ORT: ONNX Runtime's 1-thread "
	       "time over ours, above 1 when we are faster)\n");
	return 0;
}

/* ---- --fpu-sections ------------------------------------------------ */

/* @l as the LAYER command vnpu.ko's firmware would split (NULL: no memory). */
static struct vnpu_cmd_layer *layer_cmd(const struct layer *l)
{
	size_t size = sizeof(struct vnpu_cmd_layer) +
		      l->n * sizeof(struct vnpu_cmd_tensor) + l->attr_size;
	struct vnpu_cmd_layer *c = calloc(1, (size + 7) / 8 * 8);

	if (!c)
		return NULL;
	c->hdr.opcode = VNPU_CMD_LAYER;
	c->hdr.size = (__u32)((size + 7) / 8 * 8);
	c->op = l->op;
	c->num_tensors = l->n;
	c->num_outputs = 1;
	c->attr_size = l->attr_size;
	memcpy(c->tensors, l->t, l->n * sizeof(struct vnpu_cmd_tensor));
	memcpy(&c->tensors[l->n], &l->attrs, l->attr_size);
	return c;
}

/*
 * Seconds of part @part of @parts of @l on this thread, the best of
 * @rounds runs: what one FPU section of a tile costs natively.
 */
static double time_part(const struct layer *l, __u32 features, __u32 part,
			__u32 parts, void *scratch, __u64 scratch_size,
			int rounds)
{
	struct vnpu_eng_ctx ctx = { .features = features, .scratch = scratch,
				    .scratch_size = scratch_size };
	double best = 0, t0;
	int r;

	for (r = 0; r < rounds + 1; r++) {
		t0 = now();
		if (vnpu_eng_layer_run(l->op, l->t, l->data, l->n, &l->attrs,
				       part, parts, &ctx))
			return -1;
		t0 = now() - t0;
		/* The first run warms caches and pages. */
		if (r && (best == 0 || t0 < best))
			best = t0;
	}
	return best;
}

/*
 * --fpu-sections: each layer split as vnpu.ko's firmware splits it for a
 * device of @tiles tiles (vnpu_exec_parts()), each part timed alone on one
 * thread. A part is what a tile runs between kernel_fpu_begin() and
 * kernel_fpu_end(), so the longest is the longest FPU section the layer
 * gives on this CPU, natively.
 */
static int run_fpu_sections(const struct layer *layers, const __u32 *path,
			    int num_paths, const char *only, unsigned int tiles,
			    int rounds)
{
	int p, i;

	printf("FPU sections: each layer in the parts vnpu.ko splits it into for %u tiles,\n"
	       "each part timed alone on one thread (best of %d runs)\n", tiles,
	       rounds);
	for (p = 0; p < num_paths; p++) {
		if (!path_selected(only, layers, path[p]))
			continue;
		printf("\nengine path: %s\n", path_name(path[p]));
		printf("%-34s %6s %12s %12s\n", "kernel", "parts",
		       "longest ms", "mean ms");
		for (i = 0; i < NUM_LAYERS; i++) {
			const struct layer *l = &layers[i];
			struct vnpu_cmd_layer *cmd;
			double longest = 0, sum = 0, t;
			__u64 scratch_size;
			void *scratch;
			__u32 parts, part;

			if (!selected(only, l->name, path[p]))
				continue;
			cmd = layer_cmd(l);
			if (!cmd) {
				fprintf(stderr, "vnpu-kbench: out of memory\n");
				return 1;
			}
			parts = vnpu_exec_parts(&cmd->hdr,
						tiles * VNPU_EXEC_FW_PARTS_PER_TILE,
						VNPU_EXEC_FW_CHUNK_COST, path[p]);
			free(cmd);
			scratch_size = vnpu_eng_host_scratch_size(
				vnpu_eng_layer_scratch(l->op, l->t, l->n, &l->attrs,
						       parts, path[p]));
			scratch = scratch_size ? vnpu_eng_host_alloc(scratch_size) : NULL;
			for (part = 0; part < parts; part++) {
				t = time_part(l, path[p], part, parts, scratch,
					      scratch_size, rounds);
				if (t < 0)
					break;
				longest = t > longest ? t : longest;
				sum += t;
			}
			if (scratch)
				vnpu_eng_host_free(scratch, scratch_size);
			if (part < parts) {
				fprintf(stderr, "vnpu-kbench: %s: part %u failed\n",
					l->name, part);
				return 1;
			}
			printf("%-34s %6u %12.3f %12.3f\n", desc[i], parts,
			       longest * 1e3, sum / parts * 1e3);
		}
	}
	return 0;
}

/* ---- the CPUs' round trip ------------------------------------------- */

/*
 * --round-trip: one cache line passed between two threads pinned to two
 * CPUs, each waiting for the other's write before it writes back. A round
 * trip is the least a layer split across those CPUs pays for each part one
 * hands the other (a part counter, a barrier); on a virtual machine it also
 * shows where the host put the CPUs (two cores of one L3, or apart).
 */
#define RT_TRIPS 20000
#define RT_LIMIT_S 10.0	/* a round whose other side never runs gives up */

struct round_trip {
	_Atomic long turn __attribute__((aligned(64)));
};

static cpu_set_t one_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return set;
}

/* Spins until @rt's turn reaches @want; 0, or -1 past RT_LIMIT_S. */
static int rt_wait(struct round_trip *rt, long want, double deadline)
{
	unsigned int spins = 0;

	while (atomic_load_explicit(&rt->turn, memory_order_acquire) != want) {
		if (atomic_load_explicit(&rt->turn, memory_order_relaxed) < 0)
			return -1;
		if (!(++spins & 0xffff) && now() > deadline)
			return -1;
	}
	return 0;
}

static void *rt_echo(void *arg)
{
	struct round_trip *rt = arg;
	double deadline = now() + RT_LIMIT_S;
	long i;

	for (i = 0; i < RT_TRIPS; i++) {
		if (rt_wait(rt, 2 * i + 1, deadline))
			return NULL;
		atomic_store_explicit(&rt->turn, 2 * i + 2, memory_order_release);
	}
	return NULL;
}

/*
 * Nanoseconds per round trip between CPUs @a and @b, from one round of
 * RT_TRIPS; a negative value when a CPU could not be had or the other side
 * did not answer within RT_LIMIT_S. The echo thread starts on @b: begun on
 * @a under SCHED_FIFO (as benchmarks run), it would wait behind the spinning
 * caller forever.
 */
static double round_trip(int a, int b)
{
	static struct round_trip rt;
	cpu_set_t on_a = one_cpu(a), on_b = one_cpu(b);
	pthread_attr_t attr;
	double t0, deadline;
	pthread_t tid;
	long i;
	int bad = 0;

	atomic_store(&rt.turn, 0);
	if (pthread_setaffinity_np(pthread_self(), sizeof(on_a), &on_a) ||
	    pthread_attr_init(&attr))
		return -1;
	bad = pthread_attr_setaffinity_np(&attr, sizeof(on_b), &on_b) ||
	      pthread_create(&tid, &attr, rt_echo, &rt);
	pthread_attr_destroy(&attr);
	if (bad)
		return -1;
	t0 = now();
	deadline = t0 + RT_LIMIT_S;
	for (i = 0; i < RT_TRIPS && !bad; i++) {
		atomic_store_explicit(&rt.turn, 2 * i + 1, memory_order_release);
		bad = rt_wait(&rt, 2 * i + 2, deadline);
	}
	t0 = now() - t0;
	if (bad)
		atomic_store(&rt.turn, -1);
	pthread_join(tid, NULL);
	return bad ? -1 : t0 / RT_TRIPS * 1e9;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

/*
 * The round trip from the first CPU this process may run on to each other
 * one: the median of @rounds rounds and their range, one line per CPU.
 */
static int run_round_trip(int rounds)
{
	cpu_set_t allowed;
	double ns[100];
	int first = -1, cpu, r, n = 0;

	if (sched_getaffinity(0, sizeof(allowed), &allowed)) {
		perror("vnpu-kbench: sched_getaffinity");
		return 1;
	}
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &allowed))
			continue;
		if (first < 0) {
			first = cpu;
			continue;
		}
		for (r = 0; r < rounds; r++) {
			ns[r] = round_trip(first, cpu);
			if (ns[r] < 0) {
				fprintf(stderr, "vnpu-kbench: --round-trip: no round trip between CPUs %d and %d (one could not be had, or did not answer within 10 s)\n",
					first, cpu);
				return 1;
			}
		}
		qsort(ns, rounds, sizeof(*ns), cmp_double);
		printf("round trip CPU %d <-> CPU %d: %.0f ns (median of %d rounds of %d, %.0f to %.0f ns)\n",
		       first, cpu, ns[rounds / 2], rounds, RT_TRIPS, ns[0],
		       ns[rounds - 1]);
		n++;
	}
	if (!n)
		printf("round trip: this process may run on one CPU only: nothing to measure\n");
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: vnpu-kbench [--threads N] [--repeat N] [--rounds N] [--baseline]\n"
		"                   [--ort NODE_MODULES | --no-ort] [--only LIST]\n"
		"                   [--cpu-time]\n"
		"       vnpu-kbench --ukernel [--rounds N]\n"
		"       vnpu-kbench --fpu-sections TILES [--rounds N] [--only LIST]\n"
		"                   [--baseline]\n"
		"       vnpu-kbench --bandwidth [--threads N] [--repeat N] [--rounds N]\n"
		"                   [--baseline] [--ort NODE_MODULES | --no-ort]\n"
		"       vnpu-kbench --round-trip [--rounds N]\n"
		"GFLOP/s of the engine's GEMM and convolution kernels, with one\n"
		"thread and N (default: all CPUs), for each kernel path the CPU has\n"
		"(AVX-512, then AVX2 alone; --baseline: SSE2 only) next to that\n"
		"path's FMA peak, and to ONNX Runtime (onnxruntime-node under\n"
		"NODE_MODULES, default build/npm/node_modules of the source tree).\n"
		"Each figure is the best of N rounds (default 3) of --repeat runs\n"
		"(default 10).\n"
		"--only LIST: comma-separated kernels (gemm, conv3x3, dw3x3,\n"
		"conv1x1, gconv3x3, deconv2x2, gap, conv1x1_7, conv3x3_7: the\n"
		"last two on 7x7 maps; bert_ffn1, bert_ffn2, bert_qkv: BERT-base's\n"
		"MatMuls on a sequence of 128) and/or paths (avx512, avx2, baseline) to\n"
		"time; the others are left out.\n"
		"--cpu-time: time 1-thread runs by the thread's CPU time instead\n"
		"of the clock (less sensitive to other load; for comparisons).\n"
		"--ukernel: the GEMM micro-kernels alone, on one thread, on packed\n"
		"operands that stay in L1 or L2, against the same FMA peak.\n"
		"--fpu-sections TILES: each layer in the parts vnpu.ko's firmware\n"
		"splits it into for a device of TILES tiles (1 to 64), each part\n"
		"timed alone on one thread: the FPU sections the layer gives on\n"
		"this CPU natively (longest and mean).\n"
		"--bandwidth: the bandwidth-bound layers (Resize, Softmax,\n"
		"broadcasting Mul, Add, HardSwish, Transpose and Concat\n"
		"copies, ReduceMean, LayerNorm) in GB/s, against memcpy()\n"
		"moving the same bytes and ONNX Runtime on the same shapes.\n"
		"--round-trip: how long a cache line takes from the first CPU this\n"
		"process may run on to each other one and back (two pinned threads;\n"
		"median of --rounds rounds of 20000 trips): the least a layer split\n"
		"across CPUs pays per part, and on a virtual machine a sign of where\n"
		"the host placed the CPUs.\n");
}

/*
 * Option @opt's integer @arg into *@out when it lies in [@lo, @hi], else
 * -1 with a one-line message.
 */
static int int_arg(const char *opt, const char *arg, int lo, int hi,
		   int *out)
{
	char *end;
	long v = strtol(arg, &end, 10);

	if (*arg && !*end && v >= lo && v <= hi) {
		*out = (int)v;
		return 0;
	}
	if (hi == INT_MAX)
		fprintf(stderr, "vnpu-kbench: --%s: at least %d\n", opt, lo);
	else
		fprintf(stderr, "vnpu-kbench: --%s: %d to %d\n", opt, lo, hi);
	return -1;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "threads", required_argument, NULL, 't' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "baseline", no_argument, NULL, 'b' },
		{ "rounds", required_argument, NULL, 'R' },
		{ "ort", required_argument, NULL, 'o' },
		{ "no-ort", no_argument, NULL, 'n' },
		{ "ukernel", no_argument, NULL, 'u' },
		{ "only", required_argument, NULL, 'O' },
		{ "cpu-time", no_argument, NULL, 'C' },
		{ "fpu-sections", required_argument, NULL, 'F' },
		{ "bandwidth", no_argument, NULL, 'W' },
		{ "round-trip", no_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	char default_ort[4096];
	const char *ort = default_ort;
	int threads = (int)sysconf(_SC_NPROCESSORS_ONLN), repeat = 10, c, i;
	__u32 host, path[2];
	static struct layer layers[NUM_LAYERS];
	double ort_ms[NUM_LAYERS][2] = {}, gf[2][NUM_LAYERS][2] = {};
	double peak[2][2] = {}, bw[2] = {};
	int over = 0;
	int have_ort, rounds = 3, r, p, num_paths, baseline = 0, ukernel = 0;
	int fpu_tiles = 0, bandwidth = 0, trip = 0;
	const char *only = NULL;

	snprintf(default_ort, sizeof(default_ort), "%s/build/npm/node_modules",
		 KBENCH_SOURCE_DIR);
	host = vnpu_eng_host_features();
	while ((c = getopt_long(argc, argv, "t:r:R:bo:nuO:CF:WTh", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			if (int_arg("threads", optarg, 1, 64, &threads))
				return 2;
			break;
		case 'r':
			if (int_arg("repeat", optarg, 1, INT_MAX, &repeat))
				return 2;
			break;
		case 'b':
			baseline = 1;
			break;
		case 'R':
			if (int_arg("rounds", optarg, 1, 100, &rounds))
				return 2;
			break;
		case 'o':
			ort = optarg;
			break;
		case 'n':
			ort = NULL;
			break;
		case 'u':
			ukernel = 1;
			break;
		case 'O':
			only = optarg;
			if (!only_valid(only)) {
				fprintf(stderr, "vnpu-kbench: --only: comma-separated gemm, conv3x3, dw3x3, conv1x1, gconv3x3, deconv2x2, gap, conv1x1_7, conv3x3_7, bert_ffn1, bert_ffn2, bert_qkv, avx512, avx2, baseline\n");
				return 2;
			}
			break;
		case 'C':
			use_cpu_time = 1;
			break;
		case 'F':
			if (int_arg("fpu-sections", optarg, 1, 64, &fpu_tiles))
				return 2;
			break;
		case 'W':
			bandwidth = 1;
			break;
		case 'T':
			trip = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	if (ukernel && baseline) {
		fprintf(stderr, "vnpu-kbench: --ukernel times the FMA paths only, not --baseline\n");
		return 2;
	}
	if (ukernel && fpu_tiles) {
		fprintf(stderr, "vnpu-kbench: --ukernel and --fpu-sections are two modes: one at a time\n");
		return 2;
	}
	if (bandwidth && (ukernel || fpu_tiles || only)) {
		fprintf(stderr, "vnpu-kbench: --bandwidth is a mode of its own: no --ukernel, --fpu-sections or --only\n");
		return 2;
	}
	if (trip && (ukernel || fpu_tiles || bandwidth || only || baseline)) {
		fprintf(stderr, "vnpu-kbench: --round-trip is a mode of its own: --rounds only\n");
		return 2;
	}
	if (trip)
		return run_round_trip(rounds);
	if (ukernel)
		return run_ukernel(host, rounds);
	if (bandwidth)
		return run_bandwidth(baseline ? 0 : host, threads > 64 ? 64 : threads,
				     rounds, repeat, ort);
	if (threads > 64)
		threads = 64;
	/* The widest path this CPU has, then AVX2 alone when it differs. */
	num_paths = 1;
	path[0] = baseline ? 0 : host;
	if (!baseline && (host & VNPU_ENG_F_AVX512))
		path[num_paths++] = host & ~VNPU_ENG_F_AVX512;

	for (i = 0; i < NUM_LAYERS; i++)
		layers[i].name = names[i];
	make_gemm(&layers[0], 1024, 1024, 1024);
	make_conv(&layers[1], 64, 64, 56, 3, 1);
	make_conv(&layers[2], 32, 32, 112, 3, 32);
	make_conv(&layers[3], 256, 256, 28, 1, 1);
	make_conv(&layers[4], 128, 128, 56, 3, 32);
	make_deconv(&layers[5], 64, 64, 160);
	make_gap(&layers[6], 256, 160);
	make_conv(&layers[7], 2048, 512, 7, 1, 1);
	make_conv(&layers[8], 512, 512, 7, 3, 1);
	make_gemm(&layers[9], 128, 3072, 768);
	make_gemm(&layers[10], 128, 768, 3072);
	make_gemm(&layers[11], 128, 768, 768);
	for (i = 0; i < NUM_LAYERS; i++)
		if (vnpu_eng_layer_check(layers[i].op, layers[i].t, layers[i].n,
					 &layers[i].attrs, layers[i].attr_size)) {
			fprintf(stderr, "vnpu-kbench: %s: bad layer\n",
				layers[i].name);
			return 1;
		}

	if (fpu_tiles)
		return run_fpu_sections(layers, path, num_paths, only,
					(unsigned int)fpu_tiles, rounds);
	/*
	 * Rounds of everything, keeping each figure's best: on a shared
	 * machine a round may lose its CPU at any moment.
	 */
	for (r = 0; r < rounds; r++) {
		/* Each peak only where the CPU has its instructions. */
		for (p = 0; p < ((host & VNPU_ENG_F_AVX512) ? 2 :
				 (host & VNPU_ENG_F_AVX2_FMA) ? 1 : 0); p++) {
			double p1 = fma_peak(1, p), pn = fma_peak(threads, p);

			peak[p][0] = p1 > peak[p][0] ? p1 : peak[p][0];
			peak[p][1] = pn > peak[p][1] ? pn : peak[p][1];
		}
		/* The reads run 256-bit loads, as the pools do. */
		if ((host & VNPU_ENG_F_AVX2_FMA) &&
		    (selected(only, "gap", path[0]) ||
		     (num_paths > 1 && selected(only, "gap", path[1])))) {
			__u64 nb = (__u64)layers[6].bytes;
			double b1 = mem_bandwidth(1, nb);
			double bn = mem_bandwidth(threads, nb);

			bw[0] = b1 > bw[0] ? b1 : bw[0];
			bw[1] = bn > bw[1] ? bn : bw[1];
		}
		for (p = 0; p < num_paths; p++)
			for (i = 0; i < NUM_LAYERS; i++) {
				double g1, gn;

				if (!selected(only, layers[i].name, path[p]))
					continue;
				g1 = work(&layers[i]) /
				     time_layer(&layers[i], 1, path[p], repeat);
				gn = threads == 1 ? g1 : work(&layers[i]) /
				     time_layer(&layers[i], threads, path[p],
						repeat);

				gf[p][i][0] = g1 > gf[p][i][0] ? g1 : gf[p][i][0];
				gf[p][i][1] = gn > gf[p][i][1] ? gn : gf[p][i][1];
			}
	}
	have_ort = ort && !ort_times(ort, threads, ort_ms);
	printf("threads: %d; best of %d rounds\n", threads, rounds);
	if (host & VNPU_ENG_F_AVX2_FMA)
		printf("FMA peak AVX2 (8-wide): %.1f GFLOP/s 1 thread, %.1f GFLOP/s %d threads\n",
		       peak[0][0] / 1e9, peak[0][1] / 1e9, threads);
	else
		printf("FMA peak: none (no AVX2 and FMA on this CPU); %%peak columns are 0\n");
	if (host & VNPU_ENG_F_AVX512)
		printf("FMA peak AVX-512 (16-wide): %.1f GFLOP/s 1 thread, %.1f GFLOP/s %d threads\n",
		       peak[1][0] / 1e9, peak[1][1] / 1e9, threads);
	if (bw[0] > 0)
		printf("read bandwidth over %.0f MB (the pool's input): %.1f GB/s 1 thread, %.1f GB/s %d threads\n",
		       layers[6].bytes / 1e6, bw[0] / 1e9, bw[1] / 1e9, threads);
	if (!have_ort && ort)
		printf("ONNX Runtime: not available (onnxruntime-node under %s)\n",
		       ort);
	for (p = 0; p < num_paths; p++) {
		/* Each path against its own peak; the baseline against AVX2's. */
		int wide = !!(path[p] & VNPU_ENG_F_AVX512);

		if (!path_selected(only, layers, path[p]))
			continue;
		printf("\nengine path: %s (%%peak of the %s FMA peak)\n",
		       path_name(path[p]), wide ? "AVX-512" : "AVX2");
		printf("%-34s %9s %7s %9s %7s %9s %9s %7s  %s\n", "kernel",
		       "1T GF/s", "%peak", "NT GF/s", "%peak", "ORT 1T",
		       "ORT NT", "1T/ORT", "target (1T)");
		for (i = 0; i < NUM_LAYERS; i++) {
			const double *g = gf[p][i];
			/* Pools against the memory bandwidth, the rest FMA. */
			const double *pk = layers[i].bytes > 0 ? bw : peak[wide];
			double ratio, wk = work(&layers[i]);

			if (!selected(only, layers[i].name, path[p]))
				continue;
			printf("%-34s %9.1f %6.1f%% %9.1f %6.1f%%", desc[i],
			       g[0] / 1e9, percent(g[0], pk[0]),
			       g[1] / 1e9, percent(g[1], pk[1]));
			ratio = 0;
			if (have_ort && ort_ms[i][0] > 0) {
				ratio = g[0] * ort_ms[i][0] * 1e-3 / wk;
				printf(" %9.1f %9.1f %7.2f",
				       wk / (ort_ms[i][0] * 1e-3) / 1e9,
				       wk / (ort_ms[i][1] * 1e-3) / 1e9,
				       ratio);
			} else {
				printf(" %9s %9s %7s", "-", "-", "-");
			}
			printf("  %s\n", target(i, path[p] ?
					   percent(g[0], pk[0]) : -1,
					   ratio, path[p] != host));
			/* Winograd's figures count the direct flops. */
			over |= path[p] && !layers[i].bytes && i != 1 &&
				(percent(g[0], peak[wide][0]) > 100 ||
				 percent(g[1], peak[wide][1]) > 100);
		}
	}
	if (over)
		printf("warning: a kernel ran above its path's FMA peak: the peak was "
		       "measured while something else ran; run again\n");
	if (have_ort)
		printf("(ORT columns: ONNX Runtime's GFLOP/s on the same shape; "
		       "1T/ORT: our 1-thread speed over ORT's)\n");
	printf("(conv 3x3 runs as Winograd F(4x4, 3x3): its GF/s count the "
	       "direct convolution's flops, so its %%peak may pass 100)\n");
	printf("(GlobalAveragePool: GB/s it reads, %%peak of the memory "
	       "bandwidth; ConvTranspose: its 1x1 CONV and the COPY of its "
	       "phases, as the compiler lowers it)\n");
	if (have_ort)
		printf("(ONNX Runtime runs the CPU's widest vectors: it is the peer "
		       "of the engine's default path, %s here; a narrower path's "
		       "1T/ORT is not judged)\n", path_name(host));
	return 0;
}

// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Helpers of the engine unit tests (test_*.c, each a program on
 * kselftest_harness.h through tests/ksft_main.h): every layer op against a
 * naive reference, on the baseline and the AVX2+FMA builds, whole and
 * split into parts (which must agree bit for bit). They say what differs
 * on stderr and return non-zero, for the tests to check.
 */
#include "engine_test.h"

unsigned int et_host_features;

static unsigned long long rng_state = 0x9e3779b97f4a7c15ull;

float et_randf(void)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return (float)((rng_state >> 40) & 0xffffff) / 8388608.0f - 1.0f;
}

void et_fill_f32(float *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = et_randf();
}

struct vnpu_cmd_tensor et_dense(__u32 dtype, __u32 rank, const __u64 *dims)
{
	struct vnpu_cmd_tensor t;
	__s64 s = 1;
	int d;

	memset(&t, 0, sizeof(t));
	t.dtype = dtype;
	t.rank = rank;
	for (d = (int)rank - 1; d >= 0; d--) {
		t.dims[d] = dims[d];
		t.strides[d] = s;
		s *= (__s64)dims[d];
	}
	return t;
}

size_t et_bytes(const struct vnpu_cmd_tensor *t)
{
	size_t n = 1, span = 0;
	__u32 d;

	for (d = 0; d < t->rank; d++) {
		if (!t->dims[d])
			return 0;
		span += (t->dims[d] - 1) * (size_t)t->strides[d];
	}
	n = span + 1;
	switch (t->dtype) {
	case VNPU_DTYPE_F32: case VNPU_DTYPE_I32: case VNPU_DTYPE_U32:
		return n * 4;
	case VNPU_DTYPE_F64: case VNPU_DTYPE_I64: case VNPU_DTYPE_U64:
		return n * 8;
	case VNPU_DTYPE_F16: case VNPU_DTYPE_BF16: case VNPU_DTYPE_I16:
	case VNPU_DTYPE_U16:
		return n * 2;
	default:
		return n;
	}
}

size_t et_numel(const struct vnpu_cmd_tensor *t)
{
	size_t n = 1;
	__u32 d;

	for (d = 0; d < t->rank; d++)
		n *= t->dims[d];
	return n;
}

void et_coords(const struct vnpu_cmd_tensor *t, size_t e, size_t *c)
{
	int d;

	for (d = (int)t->rank - 1; d >= 0; d--) {
		c[d] = e % t->dims[d];
		e /= t->dims[d];
	}
}

size_t et_offset(const struct vnpu_cmd_tensor *t, const size_t *c)
{
	size_t off = 0;
	__u32 d;

	for (d = 0; d < t->rank; d++)
		off += c[d] * (size_t)t->strides[d];
	return off;
}

int et_run(__u32 op, const struct vnpu_cmd_tensor *t, void *const *data, __u32 n,
	   const void *attrs, __u32 attr_size, __u32 features, __u32 parts)
{
	struct vnpu_eng_ctx ctx;
	__u32 max, p;
	__u64 scratch;
	int rc;

	rc = vnpu_eng_layer_check(op, t, n, attrs, attr_size);
	if (rc)
		return rc;
	max = vnpu_eng_layer_max_parts(op, t, n, attrs, features);
	if (parts > max)
		parts = max;
	scratch = vnpu_eng_layer_scratch(op, t, n, attrs, parts, features);
	memset(&ctx, 0, sizeof(ctx));
	ctx.features = features;
	/* The parts share what they keep in the scratch, as a tile's do. */
	ctx.epoch = 1;
	ctx.scratch = scratch ? malloc(scratch) : NULL;
	ctx.scratch_size = scratch;
	if (scratch && !ctx.scratch)
		return -12;
	/*
	 * Scratch starts dirty, with floats of 3.4e38 that show in any sum
	 * they reach: a kernel must not rely on zeroes.
	 */
	if (scratch)
		memset(ctx.scratch, 0x7f, scratch);
	for (p = parts; p-- > 0;) {
		rc = vnpu_eng_layer_run(op, t, data, n, attrs, p, parts, &ctx);
		if (rc)
			break;
	}
	free(ctx.scratch);
	return rc;
}

/* Runs the four configurations; @outs receives each output. */
static int run_four(const char *name, __u32 op, const struct vnpu_cmd_tensor *t,
		    void **data, __u32 n, const void *attrs, __u32 attr_size,
		    size_t bytes, unsigned char **outs)
{
	static const __u32 parts[4] = { 1, 7, 1, 64 };
	/* What each run adds to AVX-512, where the host has @need, in @parts. */
	static const struct { __u32 f, need, parts; const char *name; } wide[] = {
		{ VNPU_ENG_F_AVX512, VNPU_ENG_F_AVX512, 7, "AVX-512" },
		{ VNPU_ENG_F_VBMI, VNPU_ENG_F_VBMI, 7, "VBMI" },
		{ VNPU_ENG_F_VNNI, VNPU_ENG_F_VNNI, 7, "VNNI" },
		{ VNPU_ENG_F_HALF_ZMM, VNPU_ENG_F_AVX512, 7, "halved-zmm" },
		{ VNPU_ENG_F_VNNI | VNPU_ENG_F_VBMI, VNPU_ENG_F_VNNI | VNPU_ENG_F_VBMI, 2,
		  "VNNI+VBMI" },
		{ VNPU_ENG_F_VNNI | VNPU_ENG_F_VBMI, VNPU_ENG_F_VNNI | VNPU_ENG_F_VBMI, 7,
		  "VNNI+VBMI" },
	};
	int i, rc;

	for (i = 0; i < 4; i++) {
		__u32 f = i < 2 ? 0 : VNPU_ENG_F_AVX2_FMA;

		outs[i] = malloc(bytes ? bytes : 1);
		if (i >= 2 && !(et_host_features & VNPU_ENG_F_AVX2_FMA)) {
			memcpy(outs[i], outs[i - 2], bytes);
			continue;
		}
		memset(data[n - 1], 0x7f, bytes);
		rc = et_run(op, t, data, n, attrs, attr_size, f, parts[i]);
		if (rc) {
			fprintf(stderr, "%s: run %d failed: %d\n", name, i, rc);
			return rc;
		}
		memcpy(outs[i], data[n - 1], bytes);
	}
	if (memcmp(outs[0], outs[1], bytes) || memcmp(outs[2], outs[3], bytes)) {
		fprintf(stderr, "%s: split runs differ from whole runs\n", name);
		return -1;
	}
	/*
	 * GEMM and CONV: the baseline's software FMA gives AVX2's bits;
	 * QLINEAR_CONV: exact integer sums on both.
	 */
	if ((op == VNPU_LAYER_GEMM || op == VNPU_LAYER_CONV ||
	     op == VNPU_LAYER_QLINEAR_CONV) &&
	    (et_host_features & VNPU_ENG_F_AVX2_FMA) &&
	    memcmp(outs[0], outs[2], bytes)) {
		fprintf(stderr, "%s: baseline bits differ from AVX2's\n", name);
		return -1;
	}
	/*
	 * The AVX-512 kernels, LOOKUP's rows on AVX512-VBMI, the int8 tiles
	 * on AVX512-VNNI (and its F(4x4) convolutions with VBMI, in 2 parts
	 * too) and the AVX-512 path of a core that halves zmm (any AVX-512
	 * host runs it), each in 7 parts: AVX2's bits.
	 */
	for (i = 0; i < (int)(sizeof(wide) / sizeof(wide[0])); i++) {
		if ((et_host_features & wide[i].need) != wide[i].need)
			continue;
		memset(data[n - 1], 0x7f, bytes);
		rc = et_run(op, t, data, n, attrs, attr_size,
			    VNPU_ENG_F_AVX2_FMA | VNPU_ENG_F_AVX512 | wide[i].f,
			    wide[i].parts);
		if (rc || memcmp(outs[2], data[n - 1], bytes)) {
			fprintf(stderr, "%s: %s run differs from AVX2 (%d)\n", name,
				wide[i].name, rc);
			return -1;
		}
	}
	return 0;
}

static int close_enough(float got, float want, double atol, double rtol)
{
	if (isnan(want))
		return isnan(got);
	if (isinf(want))
		return got == want;
	return fabs((double)got - want) <= atol + rtol * fabs(want);
}

int et_layer_f32(const char *name, __u32 op, const struct vnpu_cmd_tensor *t,
		 void **data, __u32 n, const void *attrs, __u32 attr_size,
		 const float *ref, double atol, double rtol)
{
	size_t bytes = et_bytes(&t[n - 1]), i, count = bytes / 4;
	unsigned char *outs[4] = {};
	int rc, k, bad = 0;

	rc = run_four(name, op, t, data, n, attrs, attr_size, bytes, outs);
	for (k = 0; !rc && k < 4; k += 2) {
		const float *got = (const float *)outs[k];

		for (i = 0; i < count; i++)
			if (!close_enough(got[i], ref[i], atol, rtol)) {
				if (bad++ < 3)
					fprintf(stderr, "%s (%s) [%zu]: got %.9g want %.9g\n",
						name, k ? "avx2" : "base", i,
						got[i], ref[i]);
			}
	}
	for (k = 0; k < 4; k++)
		free(outs[k]);
	return rc || bad;
}

int et_layer_exact(const char *name, __u32 op, const struct vnpu_cmd_tensor *t,
		   void **data, __u32 n, const void *attrs, __u32 attr_size,
		   const void *ref)
{
	size_t bytes = et_bytes(&t[n - 1]), i;
	unsigned char *outs[4] = {};
	int rc, k, bad = 0;

	rc = run_four(name, op, t, data, n, attrs, attr_size, bytes, outs);
	for (k = 0; !rc && k < 4; k += 2)
		for (i = 0; i < bytes; i++)
			if (outs[k][i] != ((const unsigned char *)ref)[i]) {
				if (bad++ < 3)
					fprintf(stderr, "%s: byte %zu: got %02x want %02x\n",
						name, i, outs[k][i],
						((const unsigned char *)ref)[i]);
			}
	for (k = 0; k < 4; k++)
		free(outs[k]);
	return rc || bad;
}

/* ET_SEED=n: other random shapes and data (the default is fixed). */
static void __attribute__((constructor)) et_init(void)
{
	if (getenv("ET_SEED"))
		rng_state += strtoull(getenv("ET_SEED"), NULL, 0) *
			     0x9e3779b97f4a7c15ull;
	et_host_features = vnpu_eng_host_features();
	/*
	 * The AVX512-BF16 kernels are tested wherever the CPU has them, also
	 * where the engine would not pick them (vnpu_eng_bf16_pays()).
	 */
	if (!getenv("VNPU_ENGINE_ISA") && (et_host_features & VNPU_ENG_F_AVX512) &&
	    __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512bf16"))
		et_host_features |= VNPU_ENG_F_AVX512_BF16;
}

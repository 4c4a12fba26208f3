// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * CHAIN: a short program of element-wise steps run on each block of
 * ENG_CHAIN_BLOCK outputs while the block sits in cache, so that the
 * inputs are read once and Y written once whatever the number of steps.
 * The steps' results live in the part's scratch, in buffers that steps
 * share when their results are not needed at once (eng_chain_slots()).
 * Built per ISA (vnpu_eng_isa.h).
 *
 * A step gives what its UNARY or BINARY layer gives on f32 tensors: the
 * functions through act_f32(), the binary ones in f32 (each of +, -, *, /
 * rounds once, as BINARY's f32 and double paths do; max and min round
 * nothing). The binary steps run in vectors of 8 lanes, or of 16 on the
 * AVX-512 path (vnpu_eng_chain_avx512.c): a lane's result is the same
 * either way.
 */
#include "vnpu_eng_kern.h"

/* A step's operand over one block: @n floats at @p, or one repeated. */
struct chain_val {
	const float *p;
	int run;	/* 1: one per element; 0: @p[0] for all */
};

/**
 * struct chain_arg - one part of a CHAIN layer
 * @a: the attributes
 * @inputs: input tensors
 * @avx512: binary steps and the float activations in 16 lanes
 * @slot: each step's buffer
 * @bufs: the step buffers, then one per input, ENG_CHAIN_BLOCK floats each
 * @in_bufs: the first of the inputs' buffers in @bufs
 */
struct chain_arg {
	const struct vnpu_layer_chain *a;
	__u32 inputs;
	int avx512;
	__u8 slot[VNPU_CHAIN_MAX_STEPS];
	float *bufs, *in_bufs;
};

/*
 * r = a OP b over @n lanes: @a and @b runs (@ra, @rb) or repeated; VF on
 * v8sf x and y, SF on floats a and b. A repeated operand is read before
 * the loop: @r may be its buffer.
 */
#define CHAIN_VLOOP(VF, SF) do {					\
	const float a0 = pa[0], b0 = pb[0];				\
	const v8sf xa = vbcast(a0), xb = vbcast(b0);			\
									\
	for (i = 0; i + 8 <= n; i += 8) {				\
		v8sf x = ra ? vload(pa + i) : xa;			\
		v8sf y = rb ? vload(pb + i) : xb;			\
									\
		vstore(r + i, VF);					\
	}								\
	for (; i < n; i++) {						\
		float a = ra ? pa[i] : a0, b = rb ? pb[i] : b0;		\
									\
		r[i] = SF;						\
	}								\
} while (0)

/* Lanes of F32_MAX(x, y, @max): x where x is NaN or wins, else y. */
static inline v8sf chain_vmax(v8sf x, v8sf y, int max)
{
	v8si take = (x != x) | (max ? x > y : x < y);

	return (v8sf)(((v8si)x & take) | ((v8si)y & ~take));
}

/* Lanes of F32_NAN_FIRST(x, r). */
static inline v8sf chain_vnan_first(v8sf x, v8sf r)
{
	v8si nan = x != x;

	return (v8sf)(((v8si)(x + x) & nan) | ((v8si)r & ~nan));
}

static void chain_binary8(__u32 func, const float *pa, int ra,
			  const float *pb, int rb, float *r, __u32 n)
{
	__u32 i;

	switch (func) {
	case VNPU_BIN_ADD:
		CHAIN_VLOOP(chain_vnan_first(x, x + y),
			    F32_NAN_FIRST(a, a + b));
		break;
	case VNPU_BIN_SUB:
		CHAIN_VLOOP(x - y, a - b);
		break;
	case VNPU_BIN_MUL:
		CHAIN_VLOOP(chain_vnan_first(x, x * y),
			    F32_NAN_FIRST(a, a * b));
		break;
	case VNPU_BIN_DIV:
		CHAIN_VLOOP(x / y, a / b);
		break;
	case VNPU_BIN_MAX:
		CHAIN_VLOOP(chain_vmax(x, y, 1), F32_MAX(a, b, 1));
		break;
	default:	/* VNPU_BIN_MIN, the only other one check_chain() takes */
		CHAIN_VLOOP(chain_vmax(x, y, 0), F32_MAX(a, b, 0));
		break;
	}
}

/*
 * r = a OP b over @n lanes, OP one of the functions a CHAIN step takes
 * (+, -, *, /, max, min): @pa and @pb runs (@ra, @rb) or repeated, in 16
 * lanes on the AVX-512 path (@avx512), else in 8; the same bits either
 * way. BINARY's dense f32 layers run it too.
 */
void bin_f32_runs(__u32 func, const float *pa, int ra, const float *pb,
		  int rb, float *r, __u32 n, int avx512)
{
#ifdef ENG_FMA
	if (avx512 && n > 1) {
		vnpu_eng_chain_binary_avx512(func, pa, ra, pb, rb, r, n);
		return;
	}
#endif
	chain_binary8(func, pa, ra, pb, rb, r, n);
}

/* Binary @func of @x and @y over @n elements into @r. */
static struct chain_val chain_binary(const struct chain_arg *c, __u32 func,
				     struct chain_val x, struct chain_val y,
				     float *r, __u32 n)
{
	if (!x.run && !y.run)
		n = 1;	/* both repeated: one value for the block */
	bin_f32_runs(func, x.p, x.run, y.p, y.run, r, n, c->avx512);
	return (struct chain_val){ r, n > 1 };
}

/* The value operand @ref names (@imm: its step's immediate). */
static struct chain_val chain_operand(__u32 ref, const float *imm,
				      const struct chain_val *ins,
				      const struct chain_val *steps)
{
	if (ref == VNPU_CHAIN_IMM)
		return (struct chain_val){ imm, 0 };
	if (ref >= VNPU_CHAIN_STEP(0))
		return steps[ref - VNPU_CHAIN_STEP(0)];
	return ins[ref];
}

/* Input elements of a block: @m floats at @p, @st bytes apart. */
static struct chain_val chain_input(const char *p, __s64 st, __u32 m,
				    float *buf)
{
	__u32 i;

	if (st == 4)
		return (struct chain_val){ (const float *)p, 1 };
	if (!st)
		return (struct chain_val){ (const float *)p, 0 };
	for (i = 0; i < m; i++)
		buf[i] = *(const float *)(p + (__s64)i * st);
	return (struct chain_val){ buf, 1 };
}

/*
 * The steps of @c on one block of @m outputs; @y: where the last writes
 * when Y is contiguous there, else NULL. Returns the last result.
 */
static struct chain_val chain_block(const struct chain_arg *c,
				    const struct chain_val *ins, __u32 m,
				    float *y)
{
	struct chain_val steps[VNPU_CHAIN_MAX_STEPS];
	__u32 k, last = c->a->num_steps - 1;

	for (k = 0; k <= last; k++) {
		const struct vnpu_chain_step *st = &c->a->steps[k];
		float al = f32_of(st->alpha), be = f32_of(st->beta);
		struct chain_val x = chain_operand(st->a, &al, ins, steps), b;
		float *r = k == last && y ? y :
			   c->bufs + c->slot[k] * ENG_CHAIN_BLOCK;

		if (st->kind == VNPU_CHAIN_UNARY) {
			struct vnpu_layer_act act = { st->func, 0, st->alpha,
						      st->beta };

			act_f32(&act, x.p, r, x.run ? m : 1, c->avx512);
			steps[k] = (struct chain_val){ r, x.run };
			continue;
		}
		b = chain_operand(st->b, &be, ins, steps);
		steps[k] = chain_binary(c, st->func, x, b, r, m);
	}
	return steps[last];
}

static void chain_row(const void *arg, char *const *p, const __s64 *st,
		      __u64 n)
{
	const struct chain_arg *c = arg;
	struct chain_val ins[VNPU_CHAIN_MAX_INPUTS], r;
	__s64 ys = st[c->inputs];
	__u64 i;
	__u32 j, e;

	for (i = 0; i < n; i += ENG_CHAIN_BLOCK) {
		__u32 m = (__u32)eng_min(ENG_CHAIN_BLOCK, n - i);
		char *y = p[c->inputs] + (__s64)i * ys;

		for (j = 0; j < c->inputs; j++)
			ins[j] = chain_input(p[j] + (__s64)i * st[j], st[j], m,
					     c->in_bufs + j * ENG_CHAIN_BLOCK);
		r = chain_block(c, ins, m, ys == 4 ? (float *)y : 0);
		if (r.p == (const float *)y && r.run)
			continue;	/* written in place */
		for (e = 0; e < m; e++)
			*(float *)(y + (__s64)e * ys) = r.p[r.run ? e : 0];
	}
}

int run_chain(const struct eng_layer *l, __u64 ub, __u64 ue,
	      const struct vnpu_eng_ctx *ctx)
{
	const struct vnpu_layer_chain *a = l->attrs;
	const struct vnpu_cmd_tensor *y = &l->t[l->n - 1];
	struct chain_arg arg = { .a = a, .inputs = l->n - 1 };
	struct eng_iter it;
	__u64 lo, hi;
	__u32 i;

#ifdef ENG_FMA
	arg.avx512 = !!(ctx->features & VNPU_ENG_F_AVX512);
#endif
	arg.bufs = ctx->scratch;
	arg.in_bufs = arg.bufs + eng_chain_slots(a, arg.slot) * ENG_CHAIN_BLOCK;
	iter_init(&it, y);
	for (i = 0; i < l->n; i++)
		iter_add(&it, &l->t[i], y, l->data[i]);
	flat_range(y, a->num_steps, ub, ue, &lo, &hi);
	iter_run(&it, lo, hi, chain_row, &arg);
	return 0;
}

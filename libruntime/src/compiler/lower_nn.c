// SPDX-License-Identifier: MIT
/*
 * Lowering of the NN ops to layers: Gemm and MatMul (constant B packed),
 * Conv (constant W packed) and ConvTranspose, pooling, softmax, the
 * normalizations, reductions, resize, pad, gathers and the losses.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/vnpu_engine.h"
#include "lower.h"

struct bin_map {
	const char *op;
	uint32_t func;
};

static vnpu_status reduce(struct cstate *s, uint32_t func, int32_t x, int32_t y, uint32_t mask);

/* Swap the last two dims of a view (a transpose for free). */
static struct ctensor ct_transposed(struct ctensor t)
{
	uint32_t r = t.rank;
	int64_t d = t.dims[r - 1], st = t.strides[r - 1];

	t.dims[r - 1] = t.dims[r - 2];
	t.strides[r - 1] = t.strides[r - 2];
	t.dims[r - 2] = d;
	t.strides[r - 2] = st;
	return t;
}

/* Weights the engine packs: f32, or f16 and bf16 widened to f32 (exactly). */
static bool packable(const struct vnpu_tinfo *t)
{
	return t->type == VNPU_TYPE_F32 || t->type == VNPU_TYPE_F16 || t->type == VNPU_TYPE_BF16;
}

/* Constant @t as f32: its own data, or a widened copy in *@copy (freed by the caller). */
static const float *const_f32(const struct vnpu_tinfo *t, float **copy)
{
	int64_t n = vnpu_tinfo_elems(t);

	*copy = NULL;
	if (t->type == VNPU_TYPE_F32)
		return t->data;
	*copy = malloc((size_t)(n + 1) * sizeof(float));
	if (!*copy)
		return NULL;
	for (int64_t i = 0; i < n; i++)
		(*copy)[i] = (float)vnpu_elem_get_f(t->data, t->type, i);
	return *copy;
}

/*
 * Whether the bf16 hint's weights widen to f32 in the engine: where the
 * engine does not take its AVX512-BF16 kernels (vnpu_eng_bf16_pays()). A
 * widened layer gives the f32 layer's bits on the rounded weights, so a
 * layer with a faster f32 layout (Winograd, the lanes) takes that layout
 * on the rounded weights in f32 (more bytes, the same bits, f32's speed).
 * The f16 hint decides by the layers' shapes alone (conv_hinted(),
 * conv_wino()): its f32 layouts keep the f32 weights.
 */
static bool hint_widens(const struct cstate *s)
{
	return s->opt.inference_precision == VNPU_TYPE_BF16 &&
	       !(vnpu_eng_host_features() & VNPU_ENG_F_AVX512_BF16);
}

/*
 * @t's elements in f32 rounded to @type (f16 or bf16) to nearest even,
 * as add_packed() rounds them (through f32), in f32 again; NULL when out
 * of memory.
 */
static float *const_rounded(const struct vnpu_tinfo *t, vnpu_element_type type)
{
	int64_t n = vnpu_tinfo_elems(t);
	float *r = malloc((size_t)(n + 1) * sizeof(float));
	uint16_t h;

	if (!r)
		return NULL;
	for (int64_t i = 0; i < n; i++) {
		vnpu_elem_set_f(&h, type, 0, (float)vnpu_elem_get_f(t->data, t->type, i));
		r[i] = (float)vnpu_elem_get_f(&h, type, 0);
	}
	return r;
}

/*
 * Adds f32 weights packed in @layout (@groups, @rows, @cols as
 * vnpu_eng_pack() took them, @size elements; ownership taken) as a
 * constant, when @hinted of the inference precision: f16 and bf16 panels
 * (rounded to nearest even) take half the bytes; bf16 ones go in depth
 * pairs (vnpu_eng_pair_bf16()), which the AVX512-BF16 kernels read in
 * place and the others widen to f32 a depth slice at a time.
 */
static vnpu_status add_packed(struct cstate *s, float *packed, uint64_t size, uint32_t layout,
			      uint64_t groups, uint64_t rows, uint64_t cols, bool hinted,
			      int32_t *out)
{
	vnpu_element_type type = hinted ? s->opt.inference_precision : VNPU_TYPE_F32;
	int64_t psize = (int64_t)size;
	uint16_t half[256];
	float wide[256];
	void *h;

	if (type != VNPU_TYPE_F16 && type != VNPU_TYPE_BF16)
		return cs_add_const(s, VNPU_TYPE_F32, 1, &psize, packed, out);
	/*
	 * Rounded in place, a run at a time (element i's two bytes land
	 * below the four of every element not read yet), into the first
	 * half of the block, which keeps only that.
	 */
	for (uint64_t i = 0; i < size; i += 256) {
		uint64_t n = size - i < 256 ? size - i : 256;

		memcpy(wide, packed + i, n * sizeof(*wide));
		for (uint64_t j = 0; j < n; j++)
			vnpu_elem_set_f(half, type, (int64_t)j, wide[j]);
		memcpy((uint16_t *)(void *)packed + i, half, n * sizeof(*half));
	}
	h = cs_weights_shrink(s, packed, size * sizeof(*half));
	if (type == VNPU_TYPE_BF16 && vnpu_eng_pair_bf16(layout, groups, rows, cols, h)) {
		cs_weights_free(s, h);
		return VNPU_UNSUPPORTED;
	}
	return cs_add_const(s, type, 1, &psize, h, out);
}

/* Pack constant B [K, N] (@trans: stored [N, K]) for GEMM; -1 on failure. */
vnpu_status cl_pack_gemm_b(struct cstate *s, int32_t bv, bool trans, bool hinted,
			   int32_t *out)
{
	const struct vnpu_tinfo binfo = *INFO(s, bv), *b = &binfo;
	/*
	 * Transposed B may be [N, 1, K] (a 1-D convolution's W of one channel)
	 * or [N, K, 1, 1] (a 1x1 convolution's W): K is what follows N.
	 */
	int64_t n = trans ? b->dims[0] : b->dims[1];
	int64_t k = trans ? vnpu_tinfo_elems(b) / (n ? n : 1) : b->dims[0];
	uint64_t size = vnpu_eng_packed_size(VNPU_PACK_GEMM_B, 1, (uint64_t)k, (uint64_t)n);
	float *dense = NULL, *packed, *wide;
	const float *src;

	if (!size)
		return VNPU_UNSUPPORTED;
	src = const_f32(b, &wide);
	packed = cs_weights_alloc(s, size * sizeof(float));
	if (trans)
		dense = malloc((size_t)(k * n + 1) * sizeof(float));
	if (!src || !packed || (trans && !dense)) {
		cs_weights_free(s, packed);
		free(dense);
		free(wide);
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory packing weights");
	}
	if (trans) {
		for (int64_t i = 0; i < k; i++)
			for (int64_t j = 0; j < n; j++)
				dense[i * n + j] = src[j * k + i];
		src = dense;
	}
	if (vnpu_eng_pack(VNPU_PACK_GEMM_B, src, 1, (uint64_t)k, (uint64_t)n, packed)) {
		cs_weights_free(s, packed);
		free(dense);
		free(wide);
		return VNPU_UNSUPPORTED;
	}
	free(dense);
	free(wide);
	return add_packed(s, packed, size, VNPU_PACK_GEMM_B, 1, (uint64_t)k, (uint64_t)n, hinted,
			  out);
}

static vnpu_status gemm_layer(struct cstate *s, struct cop *op, struct ctensor a, struct ctensor b,
			      int32_t packed_b, int32_t c, float alpha, float beta, struct ctensor y)
{
	struct vnpu_layer_gemm attr = { .alpha = f32_bits(alpha), .beta = f32_bits(beta),
					.act = op->act };
	struct ctensor t[5];
	uint32_t n = 0;

	t[n++] = a;
	if (packed_b >= 0) {
		t[n++] = ct_dense(s, packed_b);
		attr.flags |= VNPU_LAYER_F_PACKED;
	} else {
		t[n++] = b;
	}
	if (c >= 0) {
		t[n++] = ct_dense(s, c);
		attr.flags |= VNPU_LAYER_F_BIAS;
	}
	if (op->residual >= 0) {
		/* Of the output's shape: as Y's view of it. */
		t[n++] = ct_shaped(s, op->residual, (int32_t)y.rank, y.dims);
		attr.flags |= VNPU_LAYER_F_RESIDUAL;
	}
	t[n++] = y;
	return cl_layer(s, VNPU_LAYER_GEMM, t, n, &attr, sizeof(attr));
}

static vnpu_status lower_gemm(struct cstate *s, struct cop *op)
{
	bool ta = vnpu_attr_int(N(op), "transA", 0), tb = vnpu_attr_int(N(op), "transB", 0);
	struct ctensor a = ct_dense(s, IN(op, 0)), b = ct_dense(s, IN(op, 1));
	int32_t c = IN(op, 2) >= 0 ? IN(op, 2) : op->bias, packed = -1;
	float beta = IN(op, 2) >= 0 ? vnpu_attr_float(N(op), "beta", 1.0f) : 1.0f;

	if (ta)
		a = ct_transposed(a);
	if (tb)
		b = ct_transposed(b);
	if (cs_is_const(s, IN(op, 1)) && packable(INFO(s, IN(op, 1))) && !s->opt.no_packing) {
		vnpu_status st = cl_pack_gemm_b(s, IN(op, 1), tb, true, &packed);

		if (st && st != VNPU_UNSUPPORTED)
			return st;
	}
	return gemm_layer(s, op, a, b, packed, c, vnpu_attr_float(N(op), "alpha", 1.0f), beta,
			  ct_dense(s, op->out[0]));
}

static vnpu_status lower_matmul(struct cstate *s, struct cop *op)
{
	const struct vnpu_tinfo ainfo = *INFO(s, IN(op, 0)), binfo = *INFO(s, IN(op, 1));
	const struct vnpu_tinfo *ai = &ainfo, *bi = &binfo;
	const struct vnpu_tinfo yinfo = *INFO(s, op->out[0]), *yi = &yinfo;
	int64_t adims[VNPU_MAX_RANK], bdims[VNPU_MAX_RANK], ydims[VNPU_MAX_RANK];
	int32_t ar = ai->rank, br = bi->rank, yr = yi->rank, packed = -1;
	struct ctensor a, b, y;

	memcpy(adims, ai->dims, sizeof(adims));
	memcpy(bdims, bi->dims, sizeof(bdims));
	memcpy(ydims, yi->dims, sizeof(ydims));
	if (ar == 1 && br == 1) {
		/* A dot product: Y is a scalar, [1, 1] here. */
		adims[1] = adims[0];
		adims[0] = 1;
		ar = 2;
		ydims[0] = ydims[1] = 1;
		yr = 2;
	} else if (ar == 1) {
		adims[1] = adims[0];
		adims[0] = 1;
		ar = 2;
		/* Y lost M: put it back as a 1 before N. */
		ydims[yr] = ydims[yr - 1];
		ydims[yr - 1] = 1;
		yr++;
	}
	if (br == 1) {
		bdims[1] = 1;
		br = 2;
		if (ai->rank != 1)
			ydims[yr++] = 1;
	}
	if (ar > VNPU_MAX_RANK || yr > VNPU_MAX_RANK)
		return UNSUP(s, "rank above %d", VNPU_MAX_RANK);
	a = ct_shaped(s, IN(op, 0), ar, adims);
	b = ct_shaped(s, IN(op, 1), br, bdims);
	y = ct_shaped(s, op->out[0], yr, ydims);
	if (br == 2 && cs_is_const(s, IN(op, 1)) && packable(bi) && !s->opt.no_packing &&
	    bi->rank == 2) {
		vnpu_status st = cl_pack_gemm_b(s, IN(op, 1), false, true, &packed);

		if (st && st != VNPU_UNSUPPORTED)
			return st;
	}
	return gemm_layer(s, op, a, b, packed, op->bias, 1.0f, 1.0f, y);
}

/* Spatial attributes of Conv/Pool for 1-D and 2-D, SAME pads made explicit. */
/* One spatial axis of a window: kernel, stride, dilation and pads. */
struct win_axis {
	uint32_t k, stride, dil, pb, pe;
};

/* The @nsp axes of @op's window over X @x giving Y @y, SAME pads made explicit. */
static void window_axes(struct cstate *s, const struct cop *op, int32_t x, int32_t y,
			const int64_t *kernel, int32_t nsp, struct win_axis *ax)
{
	const struct vnpu_node *n = N(op);
	const struct vnpu_attr *sa = vnpu_node_attr(n, "strides"), *da = vnpu_node_attr(n, "dilations");
	const struct vnpu_attr *pa = vnpu_node_attr(n, "pads");
	const char *autopad = vnpu_attr_str(n, "auto_pad", "NOTSET");

	for (int32_t d = 0; d < nsp; d++) {
		int64_t in = INFO(s, x)->dims[2 + d], out = INFO(s, y)->dims[2 + d];
		int64_t st = sa && sa->n == (size_t)nsp ? sa->ints[d] : 1;
		int64_t dl = da && da->n == (size_t)nsp ? da->ints[d] : 1;

		ax[d] = (struct win_axis){ (uint32_t)kernel[d], (uint32_t)st, (uint32_t)dl, 0, 0 };
		if (!strcmp(autopad, "SAME_UPPER") || !strcmp(autopad, "SAME_LOWER")) {
			int64_t total = (out - 1) * st + (kernel[d] - 1) * dl + 1 - in;

			total = total < 0 ? 0 : total;
			ax[d].pb = (uint32_t)(!strcmp(autopad, "SAME_UPPER") ? total / 2 : total - total / 2);
			ax[d].pe = (uint32_t)(total - ax[d].pb);
		} else if (pa && pa->n == (size_t)nsp * 2 && strcmp(autopad, "VALID")) {
			ax[d].pb = (uint32_t)pa->ints[d];
			ax[d].pe = (uint32_t)pa->ints[d + nsp];
		}
	}
}

static vnpu_status window_attrs(struct cstate *s, const struct cop *op, int32_t x, int32_t y,
				const int64_t *kernel, uint32_t *k, uint32_t *stride,
				uint32_t *dil, uint32_t *pb, uint32_t *pe)
{
	int32_t nsp = rank_of(s, x) - 2;
	struct win_axis ax[2];

	if (nsp < 1 || nsp > 2)
		return UNSUP(s, "%d-D windows (only 1-D and 2-D)", nsp);
	for (int32_t d = 0; d < 2; d++) {
		k[d] = stride[d] = dil[d] = 1;
		pb[d] = pe[d] = 0;
	}
	window_axes(s, op, x, y, kernel, nsp, ax);
	for (int32_t d = 0; d < nsp; d++) {
		int32_t o = d + 2 - nsp;	/* 1-D uses [1] */

		k[o] = ax[d].k;
		stride[o] = ax[d].stride;
		dil[o] = ax[d].dil;
		pb[o] = ax[d].pb;
		pe[o] = ax[d].pe;
	}
	return VNPU_OK;
}

vnpu_status cl_conv_attrs(struct cstate *s, const struct cop *op, int32_t x, int32_t w, int32_t y,
			  struct vnpu_layer_conv *attr)
{
	const struct vnpu_tinfo *wi = INFO(s, w);
	int32_t nsp = wi->rank - 2;
	int64_t kernel[2];

	memset(attr, 0, sizeof(*attr));
	attr->act = op->act;
	attr->group = (uint32_t)vnpu_attr_int(N(op), "group", 1);
	if (nsp < 1 || nsp > 2)
		return UNSUP(s, "%d-D convolution (only 1-D and 2-D)", nsp);
	for (int32_t d = 0; d < nsp; d++)
		kernel[d] = wi->dims[2 + d];
	return window_attrs(s, op, x, y, kernel, attr->kernel, attr->stride, attr->dilation,
			    attr->pad_begin, attr->pad_end);
}

/*
 * Whether a CONV's weights @wi (in @group groups) take the precision
 * hint's type. The bf16 and f16 hints are for speed (runtime.rst,
 * Precision hints): they keep f32 weights, and so the f32 layer, where
 * their kernels are no faster (the f16 hint's alike: its activations are
 * rounded to f16 in the same places).
 * Depthwise taps: no bf16 kernel reads them, they widen (MobileNetV3's
 * depthwise layers took 1.2-1.6x their f32 time). A depth under 32 per
 * output (3x3 over 3 channels, 1x1 over 16): each column's activations are
 * rounded for too few pair products (on Zen 5: 3x3 3->16 on 224x224 stride
 * 2 took 1.14x, 1x1 16->16 on 112x112 1.19x its f32 time; 24 channels
 * 0.93x); under 4 where the AVX512-BF16 kernels run at twice f32's rate
 * (vnpu_eng_host_bf16_min_depth(): Zen 4). There, too, one panel of output
 * channels per group (%VNPU_PACK_MR or fewer) keeps f32 weights: the
 * engine widens such a layer's bf16 weights rather than fill a tile's
 * rows with its few (eng_conv_bf16_native()), which DBNet's last
 * ConvTranspose (64 -> 1, 2x2 stride 2: 4 channels by phases) took 1.27x
 * its f32 time for.
 */
static bool conv_hinted(const struct cstate *s, const struct vnpu_tinfo *wi, int64_t group)
{
	int64_t depth = wi->dims[0] ? vnpu_tinfo_elems(wi) / wi->dims[0] : 0;
	int64_t least = 32;

	if (s->opt.inference_precision != VNPU_TYPE_BF16 &&
	    s->opt.inference_precision != VNPU_TYPE_F16)
		return true;
	if (s->opt.inference_precision == VNPU_TYPE_BF16 && !hint_widens(s)) {
		least = vnpu_eng_host_bf16_min_depth();
		if (group > 0 && wi->dims[0] / group <= VNPU_PACK_MR)
			return false;
	}
	return !(wi->rank == 4 && wi->dims[1] == 1 && wi->dims[0] == group) && depth >= least;
}

/*
 * The smallest output maps the bf16 hint runs as Winograd F(4x2, 3x3)
 * rather than F(2x2, 3x3), whose GEMMs do 4 multiply-adds an output
 * against 3: 12 rows, where its tiles of 4 rows waste little (6 rows run
 * as 8), and 14x14 outputs, where its fewer panels of 16 tiles pay for
 * its larger transforms. One Conv+Relu on one CPU, ms, F(2x2) -> F(4x2):
 * 128->128 on 12x80 0.430 -> 0.344, 256->256 on 14x14 0.420 -> 0.353; on
 * 6x80 0.734 -> 0.778, 3x80, 10x10, 12x12 and 8x8 about even (engine.rst).
 */
#define WINO42_MIN_ROWS 12
#define WINO42_MIN_OUTPUTS (14 * 14)

/*
 * The fewest channels a side (input and output per group) of a bf16
 * Winograd CONV, half f32's ENG_WINO_MIN_C: the direct convolution
 * rounds each column's window to bf16 pairs for that side's rows, too
 * few to pay (one Conv+SiLU, one CPU, ms, direct -> F(4x2, 3x3): 16->16
 * on 160x160 1.1-1.2 -> 0.68, 16->32 1.89 -> 1.13, 256->16 on 80x80 3.9
 * -> 1.6; f32, direct, 16->16 1.40).
 */
#define WINO_BF16_MIN_C 16

/* Whether a Winograd CONV of weights @wi takes the bf16 kinds' bf16 U. */
static bool wino_bf16(const struct cstate *s, const struct vnpu_tinfo *wi, int64_t group)
{
	return s->opt.inference_precision == VNPU_TYPE_BF16 && !hint_widens(s) &&
	       conv_hinted(s, wi, group);
}

/*
 * The Winograd flag of CONV @attr of @x by @wi into @y where the engine
 * runs it faster so, else 0: %VNPU_LAYER_F_WINO, F(4x4, 3x3) on f32
 * weights, or under the bf16 hint where the layer takes bf16 weights
 * (conv_hinted()) and the engine takes the AVX512-BF16 kernels
 * %VNPU_LAYER_F_WINO42, F(4x2, 3x3), on maps of
 * WINO42_MIN_ROWS rows and WINO42_MIN_OUTPUTS outputs and up, else
 * %VNPU_LAYER_F_WINO2, F(2x2, 3x3), also on maps of too few tiles of 4x4
 * outputs but enough of 2x2 (ResNet-50's 512->512 on 7x7: 16 tiles,
 * 1.8x the weights' bytes in U but 49/64 of the direct convolution's
 * padded columns' and 4/9 of its multiply-adds; 0.83 -> 0.68 ms in the
 * model on one CPU); under bf16 from WINO_BF16_MIN_C channels a side.
 * Without that bf16, F(2x2, 3x3) on f32 U where the
 * engine says it pays on this host (vnpu_eng_wino2_pays(): the same maps,
 * on FMA hosts). The f16 hint takes f32's kinds where they pay,
 * on f32 weights: four times fewer multiply-adds than its f16 kernels'
 * direct convolution at twice f32's rate. Where the bf16 hint widens
 * (hint_widens()), the f32 layer's flag, its U from the rounded weights.
 */
static uint32_t conv_wino(const struct cstate *s, const struct vnpu_layer_conv *attr,
			  const struct vnpu_tinfo *wi, const struct ctensor *x,
			  const struct ctensor *y)
{
	struct vnpu_cmd_tensor tx = { .dtype = VNPU_DTYPE_F32, .rank = x->rank };
	struct vnpu_cmd_tensor ty = { .dtype = VNPU_DTYPE_F32, .rank = y->rank };
	bool bf16 = wino_bf16(s, wi, attr->group);

	if (x->type != VNPU_TYPE_F32)
		return 0;
	for (uint32_t d = 0; d < x->rank; d++)
		tx.dims[d] = (uint64_t)x->dims[d];
	for (uint32_t d = 0; d < y->rank; d++)
		ty.dims[d] = (uint64_t)y->dims[d];
	/*
	 * Under bf16 a side of WINO_BF16_MIN_C channels or more counts
	 * twice against eng_wino_pays()'s 32.
	 */
	for (int32_t i = 0; bf16 && x->rank == 4 && y->rank == 4 && i < 2; i++) {
		__u64 *c = i ? &ty.dims[1] : &tx.dims[1];

		if (*c >= WINO_BF16_MIN_C * attr->group && *c < 2 * WINO_BF16_MIN_C * attr->group)
			*c *= 2;
	}
	if (!vnpu_eng_wino_pays(attr, &tx, &ty)) {
		/*
		 * Too few 4x4 tiles: F(2x2, 3x3) under bf16 where its 2x2
		 * tiles are enough, as many as F(4x4, 3x3)'s on a map twice
		 * the size.
		 */
		if (!bf16)
			return vnpu_eng_wino2_pays(attr, &tx, &ty) ? VNPU_LAYER_F_WINO2 : 0;
		if (y->rank != 4)
			return 0;
		ty.dims[2] *= 2;
		ty.dims[3] *= 2;
		return vnpu_eng_wino_pays(attr, &tx, &ty) ? VNPU_LAYER_F_WINO2 : 0;
	}
	if (bf16 && y->rank == 4 && y->dims[2] >= WINO42_MIN_ROWS &&
	    y->dims[2] * y->dims[3] >= WINO42_MIN_OUTPUTS)
		return VNPU_LAYER_F_WINO42;
	return bf16 ? VNPU_LAYER_F_WINO2 : VNPU_LAYER_F_WINO;
}

/*
 * The f32 weights @wi (in @group groups) of a CONV's f32 layout (@f32:
 * Winograd F(4x4, 3x3), the lanes): rounded to bf16 where the layer takes
 * the bf16 hint (conv_hinted(); it has an f32 layout where hint_widens()),
 * else as they are; *@copy is to be freed.
 */
static const float *conv_src(const struct cstate *s, const struct vnpu_tinfo *wi, int64_t group,
			     bool f32, float **copy)
{
	if (!f32 || s->opt.inference_precision != VNPU_TYPE_BF16 || !conv_hinted(s, wi, group))
		return const_f32(wi, copy);
	*copy = const_rounded(wi, s->opt.inference_precision);
	return *copy;
}

/*
 * Constant @w's weights transformed for Winograd by the engine's own code
 * as a constant in *@out: for %VNPU_LAYER_F_WINO2 and %VNPU_LAYER_F_WINO42
 * (@flag) U in f32 (VNPU_PACK_WINO2_W, VNPU_PACK_WINO42_W), under the bf16
 * hint's bf16 kinds (wino_bf16()) rounded once to bf16 pairs as the
 * hint's other weights; for %VNPU_LAYER_F_WINO in f32 (VNPU_PACK_WINO_W).
 */
static vnpu_status conv_wino_weights(struct cstate *s, const struct vnpu_tinfo *wi, int64_t group,
				     uint32_t flag, int32_t *out)
{
	bool bf16 = flag == VNPU_LAYER_F_WINO42 ||
		    (flag == VNPU_LAYER_F_WINO2 && wino_bf16(s, wi, group));
	uint32_t layout = flag == VNPU_LAYER_F_WINO42 ? VNPU_PACK_WINO42_W :
			  flag == VNPU_LAYER_F_WINO2 ? VNPU_PACK_WINO2_W : VNPU_PACK_WINO_W;
	uint64_t rows = (uint64_t)(wi->dims[0] / group);
	uint64_t cols = (uint64_t)(vnpu_tinfo_elems(wi) / wi->dims[0]);
	uint64_t size = vnpu_eng_packed_size(layout, (uint64_t)group, rows, cols);
	float *buf = size ? cs_weights_alloc(s, size * sizeof(float)) : NULL, *wide;
	const float *src = conv_src(s, wi, group, !bf16, &wide);
	int rc;

	if (!buf || !src) {
		cs_weights_free(s, buf);
		free(wide);
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory transforming weights");
	}
	if (flag == VNPU_LAYER_F_WINO42)
		rc = vnpu_eng_wino42_pack(src, (uint64_t)group, rows, cols, buf);
	else if (flag == VNPU_LAYER_F_WINO2)
		rc = vnpu_eng_wino2_pack(src, (uint64_t)group, rows, cols, buf);
	else
		rc = vnpu_eng_wino_pack(src, (uint64_t)group, rows, cols, buf);
	free(wide);
	if (rc) {
		cs_weights_free(s, buf);
		return VNPU_UNSUPPORTED;
	}
	return add_packed(s, buf, size, layout, (uint64_t)group, rows, cols, bf16, out);
}

/*
 * Whether CONV @attr of @x into @y packs its weights in f32 with the
 * output channels on the lanes (%VNPU_LAYER_F_LANES), where the engine
 * runs it faster so (vnpu_eng_lanes_pays()): f32 X, no bf16 hint that
 * the AVX512-BF16 kernels take (hint_widens(): the rounded weights; under
 * f16 such a layer keeps its f32 weights).
 */
static bool conv_lanes(const struct cstate *s, const struct vnpu_layer_conv *attr,
		       const struct ctensor *x, const struct ctensor *y)
{
	struct vnpu_cmd_tensor tx = { .dtype = VNPU_DTYPE_F32, .rank = x->rank };
	struct vnpu_cmd_tensor ty = { .dtype = VNPU_DTYPE_F32, .rank = y->rank };

	if (x->type != VNPU_TYPE_F32 ||
	    (s->opt.inference_precision == VNPU_TYPE_BF16 && !hint_widens(s)) ||
	    x->rank != 4 || y->rank != 4)
		return false;
	for (uint32_t d = 0; d < x->rank; d++)
		tx.dims[d] = (uint64_t)x->dims[d];
	for (uint32_t d = 0; d < y->rank; d++)
		ty.dims[d] = (uint64_t)y->dims[d];
	return vnpu_eng_lanes_pays(attr, &tx, &ty);
}

/*
 * Whether the f32 weights @wi of a depthwise CONV (one input and one output
 * channel per group) stay as they are: the engine's depthwise kernels read
 * a channel's taps from a dense row, where a packed panel would hold them
 * ENG_MR floats apart, the other rows zeros (six times the bytes to read
 * each inference). The f16 and bf16 hints keep the f32 taps
 * (conv_hinted()).
 */
static bool conv_dw_dense(const struct vnpu_tinfo *wi, int64_t group)
{
	return wi->type == VNPU_TYPE_F32 && wi->rank == 4 && wi->dims[1] == 1 &&
	       wi->dims[0] == group;
}

/*
 * A CONV of X by W (@w: constant weights are packed, or transformed for
 * Winograd where it pays), with @bias and @residual values when not -1,
 * into @y.
 */
static vnpu_status conv_layer(struct cstate *s, struct vnpu_layer_conv *attr, struct ctensor x,
			      int32_t w, int32_t bias, int32_t residual, struct ctensor y)
{
	const struct vnpu_tinfo winfo = *INFO(s, w), *wi = &winfo;
	int64_t group = attr->group;
	int32_t packed = -1;
	uint32_t wino;
	struct ctensor t[5];
	uint32_t n = 0;
	vnpu_status st;

	t[n++] = x;
	/* The lanes layout, where it pays, before Winograd. */
	wino = cs_is_const(s, w) && packable(wi) && !s->opt.no_packing &&
	       !conv_lanes(s, attr, &x, &y) ?
	       conv_wino(s, attr, wi, &x, &y) : 0;
	if (wino) {
		st = conv_wino_weights(s, wi, group, wino, &packed);
		if (st && st != VNPU_UNSUPPORTED)
			return st;
		if (!st)
			attr->flags |= wino;
	}
	if (packed < 0 && cs_is_const(s, w) && packable(wi) && !s->opt.no_packing &&
	    !conv_dw_dense(wi, group)) {
		uint64_t rows = (uint64_t)(wi->dims[0] / group);
		uint64_t cols = (uint64_t)(vnpu_tinfo_elems(wi) / wi->dims[0]);
		bool lanes = conv_lanes(s, attr, &x, &y);
		uint32_t layout = lanes ? VNPU_PACK_CONV_LANES : VNPU_PACK_CONV_W;
		uint64_t size = vnpu_eng_packed_size(layout, (uint64_t)group, rows, cols);
		float *buf = size ? cs_weights_alloc(s, size * sizeof(float)) : NULL, *wide;
		const float *src = conv_src(s, wi, group, lanes, &wide);
		bool ok;

		if ((size && !buf) || !src) {
			cs_weights_free(s, buf);
			free(wide);
			return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory packing weights");
		}
		ok = buf && !vnpu_eng_pack(layout, src, (uint64_t)group, rows, cols, buf);
		free(wide);
		if (ok) {
			st = add_packed(s, buf, size, layout, (uint64_t)group, rows, cols,
					!lanes && conv_hinted(s, wi, group), &packed);
			if (st)
				return st;
			if (lanes)
				attr->flags |= VNPU_LAYER_F_LANES;
		} else {
			cs_weights_free(s, buf);
		}
	}
	if (packed >= 0) {
		t[n++] = ct_dense(s, packed);
		if (!(attr->flags & (VNPU_LAYER_F_WINO | VNPU_LAYER_F_WINO2 |
				     VNPU_LAYER_F_WINO42)))
			attr->flags |= VNPU_LAYER_F_PACKED;
	} else {
		t[n++] = ct_dense(s, w);
	}
	if (bias >= 0) {
		int64_t m = wi->dims[0];

		t[n++] = ct_shaped(s, bias, 1, &m);
		attr->flags |= VNPU_LAYER_F_BIAS;
	}
	if (residual >= 0) {
		t[n++] = ct_dense(s, residual);
		attr->flags |= VNPU_LAYER_F_RESIDUAL;
	}
	t[n++] = y;
	return cl_layer(s, VNPU_LAYER_CONV, t, n, attr, sizeof(*attr));
}

/*
 * Whether @op is a 1-D convolution of one image of one channel by a long
 * constant kernel, strided: an STFT's frames by its basis, as openWakeWord's
 * melspectrogram has (kernel 512, stride 160).
 */
static bool conv_frames(struct cstate *s, const struct cop *op, const struct vnpu_layer_conv *attr)
{
	const struct vnpu_tinfo *xi = INFO(s, IN(op, 0)), *wi = INFO(s, IN(op, 1));

	return xi->rank == 3 && xi->dims[0] == 1 && xi->dims[1] == 1 && xi->type == VNPU_TYPE_F32 &&
	       wi->dims[1] == 1 && attr->group == 1 && attr->dilation[1] == 1 &&
	       !attr->pad_begin[1] && !attr->pad_end[1] && attr->stride[1] > 1 &&
	       attr->kernel[1] >= 64 && op->residual < 0 && cs_is_const(s, IN(op, 1)) &&
	       packable(wi) && !s->opt.no_packing;
}

/*
 * That convolution as a GEMM: the frames are rows of X read in place (a
 * stride apart, overlapping) by W^T packed, into [F, M], then Y [1, M, F]
 * by one transposing copy. As a CONV layer the frames' im2col panels were
 * gathered again for every block of output channels.
 */
static vnpu_status lower_conv_frames(struct cstate *s, struct cop *op,
				     const struct vnpu_layer_conv *attr, int32_t bias)
{
	const struct vnpu_tinfo *yi = INFO(s, op->out[0]);
	int64_t m = yi->dims[1], f = yi->dims[2], dims[2] = { f, m };
	struct vnpu_layer_gemm ga = { .alpha = f32_bits(1.0f), .beta = f32_bits(1.0f),
				      .act = attr->act };
	vnpu_element_type type = yi->type;
	struct ctensor t[4], a, y;
	int32_t packed, tv;
	uint32_t n = 0;
	vnpu_status st = cl_pack_gemm_b(s, IN(op, 1), true, true, &packed);

	if (!st)
		st = cs_add_temp(s, type, 2, dims, &tv);
	if (st)
		return st;
	a = ct_dense(s, IN(op, 0));
	memset(a.dims, 0, sizeof(a.dims));
	memset(a.strides, 0, sizeof(a.strides));
	a.rank = 2;
	a.dims[0] = f;
	a.dims[1] = attr->kernel[1];
	a.strides[0] = attr->stride[1];
	a.strides[1] = 1;
	t[n++] = a;
	t[n++] = ct_dense(s, packed);
	ga.flags = VNPU_LAYER_F_PACKED;
	if (bias >= 0) {
		t[n++] = ct_shaped(s, bias, 1, &m);
		ga.flags |= VNPU_LAYER_F_BIAS;
	}
	t[n++] = ct_dense(s, tv);
	st = cl_layer(s, VNPU_LAYER_GEMM, t, n, &ga, sizeof(ga));
	if (st)
		return st;
	y = ct_shaped(s, op->out[0], 2, dims);
	y.strides[0] = 1;
	y.strides[1] = f;
	return cl_copy(s, y, ct_dense(s, tv));
}

/*
 * Whether @op is a convolution of one output position whose kernel covers
 * its whole unpadded input: the 1x1 convolutions of a squeeze-excite block
 * after its GlobalAveragePool, or openWakeWord embedding's last 3x1 over a
 * 3x1 map. X [N, C, H, W] is then X [N, C * H * W] in W [M, C, H, W]'s
 * order. As a CONV layer such a product is one column wide, and the
 * micro-kernel's tile computes sixteen (under bf16 after rounding the
 * window into a panel of pairs: the 3x1 took 8 us against f32's 5.6).
 */
static bool conv_vec(struct cstate *s, const struct cop *op, const struct vnpu_layer_conv *attr)
{
	const struct vnpu_tinfo *xi = INFO(s, IN(op, 0)), *wi = INFO(s, IN(op, 1));
	const struct vnpu_tinfo *yi = INFO(s, op->out[0]);

	if (xi->rank != 4 || wi->rank != 4 || yi->rank != 4 || attr->group != 1 ||
	    xi->type != VNPU_TYPE_F32 || yi->type != VNPU_TYPE_F32 ||
	    !cs_is_const(s, IN(op, 1)) || !packable(wi) || s->opt.no_packing)
		return false;
	return xi->dims[2] == wi->dims[2] && xi->dims[3] == wi->dims[3] && yi->dims[2] == 1 &&
	       yi->dims[3] == 1 && !attr->pad_begin[0] && !attr->pad_begin[1] &&
	       !attr->pad_end[0] && !attr->pad_end[1];
}

/*
 * That convolution as a GEMM: X [N, C * H * W] by W^T packed into
 * Y [N, M], the bias, residual and activation in its epilogue. Each output
 * is the same chain of FMAs (or bf16 pair products) over the window in
 * W's order from zero and the same epilogue as the CONV layer's, so the
 * same bits; one row runs as a mat-vec.
 */
static vnpu_status lower_conv_vec(struct cstate *s, struct cop *op, int32_t bias)
{
	const struct vnpu_tinfo *xi = INFO(s, IN(op, 0)), *yi = INFO(s, op->out[0]);
	int64_t xd[2] = { xi->dims[0], xi->dims[1] * xi->dims[2] * xi->dims[3] };
	int64_t yd[2] = { yi->dims[0], yi->dims[1] };
	struct ctensor a = ct_shaped(s, IN(op, 0), 2, xd);
	struct ctensor y = ct_shaped(s, op->out[0], 2, yd);
	int32_t packed;
	vnpu_status st = cl_pack_gemm_b(s, IN(op, 1), true, true, &packed);

	if (st)
		return st;
	return gemm_layer(s, op, a, ct_dense(s, packed), packed, bias, 1.0f, 1.0f, y);
}

/*
 * Whether @op is a 1x1 convolution of f32 X with strides above 1 and no
 * padding that, as one of stride 1 over the input it reads, takes the
 * lanes layout (conv_lanes(): output maps of at most 49 positions on
 * AVX-512 hosts): ResNet-50's layer4.0 downsampling onto 7x7, which as a
 * GEMM ran its 49 columns in panels of 32 + 16 + 1, at about 71% of the
 * FMA peak. (Onto 14x14, where the GEMM's one block of 196 columns had
 * each tile copy the whole subsampled input into its window, the COPY
 * first measured from 25 us faster to 49 us slower on two CPUs.)
 */
static bool conv_sub(struct cstate *s, const struct cop *op, const struct vnpu_layer_conv *attr)
{
	const struct vnpu_tinfo *xi = INFO(s, IN(op, 0)), *yi = INFO(s, op->out[0]);
	struct vnpu_layer_conv one = *attr;
	struct ctensor x, y;

	if (xi->rank != 4 || yi->rank != 4 || xi->type != VNPU_TYPE_F32 ||
	    attr->kernel[0] != 1 || attr->kernel[1] != 1 ||
	    (attr->stride[0] == 1 && attr->stride[1] == 1) || attr->pad_begin[0] ||
	    attr->pad_begin[1] || attr->pad_end[0] || attr->pad_end[1])
		return false;
	x = ct_dense(s, IN(op, 0));
	y = ct_dense(s, op->out[0]);
	x.dims[2] = y.dims[2];
	x.dims[3] = y.dims[3];
	one.stride[0] = 1;
	one.stride[1] = 1;
	return conv_lanes(s, &one, &x, &y);
}

/*
 * That convolution as a strided COPY of the input elements it reads into
 * a dense temporary, which splits over the tiles as any copy, then the
 * convolution of stride 1 over it on the lanes. The same sums in the
 * same order: the same bits.
 */
static vnpu_status lower_conv_sub(struct cstate *s, struct cop *op, struct vnpu_layer_conv *attr,
				  int32_t bias)
{
	const struct vnpu_tinfo *xi = INFO(s, IN(op, 0)), *yi = INFO(s, op->out[0]);
	int64_t dims[4] = { xi->dims[0], xi->dims[1], yi->dims[2], yi->dims[3] };
	struct ctensor src = ct_dense(s, IN(op, 0));
	int32_t tv;
	vnpu_status st = cs_add_temp(s, xi->type, 4, dims, &tv);

	if (st)
		return st;
	src.dims[2] = dims[2];
	src.dims[3] = dims[3];
	src.strides[2] *= attr->stride[0];
	src.strides[3] *= attr->stride[1];
	st = cl_copy(s, ct_dense(s, tv), src);
	if (st)
		return st;
	attr->stride[0] = 1;
	attr->stride[1] = 1;
	return conv_layer(s, attr, ct_dense(s, tv), IN(op, 1), bias, op->residual,
			  ct_dense(s, op->out[0]));
}

static vnpu_status lower_conv(struct cstate *s, struct cop *op)
{
	struct vnpu_layer_conv attr;
	int32_t bias = IN(op, 2) >= 0 ? IN(op, 2) : op->bias;
	vnpu_status st = cl_conv_attrs(s, op, IN(op, 0), IN(op, 1), op->out[0], &attr);

	if (st)
		return st;
	if (conv_frames(s, op, &attr))
		return lower_conv_frames(s, op, &attr, bias);
	if (conv_vec(s, op, &attr)) {
		st = lower_conv_vec(s, op, bias);
		if (st != VNPU_UNSUPPORTED)
			return st;
	}
	if (conv_sub(s, op, &attr))
		return lower_conv_sub(s, op, &attr, bias);
	return conv_layer(s, &attr, ct_dense(s, IN(op, 0)), IN(op, 1), bias, op->residual,
			  ct_dense(s, op->out[0]));
}

/* ConvTranspose's weights W [C, M/g, K...] as a convolution's: per group
 * the channel dims swapped and the kernel flipped, W' [M, C/g, K...]. A
 * constant is transformed here; otherwise a copy and reversing gathers. */
static vnpu_status deconv_weights(struct cstate *s, int32_t w, int64_t group, int32_t *out)
{
	const struct vnpu_tinfo winfo = *INFO(s, w), *wi = &winfo;
	int32_t r = wi->rank, nsp = r - 2;
	int64_t cg = wi->dims[0] / group, mg = wi->dims[1], kk = 1, dims[VNPU_MAX_RANK];
	struct ctensor src, dst;
	vnpu_status st;

	for (int32_t d = 0; d < nsp; d++)
		kk *= wi->dims[2 + d];
	memcpy(dims, wi->dims, sizeof(dims));
	dims[0] = mg * group;
	dims[1] = cg;
	if (cs_is_const(s, w) && wi->type == VNPU_TYPE_F32) {
		const float *src_w = wi->data;
		float *nw = malloc((size_t)(dims[0] * cg * kk + 1) * sizeof(float));

		if (!nw)
			return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
		for (int64_t g = 0; g < group; g++)
			for (int64_t m = 0; m < mg; m++)
				for (int64_t c = 0; c < cg; c++)
					for (int64_t k = 0; k < kk; k++)
						nw[((g * mg + m) * cg + c) * kk + k] =
							src_w[((g * cg + c) * mg + m) * kk + kk - 1 - k];
		return cs_add_const(s, VNPU_TYPE_F32, r, dims, nw, out);
	}
	/* dst [g, Mg, Cg, K] from src W [g, Cg, Mg, K] with the middle swapped. */
	st = cs_add_temp(s, wi->type, r, dims, out);
	if (st)
		return st;
	dst = ct_dense(s, *out);
	src = ct_dense(s, w);
	{
		struct ctensor d5 = dst, s5 = src;

		d5.rank = s5.rank = 3 + 1;
		d5.dims[0] = s5.dims[0] = group;
		d5.dims[1] = s5.dims[1] = mg;
		d5.dims[2] = s5.dims[2] = cg;
		d5.dims[3] = s5.dims[3] = kk;
		d5.strides[3] = 1;
		d5.strides[2] = kk;
		d5.strides[1] = cg * kk;
		d5.strides[0] = mg * cg * kk;
		s5.strides[3] = 1;
		s5.strides[2] = mg * kk;
		s5.strides[1] = kk;
		s5.strides[0] = cg * mg * kk;
		for (int32_t d = 4; d < VNPU_MAX_DIMS; d++)
			d5.dims[d] = s5.dims[d] = d5.strides[d] = s5.strides[d] = 0;
		st = cl_copy(s, d5, s5);
		if (st)
			return st;
	}
	for (int32_t d = 0; d < nsp; d++) {
		int64_t len = wi->dims[2 + d];

		if (len > 1) {
			st = cl_gather_steps(s, *out, 2 + d, len - 1, -1, len, out);
			if (st)
				return st;
		}
	}
	return VNPU_OK;
}

/* One spatial axis of a transposed convolution done as a convolution:
 * the input zero-inserted (stride) and padded by pb / pe, stride 1. */
struct deconv_axis {
	int64_t k, dl, st, pb, pe, zeroed;	/* zeroed: (in - 1) * st + 1 */
};

static vnpu_status deconv_axes(struct cstate *s, const struct cop *op, struct deconv_axis *ax,
			       int32_t nsp)
{
	const struct vnpu_tinfo *xi = INFO(s, IN(op, 0)), *wi = INFO(s, IN(op, 1));
	const struct vnpu_tinfo *yi = INFO(s, op->out[0]);
	const struct vnpu_node *n = N(op);
	const struct vnpu_attr *sa = vnpu_node_attr(n, "strides"), *da = vnpu_node_attr(n, "dilations");
	const struct vnpu_attr *pa = vnpu_node_attr(n, "pads"), *opa = vnpu_node_attr(n, "output_padding");
	const char *autopad = vnpu_attr_str(n, "auto_pad", "NOTSET");

	for (int32_t d = 0; d < nsp; d++) {
		struct deconv_axis *a = &ax[d];
		int64_t in = xi->dims[2 + d], out = yi->dims[2 + d];
		int64_t opad = opa && opa->n == (size_t)nsp ? opa->ints[d] : 0, total, pb;

		a->st = sa && sa->n == (size_t)nsp ? sa->ints[d] : 1;
		a->dl = da && da->n == (size_t)nsp ? da->ints[d] : 1;
		a->k = wi->dims[2 + d];
		total = a->st * (in - 1) + opad + (a->k - 1) * a->dl + 1 - out;
		if (pa && pa->n == (size_t)nsp * 2 && !strcmp(autopad, "NOTSET")) {
			pb = pa->ints[d];
		} else {
			/* Floor halves: a negative total (output_shape larger
			 * than the natural size) pads at the end. */
			int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);

			pb = !strcmp(autopad, "SAME_UPPER") ? half : total - half;
		}
		/* The zero-inserted input, padded by dl * (k - 1) minus the
		 * pads; the end pad is what the output extent leaves. */
		a->zeroed = in ? (in - 1) * a->st + 1 : 0;
		a->pb = a->dl * (a->k - 1) - pb;
		a->pe = out + a->dl * (a->k - 1) - a->zeroed - a->pb;
		if (a->pb < 0 || a->pe < 0)
			return UNSUP(s, "pads larger than the kernel");
	}
	return VNPU_OK;
}

/*
 * 3-D: the zero-inserted input Z is laid out [D, N, C, H, W] with D padded
 * explicitly, so the depth window of output plane od starting at kd is the
 * dense batch [OD * N, C, H, W] at Z[kd * dl]. Each kd is one 2-D
 * convolution with the weights' plane kd, summed through the next one's
 * residual; the last result, [OD, N, M, OH, OW], is copied into Y.
 */
static vnpu_status deconv_3d_input(struct cstate *s, int32_t x, const struct deconv_axis *ax,
				   int32_t *z)
{
	const struct vnpu_tinfo xi = *INFO(s, x);
	int64_t n = xi.dims[0], c = xi.dims[1], zh = ax[1].zeroed, zw = ax[2].zeroed;
	int64_t zdims[5] = { ax[0].pb + ax[0].zeroed + ax[0].pe, n, c, zh, zw };
	struct ctensor dst;
	vnpu_status st = cs_add_temp(s, xi.type, 5, zdims, z);

	if (!st)
		st = cl_fill(s, ct_dense(s, *z), 0);
	if (st)
		return st;
	/* X [N, C, D, H, W] into Z's planes pb, pb + st, ... */
	dst = ct_dense(s, *z);
	dst.off += ax[0].pb * n * c * zh * zw;
	for (int32_t d = 0; d < 5; d++)
		dst.dims[d] = xi.dims[d];
	dst.strides[0] = c * zh * zw;
	dst.strides[1] = zh * zw;
	dst.strides[2] = ax[0].st * n * c * zh * zw;
	dst.strides[3] = ax[1].st * zw;
	dst.strides[4] = ax[2].st;
	return cl_copy(s, dst, ct_dense(s, x));
}

/* *@out = plane @kd of the weights W' [M, C/g, KD, KH, KW], dense. */
static vnpu_status weights_plane(struct cstate *s, int32_t w, int64_t kd, int32_t *out)
{
	const struct vnpu_tinfo wi = *INFO(s, w);
	int64_t kh = wi.dims[3], kw = wi.dims[4], dims[4] = { wi.dims[0], wi.dims[1], kh, kw };
	struct ctensor src;
	vnpu_status st = cs_add_temp(s, wi.type, 4, dims, out);

	if (st)
		return st;
	src = ct_dense(s, w);
	src.off += kd * kh * kw;
	src.rank = 4;
	src.dims[2] = kh;
	src.dims[3] = kw;
	src.strides[2] = kw;
	src.strides[3] = 1;
	src.dims[4] = src.strides[4] = 0;
	return cl_copy(s, ct_dense(s, *out), src);
}

static vnpu_status deconv_3d(struct cstate *s, struct cop *op, const struct deconv_axis *ax,
			     int32_t w, const struct vnpu_layer_conv *base)
{
	const struct vnpu_tinfo xi = *INFO(s, IN(op, 0)), yi = *INFO(s, op->out[0]);
	int64_t n = xi.dims[0], c = xi.dims[1], m = yi.dims[1];
	int64_t od = yi.dims[2], oh = yi.dims[3], ow = yi.dims[4];
	int64_t zh = ax[1].zeroed, zw = ax[2].zeroed, pdims[4] = { od * n, m, oh, ow };
	int32_t z, acc = -1, bias = IN(op, 2);
	struct ctensor src;
	vnpu_status st = deconv_3d_input(s, IN(op, 0), ax, &z);

	for (int64_t kd = 0; kd < ax[0].k && !st; kd++) {
		struct vnpu_layer_conv attr = *base;
		struct ctensor t[5];
		int32_t wk, out;
		uint32_t nt = 0;

		st = weights_plane(s, w, kd, &wk);
		if (!st)
			st = cs_add_temp(s, yi.type, 4, pdims, &out);
		if (st)
			break;
		/* Z's planes kd * dl ... as the batch [OD * N, C, H, W]. */
		t[nt] = ct_dense(s, z);
		t[nt].off += kd * ax[0].dl * n * c * zh * zw;
		t[nt].rank = 4;
		t[nt].dims[0] = od * n;
		for (int32_t d = 1; d < 4; d++) {
			t[nt].dims[d] = t[nt].dims[d + 1];
			t[nt].strides[d] = t[nt].strides[d + 1];
		}
		t[nt].strides[0] = c * zh * zw;
		t[nt].dims[4] = t[nt].strides[4] = 0;
		nt++;
		t[nt++] = ct_dense(s, wk);
		if (!kd && bias >= 0) {
			t[nt++] = ct_dense(s, bias);
			attr.flags |= VNPU_LAYER_F_BIAS;
		}
		if (acc >= 0) {
			t[nt++] = ct_dense(s, acc);
			attr.flags |= VNPU_LAYER_F_RESIDUAL;
		}
		if (kd != ax[0].k - 1)
			attr.act = (struct vnpu_layer_act){ .func = VNPU_ACT_IDENTITY };
		t[nt++] = ct_dense(s, out);
		st = cl_layer(s, VNPU_LAYER_CONV, t, nt, &attr, sizeof(attr));
		acc = out;
	}
	if (st)
		return st;
	/* [OD, N, M, OH, OW] into Y [N, M, OD, OH, OW]. */
	src = ct_dense(s, acc);
	src.rank = 5;
	src.dims[0] = n;
	src.dims[1] = m;
	src.dims[2] = od;
	src.dims[3] = oh;
	src.dims[4] = ow;
	src.strides[0] = m * oh * ow;
	src.strides[1] = oh * ow;
	src.strides[2] = n * m * oh * ow;
	src.strides[3] = ow;
	src.strides[4] = 1;
	return cl_copy(s, ct_dense(s, op->out[0]), src);
}

/*
 * ConvTranspose of an input with no elements to an output with some (its
 * size given by output_shape or pads): no product reaches it, Y is B
 * along the channels, or zeros. ConvTranspose fuses no activation.
 */
static vnpu_status deconv_no_input(struct cstate *s, struct cop *op)
{
	const struct vnpu_tinfo *yi = INFO(s, op->out[0]);
	struct ctensor b;

	if (IN(op, 2) < 0)
		return cl_fill(s, ct_dense(s, op->out[0]), 0);
	b = ct_dense(s, IN(op, 2));
	b.rank = (uint32_t)yi->rank - 1;
	for (int32_t d = 1; d < yi->rank - 1; d++)
		b.dims[d] = 1, b.strides[d] = 0;
	return cl_copy(s, ct_dense(s, op->out[0]), ct_broadcast(b, yi->rank, yi->dims));
}

/*
 * The output phases of a strided ConvTranspose without dilation (the
 * sub-pixel decomposition). Along an axis of stride s, kernel K and
 * leading pad p, output o = s * q + r takes the taps k = k0 + s * u, with
 * k0 = (r + p) mod s, from input q + d - u, with d = (r + p - k0) / s:
 * phase r is a stride-1 convolution of X with the T = ceil((K - k0) / s)
 * taps w[k0 + s * (T - 1 - v)], padded by T - 1 - d in front, computing
 * the Q = ceil((OUT - r) / s) outputs of the phase. Zero-inserting X
 * instead multiplies s_h * s_w times as many zeros as values (DBNet's
 * 2x2 stride 2 heads did 4 times the work).
 */
struct deconv_phase {
	int64_t k0, taps, pb, pe, q;
};

/* Strides of the axes ConvTranspose takes by phases, at most. */
#define DECONV_MAX_PHASES 8

/* Phase @r of axis @a (input extent @in, output @out); false when it has
 * no taps, no outputs or would need negative pads. */
static bool deconv_phase_of(const struct deconv_axis *a, int64_t in, int64_t out, int64_t r,
			    struct deconv_phase *ph)
{
	int64_t p = a->k - 1 - a->pb, d;

	ph->k0 = ((r + p) % a->st + a->st) % a->st;
	ph->taps = ph->k0 < a->k ? (a->k - ph->k0 + a->st - 1) / a->st : 0;
	d = (r + p - ph->k0) / a->st;
	ph->q = out > r ? (out - r + a->st - 1) / a->st : 0;
	ph->pb = ph->taps - 1 - d;
	ph->pe = ph->q - 1 + ph->taps - in - ph->pb;
	return ph->taps > 0 && ph->q > 0 && ph->pb >= 0 && ph->pe >= 0 &&
	       ph->pb <= INT32_MAX && ph->pe <= INT32_MAX;
}

static bool same_phase(const struct deconv_phase *a, const struct deconv_phase *b)
{
	return a->taps == b->taps && a->pb == b->pb && a->pe == b->pe && a->q == b->q;
}

/* The phases [r0, r1) x [c0, c1) of both axes of a ConvTranspose. */
struct phase_set {
	const struct deconv_phase *h, *w;	/* indexed by phase */
	int64_t sh, sw, r0, r1, c0, c1;
};

/* Phases in @ps: the channels of each output channel of their convolution. */
static int64_t phase_count(const struct phase_set *ps)
{
	return (ps->r1 - ps->r0) * (ps->c1 - ps->c0);
}

/*
 * The weights of the phases of @ps as one convolution's W'
 * [M * phases, C/g, T_h, T_w], channels in (m, rh, rw) order, from
 * ConvTranspose's constant W [C, M/g, K_h, K_w].
 */
static vnpu_status phase_weights(struct cstate *s, int32_t wv, int64_t group,
				 const struct phase_set *ps, int32_t *out)
{
	const struct vnpu_tinfo winfo = *INFO(s, wv), *wi = &winfo;
	int64_t cg = wi->dims[0] / group, mg = wi->dims[1], kh = wi->dims[2], kw = wi->dims[3];
	int64_t th = ps->h[ps->r0].taps, tw = ps->w[ps->c0].taps, m = mg * group, i = 0;
	int64_t dims[4] = { m * phase_count(ps), cg, th, tw };
	float *wide, *nw = malloc((size_t)(dims[0] * cg * th * tw) * sizeof(float));
	const float *w = const_f32(wi, &wide);

	if (!nw || !w) {
		free(nw);
		free(wide);
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	}
	for (int64_t mm = 0; mm < m; mm++)
		for (int64_t rh = ps->r0; rh < ps->r1; rh++)
			for (int64_t rw = ps->c0; rw < ps->c1; rw++)
				for (int64_t c = 0; c < cg; c++)
					for (int64_t vh = 0; vh < th; vh++)
						for (int64_t vw = 0; vw < tw; vw++) {
							int64_t a = ps->h[rh].k0 + (th - 1 - vh) * ps->sh;
							int64_t b = ps->w[rw].k0 + (tw - 1 - vw) * ps->sw;

							nw[i++] = w[(((mm / mg * cg + c) * mg + mm % mg) *
								     kh + a) * kw + b];
						}
	free(wide);
	return cs_add_const(s, VNPU_TYPE_F32, 4, dims, nw, out);
}

/* Constant bias @bv [M] repeated for each of @np phases: [M * np]. */
static vnpu_status phase_bias(struct cstate *s, int32_t bv, int64_t np, int32_t *out)
{
	const struct vnpu_tinfo binfo = *INFO(s, bv), *bi = &binfo;
	int64_t m = vnpu_tinfo_elems(bi), n = m * np;
	float *wide, *nb = malloc((size_t)(n + 1) * sizeof(float));
	const float *b = const_f32(bi, &wide);

	if (!nb || !b) {
		free(nb);
		free(wide);
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	}
	for (int64_t i = 0; i < n; i++)
		nb[i] = b[i / np];
	free(wide);
	return cs_add_const(s, VNPU_TYPE_F32, 1, &n, nb, out);
}

/*
 * The phases of @ps (one geometry) as one convolution of X into a
 * temporary [N, M * phases, Q_h, Q_w], copied into their places in Y.
 */
static vnpu_status deconv_phase_set(struct cstate *s, struct cop *op, const struct phase_set *ps)
{
	const struct vnpu_tinfo xi = *INFO(s, IN(op, 0)), yi = *INFO(s, op->out[0]);
	const struct deconv_phase *h = &ps->h[ps->r0], *w = &ps->w[ps->c0];
	int64_t np = phase_count(ps), n = xi.dims[0], m = yi.dims[1], oh = yi.dims[2], ow = yi.dims[3];
	int64_t tdims[4] = { n, m * np, h->q, w->q };
	struct vnpu_layer_conv attr = {
		.group = (uint32_t)vnpu_attr_int(N(op), "group", 1), .act = op->act,
		.kernel = { (uint32_t)h->taps, (uint32_t)w->taps }, .stride = { 1, 1 },
		.dilation = { 1, 1 }, .pad_begin = { (uint32_t)h->pb, (uint32_t)w->pb },
		.pad_end = { (uint32_t)h->pe, (uint32_t)w->pe },
	};
	int32_t wv, bv = -1, tv;
	struct ctensor dst, src;
	vnpu_status st = phase_weights(s, IN(op, 1), attr.group, ps, &wv);

	if (!st && IN(op, 2) >= 0)
		st = np > 1 ? phase_bias(s, IN(op, 2), np, &bv) : (bv = IN(op, 2), VNPU_OK);
	if (!st)
		st = cs_add_temp(s, yi.type, 4, tdims, &tv);
	if (!st)
		st = conv_layer(s, &attr, ct_dense(s, IN(op, 0)), wv, bv, -1, ct_dense(s, tv));
	if (st)
		return st;
	/*
	 * T [N, M, rh, rw, Q_h, Q_w] to Y [N, M, Q_h, rh, Q_w, rw], walked as
	 * [N, M, rh, Q_h, rw, Q_w]: with two column phases, each output row
	 * is the two rows of its rw interleaved, which the COPY moves as
	 * one dense row (vnpu_exec.c, pair_rows()), not as two of stride 2.
	 */
	src = ct_dense(s, tv);
	dst = ct_dense(s, op->out[0]);
	dst.off += ps->r0 * ow + ps->c0;
	src.rank = dst.rank = 6;
	src.dims[0] = dst.dims[0] = n;
	src.dims[1] = dst.dims[1] = m;
	src.dims[2] = dst.dims[2] = ps->r1 - ps->r0;
	src.dims[3] = dst.dims[3] = h->q;
	src.dims[4] = dst.dims[4] = ps->c1 - ps->c0;
	src.dims[5] = dst.dims[5] = w->q;
	src.strides[5] = 1;
	src.strides[3] = w->q;
	src.strides[4] = h->q * w->q;
	src.strides[2] = src.strides[4] * src.dims[4];
	src.strides[1] = src.strides[2] * src.dims[2];
	src.strides[0] = src.strides[1] * m;
	dst.strides[0] = m * oh * ow;
	dst.strides[1] = oh * ow;
	dst.strides[2] = ow;
	dst.strides[3] = ps->sh * ow;
	dst.strides[4] = 1;
	dst.strides[5] = ps->sw;
	return cl_copy(s, dst, src);
}

/*
 * A 2-D ConvTranspose with strides, no dilation and constant weights by
 * phases (struct deconv_phase): one convolution when all phases share a
 * geometry and B is constant or absent (K a multiple of the stride, e.g.
 * DBNet's 2x2 stride 2: then a 1x1 convolution of M * 4 channels), else
 * one per phase. *@done false: the layer takes the zero-inserting path.
 */
static vnpu_status deconv_by_phases(struct cstate *s, struct cop *op, const struct deconv_axis *ax,
				    bool *done)
{
	const struct vnpu_tinfo *xi = INFO(s, IN(op, 0)), *yi = INFO(s, op->out[0]);
	struct deconv_phase ph[2][DECONV_MAX_PHASES];
	struct phase_set ps = { ph[0], ph[1], ax[0].st, ax[1].st, 0, ax[0].st, 0, ax[1].st };
	bool uniform = IN(op, 2) < 0 || cs_is_const(s, IN(op, 2));
	vnpu_status st = VNPU_OK;

	*done = false;
	if (xi->rank != 4 || ax[0].dl != 1 || ax[1].dl != 1 || (ax[0].st == 1 && ax[1].st == 1) ||
	    ax[0].st > DECONV_MAX_PHASES || ax[1].st > DECONV_MAX_PHASES ||
	    !cs_is_const(s, IN(op, 1)) || !packable(INFO(s, IN(op, 1))))
		return VNPU_OK;
	for (int32_t d = 0; d < 2; d++)
		for (int64_t r = 0; r < ax[d].st; r++) {
			if (!deconv_phase_of(&ax[d], xi->dims[2 + d], yi->dims[2 + d], r, &ph[d][r]))
				return VNPU_OK;
			uniform &= same_phase(&ph[d][r], &ph[d][0]);
		}
	*done = true;
	if (uniform)
		return deconv_phase_set(s, op, &ps);
	for (ps.r0 = 0; ps.r0 < ax[0].st && !st; ps.r0++)
		for (ps.c0 = 0; ps.c0 < ax[1].st && !st; ps.c0++) {
			ps.r1 = ps.r0 + 1;
			ps.c1 = ps.c0 + 1;
			st = deconv_phase_set(s, op, &ps);
		}
	return st;
}

static vnpu_status lower_conv_transpose(struct cstate *s, struct cop *op)
{
	const struct vnpu_tinfo xinfo = *INFO(s, IN(op, 0)), *xi = &xinfo;
	const struct vnpu_attr *sa = vnpu_node_attr(N(op), "strides");
	int64_t group = vnpu_attr_int(N(op), "group", 1), zdims[VNPU_MAX_RANK];
	int32_t nsp = xi->rank - 2, x = IN(op, 0), w, bias = IN(op, 2);
	struct vnpu_layer_conv attr = { .group = (uint32_t)group, .act = op->act };
	struct deconv_axis ax[3];
	bool zeros = false, phased = false;
	struct ctensor t[4];
	uint32_t nt = 0;
	vnpu_status st;

	if (nsp < 1 || nsp > 3)
		return UNSUP(s, "%d-D transposed convolution (only 1-D to 3-D)", nsp);
	if (!vnpu_tinfo_elems(xi))
		return deconv_no_input(s, op);
	st = deconv_axes(s, op, ax, nsp);
	if (!st && nsp == 2)
		st = deconv_by_phases(s, op, ax, &phased);
	if (st || phased)
		return st;
	for (int32_t d = 0; d < 2; d++)
		attr.kernel[d] = attr.stride[d] = attr.dilation[d] = 1;
	/* The device's 2-D window takes the last two axes (1-D: [1]). */
	for (int32_t d = nsp > 2 ? 1 : 0; d < nsp; d++) {
		int32_t o = d + 2 - nsp;

		attr.kernel[o] = (uint32_t)ax[d].k;
		attr.dilation[o] = (uint32_t)ax[d].dl;
		attr.pad_begin[o] = (uint32_t)ax[d].pb;
		attr.pad_end[o] = (uint32_t)ax[d].pe;
	}
	st = deconv_weights(s, IN(op, 1), group, &w);
	if (st)
		return st;
	if (nsp == 3)
		return deconv_3d(s, op, ax, w, &attr);
	memcpy(zdims, xi->dims, sizeof(zdims));
	for (int32_t d = 0; d < nsp; d++) {
		zdims[2 + d] = ax[d].zeroed;
		zeros |= ax[d].st > 1;
	}
	if (zeros) {
		struct ctensor dst;
		int32_t z;

		st = cs_add_temp(s, xi->type, xi->rank, zdims, &z);
		if (!st)
			st = cl_fill(s, ct_dense(s, z), 0);
		if (st)
			return st;
		dst = ct_dense(s, z);
		for (int32_t d = 0; d < nsp; d++) {
			dst.dims[2 + d] = xi->dims[2 + d];
			dst.strides[2 + d] *= sa->ints[d];
		}
		st = cl_copy(s, dst, ct_dense(s, x));
		if (st)
			return st;
		x = z;
	}
	t[nt++] = ct_dense(s, x);
	t[nt++] = ct_dense(s, w);
	if (bias >= 0) {
		t[nt++] = ct_dense(s, bias);
		attr.flags |= VNPU_LAYER_F_BIAS;
	}
	t[nt++] = ct_dense(s, op->out[0]);
	return cl_layer(s, VNPU_LAYER_CONV, t, nt, &attr, sizeof(attr));
}

/*
 * 3-D MaxPool, AveragePool and LpPool as two 2-D pools: over (H, W) of
 * every depth slice, then over D. A 3-D window is the product of its
 * axes' intervals (padding too), so the max of maxes, count for count the
 * mean of means, and the p-norm of p-norms are the 3-D results.
 *
 * The first pool reads X [N, C, D, H, W] as [N, C * D, H, W] into Z
 * [N, C * D, OH, OW]; the second reads Z as [N * C, 1, D, OH * OW] and
 * pools along its H axis (D) into Y viewed as [N * C, 1, OD, OH * OW].
 */
struct pool3d_views {
	int64_t x[4], z[4], z2[4], y[4];
};

static void pool3d_views(const struct vnpu_tinfo *xi, const struct vnpu_tinfo *yi,
			 struct pool3d_views *v)
{
	const int64_t *xd = xi->dims, *yd = yi->dims;

	memcpy(v->x, (int64_t[4]){ xd[0], xd[1] * xd[2], xd[3], xd[4] }, sizeof(v->x));
	memcpy(v->z, (int64_t[4]){ xd[0], xd[1] * xd[2], yd[3], yd[4] }, sizeof(v->z));
	memcpy(v->z2, (int64_t[4]){ xd[0] * xd[1], 1, xd[2], yd[3] * yd[4] }, sizeof(v->z2));
	memcpy(v->y, (int64_t[4]){ xd[0] * xd[1], 1, yd[2], yd[3] * yd[4] }, sizeof(v->y));
}

/* The window axes (D, H, W) of 3-D pool @op; VNPU_PARSE_ERROR for bad attributes. */
static vnpu_status pool3d_axes(struct cstate *s, const struct cop *op, struct win_axis *ax)
{
	const struct vnpu_node *n = N(op);
	const struct vnpu_attr *ks = vnpu_node_attr(n, "kernel_shape");
	const struct vnpu_attr *sa = vnpu_node_attr(n, "strides");
	const struct vnpu_attr *da = vnpu_node_attr(n, "dilations");
	const struct vnpu_attr *pa = vnpu_node_attr(n, "pads");

	if (!ks || ks->n != 3 || (sa && sa->n != 3) || (da && da->n != 3) || (pa && pa->n != 6))
		return cs_fail(s, VNPU_PARSE_ERROR, "kernel_shape, strides, dilations or pads of the wrong length");
	window_axes(s, op, IN(op, 0), op->out[0], ks->ints, 3, ax);
	return VNPU_OK;
}

/* The (H, W) window attributes of a 2-D layer from axes @h and @w; @pe may be NULL. */
static void set_axes(uint32_t *k, uint32_t *stride, uint32_t *dil, uint32_t *pb, uint32_t *pe,
		     const struct win_axis *h, const struct win_axis *w)
{
	const struct win_axis *ax[2] = { h, w };

	for (int d = 0; d < 2; d++) {
		k[d] = ax[d]->k;
		stride[d] = ax[d]->stride;
		dil[d] = ax[d]->dil;
		pb[d] = ax[d]->pb;
		if (pe)
			pe[d] = ax[d]->pe;
	}
}

static void pool_axes(struct vnpu_layer_pool *a, const struct win_axis *h, const struct win_axis *w)
{
	set_axes(a->kernel, a->stride, a->dilation, a->pad_begin, a->pad_end, h, w);
}

static vnpu_status pool_3d(struct cstate *s, struct cop *op, const struct vnpu_layer_pool *base)
{
	/* Copies: adding a temporary moves the value table. */
	const struct vnpu_tinfo xinfo = *INFO(s, IN(op, 0)), yinfo = *INFO(s, op->out[0]);
	static const struct win_axis one = { 1, 1, 1, 0, 0 };
	struct vnpu_layer_pool hw = *base, dp = *base;
	struct pool3d_views v;
	struct win_axis ax[3];
	struct ctensor t[2];
	vnpu_status st;
	int32_t z;

	st = pool3d_axes(s, op, ax);
	if (st)
		return st;
	pool_axes(&hw, &ax[1], &ax[2]);
	pool_axes(&dp, &ax[0], &one);
	pool3d_views(&xinfo, &yinfo, &v);
	st = cs_add_temp(s, xinfo.type, 4, v.z, &z);
	if (st)
		return st;
	t[0] = ct_shaped(s, IN(op, 0), 4, v.x);
	t[1] = ct_dense(s, z);
	st = cl_layer(s, VNPU_LAYER_POOL, t, 2, &hw, sizeof(hw));
	if (st)
		return st;
	t[0] = ct_shaped(s, z, 4, v.z2);
	t[1] = ct_shaped(s, op->out[0], 4, v.y);
	return cl_layer(s, VNPU_LAYER_POOL, t, 2, &dp, sizeof(dp));
}

static void index_axes(struct vnpu_layer_pool_index *a, const struct win_axis *h,
		       const struct win_axis *w)
{
	set_axes(a->kernel, a->stride, a->dilation, a->pad_begin, NULL, h, w);
}

/*
 * 3-D MaxPool with Indices: the two pools of pool_3d(), each with its
 * indices. The first's I1 counts row-major over X's view, which is X's
 * own order; the second's I2 counts over Z's. The index of each output
 * is then I1[I2] (a GatherElements over the flat I1). The first of equal
 * maxima in (D, H, W) order wins, as in one 3-D window: the lowest depth,
 * then the first in (H, W).
 */
static vnpu_status maxpool_index_3d(struct cstate *s, struct cop *op)
{
	const struct vnpu_tinfo xinfo = *INFO(s, IN(op, 0)), yinfo = *INFO(s, op->out[0]);
	static const struct win_axis one = { 1, 1, 1, 0, 0 };
	struct vnpu_layer_pool_index hw = { 0 }, dp = { 0 };
	struct vnpu_layer_gather flat = { 0 };
	int64_t n_z, n_y, n_i2;
	struct pool3d_views v;
	struct win_axis ax[3];
	struct ctensor t[3];
	int32_t z, i1, i2;
	vnpu_status st;

	if (vnpu_attr_int(N(op), "storage_order", 0))
		return UNSUP(s, "3-D pooling with Indices in column-major storage_order");
	st = pool3d_axes(s, op, ax);
	if (st)
		return st;
	index_axes(&hw, &ax[1], &ax[2]);
	index_axes(&dp, &ax[0], &one);
	pool3d_views(&xinfo, &yinfo, &v);
	st = cs_add_temp(s, xinfo.type, 4, v.z, &z);
	if (!st)
		st = cs_add_temp(s, VNPU_TYPE_I64, 4, v.z, &i1);
	if (!st)
		st = cs_add_temp(s, VNPU_TYPE_I64, 4, v.y, &i2);
	if (st)
		return st;
	t[0] = ct_shaped(s, IN(op, 0), 4, v.x);
	t[1] = ct_dense(s, z);
	t[2] = ct_dense(s, i1);
	st = cl_layer(s, VNPU_LAYER_MAXPOOL_INDEX, t, 3, &hw, sizeof(hw));
	if (st)
		return st;
	t[0] = ct_shaped(s, z, 4, v.z2);
	t[1] = ct_shaped(s, op->out[0], 4, v.y);
	t[2] = ct_dense(s, i2);
	st = cl_layer(s, VNPU_LAYER_MAXPOOL_INDEX, t, 3, &dp, sizeof(dp));
	if (st)
		return st;
	n_z = v.z[0] * v.z[1] * v.z[2] * v.z[3];
	n_y = n_i2 = v.y[0] * v.y[1] * v.y[2] * v.y[3];
	t[0] = ct_shaped(s, i1, 1, &n_z);
	t[1] = ct_shaped(s, i2, 1, &n_i2);
	t[2] = ct_shaped(s, op->out[1], 1, &n_y);
	return cl_layer(s, VNPU_LAYER_GATHER_ELEMENTS, t, 3, &flat, sizeof(flat));
}

/* MaxPool with its Indices output (2-D; 1-D as a height of 1). */
static vnpu_status maxpool_index(struct cstate *s, struct cop *op)
{
	const struct vnpu_tinfo *xi = INFO(s, IN(op, 0)), *yi = INFO(s, op->out[0]);
	const struct vnpu_attr *ks = vnpu_node_attr(N(op), "kernel_shape");
	struct vnpu_layer_pool_index attr = {
		.storage_order = vnpu_attr_int(N(op), "storage_order", 0) != 0,
	};
	int64_t kernel[2] = { 1, 1 }, xd[4], yd[4];
	uint32_t pe[2];
	int32_t nsp = xi->rank - 2;
	struct ctensor t[3];
	vnpu_status st;

	if (nsp == 3)
		return maxpool_index_3d(s, op);
	if (nsp < 1 || nsp > 2)
		return UNSUP(s, "%d-D pooling with Indices (only 1-D to 3-D)", nsp);
	for (int32_t d = 0; d < nsp; d++)
		kernel[d] = ks->ints[d];
	st = window_attrs(s, op, IN(op, 0), op->out[0], kernel, attr.kernel, attr.stride,
			  attr.dilation, attr.pad_begin, pe);
	if (st)
		return st;
	for (int32_t d = 0; d < 4; d++) {
		int32_t k = d < 2 ? d : d - (4 - xi->rank);

		xd[d] = d >= 2 && k < 2 ? 1 : xi->dims[k];
		yd[d] = d >= 2 && k < 2 ? 1 : yi->dims[k];
	}
	t[0] = ct_shaped(s, IN(op, 0), 4, xd);
	t[1] = ct_shaped(s, op->out[0], 4, yd);
	t[2] = ct_shaped(s, op->out[1], 4, yd);
	return cl_layer(s, VNPU_LAYER_MAXPOOL_INDEX, t, 3, &attr, sizeof(attr));
}

/*
 * A global pool over 3 or more spatial dimensions: the 1-D global pool of
 * the spatial dimensions viewed as one, [N, C, D * H * W] to [N, C, 1].
 */
static vnpu_status global_pool_nd(struct cstate *s, struct cop *op, const struct vnpu_tinfo *xi)
{
	const char *name = N(op)->op;
	struct vnpu_layer_pool attr = { 0 };
	int64_t spatial = 1, in_dims[3], out_dims[3] = { xi->dims[0], xi->dims[1], 1 };
	struct ctensor t[2];

	for (int32_t d = 2; d < xi->rank; d++)
		spatial *= xi->dims[d];
	/* at most 2^40 elements: no overflow; cl_layer() checks the window */
	if (spatial > UINT32_MAX)
		return UNSUP(s, "a pooling window of %lld elements: the device pools at most 2^24",
			     (long long)spatial);
	attr.mode = strstr(name, "Max") ? VNPU_POOL_MAX :
		    strstr(name, "Average") ? VNPU_POOL_AVG : VNPU_POOL_LP;
	if (attr.mode == VNPU_POOL_LP)
		attr.p = (uint32_t)vnpu_attr_int(N(op), "p", 2);
	attr.kernel[0] = 1;
	attr.kernel[1] = (uint32_t)spatial;
	attr.stride[0] = attr.stride[1] = attr.dilation[0] = attr.dilation[1] = 1;
	in_dims[0] = xi->dims[0];
	in_dims[1] = xi->dims[1];
	in_dims[2] = spatial;
	t[0] = ct_shaped(s, IN(op, 0), 3, in_dims);
	t[1] = ct_shaped(s, op->out[0], 3, out_dims);
	return cl_layer(s, VNPU_LAYER_POOL, t, 2, &attr, sizeof(attr));
}

static vnpu_status lower_pool(struct cstate *s, struct cop *op)
{
	const char *name = N(op)->op;
	const struct vnpu_tinfo xinfo = *INFO(s, IN(op, 0)), *xi = &xinfo;
	struct vnpu_layer_pool attr = { 0 };
	int64_t kernel[2] = { 1, 1 };
	int32_t nsp = xi->rank - 2;
	struct ctensor t[2];
	vnpu_status st;

	if (op->num_out > 1 && op->out[1] >= 0 && !strcmp(name, "MaxPool"))
		return maxpool_index(s, op);
	if (nsp == 3 && strncmp(name, "Global", 6)) {
		attr.mode = strstr(name, "Max") ? VNPU_POOL_MAX :
			    strstr(name, "Average") ? VNPU_POOL_AVG : VNPU_POOL_LP;
		if (attr.mode == VNPU_POOL_LP)
			attr.p = (uint32_t)vnpu_attr_int(N(op), "p", 2);
		if (vnpu_attr_int(N(op), "ceil_mode", 0))
			attr.flags |= VNPU_POOL_F_CEIL;
		if (vnpu_attr_int(N(op), "count_include_pad", 0))
			attr.flags |= VNPU_POOL_F_COUNT_PAD;
		return pool_3d(s, op, &attr);
	}
	if (nsp > 2 && !strncmp(name, "Global", 6))
		return global_pool_nd(s, op, xi);
	if (nsp < 1 || nsp > 2)
		return UNSUP(s, "%d-D pooling (only 1-D to 3-D, global pools of any rank)", nsp);
	if (strstr(name, "Max"))
		attr.mode = VNPU_POOL_MAX;
	else if (strstr(name, "Average"))
		attr.mode = VNPU_POOL_AVG;
	else
		attr.mode = VNPU_POOL_LP;
	if (attr.mode == VNPU_POOL_LP)
		attr.p = (uint32_t)vnpu_attr_int(N(op), "p", 2);
	if (!strncmp(name, "Global", 6)) {
		for (int32_t d = 0; d < nsp; d++)
			attr.kernel[d + 2 - nsp] = (uint32_t)xi->dims[2 + d];
		attr.kernel[0] = nsp == 1 ? 1 : attr.kernel[0];
		attr.stride[0] = attr.stride[1] = attr.dilation[0] = attr.dilation[1] = 1;
	} else {
		const struct vnpu_attr *ks = vnpu_node_attr(N(op), "kernel_shape");

		for (int32_t d = 0; d < nsp; d++)
			kernel[d] = ks->ints[d];
		st = window_attrs(s, op, IN(op, 0), op->out[0], kernel, attr.kernel, attr.stride,
				  attr.dilation, attr.pad_begin, attr.pad_end);
		if (st)
			return st;
		if (vnpu_attr_int(N(op), "ceil_mode", 0))
			attr.flags |= VNPU_POOL_F_CEIL;
		if (vnpu_attr_int(N(op), "count_include_pad", 0))
			attr.flags |= VNPU_POOL_F_COUNT_PAD;
	}
	/* MaxPool of 16-bit integers: exactly through f32 (8-bit ones run as they are). */
	if (attr.mode == VNPU_POOL_MAX && !vnpu_type_is_float(xi->type) &&
	    vnpu_element_type_size(xi->type) == 2) {
		int32_t xf, yf;

		st = cl_cast(s, IN(op, 0), VNPU_TYPE_F32, &xf);
		if (!st)
			st = cs_add_temp(s, VNPU_TYPE_F32, INFO(s, op->out[0])->rank,
					 INFO(s, op->out[0])->dims, &yf);
		if (st)
			return st;
		t[0] = ct_dense(s, xf);
		t[1] = ct_dense(s, yf);
		st = cl_layer(s, VNPU_LAYER_POOL, t, 2, &attr, sizeof(attr));
		if (st)
			return st;
		t[0] = ct_dense(s, yf);
		t[1] = ct_dense(s, op->out[0]);
		return cl_layer(s, VNPU_LAYER_CAST, t, 2, NULL, 0);
	}
	t[0] = ct_dense(s, IN(op, 0));
	t[1] = ct_dense(s, op->out[0]);
	return cl_layer(s, VNPU_LAYER_POOL, t, 2, &attr, sizeof(attr));
}

static vnpu_status lower_softmax(struct cstate *s, struct cop *op)
{
	const struct vnpu_tinfo *xi = INFO(s, IN(op, 0));
	struct vnpu_layer_softmax attr = { 0 };
	int64_t axis = vnpu_attr_int(N(op), "axis", s->m->opset >= 13 ? -1 : 1);
	struct ctensor t[2];

	axis = axis < 0 ? axis + xi->rank : axis;
	if (!strcmp(N(op)->op, "LogSoftmax"))
		attr.mode = VNPU_LOG_SOFTMAX;
	else if (!strcmp(N(op)->op, "Hardmax"))
		attr.mode = VNPU_HARDMAX;
	if (s->m->opset < 13) {
		int64_t dims[2] = { 1, 1 };

		for (int32_t d = 0; d < xi->rank; d++)
			dims[d < axis ? 0 : 1] *= xi->dims[d];
		t[0] = ct_shaped(s, IN(op, 0), 2, dims);
		t[1] = ct_shaped(s, op->out[0], 2, dims);
		attr.axis = 1;
	} else {
		t[0] = ct_dense(s, IN(op, 0));
		t[1] = ct_dense(s, op->out[0]);
		attr.axis = (uint32_t)axis;
	}
	return cl_layer(s, VNPU_LAYER_SOFTMAX, t, 2, &attr, sizeof(attr));
}

/* LayerNormalization's Mean and InvStdDev outputs, when used:
 * mean = E[x], inv = 1 / sqrt(E[(x - mean)^2] + epsilon). */
static vnpu_status layer_norm_stats(struct cstate *s, struct cop *op, uint32_t axis, float eps)
{
	const struct vnpu_tinfo xinfo = *INFO(s, IN(op, 0)), *xi = &xinfo;
	int32_t mean = op->num_out > 1 ? op->out[1] : -1, inv = op->num_out > 2 ? op->out[2] : -1;
	int32_t d, d2, var, ve, sd, e;
	uint32_t mask = ((1u << xi->rank) - 1) & ~((1u << axis) - 1);
	int64_t rdims[VNPU_MAX_RANK];
	struct vnpu_layer_act act = { .func = VNPU_ACT_SQRT };
	vnpu_status st = VNPU_OK;

	if (mean < 0 && inv < 0)
		return VNPU_OK;
	if (xi->type != VNPU_TYPE_F32 || (mean >= 0 && INFO(s, mean)->type != VNPU_TYPE_F32) ||
	    (inv >= 0 && INFO(s, inv)->type != VNPU_TYPE_F32))
		return UNSUP(s, "statistics outputs other than f32");
	for (int32_t k = 0; k < xi->rank; k++)
		rdims[k] = mask >> k & 1 ? 1 : xi->dims[k];
	if (mean < 0)
		st = cs_add_temp(s, VNPU_TYPE_F32, xi->rank, rdims, &mean);
	if (!st)
		st = reduce(s, VNPU_REDUCE_MEAN, IN(op, 0), mean, mask);
	if (inv < 0 || st)
		return st;
	st = cs_add_temp(s, VNPU_TYPE_F32, xi->rank, xi->dims, &d);
	if (!st)
		st = cs_add_temp(s, VNPU_TYPE_F32, xi->rank, xi->dims, &d2);
	if (!st)
		st = cs_add_temp(s, VNPU_TYPE_F32, xi->rank, rdims, &var);
	if (!st)
		st = cs_add_temp(s, VNPU_TYPE_F32, xi->rank, rdims, &ve);
	if (!st)
		st = cs_add_temp(s, VNPU_TYPE_F32, xi->rank, rdims, &sd);
	if (!st)
		st = cl_const_scalar(s, VNPU_TYPE_F32, eps, &e);
	if (!st)
		st = cl_binary(s, VNPU_BIN_SUB, IN(op, 0), mean, d);
	if (!st)
		st = cl_binary(s, VNPU_BIN_MUL, d, d, d2);
	if (!st)
		st = reduce(s, VNPU_REDUCE_MEAN, d2, var, mask);
	if (!st)
		st = cl_binary(s, VNPU_BIN_ADD, var, e, ve);
	if (!st)
		st = cl_unary(s, ve, sd, &act);
	act.func = VNPU_ACT_RECIPROCAL;
	return st ? st : cl_unary(s, sd, inv, &act);
}

/* BatchNormalization with training_mode: normalized with the batch's own
 * mean and (population) variance; the running statistics blend in with
 * momentum. */
static vnpu_status batch_norm_training(struct cstate *s, struct cop *op)
{
	const struct vnpu_tinfo xinfo = *INFO(s, IN(op, 0)), *xi = &xinfo;
	float eps = vnpu_attr_float(N(op), "epsilon", 1e-5f), mom = vnpu_attr_float(N(op), "momentum", 0.9f);
	uint32_t mask = ((1u << xi->rank) - 1) & ~2u;
	int64_t cdims[VNPU_MAX_RANK], ch = xi->dims[1];
	int32_t mean, d, d2, var, e, ve, sd, norm, t, mc, omc;
	struct vnpu_layer_act sqrt_act = { .func = VNPU_ACT_SQRT };
	vnpu_status st;

	if (xi->type != VNPU_TYPE_F32 || xi->rank < 2)
		return UNSUP(s, "training mode on other than f32 [N, C, ...]");
	/* scale, bias, mean and var are read as [C] */
	for (uint32_t i = 1; i < 5; i++)
		if (IN(op, i) < 0 || INFO(s, IN(op, i))->type != VNPU_TYPE_F32 ||
		    vnpu_tinfo_elems(INFO(s, IN(op, i))) != ch)
			return UNSUP(s, "input %u is not f32 [%lld]", i, (long long)ch);
	for (int32_t k = 0; k < xi->rank; k++)
		cdims[k] = k == 1 ? ch : 1;
	st = cs_add_temp(s, VNPU_TYPE_F32, xi->rank, cdims, &mean);
	if (!st)
		st = cs_add_temp(s, VNPU_TYPE_F32, xi->rank, xi->dims, &d);
	if (!st)
		st = cs_add_temp(s, VNPU_TYPE_F32, xi->rank, xi->dims, &d2);
	if (!st)
		st = cs_add_temp(s, VNPU_TYPE_F32, xi->rank, cdims, &var);
	if (!st)
		st = cs_add_temp(s, VNPU_TYPE_F32, xi->rank, cdims, &ve);
	if (!st)
		st = cs_add_temp(s, VNPU_TYPE_F32, xi->rank, cdims, &sd);
	if (!st)
		st = cs_add_temp(s, VNPU_TYPE_F32, xi->rank, xi->dims, &norm);
	if (!st)
		st = cs_add_temp(s, VNPU_TYPE_F32, xi->rank, xi->dims, &t);
	if (!st)
		st = cl_const_scalar(s, VNPU_TYPE_F32, eps, &e);
	if (!st)
		st = reduce(s, VNPU_REDUCE_MEAN, IN(op, 0), mean, mask);
	if (!st)
		st = cl_binary(s, VNPU_BIN_SUB, IN(op, 0), mean, d);
	if (!st)
		st = cl_binary(s, VNPU_BIN_MUL, d, d, d2);
	if (!st)
		st = reduce(s, VNPU_REDUCE_MEAN, d2, var, mask);
	if (!st)
		st = cl_binary(s, VNPU_BIN_ADD, var, e, ve);
	if (!st)
		st = cl_unary(s, ve, sd, &sqrt_act);
	if (st)
		return st;
	/* y = d / sd * scale + bias, scale and bias [C] along axis 1 */
	{
		struct ctensor sc = ct_shaped(s, IN(op, 1), xi->rank - 1, cdims + 1);
		struct ctensor bi = ct_shaped(s, IN(op, 2), xi->rank - 1, cdims + 1);

		st = cl_binary(s, VNPU_BIN_DIV, d, sd, norm);
		if (!st)
			st = cl_binary_t(s, VNPU_BIN_MUL, ct_dense(s, norm), sc, ct_dense(s, t));
		if (!st)
			st = cl_binary_t(s, VNPU_BIN_ADD, ct_dense(s, t), bi, ct_dense(s, op->out[0]));
	}
	/* running = input * momentum + current * (1 - momentum) */
	if (!st)
		st = cl_const_scalar(s, VNPU_TYPE_F32, mom, &mc);
	if (!st)
		st = cl_const_scalar(s, VNPU_TYPE_F32, 1.0 - mom, &omc);
	for (uint32_t o = 1; !st && o < 3 && o < op->num_out; o++) {
		int32_t cur = o == 1 ? mean : var, a, b;
		struct ctensor cv;

		if (op->out[o] < 0)
			continue;
		st = cs_add_temp(s, VNPU_TYPE_F32, 1, &ch, &a);
		if (!st)
			st = cs_add_temp(s, VNPU_TYPE_F32, 1, &ch, &b);
		if (!st)
			st = cl_binary(s, VNPU_BIN_MUL, IN(op, 2 + o), mc, a);
		cv = ct_shaped(s, cur, 1, &ch);
		if (!st)
			st = cl_binary_t(s, VNPU_BIN_MUL, cv, ct_dense(s, omc), ct_dense(s, b));
		if (!st)
			st = cl_binary(s, VNPU_BIN_ADD, a, b, op->out[o]);
	}
	return st;
}

static vnpu_status lower_norm(struct cstate *s, struct cop *op)
{
	const char *name = N(op)->op;
	struct vnpu_layer_norm attr = { 0 };
	struct ctensor t[6];
	uint32_t n = 0, num_in;
	int32_t rank = rank_of(s, IN(op, 0));

	attr.epsilon = f32_bits(vnpu_attr_float(N(op), "epsilon", 1e-5f));
	for (uint32_t o = 1; o < op->num_out; o++)
		if (op->out[o] >= 0 && strcmp(name, "LayerNormalization") &&
		    !vnpu_attr_int(N(op), "training_mode", 0))
			return UNSUP(s, "only the first output is supported");
	if (!strcmp(name, "BatchNormalization")) {
		if (vnpu_attr_int(N(op), "training_mode", 0))
			return batch_norm_training(s, op);
		attr.mode = VNPU_NORM_BATCH;
		num_in = 5;
	} else if (!strcmp(name, "InstanceNormalization")) {
		attr.mode = VNPU_NORM_INSTANCE;
		num_in = 3;
	} else if (!strcmp(name, "LayerNormalization")) {
		int64_t axis = vnpu_attr_int(N(op), "axis", -1);
		vnpu_status st;

		attr.mode = VNPU_NORM_LAYER;
		attr.axis = (uint32_t)(axis < 0 ? axis + rank : axis);
		st = layer_norm_stats(s, op, attr.axis, vnpu_attr_float(N(op), "epsilon", 1e-5f));
		if (st)
			return st;
		num_in = IN(op, 2) >= 0 ? 3 : 2;
		if (num_in == 3)
			attr.flags |= VNPU_LAYER_F_BIAS;
	} else if (!strcmp(name, "LpNormalization")) {
		int64_t axis = vnpu_attr_int(N(op), "axis", -1);

		attr.mode = VNPU_NORM_LP;
		attr.axis = (uint32_t)(axis < 0 ? axis + rank : axis);
		attr.p = (uint32_t)vnpu_attr_int(N(op), "p", 2);
		attr.epsilon = 0;
		num_in = 1;
	} else {
		attr.mode = VNPU_NORM_LRN;
		attr.size = (uint32_t)vnpu_attr_int(N(op), "size", 0);
		attr.alpha = f32_bits(vnpu_attr_float(N(op), "alpha", 1e-4f));
		attr.beta = f32_bits(vnpu_attr_float(N(op), "beta", 0.75f));
		attr.bias = f32_bits(vnpu_attr_float(N(op), "bias", 1.0f));
		attr.epsilon = 0;
		num_in = 1;
	}
	for (uint32_t i = 0; i < num_in; i++) {
		if (IN(op, i) < 0)
			return UNSUP(s, "input %u is missing", i);
		t[n++] = ct_dense(s, IN(op, i));
	}
	t[n++] = ct_dense(s, op->out[0]);
	return cl_layer(s, VNPU_LAYER_NORM, t, n, &attr, sizeof(attr));
}

static const struct bin_map reduce_maps[] = {
	{ "ReduceSum", VNPU_REDUCE_SUM }, { "ReduceMean", VNPU_REDUCE_MEAN },
	{ "ReduceMax", VNPU_REDUCE_MAX }, { "ReduceMin", VNPU_REDUCE_MIN },
	{ "ReduceProd", VNPU_REDUCE_PROD }, { "ReduceL1", VNPU_REDUCE_L1 },
	{ "ReduceL2", VNPU_REDUCE_L2 }, { "ReduceLogSum", VNPU_REDUCE_LOG_SUM },
	{ "ReduceLogSumExp", VNPU_REDUCE_LOG_SUM_EXP },
	{ "ReduceSumSquare", VNPU_REDUCE_SUM_SQUARE },
};

/* The output viewed with the input's rank and 1 on reduced axes. */
static struct ctensor reduced_view(const struct cstate *s, int32_t x, int32_t y, uint32_t mask)
{
	const struct vnpu_tinfo *xi = INFO(s, x);
	int64_t dims[VNPU_MAX_RANK];

	for (int32_t d = 0; d < xi->rank; d++)
		dims[d] = mask >> d & 1 ? 1 : xi->dims[d];
	return ct_shaped(s, y, xi->rank, dims);
}

static vnpu_status lower_reduce(struct cstate *s, struct cop *op, uint32_t func)
{
	const struct vnpu_tinfo *xi = INFO(s, IN(op, 0));
	struct vnpu_layer_reduce attr = { .func = func };
	int64_t axes[VNPU_MAX_RANK];
	bool present;
	int32_t n = cl_const_ints(s, op, "axes", 1, axes, VNPU_MAX_RANK, &present);

	if (n < 0)
		return UNSUP(s, "axes computed at run time");
	if (!n && vnpu_attr_int(N(op), "noop_with_empty_axes", 0))
		return cl_copy(s, ct_dense(s, op->out[0]), ct_dense(s, IN(op, 0)));
	for (int32_t i = 0; i < n; i++)
		attr.axes |= 1u << (axes[i] < 0 ? axes[i] + xi->rank : axes[i]);
	if (!n)
		attr.axes = (1u << xi->rank) - 1;
	return reduce(s, func, IN(op, 0), op->out[0], attr.axes);
}

static vnpu_status reduce(struct cstate *s, uint32_t func, int32_t x, int32_t y, uint32_t mask)
{
	struct vnpu_layer_reduce attr = { .func = func, .axes = mask };
	struct ctensor t[2] = { ct_dense(s, x), reduced_view(s, x, y, mask) };
	const int64_t one = 1;

	/* A scalar reduces as the one element of a [1]. */
	if (!INFO(s, x)->rank) {
		t[0] = ct_shaped(s, x, 1, &one);
		t[1] = ct_shaped(s, y, 1, &one);
		attr.axes = 1;
	}
	return cl_layer(s, VNPU_LAYER_REDUCE, t, 2, &attr, sizeof(attr));
}

static vnpu_status lower_argreduce(struct cstate *s, struct cop *op)
{
	const struct vnpu_tinfo *xi = INFO(s, IN(op, 0));
	struct vnpu_layer_argreduce attr = { .min = !strcmp(N(op)->op, "ArgMin") };
	int64_t axis = vnpu_attr_int(N(op), "axis", 0);
	struct ctensor t[2];

	axis = axis < 0 ? axis + xi->rank : axis;
	attr.axis = (uint32_t)axis;
	if (vnpu_attr_int(N(op), "select_last_index", 0))
		attr.flags |= VNPU_ARG_F_LAST;
	t[0] = ct_dense(s, IN(op, 0));
	t[1] = reduced_view(s, IN(op, 0), op->out[0], 1u << axis);
	return cl_layer(s, VNPU_LAYER_ARGREDUCE, t, 2, &attr, sizeof(attr));
}

static int str_index(const char *s, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(s, names[i]))
			return i;
	return -1;
}

/*
 * With scales, ONNX's align_corners maps over the unrounded resized length
 * in * scale, which the device's align_corners (over the output extent)
 * does not: the same mapping is asymmetric with scale (len - 1) / (in - 1).
 */
static void align_corners_by_scale(const struct vnpu_tinfo *xi, struct vnpu_layer_resize *attr)
{
	for (int32_t d = 0; d < xi->rank; d++) {
		float sc, len = (float)xi->dims[d];

		memcpy(&sc, &attr->scale[d], sizeof(sc));
		len *= sc;
		attr->scale[d] = f32_bits(len > 1 && xi->dims[d] > 1 ?
					  (len - 1) / (float)(xi->dims[d] - 1) : 1.0f);
	}
	attr->coord = VNPU_COORD_ASYMMETRIC;
}

/*
 * tf_crop_and_resize, one axis at a time (ONNX's reference interpolates
 * axis by axis too): output j of an axis samples the input at
 * start * (in - 1) + j * (end - start) * (in - 1) / (out - 1) (the middle
 * of the roi when out is 1); linear takes the two neighbours, nearest the
 * one nearest_mode picks, and a position outside [0, in - 1] gives
 * extrapolation_value. The positions are static, so each axis is gathers
 * of constant indices, products with constant weights and a select.
 */
struct crop_axis {
	int64_t in, out;
	double start, end;
};

static double crop_pos(const struct crop_axis *a, int64_t j)
{
	if (a->out > 1)
		return a->start * (double)(a->in - 1) +
		       (double)j * (a->end - a->start) * (double)(a->in - 1) / (double)(a->out - 1);
	return 0.5 * (a->start + a->end) * (double)(a->in - 1);
}

/* The input element nearest_mode @nearest picks at position @x. */
static int64_t crop_nearest(double x, uint32_t nearest)
{
	double f = floor(x), r = x - f;

	if (r == 0)
		return (int64_t)f;
	switch (nearest) {
	case VNPU_NEAREST_ROUND_PREFER_FLOOR: return (int64_t)f + (r > 0.5);
	case VNPU_NEAREST_ROUND_PREFER_CEIL: return (int64_t)f + (r >= 0.5);
	case VNPU_NEAREST_FLOOR: return (int64_t)f;
	default: return (int64_t)f + 1;
	}
}

/* A constant of @type, extent @len along @axis and 1 elsewhere (@rank
 * dims), from @v (taken). */
static vnpu_status along_axis_const(struct cstate *s, vnpu_element_type type, int32_t rank,
				    int32_t axis, int64_t len, double *v, int32_t *out)
{
	int64_t dims[VNPU_MAX_RANK] = { [0 ... VNPU_MAX_RANK - 1] = 1 };
	void *data = calloc((size_t)len + 1, vnpu_element_type_size(type));

	if (!data) {
		free(v);
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	}
	for (int64_t j = 0; j < len; j++)
		vnpu_elem_set_f(data, type, j, v[j]);
	free(v);
	dims[axis] = len;
	return cs_add_const(s, type, rank, dims, data, out);
}

/* @x resized along @axis into @y (a new temporary when -1). */
static vnpu_status crop_resize_axis(struct cstate *s, int32_t x, int32_t axis,
				    const struct crop_axis *a, const struct vnpu_layer_resize *attr,
				    double extrapolation, int32_t *y)
{
	vnpu_element_type type = INFO(s, x)->type;
	int32_t rank = INFO(s, x)->rank, g0, g1, wl, wr, l, r, sum, mask, ev;
	int64_t *i0 = malloc((size_t)a->out * sizeof(int64_t) + 8);
	int64_t *i1 = malloc((size_t)a->out * sizeof(int64_t) + 8);
	double *w = malloc((size_t)a->out * sizeof(double) + 8);
	double *omw = malloc((size_t)a->out * sizeof(double) + 8);
	double *outside = malloc((size_t)a->out * sizeof(double) + 8);
	bool linear = attr->mode == VNPU_RESIZE_LINEAR, any_outside = false;
	vnpu_status st;

	if (!i0 || !i1 || !w || !omw || !outside) {
		free(i0);
		free(i1);
		free(w);
		free(omw);
		free(outside);
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	}
	for (int64_t j = 0; j < a->out; j++) {
		double pos = crop_pos(a, j), f = floor(pos);
		int64_t last = a->in - 1;

		outside[j] = pos < 0 || pos > (double)last;
		any_outside |= outside[j] != 0;
		if (outside[j])
			pos = f = 0;
		i0[j] = linear ? (int64_t)f : crop_nearest(pos, attr->nearest);
		i0[j] = i0[j] < last ? i0[j] : last;
		i1[j] = i0[j] < last ? i0[j] + 1 : last;
		w[j] = pos - f;
		omw[j] = 1 - w[j];
	}
	st = cl_gather_at(s, x, axis, i0, a->out, &g0);
	if (!st && linear)
		st = cl_gather_at(s, x, axis, i1, a->out, &g1);
	else
		free(i1);
	if (!st && linear)
		st = along_axis_const(s, type, rank, axis, a->out, omw, &wl);
	else
		free(omw);
	if (!st && linear)
		st = along_axis_const(s, type, rank, axis, a->out, w, &wr);
	else
		free(w);
	sum = g0;
	if (!st && linear) {
		st = cs_add_temp(s, type, rank, INFO(s, g0)->dims, &l);
		if (!st)
			st = cs_add_temp(s, type, rank, INFO(s, g0)->dims, &r);
		if (!st)
			st = cl_binary(s, VNPU_BIN_MUL, g0, wl, l);
		if (!st)
			st = cl_binary(s, VNPU_BIN_MUL, g1, wr, r);
		if (!st && (any_outside || *y < 0))
			st = cs_add_temp(s, type, rank, INFO(s, g0)->dims, &sum);
		else
			sum = *y;
		if (!st)
			st = cl_binary(s, VNPU_BIN_ADD, l, r, sum);
	}
	if (st || !any_outside) {
		free(outside);
		if (!st && sum != *y && *y >= 0)
			st = cl_copy(s, ct_dense(s, *y), ct_dense(s, sum));
		if (!st && *y < 0)
			*y = sum;
		return st;
	}
	st = along_axis_const(s, VNPU_TYPE_BOOL, rank, axis, a->out, outside, &mask);
	if (!st)
		st = cl_const_scalar(s, type, extrapolation, &ev);
	if (!st && *y < 0)
		st = cs_add_temp(s, type, rank, INFO(s, sum)->dims, y);
	return st ? st : cl_where(s, mask, ev, sum, *y);
}

static vnpu_status lower_resize_crop(struct cstate *s, struct cop *op,
				     const struct vnpu_layer_resize *attr)
{
	const struct vnpu_tinfo xinfo = *INFO(s, IN(op, 0)), yinfo = *INFO(s, op->out[0]);
	const struct vnpu_tinfo *xi = &xinfo, *yi = &yinfo;
	const struct vnpu_tinfo *roi = IN(op, 1) >= 0 ? INFO(s, IN(op, 1)) : NULL;
	double extrapolation = vnpu_attr_float(N(op), "extrapolation_value", 0.0f);
	struct crop_axis axes[VNPU_MAX_RANK];
	int32_t rank = xi->rank, cur = IN(op, 0), last = -1;
	vnpu_status st = VNPU_OK;

	if (attr->mode == VNPU_RESIZE_CUBIC)
		return UNSUP(s, "cubic tf_crop_and_resize");
	if (vnpu_node_attr(N(op), "axes"))
		return UNSUP(s, "tf_crop_and_resize on some axes");
	if (!roi || !cs_is_const(s, IN(op, 1)))
		return UNSUP(s, "tf_crop_and_resize with the roi computed at run time");
	if (vnpu_tinfo_elems(roi) != 2 * rank)
		return cs_fail(s, VNPU_INVALID_ARGUMENT, "roi of %lld values for rank %d",
			       (long long)vnpu_tinfo_elems(roi), rank);
	for (int32_t d = 0; d < rank; d++) {
		axes[d] = (struct crop_axis){
			.in = xi->dims[d], .out = yi->dims[d],
			.start = vnpu_elem_get_f(roi->data, roi->type, d),
			.end = vnpu_elem_get_f(roi->data, roi->type, rank + d),
		};
		if (axes[d].in != axes[d].out || axes[d].start != 0 || axes[d].end != 1)
			last = d;
	}
	if (last < 0)
		return cl_copy(s, ct_dense(s, op->out[0]), ct_dense(s, cur));
	for (int32_t d = 0; d <= last && !st; d++) {
		int32_t y = d == last ? op->out[0] : -1;

		if (axes[d].in == axes[d].out && axes[d].start == 0 && axes[d].end == 1)
			continue;
		if (!axes[d].in)
			return UNSUP(s, "tf_crop_and_resize of an empty axis");
		st = crop_resize_axis(s, cur, d, &axes[d], attr, extrapolation, &y);
		cur = y;
	}
	return st;
}

void cl_resize_scales(const struct cstate *s, const struct cop *op, uint32_t *scale)
{
	const struct vnpu_node *n = N(op);
	int32_t rank = INFO(s, IN(op, 0))->rank;
	bool upsample = !strcmp(n->op, "Upsample");
	int32_t scales = upsample || s->m->opset < 11 ? IN(op, 1) : IN(op, 2);

	if (scales >= 0 && cs_is_const(s, scales) && vnpu_tinfo_elems(INFO(s, scales)) == rank)
		for (int32_t d = 0; d < rank; d++)
			scale[d] = f32_bits((float)vnpu_elem_get_f(INFO(s, scales)->data,
								   INFO(s, scales)->type, d));
	if (upsample && vnpu_node_attr(n, "scales")) {
		const struct vnpu_attr *a = vnpu_node_attr(n, "scales");

		for (int32_t d = 0; d < rank && (size_t)d < a->n; d++)
			scale[d] = f32_bits(a->floats[d]);
	}
}

static vnpu_status lower_resize(struct cstate *s, struct cop *op)
{
	static const char *const coords[] = {
		"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel",
		"tf_half_pixel_for_nn", "half_pixel_symmetric",
	};
	static const char *const nearest[] = {
		"round_prefer_floor", "round_prefer_ceil", "floor", "ceil",
	};
	const struct vnpu_node *n = N(op);
	const struct vnpu_tinfo xinfo = *INFO(s, IN(op, 0)), *xi = &xinfo;
	struct vnpu_layer_resize attr = { 0 };
	const char *mode = vnpu_attr_str(n, "mode", "nearest");
	bool upsample = !strcmp(n->op, "Upsample");
	const char *coord = upsample || s->m->opset < 11 ? "asymmetric" :
			    vnpu_attr_str(n, "coordinate_transformation_mode", "half_pixel");
	int c, k;
	struct ctensor t[2];

	if (!strcmp(mode, "nearest")) {
		attr.mode = VNPU_RESIZE_NEAREST;
		k = upsample || s->m->opset < 11 ? 2 :
		    str_index(vnpu_attr_str(n, "nearest_mode", "round_prefer_floor"), nearest, 4);
		if (k < 0)
			return UNSUP(s, "nearest_mode '%s'", vnpu_attr_str(n, "nearest_mode", ""));
		attr.nearest = (uint32_t)k;
	} else if (!strcmp(mode, "linear") || !strcmp(mode, "bilinear")) {
		attr.mode = VNPU_RESIZE_LINEAR;
	} else if (!strcmp(mode, "cubic")) {
		attr.mode = VNPU_RESIZE_CUBIC;
		attr.cubic_a = f32_bits(vnpu_attr_float(n, "cubic_coeff_a", -0.75f));
		if (vnpu_attr_int(n, "exclude_outside", 0))
			attr.flags |= VNPU_RESIZE_F_EXCLUDE_OUTSIDE;
	} else {
		return UNSUP(s, "mode '%s'", mode);
	}
	if (!strcmp(coord, "tf_crop_and_resize"))
		return lower_resize_crop(s, op, &attr);
	c = str_index(coord, coords, 6);
	if (c < 0)
		return UNSUP(s, "coordinate_transformation_mode '%s'", coord);
	attr.coord = (uint32_t)c;
	if (vnpu_attr_int(n, "exclude_outside", 0) && attr.mode != VNPU_RESIZE_CUBIC)
		return UNSUP(s, "exclude_outside");
	cl_resize_scales(s, op, attr.scale);
	if (attr.coord == VNPU_COORD_ALIGN_CORNERS && attr.scale[0])
		align_corners_by_scale(xi, &attr);
	t[0] = ct_dense(s, IN(op, 0));
	t[1] = ct_dense(s, op->out[0]);
	return cl_layer(s, VNPU_LAYER_RESIZE, t, 2, &attr, sizeof(attr));
}

static vnpu_status lower_pad(struct cstate *s, struct cop *op)
{
	static const char *const modes[] = { "constant", "reflect", "edge", "wrap" };
	const struct vnpu_tinfo *xi = INFO(s, IN(op, 0));
	struct vnpu_layer_pad attr = { 0 };
	int64_t pads[VNPU_MAX_RANK * 2];
	bool present;
	int32_t n = cl_const_ints(s, op, "pads", 1, pads, VNPU_MAX_RANK * 2, &present);
	int m = str_index(vnpu_attr_str(N(op), "mode", "constant"), modes, 4);
	struct ctensor t[2];

	if (n < 0 || IN(op, 3) >= 0)
		return UNSUP(s, "pads computed at run time or axes given");
	if (m < 0)
		return UNSUP(s, "mode '%s'", vnpu_attr_str(N(op), "mode", ""));
	attr.mode = (uint32_t)m;
	for (int32_t d = 0; d < xi->rank; d++)
		attr.begin[d] = pads[d];
	if (m == VNPU_PAD_CONSTANT) {
		uint64_t v = 0;

		if (s->m->opset < 11) {
			vnpu_elem_set_f(&v, xi->type, 0, vnpu_attr_float(N(op), "value", 0.0f));
		} else if (IN(op, 2) >= 0) {
			const struct vnpu_tinfo *ci = INFO(s, IN(op, 2));

			if (!ci->data)
				return UNSUP(s, "pad value computed at run time");
			memcpy(&v, ci->data, vnpu_element_type_size(ci->type));
		}
		attr.value = v;
	}
	t[0] = ct_dense(s, IN(op, 0));
	t[1] = ct_dense(s, op->out[0]);
	return cl_layer(s, VNPU_LAYER_PAD, t, 2, &attr, sizeof(attr));
}

static vnpu_status lower_gather(struct cstate *s, struct cop *op)
{
	struct vnpu_layer_gather attr = { 0 };
	int64_t axis = vnpu_attr_int(N(op), "axis", 0);
	struct ctensor t[3] = { ct_dense(s, IN(op, 0)), ct_dense(s, IN(op, 1)),
				ct_dense(s, op->out[0]) };

	axis = axis < 0 ? axis + rank_of(s, IN(op, 0)) : axis;
	attr.axis = (uint32_t)axis;
	return cl_layer(s, strcmp(N(op)->op, "Gather") ? VNPU_LAYER_GATHER_ELEMENTS : VNPU_LAYER_GATHER,
		     t, 3, &attr, sizeof(attr));
}

/* ScatterElements (Scatter before opset 11) and ScatterND, with reduction. */
static vnpu_status lower_scatter(struct cstate *s, struct cop *op)
{
	static const char *const reds[] = { "none", "add", "mul", "max", "min" };
	struct vnpu_layer_scatter attr = { 0 };
	bool nd = !strcmp(N(op)->op, "ScatterND");
	int64_t axis = vnpu_attr_int(N(op), "axis", 0);
	int r = str_index(vnpu_attr_str(N(op), "reduction", "none"), reds, 5);
	struct ctensor t[4] = { ct_dense(s, IN(op, 0)), ct_dense(s, IN(op, 1)),
				ct_dense(s, IN(op, 2)), ct_dense(s, op->out[0]) };

	if (r < 0)
		return UNSUP(s, "reduction '%s'", vnpu_attr_str(N(op), "reduction", ""));
	attr.reduction = (uint32_t)r;
	if (!nd)
		attr.axis = (uint32_t)(axis < 0 ? axis + rank_of(s, IN(op, 0)) : axis);
	return cl_layer(s, nd ? VNPU_LAYER_SCATTER_ND : VNPU_LAYER_SCATTER_ELEMENTS, t, 4, &attr,
			sizeof(attr));
}

static vnpu_status lower_gather_nd(struct cstate *s, struct cop *op)
{
	struct vnpu_layer_gather_nd attr = {
		.batch_dims = (uint32_t)vnpu_attr_int(N(op), "batch_dims", 0),
	};
	struct ctensor t[3] = { ct_dense(s, IN(op, 0)), ct_dense(s, IN(op, 1)),
				ct_dense(s, op->out[0]) };

	return cl_layer(s, VNPU_LAYER_GATHER_ND, t, 3, &attr, sizeof(attr));
}

static vnpu_status lower_grid_sample(struct cstate *s, struct cop *op)
{
	static const char *const modes[] = { "nearest", "bilinear", "bicubic", "linear", "cubic" };
	static const char *const pads[] = { "zeros", "border", "reflection" };
	const char *mode = vnpu_attr_str(N(op), "mode", "bilinear");
	const char *pad = vnpu_attr_str(N(op), "padding_mode", "zeros");
	int m = str_index(mode, modes, 5), p = str_index(pad, pads, 3);
	struct vnpu_layer_grid_sample attr = {
		.align_corners = vnpu_attr_int(N(op), "align_corners", 0) != 0,
	};
	struct ctensor t[3] = { ct_dense(s, IN(op, 0)), ct_dense(s, IN(op, 1)),
				ct_dense(s, op->out[0]) };

	if (m < 0)
		return UNSUP(s, "mode '%s'", mode);
	if (p < 0)
		return UNSUP(s, "padding_mode '%s'", pad);
	attr.mode = (uint32_t)(m > 2 ? m - 2 : m);
	attr.padding = (uint32_t)p;
	return cl_layer(s, VNPU_LAYER_GRID_SAMPLE, t, 3, &attr, sizeof(attr));
}

/*
 * MaxUnpool: zeros but where I (flat indices into the unpooled shape from
 * the kernel, strides and pads) says, which gets X: a scatter of X into
 * zeros, all viewed flat. An output_shape larger than that shape gets the
 * result in its leading corner, zeros elsewhere.
 */
static vnpu_status lower_max_unpool(struct cstate *s, struct cop *op)
{
	/* Copies: adding a temporary moves the value table. */
	const struct vnpu_tinfo yinfo = *INFO(s, op->out[0]), xinfo = *INFO(s, IN(op, 0));
	const struct vnpu_tinfo *yi = &yinfo, *xi = &xinfo;
	const struct vnpu_attr *k = vnpu_node_attr(N(op), "kernel_shape");
	const struct vnpu_attr *sa = vnpu_node_attr(N(op), "strides");
	const struct vnpu_attr *pa = vnpu_node_attr(N(op), "pads");
	struct vnpu_layer_scatter attr = { 0 };
	int64_t dd[VNPU_MAX_RANK], total = 1, n = vnpu_tinfo_elems(xi);
	int32_t sp = xi->rank - 2, z, u = op->out[0];
	bool same = true;
	struct ctensor t[4], corner;
	vnpu_status st;

	dd[0] = xi->dims[0];
	dd[1] = xi->dims[1];
	for (int32_t d = 0; d < sp; d++)
		dd[d + 2] = (xi->dims[d + 2] - 1) * (sa ? sa->ints[d] : 1) -
			    (pa ? pa->ints[d] + pa->ints[d + sp] : 0) + k->ints[d];
	for (int32_t d = 0; d < xi->rank; d++) {
		if (dd[d] > yi->dims[d])
			return UNSUP(s, "output_shape smaller than the unpooled shape");
		same &= dd[d] == yi->dims[d];
		total *= dd[d];
	}
	st = cs_add_temp(s, yi->type, 1, &total, &z);
	if (!st)
		st = cl_fill(s, ct_dense(s, z), 0);
	if (!st && !same)
		st = cs_add_temp(s, yi->type, xi->rank, dd, &u);
	if (st)
		return st;
	t[0] = ct_dense(s, z);
	t[1] = ct_shaped(s, IN(op, 1), 1, &n);
	t[2] = ct_shaped(s, IN(op, 0), 1, &n);
	t[3] = ct_shaped(s, u, 1, &total);
	st = cl_layer(s, VNPU_LAYER_SCATTER_ELEMENTS, t, 4, &attr, sizeof(attr));
	if (st || same)
		return st;
	st = cl_fill(s, ct_dense(s, op->out[0]), 0);
	if (st)
		return st;
	corner = ct_dense(s, op->out[0]);
	for (int32_t d = 0; d < xi->rank; d++)
		corner.dims[d] = dd[d];
	return cl_copy(s, corner, ct_dense(s, u));
}

/*
 * MeanVarianceNormalization as ONNX's function body: (X - E[X]) /
 * (sqrt(E[X^2] - E[X]^2) + 1e-9), the means over axes (default 0, 2, 3).
 */
static vnpu_status lower_mvn(struct cstate *s, struct cop *op)
{
	const struct vnpu_attr *axes = vnpu_node_attr(N(op), "axes");
	const struct vnpu_tinfo xinfo = *INFO(s, IN(op, 0)), *xi = &xinfo;	/* temps move the table */
	int64_t rdims[VNPU_MAX_RANK];
	uint32_t mask = 0;
	int32_t x = IN(op, 0), mean, ex2, sq, m2, var, sd, den, eps, t;
	struct vnpu_layer_act sqrt_act = { .func = VNPU_ACT_SQRT };
	vnpu_status st;

	if (axes)
		for (size_t i = 0; i < axes->n; i++)
			mask |= 1u << (axes->ints[i] < 0 ? axes->ints[i] + xi->rank : axes->ints[i]);
	else
		mask = 1u | 4u | 8u;
	for (int32_t d = 0; d < xi->rank; d++)
		rdims[d] = mask >> d & 1 ? 1 : xi->dims[d];
	/* Every step writes a temporary of its own (no layer writes its input). */
	st = cs_add_temp(s, xi->type, xi->rank, rdims, &mean);
	if (!st)
		st = cs_add_temp(s, xi->type, xi->rank, rdims, &ex2);
	if (!st)
		st = cs_add_temp(s, xi->type, xi->rank, xi->dims, &sq);
	if (!st)
		st = cs_add_temp(s, xi->type, xi->rank, rdims, &m2);
	if (!st)
		st = cs_add_temp(s, xi->type, xi->rank, rdims, &var);
	if (!st)
		st = cs_add_temp(s, xi->type, xi->rank, rdims, &sd);
	if (!st)
		st = cs_add_temp(s, xi->type, xi->rank, rdims, &den);
	if (!st)
		st = cs_add_temp(s, xi->type, xi->rank, xi->dims, &t);
	if (!st)
		st = reduce(s, VNPU_REDUCE_MEAN, x, mean, mask);
	if (!st)
		st = cl_binary(s, VNPU_BIN_MUL, x, x, sq);
	if (!st)
		st = reduce(s, VNPU_REDUCE_MEAN, sq, ex2, mask);
	if (!st)
		st = cl_binary(s, VNPU_BIN_MUL, mean, mean, m2);
	if (!st)
		st = cl_binary(s, VNPU_BIN_SUB, ex2, m2, var);
	if (!st)
		st = cl_unary(s, var, sd, &sqrt_act);
	if (!st)
		st = cl_const_scalar(s, xi->type, 1e-9, &eps);
	if (!st)
		st = cl_binary(s, VNPU_BIN_ADD, sd, eps, den);
	if (!st)
		st = cl_binary(s, VNPU_BIN_SUB, x, mean, t);
	return st ? st : cl_binary(s, VNPU_BIN_DIV, t, den, op->out[0]);
}

static vnpu_status lower_roi_align(struct cstate *s, struct cop *op)
{
	static const char *const coords[] = { "output_half_pixel", "half_pixel" };
	const struct vnpu_node *n = N(op);
	const char *coord = vnpu_attr_str(n, "coordinate_transformation_mode",
					  s->m->opset >= 16 ? "half_pixel" : "output_half_pixel");
	const char *mode = vnpu_attr_str(n, "mode", "avg");
	int64_t ratio = vnpu_attr_int(n, "sampling_ratio", 0);
	int c = str_index(coord, coords, 2);
	struct vnpu_layer_roi_align attr = {
		.spatial_scale = f32_bits(vnpu_attr_float(n, "spatial_scale", 1.0f)),
	};
	struct ctensor t[4] = { ct_dense(s, IN(op, 0)), ct_dense(s, IN(op, 1)),
				ct_dense(s, IN(op, 2)), ct_dense(s, op->out[0]) };

	if (c < 0)
		return UNSUP(s, "coordinate_transformation_mode '%s'", coord);
	if (strcmp(mode, "avg") && strcmp(mode, "max"))
		return UNSUP(s, "mode '%s'", mode);
	if (ratio < 0 || ratio > 1024)
		return UNSUP(s, "sampling_ratio %lld", (long long)ratio);
	attr.half_pixel = (uint32_t)c;
	attr.mode = !strcmp(mode, "max");
	attr.sampling_ratio = (uint32_t)ratio;
	return cl_layer(s, VNPU_LAYER_ROI_ALIGN, t, 4, &attr, sizeof(attr));
}

static vnpu_status lower_det(struct cstate *s, struct cop *op)
{
	const struct vnpu_tinfo *xi = INFO(s, IN(op, 0));
	struct ctensor t[2] = { ct_dense(s, IN(op, 0)), ct_dense(s, op->out[0]) };

	uint64_t one = 0;

	if (xi->dims[xi->rank - 1] > VNPU_DET_MAX_M)
		return UNSUP(s, "matrices of %lld x %lld: the device takes at most %d x %d",
			     (long long)xi->dims[xi->rank - 1], (long long)xi->dims[xi->rank - 1],
			     VNPU_DET_MAX_M, VNPU_DET_MAX_M);
	/* The determinant of a 0 x 0 matrix is 1 (an empty product). */
	if (!xi->dims[xi->rank - 1]) {
		vnpu_elem_set_f(&one, xi->type, 0, 1.0);
		return cl_fill(s, t[1], one);
	}
	return cl_layer(s, VNPU_LAYER_DET, t, 2, NULL, 0);
}

/* A 1-D i64 constant of @n entries of @v (NULL: all @fill). */
static vnpu_status const_i64s(struct cstate *s, const int64_t *v, size_t n, int64_t fill,
			      int32_t *out)
{
	int64_t *d = malloc(n * sizeof(int64_t)), len = (int64_t)n;

	if (!d)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	for (size_t i = 0; i < n; i++)
		d[i] = v ? v[i] : fill;
	return cs_add_const(s, VNPU_TYPE_I64, 1, &len, d, out);
}

/* TfIdfVectorizer on integer tokens: the pool and tables become constants. */
static vnpu_status lower_tfidf(struct cstate *s, struct cop *op)
{
	static const char *const modes[] = { "TF", "IDF", "TFIDF" };
	const struct vnpu_node *n = N(op);
	const struct vnpu_attr *pool = vnpu_node_attr(n, "pool_int64s");
	const struct vnpu_attr *cnt = vnpu_node_attr(n, "ngram_counts");
	const struct vnpu_attr *idx = vnpu_node_attr(n, "ngram_indexes");
	const struct vnpu_attr *w = vnpu_node_attr(n, "weights");
	int m = str_index(vnpu_attr_str(n, "mode", ""), modes, 3);
	struct vnpu_layer_tfidf attr = {
		.min_gram = (uint32_t)vnpu_attr_int(n, "min_gram_length", 0),
		.max_gram = (uint32_t)vnpu_attr_int(n, "max_gram_length", 0),
		.max_skip = (uint32_t)vnpu_attr_int(n, "max_skip_count", 0),
	};
	int32_t vp, vc, vi, vw;
	int64_t len;
	float *wd;
	vnpu_status st;
	struct ctensor t[6];

	if (m < 0)
		return UNSUP(s, "mode '%s'", vnpu_attr_str(n, "mode", ""));
	if (!pool || pool->type != VNPU_ATTR_INTS || !pool->n)
		return UNSUP(s, "no pool_int64s (string pools are not supported)");
	if (!cnt || cnt->type != VNPU_ATTR_INTS || !cnt->n || !idx || idx->type != VNPU_ATTR_INTS ||
	    (w && (w->type != VNPU_ATTR_FLOATS || w->n != idx->n)))
		return cs_fail(s, VNPU_PARSE_ERROR, "ngram_counts, ngram_indexes or weights missing or of the wrong length");
	if (vnpu_attr_int(n, "min_gram_length", 0) < 1 ||
	    vnpu_attr_int(n, "max_gram_length", 0) < vnpu_attr_int(n, "min_gram_length", 0) ||
	    vnpu_attr_int(n, "max_gram_length", 0) > (int64_t)cnt->n ||
	    vnpu_attr_int(n, "max_skip_count", 0) < 0 ||
	    vnpu_attr_int(n, "max_skip_count", 0) > INT32_MAX)
		return cs_fail(s, VNPU_PARSE_ERROR, "bad min/max_gram_length or max_skip_count");
	attr.mode = (uint32_t)m;
	st = const_i64s(s, pool->ints, pool->n, 0, &vp);
	if (!st)
		st = const_i64s(s, cnt->ints, cnt->n, 0, &vc);
	if (!st)
		st = const_i64s(s, idx->ints, idx->n, 0, &vi);
	if (st)
		return st;
	wd = malloc(idx->n * sizeof(float));
	if (!wd)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	for (size_t i = 0; i < idx->n; i++)
		wd[i] = w ? w->floats[i] : 1.0f;
	len = (int64_t)idx->n;
	st = cs_add_const(s, VNPU_TYPE_F32, 1, &len, wd, &vw);
	if (st)
		return st;
	t[0] = ct_dense(s, IN(op, 0));
	t[1] = ct_dense(s, vp);
	t[2] = ct_dense(s, vc);
	t[3] = ct_dense(s, vi);
	t[4] = ct_dense(s, vw);
	t[5] = ct_dense(s, op->out[0]);
	return cl_layer(s, VNPU_LAYER_TFIDF, t, 6, &attr, sizeof(attr));
}

/*
 * NegativeLogLikelihoodLoss (and SoftmaxCrossEntropyLoss: LogSoftmax on
 * axis 1 first): loss = -x[n, t, ...] * w[t], 0 where t is ignore_index;
 * then none, sum, or mean (divided by the sum of the weights used).
 */
static vnpu_status lower_loss(struct cstate *s, struct cop *op)
{
	const struct vnpu_tinfo xinfo = *INFO(s, IN(op, 0)), tinfo = *INFO(s, IN(op, 1));
	const struct vnpu_tinfo *xi = &xinfo, *ti = &tinfo;
	const struct vnpu_attr *ign = vnpu_node_attr(N(op), "ignore_index");
	const char *red = vnpu_attr_str(N(op), "reduction", "mean");
	vnpu_element_type ft = xi->type;
	int32_t x = IN(op, 0), t = IN(op, 1), w = IN(op, 2), mask = -1, g, loss, wt = -1, k;
	int64_t tdims[VNPU_MAX_RANK], udims[VNPU_MAX_RANK], one = 1;
	struct vnpu_layer_gather gattr = { .axis = 1 };
	struct vnpu_layer_act neg = { .func = VNPU_ACT_NEG };
	uint32_t all = (1u << ti->rank) - 1;
	struct ctensor ct[3];
	vnpu_status st = VNPU_OK;

	if (!vnpu_type_is_float(ft))
		return UNSUP(s, "input is %s", vnpu_element_type_str(ft));
	memcpy(tdims, ti->dims, sizeof(tdims));
	if (!strcmp(N(op)->op, "SoftmaxCrossEntropyLoss")) {
		struct vnpu_layer_softmax sm = { .mode = VNPU_LOG_SOFTMAX, .axis = 1 };
		int32_t lp = op->num_out > 1 ? op->out[1] : -1;

		if (lp < 0)
			st = cs_add_temp(s, ft, xi->rank, xi->dims, &lp);
		if (st)
			return st;
		ct[0] = ct_dense(s, x);
		ct[1] = ct_dense(s, lp);
		st = cl_layer(s, VNPU_LAYER_SOFTMAX, ct, 2, &sm, sizeof(sm));
		if (st)
			return st;
		x = lp;
	}
	if (ign) {
		int32_t ic, zero;

		st = cl_const_int(s, ti->type, ign->i, &ic);
		if (!st)
			st = cl_const_scalar(s, ti->type, 0, &zero);
		if (!st)
			st = cs_add_temp(s, VNPU_TYPE_BOOL, ti->rank, tdims, &mask);
		if (!st)
			st = cl_binary(s, VNPU_BIN_EQUAL, t, ic, mask);
		if (!st)
			st = cs_add_temp(s, ti->type, ti->rank, tdims, &k);
		if (!st)
			st = cl_where(s, mask, zero, t, k);
		if (st)
			return st;
		t = k;	/* ignored targets read class 0, then count 0 */
	}
	/* g[n, 0, ...] = x[n, t[n, ...], ...] */
	udims[0] = tdims[0];
	udims[1] = 1;
	for (int32_t d = 1; d < ti->rank; d++)
		udims[d + 1] = tdims[d];
	st = cs_add_temp(s, ft, ti->rank, tdims, &g);
	if (st)
		return st;
	ct[0] = ct_dense(s, x);
	ct[1] = ct_shaped(s, t, ti->rank + 1, udims);
	ct[2] = ct_shaped(s, g, ti->rank + 1, udims);
	st = cl_layer(s, VNPU_LAYER_GATHER_ELEMENTS, ct, 3, &gattr, sizeof(gattr));
	if (!st)
		st = cs_add_temp(s, ft, ti->rank, tdims, &loss);
	if (!st)
		st = cl_unary(s, g, loss, &neg);
	if (!st && w >= 0) {
		struct vnpu_layer_gather wattr = { .axis = 0 };

		st = cs_add_temp(s, ft, ti->rank, tdims, &wt);
		if (st)
			return st;
		ct[0] = ct_dense(s, w);
		ct[1] = ct_dense(s, t);
		ct[2] = ct_dense(s, wt);
		st = cl_layer(s, VNPU_LAYER_GATHER, ct, 3, &wattr, sizeof(wattr));
		if (!st)
			st = cs_add_temp(s, ft, ti->rank, tdims, &k);
		if (!st)
			st = cl_binary(s, VNPU_BIN_MUL, loss, wt, k);
		loss = k;
	}
	if (!st && mask >= 0) {
		int32_t zero, onec;

		st = cl_const_scalar(s, ft, 0, &zero);
		if (!st)
			st = cs_add_temp(s, ft, ti->rank, tdims, &k);
		if (!st)
			st = cl_where(s, mask, zero, loss, k);
		loss = k;
		/* The weights the mean divides by: 0 where ignored. */
		if (!st && wt < 0)
			st = cl_const_scalar(s, ft, 1, &onec);
		else
			onec = wt;
		if (!st)
			st = cs_add_temp(s, ft, ti->rank, tdims, &wt);
		if (!st)
			st = cl_where(s, mask, zero, onec, wt);
	}
	if (st)
		return st;
	if (!strcmp(red, "none"))
		return cl_copy(s, ct_dense(s, op->out[0]), ct_dense(s, loss));
	{
		int64_t ones[VNPU_MAX_RANK] = { [0 ... VNPU_MAX_RANK - 1] = 1 };
		struct vnpu_layer_reduce rattr = { .func = VNPU_REDUCE_SUM, .axes = all };
		int32_t sum = op->out[0], den;

		if (!strcmp(red, "mean"))
			st = cs_add_temp(s, ft, 0, NULL, &sum);
		if (st)
			return st;
		ct[0] = ct_dense(s, loss);
		ct[1] = ct_shaped(s, sum, ti->rank, ones);
		if (!st)
			st = cl_layer(s, VNPU_LAYER_REDUCE, ct, 2, &rattr, sizeof(rattr));
		if (st || strcmp(red, "mean"))
			return st;
		if (wt >= 0) {
			st = cs_add_temp(s, ft, 0, NULL, &den);
			if (st)
				return st;
			ct[0] = ct_dense(s, wt);
			ct[1] = ct_shaped(s, den, ti->rank, ones);
			st = cl_layer(s, VNPU_LAYER_REDUCE, ct, 2, &rattr, sizeof(rattr));
		} else {
			for (int32_t d = 0; d < ti->rank; d++)
				one *= tdims[d];
			st = cl_const_scalar(s, ft, (double)one, &den);
		}
		return st ? st : cl_binary(s, VNPU_BIN_DIV, sum, den, op->out[0]);
	}
}

/* Any Reduce*: its function from reduce_maps. */
static vnpu_status lower_reduce_op(struct cstate *s, struct cop *op)
{
	for (size_t i = 0; i < sizeof(reduce_maps) / sizeof(reduce_maps[0]); i++)
		if (!strcmp(N(op)->op, reduce_maps[i].op))
			return lower_reduce(s, op, reduce_maps[i].func);
	return UNSUP(s, "no device lowering for this op");
}

const struct lower_map cl_nn_maps[] = {
	{ "Gemm", lower_gemm }, { "MatMul", lower_matmul }, { "Conv", lower_conv },
	{ "ConvTranspose", lower_conv_transpose }, { "MaxPool", lower_pool },
	{ "AveragePool", lower_pool }, { "LpPool", lower_pool },
	{ "GlobalAveragePool", lower_pool }, { "GlobalMaxPool", lower_pool },
	{ "GlobalLpPool", lower_pool }, { "Softmax", lower_softmax },
	{ "LogSoftmax", lower_softmax }, { "Hardmax", lower_softmax },
	{ "BatchNormalization", lower_norm }, { "InstanceNormalization", lower_norm },
	{ "LayerNormalization", lower_norm }, { "LpNormalization", lower_norm },
	{ "LRN", lower_norm }, { "ArgMax", lower_argreduce }, { "ArgMin", lower_argreduce },
	{ "Resize", lower_resize }, { "Upsample", lower_resize }, { "Pad", lower_pad },
	{ "Gather", lower_gather }, { "GatherElements", lower_gather },
	{ "ScatterElements", lower_scatter }, { "Scatter", lower_scatter },
	{ "ScatterND", lower_scatter }, { "GatherND", lower_gather_nd },
	{ "GridSample", lower_grid_sample }, { "TfIdfVectorizer", lower_tfidf },
	{ "MaxUnpool", lower_max_unpool }, { "Det", lower_det },
	{ "MeanVarianceNormalization", lower_mvn }, { "RoiAlign", lower_roi_align },
	{ "NegativeLogLikelihoodLoss", lower_loss }, { "SoftmaxCrossEntropyLoss", lower_loss },
	{ "ReduceSum", lower_reduce_op }, { "ReduceMean", lower_reduce_op },
	{ "ReduceMax", lower_reduce_op }, { "ReduceMin", lower_reduce_op },
	{ "ReduceProd", lower_reduce_op }, { "ReduceL1", lower_reduce_op },
	{ "ReduceL2", lower_reduce_op }, { "ReduceLogSum", lower_reduce_op },
	{ "ReduceLogSumExp", lower_reduce_op }, { "ReduceSumSquare", lower_reduce_op },
};
const size_t cl_nn_num_maps = sizeof(cl_nn_maps) / sizeof(cl_nn_maps[0]);

/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The device engine: the NN layer kernels of the simulated NPU.
 *
 * Freestanding C: no libc and no kernel headers beyond the uAPI ones, so the
 * same source is built into vnpu.ko (run on tile threads between
 * kernel_fpu_begin/end) and into the runtime's CPU device (run on host
 * threads). Entry points take pointers and structs only, never float
 * arguments or float results: the rest of the kernel is built soft-float.
 *
 * A layer is split into parts: every part writes a disjoint share of the
 * outputs, so parts may run concurrently, in any order, on any thread.
 */
#ifndef _VNPU_ENGINE_H_
#define _VNPU_ENGINE_H_

#include <drm/vnpu_cmd.h>
#include <drm/vnpu_layers.h>

/* Errors are negative errno values, spelled here without errno.h. */
#define VNPU_ENG_EINVAL (-22)
#define VNPU_ENG_ENOSPC (-28)

/*
 * Capability bits of struct vnpu_eng_ctx.features, the @features of
 * vnpu_eng_layer_max_parts() and vnpu_eng_layer_scratch(). Any value is
 * taken, and all three read it alike: bits not defined here are ignored,
 * and %VNPU_ENG_F_AVX512 without %VNPU_ENG_F_AVX2_FMA is the baseline path
 * (its kernels belong to the FMA build), so scratch sized for a value fits
 * a run with it. The caller must not name what the CPU lacks.
 */
/* AVX2, FMA and F16C. */
#define VNPU_ENG_F_AVX2_FMA (1u << 0)
/*
 * AVX-512F and AVX512VL (with AVX2_FMA): a wider GEMM and convolution
 * micro-kernel, and depthwise rows in 32 ymm registers, that give the same
 * bits as AVX2_FMA alone; only a speed choice.
 */
#define VNPU_ENG_F_AVX512 (1u << 1)
/*
 * AVX512-BF16 and AVX512-BW (with AVX512 and AVX2_FMA): GEMM and CONV
 * whose weights are packed bf16 round their activations to bf16 and sum
 * pair products with vdpbf16ps (vnpu_eng_gemm_bf16_avx512.c); without it
 * such weights are widened to f32 and summed as f32 weights are, so this
 * bit changes those layers' bits (the tolerance is bf16's, 2^-8).
 */
#define VNPU_ENG_F_AVX512_BF16 (1u << 2)
/*
 * AVX512-VNNI and AVX512BW (with AVX512): the int8 convolution's tiles
 * with vpdpbusd; integer sums, so the same bits as without it.
 */
#define VNPU_ENG_F_VNNI (1u << 3)
/*
 * Not a CPU's: for vnpu_eng_layer_max_parts() alone, the caller's tiles
 * each take a run of neighbouring parts (the CPU device's), not the parts
 * in turn (the NPU's firmware); some layers then split finer at no cost.
 */
#define VNPU_ENG_F_RUNS (1u << 4)
/*
 * AVX512-FP16 (with AVX512 and AVX2_FMA): GEMM and CONV whose weights are
 * packed f16 round their activations to f16 and sum runs of
 * %ENG_F16_RUN products in f16 with vfmadd231ph, each run then added to
 * an f32 sum (vnpu_eng_gemm_f16_avx512.c); without it such weights are
 * widened to f32 and summed as f32 weights are, so this bit changes
 * those layers' bits (the tolerance is f16's).
 */
#define VNPU_ENG_F_AVX512_FP16 (1u << 5)
/*
 * AVX512-VBMI and AVX512BW (with AVX512): LOOKUP's dense rows through
 * vpermi2b, 64 bytes at a time; a table lookup, so the same bits.
 */
#define VNPU_ENG_F_VBMI (1u << 6)
/*
 * Not an extension: a core that runs each 512-bit FMA as two 256-bit
 * halves (vnpu_eng_half_zmm()), where f32 GEMM layers take the AVX2 6x16
 * tiles, faster there than the AVX-512 12x32 ones; the same bits.
 */
#define VNPU_ENG_F_HALF_ZMM (1u << 7)

/**
 * struct vnpu_eng_ctx - what the caller gives one part of a layer
 * @features: VNPU_ENG_F_* the CPU has (and the caller allows)
 * @scratch: private scratch memory for this part, at least the size
 *	vnpu_eng_layer_scratch() asked for; may be NULL when it asked for 0
 * @scratch_size: bytes at @scratch
 * @pause: when set, called with @pause_arg at points inside a part where
 *	the engine holds nothing in vector registers (between the depth
 *	slices of GEMM and CONV, every 2^14 element reads of an op whose
 *	unit is one long row): vnpu.ko may end its FPU section there,
 *	let the scheduler in and start a new one. NULL on the host.
 * @pause_arg: argument of @pause
 * @pad: zero
 * @epoch: 0, or a number that names one run of one command on this
 *	@scratch, different from every other run's there (a counter of the
 *	scratch's owner): then the engine may keep what a part copied into
 *	the scratch (a convolution's input window) for the command's next
 *	parts on it, which the caller runs with the same @epoch
 */
struct vnpu_eng_ctx {
	__u32 features;
	__u32 pad;
	void *scratch;
	__u64 scratch_size;
	void (*pause)(void *arg);
	void *pause_arg;
	__u64 epoch;
};

/**
 * vnpu_eng_dtype_size() - bytes of one element of a type; the validator
 * and the engine share it
 * @dtype: &enum vnpu_dtype
 *
 * Return: the size, or 0 when the type is unknown.
 */
__u32 vnpu_eng_dtype_size(__u32 dtype);

/**
 * vnpu_eng_layer_check() - validate a layer before it is queued
 * @op: &enum vnpu_layer_op
 * @t: the layer's tensor descriptors (slot bounds are checked by the caller)
 * @num_tensors: entries in @t
 * @attrs: the op's attribute struct
 * @attr_size: bytes at @attrs
 *
 * Checks everything the op needs: tensor count, dtypes, ranks, that the
 * shapes agree with each other and with the attributes, and every
 * attribute field (flags and pads zero).
 *
 * Return: 0, or %VNPU_ENG_EINVAL.
 */
int vnpu_eng_layer_check(__u32 op, const struct vnpu_cmd_tensor *t,
			 __u32 num_tensors, const void *attrs, __u32 attr_size);

/**
 * vnpu_eng_layer_outputs() - how many tensors, at the end, a layer writes
 * @op: &enum vnpu_layer_op
 *
 * A stream's layer command names at least these as its outputs, so that
 * the validator checks that their slots are writable and alias nothing.
 *
 * Return: 3 for %VNPU_LAYER_LSTM (Y, Y_h, Y_c), else 1.
 */
__u32 vnpu_eng_layer_outputs(__u32 op);

/**
 * vnpu_eng_layer_cost() - rough work of a checked layer
 * @op: &enum vnpu_layer_op
 * @t: the layer's tensor descriptors
 * @num_tensors: entries in @t
 * @attrs: the op's attribute struct
 *
 * Callers size the parts from it.
 *
 * Return: the work in element operations (about a flop each).
 */
__u64 vnpu_eng_layer_cost(__u32 op, const struct vnpu_cmd_tensor *t,
			  __u32 num_tensors, const void *attrs);

/**
 * vnpu_eng_layer_part_cost() - vnpu_eng_layer_cost() as the engine runs
 * the layer with @features, for sizing its parts
 * @op: &enum vnpu_layer_op
 * @t: the layer's tensor descriptors
 * @num_tensors: entries in @t
 * @attrs: the op's attribute struct
 * @features: %VNPU_ENG_F_* of the engine that runs it
 *
 * A GEMM or CONV whose products run on the AVX512-BF16 kernels (packed
 * bf16 weights the engine takes there) counts half: those kernels do
 * twice f32's multiply-adds in a cycle, so a part of the same cost is as
 * long as an f32 one. Every other layer counts vnpu_eng_layer_cost().
 *
 * Return: the work in element operations of the f32 kernels.
 */
__u64 vnpu_eng_layer_part_cost(__u32 op, const struct vnpu_cmd_tensor *t,
			       __u32 num_tensors, const void *attrs,
			       __u32 features);

/**
 * vnpu_eng_layer_max_parts() - the most parts a checked layer splits into
 * @op: &enum vnpu_layer_op
 * @t: the layer's tensor descriptors
 * @num_tensors: entries in @t
 * @attrs: the op's attribute struct
 * @features: the &struct vnpu_eng_ctx features of vnpu_eng_layer_run()
 *
 * The baseline kernels (no %VNPU_ENG_F_AVX2_FMA) split GEMM and CONV into
 * 256 times smaller units, so that a part stays about as short as on the
 * FMA paths.
 *
 * Return: the number of parts, at least 1.
 */
__u32 vnpu_eng_layer_max_parts(__u32 op, const struct vnpu_cmd_tensor *t,
			       __u32 num_tensors, const void *attrs,
			       __u32 features);

/**
 * vnpu_eng_layer_scratch() - scratch bytes each part of a checked layer needs
 * @op: &enum vnpu_layer_op
 * @t: the layer's tensor descriptors
 * @num_tensors: entries in @t
 * @attrs: the op's attribute struct
 * @num_parts: the parts the layer is split into
 * @features: the &struct vnpu_eng_ctx features of vnpu_eng_layer_run()
 *
 * Bounded: a checked layer never asks for more than about 1 GiB, and never
 * for more on the baseline path than on the AVX-512 one.
 *
 * Return: the bytes, 0 when the layer needs none.
 */
__u64 vnpu_eng_layer_scratch(__u32 op, const struct vnpu_cmd_tensor *t,
			     __u32 num_tensors, const void *attrs,
			     __u32 num_parts, __u32 features);

/**
 * vnpu_eng_layer_run() - run one part of a checked layer
 * @op: &enum vnpu_layer_op
 * @t: the layer's tensor descriptors
 * @num_tensors: entries in @t
 * @data: for each tensor, the address of its element [0, ..., 0]
 * @attrs: the op's attribute struct
 * @part: the part to run, below @num_parts
 * @num_parts: the parts the layer is split into
 * @ctx: features, scratch and pause point of this part
 *
 * Any @num_parts works (parts past the layer's units do nothing), and the
 * outputs have the same bits however the layer is split; @ctx->features
 * chooses the kernel build and the units, and only the same features give
 * the same bits (%VNPU_ENG_F_AVX512 aside: it changes the speed only;
 * GEMM and CONV give the same bits on every path).
 *
 * Return: 0; %VNPU_ENG_EINVAL for a bad op, part or context, or a
 * data-dependent fault (a Gather index out of range); %VNPU_ENG_ENOSPC
 * when @ctx->scratch_size is below vnpu_eng_layer_scratch() for
 * @ctx->features.
 */
int vnpu_eng_layer_run(__u32 op, const struct vnpu_cmd_tensor *t,
		       void *const *data, __u32 num_tensors, const void *attrs,
		       __u32 part, __u32 num_parts,
		       const struct vnpu_eng_ctx *ctx);

/**
 * struct vnpu_eng_transpose - a block of 4-byte elements to transpose
 * @dst: element (r, c) goes to @dst + r * @dst_row + c
 * @src: element (r, c) comes from @src + r + c * @src_col
 * @rows: rows of the block
 * @cols: columns of the block
 * @dst_row: the destination's row stride, in elements
 * @src_col: the source's column stride, in elements
 *
 * The elements are moved as bits (any 4-byte type); the two ranges must
 * not overlap.
 */
struct vnpu_eng_transpose {
	void *dst;
	const void *src;
	__u64 rows;
	__u64 cols;
	__s64 dst_row;
	__s64 src_col;
};

/**
 * vnpu_eng_transpose32() - move a block of 4-byte elements in cache-sized
 * tiles
 * @t: the block
 * @features: VNPU_ENG_F_* choosing the kernel build's vector shuffles
 *
 * For COPY commands whose source runs across the destination's rows
 * (Transpose, a layout change).
 */
void vnpu_eng_transpose32(const struct vnpu_eng_transpose *t, __u32 features);

/**
 * vnpu_eng_packed_size() - elements of a packed weight tensor
 * @layout: &enum vnpu_pack_layout
 * @groups: %VNPU_PACK_CONV_W, %VNPU_PACK_QCONV_W, %VNPU_PACK_QCONV_SPLIT:
 *	the conv's groups; %VNPU_PACK_GEMM_B: 1
 * @rows: rows of one group's matrix (K of GEMM's B; M/group of CONV's W)
 * @cols: its columns (N of GEMM's B; C/group * KH * KW of CONV's W)
 *
 * Return: the size in f32 elements (in bytes for %VNPU_PACK_QCONV_W,
 * %VNPU_PACK_QCONV_SPLIT, %VNPU_PACK_QWINO_W and %VNPU_PACK_QW4_W), or 0
 * for a bad layout or an overflow.
 */
__u64 vnpu_eng_packed_size(__u32 layout, __u64 groups, __u64 rows,
			   __u64 cols);

/**
 * vnpu_eng_pack() - pack row-major f32 weights for GEMM or CONV (i8 ones
 * for QLINEAR_CONV)
 * @layout: &enum vnpu_pack_layout
 * @src: @groups matrices of @rows x @cols f32, row-major and dense
 * @groups: see vnpu_eng_packed_size()
 * @rows: see vnpu_eng_packed_size()
 * @cols: see vnpu_eng_packed_size()
 * @dst: vnpu_eng_packed_size() f32 elements (layouts in vnpu_layers.h)
 *
 * Integer moves only: callable anywhere, done by the runtime at compile
 * time. %VNPU_PACK_WINO_W is vnpu_eng_wino_pack()'s, %VNPU_PACK_QW4_W
 * vnpu_eng_qw4_pack()'s.
 *
 * Return: 0, or %VNPU_ENG_EINVAL for a bad layout or size.
 */
int vnpu_eng_pack(__u32 layout, const void *src, __u64 groups, __u64 rows,
		  __u64 cols, void *dst);

/**
 * vnpu_eng_qw4_pack() - pack a QLINEAR_CONV's i8 3x3 weights as
 * %VNPU_PACK_QW4_W
 * @src: W [@rows, @cols / 9, 3, 3] of one group, row-major and dense
 * @wz: the weight zero points, one (@nwz 1) or one per row (@nwz @rows)
 * @nwz: 1 or @rows
 * @rows: output channels, a multiple of 16
 * @cols: input channels times 9
 * @dst: vnpu_eng_packed_size(%VNPU_PACK_QW4_W, 1, @rows, @cols) bytes
 *
 * Integer arithmetic only, as vnpu_eng_pack().
 *
 * Return: 0, or %VNPU_ENG_EINVAL for a bad size or count of zero points.
 */
int vnpu_eng_qw4_pack(const __s8 *src, const __s8 *wz, __u64 nwz, __u64 rows,
		      __u64 cols, void *dst);

/**
 * vnpu_eng_pair_bf16() - put packed bf16 weights in depth pairs
 * @layout: &enum vnpu_pack_layout
 * @groups: see vnpu_eng_packed_size()
 * @rows: see vnpu_eng_packed_size()
 * @cols: see vnpu_eng_packed_size()
 * @packed: vnpu_eng_packed_size() bf16 elements, as vnpu_eng_pack() lays
 *	them out, rearranged in place
 *
 * Packed bf16 weights are stored in depth pairs (see vnpu_layers.h): in
 * each panel of width w (%VNPU_PACK_NR, or %VNPU_PACK_MR) and depth K,
 * element (k, x) moves to (k / 2) * 2 * w + 2 * x + k % 2 for k below
 * K rounded down to even; an odd K's last depth stays a plain row. Integer
 * moves only, as vnpu_eng_pack().
 *
 * Return: 0, or %VNPU_ENG_EINVAL for a bad layout or size.
 */
int vnpu_eng_pair_bf16(__u32 layout, __u64 groups, __u64 rows, __u64 cols,
		       void *packed);

/* CPU vendors for vnpu_eng_bf16_pays(). */
#define VNPU_ENG_VENDOR_OTHER	0
#define VNPU_ENG_VENDOR_INTEL	1
#define VNPU_ENG_VENDOR_AMD	2

/**
 * vnpu_eng_bf16_pays() - whether %VNPU_ENG_F_AVX512_BF16 is faster than
 * widening on a CPU that has AVX512-BF16
 * @vendor: VNPU_ENG_VENDOR_*
 * @family: CPUID's family (extended family added)
 * @model: CPUID's model (extended model in the high nibble)
 *
 * A rule on the core, never a timing: the same bits every run on one
 * machine. vdpbf16ps sums two products per lane; it pays where it issues
 * at least half as often as vfmadd231ps. AMD's Zen 4 and Zen 5 (family
 * 0x19 and later) do; Intel's cores (Cooper Lake to Granite Rapids) issue
 * it on one port, a quarter as often (Emerald Rapids: 1.72 TSC cycles
 * against 0.42), so the f32 kernels on widened weights win there; other
 * vendors widen until measured.
 *
 * Return: 1 if the AVX512-BF16 kernels pay, else 0.
 */
int vnpu_eng_bf16_pays(__u32 vendor, __u32 family, __u32 model);

/**
 * vnpu_eng_half_zmm() - whether a core with AVX-512 gets
 * %VNPU_ENG_F_HALF_ZMM
 * @vendor: VNPU_ENG_VENDOR_*
 * @family: CPUID's family (extended family added)
 * @model: CPUID's model (extended model in the high nibble)
 *
 * A rule on the core, as vnpu_eng_bf16_pays(): AMD's Zen 4 (family 0x19)
 * issues vfmadd231ps zmm at half the rate of the ymm form, so the 12x32
 * tiles have the 6x16 ones' multiply-adds a cycle and pay the more rows
 * of A they keep in L1 (BERT-base's GEMMs, vnpu-kbench on 2 threads:
 * 128 x 768 x 3072 at 91.2% of the FMA peak against 94.1%). Zen 5 and
 * Intel's cores run zmm at full width, where the 12x32 tiles win.
 *
 * Return: 1 if the f32 GEMM takes the AVX2 tiles, else 0.
 */
int vnpu_eng_half_zmm(__u32 vendor, __u32 family, __u32 model);

/**
 * vnpu_eng_host_features() - the %VNPU_ENG_F_* bits of the CPU running the
 * caller; host builds only (the kernel uses boot_cpu_has())
 *
 * Return: the bits.
 */
#ifndef __KERNEL__
__u32 vnpu_eng_host_features(void);

/**
 * vnpu_eng_bf16_min_depth() - the least depth per output (input channels
 * per group times the kernel's taps) of a CONV that takes the bf16 hint's
 * bf16 weights where the AVX512-BF16 kernels run; host builds only
 * @vendor: VNPU_ENG_VENDOR_*
 * @family: CPUID's family (extended family added)
 * @model: CPUID's model (extended model in the high nibble)
 *
 * A shallower one rounds each column of activations to bf16 for too few
 * pair products and keeps its f32 weights. A rule on the core, as
 * vnpu_eng_bf16_pays(): 4 on AMD's Zen 4, whose vdpbf16ps runs at twice
 * the f32 FMA's rate, else 32.
 *
 * Return: the depth.
 */
__u32 vnpu_eng_bf16_min_depth(__u32 vendor, __u32 family, __u32 model);

/**
 * vnpu_eng_host_bf16_min_depth() - vnpu_eng_bf16_min_depth() of the CPU
 * running the caller; host builds only
 *
 * Return: the depth (32 where CPUID does not tell the core).
 */
__u32 vnpu_eng_host_bf16_min_depth(void);

/**
 * vnpu_eng_wino_pays() - whether a CONV runs faster as Winograd F(4x4,
 * 3x3) on f32 weights (then the compiler sets %VNPU_LAYER_F_WINO); host
 * builds only
 * @a: its attributes (the flags are not looked at)
 * @x: its X
 * @y: its Y
 *
 * Return: 1 or 0.
 */
int vnpu_eng_wino_pays(const struct vnpu_layer_conv *a,
		       const struct vnpu_cmd_tensor *x, const struct vnpu_cmd_tensor *y);

/**
 * vnpu_eng_wino2_pays() - whether a CONV of f32 X and W runs faster on
 * this host as Winograd F(2x2, 3x3) on f32 U (then the compiler sets
 * %VNPU_LAYER_F_WINO2 over f32 %VNPU_PACK_WINO2_W); host builds only
 * @a: its attributes (the flags are not looked at)
 * @x: its X
 * @y: its Y
 *
 * Return: 1 or 0.
 */
int vnpu_eng_wino2_pays(const struct vnpu_layer_conv *a,
			const struct vnpu_cmd_tensor *x,
			const struct vnpu_cmd_tensor *y);

/**
 * vnpu_eng_qwino_pays() - whether a QLINEAR_CONV over i8 weights whose zero
 * points are 0 runs faster on this host as integer Winograd F(2x2, 3x3)
 * (then the compiler packs them as %VNPU_PACK_QWINO_W and sets
 * %VNPU_LAYER_F_QWINO); host builds only
 * @a: its attributes (the flags are not looked at)
 * @x: its X
 * @y: its Y
 *
 * Return: 1 or 0.
 */
int vnpu_eng_qwino_pays(const struct vnpu_layer_conv *a,
			const struct vnpu_cmd_tensor *x,
			const struct vnpu_cmd_tensor *y);

/**
 * vnpu_eng_qw4_pays() - whether a packed QLINEAR_CONV over i8 weights runs
 * faster on this host as integer Winograd F(4x4, 3x3) over U made once
 * (then the compiler packs them as %VNPU_PACK_QW4_W and sets
 * %VNPU_LAYER_F_QW4); host builds only
 * @a: its attributes (the flags are not looked at)
 * @x: its X
 * @y: its Y
 *
 * Return: 1 or 0.
 */
int vnpu_eng_qw4_pays(const struct vnpu_layer_conv *a,
		      const struct vnpu_cmd_tensor *x,
		      const struct vnpu_cmd_tensor *y);

/**
 * vnpu_eng_lanes_pays() - whether a CONV runs faster on this host with
 * its output channels on the lanes (then the compiler packs its f32 W as
 * %VNPU_PACK_CONV_LANES and sets %VNPU_LAYER_F_LANES); host builds only
 * @a: its attributes (the flags are not looked at)
 * @x: its X
 * @y: its Y
 *
 * Return: 1 or 0.
 */
int vnpu_eng_lanes_pays(const struct vnpu_layer_conv *a,
			const struct vnpu_cmd_tensor *x,
			const struct vnpu_cmd_tensor *y);

/**
 * vnpu_eng_wino_pack() - transform f32 3x3 weights for Winograd
 * (%VNPU_PACK_WINO_W); host builds only: float arithmetic, done by the
 * runtime at compile time, with the engine's own code, so that every
 * device reads the same weights
 * @src: @groups matrices of @rows x @cols f32, row-major and dense (W)
 * @groups: the conv's groups
 * @rows: M/group
 * @cols: C/group * 9
 * @dst: vnpu_eng_packed_size(%VNPU_PACK_WINO_W, ...) f32 elements
 *
 * Return: 0, or %VNPU_ENG_EINVAL for a bad size.
 */
int vnpu_eng_wino_pack(const float *src, __u64 groups, __u64 rows,
		       __u64 cols, float *dst);

/**
 * vnpu_eng_wino2_pack() - transform 3x3 weights for Winograd F(2x2, 3x3)
 * (%VNPU_PACK_WINO2_W, in f32: the compiler then rounds them to bf16 and
 * pairs their depths, vnpu_eng_pair_bf16()); host builds only, as
 * vnpu_eng_wino_pack()
 * @src: @groups matrices of @rows x @cols f32, row-major and dense (W)
 * @groups: the conv's groups
 * @rows: M/group
 * @cols: C/group * 9
 * @dst: vnpu_eng_packed_size(%VNPU_PACK_WINO2_W, ...) f32 elements
 *
 * Return: 0, or %VNPU_ENG_EINVAL for a bad size.
 */
int vnpu_eng_wino2_pack(const float *src, __u64 groups, __u64 rows,
			__u64 cols, float *dst);

/**
 * vnpu_eng_wino42_pack() - transform 3x3 weights for Winograd F(4x2, 3x3)
 * (%VNPU_PACK_WINO42_W, in f32), as vnpu_eng_wino2_pack()
 * @src: @groups matrices of @rows x @cols f32, row-major and dense (W)
 * @groups: the conv's groups
 * @rows: M/group
 * @cols: C/group * 9
 * @dst: vnpu_eng_packed_size(%VNPU_PACK_WINO42_W, ...) f32 elements
 *
 * Return: 0, or %VNPU_ENG_EINVAL for a bad size.
 */
int vnpu_eng_wino42_pack(const float *src, __u64 groups, __u64 rows,
			 __u64 cols, float *dst);

/**
 * vnpu_eng_host_alloc() - zeroed, 64-byte aligned memory for tensors and
 * scratch the engine works on; host builds only
 * @size: bytes
 *
 * From %VNPU_ENG_HOST_HUGE bytes on it is mapped on a 2 MiB boundary and
 * asks for transparent huge pages, and its pages are zero until written:
 * the packed GEMM panels then miss the TLB far less (GEMM 1024^3 on the
 * AVX-512 path gains about 5 points of the FMA peak, vnpu-kbench).
 *
 * Return: the memory, freed with vnpu_eng_host_free() and the same @size,
 * or NULL.
 */
void *vnpu_eng_host_alloc(__u64 size);
void vnpu_eng_host_free(void *mem, __u64 size);
#define VNPU_ENG_HOST_HUGE (2ull << 20)

/**
 * vnpu_eng_host_reserve() - address space for up to @size bytes; host
 * builds only
 * @size: bytes, at least %VNPU_ENG_HOST_HUGE
 *
 * Mapped as vnpu_eng_host_alloc() maps a huge allocation, zero, but with
 * nothing committed until written (MAP_NORESERVE): a producer whose final
 * size is not known yet writes into it in place. vnpu_eng_host_trim() then
 * returns the pages past what it kept.
 *
 * Return: the memory, freed with vnpu_eng_host_free() and the same @size
 * (or the @keep of a trim), or NULL for a smaller @size or when the
 * system refuses.
 */
void *vnpu_eng_host_reserve(__u64 size);

/**
 * vnpu_eng_host_trim() - keep the start of a reservation
 * @mem: from vnpu_eng_host_reserve(@size)
 * @size: the reservation's size
 * @keep: bytes to keep, at least %VNPU_ENG_HOST_HUGE
 *
 * Afterwards @mem is what vnpu_eng_host_alloc(@keep) would have given,
 * freed with vnpu_eng_host_free(@mem, @keep).
 */
void vnpu_eng_host_trim(void *mem, __u64 size, __u64 keep);

/**
 * vnpu_eng_host_scratch_size() - what to allocate for a tile's scratch of
 * @size bytes: from 64 KiB on, a whole huge page at least. The packed
 * GEMM panels live there; in huge pages GEMM 1024^3 gains about another
 * 7 points of the AVX-512 peak, for at most 2 MiB per tile.
 * @size: bytes the layer needs (vnpu_eng_layer_scratch())
 *
 * Return: the bytes to allocate, at least @size.
 */
__u64 vnpu_eng_host_scratch_size(__u64 size);
#endif

#endif /* _VNPU_ENGINE_H_ */

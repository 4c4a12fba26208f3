// SPDX-License-Identifier: GPL-2.0 OR MIT
/**
 * DOC: vnpu engine entry points
 *
 * The dispatch of a layer's part to the float kernels of the build the
 * CPU can run (vnpu_eng_kern.c's op table, one built for AVX2+FMA and one
 * for baseline x86-64, vnpu_eng_isa.h), and the tensor helpers both
 * halves of the engine use. The rest of the integer half:
 * vnpu_eng_check.c (a layer's checks), vnpu_eng_units.c (its cost, units,
 * parts and scratch) and vnpu_eng_pack.c (weight packing). No float arithmetic here: in vnpu.ko
 * these functions run outside kernel_fpu_begin/end.
 */
#include "vnpu_eng_priv.h"

__u32 vnpu_eng_dtype_size(__u32 dtype)
{
	switch (dtype) {
	case VNPU_DTYPE_U8:
	case VNPU_DTYPE_I8:
	case VNPU_DTYPE_BOOL:
		return 1;
	case VNPU_DTYPE_U16:
	case VNPU_DTYPE_I16:
	case VNPU_DTYPE_F16:
	case VNPU_DTYPE_BF16:
		return 2;
	case VNPU_DTYPE_F32:
	case VNPU_DTYPE_I32:
	case VNPU_DTYPE_U32:
		return 4;
	case VNPU_DTYPE_I64:
	case VNPU_DTYPE_F64:
	case VNPU_DTYPE_U64:
		return 8;
	default:
		return 0;
	}
}

__u64 vnpu_eng_numel(const struct vnpu_cmd_tensor *t)
{
	__u64 n = 1;
	__u32 d;

	for (d = 0; d < t->rank; d++)
		n *= t->dims[d];
	return n;
}

void vnpu_eng_bcast_strides(const struct vnpu_cmd_tensor *in,
			    const struct vnpu_cmd_tensor *out, __s64 *strides)
{
	__u32 off = out->rank - in->rank, d;

	for (d = 0; d < out->rank; d++) {
		if (d < off || (in->dims[d - off] == 1 && out->dims[d] != 1))
			strides[d] = 0;
		else
			strides[d] = in->strides[d - off];
	}
}

int vnpu_eng_layer_run(__u32 op, const struct vnpu_cmd_tensor *t,
		       void *const *data, __u32 num_tensors, const void *attrs,
		       __u32 part, __u32 num_parts,
		       const struct vnpu_eng_ctx *ctx)
{
	const struct eng_kernels *k = &vnpu_eng_kernels_base;
	struct eng_layer l = { op, t, data, num_tensors, attrs };
	__u64 units, begin, end;

	if (op == VNPU_LAYER_INVALID || op > VNPU_LAYER_OP_LAST || !num_parts ||
	    part >= num_parts || !ctx)
		return VNPU_ENG_EINVAL;
	if (vnpu_eng_layer_scratch(op, t, num_tensors, attrs, num_parts,
				   ctx->features) > ctx->scratch_size)
		return VNPU_ENG_ENOSPC;
	if (!eng_base_path(ctx->features))
		k = &vnpu_eng_kernels_avx2;
	units = vnpu_eng_units(&l, ctx->features);
	begin = units * part / num_parts;
	end = units * (part + 1) / num_parts;
	if (begin >= end)
		return 0;
	return k->run[op](&l, begin, end, ctx);
}

void vnpu_eng_transpose32(const struct vnpu_eng_transpose *t, __u32 features)
{
	if (eng_base_path(features))
		vnpu_eng_kernels_base.transpose32(t);
	else
		vnpu_eng_kernels_avx2.transpose32(t);
}

int vnpu_eng_bf16_pays(__u32 vendor, __u32 family, __u32 model)
{
	/* Every AMD core with AVX512-BF16 is Zen 4 or later. */
	(void)model;
	return vendor == VNPU_ENG_VENDOR_AMD && family >= 0x19;
}

int vnpu_eng_half_zmm(__u32 vendor, __u32 family, __u32 model)
{
	(void)model;
	return vendor == VNPU_ENG_VENDOR_AMD && family == 0x19;
}

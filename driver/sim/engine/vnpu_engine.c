// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Placeholder until the engine lands: no layer op is valid yet.
 */
#include "vnpu_engine.h"

int vnpu_eng_layer_check(__u32 op, const struct vnpu_tensor *t,
			 __u32 num_tensors, const void *attrs, __u32 attr_size)
{
	return VNPU_ENG_EINVAL;
}

__u64 vnpu_eng_layer_cost(__u32 op, const struct vnpu_tensor *t,
			  __u32 num_tensors, const void *attrs)
{
	return 0;
}

__u32 vnpu_eng_layer_max_parts(__u32 op, const struct vnpu_tensor *t,
			       __u32 num_tensors, const void *attrs)
{
	return 1;
}

__u64 vnpu_eng_layer_scratch(__u32 op, const struct vnpu_tensor *t,
			     __u32 num_tensors, const void *attrs,
			     __u32 num_parts)
{
	return 0;
}

int vnpu_eng_layer_run(__u32 op, const struct vnpu_tensor *t,
		       void *const *data, __u32 num_tensors, const void *attrs,
		       __u32 part, __u32 num_parts,
		       const struct vnpu_eng_ctx *ctx)
{
	return VNPU_ENG_EINVAL;
}

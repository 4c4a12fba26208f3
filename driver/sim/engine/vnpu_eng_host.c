// SPDX-License-Identifier: GPL-2.0 OR MIT
/* Host builds only: the CPU features the engine may use here. */
#include "vnpu_engine.h"

__u32 vnpu_eng_host_features(void)
{
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
		return VNPU_ENG_F_AVX2_FMA;
	return 0;
}

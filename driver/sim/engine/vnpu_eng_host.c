// SPDX-License-Identifier: GPL-2.0 OR MIT
/* Host builds only: the CPU features the engine may use here. */
#include "vnpu_engine.h"

__u32 vnpu_eng_host_features(void)
{
	__builtin_cpu_init();
	if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma"))
		return 0;
	/* libgcc checks that the OS saves the ZMM state too. */
	if (__builtin_cpu_supports("avx512f"))
		return VNPU_ENG_F_AVX2_FMA | VNPU_ENG_F_AVX512;
	return VNPU_ENG_F_AVX2_FMA;
}

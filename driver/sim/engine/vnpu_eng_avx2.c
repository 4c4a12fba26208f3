// SPDX-License-Identifier: GPL-2.0 OR MIT
/* The float kernels for CPUs with AVX2 and FMA (built with -mavx2 -mfma). */
#define ENG_FMA 1
#define ENG_TABLE vnpu_eng_kernels_avx2
#include "vnpu_eng_kern.c"

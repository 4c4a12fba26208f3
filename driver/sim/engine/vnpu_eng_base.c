// SPDX-License-Identifier: GPL-2.0 OR MIT
/* The float kernels for any x86-64 CPU (SSE2 only). */
#define ENG_TABLE vnpu_eng_kernels_base
#include "vnpu_eng_kern.c"

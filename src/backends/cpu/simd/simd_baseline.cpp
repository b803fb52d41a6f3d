// The SIMD leaf kernels for x86-64 baseline (SSE2), no extra flags: runs on any x86-64.
#define TL_SIMD_TARGET baseline
#define TL_SIMD_LEVEL 0
#include "tensorlet/backends/cpu/simd/simd_kernels_impl.h"

// The SIMD leaf kernels for AVX2 + FMA (-mavx2 -mfma).
#define TL_SIMD_TARGET avx2
#define TL_SIMD_LEVEL 1
#include "tensorlet/backends/cpu/simd/simd_kernels_impl.h"

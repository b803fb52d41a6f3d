// The SIMD leaf kernels for AVX-512 F/DQ/VL/BW (-mavx512f -mavx512dq -mavx512vl -mavx512bw -mfma
// -mavx2).
#define TL_SIMD_TARGET avx512
#define TL_SIMD_LEVEL 2
#include "tensorlet/backends/cpu/simd/simd_kernels_impl.h"

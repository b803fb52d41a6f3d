// The unit roundoff of each dtype, shared by the tests' rounding bounds and the fuzzer's reference.
#pragma once

#include <tensorlet/tensorlet.h>

namespace tl_test {

// The unit roundoff u of a floating dtype under round to nearest: half an ulp of 1, 2^-p for p
// significant bits (float16 11, bfloat16 8, float32 24, float64 53); 0 for the exact dtypes.
inline double unit_roundoff(tensorlet::DType d) {
  switch (d) {
    case tensorlet::kFloat16:
      return 0x1.0p-11;
    case tensorlet::kBFloat16:
      return 0x1.0p-8;
    case tensorlet::kFloat32:
      return 0x1.0p-24;
    case tensorlet::kFloat64:
      return 0x1.0p-53;
    default:
      return 0;
  }
}

}  // namespace tl_test

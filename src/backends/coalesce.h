// coalesce_dims: the one routine that simplifies the geometry of N same-shape operands for a
// kernel (CPU strided loops and CUDA indexers alike).
#pragma once

#include <cstdint>

#include "tensorlet/tensor/shape.h"

namespace tensorlet {

// Drops dims of extent 1 and merges a dim into the next outer one when every operand steps over
// the pair as if it were one dim (outer stride == inner stride * inner extent), so a contiguous
// operand set becomes one dim. sizes[nd] and strides[k][nd] (any unit, per operand) in; the kept
// dims, outermost first, out; returns their count (0 for a single element).
template <int N>
int coalesce_dims(int64_t nd, const int64_t* sizes, const int64_t (&strides)[N][kMaxDims],
                  int64_t* out_sizes, int64_t (&out_strides)[N][kMaxDims]) {
  int out = 0;
  for (int64_t d = 0; d < nd; ++d) {
    if (sizes[d] == 1) continue;
    bool merge = out > 0;
    for (int k = 0; k < N && merge; ++k)
      merge = out_strides[k][out - 1] == strides[k][d] * sizes[d];
    if (merge) {
      out_sizes[out - 1] *= sizes[d];
      for (int k = 0; k < N; ++k) out_strides[k][out - 1] = strides[k][d];
    } else {
      out_sizes[out] = sizes[d];
      for (int k = 0; k < N; ++k) out_strides[k][out] = strides[k][d];
      ++out;
    }
  }
  return out;
}

}  // namespace tensorlet

// How softmax kernels see a contiguous tensor: [outer, n, inner], rows of n elements along the
// softmax dim at stride inner (1 when the dim is the last one that is not of extent 1).
#pragma once

#include <cstdint>

#include "tensorlet/tensor/shape.h"

namespace tensorlet {

struct SoftmaxRows {
  int64_t outer = 1, n = 1, inner = 1;
};

// A 0-dim tensor is one row of one element (dim 0).
inline SoftmaxRows softmax_rows(const Shape& shape, int64_t dim) {
  SoftmaxRows r;
  if (shape.size() == 0) return r;
  for (int64_t d = 0; d < dim; ++d) r.outer *= shape[d];
  r.n = shape[dim];
  for (int64_t d = dim + 1; d < shape.size(); ++d) r.inner *= shape[d];
  return r;
}

}  // namespace tensorlet

// The hook through which this layer's views reach autograd (src/autograd, a higher layer), set as
// the library loads, as the profiler's op hooks are.
#pragma once

#include <cstdint>
#include <vector>

#include "tensorlet/tensor/grad_mode.h"

namespace tensorlet {

class Tensor;

namespace autograd {

// The view and shape ops whose gradient takes the inverse path back to the input.
enum class ViewKind : uint8_t {
  Reshape,
  View,
  Transpose,
  Permute,
  Unsqueeze,
  Squeeze,
  Expand,
  T,
  Select,
  Slice,
  AsStrided
};

namespace detail {
// Records out = view(x) when x requires grad in grad mode (a no-op otherwise). d0, d1: the dims
// or the select index / slice start and step, as the kind says; dims: permute's order.
using RecordView = void (*)(ViewKind kind, const Tensor& x, const Tensor& out, int64_t d0,
                            int64_t d1, int64_t d2, const std::vector<int64_t>& dims);
inline RecordView g_record_view = nullptr;
}  // namespace detail

}  // namespace autograd
}  // namespace tensorlet

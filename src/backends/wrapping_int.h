// Wide<T>: the type integer arithmetic runs in so that overflow wraps as in PyTorch (signed
// overflow is undefined in C++; the unsigned type of the same size wraps in two's complement).
// Shared by the CPU and CUDA kernels; other types map to themselves.
#pragma once

#include <cstdint>

namespace tensorlet {

template <typename T>
struct WideOf {
  using type = T;
};
template <>
struct WideOf<int32_t> {
  using type = uint32_t;
};
template <>
struct WideOf<int64_t> {
  using type = uint64_t;
};
template <typename T>
using Wide = typename WideOf<T>::type;

}  // namespace tensorlet

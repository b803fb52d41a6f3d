// The reduction ops of cuda_reduce.cu as functors (device code, and host for tests): accumulator,
// identity, how an input value (step) and another accumulator (combine) fold in, and the output
// conversion (finalize). Values follow the CPU backend (cpu_reduce.cpp); combine is commutative,
// so any tree order is exact for max/min/all/any/arg ops, and a fixed tree keeps float sums stable.
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "core/convert.h"

namespace tensorlet::cuda::reduction {

template <typename T>
__host__ __device__ __forceinline__ bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>)
    return v != v;
  else
    return false;
}

// Integer sums and products wrap (as the CPU's and torch's int64 do) instead of overflowing.
__host__ __device__ __forceinline__ int64_t wrap_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
__host__ __device__ __forceinline__ int64_t wrap_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

// Float sums accumulate in their own type (as PyTorch's CUDA kernels do); bool and ints in int64.
template <typename T>
using WideAcc = std::conditional_t<std::is_floating_point_v<T>, T, int64_t>;

// Each op reads its input elements as In, which is Stored<T>: a bool as its byte, any non-zero
// byte true (core/convert.h), as loading a byte other than 0/1 as a bool is undefined.
// Each op also names `Partial`: the op that folds accumulators of the first pass of a split
// reduction (its In is this op's Acc). Ops with the same accumulator share one, so split
// reductions do not double the kernels compiled.
template <typename T, bool kProd>
struct ArithmeticOp {
  using In = Stored<T>;
  using Acc = WideAcc<T>;
  using Out = Acc;
  using Partial = ArithmeticOp<Acc, kProd>;
  static __host__ __device__ __forceinline__ Acc identity() { return Acc(kProd ? 1 : 0); }
  static __host__ __device__ __forceinline__ Acc combine(Acc a, Acc b) {
    if constexpr (std::is_floating_point_v<Acc>)
      return kProd ? a * b : a + b;
    else
      return kProd ? wrap_mul(a, b) : wrap_add(a, b);
  }
  static __host__ __device__ __forceinline__ Acc step(Acc a, In v, int64_t) {
    return combine(a, static_cast<Acc>(from_stored<T>(v)));
  }
  // mean_divisor > 0 turns a float sum into a mean (divided in double, as the CPU does).
  static __host__ __device__ __forceinline__ Out finalize(Acc a,
                                                          [[maybe_unused]] double mean_divisor) {
    if constexpr (std::is_floating_point_v<Acc>)
      if (mean_divisor > 0) return static_cast<Out>(static_cast<double>(a) / mean_divisor);
    return a;
  }
};
template <typename T>
using SumOp = ArithmeticOp<T, false>;
template <typename T>
using ProdOp = ArithmeticOp<T, true>;

// max/min: a NaN wins (no comparison replaces it once held). Bool max/min run as any/all
// (LogicalOp), so In is T here.
template <typename T, bool kMax>
struct ExtremumOp {
  static_assert(!std::is_same_v<T, bool>, "bool max/min are LogicalOp");
  using In = T;
  using Acc = T;
  using Out = T;
  using Partial = ExtremumOp;
  static __host__ __device__ __forceinline__ Acc identity() {
    if constexpr (std::is_same_v<T, bool>)
      return !kMax;
    else if constexpr (std::is_floating_point_v<T>)
      return kMax ? -static_cast<T>(INFINITY) : static_cast<T>(INFINITY);
    else if constexpr (sizeof(T) == 4)
      return kMax ? INT32_MIN : INT32_MAX;
    else
      return kMax ? INT64_MIN : INT64_MAX;
  }
  static __host__ __device__ __forceinline__ Acc combine(Acc a, Acc b) {
    return ((kMax ? a < b : b < a) || is_nan(b)) ? b : a;
  }
  static __host__ __device__ __forceinline__ Acc step(Acc a, T v, int64_t) { return combine(a, v); }
  static __host__ __device__ __forceinline__ Out finalize(Acc a, double) { return a; }
};

// all/any of any dtype: an element counts as true when it is not zero (NaN is true; a bool is
// read as its byte). InT is only given for the partials pass, which reads the bools it wrote.
template <typename T, bool kAll, typename InT = Stored<T>>
struct LogicalOp {
  using In = InT;
  using Acc = bool;
  using Out = bool;
  using Partial = LogicalOp<bool, kAll, bool>;
  static __host__ __device__ __forceinline__ Acc identity() { return kAll; }
  static __host__ __device__ __forceinline__ Acc combine(Acc a, Acc b) {
    return kAll ? (a && b) : (a || b);
  }
  static __host__ __device__ __forceinline__ Acc step(Acc a, In v, int64_t) {
    return combine(a, v != In(0));
  }
  static __host__ __device__ __forceinline__ Out finalize(Acc a, double) { return a; }
};

// An arg reduction's running best: its value and reduced position; index < 0 is "nothing yet".
template <typename T>
struct ArgAcc {
  T value;
  int64_t index;
};
template <typename T>
struct IsArgAcc : std::false_type {};
template <typename T>
struct IsArgAcc<ArgAcc<T>> : std::true_type {};

// argmax/argmin: the first position of the max/min, or of the first NaN when there is one (the
// CPU's sequential rule). Ties go to the smaller position, which makes the combine order-free.
template <typename T, bool kMax>
struct ArgBest {
  static __host__ __device__ __forceinline__ ArgAcc<T> combine(ArgAcc<T> a, ArgAcc<T> b) {
    if (b.index < 0) return a;
    if (a.index < 0) return b;
    const bool a_nan = is_nan(a.value), b_nan = is_nan(b.value);
    if (a_nan != b_nan) return a_nan ? a : b;
    if (a_nan || a.value == b.value) return a.index <= b.index ? a : b;
    return (kMax ? b.value < a.value : a.value < b.value) ? a : b;
  }
};

template <typename T, bool kMax>
struct ArgPartialOp;

template <typename T, bool kMax>
struct ArgOp {
  using In = Stored<T>;
  using Acc = ArgAcc<T>;
  using Out = int64_t;
  using Partial = ArgPartialOp<T, kMax>;
  static __host__ __device__ __forceinline__ Acc identity() { return {T(0), -1}; }
  static __host__ __device__ __forceinline__ Acc combine(Acc a, Acc b) {
    return ArgBest<T, kMax>::combine(a, b);
  }
  static __host__ __device__ __forceinline__ Acc step(Acc a, In v, int64_t position) {
    return combine(a, Acc{from_stored<T>(v), position});
  }
  static __host__ __device__ __forceinline__ Out finalize(Acc a, double) { return a.index; }
};

template <typename T, bool kMax>
struct ArgPartialOp : ArgOp<T, kMax> {
  using In = ArgAcc<T>;
  using Partial = ArgPartialOp;
  static __host__ __device__ __forceinline__ ArgAcc<T> step(ArgAcc<T> a, ArgAcc<T> v, int64_t) {
    return ArgBest<T, kMax>::combine(a, v);
  }
};

}  // namespace tensorlet::cuda::reduction

// The shared reduction functors (backends/math/reduce_ops.h) as the CUDA kernel runs them: every
// step takes the element's position (used by arg ops only), and each op names `Partial`, the op
// that folds accumulators of the first pass of a split reduction. Ops with the same accumulator,
// output and combine share one Partial, so split reductions do not double the kernels compiled.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "tensorlet/backends/math/reduce_ops.h"

namespace tensorlet::cuda::reduction {

using reduce_ops::ArgAcc;

template <typename T>
struct IsArgAcc : std::false_type {};
template <typename T>
struct IsArgAcc<ArgAcc<T>> : std::true_type {};

// The functor of F's family whose accumulator folding is the same code as F's: integer sums and
// products all accumulate int64 into int64, all/any fold bools, arg ops fold (compute value,
// position) pairs, whatever the input dtype.
template <typename F>
struct SharedFold {
  using type = F;
};
template <typename T, bool kProd>
requires(!is_floating_v<T>) struct SharedFold<reduce_ops::ArithmeticOp<T, kProd>> {
  using type = reduce_ops::ArithmeticOp<int64_t, kProd>;
};
template <typename T, bool kAll>
struct SharedFold<reduce_ops::LogicalOp<T, kAll>> {
  using type = reduce_ops::LogicalOp<bool, kAll>;
};
template <typename T, bool kMax>
struct SharedFold<reduce_ops::ArgOp<T, kMax>> {
  using type = reduce_ops::ArgOp<compute_t<T>, kMax>;
};

// Folds F's accumulators: the last block of a split reduction folds the slices' partials with it.
template <typename F>
struct PartialOp {
  using In = typename F::Acc;
  using Acc = typename F::Acc;
  using Out = typename F::Out;
  using Partial = PartialOp;
  static __host__ __device__ __forceinline__ Acc identity() { return F::identity(); }
  static __host__ __device__ __forceinline__ Acc combine(Acc a, Acc b) { return F::combine(a, b); }
  static __host__ __device__ __forceinline__ Acc step(Acc a, In v, int64_t) {
    return F::combine(a, v);
  }
  static __host__ __device__ __forceinline__ Out finalize(Acc a, double divisor) {
    return F::finalize(a, divisor);
  }
};

// F as the kernel calls it.
template <typename F>
struct KernelOp {
  using In = typename F::In;
  using Acc = typename F::Acc;
  using Out = typename F::Out;
  using Partial = PartialOp<typename SharedFold<F>::type>;
  static __host__ __device__ __forceinline__ Acc identity() { return F::identity(); }
  static __host__ __device__ __forceinline__ Acc combine(Acc a, Acc b) { return F::combine(a, b); }
  static __host__ __device__ __forceinline__ Acc step(Acc a, In v, [[maybe_unused]] int64_t r) {
    if constexpr (F::kIndexed)
      return F::step(a, v, r);
    else
      return F::step(a, v);
  }
  static __host__ __device__ __forceinline__ Out finalize(Acc a, double divisor) {
    return F::finalize(a, divisor);
  }
};

}  // namespace tensorlet::cuda::reduction

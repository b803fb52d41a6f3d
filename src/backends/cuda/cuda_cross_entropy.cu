// The fused cross entropy on CUDA (backends/math/cross_entropy_ops.h), one launch each way:
//  - forward: a warp per row for short rows, a block per row for long ones; one online
//    (max, sum of exp) pass reads x once, with 16-byte loads, four in flight per thread;
//  - backward: dx from x and the forward's lse in one pass over x, a row split into chunks of a
//    block each (a warp per row for short rows).
// So forward + backward move 3 bytes of x's size (read, read, write) where log_softmax + nll_loss
// and their backwards move about 6. A target out of range is reported to the host at its next
// wait (cuda_device_error.h), as torch's device assert, and its row counts as ignored.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "tensorlet/backends/cuda/cuda_device_error.cuh"
#include "tensorlet/backends/cuda/cuda_internal.h"
#include "tensorlet/backends/cuda/cuda_kernels.h"
#include "tensorlet/backends/cuda/cuda_loop.cuh"
#include "tensorlet/backends/cuda/cuda_softmax_common.cuh"
#include "tensorlet/backends/math/cross_entropy_ops.h"
#include "tensorlet/tensor/dispatch.h"

namespace tensorlet::cuda {

namespace {

using namespace softmax_impl;

constexpr int kRowThreads = 512;             // forward, a block per row
constexpr int kGradThreads = 256;            // backward
constexpr int kUnroll = 4;                   // vector loads in flight per thread
constexpr int64_t kWarpRowVectors = 32 * 8;  // rows of up to this many vectors go a warp each

// Backend::cross_entropy_forward's loss dtype.
template <typename T>
using loss_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <typename A, typename Op>
__device__ __forceinline__ A warp_reduce(A v, Op op) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// The class weights' sum the formulas use: C without weights, sum(weight) with smoothing (read on
// the device, so the call needs no host wait), unused (0) otherwise.
template <typename A>
__device__ __forceinline__ A total_weight(const void* weight, const A* weight_total,
                                          const CrossEntropyArgs& a) {
  if (!weight) return static_cast<A>(a.classes);
  return a.smoothing > 0 ? *weight_total : A(0);
}

// The online max and sum of exp of one thread's elements, taken a vector at a time: one max over
// the vector, one rescale when it is a new maximum, then a branch-free exp and add per element
// (the per-element update of Online branches on every element, which bounds the bfloat16 pass).
// A NaN makes s NaN (through exp(NaN), or set when a vector holds nothing else); an all -inf
// vector adds nothing; +inf gives exp(inf - inf) = NaN, as the per-element form and torch.
template <typename A>
struct OnlineVector {
  A m, s;

  template <int kVec>
  __device__ __forceinline__ void add(const A (&x)[kVec]) {
    constexpr A kInf = static_cast<A>(INFINITY);  // numeric_limits is host-only
    A vm = x[0];
#pragma unroll
    for (int e = 1; e < kVec; ++e) vm = fmax(vm, x[e]);  // fmax drops NaN unless all are
    if (vm != vm) {
      s = vm;
      return;
    }
    if (vm == -kInf) return;
    if (vm > m) {
      s *= exp_of(m - vm);  // m = -inf: s is 0 (or NaN) and stays so
      m = vm;
    }
#pragma unroll
    for (int e = 0; e < kVec; ++e) s += exp_of(x[e] - m);
  }
  // This thread's sum rescaled to the final max M (NaN stays NaN).
  __device__ __forceinline__ A sum_at(A M) const {
    constexpr A kInf = static_cast<A>(INFINITY);
    if (s != s) return s;
    return m == -kInf ? A(0) : s * exp_of(m - M);
  }
};

// kWarpRows: a warp per row; else the whole block per row.
template <typename T, int kVec, bool kWarpRows>
__global__ void __launch_bounds__(kRowThreads)
    cross_entropy_forward_kernel(const T* __restrict__ x, const int64_t* __restrict__ target,
                                 const T* __restrict__ weight,
                                 const loss_t<T>* __restrict__ weight_total, CrossEntropyArgs a,
                                 DeviceErrorSink sink, loss_t<T>* __restrict__ loss,
                                 loss_t<T>* __restrict__ row_weight, loss_t<T>* __restrict__ lse) {
  using A = loss_t<T>;
  using V = Pack<T, kVec>;
  constexpr A kInf = static_cast<A>(INFINITY);  // numeric_limits is host-only
  __shared__ A shared[32];
  const int group = kWarpRows ? 32 : static_cast<int>(blockDim.x);
  const int lane = kWarpRows ? static_cast<int>(threadIdx.x % 32) : static_cast<int>(threadIdx.x);
  const int64_t groups = kWarpRows ? int64_t{gridDim.x} * (blockDim.x / 32) : int64_t{gridDim.x};
  const int64_t first =
      kWarpRows ? int64_t{blockIdx.x} * (blockDim.x / 32) + threadIdx.x / 32 : int64_t{blockIdx.x};
  const bool smooth = a.smoothing > 0;
  const int64_t stride = int64_t{group} * kVec;
  for (int64_t row = first; row < a.rows; row += groups) {
    const T* xr = x + row * a.classes;
    OnlineVector<A> acc{-kInf, A(0)};
    A wx = 0;  // sum_c w_c x_c, for the smoothing term
    auto take = [&](const V& v, int64_t i) {
      A xs[kVec];
#pragma unroll
      for (int e = 0; e < kVec; ++e) xs[e] = static_cast<A>(v.v[e]);
      acc.add(xs);
      if (smooth) {
#pragma unroll
        for (int e = 0; e < kVec; ++e)
          wx += xs[e] * (weight ? static_cast<A>(weight[i + e]) : A(1));
      }
    };
    int64_t i = int64_t{lane} * kVec;
    for (; i + (kUnroll - 1) * stride < a.classes; i += kUnroll * stride) {
      V v[kUnroll];
#pragma unroll
      for (int k = 0; k < kUnroll; ++k) v[k] = *reinterpret_cast<const V*>(xr + i + k * stride);
#pragma unroll
      for (int k = 0; k < kUnroll; ++k) take(v[k], i + k * stride);
    }
    for (; i < a.classes; i += stride) take(*reinterpret_cast<const V*>(xr + i), i);
    A m, s;
    if (kWarpRows) {
      m = warp_reduce(acc.m, MaxOp{});
      s = warp_reduce(acc.sum_at(m), SumOp{});
      if (smooth) wx = warp_reduce(wx, SumOp{});
    } else {
      m = block_reduce(acc.m, MaxOp{}, -kInf, shared);
      s = block_reduce(acc.sum_at(m), SumOp{}, A(0), shared);
      if (smooth) wx = block_reduce(wx, SumOp{}, A(0), shared);
    }
    if (lane != 0) continue;
    // Every x -inf: m + log(0) = -inf, and lse - x_t is NaN, as torch's log_softmax.
    const A row_lse = m + log_of(s);
    lse[row] = row_lse;
    const int64_t t = target[row];
    if (!math::target_counts(t, a)) {
      if (math::target_out_of_range(t, a)) report_device_error(sink, t);
      loss[row] = 0;
      row_weight[row] = 0;
      continue;
    }
    const A w_t = weight ? static_cast<A>(weight[t]) : A(1);
    row_weight[row] = w_t;
    loss[row] = math::cross_entropy_row_loss<A>(row_lse, static_cast<A>(xr[t]), w_t, wx,
                                                total_weight(weight, weight_total, a), a);
  }
}

// Tasks are (row, chunk of `chunk` elements), one per `group` threads (32 or the block).
template <typename T, int kVec>
__global__ void __launch_bounds__(kGradThreads)
    cross_entropy_backward_kernel(const loss_t<T>* __restrict__ grad, const T* __restrict__ x,
                                  const int64_t* __restrict__ target, const T* __restrict__ weight,
                                  const loss_t<T>* __restrict__ weight_total,
                                  const loss_t<T>* __restrict__ lse, CrossEntropyArgs a,
                                  int64_t chunk, int64_t chunks_per_row, int group,
                                  T* __restrict__ dx) {
  using A = loss_t<T>;
  using V = Pack<T, kVec>;
  const int64_t groups = int64_t{gridDim.x} * blockDim.x / group;
  const int64_t tasks = a.rows * chunks_per_row;
  const int lane = static_cast<int>(threadIdx.x % group);
  const bool smooth = a.smoothing > 0;
  const A total_w = total_weight(weight, weight_total, a);
  for (int64_t task = (int64_t{blockIdx.x} * blockDim.x + threadIdx.x) / group; task < tasks;
       task += groups) {
    const int64_t row = task / chunks_per_row;
    const int64_t begin = (task - row * chunks_per_row) * chunk;
    const int64_t end = begin + chunk < a.classes ? begin + chunk : a.classes;
    const int64_t t = target[row];
    const bool counts = math::target_counts(t, a);
    const A w_t = counts ? (weight ? static_cast<A>(weight[t]) : A(1)) : A(0);
    const auto k = math::cross_entropy_row_grad<A>(grad[row], w_t, total_w, a);
    const A row_lse = lse[row];
    const T* xr = x + row * a.classes;
    T* dr = dx + row * a.classes;
    for (int64_t i = begin + int64_t{lane} * kVec; i < end; i += int64_t{group} * kVec) {
      const V v = *reinterpret_cast<const V*>(xr + i);
      V o;
#pragma unroll
      for (int e = 0; e < kVec; ++e) {
        A d = exp_of(static_cast<A>(v.v[e]) - row_lse) * k.scale;
        if (smooth) d -= k.spread * (weight ? static_cast<A>(weight[i + e]) : A(1));
        if (i + e == t) d -= k.hit;
        o.v[e] = static_cast<T>(counts ? d : A(0));
      }
      *reinterpret_cast<V*>(dr + i) = o;
    }
  }
}

template <typename T>
const T* optional_ptr(const Tensor& t) {
  return t.defined() ? typed_ptr<const T>(t) : nullptr;
}

// 16-byte accesses need every row to start on a 16-byte boundary.
template <typename T>
bool vector_rows(const Tensor& x, const Tensor& other, int64_t classes) {
  constexpr int kVec = 16 / sizeof(T);
  return reinterpret_cast<uintptr_t>(x.data_ptr()) % 16 == 0 &&
         reinterpret_cast<uintptr_t>(other.data_ptr()) % 16 == 0 && classes % kVec == 0;
}

template <typename T, int kVec>
void launch_forward(const Tensor& x, const Tensor& target, const Tensor& weight,
                    const Tensor& weight_total, const CrossEntropyArgs& a, DeviceErrorSink sink,
                    const Tensor& loss, const Tensor& row_weight, const Tensor& lse,
                    cudaStream_t s) {
  using A = loss_t<T>;
  const int64_t vectors = a.classes / kVec + (a.classes % kVec != 0);
  const bool warp_rows = vectors <= kWarpRowVectors;
  // 512 threads for long rows (a row in flight per block), 256 for shorter ones; short rows go
  // a warp each, 8 to a block.
  const int threads =
      warp_rows || vectors < int64_t{kRowThreads} * kUnroll ? kGradThreads : kRowThreads;
  const unsigned grid = warp_rows
                            ? grid_for(a.rows, threads / 32)
                            : static_cast<unsigned>(std::min<int64_t>(a.rows, int64_t{1} << 24));
  auto* kernel = warp_rows ? cross_entropy_forward_kernel<T, kVec, true>
                           : cross_entropy_forward_kernel<T, kVec, false>;
  kernel<<<grid, threads, 0, s>>>(typed_ptr<const T>(x), typed_ptr<const int64_t>(target),
                                  optional_ptr<T>(weight), optional_ptr<A>(weight_total), a, sink,
                                  typed_ptr<A>(loss), typed_ptr<A>(row_weight), typed_ptr<A>(lse));
  check_launch(s, "cross_entropy_forward_kernel");
}

template <typename T, int kVec>
void launch_backward(const Tensor& grad, const Tensor& x, const Tensor& target,
                     const Tensor& weight, const Tensor& weight_total, const Tensor& lse,
                     const CrossEntropyArgs& a, const Tensor& dx, cudaStream_t s) {
  using A = loss_t<T>;
  const int64_t vectors = a.classes / kVec + (a.classes % kVec != 0);
  int group = kGradThreads;
  int64_t chunk = int64_t{kGradThreads} * kVec * kUnroll;
  if (vectors <= kWarpRowVectors) {
    group = 32;
    chunk = std::max<int64_t>(a.classes, 1);
  }
  const int64_t chunks_per_row = std::max<int64_t>(1, (a.classes + chunk - 1) / chunk);
  const int64_t threads_wanted = a.rows * chunks_per_row * group;
  const unsigned grid = grid_for(threads_wanted, kGradThreads);
  cross_entropy_backward_kernel<T, kVec><<<grid, kGradThreads, 0, s>>>(
      typed_ptr<const A>(grad), typed_ptr<const T>(x), typed_ptr<const int64_t>(target),
      optional_ptr<T>(weight), optional_ptr<A>(weight_total), typed_ptr<const A>(lse), a, chunk,
      chunks_per_row, group, typed_ptr<T>(dx));
  check_launch(s, "cross_entropy_backward_kernel");
}

}  // namespace

void cross_entropy_forward(const Tensor& x, const Tensor& target, const Tensor& weight,
                           const Tensor& weight_total, const CrossEntropyArgs& args,
                           const Tensor& loss, const Tensor& row_weight, const Tensor& lse) {
  if (args.rows == 0) return;
  const int device = x.device().index();
  cudaStream_t s = current_stream_handle(device);
  const DeviceErrorSink sink = device_error_sink(
      device, current_op_name(), DeviceErrorKind::ClassTargetOutOfRange, 1, args.classes);
  dispatch_dtype<kFloatingDTypes>(x.dtype(), [&]<typename T>() {
    constexpr int kVec = 16 / sizeof(T);
    if (vector_rows<T>(x, x, args.classes))
      launch_forward<T, kVec>(x, target, weight, weight_total, args, sink, loss, row_weight, lse,
                              s);
    else
      launch_forward<T, 1>(x, target, weight, weight_total, args, sink, loss, row_weight, lse, s);
  });
}

void cross_entropy_backward(const Tensor& grad, const Tensor& x, const Tensor& target,
                            const Tensor& weight, const Tensor& weight_total, const Tensor& lse,
                            const CrossEntropyArgs& args, const Tensor& dx) {
  if (args.rows == 0 || args.classes == 0) return;
  cudaStream_t s = current_stream_handle(x.device().index());
  dispatch_dtype<kFloatingDTypes>(x.dtype(), [&]<typename T>() {
    constexpr int kVec = 16 / sizeof(T);
    if (vector_rows<T>(x, dx, args.classes))
      launch_backward<T, kVec>(grad, x, target, weight, weight_total, lse, args, dx, s);
    else
      launch_backward<T, 1>(grad, x, target, weight, weight_total, lse, args, dx, s);
  });
}

}  // namespace tensorlet::cuda

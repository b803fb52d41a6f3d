// Scatter on CUDA (scatter, scatter_add, scatter_reduce, index_add/copy/fill): one thread per
// index element, folding its value into self with an atomic. Native atomicAdd where the hardware
// has one (float, double, int32, int64, float16, bfloat16), atomicMax/atomicMin for int32/int64,
// and a compare-and-swap loop for the rest (products, float max/min with NaN, 1- and 2-byte
// integers and bool), so every value sent to an element is combined. Each index value is checked
// against self's size along dim in the kernel: a bad one is skipped and reported to the host
// (cuda_device_error.h), so the front-ends need no pass over the index and no wait before it.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "tensorlet/backends/cuda/cuda_atomics.cuh"
#include "tensorlet/backends/cuda/cuda_device_error.cuh"
#include "tensorlet/backends/cuda/cuda_index_common.cuh"
#include "tensorlet/backends/cuda/cuda_kernels.h"
#include "tensorlet/backends/math/scatter_ops.h"
#include "tensorlet/tensor/convert.h"

namespace tensorlet::cuda {
namespace {

constexpr int kScatterThreads = 256;

// Combines one value into the element it goes to.
template <ScatterOp Op, typename T>
__device__ __forceinline__ void fold(T* e, Stored<T> in, compute_t<T> alpha, bool scaled) {
  if constexpr (Op == ScatterOp::Assign) {
    *reinterpret_cast<Stored<T>*>(e) = in;  // the bits, as a copy
  } else {
    compute_t<T> v = static_cast<compute_t<T>>(from_stored<T>(in));
    if (scaled) v = scatter_ops::scale(alpha, v);
    combine_into<Op, T>(e, v);
  }
}

// Operands of ix over index's shape: 0 = self with a zero stride along dim, 1 = index, 2 = src
// (zero strides for a scalar src, which comes as `value`). The element written is self's at
// off[0] + index * step.
template <ScatterOp Op, typename T, typename IndexT>
__global__ void __launch_bounds__(kScatterThreads)
    scatter_kernel(T* __restrict__ self, const int64_t* __restrict__ index,
                   const T* __restrict__ src, Stored<T> value,
                   const __grid_constant__ StridedIndexer<3> ix, int64_t step, int64_t n,
                   int64_t size, DeviceErrorSink sink, compute_t<T> alpha, bool scaled) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    int64_t off[3];
    ix.offsets(static_cast<IndexT>(i), off);
    const int64_t k = index[off[1]];
    if (k < 0 || k >= size) {
      report_device_error(sink, k);
      continue;
    }
    const Stored<T> in = src ? reinterpret_cast<const Stored<T>*>(src)[off[2]] : value;
    fold<Op, T>(self + off[0] + k * step, in, alpha, scaled);
  }
}

// One strided run of index (a 1-D scatter, index_add of a vector, or dims the indexer merged):
// no indexer, whose division loops take registers from an atomic-bound kernel (occupancy is what
// keeps atomics in flight), and kRunItems elements per thread whose loads are all issued before
// the first atomic. `stride` holds self's (0: the dim is index's), index's and src's.
constexpr int kRunItems = 4;

template <ScatterOp Op, typename T>
__global__ void __launch_bounds__(kScatterThreads)
    scatter_run_kernel(T* __restrict__ self, const int64_t* __restrict__ index,
                       const T* __restrict__ src, Stored<T> value, int64_t self_stride,
                       int64_t index_stride, int64_t src_stride, int64_t step, int64_t n,
                       int64_t size, DeviceErrorSink sink, compute_t<T> alpha, bool scaled) {
  const int64_t tile = int64_t{kRunItems} * blockDim.x;
  const int64_t tile_step = static_cast<int64_t>(gridDim.x) * tile;
  for (int64_t base = static_cast<int64_t>(blockIdx.x) * tile + threadIdx.x; base < n;
       base += tile_step) {
    int64_t k[kRunItems] = {};
    Stored<T> in[kRunItems]{};
#pragma unroll
    for (int u = 0; u < kRunItems; ++u) {
      const int64_t i = base + int64_t{u} * blockDim.x;
      if (i < n) {
        k[u] = index[i * index_stride];
        in[u] = src ? reinterpret_cast<const Stored<T>*>(src)[i * src_stride] : value;
      }
    }
#pragma unroll
    for (int u = 0; u < kRunItems; ++u) {
      const int64_t i = base + int64_t{u} * blockDim.x;
      if (i >= n) break;
      if (k[u] < 0 || k[u] >= size) {
        report_device_error(sink, k[u]);
        continue;
      }
      fold<Op, T>(self + i * self_stride + k[u] * step, in[u], alpha, scaled);
    }
  }
}

template <ScatterOp Op, typename T>
void launch(const Tensor& self, const Tensor& index, const T* src, Stored<T> value,
            const StridedIndexer<3>& ix, int64_t step, int64_t size, const DeviceErrorSink& sink,
            Scalar alpha, cudaStream_t s) {
  using C = compute_t<T>;
  const int64_t n = index.numel();
  const unsigned grid = grid_for(n, kScatterThreads);
  const bool scaled = Op == ScatterOp::Add && !(alpha.to<double>() == 1);
  T* dst = static_cast<T*>(self.data_ptr());
  const int64_t* idx = static_cast<const int64_t*>(index.data_ptr());
  if (ix.ndim == 1) {
    scatter_run_kernel<Op, T>
        <<<grid_for((n + kRunItems - 1) / kRunItems, kScatterThreads), kScatterThreads, 0, s>>>(
            dst, idx, src, value, ix.strides[0][0], ix.strides[1][0], ix.strides[2][0], step, n,
            size, sink, alpha.to<C>(), scaled);
  } else if (n < kMax32BitElements) {
    scatter_kernel<Op, T, uint32_t><<<grid, kScatterThreads, 0, s>>>(
        dst, idx, src, value, ix, step, n, size, sink, alpha.to<C>(), scaled);
  } else {
    scatter_kernel<Op, T, uint64_t><<<grid, kScatterThreads, 0, s>>>(
        dst, idx, src, value, ix, step, n, size, sink, alpha.to<C>(), scaled);
  }
  check_launch(s, "scatter_kernel");
}

}  // namespace

void scatter(ScatterOp op, const Tensor& self, int64_t dim, const Tensor& index,
             const ElementwiseArg& src, Scalar alpha) {
  if (index.numel() == 0) return;
  const int64_t nd = index.dim();
  int64_t strides[3][kMaxDims];
  for (int64_t d = 0; d < nd; ++d) {
    strides[0][d] = d == dim ? 0 : self.strides()[d];
    strides[1][d] = index.strides()[d];
    strides[2][d] = src.is_scalar() ? 0 : src.tensor->strides()[d];
  }
  const StridedIndexer<3> ix = make_indexer_raw<3>(nd, index.shape().data(), strides);
  const int64_t step = self.strides()[dim];
  const int64_t size = self.shape()[dim];
  const int device = self.device().index();
  const DeviceErrorSink sink =
      device_error_sink(device, current_op_name(), DeviceErrorKind::IndexOutOfRange, dim, size);
  cudaStream_t s = current_stream_handle(device);
  dispatch_dtype<kAllDTypes>(self.dtype(), [&]<typename T>() {
    Stored<T> value{};
    const T* src_ptr = nullptr;
    if (src.is_scalar()) {
      const uint64_t bits = element_bits(src.scalar, self.dtype());
      std::memcpy(&value, &bits, sizeof value);
    } else {
      src_ptr = static_cast<const T*>(src.tensor->data_ptr());
    }
    switch (op) {
      case ScatterOp::Assign:
        return launch<ScatterOp::Assign, T>(self, index, src_ptr, value, ix, step, size, sink,
                                            alpha, s);
      case ScatterOp::Add:
        return launch<ScatterOp::Add, T>(self, index, src_ptr, value, ix, step, size, sink, alpha,
                                         s);
      case ScatterOp::Mul:
        return launch<ScatterOp::Mul, T>(self, index, src_ptr, value, ix, step, size, sink, alpha,
                                         s);
      case ScatterOp::Max:
        return launch<ScatterOp::Max, T>(self, index, src_ptr, value, ix, step, size, sink, alpha,
                                         s);
      case ScatterOp::Min:
        return launch<ScatterOp::Min, T>(self, index, src_ptr, value, ix, step, size, sink, alpha,
                                         s);
    }
  });
}

}  // namespace tensorlet::cuda

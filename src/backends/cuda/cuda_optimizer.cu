// CUDA's fused optimizer steps (Adam/AdamW, SGD), as torch's fused=True: every parameter of a dtype
// updated by one launch. The pointer table rides in the kernel's parameter space
// (__grid_constant__, up to kTensorsPerLaunch tensors; CUDA 12.1+ allows 32 KiB of parameters), and
// each block takes one chunk of one tensor, found by a binary search of the chunks' prefix sums.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "tensorlet/backends/cuda/cuda_capture.h"
#include "tensorlet/backends/cuda/cuda_internal.h"
#include "tensorlet/backends/cuda/cuda_kernels.h"
#include "tensorlet/backends/math/optimizer_ops.h"
#include "tensorlet/tensor/dispatch.h"

namespace tensorlet::cuda {
namespace {

constexpr int kTensorsPerLaunch = 256;  // 256 x 56 bytes of table: 14 KiB of parameters
constexpr int kOptimizerThreads = 512;
constexpr int64_t kChunk = 64 * 1024;  // elements per block: 128 per thread

template <typename T>
struct AdamTable {
  T* p[kTensorsPerLaunch];
  const T* g[kTensorsPerLaunch];
  T* m[kTensorsPerLaunch];
  T* v[kTensorsPerLaunch];
  T* vmax[kTensorsPerLaunch];
  int64_t numel[kTensorsPerLaunch];
  int64_t first_chunk[kTensorsPerLaunch];  // chunks of the tensors before this one
  int count;
};

template <typename T>
struct SgdTable {
  T* p[kTensorsPerLaunch];
  const T* g[kTensorsPerLaunch];
  T* buf[kTensorsPerLaunch];
  int64_t numel[kTensorsPerLaunch];
  int64_t first_chunk[kTensorsPerLaunch];
  int count;
};

// This block's tensor (the last whose first chunk is <= blockIdx.x) and its element range.
struct BlockRange {
  int t;
  int64_t begin, end;
};
__device__ __forceinline__ BlockRange block_range(const int64_t* first_chunk, const int64_t* numel,
                                                  int count) {
  const int64_t chunk = blockIdx.x;
  int lo = 0, hi = count - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (first_chunk[mid] <= chunk)
      lo = mid;
    else
      hi = mid - 1;
  }
  const int64_t begin = (chunk - first_chunk[lo]) * kChunk;
  return {lo, begin, begin + kChunk < numel[lo] ? begin + kChunk : numel[lo]};
}

template <typename T>
__global__ void __launch_bounds__(kOptimizerThreads)
    adam_kernel(const __grid_constant__ AdamTable<T> table,
                const math::AdamConstants<compute_t<T>> k) {
  const auto [t, begin, end] = block_range(table.first_chunk, table.numel, table.count);
  T* p = table.p[t];
  const T* g = table.g[t];
  T* m = table.m[t];
  T* v = table.v[t];
  T* vmax = table.vmax[t];
  for (int64_t i = begin + threadIdx.x; i < end; i += kOptimizerThreads)
    math::adam_element(p, g, m, v, vmax, i, k);
}

template <typename T>
__global__ void __launch_bounds__(kOptimizerThreads)
    sgd_kernel(const __grid_constant__ SgdTable<T> table,
               const math::SgdConstants<compute_t<T>> k) {
  const auto [t, begin, end] = block_range(table.first_chunk, table.numel, table.count);
  T* p = table.p[t];
  const T* g = table.g[t];
  T* buf = table.buf[t];
  for (int64_t i = begin + threadIdx.x; i < end; i += kOptimizerThreads)
    math::sgd_element(p, g, buf, i, k);
}

}  // namespace

void fused_adam(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                const std::vector<Tensor>& max_exp_avg_sqs, const AdamStep& step) {
  if (params.empty()) return;
  // The step count's bias corrections are kernel arguments: a graph would replay the captured
  // step's forever (torch keeps the count on the device for capturable=True, not built here).
  check_not_capturing(
      "bakes this step's count into the graph, so every replay would repeat its bias corrections "
      "(torch's capturable=True, which keeps the count on the device, is not built; SGD captures)");
  const cudaStream_t stream = current_stream_handle(params.front().device().index());
  dispatch_dtype<kFloatingDTypes>(
      params.front().dtype(),
      [&]<typename T>() {
        const auto k = math::adam_constants<compute_t<T>>(step);
        for (size_t first = 0; first < params.size(); first += kTensorsPerLaunch) {
          AdamTable<T> table{};
          int64_t chunks = 0;
          const size_t last = std::min(params.size(), first + kTensorsPerLaunch);
          for (size_t i = first; i < last; ++i) {
            const int j = static_cast<int>(i - first);
            table.p[j] = static_cast<T*>(params[i].data_ptr());
            table.g[j] = static_cast<const T*>(grads[i].data_ptr());
            table.m[j] = static_cast<T*>(exp_avgs[i].data_ptr());
            table.v[j] = static_cast<T*>(exp_avg_sqs[i].data_ptr());
            table.vmax[j] = step.amsgrad ? static_cast<T*>(max_exp_avg_sqs[i].data_ptr()) : nullptr;
            table.numel[j] = params[i].numel();
            table.first_chunk[j] = chunks;
            chunks += (params[i].numel() + kChunk - 1) / kChunk;
          }
          table.count = static_cast<int>(last - first);
          if (chunks == 0) continue;
          adam_kernel<T><<<static_cast<unsigned>(chunks), kOptimizerThreads, 0, stream>>>(table, k);
          check_launch(stream, "adam_kernel");
        }
      },
      "tl::optim::Adam");
}

void fused_sgd(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
               const std::vector<Tensor>& momentum_buffers, const SgdStep& step) {
  if (params.empty()) return;
  const cudaStream_t stream = current_stream_handle(params.front().device().index());
  dispatch_dtype<kFloatingDTypes>(
      params.front().dtype(),
      [&]<typename T>() {
        const auto k = math::sgd_constants<compute_t<T>>(step);
        for (size_t first = 0; first < params.size(); first += kTensorsPerLaunch) {
          SgdTable<T> table{};
          int64_t chunks = 0;
          const size_t last = std::min(params.size(), first + kTensorsPerLaunch);
          for (size_t i = first; i < last; ++i) {
            const int j = static_cast<int>(i - first);
            table.p[j] = static_cast<T*>(params[i].data_ptr());
            table.g[j] = static_cast<const T*>(grads[i].data_ptr());
            table.buf[j] =
                k.has_momentum ? static_cast<T*>(momentum_buffers[i].data_ptr()) : nullptr;
            table.numel[j] = params[i].numel();
            table.first_chunk[j] = chunks;
            chunks += (params[i].numel() + kChunk - 1) / kChunk;
          }
          table.count = static_cast<int>(last - first);
          if (chunks == 0) continue;
          sgd_kernel<T><<<static_cast<unsigned>(chunks), kOptimizerThreads, 0, stream>>>(table, k);
          check_launch(stream, "sgd_kernel");
        }
      },
      "tl::optim::SGD");
}

}  // namespace tensorlet::cuda

// Reductions (sum, prod, mean, max, min, all, any) and arg reductions (argmax, argmin) on CUDA:
// the host plans the problem as coalesced kept x reduced dims, picks the kernel's thread layout
// and, for big reductions with few outputs, a split into slices that the last slice to finish
// folds. Everything is enqueued on the current stream, one launch per reduction; the only atomic
// counts arrivals, so results are the same on every run.
#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>
#include <mutex>
#include <type_traits>
#include <vector>

#include "tensorlet/backends/cuda/cuda_internal.h"
#include "tensorlet/backends/cuda/cuda_kernels.h"
#include "tensorlet/backends/cuda/cuda_loop.cuh"
#include "tensorlet/backends/cuda/cuda_reduce_kernel.cuh"
#include "tensorlet/backends/cuda/cuda_reduce_plan.cuh"
#include "tensorlet/tensor/error.h"

namespace tensorlet::cuda {

namespace {

using namespace reduction;

// How many blocks of `threads` threads of Op's kernel one SM of `device` holds at once, queried
// once per (device, block size): block sizes are powers of two up to kMaxThreads.
template <typename Op>
int resident_blocks(int device, int threads) {
  constexpr int kDevices = 16, kSizes = 10;
  static_assert(kMaxThreads < (1 << kSizes));
  static std::atomic<int> cache[kDevices][kSizes];
  const int size = std::countr_zero(static_cast<unsigned>(threads));
  const bool cached = device < kDevices && size < kSizes;
  if (cached) {
    const int n = cache[device][size].load(std::memory_order_relaxed);
    if (n > 0) return n;
  }
  int n = 0;
  OnDevice on_device(device);  // the occupancy calculator reads the current device
  TL_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, reduce_kernel<Op>, threads, 0));
  n = std::max(n, 1);
  if (cached) cache[device][size].store(n, std::memory_order_relaxed);
  return n;
}

// Zeroed arrival counters of split reductions (cuda_reduce_kernel.cuh), one set per (device,
// stream): launches on one stream run in order and each leaves its counters at zero, but launches
// on two streams may overlap. Made once per stream and kept, like the library's streams.
unsigned* arrival_counters(int device, cudaStream_t stream, int sms) {
  struct Entry {
    int device;
    cudaStream_t stream;
    unsigned* counters;
  };
  thread_local Entry t_last{-1, nullptr, nullptr};
  if (t_last.device == device && t_last.stream == stream) return t_last.counters;
  static std::mutex mutex;
  static std::vector<Entry> entries;
  std::lock_guard<std::mutex> lock(mutex);
  for (const Entry& e : entries)
    if (e.device == device && e.stream == stream) return (t_last = e).counters;
  const size_t bytes = static_cast<size_t>(max_split_output_blocks(sms)) * sizeof(unsigned);
  void* counters = nullptr;
  OnDevice on_device(device);  // cudaMalloc allocates on the current device
  TL_CUDA_CHECK(cudaMalloc(&counters, bytes));
  // On the stream itself, so the first launch that counts is ordered after the zeroing.
  TL_CUDA_CHECK(cudaMemsetAsync(counters, 0, bytes, stream));
  entries.push_back(Entry{device, stream, static_cast<unsigned*>(counters)});
  return (t_last = entries.back()).counters;
}

// Runs the shared functor F (backends/math/reduce_ops.h) over the plan.
template <typename F>
void run(ReducePlan& p, const Tensor& in, const Tensor& out, const char* name) {
  using Op = KernelOp<F>;
  using In = typename Op::In;
  using Acc = typename Op::Acc;
  using Out = typename Op::Out;
  using Partial = typename Op::Partial;
  static_assert(std::is_same_v<typename Partial::In, Acc> &&
                std::is_same_v<typename Partial::Acc, Acc> &&
                std::is_same_v<typename Partial::Out, Out>);
  if (!reduce_ops::writes_dtype<F>(out.dtype()))
    fail<DTypeError>(name, "CUDA kernel expected output dtype ", dtype_of_v<Out>, ", got ",
                     out.dtype());
  const int device = out.device().index();
  const int sms = multiprocessor_count(device);
  const Launch launch = configure(p, sizeof(In), true, sms, [device](int threads) {
    return resident_blocks<Op>(device, threads);
  });
  cudaStream_t s = current_stream_handle(device);
  const In* src = typed_ptr<const In>(in);
  Out* dst = typed_ptr<Out>(out);
  if (!p.to_partial) {
    reduce_kernel<Op><<<launch.grid, launch.block, 0, s>>>(p, src, dst, nullptr, nullptr);
    check_launch(s, "reduce_kernel");
    return;
  }
  const int64_t splits = launch.grid.y;
  const int64_t bytes = splits * p.n_out * static_cast<int64_t>(sizeof(Acc));
  // int64 elements: the scratch is 8-byte aligned for every accumulator type.
  Tensor scratch = make_tensor(Shape{ceil_div(bytes, 8)}, kInt64, out.device());
  Acc* partial = static_cast<Acc*>(scratch.data_ptr());
  // configure() splits only while the output blocks fit the counters.
  if (launch.grid.x > max_split_output_blocks(sms))
    fail<Error>(name, "internal: split reduction over ", launch.grid.x, " output blocks");
  unsigned* arrivals = arrival_counters(device, s, sms);
  reduce_kernel<Op><<<launch.grid, launch.block, 0, s>>>(p, src, dst, partial, arrivals);
  check_launch(s, "reduce_kernel");
}

}  // namespace

void reduce(ReduceOp op, const Tensor& in, const std::vector<bool>& reduce_dims,
            const Tensor& out) {
  if (in.numel() == 0 || out.numel() == 0) return;  // the front-end fills empty reductions
  ReducePlan p{};
  split_dims(
      in.shape(), in.strides(), [&](int64_t d) { return static_cast<bool>(reduce_dims[d]); }, false,
      p);
  p.n_out = out.numel();
  p.n_red = in.numel() / p.n_out;
  if (op == ReduceOp::Mean) p.mean_divisor = static_cast<double>(p.n_red);
  const char* name = reduce_op_name(op);
  dispatch_reduce(op, in.dtype(), [&]<typename F>() { run<F>(p, in, out, name); });
}

void arg_reduce(ArgReduceOp op, const Tensor& in, std::optional<int64_t> dim, const Tensor& out) {
  if (in.numel() == 0 || out.numel() == 0) return;  // validated by the front-end
  // Without a dim every element is reduced in row-major order, so positions are flat indices.
  ReducePlan p{};
  split_dims(
      in.shape(), in.strides(), [&](int64_t d) { return !dim || d == *dim; }, true, p);
  p.n_out = out.numel();
  p.n_red = in.numel() / p.n_out;
  const char* name = reduce_op_name(op);
  dispatch_arg_reduce(op, in.dtype(), [&]<typename F>() { run<F>(p, in, out, name); });
}

}  // namespace tensorlet::cuda

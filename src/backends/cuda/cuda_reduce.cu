// Reductions (sum, prod, mean, max, min, all, any) and arg reductions (argmax, argmin) on CUDA:
// the host plans the problem as coalesced kept x reduced dims, picks the kernel's thread layout
// and, for big reductions with few outputs, a split into slices plus a second pass. Everything is
// enqueued on the current stream; no atomics, so results are the same on every run.
#include <atomic>
#include <cstdint>
#include <type_traits>

#include "backends/cuda/cuda_internal.h"
#include "backends/cuda/cuda_kernels.h"
#include "backends/cuda/cuda_loop.cuh"
#include "backends/cuda/cuda_reduce_kernel.cuh"
#include "backends/cuda/cuda_reduce_plan.cuh"
#include "core/error.h"

namespace tensorlet::cuda {

namespace {

using namespace reduction;

// Streaming multiprocessors of a device, queried once.
int multiprocessor_count(int device) {
  constexpr int kCached = 64;
  static std::atomic<int> cache[kCached];
  if (device < kCached) {
    const int n = cache[device].load(std::memory_order_relaxed);
    if (n > 0) return n;
  }
  int n = 0;
  TL_CUDA_CHECK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device));
  if (device < kCached) cache[device].store(n, std::memory_order_relaxed);
  return n;
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
  const Launch launch = configure(p, sizeof(In), true, sms);
  cudaStream_t s = current_stream_handle(device);
  const In* src = typed_ptr<const In>(in);
  Out* dst = typed_ptr<Out>(out);
  if (!p.to_partial) {
    reduce_kernel<Op><<<launch.grid, launch.block, 0, s>>>(p, src, dst, nullptr);
    check_launch(s, "reduce_kernel");
    return;
  }
  const int64_t splits = launch.grid.y;
  const int64_t bytes = splits * p.n_out * static_cast<int64_t>(sizeof(Acc));
  // int64 elements: the scratch is 8-byte aligned for every accumulator type.
  Tensor scratch = make_tensor(Shape{ceil_div(bytes, 8)}, kInt64, out.device());
  Acc* partial = static_cast<Acc*>(scratch.data_ptr());
  reduce_kernel<Op><<<launch.grid, launch.block, 0, s>>>(p, src, dst, partial);
  check_launch(s, "reduce_kernel");
  ReducePlan q = partials_plan(p, splits);
  const Launch second = configure(q, sizeof(Acc), false, sms);
  reduce_kernel<Partial><<<second.grid, second.block, 0, s>>>(q, partial, dst, nullptr);
  check_launch(s, "reduce_kernel (partials)");
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

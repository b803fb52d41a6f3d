// tensorlet_cuda.h: the extension point for your own CUDA kernels, included from your .cu files.
//
// A kernel of yours runs on tensors through raw typed pointers, on the stream tensorlet's own ops
// use, and is launched through tl::cuda::launch, which names it for the profiler and for errors:
//
//   // add2.cu, compiled by nvcc and linked with tensorlet
//   #include <tensorlet/tensorlet_cuda.h>
//
//   __global__ void add2_kernel(const float* a, const float* b, float* out, int64_t n) {
//     for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
//          i += int64_t{gridDim.x} * blockDim.x)
//       out[i] = a[i] + b[i];
//   }
//
//   tl::Tensor add2(const tl::Tensor& a, const tl::Tensor& b) {
//     // Raw pointers see memory, not strides: make the inputs contiguous (a no-op when they are).
//     tl::Tensor ac = a.contiguous(), bc = b.contiguous();
//     tl::Tensor out = tl::empty(a.shape(), a.options());
//     const int64_t n = out.numel();
//     const unsigned blocks = static_cast<unsigned>(std::min<int64_t>((n + 255) / 256, 65536));
//     tl::cuda::DeviceGuard on(a.device().index());  // launch on the tensors' device
//     tl::cuda::launch("add2", add2_kernel, dim3(blocks), dim3(256), 0,
//                      ac.data<float>(), bc.data<float>(), out.data<float>(), n);
//     return out;  // enqueued, not finished: out.cpu(), item() and the like wait for it
//   }
//
// What you get:
// - tensor.data<T>() is the device address of a CUDA tensor's first element (it throws
//   tl::DTypeError when T is not the tensor's dtype). Memory follows the tensor's strides; a
//   tensor from a factory, an op or .contiguous() is dense in row-major order.
// - tl::cuda::current_raw_stream(device): the stream tensorlet enqueues its ops on for the calling
//   thread (a tl::cuda::StreamGuard changes it). Work you enqueue there is ordered with tensorlet's
//   ops without any synchronization; a tensor freed after your launch is not reused before your
//   kernel ran, because the caching allocator orders reuse on that stream.
// - tl::cuda::launch(op_name, kernel, grid, block, shared_bytes, args...) launches on the current
//   stream of the current device inside a profiler scope named op_name: the profiler shows your
//   kernel under that name, and a tensorlet op called inside the scope names it in its errors.
//   op_name must outlive the program's profiling (a string literal does): the profiler keeps the
//   pointer. The launch is checked: a bad configuration throws tl::CudaError "[op_name] kernel
//   launch failed: ...". With TL_LAUNCH_BLOCKING=1 it also waits for the kernel, so a fault inside
//   it (an out-of-bounds access) is reported as "[op_name] kernel failed (TL_LAUNCH_BLOCKING=1):
//   ..." rather than by some later call. An empty grid (a 0 dimension, as for a 0-element tensor)
//   launches nothing.
//
// Build: compile the .cu with nvcc for your GPU's architecture (-gencode arch=compute_90,code=sm_90
// for H100) in C++20 and link tensorlet and cudart; with meson, a .cu file in an executable that
// depends on dependency('tensorlet') and dependency('cuda'). examples/custom_kernel/ is complete.
#pragma once

#include <cuda_runtime.h>

#include <utility>

#include "tensorlet/tensor/op_scope.h"
#include "tensorlet/tensorlet.h"

namespace tensorlet::cuda {

// True when TL_LAUNCH_BLOCKING=1 was set when the library first looked (same as the library's own
// launches use).
bool launch_blocking();

// The calling thread's current stream of `device` (-1: the current device).
inline cudaStream_t current_raw_stream(int device = -1) { return Stream::current(device).handle(); }

namespace detail {

// Throws CudaError "[op] <what>: <error name>: <error string>". Inline and header-only, so a user's
// .cu file needs nothing from the library beyond the public API.
[[noreturn]] inline void throw_launch_error(const char* op, const char* what, cudaError_t err) {
  fail<CudaError>(op, what, ": ", cudaGetErrorName(err), ": ", cudaGetErrorString(err));
}

// After a launch: the configuration error the launch left, and with TL_LAUNCH_BLOCKING the fault
// the kernel hit.
inline void check_user_launch(const char* op, cudaStream_t stream) {
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) throw_launch_error(op, "kernel launch failed", err);
  if (launch_blocking()) {
    err = cudaStreamSynchronize(stream);
    if (err != cudaSuccess) {
      (void)cudaGetLastError();  // clears a non-sticky error so the next call starts clean
      throw_launch_error(op, "kernel failed (TL_LAUNCH_BLOCKING=1)", err);
    }
  }
}

}  // namespace detail

#if defined(__CUDACC__)
// Launches kernel<<<grid, block, shared_bytes, current stream>>>(args...) inside a profiler scope
// named op_name, then checks it (see the top of this file). Arguments convert to the kernel's
// parameter types as in a call. Needs nvcc: call it from a .cu file.
template <typename... Params, typename... Args>
void launch(const char* op_name, void (*kernel)(Params...), dim3 grid, dim3 block,
            size_t shared_bytes, Args&&... args) {
  profiler::OpScope scope(op_name);
  if (grid.x == 0 || grid.y == 0 || grid.z == 0) return;
  cudaStream_t stream = current_raw_stream();
  kernel<<<grid, block, shared_bytes, stream>>>(std::forward<Args>(args)...);
  detail::check_user_launch(op_name, stream);
}
#endif

}  // namespace tensorlet::cuda

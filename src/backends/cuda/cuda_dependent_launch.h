// Programmatic dependent launch inside graph captures: the next small kernel starts while this one
// runs and waits on the device, hiding most of the gap between kernels of a replayed graph.
#pragma once

#include <cuda_runtime.h>

#include "tensorlet/backends/cuda/cuda_capture.h"

namespace tensorlet::cuda {

// True when `device` can launch kernels early (compute capability 9.0 or later) and
// TL_CUDA_NO_DEPENDENT_LAUNCH is not set (it switches the feature off, for comparisons).
bool dependent_launch_supported(int device);

// Whether a kernel that opts in (it calls wait_for_prior_kernels before touching memory) launches
// with the programmatic-serialization attribute now: only while the thread captures a graph,
// where the launch gap is what a replay of small kernels pays; eager launches stay plain (their
// cost is on the host, and cudaLaunchKernel is the cheaper call).
inline bool dependent_launch(int device) {
  return t_open_captures != 0 && dependent_launch_supported(device);
}

// cudaLaunchKernel, or cudaLaunchKernelExC with the programmatic-serialization attribute.
inline cudaError_t launch_kernel(const void* fn, dim3 grid, dim3 block, void** args, size_t smem,
                                 cudaStream_t stream, bool dependent) {
  if (!dependent) return cudaLaunchKernel(fn, grid, block, args, smem, stream);
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = smem;
  config.stream = stream;
  config.attrs = &attr;
  config.numAttrs = 1;
  return cudaLaunchKernelExC(&config, fn, args);
}

#if defined(__CUDACC__)
// Device side of an opted-in kernel. wait_for_prior_kernels returns once the kernels this one
// depends on have finished and their writes are visible (at once when it was launched plainly);
// nothing before it may read what they write or write what they read. allow_next_kernel then lets
// the next opted-in kernel launch while this one runs (it will wait for this one in turn).
__device__ __forceinline__ void wait_for_prior_kernels() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void allow_next_kernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
#endif

}  // namespace tensorlet::cuda

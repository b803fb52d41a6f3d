// DLPack exchange (the standard every framework implements, Debian's libdlpack-dev): a tensor
// handed to another library, or taken from one, without copying. Include <dlpack/dlpack.h> to
// read a DLManagedTensor's fields; this header needs only its name.
#pragma once

#include <cstdint>
#include <optional>

#include "tensorlet/tensor/tensor.h"

struct DLManagedTensor;

namespace tensorlet {

// stream (CUDA tensors only; DLPack's encoding, as __dlpack__(stream=...)): 1 the legacy default
// stream, 2 the per-thread default stream, -1 no ordering at all, any other value a cudaStream_t.
// std::nullopt means the legacy default stream, which is LibTorch's current stream unless a
// c10::cuda stream guard changed it. 0 is ambiguous in DLPack and refused (tl::Error).

// A DLManagedTensor viewing `t` (same memory, sizes, strides; CPU, pinned CPU or CUDA; every
// dtype, bool as kDLBool and bfloat16 as kDLBfloat). It keeps t's storage alive until its
// deleter runs, which the consumer must call once. The work this library enqueued on t's GPU
// so far is ordered before anything later enqueued on `stream` (an event, no host wait).
// Errors (undefined tensor, a capture in progress) name tl::to_dlpack.
DLManagedTensor* to_dlpack(const Tensor& t, std::optional<std::intptr_t> stream = std::nullopt);

// A tensor over `src`'s memory (not copied): any strides (non-negative) and byte offset; on the
// CPU (kDLCPU, kDLCUDAHost) or cuda:N (kDLCUDA, kDLCUDAManaged). On success the tensor owns src:
// src->deleter runs once its last view is gone (after the GPU finished the work queued on it);
// on an error nothing is taken and the caller still owns src. The work the producer enqueued on
// `stream` is waited for by this library's current stream before its next op (no host wait).
// Unsupported dtypes (lanes > 1, complex, ...) are DTypeError, devices DeviceError, bad sizes or
// strides ShapeError, all naming tl::from_dlpack.
Tensor from_dlpack(DLManagedTensor* src, std::optional<std::intptr_t> stream = std::nullopt);

}  // namespace tensorlet

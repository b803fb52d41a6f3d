// Copies between two GPUs (cuda_copy_peer.cpp): directly with peer access, else staged through
// pinned host memory.
#pragma once

#include "tensorlet/tensor/tensor.h"

namespace tensorlet::cuda {

// src and out on two different CUDA devices, any strides and dtypes; asynchronous for the host.
void copy_between_devices(const Tensor& src, const Tensor& out);

}  // namespace tensorlet::cuda

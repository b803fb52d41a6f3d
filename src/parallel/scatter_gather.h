// Splitting a batch along dim 0 over devices and joining per-device results back (DataParallel's
// data movement), with torch.chunk's chunk sizes.
#pragma once

#include <cstdint>
#include <vector>

#include "tensorlet/tensor/device.h"
#include "tensorlet/tensor/tensor.h"

namespace tensorlet::parallel {

// The sizes torch.chunk gives n items split `parts` ways: ceil(n / parts) each, the last one
// smaller, and fewer than `parts` chunks when the items run out first ({} for n == 0).
std::vector<int64_t> chunk_sizes(int64_t n, int64_t parts);

// input's chunks along dim 0, chunk i on devices[i] (only as many devices as there are chunks).
// A CPU input bound for GPUs is pinned once, so every chunk's copy is asynchronous; a chunk that
// is already on its device is a view of input.
std::vector<Tensor> scatter(const Tensor& input, const std::vector<Device>& devices);

// The outputs concatenated along dim 0 on `device`; `op` names the caller in errors.
Tensor gather(const std::vector<Tensor>& outputs, Device device,
              const char* op = "tl::parallel::gather");

}  // namespace tensorlet::parallel

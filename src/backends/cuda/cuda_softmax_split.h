// The softmax kernel for few long rows held on chip in one wave (cuda_softmax_split.cu), called by
// cuda_softmax.cu when its register-resident kernel would need more than one wave or not fit.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace tensorlet::cuda {

// Softmax (log: log-softmax) of `rows` contiguous rows of n elements, `in` to `out` on `stream` of
// `device` (the current device). Each row is split over a cluster of blocks (sm_90) that hold
// their slices in registers and shared memory, read x once and exchange max and sum through
// distributed shared memory. Launches and returns true when both pointers are 16-byte aligned, n
// is a multiple of the 16-byte vector, the build's sm_90 code runs on the device and every row
// is resident at once (one wave); launches nothing and returns false otherwise. T is float,
// double, Half or BFloat16.
template <typename T>
bool softmax_split(const T* in, T* out, int64_t rows, int64_t n, bool log, int device,
                   cudaStream_t stream);

}  // namespace tensorlet::cuda

// Raw floors for bench_cuda: an empty kernel launch, a float4 add and CUB's sorts, with no
// tensorlet in between.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace bench {

// Enqueues an empty <<<1, 1>>> kernel on `stream`, unchecked: the cheapest launch there is.
void launch_empty(cudaStream_t stream);
// Enqueues a <<<1, 1>>> kernel that runs for about `ns` nanoseconds (the GPU's timer), unchecked.
void launch_spin(uint64_t ns, cudaStream_t stream);
// out = a + b over n floats with 16-byte loads and stores; pointers must be 16-byte aligned.
void launch_add(const float* a, const float* b, float* out, int64_t n, cudaStream_t stream);

// CUB's radix sort of n (float key, int64 value) pairs, ascending, as CUB documents its use: with
// temp == nullptr only temp_bytes is set. The floor of row O2's 1-D sort.
cudaError_t sort_pairs(void* temp, size_t& temp_bytes, const float* keys_in, float* keys_out,
                       const int64_t* values_in, int64_t* values_out, int64_t n,
                       cudaStream_t stream);
// The same per segment [offsets[i], offsets[i + 1]) of `segments` rows (int offsets, on the
// device): the floor of row O2's sort along the last dim.
cudaError_t segmented_sort_pairs(void* temp, size_t& temp_bytes, const float* keys_in,
                                 float* keys_out, const int64_t* values_in, int64_t* values_out,
                                 int64_t n, int64_t segments, const int* offsets,
                                 cudaStream_t stream);

// out[index[i]] += src[i] for i < n with one atomicAdd each, no bounds check: the floor of row
// O5's scatter_add and index_add.
void launch_scatter_add(const float* src, const int64_t* index, float* out, int64_t n,
                        cudaStream_t stream);

}  // namespace bench

// Raw floors for bench_cuda: an empty kernel launch and a float4 add, with no tensorlet in between.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace bench {

// Enqueues an empty <<<1, 1>>> kernel on `stream`, unchecked: the cheapest launch there is.
void launch_empty(cudaStream_t stream);
// out = a + b over n floats with 16-byte loads and stores; pointers must be 16-byte aligned.
void launch_add(const float* a, const float* b, float* out, int64_t n, cudaStream_t stream);

}  // namespace bench

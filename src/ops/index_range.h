// The range check every indexing front-end runs before a kernel writes: gather, index_select, the
// scatter family, advanced indexing, one shared message.
#pragma once

#include <cstdint>

#include "tensorlet/backends/backend.h"
#include "tensorlet/tensor/error.h"
#include "tensorlet/tensor/tensor.h"

namespace tensorlet {

// Records that every value of index's storage is in [lo, hi], for an index the library built
// itself (conv2d's and the pools' im2col index): check_index_range then takes the bounds from
// here, with no pass over the values and no wait on the device (a CUDA LeNet step waited for
// the GPU at each of its window gathers and their gradients). Holds until the storage is written
// (its version changes) or freed.
void trust_index_values(const Tensor& index, int64_t lo, int64_t hi);
// The trusted bounds of index's storage, if any (index_range.cpp).
bool trusted_index_bounds(const Tensor& index, int64_t* lo, int64_t* hi);

// Every index value in [lo_bound, size) along dim (lo_bound -size where negative indices wrap),
// found by the index's backend in one pass (one wait on a device) unless the index is trusted.
// Returns the smallest value (0 for an empty index; the trusted lower bound).
inline int64_t check_index_range(const char* op, const Tensor& index, int64_t size, int64_t dim,
                                 int64_t lo_bound = 0) {
  if (index.numel() == 0) return 0;
  int64_t lo = 0, hi = 0;
  if (!trusted_index_bounds(index, &lo, &hi))
    backend_for(index.device()).index_bounds(index, &lo, &hi);
  if (lo < lo_bound || hi >= size)
    fail<IndexError>(op, "index ", lo < lo_bound ? lo : hi, " is out of bounds for dimension ", dim,
                     " with size ", size, " (expected indices in [", lo_bound, ", ", size, "))");
  return lo;
}

}  // namespace tensorlet

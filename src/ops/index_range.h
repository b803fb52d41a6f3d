// The range check every indexing front-end runs before a kernel writes: gather, index_select, the
// scatter family, advanced indexing, one shared message.
#pragma once

#include <cstdint>

#include "tensorlet/backends/backend.h"
#include "tensorlet/tensor/error.h"
#include "tensorlet/tensor/tensor.h"

namespace tensorlet {

// Every index value in [lo_bound, size) along dim (lo_bound -size where negative indices wrap),
// found by the index's backend in one pass (one wait on a device). Returns the smallest value (0
// for an empty index).
inline int64_t check_index_range(const char* op, const Tensor& index, int64_t size, int64_t dim,
                                 int64_t lo_bound = 0) {
  if (index.numel() == 0) return 0;
  int64_t lo = 0, hi = 0;
  backend_for(index.device()).index_bounds(index, &lo, &hi);
  if (lo < lo_bound || hi >= size)
    fail<IndexError>(op, "index ", lo < lo_bound ? lo : hi, " is out of bounds for dimension ", dim,
                     " with size ", size, " (expected indices in [", lo_bound, ", ", size, "))");
  return lo;
}

}  // namespace tensorlet

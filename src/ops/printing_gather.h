// Reads only the elements a tensor's repr shows (past `threshold` elements torch shows the first
// and last `edgeitems` along each dim), so printing costs the same for a huge or broadcast tensor,
// on any device.
#pragma once

#include <cstdint>
#include <vector>

#include "tensorlet/tensor/shape.h"
#include "tensorlet/ops/print_options.h"

namespace tensorlet {

class Tensor;

namespace printing {

// A repr showing more elements than this throws OutOfMemoryError instead of building a string of
// hundreds of MB: a tensor under a huge threshold, or summarised with nothing elided (every dim at
// most 2 * edgeitems long, as a broadcast of shape [6, 6, 6, 6, 6, 6, 6, 6, 6, 6], of which torch
// prints all 60M).
inline constexpr int64_t kMaxShownElements = int64_t{1} << 24;

// Whether a dim of n elements shows its first and last `edgeitems` around a "...".
inline bool elides(int64_t n, bool summarize, int64_t edgeitems) {
  return summarize && n / 2 >= edgeitems && n > 2 * edgeitems;
}

// The shown elements of a non-empty tensor, row-major over `grid` (per dim: how many of its
// indices are shown), copied to the host exactly: integers (and bools as 0/1) in `ints`,
// floating values in `floats`.
struct ShownElements {
  bool summarize = false;
  Shape grid;
  bool floating = false;
  std::vector<int64_t> ints;
  std::vector<double> floats;
};

// Throws OutOfMemoryError naming `op` past kMaxShownElements.
ShownElements gather_shown(const Tensor& t, const char* op, const PrintOptions& options);

}  // namespace printing
}  // namespace tensorlet

// Reads only the elements a tensor's repr shows (past 1000 elements torch shows the first and
// last 3 along each dim), so printing costs the same for a huge or broadcast tensor, on any device.
#pragma once

#include <cstdint>
#include <vector>

#include "tensorlet/core/shape.h"

namespace tensorlet {

class Tensor;

namespace printing {

inline constexpr int64_t kThreshold = 1000;  // torch's PRINT_OPTS: summarise past this many
inline constexpr int64_t kEdgeItems = 3;     // elements shown at each end of a summarised dim
// A repr showing more elements than this throws OutOfMemoryError instead of building a string of
// hundreds of MB. Only reachable when summarising elides nothing: every dim has at most 6
// elements, as in a broadcast of shape [6, 6, 6, 6, 6, 6, 6, 6, 6, 6] (torch prints all 60M).
inline constexpr int64_t kMaxShownElements = int64_t{1} << 24;

// Whether a dim of n elements shows its first and last kEdgeItems around a "...".
inline bool elides(int64_t n, bool summarize) { return summarize && n > 2 * kEdgeItems; }

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
ShownElements gather_shown(const Tensor& t, const char* op);

}  // namespace printing
}  // namespace tensorlet

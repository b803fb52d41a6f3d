// gather_shown: the storage offsets of the shown elements, gathered on the tensor's device with
// one index_select (or read as one run when they are contiguous) and copied to the host.
#include "tensorlet/ops/printing_gather.h"

#include <algorithm>

#include "tensorlet/ops/factories.h"
#include "tensorlet/ops/indexing.h"
#include "tensorlet/core/tensor.h"

namespace tensorlet::printing {

namespace {

// The indices of a dim that are shown, in order (the "..." is the printer's business).
std::vector<int64_t> shown_along(int64_t n, bool summarize) {
  std::vector<int64_t> idx;
  if (elides(n, summarize)) {
    for (int64_t i = 0; i < kEdgeItems; ++i) idx.push_back(i);
    for (int64_t i = n - kEdgeItems; i < n; ++i) idx.push_back(i);
  } else {
    for (int64_t i = 0; i < n; ++i) idx.push_back(i);
  }
  return idx;
}

}  // namespace

ShownElements gather_shown(const Tensor& t, const char* op) {
  ShownElements out;
  out.summarize = t.numel() > kThreshold;
  out.floating = is_floating_point(t.dtype());
  const int64_t ndim = t.dim();
  std::vector<std::vector<int64_t>> along(static_cast<size_t>(ndim));
  // Not summarised: at most kThreshold elements. Summarised: each dim shows at most
  // 2 * kEdgeItems, so the product stays below 6^16 and cannot overflow.
  int64_t count = 1;
  for (int64_t d = 0; d < ndim; ++d) {
    along[d] = shown_along(t.shape()[d], out.summarize);
    out.grid.push_back(static_cast<int64_t>(along[d].size()));
    count *= out.grid[d];
  }
  if (count > kMaxShownElements)
    fail<OutOfMemoryError>(op, "printing a tensor of shape ", t.shape(), " would show ", count,
                           " elements (nothing is elided from dims of at most ", 2 * kEdgeItems,
                           "), more than the limit of ", kMaxShownElements);

  // Storage offsets of the shown elements, row-major over the grid (an odometer over `along`).
  std::vector<int64_t> offsets(static_cast<size_t>(count));
  std::vector<int64_t> pos(static_cast<size_t>(ndim), 0);
  for (int64_t k = 0; k < count; ++k) {
    int64_t offset = t.offset();
    for (int64_t d = 0; d < ndim; ++d) offset += along[d][pos[d]] * t.strides()[d];
    offsets[k] = offset;
    for (int64_t d = ndim - 1; d >= 0; --d) {
      if (++pos[d] < out.grid[d]) break;
      pos[d] = 0;
    }
  }
  const auto [lo_it, hi_it] = std::minmax_element(offsets.begin(), offsets.end());
  const int64_t lo = *lo_it, span = *hi_it - lo + 1;
  // Only the storage between the first and last shown element, as a 1-D view; a contiguous
  // tensor's shown elements are that whole view, anything else is gathered on its device.
  Tensor flat = make_view(t, {span}, {1}, lo);
  bool run = span == count;
  for (int64_t k = 0; run && k < count; ++k) run = offsets[k] == lo + k;
  Tensor shown = flat;
  if (!run) {
    for (int64_t& o : offsets) o -= lo;
    shown = index_select(flat, 0, from_vector(offsets, {}, t.device()));
  }
  if (out.floating) {
    out.floats = shown.to_vector<double>();
  } else if (t.dtype() == kBool) {
    const std::vector<bool> bits = shown.to_vector<bool>();
    out.ints.assign(bits.begin(), bits.end());
  } else {
    out.ints = shown.to_vector<int64_t>();
  }
  return out;
}

}  // namespace tensorlet::printing

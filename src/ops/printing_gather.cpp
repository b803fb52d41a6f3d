// gather_shown: the storage offsets of the shown elements, gathered on the tensor's device with
// one index_select (or read as one run when they are contiguous) and copied to the host.
#include "tensorlet/ops/printing_gather.h"

#include <algorithm>
#include <string>

#include "tensorlet/ops/factories.h"
#include "tensorlet/ops/indexing.h"
#include "tensorlet/tensor/tensor.h"

namespace tensorlet::printing {

namespace {

// The indices of a dim that are shown, in order (the "..." is the printer's business).
std::vector<int64_t> shown_along(int64_t n, bool summarize, int64_t edgeitems) {
  std::vector<int64_t> idx;
  if (elides(n, summarize, edgeitems)) {
    for (int64_t i = 0; i < edgeitems; ++i) idx.push_back(i);
    for (int64_t i = n - edgeitems; i < n; ++i) idx.push_back(i);
  } else {
    for (int64_t i = 0; i < n; ++i) idx.push_back(i);
  }
  return idx;
}

}  // namespace

ShownElements gather_shown(const Tensor& t, const char* op, const PrintOptions& options) {
  ShownElements out;
  out.summarize = t.numel() > options.threshold;
  out.floating = is_floating_point(t.dtype());
  const int64_t ndim = t.dim();
  std::vector<std::vector<int64_t>> along(static_cast<size_t>(ndim));
  int64_t count = 1;
  bool overflow = false;  // more than int64 can count: past the limit anyway
  for (int64_t d = 0; d < ndim; ++d) {
    const int64_t n = t.shape()[d];
    const int64_t shown = elides(n, out.summarize, options.edgeitems) ? 2 * options.edgeitems : n;
    out.grid.push_back(shown);
    overflow = overflow || __builtin_mul_overflow(count, shown, &count);
  }
  if (std::find(out.grid.begin(), out.grid.end(), 0) != out.grid.end()) {
    count = 0;  // edge items of 0: nothing but ellipses
    overflow = false;
  }
  if (overflow || count > kMaxShownElements)
    fail<OutOfMemoryError>(op, "printing a tensor of shape ", t.shape(), " would show ",
                           overflow ? std::string("more than 2^63") : std::to_string(count),
                           " elements (threshold ", options.threshold, ", edgeitems ",
                           options.edgeitems, "), more than the limit of ", kMaxShownElements);
  for (int64_t d = 0; d < ndim; ++d)
    along[d] = shown_along(t.shape()[d], out.summarize, options.edgeitems);
  if (count == 0) return out;

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

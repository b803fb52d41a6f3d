// Shared by the double-reference tests of the numerics, scans and reductions: the tolerance of a
// result computed in float (half types rounding once) or double, and the [outer, n, inner] view of
// a shape along a dim.
#pragma once

#include <cstdint>

#include "tensorlet/tensorlet.h"

namespace tl_test {

struct Tols {
  double rtol, atol;
};
inline Tols float_result_tols(tl::DType d) {
  switch (d) {
    case tl::kFloat64:
      return {1e-12, 1e-13};
    case tl::kFloat16:
      return {2e-3, 2e-3};
    case tl::kBFloat16:
      return {1.6e-2, 1.6e-2};
    default:
      return {2e-5, 2e-6};
  }
}

// The [outer, n, inner] view of a shape along dim (a 0-dim tensor: one element).
struct Geometry {
  int64_t outer = 1, n = 1, inner = 1;
};
inline Geometry geometry(const tl::Shape& s, int64_t dim) {
  Geometry g;
  if (s.size() == 0) return g;
  if (dim < 0) dim += s.size();
  for (int64_t d = 0; d < dim; ++d) g.outer *= s[d];
  g.n = s[dim];
  for (int64_t d = dim + 1; d < s.size(); ++d) g.inner *= s[d];
  return g;
}

}  // namespace tl_test

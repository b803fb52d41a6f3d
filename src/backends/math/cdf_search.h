// Inverse-CDF lookup for multinomial sampling with replacement, shared by every backend.
#pragma once

#include <cstdint>

#include "tensorlet/tensor/host_device.h"

namespace tensorlet::math {

// The category of a uniform u in [0, 1) for a row's cumulative weights cdf[0..n) (non-decreasing,
// cdf[n - 1] > 0): the first j with cdf[j] > u * total. Zero-weight categories repeat the previous
// cdf value, so they are never the first above it. When rounding puts u * total at the total, no
// cdf value is above it: then the first j whose cdf reaches the total (the last non-zero
// category), never a trailing zero-weight one.
TL_HOST_DEVICE inline int64_t cdf_search(const double* cdf, int64_t n, double u) {
  const double total = cdf[n - 1];
  const double x = u * total;
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (cdf[mid] > x)
      hi = mid;
    else
      lo = mid + 1;
  }
  if (lo < n) return lo;
  lo = 0;
  hi = n - 1;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (cdf[mid] >= total)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

}  // namespace tensorlet::math

// The per-element math of searchsorted and histc, shared by every backend so that CPU and device
// results agree to the bit, and written as torch's kernels compute it so that they agree with
// torch too (NaN included).
#pragma once

#include <cstdint>

#include "tensorlet/tensor/dtype.h"
#include "tensorlet/tensor/host_device.h"

namespace tensorlet {

// torch's bisection over a row of len boundaries (through sorter, the row's own permutation,
// when not null): left finds the first boundary >= v, right the first > v. It is written with
// torch's negated comparisons and midpoints, because NaN compares false: a NaN value lands at
// len, and NaN boundaries (sorted last by torch.sort) are stepped over as torch steps over them.
template <typename T>
TL_HOST_DEVICE inline int64_t searchsorted_position(const T* row, const int64_t* sorter,
                                                    int64_t len, T value, bool right) {
  using C = compute_t<T>;
  const C v = static_cast<C>(value);
  int64_t start = 0, end = len;
  while (start < end) {
    const int64_t mid = start + ((end - start) >> 1);
    const C b = static_cast<C>(sorter ? row[sorter[mid]] : row[mid]);
    if (right ? !(b > v) : !(b >= v))
      start = mid + 1;
    else
      end = mid;
  }
  return start;
}

// Rounds a float result to T and back: each step of the half types' arithmetic rounds as
// c10::Half's operators do (a no-op for float and double).
template <typename T>
TL_HOST_DEVICE inline compute_t<T> round_to(compute_t<T> x) {
  if constexpr (is_reduced_float_v<T>)
    return static_cast<float>(T(x));
  else
    return x;
}

// The histc bin of v among `bins` equal bins over [lo, hi] (lo < hi, both already of T), or -1
// when v lies outside [lo, hi] or is NaN. As torch's histc: (v - lo) * bins / (hi - lo) in T's
// own arithmetic, truncated; hi itself falls in the last bin. A position past the last bin (a
// range whose width overflows T) is clamped into it rather than written out of bounds.
template <typename T>
TL_HOST_DEVICE inline int64_t histc_bin(T value, T lo, T hi, int64_t bins) {
  using C = compute_t<T>;
  const C v = static_cast<C>(value), l = static_cast<C>(lo), h = static_cast<C>(hi);
  if (!(v >= l && v <= h)) return -1;
  const C scaled = round_to<T>(round_to<T>(v - l) * round_to<T>(static_cast<C>(bins)));
  const C pos = round_to<T>(scaled / round_to<T>(h - l));
  if (!(pos < round_to<T>(static_cast<C>(bins)))) return bins - 1;
  const int64_t b = static_cast<int64_t>(pos);
  return b < bins ? b : bins - 1;
}

}  // namespace tensorlet

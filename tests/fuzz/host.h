// The fuzzer's plain host model of a tensor: values in a flat array, geometry as
// shape/strides/offset.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "tensorlet/tensorlet.h"

namespace fuzz {

using tl::DType;
using Dims = std::vector<int64_t>;

// One element: integers and bools live in i, floating values in f (float32 values are rounded).
struct V {
  int64_t i = 0;
  double f = 0;
};

// Floating dtypes keep their values in V::f (already rounded to the dtype).
inline bool is_float(DType d) { return tl::is_floating_point(d); }
inline bool is_half(DType d) { return tl::is_reduced_float(d); }
inline bool is_int(DType d) { return !is_float(d) && d != tl::kBool; }

// The range of an integer dtype (int64's for any other).
inline int64_t int_lo(DType d) {
  if (!is_int(d)) return INT64_MIN;
  return tl::dispatch_dtype<tl::kIntegralDTypes>(
      d, []<typename T>() { return static_cast<int64_t>(std::numeric_limits<T>::min()); });
}
inline int64_t int_hi(DType d) {
  if (!is_int(d)) return INT64_MAX;
  return tl::dispatch_dtype<tl::kIntegralDTypes>(
      d, []<typename T>() { return static_cast<int64_t>(std::numeric_limits<T>::max()); });
}

// Rounds a value to a floating dtype: float32 by a cast; float16 / bfloat16 through float, as
// every conversion to them does (tl::Half and tl::BFloat16 round to nearest even).
inline double round_float(double f, DType d) {
  if (!is_float(d)) return f;
  return tl::dispatch_dtype<tl::kFloatingDTypes>(d, [f]<typename T>() {
    if constexpr (tl::is_reduced_float_v<T>)
      return static_cast<double>(static_cast<float>(T(static_cast<float>(f))));
    else
      return static_cast<double>(static_cast<T>(f));
  });
}

inline int64_t numel_of(const Dims& s) {
  int64_t n = 1;
  for (int64_t x : s) n *= x;
  return n;
}

inline Dims contiguous_strides_of(const Dims& s) {
  Dims st(s.size());
  int64_t acc = 1;
  for (size_t k = s.size(); k-- > 0;) {
    st[k] = acc;
    acc *= std::max<int64_t>(s[k], 1);
  }
  return st;
}

// Wraps an int64 to int32 the way a two's-complement truncation does.
inline int64_t wrap32(int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(v)); }
// Wraps an int64 into an integer dtype (modulo 2^bits); other dtypes pass through.
inline int64_t wrap_to(int64_t v, DType d) {
  switch (d) {
    case tl::kUInt8:
      return static_cast<uint8_t>(v);
    case tl::kInt8:
      return static_cast<int8_t>(static_cast<uint8_t>(v));
    case tl::kInt16:
      return static_cast<int16_t>(static_cast<uint16_t>(v));
    case tl::kInt32:
      return wrap32(v);
    default:
      return v;
  }
}
inline int64_t wrap_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
inline int64_t wrap_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

// True when a float value cannot be converted to `to` without the x86 out-of-range rule (dtypes
// narrower than int32 convert through int32, as torch on x86).
inline bool float_out_of_int_range(double f, DType to) {
  if (std::isnan(f)) return true;
  if (to != tl::kInt64) return !(f > -2147483649.0 && f < 2147483648.0);
  return !(f >= -9223372036854775808.0 && f < 9223372036854775808.0);
}

// Converts one element between dtypes: bool is "non-zero", floats truncate toward zero, out of
// range floats give the integer minimum (x86's cvtt result, which torch inherits; int32's for the
// narrower types, then wrapped), ints wrap, float16/bfloat16 round through float.
inline V cast_value(V v, DType from, DType to) {
  V r;
  if (to == tl::kBool) {
    r.i = is_float(from) ? (v.f != 0 || std::isnan(v.f)) : (v.i != 0);
    return r;
  }
  if (is_float(to)) {
    // Integers go to float32 and the half types through float (int64 2^62 + 1 is not exact).
    const double f = is_float(from)       ? v.f
                     : to == tl::kFloat64 ? static_cast<double>(v.i)
                                          : static_cast<double>(static_cast<float>(v.i));
    r.f = round_float(f, to);
    return r;
  }
  if (is_float(from)) {
    if (float_out_of_int_range(v.f, to)) {
      // x86 converts through the destination width (int32 for the narrower types).
      r.i = to == tl::kInt64 ? std::numeric_limits<int64_t>::min()
                             : std::numeric_limits<int32_t>::min();
    } else {
      r.i = static_cast<int64_t>(std::trunc(v.f));
    }
  } else {
    r.i = v.i;
  }
  r.i = wrap_to(r.i, to);
  return r;
}

// A contiguous row-major host array.
struct HostArray {
  DType dtype = tl::kFloat32;
  Dims shape;
  std::vector<V> v;
};

// A strided window onto a flat host array (the model of a view).
struct Geom {
  Dims shape, strides;
  int64_t offset = 0;
};

// Visits every index of `shape` in row-major order: f(flat_index, index_vector).
template <typename F>
void for_each_index(const Dims& shape, F&& f) {
  const int64_t n = numel_of(shape);
  Dims idx(shape.size(), 0);
  for (int64_t flat = 0; flat < n; ++flat) {
    f(flat, idx);
    for (size_t k = shape.size(); k-- > 0;) {
      if (++idx[k] < shape[k]) break;
      idx[k] = 0;
    }
  }
}

inline int64_t offset_of(const Geom& g, const Dims& idx) {
  int64_t o = g.offset;
  for (size_t k = 0; k < idx.size(); ++k) o += idx[k] * g.strides[k];
  return o;
}

// Reads the view `g` of `storage` into a contiguous array.
inline HostArray gather_view(const std::vector<V>& storage, DType dtype, const Geom& g) {
  HostArray out{dtype, g.shape, {}};
  out.v.resize(numel_of(g.shape));
  for_each_index(g.shape,
                 [&](int64_t flat, const Dims& idx) { out.v[flat] = storage[offset_of(g, idx)]; });
  return out;
}

// True when the values of two arrays agree exactly (NaN equals NaN; -0 equals 0).
inline bool same_value(const V& a, const V& b, DType d) {
  if (!is_float(d)) return a.i == b.i;
  if (std::isnan(a.f) || std::isnan(b.f)) return std::isnan(a.f) && std::isnan(b.f);
  return a.f == b.f;
}

}  // namespace fuzz

// Vector-lane loops over contiguous runs, shared by the CPU reductions and softmax: a float32 sum
// in float64 fed by short float32 partials, and NaN-propagating max/min. Written with GCC vector
// types (16 bytes: the x86-64 baseline's SSE2), which the compiler leaves scalar for select-based
// loops and for float-to-double sums written element by element.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace tensorlet::cpu {

template <typename T>
struct VecOf {
  typedef T type __attribute__((vector_size(16)));
};
template <typename T>
using Vec = typename VecOf<T>::type;

template <typename T>
inline Vec<T> load_vec(const T* p) {
  Vec<T> v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <typename T>
inline void store_vec(T* p, Vec<T> v) {
  std::memcpy(p, &v, sizeof v);
}

// Elements of a float32 sum added in float32 before they reach the float64 lanes: 16 lanes, each
// adding 8 elements pairwise. A float32 partial holds at most 8 values, so the sum keeps float64's
// accuracy to within three float32 roundings of those small partials, at the speed of float32
// adds (a float64 add per element would halve it).
inline constexpr int64_t kFloatSumBlock = 16 * 8;

// Sum of p[0, n) (n a multiple of kFloatSumBlock), added to `acc`. The lane and block structure
// is fixed, so the result depends only on the data.
inline double sum_float_blocks(const float* p, int64_t n, double acc) {
  using F = Vec<float>;
  using D = Vec<double>;
  D lane[8] = {};
  for (int64_t i = 0; i < n; i += kFloatSumBlock) {
    for (int k = 0; k < 4; ++k) {
      const float* q = p + i + 4 * k;  // element 16 * b of the block, for b = 0..7
      const F s = ((load_vec(q) + load_vec(q + 16)) + (load_vec(q + 32) + load_vec(q + 48))) +
                  ((load_vec(q + 64) + load_vec(q + 80)) + (load_vec(q + 96) + load_vec(q + 112)));
      lane[2 * k] += D{s[0], s[1]};
      lane[2 * k + 1] += D{s[2], s[3]};
    }
  }
  for (int w = 4; w > 0; w /= 2)
    for (int k = 0; k < w; ++k) lane[k] += lane[k + w];
  return acc + (lane[0][0] + lane[0][1]);
}

// max (kMax) or min of p[0, n) for n a multiple of 4 vectors, NaN-propagating: NaN when any
// element is NaN, else the extreme value (as `init` folded in first). T is float or double.
template <bool kMax, typename T>
T extremum_lanes(const T* p, int64_t n, T init) {
  static_assert(std::is_floating_point_v<T>);
  using V = Vec<T>;
  using M = decltype(V{} < V{});
  constexpr int64_t w = sizeof(V) / sizeof(T);
  V best[4];
  M nan[4];
  for (int k = 0; k < 4; ++k) {
    best[k] = V{} + init;
    nan[k] = M{};
  }
  for (int64_t i = 0; i < n; i += 4 * w) {
    for (int k = 0; k < 4; ++k) {
      const V v = load_vec(p + i + k * w);
      best[k] = (kMax ? best[k] < v : v < best[k]) ? v : best[k];
      nan[k] |= v != v;
    }
  }
  T r = init;
  bool any_nan = init != init;
  for (int k = 0; k < 4; ++k) {
    for (int j = 0; j < w; ++j) {
      any_nan |= nan[k][j] != 0;
      r = (kMax ? r < best[k][j] : best[k][j] < r) ? best[k][j] : r;
    }
  }
  return any_nan ? static_cast<T>(NAN) : r;
}

// x | nan as bits: an all-ones NaN in the lanes where nan is set (as PyTorch's vectorized max).
template <typename V, typename M>
inline V or_nan(V x, M nan) {
  return reinterpret_cast<V>(reinterpret_cast<M>(x) | nan);
}

// The larger (kMax; else smaller) of x and v, ignoring NaN (a packed max/min).
template <bool kMax, typename V>
inline V extremum_plain(V x, V v) {
  return (kMax ? x < v : v < x) ? v : x;
}

// The larger (kMax; else smaller) of x and v, NaN when either is.
template <bool kMax, typename V>
inline V extremum_of(V x, V v) {
  return or_nan(extremum_plain<kMax>(x, v), (x != x) | (v != v));
}

// a[j] = max(a[j], rows[k * rs + j] for k < m) (kMax; else min) for j < n, NaN-propagating as
// ExtremumOp::combine: the outer shape's fold of rows into a tile's accumulators, each
// accumulator loaded and stored once. Eight rows at a time go through a tree of packed max/min
// and, beside it, a tree of unordered tests (NaN anywhere), merged once per accumulator. T is
// float or double.
template <bool kMax, typename T>
void extremum_rows(T* a, const T* rows, int64_t rs, int64_t m, int64_t n) {
  using V = Vec<T>;
  constexpr int64_t w = sizeof(V) / sizeof(T);
  int64_t k0 = 0;
  for (; k0 + 8 <= m; k0 += 8) {
    const T* r = rows + k0 * rs;
    int64_t j = 0;
    for (; j + w <= n; j += w) {
      V v[8];
      for (int k = 0; k < 8; ++k) v[k] = load_vec(r + k * rs + j);
      const auto nan = (((v[0] != v[0]) | (v[1] != v[1])) | ((v[2] != v[2]) | (v[3] != v[3]))) |
                       (((v[4] != v[4]) | (v[5] != v[5])) | ((v[6] != v[6]) | (v[7] != v[7])));
      const V x = extremum_plain<kMax>(
          extremum_plain<kMax>(extremum_plain<kMax>(v[0], v[1]), extremum_plain<kMax>(v[2], v[3])),
          extremum_plain<kMax>(extremum_plain<kMax>(v[4], v[5]), extremum_plain<kMax>(v[6], v[7])));
      store_vec(a + j, extremum_of<kMax>(load_vec(a + j), or_nan(x, nan)));
    }
    for (; j < n; ++j)
      for (int64_t k = 0; k < 8; ++k) {
        const T v = r[k * rs + j];
        a[j] = ((kMax ? a[j] < v : v < a[j]) || v != v) ? v : a[j];
      }
  }
  for (; k0 < m; ++k0) {
    const T* r = rows + k0 * rs;
    int64_t j = 0;
    for (; j + w <= n; j += w)
      store_vec(a + j, extremum_of<kMax>(load_vec(a + j), load_vec(r + j)));
    for (; j < n; ++j) a[j] = ((kMax ? a[j] < r[j] : r[j] < a[j]) || r[j] != r[j]) ? r[j] : a[j];
  }
}

// Row numbers travel in the lanes beside the values as values of T (exact below kExactRows<T>): a
// select of a T vector by T's compare mask is three bit operations, where a 64-bit integer lane
// select without SSE4.1 is done one lane at a time.
template <typename T>
using LaneIndex = T;
template <typename T>
inline constexpr int64_t kExactRows =
    std::is_same_v<T, float> ? int64_t{1} << 24 : int64_t{1} << 40;

// Arg max (kMax; else min) of m rows for n columns: best[j] and row[j] become the first extreme
// value of column j among best[j] and rows[k * rs + j] (k < m) and the k where it is (row[j]
// kept while best[j] wins), with argmax's order: a NaN beats everything and stays. Every lane
// updates with selects, so the loop vectorizes. T is float or double; m <= kExactRows<T>. kWhole: n
// is a multiple of kArgChunk<T> (no scalar tail).
template <typename T>
inline constexpr int64_t kArgChunk = 4 * static_cast<int64_t>(sizeof(Vec<T>) / sizeof(T));
template <bool kMax, bool kWhole = false, typename T>
void arg_extremum_rows(T* best, LaneIndex<T>* row, const T* rows, int64_t rs, int64_t m,
                       int64_t n) {
  using V = Vec<T>;
  using M = decltype(V{} < V{});
  constexpr int64_t w = sizeof(V) / sizeof(T);
  constexpr int kChains = 4;  // independent vectors per row: a select chain's latency is long
  int64_t j = 0;
  for (; j + kChains * w <= n; j += kChains * w) {
    V b[kChains];
    V at[kChains];
    for (int c = 0; c < kChains; ++c) {
      b[c] = load_vec(best + j + c * w);
      at[c] = load_vec(row + j + c * w);
    }
    for (int64_t k = 0; k < m; ++k) {
      for (int c = 0; c < kChains; ++c) {
        const V v = load_vec(rows + k * rs + j + c * w);
        const M take = (kMax ? b[c] < v : v < b[c]) | ((v != v) & (b[c] == b[c]));
        b[c] = take ? v : b[c];
        at[c] = take ? V{} + static_cast<T>(k) : at[c];
      }
    }
    for (int c = 0; c < kChains; ++c) {
      store_vec(best + j + c * w, b[c]);
      store_vec(row + j + c * w, at[c]);
    }
  }
  for (; !kWhole && j < n; ++j) {
    T b = best[j];
    LaneIndex<T> at = row[j];
    for (int64_t k = 0; k < m; ++k) {
      const T v = rows[k * rs + j];
      if ((kMax ? b < v : v < b) || (v != v && b == b)) {
        b = v;
        at = static_cast<LaneIndex<T>>(k);
      }
    }
    best[j] = b;
    row[j] = at;
  }
}

// The length of extremum_lanes' unit for T.
template <typename T>
inline constexpr int64_t kExtremumBlock = 4 * static_cast<int64_t>(sizeof(Vec<T>) / sizeof(T));

}  // namespace tensorlet::cpu

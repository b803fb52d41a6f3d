// CPU unique and unique_consecutive over the rows of [n, m]: the rows' order (a std::sort of
// (key, position) pairs for single elements, of positions by rows_compare for longer rows, or the
// rows as they are for consecutive), then one pass that starts a group wherever a row differs
// from the one before it.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "tensorlet/backends/cpu/cpu_backend.h"
#include "tensorlet/backends/math/unique_rows.h"
#include "tensorlet/tensor/dispatch.h"

namespace tensorlet::cpu {

namespace {

// Row positions in sorted order: ties by position, so the first row of each group is the one
// first in the input (the -0.0 or 0.0 that comes first is kept).
template <typename T>
std::vector<int64_t> sorted_rows(const order_load_t<T>* x, int64_t n, int64_t m) {
  using K = order_key_t<T>;
  std::vector<int64_t> perm(static_cast<size_t>(n));
  if (m == 1) {
    std::vector<std::pair<K, int64_t>> e(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) e[i] = {order_key<T>(x[i]), i};
    std::sort(e.begin(), e.end());
    for (int64_t i = 0; i < n; ++i) perm[i] = e[i].second;
    return perm;
  }
  std::iota(perm.begin(), perm.end(), int64_t{0});
  std::sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) {
    const int c = rows_compare<T>(x + a * m, x + b * m, m);
    return c < 0 || (c == 0 && a < b);
  });
  return perm;
}

template <typename T>
UniqueResult unique_rows(const Tensor& in, bool consecutive, bool want_inverse, bool want_counts) {
  using L = order_load_t<T>;
  const int64_t n = in.shape()[0], m = in.shape()[1];
  const L* x = static_cast<const L*>(in.data_ptr());
  std::vector<int64_t> perm;
  if (consecutive) {
    perm.resize(static_cast<size_t>(n));
    std::iota(perm.begin(), perm.end(), int64_t{0});
  } else {
    perm = sorted_rows<T>(x, n, m);
  }
  // starts[g]: the rank (in perm's order) of group g's first row.
  std::vector<int64_t> starts;
  Tensor inverse = want_inverse ? make_tensor({n}, kInt64, in.device()) : Tensor();
  int64_t* inv = want_inverse ? static_cast<int64_t*>(inverse.data_ptr()) : nullptr;
  for (int64_t i = 0; i < n; ++i) {
    if (i == 0 || !rows_equal<T>(x + perm[i - 1] * m, x + perm[i] * m, m)) starts.push_back(i);
    if (inv) inv[perm[i]] = static_cast<int64_t>(starts.size()) - 1;
  }
  const int64_t u = static_cast<int64_t>(starts.size());
  UniqueResult r;
  r.values = make_tensor({u, m}, in.dtype(), in.device());
  L* v = static_cast<L*>(r.values.data_ptr());
  for (int64_t g = 0; g < u; ++g) std::copy_n(x + perm[starts[g]] * m, m, v + g * m);
  r.inverse = inverse;
  if (want_counts) {
    r.counts = make_tensor({u}, kInt64, in.device());
    int64_t* c = static_cast<int64_t*>(r.counts.data_ptr());
    for (int64_t g = 0; g < u; ++g) c[g] = (g + 1 < u ? starts[g + 1] : n) - starts[g];
  }
  return r;
}

}  // namespace

UniqueResult CpuBackend::unique(const Tensor& in, bool consecutive, bool want_inverse,
                                bool want_counts) {
  return dispatch_dtype(in.dtype(), [&]<typename T>() {
    return unique_rows<T>(in, consecutive, want_inverse, want_counts);
  });
}

}  // namespace tensorlet::cpu

// CPU scans (cumsum, cumprod, cummax, cummin): each slice sequential along the dim, as torch's
// CPU loop (same rounding order); rows in parallel above the grain, and when the dim has
// elements after it, a block of neighbouring columns at a time so every inner loop is contiguous.
#include <algorithm>
#include <cstdint>

#include "tensorlet/backends/cpu/cpu_backend.h"
#include "tensorlet/backends/cpu/parallel.h"
#include "tensorlet/backends/softmax_rows.h"

namespace tensorlet::cpu {

namespace {

// Columns scanned together when the dim is not the last: their running values stay in L1 while
// the rows of the block stream past.
constexpr int64_t kColumns = 256;

template <typename T, typename F>
typename F::Acc load(const T* x, int64_t i) {
  if constexpr (F::kIndexed)
    return F::load(x[0], i);
  else
    return F::load(x[0]);
}

// Rows of n contiguous elements.
template <typename T, typename F>
void scan_rows(const T* in, T* out, int64_t* indices, int64_t rows, int64_t n) {
  const int64_t grain = std::max<int64_t>(1, kGrainSize / n);
  parallel_for(rows, grain, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const T* x = in + r * n;
      T* y = out + r * n;
      typename F::Acc acc = load<T, F>(x, 0);
      y[0] = F::store(acc);
      if constexpr (F::kIndexed) indices[r * n] = acc.index;
      for (int64_t i = 1; i < n; ++i) {
        acc = F::combine(acc, load<T, F>(x + i, i));
        y[i] = F::store(acc);
        if constexpr (F::kIndexed) indices[r * n + i] = acc.index;
      }
    }
  });
}

// The dim has `inner` elements after it: element i of column j of outer slice o is at
// (o * n + i) * inner + j. A task is one block of up to kColumns columns of one slice.
template <typename T, typename F>
void scan_columns(const T* in, T* out, int64_t* indices, const SoftmaxRows& g) {
  const int64_t n = g.n, inner = g.inner;
  const int64_t blocks = (inner + kColumns - 1) / kColumns;
  const int64_t grain = std::max<int64_t>(1, kGrainSize / (n * std::min(inner, kColumns)));
  parallel_for(g.outer * blocks, grain, [&](int64_t begin, int64_t end) {
    typename F::Acc acc[kColumns];
    for (int64_t task = begin; task < end; ++task) {
      const int64_t o = task / blocks, c0 = task % blocks * kColumns;
      const int64_t w = std::min(kColumns, inner - c0);
      const int64_t start = o * n * inner + c0;
      for (int64_t i = 0; i < n; ++i) {
        const int64_t row = start + i * inner;
        for (int64_t j = 0; j < w; ++j) {
          const typename F::Acc v = load<T, F>(in + row + j, i);
          acc[j] = i == 0 ? v : F::combine(acc[j], v);
          out[row + j] = F::store(acc[j]);
          if constexpr (F::kIndexed) indices[row + j] = acc[j].index;
        }
      }
    }
  });
}

}  // namespace

void CpuBackend::scan(ScanOp op, const Tensor& in, int64_t dim, const Tensor& values,
                      const Tensor& indices) {
  if (in.numel() == 0) return;  // the front-end returns empty results as they are
  const SoftmaxRows g = softmax_rows(in.shape(), dim);
  dispatch_scan(op, in.dtype(), [&]<typename T, typename F>() {
    const T* x = static_cast<const T*>(in.data_ptr());
    T* y = static_cast<T*>(values.data_ptr());
    int64_t* idx = F::kIndexed ? static_cast<int64_t*>(indices.data_ptr()) : nullptr;
    if (g.inner == 1)
      scan_rows<T, F>(x, y, idx, g.outer, g.n);
    else
      scan_columns<T, F>(x, y, idx, g);
  });
}

}  // namespace tensorlet::cpu

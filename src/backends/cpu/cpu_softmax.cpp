// CPU softmax and log-softmax: rows along the last dim, or columns (the dim with elements after
// it) a block of neighbouring columns at a time, so every inner loop runs over contiguous memory.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <type_traits>

#include "tensorlet/backends/cpu/cpu_backend.h"
#include "tensorlet/backends/cpu/parallel.h"
#include "tensorlet/backends/softmax_rows.h"
#include "tensorlet/tensor/dispatch.h"

namespace tensorlet::cpu {

namespace {

// Independent max lanes: a plain `v > m ? v : m` over lanes vectorizes to packed max. NaN is not
// tracked here: exp(NaN - max) makes the row's sum NaN, which propagates to every output.
constexpr int kLanes = 16;
// Columns handled together when the softmax dim is not the last: their running maxima and sums
// stay in L1 while the rows of the block stream past.
constexpr int64_t kColumns = 256;

template <typename C>
C row_max(const C* p, int64_t n) {
  C lane[kLanes];
  for (int l = 0; l < kLanes; ++l) lane[l] = -std::numeric_limits<C>::infinity();
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) lane[l] = p[i + l] > lane[l] ? p[i + l] : lane[l];
  C m = -std::numeric_limits<C>::infinity();
  for (int l = 0; l < kLanes; ++l) m = lane[l] > m ? lane[l] : m;
  for (; i < n; ++i) m = p[i] > m ? p[i] : m;
  return m;
}

// Rows of n contiguous elements. The row is first converted to the compute type in a buffer
// (exp(x - max) replaces it), so a float16 softmax rounds once, at the store.
template <typename T>
void softmax_last(const T* in, T* out, int64_t rows, int64_t n, bool log) {
  using C = compute_t<T>;
  using Acc = acc_t<T>;  // double sums for float, as torch's CPU accumulation type
  const int64_t grain = std::max<int64_t>(1, kGrainSize / n);
  parallel_for(rows, grain, [&](int64_t begin, int64_t end) {
    std::unique_ptr<C[]> buffer(new C[n]);
    C* b = buffer.get();
    for (int64_t r = begin; r < end; ++r) {
      const T* x = in + r * n;
      T* y = out + r * n;
      for (int64_t i = 0; i < n; ++i) b[i] = static_cast<C>(x[i]);
      const C m = row_max(b, n);
      Acc sum = 0;
      for (int64_t i = 0; i < n; ++i) {
        const C e = std::exp(b[i] - m);
        if (!log) b[i] = e;
        sum += e;
      }
      if (log) {
        const C log_sum = static_cast<C>(std::log(sum));
        for (int64_t i = 0; i < n; ++i) y[i] = static_cast<T>(b[i] - m - log_sum);
      } else {
        const C s = static_cast<C>(sum);
        for (int64_t i = 0; i < n; ++i) y[i] = static_cast<T>(b[i] / s);
      }
    }
  });
}

// The dim has `inner` elements after it: element i of column j of outer slice o is at
// (o * n + i) * inner + j. A task is one block of up to kColumns columns of one slice.
template <typename T>
void softmax_columns(const T* in, T* out, const SoftmaxRows& g, bool log) {
  using C = compute_t<T>;
  using Acc = acc_t<T>;
  const int64_t n = g.n, inner = g.inner;
  const int64_t blocks = (inner + kColumns - 1) / kColumns;
  const int64_t grain = std::max<int64_t>(1, kGrainSize / (n * std::min(inner, kColumns)));
  parallel_for(g.outer * blocks, grain, [&](int64_t begin, int64_t end) {
    C m[kColumns];
    Acc sum[kColumns];
    C scale[kColumns];  // 1 / sum or log(sum) per column
    for (int64_t task = begin; task < end; ++task) {
      const int64_t o = task / blocks, c0 = task % blocks * kColumns;
      const int64_t w = std::min(kColumns, inner - c0);
      const T* x = in + o * n * inner + c0;
      T* y = out + o * n * inner + c0;
      for (int64_t j = 0; j < w; ++j) m[j] = -std::numeric_limits<C>::infinity();
      for (int64_t i = 0; i < n; ++i) {
        const T* row = x + i * inner;
        for (int64_t j = 0; j < w; ++j) {
          const C v = static_cast<C>(row[j]);
          m[j] = v > m[j] ? v : m[j];
        }
      }
      for (int64_t j = 0; j < w; ++j) sum[j] = 0;
      for (int64_t i = 0; i < n; ++i) {
        const T* row = x + i * inner;
        for (int64_t j = 0; j < w; ++j) sum[j] += std::exp(static_cast<C>(row[j]) - m[j]);
      }
      for (int64_t j = 0; j < w; ++j) scale[j] = static_cast<C>(log ? std::log(sum[j]) : sum[j]);
      for (int64_t i = 0; i < n; ++i) {
        const T* row = x + i * inner;
        T* dst = y + i * inner;
        for (int64_t j = 0; j < w; ++j) {
          const C v = static_cast<C>(row[j]) - m[j];
          dst[j] = static_cast<T>(log ? v - scale[j] : std::exp(v) / scale[j]);
        }
      }
    }
  });
}

}  // namespace

void CpuBackend::softmax(const Tensor& in, int64_t dim, bool log, const Tensor& out) {
  if (in.numel() == 0) return;  // the front-end returns empty results as they are
  const SoftmaxRows g = softmax_rows(in.shape(), dim);
  dispatch_dtype<kFloatingDTypes>(in.dtype(), [&]<typename T>() {
    const T* x = static_cast<const T*>(in.data_ptr());
    T* y = static_cast<T*>(out.data_ptr());
    if (g.inner == 1)
      softmax_last(x, y, g.outer, g.n, log);
    else
      softmax_columns(x, y, g, log);
  });
}

}  // namespace tensorlet::cpu

// CPU bincount and histc: one sequential pass of adds into the bins (bincount's weights summed in
// input order, as torch's CPU kernel), histc counting in int64 and converting once.
#include <cstdint>
#include <vector>

#include "tensorlet/backends/cpu/cpu_backend.h"
#include "tensorlet/backends/math/bucket_ops.h"
#include "tensorlet/tensor/dispatch.h"

namespace tensorlet::cpu {

namespace {

template <typename I, typename W>
void add_into_bins(const Tensor& in, const Tensor& weights, const Tensor& out) {
  const I* x = static_cast<const I*>(in.data_ptr());
  W* bins = static_cast<W*>(out.data_ptr());
  const int64_t n = in.numel();
  if (!weights.defined()) {
    for (int64_t i = 0; i < n; ++i) bins[x[i]] += 1;
    return;
  }
  const W* w = static_cast<const W*>(weights.data_ptr());
  for (int64_t i = 0; i < n; ++i) bins[x[i]] += w[i];
}

template <typename I>
void bincount_typed(const Tensor& in, const Tensor& weights, const Tensor& out) {
  if (out.dtype() == kInt64)
    add_into_bins<I, int64_t>(in, weights, out);
  else if (out.dtype() == kFloat32)
    add_into_bins<I, float>(in, weights, out);
  else
    add_into_bins<I, double>(in, weights, out);
}

}  // namespace

void CpuBackend::bincount(const Tensor& in, const Tensor& weights, const Tensor& out) {
  if (in.dtype() == kInt32)
    bincount_typed<int32_t>(in, weights, out);
  else
    bincount_typed<int64_t>(in, weights, out);
}

void CpuBackend::histc(const Tensor& in, double lo, double hi, const Tensor& out) {
  dispatch_dtype<kFloatingDTypes>(in.dtype(), [&]<typename T>() {
    const T* x = static_cast<const T*>(in.data_ptr());
    const int64_t n = in.numel(), bins = out.numel();
    const T l(lo), h(hi);
    // Exact counts (torch's CPU adds 1.0 in the result dtype, which stalls at 2^24 in float32).
    std::vector<int64_t> counts(static_cast<size_t>(bins), 0);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t b = histc_bin<T>(x[i], l, h, bins);
      if (b >= 0) ++counts[b];
    }
    T* o = static_cast<T*>(out.data_ptr());
    for (int64_t b = 0; b < bins; ++b) o[b] = T(static_cast<compute_t<T>>(counts[b]));
  });
}

}  // namespace tensorlet::cpu

// CPU inverse-CDF sampling (multinomial with replacement): a binary search per sample.
#include "tensorlet/backends/cpu/cpu_backend.h"
#include "tensorlet/backends/cpu/parallel.h"
#include "tensorlet/backends/math/cdf_search.h"

namespace tensorlet::cpu {

void CpuBackend::sample_from_cdf(const Tensor& cdf, const Tensor& u, const Tensor& out) {
  const int64_t n = cdf.size(1), samples = u.size(1);
  const double* c = static_cast<const double*>(cdf.data_ptr());
  const double* draws = static_cast<const double*>(u.data_ptr());
  int64_t* result = static_cast<int64_t*>(out.data_ptr());
  // A search costs about log2(n) reads: a smaller grain than an elementwise loop's.
  parallel_for(out.numel(), kGrainSize / 16, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      result[i] = math::cdf_search(c + (i / samples) * n, n, draws[i]);
  });
}

}  // namespace tensorlet::cpu

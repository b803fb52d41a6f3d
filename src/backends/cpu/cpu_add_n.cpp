// The CPU's add_n: one pass over several contiguous summands, each step rounded to the dtype as a
// chain of adds rounds it (autograd sums the parts of a gradient with it).
#include "tensorlet/backends/cpu/cpu_backend.h"
#include "tensorlet/backends/cpu/parallel.h"
#include "tensorlet/tensor/dispatch.h"

namespace tensorlet::cpu {

void CpuBackend::add_n(const std::vector<Tensor>& in, const Tensor& out) {
  const int64_t n = out.numel();
  if (n == 0) return;
  dispatch_dtype<kFloatingDTypes>(
      out.dtype(),
      [&]<typename T>() {
        using C = compute_t<T>;
        std::vector<const T*> src;
        for (const Tensor& t : in) src.push_back(static_cast<const T*>(t.data_ptr()));
        T* dst = static_cast<T*>(out.data_ptr());
        parallel_for(n, kGrainSize, [&](int64_t begin, int64_t end) {
          // Summand by summand over the range: the inner loop vectorizes, and out may be in[0].
          for (int64_t i = begin; i < end; ++i)
            dst[i] = static_cast<T>(static_cast<C>(src[0][i]) + static_cast<C>(src[1][i]));
          for (size_t k = 2; k < src.size(); ++k) {
            const T* s = src[k];
            for (int64_t i = begin; i < end; ++i)
              dst[i] = static_cast<T>(static_cast<C>(dst[i]) + static_cast<C>(s[i]));
          }
        });
      },
      "tl::add_n");
}

}  // namespace tensorlet::cpu

// CPU searchsorted: one bisection per value (searchsorted_position), values in parallel above a
// grain.
#include <cstdint>

#include "tensorlet/backends/cpu/cpu_backend.h"
#include "tensorlet/backends/cpu/parallel.h"
#include "tensorlet/backends/math/bucket_ops.h"
#include "tensorlet/tensor/dispatch.h"

namespace tensorlet::cpu {

void CpuBackend::searchsorted(const Tensor& boundaries, const Tensor& values, const Tensor& sorter,
                              bool right, const Tensor& out) {
  const int64_t len = boundaries.shape()[1], inner = values.shape()[1], n = values.numel();
  const int64_t* sort = sorter.defined() ? static_cast<const int64_t*>(sorter.data_ptr()) : nullptr;
  dispatch_dtype<kNumericDTypes>(values.dtype(), [&]<typename T>() {
    const T* b = static_cast<const T*>(boundaries.data_ptr());
    const T* v = static_cast<const T*>(values.data_ptr());
    auto run = [&]<typename O>(O* o) {
      // A bisection costs about log2(len) reads: a value is worth ~16 elements of a plain loop.
      parallel_for(n, kGrainSize / 16, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          const int64_t r = i / inner;
          o[i] = static_cast<O>(searchsorted_position<T>(
              b + r * len, sort ? sort + r * len : nullptr, len, v[i], right));
        }
      });
    };
    if (out.dtype() == kInt32)
      run(static_cast<int32_t*>(out.data_ptr()));
    else
      run(static_cast<int64_t*>(out.data_ptr()));
  });
}

}  // namespace tensorlet::cpu

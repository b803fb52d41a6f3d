// CPU median of each row: the row's first NaN if it has one, else std::nth_element over the
// positions ordered by (value, position), so equal values give torch's CPU index.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "tensorlet/backends/cpu/cpu_backend.h"
#include "tensorlet/backends/cpu/parallel.h"
#include "tensorlet/tensor/dispatch.h"

namespace tensorlet::cpu {

void CpuBackend::median(const Tensor& in, const Tensor& values, const Tensor& indices) {
  const int64_t rows = in.shape()[0], n = in.shape()[1];
  dispatch_dtype<kNumericDTypes>(
      in.dtype(),
      [&]<typename T>() {
        using C = compute_t<T>;
        const T* x = static_cast<const T*>(in.data_ptr());
        T* v = static_cast<T*>(values.data_ptr());
        int64_t* idx = static_cast<int64_t*>(indices.data_ptr());
        // nth_element costs a few passes over the row: the grain counts elements.
        const int64_t grain = std::max<int64_t>(1, kGrainSize / n);
        parallel_for(rows, grain, [&](int64_t begin, int64_t end) {
          std::vector<C> row(n);
          std::vector<int64_t> order(n);
          for (int64_t r = begin; r < end; ++r) {
            const T* p = x + r * n;
            int64_t nan_at = -1;
            for (int64_t i = 0; i < n; ++i) {
              row[i] = static_cast<C>(p[i]);
              if (nan_at < 0 && row[i] != row[i]) nan_at = i;
            }
            int64_t pick = nan_at;
            if (pick < 0) {
              std::iota(order.begin(), order.end(), int64_t{0});
              const auto nth = order.begin() + (n - 1) / 2;
              std::nth_element(order.begin(), nth, order.end(), [&](int64_t a, int64_t b) {
                return row[a] < row[b] || (row[a] == row[b] && a < b);
              });
              pick = *nth;
            }
            v[r] = p[pick];
            idx[r] = pick;
          }
        });
      },
      "tl::median");
}

}  // namespace tensorlet::cpu

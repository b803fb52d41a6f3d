// CPU sort, topk and kthvalue: each row becomes (key, position) pairs (order_key's order, flipped
// for descending), ordered by std::sort / std::partial_sort / std::nth_element; rows run in
// parallel above a grain.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>

#include "tensorlet/backends/cpu/cpu_backend.h"
#include "tensorlet/backends/cpu/parallel.h"
#include "tensorlet/backends/math/order_key.h"
#include "tensorlet/tensor/dispatch.h"

namespace tensorlet::cpu {

namespace {

// A key and its position in the row. Comparing the pair (key, then position) is a total order
// in which equal keys keep their positions' order: std::sort on it gives exactly what a stable
// sort on the key would, without stable_sort's buffer, and partial_sort / nth_element give the
// stable order's prefix and element.
template <typename K, typename I>
struct Entry {
  K key;
  I pos;
  bool operator<(const Entry& o) const { return key < o.key || (key == o.key && pos < o.pos); }
};

enum class Mode { Sort, Topk, Kth };

struct RowJob {
  Mode mode;
  int64_t rows, n;
  int64_t k;      // topk: how many; kthvalue: the 1-based rank
  bool flip;      // descending / largest
  bool ordered;   // topk's `sorted`
  int64_t width;  // output elements per row (n, k or 1)
};

template <typename T, typename I>
void run_rows(const Tensor& in, const Tensor& values, const Tensor& indices, const RowJob& job) {
  using L = order_load_t<T>;
  using K = order_key_t<T>;
  using E = Entry<K, I>;
  const L* x = static_cast<const L*>(in.data_ptr());
  L* vals = static_cast<L*>(values.data_ptr());
  int64_t* idx = static_cast<int64_t*>(indices.data_ptr());
  const int64_t n = job.n;
  const K flip = order_flip<K>(job.flip);
  // A row costs about n log n; a row of kGrainSize elements is worth a thread of its own.
  const int64_t grain = std::max<int64_t>(1, kGrainSize / n);
  parallel_for(job.rows, grain, [&](int64_t begin, int64_t end) {
    std::unique_ptr<E[]> buffer(new E[n]);
    E* e = buffer.get();
    for (int64_t r = begin; r < end; ++r) {
      const L* row = x + r * n;
      for (int64_t i = 0; i < n; ++i)
        e[i] = E{static_cast<K>(order_key<T>(row[i]) ^ flip), static_cast<I>(i)};
      switch (job.mode) {
        case Mode::Sort:
          std::sort(e, e + n);
          break;
        case Mode::Topk:
          if (job.ordered)
            std::partial_sort(e, e + job.k, e + n);
          else if (job.k < n)
            std::nth_element(e, e + job.k - 1, e + n);
          break;
        case Mode::Kth:
          std::nth_element(e, e + job.k - 1, e + n);
          break;
      }
      // The values are the row's own elements (a NaN's payload, -0.0 and bool bytes kept).
      const int64_t first = job.mode == Mode::Kth ? job.k - 1 : 0;
      for (int64_t j = 0; j < job.width; ++j) {
        const int64_t p = static_cast<int64_t>(e[first + j].pos);
        vals[r * job.width + j] = row[p];
        idx[r * job.width + j] = p;
      }
    }
  });
}

void run(const Tensor& in, const Tensor& values, const Tensor& indices, const RowJob& job) {
  dispatch_dtype(in.dtype(), [&]<typename T>() {
    // 32-bit positions halve the pairs moved by the sort when the row allows them.
    if (job.n <= std::numeric_limits<uint32_t>::max())
      run_rows<T, uint32_t>(in, values, indices, job);
    else
      run_rows<T, uint64_t>(in, values, indices, job);
  });
}

}  // namespace

void CpuBackend::sort(const Tensor& in, bool descending, const Tensor& values,
                      const Tensor& indices) {
  const int64_t n = in.shape()[1];
  run(in, values, indices, {Mode::Sort, in.shape()[0], n, n, descending, true, n});
}

void CpuBackend::topk(const Tensor& in, int64_t k, bool largest, bool sorted, const Tensor& values,
                      const Tensor& indices) {
  run(in, values, indices, {Mode::Topk, in.shape()[0], in.shape()[1], k, largest, sorted, k});
}

void CpuBackend::kthvalue(const Tensor& in, int64_t k, const Tensor& values,
                          const Tensor& indices) {
  run(in, values, indices, {Mode::Kth, in.shape()[0], in.shape()[1], k, false, true, 1});
}

}  // namespace tensorlet::cpu

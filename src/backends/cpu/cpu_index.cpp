// CPU indexing kernels: nonzero and masked_select (count, then fill), index_select and gather.
#include <cstdlib>
#include <cstring>
#include <vector>

#include "tensorlet/backends/cpu/cpu_backend.h"
#include "tensorlet/backends/cpu/strided_loop.h"
#include "tensorlet/tensor/dispatch.h"
#include "tensorlet/tensor/convert.h"

namespace tensorlet::cpu {

namespace {

// How many chunks to split n elements into: one per thread above the grain size.
int64_t chunk_count(int64_t n) {
  if (n < kGrainSize || in_parallel_region()) return 1;
  return std::max<int64_t>(1, std::min<int64_t>(max_threads(), n / kGrainSize));
}

// Calls f(c) for c in [0, chunks), one chunk per thread.
template <typename F>
void for_each_chunk(int64_t chunks, const F& f) {
  if (chunks <= 1) {
    f(int64_t{0});
    return;
  }
#pragma omp parallel for num_threads(static_cast <int>(chunks)) schedule(static, 1)
  for (int64_t c = 0; c < chunks; ++c) f(c);
}

// Exclusive prefix sums of per-chunk counts of true mask elements (or non-zero elements), so the
// fill pass can write each chunk's results at a known place without synchronisation.
template <typename T>
std::vector<int64_t> count_nonzero(const StridedLoop<1>& loop, int64_t n, int64_t chunks) {
  std::vector<int64_t> start(chunks + 1, 0);
  for_each_chunk(chunks, [&](int64_t c) {
    int64_t count = 0;
    loop.run_range(n * c / chunks, n * (c + 1) / chunks,
                   [&](std::array<char*, 1> p, std::array<int64_t, 1> s, int64_t k) {
                     if (s[0] == sizeof(T)) {
                       const Stored<T>* q = reinterpret_cast<const Stored<T>*>(p[0]);
                       for (int64_t i = 0; i < k; ++i) count += from_stored<T>(q[i]) != T(0);
                     } else {
                       for (int64_t i = 0; i < k; ++i) count += load<T>(p[0] + i * s[0]) != T(0);
                     }
                   });
    start[c + 1] = count;
  });
  for (int64_t c = 0; c < chunks; ++c) start[c + 1] += start[c];
  return start;
}

// The tensor without `dim` (same storage): the slice at index 0 along dim.
Tensor drop_dim(const Tensor& t, int64_t dim) {
  Shape shape = t.shape(), strides = t.strides();
  shape.erase(dim);
  strides.erase(dim);
  return t.as_strided(shape, strides, t.offset());
}

}  // namespace

Tensor CpuBackend::nonzero(const Tensor& in) {
  const int64_t n = in.numel(), nd = in.dim();
  if (n == 0) return make_tensor({0, nd}, kInt64, Device::cpu());
  const Shape& shape = in.shape();
  StridedLoop<1> loop({&in});
  const int64_t chunks = chunk_count(n);
  Tensor out;
  dispatch_dtype(in.dtype(), [&]<typename T>() {
    std::vector<int64_t> start = count_nonzero<T>(loop, n, chunks);
    out = make_tensor({start[chunks], nd}, kInt64, Device::cpu());
    int64_t* base = static_cast<int64_t*>(out.data_ptr());
    for_each_chunk(chunks, [&](int64_t c) {
      const int64_t begin = n * c / chunks, end = n * (c + 1) / chunks;
      int64_t* dst = base + start[c] * nd;
      int64_t* const limit = base + start[c + 1] * nd;
      if (nd == 1) {
        // Rows are written unconditionally and kept only for non-zeros (no unpredictable branch);
        // once the chunk's rows are all written the rest of it is zeros, so it stops before
        // writing into the next chunk's rows.
        int64_t linear = begin;
        loop.run_range(begin, end,
                       [&](std::array<char*, 1> p, std::array<int64_t, 1> s, int64_t k) {
                         for (int64_t i = 0; i < k && dst != limit; ++i, ++linear) {
                           *dst = linear;
                           dst += load<T>(p[0] + i * s[0]) != T(0);
                         }
                       });
        return;
      }
      // The multi-index advances with the row-major walk, so no element is unravelled by division.
      int64_t index[kMaxDims] = {};
      for (int64_t d = nd - 1, rest = begin; d >= 0; --d) {
        index[d] = rest % shape[d];
        rest /= shape[d];
      }
      const int64_t inner = nd ? shape[nd - 1] : 1;
      loop.run_range(begin, end, [&](std::array<char*, 1> p, std::array<int64_t, 1> s, int64_t k) {
        for (int64_t i = 0; i < k && dst != limit; ++i) {
          for (int64_t d = 0; d < nd; ++d) dst[d] = index[d];
          dst += load<T>(p[0] + i * s[0]) != T(0) ? nd : 0;
          if (nd == 0 || ++index[nd - 1] < inner) continue;
          index[nd - 1] = 0;
          for (int64_t d = nd - 2; d >= 0; --d) {
            if (++index[d] < shape[d]) break;
            index[d] = 0;
          }
        }
      });
    });
  });
  return out;
}

Tensor CpuBackend::masked_select(const Tensor& in, const Tensor& mask) {
  const int64_t n = in.numel();
  if (n == 0) return make_tensor({0}, in.dtype(), Device::cpu());
  StridedLoop<1> mask_loop({&mask});
  const int64_t chunks = chunk_count(n);
  std::vector<int64_t> start = count_nonzero<bool>(mask_loop, n, chunks);
  Tensor out = make_tensor({start[chunks]}, in.dtype(), Device::cpu());
  StridedLoop<2> loop({&in, &mask});
  dispatch_bits(in.element_size(), [&]<typename T>() {
    T* base = static_cast<T*>(out.data_ptr());
    for_each_chunk(chunks, [&](int64_t c) {
      T* dst = base + start[c];
      T* const limit = base + start[c + 1];
      // Branch-free as in nonzero: write every element, advance past the selected ones.
      loop.run_range(n * c / chunks, n * (c + 1) / chunks,
                     [&](std::array<char*, 2> p, std::array<int64_t, 2> s, int64_t k) {
                       for (int64_t i = 0; i < k && dst != limit; ++i) {
                         *dst = *reinterpret_cast<const T*>(p[0] + i * s[0]);
                         // The mask's byte may be any value: advance by "is it non-zero".
                         dst += load<bool>(p[1] + i * s[1]);
                       }
                     });
    });
  });
  return out;
}

void CpuBackend::index_select(const Tensor& in, int64_t dim, const Tensor& index,
                              const Tensor& out) {
  if (out.numel() == 0) return;
  const Tensor idx_t = index.contiguous();
  const int64_t* idx = static_cast<const int64_t*>(idx_t.data_ptr());
  const int64_t m = idx_t.numel();
  // Walk the slices (in and out without dim) together; each slice element copies m entries.
  const Tensor in_slice = drop_dim(in, dim), out_slice = drop_dim(out, dim);
  StridedLoop<2> loop({&out_slice, &in_slice});
  const int64_t slice_n = loop.numel();
  dispatch_bits(in.element_size(), [&]<typename T>() {
    const int64_t in_step = in.strides()[dim] * sizeof(T),
                  out_step = out.strides()[dim] * sizeof(T);
    auto copy = [&](int64_t jb, int64_t je) {
      return [=](std::array<char*, 2> p, std::array<int64_t, 2> s, int64_t k) {
        if (std::abs(out_step) < std::abs(s[0])) {
          // dim is the inner one in memory (e.g. selecting columns): fill each output row in order.
          for (int64_t i = 0; i < k; ++i) {
            char* dst = p[0] + i * s[0];
            const char* src = p[1] + i * s[1];
            for (int64_t j = jb; j < je; ++j)
              *reinterpret_cast<T*>(dst + j * out_step) =
                  *reinterpret_cast<const T*>(src + idx[j] * in_step);
          }
          return;
        }
        for (int64_t j = jb; j < je; ++j) {
          char* dst = p[0] + j * out_step;
          const char* src = p[1] + idx[j] * in_step;
          if (s[0] == sizeof(T) && s[1] == sizeof(T)) {
            std::memcpy(dst, src, k * sizeof(T));
          } else {
            for (int64_t i = 0; i < k; ++i)
              *reinterpret_cast<T*>(dst + i * s[0]) = *reinterpret_cast<const T*>(src + i * s[1]);
          }
        }
      };
    };
    // Split whichever of the two loops is longer, so a 1-D gather of many indices still runs wide.
    if (slice_n >= m) {
      loop.run(copy(0, m), std::max<int64_t>(1, kGrainSize / m));
    } else {
      parallel_for(m, std::max<int64_t>(1, kGrainSize / slice_n),
                   [&](int64_t jb, int64_t je) { loop.run_range(0, slice_n, copy(jb, je)); });
    }
  });
}

void CpuBackend::gather(const Tensor& in, int64_t dim, const Tensor& index, const Tensor& out) {
  if (out.numel() == 0) return;
  // `in` seen with out's shape and a zero stride along dim: element i points at in[..., 0, ...],
  // and the index value picks the row along dim.
  Shape strides = in.strides();
  int64_t dim_stride = 0;
  if (in.dim() > 0) {
    dim_stride = strides[dim];
    strides[dim] = 0;
  }
  const Tensor in_view = in.as_strided(out.shape(), strides, in.offset());
  StridedLoop<3> loop({&out, &index, &in_view});
  dispatch_bits(in.element_size(), [&]<typename T>() {
    const int64_t step = dim_stride * sizeof(T);
    loop.run([step](std::array<char*, 3> p, std::array<int64_t, 3> s, int64_t k) {
      for (int64_t i = 0; i < k; ++i) {
        const int64_t j = *reinterpret_cast<const int64_t*>(p[1] + i * s[1]);
        *reinterpret_cast<T*>(p[0] + i * s[0]) =
            *reinterpret_cast<const T*>(p[2] + i * s[2] + j * step);
      }
    });
  });
}

// Two reductions over the index, as amin/amax.
void CpuBackend::index_bounds(const Tensor& index, int64_t* lo, int64_t* hi) {
  const std::vector<bool> all(static_cast<size_t>(index.dim()), true);
  const Tensor out = make_tensor(Shape::filled(index.dim(), 1), index.dtype(), index.device());
  auto bound = [&](ReduceOp op) {
    reduce(op, index, all, out);
    return index.dtype() == kInt32 ? int64_t{*static_cast<const int32_t*>(out.data_ptr())}
                                   : *static_cast<const int64_t*>(out.data_ptr());
  };
  *lo = bound(ReduceOp::Min);
  *hi = bound(ReduceOp::Max);
}

}  // namespace tensorlet::cpu

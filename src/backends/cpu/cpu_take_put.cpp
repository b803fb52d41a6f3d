// CPU take and put: elements of a strided tensor addressed by row-major positions (advanced
// indexing reduces to these). put with accumulate runs on one thread, so duplicates add in order.
#include <type_traits>

#include "tensorlet/backends/coalesce.h"
#include "tensorlet/backends/cpu/cpu_backend.h"
#include "tensorlet/backends/cpu/strided_loop.h"
#include "tensorlet/tensor/dispatch.h"

namespace tensorlet::cpu {

namespace {

// Maps a row-major position of t (negative: from the end) to its element offset. Dims contiguous
// in memory are merged first, so a contiguous t maps a position to itself with no division.
class FlatOffsets {
 public:
  explicit FlatOffsets(const Tensor& t) : numel_(t.numel()) {
    int64_t strides[1][kMaxDims];
    for (int64_t d = 0; d < t.dim(); ++d) strides[0][d] = t.strides()[d];
    int64_t out_strides[1][kMaxDims];
    ndim_ = coalesce_dims<1>(t.dim(), t.shape().data(), strides, sizes_, out_strides);
    for (int d = 0; d < ndim_; ++d) strides_[d] = out_strides[0][d];
  }
  int64_t operator()(int64_t flat) const {
    if (flat < 0) flat += numel_;
    if (ndim_ == 1) return flat * strides_[0];
    int64_t off = 0;
    for (int d = ndim_ - 1; d >= 0; --d) {
      off += (flat % sizes_[d]) * strides_[d];
      flat /= sizes_[d];
    }
    return off;
  }

 private:
  int64_t numel_;
  int ndim_ = 0;
  int64_t sizes_[kMaxDims];
  int64_t strides_[kMaxDims];
};

// a + b as torch's index_put_/put_ accumulate: integers wrap, bool is "or", half types add in
// float and round once.
template <typename T>
T accumulate(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return a || b;
  } else if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return static_cast<T>(static_cast<compute_t<T>>(a) + static_cast<compute_t<T>>(b));
  }
}

}  // namespace

void CpuBackend::take(const Tensor& in, const Tensor& index, const Tensor& out) {
  if (out.numel() == 0) return;
  const FlatOffsets offsets(in);
  StridedLoop<2> loop({&out, &index});
  dispatch_bits(in.element_size(), [&]<typename T>() {
    const T* src = static_cast<const T*>(in.data_ptr());
    loop.run([&](std::array<char*, 2> p, std::array<int64_t, 2> s, int64_t k) {
      for (int64_t i = 0; i < k; ++i)
        *reinterpret_cast<T*>(p[0] + i * s[0]) =
            src[offsets(*reinterpret_cast<const int64_t*>(p[1] + i * s[1]))];
    });
  });
}

void CpuBackend::put(const Tensor& self, const Tensor& index, const Tensor& values,
                     bool accumulate_values) {
  if (index.numel() == 0) return;
  const FlatOffsets offsets(self);
  StridedLoop<2> loop({&index, &values});
  if (!accumulate_values) {
    // Duplicates race between threads; torch leaves which one wins undefined too.
    dispatch_bits(self.element_size(), [&]<typename T>() {
      T* dst = static_cast<T*>(self.data_ptr());
      loop.run([&](std::array<char*, 2> p, std::array<int64_t, 2> s, int64_t k) {
        for (int64_t i = 0; i < k; ++i)
          dst[offsets(*reinterpret_cast<const int64_t*>(p[0] + i * s[0]))] =
              *reinterpret_cast<const T*>(p[1] + i * s[1]);
      });
    });
    return;
  }
  dispatch_dtype(
      self.dtype(),
      [&]<typename T>() {
        T* dst = static_cast<T*>(self.data_ptr());
        // One thread: a position indexed twice adds both values, in index order.
        loop.run_range(
            0, loop.numel(), [&](std::array<char*, 2> p, std::array<int64_t, 2> s, int64_t k) {
              for (int64_t i = 0; i < k; ++i) {
                T& slot = dst[offsets(*reinterpret_cast<const int64_t*>(p[0] + i * s[0]))];
                slot = accumulate<T>(load<T>(&slot), load<T>(p[1] + i * s[1]));
              }
            });
      },
      "tl::put_");
}

}  // namespace tensorlet::cpu

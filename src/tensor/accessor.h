// Element access at raw-pointer speed, as LibTorch's: TensorAccessor (t.accessor<float, 2>(),
// CPU loops) and PackedTensorAccessor32/64 (t.packed_accessor32<float, 2>(), passed by value
// into CUDA kernels), indexed a[i][j] through the tensor's strides.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tensorlet/tensor/host_device.h"

namespace tensorlet {

// How an accessor holds its data pointer: plainly, or __restrict__ for kernels that promise the
// tensor overlaps no other they touch (the compiler may then cache loads).
template <typename T>
struct DefaultPtrTraits {
  using PtrType = T*;
};
template <typename T>
struct RestrictPtrTraits {
#if defined(__CUDACC__) || defined(__GNUC__)
  using PtrType = T* __restrict__;
#else
  using PtrType = T*;
#endif
};

// The common part: a data pointer and (borrowed) sizes and strides, in elements.
template <typename T, size_t N, template <typename U> class PtrTraits = DefaultPtrTraits,
          typename index_t = int64_t>
class TensorAccessorBase {
 public:
  using PtrType = typename PtrTraits<T>::PtrType;

  TL_HOST_DEVICE TensorAccessorBase(PtrType data, const index_t* sizes, const index_t* strides)
      : data_(data), sizes_(sizes), strides_(strides) {}
  TL_HOST_DEVICE index_t size(index_t i) const { return sizes_[i]; }
  TL_HOST_DEVICE index_t stride(index_t i) const { return strides_[i]; }
  TL_HOST_DEVICE PtrType data() const { return data_; }

 protected:
  PtrType data_;
  const index_t* sizes_;
  const index_t* strides_;
};

// An N-dim view: a[i] is the (N-1)-dim accessor of row i; it borrows the sizes and strides of
// the tensor (or of the packed accessor) it came from, which must outlive it.
template <typename T, size_t N, template <typename U> class PtrTraits = DefaultPtrTraits,
          typename index_t = int64_t>
class TensorAccessor : public TensorAccessorBase<T, N, PtrTraits, index_t> {
  using Base = TensorAccessorBase<T, N, PtrTraits, index_t>;

 public:
  using Base::Base;
  TL_HOST_DEVICE TensorAccessor<T, N - 1, PtrTraits, index_t> operator[](index_t i) const {
    return {this->data_ + this->strides_[0] * i, this->sizes_ + 1, this->strides_ + 1};
  }
};

template <typename T, template <typename U> class PtrTraits, typename index_t>
class TensorAccessor<T, 1, PtrTraits, index_t>
    : public TensorAccessorBase<T, 1, PtrTraits, index_t> {
  using Base = TensorAccessorBase<T, 1, PtrTraits, index_t>;

 public:
  using Base::Base;
  TL_HOST_DEVICE T& operator[](index_t i) const { return this->data_[this->strides_[0] * i]; }
};

// Owns copies of the sizes and strides, so it can be passed by value to a kernel; index_t int32
// (packed_accessor32, cheaper index math) or int64.
template <typename T, size_t N, template <typename U> class PtrTraits = DefaultPtrTraits,
          typename index_t = int64_t>
class GenericPackedTensorAccessor {
 public:
  using PtrType = typename PtrTraits<T>::PtrType;

  // sizes and strides: N values each, converted to index_t (the caller checked they fit).
  template <typename Source>
  TL_HOST_DEVICE GenericPackedTensorAccessor(PtrType data, const Source* sizes,
                                             const Source* strides)
      : data_(data) {
    for (size_t i = 0; i < N; ++i) {
      sizes_[i] = static_cast<index_t>(sizes[i]);
      strides_[i] = static_cast<index_t>(strides[i]);
    }
  }
  TL_HOST_DEVICE index_t size(index_t i) const { return sizes_[i]; }
  TL_HOST_DEVICE index_t stride(index_t i) const { return strides_[i]; }
  TL_HOST_DEVICE PtrType data() const { return data_; }

  // a[i]: the element (T&) of a 1-dim accessor, else the (N-1)-dim accessor of row i, which
  // borrows this one's sizes and strides.
  TL_HOST_DEVICE decltype(auto) operator[](index_t i) const {
    if constexpr (N == 1) {
      return data_[strides_[0] * i];
    } else {
      return TensorAccessor<T, N - 1, PtrTraits, index_t>(data_ + strides_[0] * i, sizes_ + 1,
                                                          strides_ + 1);
    }
  }

 private:
  PtrType data_;
  index_t sizes_[N];
  index_t strides_[N];
};

template <typename T, size_t N, template <typename U> class PtrTraits = DefaultPtrTraits>
using PackedTensorAccessor32 = GenericPackedTensorAccessor<T, N, PtrTraits, int32_t>;
template <typename T, size_t N, template <typename U> class PtrTraits = DefaultPtrTraits>
using PackedTensorAccessor64 = GenericPackedTensorAccessor<T, N, PtrTraits, int64_t>;

}  // namespace tensorlet

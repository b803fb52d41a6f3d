// StridedLoop: walks N same-shape strided operands in row-major order as runs of a 1-D inner
// loop, after merging dims that are contiguous for every operand (so contiguous tensors become
// one run). Kernels supply the inner loop and take fast paths on unit or zero inner strides.
#pragma once

#include <array>
#include <cstdint>

#include "tensorlet/backends/coalesce.h"
#include "tensorlet/backends/cpu/parallel.h"
#include "tensorlet/tensor/tensor.h"

namespace tensorlet::cpu {

template <int N>
class StridedLoop {
 public:
  // All operands must have the same shape. Strides are kept in bytes.
  explicit StridedLoop(const std::array<const Tensor*, N>& ops) : StridedLoop(ops, {}) {}
  // As above, where a null ops[k] (not ops[0]) is one value, read at values[k] for every element
  // (a scalar input of an elementwise kernel: stride 0).
  StridedLoop(const std::array<const Tensor*, N>& ops, const std::array<const void*, N>& values) {
    const Shape& shape = ops[0]->shape();
    for (int k = 0; k < N; ++k)
      base_[k] = ops[k] ? static_cast<char*>(ops[k]->data_ptr())
                        : const_cast<char*>(static_cast<const char*>(values[k]));
    numel_ = shape.numel();
    int64_t st[N][kMaxDims];
    // Extent-1 dims are dropped by coalesce_dims; their stride may be anything (as_strided), so
    // it is not scaled to bytes, where it could overflow.
    for (int64_t d = 0; d < shape.size(); ++d)
      for (int k = 0; k < N; ++k)
        st[k][d] = ops[k] && shape[d] != 1
                       ? ops[k]->strides()[d] * static_cast<int64_t>(ops[k]->element_size())
                       : 0;
    ndim_ = coalesce_dims<N>(shape.size(), shape.data(), st, shape_, strides_);
    if (ndim_ == 0) {  // a single element
      shape_[0] = 1;
      for (int k = 0; k < N; ++k) strides_[k][0] = 0;
      ndim_ = 1;
    }
  }

  int64_t numel() const { return numel_; }
  int64_t inner_size() const { return shape_[ndim_ - 1]; }
  int64_t inner_stride(int k) const { return strides_[k][ndim_ - 1]; }

  // Calls row(ptrs, inner_strides, count) for the elements [begin, end) in row-major order.
  template <typename Row>
  void run_range(int64_t begin, int64_t end, const Row& row) const {
    if (begin >= end) return;
    const int64_t inner = shape_[ndim_ - 1];
    int64_t outer = begin / inner, pos = begin % inner;
    int64_t index[kMaxDims];
    std::array<char*, N> ptr = base_;
    for (int64_t d = ndim_ - 2; d >= 0; --d) {
      index[d] = outer % shape_[d];
      outer /= shape_[d];
      for (int k = 0; k < N; ++k) ptr[k] += index[d] * strides_[k][d];
    }
    std::array<int64_t, N> inner_strides;
    for (int k = 0; k < N; ++k) inner_strides[k] = strides_[k][ndim_ - 1];
    int64_t i = begin;
    while (i < end) {
      int64_t count = std::min(inner - pos, end - i);
      std::array<char*, N> p;
      for (int k = 0; k < N; ++k) p[k] = ptr[k] + pos * inner_strides[k];
      row(p, inner_strides, count);
      i += count;
      pos = 0;
      // Advance the outer multi-index by one, carrying.
      for (int64_t d = ndim_ - 2; d >= 0; --d) {
        for (int k = 0; k < N; ++k) ptr[k] += strides_[k][d];
        if (++index[d] < shape_[d]) break;
        for (int k = 0; k < N; ++k) ptr[k] -= strides_[k][d] * shape_[d];
        index[d] = 0;
      }
    }
  }

  // run_range over everything, split across threads when large.
  template <typename Row>
  void run(const Row& row, int64_t grain = kGrainSize) const {
    parallel_for(numel_, grain, [&](int64_t b, int64_t e) { run_range(b, e, row); });
  }

 private:
  // Only the first ndim_ entries are ever read; leaving the rest uninitialised saves a memset
  // that costs as much as a whole small op.
  std::array<char*, N> base_;
  int64_t shape_[kMaxDims];
  int64_t strides_[N][kMaxDims];
  int64_t ndim_ = 0;
  int64_t numel_ = 0;
};

}  // namespace tensorlet::cpu

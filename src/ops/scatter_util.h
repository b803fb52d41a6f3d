// Checks and views the scatter-family front-ends share (ops/scatter.cpp, ops/index_ops.cpp,
// ops/masked_scatter.cpp): devices, index ranges, 0-dim tensors seen as 1-D, and the tensor an op
// writes (self, or a copy of it).
#pragma once

#include "tensorlet/backends/backend.h"
#include "tensorlet/tensor/tensor.h"
#include "tensorlet/ops/index_range.h"
#include "tensorlet/ops/out_arg.h"

namespace tensorlet::scatter_detail {

inline void check_same_device(const char* op, const Tensor& self, const Tensor& other,
                              const char* what) {
  if (self.device() != other.device())
    fail<DeviceError>(op, "expected ", what, " on the device of self (", self.device(), "), got ",
                      other.device());
}

// check_index_range: ops/index_range.h.

// The scatter-family kernels' index range: checked here, before any write, unless the backend's
// scatter kernel checks each value itself (CUDA: a bad index is skipped and raised as this op's
// IndexError at the next wait for the device), which saves a pass over the index and a wait.
// The kernel's check is relied on only where it sees every index value and the result has
// elements: reading an empty result back waits for nothing, so a bad index found there would be
// raised by some later, unrelated op.
inline void check_scatter_index_range(const char* op, const Tensor& index, int64_t size,
                                      int64_t dim, const Tensor& self,
                                      bool kernel_sees_every_index = true) {
  if (backend_for(index.device()).checks_data_in_kernels() && self.numel() > 0 &&
      kernel_sees_every_index)
    return;
  check_index_range(op, index, size, dim);
}

// torch's ensure_nonempty_dim / ensure_nonempty_size: a 0-dim tensor counts as one element of 1-D.
inline int64_t rank_of(const Tensor& t) { return t.dim() == 0 ? 1 : t.dim(); }
inline int64_t size_of(const Tensor& t, int64_t d) { return t.dim() == 0 ? 1 : t.shape()[d]; }

// The same elements with at least one dim (a 0-dim tensor as [1]): the kernels index a dim.
inline Tensor at_least_1d(const Tensor& t) {
  return t.dim() == 0 ? make_view(t, Shape{1}, Shape{1}, t.offset()) : t;
}

// An input the in-place form would read while writing self (x.scatter_(0, i, x)): read from a
// copy, so every value read is self's value before the op.
inline Tensor unaliased(const Tensor& input, const Tensor& self) {
  return input.storage() == self.storage() ? input.clone() : input;
}

// What an op writes: self for the in-place form (checked writable: no broadcast dims), else a
// copy of self.
inline Tensor write_target(const char* op, const Tensor& self, bool in_place) {
  if (!in_place) return self.clone();
  check_writable(op, self);
  return self;
}

}  // namespace tensorlet::scatter_detail

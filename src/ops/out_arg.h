// The out= argument of an op (tl::add_out(out, a, b)): checks and resizes the destination, and
// says whether the kernel can write into it directly, so that a hot loop allocates nothing.
#pragma once

#include <initializer_list>

#include "tensorlet/tensor/tensor.h"

namespace tensorlet {

// Whether a value of dtype `from` may be written into a tensor of dtype `to` (torch.can_cast):
// never floating into integral, never non-bool into bool.
bool can_cast(DType from, DType to);

// True when two indices of `t` reach one element (a broadcast dim): writing into it is ambiguous.
bool has_internal_overlap(const Tensor& t);
// Refuses (ShapeError naming op) a destination with such dims: the op would write one element
// twice.
// differentiable: the op takes autograd's differentiable in-place path (autograd/inplace.h),
// which checks self without bumping its version (its own write does).
void check_writable(const char* op, const Tensor& t, bool differentiable = false);

// The tensor an op whose result has (shape, dtype) on `device` writes for out=: `out` itself when
// the kernel can write there (its dtype; no input shares its memory except at the same elements),
// else a fresh tensor that finish_out copies into `out`. An empty `out` is resized to `shape`
// first, as torch; any other must have the shape (ShapeError), be on the device (DeviceError),
// take the result's dtype by torch's casting rule (DTypeError) and have no broadcast dims. Errors
// name `op`.
Tensor out_target(const char* op, Tensor& out, const Shape& shape, DType dtype, Device device,
                  std::initializer_list<const Tensor*> inputs);

// Copies the kernel's result into `out` when out_target gave another tensor; returns `out`.
Tensor& finish_out(Tensor& out, const Tensor& target);

}  // namespace tensorlet

// linear's product with its bias as one addmm (ops/addmm.cpp), for tl::linear (ops/linalg.cpp).
#pragma once

#include "tensorlet/tensor/tensor.h"

namespace tensorlet {

// addmm(bias, x, wt) with linear's name in its errors and no profiler row of its own (linear's
// row carries the flops); recorded as AddmmBackward0 in a graph, as torch's linear of a matrix.
// x is 2-D, the bias checked by linear (its device, dtype and broadcast to the result).
namespace detail {
Tensor linear_addmm(const Tensor& bias, const Tensor& x, const Tensor& wt);
}  // namespace detail

}  // namespace tensorlet

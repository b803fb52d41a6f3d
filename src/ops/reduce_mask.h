// The reduced-dim mask of a reduction's dim list, shared by the reduction front-ends and the
// composites built on them (logsumexp, var, std), so each validates dims naming its own op.
#pragma once

#include <cstdint>
#include <vector>

#include "tensorlet/tensor/tensor.h"

namespace tensorlet {

// mask[d] for each dim of a (every dim when `dims` is empty), with torch's checks on range and
// repeats (IndexError naming `op`). A 0-dim tensor takes dim 0 / -1 and gives an empty mask.
std::vector<bool> reduce_mask(const Tensor& a, IntArrayRef dims, const char* op);

// The shape of a keepdim result with its reduced dims dropped.
Shape drop_reduced(const Shape& keepdim_shape, const std::vector<bool>& mask);

}  // namespace tensorlet

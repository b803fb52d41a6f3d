// Reductions over any set of dims (one int, a list, or none = all) with keepdim; argmax/argmin;
// all/any.
#pragma once

#include <optional>
#include <vector>

#include "tensorlet/tensor/dim_list.h"
#include "tensorlet/tensor/tensor.h"

namespace tensorlet {

// Result and supported dtypes are torch's (the list in backends/math/reduce_ops.h); an unsupported
// dtype throws DTypeError. sum/prod of bool and integer tensors give int64; float16/bfloat16
// sums and means keep their dtype but accumulate in float32.
Tensor sum(const Tensor& a, const DimList& dims = {}, bool keepdim = false);
Tensor prod(const Tensor& a, const DimList& dims = {}, bool keepdim = false);
// mean needs a floating dtype, as torch.mean.
Tensor mean(const Tensor& a, const DimList& dims = {}, bool keepdim = false);
// torch.max(x) / torch.min(x): the largest / smallest element as a 0-dim tensor; NaN propagates.
Tensor max(const Tensor& a);
Tensor min(const Tensor& a);
// torch.max(x, dim) / torch.min(x, dim): the values along dim and their int64 indices (the first
// occurrence; a NaN counts as the max and the min, as in torch): auto [v, i] = tl::max(x, 1).
// For several dims at once, amax / amin (values only).
ValuesIndices max(const Tensor& a, int64_t dim, bool keepdim = false);
ValuesIndices min(const Tensor& a, int64_t dim, bool keepdim = false);
Tensor amax(const Tensor& a, const DimList& dims = {}, bool keepdim = false);
Tensor amin(const Tensor& a, const DimList& dims = {}, bool keepdim = false);
// Index (int64) of the first max/min along dim, or into the flattened tensor when no dim; not
// for bool, as torch.
Tensor argmax(const Tensor& a, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor argmin(const Tensor& a, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
// bool results, except uint8 inputs give uint8 (0/1), as torch.all/torch.any.
Tensor all(const Tensor& a, const DimList& dims = {}, bool keepdim = false);
Tensor any(const Tensor& a, const DimList& dims = {}, bool keepdim = false);

// out= forms: write into `out` (an empty one is resized to the result's shape, as torch;
// otherwise it must have that shape and take the result's dtype), allocating nothing when it is
// contiguous and of the result's dtype.
Tensor& sum_out(Tensor& out, const Tensor& a, const DimList& dims = {}, bool keepdim = false);
Tensor& prod_out(Tensor& out, const Tensor& a, const DimList& dims = {}, bool keepdim = false);
Tensor& mean_out(Tensor& out, const Tensor& a, const DimList& dims = {}, bool keepdim = false);
Tensor& amax_out(Tensor& out, const Tensor& a, const DimList& dims = {}, bool keepdim = false);
Tensor& amin_out(Tensor& out, const Tensor& a, const DimList& dims = {}, bool keepdim = false);

}  // namespace tensorlet

// Reductions over any set of dims (empty = all) with keepdim; argmax/argmin; all/any.
#pragma once

#include <optional>
#include <vector>

#include "core/tensor.h"

namespace tensorlet {

// sum/prod of bool and integer tensors give int64, as torch.sum.
Tensor sum(const Tensor& a, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor prod(const Tensor& a, const std::vector<int64_t>& dims = {}, bool keepdim = false);
// mean needs a floating dtype (DTypeError otherwise), as torch.mean.
Tensor mean(const Tensor& a, const std::vector<int64_t>& dims = {}, bool keepdim = false);
// max/min return values only (torch.amax/amin); NaN propagates.
Tensor max(const Tensor& a, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor min(const Tensor& a, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor amax(const Tensor& a, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor amin(const Tensor& a, const std::vector<int64_t>& dims = {}, bool keepdim = false);
// Index (int64) of the first max/min along dim, or into the flattened tensor when no dim.
Tensor argmax(const Tensor& a, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor argmin(const Tensor& a, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor all(const Tensor& a, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor any(const Tensor& a, const std::vector<int64_t>& dims = {}, bool keepdim = false);

}  // namespace tensorlet

// Batches from datasets: stacking examples, or gathering rows of tensors with index_select.
#include "tensorlet/data/dataset.h"

#include "tensorlet/ops/factories.h"
#include "tensorlet/ops/indexing.h"
#include "tensorlet/ops/joining.h"
#include "tensorlet/tensor/error.h"

namespace tensorlet::data {

Example Dataset::get_batch(const std::vector<size_t>& indices) const {
  std::vector<Tensor> data, targets;
  for (size_t i : indices) {
    Example e = get(i);
    data.push_back(std::move(e.data));
    targets.push_back(std::move(e.target));
  }
  return {stack(data), stack(targets)};
}

TensorDataset::TensorDataset(Tensor data, Tensor targets)
    : data_(std::move(data)), targets_(std::move(targets)) {
  constexpr const char* op = "tl::data::TensorDataset";
  check_defined(data_, op);
  check_defined(targets_, op);
  TL_CHECK(data_.dim() >= 1 && targets_.dim() >= 1, ShapeError, op,
           "expected data and targets with a dim 0 to index, got shapes ", data_.shape(), " and ",
           targets_.shape());
  TL_CHECK(data_.size(0) == targets_.size(0), ShapeError, op,
           "expected as many targets as examples, got ", data_.size(0), " examples and ",
           targets_.size(0), " targets");
}

Example TensorDataset::get(size_t index) const {
  TL_CHECK(index < size(), IndexError, "tl::data::TensorDataset::get", "index ", index,
           " is out of range for ", size(), " examples");
  const auto i = static_cast<int64_t>(index);
  return {data_.select(0, i), targets_.select(0, i)};
}

Example TensorDataset::get_batch(const std::vector<size_t>& indices) const {
  std::vector<int64_t> rows(indices.begin(), indices.end());
  for (size_t i : indices)
    TL_CHECK(i < size(), IndexError, "tl::data::TensorDataset::get_batch", "index ", i,
             " is out of range for ", size(), " examples");
  const Tensor index = from_vector(rows, {static_cast<int64_t>(rows.size())}).to(data_.device());
  return {index_select(data_, 0, index), index_select(targets_, 0, index.to(targets_.device()))};
}

}  // namespace tensorlet::data

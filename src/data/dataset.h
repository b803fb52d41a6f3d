// tl::data's datasets (LibTorch's torch::data shapes): an Example is {data, target}; a Dataset
// gives examples by index and batches by a list of indices; TensorDataset serves rows of two
// tensors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tensorlet/tensor/tensor.h"

namespace tensorlet::data {

struct Example {
  Tensor data;
  Tensor target;
};

class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual Example get(size_t index) const = 0;
  virtual size_t size() const = 0;
  // The examples at `indices` stacked along a new dim 0. The default stacks get()'s; datasets
  // held in tensors gather their rows in one op. Called from the loader's background thread.
  virtual Example get_batch(const std::vector<size_t>& indices) const;
};

// Row i of data and of targets (the same length along dim 0). Error naming
// tl::data::TensorDataset for undefined tensors, 0-dim ones or different lengths.
class TensorDataset : public Dataset {
 public:
  TensorDataset(Tensor data, Tensor targets);
  Example get(size_t index) const override;
  size_t size() const override { return static_cast<size_t>(data_.size(0)); }
  Example get_batch(const std::vector<size_t>& indices) const override;
  const Tensor& data() const { return data_; }
  const Tensor& targets() const { return targets_; }

 private:
  Tensor data_, targets_;
};

}  // namespace tensorlet::data

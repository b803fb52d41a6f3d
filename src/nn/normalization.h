// tl::nn's normalization and lookup layers (torch.nn's LayerNorm, BatchNorm1d, BatchNorm2d,
// Embedding), over tensorlet's ops, differentiable through them.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <vector>

#include "tensorlet/nn/module.h"
#include "tensorlet/tensor/tensor.h"
#include "tensorlet/tensor/tensor_options.h"

namespace tensorlet::nn {

namespace functional {
// (x - mean) / sqrt(var + eps) over the last normalized_shape.size() dims (biased variance),
// then * weight + bias when given (of normalized_shape). ShapeError naming
// tl::nn::functional::layer_norm when x's trailing dims are not normalized_shape.
Tensor layer_norm(const Tensor& x, const std::vector<int64_t>& normalized_shape,
                  const Tensor& weight = {}, const Tensor& bias = {}, double eps = 1e-5);
// Batch statistics over every dim but 1 in training (updating running_mean / running_var, when
// given, with momentum and the unbiased variance, as torch's), the running ones otherwise.
Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                  const Tensor& weight = {}, const Tensor& bias = {}, bool training = false,
                  double momentum = 0.1, double eps = 1e-5);
// Rows of weight [num_embeddings, dim] at the int64 indices: [..., dim]. IndexError naming
// tl::nn::functional::embedding for an index out of range (checked on the CPU).
Tensor embedding(const Tensor& indices, const Tensor& weight);
}  // namespace functional

class LayerNormImpl : public Module {
 public:
  explicit LayerNormImpl(std::vector<int64_t> normalized_shape, double eps = 1e-5,
                         bool elementwise_affine = true, TensorOptions options = {});
  Tensor forward(const Tensor& x) const;
  void pretty_print(std::ostream& stream) const override;
  std::vector<int64_t> normalized_shape;
  double eps;
  Tensor weight, bias;  // ones and zeros; undefined without elementwise_affine
};
TL_MODULE(LayerNorm);

// BatchNorm1d takes [N, C] or [N, C, L], BatchNorm2d [N, C, H, W] (ShapeError naming the layer
// otherwise). Buffers running_mean (zeros), running_var (ones), num_batches_tracked (int64).
class BatchNormImpl : public Module {
 public:
  BatchNormImpl(int dims, int64_t num_features, double eps, double momentum, bool affine,
                bool track_running_stats, TensorOptions options);
  Tensor forward(const Tensor& x);
  void pretty_print(std::ostream& stream) const override;
  int64_t num_features;
  double eps, momentum;
  bool affine, track_running_stats;
  Tensor weight, bias, running_mean, running_var, num_batches_tracked;

 private:
  int dims_;  // 1 or 2
};

class BatchNorm1dImpl : public BatchNormImpl {
 public:
  explicit BatchNorm1dImpl(int64_t num_features, double eps = 1e-5, double momentum = 0.1,
                           bool affine = true, bool track_running_stats = true,
                           TensorOptions options = {})
      : BatchNormImpl(1, num_features, eps, momentum, affine, track_running_stats, options) {}
};
TL_MODULE(BatchNorm1d);

class BatchNorm2dImpl : public BatchNormImpl {
 public:
  explicit BatchNorm2dImpl(int64_t num_features, double eps = 1e-5, double momentum = 0.1,
                           bool affine = true, bool track_running_stats = true,
                           TensorOptions options = {})
      : BatchNormImpl(2, num_features, eps, momentum, affine, track_running_stats, options) {}
};
TL_MODULE(BatchNorm2d);

// weight [num_embeddings, embedding_dim] drawn from N(0, 1), torch's default.
class EmbeddingImpl : public Module {
 public:
  EmbeddingImpl(int64_t num_embeddings, int64_t embedding_dim, TensorOptions options = {});
  Tensor forward(const Tensor& indices) const;
  void pretty_print(std::ostream& stream) const override;
  int64_t num_embeddings, embedding_dim;
  Tensor weight;
};
TL_MODULE(Embedding);

}  // namespace tensorlet::nn

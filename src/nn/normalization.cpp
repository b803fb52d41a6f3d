// LayerNorm, BatchNorm and Embedding: checks naming the call, then torch's formulas as ops.
#include "tensorlet/nn/normalization.h"

#include "tensorlet/nn/fused_batch_norm.h"
#include "tensorlet/tensor/autocast.h"

#include "tensorlet/ops/elementwise.h"
#include "tensorlet/ops/factories.h"
#include "tensorlet/ops/indexing.h"
#include "tensorlet/ops/random.h"
#include "tensorlet/ops/reduce.h"
#include "tensorlet/tensor/error.h"
#include "tensorlet/tensor/grad_mode.h"
#include "tensorlet/tensor/op_scope.h"

namespace tensorlet::nn {

namespace functional {

Tensor layer_norm(const Tensor& x, const std::vector<int64_t>& normalized_shape,
                  const Tensor& weight, const Tensor& bias, double eps) {
  constexpr const char* op = "tl::nn::functional::layer_norm";
  // autocast on CUDA: on torch's float32 list there (the statistics need the range).
  if (x.defined() && autocast_detail::applies_cuda_float32(x) && is_reduced_float(x.dtype()))
      [[unlikely]] {
    const Tensor fx = autocast_detail::to_float32(x), fw = autocast_detail::to_float32(weight),
                 fb = autocast_detail::to_float32(bias);
    autocast_detail::InsideOp inside;
    return layer_norm(fx, normalized_shape, fw, fb, eps);
  }
  check_defined(x, op);
  TL_CHECK(is_floating_point(x.dtype()), DTypeError, op, "expected a floating point input, got ",
           x.dtype());
  const auto k = static_cast<int64_t>(normalized_shape.size());
  TL_CHECK(k >= 1 && x.dim() >= k, ShapeError, op, "expected an input whose last ", k, " dims are ",
           Shape(normalized_shape), ", got ", x.shape());
  for (int64_t i = 0; i < k; ++i)
    TL_CHECK(x.size(x.dim() - k + i) == normalized_shape[static_cast<size_t>(i)], ShapeError, op,
             "expected an input whose last ", k, " dims are ", Shape(normalized_shape), ", got ",
             x.shape());
  for (const Tensor* p : {&weight, &bias})
    if (p->defined())
      TL_CHECK(p->shape() == Shape(normalized_shape), ShapeError, op,
               "expected weight and bias of shape ", Shape(normalized_shape), ", got ", p->shape());
  std::vector<int64_t> dims;
  for (int64_t i = x.dim() - k; i < x.dim(); ++i) dims.push_back(i);
  const Tensor mean_x = mean(x, dims, true);
  const Tensor centred = x - mean_x;
  const Tensor var_x = mean(centred * centred, dims, true);
  Tensor y = centred * rsqrt(var_x + eps);
  if (weight.defined()) y = y * weight;
  if (bias.defined()) y = y + bias;
  return y;
}

Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                  const Tensor& weight, const Tensor& bias, bool training, double momentum,
                  double eps) {
  constexpr const char* op = "tl::nn::functional::batch_norm";
  profiler::OpScope scope(op);  // its own row in the profiler's tables, fused or not
  check_defined(x, op);
  TL_CHECK(x.dim() >= 2, ShapeError, op, "expected an input of 2 or more dims [N, C, ...], got ",
           x.shape());
  const int64_t c = x.size(1);
  for (const Tensor* p : {&running_mean, &running_var, &weight, &bias})
    if (p->defined())
      TL_CHECK(p->dim() == 1 && p->size(0) == c, ShapeError, op,
               "expected per-channel tensors of shape [", c, "], got ", p->shape());
  std::vector<int64_t> dims{0};
  for (int64_t d = 2; d < x.dim(); ++d) dims.push_back(d);
  // The per-channel tensors as [1, C, 1, ...], to broadcast against x.
  std::vector<int64_t> row(static_cast<size_t>(x.dim()), 1);
  row[1] = c;
  auto channel = [&](const Tensor& t) { return t.view(row); };
  Tensor mean_x, var_x;
  if (training) {
    const int64_t count = x.numel() / std::max<int64_t>(c, 1);
    TL_CHECK(count > 1, Error, op,
             "expected more than 1 value per channel when training, got input ", x.shape());
    // One kernel each way where the backend has them (nn/fused_batch_norm.h).
    const Tensor fused =
        fused_batch_norm(x, running_mean, running_var, weight, bias, momentum, eps);
    if (fused.defined()) return fused;
    mean_x = mean(x, dims, true);
    const Tensor centred = x - mean_x;
    var_x = mean(centred * centred, dims, true);
    if (running_mean.defined() && running_var.defined()) {
      NoGradGuard no_grad;
      const double unbias = static_cast<double>(count) / static_cast<double>(count - 1);
      Tensor rm = running_mean, rv = running_var;  // handles: the buffers change in place
      rm.mul_(1 - momentum).add_(mean_x.detach().view({c}), momentum);
      rv.mul_(1 - momentum).add_(var_x.detach().view({c}) * unbias, momentum);
    }
  } else {
    TL_CHECK(running_mean.defined() && running_var.defined(), Error, op,
             "running_mean and running_var are needed outside training");
    mean_x = channel(running_mean);
    var_x = channel(running_var);
  }
  Tensor y = (x - mean_x) * rsqrt(var_x + eps);
  if (weight.defined()) y = y * channel(weight);
  if (bias.defined()) y = y + channel(bias);
  return y;
}

Tensor embedding(const Tensor& indices, const Tensor& weight) {
  constexpr const char* op = "tl::nn::functional::embedding";
  check_defined(indices, op);
  check_defined(weight, op);
  TL_CHECK(indices.dtype() == kInt64 || indices.dtype() == kInt32, DTypeError, op,
           "expected int64 or int32 indices, got ", indices.dtype());
  TL_CHECK(weight.dim() == 2, ShapeError, op, "expected a weight [num_embeddings, dim], got ",
           weight.shape());
  TL_CHECK(indices.device() == weight.device(), DeviceError, op, "expected indices on ",
           weight.device(), ", got ", indices.device());
  if (indices.device().is_cpu() && indices.numel() > 0) {
    NoGradGuard no_grad;
    const int64_t lo = amin(indices).to(kInt64).item<int64_t>();
    const int64_t hi = amax(indices).to(kInt64).item<int64_t>();
    TL_CHECK(lo >= 0 && hi < weight.size(0), IndexError, op, "index ", lo < 0 ? lo : hi,
             " is out of range for ", weight.size(0), " embeddings");
  }
  std::vector<int64_t> shape(indices.shape().begin(), indices.shape().end());
  shape.push_back(weight.size(1));
  return index_select(weight, 0, indices.reshape({-1})).view(shape);
}

}  // namespace functional

namespace F = functional;

LayerNormImpl::LayerNormImpl(std::vector<int64_t> shape, double eps_, bool affine,
                             TensorOptions options)
    : normalized_shape(std::move(shape)), eps(eps_) {
  for (int64_t d : normalized_shape)
    TL_CHECK(d >= 0, ShapeError, "tl::nn::LayerNorm", "expected non-negative dims, got ",
             Shape(normalized_shape));
  weight = register_parameter("weight", affine ? ones(normalized_shape, options) : Tensor());
  bias = register_parameter("bias", affine ? zeros(normalized_shape, options) : Tensor());
}

Tensor LayerNormImpl::forward(const Tensor& x) const {
  return F::layer_norm(x, normalized_shape, weight, bias, eps);
}

void LayerNormImpl::pretty_print(std::ostream& stream) const {
  stream << "LayerNorm((";
  for (size_t i = 0; i < normalized_shape.size(); ++i)
    stream << (i > 0 ? ", " : "") << normalized_shape[i];
  if (normalized_shape.size() == 1) stream << ",";
  stream << "), eps=" << eps << ", elementwise_affine=" << (weight.defined() ? "True" : "False")
         << ")";
}

BatchNormImpl::BatchNormImpl(int dims, int64_t features, double eps_, double momentum_,
                             bool affine_, bool track, TensorOptions options)
    : num_features(features),
      eps(eps_),
      momentum(momentum_),
      affine(affine_),
      track_running_stats(track),
      dims_(dims) {
  TL_CHECK(features > 0, ShapeError, dims == 1 ? "tl::nn::BatchNorm1d" : "tl::nn::BatchNorm2d",
           "expected a positive num_features, got ", features);
  weight = register_parameter("weight", affine ? ones({features}, options) : Tensor());
  bias = register_parameter("bias", affine ? zeros({features}, options) : Tensor());
  if (track) {
    running_mean = register_buffer("running_mean", zeros({features}, options));
    running_var = register_buffer("running_var", ones({features}, options));
    num_batches_tracked = register_buffer("num_batches_tracked", zeros({}, kInt64));
  }
}

Tensor BatchNormImpl::forward(const Tensor& x) {
  const char* op = dims_ == 1 ? "tl::nn::BatchNorm1d::forward" : "tl::nn::BatchNorm2d::forward";
  check_defined(x, op);
  const bool rank_ok = dims_ == 1 ? (x.dim() == 2 || x.dim() == 3) : x.dim() == 4;
  TL_CHECK(rank_ok, ShapeError, op, "expected ",
           dims_ == 1 ? "2D or 3D input [N, C] or [N, C, L]" : "4D input [N, C, H, W]", ", got ",
           x.shape());
  TL_CHECK(x.size(1) == num_features, ShapeError, op, "expected ", num_features,
           " channels (dim 1), got input ", x.shape());
  // Batch statistics in training, and always without running ones; the running ones are
  // updated in training and used in eval.
  const bool use_batch = is_training() || !track_running_stats;
  Tensor y = F::batch_norm(x, running_mean, running_var, weight, bias, use_batch, momentum, eps);
  if (is_training() && track_running_stats) {
    NoGradGuard no_grad;
    num_batches_tracked.add_(1);
  }
  return y;
}

void BatchNormImpl::pretty_print(std::ostream& stream) const {
  stream << (dims_ == 1 ? "BatchNorm1d(" : "BatchNorm2d(") << num_features << ", eps=" << eps
         << ", momentum=" << momentum << ", affine=" << (affine ? "True" : "False")
         << ", track_running_stats=" << (track_running_stats ? "True" : "False") << ")";
}

EmbeddingImpl::EmbeddingImpl(int64_t n, int64_t dim, TensorOptions options)
    : num_embeddings(n), embedding_dim(dim) {
  TL_CHECK(n >= 0 && dim >= 0, ShapeError, "tl::nn::Embedding",
           "expected non-negative num_embeddings and embedding_dim, got ", n, " and ", dim);
  NoGradGuard no_grad;
  weight = register_parameter("weight", randn({n, dim}, options));
}

Tensor EmbeddingImpl::forward(const Tensor& indices) const { return F::embedding(indices, weight); }

void EmbeddingImpl::pretty_print(std::ostream& stream) const {
  stream << "Embedding(" << num_embeddings << ", " << embedding_dim << ")";
}

}  // namespace tensorlet::nn

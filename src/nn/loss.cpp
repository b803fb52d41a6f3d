// The losses: argument checks naming the function called, then torch's formulas as recorded ops
// (so their gradients are autograd's), then the reduction; cross_entropy of class indices is
// one fused kernel each way instead (nn/fused_cross_entropy.h).
#include "tensorlet/nn/loss.h"
#include "tensorlet/tensor/autocast.h"

#include <string>
#include <utility>
#include <vector>

#include "tensorlet/nn/fused_cross_entropy.h"
#include "tensorlet/ops/elementwise.h"
#include "tensorlet/ops/indexing.h"
#include "tensorlet/ops/numerics.h"
#include "tensorlet/ops/reduce.h"
#include "tensorlet/tensor/broadcast.h"
#include "tensorlet/tensor/error.h"
#include "tensorlet/tensor/grad_mode.h"
#include "tensorlet/tensor/op_scope.h"

namespace tensorlet::nn {

namespace functional {

namespace {

// autocast: the losses are on torch's float32 list; `f` reruns the loss on float32 inputs (the
// float16/bfloat16 ones cast) with nested ops not casting again.
template <class F>
bool autocast_float32(const Tensor& a, const Tensor& b, const F& f, Tensor& out) {
  const bool low = (autocast_detail::applies(a) && is_reduced_float(a.dtype())) ||
                   (autocast_detail::applies(b) && is_reduced_float(b.dtype()));
  if (!low) return false;
  const Tensor fa = autocast_detail::to_float32(a), fb = autocast_detail::to_float32(b);
  autocast_detail::InsideOp inside;
  out = f(fa, fb);
  return true;
}

Tensor reduced(const Tensor& elements, Reduction reduction) {
  switch (reduction) {
    case Reduction::None:
      return elements;
    case Reduction::Sum:
      return sum(elements);
    case Reduction::Mean:
      break;
  }
  return mean(elements);
}

void check_floating(const Tensor& t, const char* what, const char* op) {
  check_defined(t, op);
  TL_CHECK(is_floating_point(t.dtype()), DTypeError, op, "expected a floating point ", what,
           ", got ", t.dtype());
}

// input and target of one floating dtype and device, shapes that broadcast together.
void check_pair(const Tensor& input, const Tensor& target, const char* op) {
  check_floating(input, "input", op);
  check_floating(target, "target", op);
  TL_CHECK(input.dtype() == target.dtype(), DTypeError, op, "expected target of input's dtype ",
           input.dtype(), ", got ", target.dtype());
  TL_CHECK(input.device() == target.device(), DeviceError, op, "expected target on ",
           input.device(), " (the input's device), got ", target.device());
  broadcast_shapes(input.shape(), target.shape(), op);
}

// An optional tensor argument (weight, pos_weight): of input's dtype and device, broadcast to
// `shape` when `to_shape`.
void check_optional(const Tensor& t, const Tensor& input, const char* what, const char* op) {
  if (!t.defined()) return;
  TL_CHECK(t.dtype() == input.dtype(), DTypeError, op, "expected ", what, " of input's dtype ",
           input.dtype(), ", got ", t.dtype());
  TL_CHECK(t.device() == input.device(), DeviceError, op, "expected ", what, " on ", input.device(),
           ", got ", t.device());
}

int64_t class_dim(const Tensor& input) { return input.dim() == 1 ? 0 : 1; }

// The shape of the class-index target for input: input's without the class dim.
Shape target_shape_for(const Tensor& input) {
  std::vector<int64_t> dims(input.shape().begin(), input.shape().end());
  dims.erase(dims.begin() + class_dim(input));
  return Shape(dims);
}

void check_class_target(const Tensor& input, const Tensor& target, const Tensor& weight,
                        int64_t ignore_index, const char* op) {
  TL_CHECK(input.dim() >= 1, ShapeError, op,
           "expected an input of shape [C], [N, C] or [N, C, d1, ...], got a 0-dim tensor");
  TL_CHECK(target.dtype() == kInt64, DTypeError, op,
           "expected class indices of dtype int64 (or a floating target of input's shape for "
           "class probabilities), got ",
           target.dtype());
  TL_CHECK(target.device() == input.device(), DeviceError, op, "expected target on ",
           input.device(), " (the input's device), got ", target.device());
  const Shape want = target_shape_for(input);
  TL_CHECK(target.shape() == want, ShapeError, op, "expected target of shape ", want,
           " for input of shape ", input.shape(), ", got ", target.shape());
  const int64_t classes = input.size(class_dim(input));
  if (weight.defined()) {
    check_optional(weight, input, "weight", op);
    TL_CHECK(weight.dim() == 1 && weight.size(0) == classes, ShapeError, op,
             "expected a weight of shape [", classes, "] (one per class), got ", weight.shape());
  }
  // On the CPU the range is checked here; on a device gather's own check finds it (picked_nll
  // renames its error after the loss).
  if (input.device().is_cpu() && target.numel() > 0) {
    NoGradGuard no_grad;
    const Tensor bad = logical_and(ne(target, ignore_index),
                                   logical_or(lt(target, int64_t{0}), ge(target, classes)));
    if (any(bad).item<bool>()) {
      const Tensor first = masked_select(target, bad).slice(0, 0, 1);
      fail<IndexError>(op, "Target ", first.item<int64_t>(), " is out of bounds (", classes,
                       " classes)");
    }
  }
}

// -w[t] * input[t] per sample (0 where ignored) and the per-sample weights w[t] (0 where
// ignored), for nll_loss and cross_entropy.
struct PickedLoss {
  Tensor elements, weights;
};

PickedLoss picked_nll(const Tensor& log_probs, const Tensor& target, const Tensor& weight,
                      int64_t ignore_index, const char* op) {
  const int64_t dim = class_dim(log_probs);
  const Tensor keep = ne(target, ignore_index);
  const Tensor safe = where(keep, target, int64_t{0});
  Tensor picked;
  try {
    picked = gather(log_probs, dim, safe.unsqueeze(dim)).squeeze(dim);
  } catch (const IndexError& e) {
    // A target out of range on a device (the CPU's are checked before): gather's check found
    // it; the error names the loss the user called.
    const std::string what = e.what();
    const size_t start = what.find("] ");
    fail<IndexError>(
        op, "Target out of bounds: ", start == std::string::npos ? what : what.substr(start + 2));
  }
  Tensor w = keep.to(log_probs.dtype());
  if (weight.defined()) w = w * index_select(weight, 0, safe.reshape({-1})).view(target.shape());
  // An ignored element contributes 0 even when its row holds NaN or inf (torch skips it; a
  // multiply by its weight 0 would give NaN).
  return {where(keep, neg(picked) * w, 0.0), w};
}

Tensor reduce_weighted(const PickedLoss& p, Reduction reduction) {
  if (reduction == Reduction::Mean) return sum(p.elements) / sum(p.weights);
  return reduced(p.elements, reduction);
}

}  // namespace

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  if (Tensor out; autocast_float32(
          input, target,
          [&](const Tensor& x, const Tensor& t) { return mse_loss(x, t, reduction); }, out))
    return out;
  check_pair(input, target, "tl::nn::functional::mse_loss");
  return reduced(square(input - target), reduction);
}

Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  if (Tensor out; autocast_float32(
          input, target, [&](const Tensor& x, const Tensor& t) { return l1_loss(x, t, reduction); },
          out))
    return out;
  check_pair(input, target, "tl::nn::functional::l1_loss");
  return reduced(abs(input - target), reduction);
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction reduction, double beta) {
  if (Tensor out; autocast_float32(
          input, target,
          [&](const Tensor& x, const Tensor& t) { return smooth_l1_loss(x, t, reduction, beta); },
          out))
    return out;
  constexpr const char* op = "tl::nn::functional::smooth_l1_loss";
  check_pair(input, target, op);
  TL_CHECK(beta >= 0, Error, op, "smooth_l1_loss does not support negative values for beta (got ",
           beta, ")");
  const Tensor d = abs(input - target);
  if (beta == 0) return reduced(d, reduction);
  return reduced(where(lt(d, beta), square(d) * (0.5 / beta), d - 0.5 * beta), reduction);
}

Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight,
                int64_t ignore_index, Reduction reduction) {
  if (Tensor out; autocast_float32(
          input, weight,
          [&](const Tensor& x, const Tensor& w) {
            return nll_loss(x, target, w, ignore_index, reduction);
          },
          out))
    return out;
  constexpr const char* op = "tl::nn::functional::nll_loss";
  check_floating(input, "input", op);
  check_defined(target, op);
  check_class_target(input, target, weight, ignore_index, op);
  return reduce_weighted(picked_nll(input, target, weight, ignore_index, op), reduction);
}

Tensor cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight,
                     int64_t ignore_index, Reduction reduction, double label_smoothing) {
  constexpr const char* op = "tl::nn::functional::cross_entropy";
  // Probabilities as a target are cast with the input (the weight follows the input).
  if (Tensor out; autocast_float32(
          input, target.defined() && is_floating_point(target.dtype()) ? target : Tensor(),
          [&](const Tensor& x, const Tensor& t) {
            return cross_entropy(x, t.defined() ? t : target, autocast_detail::to_float32(weight),
                                 ignore_index, reduction, label_smoothing);
          },
          out))
    return out;
  profiler::OpScope scope(op);
  check_floating(input, "input", op);
  check_defined(target, op);
  TL_CHECK(label_smoothing >= 0 && label_smoothing <= 1, Error, op,
           "label_smoothing must be between 0.0 and 1.0. Got: ", label_smoothing);
  TL_CHECK(input.dim() >= 1, ShapeError, op,
           "expected an input of shape [C], [N, C] or [N, C, d1, ...], got a 0-dim tensor");
  const int64_t dim = class_dim(input);
  const int64_t classes = input.size(dim);
  // The weight as a row along the class dim, for the sums over classes.
  auto along_classes = [&](const Tensor& w) {
    std::vector<int64_t> shape(static_cast<size_t>(input.dim()), 1);
    shape[static_cast<size_t>(dim)] = classes;
    return w.view(shape);
  };
  if (is_floating_point(target.dtype())) {  // class probabilities
    TL_CHECK(target.shape() == input.shape(), ShapeError, op,
             "expected class probabilities of input's shape ", input.shape(), ", got ",
             target.shape());
    check_pair(input, target, op);
    if (weight.defined()) {
      check_optional(weight, input, "weight", op);
      TL_CHECK(weight.dim() == 1 && weight.size(0) == classes, ShapeError, op,
               "expected a weight of shape [", classes, "] (one per class), got ", weight.shape());
    }
    TL_CHECK(ignore_index < 0, Error, op,
             "ignore_index is not supported for floating point target (got ignore_index ",
             ignore_index, " with class probabilities)");
    const Tensor logp = log_softmax(input, dim);
    Tensor t =
        label_smoothing > 0 ? target * (1 - label_smoothing) + label_smoothing / classes : target;
    Tensor terms = logp * t;
    if (weight.defined()) terms = terms * along_classes(weight);
    return reduced(neg(sum(terms, {dim})), reduction);
  }
  check_class_target(input, target, weight, ignore_index, op);
  // Class indices: log_softmax and nll in one kernel each way (nn/fused_cross_entropy.h), the
  // classes moved last for [N, C, d1, ...]. A weight that wants a gradient takes the ops below.
  if (!(weight.defined() && weight.requires_grad())) {
    const Tensor rows = input.dim() == 1   ? input.unsqueeze(0)
                        : input.dim() == 2 ? input
                                           : input.movedim(1, -1).reshape({-1, classes});
    const RowLosses r =
        fused_cross_entropy_rows(rows, target.reshape({-1}), weight, ignore_index, label_smoothing);
    Tensor loss;
    switch (reduction) {
      case Reduction::None:
        loss = r.loss.view(target.shape());
        break;
      case Reduction::Sum:
        loss = sum(r.loss);
        break;
      case Reduction::Mean:
        loss = sum(r.loss) / sum(r.weight);
        break;
    }
    return loss.to(input.dtype());
  }
  const Tensor logp = log_softmax(input, dim);
  const PickedLoss nll = picked_nll(logp, target, weight, ignore_index, op);
  if (label_smoothing == 0) return reduce_weighted(nll, reduction);
  // torch's: (1 - eps) nll + eps / C * (-sum_c w_c log p_c), the smooth part reduced with the
  // same weights (mean over the summed weights of the targets kept).
  Tensor smooth = weight.defined() ? logp * along_classes(weight) : logp;
  smooth = neg(sum(smooth, {dim})) * ne(target, ignore_index).to(input.dtype());
  Tensor smooth_reduced =
      reduction == Reduction::Mean ? sum(smooth) / sum(nll.weights) : reduced(smooth, reduction);
  return reduce_weighted(nll, reduction) * (1 - label_smoothing) +
         smooth_reduced * (label_smoothing / classes);
}

Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight,
                            Reduction reduction) {
  constexpr const char* op = "tl::nn::functional::binary_cross_entropy";
  TL_CHECK(!autocast_detail::applies_cuda_float32(input), Error, op,
           "binary_cross_entropy is unsafe to autocast (its log of a float16 probability "
           "saturates; torch refuses it too): use binary_cross_entropy_with_logits, which "
           "autocast runs in float32, or leave the autocast region for this loss");
  // On the CPU torch runs it in float32 instead.
  if (Tensor out; autocast_float32(
          input, target,
          [&](const Tensor& x, const Tensor& t) {
            return binary_cross_entropy(x, t, autocast_detail::to_float32(weight), reduction);
          },
          out))
    return out;
  check_pair(input, target, op);
  TL_CHECK(input.shape() == target.shape(), ShapeError, op, "expected target of input's shape ",
           input.shape(), ", got ", target.shape());
  check_optional(weight, input, "weight", op);
  if (weight.defined()) broadcast_shapes(weight.shape(), input.shape(), op);
  if (input.device().is_cpu() && input.numel() > 0) {
    NoGradGuard no_grad;
    TL_CHECK(all(logical_and(ge(input, 0.0), le(input, 1.0))).item<bool>(), Error, op,
             "all elements of input should be between 0 and 1");
  }
  // torch clamps each log at -100, so a 0 or 1 input gives a finite loss.
  const Tensor log_x = clamp(log(input), Scalar(-100.0));
  const Tensor log_1mx = clamp(log(1.0 - input), Scalar(-100.0));
  Tensor elements = neg(target * log_x + (1.0 - target) * log_1mx);
  if (weight.defined()) elements = elements * weight;
  return reduced(elements, reduction);
}

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const Tensor& weight, Reduction reduction,
                                        const Tensor& pos_weight) {
  constexpr const char* op = "tl::nn::functional::binary_cross_entropy_with_logits";
  if (Tensor out; autocast_float32(
          input, target,
          [&](const Tensor& x, const Tensor& t) {
            return binary_cross_entropy_with_logits(x, t, autocast_detail::to_float32(weight),
                                                    reduction,
                                                    autocast_detail::to_float32(pos_weight));
          },
          out))
    return out;
  check_pair(input, target, op);
  TL_CHECK(input.shape() == target.shape(), ShapeError, op, "expected target of input's shape ",
           input.shape(), ", got ", target.shape());
  check_optional(weight, input, "weight", op);
  check_optional(pos_weight, input, "pos_weight", op);
  if (weight.defined()) broadcast_shapes(weight.shape(), input.shape(), op);
  if (pos_weight.defined()) broadcast_shapes(pos_weight.shape(), input.shape(), op);
  // log(1 + exp(-x)) = log1p(exp(-|x|)) + max(-x, 0): never overflows.
  const Tensor softplus_neg = log1p(exp(neg(abs(input)))) + relu(neg(input));
  Tensor elements;
  if (pos_weight.defined()) {
    const Tensor log_weight = (pos_weight - 1.0) * target + 1.0;
    elements = (1.0 - target) * input + log_weight * softplus_neg;
  } else {
    elements = (1.0 - target) * input + softplus_neg;
  }
  if (weight.defined()) elements = elements * weight;
  return reduced(elements, reduction);
}

}  // namespace functional

namespace F = functional;

Tensor MSELossImpl::forward(const Tensor& input, const Tensor& target) const {
  return F::mse_loss(input, target, reduction);
}
Tensor L1LossImpl::forward(const Tensor& input, const Tensor& target) const {
  return F::l1_loss(input, target, reduction);
}
Tensor SmoothL1LossImpl::forward(const Tensor& input, const Tensor& target) const {
  return F::smooth_l1_loss(input, target, reduction, beta);
}

CrossEntropyLossImpl::CrossEntropyLossImpl(CrossEntropyLossOptions options_)
    : options(std::move(options_)) {
  weight = register_buffer("weight", options.weight());
}
Tensor CrossEntropyLossImpl::forward(const Tensor& input, const Tensor& target) const {
  return F::cross_entropy(input, target, weight, options.ignore_index(), options.reduction(),
                          options.label_smoothing());
}

NLLLossImpl::NLLLossImpl(NLLLossOptions options_) : options(std::move(options_)) {
  weight = register_buffer("weight", options.weight());
}
Tensor NLLLossImpl::forward(const Tensor& input, const Tensor& target) const {
  return F::nll_loss(input, target, weight, options.ignore_index(), options.reduction());
}

BCELossImpl::BCELossImpl(Tensor weight_, Reduction reduction_) : reduction(reduction_) {
  weight = register_buffer("weight", std::move(weight_));
}
Tensor BCELossImpl::forward(const Tensor& input, const Tensor& target) const {
  return F::binary_cross_entropy(input, target, weight, reduction);
}

BCEWithLogitsLossImpl::BCEWithLogitsLossImpl(Tensor weight_, Reduction reduction_,
                                             Tensor pos_weight_)
    : reduction(reduction_) {
  weight = register_buffer("weight", std::move(weight_));
  pos_weight = register_buffer("pos_weight", std::move(pos_weight_));
}
Tensor BCEWithLogitsLossImpl::forward(const Tensor& input, const Tensor& target) const {
  return F::binary_cross_entropy_with_logits(input, target, weight, reduction, pos_weight);
}

}  // namespace tensorlet::nn

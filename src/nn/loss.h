// tl::nn's losses (torch.nn.functional's mse_loss, l1_loss, smooth_l1_loss, nll_loss,
// cross_entropy, binary_cross_entropy, binary_cross_entropy_with_logits, and their modules):
// torch's formulas and reductions over tensorlet's ops, differentiable through them.
#pragma once

#include <cstdint>
#include <ostream>
#include <utility>

#include "tensorlet/nn/module.h"
#include "tensorlet/tensor/tensor.h"

namespace tensorlet::nn {

enum class Reduction { None, Mean, Sum };
inline constexpr Reduction kNone = Reduction::None;
inline constexpr Reduction kMean = Reduction::Mean;
inline constexpr Reduction kSum = Reduction::Sum;

namespace functional {

// Elementwise losses: input and target floating, of one dtype and device, broadcast together.
Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction = kMean);
Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction = kMean);
// 0.5 d^2 / beta where |d| < beta, |d| - 0.5 beta elsewhere (beta 0: l1_loss); beta >= 0.
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction reduction = kMean,
                      double beta = 1.0);

// input: log-probabilities [N, C] (or [C], or [N, C, d1, ...]), target: int64 class indices
// [N] ([], [N, d1, ...]) in [0, C) or ignore_index; weight: [C] of input's dtype, or undefined.
// mean divides by the summed weights of the targets not ignored (torch's). A target out of
// range is an IndexError naming the loss (on CUDA, gather's check in the kernel raises it at the
// next synchronization).
Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight = {},
                int64_t ignore_index = -100, Reduction reduction = kMean);
// log_softmax over the class dim then nll_loss, for class-index targets; for a floating target
// of input's shape (class probabilities), -sum_c w_c t_c log p_c per sample, mean over samples.
// label_smoothing in [0, 1] mixes the target with the uniform distribution as torch's.
Tensor cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight = {},
                     int64_t ignore_index = -100, Reduction reduction = kMean,
                     double label_smoothing = 0.0);
// input: probabilities in [0, 1] (checked on the CPU), target of input's shape; the logs are
// clamped at -100 as torch's. weight broadcast to input's shape, or undefined.
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight = {},
                            Reduction reduction = kMean);
// The same from logits, in the numerically stable form; pos_weight (broadcast along the last
// dim, torch's) weighs the positive term.
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const Tensor& weight = {}, Reduction reduction = kMean,
                                        const Tensor& pos_weight = {});

}  // namespace functional

// The loss modules: forward(input, target) runs the functional form with the module's options;
// printed as torch prints them ("CrossEntropyLoss()").
class MSELossImpl : public Module {
 public:
  explicit MSELossImpl(Reduction reduction = kMean) : reduction(reduction) {}
  Tensor forward(const Tensor& input, const Tensor& target) const;
  void pretty_print(std::ostream& stream) const override { stream << "MSELoss()"; }
  Reduction reduction;
};
TL_MODULE(MSELoss);

class L1LossImpl : public Module {
 public:
  explicit L1LossImpl(Reduction reduction = kMean) : reduction(reduction) {}
  Tensor forward(const Tensor& input, const Tensor& target) const;
  void pretty_print(std::ostream& stream) const override { stream << "L1Loss()"; }
  Reduction reduction;
};
TL_MODULE(L1Loss);

class SmoothL1LossImpl : public Module {
 public:
  explicit SmoothL1LossImpl(Reduction reduction = kMean, double beta = 1.0)
      : reduction(reduction), beta(beta) {}
  Tensor forward(const Tensor& input, const Tensor& target) const;
  void pretty_print(std::ostream& stream) const override { stream << "SmoothL1Loss()"; }
  Reduction reduction;
  double beta;
};
TL_MODULE(SmoothL1Loss);

// LibTorch's CrossEntropyLossOptions / NLLLossOptions: .weight(w).ignore_index(i)
// .reduction(kSum).label_smoothing(0.1).
struct CrossEntropyLossOptions {
  CrossEntropyLossOptions& weight(Tensor w) {
    weight_ = std::move(w);
    return *this;
  }
  CrossEntropyLossOptions& ignore_index(int64_t i) {
    ignore_index_ = i;
    return *this;
  }
  CrossEntropyLossOptions& reduction(Reduction r) {
    reduction_ = r;
    return *this;
  }
  CrossEntropyLossOptions& label_smoothing(double s) {
    label_smoothing_ = s;
    return *this;
  }
  const Tensor& weight() const { return weight_; }
  int64_t ignore_index() const { return ignore_index_; }
  Reduction reduction() const { return reduction_; }
  double label_smoothing() const { return label_smoothing_; }

 private:
  Tensor weight_;
  int64_t ignore_index_ = -100;
  Reduction reduction_ = kMean;
  double label_smoothing_ = 0.0;
};
using NLLLossOptions = CrossEntropyLossOptions;

class CrossEntropyLossImpl : public Module {
 public:
  explicit CrossEntropyLossImpl(CrossEntropyLossOptions options = {});
  Tensor forward(const Tensor& input, const Tensor& target) const;
  void pretty_print(std::ostream& stream) const override { stream << "CrossEntropyLoss()"; }
  CrossEntropyLossOptions options;
  Tensor weight;  // a buffer, moved by to() with the module
};
TL_MODULE(CrossEntropyLoss);

class NLLLossImpl : public Module {
 public:
  explicit NLLLossImpl(NLLLossOptions options = {});
  Tensor forward(const Tensor& input, const Tensor& target) const;
  void pretty_print(std::ostream& stream) const override { stream << "NLLLoss()"; }
  NLLLossOptions options;
  Tensor weight;
};
TL_MODULE(NLLLoss);

class BCELossImpl : public Module {
 public:
  explicit BCELossImpl(Tensor weight = {}, Reduction reduction = kMean);
  Tensor forward(const Tensor& input, const Tensor& target) const;
  void pretty_print(std::ostream& stream) const override { stream << "BCELoss()"; }
  Tensor weight;
  Reduction reduction;
};
TL_MODULE(BCELoss);

class BCEWithLogitsLossImpl : public Module {
 public:
  explicit BCEWithLogitsLossImpl(Tensor weight = {}, Reduction reduction = kMean,
                                 Tensor pos_weight = {});
  Tensor forward(const Tensor& input, const Tensor& target) const;
  void pretty_print(std::ostream& stream) const override { stream << "BCEWithLogitsLoss()"; }
  Tensor weight;
  Reduction reduction;
  Tensor pos_weight;
};
TL_MODULE(BCEWithLogitsLoss);

}  // namespace tensorlet::nn

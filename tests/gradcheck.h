// gradcheck as torch.autograd.gradcheck: autograd's gradient of a function against float64
// central differences, on any device (the perturbed inputs are made on the host, moved there).
#pragma once

#include <doctest/doctest.h>
#include <tensorlet/tensorlet.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "test_util.h"

namespace tl_test {

using Fn = std::function<tl::Tensor(const std::vector<tl::Tensor>&)>;

// inputs: float64 host tensors (any layout); each is moved to `device` and made a leaf that
// requires grad. The function's output is weighted by fixed random values and summed, so one
// backward checks every output element. Returns false (and reports) on a mismatch.
inline bool gradcheck(const std::string& what, const Fn& f, const std::vector<tl::Tensor>& inputs,
                      tl::Device device = tl::Device::cpu(), double eps = 1e-6, double atol = 1e-5,
                      double rtol = 1e-3) {
  std::vector<tl::Tensor> leaves;
  for (const tl::Tensor& x : inputs) {
    tl::Tensor leaf = x.to(device).detach();
    leaf.requires_grad_();
    leaves.push_back(leaf);
  }
  tl::Tensor out = f(leaves);
  tl::Tensor weights = random_tensor(out.shape(), tl::kFloat64).to(device);
  tl::Tensor loss = tl::sum(out * weights);
  std::vector<tl::Tensor> analytic = tl::autograd::grad({loss}, leaves, {}, std::nullopt, false,
                                                        /*allow_unused=*/true);
  bool ok = true;
  tl::NoGradGuard no_grad;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const tl::Tensor base = inputs[i].contiguous();
    const std::vector<double> a =
        analytic[i].defined() ? values_of(analytic[i]) : std::vector<double>(base.numel(), 0.0);
    for (int64_t j = 0; j < base.numel(); ++j) {
      auto loss_at = [&](double delta) {
        tl::Tensor moved = base.clone();
        moved.data<double>()[j] += delta;
        std::vector<tl::Tensor> args = leaves;
        args[i] = moved.view(inputs[i].shape()).to(device);
        return tl::sum(f(args) * weights).item<double>();
      };
      const double numeric = (loss_at(eps) - loss_at(-eps)) / (2 * eps);
      if (std::abs(numeric - a[j]) > atol + rtol * std::abs(numeric)) {
        ok = false;
        MESSAGE(what << " on " << device.str() << ": input " << i << " element " << j
                     << ": autograd " << a[j] << ", finite differences " << numeric);
      }
    }
  }
  return ok;
}

}  // namespace tl_test

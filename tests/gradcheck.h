// gradcheck and gradgradcheck as torch.autograd's: autograd's (second) gradient of a function
// against float64 central differences, on any device (perturbed inputs made on the host, moved).
#pragma once

#include <doctest/doctest.h>
#include <tensorlet/tensorlet.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "test_util.h"

namespace tl_test {

// A random float32 leaf that requires grad, on `device`.
inline tl::Tensor random_leaf(const tl::Shape& shape, tl::Device device) {
  tl::Tensor t = random_tensor(shape, tl::kFloat32, device);
  t.requires_grad_();
  return t;
}

// got == want element by element within float32's relative 1e-5 (both defined, any device).
inline void check_close_f32(const tl::Tensor& got, const tl::Tensor& want) {
  REQUIRE(got.defined());
  const std::vector<double> g = values_of(got), w = values_of(want);
  REQUIRE(g.size() == w.size());
  for (size_t i = 0; i < g.size(); ++i) CHECK(g[i] == doctest::Approx(w[i]).epsilon(1e-5));
}

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

// The first gradients of f at xs (leaves on the device) for the grad_output v, as
// torch.autograd.gradgradcheck's function: autograd::grad with create_graph, an input f does not
// use gets zeros (so its second gradient is checked as zero too).
inline std::vector<tl::Tensor> first_gradients(const Fn& f, const std::vector<tl::Tensor>& xs,
                                               const tl::Tensor& v, bool create_graph) {
  tl::Tensor out = f(xs);
  std::vector<tl::Tensor> g = tl::autograd::grad({out}, xs, {v}, std::nullopt, create_graph,
                                                 /*allow_unused=*/true);
  for (size_t i = 0; i < g.size(); ++i)
    if (!g[i].defined()) g[i] = tl::zeros_like(xs[i]);
  return g;
}

// gradgradcheck as torch.autograd.gradgradcheck: the first gradient of f, computed with
// create_graph=true for a random grad_output v, is itself gradchecked against central differences
// with respect to every input and v (float64, torch's default eps and tolerances). inputs as
// gradcheck's. Returns false (and reports) on a mismatch.
inline bool gradgradcheck(const std::string& what, const Fn& f,
                          const std::vector<tl::Tensor>& inputs,
                          tl::Device device = tl::Device::cpu(), double eps = 1e-6,
                          double atol = 1e-5, double rtol = 1e-3) {
  auto leaf = [&](const tl::Tensor& x) {
    tl::Tensor l = x.to(device).detach();
    l.requires_grad_();
    return l;
  };
  std::vector<tl::Tensor> xs;
  for (const tl::Tensor& x : inputs) xs.push_back(leaf(x));
  tl::Tensor out_shape_probe;
  {
    tl::NoGradGuard no_grad;
    out_shape_probe = f(xs);
  }
  // The host values of every checked variable: the inputs, then v.
  std::vector<tl::Tensor> bases;
  for (const tl::Tensor& x : inputs) bases.push_back(x.contiguous());
  bases.push_back(random_tensor(out_shape_probe.shape(), tl::kFloat64));
  tl::Tensor v = leaf(bases.back());
  std::vector<tl::Tensor> weights;
  for (const tl::Tensor& x : inputs) weights.push_back(random_tensor(x.shape(), tl::kFloat64));

  // The scalar whose gradient is checked: sum_i <first gradient i, weight i>.
  auto weighted = [&](const std::vector<tl::Tensor>& g) {
    tl::Tensor s;
    for (size_t i = 0; i < g.size(); ++i) {
      const tl::Tensor term = tl::sum(g[i] * weights[i].to(device));
      s = s.defined() ? s + term : term;
    }
    return s;
  };
  std::vector<tl::Tensor> vars = xs;
  vars.push_back(v);
  const tl::Tensor loss = weighted(first_gradients(f, xs, v, /*create_graph=*/true));
  std::vector<tl::Tensor> analytic(vars.size());
  if (loss.requires_grad())
    analytic = tl::autograd::grad({loss}, vars, {}, std::nullopt, false, /*allow_unused=*/true);
  bool ok = true;
  for (size_t i = 0; i < bases.size(); ++i) {
    const std::vector<double> a =
        analytic[i].defined() ? values_of(analytic[i]) : std::vector<double>(bases[i].numel(), 0.0);
    for (int64_t j = 0; j < bases[i].numel(); ++j) {
      auto loss_at = [&](double delta) {
        tl::Tensor moved = bases[i].clone();
        moved.data<double>()[j] += delta;
        std::vector<tl::Tensor> args;
        for (size_t k = 0; k < inputs.size(); ++k)
          args.push_back(k == i ? leaf(moved.view(inputs[k].shape())) : leaf(inputs[k]));
        const tl::Tensor grad_out = i == inputs.size() ? moved.to(device) : v.detach();
        return weighted(first_gradients(f, args, grad_out, false)).item<double>();
      };
      const double numeric = (loss_at(eps) - loss_at(-eps)) / (2 * eps);
      if (std::abs(numeric - a[j]) > atol + rtol * std::abs(numeric)) {
        ok = false;
        MESSAGE(
            what << " (gradgradcheck) on " << device.str() << ": "
                 << (i == inputs.size() ? std::string("grad_output") : "input " + std::to_string(i))
                 << " element " << j << ": autograd " << a[j] << ", finite differences "
                 << numeric);
      }
    }
  }
  return ok;
}

}  // namespace tl_test

// The fuzzer's gradient checks: sum(out * w) backpropagated to every floating input's base, CUDA
// against the CPU (the case's dtypes) and the CPU against central differences (float64).
#include "fuzz/gradients.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <sstream>
#include <vector>

#include "fuzz/runner.h"

namespace fuzz {
namespace {

// The ops autograd differentiates whose gradient is the same function on every device (ordering
// ops are left out: which of equal elements gets the gradient is free), conv2d and the pools
// (max_pool2d's goes to the first largest element of a window, on every device), and the losses
// (in their input).
bool differentiable(Op op) {
  if (is_window(op) || is_loss(op)) return true;
  static const Op kOps[] = {
      Op::Neg,       Op::Abs,           Op::Exp,      Op::Log,        Op::Sqrt,
      Op::Sin,       Op::Cos,           Op::Tanh,     Op::Sigmoid,    Op::Relu,
      Op::Square,    Op::Reciprocal,    Op::Rsqrt,    Op::Log1p,      Op::Expm1,
      Op::Log2,      Op::Log10,         Op::Exp2,     Op::Erf,        Op::Erfc,
      Op::Tan,       Op::Sinh,          Op::Cosh,     Op::Asin,       Op::Acos,
      Op::Atan,      Op::Silu,          Op::Softplus, Op::Gelu,       Op::GeluTanh,
      Op::Add,       Op::Sub,           Op::Mul,      Op::Div,        Op::Pow,
      Op::Maximum,   Op::Minimum,       Op::Atan2,    Op::Where,      Op::Clamp,
      Op::Sum,       Op::Mean,          Op::Prod,     Op::Softmax,    Op::LogSoftmax,
      Op::Logsumexp, Op::Var,           Op::Std,      Op::Cumsum,     Op::Cumprod,
      Op::Norm,      Op::Matmul,        Op::Outer,    Op::Addmm,      Op::Cat,
      Op::Stack,     Op::IndexSelect,   Op::Gather,   Op::Take,       Op::MaskedSelect,
      Op::Clone,     Op::Contiguous,    Op::Reshape,  Op::View,       Op::ScatterAdd,
      Op::IndexAdd,  Op::MaskedScatter, Op::Lerp,     Op::MaskedFill, Op::Flip,
      Op::Roll,      Op::Tril,          Op::Triu};
  return std::find(std::begin(kOps), std::end(kOps), op) != std::end(kOps);
}

// Those smooth at every finite input (no kinks, ties or poles on the fuzzer's value grid), whose
// central differences are the derivative: conv2d and the average pools are linear (max_pool2d
// has ties); nll_loss is linear in its input and cross_entropy smooth (log_softmax, then linear).
bool smooth(Op op) {
  if (is_loss(op)) return true;
  if (is_window(op)) return op != Op::MaxPool2d;
  static const Op kOps[] = {
      Op::Neg,         Op::Exp,        Op::Sin,        Op::Cos,       Op::Tanh,       Op::Sigmoid,
      Op::Square,      Op::Expm1,      Op::Exp2,       Op::Erf,       Op::Erfc,       Op::Atan,
      Op::Sinh,        Op::Cosh,       Op::Silu,       Op::Softplus,  Op::Gelu,       Op::GeluTanh,
      Op::Add,         Op::Sub,        Op::Mul,        Op::Where,     Op::Sum,        Op::Mean,
      Op::Prod,        Op::Softmax,    Op::LogSoftmax, Op::Logsumexp, Op::Var,        Op::Cumsum,
      Op::Cumprod,     Op::Matmul,     Op::Outer,      Op::Addmm,     Op::Cat,        Op::Stack,
      Op::IndexSelect, Op::Gather,     Op::Take,       Op::Clone,     Op::Contiguous, Op::Reshape,
      Op::View,        Op::ScatterAdd, Op::IndexAdd,   Op::Lerp,      Op::Flip,       Op::Roll,
      Op::Tril,        Op::Triu};
  return std::find(std::begin(kOps), std::end(kOps), op) != std::end(kOps);
}

// A gradient in a message, to the last digit (std::to_string's 6 decimals show 1e-9 as 0).
std::string show(double v) {
  std::ostringstream os;
  os.precision(17);
  os << v;
  return os.str();
}

// Fixed weights in {-1.25, ..., 1.25}, exact in every floating dtype.
tl::Tensor weights(const tl::Tensor& out) {
  std::vector<double> w(static_cast<size_t>(out.numel()));
  for (size_t k = 0; k < w.size(); ++k) w[k] = static_cast<double>(int(k * 7 % 11) - 5) / 4;
  return tl::from_vector(w, out.shape()).to(out.dtype()).to(out.device());
}

// Whether input k's gradient is checked: every floating input's, but for the losses only their
// input's (a cross_entropy weight that requires grad leaves the fused kernels for plain ops, and
// class probabilities are targets: neither is what the forward check ran).
bool wants_grad(const Case& c, size_t k) {
  return is_float(c.inputs[k].dtype) && (k == 0 || !is_loss(c.op));
}

// The case's inputs with each checked base a leaf that requires grad (when `record`) and its
// views applied to it, so they are recorded.
std::vector<Built> leaf_inputs(const Case& c, tl::Device device, bool record) {
  std::vector<Built> in;
  for (size_t k = 0; k < c.inputs.size(); ++k) {
    const Input& i = c.inputs[k];
    Input bare = i;
    bare.views.clear();
    Built b = build_input(bare, device);
    if (record && wants_grad(c, k)) b.base.requires_grad_();
    for (const ViewStep& s : i.views) b.view = apply_view(b.view, s);
    in.push_back(b);
  }
  return in;
}

struct Grads {
  bool checked = false;           // the case's result is floating and requires grad
  std::string error;              // what the forward or backward raised
  tl::Tensor out;                 // the result (detached)
  std::vector<tl::Tensor> grads;  // per input, the base's gradient (undefined: not checked)
};

Grads gradients(const Case& c, tl::Device device) {
  Grads r;
  try {
    std::vector<Built> in = leaf_inputs(c, device, true);
    tl::Tensor out = run_op(c, in);
    if (!out.defined() || !is_float(out.dtype()) || !out.requires_grad()) return r;
    r.checked = true;
    r.out = out.detach();
    std::vector<tl::Tensor> leaves;
    for (size_t k = 0; k < in.size(); ++k)
      if (wants_grad(c, k)) leaves.push_back(in[k].base);
    const std::vector<tl::Tensor> g =
        tl::autograd::grad({tl::sum(out * weights(out))}, leaves, {}, std::nullopt, false, true);
    size_t next = 0;
    for (size_t k = 0; k < in.size(); ++k) {
      if (!wants_grad(c, k)) {
        r.grads.emplace_back();
        continue;
      }
      const tl::Tensor& gk = g[next++];
      r.grads.push_back(gk.defined() ? gk.cpu() : tl::zeros_like(in[k].base.detach()).cpu());
    }
  } catch (const tl::Error& e) {
    r.checked = true;
    r.error = e.what();
  }
  return r;
}

std::vector<double> read_values(const tl::Tensor& t) {
  const tl::Tensor h = t.detach().to(tl::kFloat64).cpu().contiguous();
  return std::vector<double>(h.data<double>(), h.data<double>() + h.numel());
}

bool finite_values(const tl::Tensor& t) {
  return t.numel() == 0 || tl::isfinite(t.to(tl::kFloat64)).all().item<bool>();
}

// A tolerance per dtype for the same gradient computed on two devices: a few hundred units of
// the dtype's roundoff, relative to the element and to the largest one (sums reassociate).
double device_rtol(DType d) {
  switch (d) {
    case tl::kFloat16:
      return 2e-2;
    case tl::kBFloat16:
      return 1e-1;
    case tl::kFloat32:
      return 1e-4;
    default:
      return 1e-10;
  }
}

std::optional<std::string> compare_grads(const Case& c, const Grads& cpu, const Grads& dev) {
  if (!cpu.error.empty() || !dev.error.empty())
    return "gradient raised on " + std::string(cpu.error.empty() ? "cuda" : "cpu") + ": " +
           (cpu.error.empty() ? dev.error : cpu.error);
  for (size_t k = 0; k < cpu.grads.size(); ++k) {
    if (!cpu.grads[k].defined()) continue;
    const std::vector<double> a = read_values(cpu.grads[k]), b = read_values(dev.grads[k]);
    double magnitude = 0;
    for (double x : a)
      if (std::isfinite(x)) magnitude = std::max(magnitude, std::abs(x));
    const double rtol = device_rtol(c.inputs[k].dtype);
    for (size_t j = 0; j < a.size(); ++j) {
      if (std::isnan(a[j]) && std::isnan(b[j])) continue;
      if (a[j] == b[j]) continue;
      // The absolute floor covers gradients that cancel to 0 in exact arithmetic (the weights of
      // an expanded input summing to 0): each device's rounding leaves a different ~1e-17.
      if (std::abs(a[j] - b[j]) <= rtol * (std::abs(a[j]) + magnitude + 1e-2)) continue;
      return "gradient of input " + std::to_string(k) + " element " + std::to_string(j) +
             ": cuda " + show(b[j]) + ", cpu " + show(a[j]);
    }
  }
  return std::nullopt;
}

// The case with every floating input (and a floating dtype argument) in float64.
Case in_float64(const Case& c) {
  Case w = c;
  for (Input& i : w.inputs)
    if (is_float(i.dtype)) i.dtype = tl::kFloat64;
  if (w.dtype && is_float(*w.dtype)) w.dtype = tl::kFloat64;
  return w;
}

// Central differences in float64 on up to two elements of each floating input's base.
std::optional<std::string> spot_check(const Case& c) {
  const Case c64 = in_float64(c);
  for (const Input& i : c64.inputs)
    for (const V& v : i.values)
      if (is_float(i.dtype) && !std::isfinite(v.f)) return std::nullopt;
  const Grads g = gradients(c64, tl::Device::cpu());
  if (!g.checked) return std::nullopt;
  if (!g.error.empty()) return "float64 gradient raised: " + g.error;
  if (g.out.dtype() != tl::kFloat64 || !finite_values(g.out)) return std::nullopt;
  const tl::Tensor w = weights(g.out);
  const double magnitude = tl::sum(tl::abs(g.out * w)).item<double>();
  for (size_t k = 0; k < c64.inputs.size(); ++k) {
    if (!g.grads[k].defined() || !finite_values(g.grads[k])) continue;
    const std::vector<double> analytic = read_values(g.grads[k]);
    const size_t n = c64.inputs[k].values.size();
    for (size_t j : {size_t{0}, n / 2 + 1}) {
      if (j >= n) continue;
      const double x = c64.inputs[k].values[j].f, eps = 1e-6 * std::max(1.0, std::abs(x));
      auto loss_at = [&](double delta) {
        Case moved = c64;
        moved.inputs[k].values[j].f = x + delta;
        tl::NoGradGuard no_grad;
        std::vector<Built> in = leaf_inputs(moved, tl::Device::cpu(), false);
        return tl::sum(run_op(moved, in) * w).item<double>();
      };
      const double numeric = (loss_at(eps) - loss_at(-eps)) / (2 * eps);
      // The loss's own rounding, divided by 2 eps, on top of gradcheck's tolerances.
      const double tol = 1e-5 + 1e-3 * std::abs(numeric) + 1e-13 * magnitude / eps;
      if (!(std::abs(numeric - analytic[j]) <= tol))
        return "float64 gradient of input " + std::to_string(k) + " base element " +
               std::to_string(j) + ": autograd " + show(analytic[j]) + ", finite differences " +
               show(numeric);
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> check_gradients(const Case& c, tl::Device device) {
  if (!differentiable(c.op)) return std::nullopt;
  bool any_float = false;
  for (const Input& i : c.inputs) {
    any_float = any_float || is_float(i.dtype);
    for (const ViewStep& s : i.views)
      if (s.kind == ViewKind::AsStrided) return std::nullopt;  // no derivative (raises)
  }
  if (!any_float) return std::nullopt;
  if (smooth(c.op))
    if (auto d = spot_check(c)) return "cpu: " + *d;
  if (!device.is_cuda()) return std::nullopt;
  const Grads cpu = gradients(c, tl::Device::cpu());
  if (!cpu.checked) return std::nullopt;
  return compare_grads(c, cpu, gradients(c, device));
}

}  // namespace fuzz

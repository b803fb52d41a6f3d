// Derivatives of the elementwise ops: one entry per op of TL_BINARY_OPS / TL_UNARY_OPS that has a
// gradient, with PyTorch's formulas and node names. A floating op without an entry raises
// (no_derivative) rather than dropping the gradient.
#include "tensorlet/autograd/derivatives.h"
#include "tensorlet/autograd/formula_node.h"
#include "tensorlet/autograd/fused_backward.h"
#include "tensorlet/ops/elementwise.h"
#include "tensorlet/ops/factories.h"

namespace tensorlet::autograd {

namespace {

// ---- binary ops ------------------------------------------------------------------------------

struct BinaryDerivative {
  const char* name;
  bool reads_operands;  // the formula reads a and b (saved); add and sub read neither
};

// nullptr name: no derivative.
BinaryDerivative binary_derivative(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add:
      return {"AddBackward0", false};
    case BinaryOp::Sub:
      return {"SubBackward0", false};
    case BinaryOp::Mul:
      return {"MulBackward0", true};
    case BinaryOp::Div:
      return {"DivBackward0", true};
    case BinaryOp::Pow:
      return {"PowBackward1", true};
    case BinaryOp::Maximum:
      return {"MaximumBackward0", true};
    case BinaryOp::Minimum:
      return {"MinimumBackward0", true};
    case BinaryOp::Atan2:
      return {"Atan2Backward0", true};
    case BinaryOp::Fmod:
      return {"FmodBackward1", true};
    case BinaryOp::Remainder:
      return {"RemainderBackward1", true};
    default:
      return {nullptr, false};
  }
}

// {d out/d a * g, d out/d b * g} for out = op(a, b), before any reduction to the inputs' shapes.
// `need_a` / `need_b`: which are wanted; alpha: add/sub's factor on b. With `fused`, a gradient
// that has a kernel (binary_backward_ops.h) is that one pass instead of the composite's ops.
TensorList binary_grads(BinaryOp op, const Tensor& g, const Tensor& a, const Tensor& b,
                        double alpha, bool need_a, bool need_b, bool fused) {
  Tensor da, db;
  const auto kernel = [&](BinaryGradient which) { return binary_backward(which, g, a, b); };
  if (fused) {
    switch (op) {
      case BinaryOp::Div:
        if (need_a) da = div(g, b);
        if (need_b) db = kernel(BinaryGradient::DivOther);
        return {da, db};
      case BinaryOp::Pow:
        if (need_a) da = kernel(BinaryGradient::PowSelf);
        if (need_b) db = kernel(BinaryGradient::PowExponent);
        return {da, db};
      case BinaryOp::Maximum:
        if (need_a) da = kernel(BinaryGradient::MaximumSelf);
        if (need_b) db = kernel(BinaryGradient::MaximumOther);
        return {da, db};
      case BinaryOp::Minimum:
        if (need_a) da = kernel(BinaryGradient::MinimumSelf);
        if (need_b) db = kernel(BinaryGradient::MinimumOther);
        return {da, db};
      case BinaryOp::Atan2:
        if (need_a) da = kernel(BinaryGradient::Atan2Self);
        if (need_b) db = kernel(BinaryGradient::Atan2Other);
        return {da, db};
      case BinaryOp::Fmod:
      case BinaryOp::Remainder:
        da = g;
        if (need_b)
          db = kernel(op == BinaryOp::Fmod ? BinaryGradient::FmodOther
                                           : BinaryGradient::RemainderOther);
        return {da, db};
      default:
        break;  // add, sub, mul: one op per gradient already
    }
  }
  switch (op) {
    case BinaryOp::Add:
      da = g;
      db = alpha == 1 ? g : mul(g, alpha);
      break;
    case BinaryOp::Sub:
      da = g;
      db = mul(g, -alpha);
      break;
    case BinaryOp::Mul:
      if (need_a) da = mul(g, b);
      if (need_b) db = mul(g, a);
      break;
    case BinaryOp::Div:
      if (need_a) da = div(g, b);
      if (need_b) db = neg(div(mul(g, a), mul(b, b)));
      break;
    case BinaryOp::Pow:
      // d/da a^b = b a^(b-1), 0 where b == 0; d/db a^b = a^b log a, 0 where a == 0 and b >= 0
      // (torch's conventions).
      if (need_a) da = where(eq(b, 0.0), zeros_like(g), mul(g, mul(b, pow(a, sub(b, 1.0)))));
      if (need_b)
        db = where(logical_and(eq(a, 0.0), ge(b, 0.0)), zeros_like(g),
                   mul(g, mul(pow(a, b), log(a))));
      break;
    case BinaryOp::Maximum:
    case BinaryOp::Minimum: {
      // Ties split the gradient in halves, as torch.
      const bool max = op == BinaryOp::Maximum;
      const Tensor half_tie = mul(eq(a, b).to(g.dtype()), 0.5);
      if (need_a) da = mul(g, add((max ? gt(a, b) : lt(a, b)).to(g.dtype()), half_tie));
      if (need_b) db = mul(g, add((max ? gt(b, a) : lt(b, a)).to(g.dtype()), half_tie));
      break;
    }
    case BinaryOp::Atan2: {
      const Tensor r = add(mul(a, a), mul(b, b));
      if (need_a) da = mul(g, div(b, r));
      if (need_b) db = mul(g, neg(div(a, r)));
      break;
    }
    case BinaryOp::Fmod:
    case BinaryOp::Remainder:
      da = g;
      if (need_b) db = mul(g, neg(op == BinaryOp::Fmod ? trunc(div(a, b)) : floor(div(a, b))));
      break;
    default:
      break;
  }
  return {da, db};
}

// An operand as the formula reads it: the saved tensor, or the scalar as a 0-dim tensor.
// The ops with a gradient kernel (binary_backward_ops.h).
bool has_gradient_kernel(BinaryOp op) {
  switch (op) {
    case BinaryOp::Div:
    case BinaryOp::Pow:
    case BinaryOp::Maximum:
    case BinaryOp::Minimum:
    case BinaryOp::Atan2:
    case BinaryOp::Fmod:
    case BinaryOp::Remainder:
      return true;
    default:
      return false;
  }
}

// A bool operand (pow's exponent) is read in the gradient's dtype: the formulas' arithmetic
// (b - 1) is not defined on bool. A scalar operand becomes a 0-dim tensor of the gradient's dtype
// on `device`: the gradient's for an op with a kernel, so that the kernel takes it on CUDA too
// (the composite in float16 overflowed where the kernel computes in float: atan2(x, 869)'s
// 869² on cuda:0, seed 2 of the fuzzer), the CPU otherwise (a host scalar, no launch).
Tensor operand(const FormulaNode& n, size_t i, DType dtype, Device device) {
  Tensor t = n.saved(i);
  if (t.defined() && t.dtype() == kBool) return t.to(dtype);
  return t.defined() ? t : full({}, n.reals[1 + i], TensorOptions(dtype).device(device));
}

TensorList binary_formula(const FormulaNode& n, const Tensor& g) {
  const auto op = static_cast<BinaryOp>(n.ints[0]);
  Tensor a, b;
  if (binary_derivative(op).reads_operands) {
    const Device device = has_gradient_kernel(op) ? g.device() : Device::cpu();
    a = operand(n, 0, g.dtype(), device);
    b = operand(n, 1, g.dtype(), device);
  }
  // One kernel per gradient (fused_backward.h) unless the backward must be differentiable
  // (create_graph with grad, a or b requiring grad) or the operands are not all of the gradient's
  // dtype and device (an integer exponent, a float64 gradient of a float32 op): then the
  // composite formula, which records and promotes.
  const bool differentiable =
      GradMode::is_enabled() && (requires_grad(g) || requires_grad(a) || requires_grad(b));
  const bool fused = !differentiable && a.defined() && b.defined() && a.dtype() == g.dtype() &&
                     b.dtype() == g.dtype() && a.device() == g.device() && b.device() == g.device();
  TensorList d = binary_grads(op, g, a, b, n.reals[0], n.needs_grad(0), n.needs_grad(1), fused);
  for (size_t i = 0; i < 2; ++i)
    d[i] = n.needs_grad(i) && d[i].defined() ? reduce_to(d[i], n.input(i)) : Tensor();
  return d;
}

// ---- unary ops -------------------------------------------------------------------------------

// PyTorch's node name of op's derivative; nullptr: no derivative. What the formula reads (x or
// y) is what op's backward kernel reads (backward_saved, backends/math/unary_backward_ops.h);
// the ops without a kernel read nothing.
const char* unary_derivative(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg:
      return "NegBackward0";
    case UnaryOp::Abs:
      return "AbsBackward0";
    case UnaryOp::Exp:
      return "ExpBackward0";
    case UnaryOp::Log:
      return "LogBackward0";
    case UnaryOp::Sqrt:
      return "SqrtBackward0";
    case UnaryOp::Sin:
      return "SinBackward0";
    case UnaryOp::Cos:
      return "CosBackward0";
    case UnaryOp::Tanh:
      return "TanhBackward0";
    case UnaryOp::Sigmoid:
      return "SigmoidBackward0";
    case UnaryOp::Relu:
      return "ReluBackward0";
    case UnaryOp::Floor:
      return "FloorBackward0";
    case UnaryOp::Ceil:
      return "CeilBackward0";
    case UnaryOp::Trunc:
      return "TruncBackward0";
    case UnaryOp::Round:
      return "RoundBackward0";
    case UnaryOp::Sign:
      return "SignBackward0";
    case UnaryOp::Reciprocal:
      return "ReciprocalBackward0";
    case UnaryOp::Rsqrt:
      return "RsqrtBackward0";
    case UnaryOp::Log1p:
      return "Log1PBackward0";
    case UnaryOp::Expm1:
      return "Expm1Backward0";
    case UnaryOp::Log2:
      return "Log2Backward0";
    case UnaryOp::Log10:
      return "Log10Backward0";
    case UnaryOp::Exp2:
      return "Exp2Backward0";
    case UnaryOp::Erf:
      return "ErfBackward0";
    case UnaryOp::Erfc:
      return "ErfcBackward0";
    case UnaryOp::Tan:
      return "TanBackward0";
    case UnaryOp::Sinh:
      return "SinhBackward0";
    case UnaryOp::Cosh:
      return "CoshBackward0";
    case UnaryOp::Asin:
      return "AsinBackward0";
    case UnaryOp::Acos:
      return "AcosBackward0";
    case UnaryOp::Atan:
      return "AtanBackward0";
    case UnaryOp::Square:
      return "PowBackward0";
    case UnaryOp::Silu:
      return "SiluBackward0";
    case UnaryOp::Softplus:
      return "SoftplusBackward0";
    case UnaryOp::Gelu:
    case UnaryOp::GeluTanh:
      return "GeluBackward0";
    default:
      return nullptr;
  }
}

constexpr double kTwoOverSqrtPi = 1.1283791670955126;
constexpr double kLn2 = 0.6931471805599453;
constexpr double kLn10 = 2.302585092994046;
constexpr double kInvSqrt2 = 0.7071067811865476;
constexpr double kInvSqrt2Pi = 0.3989422804014327;
constexpr double kSqrt2OverPi = 0.7978845608028654;
constexpr double kGeluC = 0.044715;

// d out/d x * g for out = op(x) = y.
Tensor unary_grad(UnaryOp op, const Tensor& g, const Tensor& x, const Tensor& y) {
  switch (op) {
    case UnaryOp::Neg:
      return neg(g);
    case UnaryOp::Abs:
      return mul(g, sign(x));
    case UnaryOp::Exp:
      return mul(g, y);
    case UnaryOp::Log:
      return div(g, x);
    case UnaryOp::Sqrt:
      return div(g, mul(y, 2.0));
    case UnaryOp::Sin:
      return mul(g, cos(x));
    case UnaryOp::Cos:
      return mul(g, neg(sin(x)));
    case UnaryOp::Tanh:
      return mul(g, sub(1.0, mul(y, y)));
    case UnaryOp::Sigmoid:
      return mul(g, mul(y, sub(1.0, y)));
    case UnaryOp::Relu:
      return mul(g, gt(y, 0.0).to(g.dtype()));
    case UnaryOp::Floor:
    case UnaryOp::Ceil:
    case UnaryOp::Trunc:
    case UnaryOp::Round:
    case UnaryOp::Sign:
      return zeros_like(g);
    case UnaryOp::Reciprocal:
      return mul(g, neg(mul(y, y)));
    case UnaryOp::Rsqrt:
      return mul(g, mul(pow(y, 3.0), -0.5));
    case UnaryOp::Log1p:
      return div(g, add(x, 1.0));
    case UnaryOp::Expm1:
      return mul(g, add(y, 1.0));
    case UnaryOp::Log2:
      return div(g, mul(x, kLn2));
    case UnaryOp::Log10:
      return div(g, mul(x, kLn10));
    case UnaryOp::Exp2:
      return mul(g, mul(y, kLn2));
    case UnaryOp::Erf:
      return mul(g, mul(exp(neg(mul(x, x))), kTwoOverSqrtPi));
    case UnaryOp::Erfc:
      return mul(g, mul(exp(neg(mul(x, x))), -kTwoOverSqrtPi));
    case UnaryOp::Tan:
      return mul(g, add(mul(y, y), 1.0));
    case UnaryOp::Sinh:
      return mul(g, cosh(x));
    case UnaryOp::Cosh:
      return mul(g, sinh(x));
    case UnaryOp::Asin:
      return div(g, sqrt(sub(1.0, mul(x, x))));
    case UnaryOp::Acos:
      return neg(div(g, sqrt(sub(1.0, mul(x, x)))));
    case UnaryOp::Atan:
      return div(g, add(mul(x, x), 1.0));
    case UnaryOp::Square:
      return mul(g, mul(x, 2.0));
    case UnaryOp::Silu: {
      const Tensor s = sigmoid(x);
      return mul(g, mul(s, add(mul(x, sub(1.0, s)), 1.0)));
    }
    case UnaryOp::Softplus:  // torch's defaults: beta 1, linear above 20
      return mul(g, where(gt(x, 20.0), 1.0, sigmoid(x)));
    case UnaryOp::Gelu: {
      // x Phi(x): Phi(x) + x phi(x).
      const Tensor cdf = mul(add(erf(mul(x, kInvSqrt2)), 1.0), 0.5);
      const Tensor pdf = mul(exp(mul(mul(x, x), -0.5)), kInvSqrt2Pi);
      return mul(g, add(cdf, mul(x, pdf)));
    }
    case UnaryOp::GeluTanh: {
      // 0.5 x (1 + tanh(k (x + c x^3))): 0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3 c x^2).
      const Tensor x2 = mul(x, x);
      const Tensor t = tanh(mul(add(x, mul(mul(x2, x), kGeluC)), kSqrt2OverPi));
      const Tensor left = mul(add(t, 1.0), 0.5);
      const Tensor right =
          mul(mul(mul(x, sub(1.0, mul(t, t))), 0.5 * kSqrt2OverPi), add(mul(x2, 3 * kGeluC), 1.0));
      return mul(g, add(left, right));
    }
    default:
      return {};
  }
}

// One kernel (fused_backward.h) unless the backward must be differentiable: with create_graph
// (grad mode on during backward) and grad or the saved tensor requiring grad, the composite
// formula above records its ops. A gradient of another dtype than the forward's (a float64
// grad_output for a float32 output) also takes the composite, which promotes as before.
Tensor unary_gradient(UnaryOp op, const Tensor& g, const Tensor& x, const Tensor& y) {
  if (!has_backward_kernel(op)) return unary_grad(op, g, x, y);  // neg(g), zeros: one kernel
  const Tensor& saved = backward_saved(op) == math::BackwardSaved::Output ? y : x;
  const bool differentiable = GradMode::is_enabled() && (requires_grad(g) || requires_grad(saved));
  if (differentiable || g.dtype() != saved.dtype() || g.device() != saved.device())
    return unary_grad(op, g, x, y);
  return unary_backward(op, g, saved);
}

TensorList unary_formula(const FormulaNode& n, const Tensor& g) {
  const auto op = static_cast<UnaryOp>(n.ints[0]);
  return {reduce_to(unary_gradient(op, g, n.saved(0), n.saved(1)), n.input(0))};
}

}  // namespace

void no_derivative(const char* op) {
  fail<Error>(op, "the derivative of ", op,
              " is not implemented yet (an input requires grad: compute it under "
              "tl::NoGradGuard, or on detach()ed inputs)");
}

void record_binary(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out, double alpha,
                   double a_value, double b_value) {
  if (!is_floating_point(out.dtype())) return;  // comparisons, logical and integer results
  const BinaryDerivative d = binary_derivative(op);
  if (!d.name) no_derivative(binary_op_name(op));
  const Tensor* pa = a.defined() ? &a : nullptr;
  const Tensor* pb = b.defined() ? &b : nullptr;
  auto node = record_node(d.name, binary_formula, {pa, pb}, out);
  node->ints = {static_cast<int64_t>(op)};
  node->reals = {alpha, a_value, b_value};
  // As torch's saved-tensor codegen: mul's a is read only for b's gradient (and div's a too),
  // mul's b only for a's, so `x * c` with c a constant keeps no x alive (nor sees it written).
  bool save_a = d.reads_operands, save_b = d.reads_operands;
  if (op == BinaryOp::Mul || op == BinaryOp::Div) save_a = node->needs_grad(1);
  if (op == BinaryOp::Mul) save_b = node->needs_grad(0);
  node->save(save_a ? a : Tensor());
  node->save(save_b ? b : Tensor());
}

void record_unary(UnaryOp op, const Tensor& x, const Tensor& out) {
  if (!is_floating_point(out.dtype())) return;
  const char* name = unary_derivative(op);
  if (!name) no_derivative(unary_op_name(op));
  const bool kernel = has_backward_kernel(op);
  const bool reads_y = kernel && backward_saved(op) == math::BackwardSaved::Output;
  auto node = record_node(name, unary_formula, {&x}, out);
  node->ints = {static_cast<int64_t>(op)};
  node->save(kernel && !reads_y ? x : Tensor());
  node->save(reads_y ? out : Tensor(), true);
}

}  // namespace tensorlet::autograd

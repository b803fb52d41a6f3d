// Reference semantics of every fuzzed op, written as plain loops for obviousness, not speed.
#include "fuzz/reference.h"

#include "rounding.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>

namespace fuzz {
namespace {

using tl::DTypeKind;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

DTypeKind kind_of(DType d) { return tl::dtype_kind(d); }
int width(DType d) { return static_cast<int>(tl::element_size(d)); }

// torch.promote_types, written out here rather than taken from the library: the higher kind
// wins, else the wider type; uint8 with int8 is int16 (neither holds the other), float16 with
// bfloat16 is float32 (likewise).
DType promote(DType a, DType b) {
  if (a == b) return a;
  if (kind_of(a) != kind_of(b)) return kind_of(a) > kind_of(b) ? a : b;
  const bool u8_i8 = (a == tl::kUInt8 && b == tl::kInt8) || (a == tl::kInt8 && b == tl::kUInt8);
  if (u8_i8) return tl::kInt16;
  if (is_half(a) && is_half(b)) return tl::kFloat32;
  return width(a) >= width(b) ? a : b;
}

// Wraps a dim into [0, max(nd, 1)); nullopt when out of range (torch allows 0 and -1 on 0-d).
std::optional<int64_t> wrap(int64_t dim, int64_t nd) {
  const int64_t span = std::max<int64_t>(nd, 1);
  if (dim < -span || dim >= span) return std::nullopt;
  return dim < 0 ? dim + span : dim;
}

struct Raise {
  std::string why;
};

// An operand of an elementwise op: a (materialised) tensor or a Python number.
struct Operand {
  bool tensor = false;
  HostArray t;
  ScalarArg s;
  DType dtype() const {
    if (tensor) return t.dtype;
    return s.kind == DTypeKind::Bool      ? tl::kBool
           : s.kind == DTypeKind::Integer ? tl::kInt64
                                          : tl::kFloat64;
  }
  V at(int64_t flat_in_broadcast, const Dims& out_shape) const;
};

// torch.result_type: dimensioned tensors outrank 0-dim tensors, which outrank numbers, unless a
// lower category has a higher kind (then promote; numbers use the default dtype of their kind).
DType result_type(const std::vector<const Operand*>& ops) {
  std::optional<DType> dim_r, zero_r, wrap_r;
  auto upd = [](std::optional<DType>& r, DType d) { r = r ? promote(*r, d) : d; };
  for (const Operand* o : ops) {
    if (!o->tensor) {
      DType d = o->s.kind == DTypeKind::Floating  ? tl::kFloat32
                : o->s.kind == DTypeKind::Integer ? tl::kInt64
                                                  : tl::kBool;
      upd(wrap_r, d);
    } else if (o->t.shape.empty()) {
      upd(zero_r, o->t.dtype);
    } else {
      upd(dim_r, o->t.dtype);
    }
  }
  auto combine = [](std::optional<DType> hi, std::optional<DType> lo) -> std::optional<DType> {
    if (!hi) return lo;
    if (!lo) return hi;
    if (is_float(*hi)) return hi;
    if (*hi == tl::kBool || is_float(*lo)) return promote(*hi, *lo);
    return hi;
  };
  return *combine(dim_r, combine(zero_r, wrap_r));
}

Dims broadcast(const std::vector<Dims>& shapes) {
  size_t nd = 0;
  for (const auto& s : shapes) nd = std::max(nd, s.size());
  Dims out(nd, 1);
  for (const auto& s : shapes)
    for (size_t k = 0; k < s.size(); ++k) {
      int64_t& o = out[nd - s.size() + k];
      const int64_t x = s[k];
      if (x == o || x == 1) continue;
      if (o == 1)
        o = x;
      else
        throw Raise{"shapes do not broadcast"};
    }
  return out;
}

// The element of a (broadcast) array at the row-major position `flat` of `out_shape`.
V element_at(const HostArray& a, int64_t flat, const Dims& out_shape) {
  if (a.shape == out_shape) return a.v[flat];
  int64_t src = 0, mul = 1;
  const size_t off = out_shape.size() - a.shape.size();
  for (size_t k = out_shape.size(); k-- > 0;) {
    const int64_t i = flat % out_shape[k];
    flat /= out_shape[k];
    if (k < off) continue;
    const int64_t size = a.shape[k - off];
    src += (size == 1 ? 0 : i) * mul;
    mul *= size;
  }
  return a.v[src];
}

V Operand::at(int64_t flat, const Dims& out_shape) const {
  if (tensor) return element_at(t, flat, out_shape);
  return s.v;
}

V cast_scalar(const ScalarArg& s, DType to) {
  DType from = s.kind == DTypeKind::Floating ? tl::kFloat64 : tl::kInt64;
  return cast_value(s.v, from, to);
}

V cast_operand(const Operand& o, int64_t flat, const Dims& shape, DType to) {
  if (!o.tensor) return cast_scalar(o.s, to);
  return cast_value(o.at(flat, shape), o.t.dtype, to);
}

// A binary op's operand in the compute dtype, except that float16/bfloat16 add/sub/mul/div keep
// a scalar operand in float32 (as torch's CUDA kernels; the library's scalar_in_compute_type).
V binary_operand(Op op, const Operand& o, int64_t flat, const Dims& shape, DType compute) {
  const bool half = compute == tl::kFloat16 || compute == tl::kBFloat16;
  if (!o.tensor && half && (op == Op::Add || op == Op::Sub || op == Op::Mul || op == Op::Div))
    return cast_scalar(o.s, tl::kFloat32);
  return cast_operand(o, flat, shape, compute);
}

bool nonzero(V v, DType d) { return is_float(d) ? (v.f != 0 || std::isnan(v.f)) : v.i != 0; }

// Rounds a computed value to dtype d once (float32 / float16 / bfloat16 rounding, integer wrap,
// bool canonical): the half types compute in float and round once per op, as torch.
V finish(V v, DType d) {
  if (is_float(d))
    v.f = round_float(v.f, d);
  else if (d == tl::kBool)
    v.i = v.i != 0;
  else
    v.i = wrap_to(v.i, d);
  return v;
}

int64_t int_pow(int64_t base, int64_t exp) {
  if (exp < 0) {
    if (base == 1) return 1;
    if (base == -1) return (exp & 1) ? -1 : 1;
    return 0;
  }
  int64_t result = 1;
  while (exp) {
    if (exp & 1) result = wrap_mul(result, base);
    base = wrap_mul(base, base);
    exp >>= 1;
  }
  return result;
}

double fmax_nan(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? kNaN : std::max(a, b);
}
double fmin_nan(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? kNaN : std::min(a, b);
}

// One binary op on values already converted to the compute dtype d.
// Python's float floor division: from fmod, so that the quotient is exact where a / b rounds up
// to the next integer (1 // 0.1 is 9); a zero divisor gives IEEE a / b; a zero quotient has
// a / b's sign.
double float_floor_divide(double a, double b) {
  if (b == 0) return a / b;
  const double m = std::fmod(a, b);
  double q = (a - m) / b;
  if (m != 0 && (b < 0) != (m < 0)) q -= 1;
  if (q == 0) return std::copysign(0.0, a / b);
  double f = std::floor(q);
  if (q - f > 0.5) f += 1;
  return f;
}

V binary_value(Op op, V a, V b, DType d) {
  V r;
  if (is_float(d)) {
    switch (op) {
      case Op::Add:
        r.f = a.f + b.f;
        break;
      case Op::Sub:
        r.f = a.f - b.f;
        break;
      case Op::Mul:
        r.f = a.f * b.f;
        break;
      case Op::Div:
        r.f = a.f / b.f;
        break;
      case Op::Pow:
        r.f = std::pow(a.f, b.f);
        break;
      case Op::Maximum:
        r.f = fmax_nan(a.f, b.f);
        break;
      case Op::Minimum:
        r.f = fmin_nan(a.f, b.f);
        break;
      case Op::Gt:
        r.i = a.f > b.f;
        break;
      case Op::Lt:
        r.i = a.f < b.f;
        break;
      case Op::Ge:
        r.i = a.f >= b.f;
        break;
      case Op::Le:
        r.i = a.f <= b.f;
        break;
      case Op::Eq:
        r.i = a.f == b.f;
        break;
      case Op::Ne:
        r.i = a.f != b.f;
        break;
      case Op::Fmod:
        r.f = std::fmod(a.f, b.f);
        break;
      case Op::Remainder:  // the divisor's sign
        r.f = std::fmod(a.f, b.f);
        if (r.f != 0 && (b.f < 0) != (r.f < 0)) r.f += b.f;
        break;
      case Op::FloorDivide:
        r.f = float_floor_divide(a.f, b.f);
        break;
      case Op::Atan2:
        r.f = std::atan2(a.f, b.f);
        break;
      default:
        break;
    }
    return r;
  }
  switch (op) {
    case Op::Add:
      r.i = d == tl::kBool ? (a.i || b.i) : wrap_add(a.i, b.i);
      break;
    case Op::Sub:
      r.i = wrap_add(a.i, wrap_mul(b.i, -1));
      break;
    case Op::Mul:
      r.i = d == tl::kBool ? (a.i && b.i) : wrap_mul(a.i, b.i);
      break;
    case Op::Pow:
      r.i = int_pow(a.i, b.i);
      break;
    case Op::Maximum:
      r.i = std::max(a.i, b.i);
      break;
    case Op::Minimum:
      r.i = std::min(a.i, b.i);
      break;
    case Op::Gt:
      r.i = a.i > b.i;
      break;
    case Op::Lt:
      r.i = a.i < b.i;
      break;
    case Op::Ge:
      r.i = a.i >= b.i;
      break;
    case Op::Le:
      r.i = a.i <= b.i;
      break;
    case Op::Eq:
      r.i = a.i == b.i;
      break;
    case Op::Ne:
      r.i = a.i != b.i;
      break;
    // Integer division (the divisor is never 0 here: that raised). x / -1 wraps, x % -1 is 0.
    case Op::Fmod:
      r.i = b.i == -1 ? 0 : a.i % b.i;
      break;
    case Op::Remainder:
      r.i = b.i == -1 ? 0 : a.i % b.i;
      if (r.i != 0 && (r.i < 0) != (b.i < 0)) r.i += b.i;
      break;
    case Op::FloorDivide:
      if (b.i == -1) {
        r.i = wrap_mul(a.i, -1);
      } else {
        r.i = a.i / b.i;
        if (a.i % b.i != 0 && (a.i < 0) != (b.i < 0)) r.i -= 1;
      }
      break;
    case Op::BitwiseAnd:
      r.i = a.i & b.i;
      break;
    case Op::BitwiseOr:
      r.i = a.i | b.i;
      break;
    case Op::BitwiseXor:
      r.i = a.i ^ b.i;
      break;
    case Op::LeftShift: {  // by < 0 or >= the width: 0
      const int64_t bits = static_cast<int64_t>(tl::element_size(d)) * 8;
      r.i = b.i < 0 || b.i >= bits ? 0 : static_cast<int64_t>(static_cast<uint64_t>(a.i) << b.i);
      break;
    }
    case Op::RightShift: {  // by < 0 or >= the width (less the sign bit): the sign fill
      const bool is_signed = d != tl::kUInt8;
      const int64_t limit = static_cast<int64_t>(tl::element_size(d)) * 8 - (is_signed ? 1 : 0);
      r.i = b.i < 0 || b.i >= limit ? (a.i < 0 ? -1 : 0) : a.i >> b.i;
      break;
    }
    default:
      break;
  }
  return r;
}

bool is_comparison(Op op) { return op >= Op::Gt && op <= Op::LogicalXor; }

// The half types' tolerance: about one rounding of the result (float16 has 11 significant bits,
// bfloat16 8).
double half_tol(DType d) { return d == tl::kFloat16 ? 1e-3 : 8e-3; }
double float_tol(DType d, double f32, double f64) {
  if (is_half(d)) return half_tol(d);
  return d == tl::kFloat32 ? f32 : f64;
}

struct Ctx {
  const Case& c;
  const Known& known;
  RefResult& res;
  std::vector<HostArray> in;  // each input's logical values
  std::vector<Geom> geom;
};

Operand tensor_operand(const HostArray& a) {
  Operand o;
  o.tensor = true;
  o.t = a;
  return o;
}
Operand scalar_operand(const ScalarArg& s) {
  Operand o;
  o.s = s;
  return o;
}

// The operands of a binary/where/clamp op in their argument order, from the case's form.
std::vector<Operand> operands(Ctx& x, size_t first_input) {
  std::vector<Operand> ops;
  size_t ti = first_input, si = 0;
  const bool a_t = x.c.form == Form::TT || x.c.form == Form::TS;
  const bool b_t = x.c.form == Form::TT || x.c.form == Form::ST;
  ops.push_back(a_t ? tensor_operand(x.in[ti++]) : scalar_operand(x.c.scalars[si++]));
  ops.push_back(b_t ? tensor_operand(x.in[ti++]) : scalar_operand(x.c.scalars[si++]));
  return ops;
}

void run_binary(Ctx& x) {
  const Op op = x.c.op;
  auto ops = operands(x, 0);
  const Operand &a = ops[0], &b = ops[1];
  DType compute = result_type({&a, &b});
  if (op == Op::Sub && (a.dtype() == tl::kBool || b.dtype() == tl::kBool))
    throw Raise{"subtraction with a bool operand"};
  if ((op == Op::Div || op == Op::Atan2) && !is_float(compute)) compute = tl::kFloat32;
  const bool division = op == Op::Fmod || op == Op::Remainder || op == Op::FloorDivide;
  if (division && compute == tl::kBool) throw Raise{"integer division of bools"};
  const bool bitwise = op == Op::BitwiseAnd || op == Op::BitwiseOr || op == Op::BitwiseXor;
  const bool shift = op == Op::LeftShift || op == Op::RightShift;
  if ((bitwise || shift) && is_float(compute)) throw Raise{"bitwise op on floats"};
  if (shift && compute == tl::kBool) throw Raise{"shift of bools"};
  if (op == Op::Pow) {
    if (a.dtype() == tl::kBool || b.dtype() == tl::kBool) {
      if (x.known.pow_bool) {
        x.res.skip = true;
        return;
      }
      if (compute == tl::kBool) throw Raise{"pow of bools"};
    }
    if (a.tensor && !is_float(a.t.dtype) && !b.tensor && b.s.kind == DTypeKind::Integer &&
        b.s.v.i < 0)
      throw Raise{"integers to negative integer powers"};
  }
  std::vector<Dims> shapes;
  for (auto* o : {&a, &b})
    if (o->tensor) shapes.push_back(o->t.shape);
  Dims shape = broadcast(shapes);
  const bool logical = op == Op::LogicalAnd || op == Op::LogicalOr || op == Op::LogicalXor;
  const DType out_dtype = is_comparison(op) ? tl::kBool : compute;
  // An integer division by zero raises (torch's CPU; tensorlet on every device), checked on the
  // divisor as the kernel sees it, in the compute dtype.
  if (division && !is_float(compute))
    for (int64_t i = 0; i < numel_of(shape); ++i)
      if (binary_operand(op, b, i, shape, compute).i == 0) throw Raise{"ZeroDivisionError"};
  HostArray& out = x.res.out;
  out = {out_dtype, shape, std::vector<V>(numel_of(shape))};
  for (int64_t i = 0; i < numel_of(shape); ++i) {
    V va = binary_operand(op, a, i, shape, compute), vb = binary_operand(op, b, i, shape, compute);
    if (logical) {  // as torch: non-zero after conversion to the promoted dtype (int64 2^32 in an
                    // int32 computation is 0, so false)
      const bool ta = nonzero(va, compute), tb = nonzero(vb, compute);
      out.v[i].i = op == Op::LogicalAnd  ? (ta && tb)
                   : op == Op::LogicalOr ? (ta || tb)
                                         : (ta != tb);
      continue;
    }
    out.v[i] = finish(binary_value(op, va, vb, compute), out_dtype);
  }
  if (op == Op::Pow) {
    x.res.rtol = float_tol(compute, 1e-5, 1e-12);
    // Where the result is subnormal a relative bound means nothing: the math libraries' few ulps
    // (CUDA's pow: 2) are absolute there (2^-1074 against 0 on a GPU).
    const double tiny = compute == tl::kFloat64   ? 4 * std::numeric_limits<double>::denorm_min()
                        : compute == tl::kFloat32 ? 4 * std::numeric_limits<float>::denorm_min()
                                                  : 0.0;
    x.res.atol.assign(out.v.size(), tiny);
  }
  if (op == Op::Div || division) x.res.rtol = float_tol(compute, 1e-6, 1e-15);
  if (op == Op::Atan2) {
    x.res.rtol = float_tol(compute, 1e-5, 1e-12);
    x.res.atol.assign(out.v.size(), float_tol(compute, 1e-6, 1e-14));
  }
}

void run_unary(Ctx& x) {
  const Op op = x.c.op;
  const HostArray& a = x.in[0];
  DType d = a.dtype;
  if (op == Op::Neg && d == tl::kBool) throw Raise{"negation of bool"};
  if (op == Op::Relu && d == tl::kBool) throw Raise{"relu of bool"};
  if (op == Op::Square && d == tl::kBool) d = tl::kInt64;  // bool ** 2, as torch
  const bool rounding = op == Op::Floor || op == Op::Ceil || op == Op::Trunc || op == Op::Round;
  if (rounding && d == tl::kBool) throw Raise{"rounding of bool"};
  if (op == Op::Abs && d == tl::kBool) {
    if (x.known.bool_math) {
      x.res.skip = true;
      return;
    }
    throw Raise{"abs of bool"};
  }
  const bool activation =
      op == Op::Silu || op == Op::Softplus || op == Op::Gelu || op == Op::GeluTanh;
  if (activation && !is_float(d)) throw Raise{"activation of a non-float tensor"};
  if (op == Op::BitwiseNot && is_float(d)) throw Raise{"bitwise_not of a float"};
  const bool test = op == Op::Isnan || op == Op::Isinf || op == Op::Isfinite;
  const bool same = op == Op::Neg || op == Op::Abs || op == Op::Relu || rounding ||
                    op == Op::Sign || op == Op::Square || op == Op::BitwiseNot;
  const bool math = !(same || test || op == Op::LogicalNot);
  if (math && !is_float(d)) d = tl::kFloat32;
  const DType out_dtype = op == Op::LogicalNot || test ? tl::kBool : d;
  HostArray& out = x.res.out;
  out = {out_dtype, a.shape, std::vector<V>(a.v.size())};
  for (size_t i = 0; i < a.v.size(); ++i) {
    V v = cast_value(a.v[i], a.dtype, d), r;
    if (op == Op::LogicalNot) {
      r.i = !nonzero(a.v[i], a.dtype);
    } else if (test) {
      const double f = v.f;
      if (!is_float(d))
        r.i = op == Op::Isfinite;
      else
        r.i = op == Op::Isnan ? std::isnan(f) : op == Op::Isinf ? std::isinf(f) : std::isfinite(f);
    } else if (!is_float(d)) {
      if (op == Op::Neg) r.i = wrap_mul(v.i, -1);
      if (op == Op::Abs) r.i = v.i < 0 ? wrap_mul(v.i, -1) : v.i;
      if (op == Op::Relu) r.i = std::max<int64_t>(v.i, 0);
      if (rounding) r.i = v.i;
      if (op == Op::Sign) r.i = (0 < v.i) - (v.i < 0);
      if (op == Op::Square) r.i = wrap_mul(v.i, v.i);
      if (op == Op::BitwiseNot) r.i = d == tl::kBool ? !v.i : ~v.i;
    } else {
      const double f = v.f;
      switch (op) {
        case Op::Neg:
          r.f = -f;
          break;
        case Op::Abs:
          r.f = std::fabs(f);
          break;
        case Op::Exp:
          r.f = std::exp(f);
          break;
        case Op::Log:
          r.f = std::log(f);
          break;
        case Op::Sqrt:
          r.f = std::sqrt(f);
          break;
        case Op::Sin:
          r.f = std::sin(f);
          break;
        case Op::Cos:
          r.f = std::cos(f);
          break;
        case Op::Tanh:
          r.f = std::tanh(f);
          break;
        case Op::Sigmoid:
          r.f = 1 / (1 + std::exp(-f));
          break;
        case Op::Relu:
          r.f = std::isnan(f) ? f : std::max(f, 0.0);
          break;
        case Op::Floor:
          r.f = std::floor(f);
          break;
        case Op::Ceil:
          r.f = std::ceil(f);
          break;
        case Op::Trunc:
          r.f = std::trunc(f);
          break;
        case Op::Round:
          r.f = std::nearbyint(f);  // halves to even
          break;
        case Op::Sign:  // NaN and -0.0 give 0, as torch
          r.f = (0 < f) - (f < 0);
          break;
        case Op::Square:
          r.f = f * f;
          break;
        case Op::Reciprocal:
          r.f = 1 / f;
          break;
        case Op::Rsqrt:
          r.f = 1 / std::sqrt(f);
          break;
        case Op::Log1p:
          r.f = std::log1p(f);
          break;
        case Op::Expm1:
          r.f = std::expm1(f);
          break;
        case Op::Log2:
          r.f = std::log2(f);
          break;
        case Op::Log10:
          r.f = std::log10(f);
          break;
        case Op::Exp2:
          r.f = std::exp2(f);
          break;
        case Op::Erf:
          r.f = std::erf(f);
          break;
        case Op::Erfc:
          r.f = std::erfc(f);
          break;
        case Op::Tan:
          r.f = std::tan(f);
          break;
        case Op::Sinh:
          r.f = std::sinh(f);
          break;
        case Op::Cosh:
          r.f = std::cosh(f);
          break;
        case Op::Asin:
          r.f = std::asin(f);
          break;
        case Op::Acos:
          r.f = std::acos(f);
          break;
        case Op::Atan:
          r.f = std::atan(f);
          break;
        case Op::Silu:
          r.f = f / (1 + std::exp(-f));
          break;
        case Op::Softplus:  // torch's defaults: beta 1, threshold 20
          r.f = f > 20 ? f : std::log1p(std::exp(f));
          break;
        case Op::Gelu:
          r.f = 0.5 * f * (1 + std::erf(f / std::sqrt(2.0)));
          break;
        case Op::GeluTanh:
          r.f = 0.5 * f * (1 + std::tanh(std::sqrt(2 / M_PI) * (f + 0.044715 * f * f * f)));
          break;
        default:
          break;
      }
    }
    out.v[i] = finish(r, out_dtype);
  }
  if (math) {
    x.res.rtol = float_tol(d, 1e-5, 1e-12);
    x.res.atol.assign(out.v.size(), float_tol(d, 1e-6, 1e-14));
  }
}

void run_where(Ctx& x) {
  const HostArray& cond = x.in[0];
  if (cond.dtype != tl::kBool) throw Raise{"where needs a bool condition"};
  auto ops = operands(x, 1);
  DType d = result_type({&ops[0], &ops[1]});
  std::vector<Dims> shapes{cond.shape};
  for (auto& o : ops)
    if (o.tensor) shapes.push_back(o.t.shape);
  Dims shape = broadcast(shapes);
  HostArray& out = x.res.out;
  out = {d, shape, std::vector<V>(numel_of(shape))};
  for (int64_t i = 0; i < numel_of(shape); ++i) {
    const bool c = element_at(cond, i, shape).i != 0;
    out.v[i] = finish(cast_operand(ops[c ? 0 : 1], i, shape, d), d);
  }
}

void run_clamp(Ctx& x) {
  std::vector<Operand> ops{tensor_operand(x.in[0])};
  size_t ti = 1, si = 0;
  std::optional<size_t> lo, hi;
  for (int k = 0; k < 2; ++k) {
    if (!(k == 0 ? x.c.has_lo : x.c.has_hi)) continue;
    (k == 0 ? lo : hi) = ops.size();
    ops.push_back(x.c.form == Form::TT ? tensor_operand(x.in[ti++])
                                       : scalar_operand(x.c.scalars[si++]));
  }
  if (x.in[0].dtype == tl::kBool && x.known.bool_math) {
    x.res.skip = true;
    return;
  }
  std::vector<const Operand*> ptrs;
  std::vector<Dims> shapes;
  for (auto& o : ops) {
    ptrs.push_back(&o);
    if (o.tensor) shapes.push_back(o.t.shape);
  }
  const DType d = result_type(ptrs);
  // torch clamps bools only after promotion by a number bound; in bool it raises (for tensor
  // bounds only when both are given: an accident of its kernels, we raise for every bool clamp).
  if (d == tl::kBool) throw Raise{"clamp computed in bool"};
  Dims shape = broadcast(shapes);
  HostArray& out = x.res.out;
  out = {d, shape, std::vector<V>(numel_of(shape))};
  for (int64_t i = 0; i < numel_of(shape); ++i) {
    V v = cast_operand(ops[0], i, shape, d);
    if (lo) v = binary_value(Op::Maximum, v, cast_operand(ops[*lo], i, shape, d), d);
    if (hi) v = binary_value(Op::Minimum, v, cast_operand(ops[*hi], i, shape, d), d);
    out.v[i] = finish(v, d);
  }
}

// Reduction over the dims in mask: calls f(out_flat, in_flat) for each input element.
Dims reduced_shape(const Dims& s, const std::vector<bool>& mask, bool keepdim) {
  Dims out;
  for (size_t k = 0; k < s.size(); ++k) {
    if (!mask[k])
      out.push_back(s[k]);
    else if (keepdim)
      out.push_back(1);
  }
  return out;
}

int64_t out_index(const Dims& idx, const Dims& s, const std::vector<bool>& mask) {
  int64_t o = 0;
  for (size_t k = 0; k < s.size(); ++k)
    if (!mask[k]) o = o * s[k] + idx[k];
  return o;
}

// The reduced-dim mask of a dim list (empty: every dim), with torch's range and repeat rules.
std::vector<bool> dims_mask(const Dims& dims, int64_t nd) {
  std::vector<bool> mask(nd, dims.empty());
  std::vector<bool> named(std::max<int64_t>(nd, 1), false);
  for (int64_t dim : dims) {
    auto w = wrap(dim, nd);
    if (!w) throw Raise{"dim out of range"};
    if (named[*w]) throw Raise{"dim repeated"};
    named[*w] = true;
    if (nd > 0) mask[*w] = true;
  }
  return mask;
}

void run_reduction(Ctx& x) {
  const Op op = x.c.op;
  const HostArray& a = x.in[0];
  const int64_t nd = static_cast<int64_t>(a.shape.size());
  if (op == Op::Argmax || op == Op::Argmin) {
    if (a.dtype == tl::kBool) {
      if (x.known.bool_math) {
        x.res.skip = true;
        return;
      }
      throw Raise{"argmax/argmin of bool"};
    }
    std::vector<bool> mask(nd, true);
    std::optional<int64_t> d;
    if (x.c.dim) {
      d = wrap(*x.c.dim, nd);
      if (!d) throw Raise{"dim out of range"};
      if (nd > 0) {
        if (a.shape[*d] == 0) throw Raise{"arg-reduction over an empty dim"};
        mask.assign(nd, false);
        mask[*d] = true;
      }
    } else if (a.v.empty()) {
      throw Raise{"arg-reduction of an empty tensor"};
    }
    Dims oshape = reduced_shape(a.shape, mask, x.c.keepdim);
    HostArray& out = x.res.out;
    out = {tl::kInt64, oshape, std::vector<V>(numel_of(oshape))};
    std::vector<V> best(out.v.size());
    std::vector<bool> seen(out.v.size(), false);
    // Position along the reduced dim(s): the flat index of the reduced sub-array.
    for_each_index(a.shape, [&](int64_t flat, const Dims& idx) {
      const int64_t o = out_index(idx, a.shape, mask);
      int64_t pos = 0;
      for (int64_t k = 0; k < nd; ++k)
        if (mask[k]) pos = pos * a.shape[k] + idx[k];
      const V v = a.v[flat];
      bool take = !seen[o];
      if (!take) {
        if (is_float(a.dtype)) {
          const double b = best[o].f;
          take = !std::isnan(b) && (std::isnan(v.f) || (op == Op::Argmax ? v.f > b : v.f < b));
        } else {
          take = op == Op::Argmax ? v.i > best[o].i : v.i < best[o].i;
        }
      }
      if (take) {
        seen[o] = true;
        best[o] = v;
        out.v[o].i = pos;
      }
    });
    return;
  }
  const std::vector<bool> mask = dims_mask(x.c.dims, nd);
  DType od = a.dtype;
  if (op == Op::Sum || op == Op::Prod) od = is_float(a.dtype) ? a.dtype : tl::kInt64;
  if (op == Op::Mean && !is_float(a.dtype)) throw Raise{"mean of a non-floating dtype"};
  // torch.all / torch.any keep uint8 as uint8 (0 or 1).
  if (op == Op::Any || op == Op::All) od = a.dtype == tl::kUInt8 ? tl::kUInt8 : tl::kBool;
  bool empty_extent = false;
  for (int64_t k = 0; k < nd; ++k) empty_extent |= mask[k] && a.shape[k] == 0;
  if (empty_extent && (op == Op::Max || op == Op::Min)) throw Raise{"max/min over an empty dim"};
  Dims oshape = reduced_shape(a.shape, mask, x.c.keepdim);
  const int64_t n_out = numel_of(oshape);
  HostArray& out = x.res.out;
  out = {od, oshape, std::vector<V>(n_out)};
  // Sums carry a Neumaier compensation: the model must be more exact than the float64 tolerance
  // over 10^5 terms, which a plain running sum is not.
  std::vector<double> acc(n_out, op == Op::Prod ? 1.0 : 0.0), mag(n_out, 0.0), comp(n_out, 0.0);
  std::vector<int64_t> iacc(n_out, op == Op::Prod ? 1 : 0), count(n_out, 0);
  std::vector<bool> seen(n_out, false);
  for (int64_t o = 0; o < n_out; ++o) {
    if (op == Op::All) out.v[o].i = 1;
  }
  for_each_index(a.shape, [&](int64_t flat, const Dims& idx) {
    const int64_t o = out_index(idx, a.shape, mask);
    const V v = a.v[flat];
    count[o]++;
    switch (op) {
      case Op::Sum:
      case Op::Mean:
        if (is_float(a.dtype)) {
          const double t = acc[o] + v.f;
          if (std::isfinite(t))
            comp[o] +=
                std::fabs(acc[o]) >= std::fabs(v.f) ? (acc[o] - t) + v.f : (v.f - t) + acc[o];
          acc[o] = t;
          mag[o] += std::fabs(v.f);
        } else {
          iacc[o] = wrap_add(iacc[o], v.i);
        }
        break;
      case Op::Prod:
        if (is_float(a.dtype))
          acc[o] *= v.f;
        else
          iacc[o] = wrap_mul(iacc[o], v.i);
        break;
      case Op::Max:
      case Op::Min:
        if (!seen[o])
          out.v[o] = v;
        else if (is_float(a.dtype))
          out.v[o].f = op == Op::Max ? fmax_nan(out.v[o].f, v.f) : fmin_nan(out.v[o].f, v.f);
        else
          out.v[o].i = op == Op::Max ? std::max(out.v[o].i, v.i) : std::min(out.v[o].i, v.i);
        seen[o] = true;
        break;
      case Op::Any:
        out.v[o].i |= nonzero(v, a.dtype);
        break;
      case Op::All:
        out.v[o].i &= nonzero(v, a.dtype);
        break;
      default:
        break;
    }
  });
  // The half types accumulate in float: float's error on the sum, then one rounding (rtol).
  const double eps = is_half(od) ? 2e-6 : float_tol(od, 2e-6, 1e-14);
  x.res.atol.assign(n_out, 0);
  for (int64_t o = 0; o < n_out; ++o) {
    if (op == Op::Sum || op == Op::Prod || op == Op::Mean) {
      if (is_float(od)) {
        double v = op == Op::Prod ? acc[o] : acc[o] + comp[o];
        if (op == Op::Mean) v = count[o] ? v / count[o] : kNaN;
        out.v[o].f = v;
        x.res.atol[o] = eps * (op == Op::Mean && count[o] ? mag[o] / count[o] : mag[o]) * 4 + 1e-30;
      } else {
        out.v[o].i = iacc[o];
      }
    }
    out.v[o] = finish(out.v[o], od);
  }
  if (op == Op::Prod) x.res.rtol = float_tol(od, 1e-5, 1e-13);
  if (is_half(od)) x.res.rtol = std::max(x.res.rtol, half_tol(od));
}

// A sum compensated as Neumaier's (the reference must be more exact than the library's sums of
// up to 10^5 terms in double, which the tolerances are for); infinite terms add plainly.
struct Compensated {
  double sum = 0, comp = 0;
  void add(double v) {
    const double next = sum + v;
    if (std::isfinite(next))
      comp += std::fabs(sum) >= std::fabs(v) ? (sum - next) + v : (v - next) + sum;
    sum = next;
  }
  double value() const { return sum + comp; }
};

// softmax / log_softmax along a dim; logsumexp, var, std over dims. Rows are groups of elements
// sharing an output index (softmax: every dim but its own). The library computes in float for
// float32 and the half types (rounding once), so tolerances follow float's epsilon there.
void run_numerics(Ctx& x) {
  const Op op = x.c.op;
  const HostArray& a = x.in[0];
  const int64_t nd = static_cast<int64_t>(a.shape.size());
  const bool softmax = op == Op::Softmax || op == Op::LogSoftmax;
  std::vector<bool> mask;
  if (softmax) {
    const auto d = wrap(*x.c.dim, nd);
    if (!d) throw Raise{"dim out of range"};
    mask.assign(nd, false);
    if (nd > 0) mask[*d] = true;
  } else {
    mask = dims_mask(x.c.dims, nd);
  }
  if (!is_float(a.dtype) && op != Op::Logsumexp) throw Raise{"softmax/var/std of a non-float"};
  const DType od = is_float(a.dtype) ? a.dtype : tl::kFloat32;
  const double eps = od == tl::kFloat64 ? 1e-15 : 1.2e-7;
  const Dims oshape = reduced_shape(a.shape, mask, softmax || x.c.keepdim);
  const int64_t n_out = numel_of(oshape);
  std::vector<int64_t> row(a.v.size());
  std::vector<double> m(n_out, -kInf), sum(n_out, 0.0), mean(n_out, 0.0), sq(n_out, 0.0);
  std::vector<int64_t> count(n_out, 0);
  std::vector<Compensated> mean_sum(n_out);
  for_each_index(a.shape, [&](int64_t flat, const Dims& idx) {
    const int64_t o = out_index(idx, a.shape, mask);
    row[flat] = o;
    const double v = is_float(a.dtype) ? a.v[flat].f : static_cast<double>(a.v[flat].i);
    m[o] = fmax_nan(m[o], v);
    mean_sum[o].add(v);
    sq[o] += v * v;  // the scale of the float rounding of a variance
    count[o]++;
  });
  auto value = [&](size_t flat) {
    return is_float(a.dtype) ? a.v[flat].f : static_cast<double>(a.v[flat].i);
  };
  HostArray& out = x.res.out;
  // The sums of the shifted exps, compensated (Neumaier): a plain double sum of 10^5 terms is off
  // by more than the library's (pairwise) one, and the tolerances below are for the result's
  // rounding.
  const auto sum_exps = [&] {
    std::vector<double> comp(n_out, 0.0);
    for (size_t i = 0; i < a.v.size(); ++i) {
      double& acc = sum[row[i]];
      const double v = std::exp(value(i) - m[row[i]]);
      const double t = acc + v;
      if (std::isfinite(t))
        comp[row[i]] += std::fabs(acc) >= std::fabs(v) ? (acc - t) + v : (v - t) + acc;
      acc = t;
    }
    for (int64_t o = 0; o < n_out; ++o) sum[o] += comp[o];
  };
  if (softmax) {
    sum_exps();
    out = {od, a.shape, std::vector<V>(a.v.size())};
    x.res.atol.assign(a.v.size(), 0);
    for (size_t i = 0; i < a.v.size(); ++i) {
      const int64_t o = row[i];
      const double t = value(i) - m[o];
      double y = op == Op::LogSoftmax ? t - std::log(sum[o]) : std::exp(t) / sum[o];
      // x - max is one rounding of |x| + |max|; exp turns its absolute error into a relative one.
      double err = 8 * eps * (1 + std::fabs(value(i)) + std::fabs(m[o]) + std::log(sum[o]));
      if (!std::isfinite(err)) err = 0;  // an infinite input: the result is exact (0, -inf, NaN)
      x.res.atol[i] = op == Op::LogSoftmax ? err : err * std::fabs(y) + 1e-30;
      out.v[i].f = y;
      out.v[i] = finish(out.v[i], od);
    }
    x.res.rtol = float_tol(od, 8 * eps, 8 * eps);
    return;
  }
  out = {od, oshape, std::vector<V>(n_out)};
  x.res.atol.assign(n_out, 0);
  if (op == Op::Logsumexp) {
    // torch shifts by the max, or by 0 where it is infinite (all -inf: -inf; a +inf: +inf).
    for (double& v : m)
      if (std::isinf(v)) v = 0;
    sum_exps();
    for (int64_t o = 0; o < n_out; ++o) {
      out.v[o].f = std::log(sum[o]) + m[o];
      x.res.atol[o] = 8 * eps * (1 + std::fabs(out.v[o].f) + std::fabs(m[o]));
      out.v[o] = finish(out.v[o], od);
    }
    x.res.rtol = float_tol(od, 8 * eps, 8 * eps);
    return;
  }
  // var / std: two compensated passes in double (a plain sum of 81 920 equal terms was off by
  // 3.5e-12 relative, more than the library's; found by the fuzzer, seed 5); the library's
  // squares are float32 for the float dtypes.
  for (int64_t o = 0; o < n_out; ++o)
    mean[o] = count[o] ? mean_sum[o].value() / static_cast<double>(count[o]) : kNaN;
  std::vector<Compensated> ss_sum(n_out);
  for (size_t i = 0; i < a.v.size(); ++i) {
    const double dev = value(i) - mean[row[i]];
    double d2 = dev * dev;
    if (od != tl::kFloat64 && d2 > std::numeric_limits<float>::max()) d2 = kInf;
    ss_sum[row[i]].add(d2);
  }
  std::vector<double> ss(n_out);
  for (int64_t o = 0; o < n_out; ++o) {
    ss[o] = ss_sum[o].value();
    if (od != tl::kFloat64 && ss[o] > std::numeric_limits<float>::max()) ss[o] = kInf;
    const double divisor = std::max(0.0, static_cast<double>(count[o]) - x.c.correction);
    double v = ss[o] / divisor;
    double err = 16 * eps * sq[o] / std::max(divisor, 1.0);
    if (op == Op::Std) {
      v = std::sqrt(v);
      err = std::sqrt(err);  // |sqrt(a) - sqrt(b)| <= sqrt(|a - b|)
    }
    out.v[o].f = v;
    x.res.atol[o] = err + 1e-30;
    out.v[o] = finish(out.v[o], od);
  }
  x.res.rtol = float_tol(od, 8 * eps, 8 * eps);
}

// sort / argsort / topk / kthvalue along a dim: each row (the elements sharing every other index)
// in torch's order, NaN above everything, ties in position order (a stable sort). Unstable
// argsort is compared through the values its indices pick, topk(sorted = false) after sorting
// its values (runner.cpp), so the stable order is the reference for every case.
void run_ordering(Ctx& x) {
  const Op op = x.c.op;
  const HostArray& a = x.in[0];
  const int64_t nd = static_cast<int64_t>(a.shape.size());
  const auto d = wrap(*x.c.dim, nd);
  if (!d) throw Raise{"dim out of range"};
  const int64_t n = nd == 0 ? 1 : a.shape[*d];
  const int64_t k = x.c.k;
  if (op == Op::Topk && (k < 0 || k > n)) throw Raise{"topk: k out of range"};
  if (op == Op::Kthvalue && n == 0) throw Raise{"kthvalue over an empty dim"};
  if (op == Op::Kthvalue && (k < 1 || k > n)) throw Raise{"kthvalue: k out of range"};
  // torch's topk and kthvalue kernels are not built for bool.
  if ((op == Op::Topk || op == Op::Kthvalue) && a.dtype == tl::kBool)
    throw Raise{"topk/kthvalue of bool"};
  const bool descending = op == Op::Topk       ? x.c.largest
                          : op == Op::Kthvalue ? false
                                               : x.c.descending;
  const bool floating = is_float(a.dtype);
  auto before = [&](const V& p, const V& q) {
    if (!floating) return descending ? p.i > q.i : p.i < q.i;
    const bool pn = std::isnan(p.f), qn = std::isnan(q.f);
    if (pn || qn) return descending ? pn && !qn : !pn && qn;
    return descending ? p.f > q.f : p.f < q.f;
  };
  std::vector<bool> mask(nd, false);
  if (nd > 0) mask[*d] = true;
  // Each row's flat input indices in position order, and each element's position along d.
  std::vector<std::vector<int64_t>> rows(numel_of(reduced_shape(a.shape, mask, false)));
  std::vector<int64_t> pos(a.v.size(), 0);
  for_each_index(a.shape, [&](int64_t flat, const Dims& idx) {
    rows[out_index(idx, a.shape, mask)].push_back(flat);
    if (nd > 0) pos[flat] = idx[*d];
  });
  for (auto& r : rows)
    std::stable_sort(r.begin(), r.end(),
                     [&](int64_t p, int64_t q) { return before(a.v[p], a.v[q]); });
  Dims oshape = a.shape;
  int64_t first = 0;
  if (op == Op::Topk && nd > 0) oshape[*d] = k;  // a 0-dim input stays 0-dim (k 0 or 1)
  if (op == Op::Kthvalue) {
    oshape = reduced_shape(a.shape, mask, x.c.keepdim);
    first = k - 1;
  }
  const bool positions = op == Op::Argsort && x.c.stable;
  HostArray& out = x.res.out;
  out = {positions ? tl::kInt64 : a.dtype, oshape, std::vector<V>(numel_of(oshape))};
  for_each_index(oshape, [&](int64_t flat, const Dims& idx) {
    int64_t row = 0, rank = 0;
    if (op == Op::Kthvalue && !x.c.keepdim) {
      row = flat;  // the other dims, in order
    } else if (nd > 0) {
      row = out_index(idx, oshape, mask);
      rank = idx[*d];
    }
    const int64_t src = rows[row][first + rank];
    out.v[flat] = positions ? V{pos[src], 0.0} : a.v[src];
  });
}

void run_matmul(Ctx& x) {
  const HostArray &a = x.in[0], &b = x.in[1];
  if (a.dtype != b.dtype) throw Raise{"matmul of different dtypes"};
  if (a.dtype == tl::kBool) throw Raise{"matmul of bools"};
  if (a.shape.empty() || b.shape.empty()) throw Raise{"matmul of a 0-d tensor"};
  const bool av = a.shape.size() == 1, bv = b.shape.size() == 1;
  Dims as = a.shape, bs = b.shape;
  if (av) as.insert(as.begin(), 1);
  if (bv) bs.push_back(1);
  const int64_t m = as[as.size() - 2], k = as.back(), k2 = bs[bs.size() - 2], n = bs.back();
  if (k != k2) throw Raise{"inner dims differ"};
  Dims ba(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2);
  Dims batch = broadcast({ba, bb});
  Dims full = batch;
  full.push_back(m);
  full.push_back(n);
  Dims oshape = batch;
  if (!av) oshape.push_back(m);
  if (!bv) oshape.push_back(n);
  const DType d = a.dtype;
  HostArray& out = x.res.out;
  out = {d, oshape, std::vector<V>(numel_of(full))};
  x.res.atol.assign(out.v.size(), 0);
  HostArray a3{d, as, a.v}, b3{d, bs, b.v};
  const int64_t nb = numel_of(batch);
  for (int64_t bi = 0; bi < nb; ++bi)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        V r;
        double mag = 0;
        for (int64_t kk = 0; kk < k; ++kk) {
          // Row-major positions in the broadcast [batch, m, k] and [batch, k, n] arrays.
          Dims fa = batch, fb = batch;
          fa.push_back(m);
          fa.push_back(k);
          fb.push_back(k);
          fb.push_back(n);
          const V va = element_at(a3, (bi * m + i) * k + kk, fa);
          const V vb = element_at(b3, (bi * k + kk) * n + j, fb);
          if (is_float(d)) {
            r.f += va.f * vb.f;
            mag += std::fabs(va.f * vb.f);
          } else {
            r.i = wrap_add(r.i, wrap_mul(va.i, vb.i));
          }
        }
        const int64_t o = (bi * m + i) * n + j;
        out.v[o] = finish(r, d);
        x.res.atol[o] = float_tol(d, 4e-6, 1e-14) * mag;
      }
}

// outer is mul of a [n, 1] and b (torch.outer): the binary reference with a reshaped.
void run_outer(Ctx& x) {
  if (x.in[0].shape.size() != 1 || x.in[1].shape.size() != 1)
    throw Raise{"outer of a tensor that is not 1-D"};
  Case mul = x.c;
  mul.op = Op::Mul;
  mul.form = Form::TT;
  Ctx y{mul, x.known, x.res, x.in, x.geom};
  y.in[0].shape = {x.in[0].shape[0], 1};
  run_binary(y);
}

// beta * input + alpha * (mat1 @ mat2), input broadcast to [n, m]: beta 0 ignores input and
// alpha 0 the product (BLAS's rule, which torch keeps); integers wrap.
void run_addmm(Ctx& x) {
  const HostArray &in = x.in[0], &a = x.in[1], &b = x.in[2];
  if (a.dtype != b.dtype || in.dtype != a.dtype) throw Raise{"addmm of different dtypes"};
  if (a.dtype == tl::kBool) throw Raise{"addmm of bools"};
  if (a.shape.size() != 2 || b.shape.size() != 2) throw Raise{"addmm of non-matrices"};
  const DType d = a.dtype;
  const ScalarArg &beta = x.c.scalars[0], &alpha = x.c.scalars[1];
  if (!is_float(d) && (beta.kind == DTypeKind::Floating || alpha.kind == DTypeKind::Floating))
    throw Raise{"a float alpha or beta for integers"};
  const int64_t n = a.shape[0], k = a.shape[1], m = b.shape[1];
  if (b.shape[0] != k) throw Raise{"shapes cannot be multiplied"};
  const Dims shape{n, m};
  if (broadcast({in.shape, shape}) != shape) throw Raise{"input does not broadcast"};
  const double bf = beta.kind == DTypeKind::Floating ? beta.v.f : double(beta.v.i);
  const double af = alpha.kind == DTypeKind::Floating ? alpha.v.f : double(alpha.v.i);
  HostArray& out = x.res.out;
  out = {d, shape, std::vector<V>(n * m)};
  x.res.atol.assign(out.v.size(), 0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j) {
      const int64_t o = i * m + j;
      const V vin = element_at(in, o, shape);
      V sum, r;
      double mag = 0;
      for (int64_t q = 0; q < k; ++q) {
        const V va = element_at(a, i * k + q, a.shape), vb = element_at(b, q * m + j, b.shape);
        if (is_float(d)) {
          sum.f += va.f * vb.f;
          mag += std::fabs(va.f * vb.f);
        } else {
          sum.i = wrap_add(sum.i, wrap_mul(va.i, vb.i));
        }
      }
      if (is_float(d)) {
        r.f = (bf == 0 ? 0.0 : bf * vin.f) + (af == 0 || k == 0 ? 0.0 : af * sum.f);
        x.res.atol[o] = float_tol(d, 4e-6, 1e-14) * (std::fabs(af) * mag + std::fabs(bf * vin.f));
      } else {
        r.i = wrap_add(bf == 0 ? 0 : wrap_mul(beta.v.i, vin.i), wrap_mul(alpha.v.i, sum.i));
      }
      out.v[o] = finish(r, d);
    }
}

void run_cat(Ctx& x) {
  const bool stack = x.c.op == Op::Stack;
  std::vector<HostArray> ts = x.in;
  DType d = ts[0].dtype;
  for (auto& t : ts) d = promote(d, t.dtype);
  int64_t dim = *x.c.dim;
  if (stack) {
    for (auto& t : ts)
      if (t.shape != ts[0].shape) throw Raise{"stack of different shapes"};
    auto w = wrap(dim, static_cast<int64_t>(ts[0].shape.size()) + 1);
    if (!w || ts[0].shape.size() + 1 > 16) throw Raise{"dim out of range"};
    for (auto& t : ts) t.shape.insert(t.shape.begin() + *w, 1);
    dim = *w;
  }
  auto skipped = [](const HostArray& t) { return t.shape.size() == 1 && t.shape[0] == 0; };
  const HostArray* first = nullptr;
  for (auto& t : ts)
    if (!skipped(t)) {
      first = &t;
      break;
    }
  HostArray& out = x.res.out;
  if (!first) {
    out = {d, {0}, {}};
    return;
  }
  for (auto& t : ts)
    if (t.shape.empty()) throw Raise{"cat of a 0-d tensor"};
  auto w = wrap(dim, static_cast<int64_t>(first->shape.size()));
  if (!w) throw Raise{"dim out of range"};
  Dims oshape = first->shape;
  oshape[*w] = 0;
  for (auto& t : ts) {
    if (skipped(t)) continue;
    if (t.shape.size() != first->shape.size()) throw Raise{"cat of different ranks"};
    for (size_t k = 0; k < t.shape.size(); ++k)
      if (static_cast<int64_t>(k) != *w && t.shape[k] != first->shape[k])
        throw Raise{"cat of mismatched sizes"};
    oshape[*w] += t.shape[*w];
  }
  out = {d, oshape, std::vector<V>(numel_of(oshape))};
  int64_t base = 0;
  for (auto& t : ts) {
    if (skipped(t)) continue;
    for_each_index(t.shape, [&](int64_t flat, const Dims& idx) {
      Dims oi = idx;
      oi[*w] += base;
      int64_t o = 0;
      for (size_t k = 0; k < oi.size(); ++k) o = o * oshape[k] + oi[k];
      out.v[o] = cast_value(t.v[flat], t.dtype, d);
    });
    base += t.shape[*w];
  }
}

void run_index_select(Ctx& x) {
  const HostArray &a = x.in[0], &index = x.in[1];
  const int64_t nd = static_cast<int64_t>(a.shape.size());
  auto w = wrap(*x.c.dim, nd);
  if (!w) throw Raise{"dim out of range"};
  if (index.dtype != tl::kInt32 && index.dtype != tl::kInt64) throw Raise{"index dtype"};
  if (index.shape.size() > 1) throw Raise{"index of more than one dim"};
  const int64_t size = nd ? a.shape[*w] : 1;
  for (const V& v : index.v)
    if (v.i < 0 || v.i >= size) throw Raise{"index out of range"};
  Dims oshape = a.shape;
  oshape[*w] = static_cast<int64_t>(index.v.size());
  HostArray& out = x.res.out;
  out = {a.dtype, oshape, std::vector<V>(numel_of(oshape))};
  for_each_index(oshape, [&](int64_t flat, const Dims& idx) {
    Dims ai = idx;
    ai[*w] = index.v[idx[*w]].i;
    int64_t src = 0;
    for (int64_t k = 0; k < nd; ++k) src = src * a.shape[k] + ai[k];
    out.v[flat] = a.v[src];
  });
}

// torch.take: int64 positions only, in [-numel, numel) (negative ones wrap), into a read as 1-D.
void run_take(Ctx& x) {
  const HostArray &a = x.in[0], &index = x.in[1];
  if (index.dtype != tl::kInt64) throw Raise{"index dtype"};
  const int64_t n = static_cast<int64_t>(a.v.size());
  for (const V& v : index.v)
    if (v.i < -n || v.i >= n) throw Raise{"index out of range"};
  HostArray& out = x.res.out;
  out = {a.dtype, index.shape, std::vector<V>(index.v.size())};
  for (size_t i = 0; i < index.v.size(); ++i)
    out.v[i] = a.v[index.v[i].i < 0 ? index.v[i].i + n : index.v[i].i];
}

void run_gather(Ctx& x) {
  const HostArray &a = x.in[0], &index = x.in[1];
  const int64_t nd = static_cast<int64_t>(a.shape.size());
  auto w = wrap(*x.c.dim, nd);
  if (!w) throw Raise{"dim out of range"};
  if (index.dtype == tl::kInt32 && x.known.gather_int32) {
    x.res.skip = true;
    return;
  }
  if (index.dtype != tl::kInt64 && index.dtype != tl::kInt32) throw Raise{"index dtype"};
  if (static_cast<int64_t>(index.shape.size()) != nd) throw Raise{"index rank"};
  for (int64_t k = 0; k < nd; ++k)
    if (k != *w && index.shape[k] > a.shape[k]) throw Raise{"index larger than input"};
  for (const V& v : index.v)
    if (v.i < 0 || v.i >= a.shape[*w]) throw Raise{"index out of range"};
  HostArray& out = x.res.out;
  out = {a.dtype, index.shape, std::vector<V>(index.v.size())};
  for_each_index(index.shape, [&](int64_t flat, const Dims& idx) {
    Dims ai = idx;
    ai[*w] = index.v[flat].i;
    int64_t src = 0;
    for (int64_t k = 0; k < nd; ++k) src = src * a.shape[k] + ai[k];
    out.v[flat] = a.v[src];
  });
}

void run_masked_select(Ctx& x) {
  const HostArray &a = x.in[0], &mask = x.in[1];
  if (mask.dtype != tl::kBool) throw Raise{"mask must be bool"};
  Dims shape = broadcast({a.shape, mask.shape});
  HostArray& out = x.res.out;
  out = {a.dtype, {0}, {}};
  for (int64_t i = 0; i < numel_of(shape); ++i)
    if (element_at(mask, i, shape).i) out.v.push_back(element_at(a, i, shape));
  out.shape = {static_cast<int64_t>(out.v.size())};
}

using tl_test::unit_roundoff;  // 0 for the exact dtypes: their sums must match exactly

// scatter_add (self[p with dim = index[p]] += src[p] over index's positions) and index_add
// (self.select(dim, index[i]) += source.select(dim, i)), with torch's checks; 0-dim tensors act
// as [1]. Repeated indices fold in; float sums are held to a tolerance for the order they fold in.
void run_scatter_add(Ctx& x) {
  const HostArray &a = x.in[0], &index = x.in[1], &src = x.in[2];
  const bool index_add = x.c.op == Op::IndexAdd;
  const int64_t nd = static_cast<int64_t>(a.shape.size());
  auto w = wrap(*x.c.dim, nd);
  if (!w) throw Raise{"dim out of range"};
  const bool int_index = index.dtype == tl::kInt32 || index.dtype == tl::kInt64;
  const auto one_d = [](const Dims& s) { return s.empty() ? Dims{1} : s; };
  const Dims as = one_d(a.shape), is = one_d(index.shape), ss = one_d(src.shape);
  if (index_add) {
    if (index.shape.size() > 1) throw Raise{"index of more than one dim"};
    if (!int_index) throw Raise{"index dtype"};
    if (src.dtype != a.dtype) throw Raise{"source dtype"};
    const int64_t sd = static_cast<int64_t>(src.shape.size());
    if (*w != 0 && *w >= sd) throw Raise{"dim beyond source's dims"};
    if (static_cast<int64_t>(index.v.size()) != (sd == 0 ? 1 : src.shape[*w]))
      throw Raise{"index count differs from source.size(dim)"};
    Dims sa = a.shape, sb = src.shape;
    if (nd && sd) {
      sa.erase(sa.begin() + *w);
      sb.erase(sb.begin() + *w);
    }
    if (sa != sb) throw Raise{"source shape differs from self's off dim"};
  } else {
    if (!index.v.empty() && !int_index) throw Raise{"index dtype"};
    if (src.dtype != a.dtype) throw Raise{"src dtype"};
    if (!index.v.empty()) {
      if (is.size() != as.size() || ss.size() != is.size()) throw Raise{"ranks differ"};
      for (size_t k = 0; k < is.size(); ++k)
        if ((static_cast<int64_t>(k) != *w && is[k] > as[k]) || is[k] > ss[k])
          throw Raise{"index larger than self or src"};
    }
  }
  for (const V& v : index.v)
    if (v.i < 0 || v.i >= as[*w]) throw Raise{"index out of range"};
  const DType d = a.dtype;
  HostArray& out = x.res.out;
  out = a;
  std::vector<double> mag(out.v.size(), 0);
  std::vector<int64_t> count(out.v.size(), 1);
  for (size_t k = 0; k < out.v.size(); ++k) mag[k] = std::fabs(out.v[k].f);
  // Every (source position, target position) pair, in row-major order of the positions.
  const Dims& walk = index_add ? ss : is;
  for_each_index(walk, [&](int64_t flat, const Dims& p) {
    Dims t = p;
    t[*w] = index.v[index_add ? p[*w] : flat].i;
    int64_t to = 0, from = 0;
    for (size_t k = 0; k < t.size(); ++k) to = to * as[k] + t[k];
    for (size_t k = 0; k < p.size(); ++k) from = from * ss[k] + p[k];
    const V v = src.v[from];
    V& o = out.v[to];
    if (is_float(d)) {
      o.f += v.f;
      mag[to] += std::fabs(v.f);
      ++count[to];
    } else if (d == tl::kBool) {
      o.i = o.i || v.i;
    } else {
      o.i = wrap_add(o.i, v.i);
    }
  });
  for (V& v : out.v) v = finish(v, d);
  if (is_float(d)) {
    x.res.atol.assign(out.v.size(), 0);
    for (size_t k = 0; k < out.v.size(); ++k)
      x.res.atol[k] = 2 * unit_roundoff(d) * static_cast<double>(count[k]) * mag[k] + 1e-30;
  }
}

// masked_scatter: self and the bool mask broadcast together; the true elements, in row-major
// order, take source's values (in its row-major order); too few of them is an error.
void run_masked_scatter(Ctx& x) {
  const HostArray &a = x.in[0], &mask = x.in[1], &src = x.in[2];
  if (mask.dtype != tl::kBool) throw Raise{"mask must be bool"};
  if (src.dtype != a.dtype) throw Raise{"source dtype"};
  const Dims shape = broadcast({a.shape, mask.shape});
  const int64_t n = numel_of(shape);
  int64_t trues = 0;
  for (int64_t i = 0; i < n; ++i) trues += element_at(mask, i, shape).i != 0;
  if (trues > static_cast<int64_t>(src.v.size())) throw Raise{"source has too few elements"};
  HostArray& out = x.res.out;
  out = {a.dtype, shape, std::vector<V>(n)};
  for (int64_t i = 0, next = 0; i < n; ++i)
    out.v[i] = element_at(mask, i, shape).i ? src.v[next++] : element_at(a, i, shape);
}

// Would converting `a` to `to` hit the float -> int out-of-range rule?
bool hits_float_to_int(const HostArray& a, DType to) {
  if (!is_float(a.dtype) || is_float(to) || to == tl::kBool) return false;
  for (const V& v : a.v)
    if (float_out_of_int_range(v.f, to)) return true;
  return false;
}

// torch's computeStride: the strides of a view of (shape, strides) as `target`, if one exists.
std::optional<Dims> view_strides(const Dims& shape, const Dims& strides, const Dims& target) {
  Dims ns(target.size());
  if (shape.empty()) return Dims(target.size(), 1);
  const int64_t numel = numel_of(shape);
  if (numel == 0 && shape == target) return strides;
  if (numel == 0) return contiguous_strides_of(target);
  int64_t view_d = static_cast<int64_t>(target.size()) - 1;
  int64_t chunk = strides.back(), tensor_numel = 1, view_numel = 1;
  for (int64_t td = static_cast<int64_t>(shape.size()) - 1; td >= 0; --td) {
    tensor_numel *= shape[td];
    if (td == 0 || (shape[td - 1] != 1 && strides[td - 1] != tensor_numel * chunk)) {
      while (view_d >= 0 && (view_numel < tensor_numel || target[view_d] == 1)) {
        ns[view_d] = view_numel * chunk;
        view_numel *= target[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (td > 0) {
        chunk = strides[td - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return ns;
}

void run_reshape(Ctx& x) {
  const HostArray& a = x.in[0];
  if (x.known.zero_d_view && (a.shape.empty() || x.c.dims.empty())) {
    x.res.skip = true;
    return;
  }
  Dims target = x.c.dims;
  int64_t infer = -1, known_numel = 1;
  for (size_t k = 0; k < target.size(); ++k) {
    if (target[k] == -1) {
      if (infer >= 0) throw Raise{"two inferred dims"};
      infer = static_cast<int64_t>(k);
    } else if (target[k] < 0) {
      throw Raise{"negative size"};
    } else {
      known_numel *= target[k];
    }
  }
  const int64_t numel = numel_of(a.shape);
  if (infer >= 0) {
    if (known_numel == 0 || numel % known_numel != 0) throw Raise{"cannot infer the -1"};
    target[infer] = numel / known_numel;
  }
  if (numel_of(target) != numel) throw Raise{"numel differs"};
  if (x.c.op == Op::View && !view_strides(x.geom[0].shape, x.geom[0].strides, target))
    throw Raise{"view of incompatible strides"};
  x.res.out = {a.dtype, target, a.v};
}

// torch's checked conversion of a fill value (fill_, masked_fill): an integer dtype takes a value
// in its range, except that an unsigned dtype takes integers down to -max (they wrap) and refuses
// every negative float; float32 and the half types refuse a finite float that rounds to infinity.
void check_fill_value(const ScalarArg& s, DType d) {
  if (is_int(d)) {
    const double lo = static_cast<double>(int_lo(d)), hi = static_cast<double>(int_hi(d));
    const bool u8 = d == tl::kUInt8;
    const bool out = s.kind == DTypeKind::Floating
                         ? (float_out_of_int_range(s.v.f, d) ||
                            (d != tl::kInt32 && d != tl::kInt64 && (s.v.f < lo || s.v.f > hi)))
                     : s.kind == DTypeKind::Integer
                         ? (u8 ? (s.v.i > int_hi(d) || s.v.i < -int_hi(d))
                               : (s.v.i < int_lo(d) || s.v.i > int_hi(d)))
                         : false;
    if (out) throw Raise{"fill value out of the dtype's range"};
  }
  if ((d == tl::kFloat32 || is_half(d)) && s.kind == DTypeKind::Floating && std::isfinite(s.v.f) &&
      std::isinf(round_float(s.v.f, d)))
    throw Raise{"fill value out of float32's range"};
}

// copy_/fill_: the destination's base storage after writing through its view.
void run_write(Ctx& x) {
  const Input& dst = x.c.inputs[0];
  const Geom& g = x.geom[0];
  for (size_t k = 0; k < g.shape.size(); ++k)
    if (g.strides[k] == 0 && g.shape[k] > 1) throw Raise{"write into a broadcast view"};
  std::vector<V> base = dst.values;
  HostArray src;
  if (x.c.op == Op::Copy) {
    src = x.in[1];
    if (src.shape.size() > g.shape.size()) throw Raise{"source has more dims"};
    for (size_t k = 0; k < src.shape.size(); ++k) {
      const int64_t want = g.shape[g.shape.size() - src.shape.size() + k];
      if (src.shape[k] != want && src.shape[k] != 1) throw Raise{"source does not broadcast"};
    }
    if (x.known.float_to_int && hits_float_to_int(src, dst.dtype)) {
      x.res.skip = true;
      return;
    }
  } else {
    const ScalarArg& s = x.c.scalars[0];
    src.dtype = s.kind == DTypeKind::Floating ? tl::kFloat64
                : s.kind == DTypeKind::Bool   ? tl::kBool
                                              : tl::kInt64;
    // Not `src.v = {s.v}`: GCC 13's -Warray-bounds misreads that initializer-list copy at -O2
    // with the sanitizers (the GPU machine's compiler).
    src.v.assign(1, s.v);
    check_fill_value(s, dst.dtype);
  }
  for_each_index(g.shape, [&](int64_t flat, const Dims& idx) {
    const V v = element_at(src, flat, g.shape);
    base[offset_of(g, idx)] = cast_value(v, src.dtype, dst.dtype);
  });
  x.res.out = {dst.dtype, dst.base_shape, base};
}

// lerp: start, end and a tensor weight of one floating dtype (torch refuses any other), broadcast
// together. A number weight enters in torch's opmath type (float for float32 and the half types,
// double for float64), not rounded to the dtype. torch's two formulas, exact at weights 0 and 1:
// start + w (end - start) for |w| < 0.5, else end - (end - start)(1 - w); here in double, rounded
// once to the dtype.
void run_lerp(Ctx& x) {
  const HostArray &start = x.in[0], &end = x.in[1];
  const bool tensor_weight = x.c.form == Form::TT;
  const DType d = start.dtype;
  if (!is_float(d)) throw Raise{"lerp of a non-floating dtype"};
  if (end.dtype != d || (tensor_weight && x.in[2].dtype != d))
    throw Raise{"lerp operands of different dtypes"};
  std::vector<Dims> shapes{start.shape, end.shape};
  if (tensor_weight) shapes.push_back(x.in[2].shape);
  const Dims shape = broadcast(shapes);
  const DType opmath = d == tl::kFloat64 ? tl::kFloat64 : tl::kFloat32;
  const double number_weight =
      tensor_weight ? 0 : round_float(cast_scalar(x.c.scalars[0], tl::kFloat64).f, opmath);
  const int64_t n = numel_of(shape);
  HostArray& out = x.res.out;
  out = {d, shape, std::vector<V>(n)};
  x.res.atol.assign(n, 0);
  for (int64_t i = 0; i < n; ++i) {
    const double a = element_at(start, i, shape).f, b = element_at(end, i, shape).f;
    const double w = tensor_weight ? element_at(x.in[2], i, shape).f : number_weight;
    const bool small = std::fabs(w) < 0.5;
    const double coeff = small ? w : 1 - w;
    out.v[i].f = round_float(small ? a + w * (b - a) : b - (b - a) * coeff, d);
    // The kernels round end - start (and w - 1) in the opmath type before the fused
    // multiply-add: a few of its units of the term; the half types' smallest step besides.
    x.res.atol[i] =
        4 * unit_roundoff(opmath) * std::fabs(coeff * (b - a)) + (is_half(d) ? 0x1.0p-24 : 1e-300);
  }
  x.res.rtol = float_tol(d, 2.4e-7, 4.5e-16);
}

// isclose as torch composes it: a == b, or both NaN with equal_nan, or |a - b| finite and <= atol
// + |rtol * b|, each intermediate rounded to the tensor's dtype with rtol and atol in its opmath
// type. Bool and the integers compute as float32 (torch converts them to the default dtype, so
// differences do not wrap), after an exact equality test in their own dtype.
void run_isclose(Ctx& x) {
  const HostArray &a = x.in[0], &b = x.in[1];
  const double rtol = x.c.rtol, atol = x.c.atol;
  if (a.dtype != b.dtype) throw Raise{"isclose of two dtypes"};
  if (!(rtol >= 0) || !(atol >= 0)) throw Raise{"a negative tolerance"};
  const Dims shape = broadcast({a.shape, b.shape});
  const DType d = a.dtype;
  const int64_t n = numel_of(shape);
  HostArray& out = x.res.out;
  out = {tl::kBool, shape, std::vector<V>(n)};
  for (int64_t i = 0; i < n; ++i) {
    const V va = element_at(a, i, shape), vb = element_at(b, i, shape);
    bool close;
    if (is_int(d)) {
      close = va.i == vb.i;
      if (!close && (rtol != 0 || atol != 0)) {
        const DType f = tl::kFloat32;
        const double fa = cast_value(va, d, f).f, fb = cast_value(vb, d, f).f;
        const double actual = std::fabs(round_float(fa - fb, f));
        const double allowed = round_float(
            round_float(atol, f) + std::fabs(round_float(round_float(rtol, f) * fb, f)), f);
        close = std::isfinite(actual) && actual <= allowed;
      }
    } else {
      const DType t = d == tl::kBool ? tl::kFloat32 : d;
      const DType opmath = t == tl::kFloat64 ? tl::kFloat64 : tl::kFloat32;
      const double fa = d == tl::kBool ? (va.i != 0) : va.f;
      const double fb = d == tl::kBool ? (vb.i != 0) : vb.f;
      close = fa == fb || (x.c.equal_nan && std::isnan(fa) && std::isnan(fb));
      if (!close && (rtol != 0 || atol != 0)) {
        const double actual = std::fabs(round_float(fa - fb, t));
        const double allowed = round_float(
            round_float(atol, opmath) + std::fabs(round_float(round_float(rtol, opmath) * fb, t)),
            t);
        close = std::isfinite(actual) && actual <= allowed;
      }
    }
    out.v[i].i = close;
  }
}

// The largest finite value of a floating dtype.
double float_max(DType d) {
  switch (d) {
    case tl::kFloat16:
      return 65504.0;
    case tl::kBFloat16:
      return 0x1.fep127;
    case tl::kFloat32:
      return 0x1.fffffep127;
    default:
      return std::numeric_limits<double>::max();
  }
}

// nan_to_num: NaN, +inf and -inf replaced (defaults 0, the largest and the lowest finite value),
// each replacement converted to the dtype (beyond its range: infinity); integer and bool tensors
// come back as a copy.
void run_nan_to_num(Ctx& x) {
  const HostArray& a = x.in[0];
  x.res.out = a;
  if (!is_float(a.dtype)) return;
  const DType d = a.dtype;
  const double nan = round_float(x.c.nan.value_or(0), d);
  const double pos = x.c.posinf ? round_float(*x.c.posinf, d) : float_max(d);
  const double neg = x.c.neginf ? round_float(*x.c.neginf, d) : -float_max(d);
  for (V& v : x.res.out.v)
    if (std::isnan(v.f))
      v.f = nan;
    else if (std::isinf(v.f))
      v.f = v.f > 0 ? pos : neg;
}

// masked_fill: a and the bool mask broadcast together; the value (a number, or a 0-dim tensor
// read as a number of its kind) goes through torch's checked conversion to a's dtype.
void run_masked_fill(Ctx& x) {
  const HostArray &a = x.in[0], &mask = x.in[1];
  if (mask.dtype != tl::kBool) throw Raise{"mask must be bool"};
  ScalarArg value;
  if (x.c.form == Form::TT) {
    const HostArray& t = x.in[2];
    if (!t.shape.empty()) throw Raise{"value tensor of more than 0 dims"};
    value.kind = kind_of(t.dtype);
    value.v = t.v[0];  // a bool's byte already read as 0 or 1
  } else {
    value = x.c.scalars[0];
  }
  const Dims shape = broadcast({a.shape, mask.shape});
  try {
    check_fill_value(value, a.dtype);
  } catch (const Raise&) {
    if (!x.known.masked_fill_range) throw;
    x.res.skip = true;
    return;
  }
  const DType from = value.kind == DTypeKind::Floating ? tl::kFloat64
                     : value.kind == DTypeKind::Bool   ? tl::kBool
                                                       : tl::kInt64;
  const V fill = cast_value(value.v, from, a.dtype);
  const int64_t n = numel_of(shape);
  HostArray& out = x.res.out;
  out = {a.dtype, shape, std::vector<V>(n)};
  for (int64_t i = 0; i < n; ++i)
    out.v[i] = element_at(mask, i, shape).i ? fill : element_at(a, i, shape);
}

// The row-major position of `idx` in `shape`.
int64_t flat_of(const Dims& idx, const Dims& shape) {
  int64_t f = 0;
  for (size_t k = 0; k < shape.size(); ++k) f = f * shape[k] + idx[k];
  return f;
}

// flip: the listed dims reversed (each at most once; a 0-dim tensor takes 0 and -1).
void run_flip(Ctx& x) {
  const HostArray& a = x.in[0];
  const int64_t nd = static_cast<int64_t>(a.shape.size());
  std::vector<bool> flipped(std::max<int64_t>(nd, 1), false);
  for (int64_t dim : x.c.dims) {
    const auto w = wrap(dim, nd);
    if (!w) throw Raise{"dim out of range"};
    if (flipped[*w]) throw Raise{"dim listed twice"};
    flipped[*w] = true;
  }
  HostArray& out = x.res.out;
  out = {a.dtype, a.shape, std::vector<V>(a.v.size())};
  for_each_index(a.shape, [&](int64_t flat, const Dims& idx) {
    Dims src = idx;
    for (int64_t k = 0; k < nd; ++k)
      if (flipped[k]) src[k] = a.shape[k] - 1 - idx[k];
    out.v[flat] = a.v[flat_of(src, a.shape)];
  });
}

// roll: without dims one shift of the flattened tensor; with dims one shift per dim, applied in
// turn (a dim listed twice rolls twice). torch reads the size of each dim, so a 0-dim tensor with
// dims raises; it skips that check for an empty tensor, which we do not (a dim out of range
// raises whatever the size).
void run_roll(Ctx& x) {
  const HostArray& a = x.in[0];
  const Dims &shifts = x.c.shifts, &dims = x.c.dims;
  const int64_t nd = static_cast<int64_t>(a.shape.size());
  if (shifts.empty()) throw Raise{"shifts required"};
  HostArray& out = x.res.out;
  out = a;
  const auto pos_mod = [](int64_t v, int64_t m) { return ((v % m) + m) % m; };
  if (dims.empty()) {
    if (shifts.size() != 1) throw Raise{"shifts and dims must align"};
    const int64_t n = static_cast<int64_t>(a.v.size());
    for (int64_t i = 0; i < n; ++i) out.v[pos_mod(i + shifts[0], n)] = a.v[i];
    return;
  }
  if (shifts.size() != dims.size()) throw Raise{"shifts and dims must align"};
  if (nd == 0) throw Raise{"roll of a 0-dim tensor along a dim"};
  for (size_t k = 0; k < dims.size(); ++k) {
    const auto w = wrap(dims[k], nd);
    if (!w) throw Raise{"dim out of range"};
    const HostArray cur = out;
    const int64_t size = a.shape[*w];
    for_each_index(a.shape, [&](int64_t flat, const Dims& idx) {
      Dims to = idx;
      to[*w] = pos_mod(idx[*w] + shifts[k], size);
      out.v[flat_of(to, a.shape)] = cur.v[flat];
    });
  }
}

// tril / triu: the elements of the last two dims with col - row <= k (tril) or >= k (triu), zero
// elsewhere; fewer than two dims raise.
void run_triangle(Ctx& x) {
  const HostArray& a = x.in[0];
  const int64_t nd = static_cast<int64_t>(a.shape.size());
  if (nd < 2) throw Raise{"tril/triu of fewer than 2 dims"};
  const bool lower = x.c.op == Op::Tril;
  HostArray& out = x.res.out;
  out = {a.dtype, a.shape, std::vector<V>(a.v.size())};
  for_each_index(a.shape, [&](int64_t flat, const Dims& idx) {
    const int64_t off = idx[nd - 1] - idx[nd - 2];
    if (lower ? off <= x.c.k : off >= x.c.k) out.v[flat] = a.v[flat];
  });
}

// ---- conv2d and the 2-D pools, with PyTorch 2.15's CPU rules ----

// A pair argument as torch's _pair: one value for both dims or (H, W).
std::array<int64_t, 2> pair_of(const Dims& v) { return {v[0], v.size() > 1 ? v[1] : v[0]}; }

int64_t floor_div(int64_t a, int64_t b) { return a / b - (a % b != 0 && (a < 0) != (b < 0)); }

// torch's pooling_output_shape (conv2d's size without ceil_mode): the windows that fit the padded
// input; with ceil_mode one more where a partial window is left, as long as it starts inside the
// input or its left padding.
int64_t window_count(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode) {
  int64_t out = floor_div(in + 2 * p - d * (k - 1) - 1 + (ceil_mode ? s - 1 : 0), s) + 1;
  if (ceil_mode && (out - 1) * s >= in + p) --out;
  return out;
}

// An input seen as `planes` of its last two dims, H x W (every leading dim, in order).
struct Planes {
  int64_t planes, h, w;
  int64_t at(int64_t plane, int64_t r, int64_t q) const { return (plane * h + r) * w + q; }
};
Planes planes_of(const HostArray& a) {
  const int64_t h = a.shape[a.shape.size() - 2], w = a.shape.back();
  return {h * w == 0 ? 0 : numel_of(a.shape) / (h * w), h, w};
}
// The leading dims of `in` (all but the last `keep`), then the given ones.
Dims with_tail(const Dims& in, size_t keep, const Dims& tail) {
  Dims s(in.begin(), in.end() - static_cast<std::ptrdiff_t>(keep));
  s.insert(s.end(), tail.begin(), tail.end());
  return s;
}

// The accumulation of one output element: floating sums in double with the sum of |terms| (their
// rounding bound), integer sums wrapping at 64 bits (then at the dtype, as torch's).
struct Acc {
  V sum;
  double mag = 0;
  void add(const V& a, DType d) {
    if (is_float(d)) {
      sum.f += a.f;
      mag += std::fabs(a.f);
    } else {
      sum.i = wrap_add(sum.i, a.i);
    }
  }
};
V product(const V& a, const V& b, DType d) {
  V r;
  if (is_float(d))
    r.f = a.f * b.f;
  else
    r.i = wrap_mul(a.i, b.i);
  return r;
}

// An integer input the library refuses and torch's CPU kernels compute (Known::window_int): not
// checked while the family is skipped.
bool skip_window_int(Ctx& x, DType d) {
  if (is_float(d) || !x.known.window_int) return false;
  x.res.skip = true;
  return true;
}

// conv2d: the cross-correlation of input [N, C, H, W] (or [C, H, W]) with weight [O, C / groups,
// kH, kW], plus bias [O]. torch skips some checks for an empty batch (with N = 0 a bool input, a
// weight of another dtype, a dilation of 0 or a dilated integer input other than int64 give an
// empty result); we do not.
void run_conv2d(Ctx& x) {
  const Case& c = x.c;
  const HostArray &a = x.in[0], &wt = x.in[1];
  const HostArray* bias = x.in.size() > 2 ? &x.in[2] : nullptr;
  if (a.shape.size() != 3 && a.shape.size() != 4) throw Raise{"conv2d input not 3-D or 4-D"};
  if (wt.shape.size() != 4) throw Raise{"conv2d weight not 4-D"};
  if (c.groups < 1) throw Raise{"non-positive groups"};
  const auto s = pair_of(c.stride), p = pair_of(c.padding), d = pair_of(c.dilation);
  for (int i = 0; i < 2; ++i) {
    if (s[i] < 1) throw Raise{"non-positive stride"};
    if (p[i] < 0) throw Raise{"negative padding"};
    if (d[i] < 1) throw Raise{"non-positive dilation"};
  }
  const int64_t o = wt.shape[0], cg = wt.shape[1], kh = wt.shape[2], kw = wt.shape[3];
  const int64_t channels = a.shape[a.shape.size() - 3];
  if (kh < 1 || kw < 1) throw Raise{"kernel size 0"};
  if (o % c.groups != 0) throw Raise{"out channels not divisible by groups"};
  if (channels != cg * c.groups) throw Raise{"input channels do not match weight and groups"};
  if (bias && bias->shape != Dims{o}) throw Raise{"bias not of shape [out_channels]"};
  const Planes in = planes_of(a);
  if (in.h + 2 * p[0] < d[0] * (kh - 1) + 1 || in.w + 2 * p[1] < d[1] * (kw - 1) + 1)
    throw Raise{"kernel larger than the padded input"};
  const DType dt = a.dtype;
  if (dt == tl::kBool) throw Raise{"conv2d of bools"};
  if (wt.dtype != dt) throw Raise{"weight of another dtype"};
  if (bias && bias->dtype != dt) throw Raise{"bias of another dtype"};
  // torch's dilated kernel takes floats and int64 only
  if (!is_float(dt) && dt != tl::kInt64 && (d[0] > 1 || d[1] > 1))
    throw Raise{"dilated conv2d of narrow integers"};
  if (o == 0) {  // torch wants at least `groups` output channels (Known::conv_zero_out_channels)
    if (x.known.conv_zero_out_channels) {
      x.res.skip = true;
      return;
    }
    throw Raise{"weight of 0 output channels"};
  }
  if (skip_window_int(x, dt)) return;
  const int64_t oh = window_count(in.h, kh, s[0], p[0], d[0], false);
  const int64_t ow = window_count(in.w, kw, s[1], p[1], d[1], false);
  const int64_t n = a.shape.size() == 4 ? a.shape[0] : 1, og = o / c.groups;
  HostArray& out = x.res.out;
  out = {dt, with_tail(a.shape, 3, {o, oh, ow}), std::vector<V>(n * o * oh * ow)};
  x.res.atol.assign(out.v.size(), 0);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t oc = 0; oc < o; ++oc)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          Acc acc;
          if (bias) acc.add(bias->v[oc], dt);
          for (int64_t ic = 0; ic < cg; ++ic)
            for (int64_t u = 0; u < kh; ++u)
              for (int64_t v = 0; v < kw; ++v) {
                const int64_t r = i * s[0] - p[0] + u * d[0], q = j * s[1] - p[1] + v * d[1];
                if (r < 0 || r >= in.h || q < 0 || q >= in.w) continue;  // zero padding
                const int64_t plane = b * channels + oc / og * cg + ic;
                acc.add(
                    product(a.v[in.at(plane, r, q)], wt.v[((oc * cg + ic) * kh + u) * kw + v], dt),
                    dt);
              }
          const int64_t at = ((b * o + oc) * oh + i) * ow + j;
          out.v[at] = finish(acc.sum, dt);
          x.res.atol[at] = float_tol(dt, 4e-6, 1e-14) * acc.mag;
        }
}

// The pools' geometry, torch's pool2d_shape_check and pooling_output_shape: a 3-D or 4-D input
// with C, H and W non-empty; kernel, stride and dilation at least 1 (an empty stride is the
// kernel); padding from 0 to half the dilated kernel; at least one window per dim.
struct PoolGeom {
  std::array<int64_t, 2> k, s, p, d;
  int64_t oh = 0, ow = 0;
};
PoolGeom pool_geometry(const Case& c, const HostArray& a, const Dims& dilation) {
  const size_t nd = a.shape.size();
  if (nd != 3 && nd != 4) throw Raise{"pool input not 3-D or 4-D"};
  for (size_t i = nd - 3; i < nd; ++i)
    if (a.shape[i] == 0) throw Raise{"empty non-batch dim"};
  PoolGeom g{pair_of(c.kernel), pair_of(c.stride.empty() ? c.kernel : c.stride), pair_of(c.padding),
             pair_of(dilation)};
  for (int i = 0; i < 2; ++i) {
    if (g.k[i] < 1) throw Raise{"non-positive kernel size"};
    if (g.s[i] < 1) throw Raise{"non-positive stride"};
    if (g.d[i] < 1) throw Raise{"non-positive dilation"};
    if (g.p[i] < 0) throw Raise{"negative padding"};
    if (g.p[i] > ((g.k[i] - 1) * g.d[i] + 1) / 2) throw Raise{"padding over half the kernel"};
  }
  const Planes in = planes_of(a);
  g.oh = window_count(in.h, g.k[0], g.s[0], g.p[0], g.d[0], c.ceil_mode);
  g.ow = window_count(in.w, g.k[1], g.s[1], g.p[1], g.d[1], c.ceil_mode);
  if (g.oh < 1 || g.ow < 1) throw Raise{"pool output below 1"};
  return g;
}

// max_pool2d: the largest element of each window, padding as -inf (an integer dtype's minimum),
// NaN winning. torch's max_pool2d checks padding against half the kernel itself, not the dilated
// one (Known::max_pool_padding where the two differ).
void run_max_pool2d(Ctx& x) {
  const HostArray& a = x.in[0];
  const PoolGeom g = pool_geometry(x.c, a, x.c.dilation);
  const DType dt = a.dtype;
  if (dt == tl::kBool) throw Raise{"max_pool2d of bools"};
  if (g.p[0] > g.k[0] / 2 || g.p[1] > g.k[1] / 2) {
    if (x.known.max_pool_padding) {
      x.res.skip = true;
      return;
    }
    throw Raise{"padding over half the (undilated) kernel"};
  }
  if (skip_window_int(x, dt)) return;
  const Planes in = planes_of(a);
  HostArray& out = x.res.out;
  out = {dt, with_tail(a.shape, 2, {g.oh, g.ow}), std::vector<V>(in.planes * g.oh * g.ow)};
  for (int64_t pl = 0; pl < in.planes; ++pl)
    for (int64_t i = 0; i < g.oh; ++i)
      for (int64_t j = 0; j < g.ow; ++j) {
        V best;
        best.f = -kInf;
        best.i = int_lo(dt);
        for (int64_t u = 0; u < g.k[0]; ++u)
          for (int64_t v = 0; v < g.k[1]; ++v) {
            const int64_t r = i * g.s[0] - g.p[0] + u * g.d[0];
            const int64_t q = j * g.s[1] - g.p[1] + v * g.d[1];
            if (r < 0 || r >= in.h || q < 0 || q >= in.w) continue;
            const V e = a.v[in.at(pl, r, q)];
            if (!is_float(dt)) {
              best.i = std::max(best.i, e.i);
            } else if (!std::isnan(best.f) && (std::isnan(e.f) || e.f > best.f)) {
              best.f = e.f;
            }
          }
        out.v[(pl * g.oh + i) * g.ow + j] = best;
      }
}

// avg_pool2d: each window's sum over the input (zero padding) divided by divisor_override, by the
// window's size clipped to the padded input (count_include_pad) or by its elements inside the
// input, torch's divisors. torch's CPU kernel takes int64 (Known::window_int): the sum wraps and
// the division truncates.
void run_avg_pool2d(Ctx& x) {
  const Case& c = x.c;
  const HostArray& a = x.in[0];
  if (c.divisor_override == 0) throw Raise{"divisor_override of 0"};
  const PoolGeom g = pool_geometry(c, a, {1});
  const DType dt = a.dtype;
  if (!is_float(dt) && dt != tl::kInt64) throw Raise{"avg_pool2d of a dtype torch refuses"};
  if (skip_window_int(x, dt)) return;
  const Planes in = planes_of(a);
  HostArray& out = x.res.out;
  out = {dt, with_tail(a.shape, 2, {g.oh, g.ow}), std::vector<V>(in.planes * g.oh * g.ow)};
  x.res.atol.assign(out.v.size(), 0);
  for (int64_t pl = 0; pl < in.planes; ++pl)
    for (int64_t i = 0; i < g.oh; ++i)
      for (int64_t j = 0; j < g.ow; ++j) {
        const int64_t h0 = i * g.s[0] - g.p[0], w0 = j * g.s[1] - g.p[1];
        const int64_t h1 = std::min(h0 + g.k[0], in.h + g.p[0]);
        const int64_t w1 = std::min(w0 + g.k[1], in.w + g.p[1]);
        const int64_t r0 = std::max<int64_t>(h0, 0), r1 = std::min(h1, in.h);
        const int64_t q0 = std::max<int64_t>(w0, 0), q1 = std::min(w1, in.w);
        Acc acc;
        for (int64_t r = r0; r < r1; ++r)
          for (int64_t q = q0; q < q1; ++q) acc.add(a.v[in.at(pl, r, q)], dt);
        const int64_t divisor = c.divisor_override    ? *c.divisor_override
                                : c.count_include_pad ? (h1 - h0) * (w1 - w0)
                                                      : (r1 - r0) * (q1 - q0);
        const int64_t at = (pl * g.oh + i) * g.ow + j;
        V r;
        if (is_float(dt))
          r.f = acc.sum.f / static_cast<double>(divisor);
        else
          r.i = acc.sum.i / divisor;
        out.v[at] = finish(r, dt);
        x.res.atol[at] =
            float_tol(dt, 4e-6, 1e-14) * acc.mag / std::fabs(static_cast<double>(divisor));
      }
}

// adaptive_avg_pool2d: window i of n over a size-s dim covers [floor(i s / n), ceil((i + 1) s /
// n)). torch takes output sizes >= 0 and computes 1 x 1 as a mean over the last two dims (any
// input of 2 dims or more; a 2-D one only with output_size a number, Python refusing a list for
// it), both refused by the library (Known::adaptive_output). It skips its dtype check for an empty
// batch and checks only H and W for emptiness, which we do not. The library averages through two
// matmuls with 1 / count weights rounded to the dtype: a float16 result carries up to three
// roundings of the mean |x| (the weights, the first product, the second), so twice the sums'
// tolerance.
void run_adaptive_avg_pool2d(Ctx& x) {
  const HostArray& a = x.in[0];
  const Dims& os = x.c.output_size;
  const auto size = pair_of(os);
  const size_t nd = a.shape.size();
  if (size[0] < 0 || size[1] < 0) throw Raise{"negative output size"};
  const bool open =
      size[0] == 0 || size[1] == 0 || (size[0] == 1 && size[1] == 1 && nd != 3 && nd != 4);
  if (size[0] == 1 && size[1] == 1) {
    if (nd < 2 || (nd == 2 && os.size() == 2)) throw Raise{"mean over the last two dims of < 3-D"};
    if (!is_float(a.dtype)) throw Raise{"mean of a non-floating tensor"};
  } else {
    if (nd != 3 && nd != 4) throw Raise{"adaptive_avg_pool2d input not 3-D or 4-D"};
    for (size_t i = nd - 3; i < nd; ++i)  // torch: H and W (an empty C returns an empty result)
      if (a.shape[i] == 0) throw Raise{"empty non-batch dim"};
    if (!open && !is_float(a.dtype)) throw Raise{"adaptive_avg_pool2d of a non-floating tensor"};
  }
  if (open && x.known.adaptive_output) {
    x.res.skip = true;
    return;
  }
  const DType dt = a.dtype;
  const Planes in = planes_of(a);
  if (x.known.adaptive_nonfinite &&
      (in.h % std::max<int64_t>(size[0], 1) != 0 || in.w % std::max<int64_t>(size[1], 1) != 0))
    for (const V& v : a.v)
      if (is_float(dt) && !std::isfinite(v.f)) {
        x.res.skip = true;
        return;
      }
  HostArray& out = x.res.out;
  out = {dt, with_tail(a.shape, 2, {size[0], size[1]}),
         std::vector<V>(in.planes * size[0] * size[1])};
  x.res.atol.assign(out.v.size(), 0);
  for (int64_t pl = 0; pl < in.planes; ++pl)
    for (int64_t i = 0; i < size[0]; ++i)
      for (int64_t j = 0; j < size[1]; ++j) {
        const int64_t r0 = i * in.h / size[0], r1 = ((i + 1) * in.h + size[0] - 1) / size[0];
        const int64_t q0 = j * in.w / size[1], q1 = ((j + 1) * in.w + size[1] - 1) / size[1];
        Acc acc;
        for (int64_t r = r0; r < r1; ++r)
          for (int64_t q = q0; q < q1; ++q) acc.add(a.v[in.at(pl, r, q)], dt);
        const double count = static_cast<double>((r1 - r0) * (q1 - q0));
        const int64_t at = (pl * size[0] + i) * size[1] + j;
        out.v[at] = finish(V{0, acc.sum.f / count}, dt);
        x.res.atol[at] = 2 * float_tol(dt, 4e-6, 1e-14) * acc.mag / count;
      }
}

// ---- cross_entropy and nll_loss: PyTorch 2.15's formulas, the library's checks in its order ----

// torch's log_softmax of one row of class scores, x - max - log(sum(exp(x - max))): a NaN, a
// +inf, or -inf everywhere (max - max is NaN) make every element NaN. `err` gets each element's
// rounding bound in the library's compute type (eps), as the softmax family's; 0 where the
// element is not finite (then exact).
void log_softmax_row(const std::vector<double>& row, double eps, std::vector<double>& lp,
                     std::vector<double>& err) {
  lp.assign(row.size(), kNaN);
  err.assign(row.size(), 0);
  double m = -kInf;
  for (const double v : row) {
    if (std::isnan(v)) return;
    m = std::max(m, v);
  }
  if (std::isinf(m)) return;
  Compensated s;
  for (const double v : row) s.add(std::exp(v - m));
  const double ls = std::log(s.value());
  for (size_t k = 0; k < row.size(); ++k) {
    lp[k] = row[k] - m - ls;
    if (std::isfinite(lp[k])) err[k] = 8 * eps * (1 + std::fabs(row[k]) + std::fabs(m) + ls);
  }
}

// cross_entropy(input, target, weight, ignore_index, reduction, label_smoothing) and nll_loss
// (the same without label_smoothing; input holds log-probabilities, any values) over input [C],
// [N, C] or [N, C, d...], classes along dim 1 (dim 0 for [C]). Per element of the target:
// - class index t (int64): ignored when t is the ignore_index (loss 0, weight 0; NaN in the row
//   does not reach it). Else nll = -w[t] * log_softmax(x)[t] (nll_loss: -w[t] * x[t]), and with
//   label_smoothing e > 0: (1 - e) * nll + e / C * -sum_c w_c * log_softmax(x)_c (torch combines
//   the two reduced parts; the sum of every element's combination is the same, 0 * inf included).
//   mean divides by the summed w[t] of the elements kept (NaN when that is 0: nothing kept, N = 0).
// - class probabilities p (cross_entropy, a floating target of input's shape):
//   -sum_c w_c * p'_c * log_softmax(x)_c with p' = p * (1 - e) + e / C (0 * -inf is NaN); mean
//   divides by the number of elements (N * d...; NaN for none).
// The library computes the class-index losses in float (double for float64) and rounds once;
// its probability losses and nll_loss through ops in the dtype (a few roundings of each term):
// the tolerances are the log-probabilities' (the softmax family's) plus a few roundings of the
// terms' magnitudes (the sums'), and for sums over the classes the accumulator's roundings, which
// grow with C (double for float32 / float64, float for the half types).
void run_loss(Ctx& x) {
  const Case& c = x.c;
  const bool ce = c.op == Op::CrossEntropy;
  x.res.error_prefix = std::string("[tl::nn::functional::") + op_name(c.op) + "]";
  const HostArray &a = x.in[0], &t = x.in[1];
  const HostArray* w = x.in.size() > 2 ? &x.in[2] : nullptr;
  // The checks in loss.cpp's order (for raise or not, the order matters only for the error's type
  // and message): the input's dtype, label_smoothing, the input's rank, then the target's.
  if (!is_float(a.dtype)) throw Raise{"input not floating"};
  const double e = ce ? c.label_smoothing : 0;
  // torch checks label_smoothing <= 1 only when it is > 0 (a negative one acts as 0): README.
  if (!(e >= 0 && e <= 1)) throw Raise{"label_smoothing outside [0, 1]"};
  if (a.shape.empty()) throw Raise{"0-dim input"};
  const size_t cdim = a.shape.size() == 1 ? 0 : 1;
  const int64_t classes = a.shape[cdim];
  const bool probs = ce && is_float(t.dtype);
  auto check_weight = [&] {
    if (!w) return;
    if (w->dtype != a.dtype) throw Raise{"weight of another dtype"};
    if (w->shape != Dims{classes}) throw Raise{"weight not of shape [C]"};
  };
  if (probs) {
    if (t.shape != a.shape) throw Raise{"class probabilities not of input's shape"};
    // (torch promotes; the library refuses, and the generator keeps input's dtype)
    if (t.dtype != a.dtype) throw Raise{"class probabilities of another dtype"};
    check_weight();
    if (c.ignore_index >= 0) {  // torch: not supported for floating point targets
      if (x.known.cross_entropy_prob_ignore) {
        x.res.skip = true;
        return;
      }
      throw Raise{"ignore_index >= 0 with class probabilities"};
    }
  } else {
    if (t.dtype != tl::kInt64) throw Raise{"class indices not int64"};
    Dims want = a.shape;
    want.erase(want.begin() + static_cast<std::ptrdiff_t>(cdim));
    if (t.shape != want) throw Raise{"target not of input's shape without the class dim"};
    check_weight();
    for (const V& v : t.v)
      if (v.i != c.ignore_index && (v.i < 0 || v.i >= classes)) {
        x.res.index_error = true;
        throw Raise{"target class out of range"};
      }
  }
  const int64_t outer = cdim == 0 ? 1 : a.shape[0];
  int64_t inner = 1;
  for (size_t k = cdim + 1; k < a.shape.size(); ++k) inner *= a.shape[k];
  const int64_t rows = outer * inner;
  const DType od = a.dtype;
  const double eps = od == tl::kFloat64 ? 1e-15 : 1.2e-7;      // float or double compute
  const double per_term = 4 * float_tol(od, 1.2e-7, 2.3e-16);  // a few roundings in the dtype
  // A sum over the classes: those roundings and the accumulator's (double, float for the half
  // types), which grow with C.
  const double class_sum =
      per_term + (is_half(od) ? 6e-8 : 1.1e-16) * static_cast<double>(classes) / 4;
  auto wc = [&](int64_t k) { return w ? w->v[k].f : 1.0; };
  // Per element: the loss, its log-probabilities' rounding bound, its terms' (the magnitudes
  // times their roundings).
  std::vector<double> loss(rows, 0), err(rows, 0), mag(rows, 0), row(classes), lp, lerr;
  double total_w = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t r = o * inner + i;
      auto at = [&](int64_t k) { return (o * classes + k) * inner + i; };
      for (int64_t k = 0; k < classes; ++k) row[k] = a.v[at(k)].f;
      if (probs) {
        log_softmax_row(row, eps, lp, lerr);
        Compensated s;
        for (int64_t k = 0; k < classes; ++k) {
          const double p = e > 0 ? t.v[at(k)].f * (1 - e) + e / classes : t.v[at(k)].f;
          const double term = lp[k] * p * wc(k);
          s.add(term);
          mag[r] += class_sum * std::fabs(term);
          err[r] += std::fabs(p * wc(k)) * lerr[k];
        }
        loss[r] = -s.value();
        total_w += 1;
        continue;
      }
      const int64_t target = t.v[r].i;
      if (target == c.ignore_index) {
        // The library's nll_loss reads class 0 of an ignored element and multiplies by 0
        // (Known::nll_ignored_nonfinite).
        if (!ce && classes > 0 && !std::isfinite(row[0]) && x.known.nll_ignored_nonfinite) {
          x.res.skip = true;
          return;
        }
        continue;
      }
      const double wt = wc(target);
      total_w += wt;
      if (!ce) {
        loss[r] = -wt * row[target];
        mag[r] = per_term * std::fabs(loss[r]);
        continue;
      }
      log_softmax_row(row, eps, lp, lerr);
      double l = -wt * lp[target];
      mag[r] = per_term * std::fabs(l);
      err[r] = wt * lerr[target];
      if (e > 0) {
        Compensated smooth;
        double smooth_mag = 0, smooth_err = 0;
        for (int64_t k = 0; k < classes; ++k) {
          smooth.add(-wc(k) * lp[k]);
          smooth_mag += class_sum * std::fabs(wc(k) * lp[k]);
          smooth_err += wc(k) * lerr[k];
        }
        const double share = e / static_cast<double>(classes);
        l = (1 - e) * l + share * smooth.value();
        mag[r] = (1 - e) * mag[r] + share * smooth_mag;
        err[r] = (1 - e) * err[r] + share * smooth_err;
      }
      loss[r] = l;
    }
  // An element's bound: its log-probabilities' rounding and a few roundings of its terms; 0 where
  // it is not finite (compared exactly).
  auto bound = [](double b) { return std::isfinite(b) ? b : 0.0; };
  HostArray& out = x.res.out;
  Dims oshape = a.shape;
  oshape.erase(oshape.begin() + static_cast<std::ptrdiff_t>(cdim));
  x.res.rtol = float_tol(od, 8 * eps, 8 * eps);
  if (c.reduction == tl::nn::Reduction::None) {
    out = {od, oshape, std::vector<V>(rows)};
    x.res.atol.assign(rows, 0);
    for (int64_t r = 0; r < rows; ++r) {
      out.v[r] = finish(V{0, loss[r]}, od);
      x.res.atol[r] = bound(err[r] + mag[r]);
    }
    return;
  }
  // sum / mean: the sum's own rounding on top (a few roundings of each element), and for mean
  // that of the summed weights (bfloat16's nll_loss sums them in bfloat16) and of the division.
  Compensated sum;
  double b = 0;
  for (int64_t r = 0; r < rows; ++r) {
    sum.add(loss[r]);
    b += err[r] + mag[r] + per_term * std::fabs(loss[r]);
  }
  double v = sum.value();
  if (c.reduction == tl::nn::Reduction::Mean) {
    const double denom = probs ? static_cast<double>(rows) : total_w;
    v /= denom;  // 0 / 0 is NaN, torch's mean of nothing
    b /= denom;
    x.res.rtol *= 3;
  }
  out = {od, {}, {finish(V{0, v}, od)}};
  x.res.atol = {bound(b)};
}

// torch.can_cast: no floating -> integral and no non-bool -> bool.
bool can_cast(DType from, DType to) {
  if (is_float(from)) return is_float(to);
  if (from != tl::kBool) return to != tl::kBool;
  return true;
}

// self op= other: computed in the promoted dtype, cast back to self's dtype, written through the
// view.
void run_inplace(Ctx& x) {
  const Op op = inplace_base(x.c.op);
  const Input& dst = x.c.inputs[0];
  const Geom& g = x.geom[0];
  const Operand self = tensor_operand(x.in[0]);
  const Operand other =
      x.c.form == Form::TT ? tensor_operand(x.in[1]) : scalar_operand(x.c.scalars[0]);
  DType compute = result_type({&self, &other});
  if (op == Op::Sub && (self.dtype() == tl::kBool || other.dtype() == tl::kBool))
    throw Raise{"subtraction with a bool operand"};
  if ((op == Op::Div || op == Op::Atan2) && !is_float(compute)) compute = tl::kFloat32;
  const bool division = op == Op::Fmod || op == Op::Remainder || op == Op::FloorDivide;
  if (division && compute == tl::kBool) throw Raise{"integer division of bools"};
  const bool bitwise = op == Op::BitwiseAnd || op == Op::BitwiseOr || op == Op::BitwiseXor;
  const bool shift = op == Op::LeftShift || op == Op::RightShift;
  if ((bitwise || shift) && is_float(compute)) throw Raise{"bitwise op on floats"};
  if (shift && compute == tl::kBool) throw Raise{"shift of bools"};
  if (!can_cast(compute, dst.dtype)) throw Raise{"result type can't be cast to self's dtype"};
  if (other.tensor && broadcast({g.shape, other.t.shape}) != g.shape)
    throw Raise{"other does not broadcast to self's shape"};
  for (size_t k = 0; k < g.shape.size(); ++k)
    if (g.strides[k] == 0 && g.shape[k] > 1) throw Raise{"write into a broadcast view"};
  std::vector<V> base = dst.values;
  for_each_index(g.shape, [&](int64_t flat, const Dims& idx) {
    const V a = cast_operand(self, flat, g.shape, compute),
            b = binary_operand(op, other, flat, g.shape, compute);
    const V r = finish(binary_value(op, a, b, compute), compute);
    base[offset_of(g, idx)] = cast_value(r, compute, dst.dtype);
  });
  x.res.out = {dst.dtype, dst.base_shape, base};
  if (op == Op::Div) x.res.rtol = float_tol(compute, 1e-6, 1e-15);
  if (is_half(dst.dtype) || is_half(compute)) x.res.rtol = std::max(x.res.rtol, 1e-2);
}

}  // namespace

bool input_geom(const Input& in, Geom& g) {
  g.shape = in.base_shape;
  g.strides = contiguous_strides_of(in.base_shape);
  g.offset = 0;
  const int64_t storage = numel_of(in.base_shape);
  for (const ViewStep& s : in.views) {
    const int64_t nd = static_cast<int64_t>(g.shape.size());
    switch (s.kind) {
      case ViewKind::Transpose: {
        auto a = wrap(s.x, nd), b = wrap(s.y, nd);
        if (!a || !b || nd == 0) return false;
        std::swap(g.shape[*a], g.shape[*b]);
        std::swap(g.strides[*a], g.strides[*b]);
        break;
      }
      case ViewKind::Permute: {
        if (static_cast<int64_t>(s.a.size()) != nd) return false;
        std::vector<bool> seen(nd, false);
        Dims sh(nd), st(nd);
        for (int64_t i = 0; i < nd; ++i) {
          auto p = wrap(s.a[i], nd);
          if (!p || seen[*p]) return false;
          seen[*p] = true;
          sh[i] = g.shape[*p];
          st[i] = g.strides[*p];
        }
        g.shape = sh;
        g.strides = st;
        break;
      }
      case ViewKind::Slice: {
        auto d = wrap(s.x, nd);
        if (!d || nd == 0 || s.w <= 0) return false;
        const int64_t size = g.shape[*d];
        auto clampi = [&](int64_t v) {
          if (v < 0) v += size;
          return std::clamp<int64_t>(v, 0, size);
        };
        const int64_t start = clampi(s.y), end = std::max(clampi(s.z), start);
        g.offset += start * g.strides[*d];
        g.shape[*d] = (end - start + s.w - 1) / s.w;
        g.strides[*d] *= s.w;
        break;
      }
      case ViewKind::Expand: {
        const int64_t n = static_cast<int64_t>(s.a.size());
        if (n < nd) return false;
        Dims sh(n), st(n);
        for (int64_t i = 0; i < n; ++i) {
          const int64_t j = i - (n - nd);
          int64_t want = s.a[i];
          if (j < 0) {
            if (want < 0) return false;
            sh[i] = want;
            st[i] = 0;
            continue;
          }
          if (want == -1) want = g.shape[j];
          if (want < 0) return false;
          if (g.shape[j] == want) {
            sh[i] = want;
            st[i] = g.strides[j];
          } else if (g.shape[j] == 1) {
            sh[i] = want;
            st[i] = 0;
          } else {
            return false;
          }
        }
        g.shape = sh;
        g.strides = st;
        break;
      }
      case ViewKind::AsStrided: {
        if (s.a.size() != s.b.size() || s.x < 0) return false;
        int64_t reach = s.x;
        for (size_t i = 0; i < s.a.size(); ++i) {
          if (s.a[i] < 0 || s.b[i] < 0) return false;
          reach += (s.a[i] > 0 ? s.a[i] - 1 : 0) * s.b[i];
        }
        if (numel_of(s.a) > 0 && reach >= storage) return false;
        g.shape = s.a;
        g.strides = s.b;
        g.offset = s.x;
        break;
      }
      case ViewKind::Unsqueeze: {
        if (s.x < -(nd + 1) || s.x > nd) return false;
        const int64_t d = s.x < 0 ? s.x + nd + 1 : s.x;
        const int64_t st = d < nd ? g.shape[d] * g.strides[d] : 1;
        g.shape.insert(g.shape.begin() + d, 1);
        g.strides.insert(g.strides.begin() + d, st);
        break;
      }
      case ViewKind::Select: {
        if (nd == 0) return false;
        auto d = wrap(s.x, nd);
        if (!d) return false;
        int64_t i = s.y < 0 ? s.y + g.shape[*d] : s.y;
        if (i < 0 || i >= g.shape[*d]) return false;
        g.offset += i * g.strides[*d];
        g.shape.erase(g.shape.begin() + *d);
        g.strides.erase(g.strides.begin() + *d);
        break;
      }
    }
  }
  return true;
}

HostArray input_values(const Input& in, const Geom& g) {
  HostArray a = gather_view(in.values, in.dtype, g);
  if (in.dtype == tl::kBool)
    for (V& v : a.v) v.i = v.i != 0;
  return a;
}

// cumsum / cumprod / cummax / cummin along a dim, as sequential loops over each slice: sums and
// products in double (integers in wrapping int64) after converting the input to the result
// dtype; cummax / cummin with torch's rule (an element replaces the running value when it is NaN,
// or when the running value is not NaN and the element is >= it, <= for min).
void run_scan(Ctx& x) {
  const Op op = x.c.op;
  const HostArray& a = x.in[0];
  const int64_t nd = static_cast<int64_t>(a.shape.size());
  const auto d = wrap(*x.c.dim, nd);
  if (!d) throw Raise{"dim out of range"};
  int64_t outer = 1, n = 1, inner = 1;
  if (nd > 0) {
    for (int64_t k = 0; k < *d; ++k) outer *= a.shape[k];
    n = a.shape[*d];
    for (int64_t k = *d + 1; k < nd; ++k) inner *= a.shape[k];
  }
  HostArray& out = x.res.out;
  const int64_t total = numel_of(a.shape);
  if (op == Op::Cummax || op == Op::Cummin) {
    const bool max = op == Op::Cummax;
    HostArray values{a.dtype, a.shape, std::vector<V>(total)};
    HostArray indices{tl::kInt64, a.shape, std::vector<V>(total)};
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < inner; ++j) {
        V best;
        int64_t where = 0;
        for (int64_t i = 0; i < n; ++i) {
          const int64_t p = (o * n + i) * inner + j;
          const V v = a.v[p];
          bool take = i == 0;
          if (is_float(a.dtype))
            take = take || std::isnan(v.f) ||
                   (!std::isnan(best.f) && (max ? v.f >= best.f : v.f <= best.f));
          else
            take = take || (max ? v.i >= best.i : v.i <= best.i);
          if (take) best = v, where = i;
          values.v[p] = best;
          indices.v[p].i = where;
        }
      }
    out = x.c.indices ? indices : values;
    return;
  }
  const bool prod = op == Op::Cumprod;
  const DType od = x.c.dtype ? *x.c.dtype : is_float(a.dtype) ? a.dtype : tl::kInt64;
  if (od == tl::kBool) throw Raise{"cumsum/cumprod with a bool dtype"};
  if (x.known.float_to_int && hits_float_to_int(a, od)) {
    x.res.skip = true;
    return;
  }
  out = {od, a.shape, std::vector<V>(total)};
  x.res.atol.assign(total, 0);
  // The library accumulates in double (float32, float64) or float (float16, bfloat16), in
  // another order on a device: a sum's error grows with its terms' magnitudes.
  const double eps = is_half(od) ? 1.2e-7 : 2.3e-16;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < inner; ++j) {
      double acc = prod ? 1 : 0, mag = 0;
      int64_t iacc = prod ? 1 : 0;
      for (int64_t i = 0; i < n; ++i) {
        const int64_t p = (o * n + i) * inner + j;
        const V v = cast_value(a.v[p], a.dtype, od);
        if (is_float(od)) {
          acc = prod ? acc * v.f : acc + v.f;
          mag += std::fabs(v.f);
          out.v[p].f = acc;
          x.res.atol[p] = prod ? (is_half(od) ? 1e-7 : 1e-30) : 4 * eps * (i + 1) * mag + 1e-30;
        } else {
          iacc = prod ? wrap_mul(iacc, v.i) : wrap_add(iacc, v.i);
          out.v[p].i = iacc;
        }
        out.v[p] = finish(out.v[p], od);
      }
    }
  // A float32 output is one rounding of a double, which another order may move by an ulp.
  x.res.rtol = float_tol(od, 2.4e-7, prod ? 1e-13 : 1e-15);
}

// norm (torch.linalg.vector_norm), nansum and count_nonzero over dims, in double.
void run_more_reduction(Ctx& x) {
  const Op op = x.c.op;
  const HostArray& a = x.in[0];
  const int64_t nd = static_cast<int64_t>(a.shape.size());
  if (op == Op::Norm && !is_float(a.dtype)) throw Raise{"norm of a non-floating dtype"};
  const std::vector<bool> mask = dims_mask(x.c.dims, nd);
  const double p = x.c.p;
  if (op == Op::Norm && (p < 0 || p == kInf))
    for (int64_t k = 0; k < nd; ++k)
      if (mask[k] && a.shape[k] == 0) throw Raise{"norm with no identity over an empty dim"};
  const bool keepdim = op != Op::CountNonzero && x.c.keepdim;
  const Dims oshape = reduced_shape(a.shape, mask, keepdim);
  const int64_t n_out = numel_of(oshape);
  const bool float_sum = is_float(a.dtype) && op != Op::CountNonzero;
  const DType od = float_sum ? a.dtype : tl::kInt64;
  std::vector<double> acc(n_out, op == Op::Norm && p == -kInf ? kInf : 0.0), mag(n_out, 0.0);
  std::vector<int64_t> iacc(n_out, 0);
  for_each_index(a.shape, [&](int64_t flat, const Dims& idx) {
    const int64_t o = out_index(idx, a.shape, mask);
    const V v = a.v[flat];
    if (op == Op::CountNonzero) {
      iacc[o] += nonzero(v, a.dtype);
    } else if (!is_float(a.dtype)) {  // nansum of integers and bool: their sum
      iacc[o] = wrap_add(iacc[o], v.i);
    } else if (op == Op::Nansum) {
      if (!std::isnan(v.f)) acc[o] += v.f, mag[o] += std::fabs(v.f);
    } else if (p == kInf) {
      acc[o] = fmax_nan(acc[o], std::fabs(v.f));
    } else if (p == -kInf) {
      acc[o] = fmin_nan(acc[o], std::fabs(v.f));
    } else if (p == 0) {
      acc[o] += v.f != 0 || std::isnan(v.f);
    } else {
      acc[o] += std::pow(std::fabs(v.f), p);
    }
  });
  HostArray& out = x.res.out;
  out = {od, oshape, std::vector<V>(n_out)};
  x.res.atol.assign(n_out, 0);
  for (int64_t o = 0; o < n_out; ++o) {
    if (!float_sum) {
      out.v[o].i = iacc[o];
      continue;
    }
    double r = acc[o];
    if (op == Op::Norm && p != 0 && std::isfinite(p) && p != 1) r = std::pow(r, 1 / p);
    out.v[o].f = r;
    // nansum: float or double accumulation of terms of this magnitude; norms: sums of
    // non-negative terms (float32 powers), so relative.
    x.res.atol[o] = op == Op::Nansum ? (is_half(od) ? 8e-6 : 1e-13) * mag[o] + 1e-30 : 1e-30;
    out.v[o] = finish(out.v[o], od);
  }
  x.res.rtol = op == Op::Nansum ? float_tol(od, 2.4e-7, 1e-15) : float_tol(od, 1e-5, 1e-13);
  if (op == Op::Norm && float_sum && n_out > 0 && p != 0 && std::isfinite(p)) {
    // A sum of n non-negative terms errs by up to gamma_n = n u / (1 - n u) of itself in its
    // double accumulator (the library's float32 sum; half inputs go through float32), and the
    // 1/p-th power scales that by 1/|p|: past the fixed float64 rtol for long reductions (40960
    // equal terms erred by 6.5e-13).
    const double n = static_cast<double>(numel_of(a.shape) / n_out), u = 0x1.0p-53;
    x.res.rtol += n * u / (1 - n * u) * std::max(1.0, 1 / std::fabs(p));
  }
}

// unique / unique_consecutive: the rows (each element, or each slice along dim, its elements in
// row-major order) in sort's lexicographic order (NaN last, ties by position), or as they come
// (consecutive); a group starts at a row not == the one before it (NaN equals nothing: each NaN
// is a value of its own, as torch compares them). The case's k picks values, inverse or counts.
void run_unique(Ctx& x) {
  const HostArray& a = x.in[0];
  const int64_t nd = static_cast<int64_t>(a.shape.size());
  const bool floating = is_float(a.dtype);
  HostArray& out = x.res.out;
  std::optional<int64_t> d;
  if (x.c.dim) {
    if (nd == 0) throw Raise{"unique along a dim of a 0-d tensor"};
    d = wrap(*x.c.dim, nd);
    if (!d) throw Raise{"dim out of range"};
    const auto zeros = std::count(a.shape.begin(), a.shape.end(), int64_t{0});
    if (a.shape[*d] == 0) {
      if (zeros != 1) throw Raise{"unique along an empty dim while another is empty too"};
      out = x.c.k == 0 ? HostArray{a.dtype, a.shape, {}} : HostArray{tl::kInt64, {0}, {}};
      return;
    }
    if (zeros > 0) throw Raise{"unique along a dim while another dim is empty"};
  }
  std::vector<std::vector<V>> rows;
  std::vector<bool> mask(nd, false);
  if (d) {
    mask[*d] = true;
    rows.resize(a.shape[*d]);
    for_each_index(a.shape,
                   [&](int64_t flat, const Dims& idx) { rows[idx[*d]].push_back(a.v[flat]); });
  } else {
    for (const V& v : a.v) rows.push_back({v});
  }
  auto less = [&](const V& p, const V& q) {
    if (!floating) return p.i < q.i;
    const bool pn = std::isnan(p.f), qn = std::isnan(q.f);
    if (pn || qn) return !pn && qn;
    return p.f < q.f;
  };
  auto same = [&](const V& p, const V& q) { return floating ? p.f == q.f : p.i == q.i; };
  std::vector<int64_t> order(rows.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
  if (x.c.op == Op::Unique)
    std::stable_sort(order.begin(), order.end(), [&](int64_t p, int64_t q) {
      return std::lexicographical_compare(rows[p].begin(), rows[p].end(), rows[q].begin(),
                                          rows[q].end(), less);
    });
  std::vector<int64_t> first, counts, inverse(rows.size());
  for (size_t k = 0; k < order.size(); ++k) {
    const auto& row = rows[order[k]];
    if (k == 0 || !std::equal(row.begin(), row.end(), rows[order[k - 1]].begin(), same)) {
      first.push_back(order[k]);
      counts.push_back(0);
    }
    ++counts.back();
    inverse[order[k]] = static_cast<int64_t>(first.size()) - 1;
  }
  const int64_t u = static_cast<int64_t>(first.size());
  if (x.c.k != 0) {
    const std::vector<int64_t>& src = x.c.k == 1 ? inverse : counts;
    out = {tl::kInt64, x.c.k == 2 ? Dims{u} : d ? Dims{a.shape[*d]} : a.shape, {}};
    for (int64_t v : src) out.v.push_back(V{v, 0.0});
    return;
  }
  if (!d) {
    out = {a.dtype, {u}, {}};
    for (int64_t f : first) out.v.push_back(rows[f][0]);
    return;
  }
  Dims oshape = a.shape;
  oshape[*d] = u;
  out = {a.dtype, oshape, std::vector<V>(numel_of(oshape))};
  for_each_index(oshape, [&](int64_t flat, const Dims& idx) {
    out.v[flat] = rows[first[idx[*d]]][out_index(idx, oshape, mask)];
  });
}

// bincount: counts (int64), or sums of weights (float32 weights: float32, others float64) of a
// 1-D non-negative integer tensor over max(max + 1, minlength) bins; an empty 1-D input gives
// int64 zeros of minlength even with weights, as torch. Device sums add in another order.
void run_bincount(Ctx& x) {
  const HostArray& a = x.in[0];
  const int64_t minlength = x.c.k;
  if (!is_int(a.dtype)) throw Raise{"bincount of a non-integer dtype"};
  if (minlength < 0) throw Raise{"negative minlength"};
  HostArray& out = x.res.out;
  if (a.shape.size() == 1 && a.v.empty()) {
    out = {tl::kInt64, {minlength}, std::vector<V>(minlength)};
    return;
  }
  if (a.shape.size() != 1) throw Raise{"bincount of a tensor that is not 1-D"};
  int64_t top = 0;
  for (const V& v : a.v) {
    if (v.i < 0) throw Raise{"bincount of a negative value"};
    top = std::max(top, v.i);
  }
  const bool weighted = x.in.size() > 1;
  if (weighted && (x.in[1].shape.size() != 1 || x.in[1].shape[0] != a.shape[0]))
    throw Raise{"weights of another shape"};
  const int64_t bins = std::max(top + 1, minlength);
  std::vector<double> sum(bins, 0.0), mag(bins, 0.0);
  for (size_t i = 0; i < a.v.size(); ++i) {
    double w = 1;
    if (weighted) {
      const HostArray& wa = x.in[1];
      w = is_float(wa.dtype) ? wa.v[i].f : static_cast<double>(wa.v[i].i);
    }
    sum[a.v[i].i] += w;
    mag[a.v[i].i] += std::fabs(w);
  }
  const DType od = !weighted                       ? tl::kInt64
                   : x.in[1].dtype == tl::kFloat32 ? tl::kFloat32
                                                   : tl::kFloat64;
  out = {od, {bins}, std::vector<V>(bins)};
  x.res.atol.assign(bins, 0);
  for (int64_t b = 0; b < bins; ++b) {
    if (od == tl::kInt64) {
      out.v[b].i = static_cast<int64_t>(sum[b]);
    } else {
      out.v[b].f = round_float(sum[b], od);
      x.res.atol[b] = (od == tl::kFloat32 ? 1e-6 : 1e-14) * mag[b] + 1e-30;
    }
  }
  x.res.rtol = float_tol(od, 1e-6, 1e-14);
}

// searchsorted: both sides in their common dtype (torch.result_type, never bool); each value's
// position in its row (the only row of a 1-D sequence, else the row of the same leading index)
// by torch's bisection: left moves right while !(boundary >= value), right while !(boundary >
// value), so a NaN value (and any comparison with NaN) moves right.
void run_searchsorted(Ctx& x) {
  const HostArray &s = x.in[0], &v = x.in[1];
  const size_t sd = s.shape.size(), vd = v.shape.size();
  if (sd == 0) throw Raise{"searchsorted in a 0-d sequence"};
  if (vd == 0 && sd != 1) throw Raise{"a 0-d value needs a 1-D sequence"};
  if (sd != 1) {
    if (sd != vd) throw Raise{"sequence and values of different ranks"};
    for (size_t i = 0; i + 1 < sd; ++i)
      if (s.shape[i] != v.shape[i]) throw Raise{"leading dims differ"};
  }
  HostArray& out = x.res.out;
  out = {tl::kInt64, v.shape, std::vector<V>(v.v.size())};
  if (v.v.empty()) return;
  const Operand so = tensor_operand(s), vo = tensor_operand(v);
  const DType common = result_type({&so, &vo});
  if (common == tl::kBool) throw Raise{"searchsorted of bools"};
  const bool floating = is_float(common);
  const int64_t len = s.shape.back();
  const int64_t inner = sd == 1 ? static_cast<int64_t>(v.v.size()) : v.shape.back();
  auto ge = [&](const V& p, const V& q) { return floating ? p.f >= q.f : p.i >= q.i; };
  auto gt = [&](const V& p, const V& q) { return floating ? p.f > q.f : p.i > q.i; };
  for (size_t i = 0; i < v.v.size(); ++i) {
    const int64_t row = static_cast<int64_t>(i) / inner;
    const V value = cast_value(v.v[i], v.dtype, common);
    int64_t start = 0, end = len;
    while (start < end) {
      const int64_t mid = start + (end - start) / 2;
      const V b = cast_value(s.v[row * len + mid], s.dtype, common);
      if (x.c.right ? !gt(b, value) : !ge(b, value))
        start = mid + 1;
      else
        end = mid;
    }
    out.v[i].i = start;
  }
}

// histc: counts of the elements in `bins` equal bins over [min, max] (the data's range when
// min == max; then an empty range widens by 1 each way), NaN and outside values ignored, max in
// the last bin; the bin is (v - min) * bins / (max - min) in the dtype's own arithmetic (each
// step rounded for float16 / bfloat16), truncated.
void run_histc(Ctx& x) {
  const HostArray& a = x.in[0];
  if (!is_float(a.dtype)) throw Raise{"histc of a non-floating dtype"};
  const int64_t bins = x.c.k;
  if (bins <= 0) throw Raise{"histc with bins <= 0"};
  double lo = x.c.lo, hi = x.c.hi;
  if (lo == hi && !a.v.empty()) {
    lo = kInf;
    hi = -kInf;
    for (const V& v : a.v) {
      if (std::isnan(v.f)) lo = hi = kNaN;
      if (std::isnan(lo)) break;
      lo = std::min(lo, v.f);
      hi = std::max(hi, v.f);
    }
  }
  if (lo == hi) {
    lo -= 1;
    hi += 1;
  }
  if (!std::isfinite(lo) || !std::isfinite(hi)) throw Raise{"histc range not finite"};
  if (!(lo < hi)) throw Raise{"histc with min > max"};
  const DType d = a.dtype;
  std::vector<int64_t> counts(bins, 0);
  for (const V& e : a.v) {
    int64_t b = -1;
    if (d == tl::kFloat32) {
      const float v = static_cast<float>(e.f), l = static_cast<float>(lo),
                  h = static_cast<float>(hi);
      if (v >= l && v <= h) b = static_cast<int64_t>((v - l) * static_cast<float>(bins) / (h - l));
    } else if (d == tl::kFloat64) {
      if (e.f >= lo && e.f <= hi)
        b = static_cast<int64_t>((e.f - lo) * static_cast<double>(bins) / (hi - lo));
    } else {  // float math, each result rounded to the half type
      auto rd = [&](float f) { return static_cast<float>(round_float(f, d)); };
      const float v = static_cast<float>(e.f), l = rd(static_cast<float>(lo)),
                  h = rd(static_cast<float>(hi));
      if (v >= l && v <= h)
        b = static_cast<int64_t>(rd(rd(rd(v - l) * rd(static_cast<float>(bins))) / rd(h - l)));
    }
    if (b >= bins) b = bins - 1;
    if (b >= 0) ++counts[b];
  }
  x.res.out = {d, {bins}, {}};
  // Exact counts rounded once to the dtype (torch's CPU adds 1 in the dtype: float16 stalls at
  // 2048, bfloat16 at 256, float32 at 2^24; README lists it).
  for (int64_t n : counts) x.res.out.v.push_back(V{0, round_float(static_cast<double>(n), d)});
}

RefResult run_reference(const Case& c, const Known& known) {
  RefResult res;
  Ctx x{c, known, res, {}, {}};
  for (const Input& in : c.inputs) {
    Geom g;
    if (!input_geom(in, g)) {  // only the shrinker makes these; they are not cases
      res.skip = true;
      return res;
    }
    x.geom.push_back(g);
    x.in.push_back(input_values(in, g));
  }
  try {
    const Op op = c.op;
    if (is_unary(op))
      run_unary(x);
    else if (is_binary(op))
      run_binary(x);
    else if (op == Op::Where)
      run_where(x);
    else if (op == Op::Clamp)
      run_clamp(x);
    else if (is_reduction(op))
      run_reduction(x);
    else if (is_numerics(op))
      run_numerics(x);
    else if (is_ordering(op))
      run_ordering(x);
    else if (is_scan(op))
      run_scan(x);
    else if (is_more_reduction(op))
      run_more_reduction(x);
    else if (op == Op::Unique || op == Op::UniqueConsecutive)
      run_unique(x);
    else if (op == Op::Bincount)
      run_bincount(x);
    else if (op == Op::Searchsorted)
      run_searchsorted(x);
    else if (op == Op::Histc)
      run_histc(x);
    else if (op == Op::Matmul)
      run_matmul(x);
    else if (op == Op::Outer)
      run_outer(x);
    else if (op == Op::Addmm)
      run_addmm(x);
    else if (op == Op::Cat || op == Op::Stack)
      run_cat(x);
    else if (op == Op::IndexSelect)
      run_index_select(x);
    else if (op == Op::Gather)
      run_gather(x);
    else if (op == Op::Take)
      run_take(x);
    else if (op == Op::MaskedSelect)
      run_masked_select(x);
    else if (op == Op::ScatterAdd || op == Op::IndexAdd)
      run_scatter_add(x);
    else if (op == Op::MaskedScatter)
      run_masked_scatter(x);
    else if (op == Op::Lerp)
      run_lerp(x);
    else if (op == Op::Isclose)
      run_isclose(x);
    else if (op == Op::NanToNum)
      run_nan_to_num(x);
    else if (op == Op::MaskedFill)
      run_masked_fill(x);
    else if (op == Op::Flip)
      run_flip(x);
    else if (op == Op::Roll)
      run_roll(x);
    else if (op == Op::Tril || op == Op::Triu)
      run_triangle(x);
    else if (op == Op::Conv2d)
      run_conv2d(x);
    else if (op == Op::MaxPool2d)
      run_max_pool2d(x);
    else if (op == Op::AvgPool2d)
      run_avg_pool2d(x);
    else if (op == Op::AdaptiveAvgPool2d)
      run_adaptive_avg_pool2d(x);
    else if (is_loss(op))
      run_loss(x);
    else if (op == Op::Reshape || op == Op::View)
      run_reshape(x);
    else if (op == Op::Copy || op == Op::Fill)
      run_write(x);
    else if (is_inplace(op))
      run_inplace(x);
    else if (op == Op::To) {
      if (known.float_to_int && hits_float_to_int(x.in[0], c.target)) {
        res.skip = true;
      } else {
        res.out = {c.target, x.in[0].shape, {}};
        for (const V& v : x.in[0].v) res.out.v.push_back(cast_value(v, x.in[0].dtype, c.target));
      }
    } else {  // clone, contiguous
      res.out = x.in[0];
    }
  } catch (const Raise& r) {
    res.raises = true;
    res.why = r.why;
  }
  // A half result of arithmetic is one rounding of a float computation, which the reference (in
  // double) may land one ulp away from; copies, selections, comparisons and max/min stay exact.
  const bool arithmetic = (c.op >= Op::Exp && c.op <= Op::Sigmoid) ||
                          (c.op >= Op::Add && c.op <= Op::Pow) || c.op == Op::Sum ||
                          c.op == Op::Mean || c.op == Op::Prod || c.op == Op::Matmul ||
                          c.op == Op::Outer || c.op == Op::Addmm || c.op == Op::Conv2d ||
                          c.op == Op::AvgPool2d || c.op == Op::AdaptiveAvgPool2d;
  if (!res.raises && arithmetic && is_half(res.out.dtype))
    res.rtol = std::max(res.rtol, half_tol(res.out.dtype));
  return res;
}

}  // namespace fuzz

// Elementwise ops with NumPy/PyTorch broadcasting and type promotion: arithmetic, math,
// comparisons (-> bool), logical ops, where and clamp.
#pragma once

#include <optional>
#include <string_view>

#include "tensorlet/tensor/tensor.h"

namespace tensorlet {

// Each binary op in its three forms, and out= forms that write into `out` (an empty `out` is
// resized to the result's shape, as torch; otherwise it must have that shape, and the result
// must cast to its dtype): tl::mul_out(out, a, b) allocates nothing.
#define TL_DECLARE_BINARY(name)                                      \
  Tensor name(const Tensor& a, const Tensor& b);                     \
  Tensor name(const Tensor& a, Scalar b);                            \
  Tensor name(Scalar a, const Tensor& b);                            \
  Tensor& name##_out(Tensor& out, const Tensor& a, const Tensor& b); \
  Tensor& name##_out(Tensor& out, const Tensor& a, Scalar b);

TL_DECLARE_BINARY(add)
TL_DECLARE_BINARY(sub)
TL_DECLARE_BINARY(mul)
TL_DECLARE_BINARY(div)  // true division: integer inputs give float32, as torch.div
TL_DECLARE_BINARY(pow)
TL_DECLARE_BINARY(maximum)
TL_DECLARE_BINARY(minimum)
TL_DECLARE_BINARY(gt)
TL_DECLARE_BINARY(lt)
TL_DECLARE_BINARY(ge)
TL_DECLARE_BINARY(le)
TL_DECLARE_BINARY(eq)
TL_DECLARE_BINARY(ne)
TL_DECLARE_BINARY(logical_and)
TL_DECLARE_BINARY(logical_or)
TL_DECLARE_BINARY(logical_xor)
// torch.add / torch.sub with alpha: a + alpha * b (a - alpha * b), rounded once. alpha must not be
// a float for integer results, and must be bool for bool results, as torch.
Tensor add(const Tensor& a, const Tensor& b, Scalar alpha);
Tensor add(const Tensor& a, Scalar b, Scalar alpha);
Tensor sub(const Tensor& a, const Tensor& b, Scalar alpha);
Tensor sub(const Tensor& a, Scalar b, Scalar alpha);
// Integer division by zero raises ZeroDivisionError on every device (a CUDA divisor is scanned).
TL_DECLARE_BINARY(fmod)          // remainder of truncated division: the dividend's sign
TL_DECLARE_BINARY(remainder)     // Python's %: the divisor's sign
TL_DECLARE_BINARY(floor_divide)  // Python's //
TL_DECLARE_BINARY(atan2)
// Integers and bool (where they are the logical ops); operators & | ^ << >>.
TL_DECLARE_BINARY(bitwise_and)
TL_DECLARE_BINARY(bitwise_or)
TL_DECLARE_BINARY(bitwise_xor)
TL_DECLARE_BINARY(bitwise_left_shift)   // a shift by < 0 or >= the width gives 0, as torch
TL_DECLARE_BINARY(bitwise_right_shift)  // by < 0 or >= the width: 0, or the sign fill if signed
#undef TL_DECLARE_BINARY

Tensor neg(const Tensor& a);
Tensor abs(const Tensor& a);
Tensor exp(const Tensor& a);  // float ops: integer and bool inputs give float32
Tensor log(const Tensor& a);
Tensor sqrt(const Tensor& a);
Tensor sin(const Tensor& a);
Tensor cos(const Tensor& a);
Tensor tanh(const Tensor& a);
Tensor sigmoid(const Tensor& a);
Tensor relu(const Tensor& a);
Tensor logical_not(const Tensor& a);
Tensor floor(const Tensor& a);  // integers: the identity (dtype kept), as torch.floor
Tensor ceil(const Tensor& a);   // integers: the identity, as torch.ceil
Tensor trunc(const Tensor& a);  // toward zero
Tensor round(const Tensor& a);  // to the nearest integer, halves to even (2.5 -> 2), as torch.round
Tensor sign(const Tensor& a);   // -1, 0, 1; NaN gives 0, as torch.sign
Tensor square(const Tensor& a);  // x * x (integers wrap); bool gives int64, as torch
Tensor reciprocal(const Tensor& a);
Tensor rsqrt(const Tensor& a);
Tensor log1p(const Tensor& a);
Tensor expm1(const Tensor& a);
Tensor log2(const Tensor& a);
Tensor log10(const Tensor& a);
Tensor exp2(const Tensor& a);
Tensor erf(const Tensor& a);
Tensor erfc(const Tensor& a);
Tensor tan(const Tensor& a);
Tensor sinh(const Tensor& a);
Tensor cosh(const Tensor& a);
Tensor asin(const Tensor& a);
Tensor acos(const Tensor& a);
Tensor atan(const Tensor& a);
Tensor bitwise_not(const Tensor& a);  // integers and bool (logical not), as torch

// bool results; integers and bools are never NaN or infinite.
Tensor isnan(const Tensor& a);
Tensor isinf(const Tensor& a);
Tensor isfinite(const Tensor& a);

// The out= forms of the unary ops above (exp_out(out, a)), as for the binary ops.
#define TL_DECLARE_UNARY_OUT(name) Tensor& name##_out(Tensor& out, const Tensor& a);
TL_DECLARE_UNARY_OUT(neg)
TL_DECLARE_UNARY_OUT(abs)
TL_DECLARE_UNARY_OUT(exp)
TL_DECLARE_UNARY_OUT(log)
TL_DECLARE_UNARY_OUT(sqrt)
TL_DECLARE_UNARY_OUT(sin)
TL_DECLARE_UNARY_OUT(cos)
TL_DECLARE_UNARY_OUT(tanh)
TL_DECLARE_UNARY_OUT(sigmoid)
TL_DECLARE_UNARY_OUT(relu)
TL_DECLARE_UNARY_OUT(logical_not)
TL_DECLARE_UNARY_OUT(floor)
TL_DECLARE_UNARY_OUT(ceil)
TL_DECLARE_UNARY_OUT(trunc)
TL_DECLARE_UNARY_OUT(round)
TL_DECLARE_UNARY_OUT(sign)
TL_DECLARE_UNARY_OUT(reciprocal)
TL_DECLARE_UNARY_OUT(rsqrt)
TL_DECLARE_UNARY_OUT(log1p)
TL_DECLARE_UNARY_OUT(expm1)
TL_DECLARE_UNARY_OUT(log2)
TL_DECLARE_UNARY_OUT(log10)
TL_DECLARE_UNARY_OUT(exp2)
TL_DECLARE_UNARY_OUT(erf)
TL_DECLARE_UNARY_OUT(erfc)
TL_DECLARE_UNARY_OUT(tan)
TL_DECLARE_UNARY_OUT(sinh)
TL_DECLARE_UNARY_OUT(cosh)
TL_DECLARE_UNARY_OUT(asin)
TL_DECLARE_UNARY_OUT(acos)
TL_DECLARE_UNARY_OUT(atan)
TL_DECLARE_UNARY_OUT(bitwise_not)
TL_DECLARE_UNARY_OUT(isnan)
TL_DECLARE_UNARY_OUT(isinf)
TL_DECLARE_UNARY_OUT(isfinite)
#undef TL_DECLARE_UNARY_OUT

// Activations (torch.nn.functional), floating tensors only.
Tensor silu(const Tensor& a);  // x * sigmoid(x)
// approximate: "none" (x * Phi(x), through erf) or "tanh".
Tensor gelu(const Tensor& a, std::string_view approximate = "none");
// log(1 + exp(beta x)) / beta, and x itself where beta x > threshold.
Tensor softplus(const Tensor& a, double beta = 1, double threshold = 20);

// where(cond, a, b): cond is bool; a and b promote; all three broadcast.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor where(const Tensor& cond, const Tensor& a, Scalar b);
Tensor where(const Tensor& cond, Scalar a, const Tensor& b);
Tensor where(const Tensor& cond, Scalar a, Scalar b);

// masked_fill(a, mask, value): value where the bool mask is true, a elsewhere; the result has a's
// dtype (value converted to it) and the broadcast shape. value: a number or a 0-dim tensor.
Tensor masked_fill(const Tensor& a, const Tensor& mask, Scalar value);
Tensor masked_fill(const Tensor& a, const Tensor& mask, const Tensor& value);

// clamp(a, min, max): at least one bound; min > max gives max everywhere, as torch.clamp.
Tensor clamp(const Tensor& a, std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt);
Tensor clamp(const Tensor& a, const std::optional<Tensor>& min, const std::optional<Tensor>& max);

// The dtype an op on (a, b) computes in, by torch.result_type's rules (dimensioned tensors
// outrank 0-dim tensors, which outrank scalars, within the same kind).
DType result_type(const Tensor& a, const Tensor& b);
DType result_type(const Tensor& a, Scalar b);

Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, Scalar b);
Tensor operator+(Scalar a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, Scalar b);
Tensor operator-(Scalar a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, Scalar b);
Tensor operator*(Scalar a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, Scalar b);
Tensor operator/(Scalar a, const Tensor& b);
Tensor operator-(const Tensor& a);
Tensor operator>(const Tensor& a, const Tensor& b);
Tensor operator>(const Tensor& a, Scalar b);
Tensor operator>(Scalar a, const Tensor& b);  // 0.5 > x
Tensor operator<(const Tensor& a, const Tensor& b);
Tensor operator<(const Tensor& a, Scalar b);
Tensor operator<(Scalar a, const Tensor& b);  // 0.5 < x
Tensor operator>=(const Tensor& a, const Tensor& b);
Tensor operator>=(const Tensor& a, Scalar b);
Tensor operator>=(Scalar a, const Tensor& b);  // 0.5 >= x
Tensor operator<=(const Tensor& a, const Tensor& b);
Tensor operator<=(const Tensor& a, Scalar b);
Tensor operator<=(Scalar a, const Tensor& b);  // 0.5 <= x
Tensor operator==(const Tensor& a, const Tensor& b);
Tensor operator==(const Tensor& a, Scalar b);
Tensor operator==(Scalar a, const Tensor& b);  // 0.5 == x
Tensor operator!=(const Tensor& a, const Tensor& b);
Tensor operator!=(const Tensor& a, Scalar b);
Tensor operator!=(Scalar a, const Tensor& b);  // 0.5 != x
// Bitwise on integers, logical on bool (masks), as torch.
Tensor operator&(const Tensor& a, const Tensor& b);
Tensor operator&(const Tensor& a, Scalar b);
Tensor operator&(Scalar a, const Tensor& b);
Tensor operator|(const Tensor& a, const Tensor& b);
Tensor operator|(const Tensor& a, Scalar b);
Tensor operator|(Scalar a, const Tensor& b);
Tensor operator^(const Tensor& a, const Tensor& b);
Tensor operator^(const Tensor& a, Scalar b);
Tensor operator^(Scalar a, const Tensor& b);
Tensor operator<<(const Tensor& a, const Tensor& b);
Tensor operator<<(const Tensor& a, Scalar b);
Tensor operator<<(Scalar a, const Tensor& b);
Tensor operator>>(const Tensor& a, const Tensor& b);
Tensor operator>>(const Tensor& a, Scalar b);
Tensor operator>>(Scalar a, const Tensor& b);
Tensor operator!(const Tensor& a);  // logical not
Tensor operator~(const Tensor& a);  // bitwise not (logical not of bool)

}  // namespace tensorlet

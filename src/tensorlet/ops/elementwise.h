// Elementwise ops with NumPy/PyTorch broadcasting and type promotion: arithmetic, math,
// comparisons (-> bool), logical ops, where and clamp.
#pragma once

#include <optional>

#include "tensorlet/core/tensor.h"

namespace tensorlet {

#define TL_DECLARE_BINARY(name)                  \
  Tensor name(const Tensor& a, const Tensor& b); \
  Tensor name(const Tensor& a, Scalar b);        \
  Tensor name(Scalar a, const Tensor& b);

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
#undef TL_DECLARE_BINARY

Tensor neg(const Tensor& a);
Tensor abs(const Tensor& a);
Tensor exp(const Tensor& a);  // float ops: integer inputs give float32
Tensor log(const Tensor& a);
Tensor sqrt(const Tensor& a);
Tensor sin(const Tensor& a);
Tensor cos(const Tensor& a);
Tensor tanh(const Tensor& a);
Tensor sigmoid(const Tensor& a);
Tensor relu(const Tensor& a);
Tensor logical_not(const Tensor& a);
Tensor floor(const Tensor& a);  // integers: the identity (dtype kept), as torch.floor
Tensor ceil(const Tensor& a);   // likewise
Tensor trunc(const Tensor& a);  // toward zero
Tensor round(const Tensor& a);  // to the nearest integer, halves to even (2.5 -> 2), as torch.round

// where(cond, a, b): cond is bool; a and b promote; all three broadcast.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor where(const Tensor& cond, const Tensor& a, Scalar b);
Tensor where(const Tensor& cond, Scalar a, const Tensor& b);
Tensor where(const Tensor& cond, Scalar a, Scalar b);

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
Tensor operator!=(Scalar a, const Tensor& b);        // 0.5 != x
Tensor operator&(const Tensor& a, const Tensor& b);  // logical and of bool tensors
Tensor operator|(const Tensor& a, const Tensor& b);  // logical or
Tensor operator!(const Tensor& a);                   // logical not
Tensor operator~(const Tensor& a);                   // logical not (bool tensors)

}  // namespace tensorlet

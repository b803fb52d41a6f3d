// STUB: to be implemented.
#include "tensor/elementwise.h"

namespace tensorlet {
#define NI fail<Error>("tl::elementwise", "not implemented yet")
#define B(name) \
  Tensor name(const Tensor&, const Tensor&) { NI; } \
  Tensor name(const Tensor&, Scalar) { NI; } \
  Tensor name(Scalar, const Tensor&) { NI; }
B(add) B(sub) B(mul) B(div) B(pow) B(maximum) B(minimum) B(gt) B(lt) B(ge) B(le) B(eq) B(ne) B(logical_and) B(logical_or)
#define U(name) Tensor name(const Tensor&) { NI; }
U(neg) U(abs) U(exp) U(log) U(sqrt) U(sin) U(cos) U(tanh) U(sigmoid) U(relu) U(logical_not)
Tensor where(const Tensor&, const Tensor&, const Tensor&) { NI; }
Tensor where(const Tensor&, const Tensor&, Scalar) { NI; }
Tensor where(const Tensor&, Scalar, const Tensor&) { NI; }
Tensor where(const Tensor&, Scalar, Scalar) { NI; }
Tensor clamp(const Tensor&, std::optional<Scalar>, std::optional<Scalar>) { NI; }
Tensor clamp(const Tensor&, const std::optional<Tensor>&, const std::optional<Tensor>&) { NI; }
DType result_type(const Tensor&, const Tensor&) { NI; }
DType result_type(const Tensor&, Scalar) { NI; }
Tensor& Tensor::add_(const Tensor&) { NI; }
Tensor& Tensor::add_(Scalar) { NI; }
Tensor& Tensor::sub_(const Tensor&) { NI; }
Tensor& Tensor::sub_(Scalar) { NI; }
Tensor& Tensor::mul_(const Tensor&) { NI; }
Tensor& Tensor::mul_(Scalar) { NI; }
Tensor& Tensor::div_(const Tensor&) { NI; }
Tensor& Tensor::div_(Scalar) { NI; }
}  // namespace tensorlet

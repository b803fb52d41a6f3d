// STUB: to be implemented.
#include "tensor/linalg.h"

namespace tensorlet {
#define NI fail<Error>("tl::linalg", "not implemented yet")
Tensor matmul(const Tensor&, const Tensor&) { NI; }
Tensor mm(const Tensor&, const Tensor&) { NI; }
Tensor bmm(const Tensor&, const Tensor&) { NI; }
Tensor dot(const Tensor&, const Tensor&) { NI; }
Tensor linear(const Tensor&, const Tensor&, const std::optional<Tensor>&) { NI; }
}  // namespace tensorlet

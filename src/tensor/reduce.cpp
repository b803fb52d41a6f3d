// STUB: to be implemented.
#include "tensor/reduce.h"

namespace tensorlet {
#define NI fail<Error>("tl::reduce", "not implemented yet")
#define R(name) Tensor name(const Tensor&, const std::vector<int64_t>&, bool) { NI; }
R(sum) R(prod) R(mean) R(max) R(min) R(amax) R(amin) R(all) R(any)
Tensor argmax(const Tensor&, std::optional<int64_t>, bool) { NI; }
Tensor argmin(const Tensor&, std::optional<int64_t>, bool) { NI; }
}  // namespace tensorlet

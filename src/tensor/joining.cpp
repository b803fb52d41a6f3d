// STUB: to be implemented.
#include "tensor/joining.h"

namespace tensorlet {
#define NI fail<Error>("tl::joining", "not implemented yet")
Tensor cat(const std::vector<Tensor>&, int64_t) { NI; }
Tensor stack(const std::vector<Tensor>&, int64_t) { NI; }
Tensor vstack(const std::vector<Tensor>&) { NI; }
Tensor hstack(const std::vector<Tensor>&) { NI; }
Tensor dstack(const std::vector<Tensor>&) { NI; }
Tensor atleast_1d(const Tensor&) { NI; }
Tensor atleast_2d(const Tensor&) { NI; }
Tensor atleast_3d(const Tensor&) { NI; }
}  // namespace tensorlet

// STUB: to be implemented.
#include "tensor/indexing.h"

namespace tensorlet {
#define NI fail<Error>("tl::indexing", "not implemented yet")
Tensor nonzero(const Tensor&) { NI; }
std::vector<Tensor> nonzero_tuple(const Tensor&) { NI; }
Tensor masked_select(const Tensor&, const Tensor&) { NI; }
Tensor index_select(const Tensor&, int64_t, const Tensor&) { NI; }
Tensor gather(const Tensor&, int64_t, const Tensor&) { NI; }
}  // namespace tensorlet

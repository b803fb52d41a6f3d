// STUB: to be implemented.
#include "backends/cpu/cpu_backend.h"

namespace tensorlet::cpu {

Tensor CpuBackend::nonzero(const Tensor&) { fail<Error>("tl::cpu", "not implemented yet"); }
Tensor CpuBackend::masked_select(const Tensor&, const Tensor&) { fail<Error>("tl::cpu", "not implemented yet"); }
void CpuBackend::index_select(const Tensor&, int64_t, const Tensor&, const Tensor&) { fail<Error>("tl::cpu", "not implemented yet"); }
void CpuBackend::gather(const Tensor&, int64_t, const Tensor&, const Tensor&) { fail<Error>("tl::cpu", "not implemented yet"); }

}  // namespace tensorlet::cpu

// STUB: to be implemented.
#include "backends/cpu/cpu_backend.h"

namespace tensorlet::cpu {

void CpuBackend::binary(BinaryOp, const Tensor&, const Tensor&, const Tensor&) { fail<Error>("tl::cpu", "not implemented yet"); }
void CpuBackend::where(const Tensor&, const Tensor&, const Tensor&, const Tensor&) { fail<Error>("tl::cpu", "not implemented yet"); }

}  // namespace tensorlet::cpu

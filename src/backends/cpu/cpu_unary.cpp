// STUB: to be implemented.
#include "backends/cpu/cpu_backend.h"

namespace tensorlet::cpu {

void CpuBackend::unary(UnaryOp, const Tensor&, const Tensor&) { fail<Error>("tl::cpu", "not implemented yet"); }

}  // namespace tensorlet::cpu

// STUB: to be implemented.
#include "backends/cpu/cpu_backend.h"

namespace tensorlet::cpu {

void CpuBackend::reduce(ReduceOp, const Tensor&, const std::vector<bool>&, const Tensor&) { fail<Error>("tl::cpu", "not implemented yet"); }
void CpuBackend::arg_reduce(ArgReduceOp, const Tensor&, std::optional<int64_t>, const Tensor&) { fail<Error>("tl::cpu", "not implemented yet"); }

}  // namespace tensorlet::cpu

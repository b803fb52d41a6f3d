// STUB: to be implemented.
#include "backends/cpu/cpu_backend.h"

namespace tensorlet::cpu {

void CpuBackend::cat(const std::vector<Tensor>&, int64_t, const Tensor&) { fail<Error>("tl::cpu", "not implemented yet"); }

}  // namespace tensorlet::cpu

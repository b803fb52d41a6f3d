// The process-wide NCCL settings tensorlet imposes before its first NCCL call, and is_available().
#include <cstdlib>
#include <mutex>

#include "tensorlet/distributed/nccl_internal.h"

namespace tensorlet::distributed {

bool is_available() { return true; }

namespace detail {

void prepare_nccl() {
  static std::once_flag once;
  std::call_once(once, [] {
    // NVLink SHARP (NVLS) multicast makes NCCL create multicast objects (cuMulticastCreate) on
    // NVSwitch systems; on a shared host that has taken every GPU of the machine down, not only
    // ours. It is forced off, over any value the user set: collectives only lose the NVLS
    // algorithms, which matter for very large reductions alone. NCCL reads its environment once,
    // at its first call in the process, hence before anything else here touches NCCL.
    setenv("NCCL_NVLS_ENABLE", "0", 1);
  });
}

}  // namespace detail
}  // namespace tensorlet::distributed

// tl::cuda device queries when tensorlet is built without its CUDA backend: no devices.
#include "backends/cuda/cuda.h"

namespace tensorlet::cuda {

bool is_built() { return false; }
bool is_available() { return false; }
int device_count() { return 0; }

}  // namespace tensorlet::cuda

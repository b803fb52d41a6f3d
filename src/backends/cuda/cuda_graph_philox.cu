// The seed-and-offset kernel of graphs that draw random numbers (cuda_graph_philox.h).
#include "tensorlet/backends/cuda/cuda_graph_philox.h"

namespace tensorlet::cuda {
namespace {

__global__ void set_philox_slots(uint64_t* slots, PhiloxSlotValues values) {
  const int i = static_cast<int>(threadIdx.x);
  if (i < 2 * values.n) slots[i] = values.v[i];
}

}  // namespace

const void* philox_slot_kernel() { return reinterpret_cast<const void*>(&set_philox_slots); }

}  // namespace tensorlet::cuda

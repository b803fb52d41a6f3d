// The kernel a captured graph runs first when it draws random numbers: it writes each
// generator's seed and base block, reserved on the host before every replay, where the graph's
// random kernels read them (RandomParams::philox_base).
#pragma once

#include <cstdint>

namespace tensorlet::cuda {

// Generators one capture may draw from.
inline constexpr int kMaxGraphGenerators = 16;

// Kernel arguments, passed by value: (seed, base block) per generator.
struct PhiloxSlotValues {
  uint64_t v[2 * kMaxGraphGenerators];
  int n;
};

// The kernel, as a function pointer for a graph kernel node: set_philox_slots(uint64_t* slots,
// PhiloxSlotValues values), one block of 2 * kMaxGraphGenerators threads.
const void* philox_slot_kernel();

}  // namespace tensorlet::cuda

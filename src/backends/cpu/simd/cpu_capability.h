// The run-time choice of SIMD target for the CPU kernels: the CPU is detected once
// (TL_CPU_CAPABILITY may pin a lower target), and kernels() is that target's table.
#pragma once

#include <cstdint>

#include "tensorlet/backends/cpu/simd/simd_kernels.h"

namespace tensorlet::cpu::simd {

// In order: each target runs wherever the next one does.
enum class CpuCapability : uint8_t { Baseline, Avx2, Avx512 };
inline constexpr int kCpuCapabilityCount = 3;

// "baseline", "avx2", "avx512".
const char* capability_name(CpuCapability c);
// Whether this CPU (and its OS, which must save the wider registers) runs the target's code, and
// this build has it (only x86-64 builds have avx2 and avx512).
bool cpu_supports(CpuCapability c);
// The target in use: the best supported, or the one TL_CPU_CAPABILITY pins.
CpuCapability active_capability();
// The kernel table of the target in use; the one of `c` (which must be supported).
const SimdKernels& kernels();
const SimdKernels& kernels_for(CpuCapability c);

// For tests: runs the kernels of `c` from now on, process-wide (ops running on other threads
// meanwhile may use either table). Throws tl::Error when the CPU does not support `c`.
void set_active_capability(CpuCapability c);

}  // namespace tensorlet::cpu::simd

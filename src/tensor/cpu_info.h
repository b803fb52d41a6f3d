// The CPU code path in use: which x86 target's kernels (baseline, AVX2, AVX-512) run.
#pragma once

#include <string>

namespace tensorlet {

// The name of the SIMD target whose kernels the CPU backend runs: "baseline" (SSE2, any
// x86-64), "avx2" (AVX2 + FMA) or "avx512" (AVX-512 F/DQ/VL/BW). The best one the CPU supports,
// chosen once; the environment variable TL_CPU_CAPABILITY=baseline|avx2|avx512 pins a lower one
// (a value the CPU lacks, or an unknown one, warns once on stderr and takes the best supported).
std::string cpu_capability();

}  // namespace tensorlet

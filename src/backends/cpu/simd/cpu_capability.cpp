// Picks the SIMD target once: the best the CPU supports (__builtin_cpu_supports, which also
// checks that the OS saves the AVX/AVX-512 registers), or a lower one TL_CPU_CAPABILITY pins.
// Compiled for the baseline: it runs before anything knows what the CPU has.
#include "tensorlet/backends/cpu/simd/cpu_capability.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "tensorlet/tensor/cpu_info.h"
#include "tensorlet/tensor/error.h"

namespace tensorlet::cpu::simd {
namespace {

CpuCapability detect_best() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw"))
    return CpuCapability::Avx512;
  if (avx2) return CpuCapability::Avx2;
#endif
  return CpuCapability::Baseline;
}

CpuCapability best() {
  static const CpuCapability b = detect_best();
  return b;
}

// The best target, or the one TL_CPU_CAPABILITY names when the CPU has it (else a warning).
CpuCapability choose() {
  const char* env = std::getenv("TL_CPU_CAPABILITY");
  if (env == nullptr || env[0] == '\0') return best();
  for (int i = 0; i < kCpuCapabilityCount; ++i) {
    const auto c = static_cast<CpuCapability>(i);
    if (std::strcmp(env, capability_name(c)) != 0) continue;
    if (cpu_supports(c)) return c;
    std::fprintf(stderr,
                 "tensorlet: TL_CPU_CAPABILITY=%s: this CPU does not support it; using %s\n", env,
                 capability_name(best()));
    return best();
  }
  std::fprintf(stderr,
               "tensorlet: TL_CPU_CAPABILITY=%s is not one of baseline, avx2, avx512; using %s\n",
               env, capability_name(best()));
  return best();
}

// The target in use, -1 until the first op asks (so the environment is read then, once).
std::atomic<int> g_active{-1};

const SimdKernels& table(CpuCapability c) {
  switch (c) {
#if defined(__x86_64__)
    case CpuCapability::Avx512:
      return avx512::kernels();
    case CpuCapability::Avx2:
      return avx2::kernels();
#endif
    default:
      return baseline::kernels();
  }
}

}  // namespace

const char* capability_name(CpuCapability c) {
  switch (c) {
    case CpuCapability::Baseline:
      return "baseline";
    case CpuCapability::Avx2:
      return "avx2";
    case CpuCapability::Avx512:
      return "avx512";
  }
  return "baseline";
}

bool cpu_supports(CpuCapability c) { return c <= best(); }

CpuCapability active_capability() {
  int active = g_active.load(std::memory_order_relaxed);
  if (active < 0) {
    static const CpuCapability chosen = choose();  // one warning, also with racing threads
    int unset = -1;
    g_active.compare_exchange_strong(unset, static_cast<int>(chosen), std::memory_order_relaxed);
    active = g_active.load(std::memory_order_relaxed);
  }
  return static_cast<CpuCapability>(active);
}

const SimdKernels& kernels() { return table(active_capability()); }

const SimdKernels& kernels_for(CpuCapability c) {
  if (!cpu_supports(c))
    fail<Error>("tl::cpu::simd::kernels_for", "this CPU does not support ", capability_name(c));
  return table(c);
}

void set_active_capability(CpuCapability c) {
  if (!cpu_supports(c))
    fail<Error>("tl::cpu::simd::set_active_capability", "this CPU does not support ",
                capability_name(c));
  active_capability();  // the environment's choice is made (and warned about) once, first
  g_active.store(static_cast<int>(c), std::memory_order_relaxed);
}

}  // namespace tensorlet::cpu::simd

namespace tensorlet {

std::string cpu_capability() { return cpu::simd::capability_name(cpu::simd::active_capability()); }

}  // namespace tensorlet

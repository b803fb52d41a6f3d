// set_num_threads: one knob for OpenMP loops, Eigen's GEMM threads and the BLAS's; cpu_blas says
// which BLAS the build runs on (meson's blas option; TL_WITH_BLAS and the vendor's macro).
#include "tensorlet/tensor/threads.h"

#include <Eigen/Core>
#include <cctype>
#include <cstdlib>
#include <set>
#include <string>
#ifdef _OPENMP
#include <omp.h>
#endif
#if TL_BLAS_OPENBLAS
#include <cblas.h>
#elif TL_BLAS_BLIS
#include <blis.h>
#endif

#include "tensorlet/tensor/cpu_quota.h"
#include "tensorlet/tensor/error.h"

namespace tensorlet {
namespace {

int openmp_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

// An OpenMP build of the BLAS runs on our pool and follows omp_set_num_threads by itself; a
// pthread build keeps a pool of its own, which must be told (else it keeps its start-up count).
void set_blas_threads([[maybe_unused]] int n) {
#if TL_BLAS_OPENBLAS
  openblas_set_num_threads(n);
#elif TL_BLAS_BLIS
  bli_thread_set_num_threads(n);
#endif
}

#if TL_BLAS_OPENBLAS
// OpenBLAS's DYNAMIC_ARCH builds pick their kernels from the CPU model at load, and a model newer
// than the release (Sapphire Rapids under Debian 12's 0.3.21) falls back to Prescott's SSE3
// kernels: 216 GFLOP/s for a 4096^2 product on 16 cores where the AVX-512 ones are several times
// faster. When the core it chose predates AVX2 but the CPU has AVX2 or AVX-512, and the user has
// not chosen one (OPENBLAS_CORETYPE), it is re-initialized with the core the features call for,
// through the two entry points DYNAMIC_ARCH builds export (weak: absent in other builds). This
// runs at our load, after OpenBLAS's own initialization and before any product.
extern "C" {
void gotoblas_dynamic_init(void) __attribute__((weak));
void gotoblas_dynamic_quit(void) __attribute__((weak));
}

void choose_openblas_core() {
  if (gotoblas_dynamic_init == nullptr || gotoblas_dynamic_quit == nullptr ||
      std::getenv("OPENBLAS_CORETYPE") != nullptr)
    return;
  const char* wanted = nullptr;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl"))
    wanted = "SkylakeX";
  else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    wanted = "Haswell";
  std::string core = openblas_get_corename();
  for (char& c : core) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  static const std::set<std::string> kBeforeAvx2 = {"prescott", "core2", "penryn",     "dunnington",
                                                    "nehalem",  "atom",  "sandybridge"};
  if (wanted == nullptr || kBeforeAvx2.count(core) == 0) return;
  setenv("OPENBLAS_CORETYPE", wanted, 0);
  gotoblas_dynamic_quit();
  gotoblas_dynamic_init();
  unsetenv("OPENBLAS_CORETYPE");
}
#else
void choose_openblas_core() {}
#endif

// At load the BLAS takes OpenMP's count (OMP_NUM_THREADS when set), as set_num_threads would:
// OpenBLAS's pthread build would otherwise read OPENBLAS_NUM_THREADS or count the cores. Without
// OMP_NUM_THREADS, a container's CPU quota caps the count (cpu_quota.cpp says why).
[[maybe_unused]] const bool kBlasThreadsSynced = [] {
  choose_openblas_core();
#ifdef _OPENMP
  const int quota = std::getenv("OMP_NUM_THREADS") ? 0 : cgroup_cpu_limit();
  if (quota > 0 && quota < openmp_threads()) {
    omp_set_num_threads(quota);
    Eigen::setNbThreads(quota);
  }
#endif
  set_blas_threads(openmp_threads());
  return true;
}();

}  // namespace

void set_num_threads(int n) {
  if (n < 1) fail<Error>("tl::set_num_threads", "expected a positive thread count, got ", n);
#ifdef _OPENMP
  omp_set_num_threads(n);
#endif
  Eigen::setNbThreads(n);
  set_blas_threads(n);
}

int get_num_threads() { return openmp_threads(); }

void set_num_threads_of_this_thread([[maybe_unused]] int n) {
  if (n < 1)
    fail<Error>("tl::set_num_threads_of_this_thread", "expected a positive thread count, got ", n);
#ifdef _OPENMP
  omp_set_num_threads(n);  // an ICV of the calling thread's data environment only
#endif
}

std::string cpu_blas() {
#if TL_BLAS_OPENBLAS
  // The library loaded at run time, not the headers': "OpenBLAS 0.3.21 DYNAMIC_ARCH ... Zen ..."
  std::string config = openblas_get_config();
  std::string version = config.substr(0, config.find(' ', 9));  // "OpenBLAS 0.3.21"
  version = version.size() > 9 ? version.substr(9) : "?";
  const int parallel = openblas_get_parallel();
  const char* threading = parallel == 2 ? "openmp" : parallel == 1 ? "pthread" : "sequential";
  return "openblas " + version + " (" + threading + ", " + openblas_get_corename() + ")";
#elif TL_BLAS_BLIS
  const char* threading = bli_info_get_enable_openmp() ? "openmp"
                          : bli_info_get_enable_pthreads() ? "pthread"
                                                           : "sequential";
  return std::string("blis ") + bli_info_get_version_str() + " (" + threading + ", " +
         bli_arch_string(bli_arch_query_id()) + ")";
#else
  return "eigen";
#endif
}

}  // namespace tensorlet

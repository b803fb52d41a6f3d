// set_num_threads: one knob for OpenMP loops and Eigen's GEMM threads.
#include "tensorlet/core/threads.h"

#include <Eigen/Core>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "tensorlet/core/error.h"

namespace tensorlet {

void set_num_threads(int n) {
  if (n < 1) fail<Error>("tl::set_num_threads", "expected a positive thread count, got ", n);
#ifdef _OPENMP
  omp_set_num_threads(n);
#endif
  Eigen::setNbThreads(n);
}

int get_num_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

}  // namespace tensorlet

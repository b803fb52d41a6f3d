// CPU thread count for OpenMP loops, Eigen's matrix products and the BLAS, and which BLAS.
#pragma once

#include <string>

namespace tensorlet {

// Sets the threads of OpenMP loops, Eigen and the BLAS together (the BLAS starts with OpenMP's
// count, so OMP_NUM_THREADS governs both).
void set_num_threads(int n);
int get_num_threads();

// What float32/float64 matrix products run on: "openblas 0.3.21 (openmp)", "blis 0.9.0" or, in a
// build without an optimized BLAS, "eigen".
std::string cpu_blas();

}  // namespace tensorlet

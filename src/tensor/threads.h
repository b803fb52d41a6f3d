// CPU thread count for OpenMP loops, Eigen's matrix products and the BLAS, and which BLAS.
#pragma once

#include <string>

namespace tensorlet {

// Sets the threads of OpenMP loops, Eigen and the BLAS together (the BLAS starts with OpenMP's
// count, so OMP_NUM_THREADS governs both).
void set_num_threads(int n);
int get_num_threads();

// Runs the calling thread's own OpenMP loops on n threads, leaving every other thread's count (and
// Eigen's and the BLAS's) as it is: a helper thread's parallel loops make a second team of threads
// beside the main thread's, and two teams of all the cores spin against each other (the data
// loader's background thread takes 1, as PyTorch's DataLoader workers set_num_threads(1)).
void set_num_threads_of_this_thread(int n);

// What float32/float64 matrix products run on: "openblas 0.3.21 (openmp)", "blis 0.9.0" or, in a
// build without an optimized BLAS, "eigen".
std::string cpu_blas();

}  // namespace tensorlet

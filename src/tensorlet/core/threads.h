// CPU thread count for OpenMP loops and Eigen's matrix products.
#pragma once

namespace tensorlet {

void set_num_threads(int n);
int get_num_threads();

}  // namespace tensorlet

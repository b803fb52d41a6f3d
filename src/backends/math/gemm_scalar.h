// gemm's alpha and beta (addmm, baddbmm) as the type a backend multiplies in, shared by the CPU
// and CUDA backends so both scale the same way.
#pragma once

#include <cstdint>
#include <type_traits>

#include "tensorlet/tensor/scalar.h"

namespace tensorlet {

// A floating G (float for float16/bfloat16, as their compute type) takes the value rounded
// once; an integer G (Wide<T>, backends/math/wrapping_int.h) takes it wrapped to its width, so a
// product with it wraps as torch's integer arithmetic does. The front-end has checked that the
// value fits the tensors' dtype and is integral for an integral dtype.
template <typename G>
G gemm_scalar(Scalar v) {
  if constexpr (std::is_floating_point_v<G>)
    return static_cast<G>(v.to<double>());
  else
    return static_cast<G>(static_cast<uint64_t>(v.to<int64_t>()));
}

// beta == 0: the destination is not read (BLAS's rule, which torch's addmm keeps).
inline bool gemm_reads_out(Scalar beta) { return beta.to<double>() != 0; }

}  // namespace tensorlet

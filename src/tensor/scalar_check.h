// Range check of a scalar argument against the dtype it is used in, for the ops where torch refuses
// a value that does not fit (fill values, where's scalars, an integer pow's exponent, clamp bounds,
// item) instead of wrapping it as scalar arithmetic does.
#pragma once

#include "tensorlet/tensor/error.h"
#include "tensorlet/tensor/scalar.h"

namespace tensorlet {

// Throws DTypeError("[op] <what> <value> cannot be converted to type <dtype> without overflow").
inline void check_scalar_fits(const char* op, const char* what, Scalar value, DType dtype) {
  if (!value.fits(dtype))
    fail<DTypeError>(op, what, " ", value, " cannot be converted to type ", dtype,
                     " without overflow");
}

}  // namespace tensorlet

// NumPy's .npy files: tl::save and tl::load of one tensor, as numpy.save and numpy.load.
#pragma once

#include <string>

#include "tensorlet/tensor/tensor.h"

namespace tensorlet {

// Writes `t` (any device, any layout) to `path` as a .npy file that numpy.load reads: format 1.0
// (2.0 past a 64 KiB header), little-endian, C order, or Fortran order without a copy when `t` is
// a transposed contiguous block. The file appears whole or not at all: it is written beside
// `path` and renamed over it. bfloat16 has no NumPy dtype: DTypeError; a file that cannot be
// written: IOError naming it.
void save(const std::string& path, const Tensor& t);

// Reads a .npy file into a CPU tensor: formats 1.0-3.0; dtypes bool, uint8, int8, int16, int32,
// int64, float16, float32, float64, either byte order; a Fortran-order array comes back as a view
// with reversed strides, as NumPy's. Anything the file gets wrong (magic, version, header, dtype,
// a shape the data does not fill) is an IOError naming the file and the problem.
Tensor load(const std::string& path);

}  // namespace tensorlet

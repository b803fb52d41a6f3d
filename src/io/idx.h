// The IDX format of MNIST and Fashion-MNIST (train-images-idx3-ubyte, ...), plain or gzip'd:
// tl::load_idx reads one file into a CPU tensor of its dtype and shape.
#pragma once

#include <string>

#include "tensorlet/tensor/tensor.h"

namespace tensorlet {

// Reads an IDX file (big-endian: two zero bytes, a type byte, a dim count, the dims as uint32,
// then the data): type 0x08 uint8, 0x09 int8, 0x0B int16, 0x0C int32, 0x0D float32, 0x0E
// float64. A file starting with gzip's magic is inflated first (zlib; a build without it says
// so). Anything wrong (a missing file, a bad magic or type, data shorter or longer than the dims
// say, a corrupt gzip stream) is an IOError naming the file.
Tensor load_idx(const std::string& path);

}  // namespace tensorlet

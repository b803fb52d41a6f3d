// NumPy's .npy header (format 1.0-3.0): the dtype strings, building one, and parsing one without
// trusting any of it. Shared by .npy files and the members of .npz archives.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tensorlet/tensor/dtype.h"

namespace tensorlet::io {

struct NpyHeader {
  DType dtype = DType::Float32;
  bool big_endian = false;  // the data's byte order ('>'); 1-byte types are never swapped
  bool fortran_order = false;
  std::vector<int64_t> shape;
  uint64_t data_offset = 0;  // bytes from the start of the file to the data
  uint64_t data_bytes = 0;   // numel * element size, checked against overflow
};

// The whole header (magic, version, length, dict, padding to a multiple of 64, newline): format
// 1.0, or 2.0 when the dict does not fit 1.0's 16-bit length. bfloat16 has no NumPy dtype:
// DTypeError naming `op`.
std::string npy_header(DType dtype, const std::vector<int64_t>& shape, bool fortran_order,
                       const char* op);

// How many bytes the fixed prefix (magic, version, length) of a header takes: 10 for 1.0, 12 for
// 2.0/3.0; reads the version from the first 8 bytes (IOError naming `op` and `path` when they are
// not a .npy magic and a known version).
size_t npy_prefix_size(const unsigned char* first8, const char* op, const std::string& path);

// The dict's length from a full prefix.
uint32_t npy_dict_length(const unsigned char* prefix, size_t prefix_size);

// Parses the dict text (after the prefix) and checks the data it describes fits `available`
// bytes (what follows the header). Every problem is an IOError "[op] path: ...".
NpyHeader parse_npy_dict(const std::string& dict, size_t prefix_size, uint64_t available,
                         const char* op, const std::string& path);

}  // namespace tensorlet::io

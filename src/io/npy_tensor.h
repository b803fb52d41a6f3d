// The tensor side of a .npy file, shared by tl::save / tl::load and the members of .npz archives:
// what a tensor is written as, and a tensor read from a header and the bytes after it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "tensorlet/tensor/tensor.h"
#include "tensorlet/io/npy_format.h"

namespace tensorlet::io {

// What tl::save writes for `t`: the header, and a contiguous CPU tensor whose memory is the data
// (Fortran order, without a copy, when `t` is a transposed contiguous block). An undefined
// tensor: Error; bfloat16: DTypeError, both naming `op`.
struct NpyPayload {
  std::string header;
  Tensor data;
  uint64_t size() const { return header.size() + static_cast<uint64_t>(data.nbytes()); }
};
NpyPayload npy_payload(const Tensor& t, const char* op);

// A .npy file's bytes, read front to back: a file, a stored .npz member or an inflating stream.
class NpyReader {
 public:
  virtual ~NpyReader() = default;
  // How many bytes the .npy has in all.
  virtual uint64_t size() const = 0;
  // The next n bytes into `out`; past the end: IOError "truncated ...: `what` ...".
  virtual void read(void* out, size_t n, const char* what) = 0;
  // "file" or "member 'x.npy'", for messages.
  virtual std::string noun() const = 0;
};

// Reads and checks the header (magic, version, length, dict; the data must fit what follows).
// Every problem is an IOError "[op] path: what".
NpyHeader read_npy_header(NpyReader& in, const char* op, const std::string& path);

// The tensor of a header whose data comes next in `in`: a CPU tensor the data is read straight
// into, byte-swapped when big-endian, a view with reversed strides when in Fortran order.
Tensor read_npy_data(NpyReader& in, const NpyHeader& h);

}  // namespace tensorlet::io

// tl::save / tl::load of .npy files (io/npy.h): the header through npy_format.h, the data
// straight from or into the tensor's storage.
#include "tensorlet/io/npy.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "tensorlet/core/error.h"
#include "tensorlet/core/op_scope.h"
#include "tensorlet/io/file_io.h"
#include "tensorlet/io/npy_format.h"
#include "tensorlet/ops/factories.h"

namespace tensorlet {
namespace {

// The dims in reverse order: a Fortran-order array is its transpose's C-order data.
Shape reversed(const Shape& s) {
  std::vector<int64_t> v = s.vec();
  std::reverse(v.begin(), v.end());
  return Shape(v);
}

Shape reverse_permutation(int64_t n) {
  std::vector<int64_t> p(static_cast<size_t>(n));
  std::iota(p.rbegin(), p.rend(), int64_t{0});
  return Shape(p);
}

void swap_bytes(void* data, int64_t count, size_t width) {
  auto* p = static_cast<unsigned char*>(data);
  for (int64_t i = 0; i < count; ++i, p += width) std::reverse(p, p + width);
}

}  // namespace

void save(const std::string& path, const Tensor& t) {
  constexpr const char* op = "tl::save";
  profiler::OpScope scope(op);
  scope.inputs({&t});
  if (!t.defined()) fail<Error>(op, "the tensor is undefined");
  const Tensor host = t.cpu();
  // Fortran order when the data is already laid out so (a transposed contiguous block): its
  // reversed-dims view is then contiguous and is written as it is.
  const Tensor reversed_view =
      host.dim() >= 2 ? host.permute(reverse_permutation(host.dim())) : Tensor();
  const bool fortran =
      reversed_view.defined() && !host.is_contiguous() && reversed_view.is_contiguous();
  const Tensor data = fortran ? reversed_view : host.contiguous();
  const std::string header = io::npy_header(host.dtype(), host.shape().vec(), fortran, op);
  io::AtomicFileWriter out(path, op);
  out.write(header.data(), header.size());
  if (data.nbytes() > 0) out.write(data.data_ptr(), data.nbytes());
  out.commit();
}

Tensor load(const std::string& path) {
  constexpr const char* op = "tl::load";
  profiler::OpScope scope(op);
  const io::FileReader in(path, op);
  unsigned char prefix[12] = {};
  in.read_at(0, prefix, 8, "the .npy magic and version");
  const size_t prefix_size = io::npy_prefix_size(prefix, op, path);
  in.read_at(8, prefix + 8, prefix_size - 8, "the header length");
  const uint64_t dict_size = io::npy_dict_length(prefix, prefix_size);
  if (dict_size > in.size() - prefix_size)
    io::fail_file(op, path,
                  "the header length " + std::to_string(dict_size) + " is larger than the file (" +
                      std::to_string(in.size()) + " bytes)");
  std::string dict(dict_size, '\0');
  in.read_at(prefix_size, dict.data(), dict.size(), "the header");
  const io::NpyHeader h =
      io::parse_npy_dict(dict, prefix_size, in.size() - prefix_size - dict_size, op, path);
  const Shape shape(h.shape);
  Tensor t = empty(h.fortran_order ? reversed(shape) : shape, h.dtype);
  if (h.data_bytes > 0) in.read_at(h.data_offset, t.data_ptr(), h.data_bytes, "the data");
  if (h.big_endian) swap_bytes(t.data_ptr(), t.numel(), t.element_size());
  return h.fortran_order ? t.permute(reverse_permutation(t.dim())) : t;
}

}  // namespace tensorlet

// Tensors to and from .npy bytes (npy_tensor.h): the layout of a written tensor, and the header
// and data of a read one, for .npy files and .npz members alike.
#include "tensorlet/io/npy_tensor.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "tensorlet/tensor/error.h"
#include "tensorlet/io/file_io.h"
#include "tensorlet/ops/factories.h"

namespace tensorlet::io {
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

NpyPayload npy_payload(const Tensor& t, const char* op) {
  if (!t.defined()) fail<Error>(op, "the tensor is undefined");
  const Tensor host = t.cpu();
  // Fortran order when the data is already laid out so (a transposed contiguous block): its
  // reversed-dims view is then contiguous and is written as it is.
  const Tensor reversed_view =
      host.dim() >= 2 ? host.permute(reverse_permutation(host.dim())) : Tensor();
  const bool fortran =
      reversed_view.defined() && !host.is_contiguous() && reversed_view.is_contiguous();
  NpyPayload p;
  p.header = npy_header(host.dtype(), host.shape().vec(), fortran, op);
  p.data = fortran ? reversed_view : host.contiguous();
  return p;
}

NpyHeader read_npy_header(NpyReader& in, const char* op, const std::string& path) {
  unsigned char prefix[12] = {};
  in.read(prefix, 8, "the .npy magic and version");
  const size_t prefix_size = npy_prefix_size(prefix, op, path);
  in.read(prefix + 8, prefix_size - 8, "the header length");
  const uint64_t dict_size = npy_dict_length(prefix, prefix_size);
  // Checked before the dict is allocated: a length field cannot make us allocate more than the
  // .npy holds.
  if (dict_size > in.size() - prefix_size)
    fail_file(op, path,
              "the header length " + std::to_string(dict_size) + " is larger than the " +
                  in.noun() + " (" + std::to_string(in.size()) + " bytes)");
  std::string dict(dict_size, '\0');
  in.read(dict.data(), dict.size(), "the header");
  return parse_npy_dict(dict, prefix_size, in.size() - prefix_size - dict_size, op, path);
}

Tensor read_npy_data(NpyReader& in, const NpyHeader& h) {
  const Shape shape(h.shape);
  Tensor t = empty(h.fortran_order ? reversed(shape) : shape, h.dtype);
  if (h.data_bytes > 0) in.read(t.data_ptr(), h.data_bytes, "the data");
  if (h.big_endian) swap_bytes(t.data_ptr(), t.numel(), t.element_size());
  return h.fortran_order ? t.permute(reverse_permutation(t.dim())) : t;
}

}  // namespace tensorlet::io

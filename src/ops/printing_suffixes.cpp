// Suffixes of a tensor's repr and their wrapping, as torch's _str_intern and _add_suffixes.
#include "tensorlet/ops/printing_suffixes.h"

#include <sstream>

#include "tensorlet/tensor/tensor.h"

namespace tensorlet::printing {

namespace {

// Python's str(tuple(shape)): "(0, 3)", "(0,)" for one dim.
std::string python_tuple(const Shape& shape) {
  std::ostringstream os;
  os << "(";
  for (int64_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
  os << (shape.size() == 1 ? ",)" : ")");
  return os.str();
}

std::string dtype_suffix(DType dtype) { return std::string("dtype=torch.") + dtype_name(dtype); }

}  // namespace

std::vector<std::string> suffixes_of(const Tensor& t) {
  std::vector<std::string> out;
  // The default device is the CPU, so every CUDA tensor names its device.
  if (!t.is_cpu()) out.push_back("device='" + t.device().str() + "'");
  if (t.numel() == 0) {
    // No values to tell the dtype or the shape by: both are spelled out (as NumPy, a 1-D empty
    // tensor's "[]" already says its size).
    if (t.dim() != 1) out.push_back("size=" + python_tuple(t.shape()));
    if (t.dtype() != kFloat32) out.push_back(dtype_suffix(t.dtype()));
  } else if (t.dtype() != kFloat32 && t.dtype() != kInt64 && t.dtype() != kBool) {
    out.push_back(dtype_suffix(t.dtype()));
  }
  return out;
}

std::string add_suffixes(const std::string& text, const std::vector<std::string>& suffixes,
                         int64_t indent, int64_t linewidth) {
  std::string out = text;
  // torch: len(s) - s.rfind("\n") + 1, which is the last line's length plus 2 (rfind gives -1
  // without a newline); kept as is so lines wrap exactly where torch wraps them.
  const size_t newline = text.rfind('\n');
  int64_t last_line = static_cast<int64_t>(text.size()) -
                      (newline == std::string::npos ? -1 : static_cast<int64_t>(newline)) + 1;
  for (const std::string& suffix : suffixes) {
    const int64_t length = static_cast<int64_t>(suffix.size());
    if (last_line + length + 2 > linewidth) {
      out.append(",\n").append(static_cast<size_t>(indent), ' ').append(suffix);
      last_line = indent + length;
    } else {
      out.append(", ").append(suffix);
      last_line += length + 2;
    }
  }
  out.append(")");
  return out;
}

}  // namespace tensorlet::printing

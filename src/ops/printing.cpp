// operator<< for tensors, formatted as PyTorch prints them under tl::set_printoptions (by default
// precision 4, summarised past 1000 elements with 3 edge items, 80-column lines), with
// device/size/dtype suffixes when not default.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "tensorlet/ops/printing_gather.h"
#include "tensorlet/ops/printing_suffixes.h"
#include "tensorlet/tensor/tensor.h"

namespace tensorlet {
namespace {

using printing::elides;
using printing::ShownElements;

// Chooses one format for every shown element, as torch's _Formatter does. Integers print exactly
// (never through a double: int64 values past 2^53 would be rounded).
class Formatter {
 public:
  Formatter(DType dtype, const ShownElements& shown, const PrintOptions& options)
      : dtype_(dtype), shown_(shown), precision_(options.precision) {
    if (!shown.floating) {
      for (size_t i = 0; i < shown.ints.size(); ++i)
        width_ = std::max<int64_t>(width_, format(i).size());
      return;
    }
    std::vector<double> nonzero;  // |v| of the non-zero finite values: torch decides from these
    for (double v : shown.floats)
      if (std::isfinite(v) && v != 0) nonzero.push_back(std::abs(v));
    int_mode_ =
        std::all_of(nonzero.begin(), nonzero.end(), [](double v) { return v == std::ceil(v); });
    if (!nonzero.empty()) {
      double mx = *std::max_element(nonzero.begin(), nonzero.end());
      double mn = *std::min_element(nonzero.begin(), nonzero.end());
      sci_ = mx / mn > 1000.0 || mx > 1e8 || mn < 1e-4;
    }
    if (options.sci_mode) sci_ = *options.sci_mode;  // as torch: the user's choice wins
    // As torch: the width comes from the non-zero finite values only.
    for (size_t i = 0; i < shown.floats.size(); ++i) {
      double v = shown.floats[i];
      if (std::isfinite(v) && v != 0) width_ = std::max<int64_t>(width_, format(i).size());
    }
  }

  // The i-th shown element, unpadded.
  std::string format(size_t i) const {
    char buf[512];  // %.100f of 1e308: 410 characters
    if (dtype_ == kBool) return shown_.ints[i] != 0 ? "True" : "False";
    if (!shown_.floating) return std::to_string(shown_.ints[i]);
    const double v = shown_.floats[i];
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    if (sci_) {
      std::snprintf(buf, sizeof buf, "%.*e", precision_, v);
    } else if (int_mode_) {
      std::snprintf(buf, sizeof buf, "%.0f.", v);
    } else {
      std::snprintf(buf, sizeof buf, "%.*f", precision_, v);
    }
    return buf;
  }

  std::string padded(size_t i) const {
    std::string s = format(i);
    // append() rather than operator+: GCC 12 warns falsely (-Wrestrict) on the latter at -O3.
    std::string out(std::max<int64_t>(0, width_ - static_cast<int64_t>(s.size())), ' ');
    out.append(s);
    return out;
  }
  int64_t width() const { return width_; }

 private:
  DType dtype_;
  const ShownElements& shown_;
  int precision_;
  bool int_mode_ = true;
  bool sci_ = false;
  int64_t width_ = 1;
};

// Lays out the shown elements as torch's _tensor_str_with_formatter: nested brackets, "..." for
// the elided middle of a summarised dim, rows wrapped at the line width.
struct Printer {
  const Shape& shape;  // the tensor's
  const ShownElements& shown;
  const Shape grid_strides;  // row-major strides of shown.grid
  const Formatter& fmt;
  const PrintOptions& options;

  // Positions along `dim` within the grid, with -1 where torch prints its ellipsis.
  std::vector<int64_t> positions(int64_t dim) const {
    std::vector<int64_t> pos;
    const bool elided = elides(shape[dim], shown.summarize, options.edgeitems);
    for (int64_t i = 0; i < shown.grid[dim]; ++i) {
      if (elided && i == options.edgeitems) pos.push_back(-1);
      pos.push_back(i);
    }
    if (elided && options.edgeitems == 0) pos.push_back(-1);  // nothing but the ellipsis
    return pos;
  }

  void print(std::ostream& os, int64_t dim, int64_t offset, int64_t indent) const {
    std::vector<int64_t> idx = positions(dim);
    os << "[";
    if (dim == shape.size() - 1) {
      int64_t per_line = std::max<int64_t>(1, (options.linewidth - indent) / (fmt.width() + 2));
      for (size_t k = 0; k < idx.size(); ++k) {
        if (k > 0) {
          os << ",";
          if (k % per_line == 0) {
            os << "\n" << std::string(indent + 1, ' ');
          } else {
            os << " ";
          }
        }
        if (idx[k] < 0) {
          os << " ...";  // torch's inner-dim ellipsis element
        } else {
          os << fmt.padded(offset + idx[k]);
        }
      }
    } else {
      std::string sep(1, ',');
      sep.append(shape.size() - dim - 1, '\n');
      sep.append(indent + 1, ' ');
      for (size_t k = 0; k < idx.size(); ++k) {
        if (k > 0) os << sep;
        if (idx[k] < 0) {
          os << "...";
        } else {
          print(os, dim + 1, offset + idx[k] * grid_strides[dim], indent + 1);
        }
      }
    }
    os << "]";
  }
};

}  // namespace

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  if (!t.defined()) return os << "[ undefined tensor ]";
  const PrintOptions options = get_printoptions();  // one snapshot for the whole tensor
  const std::string prefix = "tensor(";
  std::ostringstream body;
  body << prefix;
  if (t.numel() == 0) {
    body << "[]";
  } else {
    const ShownElements shown = printing::gather_shown(t, "tl::operator<<", options);
    Formatter fmt(t.dtype(), shown, options);
    if (t.dim() == 0) {
      body << fmt.format(0);
    } else {
      Printer{t.shape(), shown, contiguous_strides(shown.grid), fmt, options}.print(body, 0, 0,
                                                                                    prefix.size());
    }
  }
  const int64_t indent = static_cast<int64_t>(prefix.size());
  return os << printing::add_suffixes(body.str(), printing::suffixes_of(t), indent,
                                      options.linewidth);
}

}  // namespace tensorlet

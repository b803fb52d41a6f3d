// operator<< for tensors, formatted as PyTorch prints them (precision 4, summarised past 1000
// elements with 3 edge items, 80-column lines, dtype and device suffixes when not default).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace tensorlet {
namespace {

constexpr int64_t kThreshold = 1000;
constexpr int64_t kEdgeItems = 3;
constexpr int64_t kLineWidth = 80;

// Indices along a dim that are shown: all, or the first and last kEdgeItems when summarising.
std::vector<int64_t> shown_indices(int64_t n, bool summarize) {
  std::vector<int64_t> idx;
  if (summarize && n > 2 * kEdgeItems) {
    for (int64_t i = 0; i < kEdgeItems; ++i) idx.push_back(i);
    idx.push_back(-1);  // the "..." marker
    for (int64_t i = n - kEdgeItems; i < n; ++i) idx.push_back(i);
  } else {
    for (int64_t i = 0; i < n; ++i) idx.push_back(i);
  }
  return idx;
}

// Chooses one format for every shown element, as torch's _Formatter does.
class Formatter {
 public:
  Formatter(DType dtype, const std::vector<double>& shown) : dtype_(dtype) {
    if (!is_floating_point(dtype)) {
      for (double v : shown) width_ = std::max<int64_t>(width_, format(v).size());
      return;
    }
    std::vector<double> finite;
    for (double v : shown)
      if (std::isfinite(v)) finite.push_back(v);
    int_mode_ =
        std::all_of(finite.begin(), finite.end(), [](double v) { return v == std::ceil(v); });
    std::vector<double> nonzero;
    for (double v : finite)
      if (v != 0) nonzero.push_back(std::abs(v));
    if (!nonzero.empty()) {
      double mx = *std::max_element(nonzero.begin(), nonzero.end());
      double mn = *std::min_element(nonzero.begin(), nonzero.end());
      sci_ = mx / mn > 1000.0 || mx > 1e8 || (!int_mode_ && mn < 1e-4);
    }
    // As torch: the width comes from the non-zero finite values only.
    for (double v : shown)
      if (std::isfinite(v) && v != 0) width_ = std::max<int64_t>(width_, format(v).size());
  }

  std::string format(double v) const {
    char buf[64];
    if (dtype_ == kBool) return v != 0 ? "True" : "False";
    if (!is_floating_point(dtype_)) {
      std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
      return buf;
    }
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    if (sci_) {
      std::snprintf(buf, sizeof buf, "%.4e", v);
    } else if (int_mode_) {
      std::snprintf(buf, sizeof buf, "%.0f.", v);
    } else {
      std::snprintf(buf, sizeof buf, "%.4f", v);
    }
    return buf;
  }

  std::string padded(double v) const {
    std::string s = format(v);
    // append() rather than operator+: GCC 12 warns falsely (-Wrestrict) on the latter at -O3.
    std::string out(std::max<int64_t>(0, width_ - static_cast<int64_t>(s.size())), ' ');
    out.append(s);
    return out;
  }
  int64_t width() const { return width_; }

 private:
  DType dtype_;
  bool int_mode_ = false;
  bool sci_ = false;
  int64_t width_ = 1;
};

struct Printer {
  const std::vector<double>& values;  // row-major, whole tensor
  const Shape& shape;
  const Shape strides;  // contiguous strides of shape
  bool summarize;
  const Formatter& fmt;

  void print(std::ostream& os, int64_t dim, int64_t offset, int64_t indent) const {
    int64_t n = shape[dim];
    std::vector<int64_t> idx = shown_indices(n, summarize);
    os << "[";
    if (dim == shape.size() - 1) {
      int64_t per_line = std::max<int64_t>(1, (kLineWidth - indent) / (fmt.width() + 2));
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
          os << fmt.padded(values[offset + idx[k]]);
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
          print(os, dim + 1, offset + idx[k] * strides[dim], indent + 1);
        }
      }
    }
    os << "]";
  }
};

// Gathers the values that will be shown, for the formatter's width and mode decisions.
void collect_shown(const std::vector<double>& values, const Shape& shape, const Shape& strides,
                   bool summarize, int64_t dim, int64_t offset, std::vector<double>& out) {
  if (shape.size() == 0) {
    out.push_back(values[0]);
    return;
  }
  for (int64_t i : shown_indices(shape[dim], summarize)) {
    if (i < 0) continue;
    if (dim == shape.size() - 1) {
      out.push_back(values[offset + i]);
    } else {
      collect_shown(values, shape, strides, summarize, dim + 1, offset + i * strides[dim], out);
    }
  }
}

}  // namespace

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  if (!t.defined()) return os << "[ undefined tensor ]";
  const Shape& shape = t.shape();
  std::vector<double> values = t.to(kFloat64).to_vector<double>();
  std::ostringstream body;
  const std::string prefix = "tensor(";
  if (t.numel() == 0) {
    body << "[]";
  } else {
    bool summarize = t.numel() > kThreshold;
    Shape strides = contiguous_strides(shape);
    std::vector<double> shown;
    collect_shown(values, shape, strides, summarize, 0, 0, shown);
    Formatter fmt(t.dtype(), shown);
    if (shape.size() == 0) {
      body << fmt.format(values[0]);
    } else {
      Printer{values, shape, strides, summarize, fmt}.print(body, 0, 0, prefix.size());
    }
  }
  os << prefix << body.str();
  if (t.numel() == 0 && !(shape.size() == 1 && shape[0] == 0)) {
    os << ", size=(";
    for (int64_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
    os << (shape.size() == 1 ? ",)" : ")");
  }
  if (!t.is_cpu()) os << ", device='" << t.device() << "'";
  if (t.dtype() != kFloat32 && t.dtype() != kInt64 && t.dtype() != kBool)
    os << ", dtype=torch." << t.dtype();
  return os << ")";
}

}  // namespace tensorlet

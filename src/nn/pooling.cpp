// tl::nn's pooling layers: forward through ops/pooling.h and torch's printed forms.
#include "tensorlet/nn/pooling.h"

#include "tensorlet/ops/pooling.h"

namespace tensorlet::nn {
namespace {

// As torch prints what the module was given: 2, or (2, 3).
void print_size(std::ostream& s, const std::vector<int64_t>& v) {
  if (v.size() == 1) {
    s << v[0];
    return;
  }
  s << "(";
  for (size_t i = 0; i < v.size(); ++i) s << (i ? ", " : "") << v[i];
  s << ")";
}

}  // namespace

Tensor MaxPool2dImpl::forward(const Tensor& x) const {
  return max_pool2d(x, options.kernel_size(), options.stride(), options.padding(),
                    options.dilation(), options.ceil_mode());
}

void MaxPool2dImpl::pretty_print(std::ostream& stream) const {
  stream << "MaxPool2d(kernel_size=";
  print_size(stream, options.kernel_size());
  stream << ", stride=";
  print_size(stream, options.stride());
  stream << ", padding=";
  print_size(stream, options.padding());
  stream << ", dilation=";
  print_size(stream, options.dilation());
  stream << ", ceil_mode=" << (options.ceil_mode() ? "True" : "False") << ")";
}

Tensor AvgPool2dImpl::forward(const Tensor& x) const {
  return avg_pool2d(x, options.kernel_size(), options.stride(), options.padding(),
                    options.ceil_mode(), options.count_include_pad(), options.divisor_override());
}

void AvgPool2dImpl::pretty_print(std::ostream& stream) const {
  stream << "AvgPool2d(kernel_size=";
  print_size(stream, options.kernel_size());
  stream << ", stride=";
  print_size(stream, options.stride());
  stream << ", padding=";
  print_size(stream, options.padding());
  stream << ")";
}

Tensor AdaptiveAvgPool2dImpl::forward(const Tensor& x) const {
  return adaptive_avg_pool2d(x, options.output_size());
}

void AdaptiveAvgPool2dImpl::pretty_print(std::ostream& stream) const {
  stream << "AdaptiveAvgPool2d(output_size=";
  print_size(stream, options.output_size());
  stream << ")";
}

}  // namespace tensorlet::nn

// tl::nn::functional: activations, flatten and dropout over tensorlet's ops.
#include "tensorlet/nn/functional.h"

#include "tensorlet/ops/convolution.h"
#include "tensorlet/ops/elementwise.h"
#include "tensorlet/ops/numerics.h"
#include "tensorlet/ops/pooling.h"
#include "tensorlet/ops/random.h"
#include "tensorlet/tensor/error.h"
#include "tensorlet/tensor/grad_mode.h"

namespace tensorlet::nn::functional {

Tensor relu(const Tensor& x) { return tensorlet::relu(x); }
Tensor gelu(const Tensor& x, std::string_view approximate) {
  return tensorlet::gelu(x, approximate);
}
Tensor silu(const Tensor& x) { return tensorlet::silu(x); }
Tensor tanh(const Tensor& x) { return tensorlet::tanh(x); }
Tensor sigmoid(const Tensor& x) { return tensorlet::sigmoid(x); }
Tensor softmax(const Tensor& x, int64_t dim) { return tensorlet::softmax(x, dim); }
Tensor log_softmax(const Tensor& x, int64_t dim) { return tensorlet::log_softmax(x, dim); }

Tensor flatten(const Tensor& x, int64_t start_dim, int64_t end_dim) {
  check_defined(x, "tl::nn::functional::flatten");
  return x.flatten(start_dim, end_dim);
}

Tensor dropout(const Tensor& x, double p, bool training, const std::optional<Generator>& gen) {
  constexpr const char* op = "tl::nn::functional::dropout";
  check_defined(x, op);
  TL_CHECK(p >= 0 && p <= 1, Error, op, "dropout probability has to be between 0 and 1, but got ",
           p);
  TL_CHECK(is_floating_point(x.dtype()), DTypeError, op, "expected a floating point input, got ",
           x.dtype());
  if (!training || p == 0) return x;
  if (p == 1) return x * 0.0;
  // The kept elements' scale folded into the mask: one recorded multiply, whose gradient is
  // g * mask / (1 - p).
  Tensor scaled_mask;
  {
    NoGradGuard no_grad;
    scaled_mask = bernoulli(x.detach(), 1 - p, gen) * (1 / (1 - p));
  }
  return x * scaled_mask;
}

Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
              IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  return tensorlet::conv2d(input, weight, bias, stride, padding, dilation, groups);
}
Tensor max_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  return tensorlet::max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode);
}
Tensor avg_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                  std::optional<int64_t> divisor_override) {
  return tensorlet::avg_pool2d(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                               divisor_override);
}
Tensor adaptive_avg_pool2d(const Tensor& input, IntArrayRef output_size) {
  return tensorlet::adaptive_avg_pool2d(input, output_size);
}

}  // namespace tensorlet::nn::functional

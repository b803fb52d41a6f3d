// tl::nn::functional: the layers' functions (torch.nn.functional's names), over tensorlet's ops,
// differentiable through them.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "tensorlet/tensor/generator.h"
#include "tensorlet/tensor/int_array_ref.h"
#include "tensorlet/tensor/tensor.h"

namespace tensorlet::nn::functional {

Tensor relu(const Tensor& x);
Tensor gelu(const Tensor& x, std::string_view approximate = "none");
Tensor silu(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor softmax(const Tensor& x, int64_t dim);
Tensor log_softmax(const Tensor& x, int64_t dim);
// x with dims start_dim..end_dim merged (torch.flatten).
Tensor flatten(const Tensor& x, int64_t start_dim = 1, int64_t end_dim = -1);
// In training, each element zeroed with probability p and the rest scaled by 1 / (1 - p), the
// mask drawn from `gen` (default: tensorlet's generator; Philox, so one seed gives one mask on
// the CPU and on CUDA); x itself otherwise. Error naming tl::nn::functional::dropout for a p
// outside [0, 1] or a non-floating x.
Tensor dropout(const Tensor& x, double p = 0.5, bool training = true,
               const std::optional<Generator>& gen = std::nullopt);

// Convolution and pooling: tl::conv2d, tl::max_pool2d, tl::avg_pool2d and
// tl::adaptive_avg_pool2d (ops/convolution.h, ops/pooling.h) under torch.nn.functional's names.
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias = {},
              IntArrayRef stride = 1, IntArrayRef padding = 0, IntArrayRef dilation = 1,
              int64_t groups = 1);
Tensor max_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {},
                  IntArrayRef padding = 0, IntArrayRef dilation = 1, bool ceil_mode = false);
Tensor avg_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {},
                  IntArrayRef padding = 0, bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<int64_t> divisor_override = std::nullopt);
Tensor adaptive_avg_pool2d(const Tensor& input, IntArrayRef output_size);

}  // namespace tensorlet::nn::functional

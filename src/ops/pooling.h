// 2-D pooling as torch.nn.functional's: max_pool2d, avg_pool2d and adaptive_avg_pool2d of
// [N, C, H, W] or unbatched [C, H, W] input, on every device, differentiable.
#pragma once

#include <cstdint>
#include <optional>

#include "tensorlet/tensor/int_array_ref.h"
#include "tensorlet/tensor/tensor.h"

namespace tensorlet {

// The largest element of each window, the padding counting as -inf and a NaN winning (torch's).
// Its gradient goes to the window's first largest element. stride defaults to kernel_size. Throws
// ShapeError (dims, sizes < 1, padding over half the kernel, an output below 1), DTypeError for
// a non-floating input, naming tl::max_pool2d.
Tensor max_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {},
                  IntArrayRef padding = 0, IntArrayRef dilation = 1, bool ceil_mode = false);

// The mean of each window: divided by the window's size within the padded input
// (count_include_pad, torch's default) or by its elements inside the input, or by
// divisor_override. Errors as max_pool2d's, naming tl::avg_pool2d.
Tensor avg_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {},
                  IntArrayRef padding = 0, bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<int64_t> divisor_override = std::nullopt);

// The mean over output_size (H_out, W_out, or one value for both) windows spanning the input as
// torch's: window i of n over a size-s dim covers [floor(i s / n), ceil((i + 1) s / n)). Computed
// one dim at a time, each window's elements gathered and summed then divided by its length (a
// mean when the output is 1 x 1): a NaN or inf stays in the windows that hold it, as torch's.
Tensor adaptive_avg_pool2d(const Tensor& input, IntArrayRef output_size);

}  // namespace tensorlet

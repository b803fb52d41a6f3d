// One 2-D convolution's geometry as the backends' native convolutions take it (Backend::conv2d_*).
#pragma once

#include <cstdint>

namespace tensorlet {

// NCHW input [N, C, H, W], weight [O, C / groups, kH, kW], output [N, O, Ho, Wo]; the sizes come
// from the tensors, the rest from here (every value already checked by tl::conv2d).
struct Conv2dArgs {
  int64_t stride[2] = {1, 1};
  int64_t padding[2] = {0, 0};
  int64_t dilation[2] = {1, 1};
  int64_t groups = 1;
};

}  // namespace tensorlet

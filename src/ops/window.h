// Sliding 2-D windows over [N, C, H, W] (internal): the geometry conv2d and the pools share, its
// checks, and the windows gathered as columns with one index_select (im2col as a recorded op).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "tensorlet/tensor/int_array_ref.h"
#include "tensorlet/tensor/tensor.h"

namespace tensorlet::detail {

// A pair argument as torch's _pair: one value for both dims or one per dim (H, W). ShapeError
// naming `op` for another length; `what` names the argument.
std::array<int64_t, 2> expand_pair(IntArrayRef v, const char* what, const char* op);

struct Window2d {
  std::array<int64_t, 2> kernel, stride, padding, dilation;
  int64_t in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  int64_t taps() const { return kernel[0] * kernel[1]; }
  int64_t positions() const { return out_h * out_w; }
};

// The output size of one dim (torch's pooling_output_shape / conv's formula): floor, or ceil
// with the last window starting inside the input or its left padding. Throws ShapeError naming
// `op` when it is below 1.
int64_t window_output_size(int64_t in, int64_t kernel, int64_t stride, int64_t pad,
                           int64_t dilation, bool ceil_mode, const char* op);

// Checks kernel, stride and dilation >= 1 and padding >= 0 (ShapeError naming op), and fills in
// the output size of an input of spatial size in_h x in_w.
Window2d make_window(std::array<int64_t, 2> kernel, std::array<int64_t, 2> stride,
                     std::array<int64_t, 2> padding, std::array<int64_t, 2> dilation, int64_t in_h,
                     int64_t in_w, bool ceil_mode, const char* op);

// x [N, C, H, W] -> [N, C, taps, positions]: element (t, p) is the input under tap t of window p,
// or `pad_value` where the tap falls in the padding. One index_select of x's flattened spatial
// dim (with one pad element appended), so its gradient is index_select's (an index_add). The
// index lives in a per-device cache keyed by the geometry.
Tensor window_columns(const Tensor& x, const Window2d& w, double pad_value);

// The adjoint of window_columns as recorded ops: columns g [N, C, taps, L] added back into
// zeros of x_shape (dtype) where they were read (index_add through the cached index).
Tensor window_columns_adjoint(const Tensor& g, const Window2d& w, const Shape& x_shape,
                              DType dtype);

// The CPU's window_columns for float32/float64 (window_columns_cpu.cpp): an im2col loop forward,
// a col2im loop backward (node Im2ColBackward0), the adjoint above when the backward records.
bool cpu_window_columns_applies(const Tensor& x);
Tensor cpu_window_columns(const Tensor& x, const Window2d& w, double pad_value);

}  // namespace tensorlet::detail

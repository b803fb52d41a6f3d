// Sliding 2-D windows: the geometry's checks and output sizes, and the im2col index (cached per
// geometry and device) that gathers every window's taps with one index_select (on the CPU, for
// float32/float64, window_columns_cpu.cpp's loops instead).
#include "tensorlet/ops/window.h"

#include <map>
#include <mutex>
#include <tuple>

#include "tensorlet/ops/elementwise.h"
#include "tensorlet/ops/factories.h"
#include "tensorlet/ops/index_range.h"
#include "tensorlet/ops/indexing.h"
#include "tensorlet/ops/joining.h"
#include "tensorlet/ops/scatter.h"
#include "tensorlet/tensor/error.h"
#include "tensorlet/tensor/grad_mode.h"
#include "tensorlet/tensor/shape.h"

namespace tensorlet::detail {

std::array<int64_t, 2> expand_pair(IntArrayRef v, const char* what, const char* op) {
  if (v.size() == 1) return {v[0], v[0]};
  TL_CHECK(v.size() == 2, ShapeError, op, "expected ", what,
           " to be a single integer or a list of 2 integers, got ", v.size(), " values");
  return {v[0], v[1]};
}

int64_t window_output_size(int64_t in, int64_t kernel, int64_t stride, int64_t pad,
                           int64_t dilation, bool ceil_mode, const char* op) {
  // (in + 2 pad - dilation (kernel - 1) - 1) / stride + 1, every term checked: a huge kernel or
  // dilation must be an error, not a wrapped size.
  int64_t span = 0, padded = 0;
  if (!checked_mul(dilation, kernel - 1, &span) || !checked_mul(pad, 2, &padded) ||
      __builtin_add_overflow(padded, in, &padded))
    fail<ShapeError>(op, "the window (kernel ", kernel, ", dilation ", dilation, ", padding ", pad,
                     ") overflows int64");
  // torch's pooling_output_shape: rounded toward -inf (or up with ceil_mode, where the last
  // window may hang over the padded input).
  const int64_t num = padded - span - 1 + (ceil_mode ? stride - 1 : 0);
  int64_t out = (num >= 0 ? num / stride : -((-num + stride - 1) / stride)) + 1;
  // ceil_mode: the last window must start inside the input or its left padding (torch's rule).
  if (ceil_mode && out > 0 && (out - 1) * stride >= in + pad) --out;
  TL_CHECK(out >= 1, ShapeError, op, "Given input size ", in, " (padded by ", pad,
           " on each side), ", "the kernel of size ", kernel, " with dilation ", dilation,
           " does not fit: the calculated output size is ", out, ", which is too small");
  return out;
}

Window2d make_window(std::array<int64_t, 2> kernel, std::array<int64_t, 2> stride,
                     std::array<int64_t, 2> padding, std::array<int64_t, 2> dilation, int64_t in_h,
                     int64_t in_w, bool ceil_mode, const char* op) {
  for (int i = 0; i < 2; ++i) {
    TL_CHECK(kernel[i] >= 1, ShapeError, op, "kernel size should be greater than zero, got (",
             kernel[0], ", ", kernel[1], ")");
    TL_CHECK(stride[i] >= 1, ShapeError, op, "stride should be greater than zero, got (", stride[0],
             ", ", stride[1], ")");
    TL_CHECK(padding[i] >= 0, ShapeError, op, "negative padding is not supported, got (",
             padding[0], ", ", padding[1], ")");
    TL_CHECK(dilation[i] >= 1, ShapeError, op, "dilation should be greater than zero, got (",
             dilation[0], ", ", dilation[1], ")");
  }
  Window2d w{kernel, stride, padding, dilation, in_h, in_w, 0, 0};
  w.out_h = window_output_size(in_h, kernel[0], stride[0], padding[0], dilation[0], ceil_mode, op);
  w.out_w = window_output_size(in_w, kernel[1], stride[1], padding[1], dilation[1], ceil_mode, op);
  int64_t n = 0;
  TL_CHECK(checked_mul(w.taps(), w.positions(), &n), ShapeError, op,
           "the number of window taps overflows int64");
  return w;
}

namespace {

using WindowKey = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                             int64_t, int64_t, int64_t, int64_t, int, int>;

// Flat positions in [H * W + 1] (H * W: the pad element) of every (tap, window), [taps * L],
// computed with tensor ops on the device itself (no host copy, no synchronization).
Tensor build_index(const Window2d& w, Device device) {
  const TensorOptions ints = TensorOptions(kInt64).device(device);
  const auto [kh, kw] = w.kernel;
  const Tensor r = (arange(kh, ints) * w.dilation[0]).view({kh, 1, 1, 1}) +
                   (arange(w.out_h, ints) * w.stride[0] - w.padding[0]).view({1, 1, w.out_h, 1});
  const Tensor c = (arange(kw, ints) * w.dilation[1]).view({1, kw, 1, 1}) +
                   (arange(w.out_w, ints) * w.stride[1] - w.padding[1]).view({1, 1, 1, w.out_w});
  const Tensor inside = logical_and(logical_and(ge(r, int64_t{0}), lt(r, w.in_h)),
                                    logical_and(ge(c, int64_t{0}), lt(c, w.in_w)));
  const Tensor flat = r * w.in_w + c;
  return where(inside, flat, full({}, w.in_h * w.in_w, ints)).reshape({-1});
}

Tensor cached_index(const Window2d& w, Device device) {
  // Kept for the process's life (never destroyed: a CUDA tensor must not be freed after the
  // runtime has gone at exit); emptied when it holds many geometries.
  static auto* cache = new std::map<WindowKey, Tensor>();
  static auto* mutex = new std::mutex();
  const WindowKey key{w.kernel[0],
                      w.kernel[1],
                      w.stride[0],
                      w.stride[1],
                      w.padding[0],
                      w.padding[1],
                      w.dilation[0],
                      w.dilation[1],
                      w.in_h,
                      w.in_w,
                      w.out_h,
                      w.out_w,
                      static_cast<int>(device.type()),
                      device.index()};
  {
    std::lock_guard<std::mutex> lock(*mutex);
    auto it = cache->find(key);
    if (it != cache->end()) return it->second;
  }
  Tensor index = build_index(w, device);
  // Its values are positions in [0, in_h in_w]: the last one the appended pad column.
  trust_index_values(index, 0, w.in_h * w.in_w);
  std::lock_guard<std::mutex> lock(*mutex);
  if (cache->size() >= 256) cache->clear();
  cache->emplace(key, index);
  return index;
}

}  // namespace

Tensor window_columns(const Tensor& x, const Window2d& w, double pad_value) {
  if (cpu_window_columns_applies(x)) return cpu_window_columns(x, w, pad_value);
  const int64_t n = x.size(0), c = x.size(1);
  Tensor index;
  {
    NoGradGuard no_grad;
    index = cached_index(w, x.device());
  }
  const Tensor flat = x.reshape({n, c, w.in_h * w.in_w});
  const Tensor pad = full({n, c, 1}, pad_value, TensorOptions(x.dtype()).device(x.device()));
  return index_select(cat({flat, pad}, 2), 2, index).view({n, c, w.taps(), w.positions()});
}

Tensor window_columns_adjoint(const Tensor& g, const Window2d& w, const Shape& x_shape,
                              DType dtype) {
  const int64_t n = x_shape[0], c = x_shape[1], hw = w.in_h * w.in_w;
  Tensor index;
  {
    NoGradGuard no_grad;
    index = cached_index(w, g.device());
  }
  const Tensor zero = zeros({n, c, hw + 1}, TensorOptions(dtype).device(g.device()));
  return index_add(zero, 2, index, g.to(dtype).reshape({n, c, w.taps() * w.positions()}))
      .narrow(2, 0, hw)
      .reshape(x_shape);
}

}  // namespace tensorlet::detail

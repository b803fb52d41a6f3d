// 2-D pooling over the gathered windows (ops/window.h): max and mean along the taps, and the
// adaptive mean as a mean, an exact pooling or a gathered window sum per dim; all recorded ops.
#include "tensorlet/ops/pooling.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "tensorlet/ops/elementwise.h"
#include "tensorlet/ops/factories.h"
#include "tensorlet/ops/index_range.h"
#include "tensorlet/ops/indexing.h"
#include "tensorlet/ops/joining.h"
#include "tensorlet/ops/linalg.h"
#include "tensorlet/ops/reduce.h"
#include "tensorlet/ops/window.h"
#include "tensorlet/tensor/error.h"
#include "tensorlet/tensor/op_scope.h"

namespace tensorlet {

namespace {

void check_input(const Tensor& input, const char* op) {
  check_defined(input, op);
  TL_CHECK(
      input.dim() == 3 || input.dim() == 4, ShapeError, op,
      "Expected 3D or 4D (batch mode) tensor for input, but got input of size: ", input.shape());
  TL_CHECK(is_floating_point(input.dtype()), DTypeError, op,
           "expected a floating point input, got ", input.dtype());
  // torch: every non-batch dim non-empty.
  for (int64_t i = input.dim() - 3; i < input.dim(); ++i)
    TL_CHECK(input.size(i) > 0, ShapeError, op,
             "Expected input to have non-zero size for non-batch dimensions, but got input of "
             "size: ",
             input.shape());
}

// The window of a pool: stride defaults to the kernel; padding at most half the kernel, as
// torch's.
detail::Window2d pool_window(const Tensor& x, IntArrayRef kernel_size, IntArrayRef stride,
                             IntArrayRef padding, IntArrayRef dilation, bool ceil_mode,
                             const char* op) {
  const auto k = detail::expand_pair(kernel_size, "kernel_size", op);
  const auto s = stride.size() == 0 ? k : detail::expand_pair(stride, "stride", op);
  const auto p = detail::expand_pair(padding, "padding", op);
  const auto d = detail::expand_pair(dilation, "dilation", op);
  const detail::Window2d w = detail::make_window(k, s, p, d, x.size(2), x.size(3), ceil_mode, op);
  // torch's pool2d_shape_check: half the kernel, not the dilated one (the fuzzer's
  // max_pool_padding: kernel 2, dilation 3, padding 2 is refused there).
  for (int i = 0; i < 2; ++i)
    TL_CHECK(p[i] <= k[i] / 2, ShapeError, op,
             "pad should be at most half of kernel size, but got pad=", p[i],
             " and kernel_size=", k[i]);
  return w;
}

Tensor batched(const Tensor& input) { return input.dim() == 4 ? input : input.unsqueeze(0); }
Tensor unbatched(const Tensor& out, const Tensor& input) {
  return input.dim() == 4 ? out : out.squeeze(0);
}

// torch's avg_pool2d divisor of each window, row-major over the output.
std::vector<double> avg_divisors(const detail::Window2d& w, bool count_include_pad) {
  std::vector<double> out;
  out.reserve(static_cast<size_t>(w.positions()));
  for (int64_t oh = 0; oh < w.out_h; ++oh)
    for (int64_t ow = 0; ow < w.out_w; ++ow) {
      int64_t h0 = oh * w.stride[0] - w.padding[0], w0 = ow * w.stride[1] - w.padding[1];
      int64_t h1 = std::min(h0 + w.kernel[0], w.in_h + w.padding[0]);
      int64_t w1 = std::min(w0 + w.kernel[1], w.in_w + w.padding[1]);
      const int64_t pool_size = (h1 - h0) * (w1 - w0);
      h0 = std::max<int64_t>(h0, 0);
      w0 = std::max<int64_t>(w0, 0);
      h1 = std::min(h1, w.in_h);
      w1 = std::min(w1, w.in_w);
      out.push_back(static_cast<double>(count_include_pad ? pool_size : (h1 - h0) * (w1 - w0)));
    }
  return out;
}

// The mean of torch's adaptive windows along `dim` (-2 or -1) of x, its size cut into n: window i
// covers [floor(i size / n), ceil((i + 1) size / n)). Every window's elements are gathered by one
// index_select (a shorter window's missing taps read an appended zero) and summed, then divided
// by the window's length: a NaN or inf reaches only the windows that hold it (averaging matrices,
// the former path, spread it to all through 0 * inf).
Tensor adaptive_mean(const Tensor& x, int64_t dim, int64_t n) {
  const int64_t size = x.size(dim);
  int64_t taps = 0;
  for (int64_t i = 0; i < n; ++i)
    taps = std::max(taps, ((i + 1) * size + n - 1) / n - i * size / n);
  std::vector<int64_t> index(static_cast<size_t>(n * taps));
  std::vector<double> lengths(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t start = i * size / n, end = ((i + 1) * size + n - 1) / n;
    lengths[static_cast<size_t>(i)] = static_cast<double>(end - start);
    for (int64_t t = 0; t < taps; ++t)
      index[static_cast<size_t>(i * taps + t)] = start + t < end ? start + t : size;
  }
  const Tensor positions = from_vector(index, {n * taps}).to(x.device());
  trust_index_values(positions, 0, size);  // built here: no range pass, no device wait
  const size_t d = static_cast<size_t>(x.dim() + dim);
  std::vector<int64_t> pad_shape(static_cast<size_t>(x.dim())), windows, length_shape;
  for (size_t i = 0; i < pad_shape.size(); ++i) {
    pad_shape[i] = i == d ? 1 : x.size(static_cast<int64_t>(i));
    windows.push_back(i == d ? n : x.size(static_cast<int64_t>(i)));
    if (i == d) windows.push_back(taps);
    length_shape.push_back(i == d ? n : 1);
  }
  const TensorOptions options = TensorOptions(x.dtype()).device(x.device());
  const Tensor padded = cat({x, zeros(Shape(pad_shape), options)}, dim);
  const Tensor sums =
      sum(index_select(padded, dim, positions).view(Shape(windows)), static_cast<int64_t>(d) + 1);
  return sums / from_vector(lengths, Shape(length_shape)).to(options);
}

}  // namespace

Tensor max_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  constexpr const char* op = "tl::max_pool2d";
  profiler::OpScope scope(op);
  scope.inputs({&input});
  check_input(input, op);
  const Tensor x = batched(input);
  const detail::Window2d w = pool_window(x, kernel_size, stride, padding, dilation, ceil_mode, op);
  const Tensor cols =
      detail::window_columns(x, w, -std::numeric_limits<double>::infinity());  // [N, C, taps, L]
  const Tensor out = max(cols, 2).values.view({x.size(0), x.size(1), w.out_h, w.out_w});
  return unbatched(out, input);
}

Tensor avg_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                  std::optional<int64_t> divisor_override) {
  constexpr const char* op = "tl::avg_pool2d";
  profiler::OpScope scope(op);
  scope.inputs({&input});
  check_input(input, op);
  TL_CHECK(!divisor_override || *divisor_override != 0, Error, op, "divisor must be not zero");
  const Tensor x = batched(input);
  const detail::Window2d w = pool_window(x, kernel_size, stride, padding, 1, ceil_mode, op);
  const Tensor sums = sum(detail::window_columns(x, w, 0.0), 2);  // [N, C, L]
  Tensor out;
  if (divisor_override) {
    out = sums / static_cast<double>(*divisor_override);
  } else {
    const std::vector<double> divisors = avg_divisors(w, count_include_pad);
    const bool uniform =
        std::all_of(divisors.begin(), divisors.end(), [&](double v) { return v == divisors[0]; });
    out = uniform ? sums / divisors[0]
                  : sums / from_vector(divisors, {w.positions()})
                               .to(TensorOptions(x.dtype()).device(x.device()));
  }
  return unbatched(out.view({x.size(0), x.size(1), w.out_h, w.out_w}), input);
}

Tensor adaptive_avg_pool2d(const Tensor& input, IntArrayRef output_size) {
  constexpr const char* op = "tl::adaptive_avg_pool2d";
  profiler::OpScope scope(op);
  scope.inputs({&input});
  check_input(input, op);
  const auto size = detail::expand_pair(output_size, "output_size", op);
  TL_CHECK(size[0] >= 1 && size[1] >= 1, ShapeError, op,
           "expected an output_size of at least 1, got (", size[0], ", ", size[1], ")");
  const int64_t h = input.size(-2), w = input.size(-1);
  if (size[0] == 1 && size[1] == 1) return mean(input, {-2, -1}, true);
  if (h % size[0] == 0 && w % size[1] == 0)  // every window the same: a plain pooling
    return avg_pool2d(input, {h / size[0], w / size[1]});
  return adaptive_mean(adaptive_mean(input, -2, size[0]), -1, size[1]);
}

}  // namespace tensorlet

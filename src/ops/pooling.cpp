// 2-D pooling over the gathered windows (ops/window.h): max and mean along the taps, and the
// adaptive mean as a mean, an exact pooling or two averaging matmuls; all recorded ops.
#include "tensorlet/ops/pooling.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "tensorlet/ops/elementwise.h"
#include "tensorlet/ops/factories.h"
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

// The window of a pool: stride defaults to the kernel; padding at most half the (dilated)
// kernel, as torch's.
detail::Window2d pool_window(const Tensor& x, IntArrayRef kernel_size, IntArrayRef stride,
                             IntArrayRef padding, IntArrayRef dilation, bool ceil_mode,
                             const char* op) {
  const auto k = detail::expand_pair(kernel_size, "kernel_size", op);
  const auto s = stride.size() == 0 ? k : detail::expand_pair(stride, "stride", op);
  const auto p = detail::expand_pair(padding, "padding", op);
  const auto d = detail::expand_pair(dilation, "dilation", op);
  const detail::Window2d w = detail::make_window(k, s, p, d, x.size(2), x.size(3), ceil_mode, op);
  for (int i = 0; i < 2; ++i)
    TL_CHECK(p[i] <= ((k[i] - 1) * d[i] + 1) / 2, ShapeError, op,
             "pad should be at most half of effective kernel size, but got pad=", p[i],
             ", kernel_size=", k[i], " and dilation=", d[i]);
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

// [n, size] rows averaging torch's adaptive windows of a size-`size` dim cut into n.
Tensor averaging_matrix(int64_t n, int64_t size, DType dtype, Device device) {
  std::vector<double> m(static_cast<size_t>(n * size), 0.0);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t start = i * size / n, end = ((i + 1) * size + n - 1) / n;
    for (int64_t r = start; r < end; ++r)
      m[static_cast<size_t>(i * size + r)] = 1.0 / static_cast<double>(end - start);
  }
  return from_vector(m, {n, size}).to(TensorOptions(dtype).device(device));
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
  const Tensor rows = averaging_matrix(size[0], h, input.dtype(), input.device());
  const Tensor cols = averaging_matrix(size[1], w, input.dtype(), input.device());
  return matmul(matmul(rows, input), cols.t());
}

}  // namespace tensorlet

// conv2d on a backend's own convolution (CUDA: cuDNN; CPU: cpu_conv2d.cpp): the forward and both
// backward passes of every floating dtype against the im2col path as ops in float64 (window
// columns + matmul, so not the CPU's own convolution either), over strides, padding, dilation,
// groups, 1x1 and whole-image kernels and non-contiguous operands; the backend calls into
// poisoned outputs; the node's name; second derivatives through its im2col formulas; a batch the
// CPU splits into chunks against its samples one by one.
#include <doctest/doctest.h>
#include <tensorlet/tensorlet.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gradcheck.h"
#include "tensorlet/backends/backend.h"
#include "tensorlet/ops/window.h"
#include "test_util.h"

using tl::Tensor;
using tl_test::random_tensor;
using tl_test::values_of;
using Ts = std::vector<Tensor>;

namespace {

struct Case {
  tl::Shape x, w;
  int64_t stride[2], padding[2], dilation[2], groups;
};

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {{2, 3, 7, 6}, {4, 3, 3, 2}, {1, 1}, {0, 0}, {1, 1}, 1},
      {{2, 3, 9, 8}, {5, 3, 3, 3}, {2, 1}, {1, 2}, {2, 1}, 1},
      {{3, 4, 6, 5}, {6, 2, 3, 3}, {1, 2}, {1, 1}, {1, 1}, 2},
      {{2, 6, 5, 5}, {6, 1, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 6},       // depthwise
      {{5, 1, 28, 28}, {6, 1, 5, 5}, {1, 1}, {2, 2}, {1, 1}, 1},     // LeNet's first layer
      {{3, 16, 14, 14}, {32, 16, 3, 3}, {2, 2}, {1, 1}, {1, 1}, 1},  // a ResNet downsampling
      {{2, 3, 4, 4}, {2, 3, 4, 4}, {1, 1}, {0, 0}, {1, 1}, 1},       // the kernel is the image
      {{2, 3, 5, 7}, {4, 3, 1, 1}, {2, 3}, {0, 0}, {1, 1}, 1},       // 1 x 1, strided
      {{2, 4, 5, 6}, {6, 2, 1, 1}, {1, 1}, {0, 0}, {2, 1}, 2},       // 1 x 1, stride 1, groups
      {{3, 5, 4, 3}, {7, 5, 1, 1}, {1, 1}, {0, 0}, {1, 1}, 1},       // 1 x 1, stride 1
  };
  return all;
}

tl::Conv2dArgs args_of(const Case& c) {
  return {{c.stride[0], c.stride[1]},
          {c.padding[0], c.padding[1]},
          {c.dilation[0], c.dilation[1]},
          c.groups};
}

Tensor conv(const Tensor& x, const Tensor& w, const Tensor& b, const Case& c) {
  return tl::conv2d(x, w, b, {c.stride[0], c.stride[1]}, {c.padding[0], c.padding[1]},
                    {c.dilation[0], c.dilation[1]}, c.groups);
}

// conv2d as the front end's im2col path, built from ops (window columns, a batched matmul, the
// bias added): a reference, with its autograd gradients, that no backend's own convolution runs.
Tensor im2col_conv(const Tensor& x, const Tensor& w, const Tensor& b, const Case& c) {
  const int64_t n = x.size(0), o = w.size(0), groups = c.groups;
  const tl::detail::Window2d win = tl::detail::make_window(
      {w.size(2), w.size(3)}, {c.stride[0], c.stride[1]}, {c.padding[0], c.padding[1]},
      {c.dilation[0], c.dilation[1]}, x.size(2), x.size(3), false, "im2col_conv");
  const int64_t k = w.size(1) * win.taps(), l = win.positions();
  const Tensor cols = tl::detail::window_columns(x, win, 0.0).reshape({n, groups, k, l});
  Tensor y =
      tl::matmul(w.reshape({groups, o / groups, k}), cols).reshape({n, o, win.out_h, win.out_w});
  return b.defined() ? y + b.view({1, o, 1, 1}) : y;
}

// Each element within tol of the reference, relative to the reference's largest magnitude (the
// dtype's rounding of a sum of many products scales with it, not with the element).
void check_close(const Tensor& got, const Tensor& want, double tol, const char* what) {
  INFO(what);
  REQUIRE(got.shape() == want.shape());
  const std::vector<double> g = values_of(got), r = values_of(want);
  double scale = 1e-30;
  for (double v : r) scale = std::max(scale, std::fabs(v));
  double worst = 0;
  for (size_t i = 0; i < g.size(); ++i)
    worst = std::max(worst, std::isfinite(g[i]) ? std::fabs(g[i] - r[i]) / scale
                                                : std::numeric_limits<double>::infinity());
  CHECK(worst <= tol);
}

double tolerance(tl::DType dtype) {
  if (dtype == tl::kFloat64) return 1e-12;
  if (dtype == tl::kFloat32) return 2e-5;  // TF32 off, as by default
  if (dtype == tl::kFloat16) return 4e-3;
  return 3e-2;  // bfloat16
}

}  // namespace

TEST_CASE("conv2d on a device's own convolution: forward and gradients against the im2col ops") {
  for (const tl::Device device : tl_test::test_devices())
    for (const tl::DType dtype : {tl::kFloat64, tl::kFloat32, tl::kFloat16, tl::kBFloat16})
      for (const Case& c : cases()) {
        if (device.is_cpu() && (dtype == tl::kFloat16 || dtype == tl::kBFloat16)) continue;
        INFO(device.str() << " " << dtype << " x " << c.x << " w " << c.w);
        // Values of the dtype, so the reference sees what the device sees.
        const Tensor x64 = random_tensor(c.x, dtype).to(tl::kFloat64);
        const Tensor w64 = random_tensor(c.w, dtype).to(tl::kFloat64);
        const Tensor b64 = random_tensor({c.w[0]}, dtype).to(tl::kFloat64);
        const Tensor xr = x64.clone().requires_grad_(), wr = w64.clone().requires_grad_(),
                     br = b64.clone().requires_grad_();
        const Tensor want = im2col_conv(xr, wr, br, c);
        const Tensor g64 = random_tensor(want.shape(), dtype).to(tl::kFloat64);
        tl::autograd::backward({want}, {g64});

        // Channels-last input and a transposed upstream gradient: the device path copies them.
        const Tensor x = x64.to(dtype)
                             .permute({0, 2, 3, 1})
                             .contiguous()
                             .permute({0, 3, 1, 2})
                             .to(device)
                             .requires_grad_();
        const Tensor w = w64.to(dtype).to(device).requires_grad_();
        const Tensor b = b64.to(dtype).to(device).requires_grad_();
        const Tensor out = conv(x, w, b, c);
        CHECK(out.dtype() == dtype);
        const Tensor g = g64.to(dtype).transpose(2, 3).contiguous().transpose(2, 3).to(device);
        tl::autograd::backward({out}, {g});
        const double tol = tolerance(dtype);
        check_close(out, want, tol, "output");
        check_close(x.grad(), xr.grad(), tol, "input gradient");
        check_close(w.grad(), wr.grad(), tol, "weight gradient");
        check_close(b.grad(), br.grad(), tol, "bias gradient");
        CHECK(x.grad().dtype() == dtype);
        CHECK(w.grad().dtype() == dtype);
      }
}

TEST_CASE("conv2d on a device's own convolution: every output element written") {
  for (const tl::Device device : tl_test::test_devices()) {
    tl::Backend& backend = tl::backend_for(device);
    for (const tl::DType dtype : {tl::kFloat64, tl::kFloat32, tl::kFloat16, tl::kBFloat16}) {
      if (!backend.has_conv2d(dtype)) continue;
      for (const Case& c : cases()) {
        INFO(device.str() << " " << dtype << " x " << c.x << " w " << c.w);
        const Tensor x = random_tensor(c.x, dtype, device), w = random_tensor(c.w, dtype, device);
        const Tensor want = im2col_conv(x.cpu().to(tl::kFloat64), w.cpu().to(tl::kFloat64), {}, c);
        const Tensor g = random_tensor(want.shape(), dtype, device);
        const double nan = std::numeric_limits<double>::quiet_NaN();
        const Tensor y = tl::full(want.shape(), nan, tl::TensorOptions(dtype).device(device));
        const Tensor dx = tl::full(c.x, nan, tl::TensorOptions(dtype).device(device));
        const Tensor dw = tl::full(c.w, nan, tl::TensorOptions(dtype).device(device));
        REQUIRE(backend.conv2d_forward(x, w, args_of(c), y));
        REQUIRE(backend.conv2d_backward_input(g, w, args_of(c), dx));
        REQUIRE(backend.conv2d_backward_weight(x, g, args_of(c), dw));
        const double tol = tolerance(dtype);
        check_close(y, want, tol, "forward");
        // The backward passes against the im2col ops' gradients of the same values.
        const Tensor xr = x.cpu().to(tl::kFloat64).requires_grad_();
        const Tensor wr = w.cpu().to(tl::kFloat64).requires_grad_();
        const Tensor yr = im2col_conv(xr, wr, {}, c);
        tl::autograd::backward({yr}, {g.cpu().to(tl::kFloat64)});
        check_close(dx, xr.grad(), tol, "backward input");
        check_close(dw, wr.grad(), tol, "backward weight");
      }
    }
  }
}

TEST_CASE("conv2d on a device's own convolution: one node, and second derivatives") {
  for (const tl::Device device : tl_test::test_devices()) {
    INFO(device.str());
    const Tensor x = random_tensor({2, 3, 6, 6}, tl::kFloat32, device).requires_grad_();
    const Tensor w = random_tensor({4, 3, 3, 3}, tl::kFloat32, device).requires_grad_();
    const Tensor y = tl::conv2d(x, w, {}, 1, 1);
    if (tl::backend_for(device).has_conv2d(tl::kFloat32))
      CHECK(y.grad_fn()->name() == "ConvolutionBackward0");
    // With create_graph the node's backward is the im2col formulas as ops: differentiable again.
    CHECK(tl_test::gradgradcheck(
        "conv2d, groups and stride, twice",
        [](const Ts& in) { return tl::conv2d(in[0], in[1], {}, 2, 1, 1, 2); },
        {random_tensor({2, 4, 5, 5}, tl::kFloat64), random_tensor({2, 2, 3, 3}, tl::kFloat64)},
        device));
    CHECK(tl_test::gradcheck(
        "conv2d, dilation and padding",
        [](const Ts& in) {
          return tl::conv2d(in[0], in[1], in[2], 1, {2, 1}, {2, 1});
        },
        {random_tensor({2, 2, 6, 5}, tl::kFloat64), random_tensor({3, 2, 3, 2}, tl::kFloat64),
         random_tensor({3}, tl::kFloat64)},
        device));
  }
  if (tl::cuda::is_available())
    CHECK(tl::cuda::cudnn_is_available() == (tl::cuda::cudnn_version() > 0));
}

TEST_CASE("conv2d on the CPU's own convolution: a batch in chunks equals its samples one by one") {
  // Columns of 16 * 9 * 64 * 64 elements a sample: a float64 batch of 16 is over the 32 MiB a
  // chunk may take (unless TL_CPU_CONV_CHUNK_BYTES says otherwise), so it runs in chunks, each
  // of several samples, the weight's gradient summed over them.
  for (const tl::DType dtype : {tl::kFloat64, tl::kFloat32}) {
    INFO(dtype);
    const Case c{{16, 16, 64, 64}, {8, 8, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 2};
    const Tensor x = random_tensor(c.x, dtype).requires_grad_();
    const Tensor w = random_tensor(c.w, dtype).requires_grad_();
    const Tensor y = conv(x, w, {}, c);
    if (tl::backend_for(x.device()).has_conv2d(dtype))
      CHECK(y.grad_fn()->name() == "ConvolutionBackward0");
    const Tensor g = random_tensor(y.shape(), dtype);
    tl::autograd::backward({y}, {g});
    Ts ys, dxs;
    Tensor dw;
    for (int64_t s = 0; s < c.x[0]; ++s) {
      const Tensor xs = x.detach().narrow(0, s, 1).clone().requires_grad_();
      const Tensor ws = w.detach().requires_grad_();
      const Tensor ys_s = conv(xs, ws, {}, c);
      tl::autograd::backward({ys_s}, {g.narrow(0, s, 1)});
      ys.push_back(ys_s.detach());
      dxs.push_back(xs.grad());
      dw = dw.defined() ? dw + ws.grad() : ws.grad();
    }
    // The forward and the input's gradient are sums over one sample's terms (the same bits in a
    // chunk as alone, up to the GEMM's blocking); the weight's gradient is a sum over the batch.
    const double tight = dtype == tl::kFloat64 ? 1e-14 : 1e-6;
    check_close(y, tl::cat(ys, 0), tight, "output");
    check_close(x.grad(), tl::cat(dxs, 0), tight, "input gradient");
    check_close(w.grad(), dw, tolerance(dtype), "weight gradient");
  }
}

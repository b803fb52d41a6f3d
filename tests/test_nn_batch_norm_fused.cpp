// batch_norm in training mode on a backend's fused kernels (Backend::batch_norm_forward /
// _backward): output, running statistics and every gradient against torch's formula as float64
// ops, for BatchNorm1d and 2d shapes, with and without affine parameters and running statistics,
// odd sizes and non-contiguous input; the kernels into poisoned outputs; one node; gradcheck and
// gradgradcheck (its create_graph formula as ops).
#include <doctest/doctest.h>
#include <tensorlet/tensorlet.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "gradcheck.h"
#include "tensorlet/backends/backend.h"
#include "test_util.h"

namespace F = tl::nn::functional;
using tl::Tensor;
using tl_test::random_tensor;
using Ts = std::vector<Tensor>;

namespace {

std::vector<int64_t> reduced_dims(int64_t rank) {
  std::vector<int64_t> dims{0};
  for (int64_t d = 2; d < rank; ++d) dims.push_back(d);
  return dims;
}

// torch's training-mode batch norm as float64 ops.
Tensor reference(const Tensor& x, const Tensor& w, const Tensor& b, double eps) {
  const std::vector<int64_t> dims = reduced_dims(x.dim());
  std::vector<int64_t> row(static_cast<size_t>(x.dim()), 1);
  row[1] = x.size(1);
  const Tensor mu = tl::mean(x, dims, true);
  const Tensor var = tl::mean((x - mu) * (x - mu), dims, true);
  Tensor y = (x - mu) / tl::sqrt(var + eps);
  if (w.defined()) y = y * w.view(row);
  if (b.defined()) y = y + b.view(row);
  return y;
}

void check_close(const Tensor& got, const Tensor& want, double tol, const char* what) {
  INFO(what);
  REQUIRE(got.defined());
  REQUIRE(got.shape() == want.shape());
  const std::vector<double> g = tl_test::values_of(got), r = tl_test::values_of(want);
  double scale = 1e-30, worst = 0;
  for (double v : r) scale = std::max(scale, std::fabs(v));
  for (size_t i = 0; i < g.size(); ++i)
    worst = std::max(worst, std::isfinite(g[i]) ? std::fabs(g[i] - r[i]) / scale
                                                : std::numeric_limits<double>::infinity());
  CHECK(worst <= tol);
}

}  // namespace

TEST_CASE("batch_norm fused: output, running statistics and gradients against torch's formula") {
  const std::vector<tl::Shape> shapes = {
      {8, 4}, {5, 3, 7}, {4, 6, 5, 3}, {2, 1, 1, 3}, {3, 5, 1, 1}};
  for (const tl::Device device : tl_test::test_devices())
    for (const tl::DType dtype : {tl::kFloat64, tl::kFloat32})
      for (const tl::Shape& shape : shapes)
        for (const bool affine : {true, false})
          for (const bool running : {true, false}) {
            INFO(device.str() << " " << dtype << " " << shape << " affine " << affine << " running "
                              << running);
            const int64_t c = shape[1];
            const Tensor x64 = random_tensor(shape, dtype).to(tl::kFloat64) * 3.0 + 0.5;
            const Tensor w64 = affine ? random_tensor({c}, dtype).to(tl::kFloat64) : Tensor();
            const Tensor b64 = affine ? random_tensor({c}, dtype).to(tl::kFloat64) : Tensor();
            const Tensor g64 = random_tensor(shape, dtype).to(tl::kFloat64);
            const Tensor xr = x64.clone().requires_grad_();
            const Tensor wr = affine ? w64.clone().requires_grad_() : Tensor();
            const Tensor br = affine ? b64.clone().requires_grad_() : Tensor();
            const Tensor want = reference(xr, wr, br, 1e-5);
            tl::autograd::backward({want}, {g64});

            // Transposed in its last two dims: the kernel reads a contiguous copy.
            const Tensor x = x64.to(dtype)
                                 .transpose(-1, -2)
                                 .contiguous()
                                 .transpose(-1, -2)
                                 .to(device)
                                 .requires_grad_();
            const Tensor w = affine ? w64.to(dtype).to(device).requires_grad_() : Tensor();
            const Tensor b = affine ? b64.to(dtype).to(device).requires_grad_() : Tensor();
            const Tensor rm0 = random_tensor({c}, dtype, device),
                         rv0 = random_tensor({c}, dtype, device).abs();
            const Tensor rm = running ? rm0.clone() : Tensor(),
                         rv = running ? rv0.clone() : Tensor();
            const Tensor y = F::batch_norm(x, rm, rv, w, b, true, 0.3, 1e-5);
            if (tl::backend_for(device).has_batch_norm(dtype, dtype))
              CHECK(y.grad_fn()->name() == "NativeBatchNormBackward0");
            tl::autograd::backward({y}, {g64.to(dtype).to(device)});
            const double tol = dtype == tl::kFloat64 ? 1e-12 : 2e-5;
            check_close(y, want, tol, "output");
            check_close(x.grad(), xr.grad(), tol, "input gradient");
            if (affine) {
              check_close(w.grad(), wr.grad(), tol, "weight gradient");
              check_close(b.grad(), br.grad(), tol, "bias gradient");
            }
            if (running) {
              const std::vector<int64_t> dims = reduced_dims(x64.dim());
              const Tensor mu = tl::mean(x64, dims);
              const Tensor var = tl::var(x64, dims, 1);  // unbiased
              check_close(rm, rm0.cpu().to(tl::kFloat64) * 0.7 + mu * 0.3, tol, "running_mean");
              check_close(rv, rv0.cpu().to(tl::kFloat64) * 0.7 + var * 0.3, tol, "running_var");
            }
          }
}

TEST_CASE("batch_norm fused: the kernels write every output element") {
  for (const tl::Device device : tl_test::test_devices()) {
    tl::Backend& backend = tl::backend_for(device);
    for (const tl::DType dtype : {tl::kFloat64, tl::kFloat32}) {
      if (!backend.has_batch_norm(dtype, dtype)) continue;
      INFO(device.str() << " " << dtype);
      const tl::BatchNormArgs a{3, 5, 7, 0.1, 1e-5};
      const Tensor x = random_tensor({3, 5, 7}, dtype, device);
      const Tensor w = random_tensor({5}, dtype, device), b = random_tensor({5}, dtype, device);
      const Tensor g = random_tensor({3, 5, 7}, dtype, device);
      const double nan = std::numeric_limits<double>::quiet_NaN();
      const tl::DType stat = dtype == tl::kFloat64 ? tl::kFloat64 : tl::kFloat32;
      auto poisoned = [&](const tl::Shape& s, tl::DType d) {
        return tl::full(s, nan, tl::TensorOptions(d).device(device));
      };
      const Tensor y = poisoned({3, 5, 7}, dtype), mean = poisoned({5}, stat),
                   invstd = poisoned({5}, stat);
      backend.batch_norm_forward(x, w, b, Tensor(), Tensor(), a, y, mean, invstd);
      const Tensor dx = poisoned({3, 5, 7}, dtype), dw = poisoned({5}, dtype),
                   db = poisoned({5}, dtype);
      backend.batch_norm_backward(g, x, w, mean, invstd, a, dx, dw, db);
      for (const Tensor* t : {&y, &mean, &invstd, &dx, &dw, &db})
        CHECK(tl::isfinite(*t).all().item<bool>());
      check_close(y,
                  reference(x.cpu().to(tl::kFloat64), w.cpu().to(tl::kFloat64),
                            b.cpu().to(tl::kFloat64), 1e-5),
                  dtype == tl::kFloat64 ? 1e-12 : 2e-5, "forward");
    }
  }
}

TEST_CASE("batch_norm fused: gradients against finite differences, second ones too") {
  for (const tl::Device device : tl_test::test_devices()) {
    INFO(device.str());
    CHECK(tl_test::gradcheck(
        "batch_norm fused, affine",
        [](const Ts& in) { return F::batch_norm(in[0], Tensor(), Tensor(), in[1], in[2], true); },
        {random_tensor({4, 3, 5}, tl::kFloat64), random_tensor({3}, tl::kFloat64),
         random_tensor({3}, tl::kFloat64)},
        device));
    CHECK(tl_test::gradgradcheck(
        "batch_norm fused, twice",
        [](const Ts& in) { return F::batch_norm(in[0], Tensor(), Tensor(), in[1], in[2], true); },
        {random_tensor({3, 2, 4}, tl::kFloat64), random_tensor({2}, tl::kFloat64),
         random_tensor({2}, tl::kFloat64)},
        device));
    CHECK(tl_test::gradgradcheck(
        "batch_norm fused, no affine",
        [](const Ts& in) { return F::batch_norm(in[0], Tensor(), Tensor(), {}, {}, true); },
        {random_tensor({5, 3}, tl::kFloat64)}, device));
  }
}

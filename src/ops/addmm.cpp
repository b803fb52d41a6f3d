// addmm, baddbmm and outer: addmm/baddbmm copy the (broadcast) input into the result and run one
// Backend::gemm with alpha and beta on it (no elementwise pass after the product); outer is a
// broadcast tl::mul, as torch.outer.
#include <cstdint>
#include <optional>
#include <utility>

#include "tensorlet/autograd/derivatives.h"
#include "tensorlet/tensor/autocast.h"
#include "tensorlet/backends/backend.h"
#include "tensorlet/backends/math/gemm_scalar.h"
#include "tensorlet/tensor/broadcast.h"
#include "tensorlet/tensor/op_scope.h"
#include "tensorlet/tensor/scalar_check.h"
#include "tensorlet/ops/elementwise.h"
#include "tensorlet/ops/linalg.h"
#include "tensorlet/ops/linear_addmm.h"
#include "tensorlet/ops/out_arg.h"

namespace tensorlet {
namespace {

// The three operands of addmm (input, mat1, mat2) or baddbmm (input, batch1, batch2) and the
// names torch's messages give them.
struct GemmOperands {
  const Tensor& input;
  const Tensor& a;
  const Tensor& b;
  const char* a_name;
  const char* b_name;
};

// One device, one dtype for all three (torch's addmm does not promote), not bool; alpha and beta
// integral and in range for an integral dtype (torch's rule for add's alpha).
void check_common(const char* op, const GemmOperands& g, Scalar beta, Scalar alpha) {
  check_defined(g.input, op);
  check_defined(g.a, op);
  check_defined(g.b, op);
  for (const Tensor* t : {&g.a, &g.b})
    if (t->device() != g.input.device())
      fail<DeviceError>(op, "expected all tensors on one device, got input on ", g.input.device(),
                        ", ", g.a_name, " on ", g.a.device(), " and ", g.b_name, " on ",
                        g.b.device());
  if (g.a.dtype() != g.b.dtype())
    fail<DTypeError>(op, g.a_name, " and ", g.b_name, " must have the same dtype, but got ",
                     g.a.dtype(), " and ", g.b.dtype());
  if (g.input.dtype() != g.a.dtype())
    fail<DTypeError>(op, "input and ", g.a_name, " must have the same dtype, but got ",
                     g.input.dtype(), " and ", g.a.dtype());
  const DType dtype = g.a.dtype();
  if (!kNumericDTypes.contains(dtype)) fail<DTypeError>(op, "not supported for dtype ", dtype);
  for (auto [what, v] : {std::pair{"beta", beta}, std::pair{"alpha", alpha}}) {
    if (!is_integral(dtype)) continue;
    if (v.is_floating_point())
      fail<DTypeError>(op, "For integral input tensors, argument ", what,
                       " must not be a floating point number, got ", v);
    check_scalar_fits(op, what, v, dtype);
  }
}

bool same_view(const Tensor& x, const Tensor& y) {
  return x.storage() == y.storage() && x.offset() == y.offset() && x.shape() == y.shape() &&
         x.strides() == y.strides();
}

// addmm(bias, x, w.t()) as nn.Linear makes it: a row bias (beta 1, a [n] or [1, n] contiguous
// input) added by the product's epilogue where the backend has one, saving the pass that copies
// the bias into the result and the GEMM's read of it (LibTorch's addmm does the same).
bool fused_bias(const GemmOperands& g, const Shape& shape, Scalar beta, Scalar alpha,
                const Tensor& dst, Backend& backend) {
  if (shape.size() != 2 || beta.to<double>() != 1 || alpha.to<double>() == 0 ||
      !is_floating_point(dst.dtype()) || g.a.shape()[1] == 0)
    return false;
  const Tensor& in = g.input;
  const int64_t n = shape[1];
  const bool row =
      (in.dim() == 1 && in.shape()[0] == n && in.strides()[0] == 1) ||
      (in.dim() == 2 && in.shape()[0] == 1 && in.shape()[1] == n && in.strides()[1] == 1);
  if (!row || n < 2) return false;
  const Tensor bias = in.dim() == 1 ? in : make_view(in, {n}, {1}, in.offset());
  return backend.gemm_bias(g.a, g.b, bias, alpha, dst);
}

// beta * input + alpha * (a @ b) of the shape `shape`, checked; into: the out= destination.
// The product is written into a contiguous result holding the input (unless beta is 0): out
// itself when it is contiguous, of the dtype and apart from a and b, else a fresh tensor
// copied in afterwards.
Tensor scaled_product(const char* op, const GemmOperands& g, const Shape& shape, Scalar beta,
                      Scalar alpha, Tensor* into) {
  if (!broadcasts_to(g.input.shape(), shape))
    fail<ShapeError>(op, "input of shape ", g.input.shape(), " does not broadcast to the result ",
                     shape, " (", g.a_name, " ", g.a.shape(), ", ", g.b_name, " ", g.b.shape(),
                     ")");
  const DType dtype = g.a.dtype();
  const Device device = g.a.device();
  Tensor target = into ? out_target(op, *into, shape, dtype, device, {&g.input, &g.a, &g.b})
                       : make_tensor(shape, dtype, device);
  const bool shares = target.storage() == g.a.storage() || target.storage() == g.b.storage();
  Tensor dst = target.is_contiguous() && !shares ? target : make_tensor(shape, dtype, device);
  Backend& backend = backend_for(device);
  if (dst.numel() > 0 && fused_bias(g, shape, beta, alpha, dst, backend)) {
    return into ? finish_out(*into, dst) : dst;
  }
  if (dst.numel() > 0) {
    const bool keep = gemm_reads_out(beta);
    if (keep && !same_view(dst, g.input)) backend.copy(g.input.expand(shape), dst);
    if (alpha.to<double>() != 0 && g.a.shape().back() > 0) {
      backend.gemm(g.a, g.b, alpha, beta, dst);
    } else if (!keep) {  // no product (BLAS skips it for alpha 0) and no input: zeros
      backend.fill(dst, 0);
    } else if (beta.to<double>() != 1) {
      dst.mul_(beta);
    }
  }
  return into ? finish_out(*into, dst) : dst;
}

Shape addmm_shape(const char* op, const GemmOperands& g) {
  if (g.a.dim() != 2)
    fail<ShapeError>(op, "mat1 must be a matrix, got ", g.a.dim(), "-D tensor ", g.a.shape());
  if (g.b.dim() != 2)
    fail<ShapeError>(op, "mat2 must be a matrix, got ", g.b.dim(), "-D tensor ", g.b.shape());
  if (g.a.shape()[1] != g.b.shape()[0])
    fail<ShapeError>(op, "mat1 and mat2 shapes cannot be multiplied (", g.a.shape()[0], "x",
                     g.a.shape()[1], " and ", g.b.shape()[0], "x", g.b.shape()[1], ")");
  return {g.a.shape()[0], g.b.shape()[1]};
}

Shape baddbmm_shape(const char* op, const GemmOperands& g) {
  if (g.a.dim() != 3) fail<ShapeError>(op, "batch1 must be a 3D tensor, got ", g.a.shape());
  if (g.b.dim() != 3) fail<ShapeError>(op, "batch2 must be a 3D tensor, got ", g.b.shape());
  const int64_t batch = g.a.shape()[0], k = g.a.shape()[2];
  if (g.b.shape()[0] != batch || g.b.shape()[1] != k)
    fail<ShapeError>(op, "expected size for first two dimensions of batch2 tensor to be: [", batch,
                     ", ", k, "] but got: [", g.b.shape()[0], ", ", g.b.shape()[1], "]");
  return {batch, g.a.shape()[1], g.b.shape()[2]};
}

// 2 * numel * K for with_flops, saturated rather than overflowing.
int64_t gemm_flops(const Tensor& a, const Shape& shape) {
  int64_t n = 2 * a.shape().back();
  for (int64_t d : shape)
    if (!checked_mul(n, d, &n)) return INT64_MAX;
  return n;
}

// The in-place forms: self must already have the result's shape (torch does not broadcast self).
void check_self_shape(const char* op, const Tensor& self, const Shape& shape) {
  if (self.shape() != shape)
    fail<ShapeError>(op, "self has shape ", self.shape(), " but the result has shape ", shape);
}

// addmm (batched false) or baddbmm (true) and their out= (into) and in-place (into is input,
// in_place) forms: checks, the result's shape, then the scaled product.
// `scoped` false: no profiler row of its own (linear's product, whose row is linear's).
Tensor gemm_front(const char* op, bool batched, const Tensor& input, const Tensor& a,
                  const Tensor& b, Scalar beta, Scalar alpha, Tensor* into, bool in_place = false,
                  bool scoped = true) {
  std::optional<profiler::OpScope> scope;
  if (scoped) {
    scope.emplace(op);
    scope->inputs({&input, &a, &b});
  }
  const GemmOperands g{input, a, b, batched ? "batch1" : "mat1", batched ? "batch2" : "mat2"};
  check_common(op, g, beta, alpha);
  const Shape shape = batched ? baddbmm_shape(op, g) : addmm_shape(op, g);
  if (in_place) check_self_shape(op, input, shape);
  if (scope) scope->flops(gemm_flops(a, shape));
  // The out= and in-place forms are refused in a graph by out_target.
  const bool record = !into && autograd::should_record({&input, &a, &b});
  if (!record) return scaled_product(op, g, shape, beta, alpha, into);
  Tensor out;
  {
    NoGradGuard below;
    out = scaled_product(op, g, shape, beta, alpha, into);
  }
  autograd::record_addmm(batched, input, a, b, beta.to<double>(), alpha.to<double>(), out);
  return out;
}

}  // namespace

Tensor detail::linear_addmm(const Tensor& bias, const Tensor& x, const Tensor& wt) {
  return gemm_front("tl::linear", false, bias, x, wt, 1, 1, nullptr, false, false);
}

Tensor outer(const Tensor& a, const Tensor& b) {
  profiler::OpScope scope("tl::outer");
  scope.inputs({&a, &b});
  check_defined(a, "tl::outer");
  check_defined(b, "tl::outer");
  if (a.dim() != 1)
    fail<ShapeError>("tl::outer", "expected 1-D argument self, but got ", a.dim(), "-D");
  if (b.dim() != 1)
    fail<ShapeError>("tl::outer", "expected 1-D argument vec2, but got ", b.dim(), "-D");
  if (a.device() != b.device())
    fail<DeviceError>("tl::outer", "expected both inputs on one device, got ", a.device(), " and ",
                      b.device());
  int64_t numel = 0;  // checked here so that the error names tl::outer, not the broadcast
  if (!checked_mul(a.numel(), b.numel(), &numel))
    fail<ShapeError>("tl::outer", "result size overflows: ", a.shape(), " x ", b.shape());
  return a.unsqueeze(1) * b;
}

Tensor addmm(const Tensor& input, const Tensor& mat1, const Tensor& mat2, Scalar beta,
             Scalar alpha) {
  if (autocast_detail::applies(input) || autocast_detail::applies(mat1) ||
      autocast_detail::applies(mat2)) [[unlikely]] {
    const Tensor li = autocast_detail::to_lower(input), l1 = autocast_detail::to_lower(mat1),
                 l2 = autocast_detail::to_lower(mat2);
    autocast_detail::InsideOp inside;
    return addmm(li, l1, l2, beta, alpha);
  }
  return gemm_front("tl::addmm", false, input, mat1, mat2, beta, alpha, nullptr);
}

Tensor& addmm_out(Tensor& out, const Tensor& input, const Tensor& mat1, const Tensor& mat2,
                  Scalar beta, Scalar alpha) {
  gemm_front("tl::addmm", false, input, mat1, mat2, beta, alpha, &out);
  return out;
}

Tensor baddbmm(const Tensor& input, const Tensor& batch1, const Tensor& batch2, Scalar beta,
               Scalar alpha) {
  if (autocast_detail::applies(input) || autocast_detail::applies(batch1) ||
      autocast_detail::applies(batch2)) [[unlikely]] {
    const Tensor li = autocast_detail::to_lower(input), l1 = autocast_detail::to_lower(batch1),
                 l2 = autocast_detail::to_lower(batch2);
    autocast_detail::InsideOp inside;
    return baddbmm(li, l1, l2, beta, alpha);
  }
  return gemm_front("tl::baddbmm", true, input, batch1, batch2, beta, alpha, nullptr);
}

Tensor Tensor::outer(const Tensor& other) const { return tensorlet::outer(*this, other); }

Tensor Tensor::addmm(const Tensor& mat1, const Tensor& mat2, Scalar beta, Scalar alpha) const {
  return tensorlet::addmm(*this, mat1, mat2, beta, alpha);
}

Tensor& Tensor::addmm_(const Tensor& mat1, const Tensor& mat2, Scalar beta, Scalar alpha) {
  gemm_front("tl::addmm_", false, *this, mat1, mat2, beta, alpha, this, true);
  return *this;
}

Tensor Tensor::baddbmm(const Tensor& batch1, const Tensor& batch2, Scalar beta,
                       Scalar alpha) const {
  return tensorlet::baddbmm(*this, batch1, batch2, beta, alpha);
}

Tensor& Tensor::baddbmm_(const Tensor& batch1, const Tensor& batch2, Scalar beta, Scalar alpha) {
  gemm_front("tl::baddbmm_", true, *this, batch1, batch2, beta, alpha, this, true);
  return *this;
}

}  // namespace tensorlet

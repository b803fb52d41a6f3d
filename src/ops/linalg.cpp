// Matrix-product front-ends: PyTorch's matmul rules reduced to one batched [*, M, K] @ [*, K, N]
// backend call; mm, bmm, dot and linear are checked special cases of it.
#include "tensorlet/ops/linalg.h"
#include "tensorlet/tensor/autocast.h"
#include "tensorlet/ops/linear_addmm.h"

#include <optional>

#include "tensorlet/autograd/derivatives.h"
#include "tensorlet/backends/backend.h"
#include "tensorlet/backends/matmul_precision.h"
#include "tensorlet/ops/out_arg.h"
#include "tensorlet/tensor/op_scope.h"
#include "tensorlet/tensor/broadcast.h"
#include "tensorlet/ops/elementwise.h"

namespace tensorlet {
namespace {

void check_pair(const char* op, const Tensor& a, const Tensor& b) {
  check_defined(a, op);
  check_defined(b, op);
  if (a.device() != b.device())
    fail<DeviceError>(op, "expected both inputs to be on the same device, got ", a.device(),
                      " and ", b.device());
  if (a.dtype() != b.dtype())
    fail<DTypeError>(op, "expected both inputs to have the same dtype, got ", a.dtype(), " and ",
                     b.dtype());
  // Every numeric dtype, as PyTorch's CPU (its CUDA refuses integers; ours computes them).
  if (!kNumericDTypes.contains(a.dtype()))
    fail<DTypeError>(op, "not supported for dtype ", a.dtype());
  if (a.dim() == 0 || b.dim() == 0)
    fail<ShapeError>(op, "both arguments need at least 1 dimension, got ", a.dim(), "D and ",
                     b.dim(), "D");
}

// matmul after check_pair: promotes 1-D operands to matrices, broadcasts batch dims, allocates
// the output in its final shape and hands the backend a [*batch, M, N] view of it.
// With `into` (matmul_out) the product is written there when it is contiguous, of the operands'
// dtype and shares no memory with them (a product reads whole rows and columns), else computed
// aside and copied in.
Tensor matmul_checked(const char* op, const Tensor& a, const Tensor& b, Tensor* into = nullptr) {
  const bool a_vec = a.dim() == 1, b_vec = b.dim() == 1;
  const int64_t m = a_vec ? 1 : a.shape()[a.dim() - 2];
  const int64_t k = a.shape()[a.dim() - 1];
  const int64_t kb = b_vec ? b.shape()[0] : b.shape()[b.dim() - 2];
  const int64_t n = b_vec ? 1 : b.shape()[b.dim() - 1];
  if (k != kb) fail<ShapeError>(op, "inner dimensions differ: ", a.shape(), " @ ", b.shape());

  Backend& backend = backend_for(a.device());
  auto allocate = [&](const Shape& shape) {
    if (!into) return make_tensor(shape, a.dtype(), a.device());
    Tensor t = out_target(op, *into, shape, a.dtype(), a.device(), {&a, &b});
    const bool shares = t.storage() == a.storage() || t.storage() == b.storage();
    return t.is_contiguous() && !shares ? t : make_tensor(shape, a.dtype(), a.device());
  };
  // The common 2-D case skips every intermediate view: it is most of the cost of a 3x3 product.
  if (a.dim() == 2 && b.dim() == 2) {
    Tensor out = allocate({m, n});
    backend.matmul(a, b, out);
    return into ? finish_out(*into, out) : out;
  }

  Shape batch_a, batch_b;
  for (int64_t d = 0; d + 2 < a.dim(); ++d) batch_a.push_back(a.shape()[d]);
  for (int64_t d = 0; d + 2 < b.dim(); ++d) batch_b.push_back(b.shape()[d]);
  Shape batch;
  try {
    batch = broadcast_shapes(batch_a, batch_b, op);
  } catch (const ShapeError&) {
    fail<ShapeError>(op, "batch dimensions ", batch_a, " and ", batch_b,
                     " cannot be broadcast: ", a.shape(), " @ ", b.shape());
  }
  Shape full_a = batch, full_b = batch, full_out = batch, result = batch;
  full_a.push_back(m);
  full_a.push_back(k);
  full_b.push_back(k);
  full_b.push_back(n);
  full_out.push_back(m);
  full_out.push_back(n);
  if (!a_vec) result.push_back(m);
  if (!b_vec) result.push_back(n);

  Tensor a2 = a_vec ? a.unsqueeze(0) : a;
  Tensor b2 = b_vec ? b.unsqueeze(1) : b;
  if (a2.shape() != full_a) a2 = a2.expand(full_a);
  if (b2.shape() != full_b) b2 = b2.expand(full_b);
  Tensor out = allocate(result);
  Tensor out_view = result == full_out
                        ? out
                        : make_view(out, full_out, contiguous_strides(full_out), out.offset());
  backend.matmul(a2, b2, out_view);
  return into ? finish_out(*into, out) : out;
}

// with_flops: one multiply and one add per term of each output element (2·M·N·K·batch); K is
// the left operand's last extent, also when it is a vector.
int64_t matmul_flops(const Tensor& a, const Tensor& out) {
  return a.dim() == 0 ? 0 : 2 * out.numel() * a.shape().back();
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  if (autocast_detail::applies(a) || autocast_detail::applies(b)) [[unlikely]] {
    const Tensor la = autocast_detail::to_lower(a), lb = autocast_detail::to_lower(b);
    autocast_detail::InsideOp inside;
    return matmul(la, lb);
  }
  profiler::OpScope scope("tl::matmul");
  scope.inputs({&a, &b});
  check_pair("tl::matmul", a, b);
  const bool record = autograd::should_record({&a, &b});
  Tensor out;
  {
    std::optional<NoGradGuard> below;
    if (record) below.emplace();
    out = matmul_checked("tl::matmul", a, b);
  }
  scope.flops(matmul_flops(a, out));
  if (record) autograd::record_matmul(a, b, out);
  return out;
}

Tensor& matmul_out(Tensor& out, const Tensor& a, const Tensor& b) {
  profiler::OpScope scope("tl::matmul");
  scope.inputs({&a, &b});
  check_pair("tl::matmul", a, b);
  matmul_checked("tl::matmul", a, b, &out);
  scope.flops(matmul_flops(a, out));
  return out;
}

Tensor mm(const Tensor& a, const Tensor& b) {
  if (autocast_detail::applies(a) || autocast_detail::applies(b)) [[unlikely]] {
    const Tensor la = autocast_detail::to_lower(a), lb = autocast_detail::to_lower(b);
    autocast_detail::InsideOp inside;
    return mm(la, lb);
  }
  profiler::OpScope scope("tl::mm");
  scope.inputs({&a, &b});
  check_pair("tl::mm", a, b);
  if (a.dim() != 2 || b.dim() != 2)
    fail<ShapeError>("tl::mm", "expected 2-D tensors, got ", a.shape(), " and ", b.shape());
  const bool record = autograd::should_record({&a, &b});
  Tensor out;
  {
    std::optional<NoGradGuard> below;
    if (record) below.emplace();
    out = matmul_checked("tl::mm", a, b);
  }
  scope.flops(matmul_flops(a, out));
  if (record) autograd::record_matmul(a, b, out);
  return out;
}

Tensor bmm(const Tensor& a, const Tensor& b) {
  if (autocast_detail::applies(a) || autocast_detail::applies(b)) [[unlikely]] {
    const Tensor la = autocast_detail::to_lower(a), lb = autocast_detail::to_lower(b);
    autocast_detail::InsideOp inside;
    return bmm(la, lb);
  }
  profiler::OpScope scope("tl::bmm");
  scope.inputs({&a, &b});
  check_pair("tl::bmm", a, b);
  if (a.dim() != 3 || b.dim() != 3)
    fail<ShapeError>("tl::bmm", "expected 3-D tensors, got ", a.shape(), " and ", b.shape());
  if (a.shape()[0] != b.shape()[0])
    fail<ShapeError>("tl::bmm", "batch sizes differ: ", a.shape(), " @ ", b.shape());
  const bool record = autograd::should_record({&a, &b});
  Tensor out;
  {
    std::optional<NoGradGuard> below;
    if (record) below.emplace();
    out = matmul_checked("tl::bmm", a, b);
  }
  scope.flops(matmul_flops(a, out));
  if (record) autograd::record_matmul(a, b, out);
  return out;
}

Tensor dot(const Tensor& a, const Tensor& b) {
  profiler::OpScope scope("tl::dot");
  scope.inputs({&a, &b});
  check_pair("tl::dot", a, b);
  if (a.dim() != 1 || b.dim() != 1)
    fail<ShapeError>("tl::dot", "expected 1-D tensors, got ", a.shape(), " and ", b.shape());
  const bool record = autograd::should_record({&a, &b});
  Tensor out;
  {
    std::optional<NoGradGuard> below;
    if (record) below.emplace();
    out = matmul_checked("tl::dot", a, b);
  }
  if (record) autograd::record_matmul(a, b, out);
  return out;
}

Tensor linear(const Tensor& x, const Tensor& w, const std::optional<Tensor>& b) {
  if (autocast_detail::applies(x) || autocast_detail::applies(w)) [[unlikely]] {
    const Tensor lx = autocast_detail::to_lower(x), lw = autocast_detail::to_lower(w);
    std::optional<Tensor> lb;
    if (b) lb = autocast_detail::to_lower(*b);
    autocast_detail::InsideOp inside;
    return linear(lx, lw, lb);
  }
  profiler::OpScope scope("tl::linear");
  scope.inputs({&x, &w, b ? &*b : nullptr});
  check_pair("tl::linear", x, w);
  if (w.dim() > 2) fail<ShapeError>("tl::linear", "expected a 1-D or 2-D weight, got ", w.shape());
  Tensor wt = w.t();
  if (x.shape()[x.dim() - 1] != w.shape()[w.dim() - 1])
    fail<ShapeError>("tl::linear", "inner dimensions differ: input ", x.shape(), " @ weight.T ",
                     wt.shape());
  const bool record = autograd::should_record({&x, &w, b ? &*b : nullptr});
  if (b) {
    check_defined(*b, "tl::linear");
    if (b->device() != x.device())
      fail<DeviceError>("tl::linear", "expected the bias on ", x.device(), ", got ", b->device());
    if (b->dtype() != x.dtype())
      fail<DTypeError>("tl::linear", "expected a ", x.dtype(), " bias, got ", b->dtype());
  }
  // A matrix input with a bias: one addmm, as torch's linear (AddmmBackward0 in a graph), whose
  // bias a backend may add in the GEMM's epilogue. Bias shapes are checked by the product here.
  if (b && x.dim() == 2 && w.dim() == 2 && is_floating_point(x.dtype())) {
    const Shape shape{x.shape()[0], w.shape()[0]};
    if (!broadcasts_to(b->shape(), shape))
      fail<ShapeError>("tl::linear", "bias of shape ", b->shape(),
                       " does not broadcast to the output ", shape, " (input ", x.shape(),
                       ", weight ", w.shape(), ")");
    Tensor out = detail::linear_addmm(*b, x, wt);
    scope.flops(matmul_flops(x, out));
    return out;
  }
  // Otherwise, in a graph: the product and the bias add as two recorded ops (their derivatives
  // compose); outside one, one product and the bias added in place.
  Tensor out = record ? matmul(x, wt) : matmul_checked("tl::linear", x, wt);
  scope.flops(matmul_flops(x, out));
  if (!b) return out;
  if (!broadcasts_to(b->shape(), out.shape()))
    fail<ShapeError>("tl::linear", "bias of shape ", b->shape(),
                     " does not broadcast to the output ", out.shape(), " (input ", x.shape(),
                     ", weight ", w.shape(), ")");
  if (record) return add(out, *b);
  out.add_(*b);
  return out;
}

void set_float32_matmul_precision(std::string_view precision) {
  if (precision == "highest")
    set_matmul_precision(MatmulPrecision::Highest);
  else if (precision == "high")
    set_matmul_precision(MatmulPrecision::High);
  else if (precision == "medium")
    set_matmul_precision(MatmulPrecision::Medium);
  else  // PyTorch only warns; a typo silently keeping full precision is worth an error
    fail<Error>("tl::set_float32_matmul_precision",
                "precision: expected \"highest\", \"high\" or \"medium\", got \"", precision, "\"");
}

std::string get_float32_matmul_precision() {
  switch (matmul_precision()) {
    case MatmulPrecision::High:
      return "high";
    case MatmulPrecision::Medium:
      return "medium";
    case MatmulPrecision::Highest:
      break;
  }
  return "highest";
}

}  // namespace tensorlet

// tl::softmax / tl::log_softmax front-ends: dtype rules, then one backend kernel.
#include <optional>

#include "tensorlet/autograd/derivatives.h"
#include "tensorlet/tensor/autocast.h"
#include "tensorlet/backends/backend.h"
#include "tensorlet/tensor/op_scope.h"
#include "tensorlet/ops/numerics.h"

namespace tensorlet {

namespace {

// The input is made contiguous but its dims keep their order: the kernels take a softmax dim with
// elements after it (backends/softmax_rows.h), so a softmax over dim 0 costs no transposing copy
// in and none out, and the result is contiguous in the input's dim order, as torch's.
Tensor softmax_op(const char* name, const Tensor& x, int64_t dim, std::optional<DType> dtype,
                  bool log) {
  profiler::OpScope scope(name);
  scope.inputs({&x});
  check_defined(x, name);
  // autocast: a float16/bfloat16 input without a dtype runs in float32 (torch's fp32 list).
  if (!dtype && autocast_detail::applies_cuda_float32(x) && is_reduced_float(x.dtype()))
    dtype = kFloat32;
  const int64_t d = wrap_dim(dim, x.dim(), name);
  const DType compute = dtype ? *dtype : x.dtype();
  if (!is_floating_point(compute))
    fail<DTypeError>(name, "not implemented for dtype ", compute,
                     dtype ? " (the dtype argument)" : "",
                     "; softmax needs a floating dtype: pass dtype=tl::kFloat32 or convert first");
  const bool record = autograd::should_record({&x});
  Tensor out;
  {
    std::optional<NoGradGuard> below;
    if (record) below.emplace();
    const Tensor in = x.to(compute).contiguous();
    out = make_tensor(in.shape(), compute, in.device());
    if (out.numel() > 0) backend_for(in.device()).softmax(in, x.dim() == 0 ? 0 : d, log, out);
  }
  if (record) autograd::record_softmax(log, x, x.dim() == 0 ? 0 : d, out);
  return out;
}

}  // namespace

Tensor softmax(const Tensor& x, int64_t dim, std::optional<DType> dtype) {
  return softmax_op("tl::softmax", x, dim, dtype, false);
}
Tensor log_softmax(const Tensor& x, int64_t dim, std::optional<DType> dtype) {
  return softmax_op("tl::log_softmax", x, dim, dtype, true);
}

}  // namespace tensorlet

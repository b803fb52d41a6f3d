// tl::cumsum / cumprod / cummax / cummin front-ends: dtype rules, then one backend scan kernel.
#include "tensorlet/autograd/derivatives.h"
#include "tensorlet/tensor/autocast.h"
#include "tensorlet/ops/scan.h"

#include "tensorlet/backends/backend.h"
#include "tensorlet/tensor/op_scope.h"

namespace tensorlet {

namespace {

// The input is made contiguous but keeps its dim order: the kernels scan a dim with elements
// after it in place (backends/softmax_rows.h), so a scan over dim 0 costs no transposing copies
// and the result is contiguous in the input's dim order, as torch's.
Tensor arithmetic_scan(ScanOp op, const Tensor& x, int64_t dim, std::optional<DType> dtype) {
  const char* name = scan_op_name(op);
  profiler::OpScope scope(name);
  scope.inputs({&x});
  check_defined(x, name);
  const int64_t d = wrap_dim(dim, x.dim(), name);
  const DType out_dtype = dtype ? *dtype : is_integral(x.dtype(), true) ? kInt64 : x.dtype();
  if (out_dtype == kBool)
    fail<DTypeError>(name,
                     "not implemented for dtype bool (the dtype argument); pass an integer "
                     "or floating dtype");
  const Tensor in = x.to(out_dtype).contiguous();
  Tensor out = make_tensor(in.shape(), out_dtype, in.device());
  if (out.numel() > 0) backend_for(in.device()).scan(op, in, x.dim() == 0 ? 0 : d, out, Tensor());
  return out;
}

ValuesIndices extremum_scan(ScanOp op, const Tensor& x, int64_t dim) {
  const char* name = scan_op_name(op);
  profiler::OpScope scope(name);
  scope.inputs({&x});
  check_defined(x, name);
  const int64_t d = wrap_dim(dim, x.dim(), name);
  // Bool runs as uint8 0/1: any non-zero byte of a bool tensor ranks as true.
  const bool is_bool = x.dtype() == kBool;
  const Tensor in = (is_bool ? x.to(kUInt8) : x).contiguous();
  Tensor values = make_tensor(in.shape(), in.dtype(), in.device());
  Tensor indices = make_tensor(in.shape(), kInt64, in.device());
  if (values.numel() > 0)
    backend_for(in.device()).scan(op, in, x.dim() == 0 ? 0 : d, values, indices);
  return {is_bool ? values.to(kBool) : values, indices};
}

}  // namespace

Tensor cumsum(const Tensor& x, int64_t dim, std::optional<DType> dtype) {
  if (!dtype && autocast_detail::applies_cuda_float32(x) && is_reduced_float(x.dtype()))
    dtype = kFloat32;
  if (!autograd::should_record({&x})) return arithmetic_scan(ScanOp::Sum, x, dim, dtype);
  Tensor out;
  {
    NoGradGuard below;
    out = arithmetic_scan(ScanOp::Sum, x, dim, dtype);
  }
  autograd::record_cumsum(x, x.dim() == 0 ? 0 : (dim < 0 ? dim + x.dim() : dim), out);
  return out;
}
Tensor cumprod(const Tensor& x, int64_t dim, std::optional<DType> dtype) {
  if (!dtype && autocast_detail::applies_cuda_float32(x) && is_reduced_float(x.dtype()))
    dtype = kFloat32;
  if (!autograd::should_record({&x})) return arithmetic_scan(ScanOp::Prod, x, dim, dtype);
  Tensor out;
  {
    NoGradGuard below;
    out = arithmetic_scan(ScanOp::Prod, x, dim, dtype);
  }
  autograd::record_cumprod(x, x.dim() == 0 ? 0 : (dim < 0 ? dim + x.dim() : dim), out);
  return out;
}
// cummax / cummin: the gradient goes back to the positions the running extremes came from.
static ValuesIndices recorded_extremum_scan(ScanOp op, const Tensor& x, int64_t dim) {
  if (!autograd::should_record({&x})) return extremum_scan(op, x, dim);
  ValuesIndices out;
  {
    NoGradGuard below;
    out = extremum_scan(op, x, dim);
  }
  autograd::record_selection(op == ScanOp::Max ? "CummaxBackward0" : "CumminBackward0", x,
                             x.dim() == 0 ? 0 : (dim < 0 ? dim + x.dim() : dim), out.indices, true,
                             out.values);
  return out;
}
ValuesIndices cummax(const Tensor& x, int64_t dim) {
  return recorded_extremum_scan(ScanOp::Max, x, dim);
}
ValuesIndices cummin(const Tensor& x, int64_t dim) {
  return recorded_extremum_scan(ScanOp::Min, x, dim);
}

}  // namespace tensorlet

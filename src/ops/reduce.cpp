// Reduction front-ends: dim validation, output dtype and shape, empty inputs, then the backend.
#include "tensorlet/ops/reduce.h"
#include "tensorlet/tensor/autocast.h"

#include "tensorlet/autograd/derivatives.h"
#include "tensorlet/backends/backend.h"
#include "tensorlet/tensor/op_scope.h"
#include "tensorlet/ops/out_arg.h"
#include "tensorlet/ops/reduce_mask.h"

namespace tensorlet {

std::vector<bool> reduce_mask(const Tensor& a, IntArrayRef dims, const char* op) {
  const int64_t nd = a.dim();
  std::vector<bool> mask(nd, dims.empty());
  // A 0-dim tensor accepts dim 0 / -1; track it in a one-slot mask so repeats are still caught.
  std::vector<bool> seen(std::max<int64_t>(nd, 1), false);
  for (int64_t d : dims) {
    int64_t w = wrap_dim(d, nd, op);
    if (seen[w]) fail<IndexError>(op, "dim ", w, " appears multiple times in the list of dims");
    seen[w] = true;
    if (nd > 0) mask[w] = true;
  }
  return mask;
}

Shape drop_reduced(const Shape& keepdim_shape, const std::vector<bool>& mask) {
  Shape shape;
  for (int64_t d = 0; d < keepdim_shape.size(); ++d)
    if (!mask[d]) shape.push_back(keepdim_shape[d]);
  return shape;
}

namespace {

// The keepdim output; the !keepdim result is a view dropping the reduced dims.
Tensor squeeze_reduced(const Tensor& out, const std::vector<bool>& mask, bool keepdim) {
  if (keepdim) return out;
  const Shape shape = drop_reduced(out.shape(), mask);
  return make_view(out, shape, contiguous_strides(shape), 0);
}

// The result dtype (backends/math/reduce_ops.h), after refusing dtypes the op does not support,
// before any kernel runs.
DType reduce_out_dtype(ReduceOp op, DType in, const char* name) {
  const ReduceOpInfo& info = reduce_op_info(op);
  if (!info.dtypes.contains(in)) {
    if (op == ReduceOp::Mean)
      fail<DTypeError>(name, "could not infer output dtype: input dtype must be floating point ",
                       "(float16, bfloat16, float32 or float64), got ", in,
                       "; convert it first, e.g. .to(tl::kFloat32)");
    fail<DTypeError>(name, "not supported for dtype ", in);
  }
  return reduce_out_dtype(info.rule, in);
}

// The reduction into a new tensor, or with `into` (the out= forms) into that tensor: the kernel
// writes a contiguous destination directly, through a view with the reduced dims kept.
Tensor reduce_op(ReduceOp op, const char* name, const Tensor& a, IntArrayRef dims, bool keepdim,
                 Tensor* into = nullptr) {
  profiler::OpScope scope(name);
  scope.inputs({&a});
  check_defined(a, name);
  std::vector<bool> mask = reduce_mask(a, dims, name);
  const DType out_dtype = reduce_out_dtype(op, a.dtype(), name);
  Shape keep = a.shape();
  bool empty_extent = false;
  for (int64_t d = 0; d < a.dim(); ++d) {
    if (!mask[d]) continue;
    empty_extent |= keep[d] == 0;
    keep[d] = 1;
  }
  if (empty_extent && !reduce_op_info(op).empty_ok) {
    if (dims.empty())
      fail<IndexError>(name, "expected a non-empty input when reducing over all dims, got shape ",
                       a.shape(), "; specify the reduction dims");
    fail<IndexError>(name, "expected every reduced dim to have non-zero size, got shape ",
                     a.shape(), " reducing dims ", dims);
  }
  Tensor target, out;
  if (into) {
    target = out_target(name, *into, keepdim ? keep : drop_reduced(keep, mask), out_dtype,
                        a.device(), {&a});
    if (!target.is_contiguous()) target = make_tensor(target.shape(), out_dtype, a.device());
    out = make_view(target, keep, contiguous_strides(keep), target.offset());
  } else {
    out = make_tensor(keep, out_dtype, a.device());
  }
  if (out.numel() > 0) {
    if (a.numel() == 0)
      backend_for(a.device()).fill(out, Scalar(reduce_op_info(op).empty_value));
    else
      backend_for(a.device()).reduce(op, a, mask, out);
  }
  if (into) return finish_out(*into, target);
  return squeeze_reduced(out, mask, keepdim);
}

Tensor arg_reduce_op(ArgReduceOp op, const char* name, const Tensor& a, std::optional<int64_t> dim,
                     bool keepdim) {
  profiler::OpScope scope(name);
  scope.inputs({&a});
  check_defined(a, name);
  if (!reduce_op_dtypes(op).contains(a.dtype()))  // bool, as torch
    fail<DTypeError>(name, "not supported for dtype ", a.dtype());
  const int64_t nd = a.dim();
  Shape keep = Shape::filled(nd, 1), shape;
  std::optional<int64_t> kernel_dim;
  if (dim) {
    const int64_t d = wrap_dim(*dim, nd, name);
    if (nd > 0) {
      if (a.shape()[d] == 0)
        fail<IndexError>(name, "expected reduction dim ", d, " to have non-zero size, got shape ",
                         a.shape());
      keep = a.shape();
      keep[d] = 1;
      shape = a.shape();
      shape.erase(d);
      kernel_dim = d;
    }
  } else if (a.numel() == 0) {
    fail<IndexError>(name, "expected a non-empty input when no dim is given, got shape ", a.shape(),
                     "; specify the reduction dim");
  }
  Tensor out = make_tensor(keep, kInt64, a.device());
  if (out.numel() > 0) backend_for(a.device()).arg_reduce(op, a, kernel_dim, out);
  if (keepdim) return out;
  return make_view(out, shape, contiguous_strides(shape), 0);
}

// torch.max(x, dim): one op that runs two, the reduction for the values and the arg reduction
// for the indices (bool inputs, which arg reductions refuse as torch.argmax does, ranked as
// uint8: false < true). Bad input is refused here first, so errors name the function called.
ValuesIndices values_indices(ReduceOp op, ArgReduceOp arg, const char* name, const Tensor& a,
                             int64_t dim, bool keepdim) {
  profiler::OpScope scope(name);
  scope.inputs({&a});
  check_defined(a, name);
  const int64_t d = wrap_dim(dim, a.dim(), name);  // a 0-dim tensor takes 0 and -1
  if (a.dim() > 0 && a.shape()[d] == 0)
    fail<IndexError>(name, "expected reduction dim ", d, " to have non-zero size, got shape ",
                     a.shape());
  const bool is_max = op == ReduceOp::Max;
  Tensor values = reduce_op(op, is_max ? "tl::amax" : "tl::amin", a, {d}, keepdim);
  const Tensor ranked = a.dtype() == kBool ? a.to(kUInt8) : a;
  Tensor indices = arg_reduce_op(arg, is_max ? "tl::argmax" : "tl::argmin", ranked, d, keepdim);
  return {std::move(values), std::move(indices)};
}

}  // namespace

// sum and mean record one node each when a requires grad (the reduction itself below autograd).
static Tensor differentiable_reduction(ReduceOp op, const char* name, const Tensor& a,
                                       const DimList& dims, bool keepdim) {
  if (!autograd::should_record({&a})) return reduce_op(op, name, a, dims, keepdim);
  Tensor out;
  {
    NoGradGuard below;
    out = reduce_op(op, name, a, dims, keepdim);
  }
  const autograd::Reduction kind = op == ReduceOp::Sum    ? autograd::Reduction::Sum
                                   : op == ReduceOp::Mean ? autograd::Reduction::Mean
                                                          : autograd::Reduction::Extreme;
  autograd::record_reduction(kind, a, dims, keepdim, out);
  return out;
}

Tensor sum(const Tensor& a, const DimList& dims, bool keepdim) {
  if (autocast_detail::applies_cuda_float32(a) && is_reduced_float(a.dtype())) [[unlikely]] {
    const Tensor f = autocast_detail::to_float32(a);
    autocast_detail::InsideOp inside;
    return sum(f, dims, keepdim);
  }
  return differentiable_reduction(ReduceOp::Sum, "tl::sum", a, dims, keepdim);
}
Tensor prod(const Tensor& a, const DimList& dims, bool keepdim) {
  if (autocast_detail::applies(a) && is_reduced_float(a.dtype())) [[unlikely]] {
    const Tensor f = autocast_detail::to_float32(a);
    autocast_detail::InsideOp inside;
    return prod(f, dims, keepdim);
  }
  if (!autograd::should_record({&a}))
    return reduce_op(ReduceOp::Prod, "tl::prod", a, dims, keepdim);
  Tensor out;
  {
    NoGradGuard below;
    out = reduce_op(ReduceOp::Prod, "tl::prod", a, dims, keepdim);
  }
  autograd::record_prod(a, dims, keepdim, out);
  return out;
}
Tensor mean(const Tensor& a, const DimList& dims, bool keepdim) {
  return differentiable_reduction(ReduceOp::Mean, "tl::mean", a, dims, keepdim);
}
Tensor max(const Tensor& a) {
  return differentiable_reduction(ReduceOp::Max, "tl::max", a, {}, false);
}
Tensor min(const Tensor& a) {
  return differentiable_reduction(ReduceOp::Min, "tl::min", a, {}, false);
}
// max / min with a dim: the values' gradient goes to the index each was taken from (the indices
// carry none).
static ValuesIndices selecting_reduction(bool is_max, const Tensor& a, int64_t dim, bool keepdim) {
  const ReduceOp op = is_max ? ReduceOp::Max : ReduceOp::Min;
  const ArgReduceOp arg = is_max ? ArgReduceOp::ArgMax : ArgReduceOp::ArgMin;
  const char* name = is_max ? "tl::max" : "tl::min";
  if (!autograd::should_record({&a})) return values_indices(op, arg, name, a, dim, keepdim);
  ValuesIndices out;
  {
    NoGradGuard below;
    out = values_indices(op, arg, name, a, dim, keepdim);
  }
  autograd::record_selection(is_max ? "MaxBackward0" : "MinBackward0", a,
                             a.dim() == 0 ? 0 : (dim < 0 ? dim + a.dim() : dim), out.indices,
                             keepdim, out.values);
  return out;
}
ValuesIndices max(const Tensor& a, int64_t dim, bool keepdim) {
  return selecting_reduction(true, a, dim, keepdim);
}
ValuesIndices min(const Tensor& a, int64_t dim, bool keepdim) {
  return selecting_reduction(false, a, dim, keepdim);
}
Tensor amax(const Tensor& a, const DimList& dims, bool keepdim) {
  return differentiable_reduction(ReduceOp::Max, "tl::amax", a, dims, keepdim);
}
Tensor amin(const Tensor& a, const DimList& dims, bool keepdim) {
  return differentiable_reduction(ReduceOp::Min, "tl::amin", a, dims, keepdim);
}
Tensor all(const Tensor& a, const DimList& dims, bool keepdim) {
  return reduce_op(ReduceOp::All, "tl::all", a, dims, keepdim);
}
Tensor any(const Tensor& a, const DimList& dims, bool keepdim) {
  return reduce_op(ReduceOp::Any, "tl::any", a, dims, keepdim);
}
Tensor argmax(const Tensor& a, std::optional<int64_t> dim, bool keepdim) {
  return arg_reduce_op(ArgReduceOp::ArgMax, "tl::argmax", a, dim, keepdim);
}
Tensor argmin(const Tensor& a, std::optional<int64_t> dim, bool keepdim) {
  return arg_reduce_op(ArgReduceOp::ArgMin, "tl::argmin", a, dim, keepdim);
}

// The out= forms.
Tensor& sum_out(Tensor& out, const Tensor& a, const DimList& dims, bool keepdim) {
  reduce_op(ReduceOp::Sum, "tl::sum", a, dims, keepdim, &out);
  return out;
}
Tensor& prod_out(Tensor& out, const Tensor& a, const DimList& dims, bool keepdim) {
  reduce_op(ReduceOp::Prod, "tl::prod", a, dims, keepdim, &out);
  return out;
}
Tensor& mean_out(Tensor& out, const Tensor& a, const DimList& dims, bool keepdim) {
  reduce_op(ReduceOp::Mean, "tl::mean", a, dims, keepdim, &out);
  return out;
}
Tensor& amax_out(Tensor& out, const Tensor& a, const DimList& dims, bool keepdim) {
  reduce_op(ReduceOp::Max, "tl::amax", a, dims, keepdim, &out);
  return out;
}
Tensor& amin_out(Tensor& out, const Tensor& a, const DimList& dims, bool keepdim) {
  reduce_op(ReduceOp::Min, "tl::amin", a, dims, keepdim, &out);
  return out;
}

}  // namespace tensorlet

// scatter, scatter_add and scatter_reduce: torch's checks (dim, dtypes, ranks, sizes, then the
// index range, before any kernel writes), one Backend::scatter kernel, and "mean" finished by a
// count scattered the same way and a division. Also their Tensor methods.
#include "tensorlet/ops/scatter.h"

#include "tensorlet/autograd/derivatives.h"

#include "tensorlet/tensor/op_scope.h"
#include "tensorlet/tensor/scalar_check.h"
#include "tensorlet/ops/elementwise.h"
#include "tensorlet/ops/scatter_util.h"

namespace tensorlet {

namespace {

using namespace scatter_detail;

// torch's scatter_gather_dtype_check and scatter_shape_check (an empty index skips the shapes).
// Returns dim wrapped.
int64_t check_scatter(const char* name, const Tensor& self, int64_t dim, const Tensor& index,
                      const Tensor* src) {
  check_defined(self, name);
  check_defined(index, name);
  if (src) check_defined(*src, name);
  dim = wrap_dim(dim, self.dim(), name);
  check_same_device(name, self, index, "index");
  if (src) check_same_device(name, self, *src, "src");
  if (index.numel() != 0 && index.dtype() != kInt64 && index.dtype() != kInt32)
    fail<DTypeError>(name, "expected index of dtype int64 or int32, got ", index.dtype());
  if (src && src->dtype() != self.dtype())
    fail<DTypeError>(name, "expected src of the dtype of self (", self.dtype(), "), got ",
                     src->dtype());
  if (index.numel() == 0) return dim;
  if (rank_of(index) != rank_of(self))
    fail<ShapeError>(name, "expected index with as many dims as self (shape ", self.shape(),
                     "), got index shape ", index.shape());
  if (src && rank_of(*src) != rank_of(index))
    fail<ShapeError>(name, "expected src with as many dims as index (shape ", index.shape(),
                     "), got src shape ", src->shape());
  for (int64_t d = 0; d < rank_of(self); ++d) {
    const int64_t n = size_of(index, d);
    if (d != dim && n > size_of(self, d))
      fail<ShapeError>(name, "expected index ", index.shape(), " to be no larger than self ",
                       self.shape(), " apart from dimension ", dim, " (dim ", d, ")");
    if (src && n > size_of(*src, d))
      fail<ShapeError>(name, "expected index ", index.shape(), " to be no larger than src ",
                       src->shape(), " (dim ", d, ")");
  }
  return dim;
}

Scalar in_dtype(Scalar value, DType dtype) {
  return dispatch_dtype(dtype, [&]<typename T>() { return Scalar(value.to<T>()); });
}

// Runs the kernel on `target` (self or its copy) with index (int32 widened) and src seen with
// at least one dim, src restrided to index's shape; a null src scatters `value` (of target's
// dtype).
void launch(ScatterOp op, const Tensor& target, int64_t dim, const Tensor& index, const Tensor* src,
            Scalar value) {
  const Tensor index1 =
      at_least_1d(index.dtype() == kInt64 ? unaliased(index, target) : index.to(kInt64));
  const Tensor self1 = at_least_1d(target);
  Backend& backend = backend_for(target.device());
  if (!src) {
    backend.scatter(op, self1, dim, index1, ElementwiseArg(value), Scalar(1));
    return;
  }
  const Tensor s = at_least_1d(unaliased(*src, target));
  backend.scatter(op, self1, dim, index1, make_view(s, index1.shape(), s.strides(), s.offset()),
                  Scalar(1));
}

Tensor scatter_op(const char* name, ScatterOp op, const Tensor& self, int64_t dim,
                  const Tensor& index, const Tensor* src, Scalar value, bool in_place) {
  profiler::OpScope scope(name);
  scope.inputs({&self, nullptr, &index, src});
  dim = check_scatter(name, self, dim, index, src);
  if (!src) check_scalar_fits(name, "value", value, self.dtype());
  check_scatter_index_range(name, index, size_of(self, dim), dim, self);
  Tensor target = write_target(name, self, in_place);
  // In place into a tensor outside the graph from a src in it: not differentiable yet.
  if (in_place && autograd::should_record({src})) autograd::no_derivative(name);
  if (index.numel() > 0) launch(op, target, dim, index, src, in_dtype(value, self.dtype()));
  return target;
}

// The value elements that receive any start from when scatter_reduce leaves self out.
Scalar reduce_identity(ScatterOp op, DType dtype) {
  return dispatch_dtype(dtype, [&]<typename T>() {
    using C = compute_t<T>;
    C v{};
    switch (op) {
      case ScatterOp::Mul:
        v = scatter_ops::identity<ScatterOp::Mul, C>();
        break;
      case ScatterOp::Max:
        v = scatter_ops::identity<ScatterOp::Max, C>();
        break;
      case ScatterOp::Min:
        v = scatter_ops::identity<ScatterOp::Min, C>();
        break;
      default:
        v = scatter_ops::identity<ScatterOp::Add, C>();
        break;
    }
    return Scalar(static_cast<T>(v));
  });
}

// torch's mean: the sum divided by how many values each element received (+1 for self), in
// self's dtype, an element that received none keeping its value; floor division for integers.
void finish_mean(const Tensor& target, int64_t dim, const Tensor& index, bool include_self) {
  Backend& backend = backend_for(target.device());
  Tensor count = make_tensor(target.shape(), target.dtype(), target.device());
  backend.fill(count, Scalar(int64_t{include_self ? 1 : 0}));
  launch(ScatterOp::Add, count, dim, index, nullptr, in_dtype(Scalar(int64_t{1}), count.dtype()));
  count = where(eq(count, Scalar(int64_t{0})), Scalar(int64_t{1}), count);
  const Tensor mean =
      is_floating_point(target.dtype()) ? div(target, count) : floor_divide(target, count);
  backend.copy(mean, target);
}

Tensor scatter_reduce_op(const char* name, const Tensor& self, int64_t dim, const Tensor& index,
                         const Tensor& src, std::string_view reduce, bool include_self,
                         bool in_place) {
  profiler::OpScope scope(name);
  scope.inputs({&self, nullptr, &index, &src});
  dim = check_scatter(name, self, dim, index, &src);
  ScatterOp op = ScatterOp::Add;
  const bool mean = reduce == "mean";
  if (reduce == "prod")
    op = ScatterOp::Mul;
  else if (reduce == "amax")
    op = ScatterOp::Max;
  else if (reduce == "amin")
    op = ScatterOp::Min;
  else if (reduce != "sum" && !mean)
    fail<Error>(name, "reduce argument must be either sum, prod, mean, amax or amin, got \"",
                reduce, "\"");
  if (mean && self.dtype() == kBool)
    fail<DTypeError>(name, "reduce \"mean\" is not supported for bool tensors");
  check_scatter_index_range(name, index, size_of(self, dim), dim, self);
  Tensor target = write_target(name, self, in_place);
  if (in_place && autograd::should_record({&src})) autograd::no_derivative(name);
  if (index.numel() == 0) return target;
  if (!include_self)
    launch(ScatterOp::Assign, target, dim, index, nullptr, reduce_identity(op, self.dtype()));
  launch(op, target, dim, index, &src, Scalar());
  if (mean) finish_mean(target, dim, index, include_self);
  return target;
}

}  // namespace

// The out-of-place forms in a graph: the copy and the kernel below autograd, one node.
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  return autograd::recorded_op(
      {&self, &src},
      [&] {
        return scatter_op("tl::scatter", ScatterOp::Assign, self, dim, index, &src, Scalar(),
                          false);
      },
      [&](const Tensor& out) { autograd::record_scatter("", self, dim, index, &src, true, out); });
}
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, Scalar value) {
  return autograd::recorded_op(
      {&self},
      [&] {
        return scatter_op("tl::scatter", ScatterOp::Assign, self, dim, index, nullptr, value,
                          false);
      },
      [&](const Tensor& out) {
        autograd::record_scatter("", self, dim, index, nullptr, true, out);
      });
}
Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  return autograd::recorded_op(
      {&self, &src},
      [&] {
        return scatter_op("tl::scatter_add", ScatterOp::Add, self, dim, index, &src, Scalar(),
                          false);
      },
      [&](const Tensor& out) {
        autograd::record_scatter("add", self, dim, index, &src, true, out);
      });
}
Tensor scatter_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                      std::string_view reduce, bool include_self) {
  return autograd::recorded_op(
      {&self, &src},
      [&] {
        return scatter_reduce_op("tl::scatter_reduce", self, dim, index, src, reduce, include_self,
                                 false);
      },
      [&](const Tensor& out) {
        const std::string r(reduce);
        autograd::record_scatter(r.c_str(), self, dim, index, &src, include_self, out);
      });
}

Tensor Tensor::scatter(int64_t dim, const Tensor& index, const Tensor& src) const {
  return tensorlet::scatter(*this, dim, index, src);
}
Tensor Tensor::scatter(int64_t dim, const Tensor& index, Scalar value) const {
  return tensorlet::scatter(*this, dim, index, value);
}
Tensor& Tensor::scatter_(int64_t dim, const Tensor& index, const Tensor& src) {
  scatter_op("tl::scatter_", ScatterOp::Assign, *this, dim, index, &src, Scalar(), true);
  return *this;
}
Tensor& Tensor::scatter_(int64_t dim, const Tensor& index, Scalar value) {
  scatter_op("tl::scatter_", ScatterOp::Assign, *this, dim, index, nullptr, value, true);
  return *this;
}
Tensor Tensor::scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const {
  return tensorlet::scatter_add(*this, dim, index, src);
}
Tensor& Tensor::scatter_add_(int64_t dim, const Tensor& index, const Tensor& src) {
  scatter_op("tl::scatter_add_", ScatterOp::Add, *this, dim, index, &src, Scalar(), true);
  return *this;
}
Tensor Tensor::scatter_reduce(int64_t dim, const Tensor& index, const Tensor& src,
                              std::string_view reduce, bool include_self) const {
  return tensorlet::scatter_reduce(*this, dim, index, src, reduce, include_self);
}
Tensor& Tensor::scatter_reduce_(int64_t dim, const Tensor& index, const Tensor& src,
                                std::string_view reduce, bool include_self) {
  scatter_reduce_op("tl::scatter_reduce_", *this, dim, index, src, reduce, include_self, true);
  return *this;
}

}  // namespace tensorlet

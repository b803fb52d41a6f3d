// index_add, index_copy and index_fill: torch's checks, then the scatter kernel with the 1-D index
// restrided over the source's (or the filled slices') shape (stride 0 off `dim`), so every source
// element finds its row without an index tensor of that size. Also their Tensor methods.
#include "tensorlet/autograd/derivatives.h"
#include "tensorlet/tensor/op_scope.h"
#include "tensorlet/tensor/scalar_check.h"
#include "tensorlet/ops/elementwise.h"
#include "tensorlet/ops/scatter.h"
#include "tensorlet/ops/scatter_util.h"

namespace tensorlet {

namespace {

using namespace scatter_detail;

void check_vector_index(const char* name, const Tensor& index) {
  if (index.dim() > 1)
    fail<IndexError>(name, "expected a 1-D or 0-dim index, got shape ", index.shape());
}

// The 1-D index (int64) seen with `shape`: its values along dim, repeated across the other dims.
Tensor index_over(const Tensor& index, const Shape& shape, int64_t dim, const char* name) {
  int64_t n = 0;
  if (!checked_numel(shape, &n))
    fail<ShapeError>(name, "Storage size calculation overflowed with sizes=", shape);
  Shape strides = Shape::filled(shape.size(), 0);
  strides[dim] = index.dim() == 1 ? index.strides()[0] : 0;
  return make_view(index, shape, strides, index.offset());
}

// torch's index_add / index_reduce checks (index_func_meta_impl).
void check_index_add(const char* name, const Tensor& self, int64_t dim, const Tensor& index,
                     const Tensor& source) {
  check_vector_index(name, index);
  if (index.dtype() != kInt64 && index.dtype() != kInt32)
    fail<DTypeError>(name, "expected index of dtype int64 or int32, got ", index.dtype());
  if (source.dtype() != self.dtype())
    fail<DTypeError>(name, "self (", self.dtype(), ") and source (", source.dtype(),
                     ") must have the same dtype");
  if (dim != 0 && dim >= source.dim())
    fail<IndexError>(name, "indexing dim ", dim, " is out of bounds of the source tensor with ",
                     source.dim(), " dims");
  const int64_t n = source.dim() == 0 ? 1 : source.shape()[dim];
  if (index.numel() != n)
    fail<ShapeError>(name, "number of indices (", index.numel(),
                     ") should be equal to source.size(dim) (", n, ") for dim ", dim);
  Shape self_sizes = self.shape(), source_sizes = source.shape();
  if (self.dim() != 0 && source.dim() != 0) {
    self_sizes.erase(dim);
    source_sizes.erase(dim);
  }
  if (self_sizes != source_sizes)
    fail<ShapeError>(name, "source shape must match self shape except at dim ", dim,
                     ", got self shape ", self.shape(), " and source shape ", source.shape());
}

// torch's alpha_check: a bool alpha only for bool tensors, no float alpha for integer or bool
// ones (and, here, an integer alpha that fits the dtype).
void check_alpha(const char* name, Scalar alpha, DType dtype) {
  if (alpha.is_bool() && dtype != kBool)
    fail<DTypeError>(name, "Boolean alpha only supported for Boolean results");
  if (!is_floating_point(dtype) && alpha.is_floating_point())
    fail<DTypeError>(name,
                     "For integral input tensors, argument alpha must not be a floating point "
                     "number");
  if (is_integral(dtype)) check_scalar_fits(name, "alpha", alpha, dtype);
}

// torch's index_copy checks.
void check_index_copy(const char* name, const Tensor& self, int64_t dim, const Tensor& index,
                      const Tensor& source) {
  if (index.dim() > 1)
    fail<IndexError>(name, "index should have dimension 1 or 0, got ", index.dim());
  const int64_t n = index.numel();
  if (source.dim() == 0 && n != 1)
    fail<IndexError>(name, "when source is 0-dim, index should have one element, got ", n);
  if (source.dim() != self.dim() && source.dim() != 0 && self.dim() != 0)
    fail<IndexError>(name, "when source and self are not 0-dim, their dims must match, got ",
                     source.dim(), " and ", self.dim());
  if (index.dtype() != kInt64)
    fail<DTypeError>(name, "expected an int64 index, got ", index.dtype());
  if (source.dtype() != self.dtype())
    fail<DTypeError>(name, "self and source expected to have the same dtype, got ", self.dtype(),
                     " and ", source.dtype());
  Shape self_slice = self.shape(), source_slice = source.shape();
  if (self_slice.size() > 0) self_slice.erase(dim);
  if (source_slice.size() > 0) source_slice.erase(dim);
  if (self_slice != source_slice)
    fail<ShapeError>(name, "source and self must have the same slice shapes, got ", source_slice,
                     " and ", self_slice, " off dim ", dim);
  if (source.dim() != 0 && n != source.shape()[dim])
    fail<IndexError>(name, "number of indices (", n, ") should be equal to source.size(dim) (",
                     source.shape()[dim], ")");
}

void check_devices(const char* name, const Tensor& self, const Tensor& index,
                   const Tensor* source) {
  check_defined(self, name);
  check_defined(index, name);
  if (source) check_defined(*source, name);
  check_same_device(name, self, index, "index");
  if (source) check_same_device(name, self, *source, "source");
}

// Scatters source (index_add, index_copy) into the target: self and source seen with at least
// one dim (the checks made a 0-dim one's partner 0-dim or of one element).
void scatter_source(ScatterOp op, const Tensor& target, int64_t dim, const Tensor& index,
                    const Tensor& source, Scalar alpha, const char* name) {
  if (index.numel() == 0) return;
  const Tensor src1 = at_least_1d(unaliased(source, target));
  const Tensor idx = unaliased(index.dtype() == kInt64 ? index : index.to(kInt64), target);
  backend_for(target.device())
      .scatter(op, at_least_1d(target), dim, index_over(idx, src1.shape(), dim, name), src1, alpha);
}

Tensor index_add_op(const char* name, const Tensor& self, int64_t dim, const Tensor& index,
                    const Tensor& source, Scalar alpha, bool in_place) {
  profiler::OpScope scope(name);
  scope.inputs({&self, nullptr, &index, &source});
  check_devices(name, self, index, &source);
  dim = wrap_dim(dim, self.dim(), name);
  check_index_add(name, self, dim, index, source);
  check_alpha(name, alpha, self.dtype());
  // The kernel visits the index restrided over source's shape: none of it when source is empty.
  check_scatter_index_range(name, index, size_of(self, dim), dim, self, source.numel() > 0);
  Tensor target = write_target(name, self, in_place);
  // In place into a tensor outside the graph from a source in it: not differentiable yet.
  if (in_place && autograd::should_record({&source})) autograd::no_derivative(name);
  scatter_source(ScatterOp::Add, target, dim, index, source, alpha, name);
  return target;
}

Tensor index_copy_op(const char* name, const Tensor& self, int64_t dim, const Tensor& index,
                     const Tensor& source, bool in_place) {
  profiler::OpScope scope(name);
  scope.inputs({&self, nullptr, &index, &source});
  check_devices(name, self, index, &source);
  dim = wrap_dim(dim, self.dim(), name);
  check_index_copy(name, self, dim, index, source);
  // The kernel visits the index restrided over source's shape: none of it when source is empty.
  check_scatter_index_range(name, index, size_of(self, dim), dim, self, source.numel() > 0);
  Tensor target = write_target(name, self, in_place);
  // In place into a tensor outside the graph from a source in it: not differentiable yet.
  if (in_place && autograd::should_record({&source})) autograd::no_derivative(name);
  scatter_source(ScatterOp::Assign, target, dim, index, source, Scalar(1), name);
  return target;
}

Tensor index_fill_op(const char* name, const Tensor& self, int64_t dim, const Tensor& index,
                     Scalar value, bool in_place) {
  profiler::OpScope scope(name);
  scope.inputs({&self, nullptr, &index});
  check_devices(name, self, index, nullptr);
  if (index.dtype() != kInt64)
    fail<DTypeError>(name, "expected an int64 index, got ", index.dtype());
  dim = wrap_dim(dim, self.dim(), name);
  if (index.dim() > 1)
    fail<IndexError>(name, "index has to be a vector or 0-dim, got shape ", index.shape());
  check_scalar_fits(name, "value", value, self.dtype());
  // The filled slices: self's shape with index.numel() along dim (its size checked first).
  Shape shape = at_least_1d(self).shape();
  shape[dim] = index.numel();
  const Tensor restrided = index_over(index, shape, dim, name);
  const int64_t size = size_of(self, dim);
  // torch's index_fill counts a negative index from the end.
  const int64_t lo = check_index_range(name, index, size, dim, -size);
  Tensor target = write_target(name, self, in_place);
  if (index.numel() == 0 || target.numel() == 0) return target;
  Tensor idx = unaliased(index, target);
  if (lo < 0) idx = where(lt(idx, Scalar(int64_t{0})), add(idx, Scalar(size)), idx);
  const Scalar v =
      dispatch_dtype(self.dtype(), [&]<typename T>() { return Scalar(value.to<T>()); });
  backend_for(target.device())
      .scatter(ScatterOp::Assign, at_least_1d(target), dim,
               idx.is_same(index) ? restrided : index_over(idx, shape, dim, name),
               ElementwiseArg(v), Scalar(1));
  return target;
}

}  // namespace

// The out-of-place forms in a graph: the copy and the kernel below autograd, one node.
Tensor index_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                 Scalar alpha) {
  return autograd::recorded_op(
      {&self, &source},
      [&] { return index_add_op("tl::index_add", self, dim, index, source, alpha, false); },
      [&](const Tensor& out) {
        autograd::record_index_add(0, self, dim, index, &source, alpha.to<double>(), out);
      });
}
Tensor index_copy(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source) {
  return autograd::recorded_op(
      {&self, &source},
      [&] { return index_copy_op("tl::index_copy", self, dim, index, source, false); },
      [&](const Tensor& out) { autograd::record_index_add(1, self, dim, index, &source, 1, out); });
}
Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, Scalar value) {
  return autograd::recorded_op(
      {&self}, [&] { return index_fill_op("tl::index_fill", self, dim, index, value, false); },
      [&](const Tensor& out) { autograd::record_index_add(2, self, dim, index, nullptr, 1, out); });
}

Tensor Tensor::index_add(int64_t dim, const Tensor& index, const Tensor& source,
                         Scalar alpha) const {
  return tensorlet::index_add(*this, dim, index, source, alpha);
}
Tensor& Tensor::index_add_(int64_t dim, const Tensor& index, const Tensor& source, Scalar alpha) {
  index_add_op("tl::index_add_", *this, dim, index, source, alpha, true);
  return *this;
}
Tensor Tensor::index_copy(int64_t dim, const Tensor& index, const Tensor& source) const {
  return tensorlet::index_copy(*this, dim, index, source);
}
Tensor& Tensor::index_copy_(int64_t dim, const Tensor& index, const Tensor& source) {
  index_copy_op("tl::index_copy_", *this, dim, index, source, true);
  return *this;
}
Tensor Tensor::index_fill(int64_t dim, const Tensor& index, Scalar value) const {
  return tensorlet::index_fill(*this, dim, index, value);
}
Tensor& Tensor::index_fill_(int64_t dim, const Tensor& index, Scalar value) {
  index_fill_op("tl::index_fill_", *this, dim, index, value, true);
  return *this;
}

}  // namespace tensorlet

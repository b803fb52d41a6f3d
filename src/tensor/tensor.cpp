// Tensor core: construction, views of a storage, accessors.
#include "tensorlet/tensor/tensor.h"

#include <cstdint>

#include "tensorlet/tensor/op_scope.h"

namespace tensorlet {

void Tensor::throw_undefined() {
  fail<Error>(profiler::user_op_or("tl::Tensor"), "use of an undefined tensor");
}

void check_defined(const Tensor& t, const char* op) {
  if (!t.defined()) fail<Error>(op, "expected a defined tensor, got an undefined one");
}

Tensor make_tensor(const Shape& shape, DType dtype, Device device, bool pinned) {
  // Factories call this inside their own scope: errors name the op the user called.
  for (int64_t d : shape)
    if (d < 0)
      fail<ShapeError>(profiler::user_op_or("tl::empty"), "negative dimension ", d, " in shape ",
                       shape);
  const int64_t nbytes = checked_nbytes(shape, tensorlet::element_size(dtype), "tl::empty");
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::make_shared<Storage>(static_cast<size_t>(nbytes), device, pinned);
  impl->shape = shape;
  impl->strides = contiguous_strides(shape);
  impl->dtype = dtype;
  return Tensor(std::move(impl));
}

Tensor make_view(const Tensor& base, const Shape& shape, const Shape& strides, int64_t offset) {
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = base.storage();
  impl->shape = shape;
  impl->strides = strides;
  impl->offset = offset;
  impl->dtype = base.dtype();
  return Tensor(std::move(impl));
}

// A 0-dim tensor has no dim to ask about (torch: IndexError), unlike ops that treat it as 1-D.
static void check_has_dims(int64_t ndim, int64_t dim, const char* op) {
  if (ndim == 0)
    fail<IndexError>(op, "dimension specified as ", dim, " but tensor has no dimensions");
}

int64_t Tensor::size(int64_t dim) const {
  check_has_dims(this->dim(), dim, "tl::Tensor::size");
  return shape()[wrap_dim(dim, this->dim(), "tl::Tensor::size")];
}
int64_t Tensor::stride(int64_t dim) const {
  check_has_dims(this->dim(), dim, "tl::Tensor::stride");
  return strides()[wrap_dim(dim, this->dim(), "tl::Tensor::stride")];
}

bool Tensor::is_contiguous() const {
  const TensorImpl& t = impl();
  // A tensor with no elements is contiguous whatever its strides (as torch).
  for (int64_t d : t.shape)
    if (d == 0) return true;
  int64_t expected = 1;
  for (int64_t i = t.shape.size() - 1; i >= 0; --i) {
    if (t.shape[i] == 1) continue;
    if (t.strides[i] != expected) return false;
    expected *= t.shape[i];
  }
  return true;
}

void* Tensor::data_ptr() const {
  const TensorImpl& t = impl();
  return static_cast<char*>(t.storage->data()) + t.offset * tensorlet::element_size(t.dtype);
}

}  // namespace tensorlet

namespace tensorlet::detail {

void check_accessor(const Tensor& t, const char* op, DType dtype, size_t rank, bool cpu_only,
                    int index_bits) {
  check_defined(t, op);
  if (t.dtype() != dtype)
    fail<DTypeError>(op, "expected a tensor of ", dtype, " for this element type, got ", t.dtype());
  if (static_cast<size_t>(t.dim()) != rank)
    fail<ShapeError>(op, "expected a ", rank, "-dim tensor, got one of ", t.dim(), " dims (sizes ",
                     t.shape(), ")");
  if (cpu_only && !t.is_cpu())
    fail<DeviceError>(op, "the tensor is on ", t.device(),
                      "; the host cannot read it through an accessor (use packed_accessor32 or "
                      "packed_accessor64 in a kernel, or .cpu() first)");
  if (index_bits == 32) {
    // Every index a kernel computes, the offset of the last element included, must fit.
    constexpr int64_t kMax = INT32_MAX;
    int64_t last = 0;
    for (int64_t i = 0; i < t.dim(); ++i) {
      if (t.size(i) > kMax || t.stride(i) > kMax)
        fail<Error>(op, "sizes ", t.shape(), " or strides ", t.strides(),
                    " do not fit 32-bit indexing; use packed_accessor64");
      if (t.size(i) > 0) last += (t.size(i) - 1) * t.stride(i);  // sizes, strides < 2^31
      if (last > kMax)
        fail<Error>(op, "the last element of sizes ", t.shape(), " with strides ", t.strides(),
                    " lies past 32-bit indexing; use packed_accessor64");
    }
  }
}

}  // namespace tensorlet::detail

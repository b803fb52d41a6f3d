// tl::from_blob and the checked maker of tensors over outside memory (DLPack, mapped files).
#include "tensorlet/ops/from_blob.h"

#include <cstdint>

#include "tensorlet/tensor/allocator.h"
#include "tensorlet/tensor/op_scope.h"
#include "tensorlet/ops/external_tensor.h"

namespace tensorlet {
namespace detail {
namespace {

// Bytes from `data` to the end of the last element reachable through sizes and strides (0 when
// the shape has no elements), each step overflow-checked.
int64_t strided_extent_bytes(const char* op, const Shape& sizes, const Shape& strides,
                             size_t element_size) {
  if (sizes.size() != strides.size())
    fail<ShapeError>(op, "sizes ", sizes, " and strides ", strides, " differ in length");
  for (int64_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < 0)
      fail<ShapeError>(op, "negative size ", sizes[i], " at dim ", i, " of ", sizes);
    if (strides[i] < 0)
      fail<ShapeError>(op, "negative stride ", strides[i], " at dim ", i, " of ", strides,
                       " (negative strides are not supported)");
  }
  int64_t numel = 0;
  if (!checked_numel(sizes, &numel))
    fail<ShapeError>(op, "Storage size calculation overflowed with sizes=", sizes);
  // As as_strided: every size * stride must fit even without elements, so later views cannot
  // overflow computing offsets.
  int64_t last = 0;
  for (int64_t i = 0; i < sizes.size(); ++i) {
    int64_t step = 0;
    if (!checked_mul(sizes[i], strides[i], &step) ||
        (sizes[i] > 0 && __builtin_add_overflow(last, step - strides[i], &last)))
      fail<ShapeError>(op, "Storage size calculation overflowed with sizes=", sizes,
                       " and strides=", strides);
  }
  if (numel == 0) return 0;
  int64_t bytes = 0;
  if (__builtin_add_overflow(last, int64_t{1}, &bytes) ||
      !checked_mul(bytes, static_cast<int64_t>(element_size), &bytes))
    fail<ShapeError>(op, "Storage size calculation overflowed with sizes=", sizes,
                     " and strides=", strides);
  return bytes;
}

// Refuses memory said to be on a device it is not on: a host pointer handed to a kernel, or a
// GPU pointer read by the CPU, would fault (or worse, read another buffer).
void check_place(const char* op, const void* data, Device device) {
  const MemoryPlace place = locate_pointer(data);
  using Kind = MemoryPlace::Kind;
  if (place.kind == Kind::Managed) return;
  if (device.is_cpu()) {
    if (place.kind == Kind::Device)
      fail<DeviceError>(op, "the memory at ", data, " is on ", Device::cuda(place.device),
                        ", but the tensor was said to be on ", device);
    return;
  }
  if (place.kind == Kind::Device && place.device == device.index()) return;
  if (place.kind == Kind::Device)
    fail<DeviceError>(op, "the memory at ", data, " is on ", Device::cuda(place.device),
                      ", but the tensor was said to be on ", device);
  fail<DeviceError>(op, "the memory at ", data, " is ",
                    place.kind == Kind::Host ? "host memory" : "not known to the GPU runtime",
                    ", but the tensor was said to be on ", device);
}

}  // namespace

Tensor wrap_external(const char* op, void* data, const Shape& sizes, const Shape& strides,
                     DType dtype, Device device, std::function<void(void*)> release) {
  const size_t element_size = tensorlet::element_size(dtype);
  const int64_t bytes = strided_extent_bytes(op, sizes, strides, element_size);
  if (bytes > 0) {
    if (data == nullptr)
      fail<Error>(op, "a null data pointer for a tensor of sizes ", sizes, " with elements");
    if (reinterpret_cast<uintptr_t>(data) % element_size != 0)
      fail<Error>(op, "the data pointer ", data, " is not aligned to the ", element_size,
                  "-byte elements of ", dtype);
    check_place(op, data, device);
  }
  auto impl = std::make_shared<TensorImpl>();
  impl->storage =
      std::make_shared<Storage>(data, static_cast<size_t>(bytes), device, std::move(release));
  impl->shape = sizes;
  impl->strides = strides;
  impl->dtype = dtype;
  return Tensor(std::move(impl));
}

}  // namespace detail

// Each overload is the op the profiler shows and errors name (a shape whose contiguous strides
// overflow, a device not built in).
Tensor from_blob(void* data, IntArrayRef sizes, const TensorOptions& options) {
  profiler::OpScope scope("tl::from_blob");
  const Shape shape(sizes);
  return detail::wrap_external("tl::from_blob", data, shape, contiguous_strides(shape),
                               options.dtype(), options.device(), nullptr);
}

Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, const TensorOptions& options) {
  profiler::OpScope scope("tl::from_blob");
  return detail::wrap_external("tl::from_blob", data, Shape(sizes), Shape(strides), options.dtype(),
                               options.device(), nullptr);
}

Tensor from_blob(void* data, IntArrayRef sizes, const std::function<void(void*)>& deleter,
                 const TensorOptions& options) {
  profiler::OpScope scope("tl::from_blob");
  const Shape shape(sizes);
  return detail::wrap_external("tl::from_blob", data, shape, contiguous_strides(shape),
                               options.dtype(), options.device(), deleter);
}

Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides,
                 const std::function<void(void*)>& deleter, const TensorOptions& options) {
  profiler::OpScope scope("tl::from_blob");
  return detail::wrap_external("tl::from_blob", data, Shape(sizes), Shape(strides), options.dtype(),
                               options.device(), deleter);
}

}  // namespace tensorlet

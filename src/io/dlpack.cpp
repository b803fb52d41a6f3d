// DLPack exchange: DLManagedTensor views of tensors (to_dlpack) and tensors over them
// (from_dlpack), with DLPack's stream ordering through the backend.
#include "tensorlet/io/dlpack.h"

#include <dlpack/dlpack.h>

#include <array>
#include <memory>

#include "tensorlet/backends/backend.h"
#include "tensorlet/tensor/op_scope.h"
#include "tensorlet/ops/external_tensor.h"

namespace tensorlet {
namespace {

// kDLBool arrived in DLPack 0.8; Debian 12's header (0.6) has the code, not the name.
constexpr uint8_t kBoolCode = 6;

// What an exported DLManagedTensor points into: the tensor (its storage stays alive) and the
// sizes and strides DLPack reads as int64 arrays (fixed arrays, so never null, even for 0 dims).
struct Export {
  Tensor tensor;
  std::array<int64_t, kMaxDims> shape{};
  std::array<int64_t, kMaxDims> strides{};
  DLManagedTensor managed{};
};

void delete_export(DLManagedTensor* managed) { delete static_cast<Export*>(managed->manager_ctx); }

// DLPack's stream value, checked; nullopt is the legacy default stream (1).
std::intptr_t stream_or_default(const char* op, std::optional<std::intptr_t> stream) {
  if (!stream) return 1;
  if (*stream == 0)
    fail<Error>(op,
                "stream 0 is ambiguous in DLPack; pass 1 for the legacy default stream, 2 for "
                "the per-thread default stream, -1 for no ordering, or a cudaStream_t");
  return *stream;
}

DLDataType dl_dtype(DType dtype) {
  auto make = [](uint8_t code, int bits) {
    return DLDataType{code, static_cast<uint8_t>(bits), 1};
  };
  switch (dtype) {
    case DType::Bool:
      return make(kBoolCode, 8);
    case DType::UInt8:
      return make(kDLUInt, 8);
    case DType::Int8:
      return make(kDLInt, 8);
    case DType::Int16:
      return make(kDLInt, 16);
    case DType::Int32:
      return make(kDLInt, 32);
    case DType::Int64:
      return make(kDLInt, 64);
    case DType::Float16:
      return make(kDLFloat, 16);
    case DType::BFloat16:
      return make(kDLBfloat, 16);
    case DType::Float32:
      return make(kDLFloat, 32);
    case DType::Float64:
      return make(kDLFloat, 64);
  }
  fail<DTypeError>("tl::to_dlpack", "dtype ", dtype, " has no DLPack code");
}

DType tensorlet_dtype(const char* op, DLDataType t) {
  if (t.lanes != 1)
    fail<DTypeError>(op, "vector dtypes (", static_cast<int>(t.lanes),
                     " lanes) have no tensorlet dtype");
  const int bits = t.bits;
  switch (t.code) {
    case kBoolCode:
      if (bits == 8) return DType::Bool;
      break;
    case kDLUInt:
      if (bits == 8) return DType::UInt8;
      break;
    case kDLInt:
      if (bits == 8) return DType::Int8;
      if (bits == 16) return DType::Int16;
      if (bits == 32) return DType::Int32;
      if (bits == 64) return DType::Int64;
      break;
    case kDLFloat:
      if (bits == 16) return DType::Float16;
      if (bits == 32) return DType::Float32;
      if (bits == 64) return DType::Float64;
      break;
    case kDLBfloat:
      if (bits == 16) return DType::BFloat16;
      break;
    default:
      break;
  }
  static const char* const names[] = {"int",    "uint",    "float", "opaque handle",
                                      "bfloat", "complex", "bool"};
  const char* name = t.code < 7 ? names[t.code] : "unknown";
  fail<DTypeError>(op, "DLPack dtype code ", static_cast<int>(t.code), " (", name, ") with ", bits,
                   " bits has no tensorlet dtype");
}

Device tensorlet_device(const char* op, DLDevice d) {
  switch (d.device_type) {
    case kDLCPU:
    case kDLCUDAHost:
      return Device::cpu();
    case kDLCUDA:
    case kDLCUDAManaged:
      if (d.device_id < 0) fail<DeviceError>(op, "a negative CUDA device id ", d.device_id);
      return Device::cuda(d.device_id);
    default:
      break;
  }
  fail<DeviceError>(op, "DLPack device type ", static_cast<int>(d.device_type),
                    " is not supported (kDLCPU, kDLCUDAHost, kDLCUDA and kDLCUDAManaged are)");
}

}  // namespace

DLManagedTensor* to_dlpack(const Tensor& t, std::optional<std::intptr_t> stream) {
  constexpr const char* op = "tl::to_dlpack";
  profiler::OpScope scope(op);
  check_defined(t, op);
  const std::intptr_t order = stream_or_default(op, stream);
  auto out = std::make_unique<Export>();
  out->tensor = t;
  for (int64_t i = 0; i < t.dim(); ++i) {
    out->shape[static_cast<size_t>(i)] = t.size(i);
    out->strides[static_cast<size_t>(i)] = t.stride(i);
  }
  DLTensor& dl = out->managed.dl_tensor;
  // As LibTorch: the first element's address, no byte offset.
  dl.data = t.data_ptr();
  dl.device = t.is_cuda() ? DLDevice{kDLCUDA, t.device().index()} : DLDevice{kDLCPU, 0};
  dl.ndim = static_cast<int32_t>(t.dim());
  dl.dtype = dl_dtype(t.dtype());
  dl.shape = out->shape.data();
  dl.strides = out->strides.data();
  dl.byte_offset = 0;
  out->managed.manager_ctx = out.get();
  out->managed.deleter = &delete_export;
  if (t.is_cuda() && order != -1)
    backend_for(t.device()).order_with_stream(t.device(), order, true);
  return &out.release()->managed;
}

Tensor from_dlpack(DLManagedTensor* src, std::optional<std::intptr_t> stream) {
  constexpr const char* op = "tl::from_dlpack";
  profiler::OpScope scope(op);
  if (src == nullptr) fail<Error>(op, "a null DLManagedTensor");
  const DLTensor& dl = src->dl_tensor;
  const std::intptr_t order = stream_or_default(op, stream);
  if (dl.ndim < 0 || dl.ndim > kMaxDims)
    fail<ShapeError>(op, "ndim ", dl.ndim, " is outside [0, ", kMaxDims, "]");
  if (dl.ndim > 0 && dl.shape == nullptr) fail<Error>(op, "a null shape for ", dl.ndim, " dims");
  const DType dtype = tensorlet_dtype(op, dl.dtype);
  const Device device = tensorlet_device(op, dl.device);
  Shape sizes, strides;
  for (int32_t i = 0; i < dl.ndim; ++i) sizes.push_back(dl.shape[i]);
  // DLPack before 1.0 allows null strides for a compact row-major tensor.
  if (dl.strides != nullptr) {
    for (int32_t i = 0; i < dl.ndim; ++i) strides.push_back(dl.strides[i]);
  } else {
    for (int64_t d : sizes)
      if (d < 0) fail<ShapeError>(op, "negative size ", d, " in ", sizes);
    strides = contiguous_strides(sizes);
  }
  // One of ours coming back: a view of the exported tensor, sharing its storage.
  if (src->deleter == &delete_export) {
    const Tensor& original = static_cast<Export*>(src->manager_ctx)->tensor;
    Tensor view = original.as_strided(sizes, strides, original.offset());
    src->deleter(src);
    return view;
  }
  // Ordered before the tensor takes src, so a failure leaves src with the caller.
  if (device.is_cuda() && order != -1) backend_for(device).order_with_stream(device, order, false);
  void* data = static_cast<char*>(dl.data) + dl.byte_offset;
  auto release = [src](void*) {
    if (src->deleter != nullptr) src->deleter(src);
  };
  return detail::wrap_external(op, data, sizes, strides, dtype, device, release);
}

}  // namespace tensorlet

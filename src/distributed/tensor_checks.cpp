// What a collective accepts: contiguous CUDA tensors, one per local device and on it, in a dtype
// NCCL can move (and reduce), with the reduction PyTorch allows for it.
#include <cstddef>

#include "tensorlet/distributed/nccl_internal.h"
#include "tensorlet/tensor/error.h"

namespace tensorlet::distributed::detail {

ncclDataType_t nccl_type(DType dtype, const char* op, bool reduction) {
  switch (dtype) {
    case kFloat32:
      return ncclFloat32;
    case kFloat64:
      return ncclFloat64;
    case kInt32:
      return ncclInt32;
    case kInt64:
      return ncclInt64;
    case kUInt8:
      return ncclUint8;
    case kInt8:
      return ncclInt8;
    case kFloat16:  // NCCL reduces half types itself (accumulating in float)
      return ncclFloat16;
    case kBFloat16:
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 10, 0)
      return ncclBfloat16;
#else
      fail<DTypeError>(op, "bfloat16 needs NCCL 2.10 or newer; this build has ", NCCL_MAJOR, ".",
                       NCCL_MINOR);
#endif
    case kBool:
      // One byte per element: moving them is exact, but summing bytes is not a logical or.
      if (!reduction) return ncclUint8;
      fail<DTypeError>(op,
                       "cannot reduce bool tensors; use an integer dtype (e.g. t.to(tl::kInt32))");
    case kInt16:
      // NCCL has no 16-bit integer type; moving the bits as float16 would be exact, but PyTorch
      // refuses int16 on NCCL outright, and so do we rather than half-support it.
      break;
  }
  fail<DTypeError>(op, "NCCL has no type for ", dtype,
                   " tensors; use int32 (e.g. t.to(tl::kInt32))");
}

ncclRedOp_t nccl_op(ReduceOp op, DType dtype, const char* op_name) {
  switch (op) {
    case ReduceOp::Sum:
      return ncclSum;
    case ReduceOp::Max:
      return ncclMax;
    case ReduceOp::Min:
      return ncclMin;
    case ReduceOp::Avg:
      // An integer mean would truncate; PyTorch rejects it too.
      if (!is_floating_point(dtype))
        fail<DTypeError>(op_name, "ReduceOp::Avg needs a floating-point dtype, got ", dtype,
                         "; use ReduceOp::Sum and divide");
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 10, 0)
      return ncclAvg;
#else
      fail<Error>(op_name, "ReduceOp::Avg needs NCCL 2.10 or newer; this build has ", NCCL_MAJOR,
                  ".", NCCL_MINOR);
#endif
  }
  fail<Error>(op_name, "unknown ReduceOp ", static_cast<int>(op));
}

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
      return "Sum";
    case ReduceOp::Max:
      return "Max";
    case ReduceOp::Min:
      return "Min";
    case ReduceOp::Avg:
      return "Avg";
  }
  return "?";
}

void check_tensors(const CommState& s, const char* op, const std::vector<Tensor>& tensors,
                   const char* role) {
  if (tensors.size() != s.devices.size())
    fail<DeviceError>(op, "expected one ", role, " per local device (", s.devices.size(),
                      ", in devices() order), got ", tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (!t.defined()) fail<Error>(op, role, " ", i, " is undefined");
    if (!t.is_cuda())
      fail<DeviceError>(op, "expected CUDA tensors, got ", role, " ", i, " on ", t.device());
    if (t.device() != s.device_list[i]) {
      bool member = false;
      for (const Device& d : s.device_list) member = member || d == t.device();
      if (!member)
        fail<DeviceError>(op, role, " ", i, " is on ", t.device(),
                          ", which is not in this communicator (", s.who(), ")");
      fail<DeviceError>(op, role, " ", i, " is on ", t.device(), " but local device ", i,
                        " of this communicator is ", s.device_list[i],
                        ": pass the tensors in devices() order");
    }
    // NCCL reads and writes one flat buffer; a strided view would need a hidden copy, and an
    // in-place result written to that copy would never reach the caller's tensor.
    if (!t.is_contiguous())
      fail<Error>(op, role, " ", i, " of shape ", t.shape(),
                  " is not contiguous; pass t.contiguous() (and copy the result back)");
  }
}

void check_one_device(const CommState& s, const char* op) {
  if (s.devices.size() != 1)
    fail<DeviceError>(op, "this communicator drives ", s.devices.size(),
                      " local devices; pass one tensor per device (the vector form)");
}

Shape gathered_shape(const Shape& shape, int world_size) {
  if (shape.size() == 0) return Shape{world_size};
  Shape out = shape;
  out[0] = shape[0] * world_size;
  return out;
}

}  // namespace tensorlet::distributed::detail

// 0-dim CPU tensors read on the host by device ops (ops/host_scalar.h).
#include "tensorlet/ops/host_scalar.h"

#include "tensorlet/backends/backend.h"
#include "tensorlet/tensor/convert.h"
#include "tensorlet/tensor/dispatch.h"
#include "tensorlet/tensor/error.h"

namespace tensorlet {

Scalar host_scalar_value(const Tensor& t) {
  // Read straight from the tensor's memory: no host tensor, no copy kernel, no op of its own.
  return dispatch_dtype(t.dtype(), [&]<typename T>() { return Scalar(load<T>(t.data_ptr())); });
}

Tensor host_scalar_on(const Tensor& t, Device device, DType dtype) {
  Tensor out = make_tensor({}, dtype, device);
  backend_for(device).fill(out, host_scalar_value(t));
  return out;
}

void fail_input_device(const char* op, Device device, const Tensor& input) {
  fail<DeviceError>(op, "expected all tensors to be on the same device, but found ", device,
                    " and ", input.device());
}

}  // namespace tensorlet

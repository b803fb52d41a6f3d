// A 0-dim CPU tensor beside tensors of another device, read as a scalar (torch's TensorIterator
// "CPU scalar"): the device such an op runs on, which inputs may stay on the host, their values.
#pragma once

#include <initializer_list>

#include "tensorlet/tensor/scalar.h"
#include "tensorlet/tensor/tensor.h"

namespace tensorlet {

// Whether an op running on `device` reads input `t` on the host: a 0-dim CPU tensor beside a
// device op, as torch allows for the inputs (never the output) of its TensorIterator ops.
// Inline, as the two below: every binary op asks (callgrind: out of line they cost a 3x3 add
// about 120 of its ~1800 instructions).
inline bool is_host_scalar(const Tensor& t, Device device) {
  return !device.is_cpu() && t.is_cpu() && t.dim() == 0;
}

// The value of a 0-dim CPU tensor, read now in its own dtype. CPU ops have finished when they
// return, so nothing is waited for; the value then travels by value in the kernel's parameters,
// so a later write to the tensor cannot race with the enqueued kernel.
Scalar host_scalar_value(const Tensor& t);

// A host scalar as a 0-dim tensor of `dtype` on `device`, for a kernel that reads its inputs from
// memory: filled there by a kernel that takes the value as its parameter, enqueued now (no
// host-to-device copy, which a graph capture would refuse; no wait).
Tensor host_scalar_on(const Tensor& t, Device device, DType dtype);

// The device an op on these defined inputs runs on, as torch's common device: the first input
// not on the CPU, else the CPU. Null entries are skipped.
inline Device common_device_of(std::initializer_list<const Tensor*> inputs) {
  for (const Tensor* t : inputs)
    if (t && !t->is_cpu()) return t->device();
  return Device::cpu();
}

// The DeviceError of check_inputs_on.
[[noreturn]] void fail_input_device(const char* op, Device device, const Tensor& input);

// Refuses (DeviceError naming `op`) an input that is neither on `device` nor a host scalar for it.
// Null entries are skipped.
inline void check_inputs_on(const char* op, Device device,
                            std::initializer_list<const Tensor*> inputs) {
  for (const Tensor* t : inputs)
    if (t && !(t->device() == device) && !is_host_scalar(*t, device))
      fail_input_device(op, device, *t);
}

}  // namespace tensorlet

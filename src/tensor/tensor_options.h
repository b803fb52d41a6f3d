// TensorOptions: dtype + device for factories; converts implicitly from either.
#pragma once

#include <optional>

#include "tensorlet/tensor/device.h"
#include "tensorlet/tensor/dtype.h"

namespace tensorlet {

class TensorOptions {
 public:
  TensorOptions() = default;
  TensorOptions(DType dtype) : dtype_(dtype) {}      // NOLINT: implicit, as in LibTorch
  TensorOptions(Device device) : device_(device) {}  // NOLINT
  TensorOptions(DeviceType type) : device_(type) {}  // NOLINT

  TensorOptions dtype(DType d) const {
    TensorOptions o = *this;
    o.dtype_ = d;
    return o;
  }
  TensorOptions device(Device d) const {
    TensorOptions o = *this;
    o.device_ = d;
    return o;
  }
  // Page-locked host memory (CPU tensors), so device copies can run asynchronously.
  TensorOptions pinned_memory(bool pinned) const {
    TensorOptions o = *this;
    o.pinned_ = pinned;
    return o;
  }
  bool pinned_memory() const { return pinned_; }
  // The dtype asked for, or float32 (the default dtype) when none was.
  DType dtype() const { return dtype_.value_or(kFloat32); }
  bool has_dtype() const { return dtype_.has_value(); }
  Device device() const { return device_.value_or(Device::cpu()); }
  bool has_device() const { return device_.has_value(); }

 private:
  std::optional<DType> dtype_;
  std::optional<Device> device_;
  bool pinned_ = false;
};

}  // namespace tensorlet

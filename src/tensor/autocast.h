// tl::autocast (torch.autocast): mixed precision chosen per op, per thread and device type. While
// a guard is alive, ops of the lower-precision list (the matmul family and conv2d) on tensors of
// its device type run in its dtype, and ops of the float32 list run in float32, their other
// floating inputs cast first; float64 is never cast. The float32 list is torch's for the device
// type: on CUDA the losses, prod, softmax, log_softmax, logsumexp, norms, layer_norm, sum, cumsum,
// cumprod and the precision-hungry unary ops (binary_cross_entropy refused); on the CPU the
// losses (binary_cross_entropy included) and prod. Casts are
// recorded ops, so gradients go back in each input's own dtype.
#pragma once

#include <cstdint>
#include <optional>

#include "tensorlet/tensor/device.h"
#include "tensorlet/tensor/dtype.h"
#include "tensorlet/tensor/tensor.h"

namespace tensorlet {

class AutocastGuard {
 public:
  // dtype: float16 or bfloat16; by default torch's: float16 on CUDA, bfloat16 on the CPU.
  // enabled=false turns autocast off for the device type inside an enabled region.
  explicit AutocastGuard(DeviceType device_type, std::optional<DType> dtype = std::nullopt,
                         bool enabled = true);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  DeviceType type_;
  bool previous_enabled_;
  DType previous_dtype_;
};
// The name torch's users know: `tl::autocast guard(tl::DeviceType::CUDA, tl::kBFloat16);`.
using autocast = AutocastGuard;

bool is_autocast_enabled(DeviceType device_type);
// The dtype the lower-precision list runs in on device_type (its default when never set).
DType get_autocast_dtype(DeviceType device_type);

namespace autocast_detail {

// Bit d set: autocast is on for DeviceType d on this thread (one TLS load on every hot path).
inline thread_local uint32_t t_enabled_mask = 0;
// Set inside an op that autocast already cast for: the ops it runs do not cast again.
inline thread_local bool t_inside_op = false;

inline bool applies(const Tensor& t) {
  return t_enabled_mask != 0 && !t_inside_op && t.defined() &&
         (t_enabled_mask >> static_cast<unsigned>(t.device().type()) & 1u) != 0;
}

// torch's float32 lists differ by device type: CUDA's also casts softmax, log_softmax,
// logsumexp, norm, layer_norm, sum, cumsum, cumprod and the lossy unary ops; the CPU's only the
// losses and prod. This is the test for those CUDA-only entries.
inline bool applies_cuda_float32(const Tensor& t) {
  return applies(t) && t.device().type() == DeviceType::CUDA;
}

class InsideOp {
 public:
  InsideOp() : previous_(t_inside_op) { t_inside_op = true; }
  ~InsideOp() { t_inside_op = previous_; }
  InsideOp(const InsideOp&) = delete;
  InsideOp& operator=(const InsideOp&) = delete;

 private:
  bool previous_;
};

// Turns autocast off on this thread while alive (the autograd engine's backward).
class AutocastOff {
 public:
  AutocastOff() : previous_(t_enabled_mask) { t_enabled_mask = 0; }
  ~AutocastOff() { t_enabled_mask = previous_; }
  AutocastOff(const AutocastOff&) = delete;
  AutocastOff& operator=(const AutocastOff&) = delete;

 private:
  uint32_t previous_;
};

// t in the autocast dtype of its device type when it is a float32 (or the other low-precision)
// tensor there; otherwise t itself (float64, integers, other devices, autocast off).
Tensor to_lower(const Tensor& t);
// t in float32 when it is a float16/bfloat16 tensor on an autocast device type; otherwise t.
Tensor to_float32(const Tensor& t);

}  // namespace autocast_detail
}  // namespace tensorlet

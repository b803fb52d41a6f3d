// tl::autocast's per-thread state and the casts the ops' autocast entries make.
#include "tensorlet/tensor/autocast.h"

#include "tensorlet/tensor/error.h"

namespace tensorlet {
namespace {

thread_local DType t_dtypes[kNumDeviceTypes] = {kBFloat16, kFloat16};  // CPU, CUDA: torch's

uint32_t bit(DeviceType type) { return 1u << static_cast<unsigned>(type); }

}  // namespace

AutocastGuard::AutocastGuard(DeviceType device_type, std::optional<DType> dtype, bool enabled)
    : type_(device_type),
      previous_enabled_((autocast_detail::t_enabled_mask & bit(device_type)) != 0),
      previous_dtype_(t_dtypes[static_cast<int>(device_type)]) {
  if (dtype) {
    TL_CHECK(*dtype == kFloat16 || *dtype == kBFloat16, DTypeError, "tl::autocast",
             "autocast runs the lower-precision ops in float16 or bfloat16, got ", *dtype);
    t_dtypes[static_cast<int>(device_type)] = *dtype;
  }
  if (enabled)
    autocast_detail::t_enabled_mask |= bit(device_type);
  else
    autocast_detail::t_enabled_mask &= ~bit(device_type);
}

AutocastGuard::~AutocastGuard() {
  t_dtypes[static_cast<int>(type_)] = previous_dtype_;
  if (previous_enabled_)
    autocast_detail::t_enabled_mask |= bit(type_);
  else
    autocast_detail::t_enabled_mask &= ~bit(type_);
}

bool is_autocast_enabled(DeviceType device_type) {
  return (autocast_detail::t_enabled_mask & bit(device_type)) != 0;
}

DType get_autocast_dtype(DeviceType device_type) { return t_dtypes[static_cast<int>(device_type)]; }

namespace autocast_detail {

Tensor to_lower(const Tensor& t) {
  if (!applies(t)) return t;
  const DType d = t.dtype();
  if (d != kFloat32 && d != kFloat16 && d != kBFloat16) return t;
  return t.to(get_autocast_dtype(t.device().type()));
}

Tensor to_float32(const Tensor& t) {
  if (!applies(t)) return t;
  return t.dtype() == kFloat16 || t.dtype() == kBFloat16 ? t.to(kFloat32) : t;
}

}  // namespace autocast_detail
}  // namespace tensorlet

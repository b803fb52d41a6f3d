// Device: where a tensor's storage lives, "cpu" or "cuda:N".
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

namespace tensorlet {

// The device-type list: the one place a new backend's device type is added (ARCHITECTURE.md).
// X(enumerator, name in device strings, name in messages)
#define TL_DEVICE_TYPES(X) \
  X(CPU, "cpu", "CPU")     \
  X(CUDA, "cuda", "CUDA")

enum class DeviceType : uint8_t {
#define TL_DEVICE_TYPE_ENUM(e, name, display) e,
  TL_DEVICE_TYPES(TL_DEVICE_TYPE_ENUM)
#undef TL_DEVICE_TYPE_ENUM
};
inline constexpr int kNumDeviceTypes = 0
#define TL_DEVICE_TYPE_COUNT(e, name, display) +1
    TL_DEVICE_TYPES(TL_DEVICE_TYPE_COUNT)
#undef TL_DEVICE_TYPE_COUNT
    ;

// "cuda" (as in device strings) and "CUDA" (as in messages).
const char* device_type_name(DeviceType type);
const char* device_type_display_name(DeviceType type);

class Device {
 public:
  constexpr Device() = default;
  constexpr Device(DeviceType type, int index = 0)
      : type_(type), index_(type == DeviceType::CPU ? 0 : index) {}

  static constexpr Device cpu() { return Device(DeviceType::CPU, 0); }
  static constexpr Device cuda(int index = 0) { return Device(DeviceType::CUDA, index); }
  // Parses torch's device strings: "cpu", "cuda", "cpu:N", "cuda:N" (N without leading zeros);
  // throws DeviceError naming the string on anything else.
  static Device parse(std::string_view text);

  constexpr DeviceType type() const { return type_; }
  constexpr int index() const { return index_; }
  constexpr bool is_cpu() const { return type_ == DeviceType::CPU; }
  constexpr bool is_cuda() const { return type_ == DeviceType::CUDA; }
  std::string str() const;

  friend constexpr bool operator==(Device a, Device b) {
    return a.type_ == b.type_ && a.index_ == b.index_;
  }

 private:
  DeviceType type_ = DeviceType::CPU;
  int index_ = 0;
};

std::ostream& operator<<(std::ostream& os, Device device);

}  // namespace tensorlet

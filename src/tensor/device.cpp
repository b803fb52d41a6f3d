// Device parsing and printing.
#include "tensorlet/tensor/device.h"

#include <algorithm>
#include <charconv>

#include "tensorlet/tensor/error.h"

namespace tensorlet {

const char* device_type_name(DeviceType type) {
  switch (type) {
#define TL_DEVICE_TYPE_NAME(e, name, display) \
  case DeviceType::e:                         \
    return name;
    TL_DEVICE_TYPES(TL_DEVICE_TYPE_NAME)
#undef TL_DEVICE_TYPE_NAME
  }
  return "?";
}

const char* device_type_display_name(DeviceType type) {
  switch (type) {
#define TL_DEVICE_TYPE_DISPLAY(e, name, display) \
  case DeviceType::e:                            \
    return display;
    TL_DEVICE_TYPES(TL_DEVICE_TYPE_DISPLAY)
#undef TL_DEVICE_TYPE_DISPLAY
  }
  return "?";
}

// torch's grammar: `type[:index]`, type "cpu" or "cuda" (lowercase), index 0 or a decimal number
// without sign, spaces or leading zeros ("cuda:01" is refused, "cpu:0" accepted). torch stores the
// index in an int8 and wraps past 127 ("cuda:128" becomes index -128); we refuse those instead.
Device Device::parse(std::string_view text) {
  constexpr const char* op = "tl::Device::parse";
  constexpr int kMaxIndex = 127;
  if (text.empty()) fail<DeviceError>(op, "device string must not be empty");
  const size_t colon = text.find(':');
  const std::string_view type_name = text.substr(0, colon);
  DeviceType type{};
  bool known = false;
  for (int t = 0; t < kNumDeviceTypes && !known; ++t)
    if (type_name == device_type_name(static_cast<DeviceType>(t))) {
      type = static_cast<DeviceType>(t);
      known = true;
    }
  if (!known)
    fail<DeviceError>(op, "expected device type cpu or cuda at the start of device string \"", text,
                      "\"");
  int index = 0;
  if (colon != std::string_view::npos) {
    const std::string_view digits = text.substr(colon + 1);
    const bool well_formed =
        !digits.empty() && (digits == "0" || digits[0] != '0') &&
        std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!well_formed)
      fail<DeviceError>(op, "invalid device string \"", text,
                        "\": expected \"cpu\" or \"cuda\", optionally followed by \":N\" with N "
                        "a decimal index without sign or leading zeros");
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
    if (ec != std::errc() || index > kMaxIndex)
      fail<DeviceError>(op, "device index ", digits, " in device string \"", text,
                        "\" is out of range (at most ", kMaxIndex, ")");
  }
  // As torch, "cpu:N" names the CPU: tensors made with it live on the one CPU device.
  return Device(type, index);
}

std::string Device::str() const {
  if (is_cpu()) return "cpu";
  std::string s = device_type_name(type_);
  s += ':';
  s += std::to_string(index_);
  return s;
}

std::ostream& operator<<(std::ostream& os, Device device) { return os << device.str(); }

}  // namespace tensorlet

// Device parsing and printing.
#include "tensor/device.h"

#include <charconv>

#include "tensor/error.h"

namespace tensorlet {

Device Device::parse(std::string_view text) {
  if (text == "cpu") return cpu();
  if (text == "cuda") return cuda(0);
  if (text.substr(0, 5) == "cuda:" && text.size() > 5) {
    int index = -1;
    auto digits = text.substr(5);
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
    if (ec == std::errc() && end == digits.data() + digits.size() && index >= 0) return cuda(index);
  }
  fail<DeviceError>("tl::Device::parse", "expected \"cpu\", \"cuda\" or \"cuda:N\", got \"", text,
                    "\"");
}

std::string Device::str() const {
  return is_cpu() ? std::string("cpu") : "cuda:" + std::to_string(index_);
}

std::ostream& operator<<(std::ostream& os, Device device) { return os << device.str(); }

}  // namespace tensorlet

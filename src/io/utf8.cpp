// Strict UTF-8 validation: the one decoder the file formats share.
#include "tensorlet/io/utf8.h"

#include <cstddef>
#include <cstdint>

namespace tensorlet::io {

bool is_valid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t more;
    uint32_t cp, min;
    if ((c & 0xe0) == 0xc0) {
      more = 1, cp = c & 0x1f, min = 0x80;
    } else if ((c & 0xf0) == 0xe0) {
      more = 2, cp = c & 0x0f, min = 0x800;
    } else if ((c & 0xf8) == 0xf0) {
      more = 3, cp = c & 0x07, min = 0x10000;
    } else {
      return false;  // a continuation byte first, or 0xf8-0xff
    }
    if (s.size() - i - 1 < more) return false;
    for (size_t k = 1; k <= more; ++k) {
      const auto d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += more + 1;
  }
  return true;
}

}  // namespace tensorlet::io

// Strict UTF-8 validation for names in files (zip members, safetensors tensors and metadata).
#pragma once

#include <string_view>

namespace tensorlet::io {

// No overlong forms, no surrogates, nothing past U+10FFFF.
bool is_valid_utf8(std::string_view s);

}  // namespace tensorlet::io

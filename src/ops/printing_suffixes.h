// The ", device=..., size=..., dtype=..." suffixes of a tensor's repr, in torch's order and with
// its line wrapping (torch/_tensor_str.py: _str_intern and _add_suffixes).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tensorlet {

class Tensor;

namespace printing {

// The suffixes torch prints after a strided tensor's values, in its order: device when not the
// CPU; for an empty tensor size when it is not 1-D, then dtype when not float32; otherwise dtype
// when not float32, int64 or bool (those are told apart by how the values print).
std::vector<std::string> suffixes_of(const Tensor& t);

// `text` (the prefix and values, no closing parenthesis) with each suffix appended after ", ",
// or after ",\n" and `indent` spaces when it would make the line longer than `linewidth`, then
// ")". Keeps torch's arithmetic exactly, including its count of two more than the last line's
// length before the first suffix.
std::string add_suffixes(const std::string& text, const std::vector<std::string>& suffixes,
                         int64_t indent, int64_t linewidth = 80);

}  // namespace printing
}  // namespace tensorlet

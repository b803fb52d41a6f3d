// tl::set_printoptions: how tensors print (precision, summarising, line width, scientific
// notation), process-wide, as torch.set_printoptions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace tensorlet {

struct PrintOptions {
  int precision = 4;             // digits after the point (of the mantissa in scientific form)
  int64_t threshold = 1000;      // tensors of more elements print summarised
  int64_t edgeitems = 3;         // elements shown at each end of a summarised dim
  int64_t linewidth = 80;        // characters per line before a row wraps
  std::optional<bool> sci_mode;  // scientific notation always or never; unset: chosen per tensor
};

// As torch.set_printoptions: `profile` ("default", "short": precision 2 and 2 edge items, "full":
// never summarised) resets every option first, then each given option replaces the current one;
// sci_mode is taken as given, so leaving it out returns to the automatic choice, as torch's None.
// A negative value (or precision past 100, linewidth 0) or another profile: tl::Error naming
// tl::set_printoptions, and nothing changes.
void set_printoptions(std::optional<int> precision = std::nullopt,
                      std::optional<int64_t> threshold = std::nullopt,
                      std::optional<int64_t> edgeitems = std::nullopt,
                      std::optional<int64_t> linewidth = std::nullopt,
                      std::optional<bool> sci_mode = std::nullopt,
                      std::optional<std::string> profile = std::nullopt);
// All options at once (checked as above).
void set_printoptions(const PrintOptions& options);
// The options tensors print with now.
PrintOptions get_printoptions();

}  // namespace tensorlet

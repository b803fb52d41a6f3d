// The process-wide print options: set and read under a mutex, so a print in one thread never
// sees half of another thread's change.
#include "tensorlet/ops/print_options.h"

#include <limits>
#include <mutex>

#include "tensorlet/tensor/error.h"

namespace tensorlet {
namespace {

std::mutex& options_mutex() {
  static std::mutex m;
  return m;
}
PrintOptions& current() {
  static PrintOptions options;
  return options;
}

void check(const PrintOptions& o) {
  constexpr const char* op = "tl::set_printoptions";
  if (o.precision < 0 || o.precision > 100)
    fail<Error>(op, "precision must be in [0, 100], got ", o.precision);
  if (o.threshold < 0) fail<Error>(op, "threshold must be non-negative, got ", o.threshold);
  if (o.edgeitems < 0) fail<Error>(op, "edgeitems must be non-negative, got ", o.edgeitems);
  if (o.linewidth < 1) fail<Error>(op, "linewidth must be positive, got ", o.linewidth);
}

}  // namespace

void set_printoptions(std::optional<int> precision, std::optional<int64_t> threshold,
                      std::optional<int64_t> edgeitems, std::optional<int64_t> linewidth,
                      std::optional<bool> sci_mode, std::optional<std::string> profile) {
  PrintOptions next = get_printoptions();
  if (profile) {
    next = PrintOptions{};
    if (*profile == "short") {
      next.precision = 2;
      next.edgeitems = 2;
    } else if (*profile == "full") {
      next.threshold = std::numeric_limits<int64_t>::max();
    } else if (*profile != "default") {
      fail<Error>("tl::set_printoptions",
                  "profile must be \"default\", \"short\" or \"full\", got \"", *profile, "\"");
    }
  }
  if (precision) next.precision = *precision;
  if (threshold) next.threshold = *threshold;
  if (edgeitems) next.edgeitems = *edgeitems;
  if (linewidth) next.linewidth = *linewidth;
  next.sci_mode = sci_mode;
  set_printoptions(next);
}

void set_printoptions(const PrintOptions& options) {
  check(options);
  std::lock_guard<std::mutex> lock(options_mutex());
  current() = options;
}

PrintOptions get_printoptions() {
  std::lock_guard<std::mutex> lock(options_mutex());
  return current();
}

}  // namespace tensorlet

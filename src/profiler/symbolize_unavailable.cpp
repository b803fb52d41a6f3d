// Symbolizer for a build without libdw: it never resolves, and says so once in the table's note;
// with_stack then records the enclosing RecordFunction scopes only and captures nothing.
#include "tensorlet/profiler/profile.h"
#include "tensorlet/profiler/symbolize.h"

namespace tensorlet::profiler {

bool call_stacks_available() { return false; }

namespace detail {

struct Symbolizer::Impl {
  std::string error =
      "Stacks are RecordFunction scopes: C++ call sites need libdw (elfutils, Debian "
      "libdw-dev), which this build of tensorlet did not find";
};

Symbolizer::Symbolizer() : impl_(std::make_unique<Impl>()) {}
Symbolizer::~Symbolizer() = default;
bool Symbolizer::ok() const { return false; }
const std::string& Symbolizer::error() const { return impl_->error; }
std::vector<SourceFrame> Symbolizer::frames(uintptr_t) { return {}; }
std::vector<SourceFrame> Symbolizer::frames_at(uintptr_t) { return {}; }

}  // namespace detail

}  // namespace tensorlet::profiler

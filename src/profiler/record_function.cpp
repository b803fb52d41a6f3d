// RecordFunction: a user scope ("LINEAR PASS") recorded like an op, with where it was opened.
#include "profiler/op_scope.h"
#include "profiler/profile.h"
#include "profiler/recorder.h"

namespace tensorlet::profiler {

RecordFunction::RecordFunction(std::string name, std::source_location where)
    : active_(detail::g_recording.load(std::memory_order_relaxed) &&
              detail::user_scope_begin(std::move(name), where.file_name(), where.line())) {}

RecordFunction::RecordFunction(const char* name, std::source_location where)
    : active_(detail::g_recording.load(std::memory_order_relaxed) &&
              detail::user_scope_begin(std::string(name), where.file_name(), where.line())) {}

RecordFunction::~RecordFunction() {
  if (active_) detail::user_scope_end();
}

}  // namespace tensorlet::profiler

// RecordFunction: a user scope ("LINEAR PASS") recorded like an op, with where it was opened.
#include "tensorlet/tensor/op_scope.h"
#include "tensorlet/profiler/profile.h"
#include "tensorlet/profiler/recorder.h"

namespace tensorlet::profiler {

RecordFunction::RecordFunction(std::string name, std::source_location where)
    : state_(detail::g_recording.load(std::memory_order_relaxed)
                 ? detail::user_scope_begin(std::move(name), where.file_name(), where.line())
                 : 0) {}

RecordFunction::RecordFunction(const char* name, std::source_location where)
    : state_(detail::g_recording.load(std::memory_order_relaxed)
                 ? detail::user_scope_begin(std::string(name), where.file_name(), where.line())
                 : 0) {}

RecordFunction::~RecordFunction() {
  if (state_ != 0) detail::user_scope_end(state_);
}

}  // namespace tensorlet::profiler

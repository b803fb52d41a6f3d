// Profiler hook state; the profiler proper (a later issue) records scopes here.
#include "profiler/op_scope.h"

namespace tensorlet::profiler::detail {

std::atomic<bool> g_recording{false};

void op_begin(const char*) {}
void op_end() {}

}  // namespace tensorlet::profiler::detail

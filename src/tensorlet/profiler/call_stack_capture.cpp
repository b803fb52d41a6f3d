// capture_call_stack: an op's return addresses at the moment it opens, through libgcc's unwinder
// (_Unwind_Backtrace, the one C++ exceptions use): no allocation, no symbol lookup.
#include <unwind.h>

#include "tensorlet/profiler/call_stack.h"

namespace tensorlet::profiler::detail {

namespace {

struct Walk {
  uintptr_t* pcs;
  int max;
  int skip;  // frames still to pass over, the capturing function's included
  int count = 0;
};

_Unwind_Reason_Code on_frame(struct _Unwind_Context* context, void* arg) {
  auto& walk = *static_cast<Walk*>(arg);
  const uintptr_t pc = _Unwind_GetIP(context);
  if (pc == 0) return _URC_END_OF_STACK;
  if (walk.skip > 0) {
    --walk.skip;
    return _URC_NO_REASON;
  }
  walk.pcs[walk.count++] = pc;
  return walk.count == walk.max ? _URC_END_OF_STACK : _URC_NO_REASON;
}

}  // namespace

// Not inlined: the frame skipped first must be this one.
[[gnu::noinline]] int capture_call_stack(uintptr_t* pcs, int max, int skip) {
  if (max <= 0) return 0;
  Walk walk{pcs, max, skip + 1};
  _Unwind_Backtrace(on_frame, &walk);
  return walk.count;
}

}  // namespace tensorlet::profiler::detail

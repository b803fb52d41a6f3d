// capture_call_stack: an op's return addresses at the moment it opens: no allocation, no symbol
// lookup. libunwind's unw_backtrace when the machine has it (Debian's libunwind8), else libgcc's
// _Unwind_Backtrace (the unwinder C++ exceptions use).
//
// libunwind caches each return address's unwind rule, so a loop's ops unwind in about 10 ns a
// frame; libgcc parses the frame's DWARF rules every time (about 120 ns a frame). libunwind is
// opened with dlopen(RTLD_LOCAL), not linked: libunwind.so.8 also exports the _Unwind_* functions
// of the C++ exception ABI, and linked in, it could take those over from libgcc for the whole
// process (then even libgcc's _Unwind_Backtrace ran 5x slower in a test).
#include <dlfcn.h>
#include <unwind.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

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

// libunwind's `int unw_backtrace(void** buffer, int size)`: the return addresses of the calling
// thread, the first one inside the function that called it.
using UnwBacktrace = int (*)(void**, int);

UnwBacktrace open_libunwind() {
  if (const char* unwinder = std::getenv("TL_PROFILER_UNWINDER");
      unwinder != nullptr && std::strcmp(unwinder, "libgcc") == 0)
    return nullptr;
  void* library = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) return nullptr;
  return reinterpret_cast<UnwBacktrace>(dlsym(library, "unw_backtrace"));  // kept open for good
}

UnwBacktrace libunwind_backtrace() {
  static const UnwBacktrace fn = open_libunwind();
  return fn;
}

}  // namespace

// Not inlined: the frame skipped first must be this one.
[[gnu::noinline]] int capture_call_stack_libgcc(uintptr_t* pcs, int max, int skip) {
  if (max <= 0) return 0;
  Walk walk{pcs, max, skip + 1};
  _Unwind_Backtrace(on_frame, &walk);
  return walk.count;
}

// Not inlined, and not a tail call into unw_backtrace: its first address must be in this frame.
[[gnu::noinline]] int capture_call_stack_libunwind(uintptr_t* pcs, int max, int skip) {
  const UnwBacktrace backtrace = libunwind_backtrace();
  if (backtrace == nullptr) return -1;
  if (max <= 0) return 0;
  constexpr int kRoom = kMaxFrames + 16;
  void* frames[kRoom];
  const int drop = std::min(skip + 1, kRoom);
  const int n = backtrace(frames, std::min(max + drop, kRoom));
  const int kept = std::clamp(n - drop, 0, max);
  std::memcpy(pcs, frames + drop, sizeof(uintptr_t) * static_cast<size_t>(kept));
  return kept;
}

bool capture_uses_libunwind() { return libunwind_backtrace() != nullptr; }

[[gnu::noinline]] int capture_call_stack(uintptr_t* pcs, int max, int skip) {
  // One more frame to skip, this dispatcher's own, which must therefore exist: the empty asm
  // reads n after the call, so the compiler cannot turn the call into a jump.
  int n = libunwind_backtrace() != nullptr ? capture_call_stack_libunwind(pcs, max, skip + 1)
                                           : capture_call_stack_libgcc(pcs, max, skip + 1);
  asm volatile("" : "+r"(n));
  return n;
}

}  // namespace tensorlet::profiler::detail

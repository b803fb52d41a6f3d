// The flag every OpScope reads; the recording behind op_begin/op_end lives in recorder.cpp.
#include "tensorlet/tensor/op_scope.h"

namespace tensorlet::profiler::detail {

// Relaxed is enough: a thread that sees it late misses at most the ops racing with start/stop,
// and the recorder's own locks order everything it records.
std::atomic<bool> g_recording{false};

}  // namespace tensorlet::profiler::detail

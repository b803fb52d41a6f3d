// profiler::Event: one recorded interval or memory change — an op, a user scope, a GPU kernel or
// copy, a runtime call, or an allocation — as the recorder stores it and the aggregation reads it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tensorlet::profiler {

enum class Activity : uint8_t { CPU, CUDA };

enum class EventKind : uint8_t {
  Op,         // a tensorlet op (tl::add), opened by OpScope
  UserScope,  // a RecordFunction
  Kernel,     // a GPU kernel (CUDA activity)
  Memcpy,     // a GPU copy
  Memset,     // a GPU memset
  Runtime,    // a CUDA runtime or driver launch call on the host (cudaLaunchKernel,
              // cuLaunchKernelEx ...), CUDA activity
  Memory,     // an allocation (bytes > 0) or a free (bytes < 0); start_ns == end_ns
};

struct Event {
  std::string name;  // "tl::add", "LINEAR PASS", a kernel's name, "[memory]"
  EventKind kind = EventKind::Op;
  int64_t id = 0;       // unique within a profile, > 0
  int64_t parent = 0;   // id of the innermost enclosing Op/UserScope on the same
                        // thread, 0 at top level; for GPU events: the op that launched
                        // them (through the correlation id), 0 when unknown
  int depth = 0;        // nesting depth on its thread (0: top level)
  uint32_t thread = 0;  // the recorder's thread number (1, 2, ... in order of first use)
  int64_t start_ns = 0, end_ns = 0;  // nanoseconds on the profiler's clock (steady_clock since
                                     // the profile started); GPU events are mapped onto it
  // record_shapes: the input tensors' shapes (empty entry for a non-tensor argument).
  std::vector<std::vector<int64_t>> input_shapes;
  // with_stack: the user's C++ frames where this op or user scope was opened, outermost first
  // ("model.cpp:42 Model::forward()"; library and runtime frames folded away), or, in a build
  // without call stacks (profiler::call_stacks_available()), the names of the enclosing user
  // scopes; and where a user scope was opened ("file.cpp:42"; empty for ops).
  std::vector<std::string> stack;
  std::string source;
  // with_flops (matmul, mm, bmm, linear): floating-point operations of the op.
  int64_t flops = 0;
  // Autograd: the node an op made (forward) or the node a backward scope ran
  // ("autograd::engine::evaluate_function: MulBackward0"), by its sequence number; -1: none.
  int64_t sequence_nr = -1;
  bool backward = false;
  // Memory events: bytes (+alloc / -free) and the device ("cpu", "cuda:0").
  int64_t bytes = 0;
  std::string device;
  // GPU events: device index, stream handle, the runtime's correlation id.
  int device_index = -1;
  uint64_t stream = 0;
  uint64_t correlation = 0;

  int64_t duration_ns() const { return end_ns - start_ns; }
  bool is_gpu() const {
    return kind == EventKind::Kernel || kind == EventKind::Memcpy || kind == EventKind::Memset;
  }
};

}  // namespace tensorlet::profiler

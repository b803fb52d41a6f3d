// The CPU backend's worker threads: the chunks of one parallel loop run on the calling thread and
// on pool workers, and the caller never waits for a worker that has not started one.
#pragma once

#include <cstdint>

namespace tensorlet::cpu {

// A non-owning reference to a callable taking a chunk index (the loop body outlives the call).
class ChunkFn {
 public:
  template <typename F>
  ChunkFn(const F& f)  // NOLINT: implicit, so run_chunks takes a lambda
      : object_(&f), call_([](const void* o, int64_t c) { (*static_cast<const F*>(o))(c); }) {}
  void operator()(int64_t chunk) const { call_(object_, chunk); }

 private:
  const void* object_;
  void (*call_)(const void*, int64_t);
};

// Calls fn(c) once for every c in [0, chunks), on the calling thread and on up to threads - 1
// pool workers, and returns when every call has returned; an exception thrown by a call is
// rethrown here (the first one, when several throw). Chunks are claimed one at a time, so a worker
// the OS has not scheduled yet leaves its share to the threads that are running. Everything runs on
// the calling thread when it is itself running a chunk (loops never nest) or while another
// thread's loop holds the pool. A `small` loop (tens of µs alone) also runs on the calling thread
// while the pool's recent loops have finished later than their callers alone would have: on a
// machine busy with other work, workers wait for a CPU, and an op would wait for them.
void run_chunks(int64_t chunks, int threads, ChunkFn fn, bool small = false);

// Whether the calling thread is running a chunk of run_chunks.
bool in_chunk();

// How many loops have gone to the pool since the process started (tests check that small ops
// never do).
int64_t pool_jobs();

}  // namespace tensorlet::cpu

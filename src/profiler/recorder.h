// The recorder behind Profile: per-thread event buffers, how a thread learns that it records, and
// turning raw records into Events. Internal to the profiler.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "tensorlet/profiler/call_stack.h"
#include "tensorlet/profiler/event.h"
#include "tensorlet/profiler/profile.h"

namespace tensorlet::profiler::detail {

// How a recording times GPU work: not at all, CUPTI activity records, or CUDA-event pairs per op.
enum class GpuMode : uint8_t { Off, Cupti, Events };

// What opening a scope did; the scope object keeps these bits and closing undoes exactly that,
// so NVTX and CUPTI stacks stay balanced when a recording stops while scopes are open.
enum ScopeState : uint8_t {
  kScopeRecorded = 1,  // appended to a buffer (always set when anything else is)
  kScopeNvtx = 2,      // pushed an NVTX range
  kScopeCupti = 4,     // pushed a CUPTI external correlation id
};

// CUDA-event fallback: the event pair around one op (the op's RawEvent::scope indexes these).
struct GpuMark {
  int32_t index;          // the op's record in the buffer
  int device;             // where the events were recorded
  bool cuda = false;      // the op had CUDA inputs or allocated CUDA memory
  void* start = nullptr;  // cudaEvent_t
  void* end = nullptr;
};

// The options a recording thread reads on its hot path, copied so it never touches the Profile.
struct RecordFlags {
  bool record_shapes = false;
  bool profile_memory = false;
  bool with_flops = false;
  bool emit_nvtx = false;
  bool call_stacks = false;    // with_stack in a build that can symbolize: capture return addresses
  GpuMode gpu = GpuMode::Off;  // how this recording times GPU work (gpu_trace.h)
  uint16_t generation = 0;     // this recording's number, in its GPU scope keys
};

// One scope or memory change as recorded, kept small (48 bytes) since every op writes one: op
// names stay const char* (string literals); what only user scopes or record_shapes need lives in
// side tables of the buffer.
struct RawEvent {
  const char* name;  // ops; nullptr for user scopes and memory
  int64_t start;     // steady_clock ns
  int64_t end;       // -1 while open
  int64_t value;     // ops: flops; memory: bytes (+alloc / -free)
  int32_t parent;    // index in the same buffer, -1 at top level
  int32_t scope;     // user scopes: index in Buffer::scopes
  int32_t depth;
  EventKind kind;
  int8_t device_type;  // memory
  int16_t device_index;
};

// op_sequence_nr's record: the scope at `index` made (or, backward, ran) that autograd node.
struct SequenceMark {
  int32_t index;
  bool backward;
  int64_t sequence_nr;
};

struct UserScopeInfo {
  std::string name;
  const char* file;  // std::source_location's file name: static storage
  uint32_t line;
};

// Fixed-size blocks: appending never moves what was recorded, and each block is touched only as
// it fills (no doubling copies, no untouched reserve).
class EventBlocks {
 public:
  static constexpr size_t kBlock = 4096;
  RawEvent& push() {
    if (size_ == blocks_.size() * kBlock)
      blocks_.push_back(std::make_unique_for_overwrite<RawEvent[]>(kBlock));
    RawEvent& e = blocks_[size_ / kBlock][size_ % kBlock];
    ++size_;
    return e;
  }
  RawEvent& operator[](size_t i) { return blocks_[i / kBlock][i % kBlock]; }
  size_t size() const { return size_; }

 private:
  std::vector<std::unique_ptr<RawEvent[]>> blocks_;
  size_t size_ = 0;
};

// One thread's records for one recording; written only by its thread, under ThreadState::lock.
struct Buffer {
  uint32_t thread = 0;    // the session's thread number
  int64_t closed_at = 0;  // when the recording detached it: the end of scopes still open
  RecordFlags flags;
  EventBlocks events;
  std::vector<int32_t> open;  // indices of the open scopes, innermost last
  std::vector<UserScopeInfo> scopes;
  std::vector<std::pair<int32_t, std::vector<std::vector<int64_t>>>> shapes;  // record_shapes
  std::vector<GpuMark> gpu_marks;                                             // GpuMode::Events
  std::vector<SequenceMark> sequence_nrs;  // autograd nodes made or run by a scope
  FramePool frames;              // RecordFlags::call_stacks: ops' and user scopes' return addresses
  std::vector<RawStack> stacks;  // one per captured scope, into frames
};

struct ThreadState;
class GpuSession;

// A recording session: what Profile drives. Starting claims the calling thread (or the
// all-threads slot); recording can be switched on and off (schedule phases) while it stays claimed.
class Session {
 public:
  explicit Session(const ProfileOptions& options);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Claims the thread / all-threads slot; throws tl::Error when a Profile already records there.
  void claim();
  void release();
  // Starts collecting into fresh buffers (the clock's zero is now).
  void begin_recording();
  // Stops collecting; returns the events (scopes still open are closed at this instant).
  std::vector<Event> end_recording();
  bool recording() const { return recording_; }
  // Activity::CUDA: whether GPU time is in the events of the last recording, and what the table
  // should say about how it was measured (or why it is missing).
  bool gpu_recorded() const { return gpu_recorded_; }
  const std::string& gpu_note() const { return gpu_note_; }
  // with_stack: whether the last recording's stacks are C++ call sites (else scope names), and
  // what the table should say when they are not.
  bool call_sites() const { return call_sites_; }
  const std::string& stack_note() const { return stack_note_; }

  // Registers a thread joining an all-threads recording (called by the recorder).
  Buffer* join(const std::shared_ptr<ThreadState>& thread);

 private:
  std::vector<Event> to_events(std::vector<std::unique_ptr<Buffer>>& buffers);
  // with_stack: each event's user frames from its captured addresses, or, where the build or the
  // process cannot symbolize, its enclosing user scopes (and stack_note_ says why).
  void fill_stacks(std::vector<Event>& events, const std::vector<std::unique_ptr<Buffer>>& buffers,
                   const std::vector<int64_t>& parent_index);

  RecordFlags flags_;
  bool with_stack_;
  bool all_threads_;
  bool claimed_ = false;
  bool recording_ = false;
  bool cuda_ = false;  // Activity::CUDA requested
  bool gpu_recorded_ = false;
  std::string gpu_note_;
  bool call_sites_ = false;
  std::string stack_note_;
  std::unique_ptr<GpuSession> gpu_;
  int64_t origin_ns_ = 0;
  std::shared_ptr<ThreadState> owner_;  // the starting thread
  std::mutex mutex_;                    // guards the lists below (joins race with stop)
  std::vector<std::unique_ptr<Buffer>> buffers_;
  std::vector<std::shared_ptr<ThreadState>> threads_;
};

// Where the calling thread's last end_recording spent its time (bench_profiler reports it, so the
// cost of stop() can be told apart): waiting for the devices, CUPTI's flush, parsing its records,
// building the CPU events, joining the GPU side to them. Zeros for phases that did not run.
struct StopPhases {
  int64_t sync_ns = 0, flush_ns = 0, parse_ns = 0, events_ns = 0, merge_ns = 0;
};
StopPhases last_stop_phases();

// Steady-clock nanoseconds, the recorder's time base.
int64_t now_ns();
// The indices of events in start-time order, ties in index order (a stable order): sorts
// (start, index) pairs, which is several times cheaper than sorting Events or an indirect sort.
std::vector<size_t> start_order(const std::vector<Event>& events);
// The calling thread's state (created on first use; shared so a session outlives a thread).
const std::shared_ptr<ThreadState>& this_thread_state();
// The recorder's side of RecordFunction.
uint8_t user_scope_begin(std::string&& name, const char* file, uint32_t line);
void user_scope_end(uint8_t state);

}  // namespace tensorlet::profiler::detail

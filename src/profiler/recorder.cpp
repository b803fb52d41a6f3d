// The recorder: per-thread buffers that op and user scopes and allocations append to, the claim
// rules (one Profile per thread; one all-threads Profile), and the conversion to Events at stop.
#include "tensorlet/profiler/recorder.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <numeric>
#include <string_view>

#include "tensorlet/tensor/op_scope.h"
#include "tensorlet/tensor/device.h"
#include "tensorlet/tensor/error.h"
#include "tensorlet/tensor/tensor.h"

#include "tensorlet/profiler/gpu_trace.h"

#if defined(TL_WITH_CUDA)
#include <nvtx3/nvToolsExt.h>
#endif

namespace tensorlet::profiler::detail {

namespace {

// The owner thread is the only one that takes it on the hot path, so it is uncontended except
// for the instant a stop detaches the buffer: cheaper than a mutex, and stop never misses a write.
class SpinLock {
 public:
  void lock() {
    while (locked_.exchange(true, std::memory_order_acquire))
      while (locked_.load(std::memory_order_relaxed)) {
      }
  }
  void unlock() { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

}  // namespace

struct ThreadState {
  SpinLock lock;
  // Guarded by lock: where this thread records now (nullptr: it does not), the session that owns
  // that buffer, and the per-thread session that claims this thread.
  Buffer* buffer = nullptr;
  const Session* buffer_session = nullptr;
  const Session* owner = nullptr;
};

namespace {

// Lock order: g_slot_mutex, then a Session's mutex, then a ThreadState's lock.
std::mutex g_slot_mutex;
Session* g_all_threads = nullptr;  // the all-threads session, claimed (guarded by g_slot_mutex)
int g_recording_sessions = 0;      // guarded by g_slot_mutex; mirrors g_recording
// True while the all-threads session records: threads without a buffer then join it.
std::atomic<bool> g_all_threads_recording{false};

// The fast path reads a trivial thread_local; the holder keeps the state alive (shared with the
// sessions that recorded this thread) and marks the thread dead once its destructors run, so a
// Storage freed by a later thread_local destructor does not recreate it.
thread_local ThreadState* t_state = nullptr;
thread_local bool t_exited = false;
struct StateHolder {
  std::shared_ptr<ThreadState> state = std::make_shared<ThreadState>();
  ~StateHolder() {
    t_state = nullptr;
    t_exited = true;
  }
};

ThreadState* thread_state() {
  if (t_state != nullptr) return t_state;
  if (t_exited) return nullptr;
  return this_thread_state().get();
}

// Locks the thread's state and returns its buffer, joining an all-threads recording on first use;
// on nullptr the lock is not held.
Buffer* lock_buffer(ThreadState& ts) {
  ts.lock.lock();
  if (ts.buffer != nullptr) return ts.buffer;
  const bool may_join =
      ts.owner == nullptr && g_all_threads_recording.load(std::memory_order_acquire);
  ts.lock.unlock();
  if (!may_join) return nullptr;
  {
    std::lock_guard slot(g_slot_mutex);
    if (g_all_threads == nullptr) return nullptr;
    g_all_threads->join(this_thread_state());
  }
  ts.lock.lock();
  if (ts.buffer != nullptr) return ts.buffer;
  ts.lock.unlock();
  return nullptr;
}

// Appends a record to b (its parent: the innermost open scope); the caller holds the lock.
RawEvent& push_event(Buffer& b, EventKind kind) {
  RawEvent& e = b.events.push();
  e.name = nullptr;
  e.end = -1;
  e.value = 0;
  e.parent = b.open.empty() ? -1 : b.open.back();
  e.scope = -1;
  e.depth = static_cast<int32_t>(b.open.size());
  e.kind = kind;
  e.device_type = 0;
  e.device_index = 0;
  return e;
}

// Appends and opens a scope. What can throw (allocation) happens before anything changes, so a
// failed open leaves the buffer as it was and its stack balanced.
RawEvent& open_scope(Buffer& b, EventKind kind) {
  if (b.open.size() == b.open.capacity()) b.open.reserve(2 * b.open.capacity() + 16);
  const auto index = static_cast<int32_t>(b.events.size());
  RawEvent& e = push_event(b, kind);
  b.open.push_back(index);
  return e;
}

// with_stack: room for a scope's return addresses, made before the scope opens (what can throw
// happens before anything changes).
uintptr_t* reserve_stack(Buffer& b) {
  if (!b.flags.call_stacks) return nullptr;
  if (b.stacks.size() == b.stacks.capacity()) b.stacks.reserve(2 * b.stacks.capacity() + 256);
  return b.frames.reserve();
}

void nvtx_push([[maybe_unused]] const char* name) {
#if defined(TL_WITH_CUDA)
  nvtxRangePushA(name);
#endif
}

void nvtx_pop() {
#if defined(TL_WITH_CUDA)
  nvtxRangePop();
#endif
}

// Closes the innermost open scope. Scopes close in LIFO order, so a scope opened in an earlier
// recording finds this buffer's stack empty and is ignored; what it pushed (state bits) is popped
// either way.
void close_scope(uint8_t state) {
  const int64_t t = now_ns();
  if (ThreadState* ts = thread_state()) {
    std::lock_guard guard(ts->lock);
    Buffer* b = ts->buffer;
    if (b != nullptr && !b->open.empty()) {
      RawEvent& e = b->events[b->open.back()];
      e.end = t;
#if defined(TL_WITH_CUDA)
      if (b->flags.gpu == GpuMode::Events) gpu_scope_end(*b, e);
#endif
      b->open.pop_back();
    }
  }
#if defined(TL_WITH_CUDA)
  if (state & kScopeCupti) gpu_pop_scope();
#endif
  if (state & kScopeNvtx) nvtx_pop();
}

std::vector<int64_t> shape_of(const Tensor* t) {
  if (t == nullptr || !t->defined()) return {};
  return t->shape().vec();
}

bool on_cuda(const Tensor* t) { return t != nullptr && t->defined() && t->device().is_cuda(); }

// CUDA-event fallback: only ops that touched CUDA get GPU time.
void mark_cuda([[maybe_unused]] Buffer& b) {
#if defined(TL_WITH_CUDA)
  gpu_mark_cuda(b);
#endif
}

std::string_view base_name(const char* path) {
  std::string_view p(path);
  const size_t slash = p.find_last_of("/\\");
  return slash == std::string_view::npos ? p : p.substr(slash + 1);
}

}  // namespace

namespace {
thread_local StopPhases g_last_stop;
}  // namespace

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::vector<size_t> start_order(const std::vector<Event>& events) {
  std::vector<std::pair<int64_t, size_t>> keyed(events.size());
  for (size_t i = 0; i < events.size(); ++i) keyed[i] = {events[i].start_ns, i};
  std::sort(keyed.begin(), keyed.end());
  std::vector<size_t> order(events.size());
  for (size_t i = 0; i < keyed.size(); ++i) order[i] = keyed[i].second;
  return order;
}

const std::shared_ptr<ThreadState>& this_thread_state() {
  thread_local StateHolder holder;
  t_state = holder.state.get();
  return holder.state;
}

uint8_t op_begin(const char* name) {
  ThreadState* ts = thread_state();
  if (ts == nullptr) return 0;
  Buffer* b = lock_buffer(*ts);
  if (b == nullptr) return 0;
  std::unique_lock guard(ts->lock, std::adopt_lock);  // released on a throwing allocation too
  uintptr_t* pcs = reserve_stack(*b);
  RawEvent& e = open_scope(*b, EventKind::Op);
  e.name = name;
  if (pcs != nullptr) {
    // Unwound here, not in a helper, so the first frame kept is op_begin's caller; before the
    // start time, so the op's own time leaves the capture out.
    const int n = capture_call_stack(pcs, kMaxFrames, /*skip=*/1);
    b->frames.commit(n);
    b->stacks.push_back({static_cast<int32_t>(b->events.size()) - 1, n, pcs});
  }
  uint8_t state = kScopeRecorded;
#if defined(TL_WITH_CUDA)
  if (b->flags.gpu != GpuMode::Off &&
      gpu_scope_begin(*b, e, static_cast<int32_t>(b->events.size()) - 1))
    state |= kScopeCupti;
#endif
  if (b->flags.emit_nvtx) state |= kScopeNvtx;
  e.start = now_ns();
  guard.unlock();
  if (state & kScopeNvtx) nvtx_push(name);
  return state;
}

void op_end(uint8_t state) { close_scope(state); }

uint8_t user_scope_begin(std::string&& name, const char* file, uint32_t line) {
  ThreadState* ts = thread_state();
  if (ts == nullptr) return 0;
  Buffer* b = lock_buffer(*ts);
  if (b == nullptr) return 0;
  std::unique_lock guard(ts->lock, std::adopt_lock);
  // The name first: if storing it throws, no scope was opened.
  const auto info_index = static_cast<int32_t>(b->scopes.size());
  const UserScopeInfo& info = b->scopes.emplace_back(std::move(name), file, line);
  uintptr_t* pcs = reserve_stack(*b);
  RawEvent& e = open_scope(*b, EventKind::UserScope);
  e.scope = info_index;
  if (pcs != nullptr) {
    const int n = capture_call_stack(pcs, kMaxFrames, /*skip=*/1);
    b->frames.commit(n);
    b->stacks.push_back({static_cast<int32_t>(b->events.size()) - 1, n, pcs});
  }
  uint8_t state = kScopeRecorded;
  // The name is pushed under the lock: the table may move the string once we let go.
  if (b->flags.emit_nvtx) {
    nvtx_push(info.name.c_str());
    state |= kScopeNvtx;
  }
#if defined(TL_WITH_CUDA)
  if (b->flags.gpu != GpuMode::Off &&
      gpu_scope_begin(*b, e, static_cast<int32_t>(b->events.size()) - 1))
    state |= kScopeCupti;
#endif
  e.start = now_ns();
  return state;
}

void user_scope_end(uint8_t state) { close_scope(state); }

namespace {

// record_shapes, and the CUDA-event mark, for the innermost open op; input(i) is its i-th input
// (nullptr for a non-tensor argument).
template <class Input>
void record_inputs(size_t count, Input input) {
  ThreadState* ts = thread_state();
  if (ts == nullptr) return;
  std::lock_guard guard(ts->lock);
  Buffer* b = ts->buffer;
  if (b == nullptr) return;
  if (b->flags.gpu == GpuMode::Events) {
    for (size_t i = 0; i < count; ++i)
      if (on_cuda(input(i))) mark_cuda(*b);
  }
  if (!b->flags.record_shapes || b->open.empty()) return;
  auto& shapes = b->shapes.emplace_back(b->open.back(), std::vector<std::vector<int64_t>>{}).second;
  shapes.reserve(count);
  for (size_t i = 0; i < count; ++i) shapes.push_back(shape_of(input(i)));
}

}  // namespace

void op_inputs(const Tensor* tensors, size_t count) {
  record_inputs(count, [tensors](size_t i) { return tensors + i; });
}

void op_inputs(std::initializer_list<const Tensor*> inputs) {
  record_inputs(inputs.size(), [&inputs](size_t i) { return inputs.begin()[i]; });
}

void op_device(const Device& device) {
  ThreadState* ts = thread_state();
  if (ts == nullptr || !device.is_cuda()) return;
  std::lock_guard guard(ts->lock);
  Buffer* b = ts->buffer;
  if (b != nullptr && b->flags.gpu == GpuMode::Events) mark_cuda(*b);
}

void op_flops(int64_t flops) {
  ThreadState* ts = thread_state();
  if (ts == nullptr) return;
  std::lock_guard guard(ts->lock);
  Buffer* b = ts->buffer;
  if (b == nullptr || !b->flags.with_flops || b->open.empty()) return;
  b->events[b->open.back()].value = flops;
}

void op_sequence_nr(int64_t sequence_nr, bool backward) {
  ThreadState* ts = thread_state();
  if (ts == nullptr) return;
  std::lock_guard guard(ts->lock);
  Buffer* b = ts->buffer;
  if (b == nullptr) return;
  // The innermost open op; an op that records its node after its scope closed (the computation
  // below autograd, then the record) is the last op closed at the current depth.
  int32_t index = -1;
  if (!b->open.empty() && b->events[b->open.back()].kind == EventKind::Op) {
    index = b->open.back();
  } else if (!backward) {
    const auto depth = static_cast<int32_t>(b->open.size());
    for (auto i = static_cast<int32_t>(b->events.size()) - 1; i >= 0; --i) {
      const RawEvent& e = b->events[i];
      if (e.kind == EventKind::Memory || e.depth > depth) continue;
      if (e.depth == depth && e.kind == EventKind::Op) index = i;
      break;
    }
  }
  if (index < 0) return;
  // An op that made several nodes (a composite) keeps its first one's number.
  if (!backward && !b->sequence_nrs.empty() && b->sequence_nrs.back().index == index) return;
  // Optional detail: a record that cannot be stored is dropped, not thrown into the op.
  try {
    b->sequence_nrs.push_back({index, backward, sequence_nr});
  } catch (const std::bad_alloc&) {
  }
}

void memory_event(int64_t bytes, Device device) {
  ThreadState* ts = thread_state();
  if (ts == nullptr) return;
  Buffer* b = lock_buffer(*ts);
  if (b == nullptr) return;
  std::unique_lock guard(ts->lock, std::adopt_lock);
  if (device.is_cuda()) mark_cuda(*b);
  if (!b->flags.profile_memory) return;
  // Frees report from noexcept paths: a record that cannot be stored is dropped, not thrown.
  try {
    RawEvent& e = push_event(*b, EventKind::Memory);
    e.value = bytes;
    e.device_type = static_cast<int8_t>(device.type());
    e.device_index = static_cast<int16_t>(device.index());
    e.start = e.end = now_ns();
  } catch (...) {
  }
}

// --- Session ---

Session::Session(const ProfileOptions& options)
    : flags_{options.record_shapes, options.profile_memory, options.with_flops, options.emit_nvtx,
             options.with_stack && call_stacks_available()},
      with_stack_(options.with_stack),
      all_threads_(options.all_threads),
      cuda_(std::find(options.activities.begin(), options.activities.end(), Activity::CUDA) !=
            options.activities.end()) {}

Session::~Session() {
  if (recording_) end_recording();
  if (claimed_) release();
}

void Session::claim() {
  const std::shared_ptr<ThreadState>& me = this_thread_state();
  std::lock_guard slot(g_slot_mutex);
  if (g_all_threads != nullptr)
    fail<Error>("tl::profiler::Profile",
                "another Profile already records all threads; stop it before starting one");
  std::lock_guard guard(me->lock);
  if (me->owner != nullptr)
    fail<Error>("tl::profiler::Profile",
                "another Profile already records this thread; only one may record a thread at a "
                "time (stop it first)");
  if (all_threads_)
    g_all_threads = this;
  else
    me->owner = this;
  owner_ = me;
  claimed_ = true;
}

void Session::release() {
  if (recording_) end_recording();
  std::lock_guard slot(g_slot_mutex);
  if (all_threads_) {
    if (g_all_threads == this) g_all_threads = nullptr;
  } else {
    std::lock_guard guard(owner_->lock);
    if (owner_->owner == this) owner_->owner = nullptr;
  }
  claimed_ = false;
}

void Session::begin_recording() {
  if (recording_) return;
  const int64_t origin = now_ns();
  // Recordings are numbered (never 0) so GPU scope keys of one never match another's.
  static std::atomic<uint16_t> generations{0};
  uint16_t generation = 0;
  while (generation == 0) generation = ++generations;
  flags_.generation = generation;
  // GPU timing starts before any thread joins: joining copies flags_, mode included.
  gpu_recorded_ = false;
  gpu_note_ = cuda_ ? "CUDA activity not recorded yet (CPU events only)" : "";
#if defined(TL_WITH_CUDA)
  if (cuda_) {
    gpu_ = gpu_begin(origin);
    gpu_->generation = generation;
    gpu_->keep_unattributed = all_threads_;
    flags_.gpu = gpu_->mode;
    gpu_note_ = gpu_->note;
  }
#endif
  {
    std::lock_guard guard(mutex_);
    buffers_.clear();
    origin_ns_ = origin;
    recording_ = true;
  }
  {
    std::lock_guard slot(g_slot_mutex);
    if (++g_recording_sessions == 1) g_recording.store(true, std::memory_order_relaxed);
    // The starting thread joins first, so it is thread 1.
    join(owner_);
    if (all_threads_) g_all_threads_recording.store(true, std::memory_order_release);
  }
}

Buffer* Session::join(const std::shared_ptr<ThreadState>& thread) {
  std::lock_guard guard(mutex_);
  if (!recording_) return nullptr;
  auto known = std::find(threads_.begin(), threads_.end(), thread);
  if (known == threads_.end()) known = threads_.insert(threads_.end(), thread);
  auto buffer = std::make_unique<Buffer>();
  buffer->thread = static_cast<uint32_t>(known - threads_.begin()) + 1;
  buffer->flags = flags_;
  std::lock_guard thread_guard(thread->lock);
  if (thread->buffer != nullptr) return thread->buffer;  // it joined meanwhile
  thread->buffer = buffer.get();
  thread->buffer_session = this;
  return buffers_.emplace_back(std::move(buffer)).get();
}

std::vector<Event> Session::end_recording() {
  if (!recording_) return {};
  {
    std::lock_guard slot(g_slot_mutex);
    if (all_threads_) g_all_threads_recording.store(false, std::memory_order_release);
    if (--g_recording_sessions == 0) g_recording.store(false, std::memory_order_relaxed);
  }
  std::vector<std::unique_ptr<Buffer>> buffers;
  {
    std::lock_guard guard(mutex_);
    recording_ = false;
    // After this no thread can write to our buffers: each detach happens under its lock.
    for (const auto& ts : threads_) {
      std::lock_guard thread_guard(ts->lock);
      if (ts->buffer_session == this) {
        // Taken under the lock: every close this buffer saw read the clock before it.
        ts->buffer->closed_at = now_ns();
        ts->buffer = nullptr;
        ts->buffer_session = nullptr;
      }
    }
    buffers.swap(buffers_);
  }
  g_last_stop = {};
#if defined(TL_WITH_CUDA)
  if (gpu_ != nullptr) {
    gpu_end(*gpu_, buffers);
    const int64_t t0 = now_ns();
    std::vector<Event> events = to_events(buffers);
    const int64_t t1 = now_ns();
    gpu_merge(*gpu_, events);
    g_last_stop = {.sync_ns = gpu_->sync_ns,
                   .flush_ns = gpu_->flush_ns,
                   .parse_ns = gpu_->parse_ns,
                   .events_ns = t1 - t0,
                   .merge_ns = now_ns() - t1};
    gpu_recorded_ = gpu_->mode != GpuMode::Off;
    gpu_note_ = gpu_->note;
    gpu_.reset();
    flags_.gpu = GpuMode::Off;
    return events;
  }
#endif
  const int64_t t0 = now_ns();
  std::vector<Event> events = to_events(buffers);
  g_last_stop.events_ns = now_ns() - t0;
  return events;
}

StopPhases last_stop_phases() { return g_last_stop; }

void Session::fill_stacks(std::vector<Event>& events,
                          const std::vector<std::unique_ptr<Buffer>>& buffers,
                          const std::vector<int64_t>& parent_index) {
  call_sites_ = false;
  stack_note_.clear();
  if (flags_.call_stacks) {
    Symbolizer symbolizer;
    if (symbolizer.ok()) {
      StackFolder folder(symbolizer);
      size_t base = 0;
      for (const auto& b : buffers) {
        for (const RawStack& s : b->stacks)
          events[base + s.event].stack = folder.fold(s.pcs, s.count);
        base += b->events.size();
      }
      call_sites_ = true;
      return;
    }
    stack_note_ = symbolizer.error();
  } else {
    stack_note_ = Symbolizer().error();
  }
  // The chain of enclosing user scopes, read off the parent links: nothing recorded per event.
  for (size_t i = 0; i < events.size(); ++i) {
    std::vector<std::string> chain;
    for (int64_t p = parent_index[i]; p >= 0; p = parent_index[p])
      if (events[p].kind == EventKind::UserScope) chain.push_back(events[p].name);
    events[i].stack.assign(chain.rbegin(), chain.rend());
  }
}

std::vector<Event> Session::to_events(std::vector<std::unique_ptr<Buffer>>& buffers) {
  size_t total = 0;
  for (const auto& b : buffers) total += b->events.size();
  std::vector<Event> events(total);
  std::vector<int64_t> parent_index(total);  // index into events, -1 at top level
  size_t base = 0;
  for (const auto& b : buffers) {
    for (size_t i = 0; i < b->events.size(); ++i) {
      const RawEvent& r = b->events[i];
      Event& e = events[base + i];
      e.kind = r.kind;
      if (r.kind == EventKind::Memory) {
        e.name = "[memory]";
        e.bytes = r.value;
        e.device = Device(static_cast<DeviceType>(r.device_type), r.device_index).str();
      } else if (r.kind == EventKind::UserScope) {
        UserScopeInfo& info = b->scopes[r.scope];
        e.name = std::move(info.name);
        if (with_stack_)
          e.source = std::string(base_name(info.file)) + ":" + std::to_string(info.line);
      } else {
        e.name = r.name;
        e.flops = r.value;
      }
      e.depth = r.depth;
      e.thread = b->thread;
      // GPU timing links device work to its scope by this key (gpu_merge clears it).
      if (flags_.gpu != GpuMode::Off && r.kind != EventKind::Memory)
        e.correlation = gpu_scope_key(flags_.generation, b->thread, static_cast<int32_t>(i));
      // A scope still open at stop ends there; one opened before the recording is not in it.
      e.start_ns = r.start - origin_ns_;
      e.end_ns = (r.end < 0 ? b->closed_at : r.end) - origin_ns_;
      parent_index[base + i] = r.parent < 0 ? -1 : static_cast<int64_t>(base) + r.parent;
    }
    for (auto& [index, shapes] : b->shapes) events[base + index].input_shapes = std::move(shapes);
    for (const SequenceMark& m : b->sequence_nrs) {
      events[base + m.index].sequence_nr = m.sequence_nr;
      events[base + m.index].backward = m.backward;
    }
    base += b->events.size();
  }
  if (with_stack_) fill_stacks(events, buffers, parent_index);
  // Each buffer is in start order already (one thread, one clock, records appended at their
  // start). Ids follow time order across threads: a stable sort keeps each thread's record order
  // on ties, so parents still precede their children.
  std::vector<size_t> order;
  if (buffers.size() > 1) {
    order = start_order(events);
  } else {
    order.resize(events.size());
    std::iota(order.begin(), order.end(), size_t{0});
  }
  std::vector<int64_t> id_of(events.size());
  for (size_t rank = 0; rank < order.size(); ++rank)
    id_of[order[rank]] = static_cast<int64_t>(rank) + 1;
  for (size_t i = 0; i < events.size(); ++i) {
    events[i].id = id_of[i];
    events[i].parent = parent_index[i] < 0 ? 0 : id_of[parent_index[i]];
  }
  if (buffers.size() == 1) return events;
  std::vector<Event> sorted;
  sorted.reserve(events.size());
  for (size_t i : order) sorted.push_back(std::move(events[i]));
  return sorted;
}

}  // namespace tensorlet::profiler::detail

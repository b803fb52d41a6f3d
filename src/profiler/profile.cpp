// Profile: a session's lifetime (RAII start, stop, restart), the schedule's step machine, and the
// hand-off of its events to aggregation and the exporters.
#include "tensorlet/profiler/profile.h"

#include <algorithm>

#include "tensorlet/profiler/export.h"
#include "tensorlet/profiler/recorder.h"
#include "tensorlet/backends/cuda/cuda.h"
#include "tensorlet/tensor/error.h"

namespace tensorlet::profiler {

namespace {

// What a schedule does in one step (torch.profiler.ProfilerAction).
enum class Phase { None, Warmup, Record, RecordAndSave };

Phase phase_of(const Schedule& s, int64_t step) {
  if (step < s.skip_first) return Phase::None;
  step -= s.skip_first;
  const int64_t cycle = int64_t{s.wait} + s.warmup + s.active;
  if (s.repeat > 0 && step / cycle >= s.repeat) return Phase::None;
  const int64_t at = step % cycle;
  if (at < s.wait) return Phase::None;
  if (at < s.wait + s.warmup) return Phase::Warmup;
  return at == cycle - 1 ? Phase::RecordAndSave : Phase::Record;
}

bool records(Phase p) { return p == Phase::Record || p == Phase::RecordAndSave; }

void check_options(const ProfileOptions& o) {
  if (!o.schedule) return;
  const Schedule& s = *o.schedule;
  if (s.skip_first < 0 || s.wait < 0 || s.warmup < 0 || s.repeat < 0 || s.active < 1)
    fail<Error>("tl::profiler::Profile", "invalid schedule: expected active >= 1 and skip_first, ",
                "wait, warmup, repeat >= 0, got skip_first=", s.skip_first, " wait=", s.wait,
                " warmup=", s.warmup, " active=", s.active, " repeat=", s.repeat);
}

// Why no GPU time can be recorded in this process at all ("" when it can).
std::string why_no_cuda() {
#if defined(TL_WITH_CUDA)
  return tensorlet::cuda::is_available() ? "" : "no CUDA device";
#else
  return "this build of tensorlet has no CUDA backend";
#endif
}

}  // namespace

struct Profile::State {
  explicit State(ProfileOptions o) : options(std::move(o)), session(options) {
    has_cuda = std::find(options.activities.begin(), options.activities.end(), Activity::CUDA) !=
               options.activities.end();
    if (!has_cuda) return;
    // Until a recording says how GPU time was measured, the table says why its CUDA columns
    // are empty rather than showing zeros as if measured; where none can ever be measured it
    // has no CUDA columns at all.
    cuda_note = "CUDA activity not recorded yet (CPU events only)";
    if (const std::string why = why_no_cuda(); !why.empty()) {
      has_cuda = false;
      cuda_note = "CUDA activity not recorded: " + why + " (CPU events only)";
    }
  }
  ProfileOptions options;
  detail::Session session;
  std::vector<Event> events;
  bool running = false;
  bool has_cuda = false;
  std::string cuda_note;
  bool call_sites = false;  // with_stack: the events' stacks are C++ frames, not scope names
  std::string stack_note;   // with_stack: why they are not
  int64_t step = 0;

  Phase phase() const {
    return options.schedule ? phase_of(*options.schedule, step) : Phase::Record;
  }
  // The events of a finished recording, with the note on how their GPU time was measured.
  void deliver(std::vector<Event>&& recorded) {
    events = std::move(recorded);
    if (has_cuda) cuda_note = session.gpu_note();
    call_sites = options.with_stack && session.call_sites();
    stack_note = options.with_stack ? session.stack_note() : std::string();
  }
  void ready(Profile& profile) {
    if (options.on_trace_ready) options.on_trace_ready(profile);
  }
};

Profile::Profile(ProfileOptions options) {
  check_options(options);
  state_ = std::make_unique<State>(std::move(options));
  start();
}

Profile::~Profile() {
  try {
    stop();
  } catch (...) {
    // A throwing on_trace_ready must not escape a destructor; stop() has released the thread.
  }
}

void Profile::start() {
  State& s = *state_;
  if (s.running) return;
  s.session.claim();
  s.events.clear();
  s.running = true;
  s.step = 0;
  if (s.phase() != Phase::None) s.session.begin_recording();
}

void Profile::stop() {
  State& s = *state_;
  if (!s.running) return;
  const Phase phase = s.phase();
  const bool was_recording = s.session.recording();
  std::vector<Event> events;
  if (was_recording) events = s.session.end_recording();
  s.session.release();
  s.running = false;
  // As torch.profiler: stopping inside active steps delivers what they recorded; warmup is dropped.
  if (was_recording && records(phase)) {
    s.deliver(std::move(events));
    s.ready(*this);
  }
}

bool Profile::running() const { return state_->running; }

void Profile::step() {
  State& s = *state_;
  if (!s.running || !s.options.schedule) return;
  const Phase before = s.phase();
  ++s.step;
  const Phase after = s.phase();
  // The next phase's recording starts even when on_trace_ready throws, and not when it stopped
  // the profile.
  auto resume = [&] {
    if (s.running && after != Phase::None && !s.session.recording()) s.session.begin_recording();
  };
  if (before == Phase::RecordAndSave && s.session.recording()) {
    s.deliver(s.session.end_recording());
    try {
      s.ready(*this);
    } catch (...) {
      resume();
      throw;
    }
  } else if (s.session.recording() && (before == Phase::Warmup) != (after == Phase::Warmup)) {
    // Leaving warmup: what it recorded only warmed the recorder up.
    s.session.end_recording();
  }
  resume();
}

const std::vector<Event>& Profile::events() const { return state_->events; }

KeyAverages Profile::key_averages(const KeyAveragesOptions& options) const {
  const State& s = *state_;
  return profiler::key_averages(s.events, options, s.has_cuda, s.options.profile_memory,
                                s.options.record_shapes, s.options.with_stack, s.options.with_flops,
                                s.cuda_note, s.stack_note);
}

void Profile::export_chrome_trace(const std::string& path) const {
  write_chrome_trace(state_->events, path);
}

void Profile::export_stacks(const std::string& path, const std::string& metric) const {
  write_stacks(state_->events, path, metric, state_->call_sites);
}

const ProfileOptions& Profile::options() const { return state_->options; }

}  // namespace tensorlet::profiler

// Joins a recording's GPU side to its CPU events: each kernel, copy and runtime call linked to the
// scope that issued it, then everything put in time order with ids renumbered. Runs inside stop(),
// on tens of thousands of records, so it uses vectors indexed by keys rather than hash maps, and
// moves each Event once.
#include <algorithm>
#include <cstddef>
#include <iterator>
#include <initializer_list>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tensorlet/profiler/gpu_trace.h"

namespace tensorlet::profiler::detail {

namespace {

constexpr size_t kNone = static_cast<size_t>(-1);

bool is_scope(const Event& e) { return e.kind == EventKind::Op || e.kind == EventKind::UserScope; }

// Where each recorded scope sits in the events, found by its gpu_scope_key: per thread, a vector
// indexed by the scope's record number (keys are dense per thread). Keys of another recording
// (a scope left open across recordings) find nothing.
class ScopeIndex {
 public:
  // Takes the keys out of the scopes' correlation field, where they wait only until here.
  ScopeIndex(std::vector<Event>& events, uint16_t generation) : generation_(generation) {
    for (size_t i = 0; i < events.size(); ++i) {
      Event& e = events[i];
      if (!is_scope(e)) continue;
      if (e.correlation != 0) add(e.correlation, i);
      e.correlation = 0;
    }
  }
  size_t find(uint64_t key) const {
    const uint64_t thread = (key >> 32) & 0xffffu, slot = key & 0xffffffffu;
    if ((key >> 48) != generation_ || thread >= by_thread_.size() || slot == 0 ||
        slot > by_thread_[thread].size())
      return kNone;
    return by_thread_[thread][slot - 1];
  }

 private:
  void add(uint64_t key, size_t at) {
    const uint64_t thread = (key >> 32) & 0xffffu, slot = key & 0xffffffffu;
    if ((key >> 48) != generation_ || slot == 0) return;
    if (by_thread_.size() <= thread) by_thread_.resize(thread + 1);
    std::vector<size_t>& slots = by_thread_[thread];
    if (slots.size() < slot) slots.resize(slot, kNone);
    slots[slot - 1] = at;
  }
  uint64_t generation_;
  std::vector<std::vector<size_t>> by_thread_;
};

// CUPTI correlation id -> scope key. Correlation ids count up through a recording, so a table
// indexed from the smallest id is usually dense; when it would not be, a binary search instead.
class ExternalIndex {
 public:
  explicit ExternalIndex(std::vector<std::pair<uint64_t, uint64_t>>& pairs) : pairs_(pairs) {
    // Stable: of two records for one correlation id, the later one wins, as it would in a map.
    if (!std::is_sorted(pairs_.begin(), pairs_.end(), by_correlation))
      std::stable_sort(pairs_.begin(), pairs_.end(), by_correlation);
    if (pairs_.empty()) return;
    low_ = pairs_.front().first;
    const uint64_t range = pairs_.back().first - low_ + 1;
    if (range > 4 * pairs_.size() + 4096) return;
    dense_.assign(range, 0);
    for (const auto& [correlation, key] : pairs_) dense_[correlation - low_] = key;
  }
  // 0 when the call ran outside every recorded scope (keys are never 0).
  uint64_t find(uint64_t correlation) const {
    if (pairs_.empty() || correlation < low_) return 0;
    if (!dense_.empty()) return correlation - low_ < dense_.size() ? dense_[correlation - low_] : 0;
    auto it = std::upper_bound(pairs_.begin(), pairs_.end(),
                               std::pair<uint64_t, uint64_t>{correlation, ~uint64_t{0}});
    if (it == pairs_.begin() || std::prev(it)->first != correlation) return 0;
    return std::prev(it)->second;
  }

 private:
  static bool by_correlation(const std::pair<uint64_t, uint64_t>& a,
                             const std::pair<uint64_t, uint64_t>& b) {
    return a.first < b.first;
  }
  std::vector<std::pair<uint64_t, uint64_t>>& pairs_;
  uint64_t low_ = 0;
  std::vector<uint64_t> dense_;
};

// Replaces events by the union of events and `more` in start order, ids renumbered 1..n in that
// order and parents remapped. Ids must be dense (1..n) over all sources on entry. Ties keep source
// order, then record order: a parent still precedes its children, CPU events precede GPU ones.
void merge_in_time_order(std::vector<Event>& events,
                         std::initializer_list<std::vector<Event>*> more) {
  std::vector<std::vector<Event>*> sources{&events};
  sources.insert(sources.end(), more.begin(), more.end());
  size_t total = 0;  // an upper bound: dropped events (id 0) are not merged
  for (const auto* src : sources) total += src->size();
  constexpr int kSourceShift = 48;
  // Each source is nearly always in start order already (the CPU events by construction, CUPTI's
  // records as a stream runs them): sorting a source only when it is not, then merging the
  // sorted runs, costs a linear pass where one sort of everything cost most of the merge.
  using Key = std::pair<int64_t, uint64_t>;
  std::vector<Key> keyed, run, merged_keys;
  keyed.reserve(total);
  run.reserve(total);
  merged_keys.reserve(total);
  for (size_t s = 0; s < sources.size(); ++s) {
    run.clear();
    for (size_t i = 0; i < sources[s]->size(); ++i)
      if ((*sources[s])[i].id != 0)  // 0: dropped
        run.emplace_back((*sources[s])[i].start_ns, (uint64_t{s} << kSourceShift) | i);
    if (!std::is_sorted(run.begin(), run.end())) std::sort(run.begin(), run.end());
    merged_keys.clear();
    std::merge(keyed.begin(), keyed.end(), run.begin(), run.end(), std::back_inserter(merged_keys));
    keyed.swap(merged_keys);
  }
  auto at = [&](uint64_t tag) -> Event& {
    return (*sources[tag >> kSourceShift])[tag & ((uint64_t{1} << kSourceShift) - 1)];
  };
  std::vector<int64_t> new_id(total + 1, 0);
  for (size_t rank = 0; rank < keyed.size(); ++rank)
    new_id.at(static_cast<size_t>(at(keyed[rank].second).id)) = static_cast<int64_t>(rank) + 1;
  std::vector<Event> merged;
  merged.reserve(total);
  for (const auto& k : keyed) {
    Event& e = merged.emplace_back(std::move(at(k.second)));
    e.id = new_id[static_cast<size_t>(e.id)];
    if (e.parent != 0) e.parent = new_id.at(static_cast<size_t>(e.parent));
  }
  events.swap(merged);
}

// CUPTI: runtime calls and device work linked to the scope whose external id was pushed when the
// call ran.
void merge_cupti(GpuSession& s, std::vector<Event>& events, const ScopeIndex& scopes,
                 int64_t next_id) {
  const ExternalIndex external(s.external);
  auto scope_for = [&](uint64_t correlation) { return scopes.find(external.find(correlation)); };
  // The warm-up launch made at start belongs to the profiler, not to the user's work.
  auto is_warmup = [&](uint64_t correlation) {
    return external.find(correlation) == kWarmupExternalId;
  };
  // A runtime call outside every recorded scope (another thread, the profiler's own sync) has no
  // thread of ours to sit on: dropped. Dropped records keep id 0 and the merge skips them, which
  // spares moving every later record to close the gap.
  for (Event& r : s.runtime) {
    const size_t op = scope_for(r.correlation);
    if (op == kNone) continue;
    r.parent = events[op].id;
    r.thread = events[op].thread;
    r.depth = events[op].depth + 1;
    r.id = next_id++;
  }
  // CUPTI records the whole process: device work of no scope of ours came from another thread
  // (or from outside every scope), and belongs here only when the recording covers all threads.
  for (Event& d : s.device) {
    const size_t op = scope_for(d.correlation);
    if (op == kNone && (!s.keep_unattributed || is_warmup(d.correlation))) continue;
    d.parent = op == kNone ? 0 : events[op].id;
    d.depth = op == kNone ? 0 : events[op].depth + 1;
    d.id = next_id++;
  }
  if (!s.runtime.empty() || !s.device.empty()) merge_in_time_order(events, {&s.runtime, &s.device});
  if (s.dropped > 0)
    s.note = "CUPTI dropped " + std::to_string(s.dropped) + " activity records: CUDA times are low";
}

// CUDA events: one interval per op that touched CUDA, its own share (nested ops' time taken out).
void merge_events(GpuSession& s, std::vector<Event>& events, const ScopeIndex& scopes,
                  int64_t next_id) {
  std::unordered_map<int64_t, size_t> by_id;
  for (size_t i = 0; i < events.size(); ++i) by_id.emplace(events[i].id, i);
  // Per event index: the op's measured GPU time, whether it touched CUDA (or a nested op did),
  // and the time of its directly nested ops, so each op keeps only its own share.
  std::unordered_map<size_t, const GpuSession::Timed*> timed_at;
  for (const GpuSession::Timed& t : s.timed) {
    const size_t at = scopes.find(t.key);
    if (at != kNone && t.elapsed_ms >= 0) timed_at.emplace(at, &t);
  }
  std::unordered_map<size_t, bool> counted;
  std::unordered_map<size_t, double> children_ms;
  for (const auto& [at, t] : timed_at) {
    auto p = by_id.find(events[at].parent);
    if (p != by_id.end() && timed_at.count(p->second)) children_ms[p->second] += t->elapsed_ms;
    if (!t->cuda) continue;
    for (size_t i = at, steps = 0; steps <= events.size(); ++steps) {
      if (!timed_at.count(i) || counted[i]) break;
      counted[i] = true;
      auto up = by_id.find(events[i].parent);
      if (up == by_id.end()) break;
      i = up->second;
    }
  }
  std::vector<Event> added;
  for (const auto& [at, t] : timed_at) {
    if (!counted[at]) continue;
    const double self_ms = t->elapsed_ms - children_ms[at];
    const auto self_ns = static_cast<int64_t>(self_ms * 1e6);
    if (self_ns <= 0) continue;
    const Event& op = events[at];
    Event k;
    k.name = op.name + " [CUDA events]";
    k.kind = EventKind::Kernel;
    k.parent = op.id;
    k.depth = op.depth + 1;
    k.thread = op.thread;
    k.start_ns = op.start_ns;
    k.end_ns = op.start_ns + self_ns;  // a duration for now: placed below
    k.device_index = t->device;
    added.push_back(std::move(k));
  }
  // Events give a duration, not a place on the GPU timeline: each op's interval is drawn at its
  // op's start or right after the previous one on its device, so a device's track never overlaps
  // itself (the trace format requires that of one track), in launch order.
  std::sort(added.begin(), added.end(),
            [](const Event& x, const Event& y) { return x.start_ns < y.start_ns; });
  std::unordered_map<int, int64_t> device_free_at;
  for (Event& k : added) {
    const int64_t duration = k.duration_ns();
    auto it = device_free_at.try_emplace(k.device_index, k.start_ns).first;
    k.start_ns = std::max(k.start_ns, it->second);
    k.end_ns = k.start_ns + duration;
    it->second = k.end_ns;
    k.id = next_id++;
  }
  if (!added.empty()) merge_in_time_order(events, {&added});
}

}  // namespace

void gpu_merge(GpuSession& s, std::vector<Event>& events) {
  const ScopeIndex scopes(events, s.generation);
  const auto next_id = static_cast<int64_t>(events.size()) + 1;  // ids are 1..n
  if (s.mode == GpuMode::Cupti) merge_cupti(s, events, scopes, next_id);
  if (s.mode == GpuMode::Events) merge_events(s, events, scopes, next_id);
}

}  // namespace tensorlet::profiler::detail

// The caching device allocator, one per device: freed blocks wait in free lists of the stream
// they were allocated on and are handed out again without cudaMalloc; blocks that other streams
// used (record_stream) wait for events first. A graph capture allocates from a pool of its own
// (cuda_capture.h), whose blocks only its graphs use until the last one is reset. Also
// tl::cuda::memory_stats/empty_cache.
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "tensorlet/backends/cuda/cuda_capture.h"
#include "tensorlet/backends/cuda/cuda_event_pool.h"
#include "tensorlet/backends/cuda/cuda_internal.h"
#include "tensorlet/tensor/error.h"

namespace tensorlet::cuda {
namespace {

constexpr size_t kMiB = size_t{1} << 20;
// Small pool: up to 1 MiB in 512-byte steps, exact-size reuse. Large pool: 2 MiB steps, so
// neighbouring large requests share blocks, and cudaMalloc's own 2 MiB granularity is not wasted.
constexpr size_t kSmallRound = 512;
constexpr size_t kSmallMax = kMiB;
constexpr size_t kLargeRound = 2 * kMiB;
constexpr size_t kSmallClasses = kSmallMax / kSmallRound;
// No GPU has this much memory, and larger requests could overflow rounding.
constexpr size_t kMaxRequest = size_t{1} << 60;

// TL_CUDA_NO_CACHING=1: every tensor gets its own cudaMalloc of exactly its size, freed at once
// (slow). For compute-sanitizer memcheck, which can then see an access past a tensor's end that
// would otherwise land inside a larger cached block.
bool caching_disabled() {
  static const bool disabled = [] {
    const char* v = std::getenv("TL_CUDA_NO_CACHING");
    return v != nullptr && v[0] == '1';
  }();
  return disabled;
}

size_t round_size(size_t n) {
  const size_t step = n <= kSmallMax ? kSmallRound : kLargeRound;
  return (n + step - 1) / step * step;
}

std::string format_bytes(size_t bytes) {
  static const char* const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return std::to_string(bytes) + " bytes";
  double value = static_cast<double>(bytes);
  int unit = -1;
  while (value >= 1024.0 && unit < 5) {
    value /= 1024.0;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.2f %s", value, units[unit]);
  return text;
}

// Makes a device current without throwing, for deallocation (it runs in destructors, also at
// process exit when the runtime may already be gone).
class QuietOnDevice {
 public:
  explicit QuietOnDevice(int device) {
    int current = -1;
    if (cudaGetDevice(&current) != cudaSuccess) {
      (void)cudaGetLastError();
      ok_ = false;
      return;
    }
    if (current == device) return;
    if (cudaSetDevice(device) != cudaSuccess) {
      (void)cudaGetLastError();
      ok_ = false;
      return;
    }
    previous_ = current;
  }
  ~QuietOnDevice() {
    if (previous_ >= 0 && cudaSetDevice(previous_) != cudaSuccess) (void)cudaGetLastError();
  }
  QuietOnDevice(const QuietOnDevice&) = delete;
  QuietOnDevice& operator=(const QuietOnDevice&) = delete;
  bool ok() const { return ok_; }

 private:
  int previous_ = -1;
  bool ok_ = true;
};

struct StreamFreeLists;
struct GraphMemoryPool;

struct Block {
  void* ptr = nullptr;
  size_t size = 0;
  StreamFreeLists* home = nullptr;  // the free lists of the stream it was allocated on
  bool allocated = false;
  int pending_events = 0;  // events on other streams to complete before it is reused
  Block* next_free = nullptr;
  std::vector<cudaStream_t> uses;  // other streams that used it (record_stream_use)
};

// The free blocks of one stream: a block goes back to the stream it was allocated on, where later
// work is ordered after the work that used it, so it can be handed out again at once.
struct StreamFreeLists {
  StreamFreeLists(cudaStream_t s, GraphMemoryPool* p) : stream(s), pool(p) {}
  cudaStream_t stream;
  GraphMemoryPool* pool;  // the graph pool these lists belong to; null: ordinary lists
  std::array<Block*, kSmallClasses> small{};  // intrusive stacks, one per 512-byte size class
  std::vector<Block*> large;                  // sorted by size
  size_t large_blocks = 0;                    // homed here, free or not: large's capacity
};

// The blocks graph captures allocated under one pool id: free lists per stream as above, kept
// apart from the ordinary ones while a graph holds the pool (its replays write those blocks).
// Never deleted, so blocks can point at it; a released pool is revived by its id.
struct GraphMemoryPool {
  explicit GraphMemoryPool(uint64_t i) : id(i) {}
  uint64_t id;
  int holders = 0;  // graphs (and captures) holding it
  std::vector<std::unique_ptr<StreamFreeLists>> lists;
  int64_t reserved = 0;  // bytes of the blocks homed here
};

struct PendingUse {
  cudaEvent_t event;
  Block* block;
};

class CachingDeviceAllocator final : public Allocator {
 public:
  explicit CachingDeviceAllocator(int device) : device_(device) {}

  void* allocate(size_t nbytes) override {
    if (nbytes == 0) return nullptr;
    cudaStream_t stream = current_stream_handle(device_);
    const uint64_t pool_id = t_open_captures != 0 ? capture_pool(device_) : 0;
    std::lock_guard<std::mutex> lock(mutex_);
    // (Not during a capture: querying events recorded on a capturing stream is an error.)
    if (!pending_.empty() && t_open_captures == 0) check(collect_pending(), "cudaEventQuery");
    if (nbytes > kMaxRequest) throw_oom(nbytes);
    StreamFreeLists& lists = pool_id != 0 ? pool_lists(pool_id, stream) : lists_for(stream);
    Block* b = nullptr;
    // A graph's blocks must outlive the tensors of its capture, so pools always cache.
    if (caching_disabled() && pool_id == 0) {
      // Whole 32-bit words: the atomics of 1- and 2-byte elements (cuda_atomics.cuh) swap the
      // aligned word that holds the element, as torch's do, so the last word must be allocated.
      b = new_block((nbytes + 3) / 4 * 4, lists, nbytes);
    } else {
      const size_t size = round_size(nbytes);
      b = size <= kSmallMax ? take_small(lists, size) : take_large(lists, size);
      if (b == nullptr) b = new_block(size, lists, nbytes);
    }
    b->allocated = true;
    stats_.allocated += static_cast<int64_t>(b->size);
    stats_.peak_allocated = std::max(stats_.peak_allocated, stats_.allocated);
    return b->ptr;
  }

  void wait_for_pending_work() noexcept override {
    // A capture cannot wait: its graph, not the eager stream, orders the work on that memory.
    if (t_open_captures != 0) return;
    try {
      OnDevice on(device_);
      if (cudaDeviceSynchronize() != cudaSuccess) (void)cudaGetLastError();
    } catch (...) {  // the device cannot be selected (a failed context): nothing runs on it
    }
  }

  void deallocate(void* ptr, size_t /*nbytes*/) noexcept override {
    if (ptr == nullptr) return;
    try {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = blocks_.find(ptr);
      if (it == blocks_.end() || !it->second->allocated) return;  // not ours, or freed twice
      Block* b = it->second;
      b->allocated = false;
      stats_.allocated -= static_cast<int64_t>(b->size);
      GraphMemoryPool* pool = b->home->pool;
      if (pool != nullptr && pool->holders == 0) rehome(b);  // its graphs are gone
      // (Not during a capture, which a cudaFree would invalidate: the block then stays cached.)
      if (caching_disabled() && b->home->pool == nullptr && t_open_captures == 0) {
        // cudaFree waits for the device, so work of any stream still using the block is done.
        QuietOnDevice on_device(device_);
        if (cudaFree(b->ptr) != cudaSuccess) (void)cudaGetLastError();
        if (b->size > kSmallMax) --b->home->large_blocks;
        stats_.reserved -= static_cast<int64_t>(b->size);
        ++stats_.num_device_frees;
        blocks_.erase(it);
        delete b;
        return;
      }
      if (b->uses.empty())
        push_free(b);
      else if (t_open_captures != 0 && capturing_on(device_))
        deferred_.push_back(b);  // events recorded now could land in the capture
      else
        defer_until_used(b);
    } catch (...) {
      // Only allocation failures of bookkeeping land here; the block then stays out of use.
    }
  }

  void record_use(void* ptr, cudaStream_t stream, const char* op) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = blocks_.find(ptr);
    if (it == blocks_.end() || !it->second->allocated)
      fail<Error>(op, "record_stream: ", ptr,
                  " is not the start of a live block of the caching allocator of cuda:", device_);
    Block* b = it->second;
    if (stream == b->home->stream) return;
    if (std::find(b->uses.begin(), b->uses.end(), stream) == b->uses.end())
      b->uses.push_back(stream);
  }

  MemoryStats stats() {
    std::lock_guard<std::mutex> lock(mutex_);
    MemoryStats out = stats_;
    for (const auto& pool : pools_) {
      if (pool->holders == 0) continue;
      ++out.graph_pools;
      out.graph_pool_reserved += pool->reserved;
    }
    return out;
  }

  void retain_pool(uint64_t id) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++find_pool(id).holders;
  }

  // The last holder gone, the pool's free blocks join the ordinary free lists of their streams
  // (the graphs' replays were ordered before later work there: cuda_graph.cpp's reset), and its
  // live ones follow when freed.
  void release_pool(uint64_t id) {
    std::lock_guard<std::mutex> lock(mutex_);
    GraphMemoryPool& pool = find_pool(id);
    if (pool.holders == 0 || --pool.holders > 0) return;
    for (auto& lists : pool.lists) {
      std::vector<Block*> free_blocks = lists->large;
      lists->large.clear();
      for (Block*& head : lists->small) {
        for (Block* b = head; b != nullptr; b = b->next_free) free_blocks.push_back(b);
        head = nullptr;
      }
      for (Block* b : free_blocks) {
        rehome(b);
        push_free(b);
      }
    }
    pool.reserved = 0;
  }

  // Blocks freed during a capture that other streams had used: their events can be recorded now.
  void end_capture() {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<Block*> blocks;
    blocks.swap(deferred_);
    for (Block* b : blocks) defer_until_used(b);
  }

  void reset_peak() {
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.peak_allocated = stats_.allocated;
  }

  void empty_cache() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (blocks_.empty()) return;  // never used: do not create a context for it
    OnDevice on_device(device_);
    const cudaError_t pending_err = collect_pending();
    const cudaError_t free_err = release_cached();
    check(pending_err, "tl::cuda::empty_cache", "cudaEventQuery");
    check(free_err, "tl::cuda::empty_cache", "cudaFree");
  }

 private:
  StreamFreeLists& lists_for(cudaStream_t stream) {
    if (last_lists_ != nullptr && last_lists_->stream == stream) return *last_lists_;
    for (auto& lists : lists_) {
      if (lists->stream == stream) {
        last_lists_ = lists.get();
        return *last_lists_;
      }
    }
    lists_.push_back(std::make_unique<StreamFreeLists>(stream, nullptr));
    last_lists_ = lists_.back().get();
    return *last_lists_;
  }

  GraphMemoryPool& find_pool(uint64_t id) {
    for (auto& pool : pools_)
      if (pool->id == id) return *pool;
    pools_.push_back(std::make_unique<GraphMemoryPool>(id));
    return *pools_.back();
  }

  StreamFreeLists& pool_lists(uint64_t id, cudaStream_t stream) {
    GraphMemoryPool& pool = find_pool(id);
    for (auto& lists : pool.lists)
      if (lists->stream == stream) return *lists;
    pool.lists.push_back(std::make_unique<StreamFreeLists>(stream, &pool));
    return *pool.lists.back();
  }

  // Moves a block of a released pool to the ordinary lists of its stream (it is not in a free
  // list). May allocate: deallocate's caller catches.
  void rehome(Block* b) {
    StreamFreeLists& to = lists_for(b->home->stream);
    if (b->size > kSmallMax) {
      to.large.reserve(to.large_blocks + 1);
      --b->home->large_blocks;
      ++to.large_blocks;
    }
    b->home = &to;
  }

  static Block* take_small(StreamFreeLists& lists, size_t size) {
    Block*& head = lists.small[size / kSmallRound - 1];
    Block* b = head;
    if (b != nullptr) head = b->next_free;
    return b;
  }

  static Block* take_large(StreamFreeLists& lists, size_t size) {
    auto it = std::lower_bound(lists.large.begin(), lists.large.end(), size,
                               [](const Block* b, size_t s) { return b->size < s; });
    // Best fit up to twice the request. Blocks are not split (not in this round), so a larger
    // one would waste more than a fresh cudaMalloc costs.
    if (it == lists.large.end() || (*it)->size > 2 * size) return nullptr;
    Block* b = *it;
    lists.large.erase(it);
    return b;
  }

  // Never allocates: large's capacity covers every large block homed on the stream.
  static void push_free(Block* b) {
    StreamFreeLists& lists = *b->home;
    if (b->size <= kSmallMax) {
      Block*& head = lists.small[b->size / kSmallRound - 1];
      b->next_free = head;
      head = b;
    } else {
      auto at = std::upper_bound(lists.large.begin(), lists.large.end(), b->size,
                                 [](size_t s, const Block* x) { return s < x->size; });
      lists.large.insert(at, b);
    }
  }

  Block* new_block(size_t size, StreamFreeLists& lists, size_t nbytes) {
    auto block = std::make_unique<Block>();
    if (size > kSmallMax) lists.large.reserve(lists.large_blocks + 1);
    OnDevice on_device(device_);
    RelaxedCaptureMode relaxed;  // cudaMalloc is not captured
    void* p = nullptr;
    cudaError_t err = cudaMalloc(&p, size);
    if (err == cudaErrorMemoryAllocation && t_open_captures == 0) {
      (void)cudaGetLastError();
      release_cached_after_pending();
      err = cudaMalloc(&p, size);
      if (err == cudaSuccess) ++stats_.num_alloc_retries;
    }
    if (err == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      throw_oom(nbytes);
    }
    check(err, "cudaMalloc");
    try {
      blocks_.emplace(p, block.get());
    } catch (...) {
      (void)cudaFree(p);
      throw;
    }
    block->ptr = p;
    block->size = size;
    block->home = &lists;
    if (size > kSmallMax) ++lists.large_blocks;
    if (lists.pool != nullptr) lists.pool->reserved += static_cast<int64_t>(size);
    stats_.reserved += static_cast<int64_t>(size);
    ++stats_.num_device_allocs;
    return block.release();
  }

  // Records an event on every other stream that used the block; it is reused once all completed
  // (collect_pending). Runs in deallocate: never throws.
  void defer_until_used(Block* b) {
    bool recorded_all = true;
    {
      QuietOnDevice on_device(device_);  // events belong to the device current at creation
      recorded_all = on_device.ok();
      for (size_t i = 0; recorded_all && i < b->uses.size(); ++i) {
        cudaEvent_t e = try_take_pooled_event(device_);
        if (e != nullptr && cudaEventRecord(e, b->uses[i]) != cudaSuccess) {
          (void)cudaGetLastError();
          give_back_pooled_event(device_, e);
          e = nullptr;
        }
        if (e == nullptr) {
          recorded_all = false;
          break;
        }
        pending_.push_back({e, b});
        ++b->pending_events;
      }
    }
    b->uses.clear();
    // Without its events nobody can tell when the other streams are done with the block (this
    // happens when the runtime is shutting down): it stays out of use for good.
    if (!recorded_all) ++b->pending_events;
  }

  // Moves blocks whose events all completed to their free lists; returns the first real error.
  cudaError_t collect_pending() {
    cudaError_t first_error = cudaSuccess;
    size_t kept = 0;
    for (size_t i = 0; i < pending_.size(); ++i) {
      const PendingUse use = pending_[i];
      const cudaError_t err = cudaEventQuery(use.event);
      if (err == cudaSuccess) {
        give_back_pooled_event(device_, use.event);
        if (--use.block->pending_events == 0) push_free(use.block);
        continue;
      }
      (void)cudaGetLastError();
      if (err != cudaErrorNotReady && first_error == cudaSuccess) first_error = err;
      pending_[kept++] = use;
    }
    pending_.resize(kept);
    return first_error;
  }

  // Before retrying a failed cudaMalloc: waits for the pending blocks' events, then releases
  // every cached block. Errors are left for the retry to report.
  void release_cached_after_pending() {
    for (const PendingUse& use : pending_)
      if (cudaEventSynchronize(use.event) != cudaSuccess) (void)cudaGetLastError();
    (void)collect_pending();
    (void)release_cached();
  }

  // cudaFree of every free block (cudaFree waits for the device, so work still reading a block
  // on its own stream finishes first). Needs the device current; returns the first error.
  cudaError_t release_cached() {
    cudaError_t first_error = cudaSuccess;
    auto release = [&](Block* b) {
      const cudaError_t err = cudaFree(b->ptr);
      if (err != cudaSuccess) {
        (void)cudaGetLastError();
        if (first_error == cudaSuccess) first_error = err;
      }
      blocks_.erase(b->ptr);
      stats_.reserved -= static_cast<int64_t>(b->size);
      ++stats_.num_device_frees;
      if (b->size > kSmallMax) --b->home->large_blocks;
      delete b;
    };
    for (auto& lists : lists_) {
      for (Block*& head : lists->small) {
        while (head != nullptr) {
          Block* b = head;
          head = b->next_free;
          release(b);
        }
      }
      for (Block* b : lists->large) release(b);
      lists->large.clear();
    }
    return first_error;
  }

  [[noreturn]] void throw_oom(size_t nbytes) {
    size_t free_bytes = 0, total_bytes = 0;
    bool have_info = false;
    {
      QuietOnDevice on_device(device_);
      have_info = on_device.ok() && cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess;
      (void)cudaGetLastError();
    }
    const std::string device_info = have_info ? ", " + format_bytes(free_bytes) + " free of " +
                                                    format_bytes(total_bytes) + " total"
                                              : std::string();
    fail<OutOfMemoryError>(current_op_name(), "CUDA out of memory: tried to allocate ",
                           format_bytes(nbytes), " (device cuda:", device_, "); allocated ",
                           format_bytes(static_cast<size_t>(stats_.allocated)), ", reserved ",
                           format_bytes(static_cast<size_t>(stats_.reserved)), " by tensorlet",
                           device_info);
  }

  const int device_;
  std::mutex mutex_;
  std::unordered_map<void*, Block*> blocks_;  // every block from cudaMalloc, live or cached
  std::vector<std::unique_ptr<StreamFreeLists>> lists_;
  StreamFreeLists* last_lists_ = nullptr;  // most allocations come from one stream
  std::vector<PendingUse> pending_;
  std::vector<std::unique_ptr<GraphMemoryPool>> pools_;
  std::vector<Block*> deferred_;  // freed during a capture while other streams used them
  MemoryStats stats_;
};

CachingDeviceAllocator& allocator_of(int device, const char* op) {
  // Never destroyed: tensors in static storage are freed during exit, after it would be.
  static const int count = device_count();
  static CachingDeviceAllocator** const all = [] {
    auto** table = new CachingDeviceAllocator*[std::max(count, 1)];
    for (int i = 0; i < count; ++i) table[i] = new CachingDeviceAllocator(i);
    return table;
  }();
  if (device < 0 || device >= count)
    fail<DeviceError>(op, "cannot use cuda:", device, ": expected a device index in [0, ", count,
                      "), this machine has ", count, " CUDA device", count == 1 ? "" : "s");
  return *all[device];
}

}  // namespace

Allocator& device_allocator(int device) { return allocator_of(device, current_op_name()); }

void record_stream_use(void* ptr, int device, cudaStream_t stream) {
  if (ptr == nullptr) return;  // zero-byte storage
  const char* op = current_op_name();
  allocator_of(device, op).record_use(ptr, stream, op);
}

MemoryStats memory_stats(int device) {
  if (device_count() == 0) return {};
  const char* op = "tl::cuda::memory_stats";
  return allocator_of(resolve_device(device, op), op).stats();
}

void reset_peak_stats(int device) {
  if (device_count() == 0) return;
  const char* op = "tl::cuda::reset_peak_stats";
  allocator_of(resolve_device(device, op), op).reset_peak();
}

void retain_pool(int device, uint64_t id) {
  allocator_of(device, current_op_name()).retain_pool(id);
}
void release_pool(int device, uint64_t id) {
  allocator_of(device, current_op_name()).release_pool(id);
}
void end_pool_capture(int device) { allocator_of(device, current_op_name()).end_capture(); }

void empty_cache() {
  check_not_capturing("returns cached memory to CUDA, which waits for the GPU",
                      "tl::cuda::empty_cache");
  const int n = device_count();
  for (int i = 0; i < n; ++i) allocator_of(i, "tl::cuda::empty_cache").empty_cache();
}

void record_stream(const Tensor& t, const Stream& stream) {
  const char* op = "tl::cuda::record_stream";
  check_defined(t, op);
  if (!t.is_cuda()) fail<DeviceError>(op, "expected a CUDA tensor, got one on ", t.device());
  if (stream.device() != t.device().index())
    fail<DeviceError>(op, "the tensor is on ", t.device(),
                      " but the stream on cuda:", stream.device(),
                      "; a stream of the tensor's device is needed");
  void* base = t.storage()->data();
  // Outside memory is handed back only after its whole device has finished (Storage), which
  // covers every stream.
  if (base == nullptr || t.storage()->external()) return;
  allocator_of(t.device().index(), op).record_use(base, stream.handle(), op);
}

}  // namespace tensorlet::cuda

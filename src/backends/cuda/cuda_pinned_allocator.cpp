// The pinned (page-locked) host allocator: cudaHostAlloc blocks cached by power-of-two size, and
// kept from reuse until the asynchronous copies recorded on them (record_pinned_use) have run.
#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tensorlet/backends/cuda/cuda_event_pool.h"
#include "tensorlet/backends/cuda/cuda_internal.h"
#include "tensorlet/tensor/error.h"

namespace tensorlet::cuda {
namespace {

constexpr size_t kMinBlock = 4096;
// No machine pins this much, and bit_ceil of anything larger would overflow.
constexpr size_t kMaxRequest = size_t{1} << 60;
constexpr int kClasses = 64;  // one free list per power of two

struct PinnedUse {
  cudaEvent_t event;
  int device;  // the event's device, whose pool it returns to
};

struct PinnedBlock {
  void* ptr = nullptr;
  size_t size = 0;
  bool allocated = false;
  std::vector<PinnedUse> uses;  // asynchronous copies not yet known to have run
};

int size_class(size_t size) { return std::countr_zero(size); }

class PinnedAllocator final : public Allocator {
 public:
  void* allocate(size_t nbytes) override {
    if (nbytes == 0) return nullptr;
    if (nbytes > kMaxRequest) throw_oom(nbytes);
    const size_t size = std::max(kMinBlock, std::bit_ceil(nbytes));
    std::lock_guard<std::mutex> lock(mutex_);
    if (!pending_.empty()) collect_pending();
    std::vector<PinnedBlock*>& list = free_[size_class(size)];
    PinnedBlock* b = nullptr;
    if (!list.empty()) {
      b = list.back();
      list.pop_back();
    } else {
      b = new_block(size, nbytes);
    }
    b->allocated = true;
    return b->ptr;
  }

  void deallocate(void* ptr, size_t /*nbytes*/) noexcept override {
    if (ptr == nullptr) return;
    try {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = blocks_.find(reinterpret_cast<uintptr_t>(ptr));
      if (it == blocks_.end() || !it->second->allocated) return;  // not ours, or freed twice
      PinnedBlock* b = it->second;
      b->allocated = false;
      prune_uses(b);
      if (b->uses.empty())
        free_[size_class(b->size)].push_back(b);
      else
        pending_.push_back(b);
    } catch (...) {
      // Only bookkeeping allocation failures land here; the block then stays out of use.
    }
  }

  void record_use(const void* ptr, cudaStream_t stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    PinnedBlock* b = containing(ptr);
    if (b == nullptr) return;  // not pinned by us: nothing to protect
    prune_uses(b);             // a buffer used for many copies keeps a short list
    int device = 0;
    TL_CUDA_CHECK(cudaGetDevice(&device));
    cudaEvent_t e = take_pooled_event(device);
    const cudaError_t err = cudaEventRecord(e, stream);
    if (err != cudaSuccess) give_back_pooled_event(device, e);
    TL_CUDA_CHECK(err);
    b->uses.push_back({e, device});
  }

  bool contains(const void* ptr) {
    std::lock_guard<std::mutex> lock(mutex_);
    return containing(ptr) != nullptr;
  }

 private:
  // The block (live or cached) whose bytes include ptr.
  PinnedBlock* containing(const void* ptr) {
    const uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
    auto it = blocks_.upper_bound(p);
    if (it == blocks_.begin()) return nullptr;
    --it;
    return p < it->first + it->second->size ? it->second : nullptr;
  }

  PinnedBlock* new_block(size_t size, size_t nbytes) {
    auto block = std::make_unique<PinnedBlock>();
    // Capacity for every block, so deallocate's push_backs never allocate.
    const int cls = size_class(size);
    free_[cls].reserve(++class_blocks_[cls]);
    pending_.reserve(blocks_.size() + 1);
    void* p = nullptr;
    // Portable: pinned for every device's context, so any GPU can copy from it asynchronously.
    cudaError_t err = cudaHostAlloc(&p, size, cudaHostAllocPortable);
    if (err == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      release_cached();
      err = cudaHostAlloc(&p, size, cudaHostAllocPortable);
    }
    if (err != cudaSuccess) --class_blocks_[cls];
    if (err == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      throw_oom(nbytes);
    }
    TL_CUDA_CHECK(err);
    try {
      blocks_.emplace(reinterpret_cast<uintptr_t>(p), block.get());
    } catch (...) {
      (void)cudaFreeHost(p);
      --class_blocks_[cls];
      throw;
    }
    block->ptr = p;
    block->size = size;
    reserved_ += size;
    return block.release();
  }

  // Drops the uses whose copies have run (their events go back to the pool). A failing query
  // (the runtime shutting down) keeps the use, so the block is never handed out again.
  void prune_uses(PinnedBlock* b) {
    size_t kept = 0;
    for (const PinnedUse& use : b->uses) {
      const cudaError_t err = cudaEventQuery(use.event);
      if (err == cudaSuccess) {
        give_back_pooled_event(use.device, use.event);
        continue;
      }
      (void)cudaGetLastError();
      b->uses[kept++] = use;
    }
    b->uses.resize(kept);
  }

  void collect_pending() {
    size_t kept = 0;
    for (PinnedBlock* b : pending_) {
      prune_uses(b);
      if (b->uses.empty())
        free_[size_class(b->size)].push_back(b);
      else
        pending_[kept++] = b;
    }
    pending_.resize(kept);
  }

  // Returns every cached block to CUDA (before retrying a failed cudaHostAlloc).
  void release_cached() {
    for (int cls = 0; cls < kClasses; ++cls) {
      for (PinnedBlock* b : free_[cls]) {
        if (cudaFreeHost(b->ptr) != cudaSuccess) (void)cudaGetLastError();
        blocks_.erase(reinterpret_cast<uintptr_t>(b->ptr));
        reserved_ -= b->size;
        --class_blocks_[cls];
        delete b;
      }
      free_[cls].clear();
    }
  }

  [[noreturn]] void throw_oom(size_t nbytes) {
    fail<OutOfMemoryError>(current_op_name(), "out of pinned host memory: tried to allocate ",
                           nbytes, " bytes; tensorlet holds ", reserved_,
                           " bytes of pinned memory (live and cached)");
  }

  std::mutex mutex_;
  std::map<uintptr_t, PinnedBlock*> blocks_;  // by address, live and cached
  std::array<std::vector<PinnedBlock*>, kClasses> free_;
  std::array<size_t, kClasses> class_blocks_{};
  std::vector<PinnedBlock*> pending_;  // freed, waiting for their copies
  size_t reserved_ = 0;
};

PinnedAllocator& the_pinned_allocator() {
  // Never destroyed: pinned tensors in static storage are freed during exit, after it would be.
  static auto* allocator = new PinnedAllocator();
  return *allocator;
}

}  // namespace

Allocator& pinned_allocator() { return the_pinned_allocator(); }

bool is_pinned_pointer(const void* ptr) {
  return ptr != nullptr && the_pinned_allocator().contains(ptr);
}

void record_pinned_use(const void* ptr, cudaStream_t stream) {
  if (ptr == nullptr) return;
  the_pinned_allocator().record_use(ptr, stream);
}

}  // namespace tensorlet::cuda

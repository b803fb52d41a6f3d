// A caching host allocator: freed blocks wait in per-size free lists for the next request of
// the same rounded size, up to a cap on cached bytes.
#include "tensorlet/backends/cpu/host_allocator.h"

#include <bit>
#include <cstdlib>
#include <map>
#include <mutex>
#include <vector>

#include "tensorlet/tensor/op_scope.h"
#include "tensorlet/tensor/error.h"

namespace tensorlet::cpu {
namespace {

#if defined(__SANITIZE_ADDRESS__)
// Under AddressSanitizer every free goes back to the system, so use-after-free is still caught.
constexpr bool kCache = false;
#else
constexpr bool kCache = true;
#endif

constexpr size_t kAlignment = 64;
constexpr size_t kMiB = size_t{1} << 20;
#if defined(__SANITIZE_ADDRESS__)
// AddressSanitizer aborts the process on a request above 1 TiB (its allocator's limit) instead
// of failing it: refuse those first, so they raise OutOfMemoryError as in a plain build.
constexpr size_t kMaxRequest = size_t{1} << 40;
#else
// No host has this much memory, and rounding anything larger could overflow.
constexpr size_t kMaxRequest = size_t{1} << 60;
#endif
// Freed memory kept for reuse; past this, frees go back to the system.
constexpr size_t kMaxCachedBytes = 512 * kMiB;

// Sizes up to 1 MiB round to a power of two (at least 64 B); larger ones to whole MiB, so a
// loop that allocates the same large tensor again reuses its block exactly.
size_t rounded_size(size_t nbytes) {
  if (nbytes <= kAlignment) return kAlignment;
  if (nbytes <= kMiB) return std::bit_ceil(nbytes);
  return (nbytes + kMiB - 1) / kMiB * kMiB;
}

class CachingHostAllocator final : public Allocator {
 public:
  void* allocate(size_t nbytes) override {
    if (nbytes > kMaxRequest - kMiB) throw_oom(nbytes);  // rounding up stays within the cap
    size_t size = rounded_size(nbytes);
    if (kCache) {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = free_.find(size);
      if (it != free_.end() && !it->second.empty()) {
        void* p = it->second.back();
        it->second.pop_back();
        cached_bytes_ -= size;
        return p;
      }
    }
    void* p = nullptr;
    if (posix_memalign(&p, kAlignment, size) != 0) {
      release_cache();  // give back what is cached and try once more
      if (posix_memalign(&p, kAlignment, size) != 0) throw_oom(nbytes);
    }
    return p;
  }

  void deallocate(void* ptr, size_t nbytes) override {
    if (!ptr) return;
    size_t size = rounded_size(nbytes);
    if (kCache) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (cached_bytes_ + size <= kMaxCachedBytes) {
        free_[size].push_back(ptr);
        cached_bytes_ += size;
        return;
      }
    }
    std::free(ptr);
  }

 private:
  // Names the op the user called (an allocation runs inside its scope), e.g. "[tl::zeros]".
  [[noreturn]] static void throw_oom(size_t nbytes) {
    fail<OutOfMemoryError>(profiler::user_op_or("tl::empty"),
                           "out of host memory: could not allocate ", nbytes, " bytes");
  }

  void release_cache() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& [size, blocks] : free_)
      for (void* p : blocks) std::free(p);
    free_.clear();
    cached_bytes_ = 0;
  }

  std::mutex mutex_;
  std::map<size_t, std::vector<void*>> free_;
  size_t cached_bytes_ = 0;
};

}  // namespace

Allocator& host_allocator() {
  // Never destroyed: tensors in static storage may be freed after it would be.
  static auto* allocator = new CachingHostAllocator();
  return *allocator;
}

}  // namespace tensorlet::cpu

// The registry of trusted index storages (index_range.h): bounds the library knows for the
// indices it builds, keyed by storage and checked against its version.
#include "tensorlet/ops/index_range.h"

#include <map>
#include <memory>
#include <mutex>

#include "tensorlet/tensor/storage.h"

namespace tensorlet {
namespace {

struct Trusted {
  std::weak_ptr<Storage> storage;  // expired: the key's memory was freed (and may be reused)
  uint32_t version;
  int64_t lo, hi;
};

std::mutex& registry_mutex() {
  static auto* m = new std::mutex();  // never destroyed: used by tensors freed at exit
  return *m;
}
std::map<const Storage*, Trusted>& registry() {
  static auto* r = new std::map<const Storage*, Trusted>();
  return *r;
}

}  // namespace

void trust_index_values(const Tensor& index, int64_t lo, int64_t hi) {
  const std::shared_ptr<Storage>& storage = index.storage();
  if (!storage) return;
  std::lock_guard<std::mutex> lock(registry_mutex());
  auto& r = registry();
  for (auto it = r.begin(); it != r.end();) it = it->second.storage.expired() ? r.erase(it) : ++it;
  r[storage.get()] = Trusted{storage, storage->version(), lo, hi};
}

bool trusted_index_bounds(const Tensor& index, int64_t* lo, int64_t* hi) {
  const std::shared_ptr<Storage>& storage = index.storage();
  if (!storage) return false;
  std::lock_guard<std::mutex> lock(registry_mutex());
  auto& r = registry();
  const auto it = r.find(storage.get());
  if (it == r.end()) return false;
  // The same storage (not a new one at a reused address) and not written since.
  const std::shared_ptr<Storage> same = it->second.storage.lock();
  if (same != storage || it->second.version != same->version()) {
    r.erase(it);
    return false;
  }
  *lo = it->second.lo;
  *hi = it->second.hi;
  return true;
}

}  // namespace tensorlet

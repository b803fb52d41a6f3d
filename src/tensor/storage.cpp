// Storage allocation through the device's backend allocator.
#include "tensor/storage.h"

#include "backends/backend.h"

namespace tensorlet {

Storage::Storage(size_t nbytes, Device device, bool pinned)
    : nbytes_(nbytes),
      device_(device),
      allocator_(pinned && device.is_cpu() ? &pinned_host_allocator()
                                           : &backend_for(device).allocator(device)),
      pinned_(pinned && device.is_cpu()) {
  data_ = allocator_->allocate(nbytes);
}

Storage::~Storage() { allocator_->deallocate(data_, nbytes_); }

}  // namespace tensorlet

// Storage allocation through the device's backend allocator.
#include "tensor/storage.h"

#include "backends/backend.h"

namespace tensorlet {

Storage::Storage(size_t nbytes, Device device)
    : nbytes_(nbytes), device_(device), allocator_(&backend_for(device).allocator(device)) {
  data_ = allocator_->allocate(nbytes);
}

Storage::~Storage() { allocator_->deallocate(data_, nbytes_); }

}  // namespace tensorlet

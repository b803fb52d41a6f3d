// Allocator: how a device hands out raw memory; each backend owns one per device.
#pragma once

#include <cstddef>

#include "core/device.h"

namespace tensorlet {

class Allocator {
 public:
  virtual ~Allocator() = default;
  // Returns memory for nbytes (nbytes may be 0); throws OutOfMemoryError on failure.
  virtual void* allocate(size_t nbytes) = 0;
  virtual void deallocate(void* ptr, size_t nbytes) = 0;
};

}  // namespace tensorlet

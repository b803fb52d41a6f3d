// The CPU backend's host allocator: 64-byte aligned blocks, cached after free so small tensors
// skip malloc and large ones skip re-faulting their pages.
#pragma once

#include "tensorlet/tensor/allocator.h"

namespace tensorlet::cpu {

Allocator& host_allocator();

}  // namespace tensorlet::cpu

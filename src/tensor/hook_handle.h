// The handle Tensor::register_hook returns (torch's RemovableHandle); the hooks live in autograd.
#pragma once

#include <memory>

namespace tensorlet::autograd {

struct HookList;  // src/autograd/hooks.h

// Removes the hook it was returned for. Removing twice, or after the tensor is gone, does nothing.
// It converts to the hook's position, as LibTorch's register_hook returns one (`unsigned pos =
// x.register_hook(...); x.remove_hook(pos);` ports unchanged).
class HookHandle {
 public:
  HookHandle() = default;
  HookHandle(std::weak_ptr<HookList> list, unsigned index)
      : list_(std::move(list)), index_(index) {}

  void remove();  // autograd/hooks.cpp
  unsigned index() const { return index_; }
  operator unsigned() const { return index_; }  // NOLINT: LibTorch's unsigned position

 private:
  std::weak_ptr<HookList> list_;
  unsigned index_ = 0;
};

}  // namespace tensorlet::autograd

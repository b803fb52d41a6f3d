// Sequential's forward and the containers' checked indexing.
#include "tensorlet/nn/container.h"

namespace tensorlet::nn {

Tensor SequentialImpl::forward(const Tensor& x) const {
  Tensor y = x;
  for (const auto& f : forwards_) y = f(y);
  return y;
}

std::shared_ptr<Module> SequentialImpl::ptr(size_t index) const {
  if (index >= forwards_.size())
    fail<IndexError>("tl::nn::Sequential", "index ", index, " is out of range for ",
                     forwards_.size(), " modules");
  return named_children()[index].value();
}

std::shared_ptr<Module> ModuleListImpl::ptr(size_t index) const {
  if (index >= modules_.size())
    fail<IndexError>("tl::nn::ModuleList", "index ", index, " is out of range for ",
                     modules_.size(), " modules");
  return modules_[index];
}

}  // namespace tensorlet::nn

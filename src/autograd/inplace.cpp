// In-place writes: the version counter, torch's leaf rule, and the not-yet-differentiable rest.
#include "tensorlet/autograd/inplace.h"

#include "tensorlet/autograd/autograd_meta.h"
#include "tensorlet/tensor/inference_mode.h"

namespace tensorlet::autograd {

void check_inplace(const char* op, const Tensor& self,
                   std::initializer_list<const Tensor*> others) {
  bool involved = requires_grad(self);
  for (const Tensor* t : others) involved |= t && requires_grad(*t);
  if (involved && GradMode::is_enabled()) {
    if (requires_grad(self)) {
      if (self.is_leaf())
        fail<Error>(op,
                    "a leaf Variable that requires grad is being used in an in-place operation.");
      fail<Error>(op,
                  "in-place ops on a tensor that is part of an autograd graph are not "
                  "differentiable yet; use the out-of-place op");
    }
    for (const Tensor* t : others)
      if (t && requires_grad(*t))
        fail<Error>(op,
                    "in-place ops reading a tensor that requires grad are not differentiable "
                    "yet; use the out-of-place op");
  }
  if (self.is_inference() && !InferenceMode::is_enabled())
    fail<Error>(op,
                "Inplace update to inference tensor outside InferenceMode is not allowed. You can "
                "make a clone to get a normal tensor before doing inplace update.");
  self.storage()->bump_version();
}

}  // namespace tensorlet::autograd

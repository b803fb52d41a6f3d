// The check every in-place write passes (ops/out_arg.h's check_writable calls it): bumps the
// storage's version, and refuses what autograd cannot follow yet.
#pragma once

#include <initializer_list>

#include "tensorlet/tensor/tensor.h"

namespace tensorlet::autograd {

// `self` is about to be written in place by `op` (reading `others`): a leaf that requires grad is
// an Error in grad mode (torch's rule), and so, until in-place ops are differentiable, is a write
// into or from a tensor that is part of a graph. Bumps self's version counter.
void check_inplace(const char* op, const Tensor& self,
                   std::initializer_list<const Tensor*> others = {});

}  // namespace tensorlet::autograd

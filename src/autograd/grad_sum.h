// The gradients arriving for one input of a node during backward, summed: small ones are held
// and summed by one add_n, large ones added as they come (torch's InputBuffer).
#pragma once

#include <vector>

#include "tensorlet/tensor/tensor.h"

namespace tensorlet::autograd {

// Parts held before one add_n sums them: CUDA's add_n reads 16 inputs per launch.
inline constexpr size_t kMaxHeldGradParts = 16;
// Elements up to which a part is held rather than added at once: below it a part's cost is the
// host's launch, not its bytes, and holding 16 of them costs at most 4 MiB of float32.
inline constexpr int64_t kMaxHeldGradNumel = int64_t{1} << 16;

// One input's gradient. A leaf used by many ops (a weight shared over a chain) gets a part from
// each: a chain of adds launches one kernel per part, the held parts one per 16.
class GradSum {
 public:
  // Adds a part. Held while it is small, contiguous, of the held parts' dtype, shape and device,
  // and the backward records no graph (with create_graph the sum must be differentiable: add).
  void add(const Tensor& part);
  // The sum of the parts (undefined when none came), bit for bit the chain of adds in arrival
  // order; leaves this empty.
  Tensor take();
  bool empty() const { return parts_.empty(); }

 private:
  bool holds(const Tensor& part) const;
  std::vector<Tensor> parts_;
};

// ((parts[0] + parts[1]) + parts[2]) + ... in one pass ("tl::add_n" in the profiler): 2 or more
// contiguous floating tensors of one dtype, shape and device.
Tensor add_n(const std::vector<Tensor>& parts);

}  // namespace tensorlet::autograd

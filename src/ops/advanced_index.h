// Advanced indexing: torch's x[...] as x.index({...}) and x.index_put_({...}, v), and the flat
// take / put they reduce to.
#pragma once

#include <vector>

#include "tensorlet/tensor/tensor.h"
#include "tensorlet/tensor/tensor_index.h"

namespace tensorlet {

// x[items]: integers select, Slices slice, None adds an axis, Ellipsis fills the dims the other
// items leave, a bool adds an axis of size 1 (true) or 0 (false). With only those the result is a
// view of x. Tensors are advanced indices (int64/int32 values, negative ones wrap; bool/uint8
// masks stand for their nonzero() indices and synchronize, as their count decides the shape):
// they broadcast together, and their dims replace the indexed ones in place when the tensor items
// are adjacent, else go first. The result is then a copy.
Tensor index(const Tensor& self, const std::vector<TensorIndex>& indices);
// x[items] = values (broadcast to the indexed shape, leading dims of size 1 ignored as torch);
// accumulate adds instead, duplicates included. With advanced indices values must have x's dtype
// and which of duplicate positions wins without accumulate is undefined, as torch; with only basic
// items it writes through the view (copy_ / fill_, converting as they do; add_ for accumulate).
Tensor& index_put_(Tensor& self, const std::vector<TensorIndex>& indices, const Tensor& values,
                   bool accumulate = false);
Tensor& index_put_(Tensor& self, const std::vector<TensorIndex>& indices, Scalar value,
                   bool accumulate = false);
// The same into a copy of self.
Tensor index_put(const Tensor& self, const std::vector<TensorIndex>& indices, const Tensor& values,
                 bool accumulate = false);
Tensor index_put(const Tensor& self, const std::vector<TensorIndex>& indices, Scalar value,
                 bool accumulate = false);
// self seen as 1-D in row-major order, at int64 positions (negative ones wrap): index's shape.
Tensor take(const Tensor& self, const Tensor& index);
// A copy of self with self.flatten()[index] = source (accumulate: +=); source has index's element
// count and self's dtype (x.put_ writes into x).
Tensor put(const Tensor& self, const Tensor& index, const Tensor& source, bool accumulate = false);

}  // namespace tensorlet

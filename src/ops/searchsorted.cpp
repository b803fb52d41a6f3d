// tl::searchsorted front-ends: torch's checks (side, devices, sorter, shapes), the common dtype of
// the sequence and the values, then one bisection kernel over [rows, len] boundaries.
#include <climits>
#include <cstdint>

#include "tensorlet/backends/backend.h"
#include "tensorlet/tensor/op_scope.h"
#include "tensorlet/ops/elementwise.h"
#include "tensorlet/ops/factories.h"
#include "tensorlet/ops/ordering.h"

namespace tensorlet {

namespace {

// values given as a number are searched as a 0-dim tensor of that number's own dtype; `common`
// is the dtype both sides are compared in (torch.result_type, a number ranking lowest).
Tensor search(const Tensor& seq, const Tensor& values, DType common, bool out_int32, bool right,
              std::string_view side, const Tensor& sorter) {
  const char* name = "tl::searchsorted";
  if (!side.empty()) {
    if (side != "left" && side != "right")
      fail<Error>(name, "side can only be \"left\" or \"right\", got \"", side, "\"");
    if (right && side == "left")
      fail<Error>(name,
                  "side and right can't be set to opposites: side \"left\" with right = true");
  }
  if (seq.dim() == 0) fail<ShapeError>(name, "expected a sorted sequence of at least 1 dim, got 0");
  const Device device = seq.device();
  if (values.device() != device)
    fail<DeviceError>(name, "expected values on the sorted sequence's device (", device, "), got ",
                      values.device());
  if (sorter.defined()) {
    if (sorter.device() != device)
      fail<DeviceError>(name, "expected sorter on the sorted sequence's device (", device,
                        "), got ", sorter.device());
    if (sorter.shape() != seq.shape())
      fail<ShapeError>(name, "expected sorter of the sorted sequence's shape ", seq.shape(),
                       ", got ", sorter.shape());
    if (sorter.dtype() != kInt64)
      fail<DTypeError>(name, "expected sorter of dtype int64, got ", sorter.dtype());
    if (sorter.numel() > 0) {
      int64_t lo = 0, hi = 0;
      backend_for(device).index_bounds(sorter, &lo, &hi);
      const int64_t len = seq.shape().back();
      if (lo < 0 || hi >= len)
        fail<IndexError>(name, "sorter index ", lo < 0 ? lo : hi,
                         " out of range for a sorted sequence's last dim of size ", len);
    }
  }
  if (values.dim() == 0 && seq.dim() != 1)
    fail<ShapeError>(name, "a 0-dim value needs a 1-D sorted sequence, got shape ", seq.shape());
  bool matched = seq.dim() == values.dim();
  for (int64_t d = 0; matched && d + 1 < seq.dim(); ++d)
    matched = seq.shape()[d] == values.shape()[d];
  if (seq.dim() != 1 && !matched)
    fail<ShapeError>(name,
                     "expected a 1-D sorted sequence or one whose leading dims match the values', "
                     "got shapes ",
                     seq.shape(), " and ", values.shape());
  const int64_t len = seq.shape().back();
  if (out_int32 && len >= INT_MAX)
    fail<ShapeError>(name, "out_int32 needs a last dim smaller than ", INT_MAX, ", got ", len);
  Tensor out = make_tensor(values.shape(), out_int32 ? kInt32 : kInt64, device);
  // As torch, an empty result is returned before the dtype is looked at.
  if (values.numel() == 0) return out;
  if (common == kBool) fail<DTypeError>(name, "not implemented for dtype bool (as torch)");
  int64_t rows = 1;  // the product of seq's leading dims (len may be 0)
  for (int64_t d = 0; d + 1 < seq.dim(); ++d) rows *= seq.shape()[d];
  const int64_t inner = values.numel() / rows;
  const Tensor b = seq.to(common).contiguous().view({rows, len});
  const Tensor v = values.to(common).contiguous().view({rows, inner});
  const Tensor s = sorter.defined() ? sorter.contiguous().view({rows, len}) : Tensor();
  backend_for(device).searchsorted(b, v, s, right || side == "right", out);
  return out;
}

}  // namespace

Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& values, bool out_int32, bool right,
                    std::string_view side, const Tensor& sorter) {
  const char* name = "tl::searchsorted";
  profiler::OpScope scope(name);
  scope.inputs({&sorted_sequence, &values});
  check_defined(sorted_sequence, name);
  check_defined(values, name);
  return search(sorted_sequence, values, result_type(sorted_sequence, values), out_int32, right,
                side, sorter);
}

Tensor searchsorted(const Tensor& sorted_sequence, Scalar value, bool out_int32, bool right,
                    std::string_view side, const Tensor& sorter) {
  const char* name = "tl::searchsorted";
  profiler::OpScope scope(name);
  scope.inputs({&sorted_sequence});
  check_defined(sorted_sequence, name);
  // The number in its own dtype; converting it to the common dtype wraps as torch's .to() does.
  const DType own = value.is_bool() ? kBool : value.is_integral() ? kInt64 : kFloat64;
  const Tensor values = full({}, value, TensorOptions(own).device(sorted_sequence.device()));
  return search(sorted_sequence, values, result_type(sorted_sequence, value), out_int32, right,
                side, sorter);
}

}  // namespace tensorlet

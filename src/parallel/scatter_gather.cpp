// Scatter along dim 0 to devices and gather back; every copy is enqueued on the current streams
// of the devices involved, so nothing here waits for a GPU unless the result goes to the host.
#include "tensorlet/parallel/scatter_gather.h"

#include <algorithm>

#include "tensorlet/backends/cuda/cuda.h"
#include "tensorlet/tensor/op_scope.h"
#include "tensorlet/tensor/error.h"
#include "tensorlet/ops/joining.h"

namespace tensorlet::parallel {

std::vector<int64_t> chunk_sizes(int64_t n, int64_t parts) {
  if (parts < 1)
    fail<ShapeError>("tl::parallel::chunk_sizes", "expected at least one part, got ", parts);
  std::vector<int64_t> sizes;
  if (n <= 0) return sizes;
  const int64_t size = (n + parts - 1) / parts;
  for (int64_t start = 0; start < n; start += size) sizes.push_back(std::min(size, n - start));
  return sizes;
}

std::vector<Tensor> scatter(const Tensor& input, const std::vector<Device>& devices) {
  constexpr const char* op = "tl::parallel::scatter";
  profiler::OpScope scope(op);
  check_defined(input, op);
  TL_CHECK(input.dim() >= 1, ShapeError, op,
           "expected a tensor with a batch dim (dim 0) to split, got a 0-dim tensor");
  TL_CHECK(!devices.empty(), DeviceError, op, "expected at least one device, got none");
  const std::vector<int64_t> sizes =
      chunk_sizes(input.size(0), static_cast<int64_t>(devices.size()));
  // A blocking copy from pageable memory waits for the device's stream to drain, which would
  // make each device wait for the work queued on it before the host can feed the next one.
  bool to_gpu = false;
  for (size_t i = 0; i < sizes.size(); ++i) to_gpu = to_gpu || devices[i].is_cuda();
  const bool pin = input.is_cpu() && to_gpu && cuda::is_available();
  const Tensor source = pin ? input.pin_memory() : input;
  std::vector<Tensor> chunks;
  chunks.reserve(sizes.size());
  int64_t start = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    chunks.push_back(source.narrow(0, start, sizes[i]).to(devices[i], /*non_blocking=*/pin));
    start += sizes[i];
  }
  return chunks;
}

Tensor gather(const std::vector<Tensor>& outputs, Device device, const char* op) {
  profiler::OpScope scope(op);
  TL_CHECK(!outputs.empty(), ShapeError, op, "expected at least one output to gather, got none");
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& o = outputs[i];
    TL_CHECK(o.defined(), Error, op, "output ", i, " is an undefined tensor");
    TL_CHECK(o.dim() >= 1, ShapeError, op, "output ", i,
             " is a 0-dim tensor; outputs are joined along a batch dim (dim 0)");
    TL_CHECK(o.dtype() == outputs[0].dtype(), DTypeError, op,
             "outputs differ in dtype: ", outputs[0].dtype(), " (output 0) and ", o.dtype(),
             " (output ", i, ")");
    bool same = o.dim() == outputs[0].dim();
    for (int64_t d = 1; same && d < o.dim(); ++d) same = o.size(d) == outputs[0].size(d);
    TL_CHECK(same, ShapeError, op, "outputs differ in shape past dim 0: ", outputs[0].shape(),
             " (output 0) and ", o.shape(), " (output ", i, ")");
  }
  // Every device's work was enqueued before the first copy, so a copy to the host that waits for
  // one device leaves the others running.
  std::vector<Tensor> moved;
  moved.reserve(outputs.size());
  for (const Tensor& o : outputs) moved.push_back(o.to(device));
  return moved.size() == 1 ? moved[0] : cat(moved, 0);
}

}  // namespace tensorlet::parallel

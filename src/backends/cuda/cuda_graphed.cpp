// tl::cuda::graphed (graph.h): a function of fixed-shape tensors captured once on static inputs,
// then called as copy-in, replay, static outputs.
#include <memory>

#include "tensorlet/backends/cuda/cuda.h"
#include "tensorlet/backends/cuda/graph.h"
#include "tensorlet/tensor/error.h"
#include "tensorlet/tensor/tensor.h"

namespace tensorlet::cuda {
namespace {

struct GraphedState {
  Graph graph;
  std::vector<Tensor> inputs;   // static: each call copies its arguments here
  std::vector<Tensor> outputs;  // static: what the captured function returned
};

}  // namespace

std::function<std::vector<Tensor>(const std::vector<Tensor>&)> graphed(
    const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& fn,
    const std::vector<Tensor>& sample_inputs) {
  constexpr const char* op = "tl::cuda::graphed";
  if (sample_inputs.empty())
    fail<ShapeError>(op, "expected at least one sample input (a CUDA tensor)");
  int device = -1;
  for (size_t i = 0; i < sample_inputs.size(); ++i) {
    const Tensor& t = sample_inputs[i];
    check_defined(t, op);
    if (!t.is_cuda())
      fail<DeviceError>(op, "sample input ", i, " is on ", t.device(),
                        "; the static inputs must be CUDA tensors");
    if (device >= 0 && t.device().index() != device)
      fail<DeviceError>(op, "sample inputs are on cuda:", device, " and ", t.device(),
                        "; a graphed function runs on one device");
    device = t.device().index();
  }
  auto state = std::make_shared<GraphedState>();
  for (const Tensor& t : sample_inputs) state->inputs.push_back(t.clone());
  DeviceGuard on_device(device);
  // One eager call first: what a first call sets up once (cuBLAS handles, workspaces) must not
  // happen inside the capture. Then the work is ordered before the capture's on this stream.
  (void)fn(state->inputs);
  state->graph.capture([&] { state->outputs = fn(state->inputs); });
  return [state](const std::vector<Tensor>& args) {
    constexpr const char* call = "tl::cuda::graphed";
    if (args.size() != state->inputs.size())
      fail<ShapeError>(call, "expected ", state->inputs.size(), " inputs, got ", args.size());
    for (size_t i = 0; i < args.size(); ++i) {
      check_defined(args[i], call);
      if (args[i].shape() != state->inputs[i].shape())
        fail<ShapeError>(call, "input ", i, " has shape ", args[i].shape(),
                         ", the graph was captured for ", state->inputs[i].shape());
      if (args[i].dtype() != state->inputs[i].dtype())
        fail<DTypeError>(call, "input ", i, " has dtype ", args[i].dtype(),
                         ", the graph was captured for ", state->inputs[i].dtype());
      if (!args[i].is_same(state->inputs[i])) state->inputs[i].copy_(args[i]);
    }
    DeviceGuard guard(state->inputs[0].device().index());
    state->graph.replay();
    return state->outputs;
  };
}

}  // namespace tensorlet::cuda

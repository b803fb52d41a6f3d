// tl::DataParallel: one forward function or module run on slices of a batch on several devices at
// once, with its parameters replicated to each device, in the manner of torch.nn.DataParallel.
#pragma once

#include <concepts>
#include <cstddef>
#include <functional>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tensorlet/tensor/device.h"
#include "tensorlet/tensor/tensor.h"

namespace tensorlet {

// What DataParallel can wrap besides a function: a module that lists its parameters and computes
// its forward with parameters given in that order (tl::nn::Linear is one).
template <typename M>
concept ParallelModule = requires(const M& m, const std::vector<Tensor>& params, const Tensor& x) {
  { m.parameters() } -> std::convertible_to<std::vector<Tensor>>;
  { m.forward(params, x) } -> std::convertible_to<Tensor>;
};

// forward(input) splits input along dim 0 into chunks as torch.chunk does (ceil(n / k) rows
// each for k devices, fewer chunks when n < k), copies chunk i to devices()[i], calls the forward
// function there with that device's copy of the parameters, and concatenates the outputs along
// dim 0 on output_device(). All of it is issued from the calling thread: work on a GPU is only
// enqueued on its current stream, so the devices run their chunks at the same time. A forward
// function that waits for its device (item(), printing, nonzero) makes the devices take turns.
//
// Parameters are copied to each device when the DataParallel is made and again only on
// sync_params() or set_params(); the device the parameters are on uses them as they are. A
// device may be listed more than once (it then runs several chunks, in turn). Not thread-safe.
// The copies are data, outside autograd: a backward through the output reaches the parameters
// only from the chunks run on their own device (training on several GPUs is
// DistributedDataParallel's job, the distributed-training issue's).
class DataParallel {
 public:
  using Forward = std::function<Tensor(const std::vector<Tensor>& params, const Tensor& input)>;

  // On every CUDA device, gathering on cuda:0; on the CPU alone when no CUDA device is usable.
  DataParallel(Forward forward, std::vector<Tensor> params);
  // On `devices` (not empty; CUDA devices, the CPU, or both), gathering on `output_device`
  // (default: the first of devices). Throws DeviceError for a device that does not exist and for
  // parameters on different devices.
  DataParallel(Forward forward, std::vector<Tensor> params, std::vector<Device> devices,
               std::optional<Device> output_device = std::nullopt);
  // A module, as torch.nn.DataParallel(net): its parameters() are replicated (the module keeps
  // its own; a copy of the module computes forward(params, chunk) on each device). Devices as
  // above; with none given, every CUDA device (the CPU alone without one).
  template <ParallelModule M>
  explicit DataParallel(const M& net, std::vector<Device> devices = {},
                        std::optional<Device> output_device = std::nullopt)
      : DataParallel([net](const std::vector<Tensor>& params,
                           const Tensor& x) -> Tensor { return net.forward(params, x); },
                     net.parameters(), devices.empty() ? all_devices() : std::move(devices),
                     output_device) {
    if constexpr (requires(std::ostream & os) { os << net; }) {
      std::ostringstream os;
      os << net;
      module_description_ = os.str();
    }
  }
  // A module holder (tl::nn::Linear), as torch.nn.DataParallel(net): the module is shared, not
  // copied.
  template <typename H>
  requires ParallelModule<typename H::ContainedType>
  explicit DataParallel(const H& net, std::vector<Device> devices = {},
                        std::optional<Device> output_device = std::nullopt)
      : DataParallel(
            [module = net.ptr()](const std::vector<Tensor>& params, const Tensor& x) -> Tensor {
              return module->forward(params, x);
            },
            net->parameters(), devices.empty() ? all_devices() : std::move(devices),
            output_device) {
    std::ostringstream os;
    os << *net;
    module_description_ = os.str();
  }

  // The batch may be on any device (a CPU batch is scattered from pinned host memory). An empty
  // batch runs on the first device alone, so the output still has the forward function's shape.
  Tensor forward(const Tensor& input);
  Tensor operator()(const Tensor& input) { return forward(input); }

  // Copies the parameters' current values to every replica (after an in-place update of them).
  void sync_params();
  // Replaces the parameters (same rules as the constructor's) and replicates them.
  void set_params(std::vector<Tensor> params);

  const std::vector<Tensor>& params() const { return params_; }
  // The parameters the forward function gets on devices()[i].
  const std::vector<Tensor>& replica_params(size_t i) const;
  const std::vector<Device>& devices() const { return devices_; }
  Device output_device() const { return output_device_; }
  // The wrapped module's printed form ("Linear(in_features=10, ...)"), "<function>" for a
  // function or a module that cannot be printed.
  const std::string& module_description() const { return module_description_; }

  // Every CUDA device, or the CPU alone when no CUDA device is usable.
  static std::vector<Device> all_devices();

 private:
  void check_params(const std::vector<Tensor>& params, const char* op) const;
  void replicate();
  Tensor run_replica(size_t i, const Tensor& chunk) const;

  Forward forward_;
  std::vector<Tensor> params_;
  std::vector<Device> devices_;
  Device output_device_;
  std::vector<std::vector<Tensor>> replicas_;  // per entry of devices_
  std::vector<bool> owns_copy_;                // replicas_[i] is a copy made for devices_[i]
  std::string module_description_ = "<function>";
};

// As torch prints it: "DataParallel(\n  (module): Linear(in_features=10, ...)\n)".
std::ostream& operator<<(std::ostream& os, const DataParallel& model);

}  // namespace tensorlet

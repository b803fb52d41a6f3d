// tl::DataParallel: validation, parameter replication, and the scatter / run / gather of forward.
#include "tensorlet/parallel/data_parallel.h"

#include <utility>

#include "tensorlet/backends/cuda/cuda.h"
#include "tensorlet/parallel/scatter_gather.h"
#include "tensorlet/tensor/op_scope.h"
#include "tensorlet/tensor/error.h"
#include "tensorlet/tensor/grad_mode.h"

namespace tensorlet {
namespace {

constexpr const char* kOp = "tl::DataParallel";

void check_device(Device d, const char* op, const char* what) {
  if (d.is_cpu()) return;
  const int n = cuda::device_count();
  if (n == 0)
    fail<DeviceError>(op, "cannot use ", d, " as ", what, ": no CUDA device is available",
                      cuda::is_built() ? " (no GPU or no driver)" : " (built without CUDA)");
  if (d.index() < 0 || d.index() >= n)
    fail<DeviceError>(op, "cannot use ", d, " as ", what, ": expected a CUDA device index in [0, ",
                      n, "), this machine has ", n, " CUDA device", n == 1 ? "" : "s");
}

}  // namespace

std::vector<Device> DataParallel::all_devices() {
  std::vector<Device> devices;
  for (int i = 0; i < cuda::device_count(); ++i) devices.push_back(Device::cuda(i));
  if (devices.empty()) devices.push_back(Device::cpu());
  return devices;
}

DataParallel::DataParallel(Forward forward, std::vector<Tensor> params)
    : DataParallel(std::move(forward), std::move(params), all_devices()) {}

DataParallel::DataParallel(Forward forward, std::vector<Tensor> params, std::vector<Device> devices,
                           std::optional<Device> output_device)
    : forward_(std::move(forward)), devices_(std::move(devices)) {
  profiler::OpScope scope(kOp);
  TL_CHECK(static_cast<bool>(forward_), Error, kOp,
           "expected a forward function, got an empty one");
  TL_CHECK(!devices_.empty(), DeviceError, kOp,
           "expected at least one device to run on, got an empty device list");
  for (Device d : devices_) check_device(d, kOp, "a replica device");
  output_device_ = output_device.value_or(devices_[0]);
  check_device(output_device_, kOp, "the output device");
  check_params(params, kOp);
  params_ = std::move(params);
  replicate();
}

void DataParallel::check_params(const std::vector<Tensor>& params, const char* op) const {
  for (size_t i = 0; i < params.size(); ++i) {
    TL_CHECK(params[i].defined(), Error, op, "parameter ", i, " is an undefined tensor");
    TL_CHECK(params[i].device() == params[0].device(), DeviceError, op,
             "expected every parameter on one device, got ", params[0].device(),
             " (parameter 0) and ", params[i].device(), " (parameter ", i, ")");
  }
}

void DataParallel::replicate() {
  replicas_.assign(devices_.size(), {});
  owns_copy_.assign(devices_.size(), false);
  for (size_t i = 0; i < devices_.size(); ++i) {
    const Device d = devices_[i];
    size_t first = i;
    for (size_t j = 0; j < i; ++j)
      if (devices_[j] == d) {
        first = j;
        break;
      }
    if (first != i) {
      replicas_[i] = replicas_[first];  // the same tensors: one copy per device
    } else if (params_.empty() || params_[0].device() == d) {
      replicas_[i] = params_;  // the parameters' own device uses them as they are
    } else {
      // Copies outside autograd (data only): see the header on gradients.
      for (const Tensor& p : params_) replicas_[i].push_back(p.detach().to(d));
      owns_copy_[i] = true;
    }
  }
}

void DataParallel::sync_params() {
  profiler::OpScope scope("tl::DataParallel::sync_params");
  NoGradGuard data_only;
  for (size_t i = 0; i < devices_.size(); ++i)
    if (owns_copy_[i])
      for (size_t k = 0; k < params_.size(); ++k) replicas_[i][k].copy_(params_[k]);
}

void DataParallel::set_params(std::vector<Tensor> params) {
  constexpr const char* op = "tl::DataParallel::set_params";
  profiler::OpScope scope(op);
  check_params(params, op);
  params_ = std::move(params);
  replicate();
}

const std::vector<Tensor>& DataParallel::replica_params(size_t i) const {
  TL_CHECK(i < replicas_.size(), IndexError, "tl::DataParallel::replica_params", "replica ", i,
           " does not exist: there are ", replicas_.size(), " (one per device)");
  return replicas_[i];
}

Tensor DataParallel::run_replica(size_t i, const Tensor& chunk) const {
  if (!devices_[i].is_cuda()) return forward_(replicas_[i], chunk);
  // The device current for the whole replica, so its ops do not switch devices one by one.
  cuda::DeviceGuard on_device(devices_[i].index());
  return forward_(replicas_[i], chunk);
}

Tensor DataParallel::forward(const Tensor& input) {
  constexpr const char* op = "tl::DataParallel::forward";
  profiler::OpScope scope(op);
  check_defined(input, op);
  TL_CHECK(input.dim() >= 1, ShapeError, op,
           "expected an input with a batch dim (dim 0) to split, got a 0-dim tensor");
  if (input.size(0) == 0)
    return parallel::gather({run_replica(0, input.to(devices_[0]))}, output_device_, op);
  const std::vector<Tensor> chunks = parallel::scatter(input, devices_);
  std::vector<Tensor> outputs(chunks.size());
  // GPU replicas first: they only enqueue, so their devices are busy while CPU replicas run.
  for (bool gpu_pass : {true, false})
    for (size_t i = 0; i < chunks.size(); ++i)
      if (devices_[i].is_cuda() == gpu_pass) outputs[i] = run_replica(i, chunks[i]);
  return parallel::gather(outputs, output_device_, op);
}

std::ostream& operator<<(std::ostream& os, const DataParallel& model) {
  return os << "DataParallel(\n  (module): " << model.module_description() << "\n)";
}

}  // namespace tensorlet

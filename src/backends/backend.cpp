// The backend registry: one backend per device type, registered as the library loads.
#include "tensorlet/backends/backend.h"

#include <array>
#include <cstring>

#include "tensorlet/tensor/dispatch.h"
#include "tensorlet/tensor/error.h"
#include "tensorlet/tensor/op_scope.h"

namespace tensorlet {
namespace {

using BackendGetter = Backend& (*)();

// A function-local static: backends register from their own files' static initialisers.
std::array<BackendGetter, kNumDeviceTypes>& backends() {
  static std::array<BackendGetter, kNumDeviceTypes> table{};
  return table;
}

}  // namespace

bool register_backend(const BackendRegistration& r) {
  backends()[static_cast<size_t>(r.type)] = r.backend;
  register_allocator(r.type, r.allocator);
  if (r.pinned_host_allocator) register_pinned_host_allocator(r.pinned_host_allocator);
  if (r.locate_pointer) register_pointer_locator(r.locate_pointer);
  return true;
}

void Backend::reserve_random(const Generator& gen, uint64_t blocks, const Tensor& /*out*/,
                             RandomParams& params) {
  const PhiloxReservation r = gen.reserve(blocks);
  params.seed = r.seed;
  params.offset = r.offset;
}

void Backend::add_n(const std::vector<Tensor>& in, const Tensor& out) {
  add_scaled(in[0], in[1], Scalar(1.0), out);
  for (size_t i = 2; i < in.size(); ++i) add_scaled(out, in[i], Scalar(1.0), out);
}

// Reached only through has_batch_norm, which is false unless a backend overrides both.
void Backend::batch_norm_forward(const Tensor& /*x*/, const Tensor& /*weight*/,
                                 const Tensor& /*bias*/, const Tensor& /*running_mean*/,
                                 const Tensor& /*running_var*/, const BatchNormArgs& /*a*/,
                                 const Tensor& /*y*/, const Tensor& /*mean*/,
                                 const Tensor& /*invstd*/) {
  fail<Error>(profiler::user_op_or("tl::nn::functional::batch_norm"),
              "this backend has no fused batch norm");
}

void Backend::batch_norm_backward(const Tensor& /*grad*/, const Tensor& /*x*/,
                                  const Tensor& /*weight*/, const Tensor& /*mean*/,
                                  const Tensor& /*invstd*/, const BatchNormArgs& /*a*/,
                                  const Tensor& /*dx*/, const Tensor& /*dweight*/,
                                  const Tensor& /*dbias*/) {
  fail<Error>(profiler::user_op_or("tl::nn::functional::batch_norm"),
              "this backend has no fused batch norm");
}

Backend& backend_for(Device device) {
  BackendGetter get = backends()[static_cast<size_t>(device.type())];
  // Named after the user's op (tl::zeros, tl::to, ...): "tl::backend" would mean nothing to them.
  if (get == nullptr)
    fail<DeviceError>(profiler::user_op_or("tl::backend"), "device ", device,
                      " requested, but tensorlet was built without ",
                      device_type_display_name(device.type()));
  return get();
}

uint64_t element_bits(Scalar value, DType dtype) {
  uint64_t bits = 0;
  dispatch_dtype(dtype, [&]<typename T>() {
    const Stored<T> v = value.to<T>();
    std::memcpy(&bits, &v, sizeof(v));
  });
  return bits;
}

Backend& cpu_backend() { return backend_for(Device::cpu()); }

}  // namespace tensorlet

// Finds the backend for a device and names ops for error messages.
#include "backends/backend.h"

#include "core/op_scope.h"
#include "core/error.h"

namespace tensorlet {

#if TL_WITH_CUDA
Backend& cuda_backend();  // backends/cuda
#endif

Backend& backend_for(Device device) {
  if (device.is_cpu()) return cpu_backend();
#if TL_WITH_CUDA
  return cuda_backend();
#else
  // Named after the user's op (tl::zeros, tl::to, ...): "tl::backend" would mean nothing to them.
  fail<DeviceError>(profiler::user_op_or("tl::backend"), "device ", device,
                    " requested, but tensorlet was built without CUDA");
#endif
}

const char* unary_op_name(UnaryOp op) {
  static const char* names[] = {"tl::neg",     "tl::abs",  "tl::exp",        "tl::log",
                                "tl::sqrt",    "tl::sin",  "tl::cos",        "tl::tanh",
                                "tl::sigmoid", "tl::relu", "tl::logical_not"};
  return names[static_cast<int>(op)];
}

const char* binary_op_name(BinaryOp op) {
  static const char* names[] = {"tl::add", "tl::sub",         "tl::mul",       "tl::div",
                                "tl::pow", "tl::maximum",     "tl::minimum",   "tl::gt",
                                "tl::lt",  "tl::ge",          "tl::le",        "tl::eq",
                                "tl::ne",  "tl::logical_and", "tl::logical_or"};
  return names[static_cast<int>(op)];
}

}  // namespace tensorlet

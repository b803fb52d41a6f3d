// The CPU's fused optimizer steps: each parameter's whole update in one pass over its elements
// (the element functions of backends/math/optimizer_ops.h, shared with CUDA), split over threads.
#include "tensorlet/backends/cpu/cpu_backend.h"
#include "tensorlet/backends/cpu/parallel.h"
#include "tensorlet/tensor/dispatch.h"

namespace tensorlet::cpu {

void CpuBackend::fused_adam(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                            const std::vector<Tensor>& exp_avgs,
                            const std::vector<Tensor>& exp_avg_sqs,
                            const std::vector<Tensor>& max_exp_avg_sqs, const AdamStep& step) {
  if (params.empty()) return;
  dispatch_dtype<kFloatingDTypes>(
      params.front().dtype(),
      [&]<typename T>() {
        const auto k = math::adam_constants<compute_t<T>>(step);
        for (size_t t = 0; t < params.size(); ++t) {
          T* p = static_cast<T*>(params[t].data_ptr());
          const T* g = static_cast<const T*>(grads[t].data_ptr());
          T* m = static_cast<T*>(exp_avgs[t].data_ptr());
          T* v = static_cast<T*>(exp_avg_sqs[t].data_ptr());
          T* vmax = step.amsgrad ? static_cast<T*>(max_exp_avg_sqs[t].data_ptr()) : nullptr;
          // About a dozen flops and seven streams per element: a quarter of the copy grain.
          parallel_for(params[t].numel(), kGrainSize / 4, [&](int64_t begin, int64_t end) {
            for (int64_t i = begin; i < end; ++i) math::adam_element(p, g, m, v, vmax, i, k);
          });
        }
      },
      "tl::optim::Adam");
}

void CpuBackend::fused_sgd(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                           const std::vector<Tensor>& momentum_buffers, const SgdStep& step) {
  if (params.empty()) return;
  dispatch_dtype<kFloatingDTypes>(
      params.front().dtype(),
      [&]<typename T>() {
        const auto k = math::sgd_constants<compute_t<T>>(step);
        for (size_t t = 0; t < params.size(); ++t) {
          T* p = static_cast<T*>(params[t].data_ptr());
          const T* g = static_cast<const T*>(grads[t].data_ptr());
          T* buf = k.has_momentum ? static_cast<T*>(momentum_buffers[t].data_ptr()) : nullptr;
          parallel_for(params[t].numel(), kGrainSize / 2, [&](int64_t begin, int64_t end) {
            for (int64_t i = begin; i < end; ++i) math::sgd_element(p, g, buf, i, k);
          });
        }
      },
      "tl::optim::SGD");
}

}  // namespace tensorlet::cpu

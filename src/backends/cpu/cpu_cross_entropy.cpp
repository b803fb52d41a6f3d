// The CPU's fused cross entropy (backends/math/cross_entropy_ops.h): rows split over threads, each
// row read twice forward (max, then the sum of exp) and once backward, all in the compute type.
#include <algorithm>
#include <cmath>
#include <limits>

#include "tensorlet/backends/cpu/cpu_backend.h"
#include "tensorlet/backends/cpu/parallel.h"
#include "tensorlet/tensor/dispatch.h"

namespace tensorlet::cpu {

namespace {

// The loss tensors' type: float64 for float64 x, else float32 (Backend::cross_entropy_forward).
template <typename T>
using loss_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <typename A>
A total_weight(const Tensor& weight, const Tensor& weight_total, const CrossEntropyArgs& a) {
  if (!weight.defined()) return static_cast<A>(a.classes);
  return a.smoothing > 0 ? *static_cast<const A*>(weight_total.data_ptr()) : A(0);
}

}  // namespace

void CpuBackend::cross_entropy_forward(const Tensor& x, const Tensor& target, const Tensor& weight,
                                       const Tensor& weight_total, const CrossEntropyArgs& args,
                                       const Tensor& loss, const Tensor& row_weight,
                                       const Tensor& lse) {
  dispatch_dtype<kFloatingDTypes>(x.dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    using Acc = acc_t<T>;
    using A = loss_t<T>;
    const int64_t n = args.classes;
    const T* xs = static_cast<const T*>(x.data_ptr());
    const int64_t* ts = static_cast<const int64_t*>(target.data_ptr());
    const T* ws = weight.defined() ? static_cast<const T*>(weight.data_ptr()) : nullptr;
    const A total_w = total_weight<A>(weight, weight_total, args);
    A* out_loss = static_cast<A*>(loss.data_ptr());
    A* out_w = static_cast<A*>(row_weight.data_ptr());
    A* out_lse = static_cast<A*>(lse.data_ptr());
    const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n, 1));
    parallel_for(args.rows, grain, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const T* row = xs + r * n;
        C m = -std::numeric_limits<C>::infinity();
        bool nan = false;
        for (int64_t c = 0; c < n; ++c) {
          const C v = static_cast<C>(row[c]);
          nan |= v != v;
          m = v > m ? v : m;
        }
        Acc s = 0, weighted_x = 0;
        if (nan) {
          s = std::numeric_limits<Acc>::quiet_NaN();
        } else if (m != -std::numeric_limits<C>::infinity()) {
          for (int64_t c = 0; c < n; ++c) s += std::exp(static_cast<C>(row[c]) - m);
        }  // every x -inf: lse = -inf, and lse - x_t is NaN, as torch's log_softmax
        if (args.smoothing > 0)
          for (int64_t c = 0; c < n; ++c)
            weighted_x += static_cast<Acc>(row[c]) * (ws ? static_cast<Acc>(ws[c]) : Acc(1));
        const A row_lse = static_cast<A>(static_cast<Acc>(m) + std::log(s));
        out_lse[r] = row_lse;
        const int64_t t = ts[r];
        if (!math::target_counts(t, args)) {  // ignored (the front-end refused out-of-range ones)
          out_loss[r] = 0;
          out_w[r] = 0;
          continue;
        }
        const A w_t = ws ? static_cast<A>(ws[t]) : A(1);
        out_w[r] = w_t;
        out_loss[r] = math::cross_entropy_row_loss<A>(row_lse, static_cast<A>(row[t]), w_t,
                                                      static_cast<A>(weighted_x), total_w, args);
      }
    });
  });
}

void CpuBackend::cross_entropy_backward(const Tensor& grad, const Tensor& x, const Tensor& target,
                                        const Tensor& weight, const Tensor& weight_total,
                                        const Tensor& lse, const CrossEntropyArgs& args,
                                        const Tensor& dx) {
  dispatch_dtype<kFloatingDTypes>(x.dtype(), [&]<typename T>() {
    using A = loss_t<T>;
    const int64_t n = args.classes;
    const T* xs = static_cast<const T*>(x.data_ptr());
    const int64_t* ts = static_cast<const int64_t*>(target.data_ptr());
    const T* ws = weight.defined() ? static_cast<const T*>(weight.data_ptr()) : nullptr;
    const A total_w = total_weight<A>(weight, weight_total, args);
    const A* gs = static_cast<const A*>(grad.data_ptr());
    const A* lses = static_cast<const A*>(lse.data_ptr());
    T* out = static_cast<T*>(dx.data_ptr());
    const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n, 1));
    parallel_for(args.rows, grain, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const T* row = xs + r * n;
        T* d = out + r * n;
        const int64_t t = ts[r];
        if (!math::target_counts(t, args)) {
          std::fill(d, d + n, T(0));
          continue;
        }
        const A w_t = ws ? static_cast<A>(ws[t]) : A(1);
        const auto k = math::cross_entropy_row_grad<A>(gs[r], w_t, total_w, args);
        const A row_lse = lses[r];
        for (int64_t c = 0; c < n; ++c) {
          A v = std::exp(static_cast<A>(row[c]) - row_lse) * k.scale;
          if (args.smoothing > 0) v -= k.spread * (ws ? static_cast<A>(ws[c]) : A(1));
          if (c == t) v -= k.hit;
          d[c] = static_cast<T>(v);
        }
      }
    });
  });
}

}  // namespace tensorlet::cpu

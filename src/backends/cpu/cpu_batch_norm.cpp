// The CPU's fused batch norm (backends/math/batch_norm_ops.h): channels split over threads, each
// channel's values read twice forward (sum, then the centred squares) and written once, read
// twice backward; sums in double, so float32's statistics are those of the exact values.
#include <cmath>
#include <type_traits>

#include "tensorlet/backends/cpu/cpu_backend.h"
#include "tensorlet/backends/cpu/parallel.h"
#include "tensorlet/tensor/dispatch.h"

namespace tensorlet::cpu {

namespace {

template <typename T>
using stat_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <typename T>
const T* data_or_null(const Tensor& t) {
  return t.defined() ? static_cast<const T*>(t.data_ptr()) : nullptr;
}

// Threads take whole channels; a channel of M values is worth ~M elements of work.
int64_t channel_grain(const BatchNormArgs& a) {
  return std::max<int64_t>(1, kGrainSize / std::max<int64_t>(a.count(), 1));
}

}  // namespace

void CpuBackend::batch_norm_forward(const Tensor& x, const Tensor& weight, const Tensor& bias,
                                    const Tensor& running_mean, const Tensor& running_var,
                                    const BatchNormArgs& a, const Tensor& y, const Tensor& mean,
                                    const Tensor& invstd) {
  dispatch_dtype<DTypeSet{kFloat32, kFloat64}>(x.dtype(), [&]<typename T>() {
    using S = stat_t<T>;
    const T* xs = static_cast<const T*>(x.data_ptr());
    T* ys = static_cast<T*>(y.data_ptr());
    const T *w = data_or_null<T>(weight), *b = data_or_null<T>(bias);
    T* rm = running_mean.defined() ? static_cast<T*>(running_mean.data_ptr()) : nullptr;
    T* rv = running_var.defined() ? static_cast<T*>(running_var.data_ptr()) : nullptr;
    S* out_mean = static_cast<S*>(mean.data_ptr());
    S* out_invstd = static_cast<S*>(invstd.data_ptr());
    const double m = static_cast<double>(a.count());
    const int64_t plane = a.channels * a.inner;
    parallel_for(a.channels, channel_grain(a), [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) {
        double sum = 0;
        for (int64_t i = 0; i < a.n; ++i) {
          const T* p = xs + i * plane + c * a.inner;
          for (int64_t k = 0; k < a.inner; ++k) sum += static_cast<double>(p[k]);
        }
        const double mu = sum / m;
        double squares = 0;
        for (int64_t i = 0; i < a.n; ++i) {
          const T* p = xs + i * plane + c * a.inner;
          for (int64_t k = 0; k < a.inner; ++k) {
            const double d = static_cast<double>(p[k]) - mu;
            squares += d * d;
          }
        }
        const double var = squares / m;
        const double inv = 1.0 / std::sqrt(var + a.eps);
        out_mean[c] = static_cast<S>(mu);
        out_invstd[c] = static_cast<S>(inv);
        if (rm) rm[c] = static_cast<T>((1 - a.momentum) * rm[c] + a.momentum * mu);
        if (rv) rv[c] = static_cast<T>((1 - a.momentum) * rv[c] + a.momentum * var * m / (m - 1));
        const double scale = inv * (w ? static_cast<double>(w[c]) : 1.0);
        const double shift = (b ? static_cast<double>(b[c]) : 0.0) - mu * scale;
        const T sc = static_cast<T>(scale), sh = static_cast<T>(shift);
        for (int64_t i = 0; i < a.n; ++i) {
          const T* p = xs + i * plane + c * a.inner;
          T* q = ys + i * plane + c * a.inner;
          for (int64_t k = 0; k < a.inner; ++k) q[k] = p[k] * sc + sh;
        }
      }
    });
  });
}

void CpuBackend::batch_norm_backward(const Tensor& grad, const Tensor& x, const Tensor& weight,
                                     const Tensor& mean, const Tensor& invstd,
                                     const BatchNormArgs& a, const Tensor& dx,
                                     const Tensor& dweight, const Tensor& dbias) {
  dispatch_dtype<DTypeSet{kFloat32, kFloat64}>(x.dtype(), [&]<typename T>() {
    using S = stat_t<T>;
    const T* xs = static_cast<const T*>(x.data_ptr());
    const T* gs = static_cast<const T*>(grad.data_ptr());
    const T* w = data_or_null<T>(weight);
    const S* mu_of = static_cast<const S*>(mean.data_ptr());
    const S* inv_of = static_cast<const S*>(invstd.data_ptr());
    T* dxs = dx.defined() ? static_cast<T*>(dx.data_ptr()) : nullptr;
    T* dws = dweight.defined() ? static_cast<T*>(dweight.data_ptr()) : nullptr;
    T* dbs = dbias.defined() ? static_cast<T*>(dbias.data_ptr()) : nullptr;
    const double m = static_cast<double>(a.count());
    const int64_t plane = a.channels * a.inner;
    parallel_for(a.channels, channel_grain(a), [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) {
        const double mu = static_cast<double>(mu_of[c]), inv = static_cast<double>(inv_of[c]);
        double sum_g = 0, sum_gx = 0;  // sum(g), sum(g (x - mean))
        for (int64_t i = 0; i < a.n; ++i) {
          const T* p = xs + i * plane + c * a.inner;
          const T* g = gs + i * plane + c * a.inner;
          for (int64_t k = 0; k < a.inner; ++k) {
            const double gv = static_cast<double>(g[k]);
            sum_g += gv;
            sum_gx += gv * (static_cast<double>(p[k]) - mu);
          }
        }
        const double sum_gxhat = sum_gx * inv;
        if (dbs) dbs[c] = static_cast<T>(sum_g);
        if (dws) dws[c] = static_cast<T>(sum_gxhat);
        if (!dxs) continue;
        // dx = k (g - sum_g / M - (x - mean) invstd^2 sum_gx / M), k = w invstd.
        const double k = (w ? static_cast<double>(w[c]) : 1.0) * inv;
        const double g_shift = sum_g / m, x_scale = inv * inv * sum_gx / m;
        for (int64_t i = 0; i < a.n; ++i) {
          const T* p = xs + i * plane + c * a.inner;
          const T* g = gs + i * plane + c * a.inner;
          T* q = dxs + i * plane + c * a.inner;
          for (int64_t e = 0; e < a.inner; ++e)
            q[e] = static_cast<T>(k * (static_cast<double>(g[e]) - g_shift -
                                       (static_cast<double>(p[e]) - mu) * x_scale));
        }
      }
    });
  });
}

}  // namespace tensorlet::cpu

// window_columns on the CPU as two loops instead of a gather: im2col writes each (tap, output row)
// run straight from its input row, and its backward (col2im) adds each column back into its
// plane. Why: the generic path (append a pad column with cat, index_select through a cached
// index, index_add back) costs LeNet's CPU step about a third of its time; these loops touch each
// element once, one plane per task, so planes need no atomics.
#include <algorithm>
#include <cstring>
#include <optional>

#include "tensorlet/autograd/autograd_meta.h"
#include "tensorlet/autograd/formula_node.h"
#include "tensorlet/backends/cpu/parallel.h"
#include "tensorlet/ops/factories.h"
#include "tensorlet/ops/window.h"
#include "tensorlet/tensor/dispatch.h"
#include "tensorlet/tensor/grad_mode.h"

namespace tensorlet::detail {

namespace {

Window2d window_of(const autograd::FormulaNode& n) {
  const std::vector<int64_t>& v = n.ints;
  Window2d w{{v[0], v[1]}, {v[2], v[3]}, {v[4], v[5]}, {v[6], v[7]}, v[8], v[9], v[10], v[11]};
  return w;
}

// The input row of output row `o` under kernel offset `k` (may fall outside [0, in)).
inline int64_t input_index(int64_t o, int64_t k, int64_t stride, int64_t pad, int64_t dilation) {
  return o * stride - pad + k * dilation;
}

template <typename T>
void im2col_planes(const T* x, T* cols, int64_t planes, const Window2d& w, T pad) {
  const int64_t hw = w.in_h * w.in_w, taps = w.taps(), l = w.positions();
  const int64_t grain = std::max<int64_t>(1, cpu::kGrainSize / std::max<int64_t>(taps * l, 1));
  cpu::parallel_for(planes, grain, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const T* in = x + p * hw;
      T* out = cols + p * taps * l;
      for (int64_t kh = 0; kh < w.kernel[0]; ++kh)
        for (int64_t kw = 0; kw < w.kernel[1]; ++kw) {
          T* row_out = out + (kh * w.kernel[1] + kw) * l;
          for (int64_t oh = 0; oh < w.out_h; ++oh) {
            T* o = row_out + oh * w.out_w;
            const int64_t ih = input_index(oh, kh, w.stride[0], w.padding[0], w.dilation[0]);
            if (ih < 0 || ih >= w.in_h) {
              std::fill(o, o + w.out_w, pad);
              continue;
            }
            const T* row_in = in + ih * w.in_w;
            for (int64_t ow = 0; ow < w.out_w; ++ow) {
              const int64_t iw = input_index(ow, kw, w.stride[1], w.padding[1], w.dilation[1]);
              o[ow] = iw >= 0 && iw < w.in_w ? row_in[iw] : pad;
            }
          }
        }
    }
  });
}

template <typename T>
void col2im_planes(const T* cols, T* dx, int64_t planes, const Window2d& w) {
  const int64_t hw = w.in_h * w.in_w, taps = w.taps(), l = w.positions();
  const int64_t grain = std::max<int64_t>(1, cpu::kGrainSize / std::max<int64_t>(taps * l, 1));
  cpu::parallel_for(planes, grain, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const T* in = cols + p * taps * l;
      T* out = dx + p * hw;
      std::fill(out, out + hw, T(0));
      for (int64_t kh = 0; kh < w.kernel[0]; ++kh)
        for (int64_t kw = 0; kw < w.kernel[1]; ++kw) {
          const T* row_in = in + (kh * w.kernel[1] + kw) * l;
          for (int64_t oh = 0; oh < w.out_h; ++oh) {
            const int64_t ih = input_index(oh, kh, w.stride[0], w.padding[0], w.dilation[0]);
            if (ih < 0 || ih >= w.in_h) continue;
            T* row_out = out + ih * w.in_w;
            const T* g = row_in + oh * w.out_w;
            for (int64_t ow = 0; ow < w.out_w; ++ow) {
              const int64_t iw = input_index(ow, kw, w.stride[1], w.padding[1], w.dilation[1]);
              if (iw >= 0 && iw < w.in_w) row_out[iw] += g[ow];
            }
          }
        }
    }
  });
}

// cols [N, C, taps, L] -> x's [N, C, H, W]: each column added back where it was read from.
Tensor col2im(const Tensor& g, const Window2d& w, const Shape& x_shape) {
  const Tensor gc = g.contiguous();
  Tensor dx = make_tensor(x_shape, gc.dtype(), gc.device());
  if (dx.numel() == 0) return dx;
  dispatch_dtype<DTypeSet{kFloat32, kFloat64}>(gc.dtype(), [&]<typename T>() {
    col2im_planes(static_cast<const T*>(gc.data_ptr()), static_cast<T*>(dx.data_ptr()),
                  x_shape[0] * x_shape[1], w);
  });
  return dx;
}

// With create_graph the gradient is taken again by running the fast path's adjoint as ops: the
// columns of g added back with the generic path's index_add (so it is differentiable in g).
autograd::TensorList window_columns_formula(const autograd::FormulaNode& n, const Tensor& g) {
  const Window2d w = window_of(n);
  const autograd::InputMeta& x = n.input(0);
  const bool differentiable = GradMode::is_enabled() && autograd::requires_grad(g);
  if (differentiable || g.dtype() != x.dtype || !g.device().is_cpu())
    return {window_columns_adjoint(g, w, x.shape, x.dtype)};
  return {col2im(g, w, x.shape)};
}

}  // namespace

bool cpu_window_columns_applies(const Tensor& x) {
  return x.device().is_cpu() && (x.dtype() == kFloat32 || x.dtype() == kFloat64);
}

Tensor cpu_window_columns(const Tensor& x, const Window2d& w, double pad_value) {
  const int64_t n = x.size(0), c = x.size(1);
  const bool record = autograd::should_record({&x});
  Tensor out;
  {
    std::optional<NoGradGuard> below;
    if (record) below.emplace();
    const Tensor xc = x.contiguous();
    out = make_tensor(Shape({n, c, w.taps(), w.positions()}), x.dtype(), x.device());
    if (out.numel() > 0)
      dispatch_dtype<DTypeSet{kFloat32, kFloat64}>(x.dtype(), [&]<typename T>() {
        im2col_planes(static_cast<const T*>(xc.data_ptr()), static_cast<T*>(out.data_ptr()), n * c,
                      w, static_cast<T>(pad_value));
      });
  }
  if (record) {
    auto node = autograd::record_node("Im2ColBackward0", window_columns_formula, {&x}, out);
    node->ints = {w.kernel[0],  w.kernel[1],  w.stride[0],   w.stride[1],
                  w.padding[0], w.padding[1], w.dilation[0], w.dilation[1],
                  w.in_h,       w.in_w,       w.out_h,       w.out_w};
  }
  return out;
}

}  // namespace tensorlet::detail

// CPU scatter kernel (scatter, scatter_add, scatter_reduce, index_add/copy/fill): threads split
// the positions off the scattered dim, each walks its rows along dim in order.
#include <cstring>

#include "tensorlet/backends/cpu/cpu_backend.h"
#include "tensorlet/backends/cpu/strided_loop.h"
#include "tensorlet/backends/math/scatter_ops.h"
#include "tensorlet/tensor/convert.h"
#include "tensorlet/tensor/dispatch.h"

namespace tensorlet::cpu {

namespace {

// t's view over `shape` (index's shape, or t's own) without `dim`: the first element of each row
// along dim.
Tensor drop_dim(const Tensor& t, const Shape& shape, int64_t dim) {
  Shape sizes = shape, strides = t.strides();
  sizes.erase(dim);
  strides.erase(dim);
  return make_view(t, sizes, strides, t.offset());
}

// Two positions that differ off `dim` reach different elements of self, so rows (one per such
// position) run on any thread with no race; the values of one row fold in index order, which
// makes the CPU's result the same on every run.
template <ScatterOp Op, typename T>
void scatter_rows(const Tensor& self, int64_t dim, const Tensor& index, const ElementwiseArg& src,
                  Scalar alpha) {
  using C = compute_t<T>;
  const Shape& shape = index.shape();
  const int64_t m = shape[dim];
  const Tensor self_rows = drop_dim(self, shape, dim), index_rows = drop_dim(index, shape, dim);
  Tensor src_rows;
  Stored<T> value{};
  if (src.is_scalar()) {
    const uint64_t bits = element_bits(src.scalar, self.dtype());
    std::memcpy(&value, &bits, sizeof value);
  } else {
    src_rows = drop_dim(*src.tensor, shape, dim);
  }
  StridedLoop<3> loop({&self_rows, &index_rows, src.is_scalar() ? nullptr : &src_rows},
                      {nullptr, nullptr, &value});
  const int64_t self_step = self.strides()[dim] * static_cast<int64_t>(sizeof(T));
  const int64_t index_step = index.strides()[dim] * static_cast<int64_t>(sizeof(int64_t));
  const int64_t src_step =
      src.is_scalar() ? 0 : src.tensor->strides()[dim] * static_cast<int64_t>(sizeof(T));
  const C scale = alpha.to<C>();
  const bool scaled = Op == ScatterOp::Add && !(alpha.to<double>() == 1);
  loop.run(
      [&](std::array<char*, 3> p, std::array<int64_t, 3> s, int64_t k) {
        for (int64_t i = 0; i < k; ++i) {
          char* row = p[0] + i * s[0];
          const char* idx = p[1] + i * s[1];
          const char* val = p[2] + i * s[2];
          for (int64_t j = 0; j < m; ++j) {
            char* e = row + *reinterpret_cast<const int64_t*>(idx + j * index_step) * self_step;
            const char* v = val + j * src_step;
            if constexpr (Op == ScatterOp::Assign) {
              std::memcpy(e, v, sizeof(T));  // the bits: a float16 NaN keeps its payload
            } else {
              C x = static_cast<C>(load<T>(v));
              if (scaled) x = scatter_ops::scale(scale, x);
              const C r = scatter_ops::combine<Op>(static_cast<C>(load<T>(e)), x);
              *reinterpret_cast<Stored<T>*>(e) = static_cast<Stored<T>>(static_cast<T>(r));
            }
          }
        }
      },
      std::max<int64_t>(1, kGrainSize / std::max<int64_t>(m, 1)));
}

template <typename T>
void scatter_typed(ScatterOp op, const Tensor& self, int64_t dim, const Tensor& index,
                   const ElementwiseArg& src, Scalar alpha) {
  switch (op) {
    case ScatterOp::Assign:
      return scatter_rows<ScatterOp::Assign, T>(self, dim, index, src, alpha);
    case ScatterOp::Add:
      return scatter_rows<ScatterOp::Add, T>(self, dim, index, src, alpha);
    case ScatterOp::Mul:
      return scatter_rows<ScatterOp::Mul, T>(self, dim, index, src, alpha);
    case ScatterOp::Max:
      return scatter_rows<ScatterOp::Max, T>(self, dim, index, src, alpha);
    case ScatterOp::Min:
      return scatter_rows<ScatterOp::Min, T>(self, dim, index, src, alpha);
  }
}

}  // namespace

void CpuBackend::scatter(ScatterOp op, const Tensor& self, int64_t dim, const Tensor& index,
                         const ElementwiseArg& src, Scalar alpha) {
  if (index.numel() == 0) return;
  dispatch_dtype(self.dtype(),
                 [&]<typename T>() { scatter_typed<T>(op, self, dim, index, src, alpha); });
}

}  // namespace tensorlet::cpu

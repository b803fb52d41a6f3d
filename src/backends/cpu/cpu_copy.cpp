// CPU copy (strided, with dtype conversion) and fill.
#include <cstring>

#include "tensorlet/backends/cpu/cpu_backend.h"
#include "tensorlet/backends/cpu/strided_loop.h"
#include "tensorlet/tensor/dispatch.h"
#include "tensorlet/tensor/convert.h"

namespace tensorlet::cpu {

// Same dtype moves bytes (a bool byte other than 0/1 stays as it is, still true); otherwise each
// element goes through convert (tensor/convert.h), defined for every value.
template <typename To, typename From>
static void convert_rows(const StridedLoop<2>& loop) {
  loop.run([](std::array<char*, 2> p, std::array<int64_t, 2> s, int64_t n) {
    To* out = reinterpret_cast<To*>(p[0]);
    const Stored<From>* in = reinterpret_cast<const Stored<From>*>(p[1]);
    if (s[0] == sizeof(To) && s[1] == sizeof(From)) {
      if constexpr (std::is_same_v<To, From>) {
        std::memcpy(out, in, n * sizeof(To));
      } else {
        for (int64_t i = 0; i < n; ++i) out[i] = convert<To>(from_stored<From>(in[i]));
      }
    } else if constexpr (std::is_same_v<To, From>) {
      for (int64_t i = 0; i < n; ++i) std::memcpy(p[0] + i * s[0], p[1] + i * s[1], sizeof(To));
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<To*>(p[0] + i * s[0]) = convert<To>(load<From>(p[1] + i * s[1]));
    }
  });
}

void copy_strided(const Tensor& src, const Tensor& out) {
  StridedLoop<2> loop({&out, &src});
  dispatch_dtype(out.dtype(), [&]<typename To>() {
    dispatch_dtype(src.dtype(), [&]<typename From>() { convert_rows<To, From>(loop); });
  });
}

void CpuBackend::copy(const Tensor& src, const Tensor& out, bool /*non_blocking*/) {
  if (!src.is_cpu() || !out.is_cpu())
    fail<DeviceError>("tl::copy_", "CPU backend cannot copy from ", src.device(), " to ",
                      out.device());
  copy_strided(src, out);
}

void CpuBackend::fill(const Tensor& out, Scalar value) {
  StridedLoop<1> loop({&out});
  dispatch_dtype(out.dtype(), [&]<typename T>() {
    const T v = value.to<T>();
    loop.run([v](std::array<char*, 1> p, std::array<int64_t, 1> s, int64_t n) {
      if (s[0] == sizeof(T)) {
        T* o = reinterpret_cast<T*>(p[0]);
        for (int64_t i = 0; i < n; ++i) o[i] = v;
      } else {
        for (int64_t i = 0; i < n; ++i) *reinterpret_cast<T*>(p[0] + i * s[0]) = v;
      }
    });
  });
}

}  // namespace tensorlet::cpu

// Scans along a dim (cumsum, cumprod, cummax, cummin): the op enum and one TL_HOST_DEVICE functor
// per op, the combine step that the CPU loops, the CUDA kernels and CUB's scans all apply.
#pragma once

#include <cstdint>
#include <type_traits>

#include "tensorlet/tensor/convert.h"
#include "tensorlet/tensor/dispatch.h"
#include "tensorlet/tensor/dtype.h"
#include "tensorlet/tensor/host_device.h"

namespace tensorlet {

enum class ScanOp : uint8_t { Sum, Prod, Max, Min };

// The public function of each op, for errors raised inside kernels' dispatch.
constexpr const char* scan_op_name(ScanOp op) {
  switch (op) {
    case ScanOp::Sum:
      return "tl::cumsum";
    case ScanOp::Prod:
      return "tl::cumprod";
    case ScanOp::Max:
      return "tl::cummax";
    case ScanOp::Min:
      return "tl::cummin";
  }
  return "tl::scan";
}

// Dtypes the kernels take: every one but bool. cumsum/cumprod get their output dtype (the
// front-end converts bool and integers to int64 first, as torch, and refuses a bool dtype
// argument as torch's kernels do); cummax/cummin of bool run on uint8 (0/1, so any non-zero
// byte of a bool tensor ranks as true).
inline constexpr DTypeSet kScanDTypes = kNumericDTypes;

namespace scan_ops {

// cumsum / cumprod: a running sum or product in acc_t<T> (double for float and double, float
// for float16/bfloat16, int64 for integers, which wrap as torch's int64 accumulators do),
// rounded to T at each output: a float16 scan rounds every output once and never its running
// value.
template <typename T, bool kProd>
struct ArithmeticScan {
  using Acc = acc_t<T>;
  static constexpr bool kIndexed = false;
  static TL_HOST_DEVICE Acc load(T v) { return static_cast<Acc>(static_cast<compute_t<T>>(v)); }
  static TL_HOST_DEVICE Acc combine(Acc a, Acc b) {
    if constexpr (std::is_floating_point_v<Acc>) {
      return kProd ? a * b : a + b;
    } else {
      const auto x = static_cast<uint64_t>(a), y = static_cast<uint64_t>(b);
      return static_cast<Acc>(kProd ? x * y : x + y);
    }
  }
  static TL_HOST_DEVICE T store(Acc a) { return convert<T>(a); }
};

// The running max/min and where it was taken: a value and its position along the dim.
template <typename C>
struct ValueIndex {
  C value;
  int64_t index;
};

// cummax / cummin as torch: an element replaces the running value when it is a NaN, or when
// the running value is not NaN and the element is >= it (cummin: <=). So ties go to the LAST
// occurrence, the values are NaN from the first NaN on, and the index follows the most recent
// NaN. As a combine of (earlier, later) it is the maximum of a total order (NaN above every
// value, then the value, then the position), so it is associative and a parallel scan gives
// the sequential loop's result exactly.
template <typename T, bool kMaxOp>
struct ExtremumScan {
  using C = compute_t<T>;
  using Acc = ValueIndex<C>;
  static constexpr bool kIndexed = true;
  static TL_HOST_DEVICE bool is_nan(C v) {
    if constexpr (std::is_floating_point_v<C>)
      return v != v;
    else
      return false;
  }
  static TL_HOST_DEVICE Acc load(T v, int64_t index) { return {static_cast<C>(v), index}; }
  static TL_HOST_DEVICE Acc combine(Acc earlier, Acc later) {
    const bool take = is_nan(later.value) ||
                      (!is_nan(earlier.value) &&
                       (kMaxOp ? later.value >= earlier.value : later.value <= earlier.value));
    return take ? later : earlier;
  }
  static TL_HOST_DEVICE T store(Acc a) { return static_cast<T>(a.value); }
};

}  // namespace scan_ops

// Calls f.template operator()<T, F>() with the element type and the functor that runs `op` on
// `dtype`, instantiated only for kScanDTypes (DTypeError naming the public op otherwise).
template <typename Fn>
void dispatch_scan(ScanOp op, DType dtype, Fn&& f) {
  using namespace scan_ops;
  const char* name = scan_op_name(op);
  switch (op) {
    case ScanOp::Sum:
      return dispatch_dtype<kScanDTypes>(
          dtype, [&]<typename T>() { f.template operator()<T, ArithmeticScan<T, false>>(); }, name);
    case ScanOp::Prod:
      return dispatch_dtype<kScanDTypes>(
          dtype, [&]<typename T>() { f.template operator()<T, ArithmeticScan<T, true>>(); }, name);
    case ScanOp::Max:
      return dispatch_dtype<kScanDTypes>(
          dtype, [&]<typename T>() { f.template operator()<T, ExtremumScan<T, true>>(); }, name);
    case ScanOp::Min:
      return dispatch_dtype<kScanDTypes>(
          dtype, [&]<typename T>() { f.template operator()<T, ExtremumScan<T, false>>(); }, name);
  }
}

}  // namespace tensorlet

// Reductions from one list (TL_REDUCE_OPS, TL_ARG_REDUCE_OPS): the enums, names, result dtypes,
// supported dtypes, and one TL_HOST_DEVICE functor per op that the CPU and CUDA kernels both run.
#pragma once

#include <cmath>
#include <cstdint>
#include <iterator>
#include <type_traits>

#include "tensorlet/tensor/convert.h"
#include "tensorlet/tensor/dispatch.h"
#include "tensorlet/tensor/dtype.h"
#include "tensorlet/tensor/host_device.h"

namespace tensorlet {

// How a reduction's result dtype follows from its input dtype (torch's rules).
enum class ReduceOutRule : uint8_t {
  WidenIntegers,  // floating dtypes keep theirs; bool and integers give int64 (torch.sum)
  Input,          // the input's dtype
  Logical,        // bool, except uint8 stays uint8 (torch.all / torch.any keep that quirk)
  Index,          // int64 positions
};

// X(enumerator, public op name, result rule, supported dtypes, empty reductions allowed,
//   value of an empty reduction)
// Supported sets are torch's (CPU and CUDA agree): mean needs a floating dtype, argmax/argmin
// refuse bool; everything else takes every dtype.
#define TL_REDUCE_OPS(X)                                               \
  X(Sum, "tl::sum", WidenIntegers, kAllDTypes, true, 0.0)              \
  X(Prod, "tl::prod", WidenIntegers, kAllDTypes, true, 1.0)            \
  X(Mean, "tl::mean", Input, kFloatingDTypes, true, __builtin_nan("")) \
  X(Max, "tl::max", Input, kAllDTypes, false, 0.0)                     \
  X(Min, "tl::min", Input, kAllDTypes, false, 0.0)                     \
  X(All, "tl::all", Logical, kAllDTypes, true, 1.0)                    \
  X(Any, "tl::any", Logical, kAllDTypes, true, 0.0)
#define TL_ARG_REDUCE_OPS(X)                                 \
  X(ArgMax, "tl::argmax", Index, kNumericDTypes, false, 0.0) \
  X(ArgMin, "tl::argmin", Index, kNumericDTypes, false, 0.0)

#define TL_REDUCE_ENUM(e, name, rule, dtypes, empty_ok, empty) e,
enum class ReduceOp : uint8_t { TL_REDUCE_OPS(TL_REDUCE_ENUM) };
enum class ArgReduceOp : uint8_t { TL_ARG_REDUCE_OPS(TL_REDUCE_ENUM) };
#undef TL_REDUCE_ENUM

#define TL_REDUCE_COUNT(e, name, rule, dtypes, empty_ok, empty) +1
inline constexpr int kNumReduceOps = 0 TL_REDUCE_OPS(TL_REDUCE_COUNT);
inline constexpr int kNumArgReduceOps = 0 TL_ARG_REDUCE_OPS(TL_REDUCE_COUNT);
#undef TL_REDUCE_COUNT

// One row of the list, for an enum value.
struct ReduceOpInfo {
  const char* name;  // "tl::sum": the op kernels name in errors
  ReduceOutRule rule;
  DTypeSet dtypes;
  bool empty_ok;       // false: an empty reduction is an error (max, min, arg ops)
  double empty_value;  // the result of an empty reduction when empty_ok
};

#define TL_REDUCE_INFO(e, name, rule, dtypes, empty_ok, empty) \
  ReduceOpInfo{name, ReduceOutRule::rule, dtypes, empty_ok, empty},
inline constexpr ReduceOpInfo kReduceOpInfo[] = {TL_REDUCE_OPS(TL_REDUCE_INFO)};
inline constexpr ReduceOpInfo kArgReduceOpInfo[] = {TL_ARG_REDUCE_OPS(TL_REDUCE_INFO)};
#undef TL_REDUCE_INFO
static_assert(std::size(kReduceOpInfo) == kNumReduceOps);
static_assert(std::size(kArgReduceOpInfo) == kNumArgReduceOps);

constexpr const ReduceOpInfo& reduce_op_info(ReduceOp op) {
  return kReduceOpInfo[static_cast<int>(op)];
}
constexpr const ReduceOpInfo& reduce_op_info(ArgReduceOp op) {
  return kArgReduceOpInfo[static_cast<int>(op)];
}
constexpr const char* reduce_op_name(ReduceOp op) { return reduce_op_info(op).name; }
constexpr const char* reduce_op_name(ArgReduceOp op) { return reduce_op_info(op).name; }
constexpr DTypeSet reduce_op_dtypes(ReduceOp op) { return reduce_op_info(op).dtypes; }
constexpr DTypeSet reduce_op_dtypes(ArgReduceOp op) { return reduce_op_info(op).dtypes; }

// The result dtype of an op on a supported input dtype.
constexpr DType reduce_out_dtype(ReduceOutRule rule, DType in) {
  switch (rule) {
    case ReduceOutRule::WidenIntegers:
      return is_floating_point(in) ? in : kInt64;
    case ReduceOutRule::Input:
      return in;
    case ReduceOutRule::Logical:
      return in == kUInt8 ? kUInt8 : kBool;
    case ReduceOutRule::Index:
      return kInt64;
  }
  return in;
}
static_assert(reduce_out_dtype(reduce_op_info(ReduceOp::Sum).rule, kInt8) == kInt64);
static_assert(reduce_out_dtype(reduce_op_info(ReduceOp::Sum).rule, kFloat16) == kFloat16);
static_assert(reduce_out_dtype(reduce_op_info(ReduceOp::Any).rule, kUInt8) == kUInt8);

namespace reduce_ops {

// The extreme values of a compute type, as constexpr device code (no std::numeric_limits).
template <typename C>
TL_HOST_DEVICE constexpr C lowest() {
  if constexpr (std::is_floating_point_v<C>)
    return -static_cast<C>(INFINITY);
  else if constexpr (std::is_unsigned_v<C>)
    return C(0);
  else
    return int_min<C>();
}
template <typename C>
TL_HOST_DEVICE constexpr C highest() {
  if constexpr (std::is_floating_point_v<C>)
    return static_cast<C>(INFINITY);
  else if constexpr (std::is_unsigned_v<C>)
    return static_cast<C>(~C(0));
  else
    return static_cast<C>(~int_min<C>());
}

template <typename C>
TL_HOST_DEVICE constexpr bool is_nan(C v) {
  if constexpr (std::is_floating_point_v<C>)
    return v != v;
  else
    return false;
}

// Every functor: In (the element as stored, tensor/convert.h), Acc, Out, identity(), step(acc, in)
// (folds one element), combine(acc, acc) (commutative and associative up to float rounding, so
// lanes, threads and chunks may fold in any fixed tree), finalize(acc, divisor).
// Arg functors step with the element's position too: step(acc, in, position).

// sum, prod, and mean (a sum whose finalize divides by the count): accumulate in acc_t<T> on
// every backend (float for float16/bfloat16, double for float/double, int64 for bool and
// integers, which wrap on overflow as torch's int64 does).
template <typename T, bool kProd>
struct ArithmeticOp {
  using In = Stored<T>;
  using Acc = acc_t<T>;
  using Out = std::conditional_t<is_floating_v<T>, T, int64_t>;
  static constexpr bool kIndexed = false;
  static TL_HOST_DEVICE Acc identity() { return Acc(kProd ? 1 : 0); }
  static TL_HOST_DEVICE Acc combine(Acc a, Acc b) {
    if constexpr (std::is_floating_point_v<Acc>) {
      return kProd ? a * b : a + b;
    } else {
      const auto x = static_cast<uint64_t>(a), y = static_cast<uint64_t>(b);
      return static_cast<int64_t>(kProd ? x * y : x + y);
    }
  }
  static TL_HOST_DEVICE Acc step(Acc a, In v) {
    return combine(a, static_cast<Acc>(from_stored<T>(v)));
  }
  // divisor > 0 turns a floating sum into a mean (divided in double, then rounded once to Out's
  // float type, then to T).
  static TL_HOST_DEVICE Out finalize(Acc a, [[maybe_unused]] double divisor) {
    if constexpr (std::is_floating_point_v<Acc>)
      if (divisor > 0) return convert<Out>(static_cast<double>(a) / divisor);
    return convert<Out>(a);
  }
};
template <typename T>
using SumOp = ArithmeticOp<T, false>;
template <typename T>
using ProdOp = ArithmeticOp<T, true>;

// max / min of a numeric dtype, compared in compute_t<T>; a NaN wins (once held no comparison
// replaces it). Bool max/min are any/all (LogicalOp).
template <typename T, bool kMaxOp>
struct ExtremumOp {
  static_assert(!std::is_same_v<T, bool>, "bool max/min are LogicalOp");
  using In = T;
  using Acc = compute_t<T>;
  using Out = T;
  static constexpr bool kIndexed = false;
  static constexpr bool kMax = kMaxOp;
  static TL_HOST_DEVICE Acc identity() { return kMax ? lowest<Acc>() : highest<Acc>(); }
  static TL_HOST_DEVICE Acc combine(Acc a, Acc b) {
    return ((kMax ? a < b : b < a) || is_nan(b)) ? b : a;
  }
  // The NaN-ignoring half of combine: CPU lanes fold with it and track NaN apart, two selects
  // the compiler vectorizes.
  static TL_HOST_DEVICE Acc combine_ignoring_nan(Acc a, Acc b) {
    return (kMax ? a < b : b < a) ? b : a;
  }
  static TL_HOST_DEVICE Acc step(Acc a, In v) { return combine(a, static_cast<Acc>(v)); }
  static TL_HOST_DEVICE Out finalize(Acc a, double) { return convert<Out>(a); }
};

// all / any: an element is true when it is not zero (NaN is true; a bool is read as its byte).
// Integer and bool inputs run as the unsigned type of their size (the test is on the bits), so
// each size shares one kernel; bool max/min run as any/all.
template <typename T, bool kAll>
struct LogicalOp {
  using In = Stored<T>;
  using Acc = bool;
  using Out = bool;
  static constexpr bool kIndexed = false;
  static TL_HOST_DEVICE Acc identity() { return kAll; }
  static TL_HOST_DEVICE Acc combine(Acc a, Acc b) { return kAll ? (a & b) : (a | b); }
  static TL_HOST_DEVICE Acc step(Acc a, In v) { return combine(a, v != In(0)); }
  static TL_HOST_DEVICE Out finalize(Acc a, double) { return a; }
};

// An arg reduction's running best: its value (compute type) and position; index < 0 is "nothing
// seen yet".
template <typename C>
struct ArgAcc {
  C value;
  int64_t index;
};

// argmax / argmin: the first position of the max/min, or of the first NaN when there is one.
// Ties go to the smaller position, so combine is order-free.
template <typename T, bool kMaxOp>
struct ArgOp {
  using In = Stored<T>;
  using Value = compute_t<T>;
  using Acc = ArgAcc<Value>;
  using Out = int64_t;
  using Values = ExtremumOp<T, kMaxOp>;  // the value-only reduction with the same order
  static constexpr bool kIndexed = true;
  static constexpr bool kMax = kMaxOp;
  static TL_HOST_DEVICE Acc identity() { return {Value(0), -1}; }
  // Whether v comes before best in the op's order (a NaN before everything else).
  static TL_HOST_DEVICE bool better(Value v, Value best) {
    if (is_nan(best)) return false;
    if (is_nan(v)) return true;
    return kMax ? best < v : v < best;
  }
  static TL_HOST_DEVICE Acc combine(Acc a, Acc b) {
    if (b.index < 0) return a;
    if (a.index < 0) return b;
    if (better(b.value, a.value)) return b;
    if (better(a.value, b.value)) return a;
    return a.index <= b.index ? a : b;  // equal, or both NaN
  }
  static TL_HOST_DEVICE Acc step(Acc a, In v, int64_t position) {
    return combine(a, Acc{static_cast<Value>(from_stored<T>(v)), position});
  }
  static TL_HOST_DEVICE Out finalize(Acc a, double) { return a.index; }
};

// The unsigned type of T's size: all/any test bits, so integer dtypes of one size share code.
template <typename T>
using BitsOf =
    std::conditional_t<sizeof(T) == 1, uint8_t,
                       std::conditional_t<sizeof(T) == 2, uint16_t,
                                          std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>>;
template <typename T, bool kAll>
using LogicalOf =
    std::conditional_t<is_floating_v<T>, LogicalOp<T, kAll>, LogicalOp<BitsOf<T>, kAll>>;

// Whether a kernel of functor F may write an output tensor of dtype d: its own dtype, or uint8
// for the bytes of a bool result (all/any of uint8).
template <typename F>
constexpr bool writes_dtype(DType d) {
  using Out = typename F::Out;
  return d == dtype_of_v<Out> || (std::is_same_v<Out, bool> && d == kUInt8);
}

}  // namespace reduce_ops

// The one reduce dispatcher of both backends: calls f.template operator()<F>() with the functor
// that runs `op` on `dtype`, instantiated only for the op's supported dtypes (DTypeError naming
// the op otherwise). Mean gets SumOp: the caller passes the count as finalize's divisor.
static_assert(kNumReduceOps == 7 && kNumArgReduceOps == 2,
              "dispatch_reduce / dispatch_arg_reduce need a case for every op of the list");
template <typename Fn>
void dispatch_reduce(ReduceOp op, DType dtype, Fn&& f) {
  using namespace reduce_ops;
  const char* name = reduce_op_name(op);
  switch (op) {
    case ReduceOp::Sum:
      return dispatch_dtype<reduce_op_dtypes(ReduceOp::Sum)>(
          dtype, [&]<typename T>() { f.template operator()<SumOp<T>>(); }, name);
    case ReduceOp::Prod:
      return dispatch_dtype<reduce_op_dtypes(ReduceOp::Prod)>(
          dtype, [&]<typename T>() { f.template operator()<ProdOp<T>>(); }, name);
    case ReduceOp::Mean:
      return dispatch_dtype<reduce_op_dtypes(ReduceOp::Mean)>(
          dtype, [&]<typename T>() { f.template operator()<SumOp<T>>(); }, name);
    case ReduceOp::Max:
      return dispatch_dtype<reduce_op_dtypes(ReduceOp::Max)>(
          dtype,
          [&]<typename T>() {
            if constexpr (std::is_same_v<T, bool>)
              f.template operator()<LogicalOf<T, false>>();
            else
              f.template operator()<ExtremumOp<T, true>>();
          },
          name);
    case ReduceOp::Min:
      return dispatch_dtype<reduce_op_dtypes(ReduceOp::Min)>(
          dtype,
          [&]<typename T>() {
            if constexpr (std::is_same_v<T, bool>)
              f.template operator()<LogicalOf<T, true>>();
            else
              f.template operator()<ExtremumOp<T, false>>();
          },
          name);
    case ReduceOp::All:
      return dispatch_dtype<reduce_op_dtypes(ReduceOp::All)>(
          dtype, [&]<typename T>() { f.template operator()<LogicalOf<T, true>>(); }, name);
    case ReduceOp::Any:
      return dispatch_dtype<reduce_op_dtypes(ReduceOp::Any)>(
          dtype, [&]<typename T>() { f.template operator()<LogicalOf<T, false>>(); }, name);
  }
}

template <typename Fn>
void dispatch_arg_reduce(ArgReduceOp op, DType dtype, Fn&& f) {
  using namespace reduce_ops;
  const char* name = reduce_op_name(op);
  switch (op) {
    case ArgReduceOp::ArgMax:
      return dispatch_dtype<reduce_op_dtypes(ArgReduceOp::ArgMax)>(
          dtype, [&]<typename T>() { f.template operator()<ArgOp<T, true>>(); }, name);
    case ArgReduceOp::ArgMin:
      return dispatch_dtype<reduce_op_dtypes(ArgReduceOp::ArgMin)>(
          dtype, [&]<typename T>() { f.template operator()<ArgOp<T, false>>(); }, name);
  }
}

}  // namespace tensorlet

// Elementwise op front-ends: validation, torch.result_type promotion, broadcasting and dispatch
// to the backend's unary/binary/where kernels, plus Tensor's in-place add_/sub_/mul_/div_.
#include "tensorlet/ops/elementwise.h"
#include "tensorlet/tensor/autocast.h"

#include <optional>

#include "tensorlet/autograd/derivatives.h"
#include "tensorlet/autograd/inplace.h"
#include "tensorlet/backends/backend.h"
#include "tensorlet/tensor/op_scope.h"
#include "tensorlet/tensor/broadcast.h"
#include "tensorlet/tensor/dispatch.h"
#include "tensorlet/tensor/scalar_check.h"
#include "tensorlet/ops/host_scalar.h"
#include "tensorlet/ops/out_arg.h"
#include "tensorlet/ops/reduce.h"

namespace tensorlet {
namespace {

// An op input: a tensor, or a Python-style scalar (tensor == nullptr).
struct Operand {
  const Tensor* tensor = nullptr;
  Scalar scalar;
};
Operand of(const Tensor& t) { return {&t, {}}; }
Operand of(Scalar s) { return {nullptr, s}; }

// torch.result_type: operands fall into three priority categories (dimensioned tensors, 0-dim
// tensors, scalars) that promote among themselves; a lower category only matters when it is of
// a higher kind than the category above it (or that one is bool).
class Promotion {
 public:
  void add(const Tensor& t) { merge(t.dim() > 0 ? dim_ : zero_, t.dtype()); }
  void add(Scalar s) { merge(wrapped_, default_dtype_for(s.kind())); }
  void add(const Operand& x) {
    if (x.tensor)
      add(*x.tensor);
    else
      add(x.scalar);
  }
  DType result() const { return combine(dim_, combine(zero_, wrapped_)).value_or(kFloat32); }

 private:
  static void merge(std::optional<DType>& slot, DType d) {
    slot = slot ? promote_types(*slot, d) : d;
  }
  static std::optional<DType> combine(std::optional<DType> higher, std::optional<DType> lower) {
    if (!higher) return lower;
    if (!lower || is_floating_point(*higher)) return higher;
    if (*higher == kBool || is_floating_point(*lower)) return promote_types(*higher, *lower);
    return higher;
  }
  std::optional<DType> dim_, zero_, wrapped_;
};

DType result_type_of(const Operand& a, const Operand& b) {
  // Same-dtype tensors are the common case and need no category bookkeeping.
  if (a.tensor && b.tensor && a.tensor->dtype() == b.tensor->dtype()) return a.tensor->dtype();
  Promotion p;
  p.add(a);
  p.add(b);
  return p.result();
}

bool is_bool(const Operand& x) {
  return x.tensor ? x.tensor->dtype() == kBool : x.scalar.is_bool();
}

void check_device(const char* op, const Tensor& a, const Tensor& b) {
  if (!(a.device() == b.device()))
    fail<DeviceError>(op, "expected all tensors to be on the same device, but found ", a.device(),
                      " and ", b.device());
}

// Checks that tensor operands are defined and on one device, or one of them a 0-dim CPU tensor
// beside a device tensor (read on the host as a scalar, as torch: ops/host_scalar.h); returns the
// device the op runs on.
Device common_device(const char* op, const Operand& a, const Operand& b) {
  if (a.tensor) check_defined(*a.tensor, op);
  if (b.tensor) check_defined(*b.tensor, op);
  const Device device = common_device_of({a.tensor, b.tensor});
  check_inputs_on(op, device, {a.tensor, b.tensor});
  return device;
}

Shape broadcast_of(const char* op, const Operand& a, const Operand& b) {
  if (!a.tensor) return b.tensor->shape();
  if (!b.tensor) return a.tensor->shape();
  return broadcast_shapes(a.tensor->shape(), b.tensor->shape(), op);
}

// A tensor operand as a `dtype` tensor viewed at `shape` (stride 0 on broadcast dims). Returns the
// caller's tensor itself when nothing changes, so the common path touches no refcount.
const Tensor& prepare(const Tensor& t, DType dtype, const Shape& shape, Tensor& holder) {
  if (t.dtype() == dtype && t.shape() == shape) return t;
  holder = t.to(dtype);
  if (holder.shape() != shape) holder = holder.expand(shape);
  return holder;
}

// An operand of an op on `device` as a kernel input of `dtype`: a tensor as above; a scalar
// converted to `dtype` here, once, and passed by value (as PyTorch's wrapped numbers): no tensor,
// no allocation, and for a device op no host memory the kernel would have to know about. A 0-dim
// CPU tensor beside a device op goes the same way, its value read on the host now (torch's CPU
// scalars: the value is taken from the tensor's own dtype, as its scalar_value does).
// Backends read a scalar as a value of the dtype's compute type (compute_t: float for the half
// types); `keep_precision` leaves a half op's scalar unrounded (scalar_in_compute_type).
ElementwiseArg prepare(const Operand& x, DType dtype, Device device, const Shape& shape,
                       Tensor& holder, bool keep_precision = false) {
  if (x.tensor && !is_host_scalar(*x.tensor, device))
    return prepare(*x.tensor, dtype, shape, holder);
  const Scalar value = x.tensor ? host_scalar_value(*x.tensor) : x.scalar;
  return ElementwiseArg(dispatch_dtype(dtype, [&]<typename T>() {
    if (keep_precision) return Scalar(value.to<compute_t<T>>());
    return Scalar(value.to<T>());
  }));
}

[[noreturn]] void unsupported(const char* name, DType dtype) {
  fail<DTypeError>(name, "not supported for dtype ", dtype);
}

// The dtype a binary op computes in, after rejecting what PyTorch rejects: dtypes outside the op's
// supported set (backends/math/binary_ops.h), and a few operand rules of its own.
DType compute_dtype(BinaryOp op, const char* name, const Operand& a, const Operand& b) {
  DType promoted = result_type_of(a, b);
  // torch refuses a bool operand of sub even where it promotes to a number (mask - 1).
  if (op == BinaryOp::Sub && (is_bool(a) || is_bool(b)))
    fail<DTypeError>(name,
                     "subtraction with a bool tensor is not supported; to invert a mask use ~ or ",
                     "logical_not()");
  if (!supported_dtypes(op).contains(promoted)) unsupported(name, promoted);
  if (op == BinaryOp::Pow && a.tensor && is_integral(a.tensor->dtype(), true) && !b.tensor &&
      b.scalar.is_integral() && b.scalar.to<int64_t>() < 0)
    fail<DTypeError>(name, "Integers to negative integer powers are not allowed (exponent ",
                     b.scalar.to<int64_t>(), ")");
  return compute_dtype_for(output_rule(op), promoted);
}

// An integer fmod / remainder / floor_divide by zero raises ZeroDivisionError, as torch's CPU
// kernels do, on every device. A number divisor is checked here; a tensor divisor is scanned here
// on the CPU, while a backend that checks data in its kernels (CUDA) finds a zero divisor there and
// raises at the host's next wait for the device, so the call never stalls (torch's CUDA kernels
// return an unspecified value). The divisor is checked as the kernel will see it: converted to
// the compute dtype (256 is 0 in int8). An empty result divides nothing, so raises nothing
// (torch's kernel never runs).
void check_integer_divisor(BinaryOp op, const char* name, DType compute, const ElementwiseArg& b,
                           const Shape& shape) {
  if (!(op == BinaryOp::Fmod || op == BinaryOp::Remainder || op == BinaryOp::FloorDivide) ||
      !is_integral(compute) || shape.numel() == 0)
    return;
  if (b.tensor && backend_for(b.tensor->device()).checks_data_in_kernels()) return;
  const bool zero = b.is_scalar() ? b.scalar.to<int64_t>() == 0 : !all(*b.tensor).item<bool>();
  if (zero) fail<Error>(name, "ZeroDivisionError: integer division or modulo by zero");
}

// out= forms are not differentiable, as torch's: refused when an input requires grad.
[[noreturn]] void no_out_with_grad(const char* name) {
  fail<Error>(name,
              "functions with out=... arguments don't support automatic differentiation, "
              "but one of the arguments requires grad.");
}

// op(a, b) into a new tensor, or with `into` (the out= forms) into that tensor.
Tensor binary_op(BinaryOp op, const Operand& a, const Operand& b, Tensor* into = nullptr) {
  const char* name = binary_op_name(op);
  profiler::OpScope scope(name);
  // When recording, the op's own conversions and broadcasts stay below autograd: its one node
  // has the whole op's derivative.
  const bool record = autograd::should_record({a.tensor, b.tensor});
  std::optional<NoGradGuard> below;
  if (record) below.emplace();
  scope.inputs({a.tensor, b.tensor});
  Device device = common_device(name, a, b);
  DType compute = compute_dtype(op, name, a, b);
  // Scalars wrap into an integer dtype (x + (1 << 40) on int32, as torch), except pow's exponent.
  if (op == BinaryOp::Pow && !b.tensor && is_integral(compute))
    check_scalar_fits(name, "exponent", b.scalar, compute);
  Shape shape = broadcast_of(name, a, b);
  Tensor ha, hb;
  const bool keep = scalar_in_compute_type(op);
  const ElementwiseArg ta = prepare(a, compute, device, shape, ha, keep);
  const ElementwiseArg tb = prepare(b, compute, device, shape, hb, keep);
  check_integer_divisor(op, name, compute, tb, shape);
  const DType dtype = output_dtype_for(output_rule(op), compute);
  if (into && record) no_out_with_grad(name);
  Tensor out = into ? out_target(name, *into, shape, dtype, device, {a.tensor, b.tensor})
                    : make_tensor(shape, dtype, device);
  if (out.numel() > 0) backend_for(device).binary(op, ta, tb, out);
  if (record)
    autograd::record_binary(op, a.tensor ? *a.tensor : Tensor(), b.tensor ? *b.tensor : Tensor(),
                            out, 1, a.tensor ? 0 : a.scalar.to<double>(),
                            b.tensor ? 0 : b.scalar.to<double>());
  return into ? finish_out(*into, out) : out;
}

// torch.add / torch.sub's alpha, checked against the dtype they compute in as torch does, and
// converted for the kernel: sub's alpha negated (a - alpha b = a + (-alpha) b).
Scalar kernel_alpha(BinaryOp op, const char* name, DType compute, Scalar alpha) {
  if (compute == kBool && !alpha.is_bool())
    fail<DTypeError>(name, "Boolean alpha only supported for Boolean results");
  if (is_integral(compute) && alpha.is_floating_point())
    fail<DTypeError>(name,
                     "For integral input tensors, argument alpha must not be a floating point "
                     "number");
  if (is_integral(compute)) check_scalar_fits(name, "alpha", alpha, compute);
  if (op != BinaryOp::Sub) return alpha;
  if (alpha.is_floating_point()) return Scalar(-alpha.to<double>());
  return Scalar(static_cast<int64_t>(uint64_t{0} - static_cast<uint64_t>(alpha.to<int64_t>())));
}

// alpha * number, in the kind the two share (a product of numbers needs no kernel): add(x, 2, 3)
// is x + 6.
Scalar scaled_number(Scalar alpha, Scalar number) {
  if (alpha.is_floating_point() || number.is_floating_point())
    return Scalar(alpha.to<double>() * number.to<double>());
  if (alpha.is_bool() && number.is_bool()) return Scalar(alpha.to<bool>() && number.to<bool>());
  return Scalar(static_cast<int64_t>(static_cast<uint64_t>(alpha.to<int64_t>()) *
                                     static_cast<uint64_t>(number.to<int64_t>())));
}

bool is_one(Scalar alpha) { return alpha.to<double>() == 1; }

// add / sub with alpha: a op alpha * b in one kernel (rounded once); a number b is scaled here.
Tensor scaled_op(BinaryOp op, const Tensor& a, const Operand& b, Scalar alpha) {
  if (is_one(alpha) && !alpha.is_floating_point()) return binary_op(op, of(a), b);
  if (!b.tensor) {
    {
      const char* name = binary_op_name(op);
      check_defined(a, name);
      kernel_alpha(op, name, compute_dtype(op, name, of(a), b), alpha);
    }
    return binary_op(op, of(a), of(scaled_number(alpha, b.scalar)));
  }
  const char* name = binary_op_name(op);
  profiler::OpScope scope(name);
  scope.inputs({&a, b.tensor});
  const bool record = autograd::should_record({&a, b.tensor});
  std::optional<NoGradGuard> below;
  if (record) below.emplace();
  Device device = common_device(name, of(a), b);
  const DType compute = compute_dtype(op, name, of(a), b);
  const Scalar scale = kernel_alpha(op, name, compute, alpha);
  Shape shape = broadcast_of(name, of(a), b);
  // add_scaled reads tensors: a 0-dim CPU operand of a device op is filled into a device one.
  Tensor da, db, ha, hb;
  if (is_host_scalar(a, device)) da = host_scalar_on(a, device, compute);
  if (is_host_scalar(*b.tensor, device)) db = host_scalar_on(*b.tensor, device, compute);
  const Tensor& ta = prepare(da.defined() ? da : a, compute, shape, ha);
  const Tensor& tb = prepare(db.defined() ? db : *b.tensor, compute, shape, hb);
  Tensor out = make_tensor(shape, compute, device);
  if (out.numel() > 0) backend_for(device).add_scaled(ta, tb, scale, out);
  if (record) autograd::record_binary(op, a, *b.tensor, out, alpha.to<double>());
  return out;
}

// self = op(self, other), written through the backend straight into self's (possibly strided)
// elements; with alpha (add_ / sub_), self = self op alpha * other.
Tensor& inplace_op(BinaryOp op, const char* name, Tensor& self, const Operand& given,
                   const Scalar* alpha = nullptr) {
  profiler::OpScope scope(name);
  scope.inputs({&self, given.tensor});
  check_defined(self, name);
  // self is the output, so it must be on the device; other may be a 0-dim CPU tensor beside it
  // (read on the host, as torch), never the reverse.
  if (given.tensor) check_defined(*given.tensor, name);
  const Device device = self.device();
  check_inputs_on(name, device, {given.tensor});
  const Operand me = of(self);
  DType compute = compute_dtype(op, name, me, given);
  Operand other = given;
  Scalar scale;
  if (alpha) {
    scale = kernel_alpha(op, name, compute, *alpha);
    // A number is scaled here: self op (alpha * number) in the plain kernel, under this one op
    // scope (a second call of inplace_op would record the op twice).
    if (!given.tensor) {
      other = of(scaled_number(*alpha, given.scalar));
      compute = compute_dtype(op, name, me, other);
      alpha = nullptr;
    }
  }
  if (!can_cast(compute, self.dtype()))
    fail<DTypeError>(name, "result type ", compute, " can't be cast to the desired output type ",
                     self.dtype());
  const Shape& shape = self.shape();
  if (other.tensor && other.tensor->shape() != shape) {
    Shape common = broadcast_shapes(shape, other.tensor->shape(), name);
    if (common != shape)
      fail<ShapeError>(name, "output with shape ", shape, " doesn't match the broadcast shape ",
                       common);
  }
  // Recorded by autograd: computed out of place (one node), written back, self rebased.
  if (autograd::should_record({&self, given.tensor})) {
    check_writable(name, self, /*differentiable=*/true);
    const Tensor result =
        alpha ? scaled_op(op, self, given, *alpha) : binary_op(op, of(self), other);
    autograd::commit_inplace(self, result);
    return self;
  }
  check_writable(name, self);
  if (self.numel() == 0) return self;

  // `other` may share self's memory. Read at the same index it is harmless; any other geometry
  // would read elements this op has already overwritten, so it gets its own copy first.
  Tensor hb;
  const Tensor* src = nullptr;
  if (other.tensor) {
    const Tensor& o = *other.tensor;
    if (alpha && is_host_scalar(o, device))  // add_scaled reads tensors: filled on the device
      hb = host_scalar_on(o, device, compute);
    else if (o.dtype() == compute && o.storage() == self.storage() && o.numel() > 0 &&
             !(o.data_ptr() == self.data_ptr() && o.shape() == shape &&
               o.strides() == self.strides()))
      hb = o.clone();
    src = hb.defined() ? &hb : &o;
  }
  Tensor hb2;
  const ElementwiseArg tb =
      prepare(src ? of(*src) : other, compute, device, shape, hb2, scalar_in_compute_type(op));

  Backend& backend = backend_for(device);
  auto run = [&](const Tensor& in, const Tensor& out) {
    if (alpha)
      backend.add_scaled(in, *tb.tensor, scale, out);
    else
      backend.binary(op, in, tb, out);
  };
  if (compute == self.dtype()) {
    run(self, self);
  } else {
    // A wider compute dtype (int32 self += int64 tensor) computes aside and casts back.
    Tensor tmp = make_tensor(shape, compute, device);
    run(self.to(compute), tmp);
    backend.copy(tmp, self);
  }
  return self;
}

Tensor unary_op(UnaryOp op, const Tensor& a, Tensor* into);

// self = op(self), element by element in place: each element is read before it is written at the
// same index, so the backend's unary kernel may take self as its input and its output.
Tensor& inplace_unary(UnaryOp op, const char* name, Tensor& self) {
  profiler::OpScope scope(name);
  scope.inputs({&self});
  check_defined(self, name);
  if (!supported_dtypes(op).contains(self.dtype())) unsupported(name, self.dtype());
  const OutputRule rule = output_rule(op);
  const DType dtype = compute_dtype_for(rule, self.dtype());
  const DType result = output_dtype_for(rule, dtype);
  if (!can_cast(result, self.dtype()))
    fail<DTypeError>(name, "result type ", result, " can't be cast to the desired output type ",
                     self.dtype());
  if (autograd::should_record({&self})) {  // as inplace_op
    check_writable(name, self, /*differentiable=*/true);
    const Tensor out = unary_op(op, self, nullptr);
    autograd::commit_inplace(self, out);
    return self;
  }
  check_writable(name, self);
  if (self.numel() == 0) return self;
  Backend& backend = backend_for(self.device());
  if (dtype == self.dtype() && result == self.dtype()) {
    backend.unary(op, self, self);
  } else {  // logical_not_ of a float tensor: computed aside, cast back
    Tensor tmp = make_tensor(self.shape(), result, self.device());
    backend.unary(op, dtype == self.dtype() ? self : self.to(dtype), tmp);
    backend.copy(tmp, self);
  }
  return self;
}

// op(a) into a new tensor, or with `into` (the out= forms) into that tensor.
// torch.autocast's CUDA float32 list among the unary ops: where float16/bfloat16 loses the most.
bool autocast_to_float32(UnaryOp op) {
  switch (op) {
    case UnaryOp::Exp:
    case UnaryOp::Expm1:
    case UnaryOp::Log:
    case UnaryOp::Log1p:
    case UnaryOp::Log2:
    case UnaryOp::Log10:
    case UnaryOp::Reciprocal:
    case UnaryOp::Rsqrt:
    case UnaryOp::Tan:
    case UnaryOp::Sinh:
    case UnaryOp::Cosh:
    case UnaryOp::Asin:
    case UnaryOp::Acos:
    case UnaryOp::Softplus:
      return true;
    default:
      return false;
  }
}

Tensor unary_op(UnaryOp op, const Tensor& a, Tensor* into = nullptr) {
  if (!into && autocast_detail::applies_cuda_float32(a) && is_reduced_float(a.dtype()) &&
      autocast_to_float32(op)) [[unlikely]] {
    const Tensor f = autocast_detail::to_float32(a);
    autocast_detail::InsideOp inside;
    return unary_op(op, f);
  }
  const char* name = unary_op_name(op);
  profiler::OpScope scope(name);
  const bool record = autograd::should_record({&a});
  std::optional<NoGradGuard> below;
  if (record) below.emplace();
  scope.inputs({&a});
  check_defined(a, name);
  if (!supported_dtypes(op).contains(a.dtype())) unsupported(name, a.dtype());
  const OutputRule rule = output_rule(op);
  const DType dtype = compute_dtype_for(rule, a.dtype());
  Tensor holder;
  const Tensor& in = dtype == a.dtype() ? a : (holder = a.to(dtype));
  const DType out_dtype = output_dtype_for(rule, dtype);
  if (into && record) no_out_with_grad(name);
  Tensor out = into ? out_target(name, *into, a.shape(), out_dtype, a.device(), {&a})
                    : make_tensor(a.shape(), out_dtype, a.device());
  if (out.numel() > 0) backend_for(a.device()).unary(op, in, out);
  if (record) autograd::record_unary(op, a, out);
  return into ? finish_out(*into, out) : out;
}

Tensor where_op(const Tensor& cond, const Operand& a, const Operand& b) {
  const char* name = "tl::where";
  profiler::OpScope scope(name);
  scope.inputs({&cond, a.tensor, b.tensor});
  const bool record = autograd::should_record({a.tensor, b.tensor});
  std::optional<NoGradGuard> below;
  if (record) below.emplace();
  check_defined(cond, name);
  if (cond.dtype() != kBool)
    fail<DTypeError>(name, "expected a bool condition tensor, got dtype ", cond.dtype());
  for (const Operand* x : {&a, &b})
    if (x->tensor) check_defined(*x->tensor, name);
  // Any 0-dim CPU input beside a device one is read on the host (torch's where moves such inputs
  // to the device); promotion still counts it as a 0-dim tensor.
  const Device device = common_device_of({&cond, a.tensor, b.tensor});
  check_inputs_on(name, device, {&cond, a.tensor, b.tensor});
  DType dtype = result_type_of(a, b);
  // A scalar that does not fit the result dtype is refused, as torch (where(c, int32, 1 << 40)).
  if (!a.tensor) check_scalar_fits(name, "scalar 'input'", a.scalar, dtype);
  if (!b.tensor) check_scalar_fits(name, "scalar 'other'", b.scalar, dtype);
  Shape shape = cond.shape();
  if (a.tensor) shape = broadcast_shapes(shape, a.tensor->shape(), name);
  if (b.tensor) shape = broadcast_shapes(shape, b.tensor->shape(), name);
  Tensor hc, ha, hb;
  const ElementwiseArg ta = prepare(a, dtype, device, shape, ha);
  const ElementwiseArg tb = prepare(b, dtype, device, shape, hb);
  Tensor out = make_tensor(shape, dtype, device);
  if (out.numel() == 0) return out;
  Backend& backend = backend_for(device);
  // The kernel reads its condition from memory: a 0-dim CPU one is filled into a device one.
  Tensor device_cond;
  if (is_host_scalar(cond, device)) device_cond = host_scalar_on(cond, device, kBool);
  const Tensor& tc = prepare(device_cond.defined() ? device_cond : cond, kBool, shape, hc);
  backend.where(tc, ta, tb, out);
  if (record)
    autograd::record_where(cond, a.tensor ? *a.tensor : Tensor(), b.tensor ? *b.tensor : Tensor(),
                           out);
  return out;
}

// masked_fill: `value` where mask is true, a elsewhere, in a's dtype (value converted to it, as
// torch); with `into` (masked_fill_, into == &a) written into a, whose shape the mask must
// broadcast to.
Tensor masked_fill_op(const Tensor& a, const Tensor& mask, const Operand& value,
                      Tensor* into = nullptr) {
  const char* name = into ? "tl::masked_fill_" : "tl::masked_fill";
  profiler::OpScope scope(name);
  scope.inputs({&a, &mask, value.tensor});
  // In a graph: computed below autograd, one MaskedFillBackward node (the value tensor's gradient
  // is the sum over the filled places). In place with a value in a graph: not differentiable yet.
  const bool record = !into && autograd::should_record({&a, value.tensor});
  if (into && autograd::should_record({value.tensor})) autograd::no_derivative(name);
  std::optional<NoGradGuard> below;
  if (record) below.emplace();
  check_defined(a, name);
  check_defined(mask, name);
  if (mask.dtype() != kBool)
    fail<DTypeError>(name, "only supports boolean masks, but got mask with dtype ", mask.dtype());
  check_device(name, a, mask);
  Device device = a.device();
  Shape shape = broadcast_shapes(a.shape(), mask.shape(), name);
  if (into && shape != a.shape())
    fail<ShapeError>(name, "mask of shape ", mask.shape(), " does not broadcast to the shape ",
                     a.shape(), " of the tensor written");
  if (into) check_writable(name, a);
  Tensor hc, ha;
  Scalar number = value.scalar;
  if (value.tensor) {
    const Tensor& v = *value.tensor;
    check_defined(v, name);
    if (v.dim() != 0)
      fail<ShapeError>(name, "only supports a 0-dimensional value tensor, but got tensor with ",
                       v.dim(), " dimension(s)");
    // torch reads the value with item() and fills with that number: a device value is waited for,
    // a CPU one is read on the host (no wait, no host-to-device copy, so a graph capture may run
    // it). Either device may hold it.
    number = v.is_cpu()
                 ? host_scalar_value(v)
                 : dispatch_dtype(v.dtype(), [&]<typename T>() { return Scalar(v.item<T>()); });
  }
  // A value that does not fit a's dtype is refused, as torch's checked conversion.
  check_scalar_fits(name, "value", number, a.dtype());
  const ElementwiseArg fill(
      dispatch_dtype(a.dtype(), [&]<typename T>() { return Scalar(number.to<T>()); }));
  const Tensor& tc = prepare(mask, kBool, shape, hc);
  const Tensor& ta = prepare(a, a.dtype(), shape, ha);
  Tensor out = into ? *into : make_tensor(shape, a.dtype(), device);
  if (out.numel() > 0) backend_for(device).where(tc, fill, ta, out);
  below.reset();
  if (record) autograd::record_masked(0, a, mask, value.tensor, out);
  return out;
}

// A clamp bound as given, or nullptr for a scalar bound beyond an integer dtype's range on the side
// where it clamps nothing (max = 1 << 40 on int32), as torch; a scalar bound out of range on the
// other side, or beyond float32's, is refused rather than wrapped.
const Operand* clamp_bound(const char* name, const char* what, const Operand* x, DType dtype,
                           bool is_max) {
  if (!x || x->tensor || x->scalar.fits(dtype)) return x;
  if (is_integral(dtype) && x->scalar.is_integral() && (x->scalar.to<int64_t>() > 0) == is_max)
    return nullptr;
  fail<DTypeError>(name, what, " value ", x->scalar, " is outside the range of ", dtype);
}

// clamp = minimum(maximum(a, lo), hi): two passes, the second in place on the output, which is
// what makes min > max give max everywhere and lets NaN propagate as torch.clamp does.
// clamp(a, lo, hi) into a new tensor, or, with `into` (clamp_: into == &a), into that tensor,
// which must hold the result's shape and a dtype the result casts to.
Tensor clamp_op(const Tensor& a, const Operand* lo, const Operand* hi, Tensor* into = nullptr) {
  const char* name = into ? "tl::clamp_" : "tl::clamp";
  profiler::OpScope scope(name);
  scope.inputs({&a, lo ? lo->tensor : nullptr, hi ? hi->tensor : nullptr});
  check_defined(a, name);
  const bool record =
      !into && autograd::should_record({&a, lo ? lo->tensor : nullptr, hi ? hi->tensor : nullptr});
  std::optional<NoGradGuard> below;
  if (record) below.emplace();
  if (!lo && !hi) fail<ShapeError>(name, "at least one of 'min' or 'max' must be given");
  Device device = a.device();
  Promotion promotion;
  promotion.add(a);
  Shape shape = a.shape();
  for (const Operand* x : {lo, hi}) {
    if (!x) continue;
    if (x->tensor) check_defined(*x->tensor, name);  // before promotion reads its dtype
    promotion.add(*x);
    if (!x->tensor) continue;
    check_device(name, a, *x->tensor);
    shape = broadcast_shapes(shape, x->tensor->shape(), name);
  }
  DType dtype = promotion.result();
  // torch refuses clamp only when it would compute in bool (bool input and bool bounds); a bool
  // input with number bounds is promoted.
  if (dtype == kBool)
    fail<DTypeError>(name, "not supported when the input and the bounds are all bool");
  lo = clamp_bound(name, "min", lo, dtype, false);
  hi = clamp_bound(name, "max", hi, dtype, true);
  if (into) {
    if (!can_cast(dtype, into->dtype()))
      fail<DTypeError>(name, "result type ", dtype, " can't be cast to the desired output type ",
                       into->dtype());
    if (shape != into->shape())
      fail<ShapeError>(name, "output with shape ", into->shape(),
                       " doesn't match the broadcast shape ", shape);
    check_writable(name, *into);
  }
  Tensor ha, hlo, hhi;
  const Tensor& ta = prepare(a, dtype, shape, ha);
  // In place in the result's dtype, element by element at the same index; a wider result
  // (int32 clamped by an int64 tensor) is computed aside and cast back.
  const bool direct = into && into->dtype() == dtype;
  Tensor out = direct ? *into : make_tensor(shape, dtype, device);
  if (out.numel() == 0) return into ? *into : out;
  Backend& backend = backend_for(device);
  if (!lo && !hi && !(direct && &ta == into)) backend.copy(ta, out);
  const Tensor* first = &ta;
  if (lo) {
    backend.binary(BinaryOp::Maximum, ta, prepare(*lo, dtype, device, shape, hlo), out);
    first = &out;
  }
  if (hi) backend.binary(BinaryOp::Minimum, *first, prepare(*hi, dtype, device, shape, hhi), out);
  if (into && !direct) backend.copy(out, *into);
  if (record && ((lo && lo->tensor) || (hi && hi->tensor)))
    autograd::record_clamp_tensors(a, lo ? lo->tensor : nullptr, hi ? hi->tensor : nullptr, out);
  else if (record)
    autograd::record_clamp(a, out);
  return into ? *into : out;
}

}  // namespace

// ---- binary ops in their three forms ----

// Generated from the list (backends/math/binary_ops.h).
#define TL_DEFINE_BINARY(e, name, rule, dtypes, Fn)                                              \
  Tensor name(const Tensor& a, const Tensor& b) { return binary_op(BinaryOp::e, of(a), of(b)); } \
  Tensor name(const Tensor& a, Scalar b) { return binary_op(BinaryOp::e, of(a), of(b)); }        \
  Tensor name(Scalar a, const Tensor& b) { return binary_op(BinaryOp::e, of(a), of(b)); }
TL_BINARY_OPS(TL_DEFINE_BINARY)
#undef TL_DEFINE_BINARY

// The out= forms: tl::add_out(out, a, b) writes into out (an empty one is resized).
#define TL_DEFINE_BINARY_OUT(e, name, rule, dtypes, Fn)               \
  Tensor& name##_out(Tensor& out, const Tensor& a, const Tensor& b) { \
    binary_op(BinaryOp::e, of(a), of(b), &out);                       \
    return out;                                                       \
  }                                                                   \
  Tensor& name##_out(Tensor& out, const Tensor& a, Scalar b) {        \
    binary_op(BinaryOp::e, of(a), of(b), &out);                       \
    return out;                                                       \
  }
TL_BINARY_OPS(TL_DEFINE_BINARY_OUT)
#undef TL_DEFINE_BINARY_OUT

// ---- unary ops ----

// Generated from the lists (backends/math/unary_ops.h): a math op added there needs its method and
// in-place method declared in tensor/tensor.h, a test op its method, or this does not compile.
#define TL_DEFINE_UNARY_MATH(e, name, rule, dtypes, Fn)               \
  Tensor name(const Tensor& a) { return unary_op(UnaryOp::e, a); }    \
  Tensor Tensor::name() const { return unary_op(UnaryOp::e, *this); } \
  Tensor& Tensor::name##_() { return inplace_unary(UnaryOp::e, "tl::" #name "_", *this); }
TL_UNARY_MATH_OPS(TL_DEFINE_UNARY_MATH)
#undef TL_DEFINE_UNARY_MATH

#define TL_DEFINE_UNARY_OUT(e, name, rule, dtypes, Fn) \
  Tensor& name##_out(Tensor& out, const Tensor& a) {   \
    unary_op(UnaryOp::e, a, &out);                     \
    return out;                                        \
  }
TL_UNARY_MATH_OPS(TL_DEFINE_UNARY_OUT)
TL_UNARY_TEST_OPS(TL_DEFINE_UNARY_OUT)
#undef TL_DEFINE_UNARY_OUT

#define TL_DEFINE_UNARY_TEST(e, name, rule, dtypes, Fn)            \
  Tensor name(const Tensor& a) { return unary_op(UnaryOp::e, a); } \
  Tensor Tensor::name() const { return unary_op(UnaryOp::e, *this); }
TL_UNARY_TEST_OPS(TL_DEFINE_UNARY_TEST)
#undef TL_DEFINE_UNARY_TEST

// square of bool is int64, as torch (bool ** 2 promotes to the exponent's int64): the list's row
// takes bool only so that the generated tables (parity, bad inputs) see it accepted.
Tensor square(const Tensor& a) {
  if (a.defined() && a.dtype() == kBool) return unary_op(UnaryOp::Square, a.to(kInt64));
  return unary_op(UnaryOp::Square, a);
}
Tensor Tensor::square() const { return tensorlet::square(*this); }
Tensor& Tensor::square_() {
  if (defined() && dtype() == kBool)
    fail<DTypeError>("tl::square_", "result type int64 can't be cast to the desired output type ",
                     "bool");
  return inplace_unary(UnaryOp::Square, "tl::square_", *this);
}

// ---- activations ----

Tensor silu(const Tensor& a) { return unary_op(UnaryOp::Silu, a); }

Tensor gelu(const Tensor& a, std::string_view approximate) {
  if (approximate == "none") return unary_op(UnaryOp::Gelu, a);
  if (approximate == "tanh") return unary_op(UnaryOp::GeluTanh, a);
  fail<Error>("tl::gelu", "approximate must be \"none\" or \"tanh\", got \"", approximate, "\"");
}

// torch's defaults run the op's own kernel; other parameters compose it from elementwise ops
// (log1p(exp(beta x)) / beta, or x where beta x exceeds the threshold).
Tensor softplus(const Tensor& a, double beta, double threshold) {
  if (beta == 1 && threshold == 20) return unary_op(UnaryOp::Softplus, a);
  const char* name = "tl::softplus";
  profiler::OpScope scope(name);
  scope.inputs({&a});
  check_defined(a, name);
  if (!supported_dtypes(UnaryOp::Softplus).contains(a.dtype())) unsupported(name, a.dtype());
  // In float for the half types, rounded once at the end, as the kernel would.
  const Tensor x = a.dtype() == kFloat16 || a.dtype() == kBFloat16 ? a.to(kFloat32) : a;
  Tensor scaled = mul(x, beta);
  return where(gt(scaled, threshold), x, div(log1p(exp(scaled)), beta)).to(a.dtype());
}

// clamp's own checks and bound rules (an int8 tensor clamped at 1000 is unchanged), in place.
Tensor& Tensor::clamp_(std::optional<Scalar> min, std::optional<Scalar> max) {
  Operand lo = min ? of(*min) : Operand{}, hi = max ? of(*max) : Operand{};
  clamp_op(*this, min ? &lo : nullptr, max ? &hi : nullptr, this);
  return *this;
}

// ---- masked_fill ----

Tensor masked_fill(const Tensor& a, const Tensor& mask, Scalar value) {
  return masked_fill_op(a, mask, of(value));
}
Tensor masked_fill(const Tensor& a, const Tensor& mask, const Tensor& value) {
  return masked_fill_op(a, mask, of(value));
}
Tensor Tensor::masked_fill(const Tensor& mask, Scalar value) const {
  return masked_fill_op(*this, mask, of(value));
}
Tensor& Tensor::masked_fill_(const Tensor& mask, Scalar value) {
  masked_fill_op(*this, mask, of(value), this);
  return *this;
}
Tensor& Tensor::masked_fill_(const Tensor& mask, const Tensor& value) {
  masked_fill_op(*this, mask, of(value), this);
  return *this;
}

// ---- where, clamp, result_type ----

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  return where_op(cond, of(a), of(b));
}
Tensor where(const Tensor& cond, const Tensor& a, Scalar b) { return where_op(cond, of(a), of(b)); }
Tensor where(const Tensor& cond, Scalar a, const Tensor& b) { return where_op(cond, of(a), of(b)); }
Tensor where(const Tensor& cond, Scalar a, Scalar b) { return where_op(cond, of(a), of(b)); }

Tensor clamp(const Tensor& a, std::optional<Scalar> min, std::optional<Scalar> max) {
  Operand lo = min ? of(*min) : Operand{}, hi = max ? of(*max) : Operand{};
  return clamp_op(a, min ? &lo : nullptr, max ? &hi : nullptr);
}

Tensor clamp(const Tensor& a, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  Operand lo = min ? of(*min) : Operand{}, hi = max ? of(*max) : Operand{};
  return clamp_op(a, min ? &lo : nullptr, max ? &hi : nullptr);
}

DType result_type(const Tensor& a, const Tensor& b) {
  check_defined(a, "tl::result_type");
  check_defined(b, "tl::result_type");
  return result_type_of(of(a), of(b));
}

DType result_type(const Tensor& a, Scalar b) {
  check_defined(a, "tl::result_type");
  return result_type_of(of(a), of(b));
}

// ---- operators ----

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator+(const Tensor& a, Scalar b) { return add(a, b); }
Tensor operator+(Scalar a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator-(const Tensor& a, Scalar b) { return sub(a, b); }
Tensor operator-(Scalar a, const Tensor& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator*(const Tensor& a, Scalar b) { return mul(a, b); }
Tensor operator*(Scalar a, const Tensor& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator/(const Tensor& a, Scalar b) { return div(a, b); }
Tensor operator/(Scalar a, const Tensor& b) { return div(a, b); }
Tensor operator-(const Tensor& a) { return neg(a); }
Tensor operator>(const Tensor& a, const Tensor& b) { return gt(a, b); }
Tensor operator>(const Tensor& a, Scalar b) { return gt(a, b); }
Tensor operator>(Scalar a, const Tensor& b) { return gt(a, b); }
Tensor operator<(const Tensor& a, const Tensor& b) { return lt(a, b); }
Tensor operator<(const Tensor& a, Scalar b) { return lt(a, b); }
Tensor operator<(Scalar a, const Tensor& b) { return lt(a, b); }
Tensor operator>=(const Tensor& a, const Tensor& b) { return ge(a, b); }
Tensor operator>=(const Tensor& a, Scalar b) { return ge(a, b); }
Tensor operator>=(Scalar a, const Tensor& b) { return ge(a, b); }
Tensor operator<=(const Tensor& a, const Tensor& b) { return le(a, b); }
Tensor operator<=(const Tensor& a, Scalar b) { return le(a, b); }
Tensor operator<=(Scalar a, const Tensor& b) { return le(a, b); }
Tensor operator==(const Tensor& a, const Tensor& b) { return eq(a, b); }
Tensor operator==(const Tensor& a, Scalar b) { return eq(a, b); }
Tensor operator==(Scalar a, const Tensor& b) { return eq(a, b); }
Tensor operator!=(const Tensor& a, const Tensor& b) { return ne(a, b); }
Tensor operator!=(const Tensor& a, Scalar b) { return ne(a, b); }
Tensor operator!=(Scalar a, const Tensor& b) { return ne(a, b); }

#define TL_BINARY_OPERATOR(op, fn)                                          \
  Tensor operator op(const Tensor& a, const Tensor& b) { return fn(a, b); } \
  Tensor operator op(const Tensor& a, Scalar b) { return fn(a, b); }        \
  Tensor operator op(Scalar a, const Tensor& b) { return fn(a, b); }
TL_BINARY_OPERATOR(&, bitwise_and)
TL_BINARY_OPERATOR(|, bitwise_or)
TL_BINARY_OPERATOR(^, bitwise_xor)
TL_BINARY_OPERATOR(<<, bitwise_left_shift)
TL_BINARY_OPERATOR(>>, bitwise_right_shift)
#undef TL_BINARY_OPERATOR
Tensor operator!(const Tensor& a) { return logical_not(a); }
Tensor operator~(const Tensor& a) { return bitwise_not(a); }

Tensor add(const Tensor& a, const Tensor& b, Scalar alpha) {
  return scaled_op(BinaryOp::Add, a, of(b), alpha);
}
Tensor add(const Tensor& a, Scalar b, Scalar alpha) {
  return scaled_op(BinaryOp::Add, a, of(b), alpha);
}
Tensor sub(const Tensor& a, const Tensor& b, Scalar alpha) {
  return scaled_op(BinaryOp::Sub, a, of(b), alpha);
}
Tensor sub(const Tensor& a, Scalar b, Scalar alpha) {
  return scaled_op(BinaryOp::Sub, a, of(b), alpha);
}

// ---- in place ----

Tensor& Tensor::add_(const Tensor& other) {
  return inplace_op(BinaryOp::Add, "tl::add_", *this, of(other));
}
Tensor& Tensor::add_(Scalar other) {
  return inplace_op(BinaryOp::Add, "tl::add_", *this, of(other));
}
Tensor& Tensor::sub_(const Tensor& other) {
  return inplace_op(BinaryOp::Sub, "tl::sub_", *this, of(other));
}
Tensor& Tensor::sub_(Scalar other) {
  return inplace_op(BinaryOp::Sub, "tl::sub_", *this, of(other));
}
Tensor& Tensor::add_(const Tensor& other, Scalar alpha) {
  return inplace_op(BinaryOp::Add, "tl::add_", *this, of(other), &alpha);
}
Tensor& Tensor::add_(Scalar other, Scalar alpha) {
  return inplace_op(BinaryOp::Add, "tl::add_", *this, of(other), &alpha);
}
Tensor& Tensor::sub_(const Tensor& other, Scalar alpha) {
  return inplace_op(BinaryOp::Sub, "tl::sub_", *this, of(other), &alpha);
}
Tensor& Tensor::sub_(Scalar other, Scalar alpha) {
  return inplace_op(BinaryOp::Sub, "tl::sub_", *this, of(other), &alpha);
}
Tensor& Tensor::mul_(const Tensor& other) {
  return inplace_op(BinaryOp::Mul, "tl::mul_", *this, of(other));
}
Tensor& Tensor::mul_(Scalar other) {
  return inplace_op(BinaryOp::Mul, "tl::mul_", *this, of(other));
}
Tensor& Tensor::div_(const Tensor& other) {
  return inplace_op(BinaryOp::Div, "tl::div_", *this, of(other));
}
Tensor& Tensor::div_(Scalar other) {
  return inplace_op(BinaryOp::Div, "tl::div_", *this, of(other));
}

}  // namespace tensorlet

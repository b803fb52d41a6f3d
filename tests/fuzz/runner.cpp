// Builds a case's tensors (base values, then the view chain), runs the op, reads and compares
// results.
#include "fuzz/runner.h"

#include "fuzz/gradients.h"

#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <sstream>
#include <type_traits>

namespace fuzz {

tl::Tensor apply_view(const tl::Tensor& t, const ViewStep& s) {
  switch (s.kind) {
    case ViewKind::Transpose:
      return t.transpose(s.x, s.y);
    case ViewKind::Permute:
      return t.permute(tl::Shape(s.a));
    case ViewKind::Slice:
      return t.slice(s.x, s.y, s.z, s.w);
    case ViewKind::Expand:
      return t.expand(tl::Shape(s.a));
    case ViewKind::AsStrided:
      return t.as_strided(tl::Shape(s.a), tl::Shape(s.b), s.x);
    case ViewKind::Unsqueeze:
      return t.unsqueeze(s.x);
    case ViewKind::Select:
      return t.select(s.x, s.y);
  }
  return t;
}

// Writes the base's values byte for byte (bool bytes as given), then moves it to `device`.
Built build_input(const Input& in, tl::Device device) {
  tl::Tensor base = tl::empty(tl::Shape(in.base_shape), in.dtype);
  void* p = base.data_ptr();
  for (size_t i = 0; i < in.values.size(); ++i) {
    const V& v = in.values[i];
    tl::dispatch_dtype(in.dtype, [&]<typename T>() {
      if constexpr (std::is_same_v<T, bool>) {  // the raw byte, which may be other than 0 or 1
        const uint8_t b = in.bool_bytes.empty() ? static_cast<uint8_t>(v.i != 0) : in.bool_bytes[i];
        std::memcpy(static_cast<char*>(p) + i, &b, 1);
      } else {
        T x;
        if constexpr (tl::is_reduced_float_v<T>)  // float16 values already: exact
          x = T(static_cast<float>(v.f));
        else if constexpr (tl::is_floating_v<T>)
          x = static_cast<T>(v.f);
        else
          x = static_cast<T>(v.i);
        std::memcpy(static_cast<char*>(p) + i * sizeof(T), &x, sizeof(T));
      }
    });
  }
  if (device.is_cuda()) base = base.to(device);
  Built b{base, base};
  for (const ViewStep& s : in.views) b.view = apply_view(b.view, s);
  return b;
}

namespace {

// Reads any tensor's elements through its own strides (bool as its raw byte).
HostArray read_tensor(const tl::Tensor& t0) {
  const tl::Tensor t = t0.is_cuda() ? t0.cpu() : t0;
  HostArray a{t.dtype(), t.shape().vec(), {}};
  Geom g{t.shape().vec(), t.strides().vec(), 0};
  a.v.resize(numel_of(a.shape));
  const char* base = static_cast<const char*>(t.data_ptr());
  const size_t es = t.element_size();
  for_each_index(g.shape, [&](int64_t flat, const Dims& idx) {
    const char* p = base + offset_of(g, idx) * static_cast<int64_t>(es);
    V& v = a.v[flat];
    tl::dispatch_dtype(t.dtype(), [&]<typename T>() {
      if constexpr (std::is_same_v<T, bool>) {  // the raw byte
        uint8_t b;
        std::memcpy(&b, p, 1);
        v.i = b;
      } else {
        T x;
        std::memcpy(&x, p, sizeof(T));
        if constexpr (tl::is_floating_v<T>)
          v.f = static_cast<double>(static_cast<tl::compute_t<T>>(x));
        else
          v.i = static_cast<int64_t>(x);
      }
    });
  });
  return a;
}

tl::Scalar to_scalar(const ScalarArg& s) {
  if (s.kind == tl::DTypeKind::Bool) return tl::Scalar(s.v.i != 0);
  if (s.kind == tl::DTypeKind::Integer) return tl::Scalar(s.v.i);
  return tl::Scalar(s.v.f);
}

tl::Tensor run_binary(Op op, const tl::Tensor& a, const tl::Tensor& b, Form f, tl::Scalar sa,
                      tl::Scalar sb) {
#define TL_FUZZ_BIN(OPN, fn) \
  case Op::OPN:              \
    return f == Form::TT ? tl::fn(a, b) : f == Form::TS ? tl::fn(a, sb) : tl::fn(sa, b);
  switch (op) {
    TL_FUZZ_BIN(Add, add)
    TL_FUZZ_BIN(Sub, sub)
    TL_FUZZ_BIN(Mul, mul)
    TL_FUZZ_BIN(Div, div)
    TL_FUZZ_BIN(Pow, pow)
    TL_FUZZ_BIN(Maximum, maximum)
    TL_FUZZ_BIN(Minimum, minimum)
    TL_FUZZ_BIN(Gt, gt)
    TL_FUZZ_BIN(Lt, lt)
    TL_FUZZ_BIN(Ge, ge)
    TL_FUZZ_BIN(Le, le)
    TL_FUZZ_BIN(Eq, eq)
    TL_FUZZ_BIN(Ne, ne)
    TL_FUZZ_BIN(LogicalAnd, logical_and)
    TL_FUZZ_BIN(LogicalOr, logical_or)
    TL_FUZZ_BIN(LogicalXor, logical_xor)
    TL_FUZZ_BIN(Fmod, fmod)
    TL_FUZZ_BIN(Remainder, remainder)
    TL_FUZZ_BIN(FloorDivide, floor_divide)
    TL_FUZZ_BIN(Atan2, atan2)
    TL_FUZZ_BIN(BitwiseAnd, bitwise_and)
    TL_FUZZ_BIN(BitwiseOr, bitwise_or)
    TL_FUZZ_BIN(BitwiseXor, bitwise_xor)
    TL_FUZZ_BIN(LeftShift, bitwise_left_shift)
    TL_FUZZ_BIN(RightShift, bitwise_right_shift)
    default:
      break;
  }
#undef TL_FUZZ_BIN
  return {};
}

tl::Tensor run_unary(Op op, const tl::Tensor& a) {
  switch (op) {
    case Op::Neg:
      return tl::neg(a);
    case Op::Abs:
      return tl::abs(a);
    case Op::Exp:
      return tl::exp(a);
    case Op::Log:
      return tl::log(a);
    case Op::Sqrt:
      return tl::sqrt(a);
    case Op::Sin:
      return tl::sin(a);
    case Op::Cos:
      return tl::cos(a);
    case Op::Tanh:
      return tl::tanh(a);
    case Op::Sigmoid:
      return tl::sigmoid(a);
    case Op::Relu:
      return tl::relu(a);
    case Op::Floor:
      return tl::floor(a);
    case Op::Ceil:
      return tl::ceil(a);
    case Op::Trunc:
      return tl::trunc(a);
    case Op::Round:
      return tl::round(a);
#define TL_FUZZ_UN(OPN, fn) \
  case Op::OPN:             \
    return tl::fn(a);
      TL_FUZZ_UN(Sign, sign)
      TL_FUZZ_UN(Square, square)
      TL_FUZZ_UN(Reciprocal, reciprocal)
      TL_FUZZ_UN(Rsqrt, rsqrt)
      TL_FUZZ_UN(Log1p, log1p)
      TL_FUZZ_UN(Expm1, expm1)
      TL_FUZZ_UN(Log2, log2)
      TL_FUZZ_UN(Log10, log10)
      TL_FUZZ_UN(Exp2, exp2)
      TL_FUZZ_UN(Erf, erf)
      TL_FUZZ_UN(Erfc, erfc)
      TL_FUZZ_UN(Tan, tan)
      TL_FUZZ_UN(Sinh, sinh)
      TL_FUZZ_UN(Cosh, cosh)
      TL_FUZZ_UN(Asin, asin)
      TL_FUZZ_UN(Acos, acos)
      TL_FUZZ_UN(Atan, atan)
      TL_FUZZ_UN(BitwiseNot, bitwise_not)
      TL_FUZZ_UN(Isnan, isnan)
      TL_FUZZ_UN(Isinf, isinf)
      TL_FUZZ_UN(Isfinite, isfinite)
      TL_FUZZ_UN(Silu, silu)
      TL_FUZZ_UN(Softplus, softplus)
      TL_FUZZ_UN(Gelu, gelu)
#undef TL_FUZZ_UN
    case Op::GeluTanh:
      return tl::gelu(a, "tanh");
    default:
      return tl::logical_not(a);
  }
}

tl::Tensor run_reduction(Op op, const tl::Tensor& a, const Case& c) {
  switch (op) {
    case Op::Sum:
      return tl::sum(a, c.dims, c.keepdim);
    case Op::Mean:
      return tl::mean(a, c.dims, c.keepdim);
    case Op::Prod:
      return tl::prod(a, c.dims, c.keepdim);
    case Op::Max:
      return tl::amax(a, c.dims, c.keepdim);
    case Op::Min:
      return tl::amin(a, c.dims, c.keepdim);
    case Op::Argmax:
      return tl::argmax(a, c.dim, c.keepdim);
    case Op::Argmin:
      return tl::argmin(a, c.dim, c.keepdim);
    case Op::Any:
      return tl::any(a, c.dims, c.keepdim);
    default:
      return tl::all(a, c.dims, c.keepdim);
  }
}

// The ordering ops' indices, checked on the device that made them (their order among equal
// elements is free unless the sort is stable): each picks its value out of x along dim, and a
// full-length result's indices are a permutation of each row. A failure is an untyped error,
// which the comparison reports.
void check_picks(const tl::Tensor& x, int64_t dim, const tl::Tensor& values,
                 const tl::Tensor& indices, bool permutation) {
  if (x.dim() == 0 || indices.numel() == 0) return;
  const int64_t d = dim < 0 ? dim + x.dim() : dim;
  const HostArray want = read_tensor(values), got = read_tensor(tl::gather(x, d, indices));
  for (size_t i = 0; i < want.v.size(); ++i)
    if (!same_value(want.v[i], got.v[i], want.dtype))
      throw std::logic_error("index " + std::to_string(i) + " does not point at its value");
  if (!permutation) return;
  const HostArray sorted = read_tensor(tl::sort(indices, d).values);
  for_each_index(sorted.shape, [&](int64_t flat, const Dims& idx) {
    if (sorted.v[flat].i != idx[d]) throw std::logic_error("indices are not a permutation");
  });
}

tl::Tensor run_ordering(const Case& c, const tl::Tensor& x) {
  const int64_t dim = *c.dim;
  switch (c.op) {
    case Op::Sort: {
      auto [v, i] = tl::sort(x, dim, c.descending, c.stable);
      check_picks(x, dim, v, i, true);
      return v;
    }
    case Op::Argsort: {
      tl::Tensor i = tl::argsort(x, dim, c.descending, c.stable);
      if (c.stable || x.dim() == 0) return c.stable ? i : x.clone();
      check_picks(x, dim, tl::gather(x, dim, i), i, true);
      return tl::gather(x, dim, i);  // unstable: compared through the values it picks
    }
    case Op::Topk: {
      auto [v, i] = tl::topk(x, c.k, dim, c.largest, c.sorted);
      check_picks(x, dim, v, i, false);
      // Unsorted: compared as the same elements in order.
      return c.sorted || x.dim() == 0 ? v : tl::sort(v, dim, c.largest).values;
    }
    default: {
      auto [v, i] = tl::kthvalue(x, c.k, dim, c.keepdim);
      const int64_t d = x.dim() == 0 ? 0 : (dim < 0 ? dim + x.dim() : dim);
      if (x.dim() > 0)
        check_picks(x, d, c.keepdim ? v : v.unsqueeze(d), c.keepdim ? i : i.unsqueeze(d), false);
      return v;
    }
  }
}

}  // namespace

// Runs the op on built inputs; for copy_/fill_ the result is the destination's base.
tl::Tensor run_op(const Case& c, std::vector<Built>& in) {
  const Op op = c.op;
  auto t = [&](size_t i) -> const tl::Tensor& { return in[i].view; };
  auto sc = [&](size_t i) { return to_scalar(c.scalars[i]); };
  if (is_unary(op)) return run_unary(op, t(0));
  if (is_binary(op)) {
    switch (c.form) {
      case Form::TT:
        return run_binary(op, t(0), t(1), c.form, {}, {});
      case Form::TS:
        return run_binary(op, t(0), {}, c.form, {}, sc(0));
      default:
        return run_binary(op, {}, t(0), c.form, sc(0), {});
    }
  }
  if (op == Op::Where) {
    switch (c.form) {
      case Form::TT:
        return tl::where(t(0), t(1), t(2));
      case Form::TS:
        return tl::where(t(0), t(1), sc(0));
      case Form::ST:
        return tl::where(t(0), sc(0), t(1));
      case Form::SS:
        return tl::where(t(0), sc(0), sc(1));
    }
  }
  if (op == Op::Clamp) {
    size_t k = 1;
    if (c.form == Form::TT) {
      std::optional<tl::Tensor> lo, hi;
      if (c.has_lo) lo = t(k++);
      if (c.has_hi) hi = t(k++);
      return tl::clamp(t(0), lo, hi);
    }
    std::optional<tl::Scalar> lo, hi;
    k = 0;
    if (c.has_lo) lo = sc(k++);
    if (c.has_hi) hi = sc(k++);
    return tl::clamp(t(0), lo, hi);
  }
  if (is_reduction(op)) return run_reduction(op, t(0), c);
  if (is_ordering(op)) return run_ordering(c, t(0));
  switch (op) {
    case Op::Softmax:
      return tl::softmax(t(0), *c.dim);
    case Op::LogSoftmax:
      return tl::log_softmax(t(0), *c.dim);
    case Op::Logsumexp:
      return tl::logsumexp(t(0), c.dims, c.keepdim);
    case Op::Var:
      return tl::var(t(0), c.dims, c.correction, c.keepdim);
    case Op::Std:
      return tl::std(t(0), c.dims, c.correction, c.keepdim);
    case Op::Cumsum:
      return tl::cumsum(t(0), *c.dim, c.dtype);
    case Op::Cumprod:
      return tl::cumprod(t(0), *c.dim, c.dtype);
    case Op::Cummax:
    case Op::Cummin: {
      auto [values, indices] =
          op == Op::Cummax ? tl::cummax(t(0), *c.dim) : tl::cummin(t(0), *c.dim);
      return c.indices ? indices : values;
    }
    case Op::Norm:
      return tl::norm(t(0), c.p, c.dims, c.keepdim);
    case Op::Nansum:
      return tl::nansum(t(0), c.dims, c.keepdim);
    case Op::CountNonzero:
      return tl::count_nonzero(t(0), c.dims);
    case Op::Unique:
    case Op::UniqueConsecutive: {
      const tl::UniqueResult r = op == Op::Unique ? tl::unique(t(0), true, true, true, c.dim)
                                                  : tl::unique_consecutive(t(0), true, true, c.dim);
      return c.k == 0 ? r.values : c.k == 1 ? r.inverse : r.counts;
    }
    case Op::Bincount:
      return tl::bincount(t(0), in.size() > 1 ? t(1) : tl::Tensor(), c.k);
    case Op::Searchsorted:
      return tl::searchsorted(t(0), t(1), false, c.right);
    case Op::Histc:
      return tl::histc(t(0), c.k, c.lo, c.hi);
    default:
      break;
  }
  switch (op) {
    case Op::Matmul:
      return tl::matmul(t(0), t(1));
    case Op::Outer:
      return tl::outer(t(0), t(1));
    case Op::Addmm:
      return tl::addmm(t(0), t(1), t(2), sc(0), sc(1));
    case Op::Cat:
    case Op::Stack: {
      std::vector<tl::Tensor> ts;
      for (auto& b : in) ts.push_back(b.view);
      return op == Op::Cat ? tl::cat(ts, *c.dim) : tl::stack(ts, *c.dim);
    }
    case Op::IndexSelect:
      return tl::index_select(t(0), *c.dim, t(1));
    case Op::Gather:
      return tl::gather(t(0), *c.dim, t(1));
    case Op::Take:
      return tl::take(t(0), t(1));
    case Op::MaskedSelect:
      return tl::masked_select(t(0), t(1));
    case Op::ScatterAdd:
      return tl::scatter_add(t(0), *c.dim, t(1), t(2));
    case Op::IndexAdd:
      return tl::index_add(t(0), *c.dim, t(1), t(2));
    case Op::MaskedScatter:
      return tl::masked_scatter(t(0), t(1), t(2));
    case Op::Lerp:
      return c.form == Form::TT ? tl::lerp(t(0), t(1), t(2)) : tl::lerp(t(0), t(1), sc(0));
    case Op::Isclose:
      return tl::isclose(t(0), t(1), c.rtol, c.atol, c.equal_nan);
    case Op::NanToNum:
      return tl::nan_to_num(t(0), c.nan, c.posinf, c.neginf);
    case Op::MaskedFill:
      return c.form == Form::TT ? tl::masked_fill(t(0), t(1), t(2))
                                : tl::masked_fill(t(0), t(1), sc(0));
    case Op::Flip:
      return tl::flip(t(0), c.dims);
    case Op::Roll:
      return tl::roll(t(0), c.shifts, c.dims);
    case Op::Tril:
      return tl::tril(t(0), c.k);
    case Op::Triu:
      return tl::triu(t(0), c.k);
    case Op::Conv2d:
      return tl::conv2d(t(0), t(1), in.size() > 2 ? t(2) : tl::Tensor(), c.stride, c.padding,
                        c.dilation, c.groups);
    case Op::MaxPool2d:
      return tl::max_pool2d(t(0), c.kernel, c.stride, c.padding, c.dilation, c.ceil_mode);
    case Op::AvgPool2d:
      return tl::avg_pool2d(t(0), c.kernel, c.stride, c.padding, c.ceil_mode, c.count_include_pad,
                            c.divisor_override);
    case Op::AdaptiveAvgPool2d:
      return tl::adaptive_avg_pool2d(t(0), c.output_size);
    case Op::CrossEntropy:
      return tl::nn::functional::cross_entropy(t(0), t(1), in.size() > 2 ? t(2) : tl::Tensor(),
                                               c.ignore_index, c.reduction, c.label_smoothing);
    case Op::NllLoss:
      return tl::nn::functional::nll_loss(t(0), t(1), in.size() > 2 ? t(2) : tl::Tensor(),
                                          c.ignore_index, c.reduction);
    case Op::To:
      return t(0).to(c.target);
    case Op::Clone:
      return t(0).clone();
    case Op::Contiguous:
      return t(0).contiguous();
    case Op::Reshape:
      return t(0).reshape(tl::Shape(c.dims));
    case Op::View:
      return t(0).view(tl::Shape(c.dims));
    case Op::Copy: {
      tl::Tensor dst = in[0].view;
      dst.copy_(t(1));
      return in[0].base;
    }
    case Op::Fill: {
      tl::Tensor dst = in[0].view;
      dst.fill_(sc(0));
      return in[0].base;
    }
    case Op::AddInplace:
    case Op::SubInplace:
    case Op::MulInplace:
    case Op::DivInplace: {
      tl::Tensor self = in[0].view;
      const bool tensor = c.form == Form::TT;
      if (op == Op::AddInplace) tensor ? self.add_(t(1)) : self.add_(sc(0));
      if (op == Op::SubInplace) tensor ? self.sub_(t(1)) : self.sub_(sc(0));
      if (op == Op::MulInplace) tensor ? self.mul_(t(1)) : self.mul_(sc(0));
      if (op == Op::DivInplace) tensor ? self.div_(t(1)) : self.div_(sc(0));
      return in[0].base;
    }
    default:
      return {};
  }
}

namespace {

std::string show(const V& v, DType d) {
  std::ostringstream os;
  if (is_float(d))
    os.precision(17), os << v.f;
  else
    os << v.i;
  return os.str();
}

std::string show_shape(const Dims& s) { return tl::Shape(s).str(); }

bool close(const V& r, const V& l, DType d, double atol, double rtol) {
  // A bool is its truth (byte != 0): copies, views and gathers move raw bytes as torch does, so
  // a byte of 232 may reach a result and still mean true.
  if (d == tl::kBool) return (r.i != 0) == (l.i != 0);
  if (same_value(r, l, d)) return true;
  if (!is_float(d) || std::isnan(r.f) || std::isnan(l.f) || std::isinf(r.f) || std::isinf(l.f))
    return false;
  return std::fabs(r.f - l.f) <= atol + rtol * std::fabs(r.f);
}

std::optional<std::string> compare_arrays(const RefResult& ref, const HostArray& want,
                                          const HostArray& got, const char* what) {
  std::ostringstream os;
  if (want.dtype != got.dtype) {
    os << what << " dtype " << got.dtype << ", expected " << want.dtype;
    return os.str();
  }
  if (want.shape != got.shape) {
    os << what << " shape " << show_shape(got.shape) << ", expected " << show_shape(want.shape);
    return os.str();
  }
  for (size_t i = 0; i < want.v.size(); ++i) {
    const double atol = i < ref.atol.size() ? ref.atol[i] : 0;
    if (!close(want.v[i], got.v[i], want.dtype, atol, ref.rtol)) {
      os << what << " element " << i << " is " << show(got.v[i], got.dtype) << ", expected "
         << show(want.v[i], want.dtype);
      return os.str();
    }
  }
  return std::nullopt;
}

// Builds the case's inputs on `device`, runs `run` on them and reads the result back; an exception
// becomes a raised LibResult with its message.
LibResult run_guarded(const Case& c, tl::Device device,
                      const std::function<tl::Tensor(std::vector<Built>&)>& run) {
  LibResult r;
  try {
    std::vector<Built> in;
    for (const Input& i : c.inputs) in.push_back(build_input(i, device));
    tl::Tensor out = run(in);
    if (out.device() != device) throw std::runtime_error("result on the wrong device");
    r.out = read_tensor(out);
    r.contiguous = out.is_contiguous();
  } catch (const tl::Error& e) {
    r.raised = true;
    r.error = e.what();
    r.index_error = dynamic_cast<const tl::IndexError*>(&e) != nullptr;
  } catch (const std::exception& e) {
    r.raised = true;
    r.error = std::string("untyped exception: ") + e.what();
  }
  return r;
}

}  // namespace

LibResult run_library(const Case& c, tl::Device device) {
  return run_guarded(c, device, [&](std::vector<Built>& in) { return run_op(c, in); });
}

// CUDA: the op captured in a tl::cuda::Graph (its inputs built eagerly) and replayed once (an
// in-place op applies once, as eagerly). The capture runs nothing, so every element read back was
// written by the replay. Sets `refused` when the op waits for the GPU (a size known only on the
// device), which a capture refuses by design.
LibResult run_library_graphed(const Case& c, tl::Device device, bool* refused) {
  tl::cuda::Graph graph;  // outlives the read of its output
  const LibResult r = run_guarded(c, device, [&](std::vector<Built>& in) {
    tl::Tensor out;
    graph.capture([&] { out = run_op(c, in); });
    graph.replay();
    return out;
  });
  *refused = r.raised &&
             r.error.find("cannot run while a CUDA graph is being captured") != std::string::npos;
  return r;
}

std::optional<std::string> compare(const Case& c, const RefResult& ref, const LibResult& lib) {
  if (ref.raises && !lib.raised) return "returned a result where torch raises (" + ref.why + ")";
  if (!ref.raises && lib.raised) return "raised where a result is expected: " + lib.error;
  if (lib.raised) {
    if (lib.error.rfind("[tl::", 0) != 0) return "raised an error without an op name: " + lib.error;
    if (lib.error.rfind(ref.error_prefix, 0) != 0)
      return "raised an error not starting with " + ref.error_prefix + ": " + lib.error;
    if (ref.index_error && !lib.index_error)
      return "raised another error than an IndexError (" + ref.why + "): " + lib.error;
    return std::nullopt;
  }
  if (auto d = compare_arrays(ref, ref.out, lib.out, "result")) return d;
  if ((c.op == Op::Clone || c.op == Op::Contiguous) && !lib.contiguous)
    return std::string("result is not contiguous");
  return std::nullopt;
}

std::optional<std::string> compare_runs(const RefResult& ref, const LibResult& cpu,
                                        const LibResult& dev) {
  if (cpu.raised != dev.raised)
    return std::string("raised on one device only: ") + (cpu.raised ? cpu.error : dev.error);
  if (cpu.raised) return std::nullopt;
  RefResult loose = ref;  // the reference's tolerances, doubled for two approximations
  loose.rtol *= 2;
  for (double& a : loose.atol) a *= 2;
  return compare_arrays(loose, cpu.out, dev.out, "cuda result vs cpu");
}

namespace {

// The forward checks of a case the reference runs (ref.skip false).
std::optional<std::string> check_forward(const Case& c, const RefResult& ref, tl::Device device) {
  const LibResult cpu = run_library(c, tl::Device::cpu());
  if (auto d = compare(c, ref, cpu)) return "cpu: " + *d;
  if (!device.is_cuda()) return std::nullopt;
  const LibResult dev = run_library(c, device);
  if (auto d = compare(c, ref, dev)) return "cuda: " + *d;
  if (auto d = compare_runs(ref, cpu, dev)) return *d;
  bool refused = false;
  const LibResult graphed = run_library_graphed(c, device, &refused);
  if (refused) return std::nullopt;
  if (graphed.raised != dev.raised)
    return std::string("cuda graph: ") +
           (graphed.raised ? "raised where eager did not: " + graphed.error
                           : "returned a result where eager raised: " + dev.error);
  if (dev.raised) return std::nullopt;
  if (auto d = compare_arrays(ref, dev.out, graphed.out, "cuda graph replay vs eager")) return d;
  return std::nullopt;
}

}  // namespace

std::optional<std::string> check_case(const Case& c, const Known& known, tl::Device device,
                                      bool* skipped, bool* raises) {
  const RefResult ref = run_reference(c, known);
  if (skipped) *skipped = ref.skip;
  if (raises) *raises = ref.raises;
  if (ref.skip) return std::nullopt;
  if (auto d = check_forward(c, ref, device)) return d;
  if (ref.raises) return std::nullopt;
  return check_gradients(c, device);
}

}  // namespace fuzz

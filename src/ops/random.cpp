// Random factories: the generator a call draws from, the Philox fill, manual_seed, and
// rand/randn/randint/randperm.
#include "tensorlet/ops/random.h"

#include <limits>

#include "tensorlet/backends/backend.h"
#include "tensorlet/backends/math/philox.h"
#include "tensorlet/tensor/dispatch.h"
#include "tensorlet/tensor/op_scope.h"
#include "tensorlet/ops/factories.h"
#include "tensorlet/ops/ordering.h"
#include "tensorlet/ops/random_fill.h"

namespace tensorlet {
namespace detail {

Generator generator_for(const std::optional<Generator>& gen, Device device, const char* op) {
  if (!gen.has_value()) return default_generator(device);
  if (gen->device().type() != device.type())
    fail<DeviceError>(op, "expected a generator for device type '", device_type_name(device.type()),
                      "', got one for '", device_type_name(gen->device().type()), "'");
  return *gen;
}

void fill_random(RandomParams params, const Tensor& out, const Generator& gen) {
  int64_t n = out.numel();
  if (params.kind == RandomKind::Normal) n += n % 2;  // normals come in pairs
  const uint64_t range = static_cast<uint64_t>(params.high) - static_cast<uint64_t>(params.low);
  const bool wide =
      params.kind == RandomKind::Integer ? range > (uint64_t{1} << 32) : out.dtype() == kFloat64;
  Backend& backend = backend_for(out.device());
  backend.reserve_random(gen, philox::blocks_used(n, wide ? 2 : 1), out, params);
  if (out.numel() == 0) return;
  if (out.is_contiguous()) {
    backend.random(params, out);
  } else {
    Tensor dense = make_tensor(out.shape(), out.dtype(), out.device());
    backend.random(params, dense);
    backend.copy(dense, out);
  }
}

void check_int_range_fits(int64_t low, int64_t high, DType d, const char* op) {
  // As torch: low and high - 1 must be values of the dtype (any dtype, floats included: torch's
  // randint gives float16 too); every int64 is a value of int64, float32 and float64.
  const bool fits = dispatch_dtype(
      d,
      [&]<typename T>() {
        if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, float> ||
                      std::is_same_v<T, double>) {
          return true;
        } else {
          const double lo = static_cast<double>(std::numeric_limits<T>::lowest());
          const double hi = static_cast<double>(std::numeric_limits<T>::max());
          return static_cast<double>(low) >= lo && static_cast<double>(high - 1) <= hi;
        }
      },
      op);
  if (!fits) fail<DTypeError>(op, "range [", low, ", ", high, ") does not fit dtype ", d);
}

}  // namespace detail

namespace {

void check_floating(const TensorOptions& options, const char* op) {
  if (!is_floating_point(options.dtype()))
    fail<DTypeError>(op, "expected a floating point dtype, got ", options.dtype());
}

// A new tensor of shape/options filled by one draw.
Tensor draw(const RandomParams& params, const Shape& shape, const TensorOptions& options,
            const std::optional<Generator>& gen, const char* op) {
  const Generator g = detail::generator_for(gen, options.device(), op);
  Tensor out = make_tensor(shape, options.dtype(), options.device());
  detail::fill_random(params, out, g);
  return out;
}

}  // namespace

void manual_seed(uint64_t seed) {
  for (int t = 0; t < kNumDeviceTypes; ++t)
    default_generator(Device(static_cast<DeviceType>(t))).manual_seed(seed);
}

uint64_t seed() {
  const uint64_t s = default_generator(Device::cpu()).seed();
  manual_seed(s);
  return s;
}

uint64_t initial_seed() { return default_generator(Device::cpu()).initial_seed(); }

Tensor rand(IntArrayRef size, TensorOptions options, const std::optional<Generator>& gen) {
  profiler::OpScope scope("tl::rand");
  check_floating(options, "tl::rand");
  return draw({.kind = RandomKind::Uniform}, Shape(size), options, gen, "tl::rand");
}

Tensor randn(IntArrayRef size, TensorOptions options, const std::optional<Generator>& gen) {
  profiler::OpScope scope("tl::randn");
  check_floating(options, "tl::randn");
  return draw({.kind = RandomKind::Normal}, Shape(size), options, gen, "tl::randn");
}

Tensor randint(int64_t low, int64_t high, IntArrayRef size, TensorOptions options,
               const std::optional<Generator>& gen) {
  profiler::OpScope scope("tl::randint");
  if (!options.has_dtype()) options = options.dtype(kInt64);
  if (low >= high)  // torch: "random_ expects 'from' to be less than 'to'"
    fail<ShapeError>("tl::randint",
                     "expects low < high (the range [low, high) must not be empty), got low=", low,
                     " high=", high);
  detail::check_int_range_fits(low, high, options.dtype(), "tl::randint");
  return draw({.kind = RandomKind::Integer, .low = low, .high = high}, Shape(size), options, gen,
              "tl::randint");
}

Tensor randint(int64_t high, IntArrayRef size, TensorOptions options,
               const std::optional<Generator>& gen) {
  return randint(0, high, size, options, gen);
}

Tensor randperm(int64_t n, TensorOptions options, const std::optional<Generator>& gen) {
  constexpr const char* op = "tl::randperm";
  profiler::OpScope scope(op);
  if (!options.has_dtype()) options = options.dtype(kInt64);
  if (n < 0) fail<ShapeError>(op, "n must be non-negative, got ", n);
  const DType d = options.dtype();
  if (d == kBool) fail<DTypeError>(op, "not implemented for bool (a permutation needs n values)");
  // torch's check_supported_max_int_with_precision: n - 1 a value of the dtype, and float
  // types' consecutive integers.
  if (n > 0) detail::check_int_range_fits(0, n, d, op);
  const int64_t float_limit = d == kFloat16   ? (int64_t{1} << 11) + 1
                              : d == kFloat32 ? (int64_t{1} << 24) + 1
                              : d == kFloat64 ? (int64_t{1} << 53) + 1
                                              : std::numeric_limits<int64_t>::max();
  if (n > float_limit)
    fail<DTypeError>(op, "n cannot be greater than ", float_limit, " for dtype ", d, ", got ", n);
  const Generator g = detail::generator_for(gen, options.device(), op);
  // One random 64-bit key per position (the full int64 range), ordered by a stable sort: ties
  // keep position order, so every backend gives the same permutation.
  Tensor keys = make_tensor({n}, kInt64, options.device());
  detail::fill_random({.kind = RandomKind::Integer,
                       .low = std::numeric_limits<int64_t>::min(),
                       .high = std::numeric_limits<int64_t>::max()},
                      keys, g);
  if (n == 0) return make_tensor({0}, d, options.device());
  return argsort(keys, 0, false, true).to(d);
}

static TensorOptions like(const Tensor& t, const std::optional<TensorOptions>& options,
                          const char* op) {
  check_defined(t, op);
  TensorOptions o = options.has_value() ? *options : TensorOptions();
  if (!o.has_dtype()) o = o.dtype(t.dtype());
  if (!o.has_device()) o = o.device(t.device());
  return o;
}

Tensor rand_like(const Tensor& t, std::optional<TensorOptions> options) {
  profiler::OpScope scope("tl::rand_like");
  return rand(t.shape(), like(t, options, "tl::rand_like"));
}
Tensor randn_like(const Tensor& t, std::optional<TensorOptions> options) {
  profiler::OpScope scope("tl::randn_like");
  return randn(t.shape(), like(t, options, "tl::randn_like"));
}

}  // namespace tensorlet

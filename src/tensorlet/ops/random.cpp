// Random factories: the default Philox generators (one per device type) and rand/randn/randint.
#include "tensorlet/ops/random.h"

#include <array>
#include <limits>
#include <mutex>

#include "tensorlet/backends/backend.h"
#include "tensorlet/core/dispatch.h"
#include "tensorlet/core/op_scope.h"
#include "tensorlet/ops/factories.h"
#include "tensorlet/backends/math/philox.h"

namespace tensorlet {
namespace {

// PyTorch's default seed, so an unseeded program is deterministic too.
constexpr uint64_t kDefaultSeed = 67280421310721ull;

struct Generator {
  std::mutex mutex;
  uint64_t seed = kDefaultSeed;
  uint64_t offset = 0;  // next unused Philox block
};

Generator& generator_for(Device device) {
  static std::array<Generator, kNumDeviceTypes> generators;
  return generators[static_cast<int>(device.type())];
}

// Reserves the blocks a call needs and fills `out` through the device's backend.
Tensor fill_random(RandomParams params, const Shape& shape, const TensorOptions& options,
                   int words_per_element) {
  Tensor out = make_tensor(shape, options.dtype(), options.device());
  int64_t n = out.numel();
  if (params.kind == RandomKind::Normal) n += n % 2;  // normals come in pairs
  Generator& gen = generator_for(options.device());
  {
    std::lock_guard<std::mutex> lock(gen.mutex);
    params.seed = gen.seed;
    params.offset = gen.offset;
    gen.offset += philox::blocks_used(n, words_per_element);
  }
  if (out.numel() > 0) backend_for(options.device()).random(params, out);
  return out;
}

void check_floating(const TensorOptions& options, const char* op) {
  if (!is_floating_point(options.dtype()))
    fail<DTypeError>(op, "expected a floating point dtype, got ", options.dtype());
}

}  // namespace

void manual_seed(uint64_t seed) {
  for (int t = 0; t < kNumDeviceTypes; ++t) {
    Generator& gen = generator_for(Device(static_cast<DeviceType>(t)));
    std::lock_guard<std::mutex> lock(gen.mutex);
    gen.seed = seed;
    gen.offset = 0;
  }
}

Tensor rand(const Shape& shape, TensorOptions options) {
  profiler::OpScope scope("tl::rand");
  check_floating(options, "tl::rand");
  return fill_random({.kind = RandomKind::Uniform}, shape, options,
                     options.dtype() == kFloat64 ? 2 : 1);
}

Tensor randn(const Shape& shape, TensorOptions options) {
  profiler::OpScope scope("tl::randn");
  check_floating(options, "tl::randn");
  return fill_random({.kind = RandomKind::Normal}, shape, options,
                     options.dtype() == kFloat64 ? 2 : 1);
}

Tensor randint(int64_t low, int64_t high, const Shape& shape, TensorOptions options) {
  profiler::OpScope scope("tl::randint");
  if (!options.has_dtype()) options = options.dtype(kInt64);
  if (low >= high)  // torch: "random_ expects 'from' to be less than 'to'"
    fail<ShapeError>("tl::randint",
                     "expects low < high (the range [low, high) must not be empty), got low=", low,
                     " high=", high);
  // As torch: low and high - 1 must be values of the dtype (any dtype, floats included: torch's
  // randint gives float16 too); every int64 is a value of int64, float32 and float64.
  const DType d = options.dtype();
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
      "tl::randint");
  if (!fits)
    fail<DTypeError>("tl::randint", "range [", low, ", ", high, ") does not fit dtype ", d);
  uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  RandomParams params{.kind = RandomKind::Integer, .low = low, .high = high};
  return fill_random(params, shape, options, range <= (uint64_t{1} << 32) ? 1 : 2);
}

Tensor randint(int64_t high, const Shape& shape, TensorOptions options) {
  return randint(0, high, shape, options);
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

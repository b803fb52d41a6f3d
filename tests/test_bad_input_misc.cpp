// Bad-input suite, printing, devices, the benchmark Timer and the names errors carry.
#include <cmath>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "bad_input.h"

using namespace tl_test;

namespace {

namespace bench = tl::bench;

std::string print_to_string(const tl::Tensor& t) {
  std::ostringstream os;
  os << t;
  return os.str();
}

// A Timer around a function that must never run: every row below is refused before any call.
bench::Timer idle_timer() {
  return bench::Timer("idle", [] { FAIL("the timed function ran"); },
                      {.device = tl::Device::cpu()});
}

// A Timer whose clock returns `value` at every read, so a block lasts value - value.
bench::Timer timer_with_clock(double value) {
  return bench::Timer("clock", [] {},
                      {.device = tl::Device::cpu(), .timer = [value] { return value; }});
}

const tl::Device kCuda = tl::Device::cuda(0);

}  // namespace

TEST_CASE("bad input: misc") {
  run_bad_inputs({
      TL_BAD(tl::ShapeError, "[tl::view] ", "", tl::ones({2}).view({3})),
  });
}

// CUDA graphs (test_cuda_graph.cpp has the capture-time errors): refused before any device work,
// so the same rows hold with and without a GPU.
TEST_CASE("bad input: CUDA graphs") {
  using Fn = std::function<std::vector<tl::Tensor>(const std::vector<tl::Tensor>&)>;
  run_bad_inputs({
      TL_BAD(tl::Error, "[tl::cuda::Graph::replay] ", "", tl::cuda::Graph().replay()),
      TL_BAD(tl::ShapeError, "[tl::cuda::graphed] ", "at least one",
             tl::cuda::graphed(Fn([](const std::vector<tl::Tensor>& v) { return v; }), {})),
      TL_BAD(tl::DeviceError, "[tl::cuda::graphed] ", "CUDA tensors",
             tl::cuda::graphed(Fn([](const std::vector<tl::Tensor>& v) { return v; }),
                               {tl::ones({2})})),
  });
}

// Files (io/npy.h): a missing file, a folder, bfloat16 and an undefined tensor; bad file
// contents are test_io_npy.cpp's.
TEST_CASE("bad input: tl::save / tl::load") {
  run_bad_inputs({
      TL_BAD(tl::IOError, "[tl::load] ", "cannot open for reading",
             tl::load("/nonexistent/tensorlet/x.npy")),
      TL_BAD(tl::IOError, "[tl::load] ", "not a regular file", tl::load("/")),
      TL_BAD(tl::IOError, "[tl::save] ", "cannot create a temporary file",
             tl::save("/nonexistent/tensorlet/x.npy", tl::ones({2}))),
      TL_BAD(tl::DTypeError, "[tl::save] ", "bfloat16 has no NumPy dtype",
             tl::save("/nonexistent/tensorlet/x.npy", tl::ones({2}, tl::kBFloat16))),
      TL_BAD(tl::Error, "[tl::save] ", "undefined", tl::save("/tmp/x.npy", tl::Tensor())),
  });
}

// .npz archives (io/npz.h): a missing file, a folder, names, bfloat16 and an undefined tensor;
// bad archives are test_io_npz.cpp's. Without zlib every call is an IOError saying so.
TEST_CASE("bad input: tl::save_npz / tl::load_npz") {
  if (!tl::npz_supported()) {
    run_bad_inputs({
        TL_BAD(tl::IOError, "[tl::load_npz] ", "no zlib", tl::load_npz("/nonexistent/x.npz")),
        TL_BAD(tl::IOError, "[tl::save_npz] ", "no zlib", tl::save_npz("/nonexistent/x.npz", {})),
    });
    return;
  }
  run_bad_inputs({
      TL_BAD(tl::IOError, "[tl::load_npz] ", "cannot open for reading",
             tl::load_npz("/nonexistent/tensorlet/x.npz")),
      TL_BAD(tl::IOError, "[tl::load_npz] ", "not a regular file", tl::load_npz("/")),
      TL_BAD(tl::IOError, "[tl::save_npz] ", "cannot create a temporary file",
             tl::save_npz("/nonexistent/tensorlet/x.npz", {{"a", tl::ones({2})}})),
      TL_BAD(tl::DTypeError, "[tl::save_npz] ", "'b' is bfloat16",
             tl::save_npz("/nonexistent/tensorlet/x.npz",
                          {{"a", tl::ones({2})}, {"b", tl::ones({2}, tl::kBFloat16)}})),
      TL_BAD(tl::Error, "[tl::save_npz] ", "empty",
             tl::save_npz("/nonexistent/tensorlet/x.npz", {{"", tl::ones({2})}})),
      TL_BAD(tl::Error, "[tl::save_npz] ", "UTF-8",
             tl::save_npz("/nonexistent/tensorlet/x.npz", {{"\xff", tl::ones({2})}}, true)),
      TL_BAD(
          tl::Error, "[tl::save_npz] ", "NUL",
          tl::save_npz("/nonexistent/tensorlet/x.npz", {{std::string("a\0", 2), tl::ones({2})}})),
      TL_BAD(tl::Error, "[tl::save_npz] ", "'u' is undefined",
             tl::save_npz("/nonexistent/tensorlet/x.npz", {{"u", tl::Tensor()}})),
  });
}

// safetensors files (io/safetensors.h): missing files, folders, names and tensors save refuses;
// bad file contents are test_io_safetensors.cpp's.
TEST_CASE("bad input: tl::save_safetensors / tl::load_safetensors") {
  run_bad_inputs({
      TL_BAD(tl::IOError, "[tl::load_safetensors] ", "cannot open for reading",
             tl::load_safetensors("/nonexistent/tensorlet/x.safetensors")),
      TL_BAD(tl::IOError, "[tl::load_safetensors] ", "not a regular file",
             tl::load_safetensors("/")),
      TL_BAD(tl::IOError, "[tl::load_safetensors_metadata] ", "cannot open for reading",
             tl::load_safetensors_metadata("/nonexistent/tensorlet/x.safetensors")),
      TL_BAD(tl::IOError, "[tl::load_safetensors_metadata] ", "not a regular file",
             tl::load_safetensors_metadata("/")),
      TL_BAD(tl::IOError, "[tl::save_safetensors] ", "cannot create a temporary file",
             tl::save_safetensors("/nonexistent/tensorlet/x.safetensors", {{"w", tl::ones({2})}})),
      TL_BAD(tl::Error, "[tl::save_safetensors] ", "undefined",
             tl::save_safetensors("/nonexistent/x.safetensors", {{"w", tl::Tensor()}})),
      TL_BAD(tl::Error, "[tl::save_safetensors] ", "empty name",
             tl::save_safetensors("/nonexistent/x.safetensors", {{"", tl::ones({2})}})),
      TL_BAD(tl::Error, "[tl::save_safetensors] ", "\"__metadata__\"",
             tl::save_safetensors("/nonexistent/x.safetensors", {{"__metadata__", tl::ones({2})}})),
      TL_BAD(tl::Error, "[tl::save_safetensors] ", "not valid UTF-8",
             tl::save_safetensors("/nonexistent/x.safetensors", {{"w\xff", tl::ones({2})}})),
      TL_BAD(tl::Error, "[tl::save_safetensors] ", "not valid UTF-8",
             tl::save_safetensors("/nonexistent/x.safetensors", {{"w", tl::ones({2})}},
                                  {{"key", "\xc0\x80"}})),
  });
}

TEST_CASE("bad input: device strings (torch's grammar)") {
  run_bad_inputs({
      // Leading zeros, signs, spaces, case and trailing text are refused, as by torch.device.
      TL_BAD(tl::DeviceError, "[tl::Device::parse] ", "\"cuda:01\"", tl::Device::parse("cuda:01")),
      TL_BAD(tl::DeviceError, "[tl::Device::parse] ", "\"cuda:00\"", tl::Device::parse("cuda:00")),
      TL_BAD(tl::DeviceError, "[tl::Device::parse] ", "\"cpu:01\"", tl::Device::parse("cpu:01")),
      TL_BAD(tl::DeviceError, "[tl::Device::parse] ", "\"cpu:00\"", tl::Device::parse("cpu:00")),
      TL_BAD(tl::DeviceError, "[tl::Device::parse] ", "\"cuda:-1\"", tl::Device::parse("cuda:-1")),
      TL_BAD(tl::DeviceError, "[tl::Device::parse] ", "\"cpu:-1\"", tl::Device::parse("cpu:-1")),
      TL_BAD(tl::DeviceError, "[tl::Device::parse] ", "\"cuda:+1\"", tl::Device::parse("cuda:+1")),
      TL_BAD(tl::DeviceError, "[tl::Device::parse] ", "\"cuda: 1\"", tl::Device::parse("cuda: 1")),
      TL_BAD(tl::DeviceError, "[tl::Device::parse] ", "\"cuda:1 \"", tl::Device::parse("cuda:1 ")),
      TL_BAD(tl::DeviceError, "[tl::Device::parse] ", "\" cuda\"", tl::Device::parse(" cuda")),
      TL_BAD(tl::DeviceError, "[tl::Device::parse] ", "\"cuda \"", tl::Device::parse("cuda ")),
      TL_BAD(tl::DeviceError, "[tl::Device::parse] ", "\"CUDA\"", tl::Device::parse("CUDA")),
      TL_BAD(tl::DeviceError, "[tl::Device::parse] ", "\"Cuda:0\"", tl::Device::parse("Cuda:0")),
      TL_BAD(tl::DeviceError, "[tl::Device::parse] ", "\"CPU\"", tl::Device::parse("CPU")),
      TL_BAD(tl::DeviceError, "[tl::Device::parse] ", "\"cuda:\"", tl::Device::parse("cuda:")),
      TL_BAD(tl::DeviceError, "[tl::Device::parse] ", "\"cpu:\"", tl::Device::parse("cpu:")),
      TL_BAD(tl::DeviceError, "[tl::Device::parse] ", "\"cuda:1:2\"",
             tl::Device::parse("cuda:1:2")),
      TL_BAD(tl::DeviceError, "[tl::Device::parse] ", "\"cuda:0x1\"",
             tl::Device::parse("cuda:0x1")),
      TL_BAD(tl::DeviceError, "[tl::Device::parse] ", "\"cuda:1.0\"",
             tl::Device::parse("cuda:1.0")),
      TL_BAD(tl::DeviceError, "[tl::Device::parse] ", "\"cuda:1x\"", tl::Device::parse("cuda:1x")),
      TL_BAD(tl::DeviceError, "[tl::Device::parse] ", "\"cuda:a\"", tl::Device::parse("cuda:a")),
      TL_BAD(tl::DeviceError, "[tl::Device::parse] ", "\"gpu\"", tl::Device::parse("gpu")),
      TL_BAD(tl::DeviceError, "[tl::Device::parse] ", "\"gpu:0\"", tl::Device::parse("gpu:0")),
      TL_BAD(tl::DeviceError, "[tl::Device::parse] ", "\"meta\"", tl::Device::parse("meta")),
      TL_BAD(tl::DeviceError, "[tl::Device::parse] ", "\":0\"", tl::Device::parse(":0")),
      TL_BAD(tl::DeviceError, "[tl::Device::parse] ", "empty", tl::Device::parse("")),
      // torch keeps the index in an int8 and wraps "cuda:128" to -128; we refuse it.
      TL_BAD(tl::DeviceError, "[tl::Device::parse] ", "\"cuda:128\"",
             tl::Device::parse("cuda:128")),
      TL_BAD(tl::DeviceError, "[tl::Device::parse] ", "\"cuda:99999999999999999999\"",
             tl::Device::parse("cuda:99999999999999999999")),
  });
}

TEST_CASE("device strings torch accepts") {
  CHECK(tl::Device::parse("cpu") == tl::Device::cpu());
  CHECK(tl::Device::parse("cpu:0") == tl::Device::cpu());
  CHECK(tl::Device::parse("cpu:1") == tl::Device::cpu());  // torch: tensors land on the CPU
  CHECK(tl::Device::parse("cuda") == tl::Device::cuda(0));
  CHECK(tl::Device::parse("cuda:0") == tl::Device::cuda(0));
  CHECK(tl::Device::parse("cuda:10") == tl::Device::cuda(10));
  CHECK(tl::Device::parse("cuda:127") == tl::Device::cuda(127));
}

TEST_CASE("bad input: Timer and do_bench time arguments") {
  run_bad_inputs({
      // An infinite min_run_time used to make blocked_autorange loop for ever.
      TL_BAD(tl::Error, "[tl::bench::Timer::blocked_autorange] ", "min_run_time",
             idle_timer().blocked_autorange(INFINITY)),
      TL_BAD(tl::Error, "[tl::bench::Timer::blocked_autorange] ", "min_run_time",
             idle_timer().blocked_autorange(-INFINITY)),
      TL_BAD(tl::Error, "[tl::bench::Timer::blocked_autorange] ", "min_run_time",
             idle_timer().blocked_autorange(NAN)),
      TL_BAD(tl::Error, "[tl::bench::Timer::blocked_autorange] ", "min_run_time",
             idle_timer().blocked_autorange(0)),
      TL_BAD(tl::Error, "[tl::bench::Timer::blocked_autorange] ", "min_run_time",
             idle_timer().blocked_autorange(-1)),
      TL_BAD(tl::Error, "[tl::bench::Timer::adaptive_autorange] ", "threshold",
             idle_timer().adaptive_autorange(INFINITY)),
      TL_BAD(tl::Error, "[tl::bench::Timer::adaptive_autorange] ", "threshold",
             idle_timer().adaptive_autorange(NAN)),
      TL_BAD(tl::Error, "[tl::bench::Timer::adaptive_autorange] ", "threshold",
             idle_timer().adaptive_autorange(-0.1)),
      TL_BAD(tl::Error, "[tl::bench::Timer::adaptive_autorange] ", "min_run_time",
             idle_timer().adaptive_autorange(0.1, {.min_run_time = INFINITY})),
      TL_BAD(tl::Error, "[tl::bench::Timer::adaptive_autorange] ", "min_run_time",
             idle_timer().adaptive_autorange(0.1, {.min_run_time = NAN})),
      TL_BAD(tl::Error, "[tl::bench::Timer::adaptive_autorange] ", "min_run_time",
             idle_timer().adaptive_autorange(0.1, {.min_run_time = 0})),
      TL_BAD(tl::Error, "[tl::bench::Timer::adaptive_autorange] ", "max_run_time",
             idle_timer().adaptive_autorange(0.1, {.max_run_time = INFINITY})),
      TL_BAD(tl::Error, "[tl::bench::Timer::adaptive_autorange] ", "max_run_time",
             idle_timer().adaptive_autorange(0.1, {.max_run_time = NAN})),
      TL_BAD(tl::Error, "[tl::bench::Timer::adaptive_autorange] ", "max_run_time",
             idle_timer().adaptive_autorange(0.1, {.max_run_time = -1})),
      TL_BAD(tl::Error, "[tl::bench::Timer::timeit] ", "n >= 1", idle_timer().timeit(0)),
      TL_BAD(tl::Error, "[tl::bench::Timer::timeit] ", "n >= 1", idle_timer().timeit(-5)),
      TL_BAD(tl::Error, "[tl::bench::Timer] ", "num_threads",
             bench::Timer("x", [] {}, {.num_threads = -1})),
      TL_BAD(tl::Error, "[tl::bench::Timer] ", "no function", bench::Timer("x", nullptr)),
      // A clock returning inf or nan gives non-finite block times: refused, not looped on.
      TL_BAD(tl::Error, "[tl::bench::Timer::timeit] ", "options.timer",
             timer_with_clock(INFINITY).timeit(10)),
      TL_BAD(tl::Error, "[tl::bench::Timer::blocked_autorange] ", "options.timer",
             timer_with_clock(NAN).blocked_autorange(0.01)),
      TL_BAD(tl::Error, "[tl::bench::Timer::adaptive_autorange] ", "options.timer",
             timer_with_clock(-INFINITY).adaptive_autorange()),
      TL_BAD(tl::Error, "[tl::bench::Measurement::quantile] ", "q in [0, 1]",
             bench::Measurement{}.quantile(NAN)),
      // do_bench checks its arguments before looking for a device.
      TL_BAD(tl::Error, "[tl::bench::do_bench] ", "rep_ms",
             bench::do_bench([] {}, {.rep_ms = INFINITY})),
      TL_BAD(tl::Error, "[tl::bench::do_bench] ", "rep_ms",
             bench::do_bench([] {}, {.rep_ms = NAN})),
      TL_BAD(tl::Error, "[tl::bench::do_bench] ", "rep_ms", bench::do_bench([] {}, {.rep_ms = 0})),
      TL_BAD(tl::Error, "[tl::bench::do_bench] ", "warmup_ms",
             bench::do_bench([] {}, {.warmup_ms = INFINITY})),
      TL_BAD(tl::Error, "[tl::bench::do_bench] ", "warmup_ms",
             bench::do_bench([] {}, {.warmup_ms = -1})),
      TL_BAD(tl::Error, "[tl::bench::do_bench] ", "quantiles",
             bench::do_bench([] {}, {.quantiles = {0.5, NAN}})),
      TL_BAD(tl::Error, "[tl::bench::do_bench] ", "quantiles",
             bench::do_bench([] {}, {.quantiles = {1.5}})),
      TL_BAD(tl::DeviceError, "[tl::bench::do_bench] ", "device",
             bench::do_bench([] {}, {.device = -2})),
      TL_BAD_CUDA(tl::DeviceError, "[tl::bench::do_bench] ", "device 127",
                  bench::do_bench([] {}, {.device = 127})),
  });
}

TEST_CASE("bad input: printing past the shown-element limit") {
  // Summarising elides nothing from dims of at most 6: these would show 6^10, 4^13 and 6^16
  // elements (torch would try to print them all).
  run_bad_inputs({
      TL_BAD(tl::OutOfMemoryError, "[tl::operator<<] ", "limit",
             print_to_string(tl::ones({1}).expand(tl::Shape::filled(10, 6)))),
      TL_BAD(tl::OutOfMemoryError, "[tl::operator<<] ", "67108864",
             print_to_string(tl::ones({1}, tl::kInt64).expand(tl::Shape::filled(13, 4)))),
      TL_BAD(tl::OutOfMemoryError, "[tl::operator<<] ", "limit",
             print_to_string(tl::zeros({1}, tl::kBool).expand(tl::Shape::filled(16, 6)))),
      TL_BAD_CUDA(tl::OutOfMemoryError, "[tl::operator<<] ", "limit",
                  print_to_string(tl::ones({1}, kCuda).expand(tl::Shape::filled(10, 6)))),
  });
}

TEST_CASE("bad input: CUDA requested from a build without CUDA names the user's op") {
  if (tl::cuda::is_built()) {
    MESSAGE("skipped: tensorlet was built with CUDA");
    return;
  }
  run_bad_inputs({
      TL_BAD(tl::DeviceError, "[tl::zeros] ",
             "device cuda:0 requested, but tensorlet was built without CUDA",
             tl::zeros({2}, kCuda)),
      TL_BAD(tl::DeviceError, "[tl::ones] ", "cuda:0", tl::ones({2}, kCuda)),
      TL_BAD(tl::DeviceError, "[tl::empty] ", "cuda:0", tl::empty({2}, kCuda)),
      TL_BAD(tl::DeviceError, "[tl::full] ", "cuda:0", tl::full({2}, 1.5, kCuda)),
      TL_BAD(tl::DeviceError, "[tl::arange] ", "cuda:0", tl::arange(3, kCuda)),
      TL_BAD(tl::DeviceError, "[tl::linspace] ", "cuda:0", tl::linspace(0, 1, 5, kCuda)),
      TL_BAD(tl::DeviceError, "[tl::eye] ", "cuda:0", tl::eye(3, kCuda)),
      TL_BAD(tl::DeviceError, "[tl::rand] ", "cuda:0", tl::rand({2}, kCuda)),
      TL_BAD(tl::DeviceError, "[tl::randn] ", "cuda:0", tl::randn({2}, kCuda)),
      TL_BAD(tl::DeviceError, "[tl::from_vector] ", "cuda:1",
             tl::from_vector(std::vector<float>{1, 2}, {2}, tl::Device::cuda(1))),
      TL_BAD(tl::DeviceError, "[tl::to] ", "cuda:0", tl::ones({2}).to(kCuda)),
      TL_BAD(tl::DeviceError, "[tl::load_safetensors] ", "cuda:0",
             tl::load_safetensors("/nonexistent/x.safetensors", kCuda)),
      TL_BAD(tl::DeviceError, "[tl::to] ", "cuda:0", tl::ones({2}).cuda()),
      TL_BAD(tl::DeviceError, "[tl::zeros_like] ", "cuda:0",
             tl::zeros_like(tl::ones({2}), tl::TensorOptions(kCuda))),
      TL_BAD(tl::DeviceError, "[tl::full_like] ", "cuda:0",
             tl::full_like(tl::ones({2}), 3, tl::TensorOptions(kCuda))),
      TL_BAD(tl::DeviceError, "[tl::rand_like] ", "cuda:0",
             tl::rand_like(tl::ones({2}), tl::TensorOptions(kCuda))),
  });
  // The *_like family names itself, not the factory it calls, for an undefined input too.
  run_bad_inputs({
      TL_BAD(tl::Error, "[tl::zeros_like] ", "undefined", tl::zeros_like(tl::Tensor())),
      TL_BAD(tl::Error, "[tl::randn_like] ", "undefined", tl::randn_like(tl::Tensor())),
  });
}

TEST_CASE("bad input: CUDA device queries") {
  // A device index that names no device is refused in every build (without CUDA, or without a
  // device, for that reason instead).
  run_bad_inputs({
      TL_BAD(tl::DeviceError, "[tl::cuda::get_device_properties] ", "",
             tl::cuda::get_device_properties(127)),
      TL_BAD(tl::DeviceError, "[tl::cuda::get_device_properties] ", "",
             tl::cuda::get_device_properties(-2)),
      TL_BAD(tl::DeviceError, "[tl::cuda::mem_get_info] ", "", tl::cuda::mem_get_info(127)),
      TL_BAD(tl::DeviceError, "[tl::cuda::mem_get_info] ", "", tl::cuda::mem_get_info(-2)),
      TL_BAD_CUDA(tl::DeviceError, "[tl::cuda::get_device_properties] ", "cuda:127",
                  tl::cuda::get_device_properties(127)),
      TL_BAD_CUDA(tl::DeviceError, "[tl::cuda::mem_get_info] ", "cuda:-2",
                  tl::cuda::mem_get_info(-2)),
  });
  if (tl::cuda::is_available()) return;
  // No usable device: even the current device cannot be described; the message says why.
  run_bad_inputs({
      TL_BAD(tl::DeviceError, "[tl::cuda::get_device_properties] ", "CUDA",
             tl::cuda::get_device_properties()),
      TL_BAD(tl::DeviceError, "[tl::cuda::mem_get_info] ", "CUDA", tl::cuda::mem_get_info()),
      TL_BAD(tl::DeviceError, "[tl::cuda::mem_get_info] ", "CUDA", tl::cuda::mem_get_info(0)),
  });
}

TEST_CASE("bad input: nn::Linear") {
  using tl::nn::Linear;
  run_bad_inputs({
      TL_BAD(tl::ShapeError, "[tl::nn::Linear] ", "in_features=-1", Linear(-1, 2)),
      TL_BAD(tl::ShapeError, "[tl::nn::Linear] ", "out_features=-3", Linear(2, -3)),
      TL_BAD(tl::DTypeError, "[tl::nn::Linear] ", "int64", Linear(2, 3, true, tl::kInt64)),
      TL_BAD(tl::DTypeError, "[tl::nn::Linear] ", "bool", Linear(2, 3, false, tl::kBool)),
      // The input's last dim must be in_features (torch: "mat1 and mat2 shapes cannot be
      // multiplied"); a 0-dim input has no last dim.
      TL_BAD(tl::ShapeError, "[tl::nn::Linear::forward] ", "in_features=10",
             Linear(10, 1)(tl::ones({4, 3}))),
      TL_BAD(tl::ShapeError, "[tl::nn::Linear::forward] ", "[4, 3]",
             Linear(10, 1, false)(tl::ones({4, 3}))),
      TL_BAD(tl::ShapeError, "[tl::nn::Linear::forward] ", "in_features=1",
             Linear(1, 1)(tl::scalar_tensor(1.0))),
      TL_BAD(tl::DTypeError, "[tl::nn::Linear::forward] ", "float64",
             Linear(3, 2)(tl::ones({2, 3}, tl::kFloat64))),
      TL_BAD(tl::DTypeError, "[tl::nn::Linear::forward] ", "int64",
             Linear(3, 2)(tl::ones({2, 3}, tl::kInt64))),
      TL_BAD(tl::Error, "[tl::nn::Linear::forward] ", "undefined", Linear(3, 2)(tl::Tensor())),
      // Given parameters (DataParallel's replicas) are checked against the layer.
      TL_BAD(tl::Error, "[tl::nn::Linear::forward] ", "expected 2 parameters",
             Linear(3, 2)->forward({tl::ones({2, 3})}, tl::ones({1, 3}))),
      TL_BAD(tl::Error, "[tl::nn::Linear::forward] ", "expected 1 parameter",
             Linear(3, 2, false)->forward({}, tl::ones({1, 3}))),
      TL_BAD(tl::ShapeError, "[tl::nn::Linear::forward] ", "[2, 3]",
             Linear(3, 2)->forward({tl::ones({3, 2}), tl::ones({2})}, tl::ones({1, 3}))),
      TL_BAD(tl::ShapeError, "[tl::nn::Linear::forward] ", "bias of shape [2]",
             Linear(3, 2)->forward({tl::ones({2, 3}), tl::ones({3})}, tl::ones({1, 3}))),
      TL_BAD(tl::Error, "[tl::nn::Linear::forward] ", "undefined",
             Linear(3, 2)->forward({tl::ones({2, 3}), tl::Tensor()}, tl::ones({1, 3}))),
      // A module on a device that does not exist.
      TL_BAD(tl::DeviceError, "[tl::DataParallel] ", "cuda:127",
             tl::DataParallel(Linear(3, 2), {tl::Device::cuda(127)})),
      TL_BAD_CUDA(tl::DeviceError, "[tl::nn::Linear::forward] ", "cuda:0",
                  Linear(3, 2)(tl::ones({2, 3}, kCuda))),
      TL_BAD_CUDA(tl::DeviceError, "[tl::nn::Linear::forward] ", "cpu",
                  Linear(3, 2, true, kCuda)(tl::ones({2, 3}))),
  });
}

// Outside memory (ops/from_blob.h, io/dlpack.h), element access (tensor/accessor.h) and print
// options. Rows capture nothing: the wrapped memory is a global.
static float g_blob[16] = {};
TEST_CASE("bad input: tl::from_blob, DLPack, accessors and print options") {
  run_bad_inputs({
      TL_BAD(tl::ShapeError, "[tl::from_blob] ", "differ in length",
             tl::from_blob(g_blob, {2, 3}, {3})),
      TL_BAD(tl::ShapeError, "[tl::from_blob] ", "negative size -1", tl::from_blob(g_blob, {-1})),
      TL_BAD(tl::ShapeError, "[tl::from_blob] ", "negative stride -2",
             tl::from_blob(g_blob, {2}, {-2})),
      TL_BAD(tl::ShapeError, "[tl::from_blob] ", "overflowed",
             tl::from_blob(g_blob, {int64_t{1} << 32, int64_t{1} << 32})),
      TL_BAD(tl::ShapeError, "[tl::from_blob] ", "overflowed",
             tl::from_blob(g_blob, {3}, {int64_t{1} << 62})),
      TL_BAD(tl::Error, "[tl::from_blob] ", "null data pointer", tl::from_blob(nullptr, {1})),
      TL_BAD(tl::Error, "[tl::from_blob] ", "not aligned",
             tl::from_blob(reinterpret_cast<char*>(g_blob) + 2, {1})),
      TL_BAD_CUDA(tl::DeviceError, "[tl::from_blob] ", "host memory",
                  tl::from_blob(g_blob, {4}, tl::Device::cuda(0))),
      TL_BAD(tl::DTypeError, "[tl::Tensor::accessor] ", "float64",
             [] {
               const tl::Tensor t = tl::ones({2});
               return t.accessor<double, 1>().size(0);
             }()),
      TL_BAD(tl::ShapeError, "[tl::Tensor::accessor] ", "2-dim",
             [] {
               const tl::Tensor t = tl::ones({2});
               return t.accessor<float, 2>().size(0);
             }()),
      TL_BAD_CUDA(tl::DeviceError, "[tl::Tensor::accessor] ", "cuda:0",
                  [] {
                    const tl::Tensor t = tl::ones({2}, tl::Device::cuda(0));
                    return t.accessor<float, 1>().size(0);
                  }()),
      // Print options (ops/print_options.h): refused, and nothing changes.
      TL_BAD(tl::Error, "[tl::set_printoptions] ", "precision", tl::set_printoptions(-1)),
      TL_BAD(tl::Error, "[tl::set_printoptions] ", "threshold",
             tl::set_printoptions(std::nullopt, -5)),
      TL_BAD(tl::Error, "[tl::set_printoptions] ", "edgeitems",
             tl::set_printoptions(std::nullopt, std::nullopt, -1)),
      TL_BAD(tl::Error, "[tl::set_printoptions] ", "linewidth",
             tl::set_printoptions(std::nullopt, std::nullopt, std::nullopt, 0)),
      TL_BAD(tl::Error, "[tl::set_printoptions] ", "\"verbose\"",
             tl::set_printoptions(std::nullopt, std::nullopt, std::nullopt, std::nullopt,
                                  std::nullopt, "verbose")),
      TL_BAD(tl::Error, "[tl::from_dlpack] ", "null", tl::from_dlpack(nullptr)),
      TL_BAD(tl::Error, "[tl::to_dlpack] ", "undefined", tl::to_dlpack(tl::Tensor())),
      TL_BAD(tl::Error, "[tl::Tensor::packed_accessor32] ", "32-bit",
             [] {
               const tl::Tensor t = tl::ones({1}).expand({int64_t{1} << 31});
               return t.packed_accessor32<float, 1>().size(0);
             }()),
  });
}

// tl::cuda device queries in every build, and what using a CUDA device does without one: the
// answers are "no device" and typed errors, never a crash. GPU-only checks skip without a GPU.
#include <doctest/doctest.h>

#include <string>

#include <tensorlet/backends/cuda/cuda.h>
#include <tensorlet/tensorlet.h>

namespace tl = tensorlet;

TEST_CASE("cuda: device queries answer in every build") {
#if TL_WITH_CUDA
  CHECK(tl::cuda::is_built());
#else
  CHECK_FALSE(tl::cuda::is_built());
  CHECK(tl::cuda::device_count() == 0);
#endif
  CHECK(tl::cuda::device_count() >= 0);
  CHECK(tl::cuda::is_available() == (tl::cuda::device_count() > 0));
  CHECK(tl::cuda::device_count() == tl::cuda::device_count());  // cached, stable
}

TEST_CASE("cuda: without a usable device, CUDA tensors throw DeviceError") {
  if (tl::cuda::is_available()) {
    MESSAGE("skipped: a CUDA device is present");
    return;
  }
  for (int index : {0, 1}) {
    try {
      tl::empty({2, 3}, tl::Device::cuda(index));
      FAIL("expected tl::DeviceError for cuda:" << index);
    } catch (const tl::DeviceError& e) {
      CHECK(std::string(e.what()).rfind("[tl::", 0) == 0);
      CHECK(std::string(e.what()).find("cuda:" + std::to_string(index)) != std::string::npos);
    }
  }
  // The library stays usable after the error.
  CHECK(tl::empty({2}).numel() == 2);
}

TEST_CASE("cuda: an index past the last device throws DeviceError") {
  if (!tl::cuda::is_available()) {
    MESSAGE("skipped: no CUDA device");
    return;
  }
  const int n = tl::cuda::device_count();
  CHECK_THROWS_AS(tl::empty({2}, tl::Device::cuda(n)), tl::DeviceError);
}

TEST_CASE("cuda: get_device_properties and mem_get_info describe every device") {
  if (!tl::cuda::is_available()) {
    CHECK_THROWS_AS(tl::cuda::get_device_properties(), tl::DeviceError);
    CHECK_THROWS_AS(tl::cuda::mem_get_info(), tl::DeviceError);
    MESSAGE("skipped the device checks: no CUDA device");
    return;
  }
  for (int d = 0; d < tl::cuda::device_count(); ++d) {
    const tl::cuda::DeviceProperties p = tl::cuda::get_device_properties(d);
    INFO("cuda:" << d << " " << p.name);
    CHECK_FALSE(p.name.empty());
    CHECK(p.total_memory > 0);
    CHECK(p.multi_processor_count > 0);
    CHECK(p.major >= 3);
    CHECK(p.minor >= 0);
    const auto [free, total] = tl::cuda::mem_get_info(d);
    CHECK(total == p.total_memory);
    CHECK(free > 0);
    CHECK(free <= total);
  }
  // -1 is the current device, and asking leaves the current device as it was.
  const int current = tl::cuda::current_device();
  CHECK(tl::cuda::get_device_properties(-1).name == tl::cuda::get_device_properties(current).name);
  CHECK(tl::cuda::mem_get_info(-1).total == tl::cuda::mem_get_info(current).total);
  (void)tl::cuda::mem_get_info(tl::cuda::device_count() - 1);
  CHECK(tl::cuda::current_device() == current);
  // Memory a live tensor holds is no longer free; the cache is emptied first so the allocation
  // goes to the driver.
  tl::cuda::empty_cache();
  const int64_t before = tl::cuda::mem_get_info(0).free;
  const tl::Tensor big = tl::empty({int64_t{64} << 20}, tl::Device::cuda(0));
  CHECK(tl::cuda::mem_get_info(0).free <= before - big.nbytes());
}

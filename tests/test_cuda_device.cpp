// tl::cuda device queries in every build, and what using a CUDA device does without one: the
// answers are "no device" and typed errors, never a crash. GPU-only checks skip without a GPU.
#include <doctest/doctest.h>

#include <string>

#include <backends/cuda/cuda.h>
#include <tensorlet.h>

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

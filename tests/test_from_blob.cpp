// tl::from_blob: tensors over memory the caller owns (host and GPU), with LibTorch's overloads;
// the deleter runs once, when the last view is gone, and never when from_blob throws.
#include <cstdint>
#include <memory>
#include <numeric>
#include <random>
#include <vector>

#include "test_util.h"

namespace {

using tl::Tensor;

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

TEST_CASE("from_blob wraps host memory without copying; writes go both ways") {
  std::vector<float> buffer = random_floats(12, 1);
  Tensor t = tl::from_blob(buffer.data(), {3, 4});
  CHECK(t.data_ptr() == buffer.data());
  CHECK(t.dtype() == tl::kFloat32);
  CHECK(t.is_cpu());
  CHECK(t.is_contiguous());
  CHECK(t.storage()->external());
  CHECK(t.to_vector<float>() == buffer);
  t[1][2] = 7.5f;
  CHECK(buffer[6] == 7.5f);
  buffer[11] = -1.25f;
  CHECK(t[2][3].item<float>() == -1.25f);
  // Ops read it like any tensor.
  const double expected = std::accumulate(buffer.begin(), buffer.end(), 0.0);
  CHECK(t.sum().item<double>() == doctest::Approx(expected).epsilon(1e-6));
}

TEST_CASE("from_blob takes strides, dtypes and a storage-relative layout") {
  std::vector<double> buffer(24);
  std::iota(buffer.begin(), buffer.end(), 0.5);
  // A transposed view of a 4x6 row-major block: column-major 6x4.
  Tensor t = tl::from_blob(buffer.data(), {6, 4}, {1, 6}, tl::kFloat64);
  CHECK(t.dtype() == tl::kFloat64);
  CHECK_FALSE(t.is_contiguous());
  CHECK(t[2][3].item<double>() == buffer[3 * 6 + 2]);
  CHECK(tl::equal(t.contiguous(), tl::from_vector(buffer, {4, 6}, tl::Device::cpu()).t()));
  // A strided column, and a broadcast (stride 0) row.
  Tensor column = tl::from_blob(buffer.data() + 1, {4}, {6}, tl::kFloat64);
  CHECK(column.to_vector<double>() == std::vector<double>{1.5, 7.5, 13.5, 19.5});
  Tensor repeated = tl::from_blob(buffer.data(), {3, 2}, {0, 1}, tl::kFloat64);
  CHECK(repeated.to_vector<double>() == std::vector<double>{0.5, 1.5, 0.5, 1.5, 0.5, 1.5});
  std::vector<int64_t> ints{5, -3, 9};
  CHECK(tl::from_blob(ints.data(), {3}, tl::kInt64).to_vector<int64_t>() == ints);
}

TEST_CASE("from_blob's deleter runs once, after the last view dies") {
  auto* buffer = new std::vector<float>(random_floats(8, 2));
  int calls = 0;
  void* released = nullptr;
  Tensor view;
  {
    Tensor t = tl::from_blob(buffer->data(), {2, 4}, [&](void* p) {
      ++calls;
      released = p;
    });
    view = t[1].slice(0, 1, 3);
    CHECK(calls == 0);
  }
  CHECK(calls == 0);  // the view keeps the memory
  CHECK(view.to_vector<float>() == std::vector<float>{(*buffer)[5], (*buffer)[6]});
  view = Tensor();
  CHECK(calls == 1);
  CHECK(released == buffer->data());
  delete buffer;

  // The strided overload too; and no deleter when from_blob throws (the caller still owns it).
  std::vector<float> other = random_floats(6, 3);
  int strided_calls = 0;
  {
    Tensor s = tl::from_blob(other.data(), {3, 2}, {1, 3}, [&](void*) { ++strided_calls; });
  }
  CHECK(strided_calls == 1);
  int failed_calls = 0;
  CHECK_THROWS_AS(tl::from_blob(other.data(), {3, 2}, {-1, 3}, [&](void*) { ++failed_calls; }),
                  tl::ShapeError);
  CHECK(failed_calls == 0);
}

TEST_CASE("from_blob's zero-size and 0-dim tensors") {
  Tensor empty = tl::from_blob(nullptr, {0, 5});
  CHECK(empty.numel() == 0);
  CHECK(empty.storage()->nbytes() == 0);
  float value = 2.5f;
  Tensor scalar = tl::from_blob(&value, {});
  CHECK(scalar.dim() == 0);
  CHECK(scalar.item<float>() == 2.5f);
}

TEST_CASE("from_blob refuses what it cannot wrap, naming itself") {
  std::vector<float> buffer(16, 1.0f);
  tl_test::check_throws<tl::ShapeError>(
      [&] {
        tl::from_blob(buffer.data(), {2, 3}, {3});
      },
      "[tl::from_blob] sizes [2, 3] and strides [3]");
  tl_test::check_throws<tl::ShapeError>(
      [&] {
        tl::from_blob(buffer.data(), {2, -3});
      },
      "[tl::from_blob] negative size -3");
  tl_test::check_throws<tl::ShapeError>(
      [&] {
        tl::from_blob(buffer.data(), {2, 3}, {3, -1});
      },
      "[tl::from_blob] negative stride -1");
  tl_test::check_throws<tl::ShapeError>(
      [&] {
        tl::from_blob(buffer.data(), {int64_t{1} << 40, int64_t{1} << 40});
      },
      "[tl::from_blob] Storage size calculation overflowed");
  tl_test::check_throws<tl::ShapeError>(
      [&] {
        tl::from_blob(buffer.data(), {2, 2}, {int64_t{1} << 62, 1});
      },
      "[tl::from_blob] Storage size calculation overflowed");
  tl_test::check_throws<tl::Error>([&] { tl::from_blob(nullptr, {2}); },
                                   "[tl::from_blob] a null data pointer");
  tl_test::check_throws<tl::Error>(
      [&] { tl::from_blob(reinterpret_cast<char*>(buffer.data()) + 1, {2}); },
      "[tl::from_blob] the data pointer");
  if (!tl::cuda::is_available()) {
    // A CPU-only build, or no GPU: cuda memory cannot be wrapped.
    CHECK_THROWS_AS(tl::from_blob(buffer.data(), {2}, tl::Device::cuda(0)), tl::DeviceError);
  }
}

TEST_CASE("from_blob wraps GPU memory on its device and refuses a pointer on the wrong side") {
  TL_TEST_REQUIRE_CUDA();
  const tl::Device gpu = tl::Device::cuda(0);
  Tensor owner = tl::rand({5, 7}, gpu);
  auto keep = std::make_shared<Tensor>(owner);
  int calls = 0;
  {
    Tensor t = tl::from_blob(
        owner.data_ptr(), {7, 5}, {1, 7},
        [keep, &calls](void*) mutable {
          ++calls;
          keep.reset();
        },
        tl::TensorOptions(tl::kFloat32).device(gpu));
    CHECK(t.data_ptr() == owner.data_ptr());
    CHECK(t.is_cuda());
    CHECK(tl::equal(t.cpu(), owner.cpu().t()));
    t.mul_(2.0);  // a kernel writes through it; the owner sees it
    CHECK(tl::allclose(owner.t().cpu(), t.cpu()));
  }
  CHECK(calls == 1);
  std::vector<float> host(4, 1.0f);
  tl_test::check_throws<tl::DeviceError>([&] { tl::from_blob(host.data(), {4}, gpu); },
                                         "is host memory");
  tl_test::check_throws<tl::DeviceError>(
      [&] { tl::from_blob(owner.data_ptr(), {4}, tl::Device::cpu()); }, "is on cuda:0");
}

}  // namespace

// Tensor::accessor and the packed accessors: LibTorch's element access, checked dtype, rank and
// device, strides honoured, and 32-bit indexing refused where it would overflow.
#include <cstdint>
#include <vector>

#include "test_util.h"

#ifdef TL_TEST_WITH_CUDA_KERNELS
namespace tl_test {
tl::Tensor scale_rows_packed(const tl::Tensor& in, bool use64);  // cuda_accessor_kernel.cu
}
#endif

namespace {

using tl::Tensor;

// An accessor of a temporary would borrow dead sizes: it does not compile.
template <typename T>
concept AccessibleFromRvalue = requires(T t) {
  std::move(t).template accessor<float, 1>();
};
static_assert(!AccessibleFromRvalue<Tensor>);

TEST_CASE("accessor reads and writes through the strides") {
  Tensor x = tl_test::random_tensor({4, 6}, tl::kFloat32);
  auto a = x.accessor<float, 2>();
  CHECK(a.size(0) == 4);
  CHECK(a.size(1) == 6);
  CHECK(a.stride(0) == 6);
  std::vector<float> expected = x.to_vector<float>();
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 6; ++j) CHECK(a[i][j] == expected[static_cast<size_t>(i * 6 + j)]);
  a[2][3] = 42.0f;
  CHECK(x[2][3].item<float>() == 42.0f);

  // A transposed, sliced view: indices follow the view, not the memory.
  Tensor v = x.t().slice(0, 1, 5, 2);  // [2, 4]
  auto b = v.accessor<float, 2>();
  for (int64_t i = 0; i < v.size(0); ++i)
    for (int64_t j = 0; j < v.size(1); ++j) CHECK(b[i][j] == v[i][j].item<float>());

  // const elements, other dtypes, 3 dims.
  Tensor n = tl::arange(24, tl::kInt64).view({2, 3, 4});
  auto c = n.accessor<const int64_t, 3>();
  CHECK(c[1][2][3] == 23);
  CHECK(c[1][0][2] == 14);
  Tensor h = tl::full({3}, 1.5, tl::kFloat16);
  CHECK(static_cast<float>(h.accessor<tl::Half, 1>()[2]) == 1.5f);
}

TEST_CASE("packed accessors copy sizes and strides and index like the tensor") {
  Tensor x = tl_test::random_tensor({3, 5}, tl::kFloat64);
  auto p32 = x.packed_accessor32<double, 2>();
  auto p64 = x.packed_accessor64<double, 2, tl::RestrictPtrTraits>();
  static_assert(std::is_same_v<decltype(p32.size(0)), int32_t>);
  static_assert(std::is_same_v<decltype(p64.size(0)), int64_t>);
  std::vector<double> expected = x.to_vector<double>();
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 5; ++j) {
      CHECK(p32[i][j] == expected[static_cast<size_t>(i * 5 + j)]);
      CHECK(p64[i][j] == expected[static_cast<size_t>(i * 5 + j)]);
    }
  Tensor row = x[1];
  auto r = row.packed_accessor32<double, 1>();
  r[4] = -3.0;
  CHECK(x[1][4].item<double>() == -3.0);
}

TEST_CASE("accessor refuses a wrong dtype, rank or device, naming itself") {
  Tensor x = tl::ones({2, 3});
  tl_test::check_throws<tl::DTypeError>([&] { (void)x.accessor<double, 2>(); },
                                        "[tl::Tensor::accessor] expected a tensor of float64");
  tl_test::check_throws<tl::ShapeError>([&] { (void)x.accessor<float, 3>(); },
                                        "[tl::Tensor::accessor] expected a 3-dim tensor");
  tl_test::check_throws<tl::DTypeError>([&] { (void)x.packed_accessor32<int32_t, 2>(); },
                                        "[tl::Tensor::packed_accessor32]");
  const Tensor undefined;
  tl_test::check_throws<tl::Error>([&] { (void)undefined.accessor<float, 1>(); },
                                   "[tl::Tensor::accessor] expected a defined tensor");
  // Sizes past int32: fine for 64-bit indexing, refused for 32-bit.
  Tensor wide = tl::ones({1}).expand({int64_t{1} << 33});
  CHECK(wide.packed_accessor64<float, 1>().size(0) == int64_t{1} << 33);
  tl_test::check_throws<tl::Error>([&] { (void)wide.packed_accessor32<float, 1>(); },
                                   "do not fit 32-bit indexing");
  if (tl::cuda::is_available()) {
    Tensor g = tl::ones({2}, tl::Device::cuda(0));
    tl_test::check_throws<tl::DeviceError>([&] { (void)g.accessor<float, 1>(); },
                                           "[tl::Tensor::accessor] the tensor is on cuda:0");
    CHECK(g.packed_accessor32<float, 1>().data() == g.data_ptr());
  }
}

TEST_CASE("packed accessors index a CUDA kernel's tensors through their strides") {
  TL_TEST_REQUIRE_CUDA();
#ifdef TL_TEST_WITH_CUDA_KERNELS
  const tl::Device gpu = tl::Device::cuda(0);
  Tensor host = tl_test::random_tensor({37, 70}, tl::kFloat32);
  Tensor rows = (tl::arange(37, tl::kFloat32) + 1).unsqueeze(1);
  Tensor cols = tl::arange(100, tl::kFloat32).unsqueeze(0);
  for (bool use64 : {false, true}) {
    // Contiguous, and a transposed slice of a bigger block.
    Tensor contiguous = host.to(gpu);
    Tensor strided = tl_test::random_tensor({80, 50}, tl::kFloat32).to(gpu).t().slice(0, 3, 40);
    for (const Tensor& in : {contiguous, strided}) {
      Tensor expected = in.cpu() * rows.slice(0, 0, in.size(0)) + cols.slice(1, 0, in.size(1));
      Tensor got = tl_test::scale_rows_packed(in, use64).cpu();
      // The kernel may fuse the multiply-add (one rounding): an absolute tolerance of a few ulps
      // of the largest value, not allclose's 1e-8 near zero.
      const double worst = (got - expected).abs().max().item<double>();
      INFO("use64 " << use64 << ", strided " << !in.is_contiguous() << ", worst " << worst
                    << "\ngot " << got.slice(0, 0, 2) << "\nexpected " << expected.slice(0, 0, 2));
      CHECK(worst <= 1e-4);
    }
  }
#endif
}

}  // namespace

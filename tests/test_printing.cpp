// operator<< prints tensors the way PyTorch does.
#include <sstream>

#include "test_util.h"

using namespace tl_test;

namespace {
std::string str(const tl::Tensor& t) {
  std::ostringstream os;
  os << t;
  return os.str();
}
}  // namespace

TEST_CASE("printing: floats, ints, bools and 0-dim") {
  CHECK(str(tl::from_vector(std::vector<float>{0.1f, 0.2f, 0.3f, 0.4f}, {2, 2})) ==
        "tensor([[0.1000, 0.2000],\n        [0.3000, 0.4000]])");
  CHECK(str(tl::from_vector(std::vector<float>{1, 2, 3})) == "tensor([1., 2., 3.])");
  CHECK(str(tl::from_vector(std::vector<float>{-1.5f, 20})) == "tensor([-1.5000, 20.0000])");
  CHECK(str(tl::arange(3)) == "tensor([0, 1, 2])");
  CHECK(str(tl::arange(3, tl::kInt32)) == "tensor([0, 1, 2], dtype=torch.int32)");
  CHECK(str(tl::from_vector(std::vector<double>{1.5})) == "tensor([1.5000], dtype=torch.float64)");
  CHECK(str(tl::from_vector(std::vector<bool>{true, false})) == "tensor([ True, False])");
  CHECK(str(tl::full({}, 2.5)) == "tensor(2.5000)");
  CHECK(str(tl::from_vector(std::vector<float>{1e-5f, 1})) == "tensor([1.0000e-05, 1.0000e+00])");
  CHECK(str(tl::from_vector(std::vector<float>{0.0f / 0.0f, 1.0f / 0.0f, 1})) ==
        "tensor([nan, inf, 1.])");
}

TEST_CASE("printing: empty, 3-D and summarised tensors") {
  CHECK(str(tl::zeros({0})) == "tensor([])");
  CHECK(str(tl::zeros({0, 3})) == "tensor([], size=(0, 3))");
  CHECK(str(tl::arange(8).view({2, 2, 2})) ==
        "tensor([[[0, 1],\n         [2, 3]],\n\n        [[4, 5],\n         [6, 7]]])");
  CHECK(str(tl::arange(2000)) == "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])");
  CHECK(str(tl::arange(2000, tl::kFloat32)) ==
        "tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n        "
        "1.9990e+03])");
  std::string big = str(tl::arange(4000).view({1000, 4}));
  CHECK(big.find("...") != std::string::npos);
  CHECK(big.rfind("[3996, 3997, 3998, 3999]]") != std::string::npos);
  // Long rows wrap at 80 columns, continuing under the first element.
  std::string row = str(tl::arange(30));
  CHECK(row.find("\n        ") != std::string::npos);
  CHECK(str(tl::Tensor()) == "[ undefined tensor ]");
}

TEST_CASE("printing: CUDA tensors print their values and device") {
  TL_TEST_REQUIRE_CUDA();
  const tl::Device cuda = tl::Device::cuda(0);
  CHECK(str(tl::arange(3).to(cuda)) == "tensor([0, 1, 2], device='cuda:0')");
  CHECK(str(tl::arange(3, tl::kInt32).to(cuda)) ==
        "tensor([0, 1, 2], device='cuda:0', dtype=torch.int32)");
  CHECK(str(tl::zeros({0, 3}, cuda)) == "tensor([], size=(0, 3), device='cuda:0')");
  CHECK(str(tl::full({}, 2.5, cuda)) == "tensor(2.5000, device='cuda:0')");
  // A transposed device view prints like its host copy.
  tl::Tensor x = random_tensor({4, 3}, tl::kFloat64);
  std::string host = str(x.t());
  std::string device = str(x.to(cuda).t());
  host.insert(host.rfind(", dtype="), ", device='cuda:0'");
  CHECK(device == host);
}

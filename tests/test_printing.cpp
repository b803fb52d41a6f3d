// operator<< prints tensors the way PyTorch does.
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "tensorlet/ops/printing_suffixes.h"
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
  // torch's order: device, then size, then dtype.
  CHECK(str(tl::zeros({0, 3}, cuda)) == "tensor([], device='cuda:0', size=(0, 3))");
  CHECK(str(tl::full({}, 2.5, cuda)) == "tensor(2.5000, device='cuda:0')");
  // A transposed device view prints like its host copy (the suffixes aside).
  // (Fixed values: random ones in scientific notation could push the suffix onto a new line.)
  tl::Tensor x = (tl::arange(12, tl::kFloat32) - 5).view({4, 3}) / 7;
  std::string host = str(x.t());
  std::string device = str(x.to(cuda).t());
  host.insert(host.size() - 1, ", device='cuda:0'");
  CHECK(device == host);
}

namespace {
tl::TensorOptions opts(tl::DType dtype, tl::Device device) {
  return tl::TensorOptions(dtype).device(device);
}

struct PrintCase {
  std::string expr;
  std::function<tl::Tensor(tl::Device)> make;
  std::string cpu;   // repr(x) in torch
  std::string cuda;  // the same values on cuda:0 (torch's _str_intern suffixes for that device)
};
// Expected strings generated with torch 2.15: repr(x) on the CPU, and for cuda:0 torch's own
// _add_suffixes("tensor(" + _tensor_str(x, 7), ["device='cuda:0'", ...], 7, False).
#define PRINT_CASE(cpu, cuda, ...)                                    \
  PrintCase {                                                         \
#__VA_ARGS__, [](tl::Device d) { return __VA_ARGS__; }, cpu, cuda \
  }

std::vector<PrintCase> print_cases() {
  return {
      PRINT_CASE("tensor([9223372036854775807])", "tensor([9223372036854775807], device='cuda:0')",
                 tl::full({1}, INT64_MAX, opts(tl::kInt64, d))),
      PRINT_CASE("tensor(-9223372036854775808)", "tensor(-9223372036854775808, device='cuda:0')",
                 tl::full({}, INT64_MIN, opts(tl::kInt64, d))),
      PRINT_CASE("tensor([ 9007199254740993, -9007199254740993])",
                 "tensor([ 9007199254740993, -9007199254740993], device='cuda:0')",
                 tl::from_vector(
                     std::vector<int64_t>{(int64_t(1) << 53) + 1, -(int64_t(1) << 53) - 1}, {}, d)),
      PRINT_CASE("tensor([ 2147483647, -2147483648], dtype=torch.int32)",
                 "tensor([ 2147483647, -2147483648], device='cuda:0', dtype=torch.int32)",
                 tl::from_vector(std::vector<int32_t>{INT32_MAX, INT32_MIN}, {}, d)),
      PRINT_CASE("tensor([                  1,    4503599627370497,    9007199254740993,\n"
                 "         ..., 8993688455858880513, 8998192055486251009,\n"
                 "        9002695655113621505])",
                 "tensor([                  1,    4503599627370497,    9007199254740993,\n"
                 "         ..., 8993688455858880513, 8998192055486251009,\n"
                 "        9002695655113621505], device='cuda:0')",
                 tl::arange(2000, d) * (int64_t(1) << 52) + 1),
      PRINT_CASE("tensor([1., 1., 1.,  ..., 1., 1., 1.])",
                 "tensor([1., 1., 1.,  ..., 1., 1., 1.], device='cuda:0')",
                 tl::ones({1}, d).expand({int64_t(1) << 40})),
      PRINT_CASE("tensor([[0, 0, 0,  ..., 0, 0, 0],\n"
                 "        [1, 1, 1,  ..., 1, 1, 1],\n"
                 "        [2, 2, 2,  ..., 2, 2, 2],\n"
                 "        [3, 3, 3,  ..., 3, 3, 3],\n"
                 "        [4, 4, 4,  ..., 4, 4, 4]])",
                 "tensor([[0, 0, 0,  ..., 0, 0, 0],\n"
                 "        [1, 1, 1,  ..., 1, 1, 1],\n"
                 "        [2, 2, 2,  ..., 2, 2, 2],\n"
                 "        [3, 3, 3,  ..., 3, 3, 3],\n"
                 "        [4, 4, 4,  ..., 4, 4, 4]], device='cuda:0')",
                 tl::arange(5, d).view({5, 1}).expand({5, int64_t(1) << 30})),
      PRINT_CASE("tensor([[[   0,    1,    2,  ...,   17,   18,   19],\n"
                 "         [  20,   21,   22,  ...,   37,   38,   39],\n"
                 "         [  40,   41,   42,  ...,   57,   58,   59],\n"
                 "         ...,\n"
                 "         [ 100,  101,  102,  ...,  117,  118,  119],\n"
                 "         [ 120,  121,  122,  ...,  137,  138,  139],\n"
                 "         [ 140,  141,  142,  ...,  157,  158,  159]],\n"
                 "\n"
                 "        [[ 160,  161,  162,  ...,  177,  178,  179],\n"
                 "         [ 180,  181,  182,  ...,  197,  198,  199],\n"
                 "         [ 200,  201,  202,  ...,  217,  218,  219],\n"
                 "         ...,\n"
                 "         [ 260,  261,  262,  ...,  277,  278,  279],\n"
                 "         [ 280,  281,  282,  ...,  297,  298,  299],\n"
                 "         [ 300,  301,  302,  ...,  317,  318,  319]],\n"
                 "\n"
                 "        [[ 320,  321,  322,  ...,  337,  338,  339],\n"
                 "         [ 340,  341,  342,  ...,  357,  358,  359],\n"
                 "         [ 360,  361,  362,  ...,  377,  378,  379],\n"
                 "         ...,\n"
                 "         [ 420,  421,  422,  ...,  437,  438,  439],\n"
                 "         [ 440,  441,  442,  ...,  457,  458,  459],\n"
                 "         [ 460,  461,  462,  ...,  477,  478,  479]],\n"
                 "\n"
                 "        ...,\n"
                 "\n"
                 "        [[ 800,  801,  802,  ...,  817,  818,  819],\n"
                 "         [ 820,  821,  822,  ...,  837,  838,  839],\n"
                 "         [ 840,  841,  842,  ...,  857,  858,  859],\n"
                 "         ...,\n"
                 "         [ 900,  901,  902,  ...,  917,  918,  919],\n"
                 "         [ 920,  921,  922,  ...,  937,  938,  939],\n"
                 "         [ 940,  941,  942,  ...,  957,  958,  959]],\n"
                 "\n"
                 "        [[ 960,  961,  962,  ...,  977,  978,  979],\n"
                 "         [ 980,  981,  982,  ...,  997,  998,  999],\n"
                 "         [1000, 1001, 1002,  ..., 1017, 1018, 1019],\n"
                 "         ...,\n"
                 "         [1060, 1061, 1062,  ..., 1077, 1078, 1079],\n"
                 "         [1080, 1081, 1082,  ..., 1097, 1098, 1099],\n"
                 "         [1100, 1101, 1102,  ..., 1117, 1118, 1119]],\n"
                 "\n"
                 "        [[1120, 1121, 1122,  ..., 1137, 1138, 1139],\n"
                 "         [1140, 1141, 1142,  ..., 1157, 1158, 1159],\n"
                 "         [1160, 1161, 1162,  ..., 1177, 1178, 1179],\n"
                 "         ...,\n"
                 "         [1220, 1221, 1222,  ..., 1237, 1238, 1239],\n"
                 "         [1240, 1241, 1242,  ..., 1257, 1258, 1259],\n"
                 "         [1260, 1261, 1262,  ..., 1277, 1278, 1279]]])",
                 "tensor([[[   0,    1,    2,  ...,   17,   18,   19],\n"
                 "         [  20,   21,   22,  ...,   37,   38,   39],\n"
                 "         [  40,   41,   42,  ...,   57,   58,   59],\n"
                 "         ...,\n"
                 "         [ 100,  101,  102,  ...,  117,  118,  119],\n"
                 "         [ 120,  121,  122,  ...,  137,  138,  139],\n"
                 "         [ 140,  141,  142,  ...,  157,  158,  159]],\n"
                 "\n"
                 "        [[ 160,  161,  162,  ...,  177,  178,  179],\n"
                 "         [ 180,  181,  182,  ...,  197,  198,  199],\n"
                 "         [ 200,  201,  202,  ...,  217,  218,  219],\n"
                 "         ...,\n"
                 "         [ 260,  261,  262,  ...,  277,  278,  279],\n"
                 "         [ 280,  281,  282,  ...,  297,  298,  299],\n"
                 "         [ 300,  301,  302,  ...,  317,  318,  319]],\n"
                 "\n"
                 "        [[ 320,  321,  322,  ...,  337,  338,  339],\n"
                 "         [ 340,  341,  342,  ...,  357,  358,  359],\n"
                 "         [ 360,  361,  362,  ...,  377,  378,  379],\n"
                 "         ...,\n"
                 "         [ 420,  421,  422,  ...,  437,  438,  439],\n"
                 "         [ 440,  441,  442,  ...,  457,  458,  459],\n"
                 "         [ 460,  461,  462,  ...,  477,  478,  479]],\n"
                 "\n"
                 "        ...,\n"
                 "\n"
                 "        [[ 800,  801,  802,  ...,  817,  818,  819],\n"
                 "         [ 820,  821,  822,  ...,  837,  838,  839],\n"
                 "         [ 840,  841,  842,  ...,  857,  858,  859],\n"
                 "         ...,\n"
                 "         [ 900,  901,  902,  ...,  917,  918,  919],\n"
                 "         [ 920,  921,  922,  ...,  937,  938,  939],\n"
                 "         [ 940,  941,  942,  ...,  957,  958,  959]],\n"
                 "\n"
                 "        [[ 960,  961,  962,  ...,  977,  978,  979],\n"
                 "         [ 980,  981,  982,  ...,  997,  998,  999],\n"
                 "         [1000, 1001, 1002,  ..., 1017, 1018, 1019],\n"
                 "         ...,\n"
                 "         [1060, 1061, 1062,  ..., 1077, 1078, 1079],\n"
                 "         [1080, 1081, 1082,  ..., 1097, 1098, 1099],\n"
                 "         [1100, 1101, 1102,  ..., 1117, 1118, 1119]],\n"
                 "\n"
                 "        [[1120, 1121, 1122,  ..., 1137, 1138, 1139],\n"
                 "         [1140, 1141, 1142,  ..., 1157, 1158, 1159],\n"
                 "         [1160, 1161, 1162,  ..., 1177, 1178, 1179],\n"
                 "         ...,\n"
                 "         [1220, 1221, 1222,  ..., 1237, 1238, 1239],\n"
                 "         [1240, 1241, 1242,  ..., 1257, 1258, 1259],\n"
                 "         [1260, 1261, 1262,  ..., 1277, 1278, 1279]]], device='cuda:0')",
                 tl::arange(8 * 8 * 20, d).view({8, 8, 20})),
      PRINT_CASE("tensor([[0.0000e+00, 5.0000e+00, 1.0000e+01,  ..., 1.3500e+02, 1.4000e+02,\n"
                 "         1.4500e+02],\n"
                 "        [1.2500e-01, 5.1250e+00, 1.0125e+01,  ..., 1.3512e+02, 1.4012e+02,\n"
                 "         1.4512e+02],\n"
                 "        [2.5000e-01, 5.2500e+00, 1.0250e+01,  ..., 1.3525e+02, 1.4025e+02,\n"
                 "         1.4525e+02],\n"
                 "        ...,\n"
                 "        [4.6250e+00, 9.6250e+00, 1.4625e+01,  ..., 1.3962e+02, 1.4462e+02,\n"
                 "         1.4962e+02],\n"
                 "        [4.7500e+00, 9.7500e+00, 1.4750e+01,  ..., 1.3975e+02, 1.4475e+02,\n"
                 "         1.4975e+02],\n"
                 "        [4.8750e+00, 9.8750e+00, 1.4875e+01,  ..., 1.3988e+02, 1.4488e+02,\n"
                 "         1.4988e+02]], dtype=torch.float64)",
                 "tensor([[0.0000e+00, 5.0000e+00, 1.0000e+01,  ..., 1.3500e+02, 1.4000e+02,\n"
                 "         1.4500e+02],\n"
                 "        [1.2500e-01, 5.1250e+00, 1.0125e+01,  ..., 1.3512e+02, 1.4012e+02,\n"
                 "         1.4512e+02],\n"
                 "        [2.5000e-01, 5.2500e+00, 1.0250e+01,  ..., 1.3525e+02, 1.4025e+02,\n"
                 "         1.4525e+02],\n"
                 "        ...,\n"
                 "        [4.6250e+00, 9.6250e+00, 1.4625e+01,  ..., 1.3962e+02, 1.4462e+02,\n"
                 "         1.4962e+02],\n"
                 "        [4.7500e+00, 9.7500e+00, 1.4750e+01,  ..., 1.3975e+02, 1.4475e+02,\n"
                 "         1.4975e+02],\n"
                 "        [4.8750e+00, 9.8750e+00, 1.4875e+01,  ..., 1.3988e+02, 1.4488e+02,\n"
                 "         1.4988e+02]], device='cuda:0', dtype=torch.float64)",
                 tl::arange(1200, opts(tl::kFloat64, d)).view({30, 40}).t() / 8),
      PRINT_CASE("tensor([ 100,  103,  106,  ..., 3991, 3994, 3997])",
                 "tensor([ 100,  103,  106,  ..., 3991, 3994, 3997], device='cuda:0')",
                 tl::arange(5000, d).slice(0, 100, 4000, 3)),
      PRINT_CASE("tensor([False, False, False,  ...,  True,  True,  True])",
                 "tensor([False, False, False,  ...,  True,  True,  True], device='cuda:0')",
                 tl::arange(2000, d) > 1500),
      PRINT_CASE("tensor([], size=(0, 3), dtype=torch.int32)",
                 "tensor([], device='cuda:0', size=(0, 3), dtype=torch.int32)",
                 tl::empty({0, 3}, opts(tl::kInt32, d))),
      PRINT_CASE("tensor([], dtype=torch.int64)", "tensor([], device='cuda:0', dtype=torch.int64)",
                 tl::empty({0}, opts(tl::kInt64, d))),
      PRINT_CASE("tensor([], size=(2, 0), dtype=torch.bool)",
                 "tensor([], device='cuda:0', size=(2, 0), dtype=torch.bool)",
                 tl::empty({2, 0}, opts(tl::kBool, d))),
      PRINT_CASE("tensor([], size=(0, 3))", "tensor([], device='cuda:0', size=(0, 3))",
                 tl::zeros({0, 3}, d)),
      PRINT_CASE("tensor([[0.0000, 0.4286, 0.8571, 1.2857],\n"
                 "        [0.1429, 0.5714, 1.0000, 1.4286],\n"
                 "        [0.2857, 0.7143, 1.1429, 1.5714]], dtype=torch.float64)",
                 "tensor([[0.0000, 0.4286, 0.8571, 1.2857],\n"
                 "        [0.1429, 0.5714, 1.0000, 1.4286],\n"
                 "        [0.2857, 0.7143, 1.1429, 1.5714]], device='cuda:0',\n"
                 "       dtype=torch.float64)",
                 (tl::arange(12, opts(tl::kFloat64, d)) / 7).view({4, 3}).t()),
      PRINT_CASE("tensor([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11.],\n"
                 "       dtype=torch.float64)",
                 "tensor([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11.],\n"
                 "       device='cuda:0', dtype=torch.float64)",
                 tl::arange(12, opts(tl::kFloat64, d))),
      PRINT_CASE("tensor([    0,  1000,  2000,  3000,  4000,  5000,  6000,  7000,  8000,  9000,\n"
                 "        10000, 11000, 12000, 13000, 14000, 15000, 16000, 17000, 18000, 19000,\n"
                 "        20000, 21000, 22000, 23000, 24000], dtype=torch.int32)",
                 "tensor([    0,  1000,  2000,  3000,  4000,  5000,  6000,  7000,  8000,  9000,\n"
                 "        10000, 11000, 12000, 13000, 14000, 15000, 16000, 17000, 18000, 19000,\n"
                 "        20000, 21000, 22000, 23000, 24000], device='cuda:0', dtype=torch.int32)",
                 tl::arange(25, opts(tl::kInt32, d)) * 1000),
      PRINT_CASE("tensor([   0,    1,    2,  ..., 1997, 1998, 1999], dtype=torch.int32)",
                 "tensor([   0,    1,    2,  ..., 1997, 1998, 1999], device='cuda:0',\n"
                 "       dtype=torch.int32)",
                 tl::arange(2000, opts(tl::kInt32, d))),
  };
}
#undef PRINT_CASE

void check_cases(tl::Device device) {
  for (const PrintCase& c : print_cases()) {
    INFO(c.expr << " on " << device);
    CHECK(str(c.make(device)) == (device.is_cpu() ? c.cpu : c.cuda));
  }
}
}  // namespace

TEST_CASE("printing: integers exactly, huge broadcasts summarised, suffixes wrapped as torch") {
  check_cases(tl::Device::cpu());
}

TEST_CASE("printing: the same cases on a CUDA device (strided views gathered there)") {
  TL_TEST_REQUIRE_CUDA();
  check_cases(tl::Device::cuda(0));
}

TEST_CASE("printing: summarised with nothing to elide shows every element, as torch") {
  // 1024 elements (> 1000, so summarised) in dims of 2: torch prints all of them.
  std::string s = str(tl::ones({1}).expand(tl::Shape::filled(10, 2)));
  CHECK(s.size() == 14324);  // len(repr(torch.ones(1).expand([2] * 10)))
  CHECK(s.find("...") == std::string::npos);
  CHECK(s.rfind("tensor([[[[[[[[[[1., 1.],\n                [1., 1.]],\n\n", 0) == 0);
  const std::string tail = "[[1., 1.],\n                [1., 1.]]]]]]]]]])";
  CHECK(s.substr(s.size() - tail.size()) == tail);
}

TEST_CASE("printing: suffixes wrap at 80 columns, in torch's order") {
  using tl::printing::add_suffixes;
  // torch counts the last line as 2 longer than it is before the first suffix.
  CHECK(add_suffixes(std::string(70, 'x'), {"dtype=torch.int32"}, 7) ==
        std::string(70, 'x') + ",\n       dtype=torch.int32)");
  CHECK(add_suffixes(std::string(59, 'x'), {"dtype=torch.int32"}, 7) ==
        std::string(59, 'x') + ", dtype=torch.int32)");
  CHECK(add_suffixes(std::string(60, 'x'), {"dtype=torch.int32"}, 7) ==
        std::string(60, 'x') + ",\n       dtype=torch.int32)");
  CHECK(add_suffixes("ab\ncd", {"device='cuda:0'", "size=(0, 3)"}, 7) ==
        "ab\ncd, device='cuda:0', size=(0, 3))");
  CHECK(add_suffixes("tensor([]", {}, 7) == "tensor([])");
}

TEST_CASE("printing: float16, bfloat16, uint8, int8 and int16 as torch prints them") {
  // Expected strings: str() of the same values in torch 2.15 (CPU), made from float64 with .to().
  CHECK(str(tl::from_vector(std::vector<double>{1.0, 2.5}).to(tl::kFloat16)) ==
        "tensor([1.0000, 2.5000], dtype=torch.float16)");
  CHECK(str(tl::from_vector(std::vector<double>{0.1, 0.2, 0.3}).to(tl::kFloat16)) ==
        "tensor([0.1000, 0.2000, 0.3000], dtype=torch.float16)");
  CHECK(str(tl::from_vector(std::vector<double>{70000.0, 1.0}).to(tl::kFloat16)) ==
        "tensor([inf, 1.], dtype=torch.float16)");
  CHECK(str(tl::from_vector(std::vector<double>{65504.0, 1.0}).to(tl::kFloat16)) ==
        "tensor([6.5504e+04, 1.0000e+00], dtype=torch.float16)");
  CHECK(str(tl::from_vector(std::vector<double>{1e-05, 1.0}).to(tl::kFloat16)) ==
        "tensor([1.0014e-05, 1.0000e+00], dtype=torch.float16)");
  CHECK(str(tl::from_vector(std::vector<double>{6e-08, 1.0}).to(tl::kFloat16)) ==
        "tensor([5.9605e-08, 1.0000e+00], dtype=torch.float16)");
  CHECK(str(tl::from_vector(std::vector<double>{10000.0, 0.001}).to(tl::kFloat16)) ==
        "tensor([1.0000e+04, 1.0004e-03], dtype=torch.float16)");
  CHECK(str(tl::from_vector(std::vector<double>{NAN, INFINITY, -INFINITY, 1.5}).to(tl::kFloat16)) ==
        "tensor([   nan,    inf,   -inf, 1.5000], dtype=torch.float16)");
  CHECK(str(tl::from_vector(std::vector<double>{100.0, 2.0}).to(tl::kFloat16)) ==
        "tensor([100.,   2.], dtype=torch.float16)");
  CHECK(str(tl::full({}, 3.14159, tl::kFloat16)) == "tensor(3.1406, dtype=torch.float16)");
  CHECK(str(tl::full({}, 0.0, tl::kFloat16)) == "tensor(0., dtype=torch.float16)");
  CHECK(
      str(tl::from_vector(std::vector<double>{1.5, -2.0, 1000.0, 3.0}, {2, 2}).to(tl::kFloat16)) ==
      "tensor([[   1.5000,   -2.0000],\n        [1000.0000,    3.0000]], dtype=torch.float16)");
  CHECK(str(tl::from_vector(std::vector<double>{0.0, -0.0}).to(tl::kFloat16)) ==
        "tensor([0., -0.], dtype=torch.float16)");
  CHECK(str(tl::from_vector(std::vector<double>{2049.0, 4097.0, 0.5}).to(tl::kFloat16)) ==
        "tensor([2.0480e+03, 4.0960e+03, 5.0000e-01], dtype=torch.float16)");
  CHECK(str(tl::from_vector(std::vector<double>{12345.678, 0.001}).to(tl::kFloat16)) ==
        "tensor([1.2344e+04, 1.0004e-03], dtype=torch.float16)");
  CHECK(str(tl::from_vector(std::vector<double>{1.0, 2.5}).to(tl::kBFloat16)) ==
        "tensor([1.0000, 2.5000], dtype=torch.bfloat16)");
  CHECK(str(tl::from_vector(std::vector<double>{0.1, 0.2, 0.3}).to(tl::kBFloat16)) ==
        "tensor([0.1001, 0.2002, 0.3008], dtype=torch.bfloat16)");
  CHECK(str(tl::from_vector(std::vector<double>{3e+38, 1.0}).to(tl::kBFloat16)) ==
        "tensor([3.0041e+38, 1.0000e+00], dtype=torch.bfloat16)");
  CHECK(str(tl::from_vector(std::vector<double>{1e-30, 1.0}).to(tl::kBFloat16)) ==
        "tensor([9.9840e-31, 1.0000e+00], dtype=torch.bfloat16)");
  CHECK(str(tl::from_vector(std::vector<double>{123456.0}).to(tl::kBFloat16)) ==
        "tensor([123392.], dtype=torch.bfloat16)");
  CHECK(str(tl::from_vector(std::vector<double>{-1.7, 2.9}).to(tl::kBFloat16)) ==
        "tensor([-1.7031,  2.9062], dtype=torch.bfloat16)");
  CHECK(str(tl::from_vector(std::vector<double>{10000000000.0, 1.0}).to(tl::kBFloat16)) ==
        "tensor([9.9992e+09, 1.0000e+00], dtype=torch.bfloat16)");
  CHECK(str(tl::full({}, 0.3333, tl::kBFloat16)) == "tensor(0.3340, dtype=torch.bfloat16)");
  CHECK(str(tl::from_vector(std::vector<double>{257.0, 3.0}).to(tl::kBFloat16)) ==
        "tensor([256.,   3.], dtype=torch.bfloat16)");
  CHECK(str(tl::from_vector(std::vector<double>{1.0, 2.0}).to(tl::kUInt8)) ==
        "tensor([1, 2], dtype=torch.uint8)");
  CHECK(str(tl::from_vector(std::vector<double>{0.0, 255.0, 128.0}).to(tl::kUInt8)) ==
        "tensor([  0, 255, 128], dtype=torch.uint8)");
  CHECK(str(tl::full({}, 7.0, tl::kUInt8)) == "tensor(7, dtype=torch.uint8)");
  CHECK(str(tl::from_vector(std::vector<double>{}, {0}).to(tl::kUInt8)) ==
        "tensor([], dtype=torch.uint8)");
  CHECK(str(tl::from_vector(std::vector<double>{1.0, 2.0, 3.0, 40.0, 50.0, 60.0}, {2, 3})
                .to(tl::kUInt8)) ==
        "tensor([[ 1,  2,  3],\n        [40, 50, 60]], dtype=torch.uint8)");
  CHECK(str(tl::from_vector(std::vector<double>{-128.0, 127.0, 0.0}).to(tl::kInt8)) ==
        "tensor([-128,  127,    0], dtype=torch.int8)");
  CHECK(str(tl::full({}, -5.0, tl::kInt8)) == "tensor(-5, dtype=torch.int8)");
  CHECK(str(tl::from_vector(std::vector<double>{-32768.0, 32767.0, 5.0}).to(tl::kInt16)) ==
        "tensor([-32768,  32767,      5], dtype=torch.int16)");
  CHECK(str(tl::from_vector(std::vector<double>{}, {0, 3}).to(tl::kInt16)) ==
        "tensor([], size=(0, 3), dtype=torch.int16)");
  CHECK(str(tl::from_vector(std::vector<double>{}, {0}).to(tl::kFloat16)) ==
        "tensor([], dtype=torch.float16)");
  CHECK(str(tl::from_vector(std::vector<double>{}, {2, 0}).to(tl::kBFloat16)) ==
        "tensor([], size=(2, 0), dtype=torch.bfloat16)");
  CHECK(str(tl::from_vector(std::vector<double>{1.0, -2.0, 3.0, -4.0}, {2, 1, 2}).to(tl::kInt8)) ==
        "tensor([[[ 1, -2]],\n\n        [[ 3, -4]]], dtype=torch.int8)");
  CHECK(str(tl::arange(0, 2000, 1, tl::kFloat64).to(tl::kFloat16)) ==
        "tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n        "
        "1.9990e+03], dtype=torch.float16)");
  CHECK(str(tl::arange(0, 2000, 1, tl::kFloat64).to(tl::kInt16)) ==
        "tensor([   0,    1,    2,  ..., 1997, 1998, 1999], dtype=torch.int16)");
  CHECK(str(tl::arange(0, 2000, 1, tl::kFloat64).to(tl::kUInt8)) ==
        "tensor([  0,   1,   2,  ..., 205, 206, 207], dtype=torch.uint8)");
  CHECK(str(tl::arange(0, 2000, 1, tl::kFloat64).to(tl::kBFloat16)) ==
        "tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 2.0000e+03, 2.0000e+03,\n        "
        "2.0000e+03], dtype=torch.bfloat16)");
}

namespace {
// Puts the print options back when a test ends, passed or not: they are process-wide.
struct RestorePrintOptions {
  tl::PrintOptions saved = tl::get_printoptions();
  ~RestorePrintOptions() { tl::set_printoptions(saved); }
};
}  // namespace

TEST_CASE("printing: set_printoptions as torch.set_printoptions") {
  RestorePrintOptions restore;
  const tl::Tensor x = tl::from_vector(std::vector<float>{0.1f, 2.5f});
  tl::set_printoptions(2);
  CHECK(str(x) == "tensor([0.10, 2.50])");
  CHECK(tl::get_printoptions().precision == 2);
  tl::set_printoptions(std::nullopt, 5, 2);
  CHECK(tl::get_printoptions().precision == 2);  // left as it was
  CHECK(str(tl::arange(10)) == "tensor([0, 1,  ..., 8, 9])");
  CHECK(str(tl::arange(5)) == "tensor([0, 1, 2, 3, 4])");  // 5 elements: not past the threshold
  tl::set_printoptions(std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt,
                       "default");
  tl::set_printoptions(std::nullopt, std::nullopt, std::nullopt, 20);
  CHECK(str(tl::arange(10)) == "tensor([0, 1, 2, 3,\n        4, 5, 6, 7,\n        8, 9])");
  tl::set_printoptions(std::nullopt, std::nullopt, std::nullopt, 80, true);
  CHECK(str(x) == "tensor([1.0000e-01, 2.5000e+00])");
  CHECK(str(tl::from_vector(std::vector<float>{1, 2, 3})) ==
        "tensor([1.0000e+00, 2.0000e+00, 3.0000e+00])");
  tl::set_printoptions(std::nullopt, std::nullopt, std::nullopt, std::nullopt, false);
  CHECK(str(tl::from_vector(std::vector<float>{1e-5f, 1})) == "tensor([0.0000, 1.0000])");
  // Leaving sci_mode out returns to the automatic choice, as torch's None.
  tl::set_printoptions(4);
  CHECK(str(tl::from_vector(std::vector<float>{1e-5f, 1})) == "tensor([1.0000e-05, 1.0000e+00])");
  tl::set_printoptions(std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt,
                       "short");
  CHECK(str(x) == "tensor([0.10, 2.50])");
  CHECK(tl::get_printoptions().edgeitems == 2);
  tl::set_printoptions(std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt,
                       "full");
  const std::string all = str(tl::arange(2000));
  CHECK(all.find("...") == std::string::npos);
  CHECK(all.find(" 1000,") != std::string::npos);
  // The struct form, and edge items of 0 (only ellipses) or huge (nothing elided).
  tl::PrintOptions o;
  o.threshold = 3;
  o.edgeitems = 0;
  tl::set_printoptions(o);
  CHECK(str(tl::arange(10)).find("...") != std::string::npos);
  CHECK(str(tl::arange(6).view({2, 3})).find("...") != std::string::npos);
  o.edgeitems = int64_t{1} << 62;
  tl::set_printoptions(o);
  CHECK(str(tl::arange(6)) == "tensor([0, 1, 2, 3, 4, 5])");
  o.threshold = 0;
  o.edgeitems = 1;
  tl::set_printoptions(o);
  CHECK(str(tl::arange(6).view({2, 3})) == "tensor([[0,  ..., 2],\n        [3,  ..., 5]])");
  // Precision up to 100 digits fits the formatter.
  o = tl::PrintOptions{};
  o.precision = 100;
  tl::set_printoptions(o);
  CHECK(str(tl::full({1}, 1e300, tl::kFloat64)).size() > 100);
}

TEST_CASE("printing: set_printoptions refuses bad options and keeps the old ones") {
  RestorePrintOptions restore;
  tl::set_printoptions(3);
  tl_test::check_throws<tl::Error>([] { tl::set_printoptions(-1); },
                                   "[tl::set_printoptions] precision must be in [0, 100]");
  tl_test::check_throws<tl::Error>([] { tl::set_printoptions(101); }, "got 101");
  tl_test::check_throws<tl::Error>([] { tl::set_printoptions(std::nullopt, -1); }, "threshold");
  tl_test::check_throws<tl::Error>([] { tl::set_printoptions(std::nullopt, std::nullopt, -2); },
                                   "edgeitems");
  tl_test::check_throws<tl::Error>(
      [] { tl::set_printoptions(std::nullopt, std::nullopt, std::nullopt, 0); }, "linewidth");
  tl_test::check_throws<tl::Error>(
      [] {
        tl::set_printoptions(std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt,
                             "long");
      },
      "profile must be");
  CHECK(tl::get_printoptions().precision == 3);
}

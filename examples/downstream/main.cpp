// A few tensor ops through the installed <tensorlet/tensorlet.h>: factories, views, host reads and
// a typed error. Exits non-zero when a result is wrong.
#include <tensorlet/tensorlet.h>

#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

namespace {

int failures = 0;

void expect(bool ok, const char* what) {
  std::cout << (ok ? "  ok    " : "  FAIL  ") << what << '\n';
  if (!ok) ++failures;
}

}  // namespace

int main() {
  try {
    tl::Tensor x = tl::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
    expect(x.shape() == tl::Shape{2, 3} && x.dtype() == tl::kFloat32,
           "from_vector shape and dtype");
    expect(x.t()[2][1].item<float>() == 6, "t() and operator[] view the same storage");
    expect(x.select(1, 1).to_vector<float>() == std::vector<float>{2, 5},
           "select(1, 1) is a column");
    expect(x.slice(1, 0, 3, 2).to_vector<float>() == std::vector<float>{1, 3, 4, 6},
           "slice with a step");
    expect(x.view({3, 2})[2].to_vector<float>() == std::vector<float>{5, 6}, "view reshapes");
    expect(x.unsqueeze(0).shape() == tl::Shape{1, 2, 3}, "unsqueeze adds a dim");

    expect(tl::zeros({2, 2}, tl::kInt64).to_vector<int64_t>() == std::vector<int64_t>(4, 0),
           "zeros int64");
    expect(tl::ones({3}).to_vector<float>() == std::vector<float>(3, 1.0f), "ones float32");
    expect(tl::full({}, 2.5, tl::kFloat64).item<double>() == 2.5, "full 0-dim float64 item");

    bool threw = false;
    try {
      (void)x[5];
    } catch (const tl::IndexError& e) {
      threw = std::string(e.what()).rfind("[tl::", 0) == 0;
    }
    expect(threw, "an out-of-range index throws tl::IndexError naming the op");
  } catch (const tl::Error& e) {
    std::cout << "  FAIL  unexpected tl::Error: " << e.what() << '\n';
    ++failures;
  }
  std::cout << "downstream: " << (failures == 0 ? "all checks passed" : "some checks FAILED")
            << '\n';
  return failures == 0 ? 0 : 1;
}

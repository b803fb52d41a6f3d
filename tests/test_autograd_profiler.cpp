// Backward in the profiler, as PyTorch records it: an evaluate_function row per node with the
// node's row and its ops under it, and fwdbwd flow arrows from the forward op to that row.
#include <doctest/doctest.h>
#include <tensorlet/tensorlet.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "test_util.h"

namespace prof = tl::profiler;

namespace {

const prof::Event* find(const std::vector<prof::Event>& events, const std::string& name) {
  for (const prof::Event& e : events)
    if (e.name == name) return &e;
  return nullptr;
}

}  // namespace

TEST_CASE("autograd profiler: backward rows, sequence numbers and fwdbwd flow arrows") {
  for (const tl::Device device : tl_test::test_devices()) {
    INFO(device.str());
    tl::Tensor x = tl_test::random_tensor({8, 8}, tl::kFloat32, device);
    x.requires_grad_();
    tl::Tensor w = tl_test::random_tensor({8, 8}, tl::kFloat32, device);
    prof::Profile profile;
    // The t() view records its node outside any op scope: it must not take sigmoid's arrow.
    tl::Tensor loss = tl::sum(tl::sigmoid(x * w).t());
    loss.backward();
    profile.stop();
    const auto& events = profile.events();

    // The forward ops carry the sequence number of the node they made.
    const prof::Event* mul = find(events, "tl::mul");
    REQUIRE(mul != nullptr);
    CHECK_FALSE(mul->backward);
    REQUIRE(mul->sequence_nr >= 0);
    // Backward: evaluate_function > node name > the formula's ops.
    const prof::Event* eval = find(events, "autograd::engine::evaluate_function: MulBackward0");
    REQUIRE(eval != nullptr);
    CHECK(eval->backward);
    CHECK(eval->sequence_nr == mul->sequence_nr);
    const prof::Event* node = find(events, "MulBackward0");
    REQUIRE(node != nullptr);
    CHECK(node->parent == eval->id);
    bool op_under_node = false;
    for (const prof::Event& e : events)
      if (e.parent == node->id && e.name == "tl::mul") op_under_node = true;
    CHECK(op_under_node);
    for (const char* name : {"autograd::engine::evaluate_function: SigmoidBackward0",
                             "autograd::engine::evaluate_function: SumBackward0",
                             "autograd::engine::evaluate_function: "
                             "torch::autograd::AccumulateGrad"})
      CHECK(find(events, name) != nullptr);

    // key_averages has the backward rows.
    bool row = false;
    const prof::KeyAverages averages = profile.key_averages();
    for (const prof::EventAverage& r : averages.rows())
      if (r.key == "autograd::engine::evaluate_function: SigmoidBackward0") row = r.count == 1;
    CHECK(row);

    // The chrome trace: each flow start (forward op) has its end (backward row) with one id.
    const auto path = std::filesystem::temp_directory_path() / "tl_autograd_trace.json";
    profile.export_chrome_trace(path.string());
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    const nlohmann::json doc = nlohmann::json::parse(text.str());
    std::map<int64_t, int> starts, finishes;
    for (const auto& e : doc["traceEvents"]) {
      if (!e.contains("cat") || e["cat"] != "fwdbwd") continue;
      (e["ph"] == "s" ? starts : finishes)[e["id"].get<int64_t>()]++;
    }
    CHECK(starts.size() == 3);  // mul, sigmoid, sum (a leaf's accumulator and a view have none)
    CHECK(starts.count(mul->sequence_nr) == 1);
    CHECK(finishes.count(mul->sequence_nr) == 1);
    const prof::Event* sigmoid = find(events, "tl::sigmoid");
    REQUIRE(sigmoid != nullptr);
    CHECK(starts.count(sigmoid->sequence_nr) == 1);
    CHECK(finishes.count(sigmoid->sequence_nr) == 1);
    std::filesystem::remove(path);
  }
}

TEST_CASE("autograd profiler: nothing is recorded for backward when no profiler runs") {
  tl::Tensor x = tl_test::random_tensor({4}, tl::kFloat32);
  x.requires_grad_();
  tl::sum(x * x).backward();
  CHECK(x.grad().defined());
}

TEST_CASE("autograd profiler: linear's weight gradient comes in the weight's layout (no copy)") {
  for (const tl::Device device : tl_test::test_devices()) {
    INFO(device.str());
    tl::Tensor x = tl_test::random_tensor({8, 5}, tl::kFloat32, device);
    tl::Tensor w = tl_test::random_tensor({3, 5}, tl::kFloat32, device);
    tl::Tensor b = tl_test::random_tensor({3}, tl::kFloat32, device);
    w.requires_grad_();
    b.requires_grad_();
    prof::Profile profile;
    const tl::Tensor y = tl::linear(x, w, b);
    CHECK(y.grad_fn()->name() == "AddmmBackward0");  // torch's linear of a matrix with a bias
    tl::sum(y).backward();
    profile.stop();
    CHECK(find(profile.events(), "tl::contiguous") == nullptr);
    REQUIRE(w.grad().defined());
    CHECK(w.grad().is_contiguous());
  }
}

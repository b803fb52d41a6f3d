// Notebook "vectorization": 20 000 small matmuls in a loop vs one batched matmul built with dstack.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include <tensorlet.h>
namespace tl = tensorlet;

namespace {

constexpr int64_t kMatrices = 100;  // A_1 .. A_100
constexpr int64_t kGroups = 200;    // B_{g,1} .. B_{g,100} for each of 200 groups
constexpr int64_t kSize = 10;       // every matrix is 10x10
constexpr int kRepeats = 5;

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main() {
  tl::manual_seed(0);
  // The data arrives as lists of separate matrices, the way a per-item program would hold it.
  std::vector<tl::Tensor> a;
  for (int64_t i = 0; i < kMatrices; ++i) a.push_back(tl::rand({kSize, kSize}));
  std::vector<std::vector<tl::Tensor>> b(kGroups);
  for (auto& group : b)
    for (int64_t i = 0; i < kMatrices; ++i) group.push_back(tl::rand({kSize, kSize}));

  std::printf(
      "Vectorization: %lld matrices A_i (%lldx%lld), each multiplied by its partner in %lld "
      "groups\n"
      "B_g = [B_g1 .. B_g100]: res[g][i] = A_i @ B_gi, %lld products in all, on %d CPU "
      "threads.\n\n",
      static_cast<long long>(kMatrices), static_cast<long long>(kSize),
      static_cast<long long>(kSize), static_cast<long long>(kGroups),
      static_cast<long long>(kMatrices * kGroups), tl::get_num_threads());

  // 1. One op per product, each result copied into its slice of a fresh result tensor.
  tl::Tensor res_loop;
  std::vector<double> loop_ms;
  for (int r = 0; r < kRepeats; ++r) {
    auto start = std::chrono::steady_clock::now();
    res_loop = tl::empty({kGroups, kMatrices, kSize, kSize});
    for (int64_t g = 0; g < kGroups; ++g)
      for (int64_t i = 0; i < kMatrices; ++i) res_loop[g][i] = tl::matmul(a[i], b[g][i]);
    loop_ms.push_back(ms_since(start));
  }

  // 2. Batched: dstack lays a list out along a third dim ([10, 10, 100]); a permuted view puts
  //    that dim first without copying, and one matmul broadcasts A over the 200 groups.
  tl::Tensor res_batched;
  std::vector<double> batch_ms, stack_ms;
  for (int r = 0; r < kRepeats; ++r) {
    auto start = std::chrono::steady_clock::now();
    tl::Tensor a_batch = tl::dstack(a).permute({2, 0, 1});  // [100, 10, 10]
    std::vector<tl::Tensor> groups;
    for (const auto& group : b) groups.push_back(tl::dstack(group));
    tl::Tensor b_batch = tl::stack(groups).permute({0, 3, 1, 2});  // [200, 100, 10, 10]
    stack_ms.push_back(ms_since(start));
    res_batched = tl::matmul(a_batch, b_batch);  // [100, 10, 10] @ [200, 100, 10, 10]
    batch_ms.push_back(ms_since(start));
  }

  const bool same = tl::allclose(res_loop, res_batched);
  const double t_loop = median(loop_ms), t_batch = median(batch_ms), t_stack = median(stack_ms);
  std::printf(
      "  loop    : %lld x `res[g][i] = tl::matmul(A[i], B[g][i])`   %8.2f ms  (%.2f us per "
      "product)\n",
      static_cast<long long>(kMatrices * kGroups), t_loop, t_loop * 1e3 / (kMatrices * kGroups));
  std::printf(
      "  batched : dstack/stack + one tl::matmul                %8.2f ms  (%.2f ms building the "
      "batch)\n",
      t_batch, t_stack);
  std::printf("  results equal (allclose): %s\n", same ? "yes" : "NO");
  std::printf("  speed-up of the batched version: %.1fx (medians of %d runs)\n\n", t_loop / t_batch,
              kRepeats);
  std::printf(
      "Why: each op in the loop pays its fixed overhead - argument checks, output allocation, "
      "views\n"
      "for A[i], B[g][i] and res[g][i], a copy into the slice - for only 1 000 multiply-adds, so "
      "the\n"
      "loop is dominated by bookkeeping. The batched version pays that overhead a handful of "
      "times\n"
      "and then runs one kernel over all %lld products, split across the CPU threads.\n",
      static_cast<long long>(kMatrices * kGroups));
  return same ? 0 : 1;
}

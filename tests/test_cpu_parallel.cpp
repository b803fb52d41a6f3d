// The CPU backend's parallel loops (issue 15): reductions give the same bits on 1, 2 and 3
// threads on shapes that split over outputs and over the reduced range, large float32 sums keep
// float64-level accuracy, the vector-lane arg reductions keep first positions and NaN, small ops
// never go to the worker pool, and the pool runs every chunk once, rethrows, serves several
// calling threads and works in a forked child.
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tensorlet/backends/cpu/thread_pool.h"
#include "test_util.h"

using namespace tl_test;

namespace {

// Sets the thread count for a scope and restores it after.
class ThreadCount {
 public:
  explicit ThreadCount(int n) : before_(tl::get_num_threads()) { tl::set_num_threads(n); }
  ~ThreadCount() { tl::set_num_threads(before_); }
  ThreadCount(const ThreadCount&) = delete;
  ThreadCount& operator=(const ThreadCount&) = delete;

 private:
  int before_;
};

// Every op result of `run` on 1, 2 and 3 threads, as bits; all must be equal.
void check_same_bits_on_1_2_3_threads(const std::string& what,
                                      const std::function<tl::Tensor()>& run) {
  std::vector<uint64_t> one;
  {
    ThreadCount t(1);
    one = bits_of(run());
  }
  for (int n : {2, 3}) {
    ThreadCount t(n);
    const std::vector<uint64_t> other = bits_of(run());
    INFO(what << " on " << n << " threads");
    REQUIRE(other.size() == one.size());
    size_t differ = 0;
    for (size_t i = 0; i < one.size(); ++i) differ += other[i] != one[i];
    CHECK(differ == 0);
  }
}

// Row-major sums over dim `d` of a [rows, cols] tensor, in long double.
std::vector<double> sums_over(const std::vector<double>& x, int64_t rows, int64_t cols, int d) {
  std::vector<long double> acc(d == 0 ? cols : rows, 0.0L);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) acc[d == 0 ? c : r] += x[r * cols + c];
  return std::vector<double>(acc.begin(), acc.end());
}

}  // namespace

TEST_CASE("reductions give the same bits on 1, 2 and 3 threads (over outputs and over the range)") {
  struct Case {
    tl::Shape shape;
    int64_t dim;  // -1: every element
  };
  // [4096, 512] over dim 1: many outputs; [2, 2^20] over dim 1 and 2^21 whole: few outputs, split
  // over the reduced range; [4096, 1500] over dim 0: tiles of columns times slices of rows;
  // [2^18, 4] and [2^16, 5] over dim 0: narrow rows folded as one long run.
  const std::vector<Case> cases = {{{4096, 512}, 1},  {{2, 1 << 20}, 1}, {{1 << 21}, -1},
                                   {{4096, 1500}, 0}, {{1 << 18, 4}, 0}, {{1 << 16, 5}, 0}};
  for (tl::DType dtype : {tl::kFloat32, tl::kFloat64}) {
    for (const Case& c : cases) {
      const tl::Tensor x = random_tensor(c.shape, dtype);
      const std::string name = std::string(tl::dtype_name(dtype)) + " " +
                               std::to_string(c.shape[0]) + " dim " + std::to_string(c.dim);
      const tl::DimList dims = c.dim < 0 ? tl::DimList{} : tl::DimList{c.dim};
      check_same_bits_on_1_2_3_threads("sum " + name, [&] { return tl::sum(x, dims); });
      check_same_bits_on_1_2_3_threads("mean " + name, [&] { return tl::mean(x, dims); });
      check_same_bits_on_1_2_3_threads("amax " + name, [&] { return tl::amax(x, dims); });
      const std::optional<int64_t> dim = c.dim < 0 ? std::nullopt : std::optional<int64_t>(c.dim);
      check_same_bits_on_1_2_3_threads("argmax " + name, [&] { return tl::argmax(x, dim); });
    }
    const tl::Tensor s = random_tensor({600, 700}, dtype);
    check_same_bits_on_1_2_3_threads("softmax dim 1", [&] { return tl::softmax(s, 1); });
    check_same_bits_on_1_2_3_threads("softmax dim 0", [&] { return tl::softmax(s, 0); });
    check_same_bits_on_1_2_3_threads("log_softmax dim 1", [&] { return tl::log_softmax(s, 1); });
  }
}

TEST_CASE("parallel reductions match a long double reference on every split") {
  ThreadCount t(3);
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{4096, 1500}, {3, 300000}, {300000, 3}}) {
    const tl::Tensor x = random_tensor({rows, cols}, tl::kFloat64);
    const std::vector<double> v = values_of(x);
    INFO(rows << " x " << cols);
    check_values(tl::sum(x, {0}), sums_over(v, rows, cols, 0), 1e-13, 1e-10);
    check_values(tl::sum(x, {1}), sums_over(v, rows, cols, 1), 1e-13, 1e-10);
  }
}

TEST_CASE("a float32 sum of 2^20 positive values keeps float64's accuracy") {
  const tl::Tensor x = tl::rand({1 << 20});  // uniform in [0, 1): every value positive
  const std::vector<float> v = x.to_vector<float>();
  long double exact = 0;
  for (float f : v) exact += f;
  // Rounding the exact sum to float32 is off by at most half an ulp (2^-24 relative); allow one
  // ulp. A float32 running sum is off by about 1e-4 here, pairwise float32 sums by a few ulps.
  const double bound = std::ldexp(1.0, -23) * static_cast<double>(exact);
  for (int n : {1, 2, 3}) {
    ThreadCount t(n);
    INFO(n << " threads");
    CHECK(std::abs(static_cast<double>(tl::sum(x).item<float>()) - static_cast<double>(exact)) <=
          bound);
    const double mean = static_cast<double>(tl::mean(x).item<float>());
    CHECK(std::abs(mean - static_cast<double>(exact) / v.size()) <= bound / v.size());
  }
  // The same values as [2^19, 2] summed over rows (the column path's float32 partials).
  const tl::Tensor cols = tl::sum(x.view({1 << 19, 2}), {0});
  for (int64_t c = 0; c < 2; ++c) {
    long double e = 0;
    for (size_t i = static_cast<size_t>(c); i < v.size(); i += 2) e += v[i];
    CHECK(std::abs(values_of(cols)[c] - static_cast<double>(e)) <=
          std::ldexp(1.0, -23) * static_cast<double>(e));
  }
}

TEST_CASE("vector-lane argmax/argmin/max keep the first position and NaN, rows and columns") {
  ThreadCount t(2);
  for (tl::DType dtype : {tl::kFloat32, tl::kFloat64}) {
    // Values from a small set (many ties: the first position must win), some NaN and -inf.
    for (auto [rows, cols] :
         {std::pair<int64_t, int64_t>{37, 1000}, {1000, 37}, {3000, 1100}, {5, 100003}}) {
      tl::Tensor x = tl::randint(0, 7, {rows, cols}, tl::kInt64).to(dtype);
      std::vector<double> v = values_of(x);
      for (size_t i = 0; i < v.size(); i += 7919) v[i] = std::nan("");
      for (size_t i = 3; i < v.size(); i += 4099) v[i] = -std::numeric_limits<double>::infinity();
      // Every third row and column has no NaN, so plain ties decide there.
      for (int64_t r = 0; r < rows; r += 3)
        for (int64_t c = 0; c < cols; ++c)
          if (std::isnan(v[r * cols + c])) v[r * cols + c] = 1.0;
      for (int64_t c = 0; c < cols; c += 3)
        for (int64_t r = 0; r < rows; ++r)
          if (std::isnan(v[r * cols + c])) v[r * cols + c] = 2.0;
      x = tl::from_vector(v, {rows, cols}).to(dtype);
      for (int d : {0, 1}) {
        for (bool largest : {true, false}) {
          const int64_t outs = d == 0 ? cols : rows, len = d == 0 ? rows : cols;
          std::vector<double> want_index(outs), want_value(outs);
          for (int64_t o = 0; o < outs; ++o) {
            int64_t best = 0;
            auto at = [&](int64_t k) { return d == 0 ? v[k * cols + o] : v[o * cols + k]; };
            for (int64_t k = 1; k < len; ++k) {
              const double a = at(k), b = at(best);
              if (std::isnan(b)) break;
              if (std::isnan(a) || (largest ? a > b : a < b)) best = k;
            }
            want_index[o] = static_cast<double>(best);
            want_value[o] = at(best);
          }
          INFO(tl::dtype_name(dtype)
               << " " << rows << " x " << cols << " dim " << d << (largest ? " max" : " min"));
          check_values(largest ? tl::argmax(x, d) : tl::argmin(x, d), want_index, 0, 0);
          check_values(largest ? tl::amax(x, {d}) : tl::amin(x, {d}), want_value, 0, 0);
        }
      }
    }
  }
}

TEST_CASE("broadcast and strided adds split across threads give every element") {
  // Rows of 3, of 100003, and a transposed operand: ranges end on row boundaries where there are
  // enough rows, mid-row otherwise.
  struct Case {
    tl::Shape a, b;
  };
  for (const Case& c :
       {Case{{70001, 1}, {1, 3}}, Case{{37, 1}, {1, 100003}}, Case{{2, 1}, {1, 200001}}}) {
    const tl::Tensor a = random_tensor(c.a), b = random_tensor(c.b);
    const std::vector<double> va = values_of(a), vb = values_of(b);
    const int64_t rows = c.a[0], cols = c.b[1];
    std::vector<double> want(static_cast<size_t>(rows * cols));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < cols; ++k)
        want[r * cols + k] =
            static_cast<float>(static_cast<float>(va[r]) + static_cast<float>(vb[k]));
    for (int n : {1, 2, 3}) {
      ThreadCount t(n);
      INFO(rows << " x " << cols << " on " << n << " threads");
      check_values(tl::add(a, b), want, 0, 0);
    }
  }
  const tl::Tensor m = random_tensor({600, 700});
  const tl::Tensor mt = m.t();  // strided: the inner loop walks columns of m
  const std::vector<double> vm = values_of(mt);
  std::vector<double> twice(vm.size());
  for (size_t i = 0; i < vm.size(); ++i)
    twice[i] = static_cast<float>(2 * static_cast<float>(vm[i]));
  for (int n : {1, 3}) {
    ThreadCount t(n);
    check_values(tl::add(mt, mt), twice, 0, 0);
  }
}

TEST_CASE("small ops never go to the worker pool; large ones do, within the thread count") {
  const tl::Tensor a = random_tensor({3, 3}), b = random_tensor({3, 3});
  const tl::Tensor m = random_tensor({64, 64});
  const tl::Tensor big = random_tensor({1 << 22});
  {
    ThreadCount t(2);
    const int64_t before = tl::cpu::pool_jobs();
    for (int i = 0; i < 100; ++i) {
      (void)tl::add(a, b);
      (void)tl::sum(m);
      (void)tl::sum(m, {1});
      (void)tl::softmax(m, 1);
    }
    CHECK(tl::cpu::pool_jobs() == before);
    (void)tl::add(big, big);
    CHECK(tl::cpu::pool_jobs() > before);
  }
  {
    ThreadCount t(1);
    const int64_t before = tl::cpu::pool_jobs();
    (void)tl::add(big, big);
    (void)tl::sum(big);
    CHECK(tl::cpu::pool_jobs() == before);
  }
}

TEST_CASE("run_chunks runs every chunk once, rethrows, and runs nested loops inline") {
  for (int threads : {1, 2, 3, 5}) {
    for (int64_t chunks : {1, 2, 3, 7}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(chunks));
      tl::cpu::run_chunks(chunks, threads, [&](int64_t c) { hits[static_cast<size_t>(c)]++; });
      for (auto& h : hits) CHECK(h.load() == 1);
    }
  }
  CHECK_THROWS_AS(tl::cpu::run_chunks(4, 3,
                                      [](int64_t c) {
                                        if (c == 2) throw std::runtime_error("chunk 2");
                                      }),
                  std::runtime_error);
  // A loop inside a chunk runs on that chunk's thread, and the pool still works after a throw.
  std::atomic<int> inner{0}, nested_inline{0};
  tl::cpu::run_chunks(3, 3, [&](int64_t) {
    CHECK(tl::cpu::in_chunk());
    const std::thread::id self = std::this_thread::get_id();
    tl::cpu::run_chunks(4, 3, [&](int64_t) {
      inner++;
      nested_inline += std::this_thread::get_id() == self;
    });
  });
  CHECK(inner.load() == 12);
  CHECK(nested_inline.load() == 12);
  CHECK_FALSE(tl::cpu::in_chunk());
}

TEST_CASE("several threads run parallel ops at once with correct results") {
  ThreadCount t(2);
  const tl::Tensor x = random_tensor({2000, 700}, tl::kFloat64);
  const std::vector<double> want = sums_over(values_of(x), 2000, 700, 0);
  std::vector<std::thread> callers;
  std::atomic<int> bad{0};
  for (int i = 0; i < 4; ++i)
    callers.emplace_back([&] {
      for (int k = 0; k < 5; ++k) {
        const std::vector<double> got = values_of(tl::sum(x, {0}));
        for (size_t j = 0; j < got.size(); ++j)
          if (std::abs(got[j] - want[j]) > 1e-9) bad++;
      }
    });
  for (auto& c : callers) c.join();
  CHECK(bad.load() == 0);
}

TEST_CASE("a forked child runs parallel ops on a pool of its own") {
  ThreadCount t(2);
  const tl::Tensor x = random_tensor({1 << 21}, tl::kFloat64);
  const double want = tl::sum(x).item<double>();  // the parent's pool exists now
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const bool ok = tl::sum(x).item<double>() == want && tl::cpu::pool_jobs() > 0;
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

// Notebook 000, second half ("vectorization"): a loop of tiny ops, fake batching, real batching.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <chart.h>
#include <tensorlet/tensorlet.h>
namespace tl = tensorlet;
namespace prof = tl::profiler;

namespace {

using Clock = std::chrono::steady_clock;

#if defined(__OPTIMIZE__)
constexpr bool kOptimized = true;
#else
constexpr bool kOptimized = false;  // a debug build: element loops run many times slower
#endif

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string time_str(double s) {
  char buf[32];
  if (s >= 1)
    std::snprintf(buf, sizeof buf, "%.3f s", s);
  else if (s >= 1e-3)
    std::snprintf(buf, sizeof buf, "%.3f ms", s * 1e3);
  else if (s >= 1e-6)
    std::snprintf(buf, sizeof buf, "%.3f us", s * 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.2f ns", s * 1e9);
  return buf;
}

// "1.40x slower than" / "1.40x faster than" / "about as fast (...) as" (within 5%): taking `t`
// against taking `other`.
std::string ratio_words(double t, double other) {
  char buf[48];
  const double r = t / other;
  if (r > 1.05)
    std::snprintf(buf, sizeof buf, "%.2fx slower than", r);
  else if (r < 1 / 1.05)
    std::snprintf(buf, sizeof buf, "%.2fx faster than", 1 / r);
  else
    std::snprintf(buf, sizeof buf, "about as fast (%.2fx the time) as", r);
  return buf;
}

// The setting every part runs in: the notebook's tensors are on cuda:0 ("device=0").
struct Setup {
  bool gpu = false;
  tl::Device device = tl::Device::cpu();
  void sync() const {
    if (gpu) tl::cuda::synchronize();
  }
};

// ---- profiled runs (parts 1 to 3) --------------------------------------------------------------

struct Profiled {
  double wall_s = 0, self_cpu_s = 0, self_cuda_s = 0;
  std::vector<prof::EventAverage> rows;
  std::string table;
};

// One `with torch.profiler.profile(activities=[CPU, CUDA]) as p:` block and its table.
Profiled profile_run(const Setup& s, const std::function<void()>& work) {
  Profiled r;
  s.sync();
  const auto start = Clock::now();
  prof::Profile p({.activities = {prof::Activity::CPU, prof::Activity::CUDA}});
  work();
  s.sync();
  r.wall_s = seconds_since(start);
  p.stop();
  const prof::KeyAverages averages = p.key_averages();
  for (const prof::EventAverage& row : averages.rows()) {
    r.self_cpu_s += row.self_cpu_time_total_ns * 1e-9;
    if (row.is_device) r.self_cuda_s += row.self_cuda_time_total_ns * 1e-9;
  }
  r.rows = averages.rows();
  r.table = averages.table({.row_limit = 12});
  return r;
}

void print_profiled(const char* what, const Profiled& p, const char* notebook) {
  std::printf("%s", p.table.c_str());
  std::printf("   %s: Self CPU total %s, Self CUDA total %s, wall %s\n   (notebook: %s)\n", what,
              time_str(p.self_cpu_s).c_str(),
              p.self_cuda_s > 0 ? time_str(p.self_cuda_s).c_str() : "(no GPU)",
              time_str(p.wall_s).c_str(), notebook);
}

constexpr int kOuter = 20, kInner = 1000;  // 20 x 1000 = 20 000 small matrices

// The notebook's plain loop: 20 000 x (x = rand(10, 10, device=0); y = x * x).
void plain_loop(const Setup& s) {
  for (int i = 0; i < kOuter * kInner; ++i) {
    tl::Tensor x = tl::rand({10, 10}, s.device);
    tl::Tensor y = x * x;
  }
}

// The notebook's "vectorization" that is not: a CPU zeros(1000, 10, 10) (no device given) filled
// one slice at a time from a fresh device tensor, then one multiply, 20 times.
void fake_batched(const Setup& s) {
  for (int i = 0; i < kOuter; ++i) {
    tl::Tensor vec = tl::zeros({kInner, 10, 10});
    for (int j = 0; j < kInner; ++j) {
      tl::Tensor x = tl::rand({10, 10}, s.device);
      vec[j] = x;  // a device-to-host copy on a GPU: it waits for the rand kernel
    }
    tl::Tensor res = vec * vec;
  }
}

// What batching means: the 1000 matrices made by one op on the device, multiplied by one op.
void real_batched(const Setup& s) {
  for (int i = 0; i < kOuter; ++i) {
    tl::Tensor vec = tl::rand({kInner, 10, 10}, s.device);
    tl::Tensor res = vec * vec;
  }
}

// Part 3b's wall times (GPU only; zeros without one).
struct GraphTimes {
  double graph_s = 0, eager_s = 0, batched_s = 0;
};

struct LoopResults {
  Profiled loop, fake, batched;
  GraphTimes graph;  // the plain loop as one CUDA graph, against eager and batched, unprofiled
  std::optional<Profiled> batched_1t;  // real batching on one thread (CPU, several threads)
  // Whether the threads cost more than they saved: a loaded machine makes each parallel op wait
  // for a busy core.
  bool threads_hurt() const {
    return batched_1t && batched_1t->self_cpu_s * 1.5 < batched.self_cpu_s;
  }
};

// Part 3 again on one thread: is a batch-wide op's time its elements, or waiting for threads?
Profiled one_thread(const Setup& s, const Profiled& batched) {
  const int threads = tl::get_num_threads();
  tl::set_num_threads(1);
  const Profiled r = profile_run(s, [&] { real_batched(s); });
  tl::set_num_threads(threads);
  std::printf("   the same on 1 thread: Self CPU total %s (%s on %d threads)\n",
              time_str(r.self_cpu_s).c_str(), ratio_words(r.self_cpu_s, batched.self_cpu_s).c_str(),
              threads);
  return r;
}

// Not in the notebook: the plain loop captured once as a CUDA graph and replayed (the same 40 000
// kernels, launched by the host in one call), timed without the profiler against the eager loop
// and real batching: medians of 3 wall times (device synchronized), interleaved, after one each.
GraphTimes graph_loop(const Setup& s) {
  std::printf(
      "\n3b. The plain loop captured as one CUDA graph and replayed (not in the notebook)\n");
  GraphTimes g;
  if (!s.gpu) {
    std::printf(
        "   CUDA graphs need a GPU. On one, the 40 000 kernels of part 1 are launched by one\n"
        "   host call, so the host's per-op cost goes; the kernels still run one by one.\n");
    return g;
  }
  tl::cuda::Graph graph;
  graph.capture([&] { plain_loop(s); });
  const std::function<void()> work[] = {[&] { graph.replay(); }, [&] { plain_loop(s); },
                                        [&] { real_batched(s); }};
  std::vector<double> t[3];
  for (int r = 0; r < 4; ++r)
    for (int k = 0; k < 3; ++k) {
      s.sync();
      const auto start = Clock::now();
      work[k]();
      s.sync();
      if (r > 0) t[k].push_back(seconds_since(start));
    }
  for (auto& v : t) std::sort(v.begin(), v.end());
  g.graph_s = t[0][1];
  g.eager_s = t[1][1];
  g.batched_s = t[2][1];
  std::printf(
      "   %lld operations in the graph. Unprofiled wall times: replay %s, eager loop %s,\n"
      "   real batching %s\n",
      static_cast<long long>(graph.num_nodes()), time_str(g.graph_s).c_str(),
      time_str(g.eager_s).c_str(), time_str(g.batched_s).c_str());
  return g;
}

LoopResults loops_and_batches(const Setup& s) {
  LoopResults r;
  std::printf("1. Plain loop: 20000 x (x = rand(10, 10) on %s; y = x * x)\n",
              s.device.str().c_str());
  plain_loop(s);  // warm-up, so no part pays the process's first-use costs
  r.loop = profile_run(s, [&] { plain_loop(s); });
  print_profiled("loop", r.loop, "Self CPU 875.584 ms, Self CUDA 40.393 ms");
  std::printf(
      "\n2. Fake batching: 20 x (vec = zeros(1000, 10, 10) on the CPU; 1000 x vec[j] = rand(10, "
      "10)\n   on %s; vec * vec)\n",
      s.device.str().c_str());
  r.fake = profile_run(s, [&] { fake_batched(s); });
  print_profiled("fake batching", r.fake, "Self CPU 1.207 s, Self CUDA 40.182 ms");
  std::printf("\n3. Real batching: 20 x (vec = rand(1000, 10, 10) on %s; vec * vec)\n",
              s.device.str().c_str());
  r.batched = profile_run(s, [&] { real_batched(s); });
  print_profiled("real batching", r.batched, "not in the notebook");
  if (!s.gpu && tl::get_num_threads() > 1) r.batched_1t = one_thread(s, r.batched);
  r.graph = graph_loop(s);
  return r;
}

constexpr int kSmall = kOuter * kInner;

// Self CPU seconds of the ops called once per small matrix (rand, mul or copy_, and on a GPU the
// runtime calls they make), against the rest: the ops on whole batches.
double per_matrix_self_cpu(const Profiled& p) {
  double s = 0;
  for (const prof::EventAverage& row : p.rows)
    if (!row.is_device && row.count >= kSmall) s += row.self_cpu_time_total_ns * 1e-9;
  return s;
}

void explain_fake(const Setup& s, const Profiled& loop, const Profiled& fake, bool threads_hurt) {
  const double loop_each = per_matrix_self_cpu(loop) / kSmall;
  const double fake_small = per_matrix_self_cpu(fake), fake_each = fake_small / kSmall;
  const double fake_batch = fake.self_cpu_s - fake_small;
  std::printf(
      "   Where fake batching's time went: %s in the 20000 per-matrix calls (rand + slice\n"
      "   copy, %s per matrix, against %s for the loop's rand + multiply) and %s\n"
      "   in its 60 batch-wide ops (zeros, vec * vec).\n",
      time_str(fake_small).c_str(), time_str(fake_each).c_str(), time_str(loop_each).c_str(),
      time_str(fake_batch).c_str());
  const char* copy_vs_mul = fake_each > loop_each * 1.05   ? "costs more than"
                            : fake_each < loop_each / 1.05 ? "costs less than"
                                                           : "costs about as much as";
  if (fake.self_cpu_s > loop.self_cpu_s * 1.05 && fake_each > loop_each * 1.05)
    std::printf(
        "   So it is slower because a slice copy costs more than the multiply it replaces%s.\n",
        fake_batch > 0.1 * fake.self_cpu_s ? ", and its batch-wide ops come on top" : "");
  else if (fake.self_cpu_s > loop.self_cpu_s * 1.05)
    std::printf(
        "   So it is slower because of its batch-wide ops: a slice copy %s the multiply it\n"
        "   replaces, and zeros and vec * vec are extra passes over 100 000 elements%s.\n",
        copy_vs_mul,
        threads_hurt ? ",\n   slowed by waiting for busy cores (see part 3 on 1 thread)" : "");
  else
    std::printf("   So it is not slower here: a slice copy %s the multiply it replaces.\n",
                copy_vs_mul);
  if (s.gpu) {
    std::printf(
        "   On the GPU each slice copy moves 400 bytes to host memory and waits for the rand\n"
        "   kernel; a multiply only enqueues a kernel.\n");
  } else {
    std::printf(
        "   On a GPU each slice copy is a device-to-host transfer that waits for the rand kernel,\n"
        "   dearer than enqueueing a multiply: why the notebook found fake batching 1.38x "
        "slower.\n");
  }
  std::printf(
      "   Either way it keeps all 20000 small calls: copying slice by slice is not "
      "vectorization.\n");
}

void explain_real(const LoopResults& r) {
  const Profiled& loop = r.loop;
  // With the threads waiting on a loaded machine, judge batching by its one-thread run.
  const Profiled& batched = r.threads_hurt() ? *r.batched_1t : r.batched;
  if (r.threads_hurt())
    std::printf(
        "   On %d threads real batching took %s, on 1 thread %s: each batch-wide op\n"
        "   waits for a core that this machine's other work holds. That is the load, not\n"
        "   batching; the one-thread run stands for batching below.\n",
        tl::get_num_threads(), time_str(r.batched.self_cpu_s).c_str(),
        time_str(r.batched_1t->self_cpu_s).c_str());
  const double per_op = loop.self_cpu_s / (2.0 * kSmall);
  const double loop_per_element = per_op / 100;
  const double per_element = batched.self_cpu_s / (2.0 * kSmall * 100);
  if (batched.self_cpu_s < loop.self_cpu_s / 1.05) {
    std::printf(
        "   Real batching is %s the loop: it pays an op's fixed cost (the loop's\n"
        "   ops took %s each, for 100 elements) 40 times instead of 40000, at %s\n"
        "   per element.\n",
        ratio_words(batched.self_cpu_s, loop.self_cpu_s).c_str(), time_str(per_op).c_str(),
        time_str(per_element).c_str());
  } else {
    std::printf(
        "   Real batching is %s the loop: its ops spent %s per element against the\n"
        "   loop's %s (%s per op of 100 elements, overhead included). The arithmetic\n"
        "   and memory traffic, not a per-op overhead, set the time here%s.\n",
        ratio_words(batched.self_cpu_s, loop.self_cpu_s).c_str(), time_str(per_element).c_str(),
        time_str(loop_per_element).c_str(), time_str(per_op).c_str(),
        kOptimized ? ": a C++ op costs a fraction of a\n   microsecond, a PyTorch op several"
                   : "\n   (an unoptimized build: element loops are far slower than in release)");
  }
}

void explain_loops(const Setup& s, const LoopResults& r) {
  std::printf(
      "\n   Self CPU: fake batching is %s the plain loop (notebook: 1.207 s / 875.6 ms,\n"
      "   1.38x slower); real batching is %s the loop.\n",
      ratio_words(r.fake.self_cpu_s, r.loop.self_cpu_s).c_str(),
      ratio_words(r.batched.self_cpu_s, r.loop.self_cpu_s).c_str());
  explain_fake(s, r.loop, r.fake, r.threads_hurt());
  explain_real(r);
  const GraphTimes& g = r.graph;
  if (g.graph_s > 0)
    std::printf(
        "   Replayed as a graph, the plain loop is %s its eager run and %s\n"
        "   real batching: a graph removes the host's cost per op, but each of its 40 000\n"
        "   kernels still runs on the GPU (%s each), where batching runs 40.\n",
        ratio_words(g.graph_s, g.eager_s).c_str(), ratio_words(g.graph_s, g.batched_s).c_str(),
        time_str(g.graph_s / (2.0 * kSmall)).c_str());
}

// ---- 4. the notebook's f(): elementwise products of dstacked lists ----------------------------

constexpr int64_t kA = 100, kB = 200;  // a: 100 matrices; b: 200 lists of 100

struct Lists {
  std::vector<tl::Tensor> a;
  std::vector<std::vector<tl::Tensor>> b;
};

Lists make_lists(const Setup& s) {
  Lists l;
  for (int64_t i = 0; i < kA; ++i) l.a.push_back(tl::rand({10, 10}, s.device));
  l.b.resize(kB);
  for (auto& component : l.b)
    for (int64_t j = 0; j < kA; ++j) component.push_back(tl::rand({10, 10}, s.device));
  s.sync();  // the 20 100 rand kernels finish before any clock starts
  return l;
}

// res[i] = a_tensor * dstack(b[i]): 200 multiplies of [10, 10, 100], each copied into the CPU
// result (the notebook's res = torch.zeros(...) has no device).
tl::Tensor dstacked(const Lists& l) {
  tl::Tensor res = tl::zeros({kB, 10, 10, kA});
  const tl::Tensor a_tensor = tl::dstack(l.a);  // [10, 10, 100]
  for (int64_t i = 0; i < kB; ++i) res[i] = a_tensor * tl::dstack(l.b[i]);
  return res;
}

// res_slow[i, :, :, j] = a[j] * b[i][j]: 20 000 multiplies, each copied into a strided slice.
tl::Tensor one_by_one(const Lists& l) {
  tl::Tensor res_slow = tl::zeros({kB, 10, 10, kA});
  for (int64_t i = 0; i < kB; ++i)
    for (int64_t j = 0; j < kA; ++j) res_slow[i].select(2, j) = l.a[j] * l.b[i][j];
  return res_slow;
}

struct FResults {
  double fast_s = 0, slow_s = 0;
  bool equal = false;
};

// Median of 3 timed runs after an untimed one (the notebook's numbers are not first runs either;
// a median keeps one run disturbed by the machine's other work out).
double median_seconds(const Setup& s, const std::function<tl::Tensor()>& work, tl::Tensor& out) {
  out = work();
  std::vector<double> t;
  for (int r = 0; r < 3; ++r) {
    s.sync();
    const auto start = Clock::now();
    out = work();
    s.sync();
    t.push_back(seconds_since(start));
  }
  std::sort(t.begin(), t.end());
  return t[1];
}

FResults notebook_f(const Setup& s, const Lists& l, bool threads_hurt) {
  std::printf(
      "\n4. The notebook's f(): a = 100 rand(10, 10), b = 200 lists of 100, on %s;\n"
      "   res[i] = dstack(a) * dstack(b[i]) against res_slow[i, :, :, j] = a[j] * b[i][j]\n",
      s.device.str().c_str());
  FResults r;
  tl::Tensor res, res_slow;
  r.fast_s = median_seconds(
      s, [&] { return dstacked(l); }, res);
  r.slow_s = median_seconds(
      s, [&] { return one_by_one(l); }, res_slow);
  r.equal = tl::equal(res, res_slow);
  std::printf("   dstack: %.6f s   one by one: %.6f s   res.equal(res_slow): %s   (medians of 3)\n",
              r.fast_s, r.slow_s, r.equal ? "True" : "False");
  std::printf("   notebook: 0.046735525 s, 1.034254551 s, True (22.1x)\n");
  std::printf(
      "   Here dstack is %s one by one,\n"
      "   %s 200 multiplies and 200 copies into res instead of 20 000 of each%s.\n",
      ratio_words(r.fast_s, r.slow_s).c_str(),
      r.fast_s * 1.05 < r.slow_s ? "as it makes" : "although it makes",
      s.gpu ? " (on the GPU, 200 device-to-host copies instead of 20 000)" : "");
  std::printf(
      "   One multiply and its copy cost %s here, against the notebook's 51.7 us (Python,\n"
      "   a GPU launch and a device-to-host copy each): the cheaper a small op, the less\n"
      "   batching saves.%s\n",
      time_str(r.slow_s / (kA * kB)).c_str(),
      threads_hurt ? " The batch-wide ops also wait for busy cores here (part 3)." : "");
  std::printf("   %s\n", r.equal ? "Each element is the same float product either way, so the "
                                   "results are equal bit for bit."
                                 : "The results differ: an elementwise product should not.");
  return r;
}

// ---- 5. the same lists with matmul: one batched call ------------------------------------------

struct MatmulResults {
  double loop_s = 0, stack_s = 0, matmul_s = 0;
};

// The 20 000 products one by one, each copied into its slice of the result.
tl::Tensor matmul_loop(const Setup& s, const Lists& l) {
  tl::Tensor res = tl::empty({kB, kA, 10, 10}, s.device);
  for (int64_t g = 0; g < kB; ++g)
    for (int64_t i = 0; i < kA; ++i) res[g][i] = tl::matmul(l.a[i], l.b[g][i]);
  return res;
}

// dstack puts each list along a third dim; permuted views put it first without copying.
struct Batches {
  tl::Tensor a, b;  // [100, 10, 10] and [200, 100, 10, 10]
};

Batches make_batches(const Lists& l) {
  std::vector<tl::Tensor> groups;
  for (const auto& group : l.b) groups.push_back(tl::dstack(group));
  return {tl::dstack(l.a).permute({2, 0, 1}), tl::stack(groups).permute({0, 3, 1, 2})};
}

void explain_matmul(const MatmulResults& r, bool equal) {
  std::printf("   One batched matmul is %s the loop; with the dstacks it is %s it.\n",
              ratio_words(r.matmul_s, r.loop_s).c_str(),
              ratio_words(r.stack_s + r.matmul_s, r.loop_s).c_str());
  if (r.stack_s > r.matmul_s)
    std::printf(
        "   Building the batch from 20 100 separate tensors cost %.1fx the product itself:\n"
        "   batching pays most when the data already lives batched.\n",
        r.stack_s / r.matmul_s);
  std::printf("   %s\n", equal ? "Each product summed its terms in the same order either way, so "
                                 "the bits agree; a batched\n   kernel need not (it may block "
                                 "the sums differently): matmul results are compared\n   with "
                                 "allclose, elementwise products with equal."
                               : "The batched kernel summed the terms in another order, so the "
                                 "last bits differ:\n   matmul results are compared with "
                                 "allclose, elementwise products with equal.");
}

MatmulResults matmul_variant(const Setup& s, const Lists& l) {
  std::printf("\n5. The same lists with matmul: res[g][i] = a[i] @ b[g][i], 20000 products on %s\n",
              s.device.str().c_str());
  MatmulResults r;
  tl::Tensor loop, batched, unused;
  r.loop_s = median_seconds(
      s, [&] { return matmul_loop(s, l); }, loop);
  Batches batches;
  r.stack_s = median_seconds(
      s,
      [&] {
        batches = make_batches(l);
        return batches.a;
      },
      unused);
  // [100, 10, 10] @ [200, 100, 10, 10]: a broadcasts over the 200 groups.
  r.matmul_s = median_seconds(
      s, [&] { return tl::matmul(batches.a, batches.b); }, batched);
  const bool equal = tl::equal(loop, batched), close = tl::allclose(loop, batched);
  std::printf(
      "   loop %s, dstack %s, one batched matmul %s (medians of 3);\n"
      "   equal: %s, allclose: %s\n",
      time_str(r.loop_s).c_str(), time_str(r.stack_s).c_str(), time_str(r.matmul_s).c_str(),
      equal ? "yes" : "no", close ? "yes" : "NO");
  explain_matmul(r, equal);
  return r;
}

// ---- the chart ------------------------------------------------------------------------------

void write_chart(const LoopResults& r, const FResults& f, const MatmulResults& m) {
  using tl_example::Bar;
  std::vector<Bar> bars = {
      {"1. loop: 20000 x (rand, x*x)", r.loop.self_cpu_s * 1e3},
      {"2. fake batched (slice copies)", r.fake.self_cpu_s * 1e3},
      {"3. batched: 20 x rand(1000,10,10)", r.batched.self_cpu_s * 1e3},
  };
  if (r.batched_1t) bars.push_back({"3. batched, on 1 thread", r.batched_1t->self_cpu_s * 1e3});
  bars.insert(bars.end(), {{"4. f(): one by one (20000 *)", f.slow_s * 1e3},
                           {"4. f(): dstack (200 *)", f.fast_s * 1e3},
                           {"5. matmul loop (20000 @)", m.loop_s * 1e3},
                           {"5. dstack + batched matmul", (m.stack_s + m.matmul_s) * 1e3}});
  const std::string path = tl_example::write_chart(
      "vectorization.svg",
      tl_example::bar_chart_svg("Loops vs batches (1-3: Self CPU total; 4-5: wall time)", "ms",
                                bars));
  std::printf("chart: %s\n", path.c_str());
}

}  // namespace

int main() {
  Setup s;
  s.gpu = tl::cuda::is_available();
  s.device = s.gpu ? tl::Device::cuda(0) : tl::Device::cpu();
  std::printf("Vectorization, on %s (%d CPU threads).%s\n\n", s.device.str().c_str(),
              tl::get_num_threads(),
              s.gpu ? ""
                    : " No CUDA GPU here: the notebook's GPU tensors are CPU tensors,\n"
                      "so no copy crosses devices; each part says what a GPU changes.");
  if (!kOptimized)
    std::printf(
        "This is an unoptimized build: element loops run many times slower than in a "
        "release\nbuild, which moves every balance below toward the small-op loops.\n\n");
  tl::manual_seed(0);
  const LoopResults loops = loops_and_batches(s);
  explain_loops(s, loops);
  const Lists lists = make_lists(s);
  const FResults f = notebook_f(s, lists, loops.threads_hurt());
  const MatmulResults m = matmul_variant(s, lists);
  std::printf("\n");
  write_chart(loops, f, m);
  return f.equal ? 0 : 1;
}

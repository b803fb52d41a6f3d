// Profiler rows: one public call records its op once, as one key_averages row of one call, and no
// op records a scope of its own name inside itself (composites record the other ops they call).
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "test_util.h"

namespace {

namespace tl = tensorlet;
namespace prof = tensorlet::profiler;
using prof::Event;
using prof::EventKind;
using tl::Tensor;

struct Call {
  std::string op;  // the row the call must record exactly once
  std::function<void()> run;
};

// Each op event whose parent op has its own name, as "tl::add_ in tl::add_".
std::vector<std::string> nested_same_name(const std::vector<Event>& events) {
  std::map<int64_t, const Event*> by_id;
  for (const Event& e : events) by_id[e.id] = &e;
  std::vector<std::string> out;
  for (const Event& e : events) {
    if (e.kind != EventKind::Op || e.parent == 0) continue;
    const Event* p = by_id.count(e.parent) ? by_id.at(e.parent) : nullptr;
    if (p != nullptr && p->kind == EventKind::Op && p->name == e.name)
      out.push_back(e.name + " in " + p->name);
  }
  return out;
}

// Records one call: its op's key_averages row must count 1 call, with nothing of the same name
// nested anywhere.
void check_one_row(const Call& c) {
  prof::Profile profile;
  c.run();
  profile.stop();
  INFO("op: " << c.op);
  int64_t calls = 0;
  const prof::KeyAverages averages = profile.key_averages();
  for (const prof::EventAverage& row : averages.rows())
    if (row.key == c.op) calls = row.count;
  CHECK(calls == 1);
  for (const std::string& n : nested_same_name(profile.events())) FAIL_CHECK("nested: " << n);
}

Tensor f(const tl::Shape& s) { return tl::rand(s); }
Tensor i64(const tl::Shape& s) { return tl::randint(1, 5, s); }

}  // namespace

TEST_CASE("profiler rows: add_/sub_ with alpha, out= forms and methods record one row per call") {
  const Tensor b = f({4}), m = f({3, 4}), idx = tl::arange(3);
  std::vector<Call> calls{
      // Issue 30: add_(scalar, alpha) recursed into its own scope.
      {"tl::add_", [&] { f({4}).add_(2, 3); }},
      {"tl::sub_", [&] { f({4}).sub_(2, 3); }},
      {"tl::add_", [&] { i64({4}).add_(2, 3); }},
      {"tl::add_", [&] { f({4}).add_(b, 2); }},
      {"tl::sub_", [&] { f({4}).sub_(b, 0.5); }},
      {"tl::add_", [&] { f({4}).add_(2); }},
      {"tl::add_", [&] { f({4}).add_(b); }},
      {"tl::sub_", [&] { f({4}).sub_(b); }},
      {"tl::mul_", [&] { f({4}).mul_(2); }},
      {"tl::div_", [&] { f({4}).div_(b); }},
      {"tl::add_",
       [&] {
         Tensor x = f({4});
         x += 1;
       }},
      {"tl::add", [&] { tl::add(b, b, 2); }},
      {"tl::add", [&] { tl::add(b, 2, 3); }},
      {"tl::sub", [&] { tl::sub(b, b, 2); }},
      {"tl::sub", [&] { tl::sub(b, 2, 3); }},
      {"tl::add", [&] { (void)(b + 1); }},
      // out= forms run their op's front-end once.
      {"tl::add",
       [&] {
         Tensor out = tl::empty({4});
         tl::add_out(out, b, b);
       }},
      {"tl::mul",
       [&] {
         Tensor out = tl::empty({0});
         tl::mul_out(out, b, 2);
       }},
      {"tl::exp",
       [&] {
         Tensor out = tl::empty({4});
         tl::exp_out(out, b);
       }},
      {"tl::sum",
       [&] {
         Tensor out = tl::empty({0});
         tl::sum_out(out, m, 1);
       }},
      {"tl::matmul",
       [&] {
         Tensor out = tl::empty({0});
         tl::matmul_out(out, m.t(), m);
       }},
      {"tl::addmm",
       [&] {
         Tensor out = tl::empty({0});
         tl::addmm_out(out, tl::zeros({4, 4}), m.t(), m);
       }},
      // Methods call the front-end once.
      {"tl::sum", [&] { m.sum(1); }},
      {"tl::exp", [&] { b.exp(); }},
      {"tl::exp_", [&] { f({4}).exp_(); }},
      {"tl::clamp_", [&] { f({4}).clamp_(0.2, 0.8); }},
      {"tl::masked_fill_", [&] { f({4}).masked_fill_(b > 0.5, 0); }},
      {"tl::lerp_", [&] { f({4}).lerp_(b, 0.5); }},
      {"tl::nan_to_num_", [&] { f({4}).nan_to_num_(); }},
      {"tl::addmm_",
       [&] {
         tl::zeros({4, 4}).addmm_(m.t(), m);
       }},
      {"tl::index_add_",
       [&] {
         f({3, 4}).index_add_(0, idx, m);
       }},
      {"tl::scatter_",
       [&] {
         f({3, 4}).scatter_(1, i64({3, 4}) - 1, m);
       }},
      // Composites calling themselves on another view.
      {"tl::roll", [&] { tl::roll(m, {1}); }},
      {"tl::tile",
       [&] {
         tl::tile(b, {2, 1});
       }},
      {"tl::repeat",
       [&] {
         b.repeat({2, 1});
       }},
      {"tl::to", [&] { b.to(tl::TensorOptions(tl::kFloat64).device(tl::Device::cpu())); }},
  };
  // A new dtype and a new device: two copies, one call, one row.
  if (tl::cuda::is_available())
    calls.push_back(
        {"tl::to", [&] { b.to(tl::TensorOptions(tl::kFloat64).device(tl::Device::cuda(0))); }});
  for (const Call& c : calls) check_one_row(c);
}

TEST_CASE("profiler rows: no op records its own name nested inside itself") {
  const Tensor a = f({3, 4}), b = f({3, 4}), v = f({4}), sq = f({4, 4}), bt = f({2, 3, 3});
  const Tensor idx = tl::arange(3), sorted = tl::arange(10, tl::kFloat32);
  prof::Profile profile;
  // Elementwise, in every form.
  for (Tensor x : {a + b,
                   a - 1,
                   2 * a,
                   a / b,
                   tl::pow(a, 2),
                   tl::maximum(a, b),
                   a == b,
                   tl::fmod(a, 0.3),
                   tl::atan2(a, b),
                   tl::add(a, b, 2),
                   tl::sub(a, 1, 2),
                   tl::exp(a),
                   tl::sqrt(a),
                   tl::square(a),
                   tl::clamp(a, 0.2, 0.8),
                   tl::where(a > 0.5, a, b),
                   tl::masked_fill(a, a > 0.5, 1),
                   tl::softplus(a, 2),
                   tl::gelu(a, "tanh"),
                   tl::lerp(a, b, 0.5),
                   tl::isclose(a, b),
                   tl::nan_to_num(a)})
    (void)x;
  {
    Tensor x = a.clone();
    x.add_(b, 2).sub_(1, 2).mul_(b).div_(2).exp_().clamp_(0.1, 0.9).nan_to_num_();
    x.masked_fill_(x > 0.5, 0).lerp_(b, 0.25).fill_(1).copy_(b);
    Tensor out = tl::empty({0});
    tl::div_out(out, a, b);
    tl::sqrt_out(out, a);
  }
  // Reductions and their composites.
  for (Tensor x : {a.sum(),
                   a.sum(1),
                   a.mean({0, 1}),
                   a.prod(0),
                   a.amax(1),
                   a.amin(),
                   a.all(),
                   a.any(0),
                   a.max(),
                   a.argmax(1),
                   tl::var(a, 1),
                   tl::std(a),
                   tl::logsumexp(a, 1),
                   tl::norm(a),
                   tl::norm(a, 1, 1),
                   tl::norm(a, "fro"),
                   tl::nansum(a, 1),
                   tl::nanmean(a),
                   tl::count_nonzero(a, 0),
                   tl::median(a),
                   tl::softmax(a, 1),
                   tl::log_softmax(a, 0),
                   tl::cumsum(a, 1),
                   tl::cumprod(a, 0)})
    (void)x;
  (void)tl::var_mean(a, 1);
  (void)tl::max(a, 1);
  (void)tl::cummax(a, 1);
  (void)tl::sort(a, 1);
  (void)tl::topk(a, 2);
  (void)tl::kthvalue(a, 2);
  (void)tl::unique(tl::randint(0, 4, {10}), true, true, true);
  (void)tl::bincount(tl::randint(0, 4, {10}));
  (void)tl::histc(a, 4);
  (void)tl::searchsorted(sorted, v * 10);
  // Linear algebra, joining, indexing, scatter.
  for (Tensor x : {tl::matmul(a, b.t()),
                   tl::mm(a, b.t()),
                   tl::bmm(bt, bt),
                   tl::outer(v, v),
                   tl::addmm(sq, sq, sq),
                   tl::baddbmm(bt, bt, bt),
                   tl::einsum("ij,kj->ik", {a, b}),
                   tl::linear(a, b),
                   tl::cat({a, b}),
                   tl::stack({a, b}),
                   tl::vstack({a, b}),
                   tl::hstack({a, b}),
                   tl::dstack({a, b}),
                   tl::index_select(a, 0, idx),
                   tl::gather(a, 1, tl::zeros({3, 2}, tl::kInt64)),
                   tl::nonzero(a > 0.5),
                   tl::masked_select(a, a > 0.5),
                   a.index({idx}),
                   tl::take(a, idx),
                   tl::scatter_add(a, 0, tl::zeros({3, 4}, tl::kInt64), b),
                   tl::scatter_reduce(a, 0, tl::zeros({3, 4}, tl::kInt64), b, "mean", false),
                   tl::index_add(a, 0, idx, b),
                   tl::index_copy(a, 0, idx, b),
                   tl::index_fill(a, 1, idx, 0),
                   tl::masked_scatter(a, a > 0.5, b)})
    (void)x;
  {
    Tensor x = a.clone();
    x.index_put_({idx}, 0.0);
    x.index_put_({x > 0.5}, 1.0);
    x.put_(idx, v.slice(0, 0, 3), true);
  }
  // Shape ops and factories.
  for (Tensor x : {a.repeat({2, 1}),
                   a.tile({2}),
                   a.flip({0, 1}),
                   a.roll({1}),
                   a.roll({1, 1}, {0, 1}),
                   a.tril(),
                   a.triu(1),
                   tl::diag(v),
                   tl::diag_embed(a),
                   tl::one_hot(idx),
                   a.reshape({12}),
                   a.t().reshape({12}),
                   a.contiguous(),
                   a.t().contiguous(),
                   a.to(tl::kFloat64),
                   tl::zeros({3}),
                   tl::ones({2, 2}),
                   tl::full({2}, 1.5),
                   tl::arange(5),
                   tl::linspace(0, 1, 5),
                   tl::eye(3),
                   tl::rand({3}),
                   tl::randn({3}),
                   tl::randint(0, 5, {3}),
                   tl::randperm(5),
                   tl::normal(0, 1, {3}),
                   tl::normal(a, 1.0),
                   tl::bernoulli(a),
                   tl::multinomial(v, 2),
                   tl::zeros_like(a),
                   tl::full_like(a, 2),
                   tl::rand_like(a),
                   tl::scalar_tensor(1),
                   tl::from_vector(std::vector<float>{1})})
    (void)x;
  a.clone().uniform_().normal_().random_(0, 5).bernoulli_(0.5);
  profile.stop();
  for (const std::string& n : nested_same_name(profile.events())) FAIL_CHECK("nested: " << n);
}

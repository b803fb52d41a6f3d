// Random shapes, views, dtypes, values and ops for the differential fuzzer.
#include "fuzz/generator.h"

#include <algorithm>
#include <array>
#include <limits>
#include <numeric>

namespace fuzz {
namespace {

// All ten dtypes, the five classic ones (bool first) about twice as likely as the five of issue 12.
struct Weighted {
  DType d;
  int w;
};
constexpr Weighted kDTypes[] = {
    {tl::kBool, 4},  {tl::kInt32, 4}, {tl::kInt64, 4}, {tl::kFloat32, 5}, {tl::kFloat64, 4},
    {tl::kUInt8, 2}, {tl::kInt8, 2},  {tl::kInt16, 2}, {tl::kFloat16, 2}, {tl::kBFloat16, 2}};

DType pick(Rng& r, bool (*keep)(DType)) {
  int total = 0;
  for (const auto& e : kDTypes)
    if (keep(e.d)) total += e.w;
  int64_t x = r.uniform(0, total - 1);
  for (const auto& e : kDTypes) {
    if (!keep(e.d)) continue;
    if (x < e.w) return e.d;
    x -= e.w;
  }
  return tl::kFloat32;
}
DType random_dtype(Rng& r) {
  return pick(r, [](DType) { return true; });
}
DType random_float_dtype(Rng& r) { return pick(r, is_float); }
DType random_nonbool_dtype(Rng& r) {
  return pick(r, [](DType d) { return d != tl::kBool; });
}
// uint8, int8, int16: Python-number operands stay in their range (see narrow_scalars).
bool is_narrow_int(DType d) { return d == tl::kUInt8 || d == tl::kInt8 || d == tl::kInt16; }

enum class Profile { Normal, Small };

constexpr double kInfinity = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

V random_value(Rng& r, DType d, Profile p) {
  V v;
  if (d == tl::kBool) {
    v.i = r.uniform(0, 1);
  } else if (is_int(d)) {
    const int64_t lo = int_lo(d), hi = int_hi(d);
    if (p == Profile::Small) {
      v.i = r.uniform(-3, 3);
    } else {
      double u = r.real();
      if (u < 0.85)
        v.i = r.uniform(-5, 5);
      else if (u < 0.95)
        v.i = r.uniform(-1000, 1000);
      else {
        const int64_t ext[] = {lo, hi, lo + 1, hi - 1};
        v.i = ext[r.uniform(0, 3)];
      }
    }
    v.i = wrap_to(v.i, d);  // uint8 -3 is 253
  } else {
    if (p == Profile::Small) {
      v.f = static_cast<double>(r.uniform(-6, 6)) / 4;
    } else {
      double u = r.real();
      if (u < 0.8)
        v.f = static_cast<double>(r.uniform(-32, 32)) / 8;
      else if (u < 0.95)
        v.f = (r.real() - 0.5) * 6;
      else {
        const double sp[] = {0.0,
                             -0.0,
                             100.0,
                             1e-3,
                             std::numeric_limits<double>::quiet_NaN(),
                             std::numeric_limits<double>::infinity(),
                             -std::numeric_limits<double>::infinity()};
        v.f = sp[r.uniform(0, 6)];
      }
    }
    v.f = round_float(v.f, d);
  }
  return v;
}

// A shape above the CPU backend's parallel grain (32 768 elements), so its threaded paths run.
Dims large_shape(Rng& r) {
  Dims s(r.uniform(1, 4));
  for (auto& x : s) x = r.uniform(1, 6);
  const int64_t target = r.uniform(32768, 90000);
  while (numel_of(s) < target) s[r.uniform(0, static_cast<int64_t>(s.size()) - 1)] *= 2;
  return s;
}

Dims random_shape(Rng& r, int64_t max_nd = 6, int64_t max_numel = 192) {
  const int weights[] = {8, 22, 25, 20, 12, 7, 6};
  int64_t total = 0;
  for (int64_t k = 0; k <= max_nd; ++k) total += weights[k];
  int64_t pick = r.uniform(0, total - 1), nd = 0;
  while (pick >= weights[nd]) pick -= weights[nd++];
  Dims s(nd);
  for (auto& x : s) {
    double u = r.real();
    x = u < 0.04 ? 0 : u < 0.26 ? 1 : r.uniform(2, 5);
  }
  while (numel_of(s) > max_numel) *std::max_element(s.begin(), s.end()) -= 1;
  return s;
}

// A shape that broadcasts with `out` to `out` (rarely one that does not).
Dims partner_shape(Rng& r, const Dims& out, double bad = 0.04) {
  int64_t drop = out.empty() ? 0 : r.uniform(0, static_cast<int64_t>(out.size()));
  if (r.chance(0.5)) drop = 0;
  Dims s(out.begin() + drop, out.end());
  for (auto& x : s)
    if (r.chance(0.25)) x = 1;
  if (r.chance(bad) && !s.empty()) {
    int64_t d = r.uniform(0, static_cast<int64_t>(s.size()) - 1);
    s[d] = s[d] + 2;
  }
  return s;
}

std::vector<V> random_values(Rng& r, DType d, int64_t n, Profile p) {
  std::vector<V> v(n);
  for (auto& x : v) x = random_value(r, d, p);
  return v;
}

struct InputOpts {
  bool alias = true;       // expand and as_strided allowed (views whose elements repeat)
  bool as_strided = true;  // as_strided allowed (off for destinations: it may overlap itself)
  Profile profile = Profile::Normal;
  int64_t max_steps = 3;
};

// An input whose final view has shape `want`: the view chain is built backwards from it.
Input make_input(Rng& r, DType d, const Dims& want, const Known& known, InputOpts o = {}) {
  Input in;
  in.dtype = d;
  Dims cur = want;
  std::vector<ViewStep> steps;
  int64_t n = r.chance(0.35) ? 0 : r.uniform(1, o.max_steps);
  for (int64_t s = 0; s < n; ++s) {
    const int64_t nd = static_cast<int64_t>(cur.size());
    ViewStep st{};
    int kind = static_cast<int>(r.uniform(0, 6));
    if (nd == 0 && kind != 3 && kind != 4 && kind != 6) kind = 6;
    if ((!o.alias && (kind == 3 || kind == 4)) || (!o.as_strided && kind == 4)) kind = 2;
    if (nd == 0 && kind == 2) kind = 6;
    Dims pre = cur;
    bool terminal = false;
    switch (kind) {
      case 0: {  // transpose
        st.kind = ViewKind::Transpose;
        st.x = r.uniform(0, nd - 1);
        st.y = r.uniform(0, nd - 1);
        std::swap(pre[st.x], pre[st.y]);
        if (r.chance(0.3)) st.x -= nd;
        break;
      }
      case 1: {  // permute: result[i] = pre[p[i]]
        st.kind = ViewKind::Permute;
        st.a.resize(nd);
        std::iota(st.a.begin(), st.a.end(), 0);
        for (int64_t i = nd - 1; i > 0; --i) std::swap(st.a[i], st.a[r.uniform(0, i)]);
        for (int64_t i = 0; i < nd; ++i) pre[st.a[i]] = cur[i];
        break;
      }
      case 2: {  // slice with a step
        st.kind = ViewKind::Slice;
        st.x = r.uniform(0, nd - 1);
        st.w = r.uniform(1, 3);
        st.y = r.uniform(0, 2);
        const int64_t len = cur[st.x];
        st.z = len > 0 ? st.y + (len - 1) * st.w + 1 : st.y;
        pre[st.x] = st.z + r.uniform(0, 2);
        if (r.chance(0.3)) st.y -= pre[st.x];  // a negative start
        break;
      }
      case 3: {  // expand from size-1 (and missing leading) dims
        st.kind = ViewKind::Expand;
        st.a = cur;
        int64_t lead = r.chance(0.3) && nd > 0 ? r.uniform(0, nd) : 0;
        pre.assign(cur.begin() + lead, cur.end());
        for (auto& x : pre)
          if (r.chance(0.4)) x = 1;
        for (int64_t i = lead; i < nd; ++i)
          if (pre[i - lead] == cur[i] && r.chance(0.3)) st.a[i] = -1;
        break;
      }
      case 4: {  // as_strided on the storage: strides may overlap, within bounds (terminal)
        st.kind = ViewKind::AsStrided;
        st.a = cur;
        st.b.resize(nd);
        int64_t reach = 0;
        for (int64_t i = 0; i < nd; ++i) {
          st.b[i] = r.uniform(0, 6);
          reach += std::max<int64_t>(cur[i] - 1, 0) * st.b[i];
        }
        st.x = r.uniform(0, 3);
        pre = {numel_of(cur) == 0 ? st.x + r.uniform(0, 2) : st.x + reach + 1 + r.uniform(0, 2)};
        terminal = true;
        break;
      }
      case 5: {  // unsqueeze: needs a size-1 dim
        std::vector<int64_t> ones;
        for (int64_t i = 0; i < nd; ++i)
          if (cur[i] == 1) ones.push_back(i);
        if (ones.empty()) continue;
        st.kind = ViewKind::Unsqueeze;
        st.x = ones[r.uniform(0, static_cast<int64_t>(ones.size()) - 1)];
        pre.erase(pre.begin() + st.x);
        break;
      }
      default: {  // select
        st.kind = ViewKind::Select;
        st.x = r.uniform(0, nd);
        int64_t size = r.uniform(1, 3);
        st.y = r.uniform(0, size - 1);
        if (r.chance(0.3)) st.y -= size;
        pre.insert(pre.begin() + st.x, size);
        break;
      }
    }
    steps.insert(steps.begin(), st);
    cur = pre;
    if (terminal) break;
  }
  in.views = steps;
  in.base_shape = cur;
  in.values = random_values(r, d, numel_of(cur), o.profile);
  if (d == tl::kBool && !known.bool_bytes && r.chance(0.15)) {
    in.bool_bytes.resize(in.values.size());
    for (size_t i = 0; i < in.values.size(); ++i) {
      in.bool_bytes[i] =
          static_cast<uint8_t>(r.uniform(0, 3) == 0 ? r.uniform(2, 255) : r.uniform(0, 1));
      in.values[i].i = in.bool_bytes[i];
    }
  }
  return in;
}

ScalarArg random_scalar(Rng& r, std::optional<tl::DTypeKind> kind = std::nullopt) {
  ScalarArg s;
  int k = kind ? static_cast<int>(*kind) : static_cast<int>(r.uniform(0, 2));
  s.kind = static_cast<tl::DTypeKind>(k);
  if (s.kind == tl::DTypeKind::Bool)
    s.v.i = r.uniform(0, 1);
  else if (s.kind == tl::DTypeKind::Integer)
    s.v.i = r.chance(0.9) ? r.uniform(-5, 5) : r.uniform(-1000, 1000);
  else
    s.v = random_value(r, tl::kFloat64, Profile::Normal);
  return s;
}

// Reduction dims: all (empty), a random subset, rarely a repeated or out-of-range one.
Dims random_dims(Rng& r, int64_t nd) {
  Dims d;
  if (r.chance(0.3)) return d;
  const int64_t span = std::max<int64_t>(nd, 1);
  for (int64_t i = 0; i < span; ++i)
    if (r.chance(0.5)) d.push_back(r.chance(0.3) ? i - span : i);
  if (d.empty()) d.push_back(r.uniform(0, span - 1));
  for (int64_t i = static_cast<int64_t>(d.size()) - 1; i > 0; --i)
    std::swap(d[i], d[r.uniform(0, i)]);
  if (r.chance(0.03)) d.push_back(d[0]);
  if (r.chance(0.03)) d.push_back(span);
  return d;
}

// A shape with `numel` elements (or, rarely, a wrong one), possibly with one -1.
Dims random_target_shape(Rng& r, int64_t numel) {
  int64_t nd = r.uniform(0, 5);
  Dims s(nd, 1);
  if (numel == 0) {
    if (nd == 0) s = {0};
    for (auto& x : s) x = r.uniform(0, 3);
    s[r.uniform(0, static_cast<int64_t>(s.size()) - 1)] = 0;
  } else if (nd == 0) {
    if (numel != 1) s = {numel};
  } else {
    int64_t rest = numel;
    for (int64_t p = 2; rest > 1; ++p)
      while (rest % p == 0) {
        s[r.uniform(0, nd - 1)] *= p;
        rest /= p;
      }
  }
  if (!s.empty() && r.chance(0.15)) s[r.uniform(0, static_cast<int64_t>(s.size()) - 1)] = -1;
  if (r.chance(0.04)) {
    if (s.empty())
      s = {2};
    else
      s[0] = s[0] == -1 ? -2 : s[0] + 1;
  }
  return s;
}

// conv2d and the pools: mostly float32 / float64, sometimes float16 / bfloat16, now and then a
// non-floating dtype (refused, or an open known-bug family: see Known::window_int).
DType window_dtype(Rng& r) {
  const double u = r.real();
  if (u < 0.05) return pick(r, [](DType d) { return !is_float(d); });
  return u < 0.45 ? tl::kFloat32 : u < 0.8 ? tl::kFloat64 : u < 0.9 ? tl::kFloat16 : tl::kBFloat16;
}

// [N, C, H, W] with N 0..3 (0 now and then), H and W 1..9; a quarter unbatched [C, H, W]; now and
// then 2-D [H, W] or 5-D (both refused, except where adaptive_avg_pool2d takes a mean).
Dims window_shape(Rng& r, int64_t channels) {
  Dims s{r.chance(0.1) ? 0 : r.uniform(1, 3), channels, r.uniform(1, 9), r.uniform(1, 9)};
  const double u = r.real();
  if (u < 0.25)
    s.erase(s.begin());
  else if (u < 0.265)
    s.erase(s.begin(), s.begin() + 2);
  else if (u < 0.28)
    s.insert(s.begin(), r.uniform(1, 2));
  return s;
}

// The spatial sizes (H, W) of a window input: its last two dims.
std::array<int64_t, 2> spatial(const Dims& s) {
  const size_t n = s.size();
  return {s[n - 2], s[n - 1]};
}

// A pair argument: one value for both dims (a third of the time) or (H, W).
Dims random_pair(Rng& r, int64_t lo, int64_t hi) {
  if (r.chance(0.35)) return {r.uniform(lo, hi)};
  return {r.uniform(lo, hi), r.uniform(lo, hi)};
}

// A dilation: one number or (H, W), each mostly 1, sometimes 2 or 3.
Dims random_dilation(Rng& r) {
  auto step = [&] { return r.chance(0.7) ? int64_t{1} : r.uniform(2, 3); };
  Dims d{step()};
  if (r.chance(0.5)) d.push_back(step());
  return d;
}

// With probability p, one value of a pair argument set to `bad` (refused).
void spoil(Rng& r, Dims& pair, double p, int64_t bad) {
  if (!pair.empty() && r.chance(p)) pair[r.uniform(0, static_cast<int64_t>(pair.size()) - 1)] = bad;
}

// The value of a pair argument for dim i (0: H, 1: W).
int64_t pair_at(const Dims& pair, size_t i) { return pair[i % pair.size()]; }

// conv2d: groups 1..3, C = groups * 1..(6 / groups), weight [O, C / groups, kH, kW] with O =
// groups * 1..3, bias [O] half the time, stride 1..3, padding 0..2, dilation 1..3, kernels 1..4
// within the padded input. Now and then: groups 0 or -1, a channel count groups does not divide,
// O not divisible by groups or 0, a kernel one past the padded input, a 3-D weight, a bias of
// another shape or dtype, a weight of another dtype, a zero or negative stride, negative padding,
// zero dilation.
void conv_case(Rng& r, Case& c, const Known& known) {
  const int64_t groups = r.chance(0.6) ? 1 : r.uniform(2, 3);
  c.groups = r.chance(0.01) ? r.uniform(-1, 0) : groups;
  const int64_t channels = groups * r.uniform(1, 6 / groups) + (r.chance(0.015) ? 1 : 0);
  int64_t out = groups * r.uniform(1, 3);
  if (r.chance(0.02)) out = r.chance(0.5) ? 0 : out + 1;
  const Dims in_shape = window_shape(r, channels);
  const auto hw = spatial(in_shape);
  c.stride = random_pair(r, 1, 3);
  c.padding = random_pair(r, 0, 2);
  c.dilation = random_dilation(r);
  Dims kernel(2), fits(2);  // fits: the largest kernel within the padded input, per dim
  for (size_t i = 0; i < 2; ++i) {
    fits[i] = (hw[i] + 2 * pair_at(c.padding, i) - 1) / pair_at(c.dilation, i) + 1;
    kernel[i] = r.uniform(1, std::min<int64_t>(4, fits[i]));
  }
  if (r.chance(0.025)) {
    const int64_t i = r.uniform(0, 1);
    kernel[i] = fits[i] + 1;
  }
  spoil(r, c.stride, 0.015, r.uniform(-1, 0));
  spoil(r, c.padding, 0.01, -1);
  spoil(r, c.dilation, 0.01, 0);
  Dims w_shape{out, channels / groups, kernel[0], kernel[1]};
  if (r.chance(0.01)) w_shape.pop_back();
  const DType d = window_dtype(r);
  const Profile p = Profile::Small;  // sums of products stay small and (in float32) exact
  c.inputs.push_back(make_input(r, d, in_shape, known, {true, true, p}));
  c.inputs.push_back(
      make_input(r, r.chance(0.975) ? d : window_dtype(r), w_shape, known, {true, true, p}));
  if (r.chance(0.5)) {
    Dims b_shape{out};
    if (r.chance(0.03)) b_shape = r.chance(0.5) ? Dims{out + 1} : Dims{1, out};
    c.inputs.push_back(
        make_input(r, r.chance(0.98) ? d : window_dtype(r), b_shape, known, {true, true, p}));
  }
}

// max_pool2d / avg_pool2d: max_pool2d's dilation 1..3; kernel 1..4 within the input (one number
// a third of the time), padding within half the kernel, the default stride (the kernel) or 1..3,
// ceil_mode; avg_pool2d's count_include_pad and divisor_override. Now and then: a kernel one past
// the input (which may still fit the padded input), padding one over half the kernel, a zero or
// negative kernel, stride or dilation, negative padding, a divisor_override of 0.
void pool_case(Rng& r, Case& c, const Known& known) {
  const bool max = c.op == Op::MaxPool2d;
  const Dims in_shape = window_shape(r, r.uniform(1, 6));
  const auto hw = spatial(in_shape);
  if (max) c.dilation = random_dilation(r);
  Dims fits(2);  // the largest kernel within the input, per dim
  for (size_t i = 0; i < 2; ++i) fits[i] = (hw[i] - 1) / (max ? pair_at(c.dilation, i) : 1) + 1;
  if (r.chance(0.35)) fits = {std::min(fits[0], fits[1])};
  for (const int64_t fit : fits)
    c.kernel.push_back(r.chance(0.025) ? fit + 1 : r.uniform(1, std::min<int64_t>(4, fit)));
  c.padding.resize(c.kernel.size() == 1 && r.chance(0.5) ? 1 : 2);
  for (size_t i = 0; i < c.padding.size(); ++i)
    c.padding[i] = r.uniform(0, pair_at(c.kernel, i) / 2);
  if (r.chance(0.03)) {
    const size_t i = r.chance(0.5) ? 0 : c.padding.size() - 1;
    c.padding[i] = pair_at(c.kernel, i) / 2 + 1;
  }
  if (r.chance(0.5)) c.stride = random_pair(r, 1, 3);
  spoil(r, c.kernel, 0.015, r.uniform(-1, 0));
  spoil(r, c.stride, 0.015, r.uniform(-1, 0));
  spoil(r, c.padding, 0.01, -1);
  spoil(r, c.dilation, 0.01, 0);
  c.ceil_mode = r.chance(0.3);
  if (!max) {
    c.count_include_pad = r.chance(0.5);
    const int64_t divisors[] = {1, 2, 3, 5, -2, -3, 0};  // not -1: INT64_MIN / -1 (window_int)
    if (r.chance(0.2)) c.divisor_override = divisors[r.chance(0.07) ? 6 : r.uniform(0, 5)];
  }
  c.inputs.push_back(make_input(r, window_dtype(r), in_shape, known));
}

// adaptive_avg_pool2d: output sizes 1..9 (fewer or more than the input's; 1 x 1 a mean), one
// number or (H, W); now and then 0 or -1. While Known::adaptive_nonfinite is skipped, most inputs
// have their NaN and inf replaced by 100: most cases have one, and would be skipped.
void adaptive_case(Rng& r, Case& c, const Known& known) {
  const Dims in_shape = window_shape(r, r.uniform(1, 6));
  c.output_size = r.chance(0.15) ? Dims{1} : random_pair(r, 1, 9);
  spoil(r, c.output_size, 0.03, r.uniform(-1, 0));
  Input in = make_input(r, window_dtype(r), in_shape, known);
  if (known.adaptive_nonfinite && is_float(in.dtype) && r.chance(0.8))
    for (V& v : in.values)
      if (!std::isfinite(v.f)) v.f = 100;
  c.inputs.push_back(in);
}

// cross_entropy / nll_loss: input [C], [N, C], [N, C, d1] or [N, C, d1, d2] with N 0..5 (0 now
// and then), C 1..12 (now and then 300 or 2000, for the CUDA kernel's block-per-row path) and d
// 1..4, of window_dtype's dtypes (a non-floating one refused). Its values mostly moderate (the
// generator's NaN and inf replaced), a fifth of the cases scaled up to +-80 (exp overflows without
// the max shift), a tenth with many NaN / inf / -inf (rows of NaN, infinite losses). The target:
// int64 class indices of the input's shape without the class dim, about one in six the
// ignore_index (-100, else a valid class or -1); for cross_entropy one case in five class
// probabilities of the input's shape and dtype (multiples of 1/8 in [0, 1], exact in every
// dtype). A weight [C] of the input's dtype half the time (multiples of 1/4 in [0.25, 2]);
// reduction none, mean or sum; cross_entropy's label_smoothing 0, 0.1, 0.5, now and then 1.
// Refused now and then: a class out of range that is not the ignore_index (IndexError), an int32
// target, a target of another shape, a weight of another size, label_smoothing outside [0, 1].
// While Known::cross_entropy_prob_ignore is skipped, probabilities keep ignore_index -100 or -1
// (torch takes negative ones) but for a few cases.
void loss_case(Rng& r, Case& c, const Known& known) {
  const bool ce = c.op == Op::CrossEntropy;
  const int64_t classes = r.chance(0.05) ? (r.chance(0.5) ? 300 : 2000) : r.uniform(1, 12);
  const int64_t n = r.chance(0.1) ? 0 : r.uniform(1, 5);
  Dims shape{n, classes};
  const double u = r.real();
  if (u < 0.15)
    shape = {classes};
  else if (u < 0.35)
    shape.push_back(r.uniform(1, 4));
  else if (u < 0.5)
    shape.insert(shape.end(), {r.uniform(1, 4), r.uniform(1, 4)});
  const DType d = window_dtype(r);
  // A long class dim is not expanded: the gradient of one base element would then sum thousands
  // of terms that cancel to 0, and each device's rounding leaves a different residue there (above
  // the CUDA gradient check's absolute floor: seed 4, case 44568 with C = 2000).
  InputOpts o;
  o.alias = classes <= 12;
  Input in = make_input(r, d, shape, known, o);
  const double mode = r.real();  // < 0.7 moderate, < 0.9 large, else non-finite
  if (is_float(d))
    for (V& v : in.values) {
      if (mode < 0.9 && !std::isfinite(v.f)) v.f = static_cast<double>(r.uniform(-32, 32)) / 8;
      if (mode >= 0.7 && mode < 0.9) v.f = std::clamp(v.f * 20, -80.0, 80.0);
      if (mode >= 0.9 && r.chance(0.1)) {
        const double special[] = {kNan, kInfinity, -kInfinity, -kInfinity};
        v.f = special[r.uniform(0, 3)];
      }
      v.f = round_float(v.f, d);
    }
  c.inputs.push_back(in);

  const bool probs = ce && is_float(d) && r.chance(0.2);
  const double iu = r.real();
  if (!probs) {
    c.ignore_index = iu < 0.8 ? -100 : iu < 0.95 ? r.uniform(0, classes - 1) : -1;
  } else {
    const double valid = known.cross_entropy_prob_ignore ? 0.03 : 0.1;  // fewer while skipped
    c.ignore_index = iu < valid ? r.uniform(0, classes - 1) : iu < valid + 0.05 ? -1 : -100;
  }

  Dims t_shape = shape;
  if (!probs) t_shape.erase(t_shape.begin() + (shape.size() == 1 ? 0 : 1));
  if (r.chance(0.02)) {  // another shape: every one of these torch refuses too
    if (shape.size() == 1 && !probs)
      t_shape = {2};  // (torch takes [1] for a [C] input)
    else if (r.chance(0.5))
      t_shape.push_back(2);
    else
      t_shape[r.uniform(0, static_cast<int64_t>(t_shape.size()) - 1)] += 1;
  }
  const DType td = probs ? d : r.chance(0.02) ? tl::kInt32 : tl::kInt64;
  Input target = make_input(r, td, t_shape, known, {true, true, Profile::Small});
  const bool out_of_range = !probs && r.chance(0.04);
  for (V& v : target.values) {
    if (probs) {
      v.f = static_cast<double>(r.uniform(0, 8)) / 8;
      continue;
    }
    v.i = r.chance(0.17) ? c.ignore_index : r.uniform(0, classes - 1);
    if (out_of_range && r.chance(0.4)) v.i = r.chance(0.5) ? classes : -1;
  }
  c.inputs.push_back(target);

  if (r.chance(0.5)) {
    Dims w_shape{classes};
    // Another size (not [1, C]: torch takes it for [N, C, d...] inputs, where it checks numel).
    if (r.chance(0.04)) w_shape = {r.chance(0.5) || classes == 1 ? classes + 1 : classes - 1};
    Input w = make_input(r, d, w_shape, known, {true, true, Profile::Small});
    for (V& v : w.values) {
      const int64_t q = r.uniform(1, 8);
      if (is_float(d))
        v.f = static_cast<double>(q) / 4;
      else
        v.i = d == tl::kBool ? 1 : q;
    }
    c.inputs.push_back(w);
  }
  const double ru = r.real();
  c.reduction = ru < 0.4   ? tl::nn::Reduction::Mean
                : ru < 0.7 ? tl::nn::Reduction::Sum
                           : tl::nn::Reduction::None;
  if (ce) {
    const double lu = r.real();
    c.label_smoothing = lu < 0.7    ? 0
                        : lu < 0.84 ? 0.1
                        : lu < 0.97 ? 0.5
                        : lu < 0.98 ? 1
                        : lu < 0.99 ? 1.5
                                    : -0.25;
  }
}

Op random_op(Rng& r) { return static_cast<Op>(r.uniform(0, kOpCount - 1)); }

// torch checks some Python-number operands against a narrow integer dtype and not others (uint8
// + 1000 wraps, clamp(uint8, max=-5) and where(c, int8, 1000) raise, clamp(uint8, min=-5) is
// neither): an accident of its kernels, not a rule, so integer numbers next to uint8 / int8 /
// int16 tensors stay inside every such dtype, [0, 5] with uint8 and [-5, 5] without.
void narrow_scalars(Case& c) {
  bool narrow = false, unsigned8 = false;
  for (const Input& in : c.inputs) {
    narrow |= is_narrow_int(in.dtype);
    unsigned8 |= in.dtype == tl::kUInt8;
  }
  if (!narrow) return;
  for (ScalarArg& s : c.scalars)
    if (s.kind == tl::DTypeKind::Integer) s.v.i = unsigned8 ? std::abs(s.v.i) % 6 : s.v.i % 6;
}

}  // namespace

uint64_t case_seed(uint64_t run_seed, uint64_t index) {
  // splitmix64 of the pair: independent, well-mixed streams per case.
  uint64_t z = run_seed * 0x9E3779B97F4A7C15ull + index + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

Case generate_case(uint64_t seed, const Known& known) {
  Rng r(seed);
  Case c;
  c.op = random_op(r);
  const Op op = c.op;
  // A few cases are large (threaded paths); prod stays small (its float products would overflow).
  const bool large = op != Op::Prod && op != Op::Cumprod && r.chance(0.03);
  auto shape = [&] { return large ? large_shape(r) : random_shape(r); };
  if (is_unary(op) || op == Op::To || op == Op::Clone || op == Op::Contiguous) {
    DType d = random_dtype(r);
    if (known.bool_math && op == Op::Abs && d == tl::kBool) d = tl::kInt64;
    c.inputs.push_back(make_input(r, d, shape(), known));
    c.target = random_dtype(r);
  } else if (is_binary(op) || op == Op::Where || op == Op::Clamp) {
    Dims out = shape();
    DType da = random_dtype(r);
    DType db = r.chance(0.6) ? da : random_dtype(r);
    if (op == Op::Pow && known.pow_bool) {
      if (da == tl::kBool) da = tl::kInt32;
      if (db == tl::kBool) db = tl::kFloat32;
    }
    if (op == Op::Clamp && known.bool_math && da == tl::kBool) da = tl::kFloat32;
    double u = r.real();
    c.form = u < 0.55 ? Form::TT : u < 0.8 ? Form::TS : u < 0.95 ? Form::ST : Form::SS;
    if (op != Op::Where && c.form == Form::SS) c.form = Form::TS;
    if (op == Op::Clamp && c.form == Form::ST) c.form = Form::TT;
    if (op == Op::Where)
      c.inputs.push_back(make_input(r, r.chance(0.97) ? tl::kBool : random_dtype(r),
                                    partner_shape(r, out), known));
    if (op == Op::Clamp) {
      c.has_lo = r.chance(0.7);
      c.has_hi = !c.has_lo || r.chance(0.6);
      c.inputs.push_back(make_input(r, da, out, known));
      for (bool has : {c.has_lo, c.has_hi}) {
        if (!has) continue;
        if (c.form == Form::TT)
          c.inputs.push_back(make_input(r, db, partner_shape(r, out), known));
        else
          c.scalars.push_back(random_scalar(
              r, da == tl::kBool ? std::optional(r.chance(0.5) ? tl::DTypeKind::Integer
                                                               : tl::DTypeKind::Floating)
                                 : std::nullopt));
      }
    } else {
      bool ta = c.form == Form::TT || c.form == Form::TS;
      bool tb = c.form == Form::TT || c.form == Form::ST;
      if (ta)
        c.inputs.push_back(make_input(r, da, r.chance(0.5) ? out : partner_shape(r, out), known));
      else
        c.scalars.push_back(random_scalar(r));
      if (tb)
        c.inputs.push_back(make_input(r, db, partner_shape(r, out), known));
      else
        c.scalars.push_back(random_scalar(r));
      if (op == Op::Pow && known.pow_bool)
        for (auto& s : c.scalars)
          if (s.kind == tl::DTypeKind::Bool) s.kind = tl::DTypeKind::Integer;
    }
  } else if (is_reduction(op)) {
    DType d = op == Op::Mean && r.chance(0.8) ? random_float_dtype(r) : random_dtype(r);
    if (known.bool_math && (op == Op::Argmax || op == Op::Argmin) && d == tl::kBool) d = tl::kInt32;
    Profile p = op == Op::Prod ? Profile::Small : Profile::Normal;
    Dims s = op == Op::Prod ? random_shape(r, 6, 48) : shape();
    c.inputs.push_back(make_input(r, d, s, known, {true, true, p}));
    c.keepdim = r.chance(0.5);
    if (op == Op::Argmax || op == Op::Argmin) {
      if (r.chance(0.7)) {
        const int64_t span = std::max<int64_t>(static_cast<int64_t>(s.size()), 1);
        c.dim = r.uniform(-span, span - 1);
        if (r.chance(0.03)) c.dim = span;
      }
    } else {
      c.dims = random_dims(r, static_cast<int64_t>(s.size()));
    }
  } else if (is_numerics(op)) {
    // Mostly floating inputs (integers: refused, or float32 for logsumexp).
    const DType d = r.chance(0.85) ? random_float_dtype(r) : random_dtype(r);
    const Dims s = shape();
    c.inputs.push_back(make_input(r, d, s, known));
    const int64_t nd = static_cast<int64_t>(s.size());
    if (op == Op::Softmax || op == Op::LogSoftmax) {
      const int64_t span = std::max<int64_t>(nd, 1);
      c.dim = r.uniform(-span, span - 1);
      if (r.chance(0.03)) c.dim = span;
    } else {
      c.dims = random_dims(r, nd);
      c.keepdim = r.chance(0.5);
      if (op != Op::Logsumexp) c.correction = static_cast<double>(r.uniform(0, 2));
    }
  } else if (is_ordering(op)) {
    const Dims s = shape();
    c.inputs.push_back(make_input(r, random_dtype(r), s, known));
    const int64_t nd = static_cast<int64_t>(s.size());
    const int64_t span = std::max<int64_t>(nd, 1);
    c.dim = r.uniform(-span, span - 1);
    const int64_t n = nd == 0 ? 1 : s[(*c.dim + span) % span];
    if (r.chance(0.03)) c.dim = span;
    c.descending = r.chance(0.5);
    c.stable = r.chance(0.5);
    c.largest = r.chance(0.5);
    c.sorted = r.chance(0.7);
    c.keepdim = r.chance(0.5);
    c.k = op == Op::Kthvalue ? r.uniform(1, std::max<int64_t>(n, 1)) : r.uniform(0, n);
    if (r.chance(0.03)) c.k = r.chance(0.5) ? n + 1 : (op == Op::Kthvalue ? 0 : -1);
  } else if (is_scan(op)) {
    // cumprod stays small (float products would overflow); a dtype argument now and then (bool
    // included, which cumsum/cumprod refuse).
    const bool prod = op == Op::Cumprod;
    const Dims s = prod ? random_shape(r, 6, 48) : shape();
    c.inputs.push_back(make_input(r, random_dtype(r), s, known,
                                  {true, true, prod ? Profile::Small : Profile::Normal}));
    const int64_t span = std::max<int64_t>(static_cast<int64_t>(s.size()), 1);
    c.dim = r.uniform(-span, span - 1);
    if (r.chance(0.03)) c.dim = span;
    if ((op == Op::Cumsum || prod) && r.chance(0.2)) c.dtype = random_dtype(r);
    if (op == Op::Cummax || op == Op::Cummin) c.indices = r.chance(0.5);
  } else if (is_more_reduction(op)) {
    // norm mostly on floating inputs (integers are refused), p from torch's special values and
    // others.
    const DType d = op == Op::Norm && r.chance(0.85) ? random_float_dtype(r) : random_dtype(r);
    const Dims s = shape();
    c.inputs.push_back(make_input(r, d, s, known));
    c.dims = random_dims(r, static_cast<int64_t>(s.size()));
    c.keepdim = op != Op::CountNonzero && r.chance(0.5);
    const double ps[] = {2,
                         1,
                         0,
                         3,
                         0.5,
                         -1,
                         1.5,
                         std::numeric_limits<double>::infinity(),
                         -std::numeric_limits<double>::infinity()};
    if (op == Op::Norm) c.p = ps[r.uniform(0, 8)];
  } else if (op == Op::Unique || op == Op::UniqueConsecutive) {
    // Small values (or the usual ones, with NaN and signed zeros), so that equal elements and
    // slices form groups; a dim half the time.
    const Dims s = shape();
    const Profile p = r.chance(0.6) ? Profile::Small : Profile::Normal;
    c.inputs.push_back(make_input(r, random_dtype(r), s, known, {true, true, p}));
    const int64_t span = std::max<int64_t>(static_cast<int64_t>(s.size()), 1);
    if (r.chance(0.5)) c.dim = r.uniform(-span, span - 1);
    if (r.chance(0.03)) c.dim = span;
    c.k = r.uniform(0, 2);  // which result: values, inverse, counts
  } else if (op == Op::Bincount) {
    // Mostly 1-D non-negative integers (a negative one, another dtype or rank now and then);
    // weights half the time, of several dtypes (float32 keeps its dtype, others give float64).
    const DType d = r.chance(0.92) ? pick(r, is_int) : random_dtype(r);
    const int64_t n = large ? numel_of(large_shape(r)) : r.uniform(0, 40);
    const Dims s = r.chance(0.95) ? Dims{n} : random_shape(r);
    Input in = make_input(r, d, s, known);
    const int64_t top = r.chance(0.1) ? 3000 : 20;
    for (V& v : in.values) {
      if (!is_int(d)) break;
      v.i = wrap_to(r.chance(0.01) ? -1 : r.uniform(0, std::min(top, int_hi(d))), d);
    }
    c.inputs.push_back(in);
    if (r.chance(0.5)) {
      const DType wds[] = {tl::kFloat32, tl::kFloat64, tl::kInt32, tl::kFloat16, tl::kBool};
      Dims ws = s;
      if (r.chance(0.03)) ws = Dims{numel_of(s) + 1};
      c.inputs.push_back(make_input(r, wds[r.uniform(0, 4)], ws, known));
    }
    c.k = r.chance(0.03) ? -1 : r.uniform(0, 25);  // minlength
  } else if (op == Op::Searchsorted) {
    // A sorted sequence (no views: its base, sorted with NaN last), 1-D or with the values'
    // leading dims; values of its dtype or another.
    const DType d = r.chance(0.95) ? random_nonbool_dtype(r) : tl::kBool;
    const Dims s = shape();
    Dims bs{r.uniform(0, 8)};
    if (!s.empty() && r.chance(0.4)) {
      bs.assign(s.begin(), s.end() - 1);
      bs.push_back(r.uniform(0, 8));
    }
    if (r.chance(0.03)) bs.insert(bs.begin(), 2);
    Input seq;
    seq.dtype = d;
    seq.base_shape = bs;
    const Profile p = r.chance(0.7) ? Profile::Small : Profile::Normal;
    for (int64_t i = 0; i < numel_of(bs); ++i) seq.values.push_back(random_value(r, d, p));
    std::sort(seq.values.begin(), seq.values.end(), [&](const V& a, const V& b) {
      if (!is_float(d)) return a.i < b.i;
      return std::isnan(a.f) || std::isnan(b.f) ? !std::isnan(a.f) && std::isnan(b.f) : a.f < b.f;
    });
    c.inputs.push_back(seq);
    const DType vd = r.chance(0.7) ? d : random_dtype(r);
    c.inputs.push_back(make_input(r, vd, s, known, {true, true, p}));
    c.right = r.chance(0.5);
  } else if (op == Op::Histc) {
    // Floating inputs mostly; the data's range (min == max) or a given one, now and then an
    // empty, reversed or infinite one; a few bins.
    const DType d = r.chance(0.9) ? random_float_dtype(r) : random_dtype(r);
    c.inputs.push_back(make_input(r, d, shape(), known));
    c.k = r.chance(0.03) ? r.uniform(-1, 0) : r.uniform(1, 12);
    const double u = r.real();
    if (u < 0.4) {
      c.lo = c.hi = 0;
    } else if (u < 0.5) {
      c.lo = c.hi = 1.5;
    } else if (u < 0.92) {
      c.lo = -0.5 * static_cast<double>(r.uniform(0, 6));
      c.hi = c.lo + 0.5 * static_cast<double>(r.uniform(1, 8));
    } else if (u < 0.96) {
      c.lo = 1;
      c.hi = -1;
    } else {
      c.lo = -1;
      c.hi = std::numeric_limits<double>::infinity();
    }
  } else if (op == Op::Matmul) {
    DType d = random_nonbool_dtype(r);
    DType db = r.chance(0.93) ? d : random_dtype(r);
    // Up to 4x4x4 the CPU backend runs a direct loop; larger products go through Eigen.
    const int64_t hi = r.chance(0.3) ? 16 : 4;
    const int64_t m = r.uniform(0, hi), k = r.uniform(0, hi), n = r.uniform(0, hi);
    const int64_t na = r.uniform(1, 4), nb = r.uniform(1, 4);
    Dims batch = random_shape(r, std::max(na, nb) - 2 > 0 ? std::max(na, nb) - 2 : 0, 12);
    auto shape_of = [&](int64_t nd, bool left) {
      if (nd == 1) return Dims{k};
      Dims s = nd - 2 <= static_cast<int64_t>(batch.size())
                   ? Dims(batch.end() - (nd - 2), batch.end())
                   : Dims(nd - 2, 2);
      for (auto& x : s)
        if (r.chance(0.2)) x = 1;
      s.push_back(left ? m : k);
      s.push_back(left ? k : n);
      if (r.chance(0.03)) s.back() += 1;
      return s;
    };
    Profile p = (is_float(d) || known.int_matmul_overflow) ? Profile::Small : Profile::Normal;
    c.inputs.push_back(make_input(r, d, shape_of(na, true), known, {true, true, p}));
    c.inputs.push_back(make_input(r, db, shape_of(nb, false), known, {true, true, p}));
  } else if (op == Op::Outer) {
    // 1-D operands of any dtypes (promoted as mul); now and then a wrong rank.
    for (int i = 0; i < 2; ++i) {
      Dims s{r.uniform(0, 9)};
      if (r.chance(0.05)) s = random_shape(r, 3, 8);
      c.inputs.push_back(make_input(r, random_dtype(r), s, known));
    }
  } else if (op == Op::Addmm) {
    // input broadcast to [n, m], one dtype, alpha and beta of the dtype's kind (a float one for an
    // integer dtype now and then: refused); sizes on both sides of the small-matrix paths.
    const DType d = r.chance(0.97) ? random_nonbool_dtype(r) : random_dtype(r);
    const int64_t hi = r.chance(0.3) ? 16 : 4;
    const int64_t n = r.uniform(0, hi), k = r.uniform(0, hi), m = r.uniform(0, hi);
    const Dims in_shapes[] = {{n, m}, {m}, {1, m}, {n, 1}, {}, {n + 1, m}};
    const Dims in_shape = in_shapes[r.chance(0.03) ? 5 : r.uniform(0, 4)];
    Dims sa{n, k}, sb{k, m};
    if (r.chance(0.03)) sb[0] += 1;
    if (r.chance(0.02)) sa.pop_back();
    const Profile p = (is_float(d) || known.int_matmul_overflow) ? Profile::Small : Profile::Normal;
    c.inputs.push_back(make_input(r, d, in_shape, known, {true, true, p}));
    c.inputs.push_back(make_input(r, d, sa, known, {true, true, p}));
    c.inputs.push_back(
        make_input(r, r.chance(0.97) ? d : random_dtype(r), sb, known, {true, true, p}));
    for (int i = 0; i < 2; ++i) {
      ScalarArg s;
      const bool float_kind = is_float(d) ? r.chance(0.8) : r.chance(0.05);
      const double picks[] = {1, 0, 0.5, -2, 1.5, 3};
      const int64_t ipicks[] = {1, 0, 2, -3, 1, 3};
      const int64_t which = r.uniform(0, 5);
      if (float_kind) {
        s.kind = tl::DTypeKind::Floating;
        s.v.f = picks[which];
      } else {
        s.kind = tl::DTypeKind::Integer;
        s.v.i = ipicks[which];
      }
      c.scalars.push_back(s);
    }
  } else if (op == Op::Cat || op == Op::Stack) {
    Dims s = random_shape(r, 4, 64);
    if (op == Op::Cat && s.empty() && r.chance(0.9)) s = {2};
    const int64_t nd = static_cast<int64_t>(s.size());
    const int64_t count = r.uniform(1, 3);
    const int64_t span = op == Op::Cat ? std::max<int64_t>(nd, 1) : nd + 1;
    c.dim = r.uniform(-span, span - 1);
    const int64_t cd = nd > 0 && op == Op::Cat ? (*c.dim + span) % span : -1;
    for (int64_t i = 0; i < count; ++i) {
      Dims t = s;
      if (cd >= 0) t[cd] = r.uniform(0, 3);
      if (r.chance(0.04) && !t.empty()) t[r.uniform(0, nd - 1)] += 1;
      if (op == Op::Cat && r.chance(0.05)) t = {0};
      c.inputs.push_back(make_input(r, r.chance(0.7) ? tl::kFloat32 : random_dtype(r), t, known));
    }
  } else if (op == Op::IndexSelect || op == Op::Gather) {
    Dims s = large ? large_shape(r) : random_shape(r, 4, 64);
    if (s.empty()) s = {3};
    const int64_t nd = static_cast<int64_t>(s.size());
    c.dim = r.uniform(-nd, nd - 1);
    const int64_t d = (*c.dim + nd) % nd;
    c.inputs.push_back(make_input(r, random_dtype(r), s, known));
    DType id = r.chance(0.5) ? tl::kInt64 : tl::kInt32;
    if (op == Op::Gather && known.gather_int32) id = tl::kInt64;
    if (r.chance(0.03)) id = r.chance(0.5) ? tl::kFloat32 : tl::kBool;
    Dims is;
    if (op == Op::IndexSelect) {
      is = r.chance(0.1) ? Dims{} : Dims{r.uniform(0, 5)};
    } else {
      is = s;
      for (int64_t i = 0; i < nd; ++i) is[i] = i == d ? r.uniform(0, 4) : r.uniform(0, s[i]);
      if (r.chance(0.03)) is[r.uniform(0, nd - 1)] += 1;
      if (r.chance(0.02)) is.pop_back();
    }
    Input index = make_input(r, id, is, known, {false});
    for (auto& v : index.values) {
      if (id == tl::kBool) break;
      int64_t bad = r.chance(0.03) ? (r.chance(0.5) ? -1 : s[d]) : -2;
      int64_t x = bad != -2 ? bad : s[d] > 0 ? r.uniform(0, s[d] - 1) : 0;
      if (is_float(id))
        v.f = static_cast<double>(x);
      else
        v.i = x;
    }
    c.inputs.push_back(index);
  } else if (op == Op::Take) {
    Dims s = large ? large_shape(r) : random_shape(r, 4, 64);
    c.inputs.push_back(make_input(r, random_dtype(r), s, known));
    const int64_t n = numel_of(s);
    DType id = tl::kInt64;
    if (r.chance(0.05)) id = r.chance(0.5) ? tl::kInt32 : tl::kFloat32;
    Input index = make_input(r, id, random_shape(r, 3, 8), known, {false});
    for (auto& v : index.values) {
      // Mostly in [-n, n); now and then just outside.
      int64_t p = n > 0 ? r.uniform(-n, n - 1) : 0;
      if (r.chance(0.03)) p = r.chance(0.5) ? n : -n - 1;
      if (is_float(id))
        v.f = static_cast<double>(p);
      else
        v.i = p;
    }
    c.inputs.push_back(index);
  } else if (op == Op::ScatterAdd || op == Op::IndexAdd) {
    Dims s = random_shape(r, 4, 64);
    if (s.empty() && r.chance(0.7)) s = {3};
    const int64_t nd = static_cast<int64_t>(s.size()), span = std::max<int64_t>(nd, 1);
    c.dim = r.chance(0.03) ? span : r.uniform(-span, span - 1);
    const int64_t d = ((*c.dim % span) + span) % span;
    const int64_t size = nd ? s[d] : 1;
    const DType dt = random_dtype(r);
    c.inputs.push_back(make_input(r, dt, s, known));
    DType id = r.chance(0.5) ? tl::kInt64 : tl::kInt32;
    if (r.chance(0.03)) id = tl::kFloat32;
    Dims is, ss;
    if (op == Op::ScatterAdd) {
      is = s;  // at most self's sizes off dim, src's everywhere
      for (int64_t i = 0; i < nd; ++i) is[i] = i == d ? r.uniform(0, 6) : r.uniform(0, s[i]);
      if (r.chance(0.03) && nd) is[r.uniform(0, nd - 1)] += 1;
      ss = is;
      for (auto& x : ss) x += r.chance(0.3) ? r.uniform(0, 2) : 0;
      if (r.chance(0.03) && nd) ss[r.uniform(0, nd - 1)] -= 1;
      for (auto& x : ss) x = std::max<int64_t>(x, 0);
    } else {
      const int64_t m = r.uniform(0, 6);
      is = nd == 0 ? (r.chance(0.5) ? Dims{} : Dims{1}) : Dims{m};
      ss = s;
      if (nd) ss[d] = m;
      if (r.chance(0.03) && nd) ss[r.uniform(0, nd - 1)] += 1;
    }
    Input index = make_input(r, id, is, known, {false});
    for (auto& v : index.values) {
      const int64_t bad = r.chance(0.03) ? (r.chance(0.5) ? -1 : size) : -2;
      const int64_t x = bad != -2 ? bad : size > 0 ? r.uniform(0, size - 1) : 0;
      if (is_float(id))
        v.f = static_cast<double>(x);
      else
        v.i = x;
    }
    c.inputs.push_back(index);
    c.inputs.push_back(make_input(r, r.chance(0.95) ? dt : random_dtype(r), ss, known));
  } else if (op == Op::MaskedScatter) {
    const Dims out = shape();
    c.inputs.push_back(make_input(r, random_dtype(r), out, known));
    c.inputs.push_back(
        make_input(r, r.chance(0.96) ? tl::kBool : random_dtype(r), partner_shape(r, out), known));
    // Mostly enough source values for a broadcast mask; sometimes too few (an error).
    const int64_t want = 2 * numel_of(out) + 2;
    const DType sd = r.chance(0.95) ? c.inputs[0].dtype : random_dtype(r);
    c.inputs.push_back(make_input(r, sd, {r.chance(0.9) ? want : r.uniform(0, want)}, known));
  } else if (op == Op::MaskedSelect) {
    Dims out = shape();
    bool mask_first = r.chance(0.5);
    Dims sa = mask_first ? partner_shape(r, out) : out,
         sm = mask_first ? out : partner_shape(r, out);
    c.inputs.push_back(make_input(r, random_dtype(r), sa, known));
    c.inputs.push_back(make_input(r, r.chance(0.96) ? tl::kBool : random_dtype(r), sm, known));
  } else if (op == Op::Reshape || op == Op::View) {
    Dims s = random_shape(r);
    if (known.zero_d_view && s.empty()) s = {1};
    c.inputs.push_back(make_input(r, random_dtype(r), s, known));
    do c.dims = random_target_shape(r, numel_of(s));
    while (known.zero_d_view && c.dims.empty());
  } else if (op == Op::Lerp) {
    // Floating dtypes (one for all three; now and then another, which torch refuses); weights
    // mostly in [-0.5, 1.5], so both of torch's formulas and the exact ends 0 and 1 are hit.
    const Dims out = shape();
    const DType d = r.chance(0.92) ? random_float_dtype(r) : random_dtype(r);
    auto other = [&] { return r.chance(0.95) ? d : random_dtype(r); };
    auto weight = [&] {
      const double u = r.real();
      return u < 0.85   ? static_cast<double>(r.uniform(-4, 12)) / 8
             : u < 0.95 ? (r.real() - 0.25) * 3
                        : static_cast<double>(r.uniform(-3, 3));
    };
    c.form = r.chance(0.55) ? Form::TT : Form::TS;
    c.inputs.push_back(make_input(r, d, r.chance(0.5) ? out : partner_shape(r, out), known));
    c.inputs.push_back(make_input(r, other(), partner_shape(r, out), known));
    if (c.form == Form::TT) {
      Input w = make_input(r, other(), partner_shape(r, out), known);
      if (is_float(w.dtype))
        for (V& v : w.values)
          if (r.chance(0.9)) v.f = round_float(weight(), w.dtype);
      c.inputs.push_back(w);
    } else {
      ScalarArg s;
      const double u = r.real();
      if (u < 0.8) {
        s.kind = tl::DTypeKind::Floating;
        s.v.f = weight();
      } else if (u < 0.95) {
        s.kind = tl::DTypeKind::Integer;
        s.v.i = r.uniform(-2, 3);
      } else {
        s.kind = tl::DTypeKind::Bool;
        s.v.i = r.uniform(0, 1);
      }
      c.scalars.push_back(s);
    }
  } else if (op == Op::Isclose) {
    // One dtype (rarely two, refused); tolerances from torch's defaults, zero, values of the
    // inputs' 1/8 grid (the bound |a - b| <= allowed hit with equality) and larger ones.
    const Dims out = shape();
    const DType d = random_dtype(r);
    c.inputs.push_back(make_input(r, d, r.chance(0.5) ? out : partner_shape(r, out), known));
    c.inputs.push_back(
        make_input(r, r.chance(0.95) ? d : random_dtype(r), partner_shape(r, out), known));
    const double rtols[] = {1e-5, 0, 0, 1e-3, 0.125, 0.5, 1, 2};
    const double atols[] = {1e-8, 0, 0, 1e-3, 0.125, 0.5, 1, 3};
    c.rtol = rtols[r.uniform(0, 7)];
    c.atol = atols[r.uniform(0, 7)];
    if (r.chance(0.02)) c.rtol = -0.5;
    if (r.chance(0.02)) c.atol = -1;
    c.equal_nan = r.chance(0.5);
  } else if (op == Op::NanToNum) {
    // Mostly floating inputs with many NaN and infinities; replacements default (nullopt), in
    // range, or beyond the dtype (rounding to infinity).
    const DType d = r.chance(0.8) ? random_float_dtype(r) : random_dtype(r);
    Input in = make_input(r, d, shape(), known);
    if (is_float(d))
      for (V& v : in.values)
        if (r.chance(0.3)) {
          const double special[] = {kNan, kInfinity, -kInfinity};
          v.f = special[r.uniform(0, 2)];
        }
    c.inputs.push_back(in);
    const double fills[] = {0, 1.5, -2, 100, 1e5, -1e5, 1e300, -1e300, kInfinity, -kInfinity};
    for (auto* f : {&c.nan, &c.posinf, &c.neginf})
      if (r.chance(0.5)) *f = fills[r.uniform(0, 9)];
  } else if (op == Op::MaskedFill) {
    // a and a bool mask broadcast together; the value a number or (TT) a 0-dim tensor (now and
    // then a 1-dim one, refused).
    const Dims out = shape();
    const bool mask_first = r.chance(0.5);
    c.inputs.push_back(
        make_input(r, random_dtype(r), mask_first ? partner_shape(r, out) : out, known));
    c.inputs.push_back(make_input(r, r.chance(0.96) ? tl::kBool : random_dtype(r),
                                  mask_first ? out : partner_shape(r, out), known));
    c.form = r.chance(0.75) ? Form::TS : Form::TT;
    if (c.form == Form::TS)
      c.scalars.push_back(random_scalar(r));
    else
      c.inputs.push_back(
          make_input(r, random_dtype(r), r.chance(0.95) ? Dims{} : Dims{r.uniform(1, 2)}, known));
  } else if (op == Op::Flip || op == Op::Roll) {
    const Dims s = shape();
    const int64_t nd = static_cast<int64_t>(s.size()), span = std::max<int64_t>(nd, 1);
    c.inputs.push_back(make_input(r, random_dtype(r), s, known));
    if (op == Op::Flip) {
      c.dims = random_dims(r, nd);
    } else {
      // Without dims (the flattened tensor) one shift; with dims one shift per dim (a dim may
      // repeat: it rolls twice); rarely a count that does not align or a dim out of range.
      if (!r.chance(0.25))
        for (int64_t i = r.uniform(1, std::min<int64_t>(span, 3)); i > 0; --i)
          c.dims.push_back(r.uniform(-span, span - 1));
      if (r.chance(0.02)) c.dims.push_back(span);
      for (size_t i = 0; i < std::max<size_t>(c.dims.size(), 1); ++i)
        c.shifts.push_back(r.uniform(-7, 7));
      if (r.chance(0.03)) c.shifts.push_back(1);
      if (r.chance(0.01)) c.shifts.clear();
    }
  } else if (op == Op::Tril || op == Op::Triu) {
    const Dims s = shape();
    c.inputs.push_back(make_input(r, random_dtype(r), s, known));
    c.k = r.uniform(-4, 4);
  } else if (op == Op::Conv2d) {
    conv_case(r, c, known);
  } else if (op == Op::MaxPool2d || op == Op::AvgPool2d) {
    pool_case(r, c, known);
  } else if (op == Op::AdaptiveAvgPool2d) {
    adaptive_case(r, c, known);
  } else if (is_loss(op)) {
    loss_case(r, c, known);
  } else if (is_inplace(op)) {
    Dims s = shape();
    InputOpts o;
    o.alias = r.chance(0.1);  // expanded destinations must be refused
    o.as_strided = false;     // overlapping ones are not fuzzed: their result depends on order
    c.inputs.push_back(make_input(r, random_dtype(r), s, known, o));
    c.form = r.chance(0.6) ? Form::TT : Form::TS;
    if (c.form == Form::TT)  // a separate tensor: in-place ops on overlapping memory are not fuzzed
      c.inputs.push_back(make_input(r, random_dtype(r), partner_shape(r, s), known));
    else
      c.scalars.push_back(random_scalar(r));
  } else if (op == Op::Copy || op == Op::Fill) {
    Dims s = shape();
    InputOpts o;
    o.alias = r.chance(0.1);  // expanded destinations must be refused
    o.as_strided = false;     // overlapping ones are not fuzzed: their result depends on order
    c.inputs.push_back(make_input(r, random_dtype(r), s, known, o));
    if (op == Op::Copy) {
      c.inputs.push_back(make_input(r, random_dtype(r), partner_shape(r, s), known));
    } else {
      ScalarArg sc = random_scalar(r);
      const DType d = c.inputs[0].dtype;
      if (is_narrow_int(d) && sc.kind == tl::DTypeKind::Floating) {
        // torch's fill_ range check of a float in a narrow dtype has its own edges (int8 takes
        // 127.5 and refuses -128.9): whole numbers only.
        sc.kind = tl::DTypeKind::Integer;
        sc.v.i = std::isfinite(sc.v.f) ? static_cast<int64_t>(sc.v.f) : 1;
      }
      if (!is_float(d) && d != tl::kBool) {
        if (known.fill_range && sc.kind == tl::DTypeKind::Floating) {
          double f = std::isfinite(sc.v.f) ? std::trunc(sc.v.f) : 1.0;
          sc.v.f = f;
        } else if (!known.fill_range && r.chance(0.1)) {
          sc.kind = tl::DTypeKind::Integer;
          sc.v.i = r.chance(0.5) ? (int64_t(1) << 40) : -(int64_t(1) << 33);
        }
      }
      c.scalars.push_back(sc);
    }
  }
  if (c.op != Op::Fill) narrow_scalars(c);
  return c;
}

}  // namespace fuzz

// The shrinker: greedy local simplification of a failing case, re-checked after every step.
#include "fuzz/shrinker.h"

#include <functional>

#include "fuzz/runner.h"

namespace fuzz {
namespace {

// The base of `in` without index `i` of dim `d` (values re-laid out); views left as they are.
Input drop_index(const Input& in, size_t d, int64_t i) {
  Input out = in;
  out.base_shape[d] -= 1;
  out.values.clear();
  out.bool_bytes.clear();
  for_each_index(in.base_shape, [&](int64_t flat, const Dims& idx) {
    if (idx[d] == i) return;
    out.values.push_back(in.values[flat]);
    if (!in.bool_bytes.empty()) out.bool_bytes.push_back(in.bool_bytes[flat]);
  });
  return out;
}

V simpler(const V& v, DType d, int which) {
  V r;
  if (is_float(d))
    r.f = which;
  else
    r.i = which;
  (void)v;
  return r;
}

}  // namespace

Case shrink(const Case& start, const Known& known, tl::Device device, std::string& mismatch,
            int budget) {
  Case best = start;
  auto fails = [&](const Case& c) {
    if (budget-- <= 0) return false;
    bool skipped = false;
    auto m = check_case(c, known, device, &skipped);
    if (!m || skipped) return false;
    mismatch = *m;
    return true;
  };
  bool progress = true;
  while (progress && budget > 0) {
    progress = false;
    auto attempt = [&](const std::function<void(Case&)>& edit) {
      Case c = best;
      edit(c);
      if (fails(c)) {
        best = c;
        progress = true;
        return true;
      }
      return false;
    };
    for (size_t i = 0; i < best.inputs.size(); ++i) {
      // Fewer view steps.
      for (size_t s = 0; s < best.inputs[i].views.size(); ++s)
        if (attempt([&](Case& c) { c.inputs[i].views.erase(c.inputs[i].views.begin() + s); })) --s;
      // Smaller base dims, from the end of each dim.
      for (size_t d = 0; d < best.inputs[i].base_shape.size(); ++d)
        for (int64_t k = best.inputs[i].base_shape[d] - 1; k >= 0; --k)
          if (k < best.inputs[i].base_shape[d])
            attempt([&](Case& c) { c.inputs[i] = drop_index(c.inputs[i], d, k); });
      // Simpler values: all zero, then one by one 0 or 1.
      const DType dt = best.inputs[i].dtype;
      attempt([&](Case& c) {
        for (V& v : c.inputs[i].values) v = simpler(v, dt, 0);
        c.inputs[i].bool_bytes.clear();
      });
      for (size_t k = 0; k < best.inputs[i].values.size(); ++k)
        for (int w : {0, 1}) {
          if (same_value(best.inputs[i].values[k], simpler({}, dt, w), dt)) break;
          if (attempt([&](Case& c) {
                c.inputs[i].values[k] = simpler({}, dt, w);
                if (!c.inputs[i].bool_bytes.empty())
                  c.inputs[i].bool_bytes[k] = static_cast<uint8_t>(w);
              }))
            break;
        }
    }
    for (size_t k = 0; k < best.scalars.size(); ++k)
      if (best.scalars[k].v.i != 0 || best.scalars[k].v.f != 0)
        attempt([&](Case& c) { c.scalars[k].v = V{}; });
    if (best.keepdim) attempt([&](Case& c) { c.keepdim = false; });
  }
  return best;
}

}  // namespace fuzz

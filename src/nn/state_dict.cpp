// tl::nn::Module's state_dict and load_state_dict: PyTorch's keys and checks, copies in place.
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tensorlet/nn/module.h"
#include "tensorlet/tensor/error.h"
#include "tensorlet/tensor/grad_mode.h"

namespace tensorlet::nn {
namespace {

// Calls visit(prefix + name, tensor) for a module's defined parameters, then its buffers.
void collect(const std::string& prefix,
             const std::function<void(const std::string&, const Tensor&)>& visit,
             const OrderedDict<std::string, Tensor>& params,
             const OrderedDict<std::string, Tensor>& buffers) {
  for (const auto& item : params)
    if (item.value().defined()) visit(prefix + item.key(), item.value());
  for (const auto& item : buffers)
    if (item.value().defined()) visit(prefix + item.key(), item.value());
}

}  // namespace

TensorMap Module::state_dict() const {
  TensorMap out;
  std::function<void(const Module&, const std::string&)> walk = [&](const Module& m,
                                                                    const std::string& prefix) {
    collect(
        prefix, [&](const std::string& key, const Tensor& t) { out.emplace(key, t.detach()); },
        m.parameters_, m.buffers_);
    for (const auto& child : m.children_) walk(*child.value(), prefix + child.key() + ".");
  };
  walk(*this, "");
  return out;
}

Module::LoadResult Module::load_state_dict(const TensorMap& state, bool strict) {
  constexpr const char* op = "tl::nn::Module::load_state_dict";
  std::vector<std::pair<std::string, Tensor>> targets;
  std::function<void(Module&, const std::string&)> walk = [&](Module& m,
                                                              const std::string& prefix) {
    collect(
        prefix, [&](const std::string& key, const Tensor& t) { targets.emplace_back(key, t); },
        m.parameters_, m.buffers_);
    for (auto& child : m.children_) walk(*child.value(), prefix + child.key() + ".");
  };
  walk(*this, "");

  LoadResult result;
  std::vector<std::string> mismatches;
  std::set<std::string> known;
  for (const auto& [key, target] : targets) {
    known.insert(key);
    auto it = state.find(key);
    if (it == state.end()) {
      result.missing_keys.push_back(key);
      continue;
    }
    const Tensor& source = it->second;
    if (!source.defined()) {
      mismatches.push_back("undefined tensor for " + key);
    } else if (source.shape() != target.shape()) {
      std::ostringstream s;
      s << "size mismatch for " << key << ": copying a param with shape " << source.shape()
        << " from checkpoint, the shape in current model is " << target.shape() << ".";
      mismatches.push_back(s.str());
    }
  }
  for (const auto& [key, tensor] : state)
    if (!known.count(key)) result.unexpected_keys.push_back(key);

  // torch's message: every problem at once, the size mismatches whatever `strict` says.
  std::ostringstream errors;
  auto quoted = [](const std::vector<std::string>& keys) {
    std::string s;
    for (size_t i = 0; i < keys.size(); ++i) s += (i ? ", \"" : "\"") + keys[i] + "\"";
    return s;
  };
  if (strict && !result.unexpected_keys.empty())
    errors << "\n\tUnexpected key(s) in state_dict: " << quoted(result.unexpected_keys) << ".";
  if (strict && !result.missing_keys.empty())
    errors << "\n\tMissing key(s) in state_dict: " << quoted(result.missing_keys) << ".";
  for (const std::string& m : mismatches) errors << "\n\t" << m;
  if (!errors.str().empty())
    fail<Error>(op, "Error(s) in loading state_dict for ", name(), ":", errors.str());

  NoGradGuard no_grad;
  for (auto& [key, target] : targets) {
    auto it = state.find(key);
    if (it == state.end()) continue;
    Tensor t = target;
    t.copy_(it->second);
  }
  return result;
}

}  // namespace tensorlet::nn

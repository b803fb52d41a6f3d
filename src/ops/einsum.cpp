// tl::einsum: the equation parsed into labels (torch's rules and messages), each operand brought
// to one dim per distinct label (a repeated label's diagonal as a strided view; size-1 dims
// dropped, so they broadcast), then contracted left to right in pairs, each pair one bmm of
// permuted, reshaped operands, as torch.einsum without opt_einsum.
#include <algorithm>
#include <array>
#include <string>

#include "tensorlet/autograd/derivatives.h"
#include "tensorlet/tensor/op_scope.h"
#include "tensorlet/ops/advanced_index.h"
#include "tensorlet/ops/elementwise.h"
#include "tensorlet/ops/factories.h"
#include "tensorlet/ops/linalg.h"
#include "tensorlet/ops/reduce.h"

namespace tensorlet {
namespace {

constexpr const char* kOp = "tl::einsum";
// Labels: A-Z are 0-25 and a-z 26-51 (the implicit output's order); the dims an ellipsis covers
// are kLetters + j, right-aligned over the widest ellipsis, so they broadcast across operands.
constexpr int kLetters = 52;
constexpr int kEllipsis = -1;

bool is_letter(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
int label_of(char c) { return c <= 'Z' ? c - 'A' : c - 'a' + 26; }
char letter_of(int label) { return label < 26 ? char('A' + label) : char('a' + label - 26); }

// The parsed equation: each operand's subscripts and the output's (letters' labels and
// kEllipsis; spaces skipped).
struct Subscripts {
  std::vector<std::vector<int>> operands;  // the left side, one list per operand
  bool has_output = false;
  std::vector<int> output;
};

Subscripts parse(std::string_view eq, size_t num_ops) {
  Subscripts s;
  const size_t arrow = eq.find("->");
  const std::string_view lhs = eq.substr(0, arrow);
  s.operands.resize(num_ops);
  size_t op = 0;
  bool ellipsis = false;
  for (size_t i = 0; i < lhs.size(); ++i) {
    const char c = lhs[i];
    if (c == ' ') continue;
    if (c == '.') {
      if (ellipsis)
        fail<ShapeError>(kOp, "einsum(): found '.' for operand ", op,
                         " for which an ellipsis was already found");
      if (!(i + 2 < lhs.size() && lhs[i + 1] == '.' && lhs[i + 2] == '.'))
        fail<ShapeError>(kOp, "einsum(): found '.' for operand ", op,
                         " that is not part of any ellipsis");
      i += 2;
      s.operands[op].push_back(kEllipsis);
      ellipsis = true;
    } else if (c == ',') {
      if (++op >= num_ops)
        fail<ShapeError>(kOp,
                         "einsum(): fewer operands were provided than specified in the equation");
      ellipsis = false;
    } else if (is_letter(c)) {
      s.operands[op].push_back(label_of(c));
    } else {
      fail<ShapeError>(kOp, "einsum(): invalid subscript given at index ", i,
                       " in the equation string, subscripts must be in [a-zA-Z]");
    }
  }
  if (op + 1 != num_ops)
    fail<ShapeError>(kOp, "einsum(): more operands were provided than specified in the equation");
  if (arrow == std::string_view::npos) return s;
  s.has_output = true;
  const std::string_view rhs = eq.substr(arrow + 2);
  ellipsis = false;
  for (size_t i = 0; i < rhs.size(); ++i) {
    const char c = rhs[i];
    if (c == ' ') continue;
    if (c == '.') {
      if (ellipsis)
        fail<ShapeError>(kOp,
                         "einsum(): found '.' for output but an ellipsis (...) was already found");
      if (!(i + 2 < rhs.size() && rhs[i + 1] == '.' && rhs[i + 2] == '.'))
        fail<ShapeError>(kOp,
                         "einsum(): found '.' for output that is not part of any ellipsis (...)");
      i += 2;
      s.output.push_back(kEllipsis);
      ellipsis = true;
    } else if (is_letter(c)) {
      s.output.push_back(label_of(c));
    } else {
      fail<ShapeError>(kOp, "einsum(): invalid subscript given at index ", lhs.size() + 2 + i,
                       " in the equation string, subscripts must be in [a-zA-Z]");
    }
  }
  return s;
}

// An operand with one dim per label, labels distinct.
struct Term {
  Tensor t;
  std::vector<int> labels;
};

bool has(const std::vector<int>& labels, int label) {
  return std::find(labels.begin(), labels.end(), label) != labels.end();
}

// Sum of t over its dims `dims` in t's dtype (a pairwise step keeps the operands' dtype).
Tensor sum_keeping_dtype(const Tensor& t, const std::vector<int64_t>& dims) {
  Tensor s = sum(t, dims);
  return s.dtype() == t.dtype() ? s : s.to(t.dtype());
}

// Sums the labels of `term` for which drop(label) holds.
template <typename Drop>
void sum_out(Term& term, const Drop& drop) {
  std::vector<int64_t> dims;
  std::vector<int> kept;
  for (size_t d = 0; d < term.labels.size(); ++d) {
    if (drop(term.labels[d]))
      dims.push_back(static_cast<int64_t>(d));
    else
      kept.push_back(term.labels[d]);
  }
  if (dims.empty()) return;
  term.t = sum_keeping_dtype(term.t, dims);
  term.labels = std::move(kept);
}

// sum over the shared labels not in `needed` of a * b, as one bmm: a permuted to [batch, a-only,
// summed], b to [batch, summed, b-only] (batch: shared labels still needed), each reshaped to 3-D.
Term contract(Term a, Term b, const std::vector<bool>& needed) {
  // A label in one operand only and no longer needed is summed there first.
  sum_out(a, [&](int l) { return !needed[l] && !has(b.labels, l); });
  sum_out(b, [&](int l) { return !needed[l] && !has(a.labels, l); });
  std::vector<int> batch, left, summed, right;
  for (int l : a.labels) {
    if (!has(b.labels, l))
      left.push_back(l);
    else
      (needed[l] ? batch : summed).push_back(l);
  }
  for (int l : b.labels)
    if (!has(a.labels, l)) right.push_back(l);
  auto dim_in = [](const Term& t, int l) {
    return static_cast<int64_t>(std::find(t.labels.begin(), t.labels.end(), l) - t.labels.begin());
  };
  auto extent = [&](const Term& t, const std::vector<int>& labels, Shape& shape) {
    int64_t n = 1;
    for (int l : labels) {
      shape.push_back(t.t.shape()[dim_in(t, l)]);
      n *= shape.back();  // the extents of one existing tensor: no overflow
    }
    return n;
  };
  Shape out_shape;
  const int64_t nb = extent(a, batch, out_shape), nl = extent(a, left, out_shape);
  const int64_t nr = extent(b, right, out_shape);
  Shape ignored;
  const int64_t ns = extent(a, summed, ignored);
  Shape perm_a, perm_b;
  for (const auto* group : {&batch, &left, &summed})
    for (int l : *group) perm_a.push_back(dim_in(a, l));
  for (const auto* group : {&batch, &summed, &right})
    for (int l : *group) perm_b.push_back(dim_in(b, l));
  const Tensor a3 = a.t.permute(perm_a).reshape({nb, nl, ns});
  const Tensor b3 = b.t.permute(perm_b).reshape({nb, ns, nr});
  Term r{bmm(a3, b3).view(out_shape), batch};
  r.labels.insert(r.labels.end(), left.begin(), left.end());
  r.labels.insert(r.labels.end(), right.begin(), right.end());
  return r;
}

// The strided view of t (contiguous) that einsum takes (a repeated label's diagonal, dropped or
// broadcast dims): make_view outside a graph; in a graph, take (recorded) of t at the positions
// the view reads, a copy whose gradient adds back at those positions (as_strided has none).
Tensor strided_view(const Tensor& t, const Shape& shape, const Shape& strides, bool record) {
  if (!record) return make_view(t, shape, strides, t.offset());
  const TensorOptions options = TensorOptions(kInt64).device(t.device());
  Tensor pos = zeros({}, options);
  for (int64_t d = 0; d < shape.size(); ++d) {
    Shape along = Shape::filled(shape.size(), 1);
    along[d] = shape[d];
    pos = add(pos, mul(arange(shape[d], options).view(along), Scalar(strides[d])));
  }
  return take(t, pos.expand(shape).contiguous());
}

}  // namespace

Tensor einsum(std::string_view equation, const std::vector<Tensor>& operands) {
  profiler::OpScope scope(kOp);
  scope.inputs_of(operands);
  if (operands.empty()) fail<ShapeError>(kOp, "einsum(): must provide at least one operand");
  for (const Tensor& t : operands) check_defined(t, kOp);
  // In a graph: a composite of recorded ops (its strided views taken by strided_view).
  const bool record = autograd::any_requires_grad(operands);
  for (size_t i = 1; i < operands.size(); ++i)
    if (operands[i].device() != operands[0].device())
      fail<DeviceError>(kOp, "expected all operands on one device, got ", operands[0].device(),
                        " and ", operands[i].device(), " (operand ", i, ")");
  const Subscripts sub = parse(equation, operands.size());

  // Subscript counts against ranks; the widest ellipsis; how often each letter occurs.
  int64_t ell_dims = 0;
  std::array<int, kLetters> count{};
  for (size_t i = 0; i < operands.size(); ++i) {
    const int64_t nd = operands[i].dim();
    int64_t letters = 0;
    bool ellipsis = false;
    for (int l : sub.operands[i]) {
      if (l == kEllipsis) {
        ellipsis = true;
      } else {
        ++letters;
        ++count[l];
      }
    }
    if (ellipsis ? letters > nd : letters != nd)
      fail<ShapeError>(kOp, "einsum(): the number of subscripts in the equation (", letters,
                       ellipsis ? ") is more than the number of dimensions ("
                                : ") does not match the number of dimensions (",
                       nd, ") for operand ", i, ellipsis ? "" : " and no ellipsis was given");
    if (ellipsis) ell_dims = std::max(ell_dims, nd - letters);
  }

  // The output's labels: explicit, or the ellipsis dims then the letters occurring once.
  std::vector<int> output;
  auto add_ellipsis = [&] {
    for (int64_t j = 0; j < ell_dims; ++j) output.push_back(kLetters + static_cast<int>(j));
  };
  if (!sub.has_output) {
    add_ellipsis();
    for (int l = 0; l < kLetters; ++l)
      if (count[l] == 1) output.push_back(l);
  } else {
    for (int l : sub.output) {
      if (l == kEllipsis) {
        add_ellipsis();
        continue;
      }
      if (count[l] == 0 || has(output, l))
        fail<ShapeError>(kOp, "einsum(): output subscript ", letter_of(l),
                         has(output, l) ? " appears more than once in the output"
                                        : " does not appear in the equation for any input operand");
      output.push_back(l);
    }
  }

  // Each operand as a Term: repeated labels merged into their diagonal (strides added), sizes
  // checked against the other operands' (size 1 broadcasts), then size-1 dims dropped.
  const size_t labels = kLetters + static_cast<size_t>(ell_dims);
  std::vector<int64_t> size(labels, 1);
  std::vector<Term> terms;
  for (size_t i = 0; i < operands.size(); ++i) {
    const Tensor t = record ? operands[i].contiguous() : operands[i];
    const int64_t nd = t.dim();
    const int64_t letters =
        static_cast<int64_t>(sub.operands[i].size()) - (has(sub.operands[i], kEllipsis) ? 1 : 0);
    std::vector<int> dim_labels;
    for (int l : sub.operands[i]) {
      if (l != kEllipsis) {
        dim_labels.push_back(l);
        continue;
      }
      const int64_t covered = nd - letters;
      for (int64_t j = ell_dims - covered; j < ell_dims; ++j)
        dim_labels.push_back(kLetters + static_cast<int>(j));
    }
    Term term;
    Shape shape, strides;
    for (int64_t d = 0; d < nd; ++d) {
      const int l = dim_labels[d];
      const int64_t n = t.shape()[d];
      const auto at = std::find(term.labels.begin(), term.labels.end(), l);
      if (at != term.labels.end()) {
        const int64_t prev = at - term.labels.begin();
        if (shape[prev] != n)
          fail<ShapeError>(kOp, "einsum(): subscript ", letter_of(l), " is repeated for operand ",
                           i, " but the sizes don't match, ", n, " != ", shape[prev]);
        strides[prev] += t.strides()[d];
        continue;
      }
      if (n != 1) {
        if (size[l] != 1 && size[l] != n) {
          if (l >= kLetters)
            fail<ShapeError>(kOp, "einsum(): dimension ", d, " covered by ellipsis in operand ", i,
                             " has size ", n,
                             " which does not broadcast with previously seen ellipsis with size ",
                             size[l], " for the respective dimension");
          fail<ShapeError>(kOp, "einsum(): subscript ", letter_of(l), " has size ", n,
                           " for operand ", i,
                           " which does not broadcast with previously seen size ", size[l]);
        }
        size[l] = n;
      }
      term.labels.push_back(l);
      shape.push_back(n);
      strides.push_back(t.strides()[d]);
    }
    Shape kept_shape, kept_strides;
    std::vector<int> kept;
    for (size_t d = 0; d < term.labels.size(); ++d) {
      // A size-1 dim broadcasts along its label: dropped before contracting. A single operand
      // keeps it, so that its labels missing from the output all go through sum (int64 results).
      if (shape[d] == 1 && operands.size() > 1) continue;
      kept.push_back(term.labels[d]);
      kept_shape.push_back(shape[d]);
      kept_strides.push_back(strides[d]);
    }
    term.labels = std::move(kept);
    term.t = strided_view(t, kept_shape, kept_strides, record);
    terms.push_back(std::move(term));
  }

  std::vector<bool> needed(labels, false);
  for (int l : output) needed[l] = true;
  Term result;
  if (terms.size() == 1) {
    // One operand: a plain sum over the labels not in the output (integers and bool give int64,
    // as torch's einsum, which calls sum here).
    result = std::move(terms[0]);
    std::vector<int64_t> dims;
    std::vector<int> kept;
    for (size_t d = 0; d < result.labels.size(); ++d) {
      if (needed[result.labels[d]])
        kept.push_back(result.labels[d]);
      else
        dims.push_back(static_cast<int64_t>(d));
    }
    if (!dims.empty()) {
      result.t = sum(result.t, dims);
      result.labels = std::move(kept);
    }
  } else {
    const DType dtype = operands[0].dtype();
    for (size_t i = 1; i < operands.size(); ++i)
      if (operands[i].dtype() != dtype)
        fail<DTypeError>(kOp, "expected all operands to have one dtype, got ", dtype, " and ",
                         operands[i].dtype(), " (operand ", i, ")");
    if (!kNumericDTypes.contains(dtype))
      fail<DTypeError>(kOp, "not supported for dtype ", dtype, " with more than one operand");
    // Left to right: a label stays needed while the output or a later operand has it.
    result = std::move(terms[0]);
    for (size_t i = 1; i < terms.size(); ++i) {
      std::vector<bool> keep = needed;
      for (size_t j = i + 1; j < terms.size(); ++j)
        for (int l : terms[j].labels) keep[l] = true;
      result = contract(std::move(result), std::move(terms[i]), keep);
    }
  }

  // The output order, as a view; a label of size 1 everywhere (dropped above) comes back as a
  // size-1 dim.
  if (record) result.t = result.t.contiguous();
  Shape shape, strides;
  for (int l : output) {
    const auto at = std::find(result.labels.begin(), result.labels.end(), l);
    shape.push_back(size[l]);
    strides.push_back(at == result.labels.end() ? 0
                                                : result.t.strides()[at - result.labels.begin()]);
  }
  return strided_view(result.t, shape, strides, record);
}

}  // namespace tensorlet

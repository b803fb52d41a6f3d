// Bad-input suite, addmm / baddbmm / outer / einsum: dtypes, devices, ranks, shapes, alpha and
// beta rules, out= destinations and every malformed-equation error of torch.einsum.
#include <cstdint>

#include "bad_input.h"

using namespace tl_test;

namespace {

tl::Tensor f(const tl::Shape& s) { return tl::ones(s); }
tl::Tensor d(const tl::Shape& s) { return tl::ones(s, tl::kFloat64); }
tl::Tensor i32(const tl::Shape& s) { return tl::ones(s, tl::kInt32); }
tl::Tensor b8(const tl::Shape& s) { return tl::ones(s, tl::kBool); }
tl::Tensor undef() { return tl::Tensor(); }
tl::Tensor cu(const tl::Tensor& t) { return t.cuda(); }
// Two cheap tensors whose outer product has 2^64 elements (one stored value each, stride 0).
tl::Tensor huge() { return tl::ones({1}).expand({int64_t{1} << 32}); }
constexpr int64_t k40 = int64_t{1} << 40;

}  // namespace

TEST_CASE("bad input: addmm, addmm_, addmm_out, baddbmm, outer") {
  run_bad_inputs({
      // ranks and shapes
      TL_BAD(tl::ShapeError, "[tl::addmm] ", "mat1", tl::addmm(f({2, 2}), f({2}), f({2, 2}))),
      TL_BAD(tl::ShapeError, "[tl::addmm] ", "mat2", tl::addmm(f({2, 2}), f({2, 2}), f({2, 2, 1}))),
      TL_BAD(tl::ShapeError, "[tl::addmm] ", "2x3 and 4x5",
             tl::addmm(f({2, 5}), f({2, 3}), f({4, 5}))),
      TL_BAD(tl::ShapeError, "[tl::addmm] ", "input", tl::addmm(f({3}), f({2, 3}), f({3, 5}))),
      TL_BAD(tl::ShapeError, "[tl::addmm] ", "input",
             tl::addmm(f({1, 2, 5}), f({2, 3}), f({3, 5}))),
      TL_BAD(tl::ShapeError, "[tl::addmm_] ", "self", f({1, 5}).addmm_(f({2, 3}), f({3, 5}))),
      TL_BAD(tl::ShapeError, "[tl::addmm_] ", "", f({1}).expand({2, 5}).addmm_(f({2, 3}), f({3, 5}))),
      TL_BAD(tl::ShapeError, "[tl::baddbmm] ", "batch1",
             tl::baddbmm(f({2, 2}), f({2, 2}), f({1, 2, 2}))),
      TL_BAD(tl::ShapeError, "[tl::baddbmm] ", "batch2",
             tl::baddbmm(f({2, 2}), f({1, 2, 2}), f({2, 2}))),
      TL_BAD(tl::ShapeError, "[tl::baddbmm] ", "batch2",
             tl::baddbmm(f({2, 2}), f({2, 2, 3}), f({3, 3, 2}))),
      TL_BAD(tl::ShapeError, "[tl::baddbmm] ", "[2, 3]",
             tl::baddbmm(f({2, 2}), f({2, 2, 3}), f({2, 4, 2}))),
      TL_BAD(tl::ShapeError, "[tl::baddbmm] ", "input",
             tl::baddbmm(f({3, 2, 2}), f({2, 2, 3}), f({2, 3, 2}))),
      TL_BAD(tl::ShapeError, "[tl::baddbmm_] ", "self",
             f({2, 2}).baddbmm_(f({2, 2, 3}), f({2, 3, 2}))),
      TL_BAD(tl::ShapeError, "[tl::outer] ", "self", tl::outer(f({2, 2}), f({2}))),
      TL_BAD(tl::ShapeError, "[tl::outer] ", "vec2", tl::outer(f({2}), f({}))),
      TL_BAD(tl::ShapeError, "[tl::outer] ", "overflow", tl::outer(huge(), huge())),
      // dtypes: one for all three, never bool; alpha and beta integral for integer dtypes
      TL_BAD(tl::DTypeError, "[tl::addmm] ", "float64", tl::addmm(f({2, 2}), f({2, 2}), d({2, 2}))),
      TL_BAD(tl::DTypeError, "[tl::addmm] ", "input", tl::addmm(d({2, 2}), f({2, 2}), f({2, 2}))),
      TL_BAD(tl::DTypeError, "[tl::addmm] ", "bool", tl::addmm(b8({2, 2}), b8({2, 2}), b8({2, 2}))),
      TL_BAD(tl::DTypeError, "[tl::addmm] ", "alpha",
             tl::addmm(i32({2, 2}), i32({2, 2}), i32({2, 2}), 1, 0.5)),
      TL_BAD(tl::DTypeError, "[tl::addmm] ", "beta",
             tl::addmm(i32({2, 2}), i32({2, 2}), i32({2, 2}), 1.0)),
      TL_BAD(tl::DTypeError, "[tl::addmm] ", "alpha",
             tl::addmm(i32({2, 2}), i32({2, 2}), i32({2, 2}), 1, k40)),
      TL_BAD(tl::DTypeError, "[tl::baddbmm] ", "beta",
             tl::baddbmm(i32({1, 2, 2}), i32({1, 2, 2}), i32({1, 2, 2}), k40)),
      TL_BAD(tl::DTypeError, "[tl::baddbmm] ", "float64",
             tl::baddbmm(f({1, 2, 2}), f({1, 2, 2}), d({1, 2, 2}))),
      TL_BAD(tl::DTypeError, "[tl::addmm_] ", "alpha",
             i32({2, 2}).addmm_(i32({2, 2}), i32({2, 2}), 1, 2.5)),
      // out=: shape, dtype (a float product cannot go into an integer out), broadcast dims
      TL_BAD(tl::ShapeError, "[tl::addmm] ", "out=",
             [] {
               tl::Tensor out = f({3, 3});
               tl::addmm_out(out, f({2, 2}), f({2, 2}), f({2, 2}));
             }()),
      TL_BAD(tl::DTypeError, "[tl::addmm] ", "int32",
             [] {
               tl::Tensor out = i32({2, 2});
               tl::addmm_out(out, f({2, 2}), f({2, 2}), f({2, 2}));
             }()),
      TL_BAD(tl::ShapeError, "[tl::addmm] ", "",
             [] {
               tl::Tensor out = f({1, 2}).expand({2, 2});
               tl::addmm_out(out, f({2, 2}), f({2, 2}), f({2, 2}));
             }()),
      // undefined tensors
      TL_BAD(tl::Error, "[tl::addmm] ", "", tl::addmm(undef(), f({2, 2}), f({2, 2}))),
      TL_BAD(tl::Error, "[tl::baddbmm] ", "", tl::baddbmm(f({1, 2, 2}), undef(), f({1, 2, 2}))),
      TL_BAD(tl::Error, "[tl::outer] ", "", tl::outer(f({2}), undef())),
      // devices
      TL_BAD_CUDA(tl::DeviceError, "[tl::addmm] ", "cuda",
                  tl::addmm(f({2, 2}), cu(f({2, 2})), f({2, 2}))),
      TL_BAD_CUDA(tl::DeviceError, "[tl::baddbmm] ", "cuda",
                  tl::baddbmm(cu(f({1, 2, 2})), f({1, 2, 2}), f({1, 2, 2}))),
      TL_BAD_CUDA(tl::DeviceError, "[tl::outer] ", "cuda", tl::outer(cu(f({2})), f({2}))),
      TL_BAD_CUDA(tl::DeviceError, "[tl::addmm] ", "out=",
                  [] {
                    tl::Tensor out = f({2, 2});
                    tl::addmm_out(out, cu(f({2, 2})), cu(f({2, 2})), cu(f({2, 2})));
                  }()),
  });
}

TEST_CASE("bad input: einsum equations and operands") {
  run_bad_inputs({
      TL_BAD(tl::ShapeError, "[tl::einsum] ", "at least one operand", tl::einsum("i", {})),
      TL_BAD(tl::ShapeError, "[tl::einsum] ", "fewer operands", tl::einsum("i,j", {f({2})})),
      TL_BAD(tl::ShapeError, "[tl::einsum] ", "more operands", tl::einsum("i", {f({2}), f({2})})),
      TL_BAD(tl::ShapeError, "[tl::einsum] ", "index 1", tl::einsum("i1", {f({2, 2})})),
      TL_BAD(tl::ShapeError, "[tl::einsum] ", "index 5", tl::einsum("ij->i_", {f({2, 2})})),
      TL_BAD(tl::ShapeError, "[tl::einsum] ", "[a-zA-Z]", tl::einsum("i-j", {f({2, 2})})),
      TL_BAD(tl::ShapeError, "[tl::einsum] ", "not part of any ellipsis",
             tl::einsum("..i", {f({2, 2})})),
      TL_BAD(tl::ShapeError, "[tl::einsum] ", "already found", tl::einsum("......", {f({2, 2})})),
      TL_BAD(tl::ShapeError, "[tl::einsum] ", "output that is not part of any ellipsis",
             tl::einsum("i->.", {f({2})})),
      TL_BAD(tl::ShapeError, "[tl::einsum] ", "already found", tl::einsum("...->......", {f({2})})),
      TL_BAD(tl::ShapeError, "[tl::einsum] ", "does not match the number of dimensions (3)",
             tl::einsum("ij", {f({2, 2, 2})})),
      TL_BAD(tl::ShapeError, "[tl::einsum] ", "is more than the number of dimensions (1)",
             tl::einsum("ij...", {f({2})})),
      TL_BAD(tl::ShapeError, "[tl::einsum] ", "output subscript k does not appear",
             tl::einsum("ij->k", {f({2, 2})})),
      TL_BAD(tl::ShapeError, "[tl::einsum] ", "output subscript i appears more than once",
             tl::einsum("ij->ii", {f({2, 2})})),
      TL_BAD(tl::ShapeError, "[tl::einsum] ", "subscript i is repeated for operand 0",
             tl::einsum("ii", {f({2, 3})})),
      TL_BAD(tl::ShapeError, "[tl::einsum] ", "subscript j has size 3 for operand 1",
             tl::einsum("ij,jk", {f({2, 2}), f({3, 2})})),
      TL_BAD(tl::ShapeError, "[tl::einsum] ", "covered by ellipsis in operand 1",
             tl::einsum("...,...", {f({2}), f({3})})),
      TL_BAD(tl::ShapeError, "[tl::einsum] ", "size 0", tl::einsum("i,i", {f({0}), f({3})})),
      TL_BAD(tl::DTypeError, "[tl::einsum] ", "float64", tl::einsum("i,i", {f({2}), d({2})})),
      TL_BAD(tl::DTypeError, "[tl::einsum] ", "bool", tl::einsum("i,i", {b8({2}), b8({2})})),
      TL_BAD(tl::Error, "[tl::einsum] ", "", tl::einsum("i,i", {f({2}), undef()})),
      TL_BAD(tl::ShapeError, "[tl::einsum] ", "overflow", tl::einsum("i,j->ij", {huge(), huge()})),
      TL_BAD_CUDA(tl::DeviceError, "[tl::einsum] ", "cuda",
                  tl::einsum("i,i", {f({2}), cu(f({2}))})),
  });
}

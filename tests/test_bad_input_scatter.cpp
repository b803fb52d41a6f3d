// Bad-input suite, the scatter family: index dtypes and ranks, dims, shapes of index and source,
// index values out of range (negative ones refused except by index_fill, as torch), dtypes of
// source and values, alpha, reduce names, masks, destinations with broadcast dims, devices.
#include <cstdint>

#include "bad_input.h"

using namespace tl_test;

namespace {

tl::Tensor f(const tl::Shape& s) { return tl::ones(s); }
tl::Tensor d(const tl::Shape& s) { return tl::ones(s, tl::kFloat64); }
tl::Tensor i32(const tl::Shape& s) { return tl::zeros(s, tl::kInt32); }
tl::Tensor b8(const tl::Shape& s) { return tl::ones(s, tl::kBool); }
tl::Tensor idx(const tl::Shape& s, int64_t v) { return tl::full(s, v, tl::kInt64); }
tl::Tensor idx32(const tl::Shape& s, int64_t v) { return tl::full(s, v, tl::kInt32); }
tl::Tensor undef() { return tl::Tensor(); }
tl::Tensor cu(const tl::Tensor& t) { return t.cuda(); }
tl::Tensor expanded() { return tl::ones({1, 3}).expand({2, 3}); }

}  // namespace

TEST_CASE("bad input: scatter, scatter_add, scatter_reduce") {
  run_bad_inputs({
      // index dtype, rank and sizes; src dtype and rank.
      TL_BAD(tl::DTypeError, "[tl::scatter] ", "float32",
             tl::scatter(f({2, 3}), 1, f({2, 2}), f({2, 2}))),
      TL_BAD(tl::DTypeError, "[tl::scatter] ", "bool", tl::scatter(f({2, 3}), 1, b8({2, 2}), 1.0)),
      TL_BAD(tl::DTypeError, "[tl::scatter] ", "float64",
             tl::scatter(f({2, 3}), 1, idx({2, 2}, 0), d({2, 2}))),
      TL_BAD(tl::DTypeError, "[tl::scatter_add] ", "int32",
             tl::scatter_add(f({2, 3}), 1, idx({2, 2}, 0), i32({2, 2}))),
      TL_BAD(tl::ShapeError, "[tl::scatter] ", "[3]",
             tl::scatter(f({2, 3}), 1, idx({3}, 0), f({3}))),
      TL_BAD(tl::ShapeError, "[tl::scatter] ", "[2]",
             tl::scatter(f({2, 3}), 1, idx({2, 2}, 0), f({2}))),
      TL_BAD(tl::ShapeError, "[tl::scatter] ", "[3, 2]",
             tl::scatter(f({2, 3}), 1, idx({3, 2}, 0), f({3, 2}))),
      TL_BAD(tl::ShapeError, "[tl::scatter_add] ", "[2, 1]",
             tl::scatter_add(f({2, 3}), 1, idx({2, 2}, 0), f({2, 1}))),
      TL_BAD(tl::ShapeError, "[tl::scatter] ", "[3, 1]",
             tl::scatter(f({2, 3}), 1, idx({3, 1}, 0), 2.0)),
      TL_BAD(tl::ShapeError, "[tl::scatter_reduce] ", "[2, 4]",
             tl::scatter_reduce(f({2, 3}), 0, idx({2, 4}, 0), f({2, 4}), "sum")),
      // dim.
      TL_BAD(tl::IndexError, "[tl::scatter] ", "2",
             tl::scatter(f({2, 3}), 2, idx({2, 2}, 0), f({2, 2}))),
      TL_BAD(tl::IndexError, "[tl::scatter_add] ", "-3",
             tl::scatter_add(f({2, 3}), -3, idx({2, 2}, 0), f({2, 2}))),
      TL_BAD(tl::IndexError, "[tl::scatter] ", "1",
             tl::scatter(tl::scalar_tensor(1.0), 1, idx({}, 0), 2.0)),
      // index values: out of range, negative (refused, as torch), int32 too, 0-size dim.
      TL_BAD(tl::IndexError, "[tl::scatter] ", "index 3",
             tl::scatter(f({2, 3}), 1, idx({2, 2}, 3), f({2, 2}))),
      TL_BAD(tl::IndexError, "[tl::scatter] ", "index -1",
             tl::scatter(f({2, 3}), 0, idx({2, 2}, -1), f({2, 2}))),
      TL_BAD(tl::IndexError, "[tl::scatter_add] ", "index 2",
             tl::scatter_add(f({2, 3}), 0, idx32({2, 2}, 2), f({2, 2}))),
      TL_BAD(tl::IndexError, "[tl::scatter_add] ", "index " + std::to_string(INT64_MAX),
             tl::scatter_add(f({4}), 0, idx({2}, INT64_MAX), f({2}))),
      TL_BAD(tl::IndexError, "[tl::scatter_reduce] ", "index -5",
             tl::scatter_reduce(f({4}), 0, idx({1}, -5), f({2}), "amax")),
      TL_BAD(tl::IndexError, "[tl::scatter] ", "size 0",
             tl::scatter(f({3, 0}), 1, idx({3, 1}, 0), f({3, 1}))),
      TL_BAD(tl::IndexError, "[tl::scatter_] ", "index 4", f({4}).scatter_(0, idx({1}, 4), 1.0)),
      // values that do not fit self's dtype (torch's checked conversion).
      TL_BAD(tl::DTypeError, "[tl::scatter] ", "1e+10",
             tl::scatter(i32({3}), 0, idx({1}, 0), 1e10)),
      TL_BAD(tl::DTypeError, "[tl::scatter_] ", "int32", i32({3}).scatter_(0, idx({1}, 0), NAN)),
      // reduce names; mean of bool.
      TL_BAD(tl::Error, "[tl::scatter_reduce] ", "\"max\"",
             tl::scatter_reduce(f({3}), 0, idx({1}, 0), f({1}), "max")),
      TL_BAD(tl::Error, "[tl::scatter_reduce_] ", "\"\"",
             f({3}).scatter_reduce_(0, idx({1}, 0), f({1}), "")),
      TL_BAD(tl::Error, "[tl::scatter_reduce] ", "\"SUM\"",
             tl::scatter_reduce(f({3}), 0, idx({0}, 0), f({1}), "SUM")),
      TL_BAD(tl::DTypeError, "[tl::scatter_reduce] ", "mean",
             tl::scatter_reduce(b8({3}), 0, idx({1}, 0), b8({1}), "mean")),
      // Undefined tensors; a destination with broadcast dims.
      TL_BAD(tl::Error, "[tl::scatter] ", "undefined", tl::scatter(f({2}), 0, undef(), f({2}))),
      TL_BAD(tl::Error, "[tl::scatter_add] ", "undefined",
             tl::scatter_add(f({2}), 0, idx({1}, 0), undef())),
      TL_BAD(tl::ShapeError, "[tl::scatter_] ", "broadcast",
             expanded().scatter_(1, idx({1, 1}, 0), 1.0)),
      TL_BAD(tl::ShapeError, "[tl::scatter_add_] ", "broadcast",
             expanded().scatter_add_(1, idx({1, 1}, 0), f({1, 1}))),
      TL_BAD(tl::ShapeError, "[tl::scatter_reduce_] ", "broadcast",
             expanded().scatter_reduce_(1, idx({1, 1}, 0), f({1, 1}), "prod")),
      // Devices.
      TL_BAD_CUDA(tl::DeviceError, "[tl::scatter] ", "index",
                  tl::scatter(cu(f({3})), 0, idx({1}, 0), cu(f({1})))),
      TL_BAD_CUDA(tl::DeviceError, "[tl::scatter_add] ", "src",
                  tl::scatter_add(cu(f({3})), 0, cu(idx({1}, 0)), f({1}))),
      // On CUDA the kernel checks each index and the error comes at the next wait for the
      // device (here the copy to the host), naming the op that launched it.
      TL_BAD_CUDA(tl::IndexError, "[tl::scatter_add] ", "index 3",
                  tl::scatter_add(cu(f({3})), 0, cu(idx({4}, 3)), cu(f({4}))).cpu()),
      TL_BAD_CUDA(tl::IndexError, "[tl::scatter_reduce] ", "index -1",
                  tl::scatter_reduce(cu(f({3})), 0, cu(idx32({4}, -1)), cu(f({4})), "amin").cpu()),
      TL_BAD_CUDA(tl::IndexError, "[tl::scatter_] ", "index 7",
                  (cu(f({3})).scatter_(0, cu(idx({2}, 7)), 1.0), tl::cuda::synchronize())),
      TL_BAD_CUDA(tl::IndexError, "[tl::index_add] ", "index 3",
                  tl::index_add(cu(f({3})), 0, cu(idx({4}, 3)), cu(f({4}))).sum().item<double>()),
      TL_BAD_CUDA(tl::IndexError, "[tl::index_copy_] ", "index -2",
                  (cu(f({3})).index_copy_(0, cu(idx({1}, -2)), cu(f({1}))),
                   tl::cuda::Stream::current().synchronize())),
      // An empty result reads back without a wait, so a bad index into it is raised at the
      // call (the fuzzer found the kernel's report surfacing at a later, unrelated op).
      TL_BAD_CUDA(tl::IndexError, "[tl::index_add] ", "index 0",
                  tl::index_add(cu(f({2, 0})), 1, cu(idx({3}, 0)), cu(f({2, 3})))),
      TL_BAD_CUDA(tl::IndexError, "[tl::scatter_add] ", "index 1",
                  tl::scatter_add(cu(f({0})), 0, cu(idx({2}, 1)), cu(f({2})))),
      TL_BAD_CUDA(tl::IndexError, "[tl::index_copy] ", "index 5",
                  tl::index_copy(cu(f({0, 4})), 1, cu(idx({2}, 5)), cu(f({0, 2})))),
  });
}

TEST_CASE("bad input: index_add, index_copy, index_fill") {
  run_bad_inputs({
      // index_add: index dtype and rank, source dtype and shape, dim, alpha, values.
      TL_BAD(tl::DTypeError, "[tl::index_add] ", "float32",
             tl::index_add(f({3, 2}), 0, f({2}), f({2, 2}))),
      TL_BAD(tl::IndexError, "[tl::index_add] ", "[2, 1]",
             tl::index_add(f({3, 2}), 0, idx({2, 1}, 0), f({2, 2}))),
      TL_BAD(tl::DTypeError, "[tl::index_add] ", "float64",
             tl::index_add(f({3, 2}), 0, idx({2}, 0), d({2, 2}))),
      TL_BAD(tl::ShapeError, "[tl::index_add] ", "number of indices (3)",
             tl::index_add(f({3, 2}), 0, idx({3}, 0), f({2, 2}))),
      TL_BAD(tl::ShapeError, "[tl::index_add] ", "[2, 3]",
             tl::index_add(f({3, 2}), 0, idx({2}, 0), f({2, 3}))),
      TL_BAD(tl::ShapeError, "[tl::index_add] ", "[2]",
             tl::index_add(f({3, 2}), 0, idx({2}, 0), f({2}))),
      TL_BAD(tl::IndexError, "[tl::index_add] ", "2",
             tl::index_add(f({3, 2}), 2, idx({2}, 0), f({2, 2}))),
      TL_BAD(tl::DTypeError, "[tl::index_add] ", "alpha",
             tl::index_add(i32({3}), 0, idx({1}, 0), i32({1}), 0.5)),
      TL_BAD(tl::DTypeError, "[tl::index_add] ", "alpha",
             tl::index_add(b8({3}), 0, idx({1}, 0), b8({1}), 0.5)),
      TL_BAD(tl::DTypeError, "[tl::index_add] ", "Boolean alpha",
             tl::index_add(f({3}), 0, idx({1}, 0), f({1}), true)),
      TL_BAD(tl::DTypeError, "[tl::index_add] ", "alpha",
             tl::index_add(i32({3}), 0, idx({1}, 0), i32({1}), int64_t{1} << 40)),
      TL_BAD(tl::IndexError, "[tl::index_add] ", "index 3",
             tl::index_add(f({3, 2}), 0, idx({2}, 3), f({2, 2}))),
      TL_BAD(tl::IndexError, "[tl::index_add] ", "index -1",
             tl::index_add(f({3, 2}), 1, idx32({2}, -1), f({3, 2}))),
      TL_BAD(tl::IndexError, "[tl::index_add_] ", "index 5",
             f({3}).index_add_(0, idx({1}, 5), f({1}))),
      TL_BAD(tl::ShapeError, "[tl::index_add_] ", "broadcast",
             expanded().index_add_(1, idx({1}, 0), f({2, 1}))),
      // index_copy: int64 index only (as torch), shapes, values.
      TL_BAD(tl::DTypeError, "[tl::index_copy] ", "int32",
             tl::index_copy(f({3, 2}), 0, idx32({2}, 0), f({2, 2}))),
      TL_BAD(tl::IndexError, "[tl::index_copy] ", "2",
             tl::index_copy(f({3, 2}), 0, idx({2, 1}, 0), f({2, 2}))),
      TL_BAD(tl::DTypeError, "[tl::index_copy] ", "float64",
             tl::index_copy(f({3, 2}), 0, idx({2}, 0), d({2, 2}))),
      TL_BAD(tl::IndexError, "[tl::index_copy] ", "(3)",
             tl::index_copy(f({3, 2}), 0, idx({3}, 0), f({2, 2}))),
      TL_BAD(tl::ShapeError, "[tl::index_copy] ", "[3]",
             tl::index_copy(f({3, 2}), 0, idx({2}, 0), f({2, 3}))),
      TL_BAD(tl::IndexError, "[tl::index_copy] ", "one element",
             tl::index_copy(f({3}), 0, idx({2}, 0), tl::scalar_tensor(1.0))),
      TL_BAD(tl::IndexError, "[tl::index_copy] ", "index -1",
             tl::index_copy(f({3}), 0, idx({1}, -1), f({1}))),
      TL_BAD(tl::IndexError, "[tl::index_copy_] ", "index 3",
             f({3}).index_copy_(0, idx({1}, 3), f({1}))),
      // index_fill: int64 index only, rank, dim, values in [-size, size), value range.
      TL_BAD(tl::DTypeError, "[tl::index_fill] ", "int32",
             tl::index_fill(f({3}), 0, idx32({1}, 0), 1)),
      TL_BAD(tl::IndexError, "[tl::index_fill] ", "[1, 1]",
             tl::index_fill(f({3}), 0, idx({1, 1}, 0), 1)),
      TL_BAD(tl::IndexError, "[tl::index_fill] ", "1", tl::index_fill(f({3}), 1, idx({1}, 0), 1)),
      TL_BAD(tl::IndexError, "[tl::index_fill] ", "index 3",
             tl::index_fill(f({3}), 0, idx({1}, 3), 1)),
      TL_BAD(tl::IndexError, "[tl::index_fill] ", "index -4",
             tl::index_fill(f({3}), 0, idx({1}, -4), 1)),
      TL_BAD(tl::IndexError, "[tl::index_fill] ", "index " + std::to_string(INT64_MIN),
             tl::index_fill(f({3}), 0, idx({1}, INT64_MIN), 1)),
      TL_BAD(tl::DTypeError, "[tl::index_fill] ", "1e+10",
             tl::index_fill(i32({3}), 0, idx({1}, 0), 1e10)),
      TL_BAD(tl::ShapeError, "[tl::index_fill_] ", "broadcast",
             expanded().index_fill_(1, idx({1}, 0), 1)),
      // Size products: the filled slices' shape overflows int64.
      TL_BAD(
          tl::ShapeError, "[tl::index_fill_] ", "overflow",
          f({1 << 20, 1}).index_fill_(1, tl::zeros({1}, tl::kInt64).expand({int64_t{1} << 50}), 1)),
      // Devices.
      TL_BAD_CUDA(tl::DeviceError, "[tl::index_add] ", "index",
                  tl::index_add(cu(f({3})), 0, idx({1}, 0), cu(f({1})))),
      TL_BAD_CUDA(tl::DeviceError, "[tl::index_copy] ", "source",
                  tl::index_copy(cu(f({3})), 0, cu(idx({1}, 0)), f({1}))),
      TL_BAD_CUDA(tl::IndexError, "[tl::index_fill] ", "index 3",
                  tl::index_fill(cu(f({3})), 0, cu(idx({1}, 3)), 1)),
  });
}

TEST_CASE("bad input: masked_scatter") {
  run_bad_inputs({
      TL_BAD(tl::DTypeError, "[tl::masked_scatter] ", "float32",
             tl::masked_scatter(f({3}), f({3}), f({3}))),
      TL_BAD(tl::DTypeError, "[tl::masked_scatter] ", "int32",
             tl::masked_scatter(f({3}), b8({3}), i32({3}))),
      TL_BAD(tl::ShapeError, "[tl::masked_scatter] ", "[2]",
             tl::masked_scatter(f({3}), b8({2}), f({3}))),
      TL_BAD(tl::ShapeError, "[tl::masked_scatter] ", "true values",
             tl::masked_scatter(f({3}), b8({3}), f({2}))),
      TL_BAD(tl::ShapeError, "[tl::masked_scatter] ", "true values",
             tl::masked_scatter(f({2, 3}), b8({3}), f({5}))),
      TL_BAD(tl::ShapeError, "[tl::masked_scatter_] ", "[2, 3]",
             f({3}).masked_scatter_(b8({2, 3}), f({6}))),
      TL_BAD(tl::ShapeError, "[tl::masked_scatter_] ", "broadcast",
             expanded().masked_scatter_(b8({3}), f({6}))),
      TL_BAD(tl::Error, "[tl::masked_scatter] ", "undefined",
             tl::masked_scatter(f({3}), undef(), f({3}))),
      TL_BAD_CUDA(tl::DeviceError, "[tl::masked_scatter] ", "mask",
                  tl::masked_scatter(cu(f({3})), b8({3}), cu(f({3})))),
      TL_BAD_CUDA(tl::ShapeError, "[tl::masked_scatter] ", "true values",
                  tl::masked_scatter(cu(f({3})), cu(b8({3})), cu(f({1})))),
  });
}

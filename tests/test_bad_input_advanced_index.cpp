// Bad-input suite, advanced indexing: index counts, ranges, steps, index dtypes and devices, mask
// shapes, broadcasting of indices and values, dtypes of values, writes into expanded tensors, and
// take / put_'s own rules.
#include "bad_input.h"

using namespace tl_test;

namespace {
tl::Tensor x23() { return tl::ones({2, 3}); }
tl::Tensor i64s(std::vector<int64_t> v) { return tl::from_vector<int64_t>(v); }
tl::TensorOptions on_cuda(tl::DType dtype) {
  return tl::TensorOptions(dtype).device(tl::Device::cuda(0));
}
}  // namespace

TEST_CASE("bad input: advanced indexing") {
  using tl::Slice;
  run_bad_inputs({
      TL_BAD(tl::IndexError, "[tl::index] ", "too many indices for tensor of dimension 2",
             x23().index({0, 0, 0})),
      TL_BAD(tl::IndexError, "[tl::index] ", "too many indices",
             x23().index({tl::ones({2, 3}, tl::kBool), 0})),
      TL_BAD(tl::IndexError, "[tl::index] ", "index 2 is out of bounds for dimension 0 with size 2",
             x23().index({2})),
      TL_BAD(tl::IndexError, "[tl::index] ",
             "index -4 is out of bounds for dimension 1 with size 3", x23().index({Slice(), -4})),
      TL_BAD(tl::IndexError, "[tl::index] ", "index 3 is out of bounds for dimension 1 with size 3",
             x23().index({Slice(), i64s({0, 3})})),
      TL_BAD(tl::IndexError, "[tl::index] ",
             "index -3 is out of bounds for dimension 0 with size 2",
             x23().index({i64s({-3}).to(tl::kInt32)})),
      TL_BAD(tl::IndexError, "[tl::index] ", "index 5 is out of bounds",
             tl::zeros({0, 3}).index({Slice(), i64s({5})})),
      TL_BAD(tl::IndexError, "[tl::index] ", "step must be greater than zero",
             x23().index({Slice(tl::None, tl::None, -1)})),
      TL_BAD(tl::IndexError, "[tl::index] ", "slice step cannot be zero",
             x23().index({Slice(0, 2, 0)})),
      TL_BAD(tl::IndexError, "[tl::index] ", "single ellipsis", x23().index({"...", tl::Ellipsis})),
      TL_BAD(tl::IndexError, "[tl::index] ", "\"...\"", x23().index({"::"})),
      TL_BAD(tl::IndexError, "[tl::index] ",
             "The shape of the mask [3] at index 0 does not match the shape of the indexed tensor "
             "[2, 3] at index 0",
             x23().index({tl::from_vector<bool>({true, false, true})})),
      TL_BAD(tl::IndexError, "[tl::index] ", "at index 1",
             x23().index({tl::ones({2, 2}, tl::kUInt8)})),
      TL_BAD(tl::DTypeError, "[tl::index] ", "long, int, byte or bool tensors, got float32",
             x23().index({tl::zeros({1})})),
      TL_BAD(tl::DTypeError, "[tl::index] ", "int16", x23().index({tl::zeros({1}, tl::kInt16)})),
      TL_BAD(tl::Error, "[tl::index] ", "", x23().index({tl::Tensor()})),
      TL_BAD(tl::IndexError, "[tl::index] ", "could not be broadcast together with shapes [2], [3]",
             x23().index({i64s({0, 1}), i64s({0, 1, 2})})),
      // index_put_
      TL_BAD(tl::ShapeError, "[tl::index_put_] ",
             "value tensor of shape [4] cannot be broadcast to indexing result of shape [2, 3]",
             x23().index_put_({i64s({0, 1})}, tl::ones({4}))),
      TL_BAD(tl::ShapeError, "[tl::index_put_] ", "cannot be broadcast",
             x23().index_put_({0}, tl::ones({2}))),
      TL_BAD(tl::DTypeError, "[tl::index_put_] ",
             "got float32 for the destination and float64 for the source",
             x23().index_put_({i64s({0})}, tl::ones({3}, tl::kFloat64))),
      TL_BAD(tl::DTypeError, "[tl::index_put_] ", "1e+10",
             tl::zeros({3}, tl::kInt32).index_put_({i64s({0})}, 1e10)),
      TL_BAD(tl::ShapeError, "[tl::index_put_] ", "broadcast (stride 0)",
             tl::ones({1, 3}).expand({2, 3}).index_put_({i64s({0})}, 2.0)),
      TL_BAD(tl::IndexError, "[tl::index_put_] ", "out of bounds",
             x23().index_put_({i64s({2})}, 1.0, true)),
      TL_BAD(tl::IndexError, "[tl::index_put] ", "out of bounds",
             tl::index_put(x23(), {Slice(), i64s({-4})}, 1.0)),
      // take / put_ / put
      TL_BAD(tl::DTypeError, "[tl::take] ", "int32", tl::take(x23(), i64s({0}).to(tl::kInt32))),
      TL_BAD(tl::IndexError, "[tl::take] ", "tried to access index 6 on a tensor of 6 elements",
             tl::take(x23(), i64s({6}))),
      TL_BAD(tl::IndexError, "[tl::take] ", "index -7", x23().take(i64s({-7}))),
      TL_BAD(tl::IndexError, "[tl::take] ", "empty tensor", tl::zeros({0}).take(i64s({0}))),
      TL_BAD(tl::ShapeError, "[tl::put_] ", "source.numel() = 2, index.numel() = 1",
             x23().put_(i64s({0}), tl::ones({2}))),
      TL_BAD(tl::DTypeError, "[tl::put_] ", "source.dtype = int64",
             x23().put_(i64s({0}), i64s({1}))),
      TL_BAD(tl::ShapeError, "[tl::put_] ", "broadcast (stride 0)",
             tl::ones({1, 3}).expand({2, 3}).put_(i64s({0}), tl::ones({1}))),
      TL_BAD(tl::IndexError, "[tl::put] ", "out of range",
             tl::put(x23(), i64s({9}), tl::ones({1}))),
      // Devices: a CPU index serves a CUDA tensor; a CUDA index does not serve a CPU one.
      TL_BAD_CUDA(tl::DeviceError, "[tl::index] ", "indices should be either on cpu",
                  x23().index({tl::zeros({1}, on_cuda(tl::kInt64))})),
      TL_BAD_CUDA(tl::DeviceError, "[tl::take] ", "index",
                  x23().take(tl::zeros({1}, on_cuda(tl::kInt64)))),
      TL_BAD_CUDA(tl::DeviceError, "[tl::index_put_] ", "values",
                  x23().index_put_({i64s({0})}, tl::ones({3}, on_cuda(tl::kFloat32)))),
      TL_BAD_CUDA(tl::IndexError, "[tl::index] ", "out of bounds",
                  tl::ones({2, 3}, on_cuda(tl::kFloat32)).index({i64s({7})})),
  });
}

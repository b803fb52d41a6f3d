// Bad-input suite, random ops: generators of another device type, negative sizes, dtypes the ops
// refuse, std < 0, p outside [0, 1], invalid multinomial weights and sample counts.
#include "bad_input.h"

using namespace tl_test;

namespace {
tl::Tensor floats(std::vector<float> v) { return tl::from_vector<float>(v); }
tl::Generator cuda_gen() { return tl::Generator(1, tl::Device::cuda(0)); }
}  // namespace

TEST_CASE("bad input: random ops") {
  constexpr int64_t k25 = (int64_t{1} << 24) + 1;
  run_bad_inputs({
      // A generator serves one device type, as torch's "Expected a 'cuda' device type".
      TL_BAD(tl::DeviceError, "[tl::rand] ", "cuda", tl::rand({2}, {}, cuda_gen())),
      TL_BAD(tl::DeviceError, "[tl::randperm] ", "cuda", tl::randperm(4, {}, cuda_gen())),
      TL_BAD(tl::DeviceError, "[tl::uniform_] ", "cuda", tl::ones({2}).uniform_(0, 1, cuda_gen())),
      TL_BAD(tl::DeviceError, "[tl::multinomial] ", "cuda",
             tl::multinomial(floats({1, 2}), 1, false, cuda_gen())),
      TL_BAD(tl::DeviceError, "[tl::bernoulli] ", "cuda", tl::bernoulli(floats({0.5}), cuda_gen())),
      TL_BAD_CUDA(tl::DeviceError, "[tl::normal] ", "cpu",
                  tl::normal(0, 1, {2}, tl::Device::cuda(0), tl::Generator(1))),
      // randperm: n >= 0, n - 1 a value of the dtype, float precision, no bool.
      TL_BAD(tl::ShapeError, "[tl::randperm] ", "-1", tl::randperm(-1)),
      TL_BAD(tl::DTypeError, "[tl::randperm] ", "uint8", tl::randperm(257, tl::kUInt8)),
      TL_BAD(tl::DTypeError, "[tl::randperm] ", "int8", tl::randperm(129, tl::kInt8)),
      TL_BAD(tl::DTypeError, "[tl::randperm] ", "2049", tl::randperm(2050, tl::kFloat16)),
      TL_BAD(tl::DTypeError, "[tl::randperm] ", "16777217", tl::randperm(k25 + 1, tl::kFloat32)),
      TL_BAD(tl::DTypeError, "[tl::randperm] ", "bool", tl::randperm(2, tl::kBool)),
      TL_BAD(tl::ShapeError, "[tl::randperm] ", "", tl::randperm(int64_t{1} << 62)),
      // normal: std >= 0 (NaN refused), floating results.
      TL_BAD(tl::ShapeError, "[tl::normal] ", "-1", tl::normal(0, -1, {2})),
      TL_BAD(tl::ShapeError, "[tl::normal] ", "nan", tl::normal(0, NAN, {2})),
      TL_BAD(tl::DTypeError, "[tl::normal] ", "int64", tl::normal(0, 1, {2}, tl::kInt64)),
      TL_BAD(tl::ShapeError, "[tl::normal] ", "std", tl::normal(floats({1, 2}), -0.5)),
      TL_BAD(tl::ShapeError, "[tl::normal] ", "std", tl::normal(1.0, floats({1, -2}))),
      TL_BAD(tl::ShapeError, "[tl::normal] ", "std", tl::normal(floats({1}), floats({NAN}))),
      TL_BAD(tl::DTypeError, "[tl::normal] ", "int64",
             tl::normal(tl::ones({2}, tl::kInt64), floats({1, 1}))),
      TL_BAD(tl::DTypeError, "[tl::normal] ", "int32", tl::normal(1.0, tl::ones({2}, tl::kInt32))),
      TL_BAD(tl::ShapeError, "[tl::normal] ", "", tl::normal(floats({1, 2}), floats({1, 2, 3}))),
      TL_BAD(tl::Error, "[tl::normal] ", "undefined", tl::normal(tl::Tensor(), 1.0)),
      TL_BAD_CUDA(tl::DeviceError, "[tl::normal] ", "",
                  tl::normal(floats({1}), floats({1}).cuda())),
      // In-place fills: floating dtypes where torch has them, bounds, rates, ranges, broadcast
      // destinations.
      TL_BAD(tl::DTypeError, "[tl::uniform_] ", "int32", tl::ones({2}, tl::kInt32).uniform_()),
      TL_BAD(tl::ShapeError, "[tl::uniform_] ", "from=2", tl::ones({2}).uniform_(2, 1)),
      TL_BAD(tl::DTypeError, "[tl::uniform_] ", "from", tl::ones({2}).uniform_(-1e39, 1)),
      TL_BAD(tl::DTypeError, "[tl::uniform_] ", "to", tl::ones({2}).uniform_(0, INFINITY)),
      TL_BAD(tl::DTypeError, "[tl::uniform_] ", "to", tl::ones({2}).uniform_(0, NAN)),
      TL_BAD(tl::DTypeError, "[tl::uniform_] ", "float16",
             tl::ones({2}, tl::kFloat16).uniform_(-60000, 60000)),
      TL_BAD(tl::ShapeError, "[tl::uniform_] ", "", tl::ones({1}).expand({3}).uniform_()),
      TL_BAD(tl::DTypeError, "[tl::normal_] ", "int64", tl::ones({2}, tl::kInt64).normal_()),
      TL_BAD(tl::ShapeError, "[tl::normal_] ", "-2", tl::ones({2}).normal_(0, -2)),
      TL_BAD(tl::ShapeError, "[tl::exponential_] ", "0", tl::ones({2}).exponential_(0)),
      TL_BAD(tl::ShapeError, "[tl::exponential_] ", "-1", tl::ones({2}).exponential_(-1)),
      TL_BAD(tl::ShapeError, "[tl::exponential_] ", "inf", tl::ones({2}).exponential_(INFINITY)),
      TL_BAD(tl::DTypeError, "[tl::exponential_] ", "bool",
             tl::ones({2}, tl::kBool).exponential_()),
      TL_BAD(tl::ShapeError, "[tl::random_] ", "from=3", tl::ones({2}).random_(3, 3)),
      TL_BAD(tl::DTypeError, "[tl::random_] ", "uint8", tl::ones({2}, tl::kUInt8).random_(-1, 4)),
      TL_BAD(tl::DTypeError, "[tl::random_] ", "int8", tl::ones({2}, tl::kInt8).random_(200)),
      TL_BAD(tl::ShapeError, "[tl::random_] ", "", tl::ones({1}).expand({3}).random_()),
      // bernoulli: p in [0, 1] (NaN refused), a floating p tensor that broadcasts to the target.
      TL_BAD(tl::ShapeError, "[tl::bernoulli] ", "[0, 1]", tl::bernoulli(floats({0.5, 1.5}))),
      TL_BAD(tl::ShapeError, "[tl::bernoulli] ", "[0, 1]", tl::bernoulli(floats({-0.1}))),
      TL_BAD(tl::ShapeError, "[tl::bernoulli] ", "[0, 1]", tl::bernoulli(floats({NAN}))),
      TL_BAD(tl::DTypeError, "[tl::bernoulli] ", "int64", tl::bernoulli(tl::ones({2}, tl::kInt64))),
      TL_BAD(tl::ShapeError, "[tl::bernoulli] ", "1.5", tl::bernoulli(tl::ones({2}), 1.5)),
      TL_BAD(tl::ShapeError, "[tl::bernoulli] ", "nan", tl::bernoulli(tl::ones({2}), NAN)),
      TL_BAD(tl::ShapeError, "[tl::bernoulli_] ", "-1", tl::ones({2}).bernoulli_(-1.0)),
      TL_BAD(tl::ShapeError, "[tl::bernoulli_] ", "[0, 1]",
             tl::ones({2}).bernoulli_(floats({0.5, 2}))),
      TL_BAD(tl::DTypeError, "[tl::bernoulli_] ", "int32",
             tl::ones({2}).bernoulli_(tl::ones({2}, tl::kInt32))),
      TL_BAD(tl::ShapeError, "[tl::bernoulli_] ", "cannot be broadcast",
             tl::ones({2}).bernoulli_(floats({0.5, 0.5, 0.5}))),
      TL_BAD(tl::ShapeError, "[tl::bernoulli_] ", "", tl::ones({1}).expand({3}).bernoulli_(0.5)),
      TL_BAD_CUDA(tl::DeviceError, "[tl::bernoulli_] ", "",
                  tl::ones({2}).bernoulli_(floats({0.5, 0.5}).cuda())),
      // multinomial: 1-D or 2-D floating weights, non-negative, finite, a positive sum per row;
      // 0 < num_samples, and without replacement no more than the non-zero weights of a row.
      TL_BAD(tl::ShapeError, "[tl::multinomial] ", "3-D", tl::multinomial(tl::ones({2, 2, 2}), 1)),
      TL_BAD(tl::ShapeError, "[tl::multinomial] ", "0-D", tl::multinomial(tl::ones({}), 1)),
      TL_BAD(tl::DTypeError, "[tl::multinomial] ", "int64",
             tl::multinomial(tl::ones({3}, tl::kInt64), 1)),
      TL_BAD(tl::ShapeError, "[tl::multinomial] ", "n_sample <= 0",
             tl::multinomial(floats({1, 2}), 0)),
      TL_BAD(tl::ShapeError, "[tl::multinomial] ", "n_sample <= 0",
             tl::multinomial(floats({1, 2}), -3, true)),
      TL_BAD(tl::ShapeError, "[tl::multinomial] ", "without replacement",
             tl::multinomial(floats({1, 2}), 3)),
      TL_BAD(tl::ShapeError, "[tl::multinomial] ", "not enough",
             tl::multinomial(floats({1, 0, 2}), 3)),
      TL_BAD(tl::ShapeError, "[tl::multinomial] ", "not enough",
             tl::multinomial(floats({1, 1, 0, 1}).view({2, 2}), 2)),
      TL_BAD(tl::ShapeError, "[tl::multinomial] ", "element < 0",
             tl::multinomial(floats({1, -1}), 1)),
      TL_BAD(tl::ShapeError, "[tl::multinomial] ", "inf",
             tl::multinomial(floats({1, INFINITY}), 1, true)),
      TL_BAD(tl::ShapeError, "[tl::multinomial] ", "nan", tl::multinomial(floats({NAN, 1}), 1)),
      TL_BAD(tl::ShapeError, "[tl::multinomial] ", "sum of probabilities",
             tl::multinomial(floats({0, 0}), 1, true)),
      TL_BAD(tl::ShapeError, "[tl::multinomial] ", "sum of probabilities",
             tl::multinomial(floats({1, 2, 0, 0}).view({2, 2}), 1, true)),
      TL_BAD(tl::ShapeError, "[tl::multinomial] ", "sum of probabilities",
             tl::multinomial(tl::ones({0}), 2, true)),
      TL_BAD(tl::ShapeError, "[tl::multinomial] ", "2^24",
             tl::multinomial(tl::ones({1}).expand({k25}), 1, true)),
  });
}

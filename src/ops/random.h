// Random numbers from a counter-based Philox4x32-10 stream, defined so every backend can
// produce the same numbers for the same seed, call order and shape. Every op draws from `gen`
// when given (a tl::Generator of the result's device type, else DeviceError), else from the
// default generator of the result's device type (tl::default_generator); the in-place forms
// (x.uniform_, x.normal_, x.exponential_, x.random_, x.bernoulli_) are Tensor methods.
#pragma once

#include <cstdint>
#include <optional>

#include "tensorlet/tensor/generator.h"
#include "tensorlet/tensor/tensor.h"

namespace tensorlet {

// Seeds the default generator of every device type and rewinds its offset to 0.
void manual_seed(uint64_t seed);
// torch.seed(): seeds every default generator with one nondeterministic seed and returns it.
uint64_t seed();
// torch.initial_seed(): the CPU default generator's seed.
uint64_t initial_seed();

// Uniform in [0, 1).
Tensor rand(IntArrayRef size, TensorOptions options = {},
            const std::optional<Generator>& gen = std::nullopt);
// Standard normal.
Tensor randn(IntArrayRef size, TensorOptions options = {},
             const std::optional<Generator>& gen = std::nullopt);
// Integers in [low, high); int64 unless told.
Tensor randint(int64_t low, int64_t high, IntArrayRef size, TensorOptions options = {},
               const std::optional<Generator>& gen = std::nullopt);
Tensor randint(int64_t high, IntArrayRef size, TensorOptions options = {},
               const std::optional<Generator>& gen = std::nullopt);

// torch.randperm: a random permutation of 0..n-1, int64 unless told. The order of one random
// 64-bit key per position (ties by position), so every backend gives the same permutation for a
// seed. n >= 0 (ShapeError); n - 1 must be a value of the dtype (uint8: n <= 256, ...) and
// float16 n <= 2049, float32 n <= 2^24 + 1, float64 n <= 2^53 + 1, as torch (DTypeError); bool
// is refused (DTypeError). bfloat16 is allowed for any n whose n - 1 it holds, as in torch,
// though it rounds values above 256.
Tensor randperm(int64_t n, TensorOptions options = {},
                const std::optional<Generator>& gen = std::nullopt);

// torch.normal. With numbers: a tensor of `size` (a floating dtype) drawn from N(mean, std^2).
// With tensors: mean and/or std broadcast to the result's shape; the result takes mean's dtype
// and device (std's when mean is a number) and must be floating (DTypeError), as torch draws
// standard normals into it and then multiplies by std and adds mean. std < 0 (any element, NaN
// included) is a ShapeError.
Tensor normal(double mean, double std, IntArrayRef size, TensorOptions options = {},
              const std::optional<Generator>& gen = std::nullopt);
Tensor normal(const Tensor& mean, double std = 1,
              const std::optional<Generator>& gen = std::nullopt);
Tensor normal(double mean, const Tensor& std, const std::optional<Generator>& gen = std::nullopt);
Tensor normal(const Tensor& mean, const Tensor& std,
              const std::optional<Generator>& gen = std::nullopt);

// torch.bernoulli(p): each element 1 with probability p (a floating tensor, every element in
// [0, 1], else ShapeError), 0 otherwise, in p's dtype. bernoulli(self, p): self's shape and
// dtype (any), each element 1 with probability p in [0, 1]. u < p on float64 uniforms.
Tensor bernoulli(const Tensor& p, const std::optional<Generator>& gen = std::nullopt);
Tensor bernoulli(const Tensor& self, double p, const std::optional<Generator>& gen = std::nullopt);

// torch.multinomial: num_samples category indices (int64) per row of probs, 1-D [n] or 2-D
// [rows, n], non-negative finite floating weights that need not sum to 1. Without replacement:
// the exponential race (keys -log(u) / w, the num_samples smallest, in order), which needs
// num_samples <= the number of non-zero weights of every row; with replacement: inverse CDF on
// the float64 cumulative sum. Errors as torch: dim not 1 or 2 (ShapeError), non-floating
// (DTypeError), num_samples <= 0, too many without replacement, more than 2^24 categories, a
// negative, infinite or NaN weight, a row summing to 0 (ShapeError).
Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement = false,
                   const std::optional<Generator>& gen = std::nullopt);

}  // namespace tensorlet

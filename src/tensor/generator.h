// tl::Generator: a handle to one Philox stream's state (seed and next block), shared by copies as
// torch.Generator objects are; every random op draws from one (the device's default when none).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>

#include "tensorlet/tensor/device.h"

namespace tensorlet {

// PyTorch's default seed, so an unseeded program is deterministic too.
inline constexpr uint64_t kDefaultSeed = 67280421310721ull;

// A generator's whole state (torch's get_state() is a byte tensor; ours is this struct): the seed
// keys the Philox stream and offset is its next unused 128-bit block.
struct GeneratorState {
  uint64_t seed = kDefaultSeed;
  uint64_t offset = 0;
  bool operator==(const GeneratorState&) const = default;
};

// Where one random op's numbers come from: the first of the blocks it reserved.
struct PhiloxReservation {
  uint64_t seed;
  uint64_t offset;
};

class Generator {
 public:
  // A new, independent stream for random ops on tensors of `device`'s type (the device index is
  // not checked: one generator serves every CUDA device, as each op reserves its own blocks).
  explicit Generator(uint64_t seed = kDefaultSeed, Device device = Device::cpu());

  // Reseeds and rewinds to block 0; returns *this (g.manual_seed(3) chains as in torch).
  Generator& manual_seed(uint64_t seed);
  // Reseeds with a nondeterministic seed (std::random_device) and returns it.
  uint64_t seed();
  // The seed last set (manual_seed, seed or the constructor).
  uint64_t initial_seed() const;
  // The next unused Philox block; set_offset moves it (torch's CUDA generator's philox offset).
  uint64_t get_offset() const;
  void set_offset(uint64_t offset);
  // Save and restore: numbers drawn after set_state(s) repeat those drawn after get_state().
  GeneratorState get_state() const;
  void set_state(const GeneratorState& state);
  Device device() const;

  // Reserves `blocks` consecutive Philox blocks under the generator's lock, so concurrent draws
  // from one generator never share numbers; returns the seed and the first block.
  PhiloxReservation reserve(uint64_t blocks) const;

  // True when both refer to the same state (copies do).
  bool is_same(const Generator& other) const { return state_ == other.state_; }

 private:
  struct State {
    mutable std::mutex mutex;
    GeneratorState value;
    Device device;
  };
  explicit Generator(std::shared_ptr<State> state) : state_(std::move(state)) {}
  friend Generator default_generator(Device device);
  std::shared_ptr<State> state_;
};

// The default generator of `device`'s type (one per device type, as tl::manual_seed seeds them
// all): the one random ops draw from when given none.
Generator default_generator(Device device = Device::cpu());

}  // namespace tensorlet

// tl::Generator's shared state, its locked offset reservation and the per-device-type defaults.
#include "tensorlet/tensor/generator.h"

#include <array>
#include <random>

namespace tensorlet {

Generator::Generator(uint64_t seed, Device device) : state_(std::make_shared<State>()) {
  state_->value.seed = seed;
  state_->device = device;
}

Generator& Generator::manual_seed(uint64_t seed) {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->value = {seed, 0};
  return *this;
}

uint64_t Generator::seed() {
  std::random_device device;
  const uint64_t s = (static_cast<uint64_t>(device()) << 32) | device();
  manual_seed(s);
  return s;
}

uint64_t Generator::initial_seed() const { return get_state().seed; }

uint64_t Generator::get_offset() const { return get_state().offset; }

void Generator::set_offset(uint64_t offset) {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->value.offset = offset;
}

GeneratorState Generator::get_state() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->value;
}

void Generator::set_state(const GeneratorState& state) {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->value = state;
}

Device Generator::device() const { return state_->device; }

PhiloxReservation Generator::reserve(uint64_t blocks) const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  PhiloxReservation r{state_->value.seed, state_->value.offset};
  state_->value.offset += blocks;
  return r;
}

Generator default_generator(Device device) {
  static const std::array<std::shared_ptr<Generator::State>, kNumDeviceTypes> states = [] {
    std::array<std::shared_ptr<Generator::State>, kNumDeviceTypes> s;
    for (int t = 0; t < kNumDeviceTypes; ++t) {
      s[t] = std::make_shared<Generator::State>();
      s[t]->device = Device(static_cast<DeviceType>(t));
    }
    return s;
  }();
  return Generator(states[static_cast<int>(device.type())]);
}

}  // namespace tensorlet

// tl::cuda::Graph: capture the work a function enqueues on the GPU once, then replay it with one
// launch per device (CUDA stream capture, as torch.cuda.CUDAGraph). Exists in every build: without
// the CUDA backend or a GPU, capturing throws DeviceError.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <vector>

namespace tensorlet {
class Tensor;
}

namespace tensorlet::cuda {

// A memory pool of the caching allocator that captures allocate from. Memory a capture allocates
// stays the graph's across replays (its tensors are the graph's static outputs); graphs that
// replay one after another may share a pool (torch.cuda.graph_pool_handle). id 0: a new private
// pool for each capture.
struct GraphPool {
  uint64_t id = 0;
  bool operator==(const GraphPool&) const = default;
};
// A new pool id to pass to several captures.
GraphPool graph_pool_handle();

class Graph {
 public:
  Graph();
  ~Graph();
  Graph(Graph&& other) noexcept;
  Graph& operator=(Graph&& other) noexcept;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Captures what fn enqueues on the current stream of the current device (or of each device in
  // `devices`), and on side streams that join it through events. Nothing runs during the capture:
  // the work runs on replay(). Ops that make the host wait for the GPU (item, to_vector, nonzero,
  // a pageable or blocking copy, synchronize, ...) throw DeviceError during a capture, which is
  // then ended and discarded; an exception out of fn discards it too. Random ops draw new numbers
  // on every replay (those the same calls would draw eagerly at the generator's offset then).
  void capture(const std::function<void()>& fn, GraphPool pool = {});
  void capture(const std::vector<int>& devices, const std::function<void()>& fn,
               GraphPool pool = {});
  // The same in two calls (torch's capture_begin / capture_end), from the same thread.
  void begin_capture(GraphPool pool = {});
  void begin_capture(const std::vector<int>& devices, GraphPool pool = {});
  // (So that begin_capture({0, 1}) names devices, not a pool.)
  void begin_capture(std::initializer_list<int> devices, GraphPool pool = {}) {
    begin_capture(std::vector<int>(devices), pool);
  }
  void end_capture();
  // Launches the captured work on the current stream of each captured device.
  void replay();
  // Frees the captured graph and gives its pool back (once no graph shares it); the graph can
  // capture again.
  void reset();

  bool is_captured() const;
  bool is_capturing() const;
  // The pool the capture allocated from (id 0 before a capture).
  GraphPool pool() const;
  // The devices captured, in capture order.
  std::vector<int> devices() const;
  // The number of operations (kernels, copies, ...) the captured graph holds on all devices.
  int64_t num_nodes() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// torch.cuda.make_graphed_callables for a function of tensors with fixed shapes: captures fn on
// copies of `sample_inputs` (the graph's static inputs; CUDA tensors of one device), after one
// eager warm-up call. Each call of the result copies its arguments (same shapes and dtypes, any
// device) into the static inputs, replays, and returns the static outputs: views that the next
// call overwrites (clone() what must be kept).
std::function<std::vector<Tensor>(const std::vector<Tensor>&)> graphed(
    const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& fn,
    const std::vector<Tensor>& sample_inputs);

}  // namespace tensorlet::cuda

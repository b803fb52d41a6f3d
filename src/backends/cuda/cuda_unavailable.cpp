// tl::cuda when tensorlet is built without its CUDA backend: the queries report no devices,
// memory statistics are zeros, and everything that needs a device throws DeviceError.
#include "tensorlet/backends/backend.h"
#include "tensorlet/backends/cuda/cuda.h"
#include "tensorlet/backends/cuda/graph.h"
#include "tensorlet/backends/matmul_precision.h"
#include "tensorlet/tensor/op_scope.h"
#include "tensorlet/tensor/error.h"

namespace tensorlet {

namespace cuda {
namespace {

[[noreturn]] void unavailable(const char* op) {
  fail<DeviceError>(op, "tensorlet was built without its CUDA backend");
}

}  // namespace

bool is_built() { return false; }
bool is_available() { return false; }
int device_count() { return 0; }

int current_device() { unavailable("tl::cuda::current_device"); }
void set_device(int) { unavailable("tl::cuda::set_device"); }
void synchronize(int) { unavailable("tl::cuda::synchronize"); }
bool can_access_peer(int, int) { unavailable("tl::cuda::can_access_peer"); }
DeviceProperties get_device_properties(int) { unavailable("tl::cuda::get_device_properties"); }
MemInfo mem_get_info(int) { unavailable("tl::cuda::mem_get_info"); }

DeviceGuard::DeviceGuard(int) { unavailable("tl::cuda::DeviceGuard"); }
DeviceGuard::~DeviceGuard() = default;

Stream Stream::current(int) { unavailable("tl::cuda::Stream::current"); }
Stream Stream::default_stream(int) { unavailable("tl::cuda::Stream::default_stream"); }
Stream Stream::create(int, int) { unavailable("tl::cuda::Stream::create"); }
Stream Stream::wrap(CUstream_st*, int) { unavailable("tl::cuda::Stream::wrap"); }
void Stream::synchronize() const { unavailable("tl::cuda::Stream::synchronize"); }
bool Stream::query() const { unavailable("tl::cuda::Stream::query"); }

// Stream::current throws before the guard exists, so the destructor never runs.
StreamGuard::StreamGuard(const Stream& stream)
    : previous_stream_(Stream::current(stream.device())), previous_device_(-1) {}
StreamGuard::~StreamGuard() = default;

// An Event is created lazily in every build, so constructing one works; as in a CUDA build
// without a recorded event, synchronize() returns at once and query() is true.
Event::Event(bool enable_timing) : enable_timing_(enable_timing) {}
Event::~Event() = default;
Event::Event(Event&& other) noexcept
    : event_(other.event_), device_(other.device_), enable_timing_(other.enable_timing_) {}
Event& Event::operator=(Event&& other) noexcept {
  event_ = other.event_;
  device_ = other.device_;
  enable_timing_ = other.enable_timing_;
  return *this;
}
void Event::record() { unavailable("tl::cuda::Event::record"); }
void Event::record(const Stream&) { unavailable("tl::cuda::Event::record"); }
void Event::wait() { unavailable("tl::cuda::Event::wait"); }
void Event::wait(const Stream&) { unavailable("tl::cuda::Event::wait"); }
void Event::synchronize() const {}
bool Event::query() const { return true; }
float Event::elapsed_time(const Event&) const { unavailable("tl::cuda::Event::elapsed_time"); }

MemoryStats memory_stats(int) { return {}; }
void reset_peak_stats(int) {}
void empty_cache() {}
void record_stream(const Tensor&, const Stream&) { unavailable("tl::cuda::record_stream"); }

// Graphs: nothing can be captured, so nothing is ever captured or replayed.
GraphPool graph_pool_handle() {
  static uint64_t next = 1;
  return GraphPool{next++};
}
struct Graph::Impl {};
Graph::Graph() = default;
Graph::~Graph() = default;
Graph::Graph(Graph&&) noexcept = default;
Graph& Graph::operator=(Graph&&) noexcept = default;
void Graph::capture(const std::function<void()>&, GraphPool) {
  unavailable("tl::cuda::Graph::capture");
}
void Graph::capture(const std::vector<int>&, const std::function<void()>&, GraphPool) {
  unavailable("tl::cuda::Graph::capture");
}
void Graph::begin_capture(GraphPool) { unavailable("tl::cuda::Graph::begin_capture"); }
void Graph::begin_capture(const std::vector<int>&, GraphPool) {
  unavailable("tl::cuda::Graph::begin_capture");
}
void Graph::end_capture() { unavailable("tl::cuda::Graph::end_capture"); }
void Graph::replay() { unavailable("tl::cuda::Graph::replay"); }
void Graph::reset() {}
bool Graph::is_captured() const { return false; }
bool Graph::is_capturing() const { return false; }
GraphPool Graph::pool() const { return {}; }
std::vector<int> Graph::devices() const { return {}; }
int64_t Graph::num_nodes() const { return 0; }

// Views of tl::set_float32_matmul_precision, as in the CUDA build: the setting exists (and is
// kept) without a GPU, so code that sets it runs unchanged.
void set_allow_tf32(bool allow) {
  set_matmul_precision(allow ? MatmulPrecision::High : MatmulPrecision::Highest);
}
bool allow_tf32() { return matmul_precision() != MatmulPrecision::Highest; }
bool cudnn_is_available() { return false; }
int cudnn_version() { return 0; }

}  // namespace cuda

}  // namespace tensorlet

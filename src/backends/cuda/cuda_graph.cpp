// tl::cuda::Graph (graph.h): stream capture per device into a graph pool of the caching
// allocator, instantiation, replay with fresh Philox blocks, and what the backend asks about
// captures in progress (cuda_capture.h): the pool to allocate from and ops that must not run.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <thread>

#include "tensorlet/backends/cuda/cuda_device_error.h"
#include "tensorlet/backends/cuda/cuda_capture.h"
#include "tensorlet/backends/cuda/cuda_graph_philox.h"
#include "tensorlet/backends/cuda/cuda_internal.h"
#include "tensorlet/backends/cuda/graph.h"
#include "tensorlet/tensor/error.h"
#include "tensorlet/tensor/op_scope.h"
#include "tensorlet/tensor/tensor.h"

namespace tensorlet::cuda {

namespace {

// One generator a capture draws from: the blocks its random ops used, counted from the base
// block each replay reserves.
struct PhiloxUse {
  Generator gen;
  uint64_t blocks = 0;
};

// What one device contributes to a graph.
struct DeviceCapture {
  int device = 0;
  cudaStream_t stream = nullptr;  // captured: the device's current stream at begin_capture
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  std::vector<PhiloxUse> philox;
  uint64_t* slots = nullptr;  // device memory: (seed, base block) per generator
  cudaGraphNode_t philox_node = nullptr;
  std::vector<cudaStream_t> replay_streams;  // where replays ran, to order reset() after them
};

std::atomic<uint64_t> g_next_pool{1};

}  // namespace

struct Graph::Impl {
  std::vector<DeviceCapture> captures;
  uint64_t pool = 0;
  bool capturing = false;
  bool captured = false;
  std::thread::id thread;
  std::string discarded_by;  // why the last capture was discarded, for end_capture's error
};

namespace {

// The calling thread's open captures, innermost last.
thread_local std::vector<Graph::Impl*> t_capturing;
// Scopes that allocate outside any capture pool (OutsideCapturePool).
thread_local int t_outside_pool = 0;

void forget_capture(Graph::Impl* g) {
  auto it = std::find(t_capturing.begin(), t_capturing.end(), g);
  if (it == t_capturing.end()) return;
  t_capturing.erase(it);
  t_open_captures -= static_cast<int>(g->captures.size());
}

// (The slots are freed with cudaFree, which waits for the device: a graph that draws random
// numbers is reset after its last replay ran.)
void destroy_device_capture(DeviceCapture& c) noexcept {
  OnDevice on_device(c.device);
  if (c.exec != nullptr && cudaGraphExecDestroy(c.exec) != cudaSuccess) (void)cudaGetLastError();
  if (c.graph != nullptr && cudaGraphDestroy(c.graph) != cudaSuccess) (void)cudaGetLastError();
  if (c.slots != nullptr) {
    RelaxedCaptureMode relaxed;
    if (cudaFree(c.slots) != cudaSuccess) (void)cudaGetLastError();
  }
  const int device = c.device;
  c = DeviceCapture();
  c.device = device;
}

// Ends the captures of g that are open and throws their graphs away; g's pool is released.
void discard_capture(Graph::Impl& g, const std::string& why) noexcept {
  forget_capture(&g);
  for (DeviceCapture& c : g.captures) {
    OnDevice on_device(c.device);
    cudaGraph_t graph = nullptr;
    // Ends the capture even when it was invalidated (graph stays null then).
    if (cudaStreamEndCapture(c.stream, &graph) != cudaSuccess) (void)cudaGetLastError();
    if (graph != nullptr && cudaGraphDestroy(graph) != cudaSuccess) (void)cudaGetLastError();
    destroy_device_capture(c);
    try {
      end_pool_capture(c.device);
      release_pool(c.device, g.pool);
    } catch (...) {
    }
  }
  g.captures.clear();
  g.capturing = false;
  g.captured = false;
  g.pool = 0;
  g.discarded_by = why;
}

// The innermost capture of the calling thread on `device` (null: none), and its graph.
DeviceCapture* capture_on(int device, Graph::Impl** owner = nullptr) {
  for (auto g = t_capturing.rbegin(); g != t_capturing.rend(); ++g)
    for (DeviceCapture& c : (*g)->captures)
      if (c.device == device) {
        if (owner != nullptr) *owner = *g;
        return &c;
      }
  return nullptr;
}

// The slot kernel's launch, with `args` = {&slots, &values}.
cudaKernelNodeParams philox_node_params(void** args) {
  cudaKernelNodeParams params{};
  params.func = const_cast<void*>(philox_slot_kernel());
  params.gridDim = dim3(1);
  params.blockDim = dim3(2 * kMaxGraphGenerators);
  params.kernelParams = args;
  return params;
}

// Adds the Philox slot kernel ahead of every root of a captured graph (before instantiation).
void add_philox_node(DeviceCapture& c, const char* op) {
  size_t roots = 0;
  TL_CUDA_CHECK_OP(op, cudaGraphGetRootNodes(c.graph, nullptr, &roots));
  std::vector<cudaGraphNode_t> root_nodes(roots);
  TL_CUDA_CHECK_OP(op, cudaGraphGetRootNodes(c.graph, root_nodes.data(), &roots));
  PhiloxSlotValues values{};
  values.n = static_cast<int>(c.philox.size());
  void* args[] = {&c.slots, &values};
  const cudaKernelNodeParams params = philox_node_params(args);
  TL_CUDA_CHECK_OP(op, cudaGraphAddKernelNode(&c.philox_node, c.graph, nullptr, 0, &params));
  const std::vector<cudaGraphNode_t> from(roots, c.philox_node);
  if (roots > 0)
    TL_CUDA_CHECK_OP(
        op, cudaGraphAddDependencies(c.graph, from.data(), root_nodes.data(), nullptr, roots));
}

// Reserves each generator's blocks for one replay and writes them into the slot kernel's node.
void set_philox_for_replay(DeviceCapture& c, const char* op) {
  PhiloxSlotValues values{};
  values.n = static_cast<int>(c.philox.size());
  for (size_t i = 0; i < c.philox.size(); ++i) {
    const PhiloxReservation r = c.philox[i].gen.reserve(c.philox[i].blocks);
    values.v[2 * i] = r.seed;
    values.v[2 * i + 1] = r.offset;
  }
  void* args[] = {&c.slots, &values};
  const cudaKernelNodeParams params = philox_node_params(args);
  TL_CUDA_CHECK_OP(op, cudaGraphExecKernelNodeSetParams(c.exec, c.philox_node, &params));
}

std::vector<int> resolve_devices(const std::vector<int>& devices, const char* op) {
  std::vector<int> out;
  if (devices.empty()) {
    out.push_back(resolve_device(-1, op));
    return out;
  }
  for (int d : devices) {
    const int r = resolve_device(d, op);
    if (std::find(out.begin(), out.end(), r) != out.end())
      fail<DeviceError>(op, "cuda:", r, " is listed twice");
    out.push_back(r);
  }
  return out;
}

}  // namespace

// ---- what the backend asks (cuda_capture.h) ----

bool capturing_on(int device) { return capture_on(device) != nullptr; }

uint64_t capture_pool(int device) {
  if (t_outside_pool != 0) return 0;
  Graph::Impl* g = nullptr;
  return capture_on(device, &g) != nullptr ? g->pool : 0;
}

OutsideCapturePool::OutsideCapturePool() { ++t_outside_pool; }
OutsideCapturePool::~OutsideCapturePool() { --t_outside_pool; }

void fail_if_capturing(const char* what, const char* op_name) {
  if (t_capturing.empty()) return;
  const char* op = op_name != nullptr ? op_name : current_op_name();
  std::string devices;
  for (Graph::Impl* g : t_capturing)
    for (const DeviceCapture& c : g->captures)
      devices += (devices.empty() ? "cuda:" : ", cuda:") + std::to_string(c.device);
  const std::string why = std::string("[") + op + "] ran during the capture";
  // Innermost first; discard_capture edits t_capturing.
  while (!t_capturing.empty()) discard_capture(*t_capturing.back(), why);
  fail<DeviceError>(op, "cannot run while a CUDA graph is being captured (", devices, "): it ",
                    what, "; the capture was ended and discarded");
}

bool stream_is_capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &status) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return status != cudaStreamCaptureStatusNone;
}

bool reserve_philox_in_capture(const Generator& gen, uint64_t blocks, int device,
                               RandomParams& params) {
  if (t_open_captures == 0) return false;
  DeviceCapture* c = capture_on(device);
  if (c == nullptr) return false;
  const char* op = current_op_name();
  auto it = std::find_if(c->philox.begin(), c->philox.end(),
                         [&](const PhiloxUse& u) { return u.gen.is_same(gen); });
  if (it == c->philox.end()) {
    if (c->philox.size() == static_cast<size_t>(kMaxGraphGenerators))
      fail<Error>(op, "a CUDA graph capture can draw from at most ", kMaxGraphGenerators,
                  " generators per device");
    if (c->slots == nullptr) {
      OnDevice on_device(device);
      RelaxedCaptureMode relaxed;
      void* p = nullptr;
      TL_CUDA_CHECK_OP(op, cudaMalloc(&p, sizeof(uint64_t) * 2 * kMaxGraphGenerators));
      c->slots = static_cast<uint64_t*>(p);
    }
    c->philox.push_back(PhiloxUse{gen, 0});
    it = c->philox.end() - 1;
  }
  params.seed = 0;
  params.offset = it->blocks;
  params.philox_base = c->slots + 2 * (it - c->philox.begin());
  it->blocks += blocks;
  return true;
}

// ---- Graph ----

GraphPool graph_pool_handle() { return GraphPool{g_next_pool.fetch_add(1)}; }

Graph::Graph() : impl_(std::make_unique<Impl>()) {}

Graph::~Graph() {
  if (!impl_) return;
  try {
    reset();
  } catch (...) {
  }
}

Graph::Graph(Graph&& other) noexcept = default;
Graph& Graph::operator=(Graph&& other) noexcept {
  if (this == &other) return *this;
  if (impl_) {
    try {
      reset();
    } catch (...) {
    }
  }
  impl_ = std::move(other.impl_);
  return *this;
}

void Graph::capture(const std::function<void()>& fn, GraphPool pool) { capture({}, fn, pool); }

void Graph::capture(const std::vector<int>& devices, const std::function<void()>& fn,
                    GraphPool pool) {
  begin_capture(devices, pool);
  try {
    fn();
  } catch (...) {
    // A capture the op already discarded (a host wait) is gone; any other failure ends it here.
    if (impl_->capturing) discard_capture(*impl_, "an exception left the captured function");
    throw;
  }
  end_capture();
}

void Graph::begin_capture(GraphPool pool) { begin_capture({}, pool); }

void Graph::begin_capture(const std::vector<int>& devices, GraphPool pool) {
  constexpr const char* op = "tl::cuda::Graph::begin_capture";
  if (!impl_) impl_ = std::make_unique<Impl>();
  Impl& g = *impl_;
  if (g.capturing) fail<Error>(op, "this graph is already capturing; call end_capture() first");
  if (g.captured)
    fail<Error>(op, "this graph already holds a captured graph; call reset() to capture again");
  const std::vector<int> devs = resolve_devices(devices, op);
  for (int d : devs) {
    const cudaStream_t s = current_stream_handle(d);
    if (s == nullptr || s == cudaStreamLegacy || s == cudaStreamPerThread)
      fail<DeviceError>(op, "cannot capture the legacy default stream of cuda:", d,
                        "; make a tl::cuda::Stream current (StreamGuard) or use the default one");
    OnDevice on_device(d);
    if (stream_is_capturing(s))
      fail<DeviceError>(op, "the current stream of cuda:", d, " is already being captured");
  }
  g.pool = pool.id != 0 ? pool.id : graph_pool_handle().id;
  g.thread = std::this_thread::get_id();
  g.discarded_by.clear();
  g.captures.clear();
  for (int d : devs) {
    DeviceCapture c;
    c.device = d;
    c.stream = current_stream_handle(d);
    retain_pool(d, g.pool);
    prepare_device_errors(d);  // kernels captured below may report: their slot must exist first
    OnDevice on_device(d);
    const cudaError_t err = cudaStreamBeginCapture(c.stream, cudaStreamCaptureModeThreadLocal);
    if (err != cudaSuccess) {
      release_pool(d, g.pool);
      discard_capture(g, "cudaStreamBeginCapture failed");  // the devices begun before this one
      check(err, op, "cudaStreamBeginCapture");
    }
    g.captures.push_back(c);
  }
  g.capturing = true;
  t_capturing.push_back(&g);
  t_open_captures += static_cast<int>(g.captures.size());
}

void Graph::end_capture() {
  constexpr const char* op = "tl::cuda::Graph::end_capture";
  if (!impl_ || !impl_->capturing) {
    if (impl_ && !impl_->discarded_by.empty())
      fail<Error>(op, "no capture in progress: it was discarded when ", impl_->discarded_by);
    fail<Error>(op, "no capture in progress; call begin_capture() first");
  }
  Impl& g = *impl_;
  if (g.thread != std::this_thread::get_id())
    fail<Error>(op, "a capture must end on the thread that began it");
  forget_capture(&g);
  g.capturing = false;
  std::string failure;
  for (DeviceCapture& c : g.captures) {
    OnDevice on_device(c.device);
    const cudaError_t err = cudaStreamEndCapture(c.stream, &c.graph);
    if (err != cudaSuccess && failure.empty()) {
      (void)cudaGetLastError();
      failure = std::string("cudaStreamEndCapture on cuda:") + std::to_string(c.device) + ": " +
                cudaGetErrorName(err) + ": " + cudaGetErrorString(err);
    }
    try {
      end_pool_capture(c.device);
    } catch (...) {
    }
  }
  if (failure.empty()) {
    try {
      for (DeviceCapture& c : g.captures) {
        OnDevice on_device(c.device);
        if (!c.philox.empty()) add_philox_node(c, op);
        TL_CUDA_CHECK_OP(op, cudaGraphInstantiate(&c.exec, c.graph, 0));
      }
    } catch (const Error& e) {
      failure = e.what();
    }
  }
  if (!failure.empty()) {
    for (DeviceCapture& c : g.captures) {
      destroy_device_capture(c);
      release_pool(c.device, g.pool);
    }
    g.captures.clear();
    g.pool = 0;
    fail<CudaError>(op,
                    "the capture could not be turned into a graph (an operation that cannot "
                    "be captured ran on the stream?): ",
                    failure);
  }
  g.captured = true;
}

void Graph::replay() {
  constexpr const char* op = "tl::cuda::Graph::replay";
  // The profiler's row for a replay: CUPTI tags the graph's kernels with the launch's
  // correlation id, so they land under it with their GPU time.
  profiler::OpScope scope("graph replay");
  if (!impl_ || !impl_->captured) fail<Error>(op, "nothing captured; call capture() first");
  for (DeviceCapture& c : impl_->captures) {
    OnDevice on_device(c.device);
    scope.on_device(Device::cuda(c.device));
    const cudaStream_t s = current_stream_handle(c.device);
    if (!c.philox.empty()) set_philox_for_replay(c, op);
    TL_CUDA_CHECK_OP(op, cudaGraphLaunch(c.exec, s));
    if (std::find(c.replay_streams.begin(), c.replay_streams.end(), s) == c.replay_streams.end())
      c.replay_streams.push_back(s);
  }
}

void Graph::reset() {
  constexpr const char* op = "tl::cuda::Graph::reset";
  if (!impl_) return;
  Impl& g = *impl_;
  if (g.capturing) {
    discard_capture(g, "reset() ran during the capture");
    return;
  }
  if (!g.captured) return;
  for (DeviceCapture& c : g.captures) {
    OnDevice on_device(c.device);
    // The pool's blocks go back to the capture stream's free lists: later work there must come
    // after the replays that ran on other streams.
    for (cudaStream_t s : c.replay_streams) {
      if (s == c.stream) continue;
      cudaEvent_t e = nullptr;
      TL_CUDA_CHECK_OP(op, cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
      const cudaError_t rec = cudaEventRecord(e, s);
      const cudaError_t wait = rec == cudaSuccess ? cudaStreamWaitEvent(c.stream, e, 0) : rec;
      (void)cudaEventDestroy(e);
      TL_CUDA_CHECK_OP(op, wait);
    }
    destroy_device_capture(c);
    release_pool(c.device, g.pool);
  }
  g.captures.clear();
  g.captured = false;
  g.pool = 0;
}

bool Graph::is_captured() const { return impl_ && impl_->captured; }
bool Graph::is_capturing() const { return impl_ && impl_->capturing; }
GraphPool Graph::pool() const { return GraphPool{impl_ ? impl_->pool : 0}; }

std::vector<int> Graph::devices() const {
  std::vector<int> out;
  if (impl_)
    for (const DeviceCapture& c : impl_->captures) out.push_back(c.device);
  return out;
}

int64_t Graph::num_nodes() const {
  int64_t total = 0;
  if (!impl_ || !impl_->captured) return 0;
  for (const DeviceCapture& c : impl_->captures) {
    size_t n = 0;
    TL_CUDA_CHECK_OP("tl::cuda::Graph::num_nodes", cudaGraphGetNodes(c.graph, nullptr, &n));
    total += static_cast<int64_t>(n) - (c.philox_node != nullptr ? 1 : 0);
  }
  return total;
}

}  // namespace tensorlet::cuda

// CUDA benchmark: docs/DESIGN.md rows G1-G6, the reduced-precision rows H1-H3 and the TF32 row
// (issue 12), O1's softmax, O2's sorts, O3's topk, O4's cumsum and O5's scatter_add / index_add
// (issue 14), G7/G8's CUDA graphs (issue 16), A3's unary backward kernels (issue 32), each against
// a raw floor measured in the same run.
//   usage: bench_cuda [G1 G3 H1 TF32 O2 ...]   (default: every row)
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <strings.h>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <tensorlet/tensorlet.h>

#include "bench_util.h"
#include "models.h"

#include "tensorlet/backends/cuda/cuda_internal.h"
#include "raw_kernels.h"

namespace tl = tensorlet;

namespace {

void ck(cudaError_t err, const char* what) {
  if (err != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(err) + ": " +
                             cudaGetErrorString(err));
}
void ck(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + ": cuBLAS status " + std::to_string(status));
}
#define CK(call) ck((call), #call)

using Clock = std::chrono::steady_clock;
// Runs one repetition of a workload and returns the seconds it measured.
using Workload = std::function<double()>;

// tensorlet's current stream of cuda:0: its ops and the raw floors all run here.
cudaStream_t g_stream = nullptr;
// Keeps results alive so the compiler cannot drop the work that made them.
volatile int64_t g_sink = 0;

using tl_bench::interleaved_medians;

// Host clock with the stream idle at both ends: what the caller waits for, launches included.
Workload host_synced(std::function<void()> body) {
  return [body = std::move(body)] {
    CK(cudaStreamSynchronize(g_stream));
    auto start = Clock::now();
    body();
    CK(cudaStreamSynchronize(g_stream));
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
}

// Host clock, no synchronization: for host-side costs (allocation) that enqueue nothing.
Workload host_only(std::function<void()> body) {
  return [body = std::move(body)] {
    auto start = Clock::now();
    body();
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
}

// The GPU's clock: events recorded on the stream around the body.
Workload events(std::function<void()> body) {
  return [body = std::move(body)] {
    static cudaEvent_t start = nullptr, stop = nullptr;
    if (!start) {
      CK(cudaEventCreate(&start));
      CK(cudaEventCreate(&stop));
    }
    CK(cudaEventRecord(start, g_stream));
    body();
    CK(cudaEventRecord(stop, g_stream));
    CK(cudaEventSynchronize(stop));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, start, stop));
    return ms * 1e-3;
  };
}

using tl_bench::fmt;
using tl_bench::row;

// ---- G7, G8: CUDA graphs (issue 16) -------------------------------------------------------------

void bench_graphs() {
  constexpr int kOps = 20000;
  const tl::Device gpu = tl::Device::cuda(0);
  tl::Tensor a10 = tl::rand({10, 10}, gpu), b10 = tl::rand({10, 10}, gpu);
  // The floor: a raw CUDA graph of kOps empty kernels, captured on the same stream.
  cudaGraph_t raw_graph = nullptr;
  cudaGraphExec_t raw_exec = nullptr;
  CK(cudaStreamBeginCapture(g_stream, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < kOps; ++i) bench::launch_empty(g_stream);
  CK(cudaStreamEndCapture(g_stream, &raw_graph));
  CK(cudaGraphInstantiate(&raw_exec, raw_graph, 0));
  tl::cuda::Graph adds, loop;
  adds.capture([&] {
    for (int i = 0; i < kOps; ++i) (void)tl::add(a10, b10);
  });
  // Seed 000's loop: a fresh 10x10 uniform and its square, kOps times.
  const auto body = [] {
    for (int i = 0; i < kOps; ++i) {
      tl::Tensor x = tl::rand({10, 10}, tl::Device::cuda(0));
      g_sink = g_sink + (x * x).numel();
    }
  };
  body();
  loop.capture(body);
  auto t = interleaved_medians(7, 2,
                               {host_synced([&] { CK(cudaGraphLaunch(raw_exec, g_stream)); }),
                                host_synced([&] { adds.replay(); }), host_synced(body),
                                host_synced([&] { loop.replay(); })});
  const double floor_us = t[0] / kOps * 1e6, add_us = t[1] / kOps * 1e6;
  row("G7", "10x10 add, 20 000 in a graph, per op", fmt("%.3f us", add_us),
      fmt("raw graph, empty kernels %.3f us", floor_us), add_us / floor_us, "<= 1.2 us",
      add_us <= 1.2);
  row("G8", "20 000 x (rand(10,10), x*x), graph", fmt("%.2f ms", t[3] * 1e3),
      fmt("eager %.2f ms", t[2] * 1e3), t[2] / t[3], ">= 4x", t[2] / t[3] >= 4.0);
  CK(cudaGraphExecDestroy(raw_exec));
  CK(cudaGraphDestroy(raw_graph));
}

// ---- G1, G2: per-op host cost of tiny ops vs an empty kernel launch ---------------------------

void bench_launch_bound(bool g1, bool g2) {
  constexpr int kOps = 20000;
  const tl::Device gpu = tl::Device::cuda(0);
  tl::Tensor a10 = tl::rand({10, 10}, gpu), b10 = tl::rand({10, 10}, gpu);
  tl::Tensor a3 = tl::rand({3, 3}, gpu), b3 = tl::rand({3, 3}, gpu);
  auto ops = [](std::function<tl::Tensor()> op) {
    return host_synced([op = std::move(op)] {
      for (int i = 0; i < kOps; ++i) g_sink = g_sink + op().numel();
    });
  };
  std::vector<Workload> work{host_synced([] {
    for (int i = 0; i < kOps; ++i) bench::launch_empty(g_stream);
    CK(cudaGetLastError());
  })};
  if (g1) work.push_back(ops([&] { return tl::add(a10, b10); }));
  if (g2) {
    work.push_back(ops([&] { return tl::matmul(a3, b3); }));
    work.push_back(ops([&] { return tl::matmul(a10, b10); }));
  }
  // Diagnostics: a raw add kernel of the same 100 elements (the launch of a real kernel, not an
  // empty one), and the in-place form (no output allocation).
  tl::Tensor raw_out = tl::empty({10, 10}, gpu);
  if (g1) {
    work.push_back(host_synced([&] {
      for (int i = 0; i < kOps; ++i)
        bench::launch_add(a10.data<float>(), b10.data<float>(), raw_out.data<float>(), 100,
                          g_stream);
      CK(cudaGetLastError());
    }));
    work.push_back(host_synced([&] {
      for (int i = 0; i < kOps; ++i) raw_out.add_(b10);
    }));
  }
  auto t = interleaved_medians(7, 2, work);
  const double floor_us = t[0] / kOps * 1e6;
  const std::string floor = fmt("empty kernel %.2f us", floor_us);
  size_t i = 1;
  if (g1) {
    const double us = t[i++] / kOps * 1e6;
    row("G1", "10x10 add, 20 000 in a row, per op", fmt("%.2f us", us), floor, us / floor_us,
        "<= 1.15x", us / floor_us <= 1.15);
  }
  if (g2)
    for (const char* what : {"3x3 matmul, per op", "10x10 matmul, per op"}) {
      const double us = t[i++] / kOps * 1e6;
      row("G2", what, fmt("%.2f us", us), floor, us / floor_us, "<= 1.3x", us / floor_us <= 1.3);
    }
  if (g1) {
    const double raw_add = t[i++] / kOps * 1e6, inplace = t[i++] / kOps * 1e6;
    std::printf(
        "    for reference: raw 100-element add kernel %.2f us per launch (%.2fx empty); "
        "tl add_ in place %.2f us\n",
        raw_add, raw_add / floor_us, inplace);
    // Host-side enqueue cost alone: 500 launches fit in the launch queue, so the host never
    // waits for the GPU while enqueuing them.
    auto enqueue_us = [&](const std::function<void()>& op) {
      std::vector<double> v;
      for (int r = 0; r < 9; ++r) {
        CK(cudaStreamSynchronize(g_stream));
        auto start = Clock::now();
        for (int k = 0; k < 500; ++k) op();
        v.push_back(std::chrono::duration<double>(Clock::now() - start).count() / 500 * 1e6);
      }
      CK(cudaStreamSynchronize(g_stream));
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    const double e_empty = enqueue_us([] { bench::launch_empty(g_stream); });
    const double e_raw = enqueue_us([&] {
      bench::launch_add(a10.data<float>(), b10.data<float>(), raw_out.data<float>(), 100, g_stream);
    });
    const double e_add = enqueue_us([&] { g_sink = g_sink + tl::add(a10, b10).numel(); });
    const double e_mm = enqueue_us([&] { g_sink = g_sink + tl::matmul(a3, b3).numel(); });
    int dev = 0;
    const double e_getdev = enqueue_us([&] { CK(cudaGetDevice(&dev)); });
    const double e_lasterr = enqueue_us([&] { CK(cudaGetLastError()); });
    tl::Tensor ca = tl::rand({10, 10}), cb = tl::rand({10, 10});
    const double e_cpu_add = enqueue_us([&] { g_sink = g_sink + tl::add(ca, cb).numel(); });
    const double e_cpu_addi = enqueue_us([&] { ca.add_(cb); });
    const double e_empty_t = enqueue_us([&] {
      g_sink = g_sink + tl::empty({10, 10}, gpu).numel();
    });
    std::printf(
        "    host costs: cudaGetDevice %.3f us, cudaGetLastError %.3f us, CPU tl::add 10x10 "
        "%.3f us, CPU add_ %.3f us, tl::empty 10x10 cuda %.3f us\n",
        e_getdev, e_lasterr, e_cpu_add, e_cpu_addi, e_empty_t);
    std::printf(
        "    host enqueue time per op (500 in a row, no waiting on the GPU): empty kernel "
        "%.2f us, raw add %.2f us, tl::add %.2f us, tl::matmul 3x3 %.2f us\n",
        e_empty, e_raw, e_add, e_mm);
  }
}

// ---- G3: matmul throughput vs raw cublasSgemm on the same buffers -----------------------------

void bench_gemm() {
  cublasHandle_t handle = nullptr;
  CK(cublasCreate(&handle));
  CK(cublasSetStream(handle, g_stream));
  CK(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));  // plain float32, as tensorlet's default
  const tl::Device gpu = tl::Device::cuda(0);
  for (int64_t n : {int64_t{100}, int64_t{10000}}) {
    const int calls = n <= 1000 ? 1000 : 3;
    tl::Tensor a = tl::rand({n, n}, gpu), b = tl::rand({n, n}, gpu), c = tl::empty({n, n}, gpu);
    const float* pa = a.data<float>();
    const float* pb = b.data<float>();
    float* pc = c.data<float>();
    const int in = static_cast<int>(n);
    auto ours = events([&, calls] {
      for (int i = 0; i < calls; ++i) g_sink = g_sink + tl::matmul(a, b).numel();
    });
    // Row-major C = A B is column-major C^T = B^T A^T: the same buffers, operands swapped.
    auto raw = events([&, calls] {
      const float one = 1, zero = 0;
      for (int i = 0; i < calls; ++i)
        CK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, in, in, in, &one, pb, in, pa, in, &zero,
                       pc, in));
    });
    auto t = interleaved_medians(n <= 1000 ? 9 : 5, 2, {raw, ours});
    const double flop = 2.0 * n * n * n * calls;
    const double tf_ours = flop / t[1] / 1e12, tf_raw = flop / t[0] / 1e12;
    const std::string what = fmt("%.0f^2 float32 matmul", static_cast<double>(n));
    row("G3", what, fmt("%.2f TFLOP/s", tf_ours), fmt("cublasSgemm %.2f TFLOP/s", tf_raw),
        tf_ours / tf_raw, ">= 0.97x", tf_ours / tf_raw >= 0.97);
    std::printf("    %s: %.1f us per call ours, %.1f us cuBLAS\n", what.c_str(), t[1] / calls * 1e6,
                t[0] / calls * 1e6);
  }
  CK(cublasDestroy(handle));
}

// ---- G4: elementwise bandwidth vs a device-to-device copy -------------------------------------

// Returns the copy bandwidth in bytes per second, for G6's floor.
double bench_elementwise(bool report) {
  constexpr int kIters = 5;
  const tl::Device gpu = tl::Device::cuda(0);
  tl::Tensor a = tl::rand({512, 512, 512}, gpu), b = tl::rand({512, 512, 512}, gpu);
  tl::Tensor dst = tl::empty({512, 512, 512}, gpu);
  const int64_t n = a.numel();
  const double tensor_bytes = 4.0 * n;
  auto iters = [](std::function<void()> op) {
    return events([op = std::move(op)] {
      for (int i = 0; i < kIters; ++i) op();
    });
  };
  struct Op {
    const char* name;
    int tensors_moved;  // read + written, each 512^3 float32
    Workload work;
  };
  std::vector<Op> list{
      {"D2D cudaMemcpyAsync", 2, iters([&] {
         CK(cudaMemcpyAsync(dst.data<float>(), a.data<float>(), a.nbytes(),
                            cudaMemcpyDeviceToDevice, g_stream));
       })},
      {"raw float4 add kernel", 3, iters([&] {
         bench::launch_add(a.data<float>(), b.data<float>(), dst.data<float>(), n, g_stream);
         CK(cudaGetLastError());
       })},
      {"a * b", 3, iters([&] { g_sink = g_sink + (a * b).numel(); })},
      {"a + b", 3, iters([&] { g_sink = g_sink + (a + b).numel(); })},
      {"sin(a)", 2, iters([&] { g_sink = g_sink + tl::sin(a).numel(); })},
      {"cos(a)", 2, iters([&] { g_sink = g_sink + tl::cos(a).numel(); })},
  };
  if (!report) list.resize(1);  // G6 alone needs only the copy bandwidth
  std::vector<Workload> work;
  for (const Op& op : list) work.push_back(op.work);
  auto t = interleaved_medians(7, 2, work);
  std::vector<double> gbs;
  for (size_t i = 0; i < list.size(); ++i)
    gbs.push_back(list[i].tensors_moved * tensor_bytes * kIters / t[i] / 1e9);
  if (report) {
    const std::string floor = fmt("D2D copy %.0f GB/s", gbs[0]);
    for (size_t i = 2; i < list.size(); ++i)
      row("G4", std::string(list[i].name) + " on 512^3 float32", fmt("%.0f GB/s", gbs[i]), floor,
          gbs[i] / gbs[0], ">= 0.97x", gbs[i] / gbs[0] >= 0.97);
    std::printf("    for reference: raw float4 add kernel %.0f GB/s (%.2fx copy)\n", gbs[1],
                gbs[1] / gbs[0]);
  }
  return gbs[0] * 1e9;
}

// ---- G9: seed 002's loop, a * b, a + b, sin(a), cos(b) on randn 512^3, 10 times ---------------

// The notebook's workload as examples/timing_methods runs it (fresh outputs each time), timed
// with events; the floor is its bytes (10 tensors of 512 MiB read or written per iteration) at
// the copy rate. torch_reference.py times the same loop in PyTorch (target: >= 1.0x).
void bench_seed_loop() {
  constexpr int kRepeat = 10;
  const tl::Device gpu = tl::Device::cuda(0);
  tl::Tensor a = tl::randn({512, 512, 512}, gpu), b = tl::randn({512, 512, 512}, gpu);
  tl::Tensor dst = tl::empty({512, 512, 512}, gpu);
  const double tensor_bytes = 4.0 * a.numel();
  auto t =
      interleaved_medians(7, 2,
                          {events([&] {
                             for (int i = 0; i < kRepeat; ++i)
                               CK(cudaMemcpyAsync(dst.data<float>(), a.data<float>(), a.nbytes(),
                                                  cudaMemcpyDeviceToDevice, g_stream));
                           }),
                           events([&] {
                             for (int i = 0; i < kRepeat; ++i) {
                               tl::Tensor c = a * b;
                               tl::Tensor d = a + b;
                               tl::Tensor e = tl::sin(a);
                               tl::Tensor f = tl::cos(b);
                             }
                           })});
  const double copy_bps = 2 * tensor_bytes * kRepeat / t[0];
  const double floor_s = 10 * tensor_bytes * kRepeat / copy_bps;
  row("G9", "seed 002 loop x10 (a*b a+b sin cos)", fmt("%.2f ms", t[1] * 1e3),
      fmt("its bytes at copy rate %.2f ms", floor_s * 1e3), floor_s / t[1], ">= 0.9x",
      floor_s / t[1] >= 0.9);
}

// ---- G5: cached allocate + free vs cudaMalloc + cudaFree -------------------------------------

void bench_alloc() {
  constexpr int kPairs = 100000, kRawPairs = 1000;
  constexpr size_t kBytes = size_t{1} << 20;
  constexpr int64_t kFloats = kBytes / sizeof(float);
  const tl::TensorOptions opts = tl::TensorOptions(tl::kFloat32).device(tl::Device::cuda(0));
  tl::Allocator& alloc = tl::cuda::device_allocator(0);
  auto t = interleaved_medians(7, 2,
                               {host_only([] {
                                  for (int i = 0; i < kRawPairs; ++i) {
                                    void* p = nullptr;
                                    CK(cudaMalloc(&p, kBytes));
                                    CK(cudaFree(p));
                                  }
                                }),
                                host_only([&] {
                                  for (int i = 0; i < kPairs; ++i)
                                    g_sink = g_sink + tl::empty({kFloats}, opts).numel();
                                }),
                                host_only([&] {
                                  for (int i = 0; i < kPairs; ++i) {
                                    void* p = alloc.allocate(kBytes);
                                    alloc.deallocate(p, kBytes);
                                  }
                                })});
  const double raw_us = t[0] / kRawPairs * 1e6;
  const std::string floor = fmt("cudaMalloc+cudaFree %.2f us", raw_us);
  const double empty_us = t[1] / kPairs * 1e6, alloc_us = t[2] / kPairs * 1e6;
  row("G5", "tl::empty 1 MiB + free, cached", fmt("%.3f us", empty_us), floor, empty_us / raw_us,
      "<= 0.3 us", empty_us <= 0.3);
  row("G5", "caching allocator alone, 1 MiB", fmt("%.3f us", alloc_us), floor, alloc_us / raw_us,
      "<= 0.3 us", alloc_us <= 0.3);
}

// ---- G6: (mask > t).nonzero() on 500^3 --------------------------------------------------------

void bench_nonzero(double copy_bytes_per_s) {
  tl::Tensor mask = tl::rand({500, 500, 500}, tl::Device::cuda(0));
  int64_t count = 0;
  auto t =
      interleaved_medians(7, 2, {host_synced([&] { count = (mask > 0.5).nonzero().size(0); })});
  // The least memory traffic the op needs: read the floats, write and read the bool mask, write
  // the [count, 3] int64 indices; at copy bandwidth that is the floor.
  const double n = static_cast<double>(mask.numel());
  const double bytes = 4 * n + 2 * n + 24.0 * count;
  const double ms = t[0] * 1e3;
  // Without a copy bandwidth (G4 failed) there is no floor; the target is absolute anyway.
  const double floor_ms = copy_bytes_per_s > 0 ? bytes / copy_bytes_per_s * 1e3 : 0;
  row("G6", "(mask > 0.5).nonzero() on 500^3", fmt("%.3f ms", ms),
      fmt("its bytes at copy speed %.3f ms", floor_ms), floor_ms > 0 ? ms / floor_ms : 0, "<= 1 ms",
      ms <= 1.0);
  std::printf("    %lld of %.0f elements pass (%.1f%%); the output is %.0f MB of int64\n",
              static_cast<long long>(count), n, 100.0 * count / n, 24.0 * count / 1e6);
}

// ---- H1: float16/bfloat16 matmul vs raw cublasGemmEx on the same buffers ---------------------

// A GPU tensor of `dtype` with uniform [0, 1) values, made in float32 and converted, so it needs
// no random kernel of the dtype itself.
tl::Tensor rand_of(const tl::Shape& shape, tl::DType dtype) {
  return tl::rand(shape, tl::Device::cuda(0)).to(dtype);
}

void bench_half_gemm() {
  cublasHandle_t handle = nullptr;
  CK(cublasCreate(&handle));
  CK(cublasSetStream(handle, g_stream));
  CK(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));
  constexpr int64_t n = 8192;
  constexpr int calls = 10;
  struct Kind {
    tl::DType dtype;
    cudaDataType type;
    const char* name;
  };
  for (const Kind& k :
       {Kind{tl::kFloat16, CUDA_R_16F, "float16"}, Kind{tl::kBFloat16, CUDA_R_16BF, "bfloat16"}}) {
    tl::Tensor a = rand_of({n, n}, k.dtype), b = rand_of({n, n}, k.dtype);
    tl::Tensor c = tl::empty({n, n}, tl::TensorOptions(k.dtype).device(tl::Device::cuda(0)));
    const int in = static_cast<int>(n);
    auto ours = events([&] {
      for (int i = 0; i < calls; ++i) g_sink = g_sink + tl::matmul(a, b).numel();
    });
    // As G3: row-major C = A B is column-major C^T = B^T A^T; float accumulation, as ours.
    auto raw = events([&] {
      const float one = 1, zero = 0;
      for (int i = 0; i < calls; ++i)
        CK(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, in, in, in, &one, b.data_ptr(), k.type,
                        in, a.data_ptr(), k.type, in, &zero, c.data_ptr(), k.type, in,
                        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    });
    auto t = interleaved_medians(7, 2, {raw, ours});
    const double flop = 2.0 * n * n * n * calls;
    const double tf_ours = flop / t[1] / 1e12, tf_raw = flop / t[0] / 1e12;
    row("H1", std::string("8192^2 ") + k.name + " matmul", fmt("%.1f TFLOP/s", tf_ours),
        fmt("cublasGemmEx %.1f TFLOP/s", tf_raw), tf_ours / tf_raw, ">= 0.97x",
        tf_ours / tf_raw >= 0.97);
  }
  CK(cublasDestroy(handle));
}

// ---- TF32: 10000^2 float32 matmul with precision "high" vs cublasSgemm in TF32 mode -----------

void bench_tf32_gemm() {
  cublasHandle_t handle = nullptr;
  CK(cublasCreate(&handle));
  CK(cublasSetStream(handle, g_stream));
  CK(cublasSetMathMode(handle, CUBLAS_TF32_TENSOR_OP_MATH));
  constexpr int64_t n = 10000;
  constexpr int calls = 5;
  const tl::Device gpu = tl::Device::cuda(0);
  tl::Tensor a = tl::rand({n, n}, gpu), b = tl::rand({n, n}, gpu), c = tl::empty({n, n}, gpu);
  const int in = static_cast<int>(n);
  const std::string previous = tl::get_float32_matmul_precision();
  tl::set_float32_matmul_precision("high");
  auto ours = events([&] {
    for (int i = 0; i < calls; ++i) g_sink = g_sink + tl::matmul(a, b).numel();
  });
  auto raw = events([&] {
    const float one = 1, zero = 0;
    for (int i = 0; i < calls; ++i)
      CK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, in, in, in, &one, b.data<float>(), in,
                     a.data<float>(), in, &zero, c.data<float>(), in));
  });
  std::vector<double> t;
  try {
    t = interleaved_medians(5, 2, {raw, ours});
  } catch (...) {
    tl::set_float32_matmul_precision(previous);
    throw;
  }
  tl::set_float32_matmul_precision(previous);
  const double flop = 2.0 * n * n * n * calls;
  const double tf_ours = flop / t[1] / 1e12, tf_raw = flop / t[0] / 1e12;
  row("TF32", "10000^2 float32 matmul, \"high\"", fmt("%.1f TFLOP/s", tf_ours),
      fmt("cublasSgemm TF32 %.1f TFLOP/s", tf_raw), tf_ours / tf_raw, ">= 0.97x",
      tf_ours / tf_raw >= 0.97);
  CK(cublasDestroy(handle));
}

// ---- H2, H3: bfloat16 elementwise and float16 sum vs the device-to-device copy rate -----------

void bench_half_bandwidth(bool h2, bool h3) {
  constexpr int kIters = 5;
  auto iters = [](std::function<void()> op) {
    return events([op = std::move(op)] {
      for (int i = 0; i < kIters; ++i) op();
    });
  };
  if (h2) {
    tl::Tensor a = rand_of({512, 512, 512}, tl::kBFloat16);
    tl::Tensor b = rand_of({512, 512, 512}, tl::kBFloat16);
    tl::Tensor dst = tl::empty_like(a);
    const double tensor_bytes = 2.0 * a.numel();
    auto t = interleaved_medians(7, 2,
                                 {iters([&] {
                                    CK(cudaMemcpyAsync(dst.data_ptr(), a.data_ptr(), a.nbytes(),
                                                       cudaMemcpyDeviceToDevice, g_stream));
                                  }),
                                  iters([&] { g_sink = g_sink + (a * b).numel(); }),
                                  iters([&] { g_sink = g_sink + (a + b).numel(); })});
    const double copy = 2 * tensor_bytes * kIters / t[0] / 1e9;
    const std::string floor = fmt("D2D copy %.0f GB/s", copy);
    const char* names[] = {"a * b on 512^3 bfloat16", "a + b on 512^3 bfloat16"};
    for (int i = 0; i < 2; ++i) {
      const double gbs = 3 * tensor_bytes * kIters / t[i + 1] / 1e9;
      row("H2", names[i], fmt("%.0f GB/s", gbs), floor, gbs / copy, ">= 0.9x", gbs / copy >= 0.9);
    }
  }
  if (h3) {
    constexpr int64_t n = int64_t{64} << 20;
    tl::Tensor x = rand_of({n}, tl::kFloat16);
    tl::Tensor dst = tl::empty_like(x);
    const double bytes = 2.0 * n;
    auto t = interleaved_medians(7, 2,
                                 {iters([&] {
                                    CK(cudaMemcpyAsync(dst.data_ptr(), x.data_ptr(), x.nbytes(),
                                                       cudaMemcpyDeviceToDevice, g_stream));
                                  }),
                                  iters([&] { g_sink = g_sink + tl::sum(x).numel(); })});
    const double copy = 2 * bytes * kIters / t[0] / 1e9;
    // A sum reads its input once and writes 2 bytes.
    const double gbs = bytes * kIters / t[1] / 1e9;
    row("H3", "sum of 64M float16", fmt("%.0f GB/s", gbs), fmt("D2D copy %.0f GB/s", copy),
        gbs / copy, ">= 0.85x", gbs / copy >= 0.85);
    std::printf("    sum of 64M float16: %.1f us per call\n", t[1] / kIters * 1e6);
  }
}

// ---- O1: softmax along the last dim vs the device-to-device copy rate ------------------------

void bench_softmax() {
  constexpr int kIters = 5;
  auto iters = [](std::function<void()> op) {
    return events([op = std::move(op)] {
      for (int i = 0; i < kIters; ++i) op();
    });
  };
  // Many rows (one block each) and few long rows (split over clusters of blocks); softmax and
  // log_softmax.
  for (const bool log : {false, true}) {
    for (const tl::Shape& shape : {tl::Shape{4096, 4096}, tl::Shape{64, 128256}}) {
      tl::Tensor x = rand_of(shape, tl::kFloat32);
      tl::Tensor dst = tl::empty_like(x);
      const double bytes = 4.0 * x.numel();
      auto op = [&] { return log ? tl::log_softmax(x, -1) : tl::softmax(x, -1); };
      auto t = interleaved_medians(7, 2,
                                   {iters([&] {
                                      CK(cudaMemcpyAsync(dst.data_ptr(), x.data_ptr(), x.nbytes(),
                                                         cudaMemcpyDeviceToDevice, g_stream));
                                    }),
                                    iters([&] { g_sink = g_sink + op().numel(); })});
      const double copy = 2 * bytes * kIters / t[0] / 1e9;
      const double gbs = 2 * bytes * kIters / t[1] / 1e9;  // reads x once, writes the result
      const std::string name = std::string(log ? "log_softmax" : "softmax") + "(-1) of ";
      // Few long rows (one row split over several SMs) have their own target (issue 30).
      const bool long_rows = shape[1] > 65536;
      const double target = long_rows ? 0.85 : 0.9;
      row("O1", name + shape.str() + " float32", fmt("%.0f GB/s", gbs),
          fmt("D2D copy %.0f GB/s", copy), gbs / copy, long_rows ? ">= 0.85x" : ">= 0.9x",
          gbs / copy >= target);
      std::printf("    %s%s: %.1f us per call\n", name.c_str(), shape.str().c_str(),
                  t[1] / kIters * 1e6);
    }
  }
}

// ---- O2: sort vs CUB's radix sorts; O3: topk vs one read of its input -------------------------

void bench_ordering(bool o2, bool o3) {
  constexpr int kIters = 5;
  auto iters = [](std::function<void()> op) {
    return events([op = std::move(op)] {
      for (int i = 0; i < kIters; ++i) op();
    });
  };
  const tl::TensorOptions on_gpu = tl::TensorOptions(tl::kInt64).device(tl::Device::cuda(0));
  if (o2) {
    // 16M keys in one row: tensorlet's values and int64 indices vs CUB sorting (float key, int64
    // value) pairs into buffers allocated beforehand.
    constexpr int64_t n = int64_t{1} << 24;
    tl::Tensor x = rand_of({n}, tl::kFloat32);
    tl::Tensor keys_out = tl::empty_like(x);
    tl::Tensor pos = tl::arange(n, on_gpu);
    tl::Tensor pos_out = tl::empty_like(pos);
    size_t bytes = 0;
    CK(bench::sort_pairs(nullptr, bytes, x.data<float>(), keys_out.data<float>(),
                         pos.data<int64_t>(), pos_out.data<int64_t>(), n, g_stream));
    tl::Tensor temp = tl::empty({static_cast<int64_t>(bytes)}, on_gpu.dtype(tl::kUInt8));
    auto t = interleaved_medians(
        7, 2,
        {iters([&] {
           CK(bench::sort_pairs(temp.data_ptr(), bytes, x.data<float>(), keys_out.data<float>(),
                                pos.data<int64_t>(), pos_out.data<int64_t>(), n, g_stream));
         }),
         iters([&] { g_sink = g_sink + tl::sort(x).values.numel(); })});
    const double raw_us = t[0] / kIters * 1e6, us = t[1] / kIters * 1e6;
    row("O2", "sort of 16M float32", fmt("%.1f us", us), fmt("cub SortPairs %.1f us", raw_us),
        us / raw_us, "<= 1.5x", us / raw_us <= 1.5);
    // [4096, 4096] along the last dim vs CUB's segmented radix sort.
    constexpr int64_t rows = 4096, cols = 4096;
    tl::Tensor m = rand_of({rows, cols}, tl::kFloat32);
    tl::Tensor m_out = tl::empty_like(m);
    tl::Tensor offsets = (tl::arange(rows + 1, on_gpu) * cols).to(tl::kInt32);
    tl::Tensor seg_pos = tl::remainder(tl::arange(rows * cols, on_gpu), cols);
    tl::Tensor seg_pos_out = tl::empty_like(seg_pos);
    size_t seg_bytes = 0;
    CK(bench::segmented_sort_pairs(nullptr, seg_bytes, m.data<float>(), m_out.data<float>(),
                                   seg_pos.data<int64_t>(), seg_pos_out.data<int64_t>(),
                                   rows * cols, rows, offsets.data<int32_t>(), g_stream));
    tl::Tensor seg_temp = tl::empty({static_cast<int64_t>(seg_bytes)}, on_gpu.dtype(tl::kUInt8));
    auto ts = interleaved_medians(
        7, 2,
        {iters([&] {
           CK(bench::segmented_sort_pairs(seg_temp.data_ptr(), seg_bytes, m.data<float>(),
                                          m_out.data<float>(), seg_pos.data<int64_t>(),
                                          seg_pos_out.data<int64_t>(), rows * cols, rows,
                                          offsets.data<int32_t>(), g_stream));
         }),
         iters([&] { g_sink = g_sink + tl::sort(m, -1).values.numel(); })});
    const double seg_raw_us = ts[0] / kIters * 1e6, seg_us = ts[1] / kIters * 1e6;
    row("O2", "sort(-1) of [4096, 4096] float32", fmt("%.1f us", seg_us),
        fmt("cub segmented %.1f us", seg_raw_us), seg_us / seg_raw_us, "<= 1.5x",
        seg_us / seg_raw_us <= 1.5);
  }
  if (o3) {
    // topk must read its input at least once: the floor is that read at the D2D copy rate (half
    // of a copy's time, which reads and writes).
    tl::Tensor x = rand_of({1024, 32768}, tl::kFloat32);
    tl::Tensor dst = tl::empty_like(x);
    auto t =
        interleaved_medians(7, 2,
                            {iters([&] {
                               CK(cudaMemcpyAsync(dst.data_ptr(), x.data_ptr(), x.nbytes(),
                                                  cudaMemcpyDeviceToDevice, g_stream));
                             }),
                             iters([&] { g_sink = g_sink + tl::topk(x, 100).values.numel(); })});
    const double read_us = t[0] / 2 / kIters * 1e6, us = t[1] / kIters * 1e6;
    row("O3", "topk(100) of [1024, 32768] float32", fmt("%.1f us", us),
        fmt("one read %.1f us", read_us), us / read_us, "<= 4x", us / read_us <= 4);
  }
}

// ---- O4: cumsum of a long 1-D tensor vs the device-to-device copy rate ---------------------

void bench_cumsum() {
  constexpr int kIters = 5;
  auto iters = [](std::function<void()> op) {
    return events([op = std::move(op)] {
      for (int i = 0; i < kIters; ++i) op();
    });
  };
  // One row of 64M float32: CUB's single-pass decoupled look-back scan reads x once and writes
  // the result once, the traffic of a copy.
  constexpr int64_t n = int64_t{64} << 20;
  tl::Tensor x = rand_of({n}, tl::kFloat32);
  tl::Tensor dst = tl::empty_like(x);
  const double bytes = 4.0 * n;
  auto t = interleaved_medians(7, 2,
                               {iters([&] {
                                  CK(cudaMemcpyAsync(dst.data_ptr(), x.data_ptr(), x.nbytes(),
                                                     cudaMemcpyDeviceToDevice, g_stream));
                                }),
                                iters([&] { g_sink = g_sink + tl::cumsum(x, 0).numel(); })});
  const double copy = 2 * bytes * kIters / t[0] / 1e9;
  const double gbs = 2 * bytes * kIters / t[1] / 1e9;  // reads x once, writes the result
  row("O4", "cumsum of 64M float32", fmt("%.0f GB/s", gbs), fmt("D2D copy %.0f GB/s", copy),
      gbs / copy, ">= 0.8x", gbs / copy >= 0.8);
  std::printf("    cumsum of 64M float32: %.1f us per call\n", t[1] / kIters * 1e6);
}

// ---- O5: scatter_add and index_add of 16M values into 1M bins vs a raw atomicAdd kernel -------

void bench_scatter() {
  constexpr int kIters = 5;
  auto iters = [](std::function<void()> op) {
    return events([op = std::move(op)] {
      for (int i = 0; i < kIters; ++i) op();
    });
  };
  // Random bins from a fixed seed (torch_reference.py draws its own: the same distribution).
  constexpr int64_t n = int64_t{16} << 20, bins = int64_t{1} << 20;
  tl::manual_seed(14);
  const tl::TensorOptions on_gpu = tl::TensorOptions(tl::kInt64).device(tl::Device::cuda(0));
  tl::Tensor index = tl::randint(0, bins, {n}, on_gpu);
  tl::Tensor src = rand_of({n}, tl::kFloat32);
  tl::Tensor self = tl::zeros({bins}, on_gpu.dtype(tl::kFloat32));
  tl::Tensor raw_out = tl::zeros({bins}, on_gpu.dtype(tl::kFloat32));
  // Ours: the out-of-place ops as a user calls them (a copy of self, the index range check with
  // its one wait, the atomic kernel); the floor: the atomic kernel alone into a buffer.
  auto t = interleaved_medians(
      7, 2,
      {iters([&] {
         bench::launch_scatter_add(src.data<float>(), index.data<int64_t>(), raw_out.data<float>(),
                                   n, g_stream);
       }),
       iters([&] { g_sink = g_sink + tl::scatter_add(self, 0, index, src).numel(); }),
       iters([&] { g_sink = g_sink + tl::index_add(self, 0, index, src).numel(); }),
       iters([&] { raw_out.scatter_add_(0, index, src); })});
  const double raw_us = t[0] / kIters * 1e6;
  const char* names[2] = {"scatter_add 16M float32 into 1M bins",
                          "index_add 16M float32 into 1M bins"};
  for (int k = 0; k < 2; ++k) {
    const double us = t[k + 1] / kIters * 1e6;
    row("O5", names[k], fmt("%.1f us", us), fmt("raw atomicAdd %.1f us", raw_us), us / raw_us,
        "<= 2x", us / raw_us <= 2);
  }
  std::printf("    for reference: scatter_add_ in place into the raw kernel's buffer %.1f us\n",
              t[3] / kIters * 1e6);
}

// ---- A3: the backward of unary ops vs the device-to-device copy rate -------------------------

// autograd::grad of y = op(x) on 64M float32, as a training step calls it: one fused kernel reads
// the gradient and the saved x or y and writes the result, 3 x 256 MiB. torch_reference.py times
// torch.autograd.grad the same way (target: >= 1.0x PyTorch).
void bench_unary_backward() {
  constexpr int kIters = 5;
  auto iters = [](std::function<void()> op) {
    return events([op = std::move(op)] {
      for (int i = 0; i < kIters; ++i) op();
    });
  };
  constexpr int64_t n = int64_t{64} << 20;
  const double bytes = 4.0 * n;
  const tl::Tensor any = rand_of({n}, tl::kFloat32) * 4.0 - 2.0;  // [-2, 2)
  const tl::Tensor positive = rand_of({n}, tl::kFloat32) + 0.5;   // log, sqrt
  const tl::Tensor g = rand_of({n}, tl::kFloat32);
  tl::Tensor dst = tl::empty_like(g);
  struct Op {
    const char* name;
    tl::Tensor (*f)(const tl::Tensor&);
    bool positive;
  };
  const Op ops[] = {
      {"sigmoid", [](const tl::Tensor& x) { return tl::sigmoid(x); }, false},
      {"tanh", [](const tl::Tensor& x) { return tl::tanh(x); }, false},
      {"gelu", [](const tl::Tensor& x) { return tl::gelu(x); }, false},
      {"silu", [](const tl::Tensor& x) { return tl::silu(x); }, false},
      {"exp", [](const tl::Tensor& x) { return tl::exp(x); }, false},
      {"log", [](const tl::Tensor& x) { return tl::log(x); }, true},
      {"sqrt", [](const tl::Tensor& x) { return tl::sqrt(x); }, true},
      {"relu", [](const tl::Tensor& x) { return tl::relu(x); }, false},
  };
  for (const Op& op : ops) {
    tl::Tensor x = (op.positive ? positive : any).detach();
    x.requires_grad_();
    const tl::Tensor y = op.f(x);
    auto t = interleaved_medians(
        7, 2,
        {iters([&] {
           CK(cudaMemcpyAsync(dst.data_ptr(), g.data_ptr(), g.nbytes(), cudaMemcpyDeviceToDevice,
                              g_stream));
         }),
         iters([&] { g_sink = g_sink + tl::autograd::grad({y}, {x}, {g}, true)[0].numel(); })});
    const double copy = 2 * bytes * kIters / t[0] / 1e9;
    const double gbs = 3 * bytes * kIters / t[1] / 1e9;  // reads grad and x or y, writes dx
    row("A3", std::string(op.name) + " backward, 64M float32", fmt("%.0f GB/s", gbs),
        fmt("D2D copy %.0f GB/s", copy), gbs / copy, ">= 0.85x", gbs / copy >= 0.85);
    std::printf("    %s backward: %.1f us per call\n", op.name, t[1] / kIters * 1e6);
  }
  // The binary ops whose gradient is more than one op (binary_backward_ops.h): one operand's
  // gradient is one kernel reading the gradient and both operands, 4 x 256 MiB.
  struct BinaryCase {
    const char* name;
    tl::Tensor (*f)(const tl::Tensor&, const tl::Tensor&);
    int input;  // whose gradient
  };
  const BinaryCase binary[] = {
      {"div (divisor)", [](const tl::Tensor& a, const tl::Tensor& b) { return a / b; }, 1},
      {"pow (base)", [](const tl::Tensor& a, const tl::Tensor& b) { return tl::pow(a, b); }, 0},
      {"atan2 (x)", [](const tl::Tensor& a, const tl::Tensor& b) { return tl::atan2(a, b); }, 1},
      {"maximum", [](const tl::Tensor& a, const tl::Tensor& b) { return tl::maximum(a, b); }, 0},
  };
  for (const BinaryCase& op : binary) {
    tl::Tensor a = positive.detach(), b = (any + 3.0).detach();
    (op.input == 0 ? a : b).requires_grad_();
    const tl::Tensor& leaf = op.input == 0 ? a : b;
    const tl::Tensor y = op.f(a, b);
    auto t = interleaved_medians(
        7, 2,
        {iters([&] {
           CK(cudaMemcpyAsync(dst.data_ptr(), g.data_ptr(), g.nbytes(), cudaMemcpyDeviceToDevice,
                              g_stream));
         }),
         iters([&] { g_sink = g_sink + tl::autograd::grad({y}, {leaf}, {g}, true)[0].numel(); })});
    const double copy = 2 * bytes * kIters / t[0] / 1e9;
    const double gbs = 4 * bytes * kIters / t[1] / 1e9;  // reads grad, a and b, writes one
    row("A3", std::string(op.name) + " backward, 64M float32", fmt("%.0f GB/s", gbs),
        fmt("D2D copy %.0f GB/s", copy), gbs / copy, ">= 0.85x", gbs / copy >= 0.85);
    std::printf("    %s backward: %.1f us per call\n", op.name, t[1] / kIters * 1e6);
  }
}

// ---- T3: AdamW over 100M float32 parameters in 200 tensors vs its memory floor ---------------

// One optimizer step reads p, g, m, v and writes p, m, v: 28 bytes per parameter, one launch
// (Backend::fused_adam). The floor is those bytes at the D2D copy's rate measured beside it.
// torch_reference.py times torch.optim.AdamW(fused=True) on the same shapes.
void bench_adamw() {
  constexpr int kTensors = 200;
  constexpr int64_t kPerTensor = 500'000;  // 100M parameters
  std::vector<tl::Tensor> params;
  for (int i = 0; i < kTensors; ++i) {
    tl::Tensor p = rand_of({kPerTensor}, tl::kFloat32);
    p.requires_grad_();
    {
      tl::NoGradGuard no_grad;
      p.mutable_grad() = rand_of({kPerTensor}, tl::kFloat32) - 0.5;
    }
    params.push_back(p);
  }
  tl::optim::AdamW opt(params, tl::optim::AdamWOptions(1e-3));
  opt.step();  // the states exist from here on
  const int64_t n = kPerTensor * kTensors;
  const tl::Tensor src = rand_of({n}, tl::kFloat32);
  tl::Tensor dst = tl::empty_like(src);
  auto t = interleaved_medians(7, 2,
                               {events([&] {
                                  CK(cudaMemcpyAsync(dst.data_ptr(), src.data_ptr(), src.nbytes(),
                                                     cudaMemcpyDeviceToDevice, g_stream));
                                }),
                                events([&] { opt.step(); })});
  const double copy = 2.0 * 4 * n / t[0];  // bytes/s
  const double floor_s = 28.0 * n / copy;
  row("T3", "AdamW step, 100M f32 in 200 tensors", fmt("%.3f ms", t[1] * 1e3),
      fmt("floor %.3f ms", floor_s * 1e3), floor_s / t[1], ">= 0.85x", floor_s / t[1] >= 0.85);
}

// ---- T2: one training step of the book's ResNet-18 variant, batch 256 -------------------------

// Forward, cross_entropy, backward and an SGD step (lr 0.05, the book's) on random 28x28 images,
// float32 and under bfloat16 autocast; median step time. torch_reference.py times the same model
// in PyTorch eager (cuDNN convolutions); the target is at most PyTorch's time in each.
void bench_resnet_step() {
  const tl::Device cuda = tl::Device::cuda(0);
  for (const bool bf16 : {false, true}) {
    tl::manual_seed(0);
    tl::nn::Sequential net = tl_example::resnet18();
    net->to(cuda);
    tl::optim::SGD opt(net->parameters(), tl::optim::SGDOptions(0.05));
    const tl::Tensor x = rand_of({256, 1, 28, 28}, tl::kFloat32);
    const tl::Tensor y = tl::randint(0, 10, {256}, tl::TensorOptions(tl::kInt64).device(cuda));
    auto step = [&] {
      opt.zero_grad();
      tl::Tensor loss;
      {
        std::optional<tl::autocast> guard;
        if (bf16) guard.emplace(tl::DeviceType::CUDA, tl::kBFloat16);
        loss = tl::nn::functional::cross_entropy(net(x), y);
      }
      loss.backward();
      opt.step();
    };
    auto t = interleaved_medians(5, 2, {events(step)});
    tl_bench::vs_torch_row(
        "T2", std::string("ResNet-18 step, batch 256, ") + (bf16 ? "bf16 autocast" : "f32"),
        fmt("%.2f ms", t[0] * 1e3), "PyTorch: torch_reference.py", 0, ">= 1.0x torch");
  }
}

// ---- T4: cross_entropy forward + backward on [4096, 128256] vs its copy floor ----------------

// The fused kernels read x forward, read it again and write dx backward: 3 x's bytes at the D2D
// copy's rate measured beside it is the floor. torch_reference.py times torch's
// F.cross_entropy(x, t).backward() on the same shapes (log_softmax + nll_loss and their backwards).
void bench_cross_entropy() {
  constexpr int64_t kRows = 4096, kClasses = 128256;
  for (const tl::DType dtype : {tl::kFloat32, tl::kBFloat16}) {
    tl::Tensor x = (rand_of({kRows, kClasses}, tl::kFloat32) * 8.0 - 4.0).to(dtype).detach();
    x.requires_grad_();
    const tl::Tensor t = tl::randint(0, kClasses, {kRows},
                                     tl::TensorOptions(tl::kInt64).device(tl::Device::cuda(0)));
    tl::Tensor dst = tl::empty_like(x);
    const double bytes = static_cast<double>(x.nbytes());
    auto t_ms = interleaved_medians(7, 2,
                                    {events([&] {
                                       CK(cudaMemcpyAsync(dst.data_ptr(), x.data_ptr(), x.nbytes(),
                                                          cudaMemcpyDeviceToDevice, g_stream));
                                     }),
                                     events([&] {
                                       const tl::Tensor loss =
                                           tl::nn::functional::cross_entropy(x, t);
                                       g_sink = g_sink + tl::autograd::grad({loss}, {x})[0].numel();
                                     })});
    const double copy = 2 * bytes / t_ms[0];  // bytes/s
    const double floor_s = 3 * bytes / copy;
    const std::string name = std::string("cross_entropy fwd+bwd [4096, 128256] ") +
                             (dtype == tl::kFloat32 ? "f32" : "bf16");
    row("T4", name, fmt("%.3f ms", t_ms[1] * 1e3), fmt("floor %.3f ms", floor_s * 1e3),
        floor_s / t_ms[1], ">= 0.8x", floor_s / t_ms[1] >= 0.8);
  }
}

bool wanted(int argc, char** argv, const char* id) {
  if (argc < 2) return true;
  for (int i = 1; i < argc; ++i)
    if (strcasecmp(argv[i], id) == 0) return true;
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (!tl::cuda::is_available()) {
    std::printf("bench_cuda: no CUDA device, nothing to measure\n");
    return 0;
  }
  try {
    tl::cuda::set_device(0);
    tl::cuda::set_allow_tf32(false);
    g_stream = tl::cuda::Stream::current(0).handle();
    cudaDeviceProp prop{};
    CK(cudaGetDeviceProperties(&prop, 0));
    int runtime = 0, driver = 0;
    CK(cudaRuntimeGetVersion(&runtime));
    CK(cudaDriverGetVersion(&driver));
    char date[64];
    const std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
    std::printf("tensorlet CUDA benchmark: %s (sm_%d%d, %d SMs), CUDA runtime %d, driver %d, %s\n",
                prop.name, prop.major, prop.minor, prop.multiProcessorCount, runtime, driver, date);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_cuda: %s\n", e.what());
    return 1;
  }
  std::printf(
      "medians of interleaved repetitions after warm-up; floors measured in this run; TF32 "
      "off except in row TF32\n\n");
  std::printf("%-3s %-34s %-16s %-34s %6s  %-12s %s\n", "id", "workload", "ours",
              "floor (same run)", "ratio", "target", "met");

  // A row that throws (an op missing or failing) is reported and the others still run.
  int failed = 0;
  auto section = [&](const char* ids, const std::function<void()>& run) {
    try {
      run();
    } catch (const std::exception& e) {
      std::printf("%-3s FAILED: %s\n", ids, e.what());
      std::fflush(stdout);
      ++failed;
    }
  };
  const bool g1 = wanted(argc, argv, "G1"), g2 = wanted(argc, argv, "G2");
  const bool g4 = wanted(argc, argv, "G4"), g6 = wanted(argc, argv, "G6");
  if (g1 || g2) section("G1", [&] { bench_launch_bound(g1, g2); });
  if (wanted(argc, argv, "G3")) section("G3", [] { bench_gemm(); });
  double copy_bw = 0;
  if (g4 || g6) section("G4", [&] { copy_bw = bench_elementwise(g4); });
  if (wanted(argc, argv, "G9")) section("G9", [] { bench_seed_loop(); });
  if (wanted(argc, argv, "G5")) section("G5", [] { bench_alloc(); });
  if (g6) section("G6", [&] { bench_nonzero(copy_bw); });
  if (wanted(argc, argv, "H1")) section("H1", [] { bench_half_gemm(); });
  const bool h2 = wanted(argc, argv, "H2"), h3 = wanted(argc, argv, "H3");
  if (h2 || h3) section("H2", [&] { bench_half_bandwidth(h2, h3); });
  if (wanted(argc, argv, "TF32")) section("TF32", [] { bench_tf32_gemm(); });
  if (wanted(argc, argv, "O1")) section("O1", [] { bench_softmax(); });
  const bool o2 = wanted(argc, argv, "O2"), o3 = wanted(argc, argv, "O3");
  if (o2 || o3) section("O2", [&] { bench_ordering(o2, o3); });
  if (wanted(argc, argv, "O4")) section("O4", [] { bench_cumsum(); });
  if (wanted(argc, argv, "O5")) section("O5", [] { bench_scatter(); });
  if (wanted(argc, argv, "A3")) section("A3", [] { bench_unary_backward(); });
  if (wanted(argc, argv, "T2")) section("T2", [] { bench_resnet_step(); });
  if (wanted(argc, argv, "T3")) section("T3", [] { bench_adamw(); });
  if (wanted(argc, argv, "T4")) section("T4", [] { bench_cross_entropy(); });
  if (wanted(argc, argv, "G7") || wanted(argc, argv, "G8")) section("G7", [] { bench_graphs(); });
  section("end", [] { tl::cuda::synchronize(); });

  std::printf(
      "\nratio: G1, G2 = per-op time / empty-kernel launch time; G3 = our TFLOP/s / cuBLAS;\n"
      "       G4 = our GB/s / D2D copy GB/s (bytes read + written); G5 = time / cudaMalloc+Free\n"
      "       (the target is absolute); G6 = time / its minimum bytes at copy bandwidth\n"
      "       (the target is absolute); H1 = our TFLOP/s / cublasGemmEx (float accumulation);\n"
      "       H2, H3 = our GB/s / D2D copy GB/s; TF32 = our TFLOP/s / cublasSgemm in TF32 mode,\n"
      "       with tl::set_float32_matmul_precision(\"high\") for that row only; O1 = softmax "
      "GB/s\n"
      "       (read + write) / D2D copy GB/s; O2 = sort time / CUB's radix sort of (key, int64)\n"
      "       pairs; O3 = topk time / one read of its input at D2D copy rate; O4 = cumsum GB/s\n"
      "       (read + write) / D2D copy GB/s; O5 = time / a raw atomicAdd kernel's (no copy of\n"
      "       self, no index check); G7 = per-op replay time / a raw graph's per empty kernel\n"
      "       (the target is absolute); G8 = eager loop time / its graph's replay time; A3 =\n"
      "       backward GB/s (grad and x or y read, dx written) / D2D copy GB/s\n");
  return failed == 0 ? 0 : 1;
}

// Multi-GPU benchmark, row M1: 20 000 matmuls of 100x100 float32 on GPU 0, on GPU 1, and on both
// issued from one host thread, eagerly and as CUDA graphs of kRound matmuls (one per device,
// replayed alternately); both should take well under the sum of the two. Beside them, the floors
// of one thread measured in the same run: raw kernel launches and raw cublasSgemm calls.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <tensorlet/tensorlet.h>

#include "bench_util.h"
#include "raw_kernels.h"

namespace tl = tensorlet;

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kMatmuls = 20000;
// Matmuls handed to one device before the host turns to the other: far below the driver's
// queue of pending launches, which would otherwise fill and stall the host on one device.
constexpr int kRound = 100;

// Seconds of `work` with both devices idle at both ends (host clock).
double synced_seconds(const std::function<void()>& work) {
  tl::cuda::synchronize(0);
  tl::cuda::synchronize(1);
  const auto start = Clock::now();
  work();
  tl::cuda::synchronize(0);
  tl::cuda::synchronize(1);
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Median seconds of each workload, both devices idle at both ends of each run.
std::vector<double> interleaved_medians(int reps, int warmup,
                                        const std::vector<std::function<void()>>& work) {
  std::vector<tl_bench::Timed> timed;
  for (const auto& w : work) timed.push_back([w] { return synced_seconds(w); });
  return tl_bench::interleaved_medians(reps, warmup, timed);
}

using tl_bench::fmt;
using tl_bench::row;

// The raw floors' runtime and cuBLAS calls, checked.
void ck(cudaError_t err, const char* what) {
  if (err != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(err));
}
void ck(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + ": cuBLAS status " + std::to_string(status));
}

// What one host thread reaches calling cuBLAS itself, with no tensorlet in between: a handle per
// device bound to a stream of its own with a 32 MiB workspace (as tensorlet's), operands and
// output allocated once, cublasSgemm of 100x100 (default math: no TF32, as the rows above).
class RawCublas {
 public:
  RawCublas() {
    for (int d = 0; d < 2; ++d) {
      ck(cudaSetDevice(d), "cudaSetDevice");
      ck(cudaStreamCreateWithFlags(&stream_[d], cudaStreamNonBlocking), "cudaStreamCreate");
      ck(cublasCreate(&handle_[d]), "cublasCreate");
      ck(cublasSetStream(handle_[d], stream_[d]), "cublasSetStream");
      ck(cudaMalloc(&workspace_[d], kWorkspace), "cudaMalloc");
      ck(cublasSetWorkspace(handle_[d], workspace_[d], kWorkspace), "cublasSetWorkspace");
      ck(cudaMalloc(&a_[d], kN * kN * sizeof(float)), "cudaMalloc");
      ck(cudaMalloc(&c_[d], kN * kN * sizeof(float)), "cudaMalloc");
      ck(cudaMemset(a_[d], 0, kN * kN * sizeof(float)), "cudaMemset");
    }
  }
  ~RawCublas() {
    for (int d = 0; d < 2; ++d) {
      (void)cudaSetDevice(d);
      (void)cudaStreamSynchronize(stream_[d]);
      (void)cublasDestroy(handle_[d]);
      (void)cudaFree(workspace_[d]);
      (void)cudaFree(a_[d]);
      (void)cudaFree(c_[d]);
      (void)cudaStreamDestroy(stream_[d]);
    }
  }
  RawCublas(const RawCublas&) = delete;
  RawCublas& operator=(const RawCublas&) = delete;

  void run_on(int d, int count) {
    (void)cudaSetDevice(d);
    const float one = 1.f, zero = 0.f;
    for (int i = 0; i < count; ++i)
      (void)cublasSgemm(handle_[d], CUBLAS_OP_N, CUBLAS_OP_N, kN, kN, kN, &one, a_[d], kN, a_[d],
                        kN, &zero, c_[d], kN);
  }
  void synchronize() {
    for (int d = 0; d < 2; ++d) ck(cudaStreamSynchronize(stream_[d]), "cudaStreamSynchronize");
  }

 private:
  static constexpr int kN = 100;
  static constexpr size_t kWorkspace = size_t{32} << 20;
  cudaStream_t stream_[2] = {};
  cublasHandle_t handle_[2] = {};
  void* workspace_[2] = {};
  float* a_[2] = {};
  float* c_[2] = {};
};

}  // namespace

int main() {
  const int gpus = tl::cuda::device_count();
  if (gpus < 2) {
    std::printf(
        "bench_multi_gpu: needs two CUDA devices, this machine has %d; nothing to measure\n", gpus);
    return 0;
  }
  try {
    tl::cuda::set_allow_tf32(false);
    std::printf("tensorlet multi-GPU benchmark: %d CUDA devices; cuda:0 <-> cuda:1 %s\n", gpus,
                tl::cuda::can_access_peer(0, 1) && tl::cuda::can_access_peer(1, 0)
                    ? "with peer access"
                    : "without peer access (staged through the host)");
    std::printf(
        "medians of 7 interleaved repetitions after 2 warm-up rounds; host clock with both "
        "devices synchronized at both ends; TF32 off\n\n");
    std::printf("%-3s %-34s %-16s %-34s %6s  %-12s %s\n", "id", "workload", "ours",
                "floor (same run)", "ratio", "target", "met");

    const tl::Tensor x0 = tl::rand({100, 100}, tl::Device::cuda(0));
    const tl::Tensor x1 = tl::rand({100, 100}, tl::Device::cuda(1));
    const std::vector<tl::Tensor> x{x0, x1};
    auto run_on = [&](int d, int count) {
      tl::cuda::DeviceGuard on(d);
      for (int i = 0; i < count; ++i) (void)tl::matmul(x[d], x[d]);
    };
    const std::vector<double> t =
        interleaved_medians(7, 2,
                            {[&] { run_on(0, kMatmuls); }, [&] { run_on(1, kMatmuls); },
                             [&] {
                               for (int done = 0; done < kMatmuls; done += kRound) {
                                 run_on(0, kRound);
                                 run_on(1, kRound);
                               }
                             },
                             [&] {
                               run_on(0, kMatmuls);
                               run_on(1, kMatmuls);
                             }});
    const double sum = t[0] + t[1];
    row("M1", "100x100 matmul x20000, both GPUs", fmt("%.2f ms", t[2] * 1e3),
        fmt("gpu0 %.2f ms + ", t[0] * 1e3) + fmt("gpu1 %.2f ms", t[1] * 1e3), t[2] / sum, "<= 0.8",
        t[2] / sum <= 0.8);

    // The same work as graphs of kRound matmuls, captured once per device after the eager runs
    // above set up cuBLAS there.
    std::vector<tl::cuda::Graph> graphs(2);
    for (int d = 0; d < 2; ++d)
      graphs[d].capture({d}, [&] {
        for (int i = 0; i < kRound; ++i) (void)tl::matmul(x[d], x[d]);
      });
    auto replay_on = [&](int d, int count) {
      for (int done = 0; done < count; done += kRound) graphs[d].replay();
    };
    const std::vector<double> g =
        interleaved_medians(7, 2,
                            {[&] { replay_on(0, kMatmuls); }, [&] { replay_on(1, kMatmuls); },
                             [&] {
                               for (int done = 0; done < kMatmuls; done += kRound) {
                                 graphs[0].replay();
                                 graphs[1].replay();
                               }
                             }});
    const double graph_sum = g[0] + g[1];
    row("M1", "same as graphs of 100, both GPUs", fmt("%.2f ms", g[2] * 1e3),
        fmt("gpu0 %.2f ms + ", g[0] * 1e3) + fmt("gpu1 %.2f ms", g[1] * 1e3), g[2] / graph_sum,
        "<= 0.6", g[2] / graph_sum <= 0.6);
    std::printf(
        "    for reference: rounds of %d matmuls per device; all of GPU 0's work queued before "
        "GPU 1's takes %.2f ms (%.2f x the sum): the launch queue fills and the host waits\n",
        kRound, t[3] * 1e3, t[3] / sum);

    // The floor of one host thread driving both devices, with no tensorlet in between: the same
    // rounds of launches through the runtime (cudaSetDevice, then <<<>>> on a stream of that
    // device), each a kernel that spins on the GPU for as long as one of our matmuls runs there
    // (the graphs' time per matmul). Its ratio is the best eager M1 can reach on this host.
    const double kernel_ns = std::min(g[0], g[1]) / kMatmuls * 1e9;
    cudaStream_t raw_streams[2];
    for (int d = 0; d < 2; ++d) {
      ck(cudaSetDevice(d), "cudaSetDevice");
      ck(cudaStreamCreateWithFlags(&raw_streams[d], cudaStreamNonBlocking),
         "cudaStreamCreateWithFlags");
    }
    auto raw_on = [&](int d, int count) {
      (void)cudaSetDevice(d);
      for (int i = 0; i < count; ++i)
        bench::launch_spin(static_cast<uint64_t>(kernel_ns), raw_streams[d]);
    };
    const std::vector<double> r =
        interleaved_medians(7, 2,
                            {[&] { raw_on(0, kMatmuls); }, [&] { raw_on(1, kMatmuls); },
                             [&] {
                               for (int done = 0; done < kMatmuls; done += kRound) {
                                 raw_on(0, kRound);
                                 raw_on(1, kRound);
                               }
                             }});
    ck(cudaGetLastError(), "raw spin launches");
    const double raw_sum = r[0] + r[1];
    row("M1", "raw launches, one thread, both", fmt("%.2f ms", r[2] * 1e3),
        fmt("gpu0 %.2f ms + ", r[0] * 1e3) + fmt("gpu1 %.2f ms", r[1] * 1e3), r[2] / raw_sum,
        "(floor)", true);
    std::printf(
        "    the floor: %d launches of a %.2f us spin kernel per device through the runtime, "
        "%.2f us per launch on both; M1 eager %.2f against this floor's %.2f (%.2f x)\n",
        kMatmuls, kernel_ns / 1e3, r[2] / (2.0 * kMatmuls) * 1e6, t[2] / sum, r[2] / raw_sum,
        (t[2] / sum) / (r[2] / raw_sum));
    // The floor of eager matmuls through cuBLAS: the same rounds, cublasSgemm called directly.
    RawCublas raw_blas;
    auto blas_on = [&](int d, int count) {
      raw_blas.run_on(d, count);
      raw_blas.synchronize();
    };
    const std::vector<double> rb =
        interleaved_medians(7, 2,
                            {[&] { blas_on(0, kMatmuls); }, [&] { blas_on(1, kMatmuls); },
                             [&] {
                               for (int done = 0; done < kMatmuls; done += kRound) {
                                 raw_blas.run_on(0, kRound);
                                 raw_blas.run_on(1, kRound);
                               }
                               raw_blas.synchronize();
                             }});
    const double raw_blas_sum = rb[0] + rb[1];
    row("M1", "raw cublasSgemm, one thread, both", fmt("%.2f ms", rb[2] * 1e3),
        fmt("gpu0 %.2f ms + ", rb[0] * 1e3) + fmt("gpu1 %.2f ms", rb[1] * 1e3),
        rb[2] / raw_blas_sum, "(floor)", true);
    std::printf(
        "    cuBLAS's floor: %.2f us per cublasSgemm on both; M1 eager %.2f against it (%.2f x)\n",
        rb[2] / (2.0 * kMatmuls) * 1e6, rb[2] / raw_blas_sum,
        (t[2] / sum) / (rb[2] / raw_blas_sum));
    // Where the host's time goes: the time to enqueue one round of kRound ops (host clock, the
    // devices idle at the start, too few ops for the launch queue to fill), per op.
    auto issue_us = [&](const std::function<void()>& round) {
      std::vector<double> v;
      for (int rep = 0; rep < 50; ++rep) {
        tl::cuda::synchronize(0);
        tl::cuda::synchronize(1);
        const auto start = Clock::now();
        round();
        v.push_back(std::chrono::duration<double>(Clock::now() - start).count());
      }
      return tl_bench::median(v) / kRound * 1e6;
    };
    std::printf(
        "    host time to enqueue one op (median of 50 rounds of %d): tl::matmul %.2f us on "
        "GPU 0, %.2f us alternating rounds; raw launch %.2f us on GPU 0, %.2f us alternating\n",
        kRound, issue_us([&] { run_on(0, kRound); }), issue_us([&] {
          run_on(0, kRound / 2);
          run_on(1, kRound / 2);
        }),
        issue_us([&] { raw_on(0, kRound); }), issue_us([&] {
          raw_on(0, kRound / 2);
          raw_on(1, kRound / 2);
        }));
    std::printf(
        "    host time to enqueue one raw cublasSgemm: %.2f us on GPU 0, %.2f us alternating\n",
        issue_us([&] { raw_blas.run_on(0, kRound); }), issue_us([&] {
          raw_blas.run_on(0, kRound / 2);
          raw_blas.run_on(1, kRound / 2);
        }));
    for (int d = 0; d < 2; ++d) {
      (void)cudaSetDevice(d);
      (void)cudaStreamDestroy(raw_streams[d]);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_multi_gpu: %s\n", e.what());
    return 1;
  }
  return 0;
}

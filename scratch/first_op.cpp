// Scratch diagnostic (not committed): what the first op in a CUPTI profile costs, and which
// warm-up call absorbs it.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#include <tensorlet.h>
namespace tl = tensorlet;
namespace prof = tl::profiler;
using C = std::chrono::steady_clock;
double us(C::time_point a, C::time_point b) { return std::chrono::duration<double, std::micro>(b - a).count(); }
int main() {
  const tl::Device g = tl::Device::cuda(0);
  tl::Tensor x = tl::rand({128, 500}, g), w = tl::rand({10, 500}, g), b = tl::rand({10}, g);
  tl::Tensor y = tl::linear(x, w, b); tl::Tensor z = tl::add(x, x);
  tl::cuda::synchronize();
  const char* variants[] = {"none", "cudaFree0", "streamQuery", "eventQuery", "zeros1", "none"};
  for (const char* v : variants) {
    auto t0 = C::now();
    prof::Profile p({.activities = {prof::Activity::CPU, prof::Activity::CUDA}});
    auto t1 = C::now();
    if (!strcmp(v, "cudaFree0")) cudaFree(nullptr);
    if (!strcmp(v, "streamQuery")) cudaStreamQuery(nullptr);
    if (!strcmp(v, "eventQuery")) { cudaEvent_t e; cudaEventCreate(&e); cudaEventQuery(e); cudaEventDestroy(e); }
    if (!strcmp(v, "zeros1")) { tl::Tensor q = tl::zeros({1}, g); }
    auto t2 = C::now();
    tl::Tensor a1 = tl::add(x, x);
    auto t3 = C::now();
    tl::Tensor a2 = tl::linear(x, w, b);
    auto t4 = C::now();
    tl::Tensor a3 = tl::add(x, x);
    auto t5 = C::now();
    p.stop();
    std::printf("%-12s start %8.1f us warm %8.1f us | add %8.1f linear %8.1f add %8.1f us\n", v, us(t0,t1), us(t1,t2), us(t2,t3), us(t3,t4), us(t4,t5));
  }
}

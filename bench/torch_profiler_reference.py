"""PyTorch's profiler overhead on bench_profiler's workload (DESIGN.md row P1), same GPU, same run.

20 000 torch.add of two 10x10 float32 CUDA tensors per repetition, synchronized at both ends, with
no profiler, torch.profiler with CPU activity, and with CPU + CUDA activities; the profiler is
entered before the clock starts, and leaving it (stop, Kineto's trace collection) is timed apart.
Medians of interleaved repetitions after warm-up, printed as per-op figures like bench_profiler's.
"""
import statistics
import time

import torch
from torch.profiler import ProfilerActivity, profile

CALLS = 20000
WARMUP = 2
REPS = 9


def main():
    if not torch.cuda.is_available():
        print("torch_profiler_reference: no CUDA device")
        return
    a = torch.rand(10, 10, device="cuda")
    b = torch.rand(10, 10, device="cuda")

    def adds():
        torch.cuda.synchronize()
        for _ in range(CALLS):
            torch.add(a, b)
        torch.cuda.synchronize()

    configs = {
        "no profiler": None,
        "CPU profiler": [ProfilerActivity.CPU],
        "CPU + CUDA": [ProfilerActivity.CPU, ProfilerActivity.CUDA],
    }
    body = {k: [] for k in configs}
    stop = {k: [] for k in configs}
    for rep in range(WARMUP + REPS):
        for name, activities in configs.items():
            if activities is None:
                t0 = time.perf_counter()
                adds()
                t1 = time.perf_counter()
                t2 = t1
            else:
                p = profile(activities=activities)
                p.__enter__()
                t0 = time.perf_counter()
                adds()
                t1 = time.perf_counter()
                p.__exit__(None, None, None)
                t2 = time.perf_counter()
            if rep >= WARMUP:
                body[name].append(t1 - t0)
                stop[name].append(t2 - t1)
    none_us = statistics.median(body["no profiler"]) / CALLS * 1e6
    print(f"PyTorch {torch.__version__} profiler overhead, {torch.cuda.get_device_name(0)}")
    print(f"{'workload':<36} {'per op':<12} {'added':<12} stop()/op")
    for name in configs:
        per_op = statistics.median(body[name]) / CALLS * 1e6
        added = "-" if name == "no profiler" else f"{per_op - none_us:+.3f} us"
        s = "-" if name == "no profiler" else f"{statistics.median(stop[name]) / CALLS * 1e6:.3f} us"
        print(f"{'torch 10x10 add, cuda:0, ' + name:<36} {per_op:.3f} us    {added:<12} {s}")


if __name__ == "__main__":
    main()

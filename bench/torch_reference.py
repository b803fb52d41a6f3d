#!/usr/bin/env python3
"""PyTorch eager on the same GPU, for the workloads of bench_cuda (rows G1-G8, H1-H3, TF32, O1-O5,
A3) and bench_cpu (C3-C6, C8 and O6, PyTorch's CPU; on a machine without CUDA only these CPU rows).

usage: python3 bench/torch_reference.py [--ours bench_cuda.log] [--ours bench_cpu.log] [--cpu-only]

Prints PyTorch's figure for each row, timed the way bench_cuda times tensorlet (medians of
interleaved repetitions after warm-up, TF32 off except in row TF32). With --ours, also reads bench_cuda's output and
prints tensorlet's figure next to PyTorch's with their speed ratio (> 1: tensorlet is faster).
"""
import argparse
import itertools
import os
import re
import statistics
import sys
import time

try:
    import torch
except ImportError:
    print("torch_reference: PyTorch is not installed here; nothing to compare with")
    sys.exit(0)

REPS, WARMUP = 7, 2


def medians(workloads, reps=REPS, warmup=WARMUP):
    """Median seconds of each workload (a callable returning the seconds it measured), run
    interleaved so a drift in clocks hits all of them alike."""
    times = [[] for _ in workloads]
    for r in range(warmup + reps):
        for i, work in enumerate(workloads):
            s = work()
            if r >= warmup:
                times[i].append(s)
    return [statistics.median(t) for t in times]


def host_synced(body):
    def run():
        torch.cuda.synchronize()
        start = time.perf_counter()
        body()
        torch.cuda.synchronize()
        return time.perf_counter() - start
    return run


def host_only(body):
    def run():
        start = time.perf_counter()
        body()
        return time.perf_counter() - start
    return run


def events(body):
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def run():
        start.record()
        body()
        stop.record()
        stop.synchronize()
        return start.elapsed_time(stop) * 1e-3
    return run


ROWS = []  # (id, workload, value, unit)


def row(gid, workload, value, unit, note=""):
    ROWS.append((gid, workload, value, unit))
    print(f"{gid:<4} {workload:<36} {value:12.3f} {unit}{' ' + note if note else ''}", flush=True)


def launch_bound():
    ops = 20000
    a10, b10 = torch.rand(10, 10, device="cuda"), torch.rand(10, 10, device="cuda")
    a3, b3 = torch.rand(3, 3, device="cuda"), torch.rand(3, 3, device="cuda")

    def loop(op):
        def body():
            for _ in range(ops):
                op()
        return host_synced(body)

    t = medians([loop(lambda: a10 + b10), loop(lambda: a3 @ b3), loop(lambda: a10 @ b10)])
    row("G1", "10x10 add, 20 000 in a row, per op", t[0] / ops * 1e6, "us")
    row("G2", "3x3 matmul, per op", t[1] / ops * 1e6, "us")
    row("G2", "10x10 matmul, per op", t[2] / ops * 1e6, "us")


def graphs():
    """G7, G8: the same workloads as bench_cuda's, captured with torch.cuda.CUDAGraph."""
    ops = 20000
    a10, b10 = torch.rand(10, 10, device="cuda"), torch.rand(10, 10, device="cuda")

    def adds():
        for _ in range(ops):
            a10 + b10

    def loop():
        for _ in range(ops):
            x = torch.rand(10, 10, device="cuda")
            x * x

    # Warm-up on a side stream before capture, as torch.cuda.graphs' documentation asks.
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        adds()
        loop()
    torch.cuda.current_stream().wait_stream(side)
    g_adds, g_loop = torch.cuda.CUDAGraph(), torch.cuda.CUDAGraph()
    with torch.cuda.graph(g_adds):
        adds()
    with torch.cuda.graph(g_loop):
        loop()
    t = medians([host_synced(g_adds.replay), host_synced(loop), host_synced(g_loop.replay)])
    row("G7", "10x10 add, 20 000 in a graph, per op", t[0] / ops * 1e6, "us")
    row("G8", "20 000 x (rand(10,10), x*x), graph", t[2] * 1e3, "ms")
    print(f"     (PyTorch's eager loop {t[1] * 1e3:.2f} ms: {t[1] / t[2]:.2f}x its graph)")


def gemm():
    for n in (100, 10000):
        calls = 1000 if n <= 1000 else 3
        a, b = torch.rand(n, n, device="cuda"), torch.rand(n, n, device="cuda")

        def body():
            for _ in range(calls):
                torch.matmul(a, b)
        (t,) = medians([events(body)], reps=9 if n <= 1000 else 5)
        row("G3", f"{n}^2 float32 matmul", 2.0 * n ** 3 * calls / t / 1e12, "TFLOP/s")


def elementwise():
    iters = 5
    a, b = torch.rand(512, 512, 512, device="cuda"), torch.rand(512, 512, 512, device="cuda")
    dst = torch.empty_like(a)
    tensor_bytes = 4.0 * a.numel()

    def repeat(op):
        def body():
            for _ in range(iters):
                op()
        return events(body)

    ops = [("D2D copy (dst.copy_(a))", 2, lambda: dst.copy_(a)),
           ("a * b on 512^3 float32", 3, lambda: a * b),
           ("a + b on 512^3 float32", 3, lambda: a + b),
           ("sin(a) on 512^3 float32", 2, lambda: torch.sin(a)),
           ("cos(a) on 512^3 float32", 2, lambda: torch.cos(a))]
    t = medians([repeat(op) for _, _, op in ops])
    for (name, moved, _), s in zip(ops, t):
        gbs = moved * tensor_bytes * iters / s / 1e9
        if name.startswith("D2D"):
            print(f"    for reference: {name} {gbs:.0f} GB/s")
        else:
            row("G4", name, gbs, "GB/s")
    del a, b, dst
    torch.cuda.empty_cache()


def seed_loop():
    """G9: seed 002's loop (a * b, a + b, sin(a), cos(b) on randn 512^3) ten times, with events."""
    a, b = torch.randn(512, 512, 512, device="cuda"), torch.randn(512, 512, 512, device="cuda")

    def body():
        for _ in range(10):
            c = a * b
            d = a + b
            e = torch.sin(a)
            f = torch.cos(b)
            del c, d, e, f
    (t,) = medians([events(body)])
    row("G9", "seed 002 loop x10 (a*b a+b sin cos)", t * 1e3, "ms")
    del a, b
    torch.cuda.empty_cache()


def alloc():
    pairs = 100000

    def body():
        for _ in range(pairs):
            torch.empty(262144, device="cuda")
    (t,) = medians([host_only(body)])
    row("G5", "torch.empty 1 MiB + free, cached", t / pairs * 1e6, "us")


def nonzero():
    mask = torch.rand(500, 500, 500, device="cuda")
    count = [0]

    def body():
        count[0] = (mask > 0.5).nonzero().shape[0]
    (t,) = medians([host_synced(body)])
    row("G6", "(mask > 0.5).nonzero() on 500^3", t * 1e3, "ms")
    print(f"    {count[0]} elements pass")


def half_gemm():
    n, calls = 8192, 10
    for dtype, name in ((torch.float16, "float16"), (torch.bfloat16, "bfloat16")):
        a = torch.rand(n, n, device="cuda").to(dtype)
        b = torch.rand(n, n, device="cuda").to(dtype)

        def body():
            for _ in range(calls):
                a @ b
        (t,) = medians([events(body)])
        row("H1", f"8192^2 {name} matmul", 2.0 * n ** 3 * calls / t / 1e12, "TFLOP/s")
        del a, b
    torch.cuda.empty_cache()


def half_bandwidth():
    iters = 5

    def repeat(op):
        def body():
            for _ in range(iters):
                op()
        return events(body)

    a = torch.rand(512, 512, 512, device="cuda").to(torch.bfloat16)
    b = torch.rand(512, 512, 512, device="cuda").to(torch.bfloat16)
    dst = torch.empty_like(a)
    tensor_bytes = 2.0 * a.numel()
    t = medians([repeat(lambda: dst.copy_(a)), repeat(lambda: a * b), repeat(lambda: a + b)])
    print(f"    for reference: D2D copy (bfloat16 dst.copy_(a)) "
          f"{2 * tensor_bytes * iters / t[0] / 1e9:.0f} GB/s")
    row("H2", "a * b on 512^3 bfloat16", 3 * tensor_bytes * iters / t[1] / 1e9, "GB/s")
    row("H2", "a + b on 512^3 bfloat16", 3 * tensor_bytes * iters / t[2] / 1e9, "GB/s")
    del a, b, dst
    x = torch.rand(64 << 20, device="cuda").to(torch.float16)
    (t,) = medians([repeat(lambda: x.sum())])
    row("H3", "sum of 64M float16", 2.0 * x.numel() * iters / t / 1e9, "GB/s")
    del x
    torch.cuda.empty_cache()


def tf32_gemm():
    n, calls = 10000, 5
    a, b = torch.rand(n, n, device="cuda"), torch.rand(n, n, device="cuda")

    def body():
        for _ in range(calls):
            a @ b
    # The legacy switch, as at the top of main(): torch.set_float32_matmul_precision("high") is
    # the same setting, but mixing the two APIs makes newer PyTorch refuse to report it.
    torch.backends.cuda.matmul.allow_tf32 = True
    try:
        (t,) = medians([events(body)], reps=5)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = False
    row("TF32", '10000^2 float32 matmul, "high"', 2.0 * n ** 3 * calls / t / 1e12, "TFLOP/s")


def softmax():
    iters = 5

    def repeat(op):
        def body():
            for _ in range(iters):
                op()
        return events(body)

    for name, fn in (("softmax", torch.softmax), ("log_softmax", torch.log_softmax)):
        for shape in ((4096, 4096), (64, 128256)):
            x = torch.rand(*shape, device="cuda")
            (t,) = medians([repeat(lambda: fn(x, -1))])
            row("O1", f"{name}(-1) of [{shape[0]}, {shape[1]}] float32",
                2 * 4.0 * x.numel() * iters / t / 1e9, "GB/s")
            del x
    torch.cuda.empty_cache()


def ordering():
    """O2: sort with indices (torch.sort returns both); O3: topk. Per-call times, as bench_cuda."""
    iters = 5

    def repeat(op):
        def body():
            for _ in range(iters):
                op()
        return events(body)

    x = torch.rand(1 << 24, device="cuda")
    (t,) = medians([repeat(lambda: torch.sort(x))])
    row("O2", "sort of 16M float32", t / iters * 1e6, "us")
    m = torch.rand(4096, 4096, device="cuda")
    (t,) = medians([repeat(lambda: torch.sort(m, -1))])
    row("O2", "sort(-1) of [4096, 4096] float32", t / iters * 1e6, "us")
    y = torch.rand(1024, 32768, device="cuda")
    (t,) = medians([repeat(lambda: torch.topk(y, 100))])
    row("O3", "topk(100) of [1024, 32768] float32", t / iters * 1e6, "us")
    del x, m, y
def cumsum():
    iters = 5
    x = torch.rand(64 << 20, device="cuda")

    def body():
        for _ in range(iters):
            torch.cumsum(x, 0)
    (t,) = medians([events(body)])
    row("O4", "cumsum of 64M float32", 2 * 4.0 * x.numel() * iters / t / 1e9, "GB/s")
    del x
    torch.cuda.empty_cache()


def cpu_ops():
    """O6: PyTorch's CPU on all cores, the workloads of bench_cpu's O6 rows (ms per call)."""
    import os
    threads = torch.get_num_threads()
    torch.set_num_threads(os.cpu_count())
    try:
        m = torch.rand(4096, 4096)
        v = torch.rand(1 << 24)

        def wall(op):
            def run():
                start = time.perf_counter()
                op()
                return time.perf_counter() - start
            return run
        t = medians([wall(lambda: torch.softmax(m, -1)), wall(lambda: torch.cumsum(v, 0)),
                     wall(lambda: torch.sort(v))])
        row("O6", "softmax(-1) of [4096, 4096] float32", t[0] * 1e3, "ms")
        row("O6", "cumsum of 16M float32", t[1] * 1e3, "ms")
        row("O6", "sort of 16M float32", t[2] * 1e3, "ms")
    finally:
        torch.set_num_threads(threads)


def cpu_threads():
    """1, 2 and all threads, as bench_cpu's C6 (all: what tensorlet's OpenMP uses by default)."""
    import os
    all_threads = int(os.environ.get("OMP_NUM_THREADS", os.cpu_count()))
    return [1] + ([2] if all_threads >= 2 else []) + ([all_threads] if all_threads > 2 else [])


def cpu_rows():
    """C3-C6, C8: PyTorch's CPU on the workloads of bench_cpu's rows, on all threads (C6: 1, 2, all)."""
    threads = torch.get_num_threads()
    all_threads = cpu_threads()[-1]
    torch.set_num_threads(all_threads)
    blas = [line.strip() for line in torch.__config__.show().splitlines() if "BLAS_INFO" in line]
    print(f"PyTorch CPU rows: {all_threads} threads; {blas[0] if blas else 'BLAS unknown'}")

    def wall(op, calls=1):
        def run():
            start = time.perf_counter()
            for _ in range(calls):
                op()
            return time.perf_counter() - start
        return run
    try:
        n = 4096
        a, b = torch.rand(n, n), torch.rand(n, n)
        (t,) = medians([wall(lambda: torch.matmul(a, b))], reps=5, warmup=1)
        row("C3", "4096^2 float32 matmul", 2.0 * n ** 3 / t / 1e9, "GFLOP/s")
        del a, b
        m = torch.rand(4096, 4096)
        t = medians([wall(lambda: m.sum(1)), wall(lambda: m.sum(0))], reps=9)
        row("C4", "row sums of [4096, 4096] float32", 4.0 * m.numel() / t[0] / 1e9, "GB/s")
        row("C4", "column sums of [4096, 4096] float32", 4.0 * m.numel() / t[1] / 1e9, "GB/s")
        del m
        v = torch.randn(16 << 20)
        t = medians([wall(lambda: torch.exp(v)), wall(lambda: torch.tanh(v)),
                     wall(lambda: torch.sigmoid(v))])
        for name, s in zip(("exp", "tanh", "sigmoid"), t):
            row("C5", f"{name} of 16M float32", 8.0 * v.numel() / s / 1e9, "GB/s")
        del v
        # The [1, 512] operand at 8 offsets 512 B apart, cycled through, as bench_cpu's C6.
        col, lines = torch.rand(512, 1), torch.rand(1, 512 + 7 * 128)
        line = itertools.cycle([lines[:, 128 * k:128 * k + 512] for k in range(8)])
        x, y = torch.rand(3, 3), torch.rand(3, 3)
        bcast_calls, tiny_calls = 2000, 100000
        for k in cpu_threads():
            torch.set_num_threads(k)
            t = medians([wall(lambda: torch.add(col, next(line)), bcast_calls),
                         wall(lambda: torch.add(x, y), tiny_calls)])
            row("C6", f"[512,1] + [1,512] add, {k} thr", t[0] / bcast_calls * 1e6, "us")
            row("C6", f"3x3 add, {k} thr", t[1] / tiny_calls * 1e6, "us")
        torch.set_num_threads(all_threads)
        matmul_sweep(all_threads, wall)
    finally:
        torch.set_num_threads(threads)


# C8's sizes, as bench_cpu's (paired by position).
SWEEP_SIZES = (16, 24, 32, 48, 64, 96, 100, 128, 192, 256, 316, 384, 512, 768, 1024)


def matmul_sweep(all_threads, wall):
    """C8: square float32 a @ b (fresh output) per n on all threads, every size interleaved in each
    round; products per repetition about 2^28 multiply-adds, as bench_cpu."""
    mats = [(torch.rand(n, n), torch.rand(n, n)) for n in SWEEP_SIZES]
    calls = [max(1, min(4000, (1 << 28) // n ** 3)) for n in SWEEP_SIZES]
    t = medians([wall(lambda a=a, b=b: torch.matmul(a, b), c) for (a, b), c in zip(mats, calls)])
    for n, s, c in zip(SWEEP_SIZES, t, calls):
        us = s / c * 1e6
        row("C8", f"float32 matmul n={n}, {all_threads} thr", us, "us",
            f"({2.0 * n ** 3 / us / 1e3:.1f} GFLOP/s)")


def scatter():
    iters = 5
    n, bins = 16 << 20, 1 << 20
    torch.manual_seed(14)
    index = torch.randint(0, bins, (n,), device="cuda")
    src = torch.rand(n, device="cuda")
    self = torch.zeros(bins, device="cuda")

    def repeat(op):
        def body():
            for _ in range(iters):
                op()
        return events(body)
    t = medians([repeat(lambda: torch.scatter_add(self, 0, index, src)),
                 repeat(lambda: torch.index_add(self, 0, index, src))])
    row("O5", "scatter_add 16M float32 into 1M bins", t[0] / iters * 1e6, "us")
    row("O5", "index_add 16M float32 into 1M bins", t[1] / iters * 1e6, "us")
    del index, src, self
    torch.cuda.empty_cache()


def unary_backward():
    """A3: torch.autograd.grad of y = op(x) on 64M float32 (retain_graph), GB/s of its 3 x 256 MiB
    (grad and x or y read, dx written), as bench_cuda times tensorlet's."""
    iters = 5
    n = 64 << 20
    any_x = torch.rand(n, device="cuda") * 4 - 2
    positive = torch.rand(n, device="cuda") + 0.5
    g = torch.rand(n, device="cuda")
    ops = [("sigmoid", torch.sigmoid, False), ("tanh", torch.tanh, False),
           ("gelu", torch.nn.functional.gelu, False), ("silu", torch.nn.functional.silu, False),
           ("exp", torch.exp, False), ("log", torch.log, True), ("sqrt", torch.sqrt, True),
           ("relu", torch.relu, False)]
    for name, fn, pos in ops:
        x = (positive if pos else any_x).detach().requires_grad_()
        y = fn(x)

        def body():
            for _ in range(iters):
                torch.autograd.grad(y, x, g, retain_graph=True)
        (t,) = medians([events(body)])
        row("A3", f"{name} backward, 64M float32", 3 * 4.0 * n * iters / t / 1e9, "GB/s")
        del x, y
    # The binary ops, one operand's gradient (4 x 256 MiB), in bench_cuda's order.
    binary = [("div (divisor)", lambda a, b: a / b, 1), ("pow (base)", torch.pow, 0),
              ("atan2 (x)", torch.atan2, 1), ("maximum", torch.maximum, 0)]
    for name, fn, which in binary:
        a = positive.detach().requires_grad_(which == 0)
        b = (any_x + 3).detach().requires_grad_(which == 1)
        leaf = a if which == 0 else b
        y = fn(a, b)

        def body():
            for _ in range(iters):
                torch.autograd.grad(y, leaf, g, retain_graph=True)
        (t,) = medians([events(body)])
        row("A3", f"{name} backward, 64M float32", 4 * 4.0 * n * iters / t / 1e9, "GB/s")
        del a, b, y
    del any_x, positive, g
    torch.cuda.empty_cache()


def adamw():
    """T3: torch.optim.AdamW(fused=True) over 100M float32 parameters in 200 tensors, one step's
    time (bench_cuda's T3 times tensorlet's on the same shapes)."""
    params = [torch.rand(500_000, device="cuda").requires_grad_() for _ in range(200)]
    for p in params:
        p.grad = torch.rand_like(p) - 0.5
    for fused in (True, False):
        opt = torch.optim.AdamW(params, lr=1e-3, fused=fused, foreach=None if fused else True)
        opt.step()
        (t,) = medians([events(opt.step)])
        row("T3", f"AdamW step, 100M f32 in 200 tensors{'' if fused else ' (foreach)'}", t * 1e3,
            "ms")
    del params
    torch.cuda.empty_cache()


def resnet_step():
    """T2: one training step (forward, cross_entropy, backward, SGD lr 0.05) of the book's
    ResNet-18 variant for 28x28 Fashion-MNIST (3x3 first conv with batch norm, no max-pool), batch
    256, float32 and under bfloat16 autocast (bench_cuda's T2: the same model in tensorlet)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from torch_models import resnet18

    for bf16 in (False, True):
        torch.manual_seed(0)
        net = resnet18().cuda()
        opt = torch.optim.SGD(net.parameters(), lr=0.05)
        x = torch.rand(256, 1, 28, 28, device="cuda")
        y = torch.randint(0, 10, (256,), device="cuda")

        def step():
            opt.zero_grad()
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=bf16):
                loss = torch.nn.functional.cross_entropy(net(x), y)
            loss.backward()
            opt.step()
        (t,) = medians([events(step)], reps=5)
        row("T2", f"ResNet-18 step, batch 256, {'bf16 autocast' if bf16 else 'f32'}", t * 1e3,
            "ms")
        del net, opt
    torch.cuda.empty_cache()


def cross_entropy():
    """T4: F.cross_entropy(x, t) forward + backward on [4096, 128256], float32 and bfloat16
    (bench_cuda's T4 times tensorlet's fused kernels on the same shapes)."""
    for dtype, name in ((torch.float32, "f32"), (torch.bfloat16, "bf16")):
        x = (torch.rand(4096, 128256, device="cuda") * 8 - 4).to(dtype).requires_grad_()
        t = torch.randint(0, 128256, (4096,), device="cuda")

        def step():
            loss = torch.nn.functional.cross_entropy(x, t)
            torch.autograd.grad(loss, x)
        (ms,) = medians([events(step)])
        row("T4", f"cross_entropy fwd+bwd [4096, 128256] {name}", ms * 1e3, "ms")
        del x
        torch.cuda.empty_cache()


def read_ours(paths):
    """bench_cuda's and bench_cpu's table rows as {(id, n-th row of that id): (value, unit)}."""
    ours, seen = {}, {}
    for path in paths:
        ours_of(path, ours, seen)
    return ours


def ours_of(path, ours, seen):
    """Adds one log's rows to ours."""
    # The first "<number> <unit>" after the id is the "ours" column; no workload name holds one.
    pattern = re.compile(r"^(G\d|H\d|O\d|C\d|A\d|T\d|TF32)\s.*?\s([0-9.]+) (us|ms|GB/s|GFLOP/s|TFLOP/s)\s")
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = pattern.match(line)
            if not m:
                continue
            gid = m.group(1)
            k = seen.get(gid, 0)
            seen[gid] = k + 1
            ours[(gid, k)] = (float(m.group(2)), m.group(3))


# Rows whose target is a speed ratio against PyTorch (> 1: tensorlet faster); the others are
# judged against their floors in bench_cuda / bench_cpu.
TARGETS = {"C3": 0.8, "C4": 0.9, "C5": 1.0, "C6": 1.0, "C8": 1.0, "O6": 0.8, "G7": 1.0,
           "G9": 1.0, "O2": 1.0, "O5": 1.0, "A3": 1.0, "T2": 1.0, "T3": 1.0, "T4": 1.0}


def compare(paths):
    ours = read_ours(paths)
    print(f"\ntensorlet (from {', '.join(paths)}) vs PyTorch {torch.__version__}; "
          "speed ratio > 1: tensorlet is faster")
    print(f"{'id':<3} {'workload':<36} {'tensorlet':>12} {'PyTorch':>12} {'unit':<8} ratio  target")
    seen = {}
    for gid, workload, value, unit in ROWS:
        k = seen.get(gid, 0)
        seen[gid] = k + 1
        mine = ours.get((gid, k))
        if mine is None or mine[1] != unit:
            print(f"{gid:<3} {workload:<36} {'-':>12} {value:12.3f} {unit:<8} -")
            continue
        # Times: PyTorch's over ours; throughputs: ours over PyTorch's.
        ratio = value / mine[0] if unit in ("us", "ms") else mine[0] / value
        target = TARGETS.get(gid)
        verdict = f"  >= {target:.2f} {'yes' if ratio >= target else 'NO'}" if target else ""
        print(f"{gid:<3} {workload:<36} {mine[0]:12.3f} {value:12.3f} {unit:<8} {ratio:.2f}{verdict}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ours", action="append",
                        help="bench_cuda's or bench_cpu's output (repeatable), to print "
                        "tensorlet/PyTorch ratios")
    parser.add_argument("--rows", default="",
                        help="only these sections, by row id, space-separated (e.g. 'G4 G9 O5'); "
                        "default: all")
    parser.add_argument("--cpu-only", action="store_true",
                        help="only the CPU rows (C3-C6, C8), also what runs without a CUDA device")
    args = parser.parse_args()
    if args.cpu_only or not torch.cuda.is_available():
        print(f"PyTorch {torch.__version__} CPU; medians of {REPS} after {WARMUP} warm-up rounds "
              "(no CUDA rows: " + ("--cpu-only)" if args.cpu_only else "PyTorch sees no CUDA device)"))
        cpu_rows()
        if args.ours:
            compare(args.ours)
        return 0
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    print(f"PyTorch {torch.__version__} (CUDA {torch.version.cuda}) eager on "
          f"{torch.cuda.get_device_name(0)}; medians of {REPS} after {WARMUP} warm-up rounds\n")
    sections = [("G1 G2", launch_bound), ("G7 G8", graphs), ("G3", gemm), ("G4", elementwise),
                ("G9", seed_loop), ("G5", alloc), ("G6", nonzero), ("H1", half_gemm),
                ("H2 H3", half_bandwidth), ("TF32", tf32_gemm), ("O1", softmax),
                ("O2 O3", ordering), ("O4", cumsum), ("O6", cpu_ops), ("O5", scatter),
                ("A3", unary_backward), ("T2", resnet_step), ("T3", adamw), ("T4", cross_entropy),
                ("C3 C4 C5 C6 C8", cpu_rows)]
    wanted = set(args.rows.upper().split())
    for ids, section in sections:
        if not wanted or wanted & set(ids.split()):
            section()
    if args.ours:
        compare(args.ours)
    return 0


if __name__ == "__main__":
    sys.exit(main())

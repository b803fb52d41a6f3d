#!/usr/bin/env python3
"""File round trips against the real readers and writers: NumPy (numpy.save, savez,
savez_compressed, numpy.load) and safetensors (safetensors.torch save_file / load_file, every
dtype bfloat16 included). Python writes files of every dtype (C and Fortran order, big-endian,
0-d, empty, NaN/inf/-0/subnormal floats); io_roundtrip (C++) loads each, moves it to a device and
saves it again; Python loads ours and compares bit for bit. usage: io_roundtrip.py BINARY WORKDIR
[DEVICE...] (default devices: cpu, and cuda:0 when torch sees a GPU)."""
import os
import subprocess
import sys

import numpy as np

NP_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]
SHAPES = [(), (0,), (7,), (3, 4), (2, 3, 5), (4, 0, 2)]


def random_array(rng, dtype, shape):
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype.startswith(("int", "uint")):
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dtype)
    a = (rng.standard_normal(size=shape) * 100).astype(dtype)
    flat = a.reshape(-1)
    specials = [np.nan, np.inf, -np.inf, -0.0, np.finfo(dtype).smallest_subnormal]
    for i, v in enumerate(specials[: flat.size]):
        flat[i] = v
    return a


def same_bits(a, b):
    """Same dtype (up to byte order), shape and element bits."""
    if a.shape != b.shape or a.dtype.newbyteorder("=") != b.dtype.newbyteorder("="):
        return False
    native = a.dtype.newbyteorder("=")
    return np.ascontiguousarray(a.astype(native)).tobytes() == np.ascontiguousarray(
        b.astype(native)).tobytes()


def write_inputs(folder, rng):
    os.makedirs(folder, exist_ok=True)
    arrays = {}
    for dtype in NP_DTYPES:
        for i, shape in enumerate(SHAPES):
            a = random_array(rng, dtype, shape)
            arrays[f"{dtype}_{i}"] = a
            if len(shape) >= 2:
                arrays[f"{dtype}_{i}_fortran"] = np.asfortranarray(a)
            if np.dtype(dtype).itemsize > 1:
                arrays[f"{dtype}_{i}_big"] = a.astype(np.dtype(dtype).newbyteorder(">"))
    for name, a in arrays.items():
        np.save(os.path.join(folder, name + ".npy"), a)
    np.savez(os.path.join(folder, "all_stored.npz"), **arrays)
    np.savez_compressed(os.path.join(folder, "all_compressed.npz"), **arrays)
    try:
        import torch
        from safetensors.torch import save_file
    except ImportError:
        return arrays, None
    tensors = {}
    g = torch.Generator().manual_seed(7)
    for dtype in [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
                  torch.float16, torch.bfloat16, torch.float32, torch.float64]:
        for i, shape in enumerate(SHAPES):
            if dtype == torch.bool:
                t = torch.randint(0, 2, shape, generator=g).bool()
            elif dtype.is_floating_point:
                t = (torch.randn(shape, generator=g, dtype=torch.float64) * 100).to(dtype)
            else:
                info = torch.iinfo(dtype)
                t = torch.randint(max(info.min, -2**62), min(info.max, 2**62), shape,
                                  generator=g, dtype=torch.int64).to(dtype)
            tensors[f"{str(dtype).split('.')[1]}_{i}"] = t.contiguous()
    save_file(tensors, os.path.join(folder, "all.safetensors"),
              metadata={"format": "pt", "note": "tensorlet round trip"})
    # Odd offsets: a 1-byte tensor first, so later ones start misaligned for their type.
    save_file({"a_u8": torch.arange(3, dtype=torch.uint8), "b_f32": torch.randn(5, generator=g),
               "c_f64": torch.randn(2, 3, generator=g, dtype=torch.float64)},
              os.path.join(folder, "odd.safetensors"))
    return arrays, tensors


def compare(in_dir, out_dir):
    passed = failed = 0
    problems = []
    for name in sorted(os.listdir(in_dir)):
        ours = os.path.join(out_dir, name)
        theirs = os.path.join(in_dir, name)
        if not os.path.exists(ours):
            failed += 1
            problems.append(f"{name}: not written")
            continue
        if name.endswith(".npy"):
            ok = same_bits(np.load(theirs), np.load(ours))
            passed, failed = passed + ok, failed + (not ok)
            if not ok:
                problems.append(f"{name}: differs")
        elif name.endswith(".npz"):
            a, b = np.load(theirs), np.load(ours)
            if sorted(a.files) != sorted(b.files):
                failed += 1
                problems.append(f"{name}: members differ")
                continue
            for k in a.files:
                ok = same_bits(a[k], b[k])
                passed, failed = passed + ok, failed + (not ok)
                if not ok:
                    problems.append(f"{name}/{k}: differs")
        elif name.endswith(".safetensors"):
            import torch
            from safetensors import safe_open
            from safetensors.torch import load_file
            a, b = load_file(theirs), load_file(ours)
            with safe_open(theirs, "pt") as fa, safe_open(ours, "pt") as fb:
                if fa.metadata() != fb.metadata():
                    failed += 1
                    problems.append(f"{name}: metadata {fa.metadata()} != {fb.metadata()}")
            if sorted(a) != sorted(b):
                failed += 1
                problems.append(f"{name}: names differ")
                continue
            for k in a:
                x, y = a[k], b[k]
                ok = (x.dtype == y.dtype and x.shape == y.shape and
                      x.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes() ==
                      y.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes())
                passed, failed = passed + ok, failed + (not ok)
                if not ok:
                    problems.append(f"{name}/{k}: differs")
    return passed, failed, problems


def main():
    binary, work = sys.argv[1], sys.argv[2]
    devices = sys.argv[3:]
    if not devices:
        devices = ["cpu"]
        try:
            import torch
            if torch.cuda.is_available():
                devices.append("cuda:0")
        except ImportError:
            pass
    in_dir = os.path.join(work, "in")
    write_inputs(in_dir, np.random.default_rng(20261127))
    total_passed = total_failed = 0
    for device in devices:
        out_dir = os.path.join(work, "out_" + device.replace(":", ""))
        run = subprocess.run([binary, in_dir, out_dir, device], capture_output=True, text=True)
        sys.stdout.write(run.stdout)
        if run.returncode != 0:
            print(f"{device}: io_roundtrip failed (exit {run.returncode}): {run.stderr.strip()}")
            total_failed += 1
            continue
        passed, failed, problems = compare(in_dir, out_dir)
        for p in problems[:20]:
            print(f"  {device}: {p}")
        print(f"{device}: {passed} tensors bit-identical after the round trip, {failed} not")
        total_passed += passed
        total_failed += failed
    print(f"{total_passed} passed, {total_failed} failed")
    return 0 if total_failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

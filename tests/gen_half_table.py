#!/usr/bin/env python3
"""Prints the torch tables pasted into tests/test_half.cpp.

    /tmp/torchvenv/bin/python tests/gen_half_table.py > /tmp/tables.inc

kTorchFloat: {float32 bits, torch float16 bits, torch bfloat16 bits} for edge cases, seeded
random floats across the whole exponent range and values at and next to rounding ties.
kTorchDouble: {float64 bits, float16 bits, bfloat16 bits} of float64 tensors (torch rounds via
float32). NaN inputs are left out of both: torch's NaN bits depend on the code path (see the
comment in the test); the test checks our canonical NaN bits on its own.
"""
import random
import struct

import torch


def f32(u):
    return struct.unpack("<f", struct.pack("<I", u))[0]


def bits32(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def bits64(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def half_bits_of(u16):
    return torch.tensor([u16 - 65536 if u16 >= 32768 else u16], dtype=torch.int16).view(
        torch.float16).to(torch.float32).item()


def main():
    rng = random.Random(20261125)
    us = []
    # Edge cases.
    edge = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 3.0, 1.0 / 3.0, -2.5, 0.1, 65504.0, -65504.0,
            65519.0, 65520.0, -65520.0, 65536.0, 1e5, 1e-5, 2.0 ** -14, 2.0 ** -24, 2.0 ** -25,
            -2.0 ** -25, 3 * 2.0 ** -26, 2.0 ** -26, 2.0 ** -14 - 2.0 ** -24, 1e-8, 1e-30, 1e30,
            3.38953139e38, 3.4e38, float("inf"), float("-inf"), 2.0 ** -126, 2.0 ** -133,
            2.0 ** -149, 1.0 + 2.0 ** -11, 1.0 + 3 * 2.0 ** -11, 1.0 + 2.0 ** -8,
            1.0 + 3 * 2.0 ** -8, 1024.5, 2049.0, 2051.0, 256.5, 257.0, 259.0]
    us += [bits32(x) for x in edge]
    us += [bits32(65520.0) - 1, bits32(65520.0) + 1, 0x7F7FFFFF, 0xFF7FFFFF, 0x00000001,
           0x007FFFFF, 0x80000001, 0x7F7F7FFF, 0x7F7F8000, 0x7F7F8001, 0x33000000, 0x33000001,
           0x387FE000, 0x387FF000, 0x387FEFFF, 0x387FF001]
    # Uniform over all non-NaN bit patterns (covers every exponent).
    while len(us) < 110:
        u = rng.getrandbits(32)
        if (u & 0x7FFFFFFF) <= 0x7F800000:
            us.append(u)
    # Uniform exponents in and around the float16 range.
    for _ in range(50):
        e = rng.randint(-30, 17)
        us.append(bits32(rng.choice([1, -1]) * rng.uniform(1, 2) * 2.0 ** e))
    # float16 ties (midpoints of random consecutive finite float16 values) and one float ulp off.
    for _ in range(50):
        h = rng.randint(0, 0x7BFE) | rng.choice([0, 0x8000])
        lo, hi = half_bits_of(h), half_bits_of(h + 1)
        mid = bits32((lo + hi) / 2)
        us += [mid] + ([mid - 1, mid + 1] if len(us) % 3 == 0 else [])
    # bfloat16 ties and one ulp off.
    for _ in range(40):
        b = (rng.randint(0, 0x7F7F) | rng.choice([0, 0x8000])) << 16
        us += [b | 0x8000] + ([b | 0x7FFF, b | 0x8001] if len(us) % 3 == 0 else [])

    t = torch.tensor([f32(u) for u in us], dtype=torch.float32)
    assert [bits32(x) for x in t.tolist()] == us
    h = t.to(torch.float16).view(torch.int16).tolist()
    b = t.to(torch.bfloat16).view(torch.int16).tolist()
    print(f"// {len(us)} rows, torch {torch.__version__}")
    print("constexpr TorchRow32 kTorchFloat[] = {")
    for u, x, y in zip(us, h, b):
        print(f"    {{0x{u:08X}u, 0x{x & 0xFFFF:04X}, 0x{y & 0xFFFF:04X}}},")
    print("};")

    # float64: torch rounds via float32, so these differ from a direct rounding.
    ds = [1 + 2.0 ** -11 + 2.0 ** -40, -(1 + 2.0 ** -11 + 2.0 ** -40), 1 + 2.0 ** -8 + 2.0 ** -30,
          -(1 + 2.0 ** -8 + 2.0 ** -30), 65519.99999, 65519.9, 0.1, 1e-300, -1e-300, 1e300,
          -1e300, 3.3895314e38 + 1e31, 2.0 ** -25 + 2.0 ** -60, 2.0 ** -25 - 2.0 ** -60,
          1.0 / 3.0, 12345.6789]
    td = torch.tensor(ds, dtype=torch.float64)
    hd = td.to(torch.float16).view(torch.int16).tolist()
    bd = td.to(torch.bfloat16).view(torch.int16).tolist()
    print("constexpr TorchRow64 kTorchDouble[] = {")
    for d, x, y in zip(ds, hd, bd):
        print(f"    {{0x{bits64(d):016X}ull, 0x{x & 0xFFFF:04X}, 0x{y & 0xFFFF:04X}}},  // {d!r}")
    print("};")


if __name__ == "__main__":
    main()

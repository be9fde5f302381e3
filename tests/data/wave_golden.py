#!/usr/bin/env python3
"""Independent float32 model of the wave kernels (issue 4): prints golden values for the tests.

Each product and sum is computed in double and rounded to float32, which is exact emulation of
float32 arithmetic (double has more than 2*24+2 bits). Usage: wave_golden.py N1xN2[xN3[xN4]]
"""
import itertools
import struct
import sys

M64 = (1 << 64) - 1
GOLD = 0x9E3779B97F4A7C15
C = (7, 13, 29, 31)
W = {2: (0.45, 0.55), 3: (0.25, 0.35, 0.4), 4: (0.1, 0.2, 0.3, 0.4)}


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def splitmix64(x):
    z = (x + GOLD) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def main():
    n = [int(v) for v in sys.argv[1].split("x")]
    dims = len(n)
    w = [f32(v) for v in W[dims]]
    a = {}
    total = 0
    for lin, idx in enumerate(itertools.product(*[range(v + 1) for v in n])):
        if min(idx) == 0:
            a[idx] = f32(f32(sum(c * i for c, i in zip(C, idx)) % 101) / f32(101.0))
            continue
        acc = None
        for d in range(dims):
            prev = list(idx)
            prev[d] -= 1
            term = f32(w[d] * a[tuple(prev)])
            acc = term if acc is None else f32(acc + term)
        a[idx] = acc
        total = (total + splitmix64((lin * GOLD + bits(acc)) & M64)) & M64
    last = tuple(n)
    print(f"checksum {total:016x} last 0x{bits(a[last]):08x}")


main()

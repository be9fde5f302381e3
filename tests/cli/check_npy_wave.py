#!/usr/bin/env python3
"""Checks an array that `tilepipe run --output` wrote, with NumPy as a user reads it.

Usage: check_npy_wave.py FILE.npy N1xN2[xN3]. The file must load with numpy.load, hold float32 of
shape (N1, N2[, N3]), and equal, bit for bit, an independent float32 model of the wave kernel
(the same model as tests/data/wave_golden.py: each product and sum rounded to float32).
"""
import itertools
import sys

import numpy as np

C = (7, 13, 29, 31)
W = {2: (0.45, 0.55), 3: (0.25, 0.35, 0.4), 4: (0.1, 0.2, 0.3, 0.4)}


def model(n):
    dims = len(n)
    w = [np.float32(v) for v in W[dims]]
    a = np.zeros([v + 1 for v in n], dtype=np.float32)
    for idx in itertools.product(*[range(v + 1) for v in n]):
        if min(idx) == 0:
            a[idx] = np.float32(np.float32(sum(c * i for c, i in zip(C, idx)) % 101) / np.float32(101.0))
            continue
        acc = None
        for d in range(dims):
            prev = list(idx)
            prev[d] -= 1
            term = np.float32(w[d] * a[tuple(prev)])
            acc = term if acc is None else np.float32(acc + term)
        a[idx] = acc
    return a[tuple(slice(1, None) for _ in n)]


def main():
    path, size = sys.argv[1], [int(v) for v in sys.argv[2].split("x")]
    got = np.load(path)
    if got.dtype != np.float32 or list(got.shape) != size:
        sys.exit(f"{path}: {got.dtype} {got.shape}, expected float32 {tuple(size)}")
    want = model(size)
    if not np.array_equal(got.view(np.uint32), want.view(np.uint32)):
        bad = np.argwhere(got.view(np.uint32) != want.view(np.uint32))
        sys.exit(f"{path}: {len(bad)} values differ, first at {tuple(bad[0])}")
    print(f"{path}: {got.dtype} {got.shape} equal to the model")


main()

#!/usr/bin/env python3
"""Inputs for simulate.mlir and the independent check of what the simulator
computed: y = x . w with x and w rounded to f16 and the products summed in
double (the simulator sums in f32), and the column sums of one row of each
tile's block of y.

usage: product.py inputs PREFIX   writes PREFIX.x (a stream line), PREFIX.w
       product.py check PREFIX    reads those and PREFIX.y, PREFIX.sums
"""
import random
import struct
import sys

M, K, N, TILES = 64, 16, 16, 4


def f16(v):
    return struct.unpack("e", struct.pack("e", v))[0]


def read(path):
    with open(path) as f:
        return [float(t) for t in f.read().split()]


def main():
    mode, prefix = sys.argv[1], sys.argv[2]
    if mode == "inputs":
        rng = random.Random(7)
        with open(prefix + ".x", "w") as f:
            f.write(" ".join(repr(rng.uniform(-2, 2)) for _ in range(M * K)) + "\n")
        with open(prefix + ".w", "w") as f:
            f.write(" ".join(repr(rng.uniform(-2, 2)) for _ in range(K * N)) + "\n")
        return 0
    x = [f16(v) for v in read(prefix + ".x")]
    w = [f16(v) for v in read(prefix + ".w")]
    y = read(prefix + ".y")
    sums = read(prefix + ".sums")
    want = [sum(x[i * K + k] * w[k * N + j] for k in range(K)) for i in range(M) for j in range(N)]
    worst = max(abs(a - b) for a, b in zip(y, want))
    rows = M // TILES
    want_sums = [sum(want[t * rows * N + j] for t in range(TILES)) for j in range(N)]
    worst_sums = max(abs(a - b) for a, b in zip(sums, want_sums))
    # The simulator sums in f32: 16 products below 4 in magnitude each round
    # at most 16 * 4 * 2**-24 ~ 4e-6 away from the exact sum; f16 rounding of
    # the inputs is shared (both start from the same f16 values).
    bound = K * 4 * 2.0 ** -24
    ok = len(y) == M * N and len(sums) == N and worst <= bound and worst_sums <= 4 * bound
    print(f"product {'ok' if ok else 'WRONG'}: y worst error {worst:.2e}, sums worst error {worst_sums:.2e}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

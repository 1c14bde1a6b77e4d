#!/usr/bin/env python3
"""Inputs for simulate.mlir and the independent check of what the simulator
computed: y = x . w with x and w rounded to f16 and the products summed in
double (the simulator sums in f32), and the column sums of one row of each
tile's block of y.

usage: product.py inputs PREFIX   writes PREFIX.x (a stream line), PREFIX.w
       product.py check PREFIX    reads those and PREFIX.y, PREFIX.sums
"""
import random
import sys

from ipu21_numbers import gamma, read, rounded

M, K, N, TILES = 64, 16, 16, 4


def f16(v):
    return rounded("e", v)


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
    # The simulator sums in f32 (gamma bounds its error); both sides start
    # from the same f16 inputs.
    terms = [[x[i * K + k] * w[k * N + j] for k in range(K)] for i in range(M) for j in range(N)]
    want = [sum(t) for t in terms]
    size = [sum(abs(v) for v in t) for t in terms]
    worst = max(abs(a - b) / (gamma(K) * s) for a, b, s in zip(y, want, size))
    rows = M // TILES
    picked = [[t * rows * N + j for t in range(TILES)] for j in range(N)]
    want_sums = [sum(want[e] for e in p) for p in picked]
    # The sums add four f32 products, each already within its bound.
    size_sums = [sum(size[e] for e in p) for p in picked]
    worst_sums = max(abs(a - b) / (gamma(K + TILES) * s)
                     for a, b, s in zip(sums, want_sums, size_sums))
    ok = len(y) == M * N and len(sums) == N and worst <= 1 and worst_sums <= 1
    print(f"product {'ok' if ok else 'WRONG'}: worst errors {worst:.1%} (y) and "
          f"{worst_sums:.1%} (sums) of their bounds")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

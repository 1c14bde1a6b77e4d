#!/usr/bin/env python3
"""Inputs for serial-k.mlir and the independent check of its product:
y = A . B summed in double; the simulator sums f32 products in f32.

usage: serial_k.py inputs PREFIX   writes PREFIX.a and PREFIX.b
       serial_k.py check PREFIX    reads those and PREFIX.y
"""
import random
import sys

from ipu21_numbers import gamma, read, rounded

M, K, N = 8, 64, 16


def f32(v):
    return rounded("f", v)


def main():
    mode, prefix = sys.argv[1], sys.argv[2]
    if mode == "inputs":
        rng = random.Random(11)
        for name, n in (("a", M * K), ("b", K * N)):
            with open(prefix + "." + name, "w") as f:
                f.write(" ".join(repr(f32(rng.uniform(-1, 1))) for _ in range(n)) + "\n")
        return 0
    a, b, y = read(prefix + ".a"), read(prefix + ".b"), read(prefix + ".y")
    # f32 products summed in f32: each product rounds once and the sum of K
    # terms adds gamma(K): within gamma(K + 1) of the exact sum.
    bound = gamma(K + 1)
    worst = 0.0
    for i in range(M):
        for j in range(N):
            terms = [a[i * K + k] * b[k * N + j] for k in range(K)]
            err = abs(y[i * N + j] - sum(terms)) / (bound * sum(abs(t) for t in terms))
            worst = max(worst, err)
    ok = len(y) == M * N and worst <= 1
    print(f"serial k {'ok' if ok else 'WRONG'}: worst error {worst:.1%} of its bound")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Checks synpl-ipu21-sim's products of Inputs/backward-128x128x96.mlir.

usage: check_backward.py inputs PREFIX    writes PREFIX.{x,g,w} (integers in [-3, 3])
       check_backward.py numbers PREFIX   compares PREFIX.dw with x^T g and
                                          PREFIX.dx with g w^T

Sums of small integers are exact in f32 in any order: a transposed operand
read the wrong way round, a lost chunk or a misplaced block is never hidden
by rounding.
"""
import random
import sys

B, I, O = 128, 128, 96


def read(path):
    return [float(t) for t in open(path).read().split()]


def main():
    mode, prefix = sys.argv[1], sys.argv[2]
    if mode == "inputs":
        rng = random.Random(11)
        for name, n in (("x", B * I), ("g", B * O), ("w", I * O)):
            with open(prefix + "." + name, "w") as f:
                f.write(" ".join(str(rng.randint(-3, 3)) for _ in range(n)) + "\n")
        return 0
    x, g, w = read(prefix + ".x"), read(prefix + ".g"), read(prefix + ".w")
    dw, dx = read(prefix + ".dw"), read(prefix + ".dx")
    want_dw = [sum(x[k * I + i] * g[k * O + j] for k in range(B)) for i in range(I) for j in range(O)]
    want_dx = [sum(g[i * O + k] * w[j * O + k] for k in range(O)) for i in range(B) for j in range(I)]
    bad = sum(a != b for a, b in zip(dw, want_dw)) + sum(a != b for a, b in zip(dx, want_dx))
    bad += abs(len(dw) - len(want_dw)) + abs(len(dx) - len(want_dx))
    print(f"backward {'ok' if bad == 0 else 'WRONG'}: {bad} elements differ")
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

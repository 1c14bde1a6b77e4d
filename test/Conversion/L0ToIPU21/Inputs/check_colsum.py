#!/usr/bin/env python3
"""Checks synpl-ipu21-sim's column sums of Inputs/colsum-4096x8.mlir.

usage: check_colsum.py inputs PREFIX    writes PREFIX.x (integers in [-8, 8])
       check_colsum.py numbers PREFIX   compares PREFIX.y with 1 + the sums

The sums of small integers are exact in f32 in any order, so the two-stage
fold (groups of rows, then their partials) must give them exactly.
"""
import random
import sys

ROWS, COLS = 4096, 8


def main():
    mode, prefix = sys.argv[1], sys.argv[2]
    if mode == "inputs":
        rng = random.Random(3)
        with open(prefix + ".x", "w") as f:
            f.write(" ".join(str(rng.randint(-8, 8)) for _ in range(ROWS * COLS)) + "\n")
        return 0
    x = [float(t) for t in open(prefix + ".x").read().split()]
    y = [float(t) for t in open(prefix + ".y").read().split()]
    want = [1 + sum(x[i * COLS + j] for i in range(ROWS)) for j in range(COLS)]
    ok = y == want
    print(f"colsum {'ok' if ok else 'WRONG'}: {y} vs {want}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

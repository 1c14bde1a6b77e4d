#!/usr/bin/env python3
"""Checks what synpl-ipu21-sim computed or charged for a planned product.

usage: check_matmul.py inputs M K N PREFIX   writes PREFIX.a, PREFIX.b
       check_matmul.py numbers M K N PREFIX  compares PREFIX.c with A . B
       check_matmul.py speed M K N REPORT [SEARCH]
                                              the report's (JSON) use of the chip;
                                              with the search's JSON report, its
                                              winner's estimate against the cycles

numbers: A and B hold integers in [-2, 2], exact in f16, so every partial
sum is an integer below 2**24 in magnitude: exact in f32 in any order. C
must equal the exact product, element for element (a lost chunk, a
misplaced row or a wrong column is never hidden by rounding).
speed: the product's FLOPs over the cycles times the chip's FP16 AMP peak
(tiles x 128 FLOP per cycle), and the AMP phase's tile utilisation. The
planner rates exchanges at the bound no schedule beats; the simulator
charges the schedule the program carries: the estimate must equal the
simulated cycles with every exchange at its bound, and the schedule stay
within 5% of that bound.
"""
import json
import random
import sys


def read(path):
    with open(path) as f:
        return [float(t) for t in f.read().split()]


def main():
    mode, M, K, N, prefix = sys.argv[1], *map(int, sys.argv[2:5]), sys.argv[5]
    if mode == "inputs":
        rng = random.Random(5)
        for name, n in (("a", M * K), ("b", K * N)):
            with open(prefix + "." + name, "w") as f:
                f.write(" ".join(str(rng.randint(-2, 2)) for _ in range(n)) + "\n")
        return 0
    if mode == "numbers":
        a, b, c = read(prefix + ".a"), read(prefix + ".b"), read(prefix + ".c")
        assert 4 * K < 2 ** 24, "partial sums must stay exact in f32"
        wrong = 0
        for i in range(M):
            row = a[i * K:(i + 1) * K]
            for j in range(N):
                if c[i * N + j] != sum(row[k] * b[k * N + j] for k in range(K)):
                    wrong += 1
        ok = len(c) == M * N and wrong == 0
        print(f"matmul {'ok' if ok else 'WRONG'}: {wrong} of {M * N} elements differ")
        return 0 if ok else 1
    report = json.load(open(prefix))
    peak = report["tiles"] * 128
    efficiency = 2 * M * N * K / (report["totalCycles"] * peak)
    amp = [p for p in report["phases"] if p["kind"] == "execute" and p["name"].endswith(".mm")]
    utilisation = amp[0]["utilisation"] if amp else 0
    ok = efficiency >= 0.60 and utilisation >= 0.80
    print(f"speed {'ok' if ok else 'SLOW'}: {efficiency:.1%} of the FP16 AMP peak, "
          f"AMP phase tile utilisation {utilisation:.1%}, {report['totalCycles']} cycles")
    if len(sys.argv) > 6:
        # The planner scores with the simulator's cost model: its estimate of
        # the winner is the simulated cycles, exactly, exchanges at their bound.
        with open(sys.argv[6]) as f:
            winner = [json.loads(line) for line in f if line.startswith("{")][0]["top"][0]
        copies = [p for p in report["phases"] if p["kind"] == "copy"]
        scheduled = sum(p["cycles"] for p in copies)
        bound = sum(p["boundCycles"] for p in copies)
        at_bound = report["totalCycles"] - scheduled + bound
        same = winner["cost"] == at_bound
        print(f"estimate {'matches' if same else 'DIFFERS'}: {winner['cost']} cycles planned, "
              f"{at_bound} simulated with exchanges at their bound")
        tight = scheduled <= 1.05 * bound
        print(f"schedule {'ok' if tight else 'LOOSE'}: exchanges {scheduled} cycles as "
              f"scheduled, bound {bound} ({bound / scheduled:.1%})")
        ok = ok and same and tight
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

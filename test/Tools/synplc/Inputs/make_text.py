#!/usr/bin/env python3
"""Writes a small text file for the text-training tests: `--bytes N` bytes of
sentences drawn (seeded) from a few words, so the next byte depends on the
bytes before it; `--bytes 0` writes an empty file."""
import argparse
import random

ap = argparse.ArgumentParser()
ap.add_argument("path")
ap.add_argument("--bytes", type=int, default=20000)
a = ap.parse_args()
rng = random.Random(7)
words = ["the", "cat", "sat", "on", "a", "mat", "and", "dog", "ran", "far", "away"]
out = []
n = 0
while n < a.bytes:
    s = " ".join(rng.choice(words) for _ in range(rng.randint(3, 8))) + ".\n"
    out.append(s)
    n += len(s)
with open(a.path, "w") as f:
    f.write("".join(out)[: a.bytes])

#!/usr/bin/env python3
"""Writes a small Fashion-MNIST-shaped IDX pair (gzip'd) into DIR, named
like the real files, with optional damage for the bad-input tests:
  make_idx.py DIR [--samples N] [--label-value V] [--images-magic M]
              [--truncate-images BYTES] [--labels-samples N] [--random SEED]
Sample i's pixels are (7 i + j) % 256 and its label i % 10; with --random
the pixels and labels are drawn from Python's random.Random(SEED) instead,
so that no two samples look alike (the batch-trace checks tell every
record from every other).
"""
import argparse
import gzip
import os
import random
import struct

ap = argparse.ArgumentParser()
ap.add_argument("dir")
ap.add_argument("--samples", type=int, default=256)
ap.add_argument("--labels-samples", type=int)
ap.add_argument("--label-value", type=int, help="the label of sample 5")
ap.add_argument("--images-magic", type=lambda s: int(s, 0), default=0x803)
ap.add_argument("--truncate-images", type=int, help="keep only this many bytes of the raw images file")
ap.add_argument("--prefix", default="train")
ap.add_argument("--random", type=int, metavar="SEED", help="random pixels and labels")
a = ap.parse_args()
os.makedirs(a.dir, exist_ok=True)

n = a.samples
rng = random.Random(a.random) if a.random is not None else None
if rng:
    pixels = rng.randbytes(n * 784)
else:
    pixels = bytes((i * 7 + j) % 256 for i in range(n) for j in range(784))
images = struct.pack(">IIII", a.images_magic, n, 28, 28) + pixels
if a.truncate_images is not None:
    images = images[: a.truncate_images]
nl = a.labels_samples if a.labels_samples is not None else n
labels = bytearray(rng.randrange(10) if rng else i % 10 for i in range(nl))
if a.label_value is not None:
    labels[5] = a.label_value
labels = struct.pack(">II", 0x801, nl) + bytes(labels)
with gzip.open(os.path.join(a.dir, a.prefix + "-images-idx3-ubyte.gz"), "wb") as f:
    f.write(images)
with gzip.open(os.path.join(a.dir, a.prefix + "-labels-idx1-ubyte.gz"), "wb") as f:
    f.write(labels)

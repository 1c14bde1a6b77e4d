#!/usr/bin/env python3
"""Writes a Fashion-MNIST-shaped IDX pair (gzip'd) into DIR whose images are
f32 (IDX type 0x0D), with pixel P of every sample NaN (--nan-pixel P):
  make_f32_idx.py DIR [--samples N] [--nan-pixel P]
The file names are the u8 files' (train-images-idx3-ubyte.gz, ...)."""
import argparse
import array
import gzip
import os
import struct
import sys

ap = argparse.ArgumentParser()
ap.add_argument("dir")
ap.add_argument("--samples", type=int, default=256)
ap.add_argument("--nan-pixel", type=int)
a = ap.parse_args()
os.makedirs(a.dir, exist_ok=True)

n = a.samples
values = array.array("f", (((i * 7 + j) % 256) / 255.0 for i in range(n) for j in range(784)))
if a.nan_pixel is not None:
    for i in range(n):
        values[i * 784 + a.nan_pixel] = float("nan")
if sys.byteorder == "little":
    values.byteswap()  # IDX is big-endian
images = struct.pack(">IIII", 0x0D03, n, 28, 28) + values.tobytes()
labels = struct.pack(">II", 0x801, n) + bytes(i % 10 for i in range(n))
with gzip.open(os.path.join(a.dir, "train-images-idx3-ubyte.gz"), "wb") as f:
    f.write(images)
with gzip.open(os.path.join(a.dir, "train-labels-idx1-ubyte.gz"), "wb") as f:
    f.write(labels)

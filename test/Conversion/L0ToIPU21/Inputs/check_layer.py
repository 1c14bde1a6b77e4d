#!/usr/bin/env python3
"""Checks what synpl-ipu21-sim computed for layer-16x64x32.mlir.

usage: check_layer.py inputs PREFIX    writes PREFIX.{images,w,bias,gain,beta}
       check_layer.py numbers PREFIX   compares PREFIX.{h,xn,y} with the layer
                                       computed here in double precision

The reference is the layer's own formula (a product with its bias, the
LayerNorm's centring and scaling, gain, bias and the tanh form of GELU), not
the kernels' UOps: a misplaced window, a lost row or a wrong tile's slice
is off by far more than the f32 rounding the tolerance allows (each value
within 2e-5 relative of its magnitude, or 2e-5 absolute near zero).
"""
import math
import random
import sys

B, D, H = 16, 64, 32
TOL = 2e-5


def read(path):
    with open(path) as f:
        return [float(t) for t in f.read().split()]


def write(path, values):
    with open(path, "w") as f:
        f.write(" ".join(repr(v) for v in values) + "\n")


def layer(images, w, bias, gain, beta):
    h = [sum(images[i * D + k] * w[k * H + j] for k in range(D)) + bias[j]
         for i in range(B) for j in range(H)]
    xn, y = [], []
    for i in range(B):
        row = h[i * H:(i + 1) * H]
        mean = sum(row) / H
        centred = [v - mean for v in row]
        rstd = 1.0 / math.sqrt(sum(c * c for c in centred) / H + 1e-5)
        for j, c in enumerate(centred):
            n = c * rstd
            a = n * gain[j] + beta[j]
            t = math.tanh(0.7978845608 * (a + 0.044715 * a ** 3))
            xn.append(n)
            y.append(0.5 * a * (1 + t))
    return h, xn, y


def main():
    mode, prefix = sys.argv[1], sys.argv[2]
    if mode == "inputs":
        rng = random.Random(7)
        for name, n in (("images", B * D), ("w", D * H), ("bias", H), ("gain", H), ("beta", H)):
            write(prefix + "." + name, [round(rng.uniform(-1, 1), 3) for _ in range(n)])
        return 0
    args = [read(prefix + "." + n) for n in ("images", "w", "bias", "gain", "beta")]
    bad = 0
    for name, want in zip(("h", "xn", "y"), layer(*args)):
        got = read(prefix + "." + name)
        if len(got) != len(want):
            print(f"{name}: {len(got)} values, expected {len(want)}")
            return 1
        wrong = [i for i, (g, e) in enumerate(zip(got, want)) if abs(g - e) > TOL * max(1, abs(e))]
        if wrong:
            i = wrong[0]
            print(f"{name}: {len(wrong)} of {len(want)} differ; first [{i}] = {got[i]}, expected {want[i]}")
        bad += len(wrong)
    print("layer ok" if bad == 0 else "layer WRONG")
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

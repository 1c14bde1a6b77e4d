#!/usr/bin/env python3
"""Checks the output of a text program's run against its data: the last line
is `done steps=S val_loss=V val_bits_per_byte=B tokens_per_s=T` with
B = V / ln 2 and S the steps asked for; every other line is
`step=... loss=... val_loss=... tokens_per_s=...`; and the validation loss is
below the entropy of the validation split's bytes under their own unigram
distribution (computed here from the file), i.e. the model uses the context."""
import math
import re
import sys
from collections import Counter

out, text, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
lines = open(out).read().split("\n")
lines = [l for l in lines if l]
step_re = re.compile(r"^step=(\d+) loss=([0-9.]+) val_loss=([0-9.]+) tokens_per_s=(\d+)$")
for l in lines[:-1]:
    assert step_re.match(l), "not a step line: " + l
m = re.match(r"^done steps=(\d+) val_loss=([0-9.]+) val_bits_per_byte=([0-9.]+) tokens_per_s=(\d+)$",
             lines[-1])
assert m, "not a done line: " + lines[-1]
assert int(m.group(1)) == steps, lines[-1]
v, b = float(m.group(2)), float(m.group(3))
assert abs(b - v / math.log(2)) < 2e-3, (v, b)
data = open(text, "rb").read()
val = data[len(data) * 9 // 10:]
c = Counter(val)
h = -sum(n / len(val) * math.log(n / len(val)) for n in c.values())
assert v < h - 0.3, "val_loss %.4f is not below the unigram entropy %.4f - 0.3" % (v, h)
print("ok val_loss=%.4f unigram=%.4f" % (v, h))

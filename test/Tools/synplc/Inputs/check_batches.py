#!/usr/bin/env python3
"""Checks what a compiled program fed its kernels, from the lines its runtime
wrote under SYNPL_RT_TRACE_BATCHES=FILE (docs/data-binding.md):

  epoch E batch B indices i0 i1 ... labels l0 l1 ... checksum H
  test batch B indices ... labels ... checksum H

against its own reading of the IDX files (gzip + struct; none of the
runtime's code).

  check_batches.py check TRACE --data DIR --program PROG.l1.mlir
        [--pixels u8|f32] [--steps S] [--epochs E] [--first-epoch E]
        [--test-batches T]
    Every line: its indices lie in [0, N); its labels are the label file's
    records at those indices; H is the FNV-1a 64 of the image records at
    those indices as the image slot holds them (u8: the file's bytes; f32:
    each byte x as the f32 nearest x / 255), padding rows (past the end of
    the split) zero. Per epoch: batches 0 .. S-1 in order, S = --steps (or
    every batch of the split under the program's drop_last); no sample twice;
    a full epoch without drop_last is a permutation of 0 .. N-1. With the
    program's `shuffle`: the epoch's order is not the file order, and
    consecutive epochs' orders differ; without it, the file order. The
    batch size, shuffle and drop_last are read from the program's
    l1.read_batch. Test lines: the test split (t10k-*) in file order.

  check_batches.py resume FULL KILLED RESUMED --at E B
    A run stopped (KILLED) and resumed from its checkpoint at epoch E,
    batch B (RESUMED) gathered what the uninterrupted run (FULL) did:
    KILLED's training lines are the first lines of FULL's, RESUMED's first
    training line is epoch E batch B, and from there on RESUMED's training
    lines are FULL's, line for line, to the end.
"""
import argparse
import gzip
import os
import re
import struct
import sys

FNV_OFFSET, FNV_PRIME, MASK = 0xCBF29CE484222325, 0x100000001B3, (1 << 64) - 1


def fnv1a(data, h=FNV_OFFSET):
    for c in data:
        h = ((h ^ c) * FNV_PRIME) & MASK
    return h


def fail(msg):
    sys.exit("check_batches: " + msg)


def read_idx(path):
    """(dims, payload bytes) of an IDX file of unsigned bytes."""
    if not os.path.exists(path) and os.path.exists(path + ".gz"):
        path += ".gz"
    raw = open(path, "rb").read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    zero, kind, rank = struct.unpack(">HBB", raw[:4])
    if zero != 0 or kind != 0x08:
        fail(f"{path}: not an IDX file of unsigned bytes")
    dims = struct.unpack(">" + "I" * rank, raw[4:4 + 4 * rank])
    return dims, raw[4 + 4 * rank:]


class Split:
    def __init__(self, folder, prefix, pixels):
        dims, self.images = read_idx(os.path.join(folder, prefix + "-images-idx3-ubyte"))
        ldims, self.labels = read_idx(os.path.join(folder, prefix + "-labels-idx1-ubyte"))
        self.n, self.size = dims[0], dims[1] * dims[2]
        if ldims[0] != self.n:
            fail(f"{folder}: {ldims[0]} labels for {self.n} images")
        # f32 slot: byte x becomes the f32 nearest x / 255 (x / 255 in double
        # is never halfway between two floats: its bits repeat x's 8).
        self.unit = [struct.pack("<f", x / 255) for x in range(256)] if pixels == "f32" else None
        self.pad = bytes(self.size * (4 if self.unit else 1))

    def record(self, i):
        rec = self.images[i * self.size:(i + 1) * self.size]
        return b"".join(self.unit[x] for x in rec) if self.unit else rec


def parse(path):
    """[(kind, epoch, batch, indices, labels, checksum)] of a trace file."""
    out = []
    for no, line in enumerate(open(path), 1):
        m = re.fullmatch(r"(?:epoch (\d+)|(test)) batch (\d+) indices([ 0-9]*?)"
                         r"(?: labels([ 0-9]*))? checksum ([0-9a-f]{16})\n", line)
        if not m:
            fail(f"{path}:{no}: not a trace line: {line!r}")
        kind = "test" if m.group(2) else "train"
        out.append((kind, int(m.group(1) or 0), int(m.group(3)),
                    [int(x) for x in m.group(4).split()],
                    [int(x) for x in (m.group(5) or "").split()], m.group(6)))
    return out


def check_line(where, split, batch, indices, labels, checksum):
    if len(indices) > batch:
        fail(f"{where}: {len(indices)} rows in a batch of {batch}")
    for i in indices:
        if not 0 <= i < split.n:
            fail(f"{where}: sample {i} outside [0, {split.n})")
    want = [split.labels[i] for i in indices]
    if labels != want:
        fail(f"{where}: labels {labels[:8]}... but the label file has {want[:8]}... at those indices")
    h = FNV_OFFSET
    for i in indices:
        h = fnv1a(split.record(i), h)
    for _ in range(batch - len(indices)):
        h = fnv1a(split.pad, h)
    if f"{h:016x}" != checksum:
        fail(f"{where}: checksum {checksum} of the gathered images, but the image "
             f"file's records at those indices give {h:016x}")


def check(a):
    prog = open(a.program).read()
    m = re.search(r"l1\.read_batch @\w+ \[[^\]]*\] batch (\d+)((?: \w+)*?) seed", prog)
    if not m:
        fail(f"{a.program}: no l1.read_batch")
    batch, flags = int(m.group(1)), m.group(2).split()
    shuffle, drop_last = "shuffle" in flags, "drop_last" in flags
    train = Split(a.data, "train", a.pixels)
    lines = parse(a.trace)
    per_epoch = train.n // batch if drop_last else -(-train.n // batch)
    steps = min(a.steps, per_epoch) if a.steps else per_epoch
    epochs = {}
    for no, (kind, e, b, idx, lab, h) in enumerate(lines, 1):
        if kind == "train":
            epochs.setdefault(e, []).append((b, idx))
            check_line(f"{a.trace}:{no} (epoch {e}, batch {b})", train, batch, idx, lab, h)
    want = list(range(a.first_epoch, a.first_epoch + a.epochs)) if a.epochs else sorted(epochs)
    if sorted(epochs) != want or not want:
        fail(f"training epochs {sorted(epochs)}, expected {want}")
    orders = {}
    for e in want:
        got = [b for b, _ in epochs[e]]
        if got != list(range(steps)):
            fail(f"epoch {e}: batches {got}, expected 0 .. {steps - 1}")
        order = [i for _, idx in epochs[e] for i in idx]
        rows = min(steps * batch, train.n)
        if len(order) != rows or len(set(order)) != rows:
            fail(f"epoch {e}: {len(order)} rows, {len(set(order))} distinct samples; expected {rows} distinct")
        if steps == per_epoch and not drop_last and sorted(order) != list(range(train.n)):
            fail(f"epoch {e}: not a permutation of the {train.n} samples")
        if shuffle and order == list(range(rows)):
            fail(f"epoch {e}: the file order, but the program shuffles")
        if not shuffle and order != list(range(rows)):
            fail(f"epoch {e}: not the file order, but the program does not shuffle")
        orders[e] = order
    if shuffle:
        for e in want[1:]:
            if orders[e] == orders[e - 1]:
                fail(f"epochs {e - 1} and {e} gathered the same order")
    tests = [(no, b, idx, lab, h) for no, (kind, _, b, idx, lab, h) in enumerate(lines, 1)
             if kind == "test"]
    if tests or a.test_batches:
        test = Split(a.data, "t10k", a.pixels)
        for no, b, idx, lab, h in tests:
            if idx != list(range(b * batch, min((b + 1) * batch, test.n))):
                fail(f"{a.trace}:{no}: test batch {b} is not the file's samples in order")
            check_line(f"{a.trace}:{no} (test batch {b})", test, batch, idx, lab, h)
        if a.test_batches and len(tests) != a.test_batches:
            fail(f"{len(tests)} test batches, expected {a.test_batches}")
    print(f"{len(lines)} batches as the IDX files hold them: {len(want)} epochs of {steps} "
          f"batches of {batch} ({'shuffled' if shuffle else 'in file order'}), {len(tests)} test batches")


def resume(a):
    full, killed, resumed = ([l for l in parse(p) if l[0] == "train"]
                             for p in (a.full, a.killed, a.resumed))
    if not killed or killed != full[:len(killed)]:
        fail(f"{a.killed}: its {len(killed)} batches are not the first of {a.full}")
    if not resumed or resumed[0][1:3] != (a.at[0], a.at[1]):
        fail(f"{a.resumed}: starts at {resumed[0][1:3] if resumed else 'nothing'}, "
             f"expected epoch {a.at[0]}, batch {a.at[1]}")
    start = next((k for k, l in enumerate(full) if l[1:3] == resumed[0][1:3]), None)
    if start is None or resumed != full[start:]:
        fail(f"{a.resumed}: its {len(resumed)} batches are not those of {a.full} from "
             f"epoch {a.at[0]}, batch {a.at[1]} on ({len(full) - (start or 0)} batches)")
    print(f"resumed at epoch {a.at[0]}, batch {a.at[1]}: the {len(resumed)} batches of the "
          f"uninterrupted run from there; the stopped run's {len(killed)} batches its first")


ap = argparse.ArgumentParser()
sub = ap.add_subparsers(dest="cmd", required=True)
c = sub.add_parser("check")
c.add_argument("trace")
c.add_argument("--data", required=True)
c.add_argument("--program", required=True)
c.add_argument("--pixels", choices=["u8", "f32"], default="u8")
c.add_argument("--steps", type=int, default=0)
c.add_argument("--epochs", type=int, default=0)
c.add_argument("--first-epoch", type=int, default=1)
c.add_argument("--test-batches", type=int, default=0)
r = sub.add_parser("resume")
r.add_argument("full")
r.add_argument("killed")
r.add_argument("resumed")
r.add_argument("--at", type=int, nargs=2, required=True, metavar=("EPOCH", "BATCH"))
a = ap.parse_args()
check(a) if a.cmd == "check" else resume(a)

"""compare_losses.py A B RTOL [--steps] [--count N] [--accuracy ATOL]

The losses of two runs agree to a relative tolerance: |a - b| <= RTOL *
max(|a|, |b|) for each pair, and there are as many (at least one).

  default     the `epoch=E loss=L` lines (a compiled program's stdout, or
              synpl-interp --train's)
  --steps     the per-step losses of --metrics files: the JSON lines
              {"kind":"step","step":S,...,"loss":L}, matched by step S
  --text      a text program's `step=S loss=L val_loss=V` lines (the
              validation loss to RTOL too) and its `done` line
  --count N   only the first N of each (both must have that many)
  --accuracy ATOL
              also the epoch lines' test_accuracy=A, to ATOL absolute (an
              argmax near a tie can flip between float and double)

Prints how many agree and the largest relative difference seen.
"""
import argparse
import json
import re
import sys

ap = argparse.ArgumentParser()
ap.add_argument("a")
ap.add_argument("b")
ap.add_argument("rtol", type=float)
ap.add_argument("--steps", action="store_true")
ap.add_argument("--text", action="store_true")
ap.add_argument("--count", type=int)
ap.add_argument("--accuracy", type=float)
args = ap.parse_args()


def epoch_lines(path):
    return [(int(m.group(1)), float(m.group(2)), m.group(3))
            for m in re.finditer(r"^epoch=(\d+) loss=([-0-9.e+naninf]+)(?: test_accuracy=(\S+))?",
                                 open(path).read(), re.M)]


def step_losses(path):
    out = []
    for line in open(path):
        if line.startswith("{"):
            rec = json.loads(line)
            if rec.get("kind") == "step":
                loss = rec["loss"]
                out.append((rec["step"], float("nan") if loss is None else float(loss), None))
    return out


def text_lines(path):
    out = []
    for m in re.finditer(r"^(?:step=(\d+) loss=(\S+)|done steps=(\d+)) val_loss=(\S+)",
                         open(path).read(), re.M):
        if m.group(1):
            out.append((int(m.group(1)), float(m.group(2)), m.group(4)))
        else:  # the done line: its validation loss only
            out.append(("done", float(m.group(4)), m.group(4)))
    return out


def close(x, y):
    scale = max(abs(x), abs(y))
    return abs(x - y) <= args.rtol * scale, (abs(x - y) / scale if scale else 0.0)


read = step_losses if args.steps else text_lines if args.text else epoch_lines
a, b = read(args.a), read(args.b)
what = "step" if args.steps or args.text else "epoch"
if args.count is not None:
    if len(a) < args.count or len(b) < args.count:
        sys.exit(f"fewer than {args.count} {what} losses: {len(a)} and {len(b)}")
    a, b = a[:args.count], b[:args.count]
if not a or len(a) != len(b):
    sys.exit(f"{what} losses differ in number: {len(a)} vs {len(b)}")
worst = 0.0
for (ka, x, acc_a), (kb, y, acc_b) in zip(a, b):
    if ka != kb:
        sys.exit(f"{what} {ka} of {args.a} paired with {what} {kb} of {args.b}")
    scale = max(abs(x), abs(y))
    rel = abs(x - y) / scale if scale else 0.0
    if not abs(x - y) <= args.rtol * scale:
        sys.exit(f"{what} {ka}: losses {x} and {y} differ by {rel:.3g} relative, beyond {args.rtol}")
    worst = max(worst, rel)
    if args.text:
        ok, rel = close(float(acc_a), float(acc_b))
        if not ok:
            sys.exit(f"{what} {ka}: val_loss {acc_a} and {acc_b} differ by {rel:.3g} relative, "
                     f"beyond {args.rtol}")
        worst = max(worst, rel)
    if args.accuracy is not None:
        if acc_a is None or acc_b is None or (acc_a == "none") != (acc_b == "none"):
            sys.exit(f"{what} {ka}: test_accuracy {acc_a} vs {acc_b}")
        if acc_a != "none" and not abs(float(acc_a) - float(acc_b)) <= args.accuracy:
            sys.exit(f"{what} {ka}: test_accuracy {acc_a} and {acc_b} differ beyond {args.accuracy}")
print(f"{len(a)} {'lines (loss and val_loss)' if args.text else what + ' losses'} agree "
      f"within {args.rtol}")
print(f"largest relative difference {worst:.2g}", file=sys.stderr)

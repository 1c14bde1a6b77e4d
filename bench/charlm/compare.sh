#!/usr/bin/env bash
# The character-level language model against its PyTorch peer, interleaved:
# compiles examples/charlm/charlm.methods.syn (the peer's exact model: D=128, 2
# pre-norm blocks, 4 heads, context 64, batch 32, Adam 1e-3, warmup 100 then
# cosine) and runs it and ../shared/peers/torch_charlm.py alternately,
# ROUNDS times (default 1), each for STEPS update steps (default 1000), on
# the same text file. Prints each run's `done` line, then the mean
# validation losses, their difference (the target: within 0.05 nats) and
# the tokens/s ratio (ours / peer).
#   bench/charlm/compare.sh [build-dir]
#   ROUNDS=3 STEPS=1000 THREADS=1 PEER=/path/to/torch_charlm.py bench/charlm/compare.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$here/../.."
build="${1:-$root/build}"
rounds="${ROUNDS:-1}"
steps="${STEPS:-1000}"
threads="${THREADS:-1}"
peer="${PEER:-$root/../shared/peers/torch_charlm.py}"
text=/usr/share/games/fortunes/cookie
"$here/../install-deps.sh"
[ -f "$text" ] || "$root/scripts/install-deps.sh"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$build/bin/synplc" "$root/examples/charlm/charlm.methods.syn" -o "$work/charlm"
ours=() theirs=()
for r in $(seq 1 "$rounds"); do
  line="$("$work/charlm" --steps "$steps" --threads "$threads" | tail -1)"
  echo "synplexum round $r: $line"
  ours+=("$line")
  line="$(/usr/bin/python3 "$peer" --steps "$steps" --threads "$threads" --text "$text" | tail -1)"
  echo "torch     round $r: $line"
  theirs+=("$line")
done
printf '%s\n' "${ours[@]}" >"$work/ours"
printf '%s\n' "${theirs[@]}" >"$work/theirs"
/usr/bin/python3 - "$work/ours" "$work/theirs" <<'PY'
import re, sys
def read(p):
    rows = [dict(re.findall(r"(\w+)=([0-9.eE+-]+|nan)", l)) for l in open(p) if l.startswith("done")]
    return (sum(float(r["val_loss"]) for r in rows) / len(rows),
            sum(float(r["tokens_per_s"]) for r in rows) / len(rows))
(v1, t1), (v2, t2) = read(sys.argv[1]), read(sys.argv[2])
print(f"val_loss synplexum={v1:.4f} torch={v2:.4f} diff={v1 - v2:+.4f} "
      f"(target: within 0.05)")
print(f"tokens_per_s synplexum={t1:.0f} torch={t2:.0f} ratio={t1 / t2:.2f}")
PY

#!/usr/bin/env bash
# The device check of the CUDA sink, run on a machine with an NVIDIA GPU from
# the bundle bench/gpu/prepare.sh built on the CPU machine. Every GPU command
# runs under `timeout` (a device-side hang cannot eat the session), the
# timeouts sum to under 6 minutes, and each stage prints one verdict line:
#   VERDICT <stage>: ok|FAILED|SKIPPED (<why or figures>)
# The stages, cheapest and most telling first:
#   gpu      nvidia-smi's name, driver and memory
#   smoke    50 steps, every launch synchronous and checked, no graphs, no
#            overlap (SYNPL_CUDA_SYNC=1 SYNPL_CUDA_GRAPHS=0
#            SYNPL_CUDA_OVERLAP=0): a failing kernel is named; each step's
#            loss within 2% of the host build's (the same plan compiled for
#            the CPU by prepare.sh, bundle/host_smoke.jsonl)
#   graphs   the same 50 steps with CUDA graphs and overlap on; the same
#            comparison
#   train    3 epochs: test accuracy, samples/s
#   profile  200 steps' per-kernel table (to the log)
#   vs-torch the training step against the PyTorch peer on the same GPU,
#            interleaved, 2 rounds of 400 steps; the peer's 3-epoch accuracy
#   matmul   the emitted 4096^3 kernels against cuBLAS (matmul_bench.py)
# The report is ${OUT:-bench/results}/gpu_check.txt, the full log next to it.
# Usage: bench/gpu/check.sh [bundle-dir]
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
bundle="${1:-$root/bench/gpu/bundle}"
out="${OUT:-$root/bench/results}"
mkdir -p "$out"
report="$out/gpu_check.txt"
log="$out/gpu_check.log"
: >"$log"
: >"$report"
export PYTHONUNBUFFERED=1
say() { echo "$@" | tee -a "$report"; }
verdict() { say "VERDICT $1: $2"; }
# run SECONDS CMD...: the command's output to stdout and the log; its status,
# 124 when it ran out of time.
run() {
  local secs="$1"; shift
  echo "+ timeout $secs $*" >>"$log"
  timeout -k 5 "$secs" "$@" 2>&1 | tee -a "$log"
  return "${PIPESTATUS[0]}"
}
why() { [ "$1" = 124 ] && echo "timed out after $2 s" || echo "exit $1"; }
# compare GPU.jsonl HOST.jsonl: one line, "ok ..." or "FAILED ...".
compare() {
  python3 - "$1" "$2" <<'PY'
import json, sys
def steps(path):
    out = {}
    for line in open(path):
        r = json.loads(line)
        if r.get("kind") == "step" and r.get("loss") is not None:
            out[r["step"]] = r["loss"]
    return out
gpu, host = steps(sys.argv[1]), steps(sys.argv[2])
if not gpu:
    print("FAILED no step losses from the GPU run"); sys.exit()
common = sorted(set(gpu) & set(host))
if len(common) < len(host):
    print(f"FAILED the GPU run has {len(gpu)} of the host's {len(host)} steps"); sys.exit()
worst = max(common, key=lambda s: abs(gpu[s] - host[s]) / max(abs(host[s]), 1e-6))
rel = abs(gpu[worst] - host[worst]) / max(abs(host[worst]), 1e-6)
state = "ok" if rel <= 0.02 else "FAILED"
print(f"{state} {len(common)} steps; largest difference at step {worst}: "
      f"gpu {gpu[worst]:.6f} host {host[worst]:.6f} ({rel:.2%}; tolerance 2%)")
PY
}

say "# CUDA sink device check ($(date -u +%Y-%m-%dT%H:%MZ))"
gpu=$(run 10 nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader)
st=$?
if [ $st -eq 0 ] && [ -n "$gpu" ]; then verdict gpu "ok ($(echo "$gpu" | head -1))"
else verdict gpu "FAILED ($(why $st 10)): $(echo "$gpu" | head -1)"; fi

# steps STAGE [ENV=VALUE...]: 50 steps of the compiled program under the
# environment given, their losses against the host build's.
steps() {
  local stage="$1"; shift
  rm -f "$out/$stage.jsonl"
  env "$@" timeout -k 5 45 "$bundle/train_cuda" --data "$bundle/data" --epochs 1 --steps 50 \
    --no-eval --progress 0 --metrics "$out/$stage.jsonl" >"$out/$stage.out" 2>&1
  local st=$?
  echo "+ $* train_cuda --steps 50 (exit $st)" >>"$log"
  cat "$out/$stage.out" >>"$log"
  if [ $st -ne 0 ]; then
    verdict "$stage" "FAILED ($(why $st 45)): $(grep -m1 'error' "$out/$stage.out" || tail -1 "$out/$stage.out")"
  elif [ -f "$bundle/host_smoke.jsonl" ]; then
    verdict "$stage" "$(compare "$out/$stage.jsonl" "$bundle/host_smoke.jsonl")"
  else
    verdict "$stage" "ok (ran; no host reference in the bundle to compare with)"
  fi
}

say ""
say "## smoke: 50 steps, synchronous, no graphs, against the host build"
steps smoke SYNPL_CUDA_SYNC=1 SYNPL_CUDA_GRAPHS=0 SYNPL_CUDA_OVERLAP=0
say ""
say "## graphs: the same 50 steps with CUDA graphs and overlap"
steps graphs SYNPL_CUDA_GRAPHS=1

say ""
say "## train: Fashion-MNIST, compiled (--target=cuda), 3 epochs"
run 60 "$bundle/train_cuda" --data "$bundle/data" --epochs 3 --quiet >"$out/train_cuda.out"
st=$?
if [ $st -eq 0 ]; then
  grep '^epoch=' "$out/train_cuda.out" >>"$report"
  verdict train "ok ($(grep '^epoch=3' "$out/train_cuda.out" | cut -d' ' -f3,4))"
else
  verdict train "FAILED ($(why $st 60)): $(tail -1 "$out/train_cuda.out")"
fi
run 20 "$bundle/train_cuda" --data "$bundle/data" --steps 200 --no-eval --profile --quiet \
  >>"$log" 2>&1
st=$?
if [ $st -eq 0 ]; then verdict profile "ok (the per-kernel table is in $log)"
else verdict profile "FAILED ($(why $st 20))"; fi

say ""
say "## vs-torch: training step at batch 128, compiled vs PyTorch eager, same GPU"
ratios=""
missing=0
for round in 1 2; do
  c=$(run 15 "$bundle/train_cuda" --data "$bundle/data" --steps 400 --no-eval --quiet |
      grep -o 'samples_per_s=[0-9.]*' | tail -1 | cut -d= -f2)
  t=$(run 25 python3 "$root/bench/gpu/torch_step_gpu.py" --peer "$bundle/torch_mlp.py" \
        --data "$bundle/data" --iters 400 |
      grep -o 'samples_per_s=[0-9.]*' | tail -1 | cut -d= -f2)
  if [ -z "$c" ] || [ -z "$t" ]; then missing=1; ratio="?"
  else ratio=$(python3 -c "print(f'{float(\"$c\")/float(\"$t\"):.2f}')"); fi
  say "round $round: compiled samples_per_s=${c:-FAILED}  torch samples_per_s=${t:-FAILED}  ratio=$ratio"
  ratios="$ratios $ratio"
done
say "PyTorch peer, 3 epochs on the GPU:"
run 30 python3 "$root/bench/gpu/torch_step_gpu.py" --peer "$bundle/torch_mlp.py" \
  --data "$bundle/data" --iters 10 --epochs 3 | grep '^epoch=' | tee -a "$report"
if [ $missing -eq 1 ]; then verdict vs-torch "FAILED (a run gave no figure; see $log)"
else verdict vs-torch "ok (compiled / torch samples/s:$ratios)"; fi

say ""
say "## matmul: 4096^3, emitted kernels vs cuBLAS (PyTorch)"
if [ -d "$bundle/matmul" ]; then
  run 45 python3 "$root/bench/gpu/matmul_bench.py" --dir "$bundle/matmul" \
    --json "$out/gpu_matmul.json" | tail -12 | tee -a "$report"
  st=${PIPESTATUS[0]}
  if [ "$st" -eq 0 ]; then verdict matmul "ok ($out/gpu_matmul.json)"
  else verdict matmul "FAILED ($(why "$st" 45))"; fi
else
  verdict matmul "SKIPPED (no matmul bundle)"
fi
say ""
say "(full log: $log)"

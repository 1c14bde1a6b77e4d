#!/usr/bin/env bash
# The device check of the CUDA sink, run on a machine with an NVIDIA GPU from
# the bundle bench/gpu/prepare.sh built on the CPU machine. Writes a short
# report to ${OUT:-bench/results}/gpu_check.txt:
#   1. the GPU: nvidia-smi's name, driver and memory;
#   2. the compiled Fashion-MNIST program: 3 epochs (accuracy, samples/s),
#      then its per-kernel profile of 200 steps;
#   3. the PyTorch peer on the same GPU, eager: ms per training step at
#      batch 128, interleaved with the compiled program's (--steps 400,
#      --no-eval) for 3 rounds, and its own 3-epoch accuracy;
#   4. the emitted matmul kernels at 4096^3 (bf16 and f32) against cuBLAS
#      through PyTorch, in the same process (bench/gpu/matmul_bench.py).
# Usage: bench/gpu/check.sh [bundle-dir]
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
bundle="${1:-$root/bench/gpu/bundle}"
out="${OUT:-$root/bench/results}"
mkdir -p "$out"
report="$out/gpu_check.txt"
log="$out/gpu_check.log"
: >"$log"
say() { echo "$@" | tee -a "$report"; }
run() { echo "+ $*" >>"$log"; "$@" 2>&1 | tee -a "$log"; return "${PIPESTATUS[0]}"; }
: >"$report"
export PYTHONUNBUFFERED=1

say "# CUDA sink device check ($(date -u +%Y-%m-%dT%H:%MZ))"
say "gpu: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -1)"

say ""
say "## Fashion-MNIST, compiled (--target=cuda), 3 epochs"
if run "$bundle/train_cuda" --data "$bundle/data" --epochs 3 >"$out/train_cuda.out"; then
  grep '^epoch=' "$out/train_cuda.out" | tee -a "$report"
else
  say "FAILED (exit $?): $(tail -3 "$out/train_cuda.out" | tr '\n' ' ')"
fi
run "$bundle/train_cuda" --data "$bundle/data" --steps 200 --no-eval --profile \
  >>"$log" 2>&1 || true

say ""
say "## Training step at batch 128: compiled vs PyTorch eager, same GPU (3 rounds)"
for round in 1 2 3; do
  c=$(run "$bundle/train_cuda" --data "$bundle/data" --steps 400 --no-eval --quiet |
      grep -o 'samples_per_s=[0-9.]*' | tail -1 | cut -d= -f2)
  t=$(run python3 "$root/bench/gpu/torch_step_gpu.py" --peer "$bundle/torch_mlp.py" \
        --data "$bundle/data" --iters 400 |
      grep -o 'samples_per_s=[0-9.]*' | tail -1 | cut -d= -f2)
  ratio=$(python3 -c "print(f'{float(\"${c:-0}\")/float(\"${t:-1}\"):.2f}')" 2>/dev/null || echo "?")
  say "round $round: compiled samples_per_s=${c:-FAILED}  torch samples_per_s=${t:-FAILED}  ratio=$ratio"
done
say "PyTorch peer, 3 epochs on the GPU:"
run python3 "$root/bench/gpu/torch_step_gpu.py" --peer "$bundle/torch_mlp.py" \
  --data "$bundle/data" --iters 10 --epochs 3 | grep '^epoch=' | tee -a "$report"

say ""
say "## Matmul 4096^3: emitted kernels vs cuBLAS (PyTorch)"
if [ -d "$bundle/matmul" ]; then
  run python3 "$root/bench/gpu/matmul_bench.py" --dir "$bundle/matmul" \
    --json "$out/gpu_matmul.json" | tail -12 | tee -a "$report"
else
  say "no matmul bundle"
fi
say ""
say "(full log: $log)"

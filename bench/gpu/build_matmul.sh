#!/usr/bin/env bash
# Compiles the matmul benchmark kernels (matmul_bf16.mlir, matmul_f32.mlir)
# to PTX on the CPU machine: <out>/<entry>.ptx + <entry>.json (launch and
# buffers), which matmul_bench.py loads on the GPU machine. <entry> is the
# kernel name for the cost model's choice, <kernel>_r<n> for the candidate
# it ranks n-th.
#   bench/gpu/build_matmul.sh [build-dir] [out-dir] [chip]
# With ptxas on the PATH or in /usr/local/cuda/bin, each kernel is also
# assembled (-v: registers, spills, shared memory) as a check.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-$here/../../build}"
out="${2:-$here/out}"
chip="${3:-sm_90}"
tool="$build/bin/synpl-tiled-matmul"
mkdir -p "$out"
# Rank 0 is the cost model's choice (what the compiler emits); the next
# ranked candidates are benchmarked too, to check the model's ranking.
for plan in matmul_bf16 matmul_f32; do
  ranks="0 1 2 3 4 5"
  [ "$plan" = matmul_f32 ] && ranks="0 1 2"
  for rank in $ranks; do
    "$tool" "$here/$plan.mlir" --chip="$chip" --emit=ptx --out-dir="$out" --rank="$rank"
  done
done
ptxas="$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)"
if [ -x "$ptxas" ]; then
  for ptx in "$out"/*.ptx; do
    "$ptxas" -arch="$chip" -v "$ptx" -o /dev/null 2>&1 | grep -E "entry|registers|spill"
  done
fi
echo "kernels in $out"

#!/usr/bin/env bash
# Builds, on the CPU machine, everything bench/gpu/check.sh runs on a GPU
# machine (which has the NVIDIA driver and PyTorch, but no LLVM and no
# synplexum build): bench/gpu/bundle/ (git-ignored) gets
#   train_cuda        the Fashion-MNIST spec compiled with --target=cuda
#   host_smoke.jsonl  the step losses of the same plan compiled for this CPU,
#                     50 steps (check.sh compares the GPU's with them)
#   data/             the Fashion-MNIST files (the GPU machine has no network)
#   torch_mlp.py      the shared PyTorch peer
#   matmul/           the emitted 4096^3 matmul kernels' PTX and launches
#                     (bench/gpu/build_matmul.sh)
# Usage: bench/gpu/prepare.sh [--cuda-arch sm_90] [--fake]   (after ./scripts/build.sh)
# --fake also compiles each device kernel for the host, so that check.sh can
# be rehearsed here on the fake driver of the tests:
#   bench/gpu/prepare.sh --fake && LD_LIBRARY_PATH=build/test/lib/FakeCuda \
#     OUT=/tmp/rehearsal bench/gpu/check.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
arch=sm_90
fake=()
while [ $# -gt 0 ]; do
  case "$1" in
    --cuda-arch) arch="$2"; shift 2 ;;
    --fake) fake=(--cuda-host-kernels); shift ;;
    *) echo "usage: $0 [--cuda-arch sm_XX] [--fake]" >&2; exit 2 ;;
  esac
done
bin="$root/build/bin"
out="$root/bench/gpu/bundle"
data=/usr/share/datasets/fashion-mnist
rm -rf "$out"
mkdir -p "$out/data" "$out/matmul"
[ -x "$bin/synplc" ] || { echo "build first: ./scripts/build.sh" >&2; exit 1; }
for f in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
  cp "$data/$f.gz" "$out/data/" || { echo "missing $data/$f.gz (apt-get install dataset-fashion-mnist)" >&2; exit 1; }
done
cp "$root/../shared/peers/torch_mlp.py" "$out/" 2>/dev/null ||
  cp /work/shared/peers/torch_mlp.py "$out/"
# The program, for the GPU; its compiled-in data paths are replaced at run
# time by --data.
"$bin/synplc" "$root/examples/fashion_mnist/fashion_mnist.syn" --target=cuda \
  --cuda-arch="$arch" ${fake[@]+"${fake[@]}"} -o "$out/train_cuda"
# The reference: the same placed program (its GPU plan, block reductions
# and all) compiled for this CPU, and its first 50 steps' losses.
"$bin/synplc" "$root/examples/fashion_mnist/fashion_mnist.syn" --target=cuda \
  --cuda-arch="$arch" --emit=l1 -o "$out/gpu.l1.mlir"
"$bin/synplc" "$out/gpu.l1.mlir" --target=host --l0-passes=synpl-l0-block-reduce \
  -o "$out/train_host"
"$out/train_host" --data "$out/data" --epochs 1 --steps 50 --no-eval --quiet \
  --metrics "$out/host_smoke.jsonl" >/dev/null
rm -f "$out/train_host" "$out/gpu.l1.mlir"
"$bin/synplc" "$root/examples/fashion_mnist/fashion_mnist.syn" --target=cuda \
  --cuda-arch="$arch" --emit=ptx -o "$out/train_cuda.ptx"
bash "$root/bench/gpu/build_matmul.sh" "$root/build" "$out/matmul" "$arch"
du -sh "$out"
echo "bundle ready: $out (run bench/gpu/check.sh on the GPU machine)"

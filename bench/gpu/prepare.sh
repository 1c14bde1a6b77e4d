#!/usr/bin/env bash
# Builds, on the CPU machine, everything bench/gpu/check.sh runs on a GPU
# machine (which has the NVIDIA driver and PyTorch, but no LLVM and no
# synplexum build): bench/gpu/bundle/ (git-ignored) gets
#   train_cuda        the Fashion-MNIST spec compiled with --target=cuda
#   data/             the Fashion-MNIST files (the GPU machine has no network)
#   torch_mlp.py      the shared PyTorch peer
#   matmul/           the emitted 4096^3 matmul kernels' PTX and launches
#                     (bench/gpu/build_matmul.sh)
# Usage: bench/gpu/prepare.sh [--cuda-arch sm_90]   (after ./scripts/build.sh)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
arch=sm_90
while [ $# -gt 0 ]; do
  case "$1" in
    --cuda-arch) arch="$2"; shift 2 ;;
    *) echo "usage: $0 [--cuda-arch sm_XX]" >&2; exit 2 ;;
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
  --cuda-arch="$arch" -o "$out/train_cuda"
"$bin/synplc" "$root/examples/fashion_mnist/fashion_mnist.syn" --target=cuda \
  --cuda-arch="$arch" --emit=ptx -o "$out/train_cuda.ptx"
bash "$root/bench/gpu/build_matmul.sh" "$root/build" "$out/matmul" "$arch"
du -sh "$out"
echo "bundle ready: $out (run bench/gpu/check.sh on the GPU machine)"

#!/usr/bin/env bash
# The main job: builds synplexum, then verifies the spec's MNIST programs at
# every layer (L3 spec, L2 method, L1 placement, L0 machine plan) and prints
# each one as synpl-opt reads it back. Fails on the first program that does
# not verify.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bash "$root/scripts/build.sh"
BUILD_DIR="${SYNPL_BUILD_DIR:-$root/build}"
opt="$BUILD_DIR/bin/synpl-opt"
for layer in l3 l2 l1 l0; do
  file="$root/examples/mnist/mnist.$layer.mlir"
  [ -f "$file" ] || continue
  echo "=== $layer: examples/mnist/mnist.$layer.mlir"
  "$opt" "$file"
  echo "=== $layer: verified"
done

# The host path as far as it goes today: the L1 program lowered to an L0 plan
# (kernels, memory plan, streams), memory packed, and compiled to LLVM IR.
# Running the compiled step (runtime, ELF, synplc) arrives with the codegen work.
echo "=== l1 -> l0 -> llvm: examples/mnist/mnist.l1.mlir"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$opt" "$root/examples/mnist/mnist.l1.mlir" \
  --synpl-host-pipeline="llvm-only=true summary=true" \
  -mlir-print-op-on-diagnostic=false -o "$tmp/mnist.llvm.mlir" 2>&1 | grep remark | sed 's/^[^ ]* remark: /  /'
"$BUILD_DIR/bin/synpl-translate" --mlir-to-llvmir "$tmp/mnist.llvm.mlir" -o "$tmp/mnist.ll"
echo "  LLVM IR: $(grep -c '^define' "$tmp/mnist.ll") functions (kernels + control program), $(wc -c < "$tmp/mnist.ll") bytes"
echo "=== l1 -> l0 -> llvm: compiled"

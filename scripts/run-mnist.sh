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

# The host path: the Fashion-MNIST program (system single_cpu, this host)
# compiled by synplc into an executable, which trains and evaluates.
# SYNPL_EPOCHS (default 3) sets the epochs; extra arguments go to the program.
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
program="$root/examples/fashion_mnist/fashion_mnist.l1.mlir"
echo "=== synplc: examples/fashion_mnist/fashion_mnist.l1.mlir -> train"
"$BUILD_DIR/bin/synplc" -v "$program" -o "$tmp/train" 2>&1 \
  | grep -E 'remark|synplc:' | sed -e 's/^[^ ]* remark: /  /' -e 's/^synplc: /  /'
echo "=== train: ${SYNPL_EPOCHS:-3} epochs on /usr/share/datasets/fashion-mnist"
"$tmp/train" --epochs "${SYNPL_EPOCHS:-3}" --profile "$@"

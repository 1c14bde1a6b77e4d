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

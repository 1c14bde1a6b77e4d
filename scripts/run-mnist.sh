#!/usr/bin/env bash
# The main job: builds synplexum, verifies the spec's MNIST programs at every
# layer (L3 spec, L2 method, L1 placement, L0 machine plan) and prints each
# one as synpl-opt reads it back; then compiles the spec's L3 program with
# synplc and trains Fashion-MNIST. Fails on the first step that fails.
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

# The main job: the spec's L3 MNIST program (examples/fashion_mnist/
# fashion_mnist.syn: the L3 trace verbatim plus its data binding) compiled by
# synplc for this machine — the L3 -> L2 method search, the L2 -> L1
# placement search on the embedded host system (backward expansion, update
# materialization, data binding), L1 -> L0, host codegen — into an
# executable that trains Fashion-MNIST and evaluates on the test split.
# SYNPL_EPOCHS (default 3) sets the epochs; extra arguments go to the program.
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
spec="$root/examples/fashion_mnist/fashion_mnist.syn"
echo "=== synplc: examples/fashion_mnist/fashion_mnist.syn -> train"
"$BUILD_DIR/bin/synplc" -v --search-report --mlir-print-op-on-diagnostic=false \
  "$spec" -o "$tmp/train" \
  --dump-phases "$tmp/phases" 2>&1 \
  | sed -e 's/^[^ ]* remark: /  /' -e 's/^synplc: /  /'
echo "=== the layers it went through ($tmp/phases):"
wc -l "$tmp/phases"/*.mlir | sed -e "s#$tmp/phases/##"
echo "=== the method the L3 -> L2 search chose:"
sed -n '/l2.methods/,$p' "$tmp/phases/fashion_mnist.l2.mlir"
echo "=== train: ${SYNPL_EPOCHS:-3} epochs on /usr/share/datasets/fashion-mnist"
"$tmp/train" --epochs "${SYNPL_EPOCHS:-3}" --profile "$@"

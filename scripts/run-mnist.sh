#!/usr/bin/env bash
# The main job: builds synplexum, verifies the spec's MNIST programs at every
# layer (L3 spec, L2 method, L1 placement, L0 machine plan) and summarizes
# each (its ops by kind); compiles the spec's L3 program with synplc, showing
# what each search chose, trains Fashion-MNIST with its metrics recorded and
# draws them with the Python package; then the convolutional workload, the
# character LM and the CUDA build. Fails on the first step that fails.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bash "$root/scripts/build.sh"
BUILD_DIR="${SYNPL_BUILD_DIR:-$root/build}"
opt="$BUILD_DIR/bin/synpl-opt"
out="$BUILD_DIR/main-job"
mkdir -p "$out"
export PYTHONPATH="$BUILD_DIR/python${PYTHONPATH:+:$PYTHONPATH}"
echo "=== the spec's MNIST programs (examples/mnist), verified, ops by kind:"
for layer in l3 l2 l1 l0; do
  file="$root/examples/mnist/mnist.$layer.mlir"
  [ -f "$file" ] || continue
  "$opt" "$file" --print-op-stats -o /dev/null 2>&1 \
    | awk -v layer="$layer" '/^ +[a-z_0-9]+\.[a-z_.0-9]+ *, *[0-9]+/ {
          gsub(/ /, ""); split($0, kv, ","); n += kv[2]
          d = kv[1]; sub(/\..*/, "", d); if (d != "builtin") by[d] += kv[2]; ops[++k] = kv[1] ":" kv[2] }
        END { printf "  %s: %d ops (", layer, n; sep = ""
              for (d in by) { printf "%s%s %d", sep, d, by[d]; sep = ", " }
              printf ")\n    "; for (i = 1; i <= k; i++) printf "%s%s", ops[i], (i < k ? ", " : "\n") }' \
    | fold -s -w 100 | sed -e '3,$s/^/    /'
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
echo "=== synplc: examples/fashion_mnist/fashion_mnist.syn -> train (the searches' reports)"
"$BUILD_DIR/bin/synplc" -v --search-report --mlir-print-op-on-diagnostic=false \
  "$spec" -o "$tmp/train" \
  --dump-phases "$tmp/phases" 2>&1 \
  | sed -e 's/^[^ ]* remark: /  /' -e 's/^synplc: /  /' | grep -v "^  linking:"
echo "=== the layers it went through (lines of IR; $out/phases):"
rm -rf "$out/phases" && cp -r "$tmp/phases" "$out/phases"
for f in "$out"/phases/*.mlir; do
  printf "  %-28s %6d lines\n" "$(basename "$f")" "$(wc -l < "$f")"
done
echo "=== train: ${SYNPL_EPOCHS:-3} epochs on /usr/share/datasets/fashion-mnist (metrics: $out/fashion_mnist.jsonl)"
rm -f "$out/fashion_mnist.jsonl"
"$tmp/train" --epochs "${SYNPL_EPOCHS:-3}" --progress 10 \
  --metrics "$out/fashion_mnist.jsonl" "$@"
/usr/bin/python3 -m synplexum plot "$out/fashion_mnist.jsonl" "$out/fashion_mnist.png" \
  --title "Fashion-MNIST, the L3 spec (synplc)" | sed -e 's/^/  /'

# The convolutional workload (examples/fashion_mnist_cnn): the L3 spec under
# equivariant(translation), whose search picks a conv / pool network, and the
# variant with the method fixed to the PyTorch peer's CNN; each trains
# SYNPL_CNN_EPOCHS (default 3) epochs and reports its test accuracy.
# compile_example DIR VARIANT: synplc DIR/VARIANT.syn -> $tmp/VARIANT, timed.
compile_example() {
  echo "=== synplc: examples/$1/$2.syn -> $2"
  local t0; t0=$(date +%s.%N)
  "$BUILD_DIR/bin/synplc" "$root/examples/$1/$2.syn" -o "$tmp/$2"
  echo "  compiled in $(python3 -c "import sys; print(f'{float(sys.argv[1]) - float(sys.argv[2]):.1f}')" "$(date +%s.%N)" "$t0") s"
}
cnn="$root/examples/fashion_mnist_cnn"
for variant in fashion_mnist_cnn fashion_mnist_cnn.methods; do
  compile_example fashion_mnist_cnn "$variant"
  echo "=== $variant: ${SYNPL_CNN_EPOCHS:-3} epochs"
  rm -f "$out/$variant.jsonl"
  "$tmp/$variant" --epochs "${SYNPL_CNN_EPOCHS:-3}" --progress 30 --metrics "$out/$variant.jsonl"
  /usr/bin/python3 -m synplexum plot "$out/$variant.jsonl" "$out/$variant.png" --title "$variant" \
    | sed -e 's/^/  /'
done
"$BUILD_DIR/bin/synplc" --target=cuda --cuda-arch=sm_90 --emit=ptx "$cnn/fashion_mnist_cnn.methods.syn" -o "$tmp/cnn.ptx"
echo "  the CNN for sm_90: $(grep -c '^\.visible \.entry' "$tmp/cnn.ptx") kernels of PTX"

# The text workload (examples/charlm): a character-level language model over
# Debian's fortunes cookie file, from its L3 spec (the search builds a causal
# transformer) and with the method fixed to the PyTorch peer's model; each
# trains SYNPL_LM_STEPS (default 1000) steps and reports its validation loss.
for variant in charlm charlm.methods; do
  compile_example charlm "$variant"
  echo "=== $variant: ${SYNPL_LM_STEPS:-1000} steps"
  rm -f "$out/$variant.jsonl"
  "$tmp/$variant" --steps "${SYNPL_LM_STEPS:-1000}" --progress 30 --metrics "$out/$variant.jsonl"
  /usr/bin/python3 -m synplexum plot "$out/$variant.jsonl" "$out/$variant.png" --title "$variant" \
    | sed -e 's/^/  /'
done

# The CUDA sink (docs/cuda.md): the same spec compiled for an H200-class GPU
# (sm_90) on this machine -- PTX in process, a cubin where ptxas is
# installed. Without a GPU here, the executable says so and exits 1; the
# fake driver of the tests (test/lib/FakeCuda, running each kernel's host
# fallback) then trains it through the CUDA runtime's streams, events,
# transfers and launches, with the host build's numbers.
echo "=== synplc --target=cuda --cuda-arch=sm_90: examples/fashion_mnist/fashion_mnist.syn -> train_cuda"
"$BUILD_DIR/bin/synplc" --target=cuda --cuda-arch=sm_90 -v \
  --mlir-print-op-on-diagnostic=false "$spec" -o "$tmp/train_cuda" 2>&1 \
  | grep -E '^synplc: (no GPU|found GPU|--target|target cuda|assembling|no ptxas)' \
  | sed -e 's/^synplc: /  /'
"$BUILD_DIR/bin/synplc" --target=cuda --cuda-arch=sm_90 --emit=ptx "$spec" -o "$tmp/train_cuda.ptx"
echo "  $(grep -c '^\.visible \.entry' "$tmp/train_cuda.ptx") kernels, $(wc -c < "$tmp/train_cuda.ptx") bytes of PTX"
if [ -x /usr/local/cuda/bin/ptxas ]; then
  /usr/local/cuda/bin/ptxas -arch=sm_90 -v "$tmp/train_cuda.ptx" -o /dev/null 2>&1 \
    | awk '/Used [0-9]+ registers/ { n++; r = $5 + 0; if (r > max) max = r }
           /spill stores/ { if ($5 + 0 > 0 || $9 + 0 > 0) spills++ }
           END { printf "  ptxas -arch=sm_90: %d kernels assembled, at most %d registers, %d with spills\n", n, max, spills }'
fi
echo "=== train_cuda on this machine:"
"$tmp/train_cuda" --steps 1 2>&1 | sed -e 's/^/  /' || true
fake="$BUILD_DIR/test/lib/FakeCuda"
if [ -e "$fake/libcuda.so.1" ]; then
  echo "=== the CUDA build on the fake driver (host fallbacks), 100 steps, against the host build of the same plan:"
  "$BUILD_DIR/bin/synplc" --target=cuda --cuda-host-kernels "$spec" -o "$tmp/train_fake"
  "$BUILD_DIR/bin/synplc" --target=cuda --emit=l1 "$spec" -o "$tmp/gpu.l1.mlir"
  "$BUILD_DIR/bin/synplc" --target=host --l0-passes=synpl-l0-block-reduce "$tmp/gpu.l1.mlir" -o "$tmp/train_gpu_plan_on_host"
  LD_LIBRARY_PATH="$fake" "$tmp/train_fake" --steps 100 --no-eval --epochs 1 --quiet | sed -e 's/^/  cuda (fake driver): /'
  "$tmp/train_gpu_plan_on_host" --steps 100 --no-eval --epochs 1 --quiet | sed -e 's/^/  host:               /'
fi

#!/usr/bin/env bash
# ctest `install-tree`: installs the build into a scratch prefix, then builds
# and runs test/install (an embedder using find_package(Synplexum)): its
# embed-opt, which holds only l1 + l0uop + l0ctl and --synpl-l1-to-l0, lowers
# the program to an L0 plan and must link no other synplexum library.
# With a training program, the installed synplc must compile it against the
# installed runtime (found next to itself, in ../lib) into an executable
# that runs a step; that happens first, so a failure leaves the embedder's
# line unprinted and the test failed.
# usage: check-install.sh <build-dir> <scratch-dir> <cxx-compiler> [program.mlir [train.l1.mlir]]
set -euo pipefail
build="$1"; scratch="$2"; cxx="$3"; program="${4:-}"; train="${5:-}"
rm -rf "$scratch"; mkdir -p "$scratch"
cmake --install "$build" --prefix "$scratch/prefix" > "$scratch/install.log"
if [ -n "$train" ]; then
  "$scratch/prefix/bin/synplc" "$train" -o "$scratch/train"
  "$scratch/train" --steps 1 --no-eval --quiet
fi
cmake -S "$(dirname "$0")" -B "$scratch/embedder" -G Ninja \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_C_COMPILER="${cxx%++}" -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld \
  -DCMAKE_PREFIX_PATH="$scratch/prefix" \
  -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir > "$scratch/configure.log"
cmake --build "$scratch/embedder" > "$scratch/build.log"
if [ -n "$program" ] && [ ! -f "$program" ]; then program=""; fi
if [ -n "$program" ]; then
  "$scratch/embedder/embed-opt" "$program" --synpl-l1-to-l0 > "$scratch/embed-opt.mlir"
  grep -q "l0uop.plan @" "$scratch/embed-opt.mlir" || { echo "embed-opt: no l0uop.plan"; exit 1; }
  links="$(cd "$scratch/embedder" && ninja -t commands embed-opt | tail -1)"
  for lib in SynplL3 SynplL2 SynplL0ToLLVM SynplRegistration SynplPipelines SynplTargetCUDA; do
    case "$links" in *"lib$lib.a"*) echo "embed-opt links $lib"; exit 1;; esac
  done
  echo "embed-opt: lowered $(basename "$program") to an L0 plan with l1 + l0uop + l0ctl only"
fi
"$scratch/embedder/embedder" $program

#!/usr/bin/env bash
# ctest `static-mlir`: builds synpl-opt and synplc with
# SYNPL_LINK_MLIR_DYLIB=OFF, each library linking the MLIR component
# libraries it names instead of libMLIR.so (what a compiler that links MLIR
# statically gets), then lowers a program with each. A library that uses an
# MLIR component it does not name fails the link. The objects are the main
# build's (ccache: <scratch-dir> sits at the main build's depth under the
# source root, so the relative command lines match), so this costs the
# configure and the links. Its logs and outputs stay inside <scratch-dir>.
# usage: check-static.sh <source-dir> <scratch-dir> <c-compiler> <cxx-compiler> <runtime-lib>
set -euo pipefail
src="$1"; scratch="$2"; cc="$3"; cxx="$4"; runtime="$5"
export CCACHE_BASEDIR="$src" CCACHE_NOHASHDIR=1
mkdir -p "$scratch"
out="$scratch/check"
if [ ! -f "$scratch/build.ninja" ]; then
  cmake -S "$src" -B "$scratch" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
    -DLLVM_USE_LINKER=lld -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DSYNPL_LINK_MLIR_DYLIB=OFF -DSYNPL_BUILD_TESTS=OFF -DSYNPL_BUILD_PYTHON=OFF \
    > "$out.configure.log"
fi
cmake --build "$scratch" --target synpl-opt synplc > "$out.build.log" 2>&1 || {
  grep -E "undefined symbol|error:" "$out.build.log" | sort -u | head -20; exit 1; }
if ldd "$scratch/bin/synpl-opt" | grep -q "libMLIR.so"; then
  echo "synpl-opt links libMLIR.so"; exit 1
fi
"$scratch/bin/synpl-opt" "$src/examples/fashion_mnist/fashion_mnist.l1.mlir" \
  --synpl-pipeline="from=l1 to=llvm" -o "$out.llvm.mlir" 2>/dev/null
grep -q "llvm.func @main" "$out.llvm.mlir"
"$scratch/bin/synplc" "$src/examples/fashion_mnist/fashion_mnist.syn" --emit=l0 \
  --runtime-lib "$runtime" -o "$out.l0.mlir"
grep -q "l0uop.plan @" "$out.l0.mlir"
echo "static-mlir: synpl-opt and synplc linked without libMLIR.so and lowered a program"

#!/usr/bin/env bash
# Configures BUILD_DIR (once) as a sanitizer tree: clang-22 with
# AddressSanitizer and UndefinedBehaviorSanitizer on every library, tool,
# test and fuzz target (LLVM's LLVM_USE_SANITIZER).
#
#   scripts/asan-tree.sh BUILD_DIR suite   the test suite's tree (scripts/sanitize.sh)
#   scripts/asan-tree.sh BUILD_DIR fuzz    the fuzzing tree (scripts/fuzz.sh)
#
# The two differ in what the build costs against what it finds:
#   suite  -O1 with line tables (the optimisation level ASan is designed for,
#          and reports that name file and line), no coverage instrumentation.
#          The fuzz targets are built too, to replay their corpora once.
#   fuzz   -O2 and libFuzzer's coverage instrumentation on every library, so
#          that the fuzzers are guided through the whole project.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
BUILD_DIR="$1"
mode="${2:-suite}"
[ -f "$BUILD_DIR/build.ninja" ] && exit 0
case "$mode" in
  suite) flags=(-DCMAKE_C_FLAGS_RELEASE="-O1 -gline-tables-only -DNDEBUG"
                -DCMAKE_CXX_FLAGS_RELEASE="-O1 -gline-tables-only -DNDEBUG"
                -DLLVM_USE_SANITIZE_COVERAGE=OFF) ;;
  fuzz)  flags=(-DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG"
                -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG"
                -DLLVM_USE_SANITIZE_COVERAGE=ON) ;;
  *) echo "asan-tree.sh: unknown mode '$mode' (suite or fuzz)" >&2; exit 2 ;;
esac
cmake -S "$root" -B "$BUILD_DIR" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER=/usr/lib/llvm-22/bin/clang \
  -DCMAKE_CXX_COMPILER=/usr/lib/llvm-22/bin/clang++ \
  -DLLVM_USE_LINKER=lld -DCMAKE_EXE_LINKER_FLAGS="-fuse-ld=lld" \
  -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
  -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit -DSYNPL_LIT=/usr/lib/llvm-22/bin/lit \
  -DLLVM_USE_SANITIZER="Address;Undefined" \
  "${flags[@]}" \
  -DSYNPL_BUILD_FUZZERS=ON -DSYNPL_BUILD_PYTHON=OFF \
  -DCMAKE_INSTALL_PREFIX="$BUILD_DIR/install" >/dev/null

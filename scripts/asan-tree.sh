#!/usr/bin/env bash
# Configures BUILD_DIR (once) as the sanitizer tree that scripts/sanitize.sh
# and scripts/fuzz.sh share: clang-22, AddressSanitizer and
# UndefinedBehaviorSanitizer (LLVM's LLVM_USE_SANITIZER), libFuzzer's
# coverage instrumentation on every library, and the fuzz targets.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
BUILD_DIR="$1"
[ -f "$BUILD_DIR/build.ninja" ] && exit 0
cmake -S "$root" -B "$BUILD_DIR" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER=/usr/lib/llvm-22/bin/clang \
  -DCMAKE_CXX_COMPILER=/usr/lib/llvm-22/bin/clang++ \
  -DLLVM_USE_LINKER=lld -DCMAKE_EXE_LINKER_FLAGS="-fuse-ld=lld" \
  -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
  -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit -DSYNPL_LIT=/usr/lib/llvm-22/bin/lit \
  -DLLVM_USE_SANITIZER="Address;Undefined" -DLLVM_USE_SANITIZE_COVERAGE=ON \
  -DSYNPL_BUILD_FUZZERS=ON \
  -DCMAKE_INSTALL_PREFIX="$BUILD_DIR/install" >/dev/null

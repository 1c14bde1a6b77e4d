#!/usr/bin/env bash
# Configures (once) and builds synplexum into ./build with Ninja, clang-22,
# lld and ccache. Installs missing Debian packages first.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bash scripts/install-deps.sh

BUILD_DIR="${SYNPL_BUILD_DIR:-$root/build}"
# Cache hits across clones: ccache rewrites paths under the repository root
# to relative ones, so CI's fresh clone reuses the cache in $HOME.
export CCACHE_BASEDIR="$root"
export CCACHE_NOHASHDIR=1
export CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-5G}"

if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -S "$root" -B "$BUILD_DIR" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=/usr/lib/llvm-22/bin/clang \
    -DCMAKE_CXX_COMPILER=/usr/lib/llvm-22/bin/clang++ \
    -DLLVM_USE_LINKER=lld \
    -DCMAKE_EXE_LINKER_FLAGS="-fuse-ld=lld" \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    -DSYNPL_LIT=/usr/lib/llvm-22/bin/lit \
    -DCMAKE_INSTALL_PREFIX="$BUILD_DIR/install"
fi
cmake --build "$BUILD_DIR" "$@"

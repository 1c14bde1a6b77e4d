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

# The Python package of this build (build/python/synplexum): registered as a
# development install of each `python3` of the version it was built for (a
# synplexum-build.pth in its site-packages naming build/python), so that
# `python3 -c "import synplexum"` works; SYNPL_NO_PTH=1 skips this.
if [ -z "${SYNPL_NO_PTH:-}" ] && [ -d "$BUILD_DIR/python/synplexum" ]; then
  built="$(ls "$BUILD_DIR"/python/synplexum/_core.cpython-*.so 2>/dev/null | head -1)"
  for py in /usr/bin/python3 "$(command -v python3 || true)"; do
    [ -x "$py" ] && [ -n "$built" ] || continue
    "$py" - "$BUILD_DIR/python" "$built" <<'PY' || true
import os, sys, sysconfig
path, built = sys.argv[1], sys.argv[2]
if sysconfig.get_config_var("EXT_SUFFIX") not in built:
    sys.exit(0)  # another Python version: the native half would not load
site = sysconfig.get_paths()["purelib"]
pth = os.path.join(site, "synplexum-build.pth")
try:
    os.makedirs(site, exist_ok=True)
    if not os.path.exists(pth) or open(pth).read().strip() != path:
        with open(pth, "w") as f:
            f.write(path + "\n")
        print(f"build: {sys.executable} imports synplexum from {path} ({pth})")
except OSError as e:
    print(f"build: cannot register synplexum with {sys.executable}: {e}; "
          f"use PYTHONPATH={path}", file=sys.stderr)
PY
  done
fi

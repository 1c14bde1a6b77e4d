#!/usr/bin/env bash
# The test suite under AddressSanitizer and UndefinedBehaviorSanitizer:
#
#   scripts/sanitize.sh [ctest arguments...]
#
# Configures (once) and builds the whole project in ./build-asan with both
# sanitizers (and coverage instrumentation, so that the same tree builds the
# fuzz targets, scripts/fuzz.sh), runs the lit suite and the unit tests
# there, then replays the fuzz targets' seeds and committed regression
# inputs (test/fuzz/regressions) through them once. Any sanitizer report
# fails the run. Programs synplc compiles in this tree link the sanitizers'
# runtimes too, so the training executables the lit tests run are checked
# as well. Left out: the Python package (an uninstrumented interpreter
# cannot load an ASan module), the install-tree and static-MLIR builds
# (they configure other trees) and the docs check.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bash scripts/install-deps.sh
BUILD_DIR="${SYNPL_ASAN_BUILD_DIR:-$root/build-asan}"
export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
bash scripts/asan-tree.sh "$BUILD_DIR"
cmake --build "$BUILD_DIR"
cmake --build "$BUILD_DIR" --target synpl-fuzzers

# Leaks are not errors here: MLIR's uniquers and the runtime's process-long
# tables are freed at exit by the OS.
export ASAN_OPTIONS=allow_user_poisoning=0:detect_leaks=0:halt_on_error=1:allocator_may_return_null=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
cd "$BUILD_DIR"
ctest --output-on-failure -E '^(python|install-tree|static-mlir|docs-fresh)$' "$@"

seeds="$BUILD_DIR/fuzz/seeds"
rm -rf "$seeds"
mkdir -p "$seeds"
python3 "$root/test/fuzz/make_seeds.py" "$root" "$seeds"
for t in syn mlir pipeline idx checkpoint; do
  dirs=("$seeds/$t")
  [ -d "$root/test/fuzz/regressions/$t" ] && dirs+=("$root/test/fuzz/regressions/$t")
  echo "replaying the $t seeds"
  "$BUILD_DIR/bin/synpl-fuzz-$t" -runs=0 -timeout=30 "${dirs[@]}" >"$BUILD_DIR/fuzz/$t.replay.log" 2>&1 || {
    echo "sanitize.sh: replaying the $t inputs failed; see $BUILD_DIR/fuzz/$t.replay.log" >&2
    grep -m5 -E "ERROR|runtime error|SUMMARY" "$BUILD_DIR/fuzz/$t.replay.log" >&2 || true
    exit 1
  }
done
echo "sanitize.sh: clean"

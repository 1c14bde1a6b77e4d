#!/usr/bin/env bash
# The test suite under AddressSanitizer and UndefinedBehaviorSanitizer:
#
#   scripts/sanitize.sh [ctest arguments...]
#
# Configures (once) and builds the whole project in ./build-asan
# (SYNPL_ASAN_BUILD_DIR) with both sanitizers (scripts/asan-tree.sh suite:
# -O1, line tables, no coverage instrumentation), runs the lit suite and
# the unit tests there, then replays every fuzz target's seeds and committed
# regression inputs (test/fuzz/regressions) through it once. Any sanitizer
# report fails the run. Programs synplc compiles in this tree link the
# sanitizers' runtimes too, so the training executables the lit tests run
# are checked as well. Left out: the Python package (an uninstrumented
# interpreter cannot load an ASan module), the install-tree and static-MLIR
# builds (they configure trees of their own, unsanitized) and the docs
# check (the normal suite runs them).
#
# scripts/test.sh runs this after the normal suite; CI with it.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bash scripts/install-deps.sh
BUILD_DIR="${SYNPL_ASAN_BUILD_DIR:-$root/build-asan}"
export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
bash scripts/asan-tree.sh "$BUILD_DIR" suite
echo "sanitize.sh: building $BUILD_DIR"
cmake --build "$BUILD_DIR" --target all synpl-fuzzers

# Leaks are not errors here: MLIR's uniquers and the runtime's process-long
# tables are freed at exit by the OS.
export ASAN_OPTIONS=allow_user_poisoning=0:detect_leaks=0:halt_on_error=1:allocator_may_return_null=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
(cd "$BUILD_DIR" &&
  ctest --output-on-failure -j2 -E '^(python|install-tree|static-mlir|docs-fresh)$' "$@")

seeds="$BUILD_DIR/fuzz/seeds"
rm -rf "$seeds"
mkdir -p "$seeds"
python3 "$root/test/fuzz/make_seeds.py" --synplc "$BUILD_DIR/bin/synplc" \
  --synpl-translate "$BUILD_DIR/bin/synpl-translate" "$root" "$seeds"
for t in $(bash "$root/scripts/fuzz.sh" --list); do
  # The differential fuzzer has no corpus: ctest's difffuzz-*replay ran it.
  [[ "$t" == diff* ]] && continue
  dirs=("$seeds/$t")
  [ -d "$root/test/fuzz/regressions/$t" ] && dirs+=("$root/test/fuzz/regressions/$t")
  echo "sanitize.sh: replaying the $t seeds ($(ls "${dirs[@]}" | wc -l) inputs)"
  "$BUILD_DIR/bin/synpl-fuzz-$t" -runs=0 -timeout=60 "${dirs[@]}" >"$BUILD_DIR/fuzz/$t.replay.log" 2>&1 || {
    echo "sanitize.sh: replaying the $t inputs failed; see $BUILD_DIR/fuzz/$t.replay.log" >&2
    grep -m5 -E "ERROR|runtime error|SUMMARY" "$BUILD_DIR/fuzz/$t.replay.log" >&2 || true
    exit 1
  }
done
echo "sanitize.sh: clean"

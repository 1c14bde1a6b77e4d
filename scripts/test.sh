#!/usr/bin/env bash
# Builds synplexum and runs every test: the lit suites (round trips, verifier
# rows, bad input, examples) and the Catch2 unit tests, through ctest; then
# the same suite again under AddressSanitizer and UndefinedBehaviorSanitizer
# in a second tree, with the fuzz targets' corpora replayed
# (scripts/sanitize.sh). SYNPL_NO_SANITIZE=1 skips that second half.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bash "$root/scripts/build.sh"
BUILD_DIR="${SYNPL_BUILD_DIR:-$root/build}"
(cd "$BUILD_DIR" && ctest --output-on-failure -j2)
if [ -z "${SYNPL_NO_SANITIZE:-}" ]; then
  bash "$root/scripts/sanitize.sh"
fi

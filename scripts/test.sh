#!/usr/bin/env bash
# Builds synplexum and runs every test: the lit suites (round trips, verifier
# rows, bad input, examples) and the Catch2 unit tests, through ctest.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bash "$root/scripts/build.sh"
BUILD_DIR="${SYNPL_BUILD_DIR:-$root/build}"
cd "$BUILD_DIR"
ctest --output-on-failure

#!/usr/bin/env bash
# Installs every Debian 12 package the build, the tests and the benchmarks need.
# Idempotent: a machine that already has them spends one dpkg query and exits.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build ccache git
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools clang-22 lld-22
  libclang-rt-22-dev libfuzzer-22-dev
  catch2 zlib1g-dev libzstd-dev libedit-dev libxml2-dev
  python3 python3-dev python3-numpy pybind11-dev python3-pytest python3-matplotlib
  libopenblas0-pthread
  openmpi-bin libopenmpi-dev
  dataset-fashion-mnist
  fortunes
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2

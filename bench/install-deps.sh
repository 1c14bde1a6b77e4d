#!/usr/bin/env bash
# What the benchmarks need beyond the build: the PyTorch peer (Debian's
# python3-torch) and OpenBLAS through Debian's BLAS alternatives (without
# libopenblas0-pthread, torch and numpy fall back to the reference BLAS and
# run about 10x slower -- no fair peer).
set -euo pipefail
need=()
for p in python3-torch libopenblas0-pthread; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y "${need[@]}"
fi

#!/usr/bin/env bash
# Configures and builds GeoDL in build/ (Release, precompiled headers, 2 jobs by default).
# Extra arguments go to CMake's configure step; GEODL_TARGETS (a space-separated list) builds
# only those targets.
#
# --cuda (first argument, or GEODL_CUDA=1) builds the CUDA build in build-cuda/ instead,
# against the torch wheel's LibTorch that `scripts/install-deps.sh --cuda` installed in
# ~/.cache/geodl/libtorch-VERSION (scripts/libtorch_wheel.sh; GEODL_LIBTORCH_WHEEL for another
# folder; GEODL_CUDA_BUILD_DIR for another build folder).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${GEODL_JOBS:-2}
targets=()
for t in ${GEODL_TARGETS:-}; do targets+=(--target "$t"); done
cuda=${GEODL_CUDA:-0}
if [ "${1:-}" = --cuda ]; then
  cuda=1
  shift
fi
if [ "$cuda" = 1 ]; then
  source scripts/libtorch_wheel.sh
  wheel=$libtorch_wheel
  if [ ! -d "$wheel/torch" ]; then
    echo "build: no torch wheel in $wheel: run scripts/install-deps.sh --cuda first" >&2
    exit 1
  fi
  dir=${GEODL_CUDA_BUILD_DIR:-build-cuda}
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGEODL_LIBTORCH_WHEEL="$wheel" "$@"
  cmake --build "$dir" -j "$jobs" "${targets[@]}"
else
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
  cmake --build build -j "$jobs" "${targets[@]}"
fi

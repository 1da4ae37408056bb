#!/usr/bin/env bash
# Configures and builds GeoDL in build/ (Release, precompiled headers, 2 jobs by default).
# Extra arguments go to CMake's configure step.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${GEODL_JOBS:-2}
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build build -j "$jobs"

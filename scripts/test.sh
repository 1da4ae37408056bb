#!/usr/bin/env bash
# Quick start, second command: installs what is missing, builds, runs every test (ctest).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh -DGEODL_WERROR=ON
cd build
ctest --output-on-failure --timeout 900 -j "${GEODL_TEST_JOBS:-1}" "$@"

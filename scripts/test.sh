#!/usr/bin/env bash
# Quick start, second command: installs what is missing, builds, runs every test (ctest).
# The one-thread unit tests (label "parallel") run two at a time (GEODL_TEST_JOBS), then the
# rest one at a time: they use both cores, or time signals and collective timeouts.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh -DGEODL_WERROR=ON
cd build
status=0
ctest --output-on-failure --timeout 900 -j "${GEODL_TEST_JOBS:-2}" -L '^parallel$' "$@" || status=$?
ctest --output-on-failure --timeout 900 -LE '^parallel$' "$@" || status=$?
exit $status

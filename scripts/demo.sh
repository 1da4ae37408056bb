#!/usr/bin/env bash
# Quick start, first command: installs what is missing, builds, installs the `geodl` tool
# and the QGIS plugin, and runs the main job on built-in data. For now the main job is the
# memory benchmark: plain against checkpointed training steps at 256x256.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
prefix=${GEODL_PREFIX:-/usr/local}
cmake --install build --prefix "$prefix"
echo
echo "Installed: $prefix/bin/geodl and the QGIS plugin in $prefix/lib/geodl/qgis-plugins"
echo "(QGIS: Settings > Options > System > Plugin paths, add that folder; then enable GeoDL"
echo " in Plugins > Manage and Install Plugins.)"
echo
"$prefix/bin/geodl" models
echo
echo "Memory benchmark, GeoDL against PyTorch (about ten minutes on 2 cores):"
benchmarks/run_memory_benchmark.sh build unetsmall unet

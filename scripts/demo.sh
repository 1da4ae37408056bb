#!/usr/bin/env bash
# Quick start, first command: installs what is missing, builds, installs the `geodl` tool
# and the QGIS plugin, and runs the main job on built-in data: the synthetic scenes are
# generated and cut into training samples, then the memory benchmark compares plain and
# checkpointed training steps at 256x256 (training and classification come next).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
prefix=${GEODL_PREFIX:-/usr/local}
cmake --install build --prefix "$prefix"
plugin_dir="$prefix/lib/geodl/qgis-plugins"
# Point this user's QGIS profile at the plugin's own folder and enable GeoDL.
/usr/bin/python3 scripts/register-qgis-plugin.py "$plugin_dir"
echo
echo "Installed: $prefix/bin/geodl, and the QGIS plugin in $plugin_dir (start QGIS:"
echo "the Processing Toolbox has a GeoDL group)."
echo
"$prefix/bin/geodl" models
echo
demo=${GEODL_DEMO_DIR:-$PWD/build/demo}
echo "Built-in scenes in $demo, then training samples from them:"
"$prefix/bin/geodl" make-scene "$demo"
"$prefix/bin/geodl" samples "$demo/config.yaml"
echo
echo "Memory benchmark, GeoDL against PyTorch (about ten minutes on 2 cores):"
benchmarks/run_memory_benchmark.sh build unetsmall unet
